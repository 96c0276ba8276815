/* wfb_migrate_home.h — where an instance of a legacy store runs while and after
 * `wfbridge migrate-instances` moves it (docs/migrate.md "Never both, never neither"): the
 * legacy store, the modern store that holds its committed copy, or in flight with a live
 * migrate-instances process. */
#ifndef WFB_MIGRATE_HOME_H
#define WFB_MIGRATE_HOME_H

#include <stdbool.h>

#include "../common/wf_error.h"
#include "../legacy/wfl_store.h"
#include "../modern/wfm_store.h"

/* The status a rollback leaves on the modern row (no state, never claimed by a host). */
#define WFB_ROLLED_BACK "RolledBack"

typedef enum wfb_home {
    WFB_HOME_LEGACY = 0, /* runnable in the legacy store */
    WFB_HOME_MODERN,     /* its modern copy is committed: runnable there, never here */
} wfb_home;

/* Where legacy instance `id` runs now. Not marked: legacy; Migrated: modern; Migrating:
 * modern exactly when the modern store holds a row under the recorded id that a rollback did
 * not end (the modern commit is the moment the instance changes stores), else legacy.
 * *held (optional): the row is Migrating under a migrate-instances process that is alive,
 * which holds it (as a host holds a lease) until it settles the row a moment later. `modern`
 * is the target store if open, or NULL to open the recorded target read-only (a target file
 * that does not exist holds no copy). */
wf_status wfb_migrate_home(wfl_store *legacy, const char *id, wfm_store *modern, wfb_home *home,
                           bool *held, wf_error *err);

/* Settle a Migrating row whose process has ended, as wfb_migrate_home decides: Migrated, or
 * its previous status back (compare-and-set on the recorded owner). A row a live process
 * holds is left as it is (*held). */
wf_status wfb_migrate_settle(wfl_store *legacy, const char *id, wfb_home *home, bool *held,
                             wf_error *err);

/* Does `modern` hold the committed copy recorded in m (a row under m->modern_id that is not
 * RolledBack)? */
wf_status wfb_migrate_copy_committed(wfm_store *modern, const wfl_store_migration *m,
                                     bool *committed, wf_error *err);

#endif

/* wfb_migrate_home.c — which store an instance being migrated runs in (wfb_migrate_home.h).
 * The legacy row is marked Migrating (with the migrating process as owner) before its modern
 * copy is written, and Migrated after: so only the modern commit changes where it runs, and a
 * row left Migrating by a process that died is decided by looking for that commit. */
#include "wfb_migrate_home.h"

#include <string.h>

#include "../common/wf_mem.h"

wf_status wfb_migrate_copy_committed(wfm_store *modern, const wfl_store_migration *m,
                                     bool *committed, wf_error *err)
{
    void *state = NULL;
    size_t len = 0;
    char status[32];
    uint64_t hash = 0;
    *committed = false;
    wf_status rc = wfm_store_load_state(modern, m->modern_id, &state, &len, status, &hash, err);
    wf_free(state);
    if (rc == WF_E_NOTFOUND) {
        wf_error_clear(err);
        return WF_OK;
    }
    *committed = rc == WF_OK && strcmp(status, WFB_ROLLED_BACK) != 0;
    return rc;
}

/* The recorded target, opened read-only; *store NULL when it is a file that does not exist. */
static wf_status open_target(const char *target, wfm_store **store, wf_error *err)
{
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = target;
    so.read_only = true;
    wf_status rc = wfm_store_open(&so, store, err);
    if (rc == WF_E_IO) { /* no such file: nothing was committed there */
        wf_error_clear(err);
        *store = NULL;
        return WF_OK;
    }
    return rc;
}

static wf_status home_of(wfl_store *legacy, const char *id, wfm_store *modern, wfb_home *home,
                         bool *held, wfl_store_migration *m, wf_error *err)
{
    char status[32];
    *home = WFB_HOME_LEGACY;
    *held = false;
    wf_status rc = wfl_store_status(legacy, id, status, sizeof status, err);
    if (rc != WF_OK || strcmp(status, WFL_STORE_MIGRATED) == 0) {
        *home = rc == WF_OK ? WFB_HOME_MODERN : WFB_HOME_LEGACY;
        return rc;
    }
    if (strcmp(status, WFL_STORE_MIGRATING) != 0)
        return WF_OK;
    if ((rc = wfl_store_migration_get(legacy, id, m, err)) != WF_OK)
        return rc;
    *held = !wfm_store_owner_is_dead(m->owner);
    wfm_store *opened = NULL;
    if (!modern && (rc = open_target(m->target, &opened, err)) != WF_OK)
        return rc;
    bool committed = false;
    if (modern || opened)
        rc = wfb_migrate_copy_committed(modern ? modern : opened, m, &committed, err);
    wfm_store_close(opened);
    *home = committed ? WFB_HOME_MODERN : WFB_HOME_LEGACY;
    return rc;
}

wf_status wfb_migrate_home(wfl_store *legacy, const char *id, wfm_store *modern, wfb_home *home,
                           bool *held, wf_error *err)
{
    wfl_store_migration m;
    bool h = false;
    wf_status rc = home_of(legacy, id, modern, home, &h, &m, err);
    if (held)
        *held = h;
    return rc;
}

wf_status wfb_migrate_settle(wfl_store *legacy, const char *id, wfb_home *home, bool *held,
                             wf_error *err)
{
    wfl_store_migration m;
    memset(&m, 0, sizeof m);
    wf_status rc = home_of(legacy, id, NULL, home, held, &m, err);
    if (rc != WF_OK || *held || !m.owner[0])
        return rc; /* not Migrating (no record read), or held by a live process */
    if (*home == WFB_HOME_LEGACY)
        return wfl_store_unmark_migrated(legacy, id, m.owner, NULL, err);
    return wfl_store_finish_migrations(legacy, &id, 1, m.owner, err);
}

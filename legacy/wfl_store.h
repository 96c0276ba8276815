/* wfl_store.h — legacy persistence: each instance is ONE versioned state blob (wfl_exec_save)
 * in a row of an SQLite file, written at persistence points and read back on the next event,
 * like WF3's SqlWorkflowPersistenceService (docs/semantics.md §4 "Persistence points"). The blob
 * is opaque here; a save replaces the row inside one transaction, so a crash never leaves half
 * a blob. */
#ifndef WFL_STORE_H
#define WFL_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"

/* Lifecycle:
 * 1. wfl_store_open(path): creates the file and its schema (a version row), or opens an
 *    existing one; a file that is not SQLite, or has another schema version, is WF_E_CORRUPT
 *    and left untouched.
 * 2. wfl_store_save / wfl_store_load / wfl_store_remove by instance id (any printable text).
 * 3. wfl_store_close.
 * Threads: one wfl_store per thread (SQLite's serialized mode makes sharing safe but slow). */

typedef struct wfl_store wfl_store;

#define WFL_STORE_SCHEMA_VERSION 1

wf_status wfl_store_open(const char *path, wfl_store **out, wf_error *err);
void wfl_store_close(wfl_store *store); /* accepts NULL */

/* Insert or replace the instance's blob with its status text ("Idle", "Closed", ...), in one
 * transaction. WF_E_STORE on an SQLite failure (the previous row stays). */
wf_status wfl_store_save(wfl_store *store, const char *instance_id, const char *status,
                         const void *blob, size_t len, wf_error *err);
/* Read the blob (wf_free it). WF_E_NOTFOUND naming the id when there is no such instance;
 * WF_E_STATE for an instance marked migrated (it runs in a modern store now). */
wf_status wfl_store_load(wfl_store *store, const char *instance_id, void **blob, size_t *len,
                         wf_error *err);
/* The stored status text of an instance into buf (WF_E_NOTFOUND when absent). */
wf_status wfl_store_status(wfl_store *store, const char *instance_id, char *buf, size_t size,
                           wf_error *err);
/* Delete an instance (WF3 removes completed instances); absent ids are fine. */
wf_status wfl_store_remove(wfl_store *store, const char *instance_id, wf_error *err);
/* Number of stored instances (for tests and `instances`). */
wf_status wfl_store_count(wfl_store *store, size_t *count, wf_error *err);

/* ---- moving instances to a modern store (`wfbridge migrate-instances`) ----------------------
 * A migrated instance keeps its row and blob; a row of the `migrated` table (created on first
 * use) remembers its previous status, the target store, the modern instance id, a hash of the
 * modern state written and the migrate-instances process (owner) that moved it last. Its
 * status is "Migrating" while a move or a rollback is in doubt, "Migrated" once the move is
 * settled; neither is loadable (docs/migrate.md "Never both, never neither": a Migrating row
 * runs here exactly when its modern copy was not committed, which the bridge decides). */
#define WFL_STORE_MIGRATED  "Migrated"
#define WFL_STORE_MIGRATING "Migrating"

/* Call fn for every instance in id order; fn returns false to stop. The strings and blob live
 * during the call. */
typedef bool (*wfl_store_row_fn)(void *ud, const char *id, const char *status, const void *blob,
                                 size_t len);
wf_status wfl_store_each(wfl_store *store, wfl_store_row_fn fn, void *ud, wf_error *err);

typedef struct wfl_store_migration {
    char previous_status[32];
    char target[1024];
    char modern_id[64];
    uint64_t state_hash;
    char owner[320]; /* "" in records written before owners were kept */
} wfl_store_migration;

/* Claim `count` rows for a move (or a rollback) in one transaction: each row whose state is
 * the expected one becomes "Migrating" with record ms[i] (its owner ms[i].owner; a previous
 * status already recorded is kept) and taken[i] is set; the others are left as they are
 * (taken[i] false: another process got there first). Expected: from_owner[i] NULL, a row that
 * is neither Migrating nor Migrated (its status is recorded as the previous one); else a
 * Migrating or Migrated row whose record's owner is from_owner[i] (compare-and-set). */
wf_status wfl_store_claim_migrations(wfl_store *store, const char *const *ids,
                                     const wfl_store_migration *ms,
                                     const char *const *from_owner, size_t count, bool *taken,
                                     wf_error *err);
/* Settle moves: the rows of `ids` that are Migrating under `owner` become Migrated (one
 * transaction; the others are left alone). */
wf_status wfl_store_finish_migrations(wfl_store *store, const char *const *ids, size_t count,
                                      const char *owner, wf_error *err);
/* The migration record of `id` (WF_E_NOTFOUND when it was not migrated). */
wf_status wfl_store_migration_get(wfl_store *store, const char *id, wfl_store_migration *m,
                                  wf_error *err);
/* Undo the mark: the previous status back, the record gone, in one transaction; only while
 * the record's owner is `owner` (NULL: any). *undone (optional): whether it was undone. */
wf_status wfl_store_unmark_migrated(wfl_store *store, const char *id, const char *owner,
                                    bool *undone, wf_error *err);

#endif

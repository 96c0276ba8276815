/* wfl_store.c — the legacy instance store in SQLite: a `meta` table whose schema_version row
 * identifies the file, and an `instances` table of (id, status, blob). Every write is one
 * transaction; a file that fails the identity check is never written (see wfl_store.h). */
#include "wfl_store.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"

struct wfl_store {
    sqlite3 *db;
    char path[256];
};

static wf_status db_error(wfl_store *store, wf_error *err, const char *what)
{
    wf_loc loc = {store->path, 0, 0};
    return wf_error_set(err, WF_E_STORE, &loc, "%s: %s", what, sqlite3_errmsg(store->db));
}

static wf_status exec_sql(wfl_store *store, const char *sql, wf_error *err)
{
    if (sqlite3_exec(store->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_error(store, err, "cannot update the store");
    return WF_OK;
}

/* The query's first column of its first row is `want`. */
static bool query_is(wfl_store *store, const char *sql, const char *want)
{
    sqlite3_stmt *st = NULL;
    bool same = sqlite3_prepare_v2(store->db, sql, -1, &st, NULL) == SQLITE_OK &&
                sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
                strcmp((const char *)sqlite3_column_text(st, 0), want) == 0;
    sqlite3_finalize(st);
    return same;
}

/*
** Read the schema version; -1 when the meta table is missing (a new, empty file), -2 when
** the file is not a database at all.
*/
static int read_version(wfl_store *store)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(store->db, "SELECT value FROM meta WHERE key='schema_version'", -1,
                                &st, NULL);
    if (rc != SQLITE_OK) {
        bool not_db = rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT;
        sqlite3_finalize(st);
        if (not_db)
            return -2;
        /* no meta table: empty database or someone else's */
        sqlite3_stmt *q = NULL;
        int n = 0;
        if (sqlite3_prepare_v2(store->db, "SELECT count(*) FROM sqlite_master", -1, &q, NULL) !=
            SQLITE_OK) {
            sqlite3_finalize(q);
            return -2;
        }
        if (sqlite3_step(q) == SQLITE_ROW)
            n = sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
        return n == 0 ? -1 : -3;
    }
    int version = -3;
    if (sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    /* ours (the format key) and whole: the instances table is there, and it and its id
     * index pass integrity_check, so a lookup by id cannot miss a stored row */
    if (version >= 0 && (!query_is(store, "SELECT value FROM meta WHERE key='format'",
                                   "wfbridge-legacy") ||
                         !query_is(store,
                                   "SELECT count(*) FROM sqlite_master"
                                   " WHERE type='table' AND name='instances'",
                                   "1") ||
                         !query_is(store, "PRAGMA integrity_check(instances)", "ok")))
        version = -3;
    return version;
}

/*
** Create the schema of a new file. Processes opening the same new file at once all see no
** meta table: each takes the write lock (BEGIN IMMEDIATE waits for it under the busy timeout)
** and looks again, so only the first creates the tables. Returns the version then found.
*/
static wf_status create_schema(wfl_store *store, int *version, wf_error *err)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
             "INSERT INTO meta VALUES('schema_version', '%d');"
             "INSERT INTO meta VALUES('format', 'wfbridge-legacy');"
             "CREATE TABLE instances(id TEXT PRIMARY KEY, status TEXT NOT NULL,"
             " blob BLOB NOT NULL);"
             "COMMIT;",
             WFL_STORE_SCHEMA_VERSION);
    wf_status rc = exec_sql(store, "BEGIN IMMEDIATE", err);
    if (rc != WF_OK)
        return rc;
    *version = read_version(store);
    if (*version != -1) {
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
        return WF_OK;
    }
    rc = exec_sql(store, sql, err);
    if (rc != WF_OK)
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
    else
        *version = WFL_STORE_SCHEMA_VERSION;
    return rc;
}

wf_status wfl_store_open(const char *path, wfl_store **out, wf_error *err)
{
    *out = NULL;
    wfl_store *store = wf_calloc(1, sizeof *store);
    if (!store)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening %s", path);
    snprintf(store->path, sizeof store->path, "%s", path);
    wf_loc loc = {store->path, 0, 0};
    if (sqlite3_open_v2(path, &store->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        wf_status rc = store->db ? db_error(store, err, "cannot open the store")
                                 : wf_error_set(err, WF_E_NOMEM, &loc, "out of memory");
        wfl_store_close(store);
        return rc;
    }
    sqlite3_busy_timeout(store->db, 5000);
    int version = read_version(store);
    wf_status rc = WF_OK;
    /* -3 read without a lock may be a schema another process is creating right now (a busy
     * or changed-schema step): look again under the write lock before calling it damaged */
    if (version == -1 || version == -3)
        rc = create_schema(store, &version, err);
    if (rc == WF_OK && version != WFL_STORE_SCHEMA_VERSION)
        rc = wf_error_set(err, WF_E_CORRUPT, &loc,
                          version == -2 ? "not a wfbridge legacy store (not a database)"
                                        : "not a wfbridge legacy store, unknown schema version or"
                                          " damaged");
    if (rc != WF_OK) {
        wfl_store_close(store);
        return rc;
    }
    *out = store;
    return WF_OK;
}

void wfl_store_close(wfl_store *store)
{
    if (!store)
        return;
    sqlite3_close(store->db);
    wf_free(store);
}

wf_status wfl_store_save(wfl_store *store, const char *instance_id, const char *status,
                         const void *blob, size_t len, wf_error *err)
{
    wf_status rc = exec_sql(store, "BEGIN IMMEDIATE", err);
    if (rc != WF_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(store->db,
                           "INSERT OR REPLACE INTO instances(id, status, blob) VALUES(?, ?, ?)", -1,
                           &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, instance_id, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
        sqlite3_bind_text(st, 2, status, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
        sqlite3_bind_blob64(st, 3, blob, (sqlite3_uint64)len, SQLITE_TRANSIENT) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_DONE) {
        rc = db_error(store, err, "cannot save the instance");
        sqlite3_finalize(st);
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    sqlite3_finalize(st);
    rc = exec_sql(store, "COMMIT", err);
    if (rc != WF_OK)
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static wf_status select_row(wfl_store *store, const char *sql, const char *instance_id,
                            sqlite3_stmt **out, wf_error *err)
{
    *out = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(store->db, sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, instance_id, -1, SQLITE_TRANSIENT) != SQLITE_OK) {
        sqlite3_finalize(st);
        return db_error(store, err, "cannot read the store");
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = st;
        return WF_OK;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) {
        wf_loc loc = {store->path, 0, 0};
        return wf_error_set(err, WF_E_NOTFOUND, &loc, "no instance '%s' in the store", instance_id);
    }
    return db_error(store, err, "cannot read the store");
}

wf_status wfl_store_load(wfl_store *store, const char *instance_id, void **blob, size_t *len,
                         wf_error *err)
{
    *blob = NULL;
    *len = 0;
    sqlite3_stmt *st;
    wf_status rc = select_row(store, "SELECT blob, status FROM instances WHERE id = ?",
                              instance_id, &st, err);
    if (rc != WF_OK)
        return rc;
    const char *status = (const char *)sqlite3_column_text(st, 1);
    bool moving = status && strcmp(status, WFL_STORE_MIGRATING) == 0;
    if (moving || (status && strcmp(status, WFL_STORE_MIGRATED) == 0)) {
        sqlite3_finalize(st);
        wf_loc loc = {store->path, 0, 0};
        return wf_error_set(err, WF_E_STATE, &loc,
                            "instance '%s' %s to a modern store (wfbridge migrate-instances)%s",
                            instance_id, moving ? "is being migrated" : "was migrated",
                            moving ? "" : ": it no longer runs here");
    }
    size_t n = (size_t)sqlite3_column_bytes(st, 0);
    const void *data = sqlite3_column_blob(st, 0);
    void *copy = wf_malloc(n ? n : 1);
    if (!copy) {
        sqlite3_finalize(st);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory loading '%s'", instance_id);
    }
    if (n)
        memcpy(copy, data, n);
    sqlite3_finalize(st);
    *blob = copy;
    *len = n;
    return WF_OK;
}

wf_status wfl_store_status(wfl_store *store, const char *instance_id, char *buf, size_t size,
                           wf_error *err)
{
    sqlite3_stmt *st;
    wf_status rc =
        select_row(store, "SELECT status FROM instances WHERE id = ?", instance_id, &st, err);
    if (rc != WF_OK)
        return rc;
    snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return WF_OK;
}

wf_status wfl_store_remove(wfl_store *store, const char *instance_id, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(store->db, "DELETE FROM instances WHERE id = ?", -1, &st, NULL) !=
            SQLITE_OK ||
        sqlite3_bind_text(st, 1, instance_id, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_DONE) {
        sqlite3_finalize(st);
        return db_error(store, err, "cannot remove the instance");
    }
    sqlite3_finalize(st);
    return WF_OK;
}

wf_status wfl_store_count(wfl_store *store, size_t *count, wf_error *err)
{
    *count = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(store->db, "SELECT count(*) FROM instances", -1, &st, NULL) !=
            SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return db_error(store, err, "cannot read the store");
    }
    *count = (size_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return WF_OK;
}

/* ---- migration marks -------------------------------------------------------------------------- */
wf_status wfl_store_each(wfl_store *store, wfl_store_row_fn fn, void *ud, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(store->db, "SELECT id, status, blob FROM instances ORDER BY id", -1,
                           &st, NULL) != SQLITE_OK)
        return db_error(store, err, "cannot read the store");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        const char *status = (const char *)sqlite3_column_text(st, 1);
        const void *blob = sqlite3_column_blob(st, 2);
        size_t len = (size_t)sqlite3_column_bytes(st, 2);
        if (!fn(ud, id ? id : "", status ? status : "", blob, len)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    wf_status out = rc == SQLITE_DONE ? WF_OK : db_error(store, err, "cannot read the store");
    sqlite3_finalize(st);
    return out;
}

static wf_status step_done(wfl_store *store, sqlite3_stmt *st, int *changes, wf_error *err)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_error(store, err, "cannot update the store");
    if (changes)
        *changes = sqlite3_changes(store->db);
    return WF_OK;
}

static bool has_migrated_table(wfl_store *store)
{
    return query_is(store,
                    "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='migrated'",
                    "1");
}

/* The `migrated` table, with its owner column (added to a table of an older wfbridge). */
static wf_status migrated_table(wfl_store *store, wf_error *err)
{
    wf_status rc = exec_sql(store,
                            "CREATE TABLE IF NOT EXISTS migrated(id TEXT PRIMARY KEY,"
                            " previous_status TEXT NOT NULL, target TEXT NOT NULL,"
                            " modern_id TEXT NOT NULL, state_hash TEXT NOT NULL,"
                            " owner TEXT NOT NULL DEFAULT '')",
                            err);
    if (rc == WF_OK && !query_is(store,
                                 "SELECT count(*) FROM pragma_table_info('migrated')"
                                 " WHERE name = 'owner'",
                                 "1"))
        rc = exec_sql(store, "ALTER TABLE migrated ADD COLUMN owner TEXT NOT NULL DEFAULT ''",
                      err);
    return rc;
}

static wf_status prepare(wfl_store *store, const char *sql, sqlite3_stmt **st, wf_error *err)
{
    return sqlite3_prepare_v2(store->db, sql, -1, st, NULL) == SQLITE_OK
               ? WF_OK
               : db_error(store, err, "cannot update the store");
}

/* The statements of a claim, prepared once per transaction. */
typedef struct claim_sts {
    sqlite3_stmt *fresh, *record, *takeover, *status;
} claim_sts;

static void claim_sts_fini(claim_sts *c)
{
    sqlite3_finalize(c->fresh);
    sqlite3_finalize(c->record);
    sqlite3_finalize(c->takeover);
    sqlite3_finalize(c->status);
}

static wf_status claim_prepare(wfl_store *store, claim_sts *c, wf_error *err)
{
    wf_status rc = prepare(store,
                           "UPDATE instances SET status = '" WFL_STORE_MIGRATING "' WHERE id = ?1"
                           " AND status NOT IN ('" WFL_STORE_MIGRATING "', '" WFL_STORE_MIGRATED
                           "')",
                           &c->fresh, err);
    if (rc == WF_OK)
        rc = prepare(store,
                     "INSERT INTO migrated(id, previous_status, target, modern_id, state_hash,"
                     " owner) VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(id) DO UPDATE SET"
                     " previous_status = excluded.previous_status, target = excluded.target,"
                     " modern_id = excluded.modern_id, state_hash = excluded.state_hash,"
                     " owner = excluded.owner",
                     &c->record, err);
    if (rc == WF_OK)
        rc = prepare(store,
                     "UPDATE migrated SET target = ?2, modern_id = ?3, state_hash = ?4,"
                     " owner = ?5 WHERE id = ?1 AND owner = ?6 AND EXISTS (SELECT 1 FROM"
                     " instances WHERE instances.id = ?1 AND status IN ('" WFL_STORE_MIGRATING
                     "', '" WFL_STORE_MIGRATED "'))",
                     &c->takeover, err);
    if (rc == WF_OK)
        rc = prepare(store,
                     "UPDATE instances SET status = '" WFL_STORE_MIGRATING "' WHERE id = ?1",
                     &c->status, err);
    return rc;
}

static wf_status step_reset(wfl_store *store, sqlite3_stmt *st, int *changes, wf_error *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE)
        return db_error(store, err, "cannot update the store");
    if (changes)
        *changes = sqlite3_changes(store->db);
    return WF_OK;
}

static wf_status claim_one(wfl_store *store, claim_sts *c, const char *id,
                           const wfl_store_migration *m, const char *from_owner, bool *taken,
                           wf_error *err)
{
    char hash[17], status[32];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)m->state_hash);
    int changes = 0;
    wf_status rc = WF_OK;
    if (from_owner) { /* compare-and-set on the record's owner */
        sqlite3_bind_text(c->takeover, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_text(c->takeover, 2, m->target, -1, SQLITE_STATIC);
        sqlite3_bind_text(c->takeover, 3, m->modern_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(c->takeover, 4, hash, -1, SQLITE_STATIC);
        sqlite3_bind_text(c->takeover, 5, m->owner, -1, SQLITE_STATIC);
        sqlite3_bind_text(c->takeover, 6, from_owner, -1, SQLITE_STATIC);
        rc = step_reset(store, c->takeover, &changes, err);
        if (rc == WF_OK && changes) {
            sqlite3_bind_text(c->status, 1, id, -1, SQLITE_STATIC);
            rc = step_reset(store, c->status, NULL, err);
        }
        *taken = rc == WF_OK && changes;
        return rc;
    }
    rc = wfl_store_status(store, id, status, sizeof status, err);
    if (rc == WF_E_NOTFOUND) { /* gone since it was read: not ours to move */
        wf_error_clear(err);
        *taken = false;
        return WF_OK;
    }
    sqlite3_bind_text(c->fresh, 1, id, -1, SQLITE_STATIC);
    if (rc == WF_OK)
        rc = step_reset(store, c->fresh, &changes, err);
    *taken = rc == WF_OK && changes;
    if (!*taken)
        return rc;
    sqlite3_bind_text(c->record, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(c->record, 2, status, -1, SQLITE_STATIC);
    sqlite3_bind_text(c->record, 3, m->target, -1, SQLITE_STATIC);
    sqlite3_bind_text(c->record, 4, m->modern_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(c->record, 5, hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(c->record, 6, m->owner, -1, SQLITE_STATIC);
    return step_reset(store, c->record, NULL, err);
}

static wf_status commit_or_roll_back(wfl_store *store, wf_status rc, wf_error *err)
{
    if (rc == WF_OK)
        rc = exec_sql(store, "COMMIT", err);
    if (rc != WF_OK)
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

wf_status wfl_store_claim_migrations(wfl_store *store, const char *const *ids,
                                     const wfl_store_migration *ms,
                                     const char *const *from_owner, size_t count, bool *taken,
                                     wf_error *err)
{
    for (size_t i = 0; i < count; i++)
        taken[i] = false;
    wf_status rc = exec_sql(store, "BEGIN IMMEDIATE", err);
    if (rc != WF_OK)
        return rc;
    claim_sts c = {NULL, NULL, NULL, NULL};
    rc = migrated_table(store, err);
    if (rc == WF_OK)
        rc = claim_prepare(store, &c, err);
    for (size_t i = 0; i < count && rc == WF_OK; i++)
        rc = claim_one(store, &c, ids[i], &ms[i], from_owner ? from_owner[i] : NULL, &taken[i],
                       err);
    claim_sts_fini(&c);
    rc = commit_or_roll_back(store, rc, err);
    if (rc != WF_OK)
        for (size_t i = 0; i < count; i++)
            taken[i] = false;
    return rc;
}

wf_status wfl_store_finish_migrations(wfl_store *store, const char *const *ids, size_t count,
                                      const char *owner, wf_error *err)
{
    wf_status rc = exec_sql(store, "BEGIN IMMEDIATE", err);
    if (rc != WF_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = migrated_table(store, err);
    if (rc == WF_OK)
        rc = prepare(store,
                     "UPDATE instances SET status = '" WFL_STORE_MIGRATED "' WHERE id = ?1 AND"
                     " status = '" WFL_STORE_MIGRATING "' AND EXISTS (SELECT 1 FROM migrated"
                     " WHERE migrated.id = ?1 AND owner = ?2)",
                     &st, err);
    for (size_t i = 0; i < count && rc == WF_OK; i++) {
        sqlite3_bind_text(st, 1, ids[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, owner, -1, SQLITE_STATIC);
        rc = step_reset(store, st, NULL, err);
    }
    sqlite3_finalize(st);
    return commit_or_roll_back(store, rc, err);
}

wf_status wfl_store_migration_get(wfl_store *store, const char *id, wfl_store_migration *m,
                                  wf_error *err)
{
    memset(m, 0, sizeof *m);
    wf_loc loc = {store->path, 0, 0};
    if (!has_migrated_table(store))
        return wf_error_set(err, WF_E_NOTFOUND, &loc, "instance '%s' was not migrated", id);
    bool with_owner = query_is(store,
                               "SELECT count(*) FROM pragma_table_info('migrated')"
                               " WHERE name = 'owner'",
                               "1");
    sqlite3_stmt *st;
    wf_status rc = select_row(store,
                              with_owner ? "SELECT previous_status, target, modern_id,"
                                           " state_hash, owner FROM migrated WHERE id = ?"
                                         : "SELECT previous_status, target, modern_id,"
                                           " state_hash, '' FROM migrated WHERE id = ?",
                              id, &st, err);
    if (rc != WF_OK)
        return rc;
    snprintf(m->previous_status, sizeof m->previous_status, "%s", sqlite3_column_text(st, 0));
    snprintf(m->target, sizeof m->target, "%s", sqlite3_column_text(st, 1));
    snprintf(m->modern_id, sizeof m->modern_id, "%s", sqlite3_column_text(st, 2));
    m->state_hash = strtoull((const char *)sqlite3_column_text(st, 3), NULL, 16);
    snprintf(m->owner, sizeof m->owner, "%s", sqlite3_column_text(st, 4));
    sqlite3_finalize(st);
    return WF_OK;
}

wf_status wfl_store_unmark_migrated(wfl_store *store, const char *id, const char *owner,
                                    bool *undone, wf_error *err)
{
    if (undone)
        *undone = false;
    if (!has_migrated_table(store))
        return WF_OK;
    wf_status rc = exec_sql(store, "BEGIN IMMEDIATE", err);
    if (rc != WF_OK)
        return rc;
    sqlite3_stmt *st = NULL;
    int changes = 0;
    rc = migrated_table(store, err);
    if (rc == WF_OK)
        rc = prepare(store,
                     "UPDATE instances SET status = (SELECT previous_status FROM migrated"
                     " WHERE migrated.id = instances.id) WHERE id = ?1 AND EXISTS (SELECT 1"
                     " FROM migrated WHERE migrated.id = ?1 AND (?2 IS NULL OR owner = ?2))",
                     &st, err);
    if (rc == WF_OK) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, owner, -1, SQLITE_STATIC);
        rc = step_done(store, st, &changes, err);
    }
    if (rc == WF_OK && changes && (rc = prepare(store, "DELETE FROM migrated WHERE id = ?",
                                                &st, err)) == WF_OK) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        rc = step_done(store, st, NULL, err);
    }
    rc = commit_or_roll_back(store, rc, err);
    if (undone)
        *undone = rc == WF_OK && changes > 0;
    return rc;
}

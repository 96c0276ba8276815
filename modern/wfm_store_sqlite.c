/* wfm_store_sqlite.c — the SQLite backend of the instance store (wfm_store_int.h): one file in
 * WAL mode, one connection per wfm_store (the front end serialises its use). Every statement
 * of the save and lease paths is prepared once per connection and kept (stmt()); a save runs
 * only the statements it has something to write for. A batch of saves is one transaction,
 * one SAVEPOINT each, so one failing save does not undo the others.
 *
 * Lease rule: an instance is runnable by owner O iff owner = O and lock_expires_ms >= now, or
 * owner IS NULL, or the lease expired (lock_expires_ms < now); the front end adds the dead
 * local owner. A save requires a live lease of this owner. Opening checks the whole file
 * before anything writes to it (check_read), then switches to WAL and creates or migrates
 * under the write lock (upgrade); see docs/durability.md. */
#include "wfm_store_int.h"

#include <limits.h>
#include <poll.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_mem.h"

/* The statements kept prepared for the life of the connection. */
enum stmt_id {
    ST_BEGIN_IMMEDIATE,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_SAVEPOINT,
    ST_RELEASE,
    ST_ROLLBACK_TO,
    ST_SAVE,
    ST_SAVE_KEPT,
    ST_SAVE_ROW,
    ST_DELETE_BOOKMARKS,
    ST_DELETE_PROMOTED,
    ST_INSERT_BOOKMARK,
    ST_INSERT_PROMOTED,
    ST_DELETE_RESUMES,
    ST_TAKE_LEASE,
    ST_TAKE_FROM,
    ST_OWNER_OF,
    ST_RELEASE_LEASE,
    ST_RENEW,
    ST_CREATE,
    ST_CLAIM,
    ST_PUT_TRACKING,
    ST_INSERT,
    ST_PROPS,
    ST_PENDING,
    ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
    [ST_BEGIN_IMMEDIATE] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_SAVEPOINT] = "SAVEPOINT one_save",
    [ST_RELEASE] = "RELEASE one_save",
    [ST_ROLLBACK_TO] = "ROLLBACK TO one_save",
    [ST_SAVE] = "UPDATE instances SET status = ?1, state = ?2, updated_ms = ?3,"
                " next_timer_us = ?4, version = version + 1, reason = NULL,"
                " attempts = CASE WHEN ?5 THEN 0 ELSE attempts END,"
                " owner = CASE WHEN ?5 THEN NULL ELSE owner END,"
                " lock_expires_ms = CASE WHEN ?5 THEN 0 ELSE ?6 END"
                " WHERE id = ?7 AND owner = ?8 AND lock_expires_ms >= ?3 RETURNING version",
    /* ST_SAVE for a save keeping the names this connection last wrote: no RETURNING (the
     * version is known), guarded by the version that save left (?9) */
    [ST_SAVE_KEPT] = "UPDATE instances SET status = ?1, state = ?2, updated_ms = ?3,"
                     " next_timer_us = ?4, version = version + 1, reason = NULL,"
                     " attempts = CASE WHEN ?5 THEN 0 ELSE attempts END,"
                     " owner = CASE WHEN ?5 THEN NULL ELSE owner END,"
                     " lock_expires_ms = CASE WHEN ?5 THEN 0 ELSE ?6 END"
                     " WHERE id = ?7 AND owner = ?8 AND lock_expires_ms >= ?3 AND version = ?9",
    /* ST_SAVE_KEPT when the status and timer stay as that save left them (a Persist in the
     * middle of a run): without them in SET, SQLite rewrites no index entry (it would delete
     * and insert the row's instances_by_status entry, dirtying that page, at every save);
     * ?1 and ?4 are bound but unused */
    [ST_SAVE_ROW] = "UPDATE instances SET state = ?2, updated_ms = ?3, version = version + 1,"
                    " reason = NULL, attempts = CASE WHEN ?5 THEN 0 ELSE attempts END,"
                    " owner = CASE WHEN ?5 THEN NULL ELSE owner END,"
                    " lock_expires_ms = CASE WHEN ?5 THEN 0 ELSE ?6 END"
                    " WHERE id = ?7 AND owner = ?8 AND lock_expires_ms >= ?3 AND version = ?9",
    [ST_DELETE_BOOKMARKS] = "DELETE FROM bookmarks WHERE instance = ?",
    [ST_DELETE_PROMOTED] = "DELETE FROM promoted WHERE instance = ?",
    [ST_INSERT_BOOKMARK] = "INSERT OR IGNORE INTO bookmarks(instance, name) VALUES(?, ?)",
    [ST_INSERT_PROMOTED] = "INSERT OR REPLACE INTO promoted(instance, name, value)"
                           " VALUES(?, ?, ?)",
    [ST_DELETE_RESUMES] = "DELETE FROM pending_resumes WHERE instance = ? AND seq <= ?",
    [ST_TAKE_LEASE] = "UPDATE instances SET owner = ?1, lock_expires_ms = ?2,"
                      " attempts = attempts + 1 WHERE id = ?3"
                      " AND (owner IS NULL OR owner = ?1 OR lock_expires_ms < ?4)",
    [ST_TAKE_FROM] = "UPDATE instances SET owner = ?1, lock_expires_ms = ?2,"
                     " attempts = attempts + 1 WHERE id = ?3 AND owner = ?4",
    [ST_OWNER_OF] = "SELECT owner FROM instances WHERE id = ?",
    [ST_RELEASE_LEASE] = "UPDATE instances SET owner = NULL, lock_expires_ms = 0,"
                         " attempts = max(attempts - 1, 0) WHERE id = ? AND owner = ?",
    [ST_RENEW] = "UPDATE instances SET lock_expires_ms = ? WHERE owner = ?"
                 " AND lock_expires_ms >= ?",
    [ST_CREATE] = "INSERT INTO instances(id, definition, status, created_ms, updated_ms,"
                  " owner, lock_expires_ms) VALUES(?, ?, 'Created', ?, ?, ?, ?)",
    /* wfm_store_claim: ?1 owner, ?2 new expiry, ?3 now (ms), ?4 now (us, timers), ?5 max.
     * The candidates come from four kinds of claimable row, each read through an index of its
     * own with its own limit, so a claim reads only rows it can take (or nearly): free rows
     * saved runnable (instances_claimable, in claim order), expired leases (instances_by_lease,
     * from the oldest expiry), Idle rows with a timer due (instances_by_timer) and Idle rows
     * whose first queued resumption they wait on (from pending_resumes). The oldest ?5 of each
     * kind hold the oldest ?5 of them all; UNION drops a row of two kinds (a due timer and a
     * resumption) so that it takes one place only. */
    [ST_CLAIM] =
        "UPDATE instances SET owner = ?1, lock_expires_ms = ?2, attempts = attempts + 1"
        " WHERE id IN (SELECT k.id FROM ("
        " SELECT * FROM (SELECT i.id, i.created_ms FROM instances i"
        " INDEXED BY instances_claimable"
        " WHERE i.owner IS NULL AND i.status IN ('Created', 'Executing')"
        " ORDER BY i.created_ms, i.id LIMIT ?5)"
        " UNION SELECT * FROM (SELECT i.id, i.created_ms FROM instances i"
        " INDEXED BY instances_by_lease"
        " WHERE i.owner IS NOT NULL AND i.lock_expires_ms < ?3"
        " AND i.status IN ('Created', 'Executing') ORDER BY i.created_ms, i.id LIMIT ?5)"
        " UNION SELECT * FROM (SELECT i.id, i.created_ms FROM instances i"
        " INDEXED BY instances_by_timer"
        " WHERE i.next_timer_us > 0 AND i.next_timer_us <= ?4 AND i.status = 'Idle'"
        " AND (i.owner IS NULL OR i.lock_expires_ms < ?3) ORDER BY i.created_ms, i.id LIMIT ?5)"
        " UNION SELECT * FROM (SELECT i.id, i.created_ms"
        " FROM (SELECT DISTINCT r.instance FROM pending_resumes r) q"
        " CROSS JOIN instances i ON i.id = q.instance WHERE i.status = 'Idle'"
        " AND (i.owner IS NULL OR i.lock_expires_ms < ?3)"
        " AND EXISTS (SELECT 1 FROM bookmarks b WHERE b.instance = i.id AND b.name ="
        " (SELECT r.bookmark FROM pending_resumes r WHERE r.instance = i.id"
        " ORDER BY r.seq LIMIT 1)) ORDER BY i.created_ms, i.id LIMIT ?5)"
        " ) k ORDER BY k.created_ms, k.id LIMIT ?5)"
        " RETURNING id, status, definition, state, created_ms,"
        " (SELECT count(*) FROM pending_resumes r WHERE r.instance = instances.id), attempts,"
        " (SELECT count(*) FROM promoted p WHERE p.instance = instances.id)",
    [ST_PUT_TRACKING] = "INSERT OR REPLACE INTO tracking(instance, seq, time_us, kind, record)"
                        " VALUES(?, ?, ?, ?, ?)",
    /* wfm_store_insert: ?1 id, ?2 definition, ?3 status, ?4 state, ?5 now, ?6 owner (NULL:
     * released), ?7 lease expiry, ?8 next timer */
    [ST_INSERT] = "INSERT INTO instances(id, definition, status, state, created_ms, updated_ms,"
                  " owner, lock_expires_ms, next_timer_us, version)"
                  " VALUES(?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8, 1)",
    /* read for every instance a host adopts or loads */
    [ST_PROPS] = "SELECT name, value FROM promoted WHERE instance = ? ORDER BY name",
    [ST_PENDING] = "SELECT seq, bookmark, payload_json, created_ms FROM pending_resumes"
                   " WHERE instance = ? ORDER BY seq",
};

typedef struct sq_conn {
    sqlite3 *db;
    sqlite3_stmt *stmts[ST_COUNT];
} sq_conn;

static sqlite3 *db_of(const wfm_store *s)
{
    return ((sq_conn *)s->impl)->db;
}

#define BUSY_TIMEOUT_MS 10000

static const char schema_v1[] =
    "CREATE TABLE wfbridge_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE definitions(hash TEXT PRIMARY KEY, path TEXT, added_ms INTEGER NOT NULL);"
    "CREATE TABLE instances(id TEXT PRIMARY KEY, definition TEXT NOT NULL,"
    " status TEXT NOT NULL, state BLOB, created_ms INTEGER NOT NULL,"
    " updated_ms INTEGER NOT NULL, owner TEXT, lock_expires_ms INTEGER NOT NULL DEFAULT 0,"
    " next_timer_us INTEGER NOT NULL DEFAULT 0, version INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX instances_by_status ON instances(status);"
    "CREATE INDEX instances_by_timer ON instances(next_timer_us) WHERE next_timer_us > 0;"
    "CREATE TABLE bookmarks(instance TEXT NOT NULL, name TEXT NOT NULL,"
    " PRIMARY KEY(instance, name)) WITHOUT ROWID;"
    "CREATE INDEX bookmarks_by_name ON bookmarks(name);"
    "CREATE TABLE promoted(instance TEXT NOT NULL, name TEXT NOT NULL, value TEXT,"
    " PRIMARY KEY(instance, name)) WITHOUT ROWID;"
    "CREATE INDEX promoted_by_value ON promoted(name, value);"
    "CREATE TABLE tracking(instance TEXT NOT NULL, seq INTEGER NOT NULL, time_us INTEGER NOT NULL,"
    " kind TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY(instance, seq)) WITHOUT ROWID;"
    "INSERT INTO wfbridge_meta VALUES('application', 'wfbridge-instance-store');"
    "INSERT INTO wfbridge_meta VALUES('schema_version', '1');";

/* Version 2: resumptions queued for an instance another host holds. */
static const char schema_v2[] =
    "CREATE TABLE pending_resumes(instance TEXT NOT NULL, seq INTEGER NOT NULL,"
    " bookmark TEXT NOT NULL, payload_json TEXT NOT NULL, created_ms INTEGER NOT NULL,"
    " PRIMARY KEY(instance, seq)) WITHOUT ROWID;";

/* Version 3: how many runs of an instance never ended (a poisoned instance is quarantined
 * after some) and why an instance is Suspended. */
static const char schema_v3[] =
    "ALTER TABLE instances ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE instances ADD COLUMN reason TEXT;";

/* Version 4: the indexes ST_CLAIM reads its kinds of claimable row through, so that a claim
 * reads only rows it can take: the free rows saved runnable in claim order (as PostgreSQL's
 * instances_claimable) and the leased rows by expiry (which wfm_store_renew also reads).
 * Only indexes: a read-only open reads a version 3 store as it is (it never claims). */
static const char schema_v4[] =
    "CREATE INDEX instances_claimable ON instances(created_ms, id)"
    " WHERE owner IS NULL AND status IN ('Created', 'Executing');"
    "CREATE INDEX instances_by_lease ON instances(lock_expires_ms) WHERE owner IS NOT NULL;";

/* Which migrations add no table or column (only indexes): a read-only open skips them. */
static const bool migration_indexes_only[WFM_STORE_SCHEMA_VERSION] = {false, false, false,
                                                                      true};

/* Migrations from version N to N+1; index 0 is the creation of version 1. A future schema
 * adds its step here and bumps WFM_STORE_SCHEMA_VERSION; migrate() then records the version. */
static const char *const migrations[WFM_STORE_SCHEMA_VERSION] = {schema_v1, schema_v2,
                                                                  schema_v3, schema_v4};

static wf_status db_error(wfm_store *s, wf_error *err, const char *what)
{
    int code = sqlite3_errcode(db_of(s));
    wf_status st = (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) ? WF_E_CORRUPT : WF_E_STORE;
    return wfm__store_fail(s, st, err, "%s: %s", what, sqlite3_errmsg(db_of(s)));
}

static wf_status exec_sql(wfm_store *s, const char *sql, wf_error *err)
{
    if (sqlite3_exec(db_of(s), sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_error(s, err, "store");
    return WF_OK;
}

static wf_status prepare(wfm_store *s, const char *sql, sqlite3_stmt **stmt, wf_error *err)
{
    if (sqlite3_prepare_v2(db_of(s), sql, -1, stmt, NULL) != SQLITE_OK)
        return db_error(s, err, "store");
    return WF_OK;
}

/* The kept statement `id`, prepared on first use; the caller binds, steps and then calls
 * done() (reset and clear the bindings, which are SQLITE_STATIC: nothing is copied). */
static wf_status stmt(wfm_store *s, enum stmt_id id, sqlite3_stmt **out, wf_error *err)
{
    sq_conn *c = s->impl;
    if (!c->stmts[id] && sqlite3_prepare_v3(c->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
                                            &c->stmts[id], NULL) != SQLITE_OK)
        return db_error(s, err, "store");
    *out = c->stmts[id];
    return WF_OK;
}

static void done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Bind text/int64 values given as a format ('t' text, 'i' int64), then step. */
static int bind_step(sqlite3_stmt *st, const char *fmt, va_list ap)
{
    for (int i = 0; fmt[i]; i++) {
        if (fmt[i] == 't')
            sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_STATIC);
        else
            sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
    }
    return sqlite3_step(st);
}

/* Step the kept statement `id` with text/int64 bindings given as a format ('t' text, 'i'
 * int64); *changes (optional) receives the rows it changed. */
static wf_status run(wfm_store *s, enum stmt_id id, int *changes, wf_error *err, const char *fmt,
                     ...)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = stmt(s, id, &st, err);
    if (rc != WF_OK)
        return rc;
    va_list ap;
    va_start(ap, fmt);
    int step = bind_step(st, fmt, ap);
    va_end(ap);
    if (step != SQLITE_DONE && step != SQLITE_ROW)
        rc = db_error(s, err, "store");
    else if (changes)
        *changes = sqlite3_changes(db_of(s));
    done(st);
    return rc;
}

/* Run one statement prepared for this call (the rarely used ones). */
static wf_status run_once(wfm_store *s, const char *sql, wf_error *err, const char *fmt, ...)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = prepare(s, sql, &st, err);
    if (rc != WF_OK)
        return rc;
    va_list ap;
    va_start(ap, fmt);
    int step = bind_step(st, fmt, ap);
    va_end(ap);
    if (step != SQLITE_DONE && step != SQLITE_ROW)
        rc = db_error(s, err, "store");
    sqlite3_finalize(st);
    return rc;
}

/* ---- opening: check everything, then create or migrate ---------------------------------- */

#define APPLICATION "wfbridge-instance-store"

/* Every table of the schema and the version that added it. */
static const struct store_table {
    const char *name;
    int since;
    const char *check; /* the PRAGMA run on open: `instances` gets integrity_check, which
                          also matches its id index against its rows; `tracking` (an
                          append-only log nothing reads back, often the largest table) none */
} tables[] = {
    {"wfbridge_meta", 1, "quick_check"}, {"definitions", 1, "quick_check"},
    {"instances", 1, "integrity_check"}, {"bookmarks", 1, "quick_check"},
    {"promoted", 1, "quick_check"},      {"tracking", 1, NULL},
    {"pending_resumes", 2, "quick_check"},
};
enum { TABLE_COUNT = sizeof tables / sizeof tables[0] };

/* The first column of the first row of `sql` as a copy (*out NULL when there is no row). */
static wf_status query_text(wfm_store *s, const char *sql, char **out, wf_error *err)
{
    *out = NULL;
    sqlite3_stmt *st = NULL;
    wf_status rc = prepare(s, sql, &st, err);
    if (rc != WF_OK)
        return rc;
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 0);
        if (!(*out = wf_strdup(text ? text : "")))
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening the store");
    } else if (step != SQLITE_DONE) {
        rc = db_error(s, err, "store");
    }
    sqlite3_finalize(st);
    return rc;
}

/* Which of our tables exist (bit i: tables[i]) and how many others there are. */
static wf_status list_tables(wfm_store *s, unsigned *present, int *others, wf_error *err)
{
    *present = 0;
    *others = 0;
    sqlite3_stmt *st = NULL;
    wf_status rc = prepare(s, "SELECT name FROM sqlite_master WHERE type = 'table'", &st, err);
    if (rc != WF_OK)
        return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        size_t i = 0;
        while (i < TABLE_COUNT && strcmp(tables[i].name, name ? name : "") != 0)
            i++;
        if (i < TABLE_COUNT)
            *present |= 1u << i;
        else
            (*others)++;
    }
    if (step != SQLITE_DONE)
        rc = db_error(s, err, "store");
    sqlite3_finalize(st);
    return rc;
}

/* PRAGMA quick_check (the b-tree pages are well formed) or integrity_check (also every row
 * is in each index) of one table and its indexes; see docs/durability.md for the cost. */
static wf_status check_table(wfm_store *s, const char *pragma, const char *table, wf_error *err)
{
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA %s(%s)", pragma, table);
    char *text = NULL;
    wf_status rc = query_text(s, sql, &text, err);
    if (rc == WF_OK && (!text || strcmp(text, "ok") != 0)) {
        const char *what = text ? text : "no result";
        if (strncmp(what, "*** ", 4) == 0 && strchr(what, '\n'))
            what = strchr(what, '\n') + 1;
        int first_line = (int)strcspn(what, "\n");
        rc = wfm__store_fail(s, WF_E_STORE, err,
                             "store failed its integrity check (table '%s'): %.*s", table,
                             first_line < 160 ? first_line : 160, what);
    }
    wf_free(text);
    return rc;
}

/* The application key and the schema version: ours, and not newer than this code. */
static wf_status check_meta(wfm_store *s, int *version, wf_error *err)
{
    char *text = NULL;
    wf_status rc =
        query_text(s, "SELECT value FROM wfbridge_meta WHERE key = 'application'", &text, err);
    if (rc == WF_OK && !text)
        rc = wfm__store_fail(s, WF_E_STORE, err,
                    "not a wfbridge instance store (wfbridge_meta has no application key)");
    else if (rc == WF_OK && strcmp(text, APPLICATION) != 0)
        rc = wfm__store_fail(s, WF_E_STORE, err,
                    "not a wfbridge instance store (its application is '%.64s')", text);
    wf_free(text);
    text = NULL;
    if (rc == WF_OK)
        rc = query_text(s, "SELECT value FROM wfbridge_meta WHERE key = 'schema_version'", &text,
                        err);
    if (rc == WF_OK) {
        *version = text ? atoi(text) : 0;
        if (*version <= 0)
            rc = wfm__store_fail(s, WF_E_CORRUPT, err, "store has no valid schema version");
        else if (*version > WFM_STORE_SCHEMA_VERSION)
            rc = wfm__store_fail(s, WF_E_STORE, err,
                        "store schema version %d is newer than this wfbridge supports (%d)",
                        *version, WFM_STORE_SCHEMA_VERSION);
    }
    wf_free(text);
    return rc;
}

/* Check the file without writing anything. *version: 0 for a database without tables (a
 * new store), else its schema version, with every table of that version present and each
 * checked table passing its check. */
static wf_status check_file(wfm_store *s, int *version, wf_error *err)
{
    unsigned present;
    int others;
    *version = 0;
    wf_status rc = list_tables(s, &present, &others, err);
    if (rc != WF_OK || (!present && !others))
        return rc;
    if (!(present & 1u)) /* tables[0]: wfbridge_meta */
        return wfm__store_fail(s, WF_E_STORE, err,
                      "not a wfbridge instance store (it holds %d other tables)", others);
    rc = check_meta(s, version, err);
    for (size_t i = 0; rc == WF_OK && i < TABLE_COUNT; i++)
        if (tables[i].since <= *version && !(present & (1u << i)))
            rc = wfm__store_fail(s, WF_E_STORE, err, "store is missing its '%s' table (schema version %d)",
                        tables[i].name, *version);
    for (size_t i = 0; rc == WF_OK && i < TABLE_COUNT; i++)
        if (tables[i].check && (present & (1u << i)))
            rc = check_table(s, tables[i].check, tables[i].name, err);
    return rc;
}

/* check_file in a read transaction (one consistent snapshot; nothing is written). */
static wf_status check_read(wfm_store *s, int *version, wf_error *err)
{
    wf_status rc = exec_sql(s, "BEGIN", err);
    if (rc != WF_OK)
        return rc;
    rc = check_file(s, version, err);
    sqlite3_exec(db_of(s), rc == WF_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Create or migrate under the write lock (BEGIN IMMEDIATE waits for it under the busy
 * timeout), checking the file again first: many processes opening one new store at once all
 * get here, and only the first one creates the schema. */
static wf_status upgrade(wfm_store *s, wf_error *err)
{
    wf_status rc = exec_sql(s, "BEGIN IMMEDIATE", err);
    if (rc != WF_OK)
        return rc;
    int from = 0;
    rc = check_file(s, &from, err);
    for (int v = from; rc == WF_OK && v < WFM_STORE_SCHEMA_VERSION; v++)
        rc = exec_sql(s, migrations[v], err);
    if (rc == WF_OK && from < WFM_STORE_SCHEMA_VERSION) {
        char sql[128];
        snprintf(sql, sizeof sql,
                 "UPDATE wfbridge_meta SET value = '%d' WHERE key = 'schema_version'",
                 WFM_STORE_SCHEMA_VERSION);
        rc = exec_sql(s, sql, err);
    }
    if (rc == WF_OK)
        return exec_sql(s, "COMMIT", err);
    sqlite3_exec(db_of(s), "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* WAL (a file header change, so only once the file has passed check_read) and the
 * connection's synchronous level. Switching to WAL does not wait in the busy handler when
 * another process holds a lock (many processes opening one new store): retry it, for at most
 * the busy timeout. */
static wf_status set_pragmas(wfm_store *s, wfm_durability durability, wf_error *err)
{
    char *mode = NULL;
    wf_status rc = query_text(s, "PRAGMA journal_mode", &mode, err);
    if (rc == WF_OK && (!mode || strcmp(mode, "wal") != 0)) {
        int code = SQLITE_BUSY;
        for (int waited = 0; code == SQLITE_BUSY && waited <= BUSY_TIMEOUT_MS; waited += 5) {
            code = sqlite3_exec(db_of(s), "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
            if (code == SQLITE_BUSY)
                sqlite3_sleep(5);
        }
        if (code != SQLITE_OK)
            rc = db_error(s, err, "store (switching to WAL)");
    }
    wf_free(mode);
    if (rc == WF_OK)
        rc = exec_sql(s, durability == WFM_DURABILITY_FULL ? "PRAGMA synchronous=FULL"
                                                           : "PRAGMA synchronous=NORMAL",
                      err);
    return rc;
}

/* "file:" URI of path with every byte but unreserved ones %-escaped, plus "?immutable=1". */
static char *immutable_uri(const char *path)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addf(&b, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p))
            wf_buf_addf(&b, "%c", *p);
        else
            wf_buf_addf(&b, "%%%02X", *p);
    }
    wf_buf_addf(&b, "?immutable=1");
    char *uri = b.oom ? NULL : wf_buf_detach(&b, NULL);
    wf_buf_fini(&b);
    return uri;
}

static bool sibling_exists(const char *path, const char *suffix)
{
    char name[4200];
    snprintf(name, sizeof name, "%s%s", path, suffix);
    return access(name, F_OK) == 0;
}

/* Open the connection. A missing or empty file is refused first when read_only/must_exist.
 * read_only on a file no process has open (no -wal or -journal beside it) opens it as
 * immutable: nothing is created beside it, so a store in a directory we cannot write (another
 * user's) can be read, and no -shm owned by us is left there. */
static wf_status open_db(wfm_store *s, const char *path, const wfm_store_opts *o,
                         wf_error *err)
{
    struct stat sb;
    bool exists = stat(path, &sb) == 0;
    if (exists && !S_ISREG(sb.st_mode))
        return wfm__store_fail(s, WF_E_STORE, err, "not a regular file, so not an instance store");
    if (!exists && (o->read_only || o->must_exist))
        return wfm__store_fail(s, WF_E_IO, err, "no instance store at '%s'", path);
    if (exists && sb.st_size == 0 && (o->read_only || o->must_exist))
        return wfm__store_fail(s, WF_E_STORE, err, "empty file, not a wfbridge instance store");
    int flags = SQLITE_OPEN_NOMUTEX;
    char *uri = NULL;
    if (o->read_only) {
        flags |= SQLITE_OPEN_READONLY;
        if (!sibling_exists(path, "-wal") && !sibling_exists(path, "-journal")) {
            if (!(uri = immutable_uri(path)))
                return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening the store");
            flags |= SQLITE_OPEN_URI;
        }
    } else {
        flags |= SQLITE_OPEN_READWRITE | (o->must_exist ? 0 : SQLITE_OPEN_CREATE);
    }
    int code = sqlite3_open_v2(uri ? uri : path, &((sq_conn *)s->impl)->db, flags, NULL);
    wf_free(uri);
    if (code != SQLITE_OK)
        return wfm__store_fail(s, WF_E_STORE, err, "cannot open store: %s",
                      db_of(s) ? sqlite3_errmsg(db_of(s)) : "out of memory");
    sqlite3_extended_result_codes(db_of(s), 0);
    sqlite3_busy_timeout(db_of(s), BUSY_TIMEOUT_MS);
    return WF_OK;
}


/* Does a version `version` store have this code's tables and columns (every later migration
 * only adds indexes, as version 4 does)? A read-only open then reads it as is. */
static bool schema_current(int version)
{
    for (int v = version; v < WFM_STORE_SCHEMA_VERSION; v++)
        if (!migration_indexes_only[v])
            return false;
    return true;
}

static wf_status sq_open(wfm_store *s, const char *path, const wfm_store_opts *opts,
                         wf_error *err)
{
    sq_conn *c = wf_calloc(1, sizeof *c);
    if (!(s->impl = c))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening the store");
    int version = 0;
    wf_status rc = open_db(s, path, opts, err);
    if (rc == WF_OK)
        rc = check_read(s, &version, err);
    if (rc == WF_OK && version == 0 && (opts->read_only || opts->must_exist))
        return wfm__store_fail(s, WF_E_STORE, err,
                               "not a wfbridge instance store (it has no tables)");
    if (rc == WF_OK && version < WFM_STORE_SCHEMA_VERSION && opts->read_only &&
        !schema_current(version))
        return wfm__store_fail(s, WF_E_STORE, err,
                               "store schema version %d must be migrated to %d: open it once "
                               "for writing",
                               version, WFM_STORE_SCHEMA_VERSION);
    if (rc != WF_OK || opts->read_only)
        return rc;
    rc = set_pragmas(s, opts->durability, err);
    return rc == WF_OK && version < WFM_STORE_SCHEMA_VERSION ? upgrade(s, err) : rc;
}

static void sq_close(wfm_store *s)
{
    sq_conn *c = s->impl;
    if (!c)
        return;
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(c->stmts[i]);
    if (c->db)
        sqlite3_close(c->db);
    wf_free(c);
    s->impl = NULL;
}

/* ---- definitions, instances and leases ----------------------------------------------------- */

static wf_status sq_put_definition(wfm_store *s, const char *hash, const char *path, int64_t now,
                                   wf_error *err)
{
    return run_once(s,
                    "INSERT INTO definitions(hash, path, added_ms) VALUES(?, ?, ?)"
                    " ON CONFLICT(hash) DO UPDATE SET path = excluded.path",
                    err, "tti", hash, path, now);
}

static wf_status sq_create(wfm_store *s, const char *id, const char *hash, int64_t now,
                           wf_error *err)
{
    wf_status rc = run(s, ST_CREATE, NULL, err, "ttiiti", id, hash, now, now, s->owner,
                       now + s->lease_ms);
    wfm__names_forget(s, id);
    return rc;
}

static wf_status sq_create_many(wfm_store *s, const char *const *ids, size_t count,
                                const char *hash, int64_t now, wf_error *err)
{
    wf_error ignored = WF_ERROR_INIT;
    wf_status rc = run(s, ST_BEGIN_IMMEDIATE, NULL, err, "");
    for (size_t i = 0; rc == WF_OK && i < count; i++)
        rc = sq_create(s, ids[i], hash, now, err);
    if (rc == WF_OK)
        rc = run(s, ST_COMMIT, NULL, err, "");
    if (rc != WF_OK && !sqlite3_get_autocommit(db_of(s)))
        run(s, ST_ROLLBACK, NULL, &ignored, "");
    return rc;
}

static wf_status sq_take_lease(wfm_store *s, const char *id, const char *from, int64_t now,
                               bool *changed, wf_error *err)
{
    int changes = 0;
    wf_status rc = from ? run(s, ST_TAKE_FROM, &changes, err, "titt", s->owner,
                              now + s->lease_ms, id, from)
                        : run(s, ST_TAKE_LEASE, &changes, err, "titi", s->owner,
                              now + s->lease_ms, id, now);
    *changed = changes > 0;
    if (*changed) /* somebody else may have written its names since we last did */
        wfm__names_forget(s, id);
    return rc;
}

static wf_status sq_owner_of(wfm_store *s, const char *id, char **owner, bool *exists,
                             wf_error *err)
{
    *owner = NULL;
    *exists = false;
    sqlite3_stmt *st = NULL;
    wf_status rc = stmt(s, ST_OWNER_OF, &st, err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        *exists = true;
        const char *text = (const char *)sqlite3_column_text(st, 0);
        if (text && !(*owner = wf_strdup(text)))
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory locking an instance");
    } else if (step != SQLITE_DONE) {
        rc = db_error(s, err, "store");
    }
    done(st);
    return rc;
}

static wf_status sq_release(wfm_store *s, const char *id, wf_error *err)
{
    wfm__names_forget(s, id);
    return run(s, ST_RELEASE_LEASE, NULL, err, "tt", id, s->owner);
}

static wf_status sq_renew(wfm_store *s, int64_t now, wf_error *err)
{
    return run(s, ST_RENEW, NULL, err, "iti", now + s->lease_ms, s->owner, now);
}

/* ---- saving ------------------------------------------------------------------------------ */

static wf_status write_names(wfm_store *s, enum stmt_id id, const char *instance,
                             const char *const *names, const char *const *values, size_t count,
                             wf_error *err);

/* The new row with its first state (inside the caller's transaction). */
static wf_status insert_row(wfm_store *s, const char *hash, const wfm_store_save_rec *r,
                            int64_t now, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = stmt(s, ST_INSERT, &st, err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, r->status, -1, SQLITE_STATIC);
    if (r->state)
        sqlite3_bind_blob(st, 4, r->state, (int)r->state_len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, now);
    if (!r->release)
        sqlite3_bind_text(st, 6, s->owner, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, r->release ? 0 : now + s->lease_ms);
    sqlite3_bind_int64(st, 8, r->next_timer_us);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = db_error(s, err, "store");
    done(st);
    return rc;
}

/* A new row with its bookmarks and promoted properties (inside the caller's transaction). */
static wf_status insert_rec(wfm_store *s, const char *hash, const wfm_store_save_rec *r,
                            int64_t now, wf_error *err)
{
    wfm__names_forget(s, r->id);
    wf_status rc = insert_row(s, hash, r, now, err);
    if (rc == WF_OK)
        rc = write_names(s, ST_INSERT_BOOKMARK, r->id, r->bookmarks, NULL, r->bookmark_count,
                         err);
    if (rc == WF_OK)
        rc = write_names(s, ST_INSERT_PROMOTED, r->id, r->prop_names, r->prop_values,
                         r->prop_count, err);
    return rc;
}

/* wfm_store_insert, inside write_batch's transaction: the row, its bookmarks and promoted
 * properties. */
static wf_status insert_instance(wfm_store *s, const wfm__pending_save *p, int64_t now,
                                 wf_error *err)
{
    return insert_rec(s, p->insert_hash, p->rec, now, err);
}

/* wfm_store_insert_many: `count` rows with their first saves in one transaction of their
 * own, all or none; a row that exists is named. */
static wf_status sq_insert_many(wfm_store *s, const char *hash, const wfm_store_save_rec *recs,
                                size_t count, int64_t now, wf_error *err)
{
    wf_error ignored = WF_ERROR_INIT;
    wf_status rc = run(s, ST_BEGIN_IMMEDIATE, NULL, err, "");
    for (size_t i = 0; rc == WF_OK && i < count; i++)
        if ((rc = insert_rec(s, hash, &recs[i], now, err)) != WF_OK &&
            sqlite3_extended_errcode(db_of(s)) == SQLITE_CONSTRAINT_PRIMARYKEY) {
            wf_error_clear(err);
            rc = wfm__store_fail(s, WF_E_STORE, err, "instance '%s' already exists", recs[i].id);
        }
    if (rc == WF_OK)
        rc = run(s, ST_COMMIT, NULL, err, "");
    if (rc != WF_OK && !sqlite3_get_autocommit(db_of(s)))
        run(s, ST_ROLLBACK, NULL, &ignored, "");
    return rc;
}

static wf_status sq_suspend(wfm_store *s, const char *id, const char *reason, int64_t now,
                            wf_error *err)
{
    int changes = 0;
    wfm__names_forget(s, id);
    wf_status rc = run_once(s,
                            "UPDATE instances SET status = 'Suspended', reason = ?1,"
                            " updated_ms = ?2, owner = NULL, lock_expires_ms = 0, attempts = 0,"
                            " version = version + 1 WHERE id = ?3 AND owner = ?4",
                            err, "titt", reason, now, id, s->owner);
    if (rc == WF_OK)
        changes = sqlite3_changes(db_of(s));
    if (rc != WF_OK || changes > 0)
        return rc;
    char *owner = NULL;
    bool exists = false;
    rc = sq_owner_of(s, id, &owner, &exists, err);
    wf_free(owner);
    return rc == WF_OK ? wfm__store_lock_failure(s, id, exists, err) : rc;
}

static wf_status write_names(wfm_store *s, enum stmt_id id, const char *instance,
                             const char *const *names, const char *const *values, size_t count,
                             wf_error *err)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = count ? stmt(s, id, &st, err) : WF_OK;
    for (size_t i = 0; rc == WF_OK && i < count; i++) {
        sqlite3_bind_text(st, 1, instance, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, names[i], -1, SQLITE_STATIC);
        if (values)
            sqlite3_bind_text(st, 3, values[i], -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_error(s, err, "store");
        done(st);
    }
    return rc;
}

/* The instance row (only with a live lease of ours), then its bookmarks, promoted properties
 * and applied resumptions: only the statements that have something to do. */
/* Bind the row update of save r (ST_SAVE, ST_SAVE_KEPT, ST_SAVE_ROW) to kept statement `id`. */
static wf_status bind_save(wfm_store *s, enum stmt_id id, const wfm_store_save_rec *r,
                           int64_t now, sqlite3_stmt **out, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = stmt(s, id, &st, err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_text(st, 1, r->status, -1, SQLITE_STATIC);
    if (r->state)
        sqlite3_bind_blob(st, 2, r->state, (int)r->state_len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 2);
    sqlite3_bind_int64(st, 3, now);
    sqlite3_bind_int64(st, 4, r->next_timer_us);
    sqlite3_bind_int(st, 5, r->release ? 1 : 0);
    sqlite3_bind_int64(st, 6, now + s->lease_ms);
    sqlite3_bind_text(st, 7, r->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, s->owner, -1, SQLITE_STATIC);
    *out = st;
    return WF_OK;
}

/* A save whose names are those this connection last committed for the instance: the row
 * alone, guarded by the version that commit left. *saved false (nothing changed) when the
 * row is at another version or the lease is gone: the caller saves it in full. */
static wf_status write_kept(wfm_store *s, wfm__pending_save *p, int64_t now, bool *saved,
                            wf_error *err)
{
    const wfm__names_entry *last = wfm__names_get(s, p->rec->id);
    *saved = false;
    if (!last || !wfm__names_unchanged(s, p->rec, last->version))
        return WF_OK;
    int64_t version = last->version;
    sqlite3_stmt *st = NULL;
    wf_status rc = bind_save(s, wfm__names_same_index(last, p->rec) ? ST_SAVE_ROW : ST_SAVE_KEPT,
                             p->rec, now, &st, err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_int64(st, 9, version);
    int step = sqlite3_step(st);
    *saved = step == SQLITE_DONE && sqlite3_changes(db_of(s)) == 1;
    done(st);
    if (step != SQLITE_DONE)
        return db_error(s, err, "store");
    p->version = version + 1;
    return WF_OK;
}

static wf_status write_instance(wfm_store *s, wfm__pending_save *p, int64_t now,
                                wf_error *err)
{
    const wfm_store_save_rec *r = p->rec;
    bool kept = false;
    wf_status rc = write_kept(s, p, now, &kept, err);
    if (rc == WF_OK && kept && r->resumes_through > 0)
        rc = run(s, ST_DELETE_RESUMES, NULL, err, "ti", r->id, r->resumes_through);
    if (rc != WF_OK || kept)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = bind_save(s, ST_SAVE, r, now, &st, err);
    if (rc != WF_OK)
        return rc;
    int step = sqlite3_step(st);
    bool saved = step == SQLITE_ROW;
    if (saved) {
        p->version = sqlite3_column_int64(st, 0);
        step = sqlite3_step(st);
    }
    done(st);
    if (step != SQLITE_DONE)
        return db_error(s, err, "store");
    if (!saved) {
        char *owner = NULL;
        bool exists = false;
        rc = sq_owner_of(s, r->id, &owner, &exists, err);
        wf_free(owner);
        return rc == WF_OK ? wfm__store_lock_failure(s, r->id, exists, err) : rc;
    }
    p->wrote_names = !wfm__names_unchanged(s, r, p->version - 1);
    if (p->wrote_names)
        rc = run(s, ST_DELETE_BOOKMARKS, NULL, err, "t", r->id);
    if (rc == WF_OK && p->wrote_names)
        rc = run(s, ST_DELETE_PROMOTED, NULL, err, "t", r->id);
    if (rc == WF_OK && p->wrote_names)
        rc = write_names(s, ST_INSERT_BOOKMARK, r->id, r->bookmarks, NULL, r->bookmark_count,
                         err);
    if (rc == WF_OK && p->wrote_names)
        rc = write_names(s, ST_INSERT_PROMOTED, r->id, r->prop_names, r->prop_values,
                         r->prop_count, err);
    if (rc == WF_OK && r->resumes_through > 0)
        rc = run(s, ST_DELETE_RESUMES, NULL, err, "ti", r->id, r->resumes_through);
    return rc;
}

/* One save inside the batch transaction, under its own savepoint when the batch holds
 * others (a batch of one is rolled back as a whole instead). */
static void save_one(wfm_store *s, wfm__pending_save *p, bool alone, int64_t now)
{
    wf_error ignored = WF_ERROR_INIT;
    p->status = alone ? WF_OK : run(s, ST_SAVEPOINT, NULL, &p->err, "");
    if (p->status != WF_OK)
        return;
    p->status = p->insert_hash ? insert_instance(s, p, now, &p->err)
                               : write_instance(s, p, now, &p->err);
    if (alone)
        return;
    if (p->status != WF_OK)
        run(s, ST_ROLLBACK_TO, NULL, &ignored, "");
    run(s, ST_RELEASE, NULL, &ignored, "");
}

/* After the batch: remember the names each committed save wrote; forget them for a save
 * that failed, released its lease, or whose commit failed. */
static void note_names(wfm_store *s, wfm__pending_save *batch, bool committed)
{
    for (wfm__pending_save *p = batch; p; p = p->next) {
        if (!committed || p->status != WF_OK || p->rec->release || p->insert_hash)
            wfm__names_forget(s, p->rec->id);
        else
            wfm__names_remember(s, p->rec, p->version);
    }
}

/* A save that failed without changing anything: its row update found no live lease of ours
 * (write_instance stops there), so the batch needs no savepoint to undo it. */
static bool failed_untouched(const wfm__pending_save *p)
{
    return !p->insert_hash && (p->status == WF_E_LOCKED || p->status == WF_E_NOTFOUND);
}

/* The saves of a batch of several inside the open transaction without a savepoint each
 * (two statements fewer per save): true when every one either succeeded or changed nothing.
 * Otherwise a failed save may have left part of its writes: the caller rolls back and writes
 * the batch again under savepoints. */
static bool write_unguarded(wfm_store *s, wfm__pending_save *batch, int64_t now)
{
    for (wfm__pending_save *p = batch; p; p = p->next) {
        p->status = p->insert_hash ? insert_instance(s, p, now, &p->err)
                                   : write_instance(s, p, now, &p->err);
        if (p->status != WF_OK && !failed_untouched(p))
            return false;
    }
    return true;
}

static wf_status sq_write_batch(wfm_store *s, wfm__pending_save *batch, int64_t now,
                                uint64_t *commits, wf_error *err)
{
    wf_error ignored = WF_ERROR_INIT;
    bool alone = batch && !batch->next;
    wf_status rc = run(s, ST_BEGIN_IMMEDIATE, NULL, err, "");
    if (rc == WF_OK && !alone && !write_unguarded(s, batch, now)) {
        run(s, ST_ROLLBACK, NULL, &ignored, "");
        for (wfm__pending_save *p = batch; p; p = p->next) {
            p->status = WF_OK;
            p->err = (wf_error)WF_ERROR_INIT;
            p->wrote_names = false;
        }
        rc = run(s, ST_BEGIN_IMMEDIATE, NULL, err, "");
        for (wfm__pending_save *p = batch; rc == WF_OK && p; p = p->next)
            save_one(s, p, false, now);
    } else if (rc == WF_OK && alone) {
        save_one(s, batch, true, now);
    }
    if (rc == WF_OK && alone && batch->status != WF_OK) { /* nothing to commit */
        run(s, ST_ROLLBACK, NULL, &ignored, "");
        note_names(s, batch, false);
        return WF_OK;
    }
    if (rc == WF_OK)
        rc = run(s, ST_COMMIT, NULL, err, "");
    if (rc != WF_OK) {
        if (!sqlite3_get_autocommit(db_of(s)))
            run(s, ST_ROLLBACK, NULL, &ignored, "");
        note_names(s, batch, false);
        return rc;
    }
    note_names(s, batch, true);
    *commits = 1;
    return WF_OK;
}

/* ---- reading ----------------------------------------------------------------------------- */

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

static wf_status sq_load_state(wfm_store *s, const char *id, void **state, size_t *state_len,
                               char status[32], uint64_t *definition_hash, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = prepare(s, "SELECT state, status, definition FROM instances WHERE id = ?", &st,
                           err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        int len = sqlite3_column_bytes(st, 0);
        const void *blob = sqlite3_column_blob(st, 0);
        if (blob && len > 0) {
            if ((*state = wf_malloc((size_t)len))) {
                memcpy(*state, blob, (size_t)len);
                *state_len = (size_t)len;
            } else {
                rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory reading state");
            }
        }
        snprintf(status, 32, "%s", col_text(st, 1));
        if (definition_hash)
            *definition_hash = strtoull(col_text(st, 2), NULL, 16);
    } else if (step == SQLITE_DONE) {
        rc = wfm__store_fail(s, WF_E_NOTFOUND, err, "no instance '%s' in the store", id);
    } else {
        rc = db_error(s, err, "store");
    }
    sqlite3_finalize(st);
    return rc;
}

static const char query_sql[] =
    "SELECT i.id, i.status, i.definition, d.path, i.created_ms, i.updated_ms, i.owner,"
    " i.lock_expires_ms, i.next_timer_us,"
    " (SELECT group_concat(name, char(10)) FROM bookmarks b WHERE b.instance = i.id),"
    " (SELECT count(*) FROM pending_resumes r WHERE r.instance = i.id),"
    " (SELECT bookmark FROM pending_resumes r WHERE r.instance = i.id ORDER BY seq LIMIT 1),"
    " i.attempts, i.reason, i.state IS NOT NULL"
    " FROM instances i LEFT JOIN definitions d ON d.hash = i.definition"
    " WHERE (?1 IS NULL OR i.status = ?1)"
    " AND (?2 IS NULL OR EXISTS (SELECT 1 FROM promoted p WHERE p.instance = i.id"
    "      AND p.name = ?2 AND p.value IS ?3))"
    " AND (?4 <= 0 OR (i.next_timer_us > 0 AND i.next_timer_us < ?4))"
    " AND (?5 IS NULL OR EXISTS (SELECT 1 FROM bookmarks b WHERE b.instance = i.id"
    "      AND b.name = ?5))"
    " ORDER BY i.created_ms, i.id";

static void bind_opt(sqlite3_stmt *st, int i, const char *text)
{
    if (text)
        sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static wf_status sq_query_rows(wfm_store *s, const wfm_store_query *q, wfm_store_row_fn fn,
                               void *ud, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = prepare(s, query_sql, &st, err);
    if (rc != WF_OK)
        return rc;
    bind_opt(st, 1, q->status);
    bind_opt(st, 2, q->prop_name);
    bind_opt(st, 3, q->prop_value);
    sqlite3_bind_int64(st, 4, q->due_before_us);
    bind_opt(st, 5, q->bookmark);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *bm = col_text(st, 9);
        wfm_store_row row = {col_text(st, 0), col_text(st, 1),
                             strtoull(col_text(st, 2), NULL, 16), col_text(st, 3),
                             sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5),
                             col_text(st, 6), sqlite3_column_int64(st, 7),
                             sqlite3_column_int64(st, 8), bm ? bm : "",
                             sqlite3_column_int64(st, 10), col_text(st, 11),
                             sqlite3_column_int64(st, 12), col_text(st, 13),
                             sqlite3_column_int(st, 14) != 0};
        if (!fn(ud, &row))
            break;
    }
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        rc = db_error(s, err, "store");
    sqlite3_finalize(st);
    return rc;
}

static wf_status sq_props(wfm_store *s, const char *id, wf_buf *out, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = stmt(s, ST_PROPS, &st, err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *v = col_text(st, 1);
        wf_buf_addf(out, "%s=%s\n", col_text(st, 0), v ? v : "");
    }
    if (step != SQLITE_DONE)
        rc = db_error(s, err, "store");
    done(st);
    return rc;
}

/* ---- pending resumptions ----------------------------------------------------------------- */

static wf_status sq_enqueue_resume(wfm_store *s, const char *id, const char *bookmark,
                                   const char *payload_json, int64_t now, int64_t *seq,
                                   wf_error *err)
{
    wf_error ignored = WF_ERROR_INIT;
    char *owner = NULL;
    bool exists = false;
    wf_status rc = run(s, ST_BEGIN_IMMEDIATE, NULL, err, "");
    if (rc == WF_OK)
        rc = sq_owner_of(s, id, &owner, &exists, err);
    wf_free(owner);
    if (rc == WF_OK && !exists)
        rc = wfm__store_fail(s, WF_E_NOTFOUND, err, "no instance '%s' in the store", id);
    if (rc == WF_OK)
        rc = run_once(s,
                      "INSERT INTO pending_resumes(instance, seq, bookmark, payload_json,"
                      " created_ms) SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3, ?4"
                      " FROM pending_resumes WHERE instance = ?1",
                      err, "ttti", id, bookmark, payload_json, now);
    if (rc == WF_OK) {
        sqlite3_stmt *st = NULL;
        rc = prepare(s, "SELECT max(seq) FROM pending_resumes WHERE instance = ?", &st, err);
        if (rc == WF_OK) {
            sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
            *seq = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        }
        sqlite3_finalize(st);
    }
    if (rc == WF_OK)
        rc = run(s, ST_COMMIT, NULL, err, "");
    if (rc != WF_OK && !sqlite3_get_autocommit(db_of(s)))
        run(s, ST_ROLLBACK, NULL, &ignored, "");
    return rc;
}

static wf_status sq_put_tracking(wfm_store *s, const wfm_store_track_rec *recs, size_t count,
                                 wf_error *err)
{
    wf_error ignored = WF_ERROR_INIT;
    sqlite3_stmt *st = NULL;
    wf_status rc = run(s, ST_BEGIN_IMMEDIATE, NULL, err, "");
    if (rc == WF_OK)
        rc = stmt(s, ST_PUT_TRACKING, &st, err);
    for (size_t i = 0; rc == WF_OK && i < count; i++) {
        const wfm_store_track_rec *r = &recs[i];
        sqlite3_bind_text(st, 1, r->instance, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, r->seq);
        sqlite3_bind_int64(st, 3, r->time_us);
        sqlite3_bind_text(st, 4, r->kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, r->record, (int)r->record_len, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_error(s, err, "store");
        done(st);
    }
    if (rc == WF_OK)
        rc = run(s, ST_COMMIT, NULL, err, "");
    if (rc != WF_OK && !sqlite3_get_autocommit(db_of(s)))
        run(s, ST_ROLLBACK, NULL, &ignored, "");
    return rc;
}

static wf_status sq_pending_resumes(wfm_store *s, const char *id, wfm_store_resume_fn fn,
                                    void *ud, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = stmt(s, ST_PENDING, &st, err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        wfm_store_resume r = {sqlite3_column_int64(st, 0), col_text(st, 1), col_text(st, 2),
                              sqlite3_column_int64(st, 3)};
        if (!fn(ud, &r))
            break;
    }
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        rc = db_error(s, err, "store");
    done(st);
    return rc;
}

/* ---- claiming work ----------------------------------------------------------------------- */

/* A claimed row copied out of the statement: RETURNING gives the rows in no particular order,
 * so they are sorted, and the statement has finished (committed) before fn sees any. */
typedef struct claimed_row {
    char id[33];
    char status[32];
    uint64_t hash;
    int64_t created_ms, pending, attempts, promoted;
    size_t state_at, state_len; /* in the blob buffer; state_len 0: no state */
} claimed_row;

static int claimed_order(const void *a, const void *b)
{
    const claimed_row *x = a, *y = b;
    if (x->created_ms != y->created_ms)
        return x->created_ms < y->created_ms ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* Copy the current row of the claim statement into rows[*n] (growing rows) and its state into
 * blobs; false when out of memory. */
static bool copy_claimed(sqlite3_stmt *st, claimed_row **rows, size_t *n, size_t *cap,
                         wf_buf *blobs)
{
    if (*n == *cap) {
        size_t grown = *cap ? *cap * 2 : 64;
        claimed_row *r = wf_realloc(*rows, grown * sizeof *r);
        if (!r)
            return false;
        *rows = r;
        *cap = grown;
    }
    claimed_row *r = &(*rows)[(*n)++];
    snprintf(r->id, sizeof r->id, "%s", col_text(st, 0));
    snprintf(r->status, sizeof r->status, "%s", col_text(st, 1));
    r->hash = strtoull(col_text(st, 2), NULL, 16);
    int len = sqlite3_column_bytes(st, 3);
    const void *blob = sqlite3_column_blob(st, 3);
    r->state_at = blobs->len;
    r->state_len = blob && len > 0 ? (size_t)len : 0;
    r->created_ms = sqlite3_column_int64(st, 4);
    r->pending = sqlite3_column_int64(st, 5);
    r->attempts = sqlite3_column_int64(st, 6);
    r->promoted = sqlite3_column_int64(st, 7);
    return r->state_len == 0 || wf_buf_add(blobs, blob, r->state_len);
}

/* One UPDATE ... RETURNING (its own transaction, under the busy timeout like every write),
 * then fn for each row in creation order. */
static wf_status sq_claim(wfm_store *s, size_t max, int64_t now, int64_t now_us,
                          wfm_store_claim_fn fn, void *ud, size_t *count, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = stmt(s, ST_CLAIM, &st, err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_text(st, 1, s->owner, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, now + s->lease_ms);
    sqlite3_bind_int64(st, 3, now);
    sqlite3_bind_int64(st, 4, now_us);
    sqlite3_bind_int64(st, 5, max > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)max);
    claimed_row *rows = NULL;
    size_t n = 0, cap = 0;
    wf_buf blobs;
    wf_buf_init(&blobs);
    int step = SQLITE_DONE;
    bool oom = false;
    while (!oom && (step = sqlite3_step(st)) == SQLITE_ROW)
        oom = !copy_claimed(st, &rows, &n, &cap, &blobs);
    if (oom) /* done() below commits what the statement leased: the next claim returns it */
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory claiming work");
    else if (step != SQLITE_DONE)
        rc = db_error(s, err, "store");
    done(st);
    for (size_t i = 0; i < n; i++) /* another host may have written their names */
        wfm__names_forget(s, rows[i].id);
    if (rc == WF_OK) {
        *count = n;
        if (n > 1)
            qsort(rows, n, sizeof *rows, claimed_order);
        for (size_t i = 0; i < n; i++) {
            const claimed_row *r = &rows[i];
            wfm_store_claimed c = {r->id, r->status, r->hash,
                                   r->state_len ? blobs.data + r->state_at : NULL, r->state_len,
                                   r->pending, r->attempts, r->promoted};
            if (!fn(ud, &c))
                break;
        }
    }
    wf_free(rows);
    wf_buf_fini(&blobs);
    return rc;
}

/* No notifications between processes: sleep, and the caller polls. */
/* No notifications: sleep until the timeout or a wake. */
static wf_status sq_wait(wfm_store *s, int64_t timeout_ms, int wake_fd, bool *woken,
                         wf_error *err)
{
    (void)s;
    (void)err;
    *woken = false;
    struct pollfd pfd = {wake_fd, POLLIN, 0};
    poll(&pfd, 1, timeout_ms > INT_MAX ? INT_MAX : (int)timeout_ms);
    return WF_OK;
}

const wfm__store_ops wfm__store_sqlite_ops = {
    .open = sq_open,
    .close = sq_close,
    .put_definition = sq_put_definition,
    .create = sq_create,
    .create_many = sq_create_many,
    .insert_many = sq_insert_many,
    .suspend = sq_suspend,
    .take_lease = sq_take_lease,
    .owner_of = sq_owner_of,
    .release = sq_release,
    .renew = sq_renew,
    .write_batch = sq_write_batch,
    .load_state = sq_load_state,
    .query_rows = sq_query_rows,
    .props = sq_props,
    .enqueue_resume = sq_enqueue_resume,
    .pending_resumes = sq_pending_resumes,
    .put_tracking = sq_put_tracking,
    .wait = sq_wait,
    .claim = sq_claim,
};

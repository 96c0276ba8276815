/* wfm_store.c — the SQLite instance store (see wfm_store.h). One connection per wfm_store,
 * serialised by `db_lock`; saves go through a leader/follower group commit: the first saver
 * becomes the leader, writes every queued save in one transaction (one SAVEPOINT each, so one
 * failing save does not undo the others) and wakes the followers after COMMIT.
 *
 * Lease rule: an instance is runnable by owner O iff owner = O and lock_expires_ms >= now, or
 * owner IS NULL, or the lease expired (lock_expires_ms < now), or the owner is a process of
 * this machine that has died (owner_is_dead) — the last three are taken over by
 * wfm_store_lock. A save requires a live lease of this owner. Time is the injected clock.
 * Opening checks the whole file before anything writes to it (check_read), then switches to
 * WAL and creates or migrates under the write lock (upgrade); see docs/durability.md. */
#include "wfm_store.h"

#include <pthread.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <errno.h>
#include <signal.h> /* kill(pid, 0): is a lease owner alive */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../common/wf_random.h"

typedef struct pending_save {
    const wfm_store_save_rec *rec;
    wf_status status;
    wf_error err;
    bool done;
    struct pending_save *next;
} pending_save;

struct wfm_store {
    sqlite3 *db;
    char *path;
    char *owner;
    int64_t lease_ms;
    bool group_commit;
    wfm_store_clock_fn clock; /* ms */
    void *clock_ud;
    pthread_mutex_t db_lock;    /* the connection */
    pthread_mutex_t queue_lock; /* the group-commit queue */
    pthread_cond_t queue_cond;
    pending_save *queue_head, *queue_tail;
    bool leader_active;
    uint64_t commits, saves;
};

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

/* Migrations from version N to N+1; index 0 is the creation of version 1. A future schema
 * adds its step here and bumps WFM_STORE_SCHEMA_VERSION; migrate() then records the version. */
static const char *const migrations[WFM_STORE_SCHEMA_VERSION] = {schema_v1, schema_v2};

static int64_t real_clock_ms(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_ms(const wfm_store *s)
{
    return s->clock(s->clock_ud);
}

static wf_status db_error(wfm_store *s, wf_error *err, const char *what)
{
    int code = sqlite3_errcode(s->db);
    wf_status st = (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) ? WF_E_CORRUPT : WF_E_STORE;
    wf_loc loc = {s->path, 0, 0};
    return wf_error_set(err, st, &loc, "%s: %s", what, sqlite3_errmsg(s->db));
}

static wf_status exec_sql(wfm_store *s, const char *sql, wf_error *err)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_error(s, err, "store");
    return WF_OK;
}

static wf_status prepare(wfm_store *s, const char *sql, sqlite3_stmt **stmt, wf_error *err)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, stmt, NULL) != SQLITE_OK)
        return db_error(s, err, "store");
    return WF_OK;
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

static wf_status refuse(wfm_store *s, wf_status code, wf_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static wf_status refuse(wfm_store *s, wf_status code, wf_error *err, const char *fmt, ...)
{
    wf_loc loc = {s->path, 0, 0};
    va_list ap;
    va_start(ap, fmt);
    wf_status st = wf_error_setv(err, code, &loc, fmt, ap);
    va_end(ap);
    return st;
}

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
        rc = refuse(s, WF_E_STORE, err, "store failed its integrity check (table '%s'): %.*s",
                    table, first_line < 160 ? first_line : 160, what);
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
        rc = refuse(s, WF_E_STORE, err,
                    "not a wfbridge instance store (wfbridge_meta has no application key)");
    else if (rc == WF_OK && strcmp(text, APPLICATION) != 0)
        rc = refuse(s, WF_E_STORE, err,
                    "not a wfbridge instance store (its application is '%.64s')", text);
    wf_free(text);
    text = NULL;
    if (rc == WF_OK)
        rc = query_text(s, "SELECT value FROM wfbridge_meta WHERE key = 'schema_version'", &text,
                        err);
    if (rc == WF_OK) {
        *version = text ? atoi(text) : 0;
        if (*version <= 0)
            rc = refuse(s, WF_E_CORRUPT, err, "store has no valid schema version");
        else if (*version > WFM_STORE_SCHEMA_VERSION)
            rc = refuse(s, WF_E_STORE, err,
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
        return refuse(s, WF_E_STORE, err,
                      "not a wfbridge instance store (it holds %d other tables)", others);
    rc = check_meta(s, version, err);
    for (size_t i = 0; rc == WF_OK && i < TABLE_COUNT; i++)
        if (tables[i].since <= *version && !(present & (1u << i)))
            rc = refuse(s, WF_E_STORE, err, "store is missing its '%s' table (schema version %d)",
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
    sqlite3_exec(s->db, rc == WF_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
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
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
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
            code = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
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

/* The default owner id: this machine, this process, and randomness for several stores in
 * one process. owner_is_dead reads it back. */
static char *default_owner(void)
{
    unsigned char r[4];
    wf_random_bytes(r, sizeof r);
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    host[strcspn(host, ":")] = '\0';
    char buf[320];
    snprintf(buf, sizeof buf, "%s:%ld:%02x%02x%02x%02x", host, (long)getpid(), r[0], r[1], r[2],
             r[3]);
    return wf_strdup(buf);
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
static wf_status open_db(wfm_store *s, const wfm_store_opts *o, wf_error *err)
{
    struct stat sb;
    bool exists = stat(o->path, &sb) == 0;
    if (exists && !S_ISREG(sb.st_mode))
        return refuse(s, WF_E_STORE, err, "not a regular file, so not an instance store");
    if (!exists && (o->read_only || o->must_exist))
        return refuse(s, WF_E_IO, err, "no instance store at '%s'", o->path);
    if (exists && sb.st_size == 0 && (o->read_only || o->must_exist))
        return refuse(s, WF_E_STORE, err, "empty file, not a wfbridge instance store");
    int flags = SQLITE_OPEN_NOMUTEX;
    char *uri = NULL;
    if (o->read_only) {
        flags |= SQLITE_OPEN_READONLY;
        if (!sibling_exists(o->path, "-wal") && !sibling_exists(o->path, "-journal")) {
            if (!(uri = immutable_uri(o->path)))
                return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening the store");
            flags |= SQLITE_OPEN_URI;
        }
    } else {
        flags |= SQLITE_OPEN_READWRITE | (o->must_exist ? 0 : SQLITE_OPEN_CREATE);
    }
    int code = sqlite3_open_v2(uri ? uri : o->path, &s->db, flags, NULL);
    wf_free(uri);
    if (code != SQLITE_OK)
        return refuse(s, WF_E_STORE, err, "cannot open store: %s",
                      s->db ? sqlite3_errmsg(s->db) : "out of memory");
    sqlite3_extended_result_codes(s->db, 0);
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    return WF_OK;
}

static wf_status store_init(wfm_store *s, const wfm_store_opts *opts, wf_error *err)
{
    s->path = wf_strdup(opts->path);
    s->owner = opts->owner ? wf_strdup(opts->owner) : default_owner();
    if (!s->path || !s->owner)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening the store");
    s->lease_ms = opts->lease_ms > 0 ? opts->lease_ms : 60000;
    s->group_commit = opts->group_commit;
    s->clock = opts->clock_ms ? opts->clock_ms : real_clock_ms;
    s->clock_ud = opts->clock_ud;
    int version = 0;
    wf_status rc = open_db(s, opts, err);
    if (rc == WF_OK)
        rc = check_read(s, &version, err);
    if (rc == WF_OK && version == 0 && (opts->read_only || opts->must_exist))
        return refuse(s, WF_E_STORE, err, "not a wfbridge instance store (it has no tables)");
    if (rc == WF_OK && version < WFM_STORE_SCHEMA_VERSION && opts->read_only)
        return refuse(s, WF_E_STORE, err,
                      "store schema version %d must be migrated to %d: open it once for "
                      "writing",
                      version, WFM_STORE_SCHEMA_VERSION);
    if (rc != WF_OK || opts->read_only)
        return rc;
    rc = set_pragmas(s, opts->durability, err);
    return rc == WF_OK && version < WFM_STORE_SCHEMA_VERSION ? upgrade(s, err) : rc;
}

wf_status wfm_store_open(const wfm_store_opts *opts, wfm_store **out, wf_error *err)
{
    *out = NULL;
    if (!opts || !opts->path)
        return wf_error_set(err, WF_E_USAGE, NULL, "no store path given");
    wfm_store *s = wf_calloc(1, sizeof *s);
    if (!s)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening the store");
    pthread_mutex_init(&s->db_lock, NULL);
    pthread_mutex_init(&s->queue_lock, NULL);
    pthread_cond_init(&s->queue_cond, NULL);
    wf_status rc = store_init(s, opts, err);
    if (rc != WF_OK) {
        wfm_store_close(s);
        return rc;
    }
    *out = s;
    return WF_OK;
}

void wfm_store_close(wfm_store *s)
{
    if (!s)
        return;
    if (s->db)
        sqlite3_close(s->db);
    pthread_mutex_destroy(&s->db_lock);
    pthread_mutex_destroy(&s->queue_lock);
    pthread_cond_destroy(&s->queue_cond);
    wf_free(s->path);
    wf_free(s->owner);
    wf_free(s);
}

const char *wfm_store_owner(const wfm_store *s)
{
    return s->owner;
}

void wfm_store_counters(const wfm_store *s, uint64_t *commits, uint64_t *saves)
{
    wfm_store *m = (wfm_store *)s;
    pthread_mutex_lock(&m->db_lock);
    *commits = s->commits;
    *saves = s->saves;
    pthread_mutex_unlock(&m->db_lock);
}

/* ---- definitions and instances -------------------------------------------------------- */

static void hash_text(uint64_t hash, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)hash);
}

/* Run one statement with text/int64 bindings given as a format: 't' text, 'i' int64. */
static wf_status run_stmt(wfm_store *s, const char *sql, int *changes, wf_error *err,
                          const char *fmt, ...)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = prepare(s, sql, &st, err);
    if (rc != WF_OK)
        return rc;
    va_list ap;
    va_start(ap, fmt);
    for (int i = 0; fmt[i]; i++) {
        if (fmt[i] == 't')
            sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
    }
    va_end(ap);
    int step = sqlite3_step(st);
    sqlite3_finalize(st);
    if (step != SQLITE_DONE && step != SQLITE_ROW)
        return db_error(s, err, "store");
    if (changes)
        *changes = sqlite3_changes(s->db);
    return WF_OK;
}

wf_status wfm_store_put_definition(wfm_store *s, uint64_t hash, const char *path, wf_error *err)
{
    char h[17];
    hash_text(hash, h);
    pthread_mutex_lock(&s->db_lock);
    wf_status rc = run_stmt(s,
                            "INSERT INTO definitions(hash, path, added_ms) VALUES(?, ?, ?)"
                            " ON CONFLICT(hash) DO UPDATE SET path = excluded.path",
                            NULL, err, "tti", h, path ? path : "", now_ms(s));
    pthread_mutex_unlock(&s->db_lock);
    return rc;
}

wf_status wfm_store_create(wfm_store *s, uint64_t definition_hash, wfm_store_id *out,
                           wf_error *err)
{
    char h[17];
    hash_text(definition_hash, h);
    wf_random_id(out->text);
    int64_t now = now_ms(s);
    pthread_mutex_lock(&s->db_lock);
    wf_status rc = run_stmt(s,
                            "INSERT INTO instances(id, definition, status, created_ms, updated_ms,"
                            " owner, lock_expires_ms) VALUES(?, ?, 'Created', ?, ?, ?, ?)",
                            NULL, err, "ttiiti", out->text, h, now, now, s->owner,
                            now + s->lease_ms);
    pthread_mutex_unlock(&s->db_lock);
    return rc;
}

static wf_status instance_exists(wfm_store *s, const char *id, bool *exists, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = prepare(s, "SELECT 1 FROM instances WHERE id = ?", &st, err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    *exists = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return WF_OK;
}

/* After a conditional UPDATE changed nothing: unknown id or somebody else's live lease. */
static wf_status lock_failure(wfm_store *s, const char *id, wf_error *err)
{
    bool exists = false;
    wf_status rc = instance_exists(s, id, &exists, err);
    if (rc != WF_OK)
        return rc;
    wf_loc loc = {s->path, 0, 0};
    if (!exists)
        return wf_error_set(err, WF_E_NOTFOUND, &loc, "no instance '%s' in the store", id);
    return wf_error_set(err, WF_E_LOCKED, &loc,
                        "instance '%s' is locked by another host (its lease has not expired)",
                        id);
}

/* Is `owner` a default owner id (default_owner) of another process on this machine that no
 * longer exists? Its leases may be taken over at once instead of after they expire. A pid
 * reused by another process only delays the takeover until the lease expires. */
static bool owner_is_dead(const char *owner)
{
    const char *rand = strrchr(owner, ':');
    if (!rand || rand == owner || strlen(rand + 1) != 8 ||
        strspn(rand + 1, "0123456789abcdef") != 8)
        return false;
    const char *colon = rand - 1;
    while (colon > owner && *colon != ':')
        colon--;
    if (colon == owner)
        return false;
    char *end = NULL;
    errno = 0;
    long pid = strtol(colon + 1, &end, 10);
    if (end != rand || pid <= 0 || errno != 0 || (pid_t)pid == getpid())
        return false;
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        return false;
    host[sizeof host - 1] = '\0';
    size_t host_len = (size_t)(colon - owner);
    if (strlen(host) != host_len || memcmp(host, owner, host_len) != 0)
        return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* After the lease update changed nothing: take the lease from a dead local owner, if that
 * is who holds it (compare-and-set on the owner, so two hosts cannot both win). */
static wf_status take_from_dead(wfm_store *s, const char *id, int64_t now, int *changes,
                                wf_error *err)
{
    sqlite3_stmt *st = NULL;
    char *owner = NULL;
    wf_status rc = prepare(s, "SELECT owner FROM instances WHERE id = ?", &st, err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
        !(owner = wf_strdup((const char *)sqlite3_column_text(st, 0))))
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory locking an instance");
    sqlite3_finalize(st);
    if (rc == WF_OK && owner && owner_is_dead(owner))
        rc = run_stmt(s,
                      "UPDATE instances SET owner = ?1, lock_expires_ms = ?2 WHERE id = ?3"
                      " AND owner = ?4",
                      changes, err, "titt", s->owner, now + s->lease_ms, id, owner);
    wf_free(owner);
    return rc;
}

wf_status wfm_store_lock(wfm_store *s, const char *id, wf_error *err)
{
    int64_t now = now_ms(s);
    int changes = 0;
    pthread_mutex_lock(&s->db_lock);
    wf_status rc = run_stmt(s,
                            "UPDATE instances SET owner = ?1, lock_expires_ms = ?2 WHERE id = ?3"
                            " AND (owner IS NULL OR owner = ?1 OR lock_expires_ms < ?4)",
                            &changes, err, "titi", s->owner, now + s->lease_ms, id, now);
    if (rc == WF_OK && changes == 0)
        rc = take_from_dead(s, id, now, &changes, err);
    if (rc == WF_OK && changes == 0)
        rc = lock_failure(s, id, err);
    pthread_mutex_unlock(&s->db_lock);
    return rc;
}

wf_status wfm_store_release(wfm_store *s, const char *id, wf_error *err)
{
    pthread_mutex_lock(&s->db_lock);
    wf_status rc = run_stmt(s,
                            "UPDATE instances SET owner = NULL, lock_expires_ms = 0"
                            " WHERE id = ? AND owner = ?",
                            NULL, err, "tt", id, s->owner);
    pthread_mutex_unlock(&s->db_lock);
    return rc;
}

wf_status wfm_store_renew(wfm_store *s, wf_error *err)
{
    int64_t now = now_ms(s);
    pthread_mutex_lock(&s->db_lock);
    wf_status rc = run_stmt(s,
                            "UPDATE instances SET lock_expires_ms = ? WHERE owner = ?"
                            " AND lock_expires_ms >= ?",
                            NULL, err, "iti", now + s->lease_ms, s->owner, now);
    pthread_mutex_unlock(&s->db_lock);
    return rc;
}

/* ---- saving ------------------------------------------------------------------------------ */

static wf_status write_names(wfm_store *s, const char *sql, const char *id,
                             const char *const *names, const char *const *values, size_t count,
                             wf_error *err)
{
    sqlite3_stmt *st = NULL;
    wf_status rc = prepare(s, sql, &st, err);
    for (size_t i = 0; rc == WF_OK && i < count; i++) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 2, names[i], -1, SQLITE_TRANSIENT);
        if (values)
            sqlite3_bind_text(st, 3, values[i], -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_error(s, err, "store");
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static wf_status write_instance(wfm_store *s, const wfm_store_save_rec *r, wf_error *err)
{
    int64_t now = now_ms(s);
    sqlite3_stmt *st = NULL;
    wf_status rc = prepare(s,
                           "UPDATE instances SET status = ?1, state = ?2, updated_ms = ?3,"
                           " next_timer_us = ?4, version = version + 1,"
                           " owner = CASE WHEN ?5 THEN NULL ELSE owner END,"
                           " lock_expires_ms = CASE WHEN ?5 THEN 0 ELSE ?6 END"
                           " WHERE id = ?7 AND owner = ?8 AND lock_expires_ms >= ?3",
                           &st, err);
    if (rc != WF_OK)
        return rc;
    sqlite3_bind_text(st, 1, r->status, -1, SQLITE_TRANSIENT);
    if (r->state)
        sqlite3_bind_blob(st, 2, r->state, (int)r->state_len, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 2);
    sqlite3_bind_int64(st, 3, now);
    sqlite3_bind_int64(st, 4, r->next_timer_us);
    sqlite3_bind_int(st, 5, r->release ? 1 : 0);
    sqlite3_bind_int64(st, 6, now + s->lease_ms);
    sqlite3_bind_text(st, 7, r->id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 8, s->owner, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(st);
    sqlite3_finalize(st);
    if (step != SQLITE_DONE)
        return db_error(s, err, "store");
    if (sqlite3_changes(s->db) == 0)
        return lock_failure(s, r->id, err);
    rc = run_stmt(s, "DELETE FROM bookmarks WHERE instance = ?", NULL, err, "t", r->id);
    if (rc == WF_OK)
        rc = run_stmt(s, "DELETE FROM promoted WHERE instance = ?", NULL, err, "t", r->id);
    if (rc == WF_OK)
        rc = write_names(s, "INSERT OR IGNORE INTO bookmarks(instance, name) VALUES(?, ?)",
                         r->id, r->bookmarks, NULL, r->bookmark_count, err);
    if (rc == WF_OK)
        rc = write_names(s, "INSERT OR REPLACE INTO promoted(instance, name, value)"
                            " VALUES(?, ?, ?)",
                         r->id, r->prop_names, r->prop_values, r->prop_count, err);
    if (rc == WF_OK && r->resumes_through > 0)
        rc = run_stmt(s, "DELETE FROM pending_resumes WHERE instance = ? AND seq <= ?", NULL,
                      err, "ti", r->id, r->resumes_through);
    return rc;
}

/* One save inside the batch transaction, under its own savepoint. */
static void save_one(wfm_store *s, pending_save *p)
{
    p->status = exec_sql(s, "SAVEPOINT one_save", &p->err);
    if (p->status != WF_OK)
        return;
    p->status = write_instance(s, p->rec, &p->err);
    if (p->status == WF_OK)
        sqlite3_exec(s->db, "RELEASE one_save", NULL, NULL, NULL);
    else
        sqlite3_exec(s->db, "ROLLBACK TO one_save; RELEASE one_save", NULL, NULL, NULL);
}

/* Write a batch in one transaction. A failed COMMIT fails every save of the batch. */
static void write_batch(wfm_store *s, pending_save *batch)
{
    wf_error err = WF_ERROR_INIT;
    pthread_mutex_lock(&s->db_lock);
    wf_status rc = exec_sql(s, "BEGIN IMMEDIATE", &err);
    for (pending_save *p = batch; rc == WF_OK && p; p = p->next)
        save_one(s, p);
    if (rc == WF_OK)
        rc = exec_sql(s, "COMMIT", &err);
    if (rc != WF_OK) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        for (pending_save *p = batch; p; p = p->next) {
            p->status = rc;
            p->err = err;
        }
    } else {
        s->commits++;
        for (pending_save *p = batch; p; p = p->next)
            s->saves += p->status == WF_OK;
    }
    pthread_mutex_unlock(&s->db_lock);
}

wf_status wfm_store_save(wfm_store *s, const wfm_store_save_rec *rec, wf_error *err)
{
    pending_save p = {rec, WF_OK, WF_ERROR_INIT, false, NULL};
    if (!s->group_commit) {
        write_batch(s, &p);
    } else {
        pthread_mutex_lock(&s->queue_lock);
        if (s->queue_tail)
            s->queue_tail->next = &p;
        else
            s->queue_head = &p;
        s->queue_tail = &p;
        while (!p.done) {
            if (s->leader_active) {
                pthread_cond_wait(&s->queue_cond, &s->queue_lock);
                continue;
            }
            /* Become the leader: take everything queued so far. */
            s->leader_active = true;
            pending_save *batch = s->queue_head;
            s->queue_head = s->queue_tail = NULL;
            pthread_mutex_unlock(&s->queue_lock);
            write_batch(s, batch);
            pthread_mutex_lock(&s->queue_lock);
            for (pending_save *q = batch, *next; q; q = next) {
                next = q->next;
                q->done = true;
            }
            s->leader_active = false;
            pthread_cond_broadcast(&s->queue_cond);
        }
        pthread_mutex_unlock(&s->queue_lock);
    }
    if (p.status != WF_OK && err && err->code == WF_OK)
        *err = p.err;
    return p.status;
}

/* ---- reading ----------------------------------------------------------------------------- */

wf_status wfm_store_load_state(wfm_store *s, const char *id, void **state, size_t *state_len,
                               char status[32], uint64_t *definition_hash, wf_error *err)
{
    *state = NULL;
    *state_len = 0;
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&s->db_lock);
    wf_status rc = prepare(s, "SELECT state, status, definition FROM instances WHERE id = ?", &st,
                           err);
    if (rc == WF_OK) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        int step = sqlite3_step(st);
        if (step == SQLITE_ROW) {
            int len = sqlite3_column_bytes(st, 0);
            const void *blob = sqlite3_column_blob(st, 0);
            if (blob && len > 0) {
                *state = wf_malloc((size_t)len);
                if (*state) {
                    memcpy(*state, blob, (size_t)len);
                    *state_len = (size_t)len;
                } else {
                    rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory reading state");
                }
            }
            snprintf(status, 32, "%s", (const char *)sqlite3_column_text(st, 1));
            if (definition_hash)
                *definition_hash = strtoull((const char *)sqlite3_column_text(st, 2), NULL, 16);
        } else if (step == SQLITE_DONE) {
            wf_loc loc = {s->path, 0, 0};
            rc = wf_error_set(err, WF_E_NOTFOUND, &loc, "no instance '%s' in the store", id);
        } else {
            rc = db_error(s, err, "store");
        }
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->db_lock);
    return rc;
}

static const char query_sql[] =
    "SELECT i.id, i.status, i.definition, d.path, i.created_ms, i.updated_ms, i.owner,"
    " i.lock_expires_ms, i.next_timer_us,"
    " (SELECT group_concat(name, char(10)) FROM bookmarks b WHERE b.instance = i.id),"
    " (SELECT count(*) FROM pending_resumes r WHERE r.instance = i.id),"
    " (SELECT bookmark FROM pending_resumes r WHERE r.instance = i.id ORDER BY seq LIMIT 1)"
    " FROM instances i LEFT JOIN definitions d ON d.hash = i.definition"
    " WHERE (?1 IS NULL OR i.status = ?1)"
    " AND (?2 IS NULL OR EXISTS (SELECT 1 FROM promoted p WHERE p.instance = i.id"
    "      AND p.name = ?2 AND p.value IS ?3))"
    " AND (?4 <= 0 OR (i.next_timer_us > 0 AND i.next_timer_us < ?4))"
    " AND (?5 IS NULL OR EXISTS (SELECT 1 FROM bookmarks b WHERE b.instance = i.id"
    "      AND b.name = ?5))"
    " ORDER BY i.created_ms, i.id";

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

static void bind_opt(sqlite3_stmt *st, int i, const char *text)
{
    if (text)
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

wf_status wfm_store_query_rows(wfm_store *s, const wfm_store_query *q, wfm_store_row_fn fn,
                               void *ud, wf_error *err)
{
    wfm_store_query none = WFM_STORE_QUERY_INIT;
    if (!q)
        q = &none;
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&s->db_lock);
    wf_status rc = prepare(s, query_sql, &st, err);
    if (rc == WF_OK) {
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
                                 sqlite3_column_int64(st, 10), col_text(st, 11)};
            if (!fn(ud, &row))
                break;
        }
        if (step != SQLITE_ROW && step != SQLITE_DONE)
            rc = db_error(s, err, "store");
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->db_lock);
    return rc;
}

wf_status wfm_store_props(wfm_store *s, const char *id, char **out, wf_error *err)
{
    *out = NULL;
    wf_buf b;
    wf_buf_init(&b);
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&s->db_lock);
    wf_status rc = prepare(s, "SELECT name, value FROM promoted WHERE instance = ? ORDER BY name",
                           &st, err);
    if (rc == WF_OK) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *v = col_text(st, 1);
            wf_buf_addf(&b, "%s=%s\n", col_text(st, 0), v ? v : "");
        }
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->db_lock);
    if (rc == WF_OK) {
        *out = wf_buf_detach(&b, NULL);
        if (!*out)
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory reading properties");
    }
    wf_buf_fini(&b);
    return rc;
}

/* ---- pending resumptions ----------------------------------------------------------------- */

wf_status wfm_store_enqueue_resume(wfm_store *s, const char *id, const char *bookmark,
                                   const char *payload_json, int64_t *seq, wf_error *err)
{
    pthread_mutex_lock(&s->db_lock);
    bool exists = false;
    wf_status rc = exec_sql(s, "BEGIN IMMEDIATE", err);
    if (rc == WF_OK)
        rc = instance_exists(s, id, &exists, err);
    if (rc == WF_OK && !exists) {
        wf_loc loc = {s->path, 0, 0};
        rc = wf_error_set(err, WF_E_NOTFOUND, &loc, "no instance '%s' in the store", id);
    }
    if (rc == WF_OK)
        rc = run_stmt(s,
                      "INSERT INTO pending_resumes(instance, seq, bookmark, payload_json,"
                      " created_ms) SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3, ?4"
                      " FROM pending_resumes WHERE instance = ?1",
                      NULL, err, "ttti", id, bookmark, payload_json ? payload_json : "null",
                      now_ms(s));
    if (rc == WF_OK && seq) {
        sqlite3_stmt *st = NULL;
        rc = prepare(s, "SELECT max(seq) FROM pending_resumes WHERE instance = ?", &st, err);
        if (rc == WF_OK) {
            sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
            *seq = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        }
        sqlite3_finalize(st);
    }
    if (rc == WF_OK)
        rc = exec_sql(s, "COMMIT", err);
    if (rc != WF_OK)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&s->db_lock);
    return rc;
}

wf_status wfm_store_pending_resumes(wfm_store *s, const char *id, wfm_store_resume_fn fn,
                                    void *ud, wf_error *err)
{
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&s->db_lock);
    wf_status rc = prepare(s,
                           "SELECT seq, bookmark, payload_json, created_ms FROM pending_resumes"
                           " WHERE instance = ? ORDER BY seq",
                           &st, err);
    if (rc == WF_OK) {
        sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        int step;
        while ((step = sqlite3_step(st)) == SQLITE_ROW) {
            wfm_store_resume r = {sqlite3_column_int64(st, 0), col_text(st, 1), col_text(st, 2),
                                  sqlite3_column_int64(st, 3)};
            if (!fn(ud, &r))
                break;
        }
        if (step != SQLITE_ROW && step != SQLITE_DONE)
            rc = db_error(s, err, "store");
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->db_lock);
    return rc;
}

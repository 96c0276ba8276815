/* wfm_store_pg.c — the PostgreSQL backend of the instance store (wfm_store_int.h) over libpq:
 * one connection per wfm_store, the tables in the connection's current schema, versioned and
 * migrated on open under an advisory lock (a foreign or newer schema is refused, rolled back
 * untouched). Every statement is prepared once per session; a save is one statement (the
 * instance row, bookmarks, promoted properties and applied resumptions in data-modifying CTEs),
 * a batch of saves one transaction. A dropped connection is reconnected with backoff; a batch
 * whose COMMIT may or may not have happened is resolved by reading back each save's random
 * token (instances.save_token), so no save is applied twice. See docs/durability.md. */
#include "wfm_store_int.h"

#include <errno.h>
#include <libpq-fe.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/wf_random.h"

enum pg_stmt {
    PS_SAVE,
    PS_TOKEN_OF,
    PS_TAKE_LEASE,
    PS_TAKE_FROM,
    PS_OWNER_OF,
    PS_RELEASE,
    PS_RENEW,
    PS_CREATE,
    PS_PUT_DEFINITION,
    PS_LOAD,
    PS_QUERY,
    PS_PROPS,
    PS_ENQUEUE,
    PS_SEQ_OF_TOKEN,
    PS_PENDING,
    PS_CLAIM,
    PS_SAVE_STATE,
    PS_PUT_TRACKING,
    PS_INSERT,
    PS_SUSPEND,
    PS_INSERT_NEW,
    PS_COUNT
};

/* wfm_store_insert's statement: the row with its first state, bookmarks and promoted
 * properties in one statement; $6 owner (NULL: released, then announced as work), $9 the save
 * token (a statement run again after a dropped connection finds its own row); `conflict`: what
 * a row already there does. */
#define PG_INSERT_ROW(conflict)                                                                    \
    "WITH i AS (INSERT INTO instances(id, definition, status, state, created_ms,"                  \
    " updated_ms, owner, lock_expires_ms, next_timer_us, version, save_token)"                     \
    " VALUES($1, $2, $3, $4, $5, $5, $6, $7, $8, 1, $9)" conflict " RETURNING id),"                \
    " ib AS (INSERT INTO bookmarks(instance, name) SELECT i.id, b.n"                               \
    " FROM i, unnest($10::text[]) AS b(n) ON CONFLICT DO NOTHING),"                                \
    " ip AS (INSERT INTO promoted(instance, name, value)"                                          \
    " SELECT DISTINCT ON (p.n) i.id, p.n, p.v"                                                     \
    " FROM i, unnest($11::text[], $12::text[]) WITH ORDINALITY AS p(n, v, o)"                      \
    " ORDER BY p.n, p.o DESC ON CONFLICT (instance, name) DO NOTHING),"                            \
    " n AS (SELECT pg_notify('wfbridge_work', i.id) FROM i WHERE $6::text IS NULL"                 \
    " AND $3 IN ('Created', 'Executing'))"                                                         \
    " SELECT count(*), (SELECT count(*) FROM n) FROM i"

/* How each kind of claimable row is taken (PS_CLAIM): the oldest first, at most $5, locked,
 * skipping rows another transaction holds. */
#define PG_CLAIM_TAKE " ORDER BY i.created_ms, i.id LIMIT $5::bigint FOR UPDATE SKIP LOCKED"

static const char *const pg_sql[PS_COUNT] = {
    [PS_SAVE] =
        "WITH u AS (UPDATE instances SET status = $4, state = $5, updated_ms = $3,"
        " next_timer_us = $6, version = version + 1, save_token = $13, reason = NULL,"
        " attempts = CASE WHEN $7::boolean THEN 0 ELSE attempts END,"
        " owner = CASE WHEN $7::boolean THEN NULL ELSE owner END,"
        " lock_expires_ms = CASE WHEN $7::boolean THEN 0 ELSE $8::bigint END"
        " WHERE id = $1 AND owner = $2 AND lock_expires_ms >= $3 RETURNING id, version),"
        " db AS (DELETE FROM bookmarks WHERE instance IN (SELECT id FROM u)"
        " AND name <> ALL($9::text[])),"
        " ib AS (INSERT INTO bookmarks(instance, name) SELECT u.id, b.n"
        " FROM u, unnest($9::text[]) AS b(n) ON CONFLICT DO NOTHING),"
        " dp AS (DELETE FROM promoted WHERE instance IN (SELECT id FROM u)"
        " AND name <> ALL($10::text[])),"
        " ip AS (INSERT INTO promoted(instance, name, value)"
        " SELECT DISTINCT ON (p.n) u.id, p.n, p.v"
        " FROM u, unnest($10::text[], $11::text[]) WITH ORDINALITY AS p(n, v, o)"
        " ORDER BY p.n, p.o DESC"
        " ON CONFLICT (instance, name) DO UPDATE SET value = excluded.value),"
        " dr AS (DELETE FROM pending_resumes WHERE instance IN (SELECT id FROM u)"
        " AND seq <= $12)"
        " , n AS (SELECT pg_notify('wfbridge_work', u.id) FROM u"
        " WHERE $7::boolean AND $4 IN ('Created', 'Executing'))"
        " SELECT count(*), (SELECT count(*) FROM n), max(version) FROM u",
    [PS_TOKEN_OF] = "SELECT save_token FROM instances WHERE id = $1",
    [PS_TAKE_LEASE] = "UPDATE instances SET owner = $1, lock_expires_ms = $2,"
                      " attempts = attempts + 1 WHERE id = $3"
                      " AND (owner IS NULL OR owner = $1 OR lock_expires_ms < $4)",
    [PS_TAKE_FROM] = "UPDATE instances SET owner = $1, lock_expires_ms = $2,"
                     " attempts = attempts + 1 WHERE id = $3 AND owner = $4",
    [PS_OWNER_OF] = "SELECT owner FROM instances WHERE id = $1",
    [PS_RELEASE] = "UPDATE instances SET owner = NULL, lock_expires_ms = 0,"
                   " attempts = greatest(attempts - 1, 0) WHERE id = $1 AND owner = $2",
    [PS_RENEW] = "UPDATE instances SET lock_expires_ms = $1 WHERE owner = $2"
                 " AND lock_expires_ms >= $3",
    [PS_CREATE] = "INSERT INTO instances(id, definition, status, created_ms, updated_ms, owner,"
                  " lock_expires_ms) VALUES($1, $2, 'Created', $3, $3, $4, $5)"
                  " ON CONFLICT (id) DO NOTHING",
    [PS_PUT_DEFINITION] = "INSERT INTO definitions(hash, path, added_ms) VALUES($1, $2, $3)"
                          " ON CONFLICT (hash) DO UPDATE SET path = excluded.path",
    [PS_LOAD] = "SELECT state, status, definition FROM instances WHERE id = $1",
    /* wfm_store_query: each row's bookmarks and queued resumptions come from one pass over
     * those tables (hash-joined), not from three subqueries per row: a host lists the whole
     * store every poll period. */
    [PS_QUERY] =
        "SELECT i.id, i.status, i.definition, d.path, i.created_ms, i.updated_ms, i.owner,"
        " i.lock_expires_ms, i.next_timer_us, bm.names, coalesce(pr.n, 0), pr.first,"
        " i.attempts, i.reason, i.state IS NOT NULL"
        " FROM instances i LEFT JOIN definitions d ON d.hash = i.definition"
        " LEFT JOIN (SELECT instance, string_agg(name, E'\\n' ORDER BY name) AS names"
        "  FROM bookmarks GROUP BY instance) bm ON bm.instance = i.id"
        " LEFT JOIN (SELECT instance, count(*) AS n,"
        "  (array_agg(bookmark ORDER BY seq))[1] AS first"
        "  FROM pending_resumes GROUP BY instance) pr ON pr.instance = i.id"
        " WHERE ($1::text IS NULL OR i.status = $1)"
        " AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM promoted p WHERE p.instance = i.id"
        "      AND p.name = $2 AND p.value IS NOT DISTINCT FROM $3::text))"
        " AND ($4::bigint <= 0 OR (i.next_timer_us > 0 AND i.next_timer_us < $4))"
        " AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM bookmarks b WHERE b.instance = i.id"
        "      AND b.name = $5))"
        " ORDER BY i.created_ms, i.id",
    [PS_PROPS] = "SELECT name, value FROM promoted WHERE instance = $1 ORDER BY name",
    [PS_ENQUEUE] =
        "WITH q AS (INSERT INTO pending_resumes(instance, seq, bookmark, payload_json,"
        " created_ms, token)"
        " SELECT i.id, coalesce((SELECT max(seq) FROM pending_resumes WHERE instance = $1), 0)"
        " + 1, $2, $3, $4, $5 FROM instances i WHERE i.id = $1 AND NOT EXISTS (SELECT 1"
        " FROM pending_resumes WHERE instance = $1 AND token = $5) RETURNING seq),"
        " n AS (SELECT pg_notify('wfbridge_work', $1) FROM q)"
        " SELECT seq, (SELECT count(*) FROM n) FROM q",
    [PS_SEQ_OF_TOKEN] = "SELECT seq FROM pending_resumes WHERE instance = $1 AND token = $2",
    [PS_PENDING] = "SELECT seq, bookmark, payload_json, created_ms FROM pending_resumes"
                   " WHERE instance = $1 ORDER BY seq",
    /* wfm_store_claim: $1 owner, $2 new expiry, $3 now (ms), $4 now (us, timers), $5 max.
     * The candidates come from four kinds of claimable row, each read through an index of its
     * own, so a claim that finds nothing reads no row it cannot take: free rows saved
     * runnable (instances_claimable, in claim order), expired leases (instances_by_owner:
     * every leased row), Idle rows with a timer due (instances_by_timer) and Idle rows whose
     * first queued resumption they wait on (from pending_resumes). Rows another transaction
     * has locked (being claimed, saved or renewed) are skipped; a row that changed since the
     * snapshot is checked again once locked (EvalPlanQual). Each kind locks at most $5 rows,
     * the oldest $5 of them all are leased (the others' locks end with the statement); UNION
     * drops a row of two kinds (a due timer and a resumption) so that it takes one place. */
    [PS_CLAIM] =
        "WITH c AS (UPDATE instances SET owner = $1, lock_expires_ms = $2::bigint,"
        " attempts = attempts + 1"
        " WHERE id IN (SELECT k.id FROM ("
        " SELECT * FROM (SELECT i.id, i.created_ms FROM instances i"
        " WHERE i.owner IS NULL AND i.status IN ('Created', 'Executing')"
        PG_CLAIM_TAKE ") ready"
        " UNION SELECT * FROM (SELECT i.id, i.created_ms FROM instances i"
        " WHERE i.owner IS NOT NULL AND i.lock_expires_ms < $3::bigint"
        " AND i.status IN ('Created', 'Executing')" PG_CLAIM_TAKE ") expired"
        " UNION SELECT * FROM (SELECT i.id, i.created_ms FROM instances i"
        " WHERE i.status = 'Idle' AND i.next_timer_us > 0 AND i.next_timer_us <= $4::bigint"
        " AND (i.owner IS NULL OR i.lock_expires_ms < $3::bigint)" PG_CLAIM_TAKE ") due"
        " UNION SELECT * FROM (SELECT i.id, i.created_ms FROM instances i"
        " WHERE i.id IN (SELECT r.instance FROM pending_resumes r) AND i.status = 'Idle'"
        " AND (i.owner IS NULL OR i.lock_expires_ms < $3::bigint)"
        " AND EXISTS (SELECT 1 FROM bookmarks b WHERE b.instance = i.id AND b.name ="
        " (SELECT r.bookmark FROM pending_resumes r WHERE r.instance = i.id"
        " ORDER BY r.seq LIMIT 1))" PG_CLAIM_TAKE ") resumable"
        " ) k ORDER BY k.created_ms, k.id LIMIT $5::bigint)"
        " RETURNING id, status, definition, state, created_ms, attempts)"
        " SELECT c.id, c.status, c.definition, c.state,"
        " (SELECT count(*) FROM pending_resumes r WHERE r.instance = c.id), c.attempts,"
        " (SELECT count(*) FROM promoted p WHERE p.instance = c.id)"
        " FROM c ORDER BY c.created_ms, c.id",
    /* A save whose bookmarks and promoted properties are those this connection last wrote
     * (the names cache), that keeps its lease and deletes no queued resumption: the row only,
     * provided it is still at the version that save left ($8). */
    [PS_SAVE_STATE] =
        "WITH u AS (UPDATE instances SET status = $4, state = $5, updated_ms = $3,"
        " next_timer_us = $6, version = version + 1, save_token = $9, lock_expires_ms = $7"
        " WHERE id = $1 AND owner = $2 AND lock_expires_ms >= $3 AND version = $8"
        " RETURNING version)"
        " SELECT count(*), 0, max(version) FROM u",
    /* wfm_store_put_tracking: the records as five parallel arrays, one statement */
    [PS_PUT_TRACKING] =
        "INSERT INTO tracking(instance, seq, time_us, kind, record)"
        " SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[])"
        " ON CONFLICT (instance, seq) DO UPDATE SET time_us = excluded.time_us,"
        " kind = excluded.kind, record = excluded.record",
    /* wfm_store_insert (PG_INSERT_ROW above) */
    [PS_INSERT] = PG_INSERT_ROW(" ON CONFLICT (id) DO NOTHING"),
    /* wfm_store_insert_many: the same where an existing row is an error (the batch's
     * transaction then writes nothing) */
    [PS_INSERT_NEW] = PG_INSERT_ROW(""),
    [PS_SUSPEND] = "UPDATE instances SET status = 'Suspended', reason = $1, updated_ms = $2,"
                   " owner = NULL, lock_expires_ms = 0, attempts = 0, version = version + 1"
                   " WHERE id = $3 AND owner = $4",
};

/* Version 1. Pages of instances are left half empty: a save that changes no indexed column
 * (the state, the lease's expiry, the version) then writes the new row version on the same
 * page, a heap-only update that touches no index. */
static const char schema_v1[] =
    "CREATE TABLE wfbridge_meta(key text PRIMARY KEY, value text NOT NULL);"
    "CREATE TABLE definitions(hash text PRIMARY KEY, path text, added_ms bigint NOT NULL);"
    "CREATE TABLE instances(id text PRIMARY KEY, definition text NOT NULL,"
    " status text NOT NULL, state bytea, created_ms bigint NOT NULL,"
    " updated_ms bigint NOT NULL, owner text, lock_expires_ms bigint NOT NULL DEFAULT 0,"
    " next_timer_us bigint NOT NULL DEFAULT 0, version bigint NOT NULL DEFAULT 0,"
    " save_token bigint NOT NULL DEFAULT 0) WITH (fillfactor = 50);"
    "CREATE INDEX instances_by_status ON instances(status);"
    "CREATE INDEX instances_by_timer ON instances(next_timer_us) WHERE next_timer_us > 0;"
    "CREATE INDEX instances_by_owner ON instances(owner) WHERE owner IS NOT NULL;"
    "CREATE TABLE bookmarks(instance text NOT NULL, name text NOT NULL,"
    " PRIMARY KEY(instance, name));"
    "CREATE INDEX bookmarks_by_name ON bookmarks(name);"
    "CREATE TABLE promoted(instance text NOT NULL, name text NOT NULL, value text,"
    " PRIMARY KEY(instance, name));"
    "CREATE INDEX promoted_by_value ON promoted(name, value);"
    "CREATE TABLE tracking(instance text NOT NULL, seq bigint NOT NULL, time_us bigint NOT NULL,"
    " kind text NOT NULL, record text NOT NULL, PRIMARY KEY(instance, seq));"
    "INSERT INTO wfbridge_meta VALUES('application', 'wfbridge-instance-store'),"
    " ('schema_version', '1');";

/* Version 2: resumptions queued for an instance another host holds. */
static const char schema_v2[] =
    "CREATE TABLE pending_resumes(instance text NOT NULL, seq bigint NOT NULL,"
    " bookmark text NOT NULL, payload_json text NOT NULL, created_ms bigint NOT NULL,"
    " token bigint NOT NULL DEFAULT 0, PRIMARY KEY(instance, seq));";

/* Version 3: unfinished runs per instance (quarantine) and why an instance is Suspended. */
static const char schema_v3[] =
    "ALTER TABLE instances ADD COLUMN attempts bigint NOT NULL DEFAULT 0;"
    "ALTER TABLE instances ADD COLUMN reason text;";

/* Version 4: the free rows saved runnable in claim order (PS_CLAIM), so that a claim reads
 * only rows it can take. Its columns are already indexed or never change (status and owner
 * change where instances_by_status and instances_by_owner change anyway; created_ms and id
 * never do): a save that was a heap-only update still is. */
static const char schema_v4[] =
    "CREATE INDEX instances_claimable ON instances(created_ms, id)"
    " WHERE owner IS NULL AND status IN ('Created', 'Executing');";

/* Migrations from version N to N+1, index 0 creating version 1 (as in the SQLite backend). */
static const char *const migrations[WFM_STORE_SCHEMA_VERSION] = {schema_v1, schema_v2,
                                                                  schema_v3, schema_v4};

static const char *const tables[] = {"wfbridge_meta", "definitions", "instances", "bookmarks",
                                     "promoted",      "tracking",    "pending_resumes"};
static const int table_since[] = {1, 1, 1, 1, 1, 1, 2};
enum { TABLE_COUNT = sizeof tables / sizeof tables[0] };

/* How long a dropped connection is retried before the operation fails. */
#define RECONNECT_MS 30000

typedef struct pg_conn {
    PGconn *conn;
    PGconn *listen;  /* LISTEN wfbridge_work (wfm_store_wait), opened on first wait */
    char *conninfo;
    bool broken; /* the server ended the session (an 08 or 57P0x error): reconnect */
    bool prepared[PS_COUNT];
    bool read_only;
    wfm_durability durability;
} pg_conn;

static PGconn *conn_of(const wfm_store *s)
{
    return ((pg_conn *)s->impl)->conn;
}

/* libpq's message without its trailing newline. */
static wf_status pg_fail(wfm_store *s, wf_status code, wf_error *err, const char *what,
                         const char *msg)
{
    int len = (int)strcspn(msg ? msg : "", "\n");
    return wfm__store_fail(s, code, err, "%s: %.*s", what, len, msg ? msg : "");
}

static bool lost(const wfm_store *s)
{
    return ((pg_conn *)s->impl)->broken || PQstatus(conn_of(s)) != CONNECTION_OK;
}

/* The message of a failed result (NULL: the connection's), noting errors that end the
 * session: connection exceptions (08) and the server shutting down or the backend being
 * terminated (57P01..57P03), after which the store reconnects. */
static const char *result_error(wfm_store *s, const PGresult *r)
{
    pg_conn *c = s->impl;
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (!r || (state && (strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0)))
        c->broken = true;
    return r ? PQresultErrorMessage(r) : PQerrorMessage(c->conn);
}

/* Run a plain command (no parameters, no rows wanted). */
static wf_status pg_exec(wfm_store *s, const char *sql, wf_error *err)
{
    PGresult *r = PQexec(conn_of(s), sql);
    ExecStatusType t = PQresultStatus(r);
    wf_status rc = WF_OK;
    if (t != PGRES_COMMAND_OK && t != PGRES_TUPLES_OK)
        rc = pg_fail(s, WF_E_STORE, err, "store", result_error(s, r));
    PQclear(r);
    return rc;
}

/* What every session sets: the durability level and, for read-only opens, no writes. */
static wf_status session_setup(wfm_store *s, wf_error *err)
{
    pg_conn *c = s->impl;
    memset(c->prepared, 0, sizeof c->prepared);
    wf_status rc = pg_exec(s, "SET client_min_messages = warning", err);
    if (rc == WF_OK)
        rc = pg_exec(s, c->durability == WFM_DURABILITY_FULL ? "SET synchronous_commit = on"
                                                             : "SET synchronous_commit = off",
                     err);
    if (rc == WF_OK && c->read_only)
        rc = pg_exec(s, "SET default_transaction_read_only = on", err);
    return rc;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Reconnect after a dropped connection: PQreset with a doubling pause (10 ms .. 1 s) for at
 * most RECONNECT_MS, then set the session up again (prepared statements are re-made on use). */
static wf_status reconnect(wfm_store *s, wf_error *err)
{
    int64_t pause = 10, waited = 0;
    for (;;) {
        PQreset(conn_of(s));
        ((pg_conn *)s->impl)->broken = false;
        if (!lost(s))
            return session_setup(s, err);
        if (waited >= RECONNECT_MS)
            return pg_fail(s, WF_E_STORE, err, "store connection lost",
                           PQerrorMessage(conn_of(s)));
        sleep_ms(pause);
        waited += pause;
        pause = pause * 2 > 1000 ? 1000 : pause * 2;
    }
}

/* Up to 13 parameters, as text (or binary where len >= 0). */
typedef struct pg_params {
    int n;
    const char *values[13];
    int lens[13];
    int formats[13];
    char ints[13][24];
} pg_params;

static void p_text(pg_params *p, const char *v)
{
    p->values[p->n] = v;
    p->lens[p->n] = 0;
    p->formats[p->n++] = 0;
}

static void p_int(pg_params *p, int64_t v)
{
    snprintf(p->ints[p->n], sizeof p->ints[p->n], "%lld", (long long)v);
    p_text(p, p->ints[p->n]);
}

static void p_blob(pg_params *p, const void *data, size_t len)
{
    p->values[p->n] = data;
    p->lens[p->n] = (int)len;
    p->formats[p->n++] = data ? 1 : 0;
}

static const char *const stmt_names[PS_COUNT] = {
    "save",    "token_of", "take_lease", "take_from", "owner_of",     "release", "renew",
    "create",  "put_def",  "load",       "query",     "props",        "enqueue", "seq_of_token",
    "pending", "claim",    "save_state", "put_tracking", "insert", "suspend", "insert_new"};

/* Prepare statement `id` in this session unless it is already. */
static wf_status ensure_prepared(wfm_store *s, enum pg_stmt id, wf_error *err)
{
    pg_conn *c = s->impl;
    if (c->prepared[id])
        return WF_OK;
    PGresult *r = PQprepare(c->conn, stmt_names[id], pg_sql[id], 0, NULL);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    wf_status rc = ok ? WF_OK
                      : pg_fail(s, WF_E_STORE, err, "store",
                                result_error(s, r));
    PQclear(r);
    c->prepared[id] = ok;
    return rc;
}

/* Execute prepared statement `id` once. *res: the result (PQclear it) when it succeeded. */
static wf_status run_once(wfm_store *s, enum pg_stmt id, const pg_params *p, PGresult **res,
                          wf_error *err)
{
    pg_conn *c = s->impl;
    *res = NULL;
    wf_status prc = ensure_prepared(s, id, err);
    if (prc != WF_OK)
        return prc;
    PGresult *r = PQexecPrepared(c->conn, stmt_names[id], p->n, p->values, p->lens, p->formats, 0);
    ExecStatusType t = PQresultStatus(r);
    if (t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK) {
        *res = r;
        return WF_OK;
    }
    wf_status rc = pg_fail(s, WF_E_STORE, err, "store",
                           result_error(s, r));
    PQclear(r);
    return rc;
}

/* run_once outside a transaction: a dropped connection is reconnected and the statement run
 * again (every statement run this way may run twice: each is idempotent or token-guarded). */
static wf_status run(wfm_store *s, enum pg_stmt id, const pg_params *p, PGresult **res,
                     wf_error *err)
{
    wf_error first = WF_ERROR_INIT;
    wf_status rc = run_once(s, id, p, res, &first);
    while (rc != WF_OK && lost(s)) {
        wf_error_clear(&first);
        if ((rc = reconnect(s, err)) != WF_OK)
            return rc;
        rc = run_once(s, id, p, res, &first);
    }
    if (rc != WF_OK && err && err->code == WF_OK)
        *err = first;
    else
        wf_error_clear(&first);
    return rc;
}

/* Run a statement that returns no rows; *changes (optional): rows it changed. */
static wf_status run_cmd(wfm_store *s, enum pg_stmt id, const pg_params *p, int *changes,
                         wf_error *err)
{
    PGresult *r = NULL;
    wf_status rc = run(s, id, p, &r, err);
    if (rc == WF_OK && changes)
        *changes = atoi(PQcmdTuples(r));
    PQclear(r);
    return rc;
}

static int64_t col_int(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static const char *col_text(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

/* ---- opening: check, then create or migrate, in one transaction --------------------------- */

/* Check the schema (current_schema()): *version 0 when it holds no tables at all, else ours
 * with every table of its version. */
static wf_status check_schema(wfm_store *s, int *version, wf_error *err)
{
    *version = 0;
    PGresult *r = PQexec(conn_of(s), "SELECT tablename FROM pg_tables"
                                     " WHERE schemaname = current_schema()");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        wf_status rc = pg_fail(s, WF_E_STORE, err, "store", result_error(s, r));
        PQclear(r);
        return rc;
    }
    unsigned present = 0;
    int others = 0;
    for (int i = 0; i < PQntuples(r); i++) {
        size_t t = 0;
        while (t < TABLE_COUNT && strcmp(tables[t], PQgetvalue(r, i, 0)) != 0)
            t++;
        if (t < TABLE_COUNT)
            present |= 1u << t;
        else
            others++;
    }
    PQclear(r);
    if (!present && !others)
        return WF_OK;
    if (!(present & 1u))
        return wfm__store_fail(s, WF_E_STORE, err,
                               "not a wfbridge instance store (it holds %d other tables)", others);
    r = PQexec(conn_of(s), "SELECT (SELECT value FROM wfbridge_meta WHERE key = 'application'),"
                           " (SELECT value FROM wfbridge_meta WHERE key = 'schema_version')");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        wf_status rc = pg_fail(s, WF_E_STORE, err, "store", result_error(s, r));
        PQclear(r);
        return rc;
    }
    const char *app = col_text(r, 0, 0);
    wf_status rc = WF_OK;
    if (!app)
        rc = wfm__store_fail(s, WF_E_STORE, err,
                             "not a wfbridge instance store (wfbridge_meta has no application "
                             "key)");
    else if (strcmp(app, "wfbridge-instance-store") != 0)
        rc = wfm__store_fail(s, WF_E_STORE, err,
                             "not a wfbridge instance store (its application is '%.64s')", app);
    else if ((*version = (int)col_int(r, 0, 1)) <= 0)
        rc = wfm__store_fail(s, WF_E_CORRUPT, err, "store has no valid schema version");
    else if (*version > WFM_STORE_SCHEMA_VERSION)
        rc = wfm__store_fail(s, WF_E_STORE, err,
                             "store schema version %d is newer than this wfbridge supports (%d)",
                             *version, WFM_STORE_SCHEMA_VERSION);
    PQclear(r);
    for (size_t t = 0; rc == WF_OK && t < TABLE_COUNT; t++)
        if (table_since[t] <= *version && !(present & (1u << t)))
            rc = wfm__store_fail(s, WF_E_STORE, err,
                                 "store is missing its '%s' table (schema version %d)", tables[t],
                                 *version);
    return rc;
}

/* Check, then (writing opens) create or migrate, all in one transaction that holds an
 * advisory lock, so many hosts opening one new store create the schema once; a refusal
 * rolls back, leaving the database untouched. */
static wf_status check_and_upgrade(wfm_store *s, const wfm_store_opts *o, wf_error *err)
{
    int version = 0;
    wf_status rc = pg_exec(s, "BEGIN", err);
    if (rc != WF_OK)
        return rc;
    if (!o->read_only)
        rc = pg_exec(s, "SELECT pg_advisory_xact_lock(hashtext('wfbridge-instance-store'))", err);
    if (rc == WF_OK)
        rc = check_schema(s, &version, err);
    if (rc == WF_OK && version == 0 && (o->read_only || o->must_exist))
        rc = wfm__store_fail(s, WF_E_STORE, err,
                             "not a wfbridge instance store (it has no tables)");
    if (rc == WF_OK && version < WFM_STORE_SCHEMA_VERSION && o->read_only)
        rc = wfm__store_fail(s, WF_E_STORE, err,
                             "store schema version %d must be migrated to %d: open it once for "
                             "writing",
                             version, WFM_STORE_SCHEMA_VERSION);
    for (int v = version; rc == WF_OK && v < WFM_STORE_SCHEMA_VERSION; v++)
        rc = pg_exec(s, migrations[v], err);
    if (rc == WF_OK && version < WFM_STORE_SCHEMA_VERSION) {
        char sql[128];
        snprintf(sql, sizeof sql,
                 "UPDATE wfbridge_meta SET value = '%d' WHERE key = 'schema_version'",
                 WFM_STORE_SCHEMA_VERSION);
        rc = pg_exec(s, sql, err);
    }
    if (rc == WF_OK)
        return pg_exec(s, "COMMIT", err);
    wf_error ignored = WF_ERROR_INIT;
    pg_exec(s, "ROLLBACK", &ignored);
    return rc;
}

/* Server notices and errors that arrive while idle (a terminated session) are not printed:
 * libraries never print; the next statement reports the state of the connection. */
static void ignore_notice(void *ud, const char *message)
{
    (void)ud;
    (void)message;
}

static wf_status pg_open(wfm_store *s, const char *conninfo, const wfm_store_opts *opts,
                         wf_error *err)
{
    pg_conn *c = wf_calloc(1, sizeof *c);
    if (!(s->impl = c))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening the store");
    c->read_only = opts->read_only;
    c->durability = opts->durability;
    c->conn = PQconnectdb(conninfo);
    c->conninfo = wf_strdup(conninfo);
    if (!c->conn || !c->conninfo)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening the store");
    if (PQstatus(c->conn) != CONNECTION_OK)
        return pg_fail(s, WF_E_STORE, err, "cannot connect to the store",
                       PQerrorMessage(c->conn));
    PQsetNoticeProcessor(c->conn, ignore_notice, NULL);
    /* A connection dropped while checking (a server restarting) is opened again. */
    for (;;) {
        wf_error attempt = WF_ERROR_INIT;
        wf_status rc = session_setup(s, &attempt);
        if (rc == WF_OK)
            rc = check_and_upgrade(s, opts, &attempt);
        if (rc == WF_OK || !lost(s)) {
            if (rc != WF_OK)
                *err = attempt;
            return rc;
        }
        if ((rc = reconnect(s, err)) != WF_OK)
            return rc;
    }
}

static void pg_close(wfm_store *s)
{
    pg_conn *c = s->impl;
    if (!c)
        return;
    PQfinish(c->conn);
    PQfinish(c->listen);
    wf_free(c->conninfo);
    wf_free(c);
    s->impl = NULL;
}

/* ---- definitions, instances and leases ----------------------------------------------------- */

static wf_status pg_put_definition(wfm_store *s, const char *hash, const char *path, int64_t now,
                                   wf_error *err)
{
    pg_params p = {0};
    p_text(&p, hash);
    p_text(&p, path);
    p_int(&p, now);
    return run_cmd(s, PS_PUT_DEFINITION, &p, NULL, err);
}

static wf_status pg_create(wfm_store *s, const char *id, const char *hash, int64_t now,
                           wf_error *err)
{
    pg_params p = {0};
    p_text(&p, id);
    p_text(&p, hash);
    p_int(&p, now);
    p_text(&p, s->owner);
    p_int(&p, now + s->lease_ms);
    return run_cmd(s, PS_CREATE, &p, NULL, err);
}

static wf_status pg_take_lease(wfm_store *s, const char *id, const char *from, int64_t now,
                               bool *changed, wf_error *err)
{
    pg_params p = {0};
    p_text(&p, s->owner);
    p_int(&p, now + s->lease_ms);
    p_text(&p, id);
    if (from)
        p_text(&p, from);
    else
        p_int(&p, now);
    int changes = 0;
    wfm__names_forget(s, id); /* a new lease: another host may have saved since */
    wf_status rc = run_cmd(s, from ? PS_TAKE_FROM : PS_TAKE_LEASE, &p, &changes, err);
    *changed = changes > 0;
    return rc;
}

static wf_status pg_owner_of(wfm_store *s, const char *id, char **owner, bool *exists,
                             wf_error *err)
{
    *owner = NULL;
    *exists = false;
    pg_params p = {0};
    p_text(&p, id);
    PGresult *r = NULL;
    wf_status rc = run(s, PS_OWNER_OF, &p, &r, err);
    if (rc == WF_OK && PQntuples(r) > 0) {
        *exists = true;
        const char *text = col_text(r, 0, 0);
        if (text && !(*owner = wf_strdup(text)))
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory locking an instance");
    }
    PQclear(r);
    return rc;
}

static wf_status pg_release(wfm_store *s, const char *id, wf_error *err)
{
    pg_params p = {0};
    p_text(&p, id);
    p_text(&p, s->owner);
    wfm__names_forget(s, id);
    return run_cmd(s, PS_RELEASE, &p, NULL, err);
}

/* Every lease of this owner in one statement (the batched renewal). */
static wf_status pg_renew(wfm_store *s, int64_t now, wf_error *err)
{
    pg_params p = {0};
    p_int(&p, now + s->lease_ms);
    p_text(&p, s->owner);
    p_int(&p, now);
    return run_cmd(s, PS_RENEW, &p, NULL, err);
}

/* ---- saving ------------------------------------------------------------------------------ */

/* A text[] literal: {"a","b\"c"}; NULL elements as NULL. */
static void array_literal(wf_buf *b, const char *const *items, size_t count)
{
    wf_buf_addf(b, "{");
    for (size_t i = 0; i < count; i++) {
        if (i)
            wf_buf_addf(b, ",");
        if (!items[i]) {
            wf_buf_addf(b, "NULL");
            continue;
        }
        wf_buf_addf(b, "\"");
        for (const char *q = items[i]; *q; q++)
            wf_buf_addf(b, *q == '"' || *q == '\\' ? "\\%c" : "%c", *q);
        wf_buf_addf(b, "\"");
    }
    wf_buf_addf(b, "}");
}

/* The parameters both save statements start with ($1 to $6). */
static void save_params(pg_params *q, wfm_store *s, const wfm_store_save_rec *r, int64_t now)
{
    p_text(q, r->id);
    p_text(q, s->owner);
    p_int(q, now);
    p_text(q, r->status);
    p_blob(q, r->state, r->state_len);
    p_int(q, r->next_timer_us);
}

/* Queue the row-only save (PS_SAVE_STATE) of a save whose names are unchanged since this
 * connection's last save of the instance, the row then at `version`. */
static bool send_state_save(wfm_store *s, const wfm_store_save_rec *r, int64_t version,
                            int64_t token, int64_t now)
{
    pg_params q = {0};
    save_params(&q, s, r, now);
    p_int(&q, now + s->lease_ms);
    p_int(&q, version);
    p_int(&q, token);
    return PQsendQueryPrepared(conn_of(s), stmt_names[PS_SAVE_STATE], q.n, q.values, q.lens,
                               q.formats, 0);
}

/* Queue one save on the pipeline (libpq copies the parameters at once): the row only when
 * the names cache says its bookmarks and promoted properties are unchanged (p->wrote_names
 * false), else everything. */
static bool send_save(wfm_store *s, wfm__pending_save *p, int64_t token, int64_t now)
{
    const wfm_store_save_rec *r = p->rec;
    const wfm__names_entry *last =
        r->release || r->resumes_through > 0 ? NULL : wfm__names_get(s, r->id);
    p->wrote_names = !last || !wfm__names_unchanged(s, r, last->version);
    if (!p->wrote_names)
        return send_state_save(s, r, last->version, token, now);
    wf_buf bm, names, values;
    wf_buf_init(&bm);
    wf_buf_init(&names);
    wf_buf_init(&values);
    array_literal(&bm, r->bookmarks, r->bookmark_count);
    array_literal(&names, r->prop_names, r->prop_count);
    array_literal(&values, r->prop_values, r->prop_count);
    pg_params q = {0};
    save_params(&q, s, r, now);
    p_text(&q, r->release ? "t" : "f");
    p_int(&q, now + s->lease_ms);
    p_text(&q, bm.data);
    p_text(&q, names.data);
    p_text(&q, values.data);
    p_int(&q, r->resumes_through);
    p_int(&q, token);
    bool ok = !bm.oom && !names.oom && !values.oom &&
              PQsendQueryPrepared(conn_of(s), stmt_names[PS_SAVE], q.n, q.values, q.lens,
                                  q.formats, 0);
    wf_buf_fini(&bm);
    wf_buf_fini(&names);
    wf_buf_fini(&values);
    return ok;
}

/* The result of the next pipelined query (then the NULL that ends it): *status its type,
 * PGRES_FATAL_ERROR with err set when it failed; *count the first column of a row result,
 * *version (optional) its third (a save's new row version). */
static void next_result(wfm_store *s, ExecStatusType *status, int64_t *count, int64_t *version,
                        wf_error *err)
{
    PGresult *r = PQgetResult(conn_of(s));
    *status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (*status == PGRES_TUPLES_OK && count)
        *count = PQntuples(r) > 0 ? col_int(r, 0, 0) : 0;
    if (*status == PGRES_TUPLES_OK && version && PQntuples(r) > 0 && PQnfields(r) > 2 &&
        !PQgetisnull(r, 0, 2))
        *version = col_int(r, 0, 2);
    if (*status == PGRES_FATAL_ERROR || *status == PGRES_PIPELINE_ABORTED)
        pg_fail(s, WF_E_STORE, err, "store",
                r && *status == PGRES_PIPELINE_ABORTED ? "an earlier statement of the batch failed"
                                                       : result_error(s, r));
    PQclear(r);
    if (r && *status != PGRES_PIPELINE_SYNC)
        PQclear(PQgetResult(conn_of(s))); /* the NULL after each query's results */
}

/* One attempt at the batch as one pipelined round trip: BEGIN, one statement per save,
 * COMMIT. A save without a live lease of ours changes nothing (count 0: WF_E_LOCKED until
 * classified). *dropped: the connection was lost, so what committed is unknown.
 * *retry_alone: a save's statement failed (PostgreSQL then aborts the transaction), so the
 * batch should run again one transaction per save. */
static wf_status try_batch(wfm_store *s, wfm__pending_save *batch, const int64_t *tokens,
                           int64_t now, bool *dropped, bool *retry_alone, wf_error *err)
{
    PGconn *conn = conn_of(s);
    *dropped = *retry_alone = false;
    wf_status rc = ensure_prepared(s, PS_SAVE, err);
    if (rc == WF_OK)
        rc = ensure_prepared(s, PS_SAVE_STATE, err);
    if (rc != WF_OK) {
        *dropped = lost(s);
        return rc;
    }
    bool sent = PQenterPipelineMode(conn) &&
                PQsendQueryParams(conn, "BEGIN", 0, NULL, NULL, NULL, NULL, 0);
    size_t i = 0;
    for (wfm__pending_save *p = batch; sent && p; p = p->next, i++)
        sent = send_save(s, p, tokens[i], now);
    sent = sent && PQsendQueryParams(conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 0) &&
           PQpipelineSync(conn);
    if (!sent) {
        rc = lost(s) ? pg_fail(s, WF_E_STORE, err, "store", PQerrorMessage(conn))
                     : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving");
    } else {
        ExecStatusType t;
        wf_error ignored = WF_ERROR_INIT;
        next_result(s, &t, NULL, NULL, err); /* BEGIN */
        if (t != PGRES_COMMAND_OK)
            rc = WF_E_STORE;
        for (wfm__pending_save *p = batch; p; p = p->next) {
            int64_t count = 0;
            wf_error_clear(&p->err);
            p->version = 0;
            next_result(s, &t, &count, &p->version, &p->err);
            p->status = t != PGRES_TUPLES_OK ? WF_E_STORE : count ? WF_OK : WF_E_LOCKED;
            if (t != PGRES_TUPLES_OK && rc == WF_OK) {
                rc = WF_E_STORE;
                *retry_alone = batch->next != NULL && t == PGRES_FATAL_ERROR;
                if (err && err->code == WF_OK)
                    *err = p->err;
            }
        }
        next_result(s, &t, NULL, NULL, rc == WF_OK ? err : &ignored); /* COMMIT */
        if (t != PGRES_COMMAND_OK && rc == WF_OK)
            rc = WF_E_STORE;
        next_result(s, &t, NULL, NULL, &ignored); /* the sync */
    }
    if (lost(s) || !PQexitPipelineMode(conn)) { /* unknown outcome: read back after reconnect */
        ((pg_conn *)s->impl)->broken = true;
        *dropped = true;
        *retry_alone = false;
        return rc == WF_OK ? WF_E_STORE : rc;
    }
    if (rc != WF_OK && PQtransactionStatus(conn) != PQTRANS_IDLE) {
        wf_error ignored = WF_ERROR_INIT;
        pg_exec(s, "ROLLBACK", &ignored);
    }
    return rc;
}

/* Saves that changed nothing: WF_E_NOTFOUND or WF_E_LOCKED (read after the commit). */
static void classify_lock_failures(wfm_store *s, wfm__pending_save *batch)
{
    for (wfm__pending_save *p = batch; p; p = p->next) {
        if (p->status != WF_E_LOCKED || p->err.code != WF_OK)
            continue;
        char *owner = NULL;
        bool exists = true;
        if ((p->status = pg_owner_of(s, p->rec->id, &owner, &exists, &p->err)) == WF_OK)
            p->status = wfm__store_lock_failure(s, p->rec->id, exists, &p->err);
        wf_free(owner);
    }
}

/* Did the save with `token` commit? (Read back after a connection was lost mid-batch.) */
static wf_status committed(wfm_store *s, const char *id, int64_t token, bool *yes, wf_error *err)
{
    pg_params p = {0};
    p_text(&p, id);
    PGresult *r = NULL;
    wf_status rc = run(s, PS_TOKEN_OF, &p, &r, err);
    *yes = rc == WF_OK && PQntuples(r) > 0 && col_int(r, 0, 0) == token;
    PQclear(r);
    return rc;
}

/* After a dropped connection: reconnect and read back whether the batch committed (a
 * transaction commits all or nothing: any save of it found means all of it). */
static wf_status resolve(wfm_store *s, wfm__pending_save *batch, const int64_t *tokens,
                         bool *done, wf_error *err)
{
    *done = false;
    wf_status rc = reconnect(s, err);
    size_t i = 0;
    for (wfm__pending_save *p = batch; rc == WF_OK && p && !*done; p = p->next, i++)
        if (p->status == WF_OK)
            rc = committed(s, p->rec->id, tokens[i], done, err);
    return rc;
}

/* Each save of the batch in its own transaction (after one save's statement failed). */
static void write_alone(wfm_store *s, wfm__pending_save *batch, const int64_t *tokens,
                        int64_t now, uint64_t *commits)
{
    size_t i = 0;
    for (wfm__pending_save *p = batch; p; p = p->next, i++) {
        wfm__pending_save *next = p->next;
        bool dropped = false, alone = false;
        wf_error e = WF_ERROR_INIT;
        p->next = NULL;
        if (try_batch(s, p, &tokens[i], now, &dropped, &alone, &e) == WF_OK)
            *commits += 1;
        else if (p->status == WF_OK) {
            p->status = e.code;
            p->err = e;
        }
        p->next = next;
    }
}

/* A row-only save that changed nothing found the row at another version than the names
 * cache said (or the lease gone): forget the cache and save it in full, alone, so that only
 * a lost lease reports WF_E_LOCKED. */
static void retry_state_saves(wfm_store *s, wfm__pending_save *batch, const int64_t *tokens,
                              int64_t now, uint64_t *commits)
{
    size_t i = 0;
    for (wfm__pending_save *p = batch; p; p = p->next, i++) {
        if (p->status != WF_E_LOCKED || p->wrote_names)
            continue;
        wfm__names_forget(s, p->rec->id);
        wfm__pending_save *next = p->next;
        p->next = NULL;
        write_alone(s, p, &tokens[i], now, commits);
        p->next = next;
    }
}

static wf_status pg_write_batch(wfm_store *s, wfm__pending_save *batch, int64_t now,
                                uint64_t *commits, wf_error *err)
{
    size_t n = 0;
    for (wfm__pending_save *p = batch; p; p = p->next)
        n++;
    int64_t *tokens = wf_calloc(n, sizeof *tokens);
    if (!tokens)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving");
    for (size_t i = 0; i < n; i++) {
        wf_random_bytes(&tokens[i], sizeof tokens[i]);
        tokens[i] = (int64_t)((uint64_t)tokens[i] >> 1) | 1; /* positive, never 0 */
    }
    wf_status rc;
    for (;;) {
        bool dropped = false, alone = false, done = false;
        wf_error attempt = WF_ERROR_INIT;
        rc = try_batch(s, batch, tokens, now, &dropped, &alone, &attempt);
        if (rc == WF_OK || alone) {
            if (alone)
                write_alone(s, batch, tokens, now, commits);
            else
                *commits += 1;
            rc = WF_OK;
            break;
        }
        if (!dropped) {
            *err = attempt;
            break;
        }
        if ((rc = resolve(s, batch, tokens, &done, err)) != WF_OK || done) {
            *commits += done;
            break;
        }
        /* not committed: run the batch again */
    }
    if (rc == WF_OK)
        retry_state_saves(s, batch, tokens, now, commits);
    if (rc == WF_OK)
        classify_lock_failures(s, batch);
    for (wfm__pending_save *p = batch; p; p = p->next) {
        if (rc == WF_OK && p->status == WF_OK && !p->rec->release && p->version > 0)
            wfm__names_remember(s, p->rec, p->version);
        else
            wfm__names_forget(s, p->rec->id);
    }
    wf_free(tokens);
    return rc;
}

/* The parameters of PG_INSERT_ROW for r (its arrays written into a[3], which q points into):
 * false when out of memory. */
typedef struct insert_arrays {
    wf_buf bm, names, values;
} insert_arrays;

static bool insert_params(wfm_store *s, const char *hash, const wfm_store_save_rec *r,
                          int64_t now, int64_t token, insert_arrays *a, pg_params *q)
{
    wf_buf_init(&a->bm);
    wf_buf_init(&a->names);
    wf_buf_init(&a->values);
    array_literal(&a->bm, r->bookmarks, r->bookmark_count);
    array_literal(&a->names, r->prop_names, r->prop_count);
    array_literal(&a->values, r->prop_values, r->prop_count);
    *q = (pg_params){0};
    p_text(q, r->id);
    p_text(q, hash);
    p_text(q, r->status);
    p_blob(q, r->state, r->state_len);
    p_int(q, now);
    p_text(q, r->release ? NULL : s->owner);
    p_int(q, r->release ? 0 : now + s->lease_ms);
    p_int(q, r->next_timer_us);
    p_int(q, token);
    p_text(q, a->bm.data);
    p_text(q, a->names.data);
    p_text(q, a->values.data);
    return !a->bm.oom && !a->names.oom && !a->values.oom;
}

static void insert_arrays_fini(insert_arrays *a)
{
    wf_buf_fini(&a->bm);
    wf_buf_fini(&a->names);
    wf_buf_fini(&a->values);
}

static int64_t new_token(void)
{
    int64_t token = 0;
    wf_random_bytes(&token, sizeof token);
    return (int64_t)((uint64_t)token >> 1) | 1;
}

/* wfm_store_insert: one statement (so one transaction). Run again after a dropped
 * connection, it finds the row there: its token says whether that is this insert. */
static wf_status pg_insert(wfm_store *s, const char *hash, const wfm_store_save_rec *r,
                           int64_t now, wf_error *err)
{
    int64_t token = new_token();
    insert_arrays a;
    pg_params q;
    PGresult *res = NULL;
    wf_status rc = !insert_params(s, hash, r, now, token, &a, &q)
                       ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving")
                       : run(s, PS_INSERT, &q, &res, err);
    bool inserted = rc == WF_OK && PQntuples(res) > 0 && col_int(res, 0, 0) > 0;
    PQclear(res);
    if (rc == WF_OK && !inserted && (rc = committed(s, r->id, token, &inserted, err)) == WF_OK &&
        !inserted)
        rc = wfm__store_fail(s, WF_E_STORE, err, "instance '%s' already exists", r->id);
    wfm__names_forget(s, r->id);
    insert_arrays_fini(&a);
    return rc;
}

/* Send the batch's inserts (q[count], built beforehand) in one pipeline ending in a sync: the
 * statements up to the sync are one implicit transaction, so one round trip writes all of them
 * or, on any error, none. False when the connection failed. */
static bool send_inserts(wfm_store *s, const pg_params *q, size_t count)
{
    PGconn *conn = conn_of(s);
    bool ok = PQenterPipelineMode(conn) == 1;
    for (size_t i = 0; ok && i < count; i++)
        ok = PQsendQueryPrepared(conn, stmt_names[PS_INSERT_NEW], q[i].n, q[i].values,
                                 q[i].lens, q[i].formats, 0) == 1;
    return ok && PQpipelineSync(conn) == 1;
}

/* Read the pipeline's results up to its sync: WF_OK when every insert wrote its row; else
 * the first failure (an existing row named by its id). */
static wf_status read_inserts(wfm_store *s, const wfm_store_save_rec *recs, size_t count,
                              wf_error *err)
{
    PGconn *conn = conn_of(s);
    wf_status rc = WF_OK;
    for (size_t i = 0; i <= count; i++) {
        PGresult *r = PQgetResult(conn);
        if (!r) { /* the connection failed */
            rc = rc != WF_OK ? rc : pg_fail(s, WF_E_STORE, err, "store", result_error(s, NULL));
            break;
        }
        ExecStatusType t = PQresultStatus(r);
        const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        if (t == PGRES_FATAL_ERROR && rc == WF_OK)
            rc = state && strcmp(state, "23505") == 0
                     ? wfm__store_fail(s, WF_E_STORE, err, "instance '%s' already exists",
                                       recs[i].id)
                     : pg_fail(s, WF_E_STORE, err, "store", result_error(s, r));
        PQclear(r);
        if (t == PGRES_PIPELINE_SYNC)
            break;
        if (i < count && (r = PQgetResult(conn)) != NULL) /* the end of statement i */
            PQclear(r);
    }
    return rc;
}

/* wfm_store_insert_many: the rows with their first saves in one transaction and one round
 * trip (PS_INSERT_NEW pipelined). A dropped connection is reconnected and the batch read back
 * by its token (one transaction: its first row there means all of it), then sent again when
 * it did not commit. */
static wf_status pg_insert_many(wfm_store *s, const char *hash, const wfm_store_save_rec *recs,
                                size_t count, int64_t now, wf_error *err)
{
    int64_t token = new_token();
    insert_arrays *a = wf_calloc(count, sizeof *a);
    pg_params *q = wf_calloc(count, sizeof *q);
    bool built = a && q;
    for (size_t i = 0; built && i < count; i++)
        built = insert_params(s, hash, &recs[i], now, token, &a[i], &q[i]);
    wf_status rc = built ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving");
    for (int attempt = 0; built && attempt < 2; attempt++) {
        rc = ensure_prepared(s, PS_INSERT_NEW, err);
        if (rc == WF_OK)
            rc = send_inserts(s, q, count)
                     ? read_inserts(s, recs, count, err)
                     : pg_fail(s, WF_E_STORE, err, "store", result_error(s, NULL));
        PQexitPipelineMode(conn_of(s));
        bool done = false;
        if (rc == WF_OK || !lost(s) || reconnect(s, err) != WF_OK ||
            committed(s, recs[0].id, token, &done, err) != WF_OK || done) {
            rc = done ? WF_OK : rc;
            break;
        }
    }
    for (size_t i = 0; a && i < count; i++) {
        insert_arrays_fini(&a[i]);
        wfm__names_forget(s, recs[i].id);
    }
    wf_free(a);
    wf_free(q);
    return rc;
}

static wf_status pg_suspend(wfm_store *s, const char *id, const char *reason, int64_t now,
                            wf_error *err)
{
    pg_params p = {0};
    p_text(&p, reason);
    p_int(&p, now);
    p_text(&p, id);
    p_text(&p, s->owner);
    int changes = 0;
    wfm__names_forget(s, id);
    wf_status rc = run_cmd(s, PS_SUSPEND, &p, &changes, err);
    if (rc != WF_OK || changes > 0)
        return rc;
    char *owner = NULL;
    bool exists = false;
    rc = pg_owner_of(s, id, &owner, &exists, err);
    wf_free(owner);
    return rc == WF_OK ? wfm__store_lock_failure(s, id, exists, err) : rc;
}

/* ---- reading ----------------------------------------------------------------------------- */

static wf_status pg_load_state(wfm_store *s, const char *id, void **state, size_t *state_len,
                               char status[32], uint64_t *definition_hash, wf_error *err)
{
    pg_params p = {0};
    p_text(&p, id);
    PGresult *r = NULL;
    wf_status rc = run(s, PS_LOAD, &p, &r, err);
    if (rc == WF_OK && PQntuples(r) == 0)
        rc = wfm__store_fail(s, WF_E_NOTFOUND, err, "no instance '%s' in the store", id);
    if (rc == WF_OK) {
        size_t len = 0;
        unsigned char *blob =
            PQgetisnull(r, 0, 0)
                ? NULL
                : PQunescapeBytea((const unsigned char *)PQgetvalue(r, 0, 0), &len);
        if (blob && len > 0) {
            if ((*state = wf_malloc(len))) {
                memcpy(*state, blob, len);
                *state_len = len;
            } else {
                rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory reading state");
            }
        }
        PQfreemem(blob);
        snprintf(status, 32, "%s", PQgetvalue(r, 0, 1));
        if (definition_hash)
            *definition_hash = strtoull(PQgetvalue(r, 0, 2), NULL, 16);
    }
    PQclear(r);
    return rc;
}

static wf_status pg_query_rows(wfm_store *s, const wfm_store_query *q, wfm_store_row_fn fn,
                               void *ud, wf_error *err)
{
    pg_params p = {0};
    p_text(&p, q->status);
    p_text(&p, q->prop_name);
    p_text(&p, q->prop_value);
    p_int(&p, q->due_before_us);
    p_text(&p, q->bookmark);
    PGresult *r = NULL;
    wf_status rc = run(s, PS_QUERY, &p, &r, err);
    for (int i = 0; rc == WF_OK && i < PQntuples(r); i++) {
        const char *bm = col_text(r, i, 9);
        wfm_store_row row = {col_text(r, i, 0),    col_text(r, i, 1),
                             strtoull(PQgetvalue(r, i, 2), NULL, 16),
                             col_text(r, i, 3),    col_int(r, i, 4),
                             col_int(r, i, 5),     col_text(r, i, 6),
                             col_int(r, i, 7),     col_int(r, i, 8),
                             bm ? bm : "",         col_int(r, i, 10),
                             col_text(r, i, 11),   col_int(r, i, 12),
                             col_text(r, i, 13),   strcmp(PQgetvalue(r, i, 14), "t") == 0};
        if (!fn(ud, &row))
            break;
    }
    PQclear(r);
    return rc;
}

static wf_status pg_props(wfm_store *s, const char *id, wf_buf *out, wf_error *err)
{
    pg_params p = {0};
    p_text(&p, id);
    PGresult *r = NULL;
    wf_status rc = run(s, PS_PROPS, &p, &r, err);
    for (int i = 0; rc == WF_OK && i < PQntuples(r); i++) {
        const char *v = col_text(r, i, 1);
        wf_buf_addf(out, "%s=%s\n", PQgetvalue(r, i, 0), v ? v : "");
    }
    PQclear(r);
    return rc;
}

/* ---- pending resumptions ----------------------------------------------------------------- */

/* One statement, guarded by a token so a retry after a dropped connection cannot queue it
 * twice; two processes racing for the same seq retry on the unique violation. */
static wf_status pg_enqueue_resume(wfm_store *s, const char *id, const char *bookmark,
                                   const char *payload_json, int64_t now, int64_t *seq,
                                   wf_error *err)
{
    int64_t token = 0;
    wf_random_bytes(&token, sizeof token);
    token = (int64_t)((uint64_t)token >> 1) | 1;
    pg_params p = {0};
    p_text(&p, id);
    p_text(&p, bookmark);
    p_text(&p, payload_json);
    p_int(&p, now);
    p_int(&p, token);
    PGresult *r = NULL;
    wf_status rc = WF_E_STORE;
    for (int attempt = 0; attempt < 20 && rc != WF_OK; attempt++) {
        wf_error e = WF_ERROR_INIT;
        rc = run(s, PS_ENQUEUE, &p, &r, &e);
        if (rc != WF_OK && (attempt == 19 || !strstr(e.message, "duplicate key"))) {
            *err = e;
            return rc;
        }
        wf_error_clear(&e);
    }
    if (PQntuples(r) > 0) {
        *seq = col_int(r, 0, 0);
        PQclear(r);
        return WF_OK;
    }
    PQclear(r);
    pg_params t = {0};
    p_text(&t, id);
    p_int(&t, token);
    if ((rc = run(s, PS_SEQ_OF_TOKEN, &t, &r, err)) != WF_OK)
        return rc;
    if (PQntuples(r) > 0) /* queued by an attempt whose reply was lost */
        *seq = col_int(r, 0, 0);
    else
        rc = wfm__store_fail(s, WF_E_NOTFOUND, err, "no instance '%s' in the store", id);
    PQclear(r);
    return rc;
}

static wf_status pg_pending_resumes(wfm_store *s, const char *id, wfm_store_resume_fn fn,
                                    void *ud, wf_error *err)
{
    pg_params p = {0};
    p_text(&p, id);
    PGresult *r = NULL;
    wf_status rc = run(s, PS_PENDING, &p, &r, err);
    for (int i = 0; rc == WF_OK && i < PQntuples(r); i++) {
        wfm_store_resume q = {col_int(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2),
                              col_int(r, i, 3)};
        if (!fn(ud, &q))
            break;
    }
    PQclear(r);
    return rc;
}

/* ---- claiming work ----------------------------------------------------------------------- */

/* One statement (PS_CLAIM), its own transaction. A dropped connection runs it again after
 * reconnecting (run()): if the lost attempt committed, its leases are ours and unexpired;
 * no claim returns them (own leases are not claimed), nothing is leased to anyone else, and a
 * host finds them by listing the store (wfm_store_row_lockable: its own lease is lockable). */
/* A bigint[] literal: {1,2,3}. */
static void int_array(wf_buf *b, const wfm_store_track_rec *recs, size_t count, bool time)
{
    wf_buf_addc(b, '{');
    for (size_t i = 0; i < count; i++)
        wf_buf_addf(b, "%s%lld", i ? "," : "", (long long)(time ? recs[i].time_us : recs[i].seq));
    wf_buf_addc(b, '}');
}

/* One statement (its own transaction): all the records or none. Run again after a dropped
 * connection, which is harmless: a record written twice replaces itself. */
static wf_status pg_put_tracking(wfm_store *s, const wfm_store_track_rec *recs, size_t count,
                                 wf_error *err)
{
    const char **inst = wf_calloc(count, sizeof *inst), **kind = wf_calloc(count, sizeof *kind);
    char **text = wf_calloc(count, sizeof *text);
    wf_buf a[5];
    for (int k = 0; k < 5; k++)
        wf_buf_init(&a[k]);
    bool oom = !inst || !kind || !text;
    for (size_t i = 0; !oom && i < count; i++) {
        inst[i] = recs[i].instance;
        kind[i] = recs[i].kind;
        oom = !(text[i] = wf_strndup(recs[i].record, recs[i].record_len));
    }
    wf_status rc = WF_OK;
    if (!oom) {
        array_literal(&a[0], inst, count);
        int_array(&a[1], recs, count, false);
        int_array(&a[2], recs, count, true);
        array_literal(&a[3], kind, count);
        array_literal(&a[4], (const char *const *)text, count);
        for (int k = 0; k < 5; k++)
            oom = oom || a[k].oom;
    }
    if (oom) {
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory writing tracking records");
    } else {
        pg_params p = {0};
        for (int k = 0; k < 5; k++)
            p_text(&p, a[k].data);
        rc = run_cmd(s, PS_PUT_TRACKING, &p, NULL, err);
    }
    for (size_t i = 0; text && i < count; i++)
        wf_free(text[i]);
    for (int k = 0; k < 5; k++)
        wf_buf_fini(&a[k]);
    wf_free(inst);
    wf_free(kind);
    wf_free(text);
    return rc;
}

static wf_status pg_claim(wfm_store *s, size_t max, int64_t now, int64_t now_us,
                          wfm_store_claim_fn fn, void *ud, size_t *count, wf_error *err)
{
    pg_params p = {0};
    p_text(&p, s->owner);
    p_int(&p, now + s->lease_ms);
    p_int(&p, now);
    p_int(&p, now_us);
    p_int(&p, max > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)max);
    PGresult *r = NULL;
    wf_status rc = run(s, PS_CLAIM, &p, &r, err);
    if (rc != WF_OK)
        return rc;
    for (int i = 0; i < PQntuples(r); i++) /* new leases: another host may have saved since */
        wfm__names_forget(s, PQgetvalue(r, i, 0));
    for (int i = 0; i < PQntuples(r); i++) {
        size_t len = 0;
        unsigned char *blob =
            PQgetisnull(r, i, 3)
                ? NULL
                : PQunescapeBytea((const unsigned char *)PQgetvalue(r, i, 3), &len);
        if (!blob && !PQgetisnull(r, i, 3)) {
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory claiming work");
            break;
        }
        wfm_store_claimed c = {PQgetvalue(r, i, 0), PQgetvalue(r, i, 1),
                               strtoull(PQgetvalue(r, i, 2), NULL, 16), len ? blob : NULL, len,
                               col_int(r, i, 4), col_int(r, i, 5), col_int(r, i, 6)};
        bool more = fn(ud, &c);
        PQfreemem(blob);
        if (!more)
            break;
    }
    if (rc == WF_OK)
        *count = (size_t)PQntuples(r);
    PQclear(r);
    return rc;
}

/* ---- waiting for work: LISTEN/NOTIFY ---------------------------------------------------------
 * Saves that leave an instance runnable and unleased (Created or Executing, released) and
 * queued resumptions NOTIFY wfbridge_work when they commit; a waiting host wakes at once.
 * The waiter listens on a connection of its own, so the store's connection stays free. */

static bool listen_ready(pg_conn *c)
{
    if (c->listen && PQstatus(c->listen) == CONNECTION_OK)
        return true;
    PQfinish(c->listen);
    c->listen = PQconnectdb(c->conninfo);
    if (!c->listen || PQstatus(c->listen) != CONNECTION_OK)
        return false;
    PQsetNoticeProcessor(c->listen, ignore_notice, NULL);
    PGresult *r = PQexec(c->listen, "LISTEN wfbridge_work");
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok;
}

/* Take every notification already received; true if there was one. */
static bool drain_notifies(PGconn *conn)
{
    bool any = false;
    for (PGnotify *n; (n = PQnotifies(conn)) != NULL; PQfreemem(n))
        any = true;
    return any;
}

static wf_status pg_wait(wfm_store *s, int64_t timeout_ms, int wake_fd, bool *woken,
                         wf_error *err)
{
    pg_conn *c = s->impl;
    *woken = false;
    int timeout = timeout_ms > INT_MAX ? INT_MAX : (int)timeout_ms;
    struct pollfd pfd[2] = {{wake_fd, POLLIN, 0}, {-1, POLLIN, 0}};
    if (!listen_ready(c)) { /* no listener (server away): the caller polls */
        poll(pfd, 1, timeout);
        return WF_OK;
    }
    if (PQconsumeInput(c->listen) && drain_notifies(c->listen)) {
        *woken = true;
        return WF_OK;
    }
    pfd[1].fd = PQsocket(c->listen);
    int ready = poll(pfd, 2, timeout);
    if (ready < 0 && errno != EINTR)
        return wfm__store_fail(s, WF_E_IO, err, "waiting for work: %s", strerror(errno));
    if (ready > 0 && (pfd[1].revents & POLLIN) && PQconsumeInput(c->listen))
        *woken = drain_notifies(c->listen);
    return WF_OK;
}

const wfm__store_ops wfm__store_pg_ops = {
    .open = pg_open,
    .close = pg_close,
    .put_definition = pg_put_definition,
    .create = pg_create,
    .insert = pg_insert,
    .insert_many = pg_insert_many,
    .suspend = pg_suspend,
    .take_lease = pg_take_lease,
    .owner_of = pg_owner_of,
    .release = pg_release,
    .renew = pg_renew,
    .write_batch = pg_write_batch,
    .load_state = pg_load_state,
    .query_rows = pg_query_rows,
    .props = pg_props,
    .enqueue_resume = pg_enqueue_resume,
    .pending_resumes = pg_pending_resumes,
    .put_tracking = pg_put_tracking,
    .wait = pg_wait,
    .claim = pg_claim,
};

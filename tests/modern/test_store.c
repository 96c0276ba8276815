/* test_store.c — the instance store: round trip, queries, leases across hosts and
 * processes (on an injected clock; a dead local owner's lease is taken over at once), many
 * processes creating one new store, read-only and must-exist opens, group commit under
 * concurrent savers, claiming work (two owners racing on connections of their own), and
 * refusal of corrupt, damaged, foreign and newer stores (which must stay untouched).
 * modern_store runs on SQLite; modern_store_pg runs the tests that are not about
 * SQLite files on PostgreSQL (a fresh schema each) when WFBRIDGE_TEST_PG names a server. */
#include <check.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../../modern/wfm_store.h"
#include "../wf_test_util.h"
#include "support_pg.h"

static char dir[256];
static char path[1400];
static bool on_pg;         /* the PostgreSQL variant: path is a connection string */
static char pg_schema[64]; /* its schema, made by setup_pg, dropped by teardown_pg */

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(path, sizeof path, "%s/store.db", dir);
}

static void teardown(void)
{
    wf_test_tmpdir_remove(dir);
}

/* A fresh schema on the server WFBRIDGE_TEST_PG names; path selects it (search_path). */
static void setup_pg(void)
{
    setup();
    wf_test_pg_schema(path, sizeof path, pg_schema);
    on_pg = true;
}

static void teardown_pg(void)
{
    wf_test_pg_drop(pg_schema);
    teardown();
}

static PGconn *pg_connect(const char *conninfo)
{
    PGconn *c = PQconnectdb(conninfo);
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    return c;
}

/* Run SQL on the store behind the store's back (to age, damage or fake a store). */
static void store_exec(const char *sql)
{
    if (on_pg) {
        wf_test_pg_exec(path, sql);
        return;
    }
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* The first column of the first row of `sql` as text (wf_free it; NULL when it is NULL). */
static char *store_query(const char *sql)
{
    char *out = NULL;
    if (on_pg)
        return wf_test_pg_query(path, sql);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    if (sqlite3_column_text(st, 0))
        out = wf_strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* What a file looks like: its bytes and modification time (both must stay the same). */
typedef struct snapshot {
    char *bytes;
    size_t len;
    struct timespec mtime;
} snapshot;

/* On PostgreSQL: the schema's tables, its metadata and its instances. */
static const char pg_snapshot_sql[] =
    "SELECT coalesce(string_agg(tablename, ',' ORDER BY tablename), '') ||"
    " coalesce(query_to_xml(CASE WHEN bool_or(tablename = 'wfbridge_meta') THEN"
    " 'SELECT * FROM wfbridge_meta ORDER BY key' ELSE 'SELECT 1' END, false, false, '')::text, '')"
    " || coalesce(query_to_xml(CASE WHEN bool_or(tablename = 'instances') THEN"
    " 'SELECT * FROM instances ORDER BY id' ELSE 'SELECT 1' END, false, false, '')::text, '')"
    " FROM pg_tables WHERE schemaname = current_schema()";

static snapshot take_snapshot(const char *file)
{
    snapshot sn = {NULL, 0, {0, 0}};
    if (on_pg) {
        sn.bytes = store_query(pg_snapshot_sql);
        sn.len = strlen(sn.bytes);
        return sn;
    }
    struct stat sb;
    ck_assert_int_eq(stat(file, &sb), 0);
    sn.mtime = sb.st_mtim;
    sn.bytes = wf_test_read_file(file, &sn.len);
    ck_assert_ptr_nonnull(sn.bytes);
    return sn;
}

/* The file is as in `before` (which is freed) and nothing was created beside it. */
static void assert_unchanged(snapshot *before, const char *file)
{
    snapshot after = take_snapshot(file);
    ck_assert_uint_eq(before->len, after.len);
    ck_assert(memcmp(before->bytes, after.bytes, before->len) == 0);
    ck_assert(before->mtime.tv_sec == after.mtime.tv_sec &&
              before->mtime.tv_nsec == after.mtime.tv_nsec);
    const char *suffixes[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; !on_pg && i < 3; i++) {
        char side[600];
        snprintf(side, sizeof side, "%s%s", file, suffixes[i]);
        ck_assert_msg(access(side, F_OK) != 0, "%s was created", side);
    }
    wf_free(before->bytes);
    wf_free(after.bytes);
}

/* The test clock (ms), shared by every store a test opens in this process. */
static int64_t test_now_ms = 1700000000000;

static int64_t test_clock(void *ud)
{
    return *(const int64_t *)ud;
}

static wfm_store *open_store(const char *owner, int64_t lease_ms, bool group)
{
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    o.owner = owner;
    o.lease_ms = lease_ms;
    o.group_commit = group;
    o.durability = WFM_DURABILITY_NORMAL;
    o.clock_ms = test_clock;
    o.clock_ud = &test_now_ms;
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_store_open(&o, &s, &err) == WF_OK, "%s", err.message);
    return s;
}

static wf_status save_simple(wfm_store *s, const char *id, const char *status, const char *blob,
                             bool release, wf_error *err)
{
    const char *bms[] = {"approve", "reject"};
    const char *names[] = {"customer"};
    const char *values[] = {"contoso"};
    wfm_store_save_rec r = {id, status, blob, blob ? strlen(blob) : 0, bms, 2, names, values, 1,
                            1234, release, 0};
    return wfm_store_save(s, &r, err);
}

START_TEST(test_store_round_trip_keeps_state_bookmarks_and_props)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_put_definition(s, 0xabcdefULL, "order.xaml", &err), WF_OK);
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(s, 0xabcdefULL, &id, &err), WF_OK);
    ck_assert_uint_eq(strlen(id.text), 32);
    ck_assert_int_eq(save_simple(s, id.text, "Idle", "state-bytes", true, &err), WF_OK);
    wfm_store_close(s);

    s = open_store("host-b", 0, false); /* reopen: a new process would see the same */
    void *state = NULL;
    size_t len = 0;
    char status[32];
    uint64_t hash = 0;
    ck_assert_int_eq(wfm_store_load_state(s, id.text, &state, &len, status, &hash, &err), WF_OK);
    ck_assert_uint_eq(len, strlen("state-bytes"));
    ck_assert(memcmp(state, "state-bytes", len) == 0);
    ck_assert_str_eq(status, "Idle");
    ck_assert_uint_eq(hash, 0xabcdefULL);
    wf_free(state);
    char *props = NULL;
    ck_assert_int_eq(wfm_store_props(s, id.text, &props, &err), WF_OK);
    ck_assert_str_eq(props, "customer=contoso\n");
    wf_free(props);
    wfm_store_close(s);
}
END_TEST

typedef struct rows {
    int count;
    char last_bookmarks[64];
    char last_path[64];
} rows;

static bool count_row(void *ud, const wfm_store_row *row)
{
    rows *r = ud;
    r->count++;
    snprintf(r->last_bookmarks, sizeof r->last_bookmarks, "%s", row->bookmarks);
    snprintf(r->last_path, sizeof r->last_path, "%s",
             row->definition_path ? row->definition_path : "");
    return true;
}

START_TEST(test_store_query_by_status_property_bookmark_and_timer)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_put_definition(s, 7, "flow.xaml", &err);
    wfm_store_id a, b;
    ck_assert_int_eq(wfm_store_create(s, 7, &a, &err), WF_OK);
    ck_assert_int_eq(wfm_store_create(s, 7, &b, &err), WF_OK);
    ck_assert_int_eq(save_simple(s, a.text, "Idle", "x", false, &err), WF_OK);
    wfm_store_save_rec done = {b.text, "Closed", NULL, 0, NULL, 0, NULL, NULL, 0, 0, true, 0};
    ck_assert_int_eq(wfm_store_save(s, &done, &err), WF_OK);

    rows r = {0};
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    q.status = "Idle";
    ck_assert_int_eq(wfm_store_query_rows(s, &q, count_row, &r, &err), WF_OK);
    ck_assert_int_eq(r.count, 1);
    ck_assert_str_eq(r.last_bookmarks, "approve\nreject");
    ck_assert_str_eq(r.last_path, "flow.xaml");

    wfm_store_query p = WFM_STORE_QUERY_INIT;
    p.prop_name = "customer";
    p.prop_value = "contoso";
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(wfm_store_query_rows(s, &p, count_row, &r, &err), WF_OK);
    ck_assert_int_eq(r.count, 1);
    p.prop_value = "fabrikam";
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(wfm_store_query_rows(s, &p, count_row, &r, &err), WF_OK);
    ck_assert_int_eq(r.count, 0);

    wfm_store_query t = WFM_STORE_QUERY_INIT;
    t.due_before_us = 2000; /* a's timer is due at 1234 */
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(wfm_store_query_rows(s, &t, count_row, &r, &err), WF_OK);
    ck_assert_int_eq(r.count, 1);

    wfm_store_query k = WFM_STORE_QUERY_INIT;
    k.bookmark = "reject";
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(wfm_store_query_rows(s, &k, count_row, &r, &err), WF_OK);
    ck_assert_int_eq(r.count, 1);

    memset(&r, 0, sizeof r);
    ck_assert_int_eq(wfm_store_query_rows(s, NULL, count_row, &r, &err), WF_OK);
    ck_assert_int_eq(r.count, 2);
    wfm_store_close(s);
}
END_TEST

START_TEST(test_store_lease_blocks_second_host_until_released)
{
    wfm_store *a = open_store("host-a", 60000, false);
    wfm_store *b = open_store("host-b", 60000, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(a, 1, &id, &err), WF_OK);
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_E_LOCKED);
    ck_assert_ptr_nonnull(strstr(err.message, "locked"));
    wf_error_clear(&err);
    ck_assert_int_eq(save_simple(b, id.text, "Idle", "b", false, &err), WF_E_LOCKED);
    wf_error_clear(&err);
    ck_assert_int_eq(save_simple(a, id.text, "Idle", "a", true, &err), WF_OK); /* unload */
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_OK);
    ck_assert_int_eq(wfm_store_lock(a, id.text, &err), WF_E_LOCKED);
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_store_lock(a, "0123456789abcdef0123456789abcdef", &err), WF_E_NOTFOUND);
    wfm_store_close(a);
    wfm_store_close(b);
}
END_TEST

/* Instances created under given ids (migrate-instances keeps the legacy ids): leased to the
 * creator; a malformed id is refused; on SQLite a batch holding an existing id creates none. */
START_TEST(test_store_create_under_given_ids)
{
    wfm_store *a = open_store("host-a", 60000, false);
    wfm_store *b = open_store("host-b", 60000, false);
    wf_error err = WF_ERROR_INIT;
    const char *ids[] = {"00000000000000000000000000000001", "00000000000000000000000000000002"};
    ck_assert_int_eq(wfm_store_create_ids(a, 7, ids, 2, &err), WF_OK);
    ck_assert_int_eq(wfm_store_create_id(a, 7, "00000000000000000000000000000003", &err), WF_OK);
    ck_assert_int_eq(wfm_store_lock(b, ids[1], &err), WF_E_LOCKED);
    wf_error_clear(&err);
    ck_assert_int_eq(save_simple(a, ids[1], "Idle", "x", true, &err), WF_OK);
    ck_assert_int_eq(wfm_store_lock(b, ids[1], &err), WF_OK);
    ck_assert_int_eq(wfm_store_create_id(a, 7, "Not-Hex", &err), WF_E_USAGE);
    wf_error_clear(&err);
    if (!on_pg) { /* PostgreSQL creates them one by one, and a create that finds its row is a
                     no-op there (so that a create sent again after a reconnect is harmless) */
        const char *again[] = {"00000000000000000000000000000004", ids[0]};
        ck_assert_int_ne(wfm_store_create_ids(a, 7, again, 2, &err), WF_OK);
        wf_error_clear(&err);
        ck_assert_int_eq(wfm_store_lock(a, again[0], &err), WF_E_NOTFOUND);
    }
    wfm_store_close(a);
    wfm_store_close(b);
}
END_TEST

START_TEST(test_store_expired_lease_of_killed_process_is_taken_over)
{
    wf_error err = WF_ERROR_INIT;
    wfm_store *b = open_store("host-b", 60000, false);
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(b, 1, &id, &err), WF_OK);
    ck_assert_int_eq(wfm_store_release(b, id.text, &err), WF_OK);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* Another host process (an owner id without host and pid: no early takeover) takes a
         * 50 ms lease and dies without releasing it. */
        wfm_store *c = NULL;
        wfm_store_opts o = WFM_STORE_OPTS_INIT;
        o.path = path;
        o.owner = "host-dying";
        o.lease_ms = 50;
        o.clock_ms = test_clock;
        o.clock_ud = &test_now_ms;
        wf_error e = WF_ERROR_INIT;
        if (wfm_store_open(&o, &c, &e) != WF_OK || wfm_store_lock(c, id.text, &e) != WF_OK)
            _exit(3);
        _exit(0); /* no close, no release: like SIGKILL */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    test_now_ms += 50; /* the last millisecond of the lease */
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_E_LOCKED);
    WF_ASSERT_ERROR(err, WF_E_LOCKED, 0, 0, "has not expired");
    wf_error_clear(&err);
    test_now_ms += 1;
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_OK);
    ck_assert_int_eq(save_simple(b, id.text, "Idle", "taken", false, &err), WF_OK);
    wfm_store_close(b);
}
END_TEST

typedef struct lease_row {
    char owner[128];
    int64_t expires;
} lease_row;

static bool lease_of(void *ud, const wfm_store_row *row)
{
    lease_row *l = ud;
    snprintf(l->owner, sizeof l->owner, "%s", row->owner ? row->owner : "");
    l->expires = row->lock_expires_ms;
    return false;
}

static lease_row get_lease(wfm_store *s)
{
    lease_row l = {"?", -1};
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_query_rows(s, NULL, lease_of, &l, &err), WF_OK);
    return l;
}

/* A child with the default owner id (host:pid:random) locks the instance, writes a byte to
 * `ready`, waits for one on `go` and exits without releasing (like SIGKILL). */
static pid_t spawn_holder(const char *id, int go, int ready)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid != 0)
        return pid;
    wfm_store *c = NULL;
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    wf_error e = WF_ERROR_INIT;
    if (wfm_store_open(&o, &c, &e) != WF_OK || wfm_store_lock(c, id, &e) != WF_OK)
        _exit(3);
    char byte;
    if (write(ready, "r", 1) != 1)
        _exit(4);
    _exit(read(go, &byte, 1) == 1 ? 0 : 4);
}

/* The lease of a process on this machine that has died is taken over at once; one whose
 * process still runs, or whose owner names another machine, waits for expiry. */
/* A new instance, free, then locked by spawn_holder: returns once the child holds it. */
static pid_t start_holder(wfm_store *b, wfm_store_id *id, int go[2], int ready[2])
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_create(b, 1, id, &err), WF_OK);
    ck_assert_int_eq(wfm_store_release(b, id->text, &err), WF_OK);
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(pipe(ready), 0);
    pid_t pid = spawn_holder(id->text, go[0], ready[1]);
    char byte = 0;
    ck_assert_int_eq(read(ready[0], &byte, 1), 1); /* it holds the lease */
    return pid;
}

/* Let the holder exit (its lease left behind, unexpired) and reap it. */
static void end_holder(pid_t pid, int go[2], int ready[2])
{
    ck_assert_int_eq(write(go[1], "x", 1), 1);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < 2; i++) {
        close(go[i]);
        close(ready[i]);
    }
}

START_TEST(test_store_lease_of_dead_local_process_is_taken_over_at_once)
{
    wf_error err = WF_ERROR_INIT;
    wfm_store *b = open_store("host-b", 60000, false);
    wfm_store_id id;
    int go[2], ready[2];
    pid_t pid = start_holder(b, &id, go, ready);
    lease_row held = get_lease(b);
    char want[64];
    snprintf(want, sizeof want, ":%ld:", (long)pid);
    ck_assert_msg(strstr(held.owner, want) != NULL, "owner '%s' lacks pid %ld", held.owner,
                  (long)pid);
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_E_LOCKED); /* alive */
    WF_ASSERT_ERROR(err, WF_E_LOCKED, 0, 0, "locked by another host");
    wf_error_clear(&err);
    end_holder(pid, go, ready);
    ck_assert_str_eq(get_lease(b).owner, held.owner); /* dead, its lease unexpired */
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_OK);
    ck_assert_str_eq(get_lease(b).owner, "host-b");
    ck_assert_int_eq(wfm_store_release(b, id.text, &err), WF_OK);

    /* the same pid on another machine: not ours to judge */
    char sql[512];
    snprintf(sql, sizeof sql,
             "UPDATE instances SET owner = 'elsewhere.example:%ld:0123abcd',"
             " lock_expires_ms = %lld",
             (long)pid, (long long)(test_now_ms + 60000));
    wfm_store_close(b);
    store_exec(sql);
    b = open_store("host-b", 60000, false);
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_E_LOCKED);
    wf_error_clear(&err);
    wfm_store_close(b);
}
END_TEST

/* Sixteen processes open one store that does not exist yet at the same moment: the schema
 * is created once, under the write lock, and every process succeeds. */
START_TEST(test_store_parallel_first_open_of_a_new_file_all_succeed)
{
    enum { CHILDREN = 16 };
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    pid_t pids[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        pids[i] = fork();
        ck_assert_int_ge(pids[i], 0);
        if (pids[i] == 0) {
            close(go[1]);
            char byte;
            if (read(go[0], &byte, 1) != 0) /* EOF: all start together */
                _exit(5);
            wfm_store_opts o = WFM_STORE_OPTS_INIT;
            o.path = path;
            wfm_store *c = NULL;
            wf_error e = WF_ERROR_INIT;
            wfm_store_id id;
            if (wfm_store_open(&o, &c, &e) != WF_OK || wfm_store_create(c, 7, &id, &e) != WF_OK) {
                fprintf(stderr, "child %d: %s\n", i, e.message);
                _exit(3);
            }
            wfm_store_close(c);
            _exit(0);
        }
    }
    close(go[0]);
    close(go[1]);
    for (int i = 0; i < CHILDREN; i++) {
        int status = 0;
        ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d failed", i);
    }
    wfm_store *s = open_store("host-a", 0, false);
    rows r = {0};
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_query_rows(s, NULL, count_row, &r, &err), WF_OK);
    ck_assert_int_eq(r.count, CHILDREN);
    wfm_store_close(s);
}
END_TEST

/* A store written and closed, then opened read-only: everything reads, every write is
 * refused, and neither the file nor its directory changes. */
START_TEST(test_store_read_only_reads_and_never_writes)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_put_definition(s, 7, "flow.xaml", &err), WF_OK);
    ck_assert_int_eq(wfm_store_create(s, 7, &id, &err), WF_OK);
    ck_assert_int_eq(save_simple(s, id.text, "Idle", "ro-state", true, &err), WF_OK);
    wfm_store_close(s);
    snapshot before = take_snapshot(path);
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    o.read_only = true;
    ck_assert_int_eq(wfm_store_open(&o, &s, &err), WF_OK);
    rows r = {0};
    ck_assert_int_eq(wfm_store_query_rows(s, NULL, count_row, &r, &err), WF_OK);
    ck_assert_int_eq(r.count, 1);
    ck_assert_str_eq(r.last_path, "flow.xaml");
    void *state = NULL;
    size_t len = 0;
    char status[32];
    ck_assert_int_eq(wfm_store_load_state(s, id.text, &state, &len, status, NULL, &err), WF_OK);
    ck_assert_uint_eq(len, 8);
    wf_free(state);
    wfm_store_id other;
    ck_assert_int_eq(wfm_store_create(s, 7, &other, &err), WF_E_STORE);
    WF_ASSERT_ERROR(err, WF_E_STORE, 0, 0, on_pg ? "read-only" : "readonly");
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_store_lock(s, id.text, &err), WF_E_STORE);
    wf_error_clear(&err);
    wfm_store_close(s);
    assert_unchanged(&before, path);
}
END_TEST

/* A store of another user (0644 in a directory we cannot write) can be read. As root the
 * reading is done by a child running as nobody; otherwise file and directory are made
 * read-only. */
START_TEST(test_store_read_only_reads_another_users_store)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(s, 7, &id, &err), WF_OK);
    wfm_store_close(s);
    snapshot before = take_snapshot(path);
    bool root = geteuid() == 0;
    ck_assert_int_eq(chmod(path, root ? 0644 : 0444), 0);
    ck_assert_int_eq(chmod(dir, root ? 0755 : 0555), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (root && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(6);
        if (access(dir, W_OK) == 0 || access(path, W_OK) == 0)
            _exit(7); /* not a read-only situation */
        wfm_store_opts o = WFM_STORE_OPTS_INIT;
        o.path = path;
        o.read_only = true;
        wfm_store *c = NULL;
        wf_error e = WF_ERROR_INIT;
        rows r = {0};
        if (wfm_store_open(&o, &c, &e) != WF_OK ||
            wfm_store_query_rows(c, NULL, count_row, &r, &e) != WF_OK || r.count != 1) {
            fprintf(stderr, "read-only open: %s\n", e.message);
            _exit(3);
        }
        wfm_store_close(c);
        o.read_only = false; /* a writing open is refused cleanly */
        _exit(wfm_store_open(&o, &c, &e) == WF_E_STORE && !c ? 0 : 4);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    chmod(dir, 0700);
    chmod(path, 0644);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit %d",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    assert_unchanged(&before, path);
}
END_TEST

typedef struct saver {
    wfm_store *store;
    wfm_store_id ids[25];
    int failures;
    bool announce; /* wfm_store_saver_begin / _end around the saves, as wfm_host_run does */
} saver;

static void *save_many(void *arg)
{
    saver *sv = arg;
    if (sv->announce)
        wfm_store_saver_begin(sv->store);
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < 25; i++) {
            char blob[64];
            snprintf(blob, sizeof blob, "%s-%d", sv->ids[i].text, round);
            wf_error err = WF_ERROR_INIT;
            if (save_simple(sv->store, sv->ids[i].text, round == 3 ? "Closed" : "Idle", blob,
                            false, &err) != WF_OK)
                sv->failures++;
        }
    if (sv->announce)
        wfm_store_saver_end(sv->store);
    return NULL;
}

/* 8 threads each save 25 instances 4 times; announce: as announced savers, while this thread
 * is one too that never saves (a batch waits for it only a moment). */
static void save_concurrently(bool announce)
{
    wfm_store *s = open_store("host-a", 0, true);
    wf_error err = WF_ERROR_INIT;
    saver savers[8];
    pthread_t threads[8];
    if (announce)
        wfm_store_saver_begin(s);
    for (int t = 0; t < 8; t++) {
        savers[t].store = s;
        savers[t].failures = 0;
        savers[t].announce = announce;
        for (int i = 0; i < 25; i++)
            ck_assert_int_eq(wfm_store_create(s, 9, &savers[t].ids[i], &err), WF_OK);
    }
    for (int t = 0; t < 8; t++)
        pthread_create(&threads[t], NULL, save_many, &savers[t]);
    for (int t = 0; t < 8; t++)
        pthread_join(threads[t], NULL);
    if (announce)
        wfm_store_saver_end(s);
    uint64_t commits = 0, saves = 0;
    wfm_store_counters(s, &commits, &saves);
    ck_assert_uint_eq(saves, 8 * 25 * 4);
    ck_assert_uint_le(commits, saves);
    for (int t = 0; t < 8; t++) {
        ck_assert_int_eq(savers[t].failures, 0);
        for (int i = 0; i < 25; i++) {
            void *state = NULL;
            size_t len = 0;
            char status[32], want[64];
            ck_assert_int_eq(
                wfm_store_load_state(s, savers[t].ids[i].text, &state, &len, status, NULL, &err),
                WF_OK);
            snprintf(want, sizeof want, "%s-3", savers[t].ids[i].text);
            ck_assert_uint_eq(len, strlen(want));
            ck_assert(memcmp(state, want, len) == 0);
            ck_assert_str_eq(status, "Closed");
            wf_free(state);
        }
    }
    wfm_store_close(s);
}

START_TEST(test_store_group_commit_writes_every_save_of_concurrent_hosts)
{
    save_concurrently(false);
}
END_TEST

START_TEST(test_store_group_commit_of_announced_savers_writes_every_save)
{
    save_concurrently(true);
}
END_TEST

/* ---- bad input: the store must be refused and left byte-for-byte as it was ------------- */

/* Opening with `o` fails with `want`, a message holding `needle`, the store's path, and
 * leaves the file untouched. */
static void assert_open_refused(const wfm_store_opts *o, wf_status want, const char *needle)
{
    snapshot before = take_snapshot(o->path);
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(o, &s, &err), want);
    ck_assert_ptr_null(s);
    WF_ASSERT_ERROR(err, want, 0, 0, needle);
    ck_assert_str_eq(err.file, o->path);
    assert_unchanged(&before, o->path);
}

/* Refused by every kind of open. */
static void assert_refused_unchanged(wf_status want, const char *needle)
{
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    assert_open_refused(&o, want, needle);
    o.must_exist = true;
    assert_open_refused(&o, want, needle);
    o.read_only = true;
    assert_open_refused(&o, want, needle);
}

/* ---- pending resumptions (schema version 2) ----------------------------------------------- */
typedef struct resume_list {
    char text[256]; /* "seq:bookmark=payload;" */
    int64_t first_created;
} resume_list;

static bool list_resume(void *ud, const wfm_store_resume *r)
{
    resume_list *l = ud;
    size_t len = strlen(l->text);
    snprintf(l->text + len, sizeof l->text - len, "%lld:%s=%s;", (long long)r->seq, r->bookmark,
             r->payload_json);
    if (!l->first_created)
        l->first_created = r->created_ms;
    return true;
}

static resume_list list_resumes(wfm_store *s, const char *id)
{
    resume_list l;
    memset(&l, 0, sizeof l);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_pending_resumes(s, id, list_resume, &l, &err), WF_OK);
    return l;
}

typedef struct pending_row {
    int64_t count;
    char next[32];
} pending_row;

static bool pending_of_row(void *ud, const wfm_store_row *row)
{
    pending_row *p = ud;
    p->count = row->pending_resumes;
    snprintf(p->next, sizeof p->next, "%s", row->next_resume ? row->next_resume : "(none)");
    return true;
}

static pending_row row_pending(wfm_store *s)
{
    pending_row p = {-1, ""};
    wf_error err = WF_ERROR_INIT;
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    ck_assert_int_eq(wfm_store_query_rows(s, &q, pending_of_row, &p, &err), WF_OK);
    return p;
}

START_TEST(test_store_queued_resumes_are_deleted_by_the_save_that_applies_them)
{
    wfm_store *s = open_store("host-a", 0, false);
    wfm_store *other = open_store("host-b", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id a;
    ck_assert_int_eq(wfm_store_create(s, 7, &a, &err), WF_OK);
    /* another process queues without the lease */
    int64_t seq = 0;
    ck_assert_int_eq(wfm_store_enqueue_resume(other, a.text, "approve", "21", &seq, &err), WF_OK);
    ck_assert_int_eq(seq, 1);
    ck_assert_int_eq(wfm_store_enqueue_resume(other, a.text, "reject", "\"no\"", &seq, &err),
                     WF_OK);
    ck_assert_int_eq(seq, 2);
    ck_assert_int_eq(wfm_store_enqueue_resume(other, a.text, "later", NULL, &seq, &err), WF_OK);
    ck_assert_int_eq(seq, 3);
    resume_list l = list_resumes(s, a.text);
    ck_assert_str_eq(l.text, "1:approve=21;2:reject=\"no\";3:later=null;");
    ck_assert_int_gt(l.first_created, 0);
    pending_row p = row_pending(s);
    ck_assert_int_eq(p.count, 3);
    ck_assert_str_eq(p.next, "approve");
    /* a save that applied the first two deletes them with it */
    wfm_store_save_rec r = {a.text, "Idle", "x", 1, NULL, 0, NULL, NULL, 0, 0, false, 2};
    ck_assert_int_eq(wfm_store_save(s, &r, &err), WF_OK);
    l = list_resumes(s, a.text);
    ck_assert_str_eq(l.text, "3:later=null;");
    p = row_pending(s);
    ck_assert_int_eq(p.count, 1);
    ck_assert_str_eq(p.next, "later");
    /* a save that fails (lease lost) deletes nothing */
    wfm_store_save_rec lost = {a.text, "Idle", "y", 1, NULL, 0, NULL, NULL, 0, 0, false, 3};
    ck_assert_int_eq(wfm_store_save(other, &lost, &err), WF_E_LOCKED);
    wf_error_clear(&err);
    l = list_resumes(s, a.text);
    ck_assert_str_eq(l.text, "3:later=null;");
    /* numbering goes on after deletions; unknown instances are refused */
    ck_assert_int_eq(wfm_store_enqueue_resume(other, a.text, "more", "1", &seq, &err), WF_OK);
    ck_assert_int_eq(seq, 4);
    ck_assert_int_eq(wfm_store_enqueue_resume(other, "0123456789abcdef0123456789abcdef", "x",
                                              "1", NULL, &err),
                     WF_E_NOTFOUND);
    WF_ASSERT_ERROR(err, WF_E_NOTFOUND, 0, 0, "no instance");
    wf_error_clear(&err);
    wfm_store_close(other);
    wfm_store_close(s);
}
END_TEST

static int64_t meta_version(void)
{
    char *v = store_query("SELECT value FROM wfbridge_meta WHERE key = 'schema_version'");
    int64_t n = v ? atoll(v) : -1;
    wf_free(v);
    return n;
}

/* A new store holding one instance saved `status` with `state`, released, then closed (to be
 * aged by the test). */
static wfm_store_id store_with_one_row(const char *status, const char *state)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id a;
    ck_assert_int_eq(wfm_store_create(s, 7, &a, &err), WF_OK);
    ck_assert_int_eq(save_simple(s, a.text, status, state, true, &err), WF_OK);
    wfm_store_close(s);
    ck_assert_int_eq(meta_version(), WFM_STORE_SCHEMA_VERSION);
    return a;
}

/* Instance `id` loads from s with this status and state (text). */
static void assert_loads(wfm_store *s, const char *id, const char *want_status,
                         const char *want_state)
{
    wf_error err = WF_ERROR_INIT;
    void *blob = NULL;
    size_t len = 0;
    char status[32];
    ck_assert_int_eq(wfm_store_load_state(s, id, &blob, &len, status, NULL, &err), WF_OK);
    ck_assert_str_eq(status, want_status);
    ck_assert_uint_eq(len, strlen(want_state));
    ck_assert(memcmp(blob, want_state, len) == 0);
    wf_free(blob);
}

/* A version 1 store (as wfbridge wrote it before pending_resumes existed) is migrated in
 * place: its rows stay, the new table appears, the recorded version becomes 2. */
START_TEST(test_store_version_1_is_migrated)
{
    wfm_store_id a = store_with_one_row("Idle", "state-1");
    wf_error err = WF_ERROR_INIT;
    store_exec("DROP TABLE pending_resumes;"
                "ALTER TABLE instances DROP COLUMN attempts;"
                "ALTER TABLE instances DROP COLUMN reason;"
                "DROP INDEX IF EXISTS instances_claimable;" /* version 4 */
                "DROP INDEX IF EXISTS instances_by_lease;"  /* SQLite's, version 4 */
                "UPDATE wfbridge_meta SET value = '1' WHERE key = 'schema_version';");
    ck_assert_int_eq(meta_version(), 1);

    wfm_store *s = open_store("host-b", 0, false);
    ck_assert_int_eq(meta_version(), WFM_STORE_SCHEMA_VERSION);
    assert_loads(s, a.text, "Idle", "state-1");
    int64_t seq = 0;
    ck_assert_int_eq(wfm_store_enqueue_resume(s, a.text, "approve", "1", &seq, &err), WF_OK);
    ck_assert_int_eq(seq, 1);
    wfm_store_close(s);
}
END_TEST

START_TEST(test_store_corrupt_file_is_refused_untouched)
{
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 200; i++)
        fputs("this is not a database ", f);
    fclose(f);
    assert_refused_unchanged(WF_E_CORRUPT, "not a database");
}
END_TEST

START_TEST(test_store_foreign_database_is_refused_untouched)
{
    store_exec("CREATE TABLE customers(id INTEGER); INSERT INTO customers VALUES(1);");
    assert_refused_unchanged(WF_E_STORE, "not a wfbridge instance store");
}
END_TEST

START_TEST(test_store_newer_schema_is_refused_untouched)
{
    store_exec("CREATE TABLE wfbridge_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "INSERT INTO wfbridge_meta VALUES('application', 'wfbridge-instance-store');"
                "INSERT INTO wfbridge_meta VALUES('schema_version', '99');");
    assert_refused_unchanged(WF_E_STORE, "newer");
}
END_TEST

START_TEST(test_store_meta_without_application_is_refused_untouched)
{
    store_exec("CREATE TABLE wfbridge_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "INSERT INTO wfbridge_meta VALUES('schema_version', '2');");
    assert_refused_unchanged(WF_E_STORE, "no application key");
}
END_TEST

START_TEST(test_store_other_application_is_refused_untouched)
{
    store_exec("CREATE TABLE wfbridge_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "INSERT INTO wfbridge_meta VALUES('application', 'other-app');"
                "INSERT INTO wfbridge_meta VALUES('schema_version', '2');");
    assert_refused_unchanged(WF_E_STORE, "its application is 'other-app'");
}
END_TEST

/* The metadata of a version 2 store without its other tables: refused before the journal
 * mode or anything else in the header changes. */
START_TEST(test_store_missing_tables_are_refused_untouched)
{
    store_exec("CREATE TABLE wfbridge_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "INSERT INTO wfbridge_meta VALUES('application', 'wfbridge-instance-store');"
                "INSERT INTO wfbridge_meta VALUES('schema_version', '2');"
                "CREATE TABLE definitions(hash TEXT PRIMARY KEY, path TEXT, added_ms INTEGER);");
    assert_refused_unchanged(WF_E_STORE, "missing its 'instances' table");
}
END_TEST

static int64_t query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* A store whose id index (the instances primary key) has a page of garbage cells: lookups
 * by id miss while listing and inserting still work, so it must be refused on open. */
START_TEST(test_store_corrupt_id_index_is_refused_untouched)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    for (int i = 0; i < 40; i++) {
        wfm_store_id id;
        ck_assert_int_eq(wfm_store_create(s, 7, &id, &err), WF_OK);
    }
    wfm_store_close(s);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    int64_t page = query_int(db, "SELECT rootpage FROM sqlite_master"
                                 " WHERE name = 'sqlite_autoindex_instances_1'");
    int64_t page_size = query_int(db, "PRAGMA page_size");
    sqlite3_close(db);
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, (long)((page - 1) * page_size + 8), SEEK_SET), 0);
    for (int64_t i = 8; i < page_size; i++)
        fputc(0x5a, f);
    fclose(f);
    assert_refused_unchanged(WF_E_STORE, "integrity check");
}
END_TEST

/* A store whose id index pages are well formed but one key no longer matches its row (one
 * byte of an id changed in the index page): quick_check passes it, listing and inserting
 * work and lookups by that id miss, so the index is matched against the rows on open. */
START_TEST(test_store_id_index_not_matching_rows_is_refused_untouched)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(wfm_store_create(s, 7, &id, &err), WF_OK);
    wfm_store_close(s);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    int64_t page = query_int(db, "SELECT rootpage FROM sqlite_master"
                                 " WHERE name = 'sqlite_autoindex_instances_1'");
    int64_t page_size = query_int(db, "PRAGMA page_size");
    ck_assert_int_eq(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    char *buf = malloc((size_t)page_size);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(fseek(f, (long)((page - 1) * page_size), SEEK_SET), 0);
    ck_assert_uint_eq(fread(buf, 1, (size_t)page_size, f), (size_t)page_size);
    size_t key_len = strlen(id.text);
    char *key = NULL;
    for (size_t at = 0; !key && at + key_len <= (size_t)page_size; at++)
        if (memcmp(buf + at, id.text, key_len) == 0)
            key = buf + at;
    ck_assert_ptr_nonnull(key);
    key[0] = key[0] == 'f' ? '0' : 'f';
    ck_assert_int_eq(fseek(f, (long)((page - 1) * page_size), SEEK_SET), 0);
    ck_assert_uint_eq(fwrite(buf, 1, (size_t)page_size, f), (size_t)page_size);
    free(buf);
    fclose(f);
    assert_refused_unchanged(WF_E_STORE, "integrity check");
}
END_TEST

START_TEST(test_store_missing_empty_and_tableless_files_are_refused_by_strict_opens)
{
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    for (int mode = 0; mode < 2; mode++) {
        o.read_only = mode == 0;
        o.must_exist = mode == 1;
        wfm_store *s = NULL;
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(wfm_store_open(&o, &s, &err), WF_E_IO);
        ck_assert_ptr_null(s);
        WF_ASSERT_ERROR(err, WF_E_IO, 0, 0, "no instance store");
        ck_assert_int_ne(access(path, F_OK), 0); /* not created */
    }
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    o.read_only = true;
    o.must_exist = false;
    assert_open_refused(&o, WF_E_STORE, "empty file");
    o.read_only = false;
    o.must_exist = true;
    assert_open_refused(&o, WF_E_STORE, "empty file");
    store_exec("PRAGMA user_version = 7;"); /* a database without tables */
    assert_open_refused(&o, WF_E_STORE, "no tables");
    o.read_only = true;
    assert_open_refused(&o, WF_E_STORE, "no tables");
}
END_TEST

/* Read-only opens never migrate: a version 1 store is refused, untouched. */
START_TEST(test_store_read_only_refuses_a_store_to_migrate)
{
    wfm_store *s = open_store("host-a", 0, false);
    wfm_store_close(s);
    store_exec("DROP TABLE pending_resumes;"
                "ALTER TABLE instances DROP COLUMN attempts;"
                "ALTER TABLE instances DROP COLUMN reason;"
                "UPDATE wfbridge_meta SET value = '1' WHERE key = 'schema_version';");
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    o.read_only = true;
    assert_open_refused(&o, WF_E_STORE, "must be migrated");
}
END_TEST

START_TEST(test_store_next_schema_version_is_refused_untouched)
{
    store_exec("CREATE TABLE wfbridge_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "INSERT INTO wfbridge_meta VALUES('application', 'wfbridge-instance-store');"
                "INSERT INTO wfbridge_meta VALUES('schema_version', '5');");
    assert_refused_unchanged(WF_E_STORE, "version 5 is newer");
}
END_TEST

/* ---- PostgreSQL only: connection faults ---------------------------------------------------- */

START_TEST(test_store_pg_unreachable_server_and_wrong_user_are_clear_errors)
{
    char bad[1600];
    snprintf(bad, sizeof bad, "host=%s/no-such-dir dbname=x connect_timeout=2", dir);
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = bad;
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&o, &s, &err), WF_E_STORE);
    ck_assert_ptr_null(s);
    WF_ASSERT_ERROR(err, WF_E_STORE, 0, 0, "cannot connect to the store");
    ck_assert_ptr_nonnull(strstr(err.message, "no-such-dir")); /* libpq's own message */
    wf_error_clear(&err);
    snprintf(bad, sizeof bad, "%s user=wfbridge_no_such_role", path);
    o.path = bad;
    ck_assert_int_eq(wfm_store_open(&o, &s, &err), WF_E_STORE);
    WF_ASSERT_ERROR(err, WF_E_STORE, 0, 0, "wfbridge_no_such_role"); /* the server's message */
}
END_TEST

/* A connection to the server for killing the store's sessions: path gets an application
 * name, and kill_sql terminates every session that uses it. */
static PGconn *session_killer(char kill_sql[256])
{
    char app[64];
    snprintf(app, sizeof app, "wfbt_drop_%ld", (long)getpid());
    PGconn *killer = pg_connect(path);
    size_t len = strlen(path);
    snprintf(path + len, sizeof path - len, "%sapplication_name=%s",
             strncmp(path, "postgres", 8) == 0 ? "&" : " ", app);
    snprintf(kill_sql, 256,
             "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
             " WHERE application_name = '%s'",
             app);
    return killer;
}

/* The server drops the store's connection (pg_terminate_backend) between and during
 * operations: the store reconnects, and each save is applied exactly once (version + 1). */
START_TEST(test_store_pg_dropped_connection_is_reconnected_and_saves_apply_once)
{
    char kill_sql[256];
    PGconn *killer = session_killer(kill_sql);
    wfm_store *s = open_store("host-a", 0, true);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(s, 7, &id, &err), WF_OK);
    for (int round = 0; round < 3; round++) {
        PGresult *killed = PQexec(killer, kill_sql);
        ck_assert_str_eq(PQgetvalue(killed, 0, 0), "1"); /* the store's one connection */
        PQclear(killed);
        ck_assert_msg(save_simple(s, id.text, "Idle", "after-drop", false, &err) == WF_OK, "%s",
                      err.message);
    }
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT version FROM instances WHERE id = '%s'", id.text);
    char *v = store_query(sql);
    ck_assert_str_eq(v, "3");
    wf_free(v);
    rows r = {0};
    ck_assert_int_eq(wfm_store_query_rows(s, NULL, count_row, &r, &err), WF_OK);
    ck_assert_int_eq(r.count, 1);
    wfm_store_close(s);
    PQfinish(killer);
}
END_TEST

typedef struct lockable_of {
    wfm_store *store;
    int yes, rows;
} lockable_of;

static bool check_lockable(void *ud, const wfm_store_row *row)
{
    lockable_of *l = ud;
    l->rows++;
    l->yes += wfm_store_row_lockable(l->store, row);
    return true;
}

static int lockable_rows(wfm_store *viewer, wfm_store *reader)
{
    lockable_of l = {viewer, 0, 0};
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_query_rows(reader, NULL, check_lockable, &l, &err), WF_OK);
    ck_assert_int_eq(l.rows, 1);
    return l.yes;
}

/* The hint hosts use to skip rows another live host holds: ours, free or expired only. */
START_TEST(test_store_row_lockable_follows_the_lease_rule)
{
    wfm_store *a = open_store("host-a", 1000, false);
    wfm_store *b = open_store("host-b", 1000, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(a, 1, &id, &err), WF_OK);
    ck_assert_int_eq(lockable_rows(a, b), 1); /* a's own */
    ck_assert_int_eq(lockable_rows(b, b), 0); /* a's live lease */
    test_now_ms += 1001;
    ck_assert_int_eq(lockable_rows(b, b), 1); /* expired */
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_OK);
    ck_assert_int_eq(lockable_rows(a, a), 0);
    ck_assert_int_eq(wfm_store_release(b, id.text, &err), WF_OK);
    ck_assert_int_eq(lockable_rows(a, a), 1); /* free */
    wfm_store_close(a);
    wfm_store_close(b);
}
END_TEST

static wf_status save_marks(wfm_store *s, const char *id, const char *mark, const char *prop,
                            bool release)
{
    const char *bms[] = {mark};
    const char *names[] = {"who"}, *values[] = {prop};
    wf_error err = WF_ERROR_INIT;
    wfm_store_save_rec r = {id, "Idle", "s", 1, bms, mark ? 1 : 0, names, values, prop ? 1 : 0,
                            0, release, 0};
    return wfm_store_save(s, &r, &err);
}

static int count_matching(wfm_store *s, const wfm_store_query *q)
{
    rows r = {0};
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_query_rows(s, q, count_row, &r, &err), WF_OK);
    return r.count;
}

static int waiting_on(wfm_store *s, const char *bookmark)
{
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    q.bookmark = bookmark;
    return count_matching(s, &q);
}

/* Saves that write the same bookmarks and properties again may skip writing them; any
 * change, and anything another host wrote in between, must still reach the store. */
START_TEST(test_store_bookmarks_and_props_follow_every_save)
{
    wfm_store *a = open_store("host-a", 0, false);
    wfm_store *b = open_store("host-b", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(a, 1, &id, &err), WF_OK);
    ck_assert_int_eq(save_marks(a, id.text, "x", "ann", false), WF_OK);
    ck_assert_int_eq(save_marks(a, id.text, "x", "ann", false), WF_OK); /* unchanged */
    ck_assert_int_eq(waiting_on(a, "x"), 1);
    ck_assert_int_eq(save_marks(a, id.text, "x", "bob", true), WF_OK); /* property changed */
    char *props = NULL;
    ck_assert_int_eq(wfm_store_props(a, id.text, &props, &err), WF_OK);
    ck_assert_str_eq(props, "who=bob\n");
    wf_free(props);
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_OK); /* another host, other names */
    ck_assert_int_eq(save_marks(b, id.text, "y", NULL, true), WF_OK);
    ck_assert_int_eq(wfm_store_lock(a, id.text, &err), WF_OK);
    ck_assert_int_eq(save_marks(a, id.text, "x", "bob", false), WF_OK); /* as a last wrote */
    ck_assert_int_eq(waiting_on(a, "x"), 1);
    ck_assert_int_eq(waiting_on(a, "y"), 0);
    ck_assert_int_eq(wfm_store_props(a, id.text, &props, &err), WF_OK);
    ck_assert_str_eq(props, "who=bob\n");
    wf_free(props);
    ck_assert_int_eq(save_marks(a, id.text, NULL, NULL, false), WF_OK);
    ck_assert_int_eq(waiting_on(a, "x"), 0);
    /* a second handle with the same owner id writes in between */
    wfm_store *a2 = open_store("host-a", 0, false);
    ck_assert_int_eq(save_marks(a, id.text, "x", NULL, false), WF_OK);
    ck_assert_int_eq(save_marks(a2, id.text, "z", NULL, false), WF_OK);
    ck_assert_int_eq(save_marks(a, id.text, "x", NULL, false), WF_OK);
    ck_assert_int_eq(waiting_on(a, "x"), 1);
    ck_assert_int_eq(waiting_on(a, "z"), 0);
    wfm_store_close(a2);
    wfm_store_close(a);
    wfm_store_close(b);
}
END_TEST

static wf_status save_as(wfm_store *s, const char *id, const char *status, int64_t timer_us)
{
    const char *bms[] = {"go"};
    wf_error err = WF_ERROR_INIT;
    wfm_store_save_rec r = {id, status, "s", 1, bms, 1, NULL, NULL, 0, timer_us, false, 0};
    return wfm_store_save(s, &r, &err);
}

static int rows_where(wfm_store *s, const char *status, int64_t due_before_us)
{
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    q.status = status;
    q.due_before_us = due_before_us;
    return count_matching(s, &q);
}

/* Saves that leave the status and timer as the last save wrote them may skip rewriting those
 * columns; every change, and anything another host wrote in between, must reach the store
 * and its queries by status and timer. */
START_TEST(test_store_status_and_timer_follow_every_save)
{
    wfm_store *a = open_store("host-a", 0, false);
    wfm_store *b = open_store("host-b", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(a, 1, &id, &err), WF_OK);
    for (int i = 0; i < 3; i++) /* the first writes the status, the others keep it */
        ck_assert_int_eq(save_as(a, id.text, "Executing", 0), WF_OK);
    ck_assert_int_eq(rows_where(a, "Executing", 0), 1);
    ck_assert_int_eq(rows_where(a, NULL, 1000), 0);
    ck_assert_int_eq(save_as(a, id.text, "Executing", 500), WF_OK); /* the timer changed */
    ck_assert_int_eq(save_as(a, id.text, "Executing", 500), WF_OK);
    ck_assert_int_eq(rows_where(a, NULL, 1000), 1);
    ck_assert_int_eq(save_as(a, id.text, "Idle", 500), WF_OK); /* the status changed */
    ck_assert_int_eq(save_as(a, id.text, "Idle", 500), WF_OK);
    ck_assert_int_eq(rows_where(a, "Executing", 0), 0);
    ck_assert_int_eq(rows_where(a, "Idle", 1000), 1);
    ck_assert_int_eq(wfm_store_release(a, id.text, &err), WF_OK);
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_OK); /* another host writes */
    ck_assert_int_eq(save_as(b, id.text, "Executing", 0), WF_OK);
    ck_assert_int_eq(wfm_store_release(b, id.text, &err), WF_OK);
    ck_assert_int_eq(wfm_store_lock(a, id.text, &err), WF_OK);
    ck_assert_int_eq(save_as(a, id.text, "Idle", 500), WF_OK); /* as a last wrote */
    ck_assert_int_eq(rows_where(a, "Executing", 0), 0);
    ck_assert_int_eq(rows_where(a, "Idle", 1000), 1);
    char *row = store_query("SELECT status || ' ' || next_timer_us FROM instances");
    ck_assert_str_eq(row, "Idle 500");
    wf_free(row);
    wfm_store_close(a);
    wfm_store_close(b);
}
END_TEST

/* ---- claiming work ------------------------------------------------------------------------- */

/* What a claim handed over, in call order. */
typedef struct claim_log {
    int count;
    char ids[16][33];
    char statuses[16][16];
    uint64_t hashes[16];
    char states[16][32];
    size_t state_lens[16];
    int64_t pending[16];
    int64_t promoted[16];
    int stop_after; /* > 0: return false after this many calls */
} claim_log;

static bool log_claim(void *ud, const wfm_store_claimed *c)
{
    claim_log *l = ud;
    ck_assert_int_lt(l->count, 16);
    int i = l->count++;
    snprintf(l->ids[i], sizeof l->ids[i], "%s", c->id);
    snprintf(l->statuses[i], sizeof l->statuses[i], "%s", c->status);
    l->hashes[i] = c->definition_hash;
    ck_assert_uint_le(c->state_len, sizeof l->states[i]);
    ck_assert(c->state_len == 0 || c->state != NULL);
    if (c->state_len)
        memcpy(l->states[i], c->state, c->state_len);
    l->state_lens[i] = c->state_len;
    l->pending[i] = c->pending_resumes;
    l->promoted[i] = c->promoted;
    return l->stop_after <= 0 || l->count < l->stop_after;
}

static claim_log claim_now(wfm_store *s, size_t max, int64_t now_us, size_t *count)
{
    claim_log l;
    memset(&l, 0, sizeof l);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_store_claim(s, max, now_us, log_claim, &l, count, &err) == WF_OK, "%s",
                  err.message);
    return l;
}

/* A new instance of definition `hash` saved as `status` with `state` (NULL: none), a timer
 * due at timer_us (0: none) and one bookmark (NULL: none), released; created one millisecond
 * after the one before. */
static wfm_store_id make_row(wfm_store *s, uint64_t hash, const char *status, const void *state,
                             size_t state_len, int64_t timer_us, const char *bookmark)
{
    wfm_store_id id;
    wf_error err = WF_ERROR_INIT;
    test_now_ms += 1;
    ck_assert_int_eq(wfm_store_create(s, hash, &id, &err), WF_OK);
    const char *bms[] = {bookmark};
    wfm_store_save_rec r = {id.text, status, state, state_len, bms, bookmark ? 1 : 0,
                            NULL,    NULL,   0,     timer_us,  true, 0};
    ck_assert_msg(wfm_store_save(s, &r, &err) == WF_OK, "%s", err.message);
    return id;
}

/* The indexes version 4 added (PostgreSQL: one, SQLite: two), as counted in the catalogue. */
static char *v4_indexes(void)
{
    return store_query(on_pg ? "SELECT count(*) FROM pg_indexes WHERE schemaname ="
                               " current_schema() AND indexname = 'instances_claimable'"
                             : "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND"
                               " name IN ('instances_claimable', 'instances_by_lease')");
}

/* A version 3 store gets version 4's claim indexes on its next writable open, and a claim
 * then reads through them. A read-only open of it is refused on PostgreSQL; on SQLite, where
 * version 4 adds nothing a read-only open reads (it never claims), it reads the store as is. */
START_TEST(test_store_version_3_is_migrated)
{
    wfm_store_id a = store_with_one_row("Executing", "state-3");
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    store_exec(on_pg ? "DROP INDEX instances_claimable;"
                     : "DROP INDEX instances_claimable; DROP INDEX instances_by_lease;");
    store_exec("UPDATE wfbridge_meta SET value = '3' WHERE key = 'schema_version';");
    ck_assert_int_eq(meta_version(), 3);

    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    o.read_only = true;
    if (on_pg) {
        assert_open_refused(&o, WF_E_STORE, "must be migrated");
    } else {
        ck_assert_int_eq(wfm_store_open(&o, &s, &err), WF_OK);
        assert_loads(s, a.text, "Executing", "state-3");
        wfm_store_close(s);
    }
    ck_assert_int_eq(meta_version(), 3);
    char *n = v4_indexes();
    ck_assert_str_eq(n, "0");
    wf_free(n);

    s = open_store("host-b", 0, false);
    ck_assert_int_eq(meta_version(), WFM_STORE_SCHEMA_VERSION);
    n = v4_indexes();
    ck_assert_str_eq(n, on_pg ? "1" : "2");
    wf_free(n);
    size_t count = 0;
    claim_log l = claim_now(s, 8, 0, &count);
    ck_assert_uint_eq(count, 1);
    ck_assert_str_eq(l.ids[0], a.text);
    ck_assert_uint_eq(l.state_lens[0], 7);
    ck_assert(memcmp(l.states[0], "state-3", 7) == 0);
    wfm_store_close(s);
}
END_TEST

static char *owner_in_store(const char *id)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT owner FROM instances WHERE id = '%s'", id);
    return store_query(sql);
}

/* A claim takes the rows that can make progress (runnable, timer due, first queued resumption
 * waited on) and no others, oldest first, with their status and state byte for byte. */
START_TEST(test_store_claim_takes_what_can_progress_oldest_first)
{
    wfm_store *a = open_store("host-a", 60000, false);
    wfm_store *b = open_store("host-b", 60000, false);
    wf_error err = WF_ERROR_INIT;
    static const unsigned char blob[] = {0x00, 0xff, 'W', 'F', 0x00, 0x80, 0x01, '\n'};
    wfm_store_id created = make_row(a, 0x1111, "Created", NULL, 0, 0, NULL);
    wfm_store_id running = make_row(a, 0x2222, "Executing", blob, sizeof blob, 0, NULL);
    wfm_store_id due = make_row(a, 0x3333, "Idle", "due", 3, 5000, "later");
    wfm_store_id not_due = make_row(a, 0x4444, "Idle", "nd", 2, 5001, "later");
    wfm_store_id resumable = make_row(a, 0x5555, "Idle", "rs", 2, 0, "approve");
    wfm_store_id waits = make_row(a, 0x6666, "Idle", "wt", 2, 0, "approve");
    wfm_store_id idle = make_row(a, 0x7777, "Idle", "id", 2, 0, "approve");
    const char *done_states[] = {"Closed", "Faulted", "Canceled", "Terminated"};
    for (int i = 0; i < 4; i++) /* a due timer does not make a completed instance runnable */
        make_row(a, 0x8888, done_states[i], NULL, 0, 10, NULL);
    wfm_store_id held = make_row(a, 0x9999, "Executing", "held", 4, 0, NULL);
    ck_assert_int_eq(wfm_store_lock(b, held.text, &err), WF_OK); /* a live lease of b */
    ck_assert_int_eq(wfm_store_enqueue_resume(b, resumable.text, "approve", "1", NULL, &err),
                     WF_OK);
    ck_assert_int_eq(wfm_store_enqueue_resume(b, resumable.text, "nope", "2", NULL, &err), WF_OK);
    /* the first queued one is not waited on: it and those behind it wait */
    ck_assert_int_eq(wfm_store_enqueue_resume(b, waits.text, "nope", "3", NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_store_enqueue_resume(b, waits.text, "approve", "4", NULL, &err), WF_OK);
    (void)not_due;
    (void)idle;

    wfm_store *c = open_store("host-c", 60000, false);
    size_t count = 99;
    claim_log l = claim_now(c, 16, 5000, &count);
    ck_assert_uint_eq(count, 4);
    ck_assert_int_eq(l.count, 4);
    const wfm_store_id *want[] = {&created, &running, &due, &resumable};
    const char *want_status[] = {"Created", "Executing", "Idle", "Idle"};
    const uint64_t want_hash[] = {0x1111, 0x2222, 0x3333, 0x5555};
    const int64_t want_pending[] = {0, 0, 0, 2};
    for (int i = 0; i < 4; i++) {
        ck_assert_str_eq(l.ids[i], want[i]->text);
        ck_assert_str_eq(l.statuses[i], want_status[i]);
        ck_assert_uint_eq(l.hashes[i], want_hash[i]);
        ck_assert_int_eq(l.pending[i], want_pending[i]);
        char *owner = owner_in_store(want[i]->text);
        ck_assert_str_eq(owner, "host-c");
        wf_free(owner);
    }
    ck_assert_uint_eq(l.state_lens[0], 0);
    ck_assert_uint_eq(l.state_lens[1], sizeof blob);
    ck_assert(memcmp(l.states[1], blob, sizeof blob) == 0);
    ck_assert_uint_eq(l.state_lens[2], 3);
    ck_assert(memcmp(l.states[2], "due", 3) == 0);
    char *owner = owner_in_store(held.text);
    ck_assert_str_eq(owner, "host-b");
    wf_free(owner);

    /* leased to c now: nobody gets them again, c neither (it is running them) */
    l = claim_now(a, 16, 5000, &count);
    ck_assert_uint_eq(count, 0);
    ck_assert_int_eq(l.count, 0);
    l = claim_now(c, 16, 5000, &count);
    ck_assert_uint_eq(count, 0);
    /* a claimed instance is saved and run by its claimer as after wfm_store_lock */
    ck_assert_int_eq(save_simple(c, due.text, "Idle", "after", true, &err), WF_OK);
    wfm_store_close(a);
    wfm_store_close(b);
    wfm_store_close(c);
}
END_TEST

/* max bounds a claim (the oldest first); a callback returning false stops the calls but the
 * leases stay taken. */
START_TEST(test_store_claim_respects_max_and_a_stopping_callback)
{
    wfm_store *a = open_store("host-a", 60000, false);
    wfm_store_id ids[5];
    for (int i = 0; i < 5; i++)
        ids[i] = make_row(a, 1, "Executing", "s", 1, 0, NULL);
    /* a claim counts each row's promoted properties (a host reads back only where some are) */
    wf_error err = WF_ERROR_INIT;
    const char *names[] = {"amount", "who"}, *values[] = {"5", "ann"};
    wfm_store_save_rec rec = {.id = ids[0].text, .status = "Executing", .state = "s",
                              .state_len = 1, .prop_names = names, .prop_values = values,
                              .prop_count = 2, .release = true};
    ck_assert_int_eq(wfm_store_lock(a, ids[0].text, &err), WF_OK);
    ck_assert_int_eq(wfm_store_save(a, &rec, &err), WF_OK);
    wfm_store *b = open_store("host-b", 60000, false);
    size_t count = 0;
    claim_log l = claim_now(b, 2, 0, &count);
    ck_assert_uint_eq(count, 2);
    ck_assert_int_eq(l.count, 2);
    ck_assert_str_eq(l.ids[0], ids[0].text);
    ck_assert_str_eq(l.ids[1], ids[1].text);
    ck_assert_int_eq(l.promoted[0], 2);
    ck_assert_int_eq(l.promoted[1], 0);
    wfm_store *c = open_store("host-c", 60000, false);
    memset(&l, 0, sizeof l);
    l.stop_after = 1;
    ck_assert_int_eq(wfm_store_claim(c, 10, 0, log_claim, &l, &count, &err), WF_OK);
    ck_assert_uint_eq(count, 3);
    ck_assert_int_eq(l.count, 1);
    ck_assert_str_eq(l.ids[0], ids[2].text);
    for (int i = 2; i < 5; i++) {
        char *owner = owner_in_store(ids[i].text);
        ck_assert_str_eq(owner, "host-c");
        wf_free(owner);
    }
    ck_assert_int_eq(wfm_store_claim(c, 10, 0, log_claim, &l, NULL, &err), WF_OK); /* no count */
    wfm_store_close(a);
    wfm_store_close(b);
    wfm_store_close(c);
}
END_TEST

/* Another owner's lease is claimed once it expired (not at its last millisecond); renewing
 * keeps claimed leases alive. */
START_TEST(test_store_claim_takes_over_expired_leases_and_renew_keeps_them)
{
    wfm_store *a = open_store("host-a", 1000, false);
    wfm_store *b = open_store("host-b", 1000, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(a, 1, &id, &err), WF_OK); /* Created, leased to a */
    size_t count = 9;
    claim_now(b, 8, 0, &count);
    ck_assert_uint_eq(count, 0);
    test_now_ms += 1000; /* the last millisecond of a's lease */
    claim_now(b, 8, 0, &count);
    ck_assert_uint_eq(count, 0);
    test_now_ms += 1;
    claim_log l = claim_now(b, 8, 0, &count);
    ck_assert_uint_eq(count, 1);
    ck_assert_str_eq(l.ids[0], id.text);
    ck_assert_int_eq(save_simple(a, id.text, "Idle", "late", false, &err), WF_E_LOCKED);
    wf_error_clear(&err);
    for (int i = 0; i < 3; i++) { /* b renews every 600 ms: its claim outlives 1000 ms */
        test_now_ms += 600;
        ck_assert_int_eq(wfm_store_renew(b, &err), WF_OK);
        claim_now(a, 8, 0, &count);
        ck_assert_uint_eq(count, 0);
    }
    test_now_ms += 1001;
    claim_now(a, 8, 0, &count);
    ck_assert_uint_eq(count, 1);
    wfm_store_close(a);
    wfm_store_close(b);
}
END_TEST

/* Each kind of claimable row (free runnable, expired lease, timer due, resumption waited on)
 * is found apart; the claim still hands out the oldest `max` of them all, in creation order,
 * and a row of two kinds (timer due and resumption waited on) takes one place only. */
START_TEST(test_store_claim_takes_the_oldest_of_every_kind_once)
{
    wfm_store *a = open_store("host-a", 1000, false);
    wfm_store *b = open_store("host-b", 60000, false);
    wfm_store *c = open_store("host-c", 60000, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id both = make_row(a, 1, "Idle", "b", 1, 10, "go");
    wfm_store_id expired;
    test_now_ms += 1;
    ck_assert_int_eq(wfm_store_create(a, 2, &expired, &err), WF_OK); /* leased to a */
    wfm_store_id running = make_row(a, 3, "Executing", "r", 1, 0, NULL);
    wfm_store_id resumable = make_row(a, 4, "Idle", "q", 1, 0, "go");
    wfm_store_id created = make_row(a, 5, "Created", NULL, 0, 0, NULL);
    ck_assert_int_eq(wfm_store_enqueue_resume(b, both.text, "go", "1", NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_store_enqueue_resume(b, resumable.text, "go", "2", NULL, &err), WF_OK);
    test_now_ms += 1001; /* a's lease of `expired` has ended */

    const wfm_store_id *want[] = {&both, &expired, &running, &resumable, &created};
    size_t count = 0;
    claim_log l = claim_now(c, 2, 5000, &count);
    ck_assert_uint_eq(count, 2);
    ck_assert_str_eq(l.ids[0], want[0]->text);
    ck_assert_str_eq(l.ids[1], want[1]->text);
    ck_assert_int_eq(l.pending[0], 1);
    l = claim_now(c, 2, 5000, &count);
    ck_assert_uint_eq(count, 2);
    ck_assert_str_eq(l.ids[0], want[2]->text);
    ck_assert_str_eq(l.ids[1], want[3]->text);
    l = claim_now(c, 8, 5000, &count);
    ck_assert_uint_eq(count, 1);
    ck_assert_str_eq(l.ids[0], want[4]->text);
    for (int i = 0; i < 5; i++) {
        char *owner = owner_in_store(want[i]->text);
        ck_assert_str_eq(owner, "host-c");
        wf_free(owner);
    }
    wfm_store_close(a);
    wfm_store_close(b);
    wfm_store_close(c);
}
END_TEST

/* The unexpired lease of a local process that died is left to wfm_store_lock. */
START_TEST(test_store_claim_leaves_a_dead_local_owner_to_lock)
{
    wf_error err = WF_ERROR_INIT;
    wfm_store *b = open_store("host-b", 60000, false);
    wfm_store_id id;
    int go[2], ready[2];
    end_holder(start_holder(b, &id, go, ready), go, ready);
    size_t count = 9;
    claim_now(b, 8, 0, &count);
    ck_assert_uint_eq(count, 0);
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_OK);
    claim_now(b, 8, 0, &count); /* now its own: b is running it */
    ck_assert_uint_eq(count, 0);
    ck_assert_int_eq(wfm_store_release(b, id.text, &err), WF_OK);
    claim_log l = claim_now(b, 8, 0, &count);
    ck_assert_uint_eq(count, 1);
    ck_assert_str_eq(l.ids[0], id.text);
    wfm_store_close(b);
}
END_TEST

/* ---- two owners claiming at once: every row is claimed exactly once ------------------------ */

enum { RACE_ROWS = 500, RACE_THREADS = 4, RACE_BATCH = 16 };

typedef struct race_owner {
    const char *name;
} race_owner;

typedef struct race {
    char (*ids)[33];       /* sorted */
    int claims[RACE_ROWS]; /* how often each row was handed out */
    pthread_mutex_t count_lock;
    pthread_barrier_t start;
} race;

typedef struct racer {
    race *r;
    race_owner *owner;
    char got[RACE_BATCH][33];
    int n, failures;
    char failure[512];
} racer;

static int cmp_id(const void *a, const void *b)
{
    return strcmp(a, b);
}

static bool race_claimed(void *ud, const wfm_store_claimed *c)
{
    racer *w = ud;
    char(*hit)[33] = bsearch(c->id, w->r->ids, RACE_ROWS, sizeof *w->r->ids, cmp_id);
    if (!hit || w->n == RACE_BATCH) {
        w->failures++;
        return true;
    }
    pthread_mutex_lock(&w->r->count_lock);
    w->r->claims[hit - w->r->ids]++;
    pthread_mutex_unlock(&w->r->count_lock);
    snprintf(w->got[w->n++], 33, "%s", c->id);
    return true;
}

/* A thread with a connection of its own: claim a batch and finish it (saved Closed and
 * released) until nothing is left. The threads of one owner and the two owners all race
 * each other: a claim never takes a lease of its own owner either. */
static void *race_worker(void *arg)
{
    racer *w = arg;
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    o.owner = w->owner->name;
    o.durability = WFM_DURABILITY_NORMAL;
    o.clock_ms = test_clock;
    o.clock_ud = &test_now_ms;
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    bool opened = wfm_store_open(&o, &s, &err) == WF_OK;
    pthread_barrier_wait(&w->r->start);
    size_t count = 1;
    while (opened && count > 0 && !w->failures) {
        w->n = 0;
        if (wfm_store_claim(s, RACE_BATCH, 0, race_claimed, w, &count, &err) != WF_OK)
            w->failures++;
        for (int i = 0; !w->failures && i < w->n; i++) {
            wfm_store_save_rec r = {w->got[i], "Closed", NULL, 0,    NULL, 0,
                                    NULL,      NULL,     0,    0,    true, 0};
            if (wfm_store_save(s, &r, &err) != WF_OK)
                w->failures++;
        }
    }
    if (!opened || w->failures)
        snprintf(w->failure, sizeof w->failure, "%s", err.message);
    wfm_store_close(s);
    return NULL;
}

START_TEST(test_store_claim_by_two_owners_at_once_hands_out_each_row_once)
{
    wfm_store *s = open_store("maker", 60000, true);
    static race r;
    memset(&r, 0, sizeof r);
    r.ids = wf_calloc(RACE_ROWS, sizeof *r.ids);
    ck_assert_ptr_nonnull(r.ids);
    wf_error err = WF_ERROR_INIT;
    for (int i = 0; i < RACE_ROWS; i++) {
        wfm_store_id id;
        ck_assert_int_eq(wfm_store_create(s, 5, &id, &err), WF_OK);
        ck_assert_int_eq(wfm_store_release(s, id.text, &err), WF_OK);
        memcpy(r.ids[i], id.text, 33);
    }
    qsort(r.ids, RACE_ROWS, sizeof *r.ids, cmp_id);
    pthread_mutex_init(&r.count_lock, NULL);
    pthread_barrier_init(&r.start, NULL, 2 * RACE_THREADS);
    race_owner owners[2] = {{"claimer-a"}, {"claimer-b"}};
    racer workers[2 * RACE_THREADS];
    pthread_t threads[2 * RACE_THREADS];
    for (int t = 0; t < 2 * RACE_THREADS; t++) {
        memset(&workers[t], 0, sizeof workers[t]);
        workers[t].r = &r;
        workers[t].owner = &owners[t % 2];
        ck_assert_int_eq(pthread_create(&threads[t], NULL, race_worker, &workers[t]), 0);
    }
    for (int t = 0; t < 2 * RACE_THREADS; t++)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < 2 * RACE_THREADS; t++)
        ck_assert_msg(workers[t].failures == 0, "thread %d: %s", t, workers[t].failure);
    for (int i = 0; i < RACE_ROWS; i++)
        ck_assert_msg(r.claims[i] == 1, "row %s claimed %d times", r.ids[i], r.claims[i]);
    char *left = store_query("SELECT count(*) FROM instances WHERE status <> 'Closed'"
                             " OR owner IS NOT NULL");
    ck_assert_str_eq(left, "0");
    wf_free(left);
    pthread_barrier_destroy(&r.start);
    pthread_mutex_destroy(&r.count_lock);
    wf_free(r.ids);
    wfm_store_close(s);
}
END_TEST

/* Bad input: max 0 claims nothing; no callback is a usage error; both write nothing. */
START_TEST(test_store_claim_of_nothing_and_without_callback)
{
    wfm_store *a = open_store("host-a", 60000, false);
    wfm_store_id id = make_row(a, 1, "Created", NULL, 0, 0, NULL);
    wfm_store_close(a);
    snapshot before = take_snapshot(path);
    wfm_store *b = open_store("host-b", 60000, false);
    claim_log l;
    memset(&l, 0, sizeof l);
    size_t count = 7;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_claim(b, 0, 0, log_claim, &l, &count, &err), WF_OK);
    ck_assert_uint_eq(count, 0);
    ck_assert_int_eq(l.count, 0);
    count = 7;
    ck_assert_int_eq(wfm_store_claim(b, 8, 0, NULL, NULL, &count, &err), WF_E_USAGE);
    WF_ASSERT_ERROR(err, WF_E_USAGE, 0, 0, "callback");
    ck_assert_str_eq(err.file, path);
    ck_assert_uint_eq(count, 0);
    wfm_store_close(b);
    assert_unchanged(&before, path);
    char *owner = owner_in_store(id.text);
    ck_assert_ptr_null(owner);
}
END_TEST

/* A read-only store refuses to claim (WF_E_STORE, the backend's message) and stays as it was. */
START_TEST(test_store_claim_on_a_read_only_store_is_refused_untouched)
{
    wfm_store *a = open_store("host-a", 60000, false);
    make_row(a, 1, "Executing", "s", 1, 0, NULL);
    wfm_store_close(a);
    snapshot before = take_snapshot(path);
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    o.read_only = true;
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&o, &s, &err), WF_OK);
    claim_log l;
    memset(&l, 0, sizeof l);
    size_t count = 7;
    ck_assert_int_eq(wfm_store_claim(s, 8, 0, log_claim, &l, &count, &err), WF_E_STORE);
    WF_ASSERT_ERROR(err, WF_E_STORE, 0, 0, on_pg ? "read-only" : "readonly");
    ck_assert_str_eq(err.file, path);
    ck_assert_uint_eq(count, 0);
    ck_assert_int_eq(l.count, 0);
    wfm_store_close(s);
    assert_unchanged(&before, path);
}
END_TEST

/* Out of memory while a claim copies its rows: WF_E_NOMEM and nothing handed out; what it
 * leased is this owner's and nobody else's (each attempt starts after the last one's leases
 * expired, so that it sees all the rows again). */
typedef struct nomem_claim {
    wfm_store *store;
    size_t calls;
} nomem_claim;

static bool count_claimed(void *ud, const wfm_store_claimed *c)
{
    (void)c;
    ((nomem_claim *)ud)->calls++;
    return true;
}

static wf_status claim_op(void *ud)
{
    nomem_claim *n = ud;
    n->calls = 0;
    wf_error err = WF_ERROR_INIT;
    size_t count = 0;
    test_now_ms += 60001;
    wf_status rc = wfm_store_claim(n->store, 200, 0, count_claimed, n, &count, &err);
    ck_assert(rc == WF_OK || (rc == WF_E_NOMEM && n->calls == 0 && count == 0));
    ck_assert(rc != WF_OK || (count == 150 && n->calls == 150));
    return rc;
}

START_TEST(test_store_claim_out_of_memory_hands_out_nothing)
{
    wfm_store *a = open_store("host-a", 60000, false);
    for (int i = 0; i < 150; i++) /* more rows than the first allocation holds */
        make_row(a, 1, "Executing", "state", 5, 0, NULL);
    nomem_claim n = {a, 0};
    unsigned refused = wf_test_nomem_loop(claim_op, &n, 100);
    if (!on_pg) /* libpq's allocations are its own */
        ck_assert_uint_gt(refused, 0);
    wfm_store *b = open_store("host-b", 60000, false);
    n.store = b;
    size_t count = 9;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_claim(b, 200, 0, count_claimed, &n, &count, &err), WF_OK);
    ck_assert_uint_eq(count, 0); /* still a's */
    wfm_store_close(a);
    wfm_store_close(b);
}
END_TEST

/* A claim after the server dropped the store's connection reconnects and runs again; the
 * lease it took stays ours through a second drop (no claim takes it again, nobody else). */
START_TEST(test_store_pg_claim_after_a_dropped_connection_reconnects)
{
    char kill_sql[256];
    PGconn *killer = session_killer(kill_sql);
    wfm_store *a = open_store("host-a", 60000, false);
    wfm_store_id id = make_row(a, 1, "Executing", "s", 1, 0, NULL);
    PGresult *killed = PQexec(killer, kill_sql);
    ck_assert_str_eq(PQgetvalue(killed, 0, 0), "1");
    PQclear(killed);
    size_t count = 0;
    claim_log l = claim_now(a, 8, 0, &count);
    ck_assert_uint_eq(count, 1);
    ck_assert_str_eq(l.ids[0], id.text);
    killed = PQexec(killer, kill_sql);
    ck_assert_str_eq(PQgetvalue(killed, 0, 0), "1");
    PQclear(killed);
    l = claim_now(a, 8, 0, &count);
    ck_assert_uint_eq(count, 0);
    char *owner = owner_in_store(id.text);
    ck_assert_str_eq(owner, "host-a");
    wf_free(owner);
    wfm_store_close(a);
    PQfinish(killer);
}
END_TEST

/* wfm_store_wake ends the next wait at once (a wait of a minute would time the test out),
 * and only that one. */
START_TEST(test_store_wake_ends_the_next_wait)
{
    wfm_store *s = open_store("host-a", 60000, true);
    wf_error err = WF_ERROR_INIT;
    bool woken = false;
    wfm_store_wake(s);
    wfm_store_wake(s); /* two wakes before a wait end that one wait */
    ck_assert_int_eq(wfm_store_wait(s, 60000, &woken, &err), WF_OK);
    ck_assert(woken);
    ck_assert_int_eq(wfm_store_wait(s, 1, &woken, &err), WF_OK);
    ck_assert(!woken);
    wfm_store_wake(NULL); /* accepted: nothing to wake */
    wfm_store_close(s);
}
END_TEST

/* Tracking records: a batch is written in one go, a record with the same instance and
 * sequence number replaces the row, record texts need not end in NUL; a read-only store
 * refuses. */
START_TEST(test_store_tracking_records_are_written_and_replaced)
{
    wfm_store *s = open_store("host-a", 60000, true);
    wf_error err = WF_ERROR_INIT;
    const char text[] = "{\"kind\": \"WorkflowInstance\", \"state\": \"Started\"}XXXX";
    const char *quoted = "{\"it's\": \"quoted \\\" text\"}";
    wfm_store_track_rec recs[] = {
        {"i-1", 1, 100, "WorkflowInstance", text, sizeof text - 5},
        {"i-1", 2, 200, "ActivityState", "{\"a\": 1}", 8},
        {"", 1, 300, "Custom", quoted, strlen(quoted)},
    };
    ck_assert_int_eq(wfm_store_put_tracking(s, recs, 3, &err), WF_OK);
    wfm_store_track_rec again = {"i-1", 2, 250, "ActivityState", "{\"a\": 2}", 8};
    ck_assert_int_eq(wfm_store_put_tracking(s, &again, 1, &err), WF_OK);
    ck_assert_int_eq(wfm_store_put_tracking(s, NULL, 0, &err), WF_OK);
    char *n = store_query("SELECT count(*) FROM tracking");
    ck_assert_str_eq(n, "3");
    wf_free(n);
    char *r = store_query("SELECT record FROM tracking WHERE instance = 'i-1' AND seq = 1");
    ck_assert_str_eq(r, "{\"kind\": \"WorkflowInstance\", \"state\": \"Started\"}");
    wf_free(r);
    r = store_query("SELECT record || ' ' || time_us FROM tracking WHERE instance = 'i-1' AND seq = 2");
    ck_assert_str_eq(r, "{\"a\": 2} 250");
    wf_free(r);
    r = store_query("SELECT record FROM tracking WHERE instance = ''");
    ck_assert_str_eq(r, "{\"it's\": \"quoted \\\" text\"}");
    wf_free(r);
    wfm_store_close(s);
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    o.read_only = true;
    ck_assert_int_eq(wfm_store_open(&o, &s, &err), WF_OK);
    ck_assert_int_eq(wfm_store_put_tracking(s, recs, 1, &err), WF_E_STORE);
    wf_error_clear(&err);
    wfm_store_close(s);
    n = store_query("SELECT count(*) FROM tracking");
    ck_assert_str_eq(n, "3");
    wf_free(n);
}
END_TEST

/* The row of `id` as the store lists it: attempts, reason, has_state, status. */
typedef struct row_seen {
    const char *id;
    bool found, has_state;
    int64_t attempts;
    char status[32], reason[256];
} row_seen;

static bool see_row(void *ud, const wfm_store_row *row)
{
    row_seen *r = ud;
    if (strcmp(row->id, r->id) != 0)
        return true;
    r->found = true;
    r->has_state = row->has_state;
    r->attempts = row->attempts;
    snprintf(r->status, sizeof r->status, "%s", row->status);
    snprintf(r->reason, sizeof r->reason, "%s", row->reason ? row->reason : "");
    return false;
}

static row_seen seen(wfm_store *s, const char *id)
{
    row_seen r = {.id = id};
    wf_error err = WF_ERROR_INIT;
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    ck_assert_int_eq(wfm_store_query_rows(s, &q, see_row, &r, &err), WF_OK);
    ck_assert(r.found);
    return r;
}

static bool note_claimed(void *ud, const wfm_store_claimed *c)
{
    *(int64_t *)ud = c->attempts;
    return true;
}

/* Attempts count the runs that never ended: a lock or a claim adds one, a save that releases
 * clears it, a release gives back its own; a suspended instance keeps its state, leaves the
 * claims and takes the next save's status. */
START_TEST(test_store_attempts_count_unfinished_runs_and_suspend_quarantines)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(s, 7, &id, &err), WF_OK);
    ck_assert_int_eq(save_simple(s, id.text, "Executing", "s1", true, &err), WF_OK);
    ck_assert_int_eq(seen(s, id.text).attempts, 0);
    ck_assert_int_eq(wfm_store_lock(s, id.text, &err), WF_OK);
    ck_assert_int_eq(seen(s, id.text).attempts, 1);
    ck_assert_int_eq(wfm_store_release(s, id.text, &err), WF_OK);
    ck_assert_int_eq(seen(s, id.text).attempts, 0);
    int64_t attempts = 0;
    size_t n = 0;
    for (int run = 1; run <= 3; run++) { /* three hosts that died holding it */
        ck_assert_int_eq(wfm_store_claim(s, 8, 0, note_claimed, &attempts, &n, &err), WF_OK);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(attempts, run);
        test_now_ms += 120000; /* the lease expires */
    }
    ck_assert_int_eq(wfm_store_lock(s, id.text, &err), WF_OK);
    ck_assert_int_eq(save_simple(s, id.text, "Executing", "s2", false, &err), WF_OK);
    ck_assert_int_eq(seen(s, id.text).attempts, 4); /* a save that keeps the lease: no end */
    ck_assert_int_eq(wfm_store_suspend(s, id.text, "it kills its host", &err), WF_OK);
    row_seen r = seen(s, id.text);
    ck_assert_str_eq(r.status, "Suspended");
    ck_assert_str_eq(r.reason, "it kills its host");
    ck_assert_int_eq(r.attempts, 0);
    ck_assert(r.has_state);
    ck_assert_int_eq(wfm_store_claim(s, 8, 0, note_claimed, &attempts, &n, &err), WF_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(wfm_store_suspend(s, id.text, "again", &err), WF_E_LOCKED); /* no lease */
    wf_error_clear(&err);
    void *state = NULL;
    size_t len = 0;
    char status[32];
    ck_assert_int_eq(wfm_store_load_state(s, id.text, &state, &len, status, NULL, &err), WF_OK);
    ck_assert(len == 2 && memcmp(state, "s2", 2) == 0);
    wf_free(state);
    ck_assert_int_eq(wfm_store_lock(s, id.text, &err), WF_OK); /* by hand */
    ck_assert_int_eq(save_simple(s, id.text, "Idle", "s3", true, &err), WF_OK);
    r = seen(s, id.text);
    ck_assert_str_eq(r.status, "Idle");
    ck_assert_str_eq(r.reason, "");
    ck_assert_int_eq(r.attempts, 0);
    wfm_store_close(s);
}
END_TEST

/* wfm_store_insert writes the row and its first state at once, released or leased; an id
 * that exists is refused and changes nothing. */
START_TEST(test_store_insert_creates_the_row_with_its_state)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id id;
    wfm_store_new_id(&id);
    const char *bms[] = {"approve"};
    const char *names[] = {"customer"};
    const char *values[] = {"contoso"};
    wfm_store_save_rec rec = {id.text, "Created", "first", 5, bms, 1, names, values, 1, 0,
                              true, 0};
    ck_assert_int_eq(wfm_store_insert(s, 9, &rec, &err), WF_OK);
    row_seen r = seen(s, id.text);
    ck_assert_str_eq(r.status, "Created");
    ck_assert(r.has_state);
    char *props = NULL;
    ck_assert_int_eq(wfm_store_props(s, id.text, &props, &err), WF_OK);
    ck_assert_str_eq(props, "customer=contoso\n");
    wf_free(props);
    rec.state = "other";
    ck_assert_int_eq(wfm_store_insert(s, 9, &rec, &err), WF_E_STORE);
    wf_error_clear(&err);
    void *state = NULL;
    size_t len = 0;
    char status[32];
    uint64_t hash = 0;
    ck_assert_int_eq(wfm_store_load_state(s, id.text, &state, &len, status, &hash, &err), WF_OK);
    ck_assert(len == 5 && memcmp(state, "first", 5) == 0);
    ck_assert_uint_eq(hash, 9);
    wf_free(state);
    int64_t attempts = 0;
    size_t n = 0;
    ck_assert_int_eq(wfm_store_claim(s, 8, 0, note_claimed, &attempts, &n, &err), WF_OK);
    ck_assert_uint_eq(n, 1); /* released: runnable */
    wfm_store_id leased;
    wfm_store_new_id(&leased);
    rec.id = leased.text;
    rec.release = false;
    ck_assert_int_eq(wfm_store_insert(s, 9, &rec, &err), WF_OK);
    ck_assert_int_eq(save_simple(s, leased.text, "Idle", "x", true, &err), WF_OK); /* ours */
    wfm_store_close(s);
}
END_TEST

/* Inserts of concurrent hosts under group commit share transactions with each other: each
 * new row holds its own first state, and an insert of an id that exists fails alone (its
 * batch's other inserts commit, the existing row keeps its state). */
typedef struct inserter {
    wfm_store *store;
    wfm_store_id ids[25];
    const char *taken; /* an id inserted before: inserting it again must fail */
    int failures, refused;
} inserter;

static void *insert_many(void *arg)
{
    inserter *in = arg;
    for (int i = 0; i < 25; i++) {
        wf_error err = WF_ERROR_INIT;
        wfm_store_new_id(&in->ids[i]);
        wfm_store_save_rec rec = {in->ids[i].text, "Created", in->ids[i].text, 32, NULL, 0,
                                  NULL, NULL, 0, 0, true, 0};
        if (wfm_store_insert(in->store, 9, &rec, &err) != WF_OK)
            in->failures++;
        if (i % 8 == 0) {
            wf_error_clear(&err);
            rec.id = in->taken;
            rec.state = "again";
            rec.state_len = 5;
            in->refused += wfm_store_insert(in->store, 9, &rec, &err) == WF_E_STORE;
        }
    }
    return NULL;
}

/* Row `id` is Created with state want[0..len). */
static void assert_stored(wfm_store *s, const char *id, const char *want, size_t want_len)
{
    wf_error err = WF_ERROR_INIT;
    void *state = NULL;
    size_t len = 0;
    char status[32];
    ck_assert_int_eq(wfm_store_load_state(s, id, &state, &len, status, NULL, &err), WF_OK);
    ck_assert(len == want_len && memcmp(state, want, len) == 0);
    ck_assert_str_eq(status, "Created");
    wf_free(state);
}

START_TEST(test_store_group_commit_inserts_of_concurrent_hosts_stand_alone)
{
    wfm_store *s = open_store("host-a", 0, true);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id first;
    wfm_store_new_id(&first);
    wfm_store_save_rec rec = {first.text, "Created", "first", 5, NULL, 0, NULL, NULL, 0, 0,
                              true, 0};
    ck_assert_int_eq(wfm_store_insert(s, 9, &rec, &err), WF_OK);
    inserter ins[8];
    pthread_t threads[8];
    for (int t = 0; t < 8; t++) {
        ins[t] = (inserter){.store = s, .taken = first.text};
        pthread_create(&threads[t], NULL, insert_many, &ins[t]);
    }
    for (int t = 0; t < 8; t++)
        pthread_join(threads[t], NULL);
    uint64_t commits = 0, saves = 0;
    wfm_store_counters(s, &commits, &saves);
    ck_assert_uint_eq(saves, 1 + 8 * 25);
    for (int t = 0; t < 8; t++) {
        ck_assert_int_eq(ins[t].failures, 0);
        ck_assert_int_eq(ins[t].refused, 4);
        for (int i = 0; i < 25; i++)
            assert_stored(s, ins[t].ids[i].text, ins[t].ids[i].text, 32);
    }
    assert_stored(s, first.text, "first", 5);
    wfm_store_close(s);
}
END_TEST

/* wfm_store_insert_many (the commit of migrate-instances): the batch's rows in one
 * transaction, each with its state; a batch holding one id that exists fails naming it and
 * writes none of its rows (PostgreSQL sends the batch in one pipeline). */
START_TEST(test_store_insert_many_writes_the_batch_all_or_none)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    enum { N = 40, DUP = N / 2 + 5 };
    wfm_store_id ids[N];
    wfm_store_save_rec recs[N];
    const char *bms[] = {"IExpenseService.Approved"};
    for (int i = 0; i < N; i++) {
        wfm_store_new_id(&ids[i]);
        recs[i] = (wfm_store_save_rec){ids[i].text, "Idle", ids[i].text, 32, bms, 1, NULL,
                                       NULL, 0, 1000 + i, true, 0};
    }
    uint64_t commits = 0, saves = 0, commits_after = 0, saves_after = 0;
    wfm_store_counters(s, &commits, &saves);
    ck_assert_int_eq(wfm_store_insert_many(s, 9, recs, N / 2, &err), WF_OK);
    wfm_store_counters(s, &commits_after, &saves_after);
    ck_assert_uint_eq(commits_after, commits + 1);
    ck_assert_uint_eq(saves_after, saves + N / 2);
    recs[DUP].id = ids[3].text;
    ck_assert_int_eq(wfm_store_insert_many(s, 9, recs + N / 2, N / 2, &err), WF_E_STORE);
    ck_assert_msg(strstr(err.message, ids[3].text), "%s", err.message);
    wf_error_clear(&err);
    for (int i = 0; i < N; i++) {
        void *state = NULL;
        size_t len = 0;
        char status[32];
        wf_status rc = wfm_store_load_state(s, ids[i].text, &state, &len, status, NULL, &err);
        wf_error_clear(&err);
        if (i >= N / 2) { /* the failed batch wrote nothing */
            ck_assert_int_ne(rc, WF_OK);
            continue;
        }
        ck_assert_int_eq(rc, WF_OK);
        ck_assert(len == 32 && memcmp(state, ids[i].text, 32) == 0);
        ck_assert_str_eq(status, "Idle");
        ck_assert_str_eq(seen(s, ids[i].text).status, "Idle");
        wf_free(state);
    }
    wfm_store_close(s);
}
END_TEST

/* The tests both backends run. */
static void add_shared_core(TCase *core)
{
    tcase_add_test(core, test_store_row_lockable_follows_the_lease_rule);
    tcase_add_test(core, test_store_wake_ends_the_next_wait);
    tcase_add_test(core, test_store_tracking_records_are_written_and_replaced);
    tcase_add_test(core, test_store_bookmarks_and_props_follow_every_save);
    tcase_add_test(core, test_store_status_and_timer_follow_every_save);
    tcase_add_test(core, test_store_round_trip_keeps_state_bookmarks_and_props);
    tcase_add_test(core, test_store_query_by_status_property_bookmark_and_timer);
    tcase_add_test(core, test_store_lease_blocks_second_host_until_released);
    tcase_add_test(core, test_store_create_under_given_ids);
    tcase_add_test(core, test_store_expired_lease_of_killed_process_is_taken_over);
    tcase_add_test(core, test_store_lease_of_dead_local_process_is_taken_over_at_once);
    tcase_add_test(core, test_store_parallel_first_open_of_a_new_file_all_succeed);
    tcase_add_test(core, test_store_read_only_reads_and_never_writes);
    tcase_add_test(core, test_store_group_commit_writes_every_save_of_concurrent_hosts);
    tcase_add_test(core, test_store_group_commit_of_announced_savers_writes_every_save);
    tcase_add_test(core, test_store_queued_resumes_are_deleted_by_the_save_that_applies_them);
    tcase_add_test(core, test_store_version_1_is_migrated);
    tcase_add_test(core, test_store_version_3_is_migrated);
    tcase_add_test(core, test_store_attempts_count_unfinished_runs_and_suspend_quarantines);
    tcase_add_test(core, test_store_insert_creates_the_row_with_its_state);
    tcase_add_test(core, test_store_group_commit_inserts_of_concurrent_hosts_stand_alone);
    tcase_add_test(core, test_store_insert_many_writes_the_batch_all_or_none);
    tcase_add_test(core, test_store_claim_takes_what_can_progress_oldest_first);
    tcase_add_test(core, test_store_claim_respects_max_and_a_stopping_callback);
    tcase_add_test(core, test_store_claim_takes_over_expired_leases_and_renew_keeps_them);
    tcase_add_test(core, test_store_claim_takes_the_oldest_of_every_kind_once);
    tcase_add_test(core, test_store_claim_leaves_a_dead_local_owner_to_lock);
    tcase_add_test(core, test_store_claim_by_two_owners_at_once_hands_out_each_row_once);
}

static void add_shared_bad_input(TCase *bad)
{
    tcase_add_test(bad, test_store_foreign_database_is_refused_untouched);
    tcase_add_test(bad, test_store_newer_schema_is_refused_untouched);
    tcase_add_test(bad, test_store_meta_without_application_is_refused_untouched);
    tcase_add_test(bad, test_store_other_application_is_refused_untouched);
    tcase_add_test(bad, test_store_missing_tables_are_refused_untouched);
    tcase_add_test(bad, test_store_read_only_refuses_a_store_to_migrate);
    tcase_add_test(bad, test_store_next_schema_version_is_refused_untouched);
    tcase_add_test(bad, test_store_claim_of_nothing_and_without_callback);
    tcase_add_test(bad, test_store_claim_on_a_read_only_store_is_refused_untouched);
}

/* LISTEN/NOTIFY: a waiting host wakes for a resumption another process queues and for an
 * instance saved runnable and unleased, not for an idle save. */
START_TEST(test_store_pg_wait_wakes_on_announced_work)
{
    wfm_store *a = open_store("host-a", 0, false);
    wfm_store *b = open_store("host-b", 0, false);
    wf_error err = WF_ERROR_INIT;
    bool woken = true;
    ck_assert_int_eq(wfm_store_wait(a, 1, &woken, &err), WF_OK); /* now listening */
    wfm_store_id id;
    ck_assert_int_eq(wfm_store_create(b, 7, &id, &err), WF_OK);
    ck_assert_int_eq(save_simple(b, id.text, "Idle", "x", false, &err), WF_OK);
    ck_assert_int_eq(wfm_store_wait(a, 50, &woken, &err), WF_OK);
    ck_assert(!woken);
    ck_assert_int_eq(wfm_store_enqueue_resume(b, id.text, "approve", "1", NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_store_wait(a, 30000, &woken, &err), WF_OK);
    ck_assert(woken);
    ck_assert_int_eq(save_simple(b, id.text, "Executing", "y", true, &err), WF_OK);
    ck_assert_int_eq(wfm_store_wait(a, 30000, &woken, &err), WF_OK);
    ck_assert(woken);
    wfm_store_close(a);
    wfm_store_close(b);
}
END_TEST

Suite *modern_store_suite(void)
{
    Suite *s = suite_create("modern_store");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_set_timeout(core, 60);
    add_shared_core(core);
    tcase_add_test(core, test_store_read_only_reads_another_users_store);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, test_store_corrupt_file_is_refused_untouched);
    add_shared_bad_input(bad);
    tcase_add_test(bad, test_store_corrupt_id_index_is_refused_untouched);
    tcase_add_test(bad, test_store_id_index_not_matching_rows_is_refused_untouched);
    tcase_add_test(bad, test_store_missing_empty_and_tableless_files_are_refused_by_strict_opens);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_add_checked_fixture(nomem, setup, teardown);
    tcase_add_test(nomem, test_store_claim_out_of_memory_hands_out_nothing);
    suite_add_tcase(s, nomem);
    return s;
}

/* The same store tests on PostgreSQL (those that are not about SQLite files), plus its
 * connection faults. Without WFBRIDGE_TEST_PG the suite is empty and says so. */
Suite *modern_store_pg_suite(void)
{
    Suite *s = suite_create("modern_store_pg");
    if (!wf_test_pg_available("modern_store_pg"))
        return s;
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup_pg, teardown_pg);
    tcase_set_timeout(core, 60);
    add_shared_core(core);
    tcase_add_test(core, test_store_pg_dropped_connection_is_reconnected_and_saves_apply_once);
    tcase_add_test(core, test_store_pg_wait_wakes_on_announced_work);
    tcase_add_test(core, test_store_pg_claim_after_a_dropped_connection_reconnects);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_checked_fixture(bad, setup_pg, teardown_pg);
    add_shared_bad_input(bad);
    tcase_add_test(bad, test_store_pg_unreachable_server_and_wrong_user_are_clear_errors);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_add_checked_fixture(nomem, setup_pg, teardown_pg);
    tcase_add_test(nomem, test_store_claim_out_of_memory_hands_out_nothing);
    suite_add_tcase(s, nomem);
    return s;
}

/* test_store.c — the SQLite instance store: round trip, queries, leases across hosts and
 * processes, group commit under concurrent savers, and refusal of corrupt, foreign and newer
 * stores (which must stay byte-for-byte untouched). */
#include <check.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../../modern/wfm_store.h"
#include "../wf_test_util.h"

static char dir[256];
static char path[512];

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(path, sizeof path, "%s/store.db", dir);
}

static void teardown(void)
{
    wf_test_tmpdir_remove(dir);
}

static wfm_store *open_store(const char *owner, int64_t lease_ms, bool group)
{
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    o.owner = owner;
    o.lease_ms = lease_ms;
    o.group_commit = group;
    o.durability = WFM_DURABILITY_NORMAL;
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
        /* Another host process takes a short lease and dies without releasing it. */
        wfm_store_opts o = WFM_STORE_OPTS_INIT;
        o.path = path;
        o.owner = "host-dying";
        o.lease_ms = 50;
        wfm_store *c = NULL;
        wf_error e = WF_ERROR_INIT;
        if (wfm_store_open(&o, &c, &e) != WF_OK || wfm_store_lock(c, id.text, &e) != WF_OK)
            _exit(3);
        _exit(0); /* no close, no release: like SIGKILL */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_E_LOCKED); /* lease still live */
    wf_error_clear(&err);
    usleep(120 * 1000); /* let the 50 ms lease lapse */
    ck_assert_int_eq(wfm_store_lock(b, id.text, &err), WF_OK);
    ck_assert_int_eq(save_simple(b, id.text, "Idle", "taken", false, &err), WF_OK);
    wfm_store_close(b);
}
END_TEST

typedef struct saver {
    wfm_store *store;
    wfm_store_id ids[25];
    int failures;
} saver;

static void *save_many(void *arg)
{
    saver *sv = arg;
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < 25; i++) {
            char blob[64];
            snprintf(blob, sizeof blob, "%s-%d", sv->ids[i].text, round);
            wf_error err = WF_ERROR_INIT;
            if (save_simple(sv->store, sv->ids[i].text, round == 3 ? "Closed" : "Idle", blob,
                            false, &err) != WF_OK)
                sv->failures++;
        }
    return NULL;
}

START_TEST(test_store_group_commit_writes_every_save_of_concurrent_hosts)
{
    wfm_store *s = open_store("host-a", 0, true);
    wf_error err = WF_ERROR_INIT;
    saver savers[8];
    pthread_t threads[8];
    for (int t = 0; t < 8; t++) {
        savers[t].store = s;
        savers[t].failures = 0;
        for (int i = 0; i < 25; i++)
            ck_assert_int_eq(wfm_store_create(s, 9, &savers[t].ids[i], &err), WF_OK);
    }
    for (int t = 0; t < 8; t++)
        pthread_create(&threads[t], NULL, save_many, &savers[t]);
    for (int t = 0; t < 8; t++)
        pthread_join(threads[t], NULL);
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
END_TEST

/* ---- bad input: the store must be refused and left byte-for-byte as it was ------------- */

static void assert_refused_unchanged(wf_status want, const char *needle)
{
    size_t before_len = 0, after_len = 0;
    char *before = wf_test_read_file(path, &before_len);
    ck_assert_ptr_nonnull(before);
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&o, &s, &err), want);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err.message, needle) != NULL, "'%s' not in '%s'", needle, err.message);
    ck_assert_str_eq(err.file, path);
    char *after = wf_test_read_file(path, &after_len);
    ck_assert_uint_eq(before_len, after_len);
    ck_assert(memcmp(before, after, before_len) == 0);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", path);
    ck_assert_int_ne(access(wal, F_OK), 0);
    wf_free(before);
    wf_free(after);
}

static void make_sqlite(const char *sql)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
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
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db,
                                        "SELECT value FROM wfbridge_meta"
                                        " WHERE key = 'schema_version'",
                                        -1, &st, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* A version 1 store (as wfbridge wrote it before pending_resumes existed) is migrated in
 * place: its rows stay, the new table appears, the recorded version becomes 2. */
START_TEST(test_store_version_1_is_migrated)
{
    wfm_store *s = open_store("host-a", 0, false);
    wf_error err = WF_ERROR_INIT;
    wfm_store_id a;
    ck_assert_int_eq(wfm_store_create(s, 7, &a, &err), WF_OK);
    ck_assert_int_eq(save_simple(s, a.text, "Idle", "state-1", true, &err), WF_OK);
    wfm_store_close(s);
    ck_assert_int_eq(meta_version(), WFM_STORE_SCHEMA_VERSION);
    make_sqlite("DROP TABLE pending_resumes;"
                "UPDATE wfbridge_meta SET value = '1' WHERE key = 'schema_version';");
    ck_assert_int_eq(meta_version(), 1);

    s = open_store("host-b", 0, false);
    ck_assert_int_eq(meta_version(), 2);
    void *blob = NULL;
    size_t len = 0;
    char status[32];
    ck_assert_int_eq(wfm_store_load_state(s, a.text, &blob, &len, status, NULL, &err), WF_OK);
    ck_assert_str_eq(status, "Idle");
    ck_assert_uint_eq(len, 7);
    ck_assert(memcmp(blob, "state-1", 7) == 0);
    wf_free(blob);
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
    make_sqlite("CREATE TABLE customers(id INTEGER); INSERT INTO customers VALUES(1);");
    assert_refused_unchanged(WF_E_STORE, "not a wfbridge instance store");
}
END_TEST

START_TEST(test_store_newer_schema_is_refused_untouched)
{
    make_sqlite("CREATE TABLE wfbridge_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "INSERT INTO wfbridge_meta VALUES('schema_version', '99');");
    assert_refused_unchanged(WF_E_STORE, "newer");
}
END_TEST

START_TEST(test_store_next_schema_version_is_refused_untouched)
{
    make_sqlite("CREATE TABLE wfbridge_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "INSERT INTO wfbridge_meta VALUES('application', 'wfbridge-instance-store');"
                "INSERT INTO wfbridge_meta VALUES('schema_version', '3');");
    assert_refused_unchanged(WF_E_STORE, "version 3 is newer");
}
END_TEST

Suite *modern_store_suite(void)
{
    Suite *s = suite_create("modern_store");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_set_timeout(core, 60);
    tcase_add_test(core, test_store_round_trip_keeps_state_bookmarks_and_props);
    tcase_add_test(core, test_store_query_by_status_property_bookmark_and_timer);
    tcase_add_test(core, test_store_lease_blocks_second_host_until_released);
    tcase_add_test(core, test_store_expired_lease_of_killed_process_is_taken_over);
    tcase_add_test(core, test_store_group_commit_writes_every_save_of_concurrent_hosts);
    tcase_add_test(core, test_store_queued_resumes_are_deleted_by_the_save_that_applies_them);
    tcase_add_test(core, test_store_version_1_is_migrated);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, test_store_corrupt_file_is_refused_untouched);
    tcase_add_test(bad, test_store_foreign_database_is_refused_untouched);
    tcase_add_test(bad, test_store_newer_schema_is_refused_untouched);
    tcase_add_test(bad, test_store_next_schema_version_is_refused_untouched);
    suite_add_tcase(s, bad);
    return s;
}

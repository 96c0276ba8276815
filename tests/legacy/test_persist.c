/* test_persist.c — legacy persistence: the executor's versioned state blob (instance tree,
 * scheduler, queues, timers, kept compensation contexts) saved at a persistence point and
 * continued in a fresh executor, the SQLite store (one blob per instance, one transaction per
 * save), and corrupt, truncated, foreign or unknown-version blobs refused with WF_E_CORRUPT. */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../../legacy/wfl_exec_int.h" /* the xact fields a corrupt blob carries */
#include "../../legacy/wfl_store.h"
#include "../wf_test_util.h"
#include "test_exec.h"

typedef struct saver {
    wfl_store *store;
    int saves;
} saver;

static wf_status save_to_store(void *ud, wfl_exec *ex, wf_error *err)
{
    saver *s = ud;
    void *blob = NULL;
    size_t len = 0;
    wf_status rc = wfl_exec_save(ex, &blob, &len, err);
    if (rc == WF_OK)
        rc = wfl_store_save(s->store, wfl_exec_instance_id(ex),
                            wfl_exec_state_name(wfl_exec_state_get(ex)), blob, len, err);
    wf_free(blob);
    s->saves++;
    return rc;
}

/* Replace e->ex by an executor restored from its own blob. */
static void reload(xt_env *e)
{
    void *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(wfl_exec_save(e->ex, &blob, &len, NULL), WF_OK);
    wfl_exec_destroy(e->ex);
    e->ex = NULL;
    wfl_exec_opts o = xt_opts(e);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_exec_restore(e->def, &o, blob, len, &e->ex, &err) == WF_OK, "%s",
                  err.message);
    wf_free(blob);
}

START_TEST(test_round_trip_at_a_persistence_point)
{
    const char *dir = wf_test_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/legacy.db", dir);
    saver s = {NULL, 0};
    ck_assert_int_eq(wfl_store_open(path, &s.store, NULL), WF_OK);
    xt_env e;
    xt_load(&e, "txn.xoml", NULL);
    wfl_exec_opts o = xt_opts(&e);
    o.persist = save_to_store;
    o.persist_ud = &s;
    ck_assert_int_eq(wfl_exec_create(e.def, NULL, &o, &e.ex, NULL), WF_OK);
    xt_set(&e, "Limit", "2");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(s.saves, 1); /* TransactionScope closed */
    wfl_exec_destroy(e.ex);
    e.ex = NULL;

    /* the blob saved when the scope closed: the loop has not run yet */
    void *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(wfl_store_load(s.store, "test-instance", &blob, &len, NULL), WF_OK);
    wfl_exec_opts plain = xt_opts(&e);
    ck_assert_int_eq(wfl_exec_restore(e.def, &plain, blob, len, &e.ex, NULL), WF_OK);
    wf_free(blob);
    ck_assert_str_eq(wfl_exec_instance_id(e.ex), "test-instance");
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    ck_assert_int_eq(xt_int(&e, "Count"), 0);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_int(&e, "Count"), 2);
    ck_assert(xt_waits_on(&e, "ITestService.Approved"));
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"ann\""), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "AB");
    xt_free(&e);
    wfl_store_close(s.store);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_kept_contexts_compensate_after_reload)
{
    xt_env e;
    xt_load(&e, "txn.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Limit", "2");
    xt_set(&e, "Flag", "true");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    reload(&e);
    ck_assert(xt_waits_on(&e, "ITestService.Approved"));
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"ann\""), WFL_EXEC_FAULTED);
    /* both While iterations were kept for compensation and undone newest first */
    ck_assert_str_eq(xt_str(&e, "Log"), "A21");
    xt_free(&e);
}
END_TEST

START_TEST(test_state_machine_continues_in_a_fresh_executor)
{
    xt_env e;
    xt_load(&e, "statemachine.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"alice\""), WFL_EXEC_IDLE);
    reload(&e);
    int64_t due;
    ck_assert(wfl_exec_next_timer(e.ex, &due)); /* the parent state's timer survived */
    ck_assert(xt_waits_on(&e, "ITestService.Scored"));
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Scored", "{\"Approver\":\"bob\",\"Score\":3}"),
                     WFL_EXEC_IDLE);
    reload(&e);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"x\""), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "ABC");
    ck_assert_int_eq(xt_int(&e, "Score"), 3);
    xt_free(&e);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------------- */
static void blob_of(xt_env *e, const char *file, void **blob, size_t *len)
{
    xt_load(e, file, NULL);
    xt_start(e);
    ck_assert_int_eq(xt_run(e), WFL_EXEC_IDLE);
    ck_assert_int_eq(wfl_exec_save(e->ex, blob, len, NULL), WF_OK);
}

static void expect_corrupt(xt_env *e, const void *blob, size_t len, const char *needle)
{
    wfl_exec *ex = (wfl_exec *)e; /* must come back NULL */
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_exec_restore(e->def, NULL, blob, len, &ex, &err), WF_E_CORRUPT);
    ck_assert_ptr_null(ex);
    ck_assert_msg(strstr(err.message, needle) != NULL, "'%s' not in '%s'", needle, err.message);
}

START_TEST(test_damaged_blobs_are_refused)
{
    xt_env e;
    void *blob;
    size_t len;
    blob_of(&e, "listen.xoml", &blob, &len);
    unsigned char *copy = wf_malloc(len);
    memcpy(copy, blob, len);
    copy[len / 2] ^= 0x5a;
    expect_corrupt(&e, copy, len, "checksum");
    expect_corrupt(&e, blob, len - 3, "truncated");
    expect_corrupt(&e, blob, 10, "not a legacy instance blob");
    memcpy(copy, blob, len);
    copy[4] = 99; /* version */
    expect_corrupt(&e, copy, len, "unknown blob version 99");
    memcpy(copy, "XXXX", 4);
    expect_corrupt(&e, copy, len, "not a legacy instance blob");
    /* version 1 (fixed-width fields, before common/wf_codec) is refused by name */
    memcpy(copy, blob, len);
    copy[4] = 1;
    wfl_exec *old = (wfl_exec *)&e;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_exec_restore(e.def, NULL, copy, len, &old, &err), WF_E_STORE);
    ck_assert_ptr_null(old);
    ck_assert_ptr_nonnull(strstr(err.message, "blob version 1"));
    wf_free(copy);
    /* the same bytes are still fine */
    wfl_exec *ex = NULL;
    ck_assert_int_eq(wfl_exec_restore(e.def, NULL, blob, len, &ex, NULL), WF_OK);
    wfl_exec_destroy(ex);
    wf_free(blob);
    xt_free(&e);
}
END_TEST

START_TEST(test_blob_of_another_definition_is_refused)
{
    xt_env e, other;
    void *blob;
    size_t len;
    blob_of(&e, "listen.xoml", &blob, &len);
    xt_load(&other, "cancel.xoml", NULL);
    wfl_exec *ex = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_exec_restore(other.def, NULL, blob, len, &ex, &err), WF_E_CORRUPT);
    ck_assert_ptr_null(ex);
    wf_free(blob);
    xt_free(&other);
    xt_free(&e);
}
END_TEST

/* Sixteen processes open one legacy store that does not exist yet at the same moment
 * (`run-legacy --store new.db` in parallel): the schema is created once, under the write
 * lock, and every process saves its instance. */
START_TEST(test_store_parallel_first_open_of_a_new_file_all_succeed)
{
    enum { CHILDREN = 16 };
    char dir[512], db[600];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(db, sizeof db, "%s/new.db", dir);
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
            wfl_store *st = NULL;
            wf_error e = WF_ERROR_INIT;
            char id[16];
            snprintf(id, sizeof id, "i%d", i);
            if (wfl_store_open(db, &st, &e) != WF_OK ||
                wfl_store_save(st, id, "Idle", "abc", 3, &e) != WF_OK) {
                fprintf(stderr, "child %d: %s\n", i, e.message);
                _exit(3);
            }
            wfl_store_close(st);
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
    wfl_store *st = NULL;
    ck_assert_int_eq(wfl_store_open(db, &st, NULL), WF_OK);
    size_t n = 0;
    ck_assert_int_eq(wfl_store_count(st, &n, NULL), WF_OK);
    ck_assert_uint_eq(n, CHILDREN);
    wfl_store_close(st);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A file with the legacy store's meta table but not the rest, or another application's
 * format key, is refused on open before anything runs or writes, left byte for byte. */
START_TEST(test_store_incomplete_or_foreign_meta_is_refused_untouched)
{
    static const char *const files[] = {
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES('schema_version', '1');"
        "INSERT INTO meta VALUES('format', 'wfbridge-legacy');",
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES('schema_version', '1');"
        "INSERT INTO meta VALUES('format', 'someone-else');"
        "CREATE TABLE instances(id TEXT PRIMARY KEY, status TEXT NOT NULL, blob BLOB NOT NULL);",
    };
    const char *dir = wf_test_tmpdir();
    char db[512];
    snprintf(db, sizeof db, "%s/meta.db", dir);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        remove(db);
        sqlite3 *raw = NULL;
        ck_assert_int_eq(sqlite3_open(db, &raw), SQLITE_OK);
        ck_assert_int_eq(sqlite3_exec(raw, files[i], NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(raw);
        size_t before_len = 0, after_len = 0;
        char *before = wf_test_read_file(db, &before_len);
        wfl_store *st = NULL;
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(wfl_store_open(db, &st, &err), WF_E_CORRUPT);
        ck_assert_ptr_null(st);
        WF_ASSERT_ERROR(err, WF_E_CORRUPT, 0, 0, "not a wfbridge legacy store");
        ck_assert_str_eq(err.file, db);
        char *after = wf_test_read_file(db, &after_len);
        ck_assert_uint_eq(after_len, before_len);
        ck_assert(memcmp(after, before, before_len) == 0);
        wf_free(before);
        wf_free(after);
    }
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_store_keeps_blobs_and_refuses_foreign_files)
{
    const char *dir = wf_test_tmpdir();
    char db[512];
    snprintf(db, sizeof db, "%s/s.db", dir);
    wfl_store *st = NULL;
    ck_assert_int_eq(wfl_store_open(db, &st, NULL), WF_OK);
    ck_assert_int_eq(wfl_store_save(st, "i1", "Idle", "abc", 3, NULL), WF_OK);
    ck_assert_int_eq(wfl_store_save(st, "i1", "Closed", "defg", 4, NULL), WF_OK);
    void *blob;
    size_t len;
    ck_assert_int_eq(wfl_store_load(st, "i1", &blob, &len, NULL), WF_OK);
    ck_assert_uint_eq(len, 4);
    ck_assert(memcmp(blob, "defg", 4) == 0);
    wf_free(blob);
    char status[32];
    ck_assert_int_eq(wfl_store_status(st, "i1", status, sizeof status, NULL), WF_OK);
    ck_assert_str_eq(status, "Closed");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_store_load(st, "nope", &blob, &len, &err), WF_E_NOTFOUND);
    ck_assert_ptr_null(blob);
    ck_assert_ptr_nonnull(strstr(err.message, "nope"));
    size_t n;
    ck_assert_int_eq(wfl_store_count(st, &n, NULL), WF_OK);
    ck_assert_uint_eq(n, 1);
    wfl_store_close(st);

    /* a corrupt blob read from the store fails to restore; the store row is untouched */
    xt_env e;
    xt_load(&e, "listen.xoml", NULL);
    ck_assert_int_eq(wfl_store_open(db, &st, NULL), WF_OK);
    ck_assert_int_eq(wfl_store_load(st, "i1", &blob, &len, NULL), WF_OK);
    wfl_exec *ex = NULL;
    ck_assert_int_eq(wfl_exec_restore(e.def, NULL, blob, len, &ex, NULL), WF_E_CORRUPT);
    ck_assert_ptr_null(ex);
    wf_free(blob);
    ck_assert_int_eq(wfl_store_load(st, "i1", &blob, &len, NULL), WF_OK);
    ck_assert(len == 4 && memcmp(blob, "defg", 4) == 0);
    wf_free(blob);
    wfl_store_close(st);
    xt_free(&e);

    /* not a database: refused, left as it was */
    const char *junk = wf_test_write_file(dir, "junk.db", "this is not sqlite, just text\n");
    char junk_path[512];
    snprintf(junk_path, sizeof junk_path, "%s", junk);
    wf_error_clear(&err);
    st = (wfl_store *)&err;
    ck_assert_int_eq(wfl_store_open(junk_path, &st, &err), WF_E_CORRUPT);
    ck_assert_ptr_null(st);
    char *text = wf_test_read_file(junk_path, &len);
    ck_assert_str_eq(text, "this is not sqlite, just text\n");
    wf_free(text);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A payload the fuzzer found (two Listen branches sharing one queue id): restoring it and
 * firing its timers must not touch freed memory. The header is made here, as the fuzz target
 * does. */
START_TEST(test_fuzzed_blob_with_shared_queue_is_safe)
{
    xt_env e;
    xt_load(&e, "fuzz.xoml", NULL);
    size_t n;
    unsigned char *payload = (unsigned char *)wf_test_read_file(
        "tests/legacy/data/exec/bad/listen_shared_queue.payload", &n);
    ck_assert_ptr_nonnull(payload);
    unsigned char *blob = wf_malloc(n + 24);
    memcpy(blob, "WFLX\x02\0\0\0", 8); /* blob version 2 */
    uint64_t sum = wf_hash_bytes(payload, n);
    for (int i = 0; i < 8; i++) {
        blob[8 + i] = (unsigned char)((uint64_t)n >> (8 * i));
        blob[16 + i] = (unsigned char)(sum >> (8 * i));
    }
    memcpy(blob + 24, payload, n);
    wfl_exec *ex = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfl_exec_restore(e.def, NULL, blob, n + 24, &ex, &err);
    /* the payload must stay readable (and consistent) to test the fix */
    ck_assert_msg(rc == WF_OK, "%s", err.message);
    wfl_exec_state st;
    wfl_exec_fire_timers(ex, INT64_MAX, &st, NULL);
    wfl_exec_destroy(ex);
    wf_free(blob);
    wf_free(payload);
    xt_free(&e);
}
END_TEST

/* ---- restored state checked against the definition ------------------------------------------ */
enum field { F_PHASE, F_FLAGS, F_CURSOR, F_AUX, F_COUNT, F_STATUS };

static wfl_act *act_named(wfl_exec *ex, const char *name)
{
    for (size_t i = 0; i < ex->def->node_count; i++) {
        wfl_act *a = wfl_inst_act_at(ex->inst, i);
        if (a && strcmp(wfl_act_name(a), name) == 0)
            return a;
    }
    ck_abort_msg("no activity %s", name);
    return NULL;
}

/* Set one field of `name` in e->ex to `v`, save (a valid checksum), and check the restore
 * refuses it naming the instance and the activity; then put the field back. */
static void expect_refused_as(xt_env *e, const char *name, enum field f, int32_t v,
                              const char *blamed)
{
    wfl_act *a = act_named(e->ex, name);
    xact *x = wfl_act_exec(a);
    ck_assert_msg(x != NULL || f == F_STATUS, "%s was never executed", name);
    xact keep = x ? *x : (xact){0};
    wfl_status st = wfl_act_status(a);
    switch (f) {
    case F_PHASE:
        x->phase = (uint32_t)v;
        break;
    case F_FLAGS:
        x->flags = (uint32_t)v;
        break;
    case F_CURSOR:
        x->cursor = v;
        break;
    case F_AUX:
        x->aux = v;
        break;
    case F_COUNT:
        x->count = v;
        break;
    case F_STATUS:
        wfl_act_set_status(a, (wfl_status)v);
        break;
    }
    void *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(wfl_exec_save(e->ex, &blob, &len, NULL), WF_OK);
    if (x)
        *x = keep;
    wfl_act_set_status(a, st);
    char needle[128];
    snprintf(needle, sizeof needle, "instance 'test-instance': activity '%s' has", blamed);
    wfl_exec *ex = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_exec_restore(e->def, NULL, blob, len, &ex, &err) == WF_E_CORRUPT,
                  "%s field %d = %d was restored", name, (int)f, (int)v);
    ck_assert_ptr_null(ex);
    ck_assert_msg(strstr(err.message, needle) != NULL, "'%s' not in '%s'", needle, err.message);
    wf_free(blob);
}

static void expect_refused(xt_env *e, const char *name, enum field f, int32_t v)
{
    expect_refused_as(e, name, f, v, name);
}

/* The unmutated state still restores and runs on (the mutations were put back). */
static void expect_restores(xt_env *e)
{
    void *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(wfl_exec_save(e->ex, &blob, &len, NULL), WF_OK);
    wfl_exec *ex = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_exec_restore(e->def, NULL, blob, len, &ex, &err) == WF_OK, "%s", err.message);
    wfl_exec_destroy(ex);
    wf_free(blob);
}

START_TEST(test_waiting_listen_with_bad_fields_is_refused)
{
    xt_env e;
    xt_load(&e, "listen.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    expect_refused(&e, "listen1", F_CURSOR, 2); /* two branches */
    expect_refused(&e, "listen1", F_CURSOR, -2);
    expect_refused(&e, "listen1", F_PHASE, 7);
    expect_refused(&e, "listen1", F_FLAGS, 0x100);
    expect_refused_as(&e, "onApproved", F_STATUS, WFL_ST_EXECUTING, "listen1"); /* a loser */
    expect_refused(&e, "ExecFlow", F_CURSOR, 9);
    expect_refused(&e, "ExecFlow", F_STATUS, WFL_ST_CLOSED); /* listen1 still runs */
    expect_restores(&e);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "{\"Approver\": \"ann\"}"),
                     WFL_EXEC_CLOSED);
    xt_free(&e);
}
END_TEST

START_TEST(test_while_in_third_iteration_with_bad_fields_is_refused)
{
    xt_env e;
    xt_load(&e, "while_wait.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Limit", "5");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"a\""), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"b\""), WFL_EXEC_IDLE);
    ck_assert_int_eq(((xact *)wfl_act_exec(act_named(e.ex, "approvals")))->cursor, 3);
    expect_refused(&e, "approvals", F_CURSOR, -1);
    expect_refused(&e, "approvals", F_CURSOR, 0); /* an iteration runs */
    expect_refused(&e, "approvals", F_STATUS, WFL_ST_CLOSED);
    expect_refused(&e, "approvals", F_PHASE, XP_HANDLER); /* only while Canceling/Faulting */
    expect_refused(&e, "ExecFlow", F_CURSOR, 3);
    expect_refused(&e, "ExecFlow", F_CURSOR, INT32_MIN);
    expect_restores(&e);
    reload(&e);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"c\""), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_int(&e, "Count"), 4);
    xt_free(&e);
}
END_TEST

START_TEST(test_parallel_with_bad_fields_is_refused)
{
    xt_env e;
    xt_load(&e, "timers.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    expect_refused(&e, "both", F_STATUS, WFL_ST_CLOSED);      /* branches still wait */
    expect_refused(&e, "both", F_STATUS, WFL_ST_INITIALIZED); /* ... under a fresh one */
    expect_refused(&e, "slow", F_CURSOR, 3);                  /* two children */
    expect_refused(&e, "fast", F_CURSOR, -1);
    expect_refused(&e, "slow", F_PHASE, 99);
    expect_restores(&e);
    xt_free(&e);
}
END_TEST

START_TEST(test_state_machine_with_bad_fields_is_refused)
{
    xt_env e;
    xt_load(&e, "statemachine.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"alice\""), WFL_EXEC_IDLE);
    expect_refused(&e, "ExecFlow", F_CURSOR, 0);      /* the machine, not a State */
    expect_refused(&e, "ExecFlow", F_CURSOR, 100000); /* past the nodes */
    expect_refused(&e, "ExecFlow", F_AUX, 3);         /* the Delay */
    expect_refused(&e, "ExecFlow", F_COUNT, 9);       /* no such handler */
    expect_refused(&e, "ExecFlow", F_COUNT, -1);
    expect_restores(&e);
    xt_free(&e);
}
END_TEST

/* Through the store: a refused blob leaves the stored bytes as they were. */
START_TEST(test_stored_inconsistent_blob_is_refused_untouched)
{
    char path[512];
    snprintf(path, sizeof path, "%s/legacy.db", wf_test_tmpdir());
    wfl_store *st = NULL;
    ck_assert_int_eq(wfl_store_open(path, &st, NULL), WF_OK);
    xt_env e;
    xt_load(&e, "listen.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    xact *x = wfl_act_exec(act_named(e.ex, "listen1"));
    x->cursor = 40;
    void *blob = NULL, *back = NULL, *again = NULL;
    size_t len = 0, back_len = 0, again_len = 0;
    ck_assert_int_eq(wfl_exec_save(e.ex, &blob, &len, NULL), WF_OK);
    x->cursor = -1;
    ck_assert_int_eq(wfl_store_save(st, "test-instance", "Idle", blob, len, NULL), WF_OK);
    ck_assert_int_eq(wfl_store_load(st, "test-instance", &back, &back_len, NULL), WF_OK);
    expect_corrupt(&e, back, back_len, "winning branch is out of range");
    ck_assert_int_eq(wfl_store_load(st, "test-instance", &again, &again_len, NULL), WF_OK);
    ck_assert_uint_eq(again_len, len);
    ck_assert_mem_eq(again, blob, len);
    /* the CLI resuming it: a corrupt-state error, the stored bytes unchanged */
    const char *dir = wf_test_tmpdir();
    int rc = wf_test_shell_cli(dir, 60,
                               "run-legacy tests/legacy/data/exec/listen.xoml --lib-path %s "
                               "--store %s --instance test-instance",
                               wf_test_lib_dir(), path);
    char *text = wf_test_read_file(wf_test_path(dir, "stderr"), NULL);
    ck_assert_msg(rc == 2, "exit %d: %s", rc, text); /* an input error (docs/formats.md) */
    ck_assert_msg(strstr(text, "activity 'listen1' has a Listen's winning branch") != NULL, "%s",
                  text);
    wf_free(text);
    wf_free(again);
    ck_assert_int_eq(wfl_store_load(st, "test-instance", &again, &again_len, NULL), WF_OK);
    ck_assert_uint_eq(again_len, len);
    ck_assert_mem_eq(again, blob, len);
    wf_free(blob);
    wf_free(back);
    wf_free(again);
    wfl_store_close(st);
    xt_free(&e);
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------------
 */
typedef struct blob_case {
    xt_env *e;
    void *blob;
    size_t len;
} blob_case;

static wf_status restore_once(void *ud)
{
    blob_case *c = ud;
    wfl_exec *ex = NULL;
    wf_status rc = wfl_exec_restore(c->e->def, NULL, c->blob, c->len, &ex, NULL);
    if (rc == WF_OK) {
        void *again = NULL;
        size_t n = 0;
        rc = wfl_exec_save(ex, &again, &n, NULL);
        wf_free(again);
    }
    wfl_exec_destroy(ex);
    return rc;
}

START_TEST(test_restore_survives_allocation_failures)
{
    xt_env e;
    blob_case c = {&e, NULL, 0};
    blob_of(&e, "statemachine.xoml", &c.blob, &c.len);
    ck_assert_uint_gt(wf_test_nomem_loop(restore_once, &c, 5000), 0);
    wf_free(c.blob);
    xt_free(&e);
}
END_TEST

/* A queue with several subscribers (the statemachine blob's "ITestService.Approved" queue
 * given the same subscriber four times): the restore grows the subscriber array twice, and
 * a failing growth must neither leak the old array nor lose it. */
static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Length of the LEB128 varint at p (common/wf_codec.h's encoding). */
static size_t varint_len(const unsigned char *p, const unsigned char *end)
{
    size_t n = 0;
    while (p + n < end && (p[n] & 0x80))
        n++;
    return n + 1;
}

static unsigned char *blob_with_four_subscribers(const unsigned char *blob, size_t len,
                                                 size_t *out_len)
{
    static const char qname[] = "ITestService.Approved";
    size_t nlen = sizeof qname - 1, at = 0;
    for (size_t i = 24 + 1; i + nlen <= len && !at; i++)
        if (memcmp(blob + i, qname, nlen) == 0 && blob[i - 1] == nlen)
            at = i + nlen; /* after the queue's name: is_timer byte, items, subs (varints) */
    ck_assert_uint_gt(at, 0);
    ck_assert_uint_le(at + 3 + 2, len);
    ck_assert_uint_eq(blob[at], 0);     /* not a timer queue */
    ck_assert_uint_eq(blob[at + 1], 0); /* no items */
    ck_assert_uint_eq(blob[at + 2], 1); /* one subscriber */
    size_t ref = at + 3;
    size_t rlen = varint_len(blob + ref, blob + len); /* context id */
    rlen += varint_len(blob + ref + rlen, blob + len); /* node index */
    size_t extra = 3 * rlen;
    unsigned char *out = wf_malloc(len + extra);
    ck_assert_ptr_nonnull(out);
    memcpy(out, blob, ref + rlen);
    for (size_t k = 1; k <= 3; k++)
        memcpy(out + ref + rlen * k, blob + ref, rlen);
    memcpy(out + ref + rlen + extra, blob + ref + rlen, len - ref - rlen);
    out[at + 2] = 4;
    *out_len = len + extra;
    put_le(out + 8, *out_len - 24, 8);
    put_le(out + 16, wf_hash_bytes(out + 24, *out_len - 24), 8);
    return out;
}

START_TEST(test_restore_of_shared_queue_survives_allocation_failures)
{
    xt_env e;
    void *blob;
    size_t len;
    blob_of(&e, "statemachine.xoml", &blob, &len);
    blob_case c = {&e, NULL, 0};
    c.blob = blob_with_four_subscribers(blob, len, &c.len);
    ck_assert_int_eq(restore_once(&c), WF_OK);
    ck_assert_uint_gt(wf_test_nomem_loop(restore_once, &c, 5000), 0);
    wf_free(c.blob);
    wf_free(blob);
    xt_free(&e);
}
END_TEST

Suite *legacy_persist_suite(void)
{
    Suite *s = suite_create("legacy_persist");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_round_trip_at_a_persistence_point);
    tcase_add_test(core, test_kept_contexts_compensate_after_reload);
    tcase_add_test(core, test_state_machine_continues_in_a_fresh_executor);
    tcase_add_test(core, test_store_parallel_first_open_of_a_new_file_all_succeed);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_damaged_blobs_are_refused);
    tcase_add_test(bad, test_blob_of_another_definition_is_refused);
    tcase_add_test(bad, test_store_keeps_blobs_and_refuses_foreign_files);
    tcase_add_test(bad, test_store_incomplete_or_foreign_meta_is_refused_untouched);
    tcase_add_test(bad, test_fuzzed_blob_with_shared_queue_is_safe);
    tcase_add_test(bad, test_waiting_listen_with_bad_fields_is_refused);
    tcase_add_test(bad, test_while_in_third_iteration_with_bad_fields_is_refused);
    tcase_add_test(bad, test_parallel_with_bad_fields_is_refused);
    tcase_add_test(bad, test_state_machine_with_bad_fields_is_refused);
    tcase_add_test(bad, test_stored_inconsistent_blob_is_refused_untouched);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 60);
    tcase_add_test(nomem, test_restore_survives_allocation_failures);
    tcase_add_test(nomem, test_restore_of_shared_queue_survives_allocation_failures);
    suite_add_tcase(s, nomem);
    return s;
}

/* test_cli_json.c — the --json contract of every wfbridge verb (docs/formats.md "Output
 * contracts"): the result object is the last line of stdout, whatever else was printed
 * (tracking records, WriteLine output), and unhandled faults of both runtimes are reported the
 * same way on stderr, at the faulting activity. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "support_bridge.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *expense(void)
{
    return wfbt_sample("legacy/expense_approval/expense_approval.xoml");
}

static const char *orders(void)
{
    return wfbt_sample("legacy/order_processing/order_processing.xoml");
}

/* Last stdout line starts with `prefix`; the whole capture holds `needle`. */
#define ASSERT_LAST(r, prefix)                                                                     \
    ck_assert_msg(strncmp(wfbt_last_line((r).out), (prefix), strlen(prefix)) == 0,                \
                  "last line '%s', want '%s...'; stderr: %s", wfbt_last_line((r).out), (prefix),   \
                  (r).err)

/* ---- core -------------------------------------------------------------------------------- */
START_TEST(run_json_is_last_line)
{
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--json", "--arg", "S=x", "--arg",
                               "I=2", "--resume", "go=5"));
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "start x\n"));
    ck_assert_str_eq(wfbt_last_line(r.out),
                     "{\"status\": \"Closed\", \"outputs\": {\"Total\": 7}, \"bookmarks\": []}");
    ck_assert_str_eq(r.err, "");
    wfbt_out_free(&r);
}
END_TEST

/* #2: tracking records on stdout come before the result object, never after it. */
START_TEST(run_track_stdout_result_last)
{
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--track", "-", "--profile", "all",
                               "--json", "--arg", "S=x", "--resume", "go=1"));
    ck_assert_int_eq(r.rc, 0);
    ASSERT_LAST(r, "{\"status\": \"Closed\"");
    ck_assert_uint_ge(wfbt_count(r.out, "\"record\": "), 5);
    ck_assert_ptr_nonnull(strstr(r.out, "\"state\": \"Completed\""));
    ck_assert_uint_eq(wfbt_count(r.out, "\"status\": "), 1);
    wfbt_out_free(&r);
}
END_TEST

START_TEST(run_legacy_json_is_last_line)
{
    wfbt_out r = wfbt_run(ARGS("run-legacy", expense(), "--lib-path", wfbt_sample_libs(), "--arg",
                               "Employee=dana", "--arg", "Amount=420.00", "--event",
                               "Rejected={\"Approver\": \"bob\", \"Comment\": \"no\"}", "--json"));
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ASSERT_LAST(r, "{\"status\": \"Closed\", \"outputs\": {\"Employee\": \"dana\"");
    ck_assert_ptr_nonnull(strstr(wfbt_last_line(r.out), "\"Decision\": \"rejected by bob: no\""));
    wfbt_out_free(&r);
}
END_TEST

static void id_of(const char *line, char *id, size_t size)
{
    const char *p = strstr(line, "\"id\": \"");
    ck_assert_msg(p != NULL, "no id in '%s'", line);
    snprintf(id, size, "%.32s", p + strlen("\"id\": \""));
}

/* run --store, instances, inspect, resume and host: each one's --json output ends with its
 * JSON object. */
START_TEST(durable_verbs_json)
{
    const char *dir = wfbt_tmpdir();
    char tmp[512], db[600], id[40], id2[40];
    snprintf(tmp, sizeof tmp, "%s", dir);
    snprintf(db, sizeof db, "%s/s.db", tmp);
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--store", db, "--arg", "S=a",
                               "--arg", "I=1", "--promote", "S", "--json"));
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ASSERT_LAST(r, "{\"status\": \"Idle\", \"id\": \"");
    ck_assert_ptr_nonnull(strstr(wfbt_last_line(r.out), "\"bookmarks\": [\"go\"]"));
    id_of(wfbt_last_line(r.out), id, sizeof id);
    wfbt_out_free(&r);

    r = wfbt_run(ARGS("instances", "--store", db, "--json", "--status", "Idle"));
    ck_assert_int_eq(r.rc, 0);
    ASSERT_LAST(r, "{\"instances\": [{\"id\": \"");
    ck_assert_ptr_nonnull(strstr(r.out, id));
    wfbt_out_free(&r);

    r = wfbt_run(ARGS("inspect", "--store", db, id, "--json"));
    ck_assert_int_eq(r.rc, 0);
    ASSERT_LAST(r, "{\"id\": \"");
    ck_assert_ptr_nonnull(strstr(r.out, "\"promoted\": {\"S\": \"a\"}"));
    wfbt_out_free(&r);

    r = wfbt_run(ARGS("resume", "--store", db, id, "--bookmark", "go=4", "--json"));
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ASSERT_LAST(r, "{\"status\": \"Closed\", \"id\": \"");
    ck_assert_ptr_nonnull(strstr(r.out, "\"outputs\": {\"Total\": 5}"));
    wfbt_out_free(&r);

    /* host: a persisted instance whose timer is due */
    r = wfbt_run(ARGS("run", wfbt_data("delay.xaml"), "--store", db, "--json"));
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    id_of(wfbt_last_line(r.out), id2, sizeof id2);
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("host", "--store", db, "--once", "--json"));
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    /* the instance's result object, then the host's own last */
    char want[128];
    snprintf(want, sizeof want, "{\"status\": \"Closed\", \"id\": \"%s\"", id2);
    const char *obj = strstr(r.out, want);
    ck_assert_msg(obj != NULL, "no '%s' in: %s", want, r.out);
    ck_assert_ptr_nonnull(strstr(obj, "\"Done\": true"));
    ck_assert_str_eq(wfbt_last_line(r.out), "{\"host\": {\"ran\": 1, \"closed\": 1, \"idle\": 0, "
                                            "\"faulted\": 0, \"canceled\": 0, "
                                            "\"terminated\": 0, \"executing\": 0, "
                                            "\"failed\": 0, \"suspended\": 0}}");
    wfbt_out_free(&r);
    wfbt_tmp_remove(tmp);
}
END_TEST

/* #7: a modern fault is reported on stderr at the activity, and --json still carries it. */
START_TEST(modern_fault_located)
{
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("fault.xaml"), "--json"));
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.err, "tests/bridge/data/fault.xaml:6:5: error: InvalidOperationException: "
                            "broken\n");
    ASSERT_LAST(r, "{\"status\": \"Faulted\"");
    ck_assert_ptr_nonnull(strstr(wfbt_last_line(r.out), "\"error\": {\"type\": "
                                                        "\"InvalidOperationException\", "
                                                        "\"message\": \"broken\"}"));
    wfbt_out_free(&r);
}
END_TEST

/* #7: a legacy fault the same way: stderr, FILE:LINE:COL of the faulting activity, nothing on
 * stdout but the result. */
START_TEST(legacy_fault_located)
{
    const char *msg = "samples/legacy/order_processing/order_processing.xoml:25:4: error: "
                      "NativeException: native function 'orders_reserve' returned 2\n";
    wfbt_out r = wfbt_run(ARGS("run-legacy", orders(), "--lib-path", wfbt_sample_libs(), "--arg",
                               "OrderId=SO-1", "--arg", "Sku=W-7", "--arg", "UnitPrice=75.50",
                               "--arg", "Quantity=500"));
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.err, msg);
    ck_assert_ptr_null(strstr(r.out, "error"));
    ck_assert_ptr_nonnull(strstr(r.out, "status: Terminated\n"));
    wfbt_out_free(&r);

    r = wfbt_run(ARGS("run-legacy", orders(), "--lib-path", wfbt_sample_libs(), "--arg",
                      "OrderId=SO-1", "--arg", "Sku=W-7", "--arg", "UnitPrice=75.50", "--arg",
                      "Quantity=500", "--json"));
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.err, msg);
    ASSERT_LAST(r, "{\"status\": \"Terminated\"");
    ck_assert_ptr_nonnull(strstr(wfbt_last_line(r.out), "\"error\": {\"type\": "
                                                        "\"NativeException\""));
    wfbt_out_free(&r);
}
END_TEST

/* #7: a TerminateActivity is reported at its own element. */
START_TEST(legacy_terminate_located)
{
    wfbt_out r = wfbt_run(ARGS("run-legacy", "tests/legacy/data/exec/terminate.xoml",
                               "--lib-path", wfbt_test_libs(), "--json"));
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.err, "tests/legacy/data/exec/terminate.xoml:3:2: error: "
                            "WorkflowTerminatedException: stop here\n");
    ASSERT_LAST(r, "{\"status\": \"Terminated\"");
    wfbt_out_free(&r);
}
END_TEST

/* #10: a SuspendActivity that suspends the instance is reported at its element with its Error
 * text, in both output modes. */
START_TEST(legacy_suspend_located)
{
    for (int json = 0; json < 2; json++) {
        wfbt_out r = wfbt_run(ARGS("run-legacy", "tests/legacy/data/exec/suspend.xoml",
                                   "--lib-path", wfbt_test_libs(), json ? "--json" : NULL));
        ck_assert_int_eq(r.rc, 1);
        ck_assert_str_eq(r.err,
                         "tests/legacy/data/exec/suspend.xoml:3:2: error: suspended: hold\n");
        if (json)
            ASSERT_LAST(r, "{\"status\": \"Suspended\"");
        else
            ck_assert_ptr_nonnull(strstr(r.out, "status: Suspended\n"));
        wfbt_out_free(&r);
    }
}
END_TEST

/* ---- bad_input ------------------------------------------------------------------------- */
/* A resume queued for an instance another host holds prints the contract object too. */
START_TEST(inspect_unknown_id)
{
    const char *dir = wfbt_tmpdir();
    char tmp[512], db[600];
    snprintf(tmp, sizeof tmp, "%s", dir);
    snprintf(db, sizeof db, "%s/s.db", tmp);
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("delay.xaml"), "--store", db));
    ck_assert_int_eq(r.rc, 0);
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("inspect", "--store", db, "0123456789abcdef0123456789abcdef", "--json"));
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.out, "{\"status\": \"error\", \"error\": {\"type\": "
                                        "\"InputError\", \"message\": \"no instance "));
    ck_assert_ptr_nonnull(strstr(r.err, ": error: no instance '0123456789abcdef0123456789abcdef'"));
    wfbt_out_free(&r);
    wfbt_tmp_remove(tmp);
}
END_TEST

Suite *cli_json_suite(void)
{
    Suite *s = suite_create("cli_json");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 60);
    tcase_add_test(core, run_json_is_last_line);
    tcase_add_test(core, run_track_stdout_result_last);
    tcase_add_test(core, run_legacy_json_is_last_line);
    tcase_add_test(core, durable_verbs_json);
    tcase_add_test(core, modern_fault_located);
    tcase_add_test(core, legacy_fault_located);
    tcase_add_test(core, legacy_terminate_located);
    tcase_add_test(core, legacy_suspend_located);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, inspect_unknown_id);
    suite_add_tcase(s, bad);
    return s;
}

/* test_cli_output.c — wfbridge checks every write of its output: stdout on a full device or a
 * closed pipe and a tracking file that cannot be written are errors (exit 2, the output named),
 * never a silent exit 0 or a crash by SIGPIPE. */
#include <check.h>
#include <string.h>

#include "support_bridge.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- bad_input ------------------------------------------------------------------------- */
START_TEST(json_to_dev_full)
{
    wfbt_out r = wfbt_run_to(WFBT_DEV_FULL, ARGS("run", wfbt_data("args.xaml"), "--json",
                                                 "--arg", "S=x", "--resume", "go=1"));
    ck_assert_int_eq(r.sig, 0);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.err, "wfbridge run: error: cannot write standard output: No space left "
                            "on device\n");
    wfbt_out_free(&r);
    r = wfbt_run_to(WFBT_DEV_FULL, ARGS("--version"));
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.err, "wfbridge: error: cannot write standard output: No space left on "
                            "device\n");
    wfbt_out_free(&r);
}
END_TEST

START_TEST(legacy_json_to_dev_full)
{
    wfbt_out r = wfbt_run_to(
        WFBT_DEV_FULL,
        ARGS("run-legacy", wfbt_sample("legacy/expense_approval/expense_approval.xoml"),
             "--lib-path", wfbt_sample_libs(), "--event", "Approved=alice", "--json"));
    ck_assert_int_eq(r.sig, 0);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "wfbridge run-legacy: error: cannot write standard "
                                        "output"));
    wfbt_out_free(&r);
}
END_TEST

START_TEST(closed_pipe)
{
    wfbt_out r = wfbt_run_to(WFBT_CLOSED_PIPE, ARGS("run", wfbt_data("args.xaml"), "--json",
                                                    "--arg", "S=x", "--resume", "go=1"));
    ck_assert_int_eq(r.sig, 0); /* not killed by SIGPIPE */
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.err, "wfbridge run: error: cannot write standard output: Broken pipe\n");
    wfbt_out_free(&r);
}
END_TEST

START_TEST(track_to_dev_full)
{
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--track", "/dev/full", "--json",
                               "--arg", "S=x", "--resume", "go=1"));
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.err, "/dev/full: error: cannot write the tracking file\n");
    ck_assert_ptr_null(strstr(r.out, "\"Closed\""));
    ck_assert_ptr_nonnull(strstr(wfbt_last_line(r.out), "{\"status\": \"error\", \"error\": {"
                                                        "\"type\": \"InputError\", \"message\": "
                                                        "\"cannot write the tracking file\""));
    wfbt_out_free(&r);
}
END_TEST

Suite *cli_output_suite(void)
{
    Suite *s = suite_create("cli_output");
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, json_to_dev_full);
    tcase_add_test(bad, legacy_json_to_dev_full);
    tcase_add_test(bad, closed_pipe);
    tcase_add_test(bad, track_to_dev_full);
    suite_add_tcase(s, bad);
    return s;
}

/* test_cli_files.c — the files the verbs other than convert read and write: `-` as the
 * definition (standard input) for run, run-legacy and verify, refused where the path is kept
 * (run --store, start); verify --junit never overwrites an input; verify DIR walks a tree with
 * a link loop and a FIFO without hanging (bridge/wfb_stdin.c, bridge/wfb_walk.c); numbers that
 * overflow are refused. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../wf_test_util.h"
#include "support_bridge.h"

#define ORDER_XOML "samples/legacy/order_processing/order_processing.xoml"
#define EXPENSE    "samples/legacy/expense_approval/expense_approval.xoml"

static char tmp[512];

static void setup(void)
{
    snprintf(tmp, sizeof tmp, "%s", wfbt_tmpdir());
}

static void teardown(void)
{
    wfbt_tmp_remove(tmp);
}

/* Run `wfbridge ARGS` (a shell fragment) with stdout, stderr in tmp/stdout, tmp/stderr, at
 * most 120 s; returns the exit code. */
#define cli(...) checked(wf_test_shell_cli(tmp, 120, __VA_ARGS__))

static int checked(int rc)
{
    ck_assert_msg(rc != 124, "wfbridge timed out");
    ck_assert_msg(rc < 128, "wfbridge killed by signal %d", rc - 128);
    return rc;
}

static const char *at(const char *name)
{
    return wf_test_path(tmp, name);
}

static void assert_contains(const char *name, const char *needle)
{
    char *text = wf_test_read_file(at(name), NULL);
    ck_assert_msg(text != NULL, "%s missing", name);
    ck_assert_msg(strstr(text, needle) != NULL, "'%s' not in %s:\n%s", needle, name, text);
    wf_free(text);
}

/* ---- core ----------------------------------------------------------------------------- */
START_TEST(test_dash_reads_the_definition_from_stdin)
{
    ck_assert_int_eq(cli("run - --json --arg S=x --resume go=1 < %s", wfbt_data("args.xaml")),
                     0);
    assert_contains("stdout", "\"status\": \"Closed\"");
    ck_assert_int_eq(cli("run-legacy - --rules %.*s.rules --lib-path %s --event Approved=alice "
                         "--json < %s",
                         (int)strlen(EXPENSE) - 5, EXPENSE, wfbt_sample_libs(), EXPENSE),
                     0);
    assert_contains("stdout", "\"status\": \"Closed\"");
    ck_assert_int_eq(cli("verify - --rules %.*s.rules --lib-path %s --generate 3 --seed 1 "
                         "--json < %s",
                         (int)strlen(ORDER_XOML) - 5, ORDER_XOML, wfbt_sample_libs(), ORDER_XOML),
                     0);
    assert_contains("stdout", "\"status\": \"equivalent\"");
}
END_TEST

/* ---- bad_input ------------------------------------------------------------------------ */
START_TEST(test_dash_is_refused_where_the_path_is_kept)
{
    ck_assert_int_eq(cli("run - --store %s < %s", at("s.db"), wfbt_data("args.xaml")), 2);
    assert_contains("stderr", "not '-'");
    ck_assert_int_eq(cli("start - --store %s < %s", at("s.db"), wfbt_data("args.xaml")), 2);
    assert_contains("stderr", "not '-'");
    ck_assert_int_eq(cli("run-legacy - < /dev/null"), 2);
    assert_contains("stderr", "<stdin>:");
}
END_TEST

START_TEST(test_junit_never_overwrites_an_input)
{
    char *text = wf_test_read_file(ORDER_XOML, NULL);
    wf_test_write_file(tmp, "o.xoml", text);
    ck_assert_int_eq(link(at("o.xoml"), at("same.xml")), 0);
    ck_assert_int_eq(cli("verify %s --lib-path %s --generate 2 --junit %s", at("o.xoml"),
                         wfbt_sample_libs(), at("same.xml")),
                     2);
    assert_contains("stderr", "--junit");
    assert_contains("stderr", "is the input file");
    char *after = wf_test_read_file(at("o.xoml"), NULL);
    ck_assert_str_eq(after, text);
    wf_free(after);
    wf_free(text);
}
END_TEST

START_TEST(test_verify_dir_skips_link_loops_and_fifos)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/in/sub && cp %s samples/legacy/order_processing/order_processing.rules "
             "%s/in/sub/ && ln -s .. %s/in/sub/up && mkfifo %s/in/f.xoml",
             tmp, ORDER_XOML, tmp, tmp, tmp);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(cli("verify %s --lib-path %s --generate 2", at("in"), wfbt_sample_libs()),
                     0);
    assert_contains("stderr", "in/f.xoml: warning: not a regular file, skipped");
    assert_contains("stderr", "in/sub/up: warning: a symbolic link");
}
END_TEST

/* A converted file run without its sidecars on the library path: one error per Interop, which
 * says where the type library is, and no follow-on "unknown attribute" for each legacy
 * property the missing library would have declared. */
START_TEST(test_missing_sidecar_is_one_error_with_its_directory)
{
    ck_assert_int_eq(cli("convert %s --lib-path %s -o %s/", EXPENSE, wfbt_sample_libs(), tmp), 0);
    ck_assert_int_eq(cli("run %s --lib-path %s", at("expense_approval.xaml"), wfbt_sample_libs()),
                     2);
    assert_contains("stderr", "'expense_approval.approved.activities.xml' not found on the "
                              "library path");
    char hint[700];
    snprintf(hint, sizeof hint, "(it is in %s, beside the definition: add that directory to "
                                "--lib-path)", tmp);
    assert_contains("stderr", hint);
    char *text = wf_test_read_file(at("stderr"), NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "unknown attribute") == NULL, "follow-on errors:\n%s", text);
    wf_free(text);
    char libs[1200];
    snprintf(libs, sizeof libs, "%s:%s", wfbt_sample_libs(), tmp);
    ck_assert_int_eq(cli("run %s --lib-path %s --json", at("expense_approval.xaml"), libs), 0);
    assert_contains("stdout", "\"status\": \"Idle\"");
}
END_TEST

/* A type library's error names the type library's file. */
START_TEST(test_typelib_error_names_its_file)
{
    wf_test_write_file(tmp, "clash.activities.xml",
                       "<TypeLibrary xmlns=\"urn:wfbridge:typelib\" Name=\"clash\" "
                       "Library=\"libconvcases.so\">\n"
                       "  <ActivityType Name=\"Step\" Function=\"cc_inc\">\n"
                       "    <Property Name=\"Name\" Type=\"String\" Direction=\"In\"/>\n"
                       "  </ActivityType>\n</TypeLibrary>\n");
    wf_test_write_file(tmp, "w.xoml",
                       "<SequentialWorkflowActivity x:Name=\"W\" "
                       "xmlns:ns0=\"clr-namespace:T;Assembly=clash\" "
                       "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
                       "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
                       "  <ns0:Step x:Name=\"s\" />\n</SequentialWorkflowActivity>\n");
    ck_assert_int_eq(cli("run-legacy %s --lib-path %s:%s", at("w.xoml"), tmp, wfbt_test_libs()),
                     2);
    assert_contains("stderr", "clash.activities.xml:2:3: error: property 'Name' clashes");
    assert_contains("stderr", "clashes with the built-in property");
}
END_TEST

/* A number that does not fit is refused, never saturated to the largest value. */
START_TEST(test_overflowing_numbers_are_refused)
{
    const char *big = "18446744073709551616"; /* 2^64 */
    const char *opts[] = {"--seed", "--max-steps", "--generate"};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(cli("verify %s --lib-path %s %s %s", ORDER_XOML, wfbt_sample_libs(),
                             opts[i], big),
                         2);
        assert_contains("stderr", opts[i]);
        assert_contains("stderr", "needs a whole number");
    }
    ck_assert_int_eq(cli("verify %s --lib-path %s --generate 10000001", ORDER_XOML,
                         wfbt_sample_libs()),
                     2);
    ck_assert_int_eq(cli("verify %s --lib-path %s --tolerance 1e999", ORDER_XOML,
                         wfbt_sample_libs()),
                     2);
    assert_contains("stderr", "--tolerance needs a number");
    ck_assert_int_eq(cli("run %s --max-steps %s", wfbt_data("args.xaml"), big), 2);
    assert_contains("stderr", "--max-steps needs a whole number");
    ck_assert_int_eq(cli("run-legacy %s --lib-path %s --max-steps %s", ORDER_XOML,
                         wfbt_sample_libs(), big),
                     2);
    assert_contains("stderr", "--max-steps needs a whole number");
}
END_TEST

Suite *cli_files_suite(void)
{
    Suite *s = suite_create("cli_files");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 240);
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, test_dash_reads_the_definition_from_stdin);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 240);
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, test_dash_is_refused_where_the_path_is_kept);
    tcase_add_test(bad, test_junit_never_overwrites_an_input);
    tcase_add_test(bad, test_verify_dir_skips_link_loops_and_fifos);
    tcase_add_test(bad, test_overflowing_numbers_are_refused);
    tcase_add_test(bad, test_typelib_error_names_its_file);
    tcase_add_test(bad, test_missing_sidecar_is_one_error_with_its_directory);
    suite_add_tcase(s, bad);
    return s;
}

/* test_cli_options.c — wfbridge's option tables and the one error format: options before or
 * after the file, help and version, every option and value checked before anything runs
 * (proved by the absence of the workflow's output or of a native-call trace), the option named
 * in value errors, and quoted input truncated. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "support_bridge.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *expense(void)
{
    return wfbt_sample("legacy/expense_approval/expense_approval.xoml");
}

/* A usage or input error: exit 2, nothing on stdout (nothing ran), stderr exactly `err`. */
#define ASSERT_REFUSED(r, want)                                                                    \
    do {                                                                                           \
        ck_assert_msg((r).rc == 2, "rc %d, stderr: %s", (r).rc, (r).err);                         \
        ck_assert_str_eq((r).out, "");                                                             \
        ck_assert_str_eq((r).err, (want));                                                         \
    } while (0)

/* ---- core -------------------------------------------------------------------------------- */
START_TEST(options_after_the_file)
{
    wfbt_out r = wfbt_run(ARGS("run", "--arg", "S=y", wfbt_data("args.xaml"), "--resume", "go=1",
                               "--arg", "I=1", "--json"));
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"Total\": 2"));
    wfbt_out_free(&r);
}
END_TEST

/* #18 */
START_TEST(help_and_version)
{
    wfbt_out r = wfbt_run(ARGS("--version"));
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "wfbridge 0.1.0\n");
    wfbt_out_free(&r);

    wfbt_out h = wfbt_run(ARGS("help", "run"));
    wfbt_out v = wfbt_run(ARGS("run", "--help"));
    ck_assert_int_eq(h.rc, 0);
    ck_assert_str_eq(h.out, v.out);
    ck_assert_ptr_nonnull(strstr(h.out, "usage: wfbridge run FILE.xaml"));
    ck_assert_ptr_nonnull(strstr(h.out, "carries its \"id\""));
    ck_assert_ptr_null(strstr(h.out, "instance_id"));
    wfbt_out_free(&h);
    wfbt_out_free(&v);

    r = wfbt_run(ARGS("--help"));
    ck_assert_int_eq(r.rc, 0);
    /* the main help lists only verbs that exist, each with its help */
    ck_assert_ptr_nonnull(strstr(r.out, "verify"));
    ck_assert_ptr_nonnull(strstr(r.out, "convert"));
    wfbt_out_free(&r);

    /* host --help: no line broken in the middle of a sentence */
    r = wfbt_run(ARGS("help", "host"));
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_null(strstr(r.out, "until it is\nidle"));
    ck_assert_ptr_null(strstr(r.out, " \n"));
    wfbt_out_free(&r);

    r = wfbt_run(ARGS("help", "nope"));
    ASSERT_REFUSED(r, "wfbridge help: error: unknown verb 'nope' (see 'wfbridge --help')\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("help", "run", "extra"));
    ASSERT_REFUSED(r, "wfbridge help: error: unexpected argument 'extra' (one verb only; see "
                      "'wfbridge --help')\n");
    wfbt_out_free(&r);
}
END_TEST

/* ---- bad_input ------------------------------------------------------------------------- */
/* #12: one format: "wfbridge VERB: error: ..." without a file, "wfbridge: error:" before a
 * verb is known. */
START_TEST(usage_error_format)
{
    wfbt_out r = wfbt_run(ARGS("nope"));
    ASSERT_REFUSED(r, "wfbridge: error: unknown verb 'nope' (see 'wfbridge --help')\n");
    wfbt_out_free(&r);
    r = wfbt_run((const char *const[]){NULL});
    ASSERT_REFUSED(r, "wfbridge: error: no verb given (see 'wfbridge --help')\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--bogus"));
    ASSERT_REFUSED(r, "wfbridge run: error: unknown option '--bogus' (see 'wfbridge run "
                      "--help')\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("resume", "ID", "--bookmark"));
    ASSERT_REFUSED(r, "wfbridge resume: error: option --bookmark needs a value (see 'wfbridge "
                      "resume --help')\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run-legacy", expense(), "--max-steps", "x"));
    ASSERT_REFUSED(r, "wfbridge run-legacy: error: --max-steps needs a whole number from 0 to "
                      "18446744073709551615, not 'x' (see 'wfbridge run-legacy --help')\n");
    wfbt_out_free(&r);
}
END_TEST

/* #12: an unknown --arg names the definition file and lists the declared arguments. */
START_TEST(unknown_arg_names_file)
{
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--arg", "X=5"));
    ASSERT_REFUSED(r, "tests/bridge/data/args.xaml: error: --arg X: the workflow has no argument "
                      "'X' (it declares: I, S, LI, LS, Total)\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run-legacy", expense(), "--lib-path", wfbt_sample_libs(), "--trace",
                      "--arg", "I=5"));
    ASSERT_REFUSED(r, "samples/legacy/expense_approval/expense_approval.xoml: error: --arg I: the "
                      "workflow has no property 'I' (it declares: Employee, Amount, Ticket, "
                      "Approver, Comment, Decision, Escalations, Args, Sender)\n");
    wfbt_out_free(&r);
}
END_TEST

/* #11: a JSON error inside an option names the option and the character, not a file. */
START_TEST(arg_json_error_names_option)
{
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--arg", "LI=[1, 2"));
    ASSERT_REFUSED(r, "wfbridge run: error: --arg LI: unexpected end of JSON input, ']' expected "
                      "at character 6 of '[1, 2'\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run-legacy", wfbt_sample("legacy/document_review/document_review.xoml"),
                      "--lib-path", wfbt_sample_libs(), "--trace", "--arg", "Reviewers=[1, 2"));
    ASSERT_REFUSED(r, "wfbridge run-legacy: error: --arg Reviewers: unexpected end of JSON input, "
                      "']' expected at character 6 of '[1, 2'\n");
    wfbt_out_free(&r);
}
END_TEST

/* #20: one rule in both runtimes: JSON must match the declared type exactly. */
START_TEST(list_arg_same_rule_both_runtimes)
{
    const char *tail = ": element [0] is a whole number, which a List(String) does not take (JSON "
                       "values must match the declared type; nothing is converted)\n";
    char want[512];
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--arg", "LS=[1, 2]"));
    snprintf(want, sizeof want, "wfbridge run: error: --arg LS%s", tail);
    ASSERT_REFUSED(r, want);
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run-legacy", wfbt_sample("legacy/document_review/document_review.xoml"),
                      "--lib-path", wfbt_sample_libs(), "--trace", "--arg", "Reviewers=[1, 2]"));
    snprintf(want, sizeof want, "wfbridge run-legacy: error: --arg Reviewers%s", tail);
    ASSERT_REFUSED(r, want);
    wfbt_out_free(&r);
}
END_TEST

/* #20: a repeated --arg / --event / --resume for the same name is a usage error. */
START_TEST(repeated_names_refused)
{
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--arg", "S=a", "--arg", "S=b"));
    ASSERT_REFUSED(r, "wfbridge run: error: --arg S is given more than once (see 'wfbridge run "
                      "--help')\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--resume", "go=1", "--resume", "go=2"));
    ASSERT_REFUSED(r, "wfbridge run: error: --resume go is given more than once (see 'wfbridge "
                      "run --help')\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run-legacy", expense(), "--event", "Approved=a", "--event", "Approved=b"));
    ASSERT_REFUSED(r, "wfbridge run-legacy: error: --event Approved is given more than once (see "
                      "'wfbridge run-legacy --help')\n");
    wfbt_out_free(&r);
    /* The event and its queue name the same event, in either order. */
    r = wfbt_run(ARGS("run-legacy", expense(), "--event", "Approved=a", "--event",
                      "IExpenseService.Approved=b"));
    ASSERT_REFUSED(r, "wfbridge run-legacy: error: --event IExpenseService.Approved is given more "
                      "than once (as Approved) (see 'wfbridge run-legacy --help')\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run-legacy", expense(), "--event", "IExpenseService.Approved=a", "--event",
                      "Approved=b"));
    ASSERT_REFUSED(r, "wfbridge run-legacy: error: --event Approved is given more than once (as "
                      "IExpenseService.Approved) (see 'wfbridge run-legacy --help')\n");
    wfbt_out_free(&r);
}
END_TEST

/* #8: event payloads checked against the event's declared parameters before anything runs
 * (--trace would show the native call the workflow makes first). */
START_TEST(event_payload_checked_first)
{
    const char *libs = wfbt_sample_libs();
    wfbt_out r = wfbt_run(ARGS("run-legacy", expense(), "--lib-path", libs, "--trace", "--event",
                               "Rejected={\"Approver\":"));
    ASSERT_REFUSED(r, "wfbridge run-legacy: error: --event Rejected: unexpected end of JSON "
                      "input, expected a value at character 13 of '{\"Approver\":'\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run-legacy", expense(), "--lib-path", libs, "--trace", "--event",
                      "Rejected={\"Bogus\":1}"));
    ASSERT_REFUSED(r, "wfbridge run-legacy: error: --event Rejected: event Rejected: no "
                      "parameter 'Bogus' (the event declares: Approver, Comment)\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run-legacy", expense(), "--lib-path", libs, "--trace", "--event",
                      "Rejected=bob"));
    ASSERT_REFUSED(r, "wfbridge run-legacy: error: --event Rejected: event Rejected: the event "
                      "declares 2 parameters (Approver, Comment): give them as a JSON object "
                      "keyed by parameter name\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run-legacy", expense(), "--lib-path", libs, "--trace", "--event",
                      "Nope=1"));
    ASSERT_REFUSED(r, "samples/legacy/expense_approval/expense_approval.xoml: error: --event "
                      "Nope: no HandleExternalEvent of the workflow waits for an event 'Nope'\n");
    wfbt_out_free(&r);
    /* a bare value for the one-parameter event is fine */
    r = wfbt_run(ARGS("run-legacy", expense(), "--lib-path", libs, "--arg", "Amount=1",
                      "--event", "Approved=alice", "--json"));
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"Approver\": \"alice\""));
    wfbt_out_free(&r);
}
END_TEST

/* #9: --resume checked before the workflow runs (its WriteLine would print "start"). */
START_TEST(resume_checked_first)
{
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--resume", "malformed"));
    ASSERT_REFUSED(r, "wfbridge run: error: --resume needs NAME=VALUE, not 'malformed' (see "
                      "'wfbridge run --help')\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--resume", "go={\"a\":"));
    ASSERT_REFUSED(r, "wfbridge run: error: --resume go: unexpected end of JSON input, expected "
                      "a value at character 6 of '{\"a\":'\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--arg", "I=x", "--arg", "S=a"));
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_ptr_nonnull(strstr(r.err, "wfbridge run: error: --arg I: 'x' is not of type Int32"));
    wfbt_out_free(&r);
}
END_TEST

/* #16: option values with a fixed set of choices, and options that need another. */
START_TEST(choices_and_dependencies)
{
    wfbt_out r = wfbt_run(ARGS("instances", "--status", "idle"));
    ASSERT_REFUSED(r, "wfbridge instances: error: --status takes one of Created, Executing, Idle, "
                      "Closed, Faulted, Canceled, Terminated, Suspended, not 'idle' (see 'wfbridge "
                      "instances --help')\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--durability", "full"));
    ASSERT_REFUSED(r, "wfbridge run: error: --durability needs --store FILE (see 'wfbridge run "
                      "--help')\n");
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("host", "--durability", "fast"));
    ASSERT_REFUSED(r, "wfbridge host: error: --durability needs full or normal, not 'fast' (see "
                      "'wfbridge host --help')\n");
    wfbt_out_free(&r);

    const char *dir = wfbt_tmpdir();
    char tmp[512], db[600];
    snprintf(tmp, sizeof tmp, "%s", dir);
    snprintf(db, sizeof db, "%s/p.db", tmp);
    r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--store", db, "--promote", "Nope"));
    ASSERT_REFUSED(r, "tests/bridge/data/args.xaml: error: --promote Nope: the workflow has no "
                      "argument or root variable 'Nope' (arguments: I, S, LI, LS, Total)\n");
    wfbt_out_free(&r);
    FILE *f = fopen(db, "r");
    ck_assert_ptr_null(f); /* refused before the store was created */
    /* a root variable may be promoted */
    r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--store", db, "--promote", "amount",
                      "--arg", "S=a"));
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    wfbt_out_free(&r);
    wfbt_tmp_remove(tmp);
}
END_TEST

/* #13: a missing .rules file is reported once. */
START_TEST(missing_rules_once)
{
    wfbt_out r = wfbt_run(ARGS("run-legacy", expense(), "--rules", "/nonexistent.rules",
                               "--lib-path", wfbt_sample_libs()));
    ASSERT_REFUSED(r, "/nonexistent.rules: error: cannot open: No such file or directory\n");
    wfbt_out_free(&r);
}
END_TEST

/* #15: without a library path the root cause comes first, in the one wording. */
#define WFB_NO_LIBPATH_TEXT "no library path: pass --lib-path DIR or set WFBRIDGE_LIB_PATH"
START_TEST(no_library_path_root_cause)
{
    wfbt_out r = wfbt_run(ARGS("run-legacy", wfbt_sample("legacy/order_processing/"
                                                         "order_processing.xoml")));
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.out, "");
    const char *want = "wfbridge run-legacy: error: " WFB_NO_LIBPATH_TEXT "\n";
    ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0, "stderr: %s", r.err);
    ck_assert_ptr_null(strstr(r.err, ".rules:"));
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("run", wfbt_sample("modern/invoke_native.xaml")));
    ck_assert_int_eq(r.rc, 2);
    want = "wfbridge run: error: " WFB_NO_LIBPATH_TEXT "\n";
    ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0, "stderr: %s", r.err);
    /* what follows locates each activity needing a library, in the legacy runtime's words */
    ck_assert_uint_eq(wfbt_count(r.err, "cannot be loaded: no library path is set\n"),
                      wfbt_count(r.err, "\n") - 1);
    wfbt_out_free(&r);
}
END_TEST

/* ---- limits ------------------------------------------------------------------------------ */
/* #19: a 100 KB payload is not echoed whole: 60 bytes, "...", the byte count. */
START_TEST(long_input_truncated)
{
    size_t n = 100 * 1024;
    char *big = wf_malloc(n + 16);
    ck_assert_ptr_nonnull(big);
    memcpy(big, "go={\"a\": \"", 10);
    memset(big + 10, 'x', n - 10);
    big[n] = '\0'; /* unterminated string: malformed JSON */
    wfbt_out r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--resume", big));
    ck_assert_int_eq(r.rc, 2);
    ck_assert_uint_lt(strlen(r.err), 300);
    ck_assert_ptr_nonnull(strstr(r.err, "...' (102397 bytes)"));
    wfbt_out_free(&r);
    /* cut before a multi-byte UTF-8 sequence, never inside it: "I=a" + 100 x "é" */
    memcpy(big, "I=a", 3);
    for (size_t i = 0; i < 100; i++)
        memcpy(big + 3 + 2 * i, "\xc3\xa9", 2);
    big[203] = '\0';
    r = wfbt_run(ARGS("run", wfbt_data("args.xaml"), "--arg", big));
    ck_assert_int_eq(r.rc, 2);
    char want[128] = "'a";
    for (size_t i = 0; i < 29; i++) /* byte 60 continues the 30th "é": cut before it */
        strcat(want, "\xc3\xa9");
    strcat(want, "...' (201 bytes)");
    ck_assert_msg(strstr(r.err, want) != NULL, "stderr: %s", r.err);
    wfbt_out_free(&r);
    wf_free(big);
}
END_TEST

Suite *cli_options_suite(void)
{
    Suite *s = suite_create("cli_options");
    TCase *core = tcase_create("core");
    tcase_add_test(core, options_after_the_file);
    tcase_add_test(core, help_and_version);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 60);
    tcase_add_test(bad, usage_error_format);
    tcase_add_test(bad, unknown_arg_names_file);
    tcase_add_test(bad, arg_json_error_names_option);
    tcase_add_test(bad, list_arg_same_rule_both_runtimes);
    tcase_add_test(bad, repeated_names_refused);
    tcase_add_test(bad, event_payload_checked_first);
    tcase_add_test(bad, resume_checked_first);
    tcase_add_test(bad, choices_and_dependencies);
    tcase_add_test(bad, missing_rules_once);
    tcase_add_test(bad, no_library_path_root_cause);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, long_input_truncated);
    suite_add_tcase(s, limits);
    return s;
}

/* test_json_verbs.c — every verb with --json, on success, on a failure and on a usage error:
 * each line of stdout is one JSON value jansson reads (the writer makes it so by
 * construction, common/wf_jsonw.h), and the last line is an object with the contract's keys
 * (docs/formats.md "Output contracts"). Text that needs escaping (quotes, a newline, a control
 * byte, invalid UTF-8) goes through an argument value and a file name. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "support_bridge.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Every stdout line of r is JSON (only the last one when workflow output may come first);
 * returns the last one (an object), which the caller frees. */
static json_t *json_lines(const wfbt_out *r, const char *what, bool every)
{
    json_t *last = NULL;
    for (const char *p = r->out; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        json_error_t e;
        json_decref(last);
        last = json_loadb(p, len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &e);
        bool final = !nl || !nl[1];
        ck_assert_msg(last || (!every && !final), "%s: not JSON (%s): '%.*s'", what, e.text,
                      (int)len, p);
        p += len + (nl ? 1 : 0);
    }
    ck_assert_msg(json_is_object(last), "%s: the last line is no object: '%s'", what, r->out);
    return last;
}

/* Run args, expect exit rc, check the lines; the last object has key `key`. WriteLine output
 * of run and run-legacy shares their stdout; every other verb prints only JSON lines. */
static void expect_json(const char *const *args, int rc, const char *key)
{
    wfbt_out r = wfbt_run(args);
    ck_assert_msg(r.rc == rc, "%s: exit %d, want %d; stderr: %s", args[0], r.rc, rc, r.err);
    bool every = strcmp(args[0], "run") != 0 && strcmp(args[0], "run-legacy") != 0;
    json_t *last = json_lines(&r, args[0], every);
    ck_assert_msg(json_object_get(last, key) != NULL, "%s: no \"%s\" in '%s'", args[0], key,
                  wfbt_last_line(r.out));
    json_decref(last);
    wfbt_out_free(&r);
}

START_TEST(every_verb_usage_error_is_one_object)
{
    const char *verbs[] = {"convert", "run", "run-legacy", "instances", "resume", "inspect",
                           "host", "verify", "start", "migrate-instances", "verify-instances"};
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++) {
        /* the bad option's name carries a quote, a newline and an invalid byte */
        expect_json(ARGS(verbs[i], "--json", "--no-such\"\n\xff"), 2, "error");
    }
}
END_TEST

START_TEST(run_verbs_escape_what_they_echo)
{
    /* a string output holding a quote, a backslash, a tab and a control byte */
    expect_json(ARGS("run", wfbt_data("args.xaml"), "--json", "--arg", "S=q\"b\\\t\x01",
                     "--arg", "I=2", "--resume", "go=5"),
                0, "outputs");
    expect_json(ARGS("run-legacy", wfbt_sample("legacy/expense_approval/expense_approval.xoml"),
                     "--lib-path", wfbt_sample_libs(), "--arg", "Employee=d\"a\nna", "--arg",
                     "Amount=420.00", "--event",
                     "Rejected={\"Approver\": \"b\\\"ob\", \"Comment\": \"\\u0001\"}", "--json"),
                0, "outputs");
}
END_TEST

START_TEST(store_verbs_every_line_json)
{
    const char *tmp = wfbt_tmpdir();
    char db[1024];
    snprintf(db, sizeof db, "%s/j.db", tmp);
    expect_json(ARGS("start", wfbt_data("args.xaml"), "--store", db, "--arg", "S=\"x\"",
                     "--arg", "I=1", "--count", "2", "--json"),
                0, "ids");
    expect_json(ARGS("instances", "--store", db, "--json"), 0, "instances");
    wfbt_out r = wfbt_run(ARGS("instances", "--store", db, "--json"));
    json_t *list = json_lines(&r, "instances", true);
    const char *id = json_string_value(
        json_object_get(json_array_get(json_object_get(list, "instances"), 0), "id"));
    ck_assert_ptr_nonnull(id);
    expect_json(ARGS("inspect", "--store", db, id, "--json"), 0, "state");
    expect_json(ARGS("host", "--store", db, "--once", "--json"), 0, "host");
    expect_json(ARGS("resume", "--store", db, id, "--bookmark", "go=4", "--json"), 0, "status");
    json_decref(list);
    wfbt_out_free(&r);
    wfbt_tmp_remove(tmp);
}
END_TEST

START_TEST(convert_and_verify_json)
{
    const char *xoml = "tests/converter/cases/parallel_pick/parallel_pick.xoml";
    expect_json(ARGS("convert", xoml, "--check", "--json", "--lib-path", wfbt_test_libs()), 0,
                "files");
    expect_json(ARGS("convert", "tests/no/such \"file\".xoml", "--check", "--json"), 2,
                "status");
    expect_json(ARGS("verify", xoml, "--lib-path", wfbt_test_libs(), "--generate", "3", "--json"),
                0, "coverage");
}
END_TEST

Suite *bridge_json_verbs_suite(void)
{
    Suite *s = suite_create("bridge_json_verbs");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_test(core, run_verbs_escape_what_they_echo);
    tcase_add_test(core, store_verbs_every_line_json);
    tcase_add_test(core, convert_and_verify_json);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, every_verb_usage_error_is_one_object);
    suite_add_tcase(s, bad);
    return s;
}

/* test_cli_shapes.c — one JSON shape per contract (docs/formats.md "Output contracts"): a usage
 * error with --json still ends stdout with an object, convert --json carries "status", every
 * stdout line of host --json is a JSON object (WriteLine output goes to stderr), and host in
 * text mode ends with a summary line on stderr. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "support_bridge.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Every line of s parses as a JSON object. */
static void assert_json_lines(const char *s)
{
    char line[8192];
    for (const char *p = s; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        json_error_t e;
        json_t *v = json_loads(line, 0, &e);
        ck_assert_msg(v && json_is_object(v), "not a JSON object: '%s'", line);
        json_decref(v);
        p += len + (nl ? 1 : 0);
    }
}

START_TEST(usage_errors_with_json_print_an_error_object)
{
    const char *const *calls[] = {
        ARGS("run", "--json", "--bogus"),
        ARGS("convert", "--json"),
        ARGS("verify", "x.xoml", "--json", "--seed", "99999999999999999999"),
        ARGS("host", "--json", "--workers", "0"),
        ARGS("start", "--json"),
        ARGS("instances", "--json", "extra"),
        ARGS("resume", "--json"),
        ARGS("run-legacy", "--json"),
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        wfbt_out r = wfbt_run(calls[i]);
        ck_assert_int_eq(r.rc, 2);
        ck_assert_msg(strncmp(wfbt_last_line(r.out), "{\"status\": \"error\", \"error\": "
                                                     "{\"type\": \"UsageError\", \"message\": ",
                              60) == 0,
                      "%s: stdout '%s'", calls[i][0], r.out);
        assert_json_lines(r.out);
        wfbt_out_free(&r);
    }
}
END_TEST

START_TEST(convert_json_has_a_status)
{
    wfbt_out r = wfbt_run(ARGS("convert", "tests/converter/cases/parallel_pick/parallel_pick.xoml",
                               "--check", "--json", "--lib-path", wfbt_test_libs()));
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(wfbt_last_line(r.out), "{\"status\": \"converted\", "
                                                        "\"converted\": 1, \"partial\": 0, "
                                                        "\"failed\": 0, \"files\": ["));
    wfbt_out_free(&r);
}
END_TEST

START_TEST(host_json_lines_are_json_and_text_mode_sums_up)
{
    const char *tmp = wfbt_tmpdir();
    char db[1024];
    snprintf(db, sizeof db, "%s/h.db", tmp);
    wfbt_out r = wfbt_run(ARGS("start", wfbt_data("args.xaml"), "--store", db, "--arg", "S=x",
                               "--arg", "I=1"));
    ck_assert_msg(r.rc == 0, "%s", r.err);
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("host", "--store", db, "--once", "--json"));
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_ptr_null(strstr(r.out, "start x"));
    ck_assert_ptr_nonnull(strstr(r.err, "start x"));
    assert_json_lines(r.out);
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("start", wfbt_data("args.xaml"), "--store", db, "--arg", "S=y"));
    ck_assert_msg(r.rc == 0, "%s", r.err);
    wfbt_out_free(&r);
    r = wfbt_run(ARGS("host", "--store", db, "--once"));
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "wfbridge host: ran 1 (closed 0, idle 1, faulted 0, "
                                        "canceled 0, terminated 0, executing 0), failed 0, "
                                        "suspended 0\n"));
    wfbt_out_free(&r);
    wfbt_tmp_remove(tmp);
}
END_TEST

/* `VERB --version` answers like `--version`, and the converted file's header carries the
 * same version. */
START_TEST(verb_version_is_the_one_version)
{
    wfbt_out r = wfbt_run(ARGS("--version"));
    ck_assert_int_eq(r.rc, 0);
    char version[64];
    snprintf(version, sizeof version, "%s", r.out + strlen("wfbridge "));
    version[strcspn(version, "\n")] = '\0';
    wfbt_out_free(&r);
    const char *verbs[] = {"run", "convert", "verify", "host", "start", "inspect"};
    for (size_t i = 0; i < 6; i++) {
        r = wfbt_run(ARGS(verbs[i], "--version"));
        ck_assert_msg(r.rc == 0, "%s --version: %s", verbs[i], r.err);
        char want[96];
        snprintf(want, sizeof want, "wfbridge %s\n", version);
        ck_assert_str_eq(r.out, want);
        wfbt_out_free(&r);
    }
    r = wfbt_run(ARGS("convert", "tests/converter/cases/parallel_pick/parallel_pick.xoml", "-o",
                      "-", "--lib-path", wfbt_test_libs()));
    ck_assert_int_eq(r.rc, 0);
    char header[128];
    snprintf(header, sizeof header, "by wfbridge convert %s -->", version);
    ck_assert_msg(strstr(r.out, header) != NULL, "no '%s'", header);
    wfbt_out_free(&r);
}
END_TEST

Suite *cli_shapes_suite(void)
{
    Suite *s = suite_create("cli_shapes");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_test(core, convert_json_has_a_status);
    tcase_add_test(core, verb_version_is_the_one_version);
    tcase_add_test(core, host_json_lines_are_json_and_text_mode_sums_up);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 120);
    tcase_add_test(bad, usage_errors_with_json_print_an_error_object);
    suite_add_tcase(s, bad);
    return s;
}

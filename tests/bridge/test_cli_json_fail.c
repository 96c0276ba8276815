/* test_cli_json_fail.c — --json on every failure (docs/formats.md "Output contracts"): each verb
 * that fails after its options were read (a missing or malformed file, an unknown or corrupt
 * store, a missing library) exits as the contract says, prints exactly one JSON object on stdout
 * naming the root cause and its file:line:col, and keeps the text message on stderr. One table,
 * one row per verb and failure. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "support_bridge.h"

/* One failure. "@/" at the start of an argument stands for the test's temporary directory,
 * "@libs" for the built test libraries. */
typedef struct fail_case {
    const char *args[14]; /* NULL-terminated */
    const char *code;     /* the error's "code" (a wf_status name) */
    const char *file;     /* the end of its "file"; NULL: none */
    unsigned line, col;   /* its position; 0: none */
} fail_case;

#define XAML_BAD "tests/bridge/data/bad/unclosed_sequence.xaml"
#define XOML_BAD "tests/bridge/data/bad/unquoted_attribute.xoml"
#define ID       "0123456789abcdef0123456789abcdef"
#define EXPENSE  "samples/legacy/expense_approval/expense_approval.xoml"
#define ITEMS    "tests/bridge/data/migrate/items.xoml=tests/bridge/data/args.xaml"

static const fail_case cases[] = {
    {{"run", "@/missing.xaml", "--json"}, "io", "missing.xaml", 0, 0},
    {{"run", XAML_BAD, "--json"}, "xml", XAML_BAD, 6, 12},
    {{"run", "-", "--json"}, "xml", "<stdin>", 1, 1},
    {{"run", "tests/bridge/data/args.xaml", "--store", "@/corrupt.db", "--json"}, "corrupt",
     "corrupt.db", 0, 0},
    {{"run-legacy", XOML_BAD, "--json"}, "xml", XOML_BAD, 4, 56},
    {{"run-legacy", EXPENSE, "--lib-path", "@/", "--json"}, "nolib", EXPENSE, 1, 1},
    {{"instances", "--store", "@/missing.db", "--json"}, "io", "missing.db", 0, 0},
    {{"instances", "--store", "@/corrupt.db", "--json"}, "corrupt", "corrupt.db", 0, 0},
    {{"inspect", "--store", "@/corrupt.db", ID, "--json"}, "corrupt", "corrupt.db", 0, 0},
    {{"inspect", "--store", "@/empty.db", ID, "--json"}, "notfound", "empty.db", 0, 0},
    {{"resume", "--store", "@/missing.db", ID, "--bookmark", "go=1", "--json"}, "io",
     "missing.db", 0, 0},
    {{"host", "--once", "--store", "@/missing.db", "--json"}, "io", "missing.db", 0, 0},
    {{"verify", EXPENSE, "--lib-path", "@/", "--json"}, "nolib", EXPENSE, 1, 1},
    {{"verify", "@/missing.xoml", "--json"}, "io", "missing.xoml", 0, 0},
    {{"start", XAML_BAD, "--store", "@/new.db", "--json"}, "xml", XAML_BAD, 6, 12},
    {{"migrate-instances", "--from", "@/missing.db", "--to", "@/new.db", "--map", ITEMS,
      "--lib-path", "@libs", "--json"},
     "io", "missing.db", 0, 0},
    {{"verify-instances", "--from", "@/corrupt.db", "--to", "@/new.db", "--map", ITEMS,
      "--lib-path", "@libs", "--json"},
     "corrupt", "corrupt.db", 0, 0},
    {{"serve", XAML_BAD, "--listen", "127.0.0.1:0", "--json"}, "xml", XAML_BAD, 6, 12},
};

static bool ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), m = strlen(end);
    return n >= m && strcmp(s + n - m, end) == 0;
}

/* stdout of r is one line holding one object; returns it (the caller frees it). */
static json_t *only_object(const wfbt_out *r, const char *what)
{
    const char *nl = strchr(r->out, '\n');
    ck_assert_msg(nl && !nl[1], "%s: stdout is not one line: '%s'", what, r->out);
    json_error_t e;
    json_t *root = json_loads(r->out, JSON_REJECT_DUPLICATES, &e);
    ck_assert_msg(json_is_object(root), "%s: stdout is no JSON object (%s): '%s'", what, e.text,
                  r->out);
    return root;
}

static void check_error(const fail_case *c, const wfbt_out *r)
{
    json_t *root = only_object(r, c->args[0]);
    json_t *error = json_object_get(root, "error");
    ck_assert_str_eq(json_string_value(json_object_get(root, "status")), "error");
    ck_assert_str_eq(json_string_value(json_object_get(error, "type")), "InputError");
    const char *message = json_string_value(json_object_get(error, "message"));
    ck_assert_msg(message && *message && strstr(r->err, message), "%s: message '%s' not in '%s'",
                  c->args[0], message, r->err);
    const char *code = json_string_value(json_object_get(error, "code"));
    if (c->code)
        ck_assert_msg(code && strcmp(code, c->code) == 0, "%s: code %s", c->args[0], code);
    const char *file = json_string_value(json_object_get(error, "file"));
    ck_assert_msg(c->file ? file && ends_with(file, c->file) : !file, "%s: file %s", c->args[0],
                  file);
    ck_assert_int_eq(json_integer_value(json_object_get(error, "line")), c->line);
    ck_assert_int_eq(json_integer_value(json_object_get(error, "col")), c->col);
    ck_assert_int_eq(json_object_get(error, "line") != NULL, c->line != 0);
    json_decref(root);
}

/* A store file that is not a database, and a store without the instance asked for. */
static void make_stores(const char *dir)
{
    FILE *f = fopen(wfbt_tmp_path(dir, "corrupt.db"), "w");
    ck_assert_ptr_nonnull(f);
    fputs("this is not an instance store\n", f);
    ck_assert_int_eq(fclose(f), 0);
    char db[1024];
    snprintf(db, sizeof db, "%s", wfbt_tmp_path(dir, "empty.db"));
    wfbt_out r = wfbt_run((const char *const[]){"run", "tests/bridge/data/delay.xaml", "--store",
                                                db, NULL});
    ck_assert_msg(r.rc == 0, "%s", r.err);
    wfbt_out_free(&r);
}

START_TEST(every_verb_failure_is_one_error_object)
{
    const char *dir = wfbt_tmpdir();
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", dir);
    make_stores(tmp);
    const fail_case *c = &cases[_i];
    char expanded[14][1024];
    const char *args[14] = {NULL};
    for (size_t i = 0; c->args[i]; i++) {
        if (strcmp(c->args[i], "@libs") == 0) {
            args[i] = wfbt_test_libs();
            continue;
        }
        bool here = strncmp(c->args[i], "@/", 2) == 0;
        snprintf(expanded[i], sizeof expanded[i], "%s%s%s", here ? tmp : "", here ? "/" : "",
                 c->args[i] + (here ? 2 : 0));
        args[i] = expanded[i];
    }
    wfbt_out r = wfbt_run(args);
    ck_assert_msg(r.rc == 2, "%s: exit %d; stderr: %s", args[0], r.rc, r.err);
    check_error(c, &r);
    ck_assert_ptr_null(strstr(r.err, "{\"status\""));
    wfbt_out_free(&r);
    FILE *created = fopen(wfbt_tmp_path(tmp, "new.db"), "r");
    ck_assert_msg(!created, "%s: a store was created", args[0]);
    wfbt_tmp_remove(tmp);
}
END_TEST

/* Without --json the same failure prints nothing on stdout. */
START_TEST(text_mode_failure_prints_no_object)
{
    wfbt_out r = wfbt_run((const char *const[]){"run", XAML_BAD, NULL});
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_ptr_nonnull(strstr(r.err, XAML_BAD ":6:12: error: "));
    wfbt_out_free(&r);
}
END_TEST

/* A verb that failed but printed its own object (convert's summary) prints no second one;
 * the summary names each failed file's first error. */
START_TEST(own_object_is_not_doubled)
{
    wfbt_out r = wfbt_run((const char *const[]){"convert", XOML_BAD, "--check", "--json", NULL});
    ck_assert_int_eq(r.rc, 2);
    json_t *root = only_object(&r, "convert");
    ck_assert_str_eq(json_string_value(json_object_get(root, "status")), "failed");
    /* the failed file says why, located like the error object */
    json_t *error = json_object_get(json_array_get(json_object_get(root, "files"), 0), "error");
    ck_assert_ptr_nonnull(error);
    ck_assert_str_eq(json_string_value(json_object_get(error, "file")), XOML_BAD);
    ck_assert_int_eq(json_integer_value(json_object_get(error, "line")), 4);
    ck_assert_int_eq(json_integer_value(json_object_get(error, "col")), 56);
    ck_assert_ptr_nonnull(json_string_value(json_object_get(error, "message")));
    json_decref(root);
    wfbt_out_free(&r);
}
END_TEST

Suite *cli_json_fail_suite(void)
{
    Suite *s = suite_create("cli_json_fail");
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 120);
    tcase_add_loop_test(bad, every_verb_failure_is_one_error_object, 0,
                        (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(bad, text_mode_failure_prints_no_object);
    tcase_add_test(bad, own_object_is_not_doubled);
    suite_add_tcase(s, bad);
    return s;
}

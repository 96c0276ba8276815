/* test_json.c — the strict JSON reader: number typing, escapes and surrogate pairs, and bad
 * JSON reported with the exact line and character column inside the text; depth limit;
 * out of memory. */
#include <check.h>
#include <string.h>

#include "../../common/wf_value.h"
#include "../wf_test_util.h"

static wf_value parse_ok(const char *text)
{
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wf_json_parse(NULL, text, strlen(text), &v, &err) == WF_OK, "%s: %s", text,
                  err.message);
    return v;
}

static void parse_bad(const char *text, wf_status st, unsigned line, unsigned col,
                      const char *needle)
{
    wf_value v = wf_int32(1);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_json_parse(NULL, text, strlen(text), &v, &err), st);
    ck_assert(wf_is_null(&v));
    WF_ASSERT_ERROR(err, st, line, col, needle);
}

START_TEST(test_numbers_get_the_smallest_type)
{
    ck_assert_ptr_eq(parse_ok("2147483647").type, &wf_type_int32);
    ck_assert_ptr_eq(parse_ok("-2147483649").type, &wf_type_int64);
    ck_assert(parse_ok("-9223372036854775808").u.i64 == INT64_MIN);
    wf_value big = parse_ok("9223372036854775808");
    ck_assert_ptr_eq(big.type, &wf_type_double);
    ck_assert(parse_ok("1.5").u.d == 1.5);
    ck_assert(parse_ok("-0.5e-2").u.d == -0.005);
    ck_assert_ptr_eq(parse_ok("1E2").type, &wf_type_double);
    ck_assert_int_eq(parse_ok(" \t\r\n -0 ").u.i32, 0);
}
END_TEST

START_TEST(test_strings_escapes_and_surrogates)
{
    wf_value v = parse_ok("\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude00\"");
    ck_assert_str_eq(wf_value_str(&v), "a\"\\/\b\f\n\r\t\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    wf_value_release(&v);
    v = parse_ok("\"caf\xC3\xA9\"");
    ck_assert_uint_eq(wf_value_str_len(&v), 5);
    wf_value_release(&v);
}
END_TEST

START_TEST(test_arrays_objects_literals)
{
    wf_value v = parse_ok("{\"a\": [1, true, null, {\"b\": []}], \"c\": false}");
    ck_assert_ptr_eq(v.type, &wf_type_record);
    const wf_value *a = wf_value_record_get(&v, "a");
    ck_assert_ptr_eq(a->type, &wf_type_list_object);
    ck_assert_uint_eq(wf_value_list_count(a), 4);
    ck_assert(wf_is_null(wf_value_list_at(a, 2)));
    ck_assert(wf_value_list_at(a, 1)->u.b);
    const wf_value *inner = wf_value_record_get(wf_value_list_at(a, 3), "b");
    ck_assert_uint_eq(wf_value_list_count(inner), 0);
    ck_assert(!wf_value_record_get(&v, "c")->u.b);
    wf_value_release(&v);
    v = parse_ok("\xEF\xBB\xBF[]"); /* a byte order mark is skipped */
    ck_assert_uint_eq(wf_value_list_count(&v), 0);
    wf_value_release(&v);
}
END_TEST

START_TEST(test_bad_json_reports_line_and_column)
{
    parse_bad("{\"a\": 1,\n  \"b\" 2}", WF_E_SYNTAX, 2, 7, "expected ':'");
    parse_bad("[1, 2", WF_E_SYNTAX, 1, 6, "end of JSON input");
    parse_bad("[1 2]", WF_E_SYNTAX, 1, 4, "',' or ']'");
    parse_bad("{\"k\": \"caf\xC3\xA9\",\n \"x\": tru}", WF_E_SYNTAX, 2, 7, "'t'");
    parse_bad("  01", WF_E_SYNTAX, 1, 3, "leading zeros");
    parse_bad("1.", WF_E_SYNTAX, 1, 3, "digit after '.'");
    parse_bad("-", WF_E_SYNTAX, 1, 2, "digit");
    parse_bad("1e+", WF_E_SYNTAX, 1, 4, "exponent");
    parse_bad("\"abc", WF_E_SYNTAX, 1, 1, "unterminated");
    parse_bad("\"a\tb\"", WF_E_SYNTAX, 1, 3, "control character");
    parse_bad("\"\\x\"", WF_E_SYNTAX, 1, 2, "invalid escape");
    parse_bad("\"\\u12G4\"", WF_E_SYNTAX, 1, 2, "\\u escape");
    parse_bad("\"\\ud83d x\"", WF_E_SYNTAX, 1, 2, "unpaired surrogate");
    parse_bad("\"\\ude00\"", WF_E_SYNTAX, 1, 2, "unpaired surrogate");
    parse_bad("\"\\u0000\"", WF_E_UNSUPPORTED, 1, 2, "\\u0000");
    parse_bad("\"\xC3\x28\"", WF_E_SYNTAX, 1, 2, "UTF-8");
    parse_bad("{\"a\": 1, \"a\": 2}", WF_E_SYNTAX, 1, 10, "duplicate key");
    parse_bad("{1: 2}", WF_E_SYNTAX, 1, 2, "string key");
    parse_bad("[1,]", WF_E_SYNTAX, 1, 4, "']'");
    parse_bad("[] x", WF_E_SYNTAX, 1, 4, "end of input after");
    parse_bad("", WF_E_SYNTAX, 1, 1, "end of JSON input");
    parse_bad("1e400", WF_E_RANGE, 1, 1, "out of range");
    parse_bad("nul", WF_E_SYNTAX, 1, 1, "'n'");
}
END_TEST

START_TEST(test_embedded_nul_byte_refused)
{
    const char text[] = "[1,\0 2]";
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_json_parse(NULL, text, sizeof text - 1, &v, &err), WF_E_SYNTAX);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 1, 4, "0x00");
}
END_TEST

/* Builds {"k0": 0, ..., "k<n-1>": n-1} plus `extra` before the closing brace. */
static char *wide_object(int n, const char *extra)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addc(&b, '{');
    for (int i = 0; i < n; i++)
        wf_buf_addf(&b, "%s\"k%d\": %d", i ? ", " : "", i, i);
    wf_buf_addf(&b, "%s}", extra);
    return wf_buf_detach(&b, NULL);
}

START_TEST(test_duplicate_key_in_large_object)
{
    char *text = wide_object(40, ",\n \"k7\": 1");
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_json_parse(NULL, text, strlen(text), &v, &err), WF_E_SYNTAX);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 2, 2, "duplicate key");
    wf_free(text);
    text = wide_object(40, "");
    ck_assert_int_eq(wf_json_parse(NULL, text, strlen(text), &v, &err), WF_OK);
    ck_assert_uint_eq(wf_value_record_count(&v), 40);
    ck_assert_int_eq(wf_value_record_get(&v, "k39")->u.i32, 39);
    wf_value_release(&v);
    wf_free(text);
}
END_TEST

START_TEST(test_depth_limit)
{
    char deep[600];
    memset(deep, '[', 300);
    memset(deep + 300, ']', 300);
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_json_parse(NULL, deep, 600, &v, &err), WF_E_LIMIT);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 1, 257, "256");
    ck_assert(wf_is_null(&v));
    wf_error_clear(&err);
    ck_assert_int_eq(wf_json_parse(NULL, deep + 44, 512, &v, &err), WF_OK); /* 256 deep */
    wf_value_release(&v);
}
END_TEST

static wf_status json_op(void *ud)
{
    const char *text = ud;
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    wf_status st = wf_json_parse(NULL, text, strlen(text), &v, &err);
    ck_assert_int_eq(st, err.code);
    wf_value_release(&v);
    return st;
}

START_TEST(test_large_object_nomem)
{
    char *text = wide_object(30, "");
    ck_assert_uint_gt(wf_test_nomem_loop(json_op, text, 400), 30);
    wf_free(text);
}
END_TEST

START_TEST(test_parse_nomem)
{
    char text[] = "{\"list\": [1, 2.5, \"three\", {\"four\": [true, null]}], \"s\": \"\\u00e9\"}";
    ck_assert_uint_gt(wf_test_nomem_loop(json_op, text, 300), 5);
}
END_TEST

Suite *common_json_suite(void)
{
    Suite *s = suite_create("common_json");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_numbers_get_the_smallest_type);
    tcase_add_test(core, test_strings_escapes_and_surrogates);
    tcase_add_test(core, test_arrays_objects_literals);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_bad_json_reports_line_and_column);
    tcase_add_test(bad, test_embedded_nul_byte_refused);
    tcase_add_test(bad, test_duplicate_key_in_large_object);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_depth_limit);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_parse_nomem);
    tcase_add_test(nomem, test_large_object_nomem);
    suite_add_tcase(s, nomem);
    return s;
}

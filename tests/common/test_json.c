/* test_json.c — the JSON reader (jansson underneath): number typing from the text (exact
 * Decimal targets, integers beyond Int64 refused), escapes and surrogate pairs, key order, bad
 * JSON reported with the exact line and character column inside the text; depth limit; out
 * of memory. */
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
    ck_assert(parse_ok("9223372036854775807").u.i64 == INT64_MAX);
    /* beyond Int64: refused rather than rounded to a Double */
    parse_bad("9223372036854775808", WF_E_RANGE, 1, 1, "must fit in Int64");
    parse_bad("[1, -9223372036854775809]", WF_E_RANGE, 1, 5, "-9223372036854775809");
    ck_assert(parse_ok("1e300").u.d == 1e300);
    ck_assert(parse_ok("0.1").u.d == 0.1); /* correctly rounded */
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
    /* at the start of the token jansson stopped at; inside an open string, where it stopped */
    parse_bad("{\"a\": 1,\n  \"b\" 2}", WF_E_SYNTAX, 2, 7, "':' expected");
    parse_bad("[1, 2", WF_E_SYNTAX, 1, 6, "unexpected end of JSON input");
    parse_bad("[1 2]", WF_E_SYNTAX, 1, 4, "']' expected");
    parse_bad("{\"k\": \"caf\xC3\xA9\",\n \"x\": tru}", WF_E_SYNTAX, 2, 7, "'tru'");
    parse_bad("  01", WF_E_SYNTAX, 1, 3, "invalid token near '0'");
    parse_bad("1.", WF_E_SYNTAX, 1, 1, "'1.'");
    parse_bad("-", WF_E_SYNTAX, 1, 1, "invalid token");
    parse_bad("1e+", WF_E_SYNTAX, 1, 1, "'1e+'");
    parse_bad("\"abc", WF_E_SYNTAX, 1, 1, "premature end of input");
    parse_bad("\"a\tb\"", WF_E_SYNTAX, 1, 3, "control character");
    parse_bad("\"\\x\"", WF_E_SYNTAX, 1, 4, "invalid escape");
    parse_bad("\"\\u12G4\"", WF_E_SYNTAX, 1, 7, "invalid escape");
    parse_bad("\"\\ud83d x\"", WF_E_SYNTAX, 1, 1, "invalid Unicode");
    parse_bad("\"\\ude00\"", WF_E_SYNTAX, 1, 1, "invalid Unicode");
    parse_bad("\"\\u0000\"", WF_E_UNSUPPORTED, 1, 1, "\\u0000");
    parse_bad("{\"\\u0000\": 1}", WF_E_UNSUPPORTED, 1, 2, "\\u0000");
    parse_bad("\"\xC3\x28\"", WF_E_SYNTAX, 1, 2, "decode byte 0xc3");
    parse_bad("{\"a\": 1, \"a\": 2}", WF_E_SYNTAX, 1, 10, "duplicate key");
    parse_bad("{1: 2}", WF_E_SYNTAX, 1, 2, "string or '}' expected");
    parse_bad("[1,]", WF_E_SYNTAX, 1, 4, "unexpected token near ']'");
    parse_bad("[] x", WF_E_SYNTAX, 1, 4, "end of file expected");
    parse_bad("", WF_E_SYNTAX, 1, 1, "unexpected end of JSON input");
    parse_bad("1e400", WF_E_RANGE, 1, 1, "out of range");
    parse_bad("nul", WF_E_SYNTAX, 1, 1, "'nul'");
}
END_TEST

START_TEST(test_embedded_nul_byte_refused)
{
    const char text[] = "[1,\0 2]";
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_json_parse(NULL, text, sizeof text - 1, &v, &err), WF_E_SYNTAX);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 1, 4, "byte 0x00");
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

/* The first problem in the text wins: a syntax error before the 257th bracket is reported
 * as itself, and the limit is checked after a BOM too. */
START_TEST(test_depth_limit_and_earlier_errors)
{
    char text[600];
    memcpy(text, "[x", 2);
    memset(text + 2, '[', 300);
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_json_parse(NULL, text, 302, &v, &err), WF_E_SYNTAX);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 1, 2, "'x'");
    memcpy(text, "\xEF\xBB\xBF", 3);
    memset(text + 3, '[', 300);
    wf_error_clear(&err);
    ck_assert_int_eq(wf_json_parse(NULL, text, 303, &v, &err), WF_E_LIMIT);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 1, 258, "256"); /* the BOM is one character */
    /* brackets inside strings do not nest */
    memset(text, '[', 256);
    memcpy(text + 256, "\"[[[{{\"", 7);
    memset(text + 263, ']', 256);
    ck_assert_int_eq(wf_json_parse(NULL, text, 519, &v, &err), WF_OK);
    wf_value_release(&v);
}
END_TEST

START_TEST(test_keys_keep_document_order)
{
    wf_value v = parse_ok("{\"z\": 1, \"a\": [2, 3.5], \"m\": {\"y\": -4, \"b\": 5}}");
    ck_assert_str_eq(wf_value_record_key(&v, 0), "z");
    ck_assert_str_eq(wf_value_record_key(&v, 1), "a");
    ck_assert_str_eq(wf_value_record_key(&v, 2), "m");
    const wf_value *m = wf_value_record_get(&v, "m");
    ck_assert_str_eq(wf_value_record_key(m, 0), "y");
    ck_assert_int_eq(wf_value_record_at(m, 0)->u.i32, -4);
    ck_assert(wf_value_list_at(wf_value_record_get(&v, "a"), 1)->u.d == 3.5);
    wf_value_release(&v);
}
END_TEST

/* Decimal targets read their digits, not a Double: 922337203685477.5807 as a Double is
 * ...477.625. */
START_TEST(test_parse_as_decimal_is_exact)
{
    wf_types *types = wf_types_create();
    const wf_type *decs = wf_types_list(types, &wf_type_decimal);
    const char *text = "[922337203685477.5807, 0.1, -0.0001, 3, 1e2]";
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wf_json_parse_as(types, decs, text, strlen(text), &v, &err) == WF_OK, "%s",
                  err.message);
    ck_assert_ptr_eq(v.type, decs);
    static const char *const want[] = {"922337203685477.5807", "0.1", "-0.0001", "3", "100"};
    for (size_t i = 0; i < 5; i++) {
        char t[WF_DECIMAL_TEXT_MAX];
        wf_decimal_format(wf_value_list_at(&v, i)->u.dec, t, sizeof t);
        ck_assert_str_eq(t, want[i]); /* the scale as written; 1e2 through Double */
    }
    wf_value_release(&v);
    /* the same through wf_value_parse (--arg lists) and for a bare Decimal */
    ck_assert_int_eq(wf_value_parse(types, decs, "[922337203685477.5807]", &v, NULL), WF_OK);
    ck_assert_int_eq(wf_decimal_cmp(wf_value_list_at(&v, 0)->u.dec,
                                    wf_decimal_from_currency(INT64_MAX)), 0);
    wf_value_release(&v);
    ck_assert_int_eq(wf_json_parse_as(NULL, &wf_type_decimal, "12.123456", 9, &v, NULL), WF_OK);
    ck_assert_int_eq(v.u.dec.lo, 12123456); /* more than 4 places are kept */
    ck_assert_int_eq(v.u.dec.scale, 6);
    /* beyond the Decimal range: refused where the number is */
    const char *big = "[1,\n 79228162514264337593543950336.5]";
    ck_assert_int_eq(wf_json_parse_as(types, decs, big, strlen(big), &v, &err), WF_E_RANGE);
    WF_ASSERT_ERROR(err, WF_E_RANGE, 2, 2, "out of range");
    ck_assert(wf_is_null(&v));
    wf_types_destroy(types);
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
    tcase_add_test(core, test_keys_keep_document_order);
    tcase_add_test(core, test_parse_as_decimal_is_exact);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_bad_json_reports_line_and_column);
    tcase_add_test(bad, test_embedded_nul_byte_refused);
    tcase_add_test(bad, test_duplicate_key_in_large_object);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_depth_limit);
    tcase_add_test(limits, test_depth_limit_and_earlier_errors);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_parse_nomem);
    tcase_add_test(nomem, test_large_object_nomem);
    suite_add_tcase(s, nomem);
    return s;
}

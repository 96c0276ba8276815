/* test_value.c — types (interning, lookup, subtyping), heap values and refcounts, equality and
 * ordering, checked conversion (overflow, exact decimals), per-type parsing incl. bad input,
 * and the JSON and text renderings of the output contract (docs/formats.md "Values"). */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_value.h"
#include "../wf_test_util.h"

/* Renders v as JSON (or text) into a static buffer. */
static const char *json_of(const wf_value *v, bool text)
{
    static char out[512];
    wf_buf b;
    wf_buf_init(&b);
    ck_assert(text ? wf_value_to_text(v, &b) : wf_value_to_json(v, &b));
    snprintf(out, sizeof out, "%s", b.data);
    wf_buf_fini(&b);
    return out;
}

static wf_value parsed(const wf_type *t, const char *text)
{
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wf_value_parse(NULL, t, text, &v, &err) == WF_OK, "%s: %s", text, err.message);
    return v;
}

/* The Decimal text of v, as ToString() shows it. */
static const char *dec_text(wf_value v)
{
    static char buf[WF_DECIMAL_TEXT_MAX];
    ck_assert_ptr_eq(v.type, &wf_type_decimal);
    wf_decimal_format(v.u.dec, buf, sizeof buf);
    return buf;
}

START_TEST(test_types_find_and_intern)
{
    wf_types *types = wf_types_create();
    ck_assert_ptr_eq(wf_types_find(types, "x:Int32"), &wf_type_int32);
    ck_assert_ptr_eq(wf_types_find(types, "System.String"), &wf_type_string);
    ck_assert_ptr_eq(wf_types_find(types, "int"), &wf_type_int32);
    ck_assert_ptr_eq(wf_types_find(types, "s:InvalidOperationException"),
                     &wf_exc_invalid_operation);
    const wf_type *li = wf_types_find(types, "scg:List(x:Int32)");
    ck_assert_ptr_nonnull(li);
    ck_assert_ptr_eq(li, wf_types_list(types, &wf_type_int32));
    ck_assert_ptr_eq(li, wf_types_list(NULL, &wf_type_int32)); /* built-in lists are static */
    const wf_type *nested = wf_types_find(types, "List(List(String))");
    ck_assert_ptr_nonnull(nested);
    ck_assert_str_eq(nested->name, "List(List(String))");
    ck_assert_ptr_eq(nested, wf_types_list(types, wf_types_list(types, &wf_type_string)));
    ck_assert_ptr_null(wf_types_find(types, "Nope"));
    ck_assert_ptr_null(wf_types_find(types, "Dictionary(Int32)"));
    wf_types_destroy(types);
}
END_TEST

START_TEST(test_exception_hierarchy)
{
    wf_types *types = wf_types_create();
    const wf_type *mine = NULL, *again = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_types_exception(types, "OrderException", &wf_exc_application, &mine, &err),
                     WF_OK);
    ck_assert_int_eq(wf_types_exception(types, "OrderException", &wf_exc_application, &again, &err),
                     WF_OK);
    ck_assert_ptr_eq(mine, again);
    ck_assert_ptr_eq(wf_types_find(types, "OrderException"), mine);
    const wf_type *dotted = NULL;
    ck_assert_int_eq(wf_types_exception(types, "Contoso.LateException", NULL, &dotted, &err),
                     WF_OK);
    ck_assert_ptr_eq(wf_types_find(types, "Contoso.LateException"), dotted);
    ck_assert_ptr_eq(dotted->base, &wf_exc_exception);
    ck_assert(wf_type_is_a(mine, &wf_exc_exception));
    ck_assert(!wf_type_is_a(mine, &wf_exc_system));
    ck_assert_int_eq(wf_type_depth(mine), 2);
    ck_assert_int_eq(wf_type_depth(&wf_exc_divide_by_zero), 3);
    ck_assert(wf_type_is_a(&wf_exc_divide_by_zero, &wf_exc_arithmetic));
    ck_assert_int_eq(wf_types_exception(types, "OrderException", &wf_exc_system, &again, &err),
                     WF_E_TYPE);
    ck_assert_ptr_null(again);
    ck_assert(wf_type_assignable(&wf_exc_exception, mine));
    ck_assert(!wf_type_assignable(mine, &wf_exc_exception));
    wf_types_destroy(types);
}
END_TEST

START_TEST(test_assignable_rules)
{
    ck_assert(wf_type_assignable(&wf_type_int64, &wf_type_int32));
    ck_assert(wf_type_assignable(&wf_type_decimal, &wf_type_int64));
    ck_assert(wf_type_assignable(&wf_type_double, &wf_type_int32));
    ck_assert(!wf_type_assignable(&wf_type_int32, &wf_type_int64));
    ck_assert(!wf_type_assignable(&wf_type_decimal, &wf_type_double));
    ck_assert(wf_type_assignable(&wf_type_object, &wf_type_bool));
    ck_assert(wf_type_assignable(&wf_type_string, &wf_type_null));
    ck_assert(!wf_type_assignable(&wf_type_int32, &wf_type_null));
    ck_assert(wf_type_is_numeric(&wf_type_decimal));
    ck_assert(!wf_type_is_numeric(&wf_type_string));
}
END_TEST

START_TEST(test_strings_lists_records_refcounts)
{
    wf_value s, list, rec;
    ck_assert_int_eq(wf_value_string("abc\0def", 7, &s), WF_OK);
    ck_assert_uint_eq(wf_value_str_len(&s), 7);
    wf_value items[] = {wf_int32(1), s};
    ck_assert_int_eq(wf_value_list(wf_types_list(NULL, &wf_type_object), items, 2, &list), WF_OK);
    const char *keys[] = {"n", "s"};
    ck_assert_int_eq(wf_value_record(keys, items, 2, &rec), WF_OK);
    wf_value_release(&s); /* the list and the record still hold it */
    ck_assert(wf_is_null(&s));
    ck_assert_uint_eq(wf_value_str_len(wf_value_list_at(&list, 1)), 7);
    ck_assert_ptr_null(wf_value_list_at(&list, 2));
    ck_assert_ptr_eq(wf_value_list_items(&list), wf_value_list_at(&list, 0));
    ck_assert_ptr_eq(wf_value_list_items(&list) + 1, wf_value_list_at(&list, 1));
    ck_assert_ptr_null(wf_value_list_items(&rec)); /* not a list */
    wf_value empty;
    ck_assert_int_eq(wf_value_list(wf_types_list(NULL, &wf_type_object), NULL, 0, &empty), WF_OK);
    ck_assert_ptr_null(wf_value_list_items(&empty));
    wf_value_release(&empty);
    ck_assert_str_eq(wf_value_record_key(&rec, 1), "s");
    ck_assert_int_eq(wf_value_record_get(&rec, "n")->u.i32, 1);
    ck_assert_ptr_null(wf_value_record_get(&rec, "x"));
    wf_value copy = wf_value_retain(&list);
    wf_value_release(&list);
    ck_assert_uint_eq(wf_value_list_count(&copy), 2);
    wf_value dst = wf_null();
    wf_value_set(&dst, &copy);
    wf_value_set(&dst, &dst);
    wf_value_release(&copy);
    ck_assert_uint_eq(wf_value_list_count(&dst), 2);
    wf_value_release(&dst);
    wf_value_release(&rec);
    wf_value_release(NULL);
}
END_TEST

START_TEST(test_static_strings_are_immortal)
{
    wf_arena *arena = wf_arena_create(0);
    wf_value lit;
    ck_assert_int_eq(wf_value_string_static(arena, "literal", 7, &lit), WF_OK);
    for (int i = 0; i < 3; i++) {
        wf_value c = wf_value_retain(&lit);
        wf_value_release(&c);
        wf_value_release(&c);
    }
    wf_value again = lit;
    wf_value_release(&again);
    ck_assert_str_eq(wf_value_str(&lit), "literal");
    char *owned = wf_strdup("taken");
    wf_value t;
    ck_assert_int_eq(wf_value_string_take(owned, 5, &t), WF_OK);
    ck_assert_str_eq(wf_value_str(&t), "taken");
    wf_value_release(&t);
    wf_arena_destroy(arena);
}
END_TEST

static void *churn_refs(void *arg)
{
    const wf_value *shared = arg;
    for (int i = 0; i < 20000; i++) {
        wf_value mine = wf_value_retain(shared);
        wf_value other = wf_value_retain(&mine);
        wf_value_release(&mine);
        wf_value_release(&other);
    }
    return NULL;
}

/* Refcounts are atomic: concurrent retain/release pairs leave exactly the first reference,
 * which then frees the payload (asan reports a leak or a double free otherwise). */
START_TEST(test_refcounts_across_threads)
{
    wf_value list = parsed(&wf_type_list_object, "[\"shared\", [1, 2]]");
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, churn_refs, &list), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    ck_assert_str_eq(wf_value_str(wf_value_list_at(&list, 0)), "shared");
    wf_value_release(&list);
}
END_TEST

START_TEST(test_equal_and_compare)
{
    wf_value a = wf_int32(3), b = parsed(&wf_type_decimal, "3.0000"), c = wf_double(3.0);
    ck_assert(wf_value_equal(&a, &b));
    ck_assert(wf_value_equal(&b, &c));
    wf_value big = wf_int64(INT64_MAX);
    wf_value bigd = parsed(&wf_type_decimal, "922337203685477.5807");
    int r = 0;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_value_compare(&big, &bigd, &r, &err), WF_OK);
    ck_assert_int_eq(r, 1); /* exact: no overflow when scaling */
    wf_value d1 = parsed(&wf_type_decimal, "1.0"), d2 = parsed(&wf_type_decimal, "1.00");
    ck_assert(wf_value_equal(&d1, &d2)); /* scale is not part of the value */
    wf_value s1, s2;
    wf_value_cstring("abc", &s1);
    wf_value_cstring("abd", &s2);
    ck_assert_int_eq(wf_value_compare(&s1, &s2, &r, &err), WF_OK);
    ck_assert_int_eq(r, -1);
    ck_assert(!wf_value_equal(&s1, &s2));
    ck_assert(!wf_value_equal(&s1, &a));
    ck_assert_int_eq(wf_value_compare(&s1, &a, &r, &err), WF_E_TYPE);
    ck_assert_ptr_nonnull(strstr(err.message, "String"));
    wf_value n1 = wf_double(NAN), n2 = wf_double(NAN);
    ck_assert(wf_value_equal(&n1, &n2));
    wf_value nul = wf_null(), nul2 = wf_null();
    ck_assert(wf_value_equal(&nul, &nul2));
    wf_value t1 = parsed(&wf_type_record, "{\"a\": [1, 2], \"b\": \"x\"}");
    wf_value t2 = parsed(&wf_type_record, "{\"b\": \"x\", \"a\": [1, 2.0]}");
    ck_assert(wf_value_equal(&t1, &t2));
    wf_value_release(&t1);
    wf_value_release(&t2);
    wf_value_release(&s1);
    wf_value_release(&s2);
}
END_TEST

START_TEST(test_convert_checks_overflow)
{
    wf_value out;
    wf_error err = WF_ERROR_INIT;
    wf_value v = wf_int64(3000000000LL);
    ck_assert_int_eq(wf_value_convert(&v, &wf_type_int32, &out, &err), WF_E_RANGE);
    ck_assert_ptr_nonnull(strstr(err.message, "3000000000"));
    ck_assert(wf_is_null(&out));
    wf_error_clear(&err);
    v = wf_double(1e300);
    ck_assert_int_eq(wf_value_convert(&v, &wf_type_int64, &out, &err), WF_E_RANGE);
    wf_error_clear(&err);
    v = wf_double(NAN);
    ck_assert_int_eq(wf_value_convert(&v, &wf_type_int32, &out, &err), WF_E_RANGE);
    wf_error_clear(&err);
    v = wf_double(1e29);
    ck_assert_int_eq(wf_value_convert(&v, &wf_type_decimal, &out, &err), WF_E_RANGE);
    wf_error_clear(&err);
    v = wf_double(-7.9);
    ck_assert_int_eq(wf_value_convert(&v, &wf_type_int32, &out, &err), WF_OK);
    ck_assert_int_eq(out.u.i32, -7); /* truncates toward zero, as a C# cast */
    v = parsed(&wf_type_decimal, "-7.9999");
    ck_assert_int_eq(wf_value_convert(&v, &wf_type_int32, &out, &err), WF_OK);
    ck_assert_int_eq(out.u.i32, -7);
    v = wf_double(0.12345);
    ck_assert_int_eq(wf_value_convert(&v, &wf_type_decimal, &out, &err), WF_OK);
    ck_assert_str_eq(dec_text(out), "0.12345"); /* 15 significant digits, as .NET */
    v = wf_int64(INT64_MAX);
    ck_assert_int_eq(wf_value_convert(&v, &wf_type_decimal, &out, &err), WF_OK);
    ck_assert_str_eq(dec_text(out), "9223372036854775807");
    v = wf_int32(12);
    ck_assert_int_eq(wf_value_convert(&v, &wf_type_decimal, &out, &err), WF_OK);
    ck_assert_str_eq(dec_text(out), "12");
}
END_TEST

START_TEST(test_convert_strings_null_lists)
{
    wf_value out, s;
    wf_error err = WF_ERROR_INIT;
    wf_value dec = parsed(&wf_type_decimal, "12.50");
    ck_assert_int_eq(wf_value_convert(&dec, &wf_type_string, &out, &err), WF_OK);
    ck_assert_str_eq(wf_value_str(&out), "12.50"); /* ToString() keeps the scale */
    wf_value_release(&out);
    wf_value_cstring(" 42 ", &s);
    ck_assert_int_eq(wf_value_convert(&s, &wf_type_int32, &out, &err), WF_OK);
    ck_assert_int_eq(out.u.i32, 42);
    wf_value_release(&s);
    wf_value_cstring("forty", &s);
    ck_assert_int_eq(wf_value_convert(&s, &wf_type_int32, &out, &err), WF_E_SYNTAX);
    ck_assert_ptr_nonnull(strstr(err.message, "forty"));
    wf_value_release(&s);
    wf_error_clear(&err);
    wf_value nul = wf_null();
    ck_assert_int_eq(wf_value_convert(&nul, &wf_type_string, &out, &err), WF_OK);
    ck_assert(wf_is_null(&out));
    ck_assert_int_eq(wf_value_convert(&nul, &wf_type_int32, &out, &err), WF_E_TYPE);
    wf_error_clear(&err);
    wf_value b = wf_bool(true);
    ck_assert_int_eq(wf_value_convert(&b, &wf_type_int32, &out, &err), WF_E_TYPE);
    ck_assert_ptr_nonnull(strstr(err.message, "Boolean"));
    wf_error_clear(&err);
    wf_value list = parsed(&wf_type_list_object, "[1, 2, 3]");
    const wf_type *li64 = wf_types_list(NULL, &wf_type_int64);
    ck_assert_int_eq(wf_value_convert(&list, li64, &out, &err), WF_OK);
    ck_assert_ptr_eq(out.type, li64);
    ck_assert_ptr_eq(wf_value_list_at(&out, 2)->type, &wf_type_int64);
    wf_value_release(&out);
    wf_value_release(&list);
    list = parsed(&wf_type_list_object, "[1, \"x\"]");
    ck_assert_int_eq(wf_value_convert(&list, li64, &out, &err), WF_E_SYNTAX);
    ck_assert(wf_is_null(&out));
    wf_value_release(&list);
    wf_value exc;
    wf_value_exception(&wf_exc_divide_by_zero, "boom", &exc);
    ck_assert_int_eq(wf_value_convert(&exc, &wf_exc_arithmetic, &out, &err), WF_OK);
    ck_assert_ptr_eq(out.type, &wf_exc_divide_by_zero);
    ck_assert_str_eq(wf_value_exc_message(&out), "boom");
    wf_value_release(&out);
    wf_value_release(&exc);
}
END_TEST

START_TEST(test_parse_each_type)
{
    wf_value v = parsed(&wf_type_bool, " TRUE ");
    ck_assert(v.u.b);
    v = parsed(&wf_type_bool, "False");
    ck_assert(!v.u.b);
    ck_assert_int_eq(parsed(&wf_type_int32, "-2147483648").u.i32, INT32_MIN);
    ck_assert(parsed(&wf_type_int64, "9223372036854775807").u.i64 == INT64_MAX);
    ck_assert(parsed(&wf_type_double, "1.5e3").u.d == 1500.0);
    ck_assert_str_eq(dec_text(parsed(&wf_type_decimal, "12.5000")), "12.5000");
    ck_assert(parsed(&wf_type_datetime, "1970-01-02").u.i64 == 86400000000LL);
    ck_assert(parsed(&wf_type_datetime, "2024-03-01T10:00:00Z").u.i64 == 1709287200000000LL);
    ck_assert(parsed(&wf_type_datetime, "2024-03-01T12:00:00.5+02:00").u.i64 == 1709287200500000LL);
    ck_assert(parsed(&wf_type_datetime, "1969-12-31T23:59:59.9999999Z").u.i64 == -1);
    ck_assert(parsed(&wf_type_timespan, "00:00:10").u.i64 == 10000000LL);
    ck_assert(parsed(&wf_type_timespan, "-1.02:03:04.5").u.i64 ==
              -(((26LL * 60 + 3) * 60 + 4) * 1000000 + 500000));
    ck_assert(parsed(&wf_type_timespan, "3").u.i64 == 3 * 86400000000LL);
    v = parsed(&wf_type_string, "as is ");
    ck_assert_str_eq(wf_value_str(&v), "as is ");
    wf_value_release(&v);
    const wf_type *ls = wf_types_list(NULL, &wf_type_string);
    v = parsed(ls, "[\"a\", \"b\"]");
    ck_assert_ptr_eq(v.type, ls);
    ck_assert_str_eq(wf_value_str(wf_value_list_at(&v, 1)), "b");
    wf_value_release(&v);
    v = parsed(&wf_type_object, "not json");
    ck_assert_str_eq(wf_value_str(&v), "not json");
    wf_value_release(&v);
}
END_TEST

static void expect_parse_error(const wf_type *t, const char *text, wf_status st, const char *needle)
{
    wf_value v = wf_int32(99);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_value_parse(NULL, t, text, &v, &err), st);
    ck_assert(wf_is_null(&v));
    ck_assert_msg(strstr(err.message, needle) != NULL, "'%s' not in '%s'", needle, err.message);
}

START_TEST(test_parse_bad_input)
{
    expect_parse_error(&wf_type_bool, "yes", WF_E_SYNTAX, "'yes' is not a valid Boolean");
    expect_parse_error(&wf_type_int32, "2147483648", WF_E_RANGE, "out of range for Int32");
    expect_parse_error(&wf_type_int32, "12abc", WF_E_SYNTAX, "12abc");
    expect_parse_error(&wf_type_int64, "99999999999999999999999", WF_E_RANGE, "Int64");
    expect_parse_error(&wf_type_double, "0x10", WF_E_SYNTAX, "Double");
    expect_parse_error(&wf_type_double, "1e999", WF_E_RANGE, "1e999");
    ck_assert_str_eq(dec_text(parsed(&wf_type_decimal, "0.00001")), "0.00001");
    expect_parse_error(&wf_type_decimal, "79228162514264337593543950336", WF_E_RANGE,
                       "out of range");
    expect_parse_error(&wf_type_decimal, "1,5", WF_E_SYNTAX, "Decimal");
    expect_parse_error(&wf_type_datetime, "2023-02-29", WF_E_RANGE, "2023-02-29");
    expect_parse_error(&wf_type_datetime, "2024-03-01T25:00:00Z", WF_E_SYNTAX, "DateTime");
    expect_parse_error(&wf_type_datetime, "01/03/2024", WF_E_SYNTAX, "DateTime");
    expect_parse_error(&wf_type_timespan, "00:61:00", WF_E_RANGE, "TimeSpan");
    expect_parse_error(&wf_type_timespan, "1.5", WF_E_SYNTAX, "TimeSpan");
    expect_parse_error(&wf_type_record, "[1]", WF_E_TYPE, "JSON object");
    expect_parse_error(&wf_type_record, "{\"a\":", WF_E_SYNTAX, "Record value");
    expect_parse_error(wf_types_list(NULL, &wf_type_int32), "[1, 3000000000]", WF_E_RANGE,
                       "3000000000");
    expect_parse_error(&wf_exc_exception, "x", WF_E_TYPE, "cannot be parsed");
}
END_TEST

START_TEST(test_json_rendering_contract)
{
    ck_assert_str_eq(json_of(&(wf_value){&wf_type_int32, {.i32 = -5}}, false), "-5");
    wf_value dec = parsed(&wf_type_decimal, "12.5000");
    ck_assert_str_eq(json_of(&dec, false), "\"12.5000\"");
    ck_assert_str_eq(json_of(&dec, true), "12.5000");
    dec = parsed(&wf_type_decimal, "12.5");
    ck_assert_str_eq(json_of(&dec, false), "\"12.5\""); /* the value's own scale */
    dec = parsed(&wf_type_decimal, "3");
    ck_assert_str_eq(json_of(&dec, true), "3");
    wf_value dt = wf_datetime_us(1709287200000000LL);
    ck_assert_str_eq(json_of(&dt, false), "\"2024-03-01T10:00:00Z\"");
    dt.u.i64 += 123456;
    ck_assert_str_eq(json_of(&dt, true), "2024-03-01T10:00:00.123456Z");
    dt.u.i64 = -1;
    ck_assert_str_eq(json_of(&dt, true), "1969-12-31T23:59:59.999999Z");
    wf_value ts = wf_timespan_us(((26LL * 60 + 3) * 60 + 4) * 1000000 + 500000);
    ck_assert_str_eq(json_of(&ts, false), "\"1.02:03:04.5000000\"");
    ts = wf_timespan_us(-10000000);
    ck_assert_str_eq(json_of(&ts, true), "-00:00:10");
    wf_value b = wf_bool(true);
    ck_assert_str_eq(json_of(&b, false), "true");
    ck_assert_str_eq(json_of(&b, true), "True");
    wf_value nul = wf_null();
    ck_assert_str_eq(json_of(&nul, false), "null");
    ck_assert_str_eq(json_of(&nul, true), "");
    wf_value s;
    wf_value_cstring("a\"b\n", &s);
    ck_assert_str_eq(json_of(&s, false), "\"a\\\"b\\n\"");
    ck_assert_str_eq(json_of(&s, true), "a\"b\n");
    wf_value_release(&s);
    wf_value rec = parsed(&wf_type_record, "{\"n\": 1, \"l\": [true, null, \"x\"], \"r\": {}}");
    ck_assert_str_eq(json_of(&rec, false), "{\"n\": 1, \"l\": [true, null, \"x\"], \"r\": {}}");
    ck_assert_str_eq(json_of(&rec, true), json_of(&rec, false));
    wf_value_release(&rec);
    wf_value exc;
    wf_value_exception(&wf_exc_invalid_operation, "bad \"state\"", &exc);
    ck_assert_str_eq(
        json_of(&exc, false),
        "{\"type\": \"InvalidOperationException\", \"message\": \"bad \\\"state\\\"\"}");
    ck_assert_str_eq(json_of(&exc, true), "InvalidOperationException: bad \"state\"");
    wf_value_release(&exc);
}
END_TEST

START_TEST(test_double_shortest_round_trip)
{
    static const struct {
        double d;
        const char *text;
    } cases[] = {{0.1, "0.1"},
                 {1.0 / 3, "0.3333333333333333"},
                 {3.0, "3"},
                 {-2.5, "-2.5"},
                 {1e15, "1E+15"},
                 {123456789012345.0, "123456789012345"},
                 {1e-5, "1E-05"},
                 {0.0001, "0.0001"},
                 {1.5e300, "1.5E+300"},
                 {0.0, "0"},
                 {5e-324, "5E-324"},
                 {1.7976931348623157e308, "1.7976931348623157E+308"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wf_value v = wf_double(cases[i].d);
        ck_assert_str_eq(json_of(&v, true), cases[i].text);
        ck_assert_str_eq(json_of(&v, false), cases[i].text);
    }
    wf_value nan = wf_double(NAN), inf = wf_double(-INFINITY);
    ck_assert_str_eq(json_of(&nan, false), "\"NaN\"");
    ck_assert_str_eq(json_of(&inf, false), "\"-Infinity\"");
    ck_assert_str_eq(json_of(&inf, true), "-Infinity");
}
END_TEST

static wf_status record_op(void *ud)
{
    (void)ud;
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    wf_status st =
        wf_value_parse(NULL, &wf_type_record, "{\"a\": [1, \"two\"], \"b\": \"c\"}", &v, &err);
    if (st == WF_OK) {
        wf_buf b;
        wf_buf_init(&b);
        if (!wf_value_to_json(&v, &b))
            st = WF_E_NOMEM;
        wf_buf_fini(&b);
    }
    wf_value_release(&v);
    return st;
}

START_TEST(test_parse_render_nomem)
{
    ck_assert_uint_gt(wf_test_nomem_loop(record_op, NULL, 200), 3);
}
END_TEST

Suite *common_value_suite(void)
{
    Suite *s = suite_create("common_value");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_types_find_and_intern);
    tcase_add_test(core, test_exception_hierarchy);
    tcase_add_test(core, test_assignable_rules);
    tcase_add_test(core, test_strings_lists_records_refcounts);
    tcase_add_test(core, test_static_strings_are_immortal);
    tcase_add_test(core, test_refcounts_across_threads);
    tcase_add_test(core, test_equal_and_compare);
    tcase_add_test(core, test_convert_checks_overflow);
    tcase_add_test(core, test_convert_strings_null_lists);
    tcase_add_test(core, test_parse_each_type);
    tcase_add_test(core, test_json_rendering_contract);
    tcase_add_test(core, test_double_shortest_round_trip);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_parse_bad_input);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_parse_render_nomem);
    suite_add_tcase(s, nomem);
    return s;
}

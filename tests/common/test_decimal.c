/* test_decimal.c — common/wf_decimal: System.Decimal as .NET computes it. The scale of the
 * calculation is kept, results that do not fit are rounded half to even, division gives as many
 * digits as fit, comparison ignores the scale, text keeps it, conversions to and from Double,
 * the integers and CURRENCY (the C boundary) round and overflow as .NET's do, and the codec reads
 * the old int64 form as scale 4. Expected values are what .NET prints for the same operation. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../common/wf_codec.h"
#include "../../common/wf_decimal.h"
#include "../wf_test_util.h"

#define MAX_TEXT "79228162514264337593543950335"

static wf_decimal dec(const char *text)
{
    wf_decimal d;
    ck_assert_msg(wf_decimal_parse(text, &d) == WF_OK, "parse '%s'", text);
    return d;
}

static const char *text_of(wf_decimal d)
{
    static char buf[WF_DECIMAL_TEXT_MAX];
    wf_decimal_format(d, buf, sizeof buf);
    return buf;
}

typedef wf_status (*binop)(wf_decimal, wf_decimal, wf_decimal *);

static void check_op(binop op, const char *a, const char *b, const char *want)
{
    wf_decimal r;
    ck_assert_msg(op(dec(a), dec(b), &r) == WF_OK, "%s op %s failed", a, b);
    ck_assert_msg(strcmp(text_of(r), want) == 0, "%s op %s = %s, want %s", a, b, text_of(r),
                  want);
}

static void check_overflow(binop op, const char *a, const char *b)
{
    wf_decimal r = dec("7");
    ck_assert_msg(op(dec(a), dec(b), &r) == WF_E_RANGE, "%s op %s did not overflow", a, b);
}

/* ---- core ------------------------------------------------------------------------------ */

START_TEST(test_scale_is_kept)
{
    check_op(wf_decimal_mul, "1.5", "1.0", "1.50");
    check_op(wf_decimal_add, "1.10", "2.2", "3.30");
    check_op(wf_decimal_sub, "1.00", "1", "0.00");
    check_op(wf_decimal_sub, "2", "2.50", "-0.50");
    check_op(wf_decimal_mul, "12.50", "3", "37.50");
    check_op(wf_decimal_add, "0.1", "0.2", "0.3");
    check_op(wf_decimal_mul, "-2.5", "4", "-10.0");
    check_op(wf_decimal_rem, "10.5", "3", "1.5");
    check_op(wf_decimal_rem, "-7", "2.5", "-2.0"); /* the sign of the dividend */
    check_op(wf_decimal_rem, "1.5", "10.00", "1.5"); /* |a| < |b|: a itself */
    check_op(wf_decimal_rem, "3.0", "1.5", "0.0");
}
END_TEST

START_TEST(test_division)
{
    check_op(wf_decimal_div, "59.97", "7", "8.567142857142857142857142857");
    check_op(wf_decimal_div, "1", "4", "0.25");
    check_op(wf_decimal_div, "10", "2", "5");
    check_op(wf_decimal_div, "10.00", "2", "5.00"); /* exact at the natural scale */
    check_op(wf_decimal_div, "1.0", "4", "0.25");
    check_op(wf_decimal_div, "1", "3", "0.3333333333333333333333333333");
    check_op(wf_decimal_div, "2", "3", "0.6666666666666666666666666667");
    check_op(wf_decimal_div, "1", "0.5", "2");
    check_op(wf_decimal_div, "-1", "8", "-0.125");
    check_op(wf_decimal_div, "100", "0.01", "10000");
    check_op(wf_decimal_div, MAX_TEXT, "1", MAX_TEXT);
    check_op(wf_decimal_div, "1", MAX_TEXT, "0"); /* rounds to zero, zeros dropped */
    /* 59.97 / 7 * 7 is not 59.97 again: WF3 and WF4 branch on that */
    wf_decimal q, back;
    ck_assert_int_eq(wf_decimal_div(dec("59.97"), dec("7"), &q), WF_OK);
    ck_assert_int_eq(wf_decimal_mul(q, dec("7"), &back), WF_OK);
    ck_assert_str_eq(text_of(back), "59.969999999999999999999999999");
    ck_assert_int_lt(wf_decimal_cmp(back, dec("59.97")), 0);
}
END_TEST

START_TEST(test_bankers_rounding)
{
    /* the exact result has more than 28 places or 96 bits: one rounding, half to even */
    check_op(wf_decimal_mul, "0.00000000000001", "0.000000000000015",
             "0.0000000000000000000000000002");
    check_op(wf_decimal_mul, "0.00000000000001", "0.000000000000025",
             "0.0000000000000000000000000002");
    check_op(wf_decimal_mul, "0.00000000000001", "0.0000000000000251",
             "0.0000000000000000000000000003");
    check_op(wf_decimal_add, "79228162514264337593543950334", "0.5",
             "79228162514264337593543950334");
    check_op(wf_decimal_add, "79228162514264337593543950333", "0.5",
             "79228162514264337593543950334");
    check_op(wf_decimal_add, "7922816251426433759354395033", "0.45",
             "7922816251426433759354395033.4");
    check_op(wf_decimal_mul, "0.0000000000000001", "0.0000000000000001",
             "0.0000000000000000000000000000");
    ck_assert_str_eq(text_of(dec("0.123456789012345678901234567850")),
                     "0.1234567890123456789012345678");
    ck_assert_str_eq(text_of(dec("0.123456789012345678901234567851")),
                     "0.1234567890123456789012345679");
    ck_assert_str_eq(text_of(dec("0.00000000000000000000000000015")),
                     "0.0000000000000000000000000002");
    ck_assert_str_eq(text_of(dec("0.00000000000000000000000000025")),
                     "0.0000000000000000000000000002");
}
END_TEST

START_TEST(test_compare_ignores_scale)
{
    ck_assert_int_eq(wf_decimal_cmp(dec("1.0"), dec("1.00")), 0);
    ck_assert_int_eq(wf_decimal_cmp(dec("-0.00"), dec("0")), 0);
    ck_assert_int_eq(wf_decimal_cmp(dec("2.01"), dec("2.1")), -1);
    ck_assert_int_eq(wf_decimal_cmp(dec("-1"), dec("-1.5")), 1);
    ck_assert_int_eq(wf_decimal_cmp(dec("-1"), dec("0.5")), -1);
    ck_assert_int_eq(wf_decimal_cmp(dec(MAX_TEXT), dec("7.9228162514264337593543950335")), 1);
    wf_value a = wf_dec(dec("12.50")), b = wf_dec(dec("12.5")), i = wf_int32(12);
    ck_assert(wf_value_equal(&a, &b));
    int c = 0;
    ck_assert_int_eq(wf_value_compare(&a, &i, &c, NULL), WF_OK);
    ck_assert_int_eq(c, 1);
}
END_TEST

START_TEST(test_text_round_trip)
{
    static const char *const texts[] = {"0", "0.00", "12.5000", "-0.005", "1.50", "3",
                                        MAX_TEXT, "-" MAX_TEXT, "7.9228162514264337593543950335",
                                        "0.0000000000000000000000000001", "12.123456"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        ck_assert_str_eq(text_of(dec(texts[i])), texts[i]);
    ck_assert_int_eq(dec("12.5000").scale, 4);
    ck_assert_str_eq(text_of(dec("  +007.10 ")), "7.10");
    ck_assert_str_eq(text_of(dec("-0.00")), "0.00"); /* no negative zero */
    ck_assert_str_eq(text_of(dec(".5")), "0.5");
    ck_assert_str_eq(text_of(dec("5.")), "5");
    /* JSON and plain text both keep the scale */
    wf_value v = wf_dec(dec("12.5"));
    wf_buf b;
    wf_buf_init(&b);
    ck_assert(wf_value_to_json(&v, &b));
    wf_buf_addc(&b, '\0');
    ck_assert_str_eq(b.data, "\"12.5\"");
    wf_buf_fini(&b);
}
END_TEST

START_TEST(test_conversions)
{
    wf_decimal d;
    ck_assert_str_eq(text_of(wf_decimal_from_int64(INT64_MIN)), "-9223372036854775808");
    ck_assert_int_eq(wf_decimal_from_double(0.1, &d), WF_OK);
    ck_assert_str_eq(text_of(d), "0.1");
    ck_assert_int_eq(wf_decimal_from_double(1.0 / 3, &d), WF_OK);
    ck_assert_str_eq(text_of(d), "0.333333333333333"); /* 15 significant digits */
    ck_assert_int_eq(wf_decimal_from_double(2.0 / 3, &d), WF_OK);
    ck_assert_str_eq(text_of(d), "0.666666666666667");
    ck_assert_int_eq(wf_decimal_from_double(123456789.125, &d), WF_OK);
    ck_assert_str_eq(text_of(d), "123456789.125");
    ck_assert_int_eq(wf_decimal_from_double(1e20, &d), WF_OK);
    ck_assert_str_eq(text_of(d), "100000000000000000000");
    ck_assert_int_eq(wf_decimal_from_double(-1e-20, &d), WF_OK);
    ck_assert_str_eq(text_of(d), "-0.00000000000000000001");
    ck_assert_int_eq(wf_decimal_from_double(1e-30, &d), WF_OK);
    ck_assert_str_eq(text_of(d), "0");
    ck_assert(wf_decimal_to_double(dec("8.567142857142857142857142857")) == 8.567142857142857);
    ck_assert(wf_decimal_to_double(dec("-0.1")) == -0.1);
    int64_t i = 0;
    ck_assert_int_eq(wf_decimal_to_int64(dec("-2.9"), INT32_MIN, INT32_MAX, &i), WF_OK);
    ck_assert_int_eq(i, -2); /* toward zero */
    ck_assert_int_eq(wf_decimal_to_int64(dec("-9223372036854775808.9"), INT64_MIN, INT64_MAX, &i),
                     WF_OK);
    ck_assert(i == INT64_MIN);
    ck_assert_str_eq(text_of(wf_decimal_round(dec("2.345"), 2, WF_DEC_ROUND_EVEN)), "2.34");
    ck_assert_str_eq(text_of(wf_decimal_round(dec("2.345"), 2, WF_DEC_ROUND_AWAY)), "2.35");
    ck_assert_str_eq(text_of(wf_decimal_round(dec("-2.1"), 0, WF_DEC_ROUND_FLOOR)), "-3");
    ck_assert_str_eq(text_of(wf_decimal_round(dec("-2.1"), 0, WF_DEC_ROUND_CEILING)), "-2");
    ck_assert_str_eq(text_of(wf_decimal_round(dec("1.20"), 5, WF_DEC_ROUND_EVEN)), "1.20");
    ck_assert_str_eq(text_of(wf_decimal_round(dec("-0.4"), 0, WF_DEC_ROUND_EVEN)), "0");
}
END_TEST

START_TEST(test_currency_boundary)
{
    int64_t u = 0;
    ck_assert_int_eq(wf_decimal_to_currency(dec("12.5"), &u), WF_OK);
    ck_assert_int_eq(u, 125000);
    ck_assert_int_eq(wf_decimal_to_currency(dec("1.23445"), &u), WF_OK);
    ck_assert_int_eq(u, 12344); /* half to even, as Decimal.ToOACurrency */
    ck_assert_int_eq(wf_decimal_to_currency(dec("1.23455"), &u), WF_OK);
    ck_assert_int_eq(u, 12346);
    ck_assert_int_eq(wf_decimal_to_currency(dec("-1.234451"), &u), WF_OK);
    ck_assert_int_eq(u, -12345);
    ck_assert_int_eq(wf_decimal_to_currency(dec("922337203685477.5807"), &u), WF_OK);
    ck_assert(u == INT64_MAX);
    ck_assert_int_eq(wf_decimal_to_currency(dec("-922337203685477.5808"), &u), WF_OK);
    ck_assert(u == INT64_MIN);
    ck_assert_str_eq(text_of(wf_decimal_from_currency(125000)), "12.5000"); /* scale 4 */
    ck_assert_str_eq(text_of(wf_decimal_from_currency(INT64_MIN)), "-922337203685477.5808");
}
END_TEST

START_TEST(test_codec_round_trip_and_old_form)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_value v = wf_dec(dec("-8.567142857142857142857142857"));
    ck_assert_int_eq(wf_codec_put_value(&b, &v, NULL), WF_OK);
    wf_reader r;
    wf_reader_init(&r, b.data, b.len, NULL);
    wf_value out;
    ck_assert_int_eq(wf_codec_get_value(&r, &out, NULL), WF_OK);
    ck_assert_str_eq(text_of(out.u.dec), "-8.567142857142857142857142857");
    wf_buf_fini(&b);
    /* a state saved before Decimal kept its scale: the kind byte and zig-zag CURRENCY units */
    wf_buf_init(&b);
    wf_buf_addc(&b, (char)WF_K_DECIMAL);
    wf_codec_put_int(&b, -125000);
    wf_reader_init(&r, b.data, b.len, NULL);
    ck_assert_int_eq(wf_codec_get_value(&r, &out, NULL), WF_OK);
    ck_assert_ptr_eq(out.type, &wf_type_decimal);
    ck_assert_str_eq(text_of(out.u.dec), "-12.5000");
    wf_reader_init(&r, b.data, b.len, NULL);
    wf_buf json;
    wf_buf_init(&json);
    ck_assert(wf_codec_value_json(&r, &json));
    wf_buf_addc(&json, '\0');
    ck_assert_str_eq(json.data, "\"-12.5000\"");
    wf_buf_fini(&json);
    wf_buf_fini(&b);
}
END_TEST

/* ---- bad_input ------------------------------------------------------------------------- */

START_TEST(test_bad_text)
{
    wf_decimal d = dec("7");
    static const char *const bad[] = {"", " ", "-", ".", "1.2.3", "1e5", "1,5", "12abc", "--1",
                                      "0x10", "1 2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(wf_decimal_parse(bad[i], &d) == WF_E_SYNTAX, "'%s' parsed", bad[i]);
    ck_assert_int_eq(wf_decimal_parse("79228162514264337593543950336", &d), WF_E_RANGE);
    ck_assert_int_eq(wf_decimal_parse("-79228162514264337593543950335.5", &d), WF_E_RANGE);
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_value_parse(NULL, &wf_type_decimal, "79228162514264337593543950336", &v,
                                    &err),
                     WF_E_RANGE);
    ck_assert_ptr_nonnull(strstr(err.message, "out of range for Decimal"));
    ck_assert(wf_is_null(&v));
}
END_TEST

START_TEST(test_divide_by_zero_and_bad_conversions)
{
    wf_decimal r = dec("7");
    ck_assert_int_eq(wf_decimal_div(dec("1"), dec("0.00"), &r), WF_E_RANGE);
    ck_assert_int_eq(wf_decimal_rem(dec("1"), dec("0"), &r), WF_E_RANGE);
    ck_assert_str_eq(text_of(r), "7"); /* nothing written */
    ck_assert(wf_decimal_is_zero(dec("-0.000")));
    ck_assert_int_eq(wf_decimal_from_double(NAN, &r), WF_E_RANGE);
    ck_assert_int_eq(wf_decimal_from_double(-INFINITY, &r), WF_E_RANGE);
    ck_assert_int_eq(wf_decimal_from_double(8e28, &r), WF_E_RANGE);
    int64_t i = 5;
    ck_assert_int_eq(wf_decimal_to_int64(dec("2147483648"), INT32_MIN, INT32_MAX, &i), WF_E_RANGE);
    ck_assert_int_eq(wf_decimal_to_int64(dec("9223372036854775808"), INT64_MIN, INT64_MAX, &i),
                     WF_E_RANGE);
    ck_assert_int_eq(i, 5);
    ck_assert_int_eq(wf_decimal_to_currency(dec("922337203685477.5808"), &i), WF_E_RANGE);
    ck_assert_int_eq(wf_decimal_to_currency(dec("922337203685477.58075"), &i), WF_E_RANGE);
    ck_assert_int_eq(i, 5);
    /* a corrupt saved Decimal: scale beyond 28 */
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addc(&b, 0x40);
    wf_codec_put_uint(&b, 1);
    wf_codec_put_uint(&b, 0);
    wf_buf_addc(&b, 29);
    wf_reader rd;
    wf_reader_init(&rd, b.data, b.len, NULL);
    wf_value out;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_codec_get_value(&rd, &out, &err), WF_E_CORRUPT);
    ck_assert(wf_is_null(&out));
    wf_buf_fini(&b);
}
END_TEST

/* ---- limits ---------------------------------------------------------------------------- */

START_TEST(test_overflow_at_the_limits)
{
    check_overflow(wf_decimal_add, MAX_TEXT, "1");
    check_overflow(wf_decimal_add, MAX_TEXT, "0.5"); /* rounds up to 2^96 */
    check_overflow(wf_decimal_sub, "-" MAX_TEXT, "1");
    check_overflow(wf_decimal_mul, MAX_TEXT, "1.1");
    check_overflow(wf_decimal_mul, "10000000000000000", "10000000000000");
    check_overflow(wf_decimal_div, MAX_TEXT, "0.1");
    check_overflow(wf_decimal_div, MAX_TEXT, "0.5");
}
END_TEST

START_TEST(test_extremes_that_fit)
{
    check_op(wf_decimal_add, MAX_TEXT, "0.4", MAX_TEXT);
    check_op(wf_decimal_mul, MAX_TEXT, "1.0", MAX_TEXT);
    check_op(wf_decimal_mul, MAX_TEXT, "-1", "-" MAX_TEXT);
    check_op(wf_decimal_div, "1", "0.0000000000000000000000000001",
             "10000000000000000000000000000");
    check_op(wf_decimal_sub, MAX_TEXT, MAX_TEXT, "0");
    check_op(wf_decimal_add, "0.0000000000000000000000000001", "1",
             "1.0000000000000000000000000001");
    check_op(wf_decimal_add, "0.0000000000000000000000000001", "10",
             "10.000000000000000000000000000"); /* 29 digits do not fit: rounded */
    ck_assert_str_eq(text_of(dec("0.00000000000000000000000000000000000000001")),
                     "0.0000000000000000000000000000");
    /* a long run of digits is read without overflowing the work area */
    char many[400];
    memset(many, '1', sizeof many - 1);
    many[0] = '0', many[1] = '.';
    many[sizeof many - 1] = '\0';
    ck_assert_str_eq(text_of(dec(many)), "0.1111111111111111111111111111");
    ck_assert(wf_decimal_neg(dec("0")).neg == false);
}
END_TEST

/* ---- nomem ----------------------------------------------------------------------------- */

START_TEST(test_arithmetic_never_allocates)
{
    wf_decimal r;
    wf_alloc_fail_after(1);
    ck_assert_int_eq(wf_decimal_div(dec("59.97"), dec("7"), &r), WF_OK);
    ck_assert_int_eq(wf_decimal_mul(r, dec("1.5"), &r), WF_OK);
    ck_assert_int_eq(wf_decimal_add(r, dec("0.0001"), &r), WF_OK);
    wf_alloc_fail_after(0);
    ck_assert_str_eq(text_of(r), "12.850814285714285714285714286");
}
END_TEST

Suite *common_decimal_suite(void)
{
    Suite *s = suite_create("common_decimal");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_scale_is_kept);
    tcase_add_test(core, test_division);
    tcase_add_test(core, test_bankers_rounding);
    tcase_add_test(core, test_compare_ignores_scale);
    tcase_add_test(core, test_text_round_trip);
    tcase_add_test(core, test_conversions);
    tcase_add_test(core, test_currency_boundary);
    tcase_add_test(core, test_codec_round_trip_and_old_form);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_bad_text);
    tcase_add_test(bad, test_divide_by_zero_and_bad_conversions);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_overflow_at_the_limits);
    tcase_add_test(limits, test_extremes_that_fit);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_arithmetic_never_allocates);
    suite_add_tcase(s, nomem);
    return s;
}

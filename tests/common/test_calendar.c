/* test_calendar.c — common/wf_calendar (days from civil dates and back across the whole .NET
 * range and before the epoch, leap years, month lengths, date validation) and the value
 * layer's one default(T) and CLR primitive table (common/wf_value.h). */
#include <check.h>
#include <string.h>

#include "../../common/wf_calendar.h"
#include "../../common/wf_value.h"
#include "../wf_test_util.h"

START_TEST(test_days_round_trip_over_the_dotnet_range)
{
    ck_assert_int_eq(wf_cal_days_from_civil(1970, 1, 1), 0);
    ck_assert_int_eq(wf_cal_days_from_civil(1969, 12, 31), -1);
    ck_assert_int_eq(wf_cal_days_from_civil(2000, 3, 1), 11017);
    ck_assert_int_eq(wf_cal_days_from_civil(1, 1, 1) * WF_US_PER_DAY, WF_DATETIME_MIN_US);
    ck_assert_int_eq(wf_cal_days_from_civil(9999, 12, 31) * WF_US_PER_DAY + WF_US_PER_DAY - 1,
                     WF_DATETIME_MAX_US);
    int64_t first = wf_cal_days_from_civil(1, 1, 1), last = wf_cal_days_from_civil(9999, 12, 31);
    int64_t prev_y = 0, bad_day = 0;
    int prev_m = 12, prev_d = 31;
    bool ok = true;
    for (int64_t day = first; day <= last && ok; day++) { /* plain checks: 3.6 million days */
        int64_t y;
        int m, d;
        wf_cal_civil_from_days(day, &y, &m, &d);
        /* consecutive days: the next day of the month, or the 1st after a full month */
        bool next = (y == prev_y && m == prev_m && d == prev_d + 1) ||
                    (d == 1 && prev_d == wf_cal_month_days(prev_y ? prev_y : 1, prev_m) &&
                     ((y == prev_y && m == prev_m + 1) || (y == prev_y + 1 && m == 1)));
        ok = next && wf_cal_date_valid(y, m, d) && wf_cal_days_from_civil(y, m, d) == day;
        bad_day = day;
        prev_y = y, prev_m = m, prev_d = d;
    }
    ck_assert_msg(ok, "day %lld: %lld-%d-%d", (long long)bad_day, (long long)prev_y, prev_m,
                  prev_d);
    ck_assert_int_eq(prev_y, 9999);
}
END_TEST

START_TEST(test_split_before_the_epoch)
{
    int64_t days, us;
    wf_cal_split(-1, &days, &us);
    ck_assert_int_eq(days, -1);
    ck_assert_int_eq(us, WF_US_PER_DAY - 1);
    wf_cal_split(WF_US_PER_DAY, &days, &us);
    ck_assert_int_eq(days, 1);
    ck_assert_int_eq(us, 0);
}
END_TEST

START_TEST(test_leap_years_and_month_lengths)
{
    ck_assert(wf_cal_is_leap(2000) && wf_cal_is_leap(2024) && wf_cal_is_leap(4));
    ck_assert(!wf_cal_is_leap(1900) && !wf_cal_is_leap(2023) && !wf_cal_is_leap(1));
    ck_assert_int_eq(wf_cal_month_days(2024, 2), 29);
    ck_assert_int_eq(wf_cal_month_days(2100, 2), 28);
    ck_assert_int_eq(wf_cal_month_days(2023, 4), 30);
    ck_assert_int_eq(wf_cal_month_days(2023, 12), 31);
}
END_TEST

START_TEST(test_invalid_dates)
{
    ck_assert(!wf_cal_date_valid(2023, 2, 29));
    ck_assert(!wf_cal_date_valid(2024, 13, 1));
    ck_assert(!wf_cal_date_valid(2024, 0, 1));
    ck_assert(!wf_cal_date_valid(2024, 4, 31));
    ck_assert(!wf_cal_date_valid(2024, 1, 0));
    ck_assert(!wf_cal_date_valid(0, 1, 1));
    ck_assert(!wf_cal_date_valid(10000, 1, 1));
    ck_assert_int_eq(wf_cal_month_days(2024, 13), 0);
}
END_TEST

/* Defect #26: default(DateTime) is 0001-01-01T00:00:00 (.NET), in both runtimes. */
START_TEST(test_type_default_is_dotnet_default)
{
    wf_value v = wf_type_default(&wf_type_datetime);
    ck_assert_ptr_eq(v.type, &wf_type_datetime);
    ck_assert_int_eq(v.u.i64, WF_DATETIME_MIN_US);
    char text[64];
    wf_datetime_format(v.u.i64, text, sizeof text);
    ck_assert_str_eq(text, "0001-01-01T00:00:00Z");
    ck_assert(wf_type_default(&wf_type_bool).type == &wf_type_bool &&
              !wf_type_default(&wf_type_bool).u.b);
    ck_assert_int_eq(wf_type_default(&wf_type_int32).u.i32, 0);
    ck_assert_int_eq(wf_type_default(&wf_type_int64).u.i64, 0);
    ck_assert(wf_type_default(&wf_type_double).u.d == 0.0);
    ck_assert_ptr_eq(wf_type_default(&wf_type_decimal).type, &wf_type_decimal);
    ck_assert(wf_decimal_is_zero(wf_type_default(&wf_type_decimal).u.dec));
    ck_assert_int_eq(wf_type_default(&wf_type_decimal).u.dec.scale, 0);
    ck_assert_int_eq(wf_type_default(&wf_type_timespan).u.i64, 0);
    const wf_type *refs[] = {&wf_type_string, &wf_type_record, &wf_type_object, &wf_type_token,
                             &wf_type_list_object, &wf_exc_exception, &wf_type_null, NULL};
    for (size_t i = 0; i < sizeof refs / sizeof *refs; i++) {
        wf_value d = wf_type_default(refs[i]);
        ck_assert(wf_is_null(&d));
    }
}
END_TEST

START_TEST(test_clr_primitives_map_to_scalar_kinds)
{
    ck_assert_ptr_eq(wf_type_primitive("Int32"), &wf_type_int32);
    ck_assert_ptr_eq(wf_type_primitive("Int16"), &wf_type_int32);
    ck_assert_ptr_eq(wf_type_primitive("Byte"), &wf_type_int32);
    ck_assert_ptr_eq(wf_type_primitive("UInt32"), &wf_type_int64);
    ck_assert_ptr_eq(wf_type_primitive("Single"), &wf_type_double);
    ck_assert_ptr_eq(wf_type_primitive("Char"), &wf_type_string);
    ck_assert_ptr_eq(wf_type_primitive("DateTime"), &wf_type_datetime);
    ck_assert_ptr_eq(wf_type_primitive("TimeSpan"), &wf_type_timespan);
    ck_assert_ptr_eq(wf_type_primitive("Decimal"), &wf_type_decimal);
    ck_assert_ptr_eq(wf_type_primitive("Boolean"), &wf_type_bool);
    ck_assert_ptr_null(wf_type_primitive("x:Int32")); /* exact names only */
    ck_assert_ptr_null(wf_type_primitive("Object"));
    ck_assert_ptr_null(wf_type_primitive("int"));
    ck_assert_ptr_null(wf_type_primitive(NULL));
}
END_TEST

Suite *common_calendar_suite(void)
{
    Suite *s = suite_create("common_calendar");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_days_round_trip_over_the_dotnet_range);
    tcase_add_test(core, test_split_before_the_epoch);
    tcase_add_test(core, test_leap_years_and_month_lengths);
    tcase_add_test(core, test_type_default_is_dotnet_default);
    tcase_add_test(core, test_clr_primitives_map_to_scalar_kinds);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_invalid_dates);
    suite_add_tcase(s, bad);
    return s;
}

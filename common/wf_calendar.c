/* wf_calendar.c — the Gregorian calendar arithmetic of wf_calendar.h: day counts from civil
 * dates and back (Howard Hinnant's "days_from_civil" algorithms, valid for any year), leap
 * years and month lengths. */
#include "wf_calendar.h"

bool wf_cal_is_leap(int64_t year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int wf_cal_month_days(int64_t year, int64_t month)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12)
        return 0;
    return month == 2 && wf_cal_is_leap(year) ? 29 : days[month - 1];
}

bool wf_cal_date_valid(int64_t year, int64_t month, int64_t day)
{
    return year >= 1 && year <= 9999 && day >= 1 && day <= wf_cal_month_days(year, month);
}

int64_t wf_cal_days_from_civil(int64_t year, int64_t month, int64_t day)
{
    int64_t y = year - (month <= 2);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void wf_cal_civil_from_days(int64_t days, int64_t *year, int *month, int *day)
{
    int64_t z = days + 719468; /* days since 0000-03-01 */
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *day = (int)(doy - (153 * mp + 2) / 5 + 1);
    *month = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = yoe + era * 400 + (*month <= 2);
}

void wf_cal_split(int64_t us, int64_t *days, int64_t *us_of_day)
{
    int64_t d = us / WF_US_PER_DAY, rem = us % WF_US_PER_DAY;
    if (rem < 0) {
        rem += WF_US_PER_DAY;
        d--;
    }
    *days = d;
    *us_of_day = rem;
}

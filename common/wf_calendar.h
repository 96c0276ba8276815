/* wf_calendar.h — proleptic Gregorian calendar arithmetic for DateTime values (microseconds
 * since 1970-01-01T00:00:00 UTC, docs/formats.md "Values"): days from a civil date and back,
 * leap years, month lengths, date validation and the .NET range (years 1 to 9999). Pure
 * functions, no allocation; every runtime and the text forms use this one set. */
#ifndef WF_CALENDAR_H
#define WF_CALENDAR_H

#include <stdbool.h>
#include <stdint.h>

#define WF_US_PER_SEC 1000000LL
#define WF_US_PER_DAY (86400LL * WF_US_PER_SEC)
/* DateTime.MinValue (0001-01-01T00:00:00, also default(DateTime)) and DateTime.MaxValue
 * (9999-12-31T23:59:59.999999) in microseconds since the Unix epoch. */
#define WF_DATETIME_MIN_US (-62135596800000000LL)
#define WF_DATETIME_MAX_US 253402300799999999LL

bool wf_cal_is_leap(int64_t year);
/* Days in `month` (1-12) of `year`; 0 for a month outside 1-12. */
int wf_cal_month_days(int64_t year, int64_t month);
/* Whether year-month-day is a date .NET's DateTime can hold (years 1 to 9999). */
bool wf_cal_date_valid(int64_t year, int64_t month, int64_t day);
/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil algorithm);
 * any year, the date is not checked. */
int64_t wf_cal_days_from_civil(int64_t year, int64_t month, int64_t day);
/* The civil date of a day count since 1970-01-01 (the inverse of the above). */
void wf_cal_civil_from_days(int64_t days, int64_t *year, int *month, int *day);
/* Split a DateTime into its day count since 1970-01-01 and the microseconds into that day
 * (0 <= *us_of_day < WF_US_PER_DAY, also before the epoch). */
void wf_cal_split(int64_t us, int64_t *days, int64_t *us_of_day);

#endif

/* wf_value_text.c — values as text and text as values: DateTime and TimeSpan helpers,
 * per-type parsing, and the two renderings (JSON per the output contract in docs/architecture.md, plain
 * text as WriteLine shows it). Doubles print in their shortest round-trip form, as .NET's "R". */
#include "wf_value.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* strncasecmp */

#include "wf_calendar.h"
#include "wf_jsonw.h"
#include "wf_value_int.h"

typedef __int128 i128;

#define US_PER_SEC WF_US_PER_SEC
#define US_PER_DAY WF_US_PER_DAY

/* ---- small scanning helpers ----------------------------------------------------------- */

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return s;
}

/* Reads exactly `n` digits into *val. */
static bool digits_n(const char **s, int n, int *val)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*s)[i]))
            return false;
        v = v * 10 + ((*s)[i] - '0');
    }
    *s += n;
    *val = v;
    return true;
}

/* Fraction digits after '.': microseconds (digits past the 6th are truncated). */
static bool fraction_us(const char **s, int64_t *us)
{
    const char *p = *s;
    int64_t v = 0;
    int n = 0;
    while (isdigit((unsigned char)*p)) {
        if (n < 6)
            v = v * 10 + (*p - '0');
        n++;
        p++;
    }
    if (n == 0)
        return false;
    for (int i = n; i < 6; i++)
        v *= 10;
    *s = p;
    *us = v;
    return true;
}

/* ---- DateTime ------------------------------------------------------------------------- */

/* "hh:mm[:ss[.f+]]" into microseconds of the day. */
static bool parse_clock(const char **s, int64_t *us)
{
    int h, mi, sec = 0;
    int64_t frac = 0;
    if (!digits_n(s, 2, &h) || **s != ':' || (++*s, !digits_n(s, 2, &mi)))
        return false;
    if (**s == ':') {
        ++*s;
        if (!digits_n(s, 2, &sec))
            return false;
        if (**s == '.' && (++*s, !fraction_us(s, &frac)))
            return false;
    }
    if (h > 23 || mi > 59 || sec > 59)
        return false;
    *us = ((h * 60LL + mi) * 60 + sec) * US_PER_SEC + frac;
    return true;
}

/* "Z", "+hh:mm", "+hhmm", "+hh" or nothing (taken as UTC): offset in microseconds. */
static bool parse_zone(const char **s, int64_t *offset)
{
    *offset = 0;
    if (**s == 'Z' || **s == 'z') {
        ++*s;
        return true;
    }
    if (**s != '+' && **s != '-')
        return true;
    int sign = **s == '-' ? -1 : 1, h, mi = 0;
    ++*s;
    if (!digits_n(s, 2, &h))
        return false;
    if (**s == ':')
        ++*s;
    if (isdigit((unsigned char)**s) && !digits_n(s, 2, &mi))
        return false;
    if (h > 14 || mi > 59)
        return false;
    *offset = sign * (h * 60LL + mi) * 60 * US_PER_SEC;
    return true;
}

wf_status wf_datetime_parse(const char *text, int64_t *us)
{
    const char *s = skip_ws(text);
    int y, m, d;
    if (!digits_n(&s, 4, &y) || *s++ != '-' || !digits_n(&s, 2, &m) || *s++ != '-' ||
        !digits_n(&s, 2, &d))
        return WF_E_SYNTAX;
    if (!wf_cal_date_valid(y, m, d))
        return WF_E_RANGE;
    int64_t clock = 0, offset = 0;
    if (*s == 'T' || *s == 't' || (*s == ' ' && isdigit((unsigned char)s[1]))) {
        s++;
        if (!parse_clock(&s, &clock))
            return WF_E_SYNTAX;
        if (!parse_zone(&s, &offset))
            return WF_E_SYNTAX;
    }
    if (*skip_ws(s) != '\0')
        return WF_E_SYNTAX;
    *us = wf_cal_days_from_civil(y, m, d) * US_PER_DAY + clock - offset;
    return WF_OK;
}

void wf_datetime_format(int64_t us, char *buf, size_t size)
{
    int64_t days, rem, y;
    int m, d;
    wf_cal_split(us, &days, &rem);
    wf_cal_civil_from_days(days, &y, &m, &d);
    int64_t secs = rem / US_PER_SEC, frac = rem % US_PER_SEC;
    int n = snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d", (int)y, m, d, (int)(secs / 3600),
                     (int)(secs / 60 % 60), (int)(secs % 60));
    if (n < 0 || (size_t)n >= size)
        return;
    if (frac)
        snprintf(buf + n, size - (size_t)n, ".%06" PRId64 "Z", frac);
    else
        snprintf(buf + n, size - (size_t)n, "Z");
}

/* ---- TimeSpan ------------------------------------------------------------------------- */

/* Reads an unsigned decimal number of at most 9 digits. */
static bool number(const char **s, int64_t *val)
{
    int64_t v = 0;
    int n = 0;
    for (; isdigit((unsigned char)**s) && n < 10; ++*s, n++)
        v = v * 10 + (**s - '0');
    *val = v;
    return n > 0 && n < 10;
}

wf_status wf_timespan_parse(const char *text, int64_t *us)
{
    const char *s = skip_ws(text);
    bool neg = *s == '-';
    if (neg)
        s++;
    int64_t days = 0, first, h, mi, sec = 0, frac = 0;
    if (!number(&s, &first))
        return WF_E_SYNTAX;
    if (*s == '.') {
        days = first;
        s++;
        if (!number(&s, &h))
            return WF_E_SYNTAX;
    } else if (*skip_ws(s) == '\0') {
        if (first > 10675199)
            return WF_E_RANGE;
        *us = (neg ? -1 : 1) * first * US_PER_DAY;
        return WF_OK;
    } else {
        h = first;
    }
    if (*s++ != ':' || !number(&s, &mi))
        return WF_E_SYNTAX;
    if (*s == ':' && (s++, !number(&s, &sec)))
        return WF_E_SYNTAX;
    if (*s == '.' && (s++, !fraction_us(&s, &frac)))
        return WF_E_SYNTAX;
    if (*skip_ws(s) != '\0')
        return WF_E_SYNTAX;
    if (h > 23 || mi > 59 || sec > 59 || days > 10675199)
        return WF_E_RANGE;
    int64_t v = days * US_PER_DAY + ((h * 60 + mi) * 60 + sec) * US_PER_SEC + frac;
    *us = neg ? -v : v;
    return WF_OK;
}

void wf_timespan_format(int64_t us, char *buf, size_t size)
{
    uint64_t mag = us < 0 ? 0 - (uint64_t)us : (uint64_t)us;
    uint64_t days = mag / (uint64_t)US_PER_DAY, rem = mag % (uint64_t)US_PER_DAY;
    uint64_t secs = rem / US_PER_SEC, frac = rem % US_PER_SEC;
    char day_part[32] = "", frac_part[16] = "";
    if (days)
        snprintf(day_part, sizeof day_part, "%" PRIu64 ".", days);
    if (frac)
        snprintf(frac_part, sizeof frac_part, ".%06" PRIu64 "0", frac);
    snprintf(buf, size, "%s%s%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 "%s", us < 0 ? "-" : "",
             day_part, secs / 3600, secs / 60 % 60, secs % 60, frac_part);
}

/* ---- Double --------------------------------------------------------------------------- */

/* The shortest decimal digits that read back as d (no trailing zeros), its sign and the
 * decimal exponent of the first digit. */
static void shortest_digits(double d, char *digits, size_t size, bool *neg, int *exp)
{
    char sci[40];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec, d);
        if (strtod(sci, NULL) == d)
            break;
    }
    /* sci is "-D.DDDDe+XX" */
    *neg = sci[0] == '-';
    size_t nd = 0;
    const char *p = sci + *neg;
    for (; *p && *p != 'e'; p++)
        if (isdigit((unsigned char)*p) && nd + 1 < size)
            digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    *exp = d == 0 ? 0 : atoi(p + 1);
}

/* Shortest round-trip digits, laid out as .NET Core does: fixed notation for exponents in
 * [-4, 15), otherwise "1.5E+20" / "1E-05". */
void wf_double_format(double d, char *buf, size_t size)
{
    if (isnan(d) || isinf(d)) {
        snprintf(buf, size, "%s", isnan(d) ? "NaN" : d < 0 ? "-Infinity" : "Infinity");
        return;
    }
    char digits[24], out[64];
    bool neg;
    int exp;
    shortest_digits(d, digits, sizeof digits, &neg, &exp);
    size_t nd = strlen(digits), n = 0;
    if (exp >= 15 || exp < -4) {
        snprintf(buf, size, "%s%c%s%sE%c%02d", neg ? "-" : "", digits[0], nd > 1 ? "." : "",
                 digits + 1, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        return;
    }
    if (neg)
        out[n++] = '-';
    if (exp < 0) {
        out[n++] = '0';
        out[n++] = '.';
        for (int i = -1; i > exp; i--)
            out[n++] = '0';
        for (size_t i = 0; i < nd; i++)
            out[n++] = digits[i];
    } else {
        for (int i = 0; i <= exp; i++)
            out[n++] = (size_t)i < nd ? digits[i] : '0';
        if (nd > (size_t)exp + 1)
            out[n++] = '.';
        for (size_t i = (size_t)exp + 1; i < nd; i++)
            out[n++] = digits[i];
    }
    out[n] = '\0';
    snprintf(buf, size, "%s", out);
}

/* ---- parsing per type ----------------------------------------------------------------- */

static wf_status parse_error(wf_status st, const wf_type *t, const char *text, wf_error *err)
{
    if (st == WF_E_RANGE)
        return wf_error_set(err, WF_E_RANGE, NULL, "'%.200s' is out of range for %s", text,
                            t->name);
    return wf_error_set(err, st, NULL, "'%.200s' is not a valid %s", text, t->name);
}

static wf_status parse_bool(const char *text, bool *b)
{
    const char *s = skip_ws(text);
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 4 && strncasecmp(s, "true", 4) == 0)
        *b = true;
    else if (n == 5 && strncasecmp(s, "false", 5) == 0)
        *b = false;
    else
        return WF_E_SYNTAX;
    return WF_OK;
}

static wf_status parse_integer(const char *text, int64_t lo, int64_t hi, int64_t *val)
{
    const char *s = skip_ws(text);
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    i128 v = 0;
    int n = 0;
    for (; isdigit((unsigned char)*s); s++, n++)
        if (v <= (i128)INT64_MAX + 1)
            v = v * 10 + (*s - '0');
    if (n == 0 || *skip_ws(s) != '\0')
        return WF_E_SYNTAX;
    if (neg)
        v = -v;
    if (v < lo || v > hi)
        return WF_E_RANGE;
    *val = (int64_t)v;
    return WF_OK;
}

static wf_status parse_double(const char *text, double *d)
{
    const char *s = skip_ws(text);
    if (*s == '\0' || strpbrk(s, "xX"))
        return WF_E_SYNTAX;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *skip_ws(end) != '\0')
        return WF_E_SYNTAX;
    if (errno == ERANGE && isinf(v))
        return WF_E_RANGE;
    *d = v;
    return WF_OK;
}

static wf_status parse_scalar(const wf_type *t, const char *text, wf_value *out)
{
    int64_t i = 0;
    wf_decimal dec;
    double d = 0;
    bool b = false;
    wf_status st;
    switch (t->kind) {
    case WF_K_BOOL:
        st = parse_bool(text, &b), *out = wf_bool(b);
        break;
    case WF_K_INT32:
        st = parse_integer(text, INT32_MIN, INT32_MAX, &i), *out = wf_int32((int32_t)i);
        break;
    case WF_K_INT64:
        st = parse_integer(text, INT64_MIN, INT64_MAX, &i), *out = wf_int64(i);
        break;
    case WF_K_DOUBLE:
        st = parse_double(text, &d), *out = wf_double(d);
        break;
    case WF_K_DECIMAL:
        st = wf_decimal_parse(text, &dec), *out = wf_dec(dec);
        break;
    case WF_K_DATETIME:
        st = wf_datetime_parse(text, &i), *out = wf_datetime_us(i);
        break;
    case WF_K_TIMESPAN:
        st = wf_timespan_parse(text, &i), *out = wf_timespan_us(i);
        break;
    default:
        st = WF_E_TYPE;
        break;
    }
    if (st != WF_OK)
        *out = wf_null();
    return st;
}

/* List, Record and Object from JSON; Object falls back to the text as a String. */
static wf_status parse_json_as(wf_types *types, const wf_type *t, const char *text, wf_value *out,
                               wf_error *err)
{
    wf_error jerr = WF_ERROR_INIT;
    wf_value v;
    wf_status st = wf__json_parse_typed(types, t, text, strlen(text), &v, &jerr);
    if (st != WF_OK) {
        if (t->kind == WF_K_OBJECT && st != WF_E_NOMEM)
            return wf_value_cstring(text, out) == WF_OK
                       ? WF_OK
                       : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        if (err && err->code == WF_OK) {
            *err = jerr;
            wf_error_prefix(err, "%s value: ", t->name);
        }
        return st;
    }
    if (t->kind == WF_K_RECORD && v.type->kind != WF_K_RECORD) {
        wf_value_release(&v);
        return wf_error_set(err, WF_E_TYPE, NULL, "'%.200s' is not a JSON object", text);
    }
    st = wf_value_convert(&v, t, out, err);
    wf_value_release(&v);
    return st;
}

wf_status wf_value_parse(wf_types *types, const wf_type *t, const char *text, wf_value *out,
                         wf_error *err)
{
    *out = wf_null();
    switch (t->kind) {
    case WF_K_STRING:
        if (wf_value_cstring(text, out) != WF_OK)
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        return WF_OK;
    case WF_K_LIST:
    case WF_K_RECORD:
    case WF_K_OBJECT:
        return parse_json_as(types, t, text, out, err);
    default:
        break;
    }
    wf_status st = parse_scalar(t, text, out);
    if (st == WF_E_TYPE)
        return wf_error_set(err, WF_E_TYPE, NULL, "values of type %s cannot be parsed", t->name);
    if (st != WF_OK)
        return parse_error(st, t, text, err);
    return WF_OK;
}

/* ---- rendering ------------------------------------------------------------------------ */

/* Text of the kinds formatted into a small buffer (Double, Decimal, DateTime, TimeSpan). */
static void render_formatted(const wf_value *v, wf_buf *out)
{
    char tmp[64];
    if (v->type->kind == WF_K_DOUBLE)
        wf_double_format(v->u.d, tmp, sizeof tmp);
    else if (v->type->kind == WF_K_DECIMAL)
        wf_decimal_format(v->u.dec, tmp, sizeof tmp);
    else if (v->type->kind == WF_K_DATETIME)
        wf_datetime_format(v->u.i64, tmp, sizeof tmp);
    else
        wf_timespan_format(v->u.i64, tmp, sizeof tmp);
    wf_buf_adds(out, tmp);
}

/* JSON is written by the one writer (wf_jsonw.h) from a jansson tree, so it is valid JSON
 * by construction; spaced as every --json line is ({"a": 1, "b": [1, 2]}). */
bool wf_value_to_json(const wf_value *v, wf_buf *out)
{
    json_t *tree = wf_jsonw_value(v, false);
    bool ok = tree && wf_jsonw_dump(tree, WF_JSONW_SPACED, out);
    json_decref(tree);
    if (!ok)
        out->oom = true;
    return ok && !out->oom;
}

bool wf_value_to_text(const wf_value *v, wf_buf *out)
{
    switch (v->type->kind) {
    case WF_K_NULL:
    case WF_K_OBJECT:
        break;
    case WF_K_BOOL:
        wf_buf_adds(out, v->u.b ? "True" : "False");
        break;
    case WF_K_INT32:
        wf_buf_addf(out, "%" PRId32, v->u.i32);
        break;
    case WF_K_INT64:
    case WF_K_TOKEN:
        wf_buf_addf(out, "%" PRId64, v->u.i64);
        break;
    case WF_K_STRING:
        wf_buf_add(out, wf_value_str(v), wf_value_str_len(v));
        break;
    case WF_K_LIST:
    case WF_K_RECORD:
        return wf_value_to_json(v, out);
    case WF_K_EXCEPTION:
        wf_buf_addf(out, "%s: %s", v->type->name, wf_value_exc_message(v));
        break;
    default:
        render_formatted(v, out);
        break;
    }
    return !out->oom;
}

const char *wf_substring_fault(int64_t start, int64_t length, size_t count)
{
    if (start < 0)
        return "StartIndex cannot be less than zero. (Parameter 'startIndex')";
    if ((uint64_t)start > count)
        return "startIndex cannot be larger than length of string. (Parameter 'startIndex')";
    if (length < 0)
        return "Length cannot be less than zero. (Parameter 'length')";
    if ((uint64_t)length > count - (uint64_t)start)
        return "Index and length must refer to a location within the string. "
               "(Parameter 'length')";
    return NULL;
}

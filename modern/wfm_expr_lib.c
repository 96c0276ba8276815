/* wfm_expr_lib.c — the library functions expressions may call (the members and static
 * functions bound in wfm_expr_bind.c): string methods, String.Format, Math, TimeSpan
 * factories, len. Arguments arrive evaluated and converted to the parameter types; string
 * positions count characters (UTF-8 code points), not bytes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "wfm_expr_int.h"

/* ---- UTF-8 positions ----------------------------------------------------------------- */
size_t wfm_expr__u8_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* Byte offset of character `index` (index <= count). */
static size_t u8_offset(const char *s, size_t len, size_t index)
{
    size_t i = 0;
    for (size_t seen = 0; i < len; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (seen == index)
                return i;
            seen++;
        }
    }
    return len;
}

static const char *find_bytes(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
    if (nlen == 0)
        return hay;
    for (size_t i = 0; i + nlen <= hlen; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, nlen) == 0)
            return hay + i;
    return NULL;
}

static wf_status arg_null(wf_value *exc, const char *param)
{
    return wfm_expr__raise(exc, &wf_exc_argument_null, "Value cannot be null. (Parameter '%s')",
                           param);
}

static wf_status arg_range(wf_value *exc, const char *param)
{
    return wfm_expr__raise(exc, &wf_exc_argument_range,
                           "Specified argument was out of the range of valid values. "
                           "(Parameter '%s')",
                           param);
}

static wf_status take_buf(wf_buf *buf, wf_value *out)
{
    size_t len;
    char *s = wf_buf_detach(buf, &len);
    if (!s)
        return WF_E_NOMEM;
    return wf_value_string_take(s, len, out);
}

/* ---- string methods ------------------------------------------------------------------ */
static wf_status str_case(const wf_value *s, bool upper, wf_value *out)
{
    wf_buf buf;
    wf_buf_init(&buf);
    const char *p = wf_value_str(s);
    size_t len = wf_value_str_len(s);
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        if (upper && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        else if (!upper && c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        wf_buf_addc(&buf, c);
    }
    return take_buf(&buf, out);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Trim (sides 3), TrimStart (1), TrimEnd (2). */
static wf_status str_trim(const wf_value *s, int64_t sides, wf_value *out)
{
    const char *p = wf_value_str(s);
    size_t len = wf_value_str_len(s);
    while ((sides & 1) && len && is_space(*p))
        p++, len--;
    while ((sides & 2) && len && is_space(p[len - 1]))
        len--;
    return wf_value_string(p, len, out);
}

/* PadLeft (right 0) / PadRight (right 1) with spaces to `width` characters. */
static wf_status str_pad(const wf_value *s, const wf_value *width, int64_t right, wf_value *out,
                         wf_value *exc)
{
    if (width->u.i32 < 0)
        return wfm_expr__raise(exc, &wf_exc_argument_range, WF_MSG_PAD_NEGATIVE);
    size_t have = wfm_expr__u8_count(wf_value_str(s), wf_value_str_len(s));
    size_t pad = (size_t)width->u.i32 > have ? (size_t)width->u.i32 - have : 0;
    wf_buf buf;
    wf_buf_init(&buf);
    for (size_t i = 0; i < pad && !right; i++)
        wf_buf_addc(&buf, ' ');
    wf_buf_add(&buf, wf_value_str(s), wf_value_str_len(s));
    for (size_t i = 0; i < pad && right; i++)
        wf_buf_addc(&buf, ' ');
    return take_buf(&buf, out);
}

static wf_status str_test(int fn, const wf_value *s, const wf_value *x, wf_value *out,
                          wf_value *exc)
{
    if (wf_is_null(x))
        return arg_null(exc, "value");
    const char *h = wf_value_str(s), *n = wf_value_str(x);
    size_t hl = wf_value_str_len(s), nl = wf_value_str_len(x);
    bool r;
    if (fn == XF_STARTSWITH)
        r = nl <= hl && memcmp(h, n, nl) == 0;
    else if (fn == XF_ENDSWITH)
        r = nl <= hl && memcmp(h + hl - nl, n, nl) == 0;
    else
        r = find_bytes(h, hl, n, nl) != NULL;
    *out = wf_bool(r);
    return WF_OK;
}

static wf_status str_substring(const wf_value *s, const wf_value *args, unsigned nargs,
                               wf_value *out, wf_value *exc)
{
    const char *p = wf_value_str(s);
    size_t len = wf_value_str_len(s), count = wfm_expr__u8_count(p, len);
    int64_t start = args[0].u.i32;
    int64_t n = nargs > 1 ? args[1].u.i32 : (int64_t)count - start;
    const char *fault = wf_substring_fault(start, n, count);
    if (fault)
        return wfm_expr__raise(exc, &wf_exc_argument_range, "%s", fault);
    size_t from = u8_offset(p, len, (size_t)start), to = u8_offset(p, len, (size_t)(start + n));
    return wf_value_string(p + from, to - from, out);
}

static wf_status str_replace(const wf_value *s, const wf_value *a, const wf_value *b, wf_value *out,
                             wf_value *exc)
{
    if (wf_is_null(a))
        return arg_null(exc, "oldValue");
    size_t al = wf_value_str_len(a), bl = wf_value_str_len(b), len = wf_value_str_len(s);
    if (al == 0)
        return wfm_expr__raise(exc, &wf_exc_argument,
                               "String cannot be of zero length. (Parameter 'oldValue')");
    const char *p = wf_value_str(s), *end = p + len;
    wf_buf buf;
    wf_buf_init(&buf);
    for (;;) {
        const char *hit = find_bytes(p, (size_t)(end - p), wf_value_str(a), al);
        if (!hit)
            break;
        wf_buf_add(&buf, p, (size_t)(hit - p));
        wf_buf_add(&buf, wf_value_str(b), bl);
        p = hit + al;
    }
    wf_buf_add(&buf, p, (size_t)(end - p));
    return take_buf(&buf, out);
}

static wf_status str_indexof(const wf_value *s, const wf_value *x, wf_value *out, wf_value *exc)
{
    if (wf_is_null(x))
        return arg_null(exc, "value");
    const char *h = wf_value_str(s);
    const char *hit = find_bytes(h, wf_value_str_len(s), wf_value_str(x), wf_value_str_len(x));
    *out = wf_int32(hit ? (int32_t)wfm_expr__u8_count(h, (size_t)(hit - h)) : -1);
    return WF_OK;
}

static wf_status list_contains(const wf_value *list, const wf_value *x, wf_value *out)
{
    size_t n = wf_value_list_count(list);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++)
        found = wf_value_equal(wf_value_list_at(list, i), x);
    *out = wf_bool(found);
    return WF_OK;
}

static wf_status dyn_contains(const wf_value *recv, const wf_value *x, wf_value *out, wf_value *exc)
{
    if (recv->type->kind == WF_K_LIST)
        return list_contains(recv, x, out);
    if (recv->type->kind == WF_K_RECORD && x->type->kind == WF_K_STRING) {
        *out = wf_bool(wf_value_record_get(recv, wf_value_str(x)) != NULL);
        return WF_OK;
    }
    if (recv->type->kind == WF_K_STRING && (x->type->kind == WF_K_STRING || wf_is_null(x)))
        return str_test(XF_STR_CONTAINS, recv, x, out, exc);
    return wfm_expr__raise(exc, &wf_exc_invalid_cast, "'%s' has no method 'Contains(%s)'.",
                           recv->type->name, x->type->name);
}

/* ---- String.Format ------------------------------------------------------------------- */
static void add_grouped(wf_buf *buf, const char *digits, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            wf_buf_addc(buf, ',');
        wf_buf_addc(buf, digits[i]);
    }
}

/* A Decimal as fixed point with `prec` places, midpoints away from zero as .NET formats them. */
static void fixed_decimal(wf_decimal d, int prec, char *tmp, size_t size)
{
    wf_decimal r = wf_decimal_round(d, prec > WF_DECIMAL_MAX_SCALE ? WF_DECIMAL_MAX_SCALE : prec,
                                    WF_DEC_ROUND_AWAY);
    char text[WF_DECIMAL_TEXT_MAX];
    wf_decimal_format(r, text, sizeof text);
    int w = snprintf(tmp, size, "%s%s", text, prec > 0 && r.scale == 0 ? "." : "");
    for (int i = r.scale; i < prec && w > 0 && (size_t)w + 1 < size; i++)
        tmp[w++] = '0';
    if (w > 0 && (size_t)w < size)
        tmp[w] = '\0';
}

/* Standard numeric formats F, N (fixed point, N with thousands separators) and D (integer
 * digits); other specifiers fall back to the plain text. Returns false if not handled. */
static bool format_number(const wf_value *v, const char *spec, size_t slen, wf_buf *buf)
{
    wf_kind k = v->type->kind;
    if (slen == 0 || slen > 3 ||
        (k != WF_K_INT32 && k != WF_K_INT64 && k != WF_K_DOUBLE && k != WF_K_DECIMAL))
        return false;
    char c = (char)(spec[0] & ~0x20);
    int prec = -1;
    for (size_t i = 1; i < slen; i++) {
        if (spec[i] < '0' || spec[i] > '9')
            return false;
        prec = (prec < 0 ? 0 : prec * 10) + (spec[i] - '0');
    }
    double d = k == WF_K_INT32    ? v->u.i32
               : k == WF_K_INT64  ? (double)v->u.i64
               : k == WF_K_DOUBLE ? v->u.d
                                  : wf_decimal_to_double(v->u.dec);
    char tmp[400];
    if (c == 'D' && (k == WF_K_INT32 || k == WF_K_INT64)) {
        long long x = k == WF_K_INT32 ? v->u.i32 : v->u.i64;
        snprintf(tmp, sizeof tmp, "%0*lld", prec < 0 ? 1 : prec, x);
        return wf_buf_adds(buf, tmp);
    }
    if (c != 'F' && c != 'N')
        return false;
    if (prec < 0)
        prec = 2;
    if (k == WF_K_DECIMAL)
        fixed_decimal(v->u.dec, prec, tmp, sizeof tmp);
    else
        snprintf(tmp, sizeof tmp, "%.*f", prec > 99 ? 99 : prec, d);
    if (c == 'F')
        return wf_buf_adds(buf, tmp);
    const char *p = tmp;
    if (*p == '-')
        wf_buf_addc(buf, *p++);
    size_t int_len = strcspn(p, ".");
    add_grouped(buf, p, int_len);
    return wf_buf_adds(buf, p + int_len);
}

/* ---- DateTime custom formats ------------------------------------------------------- */
static int32_t dt_part(int64_t us, int64_t which);
static int64_t pow10i(int n);

static const char *const month_names[] = {"January",   "February", "March",    "April",
                                          "May",       "June",     "July",     "August",
                                          "September", "October",  "November", "December"};
static const char *const day_names[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                        "Thursday", "Friday", "Saturday"};

static void add_name(wf_buf *buf, const char *name, size_t run)
{
    wf_buf_add(buf, name, run == 3 ? 3 : strlen(name)); /* MMM / ddd abbreviate */
}

/* One run of a format letter (yyyy, MM, d, HH, fff, tt, ...). */
static void dt_field(wf_buf *buf, int64_t us, char c, size_t run)
{
    int32_t year = dt_part(us, 0), hour = dt_part(us, 3);
    int64_t days = us / 86400000000LL - (us % 86400000000LL < 0);
    int64_t frac = ((us % 1000000) + 1000000) % 1000000;
    int value, width = run >= 2 ? 2 : 1;
    switch (c) {
    case 'y':
        value = run >= 3 ? year : year % 100;
        width = (int)run;
        break;
    case 'M':
        if (run >= 3)
            return add_name(buf, month_names[dt_part(us, 1) - 1], run);
        value = dt_part(us, 1);
        break;
    case 'd':
        if (run >= 3)
            return add_name(buf, day_names[((days % 7) + 11) % 7], run);
        value = dt_part(us, 2);
        break;
    case 'H':
        value = hour;
        break;
    case 'h':
        value = hour % 12 ? hour % 12 : 12;
        break;
    case 'm':
        value = dt_part(us, 4);
        break;
    case 's':
        value = dt_part(us, 5);
        break;
    case 'f':
        run = run > 6 ? 6 : run;
        value = (int)(frac / pow10i(6 - (int)run));
        width = (int)run;
        break;
    default: /* 't' */
        wf_buf_add(buf, hour < 12 ? "AM" : "PM", run >= 2 ? 2 : 1);
        return;
    }
    wf_buf_addf(buf, "%0*d", width, value);
}

/* Custom DateTime formats (yyyy yy MM MMM MMMM dd ddd dddd HH hh mm ss f..ffffff tt, 'text',
 * \c) and the ISO 8601 standard formats "o", "s", "u". */
static bool format_datetime(int64_t us, const char *spec, size_t slen, wf_buf *buf)
{
    if (slen == 1 && strchr("osu", spec[0]) && spec[0]) {
        char tmp[64];
        wf_datetime_format(us, tmp, sizeof tmp);
        return wf_buf_adds(buf, tmp);
    }
    size_t i = 0;
    while (i < slen) {
        char c = spec[i];
        size_t run = 1;
        while (i + run < slen && spec[i + run] == c)
            run++;
        if (c == '\'' || c == '"') {
            size_t j = i + 1;
            while (j < slen && spec[j] != c)
                j++;
            wf_buf_add(buf, spec + i + 1, j - i - 1);
            i = j + 1;
            continue;
        }
        if (c == '\\' && i + 1 < slen) {
            wf_buf_addc(buf, spec[i + 1]);
            i += 2;
            continue;
        }
        if (strchr("yMdHhmsft", c) && c)
            dt_field(buf, us, c, run);
        else
            wf_buf_add(buf, spec + i, run);
        i += run;
    }
    return !buf->oom;
}

/* A value under a format specifier: numbers (F N D) and dates; false: not handled. */
static bool format_value(const wf_value *v, const char *spec, size_t slen, wf_buf *buf)
{
    if (v->type->kind == WF_K_DATETIME && slen > 0)
        return format_datetime(v->u.i64, spec, slen, buf);
    return format_number(v, spec, slen, buf);
}

static wf_status format_error(wf_buf *buf, wf_value *exc, const char *msg)
{
    wf_buf_fini(buf);
    return wfm_expr__raise(exc, &wf_exc_format, "%s", msg);
}

/* One "{index[,align][:spec]}" item starting after '{'; returns the offset after '}'. */
static wf_status format_item(const char *f, size_t len, size_t *pos, const wf_value *args,
                             unsigned nargs, wf_buf *buf, wf_value *exc)
{
    size_t i = *pos;
    unsigned long index = 0;
    size_t digits = 0;
    while (i < len && f[i] >= '0' && f[i] <= '9' && digits < 6)
        index = index * 10 + (unsigned long)(f[i++] - '0'), digits++;
    if (digits == 0)
        return format_error(buf, exc, WFM_MSG_FORMAT);
    while (i < len && f[i] != ':' && f[i] != '}') /* alignment is ignored */
        i++;
    const char *spec = "";
    size_t slen = 0;
    if (i < len && f[i] == ':') {
        spec = f + ++i;
        while (i < len && f[i] != '}')
            i++;
        slen = (size_t)(f + i - spec);
    }
    if (i >= len)
        return format_error(buf, exc, WFM_MSG_FORMAT);
    if (index >= nargs)
        return format_error(buf, exc,
                            "Index (zero based) must be greater than or equal to zero and less "
                            "than the size of the argument list.");
    if (!format_value(&args[index], spec, slen, buf))
        wfm_expr__text(&args[index], buf);
    *pos = i + 1;
    return WF_OK;
}

static wf_status str_format(const wf_value *args, unsigned nargs, wf_value *out, wf_value *exc)
{
    if (wf_is_null(&args[0]))
        return arg_null(exc, "format");
    const char *f = wf_value_str(&args[0]);
    size_t len = wf_value_str_len(&args[0]), i = 0;
    wf_buf buf;
    wf_buf_init(&buf);
    while (i < len) {
        char c = f[i++];
        if ((c == '{' || c == '}') && i < len && f[i] == c) {
            wf_buf_addc(&buf, c);
            i++;
        } else if (c == '}') {
            return format_error(&buf, exc, WFM_MSG_FORMAT);
        } else if (c == '{') {
            wf_status st = format_item(f, len, &i, args + 1, nargs - 1, &buf, exc);
            if (st != WF_OK)
                return st;
        } else {
            wf_buf_addc(&buf, c);
        }
    }
    return take_buf(&buf, out);
}

/* x.ToString() and x.ToString("N2"): the numeric formats of String.Format, else plain text. */
static wf_status to_string(const wf_value *x, const wf_value *format, wf_value *out, wf_value *exc)
{
    if (!format || wf_value_str_len(format) == 0)
        return wfm_expr__conv(x, &wf_type_string, XV_TEXT, out, exc);
    wf_buf buf;
    wf_buf_init(&buf);
    if (!format_value(x, wf_value_str(format), wf_value_str_len(format), &buf))
        wfm_expr__text(x, &buf);
    return take_buf(&buf, out);
}

static wf_status str_concat(const wf_value *args, unsigned nargs, wf_value *out)
{
    wf_buf buf;
    wf_buf_init(&buf);
    for (unsigned i = 0; i < nargs; i++)
        wfm_expr__text(&args[i], &buf);
    return take_buf(&buf, out);
}

/* ---- numbers and time -------------------------------------------------------------- */
static wf_status overflow(wf_value *exc)
{
    return wfm_expr__raise(exc, &wf_exc_overflow, WFM_MSG_OVERFLOW);
}

static wf_status math_abs(const wf_value *x, wf_value *out, wf_value *exc)
{
    switch (x->type->kind) {
    case WF_K_INT32:
        if (x->u.i32 == INT32_MIN)
            return wfm_expr__raise(exc, &wf_exc_overflow,
                                   "Negating the minimum value of a twos complement number is "
                                   "invalid.");
        *out = wf_int32(x->u.i32 < 0 ? -x->u.i32 : x->u.i32);
        return WF_OK;
    case WF_K_DOUBLE:
        *out = wf_double(fabs(x->u.d));
        return WF_OK;
    case WF_K_DECIMAL:
        *out = *x;
        out->u.dec.neg = false;
        return WF_OK;
    default: /* Int64 */
        if (x->u.i64 == INT64_MIN)
            return overflow(exc);
        out->type = x->type;
        out->u.i64 = x->u.i64 < 0 ? -x->u.i64 : x->u.i64;
        return WF_OK;
    }
}

static wf_status math_minmax(bool max, const wf_value *a, const wf_value *b, wf_value *out)
{
    bool a_first;
    switch (a->type->kind) {
    case WF_K_INT32:
        a_first = max ? a->u.i32 >= b->u.i32 : a->u.i32 <= b->u.i32;
        break;
    case WF_K_DOUBLE:
        if (isnan(a->u.d) || isnan(b->u.d)) {
            *out = wf_double(NAN);
            return WF_OK;
        }
        a_first = max ? a->u.d >= b->u.d : a->u.d <= b->u.d;
        break;
    case WF_K_DECIMAL: /* Decimal.Max / Min: of two equal values Max gives a, Min b */
        a_first = max ? wf_decimal_cmp(a->u.dec, b->u.dec) >= 0
                      : wf_decimal_cmp(a->u.dec, b->u.dec) < 0;
        break;
    default:
        a_first = max ? a->u.i64 >= b->u.i64 : a->u.i64 <= b->u.i64;
        break;
    }
    *out = a_first ? *a : *b;
    return WF_OK;
}

static int64_t pow10i(int n)
{
    int64_t r = 1;
    while (n-- > 0)
        r *= 10;
    return r;
}

static wf_status math_round(int fn, const wf_value *args, unsigned nargs, wf_value *out,
                            wf_value *exc)
{
    int digits = 0;
    bool dec = args[0].type->kind == WF_K_DECIMAL;
    if (nargs > 1) {
        if (args[1].u.i32 < 0 || args[1].u.i32 > (dec ? WF_DECIMAL_MAX_SCALE : 15))
            return arg_range(exc, "digits");
        digits = args[1].u.i32;
    }
    int mode = fn == XF_FLOOR ? 1 : fn == XF_CEILING ? 2 : 0;
    if (dec) {
        *out = wf_dec(wf_decimal_round(args[0].u.dec, digits,
                                       mode == 1   ? WF_DEC_ROUND_FLOOR
                                       : mode == 2 ? WF_DEC_ROUND_CEILING
                                                   : WF_DEC_ROUND_EVEN));
        return WF_OK;
    }
    double d = args[0].u.d, r;
    if (mode == 1)
        r = floor(d);
    else if (mode == 2)
        r = ceil(d);
    else if (digits == 0)
        r = nearbyint(d);
    else {
        double scale = (double)pow10i(digits), t = d * scale;
        r = isinf(t) ? d : nearbyint(t) / scale;
    }
    *out = wf_double(r);
    return WF_OK;
}

/* value * unit as whole milliseconds (as .NET Framework rounds TimeSpan.FromX and
 * DateTime.AddX), in microseconds; false when NaN or out of range. */
static bool whole_ms(double value, int64_t unit_us, int64_t *us)
{
    double ms = value * (double)(unit_us / 1000);
    ms += ms >= 0 ? 0.5 : -0.5;
    if (!(ms > -9223372036854775.0 && ms < 9223372036854775.0)) /* also NaN */
        return false;
    *us = (int64_t)ms * 1000;
    return true;
}

static wf_status ts_from(const wf_value *x, int64_t unit_us, wf_value *out, wf_value *exc)
{
    int64_t us;
    if (isnan(x->u.d))
        return wfm_expr__raise(exc, &wf_exc_argument,
                               "TimeSpan does not accept floating point Not-a-Number values.");
    if (!whole_ms(x->u.d, unit_us, &us))
        return wfm_expr__raise(exc, &wf_exc_overflow,
                               "TimeSpan overflowed because the duration is too long.");
    *out = wf_timespan_us(us);
    return WF_OK;
}

/* Year, month, day, hour, minute, second of a DateTime (proleptic Gregorian, UTC). */
static int32_t dt_part(int64_t us, int64_t which)
{
    int64_t days, rem, y;
    int m, d;
    wf_cal_split(us, &days, &rem);
    if (which >= 3) {
        int64_t secs = rem / WF_US_PER_SEC;
        return (int32_t)(which == 3 ? secs / 3600 : which == 4 ? secs / 60 % 60 : secs % 60);
    }
    wf_cal_civil_from_days(days, &y, &m, &d);
    return (int32_t)(which == 0 ? y : which == 1 ? m : d);
}

static wf_status dt_add(const wf_value *dt, const wf_value *x, int64_t unit_us, wf_value *out,
                        wf_value *exc)
{
    int64_t us, r;
    if (!whole_ms(x->u.d, unit_us, &us) || __builtin_add_overflow(dt->u.i64, us, &r) ||
        r < WF_DATETIME_MIN_US || r > WF_DATETIME_MAX_US) /* years 1 to 9999 */
        return wfm_expr__raise(exc, &wf_exc_argument_range,
                               "The added or subtracted value results in an un-representable "
                               "DateTime.");
    *out = wf_datetime_us(r);
    return WF_OK;
}

static int32_t ts_part(int64_t us, int64_t which)
{
    static const int64_t unit[] = {86400000000LL, 3600000000LL, 60000000LL, 1000000LL, 1000LL};
    static const int64_t wrap[] = {0, 24, 60, 60, 1000};
    int64_t v = us / unit[which];
    return (int32_t)(which == 0 ? v : v % wrap[which]);
}

static wf_status dt_new(const wf_value *a, unsigned nargs, wf_value *out, wf_value *exc)
{
    int64_t v[6] = {0};
    for (unsigned i = 0; i < nargs && i < 6; i++)
        v[i] = a[i].u.i32;
    bool ok = wf_cal_date_valid(v[0], v[1], v[2]) && v[3] >= 0 && v[3] < 24 && v[4] >= 0 &&
              v[4] < 60 && v[5] >= 0 && v[5] < 60;
    if (!ok)
        return wfm_expr__raise(exc, &wf_exc_argument_range,
                               "Year, Month, and Day parameters describe an un-representable "
                               "DateTime.");
    int64_t secs =
        wf_cal_days_from_civil(v[0], v[1], v[2]) * 86400 + v[3] * 3600 + v[4] * 60 + v[5];
    *out = wf_datetime_us(secs * WF_US_PER_SEC);
    return WF_OK;
}

static wf_status ts_new(const wf_value *a, unsigned nargs, wf_value *out, wf_value *exc)
{
    int64_t d = nargs >= 4 ? a[0].u.i32 : 0, first = nargs >= 4 ? 1 : 0;
    int64_t ms = nargs == 5 ? a[4].u.i32 : 0;
    __int128 us = (((((__int128)d * 24 + a[first].u.i32) * 60 + a[first + 1].u.i32) * 60 +
                    a[first + 2].u.i32) *
                   1000000) +
                  (__int128)ms * 1000;
    if (us > INT64_MAX || us < INT64_MIN)
        return wfm_expr__raise(exc, &wf_exc_argument_range,
                               "TimeSpan overflowed because the "
                               "duration is too long.");
    *out = wf_timespan_us((int64_t)us);
    return WF_OK;
}

static wf_status str_join(const wf_value *a, unsigned nargs, wf_value *out)
{
    wf_buf buf;
    wf_buf_init(&buf);
    bool one_list = nargs == 2 && a[1].type->kind == WF_K_LIST;
    size_t count = one_list ? wf_value_list_count(&a[1]) : nargs - 1;
    for (size_t i = 0; i < count; i++) {
        if (i)
            wfm_expr__text(&a[0], &buf);
        wfm_expr__text(one_list ? wf_value_list_at(&a[1], i) : &a[i + 1], &buf);
    }
    return take_buf(&buf, out);
}

static bool blank(const wf_value *s)
{
    const char *p = wf_value_str(s);
    for (size_t i = 0; i < wf_value_str_len(s); i++)
        if (!is_space(p[i]))
            return false;
    return true;
}

static wf_status len_of(const wf_value *x, wf_value *out, wf_value *exc)
{
    switch (x->type->kind) {
    case WF_K_NULL:
        return wfm_expr__raise(exc, &wf_exc_null_reference, WFM_MSG_NULLREF);
    case WF_K_STRING:
        *out = wf_int32((int32_t)wfm_expr__u8_count(wf_value_str(x), wf_value_str_len(x)));
        break;
    case WF_K_LIST:
        *out = wf_int32((int32_t)wf_value_list_count(x));
        break;
    case WF_K_RECORD:
        *out = wf_int32((int32_t)wf_value_record_count(x));
        break;
    default:
        return wfm_expr__raise(exc, &wf_exc_invalid_cast, "len() of a value of type '%s'.",
                               x->type->name);
    }
    return WF_OK;
}

/* CompareTo / String.Compare: null sorts first; values that cannot be compared are
 * ArgumentException as .NET's CompareTo(Object) throws. Strings compare ordinally. */
static wf_status compare_values(const wf_value *a, const wf_value *b, wf_value *out, wf_value *exc)
{
    int r = 0;
    if (wf_is_null(a) || wf_is_null(b))
        r = wf_is_null(a) ? (wf_is_null(b) ? 0 : -1) : 1;
    else if (wf_value_compare(a, b, &r, NULL) != WF_OK)
        return wfm_expr__raise(exc, &wf_exc_argument, "Object must be of type %s.", a->type->name);
    *out = wf_int32(r < 0 ? -1 : r > 0 ? 1 : 0);
    return WF_OK;
}

/* The pseudo-random numbers of new Random().Next(...): a per-thread splitmix64 generator
 * seeded from the clock and the thread on first use; with an explicit seed, the first number
 * of a generator seeded with it (repeatable, though not .NET's sequence). */
static _Thread_local uint64_t rng_state;

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static wf_status random_value(const xnode *n, const wf_value *a, wf_value *out, wf_value *exc)
{
    uint64_t r;
    if (n->param & XR_SEED) {
        uint64_t seed = (uint64_t)(int64_t)a[0].u.i32;
        r = splitmix64(&seed);
        a++;
    } else {
        if (!rng_state)
            rng_state = (uint64_t)wfm_expr__now_us() ^ (uint64_t)(uintptr_t)&rng_state;
        r = splitmix64(&rng_state);
    }
    double unit = (double)(r >> 11) * 0x1.0p-53; /* [0, 1) */
    int64_t lo = 0, hi = INT32_MAX;
    switch (n->param & ~XR_SEED) {
    case XR_DOUBLE:
        *out = wf_double(unit);
        return WF_OK;
    case XR_NEXT1:
        hi = a[0].u.i32;
        if (hi < 0)
            return wfm_expr__raise(exc, &wf_exc_argument_range,
                                   "'maxValue' must be greater than zero. (maxValue)");
        break;
    case XR_NEXT2:
        lo = a[0].u.i32;
        hi = a[1].u.i32;
        if (lo > hi)
            return wfm_expr__raise(exc, &wf_exc_argument_range,
                                   "'minValue' cannot be greater than maxValue. (minValue)");
        break;
    default:
        break;
    }
    int64_t v = lo + (int64_t)(unit * (double)(hi - lo));
    *out = wf_int32((int32_t)(v < hi ? v : (hi > lo ? hi - 1 : lo)));
    return WF_OK;
}

static wf_status record_list(const xnode *n, const wf_value *rec, bool keys, wf_value *out)
{
    size_t count = wf_value_record_count(rec);
    wf_value *items = count ? wf_calloc(count, sizeof *items) : NULL;
    if (count && !items)
        return WF_E_NOMEM;
    wf_status st = WF_OK;
    size_t done = 0;
    for (; done < count && st == WF_OK; done++) {
        if (keys)
            st = wf_value_cstring(wf_value_record_key(rec, done), &items[done]);
        else
            items[done] = wf_value_retain(wf_value_record_at(rec, done));
    }
    const wf_type *t = keys && n->aux ? n->aux : &wf_type_list_object;
    if (st == WF_OK)
        st = wf_value_list(t, items, count, out);
    for (size_t i = 0; i < done; i++)
        wf_value_release(&items[i]);
    wf_free(items);
    return st;
}

/* LINQ's Sum over a numeric list: checked for Int32 / Int64 / Decimal as Enumerable.Sum. */
static wf_status list_sum(const xnode *n, const wf_value *list, wf_value *out, wf_value *exc)
{
    size_t count = wf_value_list_count(list);
    wf_kind k = n->type->kind;
    int64_t acc = 0;
    double d = 0;
    wf_decimal m = wf_decimal_from_int64(0);
    for (size_t i = 0; i < count; i++) {
        const wf_value *v = wf_value_list_at(list, i);
        if (k == WF_K_DOUBLE) {
            d += v->u.d;
            continue;
        }
        if (k == WF_K_DECIMAL) {
            if (wf_decimal_add(m, v->u.dec, &m) != WF_OK)
                return overflow(exc);
            continue;
        }
        int64_t x = k == WF_K_INT32 ? v->u.i32 : v->u.i64;
        if (__builtin_add_overflow(acc, x, &acc) ||
            (k == WF_K_INT32 && (acc > INT32_MAX || acc < INT32_MIN)))
            return overflow(exc);
    }
    *out = k == WF_K_DOUBLE  ? wf_double(d)
           : k == WF_K_INT32 ? wf_int32((int32_t)acc)
           : k == WF_K_INT64 ? wf_int64(acc)
                             : wf_dec(m);
    return WF_OK;
}

wf_status wfm_expr__call(const xnode *n, wf_value *a, wf_value *out, wf_value *exc)
{
    const wf_value *s = &a[0];
    switch ((xfn)n->sub) {
    case XF_LENGTH:
        *out = wf_int32((int32_t)wfm_expr__u8_count(wf_value_str(s), wf_value_str_len(s)));
        return WF_OK;
    case XF_COUNT:
        *out = wf_int32((int32_t)wf_value_list_count(s));
        return WF_OK;
    case XF_MESSAGE:
        return wf_value_cstring(wf_value_exc_message(s), out);
    case XF_TS_TOTAL:
        *out = wf_double((double)s->u.i64 / (double)n->param);
        return WF_OK;
    case XF_DT_PART:
        *out = wf_int32(dt_part(s->u.i64, n->param));
        return WF_OK;
    case XF_TOUPPER:
        return str_case(s, true, out);
    case XF_TOLOWER:
        return str_case(s, false, out);
    case XF_TRIM:
        return str_trim(s, n->param, out);
    case XF_PAD:
        return str_pad(s, &a[1], n->param, out, exc);
    case XF_IS_TYPE: {
        bool is = !wf_is_null(s) && (s->type == n->aux || wf_type_is_a(s->type, n->aux) ||
                                     n->aux->kind == WF_K_OBJECT);
        *out = wf_bool(is != (n->param != 0));
        return WF_OK;
    }
    case XF_EQUALS:
        *out = wf_bool(wf_value_equal(s, &a[1]));
        return WF_OK;
    case XF_LIST_INDEXOF: {
        size_t count = wf_value_list_count(s), i = 0;
        while (i < count && !wf_value_equal(wf_value_list_at(s, i), &a[1]))
            i++;
        *out = wf_int32(i < count ? (int32_t)i : -1);
        return WF_OK;
    }
    case XF_STR_CONTAINS:
    case XF_STARTSWITH:
    case XF_ENDSWITH:
        return str_test(n->sub, s, &a[1], out, exc);
    case XF_SUBSTRING:
        return str_substring(s, a + 1, n->nargs - 1u, out, exc);
    case XF_REPLACE:
        return str_replace(s, &a[1], &a[2], out, exc);
    case XF_INDEXOF:
        return str_indexof(s, &a[1], out, exc);
    case XF_LIST_CONTAINS:
        return list_contains(s, &a[1], out);
    case XF_CONTAINSKEY:
        if (wf_is_null(&a[1]))
            return arg_null(exc, "key");
        *out = wf_bool(wf_value_record_get(s, wf_value_str(&a[1])) != NULL);
        return WF_OK;
    case XF_DYN_CONTAINS:
        return dyn_contains(s, &a[1], out, exc);
    case XF_FORMAT:
        return str_format(a, n->nargs, out, exc);
    case XF_CONCAT:
        return str_concat(a, n->nargs, out);
    case XF_ISNULLOREMPTY:
        *out = wf_bool(wf_value_str_len(s) == 0);
        return WF_OK;
    case XF_LEN:
        return len_of(s, out, exc);
    case XF_ABS:
        return math_abs(s, out, exc);
    case XF_MIN:
    case XF_MAX:
        return math_minmax(n->sub == XF_MAX, &a[0], &a[1], out);
    case XF_ROUND:
    case XF_FLOOR:
    case XF_CEILING:
        return math_round(n->sub, a, n->nargs, out, exc);
    case XF_POW:
        *out = wf_double(pow(a[0].u.d, a[1].u.d));
        return WF_OK;
    case XF_SQRT:
        *out = wf_double(sqrt(s->u.d));
        return WF_OK;
    case XF_TS_FROM:
        return ts_from(s, n->param, out, exc);
    case XF_TOSTRING:
        return to_string(s, n->nargs > 1 ? &a[1] : NULL, out, exc);
    case XF_DT_ADD:
        return dt_add(s, &a[1], n->param, out, exc);
    case XF_TS_PART:
        *out = wf_int32(ts_part(s->u.i64, n->param));
        return WF_OK;
    case XF_ISNULLORWHITESPACE:
        *out = wf_bool(blank(s));
        return WF_OK;
    case XF_JOIN:
        return str_join(a, n->nargs, out);
    case XF_DT_NEW:
        return dt_new(a, n->nargs, out, exc);
    case XF_TS_NEW:
        return ts_new(a, n->nargs, out, exc);
    case XF_COMPARE:
        return compare_values(&a[0], &a[1], out, exc);
    case XF_RANDOM:
        return random_value(n, a, out, exc);
    case XF_REC_COUNT:
        *out = wf_int32((int32_t)wf_value_record_count(s));
        return WF_OK;
    case XF_REC_KEYS:
    case XF_REC_VALUES:
        return record_list(n, s, n->sub == XF_REC_KEYS, out);
    case XF_LIST_ANY:
        *out = wf_bool(wf_value_list_count(s) > 0);
        return WF_OK;
    case XF_LIST_FIRST: {
        size_t count = wf_value_list_count(s);
        if (!count && (n->param & 2)) {
            *out = wf_type_default(n->type);
            return WF_OK;
        }
        if (!count)
            return wfm_expr__raise(exc, &wf_exc_invalid_operation, "Sequence contains no elements");
        *out = wf_value_retain(wf_value_list_at(s, (n->param & 1) ? count - 1 : 0));
        return WF_OK;
    }
    case XF_LIST_SUM:
        return list_sum(n, s, out, exc);
    case XF_LIST_SELF:
        *out = wf_value_retain(s);
        return WF_OK;
    }
    return wfm_expr__raise(exc, &wf_exc_invalid_operation, "bad library function");
}

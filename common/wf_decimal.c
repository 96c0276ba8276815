/* wf_decimal.c — System.Decimal arithmetic (wf_decimal.h). Every operation computes its exact
 * result in a wide unsigned integer (384 bits, enough for a 96-bit magnitude times 10^57), then
 * fits it into 96 bits and scale <= 28 by dropping digits with one half-to-even rounding (the
 * rule of .NET's decimal arithmetic), so no result is rounded twice. */
#include "wf_decimal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define LIMBS 12

typedef struct big {
    uint32_t w[LIMBS]; /* little-endian 32-bit limbs */
} big;

static const uint32_t pow10_u32[10] = {1,      10,      100,      1000,      10000,
                                       100000, 1000000, 10000000, 100000000, 1000000000};

static big big_of(wf_decimal d)
{
    big b = {{0}};
    b.w[0] = (uint32_t)d.lo;
    b.w[1] = (uint32_t)(d.lo >> 32);
    b.w[2] = d.hi;
    return b;
}

static bool big_zero(const big *b)
{
    for (int i = 0; i < LIMBS; i++)
        if (b->w[i])
            return false;
    return true;
}

static bool big_fits96(const big *b)
{
    for (int i = 3; i < LIMBS; i++)
        if (b->w[i])
            return false;
    return true;
}

/* b *= m; false if it no longer fits. */
static bool big_mul_small(big *b, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < LIMBS; i++) {
        uint64_t t = (uint64_t)b->w[i] * m + carry;
        b->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    return carry == 0;
}

static bool big_mul_pow10(big *b, int k)
{
    for (; k > 0; k -= 9)
        if (!big_mul_small(b, pow10_u32[k < 9 ? k : 9]))
            return false;
    return true;
}

/* b /= d; returns the remainder. */
static uint32_t big_div_small(big *b, uint32_t d)
{
    uint64_t r = 0;
    for (int i = LIMBS - 1; i >= 0; i--) {
        uint64_t t = (r << 32) | b->w[i];
        b->w[i] = (uint32_t)(t / d);
        r = t % d;
    }
    return (uint32_t)r;
}

static int big_cmp(const big *a, const big *b)
{
    for (int i = LIMBS - 1; i >= 0; i--)
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

static void big_add(big *a, const big *b)
{
    uint64_t carry = 0;
    for (int i = 0; i < LIMBS; i++) {
        uint64_t t = (uint64_t)a->w[i] + b->w[i] + carry;
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
}

static void big_sub(big *a, const big *b) /* a >= b */
{
    int64_t borrow = 0;
    for (int i = 0; i < LIMBS; i++) {
        int64_t t = (int64_t)a->w[i] - b->w[i] - borrow;
        borrow = t < 0;
        a->w[i] = (uint32_t)(t + (borrow ? (int64_t)1 << 32 : 0));
    }
}

static void big_mul(const big *a, const big *b, big *out) /* both below 2^192 */
{
    big r = {{0}};
    for (int i = 0; i < LIMBS / 2; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < LIMBS / 2; j++) {
            uint64_t t = (uint64_t)a->w[i] * b->w[j] + r.w[i + j] + carry;
            r.w[i + j] = (uint32_t)t;
            carry = t >> 32;
        }
        r.w[i + LIMBS / 2] = (uint32_t)carry;
    }
    *out = r;
}

static void big_shl1(big *b)
{
    for (int i = LIMBS - 1; i > 0; i--)
        b->w[i] = (b->w[i] << 1) | (b->w[i - 1] >> 31);
    b->w[0] <<= 1;
}

/* n = n / d, r = n % d, by binary long division (d is not zero). */
static void big_divmod(big *n, const big *d, big *r)
{
    big q = {{0}}, rem = {{0}};
    int top = LIMBS - 1;
    while (top > 0 && n->w[top] == 0)
        top--;
    for (int bit = top * 32 + 31; bit >= 0; bit--) {
        big_shl1(&rem);
        rem.w[0] |= (n->w[bit / 32] >> (bit % 32)) & 1;
        if (big_cmp(&rem, d) >= 0) {
            big_sub(&rem, d);
            q.w[bit / 32] |= 1u << (bit % 32);
        }
    }
    *n = q;
    *r = rem;
}

/* mag / 10^scale (with `sticky`: a non-zero remainder below it) as a Decimal: digits are dropped
 * until the scale is at most 28 and the magnitude fits 96 bits, then rounded half to even.
 * WF_E_RANGE when even the integer part does not fit. */
static wf_status fit(big mag, int scale, bool sticky, bool neg, wf_decimal *out)
{
    uint32_t digit = 0;
    bool dropped = false;
    for (;;) {
        while (scale > WF_DECIMAL_MAX_SCALE || !big_fits96(&mag)) {
            if (scale == 0)
                return WF_E_RANGE;
            sticky = sticky || digit != 0;
            digit = big_div_small(&mag, 10);
            scale--;
            dropped = true;
        }
        if (!dropped || digit < 5 || (digit == 5 && !sticky && !(mag.w[0] & 1)))
            break;
        big one = {{1}};
        big_add(&mag, &one);
        if (big_fits96(&mag))
            break;
        digit = 0, sticky = true, dropped = false; /* 2^96: drop one more digit */
    }
    assert(scale >= 0 && scale <= WF_DECIMAL_MAX_SCALE && big_fits96(&mag));
    out->lo = (uint64_t)mag.w[1] << 32 | mag.w[0];
    out->hi = mag.w[2];
    out->scale = (uint8_t)scale;
    out->neg = neg && !big_zero(&mag);
    return WF_OK;
}

/* ---- construction and conversion ------------------------------------------------------ */

wf_decimal wf_decimal_from_int64(int64_t i)
{
    wf_decimal d = {.lo = i < 0 ? 0 - (uint64_t)i : (uint64_t)i, .hi = 0, .scale = 0,
                    .neg = i < 0};
    return d;
}

bool wf_decimal_is_zero(wf_decimal a)
{
    return a.lo == 0 && a.hi == 0;
}

wf_decimal wf_decimal_neg(wf_decimal a)
{
    a.neg = !a.neg && !wf_decimal_is_zero(a);
    return a;
}

static const double pow10_dbl[29] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,
                                     1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
                                     1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28};

double wf_decimal_to_double(wf_decimal d)
{
    /* .NET: (low 64 bits + high 32 bits * 2^64) / 10^scale, each step in double */
    double x = ((double)d.lo + (double)d.hi * 18446744073709551616.0) /
               pow10_dbl[d.scale > WF_DECIMAL_MAX_SCALE ? WF_DECIMAL_MAX_SCALE : d.scale];
    return d.neg ? -x : x;
}

wf_status wf_decimal_from_double(double x, wf_decimal *out)
{
    *out = wf_decimal_from_int64(0);
    if (isnan(x) || isinf(x))
        return WF_E_RANGE;
    int e2;
    frexp(x, &e2); /* x = m * 2^e2, 0.5 <= |m| < 1 */
    if (x == 0 || e2 < -94)
        return WF_OK; /* below 10^-28 / 2 whatever the digits: zero */
    if (e2 > 96)
        return WF_E_RANGE;
    bool neg = x < 0;
    double v = fabs(x);
    /* Scale to a 15-digit integer (the precision of a double), as .NET's conversion does. */
    int power = 14 - (int)floor((double)e2 * 19728 / 65536);
    if (power >= 0) {
        if (power > WF_DECIMAL_MAX_SCALE)
            power = WF_DECIMAL_MAX_SCALE;
        v *= pow10_dbl[power];
    } else if (power != -1 || v >= 1e15) {
        v /= pow10_dbl[-power];
    } else {
        power = 0;
    }
    if (v < 1e14 && power < WF_DECIMAL_MAX_SCALE)
        v *= 10, power++;
    uint64_t mant = (uint64_t)nearbyint(v); /* ties to even */
    if (mant == 0)
        return WF_OK;
    if (power < 0) {
        big mag = {{(uint32_t)mant, (uint32_t)(mant >> 32)}};
        if (!big_mul_pow10(&mag, -power))
            return WF_E_RANGE;
        return fit(mag, 0, false, neg, out);
    }
    for (int drop = 0; drop < 14 && power > 0 && mant % 10 == 0; drop++)
        mant /= 10, power--;
    big mag = {{(uint32_t)mant, (uint32_t)(mant >> 32)}};
    return fit(mag, power, false, neg, out);
}

wf_status wf_decimal_to_int64(wf_decimal d, int64_t lo, int64_t hi, int64_t *out)
{
    wf_decimal t = wf_decimal_round(d, 0, WF_DEC_ROUND_ZERO);
    if (t.hi != 0)
        return WF_E_RANGE;
    if (t.neg ? t.lo > (uint64_t)INT64_MAX + 1 : t.lo > (uint64_t)INT64_MAX)
        return WF_E_RANGE;
    int64_t i = t.neg ? (int64_t)(0 - t.lo) : (int64_t)t.lo;
    if (i < lo || i > hi)
        return WF_E_RANGE;
    *out = i;
    return WF_OK;
}

wf_status wf_decimal_to_currency(wf_decimal d, int64_t *units)
{
    wf_decimal r = wf_decimal_round(d, 4, WF_DEC_ROUND_EVEN);
    big mag = big_of(r);
    if (!big_mul_pow10(&mag, 4 - r.scale) || mag.w[3] || mag.w[2] ||
        ((uint64_t)mag.w[1] << 32 | mag.w[0]) > (uint64_t)INT64_MAX + r.neg)
        return WF_E_RANGE;
    uint64_t u = (uint64_t)mag.w[1] << 32 | mag.w[0];
    *units = r.neg ? (int64_t)(0 - u) : (int64_t)u;
    return WF_OK;
}

wf_decimal wf_decimal_from_currency(int64_t units)
{
    wf_decimal d = wf_decimal_from_int64(units);
    d.scale = 4;
    return d;
}

/* ---- arithmetic ------------------------------------------------------------------------ */

/* a and b as magnitudes at the common scale max(a.scale, b.scale). */
static int align(wf_decimal a, wf_decimal b, big *x, big *y)
{
    int s = a.scale > b.scale ? a.scale : b.scale;
    *x = big_of(a), *y = big_of(b);
    big_mul_pow10(x, s - a.scale); /* at most 96 + 94 bits: always fits */
    big_mul_pow10(y, s - b.scale);
    return s;
}

static wf_status add_signed(wf_decimal a, wf_decimal b, bool b_neg, wf_decimal *out)
{
    big x, y;
    int s = align(a, b, &x, &y);
    if (a.neg == b_neg) {
        big_add(&x, &y);
        return fit(x, s, false, a.neg, out);
    }
    if (big_cmp(&x, &y) >= 0) {
        big_sub(&x, &y);
        return fit(x, s, false, a.neg, out);
    }
    big_sub(&y, &x);
    return fit(y, s, false, b_neg, out);
}

wf_status wf_decimal_add(wf_decimal a, wf_decimal b, wf_decimal *out)
{
    return add_signed(a, b, b.neg, out);
}

wf_status wf_decimal_sub(wf_decimal a, wf_decimal b, wf_decimal *out)
{
    return add_signed(a, b, !b.neg && !wf_decimal_is_zero(b), out);
}

wf_status wf_decimal_mul(wf_decimal a, wf_decimal b, wf_decimal *out)
{
    big x = big_of(a), y = big_of(b), p;
    big_mul(&x, &y, &p);
    return fit(p, a.scale + b.scale, false, a.neg != b.neg, out);
}

/* Division as .NET does it: exact at the natural scale (a.scale - b.scale) when it can be;
 * otherwise as many digits as fit (scale <= 28), rounded half to even, trailing zeros dropped. */
wf_status wf_decimal_div(wf_decimal a, wf_decimal b, wf_decimal *out)
{
    if (wf_decimal_is_zero(b))
        return WF_E_RANGE;
    bool neg = a.neg != b.neg;
    int natural = a.scale - b.scale;
    big d = big_of(b), n = big_of(a), r;
    big_divmod(&n, &d, &r);
    if (big_zero(&r)) { /* exact at the natural scale */
        if (natural >= 0)
            return fit(n, natural, false, neg, out);
        if (!big_mul_pow10(&n, -natural))
            return WF_E_RANGE;
        return fit(n, 0, false, neg, out);
    }
    /* One digit more than the maximal scale, so the rounding sees the next digit and whether
     * anything is left below it. */
    n = big_of(a);
    big_mul_pow10(&n, WF_DECIMAL_MAX_SCALE + 1 - natural); /* at most 96 + 190 bits */
    big_divmod(&n, &d, &r);
    wf_status st = fit(n, WF_DECIMAL_MAX_SCALE + 1, !big_zero(&r), neg, out);
    if (st != WF_OK)
        return st;
    big m = big_of(*out);
    while (out->scale > 0) {
        big t = m;
        if (big_div_small(&t, 10) != 0)
            break;
        m = t, out->scale--;
    }
    out->lo = (uint64_t)m.w[1] << 32 | m.w[0];
    out->hi = m.w[2];
    return WF_OK;
}

/* a % b: the sign of a; a itself when |a| < |b|; otherwise exact at the common scale. */
wf_status wf_decimal_rem(wf_decimal a, wf_decimal b, wf_decimal *out)
{
    if (wf_decimal_is_zero(b))
        return WF_E_RANGE;
    big x, y, r;
    int s = align(a, b, &x, &y);
    int c = big_cmp(&x, &y);
    if (wf_decimal_is_zero(a) || c < 0) {
        *out = a;
        return WF_OK;
    }
    big_divmod(&x, &y, &r);
    return fit(r, s, false, a.neg, out);
}

int wf_decimal_cmp(wf_decimal a, wf_decimal b)
{
    bool za = wf_decimal_is_zero(a), zb = wf_decimal_is_zero(b);
    int sa = za ? 0 : a.neg ? -1 : 1, sb = zb ? 0 : b.neg ? -1 : 1;
    if (sa != sb || sa == 0)
        return sa < sb ? -1 : sa > sb;
    if (a.scale == b.scale) { /* the common case: the magnitudes compare directly */
        int c = a.hi != b.hi ? (a.hi < b.hi ? -1 : 1) : a.lo != b.lo ? (a.lo < b.lo ? -1 : 1) : 0;
        return a.neg ? -c : c;
    }
    big x, y;
    align(a, b, &x, &y);
    int c = big_cmp(&x, &y);
    return a.neg ? -c : c;
}

wf_decimal wf_decimal_round(wf_decimal d, int places, wf_decimal_rounding mode)
{
    if (places < 0)
        places = 0;
    if (d.scale <= places)
        return d;
    big m = big_of(d);
    uint32_t digit = 0;
    bool sticky = false;
    for (int s = d.scale; s > places; s--) {
        sticky = sticky || digit != 0;
        digit = big_div_small(&m, 10);
    }
    bool inexact = digit != 0 || sticky, up;
    switch (mode) {
    case WF_DEC_ROUND_EVEN:
        up = digit > 5 || (digit == 5 && (sticky || (m.w[0] & 1)));
        break;
    case WF_DEC_ROUND_AWAY:
        up = digit >= 5;
        break;
    case WF_DEC_ROUND_FLOOR:
        up = inexact && d.neg;
        break;
    case WF_DEC_ROUND_CEILING:
        up = inexact && !d.neg;
        break;
    default:
        up = false;
    }
    if (up) {
        big one = {{1}};
        big_add(&m, &one); /* below 2^96 / 10 + 1: fits */
    }
    wf_decimal r = {.lo = (uint64_t)m.w[1] << 32 | m.w[0], .hi = m.w[2],
                    .scale = (uint8_t)places, .neg = false};
    r.neg = d.neg && !wf_decimal_is_zero(r);
    return r;
}

/* ---- text ------------------------------------------------------------------------------ */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

wf_status wf_decimal_parse(const char *text, wf_decimal *out)
{
    const char *p = text;
    while (is_space(*p))
        p++;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    big mag = {{0}};
    int sig = 0, scale = 0, digits = 0;
    bool sticky = false, in_frac = false;
    for (;; p++) {
        if (*p == '.' && !in_frac) {
            in_frac = true;
            continue;
        }
        if (!is_digit(*p))
            break;
        digits++;
        if (sig == 0 && *p == '0') {
            scale += in_frac;
            continue;
        }
        if (sig < 100) { /* 100 digits: 333 bits, within the 384 */
            big_mul_small(&mag, 10);
            big dig = {{(uint32_t)(*p - '0')}};
            big_add(&mag, &dig);
            sig++;
            scale += in_frac;
        } else if (!in_frac) {
            return WF_E_RANGE; /* more than 100 integer digits */
        } else {
            sticky = sticky || *p != '0';
        }
    }
    while (is_space(*p))
        p++;
    if (digits == 0 || *p != '\0')
        return WF_E_SYNTAX;
    return fit(mag, scale, sticky, neg, out);
}

void wf_decimal_format(wf_decimal d, char *buf, size_t size)
{
    if (d.scale > WF_DECIMAL_MAX_SCALE) /* not a valid Decimal: shown at the largest scale */
        d.scale = WF_DECIMAL_MAX_SCALE;
    char digits[WF_DECIMAL_TEXT_MAX];
    int n = 0;
    big m = big_of(d);
    do
        digits[n++] = (char)('0' + big_div_small(&m, 10));
    while (!big_zero(&m));
    while (n <= d.scale)
        digits[n++] = '0'; /* a leading "0." */
    char text[WF_DECIMAL_TEXT_MAX];
    size_t k = 0;
    if (d.neg && !wf_decimal_is_zero(d))
        text[k++] = '-';
    for (int i = n - 1; i >= 0; i--) {
        text[k++] = digits[i];
        if (i == d.scale && i > 0)
            text[k++] = '.';
    }
    text[k] = '\0';
    snprintf(buf, size, "%s", text);
}

/* wf_decimal.h — .NET's System.Decimal, the one implementation both runtimes compute with: a
 * 96-bit magnitude, a sign and a scale 0..28 (value = magnitude / 10^scale). Arithmetic keeps
 * the scale of the calculation and rounds half to even only when the exact result does not fit;
 * text keeps the scale ("1.50"). The C boundary of type libraries is CURRENCY, int64 units of
 * 1/10,000 (docs/semantics.md §4 "Decimal", docs/formats.md "Values"). */
#ifndef WF_DECIMAL_H
#define WF_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wf_error.h"

typedef struct wf_decimal {
    uint64_t lo;   /* low 64 bits of the magnitude */
    uint32_t hi;   /* high 32 bits of the magnitude */
    uint8_t scale; /* 0..28 */
    bool neg;      /* never set on zero */
} wf_decimal;

#define WF_DECIMAL_MAX_SCALE 28
/* Room for the longest text form, "-7.9228162514264337593543950335", and its NUL. */
#define WF_DECIMAL_TEXT_MAX 40

typedef enum wf_decimal_rounding {
    WF_DEC_ROUND_EVEN = 0, /* MidpointRounding.ToEven, banker's rounding */
    WF_DEC_ROUND_AWAY,     /* MidpointRounding.AwayFromZero */
    WF_DEC_ROUND_ZERO,     /* Truncate */
    WF_DEC_ROUND_FLOOR,
    WF_DEC_ROUND_CEILING,
} wf_decimal_rounding;

wf_decimal wf_decimal_from_int64(int64_t i); /* exact, scale 0 */
/* new decimal(double): rounded to 15 significant digits, trailing zeros dropped; WF_E_RANGE for
 * NaN, infinities and magnitudes of 2^96 and more. */
wf_status wf_decimal_from_double(double d, wf_decimal *out);
double wf_decimal_to_double(wf_decimal d); /* (double)decimal, computed as .NET does */
/* Truncated toward zero; WF_E_RANGE when the integer part is outside [lo, hi]. */
wf_status wf_decimal_to_int64(wf_decimal d, int64_t lo, int64_t hi, int64_t *out);
/* CURRENCY (Decimal.ToOACurrency): rounded half to even to 4 places; WF_E_RANGE beyond Int64. */
wf_status wf_decimal_to_currency(wf_decimal d, int64_t *units);
wf_decimal wf_decimal_from_currency(int64_t units); /* scale 4 */

/* Arithmetic; WF_E_RANGE on overflow (OverflowException) and, for div and rem, on a zero
 * divisor (callers test wf_decimal_is_zero first to raise DivideByZeroException). */
wf_status wf_decimal_add(wf_decimal a, wf_decimal b, wf_decimal *out);
wf_status wf_decimal_sub(wf_decimal a, wf_decimal b, wf_decimal *out);
wf_status wf_decimal_mul(wf_decimal a, wf_decimal b, wf_decimal *out);
wf_status wf_decimal_div(wf_decimal a, wf_decimal b, wf_decimal *out);
wf_status wf_decimal_rem(wf_decimal a, wf_decimal b, wf_decimal *out);
wf_decimal wf_decimal_neg(wf_decimal a);
int wf_decimal_cmp(wf_decimal a, wf_decimal b); /* -1, 0, 1; by value, scale ignored */
bool wf_decimal_is_zero(wf_decimal a);
/* Decimal.Round(d, places, mode) (places 0..28; a smaller scale is kept as is); Floor, Ceiling
 * and Truncate are places 0. */
wf_decimal wf_decimal_round(wf_decimal d, int places, wf_decimal_rounding mode);

/* Decimal.Parse (invariant): [ws][+|-]digits[.digits][ws], the scale is the number of places
 * written ("12.5000" has 4); digits beyond what fits are rounded half to even. WF_E_SYNTAX,
 * WF_E_RANGE (integer part beyond 96 bits). */
wf_status wf_decimal_parse(const char *text, wf_decimal *out);
/* ToString(): all `scale` places ("1.50", "-0.005", "3"); size >= WF_DECIMAL_TEXT_MAX. */
void wf_decimal_format(wf_decimal d, char *buf, size_t size);

#endif

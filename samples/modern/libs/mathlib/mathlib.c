/* mathlib.c — a small native C library for the invoke_native.xaml sample: ordinary C
 * functions, written without any knowledge of a workflow engine, that InvokeMethod calls
 * through libffi (built by make to BUILD/samples/lib/libmathlib.so). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int32_t mathlib_gcd(int32_t a, int32_t b);
double mathlib_hypot(double a, double b);
void mathlib_divmod(int32_t a, int32_t b, int32_t *quotient, int32_t *remainder);
char *mathlib_roman(int32_t n);

/* Greatest common divisor (Euclid). */
int32_t mathlib_gcd(int32_t a, int32_t b)
{
    if (a < 0)
        a = -a;
    if (b < 0)
        b = -b;
    while (b != 0) {
        int32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Length of the hypotenuse, by Newton's method so the library needs no libm. */
double mathlib_hypot(double a, double b)
{
    double s = a * a + b * b, x = s > 1.0 ? s : 1.0;
    for (int i = 0; i < 64; i++)
        x = 0.5 * (x + s / x);
    return s == 0.0 ? 0.0 : x;
}

/* Quotient and remainder through out-parameters; b == 0 leaves both 0. */
void mathlib_divmod(int32_t a, int32_t b, int32_t *quotient, int32_t *remainder)
{
    *quotient = b ? a / b : 0;
    *remainder = b ? a % b : 0;
}

/* Roman numeral for 1..3999 as a malloc'd string (the caller frees); "" otherwise. */
char *mathlib_roman(int32_t n)
{
    static const int32_t values[] = {1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1};
    static const char *const digits[] = {"M",  "CM", "D",  "CD", "C",  "XC", "L",
                                         "XL", "X",  "IX", "V",  "IV", "I"};
    char *out = malloc(32);
    if (!out)
        return NULL;
    out[0] = '\0';
    if (n < 1 || n > 3999)
        return out;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        while (n >= values[i]) {
            strcat(out, digits[i]);
            n -= values[i];
        }
    return out;
}

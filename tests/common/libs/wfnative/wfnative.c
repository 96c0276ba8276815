/* wfnative.c — a native test library for test_native.c: plain C functions of every boundary
 * type (bool, int32, int64, double, Decimal and DateTime as int64, strings in, out, in-out and
 * returned), written as legacy code would be, with no knowledge of the workflow engine. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool wfn_not(bool b);
bool wfn_below(int32_t a, int32_t b);
void wfn_bump(int32_t *value);
int32_t wfn_add32(int32_t a, int32_t b);
int64_t wfn_mul64(int64_t a, int64_t b);
double wfn_half(double d);
int64_t wfn_decimal_double(int64_t units);
int64_t wfn_next_day(int64_t us);
int32_t wfn_strlen(const char *s);
void wfn_greet(const char *name, char **out);
char *wfn_repeat(const char *s, int32_t times);
int32_t wfn_status(int32_t code, char **message);
void wfn_upper(char **text);
void wfn_counts(int32_t *i32, int64_t *i64, double *d, bool *b);
int32_t wfn_mixed(bool flag, int32_t a, int64_t b, double c, const char *s, int64_t dec,
                  int64_t when);

bool wfn_not(bool b)
{
    return !b;
}

int32_t wfn_add32(int32_t a, int32_t b)
{
    return a + b;
}

int64_t wfn_mul64(int64_t a, int64_t b)
{
    return a * b;
}

double wfn_half(double d)
{
    return d / 2;
}

int64_t wfn_decimal_double(int64_t units)
{
    return units * 2;
}

int64_t wfn_next_day(int64_t us)
{
    return us + 86400LL * 1000000LL;
}

int32_t wfn_strlen(const char *s)
{
    return s ? (int32_t)strlen(s) : -1;
}

void wfn_greet(const char *name, char **out)
{
    size_t n = strlen(name ? name : "") + 8;
    *out = malloc(n);
    snprintf(*out, n, "Hello, %s", name ? name : "");
}

char *wfn_repeat(const char *s, int32_t times)
{
    size_t len = strlen(s);
    char *r = malloc(len * (size_t)(times > 0 ? times : 0) + 1);
    r[0] = '\0';
    for (int32_t i = 0; i < times; i++)
        memcpy(r + len * (size_t)i, s, len + 1);
    return r;
}

int32_t wfn_status(int32_t code, char **message)
{
    *message = malloc(32);
    snprintf(*message, 32, "code %d", (int)code);
    return code;
}

/* In-out string: frees the caller's copy and stores a new one. */
void wfn_upper(char **text)
{
    if (!*text)
        return;
    size_t n = strlen(*text);
    char *up = malloc(n + 1);
    for (size_t i = 0; i <= n; i++)
        up[i] = (char)((*text)[i] >= 'a' && (*text)[i] <= 'z' ? (*text)[i] - 32 : (*text)[i]);
    free(*text);
    *text = up;
}

void wfn_counts(int32_t *i32, int64_t *i64, double *d, bool *b)
{
    *i32 += 1;
    *i64 = 5000000000LL;
    *d = 0.25;
    *b = true;
}

/* Checks every argument arrives intact; returns the number that did. */
int32_t wfn_mixed(bool flag, int32_t a, int64_t b, double c, const char *s, int64_t dec,
                  int64_t when)
{
    return (flag == true) + (a == -7) + (b == 9000000000LL) + (c == 1.5) +
           (s && strcmp(s, "caf\xC3\xA9") == 0) + (dec == 125000) + (when == 86400000000LL);
}

bool wfn_below(int32_t a, int32_t b)
{
    return a < b;
}

void wfn_bump(int32_t *value)
{
    (*value)++;
}

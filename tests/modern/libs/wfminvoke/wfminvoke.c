/* wfminvoke.c — native test library for InvokeMethod (tests/modern/test_invoke.c): one plain C
 * function per type mapping of docs/architecture.md "The legacy model" (Decimal as int64 1/10,000,
 * DateTime as int64 us, strings in as const char *, out as char **, returned as char *, both
 * malloc'd here and freed by the runtime), out parameters, and an int32 status return. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int32_t wfmi_add_i32(int32_t a, int32_t b);
int64_t wfmi_mul_i64(int64_t a, int64_t b);
double wfmi_scale(double x, double factor);
int64_t wfmi_decimal_add(int64_t a, int64_t b);
int64_t wfmi_add_days(int64_t when_us, int32_t days);
bool wfmi_not(bool b);
char *wfmi_greet(const char *name);
int32_t wfmi_length(const char *s);
void wfmi_split(const char *s, char **head, char **tail, int32_t *total);
void wfmi_bump(int32_t *counter, double *sum, double add);
void wfmi_void_noop(void);
void wfmi_shout(char **text);
int32_t wfmi_check_positive(int32_t x);

int32_t wfmi_add_i32(int32_t a, int32_t b)
{
    return a + b;
}

int64_t wfmi_mul_i64(int64_t a, int64_t b)
{
    return a * b;
}

double wfmi_scale(double x, double factor)
{
    return x * factor;
}

/* Decimal units of 1/10,000: 1.5 + 2.25 arrives as 15000 + 22500. */
int64_t wfmi_decimal_add(int64_t a, int64_t b)
{
    return a + b;
}

int64_t wfmi_add_days(int64_t when_us, int32_t days)
{
    return when_us + (int64_t)days * 86400 * 1000000;
}

bool wfmi_not(bool b)
{
    return !b;
}

static char *dup_str(const char *s, size_t len)
{
    char *r = malloc(len + 1);
    if (r) {
        memcpy(r, s, len);
        r[len] = '\0';
    }
    return r;
}

char *wfmi_greet(const char *name)
{
    const char *who = name ? name : "nobody";
    size_t n = strlen(who);
    char *r = malloc(n + 8);
    if (!r)
        return NULL;
    memcpy(r, "Hello, ", 7);
    memcpy(r + 7, who, n + 1);
    return r;
}

/* -1 for a null string, so the test can see that null crossed as NULL. */
int32_t wfmi_length(const char *s)
{
    return s ? (int32_t)strlen(s) : -1;
}

/* Split at the first comma: head and tail are malloc'd; total is the input length. */
void wfmi_split(const char *s, char **head, char **tail, int32_t *total)
{
    const char *comma = strchr(s, ',');
    size_t n = strlen(s);
    size_t h = comma ? (size_t)(comma - s) : n;
    *head = dup_str(s, h);
    *tail = comma ? dup_str(comma + 1, n - h - 1) : NULL;
    *total = (int32_t)n;
}

/* In/out: both slots hold the In value on entry. */
void wfmi_bump(int32_t *counter, double *sum, double add)
{
    *counter += 1;
    *sum += add;
}

void wfmi_void_noop(void)
{
}

/* An int32 status: 0 when x > 0, else 40 + |x| (ErrorOnNonZero faults). */
int32_t wfmi_check_positive(int32_t x)
{
    return x > 0 ? 0 : 40 - x;
}

/* In/out string: the slot holds a malloc'd copy of the In value (or NULL); the callee may
 * replace it with another malloc'd string. */
void wfmi_shout(char **text)
{
    const char *old = *text ? *text : "";
    size_t n = strlen(old);
    char *r = malloc(n + 2);
    if (!r)
        return;
    memcpy(r, old, n);
    r[n] = '!';
    r[n + 1] = '\0';
    free(*text);
    *text = r;
}

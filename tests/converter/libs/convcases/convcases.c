/* convcases.c — native functions of the converter's golden cases (convcases.activities.xml):
 * plain C with no knowledge of either runtime, called by both. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cc_double(int32_t value, int32_t *result);
void cc_greet(const char *who, char **greeting);
int32_t cc_fail(int32_t code);
void cc_add(int32_t a, int32_t b, int32_t *total);
void cc_log(char **log, int32_t total);
void cc_inc(int32_t *count);
void cc_log_count(char **log, int32_t count);
void cc_note(char **note);
bool cc_below_limit(int32_t count, int32_t limit);
int32_t cc_notify(const char *text);
void cc_mark(const char *letter, char **log);
void cc_mark_number(const char *prefix, int32_t n, char **log);
void cc_keep(int32_t value, int32_t *result);

/* Int32 arithmetic wraps as C#'s unchecked default does (verify feeds the Int32 edges). */
static int32_t wrap(int64_t v)
{
    return (int32_t)(uint32_t)(uint64_t)v;
}

void cc_double(int32_t value, int32_t *result)
{
    *result = wrap((int64_t)value * 2);
}

void cc_greet(const char *who, char **greeting)
{
    size_t n = strlen(who ? who : "") + 8;
    *greeting = malloc(n);
    if (*greeting)
        snprintf(*greeting, n, "hello %s", who ? who : "");
}

int32_t cc_fail(int32_t code)
{
    return code;
}

void cc_add(int32_t a, int32_t b, int32_t *total)
{
    *total = wrap((int64_t)a + b);
}

void cc_log(char **log, int32_t total)
{
    const char *old = *log ? *log : "";
    size_t n = strlen(old) + 24;
    char *s = malloc(n);
    if (!s)
        return;
    snprintf(s, n, "%st=%d;", old, (int)total);
    free(*log);
    *log = s;
}

void cc_log_count(char **log, int32_t count)
{
    cc_log(log, count);
}

void cc_inc(int32_t *count)
{
    *count = wrap((int64_t)*count + 1);
}

void cc_note(char **note)
{
    *note = strdup("noted");
}

bool cc_below_limit(int32_t count, int32_t limit)
{
    return count < limit;
}

int32_t cc_notify(const char *text)
{
    return (int32_t)strlen(text ? text : "");
}

/* Append `letter` to the trace in *log (the fidelity cases compare traces with WF3's). */
void cc_mark(const char *letter, char **log)
{
    const char *old = *log ? *log : "";
    size_t n = strlen(old) + strlen(letter ? letter : "") + 1;
    char *s = malloc(n);
    if (!s)
        return;
    snprintf(s, n, "%s%s", old, letter ? letter : "");
    free(*log);
    *log = s;
}

/* Append prefix and the decimal digits of n (which iteration a compensation undoes). */
void cc_mark_number(const char *prefix, int32_t n, char **log)
{
    char letter[48];
    snprintf(letter, sizeof letter, "%s%d", prefix ? prefix : "", (int)n);
    cc_mark(letter, log);
}

/* Keep a copy of value in the activity's own property (an iteration's own state). */
void cc_keep(int32_t value, int32_t *result)
{
    *result = value;
}

/* IQuotes.RequestQuote: declared as a WCF contract's operation (a ReceiveActivity's
 * TypedOperationInfo); nothing calls it, the message arrives from a client. */
int32_t cc_request_quote(const char *parcel, int32_t weight);
int32_t cc_request_quote(const char *parcel, int32_t weight)
{
    return wrap((int64_t)strlen(parcel ? parcel : "") + weight);
}

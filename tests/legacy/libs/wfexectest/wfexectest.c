/* wfexectest.c — the native activity library behind the executor tests: plain C functions
 * with no knowledge of a workflow engine, described by wfexectest.activities.xml (custom
 * activities, the Tests.ExecFlow code-beside class, the ITestService local service). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Append `tail` to the malloc'd string *s (InOut String: the callee may replace it). */
static void append(char **s, const char *tail)
{
    size_t a = *s ? strlen(*s) : 0, b = strlen(tail);
    char *n = malloc(a + b + 1);
    if (!n)
        return;
    if (a)
        memcpy(n, *s, a);
    memcpy(n + a, tail, b + 1);
    free(*s);
    *s = n;
}

/* ---- activity types ---- */
void wx_counter(int32_t *local, int32_t *seen);
void wx_counter(int32_t *local, int32_t *seen)
{
    (*local)++;
    *seen = *local;
}

void wx_concat(const char *a, const char *b, char **result);
void wx_concat(const char *a, const char *b, char **result)
{
    size_t la = a ? strlen(a) : 0, lb = b ? strlen(b) : 0;
    char *r = malloc(la + lb + 1);
    if (!r)
        return;
    memcpy(r, a ? a : "", la);
    memcpy(r + la, b ? b : "", lb + 1);
    *result = r;
}

/* A then the decimal digits of n (compensation logs which iteration it undoes). */
void wx_concat_number(const char *a, int32_t n, char **result);
void wx_concat_number(const char *a, int32_t n, char **result)
{
    size_t la = a ? strlen(a) : 0;
    char *r = malloc(la + 12);
    if (!r)
        return;
    memcpy(r, a ? a : "", la);
    snprintf(r + la, 12, "%d", (int)n);
    *result = r;
}

int32_t wx_check(int32_t code);
int32_t wx_check(int32_t code)
{
    return code;
}

int32_t wx_add(int32_t a, int32_t b);
int32_t wx_add(int32_t a, int32_t b)
{
    return a + b;
}

char *wx_greet(const char *who);
char *wx_greet(const char *who)
{
    const char *w = who ? who : "nobody";
    char *r = malloc(strlen(w) + 8);
    if (r)
        sprintf(r, "Hello, %s", w);
    return r;
}

void wx_scale(int64_t amount, double factor, int64_t *result);
void wx_scale(int64_t amount, double factor, int64_t *result)
{
    *result = (int64_t)((double)amount * factor);
}

void wx_review(const char *reviewer, char **verdict);
void wx_review(const char *reviewer, char **verdict)
{
    const char *r = reviewer ? reviewer : "";
    *verdict = malloc(strlen(r) + 4);
    if (*verdict)
        sprintf(*verdict, "ok:%s", r);
}

/* ---- code-beside handlers and conditions ---- */
void wx_tick(int32_t *count);
void wx_tick(int32_t *count)
{
    (*count)++;
}

void wx_append_a(char **log);
void wx_append_a(char **log)
{
    append(log, "A");
}

void wx_append_b(char **log);
void wx_append_b(char **log)
{
    append(log, "B");
}

void wx_append_c(char **log);
void wx_append_c(char **log)
{
    append(log, "C");
}

void wx_append_d(char **log);
void wx_append_d(char **log)
{
    append(log, "D");
}

int32_t wx_fail(void);
int32_t wx_fail(void)
{
    return 42;
}

void wx_set_flag(bool *flag);
void wx_set_flag(bool *flag)
{
    *flag = true;
}

void wx_copy_data(const char *data, char **reviewer);
void wx_copy_data(const char *data, char **reviewer)
{
    const char *d = data ? data : "";
    *reviewer = malloc(strlen(d) + 1);
    if (*reviewer)
        strcpy(*reviewer, d);
}

void wx_log_reviewer(const char *reviewer, char **log);
void wx_log_reviewer(const char *reviewer, char **log)
{
    append(log, reviewer ? reviewer : "?");
    append(log, ";");
}

bool wx_below(int32_t count, int32_t limit);
bool wx_below(int32_t count, int32_t limit)
{
    return count < limit;
}

bool wx_is_flag(bool flag);
bool wx_is_flag(bool flag)
{
    return flag;
}

/* ---- local service ---- */
int32_t wx_notify(const char *message);
int32_t wx_notify(const char *message)
{
    return message ? (int32_t)strlen(message) : -1;
}

/* batch.c — the batch-processing sample's native library: post one record (failing on the
 * record the caller names, to show fault handling), reverse a posted record, and the loop's
 * code-beside handlers. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Returns 0 when posted, 5 when the record is the one set to fail. */
int32_t batch_post(int32_t record, int32_t fail_at, char **receipt);
int32_t batch_post(int32_t record, int32_t fail_at, char **receipt)
{
    if (record == fail_at)
        return 5;
    char buf[64];
    snprintf(buf, sizeof buf, "R-%d", (int)record);
    *receipt = malloc(strlen(buf) + 1);
    if (*receipt)
        strcpy(*receipt, buf);
    return 0;
}

void batch_reverse(const char *receipt, char **journal);
void batch_reverse(const char *receipt, char **journal)
{
    append(journal, "reversed ");
    append(journal, receipt ? receipt : "?");
    append(journal, ";");
}

void batch_next(int32_t *index);
void batch_next(int32_t *index)
{
    *index = (int32_t)((uint32_t)*index + 1u); /* wraps, as C#'s unchecked int does */
}

void batch_committed(int32_t *processed);
void batch_committed(int32_t *processed)
{
    *processed = (int32_t)((uint32_t)*processed + 1u);
}

bool batch_more(int32_t index, int32_t size);
bool batch_more(int32_t index, int32_t size)
{
    return index < size;
}

void batch_report(int32_t index, char **status);
void batch_report(int32_t index, char **status)
{
    char buf[96];
    snprintf(buf, sizeof buf, "failed at record %d, earlier records reversed", (int)index);
    *status = malloc(strlen(buf) + 1);
    if (*status)
        strcpy(*status, buf);
}

void batch_done(char **status);
void batch_done(char **status)
{
    *status = malloc(5);
    if (*status)
        strcpy(*status, "done");
}

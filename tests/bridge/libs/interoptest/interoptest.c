/* interoptest.c — native test library for the Interop activity (tests/bridge/test_interop*.c):
 * plain C functions written without any knowledge of a workflow engine, one per legacy type of
 * interoptest.activities.xml (Decimal as int64 1/10,000, DateTime as int64 us since the
 * epoch, strings out as malloc'd char *). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int32_t iot_reserve_stock(const char *sku, int32_t quantity, char **ticket);
void iot_roundtrip(bool *b, int32_t *i, int64_t *l, double *d, int64_t *m, int64_t *t, char **s);
void iot_clash(int32_t value, int32_t *value_out);
int32_t iot_check(int32_t code);
void iot_count(int32_t *count);
void iot_request_approval(int64_t amount);
void iot_on_approved(const char *approver, char **decision);
void iot_on_rejected(const char *reason, char **decision);
void iot_on_timeout(char **decision);
void iot_on_canceled(char **decision);

int32_t iot_reserve_stock(const char *sku, int32_t quantity, char **ticket)
{
    char buf[128];
    snprintf(buf, sizeof buf, "T-%s-%d", sku ? sku : "none", (int)quantity);
    *ticket = strdup(buf);
    return quantity > 10 ? 2 : 0;
}

void iot_roundtrip(bool *b, int32_t *i, int64_t *l, double *d, int64_t *m, int64_t *t, char **s)
{
    *b = !*b;
    *i += 1;
    *l *= 2;
    *d /= 2;
    *m += 12500;                      /* + 1.25 */
    *t += INT64_C(86400) * 1000000;   /* + 1 day */
    size_t len = *s ? strlen(*s) : 0;
    char *n = malloc(len + 2);
    if (!n)
        return;
    if (len)
        memcpy(n, *s, len);
    n[len] = '!';
    n[len + 1] = '\0';
    free(*s);
    *s = n;
}

void iot_clash(int32_t value, int32_t *value_out)
{
    *value_out = value * 10;
}

int32_t iot_check(int32_t code)
{
    return code;
}

void iot_count(int32_t *count)
{
    *count += 1;
}

void iot_request_approval(int64_t amount)
{
    (void)amount;
}

void iot_on_approved(const char *approver, char **decision)
{
    char buf[128];
    snprintf(buf, sizeof buf, "approved by %s", approver ? approver : "nobody");
    *decision = strdup(buf);
}

void iot_on_rejected(const char *reason, char **decision)
{
    char buf[128];
    snprintf(buf, sizeof buf, "rejected: %s", reason ? reason : "");
    *decision = strdup(buf);
}

void iot_on_timeout(char **decision)
{
    *decision = strdup("timed out");
}

void iot_on_canceled(char **decision)
{
    *decision = strdup("canceled");
}

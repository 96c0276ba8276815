/* wftltest.c — a native activity library for the type library tests: ordinary C written with
 * no knowledge of a workflow engine, covering every type at the C boundary, out strings,
 * InOut pointers, return values, status codes, a condition and a handler. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_text(const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

/* Every In type, one out string, an Int32 return. */
int32_t tl_all_types(bool b, int32_t i, int64_t l, double d, int64_t dec, int64_t dt,
                     const char *s, char **summary)
{
    char buf[256];
    snprintf(buf, sizeof buf, "b=%d i=%d l=%lld d=%.2f m=%lld t=%lld s=%s", b ? 1 : 0, (int)i,
             (long long)l, d, (long long)dec, (long long)dt, s ? s : "(null)");
    *summary = dup_text(buf);
    return i * 2;
}

/* InOut: the callee updates the caller's slots; an InOut string arrives malloc'd, so a callee
 * that replaces it frees the old one and stores a fresh malloc. */
void tl_accumulate(int32_t *total, double *scale, char **label, int32_t add)
{
    *total += add;
    *scale *= 2.0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s!", *label ? *label : "");
    free(*label);
    *label = dup_text(buf);
}

char *tl_greet(const char *name)
{
    char buf[128];
    snprintf(buf, sizeof buf, "Hello, %s", name ? name : "nobody");
    return dup_text(buf);
}

int64_t tl_next_day(int64_t when_us)
{
    return when_us + 86400LL * 1000000LL;
}

int64_t tl_half(int64_t amount_units)
{
    return amount_units / 2;
}

double tl_scale(double x, int64_t factor)
{
    return x * (double)factor;
}

bool tl_is_even(int32_t n)
{
    return n % 2 == 0;
}

/* ErrorOnNonZero: 0 is success; more than 10 items is "out of stock" (7). */
int32_t tl_reserve(const char *sku, int32_t quantity, char **ticket)
{
    char buf[64];
    snprintf(buf, sizeof buf, "T-%s-%d", sku ? sku : "?", (int)quantity);
    *ticket = dup_text(buf);
    return quantity > 10 ? 7 : 0;
}

/* Code-beside of Contoso.OrderWorkflow. */
void order_on_validate(const char *order_id, bool *is_valid)
{
    *is_valid = order_id && strncmp(order_id, "ORD-", 4) == 0;
}

bool order_is_large(int64_t amount_units)
{
    return amount_units >= 1000LL * 10000LL;
}

int32_t order_fail(void)
{
    return 3;
}

/* IApprovalService.RequestApproval */
bool approval_request(const char *approver, int32_t level)
{
    return approver && strcmp(approver, "alice") == 0 && level < 3;
}

/* Many parameters (more than the runtime keeps on its stack). */
int32_t tl_sum18(int32_t a1, int32_t a2, int32_t a3, int32_t a4, int32_t a5, int32_t a6,
                 int32_t a7, int32_t a8, int32_t a9, int32_t a10, int32_t a11, int32_t a12,
                 int32_t a13, int32_t a14, int32_t a15, int32_t a16, int32_t a17, int32_t a18)
{
    return a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 + a14 + a15 +
           a16 + a17 + a18;
}

/* wfxomltest.c — the native side of the XOML loader tests' type library (wfxomltest): plain C
 * functions with no knowledge of a workflow engine; the loader tests only need them to exist
 * and resolve, the instance tests do not call them. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void xt_reserve(const char *sku, int32_t quantity, char **ticket);
void xt_on_validate(const char *order_id, bool *is_valid);
void xt_on_step(void);
bool xt_is_large(int64_t amount);
void xt_request(const char *approver);

void xt_reserve(const char *sku, int32_t quantity, char **ticket)
{
    size_t len = strlen(sku != NULL ? sku : "") + 16;
    *ticket = malloc(len);
    if (*ticket != NULL) {
        strcpy(*ticket, sku != NULL ? sku : "");
        (*ticket)[len - 16] = quantity > 0 ? '+' : '-';
        (*ticket)[len - 15] = '\0';
    }
}

void xt_on_validate(const char *order_id, bool *is_valid)
{
    *is_valid = order_id != NULL && order_id[0] != '\0';
}

void xt_on_step(void)
{
}

bool xt_is_large(int64_t amount)
{
    return amount > 1000 * 10000LL;
}

void xt_request(const char *approver)
{
    (void)approver;
}

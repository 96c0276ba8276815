/* orders.c — the order-processing sample's native library: plain C functions a legacy order
 * system might have had (validation, stock, payment), described to the workflow runtime by
 * orders.activities.xml. Nothing here knows about workflows. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_text(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d)
        strcpy(d, s);
    return d;
}

void orders_validate(const char *order_id, int32_t quantity, bool *is_valid, char **reason);
void orders_validate(const char *order_id, int32_t quantity, bool *is_valid, char **reason)
{
    *is_valid = false;
    if (!order_id || !*order_id)
        *reason = dup_text("missing order id");
    else if (quantity <= 0)
        *reason = dup_text("quantity must be positive");
    else {
        *is_valid = true;
        *reason = dup_text("");
    }
}

/* Returns 0 on success, 2 when the warehouse cannot supply the quantity. */
int32_t orders_reserve(const char *sku, int32_t quantity, char **ticket);
int32_t orders_reserve(const char *sku, int32_t quantity, char **ticket)
{
    if (quantity > 100)
        return 2;
    char buf[128];
    snprintf(buf, sizeof buf, "RES-%s-%d", sku ? sku : "?", (int)quantity);
    *ticket = dup_text(buf);
    return 0;
}

/* amount in units of 1/10,000 (CURRENCY) */
void orders_charge(int64_t amount, const char *order_id, char **receipt);
void orders_charge(int64_t amount, const char *order_id, char **receipt)
{
    char buf[128];
    snprintf(buf, sizeof buf, "PAID-%s-%lld.%02lld", order_id ? order_id : "?",
             (long long)(amount / 10000), (long long)(amount % 10000 / 100));
    *receipt = dup_text(buf);
}

void orders_total(int32_t quantity, int64_t unit_price, int64_t *amount);
void orders_total(int32_t quantity, int64_t unit_price, int64_t *amount)
{
    *amount = (int64_t)((uint64_t)(int64_t)quantity * (uint64_t)unit_price); /* wraps */
}

void orders_flag_review(char **approval);
void orders_flag_review(char **approval)
{
    *approval = dup_text("manager-review");
}

void orders_auto_approve(char **approval);
void orders_auto_approve(char **approval)
{
    *approval = dup_text("auto");
}

void orders_mark_shipped(const char *ticket, const char *receipt, char **status);
void orders_mark_shipped(const char *ticket, const char *receipt, char **status)
{
    char buf[256];
    snprintf(buf, sizeof buf, "shipped (%s, %s)", ticket ? ticket : "?", receipt ? receipt : "?");
    *status = dup_text(buf);
}

void orders_mark_rejected(const char *reason, char **status);
void orders_mark_rejected(const char *reason, char **status)
{
    char buf[256];
    snprintf(buf, sizeof buf, "rejected: %s", reason ? reason : "?");
    *status = dup_text(buf);
}

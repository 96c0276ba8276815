/* holdorders.c — native test library for the fault tests of `wfbridge verify`: plain C written
 * as legacy libraries are, state and bugs included. Every function keeps or reads process state
 * (a static counter, a global buffer, a file descriptor it never closes) or misbehaves on some input (null, a mode, a negative
 * quantity), so only runs that each start in a fresh process agree with each other. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ho_audit(const char *note, int32_t *sequence);
void ho_price_order(const char *sku, int32_t quantity, int64_t *price);
void ho_wait_ready(int32_t mode);
void ho_check_stock(int32_t quantity);
void ho_shutdown(int32_t mode);
void ho_journal(const char *sku, char **journal);
void ho_open_log(int32_t *handle);

static int32_t audit_sequence = 1; /* the next audit number, as the audit table would give */
static char journal_buffer[256];  /* every line written so far */
static volatile int ready_flag;   /* set by a device callback that never comes */

void ho_audit(const char *note, int32_t *sequence)
{
    (void)note;
    *sequence = audit_sequence++;
}

/* The real bug: no null check before strcmp. Sanitizer builds (`make asan`) would report the
 * null argument and exit instead of crashing, and the tests want the crash. */
#if defined(__GNUC__)
__attribute__((no_sanitize("undefined")))
#endif
void ho_price_order(const char *sku, int32_t quantity, int64_t *price)
{
    int64_t unit = strcmp(sku, "GOLD") == 0 ? 250000 : 100000; /* 25.0000 or 10.0000 */
    *price = unit * quantity;
}

/* Mode 7 polls a device flag that nothing sets. */
void ho_wait_ready(int32_t mode)
{
    while (mode == 7 && !ready_flag)
        ;
}

void ho_check_stock(int32_t quantity)
{
    if (quantity < 0)
        abort(); /* the library's own assert */
}

/* Mode 3 is "fatal configuration error": the library ends the process. */
void ho_shutdown(int32_t mode)
{
    if (mode == 3)
        exit(3);
}

void ho_journal(const char *sku, char **journal)
{
    size_t used = strlen(journal_buffer);
    snprintf(journal_buffer + used, sizeof journal_buffer - used, "%s;", sku ? sku : "-");
    *journal = strdup(journal_buffer);
}

/* The log handle is the descriptor itself, never closed: its number is the lowest free one. */
void ho_open_log(int32_t *handle)
{
    *handle = open("/dev/null", O_WRONLY);
}

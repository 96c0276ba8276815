/* holdorders.c — native test library for the fault tests of `wfbridge verify`: plain C written
 * as legacy libraries are, state and bugs included. Every function keeps or reads process state
 * (a static counter, a global buffer, a file descriptor it never closes) or misbehaves on some input (null, a mode, a negative
 * quantity), so only runs that each start in a fresh process agree with each other. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ho_audit(const char *note, int32_t *sequence);
void ho_price_order(const char *sku, int32_t quantity, int64_t *price);
void ho_wait_ready(int32_t mode);
void ho_check_stock(int32_t quantity);
void ho_shutdown(int32_t mode);
void ho_journal(const char *sku, char **journal);
void ho_open_log(int32_t *handle);
void ho_cache_sku(const char *sku, int32_t *cached);
void ho_count_thread_calls(int32_t *calls);
void ho_mark_process(int32_t *found);
void ho_process_id(int32_t *pid);

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

/* A price cache on the heap, reached through a static pointer: *cached is how many SKUs it
 * held before this one was added. */
struct cache_entry {
    char sku[32];
    struct cache_entry *next;
};
static struct cache_entry *price_cache;

void ho_cache_sku(const char *sku, int32_t *cached)
{
    int32_t n = 0;
    for (struct cache_entry *e = price_cache; e; e = e->next)
        n++;
    *cached = n;
    struct cache_entry *e = calloc(1, sizeof *e);
    if (!e)
        return;
    snprintf(e->sku, sizeof e->sku, "%s", sku ? sku : "-");
    e->next = price_cache;
    price_cache = e;
}

/* The cache goes with the library when it is unloaded. */
__attribute__((destructor)) static void drop_price_cache(void)
{
    while (price_cache) {
        struct cache_entry *next = price_cache->next;
        free(price_cache);
        price_cache = next;
    }
}

/* Calls made on this thread so far, this one included (thread-local storage). */
static __thread int32_t thread_calls;

void ho_count_thread_calls(int32_t *calls)
{
    *calls = ++thread_calls;
}

static void on_usr1(int sig)
{
    (void)sig;
}

/* Process state a library may change and never put back: *found has a bit for each mark an
 * earlier call left (1 environment, 2 SIGUSR1 handler, 4 working directory, 8 umask); then
 * every mark is left again. */
void ho_mark_process(int32_t *found)
{
    struct sigaction sa;
    sigaction(SIGUSR1, NULL, &sa);
    char cwd[4096];
    mode_t old = umask(077);
    *found = (getenv("HO_MARKED") != NULL) | (sa.sa_handler == on_usr1) << 1 |
             (getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") == 0) << 2 | (old == 077) << 3;
    setenv("HO_MARKED", "yes", 1);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    if (chdir("/") != 0)
        *found |= 16;
}

/* The process the call runs in. */
void ho_process_id(int32_t *pid)
{
    *pid = (int32_t)getpid();
}

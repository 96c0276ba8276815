/* wfb_host.c — `wfbridge host [--store S] [--once] [--workers N]`: a long-running durable host.
 * It loads and runs the persisted instances that can make progress — timers due, resumptions
 * queued by `wfbridge resume`, saved at a Persist request / mid-run ("Executing") or before
 * their first run ("Created", e.g. by `wfbridge start`), and not leased by another live host —
 * until each is idle again (persisted and unloaded) or completes, then looks again. N worker
 * threads share each pass (their saves share commits); SIGTERM / SIGINT stop it after the
 * instances in hand are persisted, exit 0. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../common/wf_random.h"
#include "wfb_cli.h"
#include "wfb_durable.h"

static const char usage_text[] =
    "usage: wfbridge host [--store S] [--once] [--workers N] [--durability full|normal]\n"
    "                     [--lib-path DIR]\n\n"
    "Run the instances of the instance store (default: " WFB_DEFAULT_STORE
    " in the working\ndirectory) whose timers are due, that have queued resumptions (applied in "
    "order) or\nthat were saved while runnable, each "
    "until it is\nidle again (persisted and unloaded) or completes; instances another host "
    "holds are\nleft alone. Prints one line per instance run: \"ID STATUS\".\n\n"
    "  --once            one pass, then exit (default: keep polling, at least once a second;\n"
    "                    on PostgreSQL also woken at once when work is queued or started)\n"
    "  --workers N       instances run at once, one thread each (default: one per core)\n"
    "  --durability D    full (default) or normal\n"
    "  --lib-path DIR    where native libraries are found (default $WFBRIDGE_LIB_PATH)\n\n"
    "SIGTERM or SIGINT: finish the instances in hand (each persisted and released), exit 0.\n"
    "Exit status: 0, or 2 when the store cannot be opened or an instance failed to load.\n";

static volatile sig_atomic_t stopping; /* SIGTERM / SIGINT seen */

static void on_stop_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

typedef struct pass {
    const wfm_store *store;
    int64_t now_us, next_due_us;
    char (*ids)[33];
    size_t count, cap;
    bool oom;
} pass;

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Is `name` one of the row's bookmarks ('\n'-separated)? */
static bool waits_on(const wfm_store_row *row, const char *name)
{
    size_t len = strlen(name);
    for (const char *b = row->bookmarks; *b;) {
        size_t n = strcspn(b, "\n");
        if (n == len && memcmp(b, name, len) == 0)
            return true;
        b += n;
        b += *b == '\n';
    }
    return false;
}

static bool collect(void *ud, const wfm_store_row *row)
{
    pass *p = ud;
    /* Created: saved before its first run (a host died before it got further) */
    bool runnable = strcmp(row->status, "Executing") == 0 || strcmp(row->status, "Created") == 0;
    /* resumptions queued by `wfbridge resume` while it was locked, the first one takeable */
    if (row->next_resume && strcmp(row->status, "Idle") == 0 && waits_on(row, row->next_resume))
        runnable = true;
    if (strcmp(row->status, "Idle") == 0 && row->next_timer_us > 0) {
        if (row->next_timer_us <= p->now_us)
            runnable = true;
        else if (row->next_timer_us < p->next_due_us)
            p->next_due_us = row->next_timer_us;
    }
    /* leased by another live host: not ours to read now */
    if (!runnable || !wfm_store_row_lockable(p->store, row))
        return true;
    if (p->count == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        char(*n)[33] = wf_realloc(p->ids, cap * sizeof *n);
        if (!n) {
            p->oom = true;
            return false;
        }
        p->ids = n;
        p->cap = cap;
    }
    snprintf(p->ids[p->count++], 33, "%s", row->id);
    return true;
}

/* One pass shared by the worker threads: each takes the next id until none is left. */
typedef struct pass_work {
    wfm_host *host;
    const pass *p;
    size_t first; /* where this host starts in the list (hosts sharing a store spread out) */
    atomic_size_t next;
    atomic_int rc;
} pass_work;

static void run_one(wfm_host *host, const char *id, atomic_int *rc)
{
    wfm_dinst *d = NULL;
    wf_error e = WF_ERROR_INIT;
    wf_status st = wfm_host_load(host, id, &d, &e);
    if (st == WF_E_LOCKED || st == WF_E_STATE) /* another host has it / it finished */
        return;
    if (st == WF_OK)
        st = wfb_durable_drive(host, d, &e);
    if (st == WF_OK) {
        printf("%s %s\n", id,
               wfm_instance_state_name(wfm_instance_state_get(wfm_dinst_instance(d))));
        fflush(stdout);
    } else {
        wfb_report(&e);
        atomic_store(rc, 2);
    }
    wfm_dinst_close(d);
}

static void *pass_worker(void *arg)
{
    pass_work *w = arg;
    for (size_t i; !stopping && (i = atomic_fetch_add(&w->next, 1)) < w->p->count;)
        run_one(w->host, w->p->ids[(w->first + i) % w->p->count], &w->rc);
    return NULL;
}

/* One pass; returns 2 if an instance failed, else 0. *next_due: the earliest future timer. */
static int run_pass(wfm_host *host, unsigned workers, int64_t *next_due)
{
    pass p = {wfm_host_store(host), now_us(), INT64_MAX, NULL, 0, 0, false};
    wf_error err = WF_ERROR_INIT;
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    if (wfm_store_query_rows(wfm_host_store(host), &q, collect, &p, &err) != WF_OK || p.oom) {
        if (err.code == WF_OK)
            wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
        wf_free(p.ids);
        return wfb_report(&err);
    }
    unsigned char r[4];
    wf_random_bytes(r, sizeof r);
    size_t spread = (size_t)r[0] | (size_t)r[1] << 8 | (size_t)r[2] << 16 | (size_t)r[3] << 24;
    pass_work w = {.host = host, .p = &p, .first = p.count ? spread % p.count : 0};
    atomic_init(&w.next, 0);
    atomic_init(&w.rc, 0);
    pthread_t threads[64];
    unsigned started = 0;
    while (started + 1 < workers && started + 1 < p.count &&
           pthread_create(&threads[started], NULL, pass_worker, &w) == 0)
        started++;
    pass_worker(&w); /* this thread is a worker too */
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    *next_due = p.next_due_us;
    wf_free(p.ids);
    return atomic_load(&w.rc);
}

int wfb_cmd_host(int argc, char **argv)
{
    const char *store_path = NULL, *lib_path = NULL;
    bool once = false;
    int durability = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned workers = cores > 0 && cores < 64 ? (unsigned)cores : 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strcmp(a, "--once") == 0)
            once = true;
        else if (strcmp(a, "--store") == 0 && has_value)
            store_path = argv[++i];
        else if (strcmp(a, "--lib-path") == 0 && has_value)
            lib_path = argv[++i];
        else if (strcmp(a, "--workers") == 0 && has_value) {
            char *end = NULL;
            long n = strtol(argv[++i], &end, 10);
            if (!*argv[i] || *end || n < 1 || n > 64)
                return wfb_usage_error("host", "--workers needs a number from 1 to 64, not '%s'",
                                       argv[i]);
            workers = (unsigned)n;
        }
        else if (strcmp(a, "--durability") == 0 && has_value) {
            if (wfb_parse_durability("host", argv[++i], &durability))
                return 2;
        } else
            return wfb_usage_error("host", "unknown or incomplete argument '%s'", a);
    }
    wf_error err = WF_ERROR_INIT;
    wf_libpath *libpath = NULL;
    wfm_runtime *rt = NULL;
    wfm_store *store = NULL;
    wfm_host *host = NULL;
    int rc = 2;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    wfb_durable_cfg cfg = {wfb_store_name(store_path), true, durability, NULL, 0};
    if (wfb_libpath(lib_path, &libpath, &err) == WF_OK &&
        (ro.libpath = libpath, wfm_runtime_create(&ro, &rt, &err)) == WF_OK &&
        wfb_durable_open(&cfg, rt, &store, &host, &err) == WF_OK) {
        struct sigaction sa = {.sa_handler = on_stop_signal}; /* no SA_RESTART: waits end */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        for (;;) {
            int64_t next_due = INT64_MAX;
            rc = run_pass(host, workers, &next_due);
            if (once || stopping)
                break;
            int64_t wait = next_due == INT64_MAX ? 1000000 : next_due - now_us();
            if (wait > 1000000)
                wait = 1000000;
            /* woken early on PostgreSQL when another process announces work */
            if (wait > 0 && wfm_store_wait(store, (wait + 999) / 1000, NULL, &err) != WF_OK) {
                rc = wfb_report(&err);
                break;
            }
            if (stopping)
                break;
        }
    } else {
        rc = wfb_report(&err);
    }
    wfm_host_destroy(host);
    wfm_store_close(store);
    wfm_runtime_destroy(rt);
    wf_libpath_destroy(libpath);
    return rc;
}

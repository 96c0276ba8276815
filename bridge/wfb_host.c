/* wfb_host.c — `wfbridge host [--store S] [--once] [--workers N]`: a long-running durable host.
 * It loads and runs the persisted instances that can make progress — timers due, resumptions
 * queued by `wfbridge resume`, saved at a Persist request / mid-run ("Executing") or before
 * their first run ("Created", e.g. by `wfbridge start`), and not leased by another live host —
 * until each is idle again (persisted and unloaded) or completes, then looks again. The
 * instances run on the runtime's N workers (wfm_host_run_pooled): saves go to the store's
 * commit thread and share its commits, and no worker waits for the store. The main thread
 * loads the instances, keeps up to 64 per worker in flight and prints what ended. SIGTERM /
 * SIGINT: the instances in hand stop at their next persist point (saved, released), exit 0. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../common/wf_random.h"
#include "wfb_cli.h"
#include "wfb_durable.h"
#include "wfb_interop.h"

static const char usage_text[] =
    "usage: wfbridge host [--store S] [--once] [--workers N] [--durability full|normal]\n"
    "                     [--lib-path DIR] [--json]\n\n"
    "Run the instances of the instance store (default: $WFBRIDGE_STORE, else " WFB_DEFAULT_STORE
    "\nin the working directory) whose timers are due, that have queued resumptions (applied\n"
    "in order) or that were saved while runnable, each until it is idle again (persisted and\n"
    "unloaded) or completes; instances another host holds are left alone. Prints one line\n"
    "per instance run: \"ID STATUS\".\n\n"
    "  --once            one pass, then exit (default: keep polling, at least once a second;\n"
    "                    on PostgreSQL also woken at once when work is queued or started)\n"
    "  --workers N       worker threads running the instances (default: one per core)\n"
    "  --durability D    full (default) or normal\n"
    "  --lib-path DIR    where native libraries are found (default $WFBRIDGE_LIB_PATH)\n"
    "  --json            print each instance run as the result object of 'wfbridge resume\n"
    "                    --json' (one JSON object per line) instead of \"ID STATUS\"\n\n"
    "SIGTERM or SIGINT: the instances in hand stop at their next persist point or idle\n"
    "(persisted and released), then exit 0.\n"
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

/* A pool run that ended, handed by the worker or commit thread that ended it to the main
 * thread, which reports it and closes the instance (wfm_host_done_fn must not). */
typedef struct finished {
    struct feeder *feeder;
    wfm_dinst *d;
    wf_status status;
    wf_error err;
    struct finished *next;
} finished;

/* The main thread keeps up to `max_in_flight` instances on the pool. */
typedef struct feeder {
    wfm_host *host;
    bool json;
    size_t in_flight, max_in_flight;
    bool ending; /* wfm_host_end_runs called */
    int rc;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    finished *head, *tail; /* ended, not yet reported */
} feeder;

static void on_done(void *ud, wfm_dinst *d, wf_status status, const wf_error *err)
{
    finished *f = ud;
    feeder *fd = f->feeder;
    f->d = d;
    f->status = status;
    if (status != WF_OK)
        f->err = *err;
    pthread_mutex_lock(&fd->lock);
    if (fd->tail)
        fd->tail->next = f;
    else
        fd->head = f;
    fd->tail = f;
    pthread_cond_signal(&fd->cv);
    pthread_mutex_unlock(&fd->lock);
}

static void report(feeder *fd, finished *f)
{
    if (f->status == WF_OK) {
        wfm_instance *inst = wfm_dinst_instance(f->d);
        if (fd->json)
            wfb_durable_finish(f->d, true);
        else
            printf("%s %s\n", wfm_dinst_id(f->d),
                   wfm_instance_state_name(wfm_instance_state_get(inst)));
        if (fflush(stdout) != 0)
            fd->rc = 2; /* stdout is gone: wfb_close_stdout reports it */
    } else {
        wfb_report(&f->err);
        fd->rc = 2;
    }
    wfm_dinst_close(f->d);
    wf_free(f);
}

/* Report what ended; with `block`, first wait (a little: signals are checked between waits)
 * until something did. */
static void drain(feeder *fd, bool block)
{
    pthread_mutex_lock(&fd->lock);
    if (block && !fd->head) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&fd->cv, &fd->lock, &ts);
    }
    finished *list = fd->head;
    fd->head = fd->tail = NULL;
    pthread_mutex_unlock(&fd->lock);
    for (finished *f = list, *next; f; f = next) {
        next = f->next;
        fd->in_flight--;
        report(fd, f);
    }
    if (stopping && !fd->ending) { /* the runs in hand stop at their next persist point */
        fd->ending = true;
        wfm_host_end_runs(fd->host);
    }
}

/* Load instance `id` and start it on the pool. */
static void feed(feeder *fd, const char *id)
{
    wfm_dinst *d = NULL;
    wf_error e = WF_ERROR_INIT;
    finished *f = wf_calloc(1, sizeof *f);
    wf_status st = f ? wfm_host_load(fd->host, id, &d, &e)
                     : wf_error_set(&e, WF_E_NOMEM, NULL, "out of memory");
    if (st == WF_E_LOCKED || st == WF_E_STATE) { /* another host has it / it finished */
        wf_free(f);
        return;
    }
    if (st == WF_OK) {
        f->feeder = fd;
        f->err = (wf_error)WF_ERROR_INIT;
        st = wfm_host_run_pooled(fd->host, d, on_done, f, &e);
    }
    if (st == WF_OK) {
        fd->in_flight++;
        return;
    }
    wfb_report(&e);
    fd->rc = 2;
    wfm_dinst_close(d);
    wf_free(f);
}

/* One pass; returns 2 if an instance failed, else 0. *next_due: the earliest future timer. */
static int run_pass(feeder *fd, int64_t *next_due)
{
    wfm_store *store = wfm_host_store(fd->host);
    pass p = {store, wfb_now_us(), INT64_MAX, NULL, 0, 0, false};
    wf_error err = WF_ERROR_INIT;
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    if (wfm_store_query_rows(store, &q, collect, &p, &err) != WF_OK || p.oom) {
        if (err.code == WF_OK)
            wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
        wf_free(p.ids);
        return wfb_report(&err);
    }
    /* hosts sharing a store start at different places in the list */
    unsigned char r[4];
    wf_random_bytes(r, sizeof r);
    size_t spread = (size_t)r[0] | (size_t)r[1] << 8 | (size_t)r[2] << 16 | (size_t)r[3] << 24;
    size_t first = p.count ? spread % p.count : 0;
    fd->rc = 0;
    for (size_t i = 0; i < p.count && !stopping && !ferror(stdout); i++) {
        while (fd->in_flight >= fd->max_in_flight && !stopping)
            drain(fd, true);
        if (!stopping)
            feed(fd, p.ids[(first + i) % p.count]);
        drain(fd, false);
    }
    while (fd->in_flight)
        drain(fd, true);
    *next_due = p.next_due_us;
    wf_free(p.ids);
    return fd->rc;
}

static const struct option options[] = {
    {"store", required_argument, NULL, 's'},      {"once", no_argument, NULL, 'o'},
    {"durability", required_argument, NULL, 'd'}, {"lib-path", required_argument, NULL, 'L'},
    {"json", no_argument, NULL, 'j'},             {"workers", required_argument, NULL, 'w'},
    {"help", no_argument, NULL, 'h'},             {NULL, 0, NULL, 0},
};

int wfb_cmd_host(int argc, char **argv)
{
    wfb_verb_begin("host");
    const char *store_path = NULL, *lib_path = NULL;
    bool once = false, json = false;
    int durability = 0, c;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned workers = cores > 0 && cores < 64 ? (unsigned)cores : 1;
    unsigned long long n;
    while ((c = wfb_getopt(argc, argv, options)) != -1) {
        int bad = 0;
        switch (c) {
        case 'h':
            return wfb_help(usage_text);
        case 's':
            store_path = optarg;
            break;
        case 'o':
            once = true;
            break;
        case 'j':
            json = true;
            break;
        case 'd':
            bad = wfb_parse_durability(optarg, &durability);
            break;
        case 'L':
            lib_path = optarg;
            break;
        case 'w':
            bad = wfb_parse_count("--workers", optarg, 1, 64, &n);
            workers = (unsigned)n;
            break;
        default:
            return 2;
        }
        if (bad)
            return bad;
    }
    if (wfb_operand(argc, argv, NULL, NULL))
        return 2;
    wf_error err = WF_ERROR_INIT;
    wf_libpath *libpath = NULL;
    wfm_runtime *rt = NULL;
    wfm_store *store = NULL;
    wfm_host *host = NULL;
    int rc = 2;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = workers;
    wfb_durable_cfg cfg = {wfb_store_name(store_path), true, durability, NULL, 0};
    if (wfb_libpath(lib_path, &libpath, &err) == WF_OK &&
        (ro.libpath = libpath, wfm_runtime_create(&ro, &rt, &err)) == WF_OK &&
        wfb_interop_register(wfm_runtime_catalogue(rt), &err) == WF_OK &&
        wfb_durable_open(&cfg, rt, &store, &host, &err) == WF_OK) {
        struct sigaction sa = {.sa_handler = on_stop_signal}; /* no SA_RESTART: waits end */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        feeder fd = {.host = host, .json = json, .max_in_flight = (size_t)workers * 64};
        pthread_mutex_init(&fd.lock, NULL);
        pthread_cond_init(&fd.cv, NULL);
        for (;;) {
            int64_t next_due = INT64_MAX;
            rc = run_pass(&fd, &next_due);
            if (once || stopping || ferror(stdout))
                break;
            int64_t wait = next_due == INT64_MAX ? 1000000 : next_due - wfb_now_us();
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
        pthread_mutex_destroy(&fd.lock);
        pthread_cond_destroy(&fd.cv);
    } else {
        rc = wfb_report(&err);
    }
    wfm_host_destroy(host);
    wfm_store_close(store);
    wfm_runtime_destroy(rt);
    wf_libpath_destroy(libpath);
    return rc;
}

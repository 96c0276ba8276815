/* crash_host.c — the host process tests/modern/test_crash.c kills with SIGKILL. `init` creates
 * N instances of tests/modern/data/durable/crash.xaml and runs each to its first idle (the
 * "go" bookmark, persisted and unloaded); `work` loads every unfinished instance of the store
 * and runs it on T threads (saves grouped by group commit) until all are Closed. After each
 * committed save it appends "P TAG STEP STATUS" to $WFD_LOG (one O_APPEND write), beside the
 * native library's "S TAG STEP" lines, so the harness can check what ran after what.
 * usage: crash_host STORE XAML LIBDIR init N PREFIX | work THREADS  [normal|full] */
#include <fcntl.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../bridge/wfb_interop.h" /* crash_interop.xaml hosts legacy activities */
#include "../../common/wf_mem.h"
#include "../../modern/wfm_durable.h"

/* The owner id: the same after each restart, so a restarted host takes its leases back;
 * $CRASH_OWNER overrides it (two hosts with different owners share one store).
 * CRASH_OWNER=default uses the store's default owner id (host:pid:random, new at each
 * restart): the host is then alone on the store with dead predecessors, whose leases the
 * store must let it take over at once, so a locked instance is an error. */
#define HOST_OWNER "crash-host"

static const char *const promote[] = {"Tag", "Step"};

typedef struct app {
    wf_libpath *libpath;
    wfm_runtime *rt;
    wfm_store *store;
    wfm_host *host;
    wfm_definition *def;
    unsigned threads;
    bool alone; /* CRASH_OWNER=default */
} app;

static int fail(const char *what, const wf_error *err)
{
    fprintf(stderr, "crash_host: %s: %s\n", what, err ? err->message : "failed");
    return 3;
}

static void log_line(const char *text)
{
    const char *path = getenv("WFD_LOG");
    if (!path || !*path)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, text, strlen(text));
    (void)w;
    close(fd);
}

static void on_persist(void *ud, const wfm_store_save_rec *rec)
{
    (void)ud;
    const char *tag = "-", *step = "-";
    for (size_t i = 0; i < rec->prop_count; i++) {
        if (strcmp(rec->prop_names[i], "Tag") == 0)
            tag = rec->prop_values[i];
        else if (strcmp(rec->prop_names[i], "Step") == 0)
            step = rec->prop_values[i];
    }
    char line[256];
    snprintf(line, sizeof line, "P %s %s %s\n", tag, step, rec->status);
    log_line(line);
}

static int app_open(app *a, const char *store_path, const char *xaml, const char *libdir,
                    wfm_durability durability)
{
    wf_error err = WF_ERROR_INIT;
    if (wf_libpath_create(libdir, &a->libpath, &err) != WF_OK)
        return fail("libpath", &err);
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.libpath = a->libpath;
    ro.worker_count = 1;
    if (wfm_runtime_create(&ro, &a->rt, &err) != WF_OK)
        return fail("runtime", &err);
    if (wfb_interop_register(wfm_runtime_catalogue(a->rt), &err) != WF_OK)
        return fail("Interop", &err);
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = store_path;
    so.owner = getenv("CRASH_OWNER") && *getenv("CRASH_OWNER") ? getenv("CRASH_OWNER") : HOST_OWNER;
    a->alone = strcmp(so.owner, "default") == 0;
    if (a->alone)
        so.owner = NULL;
    so.durability = durability;
    so.group_commit = true;
    if (wfm_store_open(&so, &a->store, &err) != WF_OK)
        return fail("store", &err);
    wfm_host_opts ho = WFM_HOST_OPTS_INIT;
    ho.promote = promote;
    ho.promote_count = 2;
    ho.on_persist = on_persist;
    if (wfm_host_create(a->rt, a->store, &ho, &a->host, &err) != WF_OK)
        return fail("host", &err);
    if (wfm_runtime_load(a->rt, xaml, &a->def, NULL, &err) != WF_OK)
        return fail("load", &err);
    return 0;
}

static void app_close(app *a)
{
    wfm_definition_release(a->def);
    wfm_host_destroy(a->host);
    wfm_store_close(a->store);
    wfm_runtime_destroy(a->rt);
    wf_libpath_destroy(a->libpath);
}

static int init_instances(app *a, int n, const char *prefix)
{
    for (int i = 0; i < n; i++) {
        wf_error err = WF_ERROR_INIT;
        wfm_dinst *d = NULL;
        char tag[64];
        snprintf(tag, sizeof tag, "%s-%02d", prefix, i);
        wf_value v;
        if (wf_value_cstring(tag, &v) != WF_OK)
            return fail("nomem", NULL);
        wf_status st = wfm_host_new(a->host, a->def, &d, &err);
        if (st == WF_OK)
            st = wfm_instance_set_input(wfm_dinst_instance(d), "Tag", &v, &err);
        if (st == WF_OK)
            st = wfm_host_run(a->host, d, &err);
        if (st == WF_OK && wfm_dinst_loaded(d))
            st = wf_error_set(&err, WF_E_STATE, NULL, "not unloaded at the 'go' bookmark");
        wf_value_release(&v);
        wfm_dinst_close(d);
        if (st != WF_OK)
            return fail("init", &err);
    }
    return 0;
}

/* ---- work ---------------------------------------------------------------------------------- */
typedef struct item {
    char id[33];
    char status[16];
    bool go;          /* waiting on "go" */
    int64_t timer_us; /* 0: none */
} item;

typedef struct scan {
    item *items;
    size_t count, cap;
} scan;

static bool scan_row(void *ud, const wfm_store_row *row)
{
    scan *s = ud;
    if (strcmp(row->status, "Closed") == 0)
        return true;
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        item *n = realloc(s->items, cap * sizeof *n);
        if (!n)
            return false;
        s->items = n;
        s->cap = cap;
    }
    item *it = &s->items[s->count++];
    snprintf(it->id, sizeof it->id, "%s", row->id);
    snprintf(it->status, sizeof it->status, "%s", row->status);
    it->go = strcmp(row->bookmarks, "go") == 0;
    it->timer_us = row->next_timer_us;
    return true;
}

typedef struct worker {
    app *a;
    unsigned index;
    int rc;
} worker;

/* Run one instance to its next unload or completion. Another host holding it, or having
 * completed it or resumed its "go" since the scan, is not an error. */
static int run_one(app *a, const item *it)
{
    wf_error err = WF_ERROR_INIT;
    wfm_dinst *d = NULL;
    wf_status st = wfm_host_load(a->host, it->id, &d, &err);
    if ((st == WF_E_LOCKED && !a->alone) || st == WF_E_STATE)
        return 0;
    if (st == WF_OK && it->go) {
        wf_value v;
        if (wf_value_cstring("go", &v) != WF_OK) {
            st = wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
        } else {
            st = wfm_host_resume(a->host, d, "go", &v, &err);
            if (st == WF_E_NOTFOUND) {
                wf_error_clear(&err);
                st = WF_OK;
            }
        }
        wf_value_release(&v);
    }
    while (st == WF_OK && wfm_dinst_loaded(d)) {
        st = wfm_host_run(a->host, d, &err);
        if (st == WF_OK && wfm_dinst_loaded(d)) { /* only a timer keeps it here */
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
    }
    wfm_dinst_close(d);
    return st == WF_OK ? 0 : fail(it->id, &err);
}

static void *work_main(void *arg)
{
    worker *w = arg;
    app *a = w->a;
    for (;;) {
        scan s = {0};
        wf_error err = WF_ERROR_INIT;
        wfm_store_query q = WFM_STORE_QUERY_INIT;
        if (wfm_store_query_rows(a->store, &q, scan_row, &s, &err) != WF_OK) {
            w->rc = fail("query", &err);
            free(s.items);
            return NULL;
        }
        size_t mine = 0, ran = 0;
        int64_t now = wfm_host_now_us(a->host);
        for (size_t i = 0; i < s.count && w->rc == 0; i++) {
            /* a stable partition: one thread per instance, whatever the scan returns */
            if (strtoul((char[]){s.items[i].id[0], s.items[i].id[1], 0}, NULL, 16) % a->threads !=
                w->index)
                continue;
            mine++;
            const item *it = &s.items[i];
            bool runnable = it->go || strcmp(it->status, "Executing") == 0 ||
                            (it->timer_us > 0 && it->timer_us <= now);
            if (!runnable)
                continue;
            w->rc = run_one(a, it);
            ran++;
        }
        free(s.items);
        if (w->rc || !mine)
            return NULL;
        if (!ran) {
            struct timespec ts = {0, 500000};
            nanosleep(&ts, NULL);
        }
    }
}

static int work(app *a)
{
    worker ws[16];
    pthread_t th[16];
    for (unsigned i = 0; i < a->threads; i++) {
        ws[i] = (worker){a, i, 0};
        if (pthread_create(&th[i], NULL, work_main, &ws[i]) != 0)
            return fail("thread", NULL);
    }
    int rc = 0;
    for (unsigned i = 0; i < a->threads; i++) {
        pthread_join(th[i], NULL);
        if (ws[i].rc)
            rc = ws[i].rc;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: crash_host STORE XAML LIBDIR init N PREFIX | work THREADS"
                        " [normal|full]\n");
        return 2;
    }
    bool init = strcmp(argv[4], "init") == 0;
    int argi = init ? 7 : 6;
    wfm_durability dur = WFM_DURABILITY_FULL;
    if (argc > argi && strcmp(argv[argi], "normal") == 0)
        dur = WFM_DURABILITY_NORMAL;
    app a = {0};
    int rc = app_open(&a, argv[1], argv[2], argv[3], dur);
    if (rc == 0 && init) {
        rc = argc > 6 ? init_instances(&a, atoi(argv[5]), argv[6]) : 2;
    } else if (rc == 0) {
        int t = atoi(argv[5]);
        a.threads = t < 1 ? 1 : t > 16 ? 16 : (unsigned)t;
        rc = work(&a);
    }
    app_close(&a);
    return rc;
}

/* wfb_host.c — `wfbridge host [--store S] [--once] [--workers N]`: a long-running durable host.
 * It claims and runs the persisted instances that can make progress — timers due, resumptions
 * queued by `wfbridge resume`, saved at a Persist request / mid-run ("Executing") or before
 * their first run ("Created", e.g. by `wfbridge start`), and not leased by another live host —
 * until each is idle again (persisted and unloaded) or completes, and keeps looking. The
 * instances run on the runtime's N workers (wfm_host_run_pooled): saves go to the store's
 * commit thread and share its commits, and no worker waits for the store. The main thread
 * claims the instances, keeps up to 256 per worker in flight and prints what ended. SIGTERM /
 * SIGINT: the instances in hand stop at their next persist point (saved, released), exit 0. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <jansson.h> /* the result line of an instance run alone */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <stdint.h>
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
    "usage: wfbridge host [--store S] [--once] [--workers N] [--poll MS]\n"
    "                     [--durability full|normal] [--lib-path DIR] [--json]\n"
    "                     [--max-attempts N] [--isolate]\n\n"
    "Run the instances of the instance store (default: $WFBRIDGE_STORE, else " WFB_DEFAULT_STORE
    "\nin the working directory) whose timers are due, that have queued resumptions (applied\n"
    "in order) or that were saved while runnable, each until it is idle again (persisted and\n"
    "unloaded) or completes; instances another host holds are left alone. Prints one line\n"
    "per instance run: \"ID STATUS\", and when it ends (also on SIGTERM) a summary line on\n"
    "stderr: \"wfbridge host: ran N (closed N, ...), failed N, suspended N\".\n\n"
    "  --once            run what there is now, then exit (default: run until stopped,\n"
    "                    looking for new work every --poll period, when a timer falls due\n"
    "                    and, on PostgreSQL, at once when work is queued or started)\n"
    "  --poll MS         how often to look for new work, 1 to 3600000 ms (default 1000)\n"
    "  --workers N       worker threads running the instances (default: one per core)\n"
    "  --durability D    full (default) or normal\n"
    "  --lib-path DIR    where native libraries are found (default $WFBRIDGE_LIB_PATH)\n"
    "  --max-attempts N  an instance whose last N runs never ended (the process running\n"
    "                    it died each time, e.g. a crash in native code) runs alone in a\n"
    "                    child process; if that dies too it is quarantined: saved\n"
    "                    Suspended with the reason, no host runs it again, 'wfbridge\n"
    "                    resume ID' takes it up by hand; 1 to 1000 (default 3).\n"
    "                    A row without a saved state (left by an older wfbridge) is\n"
    "                    suspended too\n"
    "  --isolate         run every instance in a child process of its own ('wfbridge\n"
    "                    resume ID'), one at a time: native code of untrusted definitions\n"
    "                    that crashes takes down only its own run (reported as failed,\n"
    "                    counted towards --max-attempts); much slower\n"
    "  --json            print each instance run as the result object of 'wfbridge resume\n"
    "                    --json' (one JSON object per line) instead of \"ID STATUS\", and\n"
    "                    last, when the host ends, {\"host\": {\"ran\": N, \"closed\": N,\n"
    "                    \"idle\": N, \"faulted\": N, \"canceled\": N, \"terminated\": N,\n"
    "                    \"executing\": N, \"failed\": N, \"suspended\": N}} (also when\n"
    "                    nothing ran); a quarantined instance prints {\"status\":\n"
    "                    \"Suspended\", \"id\": ..., \"error\": {\"type\": \"Quarantined\", ...}};\n"
    "                    WriteLine output then goes to stderr\n\n"
    "SIGTERM or SIGINT: the instances in hand stop at their next persist point or idle\n"
    "(persisted and released), then exit 0.\n"
    "Exit status: 0, or 2 when the store cannot be opened or an instance failed to load.\n";

static volatile sig_atomic_t stopping; /* SIGTERM / SIGINT seen */
static wfm_store *volatile wake_store;  /* the open store, whose wait a stop ends */

static void on_stop_signal(int sig)
{
    (void)sig;
    stopping = 1;
    wfm_store_wake(wake_store); /* a stop between the check and the wait is not missed */
}

/* A row the slow path found runnable. */
typedef struct found {
    char id[33];
    int64_t attempts; /* before this host locks it */
    bool has_state;
} found;

typedef struct pass {
    const wfm_store *store;
    wfm_host *host;
    int64_t now_us, next_due_us;
    found *ids;
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
    /* leased by another live host: not ours to read now; running here: not again */
    if (!runnable || !wfm_store_row_lockable(p->store, row) || wfm_host_has(p->host, row->id))
        return true;
    if (p->count == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        found *n = wf_realloc(p->ids, cap * sizeof *n);
        if (!n) {
            p->oom = true;
            return false;
        }
        p->ids = n;
        p->cap = cap;
    }
    found *f = &p->ids[p->count++];
    snprintf(f->id, sizeof f->id, "%s", row->id);
    f->attempts = row->attempts;
    f->has_state = row->has_state;
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

/* The statuses a run can be saved with (wfm_dinst_status), counted for the --json summary
 * under their lower-case names; "Executing": stopped at a persist point by a stop signal. */
static const char *const saved_statuses[] = {"Closed",   "Idle",       "Faulted",
                                             "Canceled", "Terminated", "Executing"};
enum { SAVED_STATUS_COUNT = sizeof saved_statuses / sizeof saved_statuses[0] };

/* The main thread keeps up to `max_in_flight` instances on the pool. */
typedef struct feeder {
    wfm_host *host;
    bool json;
    size_t in_flight, max_in_flight;
    int64_t max_attempts;                              /* --max-attempts */
    bool isolate;                                      /* --isolate */
    const char *store_name, *lib_path;                 /* for an instance run alone */
    int durability;
    size_t ran, failed, by_status[SAVED_STATUS_COUNT]; /* reported so far */
    size_t suspended;                                  /* quarantined by this host */
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
        const char *status = wfm_dinst_status(f->d);
        fd->ran++;
        for (size_t i = 0; i < SAVED_STATUS_COUNT; i++)
            if (strcmp(saved_statuses[i], status) == 0)
                fd->by_status[i]++;
        if (fd->json)
            wfb_durable_finish(f->d, true);
        else
            printf("%s %s\n", wfm_dinst_id(f->d), status);
        if (fflush(stdout) != 0)
            fd->rc = 2; /* stdout is gone: wfb_close_stdout reports it */
    } else {
        wfb_report(&f->err);
        fd->failed++;
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
        assert(fd->in_flight > 0); /* every run that ends was started by start_run */
        fd->in_flight--;
        report(fd, f);
    }
    if (stopping && !fd->ending) { /* the runs in hand stop at their next persist point */
        fd->ending = true;
        wfm_host_end_runs(fd->host);
    }
}

/* Start a loaded (or adopted) instance on the pool; st: how loading it went. */
static void start_run(feeder *fd, wfm_dinst *d, wf_status st, wf_error *e)
{
    if (st == WF_E_LOCKED || st == WF_E_STATE) /* another host / this one has it, or done */
        return;
    finished *f = st == WF_OK ? wf_calloc(1, sizeof *f) : NULL;
    if (st == WF_OK && !f)
        st = wf_error_set(e, WF_E_NOMEM, NULL, "out of memory");
    if (st == WF_OK) {
        *f = (finished){.feeder = fd, .err = WF_ERROR_INIT};
        st = wfm_host_run_pooled(fd->host, d, on_done, f, e);
    }
    if (st == WF_OK) {
        fd->in_flight++;
        return;
    }
    wfb_report(e);
    fd->failed++;
    fd->rc = 2;
    wfm_dinst_close(d);
    wf_free(f);
}

/* --json: the host's result object, the last line of stdout after the instances' own:
 * {"host": {"ran": N, "closed": N, "idle": N, ..., "failed": N}} (docs/formats.md "Output
 * contracts"), also when nothing was runnable. */
static void print_summary(const feeder *fd)
{
    json_t *counts = json_pack("{s:I}", "ran", (json_int_t)fd->ran);
    bool ok = counts != NULL;
    for (size_t i = 0; ok && i < SAVED_STATUS_COUNT; i++) {
        char key[16];
        size_t n = 0;
        for (const char *c = saved_statuses[i]; *c && n + 1 < sizeof key; c++)
            key[n++] = (char)tolower((unsigned char)*c);
        key[n] = '\0';
        ok = wf_jsonw_set(counts, key, json_integer((json_int_t)fd->by_status[i]));
    }
    ok = ok && wf_jsonw_set(counts, "failed", json_integer((json_int_t)fd->failed)) &&
         wf_jsonw_set(counts, "suspended", json_integer((json_int_t)fd->suspended));
    if (!ok) {
        json_decref(counts);
        counts = NULL;
    }
    wfb_print_json(counts ? json_pack("{s:o}", "host", counts) : NULL);
}

/* ---- quarantine ----------------------------------------------------------------------------
 * A run whose process dies (a crash in native code, SIGKILL) leaves the instance's lease and
 * its `attempts` count up (wfm_store_lock / wfm_store_claim add one, a save that ends the run
 * clears it). An instance taken for the (N+1)th time after N such runs, or a row with no
 * saved state (a creator of an older wfbridge died before saving it), cannot be run safely:
 * it is run alone in a child process or saved Suspended with the reason, so that every other
 * instance makes progress. */

enum verdict {
    RUN_HERE,     /* on the pool, as usual */
    RUN_ISOLATED, /* --isolate: in a child process of its own; its death is counted only */
    RUN_ALONE,    /* its last runs never ended: run it alone, in a child process */
    SUSPEND_NOW,  /* it cannot run at all */
};

/* What to do with instance `id`; attempts: its count with this host's claim or lock
 * included. A process that died took every instance it held down with it, not only the one
 * that killed it: so an instance over the limit is first run alone in a child process
 * (run_alone), and only one that kills that child too is quarantined. */
static enum verdict judge(const feeder *fd, int64_t attempts, bool has_state, char *why,
                          size_t len)
{
    if (!has_state) {
        snprintf(why, len,
                 "it has no saved state: the process that created it stopped before saving "
                 "it, so it cannot run (start a new instance instead)");
        return SUSPEND_NOW;
    }
    if (attempts > fd->max_attempts)
        return RUN_ALONE;
    return fd->isolate ? RUN_ISOLATED : RUN_HERE;
}

/* Suspend instance `id` (this host holds its lease) and report it: "ID Suspended" or the
 * result object, and a warning with the reason on stderr. */
static void suspend(feeder *fd, const char *id, const char *why)
{
    wf_error e = WF_ERROR_INIT;
    if (wfm_store_suspend(wfm_host_store(fd->host), id, why, &e) != WF_OK) {
        wfb_report(&e);
        fd->failed++;
        fd->rc = 2;
        return;
    }
    fd->suspended++;
    wfb_warning("instance %s suspended: %s", id, why);
    if (fd->json) {
        wfb_result r = {.status = "Suspended", .instance_id = id, .error_type = "Quarantined",
                        .error_message = why};
        wfb_print_result(stdout, &r);
    } else {
        printf("%s Suspended\n", id);
    }
    if (fflush(stdout) != 0)
        fd->rc = 2;
}

/* Start `wfbridge resume --store S ID --json` (this program) with its stdout on *out_fd. */
static pid_t spawn_resume(const feeder *fd, const char *id, int *out_fd)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    int pipe_fds[2];
    if (n <= 0 || pipe(pipe_fds) != 0)
        return -1;
    self[n] = '\0';
    const char *argv[12] = {self, "resume", "--store", fd->store_name, id, "--json",
                            "--durability", fd->durability ? "normal" : "full"};
    size_t argc = 8;
    if (fd->lib_path) {
        argv[argc++] = "--lib-path";
        argv[argc++] = fd->lib_path;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, pipe_fds[0]);
    posix_spawn_file_actions_addclose(&fa, pipe_fds[1]);
    extern char **environ;
    pid_t pid = -1;
    if (posix_spawn(&pid, self, &fa, NULL, (char *const *)argv, environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(pipe_fds[1]);
    if (pid < 0)
        close(pipe_fds[0]);
    *out_fd = pipe_fds[0];
    return pid;
}

/* The last line of `text` (its result object), in place. */
static const char *last_line(char *text)
{
    size_t len = strlen(text);
    while (len && text[len - 1] == '\n')
        text[--len] = '\0';
    const char *nl = strrchr(text, '\n');
    return nl ? nl + 1 : text;
}

/* The child's result line ({"status": ...}): count it and print it as this host prints a run. */
static void report_alone(feeder *fd, const char *id, const char *line)
{
    json_t *obj = json_loads(line, 0, NULL);
    const char *status = json_string_value(json_object_get(obj, "status"));
    if (!status) {
        wfb_warning("instance %s: no result from the process that ran it alone", id);
        fd->failed++;
        fd->rc = 2;
    } else {
        fd->ran++;
        for (size_t i = 0; i < SAVED_STATUS_COUNT; i++)
            if (strcmp(saved_statuses[i], status) == 0)
                fd->by_status[i]++;
        if (fd->json)
            printf("%s\n", line);
        else
            printf("%s %s\n", id, status);
    }
    json_decref(obj);
}

/* An instance whose last runs never ended, or any with --isolate (its lease is this host's):
 * run it alone in a child process, so that if it is what kills its process, nothing else dies
 * with it. A child killed by a signal quarantines it (suspend) when `last_chance`, else is
 * reported as a failed run (its count stays up: the next time it is taken decides, maybe in
 * this same pass, by the slow path); otherwise its result
 * is reported as a run. */
static void run_alone(feeder *fd, const char *id, int64_t attempts, bool last_chance)
{
    wfm_store *store = wfm_host_store(fd->host);
    wf_error e = WF_ERROR_INIT;
    wfm_store_release(store, id, &e); /* the child takes it */
    wf_error_clear(&e);
    int out = -1;
    pid_t pid = spawn_resume(fd, id, &out);
    wf_buf text;
    wf_buf_init(&text);
    char chunk[4096];
    ssize_t got;
    while (pid > 0 && ((got = read(out, chunk, sizeof chunk)) > 0 || (got < 0 && errno == EINTR)))
        if (got > 0)
            wf_buf_add(&text, chunk, (size_t)got);
    int status = 0;
    if (pid > 0) {
        close(out);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    char why[400];
    if (pid > 0 && WIFSIGNALED(status) && !last_chance) {
        wfb_warning("instance %s: its process was killed by signal %d (run %lld of at most "
                    "%lld before it is quarantined)",
                    id, WTERMSIG(status), (long long)attempts, (long long)fd->max_attempts + 1);
        fd->failed++;
        fd->rc = 2;
    } else if (pid > 0 && WIFSIGNALED(status)) {
        snprintf(why, sizeof why,
                 "quarantined: its last %lld runs never ended (the process running it died "
                 "each time), and run alone it killed its process again (signal %d); run it "
                 "by hand with 'wfbridge resume %s'",
                 (long long)(attempts - 1), WTERMSIG(status), id);
        if (wfm_store_lock(store, id, &e) == WF_OK)
            suspend(fd, id, why);
        else
            wfb_report(&e);
    } else if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) < 2) {
        report_alone(fd, id, text.oom || !text.data ? "" : last_line(text.data));
    } else { /* the child reported its error on stderr */
        if (pid <= 0)
            wfb_warning("instance %s: cannot start a process to run it alone", id);
        fd->failed++;
        fd->rc = 2;
    }
    wf_buf_fini(&text);
    fflush(stdout);
}

/* Without --json: the same counts as one line on stderr when the host ends (stdout keeps its
 * "ID STATUS" lines only). */
static void print_summary_text(const feeder *fd)
{
    fprintf(stderr, "wfbridge host: ran %zu (", fd->ran);
    for (size_t i = 0; i < SAVED_STATUS_COUNT; i++) {
        char key[16];
        size_t n = 0;
        for (const char *c = saved_statuses[i]; *c && n + 1 < sizeof key; c++)
            key[n++] = (char)tolower((unsigned char)*c);
        key[n] = '\0';
        fprintf(stderr, "%s%s %zu", i ? ", " : "", key, fd->by_status[i]);
    }
    fprintf(stderr, "), failed %zu, suspended %zu\n", fd->failed, fd->suspended);
}

/* --json: WriteLine output goes to stderr, so every line of stdout is one JSON object. */
static void write_stderr(void *ud, const char *text, size_t len)
{
    (void)ud;
    fwrite(text, 1, len, stderr);
}

/* ---- claiming work ------------------------------------------------------------------------
 * The fast path: wfm_store_claim leases a batch of runnable rows in one statement and returns
 * their state, which wfm_host_adopt decodes without another round trip. The claim callback
 * runs under the store's lock, so the rows are copied first and adopted after it. */
typedef struct claim_copy {
    char id[33], status[16];
    uint64_t hash;
    void *state;
    size_t state_len;
    int64_t pending, attempts, promoted;
} claim_copy;

typedef struct claim_batch {
    claim_copy rows[64];
    size_t count;
    bool oom;
} claim_batch;

static bool copy_claimed(void *ud, const wfm_store_claimed *c)
{
    claim_batch *b = ud;
    assert(b->count < sizeof b->rows / sizeof b->rows[0]);
    claim_copy *r = &b->rows[b->count++];
    snprintf(r->id, sizeof r->id, "%s", c->id);
    snprintf(r->status, sizeof r->status, "%s", c->status);
    r->hash = c->definition_hash;
    r->pending = c->pending_resumes;
    r->attempts = c->attempts;
    r->promoted = c->promoted;
    r->state_len = c->state_len;
    r->state = NULL;
    if (c->state && !(r->state = wf_malloc(c->state_len ? c->state_len : 1)))
        b->oom = true;
    else if (c->state)
        memcpy(r->state, c->state, c->state_len);
    return true;
}

/* Claim up to `max` (<= 64) instances and start them; returns how many were claimed, or
 * SIZE_MAX after reporting an error. */
static size_t claim_some(feeder *fd, size_t max)
{
    static claim_batch b; /* the main thread's (64 rows of copies) */
    b.count = 0;
    b.oom = false;
    wf_error e = WF_ERROR_INIT;
    wfm_host *host = fd->host;
    if (wfm_store_claim(wfm_host_store(host), max, wfm_host_now_us(host), copy_claimed, &b, NULL,
                        &e) != WF_OK) {
        wfb_report(&e);
        fd->rc = 2;
        return SIZE_MAX;
    }
    for (size_t i = 0; i < b.count; i++) {
        claim_copy *r = &b.rows[i];
        char why[400];
        enum verdict v = b.oom ? RUN_HERE
                               : judge(fd, r->attempts, r->state != NULL, why, sizeof why);
        if (v != RUN_HERE) {
            if (v == SUSPEND_NOW)
                suspend(fd, r->id, why);
            else
                run_alone(fd, r->id, r->attempts, v == RUN_ALONE);
            wf_free(r->state);
            continue;
        }
        wfm_dinst *d = NULL;
        wf_status st = b.oom ? wf_error_set(&e, WF_E_NOMEM, NULL, "out of memory")
                             : wfm_host_adopt(host, r->id, r->status, r->hash, r->state,
                                              r->state_len, r->pending, r->promoted, &d, &e);
        if (b.oom) { /* give the lease back: a later claim takes it again */
            wf_error tmp = WF_ERROR_INIT;
            wfm_store_release(wfm_host_store(host), r->id, &tmp);
        }
        start_run(fd, d, st, &e);
        wf_error_clear(&e);
        wf_free(r->state);
    }
    return b.count;
}

/* ---- looking at the live rows -------------------------------------------------------------
 * The slow path, every poll period while claims come back short: list the rows that can still
 * run (Created, Executing, Idle; never the ended ones, which a store accumulates) for those a
 * claim does not take (leases of a dead process of this machine, which wfm_store_lock takes
 * over at once; this host's own leases left by a claim whose reply was lost) and for the next
 * timer due. */
static const char *const live_statuses[] = {"Created", "Executing", "Idle"};

static int look(feeder *fd, pass *p)
{
    wfm_store *store = wfm_host_store(fd->host);
    wf_free(p->ids);
    *p = (pass){store, fd->host, wfb_now_us(), INT64_MAX, NULL, 0, 0, false};
    wf_error err = WF_ERROR_INIT;
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    wf_status st = WF_OK;
    for (size_t i = 0; st == WF_OK && !p->oom && i < sizeof live_statuses / sizeof *live_statuses;
         i++) {
        q.status = live_statuses[i];
        st = wfm_store_query_rows(store, &q, collect, p, &err);
    }
    if (st != WF_OK || p->oom) {
        if (err.code == WF_OK)
            wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
        p->count = 0;
        return wfb_report(&err);
    }
    for (size_t i = 0; i < p->count && !stopping; i++) {
        while (fd->in_flight >= fd->max_in_flight && !stopping)
            drain(fd, true);
        if (stopping)
            break;
        wfm_dinst *d = NULL;
        wf_error e = WF_ERROR_INIT;
        const found *f = &p->ids[i];
        char why[400];
        enum verdict v = judge(fd, f->attempts + 1, f->has_state, why, sizeof why);
        if (v != RUN_HERE) {
            if (wfm_store_lock(store, f->id, &e) != WF_OK)
                continue; /* another host took it: that host decides */
            if (v == SUSPEND_NOW)
                suspend(fd, f->id, why);
            else
                run_alone(fd, f->id, f->attempts + 1, v == RUN_ALONE);
            continue;
        }
        wf_status ls = wfm_host_load(fd->host, f->id, &d, &e);
        start_run(fd, d, ls, &e);
        drain(fd, false);
    }
    return 0;
}

/* ---- when to claim ----------------------------------------------------------------------------
 * A claim is a statement the store's server runs, so the host claims whole batches (a pool
 * with room for fewer keeps running what it has) and, after a claim that came back short,
 * waits before the next: CLAIM_BACKOFF_MIN_US after one that found some work, doubling after
 * each that found none up to the poll period. Work announced by another process
 * (wfm_store_wait: a start, a release, a queued resumption) ends the wait at once; timers
 * and expired leases are found by the next claim, within the poll period. */
enum { CLAIM_BATCH = 64 };
#define CLAIM_BACKOFF_MIN_US 10000

typedef struct pacing {
    int64_t backoff_us; /* 0: claim whenever there is room */
    int64_t not_before; /* no claim before this time (us) */
} pacing;

static void pacing_after_claim(pacing *pc, size_t got, size_t asked, int64_t now, int64_t poll_us)
{
    if (got == asked) {
        pc->backoff_us = 0;
    } else if (got > 0 || pc->backoff_us == 0) {
        pc->backoff_us = CLAIM_BACKOFF_MIN_US;
    } else {
        pc->backoff_us *= 2;
    }
    if (pc->backoff_us > poll_us)
        pc->backoff_us = poll_us;
    pc->not_before = now + pc->backoff_us;
}

static void pacing_reset(pacing *pc)
{
    pc->backoff_us = 0;
    pc->not_before = 0;
}

/* While runs are in flight the host waits for them, not in wfm_store_wait: check without
 * waiting whether work was announced meanwhile. */
static int check_announced(wfm_store *store, pacing *pc)
{
    wf_error err = WF_ERROR_INIT;
    bool woken = false;
    if (wfm_store_wait(store, 0, &woken, &err) != WF_OK)
        return wfb_report(&err);
    if (woken)
        pacing_reset(pc);
    return 0;
}

/* The host's loop: claim work in batches while there is room on the pool; when claims come
 * back short, claim again after a back-off (pacing), look at the live rows (at most every
 * poll period, or when a timer falls due), and wait: for runs to end while some are in
 * flight, else in wfm_store_wait (woken on PostgreSQL when another process announces work).
 * --once: claim until nothing is left, look once, then wait for the runs it started.
 * Returns the exit code. */
static int serve(feeder *fd, bool once, int64_t poll_us)
{
    wfm_store *store = wfm_host_store(fd->host);
    pass p = {0};
    pacing pc = {0, 0};
    bool looked = false, dry = false;
    int64_t last_look = 0;
    int rc = 0;
    size_t batch = fd->max_in_flight < CLAIM_BATCH ? fd->max_in_flight : CLAIM_BATCH;
    while (!stopping && !ferror(stdout)) {
        size_t room = fd->max_in_flight - fd->in_flight;
        if (room > batch)
            room = batch;
        int64_t now = wfb_now_us();
        if (room == batch && !(once && dry) && now >= pc.not_before) {
            size_t got = claim_some(fd, room);
            drain(fd, false);
            if (got == SIZE_MAX) {
                rc = 2;
                break;
            }
            pacing_after_claim(&pc, got, room, wfb_now_us(), poll_us);
            if (got == room)
                continue; /* there may be more */
            dry = true;
        } else if (room < batch) {
            drain(fd, true);
            continue;
        }
        now = wfb_now_us();
        if (!looked || now - last_look >= poll_us || p.next_due_us <= now) {
            if (once && looked)
                break;
            if (look(fd, &p) != 0)
                rc = 2;
            looked = true;
            last_look = wfb_now_us();
            continue;
        }
        if (once)
            break;
        if (fd->in_flight > 0) {
            drain(fd, true); /* until something ends, at most 50 ms */
            if (pc.backoff_us > 0 && check_announced(store, &pc) != 0) {
                rc = 2;
                break;
            }
            continue;
        }
        int64_t wait = poll_us - (now - last_look);
        if (p.next_due_us != INT64_MAX && p.next_due_us - now < wait)
            wait = p.next_due_us - now;
        if (pc.not_before - now < wait)
            wait = pc.not_before - now;
        wf_error err = WF_ERROR_INIT;
        bool woken = false;
        if (wait > 0 && wfm_store_wait(store, (wait + 999) / 1000, &woken, &err) != WF_OK) {
            rc = wfb_report(&err);
            break;
        }
        if (woken)
            pacing_reset(&pc);
    }
    drain(fd, false); /* stopping: the runs in hand end at their next persist point */
    while (fd->in_flight)
        drain(fd, true);
    wf_free(p.ids);
    return rc | fd->rc;
}

static const struct option options[] = {
    {"store", required_argument, NULL, 's'},      {"once", no_argument, NULL, 'o'},
    {"durability", required_argument, NULL, 'd'}, {"lib-path", required_argument, NULL, 'L'},
    {"json", no_argument, NULL, 'j'},             {"workers", required_argument, NULL, 'w'},
    {"poll", required_argument, NULL, 'p'},       {"help", no_argument, NULL, 'h'},
    {"max-attempts", required_argument, NULL, 'm'}, {"isolate", no_argument, NULL, 'i'},
    {NULL, 0, NULL, 0},
};

int wfb_cmd_host(int argc, char **argv)
{
    wfb_verb_begin("host");
    const char *store_path = NULL, *lib_path = NULL;
    bool once = false, json = false, isolate = false;
    int durability = 0, c;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned workers = cores > 0 && cores < 64 ? (unsigned)cores : 1;
    unsigned long long n;
    int64_t poll_ms = 1000, max_attempts = 3;
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
        case 'p':
            bad = wfb_parse_count("--poll", optarg, 1, 3600000, &n);
            poll_ms = (int64_t)n;
            break;
        case 'm':
            bad = wfb_parse_count("--max-attempts", optarg, 1, 1000, &n);
            max_attempts = (int64_t)n;
            break;
        case 'i':
            isolate = true;
            break;
        default:
            return 2;
        }
        if (bad)
            return bad;
    }
    if (wfb_operand(argc, argv, NULL, NULL))
        return 2;
    /* from here on a stop signal is a graceful stop, also while the store is being opened
     * (the loop then ends before starting anything); no SA_RESTART: waits end */
    struct sigaction sa = {.sa_handler = on_stop_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    wf_error err = WF_ERROR_INIT;
    wf_libpath *libpath = NULL;
    wfm_runtime *rt = NULL;
    wfm_store *store = NULL;
    wfm_host *host = NULL;
    int rc = 2;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = workers;
    if (json)
        ro.write = write_stderr;
    wfb_durable_cfg cfg = {wfb_store_name(store_path), true, durability, NULL, 0};
    if (wfb_libpath(lib_path, &libpath, &err) == WF_OK &&
        (ro.libpath = libpath, wfm_runtime_create(&ro, &rt, &err)) == WF_OK &&
        wfb_interop_register(wfm_runtime_catalogue(rt), &err) == WF_OK &&
        wfb_durable_open(&cfg, rt, &store, &host, &err) == WF_OK) {
        feeder fd = {.host = host, .json = json, .max_in_flight = (size_t)workers * 256,
                     .max_attempts = max_attempts, .isolate = isolate, .store_name = cfg.path,
                     .lib_path = lib_path, .durability = durability};
        pthread_mutex_init(&fd.lock, NULL);
        pthread_cond_init(&fd.cv, NULL);
        wake_store = store;
        rc = serve(&fd, once, poll_ms * 1000);
        if (json)
            print_summary(&fd);
        else
            print_summary_text(&fd);
        wake_store = NULL;
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

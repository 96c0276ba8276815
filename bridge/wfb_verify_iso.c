/* wfb_verify_iso.c — isolated runs for `wfbridge verify` (docs/verify.md "Isolation"): a pool
 * of worker processes, one per job, each forked from verify once the definitions and their
 * libraries are loaded. A worker runs one case at a time and puts the native state back after
 * each (wfb_verify_worker.c), so every run starts from the state of that moment; a run that
 * crashes, calls exit() or never ends is an outcome, not the end of verify: its worker is
 * replaced by a fresh fork. Worker states, and the function that moves each:
 *
 *   none --spawn--> idle --dispatch--> busy --collect (RESULT)--> idle
 *   busy --reap (death, timeout)--> none        idle --retire (WORKER_RUNS runs)--> none */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_codec.h"
#include "../common/wf_mem.h"
#include "wfb_verify.h"
#include "wfb_verify_int.h"

/* A worker is replaced after this many runs, so what restoring leaves behind (heap blocks a
 * restored static pointed to) stays bounded; a fork costs about as much as 10 runs. */
#define WORKER_RUNS 2000

/* One worker and the run it is making. */
typedef struct slot {
    pid_t pid;        /* the worker; 0: none */
    int fd;           /* our end of its socket */
    unsigned runs;    /* made by this worker */
    wfb__journal *jr; /* shared with the worker */
    bool busy;        /* a run was sent and not answered */
    wf_buf in;        /* what the run sent so far */
    size_t scanned;   /* in's whole records before this offset are ENTER records */
    wfb_vobs *obs;    /* borrowed: filled when the run is over */
    wf_types *types;  /* the runner's, for decoding values */
    double deadline;  /* monotonic s; 0: none */
} slot;

struct wfb_vpool {
    wfb_vpool_opts o;
    slot *slots;           /* o.jobs of them */
    wfb__journal *journals; /* o.jobs of them, shared (mmap) */
    size_t active;          /* busy slots */
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

wf_status wfb_vpool_create(const wfb_vpool_opts *o, wfb_vpool **out, wf_error *err)
{
    *out = NULL;
    wfb_vpool *p = wf_calloc(1, sizeof *p);
    if (!p)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    p->o = *o;
    if (!p->o.jobs) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        p->o.jobs = n > 0 ? (unsigned)n : 1;
    }
    if (!(p->slots = wf_calloc(p->o.jobs, sizeof *p->slots))) {
        wf_free(p);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    if (p->o.in_process) {
        *out = p;
        return WF_OK;
    }
    p->journals = mmap(NULL, p->o.jobs * sizeof *p->journals, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p->journals == MAP_FAILED) {
        p->journals = NULL;
        wfb_vpool_destroy(p);
        return wf_error_set(err, WF_E_NOMEM, NULL, "cannot map worker journals: %s",
                            strerror(errno));
    }
    for (unsigned i = 0; i < p->o.jobs; i++) {
        p->slots[i].fd = -1;
        p->slots[i].jr = &p->journals[i];
    }
    *out = p;
    return WF_OK;
}

/* The worker ends (killed: it may be in an endless loop; idle, it holds nothing); how. */
static int slot_end(slot *s)
{
    int wstatus = 0;
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    if (s->pid) {
        kill(s->pid, SIGKILL);
        while (waitpid(s->pid, &wstatus, 0) < 0 && errno == EINTR)
            ;
    }
    s->pid = 0;
    return wstatus;
}

void wfb_vpool_destroy(wfb_vpool *p)
{
    if (!p)
        return;
    for (unsigned i = 0; p->journals && i < p->o.jobs; i++) {
        slot_end(&p->slots[i]);
        wf_buf_fini(&p->slots[i].in);
    }
    if (p->journals)
        munmap(p->journals, p->o.jobs * sizeof *p->journals);
    wf_free(p->slots);
    wf_free(p);
}

unsigned wfb_vpool_jobs(const wfb_vpool *p)
{
    return p->o.jobs;
}

/* ---- decoding in the parent ------------------------------------------------------------------- */
/* The status words of both runtimes and verify's own, so obs->status stays a static string. */
static const char *intern_status(const char *s)
{
    static const char *const known[] = {"Closed",  "Faulted",   "Canceled", "Terminated",
                                        "Idle",    "Suspended", "Limit",    "Error",
                                        "Created", "Executing", "Crashed",  "Exited",
                                        "TimedOut"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i], s) == 0)
            return known[i];
    return "Error";
}

static bool get_values(wf_reader *r, wf_value **out, size_t *n)
{
    size_t count = (size_t)wf_codec_get_uint(r);
    if (count > wf_reader_left(r))
        return wf_reader_fail(r, "bad count");
    wf_value *v = wf_calloc(count + 1, sizeof *v);
    if (!v)
        return false;
    wf_error e = WF_ERROR_INIT;
    size_t i = 0;
    while (i < count && wf_codec_get_value(r, &v[i], &e) == WF_OK)
        i++;
    *out = v;
    *n = i;
    return i == count;
}

static void free_values(wf_value *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        wf_value_release(&v[i]);
    wf_free(v);
}

static char *get_opt_str(wf_reader *r, bool *ok)
{
    if (!wf_codec_get_uint(r))
        return NULL;
    char *s = wf_codec_get_str(r, NULL);
    *ok &= s != NULL;
    return s;
}

static bool get_strs(wf_reader *r, char ***out, size_t *n)
{
    size_t count = (size_t)wf_codec_get_uint(r);
    bool ok = count <= wf_reader_left(r);
    for (size_t i = 0; ok && i < count; i++) {
        char *s = wf_codec_get_str(r, NULL);
        ok = s && wfb__push_str(out, n, s);
        wf_free(s);
    }
    return ok;
}

static bool decode_call(wf_reader *r, wfb_vobs *o)
{
    char *fn = wf_codec_get_str(r, NULL), *act = wf_codec_get_str(r, NULL);
    char *branch = wf_codec_get_str(r, NULL);
    wf_value *in = NULL, *out = NULL;
    size_t ni = 0, no = 0;
    bool ok = fn && act && branch && get_values(r, &in, &ni) && get_values(r, &out, &no) &&
              wfb_vobs_add_call(o, fn, act, branch, in, ni, out, no);
    free_values(in, ni);
    free_values(out, no);
    wf_free(fn);
    wf_free(act);
    wf_free(branch);
    return ok;
}

static bool decode_obs(wf_reader *r, wfb_vobs *o)
{
    char *status = wf_codec_get_str(r, NULL);
    o->status = status ? intern_status(status) : "Error";
    wf_free(status);
    bool ok = status != NULL;
    size_t n = (size_t)wf_codec_get_uint(r);
    for (size_t i = 0; ok && i < n; i++) {
        char *name = wf_codec_get_str(r, NULL);
        wf_value v = wf_null();
        wf_error e = WF_ERROR_INIT;
        ok = name && wf_codec_get_value(r, &v, &e) == WF_OK && wfb_vobs_add_output(o, name, &v);
        wf_value_release(&v);
        wf_free(name);
    }
    n = ok ? (size_t)wf_codec_get_uint(r) : 0;
    for (size_t i = 0; ok && i < n; i++)
        ok = decode_call(r, o);
    o->fault_type = get_opt_str(r, &ok);
    o->fault_message = get_opt_str(r, &ok);
    ok = ok && get_strs(r, &o->waits, &o->wait_count);
    o->error = get_opt_str(r, &ok);
    ok = ok && get_strs(r, &o->taken, &o->taken_count);
    n = ok ? (size_t)wf_codec_get_uint(r) : 0;
    ok = ok && n <= wf_reader_left(r) && (o->hits = wf_calloc(n + 1, sizeof *o->hits));
    for (size_t i = 0; ok && i < n; i++)
        o->hits[o->hit_count++] = (size_t)wf_codec_get_uint(r);
    return ok && wf_reader_ok(r);
}

static bool decode_enter(wf_reader *r, wfb_vobs *o)
{
    char *fn = wf_codec_get_str(r, NULL);
    wf_value *in = NULL;
    size_t ni = 0;
    bool ok = fn && get_values(r, &in, &ni) && wfb_vobs_add_call(o, fn, "", "", in, ni, NULL, 0);
    free_values(in, ni);
    wf_free(fn);
    return ok;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return NULL;
    }
}

/* The end of a run that did not deliver its observation: status and fault say how it ended
 * ("crashed: SIGSEGV in ho_price_order"), the calls are those it entered. */
static bool abnormal(wfb_vobs *o, int wstatus, double timed_out_s)
{
    const char *fn = o->call_count ? o->calls[o->call_count - 1].function : NULL;
    char what[64], msg[600], where[300] = "";
    if (fn)
        snprintf(where, sizeof where, " in %s", fn);
    if (timed_out_s > 0) {
        o->status = "TimedOut";
        snprintf(what, sizeof what, "timeout");
        if (fn)
            snprintf(where, sizeof where, " (last native call: %s)", fn);
        snprintf(msg, sizeof msg, "timed out after %g s%s", timed_out_s, where);
    } else if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        o->status = "Crashed";
        if (signal_name(sig))
            snprintf(what, sizeof what, "%s", signal_name(sig));
        else
            snprintf(what, sizeof what, "signal %d", sig);
        snprintf(msg, sizeof msg, "crashed: %s%s", what, where);
    } else {
        o->status = "Exited";
        snprintf(what, sizeof what, "exit %d", WEXITSTATUS(wstatus));
        snprintf(msg, sizeof msg, "exited with status %d%s", WEXITSTATUS(wstatus), where);
    }
    o->fault_type = wf_strdup(what);
    o->fault_message = wf_strdup(msg);
    return o->fault_type && o->fault_message;
}

/* What a run sent: its records on the socket, then those in the journal. */
typedef struct sent {
    wfb_vobs entered, result;
    bool got, ok;
    char *fail; /* owned */
} sent;

/* Read the records in data: with `died`, the ENTER records (the RESULT of a killed run is
 * not its outcome); otherwise only its RESULT or FAIL. */
static void scan(const void *data, size_t len, wf_types *types, bool died, sent *t)
{
    wf_reader r;
    wf_reader_init(&r, data, len, types);
    while (t->ok && !t->got && !t->fail && wf_reader_left(&r) > 0) {
        unsigned tag = wf_codec_get_u8(&r);
        size_t n = (size_t)wf_codec_get_uint(&r);
        const void *body = wf_codec_get_raw(&r, n);
        if (!body)
            break; /* cut short: the worker died while writing */
        wf_reader rec;
        wf_reader_init(&rec, body, n, types);
        if (tag == WFB__REC_ENTER && died)
            t->ok = decode_enter(&rec, &t->entered);
        else if (tag == WFB__REC_RESULT && !died)
            t->got = decode_obs(&rec, &t->result) || (wfb_vobs_fini(&t->result), false);
        else if (tag == WFB__REC_FAIL && !died)
            t->fail = wf_codec_get_str(&rec, NULL);
    }
}

/* Turn what the run sent into *s->obs: its RESULT; or, when the worker died (wstatus) or was
 * killed at its deadline, the calls it entered and how it ended. */
static wf_status finish(slot *s, bool died, int wstatus, double timed_out_s, wf_error *err)
{
    sent t;
    memset(&t, 0, sizeof t);
    t.ok = true;
    size_t jlen = __atomic_load_n(&s->jr->len, __ATOMIC_ACQUIRE);
    scan(s->in.data ? s->in.data : "", s->in.len, s->types, died, &t);
    scan(s->jr->data, jlen < WFB__JOURNAL_SIZE ? jlen : WFB__JOURNAL_SIZE, s->types, died, &t);
    wf_status rc = WF_OK;
    if (t.fail) {
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "%s", t.fail);
    } else if (t.got) {
        *s->obs = t.result;
        memset(&t.result, 0, sizeof t.result);
    } else {
        bool ok = t.ok && abnormal(&t.entered, died ? wstatus : 0, timed_out_s);
        *s->obs = t.entered;
        memset(&t.entered, 0, sizeof t.entered);
        if (!ok)
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    wf_free(t.fail);
    wfb_vobs_fini(&t.entered);
    wfb_vobs_fini(&t.result);
    return rc;
}

/* ---- the pool ------------------------------------------------------------------------------ */
static wf_status spawn(wfb_vpool *p, slot *s, wf_error *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return wf_error_set(err, WF_E_IO, NULL, "cannot create a socket pair: %s",
                            strerror(errno));
    int others[p->o.jobs];
    size_t n = 0;
    for (unsigned i = 0; i < p->o.jobs; i++)
        if (p->slots[i].fd >= 0)
            others[n++] = p->slots[i].fd;
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return wf_error_set(err, WF_E_IO, NULL, "cannot fork a worker: %s", strerror(errno));
    }
    if (pid == 0) {
        close(sv[0]);
        wfb__worker_main(sv[1], s->jr, others, n);
    }
    close(sv[1]);
    s->pid = pid;
    s->fd = sv[0];
    s->runs = 0;
    return WF_OK;
}

/* The run is over, as what it sent says or as the worker ended. */
static wf_status collect(wfb_vpool *p, slot *s, bool died, double timed_out_s, wf_error *err)
{
    int wstatus = 0;
    if (died)
        wstatus = slot_end(s);
    wf_status rc = s->in.oom ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory")
                             : finish(s, died, wstatus, timed_out_s, err);
    wf_buf_fini(&s->in);
    size_t used = __atomic_load_n(&s->jr->len, __ATOMIC_ACQUIRE);
    if (used > WFB__JOURNAL_KEEP) { /* the memory of a huge run, back to the system */
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t from = ((uintptr_t)s->jr->data + WFB__JOURNAL_KEEP + page - 1) & ~(page - 1);
        madvise((void *)from, (uintptr_t)s->jr->data + used - from, MADV_REMOVE);
    }
    s->busy = false;
    s->runs++;
    p->active--;
    return rc;
}

/* Whether s->in holds the run's DONE; looks only at what came since the last look (a run
 * whose journal fills sends its records on the socket). */
static bool answered(slot *s)
{
    while (s->scanned < s->in.len) {
        wf_reader r;
        wf_reader_init(&r, s->in.data + s->scanned, s->in.len - s->scanned, NULL);
        unsigned tag = wf_codec_get_u8(&r);
        size_t len = (size_t)wf_codec_get_uint(&r);
        if (!wf_codec_get_raw(&r, len))
            return false;
        if (tag == WFB__REC_DONE)
            return true;
        s->scanned = s->in.len - wf_reader_left(&r);
    }
    return false;
}

/* Read what is there from s; an answer or the worker's end finishes the run. */
static wf_status drain(wfb_vpool *p, slot *s, wf_error *err)
{
    char chunk[65536];
    ssize_t n = read(s->fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return WF_OK;
    if (n <= 0)
        return collect(p, s, true, 0, err);
    wf_buf_add(&s->in, chunk, (size_t)n);
    if (s->in.oom)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return answered(s) ? collect(p, s, false, 0, err) : WF_OK;
}

/* Wait until some run ends (or stopped). */
static wf_status step(wfb_vpool *p, wf_error *err)
{
    struct pollfd fds[p->o.jobs];
    slot *of[p->o.jobs];
    size_t n = 0;
    double now = mono_s(), first = 0;
    for (unsigned i = 0; i < p->o.jobs; i++) {
        slot *s = &p->slots[i];
        if (!s->busy)
            continue;
        if (s->deadline > 0 && now >= s->deadline)
            return collect(p, s, true, p->o.timeout_s, err);
        if (s->deadline > 0 && (first == 0 || s->deadline < first))
            first = s->deadline;
        fds[n] = (struct pollfd){.fd = s->fd, .events = POLLIN};
        of[n++] = s;
    }
    int wait_ms = first > 0 ? (int)((first - now) * 1000) + 1 : -1;
    if (p->o.stop) {
        /* A stop signal that lands just before poll() would not interrupt it: look at the
         * flag first, and wake at least every 100 ms to look again. */
        if (*p->o.stop)
            return wf_error_set(err, WF_E_STATE, NULL, "interrupted");
        if (wait_ms < 0 || wait_ms > 100)
            wait_ms = 100;
    }
    int got = poll(fds, n, wait_ms);
    if (got < 0 && errno != EINTR)
        return wf_error_set(err, WF_E_IO, NULL, "poll: %s", strerror(errno));
    if (p->o.stop && *p->o.stop)
        return wf_error_set(err, WF_E_STATE, NULL, "interrupted");
    for (size_t i = 0; got > 0 && i < n; i++)
        if (fds[i].revents) {
            wf_status rc = drain(p, of[i], err);
            if (rc != WF_OK)
                return rc;
        }
    return WF_OK;
}

/* Send the run to s's worker (a fresh one when it has none, has made WORKER_RUNS runs or
 * died while idle). */
static wf_status dispatch(wfb_vpool *p, slot *s, const wf_buf *run, wf_error *err)
{
    for (int attempt = 0;; attempt++) {
        if (s->pid && s->runs >= WORKER_RUNS)
            slot_end(s);
        if (!s->pid) {
            wf_status rc = spawn(p, s, err);
            if (rc != WF_OK)
                return rc;
        }
        __atomic_store_n(&s->jr->len, 0, __ATOMIC_RELEASE);
        if (wfb__send_all(s->fd, run->data, run->len))
            return WF_OK;
        slot_end(s);
        if (attempt)
            return wf_error_set(err, WF_E_IO, NULL, "a verify worker does not take runs");
    }
}

static wf_status start(wfb_vpool *p, slot *s, wfb_vlegacy *l, wfb_vmodern *m, const wfb_vcase *c,
                       wfb_vobs *obs, wf_error *err)
{
    wf_buf body, run;
    wf_buf_init(&body);
    wf_buf_init(&run);
    wfb__run_encode(&body, l, m, c);
    wf_buf_addc(&run, WFB__REC_RUN);
    wf_codec_put_uint(&run, body.len);
    wf_buf_add(&run, body.data ? body.data : "", body.len);
    wf_status rc = body.oom || run.oom ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory")
                                       : dispatch(p, s, &run, err);
    wf_buf_fini(&body);
    wf_buf_fini(&run);
    if (rc != WF_OK)
        return rc;
    wf_buf_init(&s->in);
    s->scanned = 0;
    s->busy = true;
    s->obs = obs;
    s->types = l ? wfb__vlegacy_types(l) : wfb__vmodern_types(m);
    s->deadline = p->o.timeout_s > 0 ? mono_s() + p->o.timeout_s : 0;
    p->active++;
    return WF_OK;
}

wf_status wfb_vpool_submit(wfb_vpool *p, wfb_vlegacy *l, wfb_vmodern *m, const wfb_vcase *c,
                           wfb_vobs *obs, wf_error *err)
{
    assert(l || m);
    memset(obs, 0, sizeof *obs);
    if (p->o.in_process)
        return l ? wfb_vlegacy_run(l, c, obs, err) : wfb_vmodern_run(m, c, obs, err);
    while (p->active == p->o.jobs) {
        wf_status rc = step(p, err);
        if (rc != WF_OK)
            return rc;
    }
    for (unsigned i = 0; i < p->o.jobs; i++)
        if (!p->slots[i].busy)
            return start(p, &p->slots[i], l, m, c, obs, err);
    assert(!"a free slot when fewer than jobs runs are active");
    return WF_E_STATE;
}

wf_status wfb_vpool_wait(wfb_vpool *p, wf_error *err)
{
    wf_status rc = WF_OK;
    while (rc == WF_OK && p->active)
        rc = step(p, err);
    return rc;
}

/* wfb_verify_iso.c — isolated runs for `wfbridge verify`: every run of a case is forked from the
 * process that loaded the libraries, so each starts from the same native state, and a run that
 * crashes, calls exit() or never ends is an outcome, not the end of verify (docs/verify.md
 * "Isolation"). The child streams a record to its parent before each native call, then its
 * whole observation; the parent knows which call never returned from the last record. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_codec.h"
#include "../common/wf_mem.h"
#include "wfb_verify.h"
#include "wfb_verify_int.h"

/* Records on the pipe: a tag byte, a LEB128 payload length, the payload. */
#define REC_ENTER  'E' /* before a native call: function, In values */
#define REC_RESULT 'R' /* the run's whole observation */
#define REC_FAIL   'F' /* the run itself failed (out of memory): message */

/* One run going on: a forked child and what it sent so far. */
typedef struct slot {
    pid_t pid; /* 0: free */
    int fd;    /* the read end of the child's pipe */
    wf_buf in;
    wfb_vobs *obs;   /* borrowed: filled when the child is done */
    wf_types *types; /* the runner's, for decoding values */
    double deadline; /* monotonic s; 0: none */
    bool eof;
} slot;

struct wfb_vpool {
    wfb_vpool_opts o;
    slot *slots; /* o.jobs of them */
    size_t active;
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
    *out = p;
    return WF_OK;
}

static void slot_clear(slot *s)
{
    if (s->fd >= 0)
        close(s->fd);
    wf_buf_fini(&s->in);
    memset(s, 0, sizeof *s);
}

void wfb_vpool_destroy(wfb_vpool *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < p->o.jobs; i++) {
        slot *s = &p->slots[i];
        if (!s->pid)
            continue;
        kill(s->pid, SIGKILL);
        while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        slot_clear(s);
    }
    wf_free(p->slots);
    wf_free(p);
}

unsigned wfb_vpool_jobs(const wfb_vpool *p)
{
    return p->o.jobs;
}

/* ---- encoding an observation --------------------------------------------------------------- */
/* A value; one the codec has no form for travels as its JSON text. */
static void put_value(wf_buf *b, const wf_value *v)
{
    size_t mark = b->len;
    wf_error e = WF_ERROR_INIT;
    if (wf_codec_put_value(b, v, &e) == WF_OK || b->oom)
        return;
    b->len = mark;
    wf_buf json;
    wf_buf_init(&json);
    wf_value_to_json(v, &json);
    wf_value s = wf_null();
    if (!json.oom && wf_value_cstring(json.data ? json.data : "", &s) == WF_OK)
        wf_codec_put_value(b, &s, &e);
    else
        b->oom = true;
    wf_value_release(&s);
    wf_buf_fini(&json);
}

static void put_opt_str(wf_buf *b, const char *s)
{
    wf_codec_put_uint(b, s != NULL);
    if (s)
        wf_codec_put_str(b, s);
}

static void put_strs(wf_buf *b, char *const *s, size_t n)
{
    wf_codec_put_uint(b, n);
    for (size_t i = 0; i < n; i++)
        wf_codec_put_str(b, s[i]);
}

static void put_values(wf_buf *b, const wf_value *v, size_t n)
{
    wf_codec_put_uint(b, n);
    for (size_t i = 0; i < n; i++)
        put_value(b, &v[i]);
}

static void encode_obs(wf_buf *b, const wfb_vobs *o)
{
    wf_codec_put_str(b, o->status ? o->status : "Error");
    wf_codec_put_uint(b, o->output_count);
    for (size_t i = 0; i < o->output_count; i++) {
        wf_codec_put_str(b, o->output_names[i]);
        put_value(b, &o->output_values[i]);
    }
    wf_codec_put_uint(b, o->call_count);
    for (size_t i = 0; i < o->call_count; i++) {
        const wfb_vcall *c = &o->calls[i];
        wf_codec_put_str(b, c->function);
        wf_codec_put_str(b, c->activity);
        wf_codec_put_str(b, c->branch);
        put_values(b, c->in, c->in_count);
        put_values(b, c->out, c->out_count);
    }
    put_opt_str(b, o->fault_type);
    put_opt_str(b, o->fault_message);
    put_strs(b, o->waits, o->wait_count);
    put_opt_str(b, o->error);
    put_strs(b, o->taken, o->taken_count);
    wf_codec_put_uint(b, o->hit_count);
    for (size_t i = 0; i < o->hit_count; i++)
        wf_codec_put_uint(b, o->hits[i]);
}

/* ---- the child ---------------------------------------------------------------------------- */
static void write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(120); /* the parent is gone */
        p += n;
        len -= (size_t)n;
    }
}

static void send_rec(int fd, char tag, const wf_buf *payload)
{
    wf_buf head;
    wf_buf_init(&head);
    wf_buf_addc(&head, tag);
    wf_codec_put_uint(&head, payload->len);
    if (head.oom || payload->oom)
        _exit(121);
    write_all(fd, head.data, head.len);
    write_all(fd, payload->data ? payload->data : "", payload->len);
    wf_buf_fini(&head);
}

/* The watcher (wf_native_watch_set): the call about to be made, before it can crash. */
static void on_enter(void *ud, const wf_native_fn *fn, const wf_value *args)
{
    const wf_native_sig *sig = wf_native_fn_sig(fn);
    wf_buf b;
    wf_buf_init(&b);
    wf_codec_put_str(&b, wf_native_fn_name(fn));
    size_t n = 0;
    for (size_t i = 0; i < sig->param_count; i++)
        n += sig->params[i].dir != WF_NATIVE_OUT;
    wf_codec_put_uint(&b, n);
    for (size_t i = 0; i < sig->param_count; i++)
        if (sig->params[i].dir != WF_NATIVE_OUT)
            put_value(&b, &args[i]);
    send_rec(*(int *)ud, REC_ENTER, &b);
    wf_buf_fini(&b);
}

/* The file descriptor the child writes to: above those native code is likely to open, so
 * every run finds the same lowest free descriptors. */
#define CHILD_FD_MIN 512

/* Runs in the forked child and never returns: the parent's signal handlers and standard
 * output are not the run's (native code printing must not reach verify's report), and the
 * pipes of the runs going on beside it are closed, so every run has the same descriptors. */
static void child_main(const wfb_vpool *p, int fd, wfb_vlegacy *l, wfb_vmodern *m,
                       const wfb_vcase *c)
{
    for (unsigned i = 0; i < p->o.jobs; i++)
        if (p->slots[i].pid)
            close(p->slots[i].fd);
    int high = fcntl(fd, F_DUPFD, CHILD_FD_MIN);
    if (high >= 0) {
        close(fd);
        fd = high;
    }
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
#if defined(__SANITIZE_ADDRESS__)
    /* a sanitizer build (`make asan`) reports a crash and exits 1: let it be the signal it is */
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        signal(faults[i], SIG_DFL);
#endif
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
        dup2(devnull, STDOUT_FILENO);
        close(devnull);
    }
    wf_native_watch_set(on_enter, &fd);
    wfb_vobs obs;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = l ? wfb_vlegacy_run(l, c, &obs, &err) : wfb_vmodern_run(m, c, &obs, &err);
    wf_native_watch_set(NULL, NULL);
    wf_buf b;
    wf_buf_init(&b);
    if (rc == WF_OK)
        encode_obs(&b, &obs);
    else
        wf_codec_put_str(&b, err.message);
    send_rec(fd, rc == WF_OK ? REC_RESULT : REC_FAIL, &b);
    _exit(0); /* no atexit handler of the parent runs here */
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

/* Turn what the child sent and how it ended into *s->obs. */
static wf_status finish(wfb_vpool *p, slot *s, int wstatus, double timed_out_s, wf_error *err)
{
    (void)p;
    wf_reader r;
    wf_reader_init(&r, s->in.data ? s->in.data : "", s->in.len, s->types);
    wfb_vobs entered, result;
    memset(&entered, 0, sizeof entered);
    memset(&result, 0, sizeof result);
    bool ok = true, got = false;
    char *fail = NULL;
    while (ok && !got && !fail && wf_reader_left(&r) > 0) {
        unsigned tag = wf_codec_get_u8(&r);
        size_t len = (size_t)wf_codec_get_uint(&r);
        const void *body = wf_codec_get_raw(&r, len);
        if (!body)
            break; /* cut short: the child died while writing */
        wf_reader rec;
        wf_reader_init(&rec, body, len, s->types);
        if (tag == REC_ENTER)
            ok = decode_enter(&rec, &entered);
        else if (tag == REC_RESULT)
            got = decode_obs(&rec, &result) || (wfb_vobs_fini(&result), false);
        else if (tag == REC_FAIL)
            fail = wf_codec_get_str(&rec, NULL);
    }
    bool clean = timed_out_s <= 0 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    wf_status rc = WF_OK;
    if (fail && clean) {
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "%s", fail);
    } else if (got && clean) {
        *s->obs = result;
        memset(&result, 0, sizeof result);
    } else {
        ok = ok && abnormal(&entered, wstatus, timed_out_s);
        *s->obs = entered;
        memset(&entered, 0, sizeof entered);
        if (!ok)
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    wf_free(fail);
    wfb_vobs_fini(&entered);
    wfb_vobs_fini(&result);
    return rc;
}

/* ---- the pool ------------------------------------------------------------------------------ */
static wf_status reap(wfb_vpool *p, slot *s, double timed_out_s, wf_error *err)
{
    int wstatus = 0;
    if (timed_out_s > 0)
        kill(s->pid, SIGKILL);
    while (waitpid(s->pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    /* what it wrote before it ended (not waiting on a process it left behind) */
    fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
    char chunk[65536];
    for (ssize_t n; (n = read(s->fd, chunk, sizeof chunk)) > 0;)
        wf_buf_add(&s->in, chunk, (size_t)n);
    wf_status rc = s->in.oom ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory")
                             : finish(p, s, wstatus, timed_out_s, err);
    slot_clear(s);
    p->active--;
    return rc;
}

/* Read what is there from s; at end of file the run is over. */
static wf_status drain(wfb_vpool *p, slot *s, wf_error *err)
{
    char chunk[65536];
    ssize_t n = read(s->fd, chunk, sizeof chunk);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? WF_OK : reap(p, s, 0, err);
    if (n == 0)
        return reap(p, s, 0, err);
    wf_buf_add(&s->in, chunk, (size_t)n);
    return WF_OK;
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
        if (!s->pid)
            continue;
        if (s->deadline > 0 && now >= s->deadline)
            return reap(p, s, p->o.timeout_s, err);
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

static wf_status start(wfb_vpool *p, slot *s, wfb_vlegacy *l, wfb_vmodern *m, const wfb_vcase *c,
                       wfb_vobs *obs, wf_error *err)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return wf_error_set(err, WF_E_IO, NULL, "cannot create a pipe: %s", strerror(errno));
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return wf_error_set(err, WF_E_IO, NULL, "cannot fork a run: %s", strerror(errno));
    }
    if (pid == 0) {
        close(pipefd[0]);
        child_main(p, pipefd[1], l, m, c);
    }
    close(pipefd[1]);
    memset(s, 0, sizeof *s);
    wf_buf_init(&s->in);
    s->pid = pid;
    s->fd = pipefd[0];
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
        if (!p->slots[i].pid)
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

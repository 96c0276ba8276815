/* wfb_verify_worker.c — a verify worker (docs/verify.md "Isolation"): a process forked from
 * verify once the definitions and their libraries are loaded, that runs case after case sent
 * by its pool and, after each, puts the native state back as it was when it was forked
 * (wfb_verify_fresh.c). Before each native call it notes the call in memory shared with the
 * pool, so a run that never returns is still named by what it entered. */
#define _GNU_SOURCE /* close_range */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h> /* mallopt */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/wf_codec.h"
#include "../common/wf_mem.h"
#include "wfb_verify.h"
#include "wfb_verify_int.h"

/* The descriptor the worker talks on: above those native code is likely to open, so every
 * run finds the same lowest free descriptors whatever the worker's, and below 64, so the
 * descriptor table stays at its first size (closing what a run left open walks all of it). */
#define WORKER_FD_MIN 48

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

/* ---- talking to the pool ------------------------------------------------------------------ */
bool wfb__send_all(int fd, const void *data, size_t len)
{
    const char *at = data;
    while (len) {
        ssize_t n = send(fd, at, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        at += n;
        len -= (size_t)n;
    }
    return true;
}

static void write_all(int fd, const void *data, size_t len)
{
    if (!wfb__send_all(fd, data, len))
        _exit(120); /* the pool is gone */
}

static void rec_head(wf_buf *head, char tag, const wf_buf *payload)
{
    wf_buf_init(head);
    wf_buf_addc(head, tag);
    wf_codec_put_uint(head, payload->len);
    if (head->oom || payload->oom)
        _exit(121);
}

/* One send for the whole record: the pool wakes once. */
static void send_rec(int fd, char tag, const wf_buf *payload)
{
    wf_buf rec;
    rec_head(&rec, tag, payload);
    wf_buf_add(&rec, payload->data ? payload->data : "", payload->len);
    if (rec.oom)
        _exit(121);
    write_all(fd, rec.data, rec.len);
    wf_buf_fini(&rec);
}

typedef struct worker {
    int fd;
    wfb__journal *jr; /* shared with the pool */
    size_t calls;     /* native calls entered in this run */
} worker;

/* Append a record to the journal; when it is full, what it holds goes to the pool first
 * (and a record larger than the journal goes straight after it). The length is stored
 * last, so a worker that dies mid-append leaves whole records only. */
static void journal_add(worker *w, char tag, const wf_buf *payload)
{
    wf_buf head;
    rec_head(&head, tag, payload);
    size_t len = w->jr->len, total = head.len + payload->len;
    if (len + total > WFB__JOURNAL_SIZE && len) {
        write_all(w->fd, w->jr->data, len);
        __atomic_store_n(&w->jr->len, len = 0, __ATOMIC_RELEASE);
    }
    if (total > WFB__JOURNAL_SIZE) {
        write_all(w->fd, head.data, head.len);
        write_all(w->fd, payload->data ? payload->data : "", payload->len);
    } else {
        memcpy(w->jr->data + len, head.data, head.len);
        memcpy(w->jr->data + len + head.len, payload->data ? payload->data : "", payload->len);
        __atomic_store_n(&w->jr->len, len + total, __ATOMIC_RELEASE);
    }
    wf_buf_fini(&head);
}

/* The watcher (wf_native_watch_set): the call about to be made, before it can crash. */
static void on_enter(void *ud, const wf_native_fn *fn, const wf_value *args)
{
    worker *w = ud;
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
    journal_add(w, WFB__REC_ENTER, &b);
    wf_buf_fini(&b);
    w->calls++;
}

/* ---- runs ------------------------------------------------------------------------------ */
void wfb__run_encode(wf_buf *b, const wfb_vlegacy *l, const wfb_vmodern *m, const wfb_vcase *c)
{
    wf_codec_put_uint(b, (uintptr_t)l);
    wf_codec_put_uint(b, (uintptr_t)m);
    wf_codec_put_str(b, c->name ? c->name : "");
    wf_codec_put_uint(b, c->input_count);
    for (size_t i = 0; i < c->input_count; i++) {
        wf_codec_put_str(b, c->inputs[i].name);
        wf_codec_put_str(b, c->inputs[i].json);
    }
    wf_codec_put_uint(b, c->event_count);
    for (size_t i = 0; i < c->event_count; i++) {
        wf_codec_put_str(b, c->events[i].name);
        put_opt_str(b, c->events[i].payload);
    }
}

static bool get_str(wf_reader *r, char **out)
{
    return (*out = wf_codec_get_str(r, NULL)) != NULL;
}

static bool get_opt(wf_reader *r, char **out)
{
    *out = NULL;
    return !wf_codec_get_uint(r) || get_str(r, out);
}

static bool run_decode(wf_reader *r, wfb_vlegacy **l, wfb_vmodern **m, wfb_vcase *c)
{
    memset(c, 0, sizeof *c);
    *l = (wfb_vlegacy *)(uintptr_t)wf_codec_get_uint(r);
    *m = (wfb_vmodern *)(uintptr_t)wf_codec_get_uint(r);
    bool ok = get_str(r, &c->name);
    size_t n = ok ? (size_t)wf_codec_get_uint(r) : 0;
    ok = ok && n <= wf_reader_left(r) && (c->inputs = wf_calloc(n + 1, sizeof *c->inputs));
    for (size_t i = 0; ok && i < n; i++, c->input_count++)
        ok = get_str(r, &c->inputs[i].name) && get_str(r, &c->inputs[i].json);
    n = ok ? (size_t)wf_codec_get_uint(r) : 0;
    ok = ok && n <= wf_reader_left(r) && (c->events = wf_calloc(n + 1, sizeof *c->events));
    for (size_t i = 0; ok && i < n; i++, c->event_count++)
        ok = get_str(r, &c->events[i].name) && get_opt(r, &c->events[i].payload);
    return ok && wf_reader_ok(r) && (*l || *m);
}

/* The next RUN record into in (its payload from *at). False: the pool closed the socket. */
static bool read_run(int fd, wf_buf *in, size_t *at, size_t *len)
{
    wf_buf_reset(in);
    for (;;) {
        wf_reader r;
        wf_reader_init(&r, in->data ? in->data : "", in->len, NULL);
        unsigned tag = wf_codec_get_u8(&r);
        *len = (size_t)wf_codec_get_uint(&r);
        if (wf_reader_ok(&r) && wf_reader_left(&r) >= *len) {
            if (tag != WFB__REC_RUN)
                _exit(123); /* not from a pool */
            *at = in->len - wf_reader_left(&r);
            return true;
        }
        char chunk[65536];
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        wf_buf_add(in, chunk, (size_t)n);
        if (in->oom)
            _exit(121);
    }
}

static void run_one(worker *w, const void *body, size_t len)
{
    wf_reader r;
    wf_reader_init(&r, body, len, NULL);
    wfb_vlegacy *l;
    wfb_vmodern *m;
    wfb_vcase c;
    wfb_vobs obs;
    memset(&obs, 0, sizeof obs);
    wf_error err = WF_ERROR_INIT;
    wf_status rc = WF_E_NOMEM;
    if (run_decode(&r, &l, &m, &c)) {
        wf_native_watch_set(on_enter, w);
        rc = l ? wfb_vlegacy_run(l, &c, &obs, &err) : wfb_vmodern_run(m, &c, &obs, &err);
        wf_native_watch_set(NULL, NULL);
    } else {
        wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
    }
    wf_buf b;
    wf_buf_init(&b);
    if (rc == WF_OK)
        encode_obs(&b, &obs);
    else
        wf_codec_put_str(&b, err.message);
    journal_add(w, rc == WF_OK ? WFB__REC_RESULT : WFB__REC_FAIL, &b);
    wf_buf_reset(&b);
    send_rec(w->fd, WFB__REC_DONE, &b);
    wf_buf_fini(&b);
    wfb_vobs_fini(&obs);
    wfb_vcase_fini(&c);
}

/* ---- the worker process ------------------------------------------------------------------ */
/* The pool's signal handlers and standard output are not the runs' (native code printing
 * must not reach verify's report). */
static int worker_setup(int fd, const int *close_fds, size_t close_count)
{
    for (size_t i = 0; i < close_count; i++)
        close(close_fds[i]);
    int high = fcntl(fd, F_DUPFD, WORKER_FD_MIN);
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
    /* The heap a run frees stays the worker's for the next run, instead of going back to
     * the system and being faulted in and zeroed again (a run of a long loop builds an
     * observation of a hundred megabytes). */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
        dup2(devnull, STDOUT_FILENO);
        close(devnull);
    }
    return fd;
}

_Noreturn void wfb__worker_main(int fd, wfb__journal *jr, const int *close_fds,
                                size_t close_count)
{
    worker w = {.fd = worker_setup(fd, close_fds, close_count), .jr = jr};
    wfb__fresh *fresh = NULL;
    if (wfb__fresh_create(&fresh, NULL) != WF_OK)
        _exit(122);
    wf_buf in;
    wf_buf_init(&in);
    for (size_t at, len; read_run(w.fd, &in, &at, &len);) {
        w.calls = 0;
        run_one(&w, in.data + at, len);
        if (w.calls) /* a run that made no native call changed no native state */
            wfb__fresh_restore(fresh);
    }
    _exit(0); /* no atexit handler of verify runs here */
}

/* wfm_track.c — the tracker: filters records through its profile, copies each kept record as
 * a fixed binary header plus its strings into the emitting thread's own stream (no lock, no
 * formatting), and publishes a thread's records at the end of each run (one atomic ticket);
 * the tracker's thread formats them as JSON lines and writes the file, store and ring
 * participants, so a worker never formats, waits on I/O or wakes anyone per record. Published
 * batches are written in ticket order, so lines keep emission order across threads. */
#include <assert.h>
#include <pthread.h>
#include <sched.h> /* sched_yield */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/wf_mem.h"
#include "wfm_track.h"
#include "wfm_store.h"
#include "wfm_track_int.h"

#define MAX_FILES 4
#define CHUNK_BYTES (64 * 1024) /* a stream grows by chunks of this size */
#define MAX_CHUNKS 256          /* unwritten chunks before emitters wait (16 MB) */
#define GATHER_NS 2000000       /* after a wake-up, let records gather for up to 2 ms */

/* ---- binary records ---------------------------------------------------------------------- */

/* The variable fields of a record, in the order they appear in its JSON line. PAYLOAD, FAULT
 * and DATA are JSON already (values are rendered on the emitting thread: they are borrowed). */
enum { F_INSTANCE, F_STATE, F_ACTIVITY, F_ACTIVITY_ID, F_CHILD, F_CHILD_ID, F_NAME,
       F_PAYLOAD, F_FAULT, F_DATA, F_COUNT };
#define ABSENT UINT32_MAX
#define REC_TRAILER 0xffffu /* kind of the record closing a published batch (seq: ticket) */

typedef struct brec {
    uint32_t size; /* header and bytes, rounded up to 8 */
    uint32_t kind;
    uint64_t seq;
    int64_t time_us;
    uint32_t len[F_COUNT]; /* ABSENT: no such field */
    /* the fields' bytes follow, in F_* order */
} brec;

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)
#define TRAILER_BYTES ALIGN8(sizeof(brec))

typedef struct chunk {
    _Atomic(struct chunk *) next; /* set once the writer moved on (after its last publish) */
    _Atomic size_t published;     /* bytes the tracker's thread may read */
    size_t used, cap;             /* writer only */
    unsigned char data[];
} chunk;

/* One emitting thread's records (one writer, the tracker's thread reading). */
typedef struct stream {
    struct stream *next;  /* the tracker's list */
    const void *owner;    /* the writing thread's token */
    chunk *wr;            /* writer: the chunk being filled */
    size_t wr_published;  /* writer: what it last published in wr */
    unsigned depth;       /* writer: open batches */
    _Atomic(chunk *) first; /* the stream's first chunk (set once by the writer) */
    chunk *rd;            /* reader: the chunk being read */
    size_t rd_off;
    size_t peek_end;      /* reader: end of the next batch found (0: not looked yet) */
    uint64_t peek_ticket;
} stream;

/* A compiled plan (wfm_track_int.h), one per definition content, in the tracker's list. */
struct wfm__track_plan {
    wfm__track_plan *next;
    uint64_t hash;     /* the definition's content */
    size_t count;      /* its nodes */
    uint16_t masks[];  /* by node index */
};

/* A record kept for the store participant: offsets into wfm_tracker.pend_text. */
typedef struct pend_rec {
    size_t inst_off, rec_off, rec_len;
    int64_t seq, time_us;
    const char *kind; /* static */
} pend_rec;

struct wfm_tracker {
    const wfm_profile *profile; /* borrowed */
    unsigned kinds;             /* wfm_profile_kinds(profile) */
    unsigned act_states;        /* wfm_profile_activity_states(profile) */
    bool plain;                 /* the masks decide alone (no names, no odd states) */
    unsigned data_states;       /* plain: ActivityState states that carry variables */
    uint64_t serial;            /* tells trackers apart in the threads' caches */
    _Atomic(wfm__track_plan *) plans; /* compiled plans, newest first (added under lock) */
    pthread_mutex_t lock;
    pthread_cond_t work, drained, space;
    stream *streams;            /* under lock */
    chunk *spare;               /* recycled chunks, under lock */
    size_t live_chunks;         /* under lock */
    _Atomic uint64_t tickets;   /* batches published */
    uint64_t next_ticket;       /* the tracker's thread: next batch to write */
    uint64_t written_ticket;    /* under lock: batches written */
    _Atomic int sleeping;       /* the tracker's thread waits for work */
    _Atomic uint64_t dropped;
    bool stop, thread_running, flush_wanted, space_wanted;
    pthread_t thread;
    FILE *files[MAX_FILES];
    bool owns_file[MAX_FILES];
    char *paths[MAX_FILES]; /* owned copies, for wfm_tracker_close's messages */
    size_t file_count;
    wfm_store *store; /* borrowed: the store participant's */
    pend_rec *pend;   /* the tracker's thread: this pass's records for the store, */
    size_t pend_count, pend_cap;
    wf_buf pend_text; /* their instance ids and texts (each NUL-terminated) */
    char **ring; /* owned lines, ring_cap slots, under lock */
    size_t ring_cap, ring_start, ring_count;
    wf_buf out; /* the tracker's thread: the pass's lines */
};

static const char *const kind_names[WFM_REC_KIND_COUNT] = {
    "WorkflowInstance", "ActivityState",   "ActivityScheduled", "BookmarkResumption",
    "FaultPropagation", "CancelRequested", "CustomTracking",
};

const char *wfm_rec_kind_name(wfm_rec_kind kind)
{
    return kind < WFM_REC_KIND_COUNT ? kind_names[kind] : "Unknown";
}

/* Values of a record rendered as JSON (payload, fault, the data object). */
typedef struct rendered {
    wf_buf buf;
    size_t off[3], len[3];
    bool has[3];
} rendered;

static bool render_values(const wfm_track_record *rec, rendered *r)
{
    wf_buf_init(&r->buf);
    memset(r->has, 0, sizeof r->has);
    const wf_value *v[2] = {rec->payload, rec->fault};
    for (int i = 0; i < 2; i++) {
        if (!v[i])
            continue;
        r->off[i] = r->buf.len;
        wf_value_to_json(v[i], &r->buf);
        r->len[i] = r->buf.len - r->off[i];
        r->has[i] = true;
    }
    if (rec->data_count) {
        r->off[2] = r->buf.len;
        wf_buf_addc(&r->buf, '{');
        for (size_t i = 0; i < rec->data_count; i++) {
            wf_buf_adds(&r->buf, i ? ", " : "");
            wf_buf_add_json_string(&r->buf, rec->data_names[i], strlen(rec->data_names[i]));
            wf_buf_adds(&r->buf, ": ");
            wf_value_to_json(&rec->data_values[i], &r->buf);
        }
        wf_buf_addc(&r->buf, '}');
        r->len[2] = r->buf.len - r->off[2];
        r->has[2] = true;
    }
    return !r->buf.oom;
}

/* The record's fields as pointers and lengths; returns the encoded size. */
static size_t fields_of(const wfm_track_record *rec, const rendered *r, const char *p[F_COUNT],
                        uint32_t len[F_COUNT])
{
    p[F_INSTANCE] = rec->instance_id;
    p[F_STATE] = rec->state;
    p[F_ACTIVITY] = rec->activity;
    p[F_ACTIVITY_ID] = rec->activity_id;
    p[F_CHILD] = rec->child;
    p[F_CHILD_ID] = rec->child_id;
    p[F_NAME] = rec->name;
    size_t total = sizeof(brec);
    for (int f = F_INSTANCE; f <= F_NAME; f++) {
        len[f] = p[f] ? (uint32_t)strlen(p[f]) : ABSENT;
        total += p[f] ? len[f] : 0;
    }
    for (int i = 0; i < 3; i++) {
        p[F_PAYLOAD + i] = r && r->has[i] ? r->buf.data + r->off[i] : NULL;
        len[F_PAYLOAD + i] = p[F_PAYLOAD + i] ? (uint32_t)r->len[i] : ABSENT;
        total += p[F_PAYLOAD + i] ? len[F_PAYLOAD + i] : 0;
    }
    return ALIGN8(total);
}

static void encode(unsigned char *dst, size_t size, const wfm_track_record *rec,
                   const char *const p[F_COUNT], const uint32_t len[F_COUNT])
{
    brec h;
    h.size = (uint32_t)size;
    h.kind = (uint32_t)rec->kind;
    h.seq = rec->seq;
    h.time_us = rec->time_us;
    memcpy(h.len, len, sizeof h.len);
    memcpy(dst, &h, sizeof h);
    unsigned char *o = dst + sizeof h;
    for (int f = 0; f < F_COUNT; f++)
        if (len[f] != ABSENT) {
            memcpy(o, p[f], len[f]);
            o += len[f];
        }
}

/* ---- formatting (the tracker's thread) ---------------------------------------------------- */

/* Appends go through a small stack buffer into the wf_buf: one wf_buf_add per line or so. */
typedef struct writer {
    wf_buf *b;
    size_t n;
    char tmp[1024];
} writer;

static void w_flush(writer *w)
{
    wf_buf_add(w->b, w->tmp, w->n);
    w->n = 0;
}

static void w_put(writer *w, const void *p, size_t len)
{
    if (w->n + len > sizeof w->tmp) {
        w_flush(w);
        if (len > sizeof w->tmp) {
            wf_buf_add(w->b, p, len);
            return;
        }
    }
    memcpy(w->tmp + w->n, p, len);
    w->n += len;
}
#define W_LIT(w, lit) w_put((w), (lit), sizeof(lit) - 1)

static void w_key(writer *w, const char *key, size_t key_len)
{
    W_LIT(w, ", \"");
    w_put(w, key, key_len);
    W_LIT(w, "\": ");
}

/* A JSON string: copied when nothing in it needs escaping, else wf_buf_add_json_string. */
static void w_string(writer *w, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len && p[i] >= 0x20 && p[i] < 0x80 && p[i] != '"' && p[i] != '\\')
        i++;
    if (i < len) {
        w_flush(w);
        wf_buf_add_json_string(w->b, s, len);
        return;
    }
    W_LIT(w, "\"");
    w_put(w, s, len);
    W_LIT(w, "\"");
}

static void w_uint(writer *w, uint64_t v)
{
    char digits[24];
    size_t n = sizeof digits;
    do {
        digits[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    w_put(w, digits + n, sizeof digits - n);
}

/* ISO 8601 with microseconds; the "YYYY-MM-DDThh:mm:ss" part is cached per thread, since
 * records come many per second. */
static void w_time(writer *w, int64_t us)
{
    static _Thread_local int64_t cached_sec = INT64_MIN;
    static _Thread_local char cached[32];
    static _Thread_local size_t cached_len;
    int64_t sec = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
    if (sec != cached_sec) {
        char full[64];
        wf_datetime_format(sec * 1000000, full, sizeof full);
        size_t len = strcspn(full, ".Z");
        if (len >= sizeof cached)
            len = sizeof cached - 1;
        memcpy(cached, full, len);
        cached[len] = '\0';
        cached_len = len;
        cached_sec = sec;
    }
    char frac[8];
    int64_t f = us - sec * 1000000;
    for (int i = 6; i >= 1; i--, f /= 10)
        frac[i] = (char)('0' + f % 10);
    frac[0] = '.';
    W_LIT(w, ", \"time\": \"");
    w_put(w, cached, cached_len);
    w_put(w, frac, 7);
    W_LIT(w, "Z\"");
}

/* One encoded record as its JSON line (no newline), appended to b. */
static void format_brec(const unsigned char *src, wf_buf *b)
{
    static const struct {
        const char *key;
        size_t len;
    } keys[F_COUNT] = {
        [F_STATE] = {"state", 5},       [F_ACTIVITY] = {"activity", 8},
        [F_ACTIVITY_ID] = {"activityId", 10}, [F_CHILD] = {"child", 5},
        [F_CHILD_ID] = {"childId", 7},  [F_NAME] = {"name", 4},
        [F_PAYLOAD] = {"payload", 7},   [F_FAULT] = {"fault", 5},
        [F_DATA] = {"data", 4},
    };
    brec h;
    memcpy(&h, src, sizeof h);
    const char *p[F_COUNT];
    const char *at = (const char *)src + sizeof h;
    for (int f = 0; f < F_COUNT; f++) {
        p[f] = h.len[f] == ABSENT ? NULL : at;
        at += h.len[f] == ABSENT ? 0 : h.len[f];
    }
    writer w;
    w.b = b;
    w.n = 0;
    W_LIT(&w, "{\"record\": \"");
    const char *kind = wfm_rec_kind_name((wfm_rec_kind)h.kind);
    w_put(&w, kind, strlen(kind));
    W_LIT(&w, "\"");
    if (p[F_INSTANCE]) {
        W_LIT(&w, ", \"instance\": ");
        w_string(&w, p[F_INSTANCE], h.len[F_INSTANCE]);
    }
    W_LIT(&w, ", \"seq\": ");
    w_uint(&w, h.seq);
    w_time(&w, h.time_us);
    for (int f = F_STATE; f <= F_NAME; f++) {
        if (!p[f])
            continue;
        if (f == F_NAME && h.kind == WFM_REC_BOOKMARK_RESUMPTION)
            W_LIT(&w, ", \"bookmark\": ");
        else
            w_key(&w, keys[f].key, keys[f].len);
        w_string(&w, p[f], h.len[f]);
    }
    for (int f = F_PAYLOAD; f < F_COUNT; f++)
        if (p[f]) {
            w_key(&w, keys[f].key, keys[f].len);
            w_put(&w, p[f], h.len[f]);
        }
    W_LIT(&w, "}");
    w_flush(&w);
}

bool wfm_track_record_json(const wfm_track_record *rec, wf_buf *b)
{
    rendered r;
    bool ok = render_values(rec, &r);
    const char *p[F_COUNT];
    uint32_t len[F_COUNT];
    size_t size = fields_of(rec, &r, p, len);
    unsigned char *tmp = ok ? wf_malloc(size) : NULL;
    if (tmp) {
        encode(tmp, size, rec, p, len);
        format_brec(tmp, b);
        wf_free(tmp);
    }
    wf_buf_fini(&r.buf);
    return tmp && !b->oom;
}

/* ---- streams (the emitting threads) -------------------------------------------------------- */

static _Atomic uint64_t tracker_serials;
static _Thread_local char thread_token; /* its address tells threads apart */
static _Thread_local struct {
    uint64_t serial;
    stream *s;
} cached_stream;

/* This thread's stream in t (created on first use); NULL when memory ran out. */
static stream *my_stream(wfm_tracker *t)
{
    if (cached_stream.serial == t->serial)
        return cached_stream.s;
    pthread_mutex_lock(&t->lock);
    stream *s = t->streams;
    while (s && s->owner != &thread_token)
        s = s->next;
    if (!s && (s = wf_calloc(1, sizeof *s)) != NULL) {
        s->owner = &thread_token;
        s->next = t->streams;
        t->streams = s;
    }
    pthread_mutex_unlock(&t->lock);
    if (s) {
        cached_stream.serial = t->serial;
        cached_stream.s = s;
    }
    return s;
}

static void wake_thread(wfm_tracker *t)
{
    pthread_mutex_lock(&t->lock);
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->lock);
}

/* Close the writer's batch: a trailer with the next ticket, then the bytes become readable. */
static void publish(wfm_tracker *t, stream *s)
{
    chunk *c = s->wr;
    if (!c || c->used == s->wr_published)
        return;
    brec tr;
    memset(&tr, 0, sizeof tr);
    tr.size = (uint32_t)TRAILER_BYTES;
    tr.kind = REC_TRAILER;
    tr.seq = atomic_fetch_add(&t->tickets, 1);
    memcpy(c->data + c->used, &tr, sizeof tr);
    c->used += TRAILER_BYTES;
    s->wr_published = c->used;
    atomic_store_explicit(&c->published, c->used, memory_order_release);
    if (atomic_load(&t->sleeping))
        wake_thread(t);
}

/* Room for `size` bytes (plus the trailer) in the writer's chunk; NULL when memory ran out. */
static unsigned char *reserve(wfm_tracker *t, stream *s, size_t size)
{
    chunk *c = s->wr;
    if (c && c->cap - c->used >= size + TRAILER_BYTES)
        return c->data + c->used;
    publish(t, s); /* a batch never spans chunks */
    size_t cap = size + TRAILER_BYTES > CHUNK_BYTES ? size + TRAILER_BYTES : CHUNK_BYTES;
    pthread_mutex_lock(&t->lock);
    while (t->live_chunks >= MAX_CHUNKS && t->thread_running && !t->stop) {
        t->space_wanted = true;
        pthread_cond_signal(&t->work);
        pthread_cond_wait(&t->space, &t->lock);
    }
    chunk *n = NULL;
    if (cap == CHUNK_BYTES && t->spare) {
        n = t->spare;
        t->spare = atomic_load_explicit(&n->next, memory_order_relaxed);
    } else {
        n = wf_malloc(sizeof *n + cap);
    }
    if (n) {
        t->live_chunks++;
        if (t->live_chunks > MAX_CHUNKS / 2)
            pthread_cond_signal(&t->work);
    }
    pthread_mutex_unlock(&t->lock);
    if (!n)
        return NULL;
    atomic_init(&n->next, NULL);
    atomic_init(&n->published, 0);
    n->used = 0;
    n->cap = cap;
    s->wr_published = 0;
    s->wr = n;
    if (c)
        atomic_store_explicit(&c->next, n, memory_order_release);
    else
        atomic_store_explicit(&s->first, n, memory_order_release);
    return n->data;
}

/* ---- the tracker's thread ------------------------------------------------------------------ */

static void ring_put(wfm_tracker *t, const char *text, size_t len)
{
    char *copy = wf_strndup(text, len);
    if (!copy) {
        atomic_fetch_add(&t->dropped, 1);
        return;
    }
    pthread_mutex_lock(&t->lock);
    if (t->ring_count == t->ring_cap) {
        wf_free(t->ring[t->ring_start]);
        t->ring_start = (t->ring_start + 1) % t->ring_cap;
        t->ring_count--;
    }
    t->ring[(t->ring_start + t->ring_count++) % t->ring_cap] = copy;
    pthread_mutex_unlock(&t->lock);
}

/* Keep a record for the store participant; store_flush writes the pass's records. */
static void store_put(wfm_tracker *t, const brec *h, const char *instance, const char *text,
                      size_t len)
{
    if (t->pend_count == t->pend_cap) {
        size_t cap = t->pend_cap ? t->pend_cap * 2 : 64;
        pend_rec *n = wf_realloc(t->pend, cap * sizeof *n);
        if (!n) {
            atomic_fetch_add(&t->dropped, 1);
            return;
        }
        t->pend = n;
        t->pend_cap = cap;
    }
    wf_buf *b = &t->pend_text;
    pend_rec *r = &t->pend[t->pend_count];
    r->inst_off = b->len;
    wf_buf_add(b, instance ? instance : "", instance ? h->len[F_INSTANCE] : 0);
    wf_buf_addc(b, '\0');
    r->rec_off = b->len;
    r->rec_len = len;
    wf_buf_add(b, text, len);
    wf_buf_addc(b, '\0');
    r->seq = (int64_t)h->seq;
    r->time_us = h->time_us;
    r->kind = wfm_rec_kind_name((wfm_rec_kind)h->kind);
    if (b->oom) {
        atomic_fetch_add(&t->dropped, 1);
        return;
    }
    t->pend_count++;
}

/* Write the pass's records to the store in one transaction (dropped, and counted, if that
 * fails: tracking never stops the workflows). */
static void store_flush(wfm_tracker *t)
{
    if (!t->pend_count)
        return;
    wfm_store_track_rec *recs = wf_calloc(t->pend_count, sizeof *recs);
    wf_error err = WF_ERROR_INIT;
    for (size_t i = 0; recs && i < t->pend_count; i++) {
        const pend_rec *r = &t->pend[i];
        recs[i] = (wfm_store_track_rec){.instance = t->pend_text.data + r->inst_off,
                                        .seq = r->seq,
                                        .time_us = r->time_us,
                                        .kind = r->kind,
                                        .record = t->pend_text.data + r->rec_off,
                                        .record_len = r->rec_len};
    }
    if (!recs || wfm_store_put_tracking(t->store, recs, t->pend_count, &err) != WF_OK)
        atomic_fetch_add(&t->dropped, t->pend_count);
    wf_free(recs);
    t->pend_count = 0;
    wf_buf_reset(&t->pend_text);
}

/* Write the records of one batch: [from, to) of chunk c. Lines are formatted straight into
 * the pass's output (kept there only when a file participant will write it). */
static void write_batch(wfm_tracker *t, const chunk *c, size_t from, size_t to)
{
    while (from < to) {
        brec h;
        memcpy(&h, c->data + from, sizeof h);
        if (h.kind != REC_TRAILER) {
            size_t start = t->out.len;
            format_brec(c->data + from, &t->out);
            if (t->out.oom) {
                atomic_fetch_add(&t->dropped, 1);
                wf_buf_fini(&t->out);
                wf_buf_init(&t->out);
            } else {
                const char *text = t->out.data + start;
                size_t len = t->out.len - start;
                if (t->ring)
                    ring_put(t, text, len);
                if (t->store)
                    store_put(t, &h,
                              h.len[F_INSTANCE] == ABSENT ? NULL
                                                          : (const char *)c->data + from + sizeof h,
                              text, len);
                if (t->file_count) {
                    wf_buf_addc(&t->out, '\n');
                } else { /* drop the text, keeping wf_buf's NUL at data[len] */
                    t->out.len = start;
                    t->out.data[start] = '\0';
                }
            }
        }
        from += h.size;
    }
}

/* The end and ticket of the next published batch of s, if there is one. */
static bool peek_batch(wfm_tracker *t, stream *s)
{
    if (s->peek_end)
        return true;
    if (!s->rd)
        s->rd = atomic_load_explicit(&s->first, memory_order_acquire);
    for (;;) {
        chunk *c = s->rd;
        if (!c)
            return false;
        chunk *next = atomic_load_explicit(&c->next, memory_order_acquire);
        size_t pub = atomic_load_explicit(&c->published, memory_order_acquire);
        if (s->rd_off < pub) {
            size_t at = s->rd_off;
            for (;;) {
                brec h;
                memcpy(&h, c->data + at, sizeof h);
                at += h.size;
                if (h.kind == REC_TRAILER) {
                    s->peek_end = at;
                    s->peek_ticket = h.seq;
                    return true;
                }
            }
        }
        if (!next)
            return false;
        /* the writer moved on: recycle the chunk it left */
        s->rd = next;
        s->rd_off = 0;
        pthread_mutex_lock(&t->lock);
        t->live_chunks--;
        if (c->cap == CHUNK_BYTES) {
            atomic_store_explicit(&c->next, t->spare, memory_order_relaxed);
            t->spare = c;
        } else {
            wf_free(c);
        }
        if (t->space_wanted) {
            t->space_wanted = false;
            pthread_cond_broadcast(&t->space);
        }
        pthread_mutex_unlock(&t->lock);
    }
}

/* Write every batch published so far, in ticket order; returns the batches written. */
static uint64_t drain(wfm_tracker *t)
{
    uint64_t done = 0;
    int spins = 0;
    wf_buf_reset(&t->out);
    stream *list = NULL;
    while (t->next_ticket < atomic_load(&t->tickets)) {
        if (!list || spins) { /* a stream may have joined */
            pthread_mutex_lock(&t->lock);
            list = t->streams;
            pthread_mutex_unlock(&t->lock);
        }
        bool found = false;
        for (stream *s = list; s; s = s->next) {
            if (!peek_batch(t, s) || s->peek_ticket != t->next_ticket)
                continue;
            write_batch(t, s->rd, s->rd_off, s->peek_end);
            s->rd_off = s->peek_end;
            s->peek_end = 0;
            t->next_ticket++;
            done++;
            found = true;
            spins = 0;
            break;
        }
        if (!found && ++spins > 64) /* a writer took its ticket and is about to publish */
            sched_yield();
    }
    for (size_t f = 0; f < t->file_count && t->out.len; f++) {
        fwrite(t->out.data, 1, t->out.len, t->files[f]);
        fflush(t->files[f]);
    }
    if (t->out.oom) {
        wf_buf_fini(&t->out);
        wf_buf_init(&t->out);
    }
    if (t->store)
        store_flush(t);
    return done;
}

static void gather_wait(wfm_tracker *t)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += GATHER_NS;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&t->work, &t->lock, &until);
}

static void *flush_main(void *arg)
{
    wfm_tracker *t = arg;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        pthread_mutex_unlock(&t->lock);
        drain(t);
        pthread_mutex_lock(&t->lock);
        t->written_ticket = t->next_ticket;
        pthread_cond_broadcast(&t->drained);
        bool more = t->next_ticket < atomic_load(&t->tickets);
        if (t->stop && !more)
            break;
        if (more || t->stop)
            continue;
        atomic_store(&t->sleeping, 1);
        if (t->next_ticket == atomic_load(&t->tickets) && !t->flush_wanted && !t->stop)
            pthread_cond_wait(&t->work, &t->lock);
        atomic_store(&t->sleeping, 0);
        /* One wake-up per batch of records, not per record: let more arrive. */
        if (!t->stop && !t->flush_wanted && !t->space_wanted && t->live_chunks <= MAX_CHUNKS / 2)
            gather_wait(t);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

static wf_status start_thread(wfm_tracker *t, wf_error *err)
{
    if (t->thread_running)
        return WF_OK;
    if (pthread_create(&t->thread, NULL, flush_main, t) != 0)
        return wf_error_set(err, WF_E_NOMEM, NULL, "cannot start the tracking thread");
    t->thread_running = true;
    return WF_OK;
}

/* ---- the public API ----------------------------------------------------------------------- */

wf_status wfm_tracker_create(const wfm_profile *profile, wfm_tracker **out, wf_error *err)
{
    *out = NULL;
    wfm_tracker *t = wf_calloc(1, sizeof *t);
    if (!t)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory creating a tracker");
    t->profile = profile;
    t->kinds = wfm_profile_kinds(profile);
    t->act_states = wfm_profile_activity_states(profile);
    t->plain = wfm__profile_plain(profile, &t->data_states);
    t->serial = atomic_fetch_add(&tracker_serials, 1) + 1;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->work, NULL);
    pthread_cond_init(&t->drained, NULL);
    pthread_cond_init(&t->space, NULL);
    wf_buf_init(&t->out);
    *out = t;
    return WF_OK;
}

static void stop_thread(wfm_tracker *t)
{
    if (!t->thread_running)
        return;
    pthread_mutex_lock(&t->lock);
    t->stop = true;
    pthread_cond_signal(&t->work);
    pthread_cond_broadcast(&t->space);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    t->thread_running = false;
}

wf_status wfm_tracker_close(wfm_tracker *t, wf_error *err)
{
    if (!t)
        return WF_OK;
    stop_thread(t);
    wf_status st = WF_OK;
    for (size_t f = 0; f < t->file_count; f++) {
        if (!t->owns_file[f] || !t->files[f])
            continue;
        bool failed = ferror(t->files[f]) != 0;
        failed = fclose(t->files[f]) != 0 || failed;
        t->files[f] = NULL;
        if (failed && st == WF_OK) {
            wf_loc loc = {t->paths[f], 0, 0};
            st = wf_error_set(err, WF_E_IO, &loc, "cannot write the tracking file");
        }
    }
    return st;
}

static void free_chunks(chunk *c)
{
    while (c) {
        chunk *next = atomic_load_explicit(&c->next, memory_order_relaxed);
        wf_free(c);
        c = next;
    }
}

void wfm_tracker_destroy(wfm_tracker *t)
{
    if (!t)
        return;
    stop_thread(t);
    for (size_t f = 0; f < t->file_count; f++) {
        if (t->owns_file[f] && t->files[f])
            fclose(t->files[f]);
        wf_free(t->paths[f]);
    }
    wf_free(t->pend);
    wf_buf_fini(&t->pend_text);
    for (size_t i = 0; i < t->ring_count; i++)
        wf_free(t->ring[(t->ring_start + i) % t->ring_cap]);
    wf_free(t->ring);
    while (t->streams) {
        stream *next = t->streams->next;
        stream *s = t->streams;
        free_chunks(s->rd ? s->rd : atomic_load(&s->first));
        wf_free(t->streams);
        t->streams = next;
    }
    free_chunks(t->spare);
    for (wfm__track_plan *p = atomic_load(&t->plans), *next; p; p = next) {
        next = p->next;
        wf_free(p);
    }
    wf_buf_fini(&t->out);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->work);
    pthread_cond_destroy(&t->drained);
    pthread_cond_destroy(&t->space);
    wf_free(t);
}

wf_status wfm_tracker_add_file(wfm_tracker *t, const char *path, wf_error *err)
{
    if (t->file_count == MAX_FILES)
        return wf_error_set(err, WF_E_LIMIT, NULL, "at most %d tracking files", MAX_FILES);
    bool is_stdout = strcmp(path, "-") == 0;
    char *copy = wf_strdup(path);
    if (!copy)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    FILE *f = is_stdout ? stdout : fopen(path, "a");
    if (!f) {
        wf_free(copy);
        wf_loc loc = {path, 0, 0};
        return wf_error_set(err, WF_E_IO, &loc, "cannot open the tracking file");
    }
    t->paths[t->file_count] = copy;
    t->files[t->file_count] = f;
    t->owns_file[t->file_count++] = !is_stdout;
    return start_thread(t, err);
}

wf_status wfm_tracker_add_store(wfm_tracker *t, wfm_store *store, wf_error *err)
{
    assert(store);
    if (t->store)
        return wf_error_set(err, WF_E_STATE, NULL, "a tracker writes to one store");
    t->store = store;
    wf_status st = start_thread(t, err);
    if (st != WF_OK)
        t->store = NULL;
    return st;
}

wf_status wfm_tracker_add_ring(wfm_tracker *t, size_t capacity, wf_error *err)
{
    if (t->ring || capacity == 0)
        return wf_error_set(err, WF_E_STATE, NULL, "a tracker has at most one non-empty ring");
    t->ring = wf_calloc(capacity, sizeof *t->ring);
    if (!t->ring)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory creating a tracking ring");
    t->ring_cap = capacity;
    wf_status st = start_thread(t, err);
    if (st != WF_OK) {
        wf_free(t->ring);
        t->ring = NULL;
    }
    return st;
}

size_t wfm_tracker_ring_count(wfm_tracker *t)
{
    wfm_tracker_flush(t);
    pthread_mutex_lock(&t->lock);
    size_t n = t->ring_count;
    pthread_mutex_unlock(&t->lock);
    return n;
}

bool wfm_tracker_ring_get(wfm_tracker *t, size_t index, char *buf, size_t size)
{
    wfm_tracker_flush(t);
    pthread_mutex_lock(&t->lock);
    bool ok = index < t->ring_count;
    if (ok)
        snprintf(buf, size, "%s", t->ring[(t->ring_start + index) % t->ring_cap]);
    pthread_mutex_unlock(&t->lock);
    return ok;
}

bool wfm_tracker_wants(const wfm_tracker *t, wfm_rec_kind kind)
{
    return t && (t->kinds & (1u << kind));
}

bool wfm_tracker_wants_activity(const wfm_tracker *t, unsigned act_state)
{
    return t && (t->act_states & act_state);
}

static unsigned act_state_of(const char *state)
{
    static const char *const names[] = {"Executing", "Closed", "Faulted", "Canceled"};
    for (unsigned i = 0; state && i < 4; i++)
        if (strcmp(names[i], state) == 0)
            return 1u << i;
    return 0;
}

/* Whether the profile keeps rec, and whether with its variables. */
static bool keeps(const wfm_tracker *t, const wfm_track_record *rec, bool *want_data)
{
    if (!wfm_tracker_wants(t, rec->kind))
        return false;
    if (!t->plain)
        return wfm_profile_match(t->profile, rec, want_data);
    *want_data = false;
    if (rec->kind != WFM_REC_ACTIVITY_STATE)
        return true;
    unsigned bit = act_state_of(rec->state);
    *want_data = (t->data_states & bit) != 0;
    return (t->act_states & bit) != 0;
}

static void emit_kept(wfm_tracker *t, const wfm_track_record *rec, bool want_data);

void wfm_tracker_emit(wfm_tracker *t, const wfm_track_record *rec)
{
    bool want_data = false;
    if (t->thread_running && keeps(t, rec, &want_data))
        emit_kept(t, rec, want_data);
}

void wfm__tracker_emit_kept(wfm_tracker *t, const wfm_track_record *rec, bool want_data)
{
    if (t->thread_running)
        emit_kept(t, rec, want_data);
}

static void emit_kept(wfm_tracker *t, const wfm_track_record *rec, bool want_data)
{
    wfm_track_record copy = *rec;
    if (!want_data && rec->kind != WFM_REC_CUSTOM) /* WF4 custom records carry their data */
        copy.data_count = 0;
    rendered r;
    bool values = copy.payload || copy.fault || copy.data_count;
    if (values && !render_values(&copy, &r)) {
        wf_buf_fini(&r.buf);
        atomic_fetch_add(&t->dropped, 1);
        return;
    }
    const char *p[F_COUNT];
    uint32_t len[F_COUNT];
    size_t size = fields_of(&copy, values ? &r : NULL, p, len);
    stream *s = my_stream(t);
    unsigned char *dst = s ? reserve(t, s, size) : NULL;
    if (dst) {
        encode(dst, size, &copy, p, len);
        s->wr->used += size;
        if (!s->depth)
            publish(t, s);
    } else {
        atomic_fetch_add(&t->dropped, 1);
    }
    if (values)
        wf_buf_fini(&r.buf);
}

/* ---- plans: name patterns compiled per definition --------------------------------------- */

static wfm__track_plan *plan_find(wfm__track_plan *p, uint64_t hash, size_t count)
{
    for (; p; p = p->next)
        if (p->hash == hash && p->count == count)
            return p;
    return NULL;
}

/* Each node's bits, from the records it would give (the fields wfm__track_sched fills). */
static wfm__track_plan *plan_compile(const wfm_tracker *t, const wfm_definition *def)
{
    static const char *const states[4] = {"Executing", "Closed", "Faulted", "Canceled"};
    size_t n = wfm_definition_node_count(def);
    wfm__track_plan *p = wf_malloc(sizeof *p + n * sizeof p->masks[0]);
    if (!p)
        return NULL;
    p->next = NULL;
    p->hash = wfm_definition_hash(def);
    p->count = n;
    bool names_handler = wfm__profile_names_child(t->profile, WFM_REC_FAULT_PROPAGATION);
    for (size_t i = 0; i < n; i++) {
        wfm_track_record r = {.kind = WFM_REC_ACTIVITY_STATE};
        r.activity = wfm_node_display_name(wfm_definition_node_at(def, i));
        unsigned mask = 0;
        for (unsigned st = 0; st < 4; st++) {
            bool data = false;
            r.state = states[st];
            if (wfm_profile_match(t->profile, &r, &data))
                mask |= (1u << st) | (data ? 1u << (st + WFM__PLAN_DATA_SHIFT) : 0);
        }
        r.kind = WFM_REC_FAULT_PROPAGATION; /* without a handler: passes whatever it is */
        r.state = NULL;
        if (wfm_profile_match(t->profile, &r, NULL))
            mask |= WFM__PLAN_FAULT;
        else if (names_handler)
            mask |= WFM__PLAN_FAULT_ASK;
        p->masks[i] = (uint16_t)mask;
    }
    return p;
}

const wfm__track_plan *wfm__track_plan_get(wfm_tracker *t, const wfm_definition *def)
{
    if (!t || t->plain || !t->kinds || !def)
        return NULL;
    uint64_t hash = wfm_definition_hash(def);
    size_t count = wfm_definition_node_count(def);
    wfm__track_plan *p = plan_find(atomic_load_explicit(&t->plans, memory_order_acquire), hash,
                                   count);
    if (p)
        return p;
    wfm__track_plan *made = plan_compile(t, def);
    if (!made)
        return NULL;
    pthread_mutex_lock(&t->lock);
    p = plan_find(atomic_load_explicit(&t->plans, memory_order_relaxed), hash, count);
    if (!p) { /* else another thread compiled it meanwhile */
        made->next = atomic_load_explicit(&t->plans, memory_order_relaxed);
        atomic_store_explicit(&t->plans, made, memory_order_release);
        p = made;
        made = NULL;
    }
    pthread_mutex_unlock(&t->lock);
    wf_free(made);
    return p;
}

bool wfm__track_plan_decides(const wfm__track_plan *p, const wfm_node *node, unsigned *mask)
{
    uint32_t i = p ? wfm_node_index(node) : 0;
    if (!p || i >= p->count)
        return false;
    *mask = p->masks[i];
    return true;
}

void wfm__tracker_batch_begin(wfm_tracker *t)
{
    if (!t || !t->kinds || !t->thread_running)
        return;
    stream *s = my_stream(t);
    if (s)
        s->depth++;
}

void wfm__tracker_batch_end(wfm_tracker *t)
{
    if (!t || !t->kinds || !t->thread_running)
        return;
    stream *s = my_stream(t);
    if (s && s->depth && --s->depth == 0)
        publish(t, s);
}

void wfm_tracker_flush(wfm_tracker *t)
{
    if (!t || !t->thread_running)
        return;
    uint64_t target = atomic_load(&t->tickets);
    pthread_mutex_lock(&t->lock);
    t->flush_wanted = true;
    pthread_cond_signal(&t->work);
    while (t->written_ticket < target)
        pthread_cond_wait(&t->drained, &t->lock);
    t->flush_wanted = false;
    pthread_mutex_unlock(&t->lock);
}

uint64_t wfm_tracker_dropped(const wfm_tracker *t)
{
    return atomic_load(&((wfm_tracker *)t)->dropped);
}

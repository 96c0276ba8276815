/* wfm_track.c — the tracker: filters records through its profile and copies each kept record
 * in binary into the emitting thread's own stream (no lock, no formatting): the scheduler's
 * common records as fixed 32-byte entries (node indexes, a cheap clock's ticks), the others as
 * a header plus their strings; a thread's records are published at the end of each run (one
 * atomic ticket). The tracker's thread resolves names through the definition's plan, formats
 * JSON lines and writes the file, store and ring participants, so a worker never formats,
 * waits on I/O or wakes anyone per record. Batches are written in ticket order, so lines keep
 * emission order across threads. */
#define _GNU_SOURCE /* fallocate */
#include <assert.h>
#include <errno.h>
#include <fcntl.h> /* open, fallocate */
#include <pthread.h>
#include <sched.h> /* sched_yield */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h> /* fstat */
#include <time.h>
#include <unistd.h> /* write, ftruncate */
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h> /* __rdtsc */
#define HAVE_TSC 1
#endif

#include "../common/wf_jsonw.h"
#include "../common/wf_mem.h"
#include "../common/wf_random.h" /* WF_ID_LEN */
#include "wfm_track.h"
#include "wfm_store.h"
#include "wfm_track_int.h"

#define MAX_FILES 4
#define CHUNK_BYTES (64 * 1024) /* a stream grows by chunks of this size */
#define MAX_CHUNKS 256          /* unwritten chunks before emitters wait (16 MB) */
#define GATHER_NS 10000000      /* while records come, the thread looks every 10 ms */
#define OUT_BYTES (256 * 1024)  /* lines go to the files in writes of this size */
#define PREALLOC_MIN (1 << 20)  /* a file's first preallocation, doubling up to PREALLOC_MAX */
#define PREALLOC_MAX (64 << 20)

/* ---- binary records ---------------------------------------------------------------------- */

/* The variable fields of a record, in the order they appear in its JSON line. PAYLOAD, FAULT
 * and DATA are JSON already (values are rendered on the emitting thread: they are borrowed). */
enum { F_INSTANCE, F_STATE, F_ACTIVITY, F_ACTIVITY_ID, F_CHILD, F_CHILD_ID, F_NAME,
       F_PAYLOAD, F_FAULT, F_DATA, F_COUNT };
#define ABSENT UINT32_MAX
#define REC_TRAILER 0xffffu /* kind of the record closing a published batch (seq: ticket) */
#define REC_CTX 0xfffeu     /* kind of a context entry (crec) */
#define REC_FAST 0x10000u   /* kind bit of a fixed entry (frec): REC_FAST | state << 8 | kind */
#define REC_TICKS 0x20000u  /* frec: the stamp is clock ticks, not microseconds */
#define NO_NODE UINT32_MAX

/* What every entry starts with. */
typedef struct rec_head {
    uint32_t size; /* the entry's bytes, a multiple of 8 */
    uint32_t kind;
} rec_head;

/* A fixed entry (wfm__tracker_emit_node): names and ids are the plan's, by node index, the
 * instance the one of the last context entry of the batch. */
typedef struct frec {
    uint32_t size;
    uint32_t kind;
    uint64_t seq;
    int64_t stamp;
    uint32_t activity, child; /* node indexes, NO_NODE: none */
} frec;

/* The context of the fixed entries after it, until the next one or the batch's end. */
typedef struct crec {
    uint32_t size;
    uint32_t kind;
    const wfm__track_plan *plan; /* the tracker's: lives until wfm_tracker_destroy */
    int64_t anchor_us;           /* the real clock at anchor_tick */
    uint64_t anchor_tick;
    uint32_t id_len, pad;
    /* the instance id's bytes follow */
} crec;

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

/* A record number's decimal digits, kept by the tracker's thread to write the next number
 * of the same instance (most often the last plus one) by incrementing the text. */
typedef struct seq_text {
    uint64_t seq;
    size_t len;     /* 0: none kept */
    char digits[24]; /* len digits, copied 24 bytes at a time */
} seq_text;

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
    /* writer: the context entry its batch holds (ctx_seq NULL: none yet) */
    const uint64_t *ctx_seq;
    const wfm__track_plan *ctx_plan;
    char ctx_id[WF_ID_LEN + 1];
    /* reader: the context of the entries being written */
    const wfm__track_plan *rd_plan;
    int64_t rd_anchor_us, rd_last_us;
    uint64_t rd_anchor_tick;
    size_t rd_inst_len, rd_id_len;
    char rd_inst[32 + 6 * (WF_ID_LEN + 1)]; /* ", \"instance\": ID, \"seq\": " */
    seq_text rd_seq; /* the last fixed entry's number in decimal */
    char rd_id[WF_ID_LEN + 1];
} stream;

/* A compiled plan (wfm_track_int.h), one per definition content, in the tracker's list. */
struct wfm__track_plan {
    wfm__track_plan *next;
    uint64_t hash;     /* the definition's content */
    size_t count;      /* its nodes */
    bool decides;      /* masks hold the profile's answers (a profile with names) */
    const char *text;  /* node i's members as a record's activity and as its child: */
    const uint32_t *off; /* [2i] ", \"activity\": NAME, \"activityId\": ID", [2i + 1]
                          * ", \"child\": NAME, \"childId\": ID", [2i + 2] their end */
    uint16_t masks[];  /* by node index; off and text follow in the same block */
};

/* A record kept for the store participant: offsets into wfm_tracker.pend_text. */
typedef struct pend_rec {
    size_t inst_off, rec_off, rec_len;
    int64_t seq, time_us;
    const char *kind; /* static */
} pend_rec;

/* A ring entry: a line, in a buffer kept for the next line the slot takes, or a fixed entry
 * kept in binary (formatted when read, like an ETW buffer: the ring's cost stays a copy). */
typedef struct ring_slot {
    char *text;
    size_t cap;
    bool fixed;
    frec rec;
    int64_t us;
    const wfm__track_plan *plan;
    char id[WF_ID_LEN + 1];
} ring_slot;

/* A file participant: stdout through stdio (other output shares it), any other file through
 * its descriptor, written in large appends into space reserved ahead (fallocate, growing
 * geometrically and kept beyond the file's size), so the file system allocates blocks a few
 * times per file rather than on every page; wfm_tracker_close gives back what is unused. */
typedef struct tfile {
    FILE *stream;   /* stdout, or NULL */
    int fd;         /* an owned file's, or -1 */
    char *path;     /* owned copy, for wfm_tracker_close's messages */
    off_t end;      /* where the next append lands (the size, as far as this tracker knows) */
    off_t reserved; /* space reserved up to here */
    off_t step;     /* the next reservation's size; 0: the file system cannot reserve */
    bool failed;    /* a write failed */
} tfile;

/* Three groups, padded apart so that the tracker's thread writing its own fields never
 * takes the cache line emitters read on every record. */
struct wfm_tracker {
    /* read by the emitting threads; written before the first record or after the last */
    const wfm_profile *profile; /* borrowed */
    unsigned kinds;             /* wfm_profile_kinds(profile) */
    unsigned act_states;        /* wfm_profile_activity_states(profile) */
    bool plain;                 /* the masks decide alone (no names, no odd states) */
    bool thread_running;
    unsigned data_states;       /* plain: ActivityState states that carry variables */
    uint64_t serial;            /* tells trackers apart in the threads' caches */
    _Atomic(wfm__track_plan *) plans; /* compiled plans, newest first (added under lock) */
    char pad_readers[64];
    /* shared by emitters and the tracker's thread */
    pthread_mutex_t lock;
    pthread_cond_t work, drained, space;
    stream *streams;            /* under lock */
    chunk *spare;               /* recycled chunks, under lock */
    size_t live_chunks;         /* under lock */
    _Atomic uint64_t tickets;   /* batches published */
    uint64_t written_ticket;    /* under lock: batches written */
    _Atomic int sleeping;       /* the tracker's thread waits for work */
    _Atomic uint64_t dropped;
    _Atomic uint64_t written;   /* records delivered, stored after each pass */
    uint64_t flush_target;      /* under lock: flushes wait for the batches before it */
    bool stop, space_wanted;
    pthread_mutex_t ring_lock; /* the ring's own: emitters never take it */
    ring_slot *ring; /* ring_cap slots, under ring_lock; a slot's buffer is reused */
    size_t ring_cap, ring_start, ring_count;
    char pad_shared[64];
    /* the tracker's thread (and the participants' setup before it starts) */
    uint64_t next_ticket;       /* next batch to write */
    uint64_t delivered;         /* records delivered so far */
    pthread_t thread;
    tfile files[MAX_FILES];
    size_t file_count;
    wfm_store *store; /* borrowed: the store participant's */
    pend_rec *pend;   /* this pass's records for the store, */
    size_t pend_count, pend_cap;
    wf_buf pend_text; /* their instance ids and texts (each NUL-terminated) */
    wf_buf out; /* the pass's lines */
    wf_buf tmp; /* scratch */
};

#define KINDS(X)                                                                           \
    X("WorkflowInstance") X("ActivityState") X("ActivityScheduled") X("BookmarkResumption")    \
    X("FaultPropagation") X("CancelRequested") X("CustomTracking")
#define NAME_OF(s) s,
static const char *const kind_names[WFM_REC_KIND_COUNT] = {KINDS(NAME_OF)};

/* Pre-encoded JSON text of the fast path's members (names known at compile time). */
typedef struct token {
    const char *s;
    size_t n;
} token;
#define TOKEN(lit) {lit, sizeof(lit) - 1},
#define KIND_HEAD(s) TOKEN("{\"record\": \"" s "\"")
static const token kind_heads[WFM_REC_KIND_COUNT] = {KINDS(KIND_HEAD)};

const char *wfm_rec_kind_name(wfm_rec_kind kind)
{
    return kind < WFM_REC_KIND_COUNT ? kind_names[kind] : "Unknown";
}

/* The states a fixed entry names by number: 1-4 ActivityState's (WFM_ACT_* bit i is number
 * i + 1), then WorkflowInstance's; any other state takes the string path. */
#define STATES(X)                                                                          \
    X("") X("Executing") X("Closed") X("Faulted") X("Canceled") X("Started") X("Idle")        \
    X("Persisted") X("Unloaded") X("Resumed") X("Completed") X("Terminated") X("Suspended")   \
    X("Unsuspended") X("Aborted") X("Deleted")
static const char *const state_names[] = {STATES(NAME_OF)};
#define STATE_MEMBER(s) TOKEN(", \"state\": \"" s "\"")
static const token state_members[] = {STATES(STATE_MEMBER)};
enum { STATE_COUNT = sizeof state_names / sizeof state_names[0], FIRST_INSTANCE_STATE = 5 };

/* ---- the cheap clock ---------------------------------------------------------------------- */

/* Fixed entries are stamped with the processor's time-stamp counter when the kernel itself
 * keeps time with it (clocksource "tsc": constant rate, synchronised across cores); the
 * tracker's thread turns ticks into microseconds from the context entry's anchor (one real
 * clock reading per run) and a rate measured once per process. Elsewhere each entry reads
 * CLOCK_REALTIME. */
static pthread_once_t tsc_checked = PTHREAD_ONCE_INIT, tsc_calibrated = PTHREAD_ONCE_INIT;
static bool tsc_usable;
static double us_per_tick;

static int64_t real_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void tsc_check(void)
{
#ifdef HAVE_TSC
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    char name[32] = "";
    if (f) {
        if (!fgets(name, sizeof name, f))
            name[0] = '\0';
        fclose(f);
    }
    tsc_usable = strncmp(name, "tsc", 3) == 0 && (name[3] == '\n' || name[3] == '\0');
#endif
}

static uint64_t ticks(void)
{
#ifdef HAVE_TSC
    return __rdtsc();
#else
    return 0;
#endif
}

static double mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The counter and the clock read together (the tightest of a few tries). */
static void tick_pair(uint64_t *tick, double *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = ticks();
        double n = mono_ns();
        uint64_t b = ticks();
        if (b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *ns = n;
        }
    }
}

/* The counter's rate over 2 ms of the monotonic clock (the tracker's thread, once). */
static void tsc_calibrate(void)
{
    uint64_t t0, t1;
    double n0, n1;
    tick_pair(&t0, &n0);
    do
        tick_pair(&t1, &n1);
    while (n1 - n0 < 2e6);
    us_per_tick = t1 > t0 ? (n1 - n0) / 1e3 / (double)(t1 - t0) : 0;
}

/* A fixed entry's time in microseconds; never before the stream's previous one. */
static int64_t stamp_us(stream *s, const frec *r)
{
    int64_t us = r->stamp;
    if (r->kind & REC_TICKS)
        us = s->rd_anchor_us +
             (int64_t)((double)(int64_t)(r->stamp - (int64_t)s->rd_anchor_tick) * us_per_tick);
    if (us < s->rd_last_us && (r->kind & REC_TICKS))
        us = s->rd_last_us;
    s->rd_last_us = us;
    return us;
}

/* Whether s is printable ASCII without '"' or '\\': a JSON string as it is, quoted. */
static bool plain_ascii(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len && p[i] >= 0x20 && p[i] < 0x80 && p[i] != '"' && p[i] != '\\')
        i++;
    return i == len;
}

/* s as a JSON string: quoted as it is when plain_ascii (an instance id, most names), else
 * encoded by jansson (invalid UTF-8 becomes U+FFFD); out->oom when memory ran out. */
static void json_str(wf_buf *out, const char *s, size_t len)
{
    if (plain_ascii(s, len)) {
        wf_buf_addc(out, '"');
        wf_buf_add(out, s, len);
        wf_buf_addc(out, '"');
        return;
    }
    json_t *j = wf_jsonw_strn(s, len);
    if (!j || !wf_jsonw_dump(j, WF_JSONW_COMPACT, out))
        out->oom = true;
    json_decref(j);
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
            json_str(&r->buf, rec->data_names[i], strlen(rec->data_names[i]));
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

/* A JSON string: copied when nothing in it needs escaping, else encoded by jansson. */
static void w_string(writer *w, const char *s, size_t len)
{
    if (!plain_ascii(s, len)) {
        w_flush(w);
        json_str(w->b, s, len);
        return;
    }
    W_LIT(w, "\"");
    w_put(w, s, len);
    W_LIT(w, "\"");
}

static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/* v's decimal digits at dst (room for 20); returns their count. */
static size_t put_uint(char *dst, uint64_t v)
{
    char tmp[20];
    size_t n = sizeof tmp;
    while (v >= 100) {
        n -= 2;
        memcpy(tmp + n, digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10) {
        n -= 2;
        memcpy(tmp + n, digit_pairs + 2 * v, 2);
    } else {
        tmp[--n] = (char)('0' + v);
    }
    memcpy(dst, tmp + n, sizeof tmp - n);
    return sizeof tmp - n;
}

static void w_uint(writer *w, uint64_t v)
{
    char digits[20];
    w_put(w, digits, put_uint(digits, v));
}

/* The time member of a record, ", \"time\": \"YYYY-MM-DDThh:mm:ss.ffffffZ\"" (ISO 8601 with
 * microseconds): the text is made once per second (per thread: records come many per second)
 * and the fraction's six digits written into its copy. dst has room for TIME_MAX bytes, all
 * written (a copy of constant size), of which the returned count are the member's. */
enum { TIME_MAX = 64 };
static size_t put_time(char *dst, int64_t us)
{
    static _Thread_local int64_t cached_sec = INT64_MIN;
    static _Thread_local char cached[TIME_MAX];
    static _Thread_local size_t cached_len;
    int64_t sec = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
    if (sec != cached_sec) {
        char full[48];
        wf_datetime_format(sec * 1000000, full, sizeof full);
        int n = snprintf(cached, sizeof cached, ", \"time\": \"%.*s.000000Z\"",
                         (int)strcspn(full, ".Z"), full);
        cached_len = n > 0 && (size_t)n < sizeof cached ? (size_t)n : 0;
        cached_sec = sec;
    }
    unsigned f = (unsigned)(us - sec * 1000000);
    if (cached_len < 8) /* no text for this second (cannot happen with a sane clock) */
        return 0;
    memcpy(dst, cached, TIME_MAX);
    char *frac = dst + cached_len - 8; /* "ffffffZ\"" */
    memcpy(frac, digit_pairs + 2 * (f / 10000), 2);
    memcpy(frac + 2, digit_pairs + 2 * (f / 100 % 100), 2);
    memcpy(frac + 4, digit_pairs + 2 * (f % 100), 2);
    return cached_len;
}

static void w_time(writer *w, int64_t us)
{
    char text[TIME_MAX];
    w_put(w, text, put_time(text, us));
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
static stream *find_stream(wfm_tracker *t)
{
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

/* find_stream, its common case inline. */
static inline stream *my_stream(wfm_tracker *t)
{
    if (__builtin_expect(cached_stream.serial == t->serial, 1))
        return cached_stream.s;
    return find_stream(t);
}

static void wake_thread(wfm_tracker *t)
{
    pthread_mutex_lock(&t->lock);
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->lock);
}

/* Close the writer's batch: a trailer with the next ticket, then the bytes become readable. */
static __attribute__((noinline)) void publish(wfm_tracker *t, stream *s)
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
    s->ctx_seq = NULL; /* the next batch starts with its own context entry */
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

/* The ring's next slot, dropping the oldest entry when full (the caller holds ring_lock). */
static ring_slot *ring_next(wfm_tracker *t)
{
    if (t->ring_count == t->ring_cap) {
        t->ring_start = (t->ring_start + 1) % t->ring_cap;
        t->ring_count--;
    }
    return &t->ring[(t->ring_start + t->ring_count) % t->ring_cap];
}

/* A fixed entry of s's current context into the ring, in binary. */
static void ring_put_fixed(wfm_tracker *t, const stream *s, const frec *r, int64_t us)
{
    ring_slot *slot = ring_next(t);
    slot->fixed = true;
    slot->rec = *r;
    slot->us = us;
    slot->plan = s->rd_plan;
    memcpy(slot->id, s->rd_id, s->rd_id_len);
    slot->id[s->rd_id_len] = '\0';
    t->ring_count++;
}

/* One line into the ring (the caller holds ring_lock). */
static void ring_put(wfm_tracker *t, const char *text, size_t len)
{
    ring_slot *slot = ring_next(t);
    slot->fixed = false;
    if (slot->cap <= len) {
        size_t cap = len < 255 ? 256 : len + 1;
        char *grown = wf_realloc(slot->text, cap);
        if (!grown) {
            atomic_fetch_add(&t->dropped, 1);
            return;
        }
        slot->text = grown;
        slot->cap = cap;
    }
    memcpy(slot->text, text, len);
    slot->text[len] = '\0';
    t->ring_count++;
}

/* Keep a record for the store participant; store_flush writes the pass's records. */
static void store_put(wfm_tracker *t, uint32_t kind, uint64_t seq, int64_t time_us,
                      const char *instance, size_t inst_len, const char *text, size_t len)
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
    wf_buf_add(b, instance ? instance : "", instance ? inst_len : 0);
    wf_buf_addc(b, '\0');
    r->rec_off = b->len;
    r->rec_len = len;
    wf_buf_add(b, text, len);
    wf_buf_addc(b, '\0');
    r->seq = (int64_t)seq;
    r->time_us = time_us;
    r->kind = wfm_rec_kind_name((wfm_rec_kind)kind);
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

/* Reserve the file's space ahead of an append of len bytes (FALLOC_FL_KEEP_SIZE: the size
 * stays the content's); a file system that cannot is not asked again. */
static void file_reserve(tfile *f, size_t len)
{
    if (!f->step || f->end + (off_t)len <= f->reserved)
        return;
    off_t from = f->reserved > f->end ? f->reserved : f->end;
    while (f->reserved < f->end + (off_t)len) {
        if (fallocate(f->fd, FALLOC_FL_KEEP_SIZE, from, f->step) != 0) {
            f->step = 0;
            return;
        }
        f->reserved = from + f->step;
        from = f->reserved;
        f->step = f->step < PREALLOC_MAX ? f->step * 2 : PREALLOC_MAX;
    }
}

/* All of data appended to an owned file (a short write is continued); false on an error. */
static bool file_append(tfile *f, const char *data, size_t len)
{
    file_reserve(f, len);
    while (len) {
        ssize_t n = write(f->fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        len -= (size_t)n;
        f->end += n;
    }
    return true;
}

/* The lines gathered in t->out to the files: owned files at once, stdout through stdio until
 * the pass's fflush. */
static void write_files(wfm_tracker *t)
{
    for (size_t i = 0; i < t->file_count && t->out.len; i++) {
        tfile *f = &t->files[i];
        if (f->stream)
            fwrite(t->out.data, 1, t->out.len, f->stream);
        else if (!f->failed && !file_append(f, t->out.data, t->out.len))
            f->failed = true;
    }
    wf_buf_reset(&t->out);
}

/* The line just formatted at t->out.data + start to the participants: the ring and the
 * store copy it, the file participant keeps it in the pass's output. */
static void deliver(wfm_tracker *t, size_t start, uint32_t kind, uint64_t seq, int64_t time_us,
                    const char *instance, size_t inst_len, bool to_ring)
{
    if (t->out.oom) {
        atomic_fetch_add(&t->dropped, 1);
        wf_buf_fini(&t->out);
        wf_buf_init(&t->out);
        return;
    }
    const char *text = t->out.data + start;
    size_t len = t->out.len - start;
    t->delivered++;
    if (t->ring && to_ring)
        ring_put(t, text, len);
    if (t->store)
        store_put(t, kind, seq, time_us, instance, inst_len, text, len);
    if (!t->file_count) { /* drop the text, keeping wf_buf's NUL at data[len] */
        t->out.len = start;
        t->out.data[start] = '\0';
        return;
    }
    if (t->out.cap - t->out.len > 1) { /* format_fast leaves room: wf_buf_addc inline */
        t->out.data[t->out.len++] = '\n';
        t->out.data[t->out.len] = '\0';
    } else {
        wf_buf_addc(&t->out, '\n');
    }
    if (t->out.len >= OUT_BYTES)
        write_files(t);
}

/* ", \"instance\": ID, \"seq\": ": what a fixed entry's line has between its kind and
 * its number. */
static void instance_head(wf_buf *out, const char *id, size_t len)
{
    wf_buf_adds(out, ", \"instance\": ");
    json_str(out, id, len);
    wf_buf_adds(out, ", \"seq\": ");
}

/* A context entry: the plan and clock anchor of the entries after it, and the instance's
 * "instance" member rendered once. */
static void load_context(wfm_tracker *t, stream *s, const unsigned char *src)
{
    crec cr;
    memcpy(&cr, src, sizeof cr);
    s->rd_plan = cr.plan;
    s->rd_anchor_us = cr.anchor_us;
    s->rd_anchor_tick = cr.anchor_tick;
    s->rd_last_us = INT64_MIN;
    s->rd_seq.len = 0;
    wf_buf_reset(&t->tmp);
    instance_head(&t->tmp, (const char *)src + sizeof cr, cr.id_len);
    s->rd_inst_len = t->tmp.oom || t->tmp.len > sizeof s->rd_inst ? 0 : t->tmp.len;
    memcpy(s->rd_inst, t->tmp.data, s->rd_inst_len);
    assert(cr.id_len <= WF_ID_LEN);
    memcpy(s->rd_id, src + sizeof cr, cr.id_len);
    s->rd_id_len = cr.id_len;
}

/* A node's members from the plan (which 0: as the record's activity, 1: as its child);
 * nothing for NO_NODE. */
static token node_members(const wfm__track_plan *p, uint32_t node, unsigned which)
{
    if (node == NO_NODE)
        return (token){"", 0};
    size_t at = 2 * (size_t)node + which;
    return (token){p->text + p->off[at], p->off[at + 1] - p->off[at]};
}

/* Room for `need` more bytes at the end of b, which the caller writes and then counts in
 * b->len (keeping the NUL after them); NULL when memory ran out. */
static char *room(wf_buf *b, size_t need)
{
    if (b->cap - b->len <= need && !b->oom) {
        size_t len = b->len;
        if (wf_buf_addf(b, "%*s", (int)need, "")) {
            b->len = len;
            b->data[len] = '\0';
        }
    }
    return b->oom ? NULL : b->data + b->len;
}

/* t's bytes at dst, in copies of constant size (a token is a few dozen bytes: a call to
 * memcpy per token cost as much as the copy); the 8- and 16-byte copies may overlap. */
static inline char *put(char *dst, const token t)
{
    const char *src = t.s;
    size_t n = t.n;
    if (n >= 16) {
        for (size_t i = 0; i + 16 < n; i += 16)
            memcpy(dst + i, src + i, 16);
        memcpy(dst + n - 16, src + n - 16, 16);
    } else if (n >= 8) {
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else {
        for (size_t i = 0; i < n; i++)
            dst[i] = src[i];
    }
    return dst + n;
}

/* seq's digits at dst, which has room for sizeof kept->digits bytes (all written): the
 * kept text incremented in place when seq follows its number, else made anew; returns the
 * digits' count. */
static size_t put_seq(char *dst, seq_text *kept, uint64_t seq)
{
    size_t i = kept->len;
    if (i && seq == kept->seq + 1) {
        while (i > 0 && kept->digits[i - 1] == '9')
            kept->digits[--i] = '0';
        if (i > 0)
            kept->digits[i - 1]++;
        else /* 9...9 + 1: one digit more */
            kept->len = put_uint(kept->digits, seq);
    } else {
        kept->len = put_uint(kept->digits, seq);
    }
    kept->seq = seq;
    memcpy(dst, kept->digits, sizeof kept->digits);
    return kept->len;
}

/* One fixed entry as its JSON line (the members format_brec would write for it), copied
 * from pre-encoded tokens: `head` is its ", \"instance\": ID, \"seq\": " (instance_head),
 * `kept` the record number last written for the same instance. */
static void format_fast(const wfm__track_plan *p, const char *head, size_t head_len,
                        seq_text *kept, const frec *r, int64_t us, wf_buf *b)
{
    unsigned state = (r->kind >> 8) & 0xffu, kind = r->kind & 0xffu;
    assert(p && kind < WFM_REC_KIND_COUNT);
    token st = state < STATE_COUNT ? state_members[state] : state_members[0];
    if (!state || state >= STATE_COUNT)
        st.n = 0;
    token a = node_members(p, r->activity, 0), c = node_members(p, r->child, 1);
    char *start = room(b, kind_heads[kind].n + head_len + sizeof kept->digits + TIME_MAX + st.n +
                              a.n + c.n + 2);
    if (!start)
        return;
    char *o = put(start, kind_heads[kind]);
    o = put(o, (token){head, head_len});
    o += put_seq(o, kept, r->seq);
    o += put_time(o, us);
    o = put(put(put(o, st), a), c);
    *o++ = '}';
    b->len += (size_t)(o - start);
    b->data[b->len] = '\0';
}

/* Write the records of one batch of s: [from, to) of chunk c. Lines are formatted straight
 * into the pass's output (kept there only when a file participant will write it). */
static void write_batch(wfm_tracker *t, stream *s, const chunk *c, size_t from, size_t to)
{
    if (t->ring)
        pthread_mutex_lock(&t->ring_lock);
    while (from < to) {
        rec_head h;
        const unsigned char *src = c->data + from;
        memcpy(&h, src, sizeof h);
        size_t start = t->out.len;
        if (h.kind == REC_CTX) {
            load_context(t, s, src);
        } else if (h.kind & REC_FAST) {
            frec r;
            memcpy(&r, src, sizeof r);
            int64_t us = stamp_us(s, &r);
            if (t->ring)
                ring_put_fixed(t, s, &r, us);
            if (t->file_count || t->store) {
                format_fast(s->rd_plan, s->rd_inst, s->rd_inst_len, &s->rd_seq, &r, us,
                            &t->out);
                if (!t->store && !t->out.oom && t->out.cap - t->out.len > 1) {
                    /* files only: deliver's work for them, inline */
                    t->delivered++;
                    t->out.data[t->out.len++] = '\n';
                    t->out.data[t->out.len] = '\0';
                    if (t->out.len >= OUT_BYTES)
                        write_files(t);
                } else {
                    deliver(t, start, r.kind & 0xffu, r.seq, us, s->rd_id, s->rd_id_len,
                            false);
                }
            } else {
                t->delivered++;
            }
        } else if (h.kind != REC_TRAILER) {
            brec b;
            memcpy(&b, src, sizeof b);
            format_brec(src, &t->out);
            deliver(t, start, b.kind, b.seq, b.time_us,
                    b.len[F_INSTANCE] == ABSENT ? NULL : (const char *)src + sizeof b,
                    b.len[F_INSTANCE], true);
        }
        from += h.size;
    }
    if (t->ring)
        pthread_mutex_unlock(&t->ring_lock);
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
                rec_head h;
                memcpy(&h, c->data + at, sizeof h);
                if (h.kind == REC_TRAILER) {
                    brec tr;
                    memcpy(&tr, c->data + at, sizeof tr);
                    s->peek_end = at + h.size;
                    s->peek_ticket = tr.seq;
                    return true;
                }
                at += h.size;
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
            write_batch(t, s, s->rd, s->rd_off, s->peek_end);
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
    write_files(t);
    for (size_t f = 0; f < t->file_count; f++)
        if (t->files[f].stream)
            fflush(t->files[f].stream);
    if (t->out.oom) {
        wf_buf_fini(&t->out);
        wf_buf_init(&t->out);
    }
    if (t->store)
        store_flush(t);
    atomic_store_explicit(&t->written, t->delivered, memory_order_relaxed);
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
    if (tsc_usable)
        pthread_once(&tsc_calibrated, tsc_calibrate); /* before the first tick is read here */
    pthread_mutex_lock(&t->lock);
    for (;;) {
        pthread_mutex_unlock(&t->lock);
        uint64_t done = drain(t);
        pthread_mutex_lock(&t->lock);
        t->written_ticket = t->next_ticket;
        pthread_cond_broadcast(&t->drained);
        bool more = t->next_ticket < atomic_load(&t->tickets);
        if (t->stop && !more)
            break;
        if (more || t->stop)
            continue;
        /* Asleep (emitters wake it) only after a pass that found nothing; while records
         * come, it looks again after GATHER_NS without being woken, so a busy worker
         * never pays a wake-up and the thread runs about 100 times a second. */
        /* a flush is served once written_ticket reaches its target: no spinning while the
         * flushing thread waits to be scheduled */
        bool flushing = t->written_ticket < t->flush_target;
        if (!done && !flushing) {
            atomic_store(&t->sleeping, 1);
            if (t->next_ticket == atomic_load(&t->tickets) && !t->stop)
                pthread_cond_wait(&t->work, &t->lock);
            atomic_store(&t->sleeping, 0);
        }
        if (!t->stop && !flushing && !t->space_wanted && t->live_chunks <= MAX_CHUNKS / 2)
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
    pthread_once(&tsc_checked, tsc_check);
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->ring_lock, NULL);
    pthread_cond_init(&t->work, NULL);
    pthread_cond_init(&t->drained, NULL);
    pthread_cond_init(&t->space, NULL);
    wf_buf_init(&t->out);
    wf_buf_init(&t->tmp);
    *out = t;
    return WF_OK;
}

/* Give back the space reserved beyond the file's end (truncating to the size it has now:
 * another process may have appended too) and close it; true when a write or the close
 * failed. Closed once: later calls do nothing. */
static bool file_close(tfile *f)
{
    if (f->fd < 0)
        return false;
    struct stat st;
    if (f->reserved > f->end && fstat(f->fd, &st) == 0 && st.st_size <= f->reserved &&
        ftruncate(f->fd, st.st_size) != 0)
        f->failed = true;
    bool failed = close(f->fd) != 0 || f->failed;
    f->fd = -1;
    return failed;
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
    for (size_t i = 0; i < t->file_count; i++) {
        tfile *f = &t->files[i];
        bool failed = f->stream ? ferror(f->stream) != 0 : file_close(f);
        if (failed && st == WF_OK) {
            wf_loc loc = {f->path, 0, 0};
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
        file_close(&t->files[f]);
        wf_free(t->files[f].path);
    }
    wf_free(t->pend);
    wf_buf_fini(&t->pend_text);
    for (size_t i = 0; i < t->ring_cap; i++)
        wf_free(t->ring[i].text);
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
    wf_buf_fini(&t->tmp);
    pthread_mutex_destroy(&t->lock);
    pthread_mutex_destroy(&t->ring_lock);
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
    tfile *f = &t->files[t->file_count];
    memset(f, 0, sizeof *f);
    f->fd = is_stdout ? -1 : open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    struct stat st;
    if (!is_stdout && (f->fd < 0 || fstat(f->fd, &st) != 0)) {
        if (f->fd >= 0)
            close(f->fd);
        wf_free(copy);
        wf_loc loc = {path, 0, 0};
        return wf_error_set(err, WF_E_IO, &loc, "cannot open the tracking file");
    }
    f->stream = is_stdout ? stdout : NULL;
    f->path = copy;
    f->end = is_stdout ? 0 : st.st_size;
    f->reserved = f->end;
    f->step = is_stdout || !S_ISREG(st.st_mode) ? 0 : PREALLOC_MIN;
    t->file_count++;
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
    pthread_mutex_lock(&t->ring_lock);
    size_t n = t->ring_count;
    pthread_mutex_unlock(&t->ring_lock);
    return n;
}

bool wfm_tracker_ring_get(wfm_tracker *t, size_t index, char *buf, size_t size)
{
    wfm_tracker_flush(t);
    pthread_mutex_lock(&t->ring_lock);
    bool ok = index < t->ring_count;
    const ring_slot *slot = ok ? &t->ring[(t->ring_start + index) % t->ring_cap] : NULL;
    if (slot && slot->fixed) {
        wf_buf inst, line;
        wf_buf_init(&inst);
        wf_buf_init(&line);
        instance_head(&inst, slot->id, strlen(slot->id));
        seq_text kept = {0};
        format_fast(slot->plan, inst.data, inst.len, &kept, &slot->rec, slot->us, &line);
        ok = !inst.oom && !line.oom;
        if (ok)
            snprintf(buf, size, "%s", line.data);
        wf_buf_fini(&inst);
        wf_buf_fini(&line);
    } else if (slot) {
        snprintf(buf, size, "%s", slot->text);
    }
    pthread_mutex_unlock(&t->ring_lock);
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
    if (copy.time_us == WFM__TRACK_NOW)
        copy.time_us = real_now_us();
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

int wfm__tracker_data_states(const wfm_tracker *t)
{
    unsigned all = WFM_ACT_EXECUTING | WFM_ACT_CLOSED | WFM_ACT_FAULTED | WFM_ACT_CANCELED;
    return t->plain ? (int)(t->data_states & all) : -1; /* "*" sets every bit */
}

#define BAD_NODE (UINT32_MAX - 1)

/* The node's index in the plan, NO_NODE for none, BAD_NODE when the plan cannot name it. */
static uint32_t plan_node(const wfm__track_plan *p, const wfm_definition *def,
                          const wfm_node *node)
{
    if (!node)
        return NO_NODE;
    uint32_t i = node->index; /* wfm_node_index and wfm_definition_node_at, inline */
    return i < p->count && i < def->node_count && def->nodes[i] == node ? i : BAD_NODE;
}

/* The context entry of the writer's batch: plan, clock anchor and instance id. */
static void put_context(stream *s, unsigned char *dst, size_t size,
                        const wfm__track_target *to, size_t id_len)
{
    crec cr;
    memset(&cr, 0, sizeof cr);
    cr.size = (uint32_t)size;
    cr.kind = REC_CTX;
    cr.plan = to->plan;
    if (tsc_usable) {
        cr.anchor_tick = ticks();
        cr.anchor_us = real_now_us();
    }
    cr.id_len = (uint32_t)id_len;
    memcpy(dst, &cr, sizeof cr);
    memcpy(dst + sizeof cr, to->instance_id, id_len);
    s->wr->used += size;
    s->ctx_seq = to->seq;
    s->ctx_plan = to->plan;
    memcpy(s->ctx_id, to->instance_id, sizeof s->ctx_id);
}

/* Room for a fixed entry in the writer's batch when it needs a new context entry first (the
 * batch's first entry, another instance) or a new chunk (which starts a batch): the context
 * written, the returned pointer where the entry goes; NULL when memory ran out. */
static __attribute__((noinline)) unsigned char *fixed_room(wfm_tracker *t, stream *s,
                                                           const wfm__track_target *to)
{
    size_t id_len = strlen(to->instance_id); /* <= WF_ID_LEN: the caller's check */
    size_t ctx_size = ALIGN8(sizeof(crec) + id_len);
    unsigned char *dst = NULL;
    if (s->wr && s->wr->cap - s->wr->used >= sizeof(frec) + ctx_size + TRAILER_BYTES)
        dst = s->wr->data + s->wr->used;
    else
        dst = reserve(t, s, sizeof(frec) + ctx_size); /* publishes the batch it closes */
    if (!dst)
        return NULL;
    put_context(s, dst, ctx_size, to, id_len);
    return dst + ctx_size;
}

/* A fixed entry (state: its number in state_names) after the caller's checks. The common
 * case, the same instance as the batch's context with room in the chunk, is straight-line;
 * the rest is fixed_room's. On x86 the prefetch is PREFETCHW: the lines ahead come
 * exclusive, ready for the store. */
#ifdef HAVE_TSC
#define FAST_PATH __attribute__((target("prfchw")))
#else
#define FAST_PATH
#endif
FAST_PATH static inline __attribute__((always_inline)) bool
emit_fixed(const wfm__track_target *to, wfm_rec_kind kind, unsigned state, uint32_t a,
           uint32_t c)
{
    wfm_tracker *t = to->tracker;
    stream *s = my_stream(t);
    /* the same instance as the context's: its counter, plan and id (an address may be
     * reused within a batch by another instance, which has another id); a context entry
     * implies s->wr */
    unsigned char *dst;
    if (__builtin_expect(s && s->ctx_seq == to->seq && s->ctx_plan == to->plan &&
                             memcmp(s->ctx_id, to->instance_id, sizeof s->ctx_id) == 0 &&
                             s->wr->cap - s->wr->used >= sizeof(frec) + TRAILER_BYTES,
                         1))
        dst = s->wr->data + s->wr->used;
    else if (s && strlen(to->instance_id) > WF_ID_LEN)
        return false; /* the caller builds the record */
    else if (!s || (dst = fixed_room(t, s, to)) == NULL) {
        atomic_fetch_add(&t->dropped, 1);
        return true;
    }
    /* Fields stored in place (dst is 8-aligned, in malloc'ed memory): building the entry
     * on the stack and copying it cost a store-forwarding stall per record. */
    frec *r = (frec *)(void *)dst;
    assert(((uintptr_t)dst & 7) == 0);
    unsigned code = REC_FAST | state << 8 | (unsigned)kind;
    r->size = (uint32_t)sizeof *r;
    r->seq = ++*to->seq;
    r->activity = a;
    r->child = c;
    if (to->now_us != WFM__TRACK_NOW) {
        r->stamp = to->now_us;
    } else if (tsc_usable) {
        r->stamp = (int64_t)ticks();
        code |= REC_TICKS;
    } else {
        r->stamp = real_now_us();
    }
    r->kind = code;
    s->wr->used += sizeof *r;
    __builtin_prefetch(dst + 512, 1); /* the tracker's thread read these lines last */
    if (!s->depth)
        publish(t, s);
    return true;
}

FAST_PATH bool wfm__tracker_emit_activity(const wfm__track_target *to, const wfm_node *node,
                                          unsigned state_bit, bool has_vars)
{
    const wfm__track_plan *p = to->plan;
    const wfm_tracker *t = to->tracker;
    if (!p || !t->thread_running || !to->def)
        return false;
    uint32_t i = plan_node(p, to->def, node);
    unsigned data_bits;
    assert(state_bit);
    if (i == BAD_NODE || i == NO_NODE || (!p->decides && !t->plain))
        return false; /* the record is matched */
    data_bits = p->decides ? (unsigned)p->masks[i] >> WFM__PLAN_DATA_SHIFT : t->data_states;
    if ((data_bits & state_bit) && has_vars)
        return false; /* the record carries variables */
    return emit_fixed(to, WFM_REC_ACTIVITY_STATE, (unsigned)__builtin_ctz(state_bit) + 1, i,
                      NO_NODE);
}

FAST_PATH bool wfm__tracker_emit_node(const wfm__track_target *to, wfm_rec_kind kind,
                                      unsigned state, const wfm_node *activity,
                                      const wfm_node *child)
{
    const wfm__track_plan *p = to->plan;
    if (!to->tracker->thread_running || !p || !to->def)
        return false;
    uint32_t a = plan_node(p, to->def, activity), c = plan_node(p, to->def, child);
    if (a == BAD_NODE || c == BAD_NODE)
        return false;
    return emit_fixed(to, kind, state ? (unsigned)__builtin_ctz(state) + 1 : 0, a, c);
}

FAST_PATH bool wfm__tracker_emit_instance(const wfm__track_target *to, const char *state)
{
    if (!to->tracker->thread_running || !to->plan || !to->tracker->plain)
        return false;
    for (unsigned i = FIRST_INSTANCE_STATE; i < STATE_COUNT; i++)
        if (strcmp(state_names[i], state) == 0)
            return emit_fixed(to, WFM_REC_INSTANCE, i, NO_NODE, NO_NODE);
    return false;
}

/* ---- plans: name patterns compiled per definition --------------------------------------- */

static wfm__track_plan *plan_find(wfm__track_plan *p, uint64_t hash, size_t count)
{
    for (; p; p = p->next)
        if (p->hash == hash && p->count == count)
            return p;
    return NULL;
}

/* A node's name and id as the members of a record (keys: "activity" and "activityId", or
 * "child" and "childId"), encoded once per plan. */
static void node_text(wf_buf *text, const char *key, const char *name, const char *id)
{
    wf_buf_addf(text, ", \"%s\": ", key);
    json_str(text, name, strlen(name));
    wf_buf_addf(text, ", \"%sId\": ", key);
    json_str(text, id, strlen(id));
}

/* Every node's members as activity and as child into text, their offsets into off. */
static bool plan_names(const wfm_definition *def, wf_buf *text, uint32_t *off)
{
    size_t n = wfm_definition_node_count(def);
    for (size_t i = 0; i < n; i++) {
        const wfm_node *node = wfm_definition_node_at(def, i);
        const char *name = wfm_node_display_name(node), *id = wfm_node_id(node);
        if (!id)
            return false; /* out of memory */
        off[2 * i] = (uint32_t)text->len;
        node_text(text, "activity", name, id);
        off[2 * i + 1] = (uint32_t)text->len;
        node_text(text, "child", name, id);
    }
    off[2 * n] = (uint32_t)text->len;
    return !text->oom && text->len < UINT32_MAX;
}

/* The plan's block: header, masks, offsets, then the names' text. */
static wfm__track_plan *plan_alloc(const wfm_definition *def)
{
    size_t n = wfm_definition_node_count(def);
    size_t offs_at = ALIGN8(sizeof(wfm__track_plan) + n * sizeof(uint16_t));
    uint32_t *off = wf_malloc((2 * n + 1) * sizeof *off);
    wf_buf text;
    wf_buf_init(&text);
    wfm__track_plan *p = NULL;
    if (off && plan_names(def, &text, off))
        p = wf_malloc(offs_at + (2 * n + 1) * sizeof *off + text.len);
    if (p) {
        unsigned char *block = (unsigned char *)p;
        memcpy(block + offs_at, off, (2 * n + 1) * sizeof *off);
        memcpy(block + offs_at + (2 * n + 1) * sizeof *off, text.data, text.len);
        p->off = (const uint32_t *)(block + offs_at);
        p->text = (const char *)(block + offs_at + (2 * n + 1) * sizeof *off);
        p->next = NULL;
        p->hash = wfm_definition_hash(def);
        p->count = n;
        p->decides = false;
    }
    wf_free(off);
    wf_buf_fini(&text);
    return p;
}

/* Each node's bits, from the records it would give (the fields wfm__track_sched fills), when
 * the profile has names; and the nodes' names for the fixed entries. */
static wfm__track_plan *plan_compile(const wfm_tracker *t, const wfm_definition *def)
{
    static const char *const states[4] = {"Executing", "Closed", "Faulted", "Canceled"};
    size_t n = wfm_definition_node_count(def);
    wfm__track_plan *p = plan_alloc(def);
    if (!p || t->plain)
        return p;
    p->decides = true;
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
    if (!t || !t->kinds || !def)
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
    if (!p || !p->decides || i >= p->count)
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
    if (t->flush_target < target)
        t->flush_target = target;
    pthread_cond_signal(&t->work);
    while (t->written_ticket < target)
        pthread_cond_wait(&t->drained, &t->lock);
    pthread_mutex_unlock(&t->lock);
}

uint64_t wfm_tracker_written(const wfm_tracker *t)
{
    return t ? atomic_load_explicit(&((wfm_tracker *)t)->written, memory_order_relaxed) : 0;
}

uint64_t wfm_tracker_dropped(const wfm_tracker *t)
{
    return atomic_load(&((wfm_tracker *)t)->dropped);
}

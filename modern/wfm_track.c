/* wfm_track.c — the tracker: filters records through its profile, formats each kept record
 * as one JSON line on the emitting thread, and hands the lines to a flush thread that writes
 * the file and store participants, so a worker never waits on I/O. Lines keep emission order,
 * so records of one instance (emitted by one thread at a time) arrive in order. */
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/wf_mem.h"
#include "wfm_track.h"

#define MAX_FILES 4
#define GATHER_LINES 512  /* write at once when this many lines wait */
#define GATHER_NS 2000000 /* otherwise gather for up to 2 ms */

typedef struct line {
    struct line *next;
    const char *instance; /* in the same allocation, after text; NULL if none */
    uint64_t seq;
    int64_t time_us;
    wfm_rec_kind kind;
    size_t len;
    char text[];      /* JSON, NUL-terminated */
} line;

struct wfm_tracker {
    const wfm_profile *profile; /* borrowed */
    unsigned kinds;             /* wfm_profile_kinds(profile) */
    unsigned act_states;        /* wfm_profile_activity_states(profile) */
    pthread_mutex_t lock;
    pthread_cond_t work, drained;
    line *head, *tail;
    uint64_t queued, written, dropped;
    bool stop, thread_running, flush_wanted;
    pthread_t thread;
    FILE *files[MAX_FILES];
    bool owns_file[MAX_FILES];
    char *paths[MAX_FILES]; /* owned copies, for wfm_tracker_close's messages */
    size_t file_count;
    sqlite3 *store;
    char **ring; /* owned lines, ring_cap slots */
    size_t ring_cap, ring_start, ring_count;
};

static const char *const kind_names[WFM_REC_KIND_COUNT] = {
    "WorkflowInstance", "ActivityState",   "ActivityScheduled", "BookmarkResumption",
    "FaultPropagation", "CancelRequested", "CustomTracking",
};

const char *wfm_rec_kind_name(wfm_rec_kind kind)
{
    return kind < WFM_REC_KIND_COUNT ? kind_names[kind] : "Unknown";
}

/* ---- formatting --------------------------------------------------------------------------- */

static void add_key(wf_buf *b, const char *key)
{
    wf_buf_adds(b, ", \"");
    wf_buf_adds(b, key);
    wf_buf_adds(b, "\": ");
}

static void add_field(wf_buf *b, const char *key, const char *value)
{
    if (!value)
        return;
    add_key(b, key);
    wf_buf_add_json_string(b, value, strlen(value));
}

static void add_uint(wf_buf *b, uint64_t v)
{
    char digits[24];
    size_t n = sizeof digits;
    do {
        digits[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    wf_buf_add(b, digits + n, sizeof digits - n);
}

/* ISO 8601 with microseconds; the "YYYY-MM-DDThh:mm:ss" part is cached per thread, since
 * records come many per second. */
static void add_time(wf_buf *b, int64_t us)
{
    static _Thread_local int64_t cached_sec = INT64_MIN;
    static _Thread_local char cached[32];
    int64_t sec = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
    if (sec != cached_sec) {
        char full[64];
        wf_datetime_format(sec * 1000000, full, sizeof full);
        size_t len = strcspn(full, ".Z");
        if (len >= sizeof cached)
            len = sizeof cached - 1;
        memcpy(cached, full, len);
        cached[len] = '\0';
        cached_sec = sec;
    }
    char frac[8];
    int64_t f = us - sec * 1000000;
    for (int i = 6; i >= 1; i--, f /= 10)
        frac[i] = (char)('0' + f % 10);
    frac[0] = '.';
    add_key(b, "time");
    wf_buf_addc(b, '"');
    wf_buf_adds(b, cached);
    wf_buf_add(b, frac, 7);
    wf_buf_adds(b, "Z\"");
}

static void add_data(wf_buf *b, const wfm_track_record *rec)
{
    if (!rec->data_count)
        return;
    wf_buf_adds(b, ", \"data\": {");
    for (size_t i = 0; i < rec->data_count; i++) {
        wf_buf_adds(b, i ? ", " : "");
        wf_buf_add_json_string(b, rec->data_names[i], strlen(rec->data_names[i]));
        wf_buf_adds(b, ": ");
        wf_value_to_json(&rec->data_values[i], b);
    }
    wf_buf_adds(b, "}");
}

bool wfm_track_record_json(const wfm_track_record *rec, wf_buf *b)
{
    wf_buf_adds(b, "{\"record\": \"");
    wf_buf_adds(b, wfm_rec_kind_name(rec->kind));
    wf_buf_addc(b, '"');
    add_field(b, "instance", rec->instance_id);
    add_key(b, "seq");
    add_uint(b, rec->seq);
    add_time(b, rec->time_us);
    add_field(b, "state", rec->state);
    add_field(b, "activity", rec->activity);
    add_field(b, "activityId", rec->activity_id);
    add_field(b, "child", rec->child);
    add_field(b, "childId", rec->child_id);
    add_field(b, rec->kind == WFM_REC_BOOKMARK_RESUMPTION ? "bookmark" : "name", rec->name);
    if (rec->payload) {
        add_key(b, "payload");
        wf_value_to_json(rec->payload, b);
    }
    if (rec->fault) {
        add_key(b, "fault");
        wf_value_to_json(rec->fault, b);
    }
    add_data(b, rec);
    wf_buf_adds(b, "}");
    return !b->oom;
}

/* ---- the flush thread ----------------------------------------------------------------- */

static void write_store(wfm_tracker *t, const line *batch)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(t->store, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(t->store,
                           "INSERT OR REPLACE INTO tracking(instance, seq, time_us, kind, record)"
                           " VALUES(?, ?, ?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_exec(t->store, "ROLLBACK", NULL, NULL, NULL);
        return;
    }
    for (const line *l = batch; l; l = l->next) {
        sqlite3_bind_text(st, 1, l->instance ? l->instance : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)l->seq);
        sqlite3_bind_int64(st, 3, l->time_us);
        sqlite3_bind_text(st, 4, wfm_rec_kind_name(l->kind), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, l->text, (int)l->len, SQLITE_STATIC);
        sqlite3_step(st);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_exec(t->store, "COMMIT", NULL, NULL, NULL);
}

static size_t write_batch(wfm_tracker *t, line *batch)
{
    size_t n = 0;
    for (line *l = batch; l; l = l->next, n++)
        for (size_t f = 0; f < t->file_count; f++) {
            fwrite(l->text, 1, l->len, t->files[f]);
            fputc('\n', t->files[f]);
        }
    for (size_t f = 0; f < t->file_count; f++)
        fflush(t->files[f]);
    if (t->store)
        write_store(t, batch);
    while (batch) {
        line *next = batch->next;
        wf_free(batch);
        batch = next;
    }
    return n;
}

static void *flush_main(void *arg)
{
    wfm_tracker *t = arg;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (!t->head && !t->stop)
            pthread_cond_wait(&t->work, &t->lock);
        if (!t->head && t->stop)
            break;
        /* Let a batch build up (a few ms) unless someone waits for it: fewer wake-ups,
         * writes and fflushes for the same records. */
        if (!t->stop && !t->flush_wanted && t->queued - t->written < GATHER_LINES) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += GATHER_NS;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&t->work, &t->lock, &until);
        }
        line *batch = t->head;
        t->head = t->tail = NULL;
        pthread_mutex_unlock(&t->lock);
        size_t n = write_batch(t, batch);
        pthread_mutex_lock(&t->lock);
        t->written += n;
        pthread_cond_broadcast(&t->drained);
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
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->work, NULL);
    pthread_cond_init(&t->drained, NULL);
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
    if (t->store)
        sqlite3_close(t->store);
    for (size_t i = 0; i < t->ring_count; i++)
        wf_free(t->ring[(t->ring_start + i) % t->ring_cap]);
    wf_free(t->ring);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->work);
    pthread_cond_destroy(&t->drained);
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

wf_status wfm_tracker_add_store(wfm_tracker *t, const char *store_path, wf_error *err)
{
    wf_loc loc = {store_path, 0, 0};
    if (t->store)
        return wf_error_set(err, WF_E_STATE, &loc, "a tracker writes to one store");
    if (sqlite3_open_v2(store_path, &t->store, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
        sqlite3_exec(t->store, "SELECT 1 FROM tracking LIMIT 1", NULL, NULL, NULL) != SQLITE_OK) {
        wf_error_set(err, WF_E_STORE, &loc, "cannot track into the store: %s",
                     t->store ? sqlite3_errmsg(t->store) : "out of memory");
        sqlite3_close(t->store);
        t->store = NULL;
        return err ? err->code : WF_E_STORE;
    }
    sqlite3_busy_timeout(t->store, 10000);
    return start_thread(t, err);
}

wf_status wfm_tracker_add_ring(wfm_tracker *t, size_t capacity, wf_error *err)
{
    if (t->ring || capacity == 0)
        return wf_error_set(err, WF_E_STATE, NULL, "a tracker has at most one non-empty ring");
    t->ring = wf_calloc(capacity, sizeof *t->ring);
    if (!t->ring)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory creating a tracking ring");
    t->ring_cap = capacity;
    return WF_OK;
}

size_t wfm_tracker_ring_count(wfm_tracker *t)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->ring_count;
    pthread_mutex_unlock(&t->lock);
    return n;
}

bool wfm_tracker_ring_get(wfm_tracker *t, size_t index, char *buf, size_t size)
{
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

/* Under the lock: keep a copy of the line in the ring (oldest dropped when full). */
static void ring_put(wfm_tracker *t, const line *l)
{
    char *copy = wf_strndup(l->text, l->len);
    if (!copy) {
        t->dropped++;
        return;
    }
    if (t->ring_count == t->ring_cap) {
        wf_free(t->ring[t->ring_start]);
        t->ring_start = (t->ring_start + 1) % t->ring_cap;
        t->ring_count--;
    }
    t->ring[(t->ring_start + t->ring_count++) % t->ring_cap] = copy;
}

static line *make_line(const wfm_track_record *rec, const wf_buf *json)
{
    size_t id_len = rec->instance_id ? strlen(rec->instance_id) + 1 : 0;
    line *l = wf_malloc(sizeof *l + json->len + 1 + id_len);
    if (!l)
        return NULL;
    memset(l, 0, sizeof *l);
    memcpy(l->text, json->data, json->len + 1);
    l->len = json->len;
    l->seq = rec->seq;
    l->time_us = rec->time_us;
    l->kind = rec->kind;
    if (id_len) {
        char *id = l->text + json->len + 1;
        memcpy(id, rec->instance_id, id_len);
        l->instance = id;
    }
    return l;
}

void wfm_tracker_emit(wfm_tracker *t, const wfm_track_record *rec)
{
    bool want_data = false;
    if (!wfm_tracker_wants(t, rec->kind) || !wfm_profile_match(t->profile, rec, &want_data))
        return;
    wfm_track_record copy = *rec;
    if (!want_data && rec->kind != WFM_REC_CUSTOM) /* WF4 custom records carry their data */
        copy.data_count = 0;
    wf_buf json;
    wf_buf_init(&json);
    line *l = wfm_track_record_json(&copy, &json) ? make_line(&copy, &json) : NULL;
    wf_buf_fini(&json);
    pthread_mutex_lock(&t->lock);
    if (!l) {
        t->dropped++;
    } else {
        if (t->ring)
            ring_put(t, l);
        if (!t->thread_running) { /* no file or store participant: nothing to queue */
            pthread_mutex_unlock(&t->lock);
            wf_free(l);
            return;
        }
        l->next = NULL;
        bool was_empty = !t->head;
        if (t->tail)
            t->tail->next = l;
        else
            t->head = l;
        t->tail = l;
        t->queued++;
        if (was_empty || t->queued - t->written == GATHER_LINES)
            pthread_cond_signal(&t->work);
    }
    pthread_mutex_unlock(&t->lock);
}

void wfm_tracker_flush(wfm_tracker *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    uint64_t target = t->queued;
    t->flush_wanted = true;
    pthread_cond_signal(&t->work);
    while (t->written < target)
        pthread_cond_wait(&t->drained, &t->lock);
    t->flush_wanted = false;
    pthread_mutex_unlock(&t->lock);
}

uint64_t wfm_tracker_dropped(const wfm_tracker *t)
{
    wfm_tracker *m = (wfm_tracker *)t;
    pthread_mutex_lock(&m->lock);
    uint64_t d = t->dropped;
    pthread_mutex_unlock(&m->lock);
    return d;
}

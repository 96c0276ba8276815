/* wfm_durable.c — the durable host (wfm_durable.h): instances created in and loaded from the
 * instance store under a lease, saved at persist points through wfm_instance_save +
 * wfm_store_save, restored with wfm_instance_restore; a background thread renews the leases
 * and applies the timed idle policy. Each wfm_dinst is used by one thread at a time: a busy
 * flag (under host->lock) keeps the host API and the background thread off each other.
 *
 * A durable instance (d->loaded: in memory and leased; d->dirty: changed since saved):
 *   (no store row yet, id chosen) -> loaded, dirty   wfm_host_new
 *   first run: the Created state is saved first       run_queue (save_state, initial): the
 *                                                      row is inserted with its state in one
 *                                                      transaction (wfm_store_insert)
 *   (new) -> unloaded, saved Created                  wfm_host_start (save_state, initial,
 *                                                      release)
 *   saved row -> loaded, clean                         wfm_host_load (restore, then lock)
 *   loaded -> loaded, dirty                            wfm_host_run / wfm_host_resume
 *   loaded, dirty -> loaded, clean                     save at a Persist request or idle with
 *                                                      TimeToPersist (save_locked, keep lease)
 *   loaded -> unloaded                                 save at idle with TimeToUnload, or at
 *                                                      completion (save_locked, release)
 *   any -> freed                                       wfm_dinst_close (releases a held lease)
 * A save is skipped while an activity of a no-persist kind executes (deferred). */
#include "wfm_durable.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h> /* realpath */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/wf_mem.h"
#include "wfm_persist.h"
#include "wfm_sched_int.h" /* the activity tree: no-persist zones, variables */

#define DEFAULT_RENEW_MS 10000

/* The promoted properties' current values as text (props_fini frees them). */
typedef struct props {
    const char **names, **values;
    wf_buf *texts;
    size_t count;
} props;


typedef struct queue_copy queue_copy;

struct wfm_dinst {
    wfm_host *host;
    wfm_dinst *same_bucket; /* the next linked wfm_dinst in its host's bucket (host->lock) */
    wfm_store_id id;
    wfm_instance *inst;
    bool loaded; /* in memory and leased: may run */
    bool dirty;  /* changed since the last save / load */
    bool busy;   /* a thread is using it (host->lock) */
    int64_t idle_since_us;
    char **bookmarks; /* user bookmarks after the last run (owned) */
    size_t bookmark_count;
    uint64_t saves;
    char **kept;  /* names promoted by an earlier host, not in opts.promote (owned) */
    bool resumed; /* loaded from the store: its next run emits the Resumed record */
    size_t kept_count;
    int64_t resumes_through; /* the last queued resumption applied (deleted by the next save) */
    bool created_saved;      /* the store row exists (inserted with its first state) */
    uint64_t def_hash;       /* the definition's content hash (the row's `definition`) */
    wf_buf blob;             /* the encoded state, reused by every save (no allocation once
                                it has grown to the instance's size) */
    props props;             /* of the save in progress */
    /* a pool run (wfm_host_run_pooled) */
    wfm_host_done_fn done;
    void *done_ud;
    queue_copy *queue;      /* the queued resumptions read when it started */
    bool finish_on_commit;  /* the save in progress ends the run (else: resume, go on) */
    bool queue_empty;       /* the claim that adopted it saw no queued resumption */
    wfm_store_save_rec rec;  /* the save in progress (it borrows blob, bookmarks, props) */
    wfm_dinst *prev, *next; /* the host's list */
};

typedef struct def_entry {
    uint64_t hash;
    wfm_definition *def; /* retained */
    bool recorded;       /* wfm_store_put_definition done by this host */
} def_entry;

struct wfm_host {
    wfm_runtime *rt;
    wfm_store *store;
    wfm_host_opts opts;
    pthread_mutex_t lock;
    pthread_cond_t cv; /* busy flags, the renewal thread's sleep */
    wfm_dinst *first;
    wfm_dinst **buckets; /* every linked wfm_dinst by a hash of its id, chained */
    size_t bucket_count, linked; /* a power of two; linked: how many are in the list */
    def_entry *defs;
    size_t def_count, def_cap;
    pthread_t thread;
    bool thread_started, stop;
    atomic_bool ending; /* wfm_host_end_runs: pool runs end at their next persist point */
};

static int64_t real_clock_us(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t host_now(const wfm_host *h)
{
    return h->opts.clock ? h->opts.clock(h->opts.clock_ud) : real_clock_us(NULL);
}

int64_t wfm_host_now_us(const wfm_host *host)
{
    return host_now(host);
}

/* ---- busy flags ---------------------------------------------------------------------------- */
static void hold(wfm_dinst *d)
{
    wfm_host *h = d->host;
    pthread_mutex_lock(&h->lock);
    while (d->busy)
        pthread_cond_wait(&h->cv, &h->lock);
    d->busy = true;
    pthread_mutex_unlock(&h->lock);
}

static void let_go(wfm_dinst *d)
{
    wfm_host *h = d->host;
    pthread_mutex_lock(&h->lock);
    assert(d->busy); /* only the thread that held it lets it go */
    d->busy = false;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->lock);
}

/* ---- bookmarks ----------------------------------------------------------------------------- */
static void free_bookmarks(wfm_dinst *d)
{
    for (size_t i = 0; i < d->bookmark_count; i++)
        wf_free(d->bookmarks[i]);
    wf_free(d->bookmarks);
    d->bookmarks = NULL;
    d->bookmark_count = 0;
}

static bool is_done(const wfm_instance *inst)
{
    return wfm_instance_state_get(inst) >= WFM_INSTANCE_CLOSED;
}

/* Copy the user-visible blocking bookmarks of the instance. */
static wf_status refresh_bookmarks(wfm_dinst *d, wf_error *err)
{
    free_bookmarks(d);
    size_t n = is_done(d->inst) ? 0 : wfm_instance_bookmark_count(d->inst);
    if (!n)
        return WF_OK;
    if (!(d->bookmarks = wf_calloc(n, sizeof *d->bookmarks)))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *name = wfm_instance_bookmark_name(d->inst, i);
        if (wfm_persist_bookmark(name))
            continue;
        if (!(d->bookmarks[d->bookmark_count] = wf_strdup(name)))
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        d->bookmark_count++;
    }
    return WF_OK;
}

static size_t persist_requests(const wfm_instance *inst)
{
    if (is_done(inst))
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < wfm_instance_bookmark_count(inst); i++)
        n += wfm_persist_bookmark(wfm_instance_bookmark_name(inst, i));
    return n;
}

/* ---- the instance's inside (the host holds it: it never runs on the pool) ------------------ */
static bool zone_in(const wfm_ai *a)
{
    for (; a; a = a->next) {
        if ((a->spec->flags & WFM_KIND_NO_PERSIST) && a->status == WFM_EXECUTING)
            return true;
        if (zone_in(a->first_child))
            return true;
    }
    return false;
}

/* Is an activity of a no-persist kind (InvokeMethod, TransactionScope) executing? */
static bool in_no_persist_zone(wfm_dinst *d)
{
    if (is_done(d->inst))
        return false;
    wfm_ctx *ctx = wfm__instance_ctx(d->inst);
    return ctx->root && zone_in(ctx->root);
}

/* A promoted name: a workflow argument (any direction), else a variable of the root
 * activity while it runs. NULL when there is no such name. */
static const wf_value *promoted_value(wfm_dinst *d, const char *name)
{
    wfm_ctx *ctx = wfm__instance_ctx(d->inst);
    size_t index;
    if (wfm_definition_arg_find(ctx->def, name, &index))
        return index < ctx->root_env.count ? &ctx->root_env.slots[index] : NULL;
    const wfm_ai *root = ctx->root;
    if (!root || !(root->flags & WFM__AI_STARTED) || !root->venv.slots)
        return NULL;
    for (uint32_t i = 0; i < root->node->var_count && i < root->venv.count; i++)
        if (strcmp(root->node->vars[i].name, name) == 0)
            return &root->venv.slots[i];
    return NULL;
}

/* ---- saving -------------------------------------------------------------------------------- */
static void props_fini(props *p)
{
    for (size_t i = 0; p->texts && i < p->count; i++)
        wf_buf_fini(&p->texts[i]);
    wf_free(p->texts);
    wf_free(p->names);
    wf_free(p->values);
}

/* The host's promote list, then the names an earlier save promoted (once promoted, a name
 * stays promoted across hosts). */
static wf_status props_collect(const wfm_host *h, wfm_dinst *d, props *p, wf_error *err)
{
    size_t np = h->opts.promote_count + d->kept_count;
    *p = (props){wf_calloc(np + 1, sizeof *p->names), wf_calloc(np + 1, sizeof *p->values),
                 wf_calloc(np + 1, sizeof *p->texts), 0};
    bool oom = !p->names || !p->values || !p->texts;
    for (size_t i = 0; !oom && i < np; i++) {
        const char *name =
            i < h->opts.promote_count ? h->opts.promote[i] : d->kept[i - h->opts.promote_count];
        const wf_value *v = promoted_value(d, name);
        if (!v)
            continue;
        wf_buf *text = &p->texts[p->count];
        wf_buf_init(text);
        oom = !wf_value_to_text(v, text) || text->oom;
        p->names[p->count] = name;
        p->values[p->count++] = text->data;
    }
    if (oom) {
        props_fini(p);
        *p = (props){0};
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    return WF_OK;
}

/* Encode the instance into d->blob and describe the save in d->rec (bookmarks, promoted
 * properties into d->props, earliest timer); release=true also gives up the lease (unload,
 * completion). held: called by the worker holding the instance (a pool run's on_complete). */
static wf_status save_prepare(wfm_host *h, wfm_dinst *d, bool release, bool held, wf_error *err)
{
    assert(d->busy); /* the saving thread holds the instance (hold, a pool run, poll) */
    if (!d->loaded)
        return wf_error_set(err, WF_E_STATE, NULL, "instance '%s' is not loaded", d->id.text);
    if (in_no_persist_zone(d))
        return wf_error_set(err, WF_E_STATE, NULL,
                            "instance '%s' is in a no-persist zone (InvokeMethod or "
                            "TransactionScope executing)",
                            d->id.text);
    wf_buf *blob = &d->blob;
    if (blob->oom) { /* a failed save left it unusable: start again */
        wf_buf_fini(blob);
        wf_buf_init(blob);
    }
    wf_buf_reset(blob);
    assert(!d->props.names); /* one save at a time */
    wf_status st = held ? wfm_instance_save_held(d->inst, blob, err)
                        : wfm_instance_save(d->inst, blob, err);
    if (st == WF_OK)
        st = refresh_bookmarks(d, err);
    if (st == WF_OK)
        st = props_collect(h, d, &d->props, err);
    if (st != WF_OK)
        return st;
    int64_t due = wfm_instance_next_timer_us(d->inst);
    d->rec = (wfm_store_save_rec){
        .id = d->id.text,
        .status = wfm_dinst_status(d),
        .state = blob->data,
        .state_len = blob->len,
        .bookmarks = (const char *const *)d->bookmarks,
        .bookmark_count = d->bookmark_count,
        .prop_names = d->props.names,
        .prop_values = d->props.values,
        .prop_count = d->props.count,
        .next_timer_us = due == INT64_MAX || is_done(d->inst) ? 0 : due,
        .release = release,
        .resumes_through = d->resumes_through,
    };
    return WF_OK;
}

/* After the save described by d->rec: st says whether it committed. initial: the new
 * instance's state before its first run (wfm_host_run), which is part of creating it rather
 * than a persist point: not counted, no on_persist, no tracking record. */
static void save_finish(wfm_host *h, wfm_dinst *d, bool initial, wf_status st)
{
    /* a committed save means the row exists (the first one inserted it) */
    assert(st != WF_OK || d->created_saved);
    if (st == WF_OK && initial) {
        d->created_saved = true;
    } else if (st == WF_OK) {
        d->saves++;
        d->dirty = false;
        d->loaded = !d->rec.release;
        wfm_instance_track_state(d->inst, "Persisted");
        if (d->rec.release && !is_done(d->inst))
            wfm_instance_track_state(d->inst, "Unloaded");
        if (h->opts.on_persist)
            h->opts.on_persist(h->opts.on_persist_ud, &d->rec);
    }
    props_fini(&d->props);
    d->props = (props){0};
}

/* Save and wait for the commit. The first save of a new instance creates its row (there is
 * never a row without a state: a crash or a full disk before this commit leaves nothing). */
static wf_status save_state(wfm_host *h, wfm_dinst *d, bool release, bool initial,
                            wf_error *err)
{
    wf_status st = save_prepare(h, d, release, false, err);
    if (st == WF_OK && !d->created_saved)
        st = wfm_store_insert(h->store, d->def_hash, &d->rec, err);
    else if (st == WF_OK)
        st = wfm_store_save(h->store, &d->rec, err);
    if (st == WF_OK)
        d->created_saved = true;
    save_finish(h, d, initial, st);
    return st;
}

static wf_status save_locked(wfm_host *h, wfm_dinst *d, bool release, wf_error *err)
{
    return save_state(h, d, release, false, err);
}

/* ---- the host ------------------------------------------------------------------------------ */
static void *renew_main(void *arg)
{
    wfm_host *h = arg;
    int64_t period = h->opts.renew_ms > 0 ? h->opts.renew_ms : DEFAULT_RENEW_MS;
    pthread_mutex_lock(&h->lock);
    while (!h->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(period / 1000);
        ts.tv_nsec += (long)(period % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int rc = 0;
        while (!h->stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&h->cv, &h->lock, &ts);
        if (h->stop)
            break;
        pthread_mutex_unlock(&h->lock);
        wf_error err = WF_ERROR_INIT;
        wfm_store_renew(h->store, &err);
        wf_error_clear(&err);
        wfm_host_poll(h, &err);
        wf_error_clear(&err);
        pthread_mutex_lock(&h->lock);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

wf_status wfm_host_create(wfm_runtime *rt, wfm_store *store, const wfm_host_opts *opts,
                          wfm_host **out, wf_error *err)
{
    *out = NULL;
    wfm_host *h = wf_calloc(1, sizeof *h);
    if (!h)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wfm_host_opts defaults = WFM_HOST_OPTS_INIT;
    h->opts = opts ? *opts : defaults;
    h->rt = rt;
    h->store = store;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->bucket_count = 64;
    if (!(h->buckets = wf_calloc(h->bucket_count, sizeof *h->buckets))) {
        wfm_host_destroy(h);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    if (h->opts.renew_ms >= 0) {
        if (pthread_create(&h->thread, NULL, renew_main, h) != 0) {
            wfm_host_destroy(h);
            return wf_error_set(err, WF_E_NOMEM, NULL, "cannot start the lease renewal thread");
        }
        h->thread_started = true;
    }
    *out = h;
    return WF_OK;
}

void wfm_host_destroy(wfm_host *h)
{
    if (!h)
        return;
    if (h->thread_started) {
        pthread_mutex_lock(&h->lock);
        h->stop = true;
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->lock);
        pthread_join(h->thread, NULL);
    }
    for (size_t i = 0; i < h->def_count; i++)
        wfm_definition_release(h->defs[i].def);
    wf_free(h->defs);
    wf_free(h->buckets);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->lock);
    wf_free(h);
}

wfm_store *wfm_host_store(wfm_host *h)
{
    return h->store;
}

/* Keep a reference to def by hash (for loads). */
/* Keep def for loads by hash; *recorded (optional): whether this host already recorded it in
 * the store (wfm_store_put_definition, then mark_recorded). */
static wf_status cache_def(wfm_host *h, wfm_definition *def, bool *recorded, wf_error *err)
{
    uint64_t hash = wfm_definition_hash(def);
    wf_status st = WF_OK;
    pthread_mutex_lock(&h->lock);
    bool found = false;
    for (size_t i = 0; i < h->def_count && !found; i++)
        if ((found = h->defs[i].hash == hash) && recorded)
            *recorded = h->defs[i].recorded;
    if (!found) {
        if (h->def_count == h->def_cap) {
            size_t cap = h->def_cap ? h->def_cap * 2 : 4;
            def_entry *n = wf_realloc(h->defs, cap * sizeof *n);
            if (n) {
                h->defs = n;
                h->def_cap = cap;
            }
        }
        if (h->def_count < h->def_cap)
            h->defs[h->def_count++] = (def_entry){hash, wfm_definition_retain(def), false};
        else
            st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    pthread_mutex_unlock(&h->lock);
    return st;
}

static void mark_recorded(wfm_host *h, uint64_t hash)
{
    pthread_mutex_lock(&h->lock);
    for (size_t i = 0; i < h->def_count; i++)
        h->defs[i].recorded |= h->defs[i].hash == hash;
    pthread_mutex_unlock(&h->lock);
}

static wfm_definition *cached_def(wfm_host *h, uint64_t hash)
{
    wfm_definition *def = NULL;
    pthread_mutex_lock(&h->lock);
    for (size_t i = 0; i < h->def_count && !def; i++)
        if (h->defs[i].hash == hash)
            def = wfm_definition_retain(h->defs[i].def);
    pthread_mutex_unlock(&h->lock);
    return def;
}

/* The bucket of instance `id`. */
static size_t bucket_of(const wfm_host *h, const char *id)
{
    return (size_t)wf_hash_bytes(id, strlen(id)) & (h->bucket_count - 1);
}

/* Under h->lock: the host's wfm_dinst of instance `id` that holds its lease or is in use, if
 * any (loaded changes only while busy is set, so reading it when not busy is safe). */
static wfm_dinst *open_dinst_locked(wfm_host *h, const char *id)
{
    for (wfm_dinst *d = h->buckets[bucket_of(h, id)]; d; d = d->same_bucket)
        if ((d->busy || d->loaded) && strcmp(d->id.text, id) == 0)
            return d;
    return NULL;
}

bool wfm_host_has(wfm_host *h, const char *id)
{
    pthread_mutex_lock(&h->lock);
    bool open = open_dinst_locked(h, id) != NULL;
    pthread_mutex_unlock(&h->lock);
    return open;
}

/* WF_E_LOCKED when this host already has instance `id` open: a second copy would run it
 * twice under the same lease. */
static wf_status not_open(wfm_host *h, const char *id, wf_error *err)
{
    if (!wfm_host_has(h, id))
        return WF_OK;
    return wf_error_set(err, WF_E_LOCKED, NULL, "instance '%s' is already loaded by this host", id);
}

/* Under h->lock: twice the buckets once there are more linked instances than buckets (out of
 * memory: the chains grow longer instead). */
static void grow_buckets_locked(wfm_host *h)
{
    if (h->linked <= h->bucket_count)
        return;
    wfm_dinst **grown = wf_calloc(h->bucket_count * 2, sizeof *grown);
    if (!grown)
        return;
    wf_free(h->buckets);
    h->buckets = grown;
    h->bucket_count *= 2;
    for (wfm_dinst *d = h->first; d; d = d->next) {
        size_t b = bucket_of(h, d->id.text);
        d->same_bucket = h->buckets[b];
        h->buckets[b] = d;
    }
}

static void link_dinst(wfm_host *h, wfm_dinst *d)
{
    pthread_mutex_lock(&h->lock);
    d->next = h->first;
    if (h->first)
        h->first->prev = d;
    h->first = d;
    size_t b = bucket_of(h, d->id.text);
    d->same_bucket = h->buckets[b];
    h->buckets[b] = d;
    h->linked++;
    grow_buckets_locked(h);
    pthread_mutex_unlock(&h->lock);
}

/* Under h->lock: take d out of the list and its bucket. */
static void unlink_dinst_locked(wfm_host *h, wfm_dinst *d)
{
    if (d->prev)
        d->prev->next = d->next;
    else
        h->first = d->next;
    if (d->next)
        d->next->prev = d->prev;
    wfm_dinst **at = &h->buckets[bucket_of(h, d->id.text)];
    while (*at != d) {
        assert(*at); /* a linked wfm_dinst is in its bucket */
        at = &(*at)->same_bucket;
    }
    *at = d->same_bucket;
    h->linked--;
}

static wfm_dinst *dinst_new(wfm_host *h, const char *id, wf_error *err)
{
    wfm_dinst *d = wf_calloc(1, sizeof *d);
    if (!d) {
        wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        return NULL;
    }
    d->host = h;
    snprintf(d->id.text, sizeof d->id.text, "%s", id);
    wf_buf_init(&d->blob);
    return d;
}

static void dinst_free(wfm_dinst *d)
{
    wf_buf_fini(&d->blob);
    wf_free(d);
}

/* The in-memory instance and an id; no store row until its first save. */
wf_status wfm_host_new(wfm_host *h, wfm_definition *def, wfm_dinst **out, wf_error *err)
{
    *out = NULL;
    wfm_dinst *d = dinst_new(h, "", err);
    if (!d)
        return WF_E_NOMEM;
    wf_status st = wfm_instance_create(h->rt, def, &d->inst, err);
    if (st == WF_OK)
        st = wfm_durable_mark(d->inst, err);
    bool recorded = false;
    if (st == WF_OK)
        st = cache_def(h, def, &recorded, err);
    if (st == WF_OK && !recorded) {
        /* the absolute path, so that a host in another directory can load it again */
        const char *path = wfm_definition_path(def);
        char *abs = path ? realpath(path, NULL) : NULL;
        st = wfm_store_put_definition(h->store, wfm_definition_hash(def), abs ? abs : path, err);
        free(abs);
        if (st == WF_OK)
            mark_recorded(h, wfm_definition_hash(def));
    }
    if (st != WF_OK) {
        wfm_instance_destroy(d->inst);
        dinst_free(d);
        return st;
    }
    wfm_store_new_id(&d->id); /* the row comes with the first save (save_state) */
    d->def_hash = wfm_definition_hash(def);
    d->loaded = true;
    d->dirty = true;
    wfm_instance_set_id(d->inst, d->id.text);
    link_dinst(h, d);
    *out = d;
    return WF_OK;
}

/* The path the store recorded for instance `id`'s definition. */
typedef struct path_find {
    const char *id;
    char *path;
    bool oom;
} path_find;

static bool path_row(void *ud, const wfm_store_row *row)
{
    path_find *f = ud;
    if (strcmp(row->id, f->id) != 0)
        return true;
    if (row->definition_path && row->definition_path[0] &&
        !(f->path = wf_strdup(row->definition_path)))
        f->oom = true;
    return false;
}

static wf_status find_def(wfm_host *h, const char *id, uint64_t hash, wfm_definition **out,
                          wf_error *err)
{
    if ((*out = cached_def(h, hash)))
        return WF_OK;
    path_find f = {id, NULL, false};
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    wf_status st = wfm_store_query_rows(h->store, &q, path_row, &f, err);
    if (st != WF_OK)
        return st;
    if (f.oom)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (!f.path)
        return wf_error_set(err, WF_E_NOTFOUND, NULL,
                            "the store has no definition file for instance '%s'", id);
    wfm_definition *def = NULL;
    st = wfm_runtime_load(h->rt, f.path, &def, NULL, err);
    if (st == WF_OK && wfm_definition_hash(def) != hash) {
        wf_loc loc = {f.path, 0, 0};
        st = wf_error_set(err, WF_E_STATE, &loc,
                          "the workflow file changed since instance '%s' was saved", id);
    }
    if (st == WF_OK)
        st = cache_def(h, def, NULL, err);
    wf_free(f.path);
    if (st != WF_OK) {
        wfm_definition_release(def);
        return st;
    }
    *out = def;
    return WF_OK;
}

static bool completed_status(const char *status)
{
    return strcmp(status, "Closed") == 0 || strcmp(status, "Faulted") == 0 ||
           strcmp(status, "Canceled") == 0 || strcmp(status, "Terminated") == 0;
}

/* Read and decode the saved state of `id` (no store change). */
/* Decode a saved state of instance `id` (definition `hash`). */
static wf_status restore(wfm_host *h, const char *id, uint64_t hash, const void *blob,
                         size_t len, wfm_instance **inst, wf_error *err)
{
    if (!blob)
        return wf_error_set(err, WF_E_STATE, NULL, "instance '%s' has no saved state", id);
    wfm_definition *def = NULL;
    wf_status st = find_def(h, id, hash, &def, err);
    if (st != WF_OK)
        return st;
    st = wfm_instance_restore(h->rt, def, blob, len, inst, err);
    wfm_definition_release(def);
    if (st == WF_OK && (st = wfm_durable_mark(*inst, err)) != WF_OK) {
        wfm_instance_destroy(*inst);
        *inst = NULL;
    }
    if (st != WF_OK)
        wf_error_prefix(err, "instance '%s': ", id);
    return st;
}

static wf_status read_and_restore(wfm_host *h, const char *id, void **blob, size_t *len,
                                  wfm_instance **inst, wf_error *err)
{
    char status[32] = "";
    uint64_t hash = 0;
    *inst = NULL;
    wf_status st = wfm_store_load_state(h->store, id, blob, len, status, &hash, err);
    if (st != WF_OK)
        return st;
    if (completed_status(status))
        return wf_error_set(err, WF_E_STATE, NULL, "instance '%s' has completed (%s)", id, status);
    return restore(h, id, hash, *blob, *len, inst, err);
}

static void free_kept(wfm_dinst *d)
{
    for (size_t i = 0; i < d->kept_count; i++)
        wf_free(d->kept[i]);
    wf_free(d->kept);
    d->kept = NULL;
    d->kept_count = 0;
}

static bool in_promote_list(const wfm_host *h, const char *name, size_t len)
{
    for (size_t i = 0; i < h->opts.promote_count; i++)
        if (strlen(h->opts.promote[i]) == len && memcmp(h->opts.promote[i], name, len) == 0)
            return true;
    return false;
}

/* Remember the names the store has promoted for d that the host's list lacks. */
static wf_status keep_promoted(wfm_host *h, wfm_dinst *d, wf_error *err)
{
    char *lines = NULL;
    wf_status st = wfm_store_props(h->store, d->id.text, &lines, err);
    size_t n = 0;
    for (const char *p = lines; st == WF_OK && p && *p; p++)
        n += *p == '\n';
    if (st == WF_OK && n && !(d->kept = wf_calloc(n, sizeof *d->kept)))
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    for (const char *p = lines; st == WF_OK && p && *p;) {
        size_t len = strcspn(p, "=\n");
        if (len && !in_promote_list(h, p, len) && d->kept_count < n) {
            if (!(d->kept[d->kept_count] = wf_malloc(len + 1))) {
                st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
                break;
            }
            memcpy(d->kept[d->kept_count], p, len);
            d->kept[d->kept_count++][len] = '\0';
        }
        p += strcspn(p, "\n");
        p += *p == '\n';
    }
    wf_free(lines);
    return st;
}

/* The wfm_dinst of a restored instance whose lease this host holds (inst is taken over on
 * success only). read_props: the store may hold promoted properties for it (keep_promoted). */
static wf_status dinst_loaded(wfm_host *h, const char *id, wfm_instance *inst, bool read_props,
                              wfm_dinst **out, wf_error *err)
{
    wfm_dinst *d = dinst_new(h, id, err);
    if (!d)
        return WF_E_NOMEM;
    d->inst = inst;
    d->loaded = true;
    d->resumed = true;
    d->created_saved = true;
    wfm_instance_set_id(inst, id);
    wf_status st = refresh_bookmarks(d, err);
    if (st == WF_OK && read_props)
        st = keep_promoted(h, d, err);
    if (st != WF_OK) {
        free_bookmarks(d);
        free_kept(d);
        d->inst = NULL;
        dinst_free(d);
        return st;
    }
    link_dinst(h, d);
    *out = d;
    return WF_OK;
}

/* Read, decode, lock, then read again under the lease: another host may have saved between
 * the read and the lock, and then the newer state is decoded. Every failure after the lock
 * gives the lease back (one fail: label), so a failed load never leaves the row leased. */
wf_status wfm_host_load(wfm_host *h, const char *id, wfm_dinst **out, wf_error *err)
{
    *out = NULL;
    void *blob = NULL, *again = NULL;
    size_t len = 0, again_len = 0;
    wfm_instance *inst = NULL;
    wfm_dinst *d = NULL;
    bool locked = false;
    wf_status st = read_and_restore(h, id, &blob, &len, &inst, err);
    if (st != WF_OK)
        goto fail;
    if ((st = not_open(h, id, err)) != WF_OK || (st = wfm_store_lock(h->store, id, err)) != WF_OK)
        goto fail;
    locked = true;
    for (int tries = 0; tries < 3; tries++) {
        char status[32];
        uint64_t hash;
        if ((st = wfm_store_load_state(h->store, id, &again, &again_len, status, &hash, err)) !=
            WF_OK)
            goto fail;
        if (again_len == len && again && memcmp(again, blob, len) == 0)
            break;
        wfm_instance_destroy(inst);
        inst = NULL;
        wf_free(blob);
        wf_free(again);
        blob = again = NULL;
        if ((st = read_and_restore(h, id, &blob, &len, &inst, err)) != WF_OK)
            goto fail;
    }
    if ((st = dinst_loaded(h, id, inst, true, &d, err)) != WF_OK)
        goto fail;
    wf_free(blob);
    wf_free(again);
    *out = d;
    return WF_OK;
fail:
    if (locked) {
        wf_error tmp = WF_ERROR_INIT;
        wfm_store_release(h->store, id, &tmp);
    }
    wfm_instance_destroy(inst);
    wf_free(blob);
    wf_free(again);
    return st;
}

wf_status wfm_host_adopt(wfm_host *h, const char *id, const char *status, uint64_t hash,
                         const void *state, size_t state_len, int64_t pending_resumes,
                         int64_t promoted, wfm_dinst **out, wf_error *err)
{
    *out = NULL;
    if (not_open(h, id, err) != WF_OK) /* the lease is the open copy's: keep it */
        return WF_E_LOCKED;
    wfm_instance *inst = NULL;
    wf_status st = completed_status(status)
                       ? wf_error_set(err, WF_E_STATE, NULL, "instance '%s' has completed (%s)",
                                      id, status)
                       : restore(h, id, hash, state, state_len, &inst, err);
    if (st == WF_OK && (st = dinst_loaded(h, id, inst, promoted != 0, out, err)) != WF_OK)
        wfm_instance_destroy(inst);
    if (st == WF_OK)
        (*out)->queue_empty = pending_resumes == 0;
    if (st != WF_OK) { /* the claim's lease goes back */
        wf_error tmp = WF_ERROR_INIT;
        wfm_store_release(h->store, id, &tmp);
    }
    return st;
}

/* Idle outside a Persist request: apply the immediate idle policy. */
static wf_status idle_policy(wfm_host *h, wfm_dinst *d, wf_error *err)
{
    d->idle_since_us = host_now(h);
    bool unload = h->opts.time_to_unload_ms == 0;
    bool persist = unload || (h->opts.time_to_persist_ms == 0 && h->opts.time_to_unload_ms > 0);
    if (!persist || in_no_persist_zone(d)) /* a zone defers it; the instance stays loaded */
        return WF_OK;
    return save_locked(h, d, unload, err);
}

/* Resume every pending Persist request (names copied first: resuming changes the list). */
static wf_status resume_requests(wfm_dinst *d, size_t requests, wf_error *err)
{
    char **names = wf_calloc(requests, sizeof *names);
    size_t n = 0;
    wf_status st = names ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; st == WF_OK && i < wfm_instance_bookmark_count(d->inst); i++) {
        const char *name = wfm_instance_bookmark_name(d->inst, i);
        if (!wfm_persist_bookmark(name) || n == requests)
            continue;
        if (!(names[n++] = wf_strdup(name)))
            st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    for (size_t i = 0; st == WF_OK && i < n; i++)
        st = wfm_instance_resume(d->inst, names[i], NULL, err);
    for (size_t i = 0; names && i < n; i++)
        wf_free(names[i]);
    wf_free(names);
    return st;
}

/* ---- resumption payloads ------------------------------------------------------------------- */
/* WF_E_TYPE / WF_E_NAME, naming the bookmark and the instance, when payload (NULL: null) is
 * not one the activity waiting on `bookmark` takes (wfm_instance_check_resume); checked
 * before resuming, so a wrong value never reaches the instance (where it would fault it). */
static wf_status check_payload(wfm_dinst *d, const char *bookmark, const wf_value *payload,
                               wf_error *err)
{
    if (is_done(d->inst))
        return WF_OK;
    wf_status st = wfm_instance_check_resume(d->inst, bookmark, payload, err);
    if (st != WF_OK && st != WF_E_NOMEM)
        wf_error_prefix(err, "instance '%s': ", d->id.text);
    return st;
}

/* ---- queued resumptions (wfm_store_enqueue_resume) ----------------------------------------- */
typedef struct queued {
    int64_t seq;
    char *bookmark, *payload_json;
} queued;

struct queue_copy {
    queued *items;
    size_t count, cap, next; /* next: the first not yet applied */
    bool oom;
};

static bool queue_row(void *ud, const wfm_store_resume *r)
{
    queue_copy *q = ud;
    if (q->count == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 4;
        queued *n = wf_realloc(q->items, cap * sizeof *n);
        if (!n) {
            q->oom = true;
            return false;
        }
        q->items = n;
        q->cap = cap;
    }
    queued *it = &q->items[q->count];
    it->seq = r->seq;
    it->bookmark = wf_strdup(r->bookmark);
    it->payload_json = wf_strdup(r->payload_json);
    q->count++;
    if (!it->bookmark || !it->payload_json)
        q->oom = true;
    return !q->oom;
}

static void queue_free(queue_copy *q)
{
    for (size_t i = 0; i < q->count; i++) {
        wf_free(q->items[i].bookmark);
        wf_free(q->items[i].payload_json);
    }
    wf_free(q->items);
    *q = (queue_copy){0};
}

static wf_status queue_read(wfm_host *h, wfm_dinst *d, queue_copy *q, wf_error *err)
{
    if (!d->created_saved) /* no row yet, so nothing queued (an enqueue needs the row) */
        return WF_OK;
    wf_status st = wfm_store_pending_resumes(h->store, d->id.text, queue_row, q, err);
    if (st == WF_OK && q->oom)
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return st;
}

/* Apply the queued resumptions in seq order, from q->next on, while the instance has their
 * bookmarks: the first it lacks (not created yet, or the instance has not started) stays
 * queued with everything after it, for a later run. *applied: one or more were. */
static wf_status queue_apply_as(wfm_host *h, wfm_dinst *d, queue_copy *q, bool held,
                                bool *applied, wf_error *err)
{
    *applied = false;
    while (q->next < q->count && !is_done(d->inst)) {
        const queued *it = &q->items[q->next];
        if (it->seq <= d->resumes_through) { /* applied already, its save still to come */
            q->next++;
            continue;
        }
        if (wfm_persist_bookmark(it->bookmark))
            return WF_OK;
        wf_value payload = wf_null();
        wf_status st = wf_json_parse(wfm_runtime_types(h->rt), it->payload_json,
                                     strlen(it->payload_json), &payload, err);
        if (st == WF_OK)
            st = check_payload(d, it->bookmark, &payload, err);
        if (st == WF_OK)
            st = held ? wfm__sched_resume(wfm__instance_ctx(d->inst), it->bookmark, &payload, err)
                      : wfm_instance_resume(d->inst, it->bookmark, &payload, err);
        wf_value_release(&payload);
        if (st == WF_E_NOTFOUND || st == WF_E_STATE) {
            wf_error_clear(err);
            return WF_OK;
        }
        if (st == WF_E_TYPE) { /* nobody to tell: drop it rather than fault the instance */
            wf_error_clear(err);
            d->resumes_through = it->seq;
            d->dirty = true;
            q->next++;
            continue;
        }
        if (st != WF_OK) {
            wf_error_prefix(err, "queued resumption %lld of instance '%s': ", (long long)it->seq,
                            d->id.text);
            return st;
        }
        d->resumes_through = it->seq;
        d->dirty = true;
        *applied = true;
        q->next++;
    }
    return WF_OK;
}

static wf_status queue_apply(wfm_host *h, wfm_dinst *d, queue_copy *q, bool *applied,
                             wf_error *err)
{
    return queue_apply_as(h, d, q, false, applied, err);
}

/* The run loop: the first run saves the new instance first (so that a restart finds it
 * runnable); queued resumptions are applied when their bookmarks exist; Persist requests
 * are saved (unless the state on disk is already this one) and resumed, completion is saved
 * and released (dropping what is still queued), idle goes to the idle policy. */
static wf_status run_queue(wfm_host *h, wfm_dinst *d, queue_copy *q, wf_error *err)
{
    if (wfm_instance_state_get(d->inst) == WFM_INSTANCE_CREATED && !d->created_saved) {
        wf_status st = save_state(h, d, false, true, err);
        if (st != WF_OK)
            return st;
    }
    for (;;) {
        size_t requests = persist_requests(d->inst);
        wf_status st = WF_OK;
        bool applied = false;
        if (requests && d->dirty) {
            if (in_no_persist_zone(d)) /* another branch: wait until the zone ends */
                return refresh_bookmarks(d, err);
            st = save_locked(h, d, false, err);
        }
        if (st == WF_OK && requests)
            st = resume_requests(d, requests, err);
        if (st == WF_OK)
            st = queue_apply(h, d, q, &applied, err);
        if (st == WF_OK)
            st = wfm_instance_run(d->inst, err);
        d->dirty = true;
        if (st == WF_E_LIMIT && is_done(d->inst)) {
            /* the step limit terminated it: save that, so that no host runs it again; the
             * limit stays the error returned (a failed save would only add to it) */
            wf_error ignored = WF_ERROR_INIT;
            save_locked(h, d, true, &ignored);
            return st;
        }
        if (st != WF_OK)
            return st;
        if (is_done(d->inst)) {
            if (q->count)
                d->resumes_through = q->items[q->count - 1].seq;
            return save_locked(h, d, true, err);
        }
        if (persist_requests(d->inst))
            continue;
        if ((st = queue_apply(h, d, q, &applied, err)) != WF_OK)
            return st;
        if (applied)
            continue;
        if ((st = refresh_bookmarks(d, err)) != WF_OK)
            return st;
        if (wfm_instance_state_get(d->inst) != WFM_INSTANCE_IDLE)
            return WF_OK;
        return idle_policy(h, d, err);
    }
}

static wf_status run_locked(wfm_host *h, wfm_dinst *d, wf_error *err)
{
    if (!d->loaded)
        return wf_error_set(err, WF_E_STATE, NULL, "instance '%s' is not loaded (%s)", d->id.text,
                            is_done(d->inst) ? "completed" : "unloaded");
    if (d->resumed) {
        d->resumed = false;
        wfm_instance_track_state(d->inst, "Resumed");
    }
    queue_copy q = {0};
    wf_status st = queue_read(h, d, &q, err);
    if (st == WF_OK)
        st = run_queue(h, d, &q, err);
    queue_free(&q);
    return st;
}

wf_status wfm_host_run(wfm_host *h, wfm_dinst *d, wf_error *err)
{
    hold(d);
    wfm_store_saver_begin(h->store); /* its saves may share a commit with other runs' */
    wf_status st = run_locked(h, d, err);
    wfm_store_saver_end(h->store);
    let_go(d);
    return st;
}

wf_status wfm_host_resume(wfm_host *h, wfm_dinst *d, const char *bookmark, const wf_value *payload,
                          wf_error *err)
{
    hold(d);
    wf_status st;
    if (!d->loaded)
        st = wf_error_set(err, WF_E_STATE, NULL, "instance '%s' is not loaded", d->id.text);
    else if (wfm_persist_bookmark(bookmark))
        st = wf_error_set(err, WF_E_NOTFOUND, NULL, "no bookmark named '%s'", bookmark);
    else
        st = WF_OK;
    if (st == WF_OK)
        st = check_payload(d, bookmark, payload, err);
    if (st == WF_OK) { /* resumptions queued earlier go first, as far as they can */
        queue_copy q = {0};
        bool applied = false;
        st = queue_read(h, d, &q, err);
        if (st == WF_OK)
            st = queue_apply(h, d, &q, &applied, err);
        queue_free(&q);
    }
    if (st == WF_OK)
        st = wfm_instance_resume(d->inst, bookmark, payload, err);
    if (st == WF_OK)
        d->dirty = true;
    let_go(d);
    return st;
}

wf_status wfm_host_persist(wfm_host *h, wfm_dinst *d, bool unload, wf_error *err)
{
    hold(d);
    wf_status st = save_locked(h, d, unload, err);
    let_go(d);
    return st;
}

wf_status wfm_host_start(wfm_host *h, wfm_dinst *d, wf_error *err)
{
    hold(d);
    wf_status st = WF_OK;
    if (wfm_instance_state_get(d->inst) != WFM_INSTANCE_CREATED || d->created_saved)
        st = wf_error_set(err, WF_E_STATE, NULL, "instance '%s' has already run or been saved",
                          d->id.text);
    if (st == WF_OK && (st = save_state(h, d, true, true, err)) == WF_OK)
        d->loaded = false; /* the lease went with the save: a host runs it */
    let_go(d);
    return st;
}

/* ---- pool runs ------------------------------------------------------------------------------
 * wfm_host_run_pooled: the instance runs on the runtime's workers; at every idle or completion
 * the worker calls pool_step (on_complete, holding the instance), which applies what
 * run_queue does on the caller's thread, except that a save is handed to the store's commit
 * thread (save_async) and the instance leaves the pool (unpool) until pool_saved, on the
 * commit thread, resumes its Persist requests and puts it back (or ends the run). */
static void pool_end(wfm_dinst *d, wf_status st, wf_error *err)
{
    queue_free(d->queue);
    wf_free(d->queue);
    d->queue = NULL;
    wfm_host_done_fn done = d->done;
    void *ud = d->done_ud;
    d->done = NULL;
    let_go(d);
    done(ud, d, st, err);
}

static void pool_saved(void *ud, wf_status st, const wf_error *serr)
{
    wfm_dinst *d = ud;
    wfm_host *h = d->host;
    wf_error err = WF_ERROR_INIT;
    if (st != WF_OK)
        err = *serr;
    save_finish(h, d, false, st);
    if (st != WF_OK || d->finish_on_commit) {
        pool_end(d, st, &err);
        return;
    }
    bool applied = false;
    size_t requests = persist_requests(d->inst);
    st = requests ? resume_requests(d, requests, &err) : WF_OK;
    if (st == WF_OK)
        st = queue_apply(h, d, d->queue, &applied, &err);
    d->dirty = true;
    if (st == WF_OK)
        st = wfm_instance_start(d->inst, &err);
    if (st != WF_OK)
        pool_end(d, st, &err);
}

/* From pool_step: take the instance off the pool and save it without waiting. */
static void save_async(wfm_host *h, wfm_dinst *d, bool release, bool finish)
{
    wf_error err = WF_ERROR_INIT;
    wfm__instance_unpool(d->inst);
    d->finish_on_commit = finish;
    wf_status st = save_prepare(h, d, release, true, &err);
    if (st == WF_OK)
        st = wfm_store_save_async(h->store, &d->rec, pool_saved, d, &err);
    if (st != WF_OK) {
        save_finish(h, d, false, st);
        pool_end(d, st, &err);
    }
}

static void pool_step(wfm_instance *inst, void *ud)
{
    wfm_dinst *d = ud;
    wfm_host *h = d->host;
    assert(d->inst == inst && d->busy);
    wf_error err = WF_ERROR_INIT;
    d->dirty = true;
    if (is_done(inst)) {
        if (d->queue->count)
            d->resumes_through = d->queue->items[d->queue->count - 1].seq;
        save_async(h, d, true, true);
        return;
    }
    bool zone = in_no_persist_zone(d);
    if (persist_requests(inst)) {
        if (!zone) /* in a zone: another branch; the pool runs it on until the zone ends */
            save_async(h, d, atomic_load(&h->ending), atomic_load(&h->ending));
        return;
    }
    bool applied = false;
    wf_status st = queue_apply_as(h, d, d->queue, true, &applied, &err);
    if (st == WF_OK && applied)
        return; /* running again: the worker puts it back on the queue */
    if (st == WF_OK)
        st = refresh_bookmarks(d, &err);
    if (st != WF_OK) {
        wfm__instance_unpool(inst);
        pool_end(d, st, &err);
        return;
    }
    if (zone) /* a timer or a native call inside the zone: the pool runs it on */
        return;
    d->idle_since_us = host_now(h);
    bool unload = h->opts.time_to_unload_ms == 0;
    if (unload || (h->opts.time_to_persist_ms == 0 && h->opts.time_to_unload_ms > 0)) {
        save_async(h, d, unload, true);
        return;
    }
    wfm__instance_unpool(inst);
    pool_end(d, WF_OK, &err);
}

/* Start a pool run of d (held, its queue read, its creation saved): the Persist requests a
 * restored instance has, the queued resumptions, then on the pool. */
static wf_status pool_begin(wfm_host *h, wfm_dinst *d, wf_error *err)
{
    bool applied = false;
    wf_status st = WF_OK;
    size_t requests = persist_requests(d->inst);
    if (requests && d->dirty)
        st = save_locked(h, d, false, err);
    if (st == WF_OK && requests)
        st = resume_requests(d, requests, err);
    if (st == WF_OK)
        st = queue_apply(h, d, d->queue, &applied, err);
    if (st != WF_OK)
        return st;
    if (d->resumed) {
        d->resumed = false;
        wfm_instance_track_state(d->inst, "Resumed");
    }
    wfm_instance_on_complete(d->inst, pool_step, d);
    wfm__instance_report_idle(d->inst, true);
    d->dirty = true;
    return wfm_instance_start(d->inst, err);
}

/* A new instance's creation save (wfm_store_insert_async) committed or failed: run it now. */
static void pool_created(void *ud, wf_status st, const wf_error *serr)
{
    wfm_dinst *d = ud;
    wf_error err = WF_ERROR_INIT;
    if (st != WF_OK)
        err = *serr;
    else
        d->created_saved = true;
    save_finish(d->host, d, true, st);
    if (st == WF_OK)
        st = pool_begin(d->host, d, &err);
    if (st != WF_OK)
        pool_end(d, st, &err);
}

wf_status wfm_host_run_pooled(wfm_host *h, wfm_dinst *d, wfm_host_done_fn done, void *ud,
                              wf_error *err)
{
    assert(done);
    hold(d);
    wf_status st = WF_OK;
    if (!d->loaded)
        st = wf_error_set(err, WF_E_STATE, NULL, "instance '%s' is not loaded (%s)", d->id.text,
                          is_done(d->inst) ? "completed" : "unloaded");
    else if (!(d->queue = wf_calloc(1, sizeof *d->queue)))
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (st == WF_OK && !d->queue_empty) /* one read saved per claimed instance */
        st = queue_read(h, d, d->queue, err);
    d->queue_empty = false;
    d->done = done;
    d->done_ud = ud;
    if (st == WF_OK && wfm_instance_state_get(d->inst) == WFM_INSTANCE_CREATED &&
        !d->created_saved) {
        /* its creation joins the commit thread's group commit; it runs once committed */
        st = save_prepare(h, d, false, false, err);
        if (st == WF_OK)
            st = wfm_store_insert_async(h->store, d->def_hash, &d->rec, pool_created, d, err);
        if (st == WF_OK)
            return WF_OK;
        save_finish(h, d, true, st);
    } else if (st == WF_OK) {
        st = pool_begin(h, d, err);
    }
    if (st != WF_OK) {
        d->done = NULL;
        queue_free(d->queue);
        wf_free(d->queue);
        d->queue = NULL;
        let_go(d);
    }
    return st;
}

void wfm_host_end_runs(wfm_host *h)
{
    atomic_store(&h->ending, true);
}

wf_status wfm_host_poll(wfm_host *h, wf_error *err)
{
    int64_t ttp = h->opts.time_to_persist_ms, ttu = h->opts.time_to_unload_ms;
    if (ttu == 0 || (ttp == WFM_HOST_NEVER && ttu == WFM_HOST_NEVER))
        return WF_OK;
    int64_t now = host_now(h);
    wf_status result = WF_OK;
    /* One instance at a time: find a due one under the lock, mark it busy, save it. */
    for (;;) {
        wfm_dinst *due = NULL;
        bool unload = false;
        pthread_mutex_lock(&h->lock);
        for (wfm_dinst *d = h->first; d && !due; d = d->next) {
            if (d->busy || !d->loaded || wfm_instance_state_get(d->inst) != WFM_INSTANCE_IDLE)
                continue;
            int64_t idle_ms = (now - d->idle_since_us) / 1000;
            if (ttu != WFM_HOST_NEVER && idle_ms >= ttu) {
                due = d;
                unload = true;
            } else if (d->dirty && ttp < ttu && idle_ms >= ttp) {
                due = d;
            }
        }
        if (due)
            due->busy = true;
        pthread_mutex_unlock(&h->lock);
        if (!due)
            return result;
        wf_status st = WF_OK;
        if (in_no_persist_zone(due)) {
            due->idle_since_us = now + 1000 * 1000; /* deferred: look again later */
        } else {
            wf_error tmp = WF_ERROR_INIT;
            st = save_locked(h, due, unload, &tmp);
            if (st != WF_OK) {
                due->idle_since_us = now + 1000 * 1000;
                if (result == WF_OK) {
                    result = st;
                    *err = tmp;
                } else {
                    wf_error_clear(&tmp);
                }
            }
        }
        let_go(due);
    }
}

void wfm_dinst_close(wfm_dinst *d)
{
    if (!d)
        return;
    wfm_host *h = d->host;
    hold(d);
    if (d->loaded && d->created_saved) { /* a new instance never saved has no row */
        wf_error tmp = WF_ERROR_INIT;
        wfm_store_release(h->store, d->id.text, &tmp);
        wf_error_clear(&tmp);
    }
    pthread_mutex_lock(&h->lock);
    unlink_dinst_locked(h, d);
    pthread_mutex_unlock(&h->lock);
    wfm_instance_destroy(d->inst);
    free_bookmarks(d);
    free_kept(d);
    dinst_free(d);
}

const char *wfm_dinst_status(const wfm_dinst *d)
{
    wfm_instance_state state = wfm_instance_state_get(d->inst);
    /* waiting only on a Persist request is runnable: a host resumes it on load */
    if (state == WFM_INSTANCE_IDLE && persist_requests(d->inst))
        state = WFM_INSTANCE_EXECUTING;
    return wfm_instance_state_name(state);
}

const char *wfm_dinst_id(const wfm_dinst *d)
{
    return d->id.text;
}

wfm_instance *wfm_dinst_instance(wfm_dinst *d)
{
    return d->inst;
}

bool wfm_dinst_loaded(const wfm_dinst *d)
{
    return d->loaded;
}

size_t wfm_dinst_bookmark_count(const wfm_dinst *d)
{
    return d->bookmark_count;
}

const char *wfm_dinst_bookmark_name(const wfm_dinst *d, size_t index)
{
    return index < d->bookmark_count ? d->bookmarks[index] : NULL;
}

uint64_t wfm_dinst_saves(const wfm_dinst *d)
{
    return d->saves;
}

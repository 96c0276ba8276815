/* wfm_runtime.c — the host side of the modern runtime: the runtime object (catalogue with
 * the built-ins, type table, definition cache keyed by path and content hash), the worker
 * pool with its runnable-instance queue, the timer thread, and the instance host API.
 * A worker holds an instance exclusively while it runs; a waiting instance holds no thread.
 *
 * Pool states of an instance (inst->ps, guarded by rt->lock):
 *   NONE -> QUEUED     post (wfm_instance_start, resume, a due timer)
 *   QUEUED -> RUNNING  worker_main takes it
 *   RUNNING -> NONE    after_slice (-> QUEUED again if more work or a post arrived)
 *   NONE -> HOST       host_hold (run, resume, cancel, terminate on the caller's thread)
 *   HOST -> NONE       host_release (-> QUEUED when the instance lives on the pool)
 * Until an instance is shared (inst->shared: started on the pool, or asynchronous work
 * begun) no other thread has a pointer to it, so the host's NONE <-> HOST moves and
 * wfm_instance_destroy skip rt->lock; from then on every move takes it. The host API's rule
 * (calls on one instance do not race) orders the unlocked moves with the host's later calls. */
#include "wfm_runtime.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h> /* offsetof */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h> /* sysconf */

#include "../common/wf_file.h"
#include "../common/wf_random.h"
#include "wfm_persist.h" /* wfm_persist_bookmark */
#include "wfm_sched_int.h"
#include "wfm_track_int.h"

enum { PS_NONE = 0, PS_QUEUED, PS_RUNNING, PS_HOST };
#define SLICE_ITEMS 4096 /* work items per turn on a worker, for fairness */

/* Asynchronous work (wfm_ctx_async_begin). Until it completes both the instance (its list) and
 * the worker doing it hold the handle; then only the instance does, until the next run
 * resumes its bookmark (drain_async) or the instance goes (async_detach_all). */
struct wfm_async {
    wfm_runtime *rt;
    wfm_instance *inst; /* NULL once the instance is gone (under rt->lock) */
    wfm_async *next;    /* the instance's list */
    bool done;
    wf_value payload; /* owned once done */
    char name[128];   /* the bookmark */
};

enum { RT_EXT_MAX = 8 };
typedef struct rt_ext {
    const wfm_rt_ext_spec *spec;
    void *state;
} rt_ext;

typedef struct timer_entry {
    int64_t due_us;
    wfm_instance *inst;
    uint64_t gen; /* inst->timer_gen when registered; older entries are stale */
} timer_entry;

struct wfm_runtime {
    wfm_catalogue *catalogue; /* owned */
    wf_types *types;          /* owned */
    const wf_libpath *libpath;
    wfm_native_check_fn check_native; /* validate-only */
    void *check_ud;
    wfm_write_fn write;
    void *write_ud;
    wfm_clock_fn clock;
    void *clock_ud;
    pthread_mutex_t out_lock; /* serialises the runtime's writer */
    pthread_mutex_t spare_lock;
    /* One recycled shell handed over by an atomic exchange, so a host creating and
     * destroying instances one at a time never takes spare_lock; the rest wait in spares. */
    _Atomic(wfm_instance *) spare_hot;
    wfm_instance *spares; /* recycled instance shells (q_next list) */
    size_t spare_count;
    /* definition cache */
    pthread_mutex_t cache_lock;
    wf_strmap *cache; /* "hash:path" -> wfm_definition (one reference each) */
    /* the pool */
    pthread_mutex_t lock;
    pthread_cond_t work_cv, idle_cv, inst_cv, timer_cv;
    pthread_t *workers;
    unsigned worker_count, workers_started;
    pthread_t timer_thread;
    bool timer_started, stop;
    wfm_instance *q_head, *q_tail; /* runnable instances */
    size_t q_len;
    unsigned running;      /* instances taken by workers */
    unsigned idle_workers; /* workers waiting on work_cv */
    unsigned idle_waiters; /* wfm_runtime_wait_idle callers, on idle_cv */
    unsigned inst_waiters; /* threads waiting for one instance's pool state, on inst_cv */
    bool wake_deferred;    /* the timer thread is to wake a worker at wake_at_us */
    int64_t wake_at_us;    /* CLOCK_MONOTONIC */
    timer_entry *theap;
    size_t theap_count, theap_cap, timer_waiting;
    _Atomic uint64_t n_defs, n_hits, n_created, n_completed, n_executed, n_items, n_resumed,
        n_timers;
    wfm_tracker *tracker;     /* borrowed; NULL: no tracking */
    unsigned track_mask;      /* wfm__track_sched_mask(tracker), fixed with the tracker */
    uint64_t max_steps;       /* opts.max_steps */
    unsigned async_waiting;   /* asynchronous work begun and not completed, under lock */
    rt_ext exts[RT_EXT_MAX];  /* wfm_ctx_runtime_ext, under cache_lock */
    size_t ext_count;
};

struct wfm_instance {
    wfm_runtime *rt;
    wfm_definition *def; /* retained */
    wfm_ctx ctx;
    wfm_write_fn write;
    void *write_ud;
    wfm_instance_fn on_complete;
    void *on_complete_ud;
    wfm_trace_fn trace;
    void *trace_ud;
    wfm_call_fn call_trace;
    void *call_trace_ud;
    size_t *outputs; /* arg indices of Out/InOut arguments */
    size_t output_count, outputs_cap;
    /* pool bookkeeping, under rt->lock once shared */
    bool shared; /* reachable from another thread (the pool, asynchronous work); sticky */
    int ps;
    bool wanted; /* posted while running or held by the host */
    bool pooled; /* started on the pool */
    bool report_idle; /* on_complete at every idle (wfm__instance_report_idle) */
    bool unpool;      /* leave the pool when the worker lets go (set by on_complete) */
    bool timer_registered;
    bool counted_done;
    uint64_t timer_gen;
    wfm_instance *q_next; /* the runnable queue, or the spare list */
    wfm_async *asyncs;    /* begun and not yet resumed (under rt->lock) */
    _Atomic unsigned async_count; /* entries of asyncs, readable without the lock */
    char id[WF_ID_LEN + 1]; /* "" until wfm_instance_id or wfm_instance_set_id */
    uint64_t track_seq;   /* tracking record numbers */
    const wfm__track_plan *track_plan; /* the tracker's plan of def, or NULL */
    bool track_masked; /* the scheduler's track_mask decides alone (a plain profile) */
};

static void shell_free(wfm_instance *inst);

/* ---- defaults ------------------------------------------------------------------------- */

static void stdout_write(void *ud, const char *text, size_t len)
{
    (void)ud;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
}

static int64_t real_clock(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- tracking ---------------------------------------------------------------------------- */

static wfm__track_target track_target(wfm_instance *inst)
{
    wfm_runtime *rt = inst->rt;
    wfm__track_target to = {rt->tracker, inst->track_plan, wfm_instance_id(inst),
                            &inst->track_seq,
                            rt->clock == real_clock ? WFM__TRACK_NOW : rt->clock(rt->clock_ud),
                            inst->def};
    return to;
}

static void inst_track(void *ud, wfm__track_event ev, const wfm_ai *ai, const wfm_ai *handler,
                       const char *name, const wf_value *value)
{
    wfm_instance *inst = ud;
    if (!inst->track_masked &&
        !wfm__track_sched_wanted(inst->rt->tracker, inst->track_plan, ev, ai))
        return;
    if (ev == WFM__TRACK_RESUMED && wfm_persist_bookmark(name))
        return; /* the durable host's own resumption of a Persist request */
    wfm__track_target to = track_target(inst);
    wfm__track_sched(&to, ev, ai, handler, name, value);
}

/* A Persist activity waiting for the durable host's save: the instance is not idle in the
 * tracking sense (the host emits "Persisted" after the save and runs it on). */
static bool persist_pending(const wfm_ctx *ctx)
{
    for (const wfm__bookmark *bm = ctx->bm_first; bm; bm = bm->all_next)
        if (wfm_persist_bookmark(bm->name))
            return true;
    return false;
}

static void track_run_end(wfm_instance *inst)
{
    if (!wfm_tracker_wants(inst->rt->tracker, WFM_REC_INSTANCE) ||
        inst->ctx.state == WFM__SCHED_RUNNING)
        return;
    if (inst->ctx.state == WFM__SCHED_IDLE && persist_pending(&inst->ctx))
        return;
    wfm__track_target to = track_target(inst);
    wfm__track_run_end(&to, inst->ctx.state, &inst->ctx.fault);
}

/* splitmix64: a bijection of its counter, so one thread never repeats an id. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 128 random-looking bits per id from a per-thread generator the kernel seeds once per thread
 * (a getrandom call per instance cost more than the whole of a small workflow). */
static void fast_random_id(char *out)
{
    static _Thread_local uint64_t state[2];
    static _Thread_local bool seeded;
    static const char hex[] = "0123456789abcdef";
    if (!seeded) {
        wf_random_bytes(state, sizeof state);
        seeded = true;
    }
    uint64_t w[2] = {next_random(&state[0]), next_random(&state[0]) ^ state[1]};
    for (int i = 0; i < WF_ID_LEN; i++)
        out[i] = hex[(w[i / 16] >> (4 * (i % 16))) & 15];
    out[WF_ID_LEN] = '\0';
}

const char *wfm_instance_id(wfm_instance *inst)
{
    if (!inst->id[0])
        fast_random_id(inst->id);
    return inst->id;
}

void wfm_instance_set_id(wfm_instance *inst, const char *id)
{
    snprintf(inst->id, sizeof inst->id, "%s", id);
}

void wfm_instance_track_state(wfm_instance *inst, const char *state)
{
    if (!wfm_tracker_wants(inst->rt->tracker, WFM_REC_INSTANCE))
        return;
    wfm__track_target to = track_target(inst);
    wfm__track_instance(&to, state, NULL);
}

/* The instance's writer: its own, else the runtime's, which instances on several workers
 * share: calls to it are serialised. */
static void inst_write(void *ud, const char *text, size_t len)
{
    wfm_instance *inst = ud;
    if (inst->write) {
        inst->write(inst->write_ud, text, len);
        return;
    }
    wfm_runtime *rt = inst->rt;
    pthread_mutex_lock(&rt->out_lock);
    rt->write(rt->write_ud, text, len);
    pthread_mutex_unlock(&rt->out_lock);
}

static int64_t inst_clock(void *ud)
{
    wfm_runtime *rt = ud;
    return rt->clock(rt->clock_ud);
}

/* ---- runtime -------------------------------------------------------------------------- */

static void release_def(void *def)
{
    wfm_definition_release(def);
}

wf_status wfm_runtime_create(const wfm_runtime_opts *opts, wfm_runtime **out, wf_error *err)
{
    *out = NULL;
    wfm_runtime_opts defaults = WFM_RUNTIME_OPTS_INIT;
    if (!opts)
        opts = &defaults;
    wfm_runtime *rt = wf_calloc(1, sizeof *rt);
    if (!rt)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wf_status st = wfm_catalogue_create(&rt->catalogue, err);
    if (st == WF_OK && !(rt->types = wf_types_create()))
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (st == WF_OK && !(rt->cache = wf_strmap_create(release_def)))
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (st == WF_OK)
        st = wfm__builtins_register(rt->catalogue, err);
    if (st != WF_OK) {
        wf_strmap_destroy(rt->cache);
        wf_types_destroy(rt->types);
        wfm_catalogue_destroy(rt->catalogue);
        wf_free(rt);
        return st;
    }
    rt->libpath = opts->libpath;
    rt->check_native = opts->check_native;
    rt->check_ud = opts->check_ud;
    rt->write = opts->write ? opts->write : stdout_write;
    rt->write_ud = opts->write ? opts->write_ud : rt;
    rt->clock = opts->clock ? opts->clock : real_clock;
    rt->max_steps = opts->max_steps;
    rt->clock_ud = opts->clock_ud;
    rt->tracker = opts->tracker;
    rt->track_mask = wfm__track_sched_mask(rt->tracker); /* a tracker's profile never changes */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    rt->worker_count = opts->worker_count ? opts->worker_count : (cores > 0 ? (unsigned)cores : 1);
    pthread_mutex_init(&rt->out_lock, NULL);
    pthread_mutex_init(&rt->spare_lock, NULL);
    atomic_init(&rt->spare_hot, NULL);
    pthread_mutex_init(&rt->cache_lock, NULL);
    pthread_mutex_init(&rt->lock, NULL);
    pthread_cond_init(&rt->work_cv, NULL);
    pthread_cond_init(&rt->inst_cv, NULL);
    pthread_cond_init(&rt->idle_cv, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&rt->timer_cv, &ca);
    pthread_condattr_destroy(&ca);
    *out = rt;
    return WF_OK;
}

void wfm_runtime_destroy(wfm_runtime *rt)
{
    if (!rt)
        return;
    for (size_t i = rt->ext_count; i-- > 0;) /* e.g. the HTTP engine: its work ends first */
        rt->exts[i].spec->destroy(rt->exts[i].state);
    pthread_mutex_lock(&rt->lock);
    rt->stop = true;
    pthread_cond_broadcast(&rt->work_cv);
    pthread_cond_broadcast(&rt->timer_cv);
    pthread_mutex_unlock(&rt->lock);
    for (unsigned i = 0; i < rt->workers_started; i++)
        pthread_join(rt->workers[i], NULL);
    if (rt->timer_started)
        pthread_join(rt->timer_thread, NULL);
    wf_free(rt->workers);
    wf_free(rt->theap);
    shell_free(atomic_load(&rt->spare_hot)); /* accepts NULL */
    while (rt->spares) {
        wfm_instance *next = rt->spares->q_next;
        shell_free(rt->spares);
        rt->spares = next;
    }
    pthread_mutex_destroy(&rt->spare_lock);
    wf_strmap_destroy(rt->cache);
    wfm_catalogue_destroy(rt->catalogue);
    wf_types_destroy(rt->types);
    pthread_cond_destroy(&rt->timer_cv);
    pthread_cond_destroy(&rt->idle_cv);
    pthread_cond_destroy(&rt->work_cv);
    pthread_cond_destroy(&rt->inst_cv);
    pthread_mutex_destroy(&rt->lock);
    pthread_mutex_destroy(&rt->cache_lock);
    pthread_mutex_destroy(&rt->out_lock);
    wf_free(rt);
}

wfm_catalogue *wfm_runtime_catalogue(wfm_runtime *rt)
{
    return rt->catalogue;
}

wf_types *wfm_runtime_types(wfm_runtime *rt)
{
    return rt->types;
}

void wfm_runtime_stats(wfm_runtime *rt, wfm_stats *out)
{
    out->definitions_loaded = atomic_load(&rt->n_defs);
    out->definition_cache_hits = atomic_load(&rt->n_hits);
    out->instances_created = atomic_load(&rt->n_created);
    out->instances_completed = atomic_load(&rt->n_completed);
    out->activities_executed = atomic_load(&rt->n_executed);
    out->work_items = atomic_load(&rt->n_items);
    out->bookmarks_resumed = atomic_load(&rt->n_resumed);
    out->timers_fired = atomic_load(&rt->n_timers);
}

/* ---- definition cache ----------------------------------------------------------------- */

wf_status wfm_runtime_load_mem(wfm_runtime *rt, const char *name, const char *data, size_t len,
                               wfm_definition **out, wf_diags *diags, wf_error *err)
{
    *out = NULL;
    char key[64 + 4096];
    /* The key is the hash that identifies a definition in stores, which a load needs anyway:
       the text is hashed once, whether the definition is cached or not. */
    uint64_t h = wf_hash_bytes(data, len);
    snprintf(key, sizeof key, "%016llx:%s", (unsigned long long)h, name);
    pthread_mutex_lock(&rt->cache_lock);
    wfm_definition *def = wf_strmap_get(rt->cache, key);
    if (def)
        wfm_definition_retain(def);
    pthread_mutex_unlock(&rt->cache_lock);
    if (def) {
        atomic_fetch_add(&rt->n_hits, 1);
        *out = def;
        return WF_OK;
    }
    wfm_load_opts lo = WFM_LOAD_OPTS_INIT;
    lo.catalogue = rt->catalogue;
    lo.types = rt->types;
    lo.libpath = rt->libpath;
    lo.check_native = rt->check_native;
    lo.check_ud = rt->check_ud;
    lo.diags = diags;
    lo.text_hash = &h;
    wf_status st = wfm_definition_load_mem(&lo, name, data, len, &def, err);
    if (st != WF_OK)
        return st;
    atomic_fetch_add(&rt->n_defs, 1);
    pthread_mutex_lock(&rt->cache_lock);
    wfm_definition *had = wf_strmap_get(rt->cache, key);
    if (had) { /* another thread loaded it meanwhile: share theirs */
        wfm_definition_release(def);
        def = had;
    } else if (wf_strmap_put(rt->cache, key, def) != WF_OK) {
        pthread_mutex_unlock(&rt->cache_lock);
        wfm_definition_release(def);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    *out = wfm_definition_retain(def);
    pthread_mutex_unlock(&rt->cache_lock);
    wfm__track_plan_get(rt->tracker, def); /* compile the profile's names for it now */
    return WF_OK;
}

wf_status wfm_runtime_load(wfm_runtime *rt, const char *path, wfm_definition **out, wf_diags *diags,
                           wf_error *err)
{
    *out = NULL;
    wf_error local = WF_ERROR_INIT;
    wf_buf data;
    wf_buf_init(&data);
    /* The cap holds while reading: /dev/zero or an endless FIFO stops at it (WF_E_LIMIT). */
    wf_status st = wf_file_read(path, 0, &data, &local);
    if (st != WF_OK) {
        if (diags)
            wf_diags_add_error(diags, WF_SEV_ERROR, &local);
        if (err && err->code == WF_OK)
            *err = local;
    } else
        st = wfm_runtime_load_mem(rt, path, data.data, data.len, out, diags, err);
    wf_buf_fini(&data);
    return st;
}

/* ---- the pool ------------------------------------------------------------------------- */

static void timer_heap_swap(timer_entry *h, size_t a, size_t b)
{
    timer_entry t = h[a];
    h[a] = h[b];
    h[b] = t;
}

/* The heap property (debug builds, after every operation): the whole heap while it is small,
 * else at the slot the operation moved an entry to. */
static bool theap_ok_at(const timer_entry *h, size_t n, size_t i)
{
    size_t l = 2 * i + 1, r = l + 1;
    return (i == 0 || h[(i - 1) / 2].due_us <= h[i].due_us) &&
           (l >= n || h[i].due_us <= h[l].due_us) && (r >= n || h[i].due_us <= h[r].due_us);
}

static bool theap_ok(const wfm_runtime *rt, size_t moved)
{
    if (rt->theap_count > 64)
        return moved >= rt->theap_count || theap_ok_at(rt->theap, rt->theap_count, moved);
    for (size_t i = 0; i < rt->theap_count; i++)
        if (!theap_ok_at(rt->theap, rt->theap_count, i))
            return false;
    return true;
}

static void timer_heap_push(wfm_runtime *rt, timer_entry e)
{
    if (rt->theap_count == rt->theap_cap) {
        size_t cap = rt->theap_cap ? rt->theap_cap * 2 : 16;
        timer_entry *h = wf_realloc(rt->theap, cap * sizeof *h);
        if (!h)
            return; /* the instance then waits for the host (wfm_instance_run fires timers) */
        rt->theap = h;
        rt->theap_cap = cap;
    }
    size_t i = rt->theap_count++;
    rt->theap[i] = e;
    while (i > 0 && rt->theap[(i - 1) / 2].due_us > rt->theap[i].due_us) {
        timer_heap_swap(rt->theap, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    assert(theap_ok(rt, i));
}

static timer_entry timer_heap_pop(wfm_runtime *rt)
{
    timer_entry top = rt->theap[0];
    rt->theap[0] = rt->theap[--rt->theap_count];
    size_t i = 0, n = rt->theap_count;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && rt->theap[l].due_us < rt->theap[m].due_us)
            m = l;
        if (r < n && rt->theap[r].due_us < rt->theap[m].due_us)
            m = r;
        if (m == i)
            break;
        timer_heap_swap(rt->theap, i, m);
        i = m;
    }
    assert(theap_ok(rt, i));
    return top;
}

/* Under rt->lock: wait for a change of some instance's pool state, or wake those waiting.
 * Waking costs a system call and a context switch, so it happens only when someone waits for
 * what changed: an instance's pool state (inst_cv), or the whole pool going idle (idle_cv). */
static void kick_locked(wfm_runtime *rt);

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void inst_wait_locked(wfm_runtime *rt)
{
    kick_locked(rt);
    rt->inst_waiters++;
    pthread_cond_wait(&rt->inst_cv, &rt->lock);
    rt->inst_waiters--;
}

static bool pool_idle_locked(const wfm_runtime *rt)
{
    return !rt->q_head && !rt->running && !rt->timer_waiting && !rt->async_waiting;
}

static void idle_wake_locked(wfm_runtime *rt)
{
    if (rt->inst_waiters)
        pthread_cond_broadcast(&rt->inst_cv);
    if (rt->idle_waiters && pool_idle_locked(rt))
        pthread_cond_broadcast(&rt->idle_cv);
}

/* Wake-ups are batched: a sleeping worker is woken when the queue holds more than
 * WAKE_BACKLOG instances for each awake worker (or someone waits on the pool); a shorter queue
 * with every worker asleep gets its wake-up from the timer thread WAKE_DEFER_US later. So a
 * host starting instances one by one pays one wake-up (futex, context switch, ~5 µs of CPU)
 * per batch instead of one per instance, and a lone instance waits at most 200 µs. */
#define WAKE_BACKLOG 32
#define WAKE_DEFER_US 200
#define TAKE_MAX 32 /* instances a worker takes from the queue at once */

static void wake_worker_locked(wfm_runtime *rt)
{
    if (!rt->idle_workers)
        return;
    unsigned awake = rt->workers_started - rt->idle_workers;
    if (rt->q_len >= (size_t)(awake + 1) * WAKE_BACKLOG) {
        pthread_cond_signal(&rt->work_cv);
    } else if (awake == 0 && !rt->wake_deferred) {
        rt->wake_deferred = true;
        rt->wake_at_us = mono_us() + WAKE_DEFER_US;
        pthread_cond_signal(&rt->timer_cv);
    }
}

/* Under rt->lock, before waiting on the pool: work nobody was woken for starts now. */
static void kick_locked(wfm_runtime *rt)
{
    if (rt->q_head && rt->idle_workers && rt->workers_started == rt->idle_workers)
        pthread_cond_signal(&rt->work_cv);
}

/* Under rt->lock: make the instance runnable (or note that it must run again). */
static void post_locked(wfm_runtime *rt, wfm_instance *inst)
{
    if (inst->ps != PS_NONE) {
        if (inst->ps != PS_QUEUED)
            inst->wanted = true;
        return;
    }
    inst->ps = PS_QUEUED;
    inst->wanted = false;
    inst->q_next = NULL;
    if (rt->q_tail)
        rt->q_tail->q_next = inst;
    else
        rt->q_head = inst;
    rt->q_tail = inst;
    rt->q_len++;
    wake_worker_locked(rt);
}

static void timer_unregister_locked(wfm_runtime *rt, wfm_instance *inst)
{
    if (!inst->timer_registered)
        return;
    inst->timer_registered = false;
    inst->timer_gen++;
    rt->timer_waiting--;
    idle_wake_locked(rt);
}

static void timer_register_locked(wfm_runtime *rt, wfm_instance *inst, int64_t due)
{
    timer_unregister_locked(rt, inst);
    timer_entry e = {due, inst, ++inst->timer_gen};
    timer_heap_push(rt, e);
    inst->timer_registered = true;
    rt->timer_waiting++;
    pthread_cond_signal(&rt->timer_cv);
}

/* Statistics gathered by a thread and added to the runtime's shared counters at once: a worker
 * adds a batch's, so two workers do not fight over the counters' cache line per instance. */
typedef struct counts {
    uint64_t executed, items, resumed, timers, completed;
} counts;

static void gather_counters(wfm_instance *inst, counts *c)
{
    wfm_ctx *ctx = &inst->ctx;
    c->executed += ctx->n_executed;
    c->items += ctx->n_work_items;
    c->resumed += ctx->n_resumed;
    c->timers += ctx->n_timers;
    ctx->n_executed = ctx->n_work_items = ctx->n_resumed = ctx->n_timers = 0;
    if (ctx->state >= WFM__SCHED_CLOSED && !inst->counted_done) {
        inst->counted_done = true;
        c->completed++;
    }
}

static void publish_counters(wfm_runtime *rt, counts *c)
{
    atomic_fetch_add_explicit(&rt->n_executed, c->executed, memory_order_relaxed);
    atomic_fetch_add_explicit(&rt->n_items, c->items, memory_order_relaxed);
    if (c->resumed)
        atomic_fetch_add_explicit(&rt->n_resumed, c->resumed, memory_order_relaxed);
    if (c->timers)
        atomic_fetch_add_explicit(&rt->n_timers, c->timers, memory_order_relaxed);
    if (c->completed)
        atomic_fetch_add(&rt->n_completed, c->completed);
    memset(c, 0, sizeof *c);
}

static void add_counters(wfm_instance *inst)
{
    counts c = {0};
    gather_counters(inst, &c);
    publish_counters(inst->rt, &c);
}

static void drain_async(wfm_instance *inst);

/* One turn of an instance on a worker. */
static void run_slice(wfm_instance *inst, counts *c)
{
    drain_async(inst);
    wfm__tracker_batch_begin(inst->rt->tracker);
    wfm__sched_state s = wfm__sched_run(&inst->ctx, SLICE_ITEMS);
    gather_counters(inst, c);
    track_run_end(inst);
    wfm__tracker_batch_end(inst->rt->tracker);
    bool report = s >= WFM__SCHED_CLOSED ||
                  (s == WFM__SCHED_IDLE &&
                   (inst->report_idle || (wfm__sched_next_timer(&inst->ctx) == INT64_MAX &&
                                          !atomic_load(&inst->async_count))));
    if (report && inst->on_complete)
        inst->on_complete(inst, inst->on_complete_ud);
}

/* Under rt->lock, after a worker turn or a host hold: queue again or wait for a timer. */
static void after_run_locked(wfm_runtime *rt, wfm_instance *inst)
{
    assert(inst->ps == PS_RUNNING || inst->ps == PS_HOST); /* the table above */
    inst->ps = PS_NONE;
    wfm__sched_state s = inst->ctx.state;
    if (inst->unpool) {
        inst->unpool = inst->pooled = false;
        timer_unregister_locked(rt, inst);
    }
    if (s >= WFM__SCHED_CLOSED) {
        timer_unregister_locked(rt, inst);
    } else if (inst->pooled && (s == WFM__SCHED_RUNNING || inst->wanted)) {
        post_locked(rt, inst);
    } else if (inst->pooled) {
        int64_t due = wfm__sched_next_timer(&inst->ctx);
        if (due != INT64_MAX)
            timer_register_locked(rt, inst, due);
        else
            timer_unregister_locked(rt, inst);
    }
    inst->wanted = false;
    idle_wake_locked(rt);
}

/* Under rt->lock: take a share of the queue (up to TAKE_MAX, leaving the rest to the other
 * awake workers), so a worker takes the lock twice per batch rather than twice per instance. */
static size_t take_locked(wfm_runtime *rt, wfm_instance **batch)
{
    size_t awake = rt->workers_started - rt->idle_workers; /* the caller included */
    size_t share = (rt->q_len + awake - 1) / awake;
    size_t n = 0;
    while (rt->q_head && n < TAKE_MAX && n < share) {
        wfm_instance *inst = rt->q_head;
        assert(inst->ps == PS_QUEUED); /* the queue holds queued instances only */
        rt->q_head = inst->q_next;
        inst->ps = PS_RUNNING;
        inst->wanted = false;
        batch[n++] = inst;
    }
    if (!rt->q_head)
        rt->q_tail = NULL;
    rt->q_len -= n;
    rt->running += (unsigned)n;
    if (rt->q_head)
        wake_worker_locked(rt);
    return n;
}

static void *worker_main(void *arg)
{
    wfm_runtime *rt = arg;
    wfm_instance *batch[TAKE_MAX];
    pthread_mutex_lock(&rt->lock);
    for (;;) {
        while (!rt->stop && !rt->q_head) {
            rt->idle_workers++;
            pthread_cond_wait(&rt->work_cv, &rt->lock);
            rt->idle_workers--;
        }
        if (!rt->q_head)
            break;
        size_t n = take_locked(rt, batch);
        pthread_mutex_unlock(&rt->lock);
        counts c = {0};
        for (size_t i = 0; i < n; i++)
            run_slice(batch[i], &c);
        publish_counters(rt, &c);
        pthread_mutex_lock(&rt->lock);
        rt->running -= (unsigned)n;
        for (size_t i = 0; i < n; i++)
            after_run_locked(rt, batch[i]);
    }
    pthread_mutex_unlock(&rt->lock);
    return NULL;
}

/* The timer thread: posts instances whose timers are due, and wakes a worker for a short
 * queue no worker was woken for (wake_worker_locked defers that wake-up by WAKE_DEFER_US). */
static void *timer_main(void *arg)
{
    wfm_runtime *rt = arg;
    pthread_mutex_lock(&rt->lock);
    while (!rt->stop) {
        int64_t wait_us = -1; /* -1: until signalled */
        if (rt->wake_deferred) {
            int64_t left = rt->wake_at_us - mono_us();
            if (left <= 0) {
                rt->wake_deferred = false;
                if (rt->q_head && rt->idle_workers)
                    pthread_cond_signal(&rt->work_cv);
                continue;
            }
            wait_us = left;
        }
        if (rt->theap_count) {
            timer_entry top = rt->theap[0];
            int64_t now = rt->clock(rt->clock_ud);
            if (top.due_us <= now) {
                timer_heap_pop(rt);
                if (top.gen == top.inst->timer_gen && top.inst->timer_registered) {
                    timer_unregister_locked(rt, top.inst);
                    post_locked(rt, top.inst);
                }
                continue;
            }
            int64_t due = top.due_us - now;
            if (due > 1000000)
                due = 1000000; /* re-read the (possibly virtual) clock now and then */
            if (wait_us < 0 || due < wait_us)
                wait_us = due;
        }
        if (wait_us < 0) {
            pthread_cond_wait(&rt->timer_cv, &rt->lock);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += wait_us / 1000000;
        ts.tv_nsec += (long)(wait_us % 1000000) * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&rt->timer_cv, &rt->lock, &ts);
    }
    pthread_mutex_unlock(&rt->lock);
    return NULL;
}

/* Under rt->lock: start the workers and the timer thread on first use. */
static wf_status pool_start_locked(wfm_runtime *rt, wf_error *err)
{
    if (rt->workers_started)
        return WF_OK;
    if (!rt->workers && !(rt->workers = wf_calloc(rt->worker_count, sizeof(pthread_t))))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (!rt->timer_started) {
        if (pthread_create(&rt->timer_thread, NULL, timer_main, rt) != 0)
            return wf_error_set(err, WF_E_NOMEM, NULL, "cannot start the timer thread");
        rt->timer_started = true;
    }
    for (unsigned i = 0; i < rt->worker_count; i++) {
        if (pthread_create(&rt->workers[i], NULL, worker_main, rt) != 0)
            break;
        rt->workers_started++;
    }
    if (!rt->workers_started)
        return wf_error_set(err, WF_E_NOMEM, NULL, "cannot start worker threads");
    return WF_OK;
}

void wfm_runtime_wait_idle(wfm_runtime *rt)
{
    pthread_mutex_lock(&rt->lock);
    while (!pool_idle_locked(rt)) {
        kick_locked(rt);
        rt->idle_waiters++;
        pthread_cond_wait(&rt->idle_cv, &rt->lock);
        rt->idle_waiters--;
    }
    pthread_mutex_unlock(&rt->lock);
}

/* Under rt->lock: forget every timer entry of an instance that is going away. */
static void timer_purge_locked(wfm_runtime *rt, wfm_instance *inst)
{
    timer_unregister_locked(rt, inst);
    size_t kept = 0;
    for (size_t i = 0; i < rt->theap_count; i++)
        if (rt->theap[i].inst != inst)
            rt->theap[kept++] = rt->theap[i];
    if (kept == rt->theap_count)
        return;
    timer_entry *all = rt->theap;
    rt->theap_count = 0;
    for (size_t i = 0; i < kept; i++)
        timer_heap_push(rt, all[i]); /* in place: push i never overtakes read i */
}

/* ---- instances ------------------------------------------------------------------------ */

const char *wfm_instance_state_name(wfm_instance_state state)
{
    static const char *const names[] = {"Created", "Executing", "Idle",      "Closed",
                                        "Faulted", "Canceled",  "Terminated"};
    return (unsigned)state < sizeof names / sizeof names[0] ? names[state] : "Unknown";
}

/* Spare instance shells keep their pools and buffers: creating an instance in steady state
 * then allocates nothing (see wfm__sched_recycle). */
#define SPARE_MAX 4096

static wfm_instance *shell_get(wfm_runtime *rt)
{
    wfm_instance *hot = atomic_exchange_explicit(&rt->spare_hot, NULL, memory_order_acquire);
    if (hot)
        return hot;
    pthread_mutex_lock(&rt->spare_lock);
    wfm_instance *inst = rt->spares;
    if (inst) {
        rt->spares = inst->q_next;
        rt->spare_count--;
    }
    pthread_mutex_unlock(&rt->spare_lock);
    return inst ? inst : wf_calloc(1, sizeof *inst);
}

static void shell_free(wfm_instance *inst)
{
    if (!inst)
        return;
    wfm__sched_fini(&inst->ctx);
    wf_free(inst->outputs);
    wf_free(inst);
}

/* Keep the shell for the next instance, or free it. */
static void shell_put(wfm_runtime *rt, wfm_instance *inst)
{
    if (!wfm__sched_recycle(&inst->ctx)) {
        shell_free(inst);
        return;
    }
    /* Everything but ctx (already reset) and the outputs buffer starts over. */
    inst->rt = NULL;
    inst->def = NULL;
    inst->write = NULL;
    inst->write_ud = NULL;
    inst->on_complete = NULL;
    inst->on_complete_ud = NULL;
    inst->trace = NULL;
    inst->trace_ud = NULL;
    inst->call_trace = NULL;
    inst->call_trace_ud = NULL;
    inst->output_count = 0;
    inst->ps = PS_NONE;
    inst->shared = false;
    inst->wanted = inst->pooled = inst->timer_registered = inst->counted_done = false;
    inst->report_idle = inst->unpool = false;
    inst->timer_gen = 0;
    inst->q_next = NULL;
    inst->id[0] = '\0';
    inst->track_seq = 0;
    wfm_instance *none = NULL;
    if (atomic_compare_exchange_strong_explicit(&rt->spare_hot, &none, inst, memory_order_release,
                                                memory_order_relaxed))
        return;
    pthread_mutex_lock(&rt->spare_lock);
    bool kept = rt->spare_count < SPARE_MAX;
    if (kept) {
        inst->q_next = rt->spares;
        rt->spares = inst;
        rt->spare_count++;
    }
    pthread_mutex_unlock(&rt->spare_lock);
    if (!kept)
        shell_free(inst);
}

/* The fields, not wfm_definition_arg_count / _arg_dir: this runs at every create. */
static bool list_outputs(wfm_instance *inst, const wfm_definition *def)
{
    size_t n = def->arg_count, outs = 0;
    for (size_t i = 0; i < n; i++)
        outs += def->args[i].dir != WFM_PROP_IN;
    if (outs > inst->outputs_cap) {
        size_t *o = wf_realloc(inst->outputs, outs * sizeof *o);
        if (!o)
            return false;
        inst->outputs = o;
        inst->outputs_cap = outs;
    }
    inst->output_count = 0;
    for (size_t i = 0; i < n; i++)
        if (def->args[i].dir != WFM_PROP_IN)
            inst->outputs[inst->output_count++] = i;
    return true;
}

wf_status wfm_instance_create(wfm_runtime *rt, wfm_definition *def, wfm_instance **out,
                              wf_error *err)
{
    *out = NULL;
    wfm_instance *inst = shell_get(rt);
    if (!inst)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    inst->rt = rt;
    wfm__sched_host host = {0};
    host.write = inst_write;
    host.write_ud = inst;
    host.clock = inst_clock;
    host.clock_ud = rt;
    host.types = rt->types;
    host.max_steps = rt->max_steps;
    host.track_mask = rt->track_mask;
    if (host.track_mask) {
        host.track = inst_track;
        host.track_ud = inst;
    }
    inst->track_plan = wfm__track_plan_get(rt->tracker, def);
    inst->track_masked = host.track_mask && wfm__tracker_data_states(rt->tracker) >= 0;
    wf_status st = list_outputs(inst, def) ? wfm__sched_init(&inst->ctx, def, &host, err)
                                           : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (st != WF_OK) {
        shell_free(inst);
        return st;
    }
    inst->def = wfm_definition_retain(def);
    atomic_fetch_add(&rt->n_created, 1);
    *out = inst;
    return WF_OK;
}

/* ---- asynchronous work --------------------------------------------------------------- */
static wfm_instance *ctx_instance(wfm_ctx *ctx)
{
    return (wfm_instance *)(void *)((char *)ctx - offsetof(wfm_instance, ctx));
}

wf_status wfm_ctx_async_begin(wfm_ctx *ctx, wfm_ai *ai, const char *name, wfm_resume_fn on_resume,
                              wfm_async **out)
{
    *out = NULL;
    wfm_instance *inst = ctx_instance(ctx);
    wfm_async *a = wf_calloc(1, sizeof *a);
    if (!a)
        return WF_E_NOMEM;
    if ((size_t)snprintf(a->name, sizeof a->name, "%s", name) >= sizeof a->name) {
        wf_free(a);
        return WF_E_LIMIT;
    }
    wf_status st = wfm_ctx_bookmark(ctx, ai, name, 0, on_resume);
    if (st != WF_OK) {
        wf_free(a);
        return st;
    }
    wfm_runtime *rt = inst->rt;
    a->rt = rt;
    a->inst = inst;
    a->payload = wf_null();
    pthread_mutex_lock(&rt->lock);
    if (!inst->shared) /* a worker's instance is shared already: no write the host might read */
        inst->shared = true;
    a->next = inst->asyncs;
    inst->asyncs = a;
    atomic_fetch_add(&inst->async_count, 1);
    rt->async_waiting++;
    pthread_mutex_unlock(&rt->lock);
    *out = a;
    return WF_OK;
}

void wfm_async_complete(wfm_async *a, wf_value payload)
{
    wfm_runtime *rt = a->rt;
    pthread_mutex_lock(&rt->lock);
    wfm_instance *inst = a->inst;
    if (inst) {
        a->done = true;
        a->payload = payload;
        rt->async_waiting--;
        if (inst->pooled)
            post_locked(rt, inst);
        idle_wake_locked(rt); /* a host in wfm_instance_wait_async */
    }
    pthread_mutex_unlock(&rt->lock);
    if (!inst) { /* the instance went first */
        wf_value_release(&payload);
        wf_free(a);
    }
}

static void async_free_list(wfm_async *list)
{
    while (list) {
        wfm_async *next = list->next;
        wf_value_release(&list->payload);
        wf_free(list);
        list = next;
    }
}

/* Under rt->lock: the instance goes. Pending work is left to its worker (which frees the
 * handle); the completed entries are returned for async_free_list. */
static wfm_async *async_detach_locked(wfm_runtime *rt, wfm_instance *inst)
{
    wfm_async *done = NULL;
    while (inst->asyncs) {
        wfm_async *a = inst->asyncs;
        inst->asyncs = a->next;
        a->inst = NULL;
        if (a->done) {
            a->next = done;
            done = a;
        } else {
            rt->async_waiting--;
        }
    }
    atomic_store(&inst->async_count, 0);
    return done;
}

/* The instance is held by the calling thread: resume the bookmarks of completed work (a
 * bookmark gone with its activity is skipped). */
static void drain_async(wfm_instance *inst)
{
    if (!atomic_load(&inst->async_count))
        return;
    wfm_runtime *rt = inst->rt;
    wfm_async *done = NULL;
    pthread_mutex_lock(&rt->lock);
    for (wfm_async **pp = &inst->asyncs; *pp;) {
        wfm_async *a = *pp;
        if (!a->done) {
            pp = &a->next;
            continue;
        }
        *pp = a->next;
        a->next = done;
        done = a;
        atomic_fetch_sub(&inst->async_count, 1);
    }
    pthread_mutex_unlock(&rt->lock);
    for (wfm_async *a = done; a; a = a->next) {
        wf_error ignored = WF_ERROR_INIT;
        wfm__sched_resume(&inst->ctx, a->name, &a->payload, &ignored);
    }
    async_free_list(done);
}

bool wfm_instance_async_pending(const wfm_instance *inst)
{
    return atomic_load(&inst->async_count) != 0;
}

void wfm_instance_wait_async(wfm_instance *inst)
{
    wfm_runtime *rt = inst->rt;
    pthread_mutex_lock(&rt->lock);
    for (;;) {
        bool any = inst->asyncs != NULL, ready = false;
        for (wfm_async *a = inst->asyncs; a && !ready; a = a->next)
            ready = a->done;
        if (!any || ready)
            break;
        inst_wait_locked(rt);
    }
    pthread_mutex_unlock(&rt->lock);
}

void *wfm_ctx_runtime_ext(wfm_ctx *ctx, const wfm_rt_ext_spec *spec, wf_error *err)
{
    wfm_runtime *rt = ctx_instance(ctx)->rt;
    void *state = NULL;
    pthread_mutex_lock(&rt->cache_lock); /* short holds only, like the definition cache's */
    for (size_t i = 0; i < rt->ext_count && !state; i++)
        if (rt->exts[i].spec == spec)
            state = rt->exts[i].state;
    if (!state && rt->ext_count == RT_EXT_MAX)
        wf_error_set(err, WF_E_LIMIT, NULL, "too many runtime extensions");
    else if (!state && spec->create(&state, err) == WF_OK)
        rt->exts[rt->ext_count++] = (rt_ext){spec, state};
    pthread_mutex_unlock(&rt->cache_lock);
    return state;
}

static wfm_async *pool_leave(wfm_runtime *rt, wfm_instance *inst);

void wfm_instance_destroy(wfm_instance *inst)
{
    if (!inst)
        return;
    wfm_runtime *rt = inst->rt;
    wfm_async *done = NULL;
    if (inst->shared)
        done = pool_leave(rt, inst);
    else /* never on the pool and no asynchronous work: nothing to wait for or take back */
        assert(inst->ps == PS_NONE && !inst->timer_registered && !inst->asyncs);
    async_free_list(done);
    wfm_definition *def = inst->def;
    shell_put(rt, inst); /* releases the run's values first: they may point into def */
    wfm_definition_release(def);
}

/* wfm_instance_destroy of a shared instance: wait for the pool to let go, take it off the
 * queue and the timers, and detach its asynchronous work (the completed entries returned). */
static wfm_async *pool_leave(wfm_runtime *rt, wfm_instance *inst)
{
    pthread_mutex_lock(&rt->lock);
    while (inst->ps == PS_RUNNING || inst->ps == PS_HOST)
        inst_wait_locked(rt);
    if (inst->ps == PS_QUEUED) {
        wfm_instance **pp = &rt->q_head, *prev = NULL;
        while (*pp && *pp != inst) {
            prev = *pp;
            pp = &(*pp)->q_next;
        }
        if (*pp) {
            *pp = inst->q_next;
            if (rt->q_tail == inst)
                rt->q_tail = prev;
            rt->q_len--;
        }
        inst->ps = PS_NONE;
    }
    timer_purge_locked(rt, inst);
    wfm_async *done = async_detach_locked(rt, inst);
    idle_wake_locked(rt);
    pthread_mutex_unlock(&rt->lock);
    return done;
}

void wfm_instance_set_writer(wfm_instance *inst, wfm_write_fn write, void *ud)
{
    inst->write = write;
    inst->write_ud = ud;
}

/* The branch key of wfm_call_rec: one "NODEID#N/" segment per enclosing Parallel or
 * ParallelForEach, outermost first, N telling the branch instances apart while they run. */
static void call_branch(const wfm_ai *ai, char *buf, size_t size)
{
    buf[0] = '\0';
    for (const wfm_ai *child = ai, *p = wfm_ai_parent(ai); p; child = p, p = wfm_ai_parent(p)) {
        const wfm_node *node = wfm_ai_node(p);
        const char *kind = wfm_kind_spec_of(wfm_node_kind(node))->name;
        if (strcmp(kind, "Parallel") != 0 && strcmp(kind, "ParallelForEach") != 0)
            continue;
        char seg[96];
        const char *id = wfm_node_id(node);
        int n = snprintf(seg, sizeof seg, "%s#%lx/", id ? id : "?",
                         (unsigned long)(uintptr_t)child);
        size_t len = strlen(buf), sl = n > 0 ? (size_t)n : 0;
        if (sl >= sizeof seg || len + sl + 1 > size)
            break; /* deeper than the key holds: the outer levels are enough */
        memmove(buf + sl, buf, len + 1);
        memcpy(buf, seg, sl);
    }
}

/* wfm_instance_set_call_trace: split the positional trace into In and Out lists by the
 * direction of each parameter (the kind's PARAMS property). */
static void inst_call_trace(wfm_instance *inst, const wfm_ai *ai, const char *function,
                            const wf_value *in, size_t in_count, const wf_value *out,
                            size_t out_count, bool split)
{
    const wfm_node *node = wfm_ai_node(ai);
    char branch[512];
    call_branch(ai, branch, sizeof branch);
    if (split) {
        wfm_call_rec rec = {.function = function,
                            .activity = wfm_node_display_name(node),
                            .branch = branch,
                            .in = in,
                            .in_count = in_count,
                            .out = out,
                            .out_count = out_count};
        inst->call_trace(inst->call_trace_ud, &rec);
        return;
    }
    const wfm_kind_spec *spec = wfm_kind_spec_of(wfm_node_kind(node));
    unsigned params = 0;
    while (params < spec->prop_count && spec->props[params].kind != WFM_PROP_PARAMS)
        params++;
    wf_value ins[64], outs[65];
    size_t ni = 0, no = 0;
    for (size_t i = 0; i < in_count && ni < 64 && no < 64; i++) {
        wfm_prop_kind dir =
            params < spec->prop_count ? wfm_node_param_dir(node, params, i) : WFM_PROP_INOUT;
        if (dir != WFM_PROP_OUT)
            ins[ni++] = in[i];
        if (dir != WFM_PROP_IN && i < out_count)
            outs[no++] = out[i];
    }
    for (size_t i = in_count; i < out_count && no < 65; i++) /* the return value */
        outs[no++] = out[i];
    wfm_call_rec rec = {.function = function,
                        .activity = wfm_node_display_name(node),
                        .branch = branch,
                        .in = ins,
                        .in_count = ni,
                        .out = outs,
                        .out_count = no};
    inst->call_trace(inst->call_trace_ud, &rec);
}

static void inst_trace(void *ud, const wfm_ai *ai, const char *function, const wf_value *in,
                       size_t in_count, const wf_value *out, size_t out_count, bool split)
{
    wfm_instance *inst = ud;
    if (inst->trace)
        inst->trace(inst->trace_ud, function, in, in_count, out, out_count);
    if (inst->call_trace)
        inst_call_trace(inst, ai, function, in, in_count, out, out_count, split);
}

static void trace_hook_update(wfm_instance *inst)
{
    bool on = inst->trace || inst->call_trace;
    inst->ctx.host.trace = on ? inst_trace : NULL;
    inst->ctx.host.trace_ud = inst;
}

void wfm_instance_set_trace(wfm_instance *inst, wfm_trace_fn fn, void *ud)
{
    inst->trace = fn;
    inst->trace_ud = ud;
    trace_hook_update(inst);
}

void wfm_instance_set_call_trace(wfm_instance *inst, wfm_call_fn fn, void *ud)
{
    inst->call_trace = fn;
    inst->call_trace_ud = ud;
    trace_hook_update(inst);
}

void wfm_instance_on_complete(wfm_instance *inst, wfm_instance_fn fn, void *ud)
{
    inst->on_complete = fn;
    inst->on_complete_ud = ud;
}

wf_status wfm_instance_set_input(wfm_instance *inst, const char *name, const wf_value *value,
                                 wf_error *err)
{
    const wfm_definition *def = inst->def;
    size_t i;
    if (inst->ctx.state != WFM__SCHED_NEW)
        return wf_error_set(err, WF_E_STATE, NULL, "inputs can only be set before the first run");
    if (!wfm_definition_arg_find(def, name, &i))
        return wf_error_set(err, WF_E_NAME, NULL, "the workflow has no argument '%s'", name);
    if (wfm_definition_arg_dir(def, i) == WFM_PROP_OUT)
        return wf_error_set(err, WF_E_NAME, NULL, "argument '%s' is an Out argument", name);
    const wf_type *t = wfm_definition_arg_type(def, i);
    wf_value v = wf_null();
    wf_error cerr = WF_ERROR_INIT;
    if (wf_value_convert(value, t, &v, &cerr) != WF_OK)
        return wf_error_set(err, cerr.code == WF_E_NOMEM ? WF_E_NOMEM : WF_E_TYPE, NULL,
                            "argument '%s' (%s): %s", name, t->name, cerr.message);
    wfm__sched_set_arg(&inst->ctx, i, &v);
    wf_value_release(&v);
    return WF_OK;
}

/* Take the instance for the calling thread, waiting while the pool has it. */
static void host_hold(wfm_instance *inst)
{
    if (!inst->shared) {
        assert(inst->ps == PS_NONE); /* no other thread can have taken it */
        inst->ps = PS_HOST;
        return;
    }
    wfm_runtime *rt = inst->rt;
    pthread_mutex_lock(&rt->lock);
    while (inst->ps != PS_NONE)
        inst_wait_locked(rt);
    inst->ps = PS_HOST;
    pthread_mutex_unlock(&rt->lock);
}

static void host_release(wfm_instance *inst)
{
    wfm_runtime *rt = inst->rt;
    add_counters(inst);
    if (!inst->shared) { /* after_run_locked's moves for an instance off the pool */
        assert(inst->ps == PS_HOST && !inst->pooled && !inst->timer_registered);
        inst->ps = PS_NONE;
        inst->wanted = false;
        return;
    }
    pthread_mutex_lock(&rt->lock);
    after_run_locked(rt, inst);
    pthread_mutex_unlock(&rt->lock);
}

static wf_status start_if_new(wfm_instance *inst, wf_error *err)
{
    if (inst->ctx.state != WFM__SCHED_NEW)
        return WF_OK;
    if (wfm_tracker_wants(inst->rt->tracker, WFM_REC_INSTANCE)) {
        wfm__track_target to = track_target(inst);
        wfm__track_instance(&to, "Started", NULL);
    }
    wf_status st = wfm__sched_start(&inst->ctx);
    if (st != WF_OK)
        return wf_error_set(err, st, NULL, "%s", wf_status_message(st));
    return WF_OK;
}

wf_status wfm_instance_run(wfm_instance *inst, wf_error *err)
{
    wfm_runtime *rt = inst->rt;
    bool busy = false;
    if (!inst->shared) {
        host_hold(inst);
    } else {
        pthread_mutex_lock(&rt->lock);
        busy = inst->ps != PS_NONE;
        if (!busy)
            inst->ps = PS_HOST;
        pthread_mutex_unlock(&rt->lock);
    }
    if (busy)
        return wf_error_set(err, WF_E_STATE, NULL, "the instance is running on the worker pool");
    wf_status st = WF_OK;
    wfm__tracker_batch_begin(rt->tracker);
    if (inst->ctx.state >= WFM__SCHED_CLOSED)
        st = wf_error_set(err, WF_E_STATE, NULL, "the instance has already completed");
    else
        st = start_if_new(inst, err);
    if (st == WF_OK) {
        drain_async(inst);
        wfm__sched_run(&inst->ctx, 0);
        track_run_end(inst);
        if (inst->ctx.step_limit_hit)
            st = wfm__sched_step_limit_error(&inst->ctx, err);
    }
    wfm__tracker_batch_end(rt->tracker);
    host_release(inst);
    return st;
}

wf_status wfm_instance_start(wfm_instance *inst, wf_error *err)
{
    wfm_runtime *rt = inst->rt;
    pthread_mutex_lock(&rt->lock);
    wf_status st = WF_OK;
    if (inst->ps != PS_NONE || inst->ctx.state >= WFM__SCHED_CLOSED)
        st = wf_error_set(err, WF_E_STATE, NULL, "the instance is running or has completed");
    else
        st = pool_start_locked(rt, err);
    if (st == WF_OK) {
        inst->ps = PS_HOST;
        inst->shared = true; /* the pool's threads may take it from here on */
    }
    pthread_mutex_unlock(&rt->lock);
    if (st != WF_OK)
        return st;
    st = start_if_new(inst, err);
    pthread_mutex_lock(&rt->lock);
    inst->pooled = st == WF_OK;
    inst->ps = PS_NONE;
    if (inst->pooled)
        post_locked(rt, inst);
    idle_wake_locked(rt);
    pthread_mutex_unlock(&rt->lock);
    return st;
}

wfm_instance_state wfm_instance_state_get(const wfm_instance *inst)
{
    switch (inst->ctx.state) {
    case WFM__SCHED_NEW:
        return WFM_INSTANCE_CREATED;
    case WFM__SCHED_RUNNING:
        return WFM_INSTANCE_EXECUTING;
    case WFM__SCHED_IDLE:
        return WFM_INSTANCE_IDLE;
    case WFM__SCHED_CLOSED:
        return WFM_INSTANCE_CLOSED;
    case WFM__SCHED_FAULTED:
        return WFM_INSTANCE_FAULTED;
    case WFM__SCHED_CANCELED:
        return WFM_INSTANCE_CANCELED;
    case WFM__SCHED_TERMINATED:
        return WFM_INSTANCE_TERMINATED;
    }
    return WFM_INSTANCE_EXECUTING;
}

const wfm_definition *wfm_instance_definition(const wfm_instance *inst)
{
    return inst->def;
}

size_t wfm_instance_output_count(const wfm_instance *inst)
{
    return inst->output_count;
}

const char *wfm_instance_output_name(const wfm_instance *inst, size_t index)
{
    return index < inst->output_count ? wfm_definition_arg_name(inst->def, inst->outputs[index])
                                      : NULL;
}

const wf_value *wfm_instance_output_value(const wfm_instance *inst, size_t index)
{
    return index < inst->output_count ? &inst->ctx.root_env.slots[inst->outputs[index]] : NULL;
}

const wf_value *wfm_instance_output(const wfm_instance *inst, const char *name)
{
    for (size_t i = 0; i < inst->output_count; i++)
        if (strcmp(wfm_instance_output_name(inst, i), name) == 0)
            return wfm_instance_output_value(inst, i);
    return NULL;
}

static const wfm__bookmark *blocking_at(const wfm_instance *inst, size_t index, size_t *count)
{
    size_t n = 0;
    for (const wfm__bookmark *bm = inst->ctx.bm_first; bm; bm = bm->all_next) {
        if (bm->flags & WFM_BOOKMARK_NONBLOCKING)
            continue;
        if (n++ == index && !count)
            return bm;
    }
    if (count)
        *count = n;
    return NULL;
}

size_t wfm_instance_bookmark_count(const wfm_instance *inst)
{
    size_t n = 0;
    blocking_at(inst, 0, &n);
    return n;
}

const char *wfm_instance_bookmark_name(const wfm_instance *inst, size_t index)
{
    const wfm__bookmark *bm = blocking_at(inst, index, NULL);
    return bm ? bm->name : NULL;
}

int64_t wfm_instance_next_timer_us(const wfm_instance *inst)
{
    return wfm__sched_next_timer(&inst->ctx);
}

wf_status wfm_instance_check_resume(const wfm_instance *inst, const char *name,
                                    const wf_value *payload, wf_error *err)
{
    const wfm_ctx *ctx = &inst->ctx;
    if (ctx->state >= WFM__SCHED_CLOSED)
        return WF_OK; /* wfm_instance_resume reports it */
    const wfm__bookmark *bm = ctx->bookmark_map ? wf_strmap_get(ctx->bookmark_map, name) : NULL;
    if (!bm || !bm->owner)
        return WF_OK;
    wf_value none = wf_null(), v = wf_null();
    wf_error why = WF_ERROR_INIT;
    const wf_type *t = wfm_node_type_arg(bm->owner->node);
    wf_status st = WF_OK;
    if (bm->owner->spec->check_resume)
        st = bm->owner->spec->check_resume(bm->owner, name, payload ? payload : &none, &why);
    else if ((bm->owner->spec->flags & WFM_KIND_GENERIC) && t)
        st = wf_value_convert(payload ? payload : &none, t, &v, &why);
    wf_value_release(&v);
    if (st == WF_E_NOMEM)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (st != WF_OK)
        return wf_error_set(err, WF_E_TYPE, NULL,
                            "bookmark '%s' cannot take this payload: %s", name, why.message);
    return WF_OK;
}

wf_status wfm_instance_resume(wfm_instance *inst, const char *name, const wf_value *payload,
                              wf_error *err)
{
    host_hold(inst);
    wf_status st = wfm__sched_resume(&inst->ctx, name, payload, err);
    host_release(inst);
    return st;
}

wf_status wfm_instance_cancel(wfm_instance *inst, wf_error *err)
{
    host_hold(inst);
    wf_status st = WF_OK;
    if (inst->ctx.state >= WFM__SCHED_CLOSED)
        st = wf_error_set(err, WF_E_STATE, NULL, "the instance has already completed");
    else
        wfm__sched_cancel(&inst->ctx);
    host_release(inst);
    return st;
}

wf_status wfm_instance_terminate(wfm_instance *inst, const char *reason, wf_error *err)
{
    host_hold(inst);
    wf_status st = WF_OK;
    wf_value exc = wf_null();
    if (inst->ctx.state >= WFM__SCHED_CLOSED)
        st = wf_error_set(err, WF_E_STATE, NULL, "the instance has already completed");
    else if (wf_value_exception(&wf_exc_workflow_terminated, reason ? reason : "", &exc) != WF_OK)
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    else {
        wfm__sched_terminate(&inst->ctx, exc);
        track_run_end(inst);
    }
    host_release(inst);
    return st;
}

const wf_value *wfm_instance_fault(const wfm_instance *inst)
{
    return &inst->ctx.fault;
}

wf_loc wfm_instance_fault_loc(const wfm_instance *inst)
{
    return inst->ctx.fault_loc;
}

/* ---- persistence support (wfm_persist.c) ---------------------------------------------- */

wfm_ctx *wfm__instance_hold(wfm_instance *inst)
{
    host_hold(inst);
    return &inst->ctx;
}

void wfm__instance_unhold(wfm_instance *inst)
{
    host_release(inst);
}

wfm_ctx *wfm__instance_ctx(wfm_instance *inst)
{
    return &inst->ctx;
}

void wfm__instance_report_idle(wfm_instance *inst, bool on)
{
    inst->report_idle = on;
}

void wfm__instance_unpool(wfm_instance *inst)
{
    assert(inst->ps == PS_RUNNING); /* called by the worker holding it */
    inst->unpool = true;
}

void *wfm_instance_ext_get(wfm_instance *inst, const wfm_ext_spec *spec)
{
    return wfm_ctx_ext_get(&inst->ctx, spec);
}

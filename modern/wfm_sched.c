/* wfm_sched.c — the modern scheduler: one work-item deque per instance (scheduled work and
 * completions at the front, resumptions and timers at the back), activity instances and
 * environments from per-instance pools, WF4 fault propagation and cancellation, bookmarks and
 * a timer heap; plus the wfm_ctx_* / wfm_ai_* functions activities call (wfm_ctx.h).
 * Spec: docs/architecture.md "The scheduler", docs/semantics.md §5, environments per
 * wfm_definition_int.h.
 *
 * Instance states (wfm__sched_state). Only set_state writes ctx->state, and it asserts that
 * the move is in this table (`legal_moves`); a final state (CLOSED and after) never moves:
 *   (zeroed) NEW                wfm__sched_init (asserts a zeroed or recycled ctx)
 *   NEW -> RUNNING              wfm__sched_start (root scheduled)
 *   NEW -> FAULTED              wfm__sched_start (an argument default threw)
 *   NEW -> CANCELED             wfm__sched_cancel (canceled before it ran)
 *   NEW -> TERMINATED           wfm__sched_terminate -> finalize
 *   NEW -> any                  set_saved_state (wfm_instance_restore: the saved state)
 *   RUNNING|IDLE -> RUNNING     wfm__sched_resume, wfm__sched_cancel (work queued)
 *   RUNNING|IDLE -> RUNNING|IDLE  wfm__sched_run at the end of a run (queue empty: IDLE)
 *   RUNNING|IDLE -> CLOSED|CANCELED|FAULTED  finalize, after the root closed and the finish
 *                               hooks' work is done (unhandled faults: process_fault); IDLE
 *                               too, as a due timer's work may end the instance
 *   RUNNING|IDLE -> TERMINATED  finalize, once wfm_ctx_terminate / wfm__sched_terminate or the
 *                               step limit set ctx->terminating (the run stops before the next
 *                               item)
 *   RUNNING|IDLE -> FAULTED     fail_nomem -> finalize (out of memory)
 * Activity instance: EXECUTING -> CLOSED | CANCELED | FAULTED in close_ai; aborted subtrees
 * are freed by abort_children without callbacks. */
#include "wfm_sched_int.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h> /* vsnprintf */
#include <string.h>

static void process_fault(wfm_ctx *ctx, wfm_ai *src, wf_value exc);
static void close_ai(wfm_ctx *ctx, wfm_ai *ai);
static void cancel_ai(wfm_ctx *ctx, wfm_ai *ai);

/* The track_mask bit of an event (ev is a constant at every call site). */
static inline unsigned track_bit(wfm__track_event ev, const wfm_ai *ai)
{
    if (ev != WFM__TRACK_CLOSED)
        return 1u << ev;
    return ai->status == WFM_FAULTED    ? WFM__TRACK_BIT_CLOSED_FAULTED
           : ai->status == WFM_CANCELED ? WFM__TRACK_BIT_CLOSED_CANCELED
                                        : WFM__TRACK_BIT_CLOSED;
}

#define TRACK_TO(ctx, ev, ai, handler, name, value)                                                \
    do {                                                                                           \
        if ((ctx)->host.track_mask & track_bit((ev), (ai)))                                        \
            (ctx)->host.track((ctx)->host.track_ud, (ev), (ai), (handler), (name), (value));       \
    } while (0)
#define TRACK(ctx, ev, ai, name, value) TRACK_TO(ctx, ev, ai, NULL, name, value)

static bool is_final(wfm__sched_state s)
{
    return s >= WFM__SCHED_CLOSED;
}

#define STATE_BIT(s) (1u << (s))
#define LIVE_TARGETS                                                                               \
    (STATE_BIT(WFM__SCHED_RUNNING) | STATE_BIT(WFM__SCHED_IDLE) | STATE_BIT(WFM__SCHED_CLOSED) |   \
     STATE_BIT(WFM__SCHED_CANCELED) | STATE_BIT(WFM__SCHED_FAULTED) |                              \
     STATE_BIT(WFM__SCHED_TERMINATED))
/* legal_moves[from]: the states `from` may move to (the table at the top of this file). */
static const unsigned legal_moves[] = {
    [WFM__SCHED_NEW] = STATE_BIT(WFM__SCHED_NEW) | LIVE_TARGETS, /* NEW: only by restore */
    [WFM__SCHED_RUNNING] = LIVE_TARGETS,
    [WFM__SCHED_IDLE] = LIVE_TARGETS,
    [WFM__SCHED_CLOSED] = 0,
    [WFM__SCHED_FAULTED] = 0,
    [WFM__SCHED_CANCELED] = 0,
    [WFM__SCHED_TERMINATED] = 0,
};

/* The one writer of ctx->state. */
static void set_state(wfm_ctx *ctx, wfm__sched_state to)
{
    assert((unsigned)ctx->state < sizeof legal_moves / sizeof legal_moves[0]);
    assert(legal_moves[ctx->state] & STATE_BIT(to));
    ctx->state = to;
}

void wfm__sched_set_saved_state(wfm_ctx *ctx, wfm__sched_state state)
{
    assert(ctx->state == WFM__SCHED_NEW);
    set_state(ctx, state);
}

static bool ai_live(const wfm_ai *ai)
{
    return ai && ai->status == WFM_EXECUTING && !(ai->flags & WFM__AI_FAULTING);
}

/* ---- the deque ------------------------------------------------------------------------ */

/* The ring's capacity is a power of two; it grows by doubling and never shrinks, so a
 * running instance stops allocating once it has seen its widest point. */
static bool ring_grow(wfm_ctx *ctx)
{
    size_t cap = ctx->cap ? ctx->cap * 2 : 16;
    wfm__wi *ring = wf_malloc(cap * sizeof *ring);
    if (!ring)
        return false;
    for (size_t i = 0; i < ctx->count; i++)
        ring[i] = ctx->ring[(ctx->head + i) & (ctx->cap - 1)];
    wf_free(ctx->ring);
    ctx->ring = ring;
    ctx->head = 0;
    ctx->cap = cap;
    return true;
}

static bool ring_room(wfm_ctx *ctx, wfm__wi *wi)
{
    if (ctx->count < ctx->cap || ring_grow(ctx))
        return true;
    wf_value_release(&wi->value);
    ctx->nomem = true;
    return false;
}

static void spill_top(wfm_ctx *ctx);

static void push_front(wfm_ctx *ctx, wfm__wi wi)
{
    if (ctx->top_set)
        spill_top(ctx);
    if (!ring_room(ctx, &wi))
        return;
    ctx->head = (ctx->head + ctx->cap - 1) & (ctx->cap - 1);
    ctx->ring[ctx->head] = wi;
    ctx->count++;
}

static void push_back(wfm_ctx *ctx, wfm__wi wi)
{
    if (!ring_room(ctx, &wi))
        return;
    ctx->ring[(ctx->head + ctx->count) & (ctx->cap - 1)] = wi;
    ctx->count++;
}

/* Copied field by field on purpose: the item was usually just written field by field, and
 * a whole-struct (vector) load of it stalls on store forwarding. */
static void pop_front(wfm_ctx *ctx, wfm__wi *out)
{
    const wfm__wi *slot = &ctx->ring[ctx->head];
    out->kind = slot->kind;
    out->ai = slot->ai;
    out->serial = slot->serial;
    out->fn = slot->fn;
    out->value.type = slot->value.type;
    out->value.u = slot->value.u; /* the whole payload: a Decimal is 16 bytes */
    ctx->head = (ctx->head + 1) & (ctx->cap - 1);
    ctx->count--;
}

/* The common case, written in place: an item about an activity, without a value. */
static void ring_push_ai_front(wfm_ctx *ctx, wfm__wi_kind kind, wfm_ai *ai, uint64_t serial)
{
    if (ctx->count == ctx->cap && !ring_grow(ctx)) {
        ctx->nomem = true;
        return;
    }
    ctx->head = (ctx->head + ctx->cap - 1) & (ctx->cap - 1);
    wfm__wi *wi = &ctx->ring[ctx->head];
    wi->kind = kind;
    wi->ai = ai;
    wi->serial = serial;
    wi->fn = NULL;
    /* field by field, the payload in one store: copying wf_null() stores it in two parts
     * that pop_front's 16-byte read of the payload spans, a store-forwarding stall on
     * nearly every work item (perf on While x1000: most of pop_front's samples) */
    wi->value.type = &wf_type_null;
    memset(&wi->value.u, 0, sizeof wi->value.u);
    ctx->count++;
}

/* The held front item goes to the ring's front: before another item takes the front, and
 * when the run ends. Its serial is the one taken when it was pushed (ai may be gone). */
static void spill_top(wfm_ctx *ctx)
{
    ctx->top_set = false;
    ring_push_ai_front(ctx, ctx->top_kind, ctx->top_ai, ctx->top_serial);
}

/* Inside a run the item is held in top (the previous holder spilled to the ring), so the
 * usual push-then-pop of the next item never touches the ring. */
static inline void push_ai_front(wfm_ctx *ctx, wfm__wi_kind kind, wfm_ai *ai)
{
    if (!ctx->in_run) {
        ring_push_ai_front(ctx, kind, ai, ai->serial);
        return;
    }
    if (ctx->top_set)
        spill_top(ctx);
    ctx->top_set = true;
    ctx->top_kind = kind;
    ctx->top_ai = ai;
    ctx->top_serial = ai->serial;
}

/* Items queued, the held one included. */
static size_t queued(const wfm_ctx *ctx)
{
    return ctx->count + ctx->top_set;
}

/* The front item: the held one, else the ring's. */
static void take_front(wfm_ctx *ctx, wfm__wi *out)
{
    if (!ctx->top_set) {
        pop_front(ctx, out);
        return;
    }
    ctx->top_set = false;
    out->kind = ctx->top_kind;
    out->ai = ctx->top_ai;
    out->serial = ctx->top_serial;
    out->fn = NULL;
    out->value.type = &wf_type_null; /* read only when the item's activity is gone */
}

static wfm__wi make_wi(wfm__wi_kind kind, wfm_ai *ai)
{
    wfm__wi wi = {kind, ai, ai ? ai->serial : 0, NULL, wf_null()};
    return wi;
}

static void clear_queue(wfm_ctx *ctx)
{
    ctx->top_set = false;
    while (ctx->count) {
        wfm__wi wi;
        pop_front(ctx, &wi);
        wf_value_release(&wi.value);
    }
}

/* ---- pools: per-kind state and environment slots by size class ------------------------ */

static int state_class(size_t size)
{
    int c = 0;
    for (size_t s = 16; c < WFM__STATE_CLASSES; c++, s *= 2)
        if (size <= s)
            return c;
    return -1;
}

static void *state_alloc(wfm_ctx *ctx, size_t size)
{
    int c = state_class(size);
    if (c < 0)
        return wf_calloc(1, size);
    if (!ctx->state_pools[c] && !(ctx->state_pools[c] = wf_pool_create((size_t)16 << c, 8)))
        return NULL;
    return wf_pool_get(ctx->state_pools[c]);
}

static void state_free(wfm_ctx *ctx, void *state, size_t size)
{
    int c = state_class(size);
    if (c < 0)
        wf_free(state);
    else
        wf_pool_put(ctx->state_pools[c], state);
}

static int env_class(uint32_t count)
{
    int c = 0;
    for (uint32_t n = 1; c < WFM__ENV_CLASSES; c++, n *= 2)
        if (count <= n)
            return c;
    return -1;
}

static wf_value *slots_alloc(wfm_ctx *ctx, uint32_t count)
{
    int c = env_class(count);
    if (c < 0)
        return wf_calloc(count, sizeof(wf_value));
    if (!ctx->env_pools[c] && !(ctx->env_pools[c] = wf_pool_create(sizeof(wf_value) << c, 8)))
        return NULL;
    return wf_pool_get(ctx->env_pools[c]);
}

/* Release the values of an environment and give its slots back. */
static void env_release(wfm_ctx *ctx, wfm_env *env)
{
    if (!env->slots)
        return;
    for (uint32_t i = 0; i < env->count; i++)
        wf_value_release(&env->slots[i]);
    int c = env_class(env->count);
    if (c < 0)
        wf_free(env->slots);
    else
        wf_pool_put(ctx->env_pools[c], env->slots);
    env->slots = NULL;
    env->count = 0;
}

/* ---- activity instances --------------------------------------------------------------- */

static void link_child(wfm_ai *parent, wfm_ai *child)
{
    child->prev = parent->last_child;
    if (parent->last_child)
        parent->last_child->next = child;
    else
        parent->first_child = child;
    parent->last_child = child;
    parent->child_count++;
}

static inline void unlink_child(wfm_ai *child)
{
    wfm_ai *parent = child->parent;
    if (!parent)
        return;
    if (child->prev)
        child->prev->next = child->next;
    else
        parent->first_child = child->next;
    if (child->next)
        child->next->prev = child->prev;
    else
        parent->last_child = child->prev;
    child->prev = child->next = NULL;
    parent->child_count--;
}

static wfm_ai *ai_new(wfm_ctx *ctx, const wfm_node *node, wfm_ai *parent, wfm_env *env)
{
    if (!ctx->ai_pool && !(ctx->ai_pool = wf_pool_create(sizeof(wfm_ai), 16))) {
        ctx->nomem = true;
        return NULL;
    }
    wfm_ai *ai = wf_pool_get(ctx->ai_pool);
    if (!ai) {
        ctx->nomem = true;
        return NULL;
    }
    ai->node = node;
    ai->spec = node->kind->spec;
    ai->serial = ++ctx->next_serial;
    ai->env = env;
    ai->status = WFM_EXECUTING;
    size_t state_size = ai->spec->state_size;
    if (state_size && state_size <= sizeof ai->small_state) {
        ai->state = ai->small_state; /* zeroed with the rest of the slot */
    } else if (state_size && !(ai->state = state_alloc(ctx, state_size))) {
        ai->serial = 0;
        wf_pool_put(ctx->ai_pool, ai);
        ctx->nomem = true;
        return NULL;
    }
    ai->parent = parent;
    if (parent)
        link_child(parent, ai);
    return ai;
}

static void bookmark_unlink(wfm_ctx *ctx, wfm__bookmark *bm);
static void timers_drop_owner(wfm_ctx *ctx, wfm_ai *owner);

/* Remove what makes ai wait: its bookmarks and timers. Inline: most activities (every
 * leaf) have neither, and this runs twice per activity (close, free). */
static inline void drop_waits(wfm_ctx *ctx, wfm_ai *ai)
{
    if (__builtin_expect(!ai->bookmarks && !ai->timer_count, 1))
        return;
    while (ai->bookmarks)
        bookmark_unlink(ctx, ai->bookmarks);
    if (ai->timer_count)
        timers_drop_owner(ctx, ai);
}

static void ai_free(wfm_ctx *ctx, wfm_ai *ai)
{
    drop_waits(ctx, ai);
    if (ai->spec->fini && (ai->flags & WFM__AI_STARTED))
        ai->spec->fini(ai);
    if (ai->state && ai->state != ai->small_state)
        state_free(ctx, ai->state, ai->spec->state_size);
    if (ai->venv.slots)
        env_release(ctx, &ai->venv);
    if (ai->denv.slots && !ai->darg_borrowed)
        wf_value_release(&ai->darg);
    ai->serial = 0;
    wf_pool_put(ctx->ai_pool, ai);
}

/* Abort ai's children and everything under them: no callbacks run (docs/semantics.md §5). */
static void abort_children(wfm_ctx *ctx, wfm_ai *ai)
{
    while (ai->first_child) {
        wfm_ai *child = ai->first_child;
        abort_children(ctx, child);
        unlink_child(child);
        ai_free(ctx, child);
    }
}

/* ---- bookmarks ------------------------------------------------------------------------ */

static void bookmark_unlink(wfm_ctx *ctx, wfm__bookmark *bm)
{
    wf_strmap_remove(ctx->bookmark_map, bm->name);
    if (bm->owner_prev)
        bm->owner_prev->owner_next = bm->owner_next;
    else
        bm->owner->bookmarks = bm->owner_next;
    if (bm->owner_next)
        bm->owner_next->owner_prev = bm->owner_prev;
    if (bm->all_prev)
        bm->all_prev->all_next = bm->all_next;
    else
        ctx->bm_first = bm->all_next;
    if (bm->all_next)
        bm->all_next->all_prev = bm->all_prev;
    else
        ctx->bm_last = bm->all_prev;
    if (!(bm->flags & WFM_BOOKMARK_NONBLOCKING))
        ctx->blocking_bookmarks--;
    wf_free(bm->name);
    wf_pool_put(ctx->bm_pool, bm);
}

static bool bookmark_prepare(wfm_ctx *ctx)
{
    if (!ctx->bookmark_map && !(ctx->bookmark_map = wf_strmap_create(NULL)))
        return false;
    if (!ctx->bm_pool && !(ctx->bm_pool = wf_pool_create(sizeof(wfm__bookmark), 8)))
        return false;
    return true;
}

wf_status wfm_ctx_bookmark(wfm_ctx *ctx, wfm_ai *ai, const char *name, unsigned flags,
                           wfm_resume_fn on_resume)
{
    if (!ai_live(ai) || !name || !on_resume)
        return WF_E_STATE;
    if (!bookmark_prepare(ctx))
        return WF_E_NOMEM;
    if (wf_strmap_get(ctx->bookmark_map, name))
        return WF_E_STATE;
    wfm__bookmark *bm = wf_pool_get(ctx->bm_pool);
    char *copy = bm ? wf_strdup(name) : NULL;
    if (!copy || wf_strmap_put(ctx->bookmark_map, name, bm) != WF_OK) {
        wf_free(copy);
        wf_pool_put(ctx->bm_pool, bm);
        return WF_E_NOMEM;
    }
    bm->name = copy;
    bm->owner = ai;
    bm->owner_serial = ai->serial;
    bm->flags = flags;
    bm->on_resume = on_resume;
    bm->owner_next = ai->bookmarks;
    if (ai->bookmarks)
        ai->bookmarks->owner_prev = bm;
    ai->bookmarks = bm;
    bm->all_prev = ctx->bm_last;
    if (ctx->bm_last)
        ctx->bm_last->all_next = bm;
    else
        ctx->bm_first = bm;
    ctx->bm_last = bm;
    if (!(flags & WFM_BOOKMARK_NONBLOCKING))
        ctx->blocking_bookmarks++;
    return WF_OK;
}

void wfm_ctx_bookmark_remove(wfm_ctx *ctx, wfm_ai *ai, const char *name)
{
    wfm__bookmark *bm = ctx->bookmark_map ? wf_strmap_get(ctx->bookmark_map, name) : NULL;
    if (bm && bm->owner == ai)
        bookmark_unlink(ctx, bm);
}

wf_status wfm__sched_resume(wfm_ctx *ctx, const char *name, const wf_value *payload, wf_error *err)
{
    if (is_final(ctx->state) || ctx->state == WFM__SCHED_NEW)
        return wf_error_set(err, WF_E_STATE, NULL,
                            "cannot resume bookmark '%s': the instance "
                            "is not running",
                            name);
    wfm__bookmark *bm = ctx->bookmark_map ? wf_strmap_get(ctx->bookmark_map, name) : NULL;
    if (!bm)
        return wf_error_set(err, WF_E_NOTFOUND, NULL, "no bookmark named '%s'", name);
    wfm__wi wi = make_wi(WFM__WI_RESUME, bm->owner);
    wi.fn = bm->on_resume;
    wi.value = payload ? wf_value_retain(payload) : wf_null();
    TRACK(ctx, WFM__TRACK_RESUMED, bm->owner, name, &wi.value);
    if (!(bm->flags & WFM_BOOKMARK_MULTIPLE))
        bookmark_unlink(ctx, bm);
    push_back(ctx, wi);
    if (ctx->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    ctx->n_resumed++;
    set_state(ctx, WFM__SCHED_RUNNING);
    return WF_OK;
}

/* ---- timers: a binary min-heap on (due_us, seq) ---------------------------------------- */

static bool timer_less(const wfm__timer *a, const wfm__timer *b)
{
    return a->due_us < b->due_us || (a->due_us == b->due_us && a->seq < b->seq);
}

/* The heap property at slot i: not before its parent, not after its children. Checked after
 * every heap operation (debug builds): over the whole heap while it is small, else at the
 * slots the operation moved an entry to. */
static bool heap_ok_at(const wfm__timer *h, size_t n, size_t i)
{
    size_t l = 2 * i + 1, r = l + 1;
    return (i == 0 || !timer_less(&h[i], &h[(i - 1) / 2])) &&
           (l >= n || !timer_less(&h[l], &h[i])) && (r >= n || !timer_less(&h[r], &h[i]));
}

#define HEAP_FULL_CHECK_MAX 64
static bool heap_ok(const wfm__timer *h, size_t n, size_t moved)
{
    if (n > HEAP_FULL_CHECK_MAX)
        return moved >= n || heap_ok_at(h, n, moved);
    for (size_t i = 0; i < n; i++)
        if (!heap_ok_at(h, n, i))
            return false;
    return true;
}

static size_t heap_up(wfm__timer *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!timer_less(&h[i], &h[p]))
            break;
        wfm__timer t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
    return i;
}

static size_t heap_down(wfm__timer *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && timer_less(&h[l], &h[m]))
            m = l;
        if (r < n && timer_less(&h[r], &h[m]))
            m = r;
        if (m == i)
            return i;
        wfm__timer t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

wf_status wfm_ctx_timer(wfm_ctx *ctx, wfm_ai *ai, int64_t due_us, wfm_resume_fn on_fire)
{
    if (!ai_live(ai) || !on_fire)
        return WF_E_STATE;
    if (ctx->timer_count == ctx->timer_cap) {
        size_t cap = ctx->timer_cap ? ctx->timer_cap * 2 : 8;
        wfm__timer *t = wf_realloc(ctx->timers, cap * sizeof *t);
        if (!t)
            return WF_E_NOMEM;
        ctx->timers = t;
        ctx->timer_cap = cap;
    }
    wfm__timer t = {due_us, ++ctx->next_timer_seq, ai, ai->serial, on_fire};
    ctx->timers[ctx->timer_count] = t;
    size_t at = heap_up(ctx->timers, ctx->timer_count++);
    assert(heap_ok(ctx->timers, ctx->timer_count, at));
    (void)at;
    ai->timer_count++;
    return WF_OK;
}

static void timers_drop_owner(wfm_ctx *ctx, wfm_ai *owner)
{
    size_t kept = 0;
    for (size_t i = 0; i < ctx->timer_count; i++)
        if (ctx->timers[i].owner != owner)
            ctx->timers[kept++] = ctx->timers[i];
    ctx->timer_count = kept;
    for (size_t i = kept / 2 + 1; i-- > 0;)
        heap_down(ctx->timers, kept, i);
    assert(heap_ok(ctx->timers, kept, 0));
    owner->timer_count = 0;
}

/* Append a resumption for every timer due now, in due order. */
static void fire_due_timers(wfm_ctx *ctx)
{
    if (!ctx->timer_count)
        return;
    int64_t now = wfm_ctx_now_us(ctx);
    while (ctx->timer_count && ctx->timers[0].due_us <= now) {
        wfm__timer t = ctx->timers[0];
        ctx->timers[0] = ctx->timers[--ctx->timer_count];
        size_t at = heap_down(ctx->timers, ctx->timer_count, 0);
        assert(heap_ok(ctx->timers, ctx->timer_count, at));
        (void)at;
        t.owner->timer_count--;
        wfm__wi wi = {WFM__WI_RESUME, t.owner, t.owner_serial, t.on_fire, wf_null()};
        push_back(ctx, wi);
        ctx->n_timers++;
    }
}

int64_t wfm__sched_next_timer(const wfm_ctx *ctx)
{
    return ctx->timer_count ? ctx->timers[0].due_us : INT64_MAX;
}

/* ---- evaluation ----------------------------------------------------------------------- */

static void fault_from_status(wfm_ctx *ctx, wfm_ai *ai, wf_status st, wf_value *exc)
{
    if (st == WF_E_FAULT) {
        wfm_ctx_fault(ctx, ai, *exc);
        *exc = wf_null();
        return;
    }
    wf_value_release(exc);
    if (st == WF_E_NOMEM)
        ctx->nomem = true;
    else
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "%s", wf_status_message(st));
}

/* value = expr ? eval(expr, env) : copy(literal) (wfm_definition_int.h "value sources"). */
static wf_status eval_source(wfm_ctx *ctx, wfm_ai *ai, const wfm_expr *expr,
                             const wf_value *literal, wfm_env *env, wf_value *out)
{
    *out = wf_null();
    if (!expr) {
        if (literal && literal->type)
            *out = wf_value_retain(literal);
        return WF_OK;
    }
    wf_value exc = wf_null();
    wf_status st = wfm_expr_eval(expr, env, out, &exc);
    if (st != WF_OK)
        fault_from_status(ctx, ai, st, &exc);
    return st;
}

static wf_status store_location(wfm_ctx *ctx, wfm_ai *ai, const wfm_expr *expr,
                                const wf_value *value)
{
    if (!expr)
        return WF_OK;
    wf_value exc = wf_null();
    wf_status st = wfm_expr_store(expr, ai->env, value, &exc);
    if (st != WF_OK)
        fault_from_status(ctx, ai, st, &exc);
    return st;
}

/* Ev: a fresh environment for the node's variables, defaults evaluated in it. */
static bool env_start(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *node = ai->node;
    if (!node->creates_env)
        return true;
    wf_value *slots = slots_alloc(ctx, node->var_count);
    if (!slots) {
        ctx->nomem = true;
        return false;
    }
    for (uint32_t i = 0; i < node->var_count; i++)
        slots[i] = wf_type_default(node->vars[i].type);
    ai->venv.parent = ai->env;
    ai->venv.slots = slots;
    ai->venv.count = node->var_count;
    ai->env = &ai->venv;
    for (uint32_t i = 0; i < node->var_count; i++) {
        const wfm__var *var = &node->vars[i];
        if (!var->expr && (!var->literal.type || wf_is_null(&var->literal)))
            continue;
        wf_value v;
        if (eval_source(ctx, ai, var->expr, &var->literal, ai->env, &v) != WF_OK)
            return false;
        wf_value_release(&slots[i]);
        slots[i] = v;
    }
    return true;
}

static const wfm__prop *prop_of(const wfm_ai *ai, const wfm_node *node, unsigned prop,
                                wfm_prop_kind *kind)
{
    if (!ai_live(ai))
        return NULL;
    /* the activity's own node: its spec is cached in ai (one dependent load fewer) */
    const wfm_kind_spec *spec = node == ai->node ? ai->spec : node->kind->spec;
    if (prop >= spec->prop_count)
        return NULL;
    *kind = spec->props[prop].kind;
    return wfm__node_prop(node, prop);
}

static wf_status get_prop(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, unsigned prop,
                          wf_value *out)
{
    wfm_prop_kind kind;
    const wfm__prop *p = prop_of(ai, node, prop, &kind);
    *out = wf_null();
    if (!p)
        return WF_E_STATE;
    switch (kind) {
    case WFM_PROP_IN:
    case WFM_PROP_LITERAL:
        return eval_source(ctx, ai, wfm__prop_expr(p), &p->literal, ai->env, out);
    case WFM_PROP_INOUT:
        if (p->bound)
            return eval_source(ctx, ai, p->expr, NULL, ai->env, out);
        *out = wf_type_default(p->type);
        return WF_OK;
    default:
        return WF_E_STATE;
    }
}

/* The activity's own In property bound to an expression, the case of nearly every read in
 * a loop (a condition, an Assign's value), without get_prop's layers; anything else goes
 * through get_prop. */
wf_status wfm_ctx_get(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, wf_value *out)
{
    if (__builtin_expect(ai_live(ai) && prop < ai->spec->prop_count &&
                             ai->spec->props[prop].kind == WFM_PROP_IN,
                         1)) {
        const wfm_expr *expr = wfm__prop_expr(wfm__node_prop(ai->node, prop));
        if (expr) {
            *out = wf_null();
            wf_value exc;
            wf_status st = wfm_expr_eval(expr, ai->env, out, &exc);
            if (st != WF_OK)
                fault_from_status(ctx, ai, st, &exc);
            return st;
        }
    }
    return get_prop(ctx, ai, ai->node, prop, out);
}

wf_status wfm_ctx_eval_node(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, unsigned prop,
                            wf_value *out)
{
    return get_prop(ctx, ai, node, prop, out);
}

wf_status wfm_ctx_set(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, const wf_value *value)
{
    if (!ai_live(ai) || prop >= ai->spec->prop_count)
        return WF_E_STATE;
    wfm_prop_kind kind = ai->spec->props[prop].kind;
    if (kind != WFM_PROP_OUT && kind != WFM_PROP_INOUT)
        return WF_E_STATE;
    return store_location(ctx, ai, wfm__prop_expr(wfm__node_prop(ai->node, prop)), value);
}

static const wfm__param *param_of(const wfm_ai *ai, unsigned prop, size_t index)
{
    wfm_prop_kind kind;
    const wfm__prop *p = prop_of(ai, ai->node, prop, &kind);
    if (!p || kind != WFM_PROP_PARAMS || index >= p->count)
        return NULL;
    return &p->params[index];
}

wf_status wfm_ctx_get_param(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, size_t index, wf_value *out)
{
    const wfm__param *pa = param_of(ai, prop, index);
    *out = wf_null();
    if (!pa)
        return WF_E_STATE;
    if (pa->dir == WFM_PROP_IN)
        return eval_source(ctx, ai, pa->expr, &pa->literal, ai->env, out);
    if (pa->dir == WFM_PROP_INOUT && pa->expr)
        return eval_source(ctx, ai, pa->expr, NULL, ai->env, out);
    *out = wf_type_default(pa->type);
    return WF_OK;
}

wf_status wfm_ctx_set_param(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, size_t index,
                            const wf_value *value)
{
    const wfm__param *pa = param_of(ai, prop, index);
    if (!pa || pa->dir == WFM_PROP_IN)
        return WF_E_STATE;
    return store_location(ctx, ai, pa->expr, value);
}

/* ---- scheduling ----------------------------------------------------------------------- */

/* May ai get new children? Live activities, and the root while finish hooks run. */
static bool can_schedule(const wfm_ctx *ctx, const wfm_ai *ai)
{
    return ai_live(ai) || (ai && ai == ctx->root && ctx->finishing && !is_final(ctx->state));
}

static wfm_ai *schedule_node(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, wfm_env *env,
                             wfm_done_fn on_done, wfm_fault_fn on_fault)
{
    wfm_ai *child = ai_new(ctx, node, ai, env);
    if (!child)
        return NULL;
    child->on_done = on_done;
    child->on_fault = on_fault;
    push_ai_front(ctx, WFM__WI_EXECUTE, child);
    TRACK(ctx, WFM__TRACK_SCHEDULED, child, NULL, NULL);
    return child;
}

/* wfm_ctx_schedule and its variants: check what the kind asks, then schedule. */
static inline wf_status schedule_checked(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *child,
                                         wfm_env *env, wfm_done_fn on_done,
                                         wfm_fault_fn on_fault)
{
    if (!child || !on_done || !child->kind->is_activity || !child->kind->spec->execute ||
        !can_schedule(ctx, ai))
        return WF_E_STATE;
    return schedule_node(ctx, ai, child, env, on_done, on_fault) ? WF_OK : WF_E_NOMEM;
}

wf_status wfm_ctx_schedule(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *child, wfm_done_fn on_done,
                           wfm_fault_fn on_fault)
{
    return schedule_checked(ctx, ai, child, ai->env, on_done, on_fault);
}

wf_status wfm_ctx_schedule_item(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, size_t index,
                                wfm_done_fn on_done, wfm_fault_fn on_fault)
{
    if (prop >= ai->spec->prop_count) /* ai->spec is its node's kind's */
        return WF_E_STATE;
    wfm_prop_kind kind = ai->spec->props[prop].kind;
    if (kind != WFM_PROP_ACTIVITIES && kind != WFM_PROP_NODES && kind != WFM_PROP_KEYED)
        return WF_E_STATE;
    const wfm__prop *p = wfm__node_prop(ai->node, prop);
    if (index >= p->count)
        return WF_E_NOTFOUND;
    return schedule_checked(ctx, ai, p->items[index], ai->env, on_done, on_fault);
}

wf_status wfm_ctx_schedule_in_env(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *child, wfm_env *env,
                                  wfm_done_fn on_done, wfm_fault_fn on_fault)
{
    return schedule_checked(ctx, ai, child, env ? env : ai->env, on_done, on_fault);
}

void wfm_ctx_nomem(wfm_ctx *ctx)
{
    ctx->nomem = true;
}

/* Ed: one slot, ai->darg, holding the delegate argument (converted to its declared type),
 * parented to env(ai). `borrowed`: arg outlives the child, no reference is taken unless a
 * conversion made a new value. An empty ActivityAction yields a child that completes at
 * once. */
static wf_status schedule_delegate(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, unsigned prop,
                                   const wf_value *arg, bool borrowed, wfm_done_fn on_done,
                                   wfm_fault_fn on_fault)
{
    if (!node || !on_done || prop >= node->kind->spec->prop_count ||
        node->kind->spec->props[prop].kind != WFM_PROP_DELEGATE || !can_schedule(ctx, ai))
        return WF_E_STATE;
    static const wfm__delegate unwritten; /* no ActivityAction: no argument type, no body */
    const wfm__delegate *d = wfm__node_prop(node, prop)->delegate;
    d = d ? d : &unwritten;
    wf_value v = arg ? *arg : wf_null();
    if (d->arg_type && v.type != d->arg_type && !wf_is_null(&v)) {
        wf_error e = WF_ERROR_INIT;
        if (wf_value_convert(arg, d->arg_type, &v, &e) != WF_OK) {
            wfm_ctx_throw(ctx, ai, &wf_exc_invalid_cast, "%s", e.message);
            return WF_E_TYPE;
        }
        borrowed = false;
    } else if (!borrowed) {
        v = wf_value_retain(&v);
    }
    wfm_ai *child = ai_new(ctx, d->body ? d->body : node, ai, ai->env);
    if (!child) {
        if (!borrowed)
            wf_value_release(&v);
        return WF_E_NOMEM;
    }
    child->darg = v;
    child->darg_borrowed = borrowed;
    child->denv.parent = ai->env;
    child->denv.slots = &child->darg;
    child->denv.count = 1;
    child->env = &child->denv;
    child->on_done = on_done;
    child->on_fault = on_fault;
    if (!d->body)
        child->flags |= WFM__AI_EMPTY;
    push_ai_front(ctx, WFM__WI_EXECUTE, child);
    TRACK(ctx, WFM__TRACK_SCHEDULED, child, NULL, NULL);
    return ctx->nomem ? WF_E_NOMEM : WF_OK;
}

wf_status wfm_ctx_schedule_delegate(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, unsigned prop,
                                    const wf_value *arg, wfm_done_fn on_done, wfm_fault_fn on_fault)
{
    return schedule_delegate(ctx, ai, node, prop, arg, false, on_done, on_fault);
}

wf_status wfm_ctx_schedule_delegate_borrowed(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node,
                                             unsigned prop, const wf_value *arg,
                                             wfm_done_fn on_done, wfm_fault_fn on_fault)
{
    return schedule_delegate(ctx, ai, node, prop, arg, true, on_done, on_fault);
}

static void run_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    if (!ai_live(ai))
        return;
    ai->flags |= WFM__AI_STARTED;
    if (ai->flags & WFM__AI_EMPTY) {
        close_ai(ctx, ai);
        return;
    }
    if (!env_start(ctx, ai))
        return;
    ctx->n_executed++;
    TRACK(ctx, WFM__TRACK_EXECUTING, ai, NULL, NULL);
    ai->spec->execute(ctx, ai);
}

/* ---- completion ----------------------------------------------------------------------- */

static void close_ai(wfm_ctx *ctx, wfm_ai *ai)
{
    ai->status = (ai->flags & WFM__AI_FAULT_DONE)    ? WFM_FAULTED
                 : (ai->flags & WFM__AI_MARK_CANCEL) ? WFM_CANCELED
                                                     : WFM_CLOSED;
    drop_waits(ctx, ai);
    TRACK(ctx, WFM__TRACK_CLOSED, ai, NULL, NULL);
    push_ai_front(ctx, ai->parent ? WFM__WI_DONE : WFM__WI_ROOT_DONE, ai);
}

void wfm_ctx_complete(wfm_ctx *ctx, wfm_ai *ai)
{
    if (!ai_live(ai))
        return;
    if (ai == &ctx->leaf) { /* an inline leaf: leaf_run sees it closed */
        ai->status = WFM_CLOSED;
        return;
    }
    if (ai->child_count) {
        ai->flags |= WFM__AI_COMPLETING; /* closes when the last child is done */
        return;
    }
    close_ai(ctx, ai);
}

void wfm_ctx_mark_canceled(wfm_ctx *ctx, wfm_ai *ai)
{
    (void)ctx;
    if (ai)
        ai->flags |= WFM__AI_MARK_CANCEL;
}

static void finalize(wfm_ctx *ctx)
{
    if (ctx->terminating)
        set_state(ctx, WFM__SCHED_TERMINATED);
    else if (ctx->faulted)
        set_state(ctx, WFM__SCHED_FAULTED);
    else
        set_state(ctx, ctx->body_status == WFM_CLOSED     ? WFM__SCHED_CLOSED
                       : ctx->body_status == WFM_CANCELED ? WFM__SCHED_CANCELED
                                                          : WFM__SCHED_FAULTED);
    if (ctx->root) {
        abort_children(ctx, ctx->root);
        ai_free(ctx, ctx->root);
        ctx->root = NULL;
    }
    clear_queue(ctx);
    ctx->timer_count = 0;
}

/* Out of memory (a finish hook could not schedule its work): the outcome is fail_nomem's,
 * once the callback returns to the run loop, never the body's as if the hooks had run. */
static void check_finished(wfm_ctx *ctx)
{
    if (ctx->finishing && !ctx->nomem && ctx->root && ctx->root->child_count == 0)
        finalize(ctx);
}

/* The root body closed: run the finish hooks once (they may schedule children of root). */
static void root_done(wfm_ctx *ctx, wfm_ai *root)
{
    if (ctx->finishing)
        return;
    ctx->finishing = true;
    ctx->body_status = (wfm_status)root->status;
    for (size_t i = 0; i < ctx->hook_count; i++)
        ctx->hooks[i].fn(ctx, root, ctx->body_status, ctx->hooks[i].data);
    check_finished(ctx);
}

/* A parent that is canceling with the default behaviour (no cancel callback), or that asked
 * to complete while children ran, does not see its children's completions: it closes when
 * the last one is done. */
static bool parent_waits_quietly(const wfm_ai *p)
{
    return (p->flags & WFM__AI_COMPLETING) || ((p->flags & WFM__AI_CANCEL_REQ) && !p->spec->cancel);
}

static void deliver_done(wfm_ctx *ctx, wfm_ai *child)
{
    wfm_ai *p = child->parent;
    unlink_child(child);
    if (ai_live(p) && parent_waits_quietly(p)) {
        if (p->child_count == 0) {
            if (!(p->flags & WFM__AI_COMPLETING))
                p->flags |= WFM__AI_MARK_CANCEL;
            close_ai(ctx, p);
        }
    } else if (can_schedule(ctx, p)) {
        child->on_done(ctx, p, child);
    }
    ai_free(ctx, child);
    if (p == ctx->root)
        check_finished(ctx);
}

/* ---- cancellation --------------------------------------------------------------------- */

static void default_cancel(wfm_ctx *ctx, wfm_ai *ai)
{
    if (ai->child_count == 0) {
        ai->flags |= WFM__AI_MARK_CANCEL;
        close_ai(ctx, ai);
        return;
    }
    wfm_ctx_cancel_children(ctx, ai);
}

static void cancel_ai(wfm_ctx *ctx, wfm_ai *ai)
{
    if (!ai_live(ai) || (ai->flags & WFM__AI_CANCEL_REQ))
        return;
    ai->flags |= WFM__AI_CANCEL_REQ;
    TRACK(ctx, WFM__TRACK_CANCEL_REQ, ai, NULL, NULL);
    if (!(ai->flags & WFM__AI_STARTED) || (ai->flags & WFM__AI_EMPTY)) {
        ai->flags |= WFM__AI_MARK_CANCEL; /* never ran: nothing to undo */
        close_ai(ctx, ai);
    } else if (ai->spec->cancel) {
        ai->spec->cancel(ctx, ai);
    } else {
        default_cancel(ctx, ai);
    }
}

void wfm_ctx_cancel_child(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    if (child && child->parent == ai)
        cancel_ai(ctx, child);
}

void wfm_ctx_cancel_children(wfm_ctx *ctx, wfm_ai *ai)
{
    for (wfm_ai *c = ai->first_child, *next; c; c = next) {
        next = c->next;
        cancel_ai(ctx, c);
    }
}

void wfm__sched_cancel(wfm_ctx *ctx)
{
    if (ctx->state == WFM__SCHED_NEW) {
        set_state(ctx, WFM__SCHED_CANCELED);
        return;
    }
    if (is_final(ctx->state) || !ctx->root || ctx->finishing)
        return;
    cancel_ai(ctx, ctx->root);
    if (ctx->count)
        set_state(ctx, WFM__SCHED_RUNNING);
}

/* ---- inline leaves (wfm_ctx_run_inline) ------------------------------------------------
 * A leaf run inline is the sequence "execute item, done item" of a scheduled child with
 * nothing in between, so it may run where the parent's callback would schedule it: the
 * parent is live and neither canceling nor completing (its on_done would be called), the
 * child's states are not tracked, and its two items fit in the run's budget and step limit
 * without reaching either (they are counted as run, so every limit, stop and counter falls
 * where it would). Nothing outside the callback sees the child in between: persistence and
 * host cancellation happen between runs. Faults: the stand-in becomes the child instance it
 * would have been (leaf_materialise), then the fault is queued on it as usual. */
#define TRACK_LEAF_BITS                                                                            \
    ((1u << WFM__TRACK_SCHEDULED) | (1u << WFM__TRACK_EXECUTING) | WFM__TRACK_BIT_CLOSED)

/* Binding v to a delegate argument of type t converts it (schedule_delegate). */
static bool arg_converts(const wf_type *t, const wf_value *v)
{
    return t && v->type != t && !wf_is_null(v);
}

/* A leaf's two items fit before the run's budget and the step limit. */
static inline bool inline_room(const wfm_ctx *ctx)
{
    return !ctx->nomem && !ctx->terminating &&
           (!ctx->run_budget || ctx->run_items + 2 <= ctx->run_budget) &&
           (!ctx->host.max_steps || ctx->steps + 2 < ctx->host.max_steps);
}

static bool inline_allowed(const wfm_ctx *ctx, const wfm_ai *ai, const wfm_node *child)
{
    return ctx->in_run && (child->kind->spec->flags & WFM_KIND_INLINE) && !child->creates_env &&
           !(ctx->host.track_mask & TRACK_LEAF_BITS) && ai_live(ai) &&
           !(ai->flags & (WFM__AI_CANCEL_REQ | WFM__AI_COMPLETING)) && inline_room(ctx);
}

static wfm_ai *leaf_begin(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, wfm_done_fn on_done,
                          wfm_fault_fn on_fault)
{
    assert(node->kind->spec->state_size == 0 && !node->kind->spec->fini);
    wfm_ai *leaf = &ctx->leaf;
    assert(!leaf->spec || !ai_live(leaf)); /* never nested: a leaf schedules nothing */
    leaf->node = node;
    leaf->spec = node->kind->spec;
    leaf->serial = ++ctx->next_serial;
    leaf->parent = ai;
    leaf->env = ai->env;
    leaf->on_done = on_done;
    leaf->on_fault = on_fault;
    leaf->status = WFM_EXECUTING;
    leaf->flags = WFM__AI_STARTED;
    ctx->leaf_pending_count = 0;
    ctx->leaf_arg_type = NULL;
    return leaf;
}

/* The stand-in becomes a started child instance of its parent, linked after the pending
 * siblings (scheduled first, as they were), with the same callbacks and environment. */
static wfm_ai *leaf_materialise(wfm_ctx *ctx)
{
    wfm_ai *leaf = &ctx->leaf, *parent = leaf->parent;
    leaf->flags |= WFM__AI_FAULTING; /* spent: later calls on it are ignored */
    for (size_t i = 0; i < ctx->leaf_pending_count; i++)
        if (schedule_delegate(ctx, parent, ctx->leaf_dnode, ctx->leaf_dprop, &ctx->leaf_pending[i],
                              true, leaf->on_done, leaf->on_fault) != WF_OK)
            return NULL;
    wfm_ai *ai = ai_new(ctx, leaf->node, parent, leaf->env);
    if (!ai)
        return NULL;
    ai->on_done = leaf->on_done;
    ai->on_fault = leaf->on_fault;
    ai->flags = WFM__AI_STARTED;
    if (leaf->env == &leaf->denv) {
        ai->darg = leaf->darg;
        ai->darg_borrowed = true;
        ai->denv = leaf->denv;
        ai->denv.slots = &ai->darg;
        ai->env = &ai->denv;
    }
    return ai;
}

/* Run the stand-in's execute as its execute item, then count its done item. */
static wfm_inline_result leaf_run(wfm_ctx *ctx, wfm_ai *leaf)
{
    ctx->run_items++;
    ctx->steps++;
    ctx->n_executed++;
    leaf->spec->execute(ctx, leaf);
    if (__builtin_expect(leaf->status == WFM_CLOSED, 1)) {
        ctx->run_items++;
        ctx->steps++;
        return WFM_INLINE_CLOSED;
    }
    if (ai_live(leaf) && !ctx->nomem)
        leaf_materialise(ctx); /* neither closed nor faulted: it stays open, as it would */
    leaf->status = WFM_FAULTED;
    return WFM_INLINE_STOPPED;
}

wfm_inline_result wfm_ctx_run_inline(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *child,
                                     wfm_done_fn on_done, wfm_fault_fn on_fault)
{
    if (!child || !on_done || !inline_allowed(ctx, ai, child))
        return WFM_INLINE_UNAVAILABLE;
    return leaf_run(ctx, leaf_begin(ctx, ai, child, on_done, on_fault));
}

wfm_inline_result wfm_ctx_run_delegate_inline(wfm_ctx *ctx, wfm_ai *ai,
                                              const wfm_inline_delegate *d)
{
    const wfm_kind_spec *spec = d->node->kind->spec;
    if (!d->on_done || d->prop >= spec->prop_count ||
        spec->props[d->prop].kind != WFM_PROP_DELEGATE)
        return WFM_INLINE_UNAVAILABLE;
    const wfm__delegate *dl = wfm__node_prop(d->node, d->prop)->delegate;
    wf_value arg = d->arg ? *d->arg : wf_null();
    /* No body (completes at once) or an argument to convert: the ordinary way. A pending
     * sibling's conversion may fail, and it would have failed before any body ran. */
    if (!dl || !dl->body || !inline_allowed(ctx, ai, dl->body) || arg_converts(dl->arg_type, &arg))
        return WFM_INLINE_UNAVAILABLE;
    for (size_t i = 0; i < d->pending_count; i++)
        if (arg_converts(dl->arg_type, &d->pending[i]))
            return WFM_INLINE_UNAVAILABLE;
    wfm_ai *leaf = leaf_begin(ctx, ai, dl->body, d->on_done, d->on_fault);
    leaf->darg = arg;
    leaf->denv.parent = ai->env;
    leaf->denv.slots = &leaf->darg;
    leaf->denv.count = 1;
    leaf->env = &leaf->denv;
    ctx->leaf_dnode = d->node;
    ctx->leaf_dprop = d->prop;
    ctx->leaf_pending = d->pending;
    ctx->leaf_pending_count = d->pending_count;
    ctx->leaf_arg_type = dl->arg_type;
    return leaf_run(ctx, leaf);
}

/* Only the dynamic conditions can have changed since the leaf closed: nothing else ran. */
wfm_inline_result wfm_ctx_run_inline_again(wfm_ctx *ctx, wfm_ai *ai, const wf_value *arg,
                                           size_t pending_count)
{
    wfm_ai *leaf = &ctx->leaf;
    assert(leaf->parent == ai && leaf->status == WFM_CLOSED);
    (void)ai;
    if (!inline_room(ctx))
        return WFM_INLINE_UNAVAILABLE;
    if (leaf->env == &leaf->denv) {
        wf_value v = arg ? *arg : wf_null();
        if (arg_converts(ctx->leaf_arg_type, &v))
            return WFM_INLINE_UNAVAILABLE; /* to convert: the ordinary way */
        leaf->darg = v;
        ctx->leaf_pending_count = pending_count;
    }
    leaf->status = WFM_EXECUTING;
    leaf->flags = WFM__AI_STARTED;
    return leaf_run(ctx, leaf);
}

/* ---- faults --------------------------------------------------------------------------- */

void wfm_ctx_fault(wfm_ctx *ctx, wfm_ai *ai, wf_value exc)
{
    if (!ai || ai->status != WFM_EXECUTING || (ai->flags & WFM__AI_FAULTING)) {
        wf_value_release(&exc);
        return;
    }
    if (ai == &ctx->leaf && !(ai = leaf_materialise(ctx))) {
        wf_value_release(&exc);
        return;
    }
    ai->flags |= WFM__AI_FAULTING;
    wfm__wi wi = make_wi(WFM__WI_FAULT, ai);
    wi.value = exc;
    push_front(ctx, wi);
}

void wfm_ctx_throw(wfm_ctx *ctx, wfm_ai *ai, const wf_type *exc_type, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wf_value exc;
    if (wf_value_exception(exc_type ? exc_type : &wf_exc_exception, msg, &exc) != WF_OK) {
        ctx->nomem = true;
        return;
    }
    wfm_ctx_fault(ctx, ai, exc);
}

/* Unhandled: keep the exception and where it came from, abort the whole tree, then run the
 * finish hooks (compensation) unless the instance is aborted outright. */
static void fault_instance(wfm_ctx *ctx, wfm_ai *src, wf_value exc, bool run_hooks)
{
    if (!ctx->faulted) {
        wf_value_release(&ctx->fault);
        ctx->fault = exc;
        ctx->fault_loc = wfm_node_loc(src->node);
        ctx->faulted = true;
    } else {
        wf_value_release(&exc);
    }
    wfm_ai *root = ctx->root;
    abort_children(ctx, root);
    drop_waits(ctx, root);
    if (root->status == WFM_EXECUTING)
        root->status = WFM_FAULTED;
    root->flags |= WFM__AI_FAULTING;
    if (run_hooks && !ctx->finishing)
        root_done(ctx, root);
    else
        finalize(ctx);
}

/* Walk up from src to the nearest ancestor whose fault callback for the child on the path
 * handles the exception (docs/semantics.md §5). As in WF4, one FaultPropagation record per
 * fault callback that sees it (the handler), before the callback runs, and one without a
 * handler when none handles it. */
static void process_fault(wfm_ctx *ctx, wfm_ai *src, wf_value exc)
{
    wfm_ai *c = src, *p;
    while ((p = c->parent)) {
        if (c != src && (c->flags & WFM__AI_CANCEL_REQ)) {
            TRACK_TO(ctx, WFM__TRACK_FAULT, src, NULL, NULL, &exc);
            fault_instance(ctx, src, exc, false); /* through a canceling activity: abort */
            return;
        }
        if (c->on_fault && ai_live(p)) {
            TRACK_TO(ctx, WFM__TRACK_FAULT, src, p, NULL, &exc);
            if (c->on_fault(ctx, p, c, &exc))
                break;
        }
        c = p;
    }
    if (!p) {
        TRACK_TO(ctx, WFM__TRACK_FAULT, src, NULL, NULL, &exc);
        fault_instance(ctx, src, exc, true);
        return;
    }
    wf_value_release(&exc);
    if (c == src) {
        abort_children(ctx, src);
        drop_waits(ctx, src);
        src->status = WFM_FAULTED;
        push_ai_front(ctx, WFM__WI_DONE, src);
        return;
    }
    wfm_ai *between = src->parent;
    abort_children(ctx, src);
    unlink_child(src);
    ai_free(ctx, src);
    c->flags |= WFM__AI_FAULT_DONE;
    cancel_ai(ctx, c);
    /* The activities the fault passed through are canceled even where a parent's cancel
     * callback does not reach them (a TryCatch lets its Finally run on): having lost the
     * aborted child, they could otherwise wait for it forever. */
    wfm_ai *bereaved = between; /* the aborted source's parent */
    for (; between && between != c; between = between->parent)
        cancel_ai(ctx, between);
    /* It never hears of that child again: if nothing else can wake it (no children, no
     * bookmarks, no timers), it completes now, as WF4 completes an instance that has no
     * pending work (a kind counting its own children would otherwise wait forever). */
    if (ai_live(bereaved) && !bereaved->child_count && !bereaved->bookmarks &&
        !bereaved->timer_count) {
        bereaved->flags |= WFM__AI_MARK_CANCEL;
        close_ai(ctx, bereaved);
    }
}

void wfm_ctx_terminate(wfm_ctx *ctx, wfm_ai *ai, wf_value exc)
{
    if (ctx->terminating || is_final(ctx->state)) {
        wf_value_release(&exc);
        return;
    }
    wf_value_release(&ctx->fault);
    ctx->fault = exc;
    ctx->fault_loc = ai ? wfm_node_loc(ai->node) : WF_LOC_NONE;
    ctx->terminating = true;
}

void wfm__sched_terminate(wfm_ctx *ctx, wf_value exc)
{
    if (is_final(ctx->state)) {
        wf_value_release(&exc);
        return;
    }
    wfm_ctx_terminate(ctx, NULL, exc);
    finalize(ctx);
}

static void fail_nomem(wfm_ctx *ctx)
{
    wf_value_release(&ctx->fault);
    ctx->faulted = true;
    ctx->fault_loc = WF_LOC_NONE;
    ctx->terminating = false; /* out of memory wins over a termination under way */
    /* Without memory there may be no exception value: the host reports "out of memory". */
    finalize(ctx);
}

/* ---- the run loop --------------------------------------------------------------------- */

#define STEP_LIMIT_FMT                                                                             \
    "the workflow ran %llu work items without waiting for anything (a loop that never goes "       \
    "idle, e.g. a While whose condition stays true?)"

/* host.max_steps work items ran and more are queued: end the instance as Terminated. */
static void step_limit(wfm_ctx *ctx)
{
    char msg[256];
    snprintf(msg, sizeof msg, STEP_LIMIT_FMT, (unsigned long long)ctx->host.max_steps);
    wf_value exc;
    if (wf_value_exception(&wf_exc_workflow_terminated, msg, &exc) != WF_OK) {
        ctx->nomem = true;
        return;
    }
    ctx->step_limit_hit = true;
    wfm_ctx_terminate(ctx, NULL, exc);
    ctx->fault_loc = ctx->def->root ? wfm_node_loc(ctx->def->root) : WF_LOC_NONE;
}

uint64_t wfm_ctx_steps_left(const wfm_ctx *ctx)
{
    if (!ctx->host.max_steps)
        return 0;
    return ctx->steps < ctx->host.max_steps ? ctx->host.max_steps - ctx->steps : 1;
}

void wfm_ctx_steps_exhausted(wfm_ctx *ctx)
{
    if (!ctx->host.max_steps || ctx->step_limit_hit || is_final(ctx->state))
        return;
    ctx->steps = ctx->host.max_steps;
    step_limit(ctx);
}

wf_status wfm__sched_step_limit_error(const wfm_ctx *ctx, wf_error *err)
{
    wf_loc at = ctx->def->root ? wfm_node_loc(ctx->def->root) : WF_LOC_NONE;
    return wf_error_set(err, WF_E_LIMIT, &at, STEP_LIMIT_FMT,
                        (unsigned long long)ctx->host.max_steps);
}

static void dispatch(wfm_ctx *ctx, wfm__wi *wi)
{
    if (wi->ai && wi->ai->serial != wi->serial) {
        wf_value_release(&wi->value); /* its activity was freed meanwhile */
        return;
    }
    switch (wi->kind) {
    case WFM__WI_EXECUTE:
        run_execute(ctx, wi->ai);
        break;
    case WFM__WI_DONE:
        deliver_done(ctx, wi->ai);
        break;
    case WFM__WI_RESUME:
        if (ai_live(wi->ai))
            wi->fn(ctx, wi->ai, &wi->value);
        wf_value_release(&wi->value);
        break;
    case WFM__WI_FAULT:
        process_fault(ctx, wi->ai, wi->value);
        break;
    case WFM__WI_ROOT_DONE:
        root_done(ctx, wi->ai);
        break;
    }
}

wfm__sched_state wfm__sched_run(wfm_ctx *ctx, size_t budget)
{
    if (is_final(ctx->state) || ctx->state == WFM__SCHED_NEW)
        return ctx->state;
    fire_due_timers(ctx);
    ctx->run_items = 0; /* inline leaves count their items here too */
    ctx->run_budget = budget;
    ctx->in_run = true;
    while (queued(ctx) && !is_final(ctx->state)) {
        if (ctx->nomem || ctx->terminating || (budget && ctx->run_items >= budget))
            break;
        wfm__wi wi;
        take_front(ctx, &wi);
        ctx->run_items++;
        dispatch(ctx, &wi);
        if (!queued(ctx))
            fire_due_timers(ctx);
        if (++ctx->steps == ctx->host.max_steps && queued(ctx) && !is_final(ctx->state))
            step_limit(ctx);
    }
    if (ctx->top_set)
        spill_top(ctx);
    ctx->in_run = false;
    ctx->n_work_items += ctx->run_items;
    if (ctx->nomem && !is_final(ctx->state))
        fail_nomem(ctx);
    else if (ctx->terminating && !is_final(ctx->state))
        finalize(ctx);
    if (!is_final(ctx->state))
        set_state(ctx, ctx->count ? WFM__SCHED_RUNNING : WFM__SCHED_IDLE);
    if (ctx->state == WFM__SCHED_IDLE)
        ctx->steps = 0; /* the limit counts work done without waiting */
    return ctx->state;
}

/* ---- instance setup ------------------------------------------------------------------- */

wf_status wfm__sched_init(wfm_ctx *ctx, const wfm_definition *def, const wfm__sched_host *host,
                          wf_error *err)
{
    ctx->def = def;
    ctx->host = *host;
    ctx->fault = wf_null();
    assert(ctx->state == WFM__SCHED_NEW); /* zeroed by the caller or by wfm__sched_recycle */
    ctx->steps = 0;
    ctx->step_limit_hit = false;
    uint32_t n = def->arg_count;
    if (n > ctx->root_cap) { /* E0's slots and the `supplied` flags share one block */
        void *block = wf_malloc(n * (sizeof(wf_value) + sizeof(bool)));
        if (!block)
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        wf_free(ctx->root_env.slots);
        ctx->root_env.slots = block;
        ctx->root_cap = n;
    }
    ctx->supplied = (bool *)(ctx->root_env.slots + ctx->root_cap);
    ctx->root_env.count = n;
    for (uint32_t i = 0; i < n; i++) {
        ctx->root_env.slots[i] = wf_type_default(def->args[i].type);
        ctx->supplied[i] = false;
    }
    return WF_OK;
}

void wfm__sched_set_arg(wfm_ctx *ctx, size_t index, const wf_value *value)
{
    wf_value_set(&ctx->root_env.slots[index], value);
    ctx->supplied[index] = true;
}

wf_status wfm__sched_start(wfm_ctx *ctx)
{
    if (ctx->state != WFM__SCHED_NEW)
        return WF_E_STATE;
    const wfm_definition *def = ctx->def;
    for (uint32_t i = 0; i < def->arg_count; i++) {
        const wfm__arg *a = &def->args[i];
        if (ctx->supplied[i] || !a->has_default || a->dir == WFM_PROP_OUT)
            continue;
        wf_value v = wf_null(), exc = wf_null();
        wf_status st = a->expr ? wfm_expr_eval(a->expr, &ctx->root_env, &v, &exc) : WF_OK;
        if (st != WF_OK) {
            ctx->fault = exc;
            ctx->fault_loc = a->loc;
            ctx->faulted = true;
            set_state(ctx, WFM__SCHED_FAULTED);
            return st == WF_E_FAULT ? WF_OK : st;
        }
        if (!a->expr)
            v = wf_value_retain(&a->literal);
        wf_value_release(&ctx->root_env.slots[i]);
        ctx->root_env.slots[i] = v;
    }
    ctx->root = ai_new(ctx, def->root, NULL, &ctx->root_env);
    if (!ctx->root)
        return WF_E_NOMEM;
    push_ai_front(ctx, WFM__WI_EXECUTE, ctx->root);
    if (ctx->nomem)
        return WF_E_NOMEM;
    set_state(ctx, WFM__SCHED_RUNNING);
    return WF_OK;
}

/* Release what one run of an instance holds: activities, queued work, extension states and
 * values. Pools, the ring and other buffers stay for reuse. */
static void release_run(wfm_ctx *ctx)
{
    if (ctx->root) {
        abort_children(ctx, ctx->root);
        ai_free(ctx, ctx->root);
        ctx->root = NULL;
    }
    clear_queue(ctx);
    for (size_t i = 0; i < ctx->ext_count; i++) {
        if (ctx->exts[i].fini)
            ctx->exts[i].fini(ctx->exts[i].state);
        wf_free(ctx->exts[i].state);
    }
    wf_free(ctx->exts);
    ctx->exts = NULL;
    ctx->ext_count = 0;
    for (uint32_t i = 0; i < ctx->root_env.count; i++)
        wf_value_release(&ctx->root_env.slots[i]);
    ctx->root_env.count = 0;
    if (ctx->fault.type) /* a zeroed ctx that never saw wfm__sched_init has no value here */
        wf_value_release(&ctx->fault);
}

/* Once a run's state is released every activity instance, bookmark, state block and
 * environment has gone back to its pool: a slot still in use is a leak of the scheduler's. */
static bool pools_empty(const wfm_ctx *ctx)
{
    if (wf_pool_in_use(ctx->ai_pool) || (ctx->bm_pool && wf_pool_in_use(ctx->bm_pool)))
        return false;
    for (int i = 0; i < WFM__STATE_CLASSES; i++) /* most classes never get a pool */
        if (ctx->state_pools[i] && wf_pool_in_use(ctx->state_pools[i]))
            return false;
    for (int i = 0; i < WFM__ENV_CLASSES; i++)
        if (ctx->env_pools[i] && wf_pool_in_use(ctx->env_pools[i]))
            return false;
    return true;
}

bool wfm__sched_recycle(wfm_ctx *ctx)
{
    if (ctx->nomem || ctx->next_serial > WFM__RECYCLE_MAX_ACTIVITIES)
        return false;
    release_run(ctx);
    assert(pools_empty(ctx));
    /* The buffers and pools lead the struct and stay in place; def and host are set by the
     * next wfm__sched_init; the run's state is zeroed (E0's slots block kept). */
    wf_value *root_slots = ctx->root_env.slots;
    size_t run_at = offsetof(wfm_ctx, state);
    memset((char *)ctx + run_at, 0, sizeof *ctx - run_at);
    ctx->def = NULL;
    ctx->fault = wf_null();
    ctx->root_env.slots = root_slots;
    return true;
}

void wfm__sched_fini(wfm_ctx *ctx)
{
    release_run(ctx);
    assert(pools_empty(ctx));
    wf_free(ctx->ring);
    wf_free(ctx->hooks);
    wf_free(ctx->timers);
    wf_strmap_destroy(ctx->bookmark_map);
    wf_pool_destroy(ctx->bm_pool);
    wf_pool_destroy(ctx->ai_pool);
    for (int i = 0; i < WFM__STATE_CLASSES; i++)
        wf_pool_destroy(ctx->state_pools[i]);
    wf_free(ctx->root_env.slots);
    for (int i = 0; i < WFM__ENV_CLASSES; i++)
        wf_pool_destroy(ctx->env_pools[i]);
}

/* ---- the rest of the activity API ----------------------------------------------------- */

const wfm_node *wfm_ai_node(const wfm_ai *ai)
{
    return ai->node;
}

void *wfm_ai_state(wfm_ai *ai)
{
    return ai->state;
}

const void *wfm_ai_state_const(const wfm_ai *ai)
{
    return ai->state;
}

const wfm_env *wfm_ai_env(const wfm_ai *ai)
{
    return ai->env;
}

wfm_status wfm_ai_status(const wfm_ai *ai)
{
    return (wfm_status)ai->status;
}

bool wfm_ai_cancel_requested(const wfm_ai *ai)
{
    return (ai->flags & WFM__AI_CANCEL_REQ) != 0;
}

wfm_ai *wfm_ai_parent(const wfm_ai *ai)
{
    return ai->parent;
}

size_t wfm_ai_running_children(const wfm_ai *ai)
{
    return ai->child_count;
}

wfm_ai *wfm_ai_first_child(const wfm_ai *ai)
{
    return ai->first_child;
}

wfm_ai *wfm_ai_next_sibling(const wfm_ai *child)
{
    return child->next;
}

int64_t wfm_ctx_now_us(const wfm_ctx *ctx)
{
    return ctx->host.clock(ctx->host.clock_ud);
}

void *wfm_ctx_ext(wfm_ctx *ctx, const void *key, size_t size, void (*fini)(void *state))
{
    void *found = wfm_ctx_ext_find(ctx, key);
    if (found)
        return found;
    wfm__ext *exts = wf_realloc(ctx->exts, (ctx->ext_count + 1) * sizeof *exts);
    if (!exts)
        return NULL;
    ctx->exts = exts;
    void *state = wf_calloc(1, size ? size : 1);
    if (!state)
        return NULL;
    exts[ctx->ext_count++] = (wfm__ext){key, state, fini};
    return state;
}

void *wfm_ctx_ext_find(const wfm_ctx *ctx, const void *key)
{
    for (size_t i = 0; i < ctx->ext_count; i++)
        if (ctx->exts[i].key == key)
            return ctx->exts[i].state;
    return NULL;
}

wf_status wfm_ctx_on_finish(wfm_ctx *ctx, wfm_finish_fn fn, void *data)
{
    if (ctx->hook_count == ctx->hook_cap) {
        size_t cap = ctx->hook_cap ? ctx->hook_cap * 2 : 4;
        wfm__finish_hook *h = wf_realloc(ctx->hooks, cap * sizeof *h);
        if (!h)
            return WF_E_NOMEM;
        ctx->hooks = h;
        ctx->hook_cap = cap;
    }
    ctx->hooks[ctx->hook_count++] = (wfm__finish_hook){fn, data};
    return WF_OK;
}

void wfm_ctx_write(wfm_ctx *ctx, const char *text, size_t len)
{
    ctx->host.write(ctx->host.write_ud, text, len);
}

wf_types *wfm_ctx_types(const wfm_ctx *ctx)
{
    return ctx->host.types;
}

bool wfm_ctx_tracks_custom(const wfm_ctx *ctx)
{
    return (ctx->host.track_mask & (1u << WFM__TRACK_CUSTOM)) != 0;
}

void wfm_ctx_track_custom(wfm_ctx *ctx, wfm_ai *ai, const char *name, const wf_value *data)
{
    TRACK(ctx, WFM__TRACK_CUSTOM, ai, name, data);
}

bool wfm_ctx_traces_calls(const wfm_ctx *ctx)
{
    return ctx->host.trace != NULL;
}

void wfm_ctx_trace_call(wfm_ctx *ctx, wfm_ai *ai, const char *function, const wf_value *in,
                        size_t in_count, const wf_value *out, size_t out_count)
{
    if (ctx->host.trace)
        ctx->host.trace(ctx->host.trace_ud, ai, function, in, in_count, out, out_count, false);
}

void wfm_ctx_trace_call_split(wfm_ctx *ctx, wfm_ai *ai, const char *function, const wf_value *in,
                              size_t in_count, const wf_value *out, size_t out_count)
{
    if (ctx->host.trace)
        ctx->host.trace(ctx->host.trace_ud, ai, function, in, in_count, out, out_count, true);
}

/* ---- persistence support (wfm_persist.c) ---------------------------------------------- */

wfm_ai *wfm__sched_ai_restore(wfm_ctx *ctx, const wfm_node *node, wfm_ai *parent)
{
    return ai_new(ctx, node, parent, NULL);
}

wf_value *wfm__sched_slots_alloc(wfm_ctx *ctx, uint32_t count)
{
    wf_value *slots = slots_alloc(ctx, count);
    if (slots)
        for (uint32_t i = 0; i < count; i++)
            slots[i] = wf_null();
    return slots;
}

bool wfm__sched_queue_restore(wfm_ctx *ctx, wfm__wi wi)
{
    push_back(ctx, wi);
    return !ctx->nomem;
}

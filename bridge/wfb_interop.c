/* wfb_interop.c — the Interop activity kind (wfb_interop.h): at load, the legacy type named
 * by ActivityType surfaces as arguments (WF4's Interop convention, docs/semantics.md §6) and a
 * small host definition for the legacy executor is built once per node; at run time each
 * execution creates a fresh legacy executor, copies In arguments into the legacy properties,
 * pulses it from the modern callbacks and maps its queues, timers, faults and outputs back
 * (docs/architecture.md "The bridge"). */
#include "wfb_interop.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "../legacy/wfl_typelib.h"
#include "wfb_interop_int.h"

enum { IO_ACTIVITY_TYPE, IO_ARGS };

static const wfm_prop_spec io_props[] = {
    {.name = "ActivityType", .kind = WFM_PROP_LITERAL, .type = "x:String",
     .flags = WFM_PROP_REQUIRED},
    {.name = "ActivityProperties", .kind = WFM_PROP_PARAMS},
};

/* ---- run time ----------------------------------------------------------------------------- */
/* Per activity instance. `ctx` is only valid inside a callback (the legacy clock and trace
 * read it during a pulse). Bookmarks: slot i holds the legacy queue behind resume callback i. */
typedef struct io_state {
    wfl_exec *ex;
    bool broken; /* a pulse failed (out of memory): the executor is not reused */
    bool persist_point; /* the pulse passed a legacy persistence point before the root closed */
    bool persisting;    /* the legacy root has finished: the Interop finishes after the save */
    wfm_ctx *ctx;
    wfm_ai *ai;
    int64_t now_us; /* INT64_MIN until the legacy side asks, within one callback */
    char *slots[WFB_IO_MAX_WAITS]; /* queue name per bookmark slot, NULL when free */
    size_t slots_used;
    int64_t *timers;               /* due times of the modern timers armed */
    size_t timer_count;
} io_state;

static int64_t io_clock(void *ud)
{
    io_state *st = ud;
    if (st->now_us == INT64_MIN && st->ctx)
        st->now_us = wfm_ctx_now_us(st->ctx); /* a system call: only for a Delay */
    return st->now_us;
}

/* A legacy status change as a modern custom tracking record named after the Interop
 * (WF4's InteropTrackingRecord), with the legacy activity's name, type, status and result. */
static void track_status(io_state *st, const wfl_trace_rec *rec)
{
    static const char *const keys[] = {"Activity", "Type", "Status", "Result"};
    const char *text[] = {rec->activity, rec->type, wfl_status_name(rec->status),
                          wfl_result_name(rec->result)};
    wf_value vals[4], data = wf_null();
    size_t n = 0;
    while (n < 4 && wf_value_cstring(text[n] ? text[n] : "", &vals[n]) == WF_OK)
        n++;
    if (n == 4 && wf_value_record(keys, vals, 4, &data) == WF_OK)
        wfm_ctx_track_custom(st->ctx, st->ai, wfm_node_display_name(wfm_ai_node(st->ai)), &data);
    wf_value_release(&data);
    for (size_t i = 0; i < n; i++)
        wf_value_release(&vals[i]);
}

static void io_trace(void *ud, const wfl_trace_rec *rec)
{
    io_state *st = ud;
    if (!st->ctx)
        return;
    if (rec->kind == WFL_TRACE_STATUS) {
        if (wfm_ctx_tracks_custom(st->ctx))
            track_status(st, rec);
        return;
    }
    /* the same In and Out values run-legacy --trace prints (a Return property is an Out) */
    wfm_ctx_trace_call_split(st->ctx, st->ai, rec->function, rec->in_values, rec->in_count,
                             rec->out_values, rec->out_count);
}

/* A legacy persistence point (TransactionScope or PersistOnClose activity closed; the root's
 * own close is not one: the Interop completes then anyway). */
static wf_status io_persist_point(void *ud, wfl_exec *ex, wf_error *err)
{
    (void)err;
    wfl_exec_state s = wfl_exec_state_get(ex);
    if (s == WFL_EXEC_IDLE || s == WFL_EXEC_CREATED)
        ((io_state *)ud)->persist_point = true;
    return WF_OK;
}

/* The legacy trace feeds the modern call trace and custom tracking records: without either
 * the legacy executor builds no trace records (15% of a hosted native call). `ctx` may be
 * NULL (restoring): then the trace stays on. */
static wfl_exec_opts io_exec_opts(io_state *st, const wfb_io_type *t, const wfm_ctx *ctx)
{
    wfl_exec_opts o = WFL_EXEC_OPTS_INIT;
    o.instance_id = t->instance_id; /* no random id (a getrandom call) per execution */
    bool traced = !ctx || wfm_ctx_traces_calls(ctx) || wfm_ctx_tracks_custom(ctx);
    o.trace = traced ? io_trace : NULL;
    o.trace_ud = st;
    o.clock = io_clock;
    o.clock_ud = st;
    o.no_checkpoints = true; /* WF4's Interop takes no checkpoint (docs/semantics.md §6) */
    o.persist = io_persist_point;
    o.persist_ud = st;
    o.max_work_items = ctx ? wfm_ctx_steps_left(ctx) : 0; /* the instance's limit goes on */
    o.skip_native = ctx && wfm_ctx_replaying(ctx);        /* migrate-instances' replay */
    return o;
}

static void io_enter(io_state *st, wfm_ctx *ctx, wfm_ai *ai)
{
    st->ctx = ctx;
    st->ai = ai;
    st->now_us = INT64_MIN;
    if (st->ex) /* what is left of the instance's step limit bounds this pulse */
        wfl_exec_set_max_work_items(st->ex, wfm_ctx_steps_left(ctx));
}

/* The executor back to the node's spare (or destroyed when there is one already). */
static void io_release(io_state *st, wfb_io_type *t)
{
    wfl_exec *expected = NULL;
    if (st->broken || !st->ex || !atomic_compare_exchange_strong(&t->spare, &expected, st->ex))
        wfl_exec_destroy(st->ex);
    st->ex = NULL;
    st->broken = false;
    for (size_t i = 0; st->slots_used && i < WFB_IO_MAX_WAITS; i++) {
        st->slots_used -= st->slots[i] != NULL;
        wf_free(st->slots[i]);
        st->slots[i] = NULL;
    }
    wf_free(st->timers);
    st->timers = NULL;
    st->timer_count = 0;
}

static void io_fini(wfm_ai *ai)
{
    io_release(wfm_ai_state(ai), wfm_node_data(wfm_ai_node(ai)));
}

/* A host-level failure of a pulse (not a workflow fault). */
static void io_fail(wfm_ctx *ctx, wfm_ai *ai, const wf_error *e)
{
    ((io_state *)wfm_ai_state(ai))->broken = true;
    if (e->code == WF_E_NOMEM)
        wfm_ctx_nomem(ctx);
    else if (e->code == WF_E_LIMIT) /* the hosted engine used up the instance's step limit */
        wfm_ctx_steps_exhausted(ctx);
    else
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "Interop: %s", e->message);
}

static void io_on_resume(wfm_ctx *ctx, wfm_ai *ai, size_t slot, const wf_value *payload);
static void io_on_timer(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload);
static void io_on_persisted(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload);

#define IO_SLOT_FN(i)                                                                              \
    static void io_resume_##i(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)                  \
    {                                                                                              \
        io_on_resume(ctx, ai, i, payload);                                                         \
    }
IO_SLOT_FN(0) IO_SLOT_FN(1) IO_SLOT_FN(2) IO_SLOT_FN(3) IO_SLOT_FN(4) IO_SLOT_FN(5)
IO_SLOT_FN(6) IO_SLOT_FN(7) IO_SLOT_FN(8) IO_SLOT_FN(9) IO_SLOT_FN(10) IO_SLOT_FN(11)
IO_SLOT_FN(12) IO_SLOT_FN(13) IO_SLOT_FN(14) IO_SLOT_FN(15)

static const wfm_resume_fn io_slot_fns[WFB_IO_MAX_WAITS] = {
    io_resume_0,  io_resume_1,  io_resume_2,  io_resume_3, io_resume_4,  io_resume_5,
    io_resume_6,  io_resume_7,  io_resume_8,  io_resume_9, io_resume_10, io_resume_11,
    io_resume_12, io_resume_13, io_resume_14, io_resume_15,
};

/* Queues -> bookmarks: remove the bookmarks of queues nobody waits on any more, add one per
 * new queue, named exactly like the queue. */
static bool sync_bookmarks(wfm_ctx *ctx, wfm_ai *ai, io_state *st)
{
    size_t n = wfl_exec_queue_count(st->ex);
    for (size_t s = 0; s < WFB_IO_MAX_WAITS; s++) {
        if (!st->slots[s])
            continue;
        bool live = false;
        for (size_t q = 0; q < n && !live; q++)
            live = !wfl_exec_queue_is_timer(st->ex, q) &&
                   strcmp(wfl_exec_queue_name(st->ex, q), st->slots[s]) == 0;
        if (!live) {
            wfm_ctx_bookmark_remove(ctx, ai, st->slots[s]);
            wf_free(st->slots[s]);
            st->slots[s] = NULL;
            st->slots_used--;
        }
    }
    for (size_t q = 0; q < n; q++) {
        const char *name = wfl_exec_queue_name(st->ex, q);
        bool have = wfl_exec_queue_is_timer(st->ex, q);
        size_t free_slot = SIZE_MAX;
        for (size_t s = 0; s < WFB_IO_MAX_WAITS && !have; s++) {
            if (st->slots[s] && strcmp(st->slots[s], name) == 0)
                have = true;
            else if (!st->slots[s] && free_slot == SIZE_MAX)
                free_slot = s;
        }
        if (have)
            continue;
        if (free_slot == SIZE_MAX) {
            wfm_ctx_throw(ctx, ai, &wf_exc_not_supported,
                          "Interop: the legacy activity waits on more than %d queues at once",
                          WFB_IO_MAX_WAITS);
            return false;
        }
        st->slots[free_slot] = wf_strdup(name);
        if (!st->slots[free_slot]) {
            wfm_ctx_nomem(ctx);
            return false;
        }
        st->slots_used++;
        wf_status rc = wfm_ctx_bookmark(ctx, ai, name, WFM_BOOKMARK_MULTIPLE,
                                        io_slot_fns[free_slot]);
        if (rc != WF_OK) {
            if (rc == WF_E_NOMEM)
                wfm_ctx_nomem(ctx);
            else /* bookmark names are unique per instance (samples/mixed/README.md) */
                wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                              "Interop '%s': another activity of this instance already waits "
                              "on '%s' (two Interops cannot wait on one legacy queue at once)",
                              wfm_node_display_name(wfm_ai_node(ai)), name);
            return false;
        }
    }
    return true;
}

/* The legacy executor's earliest timer -> a modern durable timer (once per due time). */
static bool sync_timer(wfm_ctx *ctx, wfm_ai *ai, io_state *st)
{
    int64_t due;
    if (!wfl_exec_next_timer(st->ex, &due))
        return true;
    for (size_t i = 0; i < st->timer_count; i++)
        if (st->timers[i] == due)
            return true;
    int64_t *t = wf_realloc(st->timers, (st->timer_count + 1) * sizeof *t);
    if (!t) {
        wfm_ctx_nomem(ctx);
        return false;
    }
    st->timers = t;
    st->timers[st->timer_count++] = due;
    if (wfm_ctx_timer(ctx, ai, due, io_on_timer) != WF_OK) {
        wfm_ctx_nomem(ctx);
        return false;
    }
    return true;
}

/* What went into a composite's In property: its In argument's value, or the default. */
static wf_status echo_input(wfm_ctx *ctx, wfm_ai *ai, const wfb_io_arg *a, wf_value *out)
{
    if (a->echo_param != SIZE_MAX)
        return wfm_ctx_get_param(ctx, ai, IO_ARGS, a->echo_param, out) == WF_OK ? WF_OK
                                                                               : WF_E_FAULT;
    const wfl_tl_prop *p = a->echo_of;
    *out = p->has_default ? wf_value_retain(&p->default_value) : wf_type_default(p->type);
    return WF_OK;
}

/* Out arguments back from the legacy properties (WF4: also when the root faults/cancels). */
static bool copy_outputs(wfm_ctx *ctx, wfm_ai *ai, io_state *st, const wfb_io_type *t)
{
    for (size_t i = 0; i < t->arg_count; i++) {
        const wfb_io_arg *a = &t->args[i];
        if (a->dir != WFM_PROP_OUT)
            continue;
        wf_value v = wf_null();
        wf_error e; /* per call: cleared, not zero-filled (780 bytes) */
        wf_error_clear(&e);
        wf_status rc;
        if (a->echo_of)
            rc = echo_input(ctx, ai, a, &v);
        else
            rc = a->output != SIZE_MAX ? wfl_exec_output_value(st->ex, a->output, &v, &e)
                                       : wfl_exec_output(st->ex, a->prop, &v, &e);
        if (rc == WF_E_FAULT)
            return false; /* the runtime has faulted ai */
        if (rc != WF_OK) {
            io_fail(ctx, ai, &e);
            return false;
        }
        rc = wfm_ctx_set_param(ctx, ai, IO_ARGS, a->param, &v);
        wf_value_release(&v);
        if (rc != WF_OK)
            return false;
    }
    return true;
}

/* A legacy persistence point under a durable host persists the modern instance (inside a
 * modern no-persist zone it is skipped). When the legacy root has finished meanwhile, the
 * Interop finishes only after the save (io_on_persisted): true then. */
static bool persist_point(wfm_ctx *ctx, wfm_ai *ai, io_state *st, wfl_exec_state state)
{
    st->persist_point = false;
    bool requested = false;
    wf_status rc = wfm_ctx_request_persist(ctx, ai, io_on_persisted, &requested);
    if (rc == WF_E_NOMEM) {
        wfm_ctx_nomem(ctx);
        return true;
    }
    if (!requested || state == WFL_EXEC_IDLE)
        return false;
    st->persisting = true;
    return true;
}

/* After every pulse: wait, or finish the way the legacy root finished. */
static void after_pulse(wfm_ctx *ctx, wfm_ai *ai, io_state *st, wfl_exec_state state)
{
    wfb_io_type *t = wfm_node_data(wfm_ai_node(ai));
    if (st->persist_point && persist_point(ctx, ai, st, state))
        return;
    if (state == WFL_EXEC_IDLE) {
        if (sync_bookmarks(ctx, ai, st))
            sync_timer(ctx, ai, st);
        return;
    }
    if (!copy_outputs(ctx, ai, st, t))
        return;
    wf_value exc = wf_null();
    switch (state) {
    case WFL_EXEC_CLOSED:
        break;
    case WFL_EXEC_CANCELED:
        wfm_ctx_mark_canceled(ctx, ai);
        break;
    case WFL_EXEC_FAULTED:
    case WFL_EXEC_TERMINATED:
        exc = wf_value_retain(wfl_exec_exception(st->ex));
        if (wf_is_null(&exc)) { /* the executor always has one; never end a fault as Closed */
            io_release(st, t);
            wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                          "Interop: the legacy activity '%s' %s", t->type_name,
                          state == WFL_EXEC_FAULTED ? "faulted" : "terminated");
            return;
        }
        break;
    default: /* SuspendActivity: WF4's Interop does not support it either */
        io_release(st, t);
        wfm_ctx_throw(ctx, ai, &wf_exc_not_supported,
                      "Interop: the legacy activity '%s' suspended (not supported)", t->type_name);
        return;
    }
    io_release(st, t);
    if (!wf_is_null(&exc)) {
        wfm_ctx_fault(ctx, ai, exc);
        return;
    }
    wfm_ctx_complete(ctx, ai);
}

/* A replay (migrate-instances) that knows the values inside the legacy composite this
 * activity hosts writes them into the hosted body once it waits: what the legacy body had
 * computed there (through native calls the replay skips) goes on from there. */
static void io_replay_values(wfm_ctx *ctx, wfm_ai *ai, io_state *st, const wfb_io_type *t)
{
    wfm_replay_values rv;
    if (wfl_exec_state_get(st->ex) != WFL_EXEC_IDLE || !wfm_ctx_replay_values(ctx, ai, &rv))
        return;
    /* the composite itself (in a generated wrapper: the activity of the same name) */
    const char *name = t->subtree ? t->subtree : wfm_node_display_name(wfm_ai_node(ai));
    wfl_exec *body = wfl_exec_hosted(st->ex, name);
    if (!body && !t->subtree)
        body = st->ex;
    wf_error e = WF_ERROR_INIT;
    for (size_t i = 0; body && i < rv.count; i++)
        wfl_exec_put(body, rv.names[i], &rv.values[i], &e); /* one it lacks stays as it is */
}

static void io_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    io_state *st = wfm_ai_state(ai);
    wfb_io_type *t = wfm_node_data(wfm_ai_node(ai));
    io_enter(st, ctx, ai);
    wf_error e; /* per call: cleared, not zero-filled (780 bytes) */
    wf_error_clear(&e);
    wfl_exec_opts o = io_exec_opts(st, t, ctx);
    assert(st->ex == NULL); /* one executor per execution, taken here and dropped at the end */
    st->ex = atomic_exchange(&t->spare, NULL);
    if (st->ex) {
        wfl_exec_reset(st->ex, &o);
    } else if (wfl_exec_create(t->def, t->subtree, &o, &st->ex, &e) != WF_OK) {
        io_fail(ctx, ai, &e);
        return;
    }
    for (size_t i = 0; i < t->arg_count; i++) {
        const wfb_io_arg *a = &t->args[i];
        if (a->dir != WFM_PROP_IN)
            continue;
        wf_value v = wf_null();
        if (wfm_ctx_get_param(ctx, ai, IO_ARGS, a->param, &v) != WF_OK)
            return; /* the runtime has faulted ai */
        wf_status rc = a->output != SIZE_MAX ? wfl_exec_set_input_at(st->ex, a->output, &v, &e)
                                             : wfl_exec_set_input(st->ex, a->prop, &v, &e);
        wf_value_release(&v);
        if (rc != WF_OK) {
            io_fail(ctx, ai, &e);
            return;
        }
    }
    wfl_exec_state state;
    if (wfl_exec_run(st->ex, &state, &e) != WF_OK) {
        io_fail(ctx, ai, &e);
        return;
    }
    if (wfm_ctx_replaying(ctx))
        io_replay_values(ctx, ai, st, t);
    after_pulse(ctx, ai, st, state);
}

static void io_on_resume(wfm_ctx *ctx, wfm_ai *ai, size_t slot, const wf_value *payload)
{
    io_state *st = wfm_ai_state(ai);
    if (!st->ex || !st->slots[slot])
        return;
    io_enter(st, ctx, ai);
    wf_error e; /* per call: cleared, not zero-filled (780 bytes) */
    wf_error_clear(&e);
    wfl_exec_state state;
    if (wfl_exec_deliver(st->ex, st->slots[slot], payload, &state, &e) != WF_OK) {
        io_fail(ctx, ai, &e);
        return;
    }
    after_pulse(ctx, ai, st, state);
}

static void io_on_timer(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)
{
    (void)payload;
    io_state *st = wfm_ai_state(ai);
    if (!st->ex)
        return;
    io_enter(st, ctx, ai);
    st->now_us = wfm_ctx_now_us(ctx);
    size_t kept = 0;
    for (size_t i = 0; i < st->timer_count; i++)
        if (st->timers[i] > st->now_us)
            st->timers[kept++] = st->timers[i];
    st->timer_count = kept;
    wf_error e; /* per call: cleared, not zero-filled (780 bytes) */
    wf_error_clear(&e);
    wfl_exec_state state;
    if (wfl_exec_fire_timers(st->ex, st->now_us, &state, &e) != WF_OK) {
        io_fail(ctx, ai, &e);
        return;
    }
    after_pulse(ctx, ai, st, state);
}

/* The durable host saved the instance after a legacy persistence point. */
static void io_on_persisted(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)
{
    (void)payload;
    io_state *st = wfm_ai_state(ai);
    if (!st->ex || !st->persisting)
        return; /* the legacy side waits on: nothing to do */
    io_enter(st, ctx, ai);
    st->persisting = false;
    after_pulse(ctx, ai, st, wfl_exec_state_get(st->ex));
}

/* Modern cancellation (Pick's losing branch, CancellationScope, ...): cancel the legacy root
 * so its cancellation handlers run; the Interop closes Canceled when the root has. */
static void io_cancel(wfm_ctx *ctx, wfm_ai *ai)
{
    io_state *st = wfm_ai_state(ai);
    if (!st->ex) {
        wfm_ctx_mark_canceled(ctx, ai);
        wfm_ctx_complete(ctx, ai);
        return;
    }
    io_enter(st, ctx, ai);
    if (st->persisting) { /* the legacy root has finished already: finish as it did */
        st->persisting = false;
        after_pulse(ctx, ai, st, wfl_exec_state_get(st->ex));
        return;
    }
    wf_error e = WF_ERROR_INIT;
    wfl_exec_state state;
    if (wfl_exec_cancel(st->ex, &state, &e) != WF_OK) {
        io_fail(ctx, ai, &e);
        return;
    }
    after_pulse(ctx, ai, st, state);
}

/* ---- persistence: the legacy blob inside the modern instance state ------------------------ */
enum { IO_STATE_VERSION = 2 }; /* 2: the persisting flag */

static wf_status io_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    const io_state *st = wfm_ai_state_const(ai);
    wfm_persist_write_uint(w, IO_STATE_VERSION);
    wfm_persist_write_uint(w, st->ex != NULL);
    if (!st->ex)
        return WF_OK;
    void *blob = NULL;
    size_t len = 0;
    wf_error e = WF_ERROR_INIT;
    wf_status rc = wfl_exec_save(st->ex, &blob, &len, &e);
    if (rc != WF_OK) {
        wfm_persist_write_fail(w, "Interop: %s", e.message);
        return rc == WF_E_NOMEM ? rc : WF_OK;
    }
    wfm_persist_write_bytes(w, blob, len);
    wf_free(blob);
    for (size_t s = 0; s < WFB_IO_MAX_WAITS; s++)
        wfm_persist_write_str(w, st->slots[s]);
    wfm_persist_write_uint(w, st->timer_count);
    for (size_t i = 0; i < st->timer_count; i++)
        wfm_persist_write_int(w, st->timers[i]);
    wfm_persist_write_uint(w, st->persisting);
    return WF_OK;
}

static wf_status io_restore(wfm_ai *ai, wfm_persist_reader *r)
{
    io_state *st = wfm_ai_state(ai);
    const wfb_io_type *t = wfm_node_data(wfm_ai_node(ai));
    uint64_t version = wfm_persist_read_uint(r);
    if (version < 1 || version > IO_STATE_VERSION) {
        wfm_persist_read_fail(r, "Interop: unknown state version");
        return WF_OK;
    }
    if (!wfm_persist_read_uint(r))
        return WF_OK;
    size_t len = 0;
    const void *blob = wfm_persist_read_bytes(r, &len);
    if (!blob)
        return WF_OK;
    wf_error e = WF_ERROR_INIT;
    st->ai = ai;
    wfl_exec_opts o = io_exec_opts(st, t, NULL); /* the trace may be set after restore */
    wf_status rc = wfl_exec_restore(t->def, &o, blob, len, &st->ex, &e);
    if (rc != WF_OK) {
        wfm_persist_read_fail(r, "Interop: %s", e.message);
        return rc == WF_E_NOMEM ? rc : WF_OK;
    }
    for (size_t s = 0; s < WFB_IO_MAX_WAITS; s++) {
        st->slots[s] = wfm_persist_read_str(r);
        st->slots_used += st->slots[s] != NULL;
    }
    uint64_t n = wfm_persist_read_uint(r);
    if (n > 1024) {
        wfm_persist_read_fail(r, "Interop: %llu timers", (unsigned long long)n);
        return WF_OK;
    }
    if (n) {
        st->timers = wf_calloc((size_t)n, sizeof *st->timers);
        if (!st->timers)
            return WF_E_NOMEM;
        st->timer_count = (size_t)n;
        for (size_t i = 0; i < st->timer_count; i++)
            st->timers[i] = wfm_persist_read_int(r);
    }
    st->persisting = version >= 2 && wfm_persist_read_uint(r);
    return WF_OK;
}

/* Append only (the blob names callbacks by index). */
static const void *const io_callbacks[] = {
    (const void *)io_resume_0,  (const void *)io_resume_1,  (const void *)io_resume_2,
    (const void *)io_resume_3,  (const void *)io_resume_4,  (const void *)io_resume_5,
    (const void *)io_resume_6,  (const void *)io_resume_7,  (const void *)io_resume_8,
    (const void *)io_resume_9,  (const void *)io_resume_10, (const void *)io_resume_11,
    (const void *)io_resume_12, (const void *)io_resume_13, (const void *)io_resume_14,
    (const void *)io_resume_15, (const void *)io_on_timer,  (const void *)io_on_persisted,
};

/* A resumption of the legacy queue `bookmark` takes what `run-legacy --event` takes: the
 * payload bound to the event's parameters (docs/formats.md "Event payloads"). */
static wf_status io_check_resume(const wfm_ai *ai, const char *bookmark, const wf_value *payload,
                                 wf_error *err)
{
    const wfb_io_type *t = wfm_node_data(wfm_ai_node(ai));
    const wfl_tl_event *ev = NULL;
    if (!t || !wfl_definition_find_event(t->def, bookmark, &ev) || !ev)
        return WF_OK;
    wf_value bound = wf_null();
    wf_status st = wfl_tl_event_bind(ev, payload, &bound, err);
    wf_value_release(&bound);
    return st;
}

static const wfm_kind_spec io_spec = {
    .name = WFB_INTEROP_KIND,
    .category = "Activity",
    .flags = WFM_KIND_CAN_IDLE,
    .props = io_props,
    .prop_count = sizeof io_props / sizeof io_props[0],
    .state_size = sizeof(io_state),
    .execute = io_execute,
    .cancel = io_cancel,
    .fini = io_fini,
    .callbacks = io_callbacks,
    .callback_count = sizeof io_callbacks / sizeof io_callbacks[0],
    .save = io_save,
    .restore = io_restore,
    .prepare = wfb__io_prepare,
    .bind = wfb__io_bind,
    .check_resume = io_check_resume,
};

wf_status wfb_interop_register(wfm_catalogue *cat, wf_error *err)
{
    return wfm_catalogue_register(cat, &io_spec, err);
}

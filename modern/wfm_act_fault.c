/* wfm_act_fault.c — faults and cancellation: TryCatch (Catch<T>, Finally), Throw, Rethrow,
 * TerminateWorkflow and CancellationScope (docs/semantics.md §5). A TryCatch picks the most
 * specific Catch by exception type, never by declaration order; Finally runs after the Try or
 * the Catch, and an exception thrown by a Catch propagates only after Finally has run. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "wfm_activity.h"
#include "wfm_acts.h"
#include "wfm_ctx.h"
#include "wfm_node.h"
#include "wfm_persist.h"

static const wfm_kind_spec try_catch_spec, catch_spec;

static bool node_is(const wfm_node *node, const wfm_kind_spec *spec)
{
    return node && wfm_kind_spec_of(wfm_node_kind(node)) == spec;
}

/* ---- TryCatch ------------------------------------------------------------------------- */
/* Transition table of a TryCatch instance (phase, and the function that moves it):
 *   TRY     -> CATCH    tc_try_done (the Try faulted and tc_try_fault chose a Catch)
 *   TRY     -> FINALLY  tc_try_done (closed or canceled) via tc_finally
 *   CATCH   -> FINALLY  tc_catch_done (also after the Catch faulted: tc_catch_fault kept it)
 *   FINALLY -> done     tc_finally_done -> tc_finish (rethrows a kept exception, or closes,
 *                       as canceled when cancellation was requested and nothing was caught)
 * Cancellation reaches the Try only; Catch and Finally run to their end (as WF4), except a
 * Finally an exception left (tc_finally_fault): an outer handler's cancellation reaches it. */
enum { TC_TRY, TC_CATCHES, TC_FINALLY };
enum { CATCH_ACTION };

static const wfm_prop_spec try_catch_props[] = {
    {"Try", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"Catches", WFM_PROP_NODES, NULL, "Catch", 0, NULL},
    {"Finally", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
};
static const wfm_prop_spec catch_props[] = {
    {"Action", WFM_PROP_DELEGATE, "T", NULL, WFM_PROP_CONTENT, NULL},
};

typedef enum tc_phase { TC_PHASE_TRY, TC_PHASE_CATCH, TC_PHASE_FINALLY } tc_phase;

typedef struct tc_state {
    tc_phase phase;
    const wfm_node *handler; /* the Catch chosen for `caught` */
    wf_value caught;         /* owned: the exception being handled (Rethrow reads it) */
    wf_value pending;        /* owned: thrown by the Catch, rethrown after Finally */
    bool handled;            /* a Catch ran to completion */
    bool cancel_finally;     /* an exception left Finally: cancellation may reach it */
} tc_state;

/*
** The Catch for an exception of type `t`: the exact type if present, else the most derived
** catch type `t` is assignable to; NULL when none matches.
*/
static const wfm_node *tc_find_catch(const wfm_node *node, const wf_type *t)
{
    const wfm_node *best = NULL;
    int best_depth = -1;
    size_t n = wfm_node_count(node, TC_CATCHES);
    for (size_t i = 0; i < n; i++) {
        const wfm_node *c = wfm_node_at(node, TC_CATCHES, i);
        const wf_type *ct = wfm_node_type_arg(c);
        if (!ct || !wf_type_is_a(t, ct))
            continue;
        int depth = wf_type_depth(ct);
        if (depth > best_depth) {
            best = c;
            best_depth = depth;
        }
    }
    return best;
}

static void tc_finish(wfm_ctx *ctx, wfm_ai *ai)
{
    tc_state *st = wfm_ai_state(ai);
    if (!wf_is_null(&st->pending)) {
        wf_value exc = st->pending;
        st->pending = wf_null();
        wfm_ctx_fault(ctx, ai, exc);
        return;
    }
    if (wfm_ai_cancel_requested(ai) && !st->handled)
        wfm_ctx_mark_canceled(ctx, ai);
    wfm_ctx_complete(ctx, ai);
}

static void tc_finally_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    (void)child;
    tc_finish(ctx, ai);
}

/* An exception leaving Finally passes on; if someone above handles it, this TryCatch is
 * canceled and must then let the cancellation reach what is left of Finally (WF4). */
static bool tc_finally_fault(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child, const wf_value *exc)
{
    (void)ctx;
    (void)child;
    (void)exc;
    tc_state *st = wfm_ai_state(ai);
    st->cancel_finally = true;
    return false;
}

static void tc_finally(wfm_ctx *ctx, wfm_ai *ai)
{
    tc_state *st = wfm_ai_state(ai);
    st->phase = TC_PHASE_FINALLY;
    const wfm_node *fin = wfm_node_child(wfm_ai_node(ai), TC_FINALLY);
    if (fin)
        wfm_ctx_schedule(ctx, ai, fin, tc_finally_done, tc_finally_fault);
    else
        tc_finish(ctx, ai);
}

static bool tc_catch_fault(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child, const wf_value *exc)
{
    (void)ctx;
    (void)child;
    tc_state *st = wfm_ai_state(ai);
    wf_value_release(&st->pending);
    st->pending = wf_value_retain(exc);
    return true;
}

static void tc_catch_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    tc_state *st = wfm_ai_state(ai);
    st->handled = wfm_ai_status(child) == WFM_CLOSED;
    tc_finally(ctx, ai);
}

static bool tc_try_fault(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child, const wf_value *exc)
{
    (void)ctx;
    (void)child;
    tc_state *st = wfm_ai_state(ai);
    if (st->handler || exc->type->kind != WF_K_EXCEPTION)
        return false;
    const wfm_node *handler = tc_find_catch(wfm_ai_node(ai), exc->type);
    if (!handler)
        return false;
    st->handler = handler;
    st->caught = wf_value_retain(exc);
    return true;
}

static void tc_try_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    tc_state *st = wfm_ai_state(ai);
    if (wfm_ai_status(child) != WFM_FAULTED || !st->handler) {
        tc_finally(ctx, ai);
        return;
    }
    st->phase = TC_PHASE_CATCH;
    if (!wfm_node_child(st->handler, CATCH_ACTION)) {
        st->handled = true;
        tc_finally(ctx, ai);
        return;
    }
    wfm_ctx_schedule_delegate(ctx, ai, st->handler, CATCH_ACTION, &st->caught, tc_catch_done,
                              tc_catch_fault);
}

static void try_catch_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    tc_state *st = wfm_ai_state(ai);
    st->caught = wf_null();
    st->pending = wf_null();
    const wfm_node *body = wfm_node_child(wfm_ai_node(ai), TC_TRY);
    if (!body) {
        tc_finally(ctx, ai);
        return;
    }
    st->phase = TC_PHASE_TRY;
    wfm_ctx_schedule(ctx, ai, body, tc_try_done, tc_try_fault);
}

static void try_catch_cancel(wfm_ctx *ctx, wfm_ai *ai)
{
    tc_state *st = wfm_ai_state(ai);
    bool cancelable = st->phase == TC_PHASE_TRY || st->cancel_finally;
    if (cancelable && wfm_ai_running_children(ai) > 0)
        wfm_ctx_cancel_children(ctx, ai);
}

static void try_catch_fini(wfm_ai *ai)
{
    tc_state *st = wfm_ai_state(ai);
    if (st->caught.type)
        wf_value_release(&st->caught);
    if (st->pending.type)
        wf_value_release(&st->pending);
}

/*
** Load-time: every Catch names an exception type, and no type is caught twice.
*/
static wf_status try_catch_prepare(wfm_load *load, wfm_node *node)
{
    size_t n = wfm_node_count(node, TC_CATCHES);
    for (size_t i = 0; i < n; i++) {
        const wfm_node *c = wfm_node_at(node, TC_CATCHES, i);
        const wf_type *t = wfm_node_type_arg(c);
        if (!t || t->kind != WF_K_EXCEPTION) {
            wfm_load_error(load, c, WF_E_TYPE, "Catch needs an exception type, not %s",
                           t ? t->name : "none");
            continue;
        }
        for (size_t j = 0; j < i; j++)
            if (wfm_node_type_arg(wfm_node_at(node, TC_CATCHES, j)) == t) {
                wfm_load_error(load, c, WF_E_SCHEMA, "duplicate Catch for %s in TryCatch",
                               t->name);
                break;
            }
    }
    return WF_OK;
}

/* Persistence (wfm_persist.h "Persistence contract"): a version, then the fields. */
#define FAULT_STATE_VERSION 1u

static void write_value_or_null(wfm_persist_writer *w, const wf_value *v)
{
    wf_value none = wf_null();
    wfm_persist_write_value(w, v->type ? v : &none);
}

static wf_status try_catch_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    const tc_state *st = wfm_ai_state_const(ai);
    wfm_persist_write_uint(w, FAULT_STATE_VERSION);
    wfm_persist_write_uint(w, st->phase);
    wfm_persist_write_node(w, st->handler);
    write_value_or_null(w, &st->caught);
    write_value_or_null(w, &st->pending);
    wfm_persist_write_uint(w, (st->handled ? 1u : 0u) | (st->cancel_finally ? 2u : 0u));
    return WF_OK;
}

static wf_status try_catch_restore(wfm_ai *ai, wfm_persist_reader *r)
{
    tc_state *st = wfm_ai_state(ai);
    if (wfm_persist_read_uint(r) != FAULT_STATE_VERSION)
        wfm_persist_read_fail(r, "unknown TryCatch state version");
    uint64_t phase = wfm_persist_read_uint(r);
    st->phase = phase <= TC_PHASE_FINALLY ? (tc_phase)phase : TC_PHASE_TRY;
    st->handler = wfm_persist_read_node(r);
    st->caught = wfm_persist_read_value(r);
    st->pending = wfm_persist_read_value(r);
    uint64_t flags = wfm_persist_read_uint(r);
    st->handled = flags & 1u;
    st->cancel_finally = flags & 2u;
    if (phase > TC_PHASE_FINALLY || (st->handler && !node_is(st->handler, &catch_spec)) ||
        (phase == TC_PHASE_CATCH && !st->handler))
        wfm_persist_read_fail(r, "bad TryCatch state");
    return WF_OK;
}

/* Append only: saved instances name callbacks by their index here. */
static const void *const try_catch_callbacks[] = {
    (const void *)tc_try_done,   (const void *)tc_try_fault,     (const void *)tc_catch_done,
    (const void *)tc_catch_fault, (const void *)tc_finally_done, (const void *)tc_finally_fault,
};

static const wfm_kind_spec try_catch_spec = {
    .name = "TryCatch",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES,
    .props = try_catch_props,
    .prop_count = sizeof try_catch_props / sizeof try_catch_props[0],
    .state_size = sizeof(tc_state),
    .prepare = try_catch_prepare,
    .execute = try_catch_execute,
    .cancel = try_catch_cancel,
    .fini = try_catch_fini,
    .callbacks = try_catch_callbacks,
    .callback_count = sizeof try_catch_callbacks / sizeof try_catch_callbacks[0],
    .save = try_catch_save,
    .restore = try_catch_restore,
};
static const wfm_kind_spec catch_spec = {
    .name = "Catch",
    .category = "Catch",
    .flags = WFM_KIND_GENERIC,
    .props = catch_props,
    .prop_count = sizeof catch_props / sizeof catch_props[0],
    .content_prop = "Action",
};

/* ---- Throw, Rethrow ------------------------------------------------------------------- */
enum { THROW_EXCEPTION };
static const wfm_prop_spec throw_props[] = {
    {"Exception", WFM_PROP_IN, "s:Exception", NULL, WFM_PROP_REQUIRED, NULL},
};

static void throw_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value exc = wf_null();
    if (wfm_ctx_get(ctx, ai, THROW_EXCEPTION, &exc) != WF_OK)
        return;
    if (exc.type->kind != WF_K_EXCEPTION) {
        wf_value_release(&exc);
        wfm_ctx_throw(ctx, ai, &wf_exc_null_reference, "Throw: the Exception is null");
        return;
    }
    wfm_ctx_fault(ctx, ai, exc);
}

static void rethrow_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    for (wfm_ai *p = wfm_ai_parent(ai); p; p = wfm_ai_parent(p)) {
        if (!node_is(wfm_ai_node(p), &try_catch_spec))
            continue;
        tc_state *st = wfm_ai_state(p);
        if (st->phase == TC_PHASE_CATCH) {
            wfm_ctx_fault(ctx, ai, wf_value_retain(&st->caught));
            return;
        }
    }
    wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "Rethrow ran outside a Catch");
}

/*
** Load-time: Rethrow is only legal somewhere inside a Catch's action.
*/
static wf_status rethrow_prepare(wfm_load *load, wfm_node *node)
{
    for (const wfm_node *p = wfm_node_parent(node); p; p = wfm_node_parent(p))
        if (node_is(p, &catch_spec))
            return WF_OK;
    wfm_load_error(load, node, WF_E_SCHEMA, "Rethrow is only allowed inside a Catch");
    return WF_OK;
}

static const wfm_kind_spec throw_spec = {
    .name = "Throw",
    .category = "Activity",
    .content_prop = "Exception", /* WF4's [ContentProperty] */
    .props = throw_props,
    .prop_count = sizeof throw_props / sizeof throw_props[0],
    .execute = throw_execute,
};
static const wfm_kind_spec rethrow_spec = {
    .name = "Rethrow",
    .category = "Activity",
    .prepare = rethrow_prepare,
    .execute = rethrow_execute,
};

/* ---- TerminateWorkflow ---------------------------------------------------------------- */
/* With an Exception, the instance terminates with it; otherwise with a
 * WorkflowTerminatedException whose message is the Reason. */
enum { TW_REASON, TW_EXCEPTION };
static const wfm_prop_spec terminate_props[] = {
    {"Reason", WFM_PROP_IN, "x:String", NULL, 0, NULL},
    {"Exception", WFM_PROP_IN, "s:Exception", NULL, 0, NULL},
};

static void terminate_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value reason = wf_null(), exc = wf_null();
    if (wfm_ctx_get(ctx, ai, TW_REASON, &reason) != WF_OK)
        return;
    if (wfm_ctx_get(ctx, ai, TW_EXCEPTION, &exc) != WF_OK) {
        wf_value_release(&reason);
        return;
    }
    if (exc.type->kind != WF_K_EXCEPTION) {
        const char *text = wf_value_str_len(&reason) ? wf_value_str(&reason)
                                                     : "the workflow was terminated";
        wf_value_release(&exc);
        if (wf_value_exception(&wf_exc_workflow_terminated, text, &exc) != WF_OK) {
            wf_value_release(&reason);
            wfm_ctx_nomem(ctx); /* the scheduler fails the instance after this callback */
            return;
        }
    }
    wf_value_release(&reason);
    wfm_ctx_terminate(ctx, ai, exc);
}

static const wfm_kind_spec terminate_spec = {
    .name = "TerminateWorkflow",
    .category = "Activity",
    .props = terminate_props,
    .prop_count = sizeof terminate_props / sizeof terminate_props[0],
    .execute = terminate_execute,
};

/* ---- CancellationScope ---------------------------------------------------------------- */
/* BODY -> closed (body closed) | HANDLER (body canceled, or faulted after a cancel request);
 * HANDLER -> canceled (cs_handler_done). */
enum { CS_BODY, CS_HANDLER };
static const wfm_prop_spec cancel_scope_props[] = {
    {"Body", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_CONTENT, NULL},
    {"CancellationHandler", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
};

typedef struct cs_state {
    bool in_handler;
} cs_state;

static void cs_handler_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    (void)child;
    wfm_ctx_mark_canceled(ctx, ai);
    wfm_ctx_complete(ctx, ai);
}

/* As TryCatch's Finally: once an exception left the handler, cancellation may reach it. */
static bool cs_handler_fault(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child, const wf_value *exc)
{
    (void)ctx;
    (void)child;
    (void)exc;
    cs_state *st = wfm_ai_state(ai);
    st->in_handler = false;
    return false;
}

static void cs_run_handler(wfm_ctx *ctx, wfm_ai *ai)
{
    cs_state *st = wfm_ai_state(ai);
    st->in_handler = true;
    const wfm_node *handler = wfm_node_child(wfm_ai_node(ai), CS_HANDLER);
    if (handler) {
        wfm_ctx_schedule(ctx, ai, handler, cs_handler_done, cs_handler_fault);
        return;
    }
    wfm_ctx_mark_canceled(ctx, ai);
    wfm_ctx_complete(ctx, ai);
}

static void cs_body_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    wfm_status s = wfm_ai_status(child);
    if (s == WFM_CANCELED || (s == WFM_FAULTED && wfm_ai_cancel_requested(ai)))
        cs_run_handler(ctx, ai);
    else
        wfm_ctx_complete(ctx, ai);
}

static void cancel_scope_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *body = wfm_node_child(wfm_ai_node(ai), CS_BODY);
    if (body)
        wfm_ctx_schedule(ctx, ai, body, cs_body_done, NULL);
    else
        wfm_ctx_complete(ctx, ai);
}

static void cancel_scope_cancel(wfm_ctx *ctx, wfm_ai *ai)
{
    cs_state *st = wfm_ai_state(ai);
    if (st->in_handler)
        return;
    if (wfm_ai_running_children(ai) > 0)
        wfm_ctx_cancel_children(ctx, ai);
    else
        cs_run_handler(ctx, ai);
}

/* Append only: saved instances name callbacks by their index here. */
static const void *const cancel_scope_callbacks[] = {
    (const void *)cs_body_done,
    (const void *)cs_handler_done,
    (const void *)cs_handler_fault,
};

static const wfm_kind_spec cancel_scope_spec = {
    .name = "CancellationScope",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES | WFM_KIND_STATE_PLAIN,
    .props = cancel_scope_props,
    .prop_count = sizeof cancel_scope_props / sizeof cancel_scope_props[0],
    .content_prop = "Body",
    .state_size = sizeof(cs_state),
    .execute = cancel_scope_execute,
    .cancel = cancel_scope_cancel,
    .callbacks = cancel_scope_callbacks,
    .callback_count = sizeof cancel_scope_callbacks / sizeof cancel_scope_callbacks[0],
};

wf_status wfm_acts_fault_register(wfm_catalogue *cat, wf_error *err)
{
    static const wfm_kind_spec *const specs[] = {
        &try_catch_spec, &catch_spec,     &throw_spec,        &rethrow_spec,
        &terminate_spec, &cancel_scope_spec,
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        wf_status rc = wfm_catalogue_register(cat, specs[i], err);
        if (rc != WF_OK)
            return rc;
    }
    return WF_OK;
}

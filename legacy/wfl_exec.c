/* wfl_exec.c — the legacy executor core: the FIFO scheduler (atomic-transaction items first),
 * the activity status lifecycle, faults, cancellation and compensation phases, workflow
 * queues and timers, and the public API of wfl_exec.h (docs/semantics.md §4, §6).
 *
 * Status transitions (docs/semantics.md §4) and the function making each move:
 *
 *   Initialized  -> Executing     wfl__execute      (request; do_execute calls the kind's execute)
 *   Executing    -> Closed        wfl__close        result Succeeded (completion order assigned)
 *   Executing    -> Canceling     wfl__cancel       do_cancel: stop, cancel children, then
 *                                                CancellationHandler or default compensation
 *   Canceling    -> Closed        wfl__close        result Canceled (phase_step / cancel_next)
 *   Executing    -> Faulting      wfl__throw        do_fault: cancel children, FaultHandlers
 *   Canceling    -> Faulting      wfl__throw        (a fault while canceling wins)
 *   Faulting     -> Closed        wfl__close        result Faulted; the exception propagates to
 *                                                the parent unless a FaultHandler took it
 *   Closed       -> Compensating  wfl__compensate   do_compensate: CompensationHandler or
 *                                                default compensation, newest first
 *   Compensating -> Closed        wfl__close        result Compensated
 *   Compensating -> Faulting      wfl__throw        a CompensationHandler faulted
 *   Closed       -> Initialized   wfl__reenter      not a WF3 move: a state machine re-enters
 *                                                a state (WF3 runs each entry in a fresh
 *                                                execution context; wfbridge reuses the node)
 *
 * wfl__set_status makes every move and asserts it is legal (wfl_status_move_is_legal).
 *
 * A closing activity is heard by its listener (normally the parent) through a WI_CLOSED item;
 * at the executor's root, root_closed decides the instance state. */
#include "wfl_exec_int.h"
#include "../common/wf_random.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const wfl_kind_ops *const kind_table[WFL_KIND_COUNT] = {
    [WFL_KIND_SEQUENTIAL_WORKFLOW] = &wfl_ops_sequence,
    [WFL_KIND_SEQUENCE] = &wfl_ops_sequence,
    [WFL_KIND_CODE] = &wfl_ops_code,
    [WFL_KIND_IFELSE] = &wfl_ops_ifelse,
    [WFL_KIND_IFELSE_BRANCH] = &wfl_ops_sequence,
    [WFL_KIND_WHILE] = &wfl_ops_while,
    [WFL_KIND_REPLICATOR] = &wfl_ops_replicator,
    [WFL_KIND_PARALLEL] = &wfl_ops_parallel,
    [WFL_KIND_LISTEN] = &wfl_ops_listen,
    [WFL_KIND_EVENT_DRIVEN] = &wfl_ops_sequence,
    [WFL_KIND_DELAY] = &wfl_ops_delay,
    [WFL_KIND_HANDLE_EXTERNAL_EVENT] = &wfl_ops_hee,
    [WFL_KIND_CALL_EXTERNAL_METHOD] = &wfl_ops_cem,
    [WFL_KIND_POLICY] = &wfl_ops_policy,
    [WFL_KIND_TRANSACTION_SCOPE] = &wfl_ops_sequence,
    [WFL_KIND_COMPENSATABLE_SEQUENCE] = &wfl_ops_sequence,
    [WFL_KIND_COMPENSATE] = &wfl_ops_compensate,
    [WFL_KIND_COMPENSATION_HANDLER] = &wfl_ops_sequence,
    [WFL_KIND_FAULT_HANDLERS] = &wfl_ops_fault_handlers,
    [WFL_KIND_FAULT_HANDLER] = &wfl_ops_sequence,
    [WFL_KIND_CANCELLATION_HANDLER] = &wfl_ops_sequence,
    [WFL_KIND_THROW] = &wfl_ops_throw,
    [WFL_KIND_TERMINATE] = &wfl_ops_terminate,
    [WFL_KIND_SUSPEND] = &wfl_ops_suspend,
    [WFL_KIND_INVOKE_WORKFLOW] = &wfl_ops_invoke_workflow,
    [WFL_KIND_CAG] = &wfl_ops_cag,
    [WFL_KIND_SET_STATE] = &wfl_ops_set_state,
    [WFL_KIND_STATE_MACHINE_WORKFLOW] = &wfl_ops_state_machine,
    [WFL_KIND_STATE] = &wfl_ops_state,
    [WFL_KIND_STATE_INITIALIZATION] = &wfl_ops_sequence,
    [WFL_KIND_STATE_FINALIZATION] = &wfl_ops_sequence,
    [WFL_KIND_RECEIVE] = &wfl_ops_receive,
    [WFL_KIND_SEND] = &wfl_ops_send,
    [WFL_KIND_INVOKE_WEB_SERVICE] = &wfl_ops_invoke_web_service,
    [WFL_KIND_CUSTOM] = &wfl_ops_custom,
};

static const wfl_kind_ops *ops_of(const wfl_act *act)
{
    wfl_kind kind = wfl_act_type(act)->kind;
    return kind < WFL_KIND_COUNT ? kind_table[kind] : NULL;
}

/* ---- failures and per-activity state ---------------------------------------------------- */
void wfl__fail(wfl_exec *ex, const wf_error *err)
{
    if (!ex->failed) {
        ex->host_err = *err;
        ex->failed = true;
    }
}

void wfl__fail_nomem(wfl_exec *ex)
{
    wf_error e = WF_ERROR_INIT;
    wf_error_set(&e, WF_E_NOMEM, NULL, "out of memory while running the workflow");
    wfl__fail(ex, &e);
}

xact *wfl__state(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    if (x)
        return x;
    x = wf_pool_get(ex->xpool);
    if (!x) {
        wfl__fail_nomem(ex);
        return NULL;
    }
    x->exc = wf_null();
    x->exc_at = (wf_loc){NULL, 0, 0};
    x->val = wf_null();
    wfl_act_set_exec(act, x);
    return x;
}

static void dispose_xact(void *ud, wfl_act *act, void *exec)
{
    (void)act;
    wfl_exec *ex = ud;
    xact *x = exec;
    if (!wf_is_null(&x->exc)) /* most activities close without either */
        wf_value_release(&x->exc);
    if (!wf_is_null(&x->val))
        wf_value_release(&x->val);
    if (x->nested)
        wfl_exec_destroy(x->nested);
    wf_pool_put(ex->xpool, x);
}

/* ---- the scheduler ---------------------------------------------------------------------- */
bool wfl__wiq_push(wi_queue *q, const work_item *it)
{
    if (q->count == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 32;
        work_item *items = wf_malloc(cap * sizeof *items);
        if (!items)
            return false;
        for (size_t i = 0; i < q->count; i++)
            items[i] = q->items[(q->head + i) % q->cap];
        wf_free(q->items);
        q->items = items;
        q->head = 0;
        q->cap = cap;
    }
    assert(q->count < q->cap && q->head < q->cap); /* the ring has room after growing */
    q->items[(q->head + q->count) % q->cap] = *it;
    q->count++;
    return true;
}

static bool wiq_pop(wi_queue *q, work_item *out)
{
    if (!q->count)
        return false;
    assert(q->head < q->cap && q->count <= q->cap);
    *out = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return true;
}

/* Items of activities inside an executing TransactionScope go to the atomic queue. */
static bool in_atomic_scope(wfl_act *act)
{
    for (wfl_act *a = act; a; a = wfl_act_parent(a))
        if (wfl_act_type(a)->kind == WFL_KIND_TRANSACTION_SCOPE &&
            wfl_act_status(a) != WFL_ST_CLOSED && wfl_act_status(a) != WFL_ST_INITIALIZED)
            return true;
    return false;
}

void wfl__schedule(wfl_exec *ex, wi_kind kind, wfl_act *act, wfl_act *child, uint32_t arg)
{
    work_item it = {kind, act, child, arg};
    if (!wfl__wiq_push(in_atomic_scope(act) ? &ex->atomic : &ex->normal, &it))
        wfl__fail_nomem(ex);
}

/* ---- status moves ----------------------------------------------------------------------- */
static void trace_status(wfl_exec *ex, wfl_act *act)
{
    if (!ex->opts.trace)
        return;
    wfl_trace_rec rec = {0};
    rec.kind = WFL_TRACE_STATUS;
    rec.activity = wfl_act_name(act);
    rec.type = wfl_act_type(act)->name;
    rec.context_id = wfl_act_context_id(act);
    rec.status = wfl_act_status(act);
    rec.result = wfl_act_result(act);
    ex->opts.trace(ex->opts.trace_ud, &rec);
}

/* The only place an activity's status changes while it runs (restoring a blob sets it as
 * saved). Every move is one of WF3's (wfl_status.c), except re-entering a state. */
void wfl__set_status(wfl_exec *ex, wfl_act *act, wfl_status status)
{
    wfl_status from = wfl_act_status(act);
    if (from == WFL_ST_CLOSED && status == WFL_ST_INITIALIZED) {
        wfl_act_set_status(act, status); /* wfl__reenter: not a WF3 move, not traced */
        return;
    }
    assert(wfl_status_move_is_legal(from, status));
    wfl_act_set_status(act, status);
    trace_status(ex, act);
}

void wfl__reenter(wfl_exec *ex, wfl_act *act)
{
    if (wfl_act_status(act) == WFL_ST_CLOSED)
        wfl__set_status(ex, act, WFL_ST_INITIALIZED);
}

void wfl__execute(wfl_exec *ex, wfl_act *act)
{
    if (wfl_act_status(act) != WFL_ST_INITIALIZED)
        return;
    if (!wfl__state(ex, act))
        return;
    wfl__set_status(ex, act, WFL_ST_EXECUTING);
    wfl__schedule(ex, WI_EXECUTE, act, NULL, 0);
}

void wfl__cancel(wfl_exec *ex, wfl_act *act)
{
    if (wfl_act_status(act) != WFL_ST_EXECUTING)
        return;
    wfl__set_status(ex, act, WFL_ST_CANCELING);
    wfl__schedule(ex, WI_CANCEL, act, NULL, 0);
}

void wfl__compensate(wfl_exec *ex, wfl_act *act, wfl_act *listener)
{
    xact *x = wfl__state(ex, act);
    if (!x)
        return;
    x->listener = listener;
    x->phase = XP_NONE;
    wfl__set_status(ex, act, WFL_ST_COMPENSATING);
    wfl__schedule(ex, WI_COMPENSATE, act, NULL, 0);
}

/* Fault act with exc first raised at `at`. */
static void throw_at(wfl_exec *ex, wfl_act *act, const wf_value *exc, wf_loc at)
{
    xact *x = wfl__state(ex, act);
    if (!x)
        return;
    wf_value_set(&x->exc, exc);
    x->exc_at = at;
    x->flags &= ~XF_HANDLED;
    x->phase = XP_NONE;
    wfl__set_status(ex, act, WFL_ST_FAULTING);
    wfl__schedule(ex, WI_FAULT, act, NULL, 0);
}

void wfl__throw(wfl_exec *ex, wfl_act *act, const wf_value *exc)
{
    throw_at(ex, act, exc, wfl_act_node(act)->loc);
}

static const wf_type *exception_for(wf_status code)
{
    switch (code) {
    case WF_E_NATIVE:
        return &wf_exc_native;
    case WF_E_TYPE:
        return &wf_exc_invalid_cast;
    case WF_E_RANGE:
        return &wf_exc_argument_range;
    case WF_E_NAME:
        return &wf_exc_argument;
    case WF_E_SYNTAX:
        return &wf_exc_format;
    case WF_E_UNSUPPORTED:
        return &wf_exc_not_supported;
    default:
        return &wf_exc_invalid_operation;
    }
}

wfl_status wfl__throw_error(wfl_exec *ex, wfl_act *act, const wf_error *err, const wf_value *exc)
{
    if (err->code == WF_E_NOMEM) {
        wfl__fail(ex, err);
        return WFL_ST_FAULTING;
    }
    if (exc && exc->type->kind == WF_K_EXCEPTION) {
        wfl__throw(ex, act, exc);
        return WFL_ST_FAULTING;
    }
    wf_value v = wf_null();
    if (wf_value_exception(exception_for(err->code), err->message, &v) != WF_OK) {
        wfl__fail_nomem(ex);
        return WFL_ST_FAULTING;
    }
    wfl__throw(ex, act, &v);
    wf_value_release(&v);
    return WFL_ST_FAULTING;
}

static bool is_compensatable(const wfl_act *act)
{
    return (wfl_act_type(act)->flags & WFL_TF_COMPENSATABLE) != 0;
}

/* Every child and live context of act, through one callback-free index space. */
static size_t member_count(const wfl_act *act)
{
    return wfl_act_child_count(act) + wfl_act_context_count(act);
}

static wfl_act *member_at(const wfl_act *act, size_t i)
{
    size_t n = wfl_act_child_count(act);
    return i < n ? wfl_act_child(act, i) : wfl_act_context_at(act, i - n);
}

bool wfl__needs_comp(const wfl_act *act)
{
    if (wfl_act_status(act) != WFL_ST_CLOSED || wfl_act_result(act) != WFL_RES_SUCCEEDED)
        return false;
    if (is_compensatable(act))
        return true;
    for (size_t i = 0; i < member_count(act); i++)
        if (wfl__needs_comp(member_at(act, i)))
            return true;
    return false;
}

wfl_act *wfl__comp_next(wfl_act *scope)
{
    wfl_act *best = NULL;
    uint64_t best_order = 0;
    for (size_t i = 0; i < member_count(scope); i++) {
        wfl_act *c = member_at(scope, i);
        const xact *cx = wfl_act_exec(c);
        if (cx && wfl__needs_comp(c) && cx->order > best_order) {
            best = c;
            best_order = cx->order;
        }
    }
    return best;
}

bool wfl__is_running(const wfl_act *act)
{
    wfl_status s = wfl_act_status(act);
    return s != WFL_ST_INITIALIZED && s != WFL_ST_CLOSED;
}

size_t wfl__running_children(wfl_act *act)
{
    size_t n = 0;
    for (size_t i = 0; i < member_count(act); i++)
        if (wfl__is_running(member_at(act, i)))
            n++;
    return n;
}

size_t wfl__cancel_children(wfl_exec *ex, wfl_act *act)
{
    for (size_t i = 0; i < member_count(act); i++)
        wfl__cancel(ex, member_at(act, i));
    return wfl__running_children(act);
}

bool wfl__is_body_child(const wfl_act *child)
{
    const wfl_node *n = wfl_act_node(child);
    return !(n->flags & (WFL_NODE_ALT_FLOW | WFL_NODE_DISABLED));
}

wfl_act *wfl__clone(wfl_exec *ex, wfl_act *template_act)
{
    wfl_act *clone = NULL;
    wf_error err; /* per call: cleared, not zero-filled (780 bytes) */
    wf_error_clear(&err);
    if (wfl_act_clone(template_act, &clone, &err) != WF_OK) {
        wfl__fail(ex, &err);
        return NULL;
    }
    if (!wfl__state(ex, clone)) {
        wfl_act_clone_release(clone);
        return NULL;
    }
    ex->stats.contexts_created++;
    return clone;
}

void wfl__finish_clone(wfl_exec *ex, wfl_act *clone)
{
    if (!wfl_act_is_clone_root(clone) || wfl__is_running(clone))
        return;
    xact *x = wfl__state(ex, clone);
    if (x && wfl__needs_comp(clone)) {
        x->flags |= XF_KEEP_CONTEXT;
        return;
    }
    wfl_act_clone_release(clone);
}

void wfl__request_persist(wfl_exec *ex)
{
    ex->persist_pending = true;
    ex->persist_now = true;
}

static void clear_scheduler(wfl_exec *ex)
{
    ex->normal.count = ex->normal.head = 0;
    ex->atomic.count = ex->atomic.head = 0;
}

static void end_with(wfl_exec *ex, wfl_exec_state state, const wf_type *exc_type,
                     const char *message, wf_loc at)
{
    ex->state = state;
    ex->exception_at = at;
    wf_value_release(&ex->exception);
    if (exc_type && wf_value_exception(exc_type, message ? message : "", &ex->exception) != WF_OK)
        wfl__fail_nomem(ex);
    clear_scheduler(ex);
}

void wfl__terminate(wfl_exec *ex, const wfl_act *act, const char *error)
{
    end_with(ex, WFL_EXEC_TERMINATED, &wf_exc_workflow_terminated, error,
             wfl_act_node(act)->loc);
    wfl__request_persist(ex);
}

void wfl__suspend(wfl_exec *ex, const wfl_act *act, const char *error)
{
    ex->suspended = true;
    ex->exception_at = wfl_act_node(act)->loc;
    wf_value_release(&ex->exception);
    if (wf_value_exception(&wf_exc_exception, error ? error : "", &ex->exception) != WF_OK)
        wfl__fail_nomem(ex);
}

static void root_closed(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    wfl_result r = wfl_act_result(act);
    wf_value_release(&ex->exception);
    if (r == WFL_RES_CANCELED) {
        ex->state = WFL_EXEC_CANCELED;
    } else if (r == WFL_RES_FAULTED && x && !wf_is_null(&x->exc)) {
        ex->state = WFL_EXEC_FAULTED;
        ex->exception_at = x->exc_at;
        ex->exception = x->exc;
        x->exc = wf_null();
    } else {
        ex->state = WFL_EXEC_CLOSED;
    }
    clear_scheduler(ex);
    wfl__request_persist(ex);
}

void wfl__close(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl__state(ex, act);
    if (!x)
        return;
    wfl_status s = wfl_act_status(act);
    wfl_result r = s == WFL_ST_CANCELING      ? WFL_RES_CANCELED
                   : s == WFL_ST_FAULTING     ? WFL_RES_FAULTED
                   : s == WFL_ST_COMPENSATING ? WFL_RES_COMPENSATED
                                              : WFL_RES_SUCCEEDED;
    if (s == WFL_ST_CLOSED)
        return;
    x->phase = XP_NONE;
    wfl_act_set_result(act, r);
    wfl__set_status(ex, act, WFL_ST_CLOSED);
    if (wfl_act_type(act)->kind == WFL_KIND_TRANSACTION_SCOPE)
        wfl__checkpoint_drop(ex);
    if (r == WFL_RES_SUCCEEDED) {
        x->order = ++ex->next_order;
        if (wfl_act_type(act)->kind == WFL_KIND_TRANSACTION_SCOPE && ex->opts.no_persistence) {
            /* WF3 persists a PersistOnClose activity as it closes; with no persistence
             * service that throws and the instance terminates (docs/wf3-behaviour.md) */
            char msg[256];
            snprintf(msg, sizeof msg, "Activity '%s' is PersistOnClose, but no persistence "
                     "service is available to persist the workflow when it closes.",
                     wfl_act_name(act));
            end_with(ex, WFL_EXEC_TERMINATED, &wf_exc_invalid_operation, msg,
                     wfl_act_node(act)->loc);
            return;
        }
        if (wfl_act_type(act)->kind == WFL_KIND_TRANSACTION_SCOPE)
            wfl__request_persist(ex);
    }
    if (act == ex->root) {
        root_closed(ex, act);
        return;
    }
    wfl_act *listener = x->listener ? x->listener : wfl_act_parent(act);
    x->listener = NULL;
    if (listener)
        wfl__schedule(ex, WI_CLOSED, listener, act, 0);
}

/* ---- the phases of Canceling, Faulting and Compensating ---------------------------------- */
static wfl_act *handler_act(wfl_act *act, const wfl_node *handler_node)
{
    if (!handler_node)
        return NULL;
    wfl_act *h = wfl_act_child_for(act, handler_node);
    return h && wfl_act_status(h) == WFL_ST_INITIALIZED ? h : NULL;
}

/* Default compensation step: compensate the newest candidate, or finish by closing. */
static void comp_step(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    x->phase = XP_DEFAULT_COMP;
    wfl_act *next = wfl__comp_next(act);
    if (next)
        wfl__compensate(ex, next, act);
    else
        wfl__close(ex, act);
}

/* Run act's handler for handler_node (phase XP_HANDLER); false if it has none. */
static bool start_handler(wfl_exec *ex, wfl_act *act, const wfl_node *handler_node)
{
    wfl_act *h = handler_act(act, handler_node);
    if (!h)
        return false;
    xact *x = wfl_act_exec(act);
    x->phase = XP_HANDLER;
    wfl__execute(ex, h);
    return true;
}

static void cancel_after_children(wfl_exec *ex, wfl_act *act)
{
    if (!start_handler(ex, act, wfl_act_node(act)->cancellation_handler))
        comp_step(ex, act);
}

static void fault_after_handlers(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    if (x->flags & XF_HANDLED)
        wfl__close(ex, act);
    else
        comp_step(ex, act);
}

static void fault_after_children(wfl_exec *ex, wfl_act *act)
{
    if (!start_handler(ex, act, wfl_act_node(act)->fault_handlers))
        fault_after_handlers(ex, act);
}

/* A child (or a compensated activity) closed while act is Canceling, Faulting or
 * Compensating: move the phase on. */
static void phase_step(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    wfl_status s = wfl_act_status(act);
    switch (x->phase) {
    case XP_CANCEL_CHILDREN:
        if (wfl__running_children(act) == 0) {
            if (s == WFL_ST_CANCELING)
                cancel_after_children(ex, act);
            else
                fault_after_children(ex, act);
        }
        break;
    case XP_HANDLER:
        if (wfl__running_children(act) == 0) {
            if (s == WFL_ST_FAULTING)
                fault_after_handlers(ex, act);
            else
                wfl__close(ex, act);
        }
        break;
    case XP_DEFAULT_COMP: /* one compensation at a time, newest first */
        if (wfl__running_children(act) == 0)
            comp_step(ex, act);
        break;
    default:
        break;
    }
}

/* ---- work item handlers ------------------------------------------------------------------ */
static void do_execute(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl__state(ex, act);
    if (!x || wfl_act_status(act) != WFL_ST_EXECUTING || (x->flags & XF_STARTED))
        return;
    x->flags |= XF_STARTED;
    ex->stats.activities_executed++;
    const wfl_kind_ops *ops = ops_of(act);
    if (!ops) {
        wf_error e = WF_ERROR_INIT;
        const wfl_type *t = wfl_act_type(act);
        wf_error_set(&e, WF_E_UNSUPPORTED, &wfl_act_node(act)->loc, "%s cannot be run%s%s", t->name,
                     t->unsupported ? ": " : "", t->unsupported ? t->unsupported : "");
        wfl__throw_error(ex, act, &e, NULL);
        return;
    }
    wfl_status st = ops->execute(ex, act);
    if (st == WFL_ST_CLOSED && wfl_act_status(act) == WFL_ST_EXECUTING)
        wfl__close(ex, act);
}

static void do_cancel(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl__state(ex, act);
    if (!x || wfl_act_status(act) != WFL_ST_CANCELING || x->phase != XP_NONE)
        return;
    const wfl_kind_ops *ops = ops_of(act);
    if (ops && ops->stop)
        ops->stop(ex, act);
    x->phase = XP_CANCEL_CHILDREN;
    if (wfl__cancel_children(ex, act) == 0)
        cancel_after_children(ex, act);
}

static void do_fault(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl__state(ex, act);
    if (!x || wfl_act_status(act) != WFL_ST_FAULTING || x->phase != XP_NONE)
        return;
    if (wfl_act_type(act)->kind == WFL_KIND_TRANSACTION_SCOPE && wfl__checkpoint_rollback(ex, act))
        return; /* act is gone: the restored scope faults instead */
    const wfl_kind_ops *ops = ops_of(act);
    if (ops && ops->stop)
        ops->stop(ex, act);
    x->phase = XP_CANCEL_CHILDREN;
    if (wfl__cancel_children(ex, act) == 0)
        fault_after_children(ex, act);
}

static void do_compensate(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl__state(ex, act);
    if (!x || wfl_act_status(act) != WFL_ST_COMPENSATING)
        return;
    wfl_act *h = handler_act(act, wfl_act_node(act)->compensation_handler);
    if (h) {
        x->phase = XP_HANDLER;
        wfl__execute(ex, h);
        return;
    }
    comp_step(ex, act);
}

/* A fault propagating from a closed child into act. */
static void propagate_fault(wfl_exec *ex, wfl_act *act, const wf_value *exc, wf_loc at)
{
    wfl_status s = wfl_act_status(act);
    xact *x = wfl__state(ex, act);
    if (!x)
        return;
    if (s == WFL_ST_EXECUTING || s == WFL_ST_CANCELING) {
        throw_at(ex, act, exc, at);
    } else if (s == WFL_ST_FAULTING || s == WFL_ST_COMPENSATING) {
        /* A handler that faults replaces the exception; while children are being canceled
         * the first exception wins. */
        if (s == WFL_ST_FAULTING && x->phase == XP_HANDLER) {
            wf_value_set(&x->exc, exc);
            x->exc_at = at;
            x->flags &= ~XF_HANDLED;
        }
        phase_step(ex, act);
    }
}

static void do_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    xact *cx = wfl_act_exec(child);
    if (wfl_act_result(child) == WFL_RES_FAULTED && cx && !wf_is_null(&cx->exc)) {
        wf_value exc = cx->exc;
        wf_loc at = cx->exc_at;
        cx->exc = wf_null();
        wfl__finish_clone(ex, child);
        propagate_fault(ex, act, &exc, at);
        wf_value_release(&exc);
        return;
    }
    if (!wfl__state(ex, act))
        return;
    if (wfl_act_status(act) == WFL_ST_EXECUTING) {
        const wfl_kind_ops *ops = ops_of(act);
        if (ops && ops->child_closed)
            ops->child_closed(ex, act, child);
    } else if (wfl_act_status(act) != WFL_ST_CLOSED) {
        phase_step(ex, act);
    }
    wfl__finish_clone(ex, child);
}

static void do_queue_item(wfl_exec *ex, wfl_act *act, uint32_t queue_id)
{
    xqueue *q = wfl__queue_by_id(ex, queue_id);
    if (!q || wfl_act_status(act) != WFL_ST_EXECUTING)
        return;
    const wfl_kind_ops *ops = ops_of(act);
    if (ops && ops->queue_item)
        ops->queue_item(ex, act, q);
}

static void run_item(wfl_exec *ex, const work_item *it)
{
    switch (it->kind) {
    case WI_EXECUTE:
        do_execute(ex, it->act);
        break;
    case WI_CANCEL:
        do_cancel(ex, it->act);
        break;
    case WI_FAULT:
        do_fault(ex, it->act);
        break;
    case WI_COMPENSATE:
        do_compensate(ex, it->act);
        break;
    case WI_CLOSED:
        do_closed(ex, it->act, it->child);
        break;
    case WI_QUEUE:
        do_queue_item(ex, it->act, it->arg);
        break;
    }
}

/* ---- queues and timers --------------------------------------------------------------------- */
/* The timer heap: timers[0] is the earliest (ties by creation order). */
static bool timer_before(const xtimer *a, const xtimer *b)
{
    return a->due_us < b->due_us || (a->due_us == b->due_us && a->seq < b->seq);
}

static void timer_sift_up(xtimer *h, size_t i)
{
    while (i > 0 && timer_before(&h[i], &h[(i - 1) / 2])) {
        xtimer t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
    assert(i == 0 || !timer_before(&h[i], &h[(i - 1) / 2])); /* heap order restored */
}

static void timer_sift_down(xtimer *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && timer_before(&h[l], &h[m]))
            m = l;
        if (r < n && timer_before(&h[r], &h[m]))
            m = r;
        if (m == i) {
            assert(i == 0 || !timer_before(&h[i], &h[(i - 1) / 2])); /* heap order restored */
            return;
        }
        xtimer t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

xqueue *wfl__queue_by_id(wfl_exec *ex, uint32_t id)
{
    for (size_t i = 0; i < ex->queue_count; i++)
        if (ex->queues[i]->id == id)
            return ex->queues[i];
    return NULL;
}

xqueue *wfl__queue_by_name(wfl_exec *ex, const char *name)
{
    for (size_t i = 0; i < ex->queue_count; i++)
        if (strcmp(ex->queues[i]->name, name) == 0)
            return ex->queues[i];
    return NULL;
}

static void queue_free(xqueue *q)
{
    for (size_t i = 0; i < q->item_count; i++)
        wf_value_release(&q->items[i]);
    wf_free(q->items);
    wf_free(q->subs);
    wf_free(q->name);
    wf_free(q);
}

xqueue *wfl__queue_create(wfl_exec *ex, const char *name, bool is_timer)
{
    xqueue *q = wfl__queue_by_name(ex, name);
    if (q)
        return q;
    if (ex->queue_count == ex->queue_cap) {
        size_t cap = ex->queue_cap ? ex->queue_cap * 2 : 8;
        xqueue **qs = wf_realloc(ex->queues, cap * sizeof *qs);
        if (!qs) {
            wfl__fail_nomem(ex);
            return NULL;
        }
        ex->queues = qs;
        ex->queue_cap = cap;
    }
    q = wf_calloc(1, sizeof *q);
    if (!q || !(q->name = wf_strdup(name))) {
        wf_free(q);
        wfl__fail_nomem(ex);
        return NULL;
    }
    q->id = ++ex->next_queue_id;
    q->is_timer = is_timer;
    ex->queues[ex->queue_count++] = q;
    return q;
}

void wfl__queue_delete(wfl_exec *ex, uint32_t id)
{
    for (size_t i = 0; i < ex->queue_count; i++) {
        if (ex->queues[i]->id != id)
            continue;
        queue_free(ex->queues[i]);
        memmove(&ex->queues[i], &ex->queues[i + 1], (ex->queue_count - i - 1) * sizeof(xqueue *));
        ex->queue_count--;
        break;
    }
    size_t w = 0; /* drop the queue's timers, then restore the heap order */
    for (size_t i = 0; i < ex->timer_count; i++)
        if (ex->timers[i].queue_id != id)
            ex->timers[w++] = ex->timers[i];
    ex->timer_count = w;
    for (size_t i = w / 2; i-- > 0;)
        timer_sift_down(ex->timers, w, i);
}

bool wfl__queue_subscribe(wfl_exec *ex, xqueue *q, wfl_act *act)
{
    for (size_t i = 0; i < q->sub_count; i++)
        if (q->subs[i] == act)
            return true;
    if (q->sub_count == q->sub_cap) {
        size_t cap = q->sub_cap ? q->sub_cap * 2 : 2;
        wfl_act **subs = wf_realloc(q->subs, cap * sizeof *subs);
        if (!subs) {
            wfl__fail_nomem(ex);
            return false;
        }
        q->subs = subs;
        q->sub_cap = cap;
    }
    q->subs[q->sub_count++] = act;
    if (q->item_count) /* items that arrived before the subscription */
        wfl__schedule(ex, WI_QUEUE, act, NULL, q->id);
    return true;
}

void wfl__queue_unsubscribe(wfl_exec *ex, xqueue *q, wfl_act *act)
{
    (void)ex;
    for (size_t i = 0; i < q->sub_count; i++) {
        if (q->subs[i] == act) {
            memmove(&q->subs[i], &q->subs[i + 1], (q->sub_count - i - 1) * sizeof(wfl_act *));
            q->sub_count--;
            return;
        }
    }
}

bool wfl__queue_dequeue(xqueue *q, wf_value *out)
{
    if (!q->item_count)
        return false;
    *out = q->items[0];
    memmove(&q->items[0], &q->items[1], (q->item_count - 1) * sizeof(wf_value));
    q->item_count--;
    return true;
}

bool wfl__queue_enqueue(wfl_exec *ex, xqueue *q, const wf_value *item)
{
    if (q->item_count == q->item_cap) {
        size_t cap = q->item_cap ? q->item_cap * 2 : 4;
        wf_value *items = wf_realloc(q->items, cap * sizeof *items);
        if (!items) {
            wfl__fail_nomem(ex);
            return false;
        }
        q->items = items;
        q->item_cap = cap;
    }
    q->items[q->item_count++] = wf_value_retain(item);
    if (q->sub_count)
        wfl__schedule(ex, WI_QUEUE, q->subs[0], NULL, q->id);
    return true;
}

bool wfl__timer_add(wfl_exec *ex, int64_t due_us, uint32_t queue_id, uint64_t seq)
{
    if (ex->timer_count == ex->timer_cap) {
        size_t cap = ex->timer_cap ? ex->timer_cap * 2 : 4;
        xtimer *t = wf_realloc(ex->timers, cap * sizeof *t);
        if (!t) {
            wfl__fail_nomem(ex);
            return false;
        }
        ex->timers = t;
        ex->timer_cap = cap;
    }
    if (!seq)
        seq = ++ex->next_timer_seq;
    else if (seq > ex->next_timer_seq)
        ex->next_timer_seq = seq;
    ex->timers[ex->timer_count] = (xtimer){due_us, queue_id, seq};
    timer_sift_up(ex->timers, ex->timer_count++);
    return true;
}

/* Take the earliest timer off the heap. */
static xtimer timer_pop(wfl_exec *ex)
{
    assert(ex->timer_count > 0);
    xtimer top = ex->timers[0];
    ex->timers[0] = ex->timers[--ex->timer_count];
    timer_sift_down(ex->timers, ex->timer_count, 0);
    return top;
}

int64_t wfl__now(wfl_exec *ex)
{
    if (ex->opts.clock)
        return ex->opts.clock(ex->opts.clock_ud);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- the pulse ------------------------------------------------------------------------------ */
static bool is_final(wfl_exec_state s)
{
    return s == WFL_EXEC_CLOSED || s == WFL_EXEC_CANCELED || s == WFL_EXEC_FAULTED ||
           s == WFL_EXEC_TERMINATED;
}

static void call_persist(wfl_exec *ex)
{
    ex->persist_now = false;
    if (!ex->opts.persist)
        return;
    wf_error e; /* once per execution at least (the root's close): cleared, not zero-filled */
    wf_error_clear(&e);
    if (ex->opts.persist(ex->opts.persist_ud, ex, &e) != WF_OK)
        wfl__fail(ex, &e);
}

static void free_waiting(wfl_exec *ex)
{
    for (size_t i = 0; i < ex->waiting_count; i++)
        wf_free(ex->waiting_names[i]);
    wf_free(ex->waiting_names);
    wf_free(ex->waiting_ids);
    ex->waiting_names = NULL;
    ex->waiting_ids = NULL;
    ex->waiting_count = 0;
}

void wfl__rebuild_waiting(wfl_exec *ex)
{
    free_waiting(ex);
    if (is_final(ex->state) || !ex->queue_count)
        return;
    ex->waiting_names = wf_calloc(ex->queue_count, sizeof(char *));
    ex->waiting_ids = wf_calloc(ex->queue_count, sizeof(uint32_t));
    if (!ex->waiting_names || !ex->waiting_ids) {
        wfl__fail_nomem(ex);
        return;
    }
    for (size_t i = 0; i < ex->queue_count; i++) {
        xqueue *q = ex->queues[i];
        if (!q->sub_count)
            continue;
        char *name = wf_strdup(q->name);
        if (!name) {
            wfl__fail_nomem(ex);
            return;
        }
        ex->waiting_ids[ex->waiting_count] = q->id;
        ex->waiting_names[ex->waiting_count++] = name;
    }
}

static wf_status pulse(wfl_exec *ex, wfl_exec_state *state, wf_error *err)
{
    if (ex->state == WFL_EXEC_CREATED)
        ex->state = WFL_EXEC_IDLE;
    work_item it;
    uint64_t budget = ex->opts.max_work_items;
    while (!ex->failed && !is_final(ex->state) && !ex->suspended) {
        if (ex->persist_now)
            call_persist(ex);
        if (ex->failed || (!wiq_pop(&ex->atomic, &it) && !wiq_pop(&ex->normal, &it)))
            break;
        ex->stats.work_items++;
        run_item(ex, &it);
        if (budget && --budget == 0 && (ex->atomic.count || ex->normal.count)) {
            wf_error_set(&ex->host_err, WF_E_LIMIT, &wfl_act_node(ex->root)->loc,
                         "the workflow ran %llu work items without waiting for anything "
                         "(a loop that never goes idle, e.g. states that SetState each other "
                         "in StateInitialization?)",
                         (unsigned long long)ex->opts.max_work_items);
            ex->failed = true;
        }
    }
    if (ex->persist_now && !ex->failed)
        call_persist(ex);
    if (!is_final(ex->state))
        ex->state = ex->suspended ? WFL_EXEC_SUSPENDED : WFL_EXEC_IDLE;
    wfl__rebuild_waiting(ex);
    if (state)
        *state = ex->state;
    if (ex->failed) {
        ex->failed = false;
        wf_error e = ex->host_err;
        ex->host_err = (wf_error)WF_ERROR_INIT;
        return wf_error_set(err, e.code, &(wf_loc){e.file[0] ? e.file : NULL, e.line, e.col}, "%s",
                            e.message);
    }
    return WF_OK;
}

/* ---- public API ------------------------------------------------------------------------------ */
const char *wfl_exec_state_name(wfl_exec_state state)
{
    static const char *const names[] = {"Created", "Idle",       "Closed",   "Canceled",
                                        "Faulted", "Terminated", "Suspended"};
    return (size_t)state < sizeof names / sizeof names[0] ? names[state] : "?";
}

static void set_instance_id(wfl_exec *ex, const wfl_exec_opts *opts)
{
    if (!opts || !opts->instance_id) {
        wf_random_id(ex->instance_id);
        return;
    }
    size_t len = strnlen(opts->instance_id, sizeof ex->instance_id - 1);
    memcpy(ex->instance_id, opts->instance_id, len);
    ex->instance_id[len] = '\0';
}

wf_status wfl_exec_new(const wfl_definition *def, const wfl_exec_opts *opts, wfl_exec **out,
                       wf_error *err)
{
    *out = NULL;
    wfl_exec *ex = wf_calloc(1, sizeof *ex);
    if (!ex)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory creating an executor");
    ex->def = def;
    ex->opts = opts ? *opts : (wfl_exec_opts)WFL_EXEC_OPTS_INIT;
    ex->opts.instance_id = NULL;
    ex->exception = wf_null();
    ex->xpool = wf_pool_create(sizeof(xact), 64);
    if (!ex->xpool) {
        wf_free(ex);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory creating an executor");
    }
    set_instance_id(ex, opts);
    *out = ex;
    return WF_OK;
}

void wfl_exec_attach(wfl_exec *ex, wfl_inst *inst, wfl_act *root)
{
    ex->inst = inst;
    ex->root = root;
    wfl_inst_set_dispose(inst, dispose_xact, ex);
}

wf_status wfl_exec_create(const wfl_definition *def, const char *subtree, const wfl_exec_opts *opts,
                          wfl_exec **out, wf_error *err)
{
    *out = NULL;
    wfl_act *root = NULL;
    if (subtree) {
        const wfl_node *n = wfl_def_find_node(def, subtree);
        if (!n)
            return wf_error_set(err, WF_E_NAME, NULL, "no activity named '%s' in %s", subtree,
                                wfl_definition_path(def));
    }
    wfl_exec *ex;
    wf_status rc = wfl_exec_new(def, opts, &ex, err);
    if (rc != WF_OK)
        return rc;
    wfl_inst *inst = NULL;
    rc = wfl_inst_create(def, &inst, err);
    if (rc != WF_OK) {
        wfl_exec_destroy(ex);
        return rc;
    }
    root = subtree ? wfl_inst_act_at(inst, wfl_def_find_node(def, subtree)->index)
                   : wfl_inst_root(inst);
    wfl_exec_attach(ex, inst, root);
    *out = ex;
    return WF_OK;
}

void wfl_exec_destroy(wfl_exec *ex)
{
    if (!ex)
        return;
    wfl_inst_destroy(ex->inst);
    for (size_t i = 0; i < ex->queue_count; i++)
        queue_free(ex->queues[i]);
    wf_free(ex->queues);
    wf_free(ex->timers);
    wf_free(ex->normal.items);
    wf_free(ex->atomic.items);
    free_waiting(ex);
    wf_value_release(&ex->exception);
    wf_free(ex->checkpoint);
    wf_pool_destroy(ex->xpool);
    wf_free(ex);
}

void wfl_exec_set_max_work_items(wfl_exec *ex, uint64_t max_work_items)
{
    ex->opts.max_work_items = max_work_items;
}

void wfl_exec_reset(wfl_exec *ex, const wfl_exec_opts *opts)
{
    wfl_inst_reset(ex->inst);
    for (size_t i = 0; i < ex->queue_count; i++)
        queue_free(ex->queues[i]);
    ex->queue_count = 0;
    ex->next_queue_id = 0;
    ex->timer_count = 0;
    ex->next_timer_seq = 0;
    ex->next_order = 0;
    ex->normal.head = ex->normal.count = 0;
    ex->atomic.head = ex->atomic.count = 0;
    free_waiting(ex);
    wf_value_release(&ex->exception);
    ex->exception = wf_null();
    ex->exception_at = WF_LOC_NONE;
    wf_free(ex->checkpoint);
    ex->checkpoint = NULL;
    ex->checkpoint_len = 0;
    ex->checkpoint_ctx = 0;
    ex->checkpoint_node = 0;
    ex->state = WFL_EXEC_CREATED;
    ex->suspended = ex->persist_pending = ex->persist_now = ex->failed = false;
    wf_error_clear(&ex->host_err);
    ex->event_child = NULL;
    ex->event_data = NULL;
    ex->stats = (wfl_exec_stats){0};
    if (opts) {
        if (opts->instance_id && strcmp(opts->instance_id, ex->instance_id) != 0)
            set_instance_id(ex, opts);
        ex->opts = *opts;
        ex->opts.instance_id = NULL;
    }
}

const char *wfl_exec_instance_id(const wfl_exec *ex)
{
    return ex->instance_id;
}

wfl_exec_state wfl_exec_state_get(const wfl_exec *ex)
{
    return ex->state;
}

static const wfl_dp *input_dp(wfl_exec *ex, const char *name, wf_error *err)
{
    if (ex->state != WFL_EXEC_CREATED) {
        wf_error_set(err, WF_E_STATE, NULL, "inputs can only be set before the first run");
        return NULL;
    }
    const wfl_dp *dp = wfl_type_find_dp(wfl_act_type(ex->root), name);
    if (!dp || dp->kind != WFL_DPK_VALUE || (dp->flags & (WFL_DP_METADATA | WFL_DP_READONLY))) {
        wf_error_set(err, WF_E_NAME, NULL, "'%s' is not a settable property of %s", name,
                     wfl_act_name(ex->root));
        return NULL;
    }
    return dp;
}

wf_status wfl_exec_set_input(wfl_exec *ex, const char *name, const wf_value *value, wf_error *err)
{
    const wfl_dp *dp = input_dp(ex, name, err);
    if (!dp)
        return err ? err->code : WF_E_NAME;
    wf_status rc = wfl_act_set(ex->root, dp, value, err);
    if (rc != WF_OK)
        wf_error_prefix(err, "--arg %s: ", name);
    return rc;
}

wf_status wfl_exec_set_input_text(wfl_exec *ex, const char *name, const char *text, wf_error *err)
{
    const wfl_dp *dp = input_dp(ex, name, err);
    if (!dp)
        return err ? err->code : WF_E_NAME;
    wf_value v = wf_null();
    wf_status rc = wf_value_parse(ex->def->types, dp->type, text, &v, err);
    if (rc == WF_OK)
        rc = wfl_act_set(ex->root, dp, &v, err);
    if (rc != WF_OK)
        wf_error_prefix(err, "--arg %s: ", name);
    wf_value_release(&v);
    return rc;
}

wf_status wfl_exec_run(wfl_exec *ex, wfl_exec_state *state, wf_error *err)
{
    if (is_final(ex->state)) {
        if (state)
            *state = ex->state;
        return wf_error_set(err, WF_E_STATE, NULL, "the instance has completed");
    }
    if (ex->state == WFL_EXEC_CREATED)
        wfl__execute(ex, ex->root);
    return pulse(ex, state, err);
}

size_t wfl_exec_queue_count(const wfl_exec *ex)
{
    return ex->waiting_count;
}

const char *wfl_exec_queue_name(const wfl_exec *ex, size_t index)
{
    return index < ex->waiting_count ? ex->waiting_names[index] : NULL;
}

bool wfl_exec_queue_is_timer(const wfl_exec *ex, size_t index)
{
    if (index >= ex->waiting_count)
        return false;
    xqueue *q = wfl__queue_by_id((wfl_exec *)ex, ex->waiting_ids[index]);
    return q && q->is_timer;
}

const char *wfl_exec_queue_find(const wfl_exec *ex, const char *name)
{
    for (size_t i = 0; i < ex->waiting_count; i++)
        if (strcmp(ex->waiting_names[i], name) == 0)
            return ex->waiting_names[i];
    for (size_t i = 0; i < ex->waiting_count; i++) {
        const char *dot = strrchr(ex->waiting_names[i], '.');
        if (dot && strcmp(dot + 1, name) == 0)
            return ex->waiting_names[i];
    }
    return NULL;
}

bool wfl_exec_next_timer(const wfl_exec *ex, int64_t *due_us)
{
    if (!ex->timer_count || is_final(ex->state))
        return false;
    *due_us = ex->timers[0].due_us;
    return true;
}

static wf_status check_live(wfl_exec *ex, wf_error *err)
{
    if (is_final(ex->state))
        return wf_error_set(err, WF_E_STATE, NULL, "the instance has completed");
    if (ex->state == WFL_EXEC_CREATED)
        return wf_error_set(err, WF_E_STATE, NULL, "the instance has not been run yet");
    return WF_OK;
}

wf_status wfl_exec_deliver(wfl_exec *ex, const char *queue, const wf_value *item,
                           wfl_exec_state *state, wf_error *err)
{
    wf_status rc = check_live(ex, err);
    if (rc != WF_OK)
        return rc;
    xqueue *q = wfl__queue_by_name(ex, queue);
    if (!q)
        return wf_error_set(err, WF_E_NOTFOUND, NULL, "no workflow queue named '%s'", queue);
    wf_value null_item = wf_null();
    if (!wfl__queue_enqueue(ex, q, item ? item : &null_item))
        return pulse(ex, state, err);
    return pulse(ex, state, err);
}

wf_status wfl_exec_fire_timers(wfl_exec *ex, int64_t now_us, wfl_exec_state *state, wf_error *err)
{
    wf_status rc = check_live(ex, err);
    if (rc != WF_OK)
        return rc;
    wf_value null_item = wf_null();
    while (ex->timer_count && ex->timers[0].due_us <= now_us && !ex->failed) {
        uint32_t id = timer_pop(ex).queue_id;
        xqueue *q = wfl__queue_by_id(ex, id);
        if (q)
            wfl__queue_enqueue(ex, q, &null_item);
    }
    return pulse(ex, state, err);
}

wf_status wfl_exec_cancel(wfl_exec *ex, wfl_exec_state *state, wf_error *err)
{
    wf_status rc = check_live(ex, err);
    if (rc != WF_OK)
        return rc;
    ex->suspended = false;
    wfl__cancel(ex, ex->root);
    return pulse(ex, state, err);
}

wf_status wfl_exec_resume(wfl_exec *ex, wfl_exec_state *state, wf_error *err)
{
    if (ex->state != WFL_EXEC_SUSPENDED)
        return wf_error_set(err, WF_E_STATE, NULL, "the instance is not suspended");
    ex->suspended = false;
    wf_value_release(&ex->exception);
    ex->exception_at = (wf_loc){NULL, 0, 0};
    return pulse(ex, state, err);
}

const wf_value *wfl_exec_exception(const wfl_exec *ex)
{
    return &ex->exception;
}

wf_loc wfl_exec_fault_loc(const wfl_exec *ex)
{
    return wf_is_null(&ex->exception) ? WF_LOC_NONE : ex->exception_at;
}

void wfl_exec_stats_get(const wfl_exec *ex, wfl_exec_stats *out)
{
    *out = ex->stats;
}

bool wfl_exec_take_persist_request(wfl_exec *ex)
{
    bool p = ex->persist_pending;
    ex->persist_pending = false;
    return p;
}

/* ---- outputs ------------------------------------------------------------------------------- */
static bool is_output_dp(const wfl_dp *dp)
{
    return dp->kind == WFL_DPK_VALUE && !(dp->flags & WFL_DP_METADATA) &&
           dp->index > WFL_DPI_ENABLED;
}

static const wfl_dp *output_dp(const wfl_exec *ex, size_t index)
{
    const wfl_type *t = wfl_act_type(ex->root);
    if (ex->root == wfl_inst_root(ex->inst) && ex->def->param_count) {
        return index < ex->def->param_count ? t->dps[ex->def->params[index].dp_index] : NULL;
    }
    for (size_t i = 0; i < t->dp_count; i++)
        if (is_output_dp(t->dps[i]) && index-- == 0)
            return t->dps[i];
    return NULL;
}

/* output_dp through the executor's cache. */
static const wfl_dp *output_dp_cached(wfl_exec *ex, size_t index)
{
    if (ex->out_root != ex->root) {
        size_t n = 0;
        const size_t max = sizeof ex->out_dps / sizeof ex->out_dps[0];
        for (const wfl_dp *dp; n <= max && (dp = output_dp(ex, n)) != NULL; n++)
            if (n < max)
                ex->out_dps[n] = dp;
        ex->out_count = n <= max ? n : SIZE_MAX;
        ex->out_root = ex->root;
    }
    if (ex->out_count == SIZE_MAX)
        return output_dp(ex, index);
    return index < ex->out_count ? ex->out_dps[index] : NULL;
}

wf_status wfl_exec_set_input_at(wfl_exec *ex, size_t index, const wf_value *value,
                                wf_error *err)
{
    if (ex->state != WFL_EXEC_CREATED)
        return wf_error_set(err, WF_E_STATE, NULL, "inputs can only be set before the first run");
    const wfl_dp *dp = output_dp_cached(ex, index);
    if (!dp)
        return wf_error_set(err, WF_E_RANGE, NULL, "no property %zu", index);
    if (dp->flags & WFL_DP_READONLY)
        return wf_error_set(err, WF_E_NAME, NULL, "'%s' is not a settable property of %s",
                            dp->name, wfl_act_name(ex->root));
    wf_status rc = wfl_act_set(ex->root, dp, value, err);
    if (rc != WF_OK)
        wf_error_prefix(err, "%s: ", dp->name);
    return rc;
}

size_t wfl_exec_output_count(const wfl_exec *ex)
{
    size_t n = 0;
    while (output_dp(ex, n))
        n++;
    return n;
}

const char *wfl_exec_output_name(const wfl_exec *ex, size_t index)
{
    const wfl_dp *dp = output_dp(ex, index);
    return dp ? dp->name : NULL;
}

wf_status wfl_exec_output_value(wfl_exec *ex, size_t index, wf_value *out, wf_error *err)
{
    *out = wf_null();
    const wfl_dp *dp = output_dp_cached(ex, index);
    if (!dp)
        return wf_error_set(err, WF_E_RANGE, NULL, "no output %zu", index);
    return wfl_act_get(ex->root, dp, out, err);
}

wf_status wfl_exec_output(wfl_exec *ex, const char *name, wf_value *out, wf_error *err)
{
    *out = wf_null();
    for (size_t i = 0; output_dp(ex, i); i++)
        if (strcmp(output_dp(ex, i)->name, name) == 0)
            return wfl_exec_output_value(ex, i, out, err);
    return wf_error_set(err, WF_E_NAME, NULL, "no output named '%s'", name);
}

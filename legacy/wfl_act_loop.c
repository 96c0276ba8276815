/* wfl_act_loop.c — the activities that run children in execution contexts more than once:
 * Replicator (one clone per data item, Sequence or Parallel, UntilCondition at start and after
 * each child, ChildInitialized/ChildCompleted seeing the clone and its InstanceData) and the
 * ConditionedActivityGroup (WhenCondition per child, UntilCondition for the group)
 * (docs/semantics.md §3, §4 "Execution contexts"). */
#include "wfl_exec_int.h"

#include <string.h>

#define LOOP_UNTIL_MET 1 /* xact.cursor: the UntilCondition held; closing after cancels */

static bool has_condition(const wfl_act *act, const char *dp)
{
    const wfl_pval *pv = wfl__pval(act, dp);
    return pv && pv->kind == WFL_PV_CONDITION;
}

static wfl_act *template_child(wfl_act *act)
{
    for (size_t i = 0; i < wfl_act_child_count(act); i++)
        if (wfl__is_body_child(wfl_act_child(act, i)))
            return wfl_act_child(act, i);
    return NULL;
}

/* Clones started and not yet heard closing are counted in xact.count: several clones may
 * close before the first notification is processed. */
static void start_clone(wfl_exec *ex, wfl_act *act, wfl_act *clone)
{
    ((xact *)wfl_act_exec(act))->count++;
    wfl__execute(ex, clone);
}

static int32_t clone_heard(wfl_act *act, wfl_act *child)
{
    xact *x = wfl_act_exec(act);
    if (wfl_act_is_clone_root(child) && x->count > 0)
        x->count--;
    return x->count;
}

/* Until held: cancel what runs and close when nothing does. */
static wfl_status until_met(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    x->cursor = LOOP_UNTIL_MET;
    wfl__cancel_children(ex, act);
    return x->count == 0 ? WFL_ST_CLOSED : WFL_ST_EXECUTING;
}

/* ---- Replicator -------------------------------------------------------------------------- */
/* xact.memo: what a run reads once. ExecutionType is read when the Replicator executes, after
 * its Initialized handler (a restored run reads it again); UntilCondition is the definition's. */
#define REP_KNOWN     0x1u /* the bits below are set */
#define REP_PARALLEL  0x2u /* ExecutionType is Parallel */
#define REP_HAS_UNTIL 0x4u /* an UntilCondition is given */

static bool read_parallel(wfl_act *act)
{
    const wfl_dp *dp = wfl__dp(act, "ExecutionType");
    const wf_value *slot = dp ? wfl_act_peek(act, dp) : NULL;
    if (slot)
        return strcmp(wf_value_str(slot), "Parallel") == 0;
    wf_value v = wf_null();
    bool par = dp && wfl_act_get(act, dp, &v, NULL) == WF_OK &&
               strcmp(wf_value_str(&v), "Parallel") == 0;
    wf_value_release(&v);
    return par;
}

static uint32_t rep_memo(wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    if (!(x->memo & REP_KNOWN))
        x->memo = REP_KNOWN | (read_parallel(act) ? REP_PARALLEL : 0) |
                  (has_condition(act, "UntilCondition") ? REP_HAS_UNTIL : 0);
    return x->memo;
}

static bool is_parallel(wfl_act *act)
{
    return rep_memo(act) & REP_PARALLEL;
}

static bool rep_has_until(wfl_act *act)
{
    return rep_memo(act) & REP_HAS_UNTIL;
}

/* The event's property value, looked up by name once per Replicator node in a row. */
static const wfl_pval *child_event_pval(wfl_exec *ex, wfl_act *act, bool completed)
{
    const wfl_node *node = wfl_act_node(act);
    if (ex->rep_node != node) {
        ex->rep_child_initialized = wfl__pval(act, "ChildInitialized");
        ex->rep_child_completed = wfl__pval(act, "ChildCompleted");
        ex->rep_node = node;
    }
    return completed ? ex->rep_child_completed : ex->rep_child_initialized;
}

static bool child_event(wfl_exec *ex, wfl_act *act, wfl_act *clone, bool completed)
{
    const wfl_pval *pv = child_event_pval(ex, act, completed);
    if (!pv || (pv->kind != WFL_PV_HANDLER && pv->kind != WFL_PV_BIND))
        return true; /* nothing to call: no need to show the clone */
    xact *x = wfl_act_exec(act);
    xact *cx = wfl_act_exec(clone);
    const wf_value *data = wf_value_list_at(&x->val, (size_t)cx->aux);
    wf_value null_data = wf_null();
    wfl_act *saved_child = ex->event_child;
    const wf_value *saved_data = ex->event_data;
    ex->event_child = clone;
    ex->event_data = data ? data : &null_data;
    bool ok = wfl__raise_pval(ex, act, pv, completed ? "ChildCompleted" : "ChildInitialized");
    ex->event_child = saved_child;
    ex->event_data = saved_data;
    return ok;
}

static wfl_act *rep_make_child(wfl_exec *ex, wfl_act *act, size_t index)
{
    wfl_act *tmpl = template_child(act);
    wfl_act *clone = tmpl ? wfl__clone(ex, tmpl) : NULL;
    if (!clone)
        return NULL;
    ((xact *)wfl_act_exec(clone))->aux = (int32_t)index;
    if (!child_event(ex, act, clone, false)) {
        wfl_act_clone_release(clone);
        return NULL;
    }
    return clone;
}

static bool rep_until(wfl_exec *ex, wfl_act *act, bool *ok)
{
    *ok = true;
    if (!rep_has_until(act))
        return false;
    return wfl__condition_dp(ex, act, "UntilCondition", false, ok);
}

static wfl_status rep_done(wfl_exec *ex, wfl_act *act)
{
    return wfl__raise_event(ex, act, "Completed") ? WFL_ST_CLOSED : WFL_ST_FAULTING;
}

static wfl_status rep_start(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    size_t n = wf_value_list_count(&x->val);
    if (!is_parallel(act)) {
        if ((size_t)x->aux >= n)
            return rep_has_until(act) ? WFL_ST_EXECUTING : rep_done(ex, act);
        wfl_act *c = rep_make_child(ex, act, (size_t)x->aux++);
        if (!c)
            return WFL_ST_FAULTING;
        start_clone(ex, act, c);
        return WFL_ST_EXECUTING;
    }
    size_t first = (size_t)x->aux;
    for (; (size_t)x->aux < n; x->aux++)
        if (!rep_make_child(ex, act, (size_t)x->aux))
            return WFL_ST_FAULTING;
    for (size_t i = 0; i < wfl_act_context_count(act); i++) {
        wfl_act *c = wfl_act_context_at(act, i);
        xact *cx = wfl_act_exec(c);
        if (wfl_act_status(c) == WFL_ST_INITIALIZED && cx && (size_t)cx->aux >= first)
            start_clone(ex, act, c);
    }
    if (x->count)
        return WFL_ST_EXECUTING;
    return rep_has_until(act) ? WFL_ST_EXECUTING : rep_done(ex, act);
}

static wfl_status rep_execute(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    x->aux = 0;
    x->cursor = 0;
    x->count = 0;
    if (!wfl__raise_event(ex, act, "Initialized"))
        return WFL_ST_FAULTING;
    x->memo = 0; /* the Initialized handler may have set ExecutionType */
    wf_error err = WF_ERROR_INIT;
    wf_value data = wf_null();
    if (wfl_act_get_by_name(act, "InitialChildData", &data, &err) != WF_OK)
        return wfl__throw_error(ex, act, &err, NULL);
    wf_value_release(&x->val);
    x->val = data;
    bool ok;
    if (rep_until(ex, act, &ok))
        return rep_done(ex, act);
    if (!ok)
        return WFL_ST_FAULTING;
    return rep_start(ex, act);
}

static void rep_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    xact *x = wfl_act_exec(act);
    int32_t running = clone_heard(act, child);
    /* WF3 handles each child's close on its own: ChildCompleted first (for children that
     * closed before the UntilCondition held, and for the ones it canceled, too), then the
     * condition, which once true stays true (docs/wf3-behaviour.md) */
    if (wfl_act_is_clone_root(child) && !child_event(ex, act, child, true))
        return;
    if (x->cursor == LOOP_UNTIL_MET) {
        if (running == 0 && rep_done(ex, act) == WFL_ST_CLOSED)
            wfl__close(ex, act);
        return;
    }
    bool ok;
    wfl_status st;
    if (rep_until(ex, act, &ok))
        st = until_met(ex, act);
    else if (!ok)
        return;
    else if (!is_parallel(act))
        st = rep_start(ex, act);
    else
        st = running || rep_has_until(act) ? WFL_ST_EXECUTING : WFL_ST_CLOSED;
    if (st == WFL_ST_CLOSED && x->cursor == LOOP_UNTIL_MET)
        st = rep_done(ex, act);
    else if (st == WFL_ST_CLOSED && is_parallel(act))
        st = rep_done(ex, act);
    if (st == WFL_ST_CLOSED)
        wfl__close(ex, act);
}

const wfl_kind_ops wfl_ops_replicator = {rep_execute, NULL, rep_child_closed, NULL};

/* ---- ConditionedActivityGroup --------------------------------------------------------------- */
static bool cag_child_running(wfl_act *act, wfl_act *tmpl)
{
    for (size_t i = 0; i < wfl_act_context_count(act); i++) {
        wfl_act *c = wfl_act_context_at(act, i);
        if (wfl_act_template(c) == tmpl && wfl__is_running(c))
            return true;
    }
    return false;
}

/* Start every idle child whose WhenCondition holds (no When: exactly once). */
static bool cag_schedule(wfl_exec *ex, wfl_act *act)
{
    for (size_t i = 0; i < wfl_act_child_count(act); i++) {
        wfl_act *t = wfl_act_child(act, i);
        if (!wfl__is_body_child(t) || cag_child_running(act, t))
            continue;
        xact *tx = wfl__state(ex, t);
        if (!tx)
            return false;
        const wfl_node *n = wfl_act_node(t);
        bool ok = true;
        bool run = n->has_when ? wfl__condition(ex, act, &n->when, &ok) : tx->cursor == 0;
        if (!ok)
            return false;
        if (!run)
            continue;
        wfl_act *clone = wfl__clone(ex, t);
        if (!clone)
            return false;
        tx->cursor++;
        start_clone(ex, act, clone);
    }
    return true;
}

static wfl_status cag_step(wfl_exec *ex, wfl_act *act)
{
    bool ok = true;
    bool has_until = has_condition(act, "UntilCondition");
    if (has_until && wfl__condition_dp(ex, act, "UntilCondition", false, &ok))
        return until_met(ex, act);
    if (!ok || !cag_schedule(ex, act))
        return WFL_ST_FAULTING;
    if (((xact *)wfl_act_exec(act))->count)
        return WFL_ST_EXECUTING;
    if (!has_until)
        return WFL_ST_CLOSED;
    wf_value exc = wf_null();
    if (wf_value_exception(&wf_exc_invalid_operation,
                           "ConditionedActivityGroup has nothing to run while its "
                           "UntilCondition is false",
                           &exc) != WF_OK) {
        wfl__fail_nomem(ex);
        return WFL_ST_FAULTING;
    }
    wfl__throw(ex, act, &exc);
    wf_value_release(&exc);
    return WFL_ST_FAULTING;
}

static wfl_status cag_execute(wfl_exec *ex, wfl_act *act)
{
    ((xact *)wfl_act_exec(act))->cursor = 0;
    ((xact *)wfl_act_exec(act))->count = 0;
    return cag_step(ex, act);
}

static void cag_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    xact *x = wfl_act_exec(act);
    int32_t running = clone_heard(act, child);
    wfl_status st;
    if (x->cursor == LOOP_UNTIL_MET)
        st = running ? WFL_ST_EXECUTING : WFL_ST_CLOSED;
    else
        st = cag_step(ex, act);
    if (st == WFL_ST_CLOSED)
        wfl__close(ex, act);
}

const wfl_kind_ops wfl_ops_cag = {cag_execute, NULL, cag_child_closed, NULL};

/* wfl_act_basic.c — behaviours of the structural and leaf activities: Sequence (and every
 * sequence-shaped kind), Code, IfElse, While (a fresh clone per iteration), Parallel, Throw,
 * Terminate, Suspend, Policy, Compensate, FaultHandlers, InvokeWorkflow and custom
 * type-library activities (docs/semantics.md §3). */
#include "wfl_exec_int.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* ---- Sequence ------------------------------------------------------------------------------- */
static bool seq_next(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    size_t n = wfl_act_child_count(act);
    /* set here or restored through wfl__check_sequence / wfl__check_custom */
    assert(x->cursor >= 0 && (size_t)x->cursor <= n);
    while ((size_t)x->cursor < n) {
        wfl_act *c = wfl_act_child(act, (size_t)x->cursor++);
        if (wfl__is_body_child(c)) {
            wfl__execute(ex, c);
            return true;
        }
    }
    return false;
}

static bool is_workflow_root(const wfl_act *act)
{
    return wfl_act_type(act)->kind == WFL_KIND_SEQUENTIAL_WORKFLOW;
}

static wfl_status seq_execute(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    x->cursor = 0;
    if (is_workflow_root(act) && !wfl__raise_event(ex, act, "Initialized"))
        return WFL_ST_FAULTING;
    if (wfl_act_type(act)->kind == WFL_KIND_TRANSACTION_SCOPE)
        wfl__checkpoint_take(ex, act);
    if (seq_next(ex, act))
        return WFL_ST_EXECUTING;
    if (is_workflow_root(act) && !wfl__raise_event(ex, act, "Completed"))
        return WFL_ST_FAULTING;
    return WFL_ST_CLOSED;
}

static void seq_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    (void)child;
    if (seq_next(ex, act))
        return;
    if (is_workflow_root(act) && !wfl__raise_event(ex, act, "Completed"))
        return;
    wfl__close(ex, act);
}

const wfl_kind_ops wfl_ops_sequence = {seq_execute, NULL, seq_child_closed, NULL};

/* cursor: the next child to look at, so never past the children. */
const char *wfl__check_sequence(wfl_exec *ex, wfl_act *act, const xact *x)
{
    (void)ex;
    if (x->cursor < 0 || (size_t)x->cursor > wfl_act_child_count(act))
        return "a sequence's child cursor is out of range";
    return NULL;
}

/* ---- Code ------------------------------------------------------------------------------------ */
static wfl_status code_execute(wfl_exec *ex, wfl_act *act)
{
    return wfl__raise_event(ex, act, "ExecuteCode") ? WFL_ST_CLOSED : WFL_ST_FAULTING;
}

const wfl_kind_ops wfl_ops_code = {code_execute, NULL, NULL, NULL};

/* ---- IfElse: the first branch whose condition holds (no condition = else) -------------------- */
static wfl_status ifelse_execute(wfl_exec *ex, wfl_act *act)
{
    for (size_t i = 0; i < wfl_act_child_count(act); i++) {
        wfl_act *branch = wfl_act_child(act, i);
        if (!wfl__is_body_child(branch))
            continue;
        /* WF3's IfElse evaluates the branch conditions in its own Execute: a condition that
         * throws faults the IfElse, while the branch is still Initialized */
        const wfl_pval *pv = wfl__pval(branch, "Condition");
        bool ok = true;
        bool take = pv == NULL || pv->kind != WFL_PV_CONDITION ||
                    wfl__condition_of(ex, act, branch, &pv->u.cond, &ok);
        if (!ok)
            return WFL_ST_FAULTING;
        if (take) {
            wfl__execute(ex, branch);
            return WFL_ST_EXECUTING;
        }
    }
    return WFL_ST_CLOSED;
}

static void close_when_children_done(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    (void)child;
    if (wfl__running_children(act) == 0)
        wfl__close(ex, act);
}

const wfl_kind_ops wfl_ops_ifelse = {ifelse_execute, NULL, close_when_children_done, NULL};

/* ---- While: condition before each iteration; each iteration runs a fresh clone ------------------
 */
static wfl_act *first_body_child(wfl_act *act)
{
    for (size_t i = 0; i < wfl_act_child_count(act); i++)
        if (wfl__is_body_child(wfl_act_child(act, i)))
            return wfl_act_child(act, i);
    return NULL;
}

static wfl_status while_step(wfl_exec *ex, wfl_act *act)
{
    bool ok;
    bool again = wfl__condition_dp(ex, act, "Condition", false, &ok);
    if (!ok)
        return WFL_ST_FAULTING;
    wfl_act *body = first_body_child(act);
    if (!again || !body)
        return WFL_ST_CLOSED;
    wfl_act *clone = wfl__clone(ex, body);
    if (!clone)
        return WFL_ST_FAULTING;
    assert(((xact *)wfl_act_exec(act))->cursor >= 0); /* wfl__check_while on restore */
    ((xact *)wfl_act_exec(act))->cursor++;
    wfl__execute(ex, clone);
    return WFL_ST_EXECUTING;
}

static wfl_status while_execute(wfl_exec *ex, wfl_act *act)
{
    return while_step(ex, act);
}

static void while_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    (void)child;
    if (while_step(ex, act) == WFL_ST_CLOSED)
        wfl__close(ex, act);
}

const wfl_kind_ops wfl_ops_while = {while_execute, NULL, while_child_closed, NULL};

/* cursor: the iterations started; one clone at most runs at a time. */
const char *wfl__check_while(wfl_exec *ex, wfl_act *act, const xact *x)
{
    (void)ex;
    if (x->cursor < 0)
        return "a While's iteration count is negative";
    size_t running = 0;
    for (size_t i = 0; i < wfl_act_context_count(act); i++)
        if (wfl__is_running(wfl_act_context_at(act, i)))
            running++;
    if (running > 1 || (running && wfl_act_status(act) == WFL_ST_INITIALIZED))
        return "a While runs more than one iteration";
    if (running && x->cursor == 0)
        return "a While runs an iteration it never started";
    return NULL;
}

/* ---- Parallel: every branch scheduled at once; FIFO interleaves them ----------------------------
 */
static wfl_status parallel_execute(wfl_exec *ex, wfl_act *act)
{
    bool any = false;
    for (size_t i = 0; i < wfl_act_child_count(act); i++) {
        wfl_act *c = wfl_act_child(act, i);
        if (wfl__is_body_child(c)) {
            wfl__execute(ex, c);
            any = true;
        }
    }
    return any ? WFL_ST_EXECUTING : WFL_ST_CLOSED;
}

const wfl_kind_ops wfl_ops_parallel = {parallel_execute, NULL, close_when_children_done, NULL};

/* ---- Throw, Terminate, Suspend ------------------------------------------------------------------
 */
static wfl_status throw_execute(wfl_exec *ex, wfl_act *act)
{
    wf_value fault = wf_null();
    wf_error err = WF_ERROR_INIT;
    const wfl_dp *dp = wfl__dp(act, "Fault");
    if (dp && wfl_act_get(act, dp, &fault, &err) != WF_OK)
        return wfl__throw_error(ex, act, &err, NULL);
    if (wf_is_null(&fault)) {
        const wfl_pval *pv = wfl__pval(act, "FaultType");
        const wf_type *t =
            pv && pv->kind == WFL_PV_TYPE && pv->u.type.exc ? pv->u.type.exc : &wf_exc_exception;
        char msg[300];
        snprintf(msg, sizeof msg, "Exception of type '%s' was thrown.", t->name);
        if (wf_value_exception(t, msg, &fault) != WF_OK) {
            wfl__fail_nomem(ex);
            return WFL_ST_FAULTING;
        }
    }
    wfl__throw(ex, act, &fault);
    wf_value_release(&fault);
    return WFL_ST_FAULTING;
}

const wfl_kind_ops wfl_ops_throw = {throw_execute, NULL, NULL, NULL};

static bool read_error(wfl_exec *ex, wfl_act *act, char *buf, size_t size)
{
    wf_value v = wf_null();
    wf_error err = WF_ERROR_INIT;
    buf[0] = '\0';
    if (wfl_act_get_by_name(act, "Error", &v, &err) != WF_OK) {
        wfl__throw_error(ex, act, &err, NULL);
        return false;
    }
    snprintf(buf, size, "%s", wf_value_str(&v));
    wf_value_release(&v);
    return true;
}

static wfl_status terminate_execute(wfl_exec *ex, wfl_act *act)
{
    char msg[512];
    if (!read_error(ex, act, msg, sizeof msg))
        return WFL_ST_FAULTING;
    wfl__terminate(ex, act, msg);
    return WFL_ST_EXECUTING; /* the instance is over; nothing closes */
}

const wfl_kind_ops wfl_ops_terminate = {terminate_execute, NULL, NULL, NULL};

static wfl_status suspend_execute(wfl_exec *ex, wfl_act *act)
{
    char msg[512];
    if (!read_error(ex, act, msg, sizeof msg))
        return WFL_ST_FAULTING;
    wfl__suspend(ex, act, msg);
    return WFL_ST_CLOSED;
}

const wfl_kind_ops wfl_ops_suspend = {suspend_execute, NULL, NULL, NULL};

/* ---- Policy
 * -------------------------------------------------------------------------------------- */
static wfl_status policy_execute(wfl_exec *ex, wfl_act *act)
{
    const wfl_pval *pv = wfl__pval(act, "RuleSetReference");
    if (!pv || pv->kind != WFL_PV_RULESET || !pv->u.ruleset.ruleset) {
        wf_error e = WF_ERROR_INIT;
        wf_error_set(&e, WF_E_NAME, &wfl_act_node(act)->loc, "no rule set '%s' (no rules loaded?)",
                     pv && pv->kind == WFL_PV_RULESET ? pv->u.ruleset.name : "");
        return wfl__throw_error(ex, act, &e, NULL);
    }
    return wfl__run_ruleset(ex, act, pv->u.ruleset.ruleset);
}

const wfl_kind_ops wfl_ops_policy = {policy_execute, NULL, NULL, NULL};

/* ---- Compensate: the named completed activity (or its kept loop contexts), newest first;
 * naming an enclosing scope compensates that scope's completed children. Once the named
 * activity is compensated, WF3 asks again and compensates the completed children its
 * CompensationHandler left, newest first (docs/wf3-behaviour.md "Compensation") ------------ */
static bool is_ancestor(const wfl_act *anc, const wfl_act *act)
{
    for (const wfl_act *a = wfl_act_parent(act); a; a = wfl_act_parent(a))
        if (a == anc)
            return true;
    return false;
}

static wfl_act *compensate_next(wfl_act *act, wfl_act *target)
{
    if (is_ancestor(target, act))
        return wfl__comp_next(target);
    wfl_act *best = NULL;
    uint64_t best_order = 0;
    wfl_act *parent = wfl_act_parent(target);
    size_t n = parent ? wfl_act_context_count(parent) : 0;
    for (size_t i = 0; i <= n; i++) {
        wfl_act *c = i < n ? wfl_act_context_at(parent, i) : target;
        if (i < n && wfl_act_template(c) != target)
            continue;
        const xact *cx = wfl_act_exec(c);
        if (cx && wfl__needs_comp(c) && cx->order > best_order) {
            best = c;
            best_order = cx->order;
        }
    }
    if (!best && wfl_act_status(target) != WFL_ST_INITIALIZED) /* ran, not to be compensated */
        return wfl__comp_next(target);
    return best;
}

static wfl_act *compensate_target(wfl_exec *ex, wfl_act *act, bool *ok)
{
    const wfl_pval *pv = wfl__pval(act, "TargetActivityName");
    const char *name = pv && pv->kind == WFL_PV_LITERAL ? wf_value_str(&pv->u.literal) : "";
    wfl_act *t = wfl_act_resolve(act, name);
    *ok = t != NULL;
    if (!t) {
        wf_error e = WF_ERROR_INIT;
        wf_error_set(&e, WF_E_NAME, &wfl_act_node(act)->loc, "Compensate: no activity named '%s'",
                     name);
        wfl__throw_error(ex, act, &e, NULL);
    }
    return t;
}

static wfl_status compensate_step(wfl_exec *ex, wfl_act *act)
{
    bool ok;
    wfl_act *target = compensate_target(ex, act, &ok);
    if (!ok)
        return WFL_ST_FAULTING;
    wfl_act *next = compensate_next(act, target);
    if (!next)
        return WFL_ST_CLOSED;
    wfl__compensate(ex, next, act);
    return WFL_ST_EXECUTING;
}

static void compensate_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    (void)child;
    if (compensate_step(ex, act) == WFL_ST_CLOSED)
        wfl__close(ex, act);
}

const wfl_kind_ops wfl_ops_compensate = {compensate_step, NULL, compensate_child_closed, NULL};

/* ---- FaultHandlers: the first FaultHandler whose FaultType the exception is-a ------------------
 */
static bool handler_matches(const wfl_act *h, const wf_value *exc)
{
    const wfl_pval *pv = wfl__pval(h, "FaultType");
    if (!pv || pv->kind != WFL_PV_TYPE)
        return true;
    if (pv->u.type.exc)
        return wf_type_is_a(exc->type, pv->u.type.exc);
    return strcmp(pv->u.type.name, exc->type->name) == 0;
}

static wfl_status fault_handlers_execute(wfl_exec *ex, wfl_act *act)
{
    wfl_act *owner = wfl_act_parent(act);
    xact *ox = owner ? wfl_act_exec(owner) : NULL;
    if (!ox || wf_is_null(&ox->exc))
        return WFL_ST_CLOSED;
    for (size_t i = 0; i < wfl_act_child_count(act); i++) {
        wfl_act *h = wfl_act_child(act, i);
        if (!wfl__is_body_child(h) || !handler_matches(h, &ox->exc))
            continue;
        const wfl_dp *dp = wfl__dp(h, "Fault");
        wf_error err = WF_ERROR_INIT;
        if (dp && wfl_act_set_internal(h, dp, &ox->exc, &err) != WF_OK)
            return wfl__throw_error(ex, act, &err, NULL);
        ((xact *)wfl_act_exec(act))->cursor = (int32_t)i;
        wfl__execute(ex, h);
        return WFL_ST_EXECUTING;
    }
    return WFL_ST_CLOSED;
}

static void fault_handlers_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    wfl_act *owner = wfl_act_parent(act);
    xact *ox = owner ? wfl_act_exec(owner) : NULL;
    if (ox && wfl_act_result(child) == WFL_RES_SUCCEEDED) { /* the handler ate the exception */
        ox->flags |= XF_HANDLED;
        wf_value_release(&ox->exc);
    }
    wfl__close(ex, act);
}

const wfl_kind_ops wfl_ops_fault_handlers = {fault_handlers_execute, NULL,
                                             fault_handlers_child_closed, NULL};

/* ---- InvokeWorkflow: fire-and-forget through the host -------------------------------------------
 */
static wfl_status invoke_execute(wfl_exec *ex, wfl_act *act)
{
    wf_error err = WF_ERROR_INIT;
    const wfl_pval *tp = wfl__pval(act, "TargetWorkflow");
    const char *target = tp && tp->kind == WFL_PV_TYPE ? tp->u.type.name : "";
    if (!ex->opts.invoke_workflow) {
        wf_error_set(&err, WF_E_UNSUPPORTED, &wfl_act_node(act)->loc,
                     "InvokeWorkflow '%s': this host cannot start workflows", target);
        return wfl__throw_error(ex, act, &err, NULL);
    }
    if (!wfl__raise_event(ex, act, "Invoking"))
        return WFL_ST_FAULTING;
    const wfl_pval *pv = wfl__pval(act, "ParameterBindings");
    size_t n = pv && pv->kind == WFL_PV_PARAMS ? pv->u.params.count : 0;
    const char **names = wf_calloc(n + 1, sizeof(char *));
    wf_value *vals = wf_calloc(n + 1, sizeof(wf_value));
    wf_status rc = names && vals ? WF_OK : WF_E_NOMEM;
    if (rc != WF_OK)
        wf_error_set(&err, rc, NULL, "out of memory");
    for (size_t i = 0; rc == WF_OK && i < n; i++) {
        const wfl_param_binding *pb = &pv->u.params.items[i];
        names[i] = pb->param;
        vals[i] = wf_null();
        if (pb->is_bind)
            rc = wfl_act_bind_get(act, pb->bind, &vals[i], &err);
        else if (pb->has_value)
            vals[i] = wf_value_retain(&pb->literal);
    }
    char id[64] = "";
    if (rc == WF_OK)
        rc = ex->opts.invoke_workflow(ex->opts.invoke_ud, target, names, vals, n, id, sizeof id,
                                      &err);
    for (size_t i = 0; vals && i < n; i++)
        wf_value_release(&vals[i]);
    wf_free(names);
    wf_free(vals);
    wf_value idv = wf_null();
    const wfl_dp *dp = wfl__dp(act, "InstanceId");
    if (rc == WF_OK && dp && (rc = wf_value_cstring(id, &idv)) == WF_OK)
        rc = wfl_act_set_internal(act, dp, &idv, &err);
    wf_value_release(&idv);
    if (rc != WF_OK) {
        if (err.code == WF_OK)
            wf_error_set(&err, rc, NULL, "out of memory");
        return wfl__throw_error(ex, act, &err, NULL);
    }
    return WFL_ST_CLOSED;
}

const wfl_kind_ops wfl_ops_invoke_workflow = {invoke_execute, NULL, NULL, NULL};

/* ---- custom type-library activities --------------------------------------------------------- */
/* A container (Children="Sequence"): its function, then its children like a Sequence. */
static wfl_status custom_execute(wfl_exec *ex, wfl_act *act)
{
    if (wfl_act_type(act)->composite)
        return wfl__composite_execute(ex, act);
    wfl_status st = wfl__call_custom(ex, act);
    if (st != WFL_ST_CLOSED || !(wfl_act_type(act)->flags & WFL_TF_COMPOSITE))
        return st;
    xact *x = wfl_act_exec(act);
    x->cursor = 0;
    return seq_next(ex, act) ? WFL_ST_EXECUTING : WFL_ST_CLOSED;
}

/* A composite-flagged type without a body runs its children as a Sequence does. */
const char *wfl__check_custom(wfl_exec *ex, wfl_act *act, const xact *x)
{
    const wfl_type *t = wfl_act_type(act);
    if (t->composite || !(t->flags & WFL_TF_COMPOSITE))
        return NULL;
    return wfl__check_sequence(ex, act, x);
}

static void custom_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    (void)child;
    if (!seq_next(ex, act))
        wfl__close(ex, act);
}

static void custom_stop(wfl_exec *ex, wfl_act *act)
{
    if (wfl_act_type(act)->composite)
        wfl__composite_stop(ex, act);
}

static void custom_queue_item(wfl_exec *ex, wfl_act *act, xqueue *q)
{
    if (wfl_act_type(act)->composite)
        wfl__composite_queue_item(ex, act, q);
}

const wfl_kind_ops wfl_ops_custom = {custom_execute, custom_stop, custom_child_closed,
                                     custom_queue_item};

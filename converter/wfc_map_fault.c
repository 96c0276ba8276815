/* wfc_map_fault.c — the converter's rules for faults, cancellation and compensation:
 * FaultHandlers become TryCatch.Catches (WF3's first match kept), a CancellationHandler a
 * CancellationScope handler, CompensatableSequence a CompensableActivity, Compensate,
 * Throw, Terminate and TransactionScope their WF4 namesakes (docs/semantics.md §5, §7). */
#include <stdio.h>

#include "../legacy/wfl_rules.h"
#include "wfc_convert_int.h"

#define W (&c->w)

static bool unreachable_handler(wfc__conv *c, const wfl_node *fh, size_t index, const wf_type *t)
{
    for (size_t i = 0; i < index; i++) {
        wfl_prop_info pi;
        wfc__prop(c, wfl_node_child(fh, i), "FaultType", &pi);
        const wf_type *earlier = pi.exc_type ? pi.exc_type : &wf_exc_exception;
        if (wf_type_is_a(t, earlier))
            return true;
    }
    return false;
}

static void catch_one(wfc__conv *c, const wfl_node *h, const wf_type *t)
{
    char arg[160];
    snprintf(arg, sizeof arg, "%s_Fault", wfl_node_name(h));
    wfc__activity(c, h, "Catch", WFC_ACT_MAPPED);
    wfc__open_named(c, "Catch", h);
    wfc__type_attr(c, "x:TypeArguments", t, wfl_node_loc(h));
    wfc__action_open(c, t, arg, wfl_node_loc(h));
    wfc__open_named(c, "Sequence", h);
    wfc__write_variables(c, h, "Sequence");
    wfl_prop_info fault;
    wfc__prop(c, h, "Fault", &fault);
    if (fault.kind == WFL_PROP_BIND) {
        wf_buf to;
        wf_buf_init(&to);
        wf_buf_addc(&to, '[');
        if (wfc__bind_expr(c, h, fault.bind, false, true, &to, NULL)) {
            wf_buf_addc(&to, ']');
            wfc_xw_open(W, "Assign");
            wfc__type_attr(c, "x:TypeArguments", &wf_exc_exception, fault.loc);
            wfc_xw_attr(W, "To", to.data);
            wfc_xw_attrf(W, "Value", "[%s]", arg);
            wfc_xw_close(W);
        }
        wf_buf_fini(&to);
    }
    wfc__children(c, h);
    wfc_xw_close(W); /* Sequence */
    wfc_xw_close(W); /* ActivityAction */
    wfc_xw_close(W); /* Catch */
}

/* FaultHandlers -> TryCatch.Catches, WF3 first-match kept: a handler that an earlier one
 * shadows can never run in WF3, so it is left out (docs/semantics.md §5 "TryCatch"). */
void wfc__catches(wfc__conv *c, const wfl_node *fh)
{
    wfc__activity(c, fh, "TryCatch.Catches", WFC_ACT_MAPPED);
    wfc_xw_open(W, "TryCatch.Catches");
    for (size_t i = 0; i < wfl_node_child_count(fh); i++) {
        const wfl_node *h = wfl_node_child(fh, i);
        wfl_prop_info pi;
        wfc__prop(c, h, "FaultType", &pi);
        const wf_type *t = pi.exc_type ? pi.exc_type : &wf_exc_exception;
        if (unreachable_handler(c, fh, i, t)) {
            wfc__activity(c, h, "(none)", WFC_ACT_MAPPED);
            wfc__diag(c, WFC_WARNING, wfl_node_loc(h), "fault-handler-unreachable",
                      "FaultHandler '%s' (%s) can never run: an earlier handler catches its "
                      "type first; it is left out so the same handler wins",
                      wfl_node_name(h), t->name);
            wfc__loss(c, WFC_LOSS_SEMANTICS, h, "unreachable fault handler left out");
            continue;
        }
        catch_one(c, h, t);
    }
    wfc_xw_close(W);
}

/* The body of a composite as one modern activity: a Sequence of its children (declaring the
 * node's variables when `vars`), inside a TryCatch when it has FaultHandlers. */
void wfc__body(wfc__conv *c, const wfl_node *n, bool vars)
{
    const wfl_node *fh = wfc__child_of_kind(n, WFL_KIND_FAULT_HANDLERS);
    if (fh) {
        wfc__open_named(c, "TryCatch", n);
        wfc_xw_open(W, "TryCatch.Try");
    }
    wfc__open_named(c, "Sequence", n);
    if (vars)
        wfc__write_variables(c, n, "Sequence");
    wfc__children(c, n);
    wfc_xw_close(W);
    if (fh) {
        wfc_xw_close(W);
        wfc__catches(c, fh);
        wfc_xw_close(W);
    }
}

/* A handler child (CancellationHandler, CompensationHandler) as <PROP><Sequence>. */
void wfc__handler_prop(wfc__conv *c, const char *prop_elem, const wfl_node *h, const char *modern)
{
    wfc__activity(c, h, modern, WFC_ACT_MAPPED);
    wfc__handler_body(c, prop_elem, h);
}

static bool has_compensatable(const wfl_node *n)
{
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *k = wfl_node_child(n, i);
        if (wfl_node_is_disabled(k))
            continue;
        if (wfc__kind_of(k) == WFL_KIND_COMPENSATABLE_SEQUENCE || has_compensatable(k))
            return true;
    }
    return false;
}

/*
** Compensated by a Compensate naming it, a CompensatableSequence with a CompensationHandler
** then has the completed children its handler left compensated, newest first: WF3's
** CompensateActivity asks again once its target closed (docs/wf3-behaviour.md). A
** Target-less Compensate at the end of the handler does that; the modern runtime would
** confirm them instead. Reviewed: WF3's default compensation does not ask again.
*/
static void compensation_handler_then_rest(wfc__conv *c, const wfl_node *h)
{
    wfc__activity(c, h, "CompensableActivity.CompensationHandler", WFC_ACT_MAPPED);
    wfc__diag(c, WFC_REVIEW, wfl_node_loc(h), "compensation-handler-rest",
              "after '%s' runs for a Compensate, the completed children it did not compensate are "
              "compensated too, as WF3 does; WF3's default compensation would leave them",
              wfl_node_name(h));
    wfc_xw_open(W, "CompensableActivity.CompensationHandler");
    wfc__open_named(c, "Sequence", h);
    wfc__write_variables(c, h, "Sequence");
    wfc__children(c, h);
    wfc__open_named(c, "Compensate", h);
    wfc_xw_close(W);
    wfc_xw_close(W);
    wfc_xw_close(W);
}

static void emit_compensable(wfc__conv *c, const wfl_node *n)
{
    bool vars = wfc__has_variables(c, n);
    if (vars) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
    }
    /* a Compensate names it: its token is kept once the body completed (compensate_one) */
    const wfc__slot *token = wfc__find_slot(c, n, WFC__ROLE_TOKEN);
    const wfc__slot *run = wfc__find_slot(c, n, WFC__ROLE_RUN);
    wfc__open_named(c, "CompensableActivity", n);
    if (token && run)
        wfc_xw_attrf(W, "Result", "[%s]", run->name);
    wfc_xw_open(W, "CompensableActivity.Body");
    if (token && run)
        wfc_xw_open(W, "Sequence");
    wfc__body(c, n, false);
    if (token && run) {
        wfc_xw_open(W, "Assign");
        wfc_xw_attr(W, "x:TypeArguments", "CompensationToken");
        wfc_xw_attrf(W, "To", "[%s]", token->name);
        wfc_xw_attrf(W, "Value", "[%s]", run->name);
        wfc_xw_close(W);
        wfc_xw_close(W);
    }
    wfc_xw_close(W);
    const wfl_node *h = wfc__child_of_kind(n, WFL_KIND_COMPENSATION_HANDLER);
    if (h && token && has_compensatable(n))
        compensation_handler_then_rest(c, h);
    else if (h)
        wfc__handler_prop(c, "CompensableActivity.CompensationHandler", h,
                          "CompensableActivity.CompensationHandler");
    h = wfc__child_of_kind(n, WFL_KIND_CANCELLATION_HANDLER);
    if (h)
        wfc__handler_prop(c, "CompensableActivity.CancellationHandler", h,
                          "CompensableActivity.CancellationHandler");
    wfc_xw_close(W);
    if (vars)
        wfc_xw_close(W);
}

/*
** A WF3 composite that faults without handling the fault, or is canceled without a
** CancellationHandler, compensates its completed children (While iterations included) newest
** first (docs/wf3-behaviour.md "Conversion fidelity"). A CompensableActivity without
** handlers does the same when it is canceled, and a WF4 fault caught outside cancels it.
*/
bool wfc__default_comp_open(wfc__conv *c, const wfl_node *n)
{
    if (n == c->root || wfc__child_of_kind(n, WFL_KIND_CANCELLATION_HANDLER) ||
        !has_compensatable(n))
        return false;
    wfc__open_named(c, "CompensableActivity", n);
    wfc_xw_open(W, "CompensableActivity.Body");
    return true;
}

void wfc__default_comp_close(wfc__conv *c)
{
    wfc_xw_close(W);
    wfc_xw_close(W);
}

static bool inside(const wfl_node *n, const wfl_node *ancestor)
{
    for (; n; n = wfl_node_parent(n))
        if (n == ancestor)
            return true;
    return false;
}

static size_t count_compensatable_outside(const wfc__conv *c, const wfl_node *n,
                                          const wfl_node *target)
{
    size_t count = 0;
    if ((wfl_node_type(n)->flags & WFL_TF_COMPENSATABLE) && !inside(n, target))
        count++;
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        count += count_compensatable_outside(c, wfl_node_child(n, i), target);
    return count;
}

/*
** Compensate naming a completed CompensatableSequence X compensates X alone, and only once:
** WF3 does nothing for a target that did not complete or was compensated already
** (docs/wf3-behaviour.md "Compensation"). Its CompensableActivity's token reaches the
** Compensate's Target through X_Token, set when X's body completed and cleared once used:
**   <If Condition="[X_Token IsNot Nothing]"> Compensate Target=X_Token; X_Token = Nothing
*/
static void compensate_one(wfc__conv *c, const wfl_node *n, const wfl_node *target)
{
    const wfc__slot *token = wfc__token_slot(c, target, n);
    if (!token)
        return;
    wfc__open_named(c, "If", n);
    wfc_xw_attrf(W, "Condition", "[%s IsNot Nothing]", token->name);
    wfc_xw_open(W, "If.Then");
    wfc_xw_open(W, "Sequence");
    wfc__open_named(c, "Compensate", n);
    wfc_xw_attrf(W, "Target", "[%s]", token->name);
    wfc_xw_close(W);
    wfc_xw_open(W, "Assign");
    wfc_xw_attr(W, "x:TypeArguments", "CompensationToken");
    wfc_xw_attrf(W, "To", "[%s]", token->name);
    wfc_xw_attr(W, "Value", "[Nothing]");
    wfc_xw_close(W);
    wfc_xw_close(W);
    wfc_xw_close(W);
    wfc_xw_close(W);
}

/* Compensate TargetActivityName=X. X a CompensatableSequence beside the Compensate's scope:
 * compensate_one. X the scope itself: a Target-less Compensate, which compensates every
 * completed compensable in scope newest first, as WF3 does for its running scope. */
static void emit_compensate(wfc__conv *c, const wfl_node *n)
{
    const char *target_name = wfc__literal_str(c, n, "TargetActivityName");
    const wfl_node *target = target_name ? wfl_node_resolve(c->def, n, target_name) : NULL;
    if (!target) {
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "compensate-target",
                  "Compensate target '%s' is not an activity", target_name ? target_name : "");
        return;
    }
    if (!inside(n, target) && wfc__kind_of(target) == WFL_KIND_COMPENSATABLE_SEQUENCE) {
        compensate_one(c, n, target);
        return;
    }
    if (count_compensatable_outside(c, c->root, target) > 0)
        wfc__diag(c, WFC_REVIEW, wfl_node_loc(n), "compensate-target-scope",
                  "'%s' compensates '%s' only; the modern Compensate without a token "
                  "compensates every completed compensable activity in scope",
                  wfl_node_name(n), target_name);
    wfc__open_named(c, "Compensate", n);
    wfc_xw_close(W);
}

static void emit_throw(wfc__conv *c, const wfl_node *n)
{
    wfl_prop_info fault, ft;
    wfc__prop(c, n, "Fault", &fault);
    wfc__prop(c, n, "FaultType", &ft);
    wf_buf e;
    wf_buf_init(&e);
    wf_buf_addc(&e, '[');
    if (fault.kind == WFL_PROP_BIND) {
        wfc__bind_expr(c, n, fault.bind, true, false, &e, NULL);
    } else {
        const wf_type *t = ft.exc_type ? ft.exc_type : &wf_exc_exception;
        wf_buf tn;
        wf_buf_init(&tn);
        if (!wfc__xaml_type(t, &tn))
            wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "type-unmapped",
                      "exception type %s has no modern spelling", t->name);
        wf_buf_addf(&e, "new %s(\"Exception of type '%s' was thrown.\")", t->name, t->name);
        wf_buf_fini(&tn);
    }
    wf_buf_addc(&e, ']');
    wfc__leaf(c, "Throw", n, "Exception", e.data);
    wf_buf_fini(&e);
}

static void emit_terminate(wfc__conv *c, const wfl_node *n)
{
    wfl_prop_info pi;
    wfc__prop(c, n, "Error", &pi);
    wf_buf e;
    wf_buf_init(&e);
    wf_buf_addc(&e, '[');
    if (pi.kind == WFL_PROP_BIND)
        wfc__bind_expr(c, n, pi.bind, true, false, &e, NULL);
    else if (pi.kind == WFL_PROP_LITERAL)
        wfl_rules_literal_text(pi.literal, &e);
    else
        wf_buf_adds(&e, "\"\"");
    wf_buf_addc(&e, ']');
    wfc__leaf(c, "TerminateWorkflow", n, "Reason", e.data);
    wf_buf_fini(&e);
}

static void emit_transaction(wfc__conv *c, const wfl_node *n)
{
    bool vars = wfc__has_variables(c, n);
    wfc__open_named(c, "TransactionScope", n);
    wfc__body(c, n, vars);
    wfc_xw_close(W);
}

/* Legacy kind -> emitter, modern type reported, action. FaultHandlers and
 * CancellationHandler are placed by wfc__emit (or by the kinds that own them) through
 * wfc__catches and wfc__handler_prop. */
static const wfc__rule fault_rules[] = {
    {WFL_KIND_COMPENSATABLE_SEQUENCE, emit_compensable, "CompensableActivity", WFC_ACT_MAPPED, NULL,
     WFC__OWN_FAULTS | WFC__OWN_CANCEL},
    {WFL_KIND_COMPENSATE, emit_compensate, "Compensate", WFC_ACT_MAPPED, NULL, 0},
    {WFL_KIND_THROW, emit_throw, "Throw", WFC_ACT_MAPPED, NULL, 0},
    {WFL_KIND_TERMINATE, emit_terminate, "TerminateWorkflow", WFC_ACT_MAPPED, NULL, 0},
    {WFL_KIND_TRANSACTION_SCOPE, emit_transaction, "TransactionScope", WFC_ACT_MAPPED, NULL,
     WFC__OWN_FAULTS},
    {WFL_KIND_SUSPEND, NULL, NULL, WFC_ACT_INTEROP, "suspension is a host operation in WF4", 0},
};

const wfc__family wfc__map_fault = {"fault", fault_rules,
                                    sizeof fault_rules / sizeof fault_rules[0]};

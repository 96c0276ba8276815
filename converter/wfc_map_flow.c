/* wfc_map_flow.c — the converter's rules for control flow: Sequence, Code, IfElse, While,
 * Parallel, Listen/EventDriven, Delay, Replicator and ConditionedActivityGroup become their
 * WF4 equivalents (docs/semantics.md §7). A loop body is one Sequence per iteration, so its
 * variables start fresh each time, like WF3's clone of the body. */
#include <stdio.h>
#include <string.h>

#include "wfc_convert_int.h"

#define W (&c->w)

static void emit_sequence(wfc__conv *c, const wfl_node *n)
{
    const wfl_node *ch = wfc__child_of_kind(n, WFL_KIND_CANCELLATION_HANDLER);
    bool wrap = ch || wfc__child_of_kind(n, WFL_KIND_FAULT_HANDLERS);
    wfc__activity(c, n, ch ? "CancellationScope" : "Sequence", WFC_ACT_MAPPED);
    bool outer = wrap && wfc__has_variables(c, n); /* the walk may add variables (pass 1) */
    if (outer) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
    }
    if (ch) {
        wfc__open_named(c, "CancellationScope", n);
        wfc_xw_open(W, "CancellationScope.Body");
    }
    wfc__body(c, n, !wrap);
    if (ch) {
        wfc_xw_close(W);
        wfc__handler_prop(c, "CancellationScope.CancellationHandler", ch,
                          "CancellationScope.Handler");
        wfc_xw_close(W);
    }
    if (outer)
        wfc_xw_close(W);
}

static void emit_code(wfc__conv *c, const wfl_node *n)
{
    wfc__handler_call(c, n, "ExecuteCode", true);
}

/* IfElse: branch i and the ones after it as an If chain; a branch without a condition is the
 * final else (WF3 runs the first branch whose condition holds, docs/semantics.md §3). */
static void ifelse_chain(wfc__conv *c, const wfl_node *ifelse, size_t i, bool first)
{
    const wfl_node *b = wfl_node_child(ifelse, i);
    wfc__cond_plan p;
    wfc__cond_plan_init(c, b, "Condition", &p);
    if (!p.present) {
        wfc__activity(c, b, first ? "Sequence" : "If.Else", WFC_ACT_MAPPED);
        wfc__body(c, b, true);
        for (size_t k = i + 1; k < wfl_node_child_count(ifelse); k++) {
            const wfl_node *dead = wfl_node_child(ifelse, k);
            if (wfc__is_alt_flow(dead))
                continue;
            wfc__activity(c, dead, "(none)", WFC_ACT_MAPPED);
            wfc__diag(c, WFC_WARNING, wfl_node_loc(dead), "ifelse-unreachable-branch",
                      "branch '%s' follows a branch without a condition and never runs",
                      wfl_node_name(dead));
        }
        wfc__cond_plan_fini(&p);
        return;
    }
    wfc__activity(c, b, "If", WFC_ACT_MAPPED);
    wfc__cond_open(c, b, &p);
    wfc__open_named(c, "If", first ? ifelse : b);
    wfc__cond_attr(c, &p);
    wfc_xw_open(W, "If.Then");
    wfc__body(c, b, true);
    wfc_xw_close(W);
    size_t next = i + 1;
    while (next < wfl_node_child_count(ifelse) && wfc__is_alt_flow(wfl_node_child(ifelse, next)))
        next++;
    if (next < wfl_node_child_count(ifelse)) {
        wfc_xw_open(W, "If.Else");
        ifelse_chain(c, ifelse, next, false);
        wfc_xw_close(W);
    }
    wfc_xw_close(W);
    if (p.is_code)
        wfc_xw_close(W);
    wfc__cond_plan_fini(&p);
}

static void emit_ifelse(wfc__conv *c, const wfl_node *n)
{
    if (wfl_node_child_count(n) == 0)
        return;
    bool vars = wfc__has_variables(c, n);
    if (vars) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
    }
    ifelse_chain(c, n, 0, true);
    if (vars)
        wfc_xw_close(W);
}

/* While: the body is a Sequence per iteration (fresh variables, like WF3's clone); a code
 * condition is evaluated before the loop and again at the end of each iteration. */
static void emit_while(wfc__conv *c, const wfl_node *n)
{
    wfc__cond_plan p;
    wfc__cond_plan_init(c, n, "Condition", &p);
    if (!p.present)
        wf_buf_adds(&p.text, "false");
    bool vars = wfc__has_variables(c, n);
    if (vars) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
        wfc__diag(c, WFC_REVIEW, wfl_node_loc(n), "loop-variable-scope",
                  "data of the body of '%s' is also used outside it: it is kept across "
                  "iterations instead of being reset for each one",
                  wfl_node_name(n));
    }
    wfc__cond_open(c, n, &p);
    wfc__open_named(c, "While", n);
    wfc__cond_attr(c, &p);
    wfc_xw_open(W, "Sequence");
    wfc__children(c, n);
    if (p.is_code && p.fn && wfc__class_typelib(c))
        wfc__invoke(c, n, wfl_tl_func_name(p.fn), p.fn, wfc__class_typelib(c), WFC__FROM_CLASS,
                    p.var);
    wfc_xw_close(W);
    wfc_xw_close(W);
    if (p.is_code)
        wfc_xw_close(W);
    if (vars)
        wfc_xw_close(W);
    wfc__cond_plan_fini(&p);
}

static void emit_parallel(wfc__conv *c, const wfl_node *n)
{
    wfc__open_named(c, "Parallel", n);
    wfc__children(c, n);
    wfc_xw_close(W);
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        for (size_t k = i + 1; k < wfl_node_child_count(n); k++) {
            const wfl_node *a = wfl_node_child(n, i), *b = wfl_node_child(n, k);
            if (!wfc__share_data(c, a, b))
                continue;
            wfc__diag(c, WFC_REVIEW, wfl_node_loc(n), "parallel-interleaving",
                      "branches '%s' and '%s' of '%s' share data: WF3 interleaves them one "
                      "step at a time, WF4 runs each until it waits, so they may see a "
                      "different order",
                      wfl_node_name(a), wfl_node_name(b), wfl_node_name(n));
            return;
        }
    }
}

/* The steps after the event as PickBranch.Action, inside a TryCatch for the EventDriven's
 * FaultHandlers and a CancellationScope for its CancellationHandler: WF3 runs an EventDriven
 * only once its event arrived, so its handlers cover what follows the event
 * (docs/wf3-behaviour.md "Conversion fidelity"). */
static void pick_action(wfc__conv *c, const wfl_node *ed)
{
    const wfl_node *ch = wfc__child_of_kind(ed, WFL_KIND_CANCELLATION_HANDLER);
    const wfl_node *fh = wfc__child_of_kind(ed, WFL_KIND_FAULT_HANDLERS);
    size_t steps = 0;
    for (size_t i = 1; i < wfl_node_child_count(ed); i++)
        steps += !wfc__is_alt_flow(wfl_node_child(ed, i));
    if (!steps && !ch && !fh)
        return;
    wfc_xw_open(W, "PickBranch.Action");
    wfc__handlers_open(c, ed, ch, fh);
    wfc_xw_open(W, "Sequence");
    for (size_t i = 1; i < wfl_node_child_count(ed); i++)
        if (!wfc__is_alt_flow(wfl_node_child(ed, i)))
            wfc__emit(c, wfl_node_child(ed, i));
    wfc_xw_close(W);
    wfc__handlers_close(c, ch, fh);
    wfc_xw_close(W);
}

/* EventDriven -> PickBranch: the first child (the event) is the Trigger, the rest the Action. */
static void pick_branch(wfc__conv *c, const wfl_node *ed)
{
    wfc__activity(c, ed, "PickBranch", WFC_ACT_MAPPED);
    wfc__open_named(c, "PickBranch", ed);
    if (wfl_node_child_count(ed) > 0) {
        wfc_xw_open(W, "PickBranch.Trigger");
        wfc__emit(c, wfl_node_child(ed, 0));
        wfc_xw_close(W);
    }
    pick_action(c, ed);
    wfc_xw_close(W);
}

static void emit_listen(wfc__conv *c, const wfl_node *n)
{
    wfc__open_named(c, "Pick", n);
    for (size_t i = 0; i < wfl_node_child_count(n); i++) /* not its handlers: wfc__emit's */
        if (!wfc__is_alt_flow(wfl_node_child(n, i)))
            pick_branch(c, wfl_node_child(n, i));
    wfc_xw_close(W);
}

/* A Delay of 00:00:00 is still an idle point in WF3 (its timer is queued: the instance goes
 * idle, may persist, and other branches run first); the modern Delay completes at once. Not
 * expressible in WF4: reported at the Delay's line and counted as lost behaviour (partial). */
static void zero_delay(wfc__conv *c, const wfl_node *n)
{
    wfc__diag(c, WFC_REVIEW, wfl_node_loc(n), "delay-zero",
              "Delay '%s' waits 00:00:00: WF3 still goes idle on its timer (the instance may "
              "persist, other branches run first), the modern Delay completes without going "
              "idle; remove the Delay, or give it a real duration, if the idle point matters",
              wfl_node_name(n));
    wfc__loss(c, WFC_LOSS_SEMANTICS, n, "Delay 00:00:00 idle point");
    if (c->pass == 2) {
        wfc_file_activity_lost(c->file, wfl_node_name(n));
        c->dropped_count++;
    }
}

static void emit_delay(wfc__conv *c, const wfl_node *n)
{
    wfl_prop_info pi;
    wfc__prop(c, n, "TimeoutDuration", &pi);
    wf_buf d;
    wf_buf_init(&d);
    if (pi.kind == WFL_PROP_BIND) {
        wf_buf_addc(&d, '[');
        wfc__bind_expr(c, n, pi.bind, true, false, &d, NULL);
        wf_buf_addc(&d, ']');
    } else {
        char ts[64];
        wf_timespan_format(pi.kind == WFL_PROP_LITERAL ? pi.literal->u.i64 : 0, ts, sizeof ts);
        wf_buf_adds(&d, ts);
    }
    wfc__leaf(c, "Delay", n, "Duration", d.data);
    wf_buf_fini(&d);
    if (pi.kind != WFL_PROP_BIND && (pi.kind != WFL_PROP_LITERAL || pi.literal->u.i64 == 0))
        zero_delay(c, n);
    if (wfc__child_of_kind(n, WFL_KIND_FAULT_HANDLERS) || wfl_node_child_count(n))
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "unexpected-children", "Delay has children");
}

/* The list a Replicator iterates: the bound or literal InitialChildData, and its element type. */
static bool replicator_values(wfc__conv *c, const wfl_node *n, wf_buf *out, const wf_type **elem)
{
    wfl_prop_info pi;
    wfc__prop(c, n, "InitialChildData", &pi);
    *elem = &wf_type_object;
    if (pi.kind != WFL_PROP_BIND)
        return wf_buf_adds(out, "[null]");
    wf_buf_addc(out, '[');
    const wf_type *list = NULL;
    bool ok = wfc__bind_expr(c, n, pi.bind, true, false, out, &list);
    wf_buf_addc(out, ']');
    if (list && list->kind == WF_K_LIST)
        *elem = list->elem;
    return ok;
}

static bool has_prop(wfc__conv *c, const wfl_node *n, const char *name)
{
    wfl_prop_info pi;
    wfc__prop(c, n, name, &pi);
    return pi.kind != WFL_PROP_UNSET;
}

/* Replicator -> ForEach (Sequence) / ParallelForEach (Parallel) over InitialChildData, one
 * body per item with its own variables. Child events and UntilCondition need Interop. */
static void emit_replicator(wfc__conv *c, const wfl_node *n)
{
    if (has_prop(c, n, "ChildInitialized") || has_prop(c, n, "ChildCompleted") ||
        has_prop(c, n, "UntilCondition") || wfl_node_child_count(n) != 1) {
        wfc__interop_wrap(c, n, "per-child events, an UntilCondition or several children");
        return;
    }
    const char *mode = wfc__literal_str(c, n, "ExecutionType");
    bool parallel = mode && strcmp(mode, "Parallel") == 0;
    const char *kind = parallel ? "ParallelForEach" : "ForEach";
    wfc__activity(c, n, kind, WFC_ACT_MAPPED);
    wf_buf values;
    wf_buf_init(&values);
    const wf_type *elem;
    replicator_values(c, n, &values, &elem);
    char item[160];
    snprintf(item, sizeof item, "%s_Item", wfl_node_name(n));
    bool vars = wfc__has_variables(c, n);
    if (vars) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
    }
    wfc__open_named(c, kind, n);
    wfc__type_attr(c, "x:TypeArguments", elem, wfl_node_loc(n));
    wfc_xw_attr(W, "Values", values.data);
    wfc__action_open(c, elem, item, wfl_node_loc(n));
    wfc_xw_open(W, "Sequence");
    wfc__emit(c, wfl_node_child(n, 0));
    wfc_xw_close(W);
    wfc_xw_close(W);
    wfc_xw_close(W);
    if (vars)
        wfc_xw_close(W);
    wf_buf_fini(&values);
    if (parallel)
        wfc__diag(c, WFC_REVIEW, wfl_node_loc(n), "parallel-interleaving",
                  "WF3 interleaves the children of '%s' one step at a time; ParallelForEach "
                  "starts the last item's body first and runs each until it waits",
                  wfl_node_name(n));
}

/* Legacy kind -> emitter, modern type reported (NULL: the emitter reports it), action. */
static const wfc__rule flow_rules[] = {
    {WFL_KIND_SEQUENTIAL_WORKFLOW, emit_sequence, NULL, WFC_ACT_MAPPED, NULL,
     WFC__OWN_FAULTS | WFC__OWN_CANCEL}, /* Sequence, or CancellationScope */
    {WFL_KIND_SEQUENCE, emit_sequence, NULL, WFC_ACT_MAPPED, NULL,
     WFC__OWN_FAULTS | WFC__OWN_CANCEL | WFC__DEFAULT_COMP}, /* Sequence, or CancellationScope */
    {WFL_KIND_CODE, emit_code, "InvokeMethod", WFC_ACT_INVOKE, NULL, 0},
    {WFL_KIND_IFELSE, emit_ifelse, "If", WFC_ACT_MAPPED, NULL, WFC__DEFAULT_COMP},
    {WFL_KIND_WHILE, emit_while, "While", WFC_ACT_MAPPED, NULL, WFC__DEFAULT_COMP},
    {WFL_KIND_PARALLEL, emit_parallel, "Parallel", WFC_ACT_MAPPED, NULL, WFC__DEFAULT_COMP},
    {WFL_KIND_LISTEN, emit_listen, "Pick", WFC_ACT_MAPPED, NULL, WFC__DEFAULT_COMP},
    {WFL_KIND_DELAY, emit_delay, "Delay", WFC_ACT_MAPPED, NULL, 0},
    {WFL_KIND_REPLICATOR, emit_replicator, NULL, WFC_ACT_MAPPED, NULL,
     WFC__DEFAULT_COMP}, /* ForEach, ... */
    {WFL_KIND_CAG, NULL, NULL, WFC_ACT_INTEROP, "no WF4 activity", 0},
};

const wfc__family wfc__map_flow = {"flow", flow_rules, sizeof flow_rules / sizeof flow_rules[0]};

/* wfm_act_flow.c — Flowchart (FlowStep, FlowDecision, FlowSwitch) and StateMachine (State,
 * Transition), docs/semantics.md §5. Flow nodes and states are auxiliary nodes reached by
 * x:Reference (cycles allowed); only the activities they hold (actions, entries, triggers)
 * become activity instances, all children of the Flowchart / StateMachine instance. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "wfm_activity.h"
#include "wfm_acts.h"
#include "wfm_ctx.h"
#include "wfm_node.h"
#include "wfm_persist.h"

/* Decisions and switches visited in a row without running an activity: nothing can change
 * between them except the clock, so a longer chain is a loop that would never end. */
#define FLOW_MAX_HOPS 65536u
/* The same for a StateMachine's trigger-less transitions (each one is a few stack frames). */
#define SM_MAX_HOPS 1024u

/* ---- Flowchart ------------------------------------------------------------------------ */
enum { FC_START, FC_NODES };
enum { FS_ACTION, FS_NEXT };
enum { FD_CONDITION, FD_TRUE, FD_FALSE };
enum { FW_EXPRESSION, FW_CASES, FW_DEFAULT };

static const wfm_prop_spec flowchart_props[] = {
    {"StartNode", WFM_PROP_NODE, NULL, "FlowNode", 0, NULL},
    {"Nodes", WFM_PROP_NODES, NULL, "FlowNode", WFM_PROP_CONTENT, NULL},
    /* Designer-only (WF4): accepted, no effect at run time. */
    {"ValidateUnconnectedNodes", WFM_PROP_LITERAL, "x:Boolean", NULL, 0, "False"},
};
static const wfm_prop_spec flow_step_props[] = {
    {"Action", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_CONTENT, NULL},
    {"Next", WFM_PROP_NODE, NULL, "FlowNode", 0, NULL},
};
static const wfm_prop_spec flow_decision_props[] = {
    {"Condition", WFM_PROP_IN, "x:Boolean", NULL, WFM_PROP_REQUIRED, NULL},
    {"True", WFM_PROP_NODE, NULL, "FlowNode", 0, NULL},
    {"False", WFM_PROP_NODE, NULL, "FlowNode", 0, NULL},
    {"TrueLabel", WFM_PROP_LITERAL, "x:String", NULL, 0, NULL},  /* designer labels */
    {"FalseLabel", WFM_PROP_LITERAL, "x:String", NULL, 0, NULL},
};
static const wfm_prop_spec flow_switch_props[] = {
    {"Expression", WFM_PROP_IN, "T", NULL, WFM_PROP_REQUIRED, NULL},
    {"Cases", WFM_PROP_KEYED, "T", "FlowNode", WFM_PROP_CONTENT, NULL},
    {"Default", WFM_PROP_NODE, NULL, "FlowNode", 0, NULL},
    {"DefaultCaseDisplayName", WFM_PROP_LITERAL, "x:String", NULL, 0, NULL}, /* designer */
};

typedef struct flow_state {
    const wfm_node *step; /* the FlowStep whose Action runs */
} flow_state;

static void flow_step_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child);
static const wfm_kind_spec flow_step_spec, flow_decision_spec, flow_switch_spec;

static bool node_is(const wfm_node *node, const wfm_kind_spec *spec)
{
    return node && wfm_kind_spec_of(wfm_node_kind(node)) == spec;
}

/*
** The node a FlowDecision leads to. Returns false when evaluating the condition faulted ai.
*/
static bool flow_decide(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, const wfm_node **next)
{
    wf_value v = wf_null();
    if (wfm_ctx_eval_node(ctx, ai, node, FD_CONDITION, &v) != WF_OK)
        return false;
    bool yes = v.type->kind == WF_K_BOOL && v.u.b;
    wf_value_release(&v);
    *next = wfm_node_child(node, yes ? FD_TRUE : FD_FALSE);
    return true;
}

/*
** The node a FlowSwitch leads to: the case whose key equals the expression, else Default.
*/
static bool flow_switch(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, const wfm_node **next)
{
    wf_value v = wf_null();
    if (wfm_ctx_eval_node(ctx, ai, node, FW_EXPRESSION, &v) != WF_OK)
        return false;
    *next = wfm_node_child(node, FW_DEFAULT);
    size_t n = wfm_node_count(node, FW_CASES);
    for (size_t i = 0; i < n; i++) {
        const wf_value *key = wfm_node_key(node, FW_CASES, i);
        if (key && wf_value_equal(key, &v)) {
            *next = wfm_node_at(node, FW_CASES, i);
            break;
        }
    }
    wf_value_release(&v);
    return true;
}

/*
** Walk from `node` until a FlowStep with an Action is scheduled or the flowchart ends.
*/
static void flow_advance(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node)
{
    flow_state *st = wfm_ai_state(ai);
    for (unsigned hops = 0; node; hops++) {
        if (hops == FLOW_MAX_HOPS) {
            wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                          "Flowchart '%s' passed %u decisions without running an activity",
                          wfm_node_display_name(wfm_ai_node(ai)), hops);
            return;
        }
        if (node_is(node, &flow_step_spec)) {
            const wfm_node *action = wfm_node_child(node, FS_ACTION);
            if (action) {
                st->step = node;
                wfm_ctx_schedule(ctx, ai, action, flow_step_done, NULL);
                return;
            }
            node = wfm_node_child(node, FS_NEXT);
        } else if (node_is(node, &flow_decision_spec)) {
            if (!flow_decide(ctx, ai, node, &node))
                return;
        } else if (node_is(node, &flow_switch_spec)) {
            if (!flow_switch(ctx, ai, node, &node))
                return;
        } else {
            break; /* the loader only admits the FlowNode kinds above */
        }
    }
    st->step = NULL;
    wfm_ctx_complete(ctx, ai);
}

static void flow_step_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    flow_state *st = wfm_ai_state(ai);
    if (wfm_ai_cancel_requested(ai) || wfm_ai_status(child) != WFM_CLOSED) {
        if (wfm_ai_cancel_requested(ai))
            wfm_ctx_mark_canceled(ctx, ai);
        wfm_ctx_complete(ctx, ai);
        return;
    }
    flow_advance(ctx, ai, wfm_node_child(st->step, FS_NEXT));
}

static void flowchart_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *node = wfm_ai_node(ai);
    flow_advance(ctx, ai, wfm_node_child(node, FC_START));
}

/* Shared by the composites of this file: cancel what runs; with nothing running, close as
 * canceled at once (the completion callbacks otherwise do it). */
static void cancel_running(wfm_ctx *ctx, wfm_ai *ai)
{
    if (wfm_ai_running_children(ai) == 0) {
        wfm_ctx_mark_canceled(ctx, ai);
        wfm_ctx_complete(ctx, ai);
        return;
    }
    wfm_ctx_cancel_children(ctx, ai);
}

/* Persistence (wfm_persist.h "Persistence contract"): a version, then the fields. */
#define FLOW_STATE_VERSION 1u

static wf_status flowchart_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    const flow_state *st = wfm_ai_state_const(ai);
    wfm_persist_write_uint(w, FLOW_STATE_VERSION);
    wfm_persist_write_node(w, st->step);
    return WF_OK;
}

static wf_status flowchart_restore(wfm_ai *ai, wfm_persist_reader *r)
{
    flow_state *st = wfm_ai_state(ai);
    if (wfm_persist_read_uint(r) != FLOW_STATE_VERSION)
        wfm_persist_read_fail(r, "unknown Flowchart state version");
    st->step = wfm_persist_read_node(r);
    if (st->step && !node_is(st->step, &flow_step_spec))
        wfm_persist_read_fail(r, "Flowchart state names a node that is not a FlowStep");
    return WF_OK;
}

/* Append only: saved instances name callbacks by their index here. */
static const void *const flowchart_callbacks[] = {(const void *)flow_step_done};

static const wfm_kind_spec flowchart_spec = {
    .name = "Flowchart",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES,
    .props = flowchart_props,
    .prop_count = sizeof flowchart_props / sizeof flowchart_props[0],
    .content_prop = "Nodes",
    .state_size = sizeof(flow_state),
    .execute = flowchart_execute,
    .cancel = cancel_running,
    .callbacks = flowchart_callbacks,
    .callback_count = sizeof flowchart_callbacks / sizeof flowchart_callbacks[0],
    .save = flowchart_save,
    .restore = flowchart_restore,
};
static const wfm_kind_spec flow_step_spec = {
    .name = "FlowStep",
    .category = "FlowNode",
    .props = flow_step_props,
    .prop_count = sizeof flow_step_props / sizeof flow_step_props[0],
    .content_prop = "Action",
};
static const wfm_kind_spec flow_decision_spec = {
    .name = "FlowDecision",
    .category = "FlowNode",
    .props = flow_decision_props,
    .prop_count = sizeof flow_decision_props / sizeof flow_decision_props[0],
};
static const wfm_kind_spec flow_switch_spec = {
    .name = "FlowSwitch",
    .category = "FlowNode",
    .flags = WFM_KIND_GENERIC,
    .props = flow_switch_props,
    .prop_count = sizeof flow_switch_props / sizeof flow_switch_props[0],
    .content_prop = "Cases",
};

/* ---- StateMachine --------------------------------------------------------------------- */
/* Transition table of a StateMachine instance (phase, and the function that moves it):
 *   ENTRY    -> TRIGGERS  sm_after_entry (Entry closed, state not final)
 *   ENTRY    -> closed    sm_after_entry (final state)
 *   TRIGGERS -> TRIGGERS  sm_trigger_done (no condition true: that trigger again)
 *   TRIGGERS -> CANCELING sm_take (a transition won: the other triggers are canceled)
 *   CANCELING-> EXIT      sm_trigger_done / sm_take (no trigger left running)
 *   EXIT     -> ACTION    sm_exit_done
 *   ACTION   -> ENTRY     sm_action_done (sm_enter the transition's To)
 *   any      -> canceled  when cancellation was requested and no child runs */
enum { SM_INITIAL, SM_STATES };
enum { ST_ENTRY, ST_EXIT, ST_TRANSITIONS, ST_IS_FINAL };
enum { TR_TRIGGER, TR_CONDITION, TR_ACTION, TR_TO };

static const wfm_prop_spec state_machine_props[] = {
    {"InitialState", WFM_PROP_NODE, NULL, "State", WFM_PROP_REQUIRED, NULL},
    {"States", WFM_PROP_NODES, NULL, "State", WFM_PROP_CONTENT, NULL},
};
static const wfm_prop_spec state_props[] = {
    {"Entry", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"Exit", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"Transitions", WFM_PROP_NODES, NULL, "Transition", 0, NULL},
    {"IsFinal", WFM_PROP_LITERAL, "x:Boolean", NULL, 0, "False"},
};
static const wfm_prop_spec transition_props[] = {
    {"Trigger", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_SHARED, NULL},
    {"Condition", WFM_PROP_IN, "x:Boolean", NULL, 0, "True"},
    {"Action", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"To", WFM_PROP_NODE, NULL, "State", WFM_PROP_REQUIRED, NULL},
};

typedef enum sm_phase { SM_ENTRY, SM_TRIGGERS, SM_CANCELING, SM_EXIT, SM_ACTION } sm_phase;

typedef struct sm_state {
    sm_phase phase;
    const wfm_node *state;      /* the current State */
    const wfm_node *transition; /* the winning Transition (CANCELING .. ACTION) */
    unsigned hops;              /* states entered since an activity last ran */
} sm_state;

static const wfm_kind_spec state_spec, transition_spec;
static void sm_enter(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *state);
static void sm_trigger_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child);

static bool state_is_final(const wfm_node *state)
{
    const wf_value *v = wfm_node_literal(state, ST_IS_FINAL);
    return v && v->type->kind == WF_K_BOOL && v->u.b;
}

static bool sm_schedule(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, wfm_done_fn done)
{
    sm_state *st = wfm_ai_state(ai);
    if (wfm_ctx_schedule(ctx, ai, node, done, NULL) != WF_OK)
        return false;
    st->hops = 0;
    return true;
}

/*
** A child finished. Returns true when the machine must stop: cancellation was requested, or
** a child other than a losing trigger did not close; it closes as canceled once none runs.
*/
static bool sm_child_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    sm_state *st = wfm_ai_state(ai);
    bool stop = wfm_ai_cancel_requested(ai) ||
                (wfm_ai_status(child) != WFM_CLOSED && st->phase != SM_CANCELING);
    if (!stop)
        return false;
    if (wfm_ai_running_children(ai) == 0) {
        wfm_ctx_mark_canceled(ctx, ai);
        wfm_ctx_complete(ctx, ai);
    }
    return true;
}

static void sm_action_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    sm_state *st = wfm_ai_state(ai);
    if (sm_child_done(ctx, ai, child))
        return;
    sm_enter(ctx, ai, wfm_node_child(st->transition, TR_TO));
}

static void sm_run_action(wfm_ctx *ctx, wfm_ai *ai)
{
    sm_state *st = wfm_ai_state(ai);
    st->phase = SM_ACTION;
    const wfm_node *action = wfm_node_child(st->transition, TR_ACTION);
    if (action)
        sm_schedule(ctx, ai, action, sm_action_done);
    else
        sm_enter(ctx, ai, wfm_node_child(st->transition, TR_TO));
}

static void sm_exit_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    if (!sm_child_done(ctx, ai, child))
        sm_run_action(ctx, ai);
}

static void sm_run_exit(wfm_ctx *ctx, wfm_ai *ai)
{
    sm_state *st = wfm_ai_state(ai);
    st->phase = SM_EXIT;
    const wfm_node *exit_act = wfm_node_child(st->state, ST_EXIT);
    if (exit_act)
        sm_schedule(ctx, ai, exit_act, sm_exit_done);
    else
        sm_run_action(ctx, ai);
}

/*
** Transition `tr` won: cancel the other triggers, then (once none runs) Exit, Action, To.
*/
static void sm_take(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *tr)
{
    sm_state *st = wfm_ai_state(ai);
    st->phase = SM_CANCELING;
    st->transition = tr;
    if (wfm_ai_running_children(ai) > 0)
        wfm_ctx_cancel_children(ctx, ai);
    else
        sm_run_exit(ctx, ai);
}

/*
** The first transition of the current state on `trigger` (NULL: the trigger-less ones) whose
** Condition holds. Returns false when evaluating a condition faulted ai.
*/
static bool sm_pick(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *trigger, const wfm_node **won)
{
    sm_state *st = wfm_ai_state(ai);
    *won = NULL;
    size_t n = wfm_node_count(st->state, ST_TRANSITIONS);
    for (size_t i = 0; i < n; i++) {
        const wfm_node *tr = wfm_node_at(st->state, ST_TRANSITIONS, i);
        if (wfm_node_child(tr, TR_TRIGGER) != trigger)
            continue;
        wf_value v = wf_null();
        if (wfm_ctx_eval_node(ctx, ai, tr, TR_CONDITION, &v) != WF_OK)
            return false;
        bool yes = v.type->kind == WF_K_BOOL && v.u.b;
        wf_value_release(&v);
        if (yes) {
            *won = tr;
            return true;
        }
    }
    return true;
}

static void sm_trigger_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    sm_state *st = wfm_ai_state(ai);
    if (sm_child_done(ctx, ai, child))
        return;
    if (st->phase == SM_CANCELING) {
        if (wfm_ai_running_children(ai) == 0)
            sm_run_exit(ctx, ai);
        return;
    }
    const wfm_node *trigger = wfm_ai_node(child);
    const wfm_node *won;
    if (!sm_pick(ctx, ai, trigger, &won))
        return;
    if (won)
        sm_take(ctx, ai, won);
    else
        sm_schedule(ctx, ai, trigger, sm_trigger_done);
}

/* Whether transition i of `state` is the first one using its trigger (shared triggers run
 * once for all the transitions that name the same node). */
static bool first_on_trigger(const wfm_node *state, size_t i)
{
    const wfm_node *trigger = wfm_node_child(wfm_node_at(state, ST_TRANSITIONS, i), TR_TRIGGER);
    for (size_t j = 0; j < i; j++)
        if (wfm_node_child(wfm_node_at(state, ST_TRANSITIONS, j), TR_TRIGGER) == trigger)
            return false;
    return true;
}

static void sm_after_entry(wfm_ctx *ctx, wfm_ai *ai)
{
    sm_state *st = wfm_ai_state(ai);
    if (state_is_final(st->state)) {
        wfm_ctx_complete(ctx, ai);
        return;
    }
    const wfm_node *won;
    if (!sm_pick(ctx, ai, NULL, &won))
        return;
    if (won) {
        sm_take(ctx, ai, won);
        return;
    }
    st->phase = SM_TRIGGERS;
    size_t n = wfm_node_count(st->state, ST_TRANSITIONS);
    /* Last scheduled runs first: schedule in reverse so the first trigger starts first. */
    for (size_t i = n; i-- > 0;) {
        const wfm_node *trigger =
            wfm_node_child(wfm_node_at(st->state, ST_TRANSITIONS, i), TR_TRIGGER);
        if (trigger && first_on_trigger(st->state, i) &&
            !sm_schedule(ctx, ai, trigger, sm_trigger_done))
            return;
    }
    if (wfm_ai_running_children(ai) == 0)
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "no transition of state '%s' can be taken",
                      wfm_node_display_name(st->state));
}

static void sm_entry_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    if (!sm_child_done(ctx, ai, child))
        sm_after_entry(ctx, ai);
}

static void sm_enter(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *state)
{
    sm_state *st = wfm_ai_state(ai);
    /* Trigger-less transitions without Entry, Exit or Action recurse through here; a long
     * chain of them is a cycle nothing can leave. */
    if (++st->hops > SM_MAX_HOPS) {
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "StateMachine '%s' entered %u states without running an activity",
                      wfm_node_display_name(wfm_ai_node(ai)), SM_MAX_HOPS);
        return;
    }
    st->phase = SM_ENTRY;
    st->state = state;
    st->transition = NULL;
    const wfm_node *entry = wfm_node_child(state, ST_ENTRY);
    if (entry)
        sm_schedule(ctx, ai, entry, sm_entry_done);
    else
        sm_after_entry(ctx, ai);
}

static void state_machine_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    sm_enter(ctx, ai, wfm_node_child(wfm_ai_node(ai), SM_INITIAL));
}

/*
** Load-time checks WF4's validation makes: a final state has no transitions and no Exit; a
** state that is not final has at least one transition.
*/
static wf_status state_prepare(wfm_load *load, wfm_node *node)
{
    size_t n = wfm_node_count(node, ST_TRANSITIONS);
    if (state_is_final(node)) {
        if (n > 0)
            wfm_load_error(load, node, WF_E_SCHEMA, "final state '%s' cannot have transitions",
                           wfm_node_display_name(node));
        if (wfm_node_child(node, ST_EXIT))
            wfm_load_error(load, node, WF_E_SCHEMA, "final state '%s' cannot have an Exit",
                           wfm_node_display_name(node));
    } else if (n == 0) {
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "state '%s' is not final and has no transitions",
                       wfm_node_display_name(node));
    }
    return WF_OK;
}

static wf_status state_machine_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    const sm_state *st = wfm_ai_state_const(ai);
    wfm_persist_write_uint(w, FLOW_STATE_VERSION);
    wfm_persist_write_uint(w, st->phase);
    wfm_persist_write_node(w, st->state);
    wfm_persist_write_node(w, st->transition);
    wfm_persist_write_uint(w, st->hops);
    return WF_OK;
}

static wf_status state_machine_restore(wfm_ai *ai, wfm_persist_reader *r)
{
    sm_state *st = wfm_ai_state(ai);
    if (wfm_persist_read_uint(r) != FLOW_STATE_VERSION)
        wfm_persist_read_fail(r, "unknown StateMachine state version");
    uint64_t phase = wfm_persist_read_uint(r);
    if (phase > SM_ACTION)
        wfm_persist_read_fail(r, "bad StateMachine phase");
    st->phase = (sm_phase)phase;
    st->state = wfm_persist_read_node(r);
    st->transition = wfm_persist_read_node(r);
    st->hops = (unsigned)wfm_persist_read_uint(r);
    bool need_tr = st->phase >= SM_CANCELING;
    if ((st->state && !node_is(st->state, &state_spec)) ||
        (st->transition && !node_is(st->transition, &transition_spec)) ||
        (need_tr && !st->transition))
        wfm_persist_read_fail(r, "StateMachine state names the wrong nodes");
    return WF_OK;
}

/* Append only: saved instances name callbacks by their index here. */
static const void *const state_machine_callbacks[] = {
    (const void *)sm_trigger_done,
    (const void *)sm_entry_done,
    (const void *)sm_exit_done,
    (const void *)sm_action_done,
};

static const wfm_kind_spec state_machine_spec = {
    .name = "StateMachine",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES,
    .props = state_machine_props,
    .prop_count = sizeof state_machine_props / sizeof state_machine_props[0],
    .content_prop = "States",
    .state_size = sizeof(sm_state),
    .execute = state_machine_execute,
    .cancel = cancel_running,
    .callbacks = state_machine_callbacks,
    .callback_count = sizeof state_machine_callbacks / sizeof state_machine_callbacks[0],
    .save = state_machine_save,
    .restore = state_machine_restore,
};
static const wfm_kind_spec state_spec = {
    .name = "State",
    .category = "State",
    .props = state_props,
    .prop_count = sizeof state_props / sizeof state_props[0],
    .prepare = state_prepare,
};
static const wfm_kind_spec transition_spec = {
    .name = "Transition",
    .category = "Transition",
    .props = transition_props,
    .prop_count = sizeof transition_props / sizeof transition_props[0],
};

wf_status wfm_acts_flow_register(wfm_catalogue *cat, wf_error *err)
{
    static const wfm_kind_spec *const specs[] = {
        &flowchart_spec,      &flow_step_spec, &flow_decision_spec, &flow_switch_spec,
        &state_machine_spec, &state_spec,     &transition_spec,
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        wf_status rc = wfm_catalogue_register(cat, specs[i], err);
        if (rc != WF_OK)
            return rc;
    }
    return WF_OK;
}

wf_status wfm_acts_register(wfm_catalogue *cat, wf_error *err)
{
    wf_status rc = wfm_acts_flow_register(cat, err);
    if (rc == WF_OK)
        rc = wfm_acts_fault_register(cat, err);
    if (rc == WF_OK)
        rc = wfm_acts_comp_register(cat, err);
    if (rc == WF_OK)
        rc = wfm_acts_invoke_register(cat, err);
    return rc;
}

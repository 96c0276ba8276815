/* wfc_map_state.c — the converter's rules for state machines: a StateMachineWorkflow
 * becomes a StateMachine, each State a State with Entry/Exit from its initialization and
 * finalization, each EventDriven a Transition whose To is the trailing SetState's target.
 * What the modern StateMachine cannot express is hosted through Interop. */
#include <string.h>

#include "wfc_convert_int.h"

#define W (&c->w)

static bool contains_kind(const wfl_node *n, wfl_kind kind)
{
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *k = wfl_node_child(n, i);
        if (wfc__kind_of(k) == kind || contains_kind(k, kind))
            return true;
    }
    return false;
}

/* EventDriven in a State -> Transition: Trigger = the event, Action = the steps between, To =
 * the trailing SetState's target (no SetState: back to the same state, reviewed). */
static void transition(wfc__conv *c, const wfl_node *state, const wfl_node *ed)
{
    size_t n = wfl_node_child_count(ed);
    const wfl_node *last = n ? wfl_node_child(ed, n - 1) : NULL;
    const char *to = wfl_node_name(state);
    size_t action_end = n;
    wfc__activity(c, ed, "Transition", WFC_ACT_MAPPED);
    if (last && wfc__kind_of(last) == WFL_KIND_SET_STATE) {
        const char *target = wfc__literal_str(c, last, "TargetStateName");
        to = target ? target : to;
        action_end = n - 1;
        wfc__activity(c, last, "Transition.To", WFC_ACT_MAPPED);
    } else {
        wfc__diag(c, WFC_REVIEW, wfl_node_loc(ed), "state-no-setstate",
                  "'%s' ends without SetState: WF3 stays in '%s', the modern transition "
                  "re-enters it (its Entry runs again)",
                  wfl_node_name(ed), to);
    }
    for (size_t i = 1; i < action_end; i++)
        if (wfc__kind_of(wfl_node_child(ed, i)) == WFL_KIND_SET_STATE ||
            contains_kind(wfl_node_child(ed, i), WFL_KIND_SET_STATE))
            wfc__interop_wrap(c, wfl_node_child(ed, i), "a SetState that is not the last step");
    wfc__open_named(c, "Transition", ed);
    wfc_xw_attrf(W, "To", "{x:Reference %s}", to);
    if (n > 0) {
        wfc_xw_open(W, "Transition.Trigger");
        wfc__emit(c, wfl_node_child(ed, 0));
        wfc_xw_close(W);
    }
    if (action_end > 1) {
        wfc_xw_open(W, "Transition.Action");
        wfc_xw_open(W, "Sequence");
        for (size_t i = 1; i < action_end; i++)
            wfc__emit(c, wfl_node_child(ed, i));
        wfc_xw_close(W);
        wfc_xw_close(W);
    }
    wfc_xw_close(W);
}

static void state_phase(wfc__conv *c, const wfl_node *s, wfl_kind kind, const char *elem)
{
    const wfl_node *h = wfc__child_of_kind(s, kind);
    if (!h)
        return;
    wfc__activity(c, h, elem, WFC_ACT_MAPPED);
    if (contains_kind(h, WFL_KIND_SET_STATE))
        wfc__interop_wrap(c, h, "a SetState inside state initialization or finalization");
    wfc__handler_body(c, elem, h);
}

/* The composite states around a leaf state, nearest first. */
typedef struct outer_states {
    const wfl_node *states[16];
    size_t count;
} outer_states;

/* The transitions of leaf state s for the EventDrivens of `owner` (s itself or a composite
 * state around it). An EventDriven of a composite state is written once per leaf below it and
 * reported with the first. */
static bool transitions_of(wfc__conv *c, const wfl_node *s, const wfl_node *owner, bool any)
{
    for (size_t i = 0; i < wfl_node_child_count(owner); i++) {
        const wfl_node *ed = wfl_node_child(owner, i);
        if (wfc__kind_of(ed) != WFL_KIND_EVENT_DRIVEN)
            continue;
        if (!any)
            wfc_xw_open(W, "State.Transitions");
        any = true;
        bool again = c->seen && wf_strmap_get(c->seen, wfl_node_name(ed));
        c->repeat += again;
        transition(c, s, ed);
        c->repeat -= again;
    }
    return any;
}

static void emit_state(wfc__conv *c, const wfl_node *s, const char *completed,
                       const outer_states *up)
{
    wfc__activity(c, s, "State", WFC_ACT_MAPPED);
    wfc_xw_open(W, "State");
    wfc_xw_attr(W, "x:Name", wfl_node_name(s));
    wfc_xw_attr(W, "DisplayName", wfl_node_name(s));
    if (completed && strcmp(completed, wfl_node_name(s)) == 0)
        wfc_xw_attr(W, "IsFinal", "True");
    state_phase(c, s, WFL_KIND_STATE_INITIALIZATION, "State.Entry");
    state_phase(c, s, WFL_KIND_STATE_FINALIZATION, "State.Exit");
    bool any = transitions_of(c, s, s, false);
    for (size_t i = 0; i < up->count; i++)
        any = transitions_of(c, s, up->states[i], any);
    if (any)
        wfc_xw_close(W);
    wfc_xw_close(W);
}

static bool is_composite_state(const wfl_node *s)
{
    for (size_t i = 0; i < wfl_node_child_count(s); i++)
        if (wfc__kind_of(wfl_node_child(s, i)) == WFL_KIND_STATE)
            return true;
    return false;
}

/*
** WF4's StateMachine has no nested states: a composite state is flattened into its leaf
** states (WF3 enters and targets only leaves; a composite holds EventDrivens and states), and
** its EventDrivens, which WF3 handles while the machine is in any state below it, become
** transitions of each of those leaves, after the leaf's own (docs/convert.md).
*/
static void emit_states(wfc__conv *c, const wfl_node *s, const char *completed,
                        const outer_states *up)
{
    if (!is_composite_state(s)) {
        emit_state(c, s, completed, up);
        return;
    }
    wfc__activity(c, s, "(flattened)", WFC_ACT_MAPPED);
    if (up->count == sizeof up->states / sizeof up->states[0]) {
        wfc__diag(c, WFC_ERROR, wfl_node_loc(s), "nesting-limit", "states nest too deep");
        return;
    }
    outer_states inner = {.count = up->count + 1};
    inner.states[0] = s;
    for (size_t i = 0; i < up->count; i++)
        inner.states[i + 1] = up->states[i];
    for (size_t i = 0; i < wfl_node_child_count(s); i++)
        if (wfc__kind_of(wfl_node_child(s, i)) == WFL_KIND_STATE)
            emit_states(c, wfl_node_child(s, i), completed, &inner);
}

static void emit_state_machine(wfc__conv *c, const wfl_node *n)
{
    const char *initial = wfc__literal_str(c, n, "InitialStateName");
    const char *completed = wfc__literal_str(c, n, "CompletedStateName");
    wfc__open_named(c, "StateMachine", n);
    if (initial)
        wfc_xw_attrf(W, "InitialState", "{x:Reference %s}", initial);
    wfc__write_variables(c, n, "StateMachine");
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *k = wfl_node_child(n, i);
        if (wfc__kind_of(k) == WFL_KIND_STATE)
            emit_states(c, k, completed, &(outer_states){.count = 0});
        else
            wfc__interop_wrap(c, k, "an event handler of the whole state machine");
    }
    wfc_xw_close(W);
}

/* Legacy kind -> emitter, modern type reported, action. State, EventDriven and SetState are
 * converted inside the state machine. */
static const wfc__rule state_rules[] = {
    {WFL_KIND_STATE_MACHINE_WORKFLOW, emit_state_machine, "StateMachine", WFC_ACT_MAPPED, NULL, 0},
};

const wfc__family wfc__map_state = {"state", state_rules,
                                    sizeof state_rules / sizeof state_rules[0]};

/* wfl_act_state.c — the state machine: StateMachineWorkflowActivity drives its (nested) states;
 * the active leaf state and its ancestors are Executing, their EventDriven handlers are
 * subscribed by the root, one handler runs at a time in a fresh clone, and SetState only
 * records the target: the move happens when the running EventDriven/StateInitialization
 * closes (StateFinalization, then enter the target; CompletedStateName completes the
 * workflow). The host may force a move through the "SetStateQueue" (docs/semantics.md §3). */
#include "wfl_exec_int.h"

#include <assert.h>
#include <string.h>

/*
** The machine's moves (root xact.count says what runs) and the function making each:
**
**   start                  -> enter InitialStateName          sm_execute -> enter_state
**   enter leaf state S     -> run S's StateInitialization     enter_state -> run_clone (SM_INIT)
**                          -> or subscribe S's handlers       enter_state -> for_each_handler
**   event on a queue       -> run that EventDriven's clone    sm_queue_item -> run_clone (SM_EVENT)
**   clone closed, no target-> subscribe again                 sm_clone_closed
**   clone closed, target T -> StateFinalization of S          transition -> run_clone (SM_FINAL)
**   finalization closed    -> leave S (and ancestors not
**                             shared with T), enter T         sm_clone_closed -> transition
**   SetStateQueue item     -> as a SetState to its value      sm_queue_item -> transition
**   enter CompletedStateName -> the workflow closes           enter_state -> complete_machine
*/

#define SET_STATE_QUEUE "SetStateQueue"

/* Root xact use: cursor = node index of the current leaf state (-1 none), aux = node index of
 * the requested next state (-1 none), count = what the running clone is (SM_*). */
enum { SM_IDLE = 0, SM_INIT, SM_EVENT, SM_FINAL };

static wfl_act *sm_root(wfl_act *act)
{
    for (wfl_act *a = act; a; a = wfl_act_parent(a))
        if (wfl_act_type(a)->kind == WFL_KIND_STATE_MACHINE_WORKFLOW)
            return a;
    return NULL;
}

static wfl_act *state_at(wfl_exec *ex, int32_t index)
{
    return index < 0 ? NULL : wfl_inst_act_at(ex->inst, (size_t)index);
}

static wfl_act *child_of_kind(wfl_act *state, wfl_kind kind)
{
    for (size_t i = 0; i < wfl_act_child_count(state); i++)
        if (wfl_act_type(wfl_act_child(state, i))->kind == kind)
            return wfl_act_child(state, i);
    return NULL;
}

static const char *meta_name(const wfl_act *act, const char *dp)
{
    const wfl_pval *pv = wfl__pval(act, dp);
    return pv && pv->kind == WFL_PV_LITERAL ? wf_value_str(&pv->u.literal) : "";
}

static int32_t state_index(wfl_exec *ex, const char *name)
{
    const wfl_node *n = wfl_def_find_node(ex->def, name);
    return n && (n->type->kind == WFL_KIND_STATE) ? (int32_t)n->index : -1;
}

static bool fail_state(wfl_exec *ex, wfl_act *act, const char *what, const char *name)
{
    wf_error e = WF_ERROR_INIT;
    wf_error_set(&e, WF_E_NAME, &wfl_act_node(act)->loc, "%s: no leaf state named '%s'", what,
                 name);
    wfl__throw_error(ex, act, &e, NULL);
    return false;
}

/* ---- subscriptions: every EventDriven of the current state and its ancestors --------------- */
static void for_each_handler(wfl_exec *ex, wfl_act *root, bool subscribe)
{
    xact *x = wfl_act_exec(root);
    for (wfl_act *s = state_at(ex, x->cursor); s; s = wfl_act_parent(s)) {
        for (size_t i = 0; i < wfl_act_child_count(s); i++) {
            wfl_act *c = wfl_act_child(s, i);
            if (wfl_act_type(c)->kind != WFL_KIND_EVENT_DRIVEN || !wfl__is_body_child(c))
                continue;
            wfl_act *ev = wfl_act_child(c, 0);
            if (!ev || !wfl__is_event_act(ev))
                continue;
            if (subscribe) {
                wfl__event_subscribe(ex, ev, root);
                xact *evx = wfl_act_exec(ev);
                xqueue *q = evx ? wfl__queue_by_id(ex, evx->queue_id) : NULL;
                if (q && q->item_count) /* arrived while another handler ran */
                    wfl__schedule(ex, WI_QUEUE, root, NULL, q->id);
            } else
                wfl__event_unsubscribe(ex, ev, root);
        }
        if (s == root)
            break;
    }
}

/* Run a clone of `tmpl` (StateInitialization, StateFinalization or an EventDriven). */
static bool run_clone(wfl_exec *ex, wfl_act *root, wfl_act *tmpl, int what, uint32_t queue_id)
{
    /* one clone at a time: every caller starts one only when none runs (SM_IDLE) */
    assert(((const xact *)wfl_act_exec(root))->count == SM_IDLE && what != SM_IDLE);
    wfl_act *clone = wfl__clone(ex, tmpl);
    if (!clone)
        return false;
    if (queue_id) {
        xact *fx = wfl__state(ex, wfl_act_child(clone, 0));
        if (!fx)
            return false;
        fx->queue_id = queue_id;
    }
    ((xact *)wfl_act_exec(root))->count = what;
    wfl__execute(ex, clone);
    return true;
}

static void set_active(wfl_exec *ex, wfl_act *state, bool active)
{
    if (active) {
        wfl_act_set_result(state, WFL_RES_NONE);
        wfl__state(ex, state);
        wfl__reenter(ex, state);
        wfl__set_status(ex, state, WFL_ST_EXECUTING);
    } else {
        wfl_act_set_result(state, WFL_RES_SUCCEEDED);
        wfl__set_status(ex, state, WFL_ST_CLOSED);
    }
}

static void complete_machine(wfl_exec *ex, wfl_act *root)
{
    xqueue *q = wfl__queue_by_name(ex, SET_STATE_QUEUE);
    if (q)
        wfl__queue_delete(ex, q->id);
    if (wfl__raise_event(ex, root, "Completed"))
        wfl__close(ex, root);
}

/* Enter leaf state `target` (its inactive ancestors first), then StateInitialization or
 * subscribe; entering CompletedStateName completes the workflow. */
static void enter_state(wfl_exec *ex, wfl_act *root, wfl_act *target)
{
    xact *x = wfl_act_exec(root);
    wfl_act *chain[64];
    size_t n = 0;
    for (wfl_act *s = target; s && s != root && n < 64; s = wfl_act_parent(s))
        if (wfl_act_status(s) != WFL_ST_EXECUTING)
            chain[n++] = s;
    while (n)
        set_active(ex, chain[--n], true);
    x->cursor = (int32_t)wfl_act_node(target)->index;
    x->aux = -1;
    x->count = SM_IDLE;
    if (strcmp(meta_name(root, "CompletedStateName"), wfl_act_name(target)) == 0) {
        complete_machine(ex, root);
        return;
    }
    wfl_act *init = child_of_kind(target, WFL_KIND_STATE_INITIALIZATION);
    if (init && wfl__is_body_child(init)) {
        run_clone(ex, root, init, SM_INIT, 0);
        return;
    }
    for_each_handler(ex, root, true);
}

static bool is_ancestor_or_self(const wfl_act *anc, const wfl_act *act)
{
    for (const wfl_act *a = act; a; a = wfl_act_parent(a))
        if (a == anc)
            return true;
    return false;
}

/* Leave the current state for x->aux: StateFinalization first (when not done yet). */
static void transition(wfl_exec *ex, wfl_act *root, bool finalized)
{
    xact *x = wfl_act_exec(root);
    wfl_act *cur = state_at(ex, x->cursor);
    wfl_act *target = state_at(ex, x->aux);
    for_each_handler(ex, root, false);
    wfl_act *fin = cur && !finalized ? child_of_kind(cur, WFL_KIND_STATE_FINALIZATION) : NULL;
    if (fin && wfl__is_body_child(fin)) {
        run_clone(ex, root, fin, SM_FINAL, 0);
        return;
    }
    for (wfl_act *s = cur; s && s != root && !is_ancestor_or_self(s, target); s = wfl_act_parent(s))
        set_active(ex, s, false);
    enter_state(ex, root, target);
}

/* A clone (initialization, finalization or event handler) closed. */
static void sm_clone_closed(wfl_exec *ex, wfl_act *root)
{
    xact *x = wfl_act_exec(root);
    int what = x->count;
    x->count = SM_IDLE;
    if (what == SM_FINAL) {
        transition(ex, root, true);
        return;
    }
    if (x->aux >= 0) {
        transition(ex, root, false);
        return;
    }
    for_each_handler(ex, root, true);
}

static void state_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    (void)child;
    wfl_act *root = sm_root(act);
    if (root && wfl_act_status(root) == WFL_ST_EXECUTING && wfl_act_is_clone_root(child))
        sm_clone_closed(ex, root);
}

static wfl_status sm_execute(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    x->cursor = x->aux = -1;
    if (!wfl__raise_event(ex, act, "Initialized"))
        return WFL_ST_FAULTING;
    const char *initial = meta_name(act, "InitialStateName");
    int32_t idx = state_index(ex, initial);
    if (idx < 0) {
        fail_state(ex, act, "InitialStateName", initial);
        return WFL_ST_FAULTING;
    }
    xqueue *q = wfl__queue_create(ex, SET_STATE_QUEUE, false);
    if (!q || !wfl__queue_subscribe(ex, q, act))
        return WFL_ST_FAULTING;
    enter_state(ex, act, state_at(ex, idx));
    return WFL_ST_EXECUTING;
}

/* An event for one of the current handlers, or a host SetState. */
static void sm_queue_item(wfl_exec *ex, wfl_act *act, xqueue *q)
{
    xact *x = wfl_act_exec(act);
    if (x->count != SM_IDLE || wfl_act_status(act) != WFL_ST_EXECUTING || !q->item_count)
        return; /* one handler at a time; the item waits in its queue */
    if (strcmp(q->name, SET_STATE_QUEUE) == 0) {
        wf_value item;
        if (!wfl__queue_dequeue(q, &item))
            return;
        int32_t idx = state_index(ex, wf_value_str(&item));
        bool ok = idx >= 0 || fail_state(ex, act, "SetState", wf_value_str(&item));
        wf_value_release(&item);
        if (ok) {
            x->aux = idx;
            transition(ex, act, false);
        }
        return;
    }
    for (wfl_act *s = state_at(ex, x->cursor); s; s = wfl_act_parent(s)) {
        for (size_t i = 0; i < wfl_act_child_count(s); i++) {
            wfl_act *c = wfl_act_child(s, i);
            wfl_act *ev =
                wfl_act_type(c)->kind == WFL_KIND_EVENT_DRIVEN ? wfl_act_child(c, 0) : NULL;
            xact *evx = ev ? wfl_act_exec(ev) : NULL;
            if (!evx || evx->queue_id != q->id)
                continue;
            wfl__queue_unsubscribe(ex, q, act);
            run_clone(ex, act, c, SM_EVENT, q->id);
            return;
        }
        if (s == act)
            break;
    }
}

static void sm_stop(wfl_exec *ex, wfl_act *act)
{
    for_each_handler(ex, act, false);
    xqueue *q = wfl__queue_by_name(ex, SET_STATE_QUEUE);
    if (q)
        wfl__queue_delete(ex, q->id);
}

static void sm_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    if (wfl_act_is_clone_root(child))
        sm_clone_closed(ex, act);
}

const wfl_kind_ops wfl_ops_state_machine = {sm_execute, sm_stop, sm_child_closed, sm_queue_item};

static bool is_state_or_none(wfl_exec *ex, int32_t index)
{
    wfl_act *s = state_at(ex, index);
    return index == -1 || (s && wfl_act_type(s)->kind == WFL_KIND_STATE);
}

/* cursor / aux: the current / requested state, each a State node or -1; count: SM_*. */
const char *wfl__check_state_machine(wfl_exec *ex, wfl_act *act, const xact *x)
{
    (void)act;
    if (!is_state_or_none(ex, x->cursor) || !is_state_or_none(ex, x->aux))
        return "a state machine's current or next state is not a State";
    if (x->count < SM_IDLE || x->count > SM_FINAL)
        return "a state machine's running handler is unknown";
    return NULL;
}

/* A State is never executed on its own: the machine activates it. */
static wfl_status state_execute(wfl_exec *ex, wfl_act *act)
{
    (void)ex;
    (void)act;
    return WFL_ST_EXECUTING;
}

const wfl_kind_ops wfl_ops_state = {state_execute, NULL, state_child_closed, NULL};

/* ---- SetState: record the target on the machine -----------------------------------------------
 */
static wfl_status set_state_execute(wfl_exec *ex, wfl_act *act)
{
    wfl_act *root = sm_root(act);
    const char *target = meta_name(act, "TargetStateName");
    int32_t idx = state_index(ex, target);
    if (!root || idx < 0) {
        fail_state(ex, act, "SetState", target);
        return WFL_ST_FAULTING;
    }
    xact *rx = wfl__state(ex, root);
    if (!rx)
        return WFL_ST_FAULTING;
    rx->aux = idx;
    return WFL_ST_CLOSED;
}

const wfl_kind_ops wfl_ops_set_state = {set_state_execute, NULL, NULL, NULL};

/* wfm__track_sched.c — turns scheduler events and instance state changes into tracking
 * records (docs/semantics.md §5 "Tracking": Sequence{WriteLine} gives Started, Scheduled(Sequence),
 * Scheduled(WriteLine), Closed(WriteLine), Closed(Sequence), Completed). */
#include "wfm_track_int.h"

static wfm_track_record base(const wfm__track_target *to, wfm_rec_kind kind)
{
    wfm_track_record r = {0};
    r.kind = kind;
    r.instance_id = to->instance_id;
    r.seq = ++*to->seq;
    r.time_us = to->now_us;
    return r;
}

void wfm__track_instance(const wfm__track_target *to, const char *state, const wf_value *fault)
{
    if (!wfm_tracker_wants(to->tracker, WFM_REC_INSTANCE))
        return;
    if (!fault && wfm__tracker_emit_instance(to, state))
        return;
    wfm_track_record r = base(to, WFM_REC_INSTANCE);
    r.state = state;
    r.fault = fault;
    wfm_tracker_emit(to->tracker, &r);
}

void wfm__track_run_end(const wfm__track_target *to, wfm__sched_state state, const wf_value *fault)
{
    switch (state) {
    case WFM__SCHED_IDLE:
        wfm__track_instance(to, "Idle", NULL);
        break;
    case WFM__SCHED_CLOSED:
        wfm__track_instance(to, "Completed", NULL);
        break;
    case WFM__SCHED_FAULTED:
        wfm__track_instance(to, "UnhandledException", fault);
        wfm__track_instance(to, "Faulted", fault);
        break;
    case WFM__SCHED_CANCELED:
        wfm__track_instance(to, "Canceled", NULL);
        break;
    case WFM__SCHED_TERMINATED:
        wfm__track_instance(to, "Terminated", fault);
        break;
    default:
        break;
    }
}

static const char *name_of(const wfm_ai *ai)
{
    return ai ? wfm_node_display_name(ai->node) : NULL;
}

static const char *id_of(const wfm_ai *ai)
{
    return ai ? wfm_node_id(ai->node) : NULL;
}

static const char *closed_state(const wfm_ai *ai)
{
    switch (ai->status) {
    case WFM_CANCELED:
        return "Canceled";
    case WFM_FAULTED:
        return "Faulted";
    default:
        return "Closed";
    }
}

/* ActivityState with the activity's own variables (the profile, or the plan's data bit for
 * the state, decides whether they stay), after wfm__tracker_emit_activity declined it. Out of
 * line: its frame (the variables' names) is not the fast path's to pay. */
static __attribute__((noinline)) void activity_state(const wfm__track_target *to,
                                                     const wfm_ai *ai, const char *state,
                                                     unsigned state_bit)
{
    unsigned mask = 0;
    int data = -1; /* whether the record keeps variables; -1: the profile is to say */
    if (wfm__track_plan_decides(to->plan, ai->node, &mask))
        data = ((mask >> WFM__PLAN_DATA_SHIFT) & state_bit) != 0;
    else if (wfm__tracker_data_states(to->tracker) >= 0)
        data = ((unsigned)wfm__tracker_data_states(to->tracker) & state_bit) != 0;
    if ((data == 0 || (data == 1 && (!ai->node->var_count || !ai->venv.slots))) &&
        wfm__tracker_emit_node(to, WFM_REC_ACTIVITY_STATE, state_bit, ai->node, NULL))
        return;
    wfm_track_record r = base(to, WFM_REC_ACTIVITY_STATE);
    r.state = state;
    r.activity = name_of(ai);
    r.activity_id = id_of(ai);
    const char *names[32];
    uint32_t n = ai->node->var_count;
    if (n > 0 && n <= 32 && ai->venv.slots) {
        for (uint32_t i = 0; i < n; i++)
            names[i] = ai->node->vars[i].name;
        r.data_names = names;
        r.data_values = ai->venv.slots;
        r.data_count = n;
    }
    if (data >= 0)
        wfm__tracker_emit_kept(to->tracker, &r, data);
    else
        wfm_tracker_emit(to->tracker, &r);
}

static wfm_rec_kind kind_of(wfm__track_event ev)
{
    switch (ev) {
    case WFM__TRACK_SCHEDULED:
        return WFM_REC_ACTIVITY_SCHEDULED;
    case WFM__TRACK_CANCEL_REQ:
        return WFM_REC_CANCEL_REQUESTED;
    case WFM__TRACK_FAULT:
        return WFM_REC_FAULT_PROPAGATION;
    case WFM__TRACK_RESUMED:
        return WFM_REC_BOOKMARK_RESUMPTION;
    case WFM__TRACK_CUSTOM:
        return WFM_REC_CUSTOM;
    default:
        return WFM_REC_ACTIVITY_STATE;
    }
}

static unsigned act_state_bit(wfm__track_event ev, const wfm_ai *ai)
{
    if (ev == WFM__TRACK_EXECUTING)
        return WFM_ACT_EXECUTING;
    switch (ai->status) {
    case WFM_CANCELED:
        return WFM_ACT_CANCELED;
    case WFM_FAULTED:
        return WFM_ACT_FAULTED;
    default:
        return WFM_ACT_CLOSED;
    }
}

bool wfm__track_sched_wanted(const wfm_tracker *t, const wfm__track_plan *plan,
                             wfm__track_event ev, const wfm_ai *ai)
{
    wfm_rec_kind kind = kind_of(ev);
    if (!wfm_tracker_wants(t, kind))
        return false;
    unsigned bit = kind == WFM_REC_ACTIVITY_STATE        ? act_state_bit(ev, ai)
                   : kind == WFM_REC_FAULT_PROPAGATION ? WFM__PLAN_FAULT | WFM__PLAN_FAULT_ASK
                                                       : 0;
    if (kind == WFM_REC_ACTIVITY_STATE && !wfm_tracker_wants_activity(t, bit))
        return false;
    unsigned mask = 0;
    return !bit || !wfm__track_plan_decides(plan, ai->node, &mask) || (mask & bit);
}

unsigned wfm__track_sched_mask(const wfm_tracker *t)
{
    static const wfm_rec_kind kinds[WFM__TRACK_EVENT_COUNT] = {
        [WFM__TRACK_SCHEDULED] = WFM_REC_ACTIVITY_SCHEDULED,
        [WFM__TRACK_CANCEL_REQ] = WFM_REC_CANCEL_REQUESTED,
        [WFM__TRACK_FAULT] = WFM_REC_FAULT_PROPAGATION,
        [WFM__TRACK_RESUMED] = WFM_REC_BOOKMARK_RESUMPTION,
        [WFM__TRACK_CUSTOM] = WFM_REC_CUSTOM,
    };
    unsigned mask = 0;
    for (unsigned ev = 0; ev < WFM__TRACK_EVENT_COUNT; ev++)
        if (kinds[ev] != WFM_REC_INSTANCE && wfm_tracker_wants(t, kinds[ev]))
            mask |= 1u << ev;
    if (wfm_tracker_wants_activity(t, WFM_ACT_EXECUTING))
        mask |= 1u << WFM__TRACK_EXECUTING;
    if (wfm_tracker_wants_activity(t, WFM_ACT_CLOSED))
        mask |= WFM__TRACK_BIT_CLOSED;
    if (wfm_tracker_wants_activity(t, WFM_ACT_FAULTED))
        mask |= WFM__TRACK_BIT_CLOSED_FAULTED;
    if (wfm_tracker_wants_activity(t, WFM_ACT_CANCELED))
        mask |= WFM__TRACK_BIT_CLOSED_CANCELED;
    return mask;
}

static void other_event(const wfm__track_target *to, wfm__track_event ev, const wfm_ai *ai,
                        const wfm_ai *handler, const char *name, const wf_value *value);

/* ActivityState records, the common case, first and alone: the other events' frames are
 * other_event's. */
void wfm__track_sched(const wfm__track_target *to, wfm__track_event ev, const wfm_ai *ai,
                      const wfm_ai *handler, const char *name, const wf_value *value)
{
    if (ev != WFM__TRACK_EXECUTING && ev != WFM__TRACK_CLOSED) {
        other_event(to, ev, ai, handler, name, value);
        return;
    }
    unsigned bit = act_state_bit(ev, ai);
    bool has_vars = ai->node->var_count && ai->venv.slots;
    if (!wfm__tracker_emit_activity(to, ai->node, bit, has_vars))
        activity_state(to, ai, ev == WFM__TRACK_EXECUTING ? "Executing" : closed_state(ai), bit);
}

/* ActivityScheduled, CancelRequested, FaultPropagation, BookmarkResumption and custom
 * records. */
static __attribute__((noinline)) void other_event(const wfm__track_target *to,
                                                  wfm__track_event ev, const wfm_ai *ai,
                                                  const wfm_ai *handler, const char *name,
                                                  const wf_value *value)
{
    wfm_rec_kind kind = kind_of(ev); /* the caller made sure the tracker wants it */
    if ((ev == WFM__TRACK_SCHEDULED || ev == WFM__TRACK_CANCEL_REQ) &&
        wfm__tracker_data_states(to->tracker) >= 0 && /* no names to match */
        wfm__tracker_emit_node(to, kind, 0, ai->parent ? ai->parent->node : NULL, ai->node))
        return;
    wfm_track_record r = base(to, kind);
    if (ev == WFM__TRACK_CUSTOM) {
        const char *names[16];
        wf_value values[16];
        size_t n = value && value->type->kind == WF_K_RECORD ? wf_value_record_count(value) : 0;
        for (size_t i = 0; i < n && i < 16; i++) {
            names[i] = wf_value_record_key(value, i);
            values[i] = *wf_value_record_at(value, i);
        }
        r.activity = name_of(ai);
        r.activity_id = id_of(ai);
        r.name = name;
        r.data_names = names;
        r.data_values = values;
        r.data_count = n < 16 ? n : 16;
        wfm_tracker_emit(to->tracker, &r);
        return;
    }
    if (ev == WFM__TRACK_SCHEDULED || ev == WFM__TRACK_CANCEL_REQ) {
        r.activity = name_of(ai->parent); /* the scheduling (or canceling) parent */
        r.activity_id = id_of(ai->parent);
        r.child = name_of(ai);
        r.child_id = id_of(ai);
    } else {
        r.activity = name_of(ai); /* fault source, or the bookmark's owner */
        r.activity_id = id_of(ai);
        r.name = name;
        if (ev == WFM__TRACK_FAULT) {
            r.child = name_of(handler); /* NULL: no fault callback handles it */
            r.child_id = id_of(handler);
            r.fault = value;
        } else {
            r.payload = value;
        }
    }
    unsigned mask = 0;
    if (ev == WFM__TRACK_FAULT && wfm__track_plan_decides(to->plan, ai->node, &mask) &&
        (mask & WFM__PLAN_FAULT))
        wfm__tracker_emit_kept(to->tracker, &r, false); /* kept whatever the handler */
    else
        wfm_tracker_emit(to->tracker, &r);
}

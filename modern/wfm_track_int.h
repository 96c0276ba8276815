/* wfm_track_int.h — the bridge between the runtime and the tracker (modern/ only): instance
 * lifecycle records emitted by wfm_runtime.c, and the scheduler's wfm__track_event hook turned
 * into WF4 records. Every function starts with one wfm_tracker_wants() test, so a runtime
 * without a tracker pays a branch per event. */
#ifndef WFM_TRACK_INT_H
#define WFM_TRACK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "wfm_definition.h"
#include "wfm_sched_int.h"
#include "wfm_track.h"

/* A run's records are published together (one atomic ticket, no lock) at the outermost
 * batch end of the emitting thread; outside a batch each record is published at once.
 * NULL-safe, free without participants or with profile "none". */
void wfm__tracker_batch_begin(wfm_tracker *tracker);
void wfm__tracker_batch_end(wfm_tracker *tracker);
/* Whether the profile's kinds and ActivityState masks decide alone (no name patterns, no
 * states but ActivityState's four); *data_states: the WFM_ACT_* states keeping variables. */
bool wfm__profile_plain(const wfm_profile *profile, unsigned *data_states);
/* Emit a record the caller already decided the profile keeps (a plan's bit), with or without
 * its variables: wfm_tracker_emit without matching it again. */
void wfm__tracker_emit_kept(wfm_tracker *tracker, const wfm_track_record *rec, bool want_data);

/* A profile with name patterns compiled against one definition: per node (by index), whether
 * its ActivityState records in each of the four states pass (bits WFM_ACT_*), which of them
 * keep variables (those bits << WFM__PLAN_DATA_SHIFT) and whether the FaultPropagation
 * records it is the source of pass whatever their handler (WFM__PLAN_FAULT) or by their
 * handler's name (WFM__PLAN_FAULT_ASK: matched per record), each decided once by
 * wfm_profile_match on the record the node would give, so events of those kinds cost one
 * mask test. Owned by the tracker until
 * wfm_tracker_destroy and shared by definitions of the same content (display names follow
 * from the file). */
typedef struct wfm__track_plan wfm__track_plan;
enum { WFM__PLAN_DATA_SHIFT = 4, WFM__PLAN_FAULT = 1u << 8, WFM__PLAN_FAULT_ASK = 1u << 9 };
/* Whether some query of `kind` names a child (FaultPropagation: a handler) other than "*". */
bool wfm__profile_names_child(const wfm_profile *profile, wfm_rec_kind kind);
/* The plan of def, compiled on first use (the runtime asks at load and at instance
 * creation); it also holds every node's display name and id, rendered as JSON strings, which
 * the tracker's thread reads for wfm__tracker_emit_node's records (so the plan exists for
 * every profile that keeps something). NULL without a tracker, with profile "none" or out of
 * memory; every caller then takes the matching path, so NULL is never wrong. */
const wfm__track_plan *wfm__track_plan_get(wfm_tracker *tracker, const wfm_definition *def);
/* The node's bits into *mask: true when the plan decides for it; false without a plan, when
 * the tracker's masks decide alone (no names) or for an index beyond the plan's nodes (the
 * record is then matched as without a plan). */
bool wfm__track_plan_decides(const wfm__track_plan *plan, const wfm_node *node, unsigned *mask);

/* now_us of a target whose runtime keeps the real clock: the tracker stamps each record
 * itself, from a cheap clock (wfm__tracker_emit_node), or CLOCK_REALTIME for the others. */
#define WFM__TRACK_NOW INT64_MIN

/* Where one instance's records go: its tracker, id and record counter. */
typedef struct wfm__track_target {
    wfm_tracker *tracker; /* borrowed; NULL: no tracking */
    const wfm__track_plan *plan; /* the tracker's plan of the instance's definition, or NULL */
    const char *instance_id; /* WF_ID_LEN + 1 bytes (the instance's buffer) */
    uint64_t *seq;        /* the instance's record counter */
    int64_t now_us;       /* the runtime's clock, or WFM__TRACK_NOW */
    const wfm_definition *def; /* the instance's: the plan's node indexes are its nodes' */
} wfm__track_target;

/* The fast path of a record the caller already decided the profile keeps, without values:
 * ActivityState (state: one WFM_ACT_* bit), ActivityScheduled or CancelRequested (state 0),
 * `activity` and `child` nodes of to->def or NULL. A fixed 32-byte entry goes into the
 * emitting thread's buffer, with the node indexes in place of their names and ids (the
 * tracker's thread reads them in the plan) and the instance id once per run. Numbers the
 * record (++*to->seq) and returns true; false, having done nothing, when the plan cannot
 * name a node (the caller then builds the record: wfm__tracker_emit_kept). */
bool wfm__tracker_emit_node(const wfm__track_target *to, wfm_rec_kind kind, unsigned state,
                            const wfm_node *activity, const wfm_node *child);
/* The fast path of an ActivityState record of node (state_bit: one WFM_ACT_* bit) in one
 * call: the plan's bits, or a plain profile's masks, say whether it keeps variables (when
 * has_vars: the activity has some); true, the record numbered and queued, when it keeps none
 * (wfm__tracker_emit_node's fixed entry); false, having done nothing, when the caller must
 * build the record (variables, a profile matching names without a plan's answer). */
bool wfm__tracker_emit_activity(const wfm__track_target *to, const wfm_node *node,
                                unsigned state_bit, bool has_vars);
/* The fast path of a WorkflowInstance record without a fault the tracker wants (its kind):
 * kept by a plain profile whatever its state; false, having done nothing, for a profile with
 * names or a state without a number (the caller then builds it: wfm_tracker_emit). */
bool wfm__tracker_emit_instance(const wfm__track_target *to, const char *state);
/* Plain profile (wfm__profile_plain): the WFM_ACT_* states whose records keep variables;
 * -1 when the profile has name patterns (records are then matched, or decided by the plan).
 * With a plain profile, an event whose wfm__track_sched_mask bit is set is wanted. */
int wfm__tracker_data_states(const wfm_tracker *tracker);

/* A WorkflowInstance record: state "Started", "Idle", "Completed", ... */
void wfm__track_instance(const wfm__track_target *to, const char *state, const wf_value *fault);
/* Whether the tracker could keep the record for this scheduler event: one to three bit tests
 * (the plan's, when there is one), made before the caller reads the clock or formats an id. */
bool wfm__track_sched_wanted(const wfm_tracker *tracker, const wfm__track_plan *plan,
                             wfm__track_event ev, const wfm_ai *ai);
/* The scheduler events (wfm__sched_host.track_mask bits) the tracker's profile can keep:
 * 0 without a tracker or with profile "none". */
unsigned wfm__track_sched_mask(const wfm_tracker *tracker);
/* The scheduler's hook (wfm__sched_host.track) mapped to ActivityScheduled, ActivityState,
 * CancelRequested, FaultPropagation (source ai, `handler` or none) and BookmarkResumption
 * records, for an event wfm__track_sched_wanted said the tracker could keep. */
void wfm__track_sched(const wfm__track_target *to, wfm__track_event ev, const wfm_ai *ai,
                      const wfm_ai *handler, const char *name, const wf_value *value);
/* The instance record for the state a run ended in (Idle, Completed, Faulted, ...), with
 * UnhandledException first for a fault. */
void wfm__track_run_end(const wfm__track_target *to, wfm__sched_state state, const wf_value *fault);

#endif

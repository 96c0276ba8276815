/* wfm_acts.h — registration of the modern runtime's structured activities: Flowchart
 * (FlowStep, FlowDecision, FlowSwitch), StateMachine (State, Transition), TryCatch (Catch),
 * Throw, Rethrow, TerminateWorkflow, CancellationScope, CompensableActivity, Compensate,
 * Confirm, InvokeMethod and TransactionScope (docs/semantics.md §5). Internal to modern/:
 * wfm__builtins_register calls wfm_acts_register once while the catalogue is being filled. */
#ifndef WFM_ACTS_H
#define WFM_ACTS_H

#include "../common/wf_error.h"
#include "wfm_activity.h"

/* Register every kind above in `cat` (static specs). WF_E_STATE if one is already there. */
wf_status wfm_acts_register(wfm_catalogue *cat, wf_error *err);

/* Per-file registration, called by wfm_acts_register (wfm_act_flow.c, wfm_act_fault.c,
 * wfm_act_comp.c, wfm_act_invoke.c). */
wf_status wfm_acts_flow_register(wfm_catalogue *cat, wf_error *err);
wf_status wfm_acts_fault_register(wfm_catalogue *cat, wf_error *err);
wf_status wfm_acts_comp_register(wfm_catalogue *cat, wf_error *err);
wf_status wfm_acts_invoke_register(wfm_catalogue *cat, wf_error *err);
/* NoPersistScope, the collection activities and InvokeAction (wfm_act_coll.c), called by
 * wfm__builtins_register. */
wf_status wfm_acts_coll_register(wfm_catalogue *cat, wf_error *err);
/* Persist (wfm_act_persist.c), called by wfm__builtins_register. */
wf_status wfm_act_persist_register(wfm_catalogue *cat, wf_error *err);
/* The core kinds (wfm_act_core.c): Sequence, Assign, WriteLine, If, While, DoWhile, ForEach,
 * ParallelForEach, Parallel, Switch, Delay, Pick, PickBranch, WaitForEvent; called by
 * wfm__builtins_register. */
wf_status wfm_acts_core_register(wfm_catalogue *cat, wf_error *err);

#endif

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
/* The wrapper of an expanded XAML activity type (docs/architecture.md "XAML activity types"):
 * an internal kind no XAML element names. Its variables are the type's arguments (an
 * environment of their own, so the body sees nothing of the caller), Arguments holds one
 * parameter per bound attribute (compiled in the caller's scope, one hop up from the wrapper's
 * environment) and the node data is a uint32_t array: the variable slot of each parameter. */
#define WFM__NS_ACTTYPE "urn:wfbridge:activity-type"
enum { WFM__TYPE_ARGS, WFM__TYPE_BODY };
/* Its registration (wfm_act_type.c), called by wfm__builtins_register. */
wf_status wfm_act_type_register(wfm_catalogue *cat, wf_error *err);
/* Receive and SendReply (wfm_act_msg.c, wfm_msg.h), called by wfm__builtins_register. */
wf_status wfm_act_msg_register(wfm_catalogue *cat, wf_error *err);
/* Send and ReceiveReply (wfm_act_send.c), called by wfm__builtins_register. */
wf_status wfm_act_send_register(wfm_catalogue *cat, wf_error *err);
/* The core kinds (wfm_act_core.c): Sequence, Assign, WriteLine, If, While, DoWhile, ForEach,
 * ParallelForEach, Parallel, Switch, Delay, Pick, PickBranch, WaitForEvent; called by
 * wfm__builtins_register. */
wf_status wfm_acts_core_register(wfm_catalogue *cat, wf_error *err);

#endif

/* wfl_exec_int.h — the executor's internals shared by wfl_exec*.c and the activity behaviours
 * in wfl_act_*.c (no other folder includes this). Every activity instance (wfl_act) carries an
 * xact with the executor's state for it; behaviours are one wfl_kind_ops row per built-in kind
 * and request every status move through the wfl__* functions (docs/semantics.md §4). */
#ifndef WFL_EXEC_INT_H
#define WFL_EXEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "wfl_def_int.h"
#include "wfl_inst_int.h"
#include "wfl_exec.h"

/* Sub-phases of the non-executing states (xact.phase). */
enum {
    XP_NONE = 0,
    XP_CANCEL_CHILDREN, /* Canceling/Faulting: waiting for running children to close */
    XP_HANDLER,         /* running FaultHandlers / CancellationHandler / CompensationHandler */
    XP_DEFAULT_COMP,    /* default compensation of completed children, newest first */
};

/* xact.flags */
#define XF_KEEP_CONTEXT 0x01u /* a closed clone kept for compensation */
#define XF_STARTED      0x02u /* kind-specific: the activity did its first step */
#define XF_HANDLED      0x04u /* Faulting: a FaultHandler took the exception */
#define XF_BUSY         0x08u /* state machine: an EventDriven is running */

/* The executor's state for one activity instance (the wfl_act exec pointer). */
typedef struct xact {
    uint32_t phase;    /* XP_* while Canceling/Faulting/Compensating */
    uint32_t flags;    /* XF_* */
    int32_t cursor;    /* Sequence: next child; IfElse: chosen branch; loops: iterations */
    int32_t aux;       /* Replicator: next data index / a clone's data index; misc */
    int32_t count;     /* children or contexts running */
    uint32_t memo;     /* kind-specific, not saved (0 after a restore): Replicator REP_* */
    uint32_t queue_id; /* event activities: the queue they created (0 = none) */
    uint64_t order;    /* completion order when closed Succeeded (0 = never) */
    wf_value exc;      /* Faulting: the current exception; closed Faulted: propagating */
    wf_loc exc_at;     /* the activity that first raised exc (not saved: file NULL after a
                          restore) */
    wf_value val;      /* kind-specific: Replicator data, state machine next state, ... */
    wfl_act *listener; /* who hears this activity close (NULL = its parent) */
    wfl_exec *nested;  /* a composite type-library activity: its body's executor (owned) */
} xact;

/* Work items. */
typedef enum wi_kind {
    WI_EXECUTE,    /* Initialized -> Executing */
    WI_CANCEL,     /* Executing -> Canceling */
    WI_FAULT,      /* Faulting: cancel children, then FaultHandlers */
    WI_COMPENSATE, /* Closed -> Compensating */
    WI_CLOSED,     /* act hears that child closed */
    WI_QUEUE,      /* an item is available on queue `arg` for subscriber act */
} wi_kind;

typedef struct work_item {
    wi_kind kind;
    wfl_act *act;
    wfl_act *child; /* WI_CLOSED */
    uint32_t arg;   /* WI_QUEUE: queue id */
} work_item;

typedef struct wi_queue {
    work_item *items;
    size_t head, count, cap;
} wi_queue;

/* A workflow queue (WorkflowQueuingService). */
typedef struct xqueue {
    uint32_t id;
    char *name;      /* owned */
    bool is_timer;   /* a Delay's queue */
    wf_value *items; /* FIFO */
    size_t item_count, item_cap;
    wfl_act **subs; /* subscribers, first served first */
    size_t sub_count, sub_cap;
} xqueue;

typedef struct xtimer {
    int64_t due_us;
    uint32_t queue_id;
    uint64_t seq; /* creation order: equal due times fire first-come first-served */
} xtimer;

/* A member of the root found by name: the name's address, the root type it was found on and
 * the DP's index there (wfl_act_native.c root_member). */
typedef struct member_memo {
    const char *name;
    const wfl_type *type;
    size_t index;
} member_memo;

struct wfl_exec {
    const wfl_definition *def; /* borrowed */
    wfl_inst *inst;            /* owned */
    wfl_act *root;             /* the executor's root (the workflow or a subtree) */
    wfl_exec_opts opts;
    char instance_id[64];
    wfl_exec_state state;
    bool suspended;
    bool persist_pending;    /* a persistence point since the last take */
    bool persist_now;        /* call opts.persist before the next work item */
    wf_value exception;      /* FAULTED / TERMINATED / SUSPENDED */
    wf_loc exception_at;     /* ... raised there: the faulting activity, the Terminate or the
                                Suspend (file NULL: unknown, e.g. after a restore) */
    wi_queue normal, atomic; /* the scheduler: atomic-transaction items first */
    xqueue **queues;         /* in creation order */
    size_t queue_count, queue_cap;
    uint32_t next_queue_id;
    xtimer *timers; /* a binary min-heap on (due_us, seq) */
    size_t timer_count, timer_cap;
    uint64_t next_timer_seq;
    uint64_t next_order; /* completion order counter */
    wf_pool *xpool;      /* xact slots */
    wf_error host_err;   /* a host-level failure inside a pulse (out of memory) */
    bool failed;
    /* the Replicator child event in progress (handlers see the clone and InstanceData) */
    wfl_act *event_child;
    const wf_value *event_data;
    wfl_exec_stats stats;
    void *checkpoint; /* TransactionScope: the state when the scope started (owned) */
    size_t checkpoint_len;
    uint32_t checkpoint_ctx; /* the scope: context id and node index */
    uint64_t checkpoint_node;
    /* the root's output DPs (wfl_exec_output_*) for out_root, found once: the Interop
     * activity reads them on every execution */
    const wfl_act *out_root;
    const wfl_dp *out_dps[16];
    size_t out_count; /* SIZE_MAX: more than 16, looked up each time */
    member_memo members[16]; /* the root's members .rules this-paths name (root_member) */
    /* the Replicator node whose child events were looked up last, and their property values
     * (NULL: unset), so its children do not look them up by name (wfl_act_loop.c) */
    const wfl_node *rep_node;
    const wfl_pval *rep_child_initialized, *rep_child_completed;
    char **waiting_names; /* wfl_exec_queue_* view, rebuilt after each pulse */
    uint32_t *waiting_ids;
    size_t waiting_count;
};

/* ---- per-kind behaviour ----------------------------------------------------------------- */
/* execute: start work; return WFL_ST_CLOSED when done now, WFL_ST_EXECUTING when the activity
 * will call wfl__close later, WFL_ST_FAULTING after wfl__throw. stop (optional): the activity
 * leaves Executing for Canceling or Faulting: drop its own subscriptions and timers (running
 * children are canceled by the caller). child_closed: a child (or a clone, or an activity it asked
 * to compensate) closed while the activity is Executing. queue_item: an item arrived on a queue it
 * subscribed to. */
typedef struct wfl_kind_ops {
    wfl_status (*execute)(wfl_exec *ex, wfl_act *act);
    void (*stop)(wfl_exec *ex, wfl_act *act);
    void (*child_closed)(wfl_exec *ex, wfl_act *act, wfl_act *child);
    void (*queue_item)(wfl_exec *ex, wfl_act *act, xqueue *queue);
} wfl_kind_ops;

/* The table rows, one file per family. */
extern const wfl_kind_ops wfl_ops_sequence, wfl_ops_code, wfl_ops_ifelse, wfl_ops_while,
    wfl_ops_parallel, wfl_ops_throw, wfl_ops_terminate, wfl_ops_suspend, wfl_ops_policy,
    wfl_ops_compensate, wfl_ops_fault_handlers, wfl_ops_invoke_workflow, wfl_ops_custom;
extern const wfl_kind_ops wfl_ops_listen, wfl_ops_delay, wfl_ops_hee, wfl_ops_cem;
extern const wfl_kind_ops wfl_ops_replicator, wfl_ops_cag;
extern const wfl_kind_ops wfl_ops_state_machine, wfl_ops_state, wfl_ops_set_state;
extern const wfl_kind_ops wfl_ops_receive, wfl_ops_send, wfl_ops_invoke_web_service;

/* Restore checks (wfl_exec_persist.c calls them once the whole state is read): is a restored
 * xact consistent with its definition node and the restored tree? NULL when it is, else what is
 * wrong. One per kind that keeps a cursor or counters in its xact. */
typedef const char *(*wfl_restore_check)(wfl_exec *ex, wfl_act *act, const xact *x);
const char *wfl__check_sequence(wfl_exec *ex, wfl_act *act, const xact *x);
const char *wfl__check_custom(wfl_exec *ex, wfl_act *act, const xact *x);
const char *wfl__check_while(wfl_exec *ex, wfl_act *act, const xact *x);
const char *wfl__check_listen(wfl_exec *ex, wfl_act *act, const xact *x);
const char *wfl__check_state_machine(wfl_exec *ex, wfl_act *act, const xact *x);

/* ---- the transition requests (wfl_exec.c) -------------------------------------------- */
xact *wfl__state(wfl_exec *ex, wfl_act *act);         /* created on first use; NULL on OOM */
bool wfl__wiq_push(wi_queue *q, const work_item *it); /* false on out of memory */
void wfl__schedule(wfl_exec *ex, wi_kind kind, wfl_act *act, wfl_act *child, uint32_t arg);
/* Requests move the status at once and schedule the behaviour (WF3's AEC does the same). */
void wfl__execute(wfl_exec *ex, wfl_act *act); /* Initialized -> Executing */
void wfl__cancel(wfl_exec *ex, wfl_act *act);  /* Executing -> Canceling (else nothing) */
/* Closed(Succeeded) -> Compensating; `listener` hears it close (NULL = its parent). */
void wfl__compensate(wfl_exec *ex, wfl_act *act, wfl_act *listener);
/* Does act (closed Succeeded) hold work to compensate: compensatable itself, or a child or
 * kept context that does? */
bool wfl__needs_comp(const wfl_act *act);
/* The next completed child or kept context of scope to compensate (newest first), or NULL. */
wfl_act *wfl__comp_next(wfl_act *scope);
void wfl__close(wfl_exec *ex, wfl_act *act); /* close now (result from the status) */
/* Fault `act` with `exc` (retained): Faulting, handled as a scheduled item. */
void wfl__throw(wfl_exec *ex, wfl_act *act, const wf_value *exc);
/* Turn a wf_error from a native call, a bind or a rule into an exception and fault `act`;
 * out of memory is a host failure instead. Returns WFL_ST_FAULTING. */
wfl_status wfl__throw_error(wfl_exec *ex, wfl_act *act, const wf_error *err, const wf_value *exc);
/* Record a host-level failure (stops the pulse). */
void wfl__fail(wfl_exec *ex, const wf_error *err);
void wfl__fail_nomem(wfl_exec *ex);
void wfl__set_status(wfl_exec *ex, wfl_act *act, wfl_status status); /* asserts legality */
void wfl__reenter(wfl_exec *ex, wfl_act *act); /* Closed -> Initialized: a state re-entered */
/* Cancel every running child and clone of act; returns how many are still running. */
size_t wfl__cancel_children(wfl_exec *ex, wfl_act *act);
size_t wfl__running_children(wfl_act *act);
bool wfl__is_running(const wfl_act *act);
/* Make a clone of template for a new execution context (fresh xact); NULL after wfl__fail. */
wfl_act *wfl__clone(wfl_exec *ex, wfl_act *template_act);
/* Release a closed clone unless it must be kept for compensation. */
void wfl__finish_clone(wfl_exec *ex, wfl_act *clone);
/* SuspendActivity / TerminateActivity `act` stops the instance with its Error text. */
void wfl__suspend(wfl_exec *ex, const wfl_act *act, const char *error);
void wfl__terminate(wfl_exec *ex, const wfl_act *act, const char *error);
void wfl__request_persist(wfl_exec *ex);

/* Children that take part in normal execution: not alternate flow, enabled. */
bool wfl__is_body_child(const wfl_act *child);

/* ---- queues and timers (wfl_exec.c) --------------------------------------------------- */
xqueue *wfl__queue_create(wfl_exec *ex, const char *name, bool is_timer); /* or find */
xqueue *wfl__queue_by_id(wfl_exec *ex, uint32_t id);
xqueue *wfl__queue_by_name(wfl_exec *ex, const char *name);
void wfl__queue_delete(wfl_exec *ex, uint32_t id); /* drops items, subscribers, timers */
bool wfl__queue_subscribe(wfl_exec *ex, xqueue *q, wfl_act *act);
void wfl__queue_unsubscribe(wfl_exec *ex, xqueue *q, wfl_act *act);
/* Take the first item (caller releases); false when empty. */
bool wfl__queue_dequeue(xqueue *q, wf_value *out);
bool wfl__queue_enqueue(wfl_exec *ex, xqueue *q, const wf_value *item); /* notifies */
/* Add a timer (seq 0: the next in creation order); false on out of memory. */
bool wfl__timer_add(wfl_exec *ex, int64_t due_us, uint32_t queue_id, uint64_t seq);
int64_t wfl__now(wfl_exec *ex);

/* ---- DPs and native calls (wfl_act_native.c) ------------------------------------------ */
const wfl_pval *wfl__pval(const wfl_act *act, const char *dp_name); /* NULL if no such DP */
const wfl_dp *wfl__dp(const wfl_act *act, const char *dp_name);
/* Evaluate a condition DP; an unset condition is true when `unset_true`. On failure the
 * activity is faulted (or the pulse failed) and false is returned with *ok false. */
bool wfl__condition(wfl_exec *ex, wfl_act *act, const wfl_cond *cond, bool *ok);
/* The same for the condition of `owner` (the sender of a code condition) evaluated by act,
 * which a failure faults: IfElse evaluating its branches. */
bool wfl__condition_of(wfl_exec *ex, wfl_act *act, wfl_act *owner, const wfl_cond *cond,
                       bool *ok);
bool wfl__condition_dp(wfl_exec *ex, wfl_act *act, const char *dp_name, bool unset_true, bool *ok);
/* Raise the event DP `dp_name` (a code-beside handler); true when fine or unset. */
bool wfl__raise_event(wfl_exec *ex, wfl_act *act, const char *dp_name);
/* The same for the event's property value, already looked up (NULL: unset). */
bool wfl__raise_pval(wfl_exec *ex, wfl_act *act, const wfl_pval *pv, const char *dp_name);
/* Call a custom activity's Execute against its DPs. */
wfl_status wfl__call_custom(wfl_exec *ex, wfl_act *act);
/* Call a service method with the activity's ParameterBindings. */
wfl_status wfl__call_method(wfl_exec *ex, wfl_act *act, const wfl_tl_func *fn);
/* Execute a RuleSet against the root. */
wfl_status wfl__run_ruleset(wfl_exec *ex, wfl_act *act, const wfl_ruleset *rs);
/* Write v through one of the activity's ParameterBindings (nothing when it binds nothing). */
wf_status wfl__param_write(wfl_act *act, const wfl_param_binding *pb, const wf_value *v,
                           wf_error *err);
/* Write an event payload through the activity's ParameterBindings. */
bool wfl__write_event_params(wfl_exec *ex, wfl_act *act, const wfl_tl_event *ev,
                             const wf_value *payload);
/* The inverse, for rebuilding a position (wfl_exec_event_payload): the record of the event's
 * parameters read back through what the bindings wrote (a parameter bound by its own name, or
 * `e`'s field); *unbound names the first parameter no binding keeps (NULL: none), left null. */
wf_status wfl__read_event_params(wfl_act *act, const wfl_tl_event *ev, wf_value *out,
                                 const char **unbound, wf_error *err);
/* The same for a HandleExternalEvent (its service's event), and its queue's name. */
wf_status wfl__hee_payload(wfl_act *act, wf_value *out, const char **unbound, wf_error *err);
void wfl__event_queue_name(const wfl_act *act, char *buf, size_t size);

/* TransactionScope (docs/semantics.md §3): take the checkpoint when the scope starts; on a fault
 * of that scope, roll the whole instance back to it and fault the scope there (true when it did
 * so); drop it when the scope closes. (wfl_exec_persist.c) */
void wfl__checkpoint_take(wfl_exec *ex, wfl_act *scope);
bool wfl__checkpoint_rollback(wfl_exec *ex, wfl_act *scope);
void wfl__checkpoint_drop(wfl_exec *ex);

/* The skeleton shared by create and restore (wfl_exec.c), and the blob (wfl_exec_persist.c). */
wf_status wfl_exec_new(const wfl_definition *def, const wfl_exec_opts *opts, wfl_exec **out,
                       wf_error *err);
void wfl_exec_attach(wfl_exec *ex, wfl_inst *inst, wfl_act *root);
void wfl__rebuild_waiting(wfl_exec *ex); /* the wfl_exec_queue_* view */

/* Composite type-library activities (wfl_act_composite.c): the custom kind's behaviour when
 * the type has a body; the options its nested executor runs with (also on restore). */
wfl_status wfl__composite_execute(wfl_exec *ex, wfl_act *act);
void wfl__composite_stop(wfl_exec *ex, wfl_act *act);
void wfl__composite_queue_item(wfl_exec *ex, wfl_act *act, xqueue *q);
wfl_exec_opts wfl__composite_opts(wfl_exec *ex);

/* Event activities (Delay, HandleExternalEvent) used by Listen and states: create the
 * activity's queue (and a Delay's timer) and subscribe `listener` to it; unsubscribe and, when
 * nobody else waits, delete it. The queue id is kept in the event activity's xact. */
bool wfl__event_subscribe(wfl_exec *ex, wfl_act *ev, wfl_act *listener);
void wfl__event_unsubscribe(wfl_exec *ex, wfl_act *ev, wfl_act *listener);
bool wfl__is_event_act(const wfl_act *act);
/* A ReceiveActivity's queue: "Contract.Operation" (wfl_act_service.c). */
void wfl__receive_queue_name(const wfl_act *act, char *buf, size_t size);

#endif

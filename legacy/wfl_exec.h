/* wfl_exec.h — the embeddable legacy (WF3) executor: one instance of a loaded definition (or
 * of one activity subtree, for the Interop activity) run by pulses of a FIFO scheduler, with
 * workflow queues, timers driven by a host-supplied clock, faults, cancellation,
 * compensation and a versioned state blob (docs/semantics.md §4, §6; docs/architecture.md "The bridge"). */
#ifndef WFL_EXEC_H
#define WFL_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_value.h"
#include "wfl_def.h"
#include "wfl_status.h"

/* Lifecycle:
 * 1. wfl_exec_create(def, NULL or an activity name, &opts, &ex) — the definition must outlive
 *    the executor; `subtree` names the activity that becomes the root (Interop).
 * 2. wfl_exec_set_input for root DPs (before the first run).
 * 3. wfl_exec_run: pulse until the scheduler is empty. The state tells what happened:
 *    CLOSED, CANCELED, FAULTED (unhandled exception: WF3 terminates the instance), TERMINATED
 *    (TerminateActivity), SUSPENDED (SuspendActivity; wfl_exec_resume), or IDLE: waiting on
 *    the queues listed by wfl_exec_queue_* and/or the timer of wfl_exec_next_timer.
 * 4. While IDLE: wfl_exec_deliver(queue, item) enqueues and pulses; wfl_exec_fire_timers(now)
 *    fires due timers and pulses; wfl_exec_cancel cancels the root and pulses.
 * 5. wfl_exec_output_* reads the root DPs (any time; final after completion).
 * 6. wfl_exec_save to a blob at any quiescent moment; wfl_exec_restore(def, blob) rebuilds an
 *    executor that continues exactly there (blob from the same definition only).
 * 7. wfl_exec_destroy.
 * Threads: no globals; an executor is used by one thread at a time, many executors may run on
 * many threads. Callbacks run on the calling thread, inside the pulse. */

typedef struct wfl_exec wfl_exec;

typedef enum wfl_exec_state {
    WFL_EXEC_CREATED = 0, /* not run yet */
    WFL_EXEC_IDLE,        /* scheduler empty, waiting on queues or timers */
    WFL_EXEC_CLOSED,      /* root closed Succeeded */
    WFL_EXEC_CANCELED,    /* root closed Canceled (wfl_exec_cancel) */
    WFL_EXEC_FAULTED,     /* root closed Faulted: unhandled exception (wfl_exec_exception) */
    WFL_EXEC_TERMINATED,  /* TerminateActivity (WorkflowTerminatedException with its Error) */
    WFL_EXEC_SUSPENDED,   /* SuspendActivity; wfl_exec_resume continues */
} wfl_exec_state;

/* "Created", "Idle", "Closed", "Canceled", "Faulted", "Terminated", "Suspended". */
const char *wfl_exec_state_name(wfl_exec_state state);

/* What the trace callback sees. NATIVE: one native call (custom activity Execute, code-beside
 * handler or condition, service method): in/out are the named In and Out values, ret the
 * return value (null for void). STATUS: an activity changed status (context_id 0 = the root
 * context; clones get 1, 2, ... in creation order). */
typedef enum wfl_trace_kind { WFL_TRACE_NATIVE, WFL_TRACE_STATUS } wfl_trace_kind;

typedef struct wfl_trace_rec {
    wfl_trace_kind kind;
    const char *activity; /* the activity's name (QualifiedName) */
    const char *type;     /* its type name: "CodeActivity", "ReserveStock" */
    unsigned context_id;
    /* NATIVE */
    const char *function; /* exported C symbol */
    const char *const *in_names;
    const wf_value *in_values;
    size_t in_count;
    const char *const *out_names;
    const wf_value *out_values;
    size_t out_count;
    const wf_value *ret;   /* null for void */
    wf_status call_status; /* WF_OK or WF_E_NATIVE (ErrorOnNonZero) */
    /* STATUS */
    wfl_status status;
    wfl_result result;
} wfl_trace_rec;

typedef void (*wfl_trace_fn)(void *ud, const wfl_trace_rec *rec);
/* InvokeWorkflowActivity: start `workflow_type` (its TargetWorkflow) with the named
 * parameters; fire-and-forget. Write the new instance id (<= 63 chars) into id_out. A non-OK
 * return faults the activity with the error's message. */
typedef wf_status (*wfl_invoke_fn)(void *ud, const char *workflow_type, const char *const *names,
                                   const wf_value *values, size_t count, char *id_out,
                                   size_t id_size, wf_error *err);
/* The clock: microseconds since the epoch, UTC. Delay reads it to set its timer. */
typedef int64_t (*wfl_clock_fn)(void *ud);
/* A persistence point (TransactionScope or a PersistOnClose activity closed, the root closed):
 * called between work items; the host may call wfl_exec_save now. Non-OK stops the pulse with
 * that error. */
typedef wf_status (*wfl_persist_fn)(void *ud, wfl_exec *ex, wf_error *err);
/* Rule tracking: a PolicyActivity (`activity`) evaluated rule `rule` of its rule set; result
 * true: its Then actions run, false: its Else actions (either may have none; docs/semantics.md
 * §2). */
typedef void (*wfl_rule_fn)(void *ud, const char *activity, const char *rule, bool result);

typedef struct wfl_exec_opts {
    wfl_trace_fn trace; /* NULL: no tracing (costs nothing) */
    void *trace_ud;
    wfl_invoke_fn invoke_workflow; /* NULL: InvokeWorkflow faults with a clear message */
    void *invoke_ud;
    wfl_clock_fn clock; /* NULL: the real clock (CLOCK_REALTIME) */
    void *clock_ud;
    wfl_persist_fn persist; /* NULL: only wfl_exec_take_persist_request records it */
    void *persist_ud;
    const char *instance_id; /* NULL: a random 32-hex-digit id */
    bool no_checkpoints;     /* TransactionScope faults without rolling back (WF4's Interop
                                takes no checkpoint, docs/semantics.md §6) */
    bool no_persistence;     /* the host has no persistence service (WF3's runtime without a
                                WorkflowPersistenceService): a TransactionScope that closes
                                terminates the instance with InvalidOperationException, as in
                                WF3. false: it is a persistence point (opts.persist) */
    uint64_t max_work_items; /* per pulse; 0: no limit. WF3 itself has none, so a loop that
                                never waits (two states whose StateInitialization SetState
                                each other) runs forever; with a limit the pulse stops with
                                WF_E_LIMIT instead and the instance stays as it was then */
    wfl_rule_fn on_rule; /* Policy rule tracking; NULL: none (costs nothing) */
    void *rule_ud;
    bool skip_native; /* handlers, custom activities and service methods are not called (a
                         replay that rebuilds a position their calls already reached);
                         conditions still are */
} wfl_exec_opts;

#define WFL_EXEC_OPTS_INIT                                                                    \
    {.trace = NULL, .trace_ud = NULL, .invoke_workflow = NULL, .invoke_ud = NULL,            \
     .clock = NULL, .clock_ud = NULL, .persist = NULL, .persist_ud = NULL,                   \
     .instance_id = NULL, .no_checkpoints = false, .no_persistence = false,                \
     .max_work_items = 0, .on_rule = NULL, .rule_ud = NULL, .skip_native = false}

/* Create an executor. subtree: NULL for the whole workflow, else the name of the activity to
 * run as root (WF_E_NAME if absent). */
wf_status wfl_exec_create(const wfl_definition *def, const char *subtree, const wfl_exec_opts *opts,
                          wfl_exec **out, wf_error *err);
void wfl_exec_destroy(wfl_exec *ex); /* accepts NULL */
/* Back to the state wfl_exec_create left: same definition and subtree, DPs at the
 * definition's values, no queues, timers, exception, checkpoint or stats, state CREATED;
 * the activity tree and the scheduler's memory are kept (the Interop activity reuses one
 * executor for many executions). opts: the options from now on (NULL: keep them). Only
 * between pulses. */
void wfl_exec_reset(wfl_exec *ex, const wfl_exec_opts *opts);
/* Change opts.max_work_items for the pulses to come (a host that nests the executor passes
 * on what is left of its own limit). */
void wfl_exec_set_max_work_items(wfl_exec *ex, uint64_t max_work_items);
const char *wfl_exec_instance_id(const wfl_exec *ex);

/* Set a root DP by name (converted to its type). WF_E_NAME: unknown or not settable (metadata,
 * read-only); WF_E_STATE after the first run. */
wf_status wfl_exec_set_input(wfl_exec *ex, const char *name, const wf_value *value, wf_error *err);
/* The same by the index of wfl_exec_output_* (names resolved once): WF_E_NAME when that DP is
 * not settable (read-only), WF_E_RANGE for no such index. */
wf_status wfl_exec_set_input_at(wfl_exec *ex, size_t index, const wf_value *value,
                                wf_error *err);
/* Parse `text` as the DP's type and set it (the CLI's --arg NAME=VALUE). */
wf_status wfl_exec_set_input_text(wfl_exec *ex, const char *name, const char *text, wf_error *err);

/* Pulse until the scheduler is empty. A non-OK return is a host-level failure (out of memory,
 * WF_E_STATE when completed); workflow faults are states, not errors. */
wf_status wfl_exec_run(wfl_exec *ex, wfl_exec_state *state, wf_error *err);
wfl_exec_state wfl_exec_state_get(const wfl_exec *ex);

/* Queues some activity waits on (has a subscriber), in creation order. Timer queues (Delay)
 * have is_timer set; HandleExternalEvent queues are named "Interface.Event"; the state
 * machine's is "SetStateQueue". Names live until the next pulse. */
size_t wfl_exec_queue_count(const wfl_exec *ex);
const char *wfl_exec_queue_name(const wfl_exec *ex, size_t index);
bool wfl_exec_queue_is_timer(const wfl_exec *ex, size_t index);
/* Find a waited-on queue by full name, or by the part after its last '.' ("Approved"). */
const char *wfl_exec_queue_find(const wfl_exec *ex, const char *name);
/* Earliest pending timer; false when none. */
bool wfl_exec_next_timer(const wfl_exec *ex, int64_t *due_us);

/* Enqueue `item` (retained; NULL = null) on queue `queue` and pulse. WF_E_NOTFOUND for a queue
 * that does not exist (WF3: QueueException), WF_E_STATE when completed. */
wf_status wfl_exec_deliver(wfl_exec *ex, const char *queue, const wf_value *item,
                           wfl_exec_state *state, wf_error *err);
/* Fire every timer due at `now_us` (earliest first) and pulse. */
wf_status wfl_exec_fire_timers(wfl_exec *ex, int64_t now_us, wfl_exec_state *state, wf_error *err);
/* Cancel the root and pulse (CancellationHandlers run). */
wf_status wfl_exec_cancel(wfl_exec *ex, wfl_exec_state *state, wf_error *err);
/* Resume a SUSPENDED instance and pulse. */
wf_status wfl_exec_resume(wfl_exec *ex, wfl_exec_state *state, wf_error *err);

/* FAULTED / TERMINATED / SUSPENDED: the exception (Terminate: WorkflowTerminatedException
 * with the Error; Suspend: the Error as message); a null value otherwise. */
const wf_value *wfl_exec_exception(const wfl_exec *ex);
/* Where the exception of a FAULTED / TERMINATED instance came from: the activity whose
 * unhandled fault ended it (a fault that propagates keeps its origin) or the Terminate
 * activity; no location before anything faulted. */
wf_loc wfl_exec_fault_loc(const wfl_exec *ex);

/* Root DPs that are values (not events, conditions or metadata), in registry order: for a
 * code-beside root its class properties; the Name DP is left out. */
size_t wfl_exec_output_count(const wfl_exec *ex);
const char *wfl_exec_output_name(const wfl_exec *ex, size_t index);
/* The value (bind resolved) into *out (caller releases). */
wf_status wfl_exec_output_value(wfl_exec *ex, size_t index, wf_value *out, wf_error *err);
wf_status wfl_exec_output(wfl_exec *ex, const char *name, wf_value *out, wf_error *err);

/* A persistence point was reached since the last call (TransactionScope closed, the root
 * closed, or a PersistOnClose activity); reading clears it. Hosts with a store save then. */
bool wfl_exec_take_persist_request(wfl_exec *ex);

/* Counters since the executor was created or restored (benchmarks, tests). */
typedef struct wfl_exec_stats {
    uint64_t work_items;          /* scheduler items run */
    uint64_t activities_executed; /* Execute calls */
    uint64_t contexts_created;    /* execution-context clones */
    uint64_t native_calls;        /* traced or not */
} wfl_exec_stats;
void wfl_exec_stats_get(const wfl_exec *ex, wfl_exec_stats *out);

/* Position (`wfbridge migrate-instances`), only between pulses, looking inside the bodies of
 * executing custom composite activities too: fn gets the name of every executing activity,
 * parents before children, loop iterations' clones included; each_queue every queue some
 * activity waits on; the pending timers' due times, earliest first, go into due[max] (the
 * count is returned and may exceed max); wfl_exec_hosted gives the executor running the body
 * of the executing composite activity named `activity` (NULL when there is none), whose root
 * properties wfl_exec_output_* read and wfl_exec_put writes (any time between pulses). */
typedef void (*wfl_name_fn)(void *ud, const char *name);
typedef void (*wfl_queue_fn)(void *ud, const char *name, bool is_timer);
void wfl_exec_each_executing(wfl_exec *ex, wfl_name_fn fn, void *ud);
void wfl_exec_each_queue(wfl_exec *ex, wfl_queue_fn fn, void *ud);
size_t wfl_exec_timers(const wfl_exec *ex, int64_t *due, size_t max);
wfl_exec *wfl_exec_hosted(wfl_exec *ex, const char *activity);
wf_status wfl_exec_put(wfl_exec *ex, const char *name, const wf_value *value, wf_error *err);
/* The value of property `prop` of the live instance of `activity`: the one in the running
 * round of every loop around it (an activity of the round that has not run yet holds its
 * initial value). *found false when none is live (a round that ended or has not begun), which
 * is no error; WF_E_NAME when the activity has no such property. */
wf_status wfl_exec_activity_value(wfl_exec *ex, const char *activity, const char *prop,
                                  wf_value *out, bool *found, wf_error *err);
/* Where the executing Replicator named `activity` is: *data its list (borrowed, valid until
 * the next pulse), the data indexes of its executing clones, ascending, into idx[max]
 * (returns how many, may exceed max); *live how many Replicators of that name execute (0:
 * none, *data NULL; several: the rounds of an enclosing parallel loop, the first one read).
 * *data is NULL too when its rounds do not record their item (a round that is a Replicator or
 * a Receive itself keeps its own state where the item index is kept). */
size_t wfl_exec_replicator_items(wfl_exec *ex, const char *activity, const wf_value **data,
                                 size_t *idx, size_t max, size_t *live);
/* The payload of the event that queue `queue` delivered to a HandleExternalEvent, rebuilt
 * from the values its ParameterBindings wrote (a record of the event's parameters: what they
 * hold now, which is what the event carried unless something wrote them since). *unbound
 * names a parameter no binding kept (its field null; NULL: none); *found false when no
 * HandleExternalEvent waits on that queue. */
wf_status wfl_exec_event_payload(wfl_exec *ex, const char *queue, wf_value *out, bool *found,
                                 const char **unbound, wf_error *err);

/* Save the whole state (instance tree, scheduler, queues, timers, contexts) as one versioned
 * blob (wf_free it). Only between pulses. */
wf_status wfl_exec_save(const wfl_exec *ex, void **blob, size_t *len, wf_error *err);
/* Rebuild an executor from a blob of wfl_exec_save on the same definition. WF_E_CORRUPT for
 * a damaged or foreign blob, an unknown version, or another definition. */
wf_status wfl_exec_restore(const wfl_definition *def, const wfl_exec_opts *opts, const void *blob,
                           size_t len, wfl_exec **out, wf_error *err);

#endif

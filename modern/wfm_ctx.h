/* wfm_ctx.h — what a running activity may do through its context: evaluate and write its
 * properties, schedule children and delegates, complete, fault, cancel, create bookmarks and
 * timers, keep per-instance extension state, write output. Every call takes the wfm_ctx and
 * the wfm_ai the callback was given. Thread rule: callbacks of one instance run on one thread
 * at a time; never keep a wfm_ctx or wfm_ai past the callback except as the runtime allows
 * (a child's wfm_ai is valid until its on_done returns). Ordering: docs/semantics.md §5. */
#ifndef WFM_CTX_H
#define WFM_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_value.h"
#include "wfm_activity.h"

/* ---- run time (execute / cancel / completion callbacks) --------------------------------- */
typedef enum wfm_status {
    WFM_EXECUTING = 0,
    WFM_CLOSED,
    WFM_CANCELED,
    WFM_FAULTED,
} wfm_status;

const wfm_node *wfm_ai_node(const wfm_ai *ai);
void *wfm_ai_state(wfm_ai *ai);                   /* kind's state_size bytes, zeroed at creation */
const void *wfm_ai_state_const(const wfm_ai *ai); /* the same, for save hooks */
/* env(ai): the environment ai's expressions see (its variables, then its ancestors'). */
const wfm_env *wfm_ai_env(const wfm_ai *ai);
wfm_status wfm_ai_status(const wfm_ai *ai);
bool wfm_ai_cancel_requested(const wfm_ai *ai);
wfm_ai *wfm_ai_parent(const wfm_ai *ai);

/* Evaluate IN/INOUT property `prop` now (On failure the runtime has already faulted ai:
 * return from the callback). Unset properties give their default or null. */
wf_status wfm_ctx_get(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, wf_value *out);
/* Write OUT/INOUT property `prop` (no-op when unbound); conversion failures fault ai. */
wf_status wfm_ctx_set(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, const wf_value *value);
/* Evaluate IN property `prop` of an auxiliary node (a FlowDecision's Condition, a Transition's
 * Condition) in ai's environment; faults ai on failure like wfm_ctx_get. */
wf_status wfm_ctx_eval_node(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, unsigned prop,
                            wf_value *out);
/* PARAMS: evaluate In/InOut parameter `index`, write Out/InOut parameter `index`. */
wf_status wfm_ctx_get_param(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, size_t index, wf_value *out);
wf_status wfm_ctx_set_param(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, size_t index,
                            const wf_value *value);

/* Schedule `child` (a node reachable from ai's node) as a child of ai. WF4 order: scheduled
 * work is pushed to the FRONT of the queue, so the last scheduled runs first. on_done is
 * required, on_fault optional (NULL: faults pass through). */
wf_status wfm_ctx_schedule(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *child, wfm_done_fn on_done,
                           wfm_fault_fn on_fault);
/* wfm_ctx_schedule of item `index` of ai's own list property `prop` (ACTIVITIES, NODES,
 * KEYED), in one call: WF_E_NOTFOUND when the list has no such item (nothing scheduled). */
wf_status wfm_ctx_schedule_item(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, size_t index,
                                wfm_done_fn on_done, wfm_fault_fn on_fault);
/* Like wfm_ctx_schedule, but the child runs in `env` instead of env(ai): an environment the
 * kind owns (a snapshot whose parent chain ends at the root environment, e.g. the variables
 * a CompensableActivity had when its body closed), which must outlive the child. The kind
 * saves and restores it with wfm_persist_write_env / wfm_persist_read_env(r, true) like any
 * state it owns; the saved child refers to it. NULL env: env(ai). */
wf_status wfm_ctx_schedule_in_env(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *child, wfm_env *env,
                                  wfm_done_fn on_done, wfm_fault_fn on_fault);
/* Schedule the body of DELEGATE property `prop` of `node` (ai's own node, or an auxiliary node
 * under it such as a Catch) as a child of ai, with the delegate argument bound to `arg`. */
wf_status wfm_ctx_schedule_delegate(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node, unsigned prop,
                                    const wf_value *arg, wfm_done_fn on_done,
                                    wfm_fault_fn on_fault);
/* wfm_ctx_schedule_delegate without a reference on `arg`: the caller guarantees that arg
 * outlives the child, e.g. an item of a list held in ai's own state (children are freed
 * before their parent). Saves two atomic operations per child on a shared payload. */
wf_status wfm_ctx_schedule_delegate_borrowed(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *node,
                                             unsigned prop, const wf_value *arg,
                                             wfm_done_fn on_done, wfm_fault_fn on_fault);
/* Running a leaf child inline: without an activity instance or work items of its own, where
 * nothing can tell the difference. A call stands for "schedule the child, return from this
 * callback, and get on_done for it": make it only where the callback would do exactly that,
 * and on WFM_INLINE_CLOSED carry on as on_done would (on_done is not called). It runs only a
 * WFM_KIND_INLINE kind, with no tracking of activity states, under a live parent neither
 * canceling nor completing, and when its two work items fit in the run's budget and step
 * limit (they are counted as run). A child that faults (or stays open) becomes the activity
 * instance it would have been, the fault queued on it, so it propagates as before. */
typedef enum wfm_inline_result {
    WFM_INLINE_UNAVAILABLE, /* not run: schedule the child the ordinary way */
    WFM_INLINE_CLOSED,      /* ran and closed */
    WFM_INLINE_STOPPED,     /* ran and faulted (or memory ran out): return */
} wfm_inline_result;
wfm_inline_result wfm_ctx_run_inline(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *child,
                                     wfm_done_fn on_done, wfm_fault_fn on_fault);
/* The body of a delegate, as wfm_ctx_schedule_delegate_borrowed would schedule it. */
typedef struct wfm_inline_delegate {
    const wfm_node *node; /* the node owning DELEGATE property `prop` */
    unsigned prop;
    const wf_value *arg; /* borrowed: outlives the child (see _borrowed) */
    /* arguments of siblings scheduled just before this one with the same node, prop and
     * callbacks that have not run yet (ParallelForEach runs the last first); a faulting body
     * schedules them first, so the fault finds them where they would be */
    const wf_value *pending;
    size_t pending_count;
    wfm_done_fn on_done;
    wfm_fault_fn on_fault;
} wfm_inline_delegate;
wfm_inline_result wfm_ctx_run_delegate_inline(wfm_ctx *ctx, wfm_ai *ai,
                                              const wfm_inline_delegate *d);
/* The leaf of the last wfm_ctx_run_inline / _run_delegate_inline once more, in the same
 * callback right after it returned WFM_INLINE_CLOSED: the same child and callbacks; a
 * delegate body gets `arg` and `pending_count` pending siblings (else both are ignored). */
wfm_inline_result wfm_ctx_run_inline_again(wfm_ctx *ctx, wfm_ai *ai, const wf_value *arg,
                                           size_t pending_count);
/* Close ai (WFM_CLOSED, or WFM_CANCELED after wfm_ctx_mark_canceled). Children must be done. */
void wfm_ctx_complete(wfm_ctx *ctx, wfm_ai *ai);
void wfm_ctx_mark_canceled(wfm_ctx *ctx, wfm_ai *ai);
/* Fault ai with exception `exc` (taken over). The fault walks up per docs/semantics.md §5. */
void wfm_ctx_fault(wfm_ctx *ctx, wfm_ai *ai, wf_value exc);
/* Report that memory ran out in a callback that has no status to return (a finish hook, an
 * on_done): once the callback returns, the runtime ends the instance as Faulted without an
 * exception value (hosts report "out of memory"), running nothing more. */
void wfm_ctx_nomem(wfm_ctx *ctx);
/* TerminateWorkflow: end the whole instance as Terminated with `exc` (taken over; its message
 * is the reason). Not catchable: no on_fault handler sees it; running activities are aborted. */
void wfm_ctx_terminate(wfm_ctx *ctx, wfm_ai *ai, wf_value exc);
/* The instance's step limit (wfm_runtime_opts.max_steps) for an activity that runs a nested
 * engine (Interop's legacy executor): the work items left before the limit, 0 for none. When
 * the nested engine runs out of them, wfm_ctx_steps_exhausted ends the instance as the
 * scheduler's own limit does (Terminated; wfm_instance_run returns WF_E_LIMIT). */
uint64_t wfm_ctx_steps_left(const wfm_ctx *ctx);
void wfm_ctx_steps_exhausted(wfm_ctx *ctx);
/* Fault with a new exception of the given type and message. */
void wfm_ctx_throw(wfm_ctx *ctx, wfm_ai *ai, const wf_type *exc_type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Request cancellation of one running child / all running children of ai. */
void wfm_ctx_cancel_child(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child);
void wfm_ctx_cancel_children(wfm_ctx *ctx, wfm_ai *ai);
size_t wfm_ai_running_children(const wfm_ai *ai);
/* ai's running children in the order they were scheduled (NULL after the last). Take the
 * next sibling before canceling a child. */
wfm_ai *wfm_ai_first_child(const wfm_ai *ai);
wfm_ai *wfm_ai_next_sibling(const wfm_ai *child);

enum { WFM_BOOKMARK_MULTIPLE = 1u << 0, WFM_BOOKMARK_NONBLOCKING = 1u << 1 };
/* Create a bookmark owned by ai; the instance goes idle while only bookmarks remain. The
 * runtime removes ai's bookmarks and timers when ai closes. Duplicate name: WF_E_STATE. */
wf_status wfm_ctx_bookmark(wfm_ctx *ctx, wfm_ai *ai, const char *name, unsigned flags,
                           wfm_resume_fn on_resume);
void wfm_ctx_bookmark_remove(wfm_ctx *ctx, wfm_ai *ai, const char *name);
/* A persistence point raised by a kind (what the Persist activity does; Interop for a legacy
 * TransactionScope or PersistOnClose activity): under a durable host, an internal bookmark
 * owned by ai that the host resumes with `resumed` (a callback of the kind) once it has saved
 * the instance; *requested = true. Without a durable host nothing happens (*requested =
 * false). Inside a no-persist zone WF_E_STATE; WF_E_NOMEM. */
wf_status wfm_ctx_request_persist(wfm_ctx *ctx, wfm_ai *ai, wfm_resume_fn resumed,
                                  bool *requested);
/* A durable timer due at `due_us` (microseconds since the epoch, UTC). */
wf_status wfm_ctx_timer(wfm_ctx *ctx, wfm_ai *ai, int64_t due_us, wfm_resume_fn on_fire);
int64_t wfm_ctx_now_us(const wfm_ctx *ctx);

/* Per-instance extension state (e.g. the compensation token list), keyed by the address of
 * a static object of the extension: created zeroed with `size` bytes on first use, `fini`
 * called when the instance is destroyed. NULL on out of memory. */
void *wfm_ctx_ext(wfm_ctx *ctx, const void *key, size_t size, void (*fini)(void *state));
/* A persistable extension state: use the descriptor's address as the key, e.g.
 * wfm_ctx_ext_get(ctx, &comp_ext_spec), and list the descriptor in the kind's `exts`. */
struct wfm_ext_spec {
    const char *name;          /* stable and unique: written into saved states */
    size_t size;               /* bytes of zeroed state */
    void (*fini)(void *state); /* optional */
    wf_status (*save)(const void *state, wfm_persist_writer *w);
    wf_status (*restore)(void *state, wfm_persist_reader *r); /* into the zeroed state */
};
/* wfm_ctx_ext(ctx, spec, spec->size, spec->fini). */
void *wfm_ctx_ext_get(wfm_ctx *ctx, const wfm_ext_spec *spec);
/* The extension state for `key` if it exists (NULL otherwise); never creates it. */
void *wfm_ctx_ext_find(const wfm_ctx *ctx, const void *key);

/* ---- asynchronous work (docs/services.md "Send and ReceiveReply") ---------------------------
 * Work done outside the instance, e.g. an HTTP request (wfm_act_send.c). wfm_ctx_async_begin
 * creates a blocking bookmark `name` owned by ai (on_resume receives the completion's
 * payload) and hands back a handle; whoever does the work calls wfm_async_complete once, from
 * any thread. Meanwhile the instance is idle but not waiting for its host: a pool run is not
 * reported idle (on_complete), wfm_runtime_wait_idle waits for it, and a host running it on
 * its own thread waits with wfm_instance_wait_async. The completion resumes the bookmark
 * (nothing happens when ai closed meanwhile) and runs the instance again. A handle outlives
 * the instance: completing it after the instance was destroyed only frees it. Mark the kind
 * WFM_KIND_NO_PERSIST: nothing of the work is saved. WF_E_NOMEM; WF_E_STATE duplicate name. */
typedef struct wfm_async wfm_async;
wf_status wfm_ctx_async_begin(wfm_ctx *ctx, wfm_ai *ai, const char *name, wfm_resume_fn on_resume,
                              wfm_async **out);
void wfm_async_complete(wfm_async *async, wf_value payload); /* payload taken over */

/* Per-runtime state a kind shares between all instances (the HTTP engine of Send), keyed by
 * the address of its static descriptor: created by `create` on first use, destroyed by
 * wfm_runtime_destroy after every instance is gone. NULL with *err set when create fails. */
typedef struct wfm_rt_ext_spec {
    const char *name;
    wf_status (*create)(void **out, wf_error *err);
    void (*destroy)(void *state);
} wfm_rt_ext_spec;
void *wfm_ctx_runtime_ext(wfm_ctx *ctx, const wfm_rt_ext_spec *spec, wf_error *err);

/* Called once when the root activity has finished (body_status says how), before the instance
 * completes. The hook may schedule nodes as children of `root` with wfm_ctx_schedule (e.g.
 * confirmation or compensation handlers); the instance completes when they are done. */
typedef void (*wfm_finish_fn)(wfm_ctx *ctx, wfm_ai *root, wfm_status body_status, void *data);
wf_status wfm_ctx_on_finish(wfm_ctx *ctx, wfm_finish_fn fn, void *data);

/* WriteLine's sink: the instance's output writer (stdout for the CLI). */
void wfm_ctx_write(wfm_ctx *ctx, const char *text, size_t len);
wf_types *wfm_ctx_types(const wfm_ctx *ctx);
/* Custom tracking records (WF4's CustomTrackingRecord, e.g. Interop's legacy status changes):
 * whether this instance has a tracker at all (test it before building the data), and emit a
 * record named `name` from ai whose data are the fields of the record value `data` (NULL or
 * null: none; at most 16 fields are kept). */
bool wfm_ctx_tracks_custom(const wfm_ctx *ctx);
void wfm_ctx_track_custom(wfm_ctx *ctx, wfm_ai *ai, const char *name, const wf_value *data);
/* Record one native call for the trace (`--trace`, side-by-side verification); whether the
 * instance has a trace at all (test it to skip preparing what only the trace would use). */
bool wfm_ctx_traces_calls(const wfm_ctx *ctx);
/* in and out are positional: one value per parameter of ai's PARAMS property each (out then
 * the return value); the trace splits them by each parameter's direction. */
void wfm_ctx_trace_call(wfm_ctx *ctx, wfm_ai *ai, const char *function, const wf_value *in,
                        size_t in_count, const wf_value *out, size_t out_count);
/* The same for values already split: in the In and InOut values, out the Out and InOut values
 * then the return value (the legacy trace's form: calls made by an activity Interop hosts). */
/* The instance is being replayed to a position (wfm_migrate.h): kinds that call native code
 * skip the call and complete without writing its outputs. */
bool wfm_ctx_replaying(const wfm_ctx *ctx);
/* While replaying: values the host has for the inside of activity ai (looked up by its
 * DisplayName), which a kind that keeps foreign state (Interop: the body of a hosted legacy
 * composite) writes there once it waits; false when there are none. */
typedef struct wfm_replay_values {
    const char *const *names;
    const wf_value *values;
    size_t count;
} wfm_replay_values;
bool wfm_ctx_replay_values(const wfm_ctx *ctx, const wfm_ai *ai, wfm_replay_values *out);
/* While replaying: where the host's loop counterpart of ai (a ForEach / ParallelForEach, by
 * its DisplayName) is: the list it iterates and the items whose bodies are running, ascending
 * (a sequential loop: one, the current item); the loop starts there instead of at its first
 * item. False when the host has none. */
typedef struct wfm_replay_items {
    const wf_value *values; /* a list */
    const size_t *running;
    size_t running_count;
} wfm_replay_items;
bool wfm_ctx_replay_items(const wfm_ctx *ctx, const wfm_ai *ai, wfm_replay_items *out);
void wfm_ctx_trace_call_split(wfm_ctx *ctx, wfm_ai *ai, const char *function, const wf_value *in,
                              size_t in_count, const wf_value *out, size_t out_count);

#endif

/* wfm_runtime.h — the modern runtime's host API: a runtime (catalogue with the built-in
 * kinds, type table, definition cache, worker pool) and the workflow instances it runs.
 * Each instance runs on one logical thread at a time; many run on the pool (docs/architecture.md "The
 * scheduler", docs/semantics.md §5). */
#ifndef WFM_RUNTIME_H
#define WFM_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"
#include "wfm_activity.h"
#include "wfm_definition.h"
#include "wfm_track.h"

/* Lifecycle:
 * 1. wfm_runtime_create (registers the built-in kinds); optionally register more kinds on
 *    wfm_runtime_catalogue(rt) before the first load.
 * 2. wfm_runtime_load: definitions are cached by path and content hash and shared; release
 *    each one you got with wfm_definition_release.
 * 3. wfm_instance_create (retains the definition), wfm_instance_set_input, then either
 *    wfm_instance_run (on the caller's thread, until Closed/Faulted/... or Idle) or
 *    wfm_instance_start (on the pool) + wfm_runtime_wait_idle / an on_complete callback.
 * 4. Read the state, outputs, bookmarks or fault; resume bookmarks and run again.
 * 5. wfm_instance_destroy every instance, then wfm_runtime_destroy.
 * Threads: the host API may be called from any thread; calls on one instance must not race
 * with each other (the pool holds an instance exclusively while it runs). */

typedef struct wfm_runtime wfm_runtime;
typedef struct wfm_instance wfm_instance;

/* Workflow output (WriteLine). Called on the thread running the instance; the runtime's
 * writer is shared by all instances and its calls are serialised by a mutex. */
typedef void (*wfm_write_fn)(void *ud, const char *text, size_t len);
/* The clock, microseconds since the epoch (UTC). Tests substitute a virtual one. */
typedef int64_t (*wfm_clock_fn)(void *ud);

typedef struct wfm_runtime_opts {
    unsigned worker_count;     /* 0: one per core */
    const wf_libpath *libpath; /* borrowed, must outlive the runtime; NULL: none */
    wfm_write_fn write;        /* NULL: stdout */
    void *write_ud;
    wfm_clock_fn clock; /* NULL: the real clock */
    void *clock_ud;
    wfm_tracker *tracker; /* borrowed, must outlive the runtime; NULL: no tracking */
    /* Work items one instance may run without going idle (0: no limit). A loop that never
     * waits (While True) then ends the instance as Terminated with "the workflow ran N work
     * items without waiting for anything", and wfm_instance_run returns WF_E_LIMIT with that
     * message at the root activity. */
    uint64_t max_steps;
    /* Validate-only loads (wfm_load_opts.check_native): nothing native is opened. */
    wfm_native_check_fn check_native;
    void *check_ud;
} wfm_runtime_opts;

#define WFM_RUNTIME_OPTS_INIT                                                                      \
    {.worker_count = 0, .libpath = NULL, .write = NULL, .write_ud = NULL, .clock = NULL,           \
     .clock_ud = NULL, .tracker = NULL, .max_steps = 0, .check_native = NULL, .check_ud = NULL}

wf_status wfm_runtime_create(const wfm_runtime_opts *opts, wfm_runtime **out, wf_error *err);
/* Stops the workers. Every instance must have been destroyed. Accepts NULL. */
void wfm_runtime_destroy(wfm_runtime *rt);
wfm_catalogue *wfm_runtime_catalogue(wfm_runtime *rt);
wf_types *wfm_runtime_types(wfm_runtime *rt);

/* Load (or find in the cache) a definition. Diagnostics go to `diags` (optional). */
wf_status wfm_runtime_load(wfm_runtime *rt, const char *path, wfm_definition **out, wf_diags *diags,
                           wf_error *err);
/* Same from memory; `name` is the file name used in locations and part of the cache key. */
wf_status wfm_runtime_load_mem(wfm_runtime *rt, const char *name, const char *data, size_t len,
                               wfm_definition **out, wf_diags *diags, wf_error *err);

/* Block until no instance is runnable, running or waiting on a timer. */
void wfm_runtime_wait_idle(wfm_runtime *rt);

/* Counters since the runtime was created (for tests and benchmarks). */
typedef struct wfm_stats {
    uint64_t definitions_loaded, definition_cache_hits;
    uint64_t instances_created, instances_completed;
    uint64_t activities_executed, work_items, bookmarks_resumed, timers_fired;
} wfm_stats;
void wfm_runtime_stats(wfm_runtime *rt, wfm_stats *out);

/* ---- instances ------------------------------------------------------------------------- */
typedef enum wfm_instance_state {
    WFM_INSTANCE_CREATED = 0, /* not run yet */
    WFM_INSTANCE_EXECUTING,   /* runnable or running */
    WFM_INSTANCE_IDLE,        /* waiting on bookmarks or timers */
    WFM_INSTANCE_CLOSED,
    WFM_INSTANCE_FAULTED,
    WFM_INSTANCE_CANCELED,
    WFM_INSTANCE_TERMINATED,
} wfm_instance_state;

/* "Executing", "Idle", "Closed", ... as the output contract spells them. */
const char *wfm_instance_state_name(wfm_instance_state state);

wf_status wfm_instance_create(wfm_runtime *rt, wfm_definition *def, wfm_instance **out,
                              wf_error *err);
/* Waits for the pool to let go of the instance. Accepts NULL. */
void wfm_instance_destroy(wfm_instance *inst);
/* Per-instance output writer (overrides the runtime's). Before the first run. */
void wfm_instance_set_writer(wfm_instance *inst, wfm_write_fn write, void *ud);
/* Native calls activities make (InvokeMethod), for side-by-side traces. Before the run. */
typedef void (*wfm_trace_fn)(void *ud, const char *function, const wf_value *in, size_t in_count,
                             const wf_value *out, size_t out_count);
void wfm_instance_set_trace(wfm_instance *inst, wfm_trace_fn fn, void *ud);
/* The same calls split by direction and placed in the activity tree, in the form the legacy
 * executor's trace has (wfl_trace_rec), for `wfbridge verify`. in: the In and InOut
 * parameters' values in order; out: the Out and InOut parameters' values in order, then the
 * return value unless the function is void. branch: "" outside any Parallel or
 * ParallelForEach, else one "NODEID#N/" segment per enclosing one, outermost first, where N
 * tells apart the branch instances running at the same time (not stable across runs). The
 * record lives during the call. May be combined with wfm_instance_set_trace. Before the run. */
typedef struct wfm_call_rec {
    const char *function;
    const char *activity; /* the calling activity's DisplayName */
    const char *branch;
    const wf_value *in;
    size_t in_count;
    const wf_value *out;
    size_t out_count;
} wfm_call_rec;
typedef void (*wfm_call_fn)(void *ud, const wfm_call_rec *rec);
void wfm_instance_set_call_trace(wfm_instance *inst, wfm_call_fn fn, void *ud);
/* Called on the worker each time a pool run ends Closed/Faulted/Canceled/Terminated, or
 * Idle with no timer pending. It must not call the host API on the same instance (the
 * worker still holds it). Set before wfm_instance_start. */
typedef void (*wfm_instance_fn)(wfm_instance *inst, void *ud);
void wfm_instance_on_complete(wfm_instance *inst, wfm_instance_fn fn, void *ud);
/* The instance's extension state for `spec` (wfm_ctx_ext_get, seen from the host), created
 * zeroed on first use; for a host that equips an instance before running it. NULL: no memory. */
void *wfm_instance_ext_get(wfm_instance *inst, const wfm_ext_spec *spec);

/* Set In/InOut argument `name` before the first run. WF_E_NAME: no such argument or an Out
 * argument; WF_E_TYPE (or the conversion's code): the value does not convert. */
wf_status wfm_instance_set_input(wfm_instance *inst, const char *name, const wf_value *value,
                                 wf_error *err);

/* Run on the caller's thread until the instance completes or is idle; due timers fire.
 * WF_E_STATE when it is completed, or queued on / running in the pool. */
wf_status wfm_instance_run(wfm_instance *inst, wf_error *err);
/* Queue the instance on the worker pool; returns at once. */
wf_status wfm_instance_start(wfm_instance *inst, wf_error *err);

wfm_instance_state wfm_instance_state_get(const wfm_instance *inst);
const wfm_definition *wfm_instance_definition(const wfm_instance *inst);

/* Outputs: the Out and InOut arguments in declaration order (values live as long as the
 * instance, until it runs again). */
size_t wfm_instance_output_count(const wfm_instance *inst);
const char *wfm_instance_output_name(const wfm_instance *inst, size_t index);
const wf_value *wfm_instance_output_value(const wfm_instance *inst, size_t index);
const wf_value *wfm_instance_output(const wfm_instance *inst, const char *name); /* NULL */

/* Blocking bookmarks, in creation order (names live until the next resume or run). */
size_t wfm_instance_bookmark_count(const wfm_instance *inst);
const char *wfm_instance_bookmark_name(const wfm_instance *inst, size_t index);
/* Earliest pending timer (us since the epoch) or INT64_MAX when none. */
int64_t wfm_instance_next_timer_us(const wfm_instance *inst);

/* Whether a resumption of bookmark `name` with `payload` (NULL: null) would be taken: the
 * activity waiting on it binds the payload by its declared parameters and type
 * (docs/formats.md "Event payloads"). WF_E_TYPE saying why not; WF_OK also when
 * there is no such bookmark (wfm_instance_resume reports that). Changes nothing. */
wf_status wfm_instance_check_resume(const wfm_instance *inst, const char *name,
                                    const wf_value *payload, wf_error *err);

/* Resume bookmark `name` with `payload` (NULL: null). The resumption is queued at the back;
 * run the instance again (a started instance is put back on the pool). WF_E_NOTFOUND for an
 * unknown name, WF_E_STATE when the instance has completed. */
wf_status wfm_instance_resume(wfm_instance *inst, const char *name, const wf_value *payload,
                              wf_error *err);
/* Asynchronous work of the instance (wfm_ctx_async_begin) that has not been resumed yet. A
 * host running the instance on its own thread (wfm_instance_run) finds it idle with work
 * pending: wfm_instance_wait_async blocks the calling thread until some completes, then run
 * it again. Returns at once when none is pending. */
bool wfm_instance_async_pending(const wfm_instance *inst);
void wfm_instance_wait_async(wfm_instance *inst);
/* Request cancellation of the whole instance (takes effect when it next runs). */
wf_status wfm_instance_cancel(wfm_instance *inst, wf_error *err);
/* End the instance at once as Terminated with `reason` as the exception message. */
wf_status wfm_instance_terminate(wfm_instance *inst, const char *reason, wf_error *err);

/* The instance id used in tracking records and by the instance store: 32 hex digits, made
 * up when first asked for unless the host set one (a durable host sets the store's id). */
const char *wfm_instance_id(wfm_instance *inst);
void wfm_instance_set_id(wfm_instance *inst, const char *id); /* copied; at most 32 chars */
/* Emit a WorkflowInstance tracking record the host knows about ("Persisted", "Unloaded",
 * "Resumed"). No-op without a tracker. */
void wfm_instance_track_state(wfm_instance *inst, const char *state);

/* Faulted/Terminated: the exception (null otherwise) and where it was thrown. */
const wf_value *wfm_instance_fault(const wfm_instance *inst);
wf_loc wfm_instance_fault_loc(const wfm_instance *inst);

#endif

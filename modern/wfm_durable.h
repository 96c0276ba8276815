/* wfm_durable.h — the durable host: a wfm_runtime plus a wfm_store. It creates instances in
 * the store under a lease, runs them, saves them at persist points (Persist activity, idle
 * per TimeToPersist/TimeToUnload, completion), loads-and-locks them back by id, renews the
 * leases of loaded instances from a background thread and releases them on unload
 * (docs/architecture.md "Persistence", docs/semantics.md §5). */
#ifndef WFM_DURABLE_H
#define WFM_DURABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_value.h"
#include "wfm_runtime.h"
#include "wfm_store.h"

/* Lifecycle:
 * 1. wfm_host_create(rt, store, opts). The Persist activity of an instance the host runs
 *    requests a persist (outside a durable host a Persist completes at once).
 * 2. wfm_host_new (an id; set inputs on wfm_dinst_instance) or wfm_host_load
 *    (lock + restore by id); wfm_host_start instead saves a new instance for another host.
 * 3. wfm_host_run: runs on the caller's thread to the next idle or completion, saving at each
 *    persist point on the way; wfm_host_resume + wfm_host_run continue it.
 * 4. wfm_dinst_close each instance (releases a lease still held, without saving), then
 *    wfm_host_destroy.
 * Threads: different instances may be run from different threads at once (their saves are
 *    then grouped into shared commits when the store has group commit on); calls on one
 *    instance must not race.
 *
 * Idle policy (WF4 WorkflowIdleBehavior): when an instance goes idle outside a no-persist
 * zone, time_to_unload_ms == 0 persists it and unloads it at once (releases the lease; the
 * in-memory copy stays readable until wfm_dinst_close but can no longer run); otherwise
 * time_to_persist_ms == 0 (< time_to_unload) persists it and keeps it loaded. Longer settings
 * are applied by wfm_host_poll, which compares the host clock with the time the instance went
 * idle. WFM_HOST_NEVER is TimeSpan.MaxValue. The defaults (WFM_HOST_OPTS_INIT): persist and
 * unload as soon as idle, which is what the CLI wants (WF4's own default TimeToUnload is
 * one minute).
 *
 * Inside a no-persist zone (an InvokeMethod or TransactionScope executing) an idle instance
 * is not saved: the persist is deferred to the next persist point after the zone ends, and
 * the instance stays loaded (wfm_dinst_loaded is true).
 *
 * Promoted properties: opts.promote names arguments of the workflow (any direction) or
 * variables of its root activity; each save writes their current values as text
 * (wf_value_to_text) into the store's promoted table, queryable with `wfbridge instances
 * --where NAME=VALUE` / wfm_store_query. A name that is neither (or a root variable once the
 * root has completed) is skipped. A loaded instance keeps promoting the names its store row
 * already has, so a later host need not repeat the list. */

#define WFM_HOST_NEVER INT64_MAX

/* Called after each successful save (on the saving thread), e.g. for logs and tests. */
typedef void (*wfm_host_persist_fn)(void *ud, const wfm_store_save_rec *rec);
/* The host clock in microseconds since the epoch (NULL: the real clock). */
typedef int64_t (*wfm_host_clock_fn)(void *ud);

typedef struct wfm_host_opts {
    int64_t time_to_persist_ms; /* WFM_HOST_NEVER (default), or persist after idle this long */
    int64_t time_to_unload_ms;  /* 0 (default): persist + unload at once; WFM_HOST_NEVER */
    const char *const *promote; /* argument / root variable names to promote (borrowed) */
    size_t promote_count;
    int64_t renew_ms; /* lease renewal period; 0: 10,000 ms; < 0: no thread */
    wfm_host_persist_fn on_persist;
    void *on_persist_ud;
    wfm_host_clock_fn clock;
    void *clock_ud;
} wfm_host_opts;

#define WFM_HOST_OPTS_INIT                                                                         \
    {                                                                                              \
        .time_to_persist_ms = WFM_HOST_NEVER, .time_to_unload_ms = 0, .promote = NULL,             \
        .promote_count = 0, .renew_ms = 0, .on_persist = NULL, .on_persist_ud = NULL,              \
        .clock = NULL, .clock_ud = NULL                                                            \
    }

typedef struct wfm_host wfm_host;
typedef struct wfm_dinst wfm_dinst; /* one durable instance handled by a host */

/* rt and store are borrowed and must outlive the host. */
wf_status wfm_host_create(wfm_runtime *rt, wfm_store *store, const wfm_host_opts *opts,
                          wfm_host **out, wf_error *err);
/* Stops the renewal thread. Every wfm_dinst must have been closed. Accepts NULL. */
void wfm_host_destroy(wfm_host *host);
wfm_store *wfm_host_store(wfm_host *host);

/* A new instance of def: an in-memory instance, not yet run, and its id. The store row is
 * created by its first save (wfm_host_run, wfm_host_start, wfm_host_persist) together with
 * that state, leased to this host, in one transaction: a process that dies or a disk that
 * fills up before that commit leaves no row; closing it unsaved leaves none either. */
wf_status wfm_host_new(wfm_host *host, wfm_definition *def, wfm_dinst **out, wf_error *err);
/* Load instance `id`: decode its saved state (the definition is loaded again from the path the
 * store recorded and must have the same content hash), then take its lease. WF_E_NOTFOUND
 * unknown id; WF_E_LOCKED another host holds it; WF_E_STATE it has completed or was never
 * saved; WF_E_CORRUPT its state does not decode (the store is left untouched); I/O and
 * parse errors of the definition file as they are. WF_E_LOCKED too when this host already has
 * the instance open (one wfm_dinst per instance and host). */
wf_status wfm_host_load(wfm_host *host, const char *id, wfm_dinst **out, wf_error *err);
/* Does this host have instance `id` open, holding its lease or in use (a pool run)? A host
 * listing the store skips those. */
bool wfm_host_has(wfm_host *host, const char *id);

/* As wfm_host_load for an instance whose lease this host's store already holds and whose row
 * it read (wfm_store_claim): decodes `state` without reading the store. pending_resumes: the
 * queued resumptions the claim counted (0: the next wfm_host_run_pooled does not read the
 * queue; one queued later waits for the instance's next run); promoted: the promoted
 * properties it counted (0: none are read back; only the lease holder writes them). On any failure the lease is
 * given back. WF_E_STATE for a completed status or no state; WF_E_LOCKED (lease kept) when
 * this host already has the instance open. */
wf_status wfm_host_adopt(wfm_host *host, const char *id, const char *status, uint64_t hash,
                         const void *state, size_t state_len, int64_t pending_resumes,
                         int64_t promoted, wfm_dinst **out, wf_error *err);
/* Run to the next idle or completion: a Persist request saves the instance (keeping the
 * lease) and continues; completion saves the final status and state and releases the lease;
 * idle applies the idle policy above. The first run of a new instance saves it first
 * (status "Created", inputs included), so that a restart after a crash can run it; that
 * save is part of creating the instance, not a persist point: wfm_dinst_saves does not count
 * it, on_persist is not called and no "Persisted" record is tracked.
 * Resumptions queued in the store (wfm_store_enqueue_resume, `wfbridge resume` while another
 * host held the lease) are applied in seq order whenever the instance has their bookmark;
 * the save that follows deletes them in its transaction. One whose bookmark the instance
 * lacks waits, with those after it, for a later run; completion drops what is left.
 * WF_E_STATE when the instance was unloaded or has completed; a failed save (e.g.
 * WF_E_LOCKED: the lease was lost) is returned. */
wf_status wfm_host_run(wfm_host *host, wfm_dinst *d, wf_error *err);
/* Called once when a pool run (wfm_host_run_pooled) ends, on a worker or on the store's commit
 * thread: WF_OK when the instance completed (saved, released) or went idle (the idle policy
 * applied), else the error that ended it (a failed save, e.g. WF_E_LOCKED). It must not call
 * the host API on d: hand d to another thread, which may then read and close it. */
typedef void (*wfm_host_done_fn)(void *ud, wfm_dinst *d, wf_status status, const wf_error *err);
/* As wfm_host_run, but on the runtime's worker pool: returns at once, and no worker ever waits
 * for the store. At each persist point the worker encodes the instance and hands the save to
 * the store's commit thread (wfm_store_save_async, grouped with the other instances' saves);
 * the instance holds no thread until the save committed, then continues on the pool. A timer
 * pending inside a no-persist zone is waited for on the pool; outside one, idle applies the
 * idle policy. After wfm_host_end_runs, a run reaching a Persist request saves it and
 * releases the lease instead of continuing (a graceful stop: another host goes on from
 * there). Queued resumptions are read (from the store) and applied as by wfm_host_run. A new
 * instance's first save (see wfm_host_run) joins the commit thread's group commit too, and the
 * instance starts once it committed (a failed one ends the run: done gets the error). An
 * error before the instance was started is returned and done is never called. */
wf_status wfm_host_run_pooled(wfm_host *host, wfm_dinst *d, wfm_host_done_fn done, void *ud,
                              wf_error *err);
void wfm_host_end_runs(wfm_host *host);
/* Save a new instance (wfm_host_new, inputs set) as "Created" and release its lease without
 * running it, for a host to pick up (`wfbridge start`; `wfbridge host` runs Created rows).
 * Like the first save of wfm_host_run it is not a persist point. The wfm_dinst is unloaded
 * afterwards (close it). WF_E_STATE once the instance has run or been saved. */
wf_status wfm_host_start(wfm_host *host, wfm_dinst *d, wf_error *err);
/* Resume a bookmark of a loaded instance (see wfm_instance_resume); run it next. Queued
 * resumptions the instance can take now are applied before it. A payload that does not
 * convert to the bookmark's declared type (the x:TypeArguments of the activity waiting on it,
 * e.g. WaitForEvent<Int32>) is WF_E_TYPE, naming the bookmark and the type, and changes
 * nothing: the instance neither faults nor is saved. A queued resumption whose payload does
 * not convert is dropped (deleted by the next save) instead of faulting the instance. */
wf_status wfm_host_resume(wfm_host *host, wfm_dinst *d, const char *bookmark,
                          const wf_value *payload, wf_error *err);
/* Save now (WF_E_STATE inside a no-persist zone); unload=true also releases the lease. */
wf_status wfm_host_persist(wfm_host *host, wfm_dinst *d, bool unload, wf_error *err);
/* Apply time_to_persist/time_to_unload to every loaded idle instance whose time has come
 * (the long-running host and the renewal thread call it). */
wf_status wfm_host_poll(wfm_host *host, wf_error *err);
/* The host clock (opts.clock, else the real one), e.g. to decide which timers are due. */
int64_t wfm_host_now_us(const wfm_host *host);

/* Release the lease if still held (nothing is saved) and free the instance. NULL accepted. */
void wfm_dinst_close(wfm_dinst *d);
const char *wfm_dinst_id(const wfm_dinst *d);
/* The status a save of it records: the instance's state ("Idle", "Closed", ...), except
 * "Executing" while it waits only on Persist requests (a run stopped there by
 * wfm_host_end_runs: runnable, a host resumes it on load). */
const char *wfm_dinst_status(const wfm_dinst *d);
/* The in-memory instance: set inputs before the first run; read outputs, bookmarks, state.
 * Bookmark names include internal Persist bookmarks (wfm_persist_bookmark tells them). */
wfm_instance *wfm_dinst_instance(wfm_dinst *d);
bool wfm_dinst_loaded(const wfm_dinst *d); /* false once unloaded or completed */
/* The user-visible bookmarks as last saved ("" entries never; count 0 when none). */
size_t wfm_dinst_bookmark_count(const wfm_dinst *d);
const char *wfm_dinst_bookmark_name(const wfm_dinst *d, size_t index);
uint64_t wfm_dinst_saves(const wfm_dinst *d); /* successful saves by this host */

#endif

/* wfm_sched_int.h — the scheduler's internal state, shared inside modern/ only: activity
 * instances (wfm_ai), the per-instance work-item deque, bookmarks, timers and environments,
 * and the entry points wfm_runtime.c drives. Activities use wfm_ctx.h and wfm_node.h, not these
 * fields. Environment rules: wfm_definition_int.h ("ENVIRONMENTS"); ordering rules:
 * docs/semantics.md §5. */
#ifndef WFM_SCHED_INT_H
#define WFM_SCHED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "wfm_activity.h"
#include "wfm_ctx.h"
#include "wfm_node.h"
#include "wfm_definition_int.h"
#include "wfm_expr.h"
#include "wfm_runtime.h"

/* What kinds can rely on (beyond wfm_activity.h):
 * - Default cancellation (spec->cancel NULL): the runtime cancels the running children and
 *   closes the activity as Canceled when the last one is done; its on_done callbacks are
 *   not called meanwhile. A kind with a cancel callback keeps getting on_done.
 * - wfm_ctx_complete with children still running closes the activity when they are done
 *   (their on_done callbacks are not called).
 * - Faults: the source is aborted (no on_done for it). When an ancestor handles the fault,
 *   every activity the fault passed through is canceled, and the source's parent, if
 *   nothing can wake it any more (no children, bookmarks or timers), is closed as
 *   Canceled (Faulted if it is the handler's child). Count children with
 *   wfm_ai_running_children rather than a counter of your own.
 * - The root may get children from finish hooks after its body closed. */

/* Activity instance flags. */
enum {
    WFM__AI_CANCEL_REQ = 1u << 0,  /* cancellation requested (wfm_ctx_cancel_child) */
    WFM__AI_MARK_CANCEL = 1u << 1, /* wfm_ctx_mark_canceled: complete as WFM_CANCELED */
    WFM__AI_FAULTING = 1u << 2,    /* faulted or aborted: callbacks on it are ignored */
    WFM__AI_FAULT_DONE = 1u << 3,  /* a handled fault: completes as WFM_FAULTED */
    WFM__AI_EMPTY = 1u << 4,       /* an empty delegate body: completes at once */
    WFM__AI_COMPLETING = 1u << 5,  /* complete requested while children still ran */
    WFM__AI_STARTED = 1u << 6,     /* execute has run (its environment exists) */
};

typedef struct wfm__bookmark wfm__bookmark;

#define WFM__AI_SMALL_STATE 16 /* bytes of kind state kept inside the activity instance */

/* An activity instance. Lives from wfm_ctx_schedule until its parent's on_done returned (or
 * it is aborted); comes from the instance's ai pool. `serial` (never 0 while alive) lets a
 * queued work item notice that its instance was freed and the slot reused. */
struct wfm_ai {
    const wfm_node *node;
    uint64_t serial;
    const wfm_kind_spec *spec;
    wfm_ai *parent;
    wfm_ai *first_child, *last_child; /* children not yet delivered to on_done */
    wfm_ai *prev, *next;              /* siblings */
    uint32_t child_count;
    uint32_t timer_count;
    wfm_done_fn on_done; /* the parent's callbacks for this child */
    wfm_fault_fn on_fault;
    wfm_env *env;            /* env(ai): &venv, or the environment it was scheduled in */
    wfm_env venv;            /* Ev: the node's variables (slots NULL when none) */
    wfm_env denv;            /* Ed: a delegate body's one-slot environment (slots NULL if not) */
    wf_value darg;           /* Ed's one slot (denv.slots points here) */
    void *state;             /* spec->state_size bytes or NULL: small_state or a pool's */
    wfm__bookmark *bookmarks; /* owned by this ai (list via owner_next) */
    uint8_t status;          /* wfm_status */
    uint8_t flags;           /* WFM_AI_* */
    bool darg_borrowed;      /* darg holds no reference (wfm_ctx_schedule_delegate_borrowed) */
    /* a state of at most WFM__AI_SMALL_STATE bytes (a Sequence's position) lives here, so
     * those kinds take no slot from a state pool */
    _Alignas(16) unsigned char small_state[WFM__AI_SMALL_STATE];
};

struct wfm__bookmark {
    char *name; /* owned */
    wfm_ai *owner;
    uint64_t owner_serial;
    unsigned flags; /* WFM_BOOKMARK_* */
    wfm_resume_fn on_resume;
    wfm__bookmark *owner_next, *owner_prev; /* the owner's bookmarks */
    wfm__bookmark *all_next, *all_prev;     /* the instance's, in creation order */
};

typedef struct wfm__timer {
    int64_t due_us;
    uint64_t seq; /* creation order breaks ties: equal due times fire FIFO */
    wfm_ai *owner;
    uint64_t owner_serial;
    wfm_resume_fn on_fire;
} wfm__timer;

/* Work items. EXECUTE and DONE are pushed to the front (LIFO), RESUME (bookmarks, timers) is
 * appended at the back (FIFO); FAULT and ROOT_DONE go to the front so they run right after
 * the callback that caused them returns. Items live by value in a ring that grows by
 * doubling and is kept with the instance shell, so steady-state runs allocate none.
 * Termination is not an item: ctx->terminating ends the run before the next one. */
typedef enum wfm__wi_kind {
    WFM__WI_EXECUTE = 0, /* ai: run the kind's execute */
    WFM__WI_DONE,        /* ai completed: call the parent's on_done, then free ai */
    WFM__WI_RESUME,      /* ai: call fn(payload) */
    WFM__WI_FAULT,       /* ai raised exc: propagate */
    WFM__WI_ROOT_DONE,   /* the root closed: run the finish hooks */
} wfm__wi_kind;

typedef struct wfm__wi {
    wfm__wi_kind kind;
    wfm_ai *ai;
    uint64_t serial; /* ai->serial when queued */
    wfm_resume_fn fn;
    wf_value value; /* RESUME payload / FAULT exception (owned) */
} wfm__wi;

/* Tracking events (one mask test each: the host's track_mask). */
typedef enum wfm__track_event {
    WFM__TRACK_SCHEDULED, /* ai scheduled under its parent */
    WFM__TRACK_EXECUTING,
    WFM__TRACK_CLOSED, /* ai completed (its status says how) */
    WFM__TRACK_CANCEL_REQ,
    WFM__TRACK_FAULT,   /* ai's exc reaches `handler`'s fault callback (NULL: unhandled) */
    WFM__TRACK_RESUMED, /* bookmark `name` of ai resumed */
    WFM__TRACK_CUSTOM,  /* ai's custom record `name`, data = the fields of the record `value` */
    WFM__TRACK_EVENT_COUNT
} wfm__track_event;
/* Bits of wfm__sched_host.track_mask: (1 << event), except that WFM__TRACK_CLOSED has one bit
 * per way an activity closes, so a profile keeping only Faulted activities costs no call. */
#define WFM__TRACK_BIT_CLOSED (1u << WFM__TRACK_CLOSED)
#define WFM__TRACK_BIT_CLOSED_FAULTED (1u << WFM__TRACK_EVENT_COUNT)
#define WFM__TRACK_BIT_CLOSED_CANCELED (1u << (WFM__TRACK_EVENT_COUNT + 1))
/* `handler`: the activity whose fault callback sees a WFM__TRACK_FAULT, else NULL. */
typedef void (*wfm__track_fn)(void *ud, wfm__track_event ev, const wfm_ai *ai,
                              const wfm_ai *handler, const char *name, const wf_value *value);

/* The final state of an instance's run, as wfm_runtime.c maps it to wfm_instance_state. */
typedef enum wfm__sched_state {
    WFM__SCHED_NEW = 0,
    WFM__SCHED_RUNNING, /* work queued */
    WFM__SCHED_IDLE,    /* no work; bookmarks or timers pending */
    WFM__SCHED_CLOSED,
    WFM__SCHED_FAULTED,
    WFM__SCHED_CANCELED,
    WFM__SCHED_TERMINATED,
} wfm__sched_state;

typedef struct wfm__finish_hook {
    wfm_finish_fn fn;
    void *data;
} wfm__finish_hook;

typedef struct wfm__ext {
    const void *key;
    void *state;
    void (*fini)(void *state);
} wfm__ext;

/* Host services the scheduler calls (filled by wfm_runtime.c). */
typedef struct wfm__sched_host {
    wfm_write_fn write;
    void *write_ud;
    int64_t (*clock)(void *ud);
    void *clock_ud;
    wf_types *types;
    wfm__track_fn track;  /* called for the events in track_mask */
    void *track_ud;
    unsigned track_mask;  /* WFM__TRACK_BIT_* / (1 << event); 0: no tracking */
    /* NULL: native calls are not traced (wfm_ctx_trace_call); split: the values are already
     * split by direction (wfm_ctx_trace_call_split), else positional */
    void (*trace)(void *ud, const wfm_ai *ai, const char *function, const wf_value *in,
                  size_t in_count, const wf_value *out, size_t out_count, bool split);
    void *trace_ud;
    uint64_t max_steps; /* work items without going idle; 0: no limit */
    bool replay;        /* native calls are skipped (wfm_migrate.h: rebuilding a position) */
    bool (*replay_values)(void *ud, const char *activity, wfm_replay_values *out);
    bool (*replay_items)(void *ud, const char *activity, wfm_replay_items *out);
    void *replay_ud;
} wfm__sched_host;

#define WFM__STATE_CLASSES 5 /* per-kind state pools: 16, 32, 64, 128, 256 bytes */
#define WFM__ENV_CLASSES   6 /* env slot pools: 1, 2, 4, 8, 16, 32 values */

/* The running instance, as callbacks see it (wfm_ctx). Embedded in wfm_instance. */
struct wfm_ctx {
    /* Buffers and pools: wfm__sched_recycle keeps these (and E0's slots) for the next
     * instance and zeroes everything from `state` on; wfm__sched_init sets def and host. */
    wfm__wi *ring;    /* the deque's ring (below) */
    size_t cap;       /* its items */
    uint32_t root_cap; /* arguments E0's block has room for */
    wf_pool *ai_pool, *bm_pool;
    wf_pool *state_pools[WFM__STATE_CLASSES];
    wf_pool *env_pools[WFM__ENV_CLASSES];
    wf_strmap *bookmark_map; /* name -> wfm__bookmark */
    wfm__timer *timers;      /* min-heap on (due_us, seq) */
    size_t timer_cap;
    wfm__finish_hook *hooks;
    size_t hook_cap;
    const wfm_definition *def; /* retained by the instance */
    wfm__sched_host host;
    /* one run's state */
    wfm__sched_state state;
    wfm_env root_env; /* E0 (slots owned; room for root_cap arguments) */
    bool *supplied;   /* [arg_count]: the host set this argument (in E0's block) */
    wfm_ai *root;
    uint64_t next_serial, next_timer_seq;
    /* the deque: a ring of `cap` items, `count` used from `head`. While wfm__sched_run runs
     * (in_run), the front item may instead be held in top_* (top_set): most items about an
     * activity are popped right after they were pushed. Outside a run the ring is the whole
     * queue. */
    size_t head, count;
    bool in_run, top_set;
    wfm__wi_kind top_kind;
    wfm_ai *top_ai;
    uint64_t top_serial;
    wfm__bookmark *bm_first, *bm_last;
    size_t blocking_bookmarks;
    size_t timer_count;
    size_t hook_count;
    bool finishing;         /* the root closed, finish hooks' work is running */
    wfm_status body_status; /* how the root body ended */
    wfm__ext *exts;
    size_t ext_count;
    wf_value fault; /* Faulted / Terminated: the exception */
    wf_loc fault_loc;
    bool nomem;       /* ran out of memory: the instance faults */
    bool terminating; /* wfm_ctx_terminate was called: ends before the next item */
    bool faulted;     /* an unhandled fault ended (or is ending) the instance */
    /* the run: items taken so far and the budget (0: none), for inline leaves */
    size_t run_items, run_budget;
    /* the inline leaf (wfm_ctx_run_inline): its stand-in activity instance, never linked
     * or queued; for a delegate body, the delegate and the pending siblings */
    wfm_ai leaf;
    const wfm_node *leaf_dnode;
    unsigned leaf_dprop;
    const wf_value *leaf_pending;
    size_t leaf_pending_count;
    const wf_type *leaf_arg_type; /* the delegate argument's declared type, or NULL */
    uint64_t steps;   /* work items run since the instance was last idle */
    bool step_limit_hit; /* host.max_steps ended it (Terminated) */
    /* counters, added to the runtime's when a run ends */
    uint64_t n_executed, n_work_items, n_resumed, n_timers;
};

/* ---- entry points for wfm_runtime.c ----------------------------------------------------- */
/* Prepare ctx (zeroed by the caller) for `def`: E0 with default(T) in every slot. */
wf_status wfm__sched_init(wfm_ctx *ctx, const wfm_definition *def, const wfm__sched_host *host,
                          wf_error *err);
void wfm__sched_fini(wfm_ctx *ctx);
/* Release the run's state but keep the pools and buffers, so that wfm__sched_init can reuse
 * ctx for another instance without allocating. False (nothing released) when the instance
 * grew too large to be worth keeping or ran out of memory: wfm__sched_fini it instead. */
#define WFM__RECYCLE_MAX_ACTIVITIES 256
bool wfm__sched_recycle(wfm_ctx *ctx);
/* Set argument `index` in E0 (value already converted to its type). */
void wfm__sched_set_arg(wfm_ctx *ctx, size_t index, const wf_value *value);
/* Evaluate the defaults of unsupplied In/InOut arguments and schedule the root. */
wf_status wfm__sched_start(wfm_ctx *ctx);
/* Move due timers to the back of the queue, then run work items until the queue is empty,
 * the instance completes, or `budget` items ran (0 = no limit). Returns the state. */
wfm__sched_state wfm__sched_run(wfm_ctx *ctx, size_t budget);
/* Queue a host resumption of bookmark `name` at the back. WF_E_NOTFOUND if unknown. */
wf_status wfm__sched_resume(wfm_ctx *ctx, const char *name, const wf_value *payload, wf_error *err);
void wfm__sched_cancel(wfm_ctx *ctx);
/* After a run that ctx->step_limit_hit ended: WF_E_LIMIT "the workflow ran N work items
 * without waiting for anything ..." at the root activity (the run-legacy wording). */
wf_status wfm__sched_step_limit_error(const wfm_ctx *ctx, wf_error *err);
void wfm__sched_terminate(wfm_ctx *ctx, wf_value exc); /* exc taken over */
int64_t wfm__sched_next_timer(const wfm_ctx *ctx);     /* INT64_MAX if none */

/* ---- the built-in kinds (wfm_builtins.c) ---------------------------------------------- */
/* Register every built-in kind: those of wfm_acts.h. */
wf_status wfm__builtins_register(wfm_catalogue *cat, wf_error *err);

/* ---- persistence support (wfm_persist.c rebuilds a saved instance with these) ----------- */
/* A new activity instance of `node` under `parent` (NULL: none) with zeroed state and no
 * environment, not queued. NULL on out of memory. */
wfm_ai *wfm__sched_ai_restore(wfm_ctx *ctx, const wfm_node *node, wfm_ai *parent);
/* `count` environment slots from the pools env_release gives them back to (zeroed). */
wf_value *wfm__sched_slots_alloc(wfm_ctx *ctx, uint32_t count);
/* The state the instance was saved in, once its activities are rebuilt (from NEW only). */
void wfm__sched_set_saved_state(wfm_ctx *ctx, wfm__sched_state state);
/* Append a work item at the back (wi->value taken over); false on out of memory. */
bool wfm__sched_queue_restore(wfm_ctx *ctx, wfm__wi wi);
/* wfm_runtime.c: hold the instance for the calling thread (waiting while the pool runs it)
 * and give its scheduler state; wfm__instance_unhold lets it go again. */
wfm_ctx *wfm__instance_hold(wfm_instance *inst);
void wfm__instance_unhold(wfm_instance *inst);
/* The scheduler state without holding (the caller already holds the instance: a worker's
 * on_complete callback). */
wfm_ctx *wfm__instance_ctx(wfm_instance *inst);
/* The durable host's pool runs (wfm_durable.c). report_idle: on_complete is called at every
 * idle of a pool run (timers pending, a Persist request waiting), not only at completion or
 * an idle without timers; set before wfm_instance_start. unpool, from on_complete: once the
 * worker lets go, the instance leaves the pool (no timer registered, nothing posts it) until
 * wfm_instance_start puts it back. */
void wfm__instance_report_idle(wfm_instance *inst, bool on);
void wfm__instance_unpool(wfm_instance *inst);

#endif

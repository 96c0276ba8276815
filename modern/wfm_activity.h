/* wfm_activity.h — the extensible activity catalogue. An activity kind (built-in or added by
 * another part of the project, e.g. the bridge's Interop) is described once by a
 * wfm_kind_spec: its XAML element, its properties (arguments, child activities, auxiliary
 * nodes, delegates, literals) and its callbacks. The XAML loader is driven entirely by these
 * specs, and the scheduler calls the callbacks (docs/architecture.md "The modern model",
 * docs/semantics.md §5). Thread rule: callbacks of one instance run on one thread at a time. */
#ifndef WFM_ACTIVITY_H
#define WFM_ACTIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"

typedef struct wfm_catalogue wfm_catalogue; /* the set of registered kinds */
typedef struct wfm_kind wfm_kind;           /* one registered kind */
typedef struct wfm_node wfm_node;           /* an element of a loaded definition (immutable) */
typedef struct wfm_ai wfm_ai;               /* an activity instance (run time) */
typedef struct wfm_ctx wfm_ctx;             /* the running instance, seen from a callback */
typedef struct wfm_load wfm_load;           /* the loader, seen from a prepare callback */

#define WFM_NS_ACTIVITIES "http://schemas.microsoft.com/netfx/2009/xaml/activities"

/* ---- describing a kind ------------------------------------------------------------------ */
typedef enum wfm_prop_kind {
    WFM_PROP_IN,         /* InArgument<type>: "[expr]", a literal, or <InArgument> element */
    WFM_PROP_OUT,        /* OutArgument<type>: "[location]" */
    WFM_PROP_INOUT,      /* InOutArgument<type>: "[location]" */
    WFM_PROP_LITERAL,    /* attribute value converted to `type` at load ("True", "00:00:05") */
    WFM_PROP_ACTIVITY,   /* one child activity (category "Activity") */
    WFM_PROP_ACTIVITIES, /* ordered child activities */
    WFM_PROP_NODE,       /* one node of category `accepts`; may be an x:Reference */
    WFM_PROP_NODES,      /* ordered nodes of category `accepts`; items may be x:Reference */
    WFM_PROP_KEYED,      /* content items with x:Key, key converted to `type` (Switch cases) */
    WFM_PROP_DELEGATE,   /* ActivityAction<type> with one DelegateInArgument (ForEach body) */
    WFM_PROP_PARAMS,     /* ordered typed In/Out/InOut arguments (InvokeMethod.Parameters) */
    WFM_PROP_TYPE,       /* a type name ("p:Any", "s:Exception"), resolved at load */
} wfm_prop_kind;

enum {
    WFM_PROP_REQUIRED = 1u << 0, /* validation error when absent */
    WFM_PROP_CONTENT = 1u << 1,  /* element content (children without a property element) */
    /* ACTIVITY: may also be an x:Reference ({x:Reference N} or <x:Reference>N</x:Reference>)
     * to an activity written in the same property of another node with the same owner: the
     * two sites share one node (StateMachine shared triggers, WF4 4.5). */
    WFM_PROP_SHARED = 1u << 2,
};

typedef struct wfm_prop_spec {
    const char *name;    /* "Condition", "Then", "Activities", "Text" */
    wfm_prop_kind kind;
    const char *type;    /* value type: "x:Boolean", "x:String", "x:Object", "T" (the kind's
                            x:TypeArguments), "List(T)"; NULL where not applicable */
    const char *accepts; /* NODE/NODES: the category of allowed nodes ("FlowNode", "Catch") */
    unsigned flags;
    const char *deflt;   /* LITERAL/IN default as text, NULL for none */
} wfm_prop_spec;

enum {
    WFM_KIND_GENERIC = 1u << 0,    /* takes x:TypeArguments (the "T" of its props) */
    WFM_KIND_VARIABLES = 1u << 1,  /* accepts <Kind.Variables> */
    WFM_KIND_CAN_IDLE = 1u << 2,   /* may create bookmarks or timers */
    WFM_KIND_NO_PERSIST = 1u << 3, /* the instance may not persist while one is executing */
    WFM_KIND_STATE_PLAIN = 1u << 4, /* the state_size bytes hold no pointers: saved as bytes */
};

/* Persistence (wfm_persist.h): see "Persistence contract" below. */
typedef struct wfm_persist_writer wfm_persist_writer;
typedef struct wfm_persist_reader wfm_persist_reader;
typedef struct wfm_ext_spec wfm_ext_spec;
typedef struct wfm_env wfm_env; /* an environment (wfm_expr.h) */

/* Callback types. `ai` is the activity instance the callback belongs to. */
typedef void (*wfm_exec_fn)(wfm_ctx *ctx, wfm_ai *ai);
/* A scheduled child finished: wfm_ai_status(child) says how. `child` is valid only during the
 * callback. */
typedef void (*wfm_done_fn)(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child);
/* A fault propagates out of `child`'s subtree. Return true to handle it: the runtime then
 * cancels what is left of the child subtree (running cancellation handlers) and calls on_done
 * for the child with status WFM_FAULTED. Return false to let it pass to ai's parent. */
typedef bool (*wfm_fault_fn)(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child, const wf_value *exc);
/* A bookmark or timer of ai was resumed with `payload` (null for timers). */
typedef void (*wfm_resume_fn)(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload);

typedef struct wfm_kind_spec {
    const char *name;     /* XAML element local name: "Sequence" */
    const char *ns;       /* element namespace URI; NULL = WFM_NS_ACTIVITIES */
    const char *category; /* "Activity" for activities; or "FlowNode", "State", "Catch", ... */
    unsigned flags;
    const wfm_prop_spec *props; /* order = property index used by the accessors below */
    size_t prop_count;
    const char *content_prop;   /* which property element content fills (NULL: none) */
    size_t state_size;          /* bytes of zeroed per-instance state (wfm_ai_state) */
    /* Load time, after the node is built and its expressions compiled (optional): static
     * checks beyond the spec, and preparation (open a native library, prepare a call).
     * Report problems with wfm_load_error (all of them) and return WF_OK unless out of
     * memory. */
    wf_status (*prepare)(wfm_load *load, wfm_node *node);
    wfm_exec_fn execute;  /* required for activities */
    wfm_exec_fn cancel;   /* NULL = cancel all running children, then complete as canceled */
    void (*fini)(wfm_ai *ai); /* release what the state holds (optional) */
    void *ud;                 /* spec-level user data, see wfm_kind_ud */
    /* ---- persistence (optional; "Persistence contract" below) ---- */
    const void *const *callbacks; /* every function the kind hands the runtime, cast to
                                     (const void *): on_done, on_fault, bookmark and timer
                                     callbacks, finish hooks (and static hook data) */
    size_t callback_count;
    /* Per-instance state that is not plain bytes: write it with the wfm_persist_write_*
     * helpers / read it back with wfm_persist_read_* into the zeroed state. */
    wf_status (*save)(const wfm_ai *ai, wfm_persist_writer *w);
    wf_status (*restore)(wfm_ai *ai, wfm_persist_reader *r);
    const wfm_ext_spec *const *exts; /* the extension states the kind creates */
    size_t ext_count;
    /* ---- dynamic arguments (optional) ----
     * For a kind whose argument set depends on the node itself (the bridge's Interop: the
     * properties of the legacy type its ActivityType names). Called while the node is being
     * built, after the spec's own properties are read and with the node's expression scope in
     * effect (prepare runs later, when scopes are gone): the place to bind open-ended
     * attributes as arguments with wfm_load_bind_attr and to take the rest with
     * wfm_load_next_attr. Attributes it leaves unclaimed are reported as unknown after
     * prepare. Same rules as prepare: report problems, return WF_OK unless out of memory. */
    wf_status (*bind)(wfm_load *load, wfm_node *node);
} wfm_kind_spec;

/* Register a kind. The spec and everything it points to must outlive the catalogue (static
 * tables). A second kind with the same namespace and name is WF_E_STATE. */
wf_status wfm_catalogue_register(wfm_catalogue *cat, const wfm_kind_spec *spec, wf_error *err);
const wfm_kind *wfm_catalogue_find(const wfm_catalogue *cat, const char *ns, const char *name);
const wfm_kind_spec *wfm_kind_spec_of(const wfm_kind *kind);
void *wfm_kind_ud(const wfm_kind *kind);

/* ---- reading a node (load time and run time) --------------------------------------------- */
const wfm_kind *wfm_node_kind(const wfm_node *node);
wf_loc wfm_node_loc(const wfm_node *node);
const char *wfm_node_display_name(const wfm_node *node); /* DisplayName, else the kind name */
const char *wfm_node_id(const wfm_node *node);           /* "1.3.2", stable per definition */
const wf_type *wfm_node_type_arg(const wfm_node *node);  /* x:TypeArguments, NULL if none */
bool wfm_node_has(const wfm_node *node, unsigned prop);  /* set in the XAML */
const wfm_node *wfm_node_child(const wfm_node *node, unsigned prop); /* ACTIVITY, NODE */
size_t wfm_node_count(const wfm_node *node, unsigned prop); /* ACTIVITIES, NODES, KEYED, PARAMS */
const wfm_node *wfm_node_at(const wfm_node *node, unsigned prop, size_t index);
const wf_value *wfm_node_key(const wfm_node *node, unsigned prop, size_t index); /* KEYED */
const wf_value *wfm_node_literal(const wfm_node *node, unsigned prop); /* LITERAL; null value
                                                                         when absent */
const wf_type *wfm_node_prop_type(const wfm_node *node, unsigned prop); /* IN/OUT/TYPE/... */
/* PARAMS: the direction and type of parameter `index`. */
wfm_prop_kind wfm_node_param_dir(const wfm_node *node, unsigned prop, size_t index);
const wf_type *wfm_node_param_type(const wfm_node *node, unsigned prop, size_t index);
/* Data a prepare callback attached (owned by the node, destroyed with the definition). */
void wfm_node_set_data(wfm_node *node, void *data, void (*destroy)(void *data));
void *wfm_node_data(const wfm_node *node);

/* ---- load time (prepare callbacks) ------------------------------------------------------ */
void wfm_load_error(wfm_load *load, const wfm_node *node, wf_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void wfm_load_warning(wfm_load *load, const wfm_node *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const wf_libpath *wfm_load_libpath(const wfm_load *load); /* NULL if none configured */
wf_types *wfm_load_types(const wfm_load *load);
/* The assembly NAME an xmlns prefix in scope at `node` maps to
 * ("clr-namespace:NS;Assembly=NAME"); NULL if the prefix is not a clr-namespace. */
const char *wfm_load_assembly(const wfm_load *load, const wfm_node *node, const char *prefix);
/* The raw text of an attribute of the node's element that the spec does not describe (for
 * kinds with open-ended attributes such as Interop's property names); NULL if absent. The
 * loader reports unknown attributes as errors unless a prepare callback claims them with this
 * function. */
const char *wfm_load_claim_attr(wfm_load *load, const wfm_node *node, const char *name);
/* Dynamic arguments (from a `bind` callback only). Claim attribute `name` of the node's
 * element and append it to PARAMS property `prop` as a parameter of direction `dir`
 * (WFM_PROP_IN, _OUT, _INOUT) and type `type`, bound exactly like a declared argument:
 * "[expr]" compiled in the node's scope (Out/InOut: a location of a compatible type), {x:Null},
 * or (In only) a literal converted to `type`; problems are reported at the attribute with
 * file:line:col. *index receives the parameter's index for wfm_ctx_get_param /
 * wfm_ctx_set_param, or SIZE_MAX when the attribute is absent or was reported. Returns
 * WF_E_NOMEM when memory ran out, else WF_OK. */
wf_status wfm_load_bind_attr(wfm_load *load, wfm_node *node, unsigned prop, const char *name,
                             wfm_prop_kind dir, const wf_type *type, size_t *index);
/* The next attribute of the node's element no spec member describes and nothing claimed yet
 * (document order): claims it and returns its name (and *at, optional, the location of its
 * value), or NULL when none is left. For a kind that reports such attributes itself. */
const char *wfm_load_next_attr(wfm_load *load, const wfm_node *node, wf_loc *at);
/* wfm_load_error at a location inside the node's element (an attribute's value): reported
 * even when the node already has an error, so a kind can report every bad attribute. */
void wfm_load_error_at(wfm_load *load, const wfm_node *node, wf_loc at, wf_status code,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- run time (execute / cancel / completion callbacks) --------------------------------- */
typedef enum wfm_status {
    WFM_EXECUTING = 0,
    WFM_CLOSED,
    WFM_CANCELED,
    WFM_FAULTED,
} wfm_status;

const wfm_node *wfm_ai_node(const wfm_ai *ai);
void *wfm_ai_state(wfm_ai *ai); /* kind's state_size bytes, zeroed at creation */
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
wf_status wfm_ctx_get_param(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, size_t index,
                            wf_value *out);
wf_status wfm_ctx_set_param(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, size_t index,
                            const wf_value *value);

/* Schedule `child` (a node reachable from ai's node) as a child of ai. WF4 order: scheduled
 * work is pushed to the FRONT of the queue, so the last scheduled runs first. on_done is
 * required, on_fault optional (NULL: faults pass through). */
wf_status wfm_ctx_schedule(wfm_ctx *ctx, wfm_ai *ai, const wfm_node *child, wfm_done_fn on_done,
                           wfm_fault_fn on_fault);
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
/* Fault with a new exception of the given type and message. */
void wfm_ctx_throw(wfm_ctx *ctx, wfm_ai *ai, const wf_type *exc_type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Request cancellation of one running child / all running children of ai. */
void wfm_ctx_cancel_child(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child);
void wfm_ctx_cancel_children(wfm_ctx *ctx, wfm_ai *ai);
size_t wfm_ai_running_children(const wfm_ai *ai);

enum { WFM_BOOKMARK_MULTIPLE = 1u << 0, WFM_BOOKMARK_NONBLOCKING = 1u << 1 };
/* Create a bookmark owned by ai; the instance goes idle while only bookmarks remain. The
 * runtime removes ai's bookmarks and timers when ai closes. Duplicate name: WF_E_STATE. */
wf_status wfm_ctx_bookmark(wfm_ctx *ctx, wfm_ai *ai, const char *name, unsigned flags,
                           wfm_resume_fn on_resume);
void wfm_ctx_bookmark_remove(wfm_ctx *ctx, wfm_ai *ai, const char *name);
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
    const char *name;           /* stable and unique: written into saved states */
    size_t size;                /* bytes of zeroed state */
    void (*fini)(void *state);  /* optional */
    wf_status (*save)(const void *state, wfm_persist_writer *w);
    wf_status (*restore)(void *state, wfm_persist_reader *r); /* into the zeroed state */
};
/* wfm_ctx_ext(ctx, spec, spec->size, spec->fini). */
void *wfm_ctx_ext_get(wfm_ctx *ctx, const wfm_ext_spec *spec);

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
void wfm_ctx_trace_call(wfm_ctx *ctx, wfm_ai *ai, const char *function, const wf_value *in,
                        size_t in_count, const wf_value *out, size_t out_count);

/* ---- Persistence contract ---------------------------------------------------------------
 * wfm_instance_save (wfm_persist.h) writes the whole instance; kinds take part like this:
 * 1. Callbacks. A function the runtime will call with an activity of kind K — on_done and
 *    on_fault passed to wfm_ctx_schedule(_delegate) for a child of a K activity, the callback
 *    of a bookmark or timer a K activity owns — must be listed in K's `callbacks` (so a Pick
 *    that schedules a child of its PickBranch lists nothing: PickBranch lists the callback).
 *    Finish hooks (wfm_ctx_on_finish), a non-NULL hook `data` (then a static object), the
 *    callbacks of work a finish hook schedules under the root, and pointers written with
 *    wfm_persist_write_ptr may be in any registered kind's table.
 *    The blob names a callback (kind name, index), so keep a table's order stable: append
 *    only. A callback not found makes the save fail with WF_E_STATE naming the kind.
 * 2. State. state_size == 0: nothing to do. WFM_KIND_STATE_PLAIN: the bytes are copied as
 *    they are (no pointers, no wf_values). Otherwise save/restore are required (registration
 *    refuses the kind): save writes the state with the helpers below, restore reads the same
 *    sequence into the zeroed state. Pointers are written as references: an activity instance
 *    (wfm_persist_write_ai: its index in the saved tree), a node (its dense index), an
 *    environment, a listed callback. restore runs after the whole tree exists (every ai can
 *    be referenced, children included) and before any callback; `fini` runs on a state whose
 *    restore failed half-way, so keep it safe on partly filled state.
 * 3. Extension states (wfm_ctx_ext): give them a wfm_ext_spec, create them with
 *    wfm_ctx_ext_get, list the spec in `exts`. Extensions are restored before activity states.
 *    A wfm_ctx_ext key found in no kind's `exts` makes the save fail (WF_E_STATE).
 * 4. No-persist zones: a kind whose run cannot be persisted meaningfully (a native call in
 *    flight, an atomic scope) sets WFM_KIND_NO_PERSIST; saving while one executes is refused.
 * 5. Versioning: the blob stores, for each kind, its name and the state bytes length-prefixed;
 *    a kind that changes its state layout should write a version number first.
 * Readers are sticky: after a bad read every later read returns zero / NULL; restore hooks
 * return WF_OK and the runtime then reports the first error (WF_E_CORRUPT). */
void wfm_persist_write_uint(wfm_persist_writer *w, uint64_t v);
void wfm_persist_write_int(wfm_persist_writer *w, int64_t v);
void wfm_persist_write_bytes(wfm_persist_writer *w, const void *data, size_t len);
void wfm_persist_write_str(wfm_persist_writer *w, const char *s); /* NULL allowed */
void wfm_persist_write_value(wfm_persist_writer *w, const wf_value *v);
void wfm_persist_write_ai(wfm_persist_writer *w, const wfm_ai *ai);       /* NULL allowed */
void wfm_persist_write_node(wfm_persist_writer *w, const wfm_node *node); /* NULL allowed */
void wfm_persist_write_ptr(wfm_persist_writer *w, const void *callback);  /* NULL allowed */
/* An environment: the root (E0), an activity's own (variables, delegate argument), or one
 * the kind owns (a snapshot): such a "free" environment is written in full at its first
 * reference, its parent chain as references. NULL allowed. */
void wfm_persist_write_env(wfm_persist_writer *w, const wfm_env *env);
/* Make the save fail (WF_E_STATE) with a message. */
void wfm_persist_write_fail(wfm_persist_writer *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

uint64_t wfm_persist_read_uint(wfm_persist_reader *r);
int64_t wfm_persist_read_int(wfm_persist_reader *r);
/* Bytes borrowed from the blob (valid during the restore); NULL (len 0) after an error. */
const void *wfm_persist_read_bytes(wfm_persist_reader *r, size_t *len);
char *wfm_persist_read_str(wfm_persist_reader *r); /* wf_malloc'd (caller frees); NULL */
wf_value wfm_persist_read_value(wfm_persist_reader *r); /* owned; null after an error */
wfm_ai *wfm_persist_read_ai(wfm_persist_reader *r);
const wfm_node *wfm_persist_read_node(wfm_persist_reader *r);
const void *wfm_persist_read_ptr(wfm_persist_reader *r);
/* A free environment read with take=true belongs to the caller from then on, with every
 * environment up its parent chain to the root environment (E0, which stays the runtime's):
 * they are wf_calloc'd wfm_env + wf_calloc'd slots (NULL when count is 0); free them with
 * wf_free. The chain must consist of free environments ending at E0 (E0 itself may be taken:
 * nothing to free), else the restore fails. A free environment nobody takes makes the restore
 * fail too (WF_E_CORRUPT): every saved one must have an owner. */
wfm_env *wfm_persist_read_env(wfm_persist_reader *r, bool take);
bool wfm_persist_read_ok(const wfm_persist_reader *r);
void wfm_persist_read_fail(wfm_persist_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
wfm_ctx *wfm_persist_reader_ctx(wfm_persist_reader *r); /* the instance being restored */

#endif

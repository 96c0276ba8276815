/* wfm_activity.h — defining an activity kind and registering it on the catalogue. A kind
 * (built-in or added by another part of the project, e.g. the bridge's Interop) is described
 * once by a wfm_kind_spec: its XAML element, its properties and its callbacks. The XAML loader
 * is driven by these specs, and the scheduler calls the callbacks (docs/architecture.md "The
 * modern model", docs/semantics.md §5). What callbacks may read of a node: wfm_node.h; what
 * they may do to the running instance: wfm_ctx.h; saving their state: wfm_persist.h. */
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
    WFM_KIND_GENERIC = 1u << 0,     /* takes x:TypeArguments (the "T" of its props) */
    WFM_KIND_VARIABLES = 1u << 1,   /* accepts <Kind.Variables> */
    WFM_KIND_CAN_IDLE = 1u << 2,    /* may create bookmarks or timers */
    WFM_KIND_NO_PERSIST = 1u << 3,  /* the instance may not persist while one is executing */
    WFM_KIND_STATE_PLAIN = 1u << 4, /* the state_size bytes hold no pointers: saved as bytes */
    /* execute completes or faults before it returns, using only the activity's own
     * properties and the writer (no children, bookmarks, timers, variables, state or custom
     * tracking): the scheduler may run it without an activity instance (wfm_ctx_run_inline) */
    WFM_KIND_INLINE = 1u << 5,
};

/* Persistence (wfm_persist.h, "Persistence contract"). */
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
    /* ---- persistence (optional; wfm_persist.h "Persistence contract") ---- */
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
    /* ---- resumption payloads (optional) ----
     * Whether a resumption of `bookmark`, which the node of `ai` owns, would take `payload`
     * (never NULL): WF_OK, or an error saying why (wfm_instance_check_resume; docs/formats.md
     * "Event payloads"). Changes nothing. Without it a generic kind's payload must convert to
     * its type argument. */
    wf_status (*check_resume)(const wfm_ai *ai, const char *bookmark, const wf_value *payload,
                              wf_error *err);
} wfm_kind_spec;

/* Register a kind. The spec and everything it points to must outlive the catalogue (static
 * tables). A second kind with the same namespace and name is WF_E_STATE. */
wf_status wfm_catalogue_register(wfm_catalogue *cat, const wfm_kind_spec *spec, wf_error *err);
const wfm_kind *wfm_catalogue_find(const wfm_catalogue *cat, const char *ns, const char *name);
const wfm_kind_spec *wfm_kind_spec_of(const wfm_kind *kind);
void *wfm_kind_ud(const wfm_kind *kind);
const char *wfm_kind_ns(const wfm_kind *kind); /* spec->ns, or WFM_NS_ACTIVITIES */

#endif

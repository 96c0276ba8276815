/* wfm_definition_int.h — the internal IR of a loaded modern definition, shared by modern/ only (the
 * loader builds it, the scheduler and the activities read it). Everything hangs off the
 * definition's arena and is immutable after load: no name lookups happen at run time.
 * The environment rules at the end of this comment are a contract between loader and runtime.
 *
 * Values of properties ("value sources"). IN properties, variable defaults, root argument
 * defaults and In parameters are all one rule:  value = expr ? eval(expr, env) : copy(literal)
 *   - "[a + b]" or <InArgument>[..]</InArgument> / CSharpValue / VisualBasicValue -> expr set,
 *     already type-checked and converted to `type` (wfm_expr_compile with expected = type);
 *   - a plain attribute value (Text="Hello", Duration="00:00:05") -> expr NULL, literal holds
 *     the value converted to `type` at load (strings are immortal: wf_value_string_static);
 *   - absent -> expr NULL and literal = the spec default (prop->deflt) or default(T)
 *     (wf_type_default: 0, false, 0.0, 0m, 0001-01-01, 00:00:00; null for reference types).
 *   `{x:Null}` -> expr NULL, literal null (present = true).
 * OUT/INOUT properties and Out/InOut parameters: expr is an LVALUE expression (compiled with
 * WFM_EXPR_LVALUE), NULL when unbound (writes are then no-ops; an unbound INOUT reads as
 * default(T)). INOUT reads evaluate the same expr. prop->type is then the LOCATION's type
 * (an x:Object Out property such as InvokeMethod.Result binds a location of any type; the
 * value is converted to prop->type when stored).
 * Generic kinds: the node's type argument (wfm__node_type_arg) is x:TypeArguments, or when
 * absent inferred from the first
 * "T" property bound with a type (Out/InOut first, then delegates, then the rest: Assign's T
 * comes from To). It stays NULL when nothing fixes it.
 *
 * Node identity. Every element that became a node (activities and auxiliary nodes such as
 * FlowStep, Catch, delegate bodies) has a dense preorder `index` (0..node_count-1) and a
 * WF4-style id by position: the root body is "1"; the children of a node are numbered 1, 2,
 * ... in spec property order, then item order ("1.2.3"). A node reached through x:Reference
 * is numbered where its element is written, once; `parent` is that tree parent. Ids are not
 * stored in the nodes: the child numbered k-th is the k-th node in index order whose parent
 * is that node, so the definition builds every id at once when one is first asked for
 * (wfm_node_id).
 *
 * ENVIRONMENTS (how names become slots; the runtime must build envs exactly like this):
 *   E0  The root environment: one slot per x:Members argument, in declaration order
 *       (wfm__arg.slot == its index). Always created (count may be 0). Its parent is NULL.
 *   Ev  An ACTIVITY node (kind category "Activity") with var_count >= 1 (creates_env) gets a
 *       new environment when its activity instance starts: one slot per variable, in
 *       declaration order; the parent is the environment the instance was scheduled in.
 *       Slots are first set to default(T), then each variable's value source is evaluated in
 *       declaration order IN THIS NEW environment (a default may read earlier variables).
 *       Every instance gets fresh variables (a While body Sequence per iteration); the env
 *       dies with the instance. Only "Activity" kinds may declare Variables (the catalogue
 *       refuses WFM_KIND_VARIABLES on other categories).
 *   Ed  A DELEGATE property: when the body is scheduled (wfm_ctx_schedule_delegate) a new
 *       environment with exactly ONE slot (index 0) holding the delegate argument (also when
 *       the ActivityAction declares no argument: the slot then is unnamed and holds null) is
 *       created; its parent is the environment of the scheduling activity instance `ai`
 *       (env(ai), below). The body runs in it.
 *   env(ai) for an activity instance of node N: N->creates_env ? Ev(N) : the environment it
 *       was scheduled in. Scheduled in: the root body in E0; wfm_ctx_schedule(ai, child) in
 *       env(ai); a delegate body in its Ed.
 *   EVERY expression that belongs to activity node N (IN/OUT/INOUT props, params, variable
 *   defaults) is compiled in, and must be evaluated in, env(ai of N) — so While.Condition sees
 *   While.Variables (hops 0). Expressions of an AUXILIARY node M (FlowDecision.Condition,
 *   FlowSwitch.Expression, Catch props) are evaluated in env(ai) of M->owner, the nearest
 *   enclosing activity node (wfm_ctx_eval_node(ctx, owner_ai, M, prop)); x:Reference may only
 *   point at nodes scheduled by the same activity as the referencing site (for an auxiliary
 *   target its owner; for an activity target in a WFM_PROP_SHARED property the owner of the
 *   node it is written in). A delegate written on an auxiliary node (Catch.Action) gets its
 *   Ed parented to env(owner ai).
 *   Hence an activity node must be scheduled by an instance of the activity that "owns" its
 *   position: its tree parent when that is an activity, else the parent's owner (a FlowStep's
 *   Action by the Flowchart, a Transition's Trigger by the StateMachine).
 *   `hops` (wfm_name) = the number of env parents to follow from the evaluation env; index =
 *   slot. Inner declarations shadow outer ones; the same name twice in one Variables
 *   collection is an error. Writability: arguments (all directions) and variables are
 *   writable (Variable Modifiers="ReadOnly" is not); delegate arguments are not. */
#ifndef WFM_DEFINITION_INT_H
#define WFM_DEFINITION_INT_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "wfm_activity.h"
#include "wfm_ctx.h"
#include "wfm_node.h"
#include "wfm_definition.h"
#include "wfm_expr.h"

/* A registered kind (owned by the catalogue). */
struct wfm_kind {
    const wfm_kind_spec *spec; /* borrowed, static */
    const char *ns;            /* spec->ns or WFM_NS_ACTIVITIES */
    uint32_t index;            /* registration order in the catalogue */
    bool is_activity;          /* category "Activity" */
    bool has_type_arg;         /* generic, or a property typed "T" / "List(T)": its nodes keep
                                  a type argument (wfm__node_type_arg) */
    int content_index;         /* index of spec->content_prop in props, -1 if none */
    uint32_t props_size;       /* bytes of a node's property records (wfm__prop_size), after
                                  the type argument when it has one */
    uint32_t prop_off[];       /* [spec->prop_count]: where each record starts */
};

/* One In/Out/InOut parameter of a PARAMS property. */
typedef struct wfm__param {
    wfm_prop_kind dir;    /* WFM_PROP_IN, WFM_PROP_OUT or WFM_PROP_INOUT */
    const wf_type *type;
    wfm_expr *expr;       /* IN: value source with literal; OUT/INOUT: lvalue or NULL */
    wf_value literal;
    wf_loc loc;
    const char *key;      /* x:Key (a message parameter's name), NULL if none */
} wfm__param;

/* The ActivityAction of a DELEGATE property; its environment is described above (Ed). */
typedef struct wfm__delegate {
    const char *arg_name;    /* DelegateInArgument Name, NULL if none declared */
    const wf_type *arg_type; /* x:TypeArguments of the ActivityAction (may be NULL if none) */
    wfm_node *body;          /* NULL for an empty ActivityAction */
    wf_loc loc;
} wfm__delegate;

/* One property of a node, indexed like spec->props. Only the members of the spec's prop kind
 * exist (they share storage): read them only after checking the kind (wfm_node.h's accessors
 * do). Locations of property values are reported while loading and not kept. */
typedef struct wfm__prop {
    bool present;        /* written in the XAML */
    bool bound;          /* IN/OUT/INOUT: an expression is bound (expr, no literal kept) */
    uint32_t count;      /* ACTIVITIES, NODES, KEYED, PARAMS: items */
    const wf_type *type; /* IN/OUT/INOUT/LITERAL: value type; KEYED: key type; TYPE: the
                            named type (NULL when it is a clr-namespace type such as p:Any);
                            DELEGATE: the argument type */
    union {
        wfm_expr *expr;       /* IN/OUT/INOUT when bound (see the value-source rule; read it
                                 with wfm__prop_expr) */
        wf_value literal;     /* IN when not bound (see the rule), LITERAL (converted, or spec
                                 default, or null) */
        wfm_node *child;      /* ACTIVITY, NODE (may be a referenced node) */
        struct {              /* ACTIVITIES, NODES, KEYED */
            wfm_node **items; /* count nodes */
            wf_value *keys;   /* KEYED: count keys, converted to `type` */
        };
        wfm__param *params;      /* PARAMS: count parameters */
        wfm__delegate *delegate; /* DELEGATE, when written (NULL: an empty action) */
        struct {                 /* TYPE */
            const char *type_text;   /* the text as written ("p:Any") */
            const char *type_prefix; /* "p" of "p:Any", NULL when unprefixed */
        };
    };
} wfm__prop;

/* The bytes a property record of `kind` takes: up to its last member (a Sequence's
 * Activities 24, an Assign's Value 40). */
static inline uint32_t wfm__prop_size(wfm_prop_kind kind)
{
    switch (kind) {
    case WFM_PROP_IN:
    case WFM_PROP_OUT:
    case WFM_PROP_INOUT:
    case WFM_PROP_LITERAL: return (uint32_t)sizeof(wfm__prop);
    case WFM_PROP_KEYED: return (uint32_t)(offsetof(wfm__prop, keys) + sizeof(wf_value *));
    case WFM_PROP_TYPE: return (uint32_t)(offsetof(wfm__prop, type_prefix) + sizeof(char *));
    default: return (uint32_t)(offsetof(wfm__prop, child) + sizeof(void *));
    }
}

/* The value source's expression of a value property record, NULL when its literal holds. */
static inline wfm_expr *wfm__prop_expr(const wfm__prop *p)
{
    return p->bound ? p->expr : NULL;
}

/* Whether a prop kind keeps a value source (expr or literal). */
static inline bool wfm__prop_is_value(wfm_prop_kind kind)
{
    return kind == WFM_PROP_IN || kind == WFM_PROP_OUT || kind == WFM_PROP_INOUT ||
           kind == WFM_PROP_LITERAL;
}

/* One entry of <Kind.Variables>. */
typedef struct wfm__var {
    const char *name;
    const wf_type *type;
    wfm_expr *expr;   /* Default="[...]"; NULL -> literal */
    wf_value literal; /* Default="literal" converted, else default(T) */
    bool writable;    /* false with Modifiers="ReadOnly" */
    wf_loc loc;
} wfm__var;

/* What few nodes have, kept out of the node record: allocated (in the arena) for a node
 * with a DisplayName or an x:Name, the top node of each file's tree (the definition's root
 * body, an activity type's body: `file` names the file of every node below it, see
 * wfm_node_loc) and the nodes whose kind has a prepare or bind callback (the only code that
 * attaches data; the data is destroyed with the definition). */
typedef struct wfm__node_extra {
    const char *display_name; /* DisplayName, NULL if not written */
    const char *x_name;       /* x:Name, NULL if none */
    const char *file;         /* the top node of a file's tree: that file; else NULL */
    struct wfm_definition *def; /* the top node of a file's tree: the definition (wfm_node_id
                                   reads it at the root body) */
    void *data;               /* wfm_node_set_data */
    void (*destroy)(void *data);
} wfm__node_extra;

/* A node: 48 bytes and its property records in the same allocation, each only as long as
 * its kind needs (wfm__node_prop), preceded by the type argument for the kinds that have one
 * (wfm__node_type_arg). What can be derived is not stored: the owner
 * (wfm__node_owner), the display name when it is the kind name, the file of the location
 * (from the nearest node up the tree that names one), the id (wfm_definition.c). */
struct wfm_node {
    const wfm_kind *kind;
    wfm_node *parent;         /* tree parent; NULL for the root body */
    wfm__var *vars;
    wfm__node_extra *extra;   /* NULL for most nodes (see wfm__node_extra) */
    uint32_t line, col;       /* of the element's '<' (wfm_node_loc) */
    uint32_t index;           /* dense preorder index */
    uint32_t var_count : 31;
    uint32_t creates_env : 1; /* var_count > 0 (activities only) */
    _Alignas(8) unsigned char props[]; /* kind->props_size bytes of records */
};

/* Property record `prop` of `node` (below spec->prop_count). Only its kind's members exist:
 * the record may end before the members of other kinds. */
static inline wfm__prop *wfm__node_prop(const wfm_node *node, unsigned prop)
{
    assert(prop < node->kind->spec->prop_count);
    return (wfm__prop *)(uintptr_t)(node->props + node->kind->prop_off[prop]);
}

/* The node's first x:TypeArguments type (or inferred: Assign's from To), NULL when nothing
 * fixes it or its kind has none (wfm_kind.has_type_arg). */
static inline const wf_type *wfm__node_type_arg(const wfm_node *node)
{
    return node->kind->has_type_arg ? *(const wf_type *const *)(const void *)node->props : NULL;
}

static inline void wfm__node_set_type_arg(wfm_node *node, const wf_type *type)
{
    assert(node->kind->has_type_arg);
    *(const wf_type **)(void *)node->props = type;
}

/* The nearest activity node: the node itself for an activity, else its parent's owner. */
static inline const wfm_node *wfm__node_owner(const wfm_node *node)
{
    while (node && !node->kind->is_activity)
        node = node->parent;
    return node;
}

typedef struct wfm__arg {
    const char *name;
    wfm_prop_kind dir;   /* WFM_PROP_IN, WFM_PROP_OUT, WFM_PROP_INOUT */
    const wf_type *type;
    wfm_expr *expr;      /* default value source, evaluated in E0 (after every slot holds */
    wf_value literal;    /* default(T)), in declaration order; only used for In/InOut args */
    bool has_default;    /* the XAML gives a default (used when the host supplies none) */
    uint32_t slot;       /* == index in E0 */
    wf_loc loc;
} wfm__arg;

struct wfm_definition {
    wf_arena *arena;        /* owns nodes, strings, expressions, literals */
    atomic_uint refcount;
    const char *path;       /* in the arena; the `file` of every wf_loc */
    const char *class_name; /* x:Class, NULL */
    const char *service_name; /* the root's p:WorkflowService.Name, NULL */
    uint64_t hash;          /* wf_hash_bytes of the file bytes: the store's identifier */
    unsigned char sha256[32]; /* SHA-256 of the file bytes, chained with each activity type
                                 file it expands: what a saved state is checked against */
    wfm_node *root;         /* the body activity */
    wfm__arg *args;
    uint32_t arg_count;
    wfm_node **nodes;       /* [node_count] by index */
    uint32_t node_count;
    uint32_t numbered;      /* nodes[0..numbered) are in the tree; the rest, built for their
                               errors only, have the id "0" */
    /* [node_count] ids, built on the first wfm_node_id (one heap block, freed with the
       definition): a thread that finds NULL builds a table and publishes it unless another
       thread did first */
    _Atomic(const char **) ids;
    const wfm_catalogue *catalogue; /* borrowed */
    wf_types *types;                /* borrowed */
    wf_value *owned_values;         /* heap literals (lists, records), released at free */
    size_t owned_count;
};

/* ---- the catalogue's callback index (wfm_catalogue.c; the state writer, wfm_persist.c) ----
 * Every registered kind's callbacks (wfm_kind_spec.callbacks) sorted by address, then kind,
 * then table index: built on first use and again after a registration, under the catalogue's
 * lock, so that a save looks a callback up without building the table each time. Valid until
 * the next registration (kinds are registered before definitions are loaded). */
typedef struct wfm__callback_ix {
    const void *fn;
    uint32_t kind, index; /* catalogue position of the kind, index in its callbacks table */
} wfm__callback_ix;
/* NULL with *count 0 when no kind has callbacks; NULL with *oom true when out of memory. */
const wfm__callback_ix *wfm__catalogue_callbacks(const wfm_catalogue *cat, size_t *count,
                                                 bool *oom);

#endif

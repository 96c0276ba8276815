/* wfl_def_int.h — the legacy definition IR shared inside legacy/ (executor, converter read it
 * through this header): one immutable wfl_node per activity with one wfl_pval per DP of its
 * type, in a tree and in a dense array. Everything lives in the definition's arena; the
 * definition is read-only after wfl_definition_load_* returns (docs/semantics.md §1, §3). */
#ifndef WFL_DEF_INT_H
#define WFL_DEF_INT_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "wfl_bind.h"
#include "wfl_def.h"
#include "wfl_registry.h"
#include "wfl_rules.h"
#include "wfl_typelib.h"

/* A condition (ActivityCondition DP or an attached WhenCondition). */
typedef enum wfl_cond_kind {
    WFL_COND_CODE, /* <CodeCondition Condition="Method"/>: a code-beside Condition */
    WFL_COND_RULE, /* <RuleConditionReference ConditionName="C1"/>: a .rules condition */
} wfl_cond_kind;

typedef struct wfl_cond {
    wfl_cond_kind kind;
    const char *name;           /* method or condition name */
    const wfl_tl_func *fn;      /* CODE: the class's Condition (NULL only if no class) */
    const wfl_rule_cond *rule;  /* RULE: the condition (NULL when no rules were loaded) */
    const wfl_bind *bind;       /* CODE with Condition="{ActivityBind ...}": else NULL */
    wf_loc loc;
} wfl_cond;

/* One WorkflowParameterBinding: ParameterName plus a literal, null or bound value. */
typedef struct wfl_param_binding {
    const char *param;     /* "e", "sender", "(ReturnValue)", a method parameter name */
    bool has_value;        /* false: no Value given */
    bool is_bind;
    wf_value literal;      /* !is_bind: immortal literal (String) or null */
    const wfl_bind *bind;  /* is_bind */
    wf_loc loc;
} wfl_param_binding;

/* The definition-time value of one DP on one node. */
typedef enum wfl_pval_kind {
    WFL_PV_UNSET,     /* not written: the DP's default applies */
    WFL_PV_LITERAL,   /* u.literal, already converted to the DP's type (strings immortal) */
    WFL_PV_NULL,      /* {x:Null} */
    WFL_PV_BIND,      /* u.bind: an ActivityBind (instance DPs, events) */
    WFL_PV_TYPE,      /* u.type: {x:Type p:X} / a type name */
    WFL_PV_CONDITION, /* u.cond */
    WFL_PV_HANDLER,   /* u.handler: an event's method on the code-beside */
    WFL_PV_RULESET,   /* u.ruleset */
    WFL_PV_PARAMS,    /* u.params */
} wfl_pval_kind;

typedef struct wfl_pval {
    wfl_pval_kind kind;
    wf_loc loc; /* of the attribute or property element that set it */
    union {
        wf_value literal;
        const wfl_bind *bind;
        struct {
            const char *name;          /* as written, prefix removed ("Exception") */
            const wf_type *exc;        /* resolved exception type, NULL if not an exception */
            const wfl_tl_service *service; /* InterfaceType: the service, NULL if unknown */
        } type;
        wfl_cond cond;
        struct {
            const char *name;          /* method name */
            const wfl_tl_func *fn;     /* the class Handler, NULL when there is no class */
        } handler;
        struct {
            const char *name;          /* RuleSetName */
            const wfl_ruleset *ruleset; /* NULL when no rules were loaded */
        } ruleset;
        struct {
            const wfl_param_binding *items;
            size_t count;
        } params;
    } u;
} wfl_pval;

typedef struct wfl_node wfl_node;

/* Node flags. */
#define WFL_NODE_ALT_FLOW 0x01u /* FaultHandlers/CancellationHandler/CompensationHandler */
#define WFL_NODE_DISABLED 0x02u /* Enabled="False" */

struct wfl_node {
    const wfl_type *type;
    const char *name;        /* x:Name (root: last dotted segment of x:Class if unnamed) */
    wf_loc loc;              /* of the element's '<' */
    wfl_node *parent;        /* NULL for the root */
    wfl_node **children;     /* document order, alternate-flow handlers included */
    size_t child_count;
    size_t index;            /* dense: def->nodes[index] == this; root is 0; pre-order */
    size_t depth;            /* root 0 */
    unsigned flags;          /* WFL_NODE_* */
    wfl_pval *props;         /* type->dp_count entries, indexed by wfl_dp.index */
    bool has_when;           /* a CAG child with an attached WhenCondition */
    wfl_cond when;
    /* Convenience links filled at load (NULL when absent): */
    wfl_node *fault_handlers;        /* child FaultHandlersActivity */
    wfl_node *cancellation_handler;  /* child CancellationHandlerActivity */
    wfl_node *compensation_handler;  /* child CompensationHandlerActivity */
};

typedef struct wfl_tl_use {
    const char *assembly;  /* NAME of Assembly=NAME */
    wfl_typelib *typelib;  /* owned; never NULL in a loaded definition */
} wfl_tl_use;

struct wfl_definition {
    wf_arena *arena;         /* owns nodes, strings, binds, custom types */
    wf_types *types;         /* borrowed */
    const char *path;        /* in arena */
    const char *class_name;  /* x:Class or NULL */
    const char *service_name; /* WorkflowServiceAttributes Name (WF 3.5), or NULL */
    wfl_node *root;
    wfl_node **nodes;        /* node_count entries, pre-order */
    size_t node_count;
    wfl_rules *rules;        /* owned, NULL if none */
    const char *rules_path;  /* the .rules actually loaded, or NULL */
    wfl_tl_use *typelibs;    /* one per Assembly=NAME used (array owned, wf_malloc'd) */
    size_t typelib_count;
    const wfl_typelib *class_typelib; /* where the code-beside class was found */
    const wfl_tl_class *code_beside;  /* NULL if no x:Class or not found */
    wfl_param_info *params;  /* root parameters (wfl_def.h) */
    size_t param_count;
    size_t warning_count;
    wf_strmap *by_name;      /* activity name -> wfl_node * (names are unique) */
    wf_value *heap_literals; /* list/record literals released at destroy (owned array) */
    size_t heap_literal_count;
    wfl_definition **composites; /* bodies of composite types used (owned) */
    size_t composite_count;
};

/* The pval of DP `dp` on node (dp must belong to the node's type). */
static inline const wfl_pval *wfl_node_pval(const wfl_node *node, const wfl_dp *dp)
{
    assert(dp->index < node->type->dp_count && node->type->dps[dp->index] == dp);
    return &node->props[dp->index];
}

/* Find a node by bind-name rules relative to `from` (docs/semantics.md §1): "/Self",
 * "/Parent"..., then descendants of from, then of each ancestor, then dotted from the root.
 * NULL if not found. */
const wfl_node *wfl_def_resolve_name(const wfl_definition *def, const wfl_node *from,
                                     const char *name);
/* Find a node by exact name anywhere (first in pre-order); NULL if absent. */
const wfl_node *wfl_def_find_node(const wfl_definition *def, const char *name);

#endif

/* wfl_def.h — loading a legacy workflow definition: a WF3 `.xoml` file (plus its `.rules`
 * and the type libraries its namespaces name) checked as WF3 would and turned into an
 * immutable activity tree. Every problem goes to a wf_diags with file:line:col
 * (docs/architecture.md "The legacy model", "Output contracts"; docs/semantics.md §1, §3). */
#ifndef WFL_DEF_H
#define WFL_DEF_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"
#include "wfl_typelib.h" /* wfl_tl_event */
#include "wfl_bind.h"
#include "wfl_registry.h"
#include "wfl_rules.h"

/* Lifecycle:
 * 1. wfl_load_opts o = WFL_LOAD_OPTS_INIT; set types (required), libpath, rules_path, diags.
 * 2. wfl_definition_load_file(&o, "order.xoml", &def, &err): every error and warning goes to
 *    o.diags (when given), the first error in source order to err; on failure def is NULL.
 * 3. Read it (and create instances with wfl_inst.h) from any thread: a definition is immutable.
 * 4. wfl_definition_destroy after every instance made from it is destroyed.
 * The wf_types and wf_libpath must outlive the definition. */

typedef struct wfl_definition wfl_definition;

typedef struct wfl_load_opts {
    wf_types *types;           /* required: interns list and exception types */
    const wf_libpath *libpath; /* where NAME.activities.xml are found; NULL = none */
    const char *rules_path;    /* --rules FILE; NULL = FILE.rules beside FILE.xoml if present */
    bool no_auto_rules;        /* true: never look for the .rules beside the file */
    wf_diags *diags;           /* optional: receives every error and warning */
    bool no_native;            /* declarations only: type libraries are loaded without their
                                  native libraries (wfl_typelib_load_decl); cannot run */
    unsigned nesting;          /* composite bodies being loaded around this one (the loader
                                  sets it for a composite's XOML; 0 for a workflow) */
} wfl_load_opts;

#define WFL_LOAD_OPTS_INIT                                                                    \
    {.types = NULL, .libpath = NULL, .rules_path = NULL, .no_auto_rules = false,              \
     .diags = NULL, .no_native = false, .nesting = 0}

/* Errors: WF_E_IO, WF_E_XML, WF_E_SCHEMA (unknown element/DP, structure), WF_E_SYNTAX,
 * WF_E_TYPE, WF_E_NAME (bind/handler/condition/target not found), WF_E_NOLIB (a type library
 * NAME.activities.xml missing from the library path), WF_E_UNSUPPORTED (a WF3 type with no
 * native equivalent), WF_E_NOMEM. Designer-only and foreign-namespace attributes and elements
 * are warnings, never silently dropped. The .rules file is loaded first (docs/semantics.md §2),
 * so RuleConditionReference / RuleSetReference names are checked against it. */
wf_status wfl_definition_load_file(const wfl_load_opts *opts, const char *path,
                                   wfl_definition **out, wf_error *err);
/* From memory; `name` is used in locations. Rules come only from opts->rules_path. */
wf_status wfl_definition_load_mem(const wfl_load_opts *opts, const char *name, const char *data,
                                  size_t len, wfl_definition **out, wf_error *err);
void wfl_definition_destroy(wfl_definition *def); /* accepts NULL */

const char *wfl_definition_path(const wfl_definition *def);      /* as given */
const char *wfl_definition_root_name(const wfl_definition *def); /* "Workflow1" */
const char *wfl_definition_class_name(const wfl_definition *def); /* x:Class or NULL */
/* The root's ReceiveActivity.WorkflowServiceAttributes Name (a WF 3.5 workflow service's
 * name, for the converter), or NULL. */
const char *wfl_definition_service_name(const wfl_definition *def);
size_t wfl_definition_activity_count(const wfl_definition *def);
size_t wfl_definition_warning_count(const wfl_definition *def);

/* One activity of the definition, for hosts that check what a definition holds (the
 * Interop activity refuses a legacy TransactionScope inside a modern one). */
typedef struct wfl_activity_info {
    const char *name;       /* x:Name */
    const char *type;       /* XOML type: "TransactionScopeActivity", "ReserveStock" */
    wf_loc loc;             /* of its element */
    bool transaction_scope; /* a TransactionScopeActivity */
} wfl_activity_info;
/* Activity `index` in document order (0 = the root; < wfl_definition_activity_count), false
 * past the end. */
bool wfl_definition_activity(const wfl_definition *def, size_t index, wfl_activity_info *out);

/* The workflow's parameters: the root's non-metadata value DPs declared by its code-beside
 * class (docs/semantics.md §3: CreateWorkflow sets them by name; outputs are ALL of them). */
typedef enum wfl_param_dir { WFL_PARAM_IN, WFL_PARAM_OUT, WFL_PARAM_INOUT } wfl_param_dir;

typedef struct wfl_param_info {
    const char *name;
    const wf_type *type;
    wfl_param_dir dir;    /* a hint: INOUT for code-beside properties */
    size_t dp_index;      /* index of the root DP */
} wfl_param_info;

size_t wfl_definition_param_count(const wfl_definition *def);
/* index < count; returns false otherwise. */
bool wfl_definition_param(const wfl_definition *def, size_t index, wfl_param_info *out);
/* By name; false if the root has no such parameter. */
bool wfl_definition_find_param(const wfl_definition *def, const char *name, wfl_param_info *out);

/* The external event `name` ("Approved", or its queue "IApprovalService.Approved") that a
 * HandleExternalEvent of the definition (or of a composite body it uses) waits for: true when one does, and *ev is the event's
 * type-library declaration with its parameters (NULL when the interface has no type library). */
bool wfl_definition_find_event(const wfl_definition *def, const char *name,
                               const wfl_tl_event **ev);

/* ---- the tree, read-only (converter) ------------------------------------------------------
 * Everything returned borrows from the definition. Types, DPs and binds are described in
 * wfl_registry.h and wfl_bind.h; a node's DP values are read one DP at a time. */
typedef struct wfl_node wfl_node;

const wfl_node *wfl_definition_root(const wfl_definition *def);
/* The typelibs the file's namespaces and x:Class named, in first-use order. */
size_t wfl_definition_typelib_count(const wfl_definition *def);
const wfl_typelib *wfl_definition_typelib_at(const wfl_definition *def, size_t index);
const char *wfl_definition_rules_path(const wfl_definition *def); /* NULL if none loaded */

const wfl_type *wfl_node_type(const wfl_node *node);
const char *wfl_node_name(const wfl_node *node);
wf_loc wfl_node_loc(const wfl_node *node); /* of the element's '<' */
const wfl_node *wfl_node_parent(const wfl_node *node); /* NULL for the root */
size_t wfl_node_child_count(const wfl_node *node); /* alternate-flow handlers included */
const wfl_node *wfl_node_child(const wfl_node *node, size_t index);
bool wfl_node_is_disabled(const wfl_node *node); /* Enabled="False" */
/* The node a bind Name written on `from` names (docs/semantics.md §1: "/Self", "/Parent"...,
 * descendants of from, of each ancestor, then dotted from the root); NULL if none. */
const wfl_node *wfl_node_resolve(const wfl_definition *def, const wfl_node *from,
                                 const char *name);

/* What one DP of a node holds at definition time. */
typedef enum wfl_prop_kind {
    WFL_PROP_UNSET,   /* not written: the DP's default applies */
    WFL_PROP_LITERAL, /* literal, converted to the DP's type */
    WFL_PROP_NULL,    /* {x:Null} */
    WFL_PROP_BIND,    /* bind */
    WFL_PROP_TYPE,    /* name (prefix removed), exc_type, service */
    WFL_PROP_CODE_CONDITION, /* name = method, fn (NULL without a class), bind if bound */
    WFL_PROP_RULE_CONDITION, /* name = ConditionName, rule (NULL without rules) */
    WFL_PROP_HANDLER, /* name = method, fn (NULL without a class) */
    WFL_PROP_RULESET, /* name = RuleSetName */
    WFL_PROP_PARAMS,  /* param_count WorkflowParameterBindings: wfl_node_param_binding */
} wfl_prop_kind;

typedef struct wfl_prop_info {
    wfl_prop_kind kind;
    wf_loc loc;                          /* of the attribute or property element */
    const wf_value *literal;             /* LITERAL */
    const wfl_bind *bind;         /* BIND, bound CODE_CONDITION */
    const char *name;                    /* TYPE, conditions, HANDLER, RULESET */
    const wf_type *exc_type;             /* TYPE: resolved exception type or NULL */
    const wfl_tl_service *service; /* TYPE: InterfaceType's service or NULL */
    const wfl_tl_func *fn;        /* CODE_CONDITION, HANDLER */
    const wfl_rule_cond *rule;    /* RULE_CONDITION */
    size_t param_count;                  /* PARAMS */
} wfl_prop_info;

/* The value of `dp` (a DP of the node's type) on node. */
void wfl_node_prop(const wfl_node *node, const wfl_dp *dp, wfl_prop_info *out);
/* The attached WhenCondition of a ConditionedActivityGroup child; false if none. */
bool wfl_node_when(const wfl_node *node, wfl_prop_info *out);

typedef struct wfl_param_binding_info {
    const char *param;           /* "e", "(ReturnValue)", a parameter name */
    bool has_value;              /* false: no Value given */
    const wfl_bind *bind; /* the bound value, or NULL */
    const wf_value *literal;     /* a literal (or null) value when not bound */
    wf_loc loc;
} wfl_param_binding_info;

/* Binding `index` < param_count of a PARAMS DP; false when out of range. */
bool wfl_node_param_binding(const wfl_node *node, const wfl_dp *dp, size_t index,
                            wfl_param_binding_info *out);

#endif

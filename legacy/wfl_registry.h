/* wfl_registry.h — the legacy type and dependency-property registry: every WF3 activity type
 * the legacy runtime knows, with its DPs (name, kind, value type, flags, default) flattened
 * base-first, so a DP's index is the same in a type and in every type derived from it.
 * Built-in tables are static and read-only; custom types (type-library activities, the x:Class
 * code-beside root) are made per definition in its arena (docs/semantics.md §1, §3). */
#ifndef WFL_REGISTRY_H
#define WFL_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "wfl_typelib.h"

/* Lifecycle: nothing to set up. Built-in types are found with wfl_registry_find /
 * wfl_registry_builtin from any thread (the tables are filled once, on first use, under
 * pthread_once, then never change). Types made by wfl_type_create_* live in the arena they
 * were made in (a definition's). */

/* One value per WF3 activity type the runtime runs, plus the abstract bases. */
typedef enum wfl_kind {
    WFL_KIND_ACTIVITY,  /* abstract Activity */
    WFL_KIND_COMPOSITE, /* abstract CompositeActivity */
    WFL_KIND_SEQUENTIAL_WORKFLOW,
    WFL_KIND_SEQUENCE,
    WFL_KIND_CODE,
    WFL_KIND_IFELSE,
    WFL_KIND_IFELSE_BRANCH,
    WFL_KIND_WHILE,
    WFL_KIND_REPLICATOR,
    WFL_KIND_PARALLEL,
    WFL_KIND_LISTEN,
    WFL_KIND_EVENT_DRIVEN,
    WFL_KIND_DELAY,
    WFL_KIND_HANDLE_EXTERNAL_EVENT,
    WFL_KIND_CALL_EXTERNAL_METHOD,
    WFL_KIND_POLICY,
    WFL_KIND_TRANSACTION_SCOPE,
    WFL_KIND_COMPENSATABLE_SEQUENCE,
    WFL_KIND_COMPENSATE,
    WFL_KIND_COMPENSATION_HANDLER,
    WFL_KIND_FAULT_HANDLERS,
    WFL_KIND_FAULT_HANDLER,
    WFL_KIND_CANCELLATION_HANDLER,
    WFL_KIND_THROW,
    WFL_KIND_TERMINATE,
    WFL_KIND_SUSPEND,
    WFL_KIND_INVOKE_WORKFLOW,
    WFL_KIND_CAG,
    WFL_KIND_SET_STATE,
    WFL_KIND_STATE_MACHINE_WORKFLOW,
    WFL_KIND_STATE,
    WFL_KIND_STATE_INITIALIZATION,
    WFL_KIND_STATE_FINALIZATION,
    WFL_KIND_RECEIVE,     /* WF 3.5 ReceiveActivity: waits on "Contract.Operation", then a body */
    WFL_KIND_SEND,        /* WF 3.5 SendActivity: no channel here, faults located */
    WFL_KIND_INVOKE_WEB_SERVICE, /* InvokeWebServiceActivity: no proxy here, faults located */
    WFL_KIND_CUSTOM,      /* a type-library ActivityType: see wfl_type.custom */
    WFL_KIND_UNSUPPORTED, /* a WF3 type known by name only: see wfl_type.unsupported */
    WFL_KIND_COUNT
} wfl_kind;

/* Type flags. */
#define WFL_TF_COMPOSITE     0x01u /* has child activities */
#define WFL_TF_EVENT         0x02u /* IEventActivity: may start an EventDriven */
#define WFL_TF_COMPENSATABLE 0x04u /* ICompensatableActivity */
#define WFL_TF_ALT_FLOW      0x08u /* FaultHandlers, CancellationHandler, CompensationHandler */
#define WFL_TF_ROOT          0x10u /* may be the root of a workflow */
#define WFL_TF_ABSTRACT      0x20u /* never written as an element */

/* What a DP holds. Only WFL_DPK_VALUE (and the string of WFL_DPK_ACTIVITY_REF) live in an
 * instance's value slots; the others are definition-time data read from the node's
 * wfl_pval (wfl_def_int.h). */
typedef enum wfl_dp_kind {
    WFL_DPK_VALUE,        /* a wf_value of dp->type */
    WFL_DPK_CONDITION,    /* ActivityCondition: CodeCondition or RuleConditionReference */
    WFL_DPK_EVENT,        /* an event: handler method name on the code-beside (or a bind) */
    WFL_DPK_TYPE,         /* a Type: {x:Type p:Exception}, an interface or workflow type */
    WFL_DPK_RULESET,      /* RuleSetReference */
    WFL_DPK_PARAMS,       /* WorkflowParameterBindingCollection */
    WFL_DPK_ACTIVITY_REF, /* an activity's name (TargetStateName, ...): a String value */
} wfl_dp_kind;

/* DP flags (DependencyPropertyOptions). */
#define WFL_DP_METADATA 0x01u /* belongs to the definition: never bound, never set at run time */
#define WFL_DP_READONLY 0x02u /* set by the runtime only (FaultHandler.Fault, ...) */
#define WFL_DP_OPTIONAL 0x04u
#define WFL_DP_EVENT    0x08u /* kind == WFL_DPK_EVENT */

typedef struct wfl_type wfl_type;

typedef struct wfl_dp {
    const char *name;       /* as written in XOML: "TimeoutDuration" */
    wfl_dp_kind kind;
    const wf_type *type;    /* WFL_DPK_VALUE: the value type; ACTIVITY_REF: String; else NULL */
    unsigned flags;         /* WFL_DP_* */
    wf_value default_value; /* VALUE: the default (scalars, immortal strings); else null */
    const char *const *enum_values; /* NULL-terminated names for an enum-typed String DP */
    size_t index;           /* in the flattened DP array of its owner and every subtype */
    const wfl_type *owner;  /* the declaring type */
    const wfl_tl_prop *tl_prop; /* custom/code-beside DPs: the type-library property */
} wfl_dp;

struct wfl_type {
    const char *name;       /* XOML element name: "SequenceActivity", or the typelib name */
    const wfl_type *base;   /* NULL for Activity */
    wfl_kind kind;          /* of the nearest built-in type for code-beside roots */
    unsigned flags;         /* WFL_TF_* */
    const wfl_dp *const *dps; /* flattened, base DPs first; dps[i]->index == i */
    size_t dp_count;
    const uint16_t *dp_index; /* by name: a hash table of index + 1 (0 empty), mask + 1 slots,
                                 or NULL (wfl_type_find_dp scans dps) */
    uint32_t dp_index_mask;
    const wfl_tl_activity *custom; /* WFL_KIND_CUSTOM: the type-library activity type */
    const struct wfl_definition *composite; /* WFL_KIND_CUSTOM with Definition=: its body,
                                               run by a nested executor (wfl_act_composite.c) */
    const wfl_dp *const *exec_dps; /* WFL_KIND_CUSTOM leaf: the DP of each parameter of its
                                      Execute function, then of its Return binding (resolved
                                      once: no lookup by name per call); NULL otherwise */
    const wfl_typelib *typelib;    /* custom and code-beside types: where they come from */
    const wfl_tl_class *code_beside; /* a root made for x:Class: its class, else NULL */
    const wfl_dp *const *const *class_fn_dps; /* code_beside: per class function (by
                                      wfl_tl_class_func_at index) its exec_dps-like array, NULL
                                      for one with a parameter that is no DP (read by name) */
    const char *unsupported;       /* WFL_KIND_UNSUPPORTED: why ("web-service messaging
                                      has no native equivalent") */
};

/* Well-known DP indexes (inherited by every type from Activity). */
#define WFL_DPI_NAME        0
#define WFL_DPI_DESCRIPTION 1
#define WFL_DPI_ENABLED     2

/* A built-in or known-unsupported type by its XOML element name (workflow namespace);
 * NULL if unknown. Abstract bases are not found by name. */
const wfl_type *wfl_registry_find(const char *name);
/* The built-in type of a kind (WFL_KIND_CUSTOM / _UNSUPPORTED / _COUNT give NULL). */
const wfl_type *wfl_registry_builtin(wfl_kind kind);
/* Enumerate built-in and known-unsupported types (for tests and the converter). */
size_t wfl_registry_type_count(void);
const wfl_type *wfl_registry_type_at(size_t index);
/* The attached DPs: "ConditionedActivityGroup.WhenCondition" (on a CAG child) and
 * "WorkflowChanges.Condition" (on the root; stored as DynamicUpdateCondition). owner and
 * name as in the property element. NULL if unknown. */
const wfl_dp *wfl_registry_attached(const char *owner, const char *name);

const wfl_dp *wfl_type_find_dp(const wfl_type *type, const char *name); /* NULL if absent */
/* True when dp is a DP of a built-in type (static: it lives as long as the process). */
bool wfl_dp_is_builtin(const wfl_dp *dp);
bool wfl_type_is_a(const wfl_type *type, const wfl_type *base);
const char *wfl_kind_name(wfl_kind kind); /* "Sequence", "IfElseBranch", ... */

/* A type for a type-library activity (WFL_KIND_CUSTOM, base Activity): its properties become
 * VALUE DPs (Direction kept in dp->tl_prop). Made in `arena`. */
wf_status wfl_type_create_custom(wf_arena *arena, const wfl_typelib *tl,
                                 const wfl_tl_activity *activity, const wfl_type **out,
                                 wf_error *err);
/* The same for a composite type whose body `body` was loaded from its Definition= XOML. */
wf_status wfl_type_create_composite(wf_arena *arena, const wfl_typelib *tl,
                                    const wfl_tl_activity *activity,
                                    const struct wfl_definition *body, const wfl_type **out,
                                    wf_error *err);
/* The root type of an x:Class workflow: derives from `base` (SequentialWorkflowActivity or
 * StateMachineWorkflowActivity) and adds the class's properties as VALUE DPs (non-metadata).
 * WF_E_SCHEMA when a property name clashes with a DP of base. */
wf_status wfl_type_create_code_beside(wf_arena *arena, const wfl_type *base,
                                      const wfl_typelib *tl, const wfl_tl_class *cls,
                                      const wfl_type **out, wf_error *err);

#endif

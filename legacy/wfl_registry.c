/* wfl_registry.c — the WF3 activity types and their dependency properties, declared once in
 * static tables below and flattened (base DPs first) on first use under pthread_once; read-only
 * after. Custom and code-beside types are built per definition in its arena
 * (docs/semantics.md §1 "Properties", §3 catalogue). */
#include "wfl_registry.h"

#include <assert.h>
#include <pthread.h>
#include <string.h>
#include <strings.h> /* strcasecmp */

/* ---- declarations ----------------------------------------------------------------------- */
typedef struct dp_decl {
    const char *name;
    wfl_dp_kind kind;
    const wf_type *type;
    unsigned flags;
    wf_value def;
    const char *const *enums;
} dp_decl;

typedef struct type_decl {
    const char *name;
    wfl_kind kind;
    wfl_kind base;
    unsigned flags;
    const dp_decl *dps;
    size_t dp_count;
    const char *unsupported;
} type_decl;

#define NUL_V {&wf_type_null, {0}}
#define MD WFL_DP_METADATA
#define OPT WFL_DP_OPTIONAL
#define RO WFL_DP_READONLY
#define EV(n) {n, WFL_DPK_EVENT, NULL, WFL_DP_EVENT, NUL_V, NULL}
#define COND(n, f) {n, WFL_DPK_CONDITION, NULL, MD | (f), NUL_V, NULL}
#define STR(n, f) {n, WFL_DPK_VALUE, &wf_type_string, (f), NUL_V, NULL}
#define TYPEDP(n, f) {n, WFL_DPK_TYPE, NULL, (f), NUL_V, NULL}
#define PARAMS(n) {n, WFL_DPK_PARAMS, NULL, 0, NUL_V, NULL}
#define AREF(n) {n, WFL_DPK_ACTIVITY_REF, &wf_type_string, MD, NUL_V, NULL}
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const execution_types[] = {"Sequence", "Parallel", NULL};

static const dp_decl activity_dps[] = {
    STR("Name", MD),
    STR("Description", MD),
    {"Enabled", WFL_DPK_VALUE, &wf_type_bool, MD, {&wf_type_bool, {.b = true}}, NULL},
};
static const dp_decl workflow_dps[] = {
    EV("Initialized"),
    EV("Completed"),
    COND("DynamicUpdateCondition", OPT),
};
static const dp_decl statemachine_dps[] = {
    EV("Initialized"),
    EV("Completed"),
    COND("DynamicUpdateCondition", OPT),
    AREF("InitialStateName"),
    AREF("CompletedStateName"),
};
static const dp_decl code_dps[] = {EV("ExecuteCode")};
static const dp_decl branch_dps[] = {COND("Condition", OPT)};
static const dp_decl while_dps[] = {COND("Condition", 0)};
static const dp_decl replicator_dps[] = {
    {"InitialChildData", WFL_DPK_VALUE, &wf_type_list_object, 0, NUL_V, NULL},
    {"ExecutionType", WFL_DPK_VALUE, &wf_type_string, 0, NUL_V, execution_types},
    COND("UntilCondition", OPT),
    EV("ChildInitialized"),
    EV("ChildCompleted"),
    EV("Initialized"),
    EV("Completed"),
};
static const dp_decl delay_dps[] = {
    {"TimeoutDuration", WFL_DPK_VALUE, &wf_type_timespan, 0, {&wf_type_timespan, {.i64 = 0}},
     NULL},
    EV("InitializeTimeoutDuration"),
};
static const dp_decl hee_dps[] = {
    TYPEDP("InterfaceType", MD),
    STR("EventName", MD),
    PARAMS("ParameterBindings"),
    EV("Invoked"),
    {"CorrelationToken", WFL_DPK_VALUE, &wf_type_record, MD, NUL_V, NULL},
    {"Roles", WFL_DPK_VALUE, &wf_type_object, 0, NUL_V, NULL},
};
static const dp_decl cem_dps[] = {
    TYPEDP("InterfaceType", MD),
    STR("MethodName", MD),
    PARAMS("ParameterBindings"),
    EV("MethodInvoking"),
    {"CorrelationToken", WFL_DPK_VALUE, &wf_type_record, MD, NUL_V, NULL},
};
static const dp_decl policy_dps[] = {
    {"RuleSetReference", WFL_DPK_RULESET, NULL, MD, NUL_V, NULL},
};
static const dp_decl txscope_dps[] = {
    {"TransactionOptions", WFL_DPK_VALUE, &wf_type_record, MD, NUL_V, NULL},
};
static const dp_decl compensate_dps[] = {AREF("TargetActivityName")};
static const dp_decl faulthandler_dps[] = {
    TYPEDP("FaultType", MD),
    {"Fault", WFL_DPK_VALUE, &wf_exc_exception, RO, NUL_V, NULL},
};
static const dp_decl throw_dps[] = {
    TYPEDP("FaultType", 0),
    {"Fault", WFL_DPK_VALUE, &wf_exc_exception, 0, NUL_V, NULL},
};
static const dp_decl error_dps[] = {STR("Error", 0)};
static const dp_decl invoke_dps[] = {
    TYPEDP("TargetWorkflow", MD),
    PARAMS("ParameterBindings"),
    EV("Invoking"),
    STR("InstanceId", RO),
};
/* WF 3.5 workflow services (docs/wf3-behaviour.md "Workflow services"): the operation
 * (OperationInfo / TypedOperationInfo) and the tokens are records of their attributes, an
 * OperationInfo's Parameters a list of records. */
#define RECMD(n) {n, WFL_DPK_VALUE, &wf_type_record, MD, NUL_V, NULL}
static const dp_decl receive_dps[] = {
    RECMD("ServiceOperationInfo"),
    {"CanCreateInstance", WFL_DPK_VALUE, &wf_type_bool, MD, {&wf_type_bool, {.b = false}}, NULL},
    RECMD("ContextToken"),
    PARAMS("ParameterBindings"),
    EV("OperationValidation"),
    {"FaultMessage", WFL_DPK_VALUE, &wf_type_object, 0, NUL_V, NULL},
};
static const dp_decl send_dps[] = {
    RECMD("ServiceOperationInfo"),
    RECMD("ChannelToken"),
    PARAMS("ParameterBindings"),
    EV("BeforeSend"),
    EV("AfterResponse"),
    STR("CustomAddress", 0),
};
static const dp_decl iws_dps[] = {
    TYPEDP("ProxyClass", MD),
    STR("MethodName", MD),
    STR("URL", 0),
    STR("SessionId", MD),
    PARAMS("ParameterBindings"),
    EV("Invoking"),
    EV("Invoked"),
};
static const dp_decl cag_dps[] = {COND("UntilCondition", OPT)};
static const dp_decl setstate_dps[] = {AREF("TargetStateName")};
static const dp_decl when_dp[] = {COND("WhenCondition", OPT)};

#define COMP WFL_TF_COMPOSITE
#define T(name, kind, base, flags, dps)                                                            \
    {name, kind, base, flags, dps, N(dps), NULL}
#define T0(name, kind, base, flags) {name, kind, base, flags, NULL, 0, NULL}
#define UNSUP(name, why) {name, WFL_KIND_UNSUPPORTED, WFL_KIND_ACTIVITY, 0, NULL, 0, why}

static const char web_why[] = "web-service messaging has no native equivalent";

/* Bases come before the types deriving from them. */
static const type_decl type_decls[] = {
    {"Activity", WFL_KIND_ACTIVITY, WFL_KIND_COUNT, WFL_TF_ABSTRACT, activity_dps,
     N(activity_dps), NULL},
    T0("CompositeActivity", WFL_KIND_COMPOSITE, WFL_KIND_ACTIVITY, COMP | WFL_TF_ABSTRACT),
    T0("SequenceActivity", WFL_KIND_SEQUENCE, WFL_KIND_COMPOSITE, COMP),
    T("SequentialWorkflowActivity", WFL_KIND_SEQUENTIAL_WORKFLOW, WFL_KIND_SEQUENCE,
      COMP | WFL_TF_ROOT, workflow_dps),
    T("CodeActivity", WFL_KIND_CODE, WFL_KIND_ACTIVITY, 0, code_dps),
    T0("IfElseActivity", WFL_KIND_IFELSE, WFL_KIND_COMPOSITE, COMP),
    T("IfElseBranchActivity", WFL_KIND_IFELSE_BRANCH, WFL_KIND_SEQUENCE, COMP, branch_dps),
    T("WhileActivity", WFL_KIND_WHILE, WFL_KIND_COMPOSITE, COMP, while_dps),
    T("ReplicatorActivity", WFL_KIND_REPLICATOR, WFL_KIND_COMPOSITE, COMP, replicator_dps),
    T0("ParallelActivity", WFL_KIND_PARALLEL, WFL_KIND_COMPOSITE, COMP),
    T0("ListenActivity", WFL_KIND_LISTEN, WFL_KIND_COMPOSITE, COMP),
    T0("EventDrivenActivity", WFL_KIND_EVENT_DRIVEN, WFL_KIND_SEQUENCE, COMP),
    T("DelayActivity", WFL_KIND_DELAY, WFL_KIND_ACTIVITY, WFL_TF_EVENT, delay_dps),
    T("HandleExternalEventActivity", WFL_KIND_HANDLE_EXTERNAL_EVENT, WFL_KIND_ACTIVITY,
      WFL_TF_EVENT, hee_dps),
    T("CallExternalMethodActivity", WFL_KIND_CALL_EXTERNAL_METHOD, WFL_KIND_ACTIVITY, 0,
      cem_dps),
    T("PolicyActivity", WFL_KIND_POLICY, WFL_KIND_ACTIVITY, 0, policy_dps),
    T("TransactionScopeActivity", WFL_KIND_TRANSACTION_SCOPE, WFL_KIND_SEQUENCE, COMP,
      txscope_dps),
    T0("CompensatableSequenceActivity", WFL_KIND_COMPENSATABLE_SEQUENCE, WFL_KIND_SEQUENCE,
       COMP | WFL_TF_COMPENSATABLE),
    T("CompensateActivity", WFL_KIND_COMPENSATE, WFL_KIND_ACTIVITY, 0, compensate_dps),
    T0("CompensationHandlerActivity", WFL_KIND_COMPENSATION_HANDLER, WFL_KIND_SEQUENCE,
       COMP | WFL_TF_ALT_FLOW),
    T0("FaultHandlersActivity", WFL_KIND_FAULT_HANDLERS, WFL_KIND_COMPOSITE,
       COMP | WFL_TF_ALT_FLOW),
    T("FaultHandlerActivity", WFL_KIND_FAULT_HANDLER, WFL_KIND_SEQUENCE, COMP,
      faulthandler_dps),
    T0("CancellationHandlerActivity", WFL_KIND_CANCELLATION_HANDLER, WFL_KIND_SEQUENCE,
       COMP | WFL_TF_ALT_FLOW),
    T("ThrowActivity", WFL_KIND_THROW, WFL_KIND_ACTIVITY, 0, throw_dps),
    T("TerminateActivity", WFL_KIND_TERMINATE, WFL_KIND_ACTIVITY, 0, error_dps),
    T("SuspendActivity", WFL_KIND_SUSPEND, WFL_KIND_ACTIVITY, 0, error_dps),
    T("InvokeWorkflowActivity", WFL_KIND_INVOKE_WORKFLOW, WFL_KIND_ACTIVITY, 0, invoke_dps),
    T("ConditionedActivityGroup", WFL_KIND_CAG, WFL_KIND_COMPOSITE, COMP, cag_dps),
    T("SetStateActivity", WFL_KIND_SET_STATE, WFL_KIND_ACTIVITY, 0, setstate_dps),
    T0("StateActivity", WFL_KIND_STATE, WFL_KIND_COMPOSITE, COMP),
    T("StateMachineWorkflowActivity", WFL_KIND_STATE_MACHINE_WORKFLOW, WFL_KIND_STATE,
      COMP | WFL_TF_ROOT, statemachine_dps),
    T0("StateInitializationActivity", WFL_KIND_STATE_INITIALIZATION, WFL_KIND_SEQUENCE, COMP),
    T0("StateFinalizationActivity", WFL_KIND_STATE_FINALIZATION, WFL_KIND_SEQUENCE, COMP),
    T("InvokeWebServiceActivity", WFL_KIND_INVOKE_WEB_SERVICE, WFL_KIND_ACTIVITY, 0, iws_dps),
    UNSUP("WebServiceInputActivity", web_why),
    UNSUP("WebServiceOutputActivity", web_why),
    UNSUP("WebServiceFaultActivity", web_why),
    T("SendActivity", WFL_KIND_SEND, WFL_KIND_ACTIVITY, 0, send_dps),
    T("ReceiveActivity", WFL_KIND_RECEIVE, WFL_KIND_SEQUENCE, COMP | WFL_TF_EVENT, receive_dps),
    UNSUP("EventHandlingScopeActivity", "concurrent event handlers are not supported"),
    UNSUP("EventHandlersActivity", "concurrent event handlers are not supported"),
    UNSUP("SynchronizationScopeActivity", "synchronization handles are not supported"),
    UNSUP("CompensatableTransactionScopeActivity",
          "compensatable transactions are not supported; use TransactionScopeActivity inside "
          "a CompensatableSequenceActivity"),
};

#define TYPE_COUNT N(type_decls)
#define MAX_FLAT 64

/* ---- the flattened registry --------------------------------------------------------------- */
typedef struct registry {
    wfl_type types[TYPE_COUNT];
    const wfl_type *by_kind[WFL_KIND_COUNT];
    wfl_dp own[TYPE_COUNT][MAX_FLAT];        /* each type's own DPs */
    const wfl_dp *flat[TYPE_COUNT][MAX_FLAT]; /* flattened pointers */
    uint16_t index[TYPE_COUNT][2 * MAX_FLAT]; /* their dp_index tables */
    wfl_dp when;                              /* attached WhenCondition */
    wfl_type when_owner;
} registry;

static registry g_reg;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void fill_dp(wfl_dp *dp, const dp_decl *d, size_t index, const wfl_type *owner)
{
    dp->name = d->name;
    dp->kind = d->kind;
    dp->type = d->type;
    dp->flags = d->flags;
    dp->default_value = d->def;
    dp->enum_values = d->enums;
    dp->index = index;
    dp->owner = owner;
    dp->tl_prop = NULL;
}

/* ---- DP lookup by name ------------------------------------------------------------------
 * Names are looked up per native call (code-beside handlers read and write the root's DPs by
 * name), so each type keeps an open-addressing table from name hash to DP index. Equal names
 * probe in insertion order: the first DP of a name wins, as in a scan of dps. */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Slots of the table for n DPs: a power of two, at least 2n. */
static size_t index_size(size_t n)
{
    size_t size = 8;
    while (size < 2 * n)
        size *= 2;
    return size;
}

/* DP names are short: a byte loop beats a call to strcmp on the lookup path. */
static inline bool same_name(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static void index_build(wfl_type *t, uint16_t *table, size_t size)
{
    assert(size >= 2 * t->dp_count && (size & (size - 1)) == 0 && t->dp_count < UINT16_MAX);
    memset(table, 0, size * sizeof *table);
    uint32_t mask = (uint32_t)size - 1;
    for (size_t i = 0; i < t->dp_count; i++) {
        uint32_t h = name_hash(t->dps[i]->name) & mask;
        while (table[h])
            h = (h + 1) & mask;
        table[h] = (uint16_t)(i + 1);
    }
    t->dp_index = table;
    t->dp_index_mask = mask;
}

static void build_type(size_t i)
{
    const type_decl *d = &type_decls[i];
    wfl_type *t = &g_reg.types[i];
    const wfl_type *base = d->base == WFL_KIND_COUNT ? NULL : g_reg.by_kind[d->base];
    size_t n = 0;
    assert(d->base == WFL_KIND_COUNT || base != NULL); /* type_decls lists bases first */
    assert((base ? base->dp_count : 0) + d->dp_count <= MAX_FLAT);
    if (base != NULL) {
        for (; n < base->dp_count; n++) {
            assert(base->dps[n]->index == n); /* base DPs keep their slots in every subtype */
            g_reg.flat[i][n] = base->dps[n];
        }
    }
    for (size_t k = 0; k < d->dp_count; k++, n++) {
        fill_dp(&g_reg.own[i][k], &d->dps[k], n, t);
        g_reg.flat[i][n] = &g_reg.own[i][k];
    }
    t->name = d->name;
    t->base = base;
    t->kind = d->kind;
    t->flags = d->flags;
    t->dps = g_reg.flat[i];
    t->dp_count = n;
    index_build(t, g_reg.index[i], index_size(n));
    t->unsupported = d->unsupported;
    if (d->kind != WFL_KIND_UNSUPPORTED)
        g_reg.by_kind[d->kind] = t;
}

static void registry_init(void)
{
    for (size_t i = 0; i < TYPE_COUNT; i++)
        build_type(i);
    g_reg.when_owner = (wfl_type){.name = "ConditionedActivityGroup", .kind = WFL_KIND_CAG};
    fill_dp(&g_reg.when, &when_dp[0], 0, &g_reg.when_owner);
}

static const registry *reg(void)
{
    pthread_once(&g_once, registry_init);
    return &g_reg;
}

const wfl_type *wfl_registry_find(const char *name)
{
    const registry *r = reg();
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < TYPE_COUNT; i++) {
        if (!(r->types[i].flags & WFL_TF_ABSTRACT) && strcmp(r->types[i].name, name) == 0)
            return &r->types[i];
    }
    return NULL;
}

const wfl_type *wfl_registry_builtin(wfl_kind kind)
{
    if ((unsigned)kind >= WFL_KIND_COUNT)
        return NULL;
    const wfl_type *t = reg()->by_kind[kind];
    assert(t == NULL || t->kind == kind); /* by_kind is indexed by the type's own kind */
    return t;
}

size_t wfl_registry_type_count(void)
{
    return TYPE_COUNT;
}

const wfl_type *wfl_registry_type_at(size_t index)
{
    return index < TYPE_COUNT ? &reg()->types[index] : NULL;
}

const wfl_dp *wfl_registry_attached(const char *owner, const char *name)
{
    const registry *r = reg();
    if (owner == NULL || name == NULL)
        return NULL;
    if (strcmp(owner, "ConditionedActivityGroup") == 0 && strcmp(name, "WhenCondition") == 0)
        return &r->when;
    if (strcmp(owner, "WorkflowChanges") == 0 && strcmp(name, "Condition") == 0)
        return wfl_type_find_dp(r->by_kind[WFL_KIND_SEQUENTIAL_WORKFLOW],
                                "DynamicUpdateCondition");
    return NULL;
}

const wfl_dp *wfl_type_find_dp(const wfl_type *type, const char *name)
{
    if (type == NULL || name == NULL)
        return NULL;
    if (type->dp_index) {
        for (uint32_t h = name_hash(name) & type->dp_index_mask;;
             h = (h + 1) & type->dp_index_mask) {
            uint16_t k = type->dp_index[h];
            if (k == 0)
                return NULL;
            if (same_name(type->dps[k - 1]->name, name))
                return type->dps[k - 1];
        }
    }
    for (size_t i = 0; i < type->dp_count; i++) {
        if (strcmp(type->dps[i]->name, name) == 0)
            return type->dps[i];
    }
    return NULL;
}

bool wfl_dp_is_builtin(const wfl_dp *dp)
{
    uintptr_t p = (uintptr_t)dp, own = (uintptr_t)g_reg.own;
    return p >= own && p < own + sizeof g_reg.own;
}

bool wfl_type_is_a(const wfl_type *type, const wfl_type *base)
{
    for (const wfl_type *t = type; t != NULL; t = t->base) {
        if (t == base)
            return true;
    }
    return false;
}

const char *wfl_kind_name(wfl_kind kind)
{
    static const char *const names[WFL_KIND_COUNT] = {
        "Activity", "Composite", "SequentialWorkflow", "Sequence", "Code", "IfElse",
        "IfElseBranch", "While", "Replicator", "Parallel", "Listen", "EventDriven", "Delay",
        "HandleExternalEvent", "CallExternalMethod", "Policy", "TransactionScope",
        "CompensatableSequence", "Compensate", "CompensationHandler", "FaultHandlers",
        "FaultHandler", "CancellationHandler", "Throw", "Terminate", "Suspend",
        "InvokeWorkflow", "ConditionedActivityGroup", "SetState", "StateMachineWorkflow",
        "State", "StateInitialization", "StateFinalization", "Receive", "Send",
        "InvokeWebService", "Custom", "Unsupported"};
    return (unsigned)kind < WFL_KIND_COUNT ? names[kind] : "?";
}

/* ---- per-definition types ------------------------------------------------------------- */
/* Extend `base` with `count` typelib properties into a new arena type; errors are located in
 * the type library `tl` (its file, the property's line and column). */
static wf_status extend_type(wf_arena *arena, const wfl_type *base, const wfl_typelib *tl,
                             size_t count, const wfl_tl_prop *(*prop_at)(const void *, size_t),
                             const void *owner, wfl_type **out, wf_error *err)
{
    wfl_type *t = wf_arena_alloc(arena, sizeof *t);
    const wfl_dp **flat = wf_arena_alloc(arena, (base->dp_count + count + 1) * sizeof *flat);
    wfl_dp *own = wf_arena_alloc(arena, (count + 1) * sizeof *own);
    if (t == NULL || flat == NULL || own == NULL)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory building a type");
    size_t n = 0;
    for (; n < base->dp_count; n++) {
        flat[n] = base->dps[n];
        assert(flat[n]->index == n); /* base DPs keep their slots in every subtype */
    }
    for (size_t k = 0; k < count; k++, n++) {
        const wfl_tl_prop *p = prop_at(owner, k);
        if (wfl_type_find_dp(base, p->name) != NULL) {
            wf_loc at = {tl ? wfl_typelib_file(tl) : NULL, p->line, p->col};
            return wf_error_set(err, WF_E_SCHEMA, &at,
                                "property '%s' clashes with the built-in property of %s",
                                p->name, base->name);
        }
        own[k] = (wfl_dp){.name = p->name, .kind = WFL_DPK_VALUE, .type = p->type,
                          .default_value =
                              p->has_default ? p->default_value : wf_type_default(p->type),
                          .index = n, .owner = t, .tl_prop = p};
        flat[n] = &own[k];
    }
    *t = (wfl_type){.base = base, .kind = base->kind, .flags = base->flags & ~WFL_TF_ABSTRACT,
                    .dps = flat, .dp_count = n};
    size_t size = index_size(n);
    uint16_t *table = n < UINT16_MAX ? wf_arena_alloc(arena, size * sizeof *table) : NULL;
    if (table)
        index_build(t, table, size);
    *out = t;
    return WF_OK;
}

static const wfl_tl_prop *activity_prop_at(const void *owner, size_t index)
{
    return wfl_tl_activity_prop(owner, index);
}

static const wfl_tl_prop *class_prop_at(const void *owner, size_t index)
{
    return wfl_tl_class_prop(owner, index);
}

/* The DP of each parameter of fn on t, then of its Return binding (NULL when it has none):
 * resolved once, so calls need no lookup by name. NULL with *missing set when a name is not
 * a DP of t, NULL alone on out of memory. */
static const wfl_dp **resolve_fn_dps(wf_arena *arena, const wfl_type *t, const wfl_tl_func *fn,
                                     const char **missing)
{
    size_t n = wfl_tl_func_param_count(fn);
    const wfl_dp **dps = wf_arena_alloc(arena, (n + 1) * sizeof *dps);
    for (size_t i = 0; dps != NULL && i <= n; i++) {
        const wfl_tl_prop *p = i < n ? wfl_tl_func_param(fn, i) : wfl_tl_func_return(fn);
        dps[i] = p ? wfl_type_find_dp(t, p->name) : NULL;
        if (p && !dps[i]) {
            *missing = p->name;
            return NULL;
        }
    }
    return dps;
}

wf_status wfl_type_create_custom(wf_arena *arena, const wfl_typelib *tl,
                                 const wfl_tl_activity *activity, const wfl_type **out,
                                 wf_error *err)
{
    wfl_type *t = NULL;
    *out = NULL;
    wf_status rc = extend_type(arena, wfl_registry_builtin(WFL_KIND_ACTIVITY), tl,
                               wfl_tl_activity_prop_count(activity), activity_prop_at, activity,
                               &t, err);
    if (rc != WF_OK)
        return rc;
    t->name = wfl_tl_activity_name(activity);
    t->kind = WFL_KIND_CUSTOM;
    if (wfl_tl_activity_is_container(activity))
        t->flags |= WFL_TF_COMPOSITE;
    t->custom = activity;
    t->typelib = tl;
    const wfl_tl_func *fn = wfl_tl_activity_func(activity);
    if (fn) {
        const char *missing = NULL;
        const wfl_dp **dps = resolve_fn_dps(arena, t, fn, &missing);
        if (dps == NULL && missing == NULL)
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        if (dps == NULL) /* the type library checks this: never a half-resolved type */
            return wf_error_set(err, WF_E_SCHEMA, NULL, "'%s' has no property '%s'", t->name,
                                missing);
        t->exec_dps = dps;
    }
    *out = t;
    return WF_OK;
}

wf_status wfl_type_create_composite(wf_arena *arena, const wfl_typelib *tl,
                                    const wfl_tl_activity *activity,
                                    const struct wfl_definition *body, const wfl_type **out,
                                    wf_error *err)
{
    const wfl_type *t = NULL;
    wf_status rc = wfl_type_create_custom(arena, tl, activity, &t, err);
    if (rc != WF_OK)
        return rc;
    wfl_type *own = (wfl_type *)t; /* made just now in the arena */
    own->composite = body;
    own->exec_dps = NULL;
    *out = t;
    return WF_OK;
}

wf_status wfl_type_create_code_beside(wf_arena *arena, const wfl_type *base,
                                      const wfl_typelib *tl, const wfl_tl_class *cls,
                                      const wfl_type **out, wf_error *err)
{
    wfl_type *t = NULL;
    *out = NULL;
    wf_status rc = extend_type(arena, base, tl, wfl_tl_class_prop_count(cls), class_prop_at, cls,
                               &t, err);
    if (rc != WF_OK)
        return rc;
    t->name = base->name;
    t->typelib = tl;
    t->code_beside = cls;
    size_t count = wfl_tl_class_func_count(cls);
    const wfl_dp *const **fn_dps = wf_arena_alloc(arena, (count + 1) * sizeof *fn_dps);
    if (fn_dps == NULL)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < count; i++) {
        const char *missing = NULL; /* a parameter that is no DP: that one goes by name */
        fn_dps[i] = resolve_fn_dps(arena, t, wfl_tl_class_func_at(cls, i), &missing);
        if (fn_dps[i] == NULL && missing == NULL)
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    t->class_fn_dps = fn_dps;
    *out = t;
    return WF_OK;
}

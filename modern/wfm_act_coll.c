/* wfm_act_coll.c — WF4 activities found in real public workflows that the first catalogue
 * lacked: NoPersistScope (WF4 4.5), the collection activities AddToCollection<T>,
 * RemoveFromCollection<T>, ExistsInCollection<T>, ClearCollection<T>, and InvokeAction /
 * InvokeAction<T> (docs/semantics.md §5; the extension API is wfm_activity.h).
 *
 * Collections. WF4 declares `Collection` as InArgument<ICollection<T>>: the activity gets a
 * reference and mutates the object in place. wfbridge lists are immutable values, so here
 * `Collection` is an INOUT property of type List(T): `Collection="[items]"` names a location
 * (variable or argument) holding a List(T) (scg:List/ICollection/IList(T) all resolve to it);
 * the activity reads the list and stores the changed list back into that same location.
 * Every alias in WF4 (two variables holding one List object) is a copy here. The long form
 * <X.Collection><InArgument x:TypeArguments="scg:ICollection(T)">[items]</InArgument>...
 * is refused by the loader (an INOUT property takes an InOutArgument wrapper). */
#include <string.h>

#include "wfm_activity.h"
#include "wfm_acts.h"
#include "wfm_ctx.h"
#include "wfm_node.h"

static void done_complete(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    (void)child;
    wfm_ctx_complete(ctx, ai);
}

/* ---- NoPersistScope --------------------------------------------------------------------- */
/* While the scope executes the instance cannot persist (WFM_KIND_NO_PERSIST): a save is
 * refused, a durable host defers its persist until the scope closes, and a Persist inside
 * faults at run time. Like WF4's constraint, a Persist written in the Body is a load error. */
enum { NPS_BODY };
static const wfm_prop_spec nps_props[] = {
    {"Body", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_CONTENT, NULL},
};

static bool is_persist(const wfm_node *n)
{
    const wfm_kind *k = wfm_node_kind(n);
    return strcmp(wfm_kind_spec_of(k)->name, "Persist") == 0 &&
           strcmp(wfm_kind_ns(k), WFM_NS_ACTIVITIES) == 0;
}

/* The first Persist written in the subtree of `n` (its own tree children only: nodes reached
 * through x:Reference are numbered, and checked, where they are written). */
static const wfm_node *find_persist(const wfm_node *n)
{
    if (is_persist(n))
        return n;
    const wfm_kind_spec *spec = wfm_kind_spec_of(wfm_node_kind(n));
    for (unsigned pi = 0; pi < spec->prop_count; pi++) {
        const wfm_node *hit = NULL;
        switch (spec->props[pi].kind) {
        case WFM_PROP_ACTIVITY:
        case WFM_PROP_NODE: {
            const wfm_node *c = wfm_node_child(n, pi);
            if (c && wfm_node_parent(c) == n)
                hit = find_persist(c);
            break;
        }
        case WFM_PROP_ACTIVITIES:
        case WFM_PROP_NODES:
        case WFM_PROP_KEYED:
            for (size_t i = 0; i < wfm_node_count(n, pi) && !hit; i++)
                if (wfm_node_parent(wfm_node_at(n, pi, i)) == n)
                    hit = find_persist(wfm_node_at(n, pi, i));
            break;
        case WFM_PROP_DELEGATE:
            if (wfm_node_child(n, pi))
                hit = find_persist(wfm_node_child(n, pi));
            break;
        default:
            break;
        }
        if (hit)
            return hit;
    }
    return NULL;
}

static wf_status nps_prepare(wfm_load *load, wfm_node *node)
{
    const wfm_node *body = wfm_node_child(node, NPS_BODY);
    const wfm_node *p = body ? find_persist(body) : NULL;
    if (p)
        wfm_load_error(load, p, WF_E_SCHEMA,
                       "NoPersistScope '%s' cannot contain the Persist activity '%s'",
                       wfm_node_display_name(node), wfm_node_display_name(p));
    return WF_OK;
}

static void nps_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *body = wfm_node_child(wfm_ai_node(ai), NPS_BODY);
    if (body)
        wfm_ctx_schedule(ctx, ai, body, done_complete, NULL);
    else
        wfm_ctx_complete(ctx, ai);
}

static const void *const complete_callbacks[] = {(const void *)done_complete};

static const wfm_kind_spec nps_spec = {
    .name = "NoPersistScope",
    .category = "Activity",
    .flags = WFM_KIND_NO_PERSIST,
    .props = nps_props,
    .prop_count = 1,
    .content_prop = "Body",
    .prepare = nps_prepare,
    .execute = nps_execute,
    .callbacks = complete_callbacks,
    .callback_count = 1,
};

/* ---- AddToCollection<T> / RemoveFromCollection<T> / ExistsInCollection<T> / ClearCollection<T>
 * One property layout for all four (Clear uses only Collection, Add no Result), so the
 * property indexes below hold for every one of them. */
enum { COLL_COLLECTION, COLL_ITEM, COLL_RESULT };
static const wfm_prop_spec coll_props[] = {
    {"Collection", WFM_PROP_INOUT, "List(T)", NULL, WFM_PROP_REQUIRED, NULL},
    {"Item", WFM_PROP_IN, "T", NULL, WFM_PROP_REQUIRED, NULL},
    {"Result", WFM_PROP_OUT, "x:Boolean", NULL, 0, NULL},
};

/* The list location must hold exactly List(T): WF4 needs x:TypeArguments on these kinds. */
static wf_status coll_prepare(wfm_load *load, wfm_node *node)
{
    const char *kname = wfm_kind_spec_of(wfm_node_kind(node))->name;
    const wf_type *t = wfm_node_type_arg(node);
    if (!t) {
        wfm_load_error(load, node, WF_E_SCHEMA, "%s needs x:TypeArguments (the item type)", kname);
        return WF_OK;
    }
    const wf_type *want = wf_types_list(wfm_load_types(load), t);
    if (!want)
        return WF_E_NOMEM;
    const wf_type *have = wfm_node_prop_type(node, COLL_COLLECTION);
    if (have && have != want)
        wfm_load_error(load, node, WF_E_TYPE, "%s.Collection must be a %s location, not %s", kname,
                       want->name, have->name);
    return WF_OK;
}

/* Null-aware equality (ICollection<T>.Contains / Remove with EqualityComparer<T>.Default). */
static bool item_equal(const wf_value *a, const wf_value *b)
{
    if (wf_is_null(a) || wf_is_null(b))
        return wf_is_null(a) && wf_is_null(b);
    return wf_value_equal(a, b);
}

/* Read the collection; false (ai faulted) when it fails or is null. */
static bool coll_get(wfm_ctx *ctx, wfm_ai *ai, wf_value *list)
{
    if (wfm_ctx_get(ctx, ai, COLL_COLLECTION, list) != WF_OK)
        return false;
    if (wf_is_null(list)) {
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "the collection activity '%s' requires a non-null Collection",
                      wfm_node_display_name(wfm_ai_node(ai)));
        return false;
    }
    return true;
}

/* Store a new list built from `items` back into the Collection location. */
static bool coll_store(wfm_ctx *ctx, wfm_ai *ai, const wf_value *items, size_t count)
{
    wf_value next;
    if (wf_value_list(wfm_node_prop_type(wfm_ai_node(ai), COLL_COLLECTION), items, count, &next) !=
        WF_OK) {
        wfm_ctx_nomem(ctx); /* the scheduler fails the instance after this callback */
        return false;
    }
    wf_status st = wfm_ctx_set(ctx, ai, COLL_COLLECTION, &next);
    wf_value_release(&next);
    return st == WF_OK;
}

/* The index of the first element equal to Item, or SIZE_MAX; false when ai faulted. */
static bool coll_find(wfm_ctx *ctx, wfm_ai *ai, const wf_value *list, size_t *at)
{
    wf_value item;
    if (wfm_ctx_get(ctx, ai, COLL_ITEM, &item) != WF_OK)
        return false;
    size_t n = wf_value_list_count(list);
    *at = SIZE_MAX;
    for (size_t i = 0; i < n && *at == SIZE_MAX; i++)
        if (item_equal(wf_value_list_at(list, i), &item))
            *at = i;
    wf_value_release(&item);
    return true;
}

static bool set_result(wfm_ctx *ctx, wfm_ai *ai, bool b)
{
    wf_value v = wf_bool(b);
    return wfm_ctx_set(ctx, ai, COLL_RESULT, &v) == WF_OK;
}

static void add_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value list, item;
    if (!coll_get(ctx, ai, &list))
        return;
    if (wfm_ctx_get(ctx, ai, COLL_ITEM, &item) != WF_OK) {
        wf_value_release(&list);
        return;
    }
    size_t n = wf_value_list_count(&list);
    wf_value *items = wf_malloc((n + 1) * sizeof *items);
    bool ok = false;
    if (items) {
        for (size_t i = 0; i < n; i++)
            items[i] = *wf_value_list_at(&list, i); /* borrowed: wf_value_list retains */
        items[n] = item;
        ok = coll_store(ctx, ai, items, n + 1);
        wf_free(items);
    } else {
        wfm_ctx_nomem(ctx);
    }
    wf_value_release(&item);
    wf_value_release(&list);
    if (ok)
        wfm_ctx_complete(ctx, ai);
}

/* ICollection<T>.Remove: the first equal element goes; Result says whether one did. */
static void remove_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value list;
    size_t at;
    if (!coll_get(ctx, ai, &list))
        return;
    bool ok = coll_find(ctx, ai, &list, &at);
    if (ok && at != SIZE_MAX) {
        size_t n = wf_value_list_count(&list);
        wf_value *items = wf_malloc(n * sizeof *items);
        if (items) {
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (i != at)
                    items[k++] = *wf_value_list_at(&list, i);
            ok = coll_store(ctx, ai, items, k);
            wf_free(items);
        } else {
            wfm_ctx_nomem(ctx);
            ok = false;
        }
    }
    wf_value_release(&list);
    if (ok && set_result(ctx, ai, at != SIZE_MAX))
        wfm_ctx_complete(ctx, ai);
}

static void exists_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value list;
    size_t at;
    if (!coll_get(ctx, ai, &list))
        return;
    bool ok = coll_find(ctx, ai, &list, &at);
    wf_value_release(&list);
    if (ok && set_result(ctx, ai, at != SIZE_MAX))
        wfm_ctx_complete(ctx, ai);
}

static void clear_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value list;
    if (!coll_get(ctx, ai, &list))
        return;
    wf_value_release(&list);
    if (coll_store(ctx, ai, NULL, 0))
        wfm_ctx_complete(ctx, ai);
}

#define COLL_SPEC(var, kname, nprops, exec)                                                        \
    static const wfm_kind_spec var = {                                                             \
        .name = kname,                                                                             \
        .category = "Activity",                                                                    \
        .flags = WFM_KIND_GENERIC,                                                                 \
        .props = coll_props,                                                                       \
        .prop_count = nprops,                                                                      \
        .content_prop = "Collection", /* WF4 [ContentProperty("Collection")] */                    \
        .prepare = coll_prepare,                                                                   \
        .execute = exec,                                                                           \
    }
COLL_SPEC(add_spec, "AddToCollection", 2, add_execute);
COLL_SPEC(remove_spec, "RemoveFromCollection", 3, remove_execute);
COLL_SPEC(exists_spec, "ExistsInCollection", 3, exists_execute);
COLL_SPEC(clear_spec, "ClearCollection", 1, clear_execute);

/* ---- InvokeAction / InvokeAction<T> --------------------------------------------------------
 * Invokes the ActivityAction written directly as its Action property (delegates are not
 * values here, so an action held in a variable cannot be invoked). Without x:TypeArguments
 * it is WF4's non-generic InvokeAction (an ActivityAction without argument); with it,
 * Argument is required and bound to the action's DelegateInArgument. No Action, or an
 * empty one: nothing to do. */
enum { IA_ACTION, IA_ARGUMENT };
static const wfm_prop_spec ia_props[] = {
    {"Action", WFM_PROP_DELEGATE, "T", NULL, WFM_PROP_CONTENT, NULL},
    {"Argument", WFM_PROP_IN, "T", NULL, 0, NULL},
};

static wf_status ia_prepare(wfm_load *load, wfm_node *node)
{
    if (wfm_node_type_arg(node) && !wfm_node_has(node, IA_ARGUMENT))
        wfm_load_error(load, node, WF_E_SCHEMA, "InvokeAction.Argument is required");
    else if (wfm_node_has(node, IA_ARGUMENT) && wfm_node_has(node, IA_ACTION) &&
             !wfm_node_prop_type(node, IA_ACTION)) /* T only from Argument */
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "InvokeAction.Argument needs x:TypeArguments (InvokeAction<T>)");
    return WF_OK;
}

static void ia_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *node = wfm_ai_node(ai);
    if (!wfm_node_child(node, IA_ACTION)) {
        wfm_ctx_complete(ctx, ai);
        return;
    }
    wf_value arg = wf_null();
    if (wfm_node_type_arg(node) && wfm_ctx_get(ctx, ai, IA_ARGUMENT, &arg) != WF_OK)
        return;
    wfm_ctx_schedule_delegate(ctx, ai, node, IA_ACTION, &arg, done_complete, NULL);
    wf_value_release(&arg);
}

static const wfm_kind_spec ia_spec = {
    .name = "InvokeAction",
    .category = "Activity",
    .flags = WFM_KIND_GENERIC,
    .props = ia_props,
    .prop_count = 2,
    .content_prop = "Action", /* WF4 [ContentProperty("Action")] */
    .prepare = ia_prepare,
    .execute = ia_execute,
    .callbacks = complete_callbacks,
    .callback_count = 1,
};

/* ---- registration ----------------------------------------------------------------------- */
static const wfm_kind_spec *const coll_specs[] = {
    &nps_spec, &add_spec, &remove_spec, &exists_spec, &clear_spec, &ia_spec,
};

wf_status wfm_acts_coll_register(wfm_catalogue *cat, wf_error *err)
{
    for (size_t i = 0; i < sizeof coll_specs / sizeof coll_specs[0]; i++) {
        wf_status st = wfm_catalogue_register(cat, coll_specs[i], err);
        if (st != WF_OK)
            return st;
    }
    return WF_OK;
}

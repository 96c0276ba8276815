/* wfm_act_type.c — the wrapper of a XAML activity type used by another definition (<p:Name
 * Arg="[x]"/>): sets the type's In/InOut arguments (its own variables, an environment the body
 * cannot see past) from the caller, runs the type's body, and copies Out/InOut arguments back
 * to the caller's locations when the body closes (docs/architecture.md "XAML activity types").
 * The loader builds these nodes itself; no XAML element names the kind. */
#include "wfm_acts.h"
#include "wfm_ctx.h"
#include "wfm_expr.h"
#include "wfm_node.h"

static const wfm_prop_spec type_props[] = {
    {"Arguments", WFM_PROP_PARAMS, NULL, NULL, 0, NULL},
    {"Body", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
};

/* The wrapper's own environment: its variables are the type's arguments. */
static wfm_env *type_env(wfm_ai *ai)
{
    return (wfm_env *)wfm_ai_env(ai);
}

static void type_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    const wfm_node *n = wfm_ai_node(ai);
    const uint32_t *slots = wfm_node_data(n);
    if (wfm_ai_status(child) == WFM_CLOSED) { /* WF4: Out arguments on success only */
        wfm_env *env = type_env(ai);
        for (size_t i = 0; i < wfm_node_count(n, WFM__TYPE_ARGS); i++)
            if (wfm_node_param_dir(n, WFM__TYPE_ARGS, i) != WFM_PROP_IN &&
                wfm_ctx_set_param(ctx, ai, WFM__TYPE_ARGS, i, &env->slots[slots[i]]) != WF_OK)
                return;
    } else {
        wfm_ctx_mark_canceled(ctx, ai);
    }
    wfm_ctx_complete(ctx, ai);
}

static void type_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *n = wfm_ai_node(ai);
    const uint32_t *slots = wfm_node_data(n);
    size_t count = wfm_node_count(n, WFM__TYPE_ARGS);
    for (size_t i = 0; i < count; i++) {
        if (wfm_node_param_dir(n, WFM__TYPE_ARGS, i) == WFM_PROP_OUT)
            continue;
        wf_value v;
        if (wfm_ctx_get_param(ctx, ai, WFM__TYPE_ARGS, i, &v) != WF_OK)
            return;
        wf_value *slot = &type_env(ai)->slots[slots[i]];
        wf_value_release(slot);
        *slot = v;
    }
    const wfm_node *body = wfm_node_child(n, WFM__TYPE_BODY);
    if (!body)
        wfm_ctx_complete(ctx, ai);
    else
        wfm_ctx_schedule(ctx, ai, body, type_done, NULL);
}

/* Append only (saved states name callbacks by index). */
static const void *const type_callbacks[] = {(const void *)type_done};

static const wfm_kind_spec type_spec = {
    .name = "ActivityType",
    .ns = WFM__NS_ACTTYPE,
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES | WFM_KIND_STATE_PLAIN,
    .props = type_props,
    .prop_count = 2,
    .execute = type_execute,
    .callbacks = type_callbacks,
    .callback_count = 1,
};

wf_status wfm_act_type_register(wfm_catalogue *cat, wf_error *err)
{
    return wfm_catalogue_register(cat, &type_spec, err);
}

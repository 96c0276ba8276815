/* wfc_map_custom.c — the converter's rules for activities of type libraries and for what
 * has no modern equivalent: a custom leaf activity naming a plain function becomes an
 * InvokeMethod, a custom composite a converted activity type (wfc_acttype.c), anything else
 * is hosted whole through the Interop activity (wfc_interop.c). */
#include <string.h>

#include "wfc_convert_int.h"

#define W (&c->w)

/*
** The single place where a legacy subtree with no modern equivalent goes to the Interop
** activity (docs/convert.md "Interop"): every activity in it is reported as hosted, and
** wfc__interop writes the <Interop> and its generated composite; the file is `partial`.
*/
static void hosted_subtree(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "Interop", WFC_ACT_INTEROP);
    wfc__consumed(c, n, "*"); /* Interop takes every property as it is */
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        hosted_subtree(c, wfl_node_child(n, i));
}

void wfc__interop_wrap(wfc__conv *c, const wfl_node *n, const char *why)
{
    hosted_subtree(c, n); /* the Interop activity hosts the whole subtree */
    wfc__interop(c, n, why);
}

/* Whether an ActivityBind in the subtree at `at` names activity `name` (NULL: any activity but
 * the root). */
static bool binds_to(const wfc__conv *c, const wfl_node *at, const char *name)
{
    const wfl_type *t = wfl_node_type(at);
    for (size_t i = 0; i < t->dp_count; i++) {
        wfl_prop_info pi = {.kind = WFL_PROP_UNSET};
        wfl_node_prop(at, t->dps[i], &pi);
        if (pi.kind == WFL_PROP_BIND && pi.bind && pi.bind->name &&
            (name ? strcmp(pi.bind->name, name) == 0
                  : strcmp(pi.bind->name, wfl_node_name(c->root)) != 0))
            return true;
    }
    for (size_t i = 0; name && i < wfl_node_child_count(at); i++)
        if (binds_to(c, wfl_node_child(at, i), name))
            return true;
    return false;
}

/* Whether n shares a property with another activity: it binds to one, or one binds to it.
 * A hosted composite carries only the workflow's own properties. The same in both passes. */
static bool shares_activity_data(const wfc__conv *c, const wfl_node *n)
{
    return binds_to(c, n, NULL) || binds_to(c, c->root, wfl_node_name(n));
}

/* A custom leaf activity whose type library names a plain function -> InvokeMethod. With
 * --interop it goes through Interop, unless it is a plain function sharing data with another
 * activity, which Interop cannot carry: then it stays an InvokeMethod (warning interop-bind). */
static void emit_custom(wfc__conv *c, const wfl_node *n)
{
    const wfl_type *t = wfl_node_type(n);
    const wfl_tl_func *fn = t->custom ? wfl_tl_activity_func(t->custom) : NULL;
    bool plain = fn && t->typelib && !(t->flags & WFL_TF_COMPOSITE) && wfl_node_child_count(n) == 0;
    if (c->opts->force_interop && plain && shares_activity_data(c, n)) {
        wfc__diag(c, WFC_WARNING, wfl_node_loc(n), "interop-bind",
                  "%s '%s' shares a property with another activity through an ActivityBind, "
                  "which Interop cannot carry: converted as InvokeMethod despite --interop",
                  t->name, wfl_node_name(n));
    } else if (c->opts->force_interop) {
        wfc__interop_wrap(c, n, "--interop was given");
        return;
    }
    if (t->composite && t->custom && t->typelib && wfl_tl_activity_definition(t->custom)) {
        wfc__consumed(c, n, "*"); /* every property is an argument of the converted type */
        wfc__acttype(c, n);
        return;
    }
    if (!fn || !t->typelib || (t->flags & WFL_TF_COMPOSITE) || wfl_node_child_count(n) > 0) {
        wfc__interop_wrap(c, n, "a custom activity that is not a plain function");
        return;
    }
    wfc__activity(c, n, "InvokeMethod", WFC_ACT_INVOKE);
    bool vars = wfc__has_variables(c, n);
    if (vars) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
    }
    wfc__invoke(c, n, wfl_node_name(n), fn, t->typelib, WFC__FROM_ACTIVITY, NULL);
    if (vars)
        wfc_xw_close(W);
}

static void emit_unsupported(wfc__conv *c, const wfl_node *n)
{
    const char *why = wfl_node_type(n)->unsupported;
    wfc__interop_wrap(c, n, why ? why : "no WF4 activity");
}

/* Legacy kind -> emitter, modern type reported (NULL: the emitter reports it), action; a row
 * without an emitter hosts the subtree through Interop for the reason given. */
static const wfc__rule custom_rules[] = {
    {WFL_KIND_CUSTOM, emit_custom, NULL, WFC_ACT_INVOKE, NULL, 0}, /* InvokeMethod, a type */
    {WFL_KIND_INVOKE_WORKFLOW, NULL, NULL, WFC_ACT_INTEROP, "no WF4 activity", 0},
    {WFL_KIND_UNSUPPORTED, emit_unsupported, NULL, WFC_ACT_INTEROP, NULL, 0},
    /* WF 3.5 calls out: ReceiveActivity, SendActivity and InvokeWebServiceActivity map to
     * Receive/SendReply and Send/ReceiveReply (wfc_map_service.c) */
};

const wfc__family wfc__map_custom = {"custom", custom_rules,
                                     sizeof custom_rules / sizeof custom_rules[0]};

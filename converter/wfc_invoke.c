/* wfc_invoke.c — the native calls the converter writes: code handlers, code conditions,
 * custom leaf activities and service methods all become an InvokeMethod of the same native
 * function, each parameter taken from where WF3 takes it (the workflow's properties, the
 * activity's DPs or the ParameterBindings). */
#include <string.h>

#include "../legacy/wfl_rules.h"
#include "wfc_convert_int.h"

#define W (&c->w)

static const char *dir_elem(wfl_tl_dir dir)
{
    return dir == WFL_TL_OUT ? "OutArgument" : dir == WFL_TL_INOUT ? "InOutArgument" : "InArgument";
}

static bool literal_expr(const wf_value *v, wf_buf *out)
{
    return wfl_rules_literal_text(v, out);
}

/* The expression for one parameter of a custom activity: its DP's bind, literal, default, or
 * its own storage. */
bool wfc__activity_arg(wfc__conv *c, const wfl_node *n, const wfl_tl_prop *p, bool rd, bool wr,
                       wf_buf *out)
{
    const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(n), p->name);
    wfl_prop_info pi = {.kind = WFL_PROP_UNSET};
    wfc__consumed(c, n, p->name);
    if (dp)
        wfl_node_prop(n, dp, &pi);
    if (pi.kind == WFL_PROP_BIND)
        return wfc__bind_expr(c, n, pi.bind, rd, wr, out, NULL);
    wfc__slot *own = wfc__find_slot(c, n, p->name);
    if (own && c->pass == 2) /* another activity binds to this DP: it lives in a variable */
        return wf_buf_adds(out, own->name);
    if (!wr && pi.kind == WFL_PROP_LITERAL)
        return literal_expr(pi.literal, out);
    if (!wr && pi.kind == WFL_PROP_NULL)
        return wf_buf_adds(out, "null");
    if (!wr && pi.kind == WFL_PROP_UNSET) { /* the declared default, as WF3 reads it */
        wf_value none = wf_null();
        return literal_expr(p->has_default ? &p->default_value
                            : dp           ? &dp->default_value
                                           : &none,
                            out);
    }
    wfc__slot *s = wfc__slot_of(c, n, p->name, p->type, wfl_node_loc(n));
    if (!s)
        return false;
    wfc__use(c, s, n, rd, wr);
    return wf_buf_adds(out, s->name);
}

/* Whether a ParameterBinding for `param` has a value (nothing recorded). */
bool wfc__has_binding(const wfl_node *n, const char *param)
{
    const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(n), "ParameterBindings");
    wfl_param_binding_info b;
    for (size_t i = 0; dp && wfl_node_param_binding(n, dp, i, &b); i++)
        if (strcmp(b.param, param) == 0 && b.has_value)
            return true;
    return false;
}

bool wfc__binding_arg(wfc__conv *c, const wfl_node *n, const char *param, bool rd, bool wr,
                      wf_buf *out, bool *found)
{
    const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(n), "ParameterBindings");
    wfc__consumed(c, n, "ParameterBindings");
    wfl_param_binding_info b;
    *found = false;
    for (size_t i = 0; dp && wfl_node_param_binding(n, dp, i, &b); i++) {
        if (strcmp(b.param, param) != 0 || !b.has_value)
            continue;
        *found = true;
        if (b.bind)
            return wfc__bind_expr(c, n, b.bind, rd, wr, out, NULL);
        if (wr) {
            wfc__diag(c, WFC_ERROR, b.loc, "binding-literal-out",
                      "parameter '%s' receives a value but is bound to a literal", param);
            return false;
        }
        return literal_expr(b.literal, out);
    }
    return true;
}

static bool param_expr(wfc__conv *c, const wfl_node *n, wfc__arg_source src, const wfl_tl_prop *p,
                       wf_buf *out)
{
    bool rd = p->dir != WFL_TL_OUT && p->dir != WFL_TL_RETURN;
    bool wr = p->dir != WFL_TL_IN;
    if (src == WFC__FROM_ACTIVITY)
        return wfc__activity_arg(c, n, p, rd, wr, out);
    if (src == WFC__FROM_CLASS) {
        if (wfc__param_expr(c, n, p->name, rd, wr, out))
            return true;
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "handler-parameter",
                  "handler parameter '%s' is not a property of the workflow", p->name);
        return false;
    }
    bool found;
    const char *name = p->dir == WFL_TL_RETURN ? "(ReturnValue)" : p->name;
    if (!wfc__binding_arg(c, n, name, rd, wr, out, &found))
        return false;
    if (!found && rd) {
        wf_value d = p->has_default ? p->default_value : wf_null();
        return literal_expr(&d, out);
    }
    return found;
}

/* <InvokeMethod TargetType="nsN:Any" MethodName="fn"> with Result and typed parameters. */
void wfc__invoke(wfc__conv *c, const wfl_node *n, const char *display, const wfl_tl_func *fn,
                 const wfl_typelib *tl, wfc__arg_source src, const char *result_var)
{
    const char *prefix = wfc__lib_prefix(c, tl, wfl_node_loc(n));
    wfc_xw_open(W, "InvokeMethod");
    wfc_xw_attr(W, "DisplayName", display);
    wfc_xw_attrf(W, "TargetType", "%s:Any", prefix ? prefix : "ns");
    wfc_xw_attr(W, "MethodName", wfl_tl_func_symbol(fn));
    if (wfl_tl_func_error_on_nonzero(fn))
        wfc_xw_attr(W, "ErrorOnNonZero", "True");
    const wfl_tl_prop *ret = wfl_tl_func_return(fn);
    wf_buf e;
    wf_buf_init(&e);
    if (result_var || ret) {
        const wf_type *rt = ret ? ret->type : &wf_type_bool;
        bool have = true;
        if (result_var) {
            wf_buf_adds(&e, result_var);
        } else {
            bool found = true;
            if (src == WFC__FROM_BINDINGS)
                have = wfc__binding_arg(c, n, "(ReturnValue)", false, true, &e, &found) && found;
            else
                have = param_expr(c, n, src, ret, &e);
        }
        if (have) {
            wfc_xw_open(W, "InvokeMethod.Result");
            wfc__argument(c, "OutArgument", rt, e.data, wfl_node_loc(n));
            wfc_xw_close(W);
        } else if (wfl_tl_func_error_on_nonzero(fn)) {
            /* the status still needs a location of the right type: none is needed */
        }
    }
    for (size_t i = 0; i < wfl_tl_func_param_count(fn); i++) {
        const wfl_tl_prop *p = wfl_tl_func_param(fn, i);
        wf_buf_reset(&e);
        if (!param_expr(c, n, src, p, &e))
            wf_buf_adds(&e, "null");
        wfc__argument(c, dir_elem(p->dir), p->type, e.data, wfl_node_loc(n));
    }
    wf_buf_fini(&e);
    wfc_xw_close(W);
}

const wfl_typelib *wfc__class_typelib(const wfc__conv *c)
{
    return wfl_node_type(c->root)->typelib;
}

/* An event handler DP (ExecuteCode, Invoked, MethodInvoking) as an InvokeMethod. */
void wfc__handler_call(wfc__conv *c, const wfl_node *n, const char *dp_name, bool required)
{
    wfl_prop_info pi;
    wfc__prop(c, n, dp_name, &pi);
    if (pi.kind == WFL_PROP_UNSET && !required)
        return;
    if (pi.kind != WFL_PROP_HANDLER || !pi.fn || !wfc__class_typelib(c)) {
        wfc__diag(c, WFC_ERROR, pi.kind == WFL_PROP_UNSET ? wfl_node_loc(n) : pi.loc,
                  "handler-no-native",
                  "%s handler '%s' of '%s' has no native function in a "
                  "type library",
                  dp_name, pi.name ? pi.name : "", wfl_node_name(n));
        wfc__loss(c, WFC_LOSS_CODE, n, "handler without native code");
        return;
    }
    wfc__invoke(c, n, wfl_node_name(n), pi.fn, wfc__class_typelib(c), WFC__FROM_CLASS, NULL);
}

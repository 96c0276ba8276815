/* wfc_convert.c — the converter's walk over a legacy definition: every WF3 activity with a
 * WF4 equivalent becomes it (docs/semantics.md §7), code handlers, conditions, custom leaf
 * activities and service methods become InvokeMethod calls of the same native functions,
 * and whatever has no equivalent is hosted through the Interop activity (wfc_interop.c).
 * The walk runs twice (wfc_convert_int.h); the result is loaded by the modern loader before
 * anyone sees it. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../legacy/wfl_rules.h"
#include "../modern/wfm_runtime.h"
#include "wfc_convert_int.h"
#include "wfc_output.h"

#define W (&c->w)

static void emit(wfc__conv *c, const wfl_node *n);

/* ---- reporting ---------------------------------------------------------------------------- */
void wfc__diag(wfc__conv *c, wfc_severity sev, wf_loc at, const char *rule, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (sev == WFC_ERROR) {
        c->failed = true;
        if (c->first.code == WF_OK)
            wf_error_set(&c->first, WF_E_UNSUPPORTED, &at, "%s", msg);
    }
    if (c->pass != 2)
        return;
    wfc_file_add_diag(c->file, sev, at.line, at.col, rule, "%s", msg);
    if (sev == WFC_REVIEW) /* a semantic difference someone has to look at */
        wfc_file_add_loss(c->file, WFC_LOSS_SEMANTICS, at.line, rule);
}

void wfc__activity(wfc__conv *c, const wfl_node *node, const char *modern_type, wfc_action action)
{
    if (c->pass != 2)
        return;
    wfc_file_add_activity(c->file, wfl_node_name(node), wfl_node_type(node)->name, modern_type,
                          wfl_node_loc(node).line, action);
    /* name -> its (first) report entry + 1, for the pictures and the final check */
    size_t entry = wfc_file_activity_count(c->file); /* now one past the new entry */
    if (c->seen && !wf_strmap_get(c->seen, wfl_node_name(node)) &&
        wf_strmap_put(c->seen, wfl_node_name(node), (void *)(uintptr_t)entry) != WF_OK)
        c->nomem = true;
}

static void loss(wfc__conv *c, wfc_loss_kind kind, const wfl_node *n, const char *what)
{
    if (c->pass == 2)
        wfc_file_add_loss(c->file, kind, wfl_node_loc(n).line, what);
}

static wfl_kind kind_of(const wfl_node *n)
{
    return wfl_node_type(n)->kind;
}

static bool is_alt_flow(const wfl_node *n)
{
    return (wfl_node_type(n)->flags & WFL_TF_ALT_FLOW) != 0;
}

static const wfl_node *child_of_kind(const wfl_node *n, wfl_kind kind)
{
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        if (kind_of(wfl_node_child(n, i)) == kind)
            return wfl_node_child(n, i);
    return NULL;
}

/* Record that the walk read DP `name` of n (pass 2), for the ignored-property check. */
static void consumed(wfc__conv *c, const wfl_node *n, const char *name)
{
    if (c->pass != 2 || !c->consumed)
        return;
    char key[300];
    snprintf(key, sizeof key, "%s\x1f%s", wfl_node_name(n), name);
    if (wf_strmap_put(c->consumed, key, (void *)n) != WF_OK)
        c->nomem = true;
}

static void prop(wfc__conv *c, const wfl_node *n, const char *name, wfl_prop_info *out)
{
    const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(n), name);
    consumed(c, n, name);
    if (dp)
        wfl_node_prop(n, dp, out);
    else
        *out = (wfl_prop_info){.kind = WFL_PROP_UNSET};
}

static const char *literal_str(wfc__conv *c, const wfl_node *n, const char *name)
{
    wfl_prop_info pi;
    prop(c, n, name, &pi);
    return pi.kind == WFL_PROP_LITERAL && pi.literal->type->kind == WF_K_STRING
               ? wf_value_str(pi.literal)
               : NULL;
}

/* ---- the Interop plug ------------------------------------------------------------------------ */
/*
** The single place where a legacy subtree with no modern equivalent goes to the Interop
** activity (docs/convert.md "Interop"): every activity in it is reported as hosted, and
** wfc__interop writes the <Interop> and its generated composite; the file is `partial`.
*/
static void hosted_subtree(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "Interop", WFC_ACT_INTEROP);
    consumed(c, n, "*"); /* Interop takes every property as it is */
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        hosted_subtree(c, wfl_node_child(n, i));
}

static void interop_wrap(wfc__conv *c, const wfl_node *n, const char *why)
{
    hosted_subtree(c, n); /* the Interop activity hosts the whole subtree */
    wfc__interop(c, n, why);
}

/* ---- small writers --------------------------------------------------------------------------- */
static void open_named(wfc__conv *c, const char *elem, const wfl_node *n)
{
    wfc_xw_open(W, elem);
    if (n)
        wfc_xw_attr(W, "DisplayName", wfl_node_name(n));
}

/* <ELEM DisplayName="name" ATTR="value" /> */
static void leaf(wfc__conv *c, const char *elem, const wfl_node *n, const char *attr,
                 const char *value)
{
    open_named(c, elem, n);
    wfc_xw_attr(W, attr, value);
    wfc_xw_close(W);
}

static void type_attr(wfc__conv *c, const char *attr, const wf_type *t, wf_loc at)
{
    wf_buf b;
    wf_buf_init(&b);
    if (!wfc__xaml_type(t, &b))
        wfc__diag(c, WFC_ERROR, at, "type-unmapped", "type %s has no modern spelling", t->name);
    wfc_xw_attr(W, attr, b.data);
    wf_buf_fini(&b);
}

/* <ELEM x:TypeArguments="T">[expr]</ELEM> */
static void argument(wfc__conv *c, const char *elem, const wf_type *t, const char *expr, wf_loc at)
{
    wfc_xw_open(W, elem);
    type_attr(c, "x:TypeArguments", t, at);
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addf(&b, "[%s]", expr);
    wfc_xw_text(W, b.data);
    wf_buf_fini(&b);
    wfc_xw_close(W);
}

static void children(wfc__conv *c, const wfl_node *n)
{
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        if (!is_alt_flow(wfl_node_child(n, i)))
            emit(c, wfl_node_child(n, i));
}

/* ---- native calls ------------------------------------------------------------------------------
 */
/* Where a function's parameters come from: the code-beside class's properties (handlers and
 * conditions), a custom activity's DPs, or a service call's ParameterBindings. */
typedef enum arg_source { FROM_CLASS, FROM_ACTIVITY, FROM_BINDINGS } arg_source;

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
    consumed(c, n, p->name);
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
static bool has_binding(const wfl_node *n, const char *param)
{
    const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(n), "ParameterBindings");
    wfl_param_binding_info b;
    for (size_t i = 0; dp && wfl_node_param_binding(n, dp, i, &b); i++)
        if (strcmp(b.param, param) == 0 && b.has_value)
            return true;
    return false;
}

static bool binding_arg(wfc__conv *c, const wfl_node *n, const char *param, bool rd, bool wr,
                        wf_buf *out, bool *found)
{
    const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(n), "ParameterBindings");
    consumed(c, n, "ParameterBindings");
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

static bool param_expr(wfc__conv *c, const wfl_node *n, arg_source src, const wfl_tl_prop *p,
                       wf_buf *out)
{
    bool rd = p->dir != WFL_TL_OUT && p->dir != WFL_TL_RETURN;
    bool wr = p->dir != WFL_TL_IN;
    if (src == FROM_ACTIVITY)
        return wfc__activity_arg(c, n, p, rd, wr, out);
    if (src == FROM_CLASS) {
        if (wfc__param_expr(c, n, p->name, rd, wr, out))
            return true;
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "handler-parameter",
                  "handler parameter '%s' is not a property of the workflow", p->name);
        return false;
    }
    bool found;
    const char *name = p->dir == WFL_TL_RETURN ? "(ReturnValue)" : p->name;
    if (!binding_arg(c, n, name, rd, wr, out, &found))
        return false;
    if (!found && rd) {
        wf_value d = p->has_default ? p->default_value : wf_null();
        return literal_expr(&d, out);
    }
    return found;
}

/* <InvokeMethod TargetType="nsN:Any" MethodName="fn"> with Result and typed parameters. */
static void invoke(wfc__conv *c, const wfl_node *n, const char *display, const wfl_tl_func *fn,
                   const wfl_typelib *tl, arg_source src, const char *result_var)
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
            if (src == FROM_BINDINGS)
                have = binding_arg(c, n, "(ReturnValue)", false, true, &e, &found) && found;
            else
                have = param_expr(c, n, src, ret, &e);
        }
        if (have) {
            wfc_xw_open(W, "InvokeMethod.Result");
            argument(c, "OutArgument", rt, e.data, wfl_node_loc(n));
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
        argument(c, dir_elem(p->dir), p->type, e.data, wfl_node_loc(n));
    }
    wf_buf_fini(&e);
    wfc_xw_close(W);
}

static const wfl_typelib *class_typelib(const wfc__conv *c)
{
    return wfl_node_type(c->root)->typelib;
}

/* An event handler DP (ExecuteCode, Invoked, MethodInvoking) as an InvokeMethod. */
static void handler_call(wfc__conv *c, const wfl_node *n, const char *dp_name, bool required)
{
    wfl_prop_info pi;
    prop(c, n, dp_name, &pi);
    if (pi.kind == WFL_PROP_UNSET && !required)
        return;
    if (pi.kind != WFL_PROP_HANDLER || !pi.fn || !class_typelib(c)) {
        wfc__diag(c, WFC_ERROR, pi.kind == WFL_PROP_UNSET ? wfl_node_loc(n) : pi.loc,
                  "handler-no-native",
                  "%s handler '%s' of '%s' has no native function in a "
                  "type library",
                  dp_name, pi.name ? pi.name : "", wfl_node_name(n));
        loss(c, WFC_LOSS_CODE, n, "handler without native code");
        return;
    }
    invoke(c, n, wfl_node_name(n), pi.fn, class_typelib(c), FROM_CLASS, NULL);
}

/* ---- conditions ---------------------------------------------------------------------------------
 */
/* The static type of a rules expression where it is evident (literals, `this.Member`,
 * arithmetic on them); NULL when unknown. */
static const wf_type *rexpr_type(const wfc__conv *c, const wfl_rexpr *e)
{
    wfl_param_info info;
    switch (wfl_rexpr_kind_of(e)) {
    case WFL_REX_PRIMITIVE:
        return wfl_rexpr_value(e)->type;
    case WFL_REX_CAST:
        return wfl_rexpr_type(e);
    case WFL_REX_MEMBER:
        if (wfl_rexpr_child_count(e) > 0 &&
            wfl_rexpr_kind_of(wfl_rexpr_child(e, 0)) == WFL_REX_THIS &&
            wfl_definition_find_param(c->def, wfl_rexpr_name(e), &info))
            return info.type;
        return NULL;
    case WFL_REX_BINARY: {
        wfl_rop op = wfl_rexpr_op(e);
        if (op > WFL_ROP_MODULUS)
            return &wf_type_bool;
        const wf_type *l = rexpr_type(c, wfl_rexpr_child(e, 0));
        return l ? l : rexpr_type(c, wfl_rexpr_child(e, 1));
    }
    default:
        return NULL;
    }
}

static bool is_integer(const wf_type *t)
{
    return t && (t->kind == WF_K_INT32 || t->kind == WF_K_INT64);
}

/* Int32/Int64 arithmetic that wraps in WF3 rules and is checked in modern expressions:
 * + - * with an integer operand, or with no operand of evident type. */
static bool rexpr_wrapping_arith(const wfc__conv *c, const wfl_rexpr *e)
{
    if (wfl_rexpr_kind_of(e) == WFL_REX_BINARY) {
        wfl_rop op = wfl_rexpr_op(e);
        if (op == WFL_ROP_ADD || op == WFL_ROP_SUBTRACT || op == WFL_ROP_MULTIPLY) {
            const wf_type *l = rexpr_type(c, wfl_rexpr_child(e, 0));
            const wf_type *r = rexpr_type(c, wfl_rexpr_child(e, 1));
            if (is_integer(l) || is_integer(r) || (!l && !r))
                return true;
        }
    }
    for (size_t i = 0; i < wfl_rexpr_child_count(e); i++)
        if (rexpr_wrapping_arith(c, wfl_rexpr_child(e, i)))
            return true;
    return false;
}

static bool is_bitwise(wfl_rop op)
{
    return op == WFL_ROP_BITWISE_AND || op == WFL_ROP_BITWISE_OR;
}

/* Whether e contains a binary operator `pred` accepts. */
static bool rexpr_has_op(const wfl_rexpr *e, bool (*pred)(wfl_rop))
{
    if (!e)
        return false;
    if (wfl_rexpr_kind_of(e) == WFL_REX_BINARY && pred(wfl_rexpr_op(e)))
        return true;
    for (size_t i = 0; i < wfl_rexpr_child_count(e); i++)
        if (rexpr_has_op(wfl_rexpr_child(e, i), pred))
            return true;
    return false;
}

/* Record the root members a rules expression reads (`this.Amount`). */
static void rexpr_reads(wfc__conv *c, const wfl_node *user, const wfl_rexpr *e)
{
    if (!e)
        return;
    if (wfl_rexpr_kind_of(e) == WFL_REX_MEMBER && wfl_rexpr_child_count(e) > 0 &&
        wfl_rexpr_kind_of(wfl_rexpr_child(e, 0)) == WFL_REX_THIS) {
        wf_buf scratch;
        wf_buf_init(&scratch);
        wfc__param_expr(c, user, wfl_rexpr_name(e), true, false, &scratch);
        wf_buf_fini(&scratch);
    }
    for (size_t i = 0; i < wfl_rexpr_child_count(e); i++)
        rexpr_reads(c, user, wfl_rexpr_child(e, i));
}

typedef struct cond_plan {
    bool present; /* the node has a condition */
    bool is_code; /* evaluated by an InvokeMethod into `var` first */
    char var[160];
    wf_buf text; /* the expression */
    const wfl_tl_func *fn;
} cond_plan;

/* Read the condition DP `dp_name` of n into a plan: rules text, or a code condition. */
static void cond_plan_init(wfc__conv *c, const wfl_node *n, const char *dp_name, cond_plan *p)
{
    memset(p, 0, sizeof *p);
    wf_buf_init(&p->text);
    wfl_prop_info pi;
    prop(c, n, dp_name, &pi);
    if (pi.kind == WFL_PROP_RULE_CONDITION) {
        p->present = true;
        const wfl_rexpr *e = pi.rule ? wfl_rule_cond_expr(pi.rule) : NULL;
        if (!e) {
            wfc__diag(c, WFC_ERROR, pi.loc, "rules-missing",
                      "condition '%s' needs a .rules file that defines it", pi.name);
            wf_buf_adds(&p->text, "false");
            return;
        }
        rexpr_reads(c, n, e);
        wfl_rules_expr_text(e, &p->text);
        if (rexpr_has_op(e, is_bitwise))
            wfc__diag(c, WFC_ERROR, pi.loc, "rules-bitwise-operator",
                      "condition '%s' uses a bitwise operator (BitwiseAnd/BitwiseOr), which the "
                      "modern expression language does not have",
                      pi.name);
        if (rexpr_wrapping_arith(c, e))
            wfc__diag(c, WFC_REVIEW, pi.loc, "rules-arithmetic-overflow",
                      "condition '%s': WF3 rules arithmetic wraps on Int32/Int64 overflow, "
                      "modern expressions are checked",
                      pi.name);
    } else if (pi.kind == WFL_PROP_CODE_CONDITION) {
        p->present = true;
        p->is_code = true;
        p->fn = pi.fn;
        snprintf(p->var, sizeof p->var, "%s_Condition", wfl_node_name(n));
        wf_buf_adds(&p->text, p->var);
        if (!pi.fn || pi.bind || !class_typelib(c)) {
            wfc__diag(c, WFC_ERROR, pi.loc, "condition-no-native",
                      "code condition '%s' has no native function in a type library", pi.name);
            loss(c, WFC_LOSS_CODE, n, "condition without native code");
        }
    }
}

static void cond_plan_fini(cond_plan *p)
{
    wf_buf_fini(&p->text);
}

/* Code conditions: open the Sequence that declares the result and computes it. */
static void cond_open(wfc__conv *c, const wfl_node *n, const cond_plan *p)
{
    if (!p->is_code)
        return;
    open_named(c, "Sequence", n);
    wfc_xw_open(W, "Sequence.Variables");
    wfc_xw_open(W, "Variable");
    wfc_xw_attr(W, "x:TypeArguments", "x:Boolean");
    wfc_xw_attr(W, "Name", p->var);
    wfc_xw_close(W);
    wfc_xw_close(W);
    if (p->fn && class_typelib(c))
        invoke(c, n, wfl_tl_func_name(p->fn), p->fn, class_typelib(c), FROM_CLASS, p->var);
}

static void cond_attr(wfc__conv *c, const cond_plan *p)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addf(&b, "[%s]", p->text.data);
    wfc_xw_attr(W, "Condition", b.data);
    wf_buf_fini(&b);
}

/* ---- composites
 * ---------------------------------------------------------------------------------- */
static bool unreachable_handler(wfc__conv *c, const wfl_node *fh, size_t index, const wf_type *t)
{
    for (size_t i = 0; i < index; i++) {
        wfl_prop_info pi;
        prop(c, wfl_node_child(fh, i), "FaultType", &pi);
        const wf_type *earlier = pi.exc_type ? pi.exc_type : &wf_exc_exception;
        if (wf_type_is_a(t, earlier))
            return true;
    }
    return false;
}

static void catch_one(wfc__conv *c, const wfl_node *h, const wf_type *t)
{
    char arg[160];
    snprintf(arg, sizeof arg, "%s_Fault", wfl_node_name(h));
    wfc__activity(c, h, "Catch", WFC_ACT_MAPPED);
    open_named(c, "Catch", h);
    type_attr(c, "x:TypeArguments", t, wfl_node_loc(h));
    wfc_xw_open(W, "ActivityAction");
    type_attr(c, "x:TypeArguments", t, wfl_node_loc(h));
    wfc_xw_open(W, "ActivityAction.Argument");
    wfc_xw_open(W, "DelegateInArgument");
    type_attr(c, "x:TypeArguments", t, wfl_node_loc(h));
    wfc_xw_attr(W, "Name", arg);
    wfc_xw_close(W);
    wfc_xw_close(W);
    open_named(c, "Sequence", h);
    wfc__write_variables(c, h, "Sequence");
    wfl_prop_info fault;
    prop(c, h, "Fault", &fault);
    if (fault.kind == WFL_PROP_BIND) {
        wf_buf to;
        wf_buf_init(&to);
        wf_buf_addc(&to, '[');
        if (wfc__bind_expr(c, h, fault.bind, false, true, &to, NULL)) {
            wf_buf_addc(&to, ']');
            wfc_xw_open(W, "Assign");
            type_attr(c, "x:TypeArguments", &wf_exc_exception, fault.loc);
            wfc_xw_attr(W, "To", to.data);
            wfc_xw_attrf(W, "Value", "[%s]", arg);
            wfc_xw_close(W);
        }
        wf_buf_fini(&to);
    }
    children(c, h);
    wfc_xw_close(W); /* Sequence */
    wfc_xw_close(W); /* ActivityAction */
    wfc_xw_close(W); /* Catch */
}

/* FaultHandlers -> TryCatch.Catches, WF3 first-match kept: a handler that an earlier one
 * shadows can never run in WF3, so it is left out (docs/semantics.md §5 "TryCatch"). */
static void catches(wfc__conv *c, const wfl_node *fh)
{
    wfc__activity(c, fh, "TryCatch.Catches", WFC_ACT_MAPPED);
    wfc_xw_open(W, "TryCatch.Catches");
    for (size_t i = 0; i < wfl_node_child_count(fh); i++) {
        const wfl_node *h = wfl_node_child(fh, i);
        wfl_prop_info pi;
        prop(c, h, "FaultType", &pi);
        const wf_type *t = pi.exc_type ? pi.exc_type : &wf_exc_exception;
        if (unreachable_handler(c, fh, i, t)) {
            wfc__activity(c, h, "(none)", WFC_ACT_MAPPED);
            wfc__diag(c, WFC_WARNING, wfl_node_loc(h), "fault-handler-unreachable",
                      "FaultHandler '%s' (%s) can never run: an earlier handler catches its "
                      "type first; it is left out so the same handler wins",
                      wfl_node_name(h), t->name);
            loss(c, WFC_LOSS_SEMANTICS, h, "unreachable fault handler left out");
            continue;
        }
        catch_one(c, h, t);
    }
    wfc_xw_close(W);
}

/* The body of a composite as one modern activity: a Sequence of its children (declaring the
 * node's variables when `vars`), inside a TryCatch when it has FaultHandlers. */
static void body(wfc__conv *c, const wfl_node *n, bool vars)
{
    const wfl_node *fh = child_of_kind(n, WFL_KIND_FAULT_HANDLERS);
    if (fh) {
        open_named(c, "TryCatch", n);
        wfc_xw_open(W, "TryCatch.Try");
    }
    open_named(c, "Sequence", n);
    if (vars)
        wfc__write_variables(c, n, "Sequence");
    children(c, n);
    wfc_xw_close(W);
    if (fh) {
        wfc_xw_close(W);
        catches(c, fh);
        wfc_xw_close(W);
    }
}

/* A handler child (CancellationHandler, CompensationHandler) as <PROP><Sequence>. */
static void handler_prop(wfc__conv *c, const char *prop_elem, const wfl_node *h, const char *modern)
{
    wfc__activity(c, h, modern, WFC_ACT_MAPPED);
    wfc_xw_open(W, prop_elem);
    open_named(c, "Sequence", h);
    wfc__write_variables(c, h, "Sequence");
    children(c, h);
    wfc_xw_close(W);
    wfc_xw_close(W);
}

static void emit_sequence(wfc__conv *c, const wfl_node *n)
{
    const wfl_node *ch = child_of_kind(n, WFL_KIND_CANCELLATION_HANDLER);
    bool wrap = ch || child_of_kind(n, WFL_KIND_FAULT_HANDLERS);
    wfc__activity(c, n, ch ? "CancellationScope" : "Sequence", WFC_ACT_MAPPED);
    if (wrap && wfc__has_variables(c, n)) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
    }
    if (ch) {
        open_named(c, "CancellationScope", n);
        wfc_xw_open(W, "CancellationScope.Body");
    }
    body(c, n, !wrap);
    if (ch) {
        wfc_xw_close(W);
        handler_prop(c, "CancellationScope.CancellationHandler", ch, "CancellationScope.Handler");
        wfc_xw_close(W);
    }
    if (wrap && wfc__has_variables(c, n))
        wfc_xw_close(W);
}

static void emit_code(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "InvokeMethod", WFC_ACT_INVOKE);
    handler_call(c, n, "ExecuteCode", true);
}

/* IfElse: branch i and the ones after it as an If chain; a branch without a condition is the
 * final else (WF3 runs the first branch whose condition holds, docs/semantics.md §3). */
static void ifelse_chain(wfc__conv *c, const wfl_node *ifelse, size_t i, bool first)
{
    const wfl_node *b = wfl_node_child(ifelse, i);
    cond_plan p;
    cond_plan_init(c, b, "Condition", &p);
    if (!p.present) {
        wfc__activity(c, b, first ? "Sequence" : "If.Else", WFC_ACT_MAPPED);
        body(c, b, true);
        for (size_t k = i + 1; k < wfl_node_child_count(ifelse); k++) {
            const wfl_node *dead = wfl_node_child(ifelse, k);
            if (is_alt_flow(dead))
                continue;
            wfc__activity(c, dead, "(none)", WFC_ACT_MAPPED);
            wfc__diag(c, WFC_WARNING, wfl_node_loc(dead), "ifelse-unreachable-branch",
                      "branch '%s' follows a branch without a condition and never runs",
                      wfl_node_name(dead));
        }
        cond_plan_fini(&p);
        return;
    }
    wfc__activity(c, b, "If", WFC_ACT_MAPPED);
    cond_open(c, b, &p);
    open_named(c, "If", first ? ifelse : b);
    cond_attr(c, &p);
    wfc_xw_open(W, "If.Then");
    body(c, b, true);
    wfc_xw_close(W);
    size_t next = i + 1;
    while (next < wfl_node_child_count(ifelse) && is_alt_flow(wfl_node_child(ifelse, next)))
        next++;
    if (next < wfl_node_child_count(ifelse)) {
        wfc_xw_open(W, "If.Else");
        ifelse_chain(c, ifelse, next, false);
        wfc_xw_close(W);
    }
    wfc_xw_close(W);
    if (p.is_code)
        wfc_xw_close(W);
    cond_plan_fini(&p);
}

static void emit_ifelse(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "If", WFC_ACT_MAPPED);
    if (wfl_node_child_count(n) == 0)
        return;
    bool vars = wfc__has_variables(c, n);
    if (vars) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
    }
    ifelse_chain(c, n, 0, true);
    if (vars)
        wfc_xw_close(W);
}

/* While: the body is a Sequence per iteration (fresh variables, like WF3's clone); a code
 * condition is evaluated before the loop and again at the end of each iteration. */
static void emit_while(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "While", WFC_ACT_MAPPED);
    cond_plan p;
    cond_plan_init(c, n, "Condition", &p);
    if (!p.present)
        wf_buf_adds(&p.text, "false");
    bool vars = wfc__has_variables(c, n);
    if (vars) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
        wfc__diag(c, WFC_REVIEW, wfl_node_loc(n), "loop-variable-scope",
                  "data of the body of '%s' is also used outside it: it is kept across "
                  "iterations instead of being reset for each one",
                  wfl_node_name(n));
    }
    cond_open(c, n, &p);
    open_named(c, "While", n);
    cond_attr(c, &p);
    wfc_xw_open(W, "Sequence");
    children(c, n);
    if (p.is_code && p.fn && class_typelib(c))
        invoke(c, n, wfl_tl_func_name(p.fn), p.fn, class_typelib(c), FROM_CLASS, p.var);
    wfc_xw_close(W);
    wfc_xw_close(W);
    if (p.is_code)
        wfc_xw_close(W);
    if (vars)
        wfc_xw_close(W);
    cond_plan_fini(&p);
}

static void emit_parallel(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "Parallel", WFC_ACT_MAPPED);
    open_named(c, "Parallel", n);
    children(c, n);
    wfc_xw_close(W);
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        for (size_t k = i + 1; k < wfl_node_child_count(n); k++) {
            const wfl_node *a = wfl_node_child(n, i), *b = wfl_node_child(n, k);
            if (!wfc__share_data(c, a, b))
                continue;
            wfc__diag(c, WFC_REVIEW, wfl_node_loc(n), "parallel-interleaving",
                      "branches '%s' and '%s' of '%s' share data: WF3 interleaves them one "
                      "step at a time, WF4 runs each until it waits, so they may see a "
                      "different order",
                      wfl_node_name(a), wfl_node_name(b), wfl_node_name(n));
            return;
        }
    }
}

/* EventDriven -> PickBranch: the first child (the event) is the Trigger, the rest the Action. */
static void pick_branch(wfc__conv *c, const wfl_node *ed)
{
    wfc__activity(c, ed, "PickBranch", WFC_ACT_MAPPED);
    open_named(c, "PickBranch", ed);
    if (wfl_node_child_count(ed) > 0) {
        wfc_xw_open(W, "PickBranch.Trigger");
        emit(c, wfl_node_child(ed, 0));
        wfc_xw_close(W);
    }
    if (wfl_node_child_count(ed) > 1) {
        wfc_xw_open(W, "PickBranch.Action");
        wfc_xw_open(W, "Sequence");
        for (size_t i = 1; i < wfl_node_child_count(ed); i++)
            emit(c, wfl_node_child(ed, i));
        wfc_xw_close(W);
        wfc_xw_close(W);
    }
    wfc_xw_close(W);
}

static void emit_listen(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "Pick", WFC_ACT_MAPPED);
    open_named(c, "Pick", n);
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        pick_branch(c, wfl_node_child(n, i));
    wfc_xw_close(W);
}

static void emit_delay(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "Delay", WFC_ACT_MAPPED);
    wfl_prop_info pi;
    prop(c, n, "TimeoutDuration", &pi);
    wf_buf d;
    wf_buf_init(&d);
    if (pi.kind == WFL_PROP_BIND) {
        wf_buf_addc(&d, '[');
        wfc__bind_expr(c, n, pi.bind, true, false, &d, NULL);
        wf_buf_addc(&d, ']');
    } else {
        char ts[64];
        wf_timespan_format(pi.kind == WFL_PROP_LITERAL ? pi.literal->u.i64 : 0, ts, sizeof ts);
        wf_buf_adds(&d, ts);
    }
    leaf(c, "Delay", n, "Duration", d.data);
    wf_buf_fini(&d);
    if (child_of_kind(n, WFL_KIND_FAULT_HANDLERS) || wfl_node_child_count(n))
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "unexpected-children", "Delay has children");
}

static const wfl_typelib *service_typelib(const wfc__conv *c, const wfl_tl_service *svc)
{
    for (size_t i = 0; i < wfl_definition_typelib_count(c->def); i++) {
        const wfl_typelib *tl = wfl_definition_typelib_at(c->def, i);
        for (size_t k = 0; k < wfl_typelib_service_count(tl); k++)
            if (wfl_typelib_service_at(tl, k) == svc)
                return tl;
    }
    return NULL;
}

/* A multi-parameter event's payload is a record: one Assign per bound parameter. */
static void payload_assigns(wfc__conv *c, const wfl_node *n, const wfl_tl_event *ev,
                            const char *payload)
{
    wf_buf e;
    wf_buf_init(&e);
    for (size_t i = 0; i < wfl_tl_event_param_count(ev); i++) {
        const wfl_tl_prop *p = wfl_tl_event_param(ev, i);
        bool found;
        wf_buf_reset(&e);
        if (!binding_arg(c, n, p->name, false, true, &e, &found) || !found)
            continue;
        const char *cast = wfc__cast_name(p->type);
        wfc_xw_open(W, "Assign");
        type_attr(c, "x:TypeArguments", p->type, wfl_node_loc(n));
        wfc_xw_attrf(W, "To", "[%s]", e.data);
        if (cast)
            wfc_xw_attrf(W, "Value", "[(%s)%s.%s]", cast, payload, p->name);
        else
            wfc_xw_attrf(W, "Value", "[%s.%s]", payload, p->name);
        wfc_xw_close(W);
    }
    wf_buf_fini(&e);
}

static void object_variable(wfc__conv *c, const char *name)
{
    wfc_xw_open(W, "Sequence.Variables");
    wfc_xw_open(W, "Variable");
    wfc_xw_attr(W, "x:TypeArguments", "x:Object");
    wfc_xw_attr(W, "Name", name);
    wfc_xw_close(W);
    wfc_xw_close(W);
}

/* <WaitForEvent x:TypeArguments=T BookmarkName=... Result=...>: a one-parameter event
 * delivers that parameter, a larger one the record into `payload`. */
static void wait_for_event(wfc__conv *c, const wfl_node *n, const wfl_tl_event *ev,
                           const char *bookmark, const char *payload)
{
    size_t np = wfl_tl_event_param_count(ev);
    wf_buf e;
    wf_buf_init(&e);
    bool found = false;
    if (np == 1)
        binding_arg(c, n, wfl_tl_event_param(ev, 0)->name, false, true, &e, &found);
    open_named(c, "WaitForEvent", n);
    if (np == 1)
        type_attr(c, "x:TypeArguments", wfl_tl_event_param(ev, 0)->type, wfl_node_loc(n));
    else
        wfc_xw_attr(W, "x:TypeArguments", "x:Object");
    wfc_xw_attr(W, "BookmarkName", bookmark);
    if (np > 1)
        wfc_xw_attrf(W, "Result", "[%s]", payload);
    else if (found)
        wfc_xw_attrf(W, "Result", "[%s]", e.data);
    wfc_xw_close(W);
    wf_buf_fini(&e);
}

/* HandleExternalEvent -> WaitForEvent on a bookmark named exactly like the legacy queue
 * ("IApprovalService.Approved"); the payload goes where ParameterBindings said, then the
 * Invoked handler runs. */
static void emit_hee(wfc__conv *c, const wfl_node *n)
{
    if (has_binding(n, "e") || has_binding(n, "sender")) {
        interop_wrap(c, n, "it binds the event's e or sender, which WaitForEvent does not deliver");
        return;
    }
    wfc__activity(c, n, "WaitForEvent", WFC_ACT_MAPPED);
    wfl_prop_info it, inv;
    prop(c, n, "InterfaceType", &it);
    prop(c, n, "Invoked", &inv);
    const char *event = literal_str(c, n, "EventName");
    const wfl_tl_event *ev = it.service && event ? wfl_tl_service_event(it.service, event) : NULL;
    if (!ev) {
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "event-unknown",
                  "event '%s' of '%s' is not declared by a type library", event ? event : "",
                  it.name ? it.name : "");
        return;
    }
    char bookmark[300], payload[160];
    snprintf(bookmark, sizeof bookmark, "%s.%s", wfl_tl_service_name(it.service), event);
    snprintf(payload, sizeof payload, "%s_Payload", wfl_node_name(n));
    bool record = wfl_tl_event_param_count(ev) > 1;
    bool seq = record || inv.kind != WFL_PROP_UNSET;
    if (seq)
        open_named(c, "Sequence", n);
    if (record)
        object_variable(c, payload);
    wait_for_event(c, n, ev, bookmark, payload);
    if (record)
        payload_assigns(c, n, ev, payload);
    handler_call(c, n, "Invoked", false);
    if (seq)
        wfc_xw_close(W);
}

/* CallExternalMethod -> InvokeMethod of the service method's native function. */
static void emit_cem(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "InvokeMethod", WFC_ACT_INVOKE);
    wfl_prop_info it;
    prop(c, n, "InterfaceType", &it);
    const char *method = literal_str(c, n, "MethodName");
    const wfl_tl_func *fn = it.service && method ? wfl_tl_service_method(it.service, method) : NULL;
    const wfl_typelib *tl = it.service ? service_typelib(c, it.service) : NULL;
    if (!fn || !tl) {
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "method-unknown",
                  "method '%s' of '%s' is not declared by a type library", method ? method : "",
                  it.name ? it.name : "");
        return;
    }
    wfl_prop_info mi;
    prop(c, n, "MethodInvoking", &mi);
    if (mi.kind != WFL_PROP_UNSET) {
        open_named(c, "Sequence", n);
        handler_call(c, n, "MethodInvoking", false);
    }
    invoke(c, n, wfl_node_name(n), fn, tl, FROM_BINDINGS, NULL);
    if (mi.kind != WFL_PROP_UNSET)
        wfc_xw_close(W);
}

static void emit_compensable(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "CompensableActivity", WFC_ACT_MAPPED);
    bool vars = wfc__has_variables(c, n);
    if (vars) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
    }
    open_named(c, "CompensableActivity", n);
    wfc_xw_open(W, "CompensableActivity.Body");
    body(c, n, false);
    wfc_xw_close(W);
    const wfl_node *h = child_of_kind(n, WFL_KIND_COMPENSATION_HANDLER);
    if (h)
        handler_prop(c, "CompensableActivity.CompensationHandler", h,
                     "CompensableActivity.CompensationHandler");
    h = child_of_kind(n, WFL_KIND_CANCELLATION_HANDLER);
    if (h)
        handler_prop(c, "CompensableActivity.CancellationHandler", h,
                     "CompensableActivity.CancellationHandler");
    wfc_xw_close(W);
    if (vars)
        wfc_xw_close(W);
}

static bool inside(const wfl_node *n, const wfl_node *ancestor)
{
    for (; n; n = wfl_node_parent(n))
        if (n == ancestor)
            return true;
    return false;
}

static size_t count_compensatable_outside(const wfc__conv *c, const wfl_node *n,
                                          const wfl_node *target)
{
    size_t count = 0;
    if ((wfl_node_type(n)->flags & WFL_TF_COMPENSATABLE) && !inside(n, target))
        count++;
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        count += count_compensatable_outside(c, wfl_node_child(n, i), target);
    return count;
}

/* Compensate TargetActivityName=X -> a Target-less Compensate, which compensates every
 * completed compensable in scope newest first: the same as WF3 when X is the only one. */
static void emit_compensate(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "Compensate", WFC_ACT_MAPPED);
    const char *target_name = literal_str(c, n, "TargetActivityName");
    const wfl_node *target = target_name ? wfl_node_resolve(c->def, n, target_name) : NULL;
    if (!target) {
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "compensate-target",
                  "Compensate target '%s' is not an activity", target_name ? target_name : "");
        return;
    }
    if (count_compensatable_outside(c, c->root, target) > 0)
        wfc__diag(c, WFC_REVIEW, wfl_node_loc(n), "compensate-target-scope",
                  "'%s' compensates '%s' only; the modern Compensate without a token "
                  "compensates every completed compensable activity in scope",
                  wfl_node_name(n), target_name);
    open_named(c, "Compensate", n);
    wfc_xw_close(W);
}

static void emit_throw(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "Throw", WFC_ACT_MAPPED);
    wfl_prop_info fault, ft;
    prop(c, n, "Fault", &fault);
    prop(c, n, "FaultType", &ft);
    wf_buf e;
    wf_buf_init(&e);
    wf_buf_addc(&e, '[');
    if (fault.kind == WFL_PROP_BIND) {
        wfc__bind_expr(c, n, fault.bind, true, false, &e, NULL);
    } else {
        const wf_type *t = ft.exc_type ? ft.exc_type : &wf_exc_exception;
        wf_buf tn;
        wf_buf_init(&tn);
        if (!wfc__xaml_type(t, &tn))
            wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "type-unmapped",
                      "exception type %s has no modern spelling", t->name);
        wf_buf_addf(&e, "new %s(\"Exception of type '%s' was thrown.\")", t->name, t->name);
        wf_buf_fini(&tn);
    }
    wf_buf_addc(&e, ']');
    leaf(c, "Throw", n, "Exception", e.data);
    wf_buf_fini(&e);
}

static void emit_terminate(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "TerminateWorkflow", WFC_ACT_MAPPED);
    wfl_prop_info pi;
    prop(c, n, "Error", &pi);
    wf_buf e;
    wf_buf_init(&e);
    wf_buf_addc(&e, '[');
    if (pi.kind == WFL_PROP_BIND)
        wfc__bind_expr(c, n, pi.bind, true, false, &e, NULL);
    else if (pi.kind == WFL_PROP_LITERAL)
        wfl_rules_literal_text(pi.literal, &e);
    else
        wf_buf_adds(&e, "\"\"");
    wf_buf_addc(&e, ']');
    leaf(c, "TerminateWorkflow", n, "Reason", e.data);
    wf_buf_fini(&e);
}

static void emit_transaction(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "TransactionScope", WFC_ACT_MAPPED);
    bool vars = wfc__has_variables(c, n);
    open_named(c, "TransactionScope", n);
    body(c, n, vars);
    wfc_xw_close(W);
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
        interop_wrap(c, n, "--interop was given");
        return;
    }
    if (t->composite && t->custom && t->typelib && wfl_tl_activity_definition(t->custom)) {
        consumed(c, n, "*"); /* every property is an argument of the converted type */
        wfc__acttype(c, n);
        return;
    }
    if (!fn || !t->typelib || (t->flags & WFL_TF_COMPOSITE) || wfl_node_child_count(n) > 0) {
        interop_wrap(c, n, "a custom activity that is not a plain function");
        return;
    }
    wfc__activity(c, n, "InvokeMethod", WFC_ACT_INVOKE);
    bool vars = wfc__has_variables(c, n);
    if (vars) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
    }
    invoke(c, n, wfl_node_name(n), fn, t->typelib, FROM_ACTIVITY, NULL);
    if (vars)
        wfc_xw_close(W);
}

/* The list a Replicator iterates: the bound or literal InitialChildData, and its element type. */
static bool replicator_values(wfc__conv *c, const wfl_node *n, wf_buf *out, const wf_type **elem)
{
    wfl_prop_info pi;
    prop(c, n, "InitialChildData", &pi);
    *elem = &wf_type_object;
    if (pi.kind != WFL_PROP_BIND)
        return wf_buf_adds(out, "[null]");
    wf_buf_addc(out, '[');
    const wf_type *list = NULL;
    bool ok = wfc__bind_expr(c, n, pi.bind, true, false, out, &list);
    wf_buf_addc(out, ']');
    if (list && list->kind == WF_K_LIST)
        *elem = list->elem;
    return ok;
}

static bool has_prop(wfc__conv *c, const wfl_node *n, const char *name)
{
    wfl_prop_info pi;
    prop(c, n, name, &pi);
    return pi.kind != WFL_PROP_UNSET;
}

/* Replicator -> ForEach (Sequence) / ParallelForEach (Parallel) over InitialChildData, one
 * body per item with its own variables. Child events and UntilCondition need Interop. */
static void emit_replicator(wfc__conv *c, const wfl_node *n)
{
    if (has_prop(c, n, "ChildInitialized") || has_prop(c, n, "ChildCompleted") ||
        has_prop(c, n, "UntilCondition") || wfl_node_child_count(n) != 1) {
        interop_wrap(c, n, "per-child events, an UntilCondition or several children");
        return;
    }
    const char *mode = literal_str(c, n, "ExecutionType");
    bool parallel = mode && strcmp(mode, "Parallel") == 0;
    const char *kind = parallel ? "ParallelForEach" : "ForEach";
    wfc__activity(c, n, kind, WFC_ACT_MAPPED);
    wf_buf values;
    wf_buf_init(&values);
    const wf_type *elem;
    replicator_values(c, n, &values, &elem);
    char item[160];
    snprintf(item, sizeof item, "%s_Item", wfl_node_name(n));
    bool vars = wfc__has_variables(c, n);
    if (vars) {
        wfc_xw_open(W, "Sequence");
        wfc__write_variables(c, n, "Sequence");
    }
    open_named(c, kind, n);
    type_attr(c, "x:TypeArguments", elem, wfl_node_loc(n));
    wfc_xw_attr(W, "Values", values.data);
    wfc_xw_open(W, "ActivityAction");
    type_attr(c, "x:TypeArguments", elem, wfl_node_loc(n));
    wfc_xw_open(W, "ActivityAction.Argument");
    wfc_xw_open(W, "DelegateInArgument");
    type_attr(c, "x:TypeArguments", elem, wfl_node_loc(n));
    wfc_xw_attr(W, "Name", item);
    wfc_xw_close(W);
    wfc_xw_close(W);
    wfc_xw_open(W, "Sequence");
    emit(c, wfl_node_child(n, 0));
    wfc_xw_close(W);
    wfc_xw_close(W);
    wfc_xw_close(W);
    if (vars)
        wfc_xw_close(W);
    wf_buf_fini(&values);
    if (parallel)
        wfc__diag(c, WFC_REVIEW, wfl_node_loc(n), "parallel-interleaving",
                  "WF3 interleaves the children of '%s' one step at a time; ParallelForEach "
                  "starts the last item's body first and runs each until it waits",
                  wfl_node_name(n));
}

/* ---- the state machine
 * --------------------------------------------------------------------------- */
static bool contains_kind(const wfl_node *n, wfl_kind kind)
{
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *k = wfl_node_child(n, i);
        if (kind_of(k) == kind || contains_kind(k, kind))
            return true;
    }
    return false;
}

/* EventDriven in a State -> Transition: Trigger = the event, Action = the steps between, To =
 * the trailing SetState's target (no SetState: back to the same state, reviewed). */
static void transition(wfc__conv *c, const wfl_node *state, const wfl_node *ed)
{
    size_t n = wfl_node_child_count(ed);
    const wfl_node *last = n ? wfl_node_child(ed, n - 1) : NULL;
    const char *to = wfl_node_name(state);
    size_t action_end = n;
    wfc__activity(c, ed, "Transition", WFC_ACT_MAPPED);
    if (last && kind_of(last) == WFL_KIND_SET_STATE) {
        const char *target = literal_str(c, last, "TargetStateName");
        to = target ? target : to;
        action_end = n - 1;
        wfc__activity(c, last, "Transition.To", WFC_ACT_MAPPED);
    } else {
        wfc__diag(c, WFC_REVIEW, wfl_node_loc(ed), "state-no-setstate",
                  "'%s' ends without SetState: WF3 stays in '%s', the modern transition "
                  "re-enters it (its Entry runs again)",
                  wfl_node_name(ed), to);
    }
    for (size_t i = 1; i < action_end; i++)
        if (kind_of(wfl_node_child(ed, i)) == WFL_KIND_SET_STATE ||
            contains_kind(wfl_node_child(ed, i), WFL_KIND_SET_STATE))
            interop_wrap(c, wfl_node_child(ed, i), "a SetState that is not the last step");
    open_named(c, "Transition", ed);
    wfc_xw_attrf(W, "To", "{x:Reference %s}", to);
    if (n > 0) {
        wfc_xw_open(W, "Transition.Trigger");
        emit(c, wfl_node_child(ed, 0));
        wfc_xw_close(W);
    }
    if (action_end > 1) {
        wfc_xw_open(W, "Transition.Action");
        wfc_xw_open(W, "Sequence");
        for (size_t i = 1; i < action_end; i++)
            emit(c, wfl_node_child(ed, i));
        wfc_xw_close(W);
        wfc_xw_close(W);
    }
    wfc_xw_close(W);
}

static void state_phase(wfc__conv *c, const wfl_node *s, wfl_kind kind, const char *elem)
{
    const wfl_node *h = child_of_kind(s, kind);
    if (!h)
        return;
    wfc__activity(c, h, elem, WFC_ACT_MAPPED);
    if (contains_kind(h, WFL_KIND_SET_STATE))
        interop_wrap(c, h, "a SetState inside state initialization or finalization");
    wfc_xw_open(W, elem);
    open_named(c, "Sequence", h);
    wfc__write_variables(c, h, "Sequence");
    children(c, h);
    wfc_xw_close(W);
    wfc_xw_close(W);
}

static void emit_state(wfc__conv *c, const wfl_node *s, const char *completed)
{
    wfc__activity(c, s, "State", WFC_ACT_MAPPED);
    wfc_xw_open(W, "State");
    wfc_xw_attr(W, "x:Name", wfl_node_name(s));
    wfc_xw_attr(W, "DisplayName", wfl_node_name(s));
    if (completed && strcmp(completed, wfl_node_name(s)) == 0)
        wfc_xw_attr(W, "IsFinal", "True");
    state_phase(c, s, WFL_KIND_STATE_INITIALIZATION, "State.Entry");
    state_phase(c, s, WFL_KIND_STATE_FINALIZATION, "State.Exit");
    bool any = false;
    for (size_t i = 0; i < wfl_node_child_count(s); i++) {
        const wfl_node *k = wfl_node_child(s, i);
        if (kind_of(k) == WFL_KIND_STATE) {
            interop_wrap(c, k, "a state nested in another state");
        } else if (kind_of(k) == WFL_KIND_EVENT_DRIVEN) {
            if (!any)
                wfc_xw_open(W, "State.Transitions");
            any = true;
            transition(c, s, k);
        }
    }
    if (any)
        wfc_xw_close(W);
    wfc_xw_close(W);
}

static void emit_state_machine(wfc__conv *c, const wfl_node *n)
{
    wfc__activity(c, n, "StateMachine", WFC_ACT_MAPPED);
    const char *initial = literal_str(c, n, "InitialStateName");
    const char *completed = literal_str(c, n, "CompletedStateName");
    open_named(c, "StateMachine", n);
    if (initial)
        wfc_xw_attrf(W, "InitialState", "{x:Reference %s}", initial);
    wfc__write_variables(c, n, "StateMachine");
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *k = wfl_node_child(n, i);
        if (kind_of(k) == WFL_KIND_STATE)
            emit_state(c, k, completed);
        else
            interop_wrap(c, k, "an event handler of the whole state machine");
    }
    wfc_xw_close(W);
}

/* ---- dispatch
 * ------------------------------------------------------------------------------------- */
/* Kinds whose emitter places their own FaultHandlers / CancellationHandler; for every other
 * composite, emit() wraps the modern activity in a TryCatch / CancellationScope. */
static bool own_fault_handlers(const wfl_node *n)
{
    switch (kind_of(n)) {
    case WFL_KIND_SEQUENTIAL_WORKFLOW:
    case WFL_KIND_SEQUENCE:
    case WFL_KIND_COMPENSATABLE_SEQUENCE:
    case WFL_KIND_TRANSACTION_SCOPE:
        return true;
    default:
        return false;
    }
}

static bool own_cancellation_handler(const wfl_node *n)
{
    wfl_kind k = kind_of(n);
    return k == WFL_KIND_SEQUENTIAL_WORKFLOW || k == WFL_KIND_SEQUENCE ||
           k == WFL_KIND_COMPENSATABLE_SEQUENCE;
}

static void emit_kind(wfc__conv *c, const wfl_node *n);

static void emit(wfc__conv *c, const wfl_node *n)
{
    if (wfl_node_is_disabled(n)) {
        wfc__activity(c, n, "(none)", WFC_ACT_MAPPED);
        wfc__diag(c, WFC_INFO, wfl_node_loc(n), "disabled-activity",
                  "'%s' is disabled (Enabled=\"False\") and does not run; it is left out",
                  wfl_node_name(n));
        return;
    }
    if (literal_str(c, n, "Description"))
        loss(c, WFC_LOSS_DESIGNER, n, "Description");
    const wfl_node *fh = own_fault_handlers(n) ? NULL : child_of_kind(n, WFL_KIND_FAULT_HANDLERS);
    const wfl_node *ch =
        own_cancellation_handler(n) ? NULL : child_of_kind(n, WFL_KIND_CANCELLATION_HANDLER);
    if (ch) {
        wfc_xw_open(W, "CancellationScope");
        wfc_xw_open(W, "CancellationScope.Body");
    }
    if (fh) {
        wfc_xw_open(W, "TryCatch");
        wfc_xw_open(W, "TryCatch.Try");
    }
    emit_kind(c, n);
    if (fh) {
        wfc_xw_close(W);
        catches(c, fh);
        wfc_xw_close(W);
    }
    if (ch) {
        wfc_xw_close(W);
        handler_prop(c, "CancellationScope.CancellationHandler", ch, "CancellationScope.Handler");
        wfc_xw_close(W);
    }
}

static void emit_kind(wfc__conv *c, const wfl_node *n)
{
    switch (kind_of(n)) {
    case WFL_KIND_SEQUENTIAL_WORKFLOW:
    case WFL_KIND_SEQUENCE:
        emit_sequence(c, n);
        break;
    case WFL_KIND_CODE:
        emit_code(c, n);
        break;
    case WFL_KIND_IFELSE:
        emit_ifelse(c, n);
        break;
    case WFL_KIND_WHILE:
        emit_while(c, n);
        break;
    case WFL_KIND_PARALLEL:
        emit_parallel(c, n);
        break;
    case WFL_KIND_LISTEN:
        emit_listen(c, n);
        break;
    case WFL_KIND_DELAY:
        emit_delay(c, n);
        break;
    case WFL_KIND_HANDLE_EXTERNAL_EVENT:
        emit_hee(c, n);
        break;
    case WFL_KIND_CALL_EXTERNAL_METHOD:
        emit_cem(c, n);
        break;
    case WFL_KIND_TRANSACTION_SCOPE:
        emit_transaction(c, n);
        break;
    case WFL_KIND_COMPENSATABLE_SEQUENCE:
        emit_compensable(c, n);
        break;
    case WFL_KIND_COMPENSATE:
        emit_compensate(c, n);
        break;
    case WFL_KIND_THROW:
        emit_throw(c, n);
        break;
    case WFL_KIND_TERMINATE:
        emit_terminate(c, n);
        break;
    case WFL_KIND_CUSTOM:
        emit_custom(c, n);
        break;
    case WFL_KIND_STATE_MACHINE_WORKFLOW:
        emit_state_machine(c, n);
        break;
    case WFL_KIND_POLICY:
        interop_wrap(c, n, "rule sets with forward chaining");
        break;
    case WFL_KIND_CAG:
        interop_wrap(c, n, "no WF4 activity");
        break;
    case WFL_KIND_SUSPEND:
        interop_wrap(c, n, "suspension is a host operation in WF4");
        break;
    case WFL_KIND_INVOKE_WORKFLOW:
        interop_wrap(c, n, "no WF4 activity");
        break;
    case WFL_KIND_REPLICATOR:
        emit_replicator(c, n);
        break;
    case WFL_KIND_UNSUPPORTED:
        interop_wrap(c, n,
                     wfl_node_type(n)->unsupported ? wfl_node_type(n)->unsupported
                                                   : "no WF4 activity");
        break;
    default:
        interop_wrap(c, n, "not expected here");
        break;
    }
}

/* ---- the file
 * ------------------------------------------------------------------------------------- */
static void copy_legacy_diags(wfc__conv *c, wf_diags *diags)
{
    wf_diags_sort(diags);
    for (size_t i = 0; i < wf_diags_count(diags); i++) {
        const wf_diag *d = wf_diags_get(diags, i);
        bool error = d->severity == WF_SEV_ERROR;
        wfc_file_add_diag_in(c->file, d->error.file, error ? WFC_ERROR : WFC_WARNING, d->error.line,
                             d->error.col, error ? "legacy-load" : "legacy-warning",
                             d->error.message);
        /* x:Code is code nobody converts; every other tolerated item is designer data. */
        bool code = strstr(d->error.message, "x:Code") != NULL;
        if (!error)
            wfc_file_add_loss(c->file, code ? WFC_LOSS_CODE : WFC_LOSS_DESIGNER, d->error.line,
                              d->error.message);
    }
}

static wfl_tl_dir arg_dir(const wfc__slot *s)
{
    if (!s || !s->written)
        return WFL_TL_IN;
    return s->read ? WFL_TL_INOUT : WFL_TL_OUT;
}

static wfc__slot *arg_slot(wfc__conv *c, const char *name)
{
    for (size_t i = 0; i < c->slot_count; i++)
        if (c->slots[i].is_arg && strcmp(c->slots[i].name, name) == 0)
            return &c->slots[i];
    return NULL;
}

static void members(wfc__conv *c)
{
    size_t n = wfl_definition_param_count(c->def);
    if (n == 0)
        return;
    wfc_xw_open(W, "x:Members");
    for (size_t i = 0; i < n; i++) {
        wfl_param_info p;
        wfl_definition_param(c->def, i, &p);
        wfl_tl_dir dir = arg_dir(arg_slot(c, p.name));
        wf_buf t;
        wf_buf_init(&t);
        wf_buf_adds(&t, dir == WFL_TL_IN    ? "InArgument("
                        : dir == WFL_TL_OUT ? "OutArgument("
                                            : "InOutArgument(");
        if (!wfc__xaml_type(p.type, &t))
            wfc__diag(c, WFC_ERROR, wfl_node_loc(c->root), "type-unmapped",
                      "property %s has type %s, which has no modern spelling", p.name,
                      p.type->name);
        wf_buf_addc(&t, ')');
        wfc_xw_open(W, "x:Property");
        wfc_xw_attr(W, "Name", p.name);
        wfc_xw_attr(W, "Type", t.data);
        wfc_xw_close(W);
        wf_buf_fini(&t);
    }
    wfc_xw_close(W);
}

/* Root properties the XOML gives a value become argument defaults, written as WF4 does:
 * xmlns:this="clr-namespace:NS" and this:Class.Name="[value]" on the root. */
static void root_defaults(wfc__conv *c, const char *cls)
{
    const char *full = cls ? cls : wfl_node_name(c->root);
    const char *dot = strrchr(full, '.');
    bool any = false;
    for (size_t i = 0; i < wfl_definition_param_count(c->def); i++) {
        wfl_param_info p;
        wfl_definition_param(c->def, i, &p);
        wfl_prop_info pi;
        prop(c, c->root, p.name, &pi);
        if (pi.kind != WFL_PROP_LITERAL)
            continue;
        if (!any)
            wfc_xw_attrf(W, "xmlns:this", "clr-namespace:%.*s", dot ? (int)(dot - full) : 0, full);
        any = true;
        wf_buf v;
        wf_buf_init(&v);
        wf_buf_addc(&v, '[');
        wfl_rules_literal_text(pi.literal, &v);
        wf_buf_addc(&v, ']');
        char attr[300];
        snprintf(attr, sizeof attr, "this:%s.%s", dot ? dot + 1 : full, p.name);
        wfc_xw_attr(W, attr, v.data);
        c->nomem |= v.oom;
        wf_buf_fini(&v);
    }
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The whole document: declaration, provenance comment, <Activity> with its namespaces and
 * x:Members, then the body written by pass 2. */
static void document(wfc__conv *c, const char *source, wf_buf *out)
{
    wfc_xw_init(W, out, 0);
    wf_buf_adds(out, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    char note[600];
    snprintf(note, sizeof note, "converted from %s by wfbridge convert %s", base_name(source),
             WFC_VERSION);
    wfc_xw_comment(W, note);
    const char *cls = wfl_definition_class_name(c->def);
    wfc_xw_open(W, "Activity");
    wfc_xw_attr(W, "x:Class", cls ? cls : wfl_node_name(c->root));
    wfc_xw_attr(W, "xmlns", "http://schemas.microsoft.com/netfx/2009/xaml/activities");
    wfc_xw_attr(W, "xmlns:s", "clr-namespace:System;assembly=mscorlib");
    wfc_xw_attr(W, "xmlns:scg", "clr-namespace:System.Collections.Generic;assembly=mscorlib");
    wfc_xw_attr(W, "xmlns:x", "http://schemas.microsoft.com/winfx/2006/xaml");
    for (size_t i = 0; i < c->lib_count; i++) {
        char attr[32];
        snprintf(attr, sizeof attr, "xmlns:%s", c->libs[i].prefix);
        wfc_xw_attrf(W, attr, "clr-namespace:%s;assembly=%s", wfl_typelib_name(c->libs[i].tl),
                     c->libs[i].assembly);
    }
    for (size_t i = 0; i < c->tns_count; i++) {
        char attr[32];
        snprintf(attr, sizeof attr, "xmlns:%s", c->tns[i].prefix);
        wfc_xw_attr(W, attr, c->tns[i].ns);
    }
    for (size_t i = 0; i < c->hosted_count; i++) {
        char attr[32];
        const char *dot = cls ? strrchr(cls, '.') : NULL;
        snprintf(attr, sizeof attr, "xmlns:%s", c->hosted[i].prefix);
        wfc_xw_attrf(W, attr, "clr-namespace:%.*s;assembly=%s", dot ? (int)(dot - cls) : 7,
                     dot ? cls : "Interop", c->hosted[i].assembly);
    }
    root_defaults(c, cls);
    members(c);
    wfc_xw_end_start_tag(W); /* the body follows, written by pass 2 at depth 1 */
}

/* Nothing may vanish silently: every activity the walk did not report (outside disabled
 * subtrees) is an error. */
static void check_all_reported(wfc__conv *c, const wfl_node *n)
{
    if (!wf_strmap_get(c->seen, wfl_node_name(n))) {
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "not-converted",
                  "%s '%s' was not converted (the converter does not handle it in this "
                  "position)",
                  wfl_node_type(n)->name, wfl_node_name(n));
        return;
    }
    if (wfl_node_is_disabled(n))
        return;
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        check_all_reported(c, wfl_node_child(n, i));
}

/* ---- the pictures: both workflows as DOT, coloured by action ------------------------------ */
/* "a\nz" as a dot string: a and z escaped, the separator line break written as dot's \n. */
static void dot_quoted(wf_buf *b, const char *a, const char *z)
{
    wf_buf_addc(b, '"');
    for (const char *parts[] = {a, z}, **p = parts; p < parts + 2; p++) {
        if (p > parts)
            wf_buf_adds(b, "\\n");
        for (const char *s = *p; s && *s; s++) {
            if (*s == '"' || *s == '\\')
                wf_buf_addc(b, '\\');
            wf_buf_addc(b, *s);
        }
    }
    wf_buf_addc(b, '"');
}

static const char *action_color(wfc_action a)
{
    static const char *const colors[] = {"#dafbe1", "#ddf4ff", "#fff1c2", "#eeeeee"};
    return colors[a];
}

/* One node per activity (legacy: its legacy type; modern: its modern type), edges to the
 * children, in the tree's order. *next numbers the nodes. */
static void dot_node(wfc__conv *c, const wfl_node *n, bool modern, size_t *next, wf_buf *b)
{
    size_t id = (*next)++;
    uintptr_t entry = (uintptr_t)wf_strmap_get(c->seen, wfl_node_name(n));
    const char *name, *mtype = "(not converted)";
    wfc_action action = WFC_ACT_DROPPED_DESIGNER;
    if (entry)
        wfc_file_activity(c->file, entry - 1, &name, &mtype, &action);
    wf_buf_addf(b, "  n%zu [label=", id);
    dot_quoted(b, wfl_node_name(n), modern ? mtype : wfl_node_type(n)->name);
    wf_buf_addf(b, ", fillcolor=\"%s\"];\n", action_color(action));
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        wf_buf_addf(b, "  n%zu -> n%zu;\n", id, *next);
        dot_node(c, wfl_node_child(n, i), modern, next, b);
    }
}

static void graphs(wfc__conv *c)
{
    wf_buf dot[2];
    for (int m = 0; m < 2; m++) {
        wf_buf_init(&dot[m]);
        wf_buf_adds(&dot[m], "digraph workflow {\n  node [shape=box, style=\"rounded,filled\", "
                             "fontname=\"sans-serif\", fontsize=10];\n");
        size_t next = 0;
        dot_node(c, c->root, m == 1, &next, &dot[m]);
        wf_buf_adds(&dot[m], "}\n");
        c->nomem |= dot[m].oom;
    }
    if (!c->nomem)
        wfc_file_set_graphs(c->file, dot[0].data, dot[1].data);
    wf_buf_fini(&dot[0]);
    wf_buf_fini(&dot[1]);
}

/* A DP written in the XOML that no emitter read would vanish: warn, and count it as lost.
 * Name, Description and Enabled are handled for every activity. */
static void check_ignored_props(wfc__conv *c, const wfl_node *n)
{
    if (wfl_node_is_disabled(n))
        return;
    char key[300];
    snprintf(key, sizeof key, "%s\x1f*", wfl_node_name(n));
    if (wf_strmap_get(c->consumed, key))
        return;
    const wfl_type *t = wfl_node_type(n);
    for (size_t i = WFL_DPI_ENABLED + 1; i < t->dp_count; i++) {
        wfl_prop_info pi;
        wfl_node_prop(n, t->dps[i], &pi);
        snprintf(key, sizeof key, "%s\x1f%s", wfl_node_name(n), t->dps[i]->name);
        if (pi.kind == WFL_PROP_UNSET || wf_strmap_get(c->consumed, key))
            continue;
        wfc__diag(c, WFC_WARNING, pi.loc.line ? pi.loc : wfl_node_loc(n), "property-ignored",
                  "%s.%s is not carried over to the modern workflow", wfl_node_name(n),
                  t->dps[i]->name);
        loss(c, WFC_LOSS_SEMANTICS, n, t->dps[i]->name);
    }
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        check_ignored_props(c, wfl_node_child(n, i));
}

static void run_pass(wfc__conv *c, int pass)
{
    c->pass = pass;
    c->hosted_count = 0;
    wf_buf_reset(&c->body);
    wfc_xw_init(W, &c->body, 1);
    emit(c, c->root);
    if (c->w.too_deep)
        wfc__diag(c, WFC_ERROR, wfl_node_loc(c->root), "nesting-limit",
                  "the workflow nests more than %d modern elements deep", WFC_XW_MAX_DEPTH);
    else if (!wfc_xw_ok(W))
        c->nomem = true;
}

/* Line `line` of text, trimmed and cut to fit, for a diagnostic. */
static const char *line_text(const char *text, size_t len, unsigned line, char *buf, size_t size)
{
    const char *p = text, *end = text + len;
    for (unsigned l = 1; l < line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    while (p < end && *p == ' ')
        p++;
    size_t n = (size_t)(end - p);
    const char *nl = memchr(p, '\n', n);
    n = nl ? (size_t)(nl - p) : n;
    snprintf(buf, size, "%.*s", (int)(n < size - 1 ? n : size - 1), p);
    return buf;
}

/* A declared function of tl whose C symbol is `symbol`, or NULL. */
static const wfl_tl_func *declared(const wfl_typelib *tl, const char *symbol)
{
    const wfl_tl_func *fn;
    for (size_t i = 0; i < wfl_typelib_activity_count(tl); i++)
        if ((fn = wfl_tl_activity_func(wfl_typelib_activity_at(tl, i))) &&
            wfl_tl_func_symbol(fn) && strcmp(wfl_tl_func_symbol(fn), symbol) == 0)
            return fn;
    for (size_t i = 0; i < wfl_typelib_class_count(tl); i++) {
        const wfl_tl_class *cls = wfl_typelib_class_at(tl, i);
        for (size_t k = 0; k < wfl_tl_class_func_count(cls); k++)
            if (strcmp(wfl_tl_func_symbol(fn = wfl_tl_class_func_at(cls, k)), symbol) == 0)
                return fn;
    }
    for (size_t i = 0; i < wfl_typelib_service_count(tl); i++) {
        const wfl_tl_service *svc = wfl_typelib_service_at(tl, i);
        for (size_t k = 0; k < wfl_tl_service_method_count(svc); k++)
            if (strcmp(wfl_tl_func_symbol(fn = wfl_tl_service_method_at(svc, k)), symbol) == 0)
                return fn;
    }
    return NULL;
}

static const char *type_name(const wf_type *t)
{
    return t ? t->name : "void";
}

/* Validate-only (wfm_load_opts.check_native): an InvokeMethod the converter wrote must call a
 * function some type library of the workflow declares, with the declared signature. */
static wf_status check_declared(void *ud, const char *library, const char *symbol,
                                const wf_native_sig *sig, wf_error *err)
{
    const wfc__conv *c = ud;
    char so[300];
    snprintf(so, sizeof so, "lib%s.so", library);
    for (size_t i = 0; i < wfl_definition_typelib_count(c->def); i++) {
        const wfl_typelib *tl = wfl_definition_typelib_at(c->def, i);
        const wfl_tl_func *fn = declared(tl, symbol);
        if (!fn || strcmp(wfl_typelib_library(tl), so) != 0)
            continue;
        const wfl_tl_prop *ret = wfl_tl_func_return(fn);
        const wf_type *want = wfl_tl_func_error_on_nonzero(fn)              ? &wf_type_int32
                              : wfl_tl_func_kind_of(fn) == WFL_TL_CONDITION ? &wf_type_bool
                              : ret                                         ? ret->type
                                                                            : NULL;
        if (strcmp(type_name(want), type_name(sig->ret)) != 0)
            return wf_error_set(err, WF_E_TYPE, NULL,
                                "InvokeMethod '%s': %s declares return type %s, the call uses %s",
                                symbol, wfl_typelib_file(tl), type_name(want),
                                type_name(sig->ret));
        if (wfl_tl_func_param_count(fn) != sig->param_count)
            return wf_error_set(err, WF_E_TYPE, NULL,
                                "InvokeMethod '%s': %s declares %zu parameters, the call passes "
                                "%zu",
                                symbol, wfl_typelib_file(tl), wfl_tl_func_param_count(fn),
                                sig->param_count);
        for (size_t k = 0; k < sig->param_count; k++) {
            const wfl_tl_prop *p = wfl_tl_func_param(fn, k);
            wf_native_dir dir = p->dir == WFL_TL_OUT     ? WF_NATIVE_OUT
                                : p->dir == WFL_TL_INOUT ? WF_NATIVE_INOUT
                                                         : WF_NATIVE_IN;
            if (dir != sig->params[k].dir ||
                strcmp(type_name(p->type), type_name(sig->params[k].type)) != 0)
                return wf_error_set(err, WF_E_TYPE, NULL,
                                    "InvokeMethod '%s': parameter %zu is declared %s %s in %s",
                                    symbol, k + 1,
                                    dir == WF_NATIVE_OUT     ? "Out"
                                    : dir == WF_NATIVE_INOUT ? "InOut"
                                                             : "In",
                                    type_name(p->type), wfl_typelib_file(tl));
        }
        return WF_OK;
    }
    return wf_error_set(err, WF_E_NOSYM, NULL,
                        "InvokeMethod '%s': no type library of the workflow declares it in %s",
                        symbol, so);
}

/* Write the generated files into the fresh directory tmp (a mkdtemp template) and make a
 * library path of tmp followed by the caller's directories. */
static wf_status side_libpath(wfc__conv *c, char *tmp, wf_libpath **lp, wf_error *err)
{
    if (!mkdtemp(tmp))
        return wf_error_set(err, WF_E_IO, NULL, "cannot create a directory for validation: %s",
                            strerror(errno));
    wf_buf dirs;
    wf_buf_init(&dirs);
    wf_buf_adds(&dirs, tmp);
    for (size_t i = 0; c->opts->libpath && i < wf_libpath_count(c->opts->libpath); i++)
        wf_buf_addf(&dirs, ":%s", wf_libpath_dir(c->opts->libpath, i));
    wf_status st = dirs.oom ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory") : WF_OK;
    for (size_t i = 0; st == WF_OK && i < c->side.count; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", tmp, c->side.items[i].name);
        st = wfc_write_atomic(path, c->side.items[i].text, c->side.items[i].len, err);
    }
    if (st == WF_OK)
        st = wf_libpath_create(dirs.data, lp, err);
    wf_buf_fini(&dirs);
    return st;
}

static void side_cleanup(wfc__conv *c, const char *tmp)
{
    for (size_t i = 0; i < c->side.count; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", tmp, c->side.items[i].name);
        unlink(path);
    }
    rmdir(tmp);
}

/* Load what was written with the modern loader; its errors become report diagnostics. */
static wf_status validate(wfc__conv *c, const char *name, const char *text, size_t len,
                          wf_error *err)
{
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    ro.libpath = c->opts->libpath;
    ro.check_native = check_declared; /* no shared object needs to be built */
    ro.check_ud = c;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wf_diags *diags = wf_diags_create();
    wf_error e = WF_ERROR_INIT;
    char tmp[] = "/tmp/wfc-side-XXXXXX";
    bool side = c->side.count > 0;
    wf_libpath *lp = NULL;
    wf_status st = diags ? WF_OK : WF_E_NOMEM;
    if (st == WF_OK && side) /* the generated files go on the library path, first */
        st = side_libpath(c, tmp, &lp, &e);
    if (lp)
        ro.libpath = lp;
    if (st == WF_OK)
        st = wfm_runtime_create(&ro, &rt, &e);
    if (st == WF_OK && c->opts->register_interop)
        st = c->opts->register_interop(wfm_runtime_catalogue(rt), &e);
    if (st == WF_OK)
        st = wfm_runtime_load_mem(rt, name, text, len, &def, diags, &e);
    if (st == WF_OK) {
        size_t unbound = 0;
        for (size_t i = 0; i < wf_diags_count(diags); i++)
            unbound += wf_diags_get(diags, i)->severity == WF_SEV_WARNING &&
                       strstr(wf_diags_get(diags, i)->error.message, "not bound (validate-only)");
        if (unbound)
            wfc_file_add_diag(c->file, WFC_INFO, 0, 0, "not-bound",
                              "%zu InvokeMethod call(s) checked against their type-library "
                              "declarations, not bound to a shared object: running needs the "
                              "native libraries built",
                              unbound);
    }
    if (st != WF_OK && st != WF_E_NOMEM) {
        wf_diags_sort(diags);
        for (size_t i = 0; i < wf_diags_count(diags); i++) {
            const wf_diag *d = wf_diags_get(diags, i);
            char excerpt[240];
            if (d->severity == WF_SEV_ERROR)
                wfc_file_add_diag(c->file, WFC_ERROR, d->error.line, d->error.col,
                                  "modern-validation", "converted XAML rejected: %s (in: %s)",
                                  d->error.message,
                                  line_text(text, len, d->error.line, excerpt, sizeof excerpt));
        }
        if (wf_diags_count(diags) == 0)
            wfc_file_add_diag(c->file, WFC_ERROR, e.line, e.col, "modern-validation",
                              "converted XAML rejected: %s", e.message);
        wf_loc at = wfl_node_loc(c->root);
        wf_error_set(err, st, &at,
                     "the converted workflow does not load in the modern runtime: "
                     "%s:%u:%u: %s",
                     name, e.line, e.col, e.message);
    } else if (st == WF_E_NOMEM) {
        wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wf_diags_destroy(diags);
    wf_libpath_destroy(lp);
    if (side)
        side_cleanup(c, tmp);
    return st;
}

static void default_output_name(const char *path, char *buf, size_t size)
{
    size_t len = strlen(path);
    if (len > 5 && strcmp(path + len - 5, ".xoml") == 0)
        len -= 5;
    snprintf(buf, size, "%.*s.xaml", (int)len, path);
}

static wf_status convert_loaded(wfc__conv *c, const char *path, char **xaml, size_t *len,
                                wf_error *err)
{
    char name[1024];
    if (c->opts->output_name)
        snprintf(name, sizeof name, "%s", c->opts->output_name);
    else
        default_output_name(path, name, sizeof name);
    c->path = path;
    c->out_name = name;
    run_pass(c, 1);
    wfc__settle_scopes(c);
    c->failed = false;
    wf_error_clear(&c->first);
    if (!(c->seen = wf_strmap_create(NULL)) || !(c->consumed = wf_strmap_create(NULL)))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    run_pass(c, 2);
    wfc__interop_check(c);
    check_all_reported(c, c->root);
    for (size_t i = 0; i < wfl_definition_param_count(c->def); i++) {
        wfl_param_info p; /* root values become argument defaults in document() */
        wfl_definition_param(c->def, i, &p);
        consumed(c, c->root, p.name);
    }
    check_ignored_props(c, c->root);
    graphs(c);
    if (c->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (c->failed) {
        wfc_file_set_status(c->file, WFC_FAILED);
        wf_error_set(err, c->first.code, &(wf_loc){path, c->first.line, c->first.col}, "%s",
                     c->first.message);
        return c->first.code;
    }
    wf_buf doc;
    wf_buf_init(&doc);
    document(c, path, &doc);
    wf_buf_add(&doc, c->body.data, c->body.len);
    wf_buf_adds(&doc, "</Activity>\n");
    if (doc.oom) {
        wf_buf_fini(&doc);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    if (c->hosted_count)
        wfc_file_set_status(c->file, WFC_PARTIAL);
    wf_status st = validate(c, name, doc.data, doc.len, err);
    if (st != WF_OK) {
        wfc_file_set_status(c->file, WFC_FAILED);
        wf_buf_fini(&doc);
        return st;
    }
    if (wfc_file_nomem(c->file)) {
        wf_buf_fini(&doc);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    *xaml = wf_buf_detach(&doc, len);
    return *xaml ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

wf_status wfc_convert_file(const wfc_opts *opts, const char *path, wfc_file *file, char **xaml,
                           size_t *len, wf_error *err)
{
    return wfc_convert_file_side(opts, path, file, xaml, len, NULL, err);
}

wf_status wfc_convert_file_side(const wfc_opts *opts, const char *path, wfc_file *file,
                                char **xaml, size_t *len, wfc_sidecars *side, wf_error *err)
{
    size_t targ_count;
    return wfc__convert_path(opts, path, 0, file, xaml, len, side, NULL, &targ_count, err);
}

/* The root arguments and the directions members() wrote. */
static void root_args(wfc__conv *c, wfc__targ *targs, size_t *count)
{
    *count = 0;
    for (size_t i = 0; i < wfl_definition_param_count(c->def) && *count < WFC__MAX_TARGS; i++) {
        wfl_param_info p;
        wfl_definition_param(c->def, i, &p);
        wfc__targ *t = &targs[(*count)++];
        snprintf(t->name, sizeof t->name, "%s", p.name);
        t->dir = arg_dir(arg_slot(c, p.name));
    }
}

wf_status wfc__convert_path(const wfc_opts *opts, const char *path, unsigned depth,
                            wfc_file *file, char **xaml, size_t *len, wfc_sidecars *side,
                            wfc__targ *targs, size_t *targ_count, wf_error *err)
{
    *xaml = NULL;
    *len = 0;
    *targ_count = 0;
    wfc__conv conv = {.opts = opts, .file = file, .depth = depth};
    wfc__conv *c = &conv;
    wf_buf_init(&c->body);
    wf_types *types = wf_types_create();
    wf_diags *diags = wf_diags_create();
    wfl_definition *def = NULL;
    wf_status st = WF_E_NOMEM;
    if (!types || !diags) {
        wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        goto fail;
    }
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = types;
    lo.libpath = opts->libpath;
    lo.rules_path = opts->rules_path;
    lo.diags = diags;
    lo.no_native = true; /* declarations are enough to convert */
    st = wfl_definition_load_file(&lo, path, &def, err);
    copy_legacy_diags(c, diags);
    if (st != WF_OK) {
        wfc_file_set_status(file, WFC_FAILED);
        goto fail;
    }
    c->def = def;
    c->root = wfl_definition_root(def);
    st = convert_loaded(c, path, xaml, len, err);
    if (st == WF_OK && targs)
        root_args(c, targs, targ_count);
    if (st == WF_OK && side) {
        *side = c->side;
        c->side = (wfc_sidecars)WFC_SIDECARS_INIT;
    }
fail:
    wfc_sidecars_free(&c->side);
    wfc__interop_fini(c);
    wf_free(c->slots);
    wf_free(c->uses);
    wf_strmap_destroy(c->seen);
    wf_strmap_destroy(c->consumed);
    wf_buf_fini(&c->body);
    wfl_definition_destroy(def);
    wf_diags_destroy(diags);
    wf_types_destroy(types);
    return st;
}

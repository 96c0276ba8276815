/* wfc_map_rules.c — the converter's rules for conditions: a .rules condition becomes the
 * modern expression text (legacy/wfl_rules_text.c) with the differences reported, a code
 * condition an InvokeMethod into a Boolean variable read by the condition. A Policy (rule
 * sets with forward chaining) is hosted through Interop. */
#include <stdio.h>
#include <string.h>

#include "../legacy/wfl_rules.h"
#include "wfc_convert_int.h"

#define W (&c->w)

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

/* Read the condition DP `dp_name` of n into a plan: rules text, or a code condition. */
void wfc__cond_plan_init(wfc__conv *c, const wfl_node *n, const char *dp_name, wfc__cond_plan *p)
{
    memset(p, 0, sizeof *p);
    wf_buf_init(&p->text);
    wfl_prop_info pi;
    wfc__prop(c, n, dp_name, &pi);
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
        wfc__gen_name(c, n, "Condition", p->var, sizeof p->var);
        wf_buf_adds(&p->text, p->var);
        if (!pi.fn || pi.bind || !wfc__class_typelib(c)) {
            wfc__diag(c, WFC_ERROR, pi.loc, "condition-no-native",
                      "code condition '%s' has no native function in a type library", pi.name);
            wfc__loss(c, WFC_LOSS_CODE, n, "condition without native code");
        }
    }
}

void wfc__cond_plan_fini(wfc__cond_plan *p)
{
    wf_buf_fini(&p->text);
}

/* Code conditions: open the Sequence that declares the result and computes it. */
void wfc__cond_open(wfc__conv *c, const wfl_node *n, const wfc__cond_plan *p)
{
    if (!p->is_code)
        return;
    wfc__open_named(c, "Sequence", n);
    wfc_xw_open(W, "Sequence.Variables");
    wfc_xw_open(W, "Variable");
    wfc_xw_attr(W, "x:TypeArguments", "x:Boolean");
    wfc_xw_attr(W, "Name", p->var);
    wfc_xw_close(W);
    wfc_xw_close(W);
    if (p->fn && wfc__class_typelib(c))
        wfc__invoke(c, n, wfl_tl_func_name(p->fn), p->fn, wfc__class_typelib(c), WFC__FROM_CLASS,
                    p->var);
}

void wfc__cond_attr(wfc__conv *c, const wfc__cond_plan *p)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addf(&b, "[%s]", p->text.data);
    wfc_xw_attr(W, "Condition", b.data);
    wf_buf_fini(&b);
}

/* Legacy kind -> emitter; the Policy activity has no modern equivalent. */
static const wfc__rule rules_rules[] = {
    {WFL_KIND_POLICY, NULL, NULL, WFC_ACT_INTEROP, "rule sets with forward chaining", 0},
};

const wfc__family wfc__map_rules = {"rules", rules_rules,
                                    sizeof rules_rules / sizeof rules_rules[0]};

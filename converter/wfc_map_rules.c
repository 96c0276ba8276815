/* wfc_map_rules.c — the converter's rules for conditions: a .rules condition becomes the
 * modern expression text (legacy/wfl_rules_text.c) with the differences reported, a code
 * condition an InvokeMethod into a Boolean variable read by the condition. A Policy (rule
 * sets with forward chaining) is hosted through Interop. */
#include <stdio.h>
#include <string.h>

#include "../legacy/wfl_rules.h"
#include "wfc_convert_int.h"

#define W (&c->w)

/* Whether e needs WF3Rule(...) to behave as in WF3: Int32/Int64 arithmetic (which wraps in WF3
 * rules and is checked in plain modern expressions), or a member, indexer or method applied to
 * a value that may be null or may fault (RuleEvaluationException, TargetInvocationException in
 * WF3). Members and methods of `this` and of a type cannot. */
static bool rexpr_needs_rule_mode(const wfl_rexpr *e)
{
    wfl_rexpr_kind k = wfl_rexpr_kind_of(e);
    if (k == WFL_REX_BINARY && wfl_rexpr_op(e) <= WFL_ROP_MULTIPLY)
        return true;
    if ((k == WFL_REX_MEMBER || k == WFL_REX_INVOKE || k == WFL_REX_INDEX) &&
        wfl_rexpr_child_count(e) > 0) {
        const wfl_rexpr *target = wfl_rexpr_child(e, 0);
        wfl_rexpr_kind t = wfl_rexpr_kind_of(target);
        if ((t != WFL_REX_THIS && t != WFL_REX_TYPEREF) || wfl_rexpr_lookup_missed(target))
            return true;
    }
    for (size_t i = 0; i < wfl_rexpr_child_count(e); i++)
        if (rexpr_needs_rule_mode(wfl_rexpr_child(e, i)))
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
        bool rule_mode = rexpr_needs_rule_mode(e);
        if (rule_mode)
            wf_buf_adds(&p->text, "WF3Rule(");
        wfl_rules_expr_text(e, &p->text);
        if (rule_mode)
            wf_buf_addc(&p->text, ')');
        if (rexpr_has_op(e, is_bitwise))
            wfc__diag(c, WFC_ERROR, pi.loc, "rules-bitwise-operator",
                      "condition '%s' uses a bitwise operator (BitwiseAnd/BitwiseOr), which the "
                      "modern expression language does not have",
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

/* wfl_rules_text.c — prints compiled rule expressions as modern expression text, the form
 * the converter writes into XAML: `this.` disappears, CodeDOM operators become C# operators,
 * the rules parser's encodings of `!x`, `a != b` and `-x` are undone, literals carry the
 * suffixes the modern expression language reads (5L, 12.5m), and x.Equals(y) becomes x == y
 * (x.ToString() stays a method call, so that a null x faults as in WF3). */
#include "wfl_rules_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_OR = 1, P_AND, P_BOR, P_BAND = 5, P_EQ, P_REL, P_ADD = 9, P_MUL, P_UNARY, P_PRIMARY };

static void print(const wfl_rexpr *e, wf_buf *out, int min_prec);

static int op_prec(wfl_rop op)
{
    switch (op) {
    case WFL_ROP_BOOLEAN_OR: return P_OR;
    case WFL_ROP_BOOLEAN_AND: return P_AND;
    case WFL_ROP_BITWISE_OR: return P_BOR;
    case WFL_ROP_BITWISE_AND: return P_BAND;
    case WFL_ROP_VALUE_EQUALITY: case WFL_ROP_IDENTITY_EQUALITY:
    case WFL_ROP_IDENTITY_INEQUALITY: return P_EQ;
    case WFL_ROP_LESS_THAN: case WFL_ROP_LESS_THAN_OR_EQUAL: case WFL_ROP_GREATER_THAN:
    case WFL_ROP_GREATER_THAN_OR_EQUAL: return P_REL;
    case WFL_ROP_ADD: case WFL_ROP_SUBTRACT: return P_ADD;
    default: return P_MUL;
    }
}

static const char *op_text(wfl_rop op)
{
    static const char *const text[] = {
        [WFL_ROP_ADD] = "+", [WFL_ROP_SUBTRACT] = "-", [WFL_ROP_MULTIPLY] = "*",
        [WFL_ROP_DIVIDE] = "/", [WFL_ROP_MODULUS] = "%", [WFL_ROP_ASSIGN] = "=",
        [WFL_ROP_IDENTITY_INEQUALITY] = "!=", [WFL_ROP_IDENTITY_EQUALITY] = "==",
        [WFL_ROP_VALUE_EQUALITY] = "==", [WFL_ROP_BITWISE_OR] = "|",
        [WFL_ROP_BITWISE_AND] = "&", [WFL_ROP_BOOLEAN_OR] = "||",
        [WFL_ROP_BOOLEAN_AND] = "&&", [WFL_ROP_LESS_THAN] = "<",
        [WFL_ROP_LESS_THAN_OR_EQUAL] = "<=", [WFL_ROP_GREATER_THAN] = ">",
        [WFL_ROP_GREATER_THAN_OR_EQUAL] = ">=",
    };
    return text[op];
}

static const char *short_type(const char *name)
{
    return strncmp(name, "System.", 7) == 0 ? name + 7 : name;
}

/* C# keyword for a built-in type, else its name. */
static const char *type_text(const wf_type *t, const char *fallback)
{
    if (!t)
        return short_type(fallback);
    switch (t->kind) {
    case WF_K_BOOL: return "bool";
    case WF_K_INT32: return "int";
    case WF_K_INT64: return "long";
    case WF_K_DOUBLE: return "double";
    case WF_K_DECIMAL: return "decimal";
    case WF_K_STRING: return "string";
    default: return t->name;
    }
}

static void print_string(const char *s, wf_buf *out)
{
    wf_buf_addc(out, '"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        switch (ch) {
        case '"': wf_buf_adds(out, "\\\""); break;
        case '\\': wf_buf_adds(out, "\\\\"); break;
        case '\n': wf_buf_adds(out, "\\n"); break;
        case '\r': wf_buf_adds(out, "\\r"); break;
        case '\t': wf_buf_adds(out, "\\t"); break;
        default:
            if (ch < 0x20)
                wf_buf_addf(out, "\\u%04x", ch);
            else
                wf_buf_addc(out, (char)ch);
        }
    }
    wf_buf_addc(out, '"');
}

static void print_double(double d, wf_buf *out)
{
    char buf[64];
    if (isnan(d) || isinf(d)) {
        wf_buf_adds(out, isnan(d) ? "double.NaN" : d > 0 ? "double.PositiveInfinity"
                                                           : "double.NegativeInfinity");
        return;
    }
    snprintf(buf, sizeof buf, "%.15g", d);
    if (strtod(buf, NULL) != d)
        snprintf(buf, sizeof buf, "%.17g", d);
    wf_buf_adds(out, buf);
    if (!strpbrk(buf, ".eE"))
        wf_buf_adds(out, ".0");
}

static void print_primitive(const wf_value *v, wf_buf *out)
{
    char buf[64];
    switch (v->type->kind) {
    case WF_K_NULL: wf_buf_adds(out, "null"); break;
    case WF_K_BOOL: wf_buf_adds(out, v->u.b ? "true" : "false"); break;
    case WF_K_INT32: wf_buf_addf(out, "%d", (int)v->u.i32); break;
    case WF_K_INT64: wf_buf_addf(out, "%lldL", (long long)v->u.i64); break;
    case WF_K_DOUBLE: print_double(v->u.d, out); break;
    case WF_K_DECIMAL: {
        wf_decimal_format(v->u.dec, buf, sizeof buf); /* with its scale, as ToString() */
        wf_buf_adds(out, buf);
        wf_buf_addc(out, 'm');
        break;
    }
    case WF_K_STRING: print_string(wf_value_str(v), out); break;
    case WF_K_DATETIME:
    case WF_K_TIMESPAN: {
        wf_buf text;
        wf_buf_init(&text);
        wf_value_to_text(v, &text);
        wf_buf_adds(out, v->type->kind == WF_K_DATETIME ? "DateTime.Parse(" : "TimeSpan.Parse(");
        print_string(text.data, out);
        wf_buf_addc(out, ')');
        out->oom |= text.oom;
        wf_buf_fini(&text);
        break;
    }
    default: wf_buf_adds(out, "null"); break;
    }
}

static void print_args(const wfl_rexpr *e, size_t first, wf_buf *out)
{
    for (size_t i = first; i < e->kid_count; i++) {
        if (i > first)
            wf_buf_adds(out, ", ");
        print(e->kids[i], out, 0);
    }
}

/* Where a member or call hangs: nothing for `this`, "Type." for statics, "target." else. */
/* A lookup that found nothing is a null target: the member read from it faults (inside
 * WF3Rule, as RuleEvaluationException). */
static void print_target(const wfl_rexpr *t, wf_buf *out)
{
    if (t->kind == WFL_REX_THIS && t->lookup_missed) {
        wf_buf_adds(out, "((object)null).");
        return;
    }
    if (t->kind == WFL_REX_THIS)
        return;
    if (t->kind == WFL_REX_TYPEREF)
        wf_buf_adds(out, short_type(t->name));
    else
        print(t, out, P_PRIMARY);
    wf_buf_addc(out, '.');
}

/* A member of a type wfbridge does not model (an enum such as Workflow1+Level.Gold): the
 * evaluator treats it as the member's name, so the text is that string. */
static bool is_enum_member(const wfl_rexpr *e)
{
    const wfl_rexpr *t = e->kids[0];
    return t->kind == WFL_REX_TYPEREF && !t->type && strcmp(short_type(t->name), "Math") != 0;
}

static bool is_false(const wfl_rexpr *e)
{
    return e->kind == WFL_REX_PRIMITIVE && e->value.type->kind == WF_K_BOOL && !e->value.u.b;
}

static bool is_zero(const wfl_rexpr *e)
{
    return e->kind == WFL_REX_PRIMITIVE && e->value.type->kind == WF_K_INT32 &&
           e->value.u.i32 == 0;
}

static void open_paren(bool wrap, wf_buf *out)
{
    if (wrap)
        wf_buf_addc(out, '(');
}

static void close_paren(bool wrap, wf_buf *out)
{
    if (wrap)
        wf_buf_addc(out, ')');
}

static void print_binary(const wfl_rexpr *e, wf_buf *out, int min_prec)
{
    const wfl_rexpr *l = e->kids[0], *r = e->kids[1];
    if (e->op == WFL_ROP_VALUE_EQUALITY && is_false(r)) {
        if (l->kind == WFL_REX_BINARY && l->op == WFL_ROP_VALUE_EQUALITY) {
            bool wrap = P_EQ < min_prec; /* (a == b) == false  ->  a != b */
            open_paren(wrap, out);
            print(l->kids[0], out, P_EQ);
            wf_buf_adds(out, " != ");
            print(l->kids[1], out, P_EQ + 1);
            close_paren(wrap, out);
            return;
        }
        wf_buf_adds(out, "!("); /* x == false  ->  !(x) */
        print(l, out, 0);
        wf_buf_addc(out, ')');
        return;
    }
    if (e->op == WFL_ROP_SUBTRACT && is_zero(l)) { /* 0 - x  ->  -x */
        bool wrap = P_UNARY < min_prec;
        open_paren(wrap, out);
        wf_buf_addc(out, '-');
        print(r, out, P_UNARY);
        close_paren(wrap, out);
        return;
    }
    int prec = op_prec(e->op);
    bool wrap = prec < min_prec;
    open_paren(wrap, out);
    print(l, out, prec);
    wf_buf_addf(out, " %s ", op_text(e->op));
    print(r, out, prec + 1);
    close_paren(wrap, out);
}

/* A value method the modern language spells differently: x.Equals(y) is x == y. */
static bool print_value_call(const wfl_rexpr *e, wf_buf *out, int min_prec)
{
    wfl_rexpr_kind on = e->kids[0]->kind;
    if (on == WFL_REX_THIS || on == WFL_REX_TYPEREF)
        return false;
    if (strcmp(e->name, "Equals") == 0 && e->kid_count == 2) {
        bool wrap = P_EQ < min_prec;
        open_paren(wrap, out);
        print(e->kids[0], out, P_EQ);
        wf_buf_adds(out, " == ");
        print(e->kids[1], out, P_EQ + 1);
        close_paren(wrap, out);
        return true;
    }
    return false;
}

static void print(const wfl_rexpr *e, wf_buf *out, int min_prec)
{
    if (!e) {
        wf_buf_adds(out, "null");
        return;
    }
    switch (e->kind) {
    case WFL_REX_THIS: wf_buf_adds(out, "this"); break;
    case WFL_REX_PRIMITIVE: print_primitive(&e->value, out); break;
    case WFL_REX_TYPEREF: wf_buf_adds(out, short_type(e->name)); break;
    case WFL_REX_BINARY: print_binary(e, out, min_prec); break;
    case WFL_REX_MEMBER:
        if (is_enum_member(e)) {
            print_string(e->name, out);
            break;
        }
        print_target(e->kids[0], out);
        wf_buf_adds(out, e->name);
        break;
    case WFL_REX_INVOKE:
        if (print_value_call(e, out, min_prec))
            break;
        print_target(e->kids[0], out);
        wf_buf_adds(out, e->name);
        wf_buf_addc(out, '(');
        print_args(e, 1, out);
        wf_buf_addc(out, ')');
        break;
    case WFL_REX_INDEX:
        print(e->kids[0], out, P_PRIMARY);
        wf_buf_addc(out, '[');
        print_args(e, 1, out);
        wf_buf_addc(out, ']');
        break;
    case WFL_REX_CAST: {
        bool wrap = P_UNARY < min_prec;
        open_paren(wrap, out);
        wf_buf_addf(out, "(%s)", type_text(e->type, e->name));
        print(e->kids[0], out, P_UNARY);
        close_paren(wrap, out);
        break;
    }
    case WFL_REX_NEW:
        wf_buf_addf(out, "new %s(", e->type ? e->type->name : short_type(e->name));
        print_args(e, 0, out);
        wf_buf_addc(out, ')');
        break;
    }
}

bool wfl_rules_expr_text(const wfl_rexpr *e, wf_buf *out)
{
    print(e, out, 0);
    return !out->oom;
}

bool wfl_rules_action_text(const wfl_rule_action *a, wf_buf *out)
{
    switch (a->kind) {
    case WFL_ACTION_ASSIGN:
        print(a->target, out, 0);
        wf_buf_adds(out, " = ");
        print(a->value, out, 0);
        break;
    case WFL_ACTION_EXPR:
        print(a->value, out, 0);
        break;
    case WFL_ACTION_HALT:
        wf_buf_adds(out, "Halt()");
        break;
    case WFL_ACTION_UPDATE:
        wf_buf_adds(out, "Update(");
        print_string(a->path ? a->path : "", out);
        wf_buf_addc(out, ')');
        break;
    }
    return !out->oom;
}

bool wfl_rules_literal_text(const wf_value *v, wf_buf *out)
{
    print_primitive(v, out);
    return !out->oom;
}

/* wfm_expr_parse.c — the expression parser and type checker: recursive descent with C#
 * precedence (plus VB's spellings), names resolved to slots, conversions made explicit as
 * nodes, constants folded as each node is built. Every error names the offending token and
 * points at it (line and column within the expression's source). */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "wfm_expr_int.h"

/* ---- errors --------------------------------------------------------------------------- */
xnode *wfm_expr__fail(xparser *p, uint32_t off, wf_status code, const char *fmt, ...)
{
    if (p->status == WF_OK) {
        p->status = code;
        wf_loc loc = wfm_expr__loc(p->at, p->text, off);
        va_list ap;
        va_start(ap, fmt);
        wf_error_setv(p->err, code, &loc, fmt, ap);
        va_end(ap);
    }
    return NULL;
}

xnode *wfm_expr__nomem(xparser *p)
{
    return wfm_expr__fail(p, 0, WF_E_NOMEM, "out of memory compiling expression");
}

static int shown_len(const xtok *t)
{
    return (int)(t->len > 40 ? 40 : t->len);
}

static xnode *unexpected(xparser *p)
{
    const xtok *t = &p->cur;
    if (t->kind == TK_ERR && strcmp(t->emsg, "unexpected character") == 0)
        return wfm_expr__fail(p, t->eoff, t->ecode, "unexpected character '%.*s'", shown_len(t),
                              p->text + t->off);
    if (t->kind == TK_ERR)
        return wfm_expr__fail(p, t->eoff, t->ecode, "%s", t->emsg);
    if (t->kind == TK_EOF)
        return wfm_expr__fail(p, t->off, WF_E_SYNTAX, "%s",
                              p->bracketed ? "unexpected ']'" : "unexpected end of expression");
    return wfm_expr__fail(p, t->off, WF_E_SYNTAX, "unexpected '%.*s'", shown_len(t),
                          p->text + t->off);
}

/* ---- tokens --------------------------------------------------------------------------- */
static void advance(xparser *p)
{
    p->cur = wfm_expr__lex(p->text, p->cur.off + p->cur.len, p->end);
}

static xtok peek_after(const xparser *p, const xtok *t)
{
    return wfm_expr__lex(p->text, t->off + t->len, p->end);
}

static bool tok_punct(const xtok *t, int c)
{
    return t->kind == TK_PUNCT && t->punct == c;
}

static bool is_p(const xparser *p, int c)
{
    return tok_punct(&p->cur, c);
}

static bool is_kw(const xparser *p, const char *word)
{
    return wfm_expr__tok_is(p, &p->cur, word);
}

static bool expect(xparser *p, int c)
{
    if (!is_p(p, c)) {
        unexpected(p);
        return false;
    }
    advance(p);
    return true;
}

/* ---- nodes ---------------------------------------------------------------------------- */
xnode *wfm_expr__mk(xparser *p, int op, const wf_type *type, uint32_t off, xnode *a, xnode *b,
                    xnode *c)
{
    bool leaf = op == XOP_CONST || op == XOP_SLOT;
    assert(!leaf || (!a && !b && !c));
    size_t size = op == XOP_CONST  ? XNODE_CONST_SIZE
                  : op == XOP_SLOT ? XNODE_SLOT_SIZE
                                   : sizeof(xnode);
    xnode *n = wf_arena_alloc(p->arena, size);
    if (!n)
        return wfm_expr__nomem(p);
    n->op = (uint8_t)op;
    n->type = type;
    n->off = a ? a->off : off;
    if (!leaf) {
        n->a = a;
        n->b = b;
        n->c = c;
    }
    unsigned depth = 0;
    bool pure = true;
    xnode *kids[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        if (!kids[i])
            continue;
        if (kids[i]->depth > depth)
            depth = kids[i]->depth;
        pure = pure && (kids[i]->flags & XN_PURE);
    }
    if (depth + 1 > WFM_EXPR_MAX_DEPTH)
        return wfm_expr__fail(p, off, WF_E_LIMIT, "expression is too complex (deeper than %d)",
                              WFM_EXPR_MAX_DEPTH);
    n->depth = (uint16_t)(depth + 1);
    n->flags = (uint8_t)((pure ? XN_PURE : 0) | (p->rules ? XN_RULE : 0));
    return n;
}

/* Attach call arguments (copied into the arena) and account for their depth and purity. */
xnode *wfm_expr__set_args(xparser *p, xnode *n, xnode **args, unsigned nargs)
{
    if (!n)
        return NULL;
    if (nargs) {
        n->args = wf_arena_alloc(p->arena, nargs * sizeof *n->args);
        if (!n->args)
            return wfm_expr__nomem(p);
        memcpy(n->args, args, nargs * sizeof *n->args);
    }
    n->nargs = (uint8_t)nargs;
    for (unsigned i = 0; i < nargs; i++) {
        if (args[i]->depth + 1u > WFM_EXPR_MAX_DEPTH)
            return wfm_expr__fail(p, n->off, WF_E_LIMIT, "expression is too complex");
        if (args[i]->depth >= n->depth)
            n->depth = (uint16_t)(args[i]->depth + 1);
        if (!(args[i]->flags & XN_PURE))
            n->flags &= (uint8_t)~XN_PURE;
    }
    return n;
}

static xnode *mk_const(xparser *p, wf_value v, uint32_t off)
{
    xnode *n = wfm_expr__mk(p, XOP_CONST, v.type, off, NULL, NULL, NULL);
    if (n)
        n->k = v;
    return n;
}

static bool children_constant(const xnode *n)
{
    const xnode *kids[3] = {n->a, n->b, n->c};
    for (int i = 0; i < 3; i++)
        if (kids[i] && kids[i]->op != XOP_CONST)
            return false;
    for (unsigned i = 0; i < n->nargs; i++)
        if (n->args[i]->op != XOP_CONST)
            return false;
    return true;
}

/* Replace a pure node over constants by its value, when the value is a scalar or a string
 * (made immortal in the arena). A node that faults (1 / 0) stays, to fault at run time. */
xnode *wfm_expr__fold(xparser *p, xnode *n)
{
    if (!n || n->op == XOP_CONST || !(n->flags & XN_PURE) || n->op == XOP_NEW_EXC ||
        n->op == XOP_NEW_LIST || n->op == XOP_NEW_REC ||
        (n->op == XOP_CALL && n->sub == XF_RANDOM) || !children_constant(n))
        return n;
    wf_value v, exc;
    wf_status st = wfm_expr__eval(n, NULL, &v, &exc);
    if (st == WF_E_FAULT) {
        wf_value_release(&exc);
        return n;
    }
    if (st != WF_OK)
        return wfm_expr__nomem(p);
    wf_kind k = v.type->kind;
    if (k == WF_K_LIST || k == WF_K_RECORD || k == WF_K_EXCEPTION) {
        wf_value_release(&v);
        return n;
    }
    if (k == WF_K_STRING && wf_value_str_len(&v) > WFM_EXPR_FOLD_MAX) {
        wf_value_release(&v); /* folding long chains would copy quadratically */
        return n;
    }
    if (k == WF_K_STRING) {
        wf_value sv;
        st = wf_value_string_static(p->arena, wf_value_str(&v), wf_value_str_len(&v), &sv);
        wf_value_release(&v);
        if (st != WF_OK)
            return wfm_expr__nomem(p);
        v = sv;
    }
    n->op = XOP_CONST; /* in place: the node has the operator members' room */
    n->nargs = 0;
    n->k = v;
    n->depth = 1;
    return n;
}

/* ---- types ---------------------------------------------------------------------------- */
bool wfm_expr__is_num(const wf_type *t)
{
    wf_kind k = t->kind;
    return k == WF_K_INT32 || k == WF_K_INT64 || k == WF_K_DOUBLE || k == WF_K_DECIMAL;
}

/* Reference types: Nothing converts to them and compares with them (WF4's CompensationToken
 * is a class, so `token IsNot Nothing` holds once a CompensableActivity set it). */
static bool is_ref(const wf_type *t)
{
    wf_kind k = t->kind;
    return k == WF_K_STRING || k == WF_K_LIST || k == WF_K_RECORD || k == WF_K_EXCEPTION ||
           k == WF_K_OBJECT || k == WF_K_NULL || k == WF_K_TOKEN;
}

static int rank(wf_kind k)
{
    return k == WF_K_INT32 ? 1 : k == WF_K_INT64 ? 2 : k == WF_K_DECIMAL ? 3 : 4;
}

/* Numeric promotion; NULL for Decimal with Double (as C#). */
const wf_type *wfm_expr__promote(const wf_type *a, const wf_type *b)
{
    wf_kind ka = a->kind, kb = b->kind;
    if ((ka == WF_K_DECIMAL && kb == WF_K_DOUBLE) || (ka == WF_K_DOUBLE && kb == WF_K_DECIMAL))
        return NULL;
    return rank(ka) >= rank(kb) ? a : b;
}

static bool same_type(const wf_type *a, const wf_type *b)
{
    if (a == b)
        return true;
    return a->kind == b->kind && a->kind != WF_K_LIST && a->kind != WF_K_EXCEPTION;
}

/* Wrap n in a conversion to `to` unless its values already fit. */
xnode *wfm_expr__coerce(xparser *p, xnode *n, const wf_type *to)
{
    if (!n)
        return NULL;
    if (same_type(n->type, to) || to->kind == WF_K_OBJECT || n->type->kind == WF_K_NULL)
        return n;
    if (n->type->kind == WF_K_EXCEPTION && to->kind == WF_K_EXCEPTION && wf_type_is_a(n->type, to))
        return n;
    xnode *c = wfm_expr__mk(p, XOP_CONV, to, n->off, n, NULL, NULL);
    if (c)
        c->sub = XV_IMPLICIT;
    return wfm_expr__fold(p, c);
}

/* VB's Nothing converted to a value type is that type's default (Dim i As Integer = Nothing
 * gives 0); C#'s null stays an error there. */
static bool nothing_to_default(xnode *n, const wf_type *to)
{
    if (n->op != XOP_CONST || !(n->flags & XN_NOTHING) || is_ref(to) || to->kind == WF_K_TOKEN)
        return false;
    n->type = to;
    n->k = wf_type_default(to);
    n->flags &= (uint8_t)~XN_NOTHING;
    return true;
}

/* Implicit conversion for an argument or the expected result; Object is checked at run time. */
xnode *wfm_expr__coerce_to(xparser *p, xnode *n, const wf_type *to, const char *what)
{
    if (!n)
        return NULL;
    if (nothing_to_default(n, to))
        return n;
    if (to->kind == WF_K_OBJECT || n->type->kind == WF_K_OBJECT ||
        wf_type_assignable(to, n->type) || same_type(n->type, to))
        return wfm_expr__coerce(p, n, to);
    if (n->type->kind == WF_K_NULL && is_ref(to))
        return n;
    if (n->op == XOP_NEW_LIST && (n->flags & XN_LITERAL) && to->kind == WF_K_LIST) {
        /* {} or {"a", Nothing} where a List(T) is expected: the items convert to T */
        for (int64_t i = 0; i < n->param; i++)
            if (!(n->args[i] = wfm_expr__coerce_to(p, n->args[i], to->elem, "array item: ")))
                return NULL;
        n->type = to;
        return n;
    }
    return wfm_expr__fail(p, n->off, WF_E_TYPE, "%scannot convert %s to %s", what, n->type->name,
                          to->name);
}

static bool convertible(const wf_type *from, const wf_type *to, int mode)
{
    wf_kind f = from->kind, t = to->kind;
    if (f == WF_K_OBJECT || f == WF_K_NULL || t == WF_K_OBJECT || same_type(from, to))
        return true;
    if (wfm_expr__is_num(from) && wfm_expr__is_num(to))
        return true;
    if (mode == XV_TEXT || (mode == XV_CONVERT && t == WF_K_STRING))
        return true;
    if (mode == XV_CONVERT && f == WF_K_STRING &&
        (wfm_expr__is_num(to) || t == WF_K_BOOL || t == WF_K_DATETIME || t == WF_K_TIMESPAN))
        return true;
    if (mode == XV_CONVERT &&
        ((f == WF_K_BOOL && wfm_expr__is_num(to)) || (wfm_expr__is_num(from) && t == WF_K_BOOL)))
        return true;
    if (f == WF_K_EXCEPTION && t == WF_K_EXCEPTION)
        return wf_type_is_a(from, to) || wf_type_is_a(to, from);
    return wf_type_assignable(to, from);
}

/* An explicit conversion: cast, Convert.ToX, CInt, str(). */
xnode *wfm_expr__convert(xparser *p, xnode *n, const wf_type *to, int mode, uint32_t off)
{
    if (!n)
        return NULL;
    if (nothing_to_default(n, to)) /* CType(Nothing, Integer), CInt(Nothing) */
        return n;
    if (!convertible(n->type, to, mode))
        return wfm_expr__fail(p, off, WF_E_TYPE, "cannot convert %s to %s", n->type->name,
                              to->name);
    if (n->type == to && to->kind != WF_K_OBJECT)
        return n;
    xnode *c = wfm_expr__mk(p, XOP_CONV, to, off, n, NULL, NULL);
    if (c) {
        c->sub = (uint8_t)mode;
        c->off = off;
    }
    return wfm_expr__fold(p, c);
}

static xnode *need_bool(xparser *p, xnode *n, const char *what)
{
    if (!n)
        return NULL;
    if (n->type->kind == WF_K_BOOL)
        return n;
    if (n->type->kind == WF_K_OBJECT)
        return wfm_expr__coerce(p, n, &wf_type_bool);
    return wfm_expr__fail(p, n->off, WF_E_TYPE, "%s must be Boolean, not %s", what, n->type->name);
}

/* Type names: C# keywords and the CLR names common/wf_value.h knows, with or without a prefix
 * ("x:Int32", "System.String"), the VB keywords below, and exception types from the scope's
 * table. */
static const struct {
    const char *name;
    const wf_type *type;
} type_aliases[] = {
    {"Integer", &wf_type_int32}, {"Long", &wf_type_int64}, {"Date", &wf_type_datetime},
};

const wf_type *wfm_expr__find_type(const xparser *p, const char *name, size_t len)
{
    if (len > 2 && name[len - 1] == ']' && name[len - 2] == '[') { /* "String[]": a List */
        const wf_type *elem = wfm_expr__find_type(p, name, len - 2);
        return elem && p->scope->types ? wf_types_list(p->scope->types, elem) : NULL;
    }
    for (size_t i = len; i > 0; i--)
        if (name[i - 1] == ':' || name[i - 1] == '.') {
            name += i;
            len -= i;
            break;
        }
    char buf[128];
    if (len == 0 || len >= sizeof buf)
        return NULL;
    memcpy(buf, name, len);
    buf[len] = '\0';
    for (size_t i = 0; i < sizeof type_aliases / sizeof type_aliases[0]; i++)
        if (strcmp(type_aliases[i].name, buf) == 0)
            return type_aliases[i].type;
    return wf_types_find(p->scope->types, buf);
}

/* ---- operators ------------------------------------------------------------------------ */
static xnode *op_error(xparser *p, uint32_t off, const char *op, const xnode *a, const xnode *b)
{
    if (b)
        return wfm_expr__fail(p, off, WF_E_TYPE, "operator '%s' cannot be applied to %s and %s", op,
                              a->type->name, b->type->name);
    return wfm_expr__fail(p, off, WF_E_TYPE, "operator '%s' cannot be applied to %s", op,
                          a->type->name);
}

static xnode *mk_bin(xparser *p, int op, int sub, const wf_type *t, uint32_t off, xnode *a,
                     xnode *b)
{
    if (!a || !b)
        return NULL;
    xnode *n = wfm_expr__mk(p, op, t, off, a, b, NULL);
    if (n)
        n->sub = (uint8_t)sub;
    return wfm_expr__fold(p, n);
}

static xnode *make_concat(xparser *p, xnode *a, xnode *b, uint32_t off)
{
    return mk_bin(p, XOP_CONCAT, 0, &wf_type_string, off, a, b);
}

static bool dyn_operand(const wf_type *t)
{
    wf_kind k = t->kind;
    return wfm_expr__is_num(t) || k == WF_K_OBJECT || k == WF_K_STRING || k == WF_K_DATETIME ||
           k == WF_K_TIMESPAN;
}

static xnode *make_arith(xparser *p, int sub, const char *opname, xnode *a, xnode *b, uint32_t off)
{
    if (!a || !b)
        return NULL;
    wf_kind ka = a->type->kind, kb = b->type->kind;
    if (sub == XA_ADD && (ka == WF_K_STRING || kb == WF_K_STRING))
        return make_concat(p, a, b, off);
    if ((ka == WF_K_OBJECT && dyn_operand(b->type)) || (kb == WF_K_OBJECT && dyn_operand(a->type)))
        return mk_bin(p, XOP_ARITH, sub, &wf_type_object, off, a, b);
    if (wfm_expr__is_num(a->type) && wfm_expr__is_num(b->type)) {
        const wf_type *t = wfm_expr__promote(a->type, b->type);
        if (!t)
            return op_error(p, off, opname, a, b);
        return mk_bin(p, XOP_ARITH, sub, t, off, wfm_expr__coerce(p, a, t),
                      wfm_expr__coerce(p, b, t));
    }
    const wf_type *t = NULL;
    if (ka == WF_K_DATETIME && kb == WF_K_DATETIME && sub == XA_SUB)
        t = &wf_type_timespan;
    else if (ka == WF_K_DATETIME && kb == WF_K_TIMESPAN && (sub == XA_ADD || sub == XA_SUB))
        t = &wf_type_datetime;
    else if (ka == WF_K_TIMESPAN && kb == WF_K_TIMESPAN && (sub == XA_ADD || sub == XA_SUB))
        t = &wf_type_timespan;
    if (!t)
        return op_error(p, off, opname, a, b);
    return mk_bin(p, XOP_ARITH, sub, t, off, a, b);
}

static xnode *make_compare(xparser *p, int sub, const char *opname, xnode *a, xnode *b,
                           uint32_t off)
{
    if (!a || !b)
        return NULL;
    wf_kind ka = a->type->kind, kb = b->type->kind;
    bool eq = sub == XC_EQ || sub == XC_NE;
    if (wfm_expr__is_num(a->type) && wfm_expr__is_num(b->type)) {
        const wf_type *t = wfm_expr__promote(a->type, b->type);
        if (!t)
            return op_error(p, off, opname, a, b);
        return mk_bin(p, XOP_CMP, sub, &wf_type_bool, off, wfm_expr__coerce(p, a, t),
                      wfm_expr__coerce(p, b, t));
    }
    bool ok;
    if (eq)
        ok = (ka == kb && ka != WF_K_NULL) || ka == WF_K_OBJECT || kb == WF_K_OBJECT ||
             (ka == WF_K_NULL && is_ref(b->type)) || (kb == WF_K_NULL && is_ref(a->type));
    else
        ok = (ka == kb && (ka == WF_K_DATETIME || ka == WF_K_TIMESPAN)) ||
             (ka == WF_K_OBJECT && dyn_operand(b->type)) ||
             (kb == WF_K_OBJECT && dyn_operand(a->type));
    if (!ok)
        return op_error(p, off, opname, a, b);
    return mk_bin(p, XOP_CMP, sub, &wf_type_bool, off, a, b);
}

static xnode *make_logic(xparser *p, int op, const char *opname, xnode *a, xnode *b, uint32_t off)
{
    if (!a || !b)
        return NULL;
    bool ok_a = a->type->kind == WF_K_BOOL || a->type->kind == WF_K_OBJECT;
    bool ok_b = b->type->kind == WF_K_BOOL || b->type->kind == WF_K_OBJECT;
    if (!ok_a || !ok_b)
        return op_error(p, off, opname, a, b);
    return mk_bin(p, op, 0, &wf_type_bool, off, wfm_expr__coerce(p, a, &wf_type_bool),
                  wfm_expr__coerce(p, b, &wf_type_bool));
}

/* The type both branches of ?: / If() convert to. */
static const wf_type *branch_type(const wf_type *x, const wf_type *y)
{
    if (same_type(x, y))
        return x;
    if (wfm_expr__is_num(x) && wfm_expr__is_num(y))
        return wfm_expr__promote(x, y);
    if (x->kind == WF_K_NULL && is_ref(y))
        return y;
    if (y->kind == WF_K_NULL && is_ref(x))
        return x;
    if (wf_type_assignable(x, y))
        return x;
    if (wf_type_assignable(y, x))
        return y;
    return NULL;
}

xnode *wfm_expr__make_cond(xparser *p, xnode *c, xnode *a, xnode *b, uint32_t off)
{
    c = need_bool(p, c, "condition");
    if (!c || !a || !b)
        return NULL;
    const wf_type *t = branch_type(a->type, b->type);
    if (!t)
        return wfm_expr__fail(p, off, WF_E_TYPE,
                              "no conversion between %s and %s in conditional expression",
                              a->type->name, b->type->name);
    a = wfm_expr__coerce(p, a, t);
    b = wfm_expr__coerce(p, b, t);
    if (!a || !b)
        return NULL;
    if (c->op == XOP_CONST && a->type == t && b->type == t)
        return c->k.u.b ? a : b;
    return wfm_expr__mk(p, XOP_COND, t, off, c, a, b);
}

/* a ?? b (and VB's If(a, b)): both sides convert to one reference type. */
xnode *wfm_expr__make_coalesce(xparser *p, xnode *a, xnode *b, uint32_t off)
{
    if (!a || !b)
        return NULL;
    if (!is_ref(a->type))
        return op_error(p, off, "??", a, b);
    const wf_type *t = branch_type(a->type, b->type);
    if (!t)
        return op_error(p, off, "??", a, b);
    a = wfm_expr__coerce(p, a, t);
    b = wfm_expr__coerce(p, b, t);
    if (!a || !b)
        return NULL;
    if (a->op == XOP_CONST)
        return wf_is_null(&a->k) ? b : a;
    return wfm_expr__mk(p, XOP_COALESCE, t, off, a, b, NULL);
}

/* ---- grammar -------------------------------------------------------------------------- */
static xnode *parse_unary(xparser *p);
static xnode *make_neg(xparser *p, xnode *a, uint32_t off);

/* a ?? b ?? c groups to the right, between ?: and ||. */
static xnode *parse_coalesce(xparser *p)
{
    xnode *a = wfm_expr__parse_or(p);
    if (!a || !is_p(p, P_COALESCE))
        return a;
    uint32_t off = p->cur.off;
    advance(p);
    if (++p->nest > WFM_EXPR_MAX_NEST) {
        p->nest--;
        return wfm_expr__fail(p, off, WF_E_LIMIT, "expression is nested too deeply");
    }
    xnode *b = parse_coalesce(p);
    p->nest--;
    return wfm_expr__make_coalesce(p, a, b, off);
}

xnode *wfm_expr__parse_expr(xparser *p)
{
    if (++p->nest > WFM_EXPR_MAX_NEST) {
        p->nest--;
        return wfm_expr__fail(p, p->cur.off, WF_E_LIMIT,
                              "expression is nested too deeply (more than %d levels)",
                              WFM_EXPR_MAX_NEST);
    }
    xnode *c = parse_coalesce(p);
    if (c && is_p(p, '?')) {
        uint32_t off = p->cur.off;
        advance(p);
        xnode *a = wfm_expr__parse_expr(p);
        xnode *b = a && expect(p, ':') ? wfm_expr__parse_expr(p) : NULL;
        c = b ? wfm_expr__make_cond(p, c, a, b, off) : NULL;
    }
    p->nest--;
    return c;
}

static xnode *make_intdiv(xparser *p, xnode *a, xnode *b, uint32_t off)
{
    if (!a || !b)
        return NULL;
    wf_kind ka = a->type->kind, kb = b->type->kind;
    if ((ka != WF_K_INT32 && ka != WF_K_INT64) || (kb != WF_K_INT32 && kb != WF_K_INT64))
        return op_error(p, off, "\\", a, b);
    return make_arith(p, XA_DIV, "\\", a, b, off);
}

static xnode *parse_mul(xparser *p)
{
    xnode *a = parse_unary(p);
    while (a) {
        uint32_t off = p->cur.off;
        int sub;
        const char *name;
        if (is_p(p, '*')) {
            sub = XA_MUL;
            name = "*";
        } else if (is_p(p, '/')) {
            sub = XA_DIV;
            name = "/";
        } else if (is_p(p, '\\')) { /* VB integer division */
            advance(p);
            a = make_intdiv(p, a, parse_unary(p), off);
            continue;
        } else if (is_p(p, '%') || is_kw(p, "mod")) {
            sub = XA_MOD;
            name = is_p(p, '%') ? "%" : "Mod";
        } else {
            break;
        }
        advance(p);
        a = make_arith(p, sub, name, a, parse_unary(p), off);
    }
    return a;
}

static xnode *parse_add(xparser *p)
{
    xnode *a = parse_mul(p);
    while (a && (is_p(p, '+') || is_p(p, '-'))) {
        uint32_t off = p->cur.off;
        bool plus = is_p(p, '+');
        advance(p);
        a = make_arith(p, plus ? XA_ADD : XA_SUB, plus ? "+" : "-", a, parse_mul(p), off);
    }
    return a;
}

static xnode *parse_concat(xparser *p)
{
    xnode *a = parse_add(p);
    while (a && is_p(p, '&')) {
        uint32_t off = p->cur.off;
        advance(p);
        a = make_concat(p, a, parse_add(p), off);
    }
    return a;
}

/* The comparison at cur: relational (< <= > >=) or equality (== != and VB's = <> Is IsNot);
 * -1 if there is none. */
static int compare_op(const xparser *p, bool equality)
{
    if (equality)
        return is_p(p, P_EQEQ) || is_p(p, '=') || is_kw(p, "is") ? XC_EQ
               : is_p(p, P_NE) || is_kw(p, "isnot")              ? XC_NE
                                                                 : -1;
    return is_p(p, '<')    ? XC_LT
           : is_p(p, P_LE) ? XC_LE
           : is_p(p, '>')  ? XC_GT
           : is_p(p, P_GE) ? XC_GE
                           : -1;
}

/* Equality binds looser than the relational operators, which bind looser than &. */
const wf_type *wfm_expr__type_ahead(xparser *p)
{
    xtok first = p->cur, last = first;
    if (first.kind != TK_ID || is_kw(p, "nothing") || is_kw(p, "null"))
        return NULL;
    wfm_name nm;
    if (p->scope->resolve && p->scope->resolve(p->scope->ud, p->text + first.off, first.len, &nm))
        return NULL; /* a name: VB's reference equality */
    for (;;) {       /* System.X, s:X */
        xtok sep = peek_after(p, &last), next = peek_after(p, &sep);
        if (!(tok_punct(&sep, '.') || tok_punct(&sep, ':')) || next.kind != TK_ID)
            break;
        last = next;
    }
    const wf_type *t = wfm_expr__find_type(p, p->text + first.off, last.off + last.len - first.off);
    if (t) {
        p->cur = last;
        advance(p);
    }
    return t;
}

xnode *wfm_expr__make_is(xparser *p, xnode *x, const wf_type *t, bool negate, uint32_t off)
{
    if (!x)
        return NULL;
    xnode *n = wfm_expr__mk(p, XOP_CALL, &wf_type_bool, off, NULL, NULL, NULL);
    if (!n)
        return NULL;
    n->sub = XF_IS_TYPE;
    n->aux = t;
    n->param = negate;
    return wfm_expr__fold(p, wfm_expr__set_args(p, n, &x, 1));
}

static xnode *parse_compare(xparser *p, bool equality)
{
    xnode *a = equality ? parse_compare(p, false) : parse_concat(p);
    int sub;
    while (a && (sub = compare_op(p, equality)) >= 0) {
        uint32_t off = p->cur.off;
        if (is_kw(p, "is") || is_kw(p, "isnot")) { /* C#'s x is T, VB's x IsNot T */
            bool negate = is_kw(p, "isnot");
            xtok saved = p->cur;
            advance(p);
            const wf_type *t = wfm_expr__type_ahead(p);
            if (t) {
                a = wfm_expr__make_is(p, a, t, negate, off);
                continue;
            }
            p->cur = saved;
        }
        char name[6] = {0};
        memcpy(name, p->text + off, p->cur.len < 5 ? p->cur.len : 5);
        advance(p);
        xnode *b = equality ? parse_compare(p, false) : parse_concat(p);
        a = make_compare(p, sub, name, a, b, off);
    }
    return a;
}

/* VB's Not binds looser than comparisons: Not a = b is Not (a = b). */
static xnode *parse_not(xparser *p)
{
    if (!is_kw(p, "not"))
        return parse_compare(p, true);
    uint32_t off = p->cur.off;
    if (++p->nest > WFM_EXPR_MAX_NEST)
        return wfm_expr__fail(p, off, WF_E_LIMIT, "expression is nested too deeply");
    advance(p);
    xnode *a = parse_not(p);
    p->nest--;
    if (a && a->type->kind != WF_K_BOOL && a->type->kind != WF_K_OBJECT)
        return op_error(p, off, "Not", a, NULL);
    xnode *n = a ? wfm_expr__mk(p, XOP_NOT, &wf_type_bool, off,
                                wfm_expr__coerce(p, a, &wf_type_bool), NULL, NULL)
                 : NULL;
    if (n)
        n->off = off;
    return wfm_expr__fold(p, n);
}

static xnode *parse_and(xparser *p)
{
    xnode *a = parse_not(p);
    while (a && (is_p(p, P_ANDAND) || is_kw(p, "andalso") || is_kw(p, "and"))) {
        uint32_t off = p->cur.off;
        bool full = is_kw(p, "and");
        const char *name = is_p(p, P_ANDAND) ? "&&" : full ? "And" : "AndAlso";
        advance(p);
        a = make_logic(p, full ? XOP_AND : XOP_ANDALSO, name, a, parse_not(p), off);
    }
    return a;
}

xnode *wfm_expr__parse_or(xparser *p)
{
    xnode *a = parse_and(p);
    while (a && (is_p(p, P_OROR) || is_kw(p, "orelse") || is_kw(p, "or"))) {
        uint32_t off = p->cur.off;
        bool full = is_kw(p, "or");
        const char *name = is_p(p, P_OROR) ? "||" : full ? "Or" : "OrElse";
        advance(p);
        a = make_logic(p, full ? XOP_OR : XOP_ORELSE, name, a, parse_and(p), off);
    }
    return a;
}

static bool starts_operand(const xparser *p, const xtok *t)
{
    if (t->kind == TK_INT || t->kind == TK_DEC || t->kind == TK_DBL || t->kind == TK_STR)
        return true;
    if (t->kind == TK_PUNCT)
        return t->punct == '(' || t->punct == '!';
    static const char *const binary_words[] = {"and", "or", "andalso", "orelse",
                                               "mod", "is", "isnot"};
    if (t->kind != TK_ID)
        return false;
    for (size_t i = 0; i < sizeof binary_words / sizeof binary_words[0]; i++)
        if (wfm_expr__tok_is(p, t, binary_words[i]))
            return false;
    return true;
}

/* The right operand of ^: signs, then a postfix expression (so that ^ groups to the left). */
static xnode *power_operand(xparser *p)
{
    uint32_t off = p->cur.off;
    bool negative = false;
    while (is_p(p, '-') || is_p(p, '+')) {
        negative ^= is_p(p, '-');
        advance(p);
    }
    xnode *b = wfm_expr__parse_postfix(p);
    return negative ? make_neg(p, b, off) : b;
}

/* VB's a ^ b (Double power) binds tighter than unary minus and groups to the left. */
static xnode *parse_power(xparser *p)
{
    xnode *a = wfm_expr__parse_postfix(p);
    while (a && is_p(p, '^')) {
        uint32_t off = p->cur.off;
        advance(p);
        xnode *b = power_operand(p);
        if (!b)
            return NULL;
        if ((!wfm_expr__is_num(a->type) && a->type->kind != WF_K_OBJECT) ||
            (!wfm_expr__is_num(b->type) && b->type->kind != WF_K_OBJECT))
            return op_error(p, off, "^", a, b);
        xnode *args[2] = {wfm_expr__coerce(p, a, &wf_type_double),
                          wfm_expr__coerce(p, b, &wf_type_double)};
        if (!args[0] || !args[1])
            return NULL;
        xnode *n = wfm_expr__mk(p, XOP_CALL, &wf_type_double, off, NULL, NULL, NULL);
        if (n)
            n->sub = XF_POW;
        n = wfm_expr__set_args(p, n, args, 2);
        if (n)
            n->off = args[0]->off;
        a = wfm_expr__fold(p, n);
    }
    return a;
}

/* "(T)x": true with *type set when the parenthesis at cur opens a cast. */
static bool cast_ahead(xparser *p, const wf_type **type)
{
    xtok t1 = peek_after(p, &p->cur);
    if (t1.kind != TK_ID)
        return false;
    xtok t2 = peek_after(p, &t1);
    if (tok_punct(&t2, '[')) { /* C#'s (string[])x: a List */
        xtok t3 = peek_after(p, &t2), t4 = peek_after(p, &t3);
        if (!tok_punct(&t3, ']') || !tok_punct(&t4, ')') || !p->scope->types)
            return false;
        const wf_type *elem = wfm_expr__find_type(p, p->text + t1.off, t1.len);
        if (!elem || !(*type = wf_types_list(p->scope->types, elem)))
            return false;
        p->cur = t4;
        advance(p);
        return true;
    }
    if (!tok_punct(&t2, ')'))
        return false;
    static const char *const keywords[] = {"int",    "long", "double", "decimal",
                                           "string", "bool", "object"};
    const char *s = p->text + t1.off;
    bool keyword = false;
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (strlen(keywords[i]) == t1.len && strncmp(s, keywords[i], t1.len) == 0)
            keyword = true;
    if (!keyword) {
        wfm_name nm;
        if (p->scope->resolve && p->scope->resolve(p->scope->ud, s, t1.len, &nm))
            return false;
        xtok t3 = peek_after(p, &t2);
        if (!starts_operand(p, &t3))
            return false;
    }
    *type = wfm_expr__find_type(p, s, t1.len);
    if (!*type)
        return false;
    advance(p);
    advance(p);
    advance(p);
    return true;
}

xnode *wfm_expr__int_literal(xparser *p, const xtok *t, bool neg, uint32_t off)
{
    uint64_t m = t->ival;
    if ((t->int_sfx == 'I' && !neg && m > INT32_MAX) || (t->int_sfx == 'S' && !neg && m > 32767))
        return wfm_expr__fail(p, t->off, WF_E_SYNTAX,
                              "integer literal '%.*s' is too large for its type suffix",
                              shown_len(t), p->text + t->off);
    if (!t->is_long && (neg ? m <= 2147483648u : m <= INT32_MAX))
        return mk_const(p, wf_int32(neg ? (int32_t)(-(int64_t)m) : (int32_t)m), off);
    if (neg ? m <= (uint64_t)INT64_MAX + 1 : m <= INT64_MAX)
        return mk_const(
            p,
            wf_int64(neg ? (m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m) : (int64_t)m),
            off);
    return wfm_expr__fail(p, t->off, WF_E_SYNTAX, "integer literal '%.*s' is too large",
                          shown_len(t), p->text + t->off);
}

static xnode *make_neg(xparser *p, xnode *a, uint32_t off)
{
    if (!a)
        return NULL;
    wf_kind k = a->type->kind;
    if (!wfm_expr__is_num(a->type) && k != WF_K_TIMESPAN && k != WF_K_OBJECT)
        return op_error(p, off, "-", a, NULL);
    xnode *n = wfm_expr__mk(p, XOP_NEG, a->type, off, a, NULL, NULL);
    if (n)
        n->off = off;
    return wfm_expr__fold(p, n);
}

static xnode *parse_unary(xparser *p)
{
    uint32_t off = p->cur.off;
    const wf_type *cast = NULL;
    bool prefix = is_p(p, '-') || is_p(p, '+') || is_p(p, '!') || is_kw(p, "not") ||
                  (is_p(p, '(') && cast_ahead(p, &cast));
    if (!prefix)
        return parse_power(p);
    if (++p->nest > WFM_EXPR_MAX_NEST) {
        p->nest--;
        return wfm_expr__fail(p, off, WF_E_LIMIT,
                              "expression is nested too deeply (more than %d levels)",
                              WFM_EXPR_MAX_NEST);
    }
    xnode *n;
    if (cast) {
        n = wfm_expr__convert(p, parse_unary(p), cast, XV_CAST, off);
    } else if (is_p(p, '-')) {
        xtok lit = peek_after(p, &p->cur);
        xtok after = lit.kind == TK_INT ? peek_after(p, &lit) : lit;
        if (lit.kind == TK_INT && !tok_punct(&after, '.') && !tok_punct(&after, '[') &&
            !tok_punct(&after, '^')) {
            advance(p);
            advance(p);
            n = wfm_expr__int_literal(p, &lit, true, off);
        } else {
            advance(p);
            n = make_neg(p, parse_unary(p), off);
        }
    } else if (is_p(p, '+')) {
        advance(p);
        n = parse_unary(p);
        if (n && !wfm_expr__is_num(n->type) && n->type->kind != WF_K_OBJECT)
            n = op_error(p, off, "+", n, NULL);
    } else {
        const char *name = is_p(p, '!') ? "!" : "Not";
        advance(p);
        xnode *a = parse_unary(p);
        if (a && a->type->kind != WF_K_BOOL && a->type->kind != WF_K_OBJECT)
            n = op_error(p, off, name, a, NULL);
        else
            n = a ? wfm_expr__mk(p, XOP_NOT, &wf_type_bool, off,
                                 wfm_expr__coerce(p, a, &wf_type_bool), NULL, NULL)
                  : NULL;
        n = wfm_expr__fold(p, n);
    }
    p->nest--;
    if (n && (n->op == XOP_NEG || n->op == XOP_NOT || n->op == XOP_CONV))
        n->off = off;
    return n;
}

/* Parse "(args)" with cur at '('. */
bool wfm_expr__parse_args(xparser *p, xnode **args, unsigned *nargs, unsigned max)
{
    *nargs = 0;
    if (!expect(p, '('))
        return false;
    if (is_p(p, ')')) {
        advance(p);
        return true;
    }
    for (;;) {
        if (*nargs == max) {
            wfm_expr__fail(p, p->cur.off, WF_E_LIMIT, "too many arguments (more than %u)", max);
            return false;
        }
        xnode *a = wfm_expr__parse_expr(p);
        if (!a)
            return false;
        args[(*nargs)++] = a;
        if (is_p(p, ',')) {
            advance(p);
            continue;
        }
        return expect(p, ')');
    }
}

xnode *wfm_expr__parse_primary(xparser *p)
{
    xtok t = p->cur;
    switch (t.kind) {
    case TK_INT:
        advance(p);
        return wfm_expr__int_literal(p, &t, false, t.off);
    case TK_DEC:
        advance(p);
        return mk_const(p, wf_dec(t.dec), t.off);
    case TK_DBL:
        advance(p);
        return mk_const(p, wf_double(t.dbl), t.off);
    case TK_STR: {
        wf_buf buf;
        wf_buf_init(&buf);
        wf_value v;
        bool ok = wfm_expr__string_decode(p->text + t.off, t.len, &buf) &&
                  wf_value_string_static(p->arena, buf.data, buf.len, &v) == WF_OK;
        wf_buf_fini(&buf);
        if (!ok)
            return wfm_expr__nomem(p);
        advance(p);
        return mk_const(p, v, t.off);
    }
    case TK_PUNCT:
        if (t.punct == '(') {
            advance(p);
            xnode *n = wfm_expr__parse_expr(p);
            if (n && !expect(p, ')'))
                return NULL;
            return n;
        }
        if (t.punct == '{')
            return wfm_expr__parse_array(p);
        return unexpected(p);
    case TK_ID:
        return wfm_expr__parse_name(p);
    case TK_ISTR:
        return wfm_expr__parse_interp(p);
    default:
        return unexpected(p);
    }
}

xnode *wfm_expr__unexpected(xparser *p)
{
    return unexpected(p);
}

void wfm_expr__advance(xparser *p)
{
    advance(p);
}

bool wfm_expr__expect(xparser *p, int c)
{
    return expect(p, c);
}

xtok wfm_expr__peek(const xparser *p)
{
    return peek_after(p, &p->cur);
}

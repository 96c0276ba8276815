/* wfm_expr.c — the expression compiler's public face (wfm_expr.h): compile = strip the
 * attribute brackets, parse into a typed tree (wfm_expr_parse.c, wfm_expr_bind.c), check the
 * expected type or the l-value rule; eval and store run the tree (wfm_expr_eval.c). A
 * compiled expression is immutable, so any thread may evaluate it with its own environment. */
#include <ctype.h>
#include <string.h>

#include "wfm_expr_int.h"

/* "[ body ]" as XAML attributes write it: the body is parsed, the EOF token sits on the
 * closing bracket so that "[]" and "[a +]" point at it. */
static bool find_body(xparser *p, size_t len, uint32_t *start)
{
    uint32_t i = 0;
    while (i < len && isspace((unsigned char)p->text[i]))
        i++;
    *start = 0;
    p->end = (uint32_t)len;
    if (i >= len || p->text[i] != '[')
        return true;
    uint32_t j = (uint32_t)len;
    while (j > i + 1 && isspace((unsigned char)p->text[j - 1]))
        j--;
    if (j <= i + 1 || p->text[j - 1] != ']') {
        wfm_expr__fail(p, (uint32_t)len, WF_E_SYNTAX, "missing ']' at the end of the expression");
        return false;
    }
    p->bracketed = true;
    p->end = j - 1;
    *start = i + 1;
    return true;
}

/* WF4 treats an empty expression ("[]") as no expression: default(T), which is null for the
 * reference types. Only then is it accepted; with a value type or no expected type it stays a
 * syntax error at the closing bracket. */
static bool is_ref_type(const wf_type *t)
{
    wf_kind k = t->kind;
    return k == WF_K_STRING || k == WF_K_LIST || k == WF_K_RECORD || k == WF_K_EXCEPTION ||
           k == WF_K_OBJECT;
}

static xnode *empty_value(xparser *p, const wf_type *expected)
{
    xnode *n = wfm_expr__mk(p, XOP_CONST, expected, p->cur.off, NULL, NULL, NULL);
    if (n)
        n->k = wf_null();
    return n;
}

static bool check_lvalue(xparser *p, const xnode *n)
{
    switch (n->op) {
    case XOP_SLOT:
        if (n->flags & XN_WRITABLE)
            return true;
        {
            xtok t = wfm_expr__lex(p->text, n->off, p->end);
            wfm_expr__fail(p, n->off, WF_E_TYPE, "'%.*s' is not assignable (read-only)", (int)t.len,
                           p->text + t.off);
        }
        return false;
    case XOP_FIELD:
    case XOP_INDEX:
        return check_lvalue(p, n->a);
    default:
        wfm_expr__fail(p, n->off, WF_E_TYPE,
                       "expression is not assignable (expected a variable, field or element)");
        return false;
    }
}

static xnode *finish(xparser *p, xnode *root, const wf_type *expected, unsigned flags)
{
    if (!root)
        return NULL;
    if (p->cur.kind == TK_PUNCT && p->cur.punct == ';' && wfm_expr__peek(p).kind == TK_EOF)
        wfm_expr__advance(p); /* C# text copied from a statement: "x + 1;" */
    if (p->cur.kind != TK_EOF)
        return wfm_expr__unexpected(p);
    if (flags & WFM_EXPR_LVALUE) {
        if (!check_lvalue(p, root))
            return NULL;
        if (expected && !wf_type_assignable(root->type, expected) && root->type != expected)
            return wfm_expr__fail(p, root->off, WF_E_TYPE, "cannot assign %s to %s", expected->name,
                                  root->type->name);
        return root;
    }
    return expected ? wfm_expr__coerce_to(p, root, expected, "") : root;
}

wf_status wfm_expr_compile(wf_arena *arena, const wfm_expr_scope *scope, const char *text,
                           wf_loc at, const wf_type *expected, unsigned flags, wfm_expr **out,
                           wf_error *err)
{
    if (out)
        *out = NULL;
    if (!arena || !scope || !text || !out)
        return wf_error_set(err, WF_E_USAGE, &at, "wfm_expr_compile: missing argument");
    xparser p = {.arena = arena, .scope = scope, .text = text, .at = at, .err = err};
    size_t len = strlen(text);
    if (len > WFM_EXPR_MAX_TEXT)
        return wf_error_set(err, WF_E_LIMIT, &at, "expression is too long (%zu bytes)", len);
    uint32_t start;
    if (!find_body(&p, len, &start))
        return p.status;
    p.cur = wfm_expr__lex(text, start, p.end);
    xnode *root;
    if (p.cur.kind == TK_EOF && expected && is_ref_type(expected) && !(flags & WFM_EXPR_LVALUE))
        root = empty_value(&p, expected);
    else
        root = finish(&p, wfm_expr__parse_expr(&p), expected, flags);
    if (!root)
        return p.status != WF_OK ? p.status : WF_E_NOMEM;
    wfm_expr *e = wf_arena_alloc(arena, sizeof *e);
    char *copy = e ? wf_arena_strndup(arena, text, len) : NULL;
    if (!copy) {
        wfm_expr__nomem(&p);
        return WF_E_NOMEM;
    }
    e->root = root;
    e->text = copy;
    e->lvalue = (flags & WFM_EXPR_LVALUE) != 0;
    wfm_expr__quick_prepare(e);
    *out = e;
    return WF_OK;
}

const wf_type *wfm_expr_type(const wfm_expr *expr)
{
    return expr->root->type;
}

bool wfm_expr_is_constant(const wfm_expr *expr)
{
    return (expr->root->flags & XN_PURE) != 0;
}

const char *wfm_expr_text(const wfm_expr *expr)
{
    return expr->text;
}

wf_status wfm_expr_eval(const wfm_expr *expr, const wfm_env *env, wf_value *out, wf_value *exc)
{
    *exc = wf_null();
    if (expr->quick && wfm_expr__quick_eval(expr, env, out))
        return WF_OK;
    return wfm_expr__eval(expr->root, env, out, exc);
}

wf_status wfm_expr_store(const wfm_expr *expr, wfm_env *env, const wf_value *value, wf_value *exc)
{
    *exc = wf_null();
    if (!expr->lvalue)
        return wfm_expr__raise(exc, &wf_exc_invalid_operation,
                               "expression '%s' was not compiled as an l-value", expr->text);
    if (expr->quick == XQ_SLOT && wfm_expr__quick_store(expr, env, value))
        return WF_OK;
    return wfm_expr__store(expr->root, env, value, exc);
}

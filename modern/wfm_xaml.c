/* wfm_xaml.c — the WF4 XAML loader: walks the hardened DOM (wf_xml.h), builds the immutable
 * IR of wfm_definition_int.h driven only by the catalogue's kind specs, compiles every expression
 * against the environment rules documented there, resolves x:Reference after the whole file
 * is read, runs prepare callbacks, and reports every problem with file:line:col. */
#include "wfm_load_int.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha2.h> /* the definition's digest */

#include "../common/wf_file.h"
#include "wfm_acts.h"

#define NS_XML "http://www.w3.org/XML/1998/namespace"

/* Where the value of one property came from while gathering an element. */
typedef struct psrc {
    const wf_xml_attr *attr;        /* Prop="..." */
    const wf_xml_node *pel;         /* <Kind.Prop> */
    const wf_xml_node **items;      /* content items (content property only) */
    size_t count;
    const wf_xml_node *text_el;     /* element whose non-blank text is the content value */
} psrc;

/* The node being built. */
typedef struct nctx {
    wfm_node *node;
    size_t ln; /* lnode index */
    const wf_xml_node *el;
    const char *kname;
} nctx;

static wfm_node *build_item(wfm_load *L, const wf_xml_node *c, nctx *parent, const char *accepts,
                            const char *what, bool keyed);
static void set_names(wfm_load *L, wfm_node *node, const char *display_name, const char *x_name);
static const char *class_short(const wfm_load *L);
static wfm_node *expand_type(wfm_load *L, const wf_xml_node *c, nctx *parent, bool keyed);
static bool is_type_ns(const wfm_load *L, const char *ns);
static void use_src(wfm_load *L, const wfm__src *s);
static void resolve_refs(wfm_load *L);

/* ---- small helpers --------------------------------------------------------------------- */
static void *anew(wfm_load *L, size_t size)
{
    void *p = wf_arena_alloc(L->arena, size ? size : 1);
    if (!p)
        L->nomem = true;
    return p;
}

/* Scratch memory that lives until the end of the load (not kept by the definition). */
static void *tnew(wfm_load *L, size_t size)
{
    void *p = wf_arena_alloc(L->tmp, size ? size : 1);
    if (!p)
        L->nomem = true;
    return p;
}

static const char *astr(wfm_load *L, const char *s)
{
    char *p = wf_arena_strdup(L->arena, s);
    if (!p)
        L->nomem = true;
    return p;
}

static wf_loc keep(wfm_load *L, wf_loc loc)
{
    loc.file = L->file;
    return loc;
}

static wf_loc loc_el(wfm_load *L, const wf_xml_node *el)
{
    return keep(L, wf_xml_node_loc(L->doc, el));
}

static wf_loc loc_attr(wfm_load *L, const wf_xml_attr *a)
{
    return keep(L, wf_xml_attr_loc(L->doc, a));
}

static wf_loc loc_val(wfm_load *L, const wf_xml_attr *a)
{
    return keep(L, wf_xml_value_loc(L->doc, a));
}

static wf_loc loc_text(wfm_load *L, const wf_xml_node *el)
{
    return keep(L, wf_xml_text_loc(L->doc, el));
}

static void mark_bad(wfm_load *L, size_t ln)
{
    if (ln < L->lnode_count)
        L->lnodes[ln].bad = true;
}

static void mark_ctx_bad(wfm_load *L, const struct nctx *nc)
{
    if (nc)
        mark_bad(L, nc->ln);
}

/* Names whose declaration was rejected (an argument or variable of an unknown type, say):
 * kept in the x:Name map under a key no XML name can have, so an expression that uses one is
 * not reported as "unknown name" a second time. */
#define REJECTED_KEY '\x01'

static void name_rejected(wfm_load *L, const char *name)
{
    char key[256];
    if (!name || !*name || strlen(name) + 2 > sizeof key)
        return;
    key[0] = REJECTED_KEY;
    strcpy(key + 1, name);
    if (!wf_strmap_get(L->names, key) && wf_strmap_put(L->names, key, (void *)1) != WF_OK)
        L->nomem = true;
}

/* Whether `e` is the compiler's "unknown name 'N'" for a rejected N. */
static bool names_rejected(const wfm_load *L, const wf_error *e)
{
    static const char head[] = "unknown name '";
    if (e->code != WF_E_NAME || strncmp(e->message, head, sizeof head - 1) != 0)
        return false;
    const char *n = e->message + sizeof head - 1;
    size_t len = strcspn(n, "'");
    char key[256];
    if (len == 0 || len + 2 > sizeof key || n[len] != '\'')
        return false;
    key[0] = REJECTED_KEY;
    memcpy(key + 1, n, len);
    key[len + 1] = '\0';
    return wf_strmap_get(L->names, key) != NULL;
}

/* Report at `at` and mark the node being built (nc may be NULL) as bad. */
#define REPORT(L, nc, code, at, ...)                                                               \
    do {                                                                                           \
        wfm__xt_report((L), (code), (at), __VA_ARGS__);                                            \
        mark_ctx_bad((L), (nc));                                                                   \
    } while (0)

static bool is_ns(const char *ns, const char *want)
{
    return ns && want && strcmp(ns, want) == 0;
}

/* The CLR namespaces System.Activities maps into the activities XML namespace: a file may
 * also name them directly (xmlns:sas="clr-namespace:System.Activities.Statements;assembly=
 * System.Activities"), and WF4 resolves <sas:Sequence> to the same Sequence. */
static bool is_acts_clr(const char *ns)
{
    static const char *const heads[] = {"clr-namespace:System.Activities;",
                                        "clr-namespace:System.Activities.Statements;",
                                        "clr-namespace:System.Activities.Expressions;", NULL};
    for (size_t i = 0; ns && heads[i]; i++) {
        size_t n = strlen(heads[i]);
        if (strncmp(ns, heads[i], n) != 0)
            continue;
        const char *as = ns + n;
        while (*as == ' ')
            as++;
        return strncmp(as, "assembly=System.Activities", 26) == 0 &&
               (as[26] == '\0' || as[26] == ',' || as[26] == ' ');
    }
    return false;
}

static bool is_acts(const char *ns)
{
    return is_ns(ns, WFM_NS_ACTIVITIES) || is_acts_clr(ns);
}

static bool ns_starts(const char *ns, const char *prefix)
{
    return ns && strncmp(ns, prefix, strlen(prefix)) == 0;
}

static bool skip_el(wfm_load *L, const wf_xml_node *c)
{
    return wfm__xt_ignorable(L, c, c->ns) || wfm__xt_designer_member(c->ns, c->name);
}

static bool skip_attr(wfm_load *L, const wf_xml_node *el, const wf_xml_attr *a)
{
    if (!a->ns) /* an unprefixed Owner.Member is in the default namespace (CoreWF writes
                   VisualBasic.Settings="{x:Null}" so) */
        return strchr(a->name, '.') && wfm__xt_designer_member(wf_xml_lookup_ns(el, NULL), a->name);
    return is_ns(a->ns, NS_XML) || wfm__xt_ignorable(L, el, a->ns) ||
           wfm__xt_designer_member(a->ns, a->name) ||
           (is_ns(a->ns, WFM__NS_MC) && strcmp(a->name, "Ignorable") == 0);
}

/* Every item placed asks both: the local name is tested first (its first byte inline), as it
 * rules out almost every element without comparing the long namespace URI. */
static bool is_x_reference(const wf_xml_node *c)
{
    return c->name[0] == 'R' && strcmp(c->name, "Reference") == 0 && wfm__xt_is_x(c->ns);
}

static bool is_x_null(const wf_xml_node *c)
{
    return c->name[0] == 'N' && strcmp(c->name, "Null") == 0 && wfm__xt_is_x(c->ns);
}

/* The text after leading blanks, with its location advanced over them. */
static const char *trim_at(const char *text, wf_loc *at, size_t *len)
{
    const char *t = wfm__xt_trim(text, len);
    for (const char *p = text; p < t; p++) {
        if (*p == '\n') {
            at->line++;
            at->col = 1;
        } else {
            at->col++;
        }
    }
    return t;
}

static bool is_null_ext(const char *t, size_t len)
{
    return len == 8 && memcmp(t, "{x:Null}", 8) == 0;
}

static size_t count_children(wfm_load *L, const wf_xml_node *el)
{
    size_t n = 0;
    for (const wf_xml_node *c = el->first_child; c; c = c->next)
        if (!skip_el(L, c))
            n++;
    return n;
}

/* ---- load-time scopes -------------------------------------------------------------------- */
static bool resolve_name(void *ud, const char *name, size_t len, wfm_name *out)
{
    wfm_load *L = ud;
    uint32_t hops = 0;
    for (const wfm__scope_frame *f = L->scope; f; f = f->up, hops++) {
        for (size_t i = 0; i < f->count; i++) {
            const wfm__scope_name *n = &f->names[i];
            if (n->name && strlen(n->name) == len && memcmp(n->name, name, len) == 0) {
                out->type = n->type;
                out->hops = hops;
                out->index = (uint32_t)i;
                out->writable = n->writable;
                return true;
            }
        }
    }
    return false;
}

/* Length of an entity or character reference ("&quot;", "&#x41;") at p, 0 if none. */
static size_t entity_len(const char *p, const char *end)
{
    if (*p != '&')
        return 0;
    const char *q = p + 1;
    while (q < end && q - p < 12 && (isalnum((unsigned char)*q) || *q == '#'))
        q++;
    return q < end && *q == ';' && q > p + 1 ? (size_t)(q + 1 - p) : 0;
}

static bool utf8_cont(char c)
{
    return ((unsigned char)c & 0xC0) == 0x80;
}

/* The compiler reports line:col in the decoded text, counted from `at` where that text
 * starts in the file. Move such a position onto the source: an entity ("&quot;", "&#xA;")
 * is one character of the text but several columns of the file (and &#xA; is a newline of
 * the text on the same line of the file), while a line break inside an attribute value is a
 * space of the text. Columns count characters, as wf_xml and the compiler do. Files that were
 * converted from UTF-16 keep the compiler's position. */
static void source_pos(const wfm_load *L, const char *text, wf_loc at, unsigned *line,
                       unsigned *col)
{
    const unsigned char *u = (const unsigned char *)L->data;
    if (L->len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
        return;
    if (at.line == 0 || at.col == 0 || *line < at.line || (*line == at.line && *col < at.col))
        return;
    size_t off = 0; /* the error's byte offset in the decoded text */
    for (unsigned l = at.line, c = at.col; text[off] && (l < *line || c < *col); off++) {
        if (text[off] == '\n') {
            if (l == *line)
                break;
            l++;
            c = 1;
        } else if (!utf8_cont(text[off + 1])) {
            c++;
        }
    }
    const char *p = L->data, *end = L->data + L->len;
    for (unsigned l = 1; l < at.line && p < end; p++)
        if (*p == '\n')
            l++;
    for (unsigned c = 1; c < at.col && p < end && *p != '\n'; p++)
        if (!utf8_cont(p[1]))
            c++;
    unsigned sl = at.line, sc = at.col;
    for (size_t i = 0; i < off && p < end; i++) {
        size_t n = entity_len(p, end);
        if (utf8_cont(text[i]))
            continue; /* the whole character was consumed with its first byte */
        if (n) {
            p += n;
            sc += (unsigned)n;
        } else if (*p == '\r' || *p == '\n') {
            p += (*p == '\r' && p + 1 < end && p[1] == '\n') ? 2 : 1;
            sl++;
            sc = 1;
        } else {
            p++;
            while (p < end && utf8_cont(*p))
                p++;
            sc++;
        }
    }
    *line = sl;
    *col = sc;
}

static wfm_expr *compile(wfm_load *L, const nctx *nc, const char *text, wf_loc at,
                         const wf_type *expected, unsigned flags)
{
    wfm_expr_scope scope = {resolve_name, L, L->types};
    wf_error e = WF_ERROR_INIT;
    wfm_expr *x = NULL;
    wf_status rc = wfm_expr_compile(L->arena, &scope, text, at, expected, flags, &x, &e);
    if (rc == WF_OK)
        return x;
    if (rc == WF_E_NOMEM)
        L->nomem = true;
    if (e.line && e.col)
        source_pos(L, text, at, &e.line, &e.col);
    L->errors++;
    if (!names_rejected(L, &e) || !wf_diags_error_count(L->diags))
        wfm__load_diag(L, WF_SEV_ERROR, &e);
    if (nc)
        mark_bad(L, nc->ln);
    return NULL;
}

/* ---- bindings: IN / OUT / INOUT values ---------------------------------------------------- */
/* One binding being filled (a property, a parameter, a variable or argument default). */
typedef struct binding {
    wfm_prop_kind dir;   /* IN, OUT, INOUT */
    const wf_type *type; /* expected type; NULL = infer */
    wfm_expr *expr;
    wf_value literal;
    const char *what;    /* "Assign.To" for messages */
} binding;

/* Whether an Out value of type `value` may be stored into a location of type `loc`. An x:Object
 * Out property (InvokeMethod.Result) binds any location; the runtime converts on store. */
static bool out_ok(const wf_type *loc, const wf_type *value)
{
    return value->kind == WF_K_OBJECT || wf_type_assignable(loc, value);
}

/* An expression text (bracketed or bare) for the binding. */
static bool bind_expr(wfm_load *L, const nctx *nc, binding *b, const char *text, wf_loc at)
{
    bool in = b->dir == WFM_PROP_IN;
    wfm_expr *x = compile(L, nc, text, at, in ? b->type : NULL, in ? 0 : WFM_EXPR_LVALUE);
    if (!x)
        return false;
    const wf_type *xt = wfm_expr_type(x);
    if (!in && b->type && xt) {
        bool ok = b->dir == WFM_PROP_OUT ? out_ok(xt, b->type) : xt == b->type;
        if (!ok) {
            REPORT(L, nc, WF_E_TYPE, at, "%s of type %s cannot be bound to a location of type %s",
                   b->what, b->type->name, xt->name);
            return false;
        }
    }
    if (!b->type || (!in && xt))
        b->type = xt;
    b->expr = x;
    return true;
}

/* A value written as text: "[expr]", {x:Null}, or a literal (In only). */
static bool bind_text(wfm_load *L, const nctx *nc, binding *b, const char *text, wf_loc at)
{
    size_t len;
    const char *t = trim_at(text, &at, &len);
    if (is_null_ext(t, len)) {
        b->literal = wf_null();
        return true;
    }
    if (len >= 2 && t[0] == '[' && t[len - 1] == ']')
        return bind_expr(L, nc, b, t, at);
    if (b->dir != WFM_PROP_IN) {
        REPORT(L, nc, WF_E_SCHEMA, at, "%s requires a location expression such as [name]",
               b->what);
        return false;
    }
    if (len && t[0] == '{') { /* "{}" escapes a literal that starts with '{' */
        if (len < 2 || t[1] != '}') {
            REPORT(L, nc, WF_E_SCHEMA, at, "unsupported markup extension in %s", b->what);
            return false;
        }
        text = t + 2;
        t += 2;
        len -= 2;
    }
    const char *lit = text;
    if (b->type && b->type->kind != WF_K_STRING && b->type->kind != WF_K_OBJECT) {
        lit = wf_arena_strndup(L->arena, t, len);
        if (!lit) {
            L->nomem = true;
            return false;
        }
    }
    if (wfm__xt_literal(L, b->type, lit, at, &b->literal) != WF_OK) {
        if (nc)
            mark_bad(L, nc->ln);
        return false;
    }
    if (!b->type)
        b->type = b->literal.type;
    return true;
}

/* x:TypeArguments of a wrapper / expression element against the binding's type. */
static bool reconcile(wfm_load *L, const nctx *nc, binding *b, const wf_xml_node *c)
{
    const wf_xml_attr *ta = wf_xml_attr_find(c, WFM__NS_XAML, "TypeArguments");
    if (!ta)
        return true;
    const wf_type *w;
    if (wfm__xt_type(L, c, ta->value, wfm__xt_first_type_len(ta->value), loc_val(L, ta), &w) !=
        WF_OK) {
        if (nc)
            mark_bad(L, nc->ln);
        return false;
    }
    if (!b->type) {
        b->type = w;
        return true;
    }
    bool ok = b->dir == WFM_PROP_IN    ? wf_type_assignable(b->type, w)
              : b->dir == WFM_PROP_OUT ? out_ok(w, b->type)
                                       : w == b->type;
    if (!ok) {
        REPORT(L, nc, WF_E_TYPE, loc_val(L, ta), "%s expects %s, not %s", b->what, b->type->name,
               w->name);
        return false;
    }
    if (b->dir != WFM_PROP_IN)
        b->type = w;
    return true;
}

/* Attributes an expression element may carry besides the ones named in `allowed`. */
/* <ReceiveParametersContent>/<SendParametersContent> (the messaging activities' Content): a
 * wrapper whose arguments are the parameters of a PARAMS property, each named by its x:Key. */
static bool is_params_content(const wf_xml_node *c)
{
    size_t len = c && c->name ? strlen(c->name) : 0;
    return len > 17 && strcmp(c->name + len - 17, "ParametersContent") == 0;
}

static bool check_attrs(wfm_load *L, const nctx *nc, const wf_xml_node *c,
                        const char *const *allowed)
{
    bool ok = true;
    for (size_t i = 0; i < c->attr_count; i++) {
        const wf_xml_attr *a = &c->attrs[i];
        if (skip_attr(L, c, a) || (wfm__xt_is_x(a->ns) && (strcmp(a->name, "TypeArguments") == 0 ||
                                                           strcmp(a->name, "Name") == 0)))
            continue;
        if (wfm__xt_is_x(a->ns) && strcmp(a->name, "Key") == 0 && is_params_content(c->parent))
            continue; /* a message parameter's name */
        bool known = false;
        for (size_t k = 0; allowed && allowed[k]; k++)
            if (!a->ns && strcmp(a->name, allowed[k]) == 0)
                known = true;
        if (!known) {
            REPORT(L, nc, WF_E_SCHEMA, loc_attr(L, a), "unknown attribute '%s' on %s", a->name,
                   c->name);
            ok = false;
        }
    }
    return ok;
}

/* CoreWF maps Microsoft.CSharp.Activities into the activities namespace, so its files write
 * <CSharpValue> without a prefix; .NET Framework files write <mca:CSharpValue>. */
static bool is_expr_element(const wf_xml_node *c)
{
    if (ns_starts(c->ns, "clr-namespace:Microsoft.CSharp.Activities") || is_acts(c->ns))
        if (strcmp(c->name, "CSharpValue") == 0 || strcmp(c->name, "CSharpReference") == 0)
            return true;
    if (ns_starts(c->ns, "clr-namespace:Microsoft.CSharp.Activities"))
        return strcmp(c->name, "CSharpValue") == 0 || strcmp(c->name, "CSharpReference") == 0;
    if (ns_starts(c->ns, "clr-namespace:Microsoft.VisualBasic.Activities") || is_acts(c->ns))
        return strcmp(c->name, "VisualBasicValue") == 0 ||
               strcmp(c->name, "VisualBasicReference") == 0 ||
               (is_acts(c->ns) && strcmp(c->name, "Literal") == 0);
    return false;
}

/* <mca:CSharpValue>, <VisualBasicValue ExpressionText=...>, <Literal Value=...>. */
static bool bind_expr_element(wfm_load *L, const nctx *nc, binding *b, const wf_xml_node *c)
{
    static const char *const vb[] = {"ExpressionText", NULL};
    static const char *const lit[] = {"Value", NULL};
    bool is_vb = strncmp(c->name, "VisualBasic", 11) == 0;
    bool is_lit = strcmp(c->name, "Literal") == 0;
    if (!check_attrs(L, nc, c, is_vb ? vb : is_lit ? lit : NULL) || !reconcile(L, nc, b, c))
        return false;
    if (is_vb || is_lit) {
        const wf_xml_attr *a = wf_xml_attr_find(c, NULL, is_vb ? "ExpressionText" : "Value");
        if (!a) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s needs %s", c->name,
                   is_vb ? "ExpressionText" : "Value");
            return false;
        }
        if (is_vb)
            return bind_expr(L, nc, b, a->value, loc_val(L, a));
        binding lb = *b;
        lb.dir = WFM_PROP_IN;
        if (!bind_text(L, nc, &lb, a->value, loc_val(L, a)))
            return false;
        *b = lb;
        b->dir = WFM_PROP_IN;
        return true;
    }
    size_t len;
    wf_loc at = loc_text(L, c);
    const char *t = wfm__xt_trim(c->text, &len);
    if (len == 0) {
        REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "empty expression in %s", b->what);
        return false;
    }
    return bind_expr(L, nc, b, t, at);
}

/* The inside of <InArgument>/<OutArgument>/<InOutArgument> (the element itself is checked). */
static bool bind_wrapper(wfm_load *L, const nctx *nc, binding *b, const wf_xml_node *c)
{
    static const char *const allowed[] = {"EvaluationOrder", NULL};
    if (!check_attrs(L, nc, c, allowed) || !reconcile(L, nc, b, c))
        return false;
    const wf_xml_node *inner = NULL;
    for (const wf_xml_node *k = c->first_child; k; k = k->next) {
        if (skip_el(L, k))
            continue;
        if (inner) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, k), "more than one value in %s", b->what);
            return false;
        }
        inner = k;
    }
    if (inner) {
        if (!is_expr_element(inner)) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, inner), "'%s' cannot appear in %s", inner->name,
                   b->what);
            return false;
        }
        return bind_expr_element(L, nc, b, inner);
    }
    if (!wf_xml_text_blank(c->text))
        return bind_text(L, nc, b, c->text, loc_text(L, c));
    b->literal = wf_type_default(b->type); /* unbound: default(T) */
    return true;
}

static const char *wrapper_name(wfm_prop_kind dir)
{
    return dir == WFM_PROP_IN ? "InArgument" : dir == WFM_PROP_OUT ? "OutArgument" : "InOutArgument";
}

static bool wrapper_dir(const wf_xml_node *c, wfm_prop_kind *dir)
{
    if (!is_acts(c->ns))
        return false;
    if (strcmp(c->name, "InArgument") == 0)
        *dir = WFM_PROP_IN;
    else if (strcmp(c->name, "OutArgument") == 0)
        *dir = WFM_PROP_OUT;
    else if (strcmp(c->name, "InOutArgument") == 0)
        *dir = WFM_PROP_INOUT;
    else
        return false;
    return true;
}

/* A binding written as one element: a wrapper or an expression element. */
static bool bind_element(wfm_load *L, const nctx *nc, binding *b, const wf_xml_node *c)
{
    wfm_prop_kind dir;
    if (is_x_null(c)) {
        b->literal = wf_null();
        return true;
    }
    if (wrapper_dir(c, &dir)) {
        if (dir != b->dir) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s cannot appear in %s (expects %s)",
                   c->name, b->what, wrapper_name(b->dir));
            return false;
        }
        return bind_wrapper(L, nc, b, c);
    }
    if (is_expr_element(c))
        return bind_expr_element(L, nc, b, c);
    REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s cannot appear in %s", c->name, b->what);
    return false;
}

/* A binding from a property element / content: exactly one element, or text. */
static bool bind_items(wfm_load *L, const nctx *nc, binding *b, const wf_xml_node **items,
                       size_t count, const wf_xml_node *text_el)
{
    if (count > 1) {
        REPORT(L, nc, WF_E_SCHEMA, loc_el(L, items[1]), "more than one value in %s", b->what);
        return false;
    }
    if (count == 1)
        return bind_element(L, nc, b, items[0]);
    if (text_el && !wf_xml_text_blank(text_el->text))
        return bind_text(L, nc, b, text_el->text, loc_text(L, text_el));
    return true;
}

/* ---- gathering an element's members ------------------------------------------------------ */
static const wf_xml_node **pel_items(wfm_load *L, const wf_xml_node *pel, size_t *count)
{
    size_t n = count_children(L, pel);
    const wf_xml_node **items = tnew(L, n * sizeof *items);
    *count = 0;
    if (!items)
        return NULL;
    for (const wf_xml_node *c = pel->first_child; c; c = c->next)
        if (!skip_el(L, c))
            items[(*count)++] = c;
    return items;
}

/* The elements and text of one property: from its property element or the content. */
static const wf_xml_node **src_items(wfm_load *L, const psrc *s, size_t *count,
                                     const wf_xml_node **text_el)
{
    if (s->pel) {
        *text_el = s->pel;
        return pel_items(L, s->pel, count);
    }
    *text_el = s->text_el;
    *count = s->count;
    return s->items;
}

static int find_prop(const wfm_kind_spec *spec, const char *name, size_t len)
{
    for (size_t i = 0; i < spec->prop_count; i++)
        if (strlen(spec->props[i].name) == len && memcmp(spec->props[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

/* "Sequence.Activities" on a Sequence element: the property part, else NULL. */
static const char *member_of(const nctx *nc, const wf_xml_node *c)
{
    const char *dot = strchr(c->name, '.');
    if (!dot || !is_ns(c->ns, nc->el->ns) || strncmp(c->name, nc->kname, (size_t)(dot - c->name)) ||
        strlen(nc->kname) != (size_t)(dot - c->name))
        return NULL;
    return dot + 1;
}

/* An attached property of a .NET type we do not have ("mtbwt:BuildTrackingParticipant.
 * Importance" in a clr-namespace). WF4 stores such values beside the activity for whoever
 * reads them (tracking, designers); the activity itself never does, so the loader warns and
 * goes on. The x:Class's own members ("this:Wf.Arg") are not attached properties. */
static bool owner_is(const char *name, const char *dot, const char *owner)
{
    return owner && strlen(owner) == (size_t)(dot - name) &&
           strncmp(name, owner, strlen(owner)) == 0;
}

/* `kname`: the kind of the element being read (NULL at the root); its own members written
 * with another prefix are not attached properties, nor is anything of System.Activities. */
static bool attached_ignored(wfm_load *L, const wf_xml_node *at_el, const char *ns,
                             const char *prefix, const char *name, wf_loc loc, const char *kname)
{
    const char *dot = strchr(name, '.');
    if (!dot || dot == name || !dot[1] || !ns_starts(ns, "clr-namespace:") || is_acts_clr(ns) ||
        wfm__xt_ignorable(L, at_el, ns) || owner_is(name, dot, class_short(L)) ||
        owner_is(name, dot, kname))
        return false;
    wf_error e = WF_ERROR_INIT;
    wf_error_set(&e, WF_E_SCHEMA, &loc, "attached property '%s%s%s' is ignored",
                 prefix ? prefix : "", prefix ? ":" : "", name);
    wfm__load_diag(L, WF_SEV_WARNING, &e);
    return true;
}

static void defer_attr(wfm_load *L, nctx *nc, const wf_xml_attr *a)
{
    wfm__lnode *ln = &L->lnodes[nc->ln];
    if (!ln->unknown) {
        ln->unknown = tnew(L, nc->el->attr_count * sizeof *ln->unknown);
        ln->claimed = tnew(L, nc->el->attr_count * sizeof *ln->claimed);
        if (!ln->unknown || !ln->claimed) {
            ln->unknown = NULL;
            return;
        }
    }
    ln->unknown[ln->unknown_count++] = a;
}

static bool set_src_attr(wfm_load *L, nctx *nc, psrc *s, const wf_xml_attr *a, const char *prop)
{
    if (s->attr || s->pel) {
        REPORT(L, nc, WF_E_SCHEMA, loc_attr(L, a), "%s.%s is set more than once", nc->kname, prop);
        return false;
    }
    s->attr = a;
    return true;
}

static void gather_attrs(wfm_load *L, nctx *nc, psrc *src, bool keyed)
{
    const wfm_kind_spec *spec = nc->node->kind->spec;
    for (size_t i = 0; i < nc->el->attr_count; i++) {
        const wf_xml_attr *a = &nc->el->attrs[i];
        if (skip_attr(L, nc->el, a))
            continue;
        if (wfm__xt_is_x(a->ns)) {
            if (strcmp(a->name, "TypeArguments") == 0 || (keyed && strcmp(a->name, "Key") == 0))
                continue;
            if (strcmp(a->name, "Name") == 0) {
                set_names(L, nc->node, NULL, a->value);
                continue;
            }
        } else if (!a->ns) {
            if (strcmp(a->name, "DisplayName") == 0) {
                set_names(L, nc->node, a->value, NULL);
                continue;
            }
            int pi = find_prop(spec, a->name, strlen(a->name));
            if (pi >= 0) {
                set_src_attr(L, nc, &src[pi], a, a->name);
                continue;
            }
            if (spec->prepare || spec->bind) {
                defer_attr(L, nc, a);
                continue;
            }
        }
        if (attached_ignored(L, nc->el, a->ns, a->prefix, a->name, loc_attr(L, a), nc->kname))
            continue;
        REPORT(L, nc, WF_E_SCHEMA, loc_attr(L, a), "unknown attribute '%s%s%s' on %s",
               a->prefix ? a->prefix : "", a->prefix ? ":" : "", a->name, nc->kname);
    }
}

static bool is_x_key(const wf_xml_node *c)
{
    return wfm__xt_is_x(c->ns) && strcmp(c->name, "Key") == 0;
}

static void gather_children(wfm_load *L, nctx *nc, psrc *src, bool keyed)
{
    const wfm_kind *kind = nc->node->kind;
    int ci = kind->content_index;
    if (ci >= 0) {
        /* room for every element child (skipped ones included): no pass to count them */
        src[ci].items = tnew(L, nc->el->child_count * sizeof *src[ci].items);
        if (!src[ci].items)
            return;
    }
    for (const wf_xml_node *c = nc->el->first_child; c; c = c->next) {
        if (skip_el(L, c) || (keyed && is_x_key(c)))
            continue; /* <x:Key> of a keyed item is read by the collection (prop_many) */
        const char *member = member_of(nc, c);
        if (member) {
            if (strcmp(member, "Variables") == 0)
                continue; /* read before everything else */
            int pi = find_prop(kind->spec, member, strlen(member));
            if (pi < 0) {
                REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "unknown property '%s'", c->name);
            } else if (src[pi].attr || src[pi].pel) {
                REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s is set more than once", c->name);
            } else {
                src[pi].pel = c;
            }
        } else if (attached_ignored(L, c, c->ns, c->prefix, c->name, loc_el(L, c), nc->kname)) {
            continue;
        } else if (strchr(c->name, '.')) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "unknown element '%s' in %s", c->name,
                   nc->kname);
        } else if (ci < 0) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s cannot appear in %s", c->name, nc->kname);
        } else {
            src[ci].items[src[ci].count++] = c;
        }
    }
    if (!wf_xml_text_blank(nc->el->text)) {
        wfm_prop_kind pk = ci >= 0 ? kind->spec->props[ci].kind : WFM_PROP_ACTIVITY;
        if (pk == WFM_PROP_IN || pk == WFM_PROP_OUT || pk == WFM_PROP_INOUT ||
            pk == WFM_PROP_LITERAL || pk == WFM_PROP_TYPE)
            src[ci].text_el = nc->el;
        else
            REPORT(L, nc, WF_E_SCHEMA, loc_text(L, nc->el), "unexpected text in %s", nc->kname);
    }
    if (ci >= 0 && (src[ci].count || src[ci].text_el) && (src[ci].attr || src[ci].pel))
        REPORT(L, nc, WF_E_SCHEMA, loc_el(L, nc->el), "%s.%s is set more than once", nc->kname,
               kind->spec->props[ci].name);
}

/* ---- property kinds ------------------------------------------------------------------- */
/* The spec's type text for this node: "T", "List(T)" or a fixed name; *uses_t says whether
 * it depends on the node's type argument. */
static const wf_type *spec_type(wfm_load *L, const wfm_node *n, const char *st, bool *uses_t)
{
    *uses_t = false;
    if (!st)
        return NULL;
    if (strcmp(st, "T") == 0) {
        *uses_t = true;
        return wfm__node_type_arg(n);
    }
    if (strcmp(st, "List(T)") == 0) {
        *uses_t = true;
        if (!wfm__node_type_arg(n))
            return NULL;
        const wf_type *t = wf_types_list(L->types, wfm__node_type_arg(n));
        if (!t)
            L->nomem = true;
        return t;
    }
    const wf_type *t = NULL;
    wfm__xt_type_quiet(L, NULL, st, strlen(st), &t);
    return t;
}

/* "Kind.Prop", for messages (built for every property read, so without snprintf). */
static const char *label(wfm_load *L, const nctx *nc, unsigned pi)
{
    const char *prop = nc->node->kind->spec->props[pi].name;
    size_t kl = strlen(nc->kname), pl = strlen(prop);
    char *copy = tnew(L, kl + pl + 2);
    if (!copy)
        return "";
    memcpy(copy, nc->kname, kl);
    copy[kl] = '.';
    memcpy(copy + kl + 1, prop, pl + 1);
    return copy;
}

static void infer_t(nctx *nc, bool uses_t, const wf_type *t, const char *st)
{
    if (uses_t && !wfm__node_type_arg(nc->node) && t && strcmp(st, "T") == 0)
        wfm__node_set_type_arg(nc->node, t);
}

static void prop_binding(wfm_load *L, nctx *nc, unsigned pi, const psrc *s)
{
    const wfm_prop_spec *ps = &nc->node->kind->spec->props[pi];
    wfm__prop *p = wfm__node_prop(nc->node, pi);
    bool uses_t;
    binding b = {ps->kind, spec_type(L, nc->node, ps->type, &uses_t), NULL, wf_null(),
                 label(L, nc, pi)};
    bool ok;
    if (s->attr) {
        ok = bind_text(L, nc, &b, s->attr->value, loc_val(L, s->attr));
    } else {
        const wf_xml_node *text_el;
        size_t count;
        const wf_xml_node **items = src_items(L, s, &count, &text_el);
        ok = bind_items(L, nc, &b, items, count, text_el);
    }
    if (!ok)
        return;
    p->bound = b.expr != NULL;
    if (p->bound)
        p->expr = b.expr;
    else
        p->literal = b.literal;
    p->type = b.type;
    infer_t(nc, uses_t, b.type, ps->type);
}

static void prop_literal(wfm_load *L, nctx *nc, unsigned pi, const psrc *s)
{
    const wfm_prop_spec *ps = &nc->node->kind->spec->props[pi];
    wfm__prop *p = wfm__node_prop(nc->node, pi);
    bool uses_t;
    p->type = spec_type(L, nc->node, ps->type, &uses_t);
    const char *text;
    wf_loc at;
    if (s->attr) {
        at = loc_val(L, s->attr);
        text = s->attr->value;
    } else {
        const wf_xml_node *el = s->pel ? s->pel : s->text_el;
        if (!el || (s->pel && count_children(L, s->pel))) {
            REPORT(L, nc, WF_E_SCHEMA, s->pel ? loc_el(L, s->pel) : loc_el(L, s->items[0]),
                   "%s takes a literal value", label(L, nc, pi));
            return;
        }
        at = loc_text(L, el);
        text = el->text;
    }
    size_t len;
    const char *t = wfm__xt_trim(text, &len);
    if (is_null_ext(t, len))
        return;
    if (wfm__xt_literal(L, p->type, text, at, &p->literal) != WF_OK)
        mark_bad(L, nc->ln);
}

static void prop_type(wfm_load *L, nctx *nc, unsigned pi, const psrc *s)
{
    wfm__prop *p = wfm__node_prop(nc->node, pi);
    const wf_xml_node *el = s->attr ? nc->el : s->pel ? s->pel : s->text_el;
    const char *text = s->attr ? s->attr->value : el ? el->text : "";
    wf_loc at = s->attr ? loc_val(L, s->attr) : el ? loc_text(L, el) : loc_el(L, nc->el);
    size_t len;
    const char *t = trim_at(text, &at, &len);
    if (len > 9 && strncmp(t, "{x:Type ", 8) == 0 && t[len - 1] == '}') {
        t += 8;
        len -= 9;
        while (len && *t == ' ')
            t++, len--;
    }
    const char *full = wf_arena_strndup(L->arena, t, len);
    if (!full) {
        L->nomem = true;
        return;
    }
    p->type_text = full;
    const char *colon = strchr(full, ':');
    if (colon && !strchr(full, '('))
        p->type_prefix = wf_arena_strndup(L->arena, full, (size_t)(colon - full));
    wf_status rc = wfm__xt_type_quiet(L, el, full, len, &p->type);
    if (rc != WF_E_TYPE)
        return;
    const char *uri = p->type_prefix ? wf_xml_lookup_ns(el, p->type_prefix) : NULL;
    if (uri && ns_starts(uri, "clr-namespace:") && strstr(uri, "ssembly="))
        return; /* a native library type (InvokeMethod TargetType="p:Any") */
    REPORT(L, nc, WF_E_TYPE, at, "unknown type '%s'", full);
}

static void add_ref(wfm_load *L, nctx *nc, wfm_node **slot, const char *name, size_t len,
                    wf_loc at, const char *accepts, const char *what)
{
    if (L->ref_count == L->ref_cap) {
        size_t cap = L->ref_cap ? L->ref_cap * 2 : 16;
        wfm__pending_ref *refs = wf_realloc(L->refs, cap * sizeof *refs);
        if (!refs) {
            L->nomem = true;
            return;
        }
        L->refs = refs;
        L->ref_cap = cap;
    }
    const char *copy = wf_arena_strndup(L->tmp, name, len);
    if (!copy) {
        L->nomem = true;
        return;
    }
    L->refs[L->ref_count++] = (wfm__pending_ref){slot, copy, at, nc->node, nc->ln, accepts, what};
}

/* <x:Reference>Name</x:Reference> (optionally with <x:Key>); the key element is returned. */
static void element_ref(wfm_load *L, nctx *nc, wfm_node **slot, const wf_xml_node *c,
                        const char *accepts, const char *what, const wf_xml_node **key_el)
{
    *key_el = NULL;
    for (const wf_xml_node *k = c->first_child; k; k = k->next) {
        if (skip_el(L, k))
            continue;
        if (wfm__xt_is_x(k->ns) && strcmp(k->name, "Key") == 0 && key_el && !*key_el)
            *key_el = k;
        else
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, k), "%s cannot appear in x:Reference", k->name);
    }
    const wf_xml_attr *na = wf_xml_attr_find(c, NULL, "Name");
    size_t len;
    wf_loc at = na ? loc_val(L, na) : loc_text(L, c);
    const char *name = wfm__xt_trim(na ? na->value : c->text, &len);
    if (len == 0) {
        REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "x:Reference without a name in %s", what);
        return;
    }
    add_ref(L, nc, slot, name, len, at, accepts, what);
}

static const char *accepts_of(const wfm_prop_spec *ps)
{
    return ps->accepts ? ps->accepts : "Activity";
}

/* x:Reference is allowed for nodes, and for activities in WFM_PROP_SHARED properties. */
static bool refs_allowed(const wfm_prop_spec *ps)
{
    return strcmp(accepts_of(ps), "Activity") != 0 || (ps->flags & WFM_PROP_SHARED);
}

/* One item of an ACTIVITY/NODE/ACTIVITIES/NODES/KEYED property into *slot. */
static void place_item(wfm_load *L, nctx *nc, wfm_node **slot, const wf_xml_node *c,
                       const wfm_prop_spec *ps, const char *what, bool keyed,
                       const wf_xml_node **key_el)
{
    if (key_el)
        *key_el = NULL;
    if (is_x_null(c) && !keyed)
        return; /* <x:Null/>: explicitly nothing */
    if (is_x_reference(c)) {
        if (!refs_allowed(ps)) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "x:Reference cannot appear in %s", what);
            return;
        }
        const wf_xml_node *dummy;
        element_ref(L, nc, slot, c, accepts_of(ps), what, key_el ? key_el : &dummy);
        return;
    }
    *slot = build_item(L, c, nc, accepts_of(ps), what, keyed);
    if (!*slot)
        mark_bad(L, nc->ln);
}

/* {x:Reference Name} / {x:Null} as an attribute value of a NODE property. */
static void attr_node(wfm_load *L, nctx *nc, wfm__prop *p, const wf_xml_attr *a,
                      const wfm_prop_spec *ps, const char *what)
{
    size_t len;
    wf_loc at = loc_val(L, a);
    const char *t = trim_at(a->value, &at, &len);
    if (is_null_ext(t, len))
        return;
    if (refs_allowed(ps) && len > 14 && strncmp(t, "{x:Reference ", 13) == 0 &&
        t[len - 1] == '}') {
        const char *name = t + 13;
        size_t n = len - 14;
        while (n && *name == ' ')
            name++, n--;
        if (n > 5 && strncmp(name, "Name=", 5) == 0)
            name += 5, n -= 5;
        while (n && name[n - 1] == ' ')
            n--;
        add_ref(L, nc, &p->child, name, n, at, accepts_of(ps), what);
        return;
    }
    if (len > 13 && strncmp(t, "{x:Reference ", 13) == 0)
        REPORT(L, nc, WF_E_SCHEMA, at, "x:Reference cannot appear in %s", what);
    else
        REPORT(L, nc, WF_E_SCHEMA, at, "%s needs an element, not a value", what);
}

static void prop_single(wfm_load *L, nctx *nc, unsigned pi, const psrc *s)
{
    const wfm_prop_spec *ps = &nc->node->kind->spec->props[pi];
    wfm__prop *p = wfm__node_prop(nc->node, pi);
    const char *what = label(L, nc, pi);
    if (s->attr) {
        attr_node(L, nc, p, s->attr, ps, what);
        return;
    }
    const wf_xml_node *text_el;
    size_t count;
    const wf_xml_node **items = src_items(L, s, &count, &text_el);
    for (size_t i = 0; i < count; i++) {
        if (i == 0) {
            place_item(L, nc, &p->child, items[i], ps, what, false, NULL);
            continue;
        }
        REPORT(L, nc, WF_E_SCHEMA, loc_el(L, items[i]), "more than one child in %s", what);
        wfm_node *extra = NULL; /* built for its own errors, not linked */
        place_item(L, nc, &extra, items[i], ps, what, false, NULL);
    }
    if (s->pel && !wf_xml_text_blank(s->pel->text))
        REPORT(L, nc, WF_E_SCHEMA, loc_text(L, s->pel), "unexpected text in %s", what);
}

/* The <x:Key> element of an item written inline (<FlowStep><x:Key>...</x:Key>...), or NULL. */
static const wf_xml_node *inline_key(const wf_xml_node *c)
{
    if (is_x_reference(c))
        return NULL;
    for (const wf_xml_node *k = c->first_child; k; k = k->next)
        if (is_x_key(k))
            return k;
    return NULL;
}

/* The XAML primitive types a key may be written as: <x:Key><x:String>A</x:String></x:Key>. */
static bool is_x_primitive(const wf_xml_node *c)
{
    return wfm__xt_is_x(c->ns) && wf_type_primitive(c->name) != NULL;
}

/* The text and location of an <x:Key> element: its own text, or the text of the one
 * primitive element inside it. False (reported) for anything else, e.g. an object key. */
static bool key_el_text(wfm_load *L, nctx *nc, const wf_xml_node *key_el, const char **text,
                        wf_loc *at, bool *null_key)
{
    const wf_xml_node *inner = NULL;
    *null_key = false;
    for (const wf_xml_node *k = key_el->first_child; k; k = k->next) {
        if (skip_el(L, k))
            continue;
        if (inner || !wf_xml_text_blank(key_el->text) ||
            (!is_x_primitive(k) && !is_x_null(k))) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, k),
                   "unsupported x:Key value '%s' (a key is text or x:String, x:Int32, ...)",
                   k->name);
            return false;
        }
        inner = k;
    }
    if (inner && is_x_null(inner)) {
        *null_key = true;
        *at = loc_el(L, inner);
        *text = "";
        return true;
    }
    const wf_xml_node *el = inner ? inner : key_el;
    *text = el->text;
    *at = loc_text(L, el);
    return true;
}

/* The key of a KEYED item: x:Key attribute, or <x:Key> element (inline or in x:Reference). */
static bool item_key(wfm_load *L, nctx *nc, wfm__prop *p, const wf_xml_node *c,
                     const wf_xml_node *key_el, const char *what, wf_value *key)
{
    const wf_xml_attr *ka = wf_xml_attr_find(c, WFM__NS_XAML, "Key");
    if (!key_el)
        key_el = inline_key(c);
    if (ka && key_el) {
        REPORT(L, nc, WF_E_SCHEMA, loc_el(L, key_el), "x:Key is set more than once on %s",
               c->name);
        return false;
    }
    if (!ka && !key_el) {
        REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s in %s needs an x:Key", c->name, what);
        return false;
    }
    wf_loc at;
    const char *text;
    bool null_key = false;
    if (ka) {
        at = loc_val(L, ka);
        text = ka->value;
    } else if (!key_el_text(L, nc, key_el, &text, &at, &null_key)) {
        return false;
    }
    size_t len;
    const char *t = wfm__xt_trim(text, &len);
    *key = wf_null();
    if (!null_key && !is_null_ext(t, len) && wfm__xt_literal(L, p->type, text, at, key) != WF_OK) {
        mark_bad(L, nc->ln);
        return false;
    }
    for (size_t i = 0; i < p->count; i++) {
        if (wf_value_equal(&p->keys[i], key)) {
            REPORT(L, nc, WF_E_SCHEMA, at, "duplicate key '%.*s' in %s", (int)(len > 100 ? 100 : len),
                   t, what);
            return false;
        }
    }
    return true;
}

static void prop_many(wfm_load *L, nctx *nc, unsigned pi, const psrc *s)
{
    const wfm_prop_spec *ps = &nc->node->kind->spec->props[pi];
    wfm__prop *p = wfm__node_prop(nc->node, pi);
    const char *what = label(L, nc, pi);
    bool keyed = ps->kind == WFM_PROP_KEYED;
    if (s->attr) {
        size_t len;
        const char *t = wfm__xt_trim(s->attr->value, &len);
        if (!is_null_ext(t, len))
            REPORT(L, nc, WF_E_SCHEMA, loc_val(L, s->attr), "%s needs elements, not a value",
                   what);
        return;
    }
    const wf_xml_node *text_el;
    size_t count;
    const wf_xml_node **items = src_items(L, s, &count, &text_el);
    if (keyed) {
        bool uses_t;
        p->type = spec_type(L, nc->node, ps->type, &uses_t);
        p->keys = anew(L, count * sizeof *p->keys);
    }
    p->items = anew(L, count * sizeof *p->items);
    if (!p->items || (keyed && !p->keys))
        return;
    for (size_t i = 0; i < count; i++) {
        const wf_xml_node *key_el = NULL;
        wfm_node **slot = &p->items[p->count];
        if (!keyed && is_x_null(items[i]))
            continue;
        place_item(L, nc, slot, items[i], ps, what, keyed, keyed ? &key_el : NULL);
        if (keyed && !item_key(L, nc, p, items[i], key_el, what, &p->keys[p->count]))
            continue;
        p->count++;
    }
    if (s->pel && !wf_xml_text_blank(s->pel->text))
        REPORT(L, nc, WF_E_SCHEMA, loc_text(L, s->pel), "unexpected text in %s", what);
}

/* <InvokeMethod.Parameters><InArgument x:TypeArguments="x:Int32">[a]</InArgument>... */
static void prop_params(wfm_load *L, nctx *nc, unsigned pi, const psrc *s)
{
    wfm__prop *p = wfm__node_prop(nc->node, pi);
    const char *what = label(L, nc, pi);
    if (s->attr) {
        REPORT(L, nc, WF_E_SCHEMA, loc_val(L, s->attr), "%s needs argument elements", what);
        return;
    }
    const wf_xml_node *text_el;
    size_t count;
    const wf_xml_node **items = src_items(L, s, &count, &text_el);
    if (count == 1 && is_params_content(items[0]))
        items = pel_items(L, items[0], &count);
    if (!items)
        return;
    p->params = anew(L, count * sizeof *p->params);
    if (!p->params)
        return;
    for (size_t i = 0; i < count; i++) {
        const wf_xml_node *c = items[i];
        wfm_prop_kind dir;
        if (!wrapper_dir(c, &dir)) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s cannot appear in %s", c->name, what);
            continue;
        }
        if (!wf_xml_attr_find(c, WFM__NS_XAML, "TypeArguments")) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s in %s needs x:TypeArguments", c->name,
                   what);
            continue;
        }
        binding b = {dir, NULL, NULL, wf_null(), what};
        if (!bind_wrapper(L, nc, &b, c))
            continue;
        const wf_xml_attr *key = wf_xml_attr_find(c, WFM__NS_XAML, "Key");
        p->params[p->count++] =
            (wfm__param){dir, b.type, b.expr, b.literal, loc_el(L, c), key ? astr(L, key->value) : NULL};
    }
}

/* Dynamic arguments: an open-ended attribute bound as one more parameter of PARAMS `pi`. */
wf_status wfm_load_bind_attr(wfm_load *L, wfm_node *node, unsigned pi, const char *name,
                             wfm_prop_kind dir, const wf_type *type, size_t *index)
{
    *index = SIZE_MAX;
    wfm__lnode *ln = wfm__load_lnode(L, node);
    const wfm_kind_spec *spec = node->kind->spec;
    if (!ln || !name || pi >= spec->prop_count || spec->props[pi].kind != WFM_PROP_PARAMS)
        return WF_OK;
    const wf_xml_attr *a = NULL;
    for (size_t i = 0; i < ln->unknown_count && !a; i++)
        if (!ln->unknown[i]->ns && !ln->claimed[i] && strcmp(ln->unknown[i]->name, name) == 0) {
            ln->claimed[i] = true;
            a = ln->unknown[i];
        }
    if (!a)
        return WF_OK;
    nctx nc = {node, (size_t)(ln - L->lnodes), ln->el, spec->name};
    size_t klen = strlen(spec->name), nlen = strlen(name);
    char *what = anew(L, klen + nlen + 2);
    if (!what)
        return WF_E_NOMEM;
    memcpy(what, spec->name, klen);
    what[klen] = '.';
    memcpy(what + klen + 1, name, nlen + 1);
    binding b = {dir, type, NULL, wf_null(), what};
    if (!bind_text(L, &nc, &b, a->value, loc_val(L, a)))
        return L->nomem ? WF_E_NOMEM : WF_OK;
    wfm__prop *p = wfm__node_prop(node, pi);
    wfm__param *params = anew(L, (p->count + 1) * sizeof *params);
    if (!params)
        return WF_E_NOMEM;
    if (p->count)
        memcpy(params, p->params, p->count * sizeof *params);
    params[p->count] = (wfm__param){dir, b.type, b.expr, b.literal, loc_val(L, a), NULL};
    p->params = params;
    p->present = true;
    *index = p->count++;
    return WF_OK;
}

const char *wfm_load_next_attr(wfm_load *L, const wfm_node *node, wf_loc *at)
{
    wfm__lnode *ln = wfm__load_lnode(L, node);
    for (size_t i = 0; ln && i < ln->unknown_count; i++)
        if (!ln->claimed[i]) {
            ln->claimed[i] = true;
            if (at)
                *at = loc_val(L, ln->unknown[i]);
            return ln->unknown[i]->name;
        }
    return NULL;
}

/* ---- delegates ------------------------------------------------------------------------ */
static bool delegate_arg(wfm_load *L, nctx *nc, const wf_xml_node *pel, wfm__delegate *d)
{
    static const char *const allowed[] = {"Name", NULL};
    for (const wf_xml_node *c = pel->first_child; c; c = c->next) {
        if (skip_el(L, c))
            continue;
        if (!is_acts(c->ns) || strcmp(c->name, "DelegateInArgument") != 0 || d->arg_name) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s cannot appear in ActivityAction.Argument",
                   c->name);
            return false;
        }
        if (!check_attrs(L, nc, c, allowed))
            return false;
        const wf_xml_attr *ta = wf_xml_attr_find(c, WFM__NS_XAML, "TypeArguments");
        const wf_type *t = NULL;
        if (ta && wfm__xt_type(L, c, ta->value, wfm__xt_first_type_len(ta->value), loc_val(L, ta),
                               &t) != WF_OK) {
            mark_bad(L, nc->ln);
            return false;
        }
        if (t && d->arg_type && t != d->arg_type) {
            REPORT(L, nc, WF_E_TYPE, loc_val(L, ta), "DelegateInArgument of %s in an action of %s",
                   t->name, d->arg_type->name);
            return false;
        }
        if (t)
            d->arg_type = t;
        const wf_xml_attr *na = wf_xml_attr_find(c, NULL, "Name");
        d->arg_name = astr(L, na ? na->value : "");
        if (d->arg_name && !*d->arg_name)
            d->arg_name = NULL;
    }
    return true;
}

static void delegate_body(wfm_load *L, nctx *nc, wfm__delegate *d, const wf_xml_node *body,
                          const char *what)
{
    wfm__scope_name name = {d->arg_name, d->arg_type ? d->arg_type : &wf_type_object, false};
    wfm__scope_frame frame = {L->scope, &name, d->arg_name ? 1 : 0};
    L->scope = &frame;
    d->body = build_item(L, body, nc, "Activity", what, false);
    if (!d->body)
        mark_bad(L, nc->ln);
    L->scope = frame.up;
}

static void read_action(wfm_load *L, nctx *nc, unsigned pi, const wf_xml_node *aa,
                        const char *what)
{
    const wfm_prop_spec *ps = &nc->node->kind->spec->props[pi];
    wfm__prop *p = wfm__node_prop(nc->node, pi);
    if (!p->delegate && !(p->delegate = anew(L, sizeof *p->delegate)))
        return;
    wfm__delegate *d = p->delegate;
    memset(d, 0, sizeof *d);
    d->loc = loc_el(L, aa);
    bool uses_t;
    d->arg_type = spec_type(L, nc->node, ps->type, &uses_t);
    binding b = {WFM_PROP_INOUT, d->arg_type, NULL, wf_null(), what};
    if (!check_attrs(L, nc, aa, NULL) || !reconcile(L, nc, &b, aa))
        return;
    d->arg_type = b.type;
    infer_t(nc, uses_t, b.type, ps->type);
    const wf_xml_node *body = NULL;
    for (const wf_xml_node *c = aa->first_child; c; c = c->next) {
        if (skip_el(L, c))
            continue;
        const wf_xml_node *cand = c;
        if (is_acts(c->ns) && strcmp(c->name, "ActivityAction.Argument") == 0) {
            if (!delegate_arg(L, nc, c, d))
                return;
            continue;
        }
        if (is_acts(c->ns) && strcmp(c->name, "ActivityAction.Handler") == 0) {
            size_t n;
            const wf_xml_node **items = pel_items(L, c, &n);
            if (n == 0)
                continue;
            cand = items[0];
        } else if (strchr(c->name, '.')) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "unknown element '%s' in ActivityAction",
                   c->name);
            continue;
        }
        if (body) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, cand), "more than one child in %s", what);
            continue;
        }
        body = cand;
    }
    p->type = d->arg_type;
    if (body)
        delegate_body(L, nc, d, body, what);
}

static void prop_delegate(wfm_load *L, nctx *nc, unsigned pi, const psrc *s)
{
    const char *what = label(L, nc, pi);
    if (s->attr) {
        REPORT(L, nc, WF_E_SCHEMA, loc_val(L, s->attr), "%s needs an ActivityAction element",
               what);
        return;
    }
    const wf_xml_node *text_el;
    size_t count;
    const wf_xml_node **items = src_items(L, s, &count, &text_el);
    for (size_t i = 0; i < count; i++) {
        const wf_xml_node *c = items[i];
        if (i > 0)
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "more than one child in %s", what);
        else if (!is_acts(c->ns) || strcmp(c->name, "ActivityAction") != 0)
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s cannot appear in %s (expects "
                   "ActivityAction)", c->name, what);
        else
            read_action(L, nc, pi, c, what);
    }
}

/* ---- variables ------------------------------------------------------------------------- */
typedef struct var_src {
    const wf_xml_attr *deflt;
    const wf_xml_node *deflt_el;
} var_src;

static void read_variable(wfm_load *L, nctx *nc, const wf_xml_node *c, wfm__var *v, var_src *vs)
{
    static const char *const allowed[] = {"Name", "Default", "Modifiers", NULL};
    v->loc = loc_el(L, c);
    v->writable = true;
    check_attrs(L, nc, c, allowed);
    const wf_xml_attr *ta = wf_xml_attr_find(c, WFM__NS_XAML, "TypeArguments");
    if (!ta)
        REPORT(L, nc, WF_E_SCHEMA, v->loc, "Variable needs x:TypeArguments");
    else if (wfm__xt_type(L, c, ta->value, wfm__xt_first_type_len(ta->value), loc_val(L, ta),
                          &v->type) != WF_OK)
        mark_bad(L, nc->ln);
    if (!v->type)
        v->type = &wf_type_object;
    const wf_xml_attr *na = wf_xml_attr_find(c, NULL, "Name");
    if (!na || !*na->value)
        REPORT(L, nc, WF_E_SCHEMA, v->loc, "Variable needs a Name");
    else
        v->name = astr(L, na->value);
    const wf_xml_attr *ma = wf_xml_attr_find(c, NULL, "Modifiers");
    if (ma && strstr(ma->value, "ReadOnly"))
        v->writable = false;
    vs->deflt = wf_xml_attr_find(c, NULL, "Default");
    for (const wf_xml_node *k = c->first_child; k; k = k->next) {
        if (skip_el(L, k))
            continue;
        if (is_acts(k->ns) && strcmp(k->name, "Variable.Default") == 0 && !vs->deflt &&
            !vs->deflt_el)
            vs->deflt_el = k;
        else
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, k), "%s cannot appear in Variable", k->name);
    }
}

/* Reads <Kind.Variables>; returns the frame names (NULL when there are none). */
static wfm__scope_name *read_variables(wfm_load *L, nctx *nc, var_src **srcs)
{
    const wf_xml_node *pel = NULL;
    for (const wf_xml_node *c = nc->el->first_child; c; c = c->next) {
        const char *m = skip_el(L, c) ? NULL : member_of(nc, c);
        if (m && strcmp(m, "Variables") == 0) {
            if (pel)
                REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s is set more than once", c->name);
            else
                pel = c;
        }
    }
    *srcs = NULL;
    if (!pel)
        return NULL;
    if (!(nc->node->kind->spec->flags & WFM_KIND_VARIABLES)) {
        REPORT(L, nc, WF_E_SCHEMA, loc_el(L, pel), "%s does not accept Variables", nc->kname);
        for (const wf_xml_node *c = pel->first_child; c; c = c->next) {
            const wf_xml_attr *na = skip_el(L, c) ? NULL : wf_xml_attr_find(c, NULL, "Name");
            name_rejected(L, na ? na->value : NULL);
        }
        return NULL;
    }
    size_t n;
    const wf_xml_node **items = pel_items(L, pel, &n);
    wfm__var *vars = anew(L, n * sizeof *vars);
    wfm__scope_name *names = tnew(L, n * sizeof *names);
    *srcs = tnew(L, n * sizeof **srcs);
    if (!items || !vars || !names || !*srcs)
        return NULL;
    uint32_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const wf_xml_node *c = items[i];
        if (is_x_reference(c)) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c),
                   "x:Reference to a variable declared elsewhere is not supported in "
                   "%s.Variables",
                   nc->kname);
            continue;
        }
        if (!is_acts(c->ns) || strcmp(c->name, "Variable") != 0) {
            REPORT(L, nc, WF_E_SCHEMA, loc_el(L, c), "%s cannot appear in %s.Variables", c->name,
                   nc->kname);
            continue;
        }
        wfm__var *v = &vars[count];
        read_variable(L, nc, c, v, &(*srcs)[count]);
        for (uint32_t j = 0; v->name && j < count; j++) {
            if (vars[j].name && strcmp(vars[j].name, v->name) == 0) {
                const wf_xml_attr *na = wf_xml_attr_find(c, NULL, "Name");
                REPORT(L, nc, WF_E_SCHEMA, loc_val(L, na), "duplicate variable '%s' in %s",
                       v->name, nc->kname);
                v->name = NULL;
            }
        }
        names[count] = (wfm__scope_name){v->name, v->type, v->writable};
        count++;
    }
    nc->node->vars = vars;
    nc->node->var_count = count;
    nc->node->creates_env = count > 0;
    return names;
}

static void variable_defaults(wfm_load *L, nctx *nc, const var_src *srcs)
{
    for (uint32_t i = 0; i < nc->node->var_count; i++) {
        wfm__var *v = &nc->node->vars[i];
        char what[160];
        snprintf(what, sizeof what, "Variable '%s'", v->name ? v->name : "");
        binding b = {WFM_PROP_IN, v->type, NULL, wf_type_default(v->type), what};
        bool ok = true;
        if (srcs[i].deflt) {
            b.literal = wf_null();
            ok = bind_text(L, nc, &b, srcs[i].deflt->value, loc_val(L, srcs[i].deflt));
        } else if (srcs[i].deflt_el) {
            size_t n;
            const wf_xml_node **items = pel_items(L, srcs[i].deflt_el, &n);
            b.literal = wf_null();
            ok = bind_items(L, nc, &b, items, n, srcs[i].deflt_el);
            if (ok && !b.expr && wf_is_null(&b.literal))
                b.literal = wf_type_default(v->type);
        }
        if (!ok)
            continue;
        v->expr = b.expr;
        v->literal = b.literal;
    }
}

/* ---- nodes ----------------------------------------------------------------------------- */
/* A node of `kind` under `parent` with its properties in the same allocation; value
 * properties hold null until set. */
static wfm_node *new_node(wfm_load *L, const wfm_kind *kind, wf_loc loc, const nctx *parent)
{
    const wfm_kind_spec *spec = kind->spec;
    wfm_node *node = anew(L, sizeof *node + kind->props_size);
    if (!node)
        return NULL;
    node->kind = kind;
    node->line = loc.line;
    node->col = loc.col;
    node->parent = parent ? parent->node : NULL;
    node->index = UINT32_MAX; /* until numbered */
    /* the top node of a file's tree names the file (wfm_node_loc) */
    bool top = !parent || parent->ln >= L->lnode_count || L->lnodes[parent->ln].src != L->src;
    if ((top || spec->prepare || spec->bind) && !(node->extra = anew(L, sizeof *node->extra)))
        return NULL;
    if (top) {
        node->extra->file = L->file;
        node->extra->def = L->def;
    }
    for (size_t i = 0; i < spec->prop_count; i++)
        if (wfm__prop_is_value(spec->props[i].kind))
            wfm__node_prop(node, (unsigned)i)->literal = wf_null();
    return node;
}

/* Set the node's DisplayName or x:Name (NULL: leave as it is). */
static void set_names(wfm_load *L, wfm_node *node, const char *display_name, const char *x_name)
{
    wfm__node_extra *n = node->extra;
    if (!n && !(n = anew(L, sizeof *n)))
        return;
    node->extra = n;
    if (display_name && !(n->display_name = astr(L, display_name)))
        return;
    if (x_name)
        n->x_name = astr(L, x_name);
}

static size_t add_lnode(wfm_load *L, wfm_node *node, const wf_xml_node *el)
{
    if (L->lnode_count == L->lnode_cap) {
        size_t cap = L->lnode_cap ? L->lnode_cap * 2 : L->main_elements ? L->main_elements : 64;
        wfm__lnode *ln = wf_realloc(L->lnodes, cap * sizeof *ln);
        if (!ln) {
            L->nomem = true;
            return SIZE_MAX;
        }
        L->lnodes = ln;
        L->lnode_cap = cap;
    }
    L->lnodes[L->lnode_count] = (wfm__lnode){node, el, L->src, NULL, NULL, 0, false};
    return L->lnode_count++;
}

wfm__lnode *wfm__load_lnode(wfm_load *L, const wfm_node *node)
{
    if (L->cur_lnode < L->lnode_count && L->lnodes[L->cur_lnode].node == node)
        return &L->lnodes[L->cur_lnode];
    for (size_t i = 0; i < L->lnode_count; i++)
        if (L->lnodes[i].node == node)
            return &L->lnodes[i];
    return NULL;
}

static void type_arguments(wfm_load *L, nctx *nc)
{
    const wf_xml_attr *ta = wf_xml_attr_find(nc->el, WFM__NS_XAML, "TypeArguments");
    if (!ta)
        return;
    if (!(nc->node->kind->spec->flags & WFM_KIND_GENERIC)) {
        REPORT(L, nc, WF_E_SCHEMA, loc_attr(L, ta), "%s does not take x:TypeArguments",
               nc->kname);
        return;
    }
    const wf_type *t = NULL;
    if (wfm__xt_type(L, nc->el, ta->value, wfm__xt_first_type_len(ta->value), loc_val(L, ta),
                     &t) != WF_OK)
        mark_bad(L, nc->ln);
    else
        wfm__node_set_type_arg(nc->node, t);
}

/* Absent property: defaults and the REQUIRED check. */
static void prop_absent(wfm_load *L, nctx *nc, unsigned pi)
{
    const wfm_prop_spec *ps = &nc->node->kind->spec->props[pi];
    wfm__prop *p = wfm__node_prop(nc->node, pi);
    if (ps->flags & WFM_PROP_REQUIRED) {
        REPORT(L, nc, WF_E_SCHEMA, loc_el(L, nc->el), "%s is required", label(L, nc, pi));
        return;
    }
    bool uses_t;
    p->type = spec_type(L, nc->node, ps->type, &uses_t);
    if (ps->kind != WFM_PROP_IN && ps->kind != WFM_PROP_LITERAL && ps->kind != WFM_PROP_INOUT)
        return;
    if (ps->deflt && ps->kind != WFM_PROP_INOUT) {
        if (wfm__xt_literal(L, p->type, ps->deflt, loc_el(L, nc->el), &p->literal) != WF_OK)
            mark_bad(L, nc->ln);
    } else if (ps->kind != WFM_PROP_LITERAL) {
        p->literal = wf_type_default(p->type);
    }
}

static void process_prop(wfm_load *L, nctx *nc, unsigned pi, const psrc *s)
{
    if (!s->attr && !s->pel && !s->count && !s->text_el) {
        prop_absent(L, nc, pi);
        return;
    }
    wfm__node_prop(nc->node, pi)->present = true;
    switch (nc->node->kind->spec->props[pi].kind) {
    case WFM_PROP_IN:
    case WFM_PROP_OUT:
    case WFM_PROP_INOUT: prop_binding(L, nc, pi, s); break;
    case WFM_PROP_LITERAL: prop_literal(L, nc, pi, s); break;
    case WFM_PROP_ACTIVITY:
    case WFM_PROP_NODE: prop_single(L, nc, pi, s); break;
    case WFM_PROP_ACTIVITIES:
    case WFM_PROP_NODES:
    case WFM_PROP_KEYED: prop_many(L, nc, pi, s); break;
    case WFM_PROP_DELEGATE: prop_delegate(L, nc, pi, s); break;
    case WFM_PROP_PARAMS: prop_params(L, nc, pi, s); break;
    case WFM_PROP_TYPE: prop_type(L, nc, pi, s); break;
    }
}

/* Locations first (they fix a generic kind's T, as Assign.To does), then delegates, then the
 * rest in spec order. */
static int prop_rank(wfm_prop_kind k)
{
    return k == WFM_PROP_OUT || k == WFM_PROP_INOUT ? 0 : k == WFM_PROP_DELEGATE ? 1 : 2;
}

static void process_props(wfm_load *L, nctx *nc, const psrc *src)
{
    const wfm_kind_spec *spec = nc->node->kind->spec;
    for (int rank = 0; rank < 3; rank++)
        for (unsigned pi = 0; pi < spec->prop_count; pi++)
            if (prop_rank(spec->props[pi].kind) == rank)
                process_prop(L, nc, pi, &src[pi]);
}

/* Enter the node's x:Name (if any) in the x:Name map of the file being read. */
static void register_name(wfm_load *L, nctx *nc)
{
    const char *name = wfm_node_x_name(nc->node);
    if (!name)
        return;
    if (wf_strmap_get(L->names, name))
        REPORT(L, nc, WF_E_SCHEMA, loc_val(L, wf_xml_attr_find(nc->el, WFM__NS_XAML, "Name")),
               "duplicate x:Name '%s'", name);
    else if (wf_strmap_put(L->names, name, (void *)(uintptr_t)(nc->ln + 1)) != WF_OK)
        L->nomem = true;
}

static wfm_node *build_node(wfm_load *L, const wf_xml_node *el, const wfm_kind *kind,
                            nctx *parent, bool keyed)
{
    const wfm_kind_spec *spec = kind->spec;
    wfm_node *node = new_node(L, kind, loc_el(L, el), parent);
    psrc *src = tnew(L, spec->prop_count * sizeof *src);
    if (!node || !src)
        return NULL;
    nctx nc = {node, add_lnode(L, node, el), el, spec->name};
    if (nc.ln == SIZE_MAX)
        return NULL;
    type_arguments(L, &nc);
    var_src *vsrc;
    wfm__scope_name *names = read_variables(L, &nc, &vsrc);
    wfm__scope_frame frame = {L->scope, names, node->var_count};
    if (node->creates_env)
        L->scope = &frame;
    if (node->creates_env && vsrc)
        variable_defaults(L, &nc, vsrc);
    gather_attrs(L, &nc, src, keyed);
    gather_children(L, &nc, src, keyed);
    process_props(L, &nc, src);
    if (spec->bind && !L->lnodes[nc.ln].bad) {
        L->cur_lnode = nc.ln;
        size_t errors = L->errors;
        if (spec->bind(L, node) == WF_E_NOMEM)
            L->nomem = true;
        /* A bind that failed (a type library not found, say) claimed none of the attributes
         * it reads: reporting each as unknown would only repeat its error. */
        if (L->errors > errors)
            L->lnodes[nc.ln].bad = true;
        L->cur_lnode = SIZE_MAX;
    }
    if (node->creates_env)
        L->scope = frame.up;
    register_name(L, &nc);
    return node;
}

/* The x:Name of an element that could not be built (already reported) resolves to
 * FAILED_NAME, so an x:Reference to it is not reported a second time. */
#define FAILED_NAME UINTPTR_MAX

static void name_failed(wfm_load *L, const wf_xml_node *c)
{
    const wf_xml_attr *na = wf_xml_attr_find(c, WFM__NS_XAML, "Name");
    if (na && *na->value && !wf_strmap_get(L->names, na->value) &&
        wf_strmap_put(L->names, na->value, (void *)FAILED_NAME) != WF_OK)
        L->nomem = true;
}

#define NS_SERVICEMODEL "http://schemas.microsoft.com/netfx/2009/xaml/servicemodel"

/* WF4's Interop activity lives in System.Workflow.Runtime under the Statements namespace. */
static bool is_interop_ns(const char *ns)
{
    return ns_starts(ns, "clr-namespace:System.Activities.Statements;") &&
           strstr(ns, "assembly=System.Workflow.Runtime");
}

/* "unknown activity 'X'" with what the namespace says about it: a WCF messaging activity,
 * a custom activity from a .NET assembly, or a WF4 activity the catalogue lacks. */
static void report_unknown(wfm_load *L, const wf_xml_node *c)
{
    const char *ns = c->ns ? c->ns : "";
    const char *asm_at = strstr(ns, "ssembly=");
    if (is_interop_ns(ns))
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c),
                       "unknown activity '%s' (System.Workflow.Runtime: not in the activity "
                       "catalogue)",
                       c->name);
    else if (is_ns(ns, NS_SERVICEMODEL))
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c),
                       "unknown activity '%s' (of the WCF messaging activities only Receive, "
                       "SendReply, Send and ReceiveReply are supported)",
                       c->name);
    else if (ns_starts(ns, "clr-namespace:") && asm_at && asm_at[8])
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c),
                       "unknown activity '%s' (a custom activity from assembly '%.*s')", c->name,
                       (int)strcspn(asm_at + 8, ";, "), asm_at + 8);
    else if (ns_starts(ns, "clr-namespace:"))
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c), "unknown activity '%s' (a custom activity)",
                       c->name);
    else if (is_acts(ns))
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c),
                       "unknown activity '%s' (not in the activity catalogue)", c->name);
    else if (*ns)
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c),
                       "unknown activity '%s' (a custom activity from namespace '%s')", c->name,
                       ns);
    else
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c), "unknown activity '%s'", c->name);
}

/* wfm_catalogue_find through the load's memo (wfm_load_int.h). */
static const wfm_kind *find_kind(wfm_load *L, const char *ns, const char *name)
{
    size_t slot = (size_t)(((uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15u) >> 58); /* 0..63 */
    if (L->kind_memo[slot].name == name && L->kind_memo[slot].ns == ns)
        return L->kind_memo[slot].kind;
    const wfm_kind *kind = wfm_catalogue_find(L->opts->catalogue, ns, name);
    L->kind_memo[slot].ns = ns;
    L->kind_memo[slot].name = name;
    L->kind_memo[slot].kind = kind;
    return kind;
}

static wfm_node *build_item(wfm_load *L, const wf_xml_node *c, nctx *parent, const char *accepts,
                            const char *what, bool keyed)
{
    if (L->nomem)
        return NULL;
    /* An element in no namespace is never an activity (find treats NULL as the default). */
    const wfm_kind *kind = c->ns ? find_kind(L, c->ns, c->name) : NULL;
    if (!kind && (is_acts_clr(c->ns) || is_interop_ns(c->ns)))
        kind = wfm_catalogue_find(L->opts->catalogue, WFM_NS_ACTIVITIES, c->name);
    if (!kind && is_type_ns(L, c->ns) && strcmp(accepts, "Activity") == 0)
        return expand_type(L, c, parent, keyed);
    if (!kind || is_ns(c->ns, WFM__NS_ACTTYPE)) {
        report_unknown(L, c);
        name_failed(L, c);
        return NULL;
    }
    if (strcmp(kind->spec->category, accepts) != 0) {
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c), "%s cannot appear in %s", c->name, what);
        name_failed(L, c);
        return NULL;
    }
    return build_node(L, c, kind, parent, keyed);
}

/* ---- the root: <Activity x:Class> with x:Members, or a bare activity -------------------- */
static const char *class_short(const wfm_load *L)
{
    const char *c = L->def->class_name;
    if (!c)
        return NULL;
    const char *dot = strrchr(c, '.');
    return dot ? dot + 1 : c;
}

static wfm_prop_kind arg_dir(const char *t, size_t *skip)
{
    static const struct {
        const char *head;
        wfm_prop_kind dir;
    } heads[] = {{"InArgument(", WFM_PROP_IN},
                 {"OutArgument(", WFM_PROP_OUT},
                 {"InOutArgument(", WFM_PROP_INOUT}};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(heads[i].head);
        if (strncmp(t, heads[i].head, n) == 0) {
            *skip = n;
            return heads[i].dir;
        }
    }
    *skip = 0;
    return WFM_PROP_LITERAL;
}

static bool read_member(wfm_load *L, const wf_xml_node *c, wfm__arg *a)
{
    static const char *const allowed[] = {"Name", "Type", NULL};
    bool ok = check_attrs(L, NULL, c, allowed);
    for (const wf_xml_node *k = c->first_child; k; k = k->next)
        if (!skip_el(L, k) &&
            !(wfm__xt_is_x(k->ns) && strcmp(k->name, "Property.Attributes") == 0)) {
            wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, k), "%s cannot appear in x:Property", k->name);
            ok = false;
        }
    const wf_xml_attr *na = wf_xml_attr_find(c, NULL, "Name");
    const wf_xml_attr *ta = wf_xml_attr_find(c, NULL, "Type");
    a->loc = loc_el(L, c);
    if (!na || !ta) {
        wfm__xt_report(L, WF_E_SCHEMA, a->loc, "x:Property needs Name and Type");
        return false;
    }
    a->name = astr(L, na->value);
    size_t len, skip;
    wf_loc at = loc_val(L, ta);
    const char *t = trim_at(ta->value, &at, &len);
    const char *colon = memchr(t, ':', len), *paren = memchr(t, '(', len);
    if (colon && paren && colon < paren) { /* "p:InArgument(...)" with a prefixed default ns */
        at.col += (unsigned)(colon + 1 - t);
        len -= (size_t)(colon + 1 - t);
        t = colon + 1;
    }
    a->dir = arg_dir(t, &skip);
    if (a->dir == WFM_PROP_LITERAL || t[len - 1] != ')') {
        wfm__xt_report(L, WF_E_SCHEMA, at,
                       "x:Property '%s' must be an InArgument, OutArgument or InOutArgument",
                       na->value);
        return false;
    }
    at.col += (unsigned)skip;
    if (wfm__xt_type(L, c, t + skip, len - skip - 1, at, &a->type) != WF_OK)
        return false;
    return ok && a->name;
}

static void read_members(wfm_load *L, const wf_xml_node *members, wfm__scope_name **names)
{
    size_t n;
    const wf_xml_node **items = pel_items(L, members, &n);
    wfm__arg *args = anew(L, n * sizeof *args);
    *names = tnew(L, n * sizeof **names);
    if (!items || !args || !*names)
        return;
    uint32_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const wf_xml_node *c = items[i];
        if (!wfm__xt_is_x(c->ns) || strcmp(c->name, "Property") != 0) {
            wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c), "%s cannot appear in x:Members", c->name);
            continue;
        }
        wfm__arg *a = &args[count];
        if (!read_member(L, c, a)) {
            const wf_xml_attr *na = wf_xml_attr_find(c, NULL, "Name");
            name_rejected(L, na ? na->value : NULL);
            continue;
        }
        bool dup = false;
        for (uint32_t j = 0; j < count; j++)
            dup = dup || strcmp(args[j].name, a->name) == 0;
        if (dup) {
            wfm__xt_report(L, WF_E_SCHEMA, loc_val(L, wf_xml_attr_find(c, NULL, "Name")),
                           "duplicate argument '%s'", a->name);
            continue;
        }
        a->slot = count;
        a->literal = wf_type_default(a->type);
        (*names)[count] = (wfm__scope_name){a->name, a->type, true};
        count++;
    }
    L->def->args = args;
    L->def->arg_count = count;
}

/* "this:Wf.Arg" as attribute or property element: the argument it names, or NULL. */
/* Whether "Wf.Arg" in a clr-namespace names a member of this x:Class. */
static bool names_class(const wfm_load *L, const char *ns, const char *name)
{
    const char *dot = strchr(name, '.');
    const char *cls = class_short(L);
    return dot && ns_starts(ns, "clr-namespace:") && cls &&
           strlen(cls) == (size_t)(dot - name) && strncmp(name, cls, (size_t)(dot - name)) == 0;
}

static wfm__arg *default_target(wfm_load *L, const char *ns, const char *name)
{
    const char *dot = strchr(name, '.');
    if (!names_class(L, ns, name))
        return NULL;
    for (uint32_t i = 0; i < L->def->arg_count; i++)
        if (strcmp(L->def->args[i].name, dot + 1) == 0)
            return &L->def->args[i];
    return NULL;
}

static void arg_default(wfm_load *L, wfm__arg *a, const wf_xml_attr *attr, const wf_xml_node *pel)
{
    binding b = {WFM_PROP_IN, a->type, NULL, wf_null(), a->name};
    bool ok;
    if (attr) {
        ok = bind_text(L, NULL, &b, attr->value, loc_val(L, attr));
    } else {
        size_t n;
        const wf_xml_node **items = pel_items(L, pel, &n);
        ok = bind_items(L, NULL, &b, items, n, pel);
    }
    if (!ok)
        return;
    a->expr = b.expr;
    a->literal = b.literal;
    a->has_default = true;
}

/* Whether x:Members declares `name` (after the '.' of "Class.Name"): a default for a member
 * that was rejected is not reported again. */
static bool member_declared(const wf_xml_node *root, const char *member)
{
    const char *dot = strchr(member, '.');
    const char *name = dot ? dot + 1 : member;
    for (const wf_xml_node *m = root->first_child; m; m = m->next) {
        if (!wfm__xt_is_x(m->ns) || strcmp(m->name, "Members") != 0)
            continue;
        for (const wf_xml_node *c = m->first_child; c; c = c->next) {
            const wf_xml_attr *na = wfm__xt_is_x(c->ns) && strcmp(c->name, "Property") == 0
                                        ? wf_xml_attr_find(c, NULL, "Name")
                                        : NULL;
            if (na && strcmp(na->value, name) == 0)
                return true;
        }
    }
    return false;
}

/* WF4's WorkflowService Name and ConfigurationName, attached to the root: the name is the
 * service's (serve's WSDL); the configuration name has nothing to configure here. */
static bool service_attr(wfm_load *L, const wf_xml_attr *a)
{
    if (!a->ns || !is_ns(a->ns, NS_SERVICEMODEL))
        return false;
    if (strcmp(a->name, "WorkflowService.Name") == 0)
        L->def->service_name = astr(L, a->value);
    return strcmp(a->name, "WorkflowService.Name") == 0 ||
           strcmp(a->name, "WorkflowService.ConfigurationName") == 0;
}

static void root_attrs(wfm_load *L, const wf_xml_node *root)
{
    for (size_t i = 0; i < root->attr_count; i++) {
        const wf_xml_attr *a = &root->attrs[i];
        if (skip_attr(L, root, a) || (wfm__xt_is_x(a->ns) && strcmp(a->name, "Class") == 0))
            continue;
        if (service_attr(L, a))
            continue;
        wfm__arg *arg = default_target(L, a->ns, a->name);
        if (arg)
            arg_default(L, arg, a, NULL);
        else if (names_class(L, a->ns, a->name) && member_declared(root, a->name))
            continue; /* a rejected x:Property: its own error is reported */
        else if (attached_ignored(L, root, a->ns, a->prefix, a->name, loc_attr(L, a), NULL))
            continue;
        else if (strchr(a->name, '.') && ns_starts(a->ns, "clr-namespace:") && class_short(L))
            wfm__xt_report(L, WF_E_NAME, loc_attr(L, a), "unknown argument '%s'", a->name);
        else
            wfm__xt_report(L, WF_E_SCHEMA, loc_attr(L, a), "unknown attribute '%s' on Activity",
                           a->name);
    }
}

/* Whether the root carries what the WF4 designer writes (mc:Ignorable, view state, text
 * expression imports, VisualBasic.Settings): a designer file with no activity yet. A
 * hand-written root without a body stays an error (most likely a forgotten body). */
static bool designer_written(wfm_load *L, const wf_xml_node *root)
{
    if (wf_xml_attr_find(root, WFM__NS_MC, "Ignorable"))
        return true;
    for (size_t i = 0; i < root->attr_count; i++)
        if (root->attrs[i].ns && !is_ns(root->attrs[i].ns, NS_XML) &&
            skip_attr(L, root, &root->attrs[i]))
            return true;
    for (const wf_xml_node *c = root->first_child; c; c = c->next)
        if (skip_el(L, c))
            return true;
    return false;
}

/* A new designer file (<Activity x:Class> with members and view state but no activity yet)
 * is valid WF4 and does nothing when run: its body becomes an empty Sequence. */
static wfm_node *empty_body(wfm_load *L, const wf_xml_node *root, const nctx *parent)
{
    const wfm_kind *kind = wfm_catalogue_find(L->opts->catalogue, WFM_NS_ACTIVITIES, "Sequence");
    if (!kind) {
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, root), "Activity has no body activity");
        return NULL;
    }
    wfm_node *node = new_node(L, kind, loc_el(L, root), parent);
    if (!node)
        return NULL;
    assert(kind->is_activity); /* its own owner */
    nctx nc = {node, add_lnode(L, node, root), root, kind->spec->name};
    if (nc.ln == SIZE_MAX)
        return NULL;
    for (unsigned i = 0; i < kind->spec->prop_count; i++)
        prop_absent(L, &nc, i);
    return node;
}

/* Members, argument defaults and body of an <Activity> root, in a scope of its arguments only
 * (into L->def->args). The body is built under `parent` (NULL: the definition's root body;
 * an activity type's wrapper otherwise). Returns the body, NULL when there is none. */
static wfm_node *activity_body(wfm_load *L, const wf_xml_node *root, nctx *parent)
{
    const wf_xml_attr *ca = wf_xml_attr_find(root, WFM__NS_XAML, "Class");
    if (ca)
        L->def->class_name = astr(L, ca->value);
    wfm__scope_name *names = NULL;
    const wf_xml_node *body = NULL;
    for (const wf_xml_node *c = root->first_child; c; c = c->next)
        if (!skip_el(L, c) && wfm__xt_is_x(c->ns) && strcmp(c->name, "Members") == 0)
            read_members(L, c, &names);
    wfm__scope_frame frame = {NULL, names, L->def->arg_count}, *outer = L->scope;
    wfm_node *node = NULL;
    L->scope = &frame;
    root_attrs(L, root);
    for (const wf_xml_node *c = root->first_child; c; c = c->next) {
        if (skip_el(L, c) || (wfm__xt_is_x(c->ns) && strcmp(c->name, "Members") == 0))
            continue;
        wfm__arg *arg = default_target(L, c->ns, c->name);
        if (arg) {
            arg_default(L, arg, NULL, c);
        } else if (names_class(L, c->ns, c->name) && member_declared(root, c->name)) {
            continue; /* a rejected x:Property: its own error is reported */
        } else if (attached_ignored(L, c, c->ns, c->prefix, c->name, loc_el(L, c), NULL)) {
            continue;
        } else if (strchr(c->name, '.')) {
            wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c), "unknown element '%s' in Activity",
                           c->name);
        } else if (body) {
            wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c), "more than one child in Activity");
        } else {
            body = c;
            node = build_item(L, c, parent, "Activity", "Activity", false);
        }
    }
    if (!body && designer_written(L, root))
        node = empty_body(L, root, parent);
    else if (!body)
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, root), "Activity has no body activity");
    L->scope = outer;
    return node;
}

static void build_activity_root(wfm_load *L, const wf_xml_node *root)
{
    L->def->root = activity_body(L, root, NULL);
}

static void build_root(wfm_load *L)
{
    const wf_xml_node *root = wf_xml_root(L->doc);
    if (is_acts(root->ns) && strcmp(root->name, "Activity") == 0) {
        build_activity_root(L, root);
        return;
    }
    if (is_ns(root->ns, NS_SERVICEMODEL) && strcmp(root->name, "WorkflowService") == 0) {
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, root),
                       "unknown activity 'WorkflowService' (a WCF workflow service, .xamlx, is "
                       "not supported; the root must be an Activity)");
        return;
    }
    wfm__scope_frame frame = {NULL, NULL, 0};
    L->scope = &frame;
    L->def->root = build_item(L, root, NULL, "Activity", "the document", false);
    L->scope = NULL;
}

/* ---- XAML activity types (docs/architecture.md "XAML activity types") ------------------------ */
/* Switch the file being read: an activity type's, or (NULL) the definition's own. */
static void use_src(wfm_load *L, const wfm__src *s)
{
    L->src = s;
    L->doc = s ? s->doc : L->main_doc;
    L->file = s ? s->file : L->def->path;
    L->data = s ? s->data : L->main_data;
    L->len = s ? s->len : L->main_len;
}

/* "clr-namespace:NS;assembly=LIB" (or Assembly=) outside System.Activities: an element in it
 * may name an activity type on the library path. */
static bool is_type_ns(const wfm_load *L, const char *ns)
{
    if (!L->opts->libpath || !ns_starts(ns, "clr-namespace:") || is_acts_clr(ns) ||
        is_interop_ns(ns))
        return false;
    const char *as = strstr(ns, "ssembly=");
    return as && as[8] && as[8] != ';';
}

/* "NS.Name" for element c (just "Name" when NS is empty), in the definition's arena. */
static const char *type_class(wfm_load *L, const wf_xml_node *c)
{
    const char *ns = c->ns + strlen("clr-namespace:");
    size_t nl = strcspn(ns, ";"), cl = strlen(c->name);
    while (nl && ns[nl - 1] == ' ')
        nl--;
    char *cls = anew(L, nl + cl + 2);
    if (!cls)
        return NULL;
    memcpy(cls, ns, nl);
    if (nl)
        cls[nl++] = '.';
    memcpy(cls + nl, c->name, cl + 1);
    return cls;
}

/* digest = SHA-256(data), or with `chain` SHA-256(digest || data): the definition's digest
 * covers its file and then each activity type file it expands, in load order. */
static void sha256_chain(unsigned char digest[SHA256_DIGEST_SIZE], bool chain, const void *data,
                         size_t len)
{
    struct sha256_ctx c;
    sha256_init(&c);
    if (chain)
        sha256_update(&c, SHA256_DIGEST_SIZE, digest);
    sha256_update(&c, len, data);
    sha256_digest(&c, SHA256_DIGEST_SIZE, digest);
}

/* Read and parse the type file at `path`; NULL when reported (at c) or out of memory. */
static wfm__src *read_type(wfm_load *L, const wf_xml_node *c, const char *cls, const char *path)
{
    wfm__src *s = wf_calloc(1, sizeof *s);
    const char *file = astr(L, path);
    if (!s || !file) {
        wf_free(s);
        L->nomem = true;
        return NULL;
    }
    s->file = file;
    s->next = L->srcs;
    L->srcs = s;
    size_t max = L->opts->xml_limits ? L->opts->xml_limits->max_bytes : 0;
    wf_buf_init(&s->buf);
    wf_error e = WF_ERROR_INIT;
    wf_status rc = wf_file_read(path, max, &s->buf, &e);
    s->data = s->buf.data;
    s->len = s->buf.len;
    if (rc == WF_OK)
        rc = wf_xml_load_mem(file, s->data, s->len, L->opts->xml_limits, &s->doc, &e);
    else if (rc != WF_E_NOMEM) {
        wfm__xt_report(L, rc, loc_el(L, c), "activity type '%s': %s", cls, e.message);
        return NULL;
    }
    if (rc == WF_E_NOMEM)
        L->nomem = true;
    else if (rc != WF_OK) { /* located in the type's file */
        L->errors++;
        wfm__load_diag(L, WF_SEV_ERROR, &e);
    }
    if (rc != WF_OK)
        return NULL;
    /* the definition's identity covers the types it expands (a saved instance refuses a
       changed type, docs/durability.md) */
    L->def->hash = L->def->hash * 0x100000001b3ull ^ wf_hash_bytes(s->data, s->len);
    sha256_chain(L->def->sha256, true, s->data, s->len);
    return s;
}

/* Find, read and check the type for element c: "NS.Name" is Name.xaml on the library path,
 * whose root is <Activity x:Class="NS.Name">. NULL when reported. */
static wfm__src *find_type(wfm_load *L, const wf_xml_node *c, const char *cls)
{
    for (size_t i = 0; i < L->type_depth; i++)
        if (strcmp(L->types_open[i], cls) == 0) {
            wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c),
                           "activity type '%s' uses itself (through '%s')", cls,
                           L->types_open[L->type_depth - 1]);
            return NULL;
        }
    if (L->type_depth == WFM__TYPE_DEPTH) {
        wfm__xt_report(L, WF_E_LIMIT, loc_el(L, c),
                       "activity type '%s' is nested more than %d types deep", cls,
                       WFM__TYPE_DEPTH);
        return NULL;
    }
    char file[256], path[4096];
    if (snprintf(file, sizeof file, "%s.xaml", c->name) >= (int)sizeof file) {
        wfm__xt_report(L, WF_E_LIMIT, loc_el(L, c), "activity type name '%s' is too long",
                       c->name);
        return NULL;
    }
    wf_error e = WF_ERROR_INIT;
    wf_status rc = wf_libpath_find(L->opts->libpath, file, path, sizeof path, &e);
    if (rc == WF_E_NOMEM) {
        L->nomem = true;
        return NULL;
    }
    if (rc != WF_OK) {
        wfm__xt_report(L, WF_E_SCHEMA, loc_el(L, c),
                       "unknown activity '%s' (activity type '%s': no %s on the library path)",
                       c->name, cls, file);
        return NULL;
    }
    wfm__src *s = read_type(L, c, cls, path);
    if (!s)
        return NULL;
    const wf_xml_node *root = wf_xml_root(s->doc);
    const wf_xml_attr *ca = wf_xml_attr_find(root, WFM__NS_XAML, "Class");
    if (!is_acts(root->ns) || strcmp(root->name, "Activity") != 0 || !ca ||
        strcmp(ca->value, cls) != 0) {
        const wfm__src *caller = L->src;
        use_src(L, s);
        wfm__xt_report(L, WF_E_SCHEMA, ca ? loc_val(L, ca) : loc_el(L, root),
                       "activity type '%s' must be <Activity x:Class=\"%s\">", cls, cls);
        use_src(L, caller);
        return NULL;
    }
    return s;
}

/* The type's members, defaults and body under wrapper wc, read from s in a scope of the type's
 * arguments only, with x:Name and x:Reference private to the type. The arguments become the
 * wrapper's variables. */
static void expand_body(wfm_load *L, nctx *wc, const wfm__src *s, const char *cls)
{
    wfm_definition *def = L->def;
    const wfm__src *caller = L->src;
    const char *cname = def->class_name;
    wfm__arg *args = def->args;
    uint32_t arg_count = def->arg_count;
    wf_strmap *names = L->names;
    wfm__pending_ref *refs = L->refs;
    size_t ref_count = L->ref_count, ref_cap = L->ref_cap;
    def->class_name = cls;
    def->args = NULL;
    def->arg_count = 0;
    L->refs = NULL;
    L->ref_count = L->ref_cap = 0;
    L->names = wf_strmap_create(NULL);
    L->types_open[L->type_depth++] = cls;
    use_src(L, s);
    if (!L->names)
        L->nomem = true;
    else
        wfm__node_prop(wc->node, WFM__TYPE_BODY)->child = activity_body(L, wf_xml_root(s->doc), wc);
    if (!L->nomem)
        resolve_refs(L);
    wfm__var *vars = anew(L, def->arg_count * sizeof *vars);
    for (uint32_t i = 0; vars && i < def->arg_count; i++) {
        const wfm__arg *a = &def->args[i];
        vars[i] = (wfm__var){a->name, a->type, a->expr, a->literal, true, a->loc};
    }
    if (vars) {
        wc->node->vars = vars;
        wc->node->var_count = def->arg_count;
        wc->node->creates_env = def->arg_count > 0;
    }
    use_src(L, caller);
    L->type_depth--;
    wf_strmap_destroy(L->names);
    wf_free(L->refs);
    L->names = names;
    L->refs = refs;
    L->ref_count = ref_count;
    L->ref_cap = ref_cap;
    /* keep the type's arguments for binding; restore the definition's */
    wfm__node_prop(wc->node, WFM__TYPE_BODY)->present = true;
    L->type_args = def->args;
    L->type_arg_count = def->arg_count;
    def->class_name = cname;
    def->args = args;
    def->arg_count = arg_count;
}

/* One attribute of the using element bound to the type's argument `a` (slot `slot`). */
static void type_attr(wfm_load *L, nctx *wc, const wfm__arg *a, const wf_xml_attr *at,
                      uint32_t *slots)
{
    wfm__prop *p = wfm__node_prop(wc->node, WFM__TYPE_ARGS);
    size_t kl = strlen(wc->kname), nl = strlen(a->name);
    char *what = anew(L, kl + nl + 2);
    if (!what)
        return;
    memcpy(what, wc->kname, kl);
    what[kl] = '.';
    memcpy(what + kl + 1, a->name, nl + 1);
    binding b = {a->dir, a->type, NULL, wf_null(), what};
    if (!bind_text(L, wc, &b, at->value, loc_val(L, at)))
        return;
    slots[p->count] = a->slot;
    p->params[p->count++] = (wfm__param){a->dir, a->type, b.expr, b.literal, loc_val(L, at), NULL};
    p->present = true;
}

/* The using element's attributes: x:Name, DisplayName and one per type argument, compiled in
 * the caller's scope seen from inside the wrapper (one hop over its variables). */
static void type_attrs(wfm_load *L, nctx *wc, bool keyed)
{
    wfm_node *w = wc->node;
    const wf_xml_node *el = wc->el;
    wfm__prop *p = wfm__node_prop(w, WFM__TYPE_ARGS);
    uint32_t *slots = anew(L, el->attr_count * sizeof *slots);
    p->params = anew(L, el->attr_count * sizeof *p->params);
    if (!w->extra)
        w->extra = anew(L, sizeof *w->extra);
    if (!slots || !p->params || !w->extra)
        return;
    wfm_node_set_data(w, slots, NULL);
    wfm__scope_frame hidden = {L->scope, NULL, 0}, *outer = L->scope;
    if (w->creates_env)
        L->scope = &hidden;
    for (size_t i = 0; i < el->attr_count; i++) {
        const wf_xml_attr *a = &el->attrs[i];
        if (skip_attr(L, el, a) || (keyed && wfm__xt_is_x(a->ns) && strcmp(a->name, "Key") == 0))
            continue;
        if (wfm__xt_is_x(a->ns) && strcmp(a->name, "Name") == 0) {
            set_names(L, w, NULL, a->value);
            continue;
        }
        if (!a->ns && strcmp(a->name, "DisplayName") == 0) {
            set_names(L, w, a->value, NULL);
            continue;
        }
        const wfm__arg *arg = NULL;
        for (uint32_t k = 0; !a->ns && k < L->type_arg_count && !arg; k++)
            if (strcmp(L->type_args[k].name, a->name) == 0)
                arg = &L->type_args[k];
        if (arg)
            type_attr(L, wc, arg, a, slots);
        else if (!attached_ignored(L, el, a->ns, a->prefix, a->name, loc_attr(L, a), wc->kname))
            REPORT(L, wc, a->ns ? WF_E_SCHEMA : WF_E_NAME, loc_attr(L, a),
                   "unknown argument '%s%s%s' of activity type %s", a->prefix ? a->prefix : "",
                   a->prefix ? ":" : "", a->name, wc->kname);
    }
    L->scope = outer;
    for (const wf_xml_node *c = el->first_child; c; c = c->next)
        if (!skip_el(L, c))
            REPORT(L, wc, WF_E_SCHEMA, loc_el(L, c),
                   "%s cannot appear in activity type %s (write its arguments as attributes)",
                   c->name, wc->kname);
}

/* <p:Name .../> naming an activity type: a wrapper node whose Body is the type's body,
 * expanded here so every node belongs to this definition. */
static wfm_node *expand_type(wfm_load *L, const wf_xml_node *c, nctx *parent, bool keyed)
{
    const wfm_kind *kind = wfm_catalogue_find(L->opts->catalogue, WFM__NS_ACTTYPE, "ActivityType");
    const char *cls = type_class(L, c);
    if (!cls)
        return NULL;
    if (!kind) {
        report_unknown(L, c);
        name_failed(L, c);
        return NULL;
    }
    wfm_node *w = new_node(L, kind, loc_el(L, c), parent);
    if (!w)
        return NULL;
    assert(kind->is_activity); /* its own owner */
    set_names(L, w, c->name, NULL);
    nctx wc = {w, add_lnode(L, w, c), c, wfm_node_display_name(w)};
    if (wc.ln == SIZE_MAX || !w->extra || !w->extra->display_name)
        return NULL;
    wfm__src *s = find_type(L, c, cls);
    if (!s) {
        mark_bad(L, wc.ln);
        name_failed(L, c);
        return w;
    }
    expand_body(L, &wc, s, cls);
    type_attrs(L, &wc, keyed);
    register_name(L, &wc);
    return w;
}

/* ---- after the tree: references, numbering, prepare -------------------------------------- */
/* The activity whose instance schedules `n` (and in whose environment n's expressions run):
 * for an auxiliary node its owner; for an activity the owner of the node it is written in. */
static const wfm_node *sched_owner(const wfm_node *n)
{
    if (!n->kind->is_activity)
        return wfm__node_owner(n);
    return wfm__node_owner(n->parent);
}

static void resolve_refs(wfm_load *L)
{
    for (size_t i = 0; i < L->ref_count; i++) {
        const wfm__pending_ref *r = &L->refs[i];
        uintptr_t v = (uintptr_t)wf_strmap_get(L->names, r->name);
        wfm__lnode *site = &L->lnodes[r->site_ln];
        if (v == FAILED_NAME) {
            /* the target's own error is reported */
        } else if (!v) {
            wfm__xt_report(L, WF_E_NAME, r->loc, "unknown reference '%s' in %s", r->name, r->prop);
        } else {
            wfm_node *target = L->lnodes[v - 1].node;
            if (strcmp(target->kind->spec->category, r->accepts) != 0)
                wfm__xt_report(L, WF_E_SCHEMA, r->loc, "%s cannot appear in %s",
                               target->kind->spec->name, r->prop);
            else if (sched_owner(target) != wfm__node_owner(r->site))
                wfm__xt_report(L, WF_E_SCHEMA, r->loc,
                               "x:Reference '%s' points outside the activity that owns %s", r->name,
                               r->prop);
            else {
                *r->slot = target;
                continue;
            }
        }
        site->bad = true;
    }
}

/* Preorder numbering: the root body first, then each node's children in spec property
 * order, then item order; a node reached through x:Reference is numbered where its element is
 * written (its tree parent), once. The ids follow from this order (wfm_node_id). */
static void number(wfm_load *L, wfm_node *n);

static void number_child(wfm_load *L, wfm_node *n, wfm_node *c)
{
    if (c && c->parent == n && c->index == UINT32_MAX)
        number(L, c);
}

static void number(wfm_load *L, wfm_node *n)
{
    n->index = L->def->node_count;
    L->def->nodes[L->def->node_count++] = n;
    const wfm_kind_spec *spec = n->kind->spec;
    for (size_t i = 0; i < spec->prop_count; i++) {
        wfm__prop *p = wfm__node_prop(n, (unsigned)i);
        switch (spec->props[i].kind) {
        case WFM_PROP_ACTIVITY:
        case WFM_PROP_NODE: number_child(L, n, p->child); break;
        case WFM_PROP_DELEGATE: number_child(L, n, p->delegate ? p->delegate->body : NULL); break;
        case WFM_PROP_ACTIVITIES:
        case WFM_PROP_NODES:
        case WFM_PROP_KEYED:
            for (size_t j = 0; p->items && j < p->count; j++)
                number_child(L, n, p->items[j]);
            break;
        default: break;
        }
    }
}

static void number_all(wfm_load *L)
{
    wfm_definition *def = L->def;
    def->nodes = anew(L, L->lnode_count * sizeof *def->nodes);
    if (!def->nodes)
        return;
    if (def->root)
        number(L, def->root);
    def->numbered = def->node_count;
    for (size_t i = 0; i < L->lnode_count; i++) {
        wfm_node *n = L->lnodes[i].node;
        if (n->index == UINT32_MAX) { /* built for its errors only: id "0" */
            n->index = def->node_count;
            def->nodes[def->node_count++] = n;
        }
    }
}

static void prepare_all(wfm_load *L)
{
    for (size_t i = 0; i < L->lnode_count && !L->nomem; i++) {
        wfm__lnode *ln = &L->lnodes[i];
        const wfm_kind_spec *spec = ln->node->kind->spec;
        if (ln->bad || (!spec->prepare && !spec->bind))
            continue;
        L->cur_lnode = i;
        use_src(L, ln->src);
        if (spec->prepare && spec->prepare(L, ln->node) == WF_E_NOMEM)
            L->nomem = true;
        for (size_t k = 0; k < ln->unknown_count; k++) {
            const wf_xml_attr *a = ln->unknown[k];
            if (!ln->claimed[k])
                wfm__xt_report(L, WF_E_SCHEMA, loc_attr(L, a), "unknown attribute '%s' on %s",
                               a->name, spec->name);
        }
    }
    L->cur_lnode = SIZE_MAX;
    use_src(L, NULL);
}

/* ---- entry points -------------------------------------------------------------------- */
static void finish_def(wfm_load *L)
{
    wfm_definition *def = L->def;
    if (L->owned_count) {
        def->owned_values = anew(L, L->owned_count * sizeof *def->owned_values);
        if (!def->owned_values)
            return;
        memcpy(def->owned_values, L->owned, L->owned_count * sizeof *L->owned);
        def->owned_count = L->owned_count;
        L->owned_count = 0;
    }
}

static void load_fini(wfm_load *L)
{
    for (size_t i = 0; i < L->owned_count; i++)
        wf_value_release(&L->owned[i]);
    wf_free(L->owned);
    wf_free(L->lnodes);
    wf_free(L->refs);
    wf_strmap_destroy(L->names);
    wf_xml_doc_destroy(L->main_doc);
    while (L->srcs) {
        wfm__src *s = L->srcs;
        L->srcs = s->next;
        wf_xml_doc_destroy(s->doc);
        wf_buf_fini(&s->buf);
        wf_free(s);
    }
    wf_arena_destroy(L->tmp);
    wf_diags_destroy(L->diags);
}

void wfm__load_diag(wfm_load *load, wf_severity sev, const wf_error *e)
{
    size_t before = wf_diags_count(load->diags);
    wf_diags_add_error(load->diags, sev, e);
    if (wf_diags_count(load->diags) == before)
        load->nomem = true;
}

static wf_status load_result(wfm_load *L, wf_error *err)
{
    if (L->opts->diags) {
        size_t before = wf_diags_count(L->opts->diags);
        for (size_t i = 0; i < wf_diags_count(L->diags); i++) {
            const wf_diag *d = wf_diags_get(L->diags, i);
            wf_diags_add_error(L->opts->diags, d->severity, &d->error);
        }
        if (wf_diags_count(L->opts->diags) - before < wf_diags_count(L->diags))
            L->nomem = true; /* the caller would miss diagnostics */
    }
    if (L->nomem || (L->errors && !wf_diags_error_count(L->diags)))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory loading %s",
                            L->def ? L->def->path : "a definition");
    if (L->errors) {
        wf_error first = WF_ERROR_INIT;
        wf_status rc = wf_diags_first_error(L->diags, &first);
        if (err && err->code == WF_OK)
            *err = first;
        return rc;
    }
    return WF_OK;
}

/* At most one element per '<' of the file: the first capacity of the lnode array, so a
 * large definition does not copy it over and over as it grows (at least 64). */
static size_t element_bound(const char *data, size_t len)
{
    size_t n = 0;
    const char *p = data, *end = data + len;
    while (p < end && (p = memchr(p, '<', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    return n > 64 ? n : 64;
}

static bool load_init(wfm_load *L, const wfm_load_opts *opts, const char *name, const char *data,
                      size_t len)
{
    memset(L, 0, sizeof *L);
    L->opts = opts;
    L->types = opts->types;
    L->cur_lnode = SIZE_MAX;
    L->diags = wf_diags_create();
    L->names = wf_strmap_create(NULL);
    L->tmp = wf_arena_create(0);
    /* Blocks sized from the file: small definitions stay small (many are kept in memory at
     * once), large ones do not pay a malloc per few nodes. */
    size_t block = len < 1024 ? 768 : len > 32768 ? 65536 : len * 2;
    wf_arena *arena = wf_arena_create(block);
    wfm_definition *def = arena ? wf_arena_alloc(arena, sizeof *def) : NULL;
    const char *path = def ? wf_arena_strdup(arena, name) : NULL;
    if (!L->diags || !L->names || !L->tmp || !path) {
        wf_arena_destroy(arena);
        L->nomem = true;
        return false;
    }
    atomic_init(&def->refcount, 1);
    def->arena = arena;
    def->path = path;
    def->hash = opts->text_hash ? *opts->text_hash : wf_hash_bytes(data, len);
    sha256_chain(def->sha256, false, data, len);
    def->catalogue = opts->catalogue;
    def->types = opts->types;
    L->def = def;
    L->file = path;
    L->arena = arena;
    return true;
}

wf_status wfm_definition_load_mem(const wfm_load_opts *opts, const char *name, const char *data,
                                  size_t len, wfm_definition **out, wf_error *err)
{
    *out = NULL;
    if (!opts || !opts->catalogue || !opts->types || !name || (!data && len))
        return wf_error_set(err, WF_E_USAGE, NULL, "load needs a catalogue, types and a name");
    wfm_load L;
    if (load_init(&L, opts, name, data, len)) {
        L.data = data;
        L.len = len;
        wf_error e = WF_ERROR_INIT;
        wf_status rc = wf_xml_load_mem(L.def->path, data, len, opts->xml_limits, &L.doc, &e);
        L.main_doc = L.doc;
        L.main_data = data;
        L.main_len = len;
        L.main_elements = element_bound(data, len);
        if (rc == WF_E_NOMEM)
            L.nomem = true;
        else if (rc != WF_OK) {
            L.errors++;
            wfm__load_diag(&L, WF_SEV_ERROR, &e);
        } else {
            build_root(&L);
            if (!L.nomem)
                resolve_refs(&L);
            if (!L.nomem)
                number_all(&L);
            if (!L.nomem)
                prepare_all(&L);
            if (!L.nomem)
                finish_def(&L);
        }
    }
    wf_status rc = load_result(&L, err);
    if (rc == WF_OK) {
        *out = L.def;
    } else {
        /* data a bind callback attached to nodes the failed load may not have numbered */
        for (size_t i = 0; i < L.lnode_count; i++)
            wfm_node_set_data(L.lnodes[i].node, NULL, NULL);
        wfm_definition_release(L.def);
    }
    load_fini(&L);
    return rc;
}

wf_status wfm_definition_load_file(const wfm_load_opts *opts, const char *path,
                                   wfm_definition **out, wf_error *err)
{
    *out = NULL;
    if (!path)
        return wf_error_set(err, WF_E_USAGE, NULL, "no file name");
    size_t max = opts && opts->xml_limits ? opts->xml_limits->max_bytes : 0;
    wf_buf buf;
    wf_buf_init(&buf);
    wf_error e = WF_ERROR_INIT;
    wf_status rc = wf_file_read(path, max, &buf, &e);
    if (rc != WF_OK) {
        if (opts && opts->diags)
            wf_diags_add_error(opts->diags, WF_SEV_ERROR, &e);
        if (err && err->code == WF_OK)
            *err = e;
    } else
        rc = wfm_definition_load_mem(opts, path, buf.data, buf.len, out, err);
    wf_buf_fini(&buf);
    return rc;
}

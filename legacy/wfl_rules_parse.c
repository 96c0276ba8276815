/* wfl_rules_parse.c — loads a RuleDefinitions document (.rules) into compiled trees: the
 * CodeDOM vocabulary of docs/semantics.md §2, rule sets sorted for execution, and the
 * read/write path analysis that Full and UpdateOnly chaining use. Every problem is reported
 * (diags); the load fails with the first one. */
#include "wfl_rules_int.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* strncasecmp */

#include "../common/wf_xml.h"

#define WF_NS "http://schemas.microsoft.com/winfx/2006/xaml/workflow"
#define X_NS  "http://schemas.microsoft.com/winfx/2006/xaml"

typedef struct rp {
    wfl_rules *rules;
    const wf_xml_doc *doc;
    wf_types *types;
    wf_diags *diags;
    wf_error first;
    bool nomem;
} rp;

/* ---- reporting and allocation ---------------------------------------------------------- */

static void vreport(rp *p, wf_severity sev, wf_status code, unsigned line, unsigned col,
                    const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));
static void vreport(rp *p, wf_severity sev, wf_status code, unsigned line, unsigned col,
                    const char *fmt, va_list ap)
{
    wf_error e = WF_ERROR_INIT;
    wf_loc loc = {p->rules->path, line, col};
    wf_error_setv(&e, code, &loc, fmt, ap);
    if (code == WF_E_NOMEM)
        p->nomem = true;
    if (p->diags)
        wf_diags_add_error(p->diags, sev, &e);
    if (sev == WF_SEV_ERROR && p->first.code == WF_OK)
        p->first = e;
}

static void report(rp *p, wf_status code, const wf_xml_node *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report(rp *p, wf_status code, const wf_xml_node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(p, WF_SEV_ERROR, code, n ? n->line : 0, n ? n->col : 0, fmt, ap);
    va_end(ap);
}

static void report_at(rp *p, wf_status code, wf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report_at(rp *p, wf_status code, wf_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(p, WF_SEV_ERROR, code, loc.line, loc.col, fmt, ap);
    va_end(ap);
}

static void warn(rp *p, const wf_xml_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn(rp *p, const wf_xml_node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(p, WF_SEV_WARNING, WF_E_SCHEMA, n->line, n->col, fmt, ap);
    va_end(ap);
}

static void *rp_alloc(rp *p, size_t count, size_t size)
{
    if (count == 0)
        return NULL;
    void *mem = count <= SIZE_MAX / size ? wf_arena_alloc(p->rules->arena, count * size) : NULL;
    if (!mem)
        report(p, WF_E_NOMEM, NULL, "out of memory");
    return mem;
}

static const char *rp_strdup(rp *p, const char *s, size_t len)
{
    char *copy = wf_arena_strndup(p->rules->arena, s, len);
    if (!copy) {
        report(p, WF_E_NOMEM, NULL, "out of memory");
        return "";
    }
    return copy;
}

static wf_loc loc_of(const rp *p, const wf_xml_node *n)
{
    wf_loc loc = {p->rules->path, n->line, n->col};
    return loc;
}

/* ---- namespaces ------------------------------------------------------------------------ */

/* The clr-namespace part of a namespace URI equals `clr` (case-insensitive), ignoring any
 * ";Assembly=..." with its version parts. */
static bool is_clr_ns(const char *uri, const char *clr)
{
    static const char prefix[] = "clr-namespace:";
    if (!uri || strncasecmp(uri, prefix, sizeof prefix - 1) != 0)
        return false;
    const char *ns = uri + sizeof prefix - 1;
    size_t len = strcspn(ns, ";");
    return len == strlen(clr) && strncasecmp(ns, clr, len) == 0;
}

static bool is_wf(const wf_xml_node *n, const char *name)
{
    return n->ns && strcmp(n->ns, WF_NS) == 0 && strcmp(n->name, name) == 0;
}

static bool is_codedom(const wf_xml_node *n)
{
    return is_clr_ns(n->ns, "System.CodeDom");
}

/* ---- attributes ------------------------------------------------------------------------ */

static const wf_xml_attr *attr(const wf_xml_node *n, const char *name)
{
    return wf_xml_attr_find(n, NULL, name);
}

/* A "{prefix:Null}" markup extension whose prefix is the XAML namespace. */
static bool is_null_ext(const wf_xml_node *n, const char *value)
{
    if (value[0] != '{' || value[1] == '}')
        return false;
    const char *colon = strchr(value, ':');
    if (!colon || strcmp(colon + 1, "Null}") != 0)
        return false;
    char prefix[64];
    size_t len = (size_t)(colon - value - 1);
    if (len == 0 || len >= sizeof prefix)
        return false;
    memcpy(prefix, value + 1, len);
    prefix[len] = '\0';
    const char *ns = wf_xml_lookup_ns(n, prefix);
    return ns && strcmp(ns, X_NS) == 0;
}

/* An attribute's text, NULL when absent or {x:Null}; a leading "{}" escape is dropped. */
static const char *attr_text(const wf_xml_node *n, const char *name)
{
    const wf_xml_attr *a = attr(n, name);
    if (!a || is_null_ext(n, a->value))
        return NULL;
    return strncmp(a->value, "{}", 2) == 0 ? a->value + 2 : a->value;
}

/* Unknown unprefixed attributes are tolerated and reported as warnings (docs/architecture.md: real
 * files must load; nothing is silently dropped). */
static void check_attrs(rp *p, const wf_xml_node *n, const char *const *allowed)
{
    for (size_t i = 0; i < n->attr_count; i++) {
        const wf_xml_attr *a = &n->attrs[i];
        if (a->ns)
            continue;
        bool known = false;
        for (const char *const *k = allowed; *k && !known; k++)
            known = strcmp(*k, a->name) == 0;
        if (!known)
            warn(p, n, "ignored attribute '%s' on <%s>", a->name, n->name);
    }
}

static const char *const no_attrs[] = {NULL};

/* ---- property elements ----------------------------------------------------------------- */

/* The child `<Owner.suffix>` of n (Owner = n's own name), or NULL. */
static const wf_xml_node *prop_elem(const wf_xml_node *n, const char *suffix)
{
    size_t owner = strlen(n->name);
    for (const wf_xml_node *c = n->first_child; c; c = c->next) {
        if (strncmp(c->name, n->name, owner) == 0 && c->name[owner] == '.' &&
            strcmp(c->name + owner + 1, suffix) == 0 && c->ns && n->ns &&
            strcmp(c->ns, n->ns) == 0)
            return c;
    }
    return NULL;
}

/* Every child of n must be one of its property elements named in `allowed`. */
static void check_children(rp *p, const wf_xml_node *n, const char *const *allowed)
{
    size_t owner = strlen(n->name);
    for (const wf_xml_node *c = n->first_child; c; c = c->next) {
        bool known = false;
        if (strncmp(c->name, n->name, owner) == 0 && c->name[owner] == '.')
            for (const char *const *k = allowed; *k && !known; k++)
                known = strcmp(c->name + owner + 1, *k) == 0;
        if (!known)
            report(p, WF_E_SCHEMA, c, "unexpected element <%s> in <%s>", c->name, n->name);
    }
}

/* ---- types ----------------------------------------------------------------------------- */

/* "System.DateTime, mscorlib, Version=..." -> "System.DateTime" (arena copy). */
static const char *type_name(rp *p, const char *text)
{
    while (*text == ' ')
        text++;
    size_t len = strcspn(text, ",");
    while (len && text[len - 1] == ' ')
        len--;
    return rp_strdup(p, text, len);
}

static const wf_type *lookup_type(rp *p, const char *name)
{
    static const struct { const char *clr; const wf_type *t; } narrow[] = {
        {"System.Int16", &wf_type_int32},  {"System.UInt16", &wf_type_int32},
        {"System.Byte", &wf_type_int32},   {"System.SByte", &wf_type_int32},
        {"System.UInt32", &wf_type_int64}, {"System.Single", &wf_type_double},
        {"System.Char", &wf_type_string},
    };
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++)
        if (strcmp(name, narrow[i].clr) == 0)
            return narrow[i].t;
    const wf_type *t = wf_types_find(p->types, name);
    if (!t && strncmp(name, "System.", 7) == 0)
        t = wf_types_find(p->types, name + 7);
    return t;
}

/* <X.TargetType><ns0:CodeTypeReference BaseType="System.Int32" .../></X.TargetType> */
static const char *parse_type_ref(rp *p, const wf_xml_node *holder)
{
    static const char *const attrs[] = {"BaseType", "Options", "ArrayRank", "ArrayElementType",
                                        NULL};
    const wf_xml_node *ref = holder->first_child;
    if (!ref || ref->next || !is_codedom(ref) || strcmp(ref->name, "CodeTypeReference") != 0) {
        report(p, WF_E_SCHEMA, holder, "<%s> must hold one CodeTypeReference", holder->name);
        return NULL;
    }
    check_attrs(p, ref, attrs);
    const char *base = attr_text(ref, "BaseType");
    if (!base || !*base) {
        report(p, WF_E_SCHEMA, ref, "CodeTypeReference needs a BaseType");
        return NULL;
    }
    const char *rank = attr_text(ref, "ArrayRank");
    if (rank && strcmp(rank, "0") != 0) {
        report(p, WF_E_UNSUPPORTED, ref, "array types are not supported ('%s')", base);
        return NULL;
    }
    return type_name(p, base);
}

/* ---- expressions ----------------------------------------------------------------------- */

static wfl_rexpr *parse_expr(rp *p, const wf_xml_node *n);

static wfl_rexpr *new_expr(rp *p, wfl_rexpr_kind kind, const wf_xml_node *n, size_t kids)
{
    wfl_rexpr *e = rp_alloc(p, 1, sizeof *e);
    if (!e)
        return NULL;
    e->kind = kind;
    e->loc = loc_of(p, n);
    e->value = wf_null();
    e->kid_count = kids;
    if (kids && !(e->kids = rp_alloc(p, kids, sizeof *e->kids)))
        return NULL;
    return e;
}

/* The single expression inside property element `suffix` of n; reports when missing. */
static wfl_rexpr *parse_operand(rp *p, const wf_xml_node *n, const char *suffix)
{
    const wf_xml_node *holder = prop_elem(n, suffix);
    if (!holder) {
        report(p, WF_E_SCHEMA, n, "<%s> is missing its %s", n->name, suffix);
        return NULL;
    }
    if (holder->child_count != 1) {
        report(p, WF_E_SCHEMA, holder, "<%s> must hold exactly one expression", holder->name);
        return NULL;
    }
    return parse_expr(p, holder->first_child);
}

/* Expressions inside an optional list property element (Parameters, Indices). */
static size_t list_count(const wf_xml_node *n, const char *suffix)
{
    const wf_xml_node *holder = prop_elem(n, suffix);
    return holder ? holder->child_count : 0;
}

static void parse_list(rp *p, const wf_xml_node *n, const char *suffix, wfl_rexpr **out)
{
    const wf_xml_node *holder = prop_elem(n, suffix);
    size_t i = 0;
    for (const wf_xml_node *c = holder ? holder->first_child : NULL; c; c = c->next)
        out[i++] = parse_expr(p, c);
}

static bool parse_primitive_text(rp *p, const wf_xml_node *typed, wf_value *out)
{
    const wf_type *t = wf_type_primitive(typed->name);
    if (!t) {
        report(p, WF_E_TYPE, typed, "unsupported primitive type '%s'", typed->name);
        return false;
    }
    const char *text = typed->text;
    if (t == &wf_type_string) {
        if (wf_value_string_static(p->rules->arena, text, strlen(text), out) != WF_OK) {
            report(p, WF_E_NOMEM, typed, "out of memory");
            return false;
        }
        return true;
    }
    while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r')
        text++;
    size_t len = strlen(text);
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\n' || text[len - 1] == '\t' ||
                   text[len - 1] == '\r'))
        len--;
    char buf[128];
    wf_error e = WF_ERROR_INIT;
    if (len == 0 || len >= sizeof buf) {
        report(p, WF_E_SYNTAX, typed, "bad %s value '%.*s'", typed->name, (int)len, text);
        return false;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    wf_status st = wf_value_parse(p->types, t, buf, out, &e);
    if (st == WF_E_NOMEM) {
        report(p, WF_E_NOMEM, typed, "out of memory");
        return false;
    }
    if (st != WF_OK) {
        report(p, WF_E_SYNTAX, typed, "bad %s value '%s'", typed->name, buf);
        return false;
    }
    return true;
}

static wfl_rexpr *parse_primitive(rp *p, const wf_xml_node *n)
{
    static const char *const attrs[] = {"Value", NULL};
    static const char *const kids[] = {"Value", NULL};
    check_attrs(p, n, attrs);
    check_children(p, n, kids);
    wfl_rexpr *e = new_expr(p, WFL_REX_PRIMITIVE, n, 0);
    if (!e)
        return NULL;
    const wf_xml_attr *a = attr(n, "Value");
    const wf_xml_node *holder = prop_elem(n, "Value");
    if (a && !holder) {
        const char *text = attr_text(n, "Value");
        if (text && wf_value_string_static(p->rules->arena, text, strlen(text), &e->value))
            report(p, WF_E_NOMEM, n, "out of memory");
        return e;
    }
    if (!holder)
        return e; /* no Value: null */
    const wf_xml_node *typed = holder->first_child;
    if (!typed) {
        if (!is_null_ext(holder, holder->text))
            report(p, WF_E_SCHEMA, holder, "<%s> holds no value", holder->name);
        return e;
    }
    if (typed->next) {
        report(p, WF_E_SCHEMA, typed->next, "<%s> holds more than one value", holder->name);
        return e;
    }
    if (typed->ns && strcmp(typed->ns, X_NS) == 0 && strcmp(typed->name, "Null") == 0)
        return e;
    if (!is_clr_ns(typed->ns, "System")) {
        report(p, WF_E_SCHEMA, typed, "primitive value <%s> is not a System type", typed->name);
        return e;
    }
    parse_primitive_text(p, typed, &e->value);
    return e;
}

static wfl_rexpr *parse_member(rp *p, const wf_xml_node *n, const char *name_attr)
{
    static const char *const kids[] = {"TargetObject", NULL};
    const char *const attrs[] = {name_attr, NULL};
    check_attrs(p, n, attrs);
    check_children(p, n, kids);
    const char *name = attr_text(n, name_attr);
    if (!name || !*name) {
        report(p, WF_E_SCHEMA, n, "<%s> needs a %s", n->name, name_attr);
        return NULL;
    }
    wfl_rexpr *e = new_expr(p, WFL_REX_MEMBER, n, 1);
    if (!e)
        return NULL;
    e->name = rp_strdup(p, name, strlen(name));
    e->kids[0] = parse_operand(p, n, "TargetObject");
    return e;
}

static const struct { const char *name; wfl_rop op; } op_names[] = {
    {"Add", WFL_ROP_ADD},
    {"Subtract", WFL_ROP_SUBTRACT},
    {"Multiply", WFL_ROP_MULTIPLY},
    {"Divide", WFL_ROP_DIVIDE},
    {"Modulus", WFL_ROP_MODULUS},
    {"Assign", WFL_ROP_ASSIGN},
    {"IdentityInequality", WFL_ROP_IDENTITY_INEQUALITY},
    {"IdentityEquality", WFL_ROP_IDENTITY_EQUALITY},
    {"ValueEquality", WFL_ROP_VALUE_EQUALITY},
    {"BitwiseOr", WFL_ROP_BITWISE_OR},
    {"BitwiseAnd", WFL_ROP_BITWISE_AND},
    {"BooleanOr", WFL_ROP_BOOLEAN_OR},
    {"BooleanAnd", WFL_ROP_BOOLEAN_AND},
    {"LessThan", WFL_ROP_LESS_THAN},
    {"LessThanOrEqual", WFL_ROP_LESS_THAN_OR_EQUAL},
    {"GreaterThan", WFL_ROP_GREATER_THAN},
    {"GreaterThanOrEqual", WFL_ROP_GREATER_THAN_OR_EQUAL},
};

const char *wfl_rop_name(wfl_rop op)
{
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (op_names[i].op == op)
            return op_names[i].name;
    return "?";
}

static wfl_rexpr *parse_binary(rp *p, const wf_xml_node *n)
{
    static const char *const attrs[] = {"Operator", NULL};
    static const char *const kids[] = {"Left", "Right", NULL};
    check_attrs(p, n, attrs);
    check_children(p, n, kids);
    wfl_rexpr *e = new_expr(p, WFL_REX_BINARY, n, 2);
    if (!e)
        return NULL;
    const char *op = attr_text(n, "Operator");
    bool found = false;
    for (size_t i = 0; op && i < sizeof op_names / sizeof op_names[0] && !found; i++)
        if (strcmp(op, op_names[i].name) == 0) {
            e->op = op_names[i].op;
            found = true;
        }
    if (!found)
        report(p, WF_E_SYNTAX, n, "unknown operator '%s'", op ? op : "(none)");
    else if (e->op == WFL_ROP_ASSIGN)
        report(p, WF_E_SYNTAX, n, "operator 'Assign' is not valid in an expression");
    e->kids[0] = parse_operand(p, n, "Left");
    e->kids[1] = parse_operand(p, n, "Right");
    return e;
}

/* Members the evaluator knows on values and on static types; checked at load so a misspelt
 * method is a load error, not a run-time surprise. */
static const char *const value_methods[] = {
    "ToString", "ToUpper", "ToLower", "ToUpperInvariant", "ToLowerInvariant", "Trim",
    "TrimStart", "TrimEnd", "Contains", "StartsWith", "EndsWith", "Substring", "Equals",
    "CompareTo", "IndexOf", "LastIndexOf", "Replace", "PadLeft", "PadRight", "Insert", "Remove",
    NULL};
static const char *const static_methods[] = {
    "String.IsNullOrEmpty", "String.Concat", "Math.Max", "Math.Min", "Math.Abs", NULL};

static bool in_list(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return true;
    return false;
}

/* "System.Math" -> "Math" for matching static members. */
static const char *short_type(const char *name)
{
    return strncmp(name, "System.", 7) == 0 ? name + 7 : name;
}

static void check_method(rp *p, const wf_xml_node *n, const wfl_rexpr *target, const char *name)
{
    if (!target || target->kind == WFL_REX_THIS)
        return; /* code-beside: resolved by the target's invoke callback */
    if (target->kind == WFL_REX_TYPEREF) {
        if (!target->name)
            return; /* already reported */
        char full[256];
        snprintf(full, sizeof full, "%s.%s", short_type(target->name), name);
        if (!in_list(static_methods, full))
            report(p, WF_E_UNSUPPORTED, n, "static method '%s' is not supported by wfbridge "
                   "rules (only String.IsNullOrEmpty, String.Concat, Math.Max, Math.Min and "
                   "Math.Abs)", full);
        return;
    }
    if (!in_list(value_methods, name))
        report(p, WF_E_NAME, n, "unknown method '%s'", name);
}

/* this.GetActivityByName("Name") with a literal name: markup-only workflows reach their own
 * root's properties this way (((Base)this.GetActivityByName("Flow1")).Count). */
static bool is_self_lookup(const wfl_rexpr *e)
{
    return strcmp(e->name, "GetActivityByName") == 0 && e->kid_count == 2 && e->kids[0] &&
           e->kids[0]->kind == WFL_REX_THIS && e->kids[1] &&
           e->kids[1]->kind == WFL_REX_PRIMITIVE && e->kids[1]->value.type != NULL &&
           e->kids[1]->value.type->kind == WF_K_STRING;
}

/* Read as 'this' carrying the looked-up name; the XOML loader checks that the name is the
 * root workflow's own (wfl_rexpr.name of a THIS node; NULL for a plain 'this'). */
static wfl_rexpr *self_lookup(wfl_rexpr *e)
{
    e->kind = WFL_REX_THIS;
    e->name = wf_value_str(&e->kids[1]->value);
    e->kid_count = 0;
    return e;
}

static wfl_rexpr *parse_invoke(rp *p, const wf_xml_node *n)
{
    static const char *const kids[] = {"Method", "Parameters", NULL};
    static const char *const ref_attrs[] = {"MethodName", NULL};
    static const char *const ref_kids[] = {"TargetObject", "TypeArguments", NULL};
    check_attrs(p, n, no_attrs);
    check_children(p, n, kids);
    const wf_xml_node *holder = prop_elem(n, "Method");
    const wf_xml_node *ref = holder ? holder->first_child : NULL;
    if (!ref || ref->next || !is_codedom(ref) ||
        strcmp(ref->name, "CodeMethodReferenceExpression") != 0) {
        report(p, WF_E_SCHEMA, holder ? holder : n,
               "<%s> needs one CodeMethodReferenceExpression in its Method", n->name);
        return NULL;
    }
    check_attrs(p, ref, ref_attrs);
    check_children(p, ref, ref_kids);
    if (prop_elem(ref, "TypeArguments"))
        report(p, WF_E_UNSUPPORTED, ref, "generic method calls are not supported");
    const char *name = attr_text(ref, "MethodName");
    if (!name || !*name) {
        report(p, WF_E_SCHEMA, ref, "CodeMethodReferenceExpression needs a MethodName");
        return NULL;
    }
    wfl_rexpr *e = new_expr(p, WFL_REX_INVOKE, n, 1 + list_count(n, "Parameters"));
    if (!e)
        return NULL;
    e->name = rp_strdup(p, name, strlen(name));
    e->kids[0] = parse_operand(p, ref, "TargetObject");
    parse_list(p, n, "Parameters", e->kids + 1);
    if (is_self_lookup(e))
        return self_lookup(e);
    check_method(p, ref, e->kids[0], name);
    return e;
}

static wfl_rexpr *parse_indexer(rp *p, const wf_xml_node *n)
{
    static const char *const kids[] = {"TargetObject", "Indices", NULL};
    check_attrs(p, n, no_attrs);
    check_children(p, n, kids);
    size_t count = list_count(n, "Indices");
    if (count == 0) {
        report(p, WF_E_SCHEMA, n, "<%s> needs at least one index", n->name);
        return NULL;
    }
    wfl_rexpr *e = new_expr(p, WFL_REX_INDEX, n, 1 + count);
    if (!e)
        return NULL;
    e->kids[0] = parse_operand(p, n, "TargetObject");
    parse_list(p, n, "Indices", e->kids + 1);
    return e;
}

/* A type given either as property element <X.suffix><CodeTypeReference/></X.suffix> or, as
 * the WF3 serializer also writes it, as attribute suffix="Ns.Type, Assembly, Version=..."
 * (possibly wrapped over several lines). NULL (reported) when neither is there. */
static const char *type_operand(rp *p, const wf_xml_node *n, const char *suffix,
                                const wf_xml_node **at)
{
    const wf_xml_node *holder = prop_elem(n, suffix);
    const char *text = attr_text(n, suffix);
    *at = n;
    if (holder) {
        *at = holder->first_child ? holder->first_child : holder;
        return parse_type_ref(p, holder);
    }
    if (text) {
        while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r')
            text++;
        if (*text)
            return type_name(p, text);
    }
    report(p, WF_E_SCHEMA, n, "<%s> is missing its %s", n->name, suffix);
    return NULL;
}

/* A cast to a type the evaluator does not know (the workflow's own class, an enum) is a
 * reference conversion that succeeds for every valid program: it is read as its operand. */
static wfl_rexpr *parse_cast(rp *p, const wf_xml_node *n)
{
    static const char *const attrs[] = {"TargetType", NULL};
    static const char *const kids[] = {"TargetType", "Expression", NULL};
    check_attrs(p, n, attrs);
    check_children(p, n, kids);
    const wf_xml_node *at = n;
    const char *name = type_operand(p, n, "TargetType", &at);
    const wf_type *type = name ? lookup_type(p, name) : NULL;
    if (name && !type && strncmp(name, "System.", 7) != 0)
        return parse_operand(p, n, "Expression");
    wfl_rexpr *e = new_expr(p, WFL_REX_CAST, n, 1);
    if (!e)
        return NULL;
    if (name && !type)
        report(p, WF_E_TYPE, at, "unknown type '%s'", name);
    e->type = type;
    e->name = name;
    e->kids[0] = parse_operand(p, n, "Expression");
    return e;
}

static wfl_rexpr *parse_typeref(rp *p, const wf_xml_node *n)
{
    static const char *const attrs[] = {"Type", NULL};
    static const char *const kids[] = {"Type", NULL};
    check_attrs(p, n, attrs);
    check_children(p, n, kids);
    wfl_rexpr *e = new_expr(p, WFL_REX_TYPEREF, n, 0);
    if (!e)
        return NULL;
    const wf_xml_node *holder = prop_elem(n, "Type");
    const char *text = attr_text(n, "Type");
    if (holder)
        e->name = parse_type_ref(p, holder);
    else if (text && *text)
        e->name = type_name(p, text);
    else
        report(p, WF_E_SCHEMA, n, "<%s> needs a Type", n->name);
    if (e->name)
        e->type = lookup_type(p, e->name);
    return e;
}

static wfl_rexpr *parse_new(rp *p, const wf_xml_node *n)
{
    static const char *const attrs[] = {"CreateType", NULL};
    static const char *const kids[] = {"CreateType", "Parameters", NULL};
    check_attrs(p, n, attrs);
    check_children(p, n, kids);
    wfl_rexpr *e = new_expr(p, WFL_REX_NEW, n, list_count(n, "Parameters"));
    if (!e)
        return NULL;
    const wf_xml_node *at = n;
    e->name = type_operand(p, n, "CreateType", &at);
    if (e->name) {
        e->type = lookup_type(p, e->name);
        if (!e->type)
            report(p, WF_E_UNSUPPORTED, at, "only exceptions can be created, not '%s'",
                   e->name);
        else if (e->type->kind != WF_K_EXCEPTION)
            report(p, WF_E_UNSUPPORTED, n, "only exceptions can be created, not '%s'", e->name);
    }
    if (e->kid_count > 1)
        report(p, WF_E_UNSUPPORTED, n, "exception constructors take at most a message");
    parse_list(p, n, "Parameters", e->kids);
    return e;
}

static wfl_rexpr *parse_expr(rp *p, const wf_xml_node *n)
{
    if (p->nomem)
        return NULL;
    if (!is_codedom(n)) {
        report(p, WF_E_SCHEMA, n, "<%s> is not a CodeDOM expression", n->name);
        return NULL;
    }
    const char *k = n->name;
    if (strcmp(k, "CodeThisReferenceExpression") == 0) {
        check_attrs(p, n, no_attrs);
        check_children(p, n, no_attrs);
        return new_expr(p, WFL_REX_THIS, n, 0);
    }
    if (strcmp(k, "CodePrimitiveExpression") == 0)
        return parse_primitive(p, n);
    if (strcmp(k, "CodeFieldReferenceExpression") == 0)
        return parse_member(p, n, "FieldName");
    if (strcmp(k, "CodePropertyReferenceExpression") == 0)
        return parse_member(p, n, "PropertyName");
    if (strcmp(k, "CodeBinaryOperatorExpression") == 0)
        return parse_binary(p, n);
    if (strcmp(k, "CodeMethodInvokeExpression") == 0)
        return parse_invoke(p, n);
    if (strcmp(k, "CodeIndexerExpression") == 0 || strcmp(k, "CodeArrayIndexerExpression") == 0)
        return parse_indexer(p, n);
    if (strcmp(k, "CodeCastExpression") == 0)
        return parse_cast(p, n);
    if (strcmp(k, "CodeTypeReferenceExpression") == 0)
        return parse_typeref(p, n);
    if (strcmp(k, "CodeObjectCreateExpression") == 0)
        return parse_new(p, n);
    if (strcmp(k, "CodeDirectionExpression") == 0 || strcmp(k, "CodeArrayCreateExpression") == 0) {
        report(p, WF_E_UNSUPPORTED, n, "%s is not supported by wfbridge rules", k);
        return NULL;
    }
    report(p, WF_E_SCHEMA, n, "unknown CodeDOM element <%s>", k);
    return NULL;
}

/* Static members the evaluator knows; a member of an unknown type (an enum) is allowed. */
static void check_static_members(rp *p, const wfl_rexpr *e)
{
    if (!e)
        return;
    if (e->kind == WFL_REX_MEMBER && e->kids[0] && e->kids[0]->kind == WFL_REX_TYPEREF &&
        e->kids[0]->name) {
        static const char *const known[] = {
            "DateTime.Now", "DateTime.UtcNow", "DateTime.Today", "DateTime.MinValue",
            "DateTime.MaxValue", "Int32.MaxValue", "Int32.MinValue", "Int64.MaxValue",
            "Int64.MinValue", "String.Empty", "Decimal.Zero", "Boolean.TrueString",
            "Boolean.FalseString", "Math.PI", NULL};
        const wfl_rexpr *t = e->kids[0];
        char full[256];
        snprintf(full, sizeof full, "%s.%s", short_type(t->name), e->name);
        bool is_builtin = t->type || strcmp(short_type(t->name), "Math") == 0;
        if (is_builtin && !in_list(known, full))
            report_at(p, WF_E_NAME, e->loc, "unknown static member '%s'", full);
    }
    for (size_t i = 0; i < e->kid_count; i++)
        check_static_members(p, e->kids[i]);
}

/* ---- conditions, actions, rules -------------------------------------------------------- */

static wfl_rexpr *parse_condition_body(rp *p, const wf_xml_node *n)
{
    static const char *const attrs[] = {"Name", "Description", NULL};
    static const char *const kids[] = {"Expression", NULL};
    check_attrs(p, n, attrs);
    check_children(p, n, kids);
    wfl_rexpr *e = parse_operand(p, n, "Expression");
    check_static_members(p, e);
    return e;
}

static void parse_statement(rp *p, const wf_xml_node *n, wfl_rule_action *a)
{
    static const char *const attrs[] = {"LinePragma", NULL};
    check_attrs(p, n, attrs);
    if (!is_codedom(n)) {
        report(p, WF_E_SCHEMA, n, "<%s> is not a CodeDOM statement", n->name);
        return;
    }
    if (strcmp(n->name, "CodeAssignStatement") == 0) {
        static const char *const kids[] = {"Left", "Right", NULL};
        check_children(p, n, kids);
        a->kind = WFL_ACTION_ASSIGN;
        a->target = parse_operand(p, n, "Left");
        a->value = parse_operand(p, n, "Right");
        if (a->target && !wfl_rexpr_is_this_path(a->target))
            report(p, WF_E_SCHEMA, n, "can only assign to a member of 'this'");
    } else if (strcmp(n->name, "CodeExpressionStatement") == 0) {
        static const char *const kids[] = {"Expression", NULL};
        check_children(p, n, kids);
        a->kind = WFL_ACTION_EXPR;
        a->value = parse_operand(p, n, "Expression");
    } else {
        report(p, WF_E_SCHEMA, n, "unsupported statement <%s> (rules accept CodeAssignStatement "
               "and CodeExpressionStatement)", n->name);
    }
    check_static_members(p, a->target);
    check_static_members(p, a->value);
}

/* "this/Order/Total" -> "Order/Total"; a leading "this/" and trailing slashes go. */
static const char *normalise_update_path(rp *p, const char *path)
{
    if (strncmp(path, "this/", 5) == 0)
        path += 5;
    else if (strcmp(path, "this") == 0)
        path = "*";
    while (*path == '/')
        path++;
    size_t len = strlen(path);
    while (len && path[len - 1] == '/')
        len--;
    return len ? rp_strdup(p, path, len) : "*";
}

static void parse_action(rp *p, const wf_xml_node *n, wfl_rule_action *a)
{
    a->loc = loc_of(p, n);
    if (is_wf(n, "RuleHaltAction")) {
        check_attrs(p, n, no_attrs);
        a->kind = WFL_ACTION_HALT;
    } else if (is_wf(n, "RuleUpdateAction")) {
        static const char *const attrs[] = {"Path", NULL};
        check_attrs(p, n, attrs);
        const char *path = attr_text(n, "Path");
        a->kind = WFL_ACTION_UPDATE;
        if (!path || !*path)
            report(p, WF_E_SCHEMA, n, "RuleUpdateAction needs a Path");
        else
            a->path = normalise_update_path(p, path);
    } else if (is_wf(n, "RuleStatementAction")) {
        static const char *const kids[] = {"CodeDomStatement", NULL};
        check_attrs(p, n, no_attrs);
        check_children(p, n, kids);
        const wf_xml_node *holder = prop_elem(n, "CodeDomStatement");
        if (!holder || holder->child_count != 1)
            report(p, WF_E_SCHEMA, holder ? holder : n,
                   "RuleStatementAction needs exactly one CodeDomStatement");
        else
            parse_statement(p, holder->first_child, a);
    } else {
        report(p, WF_E_SCHEMA, n, "unknown rule action <%s>", n->name);
    }
}

static void parse_actions(rp *p, const wf_xml_node *holder, wfl_rule *r, int branch)
{
    if (!holder)
        return;
    r->actions[branch] = rp_alloc(p, holder->child_count, sizeof(wfl_rule_action));
    for (const wf_xml_node *c = holder->first_child; c && r->actions[branch]; c = c->next)
        parse_action(p, c, &r->actions[branch][r->action_count[branch]++]);
}

static bool parse_int(const char *text, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < INT32_MIN || v > INT32_MAX)
        return false;
    *out = (int)v;
    return true;
}

static bool parse_true_false(const char *text, bool *out)
{
    if (strcasecmp(text, "true") == 0)
        *out = true;
    else if (strcasecmp(text, "false") == 0)
        *out = false;
    else
        return false;
    return true;
}

static void parse_rule_attrs(rp *p, const wf_xml_node *n, wfl_rule *r)
{
    static const char *const attrs[] = {"Name", "Priority", "Active", "ReevaluationBehavior",
                                        "Description", NULL};
    check_attrs(p, n, attrs);
    const char *name = attr_text(n, "Name");
    if (!name || !*name)
        report(p, WF_E_SCHEMA, n, "<Rule> needs a Name");
    r->name = name ? rp_strdup(p, name, strlen(name)) : "";
    const char *prio = attr_text(n, "Priority");
    if (prio && !parse_int(prio, &r->priority))
        report(p, WF_E_SYNTAX, n, "bad Priority '%s'", prio);
    const char *active = attr_text(n, "Active");
    r->active = true;
    if (active && !parse_true_false(active, &r->active))
        report(p, WF_E_SYNTAX, n, "bad Active '%s'", active);
    const char *reeval = attr_text(n, "ReevaluationBehavior");
    r->always = true;
    if (reeval && strcmp(reeval, "Never") == 0)
        r->always = false;
    else if (reeval && strcmp(reeval, "Always") != 0)
        report(p, WF_E_SYNTAX, n, "bad ReevaluationBehavior '%s' (Always or Never)", reeval);
}

static void parse_rule(rp *p, const wf_xml_node *n, wfl_rule *r)
{
    static const char *const kids[] = {"Condition", "ThenActions", "ElseActions", NULL};
    r->loc = loc_of(p, n);
    parse_rule_attrs(p, n, r);
    check_children(p, n, kids);
    const wf_xml_node *cond = prop_elem(n, "Condition");
    if (cond) {
        const wf_xml_node *c = cond->first_child;
        if (!c || c->next || !is_wf(c, "RuleExpressionCondition"))
            report(p, WF_E_SCHEMA, cond, "<Rule.Condition> must hold one RuleExpressionCondition");
        else
            r->cond = parse_condition_body(p, c);
    }
    parse_actions(p, prop_elem(n, "ThenActions"), r, 0);
    parse_actions(p, prop_elem(n, "ElseActions"), r, 1);
}

/* ---- path analysis (Full / UpdateOnly chaining) ---------------------------------------- */

bool wfl_rexpr_is_this_path(const wfl_rexpr *e)
{
    while (e && (e->kind == WFL_REX_MEMBER || e->kind == WFL_REX_INDEX))
        e = e->kids[0];
    return e && e->kind == WFL_REX_THIS;
}

/* The member path of a this-rooted chain: "A/B", cut to a wildcard at the first indexer. */
static const char *path_of(rp *p, const wfl_rexpr *e)
{
    const wfl_rexpr *chain[64];
    size_t n = 0;
    for (const wfl_rexpr *x = e; x->kind != WFL_REX_THIS && n < 64; x = x->kids[0])
        chain[n++] = x;
    if (n == 64)
        return "*";
    wf_buf buf;
    wf_buf_init(&buf);
    bool wildcard = false;
    for (size_t i = n; i-- > 0 && !wildcard;) {
        if (chain[i]->kind == WFL_REX_INDEX) {
            wildcard = true;
            break;
        }
        if (buf.len)
            wf_buf_addc(&buf, '/');
        wf_buf_adds(&buf, chain[i]->name);
    }
    if (wildcard)
        wf_buf_adds(&buf, buf.len ? "/*" : "*");
    const char *out = buf.oom ? NULL : rp_strdup(p, buf.data, buf.len);
    if (buf.oom)
        report(p, WF_E_NOMEM, NULL, "out of memory");
    wf_buf_fini(&buf);
    return out ? out : "*";
}

typedef struct pathlist {
    const char *items[256];
    size_t count;
} pathlist;

static void add_path(pathlist *l, const char *path)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i], path) == 0)
            return;
    if (l->count < 256)
        l->items[l->count++] = path;
    else
        l->items[255] = "*"; /* too many to track: assume everything */
}

/* Collect the this-paths an expression reads. A method called on `this` (code-beside) may
 * read anything, so it reads "*". */
static void collect_reads(rp *p, const wfl_rexpr *e, pathlist *l)
{
    if (!e)
        return;
    if ((e->kind == WFL_REX_MEMBER || e->kind == WFL_REX_INDEX) && wfl_rexpr_is_this_path(e)) {
        add_path(l, path_of(p, e));
        for (const wfl_rexpr *x = e; x->kind != WFL_REX_THIS; x = x->kids[0])
            for (size_t i = 1; i < x->kid_count; i++)
                collect_reads(p, x->kids[i], l);
        return;
    }
    if (e->kind == WFL_REX_INVOKE && e->kids[0] && e->kids[0]->kind == WFL_REX_THIS)
        add_path(l, "*");
    for (size_t i = 0; i < e->kid_count; i++)
        collect_reads(p, e->kids[i], l);
}

static void collect_writes(rp *p, const wfl_rule_action *a, size_t count, bool full,
                           pathlist *l)
{
    for (size_t i = 0; i < count; i++) {
        if (a[i].kind == WFL_ACTION_UPDATE && a[i].path)
            add_path(l, a[i].path);
        else if (full && a[i].kind == WFL_ACTION_ASSIGN && a[i].target)
            add_path(l, path_of(p, a[i].target));
    }
}

static void store_paths(rp *p, const pathlist *l, wfl_pathset *out)
{
    out->paths = rp_alloc(p, l->count, sizeof *out->paths);
    if (out->paths || l->count == 0) {
        out->count = l->count;
        for (size_t i = 0; i < l->count; i++)
            out->paths[i] = l->items[i];
    }
}

/* Split a path into its fixed part and a wildcard flag (trailing star). */
static size_t path_fixed(const char *path, bool *wildcard)
{
    size_t len = strlen(path);
    *wildcard = false;
    if (len && path[len - 1] == '*') {
        *wildcard = true;
        len--;
        if (len && path[len - 1] == '/')
            len--;
    }
    return len;
}

/* a (length alen) is a whole-segment prefix of b (length blen). */
static bool seg_prefix(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen == 0)
        return true;
    return alen <= blen && memcmp(a, b, alen) == 0 && (alen == blen || b[alen] == '/');
}

bool wfl_path_affects(const char *write, const char *read)
{
    bool wwild, rwild;
    size_t wlen = path_fixed(write, &wwild), rlen = path_fixed(read, &rwild);
    if (seg_prefix(write, wlen, read, rlen))
        return true;
    return rwild && seg_prefix(read, rlen, write, wlen);
}

static bool any_affects(const wfl_pathset *writes, const wfl_pathset *reads)
{
    for (size_t i = 0; i < writes->count; i++)
        for (size_t j = 0; j < reads->count; j++)
            if (wfl_path_affects(writes->paths[i], reads->paths[j]))
                return true;
    return false;
}

static void analyse_rule(rp *p, wfl_rule *r, wfl_chaining chaining)
{
    pathlist l = {.count = 0};
    collect_reads(p, r->cond, &l);
    store_paths(p, &l, &r->reads);
    l.count = 0;
    for (int b = 0; b < 2; b++)
        collect_writes(p, r->actions[b], r->action_count[b], true, &l);
    store_paths(p, &l, &r->writes);
    for (int b = 0; b < 2 && chaining != WFL_CHAIN_NONE; b++) {
        l.count = 0;
        collect_writes(p, r->actions[b], r->action_count[b], chaining == WFL_CHAIN_FULL, &l);
        store_paths(p, &l, &r->effects[b]);
    }
}

static void link_triggers(rp *p, wfl_ruleset *rs)
{
    for (size_t i = 0; i < rs->active_count; i++) {
        wfl_rule *r = &rs->rules[rs->active[i]];
        for (int b = 0; b < 2; b++) {
            wfl_triggers *t = &r->triggers[b];
            t->index = rp_alloc(p, rs->active_count, sizeof *t->index);
            for (size_t j = 0; j < rs->active_count && t->index; j++)
                if (any_affects(&r->effects[b], &rs->rules[rs->active[j]].reads))
                    t->index[t->count++] = j;
        }
    }
}

/* ---- rule sets ------------------------------------------------------------------------- */

static int rule_order(const void *a, const void *b)
{
    const wfl_rule *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void parse_ruleset(rp *p, const wf_xml_node *n, wfl_ruleset *rs)
{
    static const char *const attrs[] = {"Name", "ChainingBehavior", "Description", NULL};
    static const char *const kids[] = {"Rules", NULL};
    check_attrs(p, n, attrs);
    check_children(p, n, kids);
    rs->loc = loc_of(p, n);
    const char *name = attr_text(n, "Name");
    if (!name || !*name)
        report(p, WF_E_SCHEMA, n, "<RuleSet> needs a Name");
    rs->name = name ? rp_strdup(p, name, strlen(name)) : "";
    const char *chain = attr_text(n, "ChainingBehavior");
    rs->chaining = WFL_CHAIN_FULL;
    if (chain && strcmp(chain, "UpdateOnly") == 0)
        rs->chaining = WFL_CHAIN_UPDATE_ONLY;
    else if (chain && strcmp(chain, "None") == 0)
        rs->chaining = WFL_CHAIN_NONE;
    else if (chain && strcmp(chain, "Full") != 0)
        report(p, WF_E_SYNTAX, n, "bad ChainingBehavior '%s' (Full, UpdateOnly or None)", chain);
    const wf_xml_node *holder = prop_elem(n, "Rules");
    size_t count = holder ? holder->child_count : 0;
    rs->rules = rp_alloc(p, count, sizeof *rs->rules);
    for (const wf_xml_node *c = holder ? holder->first_child : NULL; c && rs->rules; c = c->next) {
        if (!is_wf(c, "Rule")) {
            report(p, WF_E_SCHEMA, c, "unexpected element <%s> in <RuleSet.Rules>", c->name);
            continue;
        }
        assert(rs->rule_count < count); /* one slot per child element of <RuleSet.Rules> */
        wfl_rule *r = &rs->rules[rs->rule_count];
        parse_rule(p, c, r);
        for (size_t i = 0; i < rs->rule_count; i++)
            if (*r->name && strcmp(rs->rules[i].name, r->name) == 0) {
                report(p, WF_E_SCHEMA, c, "duplicate rule name '%s' in rule set '%s'", r->name,
                       rs->name);
                break;
            }
        rs->rule_count++;
    }
    if (p->first.code != WF_OK)
        return;
    if (rs->rule_count > 1) /* an empty rule set (as the designer saves one) has no array */
        qsort(rs->rules, rs->rule_count, sizeof *rs->rules, rule_order);
    for (size_t i = 1; i < rs->rule_count; i++) /* execution order: priority, then name */
        assert(rule_order(&rs->rules[i - 1], &rs->rules[i]) <= 0);
    rs->active = rp_alloc(p, rs->rule_count, sizeof *rs->active);
    for (size_t i = 0; i < rs->rule_count && rs->active; i++)
        if (rs->rules[i].active)
            rs->active[rs->active_count++] = i;
    for (size_t i = 0; i < rs->rule_count; i++)
        analyse_rule(p, &rs->rules[i], rs->chaining);
    if (rs->chaining != WFL_CHAIN_NONE)
        link_triggers(p, rs);
}

/* ---- the document ---------------------------------------------------------------------- */

static void parse_conditions(rp *p, const wf_xml_node *holder)
{
    wfl_rules *rules = p->rules;
    rules->conds = rp_alloc(p, holder->child_count, sizeof *rules->conds);
    for (const wf_xml_node *c = holder->first_child; c && rules->conds; c = c->next) {
        if (!is_wf(c, "RuleExpressionCondition")) {
            report(p, WF_E_SCHEMA, c, "unexpected element <%s> in <%s>", c->name, holder->name);
            continue;
        }
        wfl_rule_cond *cond = &rules->conds[rules->cond_count];
        cond->owner = rules;
        const char *name = attr_text(c, "Name");
        cond->loc = loc_of(p, c);
        cond->name = name ? rp_strdup(p, name, strlen(name)) : "";
        if (!name || !*name)
            report(p, WF_E_SCHEMA, c, "a condition in <RuleDefinitions.Conditions> needs a Name");
        else if (wfl_rules_condition(rules, name))
            report(p, WF_E_SCHEMA, c, "duplicate condition name '%s'", name);
        cond->expr = parse_condition_body(p, c);
        rules->cond_count++;
    }
}

static void parse_rulesets(rp *p, const wf_xml_node *holder)
{
    wfl_rules *rules = p->rules;
    rules->sets = rp_alloc(p, holder->child_count, sizeof *rules->sets);
    for (const wf_xml_node *c = holder->first_child; c && rules->sets; c = c->next) {
        if (!is_wf(c, "RuleSet")) {
            report(p, WF_E_SCHEMA, c, "unexpected element <%s> in <%s>", c->name, holder->name);
            continue;
        }
        wfl_ruleset *rs = &rules->sets[rules->set_count];
        parse_ruleset(p, c, rs);
        rs->owner = rules;
        if (*rs->name && wfl_rules_ruleset(rules, rs->name))
            report(p, WF_E_SCHEMA, c, "duplicate rule set name '%s'", rs->name);
        rules->set_count++;
    }
}

static void parse_root(rp *p, const wf_xml_node *root)
{
    if (!is_wf(root, "RuleDefinitions")) {
        report(p, WF_E_SCHEMA, root, "root element must be <RuleDefinitions xmlns=\"" WF_NS
               "\">, not <%s>", root->name);
        return;
    }
    check_attrs(p, root, no_attrs);
    static const char *const kids[] = {"Conditions", "RuleSets", NULL};
    check_children(p, root, kids);
    const wf_xml_node *conds = prop_elem(root, "Conditions");
    const wf_xml_node *sets = prop_elem(root, "RuleSets");
    if (conds)
        parse_conditions(p, conds);
    if (sets && !p->nomem)
        parse_rulesets(p, sets);
}

wf_status wfl__rules_excs(wf_types *types, wfl_rules_excs *out, wf_error *err)
{
    wf_status st = wf_types_exception(types, "RuleException", &wf_exc_exception, &out->rule, err);
    if (st == WF_OK)
        st = wf_types_exception(types, "RuleEvaluationException", out->rule, &out->rule_eval,
                                err);
    if (st == WF_OK)
        st = wf_types_exception(types, "TargetInvocationException", &wf_exc_application,
                                &out->target_inv, err);
    return st;
}

static wf_status build(wf_xml_doc *doc, wf_types *types, wfl_rules **out, wf_diags *diags,
                       wf_error *err)
{
    rp p = {NULL, doc, types, diags, WF_ERROR_INIT, false};
    p.rules = wf_calloc(1, sizeof *p.rules);
    if (p.rules)
        p.rules->arena = wf_arena_create(0);
    if (!p.rules || !p.rules->arena) {
        wf_free(p.rules);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    p.rules->path = "";
    if (types && wfl__rules_excs(types, &p.rules->excs, &p.first) != WF_OK)
        p.nomem = p.first.code == WF_E_NOMEM;
    const char *path = wf_xml_path(doc);
    p.rules->path = rp_strdup(&p, path, strlen(path));
    if (!p.nomem && p.first.code == WF_OK)
        parse_root(&p, wf_xml_root(doc));
    if (p.first.code != WF_OK) {
        if (err && err->code == WF_OK)
            *err = p.first;
        wfl_rules_destroy(p.rules);
        return p.first.code;
    }
    *out = p.rules;
    return WF_OK;
}

/* ---- files (wf_xml transcodes the UTF-16 the WF3 designer often saves .rules in) ---------- */

static wf_status build_parsed(wf_status parsed, wf_xml_doc *doc, wf_types *types,
                              wfl_rules **out, wf_diags *diags, wf_error *err)
{
    if (parsed != WF_OK) {
        if (diags && err)
            wf_diags_add_error(diags, WF_SEV_ERROR, err);
        return parsed;
    }
    wf_status st = build(doc, types, out, diags, err);
    wf_xml_doc_destroy(doc);
    return st;
}

wf_status wfl_rules_load_mem(const char *name, const char *data, size_t len, wf_types *types,
                             wfl_rules **out, wf_diags *diags, wf_error *err)
{
    *out = NULL;
    wf_xml_doc *doc = NULL;
    wf_status st = wf_xml_load_mem(name, data, len, NULL, &doc, err);
    return build_parsed(st, doc, types, out, diags, err);
}

wf_status wfl_rules_load(const char *path, wf_types *types, wfl_rules **out, wf_diags *diags,
                         wf_error *err)
{
    *out = NULL;
    wf_xml_doc *doc = NULL;
    wf_status st = wf_xml_load_file(path, NULL, &doc, err);
    return build_parsed(st, doc, types, out, diags, err);
}

void wfl_rules_destroy(wfl_rules *rules)
{
    if (!rules)
        return;
    wf_arena_destroy(rules->arena);
    wf_free(rules);
}

/* ---- accessors ------------------------------------------------------------------------- */

const wfl_rule_cond *wfl_rules_condition(const wfl_rules *rules, const char *name)
{
    for (size_t i = 0; i < rules->cond_count; i++)
        if (strcmp(rules->conds[i].name, name) == 0)
            return &rules->conds[i];
    return NULL;
}

const wfl_ruleset *wfl_rules_ruleset(const wfl_rules *rules, const char *name)
{
    for (size_t i = 0; i < rules->set_count; i++)
        if (strcmp(rules->sets[i].name, name) == 0)
            return &rules->sets[i];
    return NULL;
}

size_t wfl_rules_condition_count(const wfl_rules *rules) { return rules->cond_count; }
const wfl_rule_cond *wfl_rules_condition_at(const wfl_rules *rules, size_t index)
{
    return index < rules->cond_count ? &rules->conds[index] : NULL;
}
size_t wfl_rules_ruleset_count(const wfl_rules *rules) { return rules->set_count; }
const wfl_ruleset *wfl_rules_ruleset_at(const wfl_rules *rules, size_t index)
{
    return index < rules->set_count ? &rules->sets[index] : NULL;
}

const char *wfl_rule_cond_name(const wfl_rule_cond *cond) { return cond->name; }
const wfl_rexpr *wfl_rule_cond_expr(const wfl_rule_cond *cond) { return cond->expr; }
wf_loc wfl_rule_cond_loc(const wfl_rule_cond *cond) { return cond->loc; }

const char *wfl_ruleset_name(const wfl_ruleset *rs) { return rs->name; }
wfl_chaining wfl_ruleset_chaining(const wfl_ruleset *rs) { return rs->chaining; }
size_t wfl_ruleset_rule_count(const wfl_ruleset *rs) { return rs->rule_count; }
const wfl_rule *wfl_ruleset_rule_at(const wfl_ruleset *rs, size_t index)
{
    return index < rs->rule_count ? &rs->rules[index] : NULL;
}

const char *wfl_rule_name(const wfl_rule *rule) { return rule->name; }
int wfl_rule_priority(const wfl_rule *rule) { return rule->priority; }
bool wfl_rule_active(const wfl_rule *rule) { return rule->active; }
bool wfl_rule_reevaluate_always(const wfl_rule *rule) { return rule->always; }
const wfl_rexpr *wfl_rule_condition(const wfl_rule *rule) { return rule->cond; }
wf_loc wfl_rule_loc(const wfl_rule *rule) { return rule->loc; }
size_t wfl_rule_action_count(const wfl_rule *rule, bool else_branch)
{
    return rule->action_count[else_branch];
}
const wfl_rule_action *wfl_rule_action_at(const wfl_rule *rule, bool else_branch, size_t index)
{
    return index < rule->action_count[else_branch] ? &rule->actions[else_branch][index] : NULL;
}
size_t wfl_rule_read_count(const wfl_rule *rule) { return rule->reads.count; }
const char *wfl_rule_read_at(const wfl_rule *rule, size_t index)
{
    return index < rule->reads.count ? rule->reads.paths[index] : NULL;
}
size_t wfl_rule_write_count(const wfl_rule *rule) { return rule->writes.count; }
const char *wfl_rule_write_at(const wfl_rule *rule, size_t index)
{
    return index < rule->writes.count ? rule->writes.paths[index] : NULL;
}

wfl_action_kind wfl_rule_action_kind(const wfl_rule_action *a) { return a->kind; }
const wfl_rexpr *wfl_rule_action_target(const wfl_rule_action *a) { return a->target; }
const wfl_rexpr *wfl_rule_action_value(const wfl_rule_action *a) { return a->value; }
const char *wfl_rule_action_path(const wfl_rule_action *a) { return a->path; }
wf_loc wfl_rule_action_loc(const wfl_rule_action *a) { return a->loc; }

wfl_rexpr_kind wfl_rexpr_kind_of(const wfl_rexpr *e) { return e->kind; }
wf_loc wfl_rexpr_loc(const wfl_rexpr *e) { return e->loc; }
size_t wfl_rexpr_child_count(const wfl_rexpr *e) { return e->kid_count; }
const wfl_rexpr *wfl_rexpr_child(const wfl_rexpr *e, size_t index)
{
    return index < e->kid_count ? e->kids[index] : NULL;
}
const char *wfl_rexpr_name(const wfl_rexpr *e) { return e->name; }
bool wfl_rexpr_lookup_missed(const wfl_rexpr *e) { return e->lookup_missed; }
wfl_rop wfl_rexpr_op(const wfl_rexpr *e) { return e->op; }
const wf_value *wfl_rexpr_value(const wfl_rexpr *e)
{
    return e->kind == WFL_REX_PRIMITIVE ? &e->value : NULL;
}
const wf_type *wfl_rexpr_type(const wfl_rexpr *e) { return e->type; }

/* wfl_typelib.c — loads and validates `NAME.activities.xml` type libraries, opens the shared
 * object they name from the library path, and prepares every function's libffi call once.
 * Everything a typelib owns lives in one arena; only native handles and heap default values
 * need releasing (docs/architecture.md "The legacy model"). */
#include "wfl_typelib.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../common/wf_xml.h"
#include "../common/wf_payload.h"

#define TL_NS "urn:wfbridge:typelib"

struct wfl_tl_func {
    wfl_tl_func_kind kind;
    const char *name;   /* member name */
    const char *symbol; /* exported C function */
    bool error_on_nonzero;
    wfl_tl_prop *params; /* C parameters, document order */
    size_t param_count;
    const wfl_tl_prop *ret_binding; /* Direction="Return", NULL if none */
    const wf_type *ret_type;        /* C return type, NULL = void */
    wf_native_fn *native;           /* owned; NULL if parse-only */
    wf_loc loc;
    size_t index; /* in its class's funcs (wfl_tl_class_func_index); 0 elsewhere */
};

struct wfl_tl_activity {
    const char *name;
    wfl_tl_prop *props;
    size_t prop_count;
    wfl_tl_func func;         /* a leaf's Execute; symbol NULL for a composite */
    const char *definition;   /* a composite's Definition= (XOML file name), else NULL */
    struct wfl_tl_class *body; /* a composite's code-beside: its properties and functions */
    bool container;           /* Children="Sequence": runs its child activities after Function */
};

struct wfl_tl_class {
    const char *name;
    const char *base_type; /* BaseType: a built-in workflow root, NULL when not given */
    wfl_tl_prop *props;
    size_t prop_count;
    wfl_tl_func *funcs; /* handlers and conditions */
    size_t func_count;
};

struct wfl_tl_event {
    const char *name;
    wfl_tl_prop *params;
    size_t param_count;
};

struct wfl_tl_service {
    const char *name;
    const char *ns; /* Namespace: an ASMX proxy's WebServiceBinding namespace, "" when none */
    wfl_tl_func *methods;
    size_t method_count;
    wfl_tl_event *events;
    size_t event_count;
};

struct wfl_typelib {
    wf_arena *arena;
    const char *file;
    const char *name;
    const char *library;
    wf_native_lib *lib; /* owned */
    wfl_tl_activity *activities;
    size_t activity_count;
    wfl_tl_class *classes;
    size_t class_count;
    wfl_tl_service *services;
    size_t service_count;
    const wf_type **exceptions;
    size_t exception_count;
    wf_value *owned_values; /* heap default values to release */
    size_t owned_count, owned_cap;
};

/* The parse state: problems go to diags (if any) and the first one to first. */
typedef struct tl_parse {
    wfl_typelib *tl;
    const wf_xml_doc *doc;
    wf_types *types;
    wf_diags *diags;
    wf_error first;
    bool nomem;
} tl_parse;

/* ---- reporting ------------------------------------------------------------------------- */

static void report(tl_parse *p, wf_status code, wf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report(tl_parse *p, wf_status code, wf_loc loc, const char *fmt, ...)
{
    wf_error e = WF_ERROR_INIT;
    va_list ap;
    va_start(ap, fmt);
    wf_error_setv(&e, code, &loc, fmt, ap);
    va_end(ap);
    if (code == WF_E_NOMEM)
        p->nomem = true;
    if (p->diags)
        wf_diags_add_error(p->diags, WF_SEV_ERROR, &e);
    if (p->first.code == WF_OK)
        p->first = e;
}

static bool failed(const tl_parse *p)
{
    return p->first.code != WF_OK;
}

static void *tl_alloc(tl_parse *p, size_t count, size_t size)
{
    if (count == 0)
        return NULL;
    if (size && count > SIZE_MAX / size) {
        report(p, WF_E_NOMEM, WF_LOC_NONE, "out of memory");
        return NULL;
    }
    void *mem = wf_arena_alloc(p->tl->arena, count * size);
    if (!mem)
        report(p, WF_E_NOMEM, WF_LOC_NONE, "out of memory");
    return mem;
}

/* A location in the typelib file (the file name outlives the XML document). */
static wf_loc node_loc(const tl_parse *p, const wf_xml_node *n)
{
    wf_loc loc = {p->tl->file, n->line, n->col};
    return loc;
}

static const char *tl_strdup(tl_parse *p, const char *s)
{
    char *copy = wf_arena_strdup(p->tl->arena, s);
    if (!copy) {
        report(p, WF_E_NOMEM, WF_LOC_NONE, "out of memory");
        return ""; /* callers compare names; the load fails anyway */
    }
    return copy;
}

/* ---- attributes ------------------------------------------------------------------------ */

/* Check that every unprefixed attribute of node is in `allowed` (NULL-terminated);
 * namespaced attributes belong to others (xml:space, designer tools) and are ignored. */
static void check_attrs(tl_parse *p, const wf_xml_node *node, const char *const *allowed)
{
    for (size_t i = 0; i < node->attr_count; i++) {
        const wf_xml_attr *a = &node->attrs[i];
        if (a->ns != NULL)
            continue;
        bool known = false;
        for (const char *const *k = allowed; *k && !known; k++)
            known = strcmp(*k, a->name) == 0;
        if (!known)
            report(p, WF_E_SCHEMA, wf_xml_attr_loc(p->doc, a), "unknown attribute '%s' on <%s>",
                   a->name, node->name);
    }
}

static const wf_xml_attr *attr(const wf_xml_node *node, const char *name)
{
    return wf_xml_attr_find(node, NULL, name);
}

/* A required, non-empty attribute; reports and returns NULL when missing. */
static const char *required(tl_parse *p, const wf_xml_node *node, const char *name)
{
    const wf_xml_attr *a = attr(node, name);
    if (!a || !*a->value) {
        report(p, WF_E_SCHEMA, wf_xml_node_loc(p->doc, node), "<%s> needs a %s attribute",
               node->name, name);
        return NULL;
    }
    return a->value;
}

static bool parse_bool_attr(tl_parse *p, const wf_xml_node *node, const char *name, bool *out)
{
    const wf_xml_attr *a = attr(node, name);
    *out = false;
    if (!a)
        return true;
    if (strcmp(a->value, "true") == 0 || strcmp(a->value, "True") == 0)
        *out = true;
    else if (strcmp(a->value, "false") != 0 && strcmp(a->value, "False") != 0) {
        report(p, WF_E_SYNTAX, wf_xml_value_loc(p->doc, a), "%s must be true or false, not '%s'",
               name, a->value);
        return false;
    }
    return true;
}

static bool parse_dir(tl_parse *p, const wf_xml_node *node, bool allow_return, wfl_tl_dir *out)
{
    static const char *const names[] = {"In", "Out", "InOut", "Return"};
    const wf_xml_attr *a = attr(node, "Direction");
    *out = WFL_TL_IN;
    if (!a)
        return true;
    for (int d = 0; d < 4; d++) {
        if (strcmp(a->value, names[d]) == 0 && (d != WFL_TL_RETURN || allow_return)) {
            *out = (wfl_tl_dir)d;
            return true;
        }
    }
    report(p, WF_E_SYNTAX, wf_xml_value_loc(p->doc, a), "bad Direction '%s' (expected %s)",
           a->value, allow_return ? "In, Out, InOut or Return" : "In, Out or InOut");
    return false;
}

static bool is_native_type(const wf_type *t)
{
    switch (t->kind) {
    case WF_K_BOOL: case WF_K_INT32: case WF_K_INT64: case WF_K_DOUBLE:
    case WF_K_DECIMAL: case WF_K_DATETIME: case WF_K_STRING:
        return true;
    default:
        return false;
    }
}

/* Type="Int32" or "System.Int32". With `native`, the type must have a C mapping. */
static const wf_type *parse_type(tl_parse *p, const wf_xml_node *node, bool native)
{
    const char *text = required(p, node, "Type");
    if (!text)
        return NULL;
    const wf_xml_attr *a = attr(node, "Type");
    const char *name = strncmp(text, "System.", 7) == 0 ? text + 7 : text;
    const wf_type *t = wf_types_find(p->types, name);
    if (!t) {
        report(p, WF_E_TYPE, wf_xml_value_loc(p->doc, a), "unknown type '%s'", text);
        return NULL;
    }
    if (native && !is_native_type(t)) {
        report(p, WF_E_TYPE, wf_xml_value_loc(p->doc, a),
               "type '%s' has no C mapping (use Boolean, Int32, Int64, Double, Decimal, "
               "DateTime or String)", text);
        return NULL;
    }
    return t;
}

static bool keep_value(tl_parse *p, wf_value *v)
{
    wfl_typelib *tl = p->tl;
    if (tl->owned_count == tl->owned_cap) {
        size_t cap = tl->owned_cap ? tl->owned_cap * 2 : 8;
        wf_value *grown = wf_realloc(tl->owned_values, cap * sizeof *grown);
        if (!grown) {
            wf_value_release(v);
            report(p, WF_E_NOMEM, WF_LOC_NONE, "out of memory");
            return false;
        }
        tl->owned_values = grown;
        tl->owned_cap = cap;
    }
    tl->owned_values[tl->owned_count++] = *v;
    return true;
}

static void parse_default(tl_parse *p, const wf_xml_node *node, wfl_tl_prop *prop)
{
    const wf_xml_attr *a = attr(node, "Default");
    prop->default_value = wf_null();
    if (!a || !prop->type)
        return;
    wf_loc loc = wf_xml_value_loc(p->doc, a);
    if (prop->type->kind == WF_K_STRING) {
        if (wf_value_string_static(p->tl->arena, a->value, strlen(a->value),
                                   &prop->default_value) != WF_OK)
            report(p, WF_E_NOMEM, loc, "out of memory");
        prop->has_default = true;
        return;
    }
    wf_error e = WF_ERROR_INIT;
    wf_value v = wf_null();
    wf_status st = wf_value_parse(p->types, prop->type, a->value, &v, &e);
    if (st != WF_OK) {
        report(p, st == WF_E_NOMEM ? WF_E_NOMEM : WF_E_SYNTAX, loc,
               "bad Default '%s' for %s property '%s': %s", a->value, prop->type->name,
               prop->name, e.message);
        return;
    }
    wf_kind k = v.type->kind;
    bool heap = k == WF_K_STRING || k == WF_K_LIST || k == WF_K_RECORD || k == WF_K_EXCEPTION;
    if (heap && !keep_value(p, &v))
        return;
    prop->default_value = v;
    prop->has_default = true;
}

/* ---- elements ------------------------------------------------------------------------- */

static bool is_tl_element(tl_parse *p, const wf_xml_node *n, const char *name)
{
    (void)p;
    return n->ns && strcmp(n->ns, TL_NS) == 0 && strcmp(n->name, name) == 0;
}

static void unknown_element(tl_parse *p, const wf_xml_node *n, const char *parent)
{
    report(p, WF_E_SCHEMA, wf_xml_node_loc(p->doc, n), "unknown element <%s%s%s> in <%s>",
           n->prefix ? n->prefix : "", n->prefix ? ":" : "", n->name, parent);
}

/* Whose <Property> it is: a native ActivityType's (its type must map to C, Direction may be
 * Return), a composite ActivityType's (Direction In, Out or InOut; without one, InOut: copied
 * into the body and back, docs/formats.md "Composite activity types") or a Class's. */
typedef enum prop_owner { PROP_NATIVE, PROP_COMPOSITE, PROP_CLASS } prop_owner;

static void parse_property(tl_parse *p, const wf_xml_node *n, prop_owner owner, wfl_tl_prop *prop)
{
    static const char *const act_attrs[] = {"Name", "Type", "Direction", "Default", NULL};
    static const char *const cls_attrs[] = {"Name", "Type", "Default", NULL};
    check_attrs(p, n, owner == PROP_CLASS ? cls_attrs : act_attrs);
    const char *name = required(p, n, "Name");
    prop->name = name ? tl_strdup(p, name) : "";
    prop->line = n->line;
    prop->col = n->col;
    prop->type = parse_type(p, n, owner == PROP_NATIVE);
    if (owner == PROP_COMPOSITE && !attr(n, "Direction"))
        prop->dir = WFL_TL_INOUT;
    else if (owner != PROP_CLASS)
        parse_dir(p, n, owner == PROP_NATIVE, &prop->dir);
    parse_default(p, n, prop);
    if (prop->has_default && prop->dir != WFL_TL_IN && prop->dir != WFL_TL_INOUT)
        report(p, WF_E_SCHEMA, wf_xml_node_loc(p->doc, n),
               "Default is only allowed on In and InOut properties ('%s')", prop->name);
}

/* Report a duplicate among the `count` names before index `i` in an array of records. */
static bool is_duplicate(const char *const *names, size_t count, const char *name)
{
    for (size_t i = 0; i < count; i++)
        if (names[i] && name && strcmp(names[i], name) == 0)
            return true;
    return false;
}

static void dup_check_props(tl_parse *p, const wfl_tl_prop *props, size_t count, const char *owner)
{
    for (size_t i = 1; i < count; i++)
        for (size_t j = 0; j < i; j++)
            if (*props[i].name && strcmp(props[i].name, props[j].name) == 0) {
                wf_loc loc = {wfl_typelib_file(p->tl), props[i].line, props[i].col};
                report(p, WF_E_SCHEMA, loc, "duplicate name '%s' in %s", props[i].name, owner);
                break;
            }
}

/* Derive the C signature facts of fn from its params (Return binding pulled out). */
static void finish_func(tl_parse *p, wfl_tl_func *fn, const wfl_tl_prop *all, size_t all_count)
{
    size_t n = 0;
    fn->params = tl_alloc(p, all_count, sizeof *fn->params);
    for (size_t i = 0; i < all_count; i++) {
        if (all[i].dir == WFL_TL_RETURN) {
            if (fn->ret_binding) {
                wf_loc loc = {wfl_typelib_file(p->tl), all[i].line, all[i].col};
                report(p, WF_E_SCHEMA, loc, "'%s' has more than one Return binding", fn->name);
            }
            fn->ret_binding = &all[i];
        } else if (fn->params) {
            fn->params[n++] = all[i];
        }
    }
    fn->param_count = n;
    if (n > WF_NATIVE_MAX_PARAMS)
        report(p, WF_E_LIMIT, fn->loc, "'%s' has %zu parameters; at most %d", fn->name, n,
               WF_NATIVE_MAX_PARAMS);
    if (fn->kind == WFL_TL_CONDITION)
        fn->ret_type = &wf_type_bool;
    else if (fn->error_on_nonzero)
        fn->ret_type = &wf_type_int32;
    else if (fn->ret_binding)
        fn->ret_type = fn->ret_binding->type;
    if (fn->error_on_nonzero && fn->ret_binding && fn->ret_binding->type &&
        fn->ret_binding->type->kind != WF_K_INT32)
        report(p, WF_E_TYPE, fn->loc,
               "'%s' has ErrorOnNonZero, so its Return binding '%s' must be Int32", fn->name,
               fn->ret_binding->name);
}

static bool valid_library_name(const char *name);
static void parse_class_body(tl_parse *p, const wf_xml_node *n, prop_owner kind,
                             wfl_tl_class *cls);

/* <ActivityType Name= Definition="X.xoml">: a composite whose body is a XOML file beside the
 * type library; its Property/Handler/Condition children are its code-beside, as a Class's. */
static void parse_composite(tl_parse *p, const wf_xml_node *n, wfl_tl_activity *act)
{
    static const char *const attrs[] = {"Name", "Definition", NULL};
    check_attrs(p, n, attrs);
    const char *name = required(p, n, "Name");
    const char *def = attr(n, "Definition")->value;
    act->name = name ? tl_strdup(p, name) : "";
    act->definition = tl_strdup(p, def);
    if (!*def || !valid_library_name(def) || strchr(def, '\\'))
        report(p, WF_E_SCHEMA, wf_xml_value_loc(p->doc, attr(n, "Definition")),
               "Definition '%s' must be a plain file name beside the type library", def);
    act->func.kind = WFL_TL_EXECUTE;
    act->func.name = act->name;
    act->func.loc = node_loc(p, n);
    act->body = tl_alloc(p, 1, sizeof *act->body);
    if (!act->body)
        return;
    act->body->name = act->name;
    parse_class_body(p, n, PROP_COMPOSITE, act->body);
    act->props = act->body->props;
    act->prop_count = act->body->prop_count;
}

static void parse_activity(tl_parse *p, const wf_xml_node *n, wfl_tl_activity *act)
{
    static const char *const attrs[] = {"Name", "Function", "ErrorOnNonZero", "Children", NULL};
    if (attr(n, "Definition")) {
        parse_composite(p, n, act);
        return;
    }
    check_attrs(p, n, attrs);
    const char *name = required(p, n, "Name");
    const char *sym = required(p, n, "Function");
    act->name = name ? tl_strdup(p, name) : "";
    act->func.kind = WFL_TL_EXECUTE;
    act->func.name = act->name;
    act->func.symbol = sym ? tl_strdup(p, sym) : "";
    act->func.loc = node_loc(p, n);
    parse_bool_attr(p, n, "ErrorOnNonZero", &act->func.error_on_nonzero);
    const wf_xml_attr *children = attr(n, "Children");
    if (children && strcmp(children->value, "Sequence") != 0)
        report(p, WF_E_SCHEMA, wf_xml_value_loc(p->doc, children),
               "Children '%s' must be Sequence", children->value);
    act->container = children != NULL;
    act->props = tl_alloc(p, n->child_count, sizeof *act->props);
    for (const wf_xml_node *c = n->first_child; c && act->props; c = c->next) {
        if (!is_tl_element(p, c, "Property")) {
            unknown_element(p, c, "ActivityType");
            continue;
        }
        parse_property(p, c, PROP_NATIVE, &act->props[act->prop_count++]);
    }
    dup_check_props(p, act->props, act->prop_count, act->name);
    finish_func(p, &act->func, act->props, act->prop_count);
}

/* <Parameter Property= Direction=> of a Handler/Condition: binds a class property. */
static void parse_bound_param(tl_parse *p, const wf_xml_node *n, const wfl_tl_class *cls,
                              bool is_condition, wfl_tl_prop *out)
{
    static const char *const attrs[] = {"Property", "Direction", NULL};
    check_attrs(p, n, attrs);
    out->line = n->line;
    out->col = n->col;
    const char *name = required(p, n, "Property");
    out->name = name ? tl_strdup(p, name) : "";
    parse_dir(p, n, !is_condition, &out->dir);
    if (!name)
        return;
    const wfl_tl_prop *prop = wfl_tl_class_find_prop(cls, name);
    const wf_xml_attr *a = attr(n, "Property");
    if (!prop) {
        report(p, WF_E_NAME, wf_xml_value_loc(p->doc, a), "class '%s' has no property '%s'",
               cls->name, name);
        return;
    }
    out->type = prop->type;
    if (prop->type && !is_native_type(prop->type))
        report(p, WF_E_TYPE, wf_xml_value_loc(p->doc, a),
               "property '%s' of type %s cannot be passed to a C function", name,
               prop->type->name);
}

static void parse_class_func(tl_parse *p, const wf_xml_node *n, wfl_tl_class *cls,
                             wfl_tl_func *fn)
{
    static const char *const h_attrs[] = {"Name", "Function", "ErrorOnNonZero", NULL};
    static const char *const c_attrs[] = {"Name", "Function", NULL};
    bool is_condition = strcmp(n->name, "Condition") == 0;
    check_attrs(p, n, is_condition ? c_attrs : h_attrs);
    const char *name = required(p, n, "Name");
    const char *sym = required(p, n, "Function");
    fn->kind = is_condition ? WFL_TL_CONDITION : WFL_TL_HANDLER;
    fn->name = name ? tl_strdup(p, name) : "";
    fn->symbol = sym ? tl_strdup(p, sym) : "";
    fn->loc = node_loc(p, n);
    if (!is_condition)
        parse_bool_attr(p, n, "ErrorOnNonZero", &fn->error_on_nonzero);
    wfl_tl_prop *all = tl_alloc(p, n->child_count, sizeof *all);
    size_t count = 0;
    for (const wf_xml_node *c = n->first_child; c && all; c = c->next) {
        if (!is_tl_element(p, c, "Parameter")) {
            unknown_element(p, c, n->name);
            continue;
        }
        parse_bound_param(p, c, cls, is_condition, &all[count++]);
    }
    finish_func(p, fn, all, count);
}

static void parse_class(tl_parse *p, const wf_xml_node *n, wfl_tl_class *cls)
{
    static const char *const attrs[] = {"Name", "BaseType", NULL};
    check_attrs(p, n, attrs);
    const char *name = required(p, n, "Name");
    cls->name = name ? tl_strdup(p, name) : "";
    const wf_xml_attr *base = attr(n, "BaseType");
    if (base && strcmp(base->value, "SequentialWorkflowActivity") != 0 &&
        strcmp(base->value, "StateMachineWorkflowActivity") != 0)
        report(p, WF_E_SCHEMA, wf_xml_value_loc(p->doc, base),
               "BaseType '%s' must be SequentialWorkflowActivity or "
               "StateMachineWorkflowActivity", base->value);
    else if (base)
        cls->base_type = tl_strdup(p, base->value);
    parse_class_body(p, n, PROP_CLASS, cls);
}

/* Properties, Handlers and Conditions of a Class or of a composite ActivityType. */
static void parse_class_body(tl_parse *p, const wf_xml_node *n, prop_owner kind,
                             wfl_tl_class *cls)
{
    const char *owner = n->name;
    cls->props = tl_alloc(p, n->child_count, sizeof *cls->props);
    cls->funcs = tl_alloc(p, n->child_count, sizeof *cls->funcs);
    if (!cls->props || !cls->funcs)
        return;
    /* Properties first, so handlers may bind properties declared after them. */
    for (const wf_xml_node *c = n->first_child; c; c = c->next)
        if (is_tl_element(p, c, "Property"))
            parse_property(p, c, kind, &cls->props[cls->prop_count++]);
    dup_check_props(p, cls->props, cls->prop_count, cls->name);
    const char **names = tl_alloc(p, n->child_count, sizeof *names);
    for (const wf_xml_node *c = n->first_child; c && names; c = c->next) {
        if (is_tl_element(p, c, "Property"))
            continue;
        if (!is_tl_element(p, c, "Handler") && !is_tl_element(p, c, "Condition")) {
            unknown_element(p, c, owner);
            continue;
        }
        wfl_tl_func *fn = &cls->funcs[cls->func_count];
        parse_class_func(p, c, cls, fn);
        fn->index = cls->func_count;
        if (is_duplicate(names, cls->func_count, fn->name))
            report(p, WF_E_SCHEMA, fn->loc, "duplicate name '%s' in class '%s'", fn->name,
                   cls->name);
        names[cls->func_count++] = fn->name;
    }
}

/* <Parameter Name= Type= Direction=> of a Method (with Direction) or an Event (without). */
static void parse_named_params(tl_parse *p, const wf_xml_node *n, bool of_method,
                               wfl_tl_prop **out, size_t *count)
{
    static const char *const m_attrs[] = {"Name", "Type", "Direction", NULL};
    static const char *const e_attrs[] = {"Name", "Type", NULL};
    *out = tl_alloc(p, n->child_count, sizeof **out);
    *count = 0;
    for (const wf_xml_node *c = n->first_child; c && *out; c = c->next) {
        if (!is_tl_element(p, c, "Parameter")) {
            unknown_element(p, c, n->name);
            continue;
        }
        wfl_tl_prop *prm = &(*out)[(*count)++];
        check_attrs(p, c, of_method ? m_attrs : e_attrs);
        const char *name = required(p, c, "Name");
        prm->name = name ? tl_strdup(p, name) : "";
        prm->line = c->line;
        prm->col = c->col;
        prm->type = parse_type(p, c, of_method);
        if (of_method)
            parse_dir(p, c, true, &prm->dir);
    }
    dup_check_props(p, *out, *count, n->name);
}

static void parse_method(tl_parse *p, const wf_xml_node *n, wfl_tl_func *fn)
{
    static const char *const attrs[] = {"Name", "Function", "ErrorOnNonZero", NULL};
    check_attrs(p, n, attrs);
    const char *name = required(p, n, "Name");
    const char *sym = required(p, n, "Function");
    fn->kind = WFL_TL_METHOD;
    fn->name = name ? tl_strdup(p, name) : "";
    fn->symbol = sym ? tl_strdup(p, sym) : "";
    fn->loc = node_loc(p, n);
    parse_bool_attr(p, n, "ErrorOnNonZero", &fn->error_on_nonzero);
    wfl_tl_prop *all;
    size_t count;
    parse_named_params(p, n, true, &all, &count);
    finish_func(p, fn, all, count);
}

static void parse_service(tl_parse *p, const wf_xml_node *n, wfl_tl_service *svc)
{
    static const char *const attrs[] = {"Name", "Namespace", NULL};
    check_attrs(p, n, attrs);
    const char *name = required(p, n, "Name");
    const wf_xml_attr *ns = wf_xml_attr_find(n, NULL, "Namespace");
    svc->name = name ? tl_strdup(p, name) : "";
    svc->ns = ns ? tl_strdup(p, ns->value) : "";
    svc->methods = tl_alloc(p, n->child_count, sizeof *svc->methods);
    svc->events = tl_alloc(p, n->child_count, sizeof *svc->events);
    const char **names = tl_alloc(p, n->child_count, sizeof *names);
    size_t named = 0;
    for (const wf_xml_node *c = n->first_child; c && names && svc->methods && svc->events;
         c = c->next) {
        const char *member;
        if (is_tl_element(p, c, "Method")) {
            wfl_tl_func *fn = &svc->methods[svc->method_count++];
            parse_method(p, c, fn);
            member = fn->name;
        } else if (is_tl_element(p, c, "Event")) {
            static const char *const e_attrs[] = {"Name", NULL};
            wfl_tl_event *ev = &svc->events[svc->event_count++];
            check_attrs(p, c, e_attrs);
            const char *ename = required(p, c, "Name");
            ev->name = ename ? tl_strdup(p, ename) : "";
            parse_named_params(p, c, false, &ev->params, &ev->param_count);
            member = ev->name;
        } else {
            unknown_element(p, c, "Service");
            continue;
        }
        if (is_duplicate(names, named, member))
            report(p, WF_E_SCHEMA, wf_xml_node_loc(p->doc, c),
                   "duplicate member '%s' in service '%s'", member, svc->name);
        names[named++] = member;
    }
}

/* A Base name: a built-in ("System.ApplicationException", "ApplicationException") or an
 * exception declared earlier in this typelib. */
static const wf_type *find_exception(tl_parse *p, const char *name)
{
    const wf_type *t = wfl_typelib_exception(p->tl, name);
    if (t)
        return t;
    t = wf_types_find(p->types, strncmp(name, "System.", 7) == 0 ? name + 7 : name);
    return t && t->kind == WF_K_EXCEPTION ? t : NULL;
}

static void parse_exception(tl_parse *p, const wf_xml_node *n)
{
    static const char *const attrs[] = {"Name", "Base", NULL};
    check_attrs(p, n, attrs);
    const char *name = required(p, n, "Name");
    if (!name)
        return;
    const wf_xml_attr *base_attr = attr(n, "Base");
    const wf_type *base = &wf_exc_exception;
    if (base_attr && !(base = find_exception(p, base_attr->value))) {
        report(p, WF_E_TYPE, wf_xml_value_loc(p->doc, base_attr),
               "unknown exception type '%s'", base_attr->value);
        return;
    }
    if (wfl_typelib_exception(p->tl, name)) {
        report(p, WF_E_SCHEMA, wf_xml_node_loc(p->doc, n), "duplicate exception '%s'", name);
        return;
    }
    wf_error e = WF_ERROR_INIT;
    const wf_type *t = NULL;
    if (wf_types_exception(p->types, name, base, &t, &e) != WF_OK) {
        report(p, e.code, wf_xml_node_loc(p->doc, n), "%s", e.message);
        return;
    }
    p->tl->exceptions[p->tl->exception_count++] = t;
}

static bool valid_library_name(const char *name)
{
    return !strchr(name, '/') && strcmp(name, "..") != 0 && strcmp(name, ".") != 0;
}

/* Count the children of root named `name`, for sizing arrays. */
static size_t count_children(tl_parse *p, const wf_xml_node *root, const char *name)
{
    size_t n = 0;
    for (const wf_xml_node *c = root->first_child; c; c = c->next)
        n += is_tl_element(p, c, name);
    return n;
}

/* Library= is optional when no element names a C function: composite types, classes with
 * properties only (markup plus rules), services with events only. */
static bool needs_library(tl_parse *p, const wf_xml_node *root)
{
    for (const wf_xml_node *c = root->first_child; c; c = c->next) {
        if (is_tl_element(p, c, "ActivityType") && !attr(c, "Definition"))
            return true;
        for (const wf_xml_node *k = c->first_child; k; k = k->next)
            if (is_tl_element(p, k, "Handler") || is_tl_element(p, k, "Condition") ||
                is_tl_element(p, k, "Method"))
                return true;
    }
    return false;
}

static void parse_root(tl_parse *p, const wf_xml_node *root)
{
    wfl_typelib *tl = p->tl;
    if (!is_tl_element(p, root, "TypeLibrary")) {
        report(p, WF_E_SCHEMA, wf_xml_node_loc(p->doc, root),
               "root element must be <TypeLibrary xmlns=\"" TL_NS "\">, not <%s>", root->name);
        return;
    }
    static const char *const attrs[] = {"Name", "Library", NULL};
    check_attrs(p, root, attrs);
    const char *name = required(p, root, "Name");
    const char *lib = needs_library(p, root) ? required(p, root, "Library")
                                             : attr(root, "Library") ? attr(root, "Library")->value
                                                                     : NULL;
    tl->name = name ? tl_strdup(p, name) : "";
    tl->library = lib ? tl_strdup(p, lib) : "";
    if (lib && !valid_library_name(lib))
        report(p, WF_E_NOLIB, wf_xml_value_loc(p->doc, attr(root, "Library")),
               "Library '%s' must be a plain file name on the library path", lib);
    tl->activities = tl_alloc(p, count_children(p, root, "ActivityType"), sizeof(wfl_tl_activity));
    tl->classes = tl_alloc(p, count_children(p, root, "Class"), sizeof(wfl_tl_class));
    tl->services = tl_alloc(p, count_children(p, root, "Service"), sizeof(wfl_tl_service));
    tl->exceptions = tl_alloc(p, count_children(p, root, "Exception"), sizeof(const wf_type *));
    for (const wf_xml_node *c = root->first_child; c && !p->nomem; c = c->next) {
        if (is_tl_element(p, c, "ActivityType")) {
            wfl_tl_activity *a = &tl->activities[tl->activity_count];
            parse_activity(p, c, a);
            if (wfl_typelib_activity(tl, a->name))
                report(p, WF_E_SCHEMA, wf_xml_node_loc(p->doc, c),
                       "duplicate activity type '%s'", a->name);
            tl->activity_count++;
        } else if (is_tl_element(p, c, "Class")) {
            wfl_tl_class *k = &tl->classes[tl->class_count];
            parse_class(p, c, k);
            if (wfl_typelib_class(tl, k->name))
                report(p, WF_E_SCHEMA, wf_xml_node_loc(p->doc, c), "duplicate class '%s'",
                       k->name);
            tl->class_count++;
        } else if (is_tl_element(p, c, "Service")) {
            wfl_tl_service *s = &tl->services[tl->service_count];
            parse_service(p, c, s);
            if (wfl_typelib_service(tl, s->name))
                report(p, WF_E_SCHEMA, wf_xml_node_loc(p->doc, c), "duplicate service '%s'",
                       s->name);
            tl->service_count++;
        } else if (is_tl_element(p, c, "Exception")) {
            parse_exception(p, c);
        } else {
            unknown_element(p, c, "TypeLibrary");
        }
    }
}

/* ---- native binding -------------------------------------------------------------------- */

static void prepare_func(tl_parse *p, wfl_tl_func *fn)
{
    wf_native_param *params = NULL;
    if (fn->param_count) {
        params = wf_calloc(fn->param_count, sizeof *params);
        if (!params) {
            report(p, WF_E_NOMEM, fn->loc, "out of memory");
            return;
        }
    }
    for (size_t i = 0; i < fn->param_count; i++) {
        params[i].type = fn->params[i].type;
        params[i].dir = fn->params[i].dir == WFL_TL_OUT     ? WF_NATIVE_OUT
                        : fn->params[i].dir == WFL_TL_INOUT ? WF_NATIVE_INOUT
                                                            : WF_NATIVE_IN;
    }
    wf_native_sig sig = {fn->ret_type, params, fn->param_count, fn->error_on_nonzero};
    wf_error e = WF_ERROR_INIT;
    if (wf_native_fn_prepare(p->tl->lib, fn->symbol, &sig, &fn->native, &e) != WF_OK)
        report(p, e.code, fn->loc, "%s", e.message);
    wf_free(params);
}

static void bind_native(tl_parse *p, const wf_libpath *path, const wf_xml_node *root)
{
    wfl_typelib *tl = p->tl;
    wf_error e = WF_ERROR_INIT;
    if (!*tl->library)
        return; /* only composite types: nothing native to bind */
    if (wf_native_lib_open(path, tl->library, &tl->lib, &e) != WF_OK) {
        report(p, e.code, wf_xml_value_loc(p->doc, attr(root, "Library")), "%s", e.message);
        return;
    }
    for (size_t i = 0; i < tl->activity_count && !p->nomem; i++) {
        wfl_tl_activity *a = &tl->activities[i];
        if (!a->definition)
            prepare_func(p, &a->func);
        for (size_t j = 0; a->body && j < a->body->func_count && !p->nomem; j++)
            prepare_func(p, &a->body->funcs[j]);
    }
    for (size_t i = 0; i < tl->class_count && !p->nomem; i++)
        for (size_t j = 0; j < tl->classes[i].func_count && !p->nomem; j++)
            prepare_func(p, &tl->classes[i].funcs[j]);
    for (size_t i = 0; i < tl->service_count && !p->nomem; i++)
        for (size_t j = 0; j < tl->services[i].method_count && !p->nomem; j++)
            prepare_func(p, &tl->services[i].methods[j]);
}

/* ---- load / destroy ------------------------------------------------------------------- */

static wf_status finish(tl_parse *p, wfl_typelib **out, wf_error *err)
{
    if (failed(p)) {
        if (err && err->code == WF_OK)
            *err = p->first;
        wfl_typelib_destroy(p->tl);
        return p->first.code;
    }
    *out = p->tl;
    return WF_OK;
}

/* Parse doc into a new typelib; with `path` also bind the native library. */
static wf_status build(wf_xml_doc *doc, const wf_libpath *path, wf_types *types,
                       wfl_typelib **out, wf_diags *diags, wf_error *err)
{
    tl_parse p = {NULL, doc, types, diags, WF_ERROR_INIT, false};
    p.tl = wf_calloc(1, sizeof *p.tl);
    if (p.tl)
        p.tl->arena = wf_arena_create(0);
    if (!p.tl || !p.tl->arena) {
        wf_free(p.tl);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    p.tl->file = tl_strdup(&p, wf_xml_path(doc));
    if (!failed(&p))
        parse_root(&p, wf_xml_root(doc));
    if (!failed(&p) && path)
        bind_native(&p, path, wf_xml_root(doc));
    return finish(&p, out, err);
}

/* The XML layer rejected the file: the error (with its line:col in the type library) goes to
 * diags like every other problem in it, and to err. */
static wf_status xml_failed(wf_diags *diags, const wf_error *xe, wf_error *err)
{
    if (diags)
        wf_diags_add_error(diags, WF_SEV_ERROR, xe);
    if (err && err->code == WF_OK)
        *err = *xe;
    return xe->code;
}

static wf_status load_found(const wf_libpath *path, bool bind, wf_types *types,
                            const char *assembly_name, wfl_typelib **out, wf_diags *diags,
                            wf_error *err);

wf_status wfl_typelib_load(const wf_libpath *path, wf_types *types, const char *assembly_name,
                           wfl_typelib **out, wf_diags *diags, wf_error *err)
{
    return load_found(path, true, types, assembly_name, out, diags, err);
}

wf_status wfl_typelib_load_decl(const wf_libpath *path, wf_types *types,
                                const char *assembly_name, wfl_typelib **out, wf_diags *diags,
                                wf_error *err)
{
    return load_found(path, false, types, assembly_name, out, diags, err);
}

static wf_status load_found(const wf_libpath *path, bool bind, wf_types *types,
                            const char *assembly_name, wfl_typelib **out, wf_diags *diags,
                            wf_error *err)
{
    *out = NULL;
    char file[512], full[4096];
    if (snprintf(file, sizeof file, "%s.activities.xml", assembly_name) >= (int)sizeof file)
        return wf_error_set(err, WF_E_NAME, NULL, "assembly name '%s' is too long",
                            assembly_name);
    wf_status st = wf_libpath_find(path, file, full, sizeof full, err);
    if (st != WF_OK) {
        wf_error_prefix(err, "type library for assembly '%s': ", assembly_name);
        return st;
    }
    wf_xml_doc *doc = NULL;
    wf_xml_limits limits = WF_XML_LIMITS_INIT;
    wf_error xe = WF_ERROR_INIT;
    st = wf_xml_load_file(full, &limits, &doc, &xe);
    if (st != WF_OK)
        return xml_failed(diags, &xe, err);
    st = build(doc, bind ? path : NULL, types, out, diags, err);
    wf_xml_doc_destroy(doc);
    return st;
}

wf_status wfl_typelib_parse(wf_types *types, const char *name, const char *data, size_t len,
                            wfl_typelib **out, wf_diags *diags, wf_error *err)
{
    *out = NULL;
    wf_xml_doc *doc = NULL;
    wf_xml_limits limits = WF_XML_LIMITS_INIT;
    wf_error xe = WF_ERROR_INIT;
    wf_status st = wf_xml_load_mem(name, data, len, &limits, &doc, &xe);
    if (st != WF_OK)
        return xml_failed(diags, &xe, err);
    st = build(doc, NULL, types, out, diags, err);
    wf_xml_doc_destroy(doc);
    return st;
}

static void destroy_funcs(wfl_tl_func *fns, size_t count)
{
    for (size_t i = 0; i < count; i++)
        wf_native_fn_destroy(fns[i].native);
}

void wfl_typelib_destroy(wfl_typelib *tl)
{
    if (!tl)
        return;
    for (size_t i = 0; i < tl->activity_count; i++) {
        destroy_funcs(&tl->activities[i].func, 1);
        if (tl->activities[i].body) /* a composite's code-beside */
            destroy_funcs(tl->activities[i].body->funcs, tl->activities[i].body->func_count);
    }
    for (size_t i = 0; i < tl->class_count; i++)
        destroy_funcs(tl->classes[i].funcs, tl->classes[i].func_count);
    for (size_t i = 0; i < tl->service_count; i++)
        destroy_funcs(tl->services[i].methods, tl->services[i].method_count);
    for (size_t i = 0; i < tl->owned_count; i++)
        wf_value_release(&tl->owned_values[i]);
    wf_free(tl->owned_values);
    wf_native_lib_close(tl->lib);
    wf_arena_destroy(tl->arena);
    wf_free(tl);
}

/* ---- accessors ------------------------------------------------------------------------ */

const char *wfl_typelib_name(const wfl_typelib *tl) { return tl->name; }
const char *wfl_typelib_file(const wfl_typelib *tl) { return tl->file ? tl->file : ""; }
const char *wfl_typelib_library(const wfl_typelib *tl) { return tl->library; }
const wf_native_lib *wfl_typelib_native_lib(const wfl_typelib *tl) { return tl->lib; }

const wfl_tl_activity *wfl_typelib_activity(const wfl_typelib *tl, const char *name)
{
    for (size_t i = 0; i < tl->activity_count; i++)
        if (strcmp(tl->activities[i].name, name) == 0)
            return &tl->activities[i];
    return NULL;
}

const wfl_tl_class *wfl_typelib_class(const wfl_typelib *tl, const char *name)
{
    for (size_t i = 0; i < tl->class_count; i++)
        if (strcmp(tl->classes[i].name, name) == 0)
            return &tl->classes[i];
    for (size_t i = 0; i < tl->activity_count; i++) /* a composite's code-beside */
        if (tl->activities[i].body && strcmp(tl->activities[i].name, name) == 0)
            return tl->activities[i].body;
    return NULL;
}

const wfl_tl_service *wfl_typelib_service(const wfl_typelib *tl, const char *name)
{
    for (size_t i = 0; i < tl->service_count; i++)
        if (strcmp(tl->services[i].name, name) == 0)
            return &tl->services[i];
    return NULL;
}

const wf_type *wfl_typelib_exception(const wfl_typelib *tl, const char *name)
{
    for (size_t i = 0; i < tl->exception_count; i++)
        if (strcmp(tl->exceptions[i]->name, name) == 0)
            return tl->exceptions[i];
    for (size_t i = 0; i < tl->exception_count; i++) {
        const char *dot = strrchr(tl->exceptions[i]->name, '.');
        if (dot && strcmp(dot + 1, name) == 0)
            return tl->exceptions[i];
    }
    return NULL;
}

size_t wfl_typelib_activity_count(const wfl_typelib *tl) { return tl->activity_count; }
const wfl_tl_activity *wfl_typelib_activity_at(const wfl_typelib *tl, size_t index)
{
    return index < tl->activity_count ? &tl->activities[index] : NULL;
}
size_t wfl_typelib_class_count(const wfl_typelib *tl) { return tl->class_count; }
const wfl_tl_class *wfl_typelib_class_at(const wfl_typelib *tl, size_t index)
{
    return index < tl->class_count ? &tl->classes[index] : NULL;
}
size_t wfl_typelib_service_count(const wfl_typelib *tl) { return tl->service_count; }
const wfl_tl_service *wfl_typelib_service_at(const wfl_typelib *tl, size_t index)
{
    return index < tl->service_count ? &tl->services[index] : NULL;
}
size_t wfl_typelib_exception_count(const wfl_typelib *tl) { return tl->exception_count; }
const wf_type *wfl_typelib_exception_at(const wfl_typelib *tl, size_t index)
{
    return index < tl->exception_count ? tl->exceptions[index] : NULL;
}

static const wfl_tl_prop *find_prop(const wfl_tl_prop *props, size_t count, const char *name)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(props[i].name, name) == 0)
            return &props[i];
    return NULL;
}

const char *wfl_tl_activity_name(const wfl_tl_activity *a) { return a->name; }
size_t wfl_tl_activity_prop_count(const wfl_tl_activity *a) { return a->prop_count; }
const wfl_tl_prop *wfl_tl_activity_prop(const wfl_tl_activity *a, size_t index)
{
    return index < a->prop_count ? &a->props[index] : NULL;
}
const wfl_tl_prop *wfl_tl_activity_find_prop(const wfl_tl_activity *a, const char *name)
{
    return find_prop(a->props, a->prop_count, name);
}
const wfl_tl_func *wfl_tl_activity_func(const wfl_tl_activity *a) { return &a->func; }
const char *wfl_tl_activity_definition(const wfl_tl_activity *a) { return a->definition; }

const char *wfl_tl_class_name(const wfl_tl_class *c) { return c->name; }
size_t wfl_tl_class_prop_count(const wfl_tl_class *c) { return c->prop_count; }
const wfl_tl_prop *wfl_tl_class_prop(const wfl_tl_class *c, size_t index)
{
    return index < c->prop_count ? &c->props[index] : NULL;
}

bool wfl_tl_activity_is_container(const wfl_tl_activity *a)
{
    return a->container;
}

const char *wfl_tl_class_base_type(const wfl_tl_class *c)
{
    return c->base_type;
}
const wfl_tl_prop *wfl_tl_class_find_prop(const wfl_tl_class *c, const char *name)
{
    return find_prop(c->props, c->prop_count, name);
}

static const wfl_tl_func *find_func(const wfl_tl_func *fns, size_t count, wfl_tl_func_kind kind,
                                    const char *name)
{
    for (size_t i = 0; i < count; i++)
        if (fns[i].kind == kind && strcmp(fns[i].name, name) == 0)
            return &fns[i];
    return NULL;
}

const wfl_tl_func *wfl_tl_class_handler(const wfl_tl_class *c, const char *name)
{
    return find_func(c->funcs, c->func_count, WFL_TL_HANDLER, name);
}
const wfl_tl_func *wfl_tl_class_condition(const wfl_tl_class *c, const char *name)
{
    return find_func(c->funcs, c->func_count, WFL_TL_CONDITION, name);
}
size_t wfl_tl_class_func_count(const wfl_tl_class *c) { return c->func_count; }
const wfl_tl_func *wfl_tl_class_func_at(const wfl_tl_class *c, size_t index)
{
    return index < c->func_count ? &c->funcs[index] : NULL;
}
size_t wfl_tl_class_func_index(const wfl_tl_class *c, const wfl_tl_func *fn)
{
    return fn->index < c->func_count && &c->funcs[fn->index] == fn ? fn->index : c->func_count;
}

const char *wfl_tl_service_name(const wfl_tl_service *s) { return s->name; }
const char *wfl_tl_service_namespace(const wfl_tl_service *s) { return s->ns; }
const wfl_tl_func *wfl_tl_service_method(const wfl_tl_service *s, const char *name)
{
    return find_func(s->methods, s->method_count, WFL_TL_METHOD, name);
}
size_t wfl_tl_service_method_count(const wfl_tl_service *s) { return s->method_count; }
const wfl_tl_func *wfl_tl_service_method_at(const wfl_tl_service *s, size_t index)
{
    return index < s->method_count ? &s->methods[index] : NULL;
}
const wfl_tl_event *wfl_tl_service_event(const wfl_tl_service *s, const char *name)
{
    for (size_t i = 0; i < s->event_count; i++)
        if (strcmp(s->events[i].name, name) == 0)
            return &s->events[i];
    return NULL;
}
size_t wfl_tl_service_event_count(const wfl_tl_service *s) { return s->event_count; }
const wfl_tl_event *wfl_tl_service_event_at(const wfl_tl_service *s, size_t index)
{
    return index < s->event_count ? &s->events[index] : NULL;
}

const char *wfl_tl_event_name(const wfl_tl_event *e) { return e->name; }
size_t wfl_tl_event_param_count(const wfl_tl_event *e) { return e->param_count; }
const wfl_tl_prop *wfl_tl_event_param(const wfl_tl_event *e, size_t index)
{
    return index < e->param_count ? &e->params[index] : NULL;
}

wf_status wfl_tl_event_bind(const wfl_tl_event *e, const wf_value *payload, wf_value *out,
                            wf_error *err)
{
    wf_payload_param params[64];
    size_t n = e->param_count < 64 ? e->param_count : 64;
    for (size_t i = 0; i < n; i++)
        params[i] = (wf_payload_param){e->params[i].name, e->params[i].type};
    return wf_payload_bind(payload, params, n, out, err);
}

wfl_tl_func_kind wfl_tl_func_kind_of(const wfl_tl_func *fn) { return fn->kind; }
const char *wfl_tl_func_name(const wfl_tl_func *fn) { return fn->name; }
const char *wfl_tl_func_symbol(const wfl_tl_func *fn) { return fn->symbol; }
bool wfl_tl_func_error_on_nonzero(const wfl_tl_func *fn) { return fn->error_on_nonzero; }
size_t wfl_tl_func_param_count(const wfl_tl_func *fn) { return fn->param_count; }
const wfl_tl_prop *wfl_tl_func_param(const wfl_tl_func *fn, size_t index)
{
    return index < fn->param_count ? &fn->params[index] : NULL;
}
const wfl_tl_prop *wfl_tl_func_return(const wfl_tl_func *fn) { return fn->ret_binding; }
const wf_native_fn *wfl_tl_func_native(const wfl_tl_func *fn) { return fn->native; }
wf_loc wfl_tl_func_loc(const wfl_tl_func *fn) { return fn->loc; }

/* ---- invoke ---------------------------------------------------------------------------- */
enum { PEEK_MAX = 8 }; /* parameters of a call made on peeked values */

/* Read the In/InOut values through b->get, converted to the declared types. */
static wf_status gather_args(const wfl_tl_func *fn, const wfl_tl_binding *b, wf_value *args,
                             wf_error *err)
{
    for (size_t i = 0; i < fn->param_count; i++) {
        const wfl_tl_prop *prm = &fn->params[i];
        if (prm->dir == WFL_TL_OUT)
            continue;
        if (!b->get && !b->get_at)
            return wf_error_set(err, WF_E_USAGE, &fn->loc, "no getter to read '%s' for '%s'",
                                prm->name, fn->symbol);
        wf_value raw = wf_null();
        wf_status st = b->get_at ? b->get_at(b->ud, i, &raw, err)
                                 : b->get(b->ud, prm->name, prm->type, &raw, err);
        if (st == WF_OK && raw.type == prm->type) { /* already the declared type: moved */
            args[i] = raw;
            continue;
        }
        if (st == WF_OK) {
            st = wf_value_convert(&raw, prm->type, &args[i], err);
            if (st != WF_OK)
                wf_error_prefix(err, "argument '%s' of '%s': ", prm->name, fn->symbol);
        }
        wf_value_release(&raw);
        if (st != WF_OK)
            return st;
    }
    return WF_OK;
}

/* Write Out/InOut values and the Return binding back through b->set. */
static wf_status write_back(const wfl_tl_func *fn, const wfl_tl_binding *b, const wf_value *outs,
                            const wf_value *ret, wf_error *err)
{
    for (size_t i = 0; i < fn->param_count; i++) {
        const wfl_tl_prop *prm = &fn->params[i];
        if (prm->dir == WFL_TL_IN)
            continue;
        wf_status st = b->set_at ? b->set_at(b->ud, i, &outs[i], err)
                       : b->set  ? b->set(b->ud, prm->name, &outs[i], err)
                                 : wf_error_set(err, WF_E_USAGE, &fn->loc,
                                                "no setter to write '%s' for '%s'", prm->name,
                                                fn->symbol);
        if (st != WF_OK)
            return st;
    }
    if (!fn->ret_binding)
        return WF_OK;
    if (b->set_at)
        return b->set_at(b->ud, fn->param_count, ret, err);
    if (!b->set)
        return wf_error_set(err, WF_E_USAGE, &fn->loc, "no setter to write '%s' for '%s'",
                            fn->ret_binding->name, fn->symbol);
    return b->set(b->ud, fn->ret_binding->name, ret, err);
}

static void release_values(wf_value *values, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!wf_is_null(&values[i])) /* an Out parameter's unused In side: nothing to drop */
            wf_value_release(&values[i]);
}

static wf_status call_native(const wfl_tl_func *fn, const wfl_tl_binding *b, wf_value *args,
                             wf_value *outs, wf_value *ret, wf_error *err)
{
    wf_status st = gather_args(fn, b, args, err);
    if (st != WF_OK)
        return st;
    wf_error call_err; /* per call: cleared, not zero-filled (780 bytes) */
    wf_error_clear(&call_err);
    st = wf_native_fn_call(fn->native, args, outs, ret, &call_err);
    bool status_fault = st == WF_E_NATIVE && fn->error_on_nonzero &&
                        ret->type->kind == WF_K_INT32 && ret->u.i32 != 0;
    /* a status fault keeps the native layer's wording: InvokeMethod raises the same */
    if (st != WF_OK && !status_fault) {
        wf_error_set(err, st, &fn->loc, "%s", call_err.message);
    } else {
        wf_status wst = write_back(fn, b, outs, ret, err);
        if (wst != WF_OK)
            st = wst;
        else if (status_fault)
            wf_error_set(err, WF_E_NATIVE, &fn->loc, "%s", call_err.message);
    }
    if (b->trace) {
        wfl_tl_call_record rec = {fn, args, outs, fn->param_count, ret, st};
        b->trace(b->ud, &rec);
    }
    return st;
}

/* The In values of a scalar call read in place through b->peek_at; false when one cannot be
 * (not peekable, or not of the declared type: the general path reads and converts it). */
static bool peek_args(const wfl_tl_func *fn, const wfl_tl_binding *b, const wf_value **in)
{
    if (!b->peek_at || b->trace || fn->ret_binding || fn->param_count > PEEK_MAX ||
        !wf_native_fn_is_scalar(fn->native))
        return false;
    for (size_t i = 0; i < fn->param_count; i++) {
        const wfl_tl_prop *prm = &fn->params[i];
        in[i] = prm->dir == WFL_TL_OUT ? NULL : b->peek_at(b->ud, i);
        if (prm->dir != WFL_TL_OUT && (!in[i] || in[i]->type != prm->type))
            return false;
    }
    return true;
}

/* call_native for a scalar function on peeked In values: nothing converted, held or released
 * (scalars), the same write-back. */
static wf_status call_scalar(const wfl_tl_func *fn, const wfl_tl_binding *b,
                             const wf_value *const *in, wf_value *ret, wf_error *err)
{
    wf_value outs[PEEK_MAX], r;
    wf_native_fn_call_scalar(fn->native, in, outs, &r);
    wf_status st = write_back(fn, b, outs, &r, err);
    if (ret)
        *ret = r;
    return st;
}

wf_status wfl_tl_func_invoke(const wfl_tl_func *fn, const wfl_tl_binding *b, wf_value *ret,
                             wf_error *err)
{
    if (ret)
        *ret = wf_null();
    if (!fn->native)
        return wf_error_set(err, WF_E_STATE, &fn->loc,
                            "'%s' has no native binding (type library parsed without its "
                            "library)", fn->symbol);
    const wf_value *in[PEEK_MAX];
    if (peek_args(fn, b, in))
        return call_scalar(fn, b, in, ret, err);
    wf_value stack[2 * 16];
    wf_value *args = stack, *outs = stack + 16;
    if (fn->param_count > 16) {
        args = wf_calloc(2 * fn->param_count, sizeof *args);
        if (!args)
            return wf_error_set(err, WF_E_NOMEM, &fn->loc, "out of memory");
        outs = args + fn->param_count;
    }
    for (size_t i = 0; i < fn->param_count; i++)
        args[i] = outs[i] = wf_null();
    wf_value r = wf_null();
    wf_status st = call_native(fn, b, args, outs, &r, err);
    release_values(args, fn->param_count);
    release_values(outs, fn->param_count);
    if (args != stack)
        wf_free(args);
    if (ret)
        *ret = r;
    else
        wf_value_release(&r);
    return st;
}

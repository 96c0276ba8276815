/* wfc_scaffold.c — the scaffold's scanner: reads each .xoml (and its .rules) as XML, no type
 * library needed, and records what the markup asks of native code: the code-beside or base
 * class with its properties, handlers and conditions, custom activity types with their
 * properties, local services with methods and events. Types come from the strongest evidence
 * the markup gives (wfc_scaffold_int.h); the writer is wfc_scaffold_write.c. */
#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../common/wf_xml.h"
#include "../legacy/wfl_bind.h"
#include "../legacy/wfl_registry.h"
#include "../legacy/wfl_typelib.h"
#include "wfc_scaffold_int.h"

#define NS_WF  "http://schemas.microsoft.com/winfx/2006/xaml/workflow"
#define NS_X   "http://schemas.microsoft.com/winfx/2006/xaml"
#define NO_IDX ((size_t)-1)

/* ---- the item list ----------------------------------------------------------------------- */
static char *dup_or_empty(wfc_scaffold *s, const char *text)
{
    char *d = wf_strdup(text ? text : "");
    s->nomem |= d == NULL;
    return d;
}

static void item_key(char *key, size_t size, sc_kind kind, const char *assembly,
                     const char *container, const char *owner, const char *name)
{
    snprintf(key, size, "%d\x1f%s\x1f%s\x1f%s\x1f%s", (int)kind, assembly ? assembly : "",
             container ? container : "", owner ? owner : "", name ? name : "");
}

size_t wfc__sc_find(const wfc_scaffold *s, sc_kind kind, const char *assembly,
                    const char *container, const char *owner, const char *name)
{
    char key[1200];
    item_key(key, sizeof key, kind, assembly, container, owner, name);
    uintptr_t v = (uintptr_t)wf_strmap_get(s->index, key);
    return v ? (size_t)(v - 1) : NO_IDX;
}

static bool grow_items(wfc_scaffold *s)
{
    if (s->count < s->cap)
        return true;
    size_t cap = s->cap ? s->cap * 2 : 64;
    sc_item *grown = wf_realloc(s->items, cap * sizeof *grown);
    if (!grown)
        return false;
    s->items = grown;
    s->cap = cap;
    return true;
}

size_t wfc__sc_add(wfc_scaffold *s, sc_kind kind, const char *assembly, const char *container,
                   const char *owner, const char *name, const char *type, int strength,
                   const char *source, unsigned line, unsigned col)
{
    assert(strength >= SC_GUESS && strength <= SC_CERTAIN);
    size_t at = wfc__sc_find(s, kind, assembly, container, owner, name);
    if (at != NO_IDX) {
        sc_item *it = &s->items[at];
        assert(at < s->count && it->kind == kind); /* the index is keyed by kind and names */
        if (type && strength > it->strength) {
            it->type = type;
            it->strength = strength;
        }
        return at;
    }
    char key[1200];
    item_key(key, sizeof key, kind, assembly, container, owner, name);
    if (s->nomem || !grow_items(s)) {
        s->nomem = true;
        return NO_IDX;
    }
    sc_item *it = &s->items[s->count];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->assembly = dup_or_empty(s, assembly);
    it->container = dup_or_empty(s, container);
    it->owner = dup_or_empty(s, owner);
    it->name = dup_or_empty(s, name);
    it->source = dup_or_empty(s, source);
    it->type = type ? type : "String";
    it->strength = type ? strength : SC_GUESS;
    it->dir = WFL_TL_IN;
    it->line = line;
    it->col = col;
    s->count++;
    if (s->nomem || wf_strmap_put(s->index, key, (void *)(uintptr_t)s->count) != WF_OK) {
        s->nomem = true;
        return NO_IDX;
    }
    return s->count - 1;
}

void wfc__sc_link(wfc_scaffold *s, size_t a, size_t b)
{
    if (a == NO_IDX || b == NO_IDX || a == b)
        return;
    if (s->link_count == s->link_cap) {
        size_t cap = s->link_cap ? s->link_cap * 2 : 64;
        size_t(*grown)[2] = wf_realloc(s->links, cap * sizeof *grown);
        if (!grown) {
            s->nomem = true;
            return;
        }
        s->links = grown;
        s->link_cap = cap;
    }
    s->links[s->link_count][0] = a;
    s->links[s->link_count][1] = b;
    s->link_count++;
}

void wfc__sc_note(wfc_scaffold *s, const char *source, const char *kind, unsigned line,
                  unsigned col, const char *fmt, ...)
{
    if (s->note_count == s->note_cap) {
        size_t cap = s->note_cap ? s->note_cap * 2 : 64;
        sc_note *grown = wf_realloc(s->notes, cap * sizeof *grown);
        if (!grown) {
            s->nomem = true;
            return;
        }
        s->notes = grown;
        s->note_cap = cap;
    }
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    sc_note *n = &s->notes[s->note_count++];
    n->source = dup_or_empty(s, source);
    n->kind = dup_or_empty(s, kind);
    n->text = dup_or_empty(s, text);
    n->line = line;
    n->col = col;
}

const char *wfc__sc_ctype(const char *type, int dir)
{
    static const char *const map[][3] = {
        {"Boolean", "bool", "bool *"},         {"Int32", "int32_t", "int32_t *"},
        {"Int64", "int64_t", "int64_t *"},     {"Double", "double", "double *"},
        {"Decimal", "int64_t", "int64_t *"},   {"DateTime", "int64_t", "int64_t *"},
        {"String", "const char *", "char **"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(map[i][0], type) != 0)
            continue;
        if (dir == WFL_TL_RETURN)
            return strcmp(type, "String") == 0 ? "char *" : map[i][1];
        return dir == WFL_TL_IN ? map[i][1] : map[i][2];
    }
    return NULL;
}

/* ---- one file -------------------------------------------------------------------------- */
typedef struct scan {
    wfc_scaffold *s;
    const wf_xml_doc *doc;
    const char *path;
    char root_name[256];
    char own_assembly[256]; /* where x:Class and namespaces without Assembly= live */
    char class_assembly[256], class_name[512]; /* the code-beside ("" when none) */
    wf_strmap *customs; /* x:Name -> SC_ACTIVITY item index + 1 of custom elements */
} scan;

static bool is_system_assembly(const char *name)
{
    static const char *const exact[] = {"System",
                                        "mscorlib",
                                        "WindowsBase",
                                        "PresentationCore",
                                        "PresentationFramework",
                                        "Microsoft.VisualBasic",
                                        "Microsoft.CSharp",
                                        NULL};
    for (const char *const *e = exact; *e; e++)
        if (strcasecmp(name, *e) == 0)
            return true;
    return strncasecmp(name, "System.", 7) == 0;
}

/* "clr-namespace:NS;Assembly=NAME, Version=..." -> NS and NAME ("" without Assembly=). False
 * for another namespace or a system assembly. */
static bool clr_parts(const char *uri, char *ns, size_t ns_size, char *assembly, size_t asm_size)
{
    if (!uri || strncasecmp(uri, "clr-namespace:", 14) != 0)
        return false;
    const char *p = uri + 14;
    size_t n = strcspn(p, ";");
    snprintf(ns, ns_size, "%.*s", (int)n, p);
    assembly[0] = '\0';
    const char *a = p[n] == ';' ? strstr(p + n, "Assembly=") : NULL;
    if (a) {
        a += 9;
        size_t len = strcspn(a, ",");
        while (len > 0 && isspace((unsigned char)a[len - 1]))
            len--;
        snprintf(assembly, asm_size, "%.*s", (int)len, a);
    }
    return !assembly[0] || !is_system_assembly(assembly);
}

static wf_loc loc_of(const scan *sc, const wf_xml_node *x)
{
    return wf_xml_node_loc(sc->doc, x);
}

/* The assembly and CLR namespace of a custom element (own assembly when no Assembly=). */
static bool custom_of(const scan *sc, const wf_xml_node *x, char *ns, size_t ns_size,
                      char *assembly, size_t asm_size)
{
    if (!clr_parts(x->ns, ns, ns_size, assembly, asm_size))
        return false;
    if (!assembly[0])
        snprintf(assembly, asm_size, "%s", sc->own_assembly);
    return true;
}

/* The root class's property P of `{ActivityBind Root,Path=P...}` (type for a one-member
 * path; a longer path makes P a Record). Returns its item or NO_IDX. */
static size_t root_prop_of_bind(scan *sc, const char *bname, const char *path, const char *type,
                                int strength, wf_loc at)
{
    if (!sc->class_name[0] || !bname || strcmp(bname, sc->root_name) != 0 || !path)
        return NO_IDX;
    char first[256];
    size_t n = strcspn(path, ".[");
    snprintf(first, sizeof first, "%.*s", (int)n, path);
    bool nested = path[n] != '\0';
    return wfc__sc_add(sc->s, SC_CLASS_PROP, sc->class_assembly, sc->class_name, NULL, first,
                       nested ? "Record" : type, nested ? SC_INFERRED : strength, at.file, at.line,
                       at.col);
}

/* The property a bind text names, if the root's or a custom activity's. */
static size_t bind_target(scan *sc, const char *text, const char *type, int strength, wf_loc at)
{
    if (!wfl_bind_is_markup(text))
        return NO_IDX;
    wf_arena *arena = wf_arena_create(0);
    wfl_bind *b = NULL;
    size_t idx = NO_IDX;
    if (arena && wfl_bind_parse_markup(arena, text, WF_LOC_NONE, &b, NULL) == WF_OK &&
        b->seg_count > 0) {
        idx = root_prop_of_bind(sc, b->name, b->path, type, strength, at);
        uintptr_t act = idx == NO_IDX ? (uintptr_t)wf_strmap_get(sc->customs, b->name) : 0;
        if (act) {
            const sc_item *a = &sc->s->items[act - 1];
            idx = wfc__sc_add(sc->s, SC_ACT_PROP, a->assembly, a->name, NULL, b->segs[0].name, type,
                              strength, at.file, at.line, at.col);
            if (idx != NO_IDX)
                sc->s->items[idx].is_read = true;
        }
    }
    wf_arena_destroy(arena);
    return idx;
}

/* <ActivityBind Name= Path=/> as an element. */
static size_t bind_element(scan *sc, const wf_xml_node *x, const char *type, int strength)
{
    const wf_xml_attr *n = wf_xml_attr_find(x, NULL, "Name");
    const wf_xml_attr *p = wf_xml_attr_find(x, NULL, "Path");
    if (!n || !p)
        return NO_IDX;
    char text[1024];
    snprintf(text, sizeof text, "{ActivityBind %s,Path=%s}", n->value, p->value);
    return bind_target(sc, text, type, strength, loc_of(sc, x));
}

static void add_handler(scan *sc, const char *name, bool condition, wf_loc at)
{
    if (!sc->class_name[0] || !name || !*name)
        return;
    if (wfl_bind_is_markup(name)) { /* ExecuteCode="{ActivityBind Root,Path=OnStep}" */
        wf_arena *arena = wf_arena_create(0);
        wfl_bind *b = NULL;
        if (arena && wfl_bind_parse_markup(arena, name, WF_LOC_NONE, &b, NULL) == WF_OK &&
            b->seg_count == 1 && strcmp(b->name, sc->root_name) == 0)
            wfc__sc_add(sc->s, condition ? SC_CONDITION : SC_HANDLER, sc->class_assembly,
                        sc->class_name, NULL, b->segs[0].name, NULL, SC_GUESS, at.file, at.line,
                        at.col);
        wf_arena_destroy(arena);
        return;
    }
    wfc__sc_add(sc->s, condition ? SC_CONDITION : SC_HANDLER, sc->class_assembly, sc->class_name,
                NULL, name, NULL, SC_GUESS, at.file, at.line, at.col);
}

/* The type a literal attribute value looks like (a guess). */
static const char *literal_type(const char *v)
{
    if (strcasecmp(v, "true") == 0 || strcasecmp(v, "false") == 0)
        return "Boolean";
    const char *p = v + (*v == '-');
    size_t digits = strspn(p, "0123456789");
    if (digits > 0 && p[digits] == '\0')
        return digits < 10 ? "Int32" : "Int64";
    if (digits > 0 && p[digits] == '.' && strspn(p + digits + 1, "0123456789") > 0 &&
        p[digits + 1 + strspn(p + digits + 1, "0123456789")] == '\0')
        return "Double";
    return NULL;
}

/* "{x:Type p:Name}" -> prefix p resolved at x, and Name. */
static bool type_markup(const wf_xml_node *x, const char *text, const char **ns, char *name,
                        size_t size)
{
    const char *t = strstr(text, "Type ");
    if (text[0] != '{' || !t)
        return false;
    t += 5;
    while (isspace((unsigned char)*t))
        t++;
    if (strncmp(t, "TypeName=", 9) == 0)
        t += 9;
    char qname[256];
    snprintf(qname, sizeof qname, "%.*s", (int)strcspn(t, "} "), t);
    const char *local = NULL;
    size_t local_len = 0;
    if (!wf_xml_resolve_qname(x, qname, ns, &local, &local_len))
        return false;
    snprintf(name, size, "%.*s", (int)local_len, local);
    return true;
}

/* A System type name ("Int32", "String") as a type-library type, or NULL. */
static const char *system_type(const char *name)
{
    static const char *const known[] = {"Boolean", "Int32",    "Int64",    "Double", "Decimal",
                                        "String",  "DateTime", "TimeSpan", "Object", NULL};
    for (const char *const *k = known; *k; k++)
        if (strcmp(*k, name) == 0)
            return *k;
    return NULL;
}

static const wf_xml_node *child_named(const wf_xml_node *x, const char *suffix)
{
    size_t n = strlen(suffix);
    for (const wf_xml_node *c = x->first_child; c; c = c->next) {
        size_t len = strlen(c->name);
        if (len > n && c->name[len - n - 1] == '.' && strcmp(c->name + len - n, suffix) == 0)
            return c;
    }
    return NULL;
}

/* WorkflowParameterBinding children of x's ParameterBindings: call fn with each name and the
 * root property it binds (NO_IDX when none). */
typedef void (*binding_fn)(scan *sc, const wf_xml_node *b, const char *param, size_t prop,
                           void *ud);

static void each_binding(scan *sc, const wf_xml_node *x, binding_fn fn, void *ud)
{
    const wf_xml_node *pb = child_named(x, "ParameterBindings");
    for (const wf_xml_node *b = pb ? pb->first_child : NULL; b; b = b->next) {
        const wf_xml_attr *name = wf_xml_attr_find(b, NULL, "ParameterName");
        if (!name)
            continue;
        size_t prop = NO_IDX;
        const wf_xml_attr *v = wf_xml_attr_find(b, NULL, "Value");
        if (v)
            prop = bind_target(sc, v->value, NULL, SC_GUESS, wf_xml_value_loc(sc->doc, v));
        const wf_xml_node *ve = child_named(b, "Value");
        if (ve && ve->first_child && strcmp(ve->first_child->name, "ActivityBind") == 0)
            prop = bind_element(sc, ve->first_child, NULL, SC_GUESS);
        fn(sc, b, name->value, prop, ud);
    }
}

typedef struct svc_ctx {
    char assembly[256], service[256], member[256];
    bool event;
} svc_ctx;

static void service_binding(scan *sc, const wf_xml_node *b, const char *param, size_t prop,
                            void *ud)
{
    svc_ctx *c = ud;
    wf_loc at = loc_of(sc, b);
    size_t p;
    if (c->event) { /* WF3 binds an event's sender and e (docs/wf3-behaviour.md) */
        if (strcmp(param, "sender") == 0) {
            if (prop != NO_IDX)
                wfc__sc_add(sc->s, SC_CLASS_PROP, sc->s->items[prop].assembly,
                            sc->s->items[prop].container, NULL, sc->s->items[prop].name, "String",
                            SC_CERTAIN, at.file, at.line, at.col);
            return;
        }
        p = wfc__sc_add(sc->s, SC_EVENT_PARAM, c->assembly, c->service, c->member, param,
                        strcmp(param, "e") == 0 ? "Record" : NULL, SC_CERTAIN, at.file, at.line,
                        at.col);
    } else {
        bool ret = strcmp(param, "(ReturnValue)") == 0;
        p = wfc__sc_add(sc->s, SC_METHOD_PARAM, c->assembly, c->service, c->member,
                        ret ? "ReturnValue" : param, NULL, SC_GUESS, at.file, at.line, at.col);
        if (p != NO_IDX && ret)
            sc->s->items[p].dir = WFL_TL_RETURN;
    }
    wfc__sc_link(sc->s, p, prop);
}

/* A member of an interface named by `it` ("{x:Type p:IFoo}") on element `typed`, its
 * parameters from x's ParameterBindings. */
static void scan_service_member(scan *sc, const wf_xml_node *x, const wf_xml_node *typed,
                                const wf_xml_attr *it, const wf_xml_attr *member, bool event)
{
    const char *ns = NULL;
    char iface[256], clr[256];
    svc_ctx c = {.event = event};
    if (!it || !member || !type_markup(typed, it->value, &ns, iface, sizeof iface) ||
        !clr_parts(ns, clr, sizeof clr, c.assembly, sizeof c.assembly))
        return;
    const char *dot = strrchr(iface, '.'); /* localhost.Service1: the loader's Service1 */
    if (dot)
        memmove(iface, dot + 1, strlen(dot + 1) + 1);
    if (!c.assembly[0])
        snprintf(c.assembly, sizeof c.assembly, "%s", sc->own_assembly);
    snprintf(c.service, sizeof c.service, "%s", iface);
    snprintf(c.member, sizeof c.member, "%s", member->value);
    wf_loc at = loc_of(sc, x);
    wfc__sc_add(sc->s, SC_SERVICE, c.assembly, NULL, NULL, iface, NULL, SC_GUESS, at.file, at.line,
                at.col);
    wfc__sc_add(sc->s, event ? SC_EVENT : SC_METHOD, c.assembly, iface, NULL, member->value, NULL,
                SC_GUESS, at.file, at.line, at.col);
    each_binding(sc, x, service_binding, &c);
}

/* HandleExternalEvent / CallExternalMethod: InterfaceType="{x:Type p:IFoo}". */
static void scan_local_service(scan *sc, const wf_xml_node *x, bool event)
{
    scan_service_member(sc, x, x, wf_xml_attr_find(x, NULL, "InterfaceType"),
                        wf_xml_attr_find(x, NULL, event ? "EventName" : "MethodName"), event);
}

/* A ReceiveActivity with a TypedOperationInfo: the contract interface is a <Service> whose
 * <Method> is the operation (docs/convert.md "Workflow services"), so that the Receive then
 * converts. False for an OperationInfo, whose contract is in the markup. */
static bool scan_contract(scan *sc, const wf_xml_node *x)
{
    const wf_xml_node *soi = child_named(x, "ServiceOperationInfo");
    const wf_xml_node *op = soi ? soi->first_child : NULL;
    if (!op || strcmp(op->name, "TypedOperationInfo") != 0)
        return false;
    scan_service_member(sc, x, op, wf_xml_attr_find(op, NULL, "ContractType"),
                        wf_xml_attr_find(op, NULL, "Name"), false);
    return true;
}

/* Receive: the OperationParameterInfo's ParameterType types the property a binding names. */
static const char *operation_param_type(const wf_xml_node *x, const char *param)
{
    const wf_xml_node *soi = child_named(x, "ServiceOperationInfo");
    const wf_xml_node *op = soi ? soi->first_child : NULL;
    const wf_xml_node *params = op ? child_named(op, "Parameters") : NULL;
    for (const wf_xml_node *p = params ? params->first_child : NULL; p; p = p->next) {
        const wf_xml_attr *name = wf_xml_attr_find(p, NULL, "Name");
        const wf_xml_attr *type = wf_xml_attr_find(p, NULL, "ParameterType");
        const char *ns = NULL;
        char tname[256];
        if (name && type && strcmp(name->value, param) == 0 &&
            type_markup(p, type->value, &ns, tname, sizeof tname))
            return system_type(tname);
    }
    return NULL;
}

static void message_binding(scan *sc, const wf_xml_node *b, const char *param, size_t prop,
                            void *ud)
{
    const char *type = operation_param_type(ud, param);
    wf_loc at = loc_of(sc, b);
    if (prop != NO_IDX && type)
        wfc__sc_add(sc->s, SC_CLASS_PROP, sc->s->items[prop].assembly, sc->s->items[prop].container,
                    NULL, sc->s->items[prop].name, type, SC_CERTAIN, at.file, at.line, at.col);
}

static void scan_attributes(scan *sc, const wf_xml_node *x, const wfl_type *t)
{
    for (size_t i = 0; i < x->attr_count; i++) {
        const wf_xml_attr *a = &x->attrs[i];
        if (a->ns)
            continue;
        const wfl_dp *dp = wfl_type_find_dp(t, a->name);
        wf_loc at = wf_xml_value_loc(sc->doc, a);
        if (dp && dp->kind == WFL_DPK_EVENT)
            add_handler(sc, a->value, false, at);
        else
            bind_target(sc, a->value,
                        dp && dp->kind == WFL_DPK_VALUE && dp->type ? dp->type->name : NULL,
                        dp && dp->kind == WFL_DPK_VALUE && dp->type ? SC_CERTAIN : SC_GUESS, at);
    }
}

/* InvokeWebServiceActivity: the proxy class as a <Service>, the web method as its <Method>
 * (docs/convert.md "ASMX web services"). */
static void scan_proxy(scan *sc, const wf_xml_node *x)
{
    scan_service_member(sc, x, x, wf_xml_attr_find(x, NULL, "ProxyClass"),
                        wf_xml_attr_find(x, NULL, "MethodName"), false);
}

static void scan_builtin(scan *sc, const wf_xml_node *x, const wfl_type *t)
{
    scan_attributes(sc, x, t);
    if (t->kind == WFL_KIND_HANDLE_EXTERNAL_EVENT || t->kind == WFL_KIND_CALL_EXTERNAL_METHOD)
        scan_local_service(sc, x, t->kind == WFL_KIND_HANDLE_EXTERNAL_EVENT);
    else if (t->kind == WFL_KIND_INVOKE_WEB_SERVICE)
        scan_proxy(sc, x);
    else if ((t->kind == WFL_KIND_RECEIVE || t->kind == WFL_KIND_SEND) && !scan_contract(sc, x))
        each_binding(sc, x, message_binding, (void *)x);
}

static bool is_property_element(const wf_xml_node *x)
{
    return strchr(x->name, '.') != NULL;
}

static void scan_node(scan *sc, const wf_xml_node *x, bool is_root);

/* A custom activity: its attributes and property elements are its properties; child
 * activities make it a composite the legacy model runs as a sequence. */
static void scan_custom(scan *sc, const wf_xml_node *x, const char *assembly)
{
    wf_loc at = loc_of(sc, x);
    size_t act = wfc__sc_add(sc->s, SC_ACTIVITY, assembly, NULL, NULL, x->name, NULL, SC_GUESS,
                             at.file, at.line, at.col);
    const wf_xml_attr *xn = wf_xml_attr_find(x, NS_X, "Name");
    if (act == NO_IDX)
        return;
    if (xn && wf_strmap_put(sc->customs, xn->value, (void *)(uintptr_t)(act + 1)) != WF_OK)
        sc->s->nomem = true;
    for (size_t i = 0; i < x->attr_count; i++) {
        const wf_xml_attr *a = &x->attrs[i];
        if (a->ns || strcmp(a->name, "Name") == 0 || strcmp(a->name, "Description") == 0 ||
            strcmp(a->name, "Enabled") == 0)
            continue;
        wf_loc vat = wf_xml_value_loc(sc->doc, a);
        const char *lt = wfl_bind_is_markup(a->value) ? NULL : literal_type(a->value);
        size_t p = wfc__sc_add(sc->s, SC_ACT_PROP, assembly, x->name, NULL, a->name, lt, SC_LITERAL,
                               vat.file, vat.line, vat.col);
        if (p != NO_IDX)
            sc->s->items[p].is_set = true;
        wfc__sc_link(sc->s, p, bind_target(sc, a->value, NULL, SC_GUESS, vat));
    }
    for (const wf_xml_node *c = x->first_child; c; c = c->next) {
        if (!is_property_element(c)) {
            sc->s->items[act].composite = true;
            continue;
        }
        const char *prop = strchr(c->name, '.') + 1;
        size_t p = wfc__sc_add(sc->s, SC_ACT_PROP, assembly, x->name, NULL, prop, NULL, SC_GUESS,
                               at.file, c->line, c->col);
        if (p != NO_IDX)
            sc->s->items[p].is_set = true;
        if (c->first_child && strcmp(c->first_child->name, "ActivityBind") == 0)
            wfc__sc_link(sc->s, p, bind_element(sc, c->first_child, NULL, SC_GUESS));
    }
}

static void scan_node(scan *sc, const wf_xml_node *x, bool is_root)
{
    char ns[256], assembly[256];
    if (x->ns && strcmp(x->ns, NS_WF) == 0 && !is_property_element(x)) {
        const wfl_type *t = wfl_registry_find(x->name);
        if (t)
            scan_builtin(sc, x, t);
        if (strcmp(x->name, "CodeCondition") == 0) {
            const wf_xml_attr *c = wf_xml_attr_find(x, NULL, "Condition");
            if (c)
                add_handler(sc, c->value, true, wf_xml_value_loc(sc->doc, c));
        } else if (strcmp(x->name, "ActivityBind") == 0) {
            bind_element(sc, x, NULL, SC_GUESS);
        }
    } else if (!is_root && !is_property_element(x) &&
               custom_of(sc, x, ns, sizeof ns, assembly, sizeof assembly)) {
        scan_custom(sc, x, assembly);
    } else if (is_root) {
        scan_attributes(sc, x, wfl_registry_find("SequentialWorkflowActivity"));
    }
    for (const wf_xml_node *c = x->first_child; c; c = c->next)
        scan_node(sc, c, false);
}

/* Every clr-namespace with Assembly= declared anywhere names a type library that must exist. */
static void scan_namespaces(scan *sc, const wf_xml_node *x)
{
    for (size_t i = 0; i < x->nsdecl_count; i++) {
        char ns[256], assembly[256];
        if (clr_parts(x->nsdecls[i].uri, ns, sizeof ns, assembly, sizeof assembly) && assembly[0])
            wfc__sc_add(sc->s, SC_ASSEMBLY, assembly, NULL, NULL, assembly, NULL, SC_GUESS,
                        sc->path, x->line, x->col);
    }
    for (const wf_xml_node *c = x->first_child; c; c = c->next)
        scan_namespaces(sc, c);
}

/* x:Class "A.B.C": the assembly a clr-namespace maps A.B to, else "A.B" (the loader looks
 * there first); without a dot the first custom assembly declared. */
static void own_assembly(scan *sc, const wf_xml_node *root, const char *cls)
{
    const char *dot = cls ? strrchr(cls, '.') : NULL;
    char first[256] = "";
    for (size_t i = 0; i < root->nsdecl_count; i++) {
        char ns[256], assembly[256];
        if (!clr_parts(root->nsdecls[i].uri, ns, sizeof ns, assembly, sizeof assembly) ||
            !assembly[0])
            continue;
        if (!first[0])
            snprintf(first, sizeof first, "%s", assembly);
        if (dot && strlen(ns) == (size_t)(dot - cls) && strncmp(ns, cls, strlen(ns)) == 0) {
            snprintf(sc->own_assembly, sizeof sc->own_assembly, "%s", assembly);
            return;
        }
    }
    if (dot)
        snprintf(sc->own_assembly, sizeof sc->own_assembly, "%.*s", (int)(dot - cls), cls);
    else
        snprintf(sc->own_assembly, sizeof sc->own_assembly, "%s", first[0] ? first : "");
}

static void scan_root(scan *sc, const wf_xml_node *root)
{
    const wf_xml_attr *cls = wf_xml_attr_find(root, NS_X, "Class");
    const wf_xml_attr *name = wf_xml_attr_find(root, NS_X, "Name");
    const char *last = cls ? strrchr(cls->value, '.') : NULL;
    snprintf(sc->root_name, sizeof sc->root_name, "%s",
             name   ? name->value
             : last ? last + 1
             : cls  ? cls->value
                    : root->name);
    own_assembly(sc, root, cls ? cls->value : NULL);
    char ns[256], assembly[256];
    wf_loc at = loc_of(sc, root);
    if (custom_of(sc, root, ns, sizeof ns, assembly, sizeof assembly)) {
        /* a workflow base class as the root: the markup binds to its members */
        snprintf(sc->class_assembly, sizeof sc->class_assembly, "%s", assembly);
        snprintf(sc->class_name, sizeof sc->class_name, "%s%s%s", ns, ns[0] ? "." : "", root->name);
        size_t c = wfc__sc_add(sc->s, SC_CLASS, assembly, NULL, NULL, sc->class_name, NULL,
                               SC_GUESS, at.file, at.line, at.col);
        if (c != NO_IDX)
            sc->s->items[c].base = wf_xml_attr_find(root, NULL, "InitialStateName")
                                       ? "StateMachineWorkflowActivity"
                                       : "SequentialWorkflowActivity";
    } else if (cls && sc->own_assembly[0]) {
        snprintf(sc->class_assembly, sizeof sc->class_assembly, "%s", sc->own_assembly);
        snprintf(sc->class_name, sizeof sc->class_name, "%s", cls->value);
        wfc__sc_add(sc->s, SC_CLASS, sc->own_assembly, NULL, NULL, cls->value, NULL, SC_GUESS,
                    at.file, at.line, at.col);
    }
}

/* ---- .rules: this.P / this.f / ((Base)this.GetActivityByName("Root")).P ----------------- */
static bool is_codedom(const wf_xml_node *x, const char *name)
{
    return x && strcmp(x->name, name) == 0;
}

static const wf_xml_node *prop_child(const wf_xml_node *x, const char *suffix)
{
    const wf_xml_node *p = child_named(x, suffix);
    return p ? p->first_child : NULL;
}

/* Whether expr is `this` as rules see it: CodeThisReference, or a cast of
 * this.GetActivityByName(...) (markup-only workflows reach their root that way). */
static bool is_this(const wf_xml_node *e)
{
    while (is_codedom(e, "CodeCastExpression"))
        e = prop_child(e, "Expression");
    if (is_codedom(e, "CodeThisReferenceExpression"))
        return true;
    if (!is_codedom(e, "CodeMethodInvokeExpression"))
        return false;
    const wf_xml_node *m = prop_child(e, "Method");
    const wf_xml_attr *mn = m ? wf_xml_attr_find(m, NULL, "MethodName") : NULL;
    return mn && strcmp(mn->value, "GetActivityByName") == 0 &&
           is_this(prop_child(m, "TargetObject"));
}

/* The root member an expression reads (this.P, this.f), or NULL. */
static const char *this_member(const wf_xml_node *e)
{
    bool prop = is_codedom(e, "CodePropertyReferenceExpression");
    if (!prop && !is_codedom(e, "CodeFieldReferenceExpression"))
        return NULL;
    const wf_xml_attr *n = wf_xml_attr_find(e, NULL, prop ? "PropertyName" : "FieldName");
    return n && is_this(prop_child(e, "TargetObject")) ? n->value : NULL;
}

/* The System type of a CodePrimitiveExpression's value (<ns1:Int32>5</ns1:Int32>). */
static const char *primitive_type(const wf_xml_node *e)
{
    if (!is_codedom(e, "CodePrimitiveExpression"))
        return NULL;
    const wf_xml_node *v = prop_child(e, "Value");
    return v ? system_type(v->name) : NULL;
}

static void rules_pair(scan *sc, const wf_xml_node *x, const char *left, const char *right)
{
    const wf_xml_node *l = prop_child(x, left), *r = prop_child(x, right);
    const char *lm = this_member(l), *rm = this_member(r);
    const char *lt = primitive_type(l), *rt = primitive_type(r);
    const char *member = lm ? lm : rm;
    const char *type = lm ? rt : lt;
    if (member && type && sc->class_name[0])
        wfc__sc_add(sc->s, SC_CLASS_PROP, sc->class_assembly, sc->class_name, NULL, member, type,
                    SC_INFERRED, sc->path, 0, 0); /* the workflow's, found in its rules */
}

static void scan_rules_node(scan *sc, const wf_xml_node *x)
{
    const char *m = this_member(x);
    if (m && sc->class_name[0])
        wfc__sc_add(sc->s, SC_CLASS_PROP, sc->class_assembly, sc->class_name, NULL, m, NULL,
                    SC_GUESS, sc->path, 0, 0);
    if (is_codedom(x, "CodeBinaryOperatorExpression"))
        rules_pair(sc, x, "Left", "Right");
    else if (is_codedom(x, "CodeAssignStatement"))
        rules_pair(sc, x, "Left", "Right");
    for (const wf_xml_node *c = x->first_child; c; c = c->next)
        scan_rules_node(sc, c);
}

static wf_status scan_rules(scan *sc, const char *rules, wf_error *err)
{
    wf_xml_doc *doc = NULL;
    wf_status st = wf_xml_load_file(rules, NULL, &doc, err);
    if (st == WF_OK)
        scan_rules_node(sc, wf_xml_root(doc));
    wf_xml_doc_destroy(doc);
    return st;
}

/* Give linked items (a property bound to another) the stronger of their types. */
static void settle_links(wfc_scaffold *s)
{
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < s->link_count; i++) {
            sc_item *a = &s->items[s->links[i][0]], *b = &s->items[s->links[i][1]];
            sc_item *weak = a->strength < b->strength ? a : b, *strong = weak == a ? b : a;
            if (strong->strength > weak->strength) {
                weak->type = strong->type;
                weak->strength = strong->strength;
            }
        }
}

wf_status wfc_scaffold_scan(wfc_scaffold *s, const char *xoml, const char *rules, wf_error *err)
{
    wf_xml_doc *doc = NULL;
    wf_status st = wf_xml_load_file(xoml, NULL, &doc, err);
    if (st != WF_OK)
        return st;
    scan sc = {.s = s, .doc = doc, .path = wf_xml_path(doc)};
    sc.customs = wf_strmap_create(NULL);
    if (!sc.customs) {
        wf_xml_doc_destroy(doc);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    const wf_xml_node *root = wf_xml_root(doc);
    scan_namespaces(&sc, root);
    scan_root(&sc, root);
    scan_node(&sc, root, true);
    char beside[4096];
    size_t n = strlen(xoml);
    struct stat sb;
    if (!rules && n > 5 && strcmp(xoml + n - 5, ".xoml") == 0 && n < sizeof beside) {
        snprintf(beside, sizeof beside, "%.*s.rules", (int)(n - 5), xoml);
        rules = stat(beside, &sb) == 0 ? beside : NULL;
    }
    if (rules)
        st = scan_rules(&sc, rules, err);
    settle_links(s);
    wf_strmap_destroy(sc.customs);
    wf_xml_doc_destroy(doc);
    if (st == WF_OK && s->nomem)
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return st;
}

/* ---- lifecycle ----------------------------------------------------------------------------- */
wf_status wfc_scaffold_create(const wf_libpath *libpath, const char *dir, wfc_scaffold **out,
                              wf_error *err)
{
    *out = NULL;
    wfc_scaffold *s = wf_calloc(1, sizeof *s);
    if (s) {
        s->libpath = libpath;
        s->dir = wf_strdup(dir);
        s->index = wf_strmap_create(NULL);
    }
    if (!s || !s->dir || !s->index) {
        wfc_scaffold_destroy(s);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    *out = s;
    return WF_OK;
}

void wfc_scaffold_destroy(wfc_scaffold *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->count; i++) {
        sc_item *it = &s->items[i];
        wf_free(it->assembly);
        wf_free(it->container);
        wf_free(it->owner);
        wf_free(it->name);
        wf_free(it->source);
        wf_free(it->function);
    }
    for (size_t i = 0; i < s->note_count; i++) {
        wf_free(s->notes[i].source);
        wf_free(s->notes[i].kind);
        wf_free(s->notes[i].text);
    }
    wf_free(s->notes);
    wf_free(s->links);
    wf_free(s->items);
    wf_strmap_destroy(s->index);
    wf_free(s->dir);
    wf_free(s);
}

size_t wfc_scaffold_note_count(const wfc_scaffold *s, const char *source)
{
    size_t n = 0;
    for (size_t i = 0; i < s->note_count; i++)
        n += strcmp(s->notes[i].source, source) == 0;
    return n;
}

bool wfc_scaffold_note_at(const wfc_scaffold *s, const char *source, size_t index,
                          wfc_scaffold_note *out)
{
    for (size_t i = 0; i < s->note_count; i++) {
        if (strcmp(s->notes[i].source, source) != 0 || index-- > 0)
            continue;
        *out = (wfc_scaffold_note){s->notes[i].kind, s->notes[i].text, s->notes[i].line,
                                   s->notes[i].col};
        return true;
    }
    return false;
}

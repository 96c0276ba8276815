/* wfl_def.c — the XOML loader: WF3 markup (elements = types, attributes and property
 * elements = DPs, markup extensions, attached properties, clr-namespace type libraries) into
 * the immutable wfl_node tree, then WF3's validation; every problem goes to the diagnostics
 * list with file:line:col and loading carries on to report the rest (docs/semantics.md §1, §3).
 * The reader comes first, then the checks that need the whole tree, then the public API. */
#include "wfl_def_int.h"
#include "wfl_rules_int.h" /* walking rule expressions for this.GetActivityByName */

#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h> /* strncasecmp */
#include <unistd.h>  /* access */

#include "../common/wf_xml.h"

#define WF_NS "http://schemas.microsoft.com/winfx/2006/xaml/workflow"
#define X_NS "http://schemas.microsoft.com/winfx/2006/xaml"
#define MODERN_NS "http://schemas.microsoft.com/netfx/2009/xaml/activities" /* WF4's */

typedef struct custom_type {
    const wfl_tl_activity *activity;
    const wfl_type *type;
} custom_type;

typedef struct loader {
    const wfl_load_opts *opts;
    wf_diags *diags;
    wf_xml_doc *doc;
    wfl_definition *def;
    wf_arena *arena;
    custom_type *customs; /* cache: one wfl_type per typelib activity used */
    size_t custom_count;
    size_t node_count;
    const wfl_tl_class *root_base;       /* a custom root element that is a typelib Class */
    const wfl_typelib *root_base_typelib;
    bool nomem;
    bool lib_missing;  /* a declared type library failed to load (reported once) */
    bool rules_failed; /* the .rules file failed to load (reported) */
    bool no_class_said; /* "needs a code-beside class" reported: later ones are cascades */
} loader;

/* ---- reporting ---------------------------------------------------------------------------- */
static void report(loader *ld, wf_severity sev, wf_status code, wf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void report(loader *ld, wf_severity sev, wf_status code, wf_loc loc, const char *fmt, ...)
{
    wf_error e = WF_ERROR_INIT;
    va_list ap;
    va_start(ap, fmt);
    wf_error_setv(&e, code, &loc, fmt, ap);
    va_end(ap);
    if (code == WF_E_NOMEM)
        ld->nomem = true;
    if (sev == WF_SEV_WARNING)
        ld->def->warning_count++;
    wf_diags_add_error(ld->diags, sev, &e);
}

#define ERR(ld, code, loc, ...) report(ld, WF_SEV_ERROR, code, loc, __VA_ARGS__)
#define WARN(ld, loc, ...) report(ld, WF_SEV_WARNING, WF_E_SCHEMA, loc, __VA_ARGS__)

static void nomem(loader *ld)
{
    ERR(ld, WF_E_NOMEM, WF_LOC_NONE, "out of memory loading the definition");
}

/* Pass on an error a callee recorded in `e`. */
static void report_error(loader *ld, const wf_error *e)
{
    if (e->code == WF_E_NOMEM)
        ld->nomem = true;
    wf_diags_add_error(ld->diags, WF_SEV_ERROR, e);
}

/* Locations kept in the definition must name its own copy of the path (the XML document,
 * and the path it holds, are gone once loading ends). */
static wf_loc own_loc(loader *ld, wf_loc loc)
{
    loc.file = ld->def->path;
    return loc;
}

static wf_loc node_loc(loader *ld, const wf_xml_node *x)
{
    return own_loc(ld, wf_xml_node_loc(ld->doc, x));
}

static wf_loc value_loc(loader *ld, const wf_xml_attr *a)
{
    return own_loc(ld, wf_xml_value_loc(ld->doc, a));
}

static wf_loc attr_loc(loader *ld, const wf_xml_attr *a)
{
    return own_loc(ld, wf_xml_attr_loc(ld->doc, a));
}

static wf_loc text_loc(loader *ld, const wf_xml_node *x)
{
    return own_loc(ld, wf_xml_text_loc(ld->doc, x));
}

static char *adup(loader *ld, const char *s)
{
    char *d = wf_arena_strdup(ld->arena, s);
    if (d == NULL)
        nomem(ld);
    return d;
}

/* ---- namespaces and type libraries ---------------------------------------------------- */
/* The .NET framework's own assemblies (no type library expected). Vendor libraries whose
 * names merely start with "Microsoft." (Microsoft.SharePoint.WorkflowActions, the Service
 * Manager activity library, ...) are custom activity libraries like any other. */
static bool is_system_assembly(const char *name, size_t len)
{
    static const char *const exact[] = {"System", "mscorlib", "WindowsBase", "PresentationCore",
                                        "PresentationFramework", "Microsoft.VisualBasic",
                                        "Microsoft.CSharp", NULL};
    for (const char *const *e = exact; *e != NULL; e++) {
        if (strlen(*e) == len && strncasecmp(name, *e, len) == 0)
            return true;
    }
    return len > 7 && strncasecmp(name, "System.", 7) == 0;
}

/* Split "clr-namespace:NS;Assembly=NAME, Version=..." into the assembly name. Returns false
 * when uri is not a clr-namespace; *asm_out is NULL when there is no Assembly= part. */
static bool clr_assembly(const char *uri, const char **asm_start, size_t *asm_len, bool *valid)
{
    static const char prefix[] = "clr-namespace:";
    *asm_start = NULL;
    *asm_len = 0;
    *valid = true;
    if (uri == NULL || strncasecmp(uri, prefix, sizeof prefix - 1) != 0)
        return false;
    const char *semi = strchr(uri, ';');
    if (semi == NULL)
        return true;
    const char *p = semi + 1;
    while (isspace((unsigned char)*p))
        p++;
    if (strncasecmp(p, "Assembly=", 9) != 0) {
        *valid = false;
        return true;
    }
    p += 9;
    const char *end = p;
    while (*end != '\0' && *end != ',')
        end++;
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    *asm_start = p;
    *asm_len = (size_t)(end - p);
    *valid = *asm_len > 0;
    return true;
}

/* The entry for an assembly, loaded or not (a failed load is kept with typelib NULL, so a
 * missing library is reported once, not at every declaration). */
static wfl_tl_use *find_entry(loader *ld, const char *name, size_t len)
{
    for (size_t i = 0; i < ld->def->typelib_count; i++) {
        const char *a = ld->def->typelibs[i].assembly;
        if (strlen(a) == len && strncmp(a, name, len) == 0)
            return &ld->def->typelibs[i];
    }
    return NULL;
}

static wfl_typelib *find_typelib(loader *ld, const char *name, size_t len)
{
    wfl_tl_use *u = find_entry(ld, name, len);
    return u != NULL ? u->typelib : NULL;
}

static void load_typelib(loader *ld, const char *name, size_t len, wf_loc at)
{
    if (find_entry(ld, name, len) != NULL)
        return;
    char *asm_name = wf_arena_strndup(ld->arena, name, len);
    wfl_tl_use *grown = wf_realloc(ld->def->typelibs,
                                   (ld->def->typelib_count + 1) * sizeof *grown);
    if (grown != NULL)
        ld->def->typelibs = grown;
    if (asm_name == NULL || grown == NULL) {
        nomem(ld);
        return;
    }
    wfl_tl_use *use = &ld->def->typelibs[ld->def->typelib_count++];
    *use = (wfl_tl_use){asm_name, NULL};
    if (ld->opts->libpath == NULL) {
        ERR(ld, WF_E_NOLIB, at, "type library '%s' cannot be loaded: no library path is set",
            asm_name);
        ld->lib_missing = true;
        return;
    }
    wf_error e = WF_ERROR_INIT;
    wf_status rc = (ld->opts->no_native ? wfl_typelib_load_decl : wfl_typelib_load)(
        ld->opts->libpath, ld->def->types, asm_name, &use->typelib,
                                    ld->diags, &e);
    if (rc == WF_E_NOTFOUND)
        ERR(ld, WF_E_NOLIB, at, "type library '%s' (%s.activities.xml) not found on the "
            "library path", asm_name, asm_name);
    else if (rc != WF_OK)
        ERR(ld, rc, at, "type library '%s' failed to load: %s", asm_name, e.message);
    ld->lib_missing = ld->lib_missing || rc != WF_OK;
}

/* Load every type library a clr-namespace declaration in the document names. */
static void load_declared_typelibs(loader *ld, const wf_xml_node *x)
{
    for (size_t i = 0; i < x->nsdecl_count; i++) {
        const char *a = NULL;
        size_t len = 0;
        bool valid = true;
        if (!clr_assembly(x->nsdecls[i].uri, &a, &len, &valid))
            continue;
        if (!valid)
            ERR(ld, WF_E_SCHEMA, node_loc(ld, x),
                "invalid namespace mapping '%s': expected clr-namespace:NS;Assembly=NAME",
                x->nsdecls[i].uri);
        else if (a != NULL && !is_system_assembly(a, len))
            load_typelib(ld, a, len, node_loc(ld, x));
    }
    for (const wf_xml_node *c = x->first_child; c != NULL; c = c->next)
        load_declared_typelibs(ld, c);
}

/* The type library a namespace URI maps to (NULL for system or unmapped namespaces). */
static wfl_typelib *typelib_of_ns(loader *ld, const char *uri)
{
    const char *a = NULL;
    size_t len = 0;
    bool valid = true;
    if (!clr_assembly(uri, &a, &len, &valid) || a == NULL)
        return NULL;
    return find_typelib(ld, a, len);
}

static bool is_system_ns(const char *uri)
{
    const char *a = NULL;
    size_t len = 0;
    bool valid = true;
    return clr_assembly(uri, &a, &len, &valid) && a != NULL && is_system_assembly(a, len);
}

/* ---- element types -------------------------------------------------------------------- */
#define COMPOSITE_NESTING_MAX 8

/* The body of a composite type: its Definition= XOML beside the type library (a plain file
 * name, checked by the type library), loaded with the same options, whose root carries
 * x:Class "NS.TypeName". Its first error is reported at the using element. Kept (owned) by
 * the definition being loaded. */
static const wfl_definition *composite_body(loader *ld, const wfl_typelib *tl,
                                            const wfl_tl_activity *act, wf_loc at)
{
    const char *name = wfl_tl_activity_name(act), *file = wfl_typelib_file(tl);
    if (ld->opts->nesting >= COMPOSITE_NESTING_MAX) {
        ERR(ld, WF_E_LIMIT, at, "composite '%s' nests composites more than %d deep (does it "
            "use itself?)", name, COMPOSITE_NESTING_MAX);
        return NULL;
    }
    const char *slash = strrchr(file, '/');
    char path[1024];
    int n = snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - file + 1) : 0, file,
                     wfl_tl_activity_definition(act));
    if (n < 0 || (size_t)n >= sizeof path) {
        ERR(ld, WF_E_LIMIT, at, "path of composite '%s' too long", name);
        return NULL;
    }
    wfl_definition **grown =
        wf_realloc(ld->def->composites, (ld->def->composite_count + 1) * sizeof *grown);
    if (grown == NULL) {
        nomem(ld);
        return NULL;
    }
    ld->def->composites = grown;
    wfl_load_opts o = *ld->opts;
    o.diags = NULL;
    o.rules_path = NULL;
    o.no_auto_rules = false;
    o.nesting++;
    wfl_definition *body = NULL;
    wf_error e = WF_ERROR_INIT;
    wf_status rc = wfl_definition_load_file(&o, path, &body, &e);
    if (rc == WF_E_NOMEM) {
        nomem(ld);
        return NULL;
    }
    if (rc != WF_OK && strncmp(e.message, "composite '", 11) == 0) { /* from a deeper body */
        ERR(ld, rc, at, "%s", e.message);
        return NULL;
    }
    if (rc != WF_OK) {
        ERR(ld, rc, at, "composite '%s': %s (%s:%u:%u)", name, e.message, e.file, e.line, e.col);
        return NULL;
    }
    grown[ld->def->composite_count++] = body;
    const char *cls = body->class_name, *dot = cls ? strrchr(cls, '.') : NULL;
    if (cls == NULL || strcmp(dot ? dot + 1 : cls, name) != 0) {
        ERR(ld, WF_E_SCHEMA, at, "the root of %s must carry x:Class=\"NS.%s\" (it has %s)", path,
            name, cls ? cls : "none");
        return NULL;
    }
    return body;
}

static const wfl_type *custom_type_for(loader *ld, const wfl_typelib *tl,
                                       const wfl_tl_activity *act, wf_loc at)
{
    for (size_t i = 0; i < ld->custom_count; i++) {
        if (ld->customs[i].activity == act)
            return ld->customs[i].type;
    }
    custom_type *grown = wf_realloc(ld->customs, (ld->custom_count + 1) * sizeof *grown);
    if (grown == NULL) {
        nomem(ld);
        return NULL;
    }
    ld->customs = grown;
    const wfl_type *t = NULL;
    wf_error e = WF_ERROR_INIT;
    const wfl_definition *body = NULL;
    if (wfl_tl_activity_definition(act) != NULL &&
        (body = composite_body(ld, tl, act, at)) == NULL)
        return NULL;
    if ((body ? wfl_type_create_composite(ld->arena, tl, act, body, &t, &e)
              : wfl_type_create_custom(ld->arena, tl, act, &t, &e)) != WF_OK) {
        e.line = at.line;
        e.col = at.col;
        report_error(ld, &e);
        return NULL;
    }
    ld->customs[ld->custom_count++] = (custom_type){act, t};
    return t;
}

/* A clr-namespace without Assembly= names the workflow's own assembly: its types come from
 * the type library that holds the x:Class (compiled workflows write their markup so). */
static const wfl_type *own_assembly_type(loader *ld, const wf_xml_node *x, wf_loc at)
{
    const wfl_typelib *own = ld->def->class_typelib;
    const wfl_tl_activity *act = own != NULL ? wfl_typelib_activity(own, x->name) : NULL;
    if (act != NULL)
        return custom_type_for(ld, own, act, at);
    if (own != NULL)
        ERR(ld, WF_E_NAME, at, "type '%s' (namespace '%s', the workflow's own assembly): type "
            "library '%s' has no activity type '%s'", x->name, x->ns, wfl_typelib_name(own),
            x->name);
    else
        ERR(ld, WF_E_NAME, at, "type '%s': its namespace '%s' names no Assembly= (types of the "
            "workflow's own assembly need a type library holding its x:Class)", x->name, x->ns);
    return NULL;
}

static const wfl_type *element_type(loader *ld, const wf_xml_node *x)
{
    wf_loc at = node_loc(ld, x);
    if (x->ns != NULL && strcmp(x->ns, WF_NS) == 0) {
        const wfl_type *t = wfl_registry_find(x->name);
        if (t == NULL)
            ERR(ld, WF_E_SCHEMA, at, "unknown activity type '%s'", x->name);
        else if (t->kind == WFL_KIND_UNSUPPORTED)
            ERR(ld, WF_E_UNSUPPORTED, at, "%s is not supported: %s", t->name, t->unsupported);
        else
            return t;
        return NULL;
    }
    wfl_typelib *tl = x->ns != NULL ? typelib_of_ns(ld, x->ns) : NULL;
    if (tl != NULL) {
        const wfl_tl_activity *act = wfl_typelib_activity(tl, x->name);
        if (act != NULL)
            return custom_type_for(ld, tl, act, at);
        ERR(ld, WF_E_NAME, at, "type library '%s' has no activity type '%s'",
            wfl_typelib_name(tl), x->name);
        return NULL;
    }
    const char *a = NULL;
    size_t alen = 0;
    bool valid = true;
    if (clr_assembly(x->ns, &a, &alen, &valid) && a == NULL)
        return own_assembly_type(ld, x, at);
    if (a != NULL && !is_system_assembly(a, alen))
        return NULL; /* the missing or broken library was reported at its declaration */
    ERR(ld, WF_E_SCHEMA, at, "unknown activity type '%s%s%s' (namespace %s)",
        x->prefix ? x->prefix : "", x->prefix ? ":" : "", x->name, x->ns ? x->ns : "none");
    return NULL;
}

/* ---- markup extensions and literal values ------------------------------------------------ */
typedef enum ext_kind { EXT_NONE, EXT_ESCAPED, EXT_NULL, EXT_TYPE, EXT_BIND, EXT_OTHER } ext_kind;

/* Classify an attribute value; for EXT_TYPE, *arg receives the type's qname (arena). */
static ext_kind classify(loader *ld, const wf_xml_node *x, const char *text, const char **arg)
{
    *arg = NULL;
    if (text[0] != '{')
        return EXT_NONE;
    if (text[1] == '}')
        return EXT_ESCAPED;
    if (wfl_bind_is_markup(text))
        return EXT_BIND;
    const char *p = text + 1;
    while (isspace((unsigned char)*p))
        p++;
    const char *start = p;
    while (*p != '\0' && *p != '}' && !isspace((unsigned char)*p))
        p++;
    char qname[128];
    size_t len = (size_t)(p - start);
    if (len == 0 || len >= sizeof qname)
        return EXT_OTHER;
    memcpy(qname, start, len);
    qname[len] = '\0';
    const char *ns = NULL, *local = NULL;
    size_t local_len = 0;
    if (!wf_xml_resolve_qname(x, qname, &ns, &local, &local_len) || ns == NULL ||
        strcmp(ns, X_NS) != 0)
        return EXT_OTHER;
    if (strcmp(local, "Null") == 0 || strcmp(local, "NullExtension") == 0)
        return EXT_NULL;
    if (strcmp(local, "Type") != 0 && strcmp(local, "TypeExtension") != 0)
        return EXT_OTHER;
    while (isspace((unsigned char)*p))
        p++;
    if (strncmp(p, "TypeName=", 9) == 0)
        p += 9;
    const char *end = strchr(p, '}');
    if (end == NULL)
        return EXT_OTHER;
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    *arg = wf_arena_strndup(ld->arena, p, (size_t)(end - p));
    return EXT_TYPE;
}

static void keep_heap_literal(loader *ld, const wf_value *v)
{
    if (v->type->kind != WF_K_LIST && v->type->kind != WF_K_RECORD)
        return;
    wfl_definition *def = ld->def;
    wf_value *grown = wf_realloc(def->heap_literals, (def->heap_literal_count + 1) * sizeof *grown);
    if (grown == NULL) {
        nomem(ld);
        return;
    }
    def->heap_literals = grown;
    grown[def->heap_literal_count++] = wf_value_retain(v);
}

/* Convert literal text to the DP's type; strings become immortal arena strings. */
static bool literal_value(loader *ld, const wfl_dp *dp, const char *text, wf_loc at,
                          wf_value *out)
{
    const wf_type *t = dp->type;
    *out = wf_null();
    if (t->kind == WF_K_STRING || t->kind == WF_K_OBJECT) {
        if (dp->enum_values != NULL) {
            bool ok = false;
            for (const char *const *e = dp->enum_values; *e != NULL && !ok; e++)
                ok = strcmp(*e, text) == 0;
            if (!ok) {
                ERR(ld, WF_E_SYNTAX, at, "'%s' is not a valid %s (expected %s or %s)", text,
                    dp->name, dp->enum_values[0], dp->enum_values[1]);
                return false;
            }
        }
        if (wf_value_string_static(ld->arena, text, strlen(text), out) != WF_OK) {
            nomem(ld);
            return false;
        }
        return true;
    }
    if (t->kind == WF_K_EXCEPTION || t->kind == WF_K_TOKEN) {
        ERR(ld, WF_E_TYPE, at, "property '%s' of type %s cannot be written as text", dp->name,
            t->name);
        return false;
    }
    wf_error e = WF_ERROR_INIT;
    wf_status rc = wf_value_parse(ld->def->types, t, text, out, &e);
    if (rc == WF_E_NOMEM) {
        nomem(ld);
        return false;
    }
    if (rc != WF_OK) {
        ERR(ld, rc, at, "cannot convert '%s' to %s for property '%s': %s", text, t->name,
            dp->name, e.message);
        return false;
    }
    wf_value keep = *out; /* the definition's list holds the reference from here on */
    keep_heap_literal(ld, &keep);
    if (t->kind == WF_K_LIST || t->kind == WF_K_RECORD)
        wf_value_release(out);
    *out = keep;
    return !ld->nomem;
}

/* ---- code-beside lookups ---------------------------------------------------------------- */
static const wfl_tl_func *class_handler(loader *ld, const char *name, wf_loc at)
{
    const wfl_tl_class *cls = ld->def->code_beside;
    if (cls == NULL) {
        if (!ld->no_class_said)
            ERR(ld, WF_E_NAME, at, "handler '%s' needs a code-beside class (x:Class naming a "
                "type-library Class)", name);
        ld->no_class_said = true;
        return NULL;
    }
    const wfl_tl_func *fn = wfl_tl_class_handler(cls, name);
    if (fn == NULL)
        ERR(ld, WF_E_NAME, at, "class '%s' has no handler '%s'", wfl_tl_class_name(cls), name);
    return fn;
}

static const wfl_tl_func *class_condition(loader *ld, const char *name, wf_loc at)
{
    const wfl_tl_class *cls = ld->def->code_beside;
    if (cls == NULL) {
        if (!ld->no_class_said)
            ERR(ld, WF_E_NAME, at, "condition '%s' needs a code-beside class (x:Class naming a "
                "type-library Class)", name);
        ld->no_class_said = true;
        return NULL;
    }
    const wfl_tl_func *fn = wfl_tl_class_condition(cls, name);
    if (fn == NULL)
        ERR(ld, WF_E_NAME, at, "class '%s' has no condition '%s'", wfl_tl_class_name(cls),
            name);
    return fn;
}

/* ---- {x:Type} and type names ------------------------------------------------------------ */
static void resolve_type(loader *ld, const wf_xml_node *x, const wfl_dp *dp, const char *qname,
                         wf_loc at, wfl_pval *pv)
{
    const char *ns = NULL, *local = qname;
    size_t local_len = strlen(qname);
    if (strchr(qname, ':') != NULL && !wf_xml_resolve_qname(x, qname, &ns, &local, &local_len)) {
        ERR(ld, WF_E_NAME, at, "undeclared namespace prefix in type '%s'", qname);
        return;
    }
    const char *dot = strrchr(local, '.');
    const char *last = dot != NULL ? dot + 1 : local;
    pv->kind = WFL_PV_TYPE;
    pv->loc = at;
    pv->u.type.name = adup(ld, last);
    wfl_typelib *tl = ns != NULL ? typelib_of_ns(ld, ns) : NULL;
    const wf_type *exc = tl != NULL ? wfl_typelib_exception(tl, local) : NULL;
    if (exc == NULL)
        exc = wf_types_find(ld->def->types, last);
    if (exc != NULL && exc->kind != WF_K_EXCEPTION)
        exc = NULL;
    pv->u.type.exc = exc;
    if (strcmp(dp->name, "FaultType") == 0) {
        if (exc == NULL)
            ERR(ld, WF_E_TYPE, at, "'%s' is not a known exception type", qname);
        return;
    }
    if (strcmp(dp->name, "InterfaceType") == 0) {
        for (size_t i = 0; i < ld->def->typelib_count && pv->u.type.service == NULL; i++) {
            const wfl_typelib *cand = tl != NULL ? tl : ld->def->typelibs[i].typelib;
            if (cand == NULL)
                continue;
            pv->u.type.service = wfl_typelib_service(cand, local);
            if (pv->u.type.service == NULL)
                pv->u.type.service = wfl_typelib_service(cand, last);
        }
        if (pv->u.type.service == NULL)
            ERR(ld, WF_E_NAME, at, "no type library declares the service interface '%s'", qname);
    }
}

/* ---- attributes ------------------------------------------------------------------------ */
static bool dp_bindable(loader *ld, const wfl_dp *dp, wf_loc at)
{
    if (dp->flags & WFL_DP_METADATA) {
        ERR(ld, WF_E_SCHEMA, at, "metadata property '%s' cannot be bound (ActivityBind)",
            dp->name);
        return false;
    }
    if (dp->kind != WFL_DPK_VALUE && dp->kind != WFL_DPK_EVENT && dp->kind != WFL_DPK_TYPE) {
        ERR(ld, WF_E_SCHEMA, at, "property '%s' cannot be bound (ActivityBind)", dp->name);
        return false;
    }
    return true;
}

static void set_bind(loader *ld, const wfl_dp *dp, const char *text, wf_loc at, wfl_pval *pv)
{
    if (!dp_bindable(ld, dp, at))
        return;
    wfl_bind *b = NULL;
    wf_error e = WF_ERROR_INIT;
    if (wfl_bind_parse_markup(ld->arena, text, at, &b, &e) != WF_OK) {
        report_error(ld, &e);
        return;
    }
    pv->kind = WFL_PV_BIND;
    pv->loc = at;
    pv->u.bind = b;
}

static void set_text(loader *ld, const wf_xml_node *x, const wfl_dp *dp, const char *text,
                     wf_loc at, wfl_pval *pv)
{
    switch (dp->kind) {
    case WFL_DPK_VALUE:
    case WFL_DPK_ACTIVITY_REF:
        if (literal_value(ld, dp, text, at, &pv->u.literal)) {
            pv->kind = WFL_PV_LITERAL;
            pv->loc = at;
        }
        return;
    case WFL_DPK_EVENT:
        pv->kind = WFL_PV_HANDLER;
        pv->loc = at;
        pv->u.handler.name = adup(ld, text);
        pv->u.handler.fn = class_handler(ld, text, at);
        return;
    case WFL_DPK_TYPE:
        resolve_type(ld, x, dp, text, at, pv);
        return;
    default:
        ERR(ld, WF_E_SCHEMA, at, "property '%s' must be written as a property element",
            dp->name);
        return;
    }
}

static void set_attr_value(loader *ld, const wf_xml_node *x, const wfl_dp *dp, const char *text,
                           wf_loc at, wfl_pval *pv)
{
    const char *arg = NULL;
    switch (classify(ld, x, text, &arg)) {
    case EXT_ESCAPED:
        set_text(ld, x, dp, text + 2, at, pv);
        return;
    case EXT_NULL:
        if (dp->flags & WFL_DP_METADATA && dp->kind != WFL_DPK_VALUE &&
            dp->kind != WFL_DPK_ACTIVITY_REF) {
            pv->kind = WFL_PV_UNSET;
            return;
        }
        pv->kind = WFL_PV_NULL;
        pv->loc = at;
        return;
    case EXT_BIND:
        set_bind(ld, dp, text, at, pv);
        return;
    case EXT_TYPE:
        if (dp->kind != WFL_DPK_TYPE) {
            ERR(ld, WF_E_TYPE, at, "property '%s' does not take a type", dp->name);
            return;
        }
        if (arg == NULL)
            nomem(ld);
        else
            resolve_type(ld, x, dp, arg, at, pv);
        return;
    case EXT_OTHER:
        ERR(ld, WF_E_SYNTAX, at, "unknown markup extension in '%s' (a literal '{' is written "
            "'{}{')", text);
        return;
    case EXT_NONE:
        set_text(ld, x, dp, text, at, pv);
        return;
    }
}

/* x:Name (or a generated name): the node's name and its Name DP. */
static void set_name(loader *ld, wfl_node *node, const char *name, wf_loc at)
{
    wfl_pval *pv = &node->props[WFL_DPI_NAME];
    node->name = adup(ld, name);
    pv->kind = WFL_PV_LITERAL;
    pv->loc = at;
    if (node->name != NULL &&
        wf_value_string_static(ld->arena, node->name, strlen(node->name), &pv->u.literal) != WF_OK)
        nomem(ld);
}

static void x_attribute(loader *ld, wfl_node *node, const wf_xml_attr *a, bool is_root)
{
    wf_loc at = attr_loc(ld, a);
    if (strcmp(a->name, "Name") == 0) {
        set_name(ld, node, a->value, value_loc(ld, a));
    } else if (strcmp(a->name, "Class") == 0) {
        if (!is_root)
            ERR(ld, WF_E_SCHEMA, at, "x:Class is only allowed on the root activity");
    } else {
        ERR(ld, WF_E_SCHEMA, at, "unknown directive 'x:%s' (only x:Name, x:Class and x:Code "
            "are allowed)", a->name);
    }
}

/* "A, B, Result": the properties a type library declares for a custom type, for messages. */
static const char *declared_props(const wfl_type *t, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->dp_count && used < size; i++) {
        if (t->dps[i]->tl_prop == NULL)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used > 0 ? ", " : "",
                         t->dps[i]->name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return buf[0] != '\0' ? buf : "none";
}

/* "%s has no property '%s'", naming what a type-library activity does declare. */
static void no_such_property(loader *ld, const wfl_type *t, const char *name, wf_loc at)
{
    char props[256];
    if (t->kind == WFL_KIND_CUSTOM)
        ERR(ld, WF_E_SCHEMA, at, "%s has no property '%s' (its type library declares: %s)",
            t->name, name, declared_props(t, props, sizeof props));
    else
        ERR(ld, WF_E_SCHEMA, at, "%s has no property '%s'", t->name, name);
}

static void dp_attribute(loader *ld, const wf_xml_node *x, wfl_node *node, const wf_xml_attr *a)
{
    const wfl_dp *dp = wfl_type_find_dp(node->type, a->name);
    wf_loc at = attr_loc(ld, a);
    if (dp == NULL) {
        no_such_property(ld, node->type, a->name, at);
        return;
    }
    if (dp->index == WFL_DPI_NAME) {
        node->name = adup(ld, a->value);
    }
    set_attr_value(ld, x, dp, a->value, value_loc(ld, a), &node->props[dp->index]);
}

static void attributes(loader *ld, const wf_xml_node *x, wfl_node *node, bool is_root)
{
    for (size_t i = 0; i < x->attr_count; i++) {
        const wf_xml_attr *a = &x->attrs[i];
        if (a->ns != NULL && strcmp(a->ns, X_NS) == 0)
            x_attribute(ld, node, a, is_root);
        else if (a->ns == NULL || strcmp(a->ns, WF_NS) == 0)
            dp_attribute(ld, x, node, a);
        else
            WARN(ld, attr_loc(ld, a), "ignored attribute '%s%s%s' (namespace %s)",
                 a->prefix ? a->prefix : "", a->prefix ? ":" : "", a->name, a->ns);
    }
}

/* ---- property elements ------------------------------------------------------------------- */
static const wf_xml_node *single_child(loader *ld, const wf_xml_node *pe)
{
    if (pe->child_count != 1) {
        ERR(ld, WF_E_SCHEMA, node_loc(ld, pe), "property element '%s' must contain exactly one "
            "element", pe->name);
        return NULL;
    }
    return pe->first_child;
}

static bool is_wf(const wf_xml_node *x, const char *name)
{
    return x->ns != NULL && strcmp(x->ns, WF_NS) == 0 && strcmp(x->name, name) == 0;
}

static const char *attr_value(const wf_xml_node *x, const char *name)
{
    const wf_xml_attr *a = wf_xml_attr_find(x, NULL, name);
    return a != NULL ? a->value : NULL;
}

static bool parse_condition(loader *ld, const wf_xml_node *pe, wfl_cond *cond)
{
    const wf_xml_node *c = single_child(ld, pe);
    if (c == NULL)
        return false;
    wf_loc at = node_loc(ld, c);
    cond->loc = at;
    if (is_wf(c, "CodeCondition")) {
        const wf_xml_attr *a = wf_xml_attr_find(c, NULL, "Condition");
        cond->kind = WFL_COND_CODE;
        if (a == NULL) {
            ERR(ld, WF_E_SCHEMA, at, "CodeCondition needs a Condition attribute");
            return false;
        }
        if (wfl_bind_is_markup(a->value)) {
            wfl_bind *b = NULL;
            wf_error e = WF_ERROR_INIT;
            if (wfl_bind_parse_markup(ld->arena, a->value, value_loc(ld, a), &b, &e) != WF_OK) {
                report_error(ld, &e);
                return false;
            }
            cond->bind = b;
            cond->name = b->path;
            return true;
        }
        cond->name = adup(ld, a->value);
        cond->fn = class_condition(ld, a->value, value_loc(ld, a));
        return cond->fn != NULL;
    }
    if (is_wf(c, "RuleConditionReference")) {
        const char *name = attr_value(c, "ConditionName");
        cond->kind = WFL_COND_RULE;
        if (name == NULL) {
            ERR(ld, WF_E_SCHEMA, at, "RuleConditionReference needs a ConditionName");
            return false;
        }
        cond->name = adup(ld, name);
        if (ld->def->rules != NULL) {
            cond->rule = wfl_rules_condition(ld->def->rules, name);
            if (cond->rule == NULL)
                ERR(ld, WF_E_NAME, at, "the rules have no condition '%s'", name);
        } else if (!ld->rules_failed) {
            ERR(ld, WF_E_NAME, at, "condition '%s' not found: no .rules file is loaded", name);
        }
        return true;
    }
    ERR(ld, WF_E_SCHEMA, at, "'%s' is not a condition (expected CodeCondition or "
        "RuleConditionReference)", c->name);
    return false;
}

/* A value written as an element: ActivityBind, x:Null, a typed primitive or a record. */
static void element_value(loader *ld, const wfl_dp *dp, const wf_xml_node *c, wfl_pval *pv);

static void parse_param_binding(loader *ld, const wf_xml_node *b, wfl_param_binding *pb)
{
    pb->loc = node_loc(ld, b);
    const char *pname = attr_value(b, "ParameterName");
    if (pname == NULL) {
        ERR(ld, WF_E_SCHEMA, pb->loc, "WorkflowParameterBinding needs a ParameterName");
        return;
    }
    pb->param = adup(ld, pname);
    static const wfl_dp value_dp = {"Value", WFL_DPK_VALUE, &wf_type_object, 0,
                                    {&wf_type_null, {0}}, NULL, 0, NULL, NULL};
    wfl_pval pv = {WFL_PV_UNSET, WF_LOC_NONE, {.literal = {&wf_type_null, {0}}}};
    const wf_xml_attr *va = wf_xml_attr_find(b, NULL, "Value");
    if (va != NULL)
        set_attr_value(ld, b, &value_dp, va->value, value_loc(ld, va), &pv);
    for (const wf_xml_node *c = b->first_child; c != NULL; c = c->next) {
        if (is_wf(c, "WorkflowParameterBinding.Value")) {
            const wf_xml_node *v = single_child(ld, c);
            if (v != NULL)
                element_value(ld, &value_dp, v, &pv);
        } else {
            ERR(ld, WF_E_SCHEMA, node_loc(ld, c), "unexpected '%s' in WorkflowParameterBinding",
                c->name);
        }
    }
    pb->has_value = pv.kind != WFL_PV_UNSET;
    pb->is_bind = pv.kind == WFL_PV_BIND;
    pb->bind = pb->is_bind ? pv.u.bind : NULL;
    pb->literal = pv.kind == WFL_PV_LITERAL ? pv.u.literal : wf_null();
}

static void parse_params(loader *ld, const wf_xml_node *pe, wfl_pval *pv)
{
    wfl_param_binding *items = wf_arena_alloc(ld->arena, (pe->child_count + 1) * sizeof *items);
    if (items == NULL) {
        nomem(ld);
        return;
    }
    size_t n = 0;
    for (const wf_xml_node *c = pe->first_child; c != NULL; c = c->next) {
        if (!is_wf(c, "WorkflowParameterBinding")) {
            ERR(ld, WF_E_SCHEMA, node_loc(ld, c), "expected WorkflowParameterBinding, found '%s'",
                c->name);
            continue;
        }
        parse_param_binding(ld, c, &items[n++]);
    }
    pv->kind = WFL_PV_PARAMS;
    pv->loc = node_loc(ld, pe);
    pv->u.params.items = items;
    pv->u.params.count = n;
}

/* One attribute of a record element: a TimeoutDuration is a TimeSpan, {x:Null} null,
 * {x:Type p:T} the type's name T, any other value its text. */
static bool record_field(loader *ld, const wf_xml_node *c, const wf_xml_attr *a, wf_value *out)
{
    if (strcmp(a->name, "TimeoutDuration") == 0) {
        int64_t us = 0;
        if (wf_timespan_parse(a->value, &us) != WF_OK) {
            ERR(ld, WF_E_SYNTAX, value_loc(ld, a), "'%s' is not a TimeSpan", a->value);
            return false;
        }
        *out = wf_timespan_us(us);
        return true;
    }
    const char *arg = NULL;
    ext_kind k = classify(ld, c, a->value, &arg);
    if (k == EXT_NULL) {
        *out = wf_null();
        return true;
    }
    const char *text = a->value;
    if (k == EXT_TYPE && arg != NULL)
        text = strchr(arg, ':') != NULL ? strchr(arg, ':') + 1 : arg;
    return wf_value_cstring(text, out) == WF_OK || (nomem(ld), false);
}

static bool record_of(loader *ld, const wf_xml_node *c, size_t depth, wf_value *out);

/* <Owner.Prop> inside a record element (OperationInfo.Parameters): a list of its elements. */
static bool record_list(loader *ld, const wf_xml_node *pe, size_t depth, wf_value *out)
{
    wf_value *items = wf_calloc(pe->child_count + 1, sizeof *items);
    size_t n = 0;
    bool ok = items != NULL || (nomem(ld), false);
    for (const wf_xml_node *k = pe->first_child; ok && k != NULL; k = k->next)
        ok = record_of(ld, k, depth + 1, &items[n++]);
    if (ok && wf_value_list(&wf_type_list_object, items, n, out) != WF_OK)
        ok = (nomem(ld), false);
    for (size_t i = 0; i < n; i++)
        wf_value_release(&items[i]);
    wf_free(items);
    return ok;
}

/* A data element (CorrelationToken, OperationInfo, ChannelToken...) as a record: its
 * attributes as fields, each property element <Owner.Prop> as a list field Prop. */
static bool record_of(loader *ld, const wf_xml_node *c, size_t depth, wf_value *out)
{
    *out = wf_null();
    if (depth > 8) {
        ERR(ld, WF_E_LIMIT, node_loc(ld, c), "'%s' nests data elements too deep", c->name);
        return false;
    }
    size_t cap = c->attr_count + c->child_count + 1;
    const char **keys = wf_calloc(cap, sizeof *keys);
    wf_value *vals = wf_calloc(cap, sizeof *vals);
    size_t n = 0;
    bool ok = (keys != NULL && vals != NULL) || (nomem(ld), false);
    for (size_t i = 0; ok && i < c->attr_count; i++) {
        if (c->attrs[i].ns != NULL)
            continue;
        keys[n] = c->attrs[i].name;
        ok = record_field(ld, c, &c->attrs[i], &vals[n++]);
    }
    for (const wf_xml_node *k = c->first_child; ok && k != NULL; k = k->next) {
        const char *dot = strchr(k->name, '.');
        if (dot == NULL) {
            ERR(ld, WF_E_SCHEMA, node_loc(ld, k), "unexpected '%s' inside '%s'", k->name,
                c->name);
            ok = false;
            break;
        }
        keys[n] = dot + 1;
        ok = record_list(ld, k, depth, &vals[n++]);
    }
    if (ok && wf_value_record(keys, vals, n, out) != WF_OK)
        ok = (nomem(ld), false);
    for (size_t i = 0; i < n; i++)
        wf_value_release(&vals[i]);
    wf_free(keys);
    wf_free(vals);
    return ok;
}

static void record_value(loader *ld, const wf_xml_node *c, wfl_pval *pv)
{
    wf_value rec = wf_null();
    if (!record_of(ld, c, 0, &rec)) {
        pv->kind = WFL_PV_NULL; /* reported: no "needs a value" after it */
        pv->loc = node_loc(ld, c);
        return;
    }
    wf_value keep = rec;
    keep_heap_literal(ld, &keep);
    wf_value_release(&rec);
    pv->kind = WFL_PV_LITERAL;
    pv->loc = node_loc(ld, c);
    pv->u.literal = keep;
}

static void element_value(loader *ld, const wfl_dp *dp, const wf_xml_node *c, wfl_pval *pv)
{
    wf_loc at = node_loc(ld, c);
    if (is_wf(c, "ActivityBind")) {
        if (!dp_bindable(ld, dp, at))
            return;
        wfl_bind *b = NULL;
        wf_error e = WF_ERROR_INIT;
        if (wfl_bind_make(ld->arena, attr_value(c, "Name"), attr_value(c, "Path"), at, &b, &e) !=
            WF_OK) {
            report_error(ld, &e);
            return;
        }
        pv->kind = WFL_PV_BIND;
        pv->loc = at;
        pv->u.bind = b;
    } else if (c->ns != NULL && strcmp(c->ns, X_NS) == 0 && strcmp(c->name, "Null") == 0) {
        pv->kind = WFL_PV_NULL;
        pv->loc = at;
    } else if (is_system_ns(c->ns) && dp->kind == WFL_DPK_VALUE) {
        const wf_type *t = wf_types_find(ld->def->types, c->name);
        if (t == NULL) {
            ERR(ld, WF_E_TYPE, at, "unknown value type '%s'", c->name);
            return;
        }
        wfl_dp typed = *dp;
        typed.type = dp->type->kind == WF_K_OBJECT ? t : dp->type;
        set_text(ld, c, &typed, c->text, c->text_line != 0 ? text_loc(ld, c) : at, pv);
    } else if (dp->kind == WFL_DPK_VALUE && dp->type->kind == WF_K_RECORD &&
               c->ns != NULL && strcmp(c->ns, WF_NS) == 0) {
        record_value(ld, c, pv);
    } else {
        ERR(ld, WF_E_SCHEMA, at, "'%s' is not a valid value for property '%s'", c->name,
            dp->name);
    }
}

static void property_content(loader *ld, const wf_xml_node *pe, wfl_node *node,
                             const wfl_dp *dp)
{
    wfl_pval *pv = &node->props[dp->index];
    if (dp->kind == WFL_DPK_CONDITION) {
        /* set even when the condition is bad (its error is reported), so "needs a
         * Condition" does not follow */
        parse_condition(ld, pe, &pv->u.cond);
        pv->kind = WFL_PV_CONDITION;
        pv->loc = node_loc(ld, pe);
    } else if (dp->kind == WFL_DPK_PARAMS) {
        parse_params(ld, pe, pv);
    } else if (dp->kind == WFL_DPK_RULESET) {
        const wf_xml_node *c = single_child(ld, pe);
        const char *name = c != NULL ? attr_value(c, "RuleSetName") : NULL;
        if (c != NULL && (!is_wf(c, "RuleSetReference") || name == NULL)) {
            ERR(ld, WF_E_SCHEMA, node_loc(ld, c), "expected <RuleSetReference RuleSetName=...>");
        } else if (c != NULL) {
            pv->kind = WFL_PV_RULESET;
            pv->loc = node_loc(ld, c);
            pv->u.ruleset.name = adup(ld, name);
            if (ld->def->rules != NULL &&
                (pv->u.ruleset.ruleset = wfl_rules_ruleset(ld->def->rules, name)) == NULL)
                ERR(ld, WF_E_NAME, pv->loc, "the rules have no rule set '%s'", name);
            else if (ld->def->rules == NULL && !ld->rules_failed)
                ERR(ld, WF_E_NAME, pv->loc, "rule set '%s' not found: no .rules file is loaded",
                    name);
        }
    } else if (pe->child_count == 0) {
        wf_loc at = pe->text_line != 0 ? text_loc(ld, pe) : node_loc(ld, pe);
        set_attr_value(ld, pe, dp, pe->text, at, pv);
    } else {
        const wf_xml_node *c = single_child(ld, pe);
        if (c != NULL)
            element_value(ld, dp, c, pv);
    }
}

static void child_element(loader *ld, const wf_xml_node *c, wfl_node *node, wfl_node *parent,
                          size_t depth);

/* "Owner.Prop": a DP of the node's type (Owner = the type or a base), or an attached DP. */
/* <Base.Prop> on a root written as its type-library class: Base is the class's last name. */
static bool is_root_class_owner(loader *ld, const char *owner)
{
    const char *cls = wfl_tl_class_name(ld->root_base);
    const char *last = strrchr(cls, '.');
    return strcmp(last != NULL ? last + 1 : cls, owner) == 0;
}

/* A class root's collection that is no property, such as SharePoint's WorkflowFields: the
 * declarations the type library's Class already makes. Kept out of the run, but reported;
 * false (an error follows) when it holds text, which would be a value. */
static bool ignore_class_collection(loader *ld, const wf_xml_node *pe, wf_loc at)
{
    if (pe->first_child == NULL || !wf_xml_text_blank(pe->text))
        return false;
    WARN(ld, at, "ignored property element '%s' (%zu elements): it is not a property of the "
         "type-library class '%s'; declare the root's properties there", pe->name,
         pe->child_count, wfl_tl_class_name(ld->root_base));
    return true;
}

static void property_element(loader *ld, const wf_xml_node *pe, wfl_node *node,
                             wfl_node *parent)
{
    const char *dot = strchr(pe->name, '.');
    size_t olen = (size_t)(dot - pe->name);
    char owner[128];
    wf_loc at = node_loc(ld, pe);
    snprintf(owner, sizeof owner, "%.*s", (int)(olen < 127 ? olen : 127), pe->name);
    if (parent == NULL && strcmp(pe->name, "ReceiveActivity.WorkflowServiceAttributes") == 0) {
        /* the WCF host's configuration, no behaviour here: only the service's name is kept */
        const wf_xml_attr *name =
            pe->first_child ? wf_xml_attr_find(pe->first_child, NULL, "Name") : NULL;
        if (name && *name->value)
            ld->def->service_name = adup(ld, name->value);
        return;
    }
    const wfl_dp *att = wfl_registry_attached(owner, dot + 1);
    if (att != NULL && strcmp(att->name, "WhenCondition") == 0) {
        if (parent == NULL || parent->type->kind != WFL_KIND_CAG) {
            ERR(ld, WF_E_SCHEMA, at, "WhenCondition is only allowed on a child of a "
                "ConditionedActivityGroup");
            return;
        }
        node->has_when = parse_condition(ld, pe, &node->when);
        return;
    }
    if (att != NULL && parent != NULL) {
        ERR(ld, WF_E_SCHEMA, at, "WorkflowChanges.Condition is only allowed on the root");
        return;
    }
    const wfl_dp *dp = wfl_type_find_dp(node->type, dot + 1);
    bool owner_ok = att != NULL;
    if (strcmp(dot + 1, "Activities") == 0 && (node->type->flags & WFL_TF_COMPOSITE)) {
        /* the explicit form of the content property: its children are child activities */
        for (const wf_xml_node *c = pe->first_child; c != NULL && !ld->nomem; c = c->next)
            child_element(ld, c, node, parent, node->depth);
        return;
    }
    for (const wfl_type *t = node->type; t != NULL && !owner_ok; t = t->base)
        owner_ok = t->name != NULL && strcmp(t->name, owner) == 0;
    bool class_root = parent == NULL && ld->root_base != NULL;
    if (!owner_ok && class_root)
        owner_ok = is_root_class_owner(ld, owner);
    if (att != NULL)
        dp = wfl_type_find_dp(node->type, att->name);
    if (dp == NULL && owner_ok && class_root && ignore_class_collection(ld, pe, at))
        return;
    if (dp == NULL || !owner_ok) {
        no_such_property(ld, node->type, pe->name, at);
        return;
    }
    property_content(ld, pe, node, dp);
}

/* ---- activities ------------------------------------------------------------------------- */
static wfl_node *load_activity(loader *ld, const wf_xml_node *x, wfl_node *parent, size_t depth);

static void child_element(loader *ld, const wf_xml_node *c, wfl_node *node, wfl_node *parent,
                          size_t depth)
{
    if (c->ns != NULL && strcmp(c->ns, X_NS) == 0) {
        if (strcmp(c->name, "Code") == 0 && parent == NULL)
            WARN(ld, node_loc(ld, c), "x:Code ignored: C code-beside comes from the type "
                 "library, not inline code");
        else
            ERR(ld, WF_E_SCHEMA, node_loc(ld, c), "unexpected directive 'x:%s'", c->name);
        return;
    }
    bool known_ns = c->ns != NULL && (strcmp(c->ns, WF_NS) == 0 ||
                                      strncasecmp(c->ns, "clr-namespace:", 14) == 0);
    if (strchr(c->name, '.') != NULL && known_ns) {
        property_element(ld, c, node, parent);
        return;
    }
    if (!known_ns && c->ns != NULL && strcmp(c->ns, MODERN_NS) == 0 &&
        strcmp(c->name, "Interop") == 0) {
        ERR(ld, WF_E_UNSUPPORTED, node_loc(ld, c), "Interop cannot be nested inside a legacy "
            "body: it hosts legacy activities in a modern workflow, not the other way round");
        return;
    }
    if (!known_ns) {
        WARN(ld, node_loc(ld, c), "ignored element '%s' (namespace %s)", c->name,
             c->ns ? c->ns : "none");
        return;
    }
    if (!(node->type->flags & WFL_TF_COMPOSITE) && node->type->kind == WFL_KIND_CUSTOM) {
        ERR(ld, WF_E_SCHEMA, node_loc(ld, c), "%s cannot contain child activities ('%s'): a "
            "type-library activity is a leaf, or a composite whose body is its Definition= "
            "XOML%s", node->type->name, c->name, node->parent == NULL ? "; a workflow base "
            "class is declared as a <Class> of its type library" : "");
        return;
    }
    if (!(node->type->flags & WFL_TF_COMPOSITE)) {
        ERR(ld, WF_E_SCHEMA, node_loc(ld, c), "%s cannot contain child activities ('%s')",
            node->type->name, c->name);
        return;
    }
    wfl_node *child = load_activity(ld, c, node, depth + 1);
    if (child != NULL)
        node->children[node->child_count++] = child;
}

/* Child elements, counting those inside an explicit "Owner.Activities" element. */
static size_t child_slots(const wf_xml_node *x)
{
    size_t n = x->child_count;
    for (const wf_xml_node *c = x->first_child; c != NULL; c = c->next) {
        const char *dot = strchr(c->name, '.');
        if (dot != NULL && strcmp(dot + 1, "Activities") == 0)
            n += c->child_count;
    }
    return n;
}

static wfl_node *new_node(loader *ld, const wfl_type *type, const wf_xml_node *x,
                          wfl_node *parent, size_t depth)
{
    wfl_node *node = wf_arena_alloc(ld->arena, sizeof *node);
    wfl_pval *props = wf_arena_alloc(ld->arena, (type->dp_count + 1) * sizeof *props);
    wfl_node **kids = wf_arena_alloc(ld->arena, (child_slots(x) + 1) * sizeof *kids);
    if (node == NULL || props == NULL || kids == NULL) {
        nomem(ld);
        return NULL;
    }
    for (size_t i = 0; i < type->dp_count; i++)
        props[i] = (wfl_pval){.kind = WFL_PV_UNSET, .u.literal = wf_null()};
    node->type = type;
    node->loc = node_loc(ld, x);
    node->parent = parent;
    node->children = kids;
    node->props = props;
    node->depth = depth;
    if (type->flags & WFL_TF_ALT_FLOW)
        node->flags |= WFL_NODE_ALT_FLOW;
    ld->node_count++;
    return node;
}

static void link_handlers(wfl_node *node)
{
    for (size_t i = 0; i < node->child_count; i++) {
        wfl_node *c = node->children[i];
        if (c->type->kind == WFL_KIND_FAULT_HANDLERS)
            node->fault_handlers = c;
        else if (c->type->kind == WFL_KIND_CANCELLATION_HANDLER)
            node->cancellation_handler = c;
        else if (c->type->kind == WFL_KIND_COMPENSATION_HANDLER)
            node->compensation_handler = c;
    }
    const wfl_pval *en = &node->props[WFL_DPI_ENABLED];
    if (en->kind == WFL_PV_LITERAL && !en->u.literal.u.b)
        node->flags |= WFL_NODE_DISABLED;
}

static void root_class(loader *ld, const wf_xml_node *x, const wfl_type **type);

/* Real projects root their markup in their own workflow base class (SharePoint's
 * RootWorkflowActivityWithData, a CRM's SplendidSequentialWorkflow, a book's
 * MarkupOnlyBaseWorkflow): an element of a type-library namespace naming a <Class> there (not
 * an ActivityType). It is read as the built-in root it derives from (the class's BaseType;
 * without one a state machine when it has InitialStateName, else sequential) with that class
 * as code-beside, unless x:Class names a class a type library declares. */
static const wfl_type *root_base_type(loader *ld, const wf_xml_node *x)
{
    wfl_typelib *tl = x->ns != NULL ? typelib_of_ns(ld, x->ns) : NULL;
    if (tl == NULL || wfl_typelib_activity(tl, x->name) != NULL)
        return NULL;
    const wfl_tl_class *cls = wfl_typelib_class(tl, x->name);
    const char *colon = strchr(x->ns, ':');
    size_t ns_len = colon != NULL ? strcspn(colon + 1, ";") : 0;
    if (cls == NULL && ns_len > 0 && ns_len + strlen(x->name) < 512) {
        char full[512];
        snprintf(full, sizeof full, "%.*s.%s", (int)ns_len, colon + 1, x->name);
        cls = wfl_typelib_class(tl, full);
    }
    if (cls == NULL)
        return NULL;
    bool states = wf_xml_attr_find(x, NULL, "InitialStateName") != NULL;
    const char *base = wfl_tl_class_base_type(cls);
    if (base == NULL)
        base = states ? "StateMachineWorkflowActivity" : "SequentialWorkflowActivity";
    ld->root_base = cls;
    ld->root_base_typelib = tl;
    WARN(ld, node_loc(ld, x), "root '%s' is the type-library class '%s': read as %s with that "
         "class as code-beside", x->name, wfl_tl_class_name(cls), base);
    return wfl_registry_find(base);
}

static wfl_node *load_activity(loader *ld, const wf_xml_node *x, wfl_node *parent, size_t depth)
{
    const wfl_type *type = parent == NULL ? root_base_type(ld, x) : NULL;
    if (type == NULL)
        type = element_type(ld, x);
    if (type == NULL)
        return NULL;
    if (parent == NULL)
        root_class(ld, x, &type);
    wfl_node *node = new_node(ld, type, x, parent, depth);
    if (node == NULL)
        return NULL;
    attributes(ld, x, node, parent == NULL);
    if (!wf_xml_text_blank(x->text))
        WARN(ld, text_loc(ld, x), "ignored text inside %s", type->name);
    for (const wf_xml_node *c = x->first_child; c != NULL && !ld->nomem; c = c->next)
        child_element(ld, c, node, parent, depth);
    link_handlers(node);
    return node;
}

/* x:Class: find the class in the loaded type libraries and derive the root type from it. */
/* Designer-made XOML with code-beside declares no clr-namespace for its own assembly: the
 * x:Class lives in the project's assembly, conventionally named after its namespace. When no
 * declared type library holds the class, try "A.B.activities.xml", then "A" for x:Class
 * "A.B.Workflow1" on the library path; a name that is not there is no error. */
static void load_class_typelibs(loader *ld, const char *class_name, wf_loc at)
{
    if (ld->opts->libpath == NULL)
        return;
    for (size_t len = strlen(class_name); len > 0; len--) {
        if (class_name[len] != '.' || find_entry(ld, class_name, len) != NULL ||
            is_system_assembly(class_name, len))
            continue;
        char name[256];
        if (len >= sizeof name)
            continue;
        memcpy(name, class_name, len);
        name[len] = '\0';
        if (strpbrk(name, "/\\") != NULL || strstr(name, "..") != NULL || name[0] == '.' ||
            name[len - 1] == '.')
            continue; /* not a plain assembly name: never a library the markup could mean */
        wfl_typelib *tl = NULL;
        wf_error e = WF_ERROR_INIT;
        wf_status rc = (ld->opts->no_native ? wfl_typelib_load_decl : wfl_typelib_load)(
            ld->opts->libpath, ld->def->types, name, &tl,
                                        ld->diags, &e);
        if (rc == WF_E_NOTFOUND)
            continue;
        if (rc != WF_OK) {
            ERR(ld, rc, at, "type library '%s' failed to load: %s", name, e.message);
            return;
        }
        char *asm_name = adup(ld, name);
        wfl_tl_use *grown = wf_realloc(ld->def->typelibs,
                                       (ld->def->typelib_count + 1) * sizeof *grown);
        if (grown != NULL)
            ld->def->typelibs = grown;
        if (asm_name == NULL || grown == NULL) {
            wfl_typelib_destroy(tl);
            nomem(ld);
            return;
        }
        ld->def->typelibs[ld->def->typelib_count++] = (wfl_tl_use){asm_name, tl};
        if (wfl_typelib_class(tl, class_name) != NULL)
            return;
    }
}

static void use_code_beside(loader *ld, const wfl_typelib *tl, const wfl_tl_class *cls,
                            wf_loc at, const wfl_type **type)
{
    ld->def->code_beside = cls;
    ld->def->class_typelib = tl;
    wf_error e = WF_ERROR_INIT;
    const wfl_type *t = NULL;
    if (wfl_type_create_code_beside(ld->arena, *type, tl, cls, &t, &e) != WF_OK) {
        e.line = at.line;
        e.col = at.col;
        report_error(ld, &e);
        return;
    }
    *type = t;
}

/* The x:Class in the loaded type libraries, by full or last dotted name; *usable counts the
 * libraries that loaded. */
static const wfl_tl_class *find_class(loader *ld, const char *name, const wfl_typelib **tl_out,
                                      size_t *usable)
{
    const char *dot = strrchr(name, '.');
    *usable = 0;
    for (size_t i = 0; i < ld->def->typelib_count; i++) {
        const wfl_typelib *tl = ld->def->typelibs[i].typelib;
        if (tl == NULL)
            continue;
        (*usable)++;
        const wfl_tl_class *cls = wfl_typelib_class(tl, name);
        if (cls == NULL && dot != NULL)
            cls = wfl_typelib_class(tl, dot + 1);
        if (cls != NULL) {
            *tl_out = tl;
            return cls;
        }
    }
    return NULL;
}

static void root_class(loader *ld, const wf_xml_node *x, const wfl_type **type)
{
    const wf_xml_attr *a = wf_xml_attr_find(x, X_NS, "Class");
    if (a == NULL) {
        if (ld->root_base != NULL)
            use_code_beside(ld, ld->root_base_typelib, ld->root_base, node_loc(ld, x), type);
        return;
    }
    wf_loc at = value_loc(ld, a);
    ld->def->class_name = adup(ld, a->value);
    const char *dot = strrchr(a->value, '.');
    const wfl_typelib *found_tl = NULL;
    size_t usable = 0;
    const wfl_tl_class *found = find_class(ld, a->value, &found_tl, &usable);
    if (found == NULL) {
        load_class_typelibs(ld, a->value, at);
        found = find_class(ld, a->value, &found_tl, &usable);
    }
    if (found == NULL && ld->root_base != NULL) {
        /* x:Class derives from the custom root class and adds nothing a library describes */
        use_code_beside(ld, ld->root_base_typelib, ld->root_base, at, type);
        return;
    }
    if (found == NULL) {
        if (usable > 0)
            ERR(ld, WF_E_NAME, at, "no type library declares the class '%s'", a->value);
        else if (ld->def->typelib_count == 0 && dot != NULL && dot > a->value)
            WARN(ld, at, "x:Class '%s' has no type library (declare its assembly with a "
                 "clr-namespace, or put %.*s.activities.xml on the library path): the workflow "
                 "has no code-beside", a->value, (int)(dot - a->value), a->value);
        else if (ld->def->typelib_count == 0)
            WARN(ld, at, "x:Class '%s' has no type library: the workflow has no code-beside",
                 a->value);
        return;
    }
    use_code_beside(ld, found_tl, found, at, type);
}

/* ---- whole-tree checks --------------------------------------------------------------------- */
static void number_nodes(loader *ld, wfl_node *node, size_t *next)
{
    node->index = (*next)++;
    assert(node->index < ld->node_count); /* counted as the elements were read */
    assert(!node->parent || node->parent->index < node->index); /* pre-order */
    ld->def->nodes[node->index] = node;
    for (size_t i = 0; i < node->child_count; i++)
        number_nodes(ld, node->children[i], next);
}

/* Activities without x:Name get "<typeName><n>" as WF3's designer would have written. */
static void name_unnamed(loader *ld)
{
    for (size_t i = 0; i < ld->def->node_count && !ld->nomem; i++) {
        wfl_node *n = ld->def->nodes[i];
        if (n->name != NULL)
            continue;
        char buf[160];
        const char *tn = n->type->name;
        snprintf(buf, sizeof buf, "%c%s%zu", (char)tolower((unsigned char)tn[0]), tn + 1, i);
        set_name(ld, n, buf, n->loc);
        if (i > 0)
            WARN(ld, n->loc, "%s has no x:Name; it is called '%s'", tn, n->name);
    }
}

static void check_duplicate_names(loader *ld)
{
    wf_strmap *seen = wf_strmap_create(NULL);
    if (seen == NULL) {
        nomem(ld);
        return;
    }
    ld->def->by_name = seen;
    for (size_t i = 0; i < ld->def->node_count; i++) {
        wfl_node *n = ld->def->nodes[i];
        const wfl_node *first = wf_strmap_get(seen, n->name);
        if (first != NULL)
            ERR(ld, WF_E_SCHEMA, n->loc, "duplicate activity name '%s' (first used at line %u)",
                n->name, first->loc.line);
        else if (wf_strmap_put(seen, n->name, n) != WF_OK)
            nomem(ld);
    }
}

/* System.Type.IsAssignableFrom as WF3's bind validator uses it: the same type, Object, or an
 * exception's base; no numeric widening, no conversion to String. */
static bool clr_assignable(const wf_type *to, const wf_type *from)
{
    if (to == from || to->kind == WF_K_OBJECT)
        return true;
    if (to->kind == WF_K_EXCEPTION && from->kind == WF_K_EXCEPTION)
        return wf_type_is_a(from, to);
    /* List(Object) stands for IList (Replicator.InitialChildData): any list is one */
    if (to->kind == WF_K_LIST && from->kind == WF_K_LIST)
        return to->elem == &wf_type_object || strcmp(to->name, from->name) == 0;
    return false;
}

/* A bound value DP reads the member it names (WF3 validates a DP bind with Read access):
 * the member's type must be assignable to the DP's (docs/wf3-behaviour.md). */
static void check_bind_type(loader *ld, const wfl_dp *bound, const wfl_bind *b,
                            const wfl_dp *member)
{
    if (bound == NULL || bound->kind != WFL_DPK_VALUE || bound->type == NULL ||
        member->kind != WFL_DPK_VALUE || member->type == NULL || b->seg_count != 1)
        return;
    if (!clr_assignable(bound->type, member->type))
        ERR(ld, WF_E_TYPE, b->loc, "ActivityBind: property '%s' is of type %s, which cannot be "
            "assigned to '%s' of type %s", member->name, member->type->name, bound->name,
            bound->type->name);
}

/* A bind's target must exist; its first member must be a property (or, for an event, a
 * handler) of the target when the target's members are known; a value DP bound to a
 * property needs a matching type. */
static void check_bind(loader *ld, const wfl_node *from, const wfl_bind *b, bool is_event,
                       const wfl_dp *bound)
{
    const wfl_node *target = wfl_def_resolve_name(ld->def, from, b->name);
    if (target == NULL) {
        ERR(ld, WF_E_NAME, b->loc, "ActivityBind: no activity named '%s'", b->name);
        return;
    }
    if (b->seg_count == 0 || b->segs[0].kind != WFL_SEG_MEMBER)
        return;
    const char *member = b->segs[0].name;
    const wfl_dp *dp = wfl_type_find_dp(target->type, member);
    if (dp != NULL) {
        check_bind_type(ld, bound, b, dp);
        return;
    }
    const wfl_tl_class *cls = target->type->code_beside;
    if (is_event && cls != NULL && (wfl_tl_class_handler(cls, member) != NULL ||
                                    wfl_tl_class_condition(cls, member) != NULL))
        return;
    if (is_event && target->type->kind == WFL_KIND_CUSTOM) {
        /* SplendidCRM-style ExecuteCode="{ActivityBind Accounts1,Path=LoadByAUDIT_ID}" */
        ERR(ld, WF_E_UNSUPPORTED, b->loc, "ActivityBind to '%s.%s': a method of the "
            "type-library activity %s cannot be called (a type library describes only its "
            "Execute function)", target->name, member, target->type->name);
        return;
    }
    ERR(ld, WF_E_NAME, b->loc, "ActivityBind: activity '%s' (%s) has no %s '%s'", target->name,
        target->type->name, is_event ? "handler or property" : "property", member);
}

static void check_node_binds(loader *ld, const wfl_node *n)
{
    for (size_t i = 0; i < n->type->dp_count; i++) {
        const wfl_pval *pv = &n->props[i];
        if (pv->kind == WFL_PV_BIND)
            check_bind(ld, n, pv->u.bind, n->type->dps[i]->kind == WFL_DPK_EVENT,
                       n->type->dps[i]);
        else if (pv->kind == WFL_PV_CONDITION && pv->u.cond.bind != NULL)
            check_bind(ld, n, pv->u.cond.bind, true, NULL);
        else if (pv->kind == WFL_PV_PARAMS) {
            for (size_t k = 0; k < pv->u.params.count; k++) {
                if (pv->u.params.items[k].is_bind)
                    check_bind(ld, n, pv->u.params.items[k].bind, false, NULL);
            }
        }
    }
    if (n->has_when && n->when.bind != NULL)
        check_bind(ld, n, n->when.bind, true, NULL);
}

/* ---- structural rules (docs/semantics.md §3) ------------------------------------------------ */
static size_t body_count(const wfl_node *n)
{
    size_t c = 0;
    for (size_t i = 0; i < n->child_count; i++)
        c += !(n->children[i]->flags & WFL_NODE_ALT_FLOW);
    return c;
}

static bool children_all(loader *ld, const wfl_node *n, wfl_kind kind, size_t min)
{
    bool ok = true;
    for (size_t i = 0; i < n->child_count; i++) {
        const wfl_node *c = n->children[i];
        if (!(c->flags & WFL_NODE_ALT_FLOW) && c->type->kind != kind) {
            ERR(ld, WF_E_SCHEMA, c->loc, "%s '%s' may only contain %sActivity children, not %s",
                n->type->name, n->name, wfl_kind_name(kind), c->type->name);
            ok = false;
        }
    }
    if (body_count(n) < min)
        ERR(ld, WF_E_SCHEMA, n->loc, "%s '%s' needs at least %zu %sActivity children (has %zu)",
            n->type->name, n->name, min, wfl_kind_name(kind), body_count(n));
    return ok;
}

static const wfl_pval *pval_named(const wfl_node *n, const char *dp_name)
{
    const wfl_dp *dp = wfl_type_find_dp(n->type, dp_name);
    return dp != NULL ? &n->props[dp->index] : NULL;
}

static const char *literal_str(const wfl_node *n, const char *dp_name)
{
    const wfl_pval *pv = pval_named(n, dp_name);
    return pv != NULL && pv->kind == WFL_PV_LITERAL ? wf_value_str(&pv->u.literal) : NULL;
}

static bool is_leaf_state(const wfl_node *n)
{
    if (n->type->kind != WFL_KIND_STATE)
        return false;
    for (size_t i = 0; i < n->child_count; i++) {
        if (n->children[i]->type->kind == WFL_KIND_STATE)
            return false;
    }
    return true;
}

static bool contains_event(const wfl_node *n)
{
    for (size_t i = 0; i < n->child_count; i++) {
        if ((n->children[i]->type->flags & WFL_TF_EVENT) || contains_event(n->children[i]))
            return true;
    }
    return false;
}

static bool has_ancestor(const wfl_node *n, wfl_kind kind)
{
    for (const wfl_node *a = n->parent; a != NULL; a = a->parent) {
        if (a->type->kind == kind)
            return true;
    }
    return false;
}

static void check_state_children(loader *ld, const wfl_node *n)
{
    size_t inits = 0, finals = 0;
    for (size_t i = 0; i < n->child_count; i++) {
        const wfl_node *c = n->children[i];
        wfl_kind k = c->type->kind;
        inits += k == WFL_KIND_STATE_INITIALIZATION;
        finals += k == WFL_KIND_STATE_FINALIZATION;
        if (k != WFL_KIND_STATE && k != WFL_KIND_EVENT_DRIVEN &&
            k != WFL_KIND_STATE_INITIALIZATION && k != WFL_KIND_STATE_FINALIZATION &&
            !(c->flags & WFL_NODE_ALT_FLOW))
            ERR(ld, WF_E_SCHEMA, c->loc, "state '%s' cannot contain %s", n->name, c->type->name);
        if ((k == WFL_KIND_STATE_INITIALIZATION || k == WFL_KIND_STATE_FINALIZATION) &&
            !is_leaf_state(n) && n->type->kind == WFL_KIND_STATE)
            ERR(ld, WF_E_SCHEMA, c->loc, "%s is only allowed in a leaf state ('%s' has "
                "sub-states)", c->type->name, n->name);
    }
    if (inits > 1 || finals > 1)
        ERR(ld, WF_E_SCHEMA, n->loc, "state '%s' has more than one %s", n->name,
            inits > 1 ? "StateInitializationActivity" : "StateFinalizationActivity");
}

static void check_state_ref(loader *ld, const wfl_node *n, const char *dp_name, bool required)
{
    const wfl_pval *pv = pval_named(n, dp_name);
    const char *target = literal_str(n, dp_name);
    if (target == NULL || target[0] == '\0') {
        if (required)
            ERR(ld, WF_E_SCHEMA, n->loc, "%s '%s' needs %s", n->type->name, n->name, dp_name);
        return;
    }
    const wfl_node *s = wfl_def_find_node(ld->def, target);
    if (s == NULL)
        ERR(ld, WF_E_NAME, pv->loc, "%s: no state named '%s'", dp_name, target);
    else if (!is_leaf_state(s))
        ERR(ld, WF_E_SCHEMA, pv->loc, "%s '%s' must name a leaf StateActivity", dp_name, target);
}

static void check_state_machine(loader *ld, const wfl_node *n)
{
    check_state_children(ld, n);
    check_state_ref(ld, n, "InitialStateName", true);
    check_state_ref(ld, n, "CompletedStateName", false);
    const char *init = literal_str(n, "InitialStateName");
    const char *done = literal_str(n, "CompletedStateName");
    if (init != NULL && done != NULL && strcmp(init, done) == 0)
        ERR(ld, WF_E_SCHEMA, n->loc, "InitialStateName and CompletedStateName are both '%s'",
            init);
    const wfl_node *ds = done != NULL ? wfl_def_find_node(ld->def, done) : NULL;
    if (ds != NULL && ds->child_count > 0)
        ERR(ld, WF_E_SCHEMA, ds->loc, "the completed state '%s' must be empty", done);
}

static const wf_type *handler_fault_type(const wfl_node *h)
{
    const wfl_pval *pv = pval_named(h, "FaultType");
    return pv != NULL && pv->kind == WFL_PV_TYPE ? pv->u.type.exc : NULL;
}

static void check_fault_handlers(loader *ld, const wfl_node *n)
{
    children_all(ld, n, WFL_KIND_FAULT_HANDLER, 0);
    for (size_t j = 0; j < n->child_count; j++) {
        const wfl_node *hj = n->children[j];
        const wf_type *tj = handler_fault_type(hj);
        if (hj->type->kind != WFL_KIND_FAULT_HANDLER)
            continue;
        if (tj == NULL && pval_named(hj, "FaultType")->kind != WFL_PV_TYPE)
            ERR(ld, WF_E_SCHEMA, hj->loc, "FaultHandlerActivity '%s' needs a FaultType",
                hj->name);
        for (size_t i = 0; i < j && tj != NULL; i++) {
            const wf_type *ti = handler_fault_type(n->children[i]);
            if (ti != NULL && wf_type_is_a(tj, ti)) {
                ERR(ld, WF_E_SCHEMA, hj->loc, "FaultHandlerActivity '%s' (%s) is never reached: "
                    "'%s' before it handles %s", hj->name, tj->name, n->children[i]->name,
                    ti->name);
                break;
            }
        }
    }
}

/* The activity whose handler holds a Compensate: the parent of the nearest enclosing
 * CompensationHandler, FaultHandlers or CancellationHandler. Its name and its enabled direct
 * compensatable children are the only valid targets (docs/wf3-behaviour.md). */
static const wfl_node *compensate_scope(const wfl_node *n)
{
    for (const wfl_node *p = n->parent; p != NULL; p = p->parent) {
        wfl_kind k = p->type->kind;
        if (k == WFL_KIND_COMPENSATION_HANDLER || k == WFL_KIND_FAULT_HANDLERS ||
            k == WFL_KIND_CANCELLATION_HANDLER)
            return p->parent;
    }
    return NULL;
}

static bool in_disabled_subtree(const wfl_node *n)
{
    for (; n != NULL; n = n->parent)
        if (n->flags & WFL_NODE_DISABLED)
            return true;
    return false;
}

static void check_compensate(loader *ld, const wfl_node *n)
{
    if (!has_ancestor(n, WFL_KIND_COMPENSATION_HANDLER) &&
        !has_ancestor(n, WFL_KIND_FAULT_HANDLER) &&
        !has_ancestor(n, WFL_KIND_CANCELLATION_HANDLER))
        ERR(ld, WF_E_SCHEMA, n->loc, "CompensateActivity '%s' is only allowed inside a "
            "compensation, fault or cancellation handler", n->name);
    const char *target = literal_str(n, "TargetActivityName");
    if ((target == NULL || *target == '\0') && !in_disabled_subtree(n))
        ERR(ld, WF_E_SCHEMA, n->loc, "CompensateActivity '%s': property 'TargetActivityName' "
            "is not set", n->name);
    if (target == NULL || *target == '\0')
        return;
    const wfl_node *t = wfl_def_find_node(ld->def, target);
    const wfl_pval *pv = pval_named(n, "TargetActivityName");
    const wfl_node *scope = compensate_scope(n);
    if (t == NULL)
        ERR(ld, WF_E_NAME, pv->loc, "TargetActivityName: no activity named '%s'", target);
    else if (scope == NULL || t == scope || in_disabled_subtree(n))
        return; /* the enclosing activity itself; WF3 validates only enabled activities */
    else if (!(t->type->flags & WFL_TF_COMPENSATABLE))
        ERR(ld, WF_E_SCHEMA, pv->loc, "TargetActivityName '%s' is not compensatable (%s)",
            target, t->type->name);
    else if (t->parent != scope || (t->flags & (WFL_NODE_ALT_FLOW | WFL_NODE_DISABLED)))
        ERR(ld, WF_E_SCHEMA, pv->loc, "TargetActivityName '%s' is not a valid target of "
            "CompensateActivity '%s': name '%s' or one of its direct compensatable children",
            target, n->name, scope->name);
}

static void require(loader *ld, const wfl_node *n, const char *dp_name)
{
    const wfl_pval *pv = pval_named(n, dp_name);
    if (pv != NULL && pv->kind == WFL_PV_UNSET)
        ERR(ld, WF_E_SCHEMA, n->loc, "%s '%s' needs %s", n->type->name, n->name, dp_name);
}

/* "Approver, Score": the parameter names of an event or method, for messages. */
static const char *param_names(const wfl_tl_event *ev, const wfl_tl_func *fn, char *buf,
                               size_t size)
{
    size_t count = ev != NULL ? wfl_tl_event_param_count(ev) : wfl_tl_func_param_count(fn);
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++) {
        const wfl_tl_prop *p = ev != NULL ? wfl_tl_event_param(ev, i) : wfl_tl_func_param(fn, i);
        int k = snprintf(buf + used, size - used, "%s%s", used > 0 ? ", " : "", p->name);
        if (k < 0)
            break;
        used += (size_t)k;
    }
    if (fn != NULL && wfl_tl_func_return(fn) != NULL && used < size)
        snprintf(buf + used, size - used, "%s(ReturnValue)", used > 0 ? ", " : "");
    return buf[0] != '\0' ? buf : "none";
}

static bool has_param(const wfl_tl_event *ev, const wfl_tl_func *fn, const char *name)
{
    if (fn != NULL && strcmp(name, "(ReturnValue)") == 0)
        return wfl_tl_func_return(fn) != NULL;
    size_t count = ev != NULL ? wfl_tl_event_param_count(ev) : wfl_tl_func_param_count(fn);
    for (size_t i = 0; i < count; i++) {
        const wfl_tl_prop *p = ev != NULL ? wfl_tl_event_param(ev, i) : wfl_tl_func_param(fn, i);
        if (strcmp(p->name, name) == 0)
            return true;
    }
    return false;
}

/* The value property a one-member bind names, when the loader knows it; else NULL. */
static const wfl_dp *bound_dp(loader *ld, const wfl_node *from, const wfl_bind *b)
{
    if (b->seg_count != 1 || b->segs[0].kind != WFL_SEG_MEMBER)
        return NULL;
    const wfl_node *t = wfl_def_resolve_name(ld->def, from, b->name);
    const wfl_dp *dp = t != NULL ? wfl_type_find_dp(t->type, b->segs[0].name) : NULL;
    return dp != NULL && dp->kind == WFL_DPK_VALUE && dp->type != NULL ? dp : NULL;
}

/* The type of parameter `name` and the access WF3 validates its bind with: a method's In
 * parameter and an event's sender and e are read from the member, Out and the return value
 * written to it, InOut both (CorrelationValidator.ValidateParameterBinding). NULL: unknown. */
static const wf_type *param_type(const wfl_tl_event *ev, const wfl_tl_func *fn, const char *name,
                                 bool *read, bool *write)
{
    *read = true;
    *write = false;
    if (ev != NULL) {
        size_t n = wfl_tl_event_param_count(ev);
        if (strcmp(name, "sender") == 0)
            return &wf_type_object;
        if (strcmp(name, "e") == 0)
            return n == 1 && strcmp(wfl_tl_event_param(ev, 0)->name, "e") == 0
                       ? wfl_tl_event_param(ev, 0)->type : &wf_type_record;
        for (size_t i = 0; i < n; i++)
            if (strcmp(wfl_tl_event_param(ev, i)->name, name) == 0) {
                *read = false; /* the extension writes the parameter into the member */
                *write = true;
                return wfl_tl_event_param(ev, i)->type;
            }
        return NULL;
    }
    const wfl_tl_prop *p = strcmp(name, "(ReturnValue)") == 0 ? wfl_tl_func_return(fn) : NULL;
    for (size_t i = 0; p == NULL && i < wfl_tl_func_param_count(fn); i++)
        if (strcmp(wfl_tl_func_param(fn, i)->name, name) == 0)
            p = wfl_tl_func_param(fn, i);
    if (p == NULL)
        return NULL;
    *read = p->dir == WFL_TL_IN || p->dir == WFL_TL_INOUT;
    *write = p->dir != WFL_TL_IN;
    return p->type;
}

/* A bound parameter and its member must have matching types, as for a DP bind. */
static void check_param_type(loader *ld, const wfl_node *n, const wfl_param_binding *b,
                             const wfl_tl_event *ev, const wfl_tl_func *fn)
{
    bool read, write;
    const wf_type *pt = b->is_bind ? param_type(ev, fn, b->param, &read, &write) : NULL;
    const wfl_dp *dp = pt != NULL ? bound_dp(ld, n, b->bind) : NULL;
    if (dp == NULL)
        return;
    if ((read && !clr_assignable(pt, dp->type)) || (write && !clr_assignable(dp->type, pt)))
        ERR(ld, WF_E_TYPE, b->bind->loc, "ParameterBinding '%s' (%s) cannot be bound to '%s' of "
            "type %s", b->param, pt->name, dp->name, dp->type->name);
}

/* Each WorkflowParameterBinding names a parameter of the method, or for an event one of its
 * delegate's two parameters, sender and e (WF3 rejects any other name), and is bound to a
 * member of a matching type. */
static void check_param_bindings(loader *ld, const wfl_node *n, const wfl_tl_event *ev,
                                 const wfl_tl_func *fn, const char *member)
{
    const wfl_pval *pv = pval_named(n, "ParameterBindings");
    if (pv == NULL || pv->kind != WFL_PV_PARAMS)
        return;
    char names[256];
    for (size_t i = 0; i < pv->u.params.count; i++) {
        const wfl_param_binding *b = &pv->u.params.items[i];
        if (b->param == NULL)
            continue;
        check_param_type(ld, n, b, ev, fn);
        /* an event's delegate has two parameters, sender and e; WF3 refuses any other name */
        if (ev != NULL && (strcmp(b->param, "e") == 0 || strcmp(b->param, "sender") == 0))
            continue;
        if (ev != NULL && has_param(ev, fn, b->param))
            WARN(ld, b->loc, "ParameterName '%s' binds a parameter of event '%s' by its own name: "
                 "a wfbridge extension that WF3 refuses (WF3 binds 'e', the event arguments, "
                 "and 'sender'; read the field as e.%s)", b->param, member, b->param);
        else if (ev != NULL)
            ERR(ld, WF_E_NAME, b->loc, "event '%s' has no parameter '%s': bind 'e' (the event "
                "arguments: %s) or 'sender'", member, b->param,
                param_names(ev, fn, names, sizeof names));
        else if (has_param(ev, fn, b->param))
            continue;
        else
            ERR(ld, WF_E_NAME, b->loc, "%s '%s' has no parameter '%s' (it has: %s)",
                ev != NULL ? "event" : "method", member, b->param,
                param_names(ev, fn, names, sizeof names));
    }
}

static void check_service_member(loader *ld, const wfl_node *n, const char *dp_name, bool event)
{
    const wfl_pval *it = pval_named(n, "InterfaceType");
    const wfl_pval *pv = pval_named(n, dp_name);
    const char *name = literal_str(n, dp_name);
    require(ld, n, "InterfaceType");
    require(ld, n, dp_name);
    if (it->kind != WFL_PV_TYPE || it->u.type.service == NULL || name == NULL)
        return;
    const wfl_tl_service *s = it->u.type.service;
    const wfl_tl_event *ev = event ? wfl_tl_service_event(s, name) : NULL;
    const wfl_tl_func *fn = event ? NULL : wfl_tl_service_method(s, name);
    if (ev == NULL && fn == NULL)
        ERR(ld, WF_E_NAME, pv->loc, "service '%s' has no %s '%s'", wfl_tl_service_name(s),
            event ? "event" : "method", name);
    else
        check_param_bindings(ld, n, ev, fn, name);
}

static void check_alt_flow_parent(loader *ld, const wfl_node *n)
{
    const wfl_node *p = n->parent;
    if (p == NULL)
        return;
    if (n->type->kind == WFL_KIND_COMPENSATION_HANDLER && !(p->type->flags & WFL_TF_COMPENSATABLE))
        ERR(ld, WF_E_SCHEMA, n->loc, "CompensationHandlerActivity is only allowed in a "
            "compensatable activity, not in %s '%s'", p->type->name, p->name);
    for (size_t i = 0; i < p->child_count && p->children[i] != n; i++) {
        if (p->children[i]->type->kind == n->type->kind) {
            ERR(ld, WF_E_SCHEMA, n->loc, "%s '%s' has more than one %s", p->type->name, p->name,
                n->type->name);
            break;
        }
    }
}

static void check_event_driven(loader *ld, const wfl_node *n)
{
    wfl_kind pk = n->parent != NULL ? n->parent->type->kind : WFL_KIND_COUNT;
    if (pk != WFL_KIND_LISTEN && pk != WFL_KIND_STATE && pk != WFL_KIND_STATE_MACHINE_WORKFLOW)
        ERR(ld, WF_E_SCHEMA, n->loc, "EventDrivenActivity '%s' must be inside a Listen or a "
            "State", n->name);
    const wfl_node *first = n->child_count > 0 ? n->children[0] : NULL;
    if (first != NULL && first->type->kind == WFL_KIND_CUSTOM)
        ERR(ld, WF_E_UNSUPPORTED, first->loc, "the first child of EventDrivenActivity '%s' is "
            "the type-library activity '%s': custom event activities (HandleExternalEvent "
            "subclasses such as wca.exe generates) are not supported; use "
            "HandleExternalEventActivity with ParameterBindings", n->name, first->type->name);
    else if (first == NULL || !(first->type->flags & WFL_TF_EVENT))
        ERR(ld, WF_E_SCHEMA, first != NULL ? first->loc : n->loc, "the first child of "
            "EventDrivenActivity '%s' must be an event activity (Delay, HandleExternalEvent "
            "or Receive)", n->name);
}

static void check_in_parent(loader *ld, const wfl_node *n, wfl_kind parent_kind)
{
    if (n->parent == NULL || n->parent->type->kind != parent_kind)
        ERR(ld, WF_E_SCHEMA, n->loc, "%s '%s' must have a %sActivity as its parent",
            n->type->name, n->name, wfl_kind_name(parent_kind));
}

static void check_one_child(loader *ld, const wfl_node *n)
{
    if (body_count(n) != 1)
        ERR(ld, WF_E_SCHEMA, n->loc, "%s '%s' must have exactly one child activity (has %zu)",
            n->type->name, n->name, body_count(n));
    if (n->type->kind == WFL_KIND_WHILE)
        require(ld, n, "Condition");
}

static void check_state(loader *ld, const wfl_node *n)
{
    check_state_children(ld, n);
    if (n->parent != NULL && n->parent->type->kind != WFL_KIND_STATE &&
        n->parent->type->kind != WFL_KIND_STATE_MACHINE_WORKFLOW)
        ERR(ld, WF_E_SCHEMA, n->loc, "StateActivity '%s' must be inside a state machine",
            n->name);
}

static void check_no_events(loader *ld, const wfl_node *n)
{
    if (contains_event(n))
        ERR(ld, WF_E_SCHEMA, n->loc, "%s '%s' cannot contain event activities", n->type->name,
            n->name);
}

static void check_transaction_scope(loader *ld, const wfl_node *n)
{
    if (has_ancestor(n, WFL_KIND_TRANSACTION_SCOPE))
        ERR(ld, WF_E_SCHEMA, n->loc, "TransactionScopeActivity '%s' cannot be nested in "
            "another transaction scope", n->name);
}

/* IfElseBranchActivity's validator: every branch needs a Condition except the last enabled
 * branch of two or more (the "else"); a lone branch needs one too (docs/wf3-behaviour.md). */
static void check_ifelse_branch(loader *ld, const wfl_node *n)
{
    check_in_parent(ld, n, WFL_KIND_IFELSE);
    const wfl_node *p = n->parent;
    if ((n->flags & WFL_NODE_DISABLED) || pval_named(n, "Condition")->kind != WFL_PV_UNSET ||
        p == NULL || p->type->kind != WFL_KIND_IFELSE)
        return;
    size_t enabled = 0;
    const wfl_node *last = NULL;
    for (size_t i = 0; i < p->child_count; i++) {
        const wfl_node *c = p->children[i];
        if (!(c->flags & (WFL_NODE_ALT_FLOW | WFL_NODE_DISABLED))) {
            enabled++;
            last = c;
        }
    }
    if (enabled < 2 || last != n)
        ERR(ld, WF_E_SCHEMA, n->loc, "IfElseBranchActivity '%s': property 'Condition' is not "
            "set (only the last of two or more branches may leave it out)", n->name);
}

static void check_throw(loader *ld, const wfl_node *n)
{
    if (pval_named(n, "FaultType")->kind == WFL_PV_UNSET &&
        pval_named(n, "Fault")->kind == WFL_PV_UNSET)
        ERR(ld, WF_E_SCHEMA, n->loc, "ThrowActivity '%s' needs FaultType or Fault", n->name);
}

static void check_set_state(loader *ld, const wfl_node *n)
{
    if (!has_ancestor(n, WFL_KIND_STATE) && !has_ancestor(n, WFL_KIND_STATE_MACHINE_WORKFLOW))
        ERR(ld, WF_E_SCHEMA, n->loc, "SetStateActivity '%s' must be inside a state machine",
            n->name);
    check_state_ref(ld, n, "TargetStateName", true);
}

static void check_fault_handlers_node(loader *ld, const wfl_node *n)
{
    check_fault_handlers(ld, n);
    check_alt_flow_parent(ld, n);
}

/* WF3's per-type validators, one line per kind. */
static void check_structure(loader *ld, const wfl_node *n)
{
    switch (n->type->kind) {
    case WFL_KIND_IFELSE: children_all(ld, n, WFL_KIND_IFELSE_BRANCH, 1); break;
    case WFL_KIND_IFELSE_BRANCH: check_ifelse_branch(ld, n); break;
    case WFL_KIND_WHILE: check_one_child(ld, n); break;
    case WFL_KIND_REPLICATOR: check_one_child(ld, n); break;
    case WFL_KIND_PARALLEL: children_all(ld, n, WFL_KIND_SEQUENCE, 2); break;
    case WFL_KIND_LISTEN: children_all(ld, n, WFL_KIND_EVENT_DRIVEN, 2); break;
    case WFL_KIND_EVENT_DRIVEN: check_event_driven(ld, n); break;
    case WFL_KIND_STATE: check_state(ld, n); break;
    case WFL_KIND_STATE_MACHINE_WORKFLOW: check_state_machine(ld, n); break;
    case WFL_KIND_STATE_INITIALIZATION: check_no_events(ld, n); break;
    case WFL_KIND_STATE_FINALIZATION: check_no_events(ld, n); break;
    case WFL_KIND_SET_STATE: check_set_state(ld, n); break;
    case WFL_KIND_FAULT_HANDLERS: check_fault_handlers_node(ld, n); break;
    case WFL_KIND_CANCELLATION_HANDLER: check_alt_flow_parent(ld, n); break;
    case WFL_KIND_COMPENSATION_HANDLER: check_alt_flow_parent(ld, n); break;
    case WFL_KIND_FAULT_HANDLER: check_in_parent(ld, n, WFL_KIND_FAULT_HANDLERS); break;
    case WFL_KIND_COMPENSATE: check_compensate(ld, n); break;
    case WFL_KIND_TRANSACTION_SCOPE: check_transaction_scope(ld, n); break;
    case WFL_KIND_THROW: check_throw(ld, n); break;
    case WFL_KIND_POLICY: require(ld, n, "RuleSetReference"); break;
    case WFL_KIND_INVOKE_WORKFLOW: require(ld, n, "TargetWorkflow"); break;
    case WFL_KIND_HANDLE_EXTERNAL_EVENT: check_service_member(ld, n, "EventName", true); break;
    case WFL_KIND_CALL_EXTERNAL_METHOD: check_service_member(ld, n, "MethodName", false); break;
    case WFL_KIND_RECEIVE: require(ld, n, "ServiceOperationInfo"); break;
    case WFL_KIND_SEND: require(ld, n, "ServiceOperationInfo"); break;
    case WFL_KIND_INVOKE_WEB_SERVICE: require(ld, n, "ProxyClass"); break;
    default: break;
    }
}

/* The code-beside function an event or CodeCondition bind names: markup-only workflows
 * write ExecuteCode="{ActivityBind Root,Path=OnStep}" for the root class's method. NULL
 * when the bind names anything else (checked and reported by check_bind). */
static const wfl_tl_func *bound_method(loader *ld, const wfl_node *from, const wfl_bind *b,
                                       bool condition)
{
    if (b->seg_count != 1 || b->segs[0].kind != WFL_SEG_MEMBER)
        return NULL;
    const wfl_node *target = wfl_def_resolve_name(ld->def, from, b->name);
    const wfl_tl_class *cls = target != NULL ? target->type->code_beside : NULL;
    if (cls == NULL || wfl_type_find_dp(target->type, b->segs[0].name) != NULL)
        return NULL;
    return condition ? wfl_tl_class_condition(cls, b->segs[0].name)
                     : wfl_tl_class_handler(cls, b->segs[0].name);
}

/* Such a bind is fixed at load: it becomes the plain handler or condition it denotes. */
static void resolve_method_binds(loader *ld, wfl_node *n)
{
    for (size_t i = 0; i < n->type->dp_count; i++) {
        wfl_pval *pv = &n->props[i];
        const wfl_tl_func *fn = NULL;
        if (pv->kind == WFL_PV_BIND && n->type->dps[i]->kind == WFL_DPK_EVENT &&
            (fn = bound_method(ld, n, pv->u.bind, false)) != NULL) {
            const char *name = pv->u.bind->segs[0].name;
            pv->kind = WFL_PV_HANDLER;
            pv->u.handler.name = name;
            pv->u.handler.fn = fn;
        } else if (pv->kind == WFL_PV_CONDITION && pv->u.cond.bind != NULL &&
                   (fn = bound_method(ld, n, pv->u.cond.bind, true)) != NULL) {
            pv->u.cond.name = pv->u.cond.bind->segs[0].name;
            pv->u.cond.fn = fn;
            pv->u.cond.bind = NULL;
        }
    }
    if (n->has_when && n->when.bind != NULL) {
        const wfl_tl_func *fn = bound_method(ld, n, n->when.bind, true);
        if (fn != NULL) {
            n->when.name = n->when.bind->segs[0].name;
            n->when.fn = fn;
            n->when.bind = NULL;
        }
    }
}

/* Rule expressions against the root: this.GetActivityByName("N") is read as 'this'
 * (wfl_rules_parse.c), so N must be the root workflow itself, the only activity rules can
 * reach (blanks around N, as in hand-formatted files, are ignored); and every this.Member
 * must be a property of the root, checked here rather than when the rule first runs. */
/* this.Member in a rule: a property of the root ('this' is the root, docs/semantics.md §2;
 * WF3's rule validation rejects anything else when the workflow is compiled). */
static void check_root_member(loader *ld, const wfl_rexpr *e)
{
    const wfl_node *root = ld->def->root;
    if (wfl_type_find_dp(root->type, e->name) != NULL)
        return;
    if (wfl_def_find_node(ld->def, e->name) != NULL)
        ERR(ld, WF_E_UNSUPPORTED, e->loc, "the rules use this.%s, the activity '%s': rules "
            "can read and write only the workflow's own properties, not another activity's",
            e->name, e->name);
    else if (ld->def->code_beside != NULL)
        ERR(ld, WF_E_NAME, e->loc, "the rules use this.%s, but the workflow '%s' (class '%s') "
            "has no property '%s'", e->name, root->name != NULL ? root->name : "",
            wfl_tl_class_name(ld->def->code_beside), e->name);
    else if (!ld->no_class_said)
        ERR(ld, WF_E_NAME, e->loc, "the rules use this.%s, but the workflow '%s' (%s, no "
            "code-beside class) has no property '%s'", e->name,
            root->name != NULL ? root->name : "", root->type->name, e->name);
    ld->no_class_said = ld->no_class_said || ld->def->code_beside == NULL;
}

/* s with newlines, tabs and carriage returns written as \n, \t, \r (one-line messages). */
static const char *escaped(const char *s, char *buf, size_t size)
{
    size_t o = 0;
    for (; *s && o + 3 < size; s++) {
        const char *esc = *s == '\n' ? "\\n" : *s == '\t' ? "\\t" : *s == '\r' ? "\\r" : NULL;
        if (esc) {
            buf[o++] = esc[0];
            buf[o++] = esc[1];
        } else {
            buf[o++] = *s;
        }
    }
    buf[o] = '\0';
    return buf;
}

/* The static type of a rule expression where the loader can tell (literals, the root's
 * properties, casts, arithmetic on those); NULL when unknown. */
static const wf_type *rule_type(loader *ld, const wfl_rexpr *e)
{
    switch (e->kind) {
    case WFL_REX_PRIMITIVE:
        return wf_is_null(&e->value) ? NULL : e->value.type;
    case WFL_REX_CAST:
        return e->type;
    case WFL_REX_MEMBER: {
        if (e->kid_count == 0 || e->kids[0] == NULL || e->kids[0]->kind != WFL_REX_THIS)
            return NULL;
        const wfl_dp *dp = wfl_type_find_dp(ld->def->root->type, e->name);
        return dp != NULL && dp->kind == WFL_DPK_VALUE ? dp->type : NULL;
    }
    case WFL_REX_BINARY: {
        if (e->op > WFL_ROP_MODULUS || e->kid_count != 2)
            return NULL;
        const wf_type *l = rule_type(ld, e->kids[0]), *r = rule_type(ld, e->kids[1]);
        if (l == NULL || r == NULL || !wf_type_is_numeric(l) || !wf_type_is_numeric(r))
            return NULL;
        if (l->kind == WF_K_DOUBLE || r->kind == WF_K_DOUBLE)
            return &wf_type_double;
        if (l->kind == WF_K_DECIMAL || r->kind == WF_K_DECIMAL)
            return &wf_type_decimal;
        return l->kind == WF_K_INT64 || r->kind == WF_K_INT64 ? &wf_type_int64 : &wf_type_int32;
    }
    default:
        return NULL;
    }
}

/* WF3's rule validator has no comparison or arithmetic between Decimal and Double (C# has
 * no implicit conversion either way) and no ordering of Booleans: such a rule is refused. */
static void check_operand_types(loader *ld, const wfl_rexpr *e)
{
    if (e->kind != WFL_REX_BINARY || e->kid_count != 2)
        return;
    bool arith = e->op <= WFL_ROP_MODULUS;
    bool order = e->op >= WFL_ROP_LESS_THAN && e->op <= WFL_ROP_GREATER_THAN_OR_EQUAL;
    if (!arith && !order && e->op != WFL_ROP_VALUE_EQUALITY)
        return;
    const wf_type *l = rule_type(ld, e->kids[0]), *r = rule_type(ld, e->kids[1]);
    if (l == NULL || r == NULL)
        return;
    bool mixed = (l->kind == WF_K_DECIMAL && r->kind == WF_K_DOUBLE) ||
                 (l->kind == WF_K_DOUBLE && r->kind == WF_K_DECIMAL);
    bool bools = order && l->kind == WF_K_BOOL && r->kind == WF_K_BOOL;
    const char *what = arith ? "arithmetic" : order ? "relational" : "equality";
    if (mixed || bools)
        ERR(ld, WF_E_TYPE, e->loc,
            "%s operator '%s' cannot be used on operands of types %s "
            "and %s",
            what, wfl_rop_name(e->op), l->name, r->name);
}

static void check_self_lookups(loader *ld, const wfl_rexpr *e)
{
    if (e == NULL)
        return;
    check_operand_types(ld, e);
    if (e->kind == WFL_REX_THIS && e->name != NULL) {
        /* WF3 compares the name verbatim, blanks included (Activity.GetActivityByName) */
        const char *n = e->name, *root = ld->def->root->name;
        char shown[160];
        if (root != NULL && strcmp(n, root) == 0)
            ;
        else if (wfl_def_find_node(ld->def, n) != NULL)
            ERR(ld, WF_E_UNSUPPORTED, e->loc, "GetActivityByName(\"%s\") in a rule: only the "
                "root workflow '%s' itself can be looked up", n, root != NULL ? root : "");
        else
            WARN(ld, e->loc, "GetActivityByName(\"%s\") names no activity (WF3 compares the "
                 "name verbatim, blanks included): it returns null and the rule faults when it "
                 "runs", escaped(n, shown, sizeof shown));
    }
    if (e->kind == WFL_REX_MEMBER && e->kid_count > 0 && e->kids[0] != NULL &&
        e->kids[0]->kind == WFL_REX_THIS && e->name != NULL)
        check_root_member(ld, e);
    for (size_t i = 0; i < e->kid_count; i++)
        check_self_lookups(ld, e->kids[i]);
}

static void check_rules_lookups(loader *ld)
{
    const wfl_rules *r = ld->def->rules;
    if (r == NULL)
        return;
    wfl__rules_set_root(ld->def->rules, ld->def->root->name);
    for (size_t i = 0; i < r->cond_count; i++)
        check_self_lookups(ld, r->conds[i].expr);
    for (size_t i = 0; i < wfl_rules_ruleset_count(r); i++) {
        const wfl_ruleset *rs = wfl_rules_ruleset_at(r, i);
        for (size_t k = 0; k < rs->rule_count; k++) {
            const wfl_rule *rule = &rs->rules[k];
            check_self_lookups(ld, rule->cond);
            for (size_t b = 0; b < 2; b++) {
                for (size_t a = 0; a < rule->action_count[b]; a++) {
                    check_self_lookups(ld, rule->actions[b][a].target);
                    check_self_lookups(ld, rule->actions[b][a].value);
                }
            }
        }
    }
}

static void check_tree(loader *ld)
{
    name_unnamed(ld);
    check_duplicate_names(ld);
    check_rules_lookups(ld);
    for (size_t i = 0; i < ld->def->node_count && !ld->nomem; i++) {
        resolve_method_binds(ld, ld->def->nodes[i]);
        check_node_binds(ld, ld->def->nodes[i]);
        check_structure(ld, ld->def->nodes[i]);
    }
}

static void collect_params(loader *ld)
{
    const wfl_type *t = ld->def->root->type;
    if (t->code_beside == NULL)
        return;
    wfl_param_info *ps = wf_arena_alloc(ld->arena, (t->dp_count + 1) * sizeof *ps);
    if (ps == NULL) {
        nomem(ld);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < t->dp_count; i++) {
        const wfl_dp *dp = t->dps[i];
        if (dp->owner == t && dp->kind == WFL_DPK_VALUE && !(dp->flags & WFL_DP_METADATA))
            ps[n++] = (wfl_param_info){dp->name, dp->type, WFL_PARAM_INOUT, dp->index};
    }
    ld->def->params = ps;
    ld->def->param_count = n;
}

/* ---- driver ------------------------------------------------------------------------------- */

static void load_rules(loader *ld, const char *rules_path)
{
    if (rules_path == NULL)
        return;
    wf_error e = WF_ERROR_INIT;
    wfl_rules *rules = NULL;
    wf_status rc = wfl_rules_load(rules_path, ld->def->types, &rules, ld->diags, &e);
    if (rc != WF_OK) {
        ld->rules_failed = true;
        if (e.code == WF_E_NOMEM)
            ld->nomem = true;
        if (rc == WF_E_IO || wf_diags_error_count(ld->diags) == 0)
            report_error(ld, &e);
        return;
    }
    ld->def->rules = rules;
    ld->def->rules_path = adup(ld, rules_path);
}

static void build(loader *ld, const char *rules_path)
{
    const wf_xml_node *xr = wf_xml_root(ld->doc);
    load_declared_typelibs(ld, xr);
    /* A missing type library is the root cause of every error about the types, handlers,
     * properties and rules that depend on it: report it once and stop here. */
    if (ld->nomem || ld->lib_missing)
        return;
    /* the rules engine's exceptions are types a FaultType may name, rules or not */
    wfl_rules_excs excs;
    wf_error e = WF_ERROR_INIT;
    if (wfl__rules_excs(ld->def->types, &excs, &e) != WF_OK) {
        report_error(ld, &e);
        return;
    }
    load_rules(ld, rules_path);
    if (ld->nomem)
        return;
    wfl_node *root = load_activity(ld, xr, NULL, 0);
    if (root == NULL || ld->nomem)
        return;
    ld->def->root = root;
    bool named_as_type = root->name != NULL && strcmp(root->name, root->type->name) == 0;
    if ((root->name == NULL || named_as_type) && ld->def->class_name != NULL) {
        const char *dot = strrchr(ld->def->class_name, '.');
        set_name(ld, root, dot != NULL ? dot + 1 : ld->def->class_name, root->loc);
    }
    ld->def->nodes = wf_arena_alloc(ld->arena, (ld->node_count + 1) * sizeof *ld->def->nodes);
    if (ld->def->nodes == NULL) {
        nomem(ld);
        return;
    }
    size_t next = 0;
    number_nodes(ld, root, &next);
    ld->def->node_count = next;
    check_tree(ld);
    collect_params(ld);
}

void wfl_definition_destroy(wfl_definition *def)
{
    if (def == NULL)
        return;
    for (size_t i = 0; i < def->composite_count; i++)
        wfl_definition_destroy(def->composites[i]);
    wf_free(def->composites);
    for (size_t i = 0; i < def->heap_literal_count; i++)
        wf_value_release(&def->heap_literals[i]);
    wf_free(def->heap_literals);
    for (size_t i = 0; i < def->typelib_count; i++)
        wfl_typelib_destroy(def->typelibs[i].typelib);
    wf_free(def->typelibs);
    wfl_rules_destroy(def->rules);
    wf_strmap_destroy(def->by_name);
    wf_arena_destroy(def->arena);
    wf_free(def);
}

static wf_status finish(loader *ld, wfl_definition **out, wf_error *err)
{
    wf_status rc = WF_OK;
    if (ld->nomem) {
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory loading the definition");
    } else if (wf_diags_error_count(ld->diags) > 0 || ld->def->root == NULL) {
        rc = wf_diags_first_error(ld->diags, err);
        if (rc == WF_OK)
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory reporting errors");
    }
    if (rc != WF_OK) {
        wfl_definition_destroy(ld->def);
        ld->def = NULL;
    }
    *out = ld->def;
    return rc;
}

static wf_status load_doc(const wfl_load_opts *opts, wf_xml_doc *doc, const char *rules_path,
                          wfl_definition **out, wf_error *err)
{
    loader ld = {.opts = opts, .doc = doc, .diags = opts->diags};
    wf_diags *own = NULL;
    if (ld.diags == NULL && (ld.diags = own = wf_diags_create()) == NULL)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    ld.def = wf_calloc(1, sizeof *ld.def);
    ld.arena = ld.def != NULL ? wf_arena_create(0) : NULL;
    if (ld.arena == NULL) {
        wf_free(ld.def);
        wf_diags_destroy(own);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    ld.def->arena = ld.arena;
    ld.def->types = opts->types;
    ld.def->path = adup(&ld, wf_xml_path(doc));
    build(&ld, rules_path);
    wf_free(ld.customs);
    wf_status rc = finish(&ld, out, err);
    wf_diags_destroy(own);
    return rc;
}

/* FILE.xoml -> FILE.rules when that file exists (docs/semantics.md §2 pairing by name). */
static char *auto_rules_path(const char *path)
{
    size_t len = strlen(path);
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    size_t stem = dot != NULL && (slash == NULL || dot > slash) ? (size_t)(dot - path) : len;
    char *r = wf_malloc(stem + 7);
    if (r == NULL)
        return NULL;
    memcpy(r, path, stem);
    memcpy(r + stem, ".rules", 7);
    if (access(r, R_OK) != 0) {
        wf_free(r);
        return NULL;
    }
    return r;
}

static wf_status check_opts(const wfl_load_opts *opts, wfl_definition **out, wf_error *err)
{
    *out = NULL;
    if (opts == NULL || opts->types == NULL)
        return wf_error_set(err, WF_E_USAGE, NULL, "load options need a wf_types table");
    return WF_OK;
}

static wf_status report_xml_error(const wfl_load_opts *opts, wf_error *e, wf_error *err)
{
    if (opts->diags != NULL)
        wf_diags_add_error(opts->diags, WF_SEV_ERROR, e);
    if (err != NULL)
        *err = *e;
    return e->code;
}

/* Parse (wf_xml handles UTF-16 and the designer's encoding labels), then build. */
static wf_status load_parsed(const wfl_load_opts *opts, wf_status parsed, wf_xml_doc *doc,
                             wf_error *e, const char *rules_path, wfl_definition **out,
                             wf_error *err)
{
    if (parsed != WF_OK)
        return report_xml_error(opts, e, err);
    wf_status rc = load_doc(opts, doc, rules_path, out, err);
    wf_xml_doc_destroy(doc);
    return rc;
}

wf_status wfl_definition_load_file(const wfl_load_opts *opts, const char *path,
                                   wfl_definition **out, wf_error *err)
{
    wf_status rc = check_opts(opts, out, err);
    if (rc != WF_OK)
        return rc;
    wf_xml_doc *doc = NULL;
    wf_error e = WF_ERROR_INIT;
    wf_status parsed = wf_xml_load_file(path, NULL, &doc, &e);
    char *auto_rules = NULL;
    if (opts->rules_path == NULL && !opts->no_auto_rules)
        auto_rules = auto_rules_path(path);
    rc = load_parsed(opts, parsed, doc, &e,
                     opts->rules_path != NULL ? opts->rules_path : auto_rules, out, err);
    wf_free(auto_rules);
    return rc;
}

wf_status wfl_definition_load_mem(const wfl_load_opts *opts, const char *name, const char *data,
                                  size_t len, wfl_definition **out, wf_error *err)
{
    wf_status rc = check_opts(opts, out, err);
    if (rc != WF_OK)
        return rc;
    wf_xml_doc *doc = NULL;
    wf_error e = WF_ERROR_INIT;
    wf_status parsed = wf_xml_load_mem(name, data, len, NULL, &doc, &e);
    return load_parsed(opts, parsed, doc, &e, opts->rules_path, out, err);
}

/* ---- accessors ----------------------------------------------------------------------------- */
const char *wfl_definition_path(const wfl_definition *def)
{
    return def->path;
}

const char *wfl_definition_root_name(const wfl_definition *def)
{
    return def->root->name;
}

const char *wfl_definition_class_name(const wfl_definition *def)
{
    return def->class_name;
}

const char *wfl_definition_service_name(const wfl_definition *def)
{
    return def->service_name;
}

size_t wfl_definition_activity_count(const wfl_definition *def)
{
    return def->node_count;
}

bool wfl_definition_activity(const wfl_definition *def, size_t index, wfl_activity_info *out)
{
    if (index >= def->node_count)
        return false;
    const wfl_node *n = def->nodes[index];
    assert(n->index == index); /* dense: nodes[index] is the node numbered index */
    out->name = n->name;
    out->type = n->type->name;
    out->loc = n->loc;
    out->transaction_scope = n->type->kind == WFL_KIND_TRANSACTION_SCOPE;
    return true;
}

size_t wfl_definition_warning_count(const wfl_definition *def)
{
    return def->warning_count;
}

size_t wfl_definition_param_count(const wfl_definition *def)
{
    return def->param_count;
}

bool wfl_definition_param(const wfl_definition *def, size_t index, wfl_param_info *out)
{
    if (index >= def->param_count)
        return false;
    *out = def->params[index];
    return true;
}

bool wfl_definition_find_param(const wfl_definition *def, const char *name, wfl_param_info *out)
{
    for (size_t i = 0; i < def->param_count; i++) {
        if (strcmp(def->params[i].name, name) == 0) {
            *out = def->params[i];
            return true;
        }
    }
    return false;
}

/* The literal string of DP `dp_name` on node, "" when it is not a literal. */
static const char *node_literal(const wfl_node *node, const char *dp_name)
{
    const wfl_dp *dp = wfl_type_find_dp(node->type, dp_name);
    const wfl_pval *pv = dp ? wfl_node_pval(node, dp) : NULL;
    return pv && pv->kind == WFL_PV_LITERAL && pv->u.literal.type->kind == WF_K_STRING
               ? wf_value_str(&pv->u.literal)
               : "";
}

/* A ReceiveActivity waits on "Contract.Operation"; `name` is that or the operation alone. */
static bool receive_matches(const wfl_node *n, const char *name)
{
    const wfl_dp *dp = wfl_type_find_dp(n->type, "ServiceOperationInfo");
    const wfl_pval *pv = dp ? wfl_node_pval(n, dp) : NULL;
    if (!pv || pv->kind != WFL_PV_LITERAL || pv->u.literal.type->kind != WF_K_RECORD)
        return false;
    const wf_value *op = wf_value_record_get(&pv->u.literal, "Name");
    const wf_value *c = wf_value_record_get(&pv->u.literal, "ContractName");
    if (!c || c->type->kind != WF_K_STRING)
        c = wf_value_record_get(&pv->u.literal, "ContractType");
    if (!op || op->type->kind != WF_K_STRING)
        return false;
    const char *contract = c && c->type->kind == WF_K_STRING ? wf_value_str(c) : "";
    const char *dot = strrchr(contract, '.');
    contract = dot ? dot + 1 : contract;
    size_t clen = strlen(contract);
    if (strcmp(name, wf_value_str(op)) == 0)
        return true;
    return strncmp(name, contract, clen) == 0 && name[clen] == '.' &&
           strcmp(name + clen + 1, wf_value_str(op)) == 0;
}

bool wfl_definition_find_event(const wfl_definition *def, const char *name,
                               const wfl_tl_event **ev)
{
    for (size_t i = 0; i < def->node_count; i++) {
        const wfl_node *n = def->nodes[i];
        if (n->type->kind == WFL_KIND_RECEIVE && receive_matches(n, name)) {
            *ev = NULL; /* the message binds by parameter name */
            return true;
        }
        if (n->type->kind != WFL_KIND_HANDLE_EXTERNAL_EVENT)
            continue;
        const wfl_dp *dp = wfl_type_find_dp(n->type, "InterfaceType");
        const wfl_pval *pv = dp ? wfl_node_pval(n, dp) : NULL;
        const wfl_tl_service *s = pv && pv->kind == WFL_PV_TYPE ? pv->u.type.service : NULL;
        const char *iface = s ? wfl_tl_service_name(s)
                            : pv && pv->kind == WFL_PV_TYPE ? pv->u.type.name
                                                            : "";
        const char *event = node_literal(n, "EventName");
        size_t ilen = strlen(iface);
        bool full = strncmp(name, iface, ilen) == 0 && name[ilen] == '.' &&
                    strcmp(name + ilen + 1, event) == 0;
        if (full || strcmp(name, event) == 0) {
            *ev = s ? wfl_tl_service_event(s, event) : NULL;
            return true;
        }
    }
    for (size_t i = 0; i < def->composite_count; i++) /* composite bodies wait too */
        if (wfl_definition_find_event(def->composites[i], name, ev))
            return true;
    return false;
}

/* ---- the tree, read-only (converter) -------------------------------------------------------- */
const wfl_node *wfl_definition_root(const wfl_definition *def)
{
    return def->root;
}

size_t wfl_definition_typelib_count(const wfl_definition *def)
{
    return def->typelib_count;
}

const wfl_typelib *wfl_definition_typelib_at(const wfl_definition *def, size_t index)
{
    return index < def->typelib_count ? def->typelibs[index].typelib : NULL;
}

const char *wfl_definition_rules_path(const wfl_definition *def)
{
    return def->rules_path;
}

const wfl_type *wfl_node_type(const wfl_node *node)
{
    return node->type;
}

const char *wfl_node_name(const wfl_node *node)
{
    return node->name;
}

wf_loc wfl_node_loc(const wfl_node *node)
{
    return node->loc;
}

const wfl_node *wfl_node_parent(const wfl_node *node)
{
    return node->parent;
}

size_t wfl_node_child_count(const wfl_node *node)
{
    return node->child_count;
}

const wfl_node *wfl_node_child(const wfl_node *node, size_t index)
{
    return index < node->child_count ? node->children[index] : NULL;
}

bool wfl_node_is_disabled(const wfl_node *node)
{
    return (node->flags & WFL_NODE_DISABLED) != 0;
}

const wfl_node *wfl_node_resolve(const wfl_definition *def, const wfl_node *from,
                                 const char *name)
{
    return wfl_def_resolve_name(def, from, name);
}

static void cond_info(const wfl_cond *c, wfl_prop_info *out)
{
    out->kind = c->kind == WFL_COND_CODE ? WFL_PROP_CODE_CONDITION : WFL_PROP_RULE_CONDITION;
    out->name = c->name;
    out->fn = c->fn;
    out->rule = c->rule;
    out->bind = c->bind;
}

void wfl_node_prop(const wfl_node *node, const wfl_dp *dp, wfl_prop_info *out)
{
    static const wfl_prop_kind kinds[] = {
        [WFL_PV_UNSET] = WFL_PROP_UNSET,     [WFL_PV_LITERAL] = WFL_PROP_LITERAL,
        [WFL_PV_NULL] = WFL_PROP_NULL,       [WFL_PV_BIND] = WFL_PROP_BIND,
        [WFL_PV_TYPE] = WFL_PROP_TYPE,       [WFL_PV_CONDITION] = WFL_PROP_CODE_CONDITION,
        [WFL_PV_HANDLER] = WFL_PROP_HANDLER, [WFL_PV_RULESET] = WFL_PROP_RULESET,
        [WFL_PV_PARAMS] = WFL_PROP_PARAMS,
    };
    const wfl_pval *pv = wfl_node_pval(node, dp);
    *out = (wfl_prop_info){.kind = kinds[pv->kind], .loc = pv->loc};
    switch (pv->kind) {
    case WFL_PV_LITERAL: out->literal = &pv->u.literal; break;
    case WFL_PV_BIND: out->bind = pv->u.bind; break;
    case WFL_PV_TYPE:
        out->name = pv->u.type.name;
        out->exc_type = pv->u.type.exc;
        out->service = pv->u.type.service;
        break;
    case WFL_PV_CONDITION: cond_info(&pv->u.cond, out); break;
    case WFL_PV_HANDLER:
        out->name = pv->u.handler.name;
        out->fn = pv->u.handler.fn;
        break;
    case WFL_PV_RULESET: out->name = pv->u.ruleset.name; break;
    case WFL_PV_PARAMS: out->param_count = pv->u.params.count; break;
    default: break;
    }
}

bool wfl_node_when(const wfl_node *node, wfl_prop_info *out)
{
    if (!node->has_when)
        return false;
    *out = (wfl_prop_info){.loc = node->when.loc};
    cond_info(&node->when, out);
    return true;
}

bool wfl_node_param_binding(const wfl_node *node, const wfl_dp *dp, size_t index,
                            wfl_param_binding_info *out)
{
    const wfl_pval *pv = wfl_node_pval(node, dp);
    if (pv->kind != WFL_PV_PARAMS || index >= pv->u.params.count)
        return false;
    const wfl_param_binding *b = &pv->u.params.items[index];
    *out = (wfl_param_binding_info){.param = b->param, .has_value = b->has_value,
                                    .bind = b->is_bind ? b->bind : NULL,
                                    .literal = b->is_bind ? NULL : &b->literal,
                                    .loc = b->loc};
    return true;
}

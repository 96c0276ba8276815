/* wfc_scaffold.c — scans a .xoml for the native code it references and writes what is
 * missing as a type library and a C skeleton (wfc_scaffold.h). Types come from the legacy
 * registry where a built-in DP says it; everything else is String and marked as guessed. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../common/wf_xml.h"
#include "../legacy/wfl_bind.h"
#include "../legacy/wfl_registry.h"
#include "../legacy/wfl_typelib.h"
#include "wfc_output.h"
#include "wfc_scaffold.h"

#define NS_WF     "http://schemas.microsoft.com/winfx/2006/xaml/workflow"
#define NS_X      "http://schemas.microsoft.com/winfx/2006/xaml"
#define MAX_ITEMS 256

typedef enum item_kind { IT_PROP, IT_HANDLER, IT_CONDITION, IT_ACTIVITY, IT_ACT_PROP } item_kind;

typedef struct item {
    item_kind kind;
    char name[128];
    char owner[128];  /* IT_ACT_PROP: the activity type */
    const char *type; /* "String", "Int32", ... */
    bool guessed;
} item;

typedef struct scan {
    const wf_libpath *libpath;
    wf_types *types;
    char class_name[256];
    char root_name[128];
    char assembly[128];       /* the scaffold's library NAME */
    wfl_typelib *provided[8]; /* type libraries found for the file's assemblies */
    size_t provided_count;
    item items[MAX_ITEMS];
    size_t count;
} scan;

static item *find_item(scan *s, item_kind kind, const char *owner, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->items[i].kind == kind && strcmp(s->items[i].name, name) == 0 &&
            strcmp(s->items[i].owner, owner ? owner : "") == 0)
            return &s->items[i];
    return NULL;
}

static void add_item(scan *s, item_kind kind, const char *owner, const char *name, const char *type)
{
    item *it = find_item(s, kind, owner, name);
    if (it) { /* a known type beats a guess */
        if (it->guessed && type) {
            it->type = type;
            it->guessed = false;
        }
        return;
    }
    if (s->count == MAX_ITEMS)
        return;
    it = &s->items[s->count++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    snprintf(it->name, sizeof it->name, "%s", name);
    snprintf(it->owner, sizeof it->owner, "%s", owner ? owner : "");
    it->type = type ? type : "String";
    it->guessed = !type;
}

/* Whether a provided type library already declares the symbol. */
static bool provided(const scan *s, const item *it)
{
    for (size_t i = 0; i < s->provided_count; i++) {
        const wfl_typelib *tl = s->provided[i];
        const wfl_tl_class *cls = wfl_typelib_class(tl, s->class_name);
        switch (it->kind) {
        case IT_PROP:
            if (cls && wfl_tl_class_find_prop(cls, it->name))
                return true;
            break;
        case IT_HANDLER:
            if (cls && wfl_tl_class_handler(cls, it->name))
                return true;
            break;
        case IT_CONDITION:
            if (cls && wfl_tl_class_condition(cls, it->name))
                return true;
            break;
        case IT_ACTIVITY:
        case IT_ACT_PROP:
            if (wfl_typelib_activity(tl, it->kind == IT_ACTIVITY ? it->name : it->owner))
                return true;
            break;
        }
    }
    return false;
}

/* "clr-namespace:NS;Assembly=NAME[, Version=...]" -> NAME, or false. */
static bool assembly_of(const char *uri, char *out, size_t size)
{
    const char *a = uri ? strstr(uri, ";Assembly=") : NULL;
    if (!a || strncmp(uri, "clr-namespace:", 14) != 0)
        return false;
    a += 10;
    size_t n = strcspn(a, ", ");
    if (n == 0 || (n == 8 && strncmp(a, "mscorlib", 8) == 0) ||
        (n >= 6 && strncmp(a, "System", 6) == 0))
        return false;
    snprintf(out, size, "%.*s", (int)n, a);
    return true;
}

static void load_provided(scan *s, const char *assembly)
{
    if (!s->libpath || s->provided_count == 8)
        return;
    wfl_typelib *tl = NULL;
    if (wfl_typelib_load(s->libpath, s->types, assembly, &tl, NULL, NULL) == WF_OK)
        s->provided[s->provided_count++] = tl;
}

/* The root's property bound by `text` ({ActivityBind Root,Path=P...}), with `type`. */
static void bind_text(scan *s, const char *text, const char *type)
{
    if (!wfl_bind_is_markup(text))
        return;
    wf_arena *arena = wf_arena_create(0);
    wfl_bind *b = NULL;
    if (arena && wfl_bind_parse_markup(arena, text, WF_LOC_NONE, &b, NULL) == WF_OK &&
        strcmp(b->name, s->root_name) == 0 && b->seg_count > 0)
        add_item(s, IT_PROP, NULL, b->segs[0].name, b->seg_count == 1 ? type : NULL);
    wf_arena_destroy(arena);
}

static const char *dp_type_name(const wfl_dp *dp)
{
    return dp && dp->kind == WFL_DPK_VALUE && dp->type ? dp->type->name : NULL;
}

static void scan_builtin(scan *s, const wf_xml_node *x, const wfl_type *t)
{
    for (size_t i = 0; i < x->attr_count; i++) {
        const wf_xml_attr *a = &x->attrs[i];
        if (a->ns)
            continue;
        const wfl_dp *dp = wfl_type_find_dp(t, a->name);
        if (dp && dp->kind == WFL_DPK_EVENT && !wfl_bind_is_markup(a->value))
            add_item(s, IT_HANDLER, NULL, a->value, NULL);
        else
            bind_text(s, a->value, dp_type_name(dp));
    }
}

static void scan_custom(scan *s, const wf_xml_node *x)
{
    add_item(s, IT_ACTIVITY, NULL, x->name, NULL);
    for (size_t i = 0; i < x->attr_count; i++) {
        const wf_xml_attr *a = &x->attrs[i];
        if (a->ns)
            continue;
        add_item(s, IT_ACT_PROP, x->name, a->name, NULL);
        bind_text(s, a->value, NULL);
    }
}

static void scan_node(scan *s, const wf_xml_node *x)
{
    char assembly[128];
    if (x->ns && strcmp(x->ns, NS_WF) == 0) {
        const wfl_type *t = strchr(x->name, '.') ? NULL : wfl_registry_find(x->name);
        if (t)
            scan_builtin(s, x, t);
        if (strcmp(x->name, "CodeCondition") == 0) {
            const wf_xml_attr *c = wf_xml_attr_find(x, NULL, "Condition");
            if (c && !wfl_bind_is_markup(c->value))
                add_item(s, IT_CONDITION, NULL, c->value, NULL);
        }
        if (strcmp(x->name, "ActivityBind") == 0) {
            const wf_xml_attr *n = wf_xml_attr_find(x, NULL, "Name");
            const wf_xml_attr *p = wf_xml_attr_find(x, NULL, "Path");
            if (n && p && strcmp(n->value, s->root_name) == 0) {
                char first[128];
                snprintf(first, sizeof first, "%.*s", (int)strcspn(p->value, ".["), p->value);
                add_item(s, IT_PROP, NULL, first, NULL);
            }
        }
    } else if (assembly_of(x->ns, assembly, sizeof assembly) && !strchr(x->name, '.')) {
        scan_custom(s, x);
    }
    for (const wf_xml_node *c = x->first_child; c; c = c->next)
        scan_node(s, c);
}

static void scan_root(scan *s, const wf_xml_node *root)
{
    const wf_xml_attr *cls = wf_xml_attr_find(root, NS_X, "Class");
    const wf_xml_attr *name = wf_xml_attr_find(root, NS_X, "Name");
    snprintf(s->class_name, sizeof s->class_name, "%s", cls ? cls->value : "");
    const char *last = cls ? strrchr(cls->value, '.') : NULL;
    snprintf(s->root_name, sizeof s->root_name, "%s",
             name   ? name->value
             : last ? last + 1
             : cls  ? cls->value
                    : "Workflow");
    for (size_t i = 0; i < root->nsdecl_count; i++) {
        char assembly[128];
        if (!assembly_of(root->nsdecls[i].uri, assembly, sizeof assembly))
            continue;
        if (!s->assembly[0])
            snprintf(s->assembly, sizeof s->assembly, "%s", assembly);
        load_provided(s, assembly);
    }
    if (!s->assembly[0]) {
        snprintf(s->assembly, sizeof s->assembly, "%s", last ? last + 1 : s->root_name);
        for (char *p = s->assembly; *p; p++)
            *p = (char)tolower((unsigned char)*p);
    }
}

/* C identifier "assembly_name" in lower case. */
static void c_name(const scan *s, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s_%s", s->assembly, name);
    for (char *p = out; *p; p++)
        *p = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_';
}

static const char *c_type(const char *type)
{
    static const char *const map[][2] = {
        {"Boolean", "bool"},     {"Int32", "int32_t"},       {"Int64", "int64_t"},
        {"Double", "double"},    {"Decimal", "int64_t"},     {"DateTime", "int64_t"},
        {"TimeSpan", "int64_t"}, {"String", "const char *"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], type) == 0)
            return map[i][1];
    return "const char *";
}

static void write_typelib(const scan *s, wf_buf *b)
{
    wf_buf_addf(b,
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
                "<!-- %s.activities.xml — a scaffold written by the scaffold option of\n"
                "     wfbridge convert. Entries marked \"guessed\" have a type nobody could\n"
                "     infer: check them. -->\n"
                "<TypeLibrary xmlns=\"urn:wfbridge:typelib\" Name=\"%s\" Library=\"lib%s.so\">\n",
                s->assembly, s->assembly, s->assembly);
    char fn[300];
    for (size_t i = 0; i < s->count; i++) {
        const item *a = &s->items[i];
        if (a->kind != IT_ACTIVITY || provided(s, a))
            continue;
        c_name(s, a->name, fn, sizeof fn);
        wf_buf_addf(b, "  <ActivityType Name=\"%s\" Function=\"%s\">\n", a->name, fn);
        for (size_t k = 0; k < s->count; k++) {
            const item *p = &s->items[k];
            if (p->kind == IT_ACT_PROP && strcmp(p->owner, a->name) == 0 &&
                strcmp(p->name, "Name") != 0)
                wf_buf_addf(b,
                            "    <Property Name=\"%s\" Type=\"%s\" Direction=\"In\"/>"
                            "<!-- guessed -->\n",
                            p->name, p->type);
        }
        wf_buf_adds(b, "  </ActivityType>\n");
    }
    if (s->class_name[0]) {
        wf_buf_addf(b, "  <Class Name=\"%s\">\n", s->class_name);
        for (size_t i = 0; i < s->count; i++) {
            const item *it = &s->items[i];
            if (provided(s, it))
                continue;
            c_name(s, it->name, fn, sizeof fn);
            if (it->kind == IT_PROP)
                wf_buf_addf(b, "    <Property Name=\"%s\" Type=\"%s\"/>%s\n", it->name, it->type,
                            it->guessed ? "<!-- guessed -->" : "");
            else if (it->kind == IT_HANDLER)
                wf_buf_addf(b, "    <Handler Name=\"%s\" Function=\"%s\"/>\n", it->name, fn);
            else if (it->kind == IT_CONDITION)
                wf_buf_addf(b, "    <Condition Name=\"%s\" Function=\"%s\"/>\n", it->name, fn);
        }
        wf_buf_adds(b, "  </Class>\n");
    }
    wf_buf_adds(b, "</TypeLibrary>\n");
}

static void write_source(const scan *s, wf_buf *b)
{
    wf_buf_addf(b,
                "/* %s.c — scaffold written by wfbridge convert --scaffold: one function per\n"
                " * handler, condition and activity type of %s.activities.xml. Replace each\n"
                " * TODO with the code the legacy .NET members had. */\n"
                "#include <stdbool.h>\n#include <stdint.h>\n\n",
                s->assembly, s->assembly);
    char fn[300];
    for (size_t i = 0; i < s->count; i++) {
        const item *it = &s->items[i];
        if (provided(s, it) || it->kind == IT_PROP || it->kind == IT_ACT_PROP)
            continue;
        c_name(s, it->name, fn, sizeof fn);
        if (it->kind == IT_CONDITION) {
            wf_buf_addf(b,
                        "bool %s(void);\nbool %s(void)\n{\n    /* TODO: the condition %s */\n"
                        "    return false;\n}\n\n",
                        fn, fn, it->name);
            continue;
        }
        if (it->kind == IT_HANDLER) {
            wf_buf_addf(b,
                        "void %s(void);\nvoid %s(void)\n{\n    /* TODO: the handler %s; "
                        "declare its <Parameter>s in the type library */\n}\n\n",
                        fn, fn, it->name);
            continue;
        }
        wf_buf_addf(b, "void %s(", fn); /* an activity type: its properties in order */
        wf_buf params;
        wf_buf_init(&params);
        for (size_t k = 0; k < s->count; k++) {
            const item *p = &s->items[k];
            if (p->kind == IT_ACT_PROP && strcmp(p->owner, it->name) == 0 &&
                strcmp(p->name, "Name") != 0)
                wf_buf_addf(&params, "%s%s %s", params.len ? ", " : "", c_type(p->type), p->name);
        }
        wf_buf_addf(b, "%s);\nvoid %s(%s)\n{\n", params.len ? params.data : "void", fn,
                    params.len ? params.data : "void");
        for (size_t k = 0; k < s->count; k++) {
            const item *p = &s->items[k];
            if (p->kind == IT_ACT_PROP && strcmp(p->owner, it->name) == 0 &&
                strcmp(p->name, "Name") != 0)
                wf_buf_addf(b, "    (void)%s;\n", p->name);
        }
        wf_buf_addf(b, "    /* TODO: the activity %s */\n}\n\n", it->name);
        b->oom |= params.oom;
        wf_buf_fini(&params);
    }
}

static size_t missing_count(const scan *s, size_t *guessed)
{
    size_t n = 0;
    *guessed = 0;
    for (size_t i = 0; i < s->count; i++) {
        if (provided(s, &s->items[i]) ||
            (s->items[i].kind == IT_ACT_PROP && strcmp(s->items[i].name, "Name") == 0))
            continue;
        n++;
        *guessed += s->items[i].guessed && s->items[i].kind != IT_HANDLER &&
                    s->items[i].kind != IT_CONDITION && s->items[i].kind != IT_ACTIVITY;
    }
    return n;
}

static wf_status write_both(const scan *s, const char *dir, wfc_scaffold_result *out, wf_error *err)
{
    wf_buf tl, src;
    wf_buf_init(&tl);
    wf_buf_init(&src);
    write_typelib(s, &tl);
    write_source(s, &src);
    snprintf(out->typelib_path, sizeof out->typelib_path, "%s/%s.activities.xml", dir, s->assembly);
    snprintf(out->source_path, sizeof out->source_path, "%s/%s.c", dir, s->assembly);
    wf_status st = tl.oom || src.oom ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory") : WF_OK;
    if (st == WF_OK)
        st = wfc_write_atomic(out->typelib_path, tl.data, tl.len, err);
    if (st == WF_OK)
        st = wfc_write_atomic(out->source_path, src.data, src.len, err);
    wf_buf_fini(&tl);
    wf_buf_fini(&src);
    return st;
}

wf_status wfc_scaffold(const wf_libpath *libpath, const char *xoml, const char *dir,
                       wfc_scaffold_result *out, wf_error *err)
{
    memset(out, 0, sizeof *out);
    wf_xml_doc *doc = NULL;
    scan *s = wf_calloc(1, sizeof *s);
    wf_types *types = wf_types_create();
    wf_status st = !s || !types ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory")
                                : wf_xml_load_file(xoml, NULL, &doc, err);
    if (st == WF_OK) {
        s->libpath = libpath;
        s->types = types;
        scan_root(s, wf_xml_root(doc));
        scan_node(s, wf_xml_root(doc));
        out->symbol_count = missing_count(s, &out->guessed_count);
        if (out->symbol_count > 0)
            st = write_both(s, dir, out, err);
    }
    for (size_t i = 0; s && i < s->provided_count; i++)
        wfl_typelib_destroy(s->provided[i]);
    wf_xml_doc_destroy(doc);
    wf_free(s);
    wf_types_destroy(types);
    return st;
}

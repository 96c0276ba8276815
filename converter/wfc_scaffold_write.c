/* wfc_scaffold_write.c — the scaffold's writer: decides which scanned declarations are new
 * (no type library on the library path or in the scaffold directory has them), then writes,
 * per assembly, NAME.activities.xml (new, or with the new entries inserted into the existing
 * one), the new functions as NAME.c or, when that exists, the next free NAME__N.c, and a
 * Makefile when there is none. Everything is checked before the first byte is written, and
 * no existing file is ever replaced by different declarations (wfc_scaffold.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../common/wf_xml.h"
#include "../common/wf_xmlw.h"
#include "../legacy/wfl_typelib.h"
#include "wfc_output.h"
#include "wfc_scaffold_int.h"

#define MAX_PARAMS 32

typedef struct out_file {
    char path[4200];
    wf_buf text;
} out_file;

typedef struct writer {
    wfc_scaffold *s;
    wf_types *types;
    out_file *files; /* planned outputs, written only when all are ready */
    size_t file_count, file_cap;
    wfc_scaffold_result *res;
} writer;

/* One assembly's state while writing. */
typedef struct unit {
    const char *assembly;
    wfl_typelib *user; /* declared on the library path (not in the scaffold dir) */
    wfl_typelib *mine; /* the scaffold dir's earlier type library */
    char *mine_text;   /* its text (wf_malloc'd) */
    size_t mine_len;
    char tl_path[4200];
    wf_strmap *symbols; /* C symbols used in this assembly */
} unit;

static const char *const DIRS[] = {"In", "Out", "InOut", "Return"};

/* ---- names ---------------------------------------------------------------------------- */
/* Refuse names that are no plain file name (docs/convert.md "Scaffolding"). */
static wf_status check_assembly_name(const sc_item *it, wf_error *err)
{
    const char *a = it->assembly;
    if (a[0] && !strpbrk(a, "/\\") && !strstr(a, "..") && a[0] != '.')
        return WF_OK;
    wf_loc at = {it->source, it->line, it->col};
    return wf_error_set(err, WF_E_NAME, &at,
                        "assembly name '%s' is not a plain file name (no '/', '\\', '..' or "
                        "leading '.'): the scaffold writes nothing for it",
                        a);
}

static void c_ident(char *out, size_t size, const char *a, const char *b, const char *c)
{
    snprintf(out, size, "%s%s%s%s%s", a, b && *b ? "_" : "", b ? b : "", c && *c ? "_" : "",
             c ? c : "");
    for (char *p = out; *p; p++)
        *p = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_';
    if (isdigit((unsigned char)out[0]))
        out[0] = '_';
}

static const char *last_part(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

/* A C parameter name for a property or parameter (keywords get a trailing '_'). */
static void c_param(char *out, size_t size, const char *name)
{
    static const char *const kw[] = {
        "int",     "char",     "bool",     "double",   "long",     "short",  "float",  "void",
        "if",      "else",     "for",      "while",    "do",       "return", "switch", "case",
        "default", "break",    "continue", "auto",     "const",    "static", "struct", "union",
        "enum",    "register", "signed",   "unsigned", "volatile", "extern", "goto",   "sizeof",
        "typedef", "inline",   "restrict", NULL};
    c_ident(out, size, name, NULL, NULL);
    for (const char *const *k = kw; *k; k++)
        if (strcmp(out, *k) == 0 && strlen(out) + 1 < size)
            strcat(out, "_");
}

static bool symbol_free(unit *u, const char *sym)
{
    return wf_strmap_get(u->symbols, sym) == NULL;
}

static wf_status claim_symbol(wfc_scaffold *s, unit *u, sc_item *it, const char *base)
{
    char sym[512];
    snprintf(sym, sizeof sym, "%s", base);
    for (int n = 2; !symbol_free(u, sym) && n < 1000; n++)
        snprintf(sym, sizeof sym, "%.490s_%d", base, n);
    it->function = wf_strdup(sym);
    if (!it->function || wf_strmap_put(u->symbols, sym, it) != WF_OK)
        s->nomem = true;
    return s->nomem ? WF_E_NOMEM : WF_OK;
}

/* ---- what exists ---------------------------------------------------------------------- */
static bool same_type(const char *a, const char *b)
{
    if (strncmp(a, "System.", 7) == 0)
        a += 7;
    if (strncmp(b, "System.", 7) == 0)
        b += 7;
    return strcasecmp(a, b) == 0;
}

static const wfl_tl_class *tl_class(const wfl_typelib *tl, const char *name)
{
    const wfl_tl_class *c = tl ? wfl_typelib_class(tl, name) : NULL;
    return c ? c : tl ? wfl_typelib_class(tl, last_part(name)) : NULL;
}

static const wfl_tl_prop *func_param(const wfl_tl_func *fn, const char *name)
{
    for (size_t i = 0; fn && i < wfl_tl_func_param_count(fn); i++)
        if (strcmp(wfl_tl_func_param(fn, i)->name, name) == 0)
            return wfl_tl_func_param(fn, i);
    const wfl_tl_prop *r = fn ? wfl_tl_func_return(fn) : NULL;
    return r && strcmp(name, "ReturnValue") == 0 ? r : NULL;
}

static const wfl_tl_prop *event_param(const wfl_tl_event *ev, const char *name)
{
    for (size_t i = 0; ev && i < wfl_tl_event_param_count(ev); i++)
        if (strcmp(wfl_tl_event_param(ev, i)->name, name) == 0)
            return wfl_tl_event_param(ev, i);
    return NULL;
}

/* Whether tl declares the item; *prop receives a declared property or parameter, *locked
 * whether it would change a declared function (a property of a declared activity type, a
 * parameter of a declared method or event): a conflict, never written. */
static bool declared(const wfl_typelib *tl, const sc_item *it, const wfl_tl_prop **prop,
                     bool *locked)
{
    *prop = NULL;
    *locked = false;
    const wfl_tl_class *cls = tl_class(tl, it->container);
    const wfl_tl_activity *act = wfl_typelib_activity(tl, it->container);
    const wfl_tl_service *svc = wfl_typelib_service(tl, it->container);
    switch (it->kind) {
    case SC_ASSEMBLY:
        return true;
    case SC_CLASS:
        return tl_class(tl, it->name) != NULL;
    case SC_CLASS_PROP:
        return cls && (*prop = wfl_tl_class_find_prop(cls, it->name)) != NULL;
    case SC_HANDLER:
        return cls && wfl_tl_class_handler(cls, it->name);
    case SC_CONDITION:
        return cls && wfl_tl_class_condition(cls, it->name);
    case SC_ACTIVITY:
        return wfl_typelib_activity(tl, it->name) != NULL;
    case SC_ACT_PROP:
        *locked = act != NULL;
        return act && (*prop = wfl_tl_activity_find_prop(act, it->name)) != NULL;
    case SC_SERVICE:
        return wfl_typelib_service(tl, it->name) != NULL;
    case SC_METHOD:
        return svc && wfl_tl_service_method(svc, it->name);
    case SC_EVENT:
        return svc && wfl_tl_service_event(svc, it->name);
    case SC_METHOD_PARAM: {
        const wfl_tl_func *m = svc ? wfl_tl_service_method(svc, it->owner) : NULL;
        *locked = m != NULL;
        return m && (*prop = func_param(m, it->name)) != NULL;
    }
    case SC_EVENT_PARAM: {
        const wfl_tl_event *e = svc ? wfl_tl_service_event(svc, it->owner) : NULL;
        *locked = e != NULL;
        return e && (*prop = event_param(e, it->name)) != NULL;
    }
    }
    return false;
}

static const char *item_label(const sc_item *it, char *buf, size_t size)
{
    static const char *const kinds[] = {"assembly",  "class",         "property", "handler",
                                        "condition", "activity type", "property", "service",
                                        "method",    "parameter",     "event",    "parameter"};
    snprintf(buf, size, "%s %s%s%s%s%s", kinds[it->kind], it->container,
             it->container[0] ? "." : "", it->owner, it->owner[0] ? "." : "", it->name);
    return buf;
}

/* Compare the items of u's assembly with a type library: mark what it declares, note what
 * contradicts it (a stated type that differs, a member of a declared function it lacks). */
static bool of_class(const sc_item *it, const char *cls)
{
    bool member = it->kind == SC_CLASS_PROP || it->kind == SC_HANDLER || it->kind == SC_CONDITION;
    return (it->kind == SC_CLASS && strcmp(it->name, cls) == 0) ||
           (member && strcmp(it->container, cls) == 0);
}

/* only_class: match just that class and its members, wherever the scan put them (the loader
 * finds an x:Class in any type library the file declares). */
static void match_typelib(writer *w, unit *u, const wfl_typelib *tl, bool is_mine,
                          const char *only_class)
{
    wfc_scaffold *s = w->s;
    char label[700];
    for (size_t i = 0; i < s->count; i++) {
        sc_item *it = &s->items[i];
        if (it->exists ||
            (only_class ? !of_class(it, only_class) : strcmp(it->assembly, u->assembly) != 0))
            continue;
        const wfl_tl_prop *p = NULL;
        bool locked = false;
        it->exists = declared(tl, it, &p, &locked);
        if (it->exists && p && it->strength == SC_CERTAIN && !same_type(p->type->name, it->type)) {
            wfc__sc_note(s, it->source, "conflict", it->line, it->col,
                         "%s is declared as %s in %s, the markup says %s: not changed",
                         item_label(it, label, sizeof label), p->type->name, wfl_typelib_file(tl),
                         it->type);
            w->res->conflicts++;
        } else if (!it->exists && (!is_mine || locked)) {
            /* the user's own type library, or a new parameter of a declared function */
            wfc__sc_note(s, it->source, "conflict", it->line, it->col,
                         "%s is not declared in %s: add it by hand (a scaffold never "
                         "changes a declared function)",
                         item_label(it, label, sizeof label), wfl_typelib_file(tl));
            w->res->conflicts++;
            it->exists = true; /* not written */
        }
    }
}

/* Does `path` lie in the scaffold directory? */
static bool in_scaffold_dir(const wfc_scaffold *s, const char *path)
{
    char a[PATH_MAX], b[PATH_MAX];
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    return realpath(dir, a) && realpath(s->dir, b) && strcmp(a, b) == 0;
}

static void collect_symbols(unit *u, const wfl_typelib *tl)
{
    for (size_t i = 0; tl && i < wfl_typelib_class_count(tl); i++) {
        const wfl_tl_class *c = wfl_typelib_class_at(tl, i);
        for (size_t k = 0; k < wfl_tl_class_func_count(c); k++)
            wf_strmap_put(u->symbols, wfl_tl_func_symbol(wfl_tl_class_func_at(c, k)), u);
    }
    for (size_t i = 0; tl && i < wfl_typelib_activity_count(tl); i++) {
        const wfl_tl_func *fn = wfl_tl_activity_func(wfl_typelib_activity_at(tl, i));
        if (fn && wfl_tl_func_symbol(fn))
            wf_strmap_put(u->symbols, wfl_tl_func_symbol(fn), u);
    }
    for (size_t i = 0; tl && i < wfl_typelib_service_count(tl); i++) {
        const wfl_tl_service *sv = wfl_typelib_service_at(tl, i);
        for (size_t k = 0; k < wfl_tl_service_method_count(sv); k++)
            wf_strmap_put(u->symbols, wfl_tl_func_symbol(wfl_tl_service_method_at(sv, k)), u);
    }
}

/* Load what already declares u's assembly: the user's library path, then the scaffold
 * directory's earlier file (a broken one is an error: nothing is written). */
static wf_status load_existing(writer *w, unit *u, wf_error *err)
{
    wfc_scaffold *s = w->s;
    if (s->libpath) {
        wf_error e = WF_ERROR_INIT;
        wf_status st = wfl_typelib_load_decl(s->libpath, w->types, u->assembly, &u->user, NULL, &e);
        if (st == WF_OK && in_scaffold_dir(s, wfl_typelib_file(u->user))) {
            wfl_typelib_destroy(u->user);
            u->user = NULL;
        } else if (st != WF_OK && st != WF_E_NOTFOUND) {
            *err = e;
            return st;
        }
    }
    snprintf(u->tl_path, sizeof u->tl_path, "%s/%s.activities.xml", s->dir, u->assembly);
    struct stat sb;
    if (stat(u->tl_path, &sb) != 0)
        return WF_OK;
    wf_xml_doc *probe = NULL;
    wf_status st = wf_xml_load_file(u->tl_path, NULL, &probe, err); /* located XML errors */
    wf_xml_doc_destroy(probe);
    if (st != WF_OK)
        return st;
    FILE *f = fopen(u->tl_path, "rb");
    u->mine_text = f ? wf_malloc((size_t)sb.st_size + 1) : NULL;
    u->mine_len = u->mine_text ? fread(u->mine_text, 1, (size_t)sb.st_size, f) : 0;
    if (f)
        fclose(f);
    if (!u->mine_text)
        return wf_error_set(err, WF_E_IO, NULL, "cannot read %s: %s", u->tl_path, strerror(errno));
    u->mine_text[u->mine_len] = '\0';
    return wfl_typelib_parse(w->types, u->tl_path, u->mine_text, u->mine_len, &u->mine, NULL, err);
}

/* ---- type library text -------------------------------------------------------------- */
static bool new_in(const sc_item *it, const unit *u, sc_kind kind, const char *container,
                   const char *owner)
{
    return it->kind == kind && !it->exists && strcmp(it->assembly, u->assembly) == 0 &&
           (!container || strcmp(it->container, container) == 0) &&
           (!owner || strcmp(it->owner, owner) == 0);
}

/* The text keeps its hand-made layout (one entry per line, a "guessed" mark after it) while
 * the markup comes from the common writer (common/wf_xmlw.h) in its compact mode: line
 * breaks and indentation are written as text between the elements. */
static void lead(wf_xmlw *x, int level)
{
    static const char spaces[] = "        ";
    wf_xmlw_text(x, spaces + sizeof spaces - 1 - 2 * (size_t)level);
}

/* A line's start: indentation, then <tag Name="name". */
static void open_named(wf_xmlw *x, int level, const char *tag, const char *name)
{
    lead(x, level);
    wf_xmlw_open(x, tag);
    wf_xmlw_attr(x, "Name", name);
}

/* End the element; a guessed entry gets its mark after it; then the line. */
static void close_line(wf_xmlw *x, const sc_item *it)
{
    wf_xmlw_close(x);
    if (it && it->strength < SC_CERTAIN)
        wf_xmlw_comment(x, "guessed");
    wf_xmlw_text(x, "\n");
}

/* A type a function parameter can carry (C mapping), else String (and guessed). */
static void c_mappable(sc_item *it)
{
    if (!wfc__sc_ctype(it->type, WFL_TL_IN)) {
        it->type = "String";
        it->strength = SC_GUESS;
    }
}

/* The properties of class `cls` a handler can take: declared ones first, then new ones. */
typedef struct prop_ref {
    const char *name, *type;
} prop_ref;

static size_t class_props(const writer *w, const unit *u, const char *cls, prop_ref *out)
{
    size_t n = 0;
    const wfl_tl_class *c = tl_class(u->mine, cls);
    for (size_t i = 0; c && i < wfl_tl_class_prop_count(c) && n < MAX_PARAMS; i++) {
        const wfl_tl_prop *p = wfl_tl_class_prop(c, i);
        if (wfc__sc_ctype(p->type->name, WFL_TL_IN))
            out[n++] = (prop_ref){p->name, p->type->name};
    }
    for (size_t i = 0; i < w->s->count && n < MAX_PARAMS; i++) {
        const sc_item *it = &w->s->items[i];
        if (new_in(it, u, SC_CLASS_PROP, cls, NULL) && wfc__sc_ctype(it->type, WFL_TL_IN))
            out[n++] = (prop_ref){it->name, it->type};
    }
    return n;
}

static void write_class_members(writer *w, unit *u, const char *cls, wf_xmlw *x)
{
    for (size_t i = 0; i < w->s->count; i++) {
        const sc_item *it = &w->s->items[i];
        if (!new_in(it, u, SC_CLASS_PROP, cls, NULL))
            continue;
        open_named(x, 2, "Property", it->name);
        wf_xmlw_attr(x, "Type", it->type);
        close_line(x, it);
    }
    prop_ref props[MAX_PARAMS];
    size_t n = class_props(w, u, cls, props);
    for (size_t i = 0; i < w->s->count; i++) {
        const sc_item *it = &w->s->items[i];
        bool cond = new_in(it, u, SC_CONDITION, cls, NULL);
        if (!cond && !new_in(it, u, SC_HANDLER, cls, NULL))
            continue;
        open_named(x, 2, cond ? "Condition" : "Handler", it->name);
        wf_xmlw_attr(x, "Function", it->function);
        if (n)
            wf_xmlw_text(x, "\n");
        for (size_t k = 0; k < n; k++) {
            lead(x, 3);
            wf_xmlw_open(x, "Parameter");
            wf_xmlw_attr(x, "Property", props[k].name);
            wf_xmlw_attr(x, "Direction", cond ? "In" : "InOut");
            close_line(x, NULL);
        }
        if (n)
            lead(x, 2);
        close_line(x, NULL);
    }
}

static void write_activity(writer *w, unit *u, const sc_item *a, wf_xmlw *x)
{
    open_named(x, 1, "ActivityType", a->name);
    wf_xmlw_attr(x, "Function", a->function);
    if (a->composite) { /* its children run after the function: check that WF3 did so */
        wf_xmlw_attr(x, "Children", "Sequence");
        wf_xmlw_comment(x, "guessed: Children");
    }
    wf_xmlw_text(x, "\n");
    for (size_t i = 0; i < w->s->count; i++) {
        sc_item *p = &w->s->items[i];
        if (!new_in(p, u, SC_ACT_PROP, a->name, NULL))
            continue;
        c_mappable(p);
        open_named(x, 2, "Property", p->name);
        wf_xmlw_attr(x, "Type", p->type);
        wf_xmlw_attr(x, "Direction", DIRS[p->dir]);
        close_line(x, p);
    }
    lead(x, 1);
    close_line(x, NULL);
}

static void write_service_members(writer *w, unit *u, const char *svc, wf_xmlw *x)
{
    for (size_t i = 0; i < w->s->count; i++) {
        const sc_item *m = &w->s->items[i];
        bool ev = new_in(m, u, SC_EVENT, svc, NULL);
        if (!ev && !new_in(m, u, SC_METHOD, svc, NULL))
            continue;
        open_named(x, 2, ev ? "Event" : "Method", m->name);
        if (!ev)
            wf_xmlw_attr(x, "Function", m->function);
        wf_xmlw_text(x, "\n");
        for (size_t k = 0; k < w->s->count; k++) {
            sc_item *p = &w->s->items[k];
            if (!new_in(p, u, ev ? SC_EVENT_PARAM : SC_METHOD_PARAM, svc, m->name))
                continue;
            if (!ev)
                c_mappable(p);
            open_named(x, 3, "Parameter", p->name);
            wf_xmlw_attr(x, "Type", p->type);
            if (!ev)
                wf_xmlw_attr(x, "Direction", DIRS[p->dir]);
            close_line(x, p);
        }
        lead(x, 2);
        close_line(x, NULL);
    }
}

static void write_class(writer *w, unit *u, const sc_item *c, wf_xmlw *x)
{
    open_named(x, 1, "Class", c->name);
    if (c->base)
        wf_xmlw_attr(x, "BaseType", c->base);
    wf_xmlw_text(x, "\n");
    write_class_members(w, u, c->name, x);
    lead(x, 1);
    close_line(x, NULL);
}

static void write_service(writer *w, unit *u, const sc_item *sv, wf_xmlw *x)
{
    open_named(x, 1, "Service", sv->name);
    wf_xmlw_text(x, "\n");
    write_service_members(w, u, sv->name, x);
    lead(x, 1);
    close_line(x, NULL);
}

/* The new top-level entries of u (containers nobody declares yet). */
static void write_new_containers(writer *w, unit *u, wf_xmlw *x)
{
    for (size_t i = 0; i < w->s->count; i++) {
        const sc_item *it = &w->s->items[i];
        if (new_in(it, u, SC_ACTIVITY, NULL, NULL))
            write_activity(w, u, it, x);
        else if (new_in(it, u, SC_CLASS, NULL, NULL))
            write_class(w, u, it, x);
        else if (new_in(it, u, SC_SERVICE, NULL, NULL))
            write_service(w, u, it, x);
    }
}

/* What `part` writes (for the container `name`, if it takes one), as text to put into an
 * earlier type library or a new one; out->oom when it could not be written. */
typedef void (*part_fn)(writer *w, unit *u, const char *name, wf_xmlw *x);

static void part_text(writer *w, unit *u, part_fn part, const char *name, wf_buf *out)
{
    wf_xmlw_opts o = WF_XMLW_OPTS_INIT;
    wf_xmlw *x = NULL;
    if (wf_xmlw_create(&o, &x, NULL) == WF_OK) {
        part(w, u, name, x);
        out->oom |= wf_xmlw_finish(x, out, NULL) != WF_OK;
    } else {
        out->oom = true;
    }
    wf_xmlw_destroy(x);
}

static void new_containers_part(writer *w, unit *u, const char *name, wf_xmlw *x)
{
    (void)name;
    write_new_containers(w, u, x);
}

static bool has_new_function(const writer *w, const unit *u)
{
    for (size_t i = 0; i < w->s->count; i++) {
        const sc_item *it = &w->s->items[i];
        if (!it->exists && it->function && strcmp(it->assembly, u->assembly) == 0)
            return true;
    }
    return false;
}

/* A new type library: what the scaffold writes, and the new entries. */
static void new_typelib_part(writer *w, unit *u, const char *name, wf_xmlw *x)
{
    (void)name;
    char note[600];
    snprintf(note, sizeof note,
             "%s.activities.xml — written by the scaffold of wfbridge convert from the\n"
             "     markup that uses it. Entries marked \"guessed\" have a type the markup did "
             "not\n"
             "     state: check them. Edit freely: a later scaffold run only adds to this file.",
             u->assembly);
    wf_xmlw_declaration(x);
    wf_xmlw_comment(x, note);
    wf_xmlw_text(x, "\n");
    wf_xmlw_open(x, "TypeLibrary");
    wf_xmlw_attr(x, "xmlns", "urn:wfbridge:typelib");
    wf_xmlw_attr(x, "Name", u->assembly);
    if (has_new_function(w, u))
        wf_xmlw_attrf(x, "Library", "lib%s.so", u->assembly);
    wf_xmlw_text(x, "\n");
    write_new_containers(w, u, x);
    close_line(x, NULL);
}

/* ---- inserting into an earlier type library ---------------------------------------------- */
/* The span of <Tag ... Name="name"...> in text: *open_end just after its '>', *self when it
 * ends with "/>", *close at its "</Tag>" (not self-closing). False when absent. */
static bool find_element(const char *text, const char *tag, const char *name, size_t *open_end,
                         bool *self, size_t *close)
{
    size_t tlen = strlen(tag);
    for (const char *p = text; (p = strstr(p, "<")) != NULL; p++) {
        if (strncmp(p + 1, tag, tlen) != 0 || !isspace((unsigned char)p[1 + tlen]))
            continue;
        const char *end = strchr(p, '>');
        const char *n = strstr(p, "Name=");
        if (!end || !n || n > end)
            continue;
        char q = n[5];
        const char *v = n + 6;
        size_t len = strlen(name);
        if ((q != '"' && q != '\'') || strncmp(v, name, len) != 0 || v[len] != q)
            continue;
        *open_end = (size_t)(end - text) + 1;
        *self = end > p && end[-1] == '/';
        char closing[64];
        snprintf(closing, sizeof closing, "</%s>", tag);
        const char *c = *self ? end : strstr(end, closing);
        if (!c)
            return false;
        *close = (size_t)(c - text);
        return true;
    }
    return false;
}

typedef struct insertion {
    size_t at;   /* where text goes */
    size_t skip; /* bytes of the original dropped there (the '/' of a self-closing tag) */
    wf_buf text;
} insertion;

/* Insert the new members of declared container `name` (a <Tag>) before its end. */
static bool insert_members(writer *w, unit *u, const char *tag, const char *name, insertion *ins)
{
    wf_buf members;
    wf_buf_init(&members);
    part_text(w, u, strcmp(tag, "Class") == 0 ? write_class_members : write_service_members, name,
              &members);
    size_t open_end = 0, close = 0;
    bool self = false;
    bool ok = members.len == 0 || find_element(u->mine_text, tag, name, &open_end, &self, &close);
    wf_buf_init(&ins->text);
    ins->at = 0;
    ins->skip = 0;
    if (ok && members.len) {
        if (self) { /* <Class Name="X"/> -> <Class Name="X"> members </Class> */
            ins->at = close - 1;
            ins->skip = 1;
            wf_buf_addf(&ins->text, ">\n%s  </%s", members.data, tag);
        } else {
            size_t line = close;
            while (line > 0 && u->mine_text[line - 1] != '\n')
                line--;
            ins->at = line; /* before the indentation of the closing tag */
            wf_buf_adds(&ins->text, members.data);
        }
    }
    ins->text.oom |= members.oom;
    wf_buf_fini(&members);
    return ok;
}

static int by_position(const void *a, const void *b)
{
    const insertion *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* The earlier type library with the new entries inserted; its other bytes unchanged. */
static wf_status extend_typelib(writer *w, unit *u, wf_buf *out, wf_error *err)
{
    insertion ins[256];
    size_t n = 0;
    for (size_t i = 0; i < w->s->count && n + 2 < 256; i++) {
        const sc_item *it = &w->s->items[i];
        const wfl_tl_class *cls = it->kind == SC_CLASS ? tl_class(u->mine, it->name) : NULL;
        const wfl_tl_service *svc =
            it->kind == SC_SERVICE ? wfl_typelib_service(u->mine, it->name) : NULL;
        if ((!cls && !svc) || strcmp(it->assembly, u->assembly) != 0)
            continue; /* members only go into containers of this file */
        const char *tag = cls ? "Class" : "Service";
        const char *name = cls ? wfl_tl_class_name(cls) : wfl_tl_service_name(svc);
        if (!insert_members(w, u, tag, name, &ins[n])) {
            for (size_t k = 0; k <= n; k++)
                wf_buf_fini(&ins[k].text);
            return wf_error_set(err, WF_E_SCHEMA, &(wf_loc){u->tl_path, 1, 1},
                                "cannot find <%s Name=\"%s\"> to add to: keep its start tag "
                                "on one line, or add the new members by hand",
                                tag, name);
        }
        if (ins[n].text.len > 0)
            n++;
        else
            wf_buf_fini(&ins[n].text);
    }
    const char *end = strstr(u->mine_text, "</TypeLibrary>");
    if (!end)
        return wf_error_set(err, WF_E_SCHEMA, &(wf_loc){u->tl_path, 1, 1}, "no </TypeLibrary>");
    wf_buf_init(&ins[n].text);
    part_text(w, u, new_containers_part, NULL, &ins[n].text);
    ins[n].at = (size_t)(end - u->mine_text);
    ins[n].skip = 0;
    n++;
    const char *lib = wfl_typelib_library(u->mine);
    if ((!lib || !*lib) && has_new_function(w, u)) { /* functions now: name the library */
        const char *root = strstr(u->mine_text, "<TypeLibrary");
        const char *gt = root ? strchr(root, '>') : NULL;
        wf_buf_init(&ins[n].text);
        wf_buf_addf(&ins[n].text, " Library=\"lib%s.so\"", u->assembly);
        ins[n].at = gt ? (size_t)(gt - u->mine_text) - (gt[-1] == '/') : 0;
        ins[n].skip = 0;
        n++;
    }
    qsort(ins, n, sizeof *ins, by_position);
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        wf_buf_add(out, u->mine_text + from, ins[i].at - from);
        wf_buf_add(out, ins[i].text.data, ins[i].text.len);
        out->oom |= ins[i].text.oom;
        from = ins[i].at + ins[i].skip;
        wf_buf_fini(&ins[i].text);
    }
    wf_buf_add(out, u->mine_text + from, u->mine_len - from);
    return WF_OK;
}

/* ---- C text ------------------------------------------------------------------------------ */
static void c_params_from(wf_buf *sig, wf_buf *body, const char *type, int dir, const char *name)
{
    char p[256];
    c_param(p, sizeof p, name);
    const char *ct = wfc__sc_ctype(type, dir);
    wf_buf_addf(sig, "%s%s%s%s", sig->len ? ", " : "", ct, ct[strlen(ct) - 1] == '*' ? "" : " ", p);
    wf_buf_addf(body, "    (void)%s;\n", p);
}

/* One function: its prototype (so -Wmissing-prototypes is quiet), then the TODO body. */
static void c_function(wf_buf *b, const char *ret, const char *fn, const wf_buf *sig,
                       const wf_buf *body, const char *what, const sc_item *it)
{
    if (it->line)
        wf_buf_addf(b, "/* TODO: %s (%s:%u). */\n", what, it->source, it->line);
    else
        wf_buf_addf(b, "/* TODO: %s (%s, its rules). */\n", what, it->source);
    wf_buf_addf(b, "%s%s%s(%s);\n", ret, ret[strlen(ret) - 1] == '*' ? "" : " ", fn,
                sig->len ? sig->data : "void");
    wf_buf_addf(b, "%s%s%s(%s)\n{\n%s", ret, ret[strlen(ret) - 1] == '*' ? "" : " ", fn,
                sig->len ? sig->data : "void", body->data);
    if (strcmp(ret, "void") != 0)
        wf_buf_addf(b, "    return %s;\n",
                    strcmp(ret, "bool") == 0 ? "false"
                    : strchr(ret, '*')       ? "NULL"
                                             : "0");
    wf_buf_adds(b, "}\n\n");
}

/* The signature of a new function item, written to `b`; *sig_out the one-line form. */
static void c_item(writer *w, unit *u, const sc_item *it, wf_buf *b, wf_buf *one)
{
    wf_buf sig, body;
    wf_buf_init(&sig);
    wf_buf_init(&body);
    const char *ret = "void";
    char what[700];
    if (it->kind == SC_HANDLER || it->kind == SC_CONDITION) {
        prop_ref props[MAX_PARAMS];
        size_t n = class_props(w, u, it->container, props);
        for (size_t k = 0; k < n; k++)
            c_params_from(&sig, &body, props[k].type,
                          it->kind == SC_CONDITION ? WFL_TL_IN : WFL_TL_INOUT, props[k].name);
        ret = it->kind == SC_CONDITION ? "bool" : "void";
        snprintf(what, sizeof what, "the %s %s of %s",
                 it->kind == SC_CONDITION ? "condition" : "handler", it->name, it->container);
    } else {
        sc_kind pk = it->kind == SC_ACTIVITY ? SC_ACT_PROP : SC_METHOD_PARAM;
        const char *cont = it->kind == SC_ACTIVITY ? it->name : it->container;
        for (size_t k = 0; k < w->s->count; k++) {
            const sc_item *p = &w->s->items[k];
            if (!new_in(p, u, pk, cont, it->kind == SC_ACTIVITY ? NULL : it->name))
                continue;
            if (p->dir == WFL_TL_RETURN)
                ret = wfc__sc_ctype(p->type, WFL_TL_RETURN);
            else
                c_params_from(&sig, &body, p->type, p->dir, p->name);
        }
        snprintf(
            what, sizeof what, "the %s %s%s%s", it->kind == SC_ACTIVITY ? "activity" : "method",
            it->kind == SC_METHOD ? it->container : "", it->kind == SC_METHOD ? "." : "", it->name);
    }
    c_function(b, ret, it->function, &sig, &body, what, it);
    wf_buf_addf(one, "%s %s(%s)", ret, it->function, sig.len ? sig.data : "void");
    b->oom |= sig.oom || body.oom;
    wf_buf_fini(&sig);
    wf_buf_fini(&body);
}

/* NAME.c, or NAME__N.c with the first N free: an existing file is never rewritten. */
static void free_c_path(const writer *w, const unit *u, char *path, size_t size)
{
    struct stat sb;
    snprintf(path, size, "%s/%s.c", w->s->dir, u->assembly);
    for (int n = 2; stat(path, &sb) == 0 && n < 10000; n++)
        snprintf(path, size, "%s/%s__%d.c", w->s->dir, u->assembly, n);
}

static out_file *new_out(writer *w, const char *path, wf_error *err)
{
    if (w->file_count == w->file_cap) {
        size_t cap = w->file_cap ? w->file_cap * 2 : 16;
        out_file *grown = wf_realloc(w->files, cap * sizeof *grown);
        if (!grown) {
            wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
            return NULL;
        }
        w->files = grown;
        w->file_cap = cap;
    }
    out_file *f = &w->files[w->file_count++];
    snprintf(f->path, sizeof f->path, "%s", path);
    wf_buf_init(&f->text);
    return f;
}

static wf_status write_c(writer *w, unit *u, wf_error *err)
{
    if (!has_new_function(w, u))
        return WF_OK;
    char path[4200];
    free_c_path(w, u, path, sizeof path);
    out_file *f = new_out(w, path, err);
    if (!f)
        return WF_E_NOMEM;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    wf_buf_addf(&f->text,
                "/* %s — written by wfbridge convert --scaffold: one function per handler,\n"
                " * condition, activity type and service method %s.activities.xml declares\n"
                " * here. Replace each TODO with what the .NET member did; a later scaffold run\n"
                " * never rewrites this file (new functions go to a new file). */\n"
                "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n",
                base, u->assembly);
    for (size_t i = 0; i < w->s->count; i++) {
        sc_item *it = &w->s->items[i];
        if (it->exists || !it->function || strcmp(it->assembly, u->assembly) != 0)
            continue;
        wf_buf one;
        wf_buf_init(&one);
        c_item(w, u, it, &f->text, &one);
        wfc__sc_note(w->s, it->source, "function", it->line, it->col, "%s in %s", one.data, path);
        wf_buf_fini(&one);
        w->res->functions++;
    }
    return WF_OK;
}

/* ---- the run ------------------------------------------------------------------------------ */
static const char MAKEFILE[] =
    "# Makefile — builds libNAME.so from NAME.c and NAME__N.c for every NAME here.\n"
    "# Written by wfbridge convert --scaffold when there was none; edit freely.\n"
    "# Build: make -C THIS_DIRECTORY\n"
    "CC = cc\n"
    "CFLAGS = -std=c11 -O2 -Wall -Wextra -Werror\n"
    "SRCS := $(wildcard *.c)\n"
    "NAMES := $(sort $(foreach s,$(SRCS),$(firstword $(subst __, ,$(basename $(s))))))\n"
    "LIBS := $(foreach n,$(NAMES),lib$(n).so)\n\n"
    "all: $(LIBS)\n\n"
    ".SECONDEXPANSION:\n"
    "lib%.so: $$(wildcard $$*.c $$*__*.c)\n"
    "\t$(CC) $(CFLAGS) -shared -fPIC -o $@ $^\n\n"
    "clean:\n"
    "\trm -f $(LIBS)\n\n"
    ".PHONY: all clean\n";

static wf_status plan_unit(writer *w, unit *u, wf_error *err)
{
    if (u->user)
        match_typelib(w, u, u->user, false, NULL);
    if (u->mine)
        match_typelib(w, u, u->mine, true, NULL);
    collect_symbols(u, u->user);
    collect_symbols(u, u->mine);
    for (size_t i = 0; i < w->s->count; i++) { /* a result nobody sets in markup is Out */
        sc_item *it = &w->s->items[i];
        if (it->kind == SC_ACT_PROP && strcmp(it->assembly, u->assembly) == 0)
            it->dir = it->is_read && !it->is_set ? WFL_TL_OUT : WFL_TL_IN;
    }
    for (size_t i = 0; i < w->s->count && !w->s->nomem; i++) {
        sc_item *it = &w->s->items[i];
        if (it->exists || strcmp(it->assembly, u->assembly) != 0)
            continue;
        char base[512];
        if (it->kind == SC_HANDLER || it->kind == SC_CONDITION)
            c_ident(base, sizeof base, u->assembly, last_part(it->container), it->name);
        else if (it->kind == SC_ACTIVITY)
            c_ident(base, sizeof base, u->assembly, it->name, NULL);
        else if (it->kind == SC_METHOD)
            c_ident(base, sizeof base, u->assembly, it->container, it->name);
        else
            continue;
        if (claim_symbol(w->s, u, it, base) != WF_OK)
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    return WF_OK;
}

static void count_new(writer *w, const unit *u)
{
    char label[700];
    for (size_t i = 0; i < w->s->count; i++) {
        sc_item *it = &w->s->items[i];
        if (it->exists || strcmp(it->assembly, u->assembly) != 0 || it->kind == SC_ASSEMBLY)
            continue;
        w->res->declarations++;
        bool typed = it->kind == SC_CLASS_PROP || it->kind == SC_ACT_PROP ||
                     it->kind == SC_METHOD_PARAM || it->kind == SC_EVENT_PARAM;
        if (typed && it->strength < SC_CERTAIN) {
            w->res->guessed++;
            wfc__sc_note(w->s, it->source, "guessed", it->line, it->col,
                         "%s: type %s guessed, check it in %s", item_label(it, label, sizeof label),
                         it->type, u->tl_path);
        }
    }
}

static bool unit_needs_file(const writer *w, const unit *u)
{
    for (size_t i = 0; i < w->s->count; i++) {
        const sc_item *it = &w->s->items[i];
        if (!it->exists && strcmp(it->assembly, u->assembly) == 0 &&
            !(it->kind == SC_ASSEMBLY && (u->mine || it->implied)))
            return true; /* an empty library is written only for a declared namespace */
    }
    return false;
}

/* A class the scan placed in one assembly but a user's type library of another declares. */
static void match_classes_elsewhere(writer *w, unit *units, size_t count)
{
    for (size_t i = 0; i < w->s->count; i++) {
        const sc_item *it = &w->s->items[i];
        if (it->kind != SC_CLASS || it->exists)
            continue;
        for (size_t k = 0; k < count; k++)
            if (units[k].user && tl_class(units[k].user, it->name)) {
                match_typelib(w, &units[k], units[k].user, false, it->name);
                break;
            }
    }
}

static wf_status write_unit(writer *w, unit *u, wf_error *err)
{
    wf_status st = plan_unit(w, u, err);
    if (st != WF_OK || !unit_needs_file(w, u))
        return st;
    out_file *f = new_out(w, u->tl_path, err);
    if (!f)
        return WF_E_NOMEM;
    if (u->mine) {
        st = extend_typelib(w, u, &f->text, err);
    } else {
        part_text(w, u, new_typelib_part, NULL, &f->text);
    }
    if (st == WF_OK)
        st = write_c(w, u, err);
    if (st == WF_OK)
        count_new(w, u);
    return st;
}

static void unit_fini(unit *u)
{
    wfl_typelib_destroy(u->user);
    wfl_typelib_destroy(u->mine);
    wf_free(u->mine_text);
    wf_strmap_destroy(u->symbols);
}

/* Check, then write every planned file; the Makefile when there is none. */
static wf_status flush(writer *w, wf_error *err)
{
    char mk[4200];
    snprintf(mk, sizeof mk, "%s/Makefile", w->s->dir);
    struct stat sb;
    bool any_c = false;
    for (size_t i = 0; i < w->file_count; i++) {
        size_t n = strlen(w->files[i].path);
        any_c |= n > 2 && strcmp(w->files[i].path + n - 2, ".c") == 0;
        if (w->files[i].text.oom)
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    if (any_c && stat(mk, &sb) != 0) {
        out_file *f = new_out(w, mk, err);
        if (!f)
            return WF_E_NOMEM;
        wf_buf_adds(&f->text, MAKEFILE);
    }
    for (size_t i = 0; i < w->file_count; i++) {
        wf_status st =
            wfc_write_atomic(w->files[i].path, w->files[i].text.data, w->files[i].text.len, err);
        if (st != WF_OK)
            return st;
        w->res->files_written++;
    }
    return WF_OK;
}

wf_status wfc_scaffold_write(wfc_scaffold *s, wfc_scaffold_result *out, wf_error *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < s->count; i++) {
        wf_status st = check_assembly_name(&s->items[i], err);
        if (st != WF_OK)
            return st;
    }
    struct stat sb;
    if (stat(s->dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return wf_error_set(err, WF_E_IO, &(wf_loc){s->dir, 0, 0},
                            "the scaffold directory is not a directory");
    size_t scanned = s->count;
    for (size_t i = 0; i < scanned; i++) { /* every assembly an item lives in gets a unit */
        size_t before = s->count;
        size_t a =
            wfc__sc_add(s, SC_ASSEMBLY, s->items[i].assembly, NULL, NULL, s->items[i].assembly,
                        NULL, SC_GUESS, s->items[i].source, s->items[i].line, s->items[i].col);
        if (a != (size_t)-1 && s->count > before)
            s->items[a].implied = true;
    }
    writer w = {.s = s, .res = out, .types = wf_types_create()};
    size_t n = 0;
    for (size_t i = 0; i < s->count; i++)
        n += s->items[i].kind == SC_ASSEMBLY;
    unit *units = wf_calloc(n + 1, sizeof *units);
    wf_status st = w.types && units ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    size_t used = 0;
    for (size_t i = 0; i < s->count && st == WF_OK; i++) { /* 1. what exists, all of it */
        if (s->items[i].kind != SC_ASSEMBLY)
            continue;
        unit *u = &units[used++];
        u->assembly = s->items[i].assembly;
        u->symbols = wf_strmap_create(NULL);
        st = u->symbols ? load_existing(&w, u, err)
                        : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    if (st == WF_OK)
        match_classes_elsewhere(&w, units, used);
    for (size_t i = 0; i < used && st == WF_OK; i++) /* 2. what is new, per assembly */
        st = write_unit(&w, &units[i], err);
    for (size_t i = 0; i < used; i++)
        unit_fini(&units[i]);
    wf_free(units);
    if (st == WF_OK && s->nomem)
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (st == WF_OK)
        st = flush(&w, err);
    for (size_t i = 0; i < w.file_count; i++)
        wf_buf_fini(&w.files[i].text);
    wf_free(w.files);
    wf_types_destroy(w.types);
    return st;
}

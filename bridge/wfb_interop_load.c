/* wfb_interop_load.c — the load half of the Interop kind: resolve ActivityType through the
 * type library on the library path, surface the legacy type's properties as arguments the way
 * WF4's Interop did (docs/semantics.md §6), report every bad attribute with its location, and
 * build the legacy definition the executor runs (the one place where legacy types become
 * modern argument types). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/wf_mem.h"
#include "../legacy/wfl_exec.h"
#include "../legacy/wfl_typelib.h"
#include "wfb_interop_int.h"

enum { IO_ACTIVITY_TYPE, IO_ARGS }; /* as in wfb_interop.c */

#define WF3_NS "http://schemas.microsoft.com/winfx/2006/xaml/workflow"
#define X_NS "http://schemas.microsoft.com/winfx/2006/xaml"
#define HOST_NAME "InteropHost"

static void type_destroy(void *data)
{
    wfb_io_type *t = data;
    if (!t)
        return;
    wfl_exec_destroy(atomic_load(&t->spare));
    wfl_definition_destroy(t->def);
    for (size_t i = 0; i < t->arg_count; i++)
        wf_free((char *)t->args[i].prop);
    wf_free(t->args);
    wf_free((char *)t->subtree);
    wf_free((char *)t->type_name);
    wf_free(t);
}

/* Names written into the host definition: identifiers (and dots for assemblies). */
static bool plain_name(const char *s, bool dots)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && !(dots && (*s == '.' || *s == '-')))
            return false;
    return true;
}

static bool is_reserved(const char *name)
{
    return strcmp(name, "ActivityType") == 0 || strcmp(name, "ActivityProperties") == 0 ||
           strcmp(name, "ActivityMetaProperties") == 0;
}

/* WF4: a property named like one of Interop's own, or a pair P / POut, renames every In
 * argument to PIn. `Name` (the metadata property) takes part. */
static bool names_clash(const wfl_tl_activity *act)
{
    size_t n = wfl_tl_activity_prop_count(act);
    for (size_t i = 0; i <= n; i++) {
        const char *p = i < n ? wfl_tl_activity_prop(act, i)->name : "Name";
        if (is_reserved(p))
            return true;
        size_t len = strlen(p);
        for (size_t j = 0; j <= n; j++) {
            const char *q = j < n ? wfl_tl_activity_prop(act, j)->name : "Name";
            if (strlen(q) == len + 3 && strncmp(q, p, len) == 0 && strcmp(q + len, "Out") == 0)
                return true;
        }
    }
    return false;
}

/* The argument list "Sku, SkuOut, ..." for messages. */
static void list_args(const wfl_tl_activity *act, bool clash, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < wfl_tl_activity_prop_count(act) && used < size; i++) {
        const wfl_tl_prop *p = wfl_tl_activity_prop(act, i);
        int n = p->dir == WFL_TL_RETURN
                    ? snprintf(buf + used, size - used, "%s%sOut", used ? ", " : "", p->name)
                    : snprintf(buf + used, size - used, "%s%s%s, %sOut", used ? ", " : "",
                               p->name, clash ? "In" : "", p->name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (used < size)
        snprintf(buf + used, size - used, "%sName", used ? ", " : "");
}

static wf_status add_arg(wfb_io_type *t, const char *prop, wfm_prop_kind dir, size_t param)
{
    wfb_io_arg *args = wf_realloc(t->args, (t->arg_count + 1) * sizeof *args);
    if (!args)
        return WF_E_NOMEM;
    t->args = args;
    char *copy = wf_strdup(prop);
    if (!copy)
        return WF_E_NOMEM;
    t->args[t->arg_count++] = (wfb_io_arg){copy, dir, param, SIZE_MAX, NULL, SIZE_MAX};
    return WF_OK;
}

/* One property: In `P` (or `PIn`) unless Direction="Return", and Out `POut`. A composite's
 * Out property takes no value in (the attribute is accepted and not given to the body), and
 * the Out of its In property echoes the In (as wfl_act_composite.c copies them). */
static wf_status bind_prop(wfm_load *load, wfm_node *node, wfb_io_type *t, const wfl_tl_prop *p,
                           bool clash, bool composite)
{
    char name[300];
    size_t idx, in_idx = SIZE_MAX;
    wf_status rc;
    if (p->dir != WFL_TL_RETURN) {
        snprintf(name, sizeof name, "%s%s", p->name, clash ? "In" : "");
        rc = wfm_load_bind_attr(load, node, IO_ARGS, name, WFM_PROP_IN, p->type, &in_idx);
        if (rc == WF_OK && in_idx != SIZE_MAX && !(composite && p->dir == WFL_TL_OUT))
            rc = add_arg(t, p->name, WFM_PROP_IN, in_idx);
        if (rc != WF_OK)
            return rc;
    }
    snprintf(name, sizeof name, "%sOut", p->name);
    rc = wfm_load_bind_attr(load, node, IO_ARGS, name, WFM_PROP_OUT, p->type, &idx);
    if (rc == WF_OK && idx != SIZE_MAX)
        rc = add_arg(t, p->name, WFM_PROP_OUT, idx);
    if (rc == WF_OK && idx != SIZE_MAX && composite && p->dir == WFL_TL_IN) {
        t->args[t->arg_count - 1].echo_of = p;
        t->args[t->arg_count - 1].echo_param = in_idx;
    }
    return rc;
}

/* Report the first error of a legacy load at the Interop, with what it names. */
static void report_legacy(wfm_load *load, wfm_node *node, const char *what, const wf_error *e)
{
    char where[300] = "";
    if (e->file[0] && e->line)
        snprintf(where, sizeof where, " (%s:%u:%u)", e->file, e->line, e->col);
    else if (e->file[0])
        snprintf(where, sizeof where, " (%s)", e->file);
    /* a type library missing from the path is WF_E_NOLIB, as in a XOML file */
    wf_status code = e->code == WF_E_NOTFOUND ? WF_E_NOLIB : e->code;
    wfm_load_error(load, node, code, "Interop: %s: %s%s", what, e->message, where);
}

/* The definition the executor runs for a leaf: a workflow holding just the activity. */
static wf_status host_definition(wfm_load *load, wfm_node *node, const char *assembly,
                                 const char *type, const char *name, wfb_io_type *t)
{
    char xoml[1024];
    int n = snprintf(xoml, sizeof xoml,
                     "<SequentialWorkflowActivity x:Name=\"" HOST_NAME "\" xmlns=\"" WF3_NS
                     "\" xmlns:x=\"" X_NS "\" xmlns:ns0=\"clr-namespace:Interop;Assembly=%s\">"
                     "<ns0:%s x:Name=\"%s\"/></SequentialWorkflowActivity>",
                     assembly, type, name);
    if (n < 0 || (size_t)n >= sizeof xoml) {
        wfm_load_error(load, node, WF_E_LIMIT, "Interop: names too long");
        return WF_OK;
    }
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = wfm_load_types(load);
    lo.libpath = wfm_load_libpath(load);
    lo.no_native = wfm_load_validate_only(load);
    lo.no_auto_rules = true;
    wf_error e = WF_ERROR_INIT;
    char label[300];
    snprintf(label, sizeof label, "interop:%s", type);
    wf_status rc = wfl_definition_load_mem(&lo, label, xoml, (size_t)n, &t->def, &e);
    if (rc == WF_E_NOMEM)
        return rc;
    if (rc != WF_OK) {
        report_legacy(load, node, type, &e);
        return WF_OK;
    }
    t->subtree = wf_strdup(name);
    return t->subtree ? WF_OK : WF_E_NOMEM;
}

/* The definition for a composite: its XOML file, beside the type library (never elsewhere),
 * whose root carries x:Class "NS.TypeName"; it runs as a whole, its root's properties being
 * the type's. */
static wf_status composite_definition(wfm_load *load, wfm_node *node, const wfl_typelib *tl,
                                      const wfl_tl_activity *act, wfb_io_type *t)
{
    const char *file = wfl_typelib_file(tl);
    const char *slash = strrchr(file, '/');
    char path[1024];
    int n = snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - file + 1) : 0, file,
                     wfl_tl_activity_definition(act));
    if (n < 0 || (size_t)n >= sizeof path) {
        wfm_load_error(load, node, WF_E_LIMIT, "Interop: path of '%s' too long",
                       wfl_tl_activity_definition(act));
        return WF_OK;
    }
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = wfm_load_types(load);
    lo.libpath = wfm_load_libpath(load);
    lo.no_native = wfm_load_validate_only(load);
    wf_error e = WF_ERROR_INIT;
    wf_status rc = wfl_definition_load_file(&lo, path, &t->def, &e);
    if (rc == WF_E_NOMEM)
        return rc;
    if (rc != WF_OK) {
        report_legacy(load, node, wfl_tl_activity_name(act), &e);
        return WF_OK;
    }
    const char *cls = wfl_definition_class_name(t->def);
    const char *dot = cls ? strrchr(cls, '.') : NULL;
    if (!cls || strcmp(dot ? dot + 1 : cls, wfl_tl_activity_name(act)) != 0)
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "Interop: the root of %s must carry x:Class=\"NS.%s\" (it has %s)", path,
                       wfl_tl_activity_name(act), cls ? cls : "none");
    return WF_OK;
}

/* "p:TypeName" -> the assembly p maps to and TypeName; reports and returns false if bad. */
static bool split_type(wfm_load *load, wfm_node *node, const char *text, const char **assembly,
                       const char **type)
{
    const char *colon = strchr(text, ':');
    char prefix[128];
    if (!colon || colon == text || (size_t)(colon - text) >= sizeof prefix) {
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "Interop: ActivityType '%s' needs a prefix that maps "
                       "clr-namespace:NS;Assembly=NAME",
                       text);
        return false;
    }
    memcpy(prefix, text, (size_t)(colon - text));
    prefix[colon - text] = '\0';
    *assembly = wfm_load_assembly(load, node, prefix);
    *type = colon + 1;
    if (!*assembly) {
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "Interop: the prefix '%s' of ActivityType '%s' does not map "
                       "clr-namespace:NS;Assembly=NAME",
                       prefix, text);
        return false;
    }
    if (!plain_name(*assembly, true) || !plain_name(*type, false)) {
        wfm_load_error(load, node, WF_E_NAME, "Interop: ActivityType '%s' is not a type name",
                       text);
        return false;
    }
    return true;
}

static wf_status bind_type(wfm_load *load, wfm_node *node, const wfl_typelib *tl,
                           const wfl_tl_activity *act, const char *assembly, const char *type)
{
    wfb_io_type *t = wf_calloc(1, sizeof *t);
    if (!t)
        return WF_E_NOMEM;
    wfm_node_set_data(node, t, type_destroy);
    t->type_name = wf_strdup(type);
    if (!t->type_name)
        return WF_E_NOMEM;
    bool clash = names_clash(act);
    for (size_t i = 0; i < wfl_tl_activity_prop_count(act); i++) {
        wf_status rc = bind_prop(load, node, t, wfl_tl_activity_prop(act, i), clash,
                                 wfl_tl_activity_definition(act) != NULL);
        if (rc != WF_OK)
            return rc;
    }
    const char *name = wfm_load_claim_attr(load, node, "Name"); /* the metadata property */
    wf_loc at = WF_LOC_NONE;
    bool bad = false;
    for (const char *u; (u = wfm_load_next_attr(load, node, &at)) != NULL;) {
        char list[512];
        list_args(act, clash, list, sizeof list);
        wfm_load_error_at(load, node, at, WF_E_SCHEMA,
                          "Interop: unknown property '%s' of legacy type %s (it has: %s)", u,
                          wfl_tl_activity_name(act), list);
        bad = true;
    }
    if (name && !plain_name(name, false)) {
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "Interop: Name '%s' is not a legacy activity name (letters, digits, _)",
                       name);
        return WF_OK;
    }
    if (!name || strcmp(name, HOST_NAME) == 0)
        name = type;
    if (bad)
        return WF_OK;
    if (wfl_tl_activity_definition(act))
        return composite_definition(load, node, tl, act, t);
    return host_definition(load, node, assembly, type, name, t);
}

/* When a type library is missing from the path but lies beside the definition (where convert
 * writes the sidecars of the composites it generates), the way to fix it; "" otherwise. */
static const char *beside_hint(const wfm_node *node, const char *assembly, char *buf,
                               size_t cap)
{
    wf_loc at = wfm_node_loc(node);
    const char *slash = at.file ? strrchr(at.file, '/') : NULL;
    int dir_len = slash ? (int)(slash - at.file) : 1;
    const char *dir = slash ? at.file : ".";
    char path[4096];
    int n = snprintf(path, sizeof path, "%.*s/%s.activities.xml", dir_len, dir, assembly);
    struct stat st;
    if (!at.file || n < 0 || (size_t)n >= sizeof path || stat(path, &st) != 0 ||
        !S_ISREG(st.st_mode))
        return "";
    snprintf(buf, cap, " (it is in %.*s, beside the definition: add that directory to --lib-path)",
             dir_len, dir);
    return buf;
}

wf_status wfb__io_bind(wfm_load *load, wfm_node *node)
{
    if (wfm_node_count(node, IO_ARGS)) {
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "Interop: write the legacy properties as attributes, not "
                       "Interop.ActivityProperties");
        return WF_OK;
    }
    const wf_value *lit = wfm_node_literal(node, IO_ACTIVITY_TYPE);
    if (!lit || lit->type->kind != WF_K_STRING)
        return WF_OK; /* the loader reports a missing ActivityType */
    const char *assembly, *type;
    if (!split_type(load, node, wf_value_str(lit), &assembly, &type))
        return WF_OK;
    const wf_libpath *path = wfm_load_libpath(load);
    if (!path) {
        wfm_load_error(load, node, WF_E_NOLIB,
                       "Interop: type library '%s' not found (no library path configured)",
                       assembly);
        return WF_OK;
    }
    wfl_typelib *tl = NULL;
    wf_error e = WF_ERROR_INIT;
    wf_status rc = (wfm_load_validate_only(load) ? wfl_typelib_load_decl : wfl_typelib_load)(
        path, wfm_load_types(load), assembly, &tl, NULL, &e);
    if (rc == WF_E_NOMEM)
        return rc;
    if (rc == WF_E_NOTFOUND) {
        char hint[600];
        wfm_load_error(load, node, WF_E_NOLIB, "Interop: %s%s", e.message,
                       beside_hint(node, assembly, hint, sizeof hint));
        return WF_OK;
    }
    if (rc != WF_OK) {
        char what[200];
        snprintf(what, sizeof what, "type library '%s'", assembly);
        report_legacy(load, node, what, &e);
        return WF_OK;
    }
    const wfl_tl_activity *act = wfl_typelib_activity(tl, type);
    if (!act) {
        wfm_load_error(load, node, WF_E_NAME,
                       "Interop: type library '%s' declares no activity type '%s'", assembly,
                       type);
        wfl_typelib_destroy(tl);
        return WF_OK;
    }
    rc = bind_type(load, node, tl, act, assembly, type);
    wfl_typelib_destroy(tl);
    return rc;
}

/* Arguments are copied in and out by index, not by name, on every execution: find the
 * indexes once on an executor, kept as the first spare. */
static wf_status index_outputs(wfm_load *load, wfm_node *node, wfb_io_type *t)
{
    wfl_exec_opts o = WFL_EXEC_OPTS_INIT;
    o.instance_id = t->instance_id;
    wfl_exec *ex = NULL;
    wf_error e = WF_ERROR_INIT;
    wf_status rc = wfl_exec_create(t->def, t->subtree, &o, &ex, &e);
    if (rc != WF_OK) {
        if (rc != WF_E_NOMEM)
            report_legacy(load, node, t->type_name, &e);
        return rc == WF_E_NOMEM ? rc : WF_OK;
    }
    for (size_t i = 0; i < t->arg_count; i++)
        for (size_t k = 0; k < wfl_exec_output_count(ex); k++)
            if (strcmp(wfl_exec_output_name(ex, k), t->args[i].prop) == 0)
                t->args[i].output = k;
    atomic_store(&t->spare, ex);
    return WF_OK;
}

/* The modern TransactionScope the node is inside, or NULL. */
static const wfm_node *modern_transaction(const wfm_node *node)
{
    for (const wfm_node *p = wfm_node_parent(node); p; p = wfm_node_parent(p)) {
        const wfm_kind *k = wfm_node_kind(p);
        if (strcmp(wfm_kind_spec_of(k)->name, "TransactionScope") == 0 &&
            strcmp(wfm_kind_ns(k), WFM_NS_ACTIVITIES) == 0)
            return p;
    }
    return NULL;
}

/* A legacy TransactionScope inside a modern one would nest a legacy checkpoint inside a
 * modern transaction neither side knows of: refused (listed in samples/mixed/README.md). */
static void check_transactions(wfm_load *load, const wfm_node *node, const wfb_io_type *t)
{
    const wfm_node *scope = modern_transaction(node);
    if (!scope)
        return;
    wfl_activity_info a;
    for (size_t i = 0; wfl_definition_activity(t->def, i, &a); i++) {
        if (!a.transaction_scope)
            continue;
        wfm_load_error(load, node, WF_E_UNSUPPORTED,
                       "Interop: the legacy TransactionScope '%s' (%s line %u) of %s cannot run "
                       "inside the modern TransactionScope '%s' (line %u)",
                       a.name, a.loc.file ? a.loc.file : "?", a.loc.line, t->type_name,
                       wfm_node_display_name(scope), wfm_node_loc(scope).line);
        return;
    }
}

wf_status wfb__io_prepare(wfm_load *load, wfm_node *node)
{
    wfb_io_type *t = wfm_node_data(node);
    if (!t || !t->def)
        return WF_OK;
    check_transactions(load, node, t);
    /* node ids exist from now on */
    const char *id = wfm_node_id(node);
    if (!id)
        return WF_E_NOMEM;
    snprintf(t->instance_id, sizeof t->instance_id, "interop-%s", id);
    return index_outputs(load, node, t);
}

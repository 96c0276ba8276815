/* wfc_acttype.c — custom composite activities (a type library's <ActivityType Definition=
 * "X.xoml">) become XAML activity types: the composite's body converts to its own
 * <Activity x:Class> file, generated beside the XAML as NAME.xaml, and the activity that uses
 * it becomes <tN:NAME Arg="[...]"/> with its arguments per WF4 convention (docs/convert.md
 * "Custom composites", docs/architecture.md "XAML activity types"). */
#include <stdio.h>
#include <string.h>

#include "../legacy/wfl_registry.h"
#include "../legacy/wfl_typelib.h"
#include "wfc_convert_int.h"

#define W (&c->w)

/* How many composites may use one another while converting (the legacy loader's own limit). */
#define MAX_DEPTH 8

/* The prefix of xmlns "clr-namespace:NS;assembly=ASM", assigned on first use. */
static const char *type_prefix(wfc__conv *c, const char *cls, const char *assembly, wf_loc at)
{
    const char *dot = strrchr(cls, '.');
    char ns[sizeof c->tns[0].ns];
    snprintf(ns, sizeof ns, "clr-namespace:%.*s;assembly=%s", dot ? (int)(dot - cls) : 0, cls,
             assembly);
    for (size_t i = 0; i < c->tns_count; i++)
        if (strcmp(c->tns[i].ns, ns) == 0)
            return c->tns[i].prefix;
    if (c->tns_count == WFC__MAX_TNS) {
        wfc__diag(c, WFC_ERROR, at, "composite-type",
                  "more than %d namespaces of activity types", WFC__MAX_TNS);
        return NULL;
    }
    wfc__tns *t = &c->tns[c->tns_count];
    snprintf(t->prefix, sizeof t->prefix, "t%zu", c->tns_count);
    memcpy(t->ns, ns, sizeof ns);
    c->tns_count++;
    return t->prefix;
}

/* Keep a generated file (taking text over) unless one of that name is kept already (each use
 * of a type converts it again; the text is the same). */
static void keep_file(wfc__conv *c, char *name, char *text, size_t len)
{
    for (size_t i = 0; i < c->side.count; i++)
        if (strcmp(c->side.items[i].name, name) == 0) {
            wf_free(name);
            wf_free(text);
            return;
        }
    wfc_sidecar *items = wf_realloc(c->side.items, (c->side.count + 1) * sizeof *items);
    if (!items) {
        wf_free(name);
        wf_free(text);
        c->nomem = true;
        return;
    }
    c->side.items = items;
    c->side.items[c->side.count++] = (wfc_sidecar){name, text, len, false};
}

/* The composite's Definition file: beside its type library. */
static void definition_path(const wfl_type *t, char *buf, size_t size)
{
    const char *tl = wfl_typelib_file(t->typelib);
    const char *slash = strrchr(tl, '/');
    snprintf(buf, size, "%.*s%s%s", slash ? (int)(slash - tl) : 0, tl, slash ? "/" : "",
             wfl_tl_activity_definition(t->custom));
}

/* <tN:NAME DisplayName=... Arg="[...]"/>: In arguments read the activity's DP, Out write it,
 * InOut both (the directions the body's conversion gave its arguments). */
static void write_use(wfc__conv *c, const wfl_node *n, const char *prefix, const char *name,
                      const wfc__targ *targs, size_t count)
{
    const wfl_type *t = wfl_node_type(n);
    char elem[300];
    snprintf(elem, sizeof elem, "%s:%s", prefix, name);
    wfc_xw_open(W, elem);
    wfc_xw_attr(W, "DisplayName", wfl_node_name(n));
    for (size_t i = 0; i < count; i++) {
        const wfl_tl_prop *p = wfl_tl_activity_find_prop(t->custom, targs[i].name);
        if (!p)
            continue;
        wf_buf e;
        wf_buf_init(&e);
        wf_buf_addc(&e, '[');
        bool ok = wfc__activity_arg(c, n, p, targs[i].dir != WFL_TL_OUT,
                                    targs[i].dir != WFL_TL_IN, &e);
        wf_buf_addc(&e, ']');
        if (e.oom)
            c->nomem = true;
        else if (ok)
            wfc_xw_attr(W, targs[i].name, e.data);
        wf_buf_fini(&e);
    }
    wfc_xw_close(W);
}

void wfc__acttype(wfc__conv *c, const wfl_node *n)
{
    const wfl_type *t = wfl_node_type(n);
    const char *cls = wfl_definition_class_name(t->composite);
    if (!cls)
        cls = wfl_tl_activity_name(t->custom);
    const char *dot = strrchr(cls, '.');
    const char *name = dot ? dot + 1 : cls;
    wf_loc at = wfl_node_loc(n);
    if (c->depth >= MAX_DEPTH) {
        wfc__diag(c, WFC_ERROR, at, "composite-type",
                  "activity type %s is nested more than %d composites deep", cls, MAX_DEPTH);
        return;
    }
    char path[1024], out_name[300];
    definition_path(t, path, sizeof path);
    snprintf(out_name, sizeof out_name, "%s.xaml", name);
    wfc__activity(c, n, cls, WFC_ACT_MAPPED);
    wfc_opts o = *c->opts;
    o.output_name = out_name;
    o.rules_path = NULL;
    wfc_report *r = NULL;
    wf_error e = WF_ERROR_INIT;
    wfc_file *sub = wfc_report_create(&r, &e) == WF_OK ? wfc_report_add_file(r, path) : NULL;
    char *xaml = NULL;
    size_t len = 0;
    wfc_sidecars side = WFC_SIDECARS_INIT;
    wfc__targ targs[WFC__MAX_TARGS];
    size_t targ_count = 0;
    wf_status st = sub ? wfc__convert_path(&o, path, c->depth + 1, sub, &xaml, &len, &side, targs,
                                           &targ_count, &e)
                       : WF_E_NOMEM;
    if (st == WF_E_NOMEM) {
        c->nomem = true;
    } else if (st != WF_OK) {
        wfc__diag(c, WFC_ERROR, at, "composite-type",
                  "activity type %s does not convert: %s:%u:%u: %s", cls,
                  *e.file ? e.file : path, e.line, e.col, e.message);
    } else {
        const char *prefix = type_prefix(c, cls, wfl_typelib_name(t->typelib), at);
        if (wfc_file_status(sub) == WFC_PARTIAL) { /* its body hosts something */
            wfc__diag(c, WFC_WARNING, at, "interop",
                      "activity type %s hosts part of its body through Interop (see its own "
                      "report)",
                      cls);
            if (c->pass == 2)
                wfc_file_set_status(c->file, WFC_PARTIAL);
        }
        if (prefix)
            write_use(c, n, prefix, name, targs, targ_count);
        if (c->pass == 2) {
            for (size_t i = 0; i < side.count; i++) /* what the type generated, e.g. Interop */
                keep_file(c, side.items[i].name, side.items[i].text, side.items[i].len);
            side.count = 0;
            char *copy = wf_strdup(out_name);
            if (!copy) {
                c->nomem = true;
                wf_free(xaml);
            } else {
                keep_file(c, copy, xaml, len);
            }
            xaml = NULL;
        }
    }
    wf_free(xaml);
    wfc_sidecars_free(&side);
    wfc_report_destroy(r);
}

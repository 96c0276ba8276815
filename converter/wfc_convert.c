/* wfc_convert.c — the converter's session: the walk over a legacy definition, run twice
 * (wfc_convert_int.h), dispatches every activity through the rule tables of the family files
 * (wfc_map_*.c: each WF3 activity with a WF4 equivalent becomes it, docs/semantics.md §7;
 * what has none is hosted through the Interop activity), then writes the document root and
 * its members and loads the result with the modern loader before anyone sees it. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../legacy/wfl_rules.h"
#include "../modern/wfm_runtime.h"
#include "wfc_convert_int.h"
#include "wfc_output.h"

#define W (&c->w)

/* ---- reporting ---------------------------------------------------------------------------- */
void wfc__diag(wfc__conv *c, wfc_severity sev, wf_loc at, const char *rule, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (sev == WFC_ERROR) {
        c->failed = true;
        if (c->first.code == WF_OK)
            wf_error_set(&c->first, WF_E_UNSUPPORTED, &at, "%s", msg);
    }
    if (c->pass != 2 || c->repeat)
        return;
    wfc_file_add_diag(c->file, sev, at.line, at.col, rule, "%s", msg);
    if (sev == WFC_REVIEW) /* a semantic difference someone has to look at */
        wfc_file_add_loss(c->file, WFC_LOSS_SEMANTICS, at.line, rule);
}

void wfc__activity(wfc__conv *c, const wfl_node *node, const char *modern_type, wfc_action action)
{
    if (c->pass != 2 || c->repeat)
        return;
    wfc_file_add_activity(c->file, wfl_node_name(node), wfl_node_type(node)->name, modern_type,
                          wfl_node_loc(node).line, action);
    /* name -> its (first) report entry + 1, for the pictures and the final check */
    size_t entry = wfc_file_activity_count(c->file); /* now one past the new entry */
    if (c->seen && !wf_strmap_get(c->seen, wfl_node_name(node)) &&
        wf_strmap_put(c->seen, wfl_node_name(node), (void *)(uintptr_t)entry) != WF_OK)
        c->nomem = true;
}

void wfc__loss(wfc__conv *c, wfc_loss_kind kind, const wfl_node *n, const char *what)
{
    if (c->pass == 2)
        wfc_file_add_loss(c->file, kind, wfl_node_loc(n).line, what);
}

wfl_kind wfc__kind_of(const wfl_node *n)
{
    return wfl_node_type(n)->kind;
}

bool wfc__is_alt_flow(const wfl_node *n)
{
    return (wfl_node_type(n)->flags & WFL_TF_ALT_FLOW) != 0;
}

const wfl_node *wfc__child_of_kind(const wfl_node *n, wfl_kind kind)
{
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        if (wfc__kind_of(wfl_node_child(n, i)) == kind)
            return wfl_node_child(n, i);
    return NULL;
}

/* Record that the walk read DP `name` of n (pass 2), for the ignored-property check. */
void wfc__consumed(wfc__conv *c, const wfl_node *n, const char *name)
{
    if (c->pass != 2 || !c->consumed)
        return;
    char key[300];
    snprintf(key, sizeof key, "%s\x1f%s", wfl_node_name(n), name);
    if (wf_strmap_put(c->consumed, key, (void *)n) != WF_OK)
        c->nomem = true;
}

void wfc__prop(wfc__conv *c, const wfl_node *n, const char *name, wfl_prop_info *out)
{
    const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(n), name);
    wfc__consumed(c, n, name);
    if (dp)
        wfl_node_prop(n, dp, out);
    else
        *out = (wfl_prop_info){.kind = WFL_PROP_UNSET};
}

const char *wfc__literal_str(wfc__conv *c, const wfl_node *n, const char *name)
{
    wfl_prop_info pi;
    wfc__prop(c, n, name, &pi);
    return pi.kind == WFL_PROP_LITERAL && pi.literal->type->kind == WF_K_STRING
               ? wf_value_str(pi.literal)
               : NULL;
}

/* ---- small writers --------------------------------------------------------------------------- */
void wfc__open_named(wfc__conv *c, const char *elem, const wfl_node *n)
{
    wfc_xw_open(W, elem);
    if (n)
        wfc_xw_attr(W, "DisplayName", wfl_node_name(n));
}

/* <ELEM DisplayName="name" ATTR="value" /> */
void wfc__leaf(wfc__conv *c, const char *elem, const wfl_node *n, const char *attr,
               const char *value)
{
    wfc__open_named(c, elem, n);
    wfc_xw_attr(W, attr, value);
    wfc_xw_close(W);
}

void wfc__type_attr(wfc__conv *c, const char *attr, const wf_type *t, wf_loc at)
{
    wf_buf b;
    wf_buf_init(&b);
    if (!wfc__xaml_type(t, &b))
        wfc__diag(c, WFC_ERROR, at, "type-unmapped", "type %s has no modern spelling", t->name);
    wfc_xw_attr(W, attr, b.data);
    wf_buf_fini(&b);
    const char *prefix, *ns = wfc__type_xmlns(t, &prefix);
    if (ns) {
        char name[32];
        snprintf(name, sizeof name, "xmlns:%s", prefix);
        wfc_xw_attr(W, name, ns);
    }
}

/* <ELEM x:TypeArguments="T">[expr]</ELEM> */
void wfc__argument(wfc__conv *c, const char *elem, const wf_type *t, const char *expr, wf_loc at)
{
    wfc_xw_open(W, elem);
    wfc__type_attr(c, "x:TypeArguments", t, at);
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addf(&b, "[%s]", expr);
    wfc_xw_text(W, b.data);
    wf_buf_fini(&b);
    wfc_xw_close(W);
}

void wfc__action_open(wfc__conv *c, const wf_type *t, const char *name, wf_loc at)
{
    wfc_xw_open(W, "ActivityAction");
    wfc__type_attr(c, "x:TypeArguments", t, at);
    wfc_xw_open(W, "ActivityAction.Argument");
    wfc_xw_open(W, "DelegateInArgument");
    wfc__type_attr(c, "x:TypeArguments", t, at);
    wfc_xw_attr(W, "Name", name);
    wfc_xw_close(W);
    wfc_xw_close(W);
}

void wfc__handler_body(wfc__conv *c, const char *elem, const wfl_node *h)
{
    wfc_xw_open(W, elem);
    wfc__open_named(c, "Sequence", h);
    wfc__write_variables(c, h, "Sequence");
    wfc__children(c, h);
    wfc_xw_close(W);
    wfc_xw_close(W);
}

void wfc__children(wfc__conv *c, const wfl_node *n)
{
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        if (!wfc__is_alt_flow(wfl_node_child(n, i)))
            wfc__emit(c, wfl_node_child(n, i));
}

/* ---- dispatch ------------------------------------------------------------------------------ */
/* The family tables, searched in this order; a kind in none of them is hosted through
 * Interop. A new family file adds its table here. */
static const wfc__family *const families[] = {
    &wfc__map_flow,   /* Sequence, IfElse, While, Parallel, Listen, Delay, Replicator */
    &wfc__map_fault,  /* faults, cancellation, compensation, transactions */
    &wfc__map_event,  /* HandleExternalEvent, CallExternalMethod */
    &wfc__map_state,  /* state machines */
    &wfc__map_custom, /* type-library activities, what only Interop hosts */
    &wfc__map_rules,  /* Policy */
    &wfc__map_service, /* ReceiveActivity */
};

static const wfc__rule not_expected = {
    .kind = WFL_KIND_ACTIVITY, .action = WFC_ACT_INTEROP, .why = "not expected here"};

static const wfc__rule *rule_of(wfl_kind kind)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (size_t i = 0; i < families[f]->count; i++)
            if (families[f]->rules[i].kind == kind)
                return &families[f]->rules[i];
    return &not_expected;
}

static void apply(wfc__conv *c, const wfc__rule *r, const wfl_node *n)
{
    if (!r->emit) {
        wfc__interop_wrap(c, n, r->why);
        return;
    }
    if (r->modern)
        wfc__activity(c, n, r->modern, r->action);
    r->emit(c, n);
}

void wfc__handlers_open(wfc__conv *c, const wfl_node *named, const wfl_node *ch,
                        const wfl_node *fh)
{
    if (ch) {
        wfc__open_named(c, "CancellationScope", named);
        wfc_xw_open(W, "CancellationScope.Body");
    }
    if (fh) {
        wfc__open_named(c, "TryCatch", named);
        wfc_xw_open(W, "TryCatch.Try");
    }
}

void wfc__handlers_close(wfc__conv *c, const wfl_node *ch, const wfl_node *fh)
{
    if (fh) {
        wfc_xw_close(W);
        wfc__catches(c, fh);
        wfc_xw_close(W);
    }
    if (ch) {
        wfc_xw_close(W);
        wfc__handler_prop(c, "CancellationScope.CancellationHandler", ch,
                          "CancellationScope.Handler");
        wfc_xw_close(W);
    }
}

/* n's modern form, inside a TryCatch / CancellationScope for the FaultHandlers /
 * CancellationHandler its rule does not place itself. */
void wfc__emit(wfc__conv *c, const wfl_node *n)
{
    if (wfl_node_is_disabled(n)) {
        wfc__activity(c, n, "(none)", WFC_ACT_MAPPED);
        wfc__diag(c, WFC_INFO, wfl_node_loc(n), "disabled-activity",
                  "'%s' is disabled (Enabled=\"False\") and does not run; it is left out",
                  wfl_node_name(n));
        return;
    }
    if (wfc__literal_str(c, n, "Description"))
        wfc__loss(c, WFC_LOSS_DESIGNER, n, "Description");
    const wfc__rule *r = rule_of(wfc__kind_of(n));
    const wfl_node *fh =
        (r->flags & WFC__OWN_FAULTS) ? NULL : wfc__child_of_kind(n, WFL_KIND_FAULT_HANDLERS);
    const wfl_node *ch =
        (r->flags & WFC__OWN_CANCEL) ? NULL : wfc__child_of_kind(n, WFL_KIND_CANCELLATION_HANDLER);
    bool comp = (r->flags & WFC__DEFAULT_COMP) && wfc__default_comp_open(c, n);
    wfc__handlers_open(c, NULL, ch, fh);
    apply(c, r, n);
    wfc__handlers_close(c, ch, fh);
    if (comp)
        wfc__default_comp_close(c);
}

/* ---- the file ------------------------------------------------------------------------------ */
static void copy_legacy_diags(wfc__conv *c, wf_diags *diags)
{
    wf_diags_sort(diags);
    for (size_t i = 0; i < wf_diags_count(diags); i++) {
        const wf_diag *d = wf_diags_get(diags, i);
        bool error = d->severity == WF_SEV_ERROR;
        wfc_file_add_diag_in(c->file, d->error.file, error ? WFC_ERROR : WFC_WARNING, d->error.line,
                             d->error.col, error ? "legacy-load" : "legacy-warning",
                             d->error.message);
        /* x:Code is code nobody converts; every other tolerated item is designer data. */
        bool code = strstr(d->error.message, "x:Code") != NULL;
        if (!error)
            wfc_file_add_loss(c->file, code ? WFC_LOSS_CODE : WFC_LOSS_DESIGNER, d->error.line,
                              d->error.message);
    }
}

static wfl_tl_dir arg_dir(const wfc__slot *s)
{
    if (!s || !s->written)
        return WFL_TL_IN;
    return s->read ? WFL_TL_INOUT : WFL_TL_OUT;
}

static wfc__slot *arg_slot(wfc__conv *c, const char *name)
{
    for (size_t i = 0; i < c->slot_count; i++)
        if (c->slots[i].is_arg && strcmp(c->slots[i].name, name) == 0)
            return &c->slots[i];
    return NULL;
}

/* A root argument's direction: what the body does with it, except that a composite's
 * property declared In or Out in its type library keeps that direction (docs/formats.md
 * "Composite activity types"): an In one written by the body changes only the body's copy,
 * an Out one read by the body starts from its default. */
static wfl_tl_dir member_dir(wfc__conv *c, const char *name)
{
    const wfl_tl_class *cls = c->depth ? wfl_node_type(c->root)->code_beside : NULL;
    const wfl_tl_prop *p = cls ? wfl_tl_class_find_prop(cls, name) : NULL;
    if (p && (p->dir == WFL_TL_IN || p->dir == WFL_TL_OUT))
        return p->dir;
    return arg_dir(arg_slot(c, name));
}

static void members(wfc__conv *c)
{
    size_t n = wfl_definition_param_count(c->def);
    if (n == 0)
        return;
    wfc_xw_open(W, "x:Members");
    for (size_t i = 0; i < n; i++) {
        wfl_param_info p;
        wfl_definition_param(c->def, i, &p);
        wfl_tl_dir dir = member_dir(c, p.name);
        wf_buf t;
        wf_buf_init(&t);
        wf_buf_adds(&t, dir == WFL_TL_IN    ? "InArgument("
                        : dir == WFL_TL_OUT ? "OutArgument("
                                            : "InOutArgument(");
        if (!wfc__xaml_type(p.type, &t))
            wfc__diag(c, WFC_ERROR, wfl_node_loc(c->root), "type-unmapped",
                      "property %s has type %s, which has no modern spelling", p.name,
                      p.type->name);
        wf_buf_addc(&t, ')');
        wfc_xw_open(W, "x:Property");
        wfc_xw_attr(W, "Name", p.name);
        wfc_xw_attr(W, "Type", t.data);
        wfc_xw_close(W);
        wf_buf_fini(&t);
    }
    wfc_xw_close(W);
}

/* Root properties the XOML gives a value, or whose code-beside class declares a Default,
 * become argument defaults, written as WF4 does: xmlns:this="clr-namespace:NS" and
 * this:Class.Name="[value]" on the root. An Out argument takes no default (WF4 has none). */
static void root_defaults(wfc__conv *c, const char *cls)
{
    const char *full = cls ? cls : wfl_node_name(c->root);
    const char *dot = strrchr(full, '.');
    const wfl_tl_class *code = wfl_node_type(c->root)->code_beside;
    bool any = false;
    for (size_t i = 0; i < wfl_definition_param_count(c->def); i++) {
        wfl_param_info p;
        wfl_definition_param(c->def, i, &p);
        wfl_prop_info pi;
        wfc__prop(c, c->root, p.name, &pi);
        const wfl_tl_prop *tp = code ? wfl_tl_class_find_prop(code, p.name) : NULL;
        const wf_value *value = pi.kind == WFL_PROP_LITERAL ? pi.literal
                                : tp && tp->has_default ? &tp->default_value
                                                        : NULL;
        if (!value || (pi.kind != WFL_PROP_LITERAL && member_dir(c, p.name) == WFL_TL_OUT))
            continue;
        if (!any)
            wfc_xw_attrf(W, "xmlns:this", "clr-namespace:%.*s", dot ? (int)(dot - full) : 0, full);
        any = true;
        wf_buf v;
        wf_buf_init(&v);
        wf_buf_addc(&v, '[');
        wfl_rules_literal_text(value, &v);
        wf_buf_addc(&v, ']');
        char attr[300];
        snprintf(attr, sizeof attr, "this:%s.%s", dot ? dot + 1 : full, p.name);
        wfc_xw_attr(W, attr, v.data);
        c->nomem |= v.oom;
        wf_buf_fini(&v);
    }
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The whole document: declaration, provenance comment, <Activity> with its namespaces and
 * x:Members, then the body written by pass 2. False when memory ran out. */
static bool document(wfc__conv *c, const char *source, wf_buf *out)
{
    wfc_xw_init(W, out, 0);
    wfc_xw_declaration(W);
    char note[600];
    snprintf(note, sizeof note, "converted from %s by wfbridge convert %s", base_name(source),
             WFC_VERSION);
    wfc_xw_comment(W, note);
    const char *cls = wfl_definition_class_name(c->def);
    wfc_xw_open(W, "Activity");
    wfc_xw_attr(W, "x:Class", cls ? cls : wfl_node_name(c->root));
    wfc_xw_attr(W, "xmlns", "http://schemas.microsoft.com/netfx/2009/xaml/activities");
    wfc_xw_attr(W, "xmlns:s", "clr-namespace:System;assembly=mscorlib");
    wfc_xw_attr(W, "xmlns:scg", "clr-namespace:System.Collections.Generic;assembly=mscorlib");
    wfc_xw_attr(W, "xmlns:x", "http://schemas.microsoft.com/winfx/2006/xaml");
    if (c->uses_services)
        wfc_xw_attr(W, "xmlns:p", "http://schemas.microsoft.com/netfx/2009/xaml/servicemodel");
    if (c->uses_services && wfl_definition_service_name(c->def)) /* WorkflowServiceAttributes */
        wfc_xw_attr(W, "p:WorkflowService.Name", wfl_definition_service_name(c->def));
    for (size_t i = 0; i < c->lib_count; i++) {
        char attr[32];
        snprintf(attr, sizeof attr, "xmlns:%s", c->libs[i].prefix);
        wfc_xw_attrf(W, attr, "clr-namespace:%s;assembly=%s", wfl_typelib_name(c->libs[i].tl),
                     c->libs[i].assembly);
    }
    for (size_t i = 0; i < c->tns_count; i++) {
        char attr[32];
        snprintf(attr, sizeof attr, "xmlns:%s", c->tns[i].prefix);
        wfc_xw_attr(W, attr, c->tns[i].ns);
    }
    for (size_t i = 0; i < c->hosted_count; i++) {
        char attr[32];
        const char *dot = cls ? strrchr(cls, '.') : NULL;
        snprintf(attr, sizeof attr, "xmlns:%s", c->hosted[i].prefix);
        wfc_xw_attrf(W, attr, "clr-namespace:%.*s;assembly=%s", dot ? (int)(dot - cls) : 7,
                     dot ? cls : "Interop", c->hosted[i].assembly);
    }
    root_defaults(c, cls);
    members(c);
    wfc_xw_markup(W, c->body.data); /* written by pass 2 at depth 1 */
    wfc_xw_close(W);
    return wfc_xw_finish(W);
}

/* Nothing may vanish silently: every activity the walk did not report (outside disabled
 * subtrees) is an error. */
static void check_all_reported(wfc__conv *c, const wfl_node *n)
{
    if (!wf_strmap_get(c->seen, wfl_node_name(n))) {
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "not-converted",
                  "%s '%s' was not converted (the converter does not handle it in this "
                  "position)",
                  wfl_node_type(n)->name, wfl_node_name(n));
        return;
    }
    if (wfl_node_is_disabled(n))
        return;
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        check_all_reported(c, wfl_node_child(n, i));
}

/* A DP written in the XOML that no emitter read would vanish: warn, count it as lost, and
 * count the activity against coverage; the file is then partial, not converted (docs/convert.md
 * "Rule ids"). Name, Description and Enabled are handled for every activity. */
static void check_ignored_props(wfc__conv *c, const wfl_node *n)
{
    if (wfl_node_is_disabled(n))
        return;
    char key[300];
    snprintf(key, sizeof key, "%s\x1f*", wfl_node_name(n));
    if (wf_strmap_get(c->consumed, key))
        return;
    const wfl_type *t = wfl_node_type(n);
    for (size_t i = WFL_DPI_ENABLED + 1; i < t->dp_count; i++) {
        wfl_prop_info pi;
        wfl_node_prop(n, t->dps[i], &pi);
        snprintf(key, sizeof key, "%s\x1f%s", wfl_node_name(n), t->dps[i]->name);
        if (pi.kind == WFL_PROP_UNSET || wf_strmap_get(c->consumed, key))
            continue;
        wfc__diag(c, WFC_WARNING, pi.loc.line ? pi.loc : wfl_node_loc(n), "property-ignored",
                  "%s.%s is not carried over to the modern workflow: what it does is lost "
                  "(write it into the converted workflow by hand, or host '%s' through "
                  "Interop with --interop)",
                  wfl_node_name(n), t->dps[i]->name, wfl_node_name(n));
        wfc__loss(c, WFC_LOSS_SEMANTICS, n, t->dps[i]->name);
        wfc_file_activity_lost(c->file, wfl_node_name(n));
        c->dropped_count++;
    }
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        check_ignored_props(c, wfl_node_child(n, i));
}

/* The body writer refused a call (a name that is not an XML name reached it): an error with
 * the writer's message, whose kind (WF_E_NAME, ...) the conversion fails with. */
static void writer_failed(wfc__conv *c)
{
    bool first = c->first.code == WF_OK;
    wfc__diag(c, WFC_ERROR, wfl_node_loc(c->root), "xml-writer",
              "the converted workflow cannot be written as XML: %s", c->w.err.message);
    if (first)
        c->first.code = c->w.err.code;
}

static void run_pass(wfc__conv *c, int pass)
{
    assert(pass == c->pass + 1); /* pass 1, then pass 2 on what pass 1 recorded */
    c->pass = pass;
    c->hosted_count = 0;
    wf_buf_reset(&c->body);
    wfc_xw_init(W, &c->body, 1);
    wfc__emit(c, c->root);
    assert(c->w.depth == 0 || !wfc_xw_ok(W)); /* every rule closes what it opens */
    bool ok = wfc_xw_finish(W);
    if (c->w.too_deep)
        wfc__diag(c, WFC_ERROR, wfl_node_loc(c->root), "nesting-limit",
                  "the workflow nests more than %d modern elements deep", WFC_XW_MAX_DEPTH);
    else if (!ok && c->w.err.code == WF_E_NOMEM)
        c->nomem = true;
    else if (!ok)
        writer_failed(c);
}

/* Line `line` of text, trimmed and cut to fit, for a diagnostic. */
static const char *line_text(const char *text, size_t len, unsigned line, char *buf, size_t size)
{
    const char *p = text, *end = text + len;
    for (unsigned l = 1; l < line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    while (p < end && *p == ' ')
        p++;
    size_t n = (size_t)(end - p);
    const char *nl = memchr(p, '\n', n);
    n = nl ? (size_t)(nl - p) : n;
    snprintf(buf, size, "%.*s", (int)(n < size - 1 ? n : size - 1), p);
    return buf;
}

/* A declared function of tl whose C symbol is `symbol`, or NULL. */
static const wfl_tl_func *declared(const wfl_typelib *tl, const char *symbol)
{
    const wfl_tl_func *fn;
    for (size_t i = 0; i < wfl_typelib_activity_count(tl); i++)
        if ((fn = wfl_tl_activity_func(wfl_typelib_activity_at(tl, i))) &&
            wfl_tl_func_symbol(fn) && strcmp(wfl_tl_func_symbol(fn), symbol) == 0)
            return fn;
    for (size_t i = 0; i < wfl_typelib_class_count(tl); i++) {
        const wfl_tl_class *cls = wfl_typelib_class_at(tl, i);
        for (size_t k = 0; k < wfl_tl_class_func_count(cls); k++)
            if (strcmp(wfl_tl_func_symbol(fn = wfl_tl_class_func_at(cls, k)), symbol) == 0)
                return fn;
    }
    for (size_t i = 0; i < wfl_typelib_service_count(tl); i++) {
        const wfl_tl_service *svc = wfl_typelib_service_at(tl, i);
        for (size_t k = 0; k < wfl_tl_service_method_count(svc); k++)
            if (strcmp(wfl_tl_func_symbol(fn = wfl_tl_service_method_at(svc, k)), symbol) == 0)
                return fn;
    }
    return NULL;
}

static const char *type_name(const wf_type *t)
{
    return t ? t->name : "void";
}

/* Validate-only (wfm_load_opts.check_native): an InvokeMethod the converter wrote must call a
 * function some type library of the workflow declares, with the declared signature. */
static wf_status check_declared(void *ud, const char *library, const char *symbol,
                                const wf_native_sig *sig, wf_error *err)
{
    const wfc__conv *c = ud;
    char so[300];
    snprintf(so, sizeof so, "lib%s.so", library);
    for (size_t i = 0; i < wfl_definition_typelib_count(c->def); i++) {
        const wfl_typelib *tl = wfl_definition_typelib_at(c->def, i);
        const wfl_tl_func *fn = declared(tl, symbol);
        if (!fn || strcmp(wfl_typelib_library(tl), so) != 0)
            continue;
        const wfl_tl_prop *ret = wfl_tl_func_return(fn);
        const wf_type *want = wfl_tl_func_error_on_nonzero(fn)              ? &wf_type_int32
                              : wfl_tl_func_kind_of(fn) == WFL_TL_CONDITION ? &wf_type_bool
                              : ret                                         ? ret->type
                                                                            : NULL;
        if (strcmp(type_name(want), type_name(sig->ret)) != 0)
            return wf_error_set(err, WF_E_TYPE, NULL,
                                "InvokeMethod '%s': %s declares return type %s, the call uses %s",
                                symbol, wfl_typelib_file(tl), type_name(want),
                                type_name(sig->ret));
        if (wfl_tl_func_param_count(fn) != sig->param_count)
            return wf_error_set(err, WF_E_TYPE, NULL,
                                "InvokeMethod '%s': %s declares %zu parameters, the call passes "
                                "%zu",
                                symbol, wfl_typelib_file(tl), wfl_tl_func_param_count(fn),
                                sig->param_count);
        for (size_t k = 0; k < sig->param_count; k++) {
            const wfl_tl_prop *p = wfl_tl_func_param(fn, k);
            wf_native_dir dir = p->dir == WFL_TL_OUT     ? WF_NATIVE_OUT
                                : p->dir == WFL_TL_INOUT ? WF_NATIVE_INOUT
                                                         : WF_NATIVE_IN;
            if (dir != sig->params[k].dir ||
                strcmp(type_name(p->type), type_name(sig->params[k].type)) != 0)
                return wf_error_set(err, WF_E_TYPE, NULL,
                                    "InvokeMethod '%s': parameter %zu is declared %s %s in %s",
                                    symbol, k + 1,
                                    dir == WF_NATIVE_OUT     ? "Out"
                                    : dir == WF_NATIVE_INOUT ? "InOut"
                                                             : "In",
                                    type_name(p->type), wfl_typelib_file(tl));
        }
        return WF_OK;
    }
    return wf_error_set(err, WF_E_NOSYM, NULL,
                        "InvokeMethod '%s': no type library of the workflow declares it in %s",
                        symbol, so);
}

/* Write the generated files into the fresh directory tmp (a mkdtemp template) and make a
 * library path of tmp followed by the caller's directories. */
static wf_status side_libpath(wfc__conv *c, char *tmp, wf_libpath **lp, wf_error *err)
{
    if (!mkdtemp(tmp))
        return wf_error_set(err, WF_E_IO, NULL, "cannot create a directory for validation: %s",
                            strerror(errno));
    wf_buf dirs;
    wf_buf_init(&dirs);
    wf_buf_adds(&dirs, tmp);
    for (size_t i = 0; c->opts->libpath && i < wf_libpath_count(c->opts->libpath); i++)
        wf_buf_addf(&dirs, ":%s", wf_libpath_dir(c->opts->libpath, i));
    wf_status st = dirs.oom ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory") : WF_OK;
    for (size_t i = 0; st == WF_OK && i < c->side.count; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", tmp, c->side.items[i].name);
        st = wfc_write_atomic(path, c->side.items[i].text, c->side.items[i].len, err);
    }
    if (st == WF_OK)
        st = wf_libpath_create(dirs.data, lp, err);
    wf_buf_fini(&dirs);
    return st;
}

static void side_cleanup(wfc__conv *c, const char *tmp)
{
    for (size_t i = 0; i < c->side.count; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", tmp, c->side.items[i].name);
        unlink(path);
    }
    rmdir(tmp);
}

/* Load what was written with the modern loader; its errors become report diagnostics. */
static wf_status validate(wfc__conv *c, const char *name, const char *text, size_t len,
                          wf_error *err)
{
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    ro.libpath = c->opts->libpath;
    ro.check_native = check_declared; /* no shared object needs to be built */
    ro.check_ud = c;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wf_diags *diags = wf_diags_create();
    wf_error e = WF_ERROR_INIT;
    char tmp[] = "/tmp/wfc-side-XXXXXX";
    bool side = c->side.count > 0;
    wf_libpath *lp = NULL;
    wf_status st = diags ? WF_OK : WF_E_NOMEM;
    if (st == WF_OK && side) /* the generated files go on the library path, first */
        st = side_libpath(c, tmp, &lp, &e);
    if (lp)
        ro.libpath = lp;
    if (st == WF_OK)
        st = wfm_runtime_create(&ro, &rt, &e);
    if (st == WF_OK && c->opts->register_interop)
        st = c->opts->register_interop(wfm_runtime_catalogue(rt), &e);
    if (st == WF_OK)
        st = wfm_runtime_load_mem(rt, name, text, len, &def, diags, &e);
    if (st == WF_OK) {
        size_t unbound = 0;
        for (size_t i = 0; i < wf_diags_count(diags); i++)
            unbound += wf_diags_get(diags, i)->severity == WF_SEV_WARNING &&
                       strstr(wf_diags_get(diags, i)->error.message, "not bound (validate-only)");
        if (unbound)
            wfc_file_add_diag(c->file, WFC_INFO, 0, 0, "not-bound",
                              "%zu InvokeMethod call(s) checked against their type-library "
                              "declarations, not bound to a shared object: running needs the "
                              "native libraries built",
                              unbound);
    }
    if (st != WF_OK && st != WF_E_NOMEM) {
        wf_diags_sort(diags);
        for (size_t i = 0; i < wf_diags_count(diags); i++) {
            const wf_diag *d = wf_diags_get(diags, i);
            char excerpt[240], msg[1200];
            snprintf(msg, sizeof msg, "converted XAML rejected: %s (in: %s)", d->error.message,
                     line_text(text, len, d->error.line, excerpt, sizeof excerpt));
            if (d->severity == WF_SEV_ERROR) /* its position is in the XAML, named so */
                wfc_file_add_diag_in(c->file, name, WFC_ERROR, d->error.line, d->error.col,
                                     "modern-validation", msg);
        }
        char msg[700];
        snprintf(msg, sizeof msg, "converted XAML rejected: %s", e.message);
        if (wf_diags_count(diags) == 0)
            wfc_file_add_diag_in(c->file, name, WFC_ERROR, e.line, e.col, "modern-validation",
                                 msg);
        wf_loc at = wfl_node_loc(c->root);
        wf_error_set(err, st, &at,
                     "the converted workflow does not load in the modern runtime: "
                     "%s:%u:%u: %s",
                     name, e.line, e.col, e.message);
    } else if (st == WF_E_NOMEM) {
        wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wf_diags_destroy(diags);
    wf_libpath_destroy(lp);
    if (side)
        side_cleanup(c, tmp);
    return st;
}

static void default_output_name(const char *path, char *buf, size_t size)
{
    size_t len = strlen(path);
    if (len > 5 && strcmp(path + len - 5, ".xoml") == 0)
        len -= 5;
    snprintf(buf, size, "%.*s.xaml", (int)len, path);
}

/* The conversion failed: its first error, at path. */
static wf_status failed_first(wfc__conv *c, const char *path, wf_error *err)
{
    wfc_file_set_status(c->file, WFC_FAILED);
    wf_error_set(err, c->first.code, &(wf_loc){path, c->first.line, c->first.col}, "%s",
                 c->first.message);
    return c->first.code;
}

static wf_status convert_loaded(wfc__conv *c, const char *path, char **xaml, size_t *len,
                                wf_error *err)
{
    char *name = c->out_name_buf; /* not a local: wfc__map_json reads it after we return */
    if (c->opts->output_name)
        snprintf(name, sizeof c->out_name_buf, "%s", c->opts->output_name);
    else
        default_output_name(path, name, sizeof c->out_name_buf);
    c->path = path;
    c->out_name = name;
    run_pass(c, 1);
    wfc__settle_scopes(c);
    c->failed = false;
    wf_error_clear(&c->first);
    if (!(c->seen = wf_strmap_create(NULL)) || !(c->consumed = wf_strmap_create(NULL)))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    run_pass(c, 2);
    wfc__interop_check(c);
    check_all_reported(c, c->root);
    for (size_t i = 0; i < wfl_definition_param_count(c->def); i++) {
        wfl_param_info p; /* root values become argument defaults in document() */
        wfl_definition_param(c->def, i, &p);
        wfc__consumed(c, c->root, p.name);
    }
    check_ignored_props(c, c->root);
    wfc__graphs(c);
    if (c->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (c->failed)
        return failed_first(c, path, err);
    wf_buf doc;
    wf_buf_init(&doc);
    bool written = document(c, path, &doc) && !doc.oom;
    if (!written) {
        wf_buf_fini(&doc);
        if (c->w.err.code == WF_E_NOMEM || c->w.err.code == WF_OK) /* WF_OK: doc.oom */
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        writer_failed(c);
        return failed_first(c, path, err);
    }
    if (c->hosted_count || c->dropped_count)
        wfc_file_set_status(c->file, WFC_PARTIAL);
    wf_status st = validate(c, name, doc.data, doc.len, err);
    if (st != WF_OK) {
        wfc_file_set_status(c->file, WFC_FAILED);
        wf_buf_fini(&doc);
        return st;
    }
    if (wfc_file_nomem(c->file)) {
        wf_buf_fini(&doc);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    *xaml = wf_buf_detach(&doc, len);
    return *xaml ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

wf_status wfc_convert_file(const wfc_opts *opts, const char *path, wfc_file *file, char **xaml,
                           size_t *len, wf_error *err)
{
    return wfc_convert_file_side(opts, path, file, xaml, len, NULL, err);
}

wf_status wfc_convert_file_side(const wfc_opts *opts, const char *path, wfc_file *file,
                                char **xaml, size_t *len, wfc_sidecars *side, wf_error *err)
{
    size_t targ_count;
    return wfc__convert_path(opts, path, 0, file, xaml, len, side, NULL, &targ_count, err);
}

/* The root arguments and the directions members() wrote. */
static void root_args(wfc__conv *c, wfc__targ *targs, size_t *count)
{
    *count = 0;
    for (size_t i = 0; i < wfl_definition_param_count(c->def) && *count < WFC__MAX_TARGS; i++) {
        wfl_param_info p;
        wfl_definition_param(c->def, i, &p);
        wfc__targ *t = &targs[(*count)++];
        snprintf(t->name, sizeof t->name, "%s", p.name);
        t->dir = member_dir(c, p.name);
    }
}

wf_status wfc__convert_path(const wfc_opts *opts, const char *path, unsigned depth,
                            wfc_file *file, char **xaml, size_t *len, wfc_sidecars *side,
                            wfc__targ *targs, size_t *targ_count, wf_error *err)
{
    *xaml = NULL;
    *len = 0;
    *targ_count = 0;
    wfc__conv conv = {.opts = opts, .file = file, .depth = depth};
    wfc__conv *c = &conv;
    wf_buf_init(&c->body);
    wf_types *types = wf_types_create();
    wf_diags *diags = wf_diags_create();
    wfl_definition *def = NULL;
    wf_status st = WF_E_NOMEM;
    if (!types || !diags) {
        wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        goto fail;
    }
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = types;
    lo.libpath = opts->libpath;
    lo.rules_path = opts->rules_path;
    lo.diags = diags;
    lo.no_native = true; /* declarations are enough to convert */
    st = wfl_definition_load_file(&lo, path, &def, err);
    copy_legacy_diags(c, diags);
    if (st != WF_OK) {
        wfc_file_set_status(file, WFC_FAILED);
        goto fail;
    }
    c->def = def;
    c->root = wfl_definition_root(def);
    st = convert_loaded(c, path, xaml, len, err);
    if (st == WF_OK && targs)
        root_args(c, targs, targ_count);
    if (st == WF_OK && side && depth == 0) { /* the map of the file asked for */
        wfc__map_json(c);
        if (c->nomem) {
            st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
            wf_free(*xaml);
            *xaml = NULL;
            *len = 0;
        }
    }
    if (st == WF_OK && side) {
        *side = c->side;
        c->side = (wfc_sidecars)WFC_SIDECARS_INIT;
    }
fail:
    wfc_sidecars_free(&c->side);
    wfc__interop_fini(c);
    wf_free(c->slots);
    wf_free(c->uses);
    wf_strmap_destroy(c->seen);
    wf_strmap_destroy(c->consumed);
    wf_buf_fini(&c->body);
    wfl_definition_destroy(def);
    wf_diags_destroy(diags);
    wf_types_destroy(types);
    return st;
}

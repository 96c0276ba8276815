/* wfm_catalogue.c — the activity catalogue (kinds registered from static wfm_kind_spec
 * tables, looked up by namespace + element name), the read accessors of loaded nodes, and the
 * wfm_load_* services prepare callbacks use. The catalogue is filled before threads start and
 * only read afterwards (wfm_activity.h, docs/style.md "State"). */
#include "wfm_definition_int.h"
#include "wfm_load_int.h"

#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h> /* qsort */
#include <stdio.h>
#include <string.h>
#include <strings.h> /* strncasecmp */

struct wfm_catalogue {
    wf_strmap *by_name; /* "ns\nname" -> wfm_kind* (borrowed from kinds) */
    wfm_kind **kinds;   /* owned, registration order */
    size_t count, cap;
    pthread_mutex_t cb_lock;  /* the callback index: */
    wfm__callback_ix *cbs;    /* sorted (wfm__catalogue_callbacks), NULL until built */
    size_t cb_count, cb_kinds; /* its entries, and the kinds it was built from */
    bool cb_built;
};

wf_status wfm_catalogue_create(wfm_catalogue **out, wf_error *err)
{
    *out = NULL;
    wfm_catalogue *cat = wf_calloc(1, sizeof *cat);
    if (!cat)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory creating the catalogue");
    cat->by_name = wf_strmap_create(NULL);
    pthread_mutex_init(&cat->cb_lock, NULL);
    if (!cat->by_name) {
        pthread_mutex_destroy(&cat->cb_lock);
        wf_free(cat);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory creating the catalogue");
    }
    *out = cat;
    return WF_OK;
}

void wfm_catalogue_destroy(wfm_catalogue *cat)
{
    if (!cat)
        return;
    for (size_t i = 0; i < cat->count; i++)
        wf_free(cat->kinds[i]);
    wf_free(cat->kinds);
    wf_strmap_destroy(cat->by_name);
    wf_free(cat->cbs);
    pthread_mutex_destroy(&cat->cb_lock);
    wf_free(cat);
}

size_t wfm_catalogue_count(const wfm_catalogue *cat)
{
    return cat ? cat->count : 0;
}

const wfm_kind *wfm_catalogue_at(const wfm_catalogue *cat, size_t index)
{
    return cat && index < cat->count ? cat->kinds[index] : NULL;
}

static int callback_cmp(const void *a, const void *b)
{
    const wfm__callback_ix *x = a, *y = b;
    if (x->fn != y->fn)
        return (uintptr_t)x->fn < (uintptr_t)y->fn ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Under cb_lock: (re)build the index from every kind registered so far. */
static bool build_callbacks_locked(wfm_catalogue *cat)
{
    size_t n = 0;
    for (size_t k = 0; k < cat->count; k++)
        n += cat->kinds[k]->spec->callback_count;
    wfm__callback_ix *cbs = n ? wf_calloc(n, sizeof *cbs) : NULL;
    if (n && !cbs)
        return false;
    size_t used = 0;
    for (size_t k = 0; k < cat->count; k++) {
        const wfm_kind_spec *spec = cat->kinds[k]->spec;
        for (size_t i = 0; i < spec->callback_count; i++)
            if (spec->callbacks[i])
                cbs[used++] = (wfm__callback_ix){spec->callbacks[i], (uint32_t)k, (uint32_t)i};
    }
    if (used)
        qsort(cbs, used, sizeof *cbs, callback_cmp);
    for (size_t i = 1; i < used; i++) /* strictly ascending: the savers look callbacks up */
        assert(callback_cmp(&cbs[i - 1], &cbs[i]) < 0);
    wf_free(cat->cbs);
    cat->cbs = cbs;
    cat->cb_count = used;
    cat->cb_kinds = cat->count;
    cat->cb_built = true;
    return true;
}

const wfm__callback_ix *wfm__catalogue_callbacks(const wfm_catalogue *c, size_t *count,
                                                 bool *oom)
{
    wfm_catalogue *cat = (wfm_catalogue *)c; /* the index is a cache of const data */
    pthread_mutex_lock(&cat->cb_lock);
    *oom = false;
    if (!cat->cb_built || cat->cb_kinds != cat->count)
        *oom = !build_callbacks_locked(cat);
    const wfm__callback_ix *cbs = *oom ? NULL : cat->cbs;
    *count = *oom ? 0 : cat->cb_count;
    pthread_mutex_unlock(&cat->cb_lock);
    return cbs;
}

static bool make_key(char *buf, size_t size, const char *ns, const char *name)
{
    int n = snprintf(buf, size, "%s\n%s", ns ? ns : WFM_NS_ACTIVITIES, name);
    return n > 0 && (size_t)n < size;
}

/* A spec the loader can drive: named props, a content prop that exists, Variables only on
 * activities (the environment rules of wfm_definition_int.h need an activity instance). */
static wf_status check_spec(const wfm_kind_spec *spec, int *content_index, wf_error *err)
{
    *content_index = -1;
    if (!spec->name || !*spec->name || !spec->category || (spec->prop_count && !spec->props))
        return wf_error_set(err, WF_E_USAGE, NULL, "kind spec needs a name, category and props");
    for (size_t i = 0; i < spec->prop_count; i++) {
        const wfm_prop_spec *p = &spec->props[i];
        if (!p->name || !*p->name)
            return wf_error_set(err, WF_E_USAGE, NULL, "kind '%s': property %zu has no name",
                                spec->name, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(spec->props[j].name, p->name) == 0)
                return wf_error_set(err, WF_E_USAGE, NULL,
                                    "kind '%s': duplicate property '%s'", spec->name, p->name);
        if ((p->kind == WFM_PROP_NODE || p->kind == WFM_PROP_NODES) && !p->accepts)
            return wf_error_set(err, WF_E_USAGE, NULL,
                                "kind '%s': node property '%s' needs a category", spec->name,
                                p->name);
        if (spec->content_prop && strcmp(spec->content_prop, p->name) == 0)
            *content_index = (int)i;
    }
    if (spec->content_prop && *content_index < 0)
        return wf_error_set(err, WF_E_USAGE, NULL, "kind '%s': content property '%s' unknown",
                            spec->name, spec->content_prop);
    if ((spec->flags & WFM_KIND_VARIABLES) && strcmp(spec->category, "Activity") != 0)
        return wf_error_set(err, WF_E_USAGE, NULL,
                            "kind '%s': only activities may declare Variables", spec->name);
    /* Persistence contract (wfm_persist.h): state that is not plain bytes needs both hooks. */
    if (spec->state_size && !(spec->flags & WFM_KIND_STATE_PLAIN) &&
        (!spec->save || !spec->restore))
        return wf_error_set(err, WF_E_USAGE, NULL,
                            "kind '%s': per-instance state needs WFM_KIND_STATE_PLAIN or "
                            "save and restore functions",
                            spec->name);
    if ((spec->callback_count && !spec->callbacks) || (spec->ext_count && !spec->exts))
        return wf_error_set(err, WF_E_USAGE, NULL, "kind '%s': persistence table missing",
                            spec->name);
    for (size_t i = 0; i < spec->ext_count; i++) {
        const wfm_ext_spec *x = spec->exts[i];
        if (!x || !x->name || !*x->name || !x->save || !x->restore)
            return wf_error_set(err, WF_E_USAGE, NULL,
                                "kind '%s': extension %zu needs a name, save and restore",
                                spec->name, i);
    }
    return WF_OK;
}

static bool grow_kinds(wfm_catalogue *cat)
{
    if (cat->count < cat->cap)
        return true;
    size_t cap = cat->cap ? cat->cap * 2 : 32;
    wfm_kind **kinds = wf_realloc(cat->kinds, cap * sizeof *kinds);
    if (!kinds)
        return false;
    cat->kinds = kinds;
    cat->cap = cap;
    return true;
}

wf_status wfm_catalogue_register(wfm_catalogue *cat, const wfm_kind_spec *spec, wf_error *err)
{
    int content_index = -1;
    wf_status rc = check_spec(spec, &content_index, err);
    if (rc != WF_OK)
        return rc;
    char key[512];
    if (!make_key(key, sizeof key, spec->ns, spec->name))
        return wf_error_set(err, WF_E_USAGE, NULL, "kind name too long");
    if (wf_strmap_get(cat->by_name, key))
        return wf_error_set(err, WF_E_STATE, NULL, "activity kind '%s' is already registered",
                            spec->name);
    wfm_kind *kind = wf_calloc(1, sizeof *kind + spec->prop_count * sizeof kind->prop_off[0]);
    if (!kind || !grow_kinds(cat)) {
        wf_free(kind);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory registering '%s'", spec->name);
    }
    kind->spec = spec;
    kind->ns = spec->ns ? spec->ns : WFM_NS_ACTIVITIES;
    kind->index = (uint32_t)cat->count;
    kind->is_activity = strcmp(spec->category, "Activity") == 0;
    kind->content_index = content_index;
    kind->has_type_arg = (spec->flags & WFM_KIND_GENERIC) != 0;
    for (size_t i = 0; i < spec->prop_count; i++) {
        const char *t = spec->props[i].type;
        if (t && (strcmp(t, "T") == 0 || strcmp(t, "List(T)") == 0))
            kind->has_type_arg = true;
    }
    kind->props_size = kind->has_type_arg ? (uint32_t)sizeof(wf_type *) : 0;
    for (size_t i = 0; i < spec->prop_count; i++) {
        kind->prop_off[i] = kind->props_size;
        kind->props_size += wfm__prop_size(spec->props[i].kind);
    }
    if (wf_strmap_put(cat->by_name, key, kind) != WF_OK) {
        wf_free(kind);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory registering '%s'", spec->name);
    }
    cat->kinds[cat->count++] = kind;
    return WF_OK;
}

const wfm_kind *wfm_catalogue_find(const wfm_catalogue *cat, const char *ns, const char *name)
{
    char key[512];
    if (!cat || !name || !make_key(key, sizeof key, ns, name))
        return NULL;
    return wf_strmap_get(cat->by_name, key);
}

const wfm_kind_spec *wfm_kind_spec_of(const wfm_kind *kind)
{
    return kind->spec;
}

void *wfm_kind_ud(const wfm_kind *kind)
{
    return kind->spec->ud;
}

const char *wfm_kind_ns(const wfm_kind *kind)
{
    return kind->ns;
}

/* ---- node accessors -------------------------------------------------------------------- */
const wfm_kind *wfm_node_kind(const wfm_node *node)
{
    return node->kind;
}

wf_loc wfm_node_loc(const wfm_node *node)
{
    const wfm_node *top = node;
    while (!(top->extra && top->extra->file) && top->parent)
        top = top->parent;
    const char *file = top->extra ? top->extra->file : NULL;
    return (wf_loc){.file = file, .line = node->line, .col = node->col};
}

const char *wfm_node_display_name(const wfm_node *node)
{
    return node->extra && node->extra->display_name ? node->extra->display_name
                                                     : node->kind->spec->name;
}

uint32_t wfm_node_index(const wfm_node *node)
{
    return node->index;
}

const wf_type *wfm_node_type_arg(const wfm_node *node)
{
    return wfm__node_type_arg(node);
}

static const wfm__prop *prop_at(const wfm_node *node, unsigned prop)
{
    return prop < node->kind->spec->prop_count ? wfm__node_prop(node, prop) : NULL;
}

/* Property `prop` when it is of kind `a` or `b` (the members of other kinds share storage). */
static const wfm__prop *prop_of2(const wfm_node *node, unsigned prop, wfm_prop_kind a,
                                 wfm_prop_kind b)
{
    const wfm__prop *p = prop_at(node, prop);
    wfm_prop_kind k = p ? node->kind->spec->props[prop].kind : a;
    return p && (k == a || k == b) ? p : NULL;
}

/* Property `prop` when it holds a list of nodes (ACTIVITIES, NODES, KEYED). */
static const wfm__prop *prop_list(const wfm_node *node, unsigned prop)
{
    const wfm__prop *p = prop_of2(node, prop, WFM_PROP_ACTIVITIES, WFM_PROP_NODES);
    return p ? p : prop_of2(node, prop, WFM_PROP_KEYED, WFM_PROP_KEYED);
}

bool wfm_node_has(const wfm_node *node, unsigned prop)
{
    const wfm__prop *p = prop_at(node, prop);
    return p && p->present;
}

const wfm_node *wfm_node_parent(const wfm_node *node)
{
    return node->parent;
}

const wfm_node *wfm_node_child(const wfm_node *node, unsigned prop)
{
    const wfm__prop *p = prop_at(node, prop);
    if (!p)
        return NULL;
    switch (node->kind->spec->props[prop].kind) {
    case WFM_PROP_DELEGATE: return p->delegate ? p->delegate->body : NULL;
    case WFM_PROP_ACTIVITY:
    case WFM_PROP_NODE: return p->child;
    default: return NULL;
    }
}

size_t wfm_node_count(const wfm_node *node, unsigned prop)
{
    const wfm__prop *p = prop_at(node, prop);
    return p ? p->count : 0;
}

const wfm_node *wfm_node_at(const wfm_node *node, unsigned prop, size_t index)
{
    const wfm__prop *p = prop_list(node, prop);
    return p && p->items && index < p->count ? p->items[index] : NULL;
}

const wf_value *wfm_node_key(const wfm_node *node, unsigned prop, size_t index)
{
    const wfm__prop *p = prop_of2(node, prop, WFM_PROP_KEYED, WFM_PROP_KEYED);
    return p && p->keys && index < p->count ? &p->keys[index] : NULL;
}

const wf_value *wfm_node_literal(const wfm_node *node, unsigned prop)
{
    static const wf_value none = {&wf_type_null, {0}};
    const wfm__prop *p = prop_at(node, prop);
    if (!p)
        return NULL;
    return wfm__prop_is_value(node->kind->spec->props[prop].kind) && !p->bound ? &p->literal
                                                                               : &none;
}

const wf_type *wfm_node_prop_type(const wfm_node *node, unsigned prop)
{
    const wfm__prop *p = prop_at(node, prop);
    return p ? p->type : NULL;
}

const char *wfm_node_type_text(const wfm_node *node, unsigned prop)
{
    const wfm__prop *p = prop_of2(node, prop, WFM_PROP_TYPE, WFM_PROP_TYPE);
    return p && p->type_text ? p->type_text : "";
}

const char *wfm_node_type_prefix(const wfm_node *node, unsigned prop)
{
    const wfm__prop *p = prop_of2(node, prop, WFM_PROP_TYPE, WFM_PROP_TYPE);
    return p ? p->type_prefix : NULL;
}

wfm_prop_kind wfm_node_param_dir(const wfm_node *node, unsigned prop, size_t index)
{
    const wfm__prop *p = prop_of2(node, prop, WFM_PROP_PARAMS, WFM_PROP_PARAMS);
    return p && p->params && index < p->count ? p->params[index].dir : WFM_PROP_IN;
}

const char *wfm_node_param_key(const wfm_node *node, unsigned prop, size_t index)
{
    const wfm__prop *p = prop_of2(node, prop, WFM_PROP_PARAMS, WFM_PROP_PARAMS);
    return p && p->params && index < p->count ? p->params[index].key : NULL;
}

const char *wfm_node_x_name(const wfm_node *node)
{
    return node->extra ? node->extra->x_name : NULL;
}

const wf_type *wfm_node_param_type(const wfm_node *node, unsigned prop, size_t index)
{
    const wfm__prop *p = prop_of2(node, prop, WFM_PROP_PARAMS, WFM_PROP_PARAMS);
    return p && p->params && index < p->count ? p->params[index].type : NULL;
}

/* The loader gives a node its attachment cell when its kind has a prepare or bind callback
 * (the only code that attaches data). */
void wfm_node_set_data(wfm_node *node, void *data, void (*destroy)(void *data))
{
    wfm__node_extra *d = node->extra;
    assert(d || !data);
    if (!d)
        return;
    if (d->data && d->destroy && d->data != data)
        d->destroy(d->data);
    d->data = data;
    d->destroy = destroy;
}

void *wfm_node_data(const wfm_node *node)
{
    return node->extra ? node->extra->data : NULL;
}

/* ---- load-time services -------------------------------------------------------------- */
void wfm_load_error(wfm_load *load, const wfm_node *node, wf_status code, const char *fmt, ...)
{
    /* A prepare callback that looks at another node (TryCatch at its Catch) does not report a
     * second error at a node whose own error (an unknown type, say) is already reported. */
    const wfm__lnode *ln = node && code != WF_E_NOMEM ? wfm__load_lnode(load, node) : NULL;
    if (ln && ln->bad && wf_diags_error_count(load->diags) > 0)
        return;
    wf_error e = WF_ERROR_INIT;
    va_list ap;
    va_start(ap, fmt);
    wf_loc at = node ? wfm_node_loc(node) : WF_LOC_NONE;
    wf_error_setv(&e, code, node ? &at : NULL, fmt, ap);
    va_end(ap);
    if (code == WF_E_NOMEM)
        load->nomem = true;
    load->errors++;
    wfm__load_diag(load, WF_SEV_ERROR, &e);
}

void wfm_load_error_at(wfm_load *load, const wfm_node *node, wf_loc at, wf_status code,
                       const char *fmt, ...)
{
    wf_error e = WF_ERROR_INIT;
    va_list ap;
    va_start(ap, fmt);
    wf_loc nat = node ? wfm_node_loc(node) : WF_LOC_NONE;
    wf_error_setv(&e, code, at.line ? &at : node ? &nat : NULL, fmt, ap);
    va_end(ap);
    if (code == WF_E_NOMEM)
        load->nomem = true;
    load->errors++;
    wf_diags_add_error(load->diags, WF_SEV_ERROR, &e);
}

void wfm_load_warning(wfm_load *load, const wfm_node *node, const char *fmt, ...)
{
    wf_error e = WF_ERROR_INIT;
    va_list ap;
    va_start(ap, fmt);
    wf_loc at = node ? wfm_node_loc(node) : WF_LOC_NONE;
    wf_error_setv(&e, WF_E_SCHEMA, node ? &at : NULL, fmt, ap);
    va_end(ap);
    wfm__load_diag(load, WF_SEV_WARNING, &e);
}

const wf_libpath *wfm_load_libpath(const wfm_load *load)
{
    return load->opts->libpath;
}

bool wfm_load_validate_only(const wfm_load *load)
{
    return load->opts->check_native != NULL;
}

wf_status wfm_load_check_native(wfm_load *load, const char *library, const char *symbol,
                                 const wf_native_sig *sig, wf_error *err)
{
    return load->opts->check_native(load->opts->check_ud, library, symbol, sig, err);
}

wf_types *wfm_load_types(const wfm_load *load)
{
    return load->types;
}

/* "clr-namespace:NS;assembly=NAME[;...]" -> NAME (in the definition's arena). */
const char *wfm_load_assembly(const wfm_load *load, const wfm_node *node, const char *prefix)
{
    wfm__lnode *ln = wfm__load_lnode((wfm_load *)load, node);
    if (!ln || !prefix)
        return NULL;
    const char *uri = wf_xml_lookup_ns(ln->el, prefix);
    if (!uri || strncmp(uri, "clr-namespace:", 14) != 0)
        return NULL;
    for (const char *p = strchr(uri, ';'); p; p = strchr(p + 1, ';')) {
        const char *q = p + 1;
        while (*q == ' ')
            q++;
        if (strncasecmp(q, "assembly=", 9) == 0) {
            q += 9;
            size_t len = strcspn(q, ";");
            return len ? wf_arena_strndup(load->arena, q, len) : NULL;
        }
    }
    return NULL;
}

const char *wfm_load_claim_attr(wfm_load *load, const wfm_node *node, const char *name)
{
    wfm__lnode *ln = wfm__load_lnode(load, node);
    if (!ln || !name)
        return NULL;
    for (size_t i = 0; i < ln->unknown_count; i++) {
        const wf_xml_attr *a = ln->unknown[i];
        if (!a->ns && strcmp(a->name, name) == 0) {
            ln->claimed[i] = true;
            const char *copy = wf_arena_strdup(load->arena, a->value);
            if (!copy)
                load->nomem = true;
            return copy;
        }
    }
    return NULL;
}

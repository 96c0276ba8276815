/* wfm_xaml_types.c — the loader's small text services: XAML type names as WF4 writes them
 * (x:Int32, scg:List(x:Int32), s:Exception), literal attribute values converted to a type,
 * and which namespaces and designer members WF4 ignores (mc:Ignorable, sap ViewState, ...).
 * Problems are reported into the load's diagnostics at the given location. */
#include "wfm_load_int.h"

#include <ctype.h>
#include <stdio.h> /* snprintf */
#include <string.h>

void wfm__xt_report(wfm_load *load, wf_status code, wf_loc at, const char *fmt, ...)
{
    wf_error e = WF_ERROR_INIT;
    va_list ap;
    va_start(ap, fmt);
    wf_error_setv(&e, code, &at, fmt, ap);
    va_end(ap);
    if (code == WF_E_NOMEM)
        load->nomem = true;
    load->errors++;
    wfm__load_diag(load, WF_SEV_ERROR, &e);
}

bool wfm__xt_is_x(const char *ns)
{
    return ns && strcmp(ns, WFM__NS_XAML) == 0;
}

/* The elements of one document that carry mc:Ignorable, each with the namespaces its list
 * names (prefixes resolved where it is written). Most files have none, or one on the root,
 * so a check compares a few URIs instead of reading every ancestor's attributes. */
typedef struct ign_carrier {
    const wf_xml_node *el;
    const char **uris;
    size_t uri_count;
} ign_carrier;

struct wfm__ign_scope {
    const wf_xml_node *root;
    ign_carrier *carriers;
    size_t count;
    struct wfm__ign_scope *next;
};

/* The namespaces the list names at `at`: each whitespace-separated prefix that resolves. */
static bool carrier_init(wfm_load *load, ign_carrier *c, const wf_xml_node *at, const char *list)
{
    size_t max = 0;
    for (const char *p = list; *p; p++)
        max += !isspace((unsigned char)*p) && (p == list || isspace((unsigned char)p[-1]));
    c->el = at;
    c->uri_count = 0;
    c->uris = wf_arena_alloc(load->tmp, (max ? max : 1) * sizeof *c->uris);
    if (!c->uris)
        return false;
    const char *p = list;
    while (*p) {
        while (*p && isspace((unsigned char)*p))
            p++;
        size_t len = 0;
        while (p[len] && !isspace((unsigned char)p[len]))
            len++;
        if (len > 0 && len < 64) {
            char prefix[64];
            memcpy(prefix, p, len);
            prefix[len] = '\0';
            const char *uri = wf_xml_lookup_ns(at, prefix);
            if (uri)
                c->uris[c->uri_count++] = uri;
        }
        p += len;
    }
    return true;
}

/* The element after n in document order within root's tree; NULL after the last. */
static const wf_xml_node *tree_next(const wf_xml_node *root, const wf_xml_node *n)
{
    if (n->first_child)
        return n->first_child;
    while (n != root && !n->next)
        n = n->parent;
    return n == root ? NULL : n->next;
}

/* Every carrier under `root`, in document order (two walks of the tree: count, then fill). */
static struct wfm__ign_scope *scope_build(wfm_load *load, const wf_xml_node *root)
{
    struct wfm__ign_scope *s = wf_arena_alloc(load->tmp, sizeof *s);
    if (!s)
        return NULL;
    s->root = root;
    size_t cap = 0;
    for (const wf_xml_node *n = root; n; n = tree_next(root, n))
        cap += wf_xml_attr_find(n, WFM__NS_MC, "Ignorable") != NULL;
    s->carriers = wf_arena_alloc(load->tmp, (cap ? cap : 1) * sizeof *s->carriers);
    if (!s->carriers)
        return NULL;
    for (const wf_xml_node *n = root; n && s->count < cap; n = tree_next(root, n)) {
        const wf_xml_attr *a = wf_xml_attr_find(n, WFM__NS_MC, "Ignorable");
        if (a && !carrier_init(load, &s->carriers[s->count++], n, a->value))
            return NULL;
    }
    s->next = load->ign;
    load->ign = s;
    return s;
}

static bool encloses(const wf_xml_node *outer, const wf_xml_node *el)
{
    for (const wf_xml_node *n = el; n; n = n->parent)
        if (n == outer)
            return true;
    return false;
}

/* mc:Ignorable applies to the element that carries it and everything inside. */
bool wfm__xt_ignorable(wfm_load *load, const wf_xml_node *el, const char *ns)
{
    if (!ns)
        return false;
    struct wfm__ign_scope *s = NULL;
    if (el->parent && el->parent == load->ign_parent) {
        s = load->ign_last;
    } else {
        const wf_xml_node *root = el;
        while (root->parent)
            root = root->parent;
        s = load->ign;
        while (s && s->root != root)
            s = s->next;
        if (!s && !(s = scope_build(load, root))) {
            load->nomem = true;
            return false;
        }
        load->ign_parent = el->parent;
        load->ign_last = s;
    }
    for (size_t i = 0; i < s->count; i++)
        for (size_t k = 0; k < s->carriers[i].uri_count; k++)
            if (strcmp(s->carriers[i].uris[k], ns) == 0 && encloses(s->carriers[i].el, el))
                return true;
    return false;
}

static bool starts_with(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Designer-only members WF4 writes even where they are not mc:Ignorable. */
bool wfm__xt_designer_member(const char *ns, const char *name)
{
    static const char *const presentation[] = {
        "WorkflowViewStateService.", "VirtualizedContainerService.", "WorkflowViewState.",
        "ExpressionActivityEditor.", "Annotation.", NULL};
    static const char *const text_expr[] = {
        "TextExpression.NamespacesForImplementation", "TextExpression.ReferencesForImplementation",
        "TextExpression.Namespaces", "TextExpression.References", NULL};
    if (!ns || !strchr(name, '.')) /* every member above is attached: Owner.Member */
        return false;
    if (starts_with(ns, "http://schemas.microsoft.com/netfx/2009/xaml/activities/presentation") ||
        starts_with(ns, "http://schemas.microsoft.com/netfx/2010/xaml/activities/presentation")) {
        for (size_t i = 0; presentation[i]; i++)
            if (starts_with(name, presentation[i]))
                return true;
        return false;
    }
    if (starts_with(ns, "http://schemas.microsoft.com/netfx/2010/xaml/activities/debugger"))
        return starts_with(name, "DebugSymbol.");
    if (starts_with(ns, "clr-namespace:System.Activities.Debugger"))
        return starts_with(name, "XamlDebuggerXmlReader."); /* VS2010 writes the file name */
    if (starts_with(ns, "clr-namespace:System.Activities.DynamicUpdate"))
        return starts_with(name, "DynamicUpdateInfo."); /* 4.5 update maps, not behaviour */
    if (starts_with(ns, "clr-namespace:Microsoft.VisualBasic.Activities") ||
        strcmp(ns, WFM_NS_ACTIVITIES) == 0) {
        if (strcmp(name, "VisualBasic.Settings") == 0)
            return true;
    }
    if (strcmp(ns, WFM_NS_ACTIVITIES) == 0)
        for (size_t i = 0; text_expr[i]; i++)
            if (strcmp(name, text_expr[i]) == 0)
                return true;
    return false;
}

const char *wfm__xt_trim(const char *s, size_t *len)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    *len = n;
    return s;
}

/* Length of the first top-level item of "A, B(C, D), E". */
size_t wfm__xt_first_type_len(const char *text)
{
    int depth = 0;
    size_t i = 0;
    for (; text[i]; i++) {
        if (text[i] == '(')
            depth++;
        else if (text[i] == ')')
            depth--;
        else if (text[i] == ',' && depth == 0)
            break;
    }
    return i;
}

static const char *local_part(const char *s, size_t len, size_t *local_len)
{
    const char *colon = memchr(s, ':', len);
    if (!colon) {
        *local_len = len;
        return s;
    }
    *local_len = len - (size_t)(colon + 1 - s);
    return colon + 1;
}

static bool is_list_head(const char *s, size_t len)
{
    static const char *const heads[] = {"List", "IList", "IEnumerable", "ICollection",
                                        "Collection", NULL};
    for (size_t i = 0; heads[i]; i++)
        if (strlen(heads[i]) == len && memcmp(heads[i], s, len) == 0)
            return true;
    return false;
}

/* Resolve s[0..len) (trimmed). WF_OK, WF_E_TYPE (unknown; nothing reported) or WF_E_NOMEM. */
static wf_status resolve(wfm_load *load, const wf_xml_node *el, const char *s, size_t len,
                         const wf_type **out)
{
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (len == 0 || len >= 256)
        return WF_E_TYPE;
    const char *open = memchr(s, '(', len);
    if (open) {
        if (s[len - 1] != ')')
            return WF_E_TYPE;
        size_t head_len;
        const char *head = local_part(s, (size_t)(open - s), &head_len);
        if (!is_list_head(head, head_len))
            return WF_E_TYPE;
        const wf_type *elem;
        wf_status rc = resolve(load, el, open + 1, len - (size_t)(open + 1 - s) - 1, &elem);
        if (rc != WF_OK)
            return rc;
        *out = wf_types_list(load->types, elem);
        return *out ? WF_OK : WF_E_NOMEM;
    }
    char name[256];
    memcpy(name, s, len);
    name[len] = '\0';
    char *colon = strchr(name, ':');
    const char *uri = NULL;
    if (colon) {
        *colon = '\0';
        if (el && !(uri = wf_xml_lookup_ns(el, name)))
            return WF_E_TYPE;
    }
    /* p:Name with p = clr-namespace:NS;...: a type declared as "NS.Name" (an exception of a
     * type library the bridge's Interop loaded) comes first. */
    if (colon && uri && strncmp(uri, "clr-namespace:", 14) == 0) {
        size_t ns_len = strcspn(uri + 14, ";");
        char full[512];
        if (ns_len && snprintf(full, sizeof full, "%.*s.%s", (int)ns_len, uri + 14, colon + 1) <
                          (int)sizeof full &&
            (*out = wf_types_find(load->types, full)) != NULL)
            return WF_OK;
    }
    *out = wf_types_find(load->types, colon ? colon + 1 : name);
    return *out ? WF_OK : WF_E_TYPE;
}

wf_status wfm__xt_type(wfm_load *load, const wf_xml_node *el, const char *text, size_t len,
                       wf_loc at, const wf_type **out)
{
    *out = NULL;
    wf_status rc = resolve(load, el, text, len, out);
    if (rc == WF_E_TYPE)
        wfm__xt_report(load, WF_E_TYPE, at, "unknown type '%.*s'", (int)(len > 200 ? 200 : len),
                       text);
    else if (rc == WF_E_NOMEM)
        load->nomem = true;
    return rc;
}

wf_status wfm__xt_type_quiet(wfm_load *load, const wf_xml_node *el, const char *text, size_t len,
                             const wf_type **out)
{
    *out = NULL;
    wf_status rc = resolve(load, el, text, len, out);
    if (rc == WF_E_NOMEM)
        load->nomem = true;
    return rc;
}

static bool keep_owned(wfm_load *load, const wf_value *v)
{
    if (load->owned_count == load->owned_cap) {
        size_t cap = load->owned_cap ? load->owned_cap * 2 : 8;
        wf_value *owned = wf_realloc(load->owned, cap * sizeof *owned);
        if (!owned)
            return false;
        load->owned = owned;
        load->owned_cap = cap;
    }
    load->owned[load->owned_count++] = *v;
    return true;
}

/* Convert literal text to `type` (NULL or Object: kept as a string). Reports failures. */
wf_status wfm__xt_literal(wfm_load *load, const wf_type *type, const char *text, wf_loc at,
                          wf_value *out)
{
    *out = wf_null();
    if (!type || type->kind == WF_K_STRING || type->kind == WF_K_OBJECT) {
        if (wf_value_string_static(load->arena, text, strlen(text), out) != WF_OK) {
            load->nomem = true;
            return WF_E_NOMEM;
        }
        return WF_OK;
    }
    wf_error e = WF_ERROR_INIT;
    wf_value v;
    wf_status rc = wf_value_parse(load->types, type, text, &v, &e);
    if (rc == WF_E_NOMEM) {
        load->nomem = true;
        return rc;
    }
    if (rc != WF_OK) {
        size_t len;
        const char *t = wfm__xt_trim(text, &len);
        wfm__xt_report(load, WF_E_TYPE, at, "cannot convert '%.*s' to %s",
                       (int)(len > 200 ? 200 : len), t, type->name);
        return WF_E_TYPE;
    }
    if (v.type->kind == WF_K_LIST || v.type->kind == WF_K_RECORD ||
        v.type->kind == WF_K_STRING || v.type->kind == WF_K_EXCEPTION) {
        if (!keep_owned(load, &v)) {
            wf_value_release(&v);
            load->nomem = true;
            return WF_E_NOMEM;
        }
    }
    *out = v;
    return WF_OK;
}

/* wfc_interop.c — constructs with no modern equivalent, hosted through the Interop activity
 * (docs/convert.md "Interop"): each hosted subtree becomes a generated composite legacy type
 * whose body is a verbatim copy of the subtree under a root with the workflow's own x:Class
 * and root name, so its binds, rules and code-beside handlers resolve exactly as before; the
 * workflow properties the subtree uses travel as the Interop's In and Out arguments. */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <string.h>

#include "../common/wf_xmlw.h"
#include "../common/wf_file.h"
#include "../legacy/wfl_registry.h"
#include "../legacy/wfl_typelib.h"
#include "wfc_convert_int.h"

#define W (&c->w)
#define WF3_NS "http://schemas.microsoft.com/winfx/2006/xaml/workflow"
#define X_NS "http://schemas.microsoft.com/winfx/2006/xaml"
#define MAX_SOURCE (16u << 20)

static bool below(const wfl_node *n, const wfl_node *top)
{
    for (; n; n = wfl_node_parent(n))
        if (n == top)
            return true;
    return false;
}

void wfc__interop_check(wfc__conv *c)
{
    for (size_t i = 0; i < c->slot_count; i++) {
        const wfc__slot *s = &c->slots[i];
        for (size_t k = 0; !s->is_arg && k < c->hosted_count; k++) {
            if (!below(s->owner, c->hosted[k].node))
                continue;
            wfc__diag(c, WFC_ERROR, wfl_node_loc(c->hosted[k].node), "needs-interop",
                      "%s '%s' is hosted through Interop, but '%s.%s' inside it is used outside "
                      "the hosted subtree, which Interop cannot share",
                      wfl_node_type(c->hosted[k].node)->name, wfl_node_name(c->hosted[k].node),
                      wfl_node_name(s->owner), s->dp_name);
            break;
        }
    }
}

void wfc__interop_fini(wfc__conv *c)
{
    if (c->source_doc)
        xmlFreeDoc(c->source_doc);
    c->source_doc = NULL;
}

void wfc_sidecars_free(wfc_sidecars *s)
{
    for (size_t i = 0; i < s->count; i++) {
        wf_free(s->items[i].name);
        wf_free(s->items[i].text);
    }
    wf_free(s->items);
    *s = (wfc_sidecars)WFC_SIDECARS_INIT;
}

/* Take ownership of text (a wf_buf's data) as sidecar `name`. */
static void add_sidecar(wfc__conv *c, const char *name, wf_buf *text)
{
    wfc_sidecar *items = wf_realloc(c->side.items, (c->side.count + 1) * sizeof *items);
    char *copy = wf_strdup(name);
    size_t len = 0;
    char *data = text->oom ? NULL : wf_buf_detach(text, &len);
    if (!items || !copy || !data) {
        if (items)
            c->side.items = items;
        wf_free(copy);
        wf_free(data);
        wf_buf_fini(text);
        c->nomem = true;
        return;
    }
    c->side.items = items;
    c->side.items[c->side.count++] = (wfc_sidecar){copy, data, len, false};
}

/* The element of the source whose x:Name is `name`. */
static xmlNode *find_named(xmlNode *n, const char *name)
{
    for (; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        xmlChar *v = xmlGetNsProp(n, (const xmlChar *)"Name", (const xmlChar *)X_NS);
        bool hit = v && strcmp((const char *)v, name) == 0;
        xmlFree(v);
        if (hit)
            return n;
        xmlNode *k = find_named(n->children, name);
        if (k)
            return k;
    }
    return NULL;
}

static xmlNode *source_node(wfc__conv *c, const char *name)
{
    if (!c->source_doc) {
        wf_buf b;
        wf_buf_init(&b);
        wf_error e = WF_ERROR_INIT;
        if (wf_file_read(c->path, MAX_SOURCE, &b, &e) == WF_OK && b.len <= (size_t)INT32_MAX)
            c->source_doc = xmlReadMemory(b.data, (int)b.len, c->path, NULL,
                                          XML_PARSE_NONET | XML_PARSE_NOWARNING |
                                              XML_PARSE_NOERROR);
        wf_buf_fini(&b);
    }
    return c->source_doc ? find_named(xmlDocGetRootElement(c->source_doc), name) : NULL;
}

static bool ident_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || (unsigned char)ch >= 0x80;
}

/* Whether `word` occurs in text as a whole identifier. */
static bool mentions(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; n && (p = strstr(p, word)); p++)
        if ((p == text || !ident_char(p[-1])) && !ident_char(p[n]))
            return true;
    return false;
}

/* WF4's Interop renames every In argument PIn when a property is named like one of its own or
 * a pair P / POut exists (as the Interop kind does). */
static bool names_clash(const wfl_tl_class *cls)
{
    size_t n = wfl_tl_class_prop_count(cls);
    for (size_t i = 0; i < n; i++) {
        const char *p = wfl_tl_class_prop(cls, i)->name;
        if (strcmp(p, "ActivityType") == 0 || strcmp(p, "ActivityProperties") == 0 ||
            strcmp(p, "ActivityMetaProperties") == 0)
            return true;
        for (size_t j = 0; j < n; j++) {
            const char *q = wfl_tl_class_prop(cls, j)->name;
            if (strlen(q) == strlen(p) + 3 && strncmp(q, p, strlen(p)) == 0 &&
                strcmp(q + strlen(p), "Out") == 0)
                return true;
        }
    }
    return false;
}

/* A subtree that changes the state machine's state cannot run apart from it. */
static const wfl_node *state_change(const wfl_node *n)
{
    wfl_kind k = wfl_node_type(n)->kind;
    if (k == WFL_KIND_SET_STATE || k == WFL_KIND_STATE)
        return n;
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *s = state_change(wfl_node_child(n, i));
        if (s)
            return s;
    }
    return NULL;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static const wfl_node *find_kind(const wfl_node *n, wfl_kind kind)
{
    if (wfl_node_type(n)->kind == kind)
        return n;
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *s = find_kind(wfl_node_child(n, i), kind);
        if (s)
            return s;
    }
    return NULL;
}

/* The output's stem, cut to what an assembly name may hold. */
static void assembly_name(const wfc__conv *c, const wfl_node *n, char *buf, size_t size)
{
    const char *out = c->out_name;
    const char *slash = strrchr(out, '/');
    const char *base = slash ? slash + 1 : out;
    const char *dot = strrchr(base, '.');
    size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    snprintf(buf, size, "%.*s.%s", (int)len, base, wfl_node_name(n));
    for (char *p = buf; *p; p++)
        if (!ident_char(*p) || (unsigned char)*p >= 0x80)
            if (*p != '.' && *p != '-')
                *p = '_';
}

/* A prefix for `href` on the generated root that cannot clash with the declarations in scope
 * at `node`: `base`, or base1, base2... when `base` is bound there to another namespace (a
 * generated sidecar converted again declares wfbh and wfbx itself). */
static void root_prefix(xmlNode *node, const char *base, const char *href, char *buf, size_t size)
{
    snprintf(buf, size, "%s", base);
    for (unsigned i = 1;; i++) {
        xmlNs *ns = xmlSearchNs(node->doc, node->parent, (const xmlChar *)buf);
        if (!ns || xmlStrEqual(ns->href, (const xmlChar *)href))
            return;
        snprintf(buf, size, "%s%u", base, i);
    }
}

/* Namespace declarations in scope at `node` (nearest first wins), as attributes; the
 * prefixes in `taken` (declared by the caller) are left out. */
static void scope_namespaces(xmlNode *node, const char *const taken[2], wf_xmlw *out)
{
    const xmlChar *seen[64] = {(const xmlChar *)taken[0], (const xmlChar *)taken[1]};
    size_t count = 2;
    for (xmlNode *a = node->parent; a && a->type == XML_ELEMENT_NODE; a = a->parent)
        for (xmlNs *ns = a->nsDef; ns; ns = ns->next) {
            bool dup = false;
            for (size_t i = 0; i < count; i++)
                dup |= (seen[i] == NULL && ns->prefix == NULL) ||
                       (seen[i] && ns->prefix && xmlStrEqual(seen[i], ns->prefix));
            if (dup || count == 64)
                continue;
            seen[count++] = ns->prefix;
            char attr[300];
            snprintf(attr, sizeof attr, ns->prefix ? "xmlns:%s" : "xmlns",
                     ns->prefix ? (const char *)ns->prefix : "");
            wf_xmlw_attr(out, attr, (const char *)ns->href);
        }
}

/* A sidecar's writer with its declaration and provenance comment: what FILE is, made from
 * which activity of which workflow. NULL when memory ran out (then c->nomem is set). */
static wf_xmlw *sidecar_begin(wfc__conv *c, const wfl_node *n, const char *file)
{
    wf_xmlw_opts o = WF_XMLW_OPTS_INIT;
    o.indent = true;
    wf_xmlw *x = NULL;
    if (wf_xmlw_create(&o, &x, NULL) != WF_OK) {
        c->nomem = true;
        return NULL;
    }
    wf_buf note;
    wf_buf_init(&note);
    wf_buf_addf(&note,
                "%s: %s '%s' of %s, hosted through Interop (generated by wfbridge "
                "convert %s)",
                file, wfl_node_type(n)->name, wfl_node_name(n), base_name(c->path), WFC_VERSION);
    c->nomem |= note.oom;
    wf_xmlw_declaration(x);
    wf_xmlw_comment(x, note.data);
    wf_buf_fini(&note);
    return x;
}

/* Finish a sidecar's writer into FILE's text. */
static void sidecar_end(wfc__conv *c, wf_xmlw *x, const char *file)
{
    if (!x)
        return;
    wf_buf t;
    wf_buf_init(&t);
    if (wf_xmlw_finish(x, &t, NULL) == WF_OK)
        add_sidecar(c, file, &t);
    else
        c->nomem = true;
    wf_buf_fini(&t);
    wf_xmlw_destroy(x);
}

/* NAME.activities.xml: the type library declaring the hosted activity and the properties of
 * the class it uses. */
static void typelib_sidecar(wfc__conv *c, const wfl_node *n, const wfl_tl_class *cls,
                            const bool *used, const char *assembly)
{
    const char *full = wfl_tl_class_name(cls);
    const char *dot = strrchr(full, '.');
    char file[400];
    snprintf(file, sizeof file, "%s.activities.xml", assembly);
    wf_xmlw *x = sidecar_begin(c, n, file);
    if (!x)
        return;
    wf_xmlw_open(x, "TypeLibrary");
    wf_xmlw_attr(x, "xmlns", "urn:wfbridge:typelib");
    wf_xmlw_attr(x, "Name", assembly);
    wf_xmlw_open(x, "ActivityType");
    wf_xmlw_attr(x, "Name", dot ? dot + 1 : full);
    wf_xmlw_attrf(x, "Definition", "%s.xoml", assembly);
    for (size_t i = 0; i < wfl_tl_class_prop_count(cls); i++)
        if (used[i]) {
            wf_xmlw_open(x, "Property");
            wf_xmlw_attr(x, "Name", wfl_tl_class_prop(cls, i)->name);
            wf_xmlw_attr(x, "Type", wfl_tl_class_prop(cls, i)->type->name);
            wf_xmlw_close(x);
        }
    wf_xmlw_close(x);
    wf_xmlw_close(x);
    sidecar_end(c, x, file);
}

/* NAME.xoml: a sequential workflow of the root's class holding the hosted subtree as the
 * source has it (libxml2's serialisation), with the namespaces in scope there. */
static void xoml_sidecar(wfc__conv *c, const wfl_node *n, xmlNode *src, const wfl_tl_class *cls,
                         const char *assembly)
{
    char file[400], h[32], xp[32], attr[64];
    snprintf(file, sizeof file, "%s.xoml", assembly);
    root_prefix(src, "wfbh", WF3_NS, h, sizeof h);
    root_prefix(src, "wfbx", X_NS, xp, sizeof xp);
    const char *const taken[2] = {h, xp};
    wf_xmlw *x = sidecar_begin(c, n, file);
    if (!x)
        return;
    snprintf(attr, sizeof attr, "%s:SequentialWorkflowActivity", h);
    wf_xmlw_open(x, attr);
    snprintf(attr, sizeof attr, "xmlns:%s", h);
    wf_xmlw_attr(x, attr, WF3_NS);
    snprintf(attr, sizeof attr, "xmlns:%s", xp);
    wf_xmlw_attr(x, attr, X_NS);
    snprintf(attr, sizeof attr, "%s:Class", xp);
    wf_xmlw_attr(x, attr, wfl_tl_class_name(cls));
    snprintf(attr, sizeof attr, "%s:Name", xp);
    wf_xmlw_attr(x, attr, wfl_node_name(c->root));
    scope_namespaces(src, taken, x);
    xmlBuffer *xb = xmlBufferCreate();
    if (!xb || xmlNodeDump(xb, c->source_doc, src, 1, 0) < 0)
        c->nomem = true;
    else
        wf_xmlw_raw(x, (const char *)xmlBufferContent(xb)); /* libxml2's own serialisation */
    xmlBufferFree(xb);
    wf_xmlw_raw(x, "\n");
    wf_xmlw_close(x);
    sidecar_end(c, x, file);
}

static void generate(wfc__conv *c, const wfl_node *n, xmlNode *src, const wfl_tl_class *cls,
                     const bool *used, const char *assembly, const wf_buf *rules)
{
    typelib_sidecar(c, n, cls, used, assembly);
    xoml_sidecar(c, n, src, cls, assembly);
    if (rules->len) {
        char file[400];
        wf_buf r;
        wf_buf_init(&r);
        wf_buf_add(&r, rules->data, rules->len);
        snprintf(file, sizeof file, "%s.rules", assembly);
        add_sidecar(c, file, &r);
    }
}

/* Whether class property i is used by the subtree `dump`: named in it, in the rules it
 * refers to, or a parameter of a handler or condition it names. */
static bool prop_used(const wfl_tl_class *cls, size_t i, const char *dump, const wf_buf *rules)
{
    const char *p = wfl_tl_class_prop(cls, i)->name;
    if (mentions(dump, p) || (rules->len && mentions(rules->data, p)))
        return true;
    for (size_t f = 0; f < wfl_tl_class_func_count(cls); f++) {
        const wfl_tl_func *fn = wfl_tl_class_func_at(cls, f);
        if (!mentions(dump, wfl_tl_func_name(fn)))
            continue;
        for (size_t k = 0; k < wfl_tl_func_param_count(fn); k++)
            if (strcmp(wfl_tl_func_param(fn, k)->name, p) == 0)
                return true;
        const wfl_tl_prop *ret = wfl_tl_func_return(fn);
        if (ret && strcmp(ret->name, p) == 0)
            return true;
    }
    return false;
}

static bool in_subtree(const wfl_node *n, const char *name)
{
    if (strcmp(wfl_node_name(n), name) == 0)
        return true;
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        if (in_subtree(wfl_node_child(n, i), name))
            return true;
    return false;
}

/* The first ActivityBind target in dump that is neither the root nor inside n, or NULL. */
static const char *outside_bind(const wfc__conv *c, const wfl_node *n, const char *dump,
                                char *buf, size_t size)
{
    for (const char *p = dump; (p = strstr(p, "ActivityBind")); p++) {
        const char *q = p + 12;
        if (strncmp(q, " Name=\"", 7) == 0)
            q += 7;
        else if (*q == ' ')
            q++;
        else
            continue;
        if (strncmp(q, "Name=", 5) == 0)
            q += 5;
        size_t len = 0;
        while (q[len] && ident_char(q[len]))
            len++;
        snprintf(buf, size, "%.*s", (int)len, q);
        if (len && strcmp(buf, wfl_node_name(c->root)) != 0 && !in_subtree(n, buf))
            return buf;
    }
    return NULL;
}

static void cannot_host(wfc__conv *c, const wfl_node *n, const char *why, const char *because)
{
    wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "needs-interop",
              "%s '%s' has no modern equivalent (%s) and cannot be hosted through Interop: %s",
              wfl_node_type(n)->name, wfl_node_name(n), why, because);
}

void wfc__interop(wfc__conv *c, const wfl_node *n, const char *why)
{
    const wfl_tl_class *cls = wfl_node_type(c->root)->code_beside;
    const wfl_node *sc = state_change(n);
    if (!c->opts->register_interop) {
        cannot_host(c, n, why, "the Interop activity is not registered for validation");
        return;
    }
    if (n == c->root || !cls) {
        cannot_host(c, n, why,
                    "the workflow has no code-beside class (x:Class with a type library) for "
                    "the hosted composite");
        return;
    }
    if (sc) {
        cannot_host(c, n, why, "it changes the state of the state machine");
        return;
    }
    if (c->hosted_count == WFC__MAX_HOSTED) {
        cannot_host(c, n, why, "too many hosted subtrees in one workflow");
        return;
    }
    xmlNode *src = source_node(c, wfl_node_name(n));
    if (!src) {
        cannot_host(c, n, why, "its element was not found again in the source");
        return;
    }
    wfc__hosted *h = &c->hosted[c->hosted_count++];
    h->node = n;
    snprintf(h->prefix, sizeof h->prefix, "io%zu", c->hosted_count - 1);
    assembly_name(c, n, h->assembly, sizeof h->assembly);

    xmlBuffer *xb = xmlBufferCreate();
    if (!xb || xmlNodeDump(xb, c->source_doc, src, 0, 0) < 0) {
        if (xb)
            xmlBufferFree(xb);
        c->nomem = true;
        return;
    }
    const char *dump = (const char *)xmlBufferContent(xb);
    char target[128], because[300];
    if (outside_bind(c, n, dump, target, sizeof target)) {
        snprintf(because, sizeof because,
                 "it binds to '%s', an activity outside the hosted subtree", target);
        cannot_host(c, n, why, because);
        c->hosted_count--;
        xmlBufferFree(xb);
        return;
    }
    wf_buf rules;
    wf_buf_init(&rules);
    const char *rules_path = wfl_definition_rules_path(c->def);
    wf_error e = WF_ERROR_INIT;
    if (rules_path && wf_file_read(rules_path, MAX_SOURCE, &rules, &e) != WF_OK)
        wf_buf_reset(&rules);
    if (!strstr(dump, "RuleSetReference") && !strstr(dump, "RuleConditionReference"))
        wf_buf_reset(&rules); /* the subtree uses no rules */
    if (rules.len)
        wf_buf_addc(&rules, '\0'), rules.len--; /* a string for mentions() */

    size_t np = wfl_tl_class_prop_count(cls);
    bool used[256] = {false};
    for (size_t i = 0; i < np && i < 256; i++)
        used[i] = prop_used(cls, i, dump, &rules);
    bool clash = names_clash(cls);

    /* Out arguments land in variables of a Sequence and are assigned to the workflow's
     * locations only when the Interop closes normally: a canceled Interop (the losing trigger
     * of a state) must not write back the values it was started with. No properties: the
     * Interop alone. */
    bool any = false;
    for (size_t i = 0; i < np && i < 256; i++)
        any |= used[i];
    if (any) {
        wfc_xw_open(W, "Sequence");
        wfc_xw_open(W, "Sequence.Variables");
    }
    for (size_t i = 0; i < np && i < 256; i++) {
        if (!used[i])
            continue;
        wf_buf t;
        wf_buf_init(&t);
        wfc__xaml_type(wfl_tl_class_prop(cls, i)->type, &t);
        wfc_xw_open(W, "Variable");
        wfc_xw_attr(W, "x:TypeArguments", t.len ? t.data : "x:Object");
        wfc_xw_attrf(W, "Name", "%s_%sOut", wfl_node_name(n), wfl_tl_class_prop(cls, i)->name);
        wfc_xw_close(W);
        wf_buf_fini(&t);
    }
    if (any)
        wfc_xw_close(W);
    wfc_xw_open(W, "Interop");
    wfc_xw_attr(W, "DisplayName", wfl_node_name(n));
    const char *full = wfl_tl_class_name(cls);
    const char *dot = strrchr(full, '.');
    wfc_xw_attrf(W, "ActivityType", "%s:%s", h->prefix, dot ? dot + 1 : full);
    for (size_t i = 0; i < np && i < 256; i++) {
        if (!used[i])
            continue;
        const char *p = wfl_tl_class_prop(cls, i)->name;
        wf_buf ref;
        wf_buf_init(&ref);
        wf_buf_addc(&ref, '[');
        if (wfc__param_expr(c, n, p, true, true, &ref)) {
            wf_buf_addc(&ref, ']');
            char name[300];
            snprintf(name, sizeof name, "%s%s", p, clash ? "In" : "");
            wfc_xw_attr(W, name, ref.data);
            snprintf(name, sizeof name, "%sOut", p);
            wfc_xw_attrf(W, name, "[%s_%sOut]", wfl_node_name(n), p);
        }
        wf_buf_fini(&ref);
    }
    wfc_xw_close(W);
    for (size_t i = 0; i < np && i < 256; i++) {
        if (!used[i])
            continue;
        const char *p = wfl_tl_class_prop(cls, i)->name;
        wf_buf ref, t;
        wf_buf_init(&ref);
        wf_buf_init(&t);
        wfc__xaml_type(wfl_tl_class_prop(cls, i)->type, &t);
        if (wfc__param_expr(c, n, p, false, true, &ref)) {
            wfc_xw_open(W, "Assign");
            wfc_xw_attr(W, "x:TypeArguments", t.len ? t.data : "x:Object");
            wfc_xw_attrf(W, "To", "[%s]", ref.data);
            wfc_xw_attrf(W, "Value", "[%s_%sOut]", wfl_node_name(n), p);
            wfc_xw_close(W);
        }
        wf_buf_fini(&ref);
        wf_buf_fini(&t);
    }
    if (any)
        wfc_xw_close(W);

    if (c->pass == 2) {
        wfc__diag(c, WFC_WARNING, wfl_node_loc(n), "interop",
                  "%s '%s' has no modern equivalent (%s): hosted through Interop as the "
                  "generated composite %s (%s.activities.xml beside the XAML)",
                  wfl_node_type(n)->name, wfl_node_name(n), why, h->assembly, h->assembly);
        wfc_file_add_loss(c->file, WFC_LOSS_SEMANTICS, wfl_node_loc(n).line,
                          "activity hosted through Interop");
        generate(c, n, src, cls, used, h->assembly, &rules);
        const wfl_node *susp = find_kind(n, WFL_KIND_SUSPEND);
        if (susp)
            wfc__diag(c, WFC_REVIEW, wfl_node_loc(susp), "interop-suspend",
                      "SuspendActivity '%s' suspends the WF3 instance; inside Interop it faults "
                      "with NotSupportedException (as in WF4)",
                      wfl_node_name(susp));
    }
    wf_buf_fini(&rules);
    xmlBufferFree(xb);
}

/* wfc_data.c — where legacy data lives in the converted workflow: root DPs become arguments,
 * other activities' DPs variables declared at the narrowest scope covering every use (a DP
 * inside a loop body stays per iteration), and every ActivityBind a reference to one of them
 * (docs/architecture.md "The converter"; docs/semantics.md §1 "ActivityBind", §5). */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "../legacy/wfl_rules.h"
#include "wfc_convert_int.h"

static bool is_param(const wfc__conv *c, const wfl_node *owner, const char *dp_name,
                     wfl_param_info *info)
{
    return owner == c->root && wfl_definition_find_param(c->def, dp_name, info);
}

/* A root property or a variable already has `name`. */
static bool name_taken(const wfc__conv *c, const char *name)
{
    wfl_param_info info;
    if (wfl_definition_find_param(c->def, name, &info))
        return true;
    for (size_t i = 0; i < c->slot_count; i++)
        if (strcmp(c->slots[i].name, name) == 0)
            return true;
    return false;
}

/* Non-ASCII bytes (UTF-8 letters: "grüßen") are kept, as the expression language reads them. */
static bool ident_char(char ch, bool first)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (unsigned char)ch >= 0x80 || (!first && ch >= '0' && ch <= '9');
}

/* `name` as an identifier: every byte that cannot be in one, and the '_' of a "_x", written
 * _xHH_ (as XmlConvert.EncodeName does), so the original name can be read back. */
static void encode_name(const char *name, wf_buf *out)
{
    for (const char *p = name; *p; p++) {
        bool escape = !ident_char(*p, p == name) || (p[0] == '_' && p[1] == 'x');
        if (escape)
            wf_buf_addf(out, "_x%02X_", (unsigned)(unsigned char)*p);
        else
            wf_buf_addc(out, *p);
    }
}

void wfc__gen_name(const wfc__conv *c, const wfl_node *owner, const char *label, char *out,
                   size_t size)
{
    wf_buf base;
    wf_buf_init(&base);
    encode_name(wfl_node_name(owner), &base);
    wf_buf_addf(&base, "_%s", label);
    snprintf(out, size, "%s", base.oom ? "_" : base.data);
    for (unsigned n = 2; name_taken(c, out); n++)
        snprintf(out, size, "%.100s_%u", base.oom ? "_" : base.data, n);
    wf_buf_fini(&base);
}

static void unique_name(wfc__conv *c, wfc__slot *s, const char *label)
{
    wfc__gen_name(c, s->owner, label, s->name, sizeof s->name);
}

wfc__slot *wfc__find_slot(wfc__conv *c, const wfl_node *owner, const char *dp_name)
{
    for (size_t i = 0; i < c->slot_count; i++)
        if (c->slots[i].owner == owner && strcmp(c->slots[i].dp_name, dp_name) == 0)
            return &c->slots[i];
    return NULL;
}

static wfc__slot *new_slot(wfc__conv *c)
{
    if (c->slot_count == c->slot_cap) {
        size_t ncap = c->slot_cap ? c->slot_cap * 2 : 16;
        wfc__slot *n = wf_realloc(c->slots, ncap * sizeof *n);
        if (!n) {
            c->nomem = true;
            return NULL;
        }
        c->slots = n;
        c->slot_cap = ncap;
    }
    wfc__slot *s = &c->slots[c->slot_count];
    memset(s, 0, sizeof *s);
    return s;
}

wfc__slot *wfc__slot_of(wfc__conv *c, const wfl_node *owner, const char *dp_name,
                        const wf_type *type, wf_loc at)
{
    wfc__slot *s = wfc__find_slot(c, owner, dp_name);
    if (s)
        return s;
    assert(c->pass == 1 || c->pass == 2);
    if (c->pass != 1) { /* pass 2 sees exactly the slots pass 1 made */
        wfc__diag(c, WFC_ERROR, at, "internal", "no storage for %s.%s", wfl_node_name(owner),
                  dp_name);
        return NULL;
    }
    wfl_param_info info;
    bool arg = is_param(c, owner, dp_name, &info);
    const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(owner), dp_name);
    if (!arg && (!dp || dp->kind != WFL_DPK_VALUE)) {
        wfc__diag(c, WFC_ERROR, at, "bind-target", "'%s' is not a data property of '%s'", dp_name,
                  wfl_node_name(owner));
        return NULL;
    }
    if (!(s = new_slot(c)))
        return NULL;
    s->owner = owner;
    s->dp_name = arg ? info.name : dp->name;
    s->type = arg ? info.type : (dp->type ? dp->type : type);
    s->is_arg = arg;
    if (arg) {
        snprintf(s->name, sizeof s->name, "%s", info.name);
    } else {
        unique_name(c, s, s->dp_name);
        wfl_prop_info pi;
        wfl_node_prop(owner, dp, &pi);
        if (pi.kind == WFL_PROP_LITERAL) /* written in the XOML: the variable starts there */
            s->initial = pi.literal;
        else if (dp->tl_prop && dp->tl_prop->has_default)
            s->initial = &dp->tl_prop->default_value;
    }
    c->slot_count++;
    if (!arg) /* its owner reads or writes it too, wherever the binds are */
        wfc__use(c, s, owner, true, false);
    return s;
}

/* A variable of the converter's own, not a DP: `dp_name` is a parenthesized role. */
static wfc__slot *own_slot(wfc__conv *c, const wfl_node *owner, const char *role,
                           const wf_type *type)
{
    wfc__slot *s = wfc__find_slot(c, owner, role);
    if (s || c->pass != 1 || !(s = new_slot(c)))
        return s;
    s->owner = owner;
    s->dp_name = role;
    s->type = type;
    char label[32];
    snprintf(label, sizeof label, "%.*s", (int)strlen(role) - 2, role + 1); /* "(Run)": Run */
    unique_name(c, s, label);
    c->slot_count++;
    wfc__use(c, s, owner, true, true);
    return s;
}

wfc__slot *wfc__token_slot(wfc__conv *c, const wfl_node *owner, const wfl_node *user)
{
    wfc__slot *run = own_slot(c, owner, WFC__ROLE_RUN, &wf_type_token);
    wfc__slot *token = run ? own_slot(c, owner, WFC__ROLE_TOKEN, &wf_type_token) : NULL;
    if (token)
        wfc__use(c, token, user, true, true);
    return token;
}

static const wfl_node *common_ancestor(const wfl_node *a, const wfl_node *b)
{
    for (const wfl_node *x = a; x; x = wfl_node_parent(x))
        for (const wfl_node *y = b; y; y = wfl_node_parent(y))
            if (x == y)
                return x;
    return NULL;
}

static void record_use(wfc__conv *c, const wfc__slot *slot, const wfl_node *user, bool write)
{
    if (c->use_count == c->use_cap) {
        size_t ncap = c->use_cap ? c->use_cap * 2 : 32;
        wfc__use_rec *n = wf_realloc(c->uses, ncap * sizeof *n);
        if (!n) {
            c->nomem = true;
            return;
        }
        c->uses = n;
        c->use_cap = ncap;
    }
    assert(slot >= c->slots && slot < c->slots + c->slot_count); /* a slot of this session */
    c->uses[c->use_count++] = (wfc__use_rec){(size_t)(slot - c->slots), user, write};
}

static bool below(const wfl_node *n, const wfl_node *ancestor)
{
    for (; n; n = wfl_node_parent(n))
        if (n == ancestor)
            return true;
    return false;
}

bool wfc__share_data(const wfc__conv *c, const wfl_node *a, const wfl_node *b)
{
    for (size_t i = 0; i < c->use_count; i++) {
        const wfc__use_rec *x = &c->uses[i];
        if (!below(x->user, a))
            continue;
        for (size_t k = 0; k < c->use_count; k++) {
            const wfc__use_rec *y = &c->uses[k];
            if (y->slot == x->slot && (x->write || y->write) && below(y->user, b))
                return true;
        }
    }
    return false;
}

void wfc__use(wfc__conv *c, wfc__slot *slot, const wfl_node *user, bool read, bool write)
{
    if (c->pass != 1 || !slot)
        return;
    record_use(c, slot, user, write);
    slot->read |= read;
    slot->written |= write;
    if (!slot->is_arg)
        slot->scope = slot->scope ? common_ancestor(slot->scope, user) : user;
    /* the scope covers every use seen so far, this one included */
    assert(slot->is_arg || !slot->scope || common_ancestor(slot->scope, user) == slot->scope);
}

/* Append the path segments after the bound member: `.Name`, `[3]`, `.key`. */
static bool add_path(wfc__conv *c, const wfl_bind *b, wf_buf *out)
{
    for (size_t i = 1; i < b->seg_count; i++) {
        const wfl_path_seg *sg = &b->segs[i];
        if (sg->kind == WFL_SEG_INDEX) {
            wf_buf_addf(out, "[%lld]", (long long)sg->index);
        } else {
            for (const char *p = sg->name; *p; p++) {
                if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (p != sg->name && *p >= '0' && *p <= '9'))) {
                    wfc__diag(c, WFC_ERROR, b->loc, "bind-path",
                              "bind path member '%s' has no modern spelling", sg->name);
                    return false;
                }
            }
            wf_buf_addf(out, ".%s", sg->name);
        }
    }
    return true;
}

/* Whether `target` lies in the body of a While or Replicator that `from` is outside of: WF3
 * runs that body on clones, so `from` sees the template, which never ran. */
static bool template_of_loop(const wfl_node *target, const wfl_node *from)
{
    for (const wfl_node *l = wfl_node_parent(target); l; l = wfl_node_parent(l)) {
        wfl_kind k = wfl_node_type(l)->kind;
        if ((k == WFL_KIND_WHILE || k == WFL_KIND_REPLICATOR) && !below(from, l))
            return true;
    }
    return false;
}

/*
** A read, from outside a loop, of a whole DP of an activity in the loop's body: the template's
** value, i.e. what the XOML gives it or its default, never an iteration's (docs/wf3-behaviour.md
** "Conversion fidelity"). Written as that literal; no variable is shared with the iterations.
*/
static bool template_value(const wfl_node *target, const wfl_dp *dp, wf_buf *out,
                           const wf_type **type)
{
    wfl_prop_info pi;
    wfl_node_prop(target, dp, &pi);
    const wf_value *v = pi.kind == WFL_PROP_LITERAL               ? pi.literal
                        : dp->tl_prop && dp->tl_prop->has_default ? &dp->tl_prop->default_value
                                                                  : &dp->default_value;
    if (type)
        *type = dp->type;
    return wfl_rules_literal_text(v, out);
}

bool wfc__bind_expr(wfc__conv *c, const wfl_node *from, const wfl_bind *b, bool read, bool write,
                    wf_buf *out, const wf_type **type)
{
    if (type)
        *type = NULL;
    for (int hops = 0; hops < 16; hops++) {
        const wfl_node *target = wfl_node_resolve(c->def, from, b->name);
        if (!target || b->seg_count == 0) {
            wfc__diag(c, WFC_ERROR, b->loc, "bind-target",
                      "ActivityBind '%s%s%s' does not name "
                      "an activity's property",
                      b->name, *b->path ? ", Path=" : "", b->path);
            return false;
        }
        const char *member = b->segs[0].name;
        const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(target), member);
        if (dp && target != c->root) {
            wfl_prop_info pi;
            wfl_node_prop(target, dp, &pi);
            if (pi.kind == WFL_PROP_BIND && b->seg_count == 1) { /* a chain: follow it */
                from = target;
                b = pi.bind;
                continue;
            }
        }
        if (dp && target != c->root && !write && b->seg_count == 1 && dp->kind == WFL_DPK_VALUE &&
            template_of_loop(target, from))
            return template_value(target, dp, out, type);
        wfc__slot *s = wfc__slot_of(c, target, member, dp ? dp->type : NULL, b->loc);
        if (!s)
            return false;
        bool whole = b->seg_count == 1;
        wfc__use(c, s, from, read || !whole, write);
        if (type && whole)
            *type = s->type;
        wf_buf_adds(out, s->name);
        return add_path(c, b, out);
    }
    wfc__diag(c, WFC_ERROR, b->loc, "bind-target", "ActivityBind chain is too long or cyclic");
    return false;
}

bool wfc__param_expr(wfc__conv *c, const wfl_node *user, const char *name, bool read, bool write,
                     wf_buf *out)
{
    wfl_param_info info;
    if (!wfl_definition_find_param(c->def, name, &info))
        return false;
    wfc__slot *s = wfc__slot_of(c, c->root, info.name, info.type, wfl_node_loc(user));
    if (!s)
        return false;
    wfc__use(c, s, user, read, write);
    wf_buf_adds(out, s->name);
    return true;
}

static bool builtin_exception(const wf_type *t)
{
    static const wf_type *const known[] = {
        &wf_exc_exception,      &wf_exc_system,
        &wf_exc_application,    &wf_exc_invalid_operation,
        &wf_exc_argument,       &wf_exc_argument_null,
        &wf_exc_argument_range, &wf_exc_arithmetic,
        &wf_exc_divide_by_zero, &wf_exc_overflow,
        &wf_exc_null_reference, &wf_exc_format,
        &wf_exc_invalid_cast,   &wf_exc_index_range,
        &wf_exc_key_not_found,  &wf_exc_not_supported,
        &wf_exc_timeout,        &wf_exc_operation_canceled,
        &wf_exc_native,         &wf_exc_workflow_terminated,
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i] == t)
            return true;
    return false;
}

/* Exceptions of WF3's rules engine, outside System: their prefix and namespace. */
static const struct {
    const wf_type *type;
    const char *prefix, *ns;
} rule_exceptions[] = {
    {&wf_exc_rule, "swar", WFC__NS_RULES},
    {&wf_exc_rule_evaluation, "swar", WFC__NS_RULES},
    {&wf_exc_target_invocation, "sr", "clr-namespace:System.Reflection;assembly=mscorlib"},
};

const char *wfc__type_xmlns(const wf_type *t, const char **prefix)
{
    for (size_t i = 0; i < sizeof rule_exceptions / sizeof rule_exceptions[0]; i++)
        if (rule_exceptions[i].type == t) {
            *prefix = rule_exceptions[i].prefix;
            return rule_exceptions[i].ns;
        }
    return NULL;
}

bool wfc__xaml_type(const wf_type *t, wf_buf *out)
{
    switch (t->kind) {
    case WF_K_BOOL:
        return wf_buf_adds(out, "x:Boolean");
    case WF_K_INT32:
        return wf_buf_adds(out, "x:Int32");
    case WF_K_INT64:
        return wf_buf_adds(out, "x:Int64");
    case WF_K_DOUBLE:
        return wf_buf_adds(out, "x:Double");
    case WF_K_DECIMAL:
        return wf_buf_adds(out, "x:Decimal");
    case WF_K_STRING:
        return wf_buf_adds(out, "x:String");
    case WF_K_DATETIME:
        return wf_buf_adds(out, "s:DateTime");
    case WF_K_TIMESPAN:
        return wf_buf_adds(out, "s:TimeSpan");
    case WF_K_OBJECT:
    case WF_K_RECORD:
        return wf_buf_adds(out, "x:Object");
    case WF_K_TOKEN:
        return wf_buf_adds(out, "CompensationToken");
    case WF_K_LIST:
        wf_buf_adds(out, "scg:List(");
        if (!wfc__xaml_type(t->elem, out))
            return false;
        return wf_buf_adds(out, ")");
    case WF_K_EXCEPTION: {
        const char *prefix = "s";
        if (!wfc__type_xmlns(t, &prefix) && !builtin_exception(t))
            return false;
        return wf_buf_addf(out, "%s:%s", prefix, t->name);
    }
    default:
        return false;
    }
}

const char *wfc__cast_name(const wf_type *t)
{
    switch (t->kind) {
    case WF_K_BOOL:
        return "bool";
    case WF_K_INT32:
        return "int";
    case WF_K_INT64:
        return "long";
    case WF_K_DOUBLE:
        return "double";
    case WF_K_DECIMAL:
        return "decimal";
    case WF_K_STRING:
        return "string";
    case WF_K_DATETIME:
        return "DateTime";
    case WF_K_TIMESPAN:
        return "TimeSpan";
    default:
        return NULL;
    }
}

bool wfc__has_variables(const wfc__conv *c, const wfl_node *scope)
{
    for (size_t i = 0; i < c->slot_count; i++)
        if (!c->slots[i].is_arg && c->slots[i].scope == scope)
            return true;
    return false;
}

void wfc__write_variables(wfc__conv *c, const wfl_node *scope, const char *owner_elem)
{
    if (!wfc__has_variables(c, scope))
        return;
    char elem[96];
    snprintf(elem, sizeof elem, "%s.Variables", owner_elem);
    wfc_xw_open(&c->w, elem);
    for (size_t i = 0; i < c->slot_count; i++) {
        const wfc__slot *s = &c->slots[i];
        if (s->is_arg || s->scope != scope)
            continue;
        wf_buf t;
        wf_buf_init(&t);
        if (!wfc__xaml_type(s->type, &t))
            wfc__diag(c, WFC_ERROR, wfl_node_loc(s->owner), "type-unmapped",
                      "%s.%s has type %s, which has no modern spelling", wfl_node_name(s->owner),
                      s->dp_name, s->type->name);
        wfc_xw_open(&c->w, "Variable");
        wfc_xw_attr(&c->w, "x:TypeArguments", t.data);
        wfc_xw_attr(&c->w, "Name", s->name);
        if (s->initial && s->initial->type->kind != WF_K_NULL) {
            wf_buf v;
            wf_buf_init(&v);
            wf_buf_addc(&v, '[');
            wfl_rules_literal_text(s->initial, &v);
            wf_buf_addc(&v, ']');
            wfc_xw_attr(&c->w, "Default", v.data);
            wf_buf_fini(&v);
        }
        wfc_xw_close(&c->w);
        wf_buf_fini(&t);
    }
    wfc_xw_close(&c->w);
}

/* Nodes whose modern form can neither declare variables nor be wrapped in a Sequence. */
static bool cannot_declare(const wfl_node *n)
{
    switch (wfl_node_type(n)->kind) {
    case WFL_KIND_STATE:
    case WFL_KIND_EVENT_DRIVEN:
    case WFL_KIND_FAULT_HANDLERS:
    case WFL_KIND_SET_STATE:
        return true;
    default:
        return false;
    }
}

void wfc__settle_scopes(wfc__conv *c)
{
    for (size_t i = 0; i < c->slot_count; i++) {
        wfc__slot *s = &c->slots[i];
        if (s->is_arg)
            continue;
        if (!s->scope)
            s->scope = wfl_node_parent(s->owner) ? wfl_node_parent(s->owner) : c->root;
        while (s->scope != c->root && cannot_declare(s->scope))
            s->scope = wfl_node_parent(s->scope);
    }
}

const char *wfc__lib_prefix(wfc__conv *c, const wfl_typelib *tl, wf_loc at)
{
    for (size_t i = 0; i < c->lib_count; i++)
        if (c->libs[i].tl == tl)
            return c->libs[i].prefix;
    const char *lib = wfl_typelib_library(tl);
    if (!lib || !*lib || c->lib_count == WFC__MAX_LIBS) {
        wfc__diag(c, WFC_ERROR, at, "no-native-library",
                  "type library '%s' names no native library", wfl_typelib_name(tl));
        return NULL;
    }
    wfc__lib *l = &c->libs[c->lib_count];
    l->tl = tl;
    snprintf(l->prefix, sizeof l->prefix, "ns%zu", c->lib_count);
    const char *start = strncmp(lib, "lib", 3) == 0 ? lib + 3 : lib;
    size_t len = strlen(start);
    if (len > 3 && strcmp(start + len - 3, ".so") == 0)
        len -= 3;
    snprintf(l->assembly, sizeof l->assembly, "%.*s", (int)len, start);
    c->lib_count++;
    return l->prefix;
}

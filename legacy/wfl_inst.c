/* wfl_inst.c — the run-time activity tree: value slots per activity instance, ActivityBind
 * resolved on every access (names are unique in a definition, so resolving a name means
 * finding the nearest instance of one node: clone first), execution-context clones, and the
 * versioned binary save/restore (docs/semantics.md §1 "ActivityBind", §4 "Execution contexts"). */
#include "wfl_inst_int.h"

#include "../common/wf_codec.h"

#include <assert.h>
#include <string.h>

#define BIND_DEPTH_MAX 32
#define SPARES_MAX     16 /* freed activity blocks kept per node */

struct wfl_act {
    wfl_inst *inst;
    const wfl_node *node;
    wfl_act *parent;       /* a clone root's parent is its template's parent */
    wfl_act **children;    /* node->child_count entries, same order as the node's */
    wf_value *slots;       /* node->type->dp_count values */
    wfl_status status;
    wfl_result result;
    uint32_t context_id;
    bool clone_root;
    wfl_act *template_act; /* clone roots only */
    wfl_act **contexts;    /* live clones of this activity's children (owned) */
    size_t context_count, context_cap;
    void *exec;            /* the executor's (see dispose) */
    const unsigned char *blob; /* restore only: the executor's saved bytes */
    size_t blob_len;
    bool dirty; /* slots, status, result or exec changed since built or reset */
};

struct wfl_inst {
    const wfl_definition *def;
    wfl_act *root;
    wfl_act **templates; /* by node index */
    wfl_act **spares;    /* by node index: freed blocks of that node's size, a list through
                            their parent field, at most SPARES_MAX (a loop's next clone, or a
                            parallel Replicator's next round, takes them), in the templates'
                            allocation */
    uint32_t next_context;
    wfl_act_dispose_fn dispose;
    void *dispose_ud;
};


/* ---- building and freeing ------------------------------------------------------------------- */
static void init_slot(wf_value *slot, const wfl_dp *dp, const wfl_pval *pv)
{
    if (pv->kind == WFL_PV_LITERAL)
        *slot = wf_value_retain(&pv->u.literal);
    else if (pv->kind == WFL_PV_UNSET)
        *slot = wf_value_retain(&dp->default_value);
    else
        *slot = wf_null();
}

/* One activity instance (slots from the definition), children not yet built. */
static wfl_act *act_new(wfl_inst *inst, const wfl_node *node, wfl_act *parent, uint32_t ctx)
{
    size_t nslots = node->type->dp_count, nkids = node->child_count;
    size_t size = sizeof(wfl_act) + nslots * sizeof(wf_value) + nkids * sizeof(wfl_act *);
    wfl_act *a = inst->spares[node->index];
    if (a != NULL) {
        inst->spares[node->index] = a->parent;
        memset(a, 0, size);
    } else if ((a = wf_calloc(1, size)) == NULL) {
        return NULL;
    }
    a->inst = inst;
    a->node = node;
    a->parent = parent;
    a->slots = (wf_value *)(a + 1);
    a->children = (wfl_act **)(a->slots + nslots);
    a->context_id = ctx;
    for (size_t i = 0; i < nslots; i++)
        init_slot(&a->slots[i], node->type->dps[i], &node->props[i]);
    return a;
}

/* Keep a freed block on its node's spare list (the list's length in its head's context_count)
 * unless SPARES_MAX are kept already. */
static void spare_put(wfl_act **list, wfl_act *a)
{
    size_t kept = *list != NULL ? (*list)->context_count : 0;
    if (kept >= SPARES_MAX) {
        wf_free(a);
        return;
    }
    a->parent = *list;
    a->context_count = kept + 1;
    *list = a;
}

static void act_free(wfl_act *a)
{
    if (a == NULL)
        return;
    for (size_t i = 0; i < a->context_count; i++)
        act_free(a->contexts[i]);
    wf_free(a->contexts);
    for (size_t i = 0; i < a->node->child_count; i++)
        act_free(a->children[i]);
    if (a->exec != NULL && a->inst->dispose != NULL)
        a->inst->dispose(a->inst->dispose_ud, a, a->exec);
    for (size_t i = 0; i < a->node->type->dp_count; i++)
        if (!wf_is_null(&a->slots[i]))
            wf_value_release(&a->slots[i]);
    spare_put(&a->inst->spares[a->node->index], a);
}

/* A fresh subtree for `node`; templates (non-NULL) receives the template acts by index. */
static wfl_act *build_tree(wfl_inst *inst, const wfl_node *node, wfl_act *parent, uint32_t ctx,
                           wfl_act **templates)
{
    wfl_act *a = act_new(inst, node, parent, ctx);
    if (a == NULL)
        return NULL;
    if (templates != NULL)
        templates[node->index] = a;
    for (size_t i = 0; i < node->child_count; i++) {
        a->children[i] = build_tree(inst, node->children[i], a, ctx, templates);
        if (a->children[i] == NULL) {
            act_free(a);
            return NULL;
        }
    }
    return a;
}

static wfl_inst *inst_new(const wfl_definition *def)
{
    wfl_inst *inst = wf_calloc(1, sizeof *inst);
    if (inst == NULL)
        return NULL;
    inst->def = def;
    inst->templates = wf_calloc(2 * (def->node_count + 1), sizeof *inst->templates);
    if (inst->templates == NULL) {
        wf_free(inst);
        return NULL;
    }
    inst->spares = inst->templates + def->node_count + 1;
    return inst;
}

wf_status wfl_inst_create(const wfl_definition *def, wfl_inst **out, wf_error *err)
{
    *out = NULL;
    wfl_inst *inst = inst_new(def);
    if (inst == NULL)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory creating an instance");
    inst->root = build_tree(inst, def->root, NULL, 0, inst->templates);
    if (inst->root == NULL) {
        wfl_inst_destroy(inst);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory creating an instance");
    }
    *out = inst;
    return WF_OK;
}

void wfl_inst_destroy(wfl_inst *inst)
{
    if (inst == NULL)
        return;
    act_free(inst->root);
    for (size_t i = 0; i <= inst->def->node_count; i++)
        for (wfl_act *a = inst->spares[i], *next; a != NULL; a = next) {
            next = a->parent;
            wf_free(a);
        }
    wf_free(inst->templates);
    wf_free(inst);
}

static void act_reset(wfl_act *a)
{
    for (size_t i = 0; i < a->context_count; i++)
        act_free(a->contexts[i]);
    a->context_count = 0;
    for (size_t i = 0; i < a->node->child_count; i++)
        act_reset(a->children[i]);
    if (!a->dirty)
        return; /* as built */
    a->dirty = false;
    if (a->exec != NULL && a->inst->dispose != NULL)
        a->inst->dispose(a->inst->dispose_ud, a, a->exec);
    a->exec = NULL;
    a->blob = NULL;
    a->blob_len = 0;
    a->status = WFL_ST_INITIALIZED;
    a->result = WFL_RES_NONE;
    for (size_t i = 0; i < a->node->type->dp_count; i++) {
        const wfl_pval *pv = &a->node->props[i];
        const wf_value *fresh = pv->kind == WFL_PV_LITERAL ? &pv->u.literal
                                : pv->kind == WFL_PV_UNSET ? &a->node->type->dps[i]->default_value
                                                           : NULL;
        wf_value *slot = &a->slots[i];
        if (fresh ? slot->type == fresh->type && memcmp(&slot->u, &fresh->u, sizeof slot->u) == 0
                  : slot->type == &wf_type_null)
            continue; /* the value it was built with (most of an Interop's slots) */
        wf_value_release(slot);
        init_slot(slot, a->node->type->dps[i], pv);
    }
}

void wfl_inst_reset(wfl_inst *inst)
{
    act_reset(inst->root);
    inst->next_context = 0;
}

const wfl_definition *wfl_inst_definition(const wfl_inst *inst)
{
    return inst->def;
}

wfl_act *wfl_inst_root(wfl_inst *inst)
{
    return inst->root;
}

wfl_act *wfl_inst_act_at(wfl_inst *inst, size_t node_index)
{
    if (node_index >= inst->def->node_count)
        return NULL;
    wfl_act *a = inst->templates[node_index];
    assert(a == NULL || a->node->index == node_index); /* templates are kept by node index */
    return a;
}

static wfl_act *find_in(wfl_act *a, uint32_t ctx, size_t node_index)
{
    if (a->context_id == ctx && a->node->index == node_index)
        return a;
    for (size_t i = 0; i < a->node->child_count; i++) {
        wfl_act *hit = find_in(a->children[i], ctx, node_index);
        if (hit != NULL)
            return hit;
    }
    for (size_t i = 0; i < a->context_count; i++) {
        wfl_act *hit = find_in(a->contexts[i], ctx, node_index);
        if (hit != NULL)
            return hit;
    }
    return NULL;
}

wfl_act *wfl_inst_find_act(wfl_inst *inst, uint32_t context_id, size_t node_index)
{
    return inst->root != NULL ? find_in(inst->root, context_id, node_index) : NULL;
}

void wfl_inst_set_dispose(wfl_inst *inst, wfl_act_dispose_fn fn, void *ud)
{
    inst->dispose = fn;
    inst->dispose_ud = ud;
}

/* ---- accessors ------------------------------------------------------------------------------ */
const wfl_node *wfl_act_node(const wfl_act *act)
{
    return act->node;
}

const wfl_type *wfl_act_type(const wfl_act *act)
{
    return act->node->type;
}

const char *wfl_act_name(const wfl_act *act)
{
    return act->node->name;
}

wfl_inst *wfl_act_inst(const wfl_act *act)
{
    return act->inst;
}

wfl_act *wfl_act_parent(const wfl_act *act)
{
    return act->parent;
}

size_t wfl_act_child_count(const wfl_act *act)
{
    return act->node->child_count;
}

wfl_act *wfl_act_child(const wfl_act *act, size_t index)
{
    return index < act->node->child_count ? act->children[index] : NULL;
}

wfl_act *wfl_act_child_for(const wfl_act *act, const wfl_node *node)
{
    for (size_t i = 0; i < act->node->child_count; i++) {
        if (act->node->children[i] == node)
            return act->children[i];
    }
    return NULL;
}

wfl_status wfl_act_status(const wfl_act *act)
{
    return act->status;
}

void wfl_act_set_status(wfl_act *act, wfl_status status)
{
    act->dirty = true;
    act->status = status;
}

wfl_result wfl_act_result(const wfl_act *act)
{
    return act->result;
}

void wfl_act_set_result(wfl_act *act, wfl_result result)
{
    act->dirty = true;
    act->result = result;
}

uint32_t wfl_act_context_id(const wfl_act *act)
{
    return act->context_id;
}

bool wfl_act_is_clone_root(const wfl_act *act)
{
    return act->clone_root;
}

wfl_act *wfl_act_template(const wfl_act *act)
{
    return act->template_act;
}

void *wfl_act_exec(const wfl_act *act)
{
    return act->exec;
}

void wfl_act_set_exec(wfl_act *act, void *exec)
{
    act->dirty = true;
    act->exec = exec;
}

/* ---- name resolution ------------------------------------------------------------------------ */
static bool node_within(const wfl_node *node, const wfl_node *ancestor)
{
    for (const wfl_node *n = node; n != NULL; n = n->parent) {
        if (n == ancestor)
            return true;
        if (n->depth <= ancestor->depth)
            return false;
    }
    return false;
}

/* The instance of `node` inside a's subtree, following template children. */
static wfl_act *descend(wfl_act *a, const wfl_node *node)
{
    while (a != NULL && a->node != node) {
        const wfl_node *step = node;
        while (step->parent != a->node)
            step = step->parent;
        a = wfl_act_child_for(a, step);
    }
    return a;
}

static const wfl_node *lookup_node(const wfl_definition *def, const wfl_node *from,
                                   const char *name)
{
    if (strchr(name, '.') == NULL && def->by_name != NULL)
        return wf_strmap_get(def->by_name, name);
    return wfl_def_resolve_name(def, from, name);
}

wfl_act *wfl_act_resolve(wfl_act *act, const char *name)
{
    bool relative = false;
    unsigned up = 0;
    if (!wfl_bind_name_steps(name, &relative, &up))
        return NULL;
    if (relative) {
        wfl_act *a = act;
        while (a != NULL && up-- > 0)
            a = a->parent;
        return a;
    }
    const wfl_node *target = lookup_node(act->inst->def, act->node, name);
    if (target == NULL)
        return NULL;
    for (wfl_act *a = act; a != NULL; a = a->parent) {
        if (node_within(target, a->node))
            return descend(a, target);
    }
    return NULL;
}

/* ---- reading and writing through binds ------------------------------------------------------ */
static wf_status check_dp(const wfl_act *act, const wfl_dp *dp, wf_error *err)
{
    const wfl_type *t = act->node->type;
    if (dp == NULL || dp->index >= t->dp_count || t->dps[dp->index] != dp)
        return wf_error_set(err, WF_E_SCHEMA, NULL, "property '%s' does not belong to %s '%s'",
                            dp != NULL ? dp->name : "(null)", t->name, act->node->name);
    if (dp->kind != WFL_DPK_VALUE && dp->kind != WFL_DPK_ACTIVITY_REF)
        return wf_error_set(err, WF_E_SCHEMA, NULL, "property '%s' of '%s' holds no value",
                            dp->name, act->node->name);
    return WF_OK;
}

/* The value slot of `dp` in `act`: dp is one of the DPs of act's type (check_dp ran on every
 * path that gets here), so its index is a slot index (wfl_registry.h: dps[i]->index == i). */
static wf_value *slot_of(wfl_act *act, const wfl_dp *dp)
{
    assert(dp->index < act->node->type->dp_count && act->node->type->dps[dp->index] == dp);
    return &act->slots[dp->index];
}

static const wfl_bind *bind_of(const wfl_act *act, const wfl_dp *dp)
{
    assert(dp->index < act->node->type->dp_count && act->node->type->dps[dp->index] == dp);
    const wfl_pval *pv = &act->node->props[dp->index];
    return pv->kind == WFL_PV_BIND ? pv->u.bind : NULL;
}

static wf_status read_bind(wfl_act *act, const wfl_bind *b, unsigned depth, wf_value *out,
                           wf_error *err);
static wf_status write_bind(wfl_act *act, const wfl_bind *b, const wf_value *value,
                            unsigned depth, wf_error *err);

/* The member named by segs[0] on target, as a DP (value kinds only). */
static wf_status member_dp(wfl_act *target, const wfl_path_seg *segs, size_t count,
                           const wfl_dp **out, wf_error *err)
{
    if (count == 0 || segs[0].kind != WFL_SEG_MEMBER)
        return wf_error_set(err, WF_E_NAME, NULL, "ActivityBind to '%s' names no member",
                            target->node->name);
    *out = wfl_type_find_dp(target->node->type, segs[0].name);
    if (*out == NULL)
        return wf_error_set(err, WF_E_NAME, NULL, "activity '%s' has no property '%s'",
                            target->node->name, segs[0].name);
    return check_dp(target, *out, err);
}

/* The current value of a DP, following its bind if it has one. */
static wf_status read_dp(wfl_act *act, const wfl_dp *dp, unsigned depth, wf_value *out,
                         wf_error *err)
{
    const wfl_bind *b = bind_of(act, dp);
    if (b == NULL) {
        *out = wf_value_retain(slot_of(act, dp));
        return WF_OK;
    }
    return read_bind(act, b, depth + 1, out, err);
}

static wf_status read_path(wfl_act *target, const wfl_path_seg *segs, size_t count,
                           unsigned depth, wf_value *out, wf_error *err)
{
    const wfl_dp *dp = NULL;
    wf_status rc = member_dp(target, segs, count, &dp, err);
    if (rc != WF_OK)
        return rc;
    wf_value v = wf_null();
    if ((rc = read_dp(target, dp, depth, &v, err)) != WF_OK)
        return rc;
    rc = wfl_value_path_get(&v, segs + 1, count - 1, out, err);
    wf_value_release(&v);
    return rc;
}

static wf_status resolve_bind(wfl_act *act, const wfl_bind *b, unsigned depth, wfl_act **target,
                              wf_error *err)
{
    if (depth > BIND_DEPTH_MAX)
        return wf_error_set(err, WF_E_LIMIT, &b->loc,
                            "ActivityBind cycle (or a chain of more than %d binds) through '%s.%s'",
                            BIND_DEPTH_MAX, b->name, b->path);
    *target = wfl_act_resolve(act, b->name);
    if (*target == NULL)
        return wf_error_set(err, WF_E_NAME, &b->loc, "ActivityBind: no activity named '%s'",
                            b->name);
    return WF_OK;
}

static wf_status read_bind(wfl_act *act, const wfl_bind *b, unsigned depth, wf_value *out,
                           wf_error *err)
{
    wfl_act *target = NULL;
    wf_status rc = resolve_bind(act, b, depth, &target, err);
    return rc != WF_OK ? rc : read_path(target, b->segs, b->seg_count, depth, out, err);
}

static wf_status store_dp(wfl_act *act, const wfl_dp *dp, const wf_value *value, unsigned depth,
                          wf_error *err)
{
    const wfl_bind *b = bind_of(act, dp);
    if (b != NULL)
        return write_bind(act, b, value, depth + 1, err);
    wf_value conv = wf_null();
    wf_status rc = wf_value_convert(value, dp->type, &conv, err);
    if (rc != WF_OK) {
        wf_error_prefix(err, "property '%s' of '%s': ", dp->name, act->node->name);
        return rc;
    }
    wf_value *slot = slot_of(act, dp);
    wf_value_release(slot);
    *slot = conv;
    act->dirty = true;
    return WF_OK;
}

static wf_status write_path(wfl_act *target, const wfl_path_seg *segs, size_t count,
                            const wf_value *value, unsigned depth, wf_error *err)
{
    const wfl_dp *dp = NULL;
    wf_status rc = member_dp(target, segs, count, &dp, err);
    if (rc != WF_OK)
        return rc;
    if (dp->flags & WFL_DP_METADATA)
        return wf_error_set(err, WF_E_STATE, NULL, "metadata property '%s' of '%s' cannot be "
                            "written", dp->name, target->node->name);
    if (count == 1)
        return store_dp(target, dp, value, depth, err);
    wf_value cur = wf_null(), next = wf_null();
    rc = read_dp(target, dp, depth, &cur, err);
    if (rc == WF_OK)
        rc = wfl_value_path_set(&cur, segs + 1, count - 1, value, &next, err);
    if (rc == WF_OK)
        rc = store_dp(target, dp, &next, depth, err);
    wf_value_release(&cur);
    wf_value_release(&next);
    return rc;
}

static wf_status write_bind(wfl_act *act, const wfl_bind *b, const wf_value *value,
                            unsigned depth, wf_error *err)
{
    wfl_act *target = NULL;
    wf_status rc = resolve_bind(act, b, depth, &target, err);
    return rc != WF_OK ? rc : write_path(target, b->segs, b->seg_count, value, depth, err);
}

wf_status wfl_act_get(wfl_act *act, const wfl_dp *dp, wf_value *out, wf_error *err)
{
    *out = wf_null();
    wf_status rc = check_dp(act, dp, err);
    if (rc != WF_OK)
        return rc;
    const wfl_bind *b = bind_of(act, dp);
    if (b == NULL) {
        *out = wf_value_retain(slot_of(act, dp));
        return WF_OK;
    }
    wf_value raw = wf_null();
    if ((rc = read_bind(act, b, 0, &raw, err)) != WF_OK)
        return rc;
    rc = wf_value_convert(&raw, dp->type, out, err);
    wf_value_release(&raw);
    return rc;
}

const wf_value *wfl_act_peek(const wfl_act *act, const wfl_dp *dp)
{
    if (check_dp(act, dp, NULL) != WF_OK || bind_of(act, dp) != NULL)
        return NULL;
    return &act->slots[dp->index];
}

static wf_status set_checked(wfl_act *act, const wfl_dp *dp, const wf_value *value,
                             unsigned forbidden, wf_error *err)
{
    wf_status rc = check_dp(act, dp, err);
    if (rc != WF_OK)
        return rc;
    if (dp->flags & forbidden)
        return wf_error_set(err, WF_E_STATE, NULL, "%s property '%s' of '%s' cannot be set",
                            dp->flags & WFL_DP_METADATA ? "metadata" : "read-only", dp->name,
                            act->node->name);
    return store_dp(act, dp, value, 0, err);
}

wf_status wfl_act_set(wfl_act *act, const wfl_dp *dp, const wf_value *value, wf_error *err)
{
    return set_checked(act, dp, value, WFL_DP_METADATA | WFL_DP_READONLY, err);
}

wf_status wfl_act_set_internal(wfl_act *act, const wfl_dp *dp, const wf_value *value,
                               wf_error *err)
{
    return set_checked(act, dp, value, WFL_DP_METADATA, err);
}

static const wfl_dp *dp_named(const wfl_act *act, const char *name, wf_error *err)
{
    const wfl_dp *dp = wfl_type_find_dp(act->node->type, name);
    if (dp == NULL)
        wf_error_set(err, WF_E_NAME, NULL, "%s '%s' has no property '%s'", act->node->type->name,
                     act->node->name, name);
    return dp;
}

wf_status wfl_act_get_by_name(wfl_act *act, const char *name, wf_value *out, wf_error *err)
{
    *out = wf_null();
    const wfl_dp *dp = dp_named(act, name, err);
    return dp != NULL ? wfl_act_get(act, dp, out, err) : WF_E_NAME;
}

wf_status wfl_act_set_by_name(wfl_act *act, const char *name, const wf_value *value,
                              wf_error *err)
{
    const wfl_dp *dp = dp_named(act, name, err);
    return dp != NULL ? wfl_act_set(act, dp, value, err) : WF_E_NAME;
}

wf_status wfl_act_bind_get(wfl_act *act, const wfl_bind *bind, wf_value *out, wf_error *err)
{
    *out = wf_null();
    return read_bind(act, bind, 0, out, err);
}

wf_status wfl_act_bind_set(wfl_act *act, const wfl_bind *bind, const wf_value *value,
                           wf_error *err)
{
    return write_bind(act, bind, value, 0, err);
}

/* Paths given as text: parsed into a scratch arena for the call. */
static wf_status with_path(wfl_act *act, const char *path, const wf_value *value, wf_value *out,
                           wf_error *err)
{
    wf_arena *arena = wf_arena_create(512);
    if (arena == NULL)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wfl_path_seg *segs = NULL;
    size_t count = 0;
    wf_status rc = wfl_bind_parse_path(arena, path, WF_LOC_NONE, &segs, &count, err);
    if (rc == WF_OK && out != NULL)
        rc = read_path(act, segs, count, 0, out, err);
    else if (rc == WF_OK)
        rc = write_path(act, segs, count, value, 0, err);
    wf_arena_destroy(arena);
    return rc;
}

wf_status wfl_act_get_path(wfl_act *act, const char *path, wf_value *out, wf_error *err)
{
    *out = wf_null();
    return with_path(act, path, NULL, out, err);
}

wf_status wfl_act_set_path(wfl_act *act, const char *path, const wf_value *value,
                           wf_error *err)
{
    return with_path(act, path, value, NULL, err);
}

/* ---- execution contexts --------------------------------------------------------------------- */
static bool add_context(wfl_act *parent, wfl_act *clone)
{
    if (parent->context_count == parent->context_cap) {
        size_t cap = parent->context_cap ? parent->context_cap * 2 : 4;
        wfl_act **grown = wf_realloc(parent->contexts, cap * sizeof *grown);
        if (grown == NULL)
            return false;
        parent->contexts = grown;
        parent->context_cap = cap;
    }
    parent->contexts[parent->context_count++] = clone;
    return true;
}

wf_status wfl_act_clone(wfl_act *template_act, wfl_act **out, wf_error *err)
{
    *out = NULL;
    wfl_act *parent = template_act->parent;
    if (parent == NULL)
        return wf_error_set(err, WF_E_STATE, NULL, "the root activity cannot be cloned");
    wfl_inst *inst = template_act->inst;
    uint32_t ctx = inst->next_context + 1;
    wfl_act *clone = build_tree(inst, template_act->node, parent, ctx, NULL);
    if (clone == NULL || !add_context(parent, clone)) {
        act_free(clone);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory cloning '%s'",
                            template_act->node->name);
    }
    inst->next_context = ctx;
    clone->clone_root = true;
    clone->template_act = template_act;
    *out = clone;
    return WF_OK;
}

void wfl_act_clone_release(wfl_act *clone)
{
    if (clone == NULL || !clone->clone_root)
        return;
    wfl_act *parent = clone->parent;
    bool found = false;
    for (size_t i = 0; !found && i < parent->context_count; i++) {
        if (parent->contexts[i] == clone) {
            memmove(&parent->contexts[i], &parent->contexts[i + 1],
                    (parent->context_count - i - 1) * sizeof *parent->contexts);
            parent->context_count--;
            found = true;
        }
    }
    assert(found); /* a clone root is owned by its parent's context list, once */
    act_free(clone);
}

size_t wfl_act_context_count(const wfl_act *act)
{
    return act->context_count;
}

wfl_act *wfl_act_context_at(const wfl_act *act, size_t index)
{
    return index < act->context_count ? act->contexts[index] : NULL;
}

/* ---- persistence: a versioned compact binary ---------------------------------------------------
 * "WFLI", version, hash of the definition's shape, next context id, the executor's instance
 * blob, then the activity tree in pre-order: node index, context id, status, result, clone
 * flag, slot values, the executor's blob, children, then live contexts (clone subtrees).
 * Integers are LEB128 varints (signed ones zig-zag encoded); strings and blobs are length
 * prefixed. The reader checks every length against what is left, so bad input is
 * WF_E_CORRUPT, never a crash. */
#define SAVE_MAGIC "WFLI"
#define SAVE_VERSION 2 /* 2: values in common/wf_codec.h's encoding */

/* FNV-1a over the definition's shape (no allocation, so it cannot fail). */
static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* A count, hashed as 8 little-endian bytes so the hash is the same on every platform. */
static uint64_t fnv_count(uint64_t h, size_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)v >> (8 * i));
    return fnv(h, b, sizeof b);
}

static uint64_t shape_hash(const wfl_definition *def)
{
    uint64_t h = fnv_count(14695981039346656037ULL, def->node_count);
    for (size_t i = 0; i < def->node_count; i++) {
        const wfl_node *n = def->nodes[i];
        h = fnv(h, n->type->name, strlen(n->type->name) + 1);
        h = fnv(h, n->name, strlen(n->name) + 1);
        h = fnv_count(h, n->type->dp_count);
        h = fnv_count(h, n->child_count);
    }
    return h;
}

typedef struct saver {
    const wfl_inst_hooks *hooks;
    wf_buf *out;
    wf_buf scratch;
} saver;

static wf_status save_act(saver *sv, const wfl_act *a, wf_error *err)
{
    wf_buf *b = sv->out;
    wf_codec_put_uint(b, a->node->index);
    wf_codec_put_uint(b, a->context_id);
    wf_buf_addc(b, (char)a->status);
    wf_buf_addc(b, (char)a->result);
    wf_buf_addc(b, a->clone_root ? 1 : 0);
    wf_codec_put_uint(b, a->node->type->dp_count);
    for (size_t i = 0; i < a->node->type->dp_count; i++) {
        wf_status rc = wf_codec_put_value(b, &a->slots[i], err);
        if (rc != WF_OK)
            return rc;
    }
    wf_buf_reset(&sv->scratch);
    if (sv->hooks != NULL && sv->hooks->save_act != NULL &&
        !sv->hooks->save_act(sv->hooks->ud, a, &sv->scratch))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving '%s'", a->node->name);
    wf_codec_put_bytes(b, sv->scratch.data, sv->scratch.len);
    wf_codec_put_uint(b, a->node->child_count);
    for (size_t i = 0; i < a->node->child_count; i++) {
        wf_status rc = save_act(sv, a->children[i], err);
        if (rc != WF_OK)
            return rc;
    }
    wf_codec_put_uint(b, a->context_count);
    for (size_t i = 0; i < a->context_count; i++) {
        wf_status rc = save_act(sv, a->contexts[i], err);
        if (rc != WF_OK)
            return rc;
    }
    return WF_OK;
}

wf_status wfl_inst_save(const wfl_inst *inst, const wfl_inst_hooks *hooks, wf_buf *out,
                        wf_error *err)
{
    size_t start = out->len;
    saver sv = {hooks, out, {0}};
    wf_buf_init(&sv.scratch);
    wf_buf_add(out, SAVE_MAGIC, 4);
    wf_buf_addc(out, SAVE_VERSION);
    uint64_t h = shape_hash(inst->def);
    for (int i = 0; i < 8; i++)
        wf_buf_addc(out, (char)(h >> (8 * i)));
    wf_codec_put_uint(out, inst->next_context);
    wf_status rc = WF_OK;
    bool has_inst_hook = hooks != NULL && hooks->save_inst != NULL;
    if (has_inst_hook && !hooks->save_inst(hooks->ud, inst, &sv.scratch))
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving the instance");
    wf_codec_put_bytes(out, sv.scratch.data, sv.scratch.len);
    if (rc == WF_OK)
        rc = save_act(&sv, inst->root, err);
    if (rc == WF_OK && (out->oom || sv.scratch.oom))
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving the instance");
    wf_buf_fini(&sv.scratch);
    if (rc != WF_OK && !out->oom) {
        out->len = start;
        out->data[start] = '\0';
    }
    return rc;
}

/* ---- restore ---------------------------------------------------------------------------- */
static wf_status corrupt(wf_error *err, const char *what)
{
    return wf_error_set(err, WF_E_CORRUPT, NULL, "saved instance is corrupt: %s", what);
}

/* A length-prefixed byte run, borrowed from the input (NULL when bad). */
static const unsigned char *get_run(wf_reader *r, size_t *len)
{
    return wf_codec_get_bytes(r, len);
}

typedef struct restorer {
    wf_reader r;
    wfl_inst *inst;
} restorer;

static wf_status load_slots(restorer *rs, wfl_act *a, wf_error *err)
{
    size_t n = a->node->type->dp_count;
    if (wf_codec_get_uint(&rs->r) != n || rs->r.bad)
        return corrupt(err, "property count does not match the definition");
    for (size_t i = 0; i < n; i++) {
        wf_value v = wf_null();
        wf_status rc = wf_codec_get_value(&rs->r, &v, err);
        if (rc != WF_OK)
            return rc;
        wf_value_release(&a->slots[i]);
        a->slots[i] = v;
    }
    a->dirty = true;
    return WF_OK;
}

static wf_status load_act(restorer *rs, wfl_act *a, bool in_clone, wf_error *err);

/* Header of one activity; `a` is already linked to its parent (so a failure frees it). */
static wf_status load_act_fields(restorer *rs, wfl_act *a, bool in_clone, wf_error *err)
{
    wf_reader *r = &rs->r;
    uint64_t ctx = wf_codec_get_uint(r);
    unsigned status = wf_codec_get_u8(r), result = wf_codec_get_u8(r), clone_root = wf_codec_get_u8(r);
    if (r->bad || status > WFL_ST_FAULTING || result > WFL_RES_UNINITIALIZED || clone_root > 1 ||
        ctx > rs->inst->next_context || (!in_clone && ctx != 0) || (in_clone && ctx == 0))
        return corrupt(err, "bad activity header");
    a->context_id = (uint32_t)ctx;
    a->status = (wfl_status)status;
    a->result = (wfl_result)result;
    a->dirty = true;
    if (!in_clone)
        rs->inst->templates[a->node->index] = a;
    wf_status rc = load_slots(rs, a, err);
    if (rc != WF_OK)
        return rc;
    a->blob = get_run(r, &a->blob_len);
    if (a->blob == NULL)
        return corrupt(err, "truncated activity state");
    return load_act(rs, a, in_clone, err);
}

/* Children and contexts of a (its header is read). */
static wf_status load_act(restorer *rs, wfl_act *a, bool in_clone, wf_error *err)
{
    wf_reader *r = &rs->r;
    if (wf_codec_get_uint(r) != a->node->child_count || r->bad)
        return corrupt(err, "child count does not match the definition");
    for (size_t i = 0; i < a->node->child_count; i++) {
        const wfl_node *cn = a->node->children[i];
        if (wf_codec_get_uint(r) != cn->index || r->bad)
            return corrupt(err, "activity order does not match the definition");
        if ((a->children[i] = act_new(rs->inst, cn, a, 0)) == NULL)
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        wf_status rc = load_act_fields(rs, a->children[i], in_clone, err);
        if (rc != WF_OK)
            return rc;
    }
    uint64_t nctx = wf_codec_get_uint(r);
    if (r->bad || nctx > (uint64_t)(r->end - r->p))
        return corrupt(err, "bad context count");
    for (uint64_t k = 0; k < nctx; k++) {
        uint64_t idx = wf_codec_get_uint(r);
        wfl_act *tmpl = NULL;
        for (size_t i = 0; i < a->node->child_count && tmpl == NULL; i++)
            tmpl = a->node->children[i]->index == idx ? a->children[i] : NULL;
        if (r->bad || tmpl == NULL)
            return corrupt(err, "a context's template is not a child");
        wfl_act *clone = act_new(rs->inst, tmpl->node, a, 0);
        if (clone == NULL || !add_context(a, clone)) {
            act_free(clone);
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        }
        clone->clone_root = true;
        clone->template_act = tmpl;
        wf_status rc = load_act_fields(rs, clone, true, err);
        if (rc != WF_OK)
            return rc;
    }
    return WF_OK;
}

static wf_status call_load_hooks(wfl_act *a, const wfl_inst_hooks *hooks, wf_error *err)
{
    if (hooks != NULL && hooks->load_act != NULL) {
        wf_status rc = hooks->load_act(hooks->ud, a, a->blob, a->blob_len, err);
        if (rc != WF_OK)
            return rc;
    }
    a->blob = NULL;
    a->blob_len = 0;
    for (size_t i = 0; i < a->node->child_count; i++) {
        wf_status rc = call_load_hooks(a->children[i], hooks, err);
        if (rc != WF_OK)
            return rc;
    }
    for (size_t i = 0; i < a->context_count; i++) {
        wf_status rc = call_load_hooks(a->contexts[i], hooks, err);
        if (rc != WF_OK)
            return rc;
    }
    return WF_OK;
}

static wf_status restore_header(restorer *rs, const wfl_definition *def, const unsigned char **blob,
                                size_t *blob_len, wf_error *err)
{
    wf_reader *r = &rs->r;
    if ((size_t)(r->end - r->p) < 13 || memcmp(r->p, SAVE_MAGIC, 4) != 0)
        return corrupt(err, "not a saved legacy instance");
    if (r->p[4] != SAVE_VERSION)
        return corrupt(err, "unknown format version");
    uint64_t h = 0;
    for (int i = 0; i < 8; i++)
        h |= (uint64_t)r->p[5 + i] << (8 * i);
    r->p += 13;
    if (h != shape_hash(def))
        return corrupt(err, "saved for a different definition");
    uint64_t next = wf_codec_get_uint(r);
    *blob = get_run(r, blob_len);
    if (r->bad || *blob == NULL || next > UINT32_MAX)
        return corrupt(err, "truncated header");
    rs->inst->next_context = (uint32_t)next;
    if (wf_codec_get_uint(r) != 0 || r->bad)
        return corrupt(err, "the tree does not start at the root");
    return WF_OK;
}

wf_status wfl_inst_restore(const wfl_definition *def, const void *data, size_t len,
                           const wfl_inst_hooks *hooks, wfl_inst **out, wf_error *err)
{
    *out = NULL;
    restorer rs = {.inst = inst_new(def)};
    wf_reader_init(&rs.r, data, len, def->types);
    if (rs.inst == NULL)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory restoring an instance");
    const unsigned char *blob = NULL;
    size_t blob_len = 0;
    wf_status rc = restore_header(&rs, def, &blob, &blob_len, err);
    if (rc == WF_OK && (rs.inst->root = act_new(rs.inst, def->root, NULL, 0)) == NULL)
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory restoring an instance");
    if (rc == WF_OK)
        rc = load_act_fields(&rs, rs.inst->root, false, err);
    if (rc == WF_OK && rs.r.p != rs.r.end)
        rc = corrupt(err, "trailing bytes");
    if (rc == WF_OK && hooks != NULL && hooks->dispose != NULL)
        wfl_inst_set_dispose(rs.inst, hooks->dispose, hooks->ud);
    if (rc == WF_OK)
        rc = call_load_hooks(rs.inst->root, hooks, err);
    if (rc == WF_OK && hooks != NULL && hooks->load_inst != NULL)
        rc = hooks->load_inst(hooks->ud, rs.inst, blob, blob_len, err);
    if (rc != WF_OK) {
        wfl_inst_destroy(rs.inst);
        return rc;
    }
    *out = rs.inst;
    return WF_OK;
}

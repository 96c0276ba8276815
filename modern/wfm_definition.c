/* wfm_definition.c — the life and read accessors of a loaded definition: one arena owns the
 * whole IR (wfm_definition_int.h), an atomic refcount shares it across threads, and the last release
 * runs the node data destroy functions prepare callbacks registered, then drops the arena. */
#include "wfm_definition_int.h"

#include <assert.h>
#include <string.h>

wfm_definition *wfm_definition_retain(wfm_definition *def)
{
    if (def) {
        unsigned long before = (unsigned long)atomic_fetch_add_explicit(&def->refcount, 1,
                                                                        memory_order_relaxed);
        assert(before > 0); /* only a holder retains: a released definition is gone */
        (void)before;
    }
    return def;
}

/* Also used by the loader to drop a half-built definition (refcount 1). */
void wfm_definition_release(wfm_definition *def)
{
    if (!def)
        return;
    unsigned long before =
        (unsigned long)atomic_fetch_sub_explicit(&def->refcount, 1, memory_order_acq_rel);
    assert(before > 0); /* one release per retain (and per load) */
    if (before != 1)
        return;
    for (uint32_t i = 0; i < def->node_count; i++) {
        wfm_node *n = def->nodes[i];
        if (n->extra && n->extra->data && n->extra->destroy)
            n->extra->destroy(n->extra->data);
    }
    for (size_t i = 0; i < def->owned_count; i++)
        wf_value_release(&def->owned_values[i]);
    wf_arena_destroy(def->arena); /* def itself lives in the arena */
}

const char *wfm_definition_path(const wfm_definition *def)
{
    return def->path;
}

const char *wfm_definition_class(const wfm_definition *def)
{
    return def->class_name;
}

const char *wfm_definition_service_name(const wfm_definition *def)
{
    return def->service_name;
}

uint64_t wfm_definition_hash(const wfm_definition *def)
{
    return def->hash;
}

const unsigned char *wfm_definition_sha256(const wfm_definition *def)
{
    return def->sha256;
}

const wfm_node *wfm_definition_root(const wfm_definition *def)
{
    return def->root;
}

size_t wfm_definition_node_count(const wfm_definition *def)
{
    return def->node_count;
}

const wfm_node *wfm_definition_node_at(const wfm_definition *def, size_t index)
{
    return index < def->node_count ? def->nodes[index] : NULL;
}

size_t wfm_definition_arg_count(const wfm_definition *def)
{
    return def->arg_count;
}

const char *wfm_definition_arg_name(const wfm_definition *def, size_t index)
{
    return index < def->arg_count ? def->args[index].name : NULL;
}

wfm_prop_kind wfm_definition_arg_dir(const wfm_definition *def, size_t index)
{
    return index < def->arg_count ? def->args[index].dir : WFM_PROP_IN;
}

const wf_type *wfm_definition_arg_type(const wfm_definition *def, size_t index)
{
    return index < def->arg_count ? def->args[index].type : NULL;
}

bool wfm_definition_arg_has_default(const wfm_definition *def, size_t index)
{
    return index < def->arg_count && def->args[index].has_default;
}

bool wfm_definition_arg_find(const wfm_definition *def, const char *name, size_t *index)
{
    for (uint32_t i = 0; i < def->arg_count; i++) {
        if (strcmp(def->args[i].name, name) == 0) {
            if (index)
                *index = i;
            return true;
        }
    }
    return false;
}

bool wfm_definition_root_var_find(const wfm_definition *def, const char *name)
{
    const wfm_node *root = def->root;
    for (uint32_t i = 0; root && i < root->var_count; i++)
        if (strcmp(root->vars[i].name, name) == 0)
            return true;
    return false;
}

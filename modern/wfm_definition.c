/* wfm_definition.c — the life and read accessors of a loaded definition: one arena owns the
 * whole IR (wfm_definition_int.h), an atomic refcount shares it across threads, and the last release
 * runs the node data destroy functions prepare callbacks registered, then drops the arena.
 * Node ids are derived from the tree, all at once when the first is asked for. */
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
    wf_free((void *)atomic_load_explicit(&def->ids, memory_order_acquire));
    wf_arena_destroy(def->arena); /* def itself lives in the arena */
}

/* ---- node ids ------------------------------------------------------------------------- */
static size_t digit_count(uint32_t k)
{
    size_t n = 1;
    while (k >= 10) {
        k /= 10;
        n++;
    }
    return n;
}

/* Append the decimal digits of k at p; returns the end. */
static char *put_digits(char *p, uint32_t k)
{
    size_t n = digit_count(k);
    for (size_t i = n; i-- > 0; k /= 10)
        p[i] = (char)('0' + k % 10);
    return p + n;
}

/* Every node's id in one heap block (the pointer table, then the strings), or NULL when
 * memory runs out. In index order a node's parent comes first and its ordinal is one more
 * than the number of earlier nodes with the same parent (wfm_definition_int.h, "Node
 * identity"); the nodes built for their errors only are "0". */
static const char **ids_build(const wfm_definition *def)
{
    uint32_t n = def->node_count, m = def->numbered;
    uint32_t *kids = wf_calloc((size_t)n + 1, 2 * sizeof *kids), *len = kids + n + 1;
    if (!kids)
        return NULL;
    size_t bytes = (size_t)n * sizeof(char *) + 2 * (size_t)(n - m);
    for (uint32_t i = 0; i < m; i++) {
        const wfm_node *p = def->nodes[i]->parent;
        assert(i == 0 ? !p : p && p->index < i);
        len[i] = i == 0 ? 1 : len[p->index] + 1 + (uint32_t)digit_count(++kids[p->index]);
        bytes += len[i] + 1;
    }
    const char **ids = wf_malloc(bytes);
    if (ids) {
        char *at = (char *)(ids + n);
        memset(kids, 0, (size_t)n * sizeof *kids);
        for (uint32_t i = 0; i < n; i++) {
            const wfm_node *p = def->nodes[i]->parent;
            ids[i] = at;
            if (i >= m) {
                *at++ = '0';
            } else if (i == 0) {
                *at++ = '1';
            } else {
                memcpy(at, ids[p->index], len[p->index]);
                at[len[p->index]] = '.';
                at = put_digits(at + len[p->index] + 1, ++kids[p->index]);
            }
            *at++ = '\0';
        }
    }
    wf_free(kids);
    return ids;
}

const char *wfm_node_id(const wfm_node *node)
{
    const wfm_node *top = node;
    while (top->parent)
        top = top->parent;
    wfm_definition *def = top->extra ? top->extra->def : NULL;
    if (!def || node->index >= def->node_count)
        return "0"; /* not numbered (yet) */
    const char **ids = atomic_load_explicit(&def->ids, memory_order_acquire);
    if (!ids) {
        const char **built = ids_build(def);
        if (!built)
            return NULL;
        if (atomic_compare_exchange_strong_explicit(&def->ids, &ids, built, memory_order_acq_rel,
                                                    memory_order_acquire))
            ids = built;
        else
            wf_free((void *)built); /* another thread published the same table first */
    }
    return ids[node->index];
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

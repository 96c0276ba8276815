/* wfm_act_persist.c — the Persist activity (WF-SEMANTICS.md §5): under a durable host it
 * waits on an internal bookmark; the host saves the instance as soon as its work queue drains
 * and then resumes that bookmark. Inside a no-persist zone it faults with
 * InvalidOperationException; without a durable host it completes at once. Also keeps the set
 * of runtimes (by type table) that have a durable host attached. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "wfm_activity.h"
#include "wfm_durable.h"

/* ---- the runtimes with a durable host --------------------------------------------------- */
#define MAX_DURABLE_RUNTIMES 64
static pthread_mutex_t durable_lock = PTHREAD_MUTEX_INITIALIZER;
static const wf_types *durable_types[MAX_DURABLE_RUNTIMES];

bool wfm_durable_attach(const wf_types *types)
{
    bool ok = false;
    pthread_mutex_lock(&durable_lock);
    size_t free_slot = MAX_DURABLE_RUNTIMES;
    bool present = false;
    for (size_t i = 0; i < MAX_DURABLE_RUNTIMES; i++) {
        if (durable_types[i] == types)
            present = true;
        else if (!durable_types[i] && free_slot == MAX_DURABLE_RUNTIMES)
            free_slot = i;
    }
    if (!present && free_slot < MAX_DURABLE_RUNTIMES) {
        durable_types[free_slot] = types;
        ok = true;
    }
    pthread_mutex_unlock(&durable_lock);
    return ok;
}

void wfm_durable_detach(const wf_types *types)
{
    pthread_mutex_lock(&durable_lock);
    for (size_t i = 0; i < MAX_DURABLE_RUNTIMES; i++)
        if (durable_types[i] == types)
            durable_types[i] = NULL;
    pthread_mutex_unlock(&durable_lock);
}

bool wfm_durable_attached(const wf_types *types)
{
    bool found = false;
    pthread_mutex_lock(&durable_lock);
    for (size_t i = 0; i < MAX_DURABLE_RUNTIMES && !found; i++)
        found = durable_types[i] == types;
    pthread_mutex_unlock(&durable_lock);
    return found;
}

bool wfm_persist_bookmark(const char *name)
{
    return name && strncmp(name, WFM_PERSIST_BOOKMARK_PREFIX,
                           sizeof WFM_PERSIST_BOOKMARK_PREFIX - 1) == 0;
}

/* ---- Persist ------------------------------------------------------------------------------ */
static void persist_resumed(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)
{
    (void)payload;
    wfm_ctx_complete(ctx, ai);
}

/* The nearest executing ancestor of a no-persist kind, or NULL. */
static const wfm_ai *no_persist_ancestor(const wfm_ai *ai)
{
    for (const wfm_ai *p = wfm_ai_parent(ai); p; p = wfm_ai_parent(p)) {
        const wfm_kind_spec *spec = wfm_kind_spec_of(wfm_node_kind(wfm_ai_node(p)));
        if (spec->flags & WFM_KIND_NO_PERSIST)
            return p;
    }
    return NULL;
}

static void persist_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_ai *zone = no_persist_ancestor(ai);
    if (zone) {
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "Persist cannot run inside a no-persist zone (%s '%s')",
                      wfm_kind_spec_of(wfm_node_kind(wfm_ai_node(zone)))->name,
                      wfm_node_display_name(wfm_ai_node(zone)));
        return;
    }
    if (!wfm_durable_attached(wfm_ctx_types(ctx))) {
        wfm_ctx_complete(ctx, ai);
        return;
    }
    /* A unique internal name: the node id plus a counter (a restored instance may still wait
     * on an older Persist bookmark, so skip names in use). */
    char name[96];
    for (unsigned n = 0;; n++) {
        snprintf(name, sizeof name, WFM_PERSIST_BOOKMARK_PREFIX "%s#%u",
                 wfm_node_id(wfm_ai_node(ai)), n);
        wf_status st = wfm_ctx_bookmark(ctx, ai, name, 0, persist_resumed);
        if (st == WF_OK)
            return;
        if (st != WF_E_STATE || n > 100000) {
            wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "Persist: cannot request a persist");
            return;
        }
    }
}

static const void *const persist_callbacks[] = {(const void *)persist_resumed};

static const wfm_kind_spec persist_spec = {
    .name = "Persist",
    .category = "Activity",
    .flags = WFM_KIND_CAN_IDLE,
    .execute = persist_execute,
    .callbacks = persist_callbacks,
    .callback_count = 1,
};

wf_status wfm_act_persist_register(wfm_catalogue *cat, wf_error *err)
{
    return wfm_catalogue_register(cat, &persist_spec, err);
}

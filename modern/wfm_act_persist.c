/* wfm_act_persist.c — the Persist activity (docs/semantics.md §5): under a durable host it
 * waits on an internal bookmark; the host saves the instance as soon as its work queue drains
 * and then resumes that bookmark. Inside a no-persist zone it faults with
 * InvalidOperationException; without a durable host (the instance carries no durable-host
 * mark) it completes at once. */
#include <stdio.h>
#include <string.h>

#include "wfm_activity.h"
#include "wfm_acts.h"
#include "wfm_ctx.h"
#include "wfm_node.h"
#include "wfm_persist.h"
#include "wfm_runtime.h"

/* ---- the durable-host mark ------------------------------------------------------------------
 * An instance run by a durable host carries this extension state with hosted = true. It is
 * saved empty: whether the restored instance runs under a durable host is up to the process
 * that restores it (wfm_durable_mark). */
typedef struct durable_mark {
    bool hosted;
} durable_mark;

static wf_status mark_save(const void *state, wfm_persist_writer *w)
{
    (void)state;
    (void)w;
    return WF_OK;
}

static wf_status mark_restore(void *state, wfm_persist_reader *r)
{
    (void)state;
    (void)r;
    return WF_OK;
}

static const wfm_ext_spec mark_spec = {"wfbridge.durable_host", sizeof(durable_mark), NULL,
                                       mark_save, mark_restore};

wf_status wfm_durable_mark(wfm_instance *inst, wf_error *err)
{
    durable_mark *m = wfm_instance_ext_get(inst, &mark_spec);
    if (!m)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    m->hosted = true;
    return WF_OK;
}

/* Looked up without creating it: an instance without the mark has no durable host. */
static bool durably_hosted(const wfm_ctx *ctx)
{
    const durable_mark *m = wfm_ctx_ext_find(ctx, &mark_spec);
    return m && m->hosted;
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

wf_status wfm_ctx_request_persist(wfm_ctx *ctx, wfm_ai *ai, wfm_resume_fn resumed,
                                  bool *requested)
{
    *requested = false;
    if (no_persist_ancestor(ai))
        return WF_E_STATE;
    if (!durably_hosted(ctx))
        return WF_OK;
    /* A unique internal name: the node id plus a counter (a restored instance may still wait
     * on an older persist bookmark, so skip names in use). */
    char name[96];
    const char *id = wfm_node_id(wfm_ai_node(ai));
    if (!id)
        return WF_E_NOMEM;
    for (unsigned n = 0;; n++) {
        snprintf(name, sizeof name, WFM_PERSIST_BOOKMARK_PREFIX "%s#%u", id, n);
        wf_status st = wfm_ctx_bookmark(ctx, ai, name, 0, resumed);
        if (st == WF_OK)
            *requested = true;
        if (st != WF_E_STATE || n > 100000)
            return st;
    }
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
    bool requested = false;
    wf_status st = wfm_ctx_request_persist(ctx, ai, persist_resumed, &requested);
    if (st == WF_E_NOMEM)
        wfm_ctx_nomem(ctx);
    else if (st != WF_OK)
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "Persist: cannot request a persist");
    else if (!requested)
        wfm_ctx_complete(ctx, ai);
}

static const void *const persist_callbacks[] = {(const void *)persist_resumed};
static const wfm_ext_spec *const persist_exts[] = {&mark_spec};

static const wfm_kind_spec persist_spec = {
    .name = "Persist",
    .category = "Activity",
    .flags = WFM_KIND_CAN_IDLE,
    .execute = persist_execute,
    .callbacks = persist_callbacks,
    .callback_count = 1,
    .exts = persist_exts,
    .ext_count = 1,
};

wf_status wfm_act_persist_register(wfm_catalogue *cat, wf_error *err)
{
    return wfm_catalogue_register(cat, &persist_spec, err);
}

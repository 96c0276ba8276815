/* wfm_migrate.c — runtime support for moving legacy instances (wfm_migrate.h): the replay
 * flag the native-calling kinds test, and reading and writing an idle instance's position
 * and values through the scheduler's activity tree. */
#include "wfm_migrate.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "wfm_definition_int.h"
#include "wfm_sched_int.h"

bool wfm_ctx_replaying(const wfm_ctx *ctx)
{
    return ctx->host.replay;
}

void wfm_instance_set_replay(wfm_instance *inst, bool on)
{
    wfm_ctx *ctx = wfm__instance_hold(inst);
    ctx->host.replay = on;
    wfm__instance_unhold(inst);
}

void wfm_instance_set_replay_values(wfm_instance *inst, wfm_replay_values_fn fn, void *ud)
{
    wfm_ctx *ctx = wfm__instance_hold(inst);
    ctx->host.replay_values = fn;
    ctx->host.replay_ud = ud;
    wfm__instance_unhold(inst);
}

bool wfm_ctx_replay_values(const wfm_ctx *ctx, const wfm_ai *ai, wfm_replay_values *out)
{
    return ctx->host.replay && ctx->host.replay_values &&
           ctx->host.replay_values(ctx->host.replay_ud, wfm_node_display_name(ai->node), out);
}

void wfm_instance_set_replay_items(wfm_instance *inst, wfm_replay_items_fn fn)
{
    wfm_ctx *ctx = wfm__instance_hold(inst);
    ctx->host.replay_items = fn;
    wfm__instance_unhold(inst);
}

bool wfm_ctx_replay_items(const wfm_ctx *ctx, const wfm_ai *ai, wfm_replay_items *out)
{
    return ctx->host.replay && ctx->host.replay_items &&
           ctx->host.replay_items(ctx->host.replay_ud, wfm_node_display_name(ai->node), out);
}

static wfm_ai *next_preorder(wfm_ai *a, wfm_ai *root)
{
    if (a->first_child)
        return a->first_child;
    for (; a && a != root; a = a->parent)
        if (a->next)
            return a->next;
    return NULL;
}

void wfm_instance_each_executing(wfm_instance *inst, wfm_name_fn fn, void *ud)
{
    wfm_ctx *ctx = wfm__instance_hold(inst);
    for (wfm_ai *a = ctx->root; a; a = next_preorder(a, ctx->root))
        if (a->status == WFM_EXECUTING) {
            fn(ud, wfm_node_display_name(a->node), a->spec->name);
            /* nodes that are not activity instances of their own (a StateMachine's State,
             * a Transition) contain it: they are where the instance is too */
            const wfm_node *stop = a->parent ? a->parent->node : NULL;
            for (const wfm_node *n = a->node->parent; n && n != stop; n = n->parent)
                fn(ud, wfm_node_display_name(n), "");
        }
    wfm__instance_unhold(inst);
}

static int due_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

size_t wfm_instance_timers(wfm_instance *inst, int64_t *due, size_t max)
{
    wfm_ctx *ctx = wfm__instance_hold(inst);
    size_t n = ctx->timer_count;
    for (size_t i = 0; i < n && i < max; i++)
        due[i] = ctx->timers[i].due_us;
    wfm__instance_unhold(inst);
    if (n <= max) /* the heap is ordered only along its paths */
        qsort(due, n, sizeof *due, due_cmp);
    return n;
}

static int fire_order_cmp(const void *a, const void *b)
{
    const wfm__timer *x = a, *y = b;
    if (x->due_us != y->due_us)
        return x->due_us < y->due_us ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorted by (due, seq), the array is a min-heap; ascending due times keep it sorted. */
bool wfm_instance_place_timers(wfm_instance *inst, const int64_t *due, size_t n)
{
    wfm_ctx *ctx = wfm__instance_hold(inst);
    bool ok = ctx->timer_count == n;
    if (ok) {
        qsort(ctx->timers, n, sizeof *ctx->timers, fire_order_cmp);
        for (size_t i = 0; i < n; i++) {
            assert(i == 0 || due[i] >= due[i - 1]);
            ctx->timers[i].due_us = due[i];
        }
    }
    wfm__instance_unhold(inst);
    return ok;
}

/* Convert and store into one slot. */
static wf_status put(wf_value *slot, const wf_type *t, const char *name, const wf_value *value,
                     wf_error *err)
{
    wf_value v = wf_null();
    wf_error cerr = WF_ERROR_INIT;
    if (wf_value_convert(value, t, &v, &cerr) != WF_OK)
        return wf_error_set(err, cerr.code == WF_E_NOMEM ? WF_E_NOMEM : WF_E_TYPE, NULL,
                            "'%s' (%s): %s", name, t->name, cerr.message);
    wf_value_set(slot, &v);
    wf_value_release(&v);
    return WF_OK;
}

wf_status wfm_instance_assign(wfm_instance *inst, const char *name, const wf_value *value,
                              size_t *count, wf_error *err)
{
    *count = 0;
    wfm_ctx *ctx = wfm__instance_hold(inst);
    const wfm_definition *def = ctx->def;
    wf_status rc = WF_OK;
    for (uint32_t i = 0; i < def->arg_count && rc == WF_OK; i++)
        if (strcmp(def->args[i].name, name) == 0) {
            rc = put(&ctx->root_env.slots[def->args[i].slot], def->args[i].type, name, value,
                     err);
            *count += rc == WF_OK;
        }
    for (wfm_ai *a = ctx->root; a && rc == WF_OK; a = next_preorder(a, ctx->root)) {
        if (!a->venv.slots)
            continue;
        const wfm_node *node = a->node;
        for (uint32_t i = 0; i < node->var_count && i < a->venv.count && rc == WF_OK; i++)
            if (strcmp(node->vars[i].name, name) == 0) {
                rc = put(&a->venv.slots[i], node->vars[i].type, name, value, err);
                *count += rc == WF_OK;
            }
    }
    wfm__instance_unhold(inst);
    return rc;
}

bool wfm_definition_has_display_name(const wfm_definition *def, const char *name)
{
    for (uint32_t i = 0; i < def->node_count; i++)
        if (strcmp(wfm_node_display_name(def->nodes[i]), name) == 0)
            return true;
    return false;
}

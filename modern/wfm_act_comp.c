/* wfm_act_comp.c — compensation: CompensableActivity, Compensate and Confirm (docs/semantics.md
 * §5). Each CompensableActivity instance gets a token in the instance's compensation
 * extension; when its body closes, the token keeps a snapshot of the activity's environment
 * chain so its handlers later see the variables as they were then. The workflow's end
 * confirms (success) or compensates (fault, cancel) what is still open, newest first. */
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "wfm_activity.h"
#include "wfm_acts.h"
#include "wfm_ctx.h"
#include "wfm_node.h"
#include "wfm_expr.h" /* wfm_env: compensation snapshots */
#include "wfm_persist.h"

/* Token lifecycle (status, and the function that moves it):
 *   RUNNING     -> COMPLETED    ca_body_done (body closed: snapshot taken, order recorded)
 *   RUNNING     -> CANCELING    ca_body_done (body canceled) -> CANCELED   drv_finalize
 *   COMPLETED   -> COMPENSATING drv_step     -> COMPENSATED                drv_finalize
 *   COMPLETED   -> CONFIRMING   drv_step     -> CONFIRMED                  drv_finalize
 * A token whose activity was aborted by a fault stays RUNNING; its completed children are
 * then compensated or confirmed at the workflow's end like top-level ones.
 * Handlers (WF4's CompensationParticipant): compensating runs CompensationHandler, then
 * CONFIRMS the children the handler left open; without a handler it compensates the
 * children. Confirming runs ConfirmationHandler (if any), then confirms the children.
 * Canceling runs CancellationHandler, then confirms the children left open; without one it
 * compensates them. Children go newest completion first. A handler that faults ends the
 * instance as Terminated (WF4 aborts it) with an InvalidOperationException. */
typedef enum comp_status {
    TOK_RUNNING,
    TOK_COMPLETED,
    TOK_CANCELING,
    TOK_CANCELED,
    TOK_COMPENSATING,
    TOK_COMPENSATED,
    TOK_CONFIRMING,
    TOK_CONFIRMED,
} comp_status;

typedef struct comp_token {
    int64_t id;                /* 1-based index in the extension */
    const wfm_node *node;      /* the CompensableActivity */
    struct comp_token *parent; /* enclosing CompensableActivity's token, NULL at top level */
    comp_status status;
    uint64_t seq;              /* completion order, 0 until the body closed */
    wfm_env *env;              /* owned snapshot chain (ends at the live root env), or NULL */
} comp_token;

typedef enum comp_op { OP_COMPENSATE, OP_CONFIRM, OP_CANCEL } comp_op;

/* One step of a driver: run the handler of `t` for `op`, then process its open children
 * with `children_op`. A `scope` frame has no handler of its own (Compensate without a Target
 * and the workflow's end): it only processes the open children of `t` (NULL: top level). */
typedef struct drv_frame {
    comp_token *t;
    comp_op op;
    comp_op children_op;
    bool started;
    bool scope;
} drv_frame;

typedef struct comp_driver {
    drv_frame *frames; /* owned stack */
    size_t count, cap;
    wf_value failure;  /* owned: a handler's exception */
    bool failed;
} comp_driver;

typedef struct comp_ext {
    comp_token **tokens; /* owned; tokens[id - 1] */
    size_t count, cap;
    uint64_t seq;
    bool hooked;          /* the end-of-workflow hook is registered */
    comp_driver finish;   /* the end-of-workflow confirmation / compensation */
} comp_ext;

static const wfm_ext_spec comp_ext_spec;
static const wfm_kind_spec compensable_spec, compensate_spec, confirm_spec;

static bool node_is(const wfm_node *node, const wfm_kind_spec *spec)
{
    return node && wfm_kind_spec_of(wfm_node_kind(node)) == spec;
}

/* Out of memory: the scheduler fails the instance once this callback returns. */
static void fail_nomem(wfm_ctx *ctx)
{
    wfm_ctx_nomem(ctx);
}

/* ---- environment snapshots ------------------------------------------------------------ */
static void env_free_copy(wfm_env *env)
{
    for (uint32_t i = 0; i < env->count; i++)
        wf_value_release(&env->slots[i]);
    wf_free(env->slots);
    wf_free(env);
}

/* Free a snapshot chain; it ends at the live root environment (parent NULL), not ours. */
static void env_free_chain(wfm_env *env)
{
    while (env && env->parent) {
        wfm_env *up = env->parent;
        env_free_copy(env);
        env = up;
    }
}

/*
** Copy the environment chain from `env` up to (not including) the root environment, which
** lives as long as the instance: handlers then write the workflow's arguments for real.
*/
static wf_status env_snapshot(const wfm_env *env, wfm_env **out)
{
    wfm_env *head = NULL, **link = &head;
    for (; env && env->parent; env = env->parent) {
        wfm_env *copy = wf_calloc(1, sizeof *copy);
        if (copy && env->count)
            copy->slots = wf_calloc(env->count, sizeof *copy->slots);
        if (!copy || (env->count && !copy->slots)) {
            wf_free(copy);
            *link = NULL;
            while (head) { /* every link so far is a copy */
                wfm_env *up = head->parent;
                env_free_copy(head);
                head = up;
            }
            return WF_E_NOMEM;
        }
        copy->count = env->count;
        for (uint32_t i = 0; i < env->count; i++)
            copy->slots[i] = wf_value_retain(&env->slots[i]);
        *link = copy;
        link = &copy->parent;
    }
    *link = (wfm_env *)env;
    *out = head;
    return WF_OK;
}

/* ---- the extension -------------------------------------------------------------------- */
static void driver_fini(comp_driver *drv)
{
    wf_free(drv->frames);
    drv->frames = NULL;
    drv->count = drv->cap = 0;
    if (drv->failed)
        wf_value_release(&drv->failure);
    drv->failed = false;
}

static void comp_ext_fini(void *state)
{
    comp_ext *ext = state;
    for (size_t i = 0; i < ext->count; i++) {
        env_free_chain(ext->tokens[i]->env);
        wf_free(ext->tokens[i]);
    }
    wf_free(ext->tokens);
    driver_fini(&ext->finish);
}

static comp_ext *comp_ext_get(wfm_ctx *ctx)
{
    return wfm_ctx_ext_get(ctx, &comp_ext_spec);
}


static comp_token *token_new(comp_ext *ext, const wfm_node *node, comp_token *parent)
{
    if (ext->count == ext->cap) {
        size_t cap = ext->cap ? ext->cap * 2 : 8;
        comp_token **tokens = wf_realloc(ext->tokens, cap * sizeof *tokens);
        if (!tokens)
            return NULL;
        ext->tokens = tokens;
        ext->cap = cap;
    }
    comp_token *t = wf_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->id = (int64_t)ext->count + 1;
    t->node = node;
    t->parent = parent;
    t->status = TOK_RUNNING;
    ext->tokens[ext->count++] = t;
    return t;
}

static comp_token *token_find(comp_ext *ext, const wf_value *v)
{
    if (v->type->kind != WF_K_TOKEN || v->u.i64 < 1 || (uint64_t)v->u.i64 > ext->count)
        return NULL;
    assert(ext->tokens[v->u.i64 - 1]->id == v->u.i64); /* tokens[id - 1] */
    return ext->tokens[v->u.i64 - 1];
}

/* The newest completed child of `t`. For the top level (t NULL) also the completed tokens
 * whose parent never completed (it was aborted by a fault). */
static comp_token *token_newest_child(comp_ext *ext, const comp_token *t)
{
    comp_token *best = NULL;
    for (size_t i = 0; i < ext->count; i++) {
        comp_token *c = ext->tokens[i];
        if (c->status != TOK_COMPLETED)
            continue;
        bool mine = t ? c->parent == t : !c->parent || c->parent->status == TOK_RUNNING;
        if (mine && (!best || c->seq > best->seq))
            best = c;
    }
    return best;
}

/* ---- persistence (wfm_persist.h "Persistence contract") -------------------------------- */
/* Tokens are written by id (0: none); snapshots as free environments; each state starts
 * with a version number. */
#define COMP_STATE_VERSION 1u

static void drv_save(const comp_driver *drv, wfm_persist_writer *w)
{
    wfm_persist_write_uint(w, drv->count);
    for (size_t i = 0; i < drv->count; i++) {
        const drv_frame *f = &drv->frames[i];
        wfm_persist_write_int(w, f->t ? f->t->id : 0);
        wfm_persist_write_uint(w, (uint64_t)f->op | (uint64_t)f->children_op << 2 |
                                      (uint64_t)f->started << 4 | (uint64_t)f->scope << 5);
    }
    wfm_persist_write_uint(w, drv->failed);
    if (drv->failed)
        wfm_persist_write_value(w, &drv->failure);
}

static comp_token *token_read(comp_ext *ext, wfm_persist_reader *r)
{
    int64_t id = wfm_persist_read_int(r);
    if (id == 0)
        return NULL;
    if (!ext || id < 0 || (uint64_t)id > ext->count) {
        wfm_persist_read_fail(r, "compensation token %lld does not exist", (long long)id);
        return NULL;
    }
    return ext->tokens[id - 1];
}

static wf_status drv_restore(comp_driver *drv, comp_ext *ext, wfm_persist_reader *r)
{
    uint64_t n = wfm_persist_read_uint(r);
    if (n > (ext ? ext->count : 0) + 1) { /* one frame per nesting level, plus a scope */
        wfm_persist_read_fail(r, "bad compensation driver depth");
        return WF_OK;
    }
    if (n && !(drv->frames = wf_calloc((size_t)n, sizeof *drv->frames)))
        return WF_E_NOMEM;
    drv->cap = (size_t)n;
    for (; drv->count < n && wfm_persist_read_ok(r); drv->count++) {
        drv_frame *f = &drv->frames[drv->count];
        f->t = token_read(ext, r);
        uint64_t bits = wfm_persist_read_uint(r);
        if ((bits & 3u) > OP_CANCEL || (bits >> 2 & 3u) > OP_CANCEL || (!f->t && !(bits >> 5)))
            wfm_persist_read_fail(r, "bad compensation driver frame");
        f->op = (comp_op)(bits & 3u);
        f->children_op = (comp_op)(bits >> 2 & 3u);
        f->started = bits >> 4 & 1u;
        f->scope = bits >> 5 & 1u;
    }
    drv->failed = wfm_persist_read_uint(r) != 0;
    drv->failure = drv->failed ? wfm_persist_read_value(r) : wf_null();
    return WF_OK;
}

static wf_status comp_ext_save(const void *state, wfm_persist_writer *w)
{
    const comp_ext *ext = state;
    wfm_persist_write_uint(w, COMP_STATE_VERSION);
    wfm_persist_write_uint(w, ext->count);
    wfm_persist_write_uint(w, ext->seq);
    wfm_persist_write_uint(w, ext->hooked);
    for (size_t i = 0; i < ext->count; i++) {
        const comp_token *t = ext->tokens[i];
        wfm_persist_write_node(w, t->node);
        wfm_persist_write_int(w, t->parent ? t->parent->id : 0);
        wfm_persist_write_uint(w, t->status);
        wfm_persist_write_uint(w, t->seq);
        wfm_persist_write_env(w, t->env);
    }
    drv_save(&ext->finish, w);
    return WF_OK;
}

/* One token, appended to ext (its parent, written by id, was restored before it). */
static wf_status comp_token_restore(comp_ext *ext, wfm_persist_reader *r)
{
    const wfm_node *node = wfm_persist_read_node(r);
    comp_token *parent = token_read(ext, r);
    uint64_t status = wfm_persist_read_uint(r);
    uint64_t seq = wfm_persist_read_uint(r);
    if (!wfm_persist_read_ok(r))
        return WF_OK;
    if (!node_is(node, &compensable_spec) || status > TOK_CONFIRMED) {
        wfm_persist_read_fail(r, "bad compensation token");
        return WF_OK;
    }
    comp_token *t = token_new(ext, node, parent);
    if (!t)
        return WF_E_NOMEM;
    t->status = (comp_status)status;
    t->seq = seq;
    t->env = wfm_persist_read_env(r, true);
    return WF_OK;
}

static wf_status comp_ext_restore(void *state, wfm_persist_reader *r)
{
    comp_ext *ext = state;
    if (wfm_persist_read_uint(r) != COMP_STATE_VERSION)
        wfm_persist_read_fail(r, "unknown compensation state version");
    uint64_t n = wfm_persist_read_uint(r);
    ext->seq = wfm_persist_read_uint(r);
    ext->hooked = wfm_persist_read_uint(r) != 0;
    for (uint64_t i = 0; i < n && wfm_persist_read_ok(r); i++) {
        wf_status st = comp_token_restore(ext, r);
        if (st != WF_OK)
            return st;
    }
    return drv_restore(&ext->finish, ext, r);
}

static const wfm_ext_spec comp_ext_spec = {
    .name = "wfbridge.compensation",
    .size = sizeof(comp_ext),
    .fini = comp_ext_fini,
    .save = comp_ext_save,
    .restore = comp_ext_restore,
};

/* ---- the driver: runs handlers one at a time -------------------------------------------- */
typedef enum drv_result { DRV_RUNNING, DRV_DONE, DRV_FAILED } drv_result;

static bool drv_push(comp_driver *drv, comp_token *t, comp_op op, bool scope,
                     comp_op children_op)
{
    if (drv->count == drv->cap) {
        size_t cap = drv->cap ? drv->cap * 2 : 4;
        drv_frame *frames = wf_realloc(drv->frames, cap * sizeof *frames);
        if (!frames)
            return false;
        drv->frames = frames;
        drv->cap = cap;
    }
    /* A scope frame has no handler: it starts directly with the children. */
    drv->frames[drv->count++] =
        (drv_frame){.t = t, .op = op, .children_op = children_op, .started = scope,
                    .scope = scope};
    return true;
}

static const wfm_node *handler_of(const comp_token *t, comp_op op);
static void drv_finalize(drv_frame *f);

/*
** Advance the driver of `ai` until a handler has been scheduled (DRV_RUNNING), every frame
** is done (DRV_DONE), or memory ran out (DRV_FAILED: the scheduler then fails the instance).
** `done`/`fault` are the callbacks that bring the handler's end back to this driver.
*/
static drv_result drv_step(wfm_ctx *ctx, wfm_ai *ai, comp_driver *drv, wfm_done_fn done,
                           wfm_fault_fn fault)
{
    comp_ext *ext = comp_ext_get(ctx);
    while (drv->count > 0) {
        drv_frame *f = &drv->frames[drv->count - 1];
        if (!f->started) {
            f->started = true;
            const wfm_node *handler = handler_of(f->t, f->op);
            f->t->status = f->op == OP_CANCEL      ? TOK_CANCELING
                           : f->op == OP_CONFIRM   ? TOK_CONFIRMING
                                                   : TOK_COMPENSATING;
            f->children_op = handler || f->op == OP_CONFIRM ? OP_CONFIRM : OP_COMPENSATE;
            if (handler) {
                wf_status rc = f->op == OP_CANCEL
                                   ? wfm_ctx_schedule(ctx, ai, handler, done, fault)
                                   : wfm_ctx_schedule_in_env(ctx, ai, handler, f->t->env, done, fault);
                return rc == WF_OK ? DRV_RUNNING : DRV_FAILED;
            }
        }
        comp_token *c = ext ? token_newest_child(ext, f->t) : NULL;
        if (c) {
            if (!drv_push(drv, c, f->children_op, false, OP_CONFIRM)) {
                fail_nomem(ctx);
                return DRV_FAILED;
            }
            continue;
        }
        drv_finalize(f);
        drv->count--;
    }
    return DRV_DONE;
}

static void drv_finalize(drv_frame *f)
{
    if (f->scope)
        return;
    f->t->status = f->op == OP_CANCEL    ? TOK_CANCELED
                   : f->op == OP_CONFIRM ? TOK_CONFIRMED
                                         : TOK_COMPENSATED;
    env_free_chain(f->t->env);
    f->t->env = NULL;
}

static bool drv_handler_fault(comp_driver *drv, const wf_value *exc)
{
    if (!drv->failed) {
        drv->failed = true;
        drv->failure = wf_value_retain(exc);
    }
    return true;
}

/*
** A handler of the top frame ended. Returns false when the instance was terminated because
** the handler faulted.
*/
static bool drv_handler_done(wfm_ctx *ctx, wfm_ai *ai, comp_driver *drv, wfm_ai *child)
{
    (void)child;
    if (!drv->failed)
        return true;
    drv_frame *f = &drv->frames[drv->count - 1];
    const char *what = f->op == OP_CANCEL    ? "CancellationHandler"
                       : f->op == OP_CONFIRM ? "ConfirmationHandler"
                                             : "CompensationHandler";
    wf_value exc = wf_null();
    wf_buf msg;
    wf_buf_init(&msg);
    wf_buf_addf(&msg, "the %s of '%s' faulted: %s", what, wfm_node_display_name(f->t->node),
                wf_value_exc_message(&drv->failure));
    wf_status rc = msg.oom ? WF_E_NOMEM
                           : wf_value_exception(&wf_exc_invalid_operation, msg.data, &exc);
    wf_buf_fini(&msg);
    if (rc != WF_OK)
        fail_nomem(ctx);
    else
        wfm_ctx_terminate(ctx, ai, exc);
    return false;
}

/* ---- CompensableActivity -------------------------------------------------------------- */
enum { CA_BODY, CA_COMPENSATION, CA_CONFIRMATION, CA_CANCELLATION, CA_RESULT };

static const wfm_prop_spec compensable_props[] = {
    {"Body", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_CONTENT, NULL},
    {"CompensationHandler", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"ConfirmationHandler", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"CancellationHandler", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"Result", WFM_PROP_OUT, "CompensationToken", NULL, 0, NULL},
};

static const wfm_node *handler_of(const comp_token *t, comp_op op)
{
    if (!t)
        return NULL;
    unsigned prop = op == OP_CANCEL    ? CA_CANCELLATION
                    : op == OP_CONFIRM ? CA_CONFIRMATION
                                       : CA_COMPENSATION;
    return wfm_node_child(t->node, prop);
}

typedef struct ca_state {
    comp_driver drv; /* the cancellation path */
    comp_token *token;
    bool canceling;
} ca_state;

static void ca_driver_finished(wfm_ctx *ctx, wfm_ai *ai)
{
    wfm_ctx_mark_canceled(ctx, ai);
    wfm_ctx_complete(ctx, ai);
}

static void ca_handler_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child);

static bool ca_handler_fault(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child, const wf_value *exc)
{
    (void)ctx;
    (void)child;
    ca_state *st = wfm_ai_state(ai);
    return drv_handler_fault(&st->drv, exc);
}

static void ca_run_driver(wfm_ctx *ctx, wfm_ai *ai)
{
    ca_state *st = wfm_ai_state(ai);
    if (drv_step(ctx, ai, &st->drv, ca_handler_done, ca_handler_fault) == DRV_DONE)
        ca_driver_finished(ctx, ai);
}

static void ca_handler_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    ca_state *st = wfm_ai_state(ai);
    if (!drv_handler_done(ctx, ai, &st->drv, child))
        return;
    ca_run_driver(ctx, ai);
}

static void ca_start_cancel(wfm_ctx *ctx, wfm_ai *ai)
{
    ca_state *st = wfm_ai_state(ai);
    st->canceling = true;
    if (!drv_push(&st->drv, st->token, OP_CANCEL, false, OP_CONFIRM)) {
        fail_nomem(ctx);
        return;
    }
    ca_run_driver(ctx, ai);
}

static void ca_body_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    ca_state *st = wfm_ai_state(ai);
    if (wfm_ai_status(child) != WFM_CLOSED) {
        ca_start_cancel(ctx, ai);
        return;
    }
    comp_ext *ext = comp_ext_get(ctx);
    comp_token *t = st->token;
    if (wfm_node_child(t->node, CA_COMPENSATION) || wfm_node_child(t->node, CA_CONFIRMATION) ||
        wfm_node_child(t->node, CA_CANCELLATION)) {
        if (env_snapshot(wfm_ai_env(ai), &t->env) != WF_OK) {
            fail_nomem(ctx);
            return;
        }
    }
    t->status = TOK_COMPLETED;
    t->seq = ++ext->seq;
    wfm_ctx_complete(ctx, ai);
}

static void comp_finish_hook(wfm_ctx *ctx, wfm_ai *root, wfm_status body_status, void *data);
static void finish_handler_done(wfm_ctx *ctx, wfm_ai *root, wfm_ai *child);
static bool finish_handler_fault(wfm_ctx *ctx, wfm_ai *root, wfm_ai *child, const wf_value *exc);

static void compensable_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    ca_state *st = wfm_ai_state(ai);
    st->drv.failure = wf_null();
    comp_ext *ext = comp_ext_get(ctx);
    if (!ext) {
        fail_nomem(ctx);
        return;
    }
    if (!ext->hooked) {
        if (wfm_ctx_on_finish(ctx, comp_finish_hook, NULL) != WF_OK) {
            fail_nomem(ctx);
            return;
        }
        ext->hooked = true;
    }
    comp_token *parent = NULL;
    for (wfm_ai *p = wfm_ai_parent(ai); p && !parent; p = wfm_ai_parent(p))
        if (node_is(wfm_ai_node(p), &compensable_spec))
            parent = ((ca_state *)wfm_ai_state(p))->token;
    st->token = token_new(ext, wfm_ai_node(ai), parent);
    if (!st->token) {
        fail_nomem(ctx);
        return;
    }
    wf_value tv = {&wf_type_token, {.i64 = st->token->id}};
    if (wfm_ctx_set(ctx, ai, CA_RESULT, &tv) != WF_OK)
        return;
    const wfm_node *body = wfm_node_child(wfm_ai_node(ai), CA_BODY);
    if (body)
        wfm_ctx_schedule(ctx, ai, body, ca_body_done, NULL);
    else {
        st->token->status = TOK_COMPLETED;
        st->token->seq = ++ext->seq;
        wfm_ctx_complete(ctx, ai);
    }
}

static void compensable_cancel(wfm_ctx *ctx, wfm_ai *ai)
{
    ca_state *st = wfm_ai_state(ai);
    if (st->canceling)
        return;
    if (wfm_ai_running_children(ai) > 0)
        wfm_ctx_cancel_children(ctx, ai);
    else
        ca_start_cancel(ctx, ai);
}

static void compensable_fini(wfm_ai *ai)
{
    ca_state *st = wfm_ai_state(ai);
    driver_fini(&st->drv);
}

/*
** Load-time: no CompensableActivity inside a compensation, confirmation or cancellation
** handler (WF4's constraint).
*/
static wf_status compensable_prepare(wfm_load *load, wfm_node *node)
{
    const wfm_node *below = node;
    for (const wfm_node *p = wfm_node_parent(node); p; below = p, p = wfm_node_parent(p)) {
        if (!node_is(p, &compensable_spec) || wfm_node_child(p, CA_BODY) == below)
            continue;
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "CompensableActivity is not allowed inside a handler of '%s'",
                       wfm_node_display_name(p));
        break;
    }
    return WF_OK;
}

static wf_status compensable_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    const ca_state *st = wfm_ai_state_const(ai);
    wfm_persist_write_uint(w, COMP_STATE_VERSION);
    wfm_persist_write_int(w, st->token ? st->token->id : 0);
    wfm_persist_write_uint(w, st->canceling);
    drv_save(&st->drv, w);
    return WF_OK;
}

static wf_status compensable_restore(wfm_ai *ai, wfm_persist_reader *r)
{
    ca_state *st = wfm_ai_state(ai);
    comp_ext *ext = comp_ext_get(wfm_persist_reader_ctx(r)); /* restored before activities */
    if (!ext)
        return WF_E_NOMEM;
    if (wfm_persist_read_uint(r) != COMP_STATE_VERSION)
        wfm_persist_read_fail(r, "unknown CompensableActivity state version");
    st->token = token_read(ext, r);
    st->canceling = wfm_persist_read_uint(r) != 0;
    return drv_restore(&st->drv, ext, r);
}

/* Append only: saved instances name callbacks by their index here. */
static const void *const compensable_callbacks[] = {
    (const void *)ca_body_done,        (const void *)ca_handler_done,
    (const void *)ca_handler_fault,    (const void *)comp_finish_hook,
    (const void *)finish_handler_done, (const void *)finish_handler_fault,
};
static const wfm_ext_spec *const compensable_exts[] = {&comp_ext_spec};

static const wfm_kind_spec compensable_spec = {
    .name = "CompensableActivity",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES,
    .props = compensable_props,
    .prop_count = sizeof compensable_props / sizeof compensable_props[0],
    .content_prop = "Body",
    .state_size = sizeof(ca_state),
    .prepare = compensable_prepare,
    .execute = compensable_execute,
    .cancel = compensable_cancel,
    .fini = compensable_fini,
    .callbacks = compensable_callbacks,
    .callback_count = sizeof compensable_callbacks / sizeof compensable_callbacks[0],
    .save = compensable_save,
    .restore = compensable_restore,
    .exts = compensable_exts,
    .ext_count = 1,
};

/* ---- the workflow's end --------------------------------------------------------------- */
static void finish_handler_done(wfm_ctx *ctx, wfm_ai *root, wfm_ai *child);

static bool finish_handler_fault(wfm_ctx *ctx, wfm_ai *root, wfm_ai *child, const wf_value *exc)
{
    (void)root;
    (void)child;
    comp_ext *ext = comp_ext_get(ctx);
    return drv_handler_fault(&ext->finish, exc);
}

static void finish_handler_done(wfm_ctx *ctx, wfm_ai *root, wfm_ai *child)
{
    comp_ext *ext = comp_ext_get(ctx);
    if (drv_handler_done(ctx, root, &ext->finish, child))
        drv_step(ctx, root, &ext->finish, finish_handler_done, finish_handler_fault);
}

/*
** Success confirms every open token, a fault or cancellation compensates them; newest
** completion first, each token's children through its own frame.
*/
static void comp_finish_hook(wfm_ctx *ctx, wfm_ai *root, wfm_status body_status, void *data)
{
    (void)data;
    comp_ext *ext = comp_ext_get(ctx);
    comp_op op = body_status == WFM_CLOSED ? OP_CONFIRM : OP_COMPENSATE;
    if (ext && !token_newest_child(ext, NULL))
        return; /* nothing open */
    if (!ext || !drv_push(&ext->finish, NULL, op, true, op)) {
        fail_nomem(ctx);
        return;
    }
    drv_step(ctx, root, &ext->finish, finish_handler_done, finish_handler_fault);
}

/* ---- Compensate, Confirm -------------------------------------------------------------- */
enum { CT_TARGET };
static const wfm_prop_spec target_props[] = {
    {"Target", WFM_PROP_IN, "CompensationToken", NULL, 0, NULL},
};

typedef struct ct_state {
    comp_driver drv;
} ct_state;

static void ct_handler_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child);

static bool ct_handler_fault(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child, const wf_value *exc)
{
    (void)ctx;
    (void)child;
    ct_state *st = wfm_ai_state(ai);
    return drv_handler_fault(&st->drv, exc);
}

static void ct_run(wfm_ctx *ctx, wfm_ai *ai)
{
    ct_state *st = wfm_ai_state(ai);
    if (drv_step(ctx, ai, &st->drv, ct_handler_done, ct_handler_fault) == DRV_DONE)
        wfm_ctx_complete(ctx, ai);
}

static void ct_handler_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    ct_state *st = wfm_ai_state(ai);
    if (drv_handler_done(ctx, ai, &st->drv, child))
        ct_run(ctx, ai);
}

/* The token whose handler a driver is running: its top frame's (children are pushed only
 * after a frame's handler has ended). NULL when the driver is idle. */
static comp_token *drv_current(const comp_driver *drv)
{
    return drv->count > 0 ? drv->frames[drv->count - 1].t : NULL;
}

/*
** The token whose children a Target-less Compensate/Confirm processes: the enclosing
** CompensableActivity's (in its body), the token whose handler is running (found through the
** driver that scheduled the handler: a Compensate/Confirm, a canceling CompensableActivity,
** or the workflow's end at the root), or NULL for the top level.
*/
static comp_token *ct_enclosing(wfm_ctx *ctx, wfm_ai *ai)
{
    comp_ext *ext = comp_ext_get(ctx);
    for (wfm_ai *p = wfm_ai_parent(ai); p; p = wfm_ai_parent(p)) {
        const wfm_node *n = wfm_ai_node(p);
        if (!wfm_ai_parent(p) && ext && drv_current(&ext->finish))
            return drv_current(&ext->finish);
        if (node_is(n, &compensable_spec)) {
            ca_state *st = wfm_ai_state(p);
            return drv_current(&st->drv) ? drv_current(&st->drv) : st->token;
        }
        if (node_is(n, &compensate_spec) || node_is(n, &confirm_spec)) {
            ct_state *st = wfm_ai_state(p);
            if (drv_current(&st->drv))
                return drv_current(&st->drv);
        }
    }
    return NULL;
}

static void ct_execute(wfm_ctx *ctx, wfm_ai *ai, comp_op op)
{
    ct_state *st = wfm_ai_state(ai);
    st->drv.failure = wf_null();
    const char *what = op == OP_CONFIRM ? "Confirm" : "Compensate";
    comp_ext *ext = comp_ext_get(ctx);
    if (!ext) {
        fail_nomem(ctx);
        return;
    }
    bool pushed;
    if (wfm_node_has(wfm_ai_node(ai), CT_TARGET)) {
        wf_value v = wf_null();
        if (wfm_ctx_get(ctx, ai, CT_TARGET, &v) != WF_OK)
            return;
        comp_token *t = token_find(ext, &v);
        if (!t) {
            wfm_ctx_throw(ctx, ai, &wf_exc_argument_null, "%s: Target is not a token", what);
            return;
        }
        if (t->status != TOK_COMPLETED) {
            const char *why = t->status == TOK_CONFIRMED     ? "already confirmed"
                              : t->status == TOK_COMPENSATED ? "already compensated"
                              : t->status == TOK_RUNNING     ? "not completed"
                                                             : "being processed";
            wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "%s: '%s' is %s", what,
                          wfm_node_display_name(t->node), why);
            return;
        }
        pushed = drv_push(&st->drv, t, op, false, OP_CONFIRM);
    } else {
        pushed = drv_push(&st->drv, ct_enclosing(ctx, ai), op, true, op);
    }
    if (!pushed) {
        fail_nomem(ctx);
        return;
    }
    ct_run(ctx, ai);
}

static void compensate_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    ct_execute(ctx, ai, OP_COMPENSATE);
}

static void confirm_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    ct_execute(ctx, ai, OP_CONFIRM);
}

/* Handlers run to their end once started (WF4 does not cancel them either). */
static void ct_cancel(wfm_ctx *ctx, wfm_ai *ai)
{
    (void)ctx;
    (void)ai;
}

static void ct_fini(wfm_ai *ai)
{
    ct_state *st = wfm_ai_state(ai);
    driver_fini(&st->drv);
}

static wf_status ct_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    const ct_state *st = wfm_ai_state_const(ai);
    wfm_persist_write_uint(w, COMP_STATE_VERSION);
    drv_save(&st->drv, w);
    return WF_OK;
}

static wf_status ct_restore(wfm_ai *ai, wfm_persist_reader *r)
{
    ct_state *st = wfm_ai_state(ai);
    comp_ext *ext = comp_ext_get(wfm_persist_reader_ctx(r));
    if (!ext)
        return WF_E_NOMEM;
    if (wfm_persist_read_uint(r) != COMP_STATE_VERSION)
        wfm_persist_read_fail(r, "unknown Compensate/Confirm state version");
    return drv_restore(&st->drv, ext, r);
}

/* Append only: saved instances name callbacks by their index here. */
static const void *const ct_callbacks[] = {
    (const void *)ct_handler_done,
    (const void *)ct_handler_fault,
};

static const wfm_kind_spec compensate_spec = {
    .name = "Compensate",
    .category = "Activity",
    .props = target_props,
    .prop_count = sizeof target_props / sizeof target_props[0],
    .state_size = sizeof(ct_state),
    .execute = compensate_execute,
    .cancel = ct_cancel,
    .fini = ct_fini,
    .callbacks = ct_callbacks,
    .callback_count = sizeof ct_callbacks / sizeof ct_callbacks[0],
    .save = ct_save,
    .restore = ct_restore,
    .exts = compensable_exts,
    .ext_count = 1,
};
static const wfm_kind_spec confirm_spec = {
    .name = "Confirm",
    .category = "Activity",
    .props = target_props,
    .prop_count = sizeof target_props / sizeof target_props[0],
    .state_size = sizeof(ct_state),
    .execute = confirm_execute,
    .cancel = ct_cancel,
    .fini = ct_fini,
    .callbacks = ct_callbacks,
    .callback_count = sizeof ct_callbacks / sizeof ct_callbacks[0],
    .save = ct_save,
    .restore = ct_restore,
    .exts = compensable_exts,
    .ext_count = 1,
};

wf_status wfm_acts_comp_register(wfm_catalogue *cat, wf_error *err)
{
    static const wfm_kind_spec *const specs[] = {&compensable_spec, &compensate_spec,
                                                 &confirm_spec};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        wf_status rc = wfm_catalogue_register(cat, specs[i], err);
        if (rc != WF_OK)
            return rc;
    }
    return WF_OK;
}

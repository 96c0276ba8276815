/* wfm_act_core.c — the core WF4 activities: Sequence, Assign, WriteLine, If, While, DoWhile,
 * ForEach, ParallelForEach, Parallel, Switch, Delay, Pick/PickBranch and WaitForEvent (the
 * Receive-style bookmark activity). Each is a spec plus a few callbacks; ordering comes from
 * the scheduler's front/back rules (docs/semantics.md §5, wfm_activity.h). */
#include <string.h>

#include "../common/wf_mem.h"
#include "../common/wf_payload.h"
#include "wfm_activity.h"
#include "wfm_acts.h"
#include "wfm_ctx.h"
#include "wfm_node.h"
#include "wfm_persist.h"

/* Schedule or fault: a failed schedule has already recorded out-of-memory in the ctx. */
#define SCHEDULE(ctx, ai, node, done) wfm_ctx_schedule((ctx), (ai), (node), (done), NULL)

static void done_complete(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    (void)child;
    wfm_ctx_complete(ctx, ai);
}

/* Evaluate a Boolean property; false (and ai faulted) when evaluation failed. */
static bool get_bool(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, bool *out)
{
    wf_value v;
    if (wfm_ctx_get(ctx, ai, prop, &v) != WF_OK)
        return false;
    *out = v.type->kind == WF_K_BOOL && v.u.b;
    if (v.type->kind != WF_K_BOOL) /* a Boolean holds nothing to release */
        wf_value_release(&v);
    return true;
}

/* ---- Sequence --------------------------------------------------------------------------- */
enum { SEQ_ACTIVITIES };
static const wfm_prop_spec seq_props[] = {
    {"Activities", WFM_PROP_ACTIVITIES, NULL, NULL, WFM_PROP_CONTENT, NULL},
};
typedef struct seq_state {
    size_t next;
} seq_state;

static void seq_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child);

static void seq_next(wfm_ctx *ctx, wfm_ai *ai)
{
    seq_state *st = wfm_ai_state(ai);
    /* a failed schedule has recorded out-of-memory in the ctx, as SCHEDULE's */
    if (wfm_ctx_schedule_item(ctx, ai, SEQ_ACTIVITIES, st->next, seq_done, NULL) ==
        WF_E_NOTFOUND) {
        wfm_ctx_complete(ctx, ai);
        return;
    }
    st->next++;
}

static void seq_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    (void)child;
    seq_next(ctx, ai);
}

/* Persistence tables list every callback a kind hands the runtime; append only (saved
 * states name callbacks by their index). */
static const void *const seq_callbacks[] = {(const void *)seq_done};

static const wfm_kind_spec seq_spec = {
    .name = "Sequence",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES | WFM_KIND_STATE_PLAIN,
    .props = seq_props,
    .prop_count = 1,
    .content_prop = "Activities",
    .state_size = sizeof(seq_state),
    .execute = seq_next,
    .callbacks = seq_callbacks,
    .callback_count = 1,
};

/* ---- Assign<T> -------------------------------------------------------------------------- */
enum { ASSIGN_TO, ASSIGN_VALUE };
static const wfm_prop_spec assign_props[] = {
    {"To", WFM_PROP_OUT, "T", NULL, WFM_PROP_REQUIRED, NULL},
    {"Value", WFM_PROP_IN, "T", NULL, WFM_PROP_REQUIRED, NULL},
};

static void assign_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value v;
    if (wfm_ctx_get(ctx, ai, ASSIGN_VALUE, &v) != WF_OK)
        return;
    wf_status st = wfm_ctx_set(ctx, ai, ASSIGN_TO, &v);
    wf_value_release(&v);
    if (st == WF_OK)
        wfm_ctx_complete(ctx, ai);
}

static const wfm_kind_spec assign_spec = {
    .name = "Assign",
    .category = "Activity",
    .flags = WFM_KIND_GENERIC | WFM_KIND_INLINE,
    .props = assign_props,
    .prop_count = 2,
    .execute = assign_execute,
};

/* ---- WriteLine -------------------------------------------------------------------------- */
enum { WL_TEXT };
static const wfm_prop_spec writeline_props[] = {
    {"Text", WFM_PROP_IN, "x:String", NULL, 0, NULL},
};

/* One writer call per line, so lines of concurrent instances never interleave. */
static void writeline_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value v;
    if (wfm_ctx_get(ctx, ai, WL_TEXT, &v) != WF_OK)
        return;
    const char *text = wf_value_str(&v);
    size_t len = wf_value_str_len(&v);
    char small[512];
    char *line = len < sizeof small ? small : wf_malloc(len + 1);
    if (line) {
        memcpy(line, text, len);
        line[len] = '\n';
        wfm_ctx_write(ctx, line, len + 1);
        if (line != small)
            wf_free(line);
    } else {
        wfm_ctx_write(ctx, text, len);
        wfm_ctx_write(ctx, "\n", 1);
    }
    wf_value_release(&v);
    wfm_ctx_complete(ctx, ai);
}

/* WF4's TextWriter="[w]" redirects the line; here every line goes to the instance's writer,
 * so the attribute is accepted (files from the designer carry it) and ignored with a warning.
 * The property-element form <WriteLine.TextWriter> stays an error. */
static wf_status writeline_prepare(wfm_load *load, wfm_node *node)
{
    if (wfm_load_claim_attr(load, node, "TextWriter"))
        wfm_load_warning(load, node,
                         "WriteLine.TextWriter is ignored: the line goes to the instance's writer");
    return WF_OK;
}

static const wfm_kind_spec writeline_spec = {
    .name = "WriteLine",
    .category = "Activity",
    .flags = WFM_KIND_INLINE,
    .content_prop = "Text", /* <WriteLine><InArgument ...>[x]</InArgument></WriteLine> */
    .props = writeline_props,
    .prop_count = 1,
    .prepare = writeline_prepare,
    .execute = writeline_execute,
};

/* ---- If --------------------------------------------------------------------------------- */
enum { IF_CONDITION, IF_THEN, IF_ELSE };
static const wfm_prop_spec if_props[] = {
    {"Condition", WFM_PROP_IN, "x:Boolean", NULL, WFM_PROP_REQUIRED, NULL},
    {"Then", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"Else", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
};

static void if_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    bool cond;
    if (!get_bool(ctx, ai, IF_CONDITION, &cond))
        return;
    const wfm_node *branch = wfm_node_child(wfm_ai_node(ai), cond ? IF_THEN : IF_ELSE);
    if (branch)
        SCHEDULE(ctx, ai, branch, done_complete);
    else
        wfm_ctx_complete(ctx, ai);
}

static const void *const complete_callbacks[] = {(const void *)done_complete};

static const wfm_kind_spec if_spec = {
    .name = "If",
    .category = "Activity",
    .props = if_props,
    .prop_count = 3,
    .execute = if_execute,
    .callbacks = complete_callbacks,
    .callback_count = 1,
};

/* ---- While / DoWhile: one work item per iteration, the body's variables fresh each time -- */
enum { LOOP_CONDITION, LOOP_BODY };
static const wfm_prop_spec loop_props[] = {
    {"Condition", WFM_PROP_IN, "x:Boolean", NULL, WFM_PROP_REQUIRED, NULL},
    {"Body", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_CONTENT, NULL},
};

static void loop_body_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child);

/* A loop without a body has nothing to repeat: it ends after one evaluation. A leaf body
 * that can run inline loops here; the first that cannot is scheduled. */
static void loop_check(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *body = wfm_node_child(wfm_ai_node(ai), LOOP_BODY);
    for (bool again = false;; again = true) {
        bool cond;
        if (!get_bool(ctx, ai, LOOP_CONDITION, &cond))
            return;
        if (!cond || !body) {
            wfm_ctx_complete(ctx, ai);
            return;
        }
        wfm_inline_result r = again ? wfm_ctx_run_inline_again(ctx, ai, NULL, 0)
                                    : wfm_ctx_run_inline(ctx, ai, body, loop_body_done, NULL);
        if (r == WFM_INLINE_UNAVAILABLE)
            SCHEDULE(ctx, ai, body, loop_body_done);
        if (r != WFM_INLINE_CLOSED)
            return;
    }
}

static void loop_body_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    (void)child;
    loop_check(ctx, ai);
}

static void dowhile_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *body = wfm_node_child(wfm_ai_node(ai), LOOP_BODY);
    if (body)
        SCHEDULE(ctx, ai, body, loop_body_done);
    else
        loop_check(ctx, ai);
}

static const void *const loop_callbacks[] = {(const void *)loop_body_done};

static const wfm_kind_spec while_spec = {
    .name = "While",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES,
    .props = loop_props,
    .prop_count = 2,
    .content_prop = "Body",
    .execute = loop_check,
    .callbacks = loop_callbacks,
    .callback_count = 1,
};
static const wfm_kind_spec dowhile_spec = {
    .name = "DoWhile",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES,
    .props = loop_props,
    .prop_count = 2,
    .content_prop = "Body",
    .execute = dowhile_execute,
    .callbacks = loop_callbacks,
    .callback_count = 1,
};

/* ---- ForEach<T> / ParallelForEach<T> ------------------------------------------------------ */
enum { FE_VALUES, FE_BODY, FE_COMPLETION };
static const wfm_prop_spec foreach_props[] = {
    {"Values", WFM_PROP_IN, "List(T)", NULL, WFM_PROP_REQUIRED, NULL},
    {"Body", WFM_PROP_DELEGATE, "T", NULL, WFM_PROP_CONTENT, NULL},
    {"CompletionCondition", WFM_PROP_IN, "x:Boolean", NULL, 0, NULL},
};
typedef struct fe_state {
    wf_value values; /* owned: the list, evaluated once at the start */
    size_t next;
    bool stopping;      /* ParallelForEach: CompletionCondition became true */
    bool no_completion; /* ParallelForEach without CompletionCondition (not saved: false
                         * after a restore, which only costs the property lookup) */
} fe_state;

static void fe_fini(wfm_ai *ai)
{
    fe_state *st = wfm_ai_state(ai);
    if (st->values.type)
        wf_value_release(&st->values);
}

/* Replaying a migrated instance (wfm_migrate.h): the list the legacy loop iterates, in this
 * loop's list type, replaces Values, and *at says which items run there (none: the host has
 * no counterpart, start at the first). False with a fault thrown. */
static bool fe_replay_at(wfm_ctx *ctx, wfm_ai *ai, wfm_replay_items *at)
{
    fe_state *st = wfm_ai_state(ai);
    if (!wfm_ctx_replay_items(ctx, ai, at))
        return true;
    wf_value v = wf_null();
    wf_error e = WF_ERROR_INIT;
    if (wf_value_convert(at->values, st->values.type, &v, &e) != WF_OK) {
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_cast, "%s: the replayed items: %s",
                      wfm_node_display_name(wfm_ai_node(ai)), e.message);
        return false;
    }
    wf_value_release(&st->values);
    st->values = v;
    return true;
}

static bool fe_start(wfm_ctx *ctx, wfm_ai *ai, wfm_replay_items *at)
{
    fe_state *st = wfm_ai_state(ai);
    if (wfm_ctx_get(ctx, ai, FE_VALUES, &st->values) != WF_OK)
        return false;
    if (wf_is_null(&st->values)) {
        wfm_ctx_throw(ctx, ai, &wf_exc_argument_null, "%s: Values is null",
                      wfm_node_display_name(wfm_ai_node(ai)));
        return false;
    }
    return fe_replay_at(ctx, ai, at);
}

static void foreach_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child);

/* A leaf body that can run inline loops here; the first that cannot is scheduled. */
static void foreach_next(wfm_ctx *ctx, wfm_ai *ai)
{
    fe_state *st = wfm_ai_state(ai);
    wfm_inline_delegate d = {wfm_ai_node(ai), FE_BODY, NULL, NULL, 0, foreach_done, NULL};
    for (bool again = false;; again = true) {
        d.arg = wf_value_list_at(&st->values, st->next); /* NULL past the end */
        if (!d.arg) {
            wfm_ctx_complete(ctx, ai);
            return;
        }
        st->next++;
        /* st->values holds the item until this ai is freed, after its children */
        wfm_inline_result r = again ? wfm_ctx_run_inline_again(ctx, ai, d.arg, 0)
                                    : wfm_ctx_run_delegate_inline(ctx, ai, &d);
        if (r == WFM_INLINE_UNAVAILABLE)
            wfm_ctx_schedule_delegate_borrowed(ctx, ai, d.node, FE_BODY, d.arg, foreach_done, NULL);
        if (r != WFM_INLINE_CLOSED)
            return;
    }
}

static void foreach_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    (void)child;
    foreach_next(ctx, ai);
}

static void foreach_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wfm_replay_items at = {NULL, NULL, 0};
    if (!fe_start(ctx, ai, &at))
        return;
    if (at.running_count) /* replaying: the items before the legacy one have run */
        ((fe_state *)wfm_ai_state(ai))->next = at.running[0];
    foreach_next(ctx, ai);
}

/* Parallel and ParallelForEach: after each child, CompletionCondition; true cancels the rest
 * and the activity still closes normally. */
static void par_child_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child, unsigned cond_prop,
                           bool *stopping)
{
    (void)child;
    if (!*stopping && wfm_node_has(wfm_ai_node(ai), cond_prop)) {
        bool cond;
        if (!get_bool(ctx, ai, cond_prop, &cond))
            return;
        if (cond) {
            *stopping = true;
            wfm_ctx_cancel_children(ctx, ai);
        }
    }
    if (wfm_ai_running_children(ai) == 0)
        wfm_ctx_complete(ctx, ai);
}

static void pfe_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    fe_state *st = wfm_ai_state(ai);
    if (!st->no_completion)
        par_child_done(ctx, ai, child, FE_COMPLETION, &st->stopping);
    else if (wfm_ai_running_children(ai) == 0)
        wfm_ctx_complete(ctx, ai);
}

/* Without a CompletionCondition, pfe_done only counts the children: the bodies that can run
 * inline run here, last first as the deque would run them, and *count becomes the number of
 * items (from the first) still to schedule. False when a body faulted (the items before it
 * are scheduled, the fault queued after them: wfm_inline_delegate.pending). */
static bool pfe_run_inline(wfm_ctx *ctx, wfm_ai *ai, const wf_value *items, size_t *count)
{
    wfm_inline_delegate d = {wfm_ai_node(ai), FE_BODY, NULL, items, 0, pfe_done, NULL};
    for (size_t i = *count, first = i; i > 0; i--) {
        d.arg = &items[i - 1];
        d.pending_count = i - 1;
        wfm_inline_result r = i < first ? wfm_ctx_run_inline_again(ctx, ai, d.arg, i - 1)
                                        : wfm_ctx_run_delegate_inline(ctx, ai, &d);
        if (r == WFM_INLINE_STOPPED)
            return false;
        if (r == WFM_INLINE_UNAVAILABLE)
            break;
        *count = i - 1;
    }
    return true;
}

/* Forward order: the deque is LIFO, so the last item's body runs first (WF4). */
static void pfe_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wfm_replay_items at = {NULL, NULL, 0};
    if (!fe_start(ctx, ai, &at))
        return;
    fe_state *st = wfm_ai_state(ai);
    const wfm_node *node = wfm_ai_node(ai);
    st->no_completion = !wfm_node_has(node, FE_COMPLETION);
    /* st->values holds the items until this ai is freed, after its children */
    const wf_value *items = wf_value_list_items(&st->values);
    size_t n = wf_value_list_count(&st->values), started = 0, k = 0;
    if (!at.values && st->no_completion && !pfe_run_inline(ctx, ai, items, &n))
        return;
    for (size_t i = 0; i < n; i++) {
        if (at.values) { /* replaying: only the items still running in the legacy loop */
            while (k < at.running_count && at.running[k] < i)
                k++;
            if (k == at.running_count || at.running[k] != i)
                continue;
        }
        if (wfm_ctx_schedule_delegate_borrowed(ctx, ai, node, FE_BODY, &items[i], pfe_done, NULL) !=
            WF_OK)
            return;
        started++;
    }
    if (started == 0)
        wfm_ctx_complete(ctx, ai);
}

static wf_status fe_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    const fe_state *st = wfm_ai_state_const(ai);
    wfm_persist_write_value(w, &st->values);
    wfm_persist_write_uint(w, st->next);
    wfm_persist_write_uint(w, st->stopping);
    return WF_OK;
}

static wf_status fe_restore(wfm_ai *ai, wfm_persist_reader *r)
{
    fe_state *st = wfm_ai_state(ai);
    st->values = wfm_persist_read_value(r);
    st->next = (size_t)wfm_persist_read_uint(r);
    st->stopping = wfm_persist_read_uint(r) != 0;
    if (wfm_persist_read_ok(r) && st->values.type->kind != WF_K_LIST)
        wfm_persist_read_fail(r, "ForEach values are not a list");
    return WF_OK;
}

static const void *const foreach_callbacks[] = {(const void *)foreach_done};
static const void *const pfe_callbacks[] = {(const void *)pfe_done};

static const wfm_kind_spec foreach_spec = {
    .name = "ForEach",
    .category = "Activity",
    .flags = WFM_KIND_GENERIC,
    .props = foreach_props,
    .prop_count = 2,
    .content_prop = "Body",
    .state_size = sizeof(fe_state),
    .execute = foreach_execute,
    .fini = fe_fini,
    .callbacks = foreach_callbacks,
    .callback_count = 1,
    .save = fe_save,
    .restore = fe_restore,
};
static const wfm_kind_spec pfe_spec = {
    .name = "ParallelForEach",
    .category = "Activity",
    .flags = WFM_KIND_GENERIC,
    .props = foreach_props,
    .prop_count = 3,
    .content_prop = "Body",
    .state_size = sizeof(fe_state),
    .execute = pfe_execute,
    .fini = fe_fini,
    .callbacks = pfe_callbacks,
    .callback_count = 1,
    .save = fe_save,
    .restore = fe_restore,
};

/* ---- Parallel --------------------------------------------------------------------------- */
enum { PAR_BRANCHES, PAR_COMPLETION };
static const wfm_prop_spec par_props[] = {
    {"Branches", WFM_PROP_ACTIVITIES, NULL, NULL, WFM_PROP_CONTENT, NULL},
    {"CompletionCondition", WFM_PROP_IN, "x:Boolean", NULL, 0, NULL},
};
typedef struct par_state {
    bool stopping;
} par_state;

static void par_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    par_state *st = wfm_ai_state(ai);
    par_child_done(ctx, ai, child, PAR_COMPLETION, &st->stopping);
}

/* Reverse order, so branch 1 runs first; each runs depth-first until it blocks. */
static void par_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    size_t n = wfm_node_count(wfm_ai_node(ai), PAR_BRANCHES);
    for (size_t i = n; i-- > 0;)
        if (wfm_ctx_schedule_item(ctx, ai, PAR_BRANCHES, i, par_done, NULL) != WF_OK)
            return;
    if (n == 0)
        wfm_ctx_complete(ctx, ai);
}

static const void *const par_callbacks[] = {(const void *)par_done};

static const wfm_kind_spec par_spec = {
    .name = "Parallel",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES | WFM_KIND_STATE_PLAIN,
    .props = par_props,
    .prop_count = 2,
    .content_prop = "Branches",
    .state_size = sizeof(par_state),
    .execute = par_execute,
    .callbacks = par_callbacks,
    .callback_count = 1,
};

/* ---- Switch<T> -------------------------------------------------------------------------- */
enum { SW_EXPRESSION, SW_CASES, SW_DEFAULT };
static const wfm_prop_spec switch_props[] = {
    {"Expression", WFM_PROP_IN, "T", NULL, WFM_PROP_REQUIRED, NULL},
    {"Cases", WFM_PROP_KEYED, "T", NULL, WFM_PROP_CONTENT, NULL},
    {"Default", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
};

static void switch_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value v;
    if (wfm_ctx_get(ctx, ai, SW_EXPRESSION, &v) != WF_OK)
        return;
    const wfm_node *node = wfm_ai_node(ai), *pick = wfm_node_child(node, SW_DEFAULT);
    size_t n = wfm_node_count(node, SW_CASES);
    for (size_t i = 0; i < n; i++) {
        const wf_value *key = wfm_node_key(node, SW_CASES, i);
        bool both_null = wf_is_null(key) && wf_is_null(&v);
        if (both_null || (!wf_is_null(key) && !wf_is_null(&v) && wf_value_equal(key, &v))) {
            pick = wfm_node_at(node, SW_CASES, i);
            break;
        }
    }
    wf_value_release(&v);
    if (pick)
        SCHEDULE(ctx, ai, pick, done_complete);
    else
        wfm_ctx_complete(ctx, ai);
}

static const wfm_kind_spec switch_spec = {
    .name = "Switch",
    .category = "Activity",
    .flags = WFM_KIND_GENERIC,
    .props = switch_props,
    .prop_count = 3,
    .content_prop = "Cases",
    .execute = switch_execute,
    .callbacks = complete_callbacks,
    .callback_count = 1,
};

/* ---- Delay: a timer, never a sleeping thread --------------------------------------------- */
enum { DELAY_DURATION };
static const wfm_prop_spec delay_props[] = {
    {"Duration", WFM_PROP_IN, "x:TimeSpan", NULL, WFM_PROP_REQUIRED, NULL},
};

static void delay_fire(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)
{
    (void)payload;
    wfm_ctx_complete(ctx, ai);
}

static void delay_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value v;
    if (wfm_ctx_get(ctx, ai, DELAY_DURATION, &v) != WF_OK)
        return;
    int64_t us = v.u.i64;
    wf_value_release(&v);
    if (us < 0) {
        wfm_ctx_throw(ctx, ai, &wf_exc_argument_range, "Delay.Duration must not be negative");
        return;
    }
    int64_t now = wfm_ctx_now_us(ctx);
    int64_t due = us < INT64_MAX - 1 - now ? now + us : INT64_MAX - 1; /* TimeSpan.MaxValue */
    wf_status st = wfm_ctx_timer(ctx, ai, due, delay_fire);
    if (st == WF_E_NOMEM)
        wfm_ctx_nomem(ctx); /* the instance fails as out of memory, not with an exception */
    else if (st != WF_OK)
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "cannot create the timer");
}

static const void *const delay_callbacks[] = {(const void *)delay_fire};

static const wfm_kind_spec delay_spec = {
    .name = "Delay",
    .category = "Activity",
    .content_prop = "Duration", /* WF4's [ContentProperty]: <Delay>[d]</Delay> */
    .flags = WFM_KIND_CAN_IDLE,
    .props = delay_props,
    .prop_count = 1,
    .execute = delay_execute,
    .callbacks = delay_callbacks,
    .callback_count = 1,
};

/* ---- Pick / PickBranch ------------------------------------------------------------------- */
/* All triggers run; the first to complete wins; the other branches are canceled, and only
 * when they have finished canceling does the winner's Action run (docs/semantics.md §5). */
enum { PICK_BRANCHES };
enum { PB_TRIGGER, PB_ACTION };
static const wfm_prop_spec pick_props[] = {
    {"Branches", WFM_PROP_ACTIVITIES, NULL, NULL, WFM_PROP_CONTENT, NULL},
};
static const wfm_prop_spec pickbranch_props[] = {
    {"Trigger", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"Action", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_CONTENT, NULL},
};
typedef struct pick_state {
    wfm_ai *winner;
    bool action_started;
} pick_state;

static const wfm_kind_spec pickbranch_spec;

static void pick_start_action(wfm_ctx *ctx, wfm_ai *pick)
{
    pick_state *st = wfm_ai_state(pick);
    st->action_started = true;
    const wfm_node *action = wfm_node_child(wfm_ai_node(st->winner), PB_ACTION);
    if (action)
        SCHEDULE(ctx, st->winner, action, done_complete);
    else
        wfm_ctx_complete(ctx, st->winner);
}

static void branch_triggered(wfm_ctx *ctx, wfm_ai *branch)
{
    wfm_ai *pick = wfm_ai_parent(branch);
    pick_state *st = wfm_ai_state(pick);
    if (st->winner) { /* lost the race: finish as canceled */
        wfm_ctx_mark_canceled(ctx, branch);
        wfm_ctx_complete(ctx, branch);
        return;
    }
    st->winner = branch;
    for (wfm_ai *c = wfm_ai_first_child(pick), *next; c; c = next) {
        next = wfm_ai_next_sibling(c);
        if (c != branch)
            wfm_ctx_cancel_child(ctx, pick, c);
    }
    if (wfm_ai_running_children(pick) == 1)
        pick_start_action(ctx, pick);
}

static void trigger_done(wfm_ctx *ctx, wfm_ai *branch, wfm_ai *trigger)
{
    if (wfm_ai_status(trigger) == WFM_CLOSED) {
        branch_triggered(ctx, branch);
        return;
    }
    wfm_ctx_mark_canceled(ctx, branch);
    wfm_ctx_complete(ctx, branch);
}

static void pickbranch_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *trigger = wfm_node_child(wfm_ai_node(ai), PB_TRIGGER);
    if (trigger)
        SCHEDULE(ctx, ai, trigger, trigger_done);
    else
        branch_triggered(ctx, ai);
}

static void pick_branch_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *branch)
{
    pick_state *st = wfm_ai_state(ai);
    if (branch == st->winner) {
        wfm_ctx_complete(ctx, ai);
        return;
    }
    size_t running = wfm_ai_running_children(ai);
    if (st->winner && !st->action_started && running == 1)
        pick_start_action(ctx, ai);
    else if (running == 0)
        wfm_ctx_complete(ctx, ai);
}

static void pick_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *node = wfm_ai_node(ai);
    size_t n = wfm_node_count(node, PICK_BRANCHES);
    for (size_t i = n; i-- > 0;)
        if (SCHEDULE(ctx, ai, wfm_node_at(node, PICK_BRANCHES, i), pick_branch_done) != WF_OK)
            return;
    if (n == 0)
        wfm_ctx_complete(ctx, ai);
}

static wf_status pick_prepare(wfm_load *load, wfm_node *node)
{
    size_t n = wfm_node_count(node, PICK_BRANCHES);
    for (size_t i = 0; i < n; i++) {
        const wfm_node *b = wfm_node_at(node, PICK_BRANCHES, i);
        if (wfm_kind_spec_of(wfm_node_kind(b)) != &pickbranch_spec)
            wfm_load_error(load, b, WF_E_SCHEMA, "Pick.Branches accepts only PickBranch, not %s",
                           wfm_kind_spec_of(wfm_node_kind(b))->name);
    }
    return WF_OK;
}

static wf_status pickbranch_prepare(wfm_load *load, wfm_node *node)
{
    if (!wfm_node_has(node, PB_TRIGGER))
        wfm_load_error(load, node, WF_E_SCHEMA, "PickBranch needs a Trigger");
    return WF_OK;
}

/* The winner is a child of the Pick: written as a reference into the saved tree. */
static wf_status pick_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    const pick_state *st = wfm_ai_state_const(ai);
    wfm_persist_write_ai(w, st->winner);
    wfm_persist_write_uint(w, st->action_started);
    return WF_OK;
}

static wf_status pick_restore(wfm_ai *ai, wfm_persist_reader *r)
{
    pick_state *st = wfm_ai_state(ai);
    st->winner = wfm_persist_read_ai(r);
    st->action_started = wfm_persist_read_uint(r) != 0;
    if (st->winner && wfm_ai_parent(st->winner) != ai)
        wfm_persist_read_fail(r, "the Pick's winner is not one of its branches");
    return WF_OK;
}

static const void *const pick_callbacks[] = {(const void *)pick_branch_done};
static const void *const pickbranch_callbacks[] = {(const void *)trigger_done,
                                                   (const void *)done_complete};

static const wfm_kind_spec pick_spec = {
    .name = "Pick",
    .category = "Activity",
    .props = pick_props,
    .prop_count = 1,
    .content_prop = "Branches",
    .state_size = sizeof(pick_state),
    .prepare = pick_prepare,
    .execute = pick_execute,
    .callbacks = pick_callbacks,
    .callback_count = 1,
    .save = pick_save,
    .restore = pick_restore,
};
static const wfm_kind_spec pickbranch_spec = {
    .name = "PickBranch",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES,
    .props = pickbranch_props,
    .prop_count = 2,
    .content_prop = "Action",
    .prepare = pickbranch_prepare,
    .execute = pickbranch_execute,
    .callbacks = pickbranch_callbacks,
    .callback_count = 2,
};

/* ---- WaitForEvent<T>: wfbridge's Receive-style activity ----------------------------------- */
/* <WaitForEvent x:TypeArguments="x:Int32" BookmarkName="approve" Result="[amount]"/> waits
 * on bookmark BookmarkName; the host's resume payload, converted to T, goes to Result. With
 * Parameters="Approver:String;Amount:Decimal" (what the converter writes for a
 * HandleExternalEvent) the payload is first bound to those parameters by the rule every verb
 * shares (wf_payload_bind, docs/formats.md "Event payloads"): Result receives the one
 * parameter's value, or with several the record of them. */
enum { WFE_NAME, WFE_RESULT, WFE_PARAMS };
static const wfm_prop_spec wfe_props[] = {
    {"BookmarkName", WFM_PROP_IN, "x:String", NULL, WFM_PROP_REQUIRED, NULL},
    {"Result", WFM_PROP_OUT, "T", NULL, 0, NULL},
    {"Parameters", WFM_PROP_LITERAL, "x:String", NULL, 0, NULL},
};

#define WFE_MAX_PARAMS 64 /* wf_payload_bind's limit */

/* The parsed Parameters of a WaitForEvent, attached to its node. */
typedef struct wfe_sig {
    size_t count;
    wf_payload_param params[WFE_MAX_PARAMS];
    char text[]; /* the attribute's text, split in place; params point into it */
} wfe_sig;

/* One "Name" or "Name:Type" of Parameters into sig; false (reported) when malformed. */
static bool wfe_param(wfm_load *load, wfm_node *node, wfe_sig *sig, char *item)
{
    char *colon = strchr(item, ':');
    if (colon)
        *colon++ = '\0';
    const wf_type *t = colon ? wf_types_find(wfm_load_types(load), colon) : NULL;
    if (!*item || (colon && !t) || sig->count == WFE_MAX_PARAMS) {
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "WaitForEvent.Parameters: '%s%s%s' is not NAME or NAME:TYPE (at most %d)",
                       item, colon ? ":" : "", colon ? colon : "", WFE_MAX_PARAMS);
        return false;
    }
    sig->params[sig->count++] = (wf_payload_param){item, t};
    return true;
}

static wf_status wfe_prepare(wfm_load *load, wfm_node *node)
{
    const wf_value *text = wfm_node_literal(node, WFE_PARAMS);
    if (text->type->kind != WF_K_STRING)
        return WF_OK;
    size_t len = strlen(wf_value_str(text));
    wfe_sig *sig = wf_calloc(1, sizeof *sig + len + 1);
    if (!sig)
        return WF_E_NOMEM;
    memcpy(sig->text, wf_value_str(text), len + 1);
    bool ok = true;
    for (char *save = NULL, *item = strtok_r(sig->text, ";", &save); ok && item;
         item = strtok_r(NULL, ";", &save))
        ok = wfe_param(load, node, sig, item);
    if (ok && sig->count == 1 && !sig->params[0].type)
        sig->params[0].type = wfm_node_type_arg(node); /* one parameter: T */
    wfm_node_set_data(node, sig, wf_free);
    return WF_OK;
}

/* The value a resumption with `payload` (NULL: null) gives Result, by the node's Parameters
 * and T. */
static wf_status wfe_payload(const wfm_node *node, const wf_value *payload, wf_value *out,
                             wf_error *err)
{
    const wfe_sig *sig = wfm_node_data(node);
    const wf_type *t = wfm_node_type_arg(node);
    wf_value none = wf_null(), bound = wf_null();
    const wf_value *v = payload ? payload : &none;
    *out = wf_null();
    if (sig) {
        wf_status st = wf_payload_bind(v, sig->params, sig->count, &bound, err);
        if (st != WF_OK)
            return st;
        v = sig->count == 1 ? wf_value_record_get(&bound, sig->params[0].name) : &bound;
        v = v ? v : &none;
    }
    wf_status st = WF_OK;
    if (t)
        st = wf_value_convert(v, t, out, err);
    else
        *out = wf_value_retain(v);
    wf_value_release(&bound);
    return st;
}

static wf_status wfe_check_resume(const wfm_ai *ai, const char *bookmark,
                                  const wf_value *payload, wf_error *err)
{
    (void)bookmark;
    wf_value v = wf_null();
    wf_status st = wfe_payload(wfm_ai_node(ai), payload, &v, err);
    wf_value_release(&v);
    return st;
}

static void wfe_resume(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)
{
    wf_value v = wf_null();
    wf_error e = WF_ERROR_INIT;
    if (wfe_payload(wfm_ai_node(ai), payload, &v, &e) != WF_OK) {
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_cast, "WaitForEvent: %s", e.message);
        return;
    }
    wf_status st = wfm_ctx_set(ctx, ai, WFE_RESULT, &v);
    wf_value_release(&v);
    if (st == WF_OK)
        wfm_ctx_complete(ctx, ai);
}

static void wfe_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wf_value name;
    if (wfm_ctx_get(ctx, ai, WFE_NAME, &name) != WF_OK)
        return;
    wf_status st = wfm_ctx_bookmark(ctx, ai, wf_value_str(&name), 0, wfe_resume);
    if (st == WF_E_STATE)
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "a bookmark named '%s' already exists",
                      wf_value_str(&name));
    else if (st == WF_E_NOMEM)
        wfm_ctx_nomem(ctx);
    else if (st != WF_OK)
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "cannot create bookmark '%s'",
                      wf_value_str(&name));
    wf_value_release(&name);
}

static const void *const wfe_callbacks[] = {(const void *)wfe_resume};

static const wfm_kind_spec wfe_spec = {
    .name = "WaitForEvent",
    .category = "Activity",
    .flags = WFM_KIND_GENERIC | WFM_KIND_CAN_IDLE,
    .props = wfe_props,
    .prop_count = 3,
    .prepare = wfe_prepare,
    .execute = wfe_execute,
    .check_resume = wfe_check_resume,
    .callbacks = wfe_callbacks,
    .callback_count = 1,
};

/* ---- registration ----------------------------------------------------------------------- */
static const wfm_kind_spec *const core_specs[] = {
    &seq_spec,     &assign_spec,  &writeline_spec,  &if_spec,  &while_spec,
    &dowhile_spec, &foreach_spec, &pfe_spec,        &par_spec, &switch_spec,
    &delay_spec,   &pick_spec,    &pickbranch_spec, &wfe_spec,
};

wf_status wfm_acts_core_register(wfm_catalogue *cat, wf_error *err)
{
    for (size_t i = 0; i < sizeof core_specs / sizeof core_specs[0]; i++) {
        wf_status st = wfm_catalogue_register(cat, core_specs[i], err);
        if (st != WF_OK)
            return st;
    }
    return WF_OK;
}

/* wfb_migrate_plan.c — where a legacy instance waits and the modern instance that waits at
 * the same point (docs/migrate.md "How a position is rebuilt"). The legacy blob is decoded
 * with the --map pair whose definition it belongs to; the converted definition is then
 * replayed from its start with the legacy values as inputs and native calls skipped (the
 * legacy instance made them already), taking the bookmarks and timers on its way
 * breadth-first until it is idle with the legacy position: the same bookmarks (named like the
 * legacy queues), as many timers, and every legacy activity that is executing and has a
 * counterpart (its DisplayName) executing too. Timers are moved to the legacy due times by
 * replaying once more with the clock shifted, and the legacy values are written into the
 * arguments and live variables the map names. */
#include "wfb_migrate_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../legacy/wfl_exec.h"
#include "../modern/wfm_migrate.h"
#include "../modern/wfm_persist.h"

void mig_names_add(mig_names *n, const char *name)
{
    if (n->n < MIG_MAX_NAMES && !mig_names_has(n, name))
        n->v[n->n++] = wf_strdup(name);
}

void mig_names_fini(mig_names *n)
{
    for (size_t i = 0; i < n->n; i++)
        wf_free(n->v[i]);
    n->n = 0;
}

bool mig_names_has(const mig_names *n, const char *name)
{
    for (size_t i = 0; i < n->n; i++)
        if (n->v[i] && strcmp(n->v[i], name) == 0)
            return true;
    return false;
}

void mig_plan_fini(mig_plan *p)
{
    wf_free(p->id);
    mig_names_fini(&p->queues);
    mig_names_fini(&p->executing);
    mig_names_fini(&p->bookmarks);
    mig_names_fini(&p->steps);
    wf_buf_fini(&p->state);
}

/* The legacy values: the root's properties, by name. */
typedef struct lvals {
    const char **names;
    wf_value *values;
    size_t count;
} lvals;

static void lvals_fini(lvals *l)
{
    for (size_t i = 0; i < l->count; i++)
        wf_value_release(&l->values[i]);
    wf_free(l->names);
    wf_free(l->values);
}

static wf_status lvals_read(wfl_exec *ex, lvals *l, wf_error *err)
{
    size_t n = wfl_exec_output_count(ex);
    l->count = 0;
    l->names = wf_calloc(n ? n : 1, sizeof *l->names);
    l->values = wf_calloc(n ? n : 1, sizeof *l->values);
    if (!l->names || !l->values)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        wf_value v = wf_null();
        if (wfl_exec_output_value(ex, i, &v, err) != WF_OK)
            return err->code;
        l->names[l->count] = wfl_exec_output_name(ex, i);
        l->values[l->count++] = v;
    }
    return WF_OK;
}

/* The modern name of legacy property `name` under the map (itself when unlisted). */
static const char *map_to(const mig_map *m, const char *name)
{
    for (size_t i = 0; i < m->pair_count; i++)
        if (strcmp(m->from[i], name) == 0)
            return m->to[i];
    return name;
}

static const wf_value *lval_for(const mig_map *m, const lvals *l, const char *modern)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(map_to(m, l->names[i]), modern) == 0)
            return &l->values[i];
    return NULL;
}

static void add_exec(void *ud, const char *name)
{
    mig_names_add(ud, name);
}

static void add_queue(void *ud, const char *name, bool is_timer)
{
    if (!is_timer && strcmp(name, "SetStateQueue") != 0) /* the state machine's own */
        mig_names_add(ud, name);
}

/* Where the legacy instance is. */
static void legacy_position(wfl_exec *ex, mig_plan *p)
{
    wfl_exec_each_queue(ex, add_queue, &p->queues);
    wfl_exec_each_executing(ex, add_exec, &p->executing);
    p->timer_count = wfl_exec_timers(ex, p->timers, MIG_MAX_NAMES);
}

/* The legacy runtime reads the clock for each Delay it starts, so the Delays one pulse starts
 * together (the rounds of a parallel Replicator) are due microseconds apart, where the replay's
 * virtual clock makes them due at one instant: intervals that differ by less than this match. */
#define MIG_TIMER_SLACK_US 1000

/* ---- replay ---------------------------------------------------------------------------------- */
typedef struct seq {
    char *step[MIG_MAX_DEPTH]; /* bookmark names; NULL: fire the earliest timer */
    size_t n;
} seq;

static void seq_fini(seq *s)
{
    for (size_t i = 0; i < s->n; i++)
        wf_free(s->step[i]);
    s->n = 0;
}

/* The values inside the legacy composites an Interop activity hosts, by activity name. */
typedef struct hosted {
    wfl_exec *ex;
    char *name[MIG_MAX_NAMES];
    lvals vals[MIG_MAX_NAMES];
    size_t count;
    size_t items[MIG_MAX_NAMES]; /* the running items of the last loop asked for */
    char unbound[128];           /* an event parameter a replay step could not give back */
    mig_names loops;             /* the loops started at their legacy items */
} hosted;

static void hosted_fini(hosted *h)
{
    for (size_t i = 0; i < h->count; i++) {
        wf_free(h->name[i]);
        lvals_fini(&h->vals[i]);
    }
    mig_names_fini(&h->loops);
}

/* A ForEach / ParallelForEach (a Replicator's conversion) starts at the items its legacy
 * Replicator runs, over the legacy list: the replay does not run the items before again. */
static bool hosted_items(void *ud, const char *activity, wfm_replay_items *out)
{
    hosted *h = ud;
    const wf_value *data = NULL;
    size_t live = 0;
    size_t n = wfl_exec_replicator_items(h->ex, activity, &data, h->items, MIG_MAX_NAMES, &live);
    if (live != 1 || n > MIG_MAX_NAMES || !data || data->type->kind != WF_K_LIST)
        return false;
    out->values = data;
    out->running = h->items;
    out->running_count = n;
    mig_names_add(&h->loops, activity);
    return true;
}

static bool hosted_values(void *ud, const char *activity, wfm_replay_values *out)
{
    hosted *h = ud;
    size_t i = 0;
    while (i < h->count && strcmp(h->name[i], activity) != 0)
        i++;
    if (i == h->count) {
        wfl_exec *body = wfl_exec_hosted(h->ex, activity);
        wf_error e = WF_ERROR_INIT;
        if (!body || h->count == MIG_MAX_NAMES)
            return false;
        h->name[i] = wf_strdup(activity);
        h->count++;
        if (lvals_read(body, &h->vals[i], &e) != WF_OK)
            return false;
    }
    out->names = h->vals[i].names;
    out->values = h->vals[i].values;
    out->count = h->vals[i].count;
    return true;
}

typedef struct replay_env {
    mig_ctx *c;
    mig_plan *p;
    const lvals *lv;
    int64_t start_us;
    hosted *h;
} replay_env;

static wf_status set_inputs(const replay_env *r, wfm_instance *inst, wf_error *err)
{
    const wfm_definition *def = r->p->map->mdef;
    for (size_t i = 0; i < wfm_definition_arg_count(def); i++) {
        const char *name = wfm_definition_arg_name(def, i);
        const wf_value *v = lval_for(r->p->map, r->lv, name);
        size_t n = 0;
        if (!v || v->type->kind == WF_K_NULL)
            continue;
        /* an Out argument starts with the legacy value too: what the legacy side computed
         * before the position (a native call the replay skips) flows on from it */
        wf_status rc = wfm_definition_arg_dir(def, i) == WFM_PROP_OUT
                           ? wfm_instance_assign(inst, name, v, &n, err)
                           : wfm_instance_set_input(inst, name, v, err);
        if (rc != WF_OK)
            return rc;
    }
    return WF_OK;
}

/* Resume bookmark `name` with the payload the legacy event carried, read back from the
 * values its ParameterBindings wrote, so that a branch on it (an IfElse on the amount the
 * event brought) goes the legacy way. A parameter no binding kept stays null: the first one is
 * noted in r->unbound for the reason, should the path not lead to the position. */
static wf_status resume_as_legacy(const replay_env *r, wfm_instance *inst, const char *name,
                                  wf_error *err)
{
    wf_value payload = wf_null();
    const char *unbound = NULL;
    bool found = false;
    wf_status rc = wfl_exec_event_payload(r->h->ex, name, &payload, &found, &unbound, err);
    if (rc == WF_OK && found && unbound && !r->h->unbound[0])
        snprintf(r->h->unbound, sizeof r->h->unbound, "%s", unbound);
    if (rc == WF_OK)
        rc = wfm_instance_resume(inst, name, found ? &payload : NULL, err);
    wf_value_release(&payload);
    return rc;
}

/* Run the converted definition from its start through the steps of s; *inst is Idle at the
 * end, or NULL (with why) when the path does not lead to an idle instance. */
static wf_status replay(const replay_env *r, const seq *s, int64_t shift, wfm_instance **out,
                        char *why, size_t why_size, wf_error *err)
{
    *out = NULL;
    wfm_instance *inst = NULL;
    r->c->now_us = r->start_us + shift;
    r->h->unbound[0] = '\0';
    wf_status rc = wfm_instance_create(r->c->rt, r->p->map->mdef, &inst, err);
    if (rc != WF_OK)
        return rc;
    wfm_instance_set_id(inst, r->p->id);
    wfm_instance_set_replay(inst, true);
    wfm_instance_set_replay_values(inst, hosted_values, r->h);
    wfm_instance_set_replay_items(inst, hosted_items);
    rc = set_inputs(r, inst, err);
    if (rc == WF_OK)
        rc = wfm_instance_run(inst, err);
    for (size_t i = 0; rc == WF_OK && i < s->n; i++) {
        if (wfm_instance_state_get(inst) != WFM_INSTANCE_IDLE)
            break;
        if (s->step[i]) {
            rc = resume_as_legacy(r, inst, s->step[i], err);
        } else {
            int64_t due = wfm_instance_next_timer_us(inst);
            if (due == INT64_MAX)
                break;
            if (due > r->c->now_us)
                r->c->now_us = due;
        }
        if (rc == WF_OK)
            rc = wfm_instance_run(inst, err);
    }
    if (rc != WF_OK || wfm_instance_state_get(inst) != WFM_INSTANCE_IDLE) {
        if (rc == WF_OK || rc == WF_E_TYPE || rc == WF_E_LIMIT)
            snprintf(why, why_size, "the converted workflow ends %s on the way",
                     wfm_instance_state_name(wfm_instance_state_get(inst)));
        wfm_instance_destroy(inst);
        return rc == WF_E_NOMEM ? rc : WF_OK;
    }
    *out = inst;
    return WF_OK;
}

typedef struct exec_seen {
    mig_names names;
    bool interop;
    const mig_names *legacy;
} exec_seen;

static void add_modern_exec(void *ud, const char *name, const char *kind)
{
    exec_seen *e = ud;
    mig_names_add(&e->names, name);
    if (strcmp(kind, "Interop") == 0 && mig_names_has(e->legacy, name))
        e->interop = true;
}

/* Is the idle instance at the legacy position? *interop: inside an Interop activity. */
static bool at_position(const mig_plan *p, wfm_instance *inst, bool *interop)
{
    size_t bc = wfm_instance_bookmark_count(inst);
    if (bc != p->queues.n)
        return false;
    for (size_t i = 0; i < bc; i++)
        if (!mig_names_has(&p->queues, wfm_instance_bookmark_name(inst, i)))
            return false;
    int64_t due[MIG_MAX_NAMES];
    if (wfm_instance_timers(inst, due, MIG_MAX_NAMES) != p->timer_count)
        return false;
    exec_seen e = {{{0}, 0}, false, &p->executing};
    wfm_instance_each_executing(inst, add_modern_exec, &e);
    bool same = true;
    const wfm_definition *def = p->map->mdef;
    for (size_t i = 0; i < p->executing.n && same; i++)
        if (wfm_definition_has_display_name(def, p->executing.v[i]) &&
            !mig_names_has(&e.names, p->executing.v[i]))
            same = false;
    *interop = e.interop;
    mig_names_fini(&e.names);
    return same;
}

/* Note in hint (once) a replay that ended when it resumed a bookmark: the path to the
 * position may need an event's parameter that the legacy values do not give back. */
static void note_payload_hint(const seq *s, const char *why, const char *unbound, char *hint,
                              size_t size)
{
    if (hint[0] || !why[0] || s->n == 0 || !s->step[s->n - 1])
        return;
    if (unbound[0])
        snprintf(hint, size, "; resuming '%.60s' needs the event's '%.40s', which no "
                             "ParameterBinding of the legacy instance kept: %.80s",
                 s->step[s->n - 1], unbound, why);
    else
        snprintf(hint, size, "; resuming '%.60s' with the event's payload the legacy values "
                             "give back, %.80s",
                 s->step[s->n - 1], why);
}

/* Breadth-first over the steps until a replay is at the position: *found gets its steps and
 * *at the instance there (destroy it). */
static wf_status search(const replay_env *r, seq *found, wfm_instance **at, bool *ok,
                        bool *interop, char *hint, size_t hint_size, wf_error *err)
{
    seq *queue = wf_calloc(MIG_MAX_TRIES, sizeof *queue);
    if (!queue)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    size_t head = 0, tail = 1;
    wf_status rc = WF_OK;
    char why[160] = "";
    *ok = false;
    while (head < tail && !*ok && rc == WF_OK) {
        seq *s = &queue[head++];
        wfm_instance *inst = NULL;
        why[0] = '\0';
        rc = replay(r, s, 0, &inst, why, sizeof why, err);
        if (!inst) {
            note_payload_hint(s, why, r->h->unbound, hint, hint_size);
            continue;
        }
        if (at_position(r->p, inst, interop)) {
            *ok = true;
            *found = *s;
            s->n = 0;
            *at = inst;
            inst = NULL;
        } else if (s->n < MIG_MAX_DEPTH) {
            size_t bc = wfm_instance_bookmark_count(inst);
            bool timer = wfm_instance_next_timer_us(inst) != INT64_MAX;
            for (size_t i = 0; i <= bc && tail < MIG_MAX_TRIES; i++) {
                if (i == bc && !timer)
                    break;
                seq *n = &queue[tail++];
                for (size_t k = 0; k < s->n; k++)
                    n->step[k] = s->step[k] ? wf_strdup(s->step[k]) : NULL;
                n->step[s->n] = i < bc ? wf_strdup(wfm_instance_bookmark_name(inst, i)) : NULL;
                n->n = s->n + 1;
            }
        }
        wfm_instance_destroy(inst);
    }
    for (size_t i = 0; i < tail; i++)
        seq_fini(&queue[i]);
    wf_free(queue);
    return rc;
}

/* ---- the plan ---------------------------------------------------------------------------------- */
static void position_text(const mig_plan *p, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "waiting on");
    for (size_t i = 0; i < p->queues.n; i++)
        used += (size_t)snprintf(buf + used, used < size ? size - used : 0, " '%s'",
                                 p->queues.v[i]);
    if (p->timer_count)
        snprintf(buf + used, used < size ? size - used : 0, " %s%zu timer(s)",
                 p->queues.n ? "and " : "", p->timer_count);
}

static void not_movable(mig_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void not_movable(mig_plan *p, const char *fmt, ...)
{
    p->verdict = MIG_NOT_MOVABLE;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->reason, sizeof p->reason, fmt, ap);
    va_end(ap);
}

/* Write the values the map gives to other activities' properties (a variable of the scope
 * the activity was in) from the live legacy activities: false (not movable) when one does
 * not fit. An activity with no live instance (its round ended) has nothing to carry. */
static bool carry_activity_values(const replay_env *r, wfm_instance *inst, wf_error *err)
{
    mig_plan *p = r->p;
    const mig_map *m = p->map;
    for (size_t i = 0; i < m->act_count; i++) {
        wf_value v = wf_null();
        bool found = false;
        size_t n = 0;
        wf_status rc = wfl_exec_activity_value(r->h->ex, m->act_owner[i], m->act_from[i], &v,
                                               &found, err);
        if (rc == WF_OK && found && v.type->kind != WF_K_NULL)
            rc = wfm_instance_assign(inst, m->act_to[i], &v, &n, err);
        wf_value_release(&v);
        if (rc != WF_OK) {
            not_movable(p, "value of '%s.%s' does not fit the converted workflow",
                        m->act_owner[i], m->act_from[i]);
            return false;
        }
        p->values_carried += n > 0;
    }
    return true;
}

/* Write the legacy values into the found instance and encode it. */
static wf_status finish(const replay_env *r, wfm_instance *inst, wf_error *err)
{
    mig_plan *p = r->p;
    for (size_t i = 0; i < r->lv->count; i++) {
        size_t n = 0;
        if (wfm_instance_assign(inst, map_to(p->map, r->lv->names[i]), &r->lv->values[i], &n,
                                err) != WF_OK) {
            not_movable(p, "value of '%s' does not fit the converted workflow", r->lv->names[i]);
            return WF_OK;
        }
        p->values_carried += n > 0;
    }
    if (!carry_activity_values(r, inst, err))
        return WF_OK;
    wf_status rc = wfm_instance_save(inst, &p->state, err);
    if (rc != WF_OK) {
        char msg[160];
        snprintf(msg, sizeof msg, "%.150s", err->message);
        not_movable(p, "the modern instance cannot be saved there: %s", msg);
        return rc == WF_E_NOMEM ? rc : WF_OK;
    }
    for (size_t i = 0; i < wfm_instance_bookmark_count(inst); i++)
        mig_names_add(&p->bookmarks, wfm_instance_bookmark_name(inst, i));
    int64_t due = wfm_instance_next_timer_us(inst);
    p->next_timer_us = due == INT64_MAX ? 0 : due;
    return WF_OK;
}

typedef struct loop_seen {
    const mig_names *recovered;
    const char *loop;
} loop_seen;

static void note_foreach(void *ud, const char *name, const char *kind)
{
    loop_seen *l = ud;
    if (!l->loop && (strcmp(kind, "ForEach") == 0 || strcmp(kind, "ParallelForEach") == 0) &&
        !mig_names_has(l->recovered, name))
        l->loop = name;
}

/* The first ForEach / ParallelForEach the instance waits inside that the replay started at its
 * first item (NULL: none): no single legacy Replicator of that name runs (it is inside the
 * parallel rounds of another loop, or hosted), so the item is not known. */
static const char *inside_foreach(wfm_instance *inst, const mig_names *recovered)
{
    loop_seen l = {recovered, NULL};
    wfm_instance_each_executing(inst, note_foreach, &l);
    return l.loop;
}

/* The found position with its timers on the legacy due times: the found steps replayed again
 * with the clock shifted when they are not (inst is taken over). */
static wf_status place(const replay_env *r, const seq *s, wfm_instance *inst, bool interop,
                       wf_error *err)
{
    mig_plan *p = r->p;
    char why[160] = "";
    wf_status rc = WF_OK;
    if (p->timer_count) {
        int64_t due[MIG_MAX_NAMES];
        wfm_instance_timers(inst, due, MIG_MAX_NAMES);
        int64_t shift = p->timers[0] - due[0];
        for (size_t i = 1; i < p->timer_count; i++)
            if (llabs(p->timers[i] - due[i] - shift) > MIG_TIMER_SLACK_US) {
                wfm_instance_destroy(inst);
                not_movable(p, "%s", "its timers are not due at the same intervals as the "
                                     "converted workflow's");
                return WF_OK;
            }
        if (shift) {
            wfm_instance_destroy(inst);
            inst = NULL;
            rc = replay(r, s, shift, &inst, why, sizeof why, err);
        }
    }
    if (rc == WF_OK && inst && p->timer_count) /* each on its legacy due time, to the µs */
        wfm_instance_place_timers(inst, p->timers, p->timer_count);
    bool again = false;
    if (rc != WF_OK || !inst || !at_position(p, inst, &again)) {
        wfm_instance_destroy(inst);
        if (rc == WF_OK)
            not_movable(p, "%s", "the replay does not come back to the same position");
        return rc;
    }
    const char *loop = inside_foreach(inst, &r->h->loops);
    if (loop) {
        not_movable(p, "it waits inside the ForEach '%.100s', whose item the replay does not "
                       "recover (no single legacy Replicator of that name runs, or its rounds do "
                       "not record their item; it would start again at the first one)",
                    loop);
        wfm_instance_destroy(inst);
        return WF_OK;
    }
    p->verdict = interop ? MIG_INTEROP : MIG_MOVABLE;
    for (size_t i = 0; i < s->n; i++) {
        char step[300];
        if (s->step[i])
            snprintf(step, sizeof step, "bookmark %s", s->step[i]);
        else
            snprintf(step, sizeof step, "timer");
        mig_names_add(&p->steps, step);
    }
    rc = finish(r, inst, err);
    wfm_instance_destroy(inst);
    return rc;
}

static wf_status plan_exec(mig_ctx *c, mig_plan *p, wfl_exec *ex, wf_error *err)
{
    legacy_position(ex, p);
    if (wfl_exec_state_get(ex) != WFL_EXEC_IDLE) {
        not_movable(p, "it is %s, not waiting", wfl_exec_state_name(wfl_exec_state_get(ex)));
        return WF_OK;
    }
    if (strlen(p->id) != 32 || strspn(p->id, "0123456789abcdef") != 32) {
        not_movable(p, "its id '%s' is not 32 hex digits, which a modern store needs", p->id);
        return WF_OK;
    }
    lvals lv = {0};
    wf_status rc = lvals_read(ex, &lv, err);
    hosted h = {0};
    h.ex = ex;
    replay_env r = {c, p, &lv, c->now_us, &h};
    seq found = {{0}, 0};
    wfm_instance *at = NULL;
    bool ok = false, interop = false;
    char hint[320] = "";
    if (rc == WF_OK)
        rc = search(&r, &found, &at, &ok, &interop, hint, sizeof hint, err);
    if (rc == WF_OK && !ok) {
        char pos[200];
        position_text(p, pos, sizeof pos);
        not_movable(p, "the converted workflow has no matching position (%s)%s", pos, hint);
    } else if (rc == WF_OK) {
        rc = place(&r, &found, at, interop, err);
        at = NULL;
    }
    wfm_instance_destroy(at);
    seq_fini(&found);
    lvals_fini(&lv);
    hosted_fini(&h);
    return rc;
}

wf_status mig_plan_instance(mig_ctx *c, mig_plan *p, const void *blob, size_t len,
                            wf_error *err)
{
    wf_error first = WF_ERROR_INIT;
    for (size_t i = 0; i < c->map_count; i++) {
        wfl_exec *ex = NULL;
        wf_error e = WF_ERROR_INIT;
        wfl_exec_opts o = WFL_EXEC_OPTS_INIT;
        if (wfl_exec_restore(c->maps[i].ldef, &o, blob, len, &ex, &e) != WF_OK) {
            if (e.code == WF_E_NOMEM)
                return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
            if (first.code == WF_OK)
                first = e;
            continue;
        }
        p->map = &c->maps[i];
        wf_status rc = plan_exec(c, p, ex, err);
        wfl_exec_destroy(ex);
        return rc;
    }
    return wf_error_set(err, first.code ? first.code : WF_E_CORRUPT, NULL,
                        "instance '%s' belongs to none of the --map definitions (%s)", p->id,
                        first.message);
}

/* wfl_exec_position.c — where an idle legacy instance is (wfl_exec.h "Position"): its
 * executing activities, loop clones included, the queues and timers it waits on, and the
 * state of a custom composite activity it waits inside; read by `wfbridge migrate-instances`
 * to find the matching point of the converted definition. A composite's body runs on a
 * nested executor: everything here looks inside it too. */
#include "wfl_exec_int.h"

#include <stdlib.h>
#include <string.h>

/* Call fn for every executing activity under act (act included), parents first. */
typedef void (*act_fn)(void *ud, wfl_act *act);

static void walk(wfl_act *act, act_fn fn, void *ud)
{
    if (wfl_act_status(act) != WFL_ST_EXECUTING)
        return;
    fn(ud, act);
    for (size_t i = 0, n = wfl_act_child_count(act); i < n; i++) {
        wfl_act *c = wfl_act_child(act, i);
        if (c)
            walk(c, fn, ud);
    }
    for (size_t i = 0, n = wfl_act_context_count(act); i < n; i++)
        walk(wfl_act_context_at(act, i), fn, ud);
}

/* The nested executor of a composite activity (NULL for any other). */
static wfl_exec *nested(wfl_act *act)
{
    const xact *x = wfl_act_exec(act);
    return x && wfl_act_type(act)->composite ? x->nested : NULL;
}

typedef struct names_walk {
    wfl_name_fn fn;
    void *ud;
} names_walk;

static void name_of(void *ud, wfl_act *act)
{
    names_walk *w = ud;
    w->fn(w->ud, wfl_act_name(act));
    wfl_exec *inner = nested(act);
    if (inner)
        wfl_exec_each_executing(inner, w->fn, w->ud);
}

void wfl_exec_each_executing(wfl_exec *ex, wfl_name_fn fn, void *ud)
{
    names_walk w = {fn, ud};
    if (ex->root)
        walk(ex->root, name_of, &w);
}

typedef struct queue_walk {
    wfl_queue_fn fn;
    void *ud;
} queue_walk;

static void queues_of(void *ud, wfl_act *act)
{
    wfl_exec *inner = nested(act);
    if (inner) {
        queue_walk *w = ud;
        wfl_exec_each_queue(inner, w->fn, w->ud);
    }
}

void wfl_exec_each_queue(wfl_exec *ex, wfl_queue_fn fn, void *ud)
{
    for (size_t i = 0; i < ex->queue_count; i++)
        if (ex->queues[i]->sub_count)
            fn(ud, ex->queues[i]->name, ex->queues[i]->is_timer);
    queue_walk w = {fn, ud};
    if (ex->root)
        walk(ex->root, queues_of, &w);
}

static int due_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* A composite's body timers are mirrored by a timer of its own in the outer executor
 * ("timer:NAME"), so the outer timers are all of them. */
size_t wfl_exec_timers(const wfl_exec *ex, int64_t *due, size_t max)
{
    size_t n = ex->timer_count;
    for (size_t i = 0; i < n && i < max; i++)
        due[i] = ex->timers[i].due_us;
    if (n <= max)
        qsort(due, n, sizeof *due, due_cmp);
    return n;
}

typedef struct hosted_find {
    const char *name;
    wfl_exec *found;
} hosted_find;

static void find_hosted(void *ud, wfl_act *act)
{
    hosted_find *h = ud;
    if (!h->found && strcmp(wfl_act_name(act), h->name) == 0)
        h->found = nested(act);
}

wfl_exec *wfl_exec_hosted(wfl_exec *ex, const char *activity)
{
    hosted_find h = {activity, NULL};
    if (ex->root)
        walk(ex->root, find_hosted, &h);
    return h.found;
}

wf_status wfl_exec_put(wfl_exec *ex, const char *name, const wf_value *value, wf_error *err)
{
    return wfl_act_set_by_name(ex->root, name, value, err);
}

/* The first activity under act (act included) that matches key, the clones of its running
 * loop rounds before its templates (which never run); inside executing activities only, or
 * (every_status) anywhere. */
typedef bool (*act_match)(wfl_act *act, const char *key);

static wfl_act *find_first(wfl_act *act, act_match match, const char *key, bool every_status)
{
    if (match(act, key))
        return act;
    if (!every_status && wfl_act_status(act) != WFL_ST_EXECUTING)
        return NULL;
    wfl_act *found = NULL;
    for (size_t i = 0, n = wfl_act_context_count(act); i < n && !found; i++)
        found = find_first(wfl_act_context_at(act, i), match, key, every_status);
    for (size_t i = 0, n = wfl_act_child_count(act); i < n && !found; i++)
        if (wfl_act_child(act, i))
            found = find_first(wfl_act_child(act, i), match, key, every_status);
    return found;
}

static bool named(wfl_act *act, const char *name)
{
    return strcmp(wfl_act_name(act), name) == 0;
}

/* The live activity named `name` under act: act itself, or inside it while it executes. */
static wfl_act *find_live(wfl_act *act, const char *name)
{
    return find_first(act, named, name, false);
}

wf_status wfl_exec_activity_value(wfl_exec *ex, const char *activity, const char *prop,
                                  wf_value *out, bool *found, wf_error *err)
{
    wfl_act *act = ex->root ? find_live(ex->root, activity) : NULL;
    *found = act != NULL;
    return act ? wfl_act_get_by_name(act, prop, out, err) : WF_OK;
}

typedef struct rep_find {
    const char *name;
    wfl_act *first;
    size_t live;
} rep_find;

static void find_replicator(void *ud, wfl_act *act)
{
    rep_find *r = ud;
    if (wfl_act_type(act)->kind == WFL_KIND_REPLICATOR && strcmp(wfl_act_name(act), r->name) == 0
        && r->live++ == 0)
        r->first = act;
}

/* A clone's xact.aux is its data index, unless the clone's root keeps its own there. */
static bool clone_keeps_index(const wfl_act *clone)
{
    wfl_kind k = wfl_act_type(clone)->kind;
    return k != WFL_KIND_REPLICATOR && k != WFL_KIND_RECEIVE;
}

static int index_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

size_t wfl_exec_replicator_items(wfl_exec *ex, const char *activity, const wf_value **data,
                                 size_t *idx, size_t max, size_t *live)
{
    rep_find r = {activity, NULL, 0};
    if (ex->root)
        walk(ex->root, find_replicator, &r);
    *live = r.live;
    *data = r.first ? &((const xact *)wfl_act_exec(r.first))->val : NULL;
    size_t n = 0;
    for (size_t i = 0, c = r.first ? wfl_act_context_count(r.first) : 0; i < c; i++) {
        wfl_act *clone = wfl_act_context_at(r.first, i);
        const xact *cx = wfl_act_exec(clone);
        if (!cx || wfl_act_status(clone) != WFL_ST_EXECUTING)
            continue;
        if (!clone_keeps_index(clone)) {
            *data = NULL;
            return 0;
        }
        if (n++ < max)
            idx[n - 1] = (size_t)cx->aux;
    }
    qsort(idx, n < max ? n : max, sizeof *idx, index_cmp);
    return n;
}

static bool waits_on(wfl_act *act, const char *queue)
{
    char name[300];
    if (wfl_act_type(act)->kind != WFL_KIND_HANDLE_EXTERNAL_EVENT)
        return false;
    wfl__event_queue_name(act, name, sizeof name);
    return strcmp(name, queue) == 0;
}

wf_status wfl_exec_event_payload(wfl_exec *ex, const char *queue, wf_value *out, bool *found,
                                 const char **unbound, wf_error *err)
{
    /* the one in the running round of its loops (what that round's bindings wrote), else the
     * definition's */
    wfl_act *hee = ex->root ? find_first(ex->root, waits_on, queue, true) : NULL;
    *out = wf_null();
    *unbound = NULL;
    *found = hee != NULL;
    return hee ? wfl__hee_payload(hee, out, unbound, err) : WF_OK;
}

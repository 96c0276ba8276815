/* wfl_act_composite.c — a composite type-library activity (Definition= XOML) used inside a
 * XOML workflow: its body runs on a nested executor over the body's own definition, from fresh
 * state on each execution. The activity's properties are copied into the body's root when it
 * starts (not the Out ones) and back when it finishes (not the In ones; also on a fault or
 * cancellation), as a native activity's are read and written; the queues the body waits
 * on become queues of the outer instance, named alike, that the activity subscribes to, and
 * its earliest timer a timer of the outer instance. Faults, termination, cancellation,
 * persistence points and the trace pass through (docs/formats.md "Type library"). */
#include "wfl_exec_int.h"

#include <stdio.h>
#include <string.h>

static bool is_final_state(wfl_exec_state s)
{
    return s == WFL_EXEC_CLOSED || s == WFL_EXEC_CANCELED || s == WFL_EXEC_FAULTED ||
           s == WFL_EXEC_TERMINATED;
}

static wf_status nested_persist(void *ud, wfl_exec *child, wf_error *err)
{
    (void)err;
    wfl_exec_state s = wfl_exec_state_get(child);
    if (s == WFL_EXEC_IDLE || s == WFL_EXEC_CREATED) /* not the body's own close */
        wfl__request_persist(ud);
    return WF_OK;
}

wfl_exec_opts wfl__composite_opts(wfl_exec *ex)
{
    wfl_exec_opts o = ex->opts;
    o.instance_id = ex->instance_id;
    o.persist = nested_persist;
    o.persist_ud = ex;
    return o;
}

/* The outer queue the composite's own timer uses. */
static void timer_queue_name(const wfl_act *act, char *buf, size_t size)
{
    uint32_t ctx = wfl_act_context_id(act);
    if (ctx)
        snprintf(buf, size, "timer:%s#%u", wfl_act_name(act), (unsigned)ctx);
    else
        snprintf(buf, size, "timer:%s", wfl_act_name(act));
}

static bool subscribed(const xqueue *q, const wfl_act *act)
{
    for (size_t i = 0; i < q->sub_count; i++)
        if (q->subs[i] == act)
            return true;
    return false;
}

static bool child_waits_on(wfl_exec *child, const char *name)
{
    if (!child || is_final_state(wfl_exec_state_get(child)))
        return false;
    for (size_t i = 0; i < wfl_exec_queue_count(child); i++)
        if (!wfl_exec_queue_is_timer(child, i) && strcmp(wfl_exec_queue_name(child, i), name) == 0)
            return true;
    return false;
}

/* Unsubscribe from the outer queues the body no longer waits on (all of them when it has
 * finished; the timer queue too unless `keep_timer`), deleting those nobody waits on. */
static void drop_waits(wfl_exec *ex, wfl_act *act, wfl_exec *child, bool keep_timer)
{
    char tname[300];
    timer_queue_name(act, tname, sizeof tname);
    for (size_t i = ex->queue_count; i-- > 0;) {
        xqueue *q = ex->queues[i];
        if (!subscribed(q, act))
            continue;
        bool timer = strcmp(q->name, tname) == 0;
        if (timer ? keep_timer : child_waits_on(child, q->name))
            continue;
        wfl__queue_unsubscribe(ex, q, act);
        if (!q->sub_count)
            wfl__queue_delete(ex, q->id);
    }
}

/* The body waits: subscribe to its queues, arm its earliest timer (once per due time). */
static bool sync_waits(wfl_exec *ex, wfl_act *act, xact *x)
{
    wfl_exec *child = x->nested;
    drop_waits(ex, act, child, true);
    for (size_t i = 0; i < wfl_exec_queue_count(child); i++) {
        if (wfl_exec_queue_is_timer(child, i))
            continue;
        xqueue *q = wfl__queue_create(ex, wfl_exec_queue_name(child, i), false);
        if (!q || !wfl__queue_subscribe(ex, q, act))
            return false;
    }
    int64_t due;
    if (!wfl_exec_next_timer(child, &due))
        return true;
    if (x->val.type->kind == WF_K_INT64 && x->val.u.i64 == due)
        return true;
    char tname[300];
    timer_queue_name(act, tname, sizeof tname);
    xqueue *q = wfl__queue_create(ex, tname, true);
    if (!q || !wfl__queue_subscribe(ex, q, act) || !wfl__timer_add(ex, due, q->id, 0))
        return false;
    wf_value_release(&x->val);
    x->val = wf_int64(due);
    return true;
}

/* The body's root properties back into the activity's (through its binds), but In ones. */
static void copy_out(wfl_exec *ex, wfl_act *act, wfl_exec *child)
{
    const wfl_tl_activity *t = wfl_act_type(act)->custom;
    for (size_t i = 0; i < wfl_tl_activity_prop_count(t); i++) {
        if (wfl_tl_activity_prop(t, i)->dir == WFL_TL_IN)
            continue;
        const char *name = wfl_tl_activity_prop(t, i)->name;
        wf_value v = wf_null();
        wf_error err = WF_ERROR_INIT;
        wf_status rc = wfl_exec_output(child, name, &v, &err);
        if (rc == WF_OK)
            rc = wfl_act_set_by_name(act, name, &v, &err);
        wf_value_release(&v);
        if (rc == WF_E_NOMEM) {
            wfl__fail_nomem(ex);
            return;
        }
    }
}

static void finish_child(xact *x)
{
    wfl_exec_destroy(x->nested);
    x->nested = NULL;
    wf_value_release(&x->val);
    x->val = wf_null();
}

/* After every pulse of the body: wait on, or end the way the body ended. */
static wfl_status after_child(wfl_exec *ex, wfl_act *act, xact *x, wf_status rc,
                              wfl_exec_state state, const wf_error *err)
{
    if (rc != WF_OK) {
        wfl__fail(ex, err);
        return WFL_ST_EXECUTING;
    }
    if (state == WFL_EXEC_IDLE) {
        if (!sync_waits(ex, act, x))
            wfl__fail_nomem(ex);
        return WFL_ST_EXECUTING;
    }
    wfl_exec *child = x->nested;
    copy_out(ex, act, child);
    drop_waits(ex, act, NULL, false);
    wf_value exc = wf_value_retain(wfl_exec_exception(child));
    wfl_status st = WFL_ST_CLOSED;
    if (state == WFL_EXEC_FAULTED) {
        wfl__throw(ex, act, &exc);
        st = WFL_ST_FAULTING;
    } else if (state == WFL_EXEC_TERMINATED) { /* WF3: the whole instance terminates */
        wfl__terminate(ex, act, wf_is_null(&exc) ? "" : wf_value_exc_message(&exc));
        st = WFL_ST_EXECUTING;
    } else if (state == WFL_EXEC_SUSPENDED) {
        wf_error e = WF_ERROR_INIT;
        wf_error_set(&e, WF_E_UNSUPPORTED, &wfl_act_node(act)->loc,
                     "SuspendActivity inside the composite '%s' is not supported",
                     wfl_act_name(act));
        st = wfl__throw_error(ex, act, &e, NULL);
    }
    wf_value_release(&exc);
    finish_child(x);
    return st;
}

wfl_status wfl__composite_execute(wfl_exec *ex, wfl_act *act)
{
    const wfl_type *t = wfl_act_type(act);
    xact *x = wfl__state(ex, act);
    if (!x)
        return WFL_ST_EXECUTING;
    finish_child(x); /* a state re-entered: fresh again */
    wfl_exec_opts o = wfl__composite_opts(ex);
    wf_error err = WF_ERROR_INIT;
    if (wfl_exec_create(t->composite, NULL, &o, &x->nested, &err) != WF_OK) {
        wfl__fail(ex, &err);
        return WFL_ST_EXECUTING;
    }
    for (size_t i = 0; i < wfl_tl_activity_prop_count(t->custom); i++) {
        if (wfl_tl_activity_prop(t->custom, i)->dir == WFL_TL_OUT)
            continue; /* the body starts from the property's default */
        const char *name = wfl_tl_activity_prop(t->custom, i)->name;
        wf_value v = wf_null();
        wf_status rc = wfl_act_get_by_name(act, name, &v, &err);
        if (rc == WF_OK)
            rc = wfl_exec_set_input(x->nested, name, &v, &err);
        wf_value_release(&v);
        if (rc != WF_OK) {
            finish_child(x);
            return wfl__throw_error(ex, act, &err, NULL);
        }
    }
    wfl_exec_state state;
    wf_status rc = wfl_exec_run(x->nested, &state, &err);
    return after_child(ex, act, x, rc, state, &err);
}

void wfl__composite_queue_item(wfl_exec *ex, wfl_act *act, xqueue *q)
{
    xact *x = wfl_act_exec(act);
    if (!x || !x->nested)
        return;
    wf_value item = wf_null();
    if (!wfl__queue_dequeue(q, &item))
        return;
    wf_error err = WF_ERROR_INIT;
    wfl_exec_state state = WFL_EXEC_IDLE;
    wf_status rc;
    if (q->is_timer) {
        wf_value_release(&x->val);
        x->val = wf_null();
        rc = wfl_exec_fire_timers(x->nested, wfl__now(ex), &state, &err);
    } else {
        char name[512];
        snprintf(name, sizeof name, "%s", q->name); /* the outer queue may go meanwhile */
        rc = wfl_exec_deliver(x->nested, name, &item, &state, &err);
    }
    wf_value_release(&item);
    if (after_child(ex, act, x, rc, state, &err) == WFL_ST_CLOSED)
        wfl__close(ex, act);
}

/* Leaving Executing (canceled, or faulting): the body is canceled so its cancellation
 * handlers run, then its properties come back. */
void wfl__composite_stop(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    if (!x || !x->nested)
        return;
    if (!is_final_state(wfl_exec_state_get(x->nested))) {
        wfl_exec_state state;
        wf_error err = WF_ERROR_INIT;
        if (wfl_exec_cancel(x->nested, &state, &err) != WF_OK) {
            wfl__fail(ex, &err);
            return;
        }
    }
    copy_out(ex, act, x->nested);
    drop_waits(ex, act, NULL, false);
    finish_child(x);
}

/* wfl_act_event.c — activities built on workflow queues: HandleExternalEvent (queue
 * "Interface.Event", payload written through ParameterBindings), Delay (a timer feeding its own
 * queue), Listen (first event wins, the losers' subscriptions are removed and they never start)
 * and CallExternalMethod (docs/semantics.md §3, §4 "Queues and events"). */
#include "wfl_exec_int.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

bool wfl__is_event_act(const wfl_act *act)
{
    wfl_kind k = wfl_act_type(act)->kind;
    return k == WFL_KIND_DELAY || k == WFL_KIND_HANDLE_EXTERNAL_EVENT || k == WFL_KIND_RECEIVE;
}

static const wfl_tl_service *service_of(const wfl_act *act, const char **iface)
{
    const wfl_pval *pv = wfl__pval(act, "InterfaceType");
    *iface = pv && pv->kind == WFL_PV_TYPE ? pv->u.type.name : "";
    const wfl_tl_service *s = pv && pv->kind == WFL_PV_TYPE ? pv->u.type.service : NULL;
    if (s)
        *iface = wfl_tl_service_name(s);
    return s;
}

static const char *literal_str(const wfl_act *act, const char *dp_name)
{
    const wfl_pval *pv = wfl__pval(act, dp_name);
    return pv && pv->kind == WFL_PV_LITERAL ? wf_value_str(&pv->u.literal) : "";
}

/* The queue name an event activity waits on. */
static void event_queue_name(const wfl_act *act, char *buf, size_t size)
{
    if (wfl_act_type(act)->kind == WFL_KIND_DELAY) {
        uint32_t ctx = wfl_act_context_id(act);
        if (ctx)
            snprintf(buf, size, "timer:%s#%u", wfl_act_name(act), (unsigned)ctx);
        else
            snprintf(buf, size, "timer:%s", wfl_act_name(act));
        return;
    }
    if (wfl_act_type(act)->kind == WFL_KIND_RECEIVE) {
        wfl__receive_queue_name(act, buf, size);
        return;
    }
    const char *iface;
    service_of(act, &iface);
    snprintf(buf, size, "%s.%s", iface, literal_str(act, "EventName"));
}

/* A Delay's timeout after its InitializeTimeoutDuration handler. */
static bool delay_timeout(wfl_exec *ex, wfl_act *act, int64_t *us)
{
    if (!wfl__raise_event(ex, act, "InitializeTimeoutDuration"))
        return false;
    wf_value v = wf_null();
    wf_error err = WF_ERROR_INIT;
    if (wfl_act_get_by_name(act, "TimeoutDuration", &v, &err) != WF_OK) {
        wfl__throw_error(ex, act, &err, NULL);
        return false;
    }
    *us = v.type->kind == WF_K_TIMESPAN ? v.u.i64 : 0;
    wf_value_release(&v);
    return true;
}

bool wfl__event_subscribe(wfl_exec *ex, wfl_act *ev, wfl_act *listener)
{
    xact *x = wfl__state(ex, ev);
    if (!x)
        return false;
    xqueue *q = x->queue_id ? wfl__queue_by_id(ex, x->queue_id) : NULL;
    if (!q) {
        char name[300];
        event_queue_name(ev, name, sizeof name);
        bool is_delay = wfl_act_type(ev)->kind == WFL_KIND_DELAY;
        int64_t timeout = 0;
        if (is_delay && !delay_timeout(ex, ev, &timeout))
            return false;
        q = wfl__queue_create(ex, name, is_delay);
        if (!q)
            return false;
        x->queue_id = q->id;
        if (is_delay && !wfl__timer_add(ex, wfl__now(ex) + (timeout > 0 ? timeout : 0), q->id, 0))
            return false;
    }
    return wfl__queue_subscribe(ex, q, listener);
}

void wfl__event_unsubscribe(wfl_exec *ex, wfl_act *ev, wfl_act *listener)
{
    xact *x = wfl_act_exec(ev);
    xqueue *q = x && x->queue_id ? wfl__queue_by_id(ex, x->queue_id) : NULL;
    if (!q)
        return;
    wfl__queue_unsubscribe(ex, q, listener);
    if (!q->sub_count && (q->is_timer || !q->item_count)) {
        wfl__queue_delete(ex, q->id);
        x->queue_id = 0;
    }
}

/* ---- HandleExternalEvent ------------------------------------------------------------------- */
static bool hee_deliver(wfl_exec *ex, wfl_act *act, const wf_value *payload)
{
    const char *iface;
    const wfl_tl_service *s = service_of(act, &iface);
    const wfl_tl_event *ev = s ? wfl_tl_service_event(s, literal_str(act, "EventName")) : NULL;
    if (!wfl__write_event_params(ex, act, ev, payload))
        return false;
    return wfl__raise_event(ex, act, "Invoked");
}

/* Take an item if one is there: CLOSED / FAULTING; EXECUTING when nothing yet. */
static wfl_status hee_try(wfl_exec *ex, wfl_act *act, xqueue *q)
{
    wf_value item;
    if (!wfl__queue_dequeue(q, &item))
        return WFL_ST_EXECUTING;
    wfl__event_unsubscribe(ex, act, act);
    bool ok = hee_deliver(ex, act, &item);
    wf_value_release(&item);
    return ok ? WFL_ST_CLOSED : WFL_ST_FAULTING;
}

static wfl_status hee_execute(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    char name[300];
    event_queue_name(act, name, sizeof name);
    xqueue *q = wfl__queue_by_name(ex, name);
    if (!q && !(q = wfl__queue_create(ex, name, false)))
        return WFL_ST_FAULTING;
    x->queue_id = q->id;
    wfl_status st = hee_try(ex, act, q);
    if (st == WFL_ST_EXECUTING && !wfl__queue_subscribe(ex, q, act))
        return WFL_ST_FAULTING;
    return st;
}

static void hee_queue_item(wfl_exec *ex, wfl_act *act, xqueue *q)
{
    wfl_status st = hee_try(ex, act, q);
    if (st == WFL_ST_CLOSED)
        wfl__close(ex, act);
}

static void event_stop(wfl_exec *ex, wfl_act *act)
{
    wfl__event_unsubscribe(ex, act, act);
}

const wfl_kind_ops wfl_ops_hee = {hee_execute, event_stop, NULL, hee_queue_item};

void wfl__event_queue_name(const wfl_act *act, char *buf, size_t size)
{
    event_queue_name(act, buf, size);
}

wf_status wfl__hee_payload(wfl_act *act, wf_value *out, const char **unbound, wf_error *err)
{
    const char *iface;
    const wfl_tl_service *s = service_of(act, &iface);
    const wfl_tl_event *ev = s ? wfl_tl_service_event(s, literal_str(act, "EventName")) : NULL;
    if (ev)
        return wfl__read_event_params(act, ev, out, unbound, err);
    *out = wf_null(); /* no type library: nothing says what the payload was */
    *unbound = "e";
    return WF_OK;
}

/* ---- Delay ------------------------------------------------------------------------------------
 */
static wfl_status delay_try(wfl_exec *ex, wfl_act *act, xqueue *q)
{
    wf_value item;
    if (!wfl__queue_dequeue(q, &item))
        return WFL_ST_EXECUTING;
    wf_value_release(&item);
    xact *x = wfl_act_exec(act);
    wfl__queue_delete(ex, q->id);
    x->queue_id = 0;
    return WFL_ST_CLOSED;
}

static wfl_status delay_execute(wfl_exec *ex, wfl_act *act)
{
    if (!wfl__event_subscribe(ex, act, act))
        return wfl_act_status(act) == WFL_ST_FAULTING ? WFL_ST_FAULTING : WFL_ST_EXECUTING;
    xact *x = wfl_act_exec(act);
    xqueue *q = wfl__queue_by_id(ex, x->queue_id);
    if (!q)
        return WFL_ST_EXECUTING;
    wfl_status st = delay_try(ex, act, q);
    return st;
}

static void delay_queue_item(wfl_exec *ex, wfl_act *act, xqueue *q)
{
    if (delay_try(ex, act, q) == WFL_ST_CLOSED)
        wfl__close(ex, act);
}

static void delay_stop(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    if (x->queue_id)
        wfl__queue_delete(ex, x->queue_id);
    x->queue_id = 0;
}

const wfl_kind_ops wfl_ops_delay = {delay_execute, delay_stop, NULL, delay_queue_item};

/* ---- Listen ------------------------------------------------------------------------------------
 */
static wfl_act *branch_event(wfl_act *branch)
{
    wfl_act *first = wfl_act_child(branch, 0);
    return first && wfl__is_event_act(first) ? first : NULL;
}

/* Drop the Listen's subscriptions except those on queue `keep` (0: none kept): two branches
 * may wait on one queue. */
static void listen_unsubscribe_all(wfl_exec *ex, wfl_act *act, uint32_t keep)
{
    for (size_t i = 0; i < wfl_act_child_count(act); i++) {
        wfl_act *ev = branch_event(wfl_act_child(act, i));
        xact *evx = ev ? wfl_act_exec(ev) : NULL;
        if (evx && (!keep || evx->queue_id != keep))
            wfl__event_unsubscribe(ex, ev, act);
    }
}

static wfl_status listen_execute(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    x->cursor = -1;
    for (size_t i = 0; i < wfl_act_child_count(act); i++) {
        wfl_act *b = wfl_act_child(act, i);
        wfl_act *ev = wfl__is_body_child(b) ? branch_event(b) : NULL;
        if (ev && !wfl__event_subscribe(ex, ev, act))
            return wfl_act_status(act) == WFL_ST_FAULTING ? WFL_ST_FAULTING : WFL_ST_EXECUTING;
    }
    return WFL_ST_EXECUTING;
}

static void listen_queue_item(wfl_exec *ex, wfl_act *act, xqueue *q)
{
    xact *x = wfl_act_exec(act);
    /* -1 or a branch: set here or restored through wfl__check_listen */
    assert(x->cursor >= -1 && x->cursor < (int32_t)wfl_act_child_count(act));
    if (x->cursor >= 0)
        return; /* a winner is already running */
    for (size_t i = 0; i < wfl_act_child_count(act); i++) {
        wfl_act *b = wfl_act_child(act, i);
        wfl_act *ev = branch_event(b);
        xact *ex_ev = ev ? wfl_act_exec(ev) : NULL;
        if (!ex_ev || ex_ev->queue_id != q->id)
            continue;
        x->cursor = (int32_t)i;
        listen_unsubscribe_all(ex, act, q->id);
        wfl__queue_unsubscribe(ex, q, act); /* the item stays for the winning event activity */
        wfl__execute(ex, b);
        return;
    }
}

static void listen_stop(wfl_exec *ex, wfl_act *act)
{
    listen_unsubscribe_all(ex, act, 0);
}

static void listen_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    (void)child;
    wfl__close(ex, act);
}

const wfl_kind_ops wfl_ops_listen = {listen_execute, listen_stop, listen_child_closed,
                                     listen_queue_item};

/* cursor: the winning branch (-1 while waiting); a waiting Listen that is Executing is
 * subscribed to at least one queue, and only the winner runs. */
const char *wfl__check_listen(wfl_exec *ex, wfl_act *act, const xact *x)
{
    size_t n = wfl_act_child_count(act);
    if (x->cursor < -1 || (x->cursor >= 0 && (size_t)x->cursor >= n))
        return "a Listen's winning branch is out of range";
    for (size_t i = 0; i < n; i++)
        if ((int32_t)i != x->cursor && wfl__is_running(wfl_act_child(act, i)))
            return "a Listen runs a branch that did not win";
    if (x->cursor >= 0 || wfl_act_status(act) != WFL_ST_EXECUTING)
        return NULL;
    for (size_t i = 0; i < ex->queue_count; i++)
        for (size_t j = 0; j < ex->queues[i]->sub_count; j++)
            if (ex->queues[i]->subs[j] == act)
                return NULL;
    return "a waiting Listen is subscribed to no queue";
}

/* ---- CallExternalMethod -------------------------------------------------------------------------
 */
static wfl_status cem_execute(wfl_exec *ex, wfl_act *act)
{
    const char *iface;
    const wfl_tl_service *s = service_of(act, &iface);
    const char *method = literal_str(act, "MethodName");
    const wfl_tl_func *fn = s ? wfl_tl_service_method(s, method) : NULL;
    if (!fn) {
        wf_error e = WF_ERROR_INIT;
        wf_error_set(&e, WF_E_NAME, &wfl_act_node(act)->loc,
                     "no local service method %s.%s is registered", iface, method);
        return wfl__throw_error(ex, act, &e, NULL);
    }
    if (!wfl__raise_event(ex, act, "MethodInvoking"))
        return WFL_ST_FAULTING;
    return wfl__call_method(ex, act, fn);
}

const wfl_kind_ops wfl_ops_cem = {cem_execute, NULL, NULL, NULL};

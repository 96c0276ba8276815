/* wfb_serve_run.c — the dispatcher of `wfbridge serve`: a few threads that do what an HTTP
 * thread must never wait for (creating, locking and loading instances in the store) and hand
 * the workflow work to the runtime's worker pool (wfm_host_run_pooled / wfm_instance_start).
 * A call moves START -> (pool run) -> FINISH; the FINISH step reads the reply, closes or keeps
 * the instance, and resumes the suspended connection. One call per instance runs at a time:
 * later calls for a busy instance wait in its chain, in arrival order (docs/services.md). */
#include <stdio.h>
#include <string.h>
#include <unistd.h> /* usleep */

#include "../common/wf_mem.h"
#include "wfb_serve.h"

void wfb_http_answer(wfb_call *call); /* wfb_serve_http.c */

static char busy_marker; /* the busy map's value for an instance with no call waiting */

static void enqueue_locked(wfb_server *srv, wfb_call *call)
{
    call->next = NULL;
    if (srv->queue_tail)
        srv->queue_tail->next = call;
    else
        srv->queue_head = call;
    srv->queue_tail = call;
    pthread_cond_signal(&srv->wake);
}

static void start_call(wfb_server *srv, wfb_call *call);

/* Without a store, creating an instance and queueing it on the pool waits for nothing: a
 * creating call starts on the HTTP thread itself, saving a hop through the dispatcher. */
static bool starts_inline(const wfb_server *srv, const wfb_call *call)
{
    return !srv->store && call->phase == WFB_PHASE_START && call->op->can_create &&
           !call->instance[0];
}

void wfb_dispatch_submit(wfb_server *srv, wfb_call *call)
{
    bool inline_start = starts_inline(srv, call);
    pthread_mutex_lock(&srv->lock);
    if (call->phase == WFB_PHASE_START && !call->owns)
        srv->in_flight++;
    if (!inline_start)
        enqueue_locked(srv, call);
    pthread_mutex_unlock(&srv->lock);
    if (inline_start)
        start_call(srv, call);
}

/* The call is answered: give it back to the HTTP side. */
static void answer(wfb_server *srv, wfb_call *call)
{
    wfb_http_answer(call);
    pthread_mutex_lock(&srv->lock);
    srv->in_flight--;
    pthread_cond_broadcast(&srv->idle);
    pthread_mutex_unlock(&srv->lock);
}

/* Let the next call waiting for `id` start, or mark the instance free. */
static void release_instance(wfb_server *srv, const char *id)
{
    pthread_mutex_lock(&srv->lock);
    void *v = wf_strmap_get(srv->busy, id);
    if (v && v != &busy_marker) {
        wfb_call *next = v;
        if (wf_strmap_put(srv->busy, id, next->next ? (void *)next->next : &busy_marker) ==
            WF_OK) {
            next->phase = WFB_PHASE_START;
            next->owns = true;
            enqueue_locked(srv, next); /* it owns the instance now */
            pthread_mutex_unlock(&srv->lock);
            return;
        }
    }
    wf_strmap_remove(srv->busy, id);
    pthread_mutex_unlock(&srv->lock);
}

/* Take the instance for the call, or queue the call behind the one that has it: true when the
 * call may go on now. */
static bool acquire_instance(wfb_server *srv, wfb_call *call)
{
    pthread_mutex_lock(&srv->lock);
    void *v = wf_strmap_get(srv->busy, call->instance);
    bool go = false;
    if (!v) {
        go = call->owns = wf_strmap_put(srv->busy, call->instance, &busy_marker) == WF_OK;
    } else {
        call->next = NULL;
        if (v == &busy_marker) {
            wf_strmap_put(srv->busy, call->instance, call);
        } else {
            wfb_call *last = v;
            while (last->next)
                last = last->next;
            last->next = call;
        }
    }
    pthread_mutex_unlock(&srv->lock);
    if (!v && !go)
        wfb_respond_fault(call, 503, "Server", "out of memory");
    return go;
}

/* ---- content correlation ------------------------------------------------------------------ */
typedef struct found {
    char id[33];
    size_t count;
} found;

static bool found_row(void *ud, const wfm_store_row *row)
{
    found *f = ud;
    if (strcmp(row->status, "Closed") == 0 || strcmp(row->status, "Faulted") == 0 ||
        strcmp(row->status, "Canceled") == 0 || strcmp(row->status, "Terminated") == 0)
        return true;
    if (f->count++ == 0)
        snprintf(f->id, sizeof f->id, "%s", row->id);
    return true;
}

/* The instance whose promoted property op->correlates_on has the message's value. */
static bool correlate(wfb_server *srv, wfb_call *call)
{
    const wf_value *v = wf_value_record_get(&call->payload, call->op->correlates_on);
    wf_buf text;
    wf_buf_init(&text);
    found f = {{0}, 0};
    wf_error e = WF_ERROR_INIT;
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    q.prop_name = call->op->correlates_on;
    bool ok = v && wf_value_to_text(v, &text);
    q.prop_value = text.data;
    if (ok && wfm_store_query_rows(srv->store, &q, found_row, &f, &e) != WF_OK) {
        wfb_respond_fault(call, 503, "Server", "store: %s", e.message);
        wf_buf_fini(&text);
        return false;
    }
    if (f.count == 1)
        snprintf(call->instance, sizeof call->instance, "%s", f.id);
    else
        wfb_respond_fault(call, 404, "Client", "%s instance has %s = %s", f.count ? "more than one" : "no",
                          call->op->correlates_on, text.data);
    wf_buf_fini(&text);
    return f.count == 1;
}

/* ---- running ------------------------------------------------------------------------------ */
static void pool_done(void *ud, wfm_dinst *d, wf_status status, const wf_error *err)
{
    wfb_call *call = ud;
    (void)d;
    call->run_status = status;
    if (err)
        call->run_err = *err;
    call->phase = WFB_PHASE_FINISH;
    wfb_dispatch_submit(call->srv, call);
}

static void memory_done(wfm_instance *inst, void *ud)
{
    (void)inst;
    pool_done(ud, NULL, WF_OK, NULL);
}

static wfm_definition *def_of(const wfb_call *call)
{
    return call->ep->def;
}

/* Load (store) or find (memory) the call's instance and deliver the message to it. */
static bool deliver(wfb_server *srv, wfb_call *call, wfm_instance **inst)
{
    wf_error e = WF_ERROR_INIT;
    wf_status st;
    if (srv->store) {
        /* Another serve process on the store may hold it for a moment (its own request for
         * the same instance): wait for it here, where waiting holds no HTTP thread. */
        st = wfm_host_load(srv->host, call->instance, &call->d, &e);
        for (int tries = 0; st == WF_E_LOCKED && tries < 100; tries++) {
            usleep(10000);
            wf_error_clear(&e);
            st = wfm_host_load(srv->host, call->instance, &call->d, &e);
        }
        if (st == WF_E_NOTFOUND || st == WF_E_STATE) {
            wfb_respond_fault(call, 404, "Client", "instance %s %s", call->instance,
                              st == WF_E_NOTFOUND ? "is unknown" : "has completed");
            return false;
        }
        if (st != WF_OK) {
            wfb_respond_fault(call, 503, "Server", "instance %s: %s", call->instance, e.message);
            return false;
        }
        *inst = wfm_dinst_instance(call->d);
        st = wfm_host_resume(srv->host, call->d, call->op->bookmark, &call->payload, &e);
    } else {
        pthread_mutex_lock(&srv->lock);
        *inst = wf_strmap_get(srv->memory, call->instance);
        pthread_mutex_unlock(&srv->lock);
        if (!*inst) {
            wfb_respond_fault(call, 404, "Client", "instance %s is unknown or has completed",
                              call->instance);
            return false;
        }
        wfm_instance_on_complete(*inst, memory_done, call);
        st = wfm_instance_resume(*inst, call->op->bookmark, &call->payload, &e);
    }
    if (st == WF_OK)
        return true;
    wfb_respond_fault(call, 500, "Client", "instance %s does not wait for operation %s now",
                      call->instance, call->op->operation);
    wfm_dinst_close(call->d); /* nothing was saved: the store is as it was */
    call->d = NULL;
    return false;
}

static bool create(wfb_server *srv, wfb_call *call, wfm_instance **inst)
{
    wf_error e = WF_ERROR_INIT;
    wf_status st;
    if (srv->store) {
        st = wfm_host_new(srv->host, def_of(call), &call->d, &e);
        *inst = st == WF_OK ? wfm_dinst_instance(call->d) : NULL;
    } else {
        st = wfm_instance_create(srv->rt, def_of(call), inst, &e);
        if (st == WF_OK)
            wfm_instance_on_complete(*inst, memory_done, call);
    }
    if (st == WF_OK) {
        snprintf(call->instance, sizeof call->instance, "%s",
                 srv->store ? wfm_dinst_id(call->d) : wfm_instance_id(*inst));
        st = wfm_msg_deliver_initial(*inst, call->op->bookmark, &call->payload, &e);
    }
    if (st != WF_OK) {
        wfb_respond_fault(call, 503, "Server", "cannot create an instance: %s", e.message);
        wfm_dinst_close(call->d);
        call->d = NULL;
        if (!srv->store)
            wfm_instance_destroy(*inst);
        return false;
    }
    call->inst = *inst;
    return true;
}

static void start_call(wfb_server *srv, wfb_call *call)
{
    bool creating = call->op->can_create && !call->instance[0];
    if (!creating && !call->owns) {
        if (!call->instance[0] && call->op->correlates_on && srv->store) {
            if (!correlate(srv, call)) {
                answer(srv, call);
                return;
            }
        } else if (!call->instance[0]) {
            wfb_respond_fault(call, 400, "Client",
                              "operation %s needs an instance context (the WscContext cookie, "
                              "a wsc:Context header or X-Instance-Id)",
                              call->op->operation);
            answer(srv, call);
            return;
        }
        if (!acquire_instance(srv, call)) {
            if (call->answered)
                answer(srv, call);
            return; /* queued: started again when the instance is free */
        }
    }
    wfm_instance *inst = NULL;
    bool ok = creating ? create(srv, call, &inst) : deliver(srv, call, &inst);
    if (!ok) {
        if (call->owns)
            release_instance(srv, call->instance);
        answer(srv, call);
        return;
    }
    call->inst = inst;
    wf_error e = WF_ERROR_INIT;
    wf_status st = srv->store ? wfm_host_run_pooled(srv->host, call->d, pool_done, call, &e)
                   : creating ? wfm_instance_start(inst, &e)
                              : WF_OK; /* a resumed pooled instance is back on the pool */
    if (st != WF_OK) {
        wfb_respond_fault(call, 503, "Server", "cannot run instance %s: %s", call->instance,
                          e.message);
        wfm_dinst_close(call->d);
        call->d = NULL;
        if (!srv->store && creating)
            wfm_instance_destroy(inst);
        else if (call->owns)
            release_instance(srv, call->instance);
        answer(srv, call);
    }
}

static bool completed(wfm_instance_state s)
{
    return s >= WFM_INSTANCE_CLOSED;
}

/* The response from what the run left: the reply, a fault, or nothing for a one-way op. */
static void respond_from_run(wfb_call *call, wfm_instance *inst)
{
    wf_value reply = wf_null();
    wfm_instance_state state = wfm_instance_state_get(inst);
    if (wfm_msg_take_reply(inst, call->request, &reply) == WF_OK) {
        wfb_respond_reply(call, &reply);
        if (call->op->can_create && !completed(state))
            snprintf(call->set_context, sizeof call->set_context, "%s", call->instance);
    } else if (call->run_status != WF_OK) {
        wfb_respond_fault(call, 503, "Server", "instance %s: %s", call->instance,
                          call->run_err.message);
    } else if (state == WFM_INSTANCE_FAULTED || state == WFM_INSTANCE_TERMINATED) {
        const wf_value *exc = wfm_instance_fault(inst);
        wfb_respond_fault(call, 500, "Server", "%s: %s",
                          exc && !wf_is_null(exc) ? exc->type->name : "Exception",
                          exc && !wf_is_null(exc) ? wf_value_exc_message(exc) : "faulted");
    } else if (call->op->one_way) {
        call->answered = true;
        call->http_status = 202;
        call->content_type = "text/plain";
        if (call->op->can_create && !completed(state))
            snprintf(call->set_context, sizeof call->set_context, "%s", call->instance);
    } else {
        wfb_respond_fault(call, 500, "Server", "the workflow did not reply to %s",
                          call->op->operation);
    }
    wf_value_release(&reply);
}

static void finish_call(wfb_server *srv, wfb_call *call)
{
    wfm_instance *inst = call->inst;
    respond_from_run(call, inst);
    if (srv->store) {
        wfm_dinst_close(call->d);
        call->d = NULL;
    } else if (completed(wfm_instance_state_get(inst))) {
        pthread_mutex_lock(&srv->lock);
        wf_strmap_remove(srv->memory, call->instance);
        pthread_mutex_unlock(&srv->lock);
        wfm_instance_destroy(inst);
    } else {
        pthread_mutex_lock(&srv->lock);
        if (wf_strmap_put(srv->memory, call->instance, inst) != WF_OK) {
            wfb_respond_fault(call, 503, "Server", "out of memory");
            inst = NULL;
        }
        pthread_mutex_unlock(&srv->lock);
        if (!inst)
            wfm_instance_destroy(call->inst);
    }
    call->inst = NULL;
    if (call->owns)
        release_instance(srv, call->instance);
    answer(srv, call);
}

static void *dispatch_main(void *arg)
{
    wfb_server *srv = arg;
    for (;;) {
        pthread_mutex_lock(&srv->lock);
        while (!srv->queue_head && !srv->stopping)
            pthread_cond_wait(&srv->wake, &srv->lock);
        wfb_call *call = srv->queue_head;
        if (!call) {
            pthread_mutex_unlock(&srv->lock);
            return NULL;
        }
        srv->queue_head = call->next;
        if (!srv->queue_head)
            srv->queue_tail = NULL;
        pthread_mutex_unlock(&srv->lock);
        if (call->phase == WFB_PHASE_START)
            start_call(srv, call);
        else
            finish_call(srv, call);
    }
}

wf_status wfb_dispatch_start(wfb_server *srv, unsigned threads, wf_error *err)
{
    srv->busy = wf_strmap_create(NULL);
    srv->memory = wf_strmap_create(NULL);
    if (!srv->busy || !srv->memory)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (threads > sizeof srv->threads / sizeof srv->threads[0])
        threads = sizeof srv->threads / sizeof srv->threads[0];
    for (; srv->thread_count < threads; srv->thread_count++)
        if (pthread_create(&srv->threads[srv->thread_count], NULL, dispatch_main, srv) != 0)
            return wf_error_set(err, WF_E_NOMEM, NULL, "cannot start the dispatcher threads");
    return WF_OK;
}

void wfb_dispatch_drain(wfb_server *srv)
{
    pthread_mutex_lock(&srv->lock);
    while (srv->in_flight)
        pthread_cond_wait(&srv->idle, &srv->lock);
    pthread_mutex_unlock(&srv->lock);
}

void wfb_dispatch_stop(wfb_server *srv)
{
    pthread_mutex_lock(&srv->lock);
    srv->stopping = true;
    pthread_cond_broadcast(&srv->wake);
    pthread_mutex_unlock(&srv->lock);
    for (size_t i = 0; i < srv->thread_count; i++)
        pthread_join(srv->threads[i], NULL);
    srv->thread_count = 0;
    size_t pos = 0;
    const char *key;
    void *value;
    while (srv->memory && wf_strmap_next(srv->memory, &pos, &key, &value))
        wfm_instance_destroy(value);
    wf_strmap_destroy(srv->memory);
    wf_strmap_destroy(srv->busy);
    srv->memory = srv->busy = NULL;
}

/* wfm_act_invoke.c — InvokeMethod (a native function called through libffi, docs/architecture.md "The
 * modern model") and TransactionScope. InvokeMethod resolves its library and prepares the
 * call interface once, at load (prepare callback); a run only evaluates the parameters, calls,
 * and writes the results back. Both kinds are no-persist zones. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../common/wf_native.h"
#include "wfm_activity.h"
#include "wfm_acts.h"
#include "wfm_ctx.h"
#include "wfm_node.h"
#include "wfm_persist.h"

/* Parameters per call: the arrays live on the stack of one execute. */
#define IM_MAX_PARAMS 32

/* ---- InvokeMethod --------------------------------------------------------------------- */
enum {
    IM_TARGET_TYPE,
    IM_TARGET_OBJECT,
    IM_METHOD_NAME,
    IM_PARAMETERS,
    IM_RESULT,
    IM_ERROR_ON_NONZERO,
    IM_RUN_ASYNC,
};

static const wfm_prop_spec invoke_props[] = {
    {"TargetType", WFM_PROP_TYPE, NULL, NULL, 0, NULL},
    {"TargetObject", WFM_PROP_IN, "x:Object", NULL, 0, NULL},
    {"MethodName", WFM_PROP_LITERAL, "x:String", NULL, WFM_PROP_REQUIRED, NULL},
    {"Parameters", WFM_PROP_PARAMS, NULL, NULL, WFM_PROP_CONTENT, NULL},
    {"Result", WFM_PROP_OUT, NULL, NULL, 0, NULL},
    /* Not WF4: an Int32 status return, non-zero faults (as ErrorOnNonZero in a type library). */
    {"ErrorOnNonZero", WFM_PROP_LITERAL, "x:Boolean", NULL, 0, "False"},
    /* Accepted for WF4 files; the call always runs on the instance's thread. */
    {"RunAsynchronously", WFM_PROP_LITERAL, "x:Boolean", NULL, 0, "False"},
};

typedef struct invoke_data {
    wf_native_lib *lib; /* owned */
    wf_native_fn *fn;   /* owned, from lib */
    bool has_result;    /* Result is written */
} invoke_data;

static void invoke_data_destroy(void *data)
{
    invoke_data *d = data;
    wf_native_fn_destroy(d->fn);
    wf_native_lib_close(d->lib);
    wf_free(d);
}

static bool literal_bool(const wfm_node *node, unsigned prop)
{
    const wf_value *v = wfm_node_literal(node, prop);
    return v && v->type->kind == WF_K_BOOL && v->u.b;
}

/*
** The library NAME of TargetType="p:Any", where p maps clr-namespace:NS;Assembly=NAME. NULL
** (with a load error reported) when TargetType does not name one.
*/
static const char *invoke_library(wfm_load *load, const wfm_node *node)
{
    if (wfm_node_has(node, IM_TARGET_OBJECT)) {
        wfm_load_error(load, node, WF_E_UNSUPPORTED,
                       "InvokeMethod: TargetObject is not supported; use TargetType");
        return NULL;
    }
    if (!wfm_node_has(node, IM_TARGET_TYPE)) {
        wfm_load_error(load, node, WF_E_SCHEMA, "InvokeMethod needs a TargetType");
        return NULL;
    }
    const char *prefix = wfm_node_type_prefix(node, IM_TARGET_TYPE);
    const char *name = prefix ? wfm_load_assembly(load, node, prefix) : NULL;
    if (!name)
        wfm_load_error(load, node, WF_E_NOLIB,
                       "InvokeMethod: TargetType '%s' does not name a native library "
                       "(xmlns \"clr-namespace:NS;Assembly=NAME\")",
                       wfm_node_type_text(node, IM_TARGET_TYPE));
    return name;
}

/*
** The C signature: parameters in document order, the Result's type as return type (an Int32
** status with ErrorOnNonZero). False, with a load error reported, when it cannot be built.
*/
static bool invoke_sig(wfm_load *load, const wfm_node *node, wf_native_param *params,
                       wf_native_sig *sig)
{
    size_t n = wfm_node_count(node, IM_PARAMETERS);
    if (n > IM_MAX_PARAMS) {
        wfm_load_error(load, node, WF_E_LIMIT, "InvokeMethod: %zu parameters, at most %d", n,
                       IM_MAX_PARAMS);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        wfm_prop_kind dir = wfm_node_param_dir(node, IM_PARAMETERS, i);
        params[i].type = wfm_node_param_type(node, IM_PARAMETERS, i);
        params[i].dir = dir == WFM_PROP_OUT     ? WF_NATIVE_OUT
                        : dir == WFM_PROP_INOUT ? WF_NATIVE_INOUT
                                                : WF_NATIVE_IN;
    }
    sig->params = params;
    sig->param_count = n;
    sig->error_on_nonzero = literal_bool(node, IM_ERROR_ON_NONZERO);
    sig->ret = wfm_node_has(node, IM_RESULT) ? wfm_node_prop_type(node, IM_RESULT) : NULL;
    if (sig->error_on_nonzero) {
        if (sig->ret && sig->ret != &wf_type_int32) {
            wfm_load_error(load, node, WF_E_TYPE,
                           "InvokeMethod: ErrorOnNonZero needs an Int32 Result, not %s",
                           sig->ret->name);
            return false;
        }
        sig->ret = &wf_type_int32;
    }
    return true;
}

/* Report a failure of the native layer at the node; WF_E_NOMEM goes back to the loader. */
static wf_status invoke_report(wfm_load *load, const wfm_node *node, const wf_error *e)
{
    if (e->code == WF_E_NOMEM)
        return WF_E_NOMEM;
    wfm_load_error(load, node, e->code, "%s", e->message);
    return WF_OK;
}

static wf_status invoke_prepare(wfm_load *load, wfm_node *node)
{
    const char *lib_name = invoke_library(load, node);
    wf_native_param params[IM_MAX_PARAMS];
    wf_native_sig sig = {0};
    if (!lib_name || !invoke_sig(load, node, params, &sig))
        return WF_OK;
    const wf_libpath *path = wfm_load_libpath(load);
    if (!path) {
        wfm_load_error(load, node, WF_E_NOLIB,
                       "InvokeMethod: native library '%s' cannot be loaded: no library path "
                       "is set",
                       lib_name);
        return WF_OK;
    }
    const wf_value *method = wfm_node_literal(node, IM_METHOD_NAME);
    wf_error e = WF_ERROR_INIT;
    if (wfm_load_validate_only(load)) { /* the declaration instead of the shared object */
        if (wfm_load_check_native(load, lib_name, wf_value_str(method), &sig, &e) != WF_OK)
            return invoke_report(load, node, &e);
        wfm_load_warning(load, node,
                         "InvokeMethod '%s' of '%s' checked against its declaration only: not "
                         "bound (validate-only)",
                         wf_value_str(method), lib_name);
        return WF_OK;
    }
    invoke_data *d = wf_calloc(1, sizeof *d);
    if (!d)
        return WF_E_NOMEM;
    d->has_result = wfm_node_has(node, IM_RESULT);
    if (wf_native_lib_open(path, lib_name, &d->lib, &e) != WF_OK ||
        wf_native_fn_prepare(d->lib, wf_value_str(method), &sig, &d->fn, &e) != WF_OK) {
        invoke_data_destroy(d);
        return invoke_report(load, node, &e);
    }
    wfm_node_set_data(node, d, invoke_data_destroy);
    return WF_OK;
}

/* Write Out/InOut parameters and the Result. False when a write faulted ai. */
static bool invoke_write_back(wfm_ctx *ctx, wfm_ai *ai, const invoke_data *d, wf_value *outs,
                              size_t n)
{
    const wfm_node *node = wfm_ai_node(ai);
    for (size_t i = 0; i < n; i++) {
        if (wfm_node_param_dir(node, IM_PARAMETERS, i) == WFM_PROP_IN)
            continue;
        if (wfm_ctx_set_param(ctx, ai, IM_PARAMETERS, i, &outs[i]) != WF_OK)
            return false;
    }
    return !d->has_result || wfm_ctx_set(ctx, ai, IM_RESULT, &outs[n]) == WF_OK;
}

static void release_values(wf_value *values, size_t count)
{
    for (size_t i = 0; i < count; i++)
        wf_value_release(&values[i]);
}

/*
** Evaluate the In/InOut parameters, call, trace the call (in: every parameter's In value,
** null for Out; out: every parameter's Out value, null for In, then the return value unless
** void), write Out/InOut parameters and Result, then close or fault with a NativeException.
*/
static void invoke_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const wfm_node *node = wfm_ai_node(ai);
    const invoke_data *d = wfm_node_data(node);
    if (!d) { /* loaded validate-only */
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "InvokeMethod: not bound to a native library (validate-only load)");
        return;
    }
    if (wfm_ctx_replaying(ctx)) { /* rebuilding a migrated position: the call already ran */
        wfm_ctx_complete(ctx, ai);
        return;
    }
    size_t n = wfm_node_count(node, IM_PARAMETERS);
    wf_value args[IM_MAX_PARAMS], outs[IM_MAX_PARAMS + 1];
    for (size_t i = 0; i <= n; i++)
        outs[i] = wf_null();
    for (size_t i = 0; i < n; i++) {
        args[i] = wf_null();
        if (wfm_node_param_dir(node, IM_PARAMETERS, i) != WFM_PROP_OUT &&
            wfm_ctx_get_param(ctx, ai, IM_PARAMETERS, i, &args[i]) != WF_OK) {
            release_values(args, i);
            return;
        }
    }
    wf_error e = WF_ERROR_INIT;
    wf_status rc = wf_native_fn_call(d->fn, args, outs, &outs[n], &e);
    bool has_ret = wf_native_fn_sig(d->fn)->ret != NULL;
    wfm_ctx_trace_call(ctx, ai, wf_native_fn_name(d->fn), args, n, outs, n + (has_ret ? 1 : 0));
    if (rc == WF_E_NOMEM) {
        wfm_ctx_nomem(ctx); /* the scheduler fails the instance after this callback */
    } else if (rc != WF_OK && rc != WF_E_NATIVE) {
        wfm_ctx_throw(ctx, ai, &wf_exc_native, "%s", e.message);
    } else if (invoke_write_back(ctx, ai, d, outs, n)) { /* false: a write faulted ai */
        /* A non-zero ErrorOnNonZero status (WF_E_NATIVE) still delivered its outputs. */
        if (rc == WF_E_NATIVE)
            wfm_ctx_throw(ctx, ai, &wf_exc_native, "%s", e.message);
        else
            wfm_ctx_complete(ctx, ai);
    }
    release_values(args, n);
    release_values(outs, n + 1);
}

static const wfm_kind_spec invoke_spec = {
    .name = "InvokeMethod",
    .category = "Activity",
    .flags = WFM_KIND_NO_PERSIST,
    .props = invoke_props,
    .prop_count = sizeof invoke_props / sizeof invoke_props[0],
    .content_prop = "Parameters",
    .prepare = invoke_prepare,
    .execute = invoke_execute,
};

/* ---- TransactionScope ----------------------------------------------------------------- */
/* The body runs as an atomic no-persist zone; nested scopes join the outer one (nothing to
 * do: there is no resource manager). A fault escaping the body, or the Timeout elapsing
 * before the body is done (the body is then canceled; TimeoutException), fails the
 * transaction: with AbortInstanceOnTransactionFailure (the default) the instance ends as
 * Terminated with that exception, which no TryCatch can catch; with False the exception
 * propagates as an ordinary fault. A negative Timeout faults; a zero one means no limit. */
enum { TS_BODY, TS_ISOLATION, TS_TIMEOUT, TS_ABORT_INSTANCE };

static const wfm_prop_spec transaction_props[] = {
    {"Body", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_CONTENT, NULL},
    {"IsolationLevel", WFM_PROP_LITERAL, "x:String", NULL, 0, "Serializable"},
    {"Timeout", WFM_PROP_IN, "s:TimeSpan", NULL, 0, "00:01:00"},
    {"AbortInstanceOnTransactionFailure", WFM_PROP_LITERAL, "x:Boolean", NULL, 0, "True"},
};

typedef struct ts_state {
    wf_value failure; /* owned: the exception that failed the transaction */
    bool failed;
    int64_t timeout_us;
} ts_state;

/* Fail the transaction with `exc` (taken over): terminate or fault, per the scope's flag. */
static void ts_fail(wfm_ctx *ctx, wfm_ai *ai, wf_value exc)
{
    if (literal_bool(wfm_ai_node(ai), TS_ABORT_INSTANCE))
        wfm_ctx_terminate(ctx, ai, exc);
    else
        wfm_ctx_fault(ctx, ai, exc);
}

static bool ts_body_fault(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child, const wf_value *exc)
{
    (void)ctx;
    (void)child;
    ts_state *st = wfm_ai_state(ai);
    if (!literal_bool(wfm_ai_node(ai), TS_ABORT_INSTANCE) || st->failed)
        return false;
    st->failed = true;
    st->failure = wf_value_retain(exc);
    return true;
}

static void ts_timed_out(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)
{
    (void)payload;
    ts_state *st = wfm_ai_state(ai);
    if (st->failed || wfm_ai_running_children(ai) == 0)
        return;
    char msg[128];
    snprintf(msg, sizeof msg, "the transaction of TransactionScope '%s' timed out after %lld ms",
             wfm_node_display_name(wfm_ai_node(ai)), (long long)(st->timeout_us / 1000));
    if (wf_value_exception(&wf_exc_timeout, msg, &st->failure) != WF_OK) {
        wfm_ctx_nomem(ctx); /* the scheduler fails the instance after this callback */
        return;
    }
    st->failed = true;
    wfm_ctx_cancel_children(ctx, ai);
}

static void ts_body_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    ts_state *st = wfm_ai_state(ai);
    if (st->failed) {
        wf_value exc = st->failure;
        st->failure = wf_null();
        st->failed = false;
        ts_fail(ctx, ai, exc);
        return;
    }
    if (wfm_ai_status(child) == WFM_CANCELED && wfm_ai_cancel_requested(ai))
        wfm_ctx_mark_canceled(ctx, ai);
    wfm_ctx_complete(ctx, ai);
}

static void transaction_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    ts_state *st = wfm_ai_state(ai);
    wf_value timeout = wf_null();
    if (wfm_ctx_get(ctx, ai, TS_TIMEOUT, &timeout) != WF_OK)
        return;
    st->timeout_us = timeout.type->kind == WF_K_TIMESPAN ? timeout.u.i64 : 0;
    if (st->timeout_us < 0) {
        wfm_ctx_throw(ctx, ai, &wf_exc_argument_range,
                      "TransactionScope: Timeout must not be negative");
        return;
    }
    const wfm_node *body = wfm_node_child(wfm_ai_node(ai), TS_BODY);
    if (!body) {
        wfm_ctx_complete(ctx, ai);
        return;
    }
    if (wfm_ctx_schedule(ctx, ai, body, ts_body_done, ts_body_fault) != WF_OK)
        return;
    int64_t now = wfm_ctx_now_us(ctx);
    if (st->timeout_us > 0 && st->timeout_us < INT64_MAX - now &&
        wfm_ctx_timer(ctx, ai, now + st->timeout_us, ts_timed_out) != WF_OK)
        wfm_ctx_nomem(ctx);
}

static void transaction_fini(wfm_ai *ai)
{
    ts_state *st = wfm_ai_state(ai);
    if (st->failed)
        wf_value_release(&st->failure);
}

/* Persistence (wfm_persist.h "Persistence contract"). TransactionScope is a no-persist
 * zone while it executes, so a saved one has not started or has already finished; the state
 * is written anyway so the contract holds. */
#define TS_STATE_VERSION 1u

static wf_status transaction_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    const ts_state *st = wfm_ai_state_const(ai);
    wf_value none = wf_null();
    wfm_persist_write_uint(w, TS_STATE_VERSION);
    wfm_persist_write_uint(w, st->failed);
    wfm_persist_write_value(w, st->failed ? &st->failure : &none);
    wfm_persist_write_int(w, st->timeout_us);
    return WF_OK;
}

static wf_status transaction_restore(wfm_ai *ai, wfm_persist_reader *r)
{
    ts_state *st = wfm_ai_state(ai);
    if (wfm_persist_read_uint(r) != TS_STATE_VERSION)
        wfm_persist_read_fail(r, "unknown TransactionScope state version");
    st->failed = wfm_persist_read_uint(r) != 0;
    st->failure = wfm_persist_read_value(r);
    st->timeout_us = wfm_persist_read_int(r);
    if (!st->failed)
        wf_value_release(&st->failure);
    return WF_OK;
}

/* Append only: saved instances name callbacks by their index here. */
static const void *const transaction_callbacks[] = {
    (const void *)ts_body_done,
    (const void *)ts_body_fault,
    (const void *)ts_timed_out,
};

static wf_status transaction_prepare(wfm_load *load, wfm_node *node)
{
    static const char *const levels[] = {"Serializable",    "RepeatableRead", "ReadCommitted",
                                         "ReadUncommitted", "Snapshot",       "Chaos",
                                         "Unspecified"};
    const char *level = wf_value_str(wfm_node_literal(node, TS_ISOLATION));
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strcmp(level, levels[i]) == 0)
            return WF_OK;
    wfm_load_error(load, node, WF_E_SCHEMA, "TransactionScope: unknown IsolationLevel '%s'",
                   level);
    return WF_OK;
}

static const wfm_kind_spec transaction_spec = {
    .name = "TransactionScope",
    .category = "Activity",
    .flags = WFM_KIND_NO_PERSIST | WFM_KIND_CAN_IDLE,
    .props = transaction_props,
    .prop_count = sizeof transaction_props / sizeof transaction_props[0],
    .content_prop = "Body",
    .state_size = sizeof(ts_state),
    .prepare = transaction_prepare,
    .execute = transaction_execute,
    .fini = transaction_fini,
    .callbacks = transaction_callbacks,
    .callback_count = sizeof transaction_callbacks / sizeof transaction_callbacks[0],
    .save = transaction_save,
    .restore = transaction_restore,
};

wf_status wfm_acts_invoke_register(wfm_catalogue *cat, wf_error *err)
{
    wf_status rc = wfm_catalogue_register(cat, &invoke_spec, err);
    if (rc == WF_OK)
        rc = wfm_catalogue_register(cat, &transaction_spec, err);
    return rc;
}

/* wfb_durable.c — what the durable verbs share (wfb_durable.h): opening an instance store with
 * a durable host, driving an instance until it is persisted and unloaded or completes, and
 * reporting an instance's result and fault in the contract form. */
#include "wfb_durable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "wfb_cli.h"

int wfb_parse_durability(const char *text, int *out)
{
    char q[128];
    if (strcmp(text, "full") == 0)
        *out = WFM_DURABILITY_FULL;
    else if (strcmp(text, "normal") == 0)
        *out = WFM_DURABILITY_NORMAL;
    else
        return wfb_usage_error("--durability needs full or normal, not %s",
                               wfb_quote(text, q, sizeof q));
    return 0;
}

const char *wfb_store_name(const char *given)
{
    const char *env = getenv("WFBRIDGE_STORE");
    return given ? given : env && *env ? env : WFB_DEFAULT_STORE;
}

wf_status wfb_durable_open(const wfb_durable_cfg *cfg, wfm_runtime *rt, wfm_store **store,
                           wfm_host **host, wf_error *err)
{
    *store = NULL;
    *host = NULL;
    /* A missing store is refused by wfm_store_open (must_exist), whatever its backend. */
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = cfg->path;
    so.must_exist = cfg->must_exist;
    so.durability = (wfm_durability)cfg->durability;
    wf_status st = wfm_store_open(&so, store, err);
    if (st != WF_OK)
        return st;
    wfm_host_opts ho = WFM_HOST_OPTS_INIT; /* persist and unload as soon as idle */
    ho.promote = cfg->promote;
    ho.promote_count = cfg->promote_count;
    st = wfm_host_create(rt, *store, &ho, host, err);
    if (st != WF_OK) {
        wfm_store_close(*store);
        *store = NULL;
    }
    return st;
}

/* An unhandled fault, reported as every runtime reports one: at the faulting activity. */
static void report_fault(const wfm_instance *inst, const char **type, const char **message)
{
    const wf_value *exc = wfm_instance_fault(inst);
    *type = exc->type->kind == WF_K_EXCEPTION ? exc->type->name : "OutOfMemoryException";
    *message = exc->type->kind == WF_K_EXCEPTION ? wf_value_exc_message(exc) : "out of memory";
    wf_loc loc = wfm_instance_fault_loc(inst);
    wf_error e = WF_ERROR_INIT;
    wf_error_set(&e, WF_E_FAULT, &loc, "%s: %s", *type, *message);
    wfb_report(&e);
}

int wfb_instance_result(const wfm_instance *inst, const wfb_marks *marks_of, bool json)
{
    wfm_instance_state state = wfm_instance_state_get(inst);
    wfb_result r = {0};
    r.status = marks_of->status ? marks_of->status : wfm_instance_state_name(state);
    r.instance_id = marks_of->id;
    if (state == WFM_INSTANCE_FAULTED || state == WFM_INSTANCE_TERMINATED)
        report_fault(inst, &r.error_type, &r.error_message);
    size_t n = wfm_instance_output_count(inst), b = marks_of->count;
    const char **names = wf_calloc(n + 1, sizeof *names);
    wf_value *values = wf_calloc(n + 1, sizeof *values);
    const char **marks = wf_calloc(b + 1, sizeof *marks);
    int rc = 2;
    if (names && values && marks) {
        for (size_t i = 0; i < n; i++) {
            names[i] = wfm_instance_output_name(inst, i);
            values[i] = *wfm_instance_output_value(inst, i);
        }
        for (size_t i = 0; i < b; i++)
            marks[i] = marks_of->name(marks_of->src, i);
        r.output_names = names;
        r.output_values = values;
        r.output_count = n;
        r.bookmarks = marks;
        r.bookmark_count = state == WFM_INSTANCE_IDLE ? b : 0;
        if (json)
            wfb_print_result(stdout, &r);
        else if (r.instance_id && state == WFM_INSTANCE_IDLE)
            printf("instance %s persisted (%s)\n", r.instance_id, r.status);
        rc = wfb_status_exit_code(r.status);
    } else {
        wfb_error("out of memory");
    }
    wf_free(names);
    wf_free(values);
    wf_free(marks);
    return rc;
}

static bool short_name_of(const char *full, const char *name)
{
    const char *dot = strrchr(full, '.');
    return dot && strcmp(dot + 1, name) == 0;
}

int wfb_bookmark_resolve(const wfb_marks *marks, const char *opt, const char *name,
                         const char **out)
{
    *out = NULL;
    size_t hits = 0;
    for (size_t i = 0; i < marks->count; i++) {
        const char *b = marks->name(marks->src, i);
        if (strcmp(b, name) == 0) {
            *out = b;
            return 0;
        }
        if (short_name_of(b, name) && hits++ == 0)
            *out = b;
    }
    if (hits <= 1)
        return 0;
    *out = NULL;
    char list[512];
    size_t used = 0;
    list[0] = '\0';
    for (size_t i = 0; i < marks->count && used < sizeof list; i++) {
        const char *b = marks->name(marks->src, i);
        if (!short_name_of(b, name))
            continue;
        int n = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", b);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return wfb_usage_error("%s %s: bookmark name '%s' is ambiguous (the instance waits on %s)",
                           opt, name, name, list);
}

static const char *dinst_mark(const void *d, size_t i)
{
    return wfm_dinst_bookmark_name(d, i);
}

int wfb_durable_finish(wfm_dinst *d, bool json)
{
    wfb_marks m = {wfm_dinst_id(d), wfm_dinst_bookmark_count(d), dinst_mark, d,
                   wfm_dinst_status(d)};
    return wfb_instance_result(wfm_dinst_instance(d), &m, json);
}

wf_status wfb_durable_drive(wfm_host *host, wfm_dinst *d, wf_error *err)
{
    for (;;) {
        wf_status st = wfm_host_run(host, d, err);
        if (st != WF_OK || !wfm_dinst_loaded(d))
            return st;
        /* still loaded while idle: a no-persist zone deferred the persist. A timer or a
         * Send's reply inside the zone is waited for; anything else cannot be persisted. */
        wfm_instance *inst = wfm_dinst_instance(d);
        if (wfm_instance_async_pending(inst)) { /* a Send waits for its reply */
            wfm_instance_wait_async(inst);
            continue;
        }
        int64_t due = wfm_instance_next_timer_us(inst);
        if (due == INT64_MAX)
            return wf_error_set(err, WF_E_STATE, NULL,
                                "instance '%s' went idle inside a no-persist zone (InvokeMethod"
                                " or TransactionScope) and cannot be persisted",
                                wfm_dinst_id(d));
        wfb_sleep_until(due);
    }
}

/* wfb_resume.c — `wfbridge resume [--store FILE] ID --bookmark NAME=VALUE`: load and lock a
 * persisted modern instance, resume its bookmark, run it to the next idle or completion,
 * persist it and print the contract result (with "instance_id"). Also the durable helpers
 * `run --store`, `host` and `inspect` share: opening store + host, and printing a result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../modern/wfm_durable.h"
#include "wfb_cli.h"
#include "wfb_durable.h"

static const char usage_text[] =
    "usage: wfbridge resume [--store FILE] ID [--bookmark NAME=VALUE]... [--json]\n"
    "                       [--durability full|normal] [--lib-path DIR]\n\n"
    "Load the persisted instance ID from the instance store (default: " WFB_DEFAULT_STORE
    " in\nthe working directory), taking its lease; resume each bookmark in order, run it to "
    "the\nnext idle or completion, persist it, release it and print the result.\n\n"
    "  --bookmark NAME=VALUE resume bookmark NAME with VALUE (JSON if it parses, else a\n"
    "                        string); without one the instance just continues (due timers,\n"
    "                        pending Persist requests)\n"
    "  --json                print the result as one JSON object on the last line of stdout\n"
    "  --durability D        full (default: fsync every commit) or normal (WAL, survives a\n"
    "                        process crash, a power loss may drop the last commits)\n"
    "  --lib-path DIR        where native libraries are found (default $WFBRIDGE_LIB_PATH)\n\n"
    "When another live host holds the instance, each --bookmark is queued in the store\n"
    "instead (exit 0): that host, or the next one to run the instance, applies the queued\n"
    "resumptions in order; resumptions queued earlier also go before these ones.\n\n"
    "Exit status: 0 Closed, Idle or queued, 1 Faulted, Canceled or Terminated, 2 usage or\n"
    "input error (unknown id, instance locked without a bookmark to queue, unknown bookmark,\n"
    "bad state).\n";

/* ---- shared durable helpers --------------------------------------------------------------- */
int wfb_parse_durability(const char *verb, const char *text, int *out)
{
    if (strcmp(text, "full") == 0)
        *out = WFM_DURABILITY_FULL;
    else if (strcmp(text, "normal") == 0)
        *out = WFM_DURABILITY_NORMAL;
    else
        return wfb_usage_error(verb, "--durability needs full or normal, not '%s'", text);
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

int wfb_instance_result(const wfm_instance *inst, const wfb_marks *marks_of, bool json,
                        const char *oom_text)
{
    wfm_instance_state state = wfm_instance_state_get(inst);
    wfb_result r = {0};
    r.status = wfm_instance_state_name(state);
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
        fprintf(stderr, "%s\n", oom_text);
    }
    wf_free(names);
    wf_free(values);
    wf_free(marks);
    return rc;
}

static const char *dinst_mark(const void *d, size_t i)
{
    return wfm_dinst_bookmark_name(d, i);
}

int wfb_durable_finish(wfm_dinst *d, bool json)
{
    wfb_marks m = {wfm_dinst_id(d), wfm_dinst_bookmark_count(d), dinst_mark, d};
    return wfb_instance_result(wfm_dinst_instance(d), &m, json, "wfbridge: out of memory");
}

static void sleep_until_us(int64_t due_us)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t wait = due_us - ((int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000);
    if (wait <= 0)
        return;
    struct timespec ts = {(time_t)(wait / 1000000), (long)(wait % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

wf_status wfb_durable_drive(wfm_host *host, wfm_dinst *d, wf_error *err)
{
    for (;;) {
        wf_status st = wfm_host_run(host, d, err);
        if (st != WF_OK || !wfm_dinst_loaded(d))
            return st;
        /* still loaded while idle: a no-persist zone deferred the persist. A timer inside the
         * zone is waited for; anything else cannot be persisted. */
        wfm_instance *inst = wfm_dinst_instance(d);
        int64_t due = wfm_instance_next_timer_us(inst);
        if (due == INT64_MAX)
            return wf_error_set(err, WF_E_STATE, NULL,
                                "instance '%s' went idle inside a no-persist zone (InvokeMethod"
                                " or TransactionScope) and cannot be persisted",
                                wfm_dinst_id(d));
        sleep_until_us(due);
    }
}

/* The payload of a NAME=VALUE: JSON when it parses, else the text itself. */
wf_status wfb_payload(wfm_runtime *rt, const char *text, wf_value *out, wf_error *err)
{
    *out = wf_null();
    if (wf_json_parse(wfm_runtime_types(rt), text, strlen(text), out, err) == WF_OK)
        return WF_OK;
    wf_error_clear(err);
    if (wf_value_cstring(text, out) != WF_OK)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return WF_OK;
}

/* ---- resume -------------------------------------------------------------------------------- */
typedef struct resume_opts {
    const char *store, *id, *lib_path;
    const char **bookmarks;
    size_t bookmark_count;
    bool json;
    int durability;
} resume_opts;

static int parse_opts(int argc, char **argv, resume_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--store") == 0 && has_value) {
            o->store = argv[++i];
        } else if (strcmp(a, "--bookmark") == 0 && has_value) {
            const char *b = argv[++i];
            const char *eq = strchr(b, '=');
            if (!eq || eq == b)
                return wfb_usage_error("resume", "--bookmark needs NAME=VALUE, not '%s'", b);
            o->bookmarks[o->bookmark_count++] = b;
        } else if (strcmp(a, "--lib-path") == 0 && has_value) {
            o->lib_path = argv[++i];
        } else if (strcmp(a, "--durability") == 0 && has_value) {
            if (wfb_parse_durability("resume", argv[++i], &o->durability))
                return 2;
        } else if (a[0] == '-' && a[1] == '-') {
            return wfb_usage_error("resume", "unknown or incomplete option '%s'", a);
        } else if (!o->id) {
            o->id = a;
        } else {
            return wfb_usage_error("resume", "more than one instance id ('%s')", a);
        }
    }
    if (!o->id)
        return wfb_usage_error("resume", "no instance id given");
    return 0;
}

static wf_status resume_bookmark(wfm_runtime *rt, wfm_host *host, wfm_dinst *d, const char *text,
                                 wf_error *err)
{
    char *name = NULL;
    const char *value = NULL;
    if (!wfb_split_assignment(text, &name, &value))
        return wf_error_set(err, WF_E_USAGE, NULL, "--bookmark needs NAME=VALUE, not '%s'", text);
    wf_value payload;
    wf_status st = wfb_payload(rt, value, &payload, err);
    if (st == WF_OK)
        st = wfm_host_resume(host, d, name, &payload, err);
    if (st == WF_E_NOTFOUND)
        wf_error_prefix(err, "instance '%s': ", wfm_dinst_id(d));
    wf_value_release(&payload);
    wf_free(name);
    return st;
}

/* ---- queueing for an instance another host holds ------------------------------------------ */
static bool count_queued(void *ud, const wfm_store_resume *r)
{
    (void)r;
    (*(size_t *)ud)++;
    return true;
}

/* Queue every --bookmark of o in the store's pending resumptions, in order. */
static wf_status queue_bookmarks(wfm_runtime *rt, wfm_store *store, const resume_opts *o,
                                 wf_error *err)
{
    wf_status st = WF_OK;
    for (size_t i = 0; st == WF_OK && i < o->bookmark_count; i++) {
        char *name = NULL;
        const char *value = NULL;
        if (!wfb_split_assignment(o->bookmarks[i], &name, &value))
            return wf_error_set(err, WF_E_USAGE, NULL, "--bookmark needs NAME=VALUE, not '%s'",
                                o->bookmarks[i]);
        wf_value payload = wf_null();
        wf_buf json;
        wf_buf_init(&json);
        st = wfb_payload(rt, value, &payload, err);
        if (st == WF_OK && (!wf_value_to_json(&payload, &json) || json.oom || !json.data))
            st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        int64_t seq = 0;
        if (st == WF_OK)
            st = wfm_store_enqueue_resume(store, o->id, name, json.data, &seq, err);
        if (st == WF_OK && !o->json)
            printf("instance %s: resumption of bookmark '%s' queued (#%lld)\n", o->id, name,
                   (long long)seq);
        wf_buf_fini(&json);
        wf_value_release(&payload);
        wf_free(name);
    }
    return st;
}

/* The instance is leased by another live host: queue the resumptions for it (that host, or
 * the next one to run the instance, applies them in order). Exit 0 once queued. */
static int queue_for_other_host(wfm_runtime *rt, wfm_store *store, const resume_opts *o,
                                wf_error *err)
{
    if (queue_bookmarks(rt, store, o, err) != WF_OK)
        return wfb_report(err);
    if (o->json)
        printf("{\"instance_id\": \"%s\", \"status\": \"Queued\"}\n", o->id);
    else
        printf("instance %s is locked by another host: %zu resumption(s) queued\n", o->id,
               o->bookmark_count);
    return 0;
}

static int resume_instance(const resume_opts *o)
{
    wf_error err = WF_ERROR_INIT;
    wf_libpath *libpath = NULL;
    wfm_runtime *rt = NULL;
    wfm_store *store = NULL;
    wfm_host *host = NULL;
    wfm_dinst *d = NULL;
    int rc = 2;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    wfb_durable_cfg cfg = {wfb_store_name(o->store), true, o->durability, NULL, 0};
    if (wfb_libpath(o->lib_path, &libpath, &err) != WF_OK)
        goto fail;
    ro.libpath = libpath;
    ro.worker_count = 1;
    if (wfm_runtime_create(&ro, &rt, &err) != WF_OK ||
        wfb_durable_open(&cfg, rt, &store, &host, &err) != WF_OK)
        goto fail;
    wf_status st = wfm_host_load(host, o->id, &d, &err);
    if (st == WF_E_LOCKED && o->bookmark_count > 0) {
        wf_error_clear(&err);
        rc = queue_for_other_host(rt, store, o, &err);
        goto done;
    }
    if (st != WF_OK)
        goto fail;
    /* resumptions queued earlier go first: queue these behind them and run */
    size_t queued = 0;
    if (o->bookmark_count > 0 &&
        wfm_store_pending_resumes(store, o->id, count_queued, &queued, &err) != WF_OK)
        goto fail;
    if (queued > 0) {
        if (queue_bookmarks(rt, store, o, &err) != WF_OK || wfb_durable_drive(host, d, &err) != WF_OK)
            goto fail;
        rc = wfb_durable_finish(d, o->json);
        goto done;
    }
    for (size_t i = 0; i < o->bookmark_count; i++) {
        if (i > 0 && wfm_dinst_loaded(d) == false) {
            /* the previous run unloaded it: load it again for the next bookmark */
            wfm_dinst_close(d);
            d = NULL;
            if (wfm_host_load(host, o->id, &d, &err) != WF_OK)
                goto fail;
        }
        if (resume_bookmark(rt, host, d, o->bookmarks[i], &err) != WF_OK ||
            wfb_durable_drive(host, d, &err) != WF_OK)
            goto fail;
    }
    if (o->bookmark_count == 0 && wfb_durable_drive(host, d, &err) != WF_OK)
        goto fail;
    rc = wfb_durable_finish(d, o->json);
    goto done;
fail:
    rc = wfb_fail("resume", &err);
done:
    wfm_dinst_close(d);
    wfm_host_destroy(host);
    wfm_store_close(store);
    wfm_runtime_destroy(rt);
    wf_libpath_destroy(libpath);
    return rc;
}

int wfb_cmd_resume(int argc, char **argv)
{
    if (wfb_wants_help(argc, argv, usage_text))
        return 0;
    resume_opts o = {0};
    o.bookmarks = wf_calloc((size_t)argc, sizeof *o.bookmarks);
    int rc = o.bookmarks ? parse_opts(argc, argv, &o) : 2;
    if (rc == 0)
        rc = resume_instance(&o);
    wf_free(o.bookmarks);
    return rc;
}

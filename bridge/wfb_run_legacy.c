/* wfb_run_legacy.c — `wfbridge run-legacy`: load a .xoml (+ .rules, type libraries), run it on
 * the legacy executor, deliver --event payloads whenever the instance waits on their queue,
 * wait for (or, with --store, persist across) timers, and print the contract JSON
 * (docs/formats.md "Output contracts"). Only this file prints; the executor never does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/wf_mem.h"
#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "../legacy/wfl_store.h"
#include "wfb_cli.h"

#define VERB "run-legacy"

static const char usage_text[] =
    "usage: wfbridge run-legacy FILE.xoml [--rules FILE] [--lib-path DIR]\n"
    "         [--arg NAME=VALUE]... [--event NAME=PAYLOAD]... [--store FILE [--instance ID]]\n"
    "         [--json] [--trace] [--max-steps N]\n"
    "\n"
    "Run a legacy (WF3) workflow unchanged on the legacy executor.\n"
    "\n"
    "  --rules FILE      the .rules file (default: FILE.rules beside FILE.xoml, if present)\n"
    "  --lib-path DIR    where NAME.activities.xml and libNAME.so are found (dir1:dir2);\n"
    "                    default $WFBRIDGE_LIB_PATH\n"
    "  --arg NAME=VALUE  set a root property (VALUE read as its type; lists as JSON)\n"
    "  --event NAME=PAYLOAD\n"
    "                    deliver an external event when the workflow waits for it; NAME is\n"
    "                    the event ('Approved') or its queue ('IApprovalService.Approved');\n"
    "                    PAYLOAD is a JSON object of the event's parameters or a bare value\n"
    "                    when it has one; events are delivered in the order given\n"
    "  --store FILE      persist the instance in FILE (SQLite) at persistence points and when\n"
    "                    idle; a pending Delay then ends the run as Idle instead of waiting\n"
    "  --instance ID     resume instance ID from --store (FILE.xoml must be the same);\n"
    "                    a suspended instance is resumed\n"
    "  --json            print the result as one JSON object on the last line of stdout:\n"
    "                    {\"status\", \"outputs\", \"bookmarks\", \"error\"}; bookmarks are the\n"
    "                    event queues an Idle instance waits on, named Interface.Event\n"
    "  --trace           print every native call to stderr as a JSON line\n"
    "                    {\"activity\", \"function\", \"in\", \"out\"}\n"
    "  --max-steps N     stop with an error after N work items without going idle (a loop\n"
    "                    that never waits; WF3 itself would spin forever); default 10000000,\n"
    "                    0 for no limit\n"
    "\n"
    "An unhandled exception terminates the instance (status Terminated with the error).\n"
    "Exit status: 0 Closed or Idle, 1 the workflow faulted/terminated, 2 usage or input error.\n";

typedef struct opts {
    const char *file, *rules, *lib_path, *store, *instance;
    const char **args, **events;
    size_t arg_count, event_count;
    bool json, trace;
    uint64_t max_steps;
} opts;

typedef struct run {
    opts o;
    wf_types *types;
    wf_libpath *libpath;
    wfl_definition *def;
    wfl_exec *ex;
    wfl_store *store;
    size_t next_event;
} run;

static int parse_args(int argc, char **argv, opts *o)
{
    o->max_steps = 10000000;
    o->args = calloc((size_t)argc, sizeof(char *));
    o->events = calloc((size_t)argc, sizeof(char *));
    if (!o->args || !o->events)
        return wfb_usage_error(VERB, "out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (strcmp(a, "--json") == 0)
            o->json = true;
        else if (strcmp(a, "--trace") == 0)
            o->trace = true;
        else if (strcmp(a, "--rules") == 0 && has_val)
            o->rules = argv[++i];
        else if (strcmp(a, "--lib-path") == 0 && has_val)
            o->lib_path = argv[++i];
        else if (strcmp(a, "--store") == 0 && has_val)
            o->store = argv[++i];
        else if (strcmp(a, "--instance") == 0 && has_val)
            o->instance = argv[++i];
        else if (strcmp(a, "--max-steps") == 0 && has_val) {
            char *end;
            const char *v = argv[++i];
            o->max_steps = strtoull(v, &end, 10);
            if (*v < '0' || *v > '9' || *end)
                return wfb_usage_error(VERB, "--max-steps needs a whole number, not '%s'", v);
        }
        else if (strcmp(a, "--arg") == 0 && has_val)
            o->args[o->arg_count++] = argv[++i];
        else if (strcmp(a, "--event") == 0 && has_val)
            o->events[o->event_count++] = argv[++i];
        else if (a[0] == '-' && a[1])
            return wfb_usage_error(VERB, "unknown or incomplete option '%s'", a);
        else if (o->file)
            return wfb_usage_error(VERB, "more than one definition file ('%s')", a);
        else
            o->file = a;
    }
    if (!o->file)
        return wfb_usage_error(VERB, "no FILE.xoml given");
    if (o->instance && !o->store)
        return wfb_usage_error(VERB, "--instance needs --store");
    return 0;
}

/* ---- tracing: one JSON line per native call ------------------------------------------------ */
static void json_members(wf_buf *b, const char *const *names, const wf_value *values, size_t n)
{
    wf_buf_addc(b, '{');
    for (size_t i = 0; i < n; i++) {
        if (i)
            wf_buf_adds(b, ", ");
        wf_buf_add_json_string(b, names[i], strlen(names[i]));
        wf_buf_adds(b, ": ");
        wf_value_to_json(&values[i], b);
    }
    wf_buf_addc(b, '}');
}

static void trace_cb(void *ud, const wfl_trace_rec *rec)
{
    (void)ud;
    if (rec->kind != WFL_TRACE_NATIVE)
        return;
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(&b, "{\"activity\": ");
    wf_buf_add_json_string(&b, rec->activity, strlen(rec->activity));
    wf_buf_adds(&b, ", \"function\": ");
    wf_buf_add_json_string(&b, rec->function, strlen(rec->function));
    wf_buf_adds(&b, ", \"in\": ");
    json_members(&b, rec->in_names, rec->in_values, rec->in_count);
    wf_buf_adds(&b, ", \"out\": ");
    json_members(&b, rec->out_names, rec->out_values, rec->out_count);
    wf_buf_adds(&b, "}\n");
    if (!b.oom)
        fputs(b.data, stderr);
    wf_buf_fini(&b);
}

/* ---- persistence ------------------------------------------------------------------------------
 */
static wf_status save_now(run *r, wf_error *err)
{
    if (!r->store)
        return WF_OK;
    void *blob = NULL;
    size_t len = 0;
    wf_status rc = wfl_exec_save(r->ex, &blob, &len, err);
    if (rc == WF_OK)
        rc = wfl_store_save(r->store, wfl_exec_instance_id(r->ex),
                            wfl_exec_state_name(wfl_exec_state_get(r->ex)), blob, len, err);
    wf_free(blob);
    return rc;
}

static wf_status persist_cb(void *ud, wfl_exec *ex, wf_error *err)
{
    (void)ex;
    return save_now(ud, err);
}

/* ---- loading ----------------------------------------------------------------------------------
 */
static int load(run *r)
{
    wf_error err = WF_ERROR_INIT;
    r->types = wf_types_create();
    wf_diags *diags = wf_diags_create();
    if (!r->types || !diags) {
        wf_diags_destroy(diags);
        return wfb_usage_error(VERB, "out of memory");
    }
    if (wfb_libpath(r->o.lib_path, &r->libpath, &err) != WF_OK) {
        wf_diags_destroy(diags);
        return wfb_report(&err);
    }
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = r->types;
    lo.libpath = r->libpath;
    lo.rules_path = r->o.rules;
    lo.diags = diags;
    wf_status rc = wfl_definition_load_file(&lo, r->o.file, &r->def, &err);
    int code = wfb_report_diags(diags);
    if (rc != WF_OK && code == 0)
        code = wfb_report(&err);
    wf_diags_destroy(diags);
    if (rc != WF_OK)
        return code ? code : 2;
    return 0;
}

static int start(run *r)
{
    wf_error err = WF_ERROR_INIT;
    wfl_exec_opts eo = WFL_EXEC_OPTS_INIT;
    eo.max_work_items = r->o.max_steps;
    if (r->o.trace)
        eo.trace = trace_cb;
    if (r->o.store) {
        if (wfl_store_open(r->o.store, &r->store, &err) != WF_OK)
            return wfb_report(&err);
        eo.persist = persist_cb;
        eo.persist_ud = r;
    }
    if (r->o.instance) {
        void *blob = NULL;
        size_t len = 0;
        wf_status rc = wfl_store_load(r->store, r->o.instance, &blob, &len, &err);
        if (rc == WF_OK)
            rc = wfl_exec_restore(r->def, &eo, blob, len, &r->ex, &err);
        wf_free(blob);
        if (rc != WF_OK)
            return wfb_report(&err);
        if (r->o.arg_count)
            return wfb_usage_error(VERB, "--arg cannot change a resumed instance");
        return 0;
    }
    if (wfl_exec_create(r->def, NULL, &eo, &r->ex, &err) != WF_OK)
        return wfb_report(&err);
    for (size_t i = 0; i < r->o.arg_count; i++) {
        char *name = NULL;
        const char *value = NULL;
        if (!wfb_split_assignment(r->o.args[i], &name, &value))
            return wfb_usage_error(VERB, "--arg expects NAME=VALUE, got '%s'", r->o.args[i]);
        wf_status rc = wfl_exec_set_input_text(r->ex, name, value, &err);
        wf_free(name);
        if (rc != WF_OK)
            return wfb_report(&err);
    }
    return 0;
}

/* ---- driving ----------------------------------------------------------------------------------
 */
static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static wf_status parse_payload(run *r, const char *text, wf_value *out, wf_error *err)
{
    if (wf_json_parse(r->types, text, strlen(text), out, NULL) == WF_OK)
        return WF_OK;
    return wf_value_cstring(text, out) == WF_OK
               ? WF_OK
               : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

/* Deliver the next --event if its queue is waited on. 1 delivered, 0 not now, -1 error. */
static int deliver_next(run *r, wfl_exec_state *st, wf_error *err)
{
    if (r->next_event >= r->o.event_count)
        return 0;
    char *name = NULL;
    const char *payload = NULL;
    if (!wfb_split_assignment(r->o.events[r->next_event], &name, &payload)) {
        wf_error_set(err, WF_E_USAGE, NULL, "--event expects NAME=PAYLOAD, got '%s'",
                     r->o.events[r->next_event]);
        return -1;
    }
    const char *queue = wfl_exec_queue_find(r->ex, name);
    wf_free(name);
    if (!queue)
        return 0;
    wf_value v = wf_null();
    if (parse_payload(r, payload, &v, err) != WF_OK)
        return -1;
    r->next_event++;
    char qname[512];
    snprintf(qname, sizeof qname, "%s", queue);
    wf_status rc = wfl_exec_deliver(r->ex, qname, &v, st, err);
    wf_value_release(&v);
    return rc == WF_OK ? 1 : -1;
}

static int drive(run *r, wfl_exec_state *st)
{
    wf_error err = WF_ERROR_INIT;
    *st = wfl_exec_state_get(r->ex);
    if (*st == WFL_EXEC_CREATED && wfl_exec_run(r->ex, st, &err) != WF_OK)
        return wfb_report(&err);
    /* a suspended instance loaded from the store is resumed by this run (WF3's Resume) */
    if (*st == WFL_EXEC_SUSPENDED && r->o.instance && wfl_exec_resume(r->ex, st, &err) != WF_OK)
        return wfb_report(&err);
    while (*st == WFL_EXEC_IDLE) {
        int64_t due;
        if (wfl_exec_next_timer(r->ex, &due) && due <= now_us()) { /* overdue timers first */
            if (wfl_exec_fire_timers(r->ex, now_us(), st, &err) != WF_OK)
                return wfb_report(&err);
            continue;
        }
        int d = deliver_next(r, st, &err);
        if (d < 0)
            return wfb_report(&err);
        if (d > 0)
            continue;
        if (!wfl_exec_next_timer(r->ex, &due) || (r->store && due > now_us()))
            break; /* with a store, a pending timer is persisted instead of waited for */
        int64_t wait = due - now_us();
        if (wait > 0) {
            struct timespec ts = {(time_t)(wait / 1000000), (long)(wait % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
        if (wfl_exec_fire_timers(r->ex, now_us(), st, &err) != WF_OK)
            return wfb_report(&err);
    }
    for (size_t i = r->next_event; i < r->o.event_count; i++)
        fprintf(stderr,
                "wfbridge run-legacy: warning: event '%s' was not delivered (the "
                "workflow is not waiting for it)\n",
                r->o.events[i]);
    if (save_now(r, &err) != WF_OK)
        return wfb_report(&err);
    return 0;
}

/* ---- output ------------------------------------------------------------------------------------
 */
static const char *status_text(wfl_exec_state st)
{
    /* An unhandled exception terminates a WF3 instance (WorkflowTerminated). */
    return st == WFL_EXEC_FAULTED ? "Terminated" : wfl_exec_state_name(st);
}

static int print_result(run *r, wfl_exec_state st)
{
    wf_error err = WF_ERROR_INIT;
    size_t n = wfl_exec_output_count(r->ex), nq = wfl_exec_queue_count(r->ex), nb = 0;
    const char **names = calloc(n + 1, sizeof *names);
    wf_value *vals = calloc(n + 1, sizeof *vals);
    const char **bms = calloc(nq + 1, sizeof *bms);
    int code = 0;
    if (!names || !vals || !bms) {
        code = wfb_usage_error(VERB, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        names[i] = wfl_exec_output_name(r->ex, i);
        if (wfl_exec_output_value(r->ex, i, &vals[i], &err) != WF_OK) {
            code = wfb_report(&err);
            goto done;
        }
    }
    for (size_t i = 0; st == WFL_EXEC_IDLE && i < nq; i++)
        if (!wfl_exec_queue_is_timer(r->ex, i) &&
            strcmp(wfl_exec_queue_name(r->ex, i), "SetStateQueue") != 0)
            bms[nb++] = wfl_exec_queue_name(r->ex, i);
    const wf_value *exc = wfl_exec_exception(r->ex);
    bool has_err =
        exc->type->kind == WF_K_EXCEPTION &&
        (st == WFL_EXEC_FAULTED || st == WFL_EXEC_TERMINATED || st == WFL_EXEC_SUSPENDED);
    wfb_result res = {status_text(st),
                      names,
                      vals,
                      n,
                      bms,
                      nb,
                      has_err ? exc->type->name : NULL,
                      has_err ? wf_value_exc_message(exc) : NULL,
                      r->store ? wfl_exec_instance_id(r->ex) : NULL};
    if (r->o.json) {
        wfb_print_result(stdout, &res);
    } else {
        printf("status: %s\n", res.status);
        if (res.instance_id)
            printf("instance: %s\n", res.instance_id);
        for (size_t i = 0; i < n; i++) {
            wf_buf b;
            wf_buf_init(&b);
            wf_value_to_text(&vals[i], &b);
            printf("  %s = %s\n", names[i], b.oom ? "?" : b.data);
            wf_buf_fini(&b);
        }
        for (size_t i = 0; i < nb; i++)
            printf("waiting: %s\n", bms[i]);
        if (has_err)
            printf("error: %s: %s\n", res.error_type, res.error_message);
    }
    code = wfb_status_exit_code(res.status);
done:
    for (size_t i = 0; vals && i < n; i++)
        wf_value_release(&vals[i]);
    free(names);
    free(vals);
    free(bms);
    return code;
}

int wfb_cmd_run_legacy(int argc, char **argv)
{
    if (wfb_wants_help(argc, argv, usage_text))
        return 0;
    run r;
    memset(&r, 0, sizeof r);
    int code = parse_args(argc, argv, &r.o);
    if (code == 0)
        code = load(&r);
    if (code == 0)
        code = start(&r);
    wfl_exec_state st = WFL_EXEC_CREATED;
    if (code == 0)
        code = drive(&r, &st);
    if (code == 0)
        code = print_result(&r, st);
    wfl_exec_destroy(r.ex);
    wfl_store_close(r.store);
    wfl_definition_destroy(r.def);
    wf_libpath_destroy(r.libpath);
    wf_types_destroy(r.types);
    free(r.o.args);
    free(r.o.events);
    return code;
}

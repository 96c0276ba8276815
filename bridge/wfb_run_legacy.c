/* wfb_run_legacy.c — `wfbridge run-legacy`: load a .xoml (+ .rules, type libraries), run it on
 * the legacy executor, deliver --event payloads whenever the instance waits on their queue,
 * wait for (or, with --store, persist across) timers, and print the contract JSON
 * (docs/formats.md "Output contracts"). Only this file prints; the executor never does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "../legacy/wfl_store.h"
#include "wfb_cli.h"
#include "wfb_migrate_home.h"

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
    "  --arg NAME=VALUE  set a root property, once each (VALUE read as its type; lists as\n"
    "                    JSON that must match the type exactly)\n"
    "  --event NAME=PAYLOAD\n"
    "                    deliver an external event when the workflow waits for it; NAME is\n"
    "                    the event ('Approved') or its queue ('IApprovalService.Approved');\n"
    "                    PAYLOAD is a JSON object of the event's parameters or a bare value\n"
    "                    when it has one; once per event (in either spelling), delivered\n"
    "                    in the order given\n"
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
    wfb_assigns args, events;
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
    wf_value *arg_values, *event_values; /* converted before anything runs */
    size_t next_event;
} run;

static const struct option options[] = {
    {"rules", required_argument, NULL, 'R'},     {"lib-path", required_argument, NULL, 'L'},
    {"arg", required_argument, NULL, 'a'},       {"event", required_argument, NULL, 'e'},
    {"store", required_argument, NULL, 's'},     {"instance", required_argument, NULL, 'i'},
    {"json", no_argument, NULL, 'j'},            {"trace", no_argument, NULL, 'T'},
    {"max-steps", required_argument, NULL, 'm'}, {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The event part of an --event NAME: after the last '.' of a queue name, else the name. */
static const char *event_part(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

/* Once per event (the help's rule): a name given before is refused by wfb_assigns_add, and so
 * is the other spelling of one given before, an event ("Approved") against a queue ending in
 * it ("IExpenseService.Approved"), as wfl_exec_queue_find resolves the short name to it. */
static int add_event(wfb_assigns *events, const char *text)
{
    int rc = wfb_assigns_add(events, text, true);
    if (rc != 0)
        return rc;
    const char *name = events->names[events->count - 1];
    for (size_t i = 0; i + 1 < events->count; i++) {
        const char *was = events->names[i];
        bool short_was = !strchr(was, '.'), short_name = !strchr(name, '.');
        if (short_was != short_name && strcmp(event_part(was), event_part(name)) == 0)
            return wfb_usage_error("--event %s is given more than once (as %s)", name, was);
    }
    return 0;
}

/* One option into o; 0, 2 (reported) or -1 (help printed). */
static int take_opt(int c, opts *o)
{
    unsigned long long n;
    switch (c) {
    case 'h':
        return wfb_help(usage_text), -1;
    case 'R':
        o->rules = optarg;
        return 0;
    case 'L':
        o->lib_path = optarg;
        return 0;
    case 'a':
        return wfb_assigns_add(&o->args, optarg, true);
    case 'e':
        return add_event(&o->events, optarg);
    case 's':
        o->store = optarg;
        return 0;
    case 'i':
        o->instance = optarg;
        return 0;
    case 'j':
        o->json = true;
        return 0;
    case 'T':
        o->trace = true;
        return 0;
    case 'm':
        if (wfb_parse_count("--max-steps", optarg, 0, UINT64_MAX, &n))
            return 2;
        o->max_steps = n;
        return 0;
    default:
        return 2;
    }
}

static int parse_args(int argc, char **argv, opts *o)
{
    o->max_steps = 10000000;
    int c;
    while ((c = wfb_getopt(argc, argv, options)) != -1) {
        int rc = take_opt(c, o);
        if (rc)
            return rc;
    }
    if (wfb_operand(argc, argv, "FILE.xoml", &o->file))
        return 2;
    if (o->instance && !o->store)
        return wfb_usage_error("--instance needs --store");
    if (o->instance && o->args.count)
        return wfb_usage_error("--arg cannot change a resumed instance (--instance)");
    return 0;
}

/* ---- tracing: one JSON line per native call ------------------------------------------------ */
static void trace_cb(void *ud, const wfl_trace_rec *rec)
{
    (void)ud;
    if (rec->kind != WFL_TRACE_NATIVE)
        return;
    json_t *line = json_pack(
        "{s:o, s:o, s:o, s:o}", "activity", wf_jsonw_str(rec->activity), "function",
        wf_jsonw_str(rec->function), "in",
        wf_jsonw_members(rec->in_names, rec->in_values, rec->in_count, false), "out",
        wf_jsonw_members(rec->out_names, rec->out_values, rec->out_count, false));
    if (line)
        wf_jsonw_print(stderr, line, WF_JSONW_SPACED);
    json_decref(line);
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

/* ---- loading and checking ------------------------------------------------------------------ */
static int load(run *r)
{
    wf_error err = WF_ERROR_INIT;
    r->types = wf_types_create();
    wf_diags *diags = wf_diags_create();
    if (!r->types || !diags) {
        wf_diags_destroy(diags);
        return wfb_error("out of memory");
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
    int code = wfb_report_diags(diags, r->libpath == NULL);
    if (rc != WF_OK && code == 0)
        code = wfb_report(&err);
    wf_diags_destroy(diags);
    if (rc != WF_OK)
        return code ? code : 2;
    return 0;
}

/* Comma-separated names for "(it declares: A, B)". */
static void param_list(const wfl_definition *def, char *buf, size_t size)
{
    snprintf(buf, size, "none");
    for (size_t i = 0, used = 0; i < wfl_definition_param_count(def); i++) {
        wfl_param_info p;
        wfl_definition_param(def, i, &p);
        used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s%s",
                                 i ? ", " : "", p.name);
    }
}

/* An --event payload against the event's declared parameters, by the rule every verb shares
 * (wfl_tl_event_bind, docs/formats.md "Event payloads"). */
static wf_status check_event(const run *r, size_t i, wf_error *err)
{
    const char *name = r->o.events.names[i];
    const wfl_tl_event *ev = NULL;
    wf_loc loc = {r->o.file, 0, 0};
    if (!wfl_definition_find_event(r->def, name, &ev))
        return wf_error_set(err, WF_E_NAME, &loc,
                            "--event %s: no HandleExternalEvent of the workflow waits for "
                            "an event '%s'",
                            name, name);
    if (!ev)
        return WF_OK; /* the interface has no type library: the payload binds to "e" */
    wf_value bound = wf_null();
    wf_status st = wfl_tl_event_bind(ev, &r->event_values[i], &bound, err);
    wf_value_release(&bound);
    if (st != WF_OK)
        wf_error_prefix(err, "--event %s: event %s: ", name, wfl_tl_event_name(ev));
    return st;
}

/* Every --arg and --event converted and checked against the definition before anything runs. */
static int check_inputs(run *r)
{
    const opts *o = &r->o;
    r->arg_values = wf_calloc(o->args.count + 1, sizeof *r->arg_values);
    r->event_values = wf_calloc(o->events.count + 1, sizeof *r->event_values);
    if (!r->arg_values || !r->event_values)
        return wfb_error("out of memory");
    for (size_t i = 0; i < o->args.count; i++)
        r->arg_values[i] = wf_null();
    for (size_t i = 0; i < o->events.count; i++)
        r->event_values[i] = wf_null();
    wf_loc loc = {o->file, 0, 0};
    char names[512];
    for (size_t i = 0; i < o->args.count; i++) {
        wf_error err = WF_ERROR_INIT;
        wfl_param_info p;
        if (!wfl_definition_find_param(r->def, o->args.names[i], &p)) {
            param_list(r->def, names, sizeof names);
            wf_error_set(&err, WF_E_NAME, &loc,
                         "--arg %s: the workflow has no property '%s' (it declares: %s)",
                         o->args.names[i], o->args.names[i], names);
        } else {
            wfb_value_from_text(r->types, p.type, "--arg", p.name, o->args.values[i],
                                &r->arg_values[i], &err);
        }
        if (err.code != WF_OK)
            return wfb_report(&err);
    }
    for (size_t i = 0; i < o->events.count; i++) {
        wf_error err = WF_ERROR_INIT;
        if (wfb_payload_from_text(r->types, "--event", o->events.names[i], o->events.values[i],
                                  &r->event_values[i], &err) != WF_OK ||
            check_event(r, i, &err) != WF_OK)
            return wfb_report(&err);
    }
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
        wfb_home home = WFB_HOME_LEGACY; /* a move left in doubt is settled first */
        bool held = false;
        wf_status rc = wfb_migrate_settle(r->store, r->o.instance, &home, &held, &err);
        if (rc == WF_OK && held)
            rc = wf_error_set(&err, WF_E_STATE, NULL,
                              "instance '%s' is being migrated to a modern store by a running "
                              "wfbridge migrate-instances",
                              r->o.instance);
        if (rc == WF_OK || rc == WF_E_NOTFOUND)
            rc = wfl_store_load(r->store, r->o.instance, &blob, &len, &err);
        if (rc == WF_OK)
            rc = wfl_exec_restore(r->def, &eo, blob, len, &r->ex, &err);
        wf_free(blob);
        return rc == WF_OK ? 0 : wfb_report(&err);
    }
    if (wfl_exec_create(r->def, NULL, &eo, &r->ex, &err) != WF_OK)
        return wfb_report(&err);
    for (size_t i = 0; i < r->o.args.count; i++) {
        if (wfl_exec_set_input(r->ex, r->o.args.names[i], &r->arg_values[i], &err) != WF_OK) {
            wf_error_prefix(&err, "--arg %s: ", r->o.args.names[i]);
            return wfb_report_in_file(&err, r->o.file);
        }
    }
    return 0;
}

/* ---- driving ----------------------------------------------------------------------------------
 */
/* Deliver the next --event if its queue is waited on. 1 delivered, 0 not now, -1 error. */
static int deliver_next(run *r, wfl_exec_state *st, wf_error *err)
{
    if (r->next_event >= r->o.events.count)
        return 0;
    const char *queue = wfl_exec_queue_find(r->ex, r->o.events.names[r->next_event]);
    if (!queue)
        return 0;
    const wf_value *v = &r->event_values[r->next_event++];
    char qname[512];
    snprintf(qname, sizeof qname, "%s", queue);
    return wfl_exec_deliver(r->ex, qname, v, st, err) == WF_OK ? 1 : -1;
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
        if (wfl_exec_next_timer(r->ex, &due) && due <= wfb_now_us()) { /* overdue timers first */
            if (wfl_exec_fire_timers(r->ex, wfb_now_us(), st, &err) != WF_OK)
                return wfb_report(&err);
            continue;
        }
        int d = deliver_next(r, st, &err);
        if (d < 0)
            return wfb_report(&err);
        if (d > 0)
            continue;
        if (!wfl_exec_next_timer(r->ex, &due) || (r->store && due > wfb_now_us()))
            break; /* with a store, a pending timer is persisted instead of waited for */
        wfb_sleep_until(due);
        if (wfl_exec_fire_timers(r->ex, wfb_now_us(), st, &err) != WF_OK)
            return wfb_report(&err);
    }
    for (size_t i = r->next_event; i < r->o.events.count; i++)
        wfb_warning("--event %s was not delivered (the workflow is not waiting for it)",
                    r->o.events.names[i]);
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

/* An unhandled fault, reported as every runtime reports one: on stderr at the activity that
 * threw it (the definition file when no activity did). */
static void report_fault(const run *r, const char *type, const char *message)
{
    wf_loc loc = wfl_exec_fault_loc(r->ex);
    if (!loc.file)
        loc = (wf_loc){r->o.file, 0, 0};
    wf_error e = WF_ERROR_INIT;
    wf_error_set(&e, WF_E_FAULT, &loc, "%s: %s", type, message);
    wfb_report(&e);
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
        code = wfb_error("out of memory");
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
    if (has_err && (st == WFL_EXEC_FAULTED || st == WFL_EXEC_TERMINATED))
        report_fault(r, res.error_type, res.error_message);
    else if (has_err && st == WFL_EXEC_SUSPENDED) /* a SuspendActivity: its Error text */
        report_fault(r, "suspended", res.error_message);
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

static void release_values(wf_value *values, size_t n)
{
    for (size_t i = 0; values && i < n; i++)
        wf_value_release(&values[i]);
    wf_free(values);
}

int wfb_cmd_run_legacy(int argc, char **argv)
{
    wfb_verb_begin("run-legacy");
    run r;
    memset(&r, 0, sizeof r);
    r.o.args = (wfb_assigns)WFB_ASSIGNS_INIT("--arg");
    r.o.events = (wfb_assigns)WFB_ASSIGNS_INIT("--event");
    int code = parse_args(argc, argv, &r.o);
    if (code == 0)
        code = wfb_stdin_begin(&r.o.file, ".xoml");
    if (code == 0)
        code = load(&r);
    if (code == 0)
        code = check_inputs(&r);
    if (code == 0)
        code = start(&r);
    wfl_exec_state st = WFL_EXEC_CREATED;
    if (code == 0)
        code = drive(&r, &st);
    if (code == 0)
        code = print_result(&r, st);
    wfl_exec_destroy(r.ex);
    wfl_store_close(r.store);
    release_values(r.arg_values, r.o.args.count);
    release_values(r.event_values, r.o.events.count);
    wfl_definition_destroy(r.def);
    wf_libpath_destroy(r.libpath);
    wf_types_destroy(r.types);
    wfb_assigns_fini(&r.o.args);
    wfb_assigns_fini(&r.o.events);
    return code < 0 ? 0 : code;
}

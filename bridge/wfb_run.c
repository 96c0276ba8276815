/* wfb_run.c — `wfbridge run FILE.xaml`: load a modern workflow, set its arguments, run it on
 * this thread (waiting out timers, resuming --resume bookmarks whenever it goes idle) and
 * report per docs/formats.md "Output contracts": workflow output on stdout as it happens, errors on
 * stderr as file:line:col, the --json result as the last line, exit 0/1/2. */
#include <stdio.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../modern/wfm_runtime.h"
#include "wfb_cli.h"
#include "wfb_durable.h"
#include "wfb_interop.h"

static const char usage_text[] =
    "usage: wfbridge run FILE.xaml [--arg NAME=VALUE]... [--resume BOOKMARK=VALUE]...\n"
    "                    [--json] [--lib-path DIR] [--workers N] [--max-steps N]\n"
    "                    [--track FILE [--profile P]]\n"
    "                    [--store FILE [--durability full|normal] [--promote NAME]...]\n\n"
    "Run a modern (WF4 XAML) workflow until it completes or waits on bookmarks.\n\n"
    "  --arg NAME=VALUE       set In/InOut argument NAME (once each); VALUE is read as the\n"
    "                         argument's declared type (lists and records as JSON that must\n"
    "                         match the type exactly, Decimal and DateTime as text)\n"
    "  --resume NAME=VALUE    when the workflow goes idle, resume bookmark NAME with VALUE\n"
    "                         (JSON when it starts with {, [ or \" or is a number, true,\n"
    "                         false or null; else a string); one per bookmark, in order;\n"
    "                         NAME may be the part after the last '.' when unambiguous\n"
    "  --json                 print the result as one JSON object on the last line of stdout\n"
    "  --lib-path DIR         where native libraries are found (default $WFBRIDGE_LIB_PATH)\n"
    "  --workers N            worker threads of the runtime (default: one per core)\n"
    "  --max-steps N          stop with an error after N work items without going idle (a\n"
    "                         loop that never waits); default 10000000, 0 for no limit\n"
    "  --track FILE           write tracking records as JSON lines to FILE ('-': stdout)\n"
    "  --profile P            tracking profile: health, basic (default), all, none, or a\n"
    "                         TrackingProfile XML file\n"
    "  --store FILE           durable run: create the instance in instance store FILE\n"
    "                         (created if missing), persist it at Persist activities, and\n"
    "                         when it goes idle persist it, release it and exit; the result\n"
    "                         carries its \"id\" (continue with 'wfbridge resume')\n"
    "  --durability D         with --store: full (the default: fsync at every commit) or\n"
    "                         normal (WAL; a process crash loses nothing, a power loss may\n"
    "                         drop the last commits)\n"
    "  --promote NAME         with --store: keep argument or root variable NAME's value in\n"
    "                         the store at every save (wfbridge instances --where NAME=V);\n"
    "                         it stays promoted when the instance is resumed later\n\n"
    "A workflow waiting only on a timer (Delay) is waited for. Exit status: 0 Closed or Idle,\n"
    "1 Faulted, Canceled or Terminated, 2 usage or input error.\n";

typedef struct run_opts {
    const char *file;
    wfb_assigns args, resumes;
    bool json;
    const char *lib_path;
    unsigned workers;
    uint64_t max_steps; /* --max-steps N */
    const char *track;   /* --track FILE ("-" = stdout) */
    const char *profile; /* --profile NAME|FILE.xml, default basic */
    const char *store;   /* --store FILE: durable run */
    int durability;      /* --durability: a wfm_durability */
    bool durability_set;
    const char **promotes; /* --promote NAME... */
    size_t promote_count;
} run_opts;

static const struct option options[] = {
    {"arg", required_argument, NULL, 'a'},        {"resume", required_argument, NULL, 'r'},
    {"json", no_argument, NULL, 'j'},             {"lib-path", required_argument, NULL, 'L'},
    {"workers", required_argument, NULL, 'w'},    {"track", required_argument, NULL, 't'},
    {"profile", required_argument, NULL, 'p'},    {"store", required_argument, NULL, 's'},
    {"durability", required_argument, NULL, 'd'}, {"promote", required_argument, NULL, 'P'},
    {"max-steps", required_argument, NULL, 'm'},  {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* One option into o; 0, 2 (reported) or -1 (help printed). */
static int take_opt(int c, run_opts *o)
{
    unsigned long long n;
    switch (c) {
    case 'h':
        return wfb_help(usage_text), -1;
    case 'a':
        return wfb_assigns_add(&o->args, optarg, true);
    case 'r':
        return wfb_assigns_add(&o->resumes, optarg, true);
    case 'j':
        o->json = true;
        return 0;
    case 'L':
        o->lib_path = optarg;
        return 0;
    case 'w':
        if (wfb_parse_count("--workers", optarg, 1, 1024, &n))
            return 2;
        o->workers = (unsigned)n;
        return 0;
    case 't':
        o->track = optarg;
        return 0;
    case 'p':
        o->profile = optarg;
        return 0;
    case 's':
        o->store = optarg;
        return 0;
    case 'd':
        o->durability_set = true;
        return wfb_parse_durability(optarg, &o->durability);
    case 'P':
        o->promotes[o->promote_count++] = optarg;
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

/* Every option, alone and together, checked before anything is loaded or run. */
static int parse_opts(int argc, char **argv, run_opts *o)
{
    int c;
    while ((c = wfb_getopt(argc, argv, options)) != -1) {
        int rc = take_opt(c, o);
        if (rc)
            return rc;
    }
    if (wfb_operand(argc, argv, "workflow file", &o->file))
        return 2;
    if (o->promote_count && !o->store)
        return wfb_usage_error("--promote needs --store FILE");
    if (o->durability_set && !o->store)
        return wfb_usage_error("--durability needs --store FILE");
    if (o->profile && !o->track)
        return wfb_usage_error("--profile needs --track FILE");
    if (o->store && o->resumes.count)
        return wfb_usage_error("--resume cannot be used with --store (use 'wfbridge "
                               "resume' on the persisted instance)");
    return 0;
}

/* The declared arguments, for "the workflow has no argument 'X' (it declares: A, B)". */
static void arg_list(const wfm_definition *def, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t n = wfm_definition_arg_count(def);
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", i ? ", " : "", wfm_definition_arg_name(def, i));
    }
    if (!n)
        snprintf(buf, size, "none");
}

int wfb_modern_inputs(wf_types *types, const wfm_definition *def, const char *file,
                      const wfb_assigns *args, const char *const *promotes, size_t promote_count,
                      wf_value *values)
{
    wf_loc loc = {file, 0, 0};
    char names[512];
    for (size_t i = 0; i < args->count; i++) {
        wf_error err = WF_ERROR_INIT;
        size_t index;
        const char *name = args->names[i];
        if (!wfm_definition_arg_find(def, name, &index)) {
            arg_list(def, names, sizeof names);
            wf_error_set(&err, WF_E_NAME, &loc,
                         "--arg %s: the workflow has no argument '%s' (it declares: %s)", name,
                         name, names);
        } else {
            wfb_value_from_text(types, wfm_definition_arg_type(def, index), "--arg", name,
                                args->values[i], &values[i], &err);
        }
        if (err.code != WF_OK)
            return wfb_report(&err);
    }
    for (size_t i = 0; i < promote_count; i++) {
        const char *name = promotes[i];
        if (wfm_definition_arg_find(def, name, NULL) || wfm_definition_root_var_find(def, name))
            continue;
        arg_list(def, names, sizeof names);
        wf_error err = WF_ERROR_INIT;
        wf_error_set(&err, WF_E_NAME, &loc,
                     "--promote %s: the workflow has no argument or root variable '%s' "
                     "(arguments: %s)",
                     name, name, names);
        return wfb_report(&err);
    }
    return 0;
}

/* Every --arg converted (into values[i]), every --promote name checked against the
 * definition and every --resume payload parsed, before an instance exists. */
static int check_inputs(wfm_runtime *rt, const wfm_definition *def, const run_opts *o,
                        wf_value *values)
{
    int rc = wfb_modern_inputs(wfm_runtime_types(rt), def, o->file, &o->args, o->promotes,
                               o->promote_count, values);
    if (rc)
        return rc;
    /* --resume payloads: the bookmarks are only known while the workflow runs, the payload
     * text is checked now */
    for (size_t i = 0; i < o->resumes.count; i++) {
        wf_error err = WF_ERROR_INIT;
        wf_value v;
        wfb_payload_from_text(wfm_runtime_types(rt), "--resume", o->resumes.names[i],
                              o->resumes.values[i], &v, &err);
        wf_value_release(&v);
        if (err.code != WF_OK)
            return wfb_report(&err);
    }
    return 0;
}

static int set_args(wfm_instance *inst, const run_opts *o, wf_value *values)
{
    for (size_t i = 0; i < o->args.count; i++) {
        wf_error err = WF_ERROR_INIT;
        if (wfm_instance_set_input(inst, o->args.names[i], &values[i], &err) != WF_OK) {
            wf_error_prefix(&err, "--arg %s: ", o->args.names[i]);
            return wfb_report_in_file(&err, o->file);
        }
    }
    return 0;
}

static const char *instance_mark(const void *inst, size_t i)
{
    return wfm_instance_bookmark_name(inst, i);
}

/* The bookmark --resume i names among those the instance waits on now (its full name or the
 * part after the last '.'): 0 with *out set (NULL: not waited on), 2 when ambiguous. */
static int find_resume(const wfm_instance *inst, const run_opts *o, size_t i, const char **out)
{
    wfb_marks m = {NULL, wfm_instance_bookmark_count(inst), instance_mark, inst, NULL};
    return wfb_bookmark_resolve(&m, "--resume", o->resumes.names[i], out);
}

/* --resume NAME=VALUE (its text was checked before the run) on bookmark `bookmark`. */
static int resume_one(wfm_runtime *rt, wfm_instance *inst, const run_opts *o, size_t i,
                      const char *bookmark)
{
    wf_value payload;
    wf_error err = WF_ERROR_INIT;
    const char *name = o->resumes.names[i];
    char full[512];
    snprintf(full, sizeof full, "%s", bookmark ? bookmark : name); /* resuming frees it */
    if (wfb_payload_from_text(wfm_runtime_types(rt), "--resume", name, o->resumes.values[i],
                              &payload, &err) == WF_OK &&
        wfm_instance_check_resume(inst, full, &payload, &err) == WF_OK)
        wfm_instance_resume(inst, full, &payload, &err);
    wf_value_release(&payload);
    if (err.code == WF_OK)
        return 0;
    wf_error_prefix(&err, "--resume %s: ", name);
    return wfb_report(&err);
}

/* Run until completed, or idle with nothing left to resume and no timer to wait for. A
 * --resume waits for its bookmark while a timer is pending (the timer may create it). */
static int drive(wfm_runtime *rt, wfm_instance *inst, const run_opts *o)
{
    size_t next_resume = 0, nr = o->resumes.count;
    for (;;) {
        wf_error err = WF_ERROR_INIT;
        if (wfm_instance_run(inst, &err) != WF_OK)
            return wfb_report(&err);
        if (wfm_instance_state_get(inst) != WFM_INSTANCE_IDLE)
            return 0;
        if (wfm_instance_async_pending(inst)) { /* a Send waits for its reply */
            wfm_instance_wait_async(inst);
            continue;
        }
        int64_t due = wfm_instance_next_timer_us(inst);
        const char *bookmark = NULL;
        if (next_resume < nr && find_resume(inst, o, next_resume, &bookmark))
            return 2;
        if (next_resume < nr && (due == INT64_MAX || bookmark)) {
            int rc = resume_one(rt, inst, o, next_resume++, bookmark);
            if (rc)
                return rc;
            continue;
        }
        if (due == INT64_MAX || (wfm_instance_bookmark_count(inst) && next_resume == nr))
            return 0;
        wfb_sleep_until(due);
    }
}

/* Tracking records go out before the result: the result is the last line of stdout. A failed
 * tracking file is an error (exit 2) after the result. */
static int close_tracker(wfm_tracker *tracker, int rc)
{
    wf_error err = WF_ERROR_INIT;
    if (wfm_tracker_close(tracker, &err) != WF_OK)
        return wfb_report(&err);
    return rc;
}

/* --store: create the instance in the store, run it to its first persisted idle or to its
 * completion, print the result with the instance id. */
static int run_durable(wfm_runtime *rt, wfm_definition *def, const run_opts *o,
                       wfm_tracker *tracker, wf_value *values)
{
    wf_error err = WF_ERROR_INIT;
    wfm_store *store = NULL;
    wfm_host *host = NULL;
    wfm_dinst *d = NULL;
    int rc = 2;
    wfb_durable_cfg cfg = {o->store, false, o->durability, o->promotes, o->promote_count};
    if (wfb_durable_open(&cfg, rt, &store, &host, &err) != WF_OK ||
        wfm_host_new(host, def, &d, &err) != WF_OK) {
        wfb_report(&err);
        goto done;
    }
    if ((rc = set_args(wfm_dinst_instance(d), o, values)) != 0)
        goto done;
    if (wfb_durable_drive(host, d, &err) != WF_OK) {
        rc = wfb_report(&err);
        goto done;
    }
    rc = close_tracker(tracker, 0);
    if (rc == 0)
        rc = wfb_durable_finish(d, o->json);
done:
    wfm_dinst_close(d);
    wfm_host_destroy(host);
    wfm_store_close(store);
    return rc;
}

/* --profile P: a built-in profile or a TrackingProfile file; the tracker's file is added once
 * every input has been checked. */
static wf_status make_tracker(const run_opts *o, wfm_profile **owned, wfm_tracker **out,
                              wf_error *err)
{
    *owned = NULL;
    *out = NULL;
    if (!o->track)
        return WF_OK;
    const char *name = o->profile ? o->profile : "basic";
    const wfm_profile *profile = wfm_profile_builtin(name);
    if (!profile) {
        wf_status st = wfm_profile_load(name, owned, err);
        if (st != WF_OK)
            return st;
        profile = *owned;
    }
    return wfm_tracker_create(profile, out, err);
}

static int run_file(const run_opts *o)
{
    wf_error err = WF_ERROR_INIT;
    wf_libpath *libpath = NULL;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wfm_instance *inst = NULL;
    wfm_profile *profile = NULL;
    wfm_tracker *tracker = NULL;
    wf_diags *diags = wf_diags_create();
    wf_value *values = wf_calloc(o->args.count + 1, sizeof *values);
    int rc = 2;
    for (size_t i = 0; values && i < o->args.count; i++)
        values[i] = wf_null();
    if (!diags || !values || wfb_libpath(o->lib_path, &libpath, &err) != WF_OK ||
        make_tracker(o, &profile, &tracker, &err) != WF_OK)
        goto fail;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = o->workers;
    ro.libpath = libpath;
    ro.tracker = tracker;
    ro.max_steps = o->max_steps;
    if (wfm_runtime_create(&ro, &rt, &err) != WF_OK ||
        wfb_interop_register(wfm_runtime_catalogue(rt), &err) != WF_OK)
        goto fail;
    if (wfm_runtime_load(rt, o->file, &def, diags, &err) != WF_OK) {
        if (wf_diags_error_count(diags) == 0)
            wfb_report(&err);
        wfb_report_diags(diags, libpath == NULL);
        goto done;
    }
    wfb_report_diags(diags, false); /* warnings */
    if ((rc = check_inputs(rt, def, o, values)) != 0)
        goto done;
    if (tracker && wfm_tracker_add_file(tracker, o->track, &err) != WF_OK)
        goto fail;
    if (o->store) {
        rc = run_durable(rt, def, o, tracker, values);
        goto done;
    }
    if (wfm_instance_create(rt, def, &inst, &err) != WF_OK)
        goto fail;
    if ((rc = set_args(inst, o, values)) != 0 || (rc = drive(rt, inst, o)) != 0)
        goto done;
    rc = close_tracker(tracker, 0);
    if (rc == 0) {
        wfb_marks m = {NULL, wfm_instance_bookmark_count(inst), instance_mark, inst, NULL};
        rc = wfb_instance_result(inst, &m, o->json);
    }
    goto done;
fail:
    rc = wfb_fail(&err);
done:
    for (size_t i = 0; values && i < o->args.count; i++)
        wf_value_release(&values[i]);
    wf_free(values);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    rc = close_tracker(tracker, rc);
    wfm_tracker_destroy(tracker);
    wfm_profile_destroy(profile);
    wf_libpath_destroy(libpath);
    wf_diags_destroy(diags);
    return rc;
}

int wfb_cmd_run(int argc, char **argv)
{
    wfb_verb_begin("run");
    run_opts o = {.args = WFB_ASSIGNS_INIT("--arg"), .resumes = WFB_ASSIGNS_INIT("--resume"),
                  .max_steps = 10000000};
    o.promotes = wf_calloc((size_t)argc, sizeof *o.promotes);
    int rc = o.promotes ? parse_opts(argc, argv, &o) : wfb_error("out of memory");
    if (rc == 0 && o.store && strcmp(o.file, "-") == 0)
        rc = wfb_usage_error("--store keeps the definition's path for resume and host: give a "
                             "file, not '-'");
    if (rc == 0)
        rc = wfb_stdin_begin(&o.file, ".xaml");
    if (rc == 0)
        rc = run_file(&o);
    wfb_assigns_fini(&o.args);
    wfb_assigns_fini(&o.resumes);
    wf_free(o.promotes);
    return rc < 0 ? 0 : rc;
}

/* wfb_run.c — `wfbridge run FILE.xaml`: load a modern workflow, set its arguments, run it on
 * this thread (waiting out timers, resuming --resume bookmarks whenever it goes idle) and
 * report per docs/formats.md "Output contracts": workflow output on stdout as it happens, errors on
 * stderr as file:line:col, the --json result as the last line, exit 0/1/2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/wf_mem.h"
#include "../modern/wfm_runtime.h"
#include "wfb_cli.h"
#include "wfb_durable.h"
#include "wfb_interop.h"

static const char usage_text[] =
    "usage: wfbridge run FILE.xaml [--arg NAME=VALUE]... [--resume BOOKMARK=VALUE]...\n"
    "                    [--json] [--lib-path DIR] [--workers N]\n"
    "                    [--track FILE [--profile P]]\n"
    "                    [--store FILE [--durability full|normal] [--promote NAME]...]\n\n"
    "Run a modern (WF4 XAML) workflow until it completes or waits on bookmarks.\n\n"
    "  --arg NAME=VALUE       set In/InOut argument NAME; VALUE is read as the argument's\n"
    "                         declared type (lists and records as JSON, Decimal and DateTime\n"
    "                         as text)\n"
    "  --resume NAME=VALUE    when the workflow goes idle, resume bookmark NAME with VALUE\n"
    "                         (JSON if it parses, else a string); repeat to resume in order\n"
    "  --json                 print the result as one JSON object on the last line of stdout\n"
    "  --lib-path DIR         where native libraries are found (default $WFBRIDGE_LIB_PATH)\n"
    "  --workers N            worker threads of the runtime (default: one per core)\n"
    "  --track FILE           write tracking records as JSON lines to FILE ('-': stdout)\n"
    "  --profile P            tracking profile: health, basic (default), all, none, or a\n"
    "                         TrackingProfile XML file\n"
    "  --store FILE           durable run: create the instance in instance store FILE\n"
    "                         (created if missing), persist it at Persist activities, and\n"
    "                         when it goes idle persist it, release it and exit; the result\n"
    "                         carries its instance_id (continue with 'wfbridge resume')\n"
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
    const char **args, **resumes;
    size_t arg_count, resume_count;
    bool json;
    const char *lib_path;
    unsigned workers;
    const char *track;   /* --track FILE ("-" = stdout) */
    const char *profile; /* --profile NAME|FILE.xml, default basic */
    const char *store;   /* --store FILE: durable run */
    int durability;      /* --durability: a wfm_durability */
    const char **promotes; /* --promote NAME... */
    size_t promote_count;
} run_opts;

static int parse_opts(int argc, char **argv, run_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--arg") == 0 && has_value) {
            o->args[o->arg_count++] = argv[++i];
        } else if (strcmp(a, "--resume") == 0 && has_value) {
            o->resumes[o->resume_count++] = argv[++i];
        } else if (strcmp(a, "--lib-path") == 0 && has_value) {
            o->lib_path = argv[++i];
        } else if (strcmp(a, "--store") == 0 && has_value) {
            o->store = argv[++i];
        } else if (strcmp(a, "--durability") == 0 && has_value) {
            if (wfb_parse_durability("run", argv[++i], &o->durability))
                return 2;
        } else if (strcmp(a, "--promote") == 0 && has_value) {
            o->promotes[o->promote_count++] = argv[++i];
        } else if (strcmp(a, "--track") == 0 && has_value) {
            o->track = argv[++i];
        } else if (strcmp(a, "--profile") == 0 && has_value) {
            o->profile = argv[++i];
        } else if (strcmp(a, "--workers") == 0 && has_value) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 1024)
                return wfb_usage_error("run", "--workers needs a number from 1 to 1024");
            o->workers = (unsigned)n;
        } else if (a[0] == '-' && a[1] == '-') {
            return wfb_usage_error("run", "unknown or incomplete option '%s'", a);
        } else if (!o->file) {
            o->file = a;
        } else {
            return wfb_usage_error("run", "more than one workflow file ('%s')", a);
        }
    }
    if (!o->file)
        return wfb_usage_error("run", "no workflow file given");
    if (o->promote_count && !o->store)
        return wfb_usage_error("run", "--promote needs --store FILE");
    if (o->store && o->resume_count)
        return wfb_usage_error("run", "--resume cannot be used with --store (use 'wfbridge "
                                      "resume' on the persisted instance)");
    return 0;
}

/* --arg NAME=VALUE: VALUE read as the declared type of argument NAME. */
static int set_arg(wfm_runtime *rt, wfm_instance *inst, const char *file, const char *text)
{
    char *name = NULL;
    const char *value = NULL;
    if (!wfb_split_assignment(text, &name, &value))
        return wfb_usage_error("run", "--arg needs NAME=VALUE, not '%s'", text);
    const wfm_definition *def = wfm_instance_definition(inst);
    wf_error err = WF_ERROR_INIT;
    wf_loc loc = {file, 0, 0};
    size_t index;
    wf_value v = wf_null();
    if (!wfm_definition_arg_find(def, name, &index))
        wf_error_set(&err, WF_E_NAME, &loc, "the workflow has no argument '%s'", name);
    else if (wf_value_parse(wfm_runtime_types(rt), wfm_definition_arg_type(def, index), value, &v,
                            &err) != WF_OK)
        wf_error_prefix(&err, "argument '%s': ", name);
    else
        wfm_instance_set_input(inst, name, &v, &err);
    wf_value_release(&v);
    wf_free(name);
    return wfb_report_in_file(&err, file);
}

/* --resume NAME=VALUE: the payload is JSON when it parses, else the text itself. */
static int resume_one(wfm_runtime *rt, wfm_instance *inst, const char *file, const char *text)
{
    char *name = NULL;
    const char *value = NULL;
    if (!wfb_split_assignment(text, &name, &value))
        return wfb_usage_error("run", "--resume needs BOOKMARK=VALUE, not '%s'", text);
    wf_value payload;
    wf_error err = WF_ERROR_INIT;
    if (wfb_payload(rt, value, &payload, &err) == WF_OK)
        wfm_instance_resume(inst, name, &payload, &err);
    wf_value_release(&payload);
    wf_free(name);
    return wfb_report_in_file(&err, file);
}

static void sleep_until(int64_t due_us)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t wait = due_us - ((int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000);
    if (wait <= 0)
        return;
    struct timespec ts = {(time_t)(wait / 1000000), (long)(wait % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Does the instance wait on the bookmark named by a --resume NAME=VALUE text? */
static bool has_bookmark(const wfm_instance *inst, const char *assignment)
{
    size_t len = strcspn(assignment, "=");
    for (size_t i = 0; i < wfm_instance_bookmark_count(inst); i++) {
        const char *name = wfm_instance_bookmark_name(inst, i);
        if (strlen(name) == len && memcmp(name, assignment, len) == 0)
            return true;
    }
    return false;
}

/* Run until completed, or idle with nothing left to resume and no timer to wait for. A
 * --resume waits for its bookmark while a timer is pending (the timer may create it). */
static int drive(wfm_runtime *rt, wfm_instance *inst, const run_opts *o)
{
    size_t next_resume = 0;
    for (;;) {
        wf_error err = WF_ERROR_INIT;
        if (wfm_instance_run(inst, &err) != WF_OK)
            return wfb_report(&err);
        if (wfm_instance_state_get(inst) != WFM_INSTANCE_IDLE)
            return 0;
        int64_t due = wfm_instance_next_timer_us(inst);
        if (next_resume < o->resume_count &&
            (due == INT64_MAX || has_bookmark(inst, o->resumes[next_resume]))) {
            int rc = resume_one(rt, inst, o->file, o->resumes[next_resume++]);
            if (rc)
                return rc;
            continue;
        }
        if (due == INT64_MAX ||
            (wfm_instance_bookmark_count(inst) && next_resume == o->resume_count))
            return 0;
        sleep_until(due);
    }
}

static const char *instance_mark(const void *inst, size_t i)
{
    return wfm_instance_bookmark_name(inst, i);
}

static int finish(const wfm_instance *inst, const run_opts *o)
{
    wfb_marks m = {NULL, wfm_instance_bookmark_count(inst), instance_mark, inst};
    return wfb_instance_result(inst, &m, o->json, "wfbridge run: out of memory");
}

/* --store: create the instance in the store, run it to its first persisted idle or to its
 * completion, print the result with the instance id. */
static int run_durable(wfm_runtime *rt, wfm_definition *def, const run_opts *o)
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
    for (size_t i = 0; i < o->arg_count; i++)
        if ((rc = set_arg(rt, wfm_dinst_instance(d), o->file, o->args[i])) != 0)
            goto done;
    if (wfb_durable_drive(host, d, &err) != WF_OK) {
        rc = wfb_report(&err);
        goto done;
    }
    rc = wfb_durable_finish(d, o->json);
done:
    wfm_dinst_close(d);
    wfm_host_destroy(host);
    wfm_store_close(store);
    return rc;
}

/* --track FILE --profile P: a tracker writing JSON lines, or none without --track. */
static wf_status make_tracker(const run_opts *o, wfm_profile **owned, wfm_tracker **out,
                              wf_error *err)
{
    *owned = NULL;
    *out = NULL;
    if (!o->track)
        return o->profile ? wf_error_set(err, WF_E_USAGE, NULL, "--profile needs --track FILE")
                          : WF_OK;
    const char *name = o->profile ? o->profile : "basic";
    const wfm_profile *profile = wfm_profile_builtin(name);
    if (!profile) {
        wf_status st = wfm_profile_load(name, owned, err);
        if (st != WF_OK)
            return st;
        profile = *owned;
    }
    wf_status st = wfm_tracker_create(profile, out, err);
    if (st == WF_OK)
        st = wfm_tracker_add_file(*out, o->track, err);
    return st;
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
    int rc = 2;
    if (!diags || wfb_libpath(o->lib_path, &libpath, &err) != WF_OK ||
        make_tracker(o, &profile, &tracker, &err) != WF_OK)
        goto fail;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = o->workers;
    ro.libpath = libpath;
    ro.tracker = tracker;
    if (wfm_runtime_create(&ro, &rt, &err) != WF_OK ||
        wfb_interop_register(wfm_runtime_catalogue(rt), &err) != WF_OK)
        goto fail;
    if (wfm_runtime_load(rt, o->file, &def, diags, &err) != WF_OK) {
        if (wf_diags_error_count(diags) == 0)
            wfb_report(&err);
        wfb_report_diags(diags);
        goto done;
    }
    wfb_report_diags(diags); /* warnings */
    if (o->store) {
        rc = run_durable(rt, def, o);
        goto done;
    }
    if (wfm_instance_create(rt, def, &inst, &err) != WF_OK)
        goto fail;
    for (size_t i = 0; i < o->arg_count; i++)
        if ((rc = set_arg(rt, inst, o->file, o->args[i])) != 0)
            goto done;
    rc = drive(rt, inst, o);
    if (rc == 0)
        rc = finish(inst, o);
    goto done;
fail:
    rc = wfb_fail("run", &err);
done:
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wfm_tracker_destroy(tracker); /* flushes */
    wfm_profile_destroy(profile);
    wf_libpath_destroy(libpath);
    wf_diags_destroy(diags);
    return rc;
}

int wfb_cmd_run(int argc, char **argv)
{
    if (wfb_wants_help(argc, argv, usage_text))
        return 0;
    run_opts o = {0};
    o.args = wf_calloc((size_t)argc, sizeof *o.args);
    o.resumes = wf_calloc((size_t)argc, sizeof *o.resumes);
    o.promotes = wf_calloc((size_t)argc, sizeof *o.promotes);
    int rc = (o.args && o.resumes && o.promotes) ? parse_opts(argc, argv, &o) : 2;
    if (rc == 0)
        rc = run_file(&o);
    wf_free(o.args);
    wf_free(o.resumes);
    wf_free(o.promotes);
    return rc;
}

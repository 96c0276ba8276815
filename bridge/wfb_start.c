/* wfb_start.c — `wfbridge start FILE.xaml --store S --count N [--arg NAME=VALUE]... [--json]`:
 * creates N runnable instances of a workflow in an instance store without running them
 * (status Created, inputs saved, no lease held), for a fleet of `wfbridge host --store S`
 * processes to drain. Prints each id on its own line; with --json the last line is
 * {"status": "Created", "count": N, "ids": [...]}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "wfb_cli.h"
#include "wfb_durable.h"

static const char usage_text[] =
    "usage: wfbridge start FILE.xaml [--store S] [--count N] [--arg NAME=VALUE]...\n"
    "                      [--durability full|normal] [--promote NAME]... [--lib-path DIR]\n"
    "                      [--json]\n\n"
    "Create N instances of FILE.xaml in the instance store S (default: $WFBRIDGE_STORE, else\n"
    WFB_DEFAULT_STORE " in the working directory) without running them: each is saved with\n"
    "its inputs as Created and left for 'wfbridge host --store S' to run. S is a file,\n"
    "sqlite:FILE, postgresql://... or a libpq connection string.\n\n"
    "  --count N         how many instances (default 1)\n"
    "  --arg NAME=VALUE  set In/InOut argument NAME of every instance (read as its type)\n"
    "  --promote NAME    keep argument NAME's value in the store at every save\n"
    "  --json            last line: {\"status\": \"Created\", \"count\": N, \"ids\": [...]}\n\n"
    "Exit status: 0, or 2 on a usage or input error (bad --arg values are found before any\n"
    "instance is created).\n";

typedef struct start_opts {
    const char *file, *store, *lib_path;
    const char **args, **promotes;
    size_t arg_count, promote_count;
    unsigned long count;
    int durability;
    bool json;
} start_opts;

static int parse_opts(int argc, char **argv, start_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--store") == 0 && has_value) {
            o->store = argv[++i];
        } else if (strcmp(a, "--lib-path") == 0 && has_value) {
            o->lib_path = argv[++i];
        } else if (strcmp(a, "--count") == 0 && has_value) {
            char *end = NULL;
            o->count = strtoul(argv[++i], &end, 10);
            if (!*argv[i] || *end || o->count == 0 || o->count > 10000000)
                return wfb_usage_error("start", "--count needs a number from 1 to 10000000, "
                                                "not '%s'",
                                       argv[i]);
        } else if (strcmp(a, "--durability") == 0 && has_value) {
            if (wfb_parse_durability("start", argv[++i], &o->durability))
                return 2;
        } else if (strcmp(a, "--arg") == 0 && has_value) {
            o->args[o->arg_count++] = argv[++i];
        } else if (strcmp(a, "--promote") == 0 && has_value) {
            o->promotes[o->promote_count++] = argv[++i];
        } else if (a[0] == '-' && a[1] == '-') {
            return wfb_usage_error("start", "unknown or incomplete option '%s'", a);
        } else if (!o->file) {
            o->file = a;
        } else {
            return wfb_usage_error("start", "more than one workflow file ('%s')", a);
        }
    }
    return o->file ? 0 : wfb_usage_error("start", "no workflow file given");
}

/* --arg NAME=VALUE on one new instance; 2 after reporting a bad one. */
static int set_inputs(wfm_runtime *rt, wfm_instance *inst, const start_opts *o)
{
    const wfm_definition *def = wfm_instance_definition(inst);
    for (size_t i = 0; i < o->arg_count; i++) {
        char *name = NULL;
        const char *value = NULL;
        if (!wfb_split_assignment(o->args[i], &name, &value))
            return wfb_usage_error("start", "--arg needs NAME=VALUE, not '%s'", o->args[i]);
        wf_error err = WF_ERROR_INIT;
        wf_loc loc = {o->file, 0, 0};
        size_t index;
        wf_value v = wf_null();
        if (!wfm_definition_arg_find(def, name, &index))
            wf_error_set(&err, WF_E_NAME, &loc, "the workflow has no argument '%s'", name);
        else if (wf_value_parse(wfm_runtime_types(rt), wfm_definition_arg_type(def, index),
                                value, &v, &err) == WF_OK)
            wfm_instance_set_input(inst, name, &v, &err);
        wf_value_release(&v);
        wf_free(name);
        if (err.code != WF_OK)
            return wfb_report_in_file(&err, o->file);
    }
    return 0;
}

/* The --arg values checked on an instance that is not in the store, before any is created. */
static int check_inputs(wfm_runtime *rt, wfm_definition *def, const start_opts *o)
{
    wfm_instance *probe = NULL;
    wf_error err = WF_ERROR_INIT;
    if (wfm_instance_create(rt, def, &probe, &err) != WF_OK)
        return wfb_report(&err);
    int rc = set_inputs(rt, probe, o);
    wfm_instance_destroy(probe);
    return rc;
}

/* Create the instances, printing each id (and collecting them for --json). */
static int create_all(wfm_runtime *rt, wfm_host *host, wfm_definition *def, const start_opts *o,
                      wf_buf *ids)
{
    for (unsigned long n = 0; n < o->count; n++) {
        wfm_dinst *d = NULL;
        wf_error err = WF_ERROR_INIT;
        if (wfm_host_new(host, def, &d, &err) != WF_OK)
            return wfb_report(&err);
        int rc = set_inputs(rt, wfm_dinst_instance(d), o);
        if (rc == 0 && wfm_host_start(host, d, &err) != WF_OK)
            rc = wfb_report(&err);
        if (rc == 0 && !o->json)
            printf("%s\n", wfm_dinst_id(d));
        if (rc == 0)
            wf_buf_addf(ids, "%s\"%s\"", n ? ", " : "", wfm_dinst_id(d));
        wfm_dinst_close(d);
        if (rc)
            return rc;
    }
    return 0;
}

int wfb_cmd_start(int argc, char **argv)
{
    if (wfb_wants_help(argc, argv, usage_text))
        return 0;
    const char **slots = wf_calloc((size_t)argc * 2 + 2, sizeof *slots);
    if (!slots)
        return wfb_usage_error("start", "out of memory");
    start_opts o = {.args = slots, .promotes = slots + argc + 1, .count = 1};
    int rc = parse_opts(argc, argv, &o);
    wf_error err = WF_ERROR_INIT;
    wf_libpath *libpath = NULL;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wfm_store *store = NULL;
    wfm_host *host = NULL;
    wf_buf ids;
    wf_buf_init(&ids);
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    wfb_durable_cfg cfg = {wfb_store_name(o.store), false, o.durability, o.promotes,
                           o.promote_count};
    if (rc == 0) {
        if (wfb_libpath(o.lib_path, &libpath, &err) != WF_OK ||
            (ro.libpath = libpath, wfm_runtime_create(&ro, &rt, &err)) != WF_OK ||
            wfm_runtime_load(rt, o.file, &def, NULL, &err) != WF_OK)
            rc = wfb_report(&err);
        else if ((rc = check_inputs(rt, def, &o)) == 0 &&
                 wfb_durable_open(&cfg, rt, &store, &host, &err) != WF_OK)
            rc = wfb_report(&err);
        else if (rc == 0)
            rc = create_all(rt, host, def, &o, &ids);
    }
    if (rc == 0 && o.json)
        printf("{\"status\": \"Created\", \"count\": %lu, \"ids\": [%s]}\n", o.count, ids.data);
    if (rc == 0 && ids.oom)
        rc = wfb_usage_error("start", "out of memory");
    wf_buf_fini(&ids);
    wfm_host_destroy(host);
    wfm_store_close(store);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wf_libpath_destroy(libpath);
    wf_free(slots);
    return rc;
}

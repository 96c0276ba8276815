/* wfb_start.c — `wfbridge start FILE.xaml --store S --count N [--arg NAME=VALUE]... [--json]`:
 * creates N runnable instances of a workflow in an instance store without running them
 * (status Created, inputs saved, no lease held), for a fleet of `wfbridge host --store S`
 * processes to drain. Prints each id on its own line; with --json the last line is
 * {"status": "Created", "count": N, "ids": [...]}, or "Failed" with the ids that exist when an
 * error (a full disk) stopped it: each instance is created with its inputs in one
 * transaction (wfm_host_start), so no other row exists. */
#include <stdio.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "wfb_cli.h"
#include "wfb_durable.h"
#include "wfb_interop.h"

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
    "  --json            last line: {\"status\": \"Created\", \"count\": N, \"ids\": [...]}\n"
    "                    (\"Failed\", with \"requested\": N, when an error stopped it: the\n"
    "                    ids are those of the instances that exist)\n\n"
    "Exit status: 0, or 2 on a usage or input error (bad --arg values are found before any\n"
    "instance is created) or a store error (a full disk; the instances created before it\n"
    "stay, each with its inputs, and their ids are printed).\n";

typedef struct start_opts {
    const char *file, *store, *lib_path;
    wfb_assigns args;
    const char **promotes;
    size_t promote_count;
    unsigned long count;
    int durability;
    bool json;
} start_opts;

static const struct option options[] = {
    {"store", required_argument, NULL, 's'},      {"lib-path", required_argument, NULL, 'L'},
    {"count", required_argument, NULL, 'n'},      {"durability", required_argument, NULL, 'd'},
    {"arg", required_argument, NULL, 'a'},        {"promote", required_argument, NULL, 'P'},
    {"json", no_argument, NULL, 'j'},             {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* 0, 2 (reported) or -1 (help printed). */
static int parse_opts(int argc, char **argv, start_opts *o)
{
    int c;
    unsigned long long n;
    while ((c = wfb_getopt(argc, argv, options)) != -1) {
        int bad = 0;
        switch (c) {
        case 'h':
            return wfb_help(usage_text), -1;
        case 's':
            o->store = optarg;
            break;
        case 'L':
            o->lib_path = optarg;
            break;
        case 'n':
            bad = wfb_parse_count("--count", optarg, 1, 10000000, &n);
            o->count = (unsigned long)n;
            break;
        case 'd':
            bad = wfb_parse_durability(optarg, &o->durability);
            break;
        case 'a':
            bad = wfb_assigns_add(&o->args, optarg, true);
            break;
        case 'P':
            o->promotes[o->promote_count++] = optarg;
            break;
        case 'j':
            o->json = true;
            break;
        default:
            return 2;
        }
        if (bad)
            return bad;
    }
    return wfb_operand(argc, argv, "workflow file", &o->file);
}

/* The converted --arg values on one new instance. */
static int set_inputs(wfm_instance *inst, const start_opts *o, const wf_value *values)
{
    for (size_t i = 0; i < o->args.count; i++) {
        wf_error err = WF_ERROR_INIT;
        if (wfm_instance_set_input(inst, o->args.names[i], &values[i], &err) != WF_OK)
            return wfb_report_in_file(&err, o->file);
    }
    return 0;
}

/* Create the instances, printing each id (and collecting them for --json); *created: how
 * many exist. */
static int create_all(wfm_host *host, wfm_definition *def, const start_opts *o,
                      const wf_value *values, json_t *ids, unsigned long *created)
{
    for (unsigned long n = 0; n < o->count; n++) {
        *created = n;
        wfm_dinst *d = NULL;
        wf_error err = WF_ERROR_INIT;
        if (wfm_host_new(host, def, &d, &err) != WF_OK)
            return wfb_report(&err);
        int rc = set_inputs(wfm_dinst_instance(d), o, values);
        if (rc == 0 && wfm_host_start(host, d, &err) != WF_OK)
            rc = wfb_report(&err);
        if (rc == 0 && !o->json)
            printf("%s\n", wfm_dinst_id(d));
        if (rc == 0 && !wf_jsonw_append(ids, wf_jsonw_str(wfm_dinst_id(d))))
            rc = wfb_error("out of memory");
        wfm_dinst_close(d);
        if (rc)
            return rc;
    }
    *created = o->count;
    return 0;
}

int wfb_cmd_start(int argc, char **argv)
{
    wfb_verb_begin("start");
    const char **promotes = wf_calloc((size_t)argc + 1, sizeof *promotes);
    if (!promotes)
        return wfb_usage_error("out of memory");
    start_opts o = {.args = WFB_ASSIGNS_INIT("--arg"), .promotes = promotes, .count = 1};
    int rc = parse_opts(argc, argv, &o);
    if (rc == 0 && strcmp(o.file, "-") == 0)
        rc = wfb_usage_error("the store keeps the definition's path for hosts: give a file, "
                             "not '-'");
    wf_error err = WF_ERROR_INIT;
    wf_libpath *libpath = NULL;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wfm_store *store = NULL;
    wfm_host *host = NULL;
    wf_value *values = wf_calloc(o.args.count + 1, sizeof *values);
    json_t *ids = json_array(); /* checked by create_all */
    unsigned long created = 0;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    wfb_durable_cfg cfg = {wfb_store_name(o.store), false, o.durability, o.promotes,
                           o.promote_count};
    if (rc == 0 && !values)
        rc = wfb_usage_error("out of memory");
    for (size_t i = 0; values && i < o.args.count; i++)
        values[i] = wf_null();
    if (rc == 0) {
        if (wfb_libpath(o.lib_path, &libpath, &err) != WF_OK ||
            (ro.libpath = libpath, wfm_runtime_create(&ro, &rt, &err)) != WF_OK ||
            wfb_interop_register(wfm_runtime_catalogue(rt), &err) != WF_OK ||
            wfm_runtime_load(rt, o.file, &def, NULL, &err) != WF_OK)
            rc = wfb_report(&err);
        else if ((rc = wfb_modern_inputs(wfm_runtime_types(rt), def, o.file, &o.args,
                                         o.promotes, o.promote_count, values)) == 0 &&
                 wfb_durable_open(&cfg, rt, &store, &host, &err) != WF_OK)
            rc = wfb_report(&err);
        else if (rc == 0 && (rc = create_all(host, def, &o, values, ids, &created)) != 0 &&
                 o.json)
            wfb_print_json(json_pack("{s:s, s:I, s:I, s:O}", "status", "Failed", "count",
                                     (json_int_t)created, "requested", (json_int_t)o.count, "ids",
                                     ids));
    }
    if (rc == 0 && o.json)
        rc = wfb_print_json(json_pack("{s:s, s:I, s:O}", "status", "Created", "count",
                                      (json_int_t)o.count, "ids", ids));
    for (size_t i = 0; values && i < o.args.count; i++)
        wf_value_release(&values[i]);
    wf_free(values);
    json_decref(ids);
    wfm_host_destroy(host);
    wfm_store_close(store);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wf_libpath_destroy(libpath);
    wfb_assigns_fini(&o.args);
    wf_free(promotes);
    return rc < 0 ? 0 : rc;
}

/* wfb_resume.c — `wfbridge resume [--store FILE] ID --bookmark NAME=VALUE`: load and lock a
 * persisted modern instance, resume its bookmarks, run it to the next idle or completion,
 * persist it and print the contract result (with its "id"); when another host holds it, queue
 * the resumptions in the store instead. */
#include <stdio.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../modern/wfm_durable.h"
#include "wfb_cli.h"
#include "wfb_durable.h"
#include "wfb_interop.h"

static const char usage_text[] =
    "usage: wfbridge resume [--store FILE] ID [--bookmark NAME=VALUE]... [--json]\n"
    "                       [--durability full|normal] [--lib-path DIR]\n\n"
    "Load the persisted instance ID from the instance store (default: $WFBRIDGE_STORE, else\n"
    WFB_DEFAULT_STORE " in the working directory), taking its lease; resume each bookmark in\n"
    "order, run it to the next idle or completion, persist it, release it and print the\n"
    "result.\n\n"
    "  --bookmark NAME=VALUE resume bookmark NAME with VALUE (JSON when it starts with {, [\n"
    "                        or \" or is a number, true, false or null; else a string);\n"
    "                        without one the instance just continues (due timers, pending\n"
    "                        Persist requests); NAME may be the part after the last '.'\n"
    "                        when unambiguous among the bookmarks the instance waits on\n"
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

/* ---- resume -------------------------------------------------------------------------------- */
typedef struct resume_opts {
    const char *store, *id, *lib_path;
    wfb_assigns bookmarks;
    bool json;
    int durability;
} resume_opts;

static const struct option options[] = {
    {"store", required_argument, NULL, 's'},      {"bookmark", required_argument, NULL, 'b'},
    {"json", no_argument, NULL, 'j'},             {"durability", required_argument, NULL, 'd'},
    {"lib-path", required_argument, NULL, 'L'},   {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Every option and every payload checked before the store is opened. -1: help printed. */
static int parse_opts(int argc, char **argv, resume_opts *o)
{
    int c;
    while ((c = wfb_getopt(argc, argv, options)) != -1) {
        int rc = 0;
        switch (c) {
        case 'h':
            return wfb_help(usage_text), -1;
        case 's':
            o->store = optarg;
            break;
        case 'b':
            rc = wfb_assigns_add(&o->bookmarks, optarg, false);
            break;
        case 'j':
            o->json = true;
            break;
        case 'd':
            rc = wfb_parse_durability(optarg, &o->durability);
            break;
        case 'L':
            o->lib_path = optarg;
            break;
        default:
            return 2;
        }
        if (rc)
            return rc;
    }
    if (wfb_operand(argc, argv, "instance id", &o->id))
        return 2;
    wf_types *types = wf_types_create();
    if (!types)
        return wfb_error("out of memory");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < o->bookmarks.count; i++) {
        wf_value v;
        wf_error err = WF_ERROR_INIT;
        if (wfb_payload_from_text(types, "--bookmark", o->bookmarks.names[i],
                                  o->bookmarks.values[i], &v, &err) != WF_OK)
            rc = wfb_report(&err);
        wf_value_release(&v);
    }
    wf_types_destroy(types);
    return rc;
}

static const char *dinst_mark(const void *d, size_t i)
{
    return wfm_dinst_bookmark_name(d, i);
}

/* Resume --bookmark i; `name` is the bookmark's full name (wfb_bookmark_resolve). */
static wf_status resume_bookmark(wfm_runtime *rt, wfm_host *host, wfm_dinst *d,
                                 const resume_opts *o, size_t i, const char *name, wf_error *err)
{
    char full[512];
    snprintf(full, sizeof full, "%s", name); /* resuming frees the instance's copy */
    wf_value payload;
    wf_status st = wfb_payload_from_text(wfm_runtime_types(rt), "--bookmark", name,
                                         o->bookmarks.values[i], &payload, err);
    if (st == WF_OK)
        st = wfm_host_resume(host, d, full, &payload, err);
    if (st == WF_E_NOTFOUND)
        wf_error_prefix(err, "instance '%s': ", wfm_dinst_id(d));
    wf_value_release(&payload);
    return st;
}

/* ---- queueing for an instance another host holds ------------------------------------------ */
static bool count_queued(void *ud, const wfm_store_resume *r)
{
    (void)r;
    (*(size_t *)ud)++;
    return true;
}

/* The bookmarks the store row of `id` waits on ('\n'-separated there), for resolving short
 * names of an instance another host holds. */
typedef struct row_marks {
    const char *id;
    char *text; /* owned copy, split in place */
    const char *names[64];
    size_t count;
    bool oom;
} row_marks;

static bool find_row(void *ud, const wfm_store_row *row)
{
    row_marks *m = ud;
    if (strcmp(row->id, m->id) != 0)
        return true;
    m->text = wf_strdup(row->bookmarks);
    m->oom = !m->text;
    for (char *b = m->text; b && *b && m->count < 64;) {
        m->names[m->count++] = b;
        b += strcspn(b, "\n");
        if (*b)
            *b++ = '\0';
    }
    return false;
}

static const char *row_mark(const void *src, size_t i)
{
    return ((const row_marks *)src)->names[i];
}

/* Resolve every --bookmark of o against `marks` (full names or unambiguous short ones) into
 * names[i]: 0, or 2 after a usage error. */
static int resolve_all(const resume_opts *o, const wfb_marks *marks, const char **names)
{
    for (size_t i = 0; i < o->bookmarks.count; i++) {
        const char *full = NULL;
        if (wfb_bookmark_resolve(marks, "--bookmark", o->bookmarks.names[i], &full))
            return 2;
        names[i] = full ? full : o->bookmarks.names[i];
    }
    return 0;
}

/* Queue every --bookmark of o (names[i] its full name) in the store's pending resumptions, in
 * order. */
static wf_status queue_bookmarks(wfm_runtime *rt, wfm_store *store, const resume_opts *o,
                                 const char *const *names, wf_error *err)
{
    wf_status st = WF_OK;
    for (size_t i = 0; st == WF_OK && i < o->bookmarks.count; i++) {
        const char *name = names[i];
        wf_value payload = wf_null();
        wf_buf json;
        wf_buf_init(&json);
        st = wfb_payload_from_text(wfm_runtime_types(rt), "--bookmark", name,
                                   o->bookmarks.values[i], &payload, err);
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
    }
    return st;
}

/* The instance is leased by another live host: queue the resumptions for it (that host, or
 * the next one to run the instance, applies them in order). Exit 0 once queued. */
static int queue_for_other_host(wfm_runtime *rt, wfm_store *store, const resume_opts *o,
                                wf_error *err)
{
    row_marks rm = {.id = o->id};
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    wf_status st = wfm_store_query_rows(store, &q, find_row, &rm, err);
    const char **names = wf_calloc(o->bookmarks.count + 1, sizeof *names);
    wfb_marks marks = {NULL, rm.count, row_mark, &rm, NULL};
    int rc = 0;
    if (st != WF_OK || rm.oom || !names)
        rc = st != WF_OK ? wfb_report(err) : wfb_error("out of memory");
    else if ((rc = resolve_all(o, &marks, names)) == 0 &&
             queue_bookmarks(rt, store, o, names, err) != WF_OK)
        rc = wfb_report(err);
    wf_free(names);
    wf_free(rm.text);
    if (rc)
        return rc;
    if (o->json) {
        wfb_result r = {.status = "Queued", .instance_id = o->id};
        wfb_print_result(stdout, &r);
    } else {
        printf("instance %s is locked by another host: %zu resumption(s) queued\n", o->id,
               o->bookmarks.count);
    }
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
    size_t nb = o->bookmarks.count;
    if (wfb_libpath(o->lib_path, &libpath, &err) != WF_OK)
        goto fail;
    ro.libpath = libpath;
    ro.worker_count = 1;
    if (wfm_runtime_create(&ro, &rt, &err) != WF_OK ||
        wfb_interop_register(wfm_runtime_catalogue(rt), &err) != WF_OK ||
        wfb_durable_open(&cfg, rt, &store, &host, &err) != WF_OK)
        goto fail;
    wf_status st = wfm_host_load(host, o->id, &d, &err);
    if (st == WF_E_LOCKED && nb > 0) {
        wf_error_clear(&err);
        rc = queue_for_other_host(rt, store, o, &err);
        goto done;
    }
    if (st != WF_OK)
        goto fail;
    /* resumptions queued earlier go first: queue these behind them and run */
    size_t queued = 0;
    if (nb > 0 && wfm_store_pending_resumes(store, o->id, count_queued, &queued, &err) != WF_OK)
        goto fail;
    if (queued > 0) {
        const char **names = wf_calloc(nb + 1, sizeof *names);
        wfb_marks m = {NULL, wfm_dinst_bookmark_count(d), dinst_mark, d, NULL};
        if (!names || resolve_all(o, &m, names)) {
            rc = names ? 2 : wfb_error("out of memory");
            wf_free(names);
            goto done;
        }
        st = queue_bookmarks(rt, store, o, names, &err);
        wf_free(names);
        if (st != WF_OK ||
            wfb_durable_drive(host, d, &err) != WF_OK)
            goto fail;
        rc = wfb_durable_finish(d, o->json);
        goto done;
    }
    for (size_t i = 0; i < nb; i++) {
        if (i > 0 && wfm_dinst_loaded(d) == false) {
            /* the previous run unloaded it: load it again for the next bookmark */
            wfm_dinst_close(d);
            d = NULL;
            if (wfm_host_load(host, o->id, &d, &err) != WF_OK)
                goto fail;
        }
        wfb_marks m = {NULL, wfm_dinst_bookmark_count(d), dinst_mark, d, NULL};
        const char *name = NULL;
        if (wfb_bookmark_resolve(&m, "--bookmark", o->bookmarks.names[i], &name)) {
            rc = 2;
            goto done;
        }
        if (resume_bookmark(rt, host, d, o, i, name ? name : o->bookmarks.names[i], &err) !=
                WF_OK ||
            wfb_durable_drive(host, d, &err) != WF_OK)
            goto fail;
    }
    if (nb == 0 && wfb_durable_drive(host, d, &err) != WF_OK)
        goto fail;
    rc = wfb_durable_finish(d, o->json);
    goto done;
fail:
    rc = wfb_fail(&err);
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
    wfb_verb_begin("resume");
    resume_opts o = {.bookmarks = WFB_ASSIGNS_INIT("--bookmark")};
    int rc = parse_opts(argc, argv, &o);
    if (rc == 0)
        rc = resume_instance(&o);
    wfb_assigns_fini(&o.bookmarks);
    return rc < 0 ? 0 : rc;
}

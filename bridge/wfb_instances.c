/* wfb_instances.c — `wfbridge instances`: list the instances of a modern instance store,
 * filtered by status, promoted property or bookmark, as a table or as JSON. Read-only: the
 * store is opened read-only (never created or migrated) and nothing in it changes. */
#include <stdio.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "../modern/wfm_runtime.h"
#include "../modern/wfm_store.h"
#include "wfb_cli.h"

static const char usage_text[] =
    "usage: wfbridge instances [--store FILE] [--status S] [--where NAME=VALUE]\n"
    "                          [--bookmark NAME] [--json]\n\n"
    "List the workflow instances of an instance store (default: $WFBRIDGE_STORE, else\n"
    WFB_DEFAULT_STORE " in the working directory), oldest first.\n\n"
    "  --status S         only instances in status S: Created, Executing, Idle, Closed,\n"
    "                     Faulted, Canceled, Terminated or Suspended (quarantined by a host\n"
    "                     after its runs kept dying; the reason is shown)\n"
    "  --where NAME=VALUE only instances whose promoted property NAME equals VALUE\n"
    "  --bookmark NAME    only instances waiting on bookmark NAME\n"
    "  --json             one JSON object: {\"instances\": [{\"id\", \"status\", ...}]}\n";

typedef struct list_state {
    bool json;
    size_t count;
    json_t *rows; /* owned; --json only; NULL once memory ran out */
} list_state;

static json_t *row_json(const wfm_store_row *row)
{
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)row->definition_hash);
    json_t *obj = json_pack("{s:o, s:o, s:s}", "id", wf_jsonw_str(row->id), "status",
                            wf_jsonw_str(row->status), "definition", hash);
    bool ok = obj != NULL;
    if (ok && row->definition_path)
        ok = wf_jsonw_set(obj, "path", wf_jsonw_str(row->definition_path));
    ok = ok && wf_jsonw_set(obj, "created", wfb_json_time_us(row->created_ms * 1000)) &&
         wf_jsonw_set(obj, "updated", wfb_json_time_us(row->updated_ms * 1000)) &&
         wf_jsonw_set(obj, "owner", wf_jsonw_str(row->owner)) &&
         wf_jsonw_set(obj, "bookmarks", wfb_json_lines(row->bookmarks));
    if (ok && row->next_timer_us > 0)
        ok = wf_jsonw_set(obj, "nextTimer", wfb_json_time_us(row->next_timer_us));
    if (ok && row->reason) /* Suspended (quarantined): why */
        ok = wf_jsonw_set(obj, "reason", wf_jsonw_str(row->reason));
    if (!ok)
        json_decref(obj);
    return ok ? obj : NULL;
}

static bool print_row(void *ud, const wfm_store_row *row)
{
    list_state *ls = ud;
    if (ls->json) {
        if (ls->rows && !wf_jsonw_append(ls->rows, row_json(row))) {
            json_decref(ls->rows);
            ls->rows = NULL;
        }
    } else {
        char when[64];
        wf_datetime_format(row->updated_ms * 1000, when, sizeof when);
        char bookmarks[256];
        snprintf(bookmarks, sizeof bookmarks, "%s", row->bookmarks);
        for (char *c = bookmarks; *c; c++)
            if (*c == '\n')
                *c = ',';
        printf("%-32s  %-10s  %-24s  %s\n", row->id, row->status, when,
               *bookmarks ? bookmarks : "-");
        if (row->reason)
            printf("%-32s  reason: %s\n", "", row->reason);
    }
    ls->count++;
    return true;
}

typedef struct instances_opts {
    const char *store;
    wfm_store_query q;
    wfb_assigns where;
    bool json;
} instances_opts;

static const struct option options[] = {
    {"store", required_argument, NULL, 's'},    {"status", required_argument, NULL, 'S'},
    {"where", required_argument, NULL, 'w'},    {"bookmark", required_argument, NULL, 'b'},
    {"json", no_argument, NULL, 'j'},           {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* --status S: one of the instance statuses, exactly as the store writes them. */
static int check_status(const char *text)
{
    char list[160] = "", q[128];
    for (int s = WFM_INSTANCE_CREATED; s <= WFM_INSTANCE_TERMINATED; s++) {
        const char *name = wfm_instance_state_name((wfm_instance_state)s);
        if (strcmp(text, name) == 0)
            return 0;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", name);
    }
    if (strcmp(text, "Suspended") == 0) /* quarantined by a host (docs/durability.md) */
        return 0;
    return wfb_usage_error("--status takes one of %s, Suspended, not %s", list,
                           wfb_quote(text, q, sizeof q));
}

/* -1: help printed. */
static int parse_opts(int argc, char **argv, instances_opts *o)
{
    int c;
    while ((c = wfb_getopt(argc, argv, options)) != -1) {
        switch (c) {
        case 'h':
            return wfb_help(usage_text), -1;
        case 's':
            o->store = optarg;
            break;
        case 'S':
            if (o->q.status)
                return wfb_usage_error("--status is given more than once");
            if (check_status(optarg))
                return 2;
            o->q.status = optarg;
            break;
        case 'b':
            if (o->q.bookmark)
                return wfb_usage_error("--bookmark is given more than once");
            o->q.bookmark = optarg;
            break;
        case 'w':
            if (o->where.count)
                return wfb_usage_error("--where is given more than once");
            if (wfb_assigns_add(&o->where, optarg, true))
                return 2;
            o->q.prop_name = o->where.names[0];
            o->q.prop_value = o->where.values[0];
            break;
        case 'j':
            o->json = true;
            break;
        default:
            return 2;
        }
    }
    return wfb_operand(argc, argv, NULL, NULL);
}

int wfb_cmd_instances(int argc, char **argv)
{
    wfb_verb_begin("instances");
    instances_opts o = {NULL, WFM_STORE_QUERY_INIT, WFB_ASSIGNS_INIT("--where"),
                        false};
    int rc = parse_opts(argc, argv, &o);
    if (rc != 0) {
        wfb_assigns_fini(&o.where);
        return rc < 0 ? 0 : rc;
    }
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = wfb_store_name(o.store);
    so.read_only = true;
    wfm_store *store = NULL;
    wf_error err = WF_ERROR_INIT;
    list_state ls = {o.json, 0, json_array()};
    wf_status st = wfm_store_open(&so, &store, &err);
    if (st == WF_OK)
        st = wfm_store_query_rows(store, &o.q, print_row, &ls, &err);
    rc = 0;
    if (st == WF_OK && o.json)
        rc = wfb_print_json(ls.rows ? json_pack("{s:O}", "instances", ls.rows) : NULL);
    else if (st == WF_OK && ls.count == 0)
        fprintf(stderr, "no instances match\n"); /* a note, not an error: exit 0 */
    wfm_store_close(store);
    json_decref(ls.rows);
    wfb_assigns_fini(&o.where);
    return st == WF_OK ? rc : wfb_report(&err);
}

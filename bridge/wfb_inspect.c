/* wfb_inspect.c — `wfbridge inspect [--store FILE] ID`: print one instance of a modern
 * instance store as a JSON object: the store row (status, definition, owner and lease,
 * bookmarks, next timer, promoted properties) and its decoded state (wfm_state_to_json).
 * Read-only: the instance is not locked or changed. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "../modern/wfm_persist.h"
#include "../modern/wfm_store.h"
#include "wfb_cli.h"

static const char usage_text[] =
    "usage: wfbridge inspect [--store FILE] ID [--json]\n\n"
    "Print instance ID of the instance store (default: $WFBRIDGE_STORE, else " WFB_DEFAULT_STORE
    "\nin the working directory) as one JSON object: {\"id\", \"status\", \"definition\",\n"
    "\"path\", \"owner\", \"lockExpires\", \"nextTimer\", \"bookmarks\", \"attempts\",\n"
    "\"reason\" (Suspended only), \"promoted\", \"state\"},\nwhere \"state\" is the decoded instance state (null when none was saved). "
    "Nothing in the\nstore changes.\nExit status: 0 printed, 2 unknown id, missing store or "
    "corrupt state.\n";

typedef struct find_row {
    const char *id;
    wf_buf out;
    bool found;
} find_row;

static void add_time_us(wf_buf *b, const char *key, int64_t us)
{
    char when[64];
    wf_datetime_format(us, when, sizeof when);
    wf_buf_addf(b, ", \"%s\": \"%s\"", key, when);
}

static bool row_fn(void *ud, const wfm_store_row *row)
{
    find_row *f = ud;
    if (strcmp(row->id, f->id) != 0)
        return true;
    wf_buf *b = &f->out;
    f->found = true;
    wf_buf_adds(b, "{\"id\": ");
    wf_buf_add_json_string(b, row->id, strlen(row->id));
    wf_buf_adds(b, ", \"status\": ");
    wf_buf_add_json_string(b, row->status, strlen(row->status));
    wf_buf_addf(
        b, ", \"definition\": \"%016llx\", \"path\": ", (unsigned long long)row->definition_hash);
    if (row->definition_path)
        wf_buf_add_json_string(b, row->definition_path, strlen(row->definition_path));
    else
        wf_buf_adds(b, "null");
    add_time_us(b, "created", row->created_ms * 1000);
    add_time_us(b, "updated", row->updated_ms * 1000);
    wf_buf_adds(b, ", \"owner\": ");
    if (row->owner) {
        wf_buf_add_json_string(b, row->owner, strlen(row->owner));
        add_time_us(b, "lockExpires", row->lock_expires_ms * 1000);
    } else {
        wf_buf_adds(b, "null, \"lockExpires\": null");
    }
    if (row->next_timer_us > 0)
        add_time_us(b, "nextTimer", row->next_timer_us);
    else
        wf_buf_adds(b, ", \"nextTimer\": null");
    wf_buf_adds(b, ", \"bookmarks\": [");
    wfb_add_json_lines(b, row->bookmarks);
    wf_buf_adds(b, "]");
    wf_buf_addf(b, ", \"attempts\": %lld", (long long)row->attempts);
    if (row->reason) { /* Suspended: why */
        wf_buf_adds(b, ", \"reason\": ");
        wf_buf_add_json_string(b, row->reason, strlen(row->reason));
    }
    return false;
}

/* "name=value\n" lines -> , "promoted": {"name": "value", ...} */
static void add_props(wf_buf *b, const char *lines)
{
    wf_buf_adds(b, ", \"promoted\": {");
    const char *p = lines;
    for (bool first = true; *p; first = false) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t klen = eq ? (size_t)(eq - p) : len;
        wf_buf_adds(b, first ? "" : ", ");
        wf_buf_add_json_string(b, p, klen);
        wf_buf_adds(b, ": ");
        if (eq)
            wf_buf_add_json_string(b, eq + 1, len - klen - 1);
        else
            wf_buf_adds(b, "null");
        p += len + (nl ? 1 : 0);
    }
    wf_buf_adds(b, "}");
}

static int inspect(const char *path, const char *id)
{
    wf_error err = WF_ERROR_INIT;
    wfm_store *store = NULL;
    find_row f = {id, {0}, false};
    wf_buf_init(&f.out);
    char *props = NULL;
    void *blob = NULL;
    size_t len = 0;
    int rc = 2;
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = path;
    so.read_only = true;
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    if (wfm_store_open(&so, &store, &err) != WF_OK ||
        wfm_store_query_rows(store, &q, row_fn, &f, &err) != WF_OK)
        goto fail;
    if (!f.found) {
        wf_loc loc = {path, 0, 0};
        wf_error_set(&err, WF_E_NOTFOUND, &loc, "no instance '%s' in the store", id);
        goto fail;
    }
    char status[32];
    uint64_t hash;
    if (wfm_store_props(store, id, &props, &err) != WF_OK ||
        wfm_store_load_state(store, id, &blob, &len, status, &hash, &err) != WF_OK)
        goto fail;
    add_props(&f.out, props ? props : "");
    wf_buf_adds(&f.out, ", \"state\": ");
    if (!blob)
        wf_buf_adds(&f.out, "null");
    else if (wfm_state_to_json(NULL, blob, len, &f.out, &err) != WF_OK) {
        wf_error_prefix(&err, "instance '%s': ", id);
        goto fail;
    }
    wf_buf_adds(&f.out, "}\n");
    if (f.out.oom) {
        wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
        goto fail;
    }
    fwrite(f.out.data, 1, f.out.len, stdout);
    rc = 0;
    goto done;
fail:
    wfb_report(&err);
    rc = 2;
done:
    wf_free(blob);
    wf_free(props);
    wf_buf_fini(&f.out);
    wfm_store_close(store);
    return rc;
}

static const struct option options[] = {
    {"store", required_argument, NULL, 's'},
    {"json", no_argument, NULL, 'j'}, /* accepted: the output is always JSON */
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int wfb_cmd_inspect(int argc, char **argv)
{
    wfb_verb_begin("inspect");
    const char *store = NULL;
    int c;
    while ((c = wfb_getopt(argc, argv, options)) != -1) {
        if (c == 'h')
            return wfb_help(usage_text);
        if (c == 's')
            store = optarg;
        else if (c != 'j')
            return 2;
    }
    const char *id = NULL;
    if (wfb_operand(argc, argv, "instance id", &id))
        return 2;
    return inspect(wfb_store_name(store), id);
}

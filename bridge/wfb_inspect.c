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
    json_t *root; /* owned; NULL until found, or when memory ran out */
    bool found, oom;
} find_row;

static json_t *time_or_null(bool set, int64_t us)
{
    return set ? wfb_json_time_us(us) : json_null();
}

static bool row_fn(void *ud, const wfm_store_row *row)
{
    find_row *f = ud;
    if (strcmp(row->id, f->id) != 0)
        return true;
    f->found = true;
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)row->definition_hash);
    f->root = json_pack(
        "{s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I}", "id", wf_jsonw_str(row->id),
        "status", wf_jsonw_str(row->status), "definition", hash, "path",
        wf_jsonw_str(row->definition_path), "created", wfb_json_time_us(row->created_ms * 1000),
        "updated", wfb_json_time_us(row->updated_ms * 1000), "owner", wf_jsonw_str(row->owner),
        "lockExpires", time_or_null(row->owner != NULL, row->lock_expires_ms * 1000), "nextTimer",
        time_or_null(row->next_timer_us > 0, row->next_timer_us), "bookmarks",
        wfb_json_lines(row->bookmarks), "attempts", (json_int_t)row->attempts);
    if (f->root && row->reason) /* Suspended: why */
        f->oom = !wf_jsonw_set(f->root, "reason", wf_jsonw_str(row->reason));
    return false;
}

/* "name=value\n" lines -> {"name": "value", ...} */
static json_t *props_json(const char *lines)
{
    json_t *obj = json_object();
    bool ok = obj != NULL;
    for (const char *p = lines; ok && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t klen = eq ? (size_t)(eq - p) : len;
        char *key = wf_strndup(p, klen);
        ok = key && wf_jsonw_set(obj, key, eq ? wf_jsonw_strn(eq + 1, len - klen - 1)
                                                : json_null());
        wf_free(key);
        p += len + (nl ? 1 : 0);
    }
    if (!ok)
        json_decref(obj);
    return ok ? obj : NULL;
}

static int inspect(const char *path, const char *id)
{
    wf_error err = WF_ERROR_INIT;
    wfm_store *store = NULL;
    find_row f = {.id = id};
    wf_buf state;
    wf_buf_init(&state);
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
    if (blob && wfm_state_to_json(NULL, blob, len, &state, &err) != WF_OK) {
        wf_error_prefix(&err, "instance '%s': ", id);
        goto fail;
    }
    json_t *state_json = blob ? wf_jsonw_raw(state.data, state.len) : json_null();
    if (blob && !state_json && !state.oom) {
        wf_error_set(&err, WF_E_CORRUPT, NULL, "instance '%s': the decoded state is not JSON", id);
        goto fail;
    }
    json_t *root = f.oom ? NULL : f.root;
    bool ok = wf_jsonw_set(root, "promoted", props_json(props ? props : ""));
    ok = wf_jsonw_set(ok ? root : NULL, "state", state_json); /* state_json always taken */
    rc = wfb_print_json(ok ? json_incref(f.root) : NULL);
    goto done;
fail:
    wfb_report(&err);
    rc = 2;
done:
    wf_free(blob);
    wf_free(props);
    wf_buf_fini(&state);
    json_decref(f.root);
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

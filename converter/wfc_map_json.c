/* wfc_map_json.c — the map a conversion writes beside its XAML, NAME.xaml.map.json: which
 * legacy dependency property became which modern argument or variable (and where that
 * variable is declared), which legacy activity became which modern node (the DisplayName
 * keeps the legacy x:Name) and what bookmark each legacy queue became. `wfbridge
 * migrate-instances` reads it to carry the values of running instances (docs/migrate.md,
 * docs/convert.md "The map file"). */
#include <stdio.h>
#include <assert.h>
#include <string.h>

#include "../common/wf_jsonw.h"
#include "../legacy/wfl_typelib.h"
#include "wfc_convert_int.h"

static json_t *text(const char *value)
{
    return wf_jsonw_str(value ? value : "");
}

static json_t *values(wfc__conv *c)
{
    json_t *arr = json_array();
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < c->slot_count; i++) {
        const wfc__slot *s = &c->slots[i];
        json_t *v = json_pack("{s:o, s:o, s:o, s:s, s:b}", "legacy", text(s->dp_name), "owner",
                              text(wfl_node_name(s->owner)), "modern", text(s->name), "kind",
                              s->is_arg ? "argument" : "variable", "root", s->owner == c->root);
        if (v && !s->is_arg && s->scope && !wf_jsonw_set(v, "scope", text(wfl_node_name(s->scope)))) {
            json_decref(v);
            v = NULL;
        }
        ok = wf_jsonw_append(arr, v);
    }
    if (!ok)
        json_decref(arr);
    return ok ? arr : NULL;
}

static json_t *activities(wfc__conv *c)
{
    static const char *const actions[] = {"mapped", "invoke", "interop",
                                          "dropped-designer-only"};
    json_t *arr = json_array();
    bool ok = arr != NULL;
    for (size_t i = 0, n = wfc_file_activity_count(c->file); ok && i < n; i++) {
        const char *name = NULL, *modern = NULL;
        wfc_action action = WFC_ACT_MAPPED;
        if (!wfc_file_activity(c->file, i, &name, &modern, &action))
            continue;
        ok = wf_jsonw_append(
            arr, json_pack("{s:o, s:o, s:o, s:s}", "legacy", text(name), "modern",
                           text(action == WFC_ACT_DROPPED_DESIGNER ? "" : name), "modernType",
                           text(modern), "action", actions[action]));
    }
    if (!ok)
        json_decref(arr);
    return ok ? arr : NULL;
}

/* Every HandleExternalEvent of the tree: its queue "Interface.Event" is the bookmark's name. */
static bool queues_of(wfc__conv *c, const wfl_node *n, json_t *arr)
{
    bool ok = true;
    if (strcmp(wfl_node_type(n)->name, "HandleExternalEventActivity") == 0) {
        wfl_prop_info it;
        wfc__prop(c, n, "InterfaceType", &it);
        const char *event = wfc__literal_str(c, n, "EventName");
        if (it.service && event) {
            char q[300];
            snprintf(q, sizeof q, "%s.%s", wfl_tl_service_name(it.service), event);
            ok = wf_jsonw_append(arr, json_pack("{s:o, s:o, s:o}", "legacy", text(q), "bookmark",
                                                text(q), "activity", text(wfl_node_name(n))));
        }
    }
    for (size_t i = 0; ok && i < wfl_node_child_count(n); i++)
        ok = queues_of(c, wfl_node_child(n, i), arr);
    return ok;
}

static json_t *map_json(wfc__conv *c)
{
    json_t *queues = json_array();
    json_t *root = queues && queues_of(c, c->root, queues)
                       ? json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:O}", "format",
                                   "wfbridge-map", "version", 1, "source", text(c->path),
                                   "output", text(c->out_name), "values", values(c),
                                   "activities", activities(c), "queues", queues)
                       : NULL;
    json_decref(queues);
    return root;
}

void wfc__map_json(wfc__conv *c)
{
    const char *out_name = c->out_name; /* kept in the conversion (out_name_buf) */
    assert(out_name != NULL);
    wf_buf b;
    wf_buf_init(&b);
    json_t *root = map_json(c); /* one line per value, activity and queue */
    if (!root || !wf_jsonw_dump(root, WF_JSONW_INDENT_TO(2), &b) || !wf_buf_addc(&b, '\n'))
        b.oom = true;
    json_decref(root);
    char name[512]; /* a plain file name, beside the XAML */
    const char *slash = strrchr(out_name, '/');
    snprintf(name, sizeof name, "%s.map.json", slash ? slash + 1 : out_name);
    size_t len = 0;
    char *data = b.oom ? NULL : wf_buf_detach(&b, &len);
    wfc_sidecar *items = wf_realloc(c->side.items, (c->side.count + 1) * sizeof *items);
    char *copy = wf_strdup(name);
    if (items)
        c->side.items = items;
    if (!items || !copy || !data) {
        wf_free(copy);
        wf_free(data);
        wf_buf_fini(&b);
        c->nomem = true;
        return;
    }
    c->side.items[c->side.count++] = (wfc_sidecar){copy, data, len, true};
}

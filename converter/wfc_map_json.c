/* wfc_map_json.c — the map a conversion writes beside its XAML, NAME.xaml.map.json: which
 * legacy dependency property became which modern argument or variable (and where that
 * variable is declared), which legacy activity became which modern node (the DisplayName
 * keeps the legacy x:Name) and what bookmark each legacy queue became. `wfbridge
 * migrate-instances` reads it to carry the values of running instances (docs/migrate.md,
 * docs/convert.md "The map file"). */
#include <stdio.h>
#include <string.h>

#include "../legacy/wfl_typelib.h"
#include "wfc_convert_int.h"

static void str(wf_buf *b, const char *key, const char *value, bool comma)
{
    wf_buf_addf(b, "%s\"%s\": ", comma ? ", " : "", key);
    wf_buf_add_json_string(b, value ? value : "", value ? strlen(value) : 0);
}

static void values(wfc__conv *c, wf_buf *b)
{
    wf_buf_adds(b, "  \"values\": [");
    for (size_t i = 0; i < c->slot_count; i++) {
        const wfc__slot *s = &c->slots[i];
        wf_buf_adds(b, i ? ",\n    {" : "\n    {");
        str(b, "legacy", s->dp_name, false);
        str(b, "owner", wfl_node_name(s->owner), true);
        str(b, "modern", s->name, true);
        str(b, "kind", s->is_arg ? "argument" : "variable", true);
        wf_buf_addf(b, ", \"root\": %s", s->owner == c->root ? "true" : "false");
        if (!s->is_arg && s->scope)
            str(b, "scope", wfl_node_name(s->scope), true);
        wf_buf_addc(b, '}');
    }
    wf_buf_adds(b, "],\n");
}

static void activities(wfc__conv *c, wf_buf *b)
{
    static const char *const actions[] = {"mapped", "invoke", "interop",
                                          "dropped-designer-only"};
    wf_buf_adds(b, "  \"activities\": [");
    for (size_t i = 0, n = wfc_file_activity_count(c->file); i < n; i++) {
        const char *name = NULL, *modern = NULL;
        wfc_action action = WFC_ACT_MAPPED;
        if (!wfc_file_activity(c->file, i, &name, &modern, &action))
            continue;
        wf_buf_adds(b, i ? ",\n    {" : "\n    {");
        str(b, "legacy", name, false);
        str(b, "modern", action == WFC_ACT_DROPPED_DESIGNER ? "" : name, true);
        str(b, "modernType", modern, true);
        str(b, "action", actions[action], true);
        wf_buf_addc(b, '}');
    }
    wf_buf_adds(b, "],\n");
}

/* Every HandleExternalEvent of the tree: its queue "Interface.Event" is the bookmark's name. */
static void queues_of(wfc__conv *c, const wfl_node *n, wf_buf *b, size_t *count)
{
    if (strcmp(wfl_node_type(n)->name, "HandleExternalEventActivity") == 0) {
        wfl_prop_info it;
        wfc__prop(c, n, "InterfaceType", &it);
        const char *event = wfc__literal_str(c, n, "EventName");
        if (it.service && event) {
            char q[300];
            snprintf(q, sizeof q, "%s.%s", wfl_tl_service_name(it.service), event);
            wf_buf_adds(b, (*count)++ ? ",\n    {" : "\n    {");
            str(b, "legacy", q, false);
            str(b, "bookmark", q, true);
            str(b, "activity", wfl_node_name(n), true);
            wf_buf_addc(b, '}');
        }
    }
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        queues_of(c, wfl_node_child(n, i), b, count);
}

void wfc__map_json(wfc__conv *c)
{
    /* c->out_name lived during the conversion only: the name again, as convert_loaded made it */
    char out_name[1024];
    size_t plen = strlen(c->path);
    if (c->opts->output_name)
        snprintf(out_name, sizeof out_name, "%s", c->opts->output_name);
    else if (plen > 5 && strcmp(c->path + plen - 5, ".xoml") == 0)
        snprintf(out_name, sizeof out_name, "%.*s.xaml", (int)(plen - 5), c->path);
    else
        snprintf(out_name, sizeof out_name, "%s.xaml", c->path);
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(&b, "{\n  \"format\": \"wfbridge-map\", \"version\": 1,\n  ");
    str(&b, "source", c->path, false);
    str(&b, "output", out_name, true);
    wf_buf_adds(&b, ",\n");
    values(c, &b);
    activities(c, &b);
    size_t count = 0;
    wf_buf_adds(&b, "  \"queues\": [");
    queues_of(c, c->root, &b, &count);
    wf_buf_adds(&b, "]\n}\n");
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

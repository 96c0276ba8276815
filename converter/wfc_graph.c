/* wfc_graph.c — the pictures of the migration report: the legacy and the converted
 * workflow as two DOT graphs of the same tree, one node per legacy activity, coloured by
 * what the conversion did with it (its report entry). */
#include <stdint.h>

#include "wfc_convert_int.h"

/* "a\nz" as a dot string: a and z escaped, the separator line break written as dot's \n. */
static void dot_quoted(wf_buf *b, const char *a, const char *z)
{
    wf_buf_addc(b, '"');
    for (const char *parts[] = {a, z}, **p = parts; p < parts + 2; p++) {
        if (p > parts)
            wf_buf_adds(b, "\\n");
        for (const char *s = *p; s && *s; s++) {
            if (*s == '"' || *s == '\\')
                wf_buf_addc(b, '\\');
            wf_buf_addc(b, *s);
        }
    }
    wf_buf_addc(b, '"');
}

static const char *action_color(wfc_action a)
{
    static const char *const colors[] = {"#dafbe1", "#ddf4ff", "#fff1c2", "#eeeeee"};
    return colors[a];
}

/* One node per activity (legacy: its legacy type; modern: its modern type), edges to the
 * children, in the tree's order. *next numbers the nodes. */
static void dot_node(wfc__conv *c, const wfl_node *n, bool modern, size_t *next, wf_buf *b)
{
    size_t id = (*next)++;
    uintptr_t entry = (uintptr_t)wf_strmap_get(c->seen, wfl_node_name(n));
    const char *name, *mtype = "(not converted)";
    wfc_action action = WFC_ACT_DROPPED_DESIGNER;
    if (entry)
        wfc_file_activity(c->file, entry - 1, &name, &mtype, &action);
    wf_buf_addf(b, "  n%zu [label=", id);
    dot_quoted(b, wfl_node_name(n), modern ? mtype : wfl_node_type(n)->name);
    wf_buf_addf(b, ", fillcolor=\"%s\"];\n", action_color(action));
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        wf_buf_addf(b, "  n%zu -> n%zu;\n", id, *next);
        dot_node(c, wfl_node_child(n, i), modern, next, b);
    }
}

void wfc__graphs(wfc__conv *c)
{
    wf_buf dot[2];
    for (int m = 0; m < 2; m++) {
        wf_buf_init(&dot[m]);
        wf_buf_adds(&dot[m], "digraph workflow {\n  node [shape=box, style=\"rounded,filled\", "
                             "fontname=\"sans-serif\", fontsize=10];\n");
        size_t next = 0;
        dot_node(c, c->root, m == 1, &next, &dot[m]);
        wf_buf_adds(&dot[m], "}\n");
        c->nomem |= dot[m].oom;
    }
    if (!c->nomem)
        wfc_file_set_graphs(c->file, dot[0].data, dot[1].data);
    wf_buf_fini(&dot[0]);
    wf_buf_fini(&dot[1]);
}

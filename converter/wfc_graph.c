/* wfc_graph.c — the pictures of the migration report: the legacy and the converted
 * workflow as two DOT graphs of the same tree, one node per legacy activity, coloured by
 * what the conversion did with it (its report entry). A state machine is drawn as what it
 * is: its states, and one edge per SetState from the state it is in to its target. */
#include <stdint.h>

#include "wfc_convert_int.h"

/* "a\nz" as a dot string: a and z escaped, the separator line break written as dot's \n;
 * just "a" when z is NULL. */
static void dot_quoted(wf_buf *b, const char *a, const char *z)
{
    wf_buf_addc(b, '"');
    for (const char *parts[] = {a, z}, **p = parts; p < parts + (z ? 2 : 1); p++) {
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

/* The action the report gives activity n. */
static wfc_action action_of(wfc__conv *c, const wfl_node *n, const char **mtype)
{
    uintptr_t entry = (uintptr_t)wf_strmap_get(c->seen, wfl_node_name(n));
    const char *name;
    wfc_action action = WFC_ACT_DROPPED_DESIGNER;
    *mtype = "(not converted)";
    if (entry)
        wfc_file_activity(c->file, entry - 1, &name, mtype, &action);
    return action;
}

/* Below n: a node per State (and the root), an edge per SetState from the state it sits in
 * (`state`) to its target, labelled with the event (EventDriven) that leads there. */
static void dot_state_walk(wfc__conv *c, const wfl_node *n, const wfl_node *state,
                           const wfl_node *event, bool modern, wf_buf *b)
{
    wfl_kind k = wfc__kind_of(n);
    bool root_events = false; /* the root is a state too, drawn when it handles events */
    for (size_t i = 0; n == c->root && i < wfl_node_child_count(n); i++)
        root_events |= wfc__kind_of(wfl_node_child(n, i)) == WFL_KIND_EVENT_DRIVEN;
    if (n == c->root)
        state = n;
    if (k == WFL_KIND_STATE || root_events) {
        const char *mtype;
        wfc_action action = action_of(c, n, &mtype);
        wf_buf_adds(b, "  ");
        dot_quoted(b, wfl_node_name(n), NULL);
        wf_buf_adds(b, " [label=");
        dot_quoted(b, wfl_node_name(n), modern ? mtype : wfl_node_type(n)->name);
        wf_buf_addf(b, ", fillcolor=\"%s\"];\n", action_color(action));
        state = n;
    } else if (k == WFL_KIND_EVENT_DRIVEN) {
        event = n;
    } else if (k == WFL_KIND_SET_STATE && state) {
        const char *target = wfc__literal_str(c, n, "TargetStateName");
        if (target) {
            wf_buf_adds(b, "  ");
            dot_quoted(b, wfl_node_name(state), NULL);
            wf_buf_adds(b, " -> ");
            dot_quoted(b, target, NULL);
            wf_buf_adds(b, " [label=");
            dot_quoted(b, event ? wfl_node_name(event) : wfl_node_name(n), NULL);
            wf_buf_adds(b, "];\n");
        }
    }
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        dot_state_walk(c, wfl_node_child(n, i), state, event, modern, b);
}

/* A state machine: its states and transitions; the initial state drawn bold, the completed
 * one with a double border. */
static void dot_state_machine(wfc__conv *c, bool modern, wf_buf *b)
{
    wf_buf_adds(b, "  rankdir=LR;\n  edge [fontname=\"sans-serif\", fontsize=10];\n");
    dot_state_walk(c, c->root, NULL, NULL, modern, b);
    const char *initial = wfc__literal_str(c, c->root, "InitialStateName");
    const char *completed = wfc__literal_str(c, c->root, "CompletedStateName");
    if (initial) {
        wf_buf_adds(b, "  ");
        dot_quoted(b, initial, NULL);
        wf_buf_adds(b, " [penwidth=3];\n");
    }
    if (completed) {
        wf_buf_adds(b, "  ");
        dot_quoted(b, completed, NULL);
        wf_buf_adds(b, " [peripheries=2];\n");
    }
}

void wfc__graphs(wfc__conv *c)
{
    wf_buf dot[2];
    bool states = wfc__kind_of(c->root) == WFL_KIND_STATE_MACHINE_WORKFLOW;
    for (int m = 0; m < 2; m++) {
        wf_buf_init(&dot[m]);
        wf_buf_adds(&dot[m], "digraph workflow {\n  node [shape=box, style=\"rounded,filled\", "
                             "fontname=\"sans-serif\", fontsize=10];\n");
        size_t next = 0;
        if (states)
            dot_state_machine(c, m == 1, &dot[m]);
        else
            dot_node(c, c->root, m == 1, &next, &dot[m]);
        wf_buf_adds(&dot[m], "}\n");
        c->nomem |= dot[m].oom;
    }
    if (!c->nomem)
        wfc_file_set_graphs(c->file, dot[0].data, dot[1].data);
    wf_buf_fini(&dot[0]);
    wf_buf_fini(&dot[1]);
}

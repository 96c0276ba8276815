/* wfm_track_profile.c — tracking profiles: the built-in health/basic/all/none profiles and
 * profiles loaded from WF4-shaped TrackingProfile XML (see wfm_track.h). A profile is a list
 * of queries; a record passes when one query of its kind matches its state and names. */
#include <stdarg.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../common/wf_xml.h"
#include "wfm_track.h"
#include "wfm_track_int.h"

typedef struct query {
    wfm_rec_kind kind;
    const char *states[16]; /* NULL-terminated; empty = any */
    const char *activity;   /* NULL or "*" = any */
    const char *child;
    const char *name;
    bool want_data;
} query;

struct wfm_profile {
    bool is_static;
    const query *queries;
    size_t count;
    wf_arena *arena; /* loaded profiles own their strings and queries */
};

#define ANY {NULL}
static const query health_q[] = {
    {WFM_REC_INSTANCE, ANY, NULL, NULL, NULL, false},
    {WFM_REC_FAULT_PROPAGATION, ANY, NULL, NULL, NULL, false},
    {WFM_REC_ACTIVITY_STATE, {"Faulted", NULL}, NULL, NULL, NULL, false},
};
static const query basic_q[] = {
    {WFM_REC_INSTANCE, ANY, NULL, NULL, NULL, false},
    {WFM_REC_FAULT_PROPAGATION, ANY, NULL, NULL, NULL, false},
    {WFM_REC_ACTIVITY_STATE, {"Closed", "Faulted", NULL}, NULL, NULL, NULL, false},
};
static const query all_q[] = {
    {WFM_REC_INSTANCE, ANY, NULL, NULL, NULL, false},
    {WFM_REC_ACTIVITY_STATE, ANY, NULL, NULL, NULL, true},
    {WFM_REC_ACTIVITY_SCHEDULED, ANY, NULL, NULL, NULL, false},
    {WFM_REC_BOOKMARK_RESUMPTION, ANY, NULL, NULL, NULL, false},
    {WFM_REC_FAULT_PROPAGATION, ANY, NULL, NULL, NULL, false},
    {WFM_REC_CANCEL_REQUESTED, ANY, NULL, NULL, NULL, false},
    {WFM_REC_CUSTOM, ANY, NULL, NULL, NULL, false},
};

static const struct builtin {
    const char *name;
    wfm_profile profile;
} builtins[] = {
    {"health", {true, health_q, sizeof health_q / sizeof health_q[0], NULL}},
    {"basic", {true, basic_q, sizeof basic_q / sizeof basic_q[0], NULL}},
    {"all", {true, all_q, sizeof all_q / sizeof all_q[0], NULL}},
    {"none", {true, NULL, 0, NULL}},
};

const wfm_profile *wfm_profile_builtin(const char *name)
{
    for (size_t i = 0; name && i < sizeof builtins / sizeof builtins[0]; i++)
        if (strcmp(builtins[i].name, name) == 0)
            return &builtins[i].profile;
    return NULL;
}

void wfm_profile_destroy(wfm_profile *profile)
{
    if (!profile || profile->is_static)
        return;
    wf_arena_destroy(profile->arena);
}

static bool name_matches(const char *pattern, const char *value)
{
    return !pattern || strcmp(pattern, "*") == 0 || (value && strcmp(pattern, value) == 0);
}

static bool state_matches(const query *q, const char *state)
{
    if (!q->states[0])
        return true;
    for (size_t i = 0; i < sizeof q->states / sizeof q->states[0] && q->states[i]; i++)
        if (strcmp(q->states[i], "*") == 0 || (state && strcmp(q->states[i], state) == 0))
            return true;
    return false;
}

static bool query_matches(const query *q, const wfm_track_record *rec)
{
    if (q->kind != rec->kind || !state_matches(q, rec->state))
        return false;
    switch (rec->kind) {
    case WFM_REC_BOOKMARK_RESUMPTION:
        return name_matches(q->name, rec->name);
    case WFM_REC_CUSTOM:
        return name_matches(q->name, rec->name) && name_matches(q->activity, rec->activity);
    default:
        return name_matches(q->activity, rec->activity) && name_matches(q->child, rec->child);
    }
}

bool wfm_profile_match(const wfm_profile *p, const wfm_track_record *rec, bool *want_data)
{
    bool data = false, hit = false;
    for (size_t i = 0; p && i < p->count; i++)
        if (query_matches(&p->queries[i], rec)) {
            hit = true;
            data = data || p->queries[i].want_data;
        }
    if (want_data)
        *want_data = data;
    return hit;
}

unsigned wfm_profile_kinds(const wfm_profile *p)
{
    unsigned mask = 0;
    for (size_t i = 0; p && i < p->count; i++)
        mask |= 1u << p->queries[i].kind;
    return mask;
}

static unsigned act_state_bit(const char *state)
{
    static const char *const names[] = {"Executing", "Closed", "Faulted", "Canceled"};
    if (strcmp(state, "*") == 0)
        return WFM_ACT_EXECUTING | WFM_ACT_CLOSED | WFM_ACT_FAULTED | WFM_ACT_CANCELED;
    for (unsigned i = 0; i < 4; i++)
        if (strcmp(names[i], state) == 0)
            return 1u << i;
    return 0;
}

unsigned wfm_profile_activity_states(const wfm_profile *p)
{
    unsigned mask = 0;
    for (size_t i = 0; p && i < p->count; i++) {
        const query *q = &p->queries[i];
        if (q->kind != WFM_REC_ACTIVITY_STATE)
            continue;
        if (!q->states[0])
            return WFM_ACT_EXECUTING | WFM_ACT_CLOSED | WFM_ACT_FAULTED | WFM_ACT_CANCELED;
        for (size_t j = 0; j < sizeof q->states / sizeof q->states[0] && q->states[j]; j++)
            mask |= act_state_bit(q->states[j]);
    }
    return mask;
}

static bool any_name(const char *pattern)
{
    return !pattern || strcmp(pattern, "*") == 0;
}

bool wfm__profile_names_child(const wfm_profile *p, wfm_rec_kind kind)
{
    for (size_t i = 0; p && i < p->count; i++)
        if (p->queries[i].kind == kind && !any_name(p->queries[i].child))
            return true;
    return false;
}

bool wfm__profile_plain(const wfm_profile *p, unsigned *data_states)
{
    *data_states = 0;
    for (size_t i = 0; p && i < p->count; i++) {
        const query *q = &p->queries[i];
        if (!any_name(q->activity) || !any_name(q->child) || !any_name(q->name))
            return false;
        unsigned states = q->states[0] ? 0 : ~0u;
        for (size_t j = 0; j < sizeof q->states / sizeof q->states[0] && q->states[j]; j++) {
            unsigned bit = strcmp(q->states[j], "*") == 0 ? ~0u : act_state_bit(q->states[j]);
            if (!bit || (q->kind != WFM_REC_ACTIVITY_STATE && bit != ~0u))
                return false; /* a state the masks cannot express */
            states |= bit;
        }
        if (q->want_data && q->kind != WFM_REC_ACTIVITY_STATE)
            return false;
        if (q->want_data)
            *data_states |= states;
    }
    return true;
}

/* ---- loading ------------------------------------------------------------------------------ */

static const struct {
    const char *element;
    wfm_rec_kind kind;
} query_elements[] = {
    {"WorkflowInstanceQuery", WFM_REC_INSTANCE},
    {"ActivityStateQuery", WFM_REC_ACTIVITY_STATE},
    {"ActivityScheduledQuery", WFM_REC_ACTIVITY_SCHEDULED},
    {"BookmarkResumptionQuery", WFM_REC_BOOKMARK_RESUMPTION},
    {"FaultPropagationQuery", WFM_REC_FAULT_PROPAGATION},
    {"CancelRequestedQuery", WFM_REC_CANCEL_REQUESTED},
    {"CustomTrackingQuery", WFM_REC_CUSTOM},
};

typedef struct loader {
    const wf_xml_doc *doc;
    wf_arena *arena;
    query *queries;
    size_t count, cap;
    wf_error *err;
} loader;

static const char *attr(loader *l, const wf_xml_node *n, const char *name)
{
    const wf_xml_attr *a = wf_xml_attr_find(n, NULL, name);
    return a ? wf_arena_strdup(l->arena, a->value) : NULL;
}

static wf_status fail(loader *l, const wf_xml_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static wf_status fail(loader *l, const wf_xml_node *n, const char *fmt, ...)
{
    wf_loc loc = wf_xml_node_loc(l->doc, n);
    va_list ap;
    va_start(ap, fmt);
    wf_status rc = wf_error_setv(l->err, WF_E_SCHEMA, &loc, fmt, ap);
    va_end(ap);
    return rc;
}

/* <States><State Name="Closed"/>...</States> and <Variables>/<Arguments>. */
static wf_status read_query_child(loader *l, query *q, const wf_xml_node *c)
{
    if (strcmp(c->name, "States") == 0) {
        size_t n = 0;
        for (const wf_xml_node *s = c->first_child; s; s = s->next) {
            const char *name = attr(l, s, "Name");
            if (strcmp(s->name, "State") != 0 || !name)
                return fail(l, s, "expected <State Name=\"...\"/> in <States>, not <%s>",
                            s->name);
            if (n + 1 >= sizeof q->states / sizeof q->states[0])
                return fail(l, s, "too many states in one %s query", "tracking");
            q->states[n++] = name;
        }
        return WF_OK;
    }
    if (strcmp(c->name, "Variables") == 0 || strcmp(c->name, "Arguments") == 0) {
        q->want_data = c->first_child != NULL;
        return WF_OK;
    }
    return fail(l, c, "unknown element <%s> in a tracking query", c->name);
}

static wf_status read_query(loader *l, const wf_xml_node *n, wfm_rec_kind kind)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        query *grown = wf_arena_alloc(l->arena, cap * sizeof *grown);
        if (!grown)
            return wf_error_set(l->err, WF_E_NOMEM, NULL, "out of memory loading a profile");
        if (l->count)
            memcpy(grown, l->queries, l->count * sizeof *grown);
        l->queries = grown;
        l->cap = cap;
    }
    query *q = &l->queries[l->count++];
    memset(q, 0, sizeof *q);
    q->kind = kind;
    q->activity = attr(l, n, kind == WFM_REC_FAULT_PROPAGATION ? "FaultSourceActivityName"
                                                               : "ActivityName");
    q->child = attr(l, n, kind == WFM_REC_FAULT_PROPAGATION ? "FaultHandlerActivityName"
                                                            : "ChildActivityName");
    q->name = attr(l, n, "Name");
    for (const wf_xml_node *c = n->first_child; c; c = c->next) {
        wf_status rc = read_query_child(l, q, c);
        if (rc != WF_OK)
            return rc;
    }
    return WF_OK;
}

static wf_status read_queries(loader *l, const wf_xml_node *parent)
{
    for (const wf_xml_node *n = parent->first_child; n; n = n->next) {
        if (strcmp(n->name, "Queries") == 0 || strcmp(n->name, "TrackingQueries") == 0 ||
            strcmp(n->name, "WorkflowInstanceQueries") == 0) {
            wf_status rc = read_queries(l, n);
            if (rc != WF_OK)
                return rc;
            continue;
        }
        size_t i = 0;
        while (i < sizeof query_elements / sizeof query_elements[0] &&
               strcmp(query_elements[i].element, n->name) != 0)
            i++;
        if (i == sizeof query_elements / sizeof query_elements[0])
            return fail(l, n, "unknown tracking query <%s>", n->name);
        wf_status rc = read_query(l, n, query_elements[i].kind);
        if (rc != WF_OK)
            return rc;
    }
    return WF_OK;
}

static wf_status build_profile(const wf_xml_doc *doc, wfm_profile **out, wf_error *err)
{
    const wf_xml_node *root = wf_xml_root(doc);
    loader l = {doc, wf_arena_create(0), NULL, 0, 0, err};
    wfm_profile *p = l.arena ? wf_arena_alloc(l.arena, sizeof *p) : NULL;
    if (!p) {
        wf_arena_destroy(l.arena);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory loading a profile");
    }
    wf_status rc = strcmp(root->name, "TrackingProfile") == 0
                       ? read_queries(&l, root)
                       : fail(&l, root, "expected <TrackingProfile>, found <%s>", root->name);
    if (rc != WF_OK) {
        wf_arena_destroy(l.arena);
        return rc;
    }
    p->arena = l.arena;
    p->queries = l.queries;
    p->count = l.count;
    *out = p;
    return WF_OK;
}

wf_status wfm_profile_load_mem(const char *name, const char *data, size_t len, wfm_profile **out,
                               wf_error *err)
{
    *out = NULL;
    wf_xml_doc *doc = NULL;
    wf_status rc = wf_xml_load_mem(name, data, len, NULL, &doc, err);
    if (rc == WF_OK)
        rc = build_profile(doc, out, err);
    wf_xml_doc_destroy(doc);
    return rc;
}

wf_status wfm_profile_load(const char *path, wfm_profile **out, wf_error *err)
{
    *out = NULL;
    wf_xml_doc *doc = NULL;
    wf_status rc = wf_xml_load_file(path, NULL, &doc, err);
    if (rc == WF_OK)
        rc = build_profile(doc, out, err);
    wf_xml_doc_destroy(doc);
    return rc;
}

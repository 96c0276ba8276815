/* wfb_verify_cover.c — decision coverage for `wfbridge verify`: the outcomes of every decision
 * point of a legacy definition, found by walking its activity tree, and the tracker that
 * reads the legacy trace of a run (status moves, Policy rule evaluations) to see which
 * outcomes it reached (docs/verify.md "Coverage"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../legacy/wfl_rules.h"
#include "wfb_verify_int.h"

#define NONE SIZE_MAX

/* What a status move of the activity `name` means. */
typedef enum role_kind {
    R_HIT,       /* Executing: outcome pt reached */
    R_LOOP,      /* While / Replicator: Closed (Succeeded) without a body run: outcome pt */
    R_LOOP_BODY, /* Executing: outcome pt, and the open execution of role `of` ran a body */
    R_OWNER,     /* owner of FaultHandlers: Closed (Succeeded) without Faulting: outcome pt */
} role_kind;

typedef struct role {
    const char *name;
    role_kind kind;
    size_t pt;
    size_t of; /* R_LOOP_BODY: its R_LOOP role */
} role;

typedef struct rule_pt {
    const char *activity, *rule;
    size_t then_pt, else_pt; /* NONE: that side has no actions */
} rule_pt;

struct wfb__cover {
    wfb_vpoint *points;
    size_t count;
    char **strs; /* every string the points and roles borrow */
    size_t str_count;
    role *roles;
    size_t role_count;
    rule_pt *rules;
    size_t rule_count;
    bool oom;
};

typedef struct open_exec {
    size_t role;
    unsigned ctx;
    bool flag; /* R_LOOP: a body ran; R_OWNER: it faulted */
} open_exec;

struct wfb__cover_run {
    const wfb__cover *cv;
    bool *hit;
    open_exec *open;
    size_t open_count, open_cap;
    bool oom;
};

const char *wfb_vkind_name(wfb_vkind kind)
{
    static const char *const names[WFB_VK_COUNT] = {"IfElse",      "While",        "FaultHandlers",
                                                    "EventDriven", "StateMachine", "Policy",
                                                    "CAG",         "Replicator"};
    return kind < WFB_VK_COUNT ? names[kind] : "?";
}

/* ---- building ---------------------------------------------------------------------------- */
static const char *keep(wfb__cover *cv, const char *s)
{
    if (cv->oom || !wfb__push_str(&cv->strs, &cv->str_count, s)) {
        cv->oom = true;
        return "";
    }
    return cv->strs[cv->str_count - 1];
}

/* Add outcome (kind, activity, outcome) unless it is there already; its index. */
static size_t add_point(wfb__cover *cv, wfb_vkind kind, const char *activity, const char *outcome)
{
    for (size_t i = 0; i < cv->count; i++)
        if (cv->points[i].kind == kind && strcmp(cv->points[i].activity, activity) == 0 &&
            strcmp(cv->points[i].outcome, outcome) == 0)
            return i;
    wfb_vpoint *grown = cv->oom ? NULL : wf_realloc(cv->points, (cv->count + 1) * sizeof *grown);
    if (!grown) {
        cv->oom = true;
        return 0;
    }
    cv->points = grown;
    grown[cv->count] = (wfb_vpoint){kind, keep(cv, activity), keep(cv, outcome)};
    return cv->count++;
}

static size_t add_role(wfb__cover *cv, const char *name, role_kind kind, size_t pt, size_t of)
{
    role *grown = cv->oom ? NULL : wf_realloc(cv->roles, (cv->role_count + 1) * sizeof *grown);
    if (!grown) {
        cv->oom = true;
        return 0;
    }
    cv->roles = grown;
    grown[cv->role_count] = (role){keep(cv, name), kind, pt, of};
    return cv->role_count++;
}

static const wfl_node *first_body_child(const wfl_node *n)
{
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *c = wfl_node_child(n, i);
        if (!wfl_node_is_disabled(c) && !(wfl_node_type(c)->flags & WFL_TF_ALT_FLOW))
            return c;
    }
    return NULL;
}

static void prop(const wfl_node *n, const char *dp_name, wfl_prop_info *pi)
{
    const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(n), dp_name);
    memset(pi, 0, sizeof *pi);
    if (dp)
        wfl_node_prop(n, dp, pi);
}

/* A loop: "entered" when its body starts, the other outcome when it closes without one. */
static void add_loop(wfb__cover *cv, const wfl_node *n, wfb_vkind kind, const char *ran,
                     const char *none)
{
    const char *name = wfl_node_name(n);
    size_t entered = add_point(cv, kind, name, ran);
    size_t skipped = add_point(cv, kind, name, none);
    size_t loop = add_role(cv, name, R_LOOP, skipped, NONE);
    const wfl_node *body = first_body_child(n);
    if (body)
        add_role(cv, wfl_node_name(body), R_LOOP_BODY, entered, loop);
}

static void add_policy(wfb__cover *cv, const wfl_node *n, const wfl_rules *rules)
{
    wfl_prop_info pi;
    prop(n, "RuleSetReference", &pi);
    const wfl_ruleset *rs =
        rules && pi.kind == WFL_PROP_RULESET ? wfl_rules_ruleset(rules, pi.name) : NULL;
    for (size_t i = 0; rs && i < wfl_ruleset_rule_count(rs); i++) {
        const wfl_rule *r = wfl_ruleset_rule_at(rs, i);
        if (!wfl_rule_active(r))
            continue;
        /* an outcome is a rule's Then or Else actions running: a side without actions is none */
        char out[600];
        size_t then_pt = NONE, else_pt = NONE;
        if (wfl_rule_action_count(r, false)) {
            snprintf(out, sizeof out, "%s then", wfl_rule_name(r));
            then_pt = add_point(cv, WFB_VK_POLICY, wfl_node_name(n), out);
        }
        if (wfl_rule_action_count(r, true)) {
            snprintf(out, sizeof out, "%s else", wfl_rule_name(r));
            else_pt = add_point(cv, WFB_VK_POLICY, wfl_node_name(n), out);
        }
        rule_pt *grown =
            cv->oom ? NULL : wf_realloc(cv->rules, (cv->rule_count + 1) * sizeof *grown);
        if (!grown) {
            cv->oom = true;
            return;
        }
        cv->rules = grown;
        grown[cv->rule_count++] =
            (rule_pt){keep(cv, wfl_node_name(n)), keep(cv, wfl_rule_name(r)), then_pt, else_pt};
    }
}

static const wfl_node *enclosing_state(const wfl_node *n)
{
    for (const wfl_node *p = wfl_node_parent(n); p; p = wfl_node_parent(p))
        if (wfl_node_type(p)->kind == WFL_KIND_STATE)
            return p;
    return NULL;
}

static void walk(wfb__cover *cv, const wfl_node *n, const wfl_rules *rules)
{
    if (wfl_node_is_disabled(n))
        return;
    const char *name = wfl_node_name(n);
    const wfl_node *parent = wfl_node_parent(n);
    wfl_prop_info pi;
    char out[600];
    switch (wfl_node_type(n)->kind) {
    case WFL_KIND_IFELSE_BRANCH:
        add_role(cv, name, R_HIT, add_point(cv, WFB_VK_IFELSE, name, "taken"), NONE);
        break;
    case WFL_KIND_WHILE:
        add_loop(cv, n, WFB_VK_WHILE, "entered", "skipped");
        break;
    case WFL_KIND_REPLICATOR:
        add_loop(cv, n, WFB_VK_REPLICATOR, "ran a child", "ran none");
        break;
    case WFL_KIND_FAULT_HANDLERS:
        if (parent)
            add_role(cv, wfl_node_name(parent), R_OWNER,
                     add_point(cv, WFB_VK_FAULT, wfl_node_name(parent), "no fault"), NONE);
        break;
    case WFL_KIND_FAULT_HANDLER:
        prop(n, "FaultType", &pi);
        snprintf(out, sizeof out, "caught %s",
                 pi.kind == WFL_PROP_TYPE && pi.name ? pi.name : "any");
        add_role(cv, name, R_HIT, add_point(cv, WFB_VK_FAULT, name, out), NONE);
        break;
    case WFL_KIND_EVENT_DRIVEN:
        add_role(cv, name, R_HIT, add_point(cv, WFB_VK_EVENT, name, "won"), NONE);
        break;
    case WFL_KIND_SET_STATE: {
        const wfl_node *from = enclosing_state(n);
        prop(n, "TargetStateName", &pi);
        if (!from || pi.kind != WFL_PROP_LITERAL)
            break; /* a SetState outside a state, or without a target, moves nowhere */
        snprintf(out, sizeof out, "-> %s", wf_value_str(pi.literal));
        add_role(cv, name, R_HIT, add_point(cv, WFB_VK_STATE, wfl_node_name(from), out), NONE);
        break;
    }
    case WFL_KIND_POLICY:
        add_policy(cv, n, rules);
        break;
    default:
        break;
    }
    if (parent && wfl_node_type(parent)->kind == WFL_KIND_CAG &&
        !(wfl_node_type(n)->flags & WFL_TF_ALT_FLOW))
        add_role(cv, name, R_HIT, add_point(cv, WFB_VK_CAG, name, "ran"), NONE);
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        walk(cv, wfl_node_child(n, i), rules);
}

wf_status wfb__cover_build(const wfl_definition *def, wf_types *types, wfb__cover **out,
                           wf_error *err)
{
    *out = NULL;
    wfb__cover *cv = wf_calloc(1, sizeof *cv);
    if (!cv)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wfl_rules *rules = NULL;
    const char *rpath = wfl_definition_rules_path(def);
    if (rpath) {
        wf_status rc = wfl_rules_load(rpath, types, &rules, NULL, err);
        if (rc != WF_OK) {
            wfb__cover_destroy(cv);
            return rc;
        }
    }
    walk(cv, wfl_definition_root(def), rules);
    wfl_rules_destroy(rules);
    if (cv->oom) {
        wfb__cover_destroy(cv);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    *out = cv;
    return WF_OK;
}

void wfb__cover_destroy(wfb__cover *cv)
{
    if (!cv)
        return;
    wf_free(cv->points);
    wf_free(cv->roles);
    wf_free(cv->rules);
    wfb__free_strs(cv->strs, cv->str_count);
    wf_free(cv);
}

size_t wfb__cover_count(const wfb__cover *cv)
{
    return cv->count;
}

const wfb_vpoint *wfb__cover_point(const wfb__cover *cv, size_t index)
{
    return index < cv->count ? &cv->points[index] : NULL;
}

/* ---- tracking a run ---------------------------------------------------------------------- */
wfb__cover_run *wfb__cover_run_create(const wfb__cover *cv)
{
    wfb__cover_run *r = wf_calloc(1, sizeof *r);
    if (!r || !(r->hit = wf_calloc(cv->count + 1, sizeof *r->hit))) {
        wf_free(r);
        return NULL;
    }
    r->cv = cv;
    return r;
}

void wfb__cover_run_destroy(wfb__cover_run *r)
{
    if (!r)
        return;
    wf_free(r->hit);
    wf_free(r->open);
    wf_free(r);
}

void wfb__cover_run_reset(wfb__cover_run *r)
{
    memset(r->hit, 0, (r->cv->count + 1) * sizeof *r->hit);
    r->open_count = 0;
    r->oom = false;
}

/* The newest open execution of `role` (in context ctx, or any when ctx is NONE). */
static open_exec *find_open(wfb__cover_run *r, size_t ri, size_t ctx)
{
    for (size_t i = r->open_count; i-- > 0;)
        if (r->open[i].role == ri && (ctx == NONE || r->open[i].ctx == ctx))
            return &r->open[i];
    return NULL;
}

static void push_open(wfb__cover_run *r, size_t ri, unsigned ctx)
{
    if (r->open_count == r->open_cap) {
        size_t cap = r->open_cap ? 2 * r->open_cap : 8;
        open_exec *grown = wf_realloc(r->open, cap * sizeof *grown);
        if (!grown) {
            r->oom = true;
            return;
        }
        r->open = grown;
        r->open_cap = cap;
    }
    r->open[r->open_count++] = (open_exec){ri, ctx, false};
}

static void on_role(wfb__cover_run *r, size_t ri, const wfl_trace_rec *rec)
{
    const role *ro = &r->cv->roles[ri];
    open_exec *o;
    if (rec->status == WFL_ST_EXECUTING) {
        if (ro->kind == R_HIT || ro->kind == R_LOOP_BODY)
            r->hit[ro->pt] = true;
        if (ro->kind == R_LOOP_BODY && (o = find_open(r, ro->of, NONE)))
            o->flag = true;
        if (ro->kind == R_LOOP || ro->kind == R_OWNER)
            push_open(r, ri, rec->context_id);
        return;
    }
    if (ro->kind != R_LOOP && ro->kind != R_OWNER)
        return;
    if (!(o = find_open(r, ri, rec->context_id)))
        return; /* closing again after compensation: not an execution */
    if (rec->status == WFL_ST_FAULTING && ro->kind == R_OWNER)
        o->flag = true;
    if (rec->status != WFL_ST_CLOSED)
        return;
    if (!o->flag && rec->result == WFL_RES_SUCCEEDED)
        r->hit[ro->pt] = true;
    size_t at = (size_t)(o - r->open);
    memmove(o, o + 1, (--r->open_count - at) * sizeof *o); /* keep newest last */
}

void wfb__cover_status(wfb__cover_run *r, const wfl_trace_rec *rec)
{
    for (size_t i = 0; i < r->cv->role_count; i++)
        if (strcmp(r->cv->roles[i].name, rec->activity) == 0)
            on_role(r, i, rec);
}

void wfb__cover_rule(wfb__cover_run *r, const char *activity, const char *rule, bool result)
{
    for (size_t i = 0; i < r->cv->rule_count; i++) {
        const rule_pt *p = &r->cv->rules[i];
        if (strcmp(p->activity, activity) != 0 || strcmp(p->rule, rule) != 0)
            continue;
        size_t pt = result ? p->then_pt : p->else_pt; /* (one rule may run many times) */
        if (pt != NONE)
            r->hit[pt] = true;
    }
}

bool wfb__cover_take(const wfb__cover_run *r, wfb_vobs *obs)
{
    if (r->oom)
        return false;
    size_t n = 0;
    for (size_t i = 0; i < r->cv->count; i++)
        n += r->hit[i];
    wf_free(obs->hits);
    obs->hits = wf_calloc(n + 1, sizeof *obs->hits);
    obs->hit_count = 0;
    if (!obs->hits)
        return false;
    for (size_t i = 0; i < r->cv->count; i++)
        if (r->hit[i])
            obs->hits[obs->hit_count++] = i;
    return true;
}

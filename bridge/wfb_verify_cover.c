/* wfb_verify_cover.c — decision coverage for `wfbridge verify`: the outcomes of every decision
 * point of a legacy definition, found by walking its activity tree (with what the definition
 * alone shows about them: their location, a condition that is constant, the event a branch
 * waits on, the constants its rule conditions compare inputs with), and the tracker that reads
 * the legacy trace of a run (status moves, Policy rule evaluations) to see which outcomes it
 * reached (docs/verify.md "Coverage"). */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../legacy/wfl_registry.h"
#include "../legacy/wfl_rules.h"
#include "wfb_verify_int.h"

#define NONE      SIZE_MAX
#define ORDER_MAX 4 /* branches of a Parallel whose event orders are outcomes (4! = 24) */

/* What a status move of the activity `name` means. */
typedef enum role_kind {
    R_HIT,       /* Executing: outcome pt reached */
    R_LOOP,      /* While / Replicator: Closed (Succeeded) after 0 body runs: pt, after 1: pt1 */
    R_LOOP_BODY, /* Executing: the open execution of role `of` ran a body; the second: pt */
    R_OWNER,     /* owner of FaultHandlers: Closed (Succeeded) without Faulting: outcome pt */
    R_ORDER,     /* a Parallel whose `idx` branches wait on events: outcomes pt .. pt + idx! - 1 */
    R_ORDER_EV,  /* the first HandleExternalEvent of branch idx of the R_ORDER role `of` */
} role_kind;

typedef struct role {
    const char *name;
    role_kind kind;
    size_t pt, pt1;
    size_t of;  /* R_LOOP_BODY, R_ORDER_EV: the role of the loop or Parallel */
    size_t idx; /* R_ORDER: branches; R_ORDER_EV: its branch */
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
    wfb__vhint *hints; /* values borrowed from ruleset_file */
    size_t hint_count;
    wfl_rules *ruleset_file; /* the definition's .rules, read again (NULL: none) */
    bool oom;
};

typedef struct open_exec {
    size_t role;
    unsigned ctx;
    bool flag;      /* R_OWNER: it faulted */
    unsigned count; /* R_LOOP: bodies run; R_ORDER: branch events seen */
    unsigned char seq[ORDER_MAX]; /* R_ORDER: branches in the order their events came */
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
    static const char *const names[WFB_VK_COUNT] = {
        "IfElse", "While", "FaultHandlers", "EventDriven", "StateMachine",
        "Policy", "CAG",   "Replicator",    "EventOrder"};
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

/* arr grown to count + 1 elements of `size` bytes; NULL (and cv->oom set) when it cannot be. */
static void *grow(wfb__cover *cv, void *arr, size_t count, size_t size)
{
    void *grown = cv->oom ? NULL : wf_realloc(arr, (count + 1) * size);
    if (!grown)
        cv->oom = true;
    return grown;
}

/* Add outcome (kind, n's name, outcome) unless it is there already; its index. */
static size_t add_point(wfb__cover *cv, wfb_vkind kind, const wfl_node *n, const char *outcome)
{
    const char *activity = wfl_node_name(n);
    for (size_t i = 0; i < cv->count; i++)
        if (cv->points[i].kind == kind && strcmp(cv->points[i].activity, activity) == 0 &&
            strcmp(cv->points[i].outcome, outcome) == 0)
            return i;
    wfb_vpoint *grown = grow(cv, cv->points, cv->count, sizeof *grown);
    if (!grown)
        return 0;
    cv->points = grown;
    wf_loc where = wfl_node_loc(n);
    where.file = where.file ? keep(cv, where.file) : NULL;
    grown[cv->count] = (wfb_vpoint){kind, keep(cv, activity), keep(cv, outcome), where, NULL, NULL};
    return cv->count++;
}

static void set_why(wfb__cover *cv, size_t pt, const char *why)
{
    if (!cv->oom && pt < cv->count && !cv->points[pt].why)
        cv->points[pt].why = keep(cv, why);
}

static size_t add_role(wfb__cover *cv, const char *name, role_kind kind, size_t pt, size_t of)
{
    role *grown = grow(cv, cv->roles, cv->role_count, sizeof *grown);
    if (!grown)
        return 0;
    cv->roles = grown;
    grown[cv->role_count] = (role){keep(cv, name), kind, pt, NONE, of, 0};
    return cv->role_count++;
}

static bool alt_flow(const wfl_node *n)
{
    return (wfl_node_type(n)->flags & WFL_TF_ALT_FLOW) != 0;
}

static const wfl_node *first_body_child(const wfl_node *n)
{
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *c = wfl_node_child(n, i);
        if (!wfl_node_is_disabled(c) && !alt_flow(c))
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

/* ---- what the definition alone shows ---------------------------------------------------- */
static bool refers_to_state(const wfl_rexpr *e)
{
    switch (wfl_rexpr_kind_of(e)) {
    case WFL_REX_THIS:
    case WFL_REX_MEMBER:
    case WFL_REX_INVOKE:
    case WFL_REX_INDEX:
        return true;
    default:
        break;
    }
    for (size_t i = 0; i < wfl_rexpr_child_count(e); i++)
        if (refers_to_state(wfl_rexpr_child(e, i)))
            return true;
    return false;
}

static wf_status no_member(void *ud, const wfl_rules_seg *path, size_t count, wf_value *out,
                           wf_value *exc, wf_error *err)
{
    (void)ud, (void)path, (void)count, (void)out, (void)exc;
    return wf_error_set(err, WF_E_NAME, NULL, "a constant reads no member");
}

/* The Condition of n when it is a rule condition that reads nothing (`1 > 2`, `false`):
 * true with its value in *value. A code condition runs native code: never constant here. */
static bool constant_condition(const wfl_node *n, bool *value)
{
    wfl_prop_info pi;
    prop(n, "Condition", &pi);
    const wfl_rexpr *e =
        pi.kind == WFL_PROP_RULE_CONDITION && pi.rule ? wfl_rule_cond_expr(pi.rule) : NULL;
    if (!e || refers_to_state(e))
        return false;
    wfl_rules_target none = {.get = no_member};
    wf_value exc = wf_null();
    wf_error err = WF_ERROR_INIT;
    bool ok = wfl_rules_eval_condition(pi.rule, &none, value, &exc, &err) == WF_OK;
    wf_value_release(&exc);
    return ok;
}

/* The short event name the first activity of an EventDriven waits on; NULL for a Delay. */
static const char *driven_event(const wfl_node *n)
{
    const wfl_node *first = first_body_child(n);
    wfl_prop_info pi;
    if (!first || wfl_node_type(first)->kind != WFL_KIND_HANDLE_EXTERNAL_EVENT)
        return NULL;
    prop(first, "EventName", &pi);
    return pi.kind == WFL_PROP_LITERAL ? wf_value_str(pi.literal) : NULL;
}

/* ---- outcomes of each kind --------------------------------------------------------------- */
/* A loop: `none` when it closes without running its body, `once` after one body, `many` at the
 * second. */
static void add_loop(wfb__cover *cv, const wfl_node *n, wfb_vkind kind, const char *none,
                     const char *once, const char *many)
{
    size_t zero = add_point(cv, kind, n, none);
    size_t one = add_point(cv, kind, n, once);
    size_t more = add_point(cv, kind, n, many);
    size_t loop = add_role(cv, wfl_node_name(n), R_LOOP, zero, NONE);
    if (!cv->oom)
        cv->roles[loop].pt1 = one;
    const wfl_node *body = first_body_child(n);
    if (body)
        add_role(cv, wfl_node_name(body), R_LOOP_BODY, more, loop);
    else
        set_why(cv, one, "the loop has no body"), set_why(cv, more, "the loop has no body");
    bool value;
    if (kind == WFB_VK_WHILE && constant_condition(n, &value)) {
        set_why(cv, value ? zero : one, value ? "condition constant true" : "condition constant false");
        if (!value)
            set_why(cv, more, "condition constant false");
    }
}

static void add_ifelse_branch(wfb__cover *cv, const wfl_node *n)
{
    size_t pt = add_point(cv, WFB_VK_IFELSE, n, "taken");
    add_role(cv, wfl_node_name(n), R_HIT, pt, NONE);
    bool value;
    if (constant_condition(n, &value) && !value)
        set_why(cv, pt, "condition constant false");
    const wfl_node *ifelse = wfl_node_parent(n);
    for (size_t i = 0; ifelse && i < wfl_node_child_count(ifelse); i++) {
        const wfl_node *before = wfl_node_child(ifelse, i);
        if (before == n)
            break;
        if (!wfl_node_is_disabled(before) && constant_condition(before, &value) && value)
            set_why(cv, pt, "an earlier branch's condition is constant true");
    }
}

/* The first HandleExternalEvent below n (document order), or NULL. */
static const wfl_node *first_event(const wfl_node *n)
{
    if (wfl_node_is_disabled(n) || alt_flow(n))
        return NULL;
    if (wfl_node_type(n)->kind == WFL_KIND_HANDLE_EXTERNAL_EVENT)
        return n;
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *e = first_event(wfl_node_child(n, i));
        if (e)
            return e;
    }
    return NULL;
}

/* Append every permutation of the k-element set `left` after prefix[0..depth) as an outcome
 * "A then B then C", in lexicographic order (so its rank is its offset from the first). */
static void add_orders(wfb__cover *cv, const wfl_node *par, const wfl_node **ev, size_t n,
                       size_t *prefix, size_t depth, unsigned used)
{
    if (depth == n) {
        char out[600];
        size_t o = 0;
        for (size_t i = 0; i < n && o < sizeof out; i++)
            o += (size_t)snprintf(out + o, sizeof out - o, "%s%s", i ? " then " : "",
                                  wfl_node_name(ev[prefix[i]]));
        add_point(cv, WFB_VK_ORDER, par, out);
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (!(used & (1u << i))) {
            prefix[depth] = i;
            add_orders(cv, par, ev, n, prefix, depth + 1, used | (1u << i));
        }
}

/* A Parallel of 2 to ORDER_MAX branches that each wait on an event: every order of those
 * events is an outcome. */
static void add_parallel(wfb__cover *cv, const wfl_node *n)
{
    const wfl_node *ev[ORDER_MAX];
    size_t count = 0;
    for (size_t i = 0; i < wfl_node_child_count(n); i++) {
        const wfl_node *c = wfl_node_child(n, i);
        if (wfl_node_is_disabled(c) || alt_flow(c))
            continue;
        const wfl_node *e = first_event(c);
        if (!e)
            continue;
        if (count == ORDER_MAX)
            return; /* too many orders to be outcomes */
        ev[count++] = e;
    }
    if (count < 2)
        return;
    size_t first = cv->count, prefix[ORDER_MAX];
    add_orders(cv, n, ev, count, prefix, 0, 0);
    size_t par = add_role(cv, wfl_node_name(n), R_ORDER, first, NONE);
    if (!cv->oom)
        cv->roles[par].idx = count;
    for (size_t i = 0; i < count && !cv->oom; i++) {
        size_t r = add_role(cv, wfl_node_name(ev[i]), R_ORDER_EV, NONE, par);
        if (!cv->oom)
            cv->roles[r].idx = i;
    }
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
            then_pt = add_point(cv, WFB_VK_POLICY, n, out);
        }
        if (wfl_rule_action_count(r, true)) {
            snprintf(out, sizeof out, "%s else", wfl_rule_name(r));
            else_pt = add_point(cv, WFB_VK_POLICY, n, out);
        }
        rule_pt *grown = grow(cv, cv->rules, cv->rule_count, sizeof *grown);
        if (!grown)
            return;
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

static void add_set_state(wfb__cover *cv, const wfl_node *n)
{
    const wfl_node *from = enclosing_state(n);
    wfl_prop_info pi;
    char out[600];
    prop(n, "TargetStateName", &pi);
    if (!from || pi.kind != WFL_PROP_LITERAL)
        return; /* a SetState outside a state, or without a target, moves nowhere */
    snprintf(out, sizeof out, "-> %s", wf_value_str(pi.literal));
    add_role(cv, wfl_node_name(n), R_HIT, add_point(cv, WFB_VK_STATE, from, out), NONE);
}

static void add_fault_handler(wfb__cover *cv, const wfl_node *n)
{
    wfl_prop_info pi;
    char out[600];
    prop(n, "FaultType", &pi);
    snprintf(out, sizeof out, "caught %s", pi.kind == WFL_PROP_TYPE && pi.name ? pi.name : "any");
    add_role(cv, wfl_node_name(n), R_HIT, add_point(cv, WFB_VK_FAULT, n, out), NONE);
}

static void add_event_driven(wfb__cover *cv, const wfl_node *n)
{
    size_t pt = add_point(cv, WFB_VK_EVENT, n, "won");
    add_role(cv, wfl_node_name(n), R_HIT, pt, NONE);
    const char *event = driven_event(n);
    if (event && !cv->oom && !cv->points[pt].event)
        cv->points[pt].event = keep(cv, event);
}

static void walk(wfb__cover *cv, const wfl_node *n, const wfl_rules *rules)
{
    if (wfl_node_is_disabled(n))
        return;
    const wfl_node *parent = wfl_node_parent(n);
    switch (wfl_node_type(n)->kind) {
    case WFL_KIND_IFELSE_BRANCH:
        add_ifelse_branch(cv, n);
        break;
    case WFL_KIND_WHILE:
        add_loop(cv, n, WFB_VK_WHILE, "skipped", "1 iteration", "2+ iterations");
        break;
    case WFL_KIND_REPLICATOR:
        add_loop(cv, n, WFB_VK_REPLICATOR, "ran none", "ran 1 child", "ran 2+ children");
        break;
    case WFL_KIND_PARALLEL:
        add_parallel(cv, n);
        break;
    case WFL_KIND_FAULT_HANDLERS:
        if (parent)
            add_role(cv, wfl_node_name(parent), R_OWNER,
                     add_point(cv, WFB_VK_FAULT, parent, "no fault"), NONE);
        break;
    case WFL_KIND_FAULT_HANDLER:
        add_fault_handler(cv, n);
        break;
    case WFL_KIND_EVENT_DRIVEN:
        add_event_driven(cv, n);
        break;
    case WFL_KIND_SET_STATE:
        add_set_state(cv, n);
        break;
    case WFL_KIND_POLICY:
        add_policy(cv, n, rules);
        break;
    default:
        break;
    }
    if (parent && wfl_node_type(parent)->kind == WFL_KIND_CAG && !alt_flow(n))
        add_role(cv, wfl_node_name(n), R_HIT, add_point(cv, WFB_VK_CAG, n, "ran"), NONE);
    for (size_t i = 0; i < wfl_node_child_count(n); i++)
        walk(cv, wfl_node_child(n, i), rules);
}

/* ---- constants the rule conditions compare root properties with -------------------------- */
static bool is_comparison(wfl_rop op)
{
    return op == WFL_ROP_VALUE_EQUALITY || op == WFL_ROP_IDENTITY_EQUALITY ||
           op == WFL_ROP_IDENTITY_INEQUALITY || op == WFL_ROP_LESS_THAN ||
           op == WFL_ROP_LESS_THAN_OR_EQUAL || op == WFL_ROP_GREATER_THAN ||
           op == WFL_ROP_GREATER_THAN_OR_EQUAL;
}

/* `this.Name`: Name; else NULL. */
static const char *root_member(const wfl_rexpr *e)
{
    if (wfl_rexpr_kind_of(e) != WFL_REX_MEMBER || wfl_rexpr_child_count(e) < 1 ||
        wfl_rexpr_kind_of(wfl_rexpr_child(e, 0)) != WFL_REX_THIS)
        return NULL;
    return wfl_rexpr_name(e);
}

static void add_hint(wfb__cover *cv, const char *name, const wf_value *v)
{
    for (size_t i = 0; i < cv->hint_count; i++)
        if (strcmp(cv->hints[i].name, name) == 0 && wf_value_equal(cv->hints[i].value, v))
            return;
    wfb__vhint *grown = grow(cv, cv->hints, cv->hint_count, sizeof *grown);
    if (!grown)
        return;
    cv->hints = grown;
    grown[cv->hint_count++] = (wfb__vhint){keep(cv, name), v};
}

static void find_hints(wfb__cover *cv, const wfl_rexpr *e)
{
    if (!e)
        return;
    if (wfl_rexpr_kind_of(e) == WFL_REX_BINARY && is_comparison(wfl_rexpr_op(e))) {
        for (size_t side = 0; side < 2; side++) {
            const char *name = root_member(wfl_rexpr_child(e, side));
            const wfl_rexpr *other = wfl_rexpr_child(e, 1 - side);
            if (name && wfl_rexpr_kind_of(other) == WFL_REX_PRIMITIVE &&
                !wf_is_null(wfl_rexpr_value(other)))
                add_hint(cv, name, wfl_rexpr_value(other));
        }
    }
    for (size_t i = 0; i < wfl_rexpr_child_count(e); i++)
        find_hints(cv, wfl_rexpr_child(e, i));
}

static void rule_hints(wfb__cover *cv, const wfl_rules *rules)
{
    for (size_t i = 0; rules && i < wfl_rules_condition_count(rules); i++)
        find_hints(cv, wfl_rule_cond_expr(wfl_rules_condition_at(rules, i)));
    for (size_t i = 0; rules && i < wfl_rules_ruleset_count(rules); i++) {
        const wfl_ruleset *rs = wfl_rules_ruleset_at(rules, i);
        for (size_t k = 0; k < wfl_ruleset_rule_count(rs); k++)
            find_hints(cv, wfl_rule_condition(wfl_ruleset_rule_at(rs, k)));
    }
}

wf_status wfb__cover_build(const wfl_definition *def, wf_types *types, wfb__cover **out,
                           wf_error *err)
{
    *out = NULL;
    wfb__cover *cv = wf_calloc(1, sizeof *cv);
    if (!cv)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    const char *rpath = wfl_definition_rules_path(def);
    if (rpath) {
        wf_status rc = wfl_rules_load(rpath, types, &cv->ruleset_file, NULL, err);
        if (rc != WF_OK) {
            wfb__cover_destroy(cv);
            return rc;
        }
    }
    walk(cv, wfl_definition_root(def), cv->ruleset_file);
    rule_hints(cv, cv->ruleset_file);
    if (cv->oom) {
        wfb__cover_destroy(cv);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    *out = cv;
    return WF_OK;
}

size_t wfb__cover_hint_count(const wfb__cover *cv)
{
    return cv->hint_count;
}

const wfb__vhint *wfb__cover_hint(const wfb__cover *cv, size_t index)
{
    return index < cv->hint_count ? &cv->hints[index] : NULL;
}

void wfb__cover_destroy(wfb__cover *cv)
{
    if (!cv)
        return;
    wf_free(cv->points);
    wf_free(cv->roles);
    wf_free(cv->rules);
    wf_free(cv->hints);
    wfl_rules_destroy(cv->ruleset_file);
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
    r->open[r->open_count++] = (open_exec){.role = ri, .ctx = ctx};
}

/* The rank of seq (a permutation of 0..n-1) in lexicographic order. */
static size_t order_rank(const unsigned char *seq, size_t n)
{
    size_t rank = 0;
    for (size_t i = 0; i < n; i++) {
        size_t smaller = 0;
        for (size_t k = i + 1; k < n; k++)
            smaller += seq[k] < seq[i];
        size_t fact = 1;
        for (size_t k = 2; k < n - i; k++)
            fact *= k;
        rank += smaller * fact;
    }
    return rank;
}

/* The event of branch ro->idx came: the first time, it takes its place in the order. */
static void on_order_event(wfb__cover_run *r, const role *ro)
{
    open_exec *o = find_open(r, ro->of, NONE);
    if (!o)
        return;
    for (unsigned i = 0; i < o->count; i++)
        if (o->seq[i] == ro->idx)
            return; /* the branch waits again (a loop in it): only its first event counts */
    const role *par = &r->cv->roles[ro->of];
    o->seq[o->count++] = (unsigned char)ro->idx;
    assert(o->count <= par->idx);
    if (o->count == par->idx)
        r->hit[par->pt + order_rank(o->seq, par->idx)] = true;
}

static void on_executing(wfb__cover_run *r, size_t ri, const role *ro, unsigned ctx)
{
    open_exec *o;
    if (ro->kind == R_HIT)
        r->hit[ro->pt] = true;
    if (ro->kind == R_LOOP_BODY && (o = find_open(r, ro->of, NONE)) && ++o->count == 2)
        r->hit[ro->pt] = true;
    if (ro->kind == R_LOOP || ro->kind == R_OWNER || ro->kind == R_ORDER)
        push_open(r, ri, ctx);
}

static void on_role(wfb__cover_run *r, size_t ri, const wfl_trace_rec *rec)
{
    const role *ro = &r->cv->roles[ri];
    open_exec *o;
    if (rec->status == WFL_ST_EXECUTING) {
        on_executing(r, ri, ro, rec->context_id);
        return;
    }
    if (ro->kind == R_ORDER_EV && rec->status == WFL_ST_CLOSED &&
        rec->result == WFL_RES_SUCCEEDED)
        on_order_event(r, ro);
    if (ro->kind != R_LOOP && ro->kind != R_OWNER && ro->kind != R_ORDER)
        return;
    if (!(o = find_open(r, ri, rec->context_id)))
        return; /* closing again after compensation: not an execution */
    if (rec->status == WFL_ST_FAULTING && ro->kind == R_OWNER)
        o->flag = true;
    if (rec->status != WFL_ST_CLOSED)
        return;
    if (rec->result == WFL_RES_SUCCEEDED && ro->kind == R_OWNER && !o->flag)
        r->hit[ro->pt] = true;
    if (rec->result == WFL_RES_SUCCEEDED && ro->kind == R_LOOP && o->count < 2)
        r->hit[o->count ? ro->pt1 : ro->pt] = true;
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

/* wfl_act_native.c — where activities meet native code and rules: custom activity Execute
 * against the activity's DPs, code-beside handlers and conditions against the root, service
 * methods through ParameterBindings, .rules conditions and RuleSets with `this` = the root,
 * and the trace record of every native call (docs/architecture.md "The legacy model"). */
#include "wfl_exec_int.h"

#include <string.h>

/* The runtime reads built-in DPs by name ("Condition", "ExecuteCode", "UntilCondition") on
 * every step. A per-thread table remembers, by the address of the name, the built-in DP last
 * found for it; a hit is checked by content (the type holds that DP at its index and its
 * name is dp_name), so a reused address can only miss. Built-in DPs are static: an entry
 * never dangles. */
enum { DP_CACHE_SIZE = 64 };
typedef struct dp_cache_entry {
    const char *name;
    const wfl_dp *dp;
} dp_cache_entry;
static _Thread_local dp_cache_entry dp_cache[DP_CACHE_SIZE];

static bool dp_name_is(const wfl_dp *dp, const char *name)
{
    const char *a = dp->name;
    if (a == name) /* the linker merges equal string literals: usually the same bytes */
        return true;
    while (*a && *a == *name)
        a++, name++;
    return *a == *name;
}

const wfl_dp *wfl__dp(const wfl_act *act, const char *dp_name)
{
    const wfl_type *t = wfl_act_type(act);
    dp_cache_entry *e = &dp_cache[((uintptr_t)dp_name >> 3) % DP_CACHE_SIZE];
    const wfl_dp *dp = e->name == dp_name ? e->dp : NULL;
    if (dp && dp->index < t->dp_count && t->dps[dp->index] == dp && dp_name_is(dp, dp_name))
        return dp;
    dp = wfl_type_find_dp(t, dp_name);
    if (dp && wfl_dp_is_builtin(dp))
        *e = (dp_cache_entry){dp_name, dp};
    return dp;
}

const wfl_pval *wfl__pval(const wfl_act *act, const char *dp_name)
{
    const wfl_dp *dp = wfl__dp(act, dp_name);
    return dp ? wfl_node_pval(wfl_act_node(act), dp) : NULL;
}

static wfl_act *root_of(wfl_exec *ex)
{
    return wfl_inst_root(ex->inst);
}

/* ---- tracing ------------------------------------------------------------------------------- */
typedef struct call_ctx {
    wfl_exec *ex;
    wfl_act *act;    /* the activity the call is made for (trace) */
    wfl_act *target; /* whose DPs the names read/write */
    const wfl_tl_func *fn;
    const wfl_dp *const *dps; /* get_at_dp / set_at_dp: fn's parameters resolved, or NULL */
} call_ctx;

static void trace_call(void *ud, const wfl_tl_call_record *rec)
{
    call_ctx *cc = ud;
    wfl_exec *ex = cc->ex;
    if (!ex->opts.trace)
        return;
    size_t n = rec->count + 1;
    const char **names = wf_calloc(2 * n, sizeof(char *));
    wf_value *vals = wf_calloc(2 * n, sizeof(wf_value));
    if (!names || !vals) {
        wf_free(names);
        wf_free(vals);
        return;
    }
    size_t ni = 0, no = 0;
    for (size_t i = 0; i < rec->count; i++) {
        const wfl_tl_prop *p = wfl_tl_func_param(rec->fn, i);
        if (p->dir == WFL_TL_IN || p->dir == WFL_TL_INOUT) {
            names[ni] = p->name;
            vals[ni++] = rec->args[i];
        }
        if (p->dir == WFL_TL_OUT || p->dir == WFL_TL_INOUT) {
            names[n + no] = p->name;
            vals[n + no++] = rec->outs[i];
        }
    }
    const wfl_tl_prop *rp = wfl_tl_func_return(rec->fn);
    if (rec->ret && (rp || !wf_is_null(rec->ret))) { /* a Return binding, also null */
        names[n + no] = rp ? rp->name : "(ReturnValue)";
        vals[n + no++] = *rec->ret;
    }
    wfl_trace_rec tr = {0};
    tr.kind = WFL_TRACE_NATIVE;
    tr.activity = wfl_act_name(cc->act);
    tr.type = wfl_act_type(cc->act)->name;
    tr.context_id = wfl_act_context_id(cc->act);
    tr.function = wfl_tl_func_symbol(rec->fn);
    tr.in_names = names;
    tr.in_values = vals;
    tr.in_count = ni;
    tr.out_names = names + n;
    tr.out_values = vals + n;
    tr.out_count = no;
    tr.ret = rec->ret;
    tr.call_status = rec->status;
    ex->opts.trace(ex->opts.trace_ud, &tr);
    wf_free(names);
    wf_free(vals);
}

/* ---- value access by name -------------------------------------------------------------------- */
/* Code-beside names go to the root, except inside a Replicator child event: "InstanceData"
 * reads the child's data, and a name that is a DP of the child clone reads/writes the clone
 * (the C rendering of ReplicatorChildEventArgs.InstanceData and e.Activity). */
static wfl_act *event_target(call_ctx *cc, const char *name)
{
    wfl_exec *ex = cc->ex;
    if (ex->event_child && wfl__dp(ex->event_child, name) && strcmp(name, "Name") != 0)
        return ex->event_child;
    return cc->target;
}

static wf_status get_by_name(void *ud, const char *name, const wf_type *type, wf_value *out,
                             wf_error *err)
{
    (void)type;
    call_ctx *cc = ud;
    if (cc->ex->event_data && strcmp(name, "InstanceData") == 0) {
        *out = wf_value_retain(cc->ex->event_data);
        return WF_OK;
    }
    return wfl_act_get_by_name(event_target(cc, name), name, out, err);
}

static wf_status set_by_name(void *ud, const char *name, const wf_value *value, wf_error *err)
{
    call_ctx *cc = ud;
    if (cc->ex->event_data && strcmp(name, "InstanceData") == 0)
        return WF_OK;
    return wfl_act_set_by_name(event_target(cc, name), name, value, err);
}

/* Call cc->fn with values read and written through get/set (counted, traced when asked). */
static wf_status invoke_cc(call_ctx *cc, wfl_tl_get_fn get, wfl_tl_set_fn set, wf_value *ret,
                           wf_error *err)
{
    cc->ex->stats.native_calls++;
    wfl_tl_binding b = {get, set, cc->ex->opts.trace ? trace_call : NULL, cc, NULL, NULL, NULL};
    return wfl_tl_func_invoke(cc->fn, &b, ret, err);
}

static wf_status get_at_dp(void *ud, size_t index, wf_value *out, wf_error *err)
{
    call_ctx *cc = ud;
    return wfl_act_get(cc->target, cc->dps[index], out, err);
}

static wf_status set_at_dp(void *ud, size_t index, const wf_value *value, wf_error *err)
{
    call_ctx *cc = ud;
    return wfl_act_set(cc->target, cc->dps[index], value, err);
}

/* An unbound DP's value in its slot (a bound one is read through get_at_dp). */
static const wf_value *peek_at_dp(void *ud, size_t index)
{
    call_ctx *cc = ud;
    return wfl_act_peek(cc->target, cc->dps[index]);
}

/* Call cc->fn through cc->dps (parameters resolved at load, no lookup by name). */
static wf_status invoke_at(call_ctx *cc, wf_value *ret, wf_error *err)
{
    cc->ex->stats.native_calls++;
    wfl_tl_binding b = WFL_TL_BINDING_INIT;
    b.get_at = get_at_dp;
    b.set_at = set_at_dp;
    b.peek_at = peek_at_dp;
    b.trace = cc->ex->opts.trace ? trace_call : NULL;
    b.ud = cc;
    return wfl_tl_func_invoke(cc->fn, &b, ret, err);
}

/* A code-beside function's parameters as resolved on the target's type, or NULL (read by
 * name: no such array, or an event's child and data may stand in for the target's DPs). */
static const wfl_dp *const *class_fn_dps(const wfl_exec *ex, const wfl_act *target,
                                         const wfl_tl_func *fn)
{
    const wfl_type *t = wfl_act_type(target);
    if (!t->class_fn_dps || ex->event_child || ex->event_data)
        return NULL;
    size_t i = wfl_tl_class_func_index(t->code_beside, fn);
    return i < wfl_tl_class_func_count(t->code_beside) ? t->class_fn_dps[i] : NULL;
}

static wf_status invoke_on(wfl_exec *ex, wfl_act *act, wfl_act *target, const wfl_tl_func *fn,
                           wf_value *ret, wf_error *err)
{
    call_ctx cc = {ex, act, target, fn, class_fn_dps(ex, target, fn)};
    if (cc.dps)
        return invoke_at(&cc, ret, err);
    return invoke_cc(&cc, get_by_name, set_by_name, ret, err);
}

/* ---- rules target: `this` is the root ----------------------------------------------------------
 */
enum { MEMBER_PROBES = 4 }; /* a rule set's few names share 16 entries: probe, not evict */

/* The root's DP a this-path names. Rules name the same few members on every evaluation (a
 * While's condition each iteration): remembered per executor by the address of the name, and
 * a hit is checked against the root's current type and by content, so nothing read can
 * dangle and a reused address can only miss. */
static const wfl_dp *root_member(wfl_exec *ex, const char *name)
{
    const wfl_type *t = wfl_act_type(root_of(ex));
    size_t slots = sizeof ex->members / sizeof ex->members[0];
    uint64_t h = (uint64_t)(uintptr_t)name * UINT64_C(0x9E3779B97F4A7C15); /* names packed */
    member_memo *e = &ex->members[(h >> 32) % slots];
    for (size_t i = 0; i < MEMBER_PROBES; i++) {
        member_memo *m = &ex->members[((h >> 32) + i) % slots];
        if (m->name == name || !m->name) {
            e = m;
            break;
        }
    }
    if (e->name == name && e->type == t && e->index < t->dp_count &&
        dp_name_is(t->dps[e->index], name))
        return t->dps[e->index];
    const wfl_dp *dp = wfl__dp(root_of(ex), name);
    if (dp && dp->index < t->dp_count && t->dps[dp->index] == dp) {
        e->name = name;
        e->type = t;
        e->index = dp->index;
    }
    return dp;
}

static wf_status segs_to_path(const wfl_rules_seg *path, size_t count, wfl_path_seg *out,
                              size_t max, size_t *n, wf_error *err)
{
    size_t k = 0;
    for (size_t i = 1; i < count; i++) {
        if (k == max)
            return wf_error_set(err, WF_E_LIMIT, NULL, "member path too long");
        out[k++] = (wfl_path_seg){WFL_SEG_MEMBER, path[i].name, 0};
    }
    *n = k;
    return WF_OK;
}

static wf_status rules_get(void *ud, const wfl_rules_seg *path, size_t count, wf_value *out,
                           wf_value *exc, wf_error *err)
{
    (void)exc;
    wfl_exec *ex = ud;
    if (count != 1 || path[0].index_count)
        return WF_E_NAME; /* the evaluator reads the prefix and applies the rest itself */
    const wfl_dp *dp = root_member(ex, path[0].name);
    if (!dp)
        return wf_error_set(err, WF_E_NAME, NULL, "'%s' is not a member of the workflow",
                            path[0].name);
    return wfl_act_get(root_of(ex), dp, out, err);
}

static wf_status rules_set(void *ud, const wfl_rules_seg *path, size_t count, const wf_value *value,
                           wf_value *exc, wf_error *err)
{
    (void)exc;
    wfl_exec *ex = ud;
    wfl_act *root = root_of(ex);
    for (size_t i = 0; i < count; i++)
        if (path[i].index_count)
            return wf_error_set(err, WF_E_UNSUPPORTED, NULL,
                                "assigning through an indexer is not supported");
    if (count == 1) {
        const wfl_dp *dp = root_member(ex, path[0].name);
        return dp ? wfl_act_set(root, dp, value, err)
                  : wfl_act_set_by_name(root, path[0].name, value, err); /* its message */
    }
    wfl_path_seg segs[16];
    size_t n = 0;
    wf_status rc = segs_to_path(path, count, segs, 16, &n, err);
    if (rc != WF_OK)
        return rc;
    wf_value cur = wf_null(), next = wf_null();
    rc = wfl_act_get_by_name(root, path[0].name, &cur, err);
    if (rc == WF_OK)
        rc = wfl_value_path_set(&cur, segs, n, value, &next, err);
    if (rc == WF_OK)
        rc = wfl_act_set_by_name(root, path[0].name, &next, err);
    wf_value_release(&cur);
    wf_value_release(&next);
    return rc;
}

/* The slot rules_get would copy from (an unbound DP of the root), or NULL. */
static const wf_value *rules_peek(void *ud, const char *member)
{
    wfl_exec *ex = ud;
    const wfl_dp *dp = root_member(ex, member);
    return dp ? wfl_act_peek(root_of(ex), dp) : NULL;
}

static wfl_rules_target rules_target(wfl_exec *ex)
{
    wfl_rules_target t = {rules_get, rules_set, NULL, ex, rules_peek};
    return t;
}

/* ---- conditions and events ------------------------------------------------------------------- */
static bool fault_msg(wfl_exec *ex, wfl_act *act, wf_status code, const char *what,
                      const char *name)
{
    wf_error e = WF_ERROR_INIT;
    wf_error_set(&e, code, &wfl_act_node(act)->loc, "no %s '%s'", what, name);
    wfl__throw_error(ex, act, &e, NULL);
    return false;
}

bool wfl__condition(wfl_exec *ex, wfl_act *act, const wfl_cond *cond, bool *ok)
{
    return wfl__condition_of(ex, act, act, cond, ok);
}

bool wfl__condition_of(wfl_exec *ex, wfl_act *act, wfl_act *owner, const wfl_cond *cond, bool *ok)
{
    wf_error err; /* per call: cleared, not zero-filled (780 bytes) */
    wf_error_clear(&err);
    *ok = false;
    if (cond->kind == WFL_COND_CODE) {
        if (!cond->fn)
            return fault_msg(ex, act, WF_E_NAME, "code-beside condition", cond->name);
        wf_value ret = wf_null();
        if (invoke_on(ex, owner, root_of(ex), cond->fn, &ret, &err) != WF_OK) {
            wfl__throw_error(ex, act, &err, NULL);
            return false;
        }
        *ok = true;
        bool r = ret.type->kind == WF_K_BOOL && ret.u.b;
        wf_value_release(&ret);
        return r;
    }
    if (!cond->rule)
        return fault_msg(ex, act, WF_E_NAME, ".rules condition (no rules loaded?)", cond->name);
    wfl_rules_target t = rules_target(ex);
    bool result = false;
    wf_value exc = wf_null();
    if (wfl_rules_eval_condition(cond->rule, &t, &result, &exc, &err) != WF_OK) {
        wfl__throw_error(ex, act, &err, &exc);
        wf_value_release(&exc);
        return false;
    }
    *ok = true;
    return result;
}

bool wfl__condition_dp(wfl_exec *ex, wfl_act *act, const char *dp_name, bool unset_true, bool *ok)
{
    const wfl_pval *pv = wfl__pval(act, dp_name);
    if (!pv || pv->kind != WFL_PV_CONDITION) {
        *ok = true;
        return unset_true;
    }
    return wfl__condition(ex, act, &pv->u.cond, ok);
}

bool wfl__raise_event(wfl_exec *ex, wfl_act *act, const char *dp_name)
{
    return wfl__raise_pval(ex, act, wfl__pval(act, dp_name), dp_name);
}

bool wfl__raise_pval(wfl_exec *ex, wfl_act *act, const wfl_pval *pv, const char *dp_name)
{
    if (pv && pv->kind == WFL_PV_BIND) {
        wf_error e = WF_ERROR_INIT;
        wf_error_set(&e, WF_E_UNSUPPORTED, &pv->loc,
                     "%s: an event handler given by ActivityBind cannot be called", dp_name);
        wfl__throw_error(ex, act, &e, NULL);
        return false;
    }
    if (!pv || pv->kind != WFL_PV_HANDLER)
        return true;
    if (!pv->u.handler.fn)
        return fault_msg(ex, act, WF_E_NAME, "code-beside handler", pv->u.handler.name);
    if (ex->opts.skip_native)
        return true;
    wf_error err; /* per call: cleared, not zero-filled (780 bytes) */
    wf_error_clear(&err);
    if (invoke_on(ex, act, root_of(ex), pv->u.handler.fn, NULL, &err) != WF_OK) {
        wfl__throw_error(ex, act, &err, NULL);
        return false;
    }
    return true;
}

/* A custom activity's Execute reads and writes its own DPs, resolved at load (exec_dps). */
wfl_status wfl__call_custom(wfl_exec *ex, wfl_act *act)
{
    const wfl_type *t = wfl_act_type(act);
    const wfl_tl_func *fn = t->custom ? wfl_tl_activity_func(t->custom) : NULL;
    if (!fn || ex->opts.skip_native)
        return WFL_ST_CLOSED;
    wf_error err; /* per call: cleared, not zero-filled (780 bytes) */
    wf_error_clear(&err);
    call_ctx cc = {ex, act, act, fn, t->exec_dps};
    wf_status rc;
    if (t->exec_dps && !ex->event_child && !ex->event_data) {
        rc = invoke_at(&cc, NULL, &err);
    } else {
        rc = invoke_cc(&cc, get_by_name, set_by_name, NULL, &err);
    }
    if (rc != WF_OK)
        return wfl__throw_error(ex, act, &err, NULL);
    return WFL_ST_CLOSED;
}

typedef struct rule_ctx {
    wfl_exec *ex;
    wfl_act *act;
} rule_ctx;

static void rule_seen(void *ud, const wfl_rule *rule, bool result)
{
    rule_ctx *rc = ud;
    rc->ex->opts.on_rule(rc->ex->opts.rule_ud, wfl_act_name(rc->act), wfl_rule_name(rule), result);
}

wfl_status wfl__run_ruleset(wfl_exec *ex, wfl_act *act, const wfl_ruleset *rs)
{
    wfl_rules_target t = rules_target(ex);
    wf_value exc = wf_null();
    wf_error err; /* per call: cleared, not zero-filled (780 bytes) */
    wf_error_clear(&err);
    rule_ctx rc = {ex, act};
    wfl_rules_exec_opts ro = WFL_RULES_EXEC_OPTS_INIT;
    ro.on_rule = ex->opts.on_rule ? rule_seen : NULL;
    ro.ud = &rc;
    if (wfl_rules_execute(rs, &t, &ro, &exc, &err) != WF_OK) {
        wfl__throw_error(ex, act, &err, &exc);
        wf_value_release(&exc);
        return WFL_ST_FAULTING;
    }
    return WFL_ST_CLOSED;
}

/* ---- ParameterBindings -------------------------------------------------------------------------
 */
static const wfl_param_binding *find_binding(wfl_act *act, const char *param)
{
    const wfl_pval *pv = wfl__pval(act, "ParameterBindings");
    if (!pv || pv->kind != WFL_PV_PARAMS)
        return NULL;
    for (size_t i = 0; i < pv->u.params.count; i++)
        if (strcmp(pv->u.params.items[i].param, param) == 0)
            return &pv->u.params.items[i];
    return NULL;
}

static wf_status binding_get(wfl_act *act, const wfl_param_binding *pb, wf_value *out,
                             wf_error *err)
{
    if (!pb || !pb->has_value) {
        *out = wf_null();
        return WF_OK;
    }
    if (pb->is_bind)
        return wfl_act_bind_get(act, pb->bind, out, err);
    *out = wf_value_retain(&pb->literal);
    return WF_OK;
}

static wf_status binding_set(wfl_act *act, const wfl_param_binding *pb, const wf_value *v,
                             wf_error *err)
{
    if (!pb || !pb->is_bind) /* nothing bound: the value is dropped, as in WF3 */
        return WF_OK;
    return wfl_act_bind_set(act, pb->bind, v, err);
}

wf_status wfl__param_write(wfl_act *act, const wfl_param_binding *pb, const wf_value *v,
                           wf_error *err)
{
    return binding_set(act, pb, v, err);
}

static wf_status method_get(void *ud, const char *name, const wf_type *type, wf_value *out,
                            wf_error *err)
{
    (void)type;
    call_ctx *cc = ud;
    return binding_get(cc->target, find_binding(cc->target, name), out, err);
}

static wf_status method_set(void *ud, const char *name, const wf_value *value, wf_error *err)
{
    call_ctx *cc = ud;
    const wfl_param_binding *pb = find_binding(cc->target, name);
    const wfl_tl_prop *rp = wfl_tl_func_return(cc->fn);
    if (!pb && rp && strcmp(rp->name, name) == 0)
        pb = find_binding(cc->target, "(ReturnValue)");
    return binding_set(cc->target, pb, value, err);
}

wfl_status wfl__call_method(wfl_exec *ex, wfl_act *act, const wfl_tl_func *fn)
{
    if (ex->opts.skip_native)
        return WFL_ST_CLOSED;
    call_ctx cc = {ex, act, act, fn, NULL};
    wf_error err = WF_ERROR_INIT;
    wf_value ret = wf_null();
    wf_status rc = invoke_cc(&cc, method_get, method_set, &ret, &err);
    if (rc == WF_OK && !wfl_tl_func_return(fn) && !wf_is_null(&ret))
        rc = binding_set(act, find_binding(act, "(ReturnValue)"), &ret, &err);
    wf_value_release(&ret);
    if (rc != WF_OK)
        return wfl__throw_error(ex, act, &err, NULL);
    return WFL_ST_CLOSED;
}

/* The event arguments `e` from the bound payload (wf_payload_bind: a record of the parameters
 * given, already converted): the single declared parameter when it is named e, otherwise a
 * record of every declared parameter (null when not given). */
static wf_status event_args(const wfl_tl_event *ev, const wf_value *bound, wf_value *out,
                            wf_error *err)
{
    size_t n = wfl_tl_event_param_count(ev);
    wf_value none = wf_null();
    if (n == 1 && strcmp(wfl_tl_event_param(ev, 0)->name, "e") == 0) {
        const wf_value *e = wf_value_record_get(bound, "e");
        *out = wf_value_retain(e ? e : &none);
        return WF_OK;
    }
    const char *keys[32];
    wf_value vals[32];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 32; i++, k++) {
        const wf_value *v = wf_value_record_get(bound, wfl_tl_event_param(ev, i)->name);
        keys[k] = wfl_tl_event_param(ev, i)->name;
        vals[k] = v ? *v : none;
    }
    if (wf_value_record(keys, vals, k, out) != WF_OK)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory building the event arguments");
    return WF_OK;
}

/* HandleExternalEvent's ParameterBindings (docs/wf3-behaviour.md): `e` receives the event
 * arguments, `sender` the service's name; a declared parameter bound by its own name (a
 * wfbridge extension the loader warns about) receives that parameter. */
static wf_status write_event_binding(wfl_act *act, const wfl_param_binding *pb,
                                     const wfl_tl_event *ev, const wf_value *bound,
                                     wf_error *err)
{
    wf_value v = wf_null();
    wf_status rc = WF_OK;
    if (strcmp(pb->param, "e") == 0) {
        rc = event_args(ev, bound, &v, err);
    } else if (strcmp(pb->param, "sender") == 0) {
        const wfl_pval *it = wfl__pval(act, "InterfaceType");
        const wfl_tl_service *s = it && it->kind == WFL_PV_TYPE ? it->u.type.service : NULL;
        rc = wf_value_cstring(s ? wfl_tl_service_name(s) : "", &v);
    } else {
        const wf_value *field = wf_value_record_get(bound, pb->param);
        if (field)
            v = wf_value_retain(field);
    }
    if (rc == WF_OK)
        rc = binding_set(act, pb, &v, err);
    wf_value_release(&v);
    return rc;
}

/* One parameter read back: bound by its own name, else a field of what `e` holds (the whole
 * of it for the single parameter e). *kept false when no binding writes it. */
static wf_status read_event_param(wfl_act *act, const wfl_tl_event *ev, const char *param,
                                  wf_value *out, bool *kept, wf_error *err)
{
    const wfl_param_binding *pb = find_binding(act, param);
    *out = wf_null();
    *kept = pb && pb->is_bind;
    if (*kept)
        return binding_get(act, pb, out, err);
    pb = find_binding(act, "e");
    *kept = pb && pb->is_bind;
    if (!*kept)
        return WF_OK;
    wf_value e = wf_null();
    wf_status rc = binding_get(act, pb, &e, err);
    const wf_value *field = wfl_tl_event_param_count(ev) == 1 && strcmp(param, "e") == 0
                                ? &e
                                : wf_value_record_get(&e, param);
    *kept = rc == WF_OK && field;
    if (*kept)
        *out = wf_value_retain(field);
    wf_value_release(&e);
    return rc;
}

wf_status wfl__read_event_params(wfl_act *act, const wfl_tl_event *ev, wf_value *out,
                                 const char **unbound, wf_error *err)
{
    const char *keys[32];
    wf_value vals[32];
    size_t n = wfl_tl_event_param_count(ev), k = 0;
    wf_status rc = WF_OK;
    *unbound = NULL;
    for (; k < n && k < 32 && rc == WF_OK; k++) {
        bool kept;
        keys[k] = wfl_tl_event_param(ev, k)->name;
        rc = read_event_param(act, ev, keys[k], &vals[k], &kept, err);
        if (rc == WF_OK && !kept && !*unbound)
            *unbound = keys[k];
    }
    if (rc == WF_OK && wf_value_record(keys, vals, k, out) != WF_OK)
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory building an event payload");
    for (size_t i = 0; i < k; i++)
        wf_value_release(&vals[i]);
    return rc;
}

bool wfl__write_event_params(wfl_exec *ex, wfl_act *act, const wfl_tl_event *ev,
                             const wf_value *payload)
{
    wf_error err = WF_ERROR_INIT;
    if (!ev) { /* no type library for the interface: bind the payload to "e" */
        if (binding_set(act, find_binding(act, "e"), payload, &err) != WF_OK) {
            wfl__throw_error(ex, act, &err, NULL);
            return false;
        }
        return true;
    }
    wf_value bound = wf_null();
    if (wfl_tl_event_bind(ev, payload, &bound, &err) != WF_OK) {
        wfl__throw_error(ex, act, &err, NULL);
        return false;
    }
    const wfl_pval *pv = wfl__pval(act, "ParameterBindings");
    bool ok = true;
    for (size_t i = 0; ok && pv && pv->kind == WFL_PV_PARAMS && i < pv->u.params.count; i++) {
        ok = write_event_binding(act, &pv->u.params.items[i], ev, &bound, &err) == WF_OK;
        if (!ok)
            wfl__throw_error(ex, act, &err, NULL);
    }
    wf_value_release(&bound);
    return ok;
}

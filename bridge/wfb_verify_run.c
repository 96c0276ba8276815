/* wfb_verify_run.c — the two runners of `wfbridge verify`: one input case on the legacy
 * executor and on the modern runtime, driven by the case's event script in virtual time,
 * each collected into the same wfb_vobs form (docs/verify.md "What is compared"). */
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "../common/wf_jsonw.h"
#include "../common/wf_mem.h"
#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "../modern/wfm_runtime.h"
#include "wfb_interop.h"
#include "wfb_verify.h"
#include "wfb_verify_int.h"

/* Both runtimes start every case at this virtual instant: 2026-01-01T00:00:00Z. */
#define VCLOCK_START INT64_C(1767225600000000)
/* Idle points before a run is given up as a loop (status "Limit", as for max_steps). */
#define MAX_IDLE 10000

/* ---- small helpers ----------------------------------------------------------------------- */
bool wfb__push_str(char ***arr, size_t *n, const char *s)
{
    char *d = wf_strdup(s);
    char **grown = d ? wf_realloc(*arr, (*n + 1) * sizeof **arr) : NULL;
    if (!grown) {
        wf_free(d);
        return false;
    }
    *arr = grown;
    (*arr)[(*n)++] = d;
    return true;
}

void wfb__free_strs(char **arr, size_t n)
{
    for (size_t i = 0; i < n; i++)
        wf_free(arr[i]);
    wf_free(arr);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *short_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

/* One idle point: the sorted short names, comma-separated, then "(timer)" if one is due. */
bool wfb_vobs_add_wait(wfb_vobs *o, const char **names, size_t n, bool timer)
{
    qsort(names, n, sizeof *names, cmp_str);
    wf_buf b;
    wf_buf_init(&b);
    for (size_t i = 0; i < n; i++) {
        if (i)
            wf_buf_addc(&b, ',');
        wf_buf_adds(&b, names[i]);
    }
    if (timer)
        wf_buf_adds(&b, n ? ",(timer)" : "(timer)");
    bool ok = !b.oom && wfb__push_str(&o->waits, &o->wait_count, b.data ? b.data : "");
    wf_buf_fini(&b);
    return ok;
}

bool wfb_vobs_add_call(wfb_vobs *o, const char *function, const char *activity, const char *branch,
                       const wf_value *in, size_t ni, const wf_value *out, size_t no)
{
    if ((o->call_count & (o->call_count - 1)) == 0) { /* 0, 1, 2, 4, ...: double */
        wfb_vcall *grown =
            wf_realloc(o->calls, (o->call_count ? 2 * o->call_count : 1) * sizeof *grown);
        if (!grown)
            return false;
        o->calls = grown;
    }
    wfb_vcall *c = &o->calls[o->call_count];
    memset(c, 0, sizeof *c);
    c->function = wf_strdup(function);
    c->activity = wf_strdup(activity ? activity : "");
    c->branch = wf_strdup(branch);
    c->in = wf_calloc(ni + 1, sizeof *c->in);
    c->out = wf_calloc(no + 1, sizeof *c->out);
    o->call_count++;
    if (!c->function || !c->activity || !c->branch || !c->in || !c->out)
        return false;
    for (size_t i = 0; i < ni; i++)
        c->in[c->in_count++] = wf_value_retain(&in[i]);
    for (size_t i = 0; i < no; i++)
        c->out[c->out_count++] = wf_value_retain(&out[i]);
    return true;
}

static bool set_fault(wfb_vobs *o, const wf_value *exc)
{
    if (!exc || exc->type->kind != WF_K_EXCEPTION)
        return true;
    o->fault_type = wf_strdup(exc->type->name);
    o->fault_message = wf_strdup(wf_value_exc_message(exc));
    return o->fault_type && o->fault_message;
}

/* status "Error": the message, after "file:line:col: " when the error has a place */
static wf_status obs_error(wfb_vobs *o, const wf_error *e, wf_error *err)
{
    char buf[900];
    if (e->file[0])
        snprintf(buf, sizeof buf, "%s:%u:%u: %s", e->file, e->line, e->col, e->message);
    else
        snprintf(buf, sizeof buf, "%s", e->message);
    o->status = "Error";
    o->error = wf_strdup(buf);
    return o->error ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

bool wfb_vobs_add_output(wfb_vobs *o, const char *name, const wf_value *v)
{
    wf_value *grown = wf_realloc(o->output_values, (o->output_count + 1) * sizeof *grown);
    if (!grown)
        return false;
    o->output_values = grown;
    size_t n = o->output_count;
    if (!wfb__push_str(&o->output_names, &n, name))
        return false;
    o->output_values[o->output_count++] = wf_value_retain(v);
    return true;
}

void wfb_vobs_fini(wfb_vobs *o)
{
    for (size_t i = 0; i < o->output_count; i++)
        wf_value_release(&o->output_values[i]);
    wfb__free_strs(o->output_names, o->output_count);
    wf_free(o->output_values);
    for (size_t i = 0; i < o->call_count; i++) {
        wfb_vcall *c = &o->calls[i];
        for (size_t k = 0; k < c->in_count; k++)
            wf_value_release(&c->in[k]);
        for (size_t k = 0; k < c->out_count; k++)
            wf_value_release(&c->out[k]);
        wf_free(c->in);
        wf_free(c->out);
        wf_free(c->function);
        wf_free(c->activity);
        wf_free(c->branch);
    }
    wf_free(o->calls);
    wf_free(o->fault_type);
    wf_free(o->fault_message);
    wfb__free_strs(o->waits, o->wait_count);
    wfb__free_strs(o->taken, o->taken_count);
    wf_free(o->hits);
    wf_free(o->error);
    memset(o, 0, sizeof *o);
}

static json_t *json_values(const wf_value *v, size_t n)
{
    json_t *arr = json_array();
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = wf_jsonw_append(arr, wf_jsonw_value(&v[i], false));
    if (!ok)
        json_decref(arr);
    return ok ? arr : NULL;
}

static json_t *call_json(const wfb_vcall *c)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:o}", "function", wf_jsonw_str(c->function),
                     "activity", wf_jsonw_str(c->activity), "branch", wf_jsonw_str(c->branch),
                     "in", json_values(c->in, c->in_count), "out",
                     json_values(c->out, c->out_count));
}

static json_t *obs_json(const wfb_vobs *o)
{
    json_t *calls = json_array(), *waits = json_array();
    bool ok = calls && waits;
    for (size_t i = 0; ok && i < o->call_count; i++)
        ok = wf_jsonw_append(calls, call_json(&o->calls[i]));
    for (size_t i = 0; ok && i < o->wait_count; i++)
        ok = wf_jsonw_append(waits, wf_jsonw_str(o->waits[i]));
    json_t *error = !ok             ? NULL
                    : o->fault_type ? json_pack("{s:o, s:o}", "type", wf_jsonw_str(o->fault_type),
                                                "message", wf_jsonw_str(o->fault_message))
                                    : wf_jsonw_str(o->error);
    json_t *root = ok ? json_pack("{s:o, s:o, s:O, s:O, s:o}", "status", wf_jsonw_str(o->status),
                                  "outputs",
                                  wf_jsonw_members((const char *const *)o->output_names,
                                                   o->output_values, o->output_count, false),
                                  "calls", calls, "waits", waits, "error", error)
                      : NULL;
    json_decref(calls);
    json_decref(waits);
    return root;
}

bool wfb_vobs_to_json(const wfb_vobs *o, wf_buf *b)
{
    json_t *root = obs_json(o);
    bool ok = root && wf_jsonw_dump(root, WF_JSONW_SPACED, b) && wf_buf_addc(b, '\n');
    json_decref(root);
    return ok;
}

/* The next event of the script if `find` says the run waits for it now. */
static const wfb_vevent *next_event(const wfb_vcase *c, size_t next)
{
    return next < c->event_count ? &c->events[next] : NULL;
}

static wf_status parse_payload(wf_types *types, const wfb_vevent *ev, wf_value *out, wf_error *err)
{
    *out = wf_null();
    if (!ev->payload)
        return WF_OK;
    wf_error e = WF_ERROR_INIT;
    if (wf_json_parse(types, ev->payload, strlen(ev->payload), out, &e) == WF_OK)
        return WF_OK;
    return wf_value_cstring(ev->payload, out) == WF_OK
               ? WF_OK
               : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

/* ---- legacy ------------------------------------------------------------------------------ */
typedef struct pkey {
    char *name; /* activity x:Name */
    char *key;  /* its parallel branches, "PAR#CHILD/" outermost first; "R" suffix: Replicator */
} pkey;

struct wfb_vlegacy {
    uint64_t max_steps;
    wf_types *types;
    wfl_definition *def;
    pkey *keys;
    size_t key_count;
    char **branches; /* IfElseBranchActivity names */
    size_t branch_count;
    wfb__cover *cover;   /* every decision outcome */
    wfb__cover_run *run; /* what the run going on reached */
};

typedef struct lrun {
    wfb_vlegacy *l;
    wfb_vobs *obs;
    int64_t now;
    bool oom;
} lrun;

static const char *xname(xmlNode *n)
{
    for (xmlAttr *a = n->properties; a; a = a->next)
        if (strcmp((const char *)a->name, "Name") == 0 && a->children && a->children->content)
            return (const char *)a->children->content;
    return NULL;
}

static bool is_parallel_replicator(xmlNode *n)
{
    if (strcmp((const char *)n->name, "ReplicatorActivity") != 0)
        return false;
    xmlChar *mode = xmlGetProp(n, (const xmlChar *)"ExecutionType");
    bool par = mode && strcmp((const char *)mode, "Parallel") == 0;
    xmlFree(mode);
    return par;
}

/* Walk the XOML: record each named activity's parallel key and the IfElse branches. */
static bool scan_xoml(wfb_vlegacy *l, xmlNode *n, const char *key)
{
    for (; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE || strchr((const char *)n->name, '.'))
            continue; /* property elements (IfElseBranchActivity.Condition) carry no activity */
        const char *name = xname(n);
        if (name) {
            pkey *grown = wf_realloc(l->keys, (l->key_count + 1) * sizeof *grown);
            if (!grown)
                return false;
            l->keys = grown;
            grown[l->key_count].name = wf_strdup(name);
            grown[l->key_count].key = wf_strdup(key);
            if (!grown[l->key_count++].name || !grown[l->key_count - 1].key)
                return false;
            if (strcmp((const char *)n->name, "IfElseBranchActivity") == 0 &&
                !wfb__push_str(&l->branches, &l->branch_count, name))
                return false;
        }
        bool par = strcmp((const char *)n->name, "ParallelActivity") == 0;
        bool rep = is_parallel_replicator(n);
        for (xmlNode *ch = n->children; ch; ch = ch->next) {
            if (ch->type != XML_ELEMENT_NODE)
                continue;
            char sub[1024];
            if (par || rep)
                snprintf(sub, sizeof sub, "%s%s#%s%s/", key, name ? name : "?",
                         xname(ch) ? xname(ch) : "?", rep ? "@" : "");
            else
                snprintf(sub, sizeof sub, "%s", key);
            xmlNode *next = ch->next;
            ch->next = NULL; /* scan this child alone */
            bool ok = scan_xoml(l, ch, sub);
            ch->next = next;
            if (!ok)
                return false;
        }
    }
    return true;
}

static const char *legacy_key(const wfb_vlegacy *l, const char *activity)
{
    for (size_t i = 0; i < l->key_count; i++)
        if (strcmp(l->keys[i].name, activity) == 0)
            return l->keys[i].key;
    return "";
}

/* A Replicator child is a context clone: "@/" segments get its context id. */
static void branch_of(const wfb_vlegacy *l, const wfl_trace_rec *rec, char *out, size_t size)
{
    const char *key = legacy_key(l, rec->activity);
    size_t o = 0;
    for (const char *p = key; *p && o + 24 < size; p++) {
        if (p[0] == '@' && p[1] == '/')
            o += (size_t)snprintf(out + o, size - o, "@%u", rec->context_id);
        else
            out[o++] = *p;
    }
    out[o] = '\0';
}

static void legacy_trace(void *ud, const wfl_trace_rec *rec)
{
    lrun *r = ud;
    if (rec->kind == WFL_TRACE_STATUS) {
        wfb__cover_status(r->l->run, rec);
        if (rec->status == WFL_ST_EXECUTING && strcmp(rec->type, "IfElseBranchActivity") == 0) {
            for (size_t i = 0; i < r->obs->taken_count; i++)
                if (strcmp(r->obs->taken[i], rec->activity) == 0)
                    return;
            r->oom |= !wfb__push_str(&r->obs->taken, &r->obs->taken_count, rec->activity);
        }
        return;
    }
    char branch[1024];
    branch_of(r->l, rec, branch, sizeof branch);
    /* out_values already ends with the return value when it is not void */
    r->oom |= !wfb_vobs_add_call(r->obs, rec->function, rec->activity, branch, rec->in_values,
                                 rec->in_count, rec->out_values, rec->out_count);
}

static void legacy_rule(void *ud, const char *activity, const char *rule, bool result)
{
    wfb__cover_rule(((lrun *)ud)->l->run, activity, rule, result);
}

static int64_t legacy_clock(void *ud)
{
    return ((lrun *)ud)->now;
}

wf_status wfb_vlegacy_load(const char *path, const char *rules, const wf_libpath *libpath,
                           uint64_t max_steps, wf_diags *diags, wfb_vlegacy **out, wf_error *err)
{
    *out = NULL;
    wfb_vlegacy *l = wf_calloc(1, sizeof *l);
    if (!l || !(l->types = wf_types_create())) {
        wf_free(l);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    l->max_steps = max_steps;
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = l->types;
    lo.libpath = libpath;
    lo.rules_path = rules;
    lo.diags = diags;
    wf_status rc = wfl_definition_load_file(&lo, path, &l->def, err);
    if (rc != WF_OK)
        goto fail;
    xmlDoc *doc =
        xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) { /* the loader read it a moment ago */
        rc = wf_error_set(err, WF_E_IO, &(wf_loc){path, 0, 0}, "cannot read the file again");
        goto fail;
    }
    bool ok = scan_xoml(l, xmlDocGetRootElement(doc), "");
    xmlFreeDoc(doc);
    if (ok && (rc = wfb__cover_build(l->def, l->types, &l->cover, err)) != WF_OK)
        goto fail;
    if (!ok || !(l->run = wfb__cover_run_create(l->cover))) {
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        goto fail;
    }
    *out = l;
    return WF_OK;
fail:
    wfb_vlegacy_destroy(l);
    return rc;
}

void wfb_vlegacy_destroy(wfb_vlegacy *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->key_count; i++) {
        wf_free(l->keys[i].name);
        wf_free(l->keys[i].key);
    }
    wf_free(l->keys);
    wfb__free_strs(l->branches, l->branch_count);
    wfb__cover_run_destroy(l->run);
    wfb__cover_destroy(l->cover);
    wfl_definition_destroy(l->def);
    wf_types_destroy(l->types);
    wf_free(l);
}

wf_types *wfb__vlegacy_types(wfb_vlegacy *l)
{
    return l->types;
}

size_t wfb_vlegacy_branch_count(const wfb_vlegacy *l)
{
    return l->branch_count;
}

const char *wfb_vlegacy_branch_name(const wfb_vlegacy *l, size_t index)
{
    return index < l->branch_count ? l->branches[index] : NULL;
}

size_t wfb_vlegacy_point_count(const wfb_vlegacy *l)
{
    return wfb__cover_count(l->cover);
}

const wfb_vpoint *wfb_vlegacy_point(const wfb_vlegacy *l, size_t index)
{
    return wfb__cover_point(l->cover, index);
}

const wfb__cover *wfb__vlegacy_cover(const wfb_vlegacy *l)
{
    return l->cover;
}

static wf_status legacy_set_inputs(wfb_vlegacy *l, wfl_exec *ex, const wfb_vcase *c, wf_error *e)
{
    for (size_t i = 0; i < c->input_count; i++) {
        wfl_param_info p;
        if (!wfl_definition_find_param(l->def, c->inputs[i].name, &p))
            return wf_error_set(e, WF_E_NAME, NULL, "the legacy workflow has no property '%s'",
                                c->inputs[i].name);
        wf_value v = wf_null();
        const char *j = c->inputs[i].json;
        wf_status rc = wf_json_parse_as(l->types, p.type, j, strlen(j), &v, e);
        if (rc == WF_OK)
            rc = wfl_exec_set_input(ex, c->inputs[i].name, &v, e);
        wf_value_release(&v);
        if (rc != WF_OK) {
            wf_error_prefix(e, "input '%s': ", c->inputs[i].name);
            return rc;
        }
    }
    return WF_OK;
}

static bool legacy_record_wait(wfl_exec *ex, wfb_vobs *o)
{
    size_t nq = wfl_exec_queue_count(ex), n = 0;
    const char **names = wf_calloc(nq + 1, sizeof *names);
    if (!names)
        return false;
    for (size_t i = 0; i < nq; i++) {
        const char *q = wfl_exec_queue_name(ex, i);
        if (!wfl_exec_queue_is_timer(ex, i) && strcmp(q, "SetStateQueue") != 0)
            names[n++] = short_name(q);
    }
    int64_t due;
    bool ok = wfb_vobs_add_wait(o, names, n, wfl_exec_next_timer(ex, &due));
    wf_free(names);
    return ok;
}

/* An event script's payload refused as `run-legacy --event` refuses it (wfl_tl_event_bind). */
static wf_status legacy_check_payload(const wfb_vlegacy *l, const char *event, const wf_value *v,
                                      wf_error *e)
{
    const wfl_tl_event *tev = NULL;
    if (!wfl_definition_find_event(l->def, event, &tev) || !tev)
        return WF_OK;
    wf_value bound = wf_null();
    wf_status rc = wfl_tl_event_bind(tev, v, &bound, e);
    wf_value_release(&bound);
    if (rc != WF_OK)
        wf_error_prefix(e, "event %s: ", event);
    return rc;
}

static wf_status legacy_drive(wfb_vlegacy *l, wfl_exec *ex, const wfb_vcase *c, lrun *r,
                              wfl_exec_state *st, wf_error *e)
{
    size_t next = 0;
    wf_status rc = wfl_exec_run(ex, st, e);
    for (size_t idle = 0; rc == WF_OK && *st == WFL_EXEC_IDLE; idle++) {
        if (idle == MAX_IDLE)
            return wf_error_set(e, WF_E_LIMIT, NULL, "still running after %d idle points",
                                MAX_IDLE);
        if (!legacy_record_wait(ex, r->obs))
            return wf_error_set(e, WF_E_NOMEM, NULL, "out of memory");
        const wfb_vevent *ev = next_event(c, next);
        const char *queue = ev ? wfl_exec_queue_find(ex, ev->name) : NULL;
        int64_t due;
        if (queue) {
            char qname[512];
            snprintf(qname, sizeof qname, "%s", queue);
            wf_value v;
            if ((rc = parse_payload(l->types, ev, &v, e)) != WF_OK)
                return rc;
            next++;
            rc = legacy_check_payload(l, ev->name, &v, e);
            if (rc == WF_OK)
                rc = wfl_exec_deliver(ex, qname, &v, st, e);
            wf_value_release(&v);
        } else if (wfl_exec_next_timer(ex, &due)) {
            if (due > r->now)
                r->now = due; /* virtual time: jump to the timer */
            rc = wfl_exec_fire_timers(ex, r->now, st, e);
        } else {
            break;
        }
    }
    return rc;
}

wf_status wfb_vlegacy_check_event(const wfb_vlegacy *l, const wfb_vevent *ev, wf_error *err)
{
    wf_value v;
    wf_status rc = parse_payload(l->types, ev, &v, err);
    if (rc == WF_OK)
        rc = legacy_check_payload(l, ev->name, &v, err);
    wf_value_release(&v);
    return rc == WF_OK || rc == WF_E_NOMEM ? rc : WF_E_TYPE;
}

wf_status wfb_vlegacy_run(wfb_vlegacy *l, const wfb_vcase *c, wfb_vobs *obs, wf_error *err)
{
    memset(obs, 0, sizeof *obs);
    lrun r = {.l = l, .obs = obs, .now = VCLOCK_START, .oom = false};
    wfl_exec_opts eo = WFL_EXEC_OPTS_INIT;
    eo.trace = legacy_trace;
    eo.trace_ud = &r;
    eo.on_rule = legacy_rule;
    eo.rule_ud = &r;
    eo.clock = legacy_clock;
    eo.clock_ud = &r;
    eo.instance_id = "00000000000000000000000000000001";
    eo.max_work_items = l->max_steps;
    wf_error e = WF_ERROR_INIT;
    wfl_exec *ex = NULL;
    wfl_exec_state st = WFL_EXEC_CREATED;
    wf_status rc = wfl_exec_create(l->def, NULL, &eo, &ex, &e);
    if (rc == WF_OK)
        rc = legacy_set_inputs(l, ex, c, &e);
    wfb__cover_run_reset(l->run);
    if (rc == WF_OK)
        rc = legacy_drive(l, ex, c, &r, &st, &e);
    r.oom |= !wfb__cover_take(l->run, obs); /* what it reached, however it ended */
    if (rc == WF_E_NOMEM || r.oom) {
        wfl_exec_destroy(ex);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    if (rc == WF_E_LIMIT) {
        obs->status = "Limit";
        wfl_exec_destroy(ex);
        return WF_OK;
    }
    if (rc != WF_OK) {
        rc = obs_error(obs, &e, err);
        wfl_exec_destroy(ex);
        return rc;
    }
    /* docs/verify.md "Status mapping": an unhandled fault terminates a WF3 instance; it is
     * the modern Faulted. */
    obs->status = wfl_exec_state_name(st);
    bool ok = set_fault(obs, wfl_exec_exception(ex));
    for (size_t i = 0; ok && i < wfl_exec_output_count(ex); i++) {
        wf_value v = wf_null();
        if (wfl_exec_output_value(ex, i, &v, &e) != WF_OK) {
            ok = e.code != WF_E_NOMEM;
            continue; /* an unreadable DP is left out */
        }
        ok = wfb_vobs_add_output(obs, wfl_exec_output_name(ex, i), &v);
        wf_value_release(&v);
    }
    wfl_exec_destroy(ex);
    return ok ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

/* ---- modern ------------------------------------------------------------------------------ */
struct wfb_vmodern {
    wfm_runtime *rt;
    wfm_definition *def;
    int64_t now;  /* the virtual clock of the case running */
    size_t *args; /* In and InOut argument indices */
    size_t arg_count;
};

typedef struct mrun {
    wfb_vobs *obs;
    bool oom;
} mrun;

static int64_t modern_clock(void *ud)
{
    return ((wfb_vmodern *)ud)->now;
}

static void modern_write(void *ud, const char *text, size_t len)
{
    (void)ud, (void)text, (void)len; /* WriteLine is not part of the comparison */
}

static void modern_trace(void *ud, const wfm_call_rec *rec)
{
    mrun *r = ud;
    r->oom |= !wfb_vobs_add_call(r->obs, rec->function, rec->activity, rec->branch, rec->in,
                                 rec->in_count, rec->out, rec->out_count);
}

wf_status wfb_vmodern_load(const char *name, const char *xaml, size_t len,
                           const wf_libpath *libpath, uint64_t max_steps, wf_diags *diags,
                           wfb_vmodern **out, wf_error *err)
{
    *out = NULL;
    wfb_vmodern *m = wf_calloc(1, sizeof *m);
    if (!m)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    m->now = VCLOCK_START;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    ro.libpath = libpath;
    ro.write = modern_write;
    ro.clock = modern_clock;
    ro.clock_ud = m;
    ro.max_steps = max_steps;
    wf_status rc = wfm_runtime_create(&ro, &m->rt, err);
    if (rc == WF_OK) /* conversions host what has no modern form through Interop */
        rc = wfb_interop_register(wfm_runtime_catalogue(m->rt), err);
    if (rc == WF_OK)
        rc = wfm_runtime_load_mem(m->rt, name, xaml, len, &m->def, diags, err);
    if (rc != WF_OK) {
        wfb_vmodern_destroy(m);
        return rc;
    }
    size_t n = wfm_definition_arg_count(m->def);
    m->args = wf_calloc(n + 1, sizeof *m->args);
    if (!m->args) {
        wfb_vmodern_destroy(m);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        if (wfm_definition_arg_dir(m->def, i) != WFM_PROP_OUT)
            m->args[m->arg_count++] = i;
    *out = m;
    return WF_OK;
}

void wfb_vmodern_destroy(wfb_vmodern *m)
{
    if (!m)
        return;
    wfm_definition_release(m->def);
    wfm_runtime_destroy(m->rt);
    wf_free(m->args);
    wf_free(m);
}

wf_types *wfb__vmodern_types(wfb_vmodern *m)
{
    return wfm_runtime_types(m->rt);
}

size_t wfb_vmodern_arg_count(const wfb_vmodern *m)
{
    return m->arg_count;
}

const char *wfb_vmodern_arg_name(const wfb_vmodern *m, size_t index)
{
    return wfm_definition_arg_name(m->def, m->args[index]);
}

const wf_type *wfb_vmodern_arg_type(const wfb_vmodern *m, size_t index)
{
    return wfm_definition_arg_type(m->def, m->args[index]);
}

static wf_status modern_set_inputs(wfb_vmodern *m, wfm_instance *inst, const wfb_vcase *c,
                                   wf_error *e)
{
    for (size_t i = 0; i < c->input_count; i++) {
        size_t index;
        if (!wfm_definition_arg_find(m->def, c->inputs[i].name, &index))
            return wf_error_set(e, WF_E_NAME, NULL, "the modern workflow has no argument '%s'",
                                c->inputs[i].name);
        wf_value v = wf_null();
        const char *j = c->inputs[i].json;
        wf_status rc = wf_json_parse_as(
            wfm_runtime_types(m->rt), wfm_definition_arg_type(m->def, index), j, strlen(j), &v, e);
        if (rc == WF_OK)
            rc = wfm_instance_set_input(inst, c->inputs[i].name, &v, e);
        wf_value_release(&v);
        if (rc != WF_OK) {
            wf_error_prefix(e, "input '%s': ", c->inputs[i].name);
            return rc;
        }
    }
    return WF_OK;
}

static const char *modern_find(wfm_instance *inst, const char *name)
{
    for (size_t i = 0; i < wfm_instance_bookmark_count(inst); i++) {
        const char *b = wfm_instance_bookmark_name(inst, i);
        if (strcmp(b, name) == 0 || strcmp(short_name(b), short_name(name)) == 0)
            return b;
    }
    return NULL;
}

static bool modern_record_wait(wfm_instance *inst, wfb_vobs *o)
{
    size_t nb = wfm_instance_bookmark_count(inst);
    const char **names = wf_calloc(nb + 1, sizeof *names);
    if (!names)
        return false;
    for (size_t i = 0; i < nb; i++)
        names[i] = short_name(wfm_instance_bookmark_name(inst, i));
    bool ok = wfb_vobs_add_wait(o, names, nb, wfm_instance_next_timer_us(inst) != INT64_MAX);
    wf_free(names);
    return ok;
}

static wf_status modern_drive(wfb_vmodern *m, wfm_instance *inst, const wfb_vcase *c, wfb_vobs *obs,
                              wf_error *e)
{
    size_t next = 0;
    for (size_t idle = 0;; idle++) {
        wf_status rc = wfm_instance_run(inst, e);
        if (rc != WF_OK)
            return rc;
        if (wfm_instance_state_get(inst) != WFM_INSTANCE_IDLE)
            return WF_OK;
        if (idle == MAX_IDLE)
            return wf_error_set(e, WF_E_LIMIT, NULL, "still running after %d idle points",
                                MAX_IDLE);
        if (!modern_record_wait(inst, obs))
            return wf_error_set(e, WF_E_NOMEM, NULL, "out of memory");
        const wfb_vevent *ev = next_event(c, next);
        const char *bm = ev ? modern_find(inst, ev->name) : NULL;
        int64_t due = wfm_instance_next_timer_us(inst);
        if (bm) {
            char name[512];
            snprintf(name, sizeof name, "%s", bm);
            wf_value v;
            if ((rc = parse_payload(wfm_runtime_types(m->rt), ev, &v, e)) != WF_OK)
                return rc;
            next++;
            rc = wfm_instance_check_resume(inst, name, &v, e);
            if (rc == WF_OK)
                rc = wfm_instance_resume(inst, name, &v, e);
            wf_value_release(&v);
            if (rc != WF_OK)
                return rc;
        } else if (due != INT64_MAX) {
            if (due > m->now)
                m->now = due;
        } else {
            return WF_OK;
        }
    }
}

/* "Idle" as the output contract spells it; WF4 and WF3 use the same state words. */
wf_status wfb_vmodern_run(wfb_vmodern *m, const wfb_vcase *c, wfb_vobs *obs, wf_error *err)
{
    memset(obs, 0, sizeof *obs);
    m->now = VCLOCK_START;
    mrun r = {.obs = obs, .oom = false};
    wf_error e = WF_ERROR_INIT;
    wfm_instance *inst = NULL;
    wf_status rc = wfm_instance_create(m->rt, m->def, &inst, &e);
    if (rc == WF_OK) {
        wfm_instance_set_id(inst, "00000000000000000000000000000001");
        wfm_instance_set_writer(inst, modern_write, NULL);
        wfm_instance_set_call_trace(inst, modern_trace, &r);
        rc = modern_set_inputs(m, inst, c, &e);
    }
    if (rc == WF_OK)
        rc = modern_drive(m, inst, c, obs, &e);
    if (rc == WF_E_LIMIT) {
        obs->status = "Limit";
        wfm_instance_destroy(inst);
        return WF_OK;
    }
    if (rc == WF_E_NOMEM || r.oom) {
        wfm_instance_destroy(inst);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    if (rc != WF_OK) {
        rc = obs_error(obs, &e, err);
        wfm_instance_destroy(inst);
        return rc;
    }
    obs->status = wfm_instance_state_name(wfm_instance_state_get(inst));
    bool ok = set_fault(obs, wfm_instance_fault(inst));
    for (size_t i = 0; ok && i < wfm_instance_output_count(inst); i++)
        ok = wfb_vobs_add_output(obs, wfm_instance_output_name(inst, i),
                                 wfm_instance_output_value(inst, i));
    wfm_instance_destroy(inst);
    return ok ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

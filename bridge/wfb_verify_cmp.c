/* wfb_verify_cmp.c — comparing a legacy and a modern observation of one case: status (with the
 * fault mapping), fault, native calls (in order, except that parallel branches compare as a
 * set of in-order branches), outputs (type-aware) and idle wait sets (docs/verify.md "What is
 * compared"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "wfb_verify.h"

void wfb_vdiff_fini(wfb_vdiff *d)
{
    wf_free(d->what);
    wf_free(d->legacy);
    wf_free(d->modern);
    memset(d, 0, sizeof *d);
}

static bool num_equal(double a, double b, double tol)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    double scale = fmax(1.0, fmax(fabs(a), fabs(b)));
    return a == b || fabs(a - b) <= tol * scale;
}

static bool value_equal(const wf_value *a, const wf_value *b, double tol)
{
    if (a->type->kind != b->type->kind)
        return false;
    switch (a->type->kind) {
    case WF_K_DOUBLE:
        return num_equal(a->u.d, b->u.d, tol);
    case WF_K_LIST:
        if (wf_value_list_count(a) != wf_value_list_count(b))
            return false;
        for (size_t i = 0; i < wf_value_list_count(a); i++)
            if (!value_equal(wf_value_list_at(a, i), wf_value_list_at(b, i), tol))
                return false;
        return true;
    case WF_K_RECORD:
        if (wf_value_record_count(a) != wf_value_record_count(b))
            return false;
        for (size_t i = 0; i < wf_value_record_count(a); i++) {
            const wf_value *other = wf_value_record_get(b, wf_value_record_key(a, i));
            if (!other || !value_equal(wf_value_record_at(a, i), other, tol))
                return false;
        }
        return true;
    default:
        return wf_value_equal(a, b); /* Decimal exact, strings byte for byte */
    }
}

static void add_values(wf_buf *b, const wf_value *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            wf_buf_adds(b, ", ");
        wf_value_to_json(&v[i], b);
    }
}

/* "orders_total(3, \"75.5000\") -> (\"226.5000\")" */
static void call_text(wf_buf *b, const wfb_vcall *c)
{
    wf_buf_adds(b, c->function);
    wf_buf_addc(b, '(');
    add_values(b, c->in, c->in_count);
    wf_buf_adds(b, ") -> (");
    add_values(b, c->out, c->out_count);
    wf_buf_addc(b, ')');
}

static bool call_equal(const wfb_vcall *a, const wfb_vcall *b, double tol)
{
    if (strcmp(a->function, b->function) != 0 || a->in_count != b->in_count ||
        a->out_count != b->out_count)
        return false;
    for (size_t i = 0; i < a->in_count; i++)
        if (!value_equal(&a->in[i], &b->in[i], tol))
            return false;
    for (size_t i = 0; i < a->out_count; i++)
        if (!value_equal(&a->out[i], &b->out[i], tol))
            return false;
    return true;
}

/* ---- the Parallel rule ------------------------------------------------------------------- */
/* Segment `depth` of a branch key ("P#B/Q#C/"): start and length, false when there is none. */
static bool segment(const char *key, size_t depth, const char **start, size_t *len)
{
    const char *p = key;
    for (size_t d = 0; d < depth; d++) {
        const char *slash = strchr(p, '/');
        if (!slash)
            return false;
        p = slash + 1;
    }
    const char *slash = strchr(p, '/');
    if (!slash)
        return false;
    *start = p;
    *len = (size_t)(slash - p);
    return true;
}

static size_t parallel_len(const char *seg, size_t len)
{
    const char *hash = memchr(seg, '#', len);
    return hash ? (size_t)(hash - seg) : len;
}

/* A unit of a trace at one depth: one call outside any branch at this depth, or one block of
 * consecutive calls inside the branches of the same parallel activity. */
typedef struct unit {
    size_t first, count; /* call indices [first, first + count) of the list */
    bool block;
} unit;

static size_t units_of(const wfb_vcall *const *calls, size_t n, size_t depth, unit *out)
{
    size_t u = 0;
    for (size_t i = 0; i < n;) {
        const char *s;
        size_t len;
        if (!segment(calls[i]->branch, depth, &s, &len)) {
            out[u++] = (unit){i, 1, false};
            i++;
            continue;
        }
        size_t pl = parallel_len(s, len), j = i + 1;
        for (; j < n; j++) {
            const char *s2;
            size_t len2;
            if (!segment(calls[j]->branch, depth, &s2, &len2) || parallel_len(s2, len2) != pl ||
                memcmp(s, s2, pl) != 0)
                break;
        }
        out[u++] = (unit){i, j - i, true};
        i = j;
    }
    return u;
}

static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool canon(wf_buf *b, const wfb_vcall *const *calls, size_t n, size_t depth);

/* A block as text: its branches (each in order, at depth + 1) sorted, so the branches form a
 * set while each keeps its own order. */
static bool canon_block(wf_buf *b, const wfb_vcall *const *calls, size_t n, size_t depth)
{
    const wfb_vcall **sub = wf_calloc(n + 1, sizeof *sub);
    char **texts = wf_calloc(n + 1, sizeof *texts);
    bool *done = wf_calloc(n + 1, sizeof *done);
    size_t nt = 0;
    bool ok = sub && texts && done;
    for (size_t i = 0; ok && i < n; i++) {
        if (done[i])
            continue;
        const char *s = "";
        size_t len = 0, ns = 0;
        segment(calls[i]->branch, depth, &s, &len);
        for (size_t j = i; j < n; j++) {
            const char *s2;
            size_t len2;
            if (!done[j] && segment(calls[j]->branch, depth, &s2, &len2) && len2 == len &&
                memcmp(s, s2, len) == 0) {
                done[j] = true;
                sub[ns++] = calls[j];
            }
        }
        wf_buf t;
        wf_buf_init(&t);
        ok = canon(&t, sub, ns, depth + 1) && !t.oom;
        texts[nt++] = wf_buf_detach(&t, NULL);
        ok = ok && texts[nt - 1];
    }
    if (ok) {
        qsort(texts, nt, sizeof *texts, cmp_strp);
        wf_buf_adds(b, "{");
        for (size_t i = 0; i < nt; i++) {
            wf_buf_adds(b, i ? " | " : "");
            wf_buf_adds(b, texts[i]);
        }
        wf_buf_adds(b, "}");
    }
    for (size_t i = 0; texts && i < nt; i++)
        wf_free(texts[i]);
    wf_free(texts);
    wf_free(sub);
    wf_free(done);
    return ok && !b->oom;
}

static bool canon(wf_buf *b, const wfb_vcall *const *calls, size_t n, size_t depth)
{
    unit *units = wf_calloc(n + 1, sizeof *units);
    if (!units)
        return false;
    size_t nu = units_of(calls, n, depth, units);
    bool ok = true;
    for (size_t i = 0; ok && i < nu; i++) {
        wf_buf_adds(b, i ? "; " : "");
        if (units[i].block)
            ok = canon_block(b, calls + units[i].first, units[i].count, depth);
        else
            call_text(b, calls[units[i].first]);
    }
    wf_free(units);
    return ok && !b->oom;
}

/* ---- the divergence ---------------------------------------------------------------------- */
static wf_status set_diff(wfb_vdiff *d, const char *what, const char *legacy, const char *modern,
                          wf_error *err)
{
    d->what = wf_strdup(what);
    d->legacy = wf_strdup(legacy ? legacy : "(none)");
    d->modern = wf_strdup(modern ? modern : "(none)");
    if (!d->what || !d->legacy || !d->modern) {
        wfb_vdiff_fini(d);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    return WF_OK;
}

static char *unit_text(const wfb_vcall *const *calls, const unit *u, bool *ok)
{
    wf_buf b;
    wf_buf_init(&b);
    if (u->block)
        *ok &= canon_block(&b, calls + u->first, u->count, 0);
    else
        call_text(&b, calls[u->first]);
    char *s = wf_buf_detach(&b, NULL);
    *ok &= s != NULL;
    return s;
}

static const wfb_vcall **call_ptrs(const wfb_vobs *o)
{
    const wfb_vcall **p = wf_calloc(o->call_count + 1, sizeof *p);
    for (size_t i = 0; p && i < o->call_count; i++)
        p[i] = &o->calls[i];
    return p;
}

/* A legacy parallel block against calls the modern run made outside any branch: the modern
 * runtime sees no branches inside an Interop, whose hosted legacy executor runs the block in
 * its own (WF3) order, so the block's calls match the next modern calls one for one, in the
 * legacy order (docs/verify.md "What is compared"). */
static bool hosted_block(const wfb_vcall *const *lc, const unit *lb, const wfb_vcall *const *mc,
                         const unit *mu, size_t nm, size_t j, double tol)
{
    if (!lb->block || j + lb->count > nm)
        return false;
    for (size_t k = 0; k < lb->count; k++)
        if (mu[j + k].block || !call_equal(lc[lb->first + k], mc[mu[j + k].first], tol))
            return false;
    return true;
}

/* Calls: unit by unit; a call compares type-aware, a parallel block as its set of branches. */
static wf_status compare_calls(const wfb_vobs *l, const wfb_vobs *m, double tol, bool *equal,
                               wfb_vdiff *diff, wf_error *err)
{
    const wfb_vcall **lc = call_ptrs(l), **mc = call_ptrs(m);
    unit *lu = wf_calloc(l->call_count + 1, sizeof *lu);
    unit *mu = wf_calloc(m->call_count + 1, sizeof *mu);
    wf_status rc = WF_OK;
    if (!lc || !mc || !lu || !mu) {
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        goto done;
    }
    size_t nl = units_of(lc, l->call_count, 0, lu), nm = units_of(mc, m->call_count, 0, mu);
    for (size_t i = 0, j = 0; i < nl || j < nm; i++, j++) {
        if (i < nl && j < nm && hosted_block(lc, &lu[i], mc, mu, nm, j, tol)) {
            j += lu[i].count - 1; /* the block's calls, run by the hosted legacy executor */
            continue;
        }
        bool same = i < nl && j < nm && lu[i].block == mu[j].block;
        bool ok = true;
        char *lt = i < nl ? unit_text(lc, &lu[i], &ok) : NULL;
        char *mt = j < nm ? unit_text(mc, &mu[j], &ok) : NULL;
        if (same && !lu[i].block)
            same = call_equal(lc[lu[i].first], mc[mu[j].first], tol);
        else if (same)
            same = ok && strcmp(lt, mt) == 0;
        if (ok && !same) {
            char what[64];
            snprintf(what, sizeof what, "%s %zu",
                     j >= nm   ? "missing call"
                     : i >= nl ? "extra call"
                               : "call",
                     i >= nl ? j + 1 : i + 1);
            *equal = false;
            rc = set_diff(diff, what, lt, mt, err);
        }
        wf_free(lt);
        wf_free(mt);
        if (!ok)
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        if (rc != WF_OK || !*equal)
            break;
    }
done:
    wf_free(lc);
    wf_free(mc);
    wf_free(lu);
    wf_free(mu);
    return rc;
}

static char *value_text(const wf_value *v)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_value_to_json(v, &b);
    if (v->type->kind != WF_K_NULL)
        wf_buf_addf(&b, " (%s)", v->type->name);
    return wf_buf_detach(&b, NULL);
}

/* Outputs: every modern Out/InOut argument against the legacy root property of that name
 * (legacy properties the modern workflow does not declare are not compared). */
static wf_status compare_outputs(const wfb_vobs *l, const wfb_vobs *m, double tol, bool *equal,
                                 wfb_vdiff *diff, wf_error *err)
{
    for (size_t i = 0; i < m->output_count; i++) {
        const wf_value *lv = NULL;
        for (size_t k = 0; k < l->output_count && !lv; k++)
            if (strcmp(l->output_names[k], m->output_names[i]) == 0)
                lv = &l->output_values[k];
        if (lv && value_equal(lv, &m->output_values[i], tol))
            continue;
        char what[300];
        snprintf(what, sizeof what, "output %s", m->output_names[i]);
        char *lt = lv ? value_text(lv) : NULL, *mt = value_text(&m->output_values[i]);
        *equal = false;
        wf_status rc = (lv && !lt) || !mt
                           ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory")
                           : set_diff(diff, what, lt ? lt : "(no such property)", mt, err);
        wf_free(lt);
        wf_free(mt);
        return rc;
    }
    return WF_OK;
}

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static char *fault_text(const wfb_vobs *o)
{
    if (!o->fault_type)
        return NULL;
    size_t n = strlen(o->fault_type) + strlen(o->fault_message) + 3;
    char *s = wf_malloc(n);
    if (s)
        snprintf(s, n, "%s: %s", o->fault_type, o->fault_message);
    return s;
}

/* A run that did not end by itself (docs/verify.md "Isolation"): it crashed, called exit() or
 * ran past --timeout. Its fault says how ("crashed: SIGSEGV in FUNCTION"). */
static bool abnormal(const wfb_vobs *o)
{
    return strcmp(o->status, "Crashed") == 0 || strcmp(o->status, "Exited") == 0 ||
           strcmp(o->status, "TimedOut") == 0;
}

static const char *status_text(const wfb_vobs *o)
{
    return abnormal(o) && o->fault_message ? o->fault_message : o->status;
}

wf_status wfb_vcompare(const wfb_vobs *legacy, const wfb_vobs *modern, double tolerance,
                       bool *equal, wfb_vdiff *diff, wf_error *err)
{
    memset(diff, 0, sizeof *diff);
    *equal = true;
    const wfb_vobs *l = legacy, *m = modern;
    if (l->error || m->error) {
        *equal = false;
        return set_diff(diff, "run error", l->error ? l->error : l->status,
                        m->error ? m->error : m->status, err);
    }
    if (strcmp(l->status, m->status) != 0) {
        *equal = false;
        return set_diff(diff, "status", status_text(l), status_text(m), err);
    }
    if (strcmp(l->status, "Limit") == 0 || strcmp(l->status, "TimedOut") == 0)
        return WF_OK; /* both ran past the step limit or the time limit: the runtimes count
                         steps differently and run at different speeds */
    wf_status rc = compare_calls(l, m, tolerance, equal, diff, err);
    if (rc != WF_OK || !*equal)
        return rc;
    if (!str_eq(l->fault_type, m->fault_type) || !str_eq(l->fault_message, m->fault_message)) {
        char *lt = fault_text(l), *mt = fault_text(m);
        *equal = false;
        rc = set_diff(diff, "fault", lt, mt, err);
        wf_free(lt);
        wf_free(mt);
        return rc;
    }
    /* outputs of a run that did not close are not its results (a faulted WF4 instance hands
     * none back) */
    if (strcmp(l->status, "Closed") == 0 || strcmp(l->status, "Idle") == 0) {
        rc = compare_outputs(l, m, tolerance, equal, diff, err);
        if (rc != WF_OK || !*equal)
            return rc;
    }
    for (size_t i = 0; i < l->wait_count || i < m->wait_count; i++) {
        const char *lw = i < l->wait_count ? l->waits[i] : NULL;
        const char *mw = i < m->wait_count ? m->waits[i] : NULL;
        if (!str_eq(lw, mw)) {
            char what[64];
            snprintf(what, sizeof what, "idle point %zu", i + 1);
            *equal = false;
            return set_diff(diff, what, lw, mw, err);
        }
    }
    return WF_OK;
}

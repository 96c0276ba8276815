/* wfb_migrate_verify.c — `wfbridge verify-instances`: prove that migrated instances behave as
 * their legacy originals would have (docs/migrate.md "Proving a migration"). For every
 * instance marked migrated in the legacy store, its legacy blob (the row is never changed
 * after the mark) is restored in memory and the modern instance is read from the modern store
 * and restored in memory too — neither store is written; both are driven with the same event
 * script (--event, --events, in order, each to whichever side waits on it, timers firing on
 * one virtual clock when neither waits on the next event), then with --generate N seeded
 * variations of it (events left out, other orders, timers firing before an event), and what
 * each showed (status, outputs, native calls, fault, the events waited on at each idle
 * point) is compared by verify's comparison (wfb_vcompare). */
#include "wfb_migrate_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../legacy/wfl_exec.h"
#include "../legacy/wfl_store.h"
#include "../modern/wfm_persist.h"
#include "../modern/wfm_store.h"
#include "wfb_cli.h"
#include "wfb_verify.h"

static const char usage[] =
    "usage: wfbridge verify-instances --from LEGACY_STORE --to STORE --map OLD.xoml=NEW.xaml...\n"
    "         [--lib-path DIR] [--event NAME=PAYLOAD]... [--events SCRIPT.json]\n"
    "         [--generate N [--seed S]] [--json]\n"
    "\n"
    "For every instance migrated from LEGACY_STORE to STORE (wfbridge migrate-instances), run\n"
    "its legacy original and its modern copy, in memory, with the same events, then their\n"
    "timers, and compare status, outputs, native calls, faults and waits as verify does.\n"
    "Neither store is changed; native calls are made (as by verify).\n"
    "\n"
    "  --event NAME=PAYLOAD  an event, in order (as run-legacy --event; repeatable)\n"
    "  --events FILE        more events, a JSON array of {\"event\": NAME, \"payload\": VALUE}\n"
    "                       (as verify --events)\n"
    "  --generate N         also N generated runs per instance: the events in other orders,\n"
    "                       some left out, timers firing before them (default seed 1)\n"
    "  --seed S             the generator's seed\n"
    "  --json                one JSON object on the last line\n"
    "\n"
    "Exit status: 0 every instance equivalent, 1 some diverged, 2 usage or input error.\n";

typedef struct vopts {
    const char *from, *to, *lib_path, *events_file;
    wfb_assigns maps, events;
    bool json;
    size_t generate;
    uint64_t seed;
} vopts;

static const struct option table[] = {
    {"from", required_argument, NULL, 'f'},     {"to", required_argument, NULL, 't'},
    {"map", required_argument, NULL, 'm'},      {"lib-path", required_argument, NULL, 'L'},
    {"event", required_argument, NULL, 'e'},    {"events", required_argument, NULL, 'E'},
    {"generate", required_argument, NULL, 'g'}, {"seed", required_argument, NULL, 's'},
    {"json", no_argument, NULL, 'j'},           {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

#define MAX_GENERATED 10000 /* generated runs per instance */

static int parse(int argc, char **argv, vopts *o)
{
    int c;
    while ((c = wfb_getopt(argc, argv, table)) != -1) {
        switch (c) {
        case 'f': o->from = optarg; break;
        case 't': o->to = optarg; break;
        case 'm':
            if (wfb_assigns_add(&o->maps, optarg, true) != 0)
                return 2;
            break;
        case 'e':
            if (wfb_assigns_add(&o->events, optarg, false) != 0)
                return 2;
            break;
        case 'L': o->lib_path = optarg; break;
        case 'E': o->events_file = optarg; break;
        case 'g':
        case 's': {
            unsigned long long n = 0;
            if (wfb_parse_count(c == 'g' ? "--generate" : "--seed", optarg, c == 'g' ? 1 : 0,
                                c == 'g' ? MAX_GENERATED : UINT64_MAX, &n))
                return 2;
            if (c == 'g')
                o->generate = (size_t)n;
            else
                o->seed = n;
            break;
        }
        case 'j': o->json = true; break;
        case 'h': return -1;
        default: return 2;
        }
    }
    if (wfb_operand(argc, argv, NULL, NULL) != 0)
        return 2;
    if (!o->from || !o->to || o->maps.count == 0)
        return wfb_usage_error("--from, --to and at least one --map are required");
    return 0;
}

/* ---- one instance ---------------------------------------------------------------------------- */
typedef struct side {
    wfb_vobs obs;
    bool oom;
} side;

static void legacy_trace(void *ud, const wfl_trace_rec *rec)
{
    side *s = ud;
    if (rec->kind == WFL_TRACE_NATIVE)
        s->oom |= !wfb_vobs_add_call(&s->obs, rec->function, rec->activity, "", rec->in_values,
                                     rec->in_count, rec->out_values, rec->out_count);
}

static void modern_trace(void *ud, const wfm_call_rec *rec)
{
    side *s = ud;
    s->oom |= !wfb_vobs_add_call(&s->obs, rec->function, rec->activity, "", rec->in,
                                 rec->in_count, rec->out, rec->out_count);
}

static void no_write(void *ud, const char *text, size_t len)
{
    (void)ud, (void)text, (void)len;
}

static int64_t legacy_clock(void *ud)
{
    return ((mig_ctx *)ud)->now_us;
}

typedef struct pair {
    mig_ctx *c;
    const mig_map *map;
    wfl_exec *ex;
    wfm_instance *inst;
    side l, m;
} pair;

static void record_waits(pair *p)
{
    const char *names[MIG_MAX_NAMES];
    size_t n = 0;
    for (size_t i = 0; i < wfl_exec_queue_count(p->ex) && n < MIG_MAX_NAMES; i++)
        if (!wfl_exec_queue_is_timer(p->ex, i) &&
            strcmp(wfl_exec_queue_name(p->ex, i), "SetStateQueue") != 0)
            names[n++] = wfl_exec_queue_name(p->ex, i);
    int64_t due;
    if (wfl_exec_state_get(p->ex) == WFL_EXEC_IDLE)
        p->l.oom |= !wfb_vobs_add_wait(&p->l.obs, names, n, wfl_exec_next_timer(p->ex, &due));
    n = 0;
    for (size_t i = 0; i < wfm_instance_bookmark_count(p->inst) && n < MIG_MAX_NAMES; i++)
        names[n++] = wfm_instance_bookmark_name(p->inst, i);
    if (wfm_instance_state_get(p->inst) == WFM_INSTANCE_IDLE)
        p->m.oom |= !wfb_vobs_add_wait(&p->m.obs, names, n,
                                       wfm_instance_next_timer_us(p->inst) != INT64_MAX);
}

/* The modern bookmark an event names: the full name, or the only one ending ".NAME". */
static const char *modern_bookmark(wfm_instance *inst, const char *name)
{
    const char *found = NULL;
    size_t len = strlen(name);
    for (size_t i = 0; i < wfm_instance_bookmark_count(inst); i++) {
        const char *b = wfm_instance_bookmark_name(inst, i);
        size_t bl = strlen(b);
        if (strcmp(b, name) == 0)
            return b;
        if (bl > len && b[bl - len - 1] == '.' && strcmp(b + bl - len, name) == 0)
            found = found ? NULL : b;
    }
    return found;
}

static wf_status deliver(pair *p, const char *name, const char *text, wf_error *err)
{
    wf_value lv = wf_null(), mv = wf_null();
    wf_status rc = wfb_payload_from_text(p->c->ltypes, "--event", name, text, &lv, err);
    if (rc == WF_OK)
        rc = wfb_payload_from_text(wfm_runtime_types(p->c->rt), "--event", name, text, &mv, err);
    const char *q = rc == WF_OK && wfl_exec_state_get(p->ex) == WFL_EXEC_IDLE
                        ? wfl_exec_queue_find(p->ex, name)
                        : NULL;
    if (q) {
        char queue[512];
        snprintf(queue, sizeof queue, "%s", q);
        wfl_exec_state st;
        rc = wfl_exec_deliver(p->ex, queue, &lv, &st, err);
    }
    const char *b = rc == WF_OK && wfm_instance_state_get(p->inst) == WFM_INSTANCE_IDLE
                        ? modern_bookmark(p->inst, name)
                        : NULL;
    if (b && (rc = wfm_instance_resume(p->inst, b, &mv, err)) == WF_OK)
        rc = wfm_instance_run(p->inst, err);
    wf_value_release(&lv);
    wf_value_release(&mv);
    return rc;
}

/* Fire the earliest timer of either side on the shared clock; false when neither has one. */
static bool fire_timer(pair *p, wf_status *rc, wf_error *err)
{
    int64_t ld = INT64_MAX, md = wfm_instance_next_timer_us(p->inst);
    bool legacy_idle = wfl_exec_state_get(p->ex) == WFL_EXEC_IDLE;
    if (!legacy_idle || !wfl_exec_next_timer(p->ex, &ld))
        ld = INT64_MAX;
    if (wfm_instance_state_get(p->inst) != WFM_INSTANCE_IDLE)
        md = INT64_MAX;
    int64_t due = ld < md ? ld : md;
    if (due == INT64_MAX)
        return false;
    if (due > p->c->now_us)
        p->c->now_us = due;
    wfl_exec_state st;
    if (ld != INT64_MAX && ld <= p->c->now_us)
        *rc = wfl_exec_fire_timers(p->ex, p->c->now_us, &st, err);
    if (*rc == WF_OK && md != INT64_MAX && md <= p->c->now_us)
        *rc = wfm_instance_run(p->inst, err);
    return *rc == WF_OK;
}

static const char *status_of_legacy(wfl_exec_state s)
{
    return s == WFL_EXEC_TERMINATED || s == WFL_EXEC_FAULTED ? "Faulted" : wfl_exec_state_name(s);
}

static const char *status_of_modern(wfm_instance_state s)
{
    return s == WFM_INSTANCE_TERMINATED || s == WFM_INSTANCE_FAULTED
               ? "Faulted"
               : wfm_instance_state_name(s);
}

static void finish_obs(pair *p)
{
    p->l.obs.status = status_of_legacy(wfl_exec_state_get(p->ex));
    p->m.obs.status = status_of_modern(wfm_instance_state_get(p->inst));
    wf_error e = WF_ERROR_INIT;
    for (size_t i = 0; i < wfl_exec_output_count(p->ex); i++) {
        wf_value v = wf_null();
        if (wfl_exec_output_value(p->ex, i, &v, &e) == WF_OK)
            p->l.oom |= !wfb_vobs_add_output(&p->l.obs, wfl_exec_output_name(p->ex, i), &v);
        wf_value_release(&v);
    }
    for (size_t i = 0; i < wfm_instance_output_count(p->inst); i++)
        p->m.oom |= !wfb_vobs_add_output(&p->m.obs, wfm_instance_output_name(p->inst, i),
                                         wfm_instance_output_value(p->inst, i));
}

typedef struct vrun {
    vopts o;
    mig_ctx c;
    wfl_store *legacy;
    wfm_store *modern;
    wfb_vevent *script; /* --event then --events: payloads as text (JSON or a plain string) */
    size_t script_count;
    size_t checked, diverged, runs;
    json_t *divs; /* owned: the divergences, as JSON objects; NULL once memory ran out */
    wf_error err;
} vrun;

static wf_status restore_pair(vrun *r, pair *p, const char *id, const void *blob, size_t len,
                              wf_error *err)
{
    wfl_exec_opts o = WFL_EXEC_OPTS_INIT;
    o.trace = legacy_trace;
    o.trace_ud = &p->l;
    o.clock = legacy_clock;
    o.clock_ud = &r->c;
    for (size_t i = 0; i < r->c.map_count && !p->ex; i++)
        if (wfl_exec_restore(r->c.maps[i].ldef, &o, blob, len, &p->ex, err) == WF_OK)
            p->map = &r->c.maps[i];
    if (!p->ex)
        return wf_error_set(err, WF_E_CORRUPT, NULL,
                            "instance '%s' belongs to none of the --map definitions", id);
    wfl_store_migration m;
    void *state = NULL;
    size_t slen = 0;
    char status[32];
    uint64_t hash = 0;
    wf_status rc = wfl_store_migration_get(r->legacy, id, &m, err);
    if (rc == WF_OK)
        rc = wfm_store_load_state(r->modern, m.modern_id, &state, &slen, status, &hash, err);
    if (rc == WF_OK)
        rc = wfm_instance_restore(r->c.rt, p->map->mdef, state, slen, &p->inst, err);
    wf_free(state);
    if (rc != WF_OK)
        return rc;
    wfm_instance_set_call_trace(p->inst, modern_trace, &p->m);
    wfm_instance_set_writer(p->inst, no_write, NULL);
    return WF_OK;
}

/* One run of an instance: its name ("script", "gen-K") and the events in the order sent. */
typedef struct vcase {
    char name[32];
    const wfb_vevent **events;
    size_t count;
    uint64_t rng; /* 0: no timers fired early */
} vcase;

static void add_divergence(vrun *r, const char *id, const vcase *vc, const wfb_vdiff *d)
{
    wf_buf order;
    wf_buf_init(&order);
    for (size_t i = 0; i < vc->count; i++)
        wf_buf_addf(&order, "%s%s", i ? ", " : "", vc->events[i]->name);
    r->diverged++;
    json_t *obj = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "instance", wf_jsonw_str(id),
                            "case", wf_jsonw_str(vc->name), "events",
                            order.oom ? NULL : wf_jsonw_strn(order.data, order.len), "what",
                            wf_jsonw_str(d->what ? d->what : ""), "legacy",
                            wf_jsonw_str(d->legacy ? d->legacy : ""), "modern",
                            wf_jsonw_str(d->modern ? d->modern : ""));
    if (r->divs && !wf_jsonw_append(r->divs, obj)) {
        json_decref(r->divs);
        r->divs = NULL;
    }
    if (!r->o.json)
        printf("%s: diverged (%s: %s): %s: legacy %s, modern %s\n", id, vc->name,
               order.data ? order.data : "no events", d->what ? d->what : "",
               d->legacy ? d->legacy : "", d->modern ? d->modern : "");
    wf_buf_fini(&order);
}

static uint64_t next_rand(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Does either side wait on event `name` now? */
static bool awaited(pair *p, const char *name)
{
    return (wfl_exec_state_get(p->ex) == WFL_EXEC_IDLE && wfl_exec_queue_find(p->ex, name)) ||
           (wfm_instance_state_get(p->inst) == WFM_INSTANCE_IDLE &&
            modern_bookmark(p->inst, name));
}

/* Drive the pair through vc as verify drives a case: an event that neither side waits on yet
 * lets the pending timers fire first (a generated case also fires one, at random, before an
 * event that is waited on), then it goes to whichever side waits on it; then every timer. */
static wf_status drive(pair *p, vcase *vc, wf_error *err)
{
    wf_status rc = WF_OK;
    for (size_t i = 0; rc == WF_OK && i < vc->count; i++) {
        const wfb_vevent *ev = vc->events[i];
        for (int t = 0; rc == WF_OK && t < 64; t++) {
            bool early = vc->rng && next_rand(&vc->rng) % 4 == 0;
            if ((awaited(p, ev->name) && !early) || !fire_timer(p, &rc, err))
                break;
            record_waits(p);
        }
        if (rc == WF_OK)
            rc = deliver(p, ev->name, ev->payload ? ev->payload : "null", err);
        if (rc == WF_OK)
            record_waits(p);
    }
    for (int i = 0; rc == WF_OK && i < 64 && fire_timer(p, &rc, err); i++)
        record_waits(p);
    return rc;
}

/* Run one case of instance id: WF_E_STATE when the sides diverged (recorded), WF_OK when
 * they agree, another code when a run failed. */
static wf_status check_case(vrun *r, const char *id, const void *blob, size_t len, vcase *vc,
                            wf_error *err)
{
    pair p;
    memset(&p, 0, sizeof p);
    p.c = &r->c;
    r->c.now_us = wfb_now_us();
    wf_status rc = restore_pair(r, &p, id, blob, len, err);
    if (rc == WF_OK) {
        record_waits(&p);
        rc = drive(&p, vc, err);
    }
    bool equal = true;
    if (rc == WF_OK) {
        finish_obs(&p);
        wfb_vdiff d = {0};
        if (p.l.oom || p.m.oom)
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        else
            rc = wfb_vcompare(&p.l.obs, &p.m.obs, 0.0, &equal, &d, err);
        if (rc == WF_OK && !equal)
            add_divergence(r, id, vc, &d);
        wfb_vdiff_fini(&d);
        r->runs++;
    }
    p.l.obs.status = p.m.obs.status = NULL;
    wfb_vobs_fini(&p.l.obs);
    wfb_vobs_fini(&p.m.obs);
    wfl_exec_destroy(p.ex);
    wfm_instance_destroy(p.inst);
    return rc == WF_OK && !equal ? WF_E_STATE : rc;
}

/* Generated case k: each scripted event kept at 3 in 4, in a shuffled order, timers fired
 * early at random. The seed and k alone decide it, so every instance gets the same cases and
 * a run is reproduced from its seed whatever ids the instances were given. */
static void generate_case(const vrun *r, size_t k, vcase *vc)
{
    uint64_t rng = r->o.seed ^ (k * 0x2545f4914f6cdd1dULL);
    snprintf(vc->name, sizeof vc->name, "gen-%zu", k);
    vc->count = 0;
    for (size_t i = 0; i < r->script_count; i++)
        if (next_rand(&rng) % 4 != 0)
            vc->events[vc->count++] = &r->script[i];
    for (size_t i = vc->count; i > 1; i--) {
        size_t j = (size_t)(next_rand(&rng) % i);
        const wfb_vevent *t = vc->events[i - 1];
        vc->events[i - 1] = vc->events[j];
        vc->events[j] = t;
    }
    vc->rng = next_rand(&rng) | 1;
}

/* The script as given, then --generate N variations; stops at the first divergence. */
static wf_status check_one(vrun *r, const char *id, const void *blob, size_t len, wf_error *err)
{
    vcase vc = {"script", NULL, r->script_count, 0};
    vc.events = wf_calloc(r->script_count ? r->script_count : 1, sizeof *vc.events);
    if (!vc.events)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < r->script_count; i++)
        vc.events[i] = &r->script[i];
    wf_status rc = check_case(r, id, blob, len, &vc, err);
    size_t k = 0;
    while (rc == WF_OK && k < r->o.generate) {
        generate_case(r, ++k, &vc);
        rc = check_case(r, id, blob, len, &vc, err);
    }
    wf_free(vc.events);
    if (rc == WF_OK && !r->o.json)
        printf("%s: equivalent (%zu run(s))\n", id, k + 1);
    r->checked += rc == WF_OK || rc == WF_E_STATE;
    return rc == WF_E_STATE ? WF_OK : rc;
}

static bool check_row(void *ud, const char *id, const char *status, const void *blob, size_t len)
{
    vrun *r = ud;
    if (strcmp(status, WFL_STORE_MIGRATED) != 0)
        return true;
    wf_error e = WF_ERROR_INIT;
    if (check_one(r, id, blob, len, &e) != WF_OK) {
        wf_loc loc = {r->o.from, 0, 0};
        wf_error_set(&r->err, e.code, &loc, "instance '%s': %s", id, e.message);
        return false;
    }
    return true;
}

/* The script: the --event list, then the --events file. */
static wf_status load_script(vrun *r, wf_error *err)
{
    wfb_vevent *file = NULL;
    size_t n = 0;
    if (r->o.events_file && wfb_vevents_load(r->o.events_file, &file, &n, err) != WF_OK)
        return err->code;
    size_t total = r->o.events.count + n;
    r->script = wf_calloc(total ? total : 1, sizeof *r->script);
    bool ok = r->script != NULL;
    for (size_t i = 0; ok && i < r->o.events.count; i++) {
        r->script[i].name = wf_strdup(r->o.events.names[i]);
        r->script[i].payload = wf_strdup(r->o.events.values[i]);
        ok = r->script[i].name && r->script[i].payload;
        r->script_count++;
    }
    for (size_t i = 0; ok && i < n; i++) {
        r->script[r->script_count++] = file[i];
        file[i] = (wfb_vevent){NULL, NULL};
    }
    wfb_vevents_free(file, n);
    return ok ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

static int execute(vrun *r, wf_libpath **lp)
{
    int rc = mig_setup(&r->c, r->o.lib_path, &r->o.maps, lp);
    wf_error err = WF_ERROR_INIT;
    struct stat sb;
    if (rc == 0 && stat(r->o.from, &sb) != 0) {
        wf_loc loc = {r->o.from, 0, 0};
        wf_error_set(&err, WF_E_IO, &loc, "no legacy store");
        return wfb_report(&err);
    }
    if (rc == 0 && wfl_store_open(r->o.from, &r->legacy, &err) != WF_OK)
        return wfb_report(&err);
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = wfb_store_name(r->o.to);
    so.read_only = true;
    if (rc == 0 && wfm_store_open(&so, &r->modern, &err) != WF_OK)
        return wfb_report(&err);
    if (rc == 0 && load_script(r, &err) != WF_OK)
        return wfb_report(&err);
    if (rc == 0 && wfl_store_each(r->legacy, check_row, r, &err) != WF_OK)
        return wfb_report(&err);
    if (rc == 0 && r->err.code != WF_OK)
        return wfb_report(&r->err);
    if (rc != 0)
        return rc;
    if (r->o.json)
        rc = wfb_print_json(r->divs ? json_pack("{s:s, s:I, s:I, s:O}", "status",
                                                r->diverged ? "diverged" : "equivalent",
                                                "instances", (json_int_t)r->checked, "runs",
                                                (json_int_t)r->runs, "divergences", r->divs)
                                    : NULL);
    else
        printf("%zu instance(s) checked in %zu run(s), %zu diverged\n", r->checked, r->runs,
               r->diverged);
    return rc ? rc : r->diverged ? 1 : 0;
}

int wfb_cmd_verify_instances(int argc, char **argv)
{
    wfb_verb_begin(argv[0]);
    vrun r;
    memset(&r, 0, sizeof r);
    r.o.maps = (wfb_assigns)WFB_ASSIGNS_INIT("--map");
    r.o.events = (wfb_assigns)WFB_ASSIGNS_INIT("--event");
    r.err = (wf_error)WF_ERROR_INIT;
    r.o.seed = 1;
    r.divs = json_array();
    int rc = parse(argc, argv, &r.o);
    wf_libpath *lp = NULL;
    if (rc == 0)
        rc = execute(&r, &lp);
    else if (rc < 0)
        rc = wfb_help(usage);
    json_decref(r.divs);
    wfb_vevents_free(r.script, r.script_count);
    wfm_store_close(r.modern);
    wfl_store_close(r.legacy);
    mig_teardown(&r.c, lp);
    wfb_assigns_fini(&r.o.maps);
    wfb_assigns_fini(&r.o.events);
    return rc;
}

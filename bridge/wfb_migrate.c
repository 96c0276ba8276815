/* wfb_migrate.c — `wfbridge migrate-instances`: move the instances waiting in a legacy store
 * (run-legacy --store) to a modern store as instances of the converted definitions, under the
 * same ids (docs/migrate.md). Two passes: every instance is decoded and planned first (a
 * store or map that is bad stops the command before anything is written: exit 2), then each
 * movable one is moved with one transaction per store: the modern instance is written
 * reserved (leased to the migration owner), the legacy row is marked migrated, the lease is
 * released. --rollback undoes marks whose modern instance never ran. */
#include "wfb_migrate_int.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../legacy/wfl_exec.h"
#include "../legacy/wfl_store.h"
#include "../modern/wfm_store.h"
#include "wfb_cli.h"
#include "wfb_durable.h"
#include "wfb_interop.h"
#include "wfb_migrate_report.h"

static const char usage[] =
    "usage: wfbridge migrate-instances --from LEGACY_STORE --to STORE\n"
    "         --map OLD.xoml=NEW.xaml... [--lib-path DIR] [--dry-run] [--rollback]\n"
    "         [--durability full|normal] [--batch N] [--report FILE.md|FILE.html] [--json]\n"
    "\n"
    "Move the instances waiting in LEGACY_STORE (written by 'run-legacy --store') to STORE\n"
    "(a file, sqlite:FILE or postgresql://...) as instances of the converted definitions, under\n"
    "the same ids, waiting at the same point with the same values (docs/migrate.md).\n"
    "\n"
    "  --from FILE         the legacy store\n"
    "  --to STORE          the modern instance store (created if needed)\n"
    "  --map OLD=NEW       a legacy definition and its conversion (NEW.map.json beside NEW is\n"
    "                      read when present); repeat for each definition in the store\n"
    "  --lib-path DIR      where type and native libraries are (default $WFBRIDGE_LIB_PATH)\n"
    "  --dry-run           report what would move (movable, movable through Interop, not\n"
    "                      movable and why) and change nothing\n"
    "  --rollback          make migrated instances legacy-runnable again (only those whose\n"
    "                      modern instance never ran); the modern row is ended as Terminated\n"
    "  --durability LEVEL  the modern store's commits: full (default) or normal\n"
    "  --batch N           legacy rows marked per transaction (default 256; 1: one each)\n"
    "  --report FILE       also write the report as Markdown (.md) or HTML (.html)\n"
    "  --json              print the report as one JSON object on the last line\n"
    "\n"
    "Exit status: 0 every instance was moved, stays legacy with a reason, or was moved before;\n"
    "1 some move failed; 2 usage or input error (nothing changed).\n";

typedef struct opts {
    const char *from, *to, *lib_path, *report;
    wfb_assigns maps;
    bool dry_run, rollback, json;
    int durability;
    size_t batch; /* instances whose legacy marks share a transaction */
} opts;

static const struct option table[] = {
    {"from", required_argument, NULL, 'f'},     {"to", required_argument, NULL, 't'},
    {"map", required_argument, NULL, 'm'},      {"lib-path", required_argument, NULL, 'L'},
    {"dry-run", no_argument, NULL, 'n'},        {"rollback", no_argument, NULL, 'r'},
    {"durability", required_argument, NULL, 'D'}, {"report", required_argument, NULL, 'R'},
    {"json", no_argument, NULL, 'j'},           {"batch", required_argument, NULL, 'b'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

static int parse(int argc, char **argv, opts *o)
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
        case 'L': o->lib_path = optarg; break;
        case 'n': o->dry_run = true; break;
        case 'r': o->rollback = true; break;
        case 'D':
            if (wfb_parse_durability(optarg, &o->durability) != 0)
                return 2;
            break;
        case 'R': o->report = optarg; break;
        case 'j': o->json = true; break;
        case 'b': {
            unsigned long long v = 0;
            if (wfb_parse_count("--batch", optarg, 1, 100000, &v) != 0)
                return 2;
            o->batch = (size_t)v;
            break;
        }
        case 'h': return -1;
        default: return 2;
        }
    }
    if (wfb_operand(argc, argv, NULL, NULL) != 0)
        return 2;
    if (!o->from || !o->to)
        return wfb_usage_error("--from and --to are required");
    if (!o->rollback && o->maps.count == 0)
        return wfb_usage_error("give at least one --map OLD.xoml=NEW.xaml");
    return 0;
}

/* ---- loading the maps ---------------------------------------------------------------------- */
/* NEW.xaml.map.json's "values": [{"legacy": DP, "modern": NAME, "root": true}, ...] (absent
 * file: none); entries of other activities' properties ("root": false) are not read. */
static int read_value_map(mig_map *m)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.map.json", m->xaml);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return 0;
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    json_t *values = root ? json_object_get(root, "values") : NULL;
    if (!root || !json_is_array(values)) {
        json_decref(root);
        wf_error e = WF_ERROR_INIT;
        wf_loc loc = {path, root ? 0 : je.line, root ? 0 : je.column};
        wf_error_set(&e, WF_E_SYNTAX, &loc, "not a wfbridge map file: %s",
                     root ? "no \"values\" array" : je.text);
        return wfb_report(&e);
    }
    size_t n = json_array_size(values);
    m->from = wf_calloc(n ? n : 1, sizeof *m->from);
    m->to = wf_calloc(n ? n : 1, sizeof *m->to);
    for (size_t i = 0; m->from && m->to && i < n; i++) {
        json_t *v = json_array_get(values, i);
        const char *l = json_string_value(json_object_get(v, "legacy"));
        const char *t = json_string_value(json_object_get(v, "modern"));
        json_t *on_root = json_object_get(v, "root"); /* the root's properties only */
        if (l && t && (!on_root || json_is_true(on_root))) {
            m->from[m->pair_count] = wf_strdup(l);
            m->to[m->pair_count++] = wf_strdup(t);
        }
    }
    json_decref(root);
    return m->from && m->to ? 0 : wfb_error("out of memory");
}

static int load_map(mig_ctx *c, const wf_libpath *lp, const char *xoml, const char *xaml)
{
    mig_map *m = &c->maps[c->map_count++];
    m->xoml = xoml;
    m->xaml = xaml;
    wf_error err = WF_ERROR_INIT;
    wf_diags *diags = wf_diags_create();
    if (!diags)
        return wfb_error("out of memory");
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = c->ltypes;
    lo.libpath = lp;
    lo.diags = diags;
    wf_status rc = wfl_definition_load_file(&lo, xoml, &m->ldef, &err);
    int code = wfb_report_diags(diags, lp == NULL);
    wf_diags_destroy(diags);
    if (rc != WF_OK)
        return code ? code : wfb_report(&err);
    diags = wf_diags_create();
    rc = wfm_runtime_load(c->rt, xaml, &m->mdef, diags, &err);
    code = wfb_report_diags(diags, lp == NULL);
    wf_diags_destroy(diags);
    if (rc != WF_OK)
        return code ? code : wfb_report(&err);
    return read_value_map(m);
}

static int64_t virtual_clock(void *ud)
{
    return ((mig_ctx *)ud)->now_us;
}

int mig_setup(mig_ctx *c, const char *lib_path, const wfb_assigns *maps, wf_libpath **lp)
{
    wf_error err = WF_ERROR_INIT;
    if (wfb_libpath(lib_path, lp, &err) != WF_OK)
        return wfb_report(&err);
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    ro.libpath = *lp;
    ro.clock = virtual_clock;
    ro.clock_ud = c;
    ro.max_steps = 1000000;
    c->now_us = wfb_now_us();
    c->ltypes = wf_types_create();
    c->maps = wf_calloc(maps->count ? maps->count : 1, sizeof *c->maps);
    if (!c->ltypes || !c->maps)
        return wfb_error("out of memory");
    c->lib_path = *lp;
    if (wfm_runtime_create(&ro, &c->rt, &err) != WF_OK ||
        wfb_interop_register(wfm_runtime_catalogue(c->rt), &err) != WF_OK)
        return wfb_report(&err);
    for (size_t i = 0; i < maps->count; i++) {
        int rc = load_map(c, *lp, maps->names[i], maps->values[i]);
        if (rc)
            return rc;
    }
    return 0;
}

void mig_teardown(mig_ctx *c, wf_libpath *lp)
{
    for (size_t i = 0; i < c->map_count; i++) {
        mig_map *m = &c->maps[i];
        wfl_definition_destroy(m->ldef);
        wfm_definition_release(m->mdef);
        for (size_t k = 0; k < m->pair_count; k++) {
            wf_free(m->from[k]);
            wf_free(m->to[k]);
        }
        wf_free(m->from);
        wf_free(m->to);
    }
    wf_free(c->maps);
    wfm_runtime_destroy(c->rt);
    wf_types_destroy(c->ltypes);
    wf_libpath_destroy(lp);
}

/* ---- pass 1: plan every instance ------------------------------------------------------------- */
typedef struct run {
    opts o;
    mig_ctx c;
    mig_plan *plans;
    size_t count, cap;
    wf_error err; /* the first bad instance: stops the command before pass 2 */
    wfl_store *legacy;
    wfm_store *modern;
} run;

static mig_plan *plan_new(run *r, const char *id, const char *status)
{
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        mig_plan *p = wf_realloc(r->plans, cap * sizeof *p);
        if (!p)
            return NULL;
        r->plans = p;
        r->cap = cap;
    }
    mig_plan *p = &r->plans[r->count];
    memset(p, 0, sizeof *p);
    wf_buf_init(&p->state);
    p->id = wf_strdup(id);
    if (!p->id)
        return NULL;
    snprintf(p->status, sizeof p->status, "%s", status);
    r->count++;
    return p;
}

static bool plan_row(void *ud, const char *id, const char *status, const void *blob, size_t len)
{
    run *r = ud;
    mig_plan *p = plan_new(r, id, status);
    if (!p) {
        wf_error_set(&r->err, WF_E_NOMEM, NULL, "out of memory");
        return false;
    }
    if (strcmp(status, WFL_STORE_MIGRATED) == 0) {
        p->verdict = MIG_DONE;
        return true;
    }
    if (r->o.rollback) { /* only migrated rows matter */
        p->verdict = MIG_NOT_MOVABLE;
        snprintf(p->reason, sizeof p->reason, "it was not migrated");
        return true;
    }
    wf_error e = WF_ERROR_INIT;
    if (mig_plan_instance(&r->c, p, blob, len, &e) != WF_OK) {
        wf_loc loc = {r->o.from, 0, 0};
        wf_error_set(&r->err, e.code, &loc, "%s", e.message);
        return false;
    }
    if (strcmp(status, "Idle") != 0 && p->verdict != MIG_NOT_MOVABLE) {
        p->verdict = MIG_NOT_MOVABLE;
        snprintf(p->reason, sizeof p->reason, "its stored status is %s", status);
    }
    return true;
}

/* The legacy store must exist and be one: wfl_store_open would create a new one. */
static int open_legacy(run *r)
{
    struct stat sb;
    wf_error err = WF_ERROR_INIT;
    wf_loc loc = {r->o.from, 0, 0};
    if (stat(r->o.from, &sb) != 0)
        wf_error_set(&err, WF_E_IO, &loc, "no legacy store");
    else if (!S_ISREG(sb.st_mode) || sb.st_size == 0)
        wf_error_set(&err, WF_E_CORRUPT, &loc, "not a wfbridge legacy store");
    else
        wfl_store_open(r->o.from, &r->legacy, &err);
    return err.code == WF_OK ? 0 : wfb_report(&err);
}

/* ---- pass 2: move ---------------------------------------------------------------------------- */
#define MIGRATE_OWNER "wfbridge-migrate"
#define RESERVE_MS    (10LL * 366 * 24 * 3600 * 1000) /* the lease of a reserved instance */

static int open_modern(run *r)
{
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = wfb_store_name(r->o.to);
    so.owner = MIGRATE_OWNER;
    so.lease_ms = RESERVE_MS;
    so.durability = (wfm_durability)r->o.durability;
    so.group_commit = true;
    so.must_exist = r->o.rollback;
    wf_error err = WF_ERROR_INIT;
    if (wfm_store_open(&so, &r->modern, &err) != WF_OK)
        return wfb_report(&err);
    for (size_t i = 0; i < r->c.map_count; i++) { /* hosts load definitions from these paths */
        const mig_map *m = &r->c.maps[i];
        char *abs = realpath(m->xaml, NULL);
        wf_status rc = wfm_store_put_definition(r->modern, wfm_definition_hash(m->mdef),
                                                abs ? abs : m->xaml, &err);
        free(abs);
        if (rc != WF_OK)
            return wfb_report(&err);
    }
    return 0;
}

static void failed(mig_plan *p, const wf_error *err)
{
    p->verdict = MIG_FAILED;
    snprintf(p->reason, sizeof p->reason, "%.250s", err->message);
}

/* The modern row of p, leased to the migration owner: created, or (a run that died before
 * marking the legacy row, or a rolled-back instance) taken back. */
static wf_status reserve_row(run *r, mig_plan *p, wf_error *err)
{
    void *old = NULL;
    size_t old_len = 0;
    char status[32];
    uint64_t hash = 0;
    wf_status rc = wfm_store_load_state(r->modern, p->id, &old, &old_len, status, &hash, err);
    wf_free(old);
    if (rc == WF_E_NOTFOUND)
        return wfm_store_create_id(r->modern, wfm_definition_hash(p->map->mdef), p->id, err);
    return rc == WF_OK ? wfm_store_lock(r->modern, p->id, err) : rc;
}

/* Reserve the modern rows of a batch: the new ones created in one transaction (or one by one
 * when that fails), the others taken back one by one; those reserved go to ok[0..*k). ids is
 * scratch room for n ids. */
static void reserve_rows(run *r, mig_plan **batch, size_t n, mig_plan **ok, size_t *k,
                         const char **ids, wf_error *err)
{
    size_t fresh = 0;
    for (size_t i = 0; i < n && err->code == WF_OK; i++) {
        void *old = NULL;
        size_t len = 0;
        char status[32];
        uint64_t hash = 0;
        wf_error e = WF_ERROR_INIT;
        wf_status rc = wfm_store_load_state(r->modern, batch[i]->id, &old, &len, status, &hash, &e);
        wf_free(old);
        if (rc == WF_E_NOTFOUND && batch[i]->map == batch[0]->map)
            ids[fresh++] = batch[i]->id;
        else if (rc == WF_E_NOTFOUND ? reserve_row(r, batch[i], &e) == WF_OK
                                     : rc == WF_OK && wfm_store_lock(r->modern, batch[i]->id,
                                                                     &e) == WF_OK)
            ok[(*k)++] = batch[i];
        else
            failed(batch[i], &e);
    }
    wf_error e = WF_ERROR_INIT;
    bool together = fresh && wfm_store_create_ids(r->modern,
                                                  wfm_definition_hash(batch[0]->map->mdef), ids,
                                                  fresh, &e) == WF_OK;
    for (size_t i = 0, f = 0; i < n && f < fresh; i++) {
        if (batch[i]->id != ids[f])
            continue;
        f++;
        e = (wf_error)WF_ERROR_INIT;
        if (together || reserve_row(r, batch[i], &e) == WF_OK)
            ok[(*k)++] = batch[i];
        else
            failed(batch[i], &e);
    }
}

/* Saves of one batch handed to the store's commit thread, which groups them into shared
 * transactions; mig_wait_saves returns once every one has committed or failed. */
typedef struct saves {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t pending;
    wfm_store_save_rec *recs;
    const char *(*marks)[MIG_MAX_NAMES];
    wf_status *status;
    wf_error *errs;
} saves;

typedef struct save_slot {
    saves *s;
    size_t i;
} save_slot;

static void saved(void *ud, wf_status status, const wf_error *err)
{
    save_slot *slot = ud;
    saves *s = slot->s;
    pthread_mutex_lock(&s->mu);
    s->status[slot->i] = status;
    if (status != WF_OK && err)
        s->errs[slot->i] = *err;
    s->pending--;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Save ok[0..k) (release: give the lease up too) as one group; failures go to failed(). */
static void save_group(run *r, mig_plan **ok, size_t k, bool release, saves *s,
                       save_slot *slots)
{
    s->pending = 0;
    for (size_t i = 0; i < k; i++) {
        mig_plan *p = ok[i];
        for (size_t b = 0; b < p->bookmarks.n; b++)
            s->marks[i][b] = p->bookmarks.v[b];
        s->recs[i] = (wfm_store_save_rec){.id = p->id, .status = "Idle", .state = p->state.data,
                                          .state_len = p->state.len, .bookmarks = s->marks[i],
                                          .bookmark_count = p->bookmarks.n,
                                          .next_timer_us = p->next_timer_us, .release = release};
        s->status[i] = WF_OK;
        slots[i] = (save_slot){s, i};
        pthread_mutex_lock(&s->mu);
        s->pending++;
        pthread_mutex_unlock(&s->mu);
        wf_error e = WF_ERROR_INIT;
        if (wfm_store_save_async(r->modern, &s->recs[i], saved, &slots[i], &e) != WF_OK) {
            pthread_mutex_lock(&s->mu);
            s->pending--;
            s->status[i] = e.code;
            s->errs[i] = e;
            pthread_mutex_unlock(&s->mu);
        }
    }
    pthread_mutex_lock(&s->mu);
    while (s->pending)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < k; i++)
        if (s->status[i] != WF_OK)
            failed(ok[i], &s->errs[i]);
}

/* Move a batch of instances: each one's modern row reserved (its own transaction), their
 * states saved, still reserved, in shared transactions, the legacy rows of those saved marked
 * in one transaction, then their leases given up in shared transactions again. A batch that
 * dies half-way leaves its instances reserved and legacy-runnable, or marked and reserved
 * (finished by the next run): never runnable twice. */
static void move_batch(run *r, mig_plan **batch, size_t n)
{
    saves s = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, NULL, NULL, NULL};
    s.recs = wf_calloc(n, sizeof *s.recs);
    s.marks = wf_calloc(n, sizeof *s.marks);
    s.status = wf_calloc(n, sizeof *s.status);
    s.errs = wf_calloc(n, sizeof *s.errs);
    save_slot *slots = wf_calloc(n, sizeof *slots);
    const char **ids = wf_calloc(n, sizeof *ids);
    wfl_store_migration *ms = wf_calloc(n, sizeof *ms);
    mig_plan **ok = wf_calloc(n, sizeof *ok);
    wf_error err = WF_ERROR_INIT;
    size_t k = 0;
    if (!s.recs || !s.marks || !s.status || !s.errs || !slots || !ids || !ms || !ok)
        wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
    reserve_rows(r, batch, n, ok, &k, ids, &err);
    if (err.code == WF_OK)
        save_group(r, ok, k, false, &s, slots);
    size_t m = 0;
    for (size_t i = 0; i < k && err.code == WF_OK; i++) {
        if (ok[i]->verdict == MIG_FAILED)
            continue;
        snprintf(ms[m].target, sizeof ms[m].target, "%s", wfb_store_name(r->o.to));
        snprintf(ms[m].modern_id, sizeof ms[m].modern_id, "%s", ok[i]->id);
        ms[m].state_hash = wf_hash_bytes(ok[i]->state.data, ok[i]->state.len);
        ids[m] = ok[i]->id;
        ok[m++] = ok[i];
    }
    if (err.code == WF_OK && m && wfl_store_mark_migrated_many(r->legacy, ids, ms, m, &err) == WF_OK)
        save_group(r, ok, m, true, &s, slots); /* a failure here: marked, the next run releases */
    else if (err.code != WF_OK)
        for (size_t i = 0; i < n; i++)
            if (batch[i]->verdict != MIG_FAILED)
                failed(batch[i], &err);
    wf_free(s.recs);
    wf_free(s.marks);
    wf_free(s.status);
    wf_free(s.errs);
    wf_free(slots);
    wf_free(ids);
    wf_free(ms);
    wf_free(ok);
}

/* A migrated instance whose lease a run that died still holds (between marking the legacy
 * row and releasing): release it now. A lease another owner holds is left alone. */
static void finish_move(run *r, mig_plan *p)
{
    wf_error err = WF_ERROR_INIT;
    wfl_store_migration m;
    if (wfl_store_migration_get(r->legacy, p->id, &m, &err) == WF_OK)
        wfm_store_release(r->modern, m.modern_id, &err);
}

/* --rollback of one migrated instance: end the modern copy (only if it never ran), then give
 * the legacy row its status back, then let the modern row go. */
static void roll_back(run *r, mig_plan *p)
{
    wf_error err = WF_ERROR_INIT;
    wfl_store_migration m;
    void *state = NULL;
    size_t len = 0;
    char status[32];
    uint64_t hash = 0;
    if (wfl_store_migration_get(r->legacy, p->id, &m, &err) != WF_OK ||
        wfm_store_load_state(r->modern, m.modern_id, &state, &len, status, &hash, &err) !=
            WF_OK) {
        failed(p, &err);
        return;
    }
    bool untouched = strcmp(status, "Idle") == 0 && wf_hash_bytes(state, len) == m.state_hash;
    bool ended = strcmp(status, "Terminated") == 0 && len == 0; /* a rollback that died */
    wf_free(state);
    if (!untouched && !ended) {
        p->verdict = MIG_FAILED;
        snprintf(p->reason, sizeof p->reason,
                 "the modern instance has run since it was migrated (it is %s): it cannot go "
                 "back",
                 status);
        return;
    }
    wfm_store_save_rec rec = {0};
    rec.id = m.modern_id;
    rec.status = "Terminated";
    if (wfm_store_lock(r->modern, m.modern_id, &err) != WF_OK ||
        wfm_store_save(r->modern, &rec, &err) != WF_OK ||
        wfl_store_unmark_migrated(r->legacy, p->id, &err) != WF_OK ||
        wfm_store_release(r->modern, m.modern_id, &err) != WF_OK) {
        failed(p, &err);
        return;
    }
    p->verdict = MIG_MOVABLE; /* reported as rolled back */
}

static void pass2(run *r)
{
    mig_plan **batch = wf_calloc(r->o.batch, sizeof *batch);
    size_t n = 0;
    for (size_t i = 0; i < r->count; i++) {
        mig_plan *p = &r->plans[i];
        if (r->o.rollback && p->verdict == MIG_DONE)
            roll_back(r, p);
        else if (!r->o.rollback && p->verdict == MIG_DONE)
            finish_move(r, p);
        else if (!r->o.rollback && (p->verdict == MIG_MOVABLE || p->verdict == MIG_INTEROP)) {
            if (!batch) {
                p->verdict = MIG_FAILED;
                snprintf(p->reason, sizeof p->reason, "out of memory");
                continue;
            }
            batch[n++] = p;
            if (n == r->o.batch) {
                move_batch(r, batch, n);
                n = 0;
            }
        }
    }
    if (n)
        move_batch(r, batch, n);
    wf_free(batch);
}

/* ---- the verb -------------------------------------------------------------------------------- */
static void text_report(const run *r, const mig_report_opts *ro)
{
    size_t n[5];
    mig_count(r->plans, r->count, ro, n);
    for (size_t i = 0; i < r->count; i++) {
        const mig_plan *p = &r->plans[i];
        if (p->verdict == MIG_NOT_MOVABLE && !ro->rollback)
            printf("%s: stays legacy: %s\n", p->id, p->reason);
        else if (p->verdict == MIG_FAILED)
            printf("%s: failed: %s\n", p->id, p->reason);
    }
    printf("%s %zu, through Interop %zu, skipped %zu, failed %zu, already migrated %zu\n",
           ro->dry_run ? "movable" : ro->rollback ? "rolled back" : "migrated", n[MIG_MOVABLE],
           n[MIG_INTEROP], n[MIG_NOT_MOVABLE], n[MIG_FAILED], n[MIG_DONE]);
}

static int execute(run *r, wf_libpath **lp)
{
    int rc = mig_setup(&r->c, r->o.lib_path, &r->o.maps, lp);
    if (rc == 0)
        rc = open_legacy(r);
    wf_error err = WF_ERROR_INIT;
    if (rc == 0 && wfl_store_each(r->legacy, plan_row, r, &err) != WF_OK)
        rc = wfb_report(&err);
    if (rc == 0 && r->err.code != WF_OK)
        rc = wfb_report(&r->err);
    if (rc == 0 && !r->o.dry_run)
        rc = open_modern(r);
    if (rc != 0)
        return rc;
    if (!r->o.dry_run)
        pass2(r);
    mig_report_opts ro = {r->o.dry_run, r->o.rollback};
    if (r->o.report && mig_report_file(r->o.report, r->plans, r->count, &ro) != 0)
        return wfb_error("cannot write the report to '%s'", r->o.report);
    if (r->o.json)
        mig_report_json(stdout, r->plans, r->count, &ro);
    else
        text_report(r, &ro);
    size_t n[5];
    mig_count(r->plans, r->count, &ro, n);
    return n[MIG_FAILED] ? 1 : 0;
}

int wfb_cmd_migrate_instances(int argc, char **argv)
{
    wfb_verb_begin(argv[0]);
    run r;
    memset(&r, 0, sizeof r);
    r.o.maps = (wfb_assigns)WFB_ASSIGNS_INIT("--map");
    r.o.batch = 256;
    r.err = (wf_error)WF_ERROR_INIT;
    int rc = parse(argc, argv, &r.o);
    if (rc != 0) {
        wfb_assigns_fini(&r.o.maps);
        return rc < 0 ? wfb_help(usage) : rc;
    }
    wf_libpath *lp = NULL;
    rc = execute(&r, &lp);
    for (size_t i = 0; i < r.count; i++)
        mig_plan_fini(&r.plans[i]);
    wf_free(r.plans);
    wfm_store_close(r.modern);
    wfl_store_close(r.legacy);
    mig_teardown(&r.c, lp);
    wfb_assigns_fini(&r.o.maps);
    return rc;
}

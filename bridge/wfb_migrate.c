/* wfb_migrate.c — `wfbridge migrate-instances`: move the instances waiting in a legacy store
 * (run-legacy --store) to a modern store as instances of the converted definitions, under the
 * same ids (docs/migrate.md). Two passes: every instance is decoded and planned first (a
 * store or map that is bad stops the command before anything is written: exit 2), then each
 * movable one is moved in batches of three transactions: the legacy rows claimed (Migrating),
 * the modern instances written in one transaction (the commit that moves them), the legacy
 * rows settled (Migrated); wfb_migrate_home.c says where an instance runs at any moment.
 * --rollback undoes moves whose modern instance never ran, the same way back. */
#include "wfb_migrate_int.h"

#include <jansson.h>
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
#include "wfb_migrate_home.h"
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
    "                      modern instance never ran); the modern row is ended as RolledBack\n"
    "  --durability LEVEL  the modern store's commits: full (default) or normal\n"
    "  --batch N           instances moved per transaction of each store (default 256)\n"
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
/* One "values" entry: a root property's into from/to, another activity's ("root": false, with
 * its "owner") into act_owner/act_from/act_to. */
static void add_value_pair(mig_map *m, json_t *v)
{
    const char *l = json_string_value(json_object_get(v, "legacy"));
    const char *t = json_string_value(json_object_get(v, "modern"));
    const char *owner = json_string_value(json_object_get(v, "owner"));
    json_t *on_root = json_object_get(v, "root");
    if (!l || !t)
        return;
    if (!on_root || json_is_true(on_root)) {
        m->from[m->pair_count] = wf_strdup(l);
        m->to[m->pair_count++] = wf_strdup(t);
    } else if (owner) {
        m->act_owner[m->act_count] = wf_strdup(owner);
        m->act_from[m->act_count] = wf_strdup(l);
        m->act_to[m->act_count++] = wf_strdup(t);
    }
}

/* NEW.xaml.map.json's "values": [{"legacy": DP, "owner": ACTIVITY, "modern": NAME, "root":
 * true|false}, ...] (absent file: none). */
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
    size_t n = json_array_size(values) ? json_array_size(values) : 1;
    char ***lists[] = {&m->from, &m->to, &m->act_owner, &m->act_from, &m->act_to};
    bool ok = true;
    for (size_t k = 0; k < sizeof lists / sizeof *lists; k++)
        ok = (*lists[k] = wf_calloc(n, sizeof(char *))) != NULL && ok;
    for (size_t i = 0; ok && i < json_array_size(values); i++)
        add_value_pair(m, json_array_get(values, i));
    json_decref(root);
    return ok ? 0 : wfb_error("out of memory");
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
        for (size_t k = 0; k < m->act_count; k++) {
            wf_free(m->act_owner[k]);
            wf_free(m->act_from[k]);
            wf_free(m->act_to[k]);
        }
        wf_free(m->from);
        wf_free(m->to);
        wf_free(m->act_owner);
        wf_free(m->act_from);
        wf_free(m->act_to);
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
    char target[1024]; /* the modern store as the legacy records name it */
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
    bool in_doubt = strcmp(status, WFL_STORE_MIGRATING) == 0;
    if (strcmp(status, WFL_STORE_MIGRATED) == 0 || (in_doubt && r->o.rollback)) {
        p->verdict = MIG_DONE;
        return true;
    }
    if (in_doubt) { /* left by a run that died (or moving now): planned as what it was */
        wfl_store_migration m;
        if (wfl_store_migration_get(r->legacy, id, &m, &r->err) != WF_OK)
            return false;
        snprintf(p->status, sizeof p->status, "%s", m.previous_status);
        snprintf(p->from_owner, sizeof p->from_owner, "%s", m.owner);
        status = p->status;
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
static int open_modern(run *r)
{
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = wfb_store_name(r->o.to);
    so.durability = (wfm_durability)r->o.durability;
    so.group_commit = true;
    so.must_exist = r->o.rollback;
    wf_error err = WF_ERROR_INIT;
    if (wfm_store_open(&so, &r->modern, &err) != WF_OK)
        return wfb_report(&err);
    /* the target as the legacy records name it: a file by its absolute path, so that
     * run-legacy finds it from any directory */
    const char *file = strncmp(so.path, "sqlite:", 7) == 0 ? so.path + 7 : so.path;
    char *abs = realpath(file, NULL);
    snprintf(r->target, sizeof r->target, "%s", abs ? abs : so.path);
    free(abs);
    for (size_t i = 0; i < r->c.map_count; i++) { /* hosts load definitions from these paths */
        const mig_map *m = &r->c.maps[i];
        abs = realpath(m->xaml, NULL);
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

static wfm_store_save_rec save_rec(const mig_plan *p, const char **marks)
{
    for (size_t b = 0; b < p->bookmarks.n; b++)
        marks[b] = p->bookmarks.v[b];
    return (wfm_store_save_rec){.id = p->id, .status = "Idle", .state = p->state.data,
                                .state_len = p->state.len, .bookmarks = marks,
                                .bookmark_count = p->bookmarks.n,
                                .next_timer_us = p->next_timer_us, .release = true};
}

/* Write the modern copy of one claimed instance, released: a new row, or over the row a
 * rollback ended. *found: a copy committed before (by the run that died holding the claim). */
static wf_status write_copy(run *r, mig_plan *p, bool *found, wf_error *err)
{
    const char *marks[MIG_MAX_NAMES];
    wfm_store_save_rec rec = save_rec(p, marks);
    wfl_store_migration m;
    snprintf(m.modern_id, sizeof m.modern_id, "%s", p->id);
    wf_status rc = wfb_migrate_copy_committed(r->modern, &m, found, err);
    if (rc != WF_OK || *found)
        return rc;
    void *old = NULL;
    size_t len = 0;
    char status[32];
    uint64_t hash = 0;
    rc = wfm_store_load_state(r->modern, p->id, &old, &len, status, &hash, err);
    wf_free(old);
    if (rc == WF_E_NOTFOUND) {
        wf_error_clear(err);
        return wfm_store_insert(r->modern, wfm_definition_hash(p->map->mdef), &rec, err);
    }
    if (rc == WF_OK && (rc = wfm_store_lock(r->modern, p->id, err)) == WF_OK)
        rc = wfm_store_save(r->modern, &rec, err);
    return rc;
}

/* The modern copies of the claimed ok[0..k): the new rows of one definition in one
 * transaction, the others (that transaction failed: one exists) one by one. Those written or
 * found go to done[0..*d); found[i] says which were found. */
static void write_copies(run *r, mig_plan **ok, size_t k, mig_plan **done, size_t *d,
                         bool *found, wfm_store_save_rec *recs, const char *(*marks)[MIG_MAX_NAMES])
{
    size_t fresh = 0;
    for (size_t i = 0; i < k; i++)
        if (!ok[i]->from_owner[0] && ok[i]->map == ok[0]->map)
            recs[fresh++] = save_rec(ok[i], marks[i]);
    wf_error e = WF_ERROR_INIT;
    bool together = fresh == k && wfm_store_insert_many(r->modern,
                                                        wfm_definition_hash(ok[0]->map->mdef),
                                                        recs, fresh, &e) == WF_OK;
    for (size_t i = 0; i < k; i++) {
        e = (wf_error)WF_ERROR_INIT;
        found[*d] = false;
        if (together || write_copy(r, ok[i], &found[*d], &e) == WF_OK)
            done[(*d)++] = ok[i];
        else
            failed(ok[i], &e);
    }
}

typedef struct batch_room {
    const char **ids;
    const char **from;
    wfl_store_migration *ms;
    bool *taken, *found;
    mig_plan **ok, **done;
    wfm_store_save_rec *recs;
    const char *(*marks)[MIG_MAX_NAMES];
} batch_room;

static bool room_alloc(batch_room *b, size_t n)
{
    b->ids = wf_calloc(n, sizeof *b->ids);
    b->from = wf_calloc(n, sizeof *b->from);
    b->ms = wf_calloc(n, sizeof *b->ms);
    b->taken = wf_calloc(n, sizeof *b->taken);
    b->found = wf_calloc(n, sizeof *b->found);
    b->ok = wf_calloc(n, sizeof *b->ok);
    b->done = wf_calloc(n, sizeof *b->done);
    b->recs = wf_calloc(n, sizeof *b->recs);
    b->marks = wf_calloc(n, sizeof *b->marks);
    return b->ids && b->from && b->ms && b->taken && b->found && b->ok && b->done && b->recs &&
           b->marks;
}

static void room_free(batch_room *b)
{
    wf_free(b->ids);
    wf_free(b->from);
    wf_free(b->ms);
    wf_free(b->taken);
    wf_free(b->found);
    wf_free(b->ok);
    wf_free(b->done);
    wf_free(b->recs);
    wf_free(b->marks);
}

/* Claim the legacy rows of a batch (Migrating under this run, one transaction): those still
 * as planned go to ok[0..*k); a row another live run is moving, or has moved, is left. */
static wf_status claim_batch(run *r, mig_plan **batch, size_t n, batch_room *b, size_t *k,
                             wf_error *err)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        mig_plan *p = batch[i];
        if (p->from_owner[0] && !wfm_store_owner_is_dead(p->from_owner)) {
            p->verdict = MIG_NOT_MOVABLE;
            snprintf(p->reason, sizeof p->reason,
                     "another migrate-instances (%.200s) is moving it", p->from_owner);
            continue;
        }
        wfl_store_migration *m = &b->ms[c];
        snprintf(m->target, sizeof m->target, "%s", r->target);
        snprintf(m->modern_id, sizeof m->modern_id, "%s", p->id);
        snprintf(m->owner, sizeof m->owner, "%s", wfm_store_owner(r->modern));
        m->state_hash = wf_hash_bytes(p->state.data, p->state.len);
        b->ids[c] = p->id;
        b->from[c] = p->from_owner[0] ? p->from_owner : NULL;
        b->ok[c++] = p;
    }
    wf_status rc = c ? wfl_store_claim_migrations(r->legacy, b->ids, b->ms, b->from, c,
                                                  b->taken, err)
                     : WF_OK;
    *k = 0;
    for (size_t i = 0; i < c && rc == WF_OK; i++) {
        if (b->taken[i])
            b->ok[(*k)++] = b->ok[i];
        else {
            b->ok[i]->verdict = MIG_DONE;
            snprintf(b->ok[i]->reason, sizeof b->ok[i]->reason,
                     "another migrate-instances moved it");
        }
    }
    return rc;
}

/* Move a batch: (1) legacy, one transaction: the rows become Migrating under this run; (2)
 * modern: the copies written, released, in one transaction (the commit that moves them);
 * (3) legacy, one transaction: Migrating becomes Migrated. A copy that could not be written
 * gets its legacy row back. At every moment each instance runs in exactly one store
 * (wfb_migrate_home). */
static void move_batch(run *r, mig_plan **batch, size_t n)
{
    batch_room b;
    wf_error err = WF_ERROR_INIT;
    size_t k = 0, d = 0;
    if (!room_alloc(&b, n))
        wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
    else if (claim_batch(r, batch, n, &b, &k, &err) == WF_OK && k)
        write_copies(r, b.ok, k, b.done, &d, b.found, b.recs, b.marks);
    for (size_t i = 0; i < d; i++) {
        b.ids[i] = b.done[i]->id;
        if (b.found[i])
            b.done[i]->verdict = MIG_DONE;
    }
    if (err.code == WF_OK && d)
        wfl_store_finish_migrations(r->legacy, b.ids, d, wfm_store_owner(r->modern), &err);
    for (size_t i = 0; i < k; i++) { /* not written: give the legacy row back */
        wf_error e = WF_ERROR_INIT;
        if (b.ok[i]->verdict == MIG_FAILED)
            wfl_store_unmark_migrated(r->legacy, b.ok[i]->id, wfm_store_owner(r->modern), NULL,
                                      &e);
    }
    if (err.code != WF_OK) /* a failed step 3 is settled by the next run */
        for (size_t i = 0; i < n; i++)
            if (batch[i]->verdict == MIG_MOVABLE || batch[i]->verdict == MIG_INTEROP)
                failed(batch[i], &err);
    room_free(&b);
}

/* The modern copy of a rollback, locked: ran since it was migrated? (*gone: a rollback that
 * died already ended it.) */
static wf_status copy_untouched(run *r, const wfl_store_migration *m, bool *untouched,
                                bool *gone, wf_error *err)
{
    void *state = NULL;
    size_t len = 0;
    char status[32];
    uint64_t hash = 0;
    wf_status rc = wfm_store_load_state(r->modern, m->modern_id, &state, &len, status, &hash, err);
    *gone = rc == WF_OK && strcmp(status, WFB_ROLLED_BACK) == 0;
    *untouched = rc == WF_OK && strcmp(status, "Idle") == 0 &&
                 wf_hash_bytes(state, len) == m->state_hash;
    wf_free(state);
    if (rc == WF_OK && !*untouched && !*gone)
        rc = wf_error_set(err, WF_E_STATE, NULL,
                          "the modern instance has run since it was migrated (it is %s): it "
                          "cannot go back",
                          status);
    return rc;
}

/* --rollback of one migrated instance: (1) legacy: Migrating under this run again; (2)
 * modern: the copy, if it never ran, ended as RolledBack (the commit that moves it back);
 * (3) legacy: its previous status back. A copy that ran keeps running: Migrated again. */
static void roll_back(run *r, mig_plan *p)
{
    wf_error err = WF_ERROR_INIT;
    wfl_store_migration m;
    const char *me = wfm_store_owner(r->modern);
    bool taken = false, untouched = false, gone = false;
    if (wfl_store_migration_get(r->legacy, p->id, &m, &err) != WF_OK) {
        failed(p, &err);
        return;
    }
    if (strcmp(p->status, WFL_STORE_MIGRATING) == 0 && !wfm_store_owner_is_dead(m.owner)) {
        wf_error_set(&err, WF_E_LOCKED, NULL, "another migrate-instances (%.200s) is moving it",
                     m.owner);
        failed(p, &err);
        return;
    }
    char was[sizeof m.owner];
    const char *from = was;
    snprintf(was, sizeof was, "%s", m.owner);
    snprintf(m.owner, sizeof m.owner, "%s", me);
    if (wfl_store_claim_migrations(r->legacy, (const char *const *)&p->id, &m, &from, 1, &taken,
                                   &err) != WF_OK ||
        !taken) {
        if (err.code == WF_OK)
            wf_error_set(&err, WF_E_LOCKED, NULL, "another migrate-instances is moving it");
        failed(p, &err);
        return;
    }
    wfm_store_save_rec rec = {.id = m.modern_id, .status = WFB_ROLLED_BACK, .release = true};
    wf_status rc = wfm_store_lock(r->modern, m.modern_id, &err);
    if (rc == WF_OK && (rc = copy_untouched(r, &m, &untouched, &gone, &err)) == WF_OK &&
        untouched)
        rc = wfm_store_save(r->modern, &rec, &err);
    if (rc != WF_OK) { /* still modern: settled as it was */
        wf_error e = WF_ERROR_INIT;
        wfm_store_release(r->modern, m.modern_id, &e);
        wfl_store_finish_migrations(r->legacy, (const char *const *)&p->id, 1, me, &e);
        failed(p, &err);
        return;
    }
    if (gone)
        wfm_store_release(r->modern, m.modern_id, &err);
    if (wfl_store_unmark_migrated(r->legacy, p->id, me, NULL, &err) != WF_OK) {
        failed(p, &err); /* back in the legacy store; the next --rollback settles the row */
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
    if (r->o.json) {
        mig_report_json(stdout, r->plans, r->count, &ro);
        wfb_json_printed();
    } else
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

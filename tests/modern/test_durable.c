/* test_durable.c — the durable host (modern/wfm_durable.h) and the durable CLI verbs: Persist
 * activity, idle policy (TimeToPersist / TimeToUnload on a virtual clock), no-persist zones,
 * promoted properties, resume after unload in another process, leases and takeover between
 * two hosts, a corrupt state blob, and `wfbridge run --store / instances / inspect / resume`
 * end to end with their bad inputs and exit codes. Fixtures: tests/modern/data/durable/. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../../modern/wfm_durable.h"
#include "../../modern/wfm_persist.h"
#include "../wf_test_util.h"
#include "support_pg.h"
#include "support_modern.h"

#define DATA "tests/modern/data/durable/"

typedef struct fixture {
    char dir[256], store_path[512];
    wf_libpath *libpath;
    wfm_runtime *rt;
    wfm_store *store;
    wfm_host *host;
    int64_t clock_us;
    bool no_promote;    /* fx_host: no promote list */
    char statuses[512]; /* "Executing,Idle," as saved */
    wfm_tracker *tracker; /* fx_host: given to the runtime when set */
} fixture;

static int64_t fake_clock(void *ud)
{
    return __atomic_load_n(&((fixture *)ud)->clock_us, __ATOMIC_RELAXED);
}

/* The fixture's store reads the same virtual clock, in ms. */
static int64_t fake_clock_ms(void *ud)
{
    return fake_clock(ud) / 1000;
}

static void advance_us(fixture *f, int64_t us)
{
    __atomic_add_fetch(&f->clock_us, us, __ATOMIC_RELAXED);
}

static void on_persist(void *ud, const wfm_store_save_rec *rec)
{
    fixture *f = ud;
    size_t used = strlen(f->statuses);
    if (used + strlen(rec->status) + 2 > sizeof f->statuses)
        return; /* long runs: the first saves tell enough */
    strcat(f->statuses, rec->status);
    strcat(f->statuses, ",");
}

static const char *const promote[] = {"Who", "Total", "amount", "nosuch"};

static void fx_open_store(fixture *f, const char *owner, int64_t lease_ms)
{
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = f->store_path;
    so.owner = owner;
    so.lease_ms = lease_ms;
    so.durability = WFM_DURABILITY_NORMAL;
    so.clock_ms = fake_clock_ms;
    so.clock_ud = f;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&so, &f->store, &err), WF_OK);
}

static void fx_host(fixture *f, const wfm_host_opts *opts)
{
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    ro.write = wfm_test_discard;
    ro.tracker = f->tracker;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &f->libpath, &err), WF_OK);
    ro.libpath = f->libpath;
    ck_assert_int_eq(wfm_runtime_create(&ro, &f->rt, &err), WF_OK);
    wfm_host_opts ho = WFM_HOST_OPTS_INIT;
    if (opts)
        ho = *opts;
    ho.renew_ms = -1;
    ho.promote = f->no_promote ? NULL : promote;
    ho.promote_count = f->no_promote ? 0 : 4;
    ho.on_persist = on_persist;
    ho.on_persist_ud = f;
    ho.clock = fake_clock;
    ho.clock_ud = f;
    ck_assert_int_eq(wfm_host_create(f->rt, f->store, &ho, &f->host, &err), WF_OK);
}

static void fx_init(fixture *f, const wfm_host_opts *opts)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", wf_test_tmpdir());
    snprintf(f->store_path, sizeof f->store_path, "%s/d.db", f->dir);
    f->clock_us = 1000000;
    fx_open_store(f, "test-host", 0);
    fx_host(f, opts);
}

static void fx_close_host(fixture *f)
{
    wfm_host_destroy(f->host);
    wfm_store_close(f->store);
    wfm_runtime_destroy(f->rt);
    wf_libpath_destroy(f->libpath);
    f->host = NULL;
    f->store = NULL;
    f->rt = NULL;
    f->libpath = NULL;
}

static void fx_fini(fixture *f)
{
    fx_close_host(f);
    wf_test_tmpdir_remove(f->dir);
}

/* A new instance of `file` (Who=bob when it has that argument), run to its first stop. */
static wfm_dinst *start(fixture *f, const char *file)
{
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_load(f->rt, file, &def, NULL, &err), WF_OK);
    wfm_dinst *d = NULL;
    ck_assert_int_eq(wfm_host_new(f->host, def, &d, &err), WF_OK);
    wfm_definition_release(def);
    size_t index;
    if (wfm_definition_arg_find(wfm_instance_definition(wfm_dinst_instance(d)), "Who", &index)) {
        wf_value who;
        ck_assert_int_eq(wf_value_cstring("bob", &who), WF_OK);
        ck_assert_int_eq(wfm_instance_set_input(wfm_dinst_instance(d), "Who", &who, &err), WF_OK);
        wf_value_release(&who);
    }
    ck_assert_msg(wfm_host_run(f->host, d, &err) == WF_OK, "%s", err.message);
    return d;
}

/* start(), then unload: *id receives the instance id. */
static void start_unloaded(fixture *f, const char *file, char id[33])
{
    wfm_dinst *d = start(f, file);
    snprintf(id, 33, "%s", wfm_dinst_id(d));
    wfm_dinst_close(d);
}

typedef struct row_copy {
    unsigned n;
    char status[16], bookmarks[128], owner[64];
    int64_t updated_ms, next_timer_us, lock_expires_ms;
} row_copy;

static bool copy_row(void *ud, const wfm_store_row *row)
{
    row_copy *r = ud;
    r->n++;
    snprintf(r->status, sizeof r->status, "%s", row->status);
    snprintf(r->bookmarks, sizeof r->bookmarks, "%s", row->bookmarks);
    snprintf(r->owner, sizeof r->owner, "%s", row->owner ? row->owner : "");
    r->updated_ms = row->updated_ms;
    r->next_timer_us = row->next_timer_us;
    r->lock_expires_ms = row->lock_expires_ms;
    return true;
}

/* The row of the store's only instance. */
static row_copy get_row(wfm_store *store)
{
    row_copy r = {0};
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_query_rows(store, &q, copy_row, &r, &err), WF_OK);
    ck_assert_uint_eq(r.n, 1);
    return r;
}

static wf_value int_value(int32_t x)
{
    return wf_int32(x);
}

/* ---- core ----------------------------------------------------------------------------------- */
START_TEST(persist_activity_and_idle_unload)
{
    fixture f;
    fx_init(&f, NULL);
    wfm_dinst *d = start(&f, DATA "approve.xaml");
    /* the Persist activity saved the runnable instance, then the idle unloaded it */
    ck_assert_str_eq(f.statuses, "Executing,Idle,");
    ck_assert_uint_eq(wfm_dinst_saves(d), 2);
    ck_assert(!wfm_dinst_loaded(d));
    ck_assert_uint_eq(wfm_dinst_bookmark_count(d), 1);
    ck_assert_str_eq(wfm_dinst_bookmark_name(d, 0), "approve");
    row_copy r = get_row(f.store);
    ck_assert_str_eq(r.status, "Idle");
    ck_assert_str_eq(r.bookmarks, "approve");
    ck_assert_str_eq(r.owner, ""); /* released */
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_E_STATE);
    wf_error_clear(&err);
    wfm_dinst_close(d);
    fx_fini(&f);
}
END_TEST

/* A Persist request is not an idle period: tracking shows the save ("Persisted"), not
 * "Idle", and no resumption of the internal bookmark; the real wait later is Idle. */
START_TEST(persist_request_tracks_no_idle)
{
    fixture f;
    memset(&f, 0, sizeof f);
    wf_error err = WF_ERROR_INIT;
    wfm_tracker *t = NULL;
    ck_assert_int_eq(wfm_tracker_create(wfm_profile_builtin("all"), &t, &err), WF_OK);
    ck_assert_int_eq(wfm_tracker_add_ring(t, 256, &err), WF_OK);
    snprintf(f.dir, sizeof f.dir, "%s", wf_test_tmpdir());
    snprintf(f.store_path, sizeof f.store_path, "%s/d.db", f.dir);
    f.clock_us = 1000000;
    f.tracker = t;
    fx_open_store(&f, "test-host", 0);
    fx_host(&f, NULL);
    wfm_dinst *d = start(&f, DATA "approve.xaml");
    wfm_tracker_flush(t);
    char states[512] = "", line[2048];
    bool persist_bookmark = false;
    for (size_t i = 0; wfm_tracker_ring_get(t, i, line, sizeof line); i++) {
        if (strstr(line, "persist#"))
            persist_bookmark = true;
        const char *st = strstr(line, "\"record\": \"WorkflowInstance\"") ? strstr(line, "\"state\": \"")
                                                                         : NULL;
        if (!st)
            continue;
        st += strlen("\"state\": \"");
        size_t len = strcspn(st, "\"");
        strncat(states, st, len < 40 ? len : 40);
        strcat(states, ",");
    }
    ck_assert_str_eq(states, "Started,Persisted,Idle,Persisted,Unloaded,");
    ck_assert(!persist_bookmark);
    wfm_dinst_close(d);
    fx_fini(&f);
    wfm_tracker_destroy(t);
}
END_TEST

/* Persist requests of parallel branches: one save covers the requests pending when the queue
 * drains, then every branch goes on. */
START_TEST(persist_parallel_branches)
{
    fixture f;
    fx_init(&f, NULL);
    wfm_dinst *d = start(&f, DATA "parallel_persist.xaml");
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_CLOSED);
    const wf_value *total = wfm_instance_output(wfm_dinst_instance(d), "Total");
    ck_assert_int_eq(total->u.i32, 111);
    /* both first Persists, the second branch's second one, the last one, completion */
    ck_assert_str_eq(f.statuses, "Executing,Executing,Executing,Closed,");
    wfm_dinst_close(d);
    fx_fini(&f);
}
END_TEST

START_TEST(persist_without_host_completes)
{
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    ro.write = wfm_test_discard;
    wfm_runtime *rt = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&ro, &rt, &err), WF_OK);
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_load(rt, DATA "approve.xaml", &def, NULL, &err), WF_OK);
    wfm_instance *inst = NULL;
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_IDLE);
    ck_assert_uint_eq(wfm_instance_bookmark_count(inst), 1);
    ck_assert_str_eq(wfm_instance_bookmark_name(inst, 0), "approve");
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(persist_in_no_persist_zone_faults)
{
    fixture f;
    fx_init(&f, NULL);
    wfm_dinst *d = start(&f, DATA "persist_in_tx.xaml");
    wfm_instance *inst = wfm_dinst_instance(d);
    /* TransactionScope (AbortInstanceOnTransactionFailure) ends the instance on a fault */
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_TERMINATED);
    const wf_value *exc = wfm_instance_fault(inst);
    ck_assert_str_eq(exc->type->name, "InvalidOperationException");
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "no-persist zone"));
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "Atomic"));
    ck_assert_str_eq(f.statuses, "Terminated,"); /* completion persisted */
    ck_assert_str_eq(get_row(f.store).status, "Terminated");
    wfm_dinst_close(d);
    fx_fini(&f);
}
END_TEST

START_TEST(zone_defers_idle_persist)
{
    fixture f;
    fx_init(&f, NULL);
    wfm_dinst *d = start(&f, DATA "zone.xaml");
    /* idle on "inside" within the TransactionScope: not persisted, still loaded */
    ck_assert_uint_eq(wfm_dinst_saves(d), 0);
    ck_assert(wfm_dinst_loaded(d));
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_host_persist(f.host, d, false, &err), WF_E_STATE);
    ck_assert_ptr_nonnull(strstr(err.message, "no-persist zone"));
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_host_resume(f.host, d, "inside", NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    /* the zone ended: the next idle persisted and unloaded */
    ck_assert_uint_eq(wfm_dinst_saves(d), 1);
    ck_assert(!wfm_dinst_loaded(d));
    ck_assert_str_eq(get_row(f.store).bookmarks, "after");
    wfm_dinst_close(d);
    fx_fini(&f);
}
END_TEST

START_TEST(idle_policy_timed)
{
    fixture f;
    wfm_host_opts ho = WFM_HOST_OPTS_INIT;
    ho.time_to_persist_ms = 1000;
    ho.time_to_unload_ms = 5000;
    fx_init(&f, &ho);
    wfm_dinst *d = start(&f, DATA "approve.xaml");
    ck_assert_uint_eq(wfm_dinst_saves(d), 1); /* the Persist activity only */
    ck_assert(wfm_dinst_loaded(d));
    wf_error err = WF_ERROR_INIT;
    f.clock_us += 999 * 1000;
    ck_assert_int_eq(wfm_host_poll(f.host, &err), WF_OK);
    ck_assert_uint_eq(wfm_dinst_saves(d), 1);
    f.clock_us += 1000;
    ck_assert_int_eq(wfm_host_poll(f.host, &err), WF_OK);
    ck_assert_uint_eq(wfm_dinst_saves(d), 2); /* TimeToPersist: persisted, kept */
    ck_assert(wfm_dinst_loaded(d));
    ck_assert_str_eq(get_row(f.store).owner, "test-host");
    f.clock_us += 3000 * 1000;
    ck_assert_int_eq(wfm_host_poll(f.host, &err), WF_OK);
    ck_assert_uint_eq(wfm_dinst_saves(d), 2); /* persisted already, not yet unloaded */
    f.clock_us += 1000 * 1000;
    ck_assert_int_eq(wfm_host_poll(f.host, &err), WF_OK);
    ck_assert_uint_eq(wfm_dinst_saves(d), 3); /* TimeToUnload: persisted and released */
    ck_assert(!wfm_dinst_loaded(d));
    ck_assert_str_eq(get_row(f.store).owner, "");
    wfm_dinst_close(d);
    fx_fini(&f);
}
END_TEST

START_TEST(idle_policy_persist_keep)
{
    fixture f;
    wfm_host_opts ho = WFM_HOST_OPTS_INIT;
    ho.time_to_persist_ms = 0;
    ho.time_to_unload_ms = WFM_HOST_NEVER;
    fx_init(&f, &ho);
    wfm_dinst *d = start(&f, DATA "approve.xaml");
    ck_assert_uint_eq(wfm_dinst_saves(d), 2);
    ck_assert(wfm_dinst_loaded(d));
    wf_error err = WF_ERROR_INIT;
    for (int i = 0; i < 120; i++) { /* an hour, the lease renewed as the host thread would */
        f.clock_us += 30 * 1000000;
        ck_assert_int_eq(wfm_store_renew(f.store, &err), WF_OK);
        ck_assert_int_eq(wfm_host_poll(f.host, &err), WF_OK);
    }
    ck_assert(wfm_dinst_loaded(d)); /* never unloaded */
    wf_value v = int_value(21);
    ck_assert_int_eq(wfm_host_resume(f.host, d, "approve", &v, &err), WF_OK);
    wf_value_release(&v);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(get_row(f.store).status, "Closed");
    ck_assert_str_eq(get_row(f.store).owner, "");
    wfm_dinst_close(d);
    fx_fini(&f);
}
END_TEST

START_TEST(promoted_properties)
{
    fixture f;
    fx_init(&f, NULL);
    wfm_dinst *d = start(&f, DATA "approve.xaml");
    char id[33];
    snprintf(id, sizeof id, "%s", wfm_dinst_id(d));
    wfm_dinst_close(d);
    wf_error err = WF_ERROR_INIT;
    char *props = NULL;
    ck_assert_int_eq(wfm_store_props(f.store, id, &props, &err), WF_OK);
    ck_assert_str_eq(props, "Total=0\nWho=bob\namount=0\n");
    wf_free(props);
    row_copy r = {0};
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    q.prop_name = "Who";
    q.prop_value = "bob";
    ck_assert_int_eq(wfm_store_query_rows(f.store, &q, copy_row, &r, &err), WF_OK);
    ck_assert_uint_eq(r.n, 1);
    q.prop_value = "alice";
    r.n = 0;
    ck_assert_int_eq(wfm_store_query_rows(f.store, &q, copy_row, &r, &err), WF_OK);
    ck_assert_uint_eq(r.n, 0);
    /* resumed to completion by a host without a promote list: the names stay promoted */
    fx_close_host(&f);
    f.no_promote = true;
    fx_open_store(&f, "test-host", 0);
    fx_host(&f, NULL);
    ck_assert_int_eq(wfm_host_load(f.host, id, &d, &err), WF_OK);
    wf_value v = int_value(21);
    ck_assert_int_eq(wfm_host_resume(f.host, d, "approve", &v, &err), WF_OK);
    wf_value_release(&v);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    wfm_dinst_close(d);
    ck_assert_int_eq(wfm_store_props(f.store, id, &props, &err), WF_OK);
    ck_assert_str_eq(props, "Total=42\nWho=bob\n"); /* amount: the root has completed */
    wf_free(props);
    fx_fini(&f);
}
END_TEST

/* A process that dies after creating an instance and before its first persist point: the
 * state saved before the first run lets another host run it from the start, inputs kept. */
START_TEST(created_instance_runs_after_death_before_first_persist)
{
    fixture f;
    wfm_host_opts keep = WFM_HOST_OPTS_INIT;
    keep.time_to_persist_ms = WFM_HOST_NEVER;
    keep.time_to_unload_ms = WFM_HOST_NEVER;
    fx_init(&f, &keep);
    wfm_dinst *d = start(&f, DATA "two_steps.xaml");
    ck_assert_uint_eq(wfm_dinst_saves(d), 0); /* idle and kept loaded: no persist point */
    ck_assert_str_eq(f.statuses, "");
    ck_assert(wfm_dinst_loaded(d));
    char id[33];
    snprintf(id, sizeof id, "%s", wfm_dinst_id(d));
    row_copy r = get_row(f.store);
    ck_assert_str_eq(r.status, "Created");
    wfm_dinst_close(d); /* the process "dies": nothing more is saved */
    fx_close_host(&f);

    fx_open_store(&f, "second-host", 0);
    fx_host(&f, NULL);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_host_load(f.host, id, &d, &err) == WF_OK, "%s", err.message);
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_CREATED);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    ck_assert_str_eq(f.statuses, "Idle,");
    ck_assert(!wfm_dinst_loaded(d));
    wfm_dinst_close(d);
    r = get_row(f.store);
    ck_assert_str_eq(r.status, "Idle");
    ck_assert_str_eq(r.bookmarks, "first");
    char *props = NULL;
    ck_assert_int_eq(wfm_store_props(f.store, id, &props, &err), WF_OK);
    ck_assert_str_eq(props, "Total=0\nWho=bob\n"); /* the input survived */
    wf_free(props);
    fx_fini(&f);
}
END_TEST

static bool count_queued(void *ud, const wfm_store_resume *r)
{
    (void)r;
    (*(int *)ud)++;
    return true;
}

static int queued_count(wfm_store *store, const char *id)
{
    int n = 0;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_pending_resumes(store, id, count_queued, &n, &err), WF_OK);
    return n;
}

/* Resumptions queued while another host held the instance are applied by the next host in
 * seq order ("second" exists only after "first" was processed), each deleted with the save
 * that follows it; one the instance cannot take waits. */
START_TEST(queued_resumes_applied_in_order)
{
    fixture f;
    fx_init(&f, NULL);
    wfm_dinst *d = start(&f, DATA "two_steps.xaml");
    char id[33];
    snprintf(id, sizeof id, "%s", wfm_dinst_id(d));
    wfm_dinst_close(d);
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = f.store_path;
    so.owner = "holder";
    wfm_store *holder = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&so, &holder, &err), WF_OK);
    ck_assert_int_eq(wfm_store_lock(holder, id, &err), WF_OK);
    ck_assert_int_eq(wfm_store_enqueue_resume(holder, id, "second", "2", NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_host_load(f.host, id, &d, &err), WF_E_LOCKED);
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_store_release(holder, id, &err), WF_OK);

    /* "second" first: the instance waits on "first", so it stays queued */
    ck_assert_int_eq(wfm_host_load(f.host, id, &d, &err), WF_OK);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    wfm_dinst_close(d);
    ck_assert_str_eq(get_row(f.store).bookmarks, "first");
    ck_assert_int_eq(queued_count(f.store, id), 1);

    /* the test's own queue: clear it and queue in the right order */
    ck_assert_int_eq(wfm_store_lock(holder, id, &err), WF_OK);
    wfm_store_save_rec clear = {0};
    clear.id = id;
    clear.status = "Idle";
    ck_assert_int_eq(wfm_store_load_state(holder, id, (void **)&clear.state, &clear.state_len,
                                          (char[32]){0}, NULL, &err),
                     WF_OK);
    const char *bms[] = {"first"};
    clear.bookmarks = bms;
    clear.bookmark_count = 1;
    clear.release = true;
    clear.resumes_through = 1;
    ck_assert_int_eq(wfm_store_save(holder, &clear, &err), WF_OK);
    wf_free((void *)clear.state);
    ck_assert_int_eq(queued_count(f.store, id), 0);
    ck_assert_int_eq(wfm_store_enqueue_resume(holder, id, "first", "1", NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_store_enqueue_resume(holder, id, "second", "2", NULL, &err), WF_OK);
    wfm_store_close(holder);

    ck_assert_int_eq(wfm_host_load(f.host, id, &d, &err), WF_OK);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_CLOSED);
    const wf_value *total = wfm_instance_output(wfm_dinst_instance(d), "Total");
    ck_assert_ptr_nonnull(total);
    ck_assert_int_eq(total->u.i32, 12); /* a = 1, then b = 2 */
    wfm_dinst_close(d);
    ck_assert_str_eq(get_row(f.store).status, "Closed");
    ck_assert_int_eq(queued_count(f.store, id), 0);
    fx_fini(&f);
}
END_TEST

/* A host that keeps the instance loaded (no save at idle) applies a queued resumption once:
 * reading the queue again before the save deleted it must not resume it a second time. */
START_TEST(queued_resume_applied_once_while_loaded)
{
    fixture f;
    wfm_host_opts keep = WFM_HOST_OPTS_INIT;
    keep.time_to_persist_ms = WFM_HOST_NEVER;
    keep.time_to_unload_ms = WFM_HOST_NEVER;
    fx_init(&f, &keep);
    wfm_dinst *d = start(&f, DATA "two_steps.xaml");
    char id[33];
    snprintf(id, sizeof id, "%s", wfm_dinst_id(d));
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = f.store_path;
    so.owner = "other-process";
    wfm_store *other = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&so, &other, &err), WF_OK);
    ck_assert_int_eq(wfm_store_enqueue_resume(other, id, "first", "1", NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_bookmark_count(wfm_dinst_instance(d)), 1);
    ck_assert_str_eq(wfm_instance_bookmark_name(wfm_dinst_instance(d), 0), "second");
    ck_assert_int_eq(queued_count(f.store, id), 1); /* no save yet */
    /* the library caller's own resumption goes behind the queue */
    ck_assert_int_eq(wfm_store_enqueue_resume(other, id, "second", "2", NULL, &err), WF_OK);
    wf_value three = int_value(3);
    ck_assert_int_eq(wfm_host_resume(f.host, d, "second", &three, &err), WF_E_NOTFOUND);
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(wfm_instance_output(wfm_dinst_instance(d), "Total")->u.i32, 12);
    ck_assert_int_eq(queued_count(f.store, id), 0);
    wfm_dinst_close(d);
    wfm_store_close(other);
    fx_fini(&f);
}
END_TEST

/* Unload here, resume in a forked process with its own runtime, store and host. */
START_TEST(resume_in_new_process)
{
    fixture f;
    fx_init(&f, NULL);
    wfm_dinst *d = start(&f, DATA "approve.xaml");
    char id[33];
    snprintf(id, sizeof id, "%s", wfm_dinst_id(d));
    wfm_dinst_close(d);
    fx_close_host(&f);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        fixture g = f;
        fx_open_store(&g, "second-process", 0);
        fx_host(&g, NULL);
        wf_error err = WF_ERROR_INIT;
        wfm_dinst *e = NULL;
        int rc = 10;
        if (wfm_host_load(g.host, id, &e, &err) == WF_OK) {
            wf_value v = int_value(21);
            rc = 11;
            if (wfm_host_resume(g.host, e, "approve", &v, &err) == WF_OK &&
                wfm_host_run(g.host, e, &err) == WF_OK) {
                const wf_value *total = wfm_instance_output(wfm_dinst_instance(e), "Total");
                rc = total && total->type == &wf_type_int32 && total->u.i32 == 42 ? 0 : 12;
            }
            wf_value_release(&v);
        }
        wfm_dinst_close(e);
        fx_close_host(&g);
        _exit(rc);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    fx_open_store(&f, "test-host", 0);
    ck_assert_str_eq(get_row(f.store).status, "Closed");
    wfm_store_close(f.store);
    f.store = NULL;
    fx_fini(&f);
}
END_TEST

/* Two hosts on one store file: a live lease blocks the other host; an expired one is taken
 * over and the first host's next save fails with WF_E_LOCKED. */
/* ---- pool runs (wfm_host_run_pooled) -------------------------------------------------------- */
typedef struct pool_wait {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    unsigned ended, failed;
    wf_status last;
    char message[600];
} pool_wait;

static void pool_wait_init(pool_wait *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cv, NULL);
}

static void pool_wait_fini(pool_wait *w)
{
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cv);
}

static void pool_done(void *ud, wfm_dinst *d, wf_status st, const wf_error *err)
{
    (void)d;
    pool_wait *w = ud;
    pthread_mutex_lock(&w->lock);
    w->ended++;
    w->last = st;
    if (st != WF_OK) {
        w->failed++;
        snprintf(w->message, sizeof w->message, "%s", err->message);
    }
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->lock);
}

static void pool_wait_for(pool_wait *w, unsigned n)
{
    pthread_mutex_lock(&w->lock);
    while (w->ended < n)
        pthread_cond_wait(&w->cv, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

/* Saved as Created and released (wfm_host_start), ready for a host to load. */
static void created_unloaded(fixture *f, const char *file, char id[33])
{
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_load(f->rt, file, &def, NULL, &err), WF_OK);
    wfm_dinst *d = NULL;
    ck_assert_int_eq(wfm_host_new(f->host, def, &d, &err), WF_OK);
    wfm_definition_release(def);
    ck_assert_int_eq(wfm_host_start(f->host, d, &err), WF_OK);
    snprintf(id, 33, "%s", wfm_dinst_id(d));
    wfm_dinst_close(d);
}

static int32_t output_i32(wfm_dinst *d, const char *name)
{
    const wf_value *v = wfm_instance_output(wfm_dinst_instance(d), name);
    ck_assert_ptr_nonnull(v);
    return v->u.i32;
}

/* Load `id` on f's host and run it on the pool until its run ends (w records how). */
static wfm_dinst *run_pooled_one(fixture *f, const char *id, pool_wait *w)
{
    wfm_dinst *d = NULL;
    wf_error err = WF_ERROR_INIT;
    pool_wait_init(w);
    ck_assert_int_eq(wfm_host_load(f->host, id, &d, &err), WF_OK);
    ck_assert_int_eq(wfm_host_run_pooled(f->host, d, pool_done, w, &err), WF_OK);
    pool_wait_for(w, 1);
    return d;
}

/* Many instances with a Persist after each step run on the pool: every save goes through the
 * commit thread, saves of different instances share commits, and each instance completes
 * with all its steps, saved Closed and released. */
START_TEST(pooled_runs_save_through_the_commit_thread)
{
    enum { N = 120 };
    fixture f;
    f.no_promote = true;
    fx_init(&f, NULL);
    static char ids[N][33];
    for (int i = 0; i < N; i++)
        created_unloaded(&f, DATA "five_persists.xaml", ids[i]);
    uint64_t commits0, saves0;
    wfm_store_counters(f.store, &commits0, &saves0);
    f.statuses[0] = '\0';
    pool_wait w;
    pool_wait_init(&w);
    wfm_dinst *ds[N];
    wf_error err = WF_ERROR_INIT;
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(wfm_host_load(f.host, ids[i], &ds[i], &err), WF_OK);
        ck_assert_int_eq(wfm_host_run_pooled(f.host, ds[i], pool_done, &w, &err), WF_OK);
    }
    pool_wait_for(&w, N);
    ck_assert_msg(w.failed == 0, "%s", w.message);
    uint64_t commits, saves;
    wfm_store_counters(f.store, &commits, &saves);
    ck_assert_uint_eq(saves - saves0, N * 6); /* five Persists and the completion each */
    ck_assert_uint_lt(commits - commits0, saves - saves0);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(ds[i])), WFM_INSTANCE_CLOSED);
        ck_assert_int_eq(output_i32(ds[i], "N"), 5);
        ck_assert_uint_eq(wfm_dinst_saves(ds[i]), 6);
        ck_assert(!wfm_dinst_loaded(ds[i]));
        wfm_dinst_close(ds[i]);
    }
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    q.status = "Closed";
    row_copy r = {0};
    ck_assert_int_eq(wfm_store_query_rows(f.store, &q, copy_row, &r, &err), WF_OK);
    ck_assert_uint_eq(r.n, N);
    ck_assert_str_eq(r.owner, "");
    pool_wait_fini(&w);
    fx_fini(&f);
}
END_TEST

/* Idle on a timer outside a no-persist zone: the pool run persists and unloads the instance
 * and takes it off the pool, so the timer never fires in this process (a host loads it again
 * when it is due). */
START_TEST(pooled_idle_on_a_timer_is_unloaded_off_the_pool)
{
    fixture f;
    fx_init(&f, NULL);
    char id[33];
    created_unloaded(&f, DATA "delay.xaml", id);
    pool_wait w;
    wfm_dinst *d = run_pooled_one(&f, id, &w);
    ck_assert_int_eq(w.last, WF_OK);
    wfm_runtime_wait_idle(f.rt); /* returns at once: nothing is on the pool */
    wfm_stats stats;
    wfm_runtime_stats(f.rt, &stats);
    ck_assert_uint_eq(stats.timers_fired, 0);
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_IDLE);
    ck_assert(!wfm_dinst_loaded(d));
    row_copy r = get_row(f.store);
    ck_assert_str_eq(r.status, "Idle");
    ck_assert_int_gt(r.next_timer_us, 0);
    ck_assert_str_eq(r.owner, "");
    wfm_dinst_close(d);
    pool_wait_fini(&w);
    fx_fini(&f);
}
END_TEST

/* After wfm_host_end_runs a pool run stops at its next persist point, saved runnable and
 * released; another host continues it from there to the end. */
START_TEST(pooled_end_runs_stops_at_the_next_persist_point)
{
    fixture f;
    f.no_promote = true;
    fx_init(&f, NULL);
    char id[33];
    created_unloaded(&f, DATA "five_persists.xaml", id);
    wfm_host_end_runs(f.host);
    pool_wait w;
    wfm_dinst *d = run_pooled_one(&f, id, &w);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(w.last, WF_OK);
    ck_assert_uint_eq(wfm_dinst_saves(d), 1);
    ck_assert(!wfm_dinst_loaded(d));
    wfm_dinst_close(d);
    row_copy r = get_row(f.store);
    ck_assert_str_eq(r.status, "Executing");
    ck_assert_str_eq(r.owner, "");
    fx_close_host(&f);
    fx_open_store(&f, "next-host", 0);
    fx_host(&f, NULL);
    ck_assert_int_eq(wfm_host_load(f.host, id, &d, &err), WF_OK);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    ck_assert_int_eq(output_i32(d, "N"), 5); /* steps 2 to 5 here, step 1 not again */
    ck_assert_uint_eq(wfm_dinst_saves(d), 5);
    wfm_dinst_close(d);
    ck_assert_str_eq(get_row(f.store).status, "Closed");
    pool_wait_fini(&w);
    fx_fini(&f);
}
END_TEST

/* Resumptions queued while another host held the instance are applied on the pool in order. */
START_TEST(pooled_run_applies_queued_resumptions)
{
    fixture f;
    fx_init(&f, NULL);
    char id[33];
    start_unloaded(&f, DATA "two_steps.xaml", id);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_enqueue_resume(f.store, id, "first", "1", NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_store_enqueue_resume(f.store, id, "second", "2", NULL, &err), WF_OK);
    pool_wait w;
    wfm_dinst *d = run_pooled_one(&f, id, &w);
    ck_assert_msg(w.last == WF_OK, "%s", w.message);
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(output_i32(d, "Total"), 12);
    wfm_dinst_close(d);
    ck_assert_str_eq(get_row(f.store).status, "Closed");
    ck_assert_int_eq(queued_count(f.store, id), 0);
    pool_wait_fini(&w);
    fx_fini(&f);
}
END_TEST

/* A save refused because the lease was lost ends the run with WF_E_LOCKED, and the instance
 * the other host took over is not written. */
START_TEST(pooled_run_with_a_lost_lease_ends_locked)
{
    fixture a, b;
    a.no_promote = true;
    fx_init(&a, NULL);
    char id[33];
    created_unloaded(&a, DATA "five_persists.xaml", id);
    fx_close_host(&a);
    fx_open_store(&a, "test-host", 1); /* a 1 ms lease */
    fx_host(&a, NULL);
    wfm_dinst *d = NULL, *e = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_host_load(a.host, id, &d, &err), WF_OK);
    memset(&b, 0, sizeof b);
    snprintf(b.store_path, sizeof b.store_path, "%s", a.store_path);
    b.clock_us = a.clock_us + 5000;
    fx_open_store(&b, "other-host", 0);
    fx_host(&b, NULL);
    ck_assert_int_eq(wfm_host_load(b.host, id, &e, &err), WF_OK); /* taken over */
    pool_wait w;
    pool_wait_init(&w);
    ck_assert_int_eq(wfm_host_run_pooled(a.host, d, pool_done, &w, &err), WF_OK);
    pool_wait_for(&w, 1);
    ck_assert_int_eq(w.last, WF_E_LOCKED);
    ck_assert_uint_eq(wfm_dinst_saves(d), 0);
    row_copy r = get_row(b.store);
    ck_assert_str_eq(r.status, "Created");
    ck_assert_str_eq(r.owner, "other-host");
    wfm_dinst_close(d);
    wfm_dinst_close(e);
    pool_wait_fini(&w);
    fx_close_host(&b);
    fx_fini(&a);
}
END_TEST

/* A slow commit stalls nobody else: with one worker and the store's file write-locked by
 * another connection, an instance waiting for its save holds no thread, so another instance
 * on the same pool runs to completion meanwhile; the save goes through once the lock goes. */
static void signal_done(wfm_instance *inst, void *ud)
{
    (void)inst;
    pool_done(ud, NULL, WF_OK, NULL);
}

START_TEST(pooled_save_waiting_on_the_store_holds_no_worker)
{
    fixture f;
    f.no_promote = true;
    fx_init(&f, NULL); /* the runtime has one worker */
    char id[33];
    created_unloaded(&f, DATA "five_persists.xaml", id);
    pool_wait a, b;
    pool_wait_init(&a);
    pool_wait_init(&b);
    wfm_dinst *d = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_host_load(f.host, id, &d, &err), WF_OK);
    sqlite3 *blocker = NULL;
    ck_assert_int_eq(sqlite3_open(f.store_path, &blocker), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(blocker, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_eq(wfm_host_run_pooled(f.host, d, pool_done, &a, &err), WF_OK);
    /* another instance on the same pool, no store involved */
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_load(f.rt, DATA "five_persists.xaml", &def, NULL, &err), WF_OK);
    wfm_instance *other = NULL;
    ck_assert_int_eq(wfm_instance_create(f.rt, def, &other, &err), WF_OK);
    wfm_definition_release(def);
    wfm_instance_on_complete(other, signal_done, &b);
    ck_assert_int_eq(wfm_instance_start(other, &err), WF_OK);
    pool_wait_for(&b, 1);
    ck_assert_int_eq(wfm_instance_state_get(other), WFM_INSTANCE_CLOSED);
    pthread_mutex_lock(&a.lock);
    unsigned a_ended = a.ended;
    pthread_mutex_unlock(&a.lock);
    ck_assert_uint_eq(a_ended, 0); /* still waiting for its first commit */
    ck_assert_uint_eq(wfm_dinst_saves(d), 0);
    ck_assert_int_eq(sqlite3_exec(blocker, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(blocker);
    pool_wait_for(&a, 1);
    ck_assert_msg(a.last == WF_OK, "%s", a.message);
    ck_assert_int_eq(output_i32(d, "N"), 5);
    wfm_dinst_close(d);
    wfm_instance_destroy(other);
    pool_wait_fini(&a);
    pool_wait_fini(&b);
    fx_fini(&f);
}
END_TEST

/* The store's asynchronous save: each callback runs once, after its commit, and closing the
 * store commits what is still queued. */
typedef struct saved_count {
    int ok, failed;
} saved_count;

static void count_saved(void *ud, wf_status st, const wf_error *err)
{
    (void)err;
    saved_count *c = ud;
    __atomic_add_fetch(st == WF_OK ? &c->ok : &c->failed, 1, __ATOMIC_RELAXED);
}

/* A fixture with n instances of delay.xaml saved Created and released. */
static void fx_init_created(fixture *f, char (*ids)[33], int n)
{
    fx_init(f, NULL);
    for (int i = 0; i < n; i++)
        created_unloaded(f, DATA "delay.xaml", ids[i]);
}

START_TEST(store_save_async_commits_each_once_and_close_drains)
{
    fixture f;
    enum { N = 50 };
    static char ids[N][33];
    fx_init_created(&f, ids, N);
    wf_error err = WF_ERROR_INIT;
    wfm_store_save_rec recs[N + 1];
    saved_count c = {0, 0};
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(wfm_store_lock(f.store, ids[i], &err), WF_OK);
        recs[i] = (wfm_store_save_rec){.id = ids[i], .status = "Closed", .release = true};
        ck_assert_int_eq(wfm_store_save_async(f.store, &recs[i], count_saved, &c, &err), WF_OK);
    }
    /* one whose lease this store does not hold fails, alone */
    recs[N] = (wfm_store_save_rec){.id = ids[0], .status = "Faulted", .release = true};
    ck_assert_int_eq(wfm_store_save_async(f.store, &recs[N], count_saved, &c, &err), WF_OK);
    fx_close_host(&f); /* closes the store: the queue is committed first */
    ck_assert_int_eq(c.ok, N);
    ck_assert_int_eq(c.failed, 1);
    fx_open_store(&f, "test-host", 0);
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    q.status = "Closed";
    row_copy r = {0};
    ck_assert_int_eq(wfm_store_query_rows(f.store, &q, copy_row, &r, &err), WF_OK);
    ck_assert_uint_eq(r.n, N);
    wfm_store_close(f.store);
    f.store = NULL;
    wf_test_tmpdir_remove(f.dir);
}
END_TEST

/* A gate the commit thread waits at inside a save's callback: the saves queued meanwhile
 * form the next batch, all of them, so a test knows which saves share a transaction. */
typedef struct commit_gate {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    bool entered, open;
} commit_gate;

static void gate_saved(void *ud, wf_status st, const wf_error *err)
{
    (void)err;
    commit_gate *g = ud;
    ck_assert_int_eq(st, WF_OK);
    pthread_mutex_lock(&g->lock);
    g->entered = true;
    pthread_cond_broadcast(&g->cv);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

/* Queue a save of `id` whose callback holds the commit thread until gate_open. */
static void gate_close(commit_gate *g, wfm_store *store, wfm_store_save_rec *rec, const char *id)
{
    *g = (commit_gate){PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false};
    *rec = (wfm_store_save_rec){.id = id, .status = "Idle"};
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_lock(store, id, &err), WF_OK);
    ck_assert_int_eq(wfm_store_save_async(store, rec, gate_saved, g, &err), WF_OK);
    pthread_mutex_lock(&g->lock);
    while (!g->entered)
        pthread_cond_wait(&g->cv, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

static void gate_open(commit_gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lock);
}

typedef struct save_result {
    wf_status status;
    bool called;
    char message[600];
    pool_wait *w; /* counts the calls */
} save_result;

static void record_saved(void *ud, wf_status st, const wf_error *err)
{
    save_result *r = ud;
    r->called = true;
    r->status = st;
    snprintf(r->message, sizeof r->message, "%s", st == WF_OK ? "" : err->message);
    pool_done(r->w, NULL, WF_OK, NULL);
}

/* One batch holding good saves, a save without a live lease (it changes nothing) and an
 * insert that fails half way (its id exists): the batch is written without a savepoint per
 * save first, then again under savepoints, so the good saves commit, in one transaction, and
 * the failed ones report their own errors. */
START_TEST(store_batch_commits_good_saves_beside_failed_ones)
{
    fixture f;
    enum { N = 4 };
    static char ids[N][33];
    fx_init_created(&f, ids, N);
    wf_error err = WF_ERROR_INIT;
    for (int i = 1; i < 3; i++)
        ck_assert_int_eq(wfm_store_lock(f.store, ids[i], &err), WF_OK);
    commit_gate g;
    wfm_store_save_rec first, recs[4];
    gate_close(&g, f.store, &first, ids[0]);
    uint64_t commits0 = 0, saves0 = 0, commits = 0, saves = 0;
    wfm_store_counters(f.store, &commits0, &saves0);
    pool_wait w;
    pool_wait_init(&w);
    save_result res[4] = {{.w = &w}, {.w = &w}, {.w = &w}, {.w = &w}};
    recs[0] = (wfm_store_save_rec){.id = ids[1], .status = "Closed", .state = "one",
                                   .state_len = 3, .release = true};
    recs[1] = (wfm_store_save_rec){.id = ids[3], .status = "Faulted", .release = true};
    recs[2] = (wfm_store_save_rec){.id = ids[2], .status = "Created", .state = "dup",
                                   .state_len = 3};
    recs[3] = (wfm_store_save_rec){.id = ids[2], .status = "Closed", .state = "two",
                                   .state_len = 3, .release = true};
    ck_assert_int_eq(wfm_store_save_async(f.store, &recs[0], record_saved, &res[0], &err), WF_OK);
    ck_assert_int_eq(wfm_store_save_async(f.store, &recs[1], record_saved, &res[1], &err), WF_OK);
    ck_assert_int_eq(wfm_store_insert_async(f.store, 7, &recs[2], record_saved, &res[2], &err),
                     WF_OK);
    ck_assert_int_eq(wfm_store_save_async(f.store, &recs[3], record_saved, &res[3], &err), WF_OK);
    gate_open(&g);
    pool_wait_for(&w, 4);
    wfm_store_counters(f.store, &commits, &saves);
    ck_assert_uint_eq(commits - commits0, 1);
    ck_assert_uint_eq(saves - saves0, 2);
    ck_assert_msg(res[0].called && res[0].status == WF_OK, "%s", res[0].message);
    ck_assert(res[1].called);
    ck_assert_int_eq(res[1].status, WF_E_LOCKED);
    ck_assert(res[2].called);
    ck_assert_int_eq(res[2].status, WF_E_STORE);
    ck_assert_msg(res[3].called && res[3].status == WF_OK, "%s", res[3].message);
    for (int i = 1; i < N; i++) {
        void *state = NULL;
        size_t len = 0;
        char status[32];
        ck_assert_int_eq(wfm_store_load_state(f.store, ids[i], &state, &len, status, NULL, &err),
                         WF_OK);
        ck_assert_str_eq(status, i == 3 ? "Created" : "Closed");
        if (i < 3) {
            ck_assert_uint_eq(len, 3);
            ck_assert(memcmp(state, i == 1 ? "one" : "two", 3) == 0);
        }
        wf_free(state);
    }
    pool_wait_fini(&w);
    fx_fini(&f);
}
END_TEST

/* A new instance run on the pool starts only once its creation save committed: while the
 * commit thread is held, none of them runs; released, every one completes. */
START_TEST(pooled_new_instances_start_once_created)
{
    enum { N = 6 };
    fixture f;
    f.no_promote = true;
    fx_init(&f, NULL);
    char held[33];
    created_unloaded(&f, DATA "delay.xaml", held);
    commit_gate g;
    wfm_store_save_rec first;
    gate_close(&g, f.store, &first, held);
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_load(f.rt, DATA "five_persists.xaml", &def, NULL, &err), WF_OK);
    pool_wait w;
    pool_wait_init(&w);
    wfm_dinst *ds[N];
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(wfm_host_new(f.host, def, &ds[i], &err), WF_OK);
        ck_assert_int_eq(wfm_host_run_pooled(f.host, ds[i], pool_done, &w, &err), WF_OK);
    }
    wfm_definition_release(def);
    pthread_mutex_lock(&w.lock);
    ck_assert_uint_eq(w.ended, 0);
    pthread_mutex_unlock(&w.lock);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(ds[i])),
                         WFM_INSTANCE_CREATED);
    gate_open(&g);
    pool_wait_for(&w, N);
    ck_assert_msg(w.failed == 0, "%s", w.message);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(ds[i])), WFM_INSTANCE_CLOSED);
        ck_assert_int_eq(output_i32(ds[i], "N"), 5);
        ck_assert_uint_eq(wfm_dinst_saves(ds[i]), 6);
        wfm_dinst_close(ds[i]);
    }
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    q.status = "Closed";
    row_copy r = {0};
    ck_assert_int_eq(wfm_store_query_rows(f.store, &q, copy_row, &r, &err), WF_OK);
    ck_assert_uint_eq(r.n, N);
    pool_wait_fini(&w);
    fx_fini(&f);
}
END_TEST

/* One wfm_dinst per instance and host: loading an instance this host holds is refused, and
 * the lease stays with the open copy. */
START_TEST(load_of_an_instance_open_here_is_refused)
{
    fixture f;
    wfm_host_opts keep = WFM_HOST_OPTS_INIT;
    keep.time_to_persist_ms = 0;
    keep.time_to_unload_ms = WFM_HOST_NEVER;
    fx_init(&f, &keep);
    wfm_dinst *d = start(&f, DATA "approve.xaml");
    ck_assert(wfm_dinst_loaded(d));
    wfm_dinst *twin = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_host_load(f.host, wfm_dinst_id(d), &twin, &err), WF_E_LOCKED);
    ck_assert_ptr_null(twin);
    WF_ASSERT_ERROR(err, WF_E_LOCKED, 0, 0, "already loaded by this host");
    wf_error_clear(&err);
    ck_assert_str_eq(get_row(f.store).owner, "test-host");
    wfm_dinst_close(d);
    ck_assert_str_eq(get_row(f.store).owner, "");
    fx_fini(&f);
}
END_TEST

/* wfm_host_has finds each of many open instances (more than the host's first buckets hold)
 * and none once it is closed. */
START_TEST(host_has_each_of_many_open_instances)
{
    enum { MANY = 150 };
    fixture f;
    wfm_host_opts keep = WFM_HOST_OPTS_INIT;
    keep.time_to_persist_ms = 0;
    keep.time_to_unload_ms = WFM_HOST_NEVER;
    fx_init(&f, &keep);
    wfm_dinst *d[MANY];
    char ids[MANY][33];
    for (int i = 0; i < MANY; i++) {
        d[i] = start(&f, DATA "approve.xaml");
        snprintf(ids[i], sizeof ids[i], "%s", wfm_dinst_id(d[i]));
    }
    for (int i = 0; i < MANY; i++)
        ck_assert(wfm_host_has(f.host, ids[i]));
    for (int i = 0; i < MANY; i += 2)
        wfm_dinst_close(d[i]);
    for (int i = 0; i < MANY; i++)
        ck_assert(wfm_host_has(f.host, ids[i]) == (i % 2 == 1));
    for (int i = 1; i < MANY; i += 2)
        wfm_dinst_close(d[i]);
    ck_assert(!wfm_host_has(f.host, ids[1]));
    fx_fini(&f);
}
END_TEST

START_TEST(lease_and_takeover)
{
    fixture a, b;
    wfm_host_opts keep = WFM_HOST_OPTS_INIT;
    keep.time_to_persist_ms = 0;
    keep.time_to_unload_ms = WFM_HOST_NEVER;
    fx_init(&a, &keep);
    wfm_dinst *d = start(&a, DATA "approve.xaml");
    ck_assert(wfm_dinst_loaded(d));
    char id[33];
    snprintf(id, sizeof id, "%s", wfm_dinst_id(d));
    memset(&b, 0, sizeof b);
    snprintf(b.store_path, sizeof b.store_path, "%s", a.store_path);
    b.clock_us = a.clock_us;
    fx_open_store(&b, "other-host", 0);
    fx_host(&b, NULL);
    wf_error err = WF_ERROR_INIT;
    wfm_dinst *e = NULL;
    ck_assert_int_eq(wfm_host_load(b.host, id, &e, &err), WF_E_LOCKED);
    ck_assert_ptr_null(e);
    WF_ASSERT_ERROR(err, WF_E_LOCKED, 0, 0, "locked by another host");
    wf_error_clear(&err);
    ck_assert_str_eq(get_row(a.store).owner, "test-host");
    /* host A's lease lapses: reopen its store with a 1 ms lease and renew nothing */
    wfm_dinst_close(d);
    fx_close_host(&a);
    fx_open_store(&a, "test-host", 1);
    fx_host(&a, &keep);
    ck_assert_int_eq(wfm_host_load(a.host, id, &d, &err), WF_OK);
    advance_us(&b, 1000); /* the last millisecond of A's lease */
    ck_assert_int_eq(wfm_host_load(b.host, id, &e, &err), WF_E_LOCKED);
    wf_error_clear(&err);
    advance_us(&b, 1000);
    advance_us(&a, 2000);
    ck_assert_int_eq(wfm_host_load(b.host, id, &e, &err), WF_OK); /* taken over */
    ck_assert_str_eq(get_row(b.store).owner, "other-host");
    ck_assert_int_eq(wfm_host_persist(a.host, d, false, &err), WF_E_LOCKED);
    wf_error_clear(&err);
    wf_value v = int_value(21);
    ck_assert_int_eq(wfm_host_resume(b.host, e, "approve", &v, &err), WF_OK);
    wf_value_release(&v);
    ck_assert_int_eq(wfm_host_run(b.host, e, &err), WF_OK);
    ck_assert_str_eq(get_row(b.store).status, "Closed");
    wfm_dinst_close(e);
    wfm_dinst_close(d);
    fx_close_host(&b);
    fx_fini(&a);
}
END_TEST

/* The background thread renews the lease of a loaded instance: with a 300 ms lease, after
 * 200 ms (virtual) the thread has renewed it, so at 400 ms another host still finds it
 * locked. The test waits for the renewal to show in the row; nothing is timed. */
START_TEST(lease_renewed_while_loaded)
{
    fixture a, b;
    memset(&a, 0, sizeof a);
    snprintf(a.dir, sizeof a.dir, "%s", wf_test_tmpdir());
    snprintf(a.store_path, sizeof a.store_path, "%s/d.db", a.dir);
    a.clock_us = 1000000;
    fx_open_store(&a, "renewing-host", 300);
    wfm_host_opts keep = WFM_HOST_OPTS_INIT;
    keep.time_to_persist_ms = 0;
    keep.time_to_unload_ms = WFM_HOST_NEVER;
    fx_host(&a, &keep);
    /* fx_host turns the thread off for the other tests: start a host with it on */
    wfm_host_destroy(a.host);
    keep.renew_ms = 5;
    keep.clock = fake_clock;
    keep.clock_ud = &a;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_host_create(a.rt, a.store, &keep, &a.host, &err), WF_OK);
    wfm_dinst *d = start(&a, DATA "approve.xaml");
    ck_assert(wfm_dinst_loaded(d));
    ck_assert_int_eq(get_row(a.store).lock_expires_ms, 1000 + 300);
    advance_us(&a, 200 * 1000);
    for (int i = 0; i < 10000 && get_row(a.store).lock_expires_ms != 1200 + 300; i++)
        usleep(1000); /* until the thread's next round */
    ck_assert_int_eq(get_row(a.store).lock_expires_ms, 1200 + 300);
    memset(&b, 0, sizeof b);
    snprintf(b.store_path, sizeof b.store_path, "%s", a.store_path);
    b.clock_us = a.clock_us + 200 * 1000; /* past the first lease, within the renewed one */
    fx_open_store(&b, "other-host", 0);
    fx_host(&b, NULL);
    wfm_dinst *e = NULL;
    ck_assert_int_eq(wfm_host_load(b.host, wfm_dinst_id(d), &e, &err), WF_E_LOCKED);
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_host_persist(a.host, d, true, &err), WF_OK); /* unload: released */
    ck_assert_int_eq(wfm_host_load(b.host, wfm_dinst_id(d), &e, &err), WF_OK);
    wfm_dinst_close(e);
    wfm_dinst_close(d);
    fx_close_host(&b);
    fx_fini(&a);
}
END_TEST

/* ---- the CLI ---------------------------------------------------------------------------- */
typedef struct cli_out {
    int rc;
    char *out, *err;
} cli_out;

/* Start BUILD/bin/wfbridge args in dir's cli.out / cli.err; cli_wait collects it. */
static pid_t cli_spawn(const char *dir, const char *const *args)
{
    char out_path[512], err_path[512], exe[512];
    snprintf(out_path, sizeof out_path, "%s/cli.out", dir);
    snprintf(err_path, sizeof err_path, "%s/cli.err", dir);
    snprintf(exe, sizeof exe, "%s/bin/wfbridge", wf_test_build_dir());
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0)
            _exit(126);
        dup2(o, 1);
        dup2(e, 2);
        const char *argv[16] = {exe};
        for (size_t i = 0; args[i] && i < 14; i++)
            argv[i + 1] = args[i];
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static cli_out cli_wait(const char *dir, pid_t pid)
{
    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/cli.out", dir);
    snprintf(err_path, sizeof err_path, "%s/cli.err", dir);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    cli_out r = {WIFEXITED(status) ? WEXITSTATUS(status) : -1, NULL, NULL};
    size_t len;
    r.out = wf_test_read_file(out_path, &len);
    r.err = wf_test_read_file(err_path, &len);
    ck_assert_ptr_nonnull(r.out);
    ck_assert_ptr_nonnull(r.err);
    return r;
}

static cli_out cli(const char *dir, const char *const *args)
{
    return cli_wait(dir, cli_spawn(dir, args));
}



static void cli_free(cli_out *r)
{
    wf_free(r->out);
    wf_free(r->err);
}

/* `wfbridge ARGS` in dir exits 2 with `message` on stderr (a usage or input error). */
static void cli_refused(const char *dir, const char *const *args, const char *message)
{
    cli_out r = cli(dir, args);
    ck_assert_msg(r.rc == 2, "%s: rc %d: %s", args[0], r.rc, r.err);
    ck_assert_msg(strstr(r.err, message), "%s: stderr lacks '%s': %s", args[0], message, r.err);
    cli_free(&r);
}

START_TEST(cli_end_to_end)
{
    char dir[256], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/cli.db", dir);
    const char *run[] = {"run",   DATA "approve.xaml", "--store",   store, "--durability", "normal",
                         "--arg", "Who=ann",           "--promote", "Who", "--json",       NULL};
    cli_out r = cli(dir, run);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "hello ann\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"status\": \"Idle\""));
    ck_assert_ptr_nonnull(strstr(r.out, "\"approve\""));
    const char *p = strstr(r.out, "\"id\": \"");
    ck_assert_ptr_nonnull(p);
    char id[33];
    snprintf(id, sizeof id, "%.32s", p + strlen("\"id\": \""));
    cli_free(&r);

    const char *list[] = {"instances", "--store", store, "--where", "Who=ann", "--json", NULL};
    r = cli(dir, list);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, id));
    cli_free(&r);

    const char *inspect[] = {"inspect", "--store", store, id, NULL};
    r = cli(dir, inspect);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"status\": \"Idle\""));
    ck_assert_ptr_nonnull(strstr(r.out, "\"owner\": null"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"state\": {"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"promoted\": {\"Who\": \"ann\"}"));
    cli_free(&r);

    /* bad --bookmark syntax, unknown bookmark */
    const char *bad_syntax[] = {"resume", "--store", store, id, "--bookmark", "approve", NULL};
    cli_refused(dir, bad_syntax, "NAME=VALUE");
    const char *bad_name[] = {"resume", "--store", store, id, "--bookmark", "nope=1", NULL};
    cli_refused(dir, bad_name, "nope");

    /* locked by another host */
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = store;
    so.owner = "holder";
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&so, &s, &err), WF_OK);
    ck_assert_int_eq(wfm_store_lock(s, id, &err), WF_OK);
    const char *resume[] = {"resume",     "--store",    store,    id,
                            "--bookmark", "approve=21", "--json", NULL};
    /* without a bookmark to queue, a locked instance is an error */
    const char *just_run[] = {"resume", "--store", store, id, NULL};
    cli_refused(dir, just_run, "locked");
    /* with one, the resumption is queued for the host that holds it */
    r = cli(dir, resume);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"status\": \"Queued\""));
    ck_assert_ptr_nonnull(strstr(r.out, id));
    cli_free(&r);
    const char *queue_text[] = {"resume", "--store", store, id, "--bookmark", "nope=1", NULL};
    r = cli(dir, queue_text);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "resumption of bookmark 'nope' queued (#2)"));
    cli_free(&r);
    const char *busy_host[] = {"host", "--store", store, "--once", NULL};
    r = cli(dir, busy_host);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_null(strstr(r.out, id)); /* still held by "holder" */
    cli_free(&r);
    ck_assert_int_eq(wfm_store_release(s, id, &err), WF_OK);
    wfm_store_close(s);

    /* the next host applies the queue in order: approve=21, then 'nope' (never created)
     * is dropped when the instance completes */
    r = cli(dir, busy_host);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "total 42\n"));
    char closed_line[64];
    snprintf(closed_line, sizeof closed_line, "%s Closed\n", id);
    ck_assert_ptr_nonnull(strstr(r.out, closed_line));
    cli_free(&r);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(store, &db), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(
        sqlite3_prepare_v2(db, "SELECT count(*) FROM pending_resumes", -1, &st, NULL),
        SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_int_eq(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    /* still promoted after the resume (which named no --promote) */
    const char *closed[] = {"instances", "--store", store,    "--where", "Who=ann",
                            "--status",  "Closed",  "--json", NULL};
    r = cli(dir, closed);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, id));
    cli_free(&r);

    /* completed: resuming again is an error */
    cli_refused(dir, resume, "completed");
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(cli_host_runs_due_timer)
{
    char dir[256], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/host.db", dir);
    const char *run[] = {"run", DATA "delay.xaml", "--store", store, "--json", NULL};
    cli_out r = cli(dir, run);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"status\": \"Idle\""));
    cli_free(&r);
    usleep(3000); /* the 1 ms timer is due */
    const char *host[] = {"host", "--store", store, "--once", NULL};
    r = cli(dir, host);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, " Closed\n"));
    cli_free(&r);
    const char *list[] = {"instances", "--store", store, "--status", "Closed", "--json", NULL};
    r = cli(dir, list);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"Closed\""));
    cli_free(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A durable run stopped by --max-steps is saved Terminated (the limit ended it): no Created
 * row is left for a host to pick up and spin on again. */
START_TEST(cli_run_stopped_by_max_steps_is_saved_terminated)
{
    char dir[256], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/limit.db", dir);
    const char *run[] = {"run", DATA "endless.xaml", "--store", store, "--max-steps", "500", NULL};
    cli_out r = cli(dir, run);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "endless.xaml:"));
    ck_assert_ptr_nonnull(strstr(r.err, "ran 500 work items without waiting"));
    cli_free(&r);
    const char *list[] = {"instances", "--store", store, "--json", NULL};
    r = cli(dir, list);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"status\": \"Terminated\""));
    ck_assert_ptr_null(strstr(r.out, "\"Created\""));
    cli_free(&r);
    const char *host[] = {"host", "--store", store, "--once", NULL};
    r = cli(dir, host);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, ""); /* nothing to run */
    cli_free(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* ---- bad input -------------------------------------------------------------------------- */
START_TEST(cli_bad_input)
{
    char dir[256], store[512], missing[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/bad.db", dir);
    snprintf(missing, sizeof missing, "%s/missing.db", dir);
    const char *run[] = {"run", DATA "approve.xaml", "--store", store, NULL};
    cli_out r = cli(dir, run);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "persisted"));
    cli_free(&r);
    const char *unknown[] = {"resume",     "--store",   store, "0123456789abcdef0123456789abcdef",
                             "--bookmark", "approve=1", NULL};
    cli_refused(dir, unknown, "no instance '0123456789abcdef0123456789abcdef'");
    const char *inspect_unknown[] = {"inspect", "--store", store, "feed", NULL};
    cli_refused(dir, inspect_unknown, "no instance 'feed'");
    const char *no_store[] = {"resume", "--store", missing, "feed", NULL};
    r = cli(dir, no_store);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "no instance store"));
    ck_assert_int_ne(access(missing, F_OK), 0); /* not created */
    cli_free(&r);
    const char *bad_dur[] = {"run", DATA "approve.xaml", "--store", store, "--durability", "max",
                             NULL};
    cli_refused(dir, bad_dur, "--durability needs full or normal");
    const char *no_id[] = {"resume", "--store", store, NULL};
    cli_refused(dir, no_id, "no instance id");
    const char *with_resume[] = {"run",      DATA "approve.xaml", "--store", store,
                                 "--resume", "approve=1",         NULL};
    r = cli(dir, with_resume);
    ck_assert_int_eq(r.rc, 2);
    cli_free(&r);
    const char *promote_only[] = {"run", DATA "approve.xaml", "--promote", "Who", NULL};
    cli_refused(dir, promote_only, "--promote needs --store");
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Loading an unknown id, a completed instance, or one never saved: clear errors, no lease. */
START_TEST(load_unknown_completed_unsaved)
{
    fixture f;
    fx_init(&f, NULL);
    wf_error err = WF_ERROR_INIT;
    wfm_dinst *d = NULL;
    ck_assert_int_eq(wfm_host_load(f.host, "0123456789abcdef0123456789abcdef", &d, &err),
                     WF_E_NOTFOUND);
    ck_assert_ptr_null(d);
    WF_ASSERT_ERROR(err, WF_E_NOTFOUND, 0, 0, "no instance '0123456789abcdef0123456789abcdef'");
    wf_error_clear(&err);
    /* created but never run: not in the store (its row comes with its first save) */
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_load(f.rt, DATA "delay.xaml", &def, NULL, &err), WF_OK);
    wfm_dinst *fresh = NULL;
    ck_assert_int_eq(wfm_host_new(f.host, def, &fresh, &err), WF_OK);
    wfm_definition_release(def);
    ck_assert_int_eq(wfm_host_load(f.host, wfm_dinst_id(fresh), &d, &err), WF_E_NOTFOUND);
    ck_assert_ptr_null(d);
    WF_ASSERT_ERROR(err, WF_E_NOTFOUND, 0, 0, "no instance");
    wf_error_clear(&err);
    wfm_dinst_close(fresh);
    /* completed */
    wfm_dinst *done = start(&f, DATA "persist_in_tx.xaml");
    ck_assert_int_eq(wfm_host_load(f.host, wfm_dinst_id(done), &d, &err), WF_E_STATE);
    ck_assert_ptr_null(d);
    WF_ASSERT_ERROR(err, WF_E_STATE, 0, 0, "has completed (Terminated)");
    wfm_dinst_close(done);
    fx_fini(&f);
}
END_TEST

/* A corrupt state blob: a clear WF_E_CORRUPT, no lease taken, nothing in the row changed. */
START_TEST(corrupt_state_blob)
{
    fixture f;
    fx_init(&f, NULL);
    wfm_dinst *d = start(&f, DATA "approve.xaml");
    char id[33];
    snprintf(id, sizeof id, "%s", wfm_dinst_id(d));
    wfm_dinst_close(d);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(f.store_path, &db), SQLITE_OK);
    char sql[256];
    snprintf(sql, sizeof sql,
             "UPDATE instances SET state = substr(state, 1, length(state) / 2) WHERE id = '%s'",
             id);
    ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    row_copy before = get_row(f.store);
    void *blob_before = NULL;
    size_t len_before = 0;
    char status[32];
    uint64_t hash;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(
        wfm_store_load_state(f.store, id, &blob_before, &len_before, status, &hash, &err), WF_OK);
    d = NULL;
    ck_assert_int_eq(wfm_host_load(f.host, id, &d, &err), WF_E_CORRUPT);
    ck_assert_ptr_null(d);
    WF_ASSERT_ERROR(err, WF_E_CORRUPT, 0, 0, id);
    wf_error_clear(&err);
    row_copy after = get_row(f.store);
    ck_assert_str_eq(after.owner, "");
    ck_assert_str_eq(after.status, before.status);
    ck_assert_int_eq(after.updated_ms, before.updated_ms);
    void *blob_after = NULL;
    size_t len_after = 0;
    ck_assert_int_eq(
        wfm_store_load_state(f.store, id, &blob_after, &len_after, status, &hash, &err), WF_OK);
    ck_assert_uint_eq(len_after, len_before);
    ck_assert_int_eq(memcmp(blob_after, blob_before, len_before), 0);
    wf_free(blob_before);
    wf_free(blob_after);
    /* inspect reports it too */
    const char *inspect[] = {"inspect", "--store", f.store_path, id, NULL};
    cli_out r = cli(f.dir, inspect);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, id));
    cli_free(&r);
    fx_fini(&f);
}
END_TEST

/* The saved state of the store's only instance (wf_free it). */
static void *saved_blob(fixture *f, const char *id, size_t *len)
{
    void *blob = NULL;
    char status[32];
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_load_state(f->store, id, &blob, len, status, NULL, &err), WF_OK);
    ck_assert_ptr_nonnull(blob);
    return blob;
}

static void assert_row_and_state_unchanged(fixture *f, const char *id, const row_copy *before,
                                           const void *blob, size_t len)
{
    row_copy after = get_row(f->store);
    ck_assert_str_eq(after.status, before->status);
    ck_assert_str_eq(after.bookmarks, before->bookmarks);
    ck_assert_str_eq(after.owner, "");
    ck_assert_int_eq(after.updated_ms, before->updated_ms);
    size_t now_len = 0;
    void *now = saved_blob(f, id, &now_len);
    ck_assert_uint_eq(now_len, len);
    ck_assert_int_eq(memcmp(now, blob, len), 0);
    wf_free(now);
}

/* A resumption value that does not convert to the bookmark's type (WaitForEvent<Int32>
 * "approve" given "abc") is refused before it reaches the instance: WF_E_TYPE naming the
 * bookmark and the type, the instance not faulted, its row and state unchanged; the CLI
 * exits 2 the same way; a right value afterwards completes it. */
START_TEST(resume_with_wrong_type_changes_nothing)
{
    fixture f;
    fx_init(&f, NULL);
    char id[33];
    start_unloaded(&f, DATA "approve.xaml", id);
    row_copy before = get_row(f.store);
    size_t len = 0;
    void *blob = saved_blob(&f, id, &len);
    wfm_dinst *d = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_host_load(f.host, id, &d, &err), WF_OK);
    wf_value abc;
    ck_assert_int_eq(wf_value_cstring("abc", &abc), WF_OK);
    ck_assert_int_eq(wfm_host_resume(f.host, d, "approve", &abc, &err), WF_E_TYPE);
    wf_value_release(&abc);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 0, 0, "bookmark 'approve'");
    ck_assert_ptr_nonnull(strstr(err.message, "Int32"));
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_host_resume(f.host, d, "approve", NULL, &err), WF_E_TYPE);
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_IDLE);
    wfm_dinst_close(d); /* as the CLI does after an error: no save */
    assert_row_and_state_unchanged(&f, id, &before, blob, len);

    const char *cli_args[] = {"resume", "--store", f.store_path, id, "--bookmark", "approve=abc",
                              NULL};
    cli_out r = cli(f.dir, cli_args);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "bookmark 'approve'"));
    ck_assert_ptr_nonnull(strstr(r.err, "Int32"));
    cli_free(&r);
    assert_row_and_state_unchanged(&f, id, &before, blob, len);
    wf_free(blob);

    ck_assert_int_eq(wfm_host_load(f.host, id, &d, &err), WF_OK);
    wf_value v = int_value(21);
    ck_assert_int_eq(wfm_host_resume(f.host, d, "approve", &v, &err), WF_OK);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(wfm_instance_output(wfm_dinst_instance(d), "Total")->u.i32, 42);
    wfm_dinst_close(d);
    fx_fini(&f);
}
END_TEST

/* A queued resumption of the wrong type is dropped, not applied: the instance waits on. */
START_TEST(queued_resume_with_wrong_type_is_dropped)
{
    fixture f;
    fx_init(&f, NULL);
    char id[33];
    start_unloaded(&f, DATA "approve.xaml", id);
    wfm_dinst *d = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_enqueue_resume(f.store, id, "approve", "\"abc\"", NULL, &err),
                     WF_OK);
    ck_assert_int_eq(wfm_host_load(f.host, id, &d, &err), WF_OK);
    ck_assert_int_eq(wfm_host_run(f.host, d, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_IDLE);
    wfm_dinst_close(d);
    row_copy r = get_row(f.store);
    ck_assert_str_eq(r.status, "Idle");
    ck_assert_str_eq(r.bookmarks, "approve");
    ck_assert_int_eq(queued_count(f.store, id), 0);
    fx_fini(&f);
}
END_TEST

/* The strict opens through the CLI: inspect, instances and host on a typo'd path or an empty
 * file, and every verb on a store with a damaged id index, exit 2 and write nothing. */
START_TEST(cli_refuses_missing_empty_and_damaged_stores)
{
    char dir[256], typo[512], empty[512], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(typo, sizeof typo, "%s/typo.db", dir);
    snprintf(empty, sizeof empty, "%s/empty.db", dir);
    snprintf(store, sizeof store, "%s/damaged.db", dir);
    FILE *f = fopen(empty, "wb");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    const char *const *verbs[] = {
        (const char *[]){"instances", "--store", NULL, NULL},
        (const char *[]){"inspect", "--store", NULL, "0123456789abcdef0123456789abcdef", NULL},
        (const char *[]){"host", "--store", NULL, "--once", NULL},
        (const char *[]){"resume", "--store", NULL, "0123456789abcdef0123456789abcdef", NULL},
    };
    for (size_t v = 0; v < 4; v++) {
        const char **args = (const char **)verbs[v];
        args[2] = typo;
        cli_out r = cli(dir, args);
        ck_assert_int_eq(r.rc, 2);
        ck_assert_msg(strstr(r.err, "no instance store") != NULL, "%s: %s", args[0], r.err);
        cli_free(&r);
        ck_assert_int_ne(access(typo, F_OK), 0);
        args[2] = empty;
        r = cli(dir, args);
        ck_assert_int_eq(r.rc, 2);
        ck_assert_msg(strstr(r.err, "empty file") != NULL, "%s: %s", args[0], r.err);
        cli_free(&r);
        struct stat sb;
        ck_assert_int_eq(stat(empty, &sb), 0);
        ck_assert_int_eq(sb.st_size, 0);
    }
    const char *run[] = {"run", DATA "approve.xaml", "--store", store, NULL};
    cli_out r = cli(dir, run);
    ck_assert_int_eq(r.rc, 0);
    cli_free(&r);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(store, &db), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db,
                                        "SELECT rootpage, (SELECT page_size FROM pragma_page_size)"
                                        " FROM sqlite_master"
                                        " WHERE name = 'sqlite_autoindex_instances_1'",
                                        -1, &st, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    long page = sqlite3_column_int(st, 0), page_size = sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    sqlite3_close(db);
    f = fopen(store, "r+b");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, (page - 1) * page_size + 8, SEEK_SET), 0);
    for (long i = 8; i < page_size; i++)
        fputc(0x5a, f);
    fclose(f);
    size_t before_len = 0, after_len = 0;
    char *before = wf_test_read_file(store, &before_len);
    for (size_t v = 0; v < 5; v++) {
        const char **args = v < 4 ? (const char **)verbs[v] : run;
        if (v < 4)
            args[2] = store;
        r = cli(dir, args);
        ck_assert_int_eq(r.rc, 2);
        ck_assert_msg(strstr(r.err, "integrity check") != NULL, "%s: %s", args[0], r.err);
        cli_free(&r);
        char *after = wf_test_read_file(store, &after_len);
        ck_assert_uint_eq(after_len, before_len);
        ck_assert_int_eq(memcmp(after, before, before_len), 0);
        wf_free(after);
    }
    wf_free(before);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------- */
typedef struct nomem_op {
    fixture *f;
    const char *id;
} nomem_op;

/* Load, resume and run to completion: every allocation failure is WF_E_NOMEM, nothing leaks,
 * and the store row stays loadable (the lease is given back). */
static wf_status load_and_finish(void *ud)
{
    nomem_op *op = ud;
    wf_error err = WF_ERROR_INIT;
    wfm_dinst *d = NULL;
    wf_status st = wfm_host_load(op->f->host, op->id, &d, &err);
    if (st != WF_OK)
        return st;
    wf_value v = wf_int32(21);
    st = wfm_host_resume(op->f->host, d, "approve", &v, &err);
    if (st == WF_OK)
        st = wfm_host_run(op->f->host, d, &err);
    if (st == WF_OK && wfm_instance_state_get(wfm_dinst_instance(d)) != WFM_INSTANCE_CLOSED)
        st = WF_E_STATE;
    wfm_dinst_close(d);
    return st;
}

START_TEST(nomem_load)
{
    fixture f;
    fx_init(&f, NULL);
    wfm_dinst *d = start(&f, DATA "approve.xaml");
    nomem_op op = {&f, wfm_dinst_id(d)};
    unsigned runs = wf_test_nomem_loop(load_and_finish, &op, 10000);
    ck_assert_uint_gt(runs, 0);
    row_copy r = get_row(f.store);
    ck_assert_str_eq(r.owner, "");
    ck_assert_str_eq(r.status, "Closed");
    wfm_dinst_close(d);
    fx_fini(&f);
}
END_TEST

/* Fail each allocation of wfm_host_load in turn (on a fresh host, so the definition is
 * loaded again each time): every refused run returns WF_E_NOMEM and leaves the row
 * unleased, until a run sees no refused allocation and succeeds. */
START_TEST(nomem_load_gives_the_lease_back)
{
    fixture f;
    fx_init(&f, NULL);
    char id[33];
    start_unloaded(&f, DATA "approve.xaml", id);
    unsigned refused_runs = 0;
    for (unsigned n = 1;; n++) {
        fx_close_host(&f);
        fx_open_store(&f, "test-host", 0);
        fx_host(&f, NULL);
        wf_error err = WF_ERROR_INIT;
        wfm_dinst *e = NULL;
        wf_alloc_fail_after(n);
        wf_status st = wfm_host_load(f.host, id, &e, &err);
        unsigned long refused = wf_alloc_fail_count();
        wf_alloc_fail_after(0);
        if (refused == 0) {
            ck_assert_msg(st == WF_OK, "%s", err.message);
            ck_assert_str_eq(get_row(f.store).owner, "test-host");
            wfm_dinst_close(e);
            break;
        }
        ck_assert_msg(st == WF_E_NOMEM, "allocation %u: status %d: %s", n, (int)st, err.message);
        ck_assert_ptr_null(e);
        ck_assert_msg(get_row(f.store).owner[0] == '\0', "allocation %u left the row leased", n);
        refused_runs++;
    }
    ck_assert_uint_gt(refused_runs, 10);
    ck_assert_str_eq(get_row(f.store).owner, "");
    fx_fini(&f);
}
END_TEST

/* The CLI's life of an instance on `store`, named by --store for run and by $WFBRIDGE_STORE
 * for the other verbs: run to the bookmark, list, resume to completion, inspect. */
static void cli_lifecycle_on(const char *dir, const char *store)
{
    const char *run[] = {"run", DATA "approve.xaml", "--store", store, "--arg", "Who=ann",
                         "--json", NULL};
    cli_out r = cli(dir, run);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    const char *p = strstr(r.out, "\"id\": \"");
    ck_assert_ptr_nonnull(p);
    char id[33];
    snprintf(id, sizeof id, "%.32s", p + strlen("\"id\": \""));
    cli_free(&r);
    setenv("WFBRIDGE_STORE", store, 1);
    const char *list[] = {"instances", "--status", "Idle", NULL};
    r = cli(dir, list);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, id));
    cli_free(&r);
    const char *resume[] = {"resume", id, "--bookmark", "approve=21", NULL};
    r = cli(dir, resume);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "total 42\n"));
    cli_free(&r);
    const char *inspect[] = {"inspect", id, NULL};
    r = cli(dir, inspect);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"status\": \"Closed\""));
    cli_free(&r);
    unsetenv("WFBRIDGE_STORE");
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* `wfbridge start` makes N runnable instances without running them; a host drains them. */
static void cli_start_then_host_on(const char *dir, const char *store)
{
    const char *start[] = {"start", DATA "approve.xaml", "--store", store, "--count", "5",
                           "--arg", "Who=bob",           "--json",  NULL};
    cli_out r = cli(dir, start);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "{\"status\": \"Created\", \"count\": 5, \"ids\": [\""));
    ck_assert_ptr_null(strstr(r.out, "hello")); /* not run */
    cli_free(&r);
    const char *created[] = {"instances", "--store", store, "--status", "Created", NULL};
    r = cli(dir, created);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_uint_eq(count_of(r.out, "Created"), 5);
    cli_free(&r);
    const char *host[] = {"host", "--store", store, "--once", NULL};
    r = cli(dir, host);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_uint_eq(count_of(r.out, "hello bob\n"), 5);
    ck_assert_uint_eq(count_of(r.out, " Idle\n"), 5);
    cli_free(&r);
    const char *idle[] = {"instances", "--store", store, "--status", "Idle", NULL};
    r = cli(dir, idle);
    ck_assert_uint_eq(count_of(r.out, "approve"), 5);
    cli_free(&r);
}

START_TEST(cli_start_creates_instances_a_host_runs)
{
    char dir[256], store[1400];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/start.db", dir);
    cli_start_then_host_on(dir, store);
    if (getenv("WFBRIDGE_TEST_PG") && *getenv("WFBRIDGE_TEST_PG")) {
        char schema[64];
        wf_test_pg_schema(store, sizeof store, schema);
        cli_start_then_host_on(dir, store);
        wf_test_pg_drop(schema);
    }
    wf_test_tmpdir_remove(dir);
}
END_TEST

typedef struct idle_count {
    int idle, leased;
} idle_count;

static bool count_idle(void *ud, const wfm_store_row *row)
{
    idle_count *c = ud;
    c->idle += strcmp(row->status, "Idle") == 0;
    c->leased += row->owner != NULL;
    return true;
}

static idle_count idle_rows(const char *store)
{
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = store;
    so.read_only = true;
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    idle_count c = {0, 0};
    ck_assert_msg(wfm_store_open(&so, &s, &err) == WF_OK, "%s", err.message);
    ck_assert_int_eq(wfm_store_query_rows(s, NULL, count_idle, &c, &err), WF_OK);
    wfm_store_close(s);
    return c;
}

/* host --once --json ends with the host's own result object, after one object per instance
 * it ran, and prints it alone when nothing is runnable (docs/formats.md "Output contracts"). */
START_TEST(cli_host_once_json_ends_with_a_summary)
{
    char dir[256], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/summary.db", dir);
    const char *start[] = {"start", DATA "approve.xaml", "--store", store, "--count", "2",
                           "--arg", "Who=eve",           NULL};
    cli_out r = cli(dir, start);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    cli_free(&r);
    const char *host[] = {"host", "--store", store, "--once", "--json", NULL};
    r = cli(dir, host);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_uint_eq(count_of(r.out, "{\"status\": \"Idle\", \"id\": \""), 2);
    const char *last = strrchr(r.out, '{');
    while (last > r.out && last[-1] != '\n')
        last--;
    ck_assert_str_eq(last, "{\"host\": {\"ran\": 2, \"closed\": 0, \"idle\": 2, \"faulted\": 0, "
                           "\"canceled\": 0, \"terminated\": 0, \"executing\": 0, "
                           "\"failed\": 0, \"suspended\": 0}}\n");
    cli_free(&r);
    r = cli(dir, host); /* both wait on their bookmark: nothing to run */
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_str_eq(r.out, "{\"host\": {\"ran\": 0, \"closed\": 0, \"idle\": 0, \"faulted\": 0, "
                            "\"canceled\": 0, \"terminated\": 0, \"executing\": 0, "
                            "\"failed\": 0, \"suspended\": 0}}\n");
    cli_free(&r);
    const char *plain[] = {"host", "--store", store, "--once", NULL};
    r = cli(dir, plain);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, ""); /* without --json: no summary */
    cli_free(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A long-running host with several workers drains what `start` made, keeps running, and
 * stops on SIGTERM with exit 0 and no lease left behind. */
START_TEST(cli_host_workers_and_sigterm)
{
    char dir[256], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/workers.db", dir);
    const char *start[] = {"start", DATA "approve.xaml", "--store", store, "--count", "6",
                           "--arg", "Who=eve",           NULL};
    cli_out r = cli(dir, start);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    cli_free(&r);
    const char *host[] = {"host", "--store", store, "--workers", "3", NULL};
    pid_t pid = cli_spawn(dir, host);
    idle_count c = {0, 0};
    for (int i = 0; i < 20000 && (c = idle_rows(store)).idle < 6; i++)
        usleep(1000); /* until the host ran all six */
    ck_assert_int_eq(c.idle, 6);
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    r = cli_wait(dir, pid);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_uint_eq(count_of(r.out, " Idle\n"), 6);
    ck_assert_uint_eq(count_of(r.out, "hello eve\n"), 6);
    cli_free(&r);
    ck_assert_int_eq(idle_rows(store).leased, 0);
    const char *bad[] = {"host", "--store", store, "--workers", "0", NULL};
    cli_refused(dir, bad, "wfbridge host: error: --workers needs a whole number from 1 to 64");
    const char *bad_poll[] = {"host", "--store", store, "--poll", "0", NULL};
    cli_refused(dir, bad_poll, "wfbridge host: error: --poll needs a whole number from 1 to 3600000");
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Bad counts and arguments are refused before a store is created or written. */
START_TEST(cli_start_bad_input)
{
    char dir[256], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/never.db", dir);
    const char *zero[] = {"start", DATA "approve.xaml", "--store", store, "--count", "0", NULL};
    cli_refused(dir, zero, "wfbridge start: error: --count needs a whole number from 1 to 10000000");
    const char *arg[] = {"start", DATA "approve.xaml", "--store", store, "--arg", "Nope=1", NULL};
    cli_refused(dir, arg, "approve.xaml: error: --arg Nope: the workflow has no argument 'Nope'");
    const char *none[] = {"start", "--store", store, NULL};
    cli_refused(dir, none, "no workflow file");
    ck_assert_int_ne(access(store, F_OK), 0);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A store named sqlite:FILE, and (when WFBRIDGE_TEST_PG is set) a PostgreSQL one, through
 * every verb; $WFBRIDGE_STORE stands in for --store. */
START_TEST(cli_store_uris_and_environment)
{
    char dir[256], store[1400];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "sqlite:%s/uri.db", dir);
    cli_lifecycle_on(dir, store);
    snprintf(store, sizeof store, "%s/uri.db", dir);
    ck_assert_int_eq(access(store, F_OK), 0); /* the file the URI named */
    if (getenv("WFBRIDGE_TEST_PG") && *getenv("WFBRIDGE_TEST_PG")) {
        char schema[64];
        wf_test_pg_schema(store, sizeof store, schema);
        cli_lifecycle_on(dir, store);
        wf_test_pg_drop(schema);
    }
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* ---- creation faults and poisoned instances ------------------------------------------------ */

/* `wfbridge ARGS` with files limited to `fsize` bytes (a write past it fails with EFBIG, as
 * on a full disk; SIGXFSZ ignored), in dir. */
static cli_out cli_small_disk(const char *dir, const char *const *args, rlim_t fsize)
{
    char out_path[512], err_path[512], exe[512];
    snprintf(out_path, sizeof out_path, "%s/cli.out", dir);
    snprintf(err_path, sizeof err_path, "%s/cli.err", dir);
    snprintf(exe, sizeof exe, "%s/bin/wfbridge", wf_test_build_dir());
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        struct rlimit lim = {fsize, fsize};
        if (o < 0 || e < 0 || setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(126);
        signal(SIGXFSZ, SIG_IGN);
        dup2(o, 1);
        dup2(e, 2);
        const char *argv[16] = {exe};
        for (size_t i = 0; args[i] && i < 14; i++)
            argv[i + 1] = args[i];
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    return cli_wait(dir, pid);
}

static int64_t store_int(const char *store, const char *sql)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open_v2(store, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* `start --count 2000` on a disk that fills up after a few instances: exit 2, and every
 * instance that exists has its state and is named in the --json line (there used to be rows
 * committed without a state, and no ids printed). */
START_TEST(cli_start_on_a_full_disk_names_every_instance)
{
    char dir[256], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/full.db", dir);
    const char *start[] = {"start", DATA "approve.xaml", "--store", store, "--count", "2000",
                           "--arg", "Who=eve",           "--json",  NULL};
    cli_out r = cli_small_disk(dir, start, 128 * 1024);
    ck_assert_msg(r.rc == 2, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "full.db: error:"));
    json_t *line = json_loads(r.out, 0, NULL);
    ck_assert_msg(line != NULL, "no JSON line: %s", r.out);
    ck_assert_str_eq(json_string_value(json_object_get(line, "status")), "Failed");
    json_t *ids = json_object_get(line, "ids");
    size_t count = json_array_size(ids);
    ck_assert_int_eq(json_integer_value(json_object_get(line, "count")), (json_int_t)count);
    ck_assert_uint_gt(count, 0);
    ck_assert_uint_lt(count, 2000);
    ck_assert_int_eq(store_int(store, "SELECT count(*) FROM instances"), (int64_t)count);
    ck_assert_int_eq(store_int(store, "SELECT count(*) FROM instances WHERE state IS NULL"), 0);
    for (size_t i = 0; i < count; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM instances WHERE id = '%s'",
                 json_string_value(json_array_get(ids, i)));
        ck_assert_int_eq(store_int(store, sql), 1);
    }
    json_decref(line);
    cli_free(&r);
    /* and a host runs every one of them */
    const char *host[] = {"host", "--store", store, "--once", NULL};
    r = cli(dir, host);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_uint_eq(count_of(r.out, " Idle\n"), count);
    cli_free(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A new instance is not in the store until its first save, which writes the row and the
 * state in one transaction: closing it unsaved leaves nothing behind. */
START_TEST(new_instance_has_no_row_until_saved)
{
    fixture f;
    fx_init(&f, NULL);
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_load(f.rt, DATA "approve.xaml", &def, NULL, &err), WF_OK);
    wfm_dinst *d = NULL;
    ck_assert_int_eq(wfm_host_new(f.host, def, &d, &err), WF_OK);
    ck_assert_uint_eq(strlen(wfm_dinst_id(d)), 32);
    void *blob = NULL;
    size_t len = 0;
    char status[32];
    ck_assert_int_eq(wfm_store_load_state(f.store, wfm_dinst_id(d), &blob, &len, status, NULL,
                                          &err),
                     WF_E_NOTFOUND);
    wf_error_clear(&err);
    wfm_dinst_close(d);
    ck_assert_int_eq(wfm_host_new(f.host, def, &d, &err), WF_OK);
    ck_assert_int_eq(wfm_host_start(f.host, d, &err), WF_OK);
    ck_assert_int_eq(wfm_store_load_state(f.store, wfm_dinst_id(d), &blob, &len, status, NULL,
                                          &err),
                     WF_OK);
    ck_assert_str_eq(status, "Created");
    ck_assert_ptr_nonnull(blob);
    wf_free(blob);
    wfm_dinst_close(d);
    wfm_definition_release(def);
    fx_fini(&f);
}
END_TEST

/* A row a creator of an older wfbridge left without its state, leased to a process that died:
 * the host suspends it with the reason (it used to skip it forever, silently) and runs the
 * others. */
START_TEST(cli_host_suspends_a_row_without_state)
{
    char dir[256], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/stateless.db", dir);
    const char *start[] = {"start", DATA "approve.xaml", "--store", store, "--arg", "Who=eve",
                           NULL};
    cli_out r = cli(dir, start);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    cli_free(&r);
    char host_name[200], sql[1024];
    gethostname(host_name, sizeof host_name);
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    snprintf(sql, sizeof sql,
             "INSERT INTO instances(id, definition, status, created_ms, updated_ms, owner,"
             " lock_expires_ms) SELECT '00000000000000000000000000000abc', definition,"
             " 'Created', 1, 1, '%s:%d:0badf00d', 9000000000000 FROM instances LIMIT 1",
             host_name, (int)dead);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(store, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    const char *host[] = {"host", "--store", store, "--once", NULL};
    r = cli(dir, host);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "00000000000000000000000000000abc Suspended\n"));
    ck_assert_ptr_nonnull(strstr(r.out, " Idle\n"));
    ck_assert_ptr_nonnull(strstr(r.err, "warning: instance 00000000000000000000000000000abc "
                                        "suspended: it has no saved state"));
    cli_free(&r);
    const char *list[] = {"instances", "--store", store, "--status", "Suspended", "--json", NULL};
    r = cli(dir, list);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"reason\": \"it has no saved state"));
    cli_free(&r);
    r = cli(dir, host); /* reported once: no host takes it again */
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_str_eq(r.out, "");
    cli_free(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* One poisoned instance (its native call kills the process) among good ones: each host it
 * kills takes the others down too; after 3 such runs it runs alone in a child process,
 * which it kills as well, and is quarantined (Suspended, with the reason, in `instances` and
 * `inspect`); the good ones complete; `resume` takes it up by hand once it is cured. */
START_TEST(cli_host_quarantines_a_poisoned_instance)
{
    char dir[256], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/poison.db", dir);
    const char *lib = wf_test_lib_dir();
    const char *bad[] = {"start", DATA "poison.xaml", "--store",    store, "--arg",
                         "Tag=bad", "--lib-path",     lib,          NULL};
    cli_out r = cli(dir, bad);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    char id[33];
    snprintf(id, sizeof id, "%.32s", r.out);
    cli_free(&r);
    const char *good[] = {"start",    DATA "poison.xaml", "--store", store, "--arg", "Tag=good",
                          "--count",  "4",                "--lib-path", lib, NULL};
    r = cli(dir, good);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    cli_free(&r);
    setenv("WFD_POISON", "bad", 1);
    const char *host[] = {"host",      "--store", store, "--once",
                          "--workers", "1", "--json", "--lib-path", lib, NULL};
    for (int i = 0; i < 3; i++) { /* the poisoned one runs first and kills every host */
        r = cli(dir, host);
        ck_assert_msg(r.rc == -1, "run %d: rc %d: %s", i, r.rc, r.err);
        cli_free(&r);
    }
    r = cli(dir, host);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_uint_eq(count_of(r.out, "{\"status\": \"Closed\""), 4);
    ck_assert_uint_eq(count_of(r.out, "{\"status\": \"Suspended\""), 1);
    ck_assert_ptr_nonnull(strstr(r.out, "\"suspended\": 1}}"));
    ck_assert_ptr_nonnull(strstr(r.err, "quarantined: its last 3 runs never ended"));
    cli_free(&r);
    r = cli(dir, host); /* nothing left to run: the quarantined one is not taken again */
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "{\"host\": {\"ran\": 0,"));
    cli_free(&r);
    const char *inspect[] = {"inspect", "--store", store, id, NULL};
    r = cli(dir, inspect);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"status\": \"Suspended\""));
    ck_assert_ptr_nonnull(strstr(r.out, "\"reason\": \"quarantined: its last 3 runs"));
    cli_free(&r);
    unsetenv("WFD_POISON");
    const char *resume[] = {"resume", "--store", store, id, "--json", "--lib-path", lib, NULL};
    r = cli(dir, resume);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"status\": \"Closed\""));
    ck_assert_ptr_nonnull(strstr(r.out, "\"Done\": \"bad\""));
    cli_free(&r);
    const char *list[] = {"instances", "--store", store, "--status", "Closed", NULL};
    r = cli(dir, list);
    ck_assert_uint_eq(count_of(r.out, " Closed "), 5);
    cli_free(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* host --isolate: each instance runs in a child process of its own, so the poisoned one
 * kills only its own run (reported failed, exit 2) and the good ones close in the first
 * pass; its runs are counted, and after --max-attempts it is quarantined as without it. */
START_TEST(cli_host_isolate_confines_a_crash_to_its_instance)
{
    char dir[256], store[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(store, sizeof store, "%s/isolate.db", dir);
    const char *lib = wf_test_lib_dir();
    const char *bad[] = {"start", DATA "poison.xaml", "--store",    store, "--arg",
                         "Tag=bad", "--lib-path",     lib,          NULL};
    cli_out r = cli(dir, bad);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    cli_free(&r);
    const char *good[] = {"start",    DATA "poison.xaml", "--store", store, "--arg", "Tag=good",
                          "--count",  "3",                "--lib-path", lib, NULL};
    r = cli(dir, good);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    cli_free(&r);
    setenv("WFD_POISON", "bad", 1);
    const char *host[] = {"host",         "--store", store, "--once",     "--isolate",
                          "--max-attempts", "2",     "--json", "--lib-path", lib, NULL};
    r = cli(dir, host);
    ck_assert_msg(r.rc == 2, "rc %d: %s", r.rc, r.err); /* the host itself survives */
    ck_assert_uint_eq(count_of(r.out, "{\"status\": \"Closed\""), 3);
    ck_assert_ptr_nonnull(strstr(r.out, "\"suspended\": 0}}"));
    ck_assert_ptr_nonnull(strstr(r.err, "its process was killed by signal 9"));
    cli_free(&r);
    bool quarantined = false;
    for (int pass = 0; pass < 3 && !quarantined; pass++) { /* counted until over the limit */
        r = cli(dir, host);
        ck_assert_msg(r.rc == 0 || r.rc == 2, "rc %d: %s", r.rc, r.err);
        quarantined = strstr(r.out, "\"suspended\": 1}}") != NULL;
        cli_free(&r);
    }
    ck_assert(quarantined);
    const char *list[] = {"instances", "--store", store, "--status", "Suspended", NULL};
    r = cli(dir, list);
    ck_assert_uint_eq(count_of(r.out, " Suspended "), 1);
    cli_free(&r);
    unsetenv("WFD_POISON");
    wf_test_tmpdir_remove(dir);
}
END_TEST

Suite *modern_durable_suite(void)
{
    Suite *s = suite_create("modern_durable");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, persist_activity_and_idle_unload);
    tcase_add_test(tc, persist_request_tracks_no_idle);
    tcase_add_test(tc, created_instance_runs_after_death_before_first_persist);
    tcase_add_test(tc, queued_resumes_applied_in_order);
    tcase_add_test(tc, queued_resume_applied_once_while_loaded);
    tcase_add_test(tc, persist_without_host_completes);
    tcase_add_test(tc, persist_parallel_branches);
    tcase_add_test(tc, persist_in_no_persist_zone_faults);
    tcase_add_test(tc, zone_defers_idle_persist);
    tcase_add_test(tc, idle_policy_timed);
    tcase_add_test(tc, idle_policy_persist_keep);
    tcase_add_test(tc, promoted_properties);
    tcase_add_test(tc, resume_in_new_process);
    tcase_add_test(tc, lease_and_takeover);
    tcase_add_test(tc, load_of_an_instance_open_here_is_refused);
    tcase_add_test(tc, host_has_each_of_many_open_instances);
    tcase_add_test(tc, pooled_runs_save_through_the_commit_thread);
    tcase_add_test(tc, pooled_idle_on_a_timer_is_unloaded_off_the_pool);
    tcase_add_test(tc, pooled_end_runs_stops_at_the_next_persist_point);
    tcase_add_test(tc, pooled_run_applies_queued_resumptions);
    tcase_add_test(tc, pooled_run_with_a_lost_lease_ends_locked);
    tcase_add_test(tc, pooled_save_waiting_on_the_store_holds_no_worker);
    tcase_add_test(tc, store_save_async_commits_each_once_and_close_drains);
    tcase_add_test(tc, store_batch_commits_good_saves_beside_failed_ones);
    tcase_add_test(tc, pooled_new_instances_start_once_created);
    tcase_add_test(tc, lease_renewed_while_loaded);
    tcase_add_test(tc, cli_end_to_end);
    tcase_add_test(tc, cli_host_runs_due_timer);
    tcase_add_test(tc, cli_run_stopped_by_max_steps_is_saved_terminated);
    tcase_add_test(tc, cli_store_uris_and_environment);
    tcase_add_test(tc, cli_start_creates_instances_a_host_runs);
    tcase_add_test(tc, cli_host_workers_and_sigterm);
    tcase_add_test(tc, cli_host_once_json_ends_with_a_summary);
    tcase_add_test(tc, new_instance_has_no_row_until_saved);
    tcase_add_test(tc, cli_host_suspends_a_row_without_state);
    tcase_add_test(tc, cli_host_quarantines_a_poisoned_instance);
    tcase_add_test(tc, cli_host_isolate_confines_a_crash_to_its_instance);
    tcase_add_test(tc, cli_start_on_a_full_disk_names_every_instance);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 60);
    tcase_add_test(bad, cli_bad_input);
    tcase_add_test(bad, corrupt_state_blob);
    tcase_add_test(bad, load_unknown_completed_unsaved);
    tcase_add_test(bad, resume_with_wrong_type_changes_nothing);
    tcase_add_test(bad, queued_resume_with_wrong_type_is_dropped);
    tcase_add_test(bad, cli_refuses_missing_empty_and_damaged_stores);
    tcase_add_test(bad, cli_start_bad_input);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 60);
    tcase_add_test(nomem, nomem_load);
    tcase_add_test(nomem, nomem_load_gives_the_lease_back);
    suite_add_tcase(s, nomem);
    return s;
}

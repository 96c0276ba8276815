/* test_interop_wait.c — the Interop activity hosting composite legacy activities
 * (bridge/wfb_interop*.c): legacy queues as bookmarks named like the queue (one, several, a
 * set that changes as the legacy side moves), the payload as a bare value or a record, a legacy
 * Delay as a modern timer on the virtual clock, save/restore at every idle point, modern
 * cancellation running the legacy cancellation handler, a legacy Throw caught by type, and the
 * composite type library errors. Composites: tests/bridge/libs/interoptest/ and
 * tests/bridge/data/interop/lib/ (a composite-only library). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../bridge/wfb_durable.h"
#include "../../modern/wfm_durable.h"
#include "../../modern/wfm_store.h"
#include "../../modern/wfm_runtime.h"
#include "support_interop.h"
#include "../wf_test_util.h"

#define DATA "tests/bridge/data/interop/"
#define T0 WFB_TEST_T0
#define MINUTE INT64_C(60000000)

static void open_file(wfm_test_run *r, const char *file)
{
    wfb_test_open(r, wf_test_lib_dir(), file);
}

static const char *out_str(wfm_test_run *r, const char *name)
{
    const wf_value *v = wfm_instance_output(r->inst, name);
    ck_assert_msg(v != NULL, "no output %s", name);
    return wf_is_null(v) ? NULL : wf_value_str(v);
}

/* The instance waits on exactly these bookmarks (comma-separated, in creation order). */
static void expect_bookmarks(wfm_test_run *r, const char *want)
{
    char got[512] = "";
    for (size_t i = 0; i < wfm_instance_bookmark_count(r->inst); i++) {
        size_t len = strlen(got);
        snprintf(got + len, sizeof got - len, "%s%s", i ? "," : "",
                 wfm_instance_bookmark_name(r->inst, i));
    }
    ck_assert_str_eq(got, want);
}

static void resume_str(wfm_test_run *r, const char *bookmark, const char *s)
{
    wf_value v = wf_null();
    if (s)
        ck_assert_int_eq(wf_value_cstring(s, &v), WF_OK);
    wfm_test_resume(r, bookmark, &v);
    wf_value_release(&v);
}

static void input_amount(wfm_test_run *r)
{
    wfm_test_input(r, "Amount", wf_dec(wf_decimal_from_currency(125000)));
}

/* ---- core ------------------------------------------------------------------------------- */
START_TEST(test_every_queue_of_a_listen_is_a_bookmark)
{
    wfm_test_run r;
    open_file(&r, DATA "await.xaml");
    input_amount(&r);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    expect_bookmarks(&r, "IApprovalService.Approved,IApprovalService.Rejected");
    ck_assert(wfm_instance_next_timer_us(r.inst) == T0 + 60 * MINUTE);
    resume_str(&r, "IApprovalService.Approved", "ann"); /* one parameter: a bare value */
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(out_str(&r, "Decision"), "approved by ann");
    ck_assert_str_eq(out_str(&r, "Approver"), "ann"); /* bound to the composite's root */
    ck_assert_str_eq(r.out.data, "approved by ann\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_record_payload_for_several_parameters)
{
    wfm_test_run r;
    open_file(&r, DATA "await.xaml");
    input_amount(&r);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    const char *keys[] = {"Approver", "Reason"};
    wf_value vals[2], rec;
    ck_assert_int_eq(wf_value_cstring("bob", &vals[0]), WF_OK);
    ck_assert_int_eq(wf_value_cstring("too much", &vals[1]), WF_OK);
    ck_assert_int_eq(wf_value_record(keys, vals, 2, &rec), WF_OK);
    wfm_test_resume(&r, "IApprovalService.Rejected", &rec);
    wf_value_release(&rec);
    wf_value_release(&vals[0]);
    wf_value_release(&vals[1]);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(out_str(&r, "Decision"), "rejected: too much");
    ck_assert_str_eq(out_str(&r, "Approver"), "bob");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_legacy_delay_is_a_modern_timer)
{
    wfm_test_run r;
    open_file(&r, DATA "await.xaml");
    input_amount(&r);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    r.now_us = T0 + 59 * MINUTE;
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE); /* not due yet */
    r.now_us = T0 + 60 * MINUTE;
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(out_str(&r, "Decision"), "timed out");
    ck_assert_ptr_null(out_str(&r, "Approver"));
    wfm_test_close(&r);
}
END_TEST

/* TwoSteps waits on Submitted, then on Approved; with `persist` the instance is saved and
 * restored (as by another process) at each idle point. */
static void two_steps(bool persist)
{
    wfm_test_run r;
    open_file(&r, DATA "twosteps.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    if (persist)
        wfm_test_save_restore(&r);
    expect_bookmarks(&r, "IApprovalService.Submitted");
    resume_str(&r, "IApprovalService.Submitted", NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    if (persist)
        wfm_test_save_restore(&r);
    expect_bookmarks(&r, "IApprovalService.Approved");
    resume_str(&r, "IApprovalService.Approved", "dee");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(out_str(&r, "Approver"), "dee");
    wfm_test_close(&r);
}

START_TEST(test_wait_set_follows_the_legacy_side)
{
    two_steps(false);
}
END_TEST

START_TEST(test_save_restore_at_every_idle_point)
{
    two_steps(true);
}
END_TEST

START_TEST(test_timer_survives_save_restore)
{
    wfm_test_run r;
    open_file(&r, DATA "await.xaml");
    input_amount(&r);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wfm_test_save_restore(&r);
    ck_assert(wfm_instance_next_timer_us(r.inst) == T0 + 60 * MINUTE);
    r.now_us = T0 + 61 * MINUTE;
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(out_str(&r, "Decision"), "timed out");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_pick_cancels_the_legacy_activity)
{
    wfm_test_run r;
    open_file(&r, DATA "pick_cancel.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    expect_bookmarks(&r, "IApprovalService.Approved,IApprovalService.Rejected");
    r.now_us = T0 + 5 * MINUTE;
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(out_str(&r, "Winner"), "deadline");
    /* the legacy CancellationHandler ran, and Out arguments are copied on cancel too */
    ck_assert_str_eq(out_str(&r, "Decision"), "canceled");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_pick_lets_the_legacy_activity_win)
{
    wfm_test_run r;
    open_file(&r, DATA "pick_cancel.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    resume_str(&r, "IApprovalService.Approved", "fay");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(out_str(&r, "Winner"), "legacy");
    ck_assert_str_eq(out_str(&r, "Decision"), "approved by fay");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_instance_cancel_reaches_the_legacy_side)
{
    wfm_test_run r;
    open_file(&r, DATA "twosteps.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_cancel(r.inst, &err), WF_OK);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CANCELED);
    ck_assert_uint_eq(wfm_instance_bookmark_count(r.inst), 0);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_terminate_while_the_legacy_side_waits)
{
    wfm_test_run r;
    open_file(&r, DATA "terminate.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    expect_bookmarks(&r, "IApprovalService.Submitted");
    r.now_us = T0 + MINUTE;
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_TERMINATED);
    ck_assert_str_eq(wf_value_exc_message(wfm_instance_fault(r.inst)), "enough");
    wfm_test_close(&r); /* the hosted executor is released with the instance */
}
END_TEST

START_TEST(test_modern_fault_before_the_legacy_side_starts)
{
    wfm_test_run r;
    open_file(&r, DATA "in_fault.xaml");
    wfm_test_input(&r, "Zero", wf_int32(0));
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    ck_assert_ptr_eq(wfm_instance_fault(r.inst)->type, &wf_exc_divide_by_zero);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_legacy_throw_caught_by_its_type)
{
    wfm_test_run r;
    open_file(&r, DATA "refuse.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(out_str(&r, "Caught"),
                     "by type: Exception of type 'Tests.ApprovalException' was thrown.");
    wfm_test_close(&r);
}
END_TEST

/* A composite's declared directions hold under Interop as in the legacy runtime
 * (convcases' TallyStep: Count In, Total InOut, Log Out): the body increments Count and
 * Total and marks "T" + Count into Log, which starts empty. */
START_TEST(test_composite_property_directions)
{
    wfm_test_run r;
    open_file(&r, DATA "directions.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(wfm_instance_output(r.inst, "Count")->u.i32, 4); /* In: not copied back */
    ck_assert_int_eq(wfm_instance_output(r.inst, "Total")->u.i32, 11);
    ck_assert_str_eq(out_str(&r, "Log"), "T5"); /* Out: "x;" never went in */
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_composite_only_library)
{
    wfm_test_run r;
    wfb_test_open(&r, DATA "lib", DATA "composites.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE); /* the 10 s Delay */
    ck_assert(wfm_instance_next_timer_us(r.inst) == T0 + 10000000);
    r.now_us = T0 + 10000000;
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(out_str(&r, "Note"), "kept");
    wfm_test_close(&r);
}
END_TEST

/* `wfbridge run await.xaml --store DIR/s.db`: the persisted instance's id into id (33 bytes);
 * the output into out. */
static void run_stored(const char *dir, char *id, char *out, size_t size)
{
    char args[1024];
    snprintf(args, sizeof args,
             "run " DATA "await.xaml --store %s/s.db --lib-path %s --arg Amount=12.5 --json", dir,
             wf_test_lib_dir());
    ck_assert_int_eq(wfb_test_cli(args, out, size), 0);
    ck_assert_msg(strstr(out, "\"status\": \"Idle\"") != NULL, "%s", out);
    const char *p = strstr(out, "\"id\": \"");
    ck_assert_ptr_nonnull(p);
    snprintf(id, 33, "%.32s", p + strlen("\"id\": \""));
}

/* `wfbridge run --store` persists the waiting Interop and exits Idle; `wfbridge resume` in
 * another process continues the hosted legacy activity from the store. */
START_TEST(test_cli_store_then_resume_in_a_new_process)
{
    char dir[256], args[1024], out[4096];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    char id[33];
    run_stored(dir, id, out, sizeof out);
    ck_assert_ptr_nonnull(strstr(out, "[\"IApprovalService.Approved\", "
                                      "\"IApprovalService.Rejected\"]"));
    snprintf(args, sizeof args,
             "resume --store %s/s.db %s --bookmark 'IApprovalService.Approved=\"kim\"' "
             "--lib-path %s --json",
             dir, id, wf_test_lib_dir());
    ck_assert_int_eq(wfb_test_cli(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "approved by kim\n") != NULL, "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"status\": \"Closed\""));
    ck_assert_ptr_nonnull(strstr(out, "\"Approver\": \"kim\""));
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* The part after the last '.' names a bookmark when it is unambiguous: `run --resume` and,
 * across processes, `resume --bookmark` (as run-legacy --event does for queues). */
START_TEST(test_cli_short_bookmark_names)
{
    char dir[256], args[1024], out[4096];
    snprintf(args, sizeof args,
             "run " DATA "await.xaml --lib-path %s --arg Amount=12.5 --resume 'Approved=\"kim\"'"
             " --json",
             wf_test_lib_dir());
    ck_assert_int_eq(wfb_test_cli(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\"Approver\": \"kim\"") != NULL, "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"status\": \"Closed\""));
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    char id[33];
    run_stored(dir, id, out, sizeof out);
    snprintf(args, sizeof args,
             "resume --store %s/s.db %s --bookmark 'Rejected={\"Approver\":\"kim\",\"Reason\":"
             "\"no\"}' --lib-path %s --json",
             dir, id, wf_test_lib_dir());
    ck_assert_int_eq(wfb_test_cli(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\"status\": \"Closed\"") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "rejected: no\n") != NULL, "%s", out);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* While another host holds the instance, a short name is resolved against the bookmarks its
 * store row lists, and queued under the full name. */
START_TEST(test_cli_short_name_queued_for_another_host)
{
    char dir[256], path[300], args[1024], out[4096];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(path, sizeof path, "%s/s.db", dir);
    char id[33];
    run_stored(dir, id, out, sizeof out);
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = path;
    so.owner = "holder";
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&so, &s, &err), WF_OK);
    ck_assert_int_eq(wfm_store_lock(s, id, &err), WF_OK);
    snprintf(args, sizeof args, "resume --store %s %s --bookmark 'Approved=\"kim\"' --lib-path %s",
             path, id, wf_test_lib_dir());
    ck_assert_int_eq(wfb_test_cli(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "bookmark 'IApprovalService.Approved' queued (#1)") != NULL, "%s",
                  out);
    wfm_store_close(s);
    wf_test_tmpdir_remove(dir);
}
END_TEST

static void count_save(void *ud, const wfm_store_save_rec *rec)
{
    (void)rec;
    (*(unsigned *)ud)++;
}

/* Run `file` (composites from DATA/lib) under a durable host to completion; the number of
 * saves. */
static unsigned durable_saves(const char *file)
{
    wfm_test_run r;
    wfb_test_open(&r, DATA "lib", NULL);
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(path, sizeof path, "%s/s.db", dir);
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = path;
    wfm_store *store = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&so, &store, &err), WF_OK);
    unsigned saves = 0;
    wfm_host_opts ho = WFM_HOST_OPTS_INIT;
    ho.on_persist = count_save;
    ho.on_persist_ud = &saves;
    wfm_host *host = NULL;
    ck_assert_int_eq(wfm_host_create(r.rt, store, &ho, &host, &err), WF_OK);
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_load(r.rt, file, &def, NULL, &err), WF_OK);
    wfm_dinst *d = NULL;
    ck_assert_int_eq(wfm_host_new(host, def, &d, &err), WF_OK);
    wfm_definition_release(def);
    ck_assert_msg(wfm_host_run(host, d, &err) == WF_OK, "%s", err.message);
    ck_assert_int_eq(wfm_instance_state_get(wfm_dinst_instance(d)), WFM_INSTANCE_CLOSED);
    wfm_dinst_close(d);
    wfm_host_destroy(host);
    wfm_store_close(store);
    wf_test_tmpdir_remove(dir);
    wfm_test_close(&r);
    return saves;
}

/* A legacy TransactionScope closing inside the hosted composite is a persistence point: the
 * durable host saves the instance there (before the Interop completes) and at completion;
 * outside a durable host the same workflow just runs. */
START_TEST(test_legacy_persistence_point_persists_the_instance)
{
    ck_assert_uint_eq(durable_saves(DATA "atomic.xaml"), 2);
    ck_assert_uint_eq(durable_saves(DATA "plain.xaml"), 1); /* completion only */
    wfm_test_run r;
    wfb_test_open(&r, DATA "lib", DATA "atomic.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    wfm_test_close(&r);
}
END_TEST

/* ---- bad input -------------------------------------------------------------------------- */
/* Load `file` (composites from DATA/lib) and expect it refused with `errors` errors, sorted. */
static wf_diags *load_refused(wfm_test_run *r, const char *file, size_t errors)
{
    wfb_test_open(r, DATA "lib", NULL);
    wf_diags *d = wf_diags_create();
    ck_assert_ptr_nonnull(d);
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = NULL;
    ck_assert_int_ne(wfm_runtime_load(r->rt, file, &def, d, &err), WF_OK);
    ck_assert_ptr_null(def);
    wf_diags_sort(d);
    ck_assert_uint_eq(wf_diags_error_count(d), errors);
    return d;
}

START_TEST(test_composite_errors_are_reported_at_the_interop)
{
    wfm_test_run r;
    wf_diags *d = load_refused(&r, DATA "bad_composites.xaml", 3);
    WF_ASSERT_ERROR(wf_diags_get(d, 0)->error, WF_E_IO, 6, 3, "Missing.xoml");
    WF_ASSERT_ERROR(wf_diags_get(d, 1)->error, WF_E_SCHEMA, 7, 3, "x:Class=\"NS.WrongClass\"");
    WF_ASSERT_ERROR(wf_diags_get(d, 2)->error, WF_E_SCHEMA, 8, 3,
                    "Definition '../Escape.xoml' must be a plain file name");
    wf_diags_destroy(d);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_unknown_bookmark_is_refused)
{
    wfm_test_run r;
    open_file(&r, DATA "twosteps.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_resume(r.inst, "IApprovalService.Approved", NULL, &err),
                     WF_E_NOTFOUND);
    wfm_test_close(&r);
}
END_TEST

static const char *const two_approved[] = {"IApprovalService.Approved", "IAudit.Approved",
                                           "IApprovalService.Rejected"};

static const char *two_approved_name(const void *src, size_t i)
{
    return ((const char *const *)src)[i];
}

/* A short name two bookmarks share is a usage error (exit 2); the full name or a unique short
 * name resolves; a name nobody waits on resolves to nothing. */
START_TEST(test_ambiguous_short_bookmark_name)
{
    wfb_marks m = {NULL, 3, two_approved_name, two_approved, NULL};
    const char *got = "unset";
    ck_assert_int_eq(wfb_bookmark_resolve(&m, "--resume", "Approved", &got), 2);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(wfb_bookmark_resolve(&m, "--resume", "IAudit.Approved", &got), 0);
    ck_assert_str_eq(got, "IAudit.Approved");
    ck_assert_int_eq(wfb_bookmark_resolve(&m, "--resume", "Rejected", &got), 0);
    ck_assert_str_eq(got, "IApprovalService.Rejected");
    ck_assert_int_eq(wfb_bookmark_resolve(&m, "--resume", "Submitted", &got), 0);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(wfb_bookmark_resolve(&m, "--resume", "Service.Approved", &got), 0);
    ck_assert_ptr_null(got);
}
END_TEST

/* What Interop cannot do is a load error at the Interop naming the legacy activity and its
 * line: a legacy TransactionScope inside a modern one, an Interop inside a legacy body (the
 * composite Nested). The Interop outside any modern TransactionScope loads. */
START_TEST(test_restrictions_are_load_errors)
{
    wfm_test_run r;
    wf_diags *d = load_refused(&r, DATA "nested_tx.xaml", 2);
    WF_ASSERT_ERROR(wf_diags_get(d, 0)->error, WF_E_UNSUPPORTED, 8, 7,
                    "legacy TransactionScope 'reserve' (" DATA "lib/Atomic.xoml line 2) of "
                    "Atomic cannot run inside the modern TransactionScope 'Outer' (line 6)");
    WF_ASSERT_ERROR(wf_diags_get(d, 1)->error, WF_E_UNSUPPORTED, 11, 3,
                    "Interop cannot be nested inside a legacy body");
    ck_assert_ptr_nonnull(strstr(wf_diags_get(d, 1)->error.message, "Nested.xoml:2:2"));
    wf_diags_destroy(d);
    wfm_test_close(&r);
}
END_TEST

/* Bookmark names are unique per instance: a second Interop waiting on a queue another one
 * waits on faults, naming itself and the queue. */
START_TEST(test_two_interops_on_one_queue_fault_clearly)
{
    wfm_test_run r;
    open_file(&r, DATA "same_queue.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    const wf_value *exc = wfm_instance_fault(r.inst);
    ck_assert_ptr_eq(exc->type, &wf_exc_invalid_operation);
    ck_assert_str_eq(wf_value_exc_message(exc),
                     "Interop 'Second': another activity of this instance already waits on "
                     "'IApprovalService.Approved' (two Interops cannot wait on one legacy queue "
                     "at once)");
    wfm_test_close(&r);
}
END_TEST

/* ---- limits ----------------------------------------------------------------------------- */
START_TEST(test_many_iterations_of_a_waiting_composite)
{
    wfm_test_run r;
    open_file(&r, DATA "twosteps.xaml");
    for (int i = 0; i < 3; i++) { /* fresh instances of the same definition */
        if (i) {
            wfm_instance_destroy(r.inst);
            wf_error err = WF_ERROR_INIT;
            ck_assert_int_eq(wfm_instance_create(r.rt, r.def, &r.inst, &err), WF_OK);
        }
        ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
        expect_bookmarks(&r, "IApprovalService.Submitted");
        resume_str(&r, "IApprovalService.Submitted", NULL);
        ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
        resume_str(&r, "IApprovalService.Approved", "x");
        ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    }
    wfm_test_close(&r);
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------ */
START_TEST(test_nomem_while_loading_a_composite)
{
    wfm_test_run r;
    open_file(&r, NULL);
    wfb_test_load_nomem(r.rt, DATA "await.xaml");
    wfm_test_close(&r);
}
END_TEST

/* The whole waiting run (start, go idle, resume, close) with allocation N failing: a clean
 * out-of-memory end each time, then the right result. */
typedef struct run_job {
    wfm_runtime *rt;
    wfm_definition *def;
} run_job;

static wf_status run_once(void *ud)
{
    run_job *job = ud;
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_value amount = wf_dec(wf_decimal_from_currency(10000)), who = wf_null();
    wf_status st = wfm_instance_create(job->rt, job->def, &inst, &err);
    if (st == WF_OK) {
        wfm_instance_set_writer(inst, wfm_test_discard, NULL);
        st = wfm_instance_set_input(inst, "Amount", &amount, &err);
    }
    if (st == WF_OK)
        st = wfm_test_nomem_step(inst);
    if (st == WF_OK)
        st = wf_value_cstring("gus", &who);
    if (st == WF_OK && wfm_instance_state_get(inst) == WFM_INSTANCE_IDLE)
        st = wfm_instance_resume(inst, "IApprovalService.Approved", &who, &err);
    if (st == WF_OK)
        st = wfm_test_nomem_step(inst);
    wf_value_release(&who);
    if (st == WF_OK) {
        ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_CLOSED);
        ck_assert_str_eq(wf_value_str(wfm_instance_output(inst, "Decision")), "approved by gus");
    }
    wfm_instance_destroy(inst);
    return st;
}

START_TEST(test_nomem_while_running_a_waiting_composite)
{
    wfm_test_run r;
    open_file(&r, DATA "await.xaml");
    run_job job = {r.rt, r.def};
    ck_assert_uint_gt(wf_test_nomem_loop(run_once, &job, 20000), 10);
    wfm_test_close(&r);
}
END_TEST

Suite *interop_wait_suite(void)
{
    Suite *s = suite_create("interop_wait");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_every_queue_of_a_listen_is_a_bookmark);
    tcase_add_test(core, test_record_payload_for_several_parameters);
    tcase_add_test(core, test_legacy_delay_is_a_modern_timer);
    tcase_add_test(core, test_wait_set_follows_the_legacy_side);
    tcase_add_test(core, test_save_restore_at_every_idle_point);
    tcase_add_test(core, test_timer_survives_save_restore);
    tcase_add_test(core, test_pick_cancels_the_legacy_activity);
    tcase_add_test(core, test_pick_lets_the_legacy_activity_win);
    tcase_add_test(core, test_instance_cancel_reaches_the_legacy_side);
    tcase_add_test(core, test_terminate_while_the_legacy_side_waits);
    tcase_add_test(core, test_modern_fault_before_the_legacy_side_starts);
    tcase_add_test(core, test_legacy_throw_caught_by_its_type);
    tcase_add_test(core, test_composite_only_library);
    tcase_add_test(core, test_composite_property_directions);
    tcase_add_test(core, test_cli_store_then_resume_in_a_new_process);
    tcase_add_test(core, test_cli_short_bookmark_names);
    tcase_add_test(core, test_cli_short_name_queued_for_another_host);
    tcase_add_test(core, test_legacy_persistence_point_persists_the_instance);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_composite_errors_are_reported_at_the_interop);
    tcase_add_test(bad, test_unknown_bookmark_is_refused);
    tcase_add_test(bad, test_ambiguous_short_bookmark_name);
    tcase_add_test(bad, test_restrictions_are_load_errors);
    tcase_add_test(bad, test_two_interops_on_one_queue_fault_clearly);
    suite_add_tcase(s, bad);
    TCase *lim = tcase_create("limits");
    tcase_add_test(lim, test_many_iterations_of_a_waiting_composite);
    suite_add_tcase(s, lim);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 300);
    tcase_add_test(nomem, test_nomem_while_loading_a_composite);
    tcase_add_test(nomem, test_nomem_while_running_a_waiting_composite);
    suite_add_tcase(s, nomem);
    return s;
}

/* test_activities_fault.c — TryCatch/Catch/Finally, Throw, Rethrow, TerminateWorkflow,
 * CancellationScope and compensation (modern/wfm_act_fault.c, modern/wfm_act_comp.c) run on
 * the modern runtime; order is asserted through WriteLine output captured by the runtime's
 * writer (docs/semantics.md §5). Fixtures: tests/modern/data/acts/. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_persist.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_modern.h"

#define ACTS_DIR "tests/modern/data/acts/"

typedef wfm_test_run acts_run;

static void run_open(acts_run *r, const char *file)
{
    char path[256];
    snprintf(path, sizeof path, ACTS_DIR "%s", file);
    wfm_test_open_file(r, path);
}

#define ASSERT_OUT(r, text) ck_assert_str_eq((r).out.data, (text))

/* Run a fixture to its end and check the final state and the output. */
static void run_expect(const char *file, wfm_instance_state want, const char *text)
{
    acts_run r;
    run_open(&r, file);
    ck_assert_str_eq(wfm_instance_state_name(wfm_test_go(&r)), wfm_instance_state_name(want));
    ASSERT_OUT(r, text);
    wfm_test_close(&r);
}

/* Load a bad fixture: the exact status, line, column and a key word; nothing escapes. */
static void load_expect_error(const char *file, wf_status code, unsigned line, unsigned col,
                              const char *needle)
{
    wfm_test_load_error(ACTS_DIR "bad/", file, code, line, col, needle);
}

/* ---- TryCatch ------------------------------------------------------------------------- */
START_TEST(test_catch_picks_most_specific_type_not_declaration_order)
{
    run_expect("catch_specific.xaml", WFM_INSTANCE_CLOSED,
               "InvalidOperationException: one\n"
               "SystemException: two\n"
               "Exception: three\n");
}
END_TEST

START_TEST(test_finally_runs_after_catch_and_after_clean_try)
{
    run_expect("catch_finally.xaml", WFM_INSTANCE_CLOSED,
               "try\ncatch boom\nfinally\ntry quietly\nfinally again\nafter\n");
}
END_TEST

START_TEST(test_rethrow_passes_the_caught_exception_outward_after_finally)
{
    run_expect("catch_rethrow.xaml", WFM_INSTANCE_CLOSED,
               "inner saw original\ninner finally\nouter saw original\n");
}
END_TEST

START_TEST(test_exception_in_catch_propagates_after_finally)
{
    run_expect("catch_throws.xaml", WFM_INSTANCE_CLOSED,
               "catch first\ninner finally\nouter caught second\n");
}
END_TEST

START_TEST(test_exception_from_finally_propagates)
{
    run_expect("finally_throws.xaml", WFM_INSTANCE_CLOSED,
               "body closes normally\ntry\nfinally\nouter caught from finally\n");
}
END_TEST

START_TEST(test_uncaught_fault_faults_instance_at_the_throw)
{
    acts_run r;
    run_open(&r, "uncaught.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    ASSERT_OUT(r, "before\n");
    const wf_value *exc = wfm_instance_fault(r.inst);
    ck_assert_ptr_eq(exc->type, &wf_exc_divide_by_zero);
    ck_assert_str_eq(wf_value_exc_message(exc), "no catch fits");
    wf_loc at = wfm_instance_fault_loc(r.inst);
    ck_assert_ptr_nonnull(strstr(at.file, "uncaught.xaml"));
    ck_assert_uint_eq(at.line, 9);
    ck_assert_uint_eq(at.col, 9);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_terminate_is_not_catchable_and_ends_terminated)
{
    acts_run r;
    run_open(&r, "terminate.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_TERMINATED);
    ASSERT_OUT(r, "working\n");
    const wf_value *exc = wfm_instance_fault(r.inst);
    ck_assert_ptr_eq(exc->type, &wf_exc_workflow_terminated);
    ck_assert_str_eq(wf_value_exc_message(exc), "stock exhausted");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_terminate_with_exception_ends_instance_with_it)
{
    acts_run r;
    run_open(&r, "terminate_exc.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_TERMINATED);
    ASSERT_OUT(r, "");
    const wf_value *exc = wfm_instance_fault(r.inst);
    ck_assert_ptr_eq(exc->type, &wf_exc_argument);
    ck_assert_str_eq(wf_value_exc_message(exc), "bad order");
    ck_assert_uint_eq(wfm_instance_bookmark_count(r.inst), 0);
    wfm_test_close(&r);
}
END_TEST

/* ---- CancellationScope ---------------------------------------------------------------- */
START_TEST(test_cancellation_handler_runs_when_pick_branch_loses)
{
    acts_run r;
    run_open(&r, "cancel_pick.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ASSERT_OUT(r, "waiting for b\n");
    wfm_test_resume(&r, "a", NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ASSERT_OUT(r, "waiting for b\nb canceled\na won\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_cancellation_handler_runs_when_parallel_condition_cancels)
{
    acts_run r;
    run_open(&r, "cancel_parallel.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ASSERT_OUT(r, "slow started\n");
    wfm_test_resume(&r, "fast", NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ASSERT_OUT(r, "slow started\nfast done\nslow canceled\nafter\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_cancellation_handler_runs_when_instance_is_canceled)
{
    acts_run r;
    run_open(&r, "cancel_parallel.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_cancel(r.inst, &err), WF_OK);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CANCELED);
    ASSERT_OUT(r, "slow started\nslow canceled\n");
    wfm_test_close(&r);
}
END_TEST

/* ---- compensation --------------------------------------------------------------------- */
START_TEST(test_fault_compensates_in_reverse_completion_order)
{
    run_expect("comp_fault.xaml", WFM_INSTANCE_FAULTED,
               "A body\nB body\nC body\ncompensate C\ncompensate B\ncompensate A\n");
}
END_TEST

START_TEST(test_success_confirms_in_reverse_completion_order)
{
    run_expect("comp_success.xaml", WFM_INSTANCE_CLOSED,
               "A body\nB body\nC body\nend\nconfirm C\nconfirm B\nconfirm A\n");
}
END_TEST

START_TEST(test_explicit_compensate_and_confirm_by_token)
{
    run_expect("comp_tokens.xaml", WFM_INSTANCE_CLOSED,
               "A body\nB body\nC body\nconfirm B\ncompensate A\n"
               "Compensate: 'B' is already confirmed\nend\nconfirm C\n");
}
END_TEST

START_TEST(test_confirmed_compensable_is_not_compensated_on_fault)
{
    run_expect("comp_confirmed.xaml", WFM_INSTANCE_FAULTED,
               "A body\nB body\nconfirm A\ncompensate B\n");
}
END_TEST

START_TEST(test_compensation_handler_sees_variables_as_body_left_them)
{
    run_expect("comp_variables.xaml", WFM_INSTANCE_FAULTED, "reserved\nrelease 42 of T-7\n");
}
END_TEST

START_TEST(test_explicit_compensate_runs_handler_in_snapshot_and_writes_arguments)
{
    /* The handler sees the enclosing Sequence's variable as it was when the body completed
     * (a snapshot), and writes the workflow argument for real. */
    acts_run r;
    run_open(&r, "comp_explicit.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "release 7 (outer)\nend\n");
    ck_assert_int_eq(wfm_instance_output(r.inst, "released")->u.i32, 7);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_nested_compensables_default_and_explicit)
{
    run_expect("comp_nested.xaml", WFM_INSTANCE_FAULTED,
               "Inner1 body\nInner2 body\nInner3 body\nInner4 body\n"
               "compensate Handled\ncompensate Inner4\ncompensate Inner3\n"
               "compensate Inner2\ncompensate Inner1\n");
}
END_TEST

START_TEST(test_cancel_before_body_completes_runs_cancellation_handler)
{
    acts_run r;
    run_open(&r, "comp_cancel.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ASSERT_OUT(r, "Done body\nPending started\n");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_cancel(r.inst, &err), WF_OK);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CANCELED);
    ASSERT_OUT(r, "Done body\nPending started\ncancel Pending\ncompensate Done\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_fault_inside_compensable_body_runs_its_cancellation_path)
{
    /* With a CancellationHandler the children it left open are confirmed (WF4's
     * CompensationParticipant); without one they are compensated. */
    run_expect("comp_partial.xaml", WFM_INSTANCE_CLOSED,
               "WithHandler.Step body\ncancel WithHandler\nconfirm WithHandler.Step\n"
               "caught WithHandler failed\n"
               "NoHandler.Step body\ncompensate NoHandler.Step\ncaught NoHandler failed\n"
               "end\n");
}
END_TEST

/* ---- nomem --------------------------------------------------------------------------- */
/* One run of a loaded definition with a writer that does not allocate; the runtime and the
 * definition are made before the allocation failures start. */
typedef struct nomem_case {
    wfm_runtime *rt;
    wfm_definition *def;
    wfm_instance_state want_state;
    const char *want_out;
    wfm_test_fixed_out out;
    wf_status last;
    char why[256]; /* what was wrong with the last run */
} nomem_case;

/* WF_E_NOMEM when the run failed for lack of memory (the instance faults without an
 * exception), WF_OK when it produced the expected state and output, WF_E_FAULT otherwise. */
static wf_status nomem_run_op(void *ud)
{
    nomem_case *c = ud;
    wfm_test_fixed_reset(&c->out);
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status st = wfm_instance_create(c->rt, c->def, &inst, &err);
    if (st == WF_OK) {
        wfm_instance_set_writer(inst, wfm_test_capture_fixed, &c->out);
        st = wfm_instance_run(inst, &err);
    }
    if (st == WF_OK) {
        wfm_instance_state state = wfm_instance_state_get(inst);
        if (state == WFM_INSTANCE_FAULTED && wf_is_null(wfm_instance_fault(inst)))
            st = WF_E_NOMEM;
        else if (state != c->want_state || strcmp(c->out.text, c->want_out) != 0) {
            st = WF_E_FAULT;
            const wf_value *f = wfm_instance_fault(inst);
            snprintf(c->why, sizeof c->why, "state %s, fault %s: %s",
                     wfm_instance_state_name(state), f->type->name,
                     wf_is_null(f) ? "" : wf_value_exc_message(f));
        }
    }
    wfm_instance_destroy(inst);
    c->last = st;
    return st;
}

static void nomem_expect(const char *file, wfm_instance_state want, const char *text)
{
    nomem_case c;
    memset(&c, 0, sizeof c);
    c.want_state = want;
    c.want_out = text;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &c.rt, &err), WF_OK);
    char path[256];
    snprintf(path, sizeof path, ACTS_DIR "%s", file);
    ck_assert_int_eq(wfm_runtime_load(c.rt, path, &c.def, NULL, &err), WF_OK);
    unsigned failing = wf_test_nomem_loop(nomem_run_op, &c, 2000);
    ck_assert_uint_gt(failing, 0);
    ck_assert_msg(c.last == WF_OK, "run after %u failing runs: %s, output '%s'", failing, c.why,
                  c.out.text);
    wfm_definition_release(c.def);
    wfm_runtime_destroy(c.rt);
}

START_TEST(test_nomem_during_compensation_fails_cleanly)
{
    nomem_expect("comp_partial.xaml", WFM_INSTANCE_CLOSED,
                 "WithHandler.Step body\ncancel WithHandler\nconfirm WithHandler.Step\n"
                 "caught WithHandler failed\n"
                 "NoHandler.Step body\ncompensate NoHandler.Step\ncaught NoHandler failed\n"
                 "end\n");
}
END_TEST

/* Out of memory inside the end-of-workflow hook (confirming what is open) must fault the
 * instance, not close it as if the confirmations had run. */
START_TEST(test_nomem_in_finish_hook_faults_instead_of_closing)
{
    nomem_expect("comp_success.xaml", WFM_INSTANCE_CLOSED,
                 "A body\nB body\nC body\nend\nconfirm C\nconfirm B\nconfirm A\n");
}
END_TEST

START_TEST(test_nomem_in_finish_hook_of_faulted_workflow_keeps_it_faulted)
{
    nomem_expect("comp_fault.xaml", WFM_INSTANCE_FAULTED,
                 "A body\nB body\nC body\ncompensate C\ncompensate B\ncompensate A\n");
}
END_TEST

START_TEST(test_nomem_during_explicit_compensation_fails_cleanly)
{
    nomem_expect("comp_explicit.xaml", WFM_INSTANCE_CLOSED, "release 7 (outer)\nend\n");
}
END_TEST

START_TEST(test_nomem_during_catch_and_rethrow_fails_cleanly)
{
    nomem_expect("catch_rethrow.xaml", WFM_INSTANCE_CLOSED,
                 "inner saw original\ninner finally\nouter saw original\n");
}
END_TEST

/* ---- persistence ---------------------------------------------------------------------- */
START_TEST(test_catch_in_progress_survives_save_and_restore)
{
    acts_run r;
    run_open(&r, "catch_wait.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wfm_test_save_restore(&r);
    wfm_test_resume(&r, "resume", NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ASSERT_OUT(r, "caught kept across a save\nfinally\nouter saw kept across a save\n");
    wfm_test_close(&r);
}
END_TEST

static void comp_persist_start(acts_run *r, bool fail)
{
    run_open(r, "comp_persist.xaml");
    wf_value v = wf_bool(fail);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_set_input(r->inst, "fail", &v, &err), WF_OK);
    ck_assert_int_eq(wfm_test_go(r), WFM_INSTANCE_IDLE);
    wfm_test_save_restore(r);
    wfm_test_resume(r, "shipped", NULL);
}

START_TEST(test_compensation_tokens_and_snapshots_survive_save_and_restore)
{
    acts_run r;
    comp_persist_start(&r, true);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    ASSERT_OUT(r, "shipping\nrecall\nrelease 5\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_confirmation_waiting_at_the_end_survives_save_and_restore)
{
    acts_run r;
    comp_persist_start(&r, false);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ASSERT_OUT(r, "shipping\nconfirming 5\n");
    wfm_test_save_restore(&r);
    wfm_test_resume(&r, "confirm", NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ASSERT_OUT(r, "shipping\nconfirming 5\nconfirmed\n");
    wfm_test_close(&r);
}
END_TEST

typedef struct restore_case {
    wfm_runtime *rt;
    wfm_definition *def;
    wf_buf blob;
} restore_case;

static wf_status restore_op(void *ud)
{
    restore_case *c = ud;
    wfm_instance *inst = (wfm_instance *)&inst;
    wf_error err = WF_ERROR_INIT;
    wf_status st = wfm_instance_restore(c->rt, c->def, c->blob.data, c->blob.len, &inst, &err);
    if (st != WF_OK) {
        ck_assert_ptr_null(inst);
        return st;
    }
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_IDLE);
    wfm_instance_destroy(inst);
    return WF_OK;
}

START_TEST(test_nomem_while_restoring_compensation_state_fails_cleanly)
{
    /* Saved while a confirmation handler waits at the workflow's end: tokens, a snapshot
     * environment and the end-of-workflow driver are all in the blob. */
    acts_run r;
    comp_persist_start(&r, false);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    restore_case c = {r.rt, r.def, {0}};
    wf_buf_init(&c.blob);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_save(r.inst, &c.blob, &err), WF_OK);
    ck_assert_uint_gt(wf_test_nomem_loop(restore_op, &c, 2000), 0);
    wf_buf_fini(&c.blob);
    wfm_test_close(&r);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------ */
START_TEST(test_duplicate_catch_type_is_a_load_error)
{
    load_expect_error("duplicate_catch.xaml", WF_E_SCHEMA, 16, 9, "duplicate Catch");
}
END_TEST

START_TEST(test_rethrow_outside_catch_is_a_load_error)
{
    load_expect_error("rethrow_outside_catch.xaml", WF_E_SCHEMA, 7, 5, "Rethrow");
}
END_TEST

START_TEST(test_catch_of_non_exception_type_is_a_load_error)
{
    load_expect_error("catch_non_exception.xaml", WF_E_TYPE, 9, 9, "exception type");
}
END_TEST

START_TEST(test_compensable_inside_handler_is_a_load_error)
{
    load_expect_error("compensable_in_handler.xaml", WF_E_SCHEMA, 11, 9, "not allowed");
}
END_TEST

Suite *modern_activities_fault_suite(void)
{
    Suite *s = suite_create("modern_activities_fault");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_catch_picks_most_specific_type_not_declaration_order);
    tcase_add_test(core, test_finally_runs_after_catch_and_after_clean_try);
    tcase_add_test(core, test_rethrow_passes_the_caught_exception_outward_after_finally);
    tcase_add_test(core, test_exception_in_catch_propagates_after_finally);
    tcase_add_test(core, test_exception_from_finally_propagates);
    tcase_add_test(core, test_uncaught_fault_faults_instance_at_the_throw);
    tcase_add_test(core, test_terminate_is_not_catchable_and_ends_terminated);
    tcase_add_test(core, test_terminate_with_exception_ends_instance_with_it);
    tcase_add_test(core, test_cancellation_handler_runs_when_pick_branch_loses);
    tcase_add_test(core, test_cancellation_handler_runs_when_parallel_condition_cancels);
    tcase_add_test(core, test_cancellation_handler_runs_when_instance_is_canceled);
    tcase_add_test(core, test_fault_compensates_in_reverse_completion_order);
    tcase_add_test(core, test_success_confirms_in_reverse_completion_order);
    tcase_add_test(core, test_explicit_compensate_and_confirm_by_token);
    tcase_add_test(core, test_confirmed_compensable_is_not_compensated_on_fault);
    tcase_add_test(core, test_compensation_handler_sees_variables_as_body_left_them);
    tcase_add_test(core, test_nested_compensables_default_and_explicit);
    tcase_add_test(core, test_explicit_compensate_runs_handler_in_snapshot_and_writes_arguments);
    tcase_add_test(core, test_cancel_before_body_completes_runs_cancellation_handler);
    tcase_add_test(core, test_fault_inside_compensable_body_runs_its_cancellation_path);
    suite_add_tcase(s, core);
    TCase *persist = tcase_create("persist");
    tcase_add_test(persist, test_catch_in_progress_survives_save_and_restore);
    tcase_add_test(persist, test_compensation_tokens_and_snapshots_survive_save_and_restore);
    tcase_add_test(persist, test_confirmation_waiting_at_the_end_survives_save_and_restore);
    suite_add_tcase(s, persist);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_duplicate_catch_type_is_a_load_error);
    tcase_add_test(bad, test_rethrow_outside_catch_is_a_load_error);
    tcase_add_test(bad, test_catch_of_non_exception_type_is_a_load_error);
    tcase_add_test(bad, test_compensable_inside_handler_is_a_load_error);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 60);
    tcase_add_test(nomem, test_nomem_during_compensation_fails_cleanly);
    tcase_add_test(nomem, test_nomem_during_explicit_compensation_fails_cleanly);
    tcase_add_test(nomem, test_nomem_in_finish_hook_faults_instead_of_closing);
    tcase_add_test(nomem, test_nomem_in_finish_hook_of_faulted_workflow_keeps_it_faulted);
    tcase_add_test(nomem, test_nomem_during_catch_and_rethrow_fails_cleanly);
    tcase_add_test(nomem, test_nomem_while_restoring_compensation_state_fails_cleanly);
    suite_add_tcase(s, nomem);
    return s;
}

/* test_composite.c — composite type-library activities (Definition= XOML) used directly inside
 * a XOML workflow (legacy/wfl_act_composite.c): the body waits on the outer instance's queues
 * and timers, its properties reach the outer workflow through binds, its code-beside comes
 * from its own Handler entries, cancellation runs its CancellationHandler, its state is saved
 * inside the outer blob. Fixtures: tests/legacy/data/exec/composite.xoml and the composites
 * of tests/legacy/libs/wfexectest/. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../legacy/wfl_exec.h"
#include "../wf_test_util.h"
#include "test_exec.h"

/* ---- core ------------------------------------------------------------------------------- */
START_TEST(test_composite_waits_on_the_outer_queue)
{
    xt_env e;
    xt_load(&e, "composite.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert(xt_waits_on(&e, "ITestService.Approved"));
    int64_t due;
    ck_assert(wfl_exec_next_timer(e.ex, &due)); /* the body's Delay, an outer timer */
    ck_assert_int_eq(due, e.now + 500000);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "{\"Approver\": \"ann\"}"),
                     WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Approver"), "ann"); /* a bind to the body's root name */
    ck_assert_str_eq(xt_str(&e, "Log"), "CAC");      /* its own handler AppendA */
    ck_assert_str_eq(e.calls.data, "before,gotIt,after,");
    ck_assert(!wfl_exec_next_timer(e.ex, &due));
    ck_assert_uint_eq(wfl_exec_queue_count(e.ex), 0);
    xt_free(&e);
}
END_TEST

START_TEST(test_composite_timer_fires_on_the_outer_clock)
{
    xt_env e;
    xt_load(&e, "composite.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    wfl_exec_state st;
    ck_assert_int_eq(wfl_exec_fire_timers(e.ex, e.now + 499999, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_IDLE);
    e.now += 500000;
    ck_assert_int_eq(wfl_exec_fire_timers(e.ex, e.now, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "CBC");
    xt_free(&e);
}
END_TEST

START_TEST(test_cancel_runs_the_body_cancellation_handler)
{
    xt_env e;
    xt_load(&e, "composite.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    wfl_exec_state st;
    ck_assert_int_eq(wfl_exec_cancel(e.ex, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_CANCELED);
    ck_assert_str_eq(xt_str(&e, "Log"), "CD"); /* copied back after the handler ran */
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "await1:Closed/Canceled"));
    xt_free(&e);
}
END_TEST

/* Saved while the body waits, restored from the blob in a new executor: it continues. */
START_TEST(test_waiting_composite_survives_save_restore)
{
    xt_env e;
    xt_load(&e, "composite.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    void *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(wfl_exec_save(e.ex, &blob, &len, NULL), WF_OK);
    wfl_exec_destroy(e.ex);
    e.ex = NULL;
    wfl_exec_opts o = xt_opts(&e);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_exec_restore(e.def, &o, blob, len, &e.ex, &err) == WF_OK, "%s",
                  err.message);
    wf_free(blob);
    ck_assert(xt_waits_on(&e, "ITestService.Approved"));
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "{\"Approver\": \"bo\"}"),
                     WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Approver"), "bo");
    ck_assert_str_eq(xt_str(&e, "Log"), "CAC");
    xt_free(&e);
}
END_TEST

/* wfbridge run-legacy runs it, the event named by its short name. */
START_TEST(test_run_legacy_runs_a_composite)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s/bin/wfbridge run-legacy tests/legacy/data/exec/composite.xoml --lib-path %s "
             "--event 'Approved={\"Approver\":\"kim\"}' --json",
             wf_test_build_dir(), wf_test_lib_dir());
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char out[4096];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_msg(strstr(out, "\"status\": \"Closed\"") != NULL, "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"Log\": \"CAC\""));
    ck_assert_ptr_nonnull(strstr(out, "\"Approver\": \"kim\""));
}
END_TEST

/* ---- bad input -------------------------------------------------------------------------- */
START_TEST(test_body_errors_are_reported_at_the_use)
{
    xt_env e;
    wf_diags *d = wf_diags_create();
    ck_assert_ptr_nonnull(d);
    wf_error err = WF_ERROR_INIT;
    memset(&e, 0, sizeof e);
    e.types = wf_types_create();
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &e.libpath, NULL), WF_OK);
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = e.types;
    lo.libpath = e.libpath;
    lo.diags = d;
    ck_assert_int_ne(wfl_definition_load_file(&lo, "tests/legacy/data/exec/bad/composites.xoml",
                                              &e.def, &err),
                     WF_OK);
    ck_assert_ptr_null(e.def);
    wf_diags_sort(d);
    ck_assert_uint_eq(wf_diags_error_count(d), 2);
    WF_ASSERT_ERROR(wf_diags_get(d, 0)->error, WF_E_SCHEMA, 2, 2,
                    "composite 'BrokenBody': unknown activity type 'NoSuchActivity'");
    ck_assert_ptr_nonnull(strstr(wf_diags_get(d, 0)->error.message, "BrokenBody.xoml:2:2"));
    WF_ASSERT_ERROR(wf_diags_get(d, 1)->error, WF_E_LIMIT, 3, 2,
                    "composite 'Recursive' nests composites more than 8 deep");
    wf_diags_destroy(d);
    xt_free(&e);
}
END_TEST

/* ---- limits ----------------------------------------------------------------------------- */
/* Many executions of one definition: every one starts the body from fresh state. */
START_TEST(test_many_runs_of_a_composite)
{
    xt_env e;
    xt_load(&e, "composite.xoml", NULL);
    for (int i = 0; i < 200; i++) {
        xt_start(&e);
        ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
        ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "{\"Approver\": \"x\"}"),
                         WFL_EXEC_CLOSED);
        ck_assert_str_eq(xt_str(&e, "Log"), "CAC");
        wfl_exec_destroy(e.ex);
        e.ex = NULL;
    }
    xt_free(&e);
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------ */
START_TEST(test_composite_survives_allocation_failures)
{
    xt_env e;
    xt_load(&e, "composite.xoml", NULL);
    ck_assert_uint_gt(wf_test_nomem_loop(xt_run_once, &e, 4000), 0);
    xt_free(&e);
}
END_TEST

Suite *legacy_composite_suite(void)
{
    Suite *s = suite_create("legacy_composite");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_composite_waits_on_the_outer_queue);
    tcase_add_test(core, test_composite_timer_fires_on_the_outer_clock);
    tcase_add_test(core, test_cancel_runs_the_body_cancellation_handler);
    tcase_add_test(core, test_waiting_composite_survives_save_restore);
    tcase_add_test(core, test_run_legacy_runs_a_composite);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_body_errors_are_reported_at_the_use);
    suite_add_tcase(s, bad);
    TCase *lim = tcase_create("limits");
    tcase_add_test(lim, test_many_runs_of_a_composite);
    suite_add_tcase(s, lim);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_composite_survives_allocation_failures);
    suite_add_tcase(s, nomem);
    return s;
}

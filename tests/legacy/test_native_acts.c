/* test_native_acts.c — custom activities across the C boundary: In/Out/Return values of every
 * mapped type (strings out and returned, Decimal in units of 1/10,000, Double), ErrorOnNonZero
 * status codes becoming faults, code-beside handlers, and the trace record of each call. */
#include <check.h>
#include <string.h>

#include "../wf_test_util.h"
#include "test_exec.h"

START_TEST(test_custom_activities_read_and_write_their_dps)
{
    xt_env e;
    xt_load(&e, "natives.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Text", "pre");
    xt_set(&e, "Approver", "ann");
    xt_set(&e, "Amount", "10.5");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "pre-suffixA");     /* char ** out, then InOut */
    ck_assert_str_eq(xt_str(&e, "Reviewer"), "Hello, ann"); /* char * return */
    wf_value amount;
    ck_assert_int_eq(wfl_exec_output(e.ex, "Amount", &amount, NULL), WF_OK);
    ck_assert_int_eq(amount.type->kind, WF_K_DECIMAL);
    ck_assert_int_eq(amount.u.i64, 262500); /* 10.5 * 2.5 = 26.25 */
    ck_assert_int_eq(xt_int(&e, "Sum"), 0); /* Check returned 0 into Status -> Sum */
    ck_assert_str_eq(e.calls.data, "concat1,greet1,scale1,check1,after,");
    xt_free(&e);
}
END_TEST

START_TEST(test_trace_records_function_and_arguments)
{
    xt_env e;
    xt_load(&e, "natives.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_uint_eq(e.native_count, 5);
    ck_assert_str_eq(e.last_fn, "wx_append_a");
    ck_assert_uint_eq(e.last_in_count, 1); /* Log (InOut) */
    ck_assert_uint_eq(e.last_out_count, 1);
    ck_assert_int_eq(e.last_status, WF_OK);
    xt_free(&e);
}
END_TEST

START_TEST(test_error_on_nonzero_faults_the_activity)
{
    xt_env e;
    xt_load(&e, "natives.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Score", "7");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_FAULTED);
    const wf_value *exc = wfl_exec_exception(e.ex);
    ck_assert_str_eq(exc->type->name, "NativeException");
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "wx_check"));
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "7"));
    ck_assert_int_eq(xt_int(&e, "Sum"), 7); /* the Return binding still got the status */
    ck_assert_str_eq(e.last_fn, "wx_check");
    ck_assert_int_eq(e.last_status, WF_E_NATIVE);
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "check1:Closed/Faulted,"));
    ck_assert_ptr_null(strstr(e.calls.data, "after,"));
    xt_free(&e);
}
END_TEST

START_TEST(test_failing_handler_faults_the_code_activity)
{
    xt_env e;
    xt_load(&e, "failhandler.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_FAULTED);
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(wfl_exec_exception(e.ex)), "42"));
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "failing:Closed/Faulted,"));
    xt_free(&e);
}
END_TEST

START_TEST(test_missing_type_library_is_a_load_error)
{
    xt_env e;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(xt_load_status(&e, "bad/missing_library.xoml", NULL, &err), WF_E_NOLIB);
    ck_assert_ptr_null(e.def);
    WF_ASSERT_ERROR(err, WF_E_NOLIB, 1, 1, "nosuchlib");
    xt_free(&e);
}
END_TEST

Suite *legacy_native_acts_suite(void)
{
    Suite *s = suite_create("legacy_native_acts");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_custom_activities_read_and_write_their_dps);
    tcase_add_test(core, test_trace_records_function_and_arguments);
    tcase_add_test(core, test_error_on_nonzero_faults_the_activity);
    tcase_add_test(core, test_failing_handler_faults_the_code_activity);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_missing_type_library_is_a_load_error);
    suite_add_tcase(s, bad);
    return s;
}

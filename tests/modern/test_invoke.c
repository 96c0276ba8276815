/* test_invoke.c — InvokeMethod (modern/wfm_act_invoke.c): every C type of the type mapping
 * across the libffi boundary, out and in/out parameters, callee-malloc'd strings, the
 * ErrorOnNonZero status, the load errors for a missing library, function or library path;
 * and TransactionScope from the same file. Native side: tests/modern/libs/wfminvoke/. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_persist.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_modern.h"

#define ACTS_DIR "tests/modern/data/acts/"

typedef wfm_test_run acts_run;

static void runtime_new(acts_run *r, bool with_libpath)
{
    wfm_test_cfg cfg = {.virtual_clock = true,
                        .lib_dir = with_libpath ? wf_test_lib_dir() : NULL};
    wfm_test_start(r, &cfg);
}

static void run_open(acts_run *r, const char *file)
{
    runtime_new(r, true);
    char path[256];
    snprintf(path, sizeof path, ACTS_DIR "%s", file);
    wfm_test_load_file(r, path);
}

static void set_input(acts_run *r, const char *name, const wf_value *v)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_set_input(r->inst, name, v, &err) == WF_OK, "%s", err.message);
}

static const wf_value *output(acts_run *r, const char *name)
{
    const wf_value *v = wfm_instance_output(r->inst, name);
    ck_assert_msg(v != NULL, "no output %s", name);
    return v;
}

/* Load a bad fixture: exact status, line, column and key word; nothing escapes. */
static void load_expect_error(const char *file, bool with_libpath, wf_status code, unsigned line,
                              unsigned col, const char *needle)
{
    acts_run r;
    runtime_new(&r, with_libpath);
    char path[256];
    snprintf(path, sizeof path, ACTS_DIR "%s", file);
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = (wfm_definition *)&def;
    ck_assert_int_ne(wfm_runtime_load(r.rt, path, &def, NULL, &err), WF_OK);
    ck_assert_ptr_null(def);
    WF_ASSERT_ERROR(err, code, line, col, needle);
    ck_assert_ptr_nonnull(strstr(err.file, file));
    wfm_test_close(&r);
}

/* ---- core ----------------------------------------------------------------------------- */
START_TEST(test_every_mapped_type_crosses_the_boundary)
{
    acts_run r;
    run_open(&r, "invoke_types.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(output(&r, "i32")->u.i32, 42);
    ck_assert(output(&r, "i64")->u.i64 == INT64_C(9000000000));
    ck_assert(output(&r, "dbl")->u.d == 5.0);
    ck_assert_ptr_eq(output(&r, "dec")->type, &wf_type_decimal);
    ck_assert(output(&r, "dec")->u.i64 == 37500); /* 3.75 in 1/10,000 */
    int64_t want;
    ck_assert_int_eq(wf_datetime_parse("2024-03-03T10:00:00Z", &want), WF_OK);
    ck_assert_ptr_eq(output(&r, "when")->type, &wf_type_datetime);
    ck_assert(output(&r, "when")->u.i64 == want);
    ck_assert(output(&r, "flag")->u.b);
    ck_assert_str_eq(wf_value_str(output(&r, "greeting")), "Hello, Ada");
    ck_assert_int_eq(output(&r, "nullLength")->u.i32, -1);
    ck_assert_int_eq(output(&r, "length")->u.i32, 10);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_out_and_inout_parameters_are_written_back)
{
    acts_run r;
    run_open(&r, "invoke_out.xaml");
    wf_value text, shout, counter = wf_int32(1), sum = wf_double(1.0);
    ck_assert_int_eq(wf_value_cstring("left,right", &text), WF_OK);
    ck_assert_int_eq(wf_value_cstring("hey", &shout), WF_OK);
    set_input(&r, "text", &text);
    set_input(&r, "counter", &counter);
    set_input(&r, "sum", &sum);
    set_input(&r, "shout", &shout);
    wf_value_release(&text);
    wf_value_release(&shout);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(wf_value_str(output(&r, "head")), "left");
    ck_assert_str_eq(wf_value_str(output(&r, "tail")), "right");
    ck_assert_int_eq(output(&r, "total")->u.i32, 10);
    ck_assert_int_eq(output(&r, "counter")->u.i32, 2);
    ck_assert(output(&r, "sum")->u.d == 1.5);
    ck_assert_str_eq(wf_value_str(output(&r, "shout")), "hey!");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_null_string_out_parameter_becomes_null)
{
    acts_run r;
    run_open(&r, "invoke_out.xaml");
    wf_value text;
    ck_assert_int_eq(wf_value_cstring("alone", &text), WF_OK);
    set_input(&r, "text", &text);
    wf_value_release(&text);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(wf_value_str(output(&r, "head")), "alone");
    ck_assert(wf_is_null(output(&r, "tail")));
    ck_assert_int_eq(output(&r, "total")->u.i32, 5);
    ck_assert_str_eq(wf_value_str(output(&r, "shout")), "!"); /* null went in as NULL */
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_error_on_nonzero_zero_status_continues)
{
    acts_run r;
    run_open(&r, "invoke_status.xaml");
    wf_value v = wf_int32(5);
    set_input(&r, "value", &v);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "checking\npositive\n");
    ck_assert_int_eq(output(&r, "status")->u.i32, 0);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_error_on_nonzero_faults_naming_function_and_value)
{
    acts_run r;
    run_open(&r, "invoke_status.xaml");
    wf_value v = wf_int32(-2);
    set_input(&r, "value", &v);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    ck_assert_str_eq(r.out.data, "checking\n");
    const wf_value *exc = wfm_instance_fault(r.inst);
    ck_assert_ptr_eq(exc->type, &wf_exc_native);
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "wfmi_check_positive"));
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "42"));
    ck_assert_uint_eq(wfm_instance_fault_loc(r.inst).line, 12);
    ck_assert_int_eq(output(&r, "status")->u.i32, 42); /* the Result still received it */
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_native_fault_is_catchable_as_native_exception)
{
    acts_run r;
    run_open(&r, "invoke_catch.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_ptr_nonnull(strstr(r.out.data, "native: "));
    ck_assert_ptr_nonnull(strstr(r.out.data, "native function 'wfmi_check_positive' returned 47"));
    wfm_test_close(&r);
}
END_TEST

/* ---- TransactionScope ----------------------------------------------------------------- */
START_TEST(test_transaction_scope_runs_body_and_nested_scope_joins)
{
    acts_run r;
    run_open(&r, "tx_ok.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "in transaction\nnested joins\nafter\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_transaction_failure_terminates_instance_by_default)
{
    acts_run r;
    run_open(&r, "tx_abort.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_TERMINATED);
    ck_assert_str_eq(r.out.data, "debit\n");
    const wf_value *exc = wfm_instance_fault(r.inst);
    ck_assert_ptr_eq(exc->type, &wf_exc_invalid_operation);
    ck_assert_str_eq(wf_value_exc_message(exc), "credit failed");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_transaction_failure_propagates_when_not_aborting)
{
    acts_run r;
    run_open(&r, "tx_noabort.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "debit\ncaught credit failed\nafter\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_transaction_negative_timeout_faults)
{
    acts_run r;
    run_open(&r, "tx_timeout.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    ck_assert_str_eq(r.out.data, "");
    ck_assert_ptr_eq(wfm_instance_fault(r.inst)->type, &wf_exc_argument_range);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_transaction_timeout_cancels_body_and_faults)
{
    acts_run r;
    run_open(&r, "tx_timeout_wait.xaml");
    r.now_us = INT64_C(1700000000000000);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(r.out.data, "waiting\n");
    ck_assert(wfm_instance_next_timer_us(r.inst) == r.now_us + 5000000);
    r.now_us += 4000000; /* not yet due */
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(r.out.data, "waiting\n");
    r.now_us += 1000000;
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "waiting\nrolled back\ncaught the transaction of "
                                 "TransactionScope 'Transfer' timed out after 5000 ms\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_transaction_scope_is_a_no_persist_zone)
{
    acts_run r;
    run_open(&r, "tx_timeout_wait.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wf_buf blob;
    wf_buf_init(&blob);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_save(r.inst, &blob, &err), WF_E_STATE);
    ck_assert_ptr_nonnull(strstr(err.message, "TransactionScope"));
    ck_assert_uint_eq(blob.len, 0);
    wf_buf_fini(&blob);
    wfm_test_close(&r);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------ */
START_TEST(test_missing_library_is_a_load_error_at_the_element)
{
    load_expect_error("bad/invoke_missing_library.xaml", true, WF_E_NOLIB, 7, 7, "nosuchlib");
}
END_TEST

START_TEST(test_missing_function_is_a_load_error)
{
    load_expect_error("bad/invoke_missing_function.xaml", true, WF_E_NOSYM, 6, 5,
                      "wfmi_no_such_function");
}
END_TEST

START_TEST(test_no_library_path_is_a_load_error_naming_the_library)
{
    load_expect_error("bad/invoke_missing_function.xaml", false, WF_E_NOLIB, 6, 5, "wfminvoke");
}
END_TEST

START_TEST(test_unknown_isolation_level_is_a_load_error)
{
    load_expect_error("bad/tx_isolation.xaml", true, WF_E_SCHEMA, 5, 5, "Sloppy");
}
END_TEST

START_TEST(test_error_on_nonzero_needs_int32_result)
{
    load_expect_error("bad/invoke_status_not_int32.xaml", true, WF_E_TYPE, 8, 3,
                      "ErrorOnNonZero");
}
END_TEST

/* ---- limits -------------------------------------------------------------------------- */
START_TEST(test_more_than_32_parameters_is_a_load_error)
{
    load_expect_error("bad/invoke_too_many_parameters.xaml", true, WF_E_LIMIT, 5, 3,
                      "33 parameters");
}
END_TEST

/* ---- nomem --------------------------------------------------------------------------- */
static char *c_text; /* the fixture the nomem load reads */

typedef struct load_case {
    wfm_runtime *rt;
} load_case;

/* Load (preparing every InvokeMethod call: library, symbol, call interface) and release. */
static wf_status load_op(void *ud)
{
    load_case *c = ud;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status st = wfm_runtime_load_mem(c->rt, "invoke_types.xaml", c_text, strlen(c_text), &def,
                                        NULL, &err);
    if (st == WF_OK)
        ck_assert_ptr_nonnull(def);
    else
        ck_assert_ptr_null(def);
    wfm_definition_release(def);
    return st;
}

START_TEST(test_nomem_while_preparing_native_calls_fails_cleanly)
{
    acts_run r;
    runtime_new(&r, true);
    size_t len;
    c_text = wf_test_read_file(ACTS_DIR "invoke_types.xaml", &len);
    ck_assert_ptr_nonnull(c_text);
    load_case c = {r.rt};
    ck_assert_uint_gt(wf_test_nomem_loop(load_op, &c, 5000), 0);
    ck_assert_int_eq(load_op(&c), WF_OK);
    wf_free(c_text);
    c_text = NULL;
    wfm_test_close(&r);
}
END_TEST

Suite *modern_invoke_suite(void)
{
    Suite *s = suite_create("modern_invoke");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_every_mapped_type_crosses_the_boundary);
    tcase_add_test(core, test_out_and_inout_parameters_are_written_back);
    tcase_add_test(core, test_null_string_out_parameter_becomes_null);
    tcase_add_test(core, test_error_on_nonzero_zero_status_continues);
    tcase_add_test(core, test_error_on_nonzero_faults_naming_function_and_value);
    tcase_add_test(core, test_native_fault_is_catchable_as_native_exception);
    tcase_add_test(core, test_transaction_scope_runs_body_and_nested_scope_joins);
    tcase_add_test(core, test_transaction_failure_terminates_instance_by_default);
    tcase_add_test(core, test_transaction_failure_propagates_when_not_aborting);
    tcase_add_test(core, test_transaction_negative_timeout_faults);
    tcase_add_test(core, test_transaction_timeout_cancels_body_and_faults);
    tcase_add_test(core, test_transaction_scope_is_a_no_persist_zone);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_missing_library_is_a_load_error_at_the_element);
    tcase_add_test(bad, test_missing_function_is_a_load_error);
    tcase_add_test(bad, test_no_library_path_is_a_load_error_naming_the_library);
    tcase_add_test(bad, test_error_on_nonzero_needs_int32_result);
    tcase_add_test(bad, test_unknown_isolation_level_is_a_load_error);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_more_than_32_parameters_is_a_load_error);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 60);
    tcase_add_test(nomem, test_nomem_while_preparing_native_calls_fails_cleanly);
    suite_add_tcase(s, nomem);
    return s;
}

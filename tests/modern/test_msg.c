/* test_msg.c — the messaging activities (modern/wfm_act_msg.c): a definition's operations as a
 * host sees them, a creating message delivered with the instance, replies by request id, a
 * Receive waiting across a save and restore, and the load errors of bad markup. */
#include <check.h>
#include <string.h>

#include "../../modern/wfm_msg.h"
#include "../wf_test_util.h"
#include "support_modern.h"

#define DIR "tests/modern/data/msg/"

/* The message record of an operation: parameters as given plus the request id. */
static wf_value message(int64_t request, const char *key, wf_value value)
{
    const char *keys[2] = {WFM_MSG_REQUEST, key};
    wf_value values[2] = {wf_int64(request), value};
    wf_value rec = wf_null();
    ck_assert_int_eq(wf_value_record(keys, values, key ? 2 : 1, &rec), WF_OK);
    return rec;
}

/* The reply to `request` must be a record whose field `key` is the Int32 `want`. */
static void expect_reply(wfm_test_run *r, int64_t request, const char *key, int32_t want)
{
    wf_value reply = wf_null();
    ck_assert_int_eq(wfm_msg_take_reply(r->inst, request, &reply), WF_OK);
    const wf_value *v = key ? wf_value_record_get(&reply, key) : NULL;
    if (key) {
        ck_assert_ptr_nonnull(v);
        ck_assert_int_eq(v->u.i32, want);
    } else {
        ck_assert_uint_eq(wf_value_record_count(&reply), 0);
    }
    wf_value_release(&reply);
    ck_assert_int_eq(wfm_msg_take_reply(r->inst, request, &reply), WF_E_NOTFOUND);
}

static void call(wfm_test_run *r, const char *op, int64_t request, int32_t value)
{
    char mark[64];
    snprintf(mark, sizeof mark, "ICalculator.%s", op);
    wf_value msg = message(request, strcmp(op, "PowerOff") ? "value" : NULL, wf_int32(value));
    wfm_test_resume(r, mark, &msg);
    wf_value_release(&msg);
}

START_TEST(test_msg_ops_of_calculator)
{
    wfm_test_run r;
    wfm_test_open_file(&r, DIR "calculator.xaml");
    wfm_msg_op *ops = NULL;
    size_t n = 0;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_msg_ops(r.def, &ops, &n, &err), WF_OK);
    ck_assert_uint_eq(n, 6); /* PowerOn, Add, Subtract, Multiply, Divide, PowerOff */
    ck_assert_str_eq(ops[0].operation, "PowerOn");
    ck_assert(ops[0].can_create);
    ck_assert(!ops[0].one_way);
    ck_assert_uint_eq(ops[0].param_count, 0);
    ck_assert_str_eq(ops[1].bookmark, "ICalculator.Add");
    ck_assert_str_eq(ops[1].contract_ns, WFM_MSG_DEFAULT_NS);
    ck_assert(!ops[1].can_create);
    ck_assert_uint_eq(ops[1].param_count, 1);
    ck_assert_str_eq(ops[1].params[0].name, "value");
    ck_assert_uint_eq(ops[1].reply_count, 1);
    ck_assert_str_eq(ops[1].reply[0].name, "AddResult");
    ck_assert_str_eq(ops[5].operation, "PowerOff");
    wfm_msg_ops_free(ops, n);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_msg_creating_message_then_replies_by_request)
{
    wfm_test_run r;
    wfm_test_open_file(&r, DIR "calculator.xaml");
    wf_value on = message(1, NULL, wf_null());
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_msg_deliver_initial(r.inst, "ICalculator.PowerOn", &on, &err), WF_OK);
    wf_value_release(&on);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE); /* took PowerOn without waiting */
    expect_reply(&r, 1, NULL, 0);
    call(&r, "Add", 2, 5);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    expect_reply(&r, 2, "AddResult", 5);
    wfm_test_save_restore(&r); /* idle on the Receives: as another process would load it */
    call(&r, "Multiply", 3, 4);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    expect_reply(&r, 3, "MultiplyResult", 20);
    call(&r, "PowerOff", 4, 0);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    expect_reply(&r, 4, "PowerOffResult", 20);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_msg_without_creating_message_waits_on_receive)
{
    wfm_test_run r;
    wfm_test_open_file(&r, DIR "calculator.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_uint_eq(wfm_instance_bookmark_count(r.inst), 1);
    ck_assert_str_eq(wfm_instance_bookmark_name(r.inst, 0), "ICalculator.PowerOn");
    wf_value reply = wf_null();
    ck_assert_int_eq(wfm_msg_take_reply(r.inst, 1, &reply), WF_E_NOTFOUND);
    ck_assert(wf_is_null(&reply));
    wfm_test_close(&r);
}
END_TEST

/* A message resumed without a request id (`wfbridge resume`) wants no reply: SendReply
 * completes and drops it. */
START_TEST(test_msg_message_without_request_gets_no_reply)
{
    wfm_test_run r;
    wfm_test_open_file(&r, DIR "calculator.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wf_value on = message(0, NULL, wf_null());
    wfm_test_resume(&r, "ICalculator.PowerOn", &on);
    wf_value_release(&on);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    call(&r, "Add", 0, 3);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wf_value reply = wf_null();
    ck_assert_int_eq(wfm_msg_take_reply(r.inst, 0, &reply), WF_E_NOTFOUND);
    call(&r, "PowerOff", 0, 0);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_msg_divide_by_zero_faults_the_instance)
{
    wfm_test_run r;
    wfm_test_open_file(&r, DIR "calculator.xaml");
    wf_value on = message(1, NULL, wf_null());
    ck_assert_int_eq(wfm_msg_deliver_initial(r.inst, "ICalculator.PowerOn", &on, NULL), WF_OK);
    wf_value_release(&on);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    call(&r, "Divide", 2, 0);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    wf_value reply = wf_null();
    ck_assert_int_eq(wfm_msg_take_reply(r.inst, 2, &reply), WF_E_NOTFOUND); /* no reply */
    ck_assert_str_eq(wfm_instance_fault(r.inst)->type->name, "DivideByZeroException");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_msg_bad_correlates_on)
{
    wfm_test_load_error(DIR "bad/", "correlates_on_unknown_parameter.xaml", WF_E_NAME, 9, 5,
                        "orderNo");
}
END_TEST

START_TEST(test_msg_bad_request_reference)
{
    wfm_test_load_error(DIR "bad/", "sendreply_request_not_reference.xaml", WF_E_SCHEMA, 7, 5,
                        "x:Reference");
}
END_TEST

START_TEST(test_msg_bad_parameter_without_key)
{
    wfm_test_load_error(DIR "bad/", "receive_parameter_without_key.xaml", WF_E_SCHEMA, 9, 5,
                        "x:Key");
}
END_TEST

START_TEST(test_msg_bad_operation_name)
{
    wfm_test_load_error(DIR "bad/", "contract_name_with_slash.xaml", WF_E_SCHEMA, 5, 3,
                        "OperationName");
}
END_TEST

/* WF4's WorkflowService Name on the root names the service (serve's WSDL); its
 * ConfigurationName is accepted and has nothing to configure. */
START_TEST(test_msg_workflow_service_name)
{
    static const char xaml[] =
        "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\"\n"
        " xmlns:p=\"http://schemas.microsoft.com/netfx/2009/xaml/servicemodel\"\n"
        " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\"\n"
        " p:WorkflowService.Name=\"GreetingService\" "
        "p:WorkflowService.ConfigurationName=\"Conv.GreetingService\">\n"
        "<p:Receive OperationName=\"Greet\" ServiceContractName=\"IGreeting\" "
        "CanCreateInstance=\"True\" /></Activity>";
    wfm_test_run r;
    wfm_test_open_mem(&r, "greeting.xaml", xaml);
    ck_assert_str_eq(wfm_definition_service_name(r.def), "GreetingService");
    wfm_test_close(&r);
    wfm_test_open_file(&r, DIR "calculator.xaml");
    ck_assert_ptr_null(wfm_definition_service_name(r.def));
    wfm_test_close(&r);
}
END_TEST

Suite *modern_msg_suite(void)
{
    Suite *s = suite_create("modern_msg");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_msg_ops_of_calculator);
    tcase_add_test(tc, test_msg_creating_message_then_replies_by_request);
    tcase_add_test(tc, test_msg_without_creating_message_waits_on_receive);
    tcase_add_test(tc, test_msg_message_without_request_gets_no_reply);
    tcase_add_test(tc, test_msg_divide_by_zero_faults_the_instance);
    tcase_add_test(tc, test_msg_workflow_service_name);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_msg_bad_correlates_on);
    tcase_add_test(bad, test_msg_bad_request_reference);
    tcase_add_test(bad, test_msg_bad_parameter_without_key);
    tcase_add_test(bad, test_msg_bad_operation_name);
    suite_add_tcase(s, bad);
    return s;
}

/* test_services.c — WF 3.5 workflow-service activities in the legacy model
 * (legacy/wfl_act_service.c): a ReceiveActivity waits on "Contract.Operation", binds the
 * message's parameters, runs its body, also as the first child of an EventDriven, and
 * survives a save and restore while it waits; SendActivity and InvokeWebService raise their
 * handler and fault at their own line. */
#include <check.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../wf_test_util.h"
#include "test_exec.h"

/* Replace e->ex by an executor restored from its own blob. */
static void reload(xt_env *e)
{
    void *blob = NULL;
    size_t len = 0;
    ck_assert_int_eq(wfl_exec_save(e->ex, &blob, &len, NULL), WF_OK);
    wfl_exec_destroy(e->ex);
    e->ex = NULL;
    wfl_exec_opts o = xt_opts(e);
    ck_assert_int_eq(wfl_exec_restore(e->def, &o, blob, len, &e->ex, NULL), WF_OK);
    wf_free(blob);
}

static void check_send_fault(xt_env *e)
{
    const wf_value *exc = wfl_exec_exception(e->ex);
    ck_assert_ptr_nonnull(exc);
    ck_assert_str_eq(exc->type->name, "NotSupportedException");
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "IShipper.Dispatch"));
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "ShipperEndpoint"));
    ck_assert_int_eq(xt_int(e, "Count"), 1); /* BeforeSend ran first */
}

START_TEST(test_receive_binds_the_message_and_runs_its_body)
{
    xt_env e;
    xt_load(&e, "services.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert(xt_waits_on(&e, "IScoring.Submit"));
    ck_assert_str_eq(xt_str(&e, "Log"), "");
    reload(&e);
    ck_assert_int_eq(xt_deliver(&e, "IScoring.Submit", "{\"approver\": \"ana\", \"score\": 7}"),
                     WFL_EXEC_IDLE);
    ck_assert_str_eq(xt_str(&e, "Approver"), "ana");
    ck_assert_int_eq(xt_int(&e, "Score"), 7);
    ck_assert_int_eq(xt_int(&e, "Sum"), 0); /* the reply's (ReturnValue) is not a request */
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    ck_assert(xt_waits_on(&e, "IScoring.Confirm")); /* TypedOperationInfo: the contract type */
    ck_assert_int_eq(xt_deliver(&e, "IScoring.Confirm", NULL), WFL_EXEC_FAULTED);
    ck_assert_str_eq(xt_str(&e, "Log"), "ACB"); /* OperationValidation, then the branch */
    check_send_fault(&e);
    xt_free(&e);
}
END_TEST

START_TEST(test_a_delay_beats_a_receive_in_a_listen)
{
    xt_env e;
    xt_load(&e, "services.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_deliver(&e, "IScoring.Submit", "{\"approver\": \"bo\"}"), WFL_EXEC_IDLE);
    e.now += 300000; /* the 0.2 s Delay fires */
    wfl_exec_state st;
    ck_assert_int_eq(wfl_exec_fire_timers(e.ex, e.now, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_FAULTED);
    ck_assert_str_eq(xt_str(&e, "Log"), "AD");
    ck_assert(!xt_waits_on(&e, "IScoring.Confirm"));
    check_send_fault(&e);
    xt_free(&e);
}
END_TEST

START_TEST(test_invoke_web_service_faults_at_its_line)
{
    xt_env e;
    xt_load(&e, "web_service.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_FAULTED);
    const wf_value *exc = wfl_exec_exception(e.ex);
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "QuoteService"));
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "GetQuote"));
    ck_assert_int_eq(xt_int(&e, "Count"), 1); /* Invoking ran first */
    xt_free(&e);
}
END_TEST

START_TEST(test_operation_info_with_a_stray_element_is_located)
{
    const char *dir = wf_test_tmpdir();
    const char *path =
        wf_test_write_file(dir, "stray.xoml",
                           "<SequentialWorkflowActivity x:Name=\"W\" "
                           "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
                           "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
                           "  <ReceiveActivity x:Name=\"r\">\n"
                           "    <ReceiveActivity.ServiceOperationInfo>\n"
                           "      <OperationInfo Name=\"Op\" ContractName=\"IC\">\n"
                           "        <CodeActivity x:Name=\"c\" />\n"
                           "      </OperationInfo>\n"
                           "    </ReceiveActivity.ServiceOperationInfo>\n"
                           "  </ReceiveActivity>\n"
                           "</SequentialWorkflowActivity>\n");
    wf_types *types = wf_types_create();
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = types;
    wfl_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_definition_load_file(&lo, path, &def, &err), WF_E_SCHEMA);
    ck_assert_ptr_null(def);
    ck_assert_uint_eq(err.line, 5);
    ck_assert_uint_eq(err.col, 9);
    ck_assert_ptr_nonnull(strstr(err.message, "CodeActivity"));
    wf_types_destroy(types);
    wf_test_tmpdir_remove(dir);
}
END_TEST

Suite *services_suite(void)
{
    Suite *s = suite_create("legacy_services");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_receive_binds_the_message_and_runs_its_body);
    tcase_add_test(core, test_a_delay_beats_a_receive_in_a_listen);
    tcase_add_test(core, test_invoke_web_service_faults_at_its_line);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_operation_info_with_a_stray_element_is_located);
    suite_add_tcase(s, bad);
    return s;
}

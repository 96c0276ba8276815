/* test_statemachine.c — StateMachineWorkflowActivity on the legacy executor: StateInitialization
 * and StateFinalization around SetState moves, nested states whose parent's event handlers stay
 * active in the substates, one handler at a time, the host's SetStateQueue, and
 * CompletedStateName completing the workflow (docs/semantics.md §3). */
#include <check.h>
#include <string.h>

#include "../wf_test_util.h"
#include "test_exec.h"

START_TEST(test_events_move_through_states_to_completion)
{
    xt_env e;
    xt_load(&e, "statemachine.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_str_eq(xt_str(&e, "Log"), "A"); /* waiting's StateInitialization */
    ck_assert(xt_waits_on(&e, "ITestService.Approved"));
    ck_assert(!xt_waits_on(&e, "ITestService.Scored"));
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"alice\""), WFL_EXEC_IDLE);
    /* SetState(review): waiting's StateFinalization (B), then review's initialization (C) */
    ck_assert_str_eq(xt_str(&e, "Log"), "ABC");
    ck_assert(xt_waits_on(&e, "ITestService.Scored"));
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Scored", "{\"Approver\":\"bob\",\"Score\":5}"),
                     WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_int(&e, "Count"), 1); /* no SetState: still in review */
    ck_assert_str_eq(xt_str(&e, "Reviewer"), "bob");
    ck_assert_int_eq(xt_int(&e, "Score"), 5);
    ck_assert(xt_waits_on(&e, "ITestService.Scored"));
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"zed\""), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Approver"), "alice");
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "waiting:Closed/Succeeded,"));
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "ExecFlow:Closed/Succeeded,"));
    xt_free(&e);
}
END_TEST

START_TEST(test_parent_state_handler_is_active_in_substates)
{
    xt_env e;
    xt_load(&e, "statemachine.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    int64_t due;
    ck_assert(wfl_exec_next_timer(e.ex, &due));
    ck_assert_int_eq(due, e.now + 3600LL * 1000000);
    wfl_exec_state st;
    ck_assert_int_eq(wfl_exec_fire_timers(e.ex, due, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_CLOSED);
    /* active's onTimeout ran (D), then waiting's StateFinalization (B) */
    ck_assert_str_eq(xt_str(&e, "Log"), "ADB");
    xt_free(&e);
}
END_TEST

START_TEST(test_host_forces_a_transition_through_set_state_queue)
{
    xt_env e;
    xt_load(&e, "statemachine.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert(xt_waits_on(&e, "SetStateQueue"));
    ck_assert_int_eq(xt_deliver(&e, "SetStateQueue", "\"review\""), WFL_EXEC_IDLE);
    ck_assert_str_eq(xt_str(&e, "Log"), "ABC");
    ck_assert(xt_waits_on(&e, "ITestService.Scored"));
    ck_assert_int_eq(xt_deliver(&e, "SetStateQueue", "\"done\""), WFL_EXEC_CLOSED);
    xt_free(&e);
}
END_TEST

START_TEST(test_set_state_to_unknown_state_faults)
{
    xt_env e;
    xt_load(&e, "statemachine.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_deliver(&e, "SetStateQueue", "\"nowhere\""), WFL_EXEC_FAULTED);
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(wfl_exec_exception(e.ex)), "nowhere"));
    xt_free(&e);
}
END_TEST

Suite *legacy_statemachine_suite(void)
{
    Suite *s = suite_create("legacy_statemachine");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_events_move_through_states_to_completion);
    tcase_add_test(core, test_parent_state_handler_is_active_in_substates);
    tcase_add_test(core, test_host_forces_a_transition_through_set_state_queue);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_set_state_to_unknown_state_faults);
    suite_add_tcase(s, bad);
    return s;
}

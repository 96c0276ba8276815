/* test_activities.c — the legacy activity catalogue on the executor: While's fresh clone per
 * iteration, Replicator (parallel with ChildInitialized/ChildCompleted, sequence with
 * UntilCondition), Listen (first event wins), Delay on the host clock, HandleExternalEvent
 * payloads, CallExternalMethod, Policy with .rules, CAG, InvokeWorkflow, TransactionScope. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../wf_test_util.h"
#include "test_exec.h"

START_TEST(test_while_iteration_state_dies_with_its_clone)
{
    xt_env e;
    xt_load(&e, "basic.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Limit", "3");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Count"), 3);
    /* counter1.Local starts at 0 in every iteration's clone: 1, never 2 or 3 */
    ck_assert_int_eq(xt_int(&e, "LastSeen"), 1);
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "counter1:Closed/Succeeded,"));
    wfl_exec_stats stats;
    wfl_exec_stats_get(e.ex, &stats);
    ck_assert_uint_eq(stats.contexts_created, 3); /* one clone per iteration */
    ck_assert_uint_eq(stats.native_calls, e.native_count);
    ck_assert_uint_gt(stats.work_items, stats.activities_executed);
    xt_free(&e);
}
END_TEST

START_TEST(test_replicator_children_see_their_instance_data)
{
    xt_env e;
    xt_load(&e, "replicator.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Items", "[\"ann\",\"bob\",\"cy\"]");
    xt_set(&e, "Limit", "2");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    /* parallel: every ChildInitialized first, then the children, ChildCompleted per child;
     * the handler parameters named after the child's DPs read the clone */
    ck_assert_ptr_nonnull(strstr(e.calls.data, "reviewers,reviewers,reviewers,review,review,review,"
                                               "reviewers,reviewers,reviewers,"));
    ck_assert(strncmp(xt_str(&e, "Log"), "ann;bob;cy;", 11) == 0);
    /* sequence mode stops when the UntilCondition holds after the second child */
    ck_assert_int_eq(xt_int(&e, "Count"), 2);
    ck_assert_str_eq(xt_str(&e, "Log"), "ann;bob;cy;D");
    xt_free(&e);
}
END_TEST

START_TEST(test_replicator_with_no_data_closes)
{
    xt_env e;
    xt_load(&e, "replicator.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Items", "[]");
    xt_set(&e, "Flag", "true"); /* the second replicator's Until holds at start */
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_uint_eq(e.calls.len, strlen("inTurn,"));
    xt_free(&e);
}
END_TEST

/* Each Replicator raises its own child events, also while the other one's children run. */
START_TEST(test_nested_replicators_raise_their_own_child_events)
{
    xt_env e;
    xt_load(&e, "replicator_nested.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Items", "[\"x\",\"y\"]");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    /* per outer child: its ChildInitialized (A), the inner ones' (C C), their ChildCompleted
     * (D D), then the outer ChildCompleted (B) */
    ck_assert_str_eq(xt_str(&e, "Log"), "ACCDDBACCDDB");
    ck_assert_int_eq(xt_int(&e, "Count"), 4);
    xt_free(&e);
}
END_TEST

/* A parallel Replicator run again in the same instance: each round's clones are fresh
 * contexts, also those made from blocks an earlier round freed (more than a node keeps). */
START_TEST(test_parallel_replicator_rounds_each_clone_every_item)
{
    xt_env e;
    xt_load(&e, "replicator_rounds.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Items", "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\","
                        "\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\",\"r\",\"s\",\"t\"]");
    xt_set(&e, "Limit", "50");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Count"), 60); /* three rounds of 20 */
    wfl_exec_stats stats;
    wfl_exec_stats_get(e.ex, &stats);
    ck_assert_uint_eq(stats.contexts_created, 3 + 60); /* one per round, one per item */
    xt_free(&e);
}
END_TEST

START_TEST(test_listen_first_event_wins)
{
    xt_env e;
    xt_load(&e, "listen.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert(xt_waits_on(&e, "ITestService.Approved"));
    int64_t due;
    ck_assert(wfl_exec_next_timer(e.ex, &due));
    ck_assert_int_eq(due, e.now + 200000);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "{\"Approver\": \"ann\"}"),
                     WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Approver"), "ann");
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    ck_assert(!wfl_exec_next_timer(e.ex, &due));
    /* the losing branch never started */
    ck_assert_ptr_null(strstr(e.statuses.data, "onTimeout:"));
    ck_assert_ptr_null(strstr(e.statuses.data, "timedOut:"));
    /* CallExternalMethod: Notify(Log) returned strlen into Score */
    ck_assert_int_eq(xt_int(&e, "Score"), 1);
    xt_free(&e);
}
END_TEST

START_TEST(test_delay_fires_on_the_host_clock)
{
    xt_env e;
    xt_load(&e, "listen.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    wfl_exec_state st;
    ck_assert_int_eq(wfl_exec_fire_timers(e.ex, e.now + 199999, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_IDLE);
    ck_assert_int_eq(wfl_exec_fire_timers(e.ex, e.now + 200000, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "B");
    ck_assert_str_eq(xt_str(&e, "Approver"), "");
    ck_assert_ptr_null(strstr(e.statuses.data, "gotApproval:"));
    xt_free(&e);
}
END_TEST

START_TEST(test_timers_fire_earliest_first)
{
    xt_env e;
    xt_load(&e, "timers.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    int64_t due;
    ck_assert(wfl_exec_next_timer(e.ex, &due));
    ck_assert_int_eq(due, e.now + 1000000);
    ck_assert_uint_eq(wfl_exec_queue_count(e.ex), 3);
    ck_assert(wfl_exec_queue_is_timer(e.ex, 0));
    wfl_exec_state st;
    ck_assert_int_eq(wfl_exec_fire_timers(e.ex, e.now + 1000000, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_IDLE);
    ck_assert_str_eq(xt_str(&e, "Log"), "BC"); /* equal due times: first set, first fired */
    ck_assert(wfl_exec_next_timer(e.ex, &due));
    ck_assert_int_eq(due, e.now + 2000000);
    ck_assert_int_eq(wfl_exec_fire_timers(e.ex, e.now + 5000000, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "BCA");
    ck_assert(!wfl_exec_next_timer(e.ex, &due));
    xt_free(&e);
}
END_TEST

START_TEST(test_event_payload_bare_value_for_one_parameter)
{
    xt_env e;
    xt_load(&e, "cancel.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_str_eq(wfl_exec_queue_find(e.ex, "Approved"), "ITestService.Approved");
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"zoe\""), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Approver"), "zoe");
    ck_assert_str_eq(xt_str(&e, "Log"), "AC");
    xt_free(&e);
}
END_TEST

START_TEST(test_policy_and_rule_conditions)
{
    xt_env e;
    xt_load(&e, "policy.xoml", "policy.rules");
    xt_start(&e);
    xt_set(&e, "Count", "4");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    ck_assert_int_eq(xt_int(&e, "Sum"), 8);     /* Double (priority 10) */
    ck_assert_int_eq(xt_int(&e, "Score"), 108); /* Bonus reads Sum */
    xt_free(&e);

    xt_load(&e, "policy.xoml", "policy.rules");
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "B");
    ck_assert_int_eq(xt_int(&e, "Sum"), -1);
    ck_assert_int_eq(xt_int(&e, "Score"), 0);
    xt_free(&e);
}
END_TEST

START_TEST(test_cag_reruns_children_until)
{
    xt_env e;
    xt_load(&e, "cag.xoml", "cag.rules");
    xt_start(&e);
    xt_set(&e, "Limit", "3");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Count"), 3);
    ck_assert(xt_bool(&e, "Flag"));
    ck_assert_str_eq(xt_str(&e, "Log"), "A"); /* no WhenCondition: exactly once */
    xt_free(&e);
}
END_TEST

static wf_status start_child(void *ud, const char *type, const char *const *names,
                             const wf_value *values, size_t count, char *id_out, size_t id_size,
                             wf_error *err)
{
    (void)err;
    ck_assert_str_eq(type, "ChildFlow");
    ck_assert_uint_eq(count, 1);
    ck_assert_str_eq(names[0], "Who");
    ck_assert_str_eq(wf_value_str(&values[0]), "ann");
    (*(int *)ud)++;
    snprintf(id_out, id_size, "child-1");
    return WF_OK;
}

START_TEST(test_invoke_workflow_uses_the_host)
{
    xt_env e;
    xt_load(&e, "invoke.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_FAULTED); /* no host callback: a clear fault */
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(wfl_exec_exception(e.ex)), "ChildFlow"));
    wfl_exec_destroy(e.ex);
    int started = 0;
    wfl_exec_opts o = xt_opts(&e);
    o.invoke_workflow = start_child;
    o.invoke_ud = &started;
    ck_assert_int_eq(wfl_exec_create(e.def, NULL, &o, &e.ex, NULL), WF_OK);
    xt_set(&e, "Approver", "ann");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_int_eq(started, 1);
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    xt_free(&e);
}
END_TEST

static wf_status count_persist(void *ud, wfl_exec *ex, wf_error *err)
{
    (void)ex;
    (void)err;
    (*(int *)ud)++;
    return WF_OK;
}

START_TEST(test_transaction_scope_is_a_persistence_point)
{
    xt_env e;
    xt_load(&e, "txn.xoml", NULL);
    int persisted = 0;
    wfl_exec_opts o = xt_opts(&e);
    o.persist = count_persist;
    o.persist_ud = &persisted;
    ck_assert_int_eq(wfl_exec_create(e.def, NULL, &o, &e.ex, NULL), WF_OK);
    xt_set(&e, "Limit", "2");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(persisted, 1);
    ck_assert(wfl_exec_take_persist_request(e.ex));
    ck_assert(!wfl_exec_take_persist_request(e.ex));
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"ann\""), WFL_EXEC_CLOSED);
    ck_assert_int_eq(persisted, 2); /* the root closed */
    ck_assert_str_eq(xt_str(&e, "Log"), "AB");
    xt_free(&e);
}
END_TEST

/* ---- nomem: a failed allocation anywhere is WF_E_NOMEM, never a silently different run --- */
typedef struct nomem_case {
    xt_env *e;
    const char *set_name, *set_value; /* one input */
    const char *queue, *payload;      /* one event after the first run, or NULL */
    const char *want_log;             /* expected Log when everything succeeded */
} nomem_case;

static wf_status run_case(void *ud)
{
    nomem_case *c = ud;
    wfl_exec *ex = NULL;
    wfl_exec_state st = WFL_EXEC_CREATED;
    wf_value v = wf_null(), log = wf_null();
    wf_status rc = wfl_exec_create(c->e->def, NULL, NULL, &ex, NULL);
    if (rc == WF_OK && c->set_name)
        rc = wfl_exec_set_input_text(ex, c->set_name, c->set_value, NULL);
    if (rc == WF_OK)
        rc = wfl_exec_run(ex, &st, NULL);
    if (rc == WF_OK && c->queue) {
        rc = wf_json_parse(c->e->types, c->payload, strlen(c->payload), &v, NULL);
        if (rc == WF_OK)
            rc = wfl_exec_deliver(ex, c->queue, &v, &st, NULL);
    }
    if (rc == WF_OK)
        rc = wfl_exec_output(ex, "Log", &log, NULL);
    if (rc == WF_OK) {
        ck_assert_msg(st == WFL_EXEC_CLOSED, "state %s", wfl_exec_state_name(st));
        ck_assert_str_eq(wf_value_str(&log), c->want_log);
    }
    wf_value_release(&v);
    wf_value_release(&log);
    wfl_exec_destroy(ex);
    return rc;
}

START_TEST(test_replicator_and_state_machine_survive_allocation_failures)
{
    xt_env e;
    xt_load(&e, "replicator.xoml", NULL);
    nomem_case rep = {&e, "Items", "[\"x\",\"y\"]", NULL, NULL, "x;y;"};
    ck_assert_uint_gt(wf_test_nomem_loop(run_case, &rep, 5000), 0);
    xt_free(&e);
    xt_load(&e, "statemachine.xoml", NULL);
    nomem_case sm = {&e, NULL, NULL, "SetStateQueue", "\"done\"", "AB"};
    ck_assert_uint_gt(wf_test_nomem_loop(run_case, &sm, 5000), 0);
    xt_free(&e);
    xt_load(&e, "cancel.xoml", NULL);
    nomem_case ev = {&e, NULL, NULL, "ITestService.Approved", "\"ann\"", "AC"};
    ck_assert_uint_gt(wf_test_nomem_loop(run_case, &ev, 5000), 0);
    xt_free(&e);
    xt_load(&e, "rollback.xoml", NULL);
    nomem_case rb = {&e, "Flag", "true", NULL, NULL, "BC"};
    ck_assert_uint_gt(wf_test_nomem_loop(run_case, &rb, 5000), 0);
    xt_free(&e);
    xt_load(&e, "compensate.xoml", NULL);
    nomem_case comp = {&e, "Limit", "2", NULL, NULL, "21DA"};
    ck_assert_uint_gt(wf_test_nomem_loop(run_case, &comp, 5000), 0);
    xt_free(&e);
}
END_TEST

START_TEST(test_transaction_scope_fault_rolls_back_to_its_checkpoint)
{
    xt_env e;
    xt_load(&e, "rollback.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Flag", "true");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    /* inTxn and txnCounter ran, but their writes were undone with the transaction */
    ck_assert_ptr_nonnull(strstr(e.calls.data, "inTxn,txnCounter,"));
    ck_assert_str_eq(xt_str(&e, "Log"), "BC");
    ck_assert_int_eq(xt_int(&e, "LastSeen"), 0);
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "txn:Closed/Faulted,"));
    wf_value caught;
    ck_assert_int_eq(wfl_exec_output(e.ex, "Caught", &caught, NULL), WF_OK);
    ck_assert_str_eq(caught.type->name, "InvalidOperationException");
    wf_value_release(&caught);
    xt_free(&e);

    xt_load(&e, "rollback.xoml", NULL); /* no fault: the scope commits */
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "AC");
    ck_assert_int_eq(xt_int(&e, "LastSeen"), 1);
    xt_free(&e);
}
END_TEST

Suite *legacy_activities_suite(void)
{
    Suite *s = suite_create("legacy_activities");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_while_iteration_state_dies_with_its_clone);
    tcase_add_test(core, test_replicator_children_see_their_instance_data);
    tcase_add_test(core, test_replicator_with_no_data_closes);
    tcase_add_test(core, test_nested_replicators_raise_their_own_child_events);
    tcase_add_test(core, test_parallel_replicator_rounds_each_clone_every_item);
    tcase_add_test(core, test_listen_first_event_wins);
    tcase_add_test(core, test_delay_fires_on_the_host_clock);
    tcase_add_test(core, test_timers_fire_earliest_first);
    tcase_add_test(core, test_event_payload_bare_value_for_one_parameter);
    tcase_add_test(core, test_policy_and_rule_conditions);
    tcase_add_test(core, test_cag_reruns_children_until);
    tcase_add_test(core, test_invoke_workflow_uses_the_host);
    tcase_add_test(core, test_transaction_scope_is_a_persistence_point);
    tcase_add_test(core, test_transaction_scope_fault_rolls_back_to_its_checkpoint);
    suite_add_tcase(s, core);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 120);
    tcase_add_test(nomem, test_replicator_and_state_machine_survive_allocation_failures);
    suite_add_tcase(s, nomem);
    return s;
}

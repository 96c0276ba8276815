/* test_fidelity.c — the legacy runtime behaves like WF3 itself where it once differed (each
 * case is written from WF3's behaviour as docs/wf3-behaviour.md records it, with its source):
 * rule faults and their exception types, unchecked rule arithmetic, .NET methods in rules,
 * verbatim strings, compensation of scopes and children, the parallel Replicator, the
 * validations WF3 applies when it loads a file, and HandleExternalEvent's e and sender. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_exec.h"
#include "../wf_test_util.h"
#include "test_exec.h"

/* Run `file` (with rule_faults.rules) until it stops; the Log and the caught exception. */
static void run_caught(xt_env *e, const char *file, const char *text, wfl_exec_state want)
{
    xt_load(e, file, "rule_faults.rules");
    xt_start(e);
    if (text)
        xt_set(e, "Text", text);
    ck_assert_int_eq(xt_run(e), want);
}

static const char *caught_type(xt_env *e)
{
    wf_value v = wf_null();
    ck_assert_int_eq(wfl_exec_output(e->ex, "Caught", &v, NULL), WF_OK);
    snprintf(e->text, sizeof e->text, "%s", wf_is_null(&v) ? "null" : v.type->name);
    wf_value_release(&v);
    return e->text;
}

/* ---- 1. a null target in a rule is RuleEvaluationException ------------------------------- */
/* Handlers for NullReferenceException and SystemException do not match it; Exception does. */
START_TEST(test_null_target_in_rule_is_rule_evaluation_exception)
{
    xt_env e;
    run_caught(&e, "rule_null_target.xoml", NULL, WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "C");
    ck_assert_str_eq(caught_type(&e), "RuleEvaluationException");
    xt_free(&e);
}
END_TEST

/* ---- 2. a method called by a rule that throws: TargetInvocationException ------------------ */
START_TEST(test_method_fault_in_rule_is_wrapped_in_target_invocation)
{
    xt_env e;
    run_caught(&e, "rule_method_throws.xoml", "ab", WFL_EXEC_CLOSED);
    /* not the ArgumentOutOfRangeException handler, not SystemException: ApplicationException */
    ck_assert_str_eq(xt_str(&e, "Log"), "C");
    ck_assert_str_eq(caught_type(&e), "TargetInvocationException");
    wf_value v = wf_null();
    ck_assert_int_eq(wfl_exec_output(e.ex, "Caught", &v, NULL), WF_OK);
    /* .NET's message for "ab".Substring(5), which the modern runtime gives too */
    ck_assert_str_eq(wf_value_exc_message(&v),
                     "Method String.Substring threw an exception: startIndex cannot be larger "
                     "than length of string. (Parameter 'startIndex')");
    wf_value_release(&v);
    xt_free(&e);
}
END_TEST

/* An operator's fault is not a method call: DivideByZeroException reaches SystemException. */
START_TEST(test_operator_fault_in_rule_is_not_wrapped)
{
    xt_env e;
    run_caught(&e, "rule_divide_by_zero.xoml", NULL, WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "B");
    ck_assert_str_eq(caught_type(&e), "DivideByZeroException");
    xt_free(&e);
}
END_TEST

/* Run `file` (no rules, no inputs): it ends in `want` with `log` in Log. */
static void run_logged(const char *file, wfl_exec_state want, const char *log)
{
    xt_env e;
    xt_load(&e, file, NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), want);
    ck_assert_str_eq(xt_str(&e, "Log"), log);
    xt_free(&e);
}

/* ---- 3. Compensate may name the activity that owns the handler ----------------------------- */
/* The CompensationHandler of 'outer' compensates 'outer' itself: its completed compensatable
 * children are undone newest first, then the handler goes on. */
START_TEST(test_compensate_may_target_the_handlers_owner)
{
    run_logged("compensate_owner.xoml", WFL_EXEC_FAULTED, "AB219");
}
END_TEST

/* As WF3's source has it (not as often believed, children after the handler): a
 * CompensationHandler runs alone (its children stay uncompensated); without one, the
 * children are compensated (default). The unhandled fault compensates plainOuter (default:
 * "2"), then outer (its handler: "9"). */
START_TEST(test_handler_alone_compensates_nothing_else)
{
    run_logged("compensate_handler_only.xoml", WFL_EXEC_FAULTED, "AB29");
}
END_TEST

/* A Compensate naming `outer`: its handler compensates `second`, then the children it left
 * (third, then first) are compensated, newest first; the default compensation above leaves
 * them. */
START_TEST(test_compensate_then_children_the_handler_left)
{
    run_logged("compensate_handler_then_rest.xoml", WFL_EXEC_CLOSED, "PQRqorpF");
}
END_TEST

/* ---- 7. a parallel Replicator handles each child's close on its own ----------------------- */
/* Three children close before the replicator hears any: the UntilCondition (Count >= 1)
 * holds after the first ChildCompleted, yet the other two still get theirs (each is Tick). */
START_TEST(test_parallel_replicator_raises_child_completed_for_every_child)
{
    xt_env e;
    xt_load(&e, "replicator_until.xoml", "replicator_until.rules");
    xt_start(&e);
    xt_set(&e, "Items", "[\"ann\",\"bob\",\"cy\"]");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Count"), 3);
    ck_assert_ptr_nonnull(strstr(e.calls.data, "review,review,review,reviewers,reviewers,reviewers,"));
    xt_free(&e);
}
END_TEST

/* ---- 10. HandleExternalEvent binds the delegate's parameters, e and sender ------------------ */
static const char *record_field(xt_env *e, const char *prop, const char *field)
{
    wf_value v = wf_null();
    ck_assert_int_eq(wfl_exec_output(e->ex, prop, &v, NULL), WF_OK);
    ck_assert_int_eq(v.type->kind, WF_K_RECORD);
    const wf_value *f = wf_value_record_get(&v, field);
    wf_buf b;
    wf_buf_init(&b);
    if (f)
        ck_assert(wf_value_to_text(f, &b));
    snprintf(e->text, sizeof e->text, "%s", f ? b.data : "(none)");
    wf_buf_fini(&b);
    wf_value_release(&v);
    return e->text;
}

/* e is a record of the event's declared parameters, read on through Path=Args.Approver;
 * sender is the service's name; an event whose one parameter is named e passes it as is. */
START_TEST(test_event_binds_e_and_sender)
{
    xt_env e;
    xt_load(&e, "event_args.xoml", NULL);
    ck_assert_uint_eq(wfl_definition_warning_count(e.def), 0);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Scored", "{\"Approver\":\"ann\",\"Score\":7}"),
                     WFL_EXEC_IDLE);
    ck_assert_str_eq(record_field(&e, "Args", "Approver"), "ann");
    ck_assert_str_eq(record_field(&e, "Args", "Score"), "7");
    ck_assert_str_eq(xt_str(&e, "Sender"), "ITestService");
    ck_assert_str_eq(xt_str(&e, "Log"), "ann!");
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Carried", "{\"Ticket\":\"T-1\"}"),
                     WFL_EXEC_CLOSED);
    ck_assert_str_eq(record_field(&e, "Args", "Ticket"), "T-1");
    xt_free(&e);
}
END_TEST

/* ParameterName="Score" (the parameter's own name) is a wfbridge extension: it still works,
 * with a load warning that WF3 refuses it. */
START_TEST(test_event_parameter_by_its_own_name_is_a_warned_extension)
{
    xt_env e;
    xt_load(&e, "event_by_name.xoml", NULL);
    ck_assert_uint_eq(wfl_definition_warning_count(e.def), 1);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Scored", "{\"Approver\":\"ann\",\"Score\":7}"),
                     WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Score"), 7);
    xt_free(&e);
}
END_TEST

/* ---- TransactionScope without a persistence service ------------------------------------------ */
/* WF3 runs the scope's body, then persisting the PersistOnClose scope fails and the instance
 * terminates with InvalidOperationException; nothing after the scope runs. */
START_TEST(test_transaction_scope_without_persistence_terminates)
{
    xt_env e;
    xt_load(&e, "txn.xoml", NULL);
    wfl_exec_opts o = xt_opts(&e);
    o.no_persistence = true;
    ck_assert_int_eq(wfl_exec_create(e.def, NULL, &o, &e.ex, NULL), WF_OK);
    xt_set(&e, "Limit", "2");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_TERMINATED);
    ck_assert_str_eq(xt_str(&e, "Log"), "A");       /* the body ran */
    ck_assert_int_eq(xt_int(&e, "Count"), 0);        /* the While after it did not */
    const wf_value *exc = wfl_exec_exception(e.ex);
    ck_assert_str_eq(exc->type->name, "InvalidOperationException");
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "persistence service"));
    xt_free(&e);
}
END_TEST

/* The first of three waiting children closes: the condition holds, the two still running
 * are canceled (only they), and their closes raise ChildCompleted too. */
START_TEST(test_parallel_replicator_cancels_only_running_children)
{
    xt_env e;
    xt_load(&e, "replicator_cancel.xoml", "replicator_until.rules");
    xt_start(&e);
    xt_set(&e, "Items", "[\"ann\",\"bob\",\"cy\"]");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"ann\""), WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Count"), 3);
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "wait:Closed/Succeeded,"));
    const char *canceled = strstr(e.statuses.data, "wait:Closed/Canceled,");
    ck_assert_ptr_nonnull(canceled);
    ck_assert_ptr_nonnull(strstr(canceled + 1, "wait:Closed/Canceled,"));
    xt_free(&e);
}
END_TEST

/* ---- validation: files WF3 refuses ---------------------------------------------------------- */
static void expect_refused_in(const char *file, const char *rules, const char *where,
                              wf_status code, unsigned line, unsigned col, const char *needle)
{
    xt_env e;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(xt_load_status(&e, file, rules, &err), code);
    ck_assert_ptr_null(e.def);
    WF_ASSERT_ERROR(err, code, line, col, needle);
    ck_assert_ptr_nonnull(strstr(err.file, where));
    xt_free(&e);
}

static void expect_refused(const char *file, wf_status code, unsigned line, unsigned col,
                           const char *needle)
{
    expect_refused_in(file, NULL, file, code, line, col, needle);
}

/* 13. An Int32 member bound to a String property: WF3's bind validator refuses it (no
 * conversion at run time). */
START_TEST(test_bind_of_another_type_is_refused)
{
    expect_refused("bad/bind_int_to_string.xoml", WF_E_TYPE, 2, 31,
                   "'Count' is of type Int32, which cannot be assigned to 'A' of type String");
}
END_TEST

/* 14. Decimal compared with a Double literal: WF3's rule validator has no such comparison
 * (the Decimal literal beside it is fine). */
START_TEST(test_decimal_compared_with_double_is_refused)
{
    expect_refused_in("bad/decimal_vs_double.xoml", "bad/decimal_vs_double.rules",
                      "decimal_vs_double.rules", WF_E_TYPE, 5, 5,
                      "'GreaterThan' cannot be used on operands of types Decimal and Double");
    /* the equality operators too, named as such */
    expect_refused_in("bad/decimal_vs_double.xoml", "bad/decimal_equals_double.rules",
                      "decimal_equals_double.rules", WF_E_TYPE, 5, 5,
                      "equality operator 'ValueEquality' cannot be used on operands of types "
                      "Decimal and Double");
}
END_TEST

/* 12. A target deeper than the enclosing scope's direct compensatable children (here a
 * While's body, compensated by naming the scope instead, as exec/compensate.xoml does). */
START_TEST(test_compensate_deeper_than_the_scope_is_refused)
{
    expect_refused("bad/compensate_deeper_than_scope.xoml", WF_E_SCHEMA, 18, 64,
                   "'step' is not a valid target of CompensateActivity 'undoSteps'");
}
END_TEST

/* 10. Any other ParameterName on an event is refused (the delegate has only sender and e). */
START_TEST(test_event_unknown_parameter_is_refused)
{
    expect_refused("bad/event_unknown_parameter.xoml", WF_E_NAME, 9, 4,
                   "event 'Scored' has no parameter 'Bogus'");
}
END_TEST

/* 13 for ParameterBindings: e (the event arguments, a Record) bound to a String. */
START_TEST(test_event_args_bound_to_another_type_is_refused)
{
    expect_refused("bad/event_args_to_string.xoml", WF_E_TYPE, 6, 6,
                   "ParameterBinding 'e' (Record) cannot be bound to 'Log' of type String");
}
END_TEST

Suite *legacy_fidelity_suite(void)
{
    Suite *s = suite_create("legacy_fidelity");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_null_target_in_rule_is_rule_evaluation_exception);
    tcase_add_test(core, test_method_fault_in_rule_is_wrapped_in_target_invocation);
    tcase_add_test(core, test_operator_fault_in_rule_is_not_wrapped);
    tcase_add_test(core, test_compensate_may_target_the_handlers_owner);
    tcase_add_test(core, test_handler_alone_compensates_nothing_else);
    tcase_add_test(core, test_compensate_then_children_the_handler_left);
    tcase_add_test(core, test_parallel_replicator_raises_child_completed_for_every_child);
    tcase_add_test(core, test_parallel_replicator_cancels_only_running_children);
    tcase_add_test(core, test_event_binds_e_and_sender);
    tcase_add_test(core, test_event_parameter_by_its_own_name_is_a_warned_extension);
    tcase_add_test(core, test_transaction_scope_without_persistence_terminates);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_bind_of_another_type_is_refused);
    tcase_add_test(bad, test_decimal_compared_with_double_is_refused);
    tcase_add_test(bad, test_compensate_deeper_than_the_scope_is_refused);
    tcase_add_test(bad, test_event_unknown_parameter_is_refused);
    tcase_add_test(bad, test_event_args_bound_to_another_type_is_refused);
    suite_add_tcase(s, bad);
    return s;
}

/* test_activities_core.c — the core activities of modern/wfm_act_core.c run on the modern
 * runtime: Sequence, Assign, WriteLine, If, While, DoWhile, ForEach, ParallelForEach, Switch,
 * WaitForEvent; argument evaluation and copy-back, variable scoping, fresh loop-body variables,
 * and run-time faults with the activity's location (docs/semantics.md §5). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_modern.h"

#define HEAD                                                                                       \
    "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "   \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "                                    \
    "xmlns:s=\"clr-namespace:System;assembly=mscorlib\" "                                          \
    "xmlns:scg=\"clr-namespace:System.Collections.Generic;assembly=mscorlib\">"
#define TAIL         "</Activity>"
#define MEMBERS(m)   "<x:Members>" m "</x:Members>"
#define PROP(n, t)   "<x:Property Name=\"" n "\" Type=\"" t "\"/>"
#define VAR(t, n, d) "<Variable x:TypeArguments=\"" t "\" Name=\"" n "\" Default=\"" d "\"/>"
#define WL(t)        "<WriteLine Text=\"" t "\"/>"
#define WLX(e)       "<WriteLine Text=\"[" e "]\"/>"

typedef wfm_test_run fix;

static void fix_open(fix *f, const char *xaml)
{
    wfm_test_open_mem(f, "core.xaml", xaml);
}

static const char *fix_run(fix *f)
{
    return wfm_instance_state_name(wfm_test_go(f));
}

/* Run a workflow without inputs; check its final state and everything it wrote. */
static void expect_output(const char *xaml, const char *state, const char *text)
{
    fix f;
    fix_open(&f, xaml);
    ck_assert_str_eq(fix_run(&f), state);
    ck_assert_str_eq(f.out.data, text);
    wfm_test_close(&f);
}

/* The inline XAML fixtures below are laid out by hand. clang-format off */

/* ---- each activity -------------------------------------------------------------------------- */

START_TEST(test_sequence_runs_children_in_order)
{
    expect_output(HEAD
                  "<Sequence>" WL("1")
                  "  <Sequence>" WL("2") WL("3") "</Sequence>"
                  WL("4")
                  "  <Sequence/>"
                  "</Sequence>" TAIL,
                  "Closed", "1\n2\n3\n4\n");
}
END_TEST

/* Defect #26: an unset DateTime (variable or argument) is default(DateTime), 0001-01-01, as
 * in .NET (DateTime.MinValue), not the Unix epoch. */
START_TEST(test_unset_datetime_is_dotnet_default)
{
    fix f;
    fix_open(&f, HEAD
             MEMBERS(PROP("When", "InArgument(s:DateTime)")
                     PROP("Last", "OutArgument(s:DateTime)"))
             "<Sequence>"
             "  <Sequence.Variables>"
             "    <Variable x:TypeArguments=\"s:DateTime\" Name=\"d\"/>"
             "  </Sequence.Variables>"
             WLX("String.Format(&quot;{0:yyyy-MM-ddTHH:mm:ss} {1:yyyy-MM-ddTHH:mm:ss}&quot;, d, When)")
             WLX("(d == DateTime.MinValue).ToString() + &quot; &quot; + (When == DateTime.MinValue).ToString()")
             "</Sequence>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "0001-01-01T00:00:00 0001-01-01T00:00:00\nTrue True\n");
    const wf_value *last = wfm_instance_output(f.inst, "Last");
    ck_assert_ptr_nonnull(last);
    ck_assert_ptr_eq(last->type, &wf_type_datetime);
    char text[64];
    wf_datetime_format(last->u.i64, text, sizeof text);
    ck_assert_str_eq(text, "0001-01-01T00:00:00Z");
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_assign_writes_out_and_inout_arguments_visible_to_host)
{
    fix f;
    fix_open(&f, HEAD
             MEMBERS(PROP("A", "InArgument(x:Int32)") PROP("B", "InOutArgument(x:Int32)")
                     PROP("C", "OutArgument(x:String)"))
             "<Sequence>"
             "  <Assign x:TypeArguments=\"x:Int32\" To=\"[B]\" Value=\"[B * 10 + A]\"/>"
             "  <Assign>"
             "    <Assign.To><OutArgument x:TypeArguments=\"x:String\">[C]</OutArgument></Assign.To>"
             "    <Assign.Value>"
             "      <InArgument x:TypeArguments=\"x:String\">[&quot;B=&quot; + B]</InArgument>"
             "    </Assign.Value>"
             "  </Assign>"
             "</Sequence>" TAIL);
    wfm_test_input(&f, "A", wf_int32(3));
    wfm_test_input(&f, "B", wf_int32(4));
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_uint_eq(wfm_instance_output_count(f.inst), 2);
    ck_assert_str_eq(wfm_instance_output_name(f.inst, 0), "B");
    ck_assert_int_eq(wfm_instance_output_value(f.inst, 0)->u.i32, 43);
    ck_assert_str_eq(wf_value_str(wfm_instance_output(f.inst, "C")), "B=43");
    ck_assert_ptr_null(wfm_instance_output(f.inst, "A"));
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_argument_default_used_when_host_supplies_none)
{
    fix f;
    fix_open(&f, HEAD
             MEMBERS(PROP("A", "InArgument(x:Int32)") PROP("R", "OutArgument(x:Int32)"))
             "<Assign x:TypeArguments=\"x:Int32\" To=\"[R]\" Value=\"[A + 1]\"/>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_int_eq(wfm_instance_output(f.inst, "R")->u.i32, 1); /* default(Int32) + 1 */
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_writeline_writes_text_and_newline)
{
    expect_output(HEAD
                  "<Sequence>"
                  WL("plain")
                  WLX("&quot;a&quot; + 1 + true")
                  "  <WriteLine/>"
                  "</Sequence>" TAIL,
                  "Closed", "plain\na1True\n\n");
}
END_TEST

START_TEST(test_if_chooses_then_or_else)
{
    expect_output(HEAD
                  "<Sequence>"
                  "  <If Condition=\"[1 &lt; 2]\">"
                  "    <If.Then>" WL("then") "</If.Then>"
                  "    <If.Else>" WL("else1") "</If.Else>"
                  "  </If>"
                  "  <If Condition=\"False\">"
                  "    <If.Then>" WL("then2") "</If.Then>"
                  "    <If.Else>" WL("else") "</If.Else>"
                  "  </If>"
                  "  <If Condition=\"False\"><If.Then>" WL("x") "</If.Then></If>"
                  "</Sequence>" TAIL,
                  "Closed", "then\nelse\n");
}
END_TEST

START_TEST(test_while_evaluates_condition_each_iteration)
{
    expect_output(HEAD
                  "<While Condition=\"[i &lt; 3]\">"
                  "  <While.Variables>" VAR("x:Int32", "i", "0") "</While.Variables>"
                  "  <Sequence>" WLX("i.ToString()")
                  "    <Assign x:TypeArguments=\"x:Int32\" To=\"[i]\" Value=\"[i + 1]\"/>"
                  "  </Sequence>"
                  "</While>" TAIL,
                  "Closed", "0\n1\n2\n");
}
END_TEST

START_TEST(test_dowhile_runs_body_before_condition)
{
    expect_output(HEAD "<DoWhile Condition=\"False\">" WL("once") "</DoWhile>" TAIL,
                  "Closed", "once\n");
}
END_TEST

START_TEST(test_foreach_runs_body_per_item_in_order)
{
    expect_output(HEAD
                  "<ForEach x:TypeArguments=\"x:String\""
                  "         Values=\"[new List&lt;string&gt; { &quot;a&quot;, &quot;b&quot;,"
                  "                   &quot;c&quot; }]\">"
                  "  <ActivityAction x:TypeArguments=\"x:String\">"
                  "    <ActivityAction.Argument>"
                  "      <DelegateInArgument x:TypeArguments=\"x:String\" Name=\"item\"/>"
                  "    </ActivityAction.Argument>"
                  WLX("item")
                  "  </ActivityAction>"
                  "</ForEach>" TAIL,
                  "Closed", "a\nb\nc\n");
}
END_TEST

/* ForEach and ParallelForEach bind each item without a reference of its own: the list they
 * evaluated at the start keeps it alive, even once the variable it came from holds another
 * list and every body waits (the items are built at run time, so only that list owns them). */
START_TEST(test_loop_items_outlive_the_variable_they_came_from)
{
    static const char *const kinds[] = {"ForEach", "ParallelForEach"};
    for (int k = 0; k < 2; k++) {
        char xaml[2048];
        snprintf(xaml, sizeof xaml, HEAD
                 "<Sequence>"
                 "  <Sequence.Variables>"
                 "    <Variable x:TypeArguments=\"scg:List(x:String)\" Name=\"L\""
                 "              Default=\"[new List&lt;string&gt; { &quot;a&quot; + 1,"
                 "                       &quot;b&quot; + 2 }]\"/>"
                 "  </Sequence.Variables>"
                 "  <%s x:TypeArguments=\"x:String\" Values=\"[L]\">"
                 "    <ActivityAction x:TypeArguments=\"x:String\">"
                 "      <ActivityAction.Argument>"
                 "        <DelegateInArgument x:TypeArguments=\"x:String\" Name=\"item\"/>"
                 "      </ActivityAction.Argument>"
                 "      <Sequence>"
                 "        <Assign x:TypeArguments=\"scg:List(x:String)\" To=\"[L]\""
                 "                Value=\"[new List&lt;string&gt; { &quot;z&quot; }]\"/>"
                 "        <WaitForEvent x:TypeArguments=\"x:Int32\" BookmarkName=\"[item]\"/>"
                 WLX("item + &quot; &quot; + L.Count")
                 "      </Sequence>"
                 "    </ActivityAction>"
                 "  </%s>"
                 "</Sequence>" TAIL, kinds[k], kinds[k]);
        fix f;
        fix_open(&f, xaml);
        wf_error err = WF_ERROR_INIT;
        wf_value one = wf_int32(1);
        ck_assert_str_eq(fix_run(&f), "Idle");
        ck_assert_int_eq(wfm_instance_resume(f.inst, "a1", &one, &err), WF_OK);
        ck_assert_str_eq(fix_run(&f), "Idle");
        ck_assert_int_eq(wfm_instance_resume(f.inst, "b2", &one, &err), WF_OK);
        ck_assert_str_eq(fix_run(&f), "Closed");
        ck_assert_str_eq(f.out.data, "a1 1\nb2 1\n");
        wfm_test_close(&f);
    }
}
END_TEST

START_TEST(test_parallel_for_each_completion_condition_stops_early)
{
    /* All three bodies wait; the condition is checked after each body completes: true after
     * the first, so the other two are canceled and ParallelForEach closes. */
    fix f;
    fix_open(&f, HEAD
             "<Sequence>"
             "  <Sequence.Variables>" VAR("x:Int32", "seen", "0") "</Sequence.Variables>"
             "  <ParallelForEach x:TypeArguments=\"x:Int32\" CompletionCondition=\"[seen &gt;= 1]\""
             "                   Values=\"[new List&lt;int&gt; { 1, 2, 3 }]\">"
             "    <ActivityAction x:TypeArguments=\"x:Int32\">"
             "      <ActivityAction.Argument>"
             "        <DelegateInArgument x:TypeArguments=\"x:Int32\" Name=\"n\"/>"
             "      </ActivityAction.Argument>"
             "      <Sequence>"
             "        <WaitForEvent x:TypeArguments=\"x:Int32\""
             "                      BookmarkName=\"[&quot;b&quot; + n]\"/>"
             "        <Assign x:TypeArguments=\"x:Int32\" To=\"[seen]\" Value=\"[seen + 1]\"/>"
             WLX("&quot;body &quot; + n")
             "      </Sequence>"
             "    </ActivityAction>"
             "  </ParallelForEach>"
             WLX("&quot;after &quot; + seen")
             "</Sequence>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 3);
    ck_assert_str_eq(wfm_instance_bookmark_name(f.inst, 0), "b3");
    wf_error err = WF_ERROR_INIT;
    wf_value five = wf_int32(5);
    ck_assert_int_eq(wfm_instance_resume(f.inst, "b2", &five, &err), WF_OK);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "body 2\nafter 1\n");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 0);
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_switch_picks_case_or_default)
{
    const char *sw = HEAD MEMBERS(PROP("K", "InArgument(x:String)"))
        "<Switch x:TypeArguments=\"x:String\" Expression=\"[K]\">"
        "  <WriteLine x:Key=\"red\" Text=\"stop\"/>"
        "  <WriteLine x:Key=\"green\" Text=\"go\"/>"
        "  <Switch.Default>" WL("unknown") "</Switch.Default>"
        "</Switch>" TAIL;
    const char *keys[] = {"green", "red", "blue"}, *want[] = {"go\n", "stop\n", "unknown\n"};
    for (int i = 0; i < 3; i++) {
        fix f;
        fix_open(&f, sw);
        wf_value v;
        ck_assert_int_eq(wf_value_cstring(keys[i], &v), WF_OK);
        wfm_test_input(&f, "K", v);
        ck_assert_str_eq(fix_run(&f), "Closed");
        ck_assert_str_eq(f.out.data, want[i]);
        wfm_test_close(&f);
    }
    expect_output(HEAD
                  "<Switch x:TypeArguments=\"x:Int32\" Expression=\"[7]\">"
                  "  <WriteLine x:Key=\"1\" Text=\"one\"/>"
                  "</Switch>" TAIL,
                  "Closed", "");
}
END_TEST

START_TEST(test_wait_for_event_converts_payload_to_result)
{
    fix f;
    fix_open(&f, HEAD MEMBERS(PROP("Amount", "OutArgument(x:Int32)"))
             "<WaitForEvent x:TypeArguments=\"x:Int32\" BookmarkName=\"approve\""
             "              Result=\"[Amount]\"/>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    ck_assert_str_eq(wfm_instance_bookmark_name(f.inst, 0), "approve");
    wf_value v;
    ck_assert_int_eq(wf_value_cstring("42", &v), WF_OK);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_resume(f.inst, "approve", &v, &err), WF_OK);
    wf_value_release(&v);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_int_eq(wfm_instance_output(f.inst, "Amount")->u.i32, 42);
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_wait_for_event_bad_payload_faults)
{
    fix f;
    fix_open(&f, HEAD "<WaitForEvent x:TypeArguments=\"x:Int32\" BookmarkName=\"approve\"/>"
             TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    wf_value v;
    ck_assert_int_eq(wf_value_cstring("lots", &v), WF_OK);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_resume(f.inst, "approve", &v, &err), WF_OK);
    wf_value_release(&v);
    ck_assert_str_eq(fix_run(&f), "Faulted");
    ck_assert_str_eq(wfm_instance_fault(f.inst)->type->name, "InvalidCastException");
    wfm_test_close(&f);
}
END_TEST

/* ---- variables ------------------------------------------------------------------------------ */

START_TEST(test_inner_variable_shadows_outer)
{
    expect_output(HEAD
                  "<Sequence>"
                  "  <Sequence.Variables>" VAR("x:Int32", "x", "1") "</Sequence.Variables>"
                  "  <Sequence>"
                  "    <Sequence.Variables>" VAR("x:String", "x", "inner") "</Sequence.Variables>"
                  WLX("x")
                  "    <Assign x:TypeArguments=\"x:String\" To=\"[x]\" Value=\"changed\"/>"
                  WLX("x")
                  "  </Sequence>"
                  WLX("x.ToString()")
                  "</Sequence>" TAIL,
                  "Closed", "inner\nchanged\n1\n");
}
END_TEST

START_TEST(test_variable_default_reads_earlier_variable)
{
    expect_output(HEAD
                  "<Sequence>"
                  "  <Sequence.Variables>"
                  VAR("x:Int32", "a", "[20]") VAR("x:Int32", "b", "[a + 2]")
                  "  </Sequence.Variables>"
                  WLX("b.ToString()")
                  "</Sequence>" TAIL,
                  "Closed", "22\n");
}
END_TEST

START_TEST(test_loop_body_variables_are_fresh_each_iteration)
{
    /* The body Sequence's v starts at 10 + i every iteration; the While's own i persists. */
    expect_output(HEAD
                  "<While Condition=\"[i &lt; 3]\">"
                  "  <While.Variables>" VAR("x:Int32", "i", "0") "</While.Variables>"
                  "  <Sequence>"
                  "    <Sequence.Variables>" VAR("x:Int32", "v", "[10 + i]") "</Sequence.Variables>"
                  "    <Assign x:TypeArguments=\"x:Int32\" To=\"[v]\" Value=\"[v * 2]\"/>"
                  WLX("v.ToString()")
                  "    <Assign x:TypeArguments=\"x:Int32\" To=\"[i]\" Value=\"[i + 1]\"/>"
                  "  </Sequence>"
                  "</While>" TAIL,
                  "Closed", "20\n22\n24\n");
}
END_TEST

START_TEST(test_foreach_body_variables_are_fresh_per_item)
{
    expect_output(HEAD
                  "<ForEach x:TypeArguments=\"x:Int32\" Values=\"[new List&lt;int&gt; { 1, 2 }]\">"
                  "  <ActivityAction x:TypeArguments=\"x:Int32\">"
                  "    <ActivityAction.Argument>"
                  "      <DelegateInArgument x:TypeArguments=\"x:Int32\" Name=\"n\"/>"
                  "    </ActivityAction.Argument>"
                  "    <Sequence>"
                  "      <Sequence.Variables>" VAR("x:Int32", "acc", "100") "</Sequence.Variables>"
                  "      <Assign x:TypeArguments=\"x:Int32\" To=\"[acc]\" Value=\"[acc + n]\"/>"
                  WLX("acc.ToString()")
                  "    </Sequence>"
                  "  </ActivityAction>"
                  "</ForEach>" TAIL,
                  "Closed", "101\n102\n");
}
END_TEST

/* ---- run-time faults with the activity's location ---------------------------------------- */

/* Line 4 holds "<Sequence>", padding, then the faulting WriteLine starting at column `col`. */
static void expect_fault(const char *expr, const char *type, unsigned col)
{
    char xaml[2048];
    snprintf(xaml, sizeof xaml,
             HEAD MEMBERS(PROP("Z", "InArgument(x:Int32)") PROP("S", "InArgument(x:String)")) "\n"
             "<Sequence>\n"
             WL("ok") "\n"
             "<Sequence>%*s<WriteLine Text=\"[%s]\"/>\n"
             "</Sequence>\n"
             "</Sequence>" TAIL,
             (int)(col - 11), "", expr);
    fix f;
    fix_open(&f, xaml);
    ck_assert_str_eq(fix_run(&f), "Faulted");
    ck_assert_str_eq(f.out.data, "ok\n");
    ck_assert_str_eq(wfm_instance_fault(f.inst)->type->name, type);
    wf_loc loc = wfm_instance_fault_loc(f.inst);
    ck_assert_str_eq(loc.file, "core.xaml");
    ck_assert_uint_eq(loc.line, 4);
    ck_assert_uint_eq(loc.col, col);
    wfm_test_close(&f);
}

START_TEST(test_divide_by_zero_faults_with_location)
{
    expect_fault("(10 / Z).ToString()", "DivideByZeroException", 12);
}
END_TEST

START_TEST(test_overflow_faults_with_location)
{
    expect_fault("(2147483647 + 1 + Z).ToString()", "OverflowException", 15);
}
END_TEST

START_TEST(test_null_reference_faults_with_location)
{
    expect_fault("S.Length.ToString()", "NullReferenceException", 20);
}
END_TEST

START_TEST(test_fault_in_variable_default_faults_declaring_activity)
{
    fix f;
    fix_open(&f, HEAD MEMBERS(PROP("Z", "InArgument(x:Int32)")) "\n"
             "<Sequence>\n"
             " <Sequence>"
             "   <Sequence.Variables>" VAR("x:Int32", "q", "[1 / Z]") "</Sequence.Variables>"
             WL("never")
             " </Sequence>"
             "</Sequence>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Faulted");
    ck_assert_str_eq(f.out.data, "");
    ck_assert_str_eq(wfm_instance_fault(f.inst)->type->name, "DivideByZeroException");
    ck_assert_uint_eq(wfm_instance_fault_loc(f.inst).line, 3);
    ck_assert_uint_eq(wfm_instance_fault_loc(f.inst).col, 2);
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_foreach_over_null_list_faults)
{
    fix f;
    fix_open(&f, HEAD MEMBERS(PROP("L", "InArgument(scg:List(x:Int32))"))
             "<ForEach x:TypeArguments=\"x:Int32\" Values=\"[L]\">"
             "  <ActivityAction x:TypeArguments=\"x:Int32\">" WL("x") "</ActivityAction>"
             "</ForEach>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Faulted");
    ck_assert_str_eq(wfm_instance_fault(f.inst)->type->name, "ArgumentNullException");
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_negative_delay_faults)
{
    fix f;
    fix_open(&f, HEAD "<Delay Duration=\"[TimeSpan.FromSeconds(-1)]\"/>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Faulted");
    ck_assert_str_eq(wfm_instance_fault(f.inst)->type->name, "ArgumentOutOfRangeException");
    wfm_test_close(&f);
}
END_TEST

/* clang-format on */

Suite *modern_activities_core_suite(void)
{
    Suite *s = suite_create("modern_activities_core");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_sequence_runs_children_in_order);
    tcase_add_test(core, test_assign_writes_out_and_inout_arguments_visible_to_host);
    tcase_add_test(core, test_unset_datetime_is_dotnet_default);
    tcase_add_test(core, test_argument_default_used_when_host_supplies_none);
    tcase_add_test(core, test_writeline_writes_text_and_newline);
    tcase_add_test(core, test_if_chooses_then_or_else);
    tcase_add_test(core, test_while_evaluates_condition_each_iteration);
    tcase_add_test(core, test_dowhile_runs_body_before_condition);
    tcase_add_test(core, test_foreach_runs_body_per_item_in_order);
    tcase_add_test(core, test_parallel_for_each_completion_condition_stops_early);
    tcase_add_test(core, test_loop_items_outlive_the_variable_they_came_from);
    tcase_add_test(core, test_switch_picks_case_or_default);
    tcase_add_test(core, test_wait_for_event_converts_payload_to_result);
    tcase_add_test(core, test_inner_variable_shadows_outer);
    tcase_add_test(core, test_variable_default_reads_earlier_variable);
    tcase_add_test(core, test_loop_body_variables_are_fresh_each_iteration);
    tcase_add_test(core, test_foreach_body_variables_are_fresh_per_item);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_wait_for_event_bad_payload_faults);
    tcase_add_test(bad, test_divide_by_zero_faults_with_location);
    tcase_add_test(bad, test_overflow_faults_with_location);
    tcase_add_test(bad, test_null_reference_faults_with_location);
    tcase_add_test(bad, test_fault_in_variable_default_faults_declaring_activity);
    tcase_add_test(bad, test_foreach_over_null_list_faults);
    tcase_add_test(bad, test_negative_delay_faults);
    suite_add_tcase(s, bad);
    return s;
}

/* test_compat.c — real-world WF3 files: the shapes found in public projects' .xoml and .rules
 * (designer output with code-beside, vendor activity libraries with full assembly names, book
 * and SDK samples), rewritten as our own fixtures in tests/legacy/data/compat/. Each one must
 * load and run, or fail with an error naming the feature, the file, line and column. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_rules.h"
#include "../../legacy/wfl_exec.h"
#include "../wf_test_util.h"
#include "test_exec.h"

#define CDIR "tests/legacy/data/compat/"

/* Like xt_load_status, with the compat type libraries (CDIR "lib", functions from
 * libwfexectest.so) on the path before the built test libraries. */
static wf_status compat_load(xt_env *e, const char *file, const char *rules, bool compat_lib,
                             wf_error *err)
{
    memset(e, 0, sizeof *e);
    wf_buf_init(&e->calls);
    wf_buf_init(&e->statuses);
    e->now = 1700000000000000LL;
    e->types = wf_types_create();
    if (e->types == NULL)
        return WF_E_NOMEM; /* only under the nomem loop */
    char dirs[1024];
    snprintf(dirs, sizeof dirs, "%s%s", compat_lib ? CDIR "lib:" : "", wf_test_lib_dir());
    wf_status rc = wf_libpath_create(dirs, &e->libpath, err);
    if (rc != WF_OK)
        return rc;
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = e->types;
    lo.libpath = e->libpath;
    lo.no_auto_rules = true;
    lo.rules_path = rules;
    return wfl_definition_load_file(&lo, file, &e->def, err);
}

static void compat_load_ok(xt_env *e, const char *file, const char *rules)
{
    wf_error err = WF_ERROR_INIT;
    wf_status rc = compat_load(e, file, rules, true, &err);
    ck_assert_msg(rc == WF_OK, "%s: %s:%u:%u: %s", file, err.file, err.line, err.col,
                  err.message);
}

/* ---- core: files that must load and run ------------------------------------------------- */

/* Visual Studio's designer writes x:Class but no clr-namespace for the project's own
 * assembly, keeps an x:Code block, and SplendidCRM-style markup rebinds the x prefix to the
 * workflow namespace on an inner element; the rules cast `this` to the class, with the type
 * written as a wrapped attribute. */
START_TEST(test_designer_file_finds_code_beside_by_class_namespace)
{
    xt_env e;
    compat_load_ok(&e, CDIR "designer_codebeside.xoml", CDIR "designer_codebeside.rules");
    ck_assert_str_eq(wfl_definition_class_name(e.def), "Tests.DesignerFlow");
    ck_assert_uint_eq(wfl_definition_warning_count(e.def), 1); /* the x:Code block */
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Count"), 3); /* the While ran while Count < 3 */
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    xt_free(&e);
}
END_TEST

/* Service Manager / SharePoint shape: a vendor namespace naming the assembly with Version,
 * Culture and PublicKeyToken, prefix and "clr-namespace"/"assembly" in other cases, an
 * ActivityBind with a positional name, {x:Null} and a bind to another activity's output. */
START_TEST(test_full_assembly_name_positional_bind_and_null)
{
    xt_env e;
    compat_load_ok(&e, CDIR "full_assembly_name.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Text", "hi");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "hi");
    ck_assert_str_eq(xt_str(&e, "Approver"), "Hello, hi");
    xt_free(&e);
}
END_TEST

/* A state machine whose InterfaceType is a dotted {x:Type} without prefix, found in the
 * type library located through x:Class; one EventDriven waits on a Delay, the other on the
 * event. */
START_TEST(test_state_machine_with_unprefixed_interface_type)
{
    xt_env e;
    compat_load_ok(&e, CDIR "desk_states.xoml", NULL);
    ck_assert_uint_eq(wfl_definition_warning_count(e.def), 0); /* "e" is the WF3 form */
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert(xt_waits_on(&e, "IDeskService.Closed"));
    ck_assert_int_eq(xt_deliver(&e, "IDeskService.Closed", NULL), WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Count"), 1);
    xt_free(&e);
}
END_TEST

/* Markup-only workflows rooted in the project's own base class (a type-library Class), with
 * the While's CodeCondition and the CodeActivity's handler bound to the root's methods. */
START_TEST(test_custom_root_class_with_bound_methods)
{
    xt_env e;
    compat_load_ok(&e, CDIR "markup_only_base.xoml", NULL);
    ck_assert_str_eq(wfl_definition_root_name(e.def), "Desk");
    ck_assert_ptr_null(wfl_definition_class_name(e.def));
    ck_assert_uint_eq(wfl_definition_warning_count(e.def), 1); /* the root read as a class */
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Count"), 2); /* <DeskWorkflow.Limit>2</...> on the root */
    xt_free(&e);
}
END_TEST

/* A compiled workflow's markup names its own activities by clr-namespace without Assembly=
 * (single-quoted attributes, as some generators write them): they come from the type library
 * that holds the x:Class. */
START_TEST(test_own_assembly_types_come_from_the_class_library)
{
    xt_env e;
    compat_load_ok(&e, CDIR "own_assembly_types.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "desk:open");
    ck_assert_int_eq(xt_int(&e, "Count"), 1);
    xt_free(&e);
}
END_TEST

/* Markup-only rules reach the root through this.GetActivityByName("Root") cast to the base
 * class: read as 'this'. */
START_TEST(test_rules_get_activity_by_name_of_the_root)
{
    xt_env e;
    compat_load_ok(&e, CDIR "self_lookup.xoml", CDIR "self_lookup_tight.rules");
    ck_assert_uint_eq(wfl_definition_warning_count(e.def), 1); /* the x:Code-less base class */
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Count"), 3); /* while Count < Limit (3) */
    xt_free(&e);
}
END_TEST

/* A pretty-printed .rules passes the blanks around "\n  Desk\n  " to GetActivityByName
 * verbatim: WF3 finds no such activity, the lookup returns null and reading Count from it is
 * a RuleEvaluationException that faults the While (docs/wf3-behaviour.md). */
START_TEST(test_rules_string_arguments_are_taken_verbatim)
{
    xt_env e;
    compat_load_ok(&e, CDIR "self_lookup.xoml", CDIR "self_lookup.rules");
    ck_assert_uint_eq(wfl_definition_warning_count(e.def), 2); /* + "names no activity" */
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_FAULTED);
    ck_assert_str_eq(wfl_exec_exception(e.ex)->type->name, "RuleEvaluationException");
    ck_assert_int_eq(xt_int(&e, "Count"), 0);
    xt_free(&e);
}
END_TEST

/* The x:Class namespace names a library only as a plain name on the library path: one that
 * walks out of it ("../compat/lib/Tests", which does exist relative to the path) is never
 * tried, and the workflow simply has no code-beside. */
START_TEST(test_class_namespace_never_leaves_the_library_path)
{
    xt_env e;
    compat_load_ok(&e, CDIR "class_name_with_path.xoml", NULL);
    ck_assert_uint_eq(wfl_definition_warning_count(e.def), 1); /* no type library */
    ck_assert_uint_eq(wfl_definition_param_count(e.def), 0);
    xt_free(&e);
}
END_TEST

/* The designer saves a new RuleSet with no rules, an empty Conditions element and rules
 * without actions, in UTF-16: they load and run as no-ops. */
START_TEST(test_empty_rule_sets_run_as_no_ops)
{
    xt_env e;
    compat_load_ok(&e, CDIR "empty_rulesets.xoml", CDIR "empty_rulesets.rules");
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_int_eq(xt_int(&e, "Count"), 1);
    xt_free(&e);
}
END_TEST

/* SharePoint Designer shape: the root is the vendor's data-carrying class (x:Class named by
 * no library), its WorkflowFields collection declares the fields the type library already
 * describes, and activities bind to underscore-named root fields. */
START_TEST(test_custom_root_with_field_declarations)
{
    xt_env e;
    compat_load_ok(&e, CDIR "root_with_fields.xoml", NULL);
    ck_assert_str_eq(wfl_definition_class_name(e.def), "Tests.Workflow.ROOT");
    ck_assert_uint_eq(wfl_definition_warning_count(e.def), 2); /* root class, WorkflowFields */
    xt_start(&e);
    xt_set(&e, "__context", "list1");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "Hello, list1");
    xt_free(&e);
}
END_TEST

/* CodeObjectCreateExpression with its CreateType as an attribute (as the WF3 serializer
 * writes it) is read like the property-element form. */
START_TEST(test_rules_create_type_attribute)
{
    static const char text[] =
        "<RuleDefinitions xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">"
        "<RuleDefinitions.Conditions><RuleExpressionCondition Name=\"Made\">"
        "<RuleExpressionCondition.Expression>"
        "<ns0:CodeBinaryOperatorExpression Operator=\"IdentityInequality\" xmlns:ns0="
        "\"clr-namespace:System.CodeDom;Assembly=System, Version=2.0.0.0\">"
        "<ns0:CodeBinaryOperatorExpression.Left><ns0:CodeObjectCreateExpression CreateType="
        "\"System.InvalidOperationException, mscorlib, Version=2.0.0.0\" />"
        "</ns0:CodeBinaryOperatorExpression.Left><ns0:CodeBinaryOperatorExpression.Right>"
        "<ns0:CodePrimitiveExpression /></ns0:CodeBinaryOperatorExpression.Right>"
        "</ns0:CodeBinaryOperatorExpression></RuleExpressionCondition.Expression>"
        "</RuleExpressionCondition></RuleDefinitions.Conditions></RuleDefinitions>";
    wf_types *types = wf_types_create();
    ck_assert_ptr_nonnull(types);
    wfl_rules *rules = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_rules_load_mem("made.rules", text, sizeof text - 1, types, &rules, NULL,
                                     &err) == WF_OK, "%s", err.message);
    ck_assert_ptr_nonnull(wfl_rules_condition(rules, "Made"));
    wfl_rules_destroy(rules);
    wf_types_destroy(types);
}
END_TEST

/* ---- bad_input: unsupported features and missing libraries, each precisely reported ------ */

static void expect_load_error_in(const char *file, const char *rules, bool compat_lib,
                                 wf_status code, unsigned line, unsigned col, const char *needle)
{
    xt_env e;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(compat_load(&e, file, rules, compat_lib, &err), code);
    ck_assert_ptr_null(e.def);
    WF_ASSERT_ERROR(err, code, line, col, needle);
    ck_assert_ptr_nonnull(strstr(err.file, file));
    xt_free(&e);
}

static void expect_load_error(const char *file, bool compat_lib, wf_status code, unsigned line,
                              unsigned col, const char *needle)
{
    expect_load_error_in(file, NULL, compat_lib, code, line, col, needle);
}

/* A vendor library named Microsoft.* is a custom activity library, not part of .NET: a
 * missing one is a NOLIB error naming the assembly at the declaring element. */
START_TEST(test_vendor_library_missing_names_assembly)
{
    expect_load_error(CDIR "bad/vendor_library_missing.xoml", true, WF_E_NOLIB, 2, 2,
                      "'Microsoft.Contoso.DeskActivities'");
}
END_TEST

/* SplendidCRM-style composite custom activities (children inside a type-library type). */
START_TEST(test_custom_activity_with_children_is_unsupported)
{
    expect_load_error(CDIR "bad/custom_activity_with_children.xoml", true, WF_E_SCHEMA, 3, 3,
                      "a type-library activity is a leaf, or a composite");
}
END_TEST

/* A wca.exe-style custom event activity opening an EventDriven (here in a state machine whose
 * root is a type-library class read as StateMachineWorkflowActivity). */
START_TEST(test_custom_event_activity_is_unsupported)
{
    expect_load_error(CDIR "bad/custom_event_activity.xoml", true, WF_E_UNSUPPORTED, 4, 4,
                      "custom event activities");
}
END_TEST

/* An own-assembly type the class's library does not describe. */
START_TEST(test_own_assembly_unknown_type_names_the_library)
{
    expect_load_error(CDIR "bad/own_assembly_unknown_type.xoml", true, WF_E_NAME, 2, 2,
                      "type library 'Tests' has no activity type 'Archive'");
}
END_TEST

/* GetActivityByName of any other activity cannot be expressed: reported in the .rules. */
START_TEST(test_rules_get_activity_by_name_of_a_child_is_unsupported)
{
    xt_env e;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(compat_load(&e, CDIR "self_lookup.xoml",
                                 CDIR "bad/lookup_of_other_activity.rules", true, &err),
                     WF_E_UNSUPPORTED);
    ck_assert_ptr_null(e.def);
    WF_ASSERT_ERROR(err, WF_E_UNSUPPORTED, 11, 21, "GetActivityByName(\"tick\")");
    ck_assert_ptr_nonnull(strstr(err.file, "lookup_of_other_activity.rules"));
    xt_free(&e);
}
END_TEST

/* A vendor SQL activity's ParameterBindings collection: a type-library activity has only the
 * properties its library declares, and the message lists them. */
START_TEST(test_custom_activity_parameter_bindings_list_declared_properties)
{
    expect_load_error(CDIR "bad/custom_activity_parameter_bindings.xoml", true, WF_E_SCHEMA, 3,
                      3, "no property 'Concat.ParameterBindings' (its type library declares: "
                      "A, B, Result)");
}
END_TEST

static void expect_rules_target_error(const char *rules, wf_status code, const char *needle)
{
    xt_env e;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(compat_load(&e, CDIR "bad/rules_target.xoml", rules, true, &err), code);
    ck_assert_ptr_null(e.def);
    WF_ASSERT_ERROR(err, code, 7, 7, needle);
    ck_assert_ptr_nonnull(strstr(err.file, rules));
    xt_free(&e);
}

/* Book samples' rules read code-beside fields the type library does not declare: found at
 * load (as WF3's rule validation would), not when the rule first runs. */
START_TEST(test_rules_member_missing_from_the_class_is_reported_at_load)
{
    expect_rules_target_error(CDIR "bad/rule_reads_undeclared_field.rules", WF_E_NAME,
                              "this.loopCounter, but the workflow 'ExecFlow' (class "
                              "'Tests.ExecFlow') has no property 'loopCounter'");
}
END_TEST

/* Compiled workflows' rules reach child activities as fields (this.activity.Property). */
START_TEST(test_rules_reading_another_activity_is_unsupported)
{
    expect_rules_target_error(CDIR "bad/rule_reads_activity_field.rules", WF_E_UNSUPPORTED,
                              "this.concat1, the activity 'concat1'");
}
END_TEST

/* SplendidCRM binds CodeActivity handlers to methods of its own activities. */
START_TEST(test_handler_bound_to_custom_activity_method_is_unsupported)
{
    expect_load_error(CDIR "bad/bind_to_custom_activity_method.xoml", true, WF_E_UNSUPPORTED, 3,
                      52, "'Reviews1.LoadByAuditId': a method of the type-library activity Review");
}
END_TEST

/* WPF resources inside a workflow (seen in exploit write-ups against hosts that load XOML):
 * an unknown element of a framework assembly, never instantiated. */
START_TEST(test_wpf_resource_dictionary_is_rejected)
{
    expect_load_error(CDIR "bad/resource_dictionary.xoml", true, WF_E_SCHEMA, 2, 2,
                      "unknown activity type 'Rd:ResourceDictionary'");
}
END_TEST

/* A ParameterBinding naming no parameter of the method (WF3's validation rejects it too). */
START_TEST(test_unknown_parameter_binding_lists_the_parameters)
{
    expect_load_error(CDIR "bad/unknown_parameter_binding.xoml", true, WF_E_NAME, 5, 4,
                      "method 'Notify' has no parameter 'Recipient' (it has: Message, "
                      "(ReturnValue))");
}
END_TEST

/* A workflow base class wrongly described as an ActivityType: the message says what to do. */
START_TEST(test_root_activity_type_with_children_hints_at_class)
{
    expect_load_error(CDIR "bad/root_is_activity_type.xoml", true, WF_E_SCHEMA, 2, 2,
                      "a workflow base class is declared as a <Class> of its type library");
}
END_TEST

/* Without the compat library the designer file has no code-beside: its handlers are named. */
START_TEST(test_designer_file_without_its_library_names_the_handler)
{
    expect_load_error_in(CDIR "designer_codebeside.xoml", CDIR "designer_codebeside.rules", false,
                         WF_E_NAME, 7, 45,
                      "'TickHandler' needs a code-beside class");
}
END_TEST

static void expect_rules_error(const char *file, wf_status code, unsigned line, unsigned col,
                               const char *needle)
{
    wf_types *types = wf_types_create();
    ck_assert_ptr_nonnull(types);
    wfl_rules *rules = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_rules_load(file, types, &rules, NULL, &err), code);
    ck_assert_ptr_null(rules);
    WF_ASSERT_ERROR(err, code, line, col, needle);
    wf_types_destroy(types);
}

/* The SDK samples' rule actions call Console.WriteLine: console output is not supported. */
START_TEST(test_rules_console_output_is_unsupported)
{
    expect_rules_error(CDIR "bad/console_output.rules", WF_E_UNSUPPORTED, 13, 13,
                       "'Console.WriteLine' is not supported");
}
END_TEST

/* `new` of a record type from the workflow's own assembly, CreateType as an attribute. */
START_TEST(test_rules_create_of_record_type_is_unsupported)
{
    expect_rules_error(CDIR "bad/create_record_type.rules", WF_E_UNSUPPORTED, 7, 7,
                       "'Contoso.Orders.OrderLine'");
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------- */

typedef struct load_case {
    const char *xoml, *rules;
} load_case;

static wf_status compat_load_op(void *ud)
{
    const load_case *c = ud;
    xt_env e;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = compat_load(&e, c->xoml, c->rules, true, &err);
    if (rc != WF_OK)
        ck_assert_ptr_null(e.def);
    xt_free(&e);
    return rc;
}

START_TEST(test_compat_loads_survive_allocation_failures)
{
    /* the test's own setup allocates too; every failing run must still end in WF_E_NOMEM */
    static const load_case cases[] = {
        {CDIR "designer_codebeside.xoml", CDIR "designer_codebeside.rules"}, /* class lookup */
        {CDIR "self_lookup.xoml", CDIR "self_lookup.rules"},     /* root class, rule checks */
        {CDIR "root_with_fields.xoml", NULL},                     /* ignored collection */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned runs = wf_test_nomem_loop(compat_load_op, (void *)&cases[i], 20000);
        ck_assert_uint_gt(runs, 10);
    }
}
END_TEST

Suite *legacy_compat_suite(void)
{
    Suite *s = suite_create("legacy_compat");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_designer_file_finds_code_beside_by_class_namespace);
    tcase_add_test(tc, test_full_assembly_name_positional_bind_and_null);
    tcase_add_test(tc, test_state_machine_with_unprefixed_interface_type);
    tcase_add_test(tc, test_custom_root_class_with_bound_methods);
    tcase_add_test(tc, test_custom_root_with_field_declarations);
    tcase_add_test(tc, test_own_assembly_types_come_from_the_class_library);
    tcase_add_test(tc, test_rules_get_activity_by_name_of_the_root);
    tcase_add_test(tc, test_rules_string_arguments_are_taken_verbatim);
    tcase_add_test(tc, test_class_namespace_never_leaves_the_library_path);
    tcase_add_test(tc, test_empty_rule_sets_run_as_no_ops);
    tcase_add_test(tc, test_rules_create_type_attribute);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad_input");
    tcase_add_test(tc, test_vendor_library_missing_names_assembly);
    tcase_add_test(tc, test_custom_activity_with_children_is_unsupported);
    tcase_add_test(tc, test_custom_event_activity_is_unsupported);
    tcase_add_test(tc, test_wpf_resource_dictionary_is_rejected);
    tcase_add_test(tc, test_root_activity_type_with_children_hints_at_class);
    tcase_add_test(tc, test_unknown_parameter_binding_lists_the_parameters);
    tcase_add_test(tc, test_handler_bound_to_custom_activity_method_is_unsupported);
    tcase_add_test(tc, test_custom_activity_parameter_bindings_list_declared_properties);
    tcase_add_test(tc, test_own_assembly_unknown_type_names_the_library);
    tcase_add_test(tc, test_rules_get_activity_by_name_of_a_child_is_unsupported);
    tcase_add_test(tc, test_rules_member_missing_from_the_class_is_reported_at_load);
    tcase_add_test(tc, test_rules_reading_another_activity_is_unsupported);
    tcase_add_test(tc, test_designer_file_without_its_library_names_the_handler);
    tcase_add_test(tc, test_rules_console_output_is_unsupported);
    tcase_add_test(tc, test_rules_create_of_record_type_is_unsupported);
    suite_add_tcase(s, tc);
    tc = tcase_create("nomem");
    tcase_add_test(tc, test_compat_loads_survive_allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

/* test_xoml.c — the XOML loader: realistic WF3 files (x:Class code-beside, clr-namespace type
 * libraries, ns0..nsN prefixes, designer attributes, markup extensions, property elements,
 * attached properties, .rules pairing) load into the expected tree; bad files report every
 * problem with file:line:col; the loader survives allocation failure at every step. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_def_int.h"
#include "../wf_test_util.h"

#define XDIR "tests/legacy/data/xoml/"
#define BDIR "tests/legacy/data/bad/"

typedef struct fixture {
    wf_types *types;
    wf_libpath *libpath;
    wf_diags *diags;
    wfl_load_opts opts;
} fixture;

static fixture fx;

static void setup(void)
{
    memset(&fx, 0, sizeof fx);
    fx.types = wf_types_create();
    ck_assert_ptr_nonnull(fx.types);
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &fx.libpath, NULL), WF_OK);
    fx.diags = wf_diags_create();
    wfl_load_opts o = WFL_LOAD_OPTS_INIT;
    o.types = fx.types;
    o.libpath = fx.libpath;
    o.diags = fx.diags;
    o.no_auto_rules = false; /* FILE.rules beside FILE.xoml, as WF3 pairs them */
    fx.opts = o;
}

static void teardown(void)
{
    wf_diags_destroy(fx.diags);
    wf_libpath_destroy(fx.libpath);
    wf_types_destroy(fx.types);
}

static wfl_definition *load_ok(const char *path)
{
    wfl_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfl_definition_load_file(&fx.opts, path, &def, &err);
    ck_assert_msg(rc == WF_OK, "%s: %s:%u:%u: %s", path, err.file, err.line, err.col,
                  err.message);
    ck_assert_ptr_nonnull(def);
    return def;
}

static const wfl_node *node(const wfl_definition *def, const char *name)
{
    const wfl_node *n = wfl_def_find_node(def, name);
    ck_assert_msg(n != NULL, "no node '%s'", name);
    return n;
}

static const wfl_pval *pv(const wfl_node *n, const char *dp_name)
{
    const wfl_dp *dp = wfl_type_find_dp(n->type, dp_name);
    ck_assert_msg(dp != NULL, "%s has no DP %s", n->type->name, dp_name);
    return wfl_node_pval(n, dp);
}

/* A warning at `line` whose message contains `needle`. */
static bool has_diag(wf_severity sev, unsigned line, const char *needle)
{
    for (size_t i = 0; i < wf_diags_count(fx.diags); i++) {
        const wf_diag *d = wf_diags_get(fx.diags, i);
        if (d->severity == sev && d->error.line == line && strstr(d->error.message, needle))
            return true;
    }
    return false;
}

/* ---- core ------------------------------------------------------------------------------ */
START_TEST(test_order_tree_and_code_beside)
{
    wfl_definition *def = load_ok(XDIR "order.xoml");
    ck_assert_str_eq(wfl_definition_root_name(def), "OrderWorkflow");
    ck_assert_str_eq(wfl_definition_class_name(def), "Contoso.OrderWorkflow");
    ck_assert_uint_eq(wfl_definition_activity_count(def), 15);
    ck_assert_ptr_nonnull(def->rules); /* order.rules, paired by name */
    const wfl_node *root = def->root;
    ck_assert_int_eq(root->type->kind, WFL_KIND_SEQUENTIAL_WORKFLOW);
    ck_assert_ptr_nonnull(root->type->code_beside);
    ck_assert_uint_eq(root->child_count, 4);
    ck_assert_ptr_eq(root->fault_handlers, node(def, "faults"));
    ck_assert(node(def, "faults")->flags & WFL_NODE_ALT_FLOW);
    for (size_t i = 0; i < def->node_count; i++)
        ck_assert_uint_eq(def->nodes[i]->index, i);
    /* parameters: the class's properties, in declaration order */
    ck_assert_uint_eq(wfl_definition_param_count(def), 6);
    wfl_param_info p;
    ck_assert(wfl_definition_param(def, 0, &p));
    ck_assert_str_eq(p.name, "OrderId");
    ck_assert(wfl_definition_find_param(def, "Amount", &p));
    ck_assert_ptr_eq(p.type, &wf_type_decimal);
    ck_assert(!wfl_definition_find_param(def, "Name", &p));
    wfl_definition_destroy(def);
}
END_TEST

START_TEST(test_order_property_values)
{
    wfl_definition *def = load_ok(XDIR "order.xoml");
    const wfl_pval *code = pv(node(def, "validate"), "ExecuteCode");
    ck_assert_int_eq(code->kind, WFL_PV_HANDLER);
    ck_assert_str_eq(code->u.handler.name, "OnValidate");
    ck_assert_ptr_nonnull(code->u.handler.fn);
    ck_assert_str_eq(wf_value_str(&pv(node(def, "validate"), "Description")->u.literal),
                     "validate the order");
    const wfl_pval *cond = pv(node(def, "large"), "Condition");
    ck_assert_int_eq(cond->kind, WFL_PV_CONDITION);
    ck_assert_int_eq(cond->u.cond.kind, WFL_COND_CODE);
    ck_assert_ptr_nonnull(cond->u.cond.fn);
    ck_assert_int_eq(pv(node(def, "small"), "Condition")->kind, WFL_PV_UNSET);
    const wfl_node *reserve = node(def, "reserve");
    ck_assert_int_eq(reserve->type->kind, WFL_KIND_CUSTOM);
    const wfl_pval *sku = pv(reserve, "Sku");
    ck_assert_int_eq(sku->kind, WFL_PV_BIND);
    ck_assert_str_eq(sku->u.bind->name, "OrderWorkflow");
    ck_assert_uint_eq(sku->u.bind->seg_count, 1);
    ck_assert_uint_eq(sku->loc.line, 8);
    ck_assert_uint_eq(sku->loc.col, 44);
    const wfl_pval *qty = pv(reserve, "Quantity");
    ck_assert_int_eq(qty->kind, WFL_PV_LITERAL);
    ck_assert_int_eq(qty->u.literal.u.i32, 3);
    const wfl_pval *delay = pv(node(def, "wait"), "TimeoutDuration");
    ck_assert_int_eq(delay->u.literal.u.i64, 10 * 1000000LL);
    const wfl_pval *loop = pv(node(def, "loop"), "Condition");
    ck_assert_int_eq(loop->u.cond.kind, WFL_COND_RULE);
    ck_assert_str_eq(loop->u.cond.name, "MoreRemaining");
    ck_assert_ptr_nonnull(loop->u.cond.rule); /* resolved against order.rules */
    const wfl_pval *f1 = pv(node(def, "onCredit"), "FaultType");
    ck_assert_int_eq(f1->kind, WFL_PV_TYPE);
    ck_assert_str_eq(f1->u.type.exc->name, "Contoso.CreditException");
    ck_assert_ptr_eq(pv(node(def, "onAny"), "FaultType")->u.type.exc, &wf_exc_exception);
    ck_assert_int_eq(pv(node(def, "stopAny"), "Error")->kind, WFL_PV_BIND);
    ck_assert_uint_eq(wfl_definition_warning_count(def), 0);
    wfl_definition_destroy(def);
}
END_TEST

START_TEST(test_rules_file_beside_the_xoml_is_paired)
{
    fx.opts.no_auto_rules = false;
    wfl_definition *def = load_ok(XDIR "order.xoml");
    ck_assert_ptr_nonnull(def->rules);
    const wfl_pval *loop = pv(node(def, "loop"), "Condition");
    ck_assert_ptr_nonnull(loop->u.cond.rule);
    wfl_definition_destroy(def);
}
END_TEST

START_TEST(test_markup_forms_and_property_elements)
{
    wfl_definition *def = load_ok(XDIR "markup.xoml");
    ck_assert_str_eq(wfl_definition_root_name(def), "OrderWorkflow"); /* from x:Class */
    const wfl_pval *s1 = pv(node(def, "r1"), "Sku");
    ck_assert_int_eq(s1->kind, WFL_PV_BIND);
    ck_assert_str_eq(s1->u.bind->path, "OrderId");
    ck_assert_int_eq(pv(node(def, "r1"), "Quantity")->kind, WFL_PV_NULL);
    const wfl_pval *s2 = pv(node(def, "r2"), "Sku");
    ck_assert_uint_eq(s2->u.bind->seg_count, 2);
    ck_assert_int_eq(s2->u.bind->segs[1].kind, WFL_SEG_INDEX);
    ck_assert_int_eq(s2->u.bind->segs[1].index, 1);
    const wfl_pval *s3 = pv(node(def, "r3"), "Sku");
    ck_assert_str_eq(wf_value_str(&s3->u.literal), "{not a bind}");
    ck_assert_int_eq(pv(node(def, "r3"), "Quantity")->kind, WFL_PV_BIND);
    ck_assert_str_eq(pv(node(def, "r4"), "Sku")->u.bind->name, "/Self");
    const wfl_pval *params = pv(node(def, "ask"), "ParameterBindings");
    ck_assert_int_eq(params->kind, WFL_PV_PARAMS);
    ck_assert_uint_eq(params->u.params.count, 1);
    ck_assert_str_eq(params->u.params.items[0].param, "Approver");
    ck_assert(params->u.params.items[0].is_bind);
    ck_assert_ptr_nonnull(pv(node(def, "ask"), "InterfaceType")->u.type.service);
    const wfl_node *step = node(def, "cagStep");
    ck_assert(step->has_when);
    ck_assert_ptr_nonnull(step->when.fn);
    ck_assert_int_eq(pv(def->root, "DynamicUpdateCondition")->kind, WFL_PV_CONDITION);
    ck_assert_str_eq(wf_value_str(&pv(node(def, "rep"), "ExecutionType")->u.literal),
                     "Parallel");
    const wfl_pval *tx = pv(node(def, "tx"), "TransactionOptions");
    ck_assert_int_eq(tx->kind, WFL_PV_LITERAL);
    const wf_value *timeout = wf_value_record_get(&tx->u.literal, "TimeoutDuration");
    ck_assert_ptr_nonnull(timeout);
    ck_assert_int_eq(timeout->u.i64, 30 * 1000000LL);
    ck_assert(has_diag(WF_SEV_WARNING, 39, "x:Code"));
    wfl_definition_destroy(def);
}
END_TEST

START_TEST(test_state_machine_loads)
{
    wfl_definition *def = load_ok(XDIR "states.xoml");
    ck_assert_int_eq(def->root->type->kind, WFL_KIND_STATE_MACHINE_WORKFLOW);
    ck_assert_str_eq(wf_value_str(&pv(def->root, "InitialStateName")->u.literal), "Waiting");
    const wfl_pval *ev = pv(node(def, "approved"), "EventName");
    ck_assert_str_eq(wf_value_str(&ev->u.literal), "Approved");
    ck_assert_int_eq(pv(node(def, "approved"), "ParameterBindings")->kind, WFL_PV_PARAMS);
    ck_assert_int_eq(node(def, "timeout")->type->kind, WFL_KIND_DELAY);
    const wfl_pval *dyn = pv(def->root, "DynamicUpdateCondition"); /* WorkflowChanges.Condition */
    ck_assert_int_eq(dyn->kind, WFL_PV_CONDITION);
    ck_assert_str_eq(dyn->u.cond.name, "AllowChanges");
    ck_assert_ptr_eq(node(def, "announce")->parent, node(def, "enterWaiting"));
    wfl_definition_destroy(def);
}
END_TEST

START_TEST(test_designer_file_with_many_namespaces)
{
    wfl_definition *def = load_ok(XDIR "designer.xoml");
    ck_assert_str_eq(wfl_definition_root_name(def), "Workflow1");
    ck_assert_ptr_null(wfl_definition_class_name(def));
    ck_assert_uint_eq(wfl_definition_param_count(def), 0);
    /* designer layout attributes are tolerated and reported, never silently dropped */
    ck_assert_uint_eq(wfl_definition_warning_count(def), 4);
    ck_assert(has_diag(WF_SEV_WARNING, 2, "d:Location"));
    ck_assert(has_diag(WF_SEV_WARNING, 5, "d:Location"));
    ck_assert(node(def, "cleanup")->flags & WFL_NODE_DISABLED);
    ck_assert_ptr_eq(pv(node(def, "throwActivity1"), "FaultType")->u.type.exc,
                     &wf_exc_invalid_operation);
    ck_assert_ptr_eq(node(def, "book")->compensation_handler, node(def, "undoBook"));
    ck_assert_uint_eq(wf_diags_error_count(fx.diags), 0);
    wfl_definition_destroy(def);
}
END_TEST

START_TEST(test_utf16_label_over_utf8_bytes_is_tolerated)
{
    /* .NET writes encoding="utf-16" over UTF-8 bytes; locations stay exact */
    wfl_definition *def = (wfl_definition *)1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_definition_load_file(&fx.opts, XDIR "utf16_label.xoml", &def, &err),
                     WF_E_SCHEMA);
    WF_ASSERT_ERROR(err, WF_E_SCHEMA, 2, 68, "Colour");
    ck_assert_ptr_null(def);
}
END_TEST

START_TEST(test_load_from_memory_without_library_path)
{
    static const char xoml[] =
        "<SequentialWorkflowActivity x:Name=\"W\" "
        "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
        "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
        "  <SequenceActivity><DelayActivity TimeoutDuration=\"00:00:01\"/></SequenceActivity>\n"
        "</SequentialWorkflowActivity>\n";
    fx.opts.libpath = NULL;
    wfl_definition *def = NULL;
    ck_assert_int_eq(wfl_definition_load_mem(&fx.opts, "mem.xoml", xoml, strlen(xoml), &def,
                                             NULL),
                     WF_OK);
    ck_assert_str_eq(wfl_definition_path(def), "mem.xoml");
    ck_assert_uint_eq(wfl_definition_activity_count(def), 3);
    /* unnamed activities get designer-style names, with a warning */
    ck_assert_str_eq(def->nodes[1]->name, "sequenceActivity1");
    ck_assert(has_diag(WF_SEV_WARNING, 2, "no x:Name"));
    wfl_definition_destroy(def);
}
END_TEST

/* ---- bad input ----------------------------------------------------------------------------- */
typedef struct bad_case {
    const char *file;
    wf_status code;
    unsigned line, col;
    const char *needle;
} bad_case;

static const bad_case bad_cases[] = {
    {"malformed_unclosed_sequence.xoml", WF_E_XML, 4, 30, ""},
    {"unknown_activity_type.xoml", WF_E_SCHEMA, 2, 2, "FooActivity"},
    {"unknown_property.xoml", WF_E_SCHEMA, 2, 29, "Colour"},
    {"bind_to_missing_activity.xoml", WF_E_NAME, 2, 37, "Nobody"},
    {"bind_to_missing_member.xoml", WF_E_NAME, 2, 50, "OrderNumber"},
    {"bind_metadata_property.xoml", WF_E_SCHEMA, 2, 42, "metadata"},
    {"missing_typelib.xoml", WF_E_NOLIB, 1, 1, "NoSuchLib"},
    {"unsupported_webservice.xoml", WF_E_UNSUPPORTED, 2, 2, "WebServiceInputActivity"},
    {"duplicate_name.xoml", WF_E_SCHEMA, 3, 2, "duplicate"},
    {"ifelse_without_branch.xoml", WF_E_SCHEMA, 2, 2, "at least 1"},
    {"ifelse_lone_branch_without_condition.xoml", WF_E_SCHEMA, 3, 3, "'Condition' is not set"},
    {"ifelse_first_branch_without_condition.xoml", WF_E_SCHEMA, 3, 3, "'first'"},
    {"while_two_children.xoml", WF_E_SCHEMA, 2, 2, "exactly one"},
    {"parallel_one_branch.xoml", WF_E_SCHEMA, 2, 2, "at least 2"},
    {"listen_with_sequence.xoml", WF_E_SCHEMA, 6, 3, "EventDriven"},
    {"eventdriven_first_not_event.xoml", WF_E_SCHEMA, 4, 4, "event activity"},
    {"setstate_to_composite_state.xoml", WF_E_SCHEMA, 6, 52, "leaf"},
    {"faulthandler_general_first.xoml", WF_E_SCHEMA, 4, 3, "never reached"},
    {"compensate_not_compensatable.xoml", WF_E_SCHEMA, 5, 58, "not compensatable"},
    {"compensate_without_target.xoml", WF_E_SCHEMA, 4, 4, "'TargetActivityName' is not set"},
    {"stateinit_with_delay.xoml", WF_E_SCHEMA, 3, 3, "event activities"},
    {"bad_int_literal.xoml", WF_E_SYNTAX, 2, 50, "Quantity"},
    {"unknown_x_directive.xoml", WF_E_SCHEMA, 2, 28, "x:Key"},
    {"unknown_handler.xoml", WF_E_NAME, 2, 41, "OnMissing"},
    {"bad_bind_syntax.xoml", WF_E_SYNTAX, 2, 53, "Foo"},
    {"custom_with_children.xoml", WF_E_SCHEMA, 3, 3, "cannot contain"},
    {"clr_namespace_without_assembly.xoml", WF_E_NAME, 2, 2, "Assembly="},
    {"unknown_code_condition.xoml", WF_E_NAME, 4, 30, "IsHuge"},
    {"unknown_service_interface.xoml", WF_E_NAME, 2, 59, "IShipping"},
    {"unknown_service_method.xoml", WF_E_NAME, 2, 102, "Reject"},
    {"replicator_bad_execution_type.xoml", WF_E_SYNTAX, 2, 50, "Sideways"},
    {"ifelsebranch_outside_ifelse.xoml", WF_E_SCHEMA, 2, 2, "IfElseActivity as its parent"},
    {"eventdriven_outside_listen.xoml", WF_E_SCHEMA, 2, 2, "Listen or a State"},
    {"two_compensation_handlers.xoml", WF_E_SCHEMA, 4, 3, "more than one"},
    {"compensation_handler_not_compensatable.xoml", WF_E_SCHEMA, 3, 3, "compensatable"},
    {"nested_transaction_scope.xoml", WF_E_SCHEMA, 3, 3, "nested"},
    {"throw_without_fault.xoml", WF_E_SCHEMA, 2, 2, "FaultType or Fault"},
    {"policy_without_ruleset.xoml", WF_E_SCHEMA, 2, 2, "RuleSetReference"},
    {"class_on_inner_activity.xoml", WF_E_SCHEMA, 2, 32, "x:Class"},
    {"whencondition_outside_cag.xoml", WF_E_SCHEMA, 3, 3, "ConditionedActivityGroup"},
    {"condition_with_two_elements.xoml", WF_E_SCHEMA, 3, 3, "exactly one element"},
    {"unknown_property_element.xoml", WF_E_SCHEMA, 3, 3, "DelayActivity.Colour"},
    {"unknown_markup_extension.xoml", WF_E_SYNTAX, 2, 46, "markup extension"},
    {"initial_equals_completed_state.xoml", WF_E_SCHEMA, 1, 1, "both 'S1'"},
    {"state_init_in_composite_state.xoml", WF_E_SCHEMA, 3, 3, "leaf state"},
};

START_TEST(test_bad_file_reports_location)
{
    const bad_case *bc = &bad_cases[_i];
    char path[256];
    snprintf(path, sizeof path, BDIR "%s", bc->file);
    wfl_definition *def = (wfl_definition *)1;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfl_definition_load_file(&fx.opts, path, &def, &err);
    ck_assert_msg(rc == bc->code, "%s: code %s, want %s: %u:%u %s", bc->file, wf_status_name(rc),
                  wf_status_name(bc->code), err.line, err.col, err.message);
    WF_ASSERT_ERROR(err, bc->code, bc->line, bc->col, bc->needle);
    ck_assert_str_eq(err.file, path);
    ck_assert_ptr_null(def);
    ck_assert_uint_ge(wf_diags_error_count(fx.diags), 1);
}
END_TEST

START_TEST(test_rule_condition_unknown_when_rules_loaded)
{
    fx.opts.rules_path = XDIR "order.rules";
    wfl_definition *def = (wfl_definition *)1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_definition_load_file(&fx.opts, BDIR "unknown_rule_condition.xoml",
                                              &def, &err),
                     WF_E_NAME);
    WF_ASSERT_ERROR(err, WF_E_NAME, 4, 4, "NoSuchCondition");
    ck_assert_ptr_null(def);
}
END_TEST

/* WF3 validates every RuleConditionReference / RuleSetReference against the declaring
 * activity's rules, loaded or not (RuleConditionReference and RuleSetReference validators):
 * a name no .rules defines is a load error at the reference, never a run-time fault. */
static void expect_rules_ref_error(const char *file, const char *rules, unsigned line,
                                   unsigned col, const char *needle)
{
    fx.opts.rules_path = rules;
    fx.opts.no_auto_rules = rules == NULL;
    wfl_definition *def = (wfl_definition *)1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_definition_load_file(&fx.opts, file, &def, &err), WF_E_NAME);
    WF_ASSERT_ERROR(err, WF_E_NAME, line, col, needle);
    ck_assert_str_eq(err.file, file);
    ck_assert_ptr_null(def);
    ck_assert_uint_eq(wf_diags_error_count(fx.diags), 1);
}

START_TEST(test_rule_condition_without_rules_file_is_a_load_error)
{
    expect_rules_ref_error(BDIR "rule_condition_without_rules_file.xoml", NULL, 4, 4,
                           "condition 'MoreRemaining' not found");
}
END_TEST

START_TEST(test_policy_without_rules_file_is_a_load_error)
{
    expect_rules_ref_error(BDIR "policy_without_rules_file.xoml", NULL, 4, 4,
                           "rule set 'Pricing' not found");
}
END_TEST

START_TEST(test_policy_ruleset_unknown_when_rules_loaded)
{
    expect_rules_ref_error(BDIR "policy_unknown_ruleset.xoml", XDIR "order.rules", 4, 4,
                           "no rule set 'NoSuchRuleSet'");
}
END_TEST

/* A missing type library is the root cause: the custom activity, the handlers, the bind to a
 * class property and the rules (this.Total, the unknown condition) are not reported again. */
START_TEST(test_missing_typelib_has_no_cascade)
{
    fx.opts.rules_path = BDIR "missing_typelib_with_dependents.rules";
    wfl_definition *def = (wfl_definition *)1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_definition_load_file(&fx.opts, BDIR "missing_typelib_with_dependents.xoml",
                                              &def, &err),
                     WF_E_NOLIB);
    WF_ASSERT_ERROR(err, WF_E_NOLIB, 1, 1, "'NoSuchLib'");
    ck_assert_uint_eq(wf_diags_error_count(fx.diags), 1);
    ck_assert_ptr_null(def);
}
END_TEST

START_TEST(test_every_error_in_a_file_is_reported)
{
    wfl_definition *def = (wfl_definition *)1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_definition_load_file(&fx.opts, BDIR "several_errors.xoml", &def, &err),
                     WF_E_SCHEMA);
    ck_assert_ptr_null(def);
    ck_assert_uint_eq(wf_diags_error_count(fx.diags), 4);
    ck_assert(has_diag(WF_SEV_ERROR, 2, "Colour"));
    ck_assert(has_diag(WF_SEV_ERROR, 3, "Ghost"));
    ck_assert(has_diag(WF_SEV_ERROR, 4, "exactly one"));
    ck_assert(has_diag(WF_SEV_ERROR, 7, "duplicate"));
    WF_ASSERT_ERROR(err, WF_E_SCHEMA, 2, 29, "Colour"); /* the first in source order */
}
END_TEST

START_TEST(test_missing_typelib_reported_once)
{
    wfl_definition *def = (wfl_definition *)1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_definition_load_file(&fx.opts, BDIR "missing_typelib_declared_twice.xoml",
                                              &def, &err),
                     WF_E_NOLIB);
    WF_ASSERT_ERROR(err, WF_E_NOLIB, 1, 1, "NoSuchLib");
    ck_assert_uint_eq(wf_diags_error_count(fx.diags), 1);
    ck_assert_ptr_null(def);
}
END_TEST

START_TEST(test_missing_rules_file_is_io_error)
{
    fx.opts.rules_path = XDIR "no_such.rules";
    wfl_definition *def = (wfl_definition *)1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_definition_load_file(&fx.opts, XDIR "order.xoml", &def, &err), WF_E_IO);
    ck_assert_str_eq(err.file, XDIR "no_such.rules");
    ck_assert_ptr_null(def);
}
END_TEST

START_TEST(test_missing_file_is_io_error)
{
    wfl_definition *def = (wfl_definition *)1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_definition_load_file(&fx.opts, BDIR "does_not_exist.xoml", &def, &err),
                     WF_E_IO);
    ck_assert_ptr_null(def);
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------- */
static wf_status load_op(void *ud)
{
    wfl_definition *def = NULL;
    wf_status rc = wfl_definition_load_file(&fx.opts, ud, &def, NULL);
    if (rc == WF_OK)
        wfl_definition_destroy(def);
    else
        ck_assert_ptr_null(def);
    return rc;
}

START_TEST(test_load_survives_every_allocation_failure)
{
    /* diagnostics are collected in a list of our own, which must not fail the load */
    fx.opts.diags = NULL;
    unsigned runs = wf_test_nomem_loop(load_op, XDIR "order.xoml", 20000);
    ck_assert_uint_gt(runs, 10);
    runs = wf_test_nomem_loop(load_op, XDIR "markup.xoml", 20000);
    ck_assert_uint_gt(runs, 10);
    fx.opts.no_auto_rules = false; /* order.rules beside order.xoml */
    runs = wf_test_nomem_loop(load_op, XDIR "order.xoml", 20000);
    ck_assert_uint_gt(runs, 10);
}
END_TEST

Suite *legacy_xoml_suite(void)
{
    Suite *s = suite_create("legacy_xoml");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_order_tree_and_code_beside);
    tcase_add_test(tc, test_order_property_values);
    tcase_add_test(tc, test_rules_file_beside_the_xoml_is_paired);
    tcase_add_test(tc, test_markup_forms_and_property_elements);
    tcase_add_test(tc, test_state_machine_loads);
    tcase_add_test(tc, test_designer_file_with_many_namespaces);
    tcase_add_test(tc, test_load_from_memory_without_library_path);
    tcase_add_test(tc, test_utf16_label_over_utf8_bytes_is_tolerated);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad_input");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_bad_file_reports_location, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, test_rule_condition_unknown_when_rules_loaded);
    tcase_add_test(tc, test_rule_condition_without_rules_file_is_a_load_error);
    tcase_add_test(tc, test_policy_without_rules_file_is_a_load_error);
    tcase_add_test(tc, test_policy_ruleset_unknown_when_rules_loaded);
    tcase_add_test(tc, test_missing_typelib_has_no_cascade);
    tcase_add_test(tc, test_every_error_in_a_file_is_reported);
    tcase_add_test(tc, test_missing_typelib_reported_once);
    tcase_add_test(tc, test_missing_file_is_io_error);
    tcase_add_test(tc, test_missing_rules_file_is_io_error);
    suite_add_tcase(s, tc);
    tc = tcase_create("nomem");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_load_survives_every_allocation_failure);
    suite_add_tcase(s, tc);
    return s;
}

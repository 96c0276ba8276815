/* test_registry.c — the dependency-property registry: every built-in WF3 type with its real
 * DP names, kinds and flags, flattened base-first so indexes agree across derived types;
 * unsupported types known by name; custom and code-beside types made from a type library. */
#include <check.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_registry.h"
#include "../../legacy/wfl_typelib.h"
#include "../wf_test_util.h"

static const wfl_dp *dp_of(const char *type, const char *dp)
{
    const wfl_type *t = wfl_registry_find(type);
    ck_assert_msg(t != NULL, "no type %s", type);
    const wfl_dp *d = wfl_type_find_dp(t, dp);
    ck_assert_msg(d != NULL, "%s has no %s", type, dp);
    return d;
}

START_TEST(test_every_type_is_flattened_base_first)
{
    ck_assert_uint_gt(wfl_registry_type_count(), 40);
    for (size_t i = 0; i < wfl_registry_type_count(); i++) {
        const wfl_type *t = wfl_registry_type_at(i);
        ck_assert_uint_ge(t->dp_count, 3);
        for (size_t k = 0; k < t->dp_count; k++) {
            ck_assert_uint_eq(t->dps[k]->index, k);
            ck_assert(wfl_type_is_a(t, t->dps[k]->owner) || t->dps[k]->owner == t);
            /* names are unique in a type (the runtime's per-thread DP cache relies on it)
             * and the by-name index finds each */
            size_t first = 0;
            while (strcmp(t->dps[first]->name, t->dps[k]->name) != 0)
                first++;
            ck_assert_uint_eq(first, k);
            ck_assert_ptr_eq(wfl_type_find_dp(t, t->dps[k]->name), t->dps[k]);
            ck_assert(wfl_dp_is_builtin(t->dps[k]));
        }
        ck_assert_ptr_nonnull(t->dp_index);
        ck_assert_ptr_null(wfl_type_find_dp(t, "NoSuchProperty"));
        ck_assert_ptr_null(wfl_type_find_dp(t, ""));
        ck_assert_str_eq(t->dps[WFL_DPI_NAME]->name, "Name");
        ck_assert_str_eq(t->dps[WFL_DPI_DESCRIPTION]->name, "Description");
        ck_assert_str_eq(t->dps[WFL_DPI_ENABLED]->name, "Enabled");
        ck_assert(t->dps[WFL_DPI_ENABLED]->flags & WFL_DP_METADATA);
        if (t->kind < WFL_KIND_CUSTOM) {
            ck_assert_ptr_eq(wfl_registry_builtin(t->kind), t);
            ck_assert_str_ne(wfl_kind_name(t->kind), "?");
        }
    }
    ck_assert_ptr_null(wfl_registry_type_at(wfl_registry_type_count()));
    ck_assert_ptr_null(wfl_registry_builtin(WFL_KIND_CUSTOM));
}
END_TEST

START_TEST(test_builtin_dps_match_wf3)
{
    const wfl_dp *d = dp_of("DelayActivity", "TimeoutDuration");
    ck_assert_int_eq(d->kind, WFL_DPK_VALUE);
    ck_assert_ptr_eq(d->type, &wf_type_timespan);
    ck_assert(!(d->flags & WFL_DP_METADATA));
    d = dp_of("WhileActivity", "Condition");
    ck_assert_int_eq(d->kind, WFL_DPK_CONDITION);
    ck_assert(d->flags & WFL_DP_METADATA);
    d = dp_of("CodeActivity", "ExecuteCode");
    ck_assert_int_eq(d->kind, WFL_DPK_EVENT);
    ck_assert(d->flags & WFL_DP_EVENT);
    d = dp_of("ReplicatorActivity", "ExecutionType");
    ck_assert_str_eq(d->enum_values[0], "Sequence");
    ck_assert_str_eq(d->enum_values[1], "Parallel");
    static const char *const rep[] = {"InitialChildData", "UntilCondition", "ChildInitialized",
                                      "ChildCompleted", "Initialized", "Completed"};
    for (size_t i = 0; i < sizeof rep / sizeof rep[0]; i++)
        dp_of("ReplicatorActivity", rep[i]);
    static const char *const hee[] = {"InterfaceType", "EventName", "ParameterBindings",
                                      "Invoked", "CorrelationToken", "Roles"};
    for (size_t i = 0; i < sizeof hee / sizeof hee[0]; i++)
        dp_of("HandleExternalEventActivity", hee[i]);
    ck_assert_int_eq(dp_of("CallExternalMethodActivity", "ParameterBindings")->kind,
                     WFL_DPK_PARAMS);
    ck_assert_int_eq(dp_of("PolicyActivity", "RuleSetReference")->kind, WFL_DPK_RULESET);
    ck_assert_int_eq(dp_of("SetStateActivity", "TargetStateName")->kind, WFL_DPK_ACTIVITY_REF);
    ck_assert(dp_of("FaultHandlerActivity", "Fault")->flags & WFL_DP_READONLY);
    ck_assert(!(dp_of("ThrowActivity", "Fault")->flags & WFL_DP_READONLY));
    ck_assert_int_eq(dp_of("ThrowActivity", "FaultType")->kind, WFL_DPK_TYPE);
    ck_assert_ptr_eq(dp_of("TerminateActivity", "Error")->type, &wf_type_string);
    ck_assert_ptr_eq(dp_of("SuspendActivity", "Error")->type, &wf_type_string);
    dp_of("StateMachineWorkflowActivity", "InitialStateName");
    dp_of("StateMachineWorkflowActivity", "CompletedStateName");
    dp_of("CompensateActivity", "TargetActivityName");
    dp_of("InvokeWorkflowActivity", "TargetWorkflow");
    dp_of("ConditionedActivityGroup", "UntilCondition");
    dp_of("TransactionScopeActivity", "TransactionOptions");
    ck_assert(dp_of("IfElseBranchActivity", "Condition")->flags & WFL_DP_OPTIONAL);
    ck_assert_ptr_null(wfl_type_find_dp(wfl_registry_find("SequenceActivity"), "Condition"));
    /* the default of Enabled is true, of TimeoutDuration zero */
    ck_assert(dp_of("CodeActivity", "Enabled")->default_value.u.b);
}
END_TEST

START_TEST(test_type_flags_and_bases)
{
    const wfl_type *seq = wfl_registry_find("SequenceActivity");
    const wfl_type *wf = wfl_registry_find("SequentialWorkflowActivity");
    ck_assert(wfl_type_is_a(wf, seq));
    ck_assert(!wfl_type_is_a(seq, wf));
    ck_assert(wf->flags & WFL_TF_ROOT);
    ck_assert(wfl_registry_find("DelayActivity")->flags & WFL_TF_EVENT);
    ck_assert(wfl_registry_find("HandleExternalEventActivity")->flags & WFL_TF_EVENT);
    ck_assert(!(wfl_registry_find("CodeActivity")->flags & WFL_TF_COMPOSITE));
    ck_assert(wfl_registry_find("CompensatableSequenceActivity")->flags & WFL_TF_COMPENSATABLE);
    ck_assert(wfl_registry_find("FaultHandlersActivity")->flags & WFL_TF_ALT_FLOW);
    ck_assert_ptr_null(wfl_registry_find("Activity"));          /* abstract */
    ck_assert_ptr_null(wfl_registry_find("CompositeActivity")); /* abstract */
    ck_assert_ptr_null(wfl_registry_find("FooActivity"));
    ck_assert_int_eq(wfl_registry_find("StateMachineWorkflowActivity")->base->kind,
                     WFL_KIND_STATE);
}
END_TEST

START_TEST(test_unsupported_types_are_known_by_name)
{
    static const char *const names[] = {
        "WebServiceInputActivity", "WebServiceOutputActivity", "WebServiceFaultActivity",
        "EventHandlingScopeActivity", "EventHandlersActivity", "SynchronizationScopeActivity",
        "CompensatableTransactionScopeActivity"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const wfl_type *t = wfl_registry_find(names[i]);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(t->kind, WFL_KIND_UNSUPPORTED);
        ck_assert_ptr_nonnull(t->unsupported);
    }
    ck_assert_ptr_nonnull(strstr(wfl_registry_find("WebServiceInputActivity")->unsupported,
                                 "web-service"));
    /* WF 3.5 messaging and web-service calls load as known kinds (legacy/wfl_act_service.c) */
    ck_assert_int_eq(wfl_registry_find("ReceiveActivity")->kind, WFL_KIND_RECEIVE);
    ck_assert(wfl_registry_find("ReceiveActivity")->flags & WFL_TF_EVENT);
    ck_assert_int_eq(wfl_registry_find("SendActivity")->kind, WFL_KIND_SEND);
    ck_assert_int_eq(wfl_registry_find("InvokeWebServiceActivity")->kind,
                     WFL_KIND_INVOKE_WEB_SERVICE);
}
END_TEST

START_TEST(test_attached_properties)
{
    const wfl_dp *when = wfl_registry_attached("ConditionedActivityGroup", "WhenCondition");
    ck_assert_ptr_nonnull(when);
    ck_assert_int_eq(when->kind, WFL_DPK_CONDITION);
    ck_assert(when->flags & WFL_DP_METADATA);
    const wfl_dp *dyn = wfl_registry_attached("WorkflowChanges", "Condition");
    ck_assert_ptr_eq(dyn, dp_of("SequentialWorkflowActivity", "DynamicUpdateCondition"));
    ck_assert_ptr_null(wfl_registry_attached("WhileActivity", "Condition"));
}
END_TEST

static const char typelib_xml[] =
    "<TypeLibrary xmlns=\"urn:wfbridge:typelib\" Name=\"Reg\" Library=\"libnone.so\">\n"
    "  <ActivityType Name=\"Stamp\" Function=\"stamp\">\n"
    "    <Property Name=\"Label\" Type=\"String\" Default=\"x\"/>\n"
    "    <Property Name=\"Count\" Type=\"Int32\" Direction=\"Out\"/>\n"
    "  </ActivityType>\n"
    "  <Class Name=\"Reg.Flow\"><Property Name=\"Total\" Type=\"Int64\"/>"
    "<Property Name=\"Started\" Type=\"DateTime\"/>"
    "<Handler Name=\"Add\" Function=\"reg_add\"><Parameter Property=\"Total\" "
    "Direction=\"InOut\"/></Handler></Class>\n"
    "  <Class Name=\"Reg.Bad\"><Property Name=\"Enabled\" Type=\"Boolean\"/></Class>\n"
    "</TypeLibrary>\n";

START_TEST(test_custom_and_code_beside_types)
{
    wf_types *types = wf_types_create();
    wfl_typelib *tl = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_typelib_parse(types, "reg.activities.xml", typelib_xml, strlen(typelib_xml),
                                    &tl, NULL, &err) == WF_OK,
                  "%s", err.message);
    wf_arena *arena = wf_arena_create(0);
    const wfl_type *t = NULL;
    ck_assert_int_eq(wfl_type_create_custom(arena, tl, wfl_typelib_activity(tl, "Stamp"), &t,
                                            NULL),
                     WF_OK);
    ck_assert_int_eq(t->kind, WFL_KIND_CUSTOM);
    ck_assert_str_eq(t->name, "Stamp");
    ck_assert_uint_eq(t->dp_count, 5);
    const wfl_dp *label = wfl_type_find_dp(t, "Label");
    ck_assert_uint_eq(label->index, 3);
    ck_assert_str_eq(wf_value_str(&label->default_value), "x");
    const wfl_dp *count = wfl_type_find_dp(t, "Count");
    ck_assert_int_eq(count->tl_prop->dir, WFL_TL_OUT);
    ck_assert_ptr_eq(count->default_value.type, &wf_type_int32); /* zero of its type */
    const wfl_type *root = NULL;
    const wfl_type *base = wfl_registry_builtin(WFL_KIND_SEQUENTIAL_WORKFLOW);
    ck_assert_int_eq(wfl_type_create_code_beside(arena, base, tl, wfl_typelib_class(tl, "Reg.Flow"),
                                                 &root, NULL),
                     WF_OK);
    ck_assert(wfl_type_is_a(root, base));
    ck_assert_int_eq(root->kind, WFL_KIND_SEQUENTIAL_WORKFLOW);
    ck_assert_uint_eq(wfl_type_find_dp(root, "Total")->index, base->dp_count);
    /* defect #26: an unset DateTime is .NET's default(DateTime), not the Unix epoch */
    const wf_value *started = &wfl_type_find_dp(root, "Started")->default_value;
    ck_assert_ptr_eq(started->type, &wf_type_datetime);
    char when[64];
    wf_datetime_format(started->u.i64, when, sizeof when);
    ck_assert_str_eq(when, "0001-01-01T00:00:00Z");
    ck_assert_ptr_eq(wfl_type_find_dp(root, "Initialized"), wfl_type_find_dp(base, "Initialized"));
    /* handler parameters resolved once, against the root's DPs */
    const wfl_tl_class *flow = wfl_typelib_class(tl, "Reg.Flow");
    ck_assert_uint_eq(wfl_tl_class_func_count(flow), 1);
    ck_assert_ptr_nonnull(root->class_fn_dps);
    ck_assert_ptr_eq(root->class_fn_dps[0][0], wfl_type_find_dp(root, "Total"));
    ck_assert(!wfl_dp_is_builtin(wfl_type_find_dp(root, "Total")));
    ck_assert(wfl_dp_is_builtin(wfl_type_find_dp(root, "Initialized")));
    wf_error_clear(&err);
    ck_assert_int_eq(wfl_type_create_code_beside(arena, base, tl, wfl_typelib_class(tl, "Reg.Bad"),
                                                 &root, &err),
                     WF_E_SCHEMA);
    ck_assert_ptr_null(root);
    ck_assert_ptr_nonnull(strstr(err.message, "Enabled"));
    ck_assert_uint_eq(err.line, 7);
    wf_arena_destroy(arena);
    wfl_typelib_destroy(tl);
    wf_types_destroy(types);
}
END_TEST

Suite *legacy_registry_suite(void)
{
    Suite *s = suite_create("legacy_registry");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_every_type_is_flattened_base_first);
    tcase_add_test(tc, test_builtin_dps_match_wf3);
    tcase_add_test(tc, test_type_flags_and_bases);
    tcase_add_test(tc, test_unsupported_types_are_known_by_name);
    tcase_add_test(tc, test_attached_properties);
    tcase_add_test(tc, test_custom_and_code_beside_types);
    suite_add_tcase(s, tc);
    return s;
}

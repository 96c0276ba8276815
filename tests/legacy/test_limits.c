/* test_limits.c — the executor's work-item limit: a state machine whose states SetState each
 * other in StateInitialization never goes idle (WF3 spins forever); with max_work_items the
 * pulse stops with a located WF_E_LIMIT and the executor can still be destroyed cleanly. */
#include <check.h>
#include <string.h>

#include "../../common/wf_value.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_exec.h"
#include "../wf_test_util.h"

#define LOOP_XOML "tests/legacy/data/exec/setstate_loop.xoml"

static wf_status run_loop(uint64_t limit, wfl_exec_state *state, wf_error *err)
{
    wf_types *types = wf_types_create();
    ck_assert_ptr_nonnull(types);
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = types;
    wfl_definition *def = NULL;
    ck_assert_int_eq(wfl_definition_load_file(&lo, LOOP_XOML, &def, err), WF_OK);
    wfl_exec_opts eo = WFL_EXEC_OPTS_INIT;
    eo.max_work_items = limit;
    wfl_exec *ex = NULL;
    ck_assert_int_eq(wfl_exec_create(def, NULL, &eo, &ex, err), WF_OK);
    wf_status st = wfl_exec_run(ex, state, err);
    wfl_exec_destroy(ex);
    wfl_definition_destroy(def);
    wf_types_destroy(types);
    return st;
}

START_TEST(test_loop_without_idle_stops_at_the_limit_with_location)
{
    wf_error err = WF_ERROR_INIT;
    wfl_exec_state state = WFL_EXEC_CREATED;
    ck_assert_int_eq(run_loop(1000, &state, &err), WF_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err.message, "1000 work items"));
    ck_assert_ptr_nonnull(strstr(err.file, "setstate_loop.xoml"));
    ck_assert_uint_eq(err.line, 1);
    ck_assert_int_ne(state, WFL_EXEC_CLOSED);
}
END_TEST

START_TEST(test_limit_of_one_stops_at_once)
{
    wf_error err = WF_ERROR_INIT;
    wfl_exec_state state = WFL_EXEC_CREATED;
    ck_assert_int_eq(run_loop(1, &state, &err), WF_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err.message, "1 work items"));
}
END_TEST

START_TEST(test_workflow_within_the_limit_completes)
{
    static const char xoml[] =
        "<SequentialWorkflowActivity x:Name=\"Small\" "
        "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
        "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
        "  <SequenceActivity x:Name=\"a\"><SequenceActivity x:Name=\"b\" /></SequenceActivity>\n"
        "</SequentialWorkflowActivity>\n";
    wf_error err = WF_ERROR_INIT;
    wf_types *types = wf_types_create();
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = types;
    wfl_definition *def = NULL;
    ck_assert_int_eq(wfl_definition_load_mem(&lo, "small.xoml", xoml, strlen(xoml), &def, &err),
                     WF_OK);
    wfl_exec_opts eo = WFL_EXEC_OPTS_INIT;
    eo.max_work_items = 1000;
    wfl_exec *ex = NULL;
    ck_assert_int_eq(wfl_exec_create(def, NULL, &eo, &ex, &err), WF_OK);
    wfl_exec_state state = WFL_EXEC_CREATED;
    ck_assert_int_eq(wfl_exec_run(ex, &state, &err), WF_OK);
    ck_assert_int_eq(state, WFL_EXEC_CLOSED);
    wfl_exec_destroy(ex);
    wfl_definition_destroy(def);
    wf_types_destroy(types);
}
END_TEST

Suite *legacy_limits_suite(void)
{
    Suite *s = suite_create("legacy_limits");
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_loop_without_idle_stops_at_the_limit_with_location);
    tcase_add_test(limits, test_limit_of_one_stops_at_once);
    tcase_add_test(limits, test_workflow_within_the_limit_completes);
    suite_add_tcase(s, limits);
    return s;
}

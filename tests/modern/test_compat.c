/* test_compat.c — real-world WF4 shapes (VS2010 VB, VS2012+ C#, CoreWF, TFS attached
 * properties, empty designer files, <x:Key> elements, Delay/Throw content, shared state
 * machine triggers) load and run on the built-in catalogue; what we do not support (custom
 * and WCF activities, .xamlx, object keys, plain x:Property members, VB features the
 * compiler lacks) fails with one located error naming the construct. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_definition.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"

#define DATA "tests/modern/data/compat/"

/* ---- running a fixture ------------------------------------------------------------------ */
typedef struct fix {
    wfm_runtime *rt;
    wfm_definition *def;
    wfm_instance *inst;
    wf_diags *diags;
    wf_buf out;
} fix;

static void capture(void *ud, const char *text, size_t len)
{
    wf_buf_add(ud, text, len);
}

/* A fixed virtual clock: Delay(0) is due at once and no test reads the real clock. */
static int64_t fixed_clock(void *ud)
{
    (void)ud;
    return 1700000000000000;
}

static void fix_open(fix *f, const char *file)
{
    memset(f, 0, sizeof *f);
    wf_buf_init(&f->out);
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.write = capture;
    o.write_ud = &f->out;
    o.clock = fixed_clock;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &f->rt, &err), WF_OK);
    f->diags = wf_diags_create();
    ck_assert_ptr_nonnull(f->diags);
    wf_status rc = wfm_runtime_load(f->rt, file, &f->def, f->diags, &err);
    ck_assert_msg(rc == WF_OK, "%s:%u:%u: %s", file, err.line, err.col, err.message);
    ck_assert_int_eq(wfm_instance_create(f->rt, f->def, &f->inst, &err), WF_OK);
}

static void fix_input(fix *f, const char *name, wf_value v)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_set_input(f->inst, name, &v, &err) == WF_OK, "%s", err.message);
    wf_value_release(&v);
}

static const char *fix_run(fix *f)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_run(f->inst, &err) == WF_OK, "%s", err.message);
    return wfm_instance_state_name(wfm_instance_state_get(f->inst));
}

static void fix_close(fix *f)
{
    wfm_instance_destroy(f->inst);
    wfm_definition_release(f->def);
    wfm_runtime_destroy(f->rt);
    wf_diags_destroy(f->diags);
    wf_buf_fini(&f->out);
}

static const char *out_text(const fix *f)
{
    return f->out.data ? f->out.data : "";
}

/* Run `file` with one Int32 input (name NULL: none); check the state and everything written. */
static void expect_run(const char *file, const char *input, int32_t value, const char *text)
{
    fix f;
    fix_open(&f, file);
    if (input)
        fix_input(&f, input, wf_int32(value));
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(out_text(&f), text);
    ck_assert_uint_eq(wf_diags_count(f.diags), 0);
    fix_close(&f);
}

/* ---- files that load and run ------------------------------------------------------------ */
START_TEST(test_vs2010_vb_designer_file_runs)
{
    fix f;
    fix_open(&f, DATA "vs2010_vb_sequence.xaml");
    ck_assert_str_eq(wfm_definition_class(f.def), "Compat.Greeter");
    ck_assert_uint_eq(wfm_definition_arg_count(f.def), 3);
    ck_assert(wfm_definition_arg_has_default(f.def, 0)); /* this:Greeter.Who="World" */
    ck_assert(wfm_definition_arg_has_default(f.def, 1));
    ck_assert(!wfm_definition_arg_has_default(f.def, 2));
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(out_text(&f), "Hello, World #1\nHello, World #2\ndone World\n");
    const wf_value *said = wfm_instance_output(f.inst, "Said");
    ck_assert_ptr_nonnull(said);
    ck_assert_int_eq(said->u.i32, 2);
    ck_assert_uint_eq(wf_diags_count(f.diags), 0);
    fix_close(&f);
}
END_TEST

START_TEST(test_vs2012_csharp_designer_file_runs)
{
    fix f;
    fix_open(&f, DATA "vs2012_csharp.xaml");
    wf_value items[3] = {wf_int32(4), wf_int32(5), wf_int32(6)};
    wf_value list;
    const wf_type *lt = wf_types_list(wfm_runtime_types(f.rt), &wf_type_int32);
    ck_assert_ptr_nonnull(lt);
    ck_assert_int_eq(wf_value_list(lt, items, 3, &list), WF_OK);
    fix_input(&f, "Prices", list);
    ck_assert_str_eq(fix_run(&f), "Closed");
    /* sum starts at the Bonus default (<this:Totals.Bonus> = 5 * 2) */
    ck_assert_str_eq(out_text(&f), "3 items, total 25\n");
    ck_assert_int_eq(wfm_instance_output(f.inst, "Total")->u.i32, 25);
    ck_assert_uint_eq(wf_diags_count(f.diags), 0);
    fix_close(&f);
}
END_TEST

/* FlowSwitch cases keyed by <x:Key><x:String>..</x:String></x:Key>, by <x:Key>text</x:Key>,
 * by x:Key="..." and by <x:Reference>id<x:Key>..</x:Key></x:Reference>; FlowDecision.True. */
START_TEST(test_flowchart_inline_key_elements)
{
    expect_run(DATA "flowchart_keys.xaml", "Size", 4, "a small one\neven\n");
    expect_run(DATA "flowchart_keys.xaml", "Size", 7, "a small one\nodd\n");
    expect_run(DATA "flowchart_keys.xaml", "Size", 50, "a medium one\neven\n");
    expect_run(DATA "flowchart_keys.xaml", "Size", 500, "a large one\n");
}
END_TEST

/* <Delay>[d]</Delay>, <Delay><InArgument>, <Throw><InArgument><mva:VisualBasicValue>,
 * Switch cases keyed by <x:Key><x:Int32>, <Literal>, Catch with ActivityAction.Argument. */
START_TEST(test_content_properties_and_switch_keys)
{
    expect_run(DATA "content_forms.xaml", "Pick", 1, "one\ncaught: pick 1\nfinally\n");
    expect_run(DATA "content_forms.xaml", "Pick", 2, "two\ncaught: pick 2\nfinally\n");
    expect_run(DATA "content_forms.xaml", "Pick", 3, "three\ncaught: pick 3\nfinally\n");
    expect_run(DATA "content_forms.xaml", "Pick", 9, "other\ncaught: pick 9\nfinally\n");
}
END_TEST

/* The VS2012 state machine shape: InitialState written inline, a Transition trigger shared
 * with Trigger="{x:Reference}", Transition.To inline, StateMachine.Variables. */
START_TEST(test_state_machine_shared_trigger)
{
    expect_run(DATA "statemachine_shared_trigger.xaml", "Target", 3, "leaving\ncounted 3\n");
    expect_run(DATA "statemachine_shared_trigger.xaml", "Target", 1, "leaving\ncounted 1\n");
}
END_TEST

/* CoreWF writes <CSharpValue>/<CSharpReference> in the activities namespace, and an
 * unprefixed VisualBasic.Settings="{x:Null}" on the root. */
START_TEST(test_corewf_unprefixed_csharp_expressions)
{
    fix f;
    fix_open(&f, DATA "corewf_csharp.xaml");
    wf_value name;
    ck_assert_int_eq(wf_value_cstring("Ann", &name), WF_OK);
    fix_input(&f, "Name", name);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(out_text(&f), "Hello Ann, it is 2007\n");
    ck_assert_str_eq(wf_value_str(wfm_instance_output(f.inst, "Greeting")),
                     "Hello Ann, it is 2007");
    fix_close(&f);
}
END_TEST

/* Built-in activities, Variable and InArgument written through the CLR namespaces of
 * System.Activities (xmlns:my="clr-namespace:System.Activities.Statements;assembly=...") */
START_TEST(test_clr_namespace_builtins)
{
    fix f;
    fix_open(&f, DATA "clr_namespace_builtins.xaml");
    wf_value name;
    ck_assert_int_eq(wf_value_cstring("Oslo", &name), WF_OK);
    fix_input(&f, "Name", name);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(out_text(&f), "city Oslo\n");
    fix_close(&f);
}
END_TEST

/* A new designer file: members and view state, no activity yet. It runs and does nothing. */
START_TEST(test_empty_designer_file_runs)
{
    fix f;
    fix_open(&f, DATA "empty_designer.xaml");
    ck_assert_uint_eq(wfm_definition_arg_count(f.def), 1);
    ck_assert_str_eq(wfm_definition_arg_name(f.def, 0), "Input");
    ck_assert_uint_eq(wfm_definition_node_count(f.def), 1);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(out_text(&f), "");
    fix_close(&f);
}
END_TEST

/* VB literal forms real files use: the R (Double) suffix and {...} array literals. */
START_TEST(test_vb_double_suffix_and_array_literal_run)
{
    fix f;
    fix_open(&f, DATA "vb_double_suffix.xaml");
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(out_text(&f), "1000\n");
    fix_close(&f);
    fix_open(&f, DATA "vb_array_literal.xaml");
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(out_text(&f), "bill,steve\n");
    fix_close(&f);
}
END_TEST

/* Attached properties of unknown .NET types are warnings; DynamicUpdateInfo is silent. */
START_TEST(test_attached_properties_are_warnings)
{
    static const struct {
        unsigned line, col;
        const char *needle;
    } want[] = {{8, 47, "'trk:TrackingHint.Importance' is ignored"},
                {9, 5, "'trk:TrackingHint.Category' is ignored"},
                {10, 29, "'trk:TrackingHint.Importance' is ignored"},
                {11, 26, "'trk:TrackingHint.Importance' is ignored"}};
    fix f;
    fix_open(&f, DATA "attached_properties.xaml");
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(out_text(&f), "first\nsecond\n");
    wf_diags_sort(f.diags);
    ck_assert_uint_eq(wf_diags_error_count(f.diags), 0);
    ck_assert_uint_eq(wf_diags_count(f.diags), 4);
    for (size_t i = 0; i < 4; i++) {
        const wf_diag *d = wf_diags_get(f.diags, i);
        ck_assert_int_eq(d->severity, WF_SEV_WARNING);
        WF_ASSERT_ERROR(d->error, WF_E_SCHEMA, want[i].line, want[i].col, want[i].needle);
    }
    fix_close(&f);
}
END_TEST

/* ---- what we do not support: one located error, no cascade ------------------------------ */
typedef struct bad_case {
    const char *file;
    wf_status code;
    unsigned line, col;
    const char *needle;
    size_t errors; /* how many errors in all */
} bad_case;

static const bad_case bad_cases[] = {
    {"custom_activity.xaml", WF_E_SCHEMA, 5, 5,
     "unknown activity 'ReadInt' (a custom activity from assembly 'NumberGuessActivities')", 1},
    /* the x:Reference to the failed node is not reported again */
    {"custom_activity_referenced.xaml", WF_E_SCHEMA, 7, 5, "unknown activity 'PromptNode'", 1},
    {"wcf_correlation.xaml", WF_E_SCHEMA, 5, 5,
     "unknown activity 'InitializeCorrelation' (of the WCF messaging activities only Receive, "
     "SendReply, Send and ReceiveReply are supported)",
     1},
    /* a Send whose endpoint file is missing: located at the Send, before anything runs */
    {"wcf_send.xaml", WF_E_NAME, 4, 5, "endpoint 'partner': cannot read the endpoint file", 1},
    {"workflow_service.xamlx", WF_E_SCHEMA, 1, 1, "unknown activity 'WorkflowService'", 1},
    {"object_key.xaml", WF_E_SCHEMA, 6, 9, "unsupported x:Key value 'Person'", 1},
    {"key_twice.xaml", WF_E_SCHEMA, 4, 7, "x:Key is set more than once on WriteLine", 1},
    /* the this:GetClaim.EndpointConfigurationName default is not reported again */
    {"plain_property.xaml", WF_E_SCHEMA, 4, 56,
     "x:Property 'EndpointConfigurationName' must be an InArgument", 1},
    {"trigger_reference.xaml", WF_E_SCHEMA, 3, 26,
     "x:Reference cannot appear in PickBranch.Trigger", 1},
    {"variable_reference.xaml", WF_E_SCHEMA, 4, 7,
     "x:Reference to a variable declared elsewhere is not supported in Sequence.Variables", 1},
    {"array_type.xaml", WF_E_TYPE, 4, 47, "unknown type 's:String[]'", 1},
    /* VB features the expression compiler lacks: located at the offending text */
    /* expression errors are located in the file, not in the decoded text: &#xA; and entities
     * are several columns wide, a line break in an attribute is a space of the text, and
     * columns count characters */
    {"expr_after_entity_newline.xaml", WF_E_NAME, 3, 65, "unknown name 'nosuch'", 1},
    {"expr_after_attribute_newline.xaml", WF_E_NAME, 4, 7, "unknown name 'nosuch'", 1},
    {"expr_after_non_ascii.xaml", WF_E_NAME, 3, 52, "unknown name 'nosuch'", 1},
    /* a UiPath robot file: its activities come from a namespace we have no catalogue for */
    {"uipath_activity.xaml", WF_E_SCHEMA, 3, 5,
     "unknown activity 'LogMessage' (a custom activity from namespace "
     "'http://schemas.uipath.com/workflow/activities')", 1},
    /* the unknown exception type is reported where it is written (Catch and ActivityAction),
     * not again by TryCatch's check of its catches */
    {"custom_exception_catch.xaml", WF_E_TYPE, 8, 31, "unknown type 'ui:BusinessRuleException'",
     2},
};

START_TEST(test_unsupported_reports_one_located_error)
{
    const bad_case *bc = &bad_cases[_i];
    char path[256];
    snprintf(path, sizeof path, DATA "bad/%s", bc->file);
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.clock = fixed_clock;
    wfm_runtime *rt = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    wf_diags *diags = wf_diags_create();
    wfm_definition *def = (wfm_definition *)&path; /* must be reset to NULL */
    wf_status rc = wfm_runtime_load(rt, path, &def, diags, &err);
    ck_assert_msg(rc == bc->code, "%s: rc %s (%u:%u: %s)", bc->file, wf_status_name(rc),
                  err.line, err.col, err.message);
    ck_assert_ptr_null(def);
    WF_ASSERT_ERROR(err, bc->code, bc->line, bc->col, bc->needle);
    ck_assert_str_eq(err.file, path);
    ck_assert_msg(wf_diags_error_count(diags) == bc->errors, "%s: %zu errors", bc->file,
                  wf_diags_error_count(diags));
    wf_diags_destroy(diags);
    wfm_runtime_destroy(rt);
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------ */
typedef struct nomem_ud {
    wfm_runtime *rt;
    const char *name;
    char *text;
    size_t len;
} nomem_ud;

static wf_status load_op(void *ud)
{
    nomem_ud *u = ud;
    wfm_load_opts opts = WFM_LOAD_OPTS_INIT;
    opts.catalogue = wfm_runtime_catalogue(u->rt);
    opts.types = wfm_runtime_types(u->rt);
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfm_definition_load_mem(&opts, u->name, u->text, u->len, &def, &err);
    if (rc != WF_OK)
        ck_assert_ptr_null(def);
    wfm_definition_release(def);
    return rc;
}

static void nomem_file(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, DATA "%s", name);
    nomem_ud u = {NULL, name, NULL, 0};
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.clock = fixed_clock;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &u.rt, &err), WF_OK);
    u.text = wf_test_read_file(path, &u.len);
    ck_assert_ptr_nonnull(u.text);
    unsigned runs = wf_test_nomem_loop(load_op, &u, 20000);
    ck_assert_uint_gt(runs, 10);
    ck_assert_int_eq(load_op(&u), WF_OK);
    wf_free(u.text);
    wfm_runtime_destroy(u.rt);
}

START_TEST(test_nomem_keys_and_empty_body)
{
    nomem_file("flowchart_keys.xaml");
    nomem_file("empty_designer.xaml");
    nomem_file("attached_properties.xaml");
    nomem_file("clr_namespace_builtins.xaml");
    nomem_file("vs2012_csharp.xaml");
}
END_TEST

Suite *modern_compat_suite(void)
{
    Suite *s = suite_create("modern_compat");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_vs2010_vb_designer_file_runs);
    tcase_add_test(tc, test_vs2012_csharp_designer_file_runs);
    tcase_add_test(tc, test_flowchart_inline_key_elements);
    tcase_add_test(tc, test_content_properties_and_switch_keys);
    tcase_add_test(tc, test_state_machine_shared_trigger);
    tcase_add_test(tc, test_corewf_unprefixed_csharp_expressions);
    tcase_add_test(tc, test_clr_namespace_builtins);
    tcase_add_test(tc, test_empty_designer_file_runs);
    tcase_add_test(tc, test_vb_double_suffix_and_array_literal_run);
    tcase_add_test(tc, test_attached_properties_are_warnings);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad_input");
    tcase_add_loop_test(tc, test_unsupported_reports_one_located_error, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("nomem");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_nomem_keys_and_empty_body);
    suite_add_tcase(s, tc);
    return s;
}

/* test_convert.c — the converter engine (converter/wfc_convert.c): golden cases (XOML and
 * type library -> the expected XAML byte for byte, the expected report entries, and the same
 * outcome in both runtimes on each case's inputs), the legacy samples, and bad input. Set
 * WFC_UPDATE_GOLDEN=1 to rewrite the expected files after a deliberate change. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../converter/wfc_convert.h"
#include "../../converter/wfc_output.h"
#include "../../converter/wfc_report.h"
#include "../../bridge/wfb_interop.h"
#include "../wf_test_util.h"
#include "support_converter.h"

#define CASES "tests/converter/cases"

typedef struct converted {
    wfc_report *report;
    wfc_file *file;
    char *xaml;
    size_t len;
    wfc_sidecars side; /* generated for Interop */
    wf_status status;
    wf_error err;
} converted;

static void convert(const char *xoml, bool interop, converted *out)
{
    memset(out, 0, sizeof *out);
    wf_libpath *lp = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(wfc_test_lib_dirs(), &lp, &err), WF_OK);
    ck_assert_int_eq(wfc_report_create(&out->report, &err), WF_OK);
    out->file = wfc_report_add_file(out->report, xoml);
    wfc_opts o = WFC_OPTS_INIT;
    o.libpath = lp;
    o.force_interop = interop;
    o.register_interop = wfb_interop_register;
    out->status =
        wfc_convert_file_side(&o, xoml, out->file, &out->xaml, &out->len, &out->side, &out->err);
    wf_libpath_destroy(lp);
}

static void converted_free(converted *c)
{
    wfc_sidecars_free(&c->side);
    wf_free(c->xaml);
    wfc_report_destroy(c->report);
}

static bool has_activity(const wfc_file *f, const char *name, const char *modern, const char *act)
{
    for (size_t i = 0; i < wfc_file_activity_count(f); i++) {
        const char *n, *m;
        wfc_action a;
        wfc_file_activity(f, i, &n, &m, &a);
        if (strcmp(n, name) == 0 && strcmp(m, modern) == 0 && strcmp(wfc_action_name(a), act) == 0)
            return true;
    }
    return false;
}

static size_t count_diags(const wfc_file *f, const char *sev_name, const char *rule, unsigned line)
{
    size_t n = 0;
    for (size_t i = 0; i < wfc_file_diag_count(f); i++) {
        wfc_severity sev;
        const char *r, *msg;
        unsigned l, col;
        wfc_file_diag(f, i, &sev, &r, &l, &col, &msg);
        n += strcmp(wfc_severity_name(sev), sev_name) == 0 && strcmp(r, rule) == 0 &&
             (line == 0 || l == line);
    }
    return n;
}

/* expected.report: "status S", "activity NAME MODERN ACTION", "diag SEVERITY RULE LINE". */
static void check_report(const char *dir, const wfc_file *f)
{
    char path[512];
    snprintf(path, sizeof path, "%s/expected.report", dir);
    FILE *in = fopen(path, "r");
    ck_assert_msg(in != NULL, "%s missing", path);
    char line[512];
    size_t errors = 0;
    while (fgets(line, sizeof line, in)) {
        char a[128], b[128], c[128];
        unsigned n = 0;
        if (sscanf(line, "status %127s", a) == 1) {
            ck_assert_str_eq(wfc_status_name(wfc_file_status(f)), a);
        } else if (sscanf(line, "activity %127s %127s %127s", a, b, c) == 3) {
            ck_assert_msg(has_activity(f, a, b, c), "%s: no activity %s -> %s (%s)", dir, a, b, c);
        } else if (sscanf(line, "diag %127s %127s %u", a, b, &n) == 3) {
            ck_assert_msg(count_diags(f, a, b, n) == 1, "%s: no %s %s at line %u", dir, a, b, n);
            errors += strcmp(a, "error") == 0;
        }
    }
    fclose(in);
    ck_assert_uint_eq(wfc_file_error_count(f), errors);
}

static void check_golden(const char *dir, const converted *c)
{
    char path[512];
    snprintf(path, sizeof path, "%s/expected.xaml", dir);
    if (getenv("WFC_UPDATE_GOLDEN")) {
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(wfc_write_atomic(path, c->xaml, c->len, &err), WF_OK);
    }
    size_t len = 0;
    char *want = wf_test_read_file(path, &len);
    ck_assert_msg(want != NULL, "%s missing", path);
    ck_assert_msg(len == c->len && memcmp(want, c->xaml, len) == 0,
                  "%s differs from the conversion:\n%s", path, c->xaml);
    wf_free(want);
    for (size_t i = 0; i < c->side.count; i++) { /* the generated Interop composites */
        const wfc_sidecar *sc = &c->side.items[i];
        snprintf(path, sizeof path, "%s/%s", dir, sc->name);
        if (getenv("WFC_UPDATE_GOLDEN")) {
            wf_error err = WF_ERROR_INIT;
            ck_assert_int_eq(wfc_write_atomic(path, sc->text, sc->len, &err), WF_OK);
        }
        want = wf_test_read_file(path, &len);
        ck_assert_msg(want != NULL, "%s missing", path);
        ck_assert_msg(len == sc->len && memcmp(want, sc->text, len) == 0,
                      "%s differs from the conversion:\n%s", path, sc->text);
        wf_free(want);
    }
}

static void check_runs(const char *dir, const char *xoml)
{
    char path[512], xaml[512];
    snprintf(path, sizeof path, "%s/inputs", dir);
    snprintf(xaml, sizeof xaml, "%s/expected.xaml", dir);
    FILE *in = fopen(path, "r");
    if (!in)
        return;
    char line[1024];
    while (fgets(line, sizeof line, in)) {
        wfc_test_inputs inputs;
        wfc_test_inputs_parse(line, &inputs);
        wfc_test_same_outcome(xoml, xaml, &inputs);
        wfc_test_inputs_free(&inputs);
    }
    fclose(in);
}

static const char *const golden[] = {
    "sequence_code",  "ifelse_chain",       "while_code",    "parallel_pick",
    "fault_handlers", "terminate",          "needs_interop", "rules_operators",
    "rules_bitwise",  "replicator_foreach", "scopes",        "state_machine",
    "composite_type", "workflow_services", "send_activity", "service_attributes",
    /* conversion fidelity: each case's inputs say what WF3 itself gives (`expect`) */
    "compensate_explicit", "compensate_loop", "compensate_child_in_handler",
    "cancel_handlers",     "nested_states",
    /* generated names: an x:Name that is not an identifier, encoded reversibly */
    "name_not_identifier", "loop_template",
    /* WF3 rules semantics after conversion: WF3Rule(...) raises WF3's exception types */
    "rules_exceptions",
    /* a GetActivityByName string kept verbatim, blanks included, finds nothing */
    "rules_lookup_blanks",
    /* a composite's declared In / Out directions: In not copied back, Out not copied in */
    "composite_direction",
    /* InvokeWebServiceActivity: ASMX Sends, a session shared by SessionId, URL or endpoint */
    "invoke_web_service",
    /* root properties the code-beside class gives a Default: the argument defaults */
    "class_defaults",
};

START_TEST(test_golden_case_converts_and_runs_like_legacy)
{
    const char *name = golden[_i];
    char dir[256], xoml[512];
    snprintf(dir, sizeof dir, CASES "/%s", name);
    snprintf(xoml, sizeof xoml, "%s/%s.xoml", dir, name);
    converted c;
    convert(xoml, false, &c);
    check_report(dir, c.file);
    if (wfc_file_status(c.file) == WFC_FAILED) {
        ck_assert_ptr_null(c.xaml);
        ck_assert_int_ne(c.status, WF_OK);
    } else {
        ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
        check_golden(dir, &c);
        check_runs(dir, xoml);
    }
    converted_free(&c);
}
END_TEST

/* A rule condition whose arithmetic wraps, or whose members and methods apply to values that
 * may be null or may fault, is written inside WF3Rule(...); one over `this` members alone is
 * not (docs/convert.md "Rules"). */
START_TEST(test_rules_conditions_keep_wf3_semantics)
{
    converted c;
    convert(CASES "/rules_operators/rules_operators.xoml", false, &c);
    ck_assert_int_eq(c.status, WF_OK);
    ck_assert_ptr_nonnull(strstr(c.xaml, "Condition=\"[WF3Rule((A - B) * 2 / 1 % 7"));
    ck_assert_ptr_nonnull(strstr(c.xaml, "Condition=\"[WF3Rule(!(Person.ToUpper()"));
    ck_assert_uint_eq(count_diags(c.file, "review", "rules-arithmetic-overflow", 0), 0);
    converted_free(&c);
    convert("samples/legacy/order_processing/order_processing.xoml", false, &c);
    ck_assert_int_eq(c.status, WF_OK);
    ck_assert_ptr_nonnull(strstr(c.xaml, "Condition=\"[Total &gt; 1000m]\""));
    ck_assert_ptr_null(strstr(c.xaml, "WF3Rule("));
    converted_free(&c);
}
END_TEST

START_TEST(test_same_input_gives_identical_bytes)
{
    converted a, b;
    convert(CASES "/parallel_pick/parallel_pick.xoml", false, &a);
    convert(CASES "/parallel_pick/parallel_pick.xoml", false, &b);
    ck_assert_ptr_nonnull(a.xaml);
    ck_assert_uint_eq(a.len, b.len);
    ck_assert_int_eq(memcmp(a.xaml, b.xaml, a.len), 0);
    ck_assert_ptr_nonnull(strstr(a.xaml, "<!-- converted from parallel_pick.xoml by wfbridge "
                                         "convert " WFC_VERSION " -->"));
    converted_free(&a);
    converted_free(&b);
}
END_TEST

START_TEST(test_interop_option_sends_custom_activities_to_interop)
{
    converted c;
    convert("samples/legacy/order_processing/order_processing.xoml", true, &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_PARTIAL);
    ck_assert_uint_eq(count_diags(c.file, "error", "needs-interop", 0), 0);
    ck_assert_uint_eq(count_diags(c.file, "warning", "interop", 2), 1);
    ck_assert(has_activity(c.file, "validateOrder", "Interop", "interop"));
    ck_assert_ptr_nonnull(strstr(c.xaml, "<Interop DisplayName=\"validateOrder\""));
    ck_assert_uint_ge(c.side.count, 8); /* 3 custom activities + the Policy */
    converted_free(&c);
}
END_TEST

/* --interop: a plain-function activity sharing a property with another activity through an
 * ActivityBind (to it or from it) stays an InvokeMethod, warned and located; the others go
 * through Interop. Both passes decide alike (no missing storage). */
START_TEST(test_interop_keeps_activity_binds_as_invoke)
{
    converted c;
    convert(CASES "/sequence_code/sequence_code.xoml", true, &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_PARTIAL);
    ck_assert_uint_eq(count_diags(c.file, "error", "internal", 0), 0);
    ck_assert_uint_eq(count_diags(c.file, "warning", "interop-bind", 0), 4);
    ck_assert_uint_eq(count_diags(c.file, "warning", "interop-bind", 3), 1); /* twice */
    ck_assert_uint_eq(count_diags(c.file, "warning", "interop-bind", 10), 1); /* echo */
    ck_assert_ptr_nonnull(strstr(c.xaml, "<InvokeMethod DisplayName=\"echo\""));
    ck_assert_ptr_nonnull(strstr(c.xaml, "<Interop DisplayName=\"greet\""));
    ck_assert_ptr_null(strstr(c.xaml, "<Interop DisplayName=\"twice\""));
    converted_free(&c);
}
END_TEST

/* Without the Interop kind to validate against, hosting is refused, located. */
START_TEST(test_interop_needs_the_kind_registered)
{
    wf_libpath *lp = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(wfc_test_lib_dirs(), &lp, &err), WF_OK);
    wfc_report *r = NULL;
    ck_assert_int_eq(wfc_report_create(&r, &err), WF_OK);
    wfc_file *f = wfc_report_add_file(r, CASES "/needs_interop/needs_interop.xoml");
    wfc_opts o = WFC_OPTS_INIT;
    o.libpath = lp;
    char *xaml = NULL;
    size_t len = 0;
    ck_assert_int_eq(
        wfc_convert_file(&o, CASES "/needs_interop/needs_interop.xoml", f, &xaml, &len, &err),
        WF_E_UNSUPPORTED);
    ck_assert_int_eq(wfc_file_status(f), WFC_FAILED);
    ck_assert_uint_eq(count_diags(f, "error", "needs-interop", 3), 1);
    ck_assert_uint_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.message, "not registered"));
    ck_assert_ptr_null(xaml);
    wfc_report_destroy(r);
    wf_libpath_destroy(lp);
}
END_TEST

/* The pictures label each activity with its name and type on two lines (dot's \n). */
START_TEST(test_graph_labels_are_name_and_type)
{
    converted c;
    convert("samples/legacy/batch_processing/batch_processing.xoml", false, &c);
    ck_assert_int_eq(c.status, WF_OK);
    const char *legacy = wfc_file_graph(c.file, false), *modern = wfc_file_graph(c.file, true);
    ck_assert_ptr_nonnull(legacy);
    ck_assert_ptr_nonnull(modern);
    ck_assert_ptr_nonnull(strstr(legacy, "[label=\"BatchWorkflow\\nSequentialWorkflowActivity\""));
    ck_assert_ptr_nonnull(strstr(modern, "[label=\"nextRecord\\nInvokeMethod\""));
    ck_assert_ptr_null(strstr(legacy, "\\\\n"));
    converted_free(&c);
}
END_TEST

/* ---- the legacy samples ---------------------------------------------------------------------- */
typedef struct sample_case {
    const char *name;
    const char *runs[4];
} sample_case;

static const sample_case samples[] = {
    {"batch_processing", {"arg BatchSize=4", "arg BatchSize=4 arg FailAt=3", NULL}},
    {"expense_approval",
     {"arg Employee=dana arg Amount=420.00 event Approved=alice",
      "arg Employee=dana arg Amount=420.00",
      "arg Employee=erin arg Amount=99.90 event Rejected={\"Approver\":\"bob\",\"Comment\":\"no\"}"}},
    {"document_review",
     {"arg Document=contract arg Reviewers=[\"ana\",\"ben\",\"legal-team\"]",
      "arg Document=memo arg Reviewers=[\"ana\"]", NULL}},
    {"order_processing",
     {"arg OrderId=SO-1001 arg Sku=WIDGET-7 arg UnitPrice=12.50 arg Quantity=4",
      "arg OrderId=SO-1002 arg Sku=WIDGET-7 arg UnitPrice=75.50 arg Quantity=20",
      "arg OrderId=SO-1003 arg Sku=WIDGET-7 arg UnitPrice=75.50 arg Quantity=500"}},
};

START_TEST(test_sample_converts_and_runs_like_legacy)
{
    const sample_case *s = &samples[_i];
    char xoml[512], dir[512];
    snprintf(xoml, sizeof xoml, "samples/legacy/%s/%s.xoml", s->name, s->name);
    snprintf(dir, sizeof dir, CASES "/samples/%s", s->name);
    converted c;
    convert(xoml, false, &c);
    ck_assert_msg(c.status == WF_OK, "%s: %s", xoml, c.err.message);
    check_golden(dir, &c);
    check_report(dir, c.file);
    char xaml[600];
    snprintf(xaml, sizeof xaml, "%s/expected.xaml", dir);
    for (size_t i = 0; s->runs[i]; i++) {
        wfc_test_inputs in;
        wfc_test_inputs_parse(s->runs[i], &in);
        wfc_test_same_outcome(xoml, xaml, &in);
        wfc_test_inputs_free(&in);
    }
    converted_free(&c);
}
END_TEST

/* ---- XOML as real tools wrote it ------------------------------------------------------------- */
#define REAL "tests/converter/realworld"

static size_t count_losses_json(const converted *c, const char *kind)
{
    wf_buf b;
    wf_buf_init(&b);
    ck_assert_int_eq(wfc_report_json(c->report, &b, NULL), WF_OK);
    char needle[64];
    snprintf(needle, sizeof needle, "\"kind\": \"%s\"", kind);
    size_t n = 0;
    for (const char *p = b.data; (p = strstr(p, needle)); p++)
        n++;
    wf_buf_fini(&b);
    return n;
}

/* Designer attributes, prefixed workflow namespace, full assembly names, localized names:
 * converts, the designer data is a designer-only loss, and it runs like the legacy file. */
START_TEST(test_designer_written_file_converts_and_runs)
{
    converted c;
    convert(REAL "/designer_layout.xoml", false, &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_uint_ge(count_losses_json(&c, "designer-only"), 10);
    ck_assert_uint_eq(count_losses_json(&c, "semantics") + count_losses_json(&c, "code"), 0);
    ck_assert(has_activity(c.file, "grüßen", "InvokeMethod", "invoke"));
    ck_assert_ptr_nonnull(strstr(c.xaml, "Name=\"grüßen_Greeting\""));
    char *dir = strdup(wf_test_tmpdir());
    char path[600];
    snprintf(path, sizeof path, "%s/designer_layout.xaml", dir);
    ck_assert_int_eq(wfc_write_atomic(path, c.xaml, c.len, NULL), WF_OK);
    wfc_test_inputs in;
    wfc_test_inputs_parse("arg A=1 arg B=2 arg Person=jö arg Limit=3", &in);
    wfc_test_same_outcome(REAL "/designer_layout.xoml", path, &in);
    wfc_test_inputs_free(&in);
    wf_test_tmpdir_remove(dir);
    free(dir);
    converted_free(&c);
}
END_TEST

START_TEST(test_inline_code_is_listed_as_unread_code)
{
    converted c;
    convert(REAL "/code_beside_inline.xoml", false, &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_uint_eq(count_losses_json(&c, "code"), 1);
    ck_assert_uint_eq(count_diags(c.file, "warning", "legacy-warning", 9), 1);
    ck_assert(wfc_file_lost_more_than_designer(c.file));
    converted_free(&c);
}
END_TEST

START_TEST(test_several_native_libraries_get_one_namespace_each)
{
    converted c;
    convert(REAL "/many_libraries.xoml", false, &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_ptr_nonnull(
        strstr(c.xaml, "xmlns:ns0=\"clr-namespace:convcases;assembly=convcases\""));
    ck_assert_ptr_nonnull(strstr(c.xaml, "xmlns:ns1=\"clr-namespace:orders;assembly=orders\""));
    ck_assert_ptr_nonnull(strstr(c.xaml, "xmlns:ns2=\"clr-namespace:batch;assembly=batch\""));
    ck_assert_ptr_nonnull(strstr(c.xaml, "Name=\"post_Receipt\""));
    converted_free(&c);
}
END_TEST

/* A custom composite written in its own file converts on its own; a file using it as an
 * activity type (its type library's Definition=) becomes <t0:ApprovalStep Total="[Total]"/>
 * with the body generated as ApprovalStep.xaml, and the pair runs like the legacy file. */
START_TEST(test_custom_composite_in_its_own_file)
{
    converted c;
    convert(REAL "/approval_step.xoml", false, &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_ptr_nonnull(strstr(c.xaml, "BookmarkName=\"ICases.Go\""));
    converted_free(&c);
    convert(REAL "/uses_approval_step.xoml", false, &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_str_eq(wfc_status_name(wfc_file_status(c.file)), "converted");
    ck_assert(has_activity(c.file, "managerApproval", "Conv.ApprovalStep", "mapped"));
    ck_assert_ptr_nonnull(strstr(c.xaml, "xmlns:t0=\"clr-namespace:Conv;assembly=convcases\""));
    ck_assert_ptr_nonnull(
        strstr(c.xaml, "<t0:ApprovalStep DisplayName=\"managerApproval\" Total=\"[Total]\"/>"));
    ck_assert_uint_eq(c.side.count, 2); /* the activity type, then the map */
    ck_assert_str_eq(c.side.items[1].name, "uses_approval_step.xaml.map.json");
    ck_assert_str_eq(c.side.items[0].name, "ApprovalStep.xaml");
    ck_assert_ptr_nonnull(strstr(c.side.items[0].text, "<Activity x:Class=\"Conv.ApprovalStep\""));
    ck_assert_ptr_nonnull(strstr(c.side.items[0].text, "BookmarkName=\"ICases.Go\""));
    char *dir = strdup(wf_test_tmpdir());
    char path[600];
    snprintf(path, sizeof path, "%s/ApprovalStep.xaml", dir);
    ck_assert_int_eq(
        wfc_write_atomic(path, c.side.items[0].text, c.side.items[0].len, NULL), WF_OK);
    snprintf(path, sizeof path, "%s/uses_approval_step.xaml", dir);
    ck_assert_int_eq(wfc_write_atomic(path, c.xaml, c.len, NULL), WF_OK);
    static const char *const runs[] = {"arg A=1 arg B=2 event Go=41", "arg A=4 arg B=5"};
    for (size_t i = 0; i < 2; i++) {
        wfc_test_inputs in;
        wfc_test_inputs_parse(runs[i], &in);
        wfc_test_same_outcome(REAL "/uses_approval_step.xoml", path, &in);
        wfc_test_inputs_free(&in);
    }
    wf_test_tmpdir_remove(dir);
    free(dir);
    converted_free(&c);
}
END_TEST

/* A ReceiveActivity without its ServiceOperationInfo is what WF 3.5's validator rejects; the
 * InvokeWebService beside it loads (it is hosted, see the realworld loop). */
START_TEST(test_wcf_and_web_service_activities_fail_precisely)
{
    converted c;
    convert(REAL "/broken/receive_without_operation.xoml", false, &c);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_FAILED);
    ck_assert_uint_eq(count_diags(c.file, "error", "legacy-load", 2), 1);
    ck_assert_uint_eq(count_diags(c.file, "error", "legacy-load", 5), 0);
    ck_assert_uint_eq(c.err.line, 2);
    ck_assert_ptr_nonnull(strstr(c.err.message, "ServiceOperationInfo"));
    ck_assert_ptr_null(c.xaml);
    converted_free(&c);
}
END_TEST

/* ---- bad input ----------------------------------------------------------------------------- */
static const char *const NS = "xmlns:ns0=\"clr-namespace:Conv;Assembly=convcases\" "
                              "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
                              "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\"";

static void convert_text(const char *dir, const char *name, const char *body, converted *c)
{
    char text[4096];
    snprintf(text, sizeof text,
             "<SequentialWorkflowActivity x:Class=\"Conv.Case\" x:Name=\"Case\" %s>\n%s"
             "</SequentialWorkflowActivity>\n",
             NS, body);
    convert(wf_test_write_file(dir, name, text), false, c);
}

/* ---- composites whose body is not plain ----------------------------------------------------- */
static const char *const WFNS = "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
                                "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\"";

/* In dir: type library "steps" declaring composite NAME with body `body`, and uses.xoml using
 * it; converted with dir first on the library path. */
static void convert_composite(const char *dir, const char *name, const char *body, converted *c)
{
    char text[4096];
    snprintf(text, sizeof text,
             "<TypeLibrary xmlns=\"urn:wfbridge:typelib\" Name=\"steps\">\n"
             "  <ActivityType Name=\"%s\" Definition=\"%s.xoml\">\n"
             "    <Property Name=\"Total\" Type=\"Int32\"/>\n  </ActivityType>\n</TypeLibrary>\n",
             name, name);
    wf_test_write_file(dir, "steps.activities.xml", text);
    snprintf(text, sizeof text,
             "<SequentialWorkflowActivity x:Class=\"Steps.%s\" x:Name=\"%s\" "
             "xmlns:ns0=\"clr-namespace:Conv;Assembly=convcases\" "
             "xmlns:ns1=\"clr-namespace:Steps;Assembly=steps\" %s>\n%s"
             "</SequentialWorkflowActivity>\n",
             name, name, WFNS, body);
    char file[160];
    snprintf(file, sizeof file, "%s.xoml", name);
    wf_test_write_file(dir, file, text);
    snprintf(text, sizeof text,
             "<SequentialWorkflowActivity x:Class=\"Conv.Case\" x:Name=\"Case\" "
             "xmlns:ns0=\"clr-namespace:Steps;Assembly=steps\" "
             "xmlns:ns1=\"clr-namespace:Conv;Assembly=convcases\" %s>\n"
             "  <ns0:%s x:Name=\"step\" Total=\"{ActivityBind Case,Path=Total}\" />\n"
             "</SequentialWorkflowActivity>\n",
             WFNS, name);
    const char *xoml = wf_test_write_file(dir, "uses.xoml", text);
    memset(c, 0, sizeof *c);
    char dirs[2048];
    snprintf(dirs, sizeof dirs, "%s:%s", dir, wfc_test_lib_dirs());
    wf_libpath *lp = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(dirs, &lp, &err), WF_OK);
    ck_assert_int_eq(wfc_report_create(&c->report, &err), WF_OK);
    c->file = wfc_report_add_file(c->report, xoml);
    wfc_opts o = WFC_OPTS_INIT;
    o.libpath = lp;
    o.register_interop = wfb_interop_register;
    c->status = wfc_convert_file_side(&o, xoml, c->file, &c->xaml, &c->len, &c->side, &c->err);
    wf_libpath_destroy(lp);
}

/* A composite whose body does not convert fails the using file at the use, naming the body's
 * own line. */
START_TEST(test_composite_body_that_does_not_convert_is_located)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    convert_composite(dir, "BadStep",
                      "  <HandleExternalEventActivity x:Name=\"go\" EventName=\"Go\" "
                      "InterfaceType=\"{x:Type ns0:ICases}\">\n"
                      "    <HandleExternalEventActivity.ParameterBindings>\n"
                      "      <WorkflowParameterBinding ParameterName=\"Value\" Value=\"5\" />\n"
                      "    </HandleExternalEventActivity.ParameterBindings>\n"
                      "  </HandleExternalEventActivity>\n",
                      &c);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_FAILED);
    ck_assert_ptr_null(c.xaml);
    ck_assert_uint_eq(c.side.count, 0);
    ck_assert_uint_eq(count_diags(c.file, "error", "composite-type", 2), 1);
    ck_assert_uint_eq(wfc_file_error_count(c.file), 1);
    ck_assert_uint_eq(c.err.line, 2);
    ck_assert_uint_eq(c.err.col, 3);
    ck_assert_ptr_nonnull(strstr(c.err.message, "BadStep.xoml:4:"));
    ck_assert_ptr_nonnull(strstr(c.err.message, "bound to a literal"));
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A composite whose body hosts something through Interop makes the using file partial; the
 * generated files of both come back. */
START_TEST(test_composite_with_hosted_body_is_partial)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    convert_composite(dir, "OddStep", "  <SuspendActivity x:Name=\"pause\" />\n", &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_PARTIAL);
    ck_assert_uint_eq(count_diags(c.file, "warning", "interop", 2), 1);
    ck_assert(has_activity(c.file, "step", "Steps.OddStep", "mapped"));
    ck_assert_uint_eq(c.side.count, 4); /* ..., the activity type, the map */
    ck_assert_str_eq(c.side.items[2].name, "OddStep.xaml");
    ck_assert_ptr_nonnull(strstr(c.side.items[2].text, "<Interop DisplayName=\"pause\""));
    ck_assert_ptr_nonnull(strstr(c.xaml, "<t0:OddStep DisplayName=\"step\" Total=\"[Total]\"/>"));
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A TypedOperationInfo takes its contract from the type library's <Service>; the request
 * parameters land where the bindings say, (ReturnValue) is the reply's OperationResult; a
 * ReceiveActivity first in an EventDriven is the PickBranch's trigger. */
static const char TYPED_RECEIVE[] =
    "  <ListenActivity x:Name=\"wait\">\n"
    "    <EventDrivenActivity x:Name=\"quoteBranch\">\n"
    "      <ReceiveActivity x:Name=\"quote\" CanCreateInstance=\"True\">\n"
    "        <ReceiveActivity.ServiceOperationInfo>\n"
    "          <TypedOperationInfo ContractType=\"{x:Type ns0:%s}\" Name=\"RequestQuote\" />\n"
    "        </ReceiveActivity.ServiceOperationInfo>\n"
    "        <ReceiveActivity.ParameterBindings>\n"
    "          <WorkflowParameterBinding ParameterName=\"parcel\">\n"
    "            <WorkflowParameterBinding.Value><ActivityBind Name=\"Case\" Path=\"Person\" />"
    "</WorkflowParameterBinding.Value>\n"
    "          </WorkflowParameterBinding>\n"
    "          <WorkflowParameterBinding ParameterName=\"weight\">\n"
    "            <WorkflowParameterBinding.Value><ActivityBind Name=\"Case\" Path=\"A\" />"
    "</WorkflowParameterBinding.Value>\n"
    "          </WorkflowParameterBinding>\n"
    "          <WorkflowParameterBinding ParameterName=\"(ReturnValue)\">\n"
    "            <WorkflowParameterBinding.Value><ActivityBind Name=\"Case\" Path=\"Total\" />"
    "</WorkflowParameterBinding.Value>\n"
    "          </WorkflowParameterBinding>\n"
    "        </ReceiveActivity.ParameterBindings>\n"
    "        <CodeActivity x:Name=\"add\" ExecuteCode=\"Add\" />\n"
    "      </ReceiveActivity>\n"
    "    </EventDrivenActivity>\n"
    "    <EventDrivenActivity x:Name=\"timeout\">\n"
    "      <DelayActivity x:Name=\"wait10\" TimeoutDuration=\"00:00:10\" />\n"
    "    </EventDrivenActivity>\n"
    "  </ListenActivity>\n";

START_TEST(test_typed_receive_in_listen_becomes_trigger_with_reply)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    char body[sizeof TYPED_RECEIVE + 16];
    snprintf(body, sizeof body, TYPED_RECEIVE, "IQuotes");
    convert_text(dir, "quotes.xoml", body, &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_CONVERTED);
    ck_assert(has_activity(c.file, "quote", "Receive", "mapped"));
    ck_assert_ptr_nonnull(strstr(c.xaml, "xmlns:p=\"http://schemas.microsoft.com/netfx/2009/"
                                         "xaml/servicemodel\""));
    ck_assert_ptr_nonnull(strstr(c.xaml, "<PickBranch.Trigger>\n          <Sequence "
                                         "DisplayName=\"quote\">\n            <p:Receive "
                                         "x:Name=\"quote_Receive\" OperationName=\"RequestQuote\" "
                                         "ServiceContractName=\"IQuotes\" "
                                         "CanCreateInstance=\"True\">"));
    ck_assert_ptr_nonnull(strstr(c.xaml, "<OutArgument x:TypeArguments=\"x:String\" "
                                         "x:Key=\"parcel\">[Person]</OutArgument>"));
    ck_assert_ptr_nonnull(strstr(c.xaml, "<OutArgument x:TypeArguments=\"x:Int32\" "
                                         "x:Key=\"weight\">[A]</OutArgument>"));
    ck_assert_ptr_nonnull(strstr(c.xaml, "<p:SendReply Request=\"{x:Reference quote_Receive}\">"));
    ck_assert_ptr_nonnull(strstr(c.xaml, "<InArgument x:TypeArguments=\"x:Int32\" "
                                         "x:Key=\"RequestQuoteResult\">[Total]</InArgument>"));
    /* the message reaches both runtimes the same way: legacy queue = modern bookmark */
    char path[600];
    snprintf(path, sizeof path, "%s/quotes.xaml", dir);
    ck_assert_int_eq(wfc_write_atomic(path, c.xaml, c.len, NULL), WF_OK);
    wfc_test_inputs in;
    wfc_test_inputs_parse("arg A=1 arg B=2 event IQuotes.RequestQuote={\"parcel\": \"box\", "
                          "\"weight\": 7}",
                          &in);
    char xoml[600];
    snprintf(xoml, sizeof xoml, "%s/quotes.xoml", dir);
    wfc_test_same_outcome(xoml, path, &in);
    wfc_test_inputs_free(&in);
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_typed_receive_without_declared_contract_is_hosted_located)
{
    /* Nothing valid fails a file: an undeclared contract hosts the Receive through Interop,
     * with a located warning saying what to declare. */
    const char *dir = wf_test_tmpdir();
    converted c;
    char body[sizeof TYPED_RECEIVE + 16];
    snprintf(body, sizeof body, TYPED_RECEIVE, "IPrices");
    convert_text(dir, "prices.xoml", body, &c);
    ck_assert_int_eq(c.status, WF_OK);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_PARTIAL);
    ck_assert_uint_eq(count_diags(c.file, "warning", "service-contract", 4), 1);
    ck_assert_uint_eq(count_diags(c.file, "warning", "interop", 4), 1);
    ck_assert_ptr_nonnull(strstr(c.xaml, "<Interop "));
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* SuspendActivity has no WF4 form: hosted, with a review (Interop faults instead). */
START_TEST(test_suspend_is_hosted_and_reviewed)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    convert_text(dir, "suspend.xoml", "  <SuspendActivity x:Name=\"pause\" />\n", &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_PARTIAL);
    ck_assert_uint_eq(count_diags(c.file, "warning", "interop", 2), 1);
    ck_assert_uint_eq(count_diags(c.file, "review", "interop-suspend", 2), 1);
    ck_assert(has_activity(c.file, "pause", "Interop", "interop"));
    ck_assert(wfc_file_lost_more_than_designer(c.file));
    ck_assert_uint_eq(c.side.count, 3); /* type library and body; no rules; the map */
    ck_assert_str_eq(c.side.items[2].name, "suspend.xaml.map.json");
    ck_assert_str_eq(c.side.items[0].name, "suspend.pause.activities.xml");
    ck_assert_str_eq(c.side.items[1].name, "suspend.pause.xoml");
    ck_assert_ptr_nonnull(strstr(c.xaml, "<Sequence DisplayName=\"Case\">\n    <Interop "
                                         "DisplayName=\"pause\" ActivityType=\"io0:Case\"/>"));
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Data inside a hosted subtree stays in the legacy executor: reading it outside is refused
 * rather than silently reading a variable nobody writes. */
START_TEST(test_hosted_data_read_outside_is_refused)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    convert_text(dir, "leak.xoml",
                 "  <ConditionedActivityGroup x:Name=\"group\">\n"
                 "    <ns0:Double x:Name=\"inner\" Value=\"{ActivityBind Case,Path=Total}\" />\n"
                 "  </ConditionedActivityGroup>\n"
                 "  <ns0:Double x:Name=\"after\" Value=\"{ActivityBind inner,Path=Result}\" "
                 "Result=\"{ActivityBind Case,Path=Total}\" />\n",
                 &c);
    ck_assert_int_eq(c.status, WF_E_UNSUPPORTED);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_FAILED);
    ck_assert_uint_eq(count_diags(c.file, "error", "needs-interop", 2), 1);
    ck_assert_ptr_nonnull(strstr(c.err.message, "'inner.Result'"));
    ck_assert_ptr_null(c.xaml);
    ck_assert_uint_eq(c.side.count, 0);
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A subtree that changes the state machine's state cannot run apart from it. */
START_TEST(test_state_change_is_not_hosted)
{
    const char *dir = wf_test_tmpdir();
    char text[4096];
    snprintf(text, sizeof text,
             "<StateMachineWorkflowActivity x:Class=\"Conv.Case\" x:Name=\"Case\" "
             "InitialStateName=\"a\" CompletedStateName=\"b\" %s>\n"
             "  <StateActivity x:Name=\"a\">\n"
             "    <StateInitializationActivity x:Name=\"init\">\n"
             "      <SetStateActivity x:Name=\"go\" TargetStateName=\"b\" />\n"
             "    </StateInitializationActivity>\n"
             "  </StateActivity>\n"
             "  <StateActivity x:Name=\"b\" />\n"
             "</StateMachineWorkflowActivity>\n",
             NS);
    converted c;
    convert(wf_test_write_file(dir, "setstate.xoml", text), false, &c);
    ck_assert_int_eq(c.status, WF_E_UNSUPPORTED);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_FAILED);
    ck_assert_uint_eq(count_diags(c.file, "error", "needs-interop", 3), 1);
    ck_assert_uint_eq(c.err.line, 3);
    ck_assert_ptr_nonnull(strstr(c.err.message, "changes the state"));
    ck_assert_ptr_null(c.xaml);
    ck_assert_uint_eq(c.side.count, 0);
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_malformed_xoml_is_located_and_writes_nothing)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    convert_text(dir, "unclosed_sequence.xoml", "  <SequenceActivity x:Name=\"s\">\n", &c);
    ck_assert_int_eq(c.status, WF_E_XML);
    ck_assert_uint_eq(c.err.line, 3);
    ck_assert_ptr_nonnull(strstr(c.err.file, "unclosed_sequence.xoml"));
    ck_assert_ptr_null(c.xaml);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_FAILED);
    ck_assert_uint_eq(count_diags(c.file, "error", "legacy-load", 3), 1);
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_missing_type_library_is_located)
{
    const char *dir = wf_test_tmpdir();
    const char *text = "<SequentialWorkflowActivity x:Name=\"W\" "
                       "xmlns:ns0=\"clr-namespace:X;Assembly=nosuchlib\" "
                       "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
                       "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
                       "  <ns0:Thing x:Name=\"t\" />\n</SequentialWorkflowActivity>\n";
    converted c;
    convert(wf_test_write_file(dir, "missing_typelib.xoml", text), false, &c);
    ck_assert_int_eq(c.status, WF_E_NOLIB);
    ck_assert_uint_ne(c.err.line, 0);
    ck_assert_ptr_nonnull(strstr(c.err.message, "nosuchlib"));
    ck_assert_ptr_null(c.xaml);
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_unknown_custom_type_is_located)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    convert_text(dir, "unknown_custom_type.xoml", "  <ns0:NoSuchActivity x:Name=\"t\" />\n", &c);
    ck_assert_int_eq(c.status, WF_E_NAME);
    ck_assert_uint_eq(c.err.line, 2);
    ck_assert_uint_eq(c.err.col, 3);
    ck_assert_ptr_nonnull(strstr(c.err.message, "NoSuchActivity"));
    ck_assert_ptr_null(c.xaml);
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_rules_file_that_does_not_match_is_located)
{
    const char *dir = wf_test_tmpdir();
    wf_test_write_file(dir, "mismatch.rules",
                       "<RuleDefinitions xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/"
                       "workflow\"><RuleDefinitions.Conditions /></RuleDefinitions>\n");
    converted c;
    convert_text(dir, "mismatch.xoml",
                 "  <WhileActivity x:Name=\"w\">\n    <WhileActivity.Condition>\n"
                 "      <RuleConditionReference ConditionName=\"Gone\" />\n"
                 "    </WhileActivity.Condition>\n"
                 "    <CodeActivity x:Name=\"c\" ExecuteCode=\"Increment\" />\n"
                 "  </WhileActivity>\n",
                 &c);
    ck_assert_int_eq(c.status, WF_E_NAME);
    ck_assert_uint_eq(c.err.line, 4);
    ck_assert_ptr_nonnull(strstr(c.err.message, "Gone"));
    ck_assert_ptr_null(c.xaml);
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_handler_without_native_function_fails_located)
{
    const char *dir = wf_test_tmpdir();
    const char *text = "<SequentialWorkflowActivity x:Name=\"W\" "
                       "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
                       "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
                       "  <DelayActivity x:Name=\"d\" TimeoutDuration=\"00:00:05\" />\n"
                       "  <SuspendActivity x:Name=\"s\" />\n</SequentialWorkflowActivity>\n";
    converted c;
    convert(wf_test_write_file(dir, "suspend.xoml", text), false, &c);
    ck_assert_int_eq(c.status, WF_E_UNSUPPORTED);
    ck_assert_uint_eq(c.err.line, 3);
    ck_assert_uint_eq(c.err.col, 3);
    ck_assert(has_activity(c.file, "d", "Delay", "mapped"));
    ck_assert_ptr_null(c.xaml);
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* ---- out of memory ----------------------------------------------------------------------------
 */
typedef struct nomem_case {
    const wf_libpath *lp;
    const char *xoml;
    bool interop; /* register the Interop kind */
} nomem_case;

static wf_status convert_op(void *ud)
{
    const nomem_case *nc = ud;
    const wf_libpath *lp = nc->lp;
    wfc_report *r = NULL;
    wf_status st = wfc_report_create(&r, NULL);
    wfc_file *f = st == WF_OK ? wfc_report_add_file(r, "terminate.xoml") : NULL;
    char *xaml = NULL;
    size_t len = 0;
    wf_error err = WF_ERROR_INIT;
    if (f) {
        wfc_opts o = WFC_OPTS_INIT;
        o.libpath = lp;
        o.register_interop = nc->interop ? wfb_interop_register : NULL;
        wfc_sidecars side = WFC_SIDECARS_INIT;
        st = wfc_convert_file_side(&o, nc->xoml, f, &xaml, &len, &side, &err);
        if (st != WF_OK)
            ck_assert_uint_eq(side.count, 0);
        wfc_sidecars_free(&side);
        if (st == WF_OK)
            ck_assert_ptr_nonnull(xaml);
        else
            ck_assert_ptr_null(xaml);
    } else if (st == WF_OK) {
        st = WF_E_NOMEM;
    }
    wf_free(xaml);
    wfc_report_destroy(r);
    /* An allocation failure deep in a loader may surface as its own error: count it as such. */
    return st == WF_OK || err.code == WF_E_NOMEM || st == WF_E_NOMEM ? st : WF_E_NOMEM;
}

START_TEST(test_out_of_memory_leaks_nothing_and_writes_nothing)
{
    wf_libpath *lp = NULL;
    ck_assert_int_eq(wf_libpath_create(wfc_test_lib_dirs(), &lp, NULL), WF_OK);
    nomem_case nc = {lp, CASES "/terminate/terminate.xoml", false};
    ck_assert_uint_gt(wf_test_nomem_loop(convert_op, &nc, 20000), 100);
    wf_libpath_destroy(lp);
}
END_TEST

/* The same with a subtree hosted through Interop (its composite generated and validated). */
START_TEST(test_out_of_memory_hosting_through_interop)
{
    wf_libpath *lp = NULL;
    ck_assert_int_eq(wf_libpath_create(wfc_test_lib_dirs(), &lp, NULL), WF_OK);
    nomem_case nc = {lp, CASES "/needs_interop/needs_interop.xoml", true};
    ck_assert_uint_gt(wf_test_nomem_loop(convert_op, &nc, 40000), 100);
    wf_libpath_destroy(lp);
}
END_TEST

/* Validate-only: with the type libraries but none of the shared objects on the path, files
 * convert exactly as with them, and the report says the calls were not bound. */
START_TEST(test_converts_without_the_native_libraries)
{
    const char *dir = wf_test_tmpdir();
    static const char *const libs[] = {"convcases", "batch", "orders", "expenses", "reviews"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        char from[1024], name[256];
        snprintf(name, sizeof name, "%s.activities.xml", libs[i]);
        snprintf(from, sizeof from, "%s/%s", i ? wf_test_sample_lib_dir() : wf_test_lib_dir(),
                 name);
        char *text = wf_test_read_file(from, NULL);
        ck_assert_msg(text != NULL, "%s", from);
        wf_test_write_file(dir, name, text);
        wf_free(text);
    }
    static const char *const files[] = {
        CASES "/sequence_code/sequence_code.xoml",
        "samples/legacy/batch_processing/batch_processing.xoml",
        "samples/legacy/expense_approval/expense_approval.xoml",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        converted with, without;
        convert(files[i], false, &with);
        wf_libpath *lp = NULL;
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(wf_libpath_create(dir, &lp, &err), WF_OK);
        memset(&without, 0, sizeof without);
        ck_assert_int_eq(wfc_report_create(&without.report, &err), WF_OK);
        without.file = wfc_report_add_file(without.report, files[i]);
        wfc_opts o = WFC_OPTS_INIT;
        o.libpath = lp;
        o.register_interop = wfb_interop_register;
        without.status = wfc_convert_file_side(&o, files[i], without.file, &without.xaml,
                                               &without.len, &without.side, &without.err);
        wf_libpath_destroy(lp);
        ck_assert_msg(without.status == WF_OK, "%s: %s", files[i], without.err.message);
        ck_assert_uint_eq(without.len, with.len);
        ck_assert_int_eq(memcmp(without.xaml, with.xaml, with.len), 0);
        ck_assert_uint_eq(count_diags(without.file, "info", "not-bound", 0), 1);
        converted_free(&with);
        converted_free(&without);
    }
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A property value no emitter carries over is a located warning and a loss. */
START_TEST(test_ignored_property_is_reported)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    convert_text(dir, "roles.xoml",
                 "  <HandleExternalEventActivity x:Name=\"go\" EventName=\"Go\" "
                 "InterfaceType=\"{x:Type ns0:ICases}\" Roles=\"{x:Null}\" />\n",
                 &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_uint_eq(count_diags(c.file, "warning", "property-ignored", 2), 1);
    ck_assert(wfc_file_lost_more_than_designer(c.file));
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* The report's renderer: keeps the DOT text it is given. */
static wf_status keep_dot(void *ud, const char *dot, wf_buf *svg, wf_error *err)
{
    (void)err;
    wf_buf_adds(ud, dot);
    wf_buf_adds(svg, "<svg></svg>");
    return WF_OK;
}

/* A state machine is drawn as states and transitions, not as its containment tree. */
START_TEST(test_state_machine_picture_has_states_and_transitions)
{
    converted c;
    convert(CASES "/state_machine/state_machine.xoml", false, &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    wf_buf dots, html;
    wf_buf_init(&dots);
    wf_buf_init(&html);
    ck_assert_int_eq(wfc_report_html(c.report, keep_dot, &dots, &html, NULL), WF_OK);
    ck_assert_msg(strstr(dots.data, "\"Open\" -> \"Working\" [label=\"onGo\"];"), "%s",
                  dots.data);
    ck_assert_ptr_nonnull(strstr(dots.data, "\"Open\" [penwidth=3];"));
    ck_assert_ptr_nonnull(strstr(dots.data, "\"Done\" [peripheries=2];"));
    ck_assert_ptr_null(strstr(dots.data, "countEntry")); /* no activity inside a state */
    wf_buf_fini(&dots);
    wf_buf_fini(&html);
    converted_free(&c);
}
END_TEST

/* A zero Delay is an idle point in WF3 only: a review at its line, not a silent "mapped". */
START_TEST(test_zero_delay_is_reported_at_its_line)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    convert_text(dir, "zero.xoml",
                 "  <DelayActivity x:Name=\"tick\" TimeoutDuration=\"00:00:00\" />\n"
                 "  <DelayActivity x:Name=\"wait\" TimeoutDuration=\"00:00:01\" />\n",
                 &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_uint_eq(count_diags(c.file, "review", "delay-zero", 2), 1);
    ck_assert_uint_eq(count_diags(c.file, "review", "delay-zero", 3), 0);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_PARTIAL);
    ck_assert(wfc_file_lost_more_than_designer(c.file));
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A native handler that would set a Delay's timeout is dropped: not "converted, 100%" but a
 * partial file, the activity counted against coverage, and the rule says what to do. */
START_TEST(test_dropped_handler_makes_the_file_partial)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    convert_text(dir, "timeout.xoml",
                 "  <DelayActivity x:Name=\"wait\" TimeoutDuration=\"00:00:05\" "
                 "InitializeTimeoutDuration=\"Increment\" />\n",
                 &c);
    ck_assert_msg(c.status == WF_OK, "%s", c.err.message);
    ck_assert_uint_eq(count_diags(c.file, "warning", "property-ignored", 2), 1);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_PARTIAL);
    wf_buf b;
    wf_buf_init(&b);
    ck_assert_int_eq(wfc_report_markdown(c.report, &b, NULL), WF_OK);
    ck_assert_msg(strstr(b.data, "| partial | 2 | 2 | 0 | 0 | 50% | 0 | 1 |"), "%s", b.data);
    ck_assert_ptr_nonnull(strstr(b.data, "with --interop"));
    wf_buf_reset(&b);
    ck_assert_int_eq(wfc_report_json(c.report, &b, NULL), WF_OK);
    ck_assert_ptr_nonnull(strstr(b.data, "\"action\": \"mapped\", \"behaviourLost\": true}"));
    wf_buf_fini(&b);
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Whatever the walk does not place is an error, never silently dropped. */
START_TEST(test_activity_in_an_unhandled_position_is_not_dropped)
{
    const char *dir = wf_test_tmpdir();
    converted c;
    convert_text(dir, "branch_cancel.xoml",
                 "  <IfElseActivity x:Name=\"choose\">\n"
                 "    <IfElseBranchActivity x:Name=\"only\">\n"
                 "      <IfElseBranchActivity.Condition><CodeCondition Condition=\"BelowLimit\" />"
                 "</IfElseBranchActivity.Condition>\n"
                 "      <CodeActivity x:Name=\"inc\" ExecuteCode=\"Increment\" />\n"
                 "      <CancellationHandlerActivity x:Name=\"undo\">\n"
                 "        <CodeActivity x:Name=\"note\" ExecuteCode=\"TakeNote\" />\n"
                 "      </CancellationHandlerActivity>\n"
                 "    </IfElseBranchActivity>\n"
                 "  </IfElseActivity>\n",
                 &c);
    ck_assert_int_eq(wfc_file_status(c.file), WFC_FAILED);
    ck_assert_uint_eq(count_diags(c.file, "error", "not-converted", 6), 1);
    ck_assert_uint_eq(c.err.line, 6);
    ck_assert_ptr_nonnull(strstr(c.err.message, "undo"));
    ck_assert_ptr_null(c.xaml);
    converted_free(&c);
    wf_test_tmpdir_remove(dir);
}
END_TEST

Suite *convert_suite(void)
{
    Suite *s = suite_create("convert");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 60);
    tcase_add_loop_test(core, test_golden_case_converts_and_runs_like_legacy, 0,
                        sizeof golden / sizeof golden[0]);
    tcase_add_test(core, test_same_input_gives_identical_bytes);
    tcase_add_test(core, test_rules_conditions_keep_wf3_semantics);
    tcase_add_test(core, test_interop_option_sends_custom_activities_to_interop);
    tcase_add_loop_test(core, test_sample_converts_and_runs_like_legacy, 0,
                        sizeof samples / sizeof samples[0]);
    tcase_add_test(core, test_interop_needs_the_kind_registered);
    tcase_add_test(core, test_converts_without_the_native_libraries);
    tcase_add_test(core, test_interop_keeps_activity_binds_as_invoke);
    tcase_add_test(core, test_suspend_is_hosted_and_reviewed);
    tcase_add_test(core, test_typed_receive_in_listen_becomes_trigger_with_reply);
    tcase_add_test(core, test_state_change_is_not_hosted);
    tcase_add_test(core, test_hosted_data_read_outside_is_refused);
    tcase_add_test(core, test_designer_written_file_converts_and_runs);
    tcase_add_test(core, test_graph_labels_are_name_and_type);
    tcase_add_test(core, test_inline_code_is_listed_as_unread_code);
    tcase_add_test(core, test_several_native_libraries_get_one_namespace_each);
    tcase_add_test(core, test_custom_composite_in_its_own_file);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_malformed_xoml_is_located_and_writes_nothing);
    tcase_add_test(bad, test_composite_body_that_does_not_convert_is_located);
    tcase_add_test(bad, test_composite_with_hosted_body_is_partial);
    tcase_add_test(bad, test_missing_type_library_is_located);
    tcase_add_test(bad, test_unknown_custom_type_is_located);
    tcase_add_test(bad, test_rules_file_that_does_not_match_is_located);
    tcase_add_test(bad, test_handler_without_native_function_fails_located);
    tcase_add_test(bad, test_wcf_and_web_service_activities_fail_precisely);
    tcase_add_test(core, test_typed_receive_without_declared_contract_is_hosted_located);
    tcase_add_test(bad, test_activity_in_an_unhandled_position_is_not_dropped);
    tcase_add_test(bad, test_ignored_property_is_reported);
    tcase_add_test(bad, test_dropped_handler_makes_the_file_partial);
    tcase_add_test(bad, test_zero_delay_is_reported_at_its_line);
    tcase_add_test(bad, test_state_machine_picture_has_states_and_transitions);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 300);
    tcase_add_test(nomem, test_out_of_memory_leaks_nothing_and_writes_nothing);
    tcase_add_test(nomem, test_out_of_memory_hosting_through_interop);
    suite_add_tcase(s, nomem);
    return s;
}

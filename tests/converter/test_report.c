/* test_report.c — the migration report (converter/wfc_report.c): its JSON form as
 * docs/convert.md documents it, the loss rule behind --fail-on-loss, and out of memory. */
#include <check.h>
#include <jansson.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../converter/wfc_report.h"
#include "../wf_test_util.h"

static wf_status fill(wfc_report *r)
{
    wfc_file *f = wfc_report_add_file(r, "in/a.xoml");
    if (!f)
        return WF_E_NOMEM;
    wfc_file_set_output(f, "out/a.xaml");
    wfc_file_add_activity(f, "step", "CodeActivity", "InvokeMethod", 3, WFC_ACT_INVOKE);
    wfc_file_add_diag(f, WFC_REVIEW, 4, 2, "parallel-interleaving", "say \"%s\"", "hi");
    wfc_file_add_diag_in(f, "in/a.rules", WFC_ERROR, 9, 1, "legacy-load", "bad");
    wfc_file_add_loss(f, WFC_LOSS_DESIGNER, 1, "sap:HintSize");
    return WF_OK;
}

/* The work list in numbers, at the top of every form: files by status and the scaffold's
 * functions to write and guessed types. */
START_TEST(test_totals_count_the_scaffold_work_list)
{
    wfc_report *r = NULL;
    ck_assert_int_eq(wfc_report_create(&r, NULL), WF_OK);
    wfc_file *a = wfc_report_add_file(r, "a.xoml");
    wfc_file_add_scaffold(a, "function", 2, 5, "void f(int32_t *n) in S/a.c");
    wfc_file_add_scaffold(a, "guessed", 3, 5, "property C.P: type String");
    wfc_file_add_scaffold(a, "conflict", 4, 5, "property C.Q is declared");
    wfc_file_set_status(a, WFC_PARTIAL);
    wfc_file *b = wfc_report_add_file(r, "b.xoml");
    wfc_file_add_scaffold(b, "function", 7, 1, "bool g(void) in S/a.c");
    wfc_file_set_status(wfc_report_add_file(r, "c.xoml"), WFC_FAILED);
    wf_buf j, m;
    wf_buf_init(&j);
    wf_buf_init(&m);
    ck_assert_int_eq(wfc_report_json(r, &j, NULL), WF_OK);
    ck_assert_int_eq(wfc_report_markdown(r, &m, NULL), WF_OK);
    json_t *root = json_loads(j.data, 0, NULL);
    json_int_t files, converted, partial, failed, to_write, guessed;
    ck_assert_int_eq(json_unpack(root, "{s:{s:I, s:I, s:I, s:I, s:I, s:I}}", "totals", "files",
                                 &files, "converted", &converted, "partial", &partial, "failed",
                                 &failed, "functionsToWrite", &to_write, "guessedTypes", &guessed),
                     0);
    ck_assert(files == 3 && converted == 1 && partial == 1 && failed == 1);
    ck_assert(to_write == 2 && guessed == 1);
    json_decref(root);
    ck_assert_ptr_nonnull(strstr(m.data, "# Migration report\n\n3 files: 1 converted, 1 partial, "
                                         "1 failed; 2 functions to write, 1 guessed type.\n"));
    wf_buf_fini(&j);
    wf_buf_fini(&m);
    wfc_report_destroy(r);
}
END_TEST

START_TEST(test_json_has_the_documented_shape)
{
    wfc_report *r = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfc_report_create(&r, &err), WF_OK);
    ck_assert_int_eq(fill(r), WF_OK);
    wf_buf b;
    wf_buf_init(&b);
    ck_assert_int_eq(wfc_report_json(r, &b, &err), WF_OK);
    ck_assert_str_eq(
        b.data,
        "{\n  \"totals\": {\n    \"files\": 1,\n    \"converted\": 1,\n    \"partial\": 0,\n"
        "    \"failed\": 0,\n    \"functionsToWrite\": 0,\n    \"guessedTypes\": 0\n  },\n"
        "  \"files\": [\n    {\n      \"source\": \"in/a.xoml\",\n      \"output\": \"out/a.xaml\",\n"
        "      \"status\": \"converted\",\n      \"activities\": [\n"
        "        {\"name\": \"step\", \"legacyType\": \"CodeActivity\", \"modernType\": "
        "\"InvokeMethod\", \"line\": 3, \"action\": \"invoke\"}\n      ],\n"
        "      \"diagnostics\": [\n"
        "        {\"severity\": \"review\", \"line\": 4, \"col\": 2, \"message\": \"say \\\"hi\\\"\", "
        "\"rule\": \"parallel-interleaving\"},\n"
        "        {\"severity\": \"error\", \"file\": \"in/a.rules\", \"line\": 9, \"col\": 1, "
        "\"message\": \"bad\", \"rule\": \"legacy-load\"}\n      ],\n"
        "      \"losses\": [\n"
        "        {\"kind\": \"designer-only\", \"line\": 1, \"what\": \"sap:HintSize\"}\n      ]\n"
        "    }\n  ]\n}\n");
    wfc_file *f = wfc_report_file_at(r, 0);
    ck_assert_str_eq(wfc_file_diag_file(f, 1), "in/a.rules");
    ck_assert_str_eq(wfc_file_diag_file(f, 0), "in/a.xoml");
    ck_assert_uint_eq(wfc_file_error_count(f), 1);
    wf_buf_fini(&b);
    wfc_report_destroy(r);
}
END_TEST

START_TEST(test_only_designer_losses_are_allowed)
{
    wfc_report *r = NULL;
    ck_assert_int_eq(wfc_report_create(&r, NULL), WF_OK);
    wfc_file *f = wfc_report_add_file(r, "a.xoml");
    wfc_file_add_loss(f, WFC_LOSS_DESIGNER, 1, "x");
    ck_assert(!wfc_file_lost_more_than_designer(f));
    wfc_file_add_loss(f, WFC_LOSS_CODE, 2, "x:Code");
    ck_assert(wfc_file_lost_more_than_designer(f));
    wfc_file_clear(f);
    ck_assert(!wfc_file_lost_more_than_designer(f));
    ck_assert_uint_eq(wfc_file_diag_count(f), 0);
    wfc_report_destroy(r);
}
END_TEST

START_TEST(test_csv_and_markdown_carry_the_same_entries)
{
    wfc_report *r = NULL;
    ck_assert_int_eq(wfc_report_create(&r, NULL), WF_OK);
    ck_assert_int_eq(fill(r), WF_OK);
    wfc_file_add_activity(wfc_report_file_at(r, 0), "pol|icy", "PolicyActivity", "Interop", 5,
                          WFC_ACT_INTEROP);
    wf_buf b;
    wf_buf_init(&b);
    ck_assert_int_eq(wfc_report_csv(r, &b, NULL), WF_OK);
    ck_assert_ptr_nonnull(strstr(b.data, "source,status,kind,name,legacyType,modernType,action,"
                                         "severity,rule,line,col,message\r\n"));
    ck_assert_ptr_nonnull(strstr(b.data, "in/a.xoml,converted,activity,step,CodeActivity,"
                                         "InvokeMethod,invoke,,,3,,\r\n"));
    ck_assert_ptr_nonnull(
        strstr(b.data, ",review,parallel-interleaving,4,2,\"say \"\"hi\"\"\"\r\n"));
    ck_assert_ptr_nonnull(strstr(b.data, "in/a.rules,converted,diagnostic,"));
    wf_buf_reset(&b);
    ck_assert_int_eq(wfc_report_markdown(r, &b, NULL), WF_OK);
    ck_assert_ptr_nonnull(strstr(b.data, "| File | Status | Activities | Mapped | Invoke | "
                                         "Interop | Coverage | Errors | Warnings |\n"));
    ck_assert_ptr_nonnull(strstr(b.data, "| in/a.xoml | converted | 2 | 0 | 1 | 1 | 50% | 1 | 1 |\n"));
    ck_assert_ptr_nonnull(strstr(b.data, "| **Total: 1 file** | 1 converted, 0 partial, 0 failed "
                                         "| 2 | 0 | 1 | 1 | 50% | 1 | 1 |\n"));
    ck_assert_ptr_nonnull(strstr(b.data, "| pol\\|icy | PolicyActivity | Interop | interop | 5 |"));
    wf_buf_fini(&b);
    wfc_report_destroy(r);
}
END_TEST

/* Names and messages come from the input: a cell starting like a formula is neutralised in
 * CSV; in Markdown raw HTML is escaped and '|' cannot split a cell or a heading. */
START_TEST(test_csv_and_markdown_neutralise_hostile_text)
{
    wfc_report *r = NULL;
    ck_assert_int_eq(wfc_report_create(&r, NULL), WF_OK);
    wfc_file *f = wfc_report_add_file(r, "a|<b>.xoml");
    wfc_file_add_activity(f, "=HYPERLINK(\"http://x\")", "+CodeActivity", "-Sequence", 2,
                          WFC_ACT_MAPPED);
    wfc_file_add_diag(f, WFC_WARNING, 3, 1, "@rule", "<script>alert(1)</script> a|b");
    wf_buf b;
    wf_buf_init(&b);
    ck_assert_int_eq(wfc_report_csv(r, &b, NULL), WF_OK);
    ck_assert_ptr_nonnull(strstr(b.data, ",activity,\"'=HYPERLINK(\"\"http://x\"\")\","
                                         "\"'+CodeActivity\",\"'-Sequence\",mapped,"));
    ck_assert_ptr_nonnull(strstr(b.data, ",warning,\"'@rule\",3,1,"));
    ck_assert_ptr_null(strstr(b.data, ",=")); /* no cell starts a formula */
    wf_buf_reset(&b);
    ck_assert_int_eq(wfc_report_markdown(r, &b, NULL), WF_OK);
    ck_assert_ptr_null(strstr(b.data, "<script>"));
    ck_assert_ptr_null(strstr(b.data, "<b>"));
    ck_assert_ptr_nonnull(strstr(b.data, "&lt;script&gt;alert(1)&lt;/script&gt; a\\|b |"));
    ck_assert_ptr_nonnull(strstr(b.data, "## a\\|&lt;b&gt;.xoml\n"));
    /* every table row of the diagnostics has its 4 cells: 5 unescaped '|' */
    const char *row = strstr(b.data, "| warning |");
    ck_assert_ptr_nonnull(row);
    size_t bars = 0;
    for (const char *p = row; *p && *p != '\n'; p++)
        bars += *p == '|' && p[-1] != '\\';
    ck_assert_uint_eq(bars, 5);
    wf_buf_fini(&b);
    wfc_report_destroy(r);
}
END_TEST

static wf_status fake_svg(void *ud, const char *dot, wf_buf *svg, wf_error *err)
{
    (void)err;
    int *calls = ud;
    (*calls)++;
    ck_assert_ptr_nonnull(strstr(dot, "digraph"));
    wf_buf_adds(svg, "<?xml version=\"1.0\"?>\n<svg id=\"pic\"></svg>\n");
    return WF_OK;
}

static wf_status no_svg(void *ud, const char *dot, wf_buf *svg, wf_error *err)
{
    (void)ud, (void)dot, (void)svg, (void)err;
    return WF_E_NOTFOUND;
}

static wf_status late_svg(void *ud, const char *dot, wf_buf *svg, wf_error *err)
{
    (void)dot, (void)svg;
    int *calls = ud;
    (*calls)++;
    return wf_error_set(err, WF_E_LIMIT, NULL, "the time for drawing is used up");
}

/* A file too large to draw is not drawn; a renderer out of time stops the drawing; both are
 * said on the page. */
START_TEST(test_html_caps_the_pictures)
{
    wfc_report *r = NULL;
    ck_assert_int_eq(wfc_report_create(&r, NULL), WF_OK);
    wfc_file *big = wfc_report_add_file(r, "big.xoml");
    for (int i = 0; i <= WFC_REPORT_PICTURE_MAX; i++)
        wfc_file_add_activity(big, "a", "CodeActivity", "InvokeMethod", 1, WFC_ACT_INVOKE);
    wfc_file_set_graphs(big, "digraph a {}", "digraph b {}");
    for (int i = 0; i < 2; i++)
        wfc_file_set_graphs(wfc_report_add_file(r, i ? "c.xoml" : "b.xoml"), "digraph a {}",
                            "digraph b {}");
    wf_buf b;
    wf_buf_init(&b);
    int calls = 0;
    ck_assert_int_eq(wfc_report_html(r, late_svg, &calls, &b, NULL), WF_OK);
    ck_assert_int_eq(calls, 1); /* big.xoml not drawn, b.xoml out of time, c.xoml not tried */
    ck_assert_ptr_nonnull(strstr(b.data, "Not drawn: 401 activities"));
    ck_assert_ptr_nonnull(strstr(b.data, "Drawing stopped"));
    wf_buf_fini(&b);
    wfc_report_destroy(r);
}
END_TEST

START_TEST(test_html_has_summary_tables_and_pictures)
{
    wfc_report *r = NULL;
    ck_assert_int_eq(wfc_report_create(&r, NULL), WF_OK);
    ck_assert_int_eq(fill(r), WF_OK);
    wfc_file_set_graphs(wfc_report_file_at(r, 0), "digraph a {}", "digraph b {}");
    wf_buf b;
    wf_buf_init(&b);
    int calls = 0;
    ck_assert_int_eq(wfc_report_html(r, fake_svg, &calls, &b, NULL), WF_OK);
    ck_assert_int_eq(calls, 2);
    ck_assert_ptr_nonnull(strstr(b.data, "<table id=\"summary\">"));
    /* the Markdown summary's columns, then a totals row */
    ck_assert_ptr_nonnull(strstr(b.data, "<th>Coverage</th><th>Errors</th><th>Warnings</th>"));
    ck_assert_ptr_nonnull(strstr(b.data, "<td>in/a.xoml</td><td class=\"converted\">converted</td>"
                                         "<td>1</td><td>0</td><td>1</td><td>0</td><td>100%</td>"
                                         "<td>1</td><td>1</td>"));
    ck_assert_ptr_nonnull(strstr(b.data, "<tr class=\"total\"><td>Total: 1 file</td><td>1 "
                                         "converted, 0 partial, 0 failed</td><td>1</td>"));
    ck_assert_ptr_nonnull(strstr(b.data, "<p id=\"legend\">"));
    /* what to do per rule, and where with the file */
    ck_assert_ptr_nonnull(strstr(b.data, "<table id=\"remediation\">"));
    ck_assert_ptr_nonnull(strstr(b.data, "<td class=\"review\">parallel-interleaving</td><td>1"
                                         "</td><td>Check that the branches"));
    ck_assert_ptr_nonnull(strstr(b.data, "<td>in/a.xoml:4:2</td>"));
    ck_assert_ptr_nonnull(strstr(b.data, "<td>in/a.rules:9:1</td>"));
    ck_assert_ptr_nonnull(strstr(b.data, "<tr class=\"invoke\"><td>step</td>"));
    ck_assert_ptr_nonnull(strstr(b.data, "<td>say &quot;hi&quot;</td>"));
    /* every picture's ids are its own */
    ck_assert_ptr_nonnull(strstr(b.data, "<h3>Legacy</h3>\n<svg id=\"f0-legacy-pic\">"));
    ck_assert_ptr_nonnull(strstr(b.data, "<h3>Converted</h3>\n<svg id=\"f0-converted-pic\">"));
    ck_assert_ptr_nonnull(strstr(b.data, "svg{max-width:100%;height:auto}"));
    ck_assert_ptr_null(strstr(b.data, "<?xml"));
    ck_assert_ptr_null(strstr(b.data, "no-pictures"));
    wf_buf_reset(&b);
    ck_assert_int_eq(wfc_report_html(r, no_svg, NULL, &b, NULL), WF_OK);
    ck_assert_ptr_nonnull(strstr(b.data, "need Graphviz"));
    ck_assert_ptr_null(strstr(b.data, "<svg"));
    wf_buf_fini(&b);
    wfc_report_destroy(r);
}
END_TEST

static wf_status report_op(void *ud)
{
    (void)ud;
    wfc_report *r = NULL;
    wf_status st = wfc_report_create(&r, NULL);
    if (st != WF_OK)
        return st;
    st = fill(r);
    wf_buf b;
    wf_buf_init(&b);
    if (st == WF_OK)
        st = wfc_report_json(r, &b, NULL);
    if (st == WF_OK)
        st = wfc_report_csv(r, &b, NULL);
    if (st == WF_OK)
        st = wfc_report_markdown(r, &b, NULL);
    if (st == WF_OK)
        st = wfc_report_html(r, no_svg, NULL, &b, NULL);
    wf_buf_fini(&b);
    wfc_report_destroy(r);
    return st;
}

START_TEST(test_out_of_memory_is_sticky_and_leaks_nothing)
{
    ck_assert_uint_gt(wf_test_nomem_loop(report_op, NULL, 1000), 3);
}
END_TEST

/* HTML through xmlTextWriter: text from the input is escaped, every element closed. */
START_TEST(test_html_escapes_hostile_text)
{
    wfc_report *r = NULL;
    ck_assert_int_eq(wfc_report_create(&r, NULL), WF_OK);
    wfc_file *f = wfc_report_add_file(r, "a|<b>&.xoml");
    wfc_file_add_activity(f, "", "<i>CodeActivity", "Sequence", 2, WFC_ACT_MAPPED);
    wfc_file_add_diag(f, WFC_WARNING, 3, 1, "rule", "<script>alert(1)</script> a|b");
    wfc_file_set_status(f, WFC_PARTIAL);
    wf_buf b;
    wf_buf_init(&b);
    ck_assert_int_eq(wfc_report_html(r, no_svg, NULL, &b, NULL), WF_OK);
    ck_assert_ptr_null(strstr(b.data, "<script>"));
    ck_assert_ptr_null(strstr(b.data, "<b>"));
    ck_assert_ptr_null(strstr(b.data, "<i>"));
    ck_assert_ptr_nonnull(strstr(b.data, "<td>&lt;script&gt;alert(1)&lt;/script&gt; a|b</td>"));
    ck_assert_ptr_nonnull(strstr(b.data, "<h2>a|&lt;b&gt;&amp;.xoml <span class=\"partial\">"));
    ck_assert_ptr_nonnull(strstr(b.data, "<!DOCTYPE html>\n<html lang=\"en\">"));
    ck_assert_ptr_nonnull(strstr(b.data, "</body>\n</html>\n"));
    /* an empty cell is closed as HTML needs: only the void <meta> ends in "/>" */
    ck_assert_ptr_nonnull(strstr(b.data, "<tr class=\"mapped\"><td></td>"));
    ck_assert_ptr_nonnull(strstr(b.data, "<meta charset=\"utf-8\"/>"));
    size_t closed = 0;
    for (const char *p = strstr(b.data, "/>"); p; p = strstr(p + 2, "/>"))
        closed++;
    ck_assert_uint_eq(closed, 1);
    wf_buf_fini(&b);
    wfc_report_destroy(r);
}
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_json_has_the_documented_shape);
    tcase_add_test(core, test_html_escapes_hostile_text);
    tcase_add_test(core, test_html_escapes_hostile_text);
    tcase_add_test(core, test_totals_count_the_scaffold_work_list);
    tcase_add_test(core, test_only_designer_losses_are_allowed);
    tcase_add_test(core, test_csv_and_markdown_carry_the_same_entries);
    tcase_add_test(core, test_csv_and_markdown_neutralise_hostile_text);
    tcase_add_test(core, test_html_caps_the_pictures);
    tcase_add_test(core, test_html_has_summary_tables_and_pictures);
    suite_add_tcase(s, core);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_out_of_memory_is_sticky_and_leaks_nothing);
    suite_add_tcase(s, nomem);
    return s;
}

/* test_scaffold.c — `convert --scaffold` (converter/wfc_scaffold.c): from a .xoml whose type
 * library does not exist, a type library that the legacy loader accepts and a C file that
 * compiles; nothing for a file whose native code is all declared; bad XML located. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../converter/wfc_scaffold.h"
#include "../../legacy/wfl_typelib.h"
#include "../wf_test_util.h"
#include "support_converter.h"

static const char flow[] =
    "<SequentialWorkflowActivity x:Class=\"Acme.Billing.InvoiceFlow\" x:Name=\"InvoiceFlow\" "
    "xmlns:ns0=\"clr-namespace:Acme.Billing;Assembly=billing\" "
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
    "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
    "  <CodeActivity x:Name=\"load\" ExecuteCode=\"LoadInvoice\" />\n"
    "  <WhileActivity x:Name=\"eachLine\">\n"
    "    <WhileActivity.Condition><CodeCondition Condition=\"HasMoreLines\" />"
    "</WhileActivity.Condition>\n"
    "    <ns0:PriceLine x:Name=\"price\" Sku=\"{ActivityBind InvoiceFlow,Path=Sku}\" "
    "Quantity=\"3\" />\n"
    "  </WhileActivity>\n"
    "  <DelayActivity x:Name=\"wait\" TimeoutDuration=\"{ActivityBind InvoiceFlow,Path=Grace}\" "
    "/>\n"
    "</SequentialWorkflowActivity>\n";

START_TEST(test_missing_native_code_is_scaffolded)
{
    const char *dir = wf_test_tmpdir();
    char out[1024];
    snprintf(out, sizeof out, "%s/scaffold", dir);
    const char *xoml = wf_test_write_file(dir, "invoice.xoml", flow);
    wfc_scaffold_result res;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfc_scaffold(NULL, xoml, out, &res, &err), WF_OK);
    /* class Sku Grace, LoadInvoice, HasMoreLines, PriceLine + Sku Quantity */
    ck_assert_uint_eq(res.symbol_count, 7);
    ck_assert_uint_eq(res.guessed_count, 3); /* Sku twice and Quantity; Grace is a TimeSpan */
    size_t len = 0;
    char *tl_text = wf_test_read_file(res.typelib_path, &len);
    ck_assert_ptr_nonnull(tl_text);
    ck_assert_ptr_nonnull(strstr(tl_text, "<Property Name=\"Grace\" Type=\"TimeSpan\"/>\n"));
    ck_assert_ptr_nonnull(strstr(tl_text, "<Handler Name=\"LoadInvoice\" "
                                          "Function=\"billing_loadinvoice\"/>"));
    wf_types *types = wf_types_create();
    wfl_typelib *tl = NULL;
    ck_assert_msg(wfl_typelib_parse(types, res.typelib_path, tl_text, len, &tl, NULL, &err) ==
                      WF_OK,
                  "%u:%u: %s", err.line, err.col, err.message);
    ck_assert_ptr_nonnull(wfl_typelib_activity(tl, "PriceLine"));
    ck_assert_ptr_nonnull(wfl_typelib_class(tl, "Acme.Billing.InvoiceFlow"));
    wfl_typelib_destroy(tl);
    wf_types_destroy(types);
    wf_free(tl_text);
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror -fsyntax-only %s",
             res.source_path);
    ck_assert_int_eq(system(cmd), 0);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_nothing_is_written_when_all_is_declared)
{
    const char *dir = wf_test_tmpdir();
    wf_libpath *lp = NULL;
    ck_assert_int_eq(wf_libpath_create(wfc_test_lib_dirs(), &lp, NULL), WF_OK);
    wfc_scaffold_result res;
    char out[1024];
    snprintf(out, sizeof out, "%s/scaffold", dir);
    ck_assert_int_eq(
        wfc_scaffold(lp, "samples/legacy/batch_processing/batch_processing.xoml", out, &res, NULL),
        WF_OK);
    ck_assert_uint_eq(res.symbol_count, 0);
    ck_assert_str_eq(res.typelib_path, "");
    struct stat st;
    ck_assert_int_ne(stat(out, &st), 0);
    wf_libpath_destroy(lp);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_malformed_xoml_is_located)
{
    const char *dir = wf_test_tmpdir();
    const char *xoml = wf_test_write_file(dir, "bad.xoml", "<SequentialWorkflowActivity>\n<a>\n");
    wfc_scaffold_result res;
    wf_error err = WF_ERROR_INIT;
    char out[1024];
    snprintf(out, sizeof out, "%s/scaffold", dir);
    ck_assert_int_eq(wfc_scaffold(NULL, xoml, out, &res, &err), WF_E_XML);
    ck_assert_uint_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.file, "bad.xoml"));
    struct stat st;
    ck_assert_int_ne(stat(out, &st), 0);
    wf_test_tmpdir_remove(dir);
}
END_TEST

Suite *scaffold_suite(void)
{
    Suite *s = suite_create("scaffold");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_missing_native_code_is_scaffolded);
    tcase_add_test(core, test_nothing_is_written_when_all_is_declared);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_malformed_xoml_is_located);
    suite_add_tcase(s, bad);
    return s;
}

/* test_scaffold.c — `convert --scaffold` (converter/wfc_scaffold.c, wfc_scaffold_write.c):
 * from .xoml files whose type libraries do not exist, one type library per assembly that the
 * legacy loader accepts, C that compiles with -Werror, typed from the markup's evidence; a
 * second run adds only what is new and never touches a file the user wrote; names that are
 * no plain file name, a scaffold path that is a file and a hand-broken type library are
 * refused, located, with nothing written. */
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

#define HEAD                                                                                       \
    "<SequentialWorkflowActivity x:Class=\"Acme.Billing.InvoiceFlow\" x:Name=\"InvoiceFlow\" "     \
    "xmlns:ns0=\"clr-namespace:Acme.Billing;Assembly=billing\" "                                   \
    "xmlns:ns1=\"clr-namespace:Acme.Mail;Assembly=mailer, Version=1.0.0.0\" "                      \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "                                    \
    "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"

static const char flow[] =
    HEAD "  <CodeActivity x:Name=\"load\" ExecuteCode=\"LoadInvoice\" />\n"
         "  <WhileActivity x:Name=\"eachLine\">\n"
         "    <WhileActivity.Condition><CodeCondition Condition=\"HasMoreLines\" />"
         "</WhileActivity.Condition>\n"
         "    <ns0:PriceLine x:Name=\"price\" Sku=\"{ActivityBind InvoiceFlow,Path=Sku}\" "
         "Quantity=\"3\" />\n"
         "  </WhileActivity>\n"
         "  <DelayActivity x:Name=\"wait\" TimeoutDuration=\"{ActivityBind InvoiceFlow,"
         "Path=Grace}\" />\n"
         "  <CallExternalMethodActivity x:Name=\"notify\" InterfaceType=\"{x:Type "
         "ns1:IMailer}\" MethodName=\"Send\">\n"
         "    <CallExternalMethodActivity.ParameterBindings>\n"
         "      <WorkflowParameterBinding ParameterName=\"to\"><WorkflowParameterBinding.Value>"
         "<ActivityBind Name=\"InvoiceFlow\" Path=\"Customer\" /></WorkflowParameterBinding.Value>"
         "</WorkflowParameterBinding>\n"
         "      <WorkflowParameterBinding ParameterName=\"(ReturnValue)\">"
         "<WorkflowParameterBinding.Value><ActivityBind Name=\"InvoiceFlow\" Path=\"Sent\" />"
         "</WorkflowParameterBinding.Value></WorkflowParameterBinding>\n"
         "    </CallExternalMethodActivity.ParameterBindings>\n"
         "  </CallExternalMethodActivity>\n"
         "</SequentialWorkflowActivity>\n";

/* wf_test_write_file's path is a static buffer: keep a copy (freed by the test). */
static char *put(const char *dir, const char *name, const char *text)
{
    char *path = strdup(wf_test_write_file(dir, name, text));
    ck_assert_ptr_nonnull(path);
    return path;
}

/* Scan the given files into dir/S; returns the write's status. */
static wf_status scaffold(const wf_libpath *lp, const char *s_dir, char *const *files,
                          wfc_scaffold_result *res, wf_error *err, wfc_scaffold **keep)
{
    wfc_scaffold *s = NULL;
    ck_assert_int_eq(wfc_scaffold_create(lp, s_dir, &s, err), WF_OK);
    for (size_t i = 0; files[i]; i++)
        ck_assert_int_eq(wfc_scaffold_scan(s, files[i], NULL, err), WF_OK);
    wf_status st = wfc_scaffold_write(s, res, err);
    if (keep)
        *keep = s;
    else
        wfc_scaffold_destroy(s);
    return st;
}

static char *read_in(const char *dir, const char *name)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    return wf_test_read_file(path, &len);
}

static void assert_parses(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len = 0;
    char *text = wf_test_read_file(path, &len);
    ck_assert_msg(text != NULL, "%s missing", path);
    wf_types *types = wf_types_create();
    wfl_typelib *tl = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_typelib_parse(types, path, text, len, &tl, NULL, &err) == WF_OK,
                  "%s:%u:%u: %s", path, err.line, err.col, err.message);
    wfl_typelib_destroy(tl);
    wf_types_destroy(types);
    wf_free(text);
}

static void assert_compiles(const char *dir, const char *name)
{
    char cmd[3000];
    snprintf(cmd, sizeof cmd,
             "cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -o %s/check.so %s/%s", dir, dir,
             name);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

START_TEST(test_missing_native_code_is_scaffolded_per_assembly)
{
    const char *dir = wf_test_tmpdir();
    char s_dir[1024];
    snprintf(s_dir, sizeof s_dir, "%s/S", dir);
    char *files[] = {put(dir, "invoice.xoml", flow), NULL};
    wfc_scaffold_result res;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(scaffold(NULL, s_dir, files, &res, &err, NULL), WF_OK);
    /* billing: class + Sku Grace Customer Sent + LoadInvoice HasMoreLines, PriceLine + Sku
     * Quantity; mailer: IMailer, Send, to, ReturnValue */
    ck_assert_uint_eq(res.declarations, 14);
    ck_assert_uint_eq(res.functions, 4);
    ck_assert_uint_eq(res.files_written, 5); /* 2 type libraries, 2 C files, the Makefile */
    char *billing = read_in(s_dir, "billing.activities.xml");
    ck_assert_ptr_nonnull(strstr(billing, "<Property Name=\"Grace\" Type=\"TimeSpan\"/>\n"));
    ck_assert_ptr_nonnull(strstr(billing, "<Property Name=\"Quantity\" Type=\"Int32\" "
                                          "Direction=\"In\"/><!-- guessed -->"));
    ck_assert_ptr_nonnull(strstr(billing, "<Handler Name=\"LoadInvoice\" "
                                          "Function=\"billing_invoiceflow_loadinvoice\">"));
    /* handlers take the class's C-mapped properties; TimeSpan has no C mapping */
    ck_assert_ptr_nonnull(strstr(billing, "<Parameter Property=\"Sku\" Direction=\"InOut\"/>"));
    ck_assert_ptr_null(strstr(billing, "<Parameter Property=\"Grace\""));
    char *mailer = read_in(s_dir, "mailer.activities.xml");
    ck_assert_ptr_nonnull(
        strstr(mailer, "<Method Name=\"Send\" Function=\"mailer_imailer_send\">"));
    ck_assert_ptr_nonnull(strstr(mailer, "Name=\"ReturnValue\" Type=\"String\" "
                                         "Direction=\"Return\""));
    wf_free(billing);
    wf_free(mailer);
    assert_parses(s_dir, "billing.activities.xml");
    assert_parses(s_dir, "mailer.activities.xml");
    assert_compiles(s_dir, "billing.c");
    assert_compiles(s_dir, "mailer.c");
    char *c = read_in(s_dir, "billing.c");
    ck_assert_ptr_nonnull(strstr(c, "void billing_invoiceflow_loadinvoice(char **sku, "));
    ck_assert_ptr_nonnull(strstr(c, "bool billing_invoiceflow_hasmorelines(const char *sku"));
    ck_assert_ptr_nonnull(strstr(c, "void billing_priceline(const char *sku, int32_t quantity)"));
    wf_free(c);
    free(files[0]);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Evidence: a Receive's ParameterType, a rule comparing with an Int32, e and sender. */
START_TEST(test_types_come_from_the_markup_and_the_rules)
{
    const char *dir = wf_test_tmpdir();
    char s_dir[1024];
    snprintf(s_dir, sizeof s_dir, "%s/S", dir);
    wf_test_write_file(
        dir, "scored.rules",
        "<RuleDefinitions xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">"
        "<RuleDefinitions.Conditions><RuleExpressionCondition Name=\"High\">"
        "<RuleExpressionCondition.Expression><ns0:CodeBinaryOperatorExpression "
        "Operator=\"GreaterThan\" xmlns:ns0=\"clr-namespace:System.CodeDom;Assembly=System\">"
        "<ns0:CodeBinaryOperatorExpression.Left><ns0:CodeFieldReferenceExpression "
        "FieldName=\"score\"><ns0:CodeFieldReferenceExpression.TargetObject>"
        "<ns0:CodeThisReferenceExpression/></ns0:CodeFieldReferenceExpression.TargetObject>"
        "</ns0:CodeFieldReferenceExpression></ns0:CodeBinaryOperatorExpression.Left>"
        "<ns0:CodeBinaryOperatorExpression.Right><ns0:CodePrimitiveExpression>"
        "<ns0:CodePrimitiveExpression.Value><ns1:Int32 xmlns:ns1=\"clr-namespace:System;"
        "Assembly=mscorlib\">5</ns1:Int32></ns0:CodePrimitiveExpression.Value>"
        "</ns0:CodePrimitiveExpression></ns0:CodeBinaryOperatorExpression.Right>"
        "</ns0:CodeBinaryOperatorExpression></RuleExpressionCondition.Expression>"
        "</RuleExpressionCondition></RuleDefinitions.Conditions></RuleDefinitions>\n");
    char *files[] = {
        put(dir, "scored.xoml",
            "<SequentialWorkflowActivity x:Class=\"Acme.Scored\" x:Name=\"Scored\" "
            "xmlns:ns0=\"clr-namespace:Acme;Assembly=acme\" "
            "xmlns:ns1=\"clr-namespace:System;Assembly=mscorlib\" "
            "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
            "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
            "  <ReceiveActivity x:Name=\"r\"><ReceiveActivity.ServiceOperationInfo>"
            "<OperationInfo Name=\"Add\" ContractName=\"ICalc\"><OperationInfo.Parameters>"
            "<OperationParameterInfo Attributes=\"In\" ParameterType=\"{x:Type ns1:Int64}\" "
            "Name=\"value\" Position=\"0\"/></OperationInfo.Parameters></OperationInfo>"
            "</ReceiveActivity.ServiceOperationInfo><ReceiveActivity.ParameterBindings>"
            "<WorkflowParameterBinding ParameterName=\"value\"><WorkflowParameterBinding.Value>"
            "<ActivityBind Name=\"Scored\" Path=\"Operand\"/></WorkflowParameterBinding.Value>"
            "</WorkflowParameterBinding></ReceiveActivity.ParameterBindings></ReceiveActivity>\n"
            "  <HandleExternalEventActivity x:Name=\"h\" EventName=\"Done\" "
            "InterfaceType=\"{x:Type "
            "ns0:IDesk}\"><HandleExternalEventActivity.ParameterBindings>"
            "<WorkflowParameterBinding ParameterName=\"e\"><WorkflowParameterBinding.Value>"
            "<ActivityBind Name=\"Scored\" Path=\"Args\"/></WorkflowParameterBinding.Value>"
            "</WorkflowParameterBinding><WorkflowParameterBinding ParameterName=\"sender\">"
            "<WorkflowParameterBinding.Value><ActivityBind Name=\"Scored\" Path=\"From\"/>"
            "</WorkflowParameterBinding.Value></WorkflowParameterBinding>"
            "</HandleExternalEventActivity.ParameterBindings></HandleExternalEventActivity>\n"
            "</SequentialWorkflowActivity>\n"),
        NULL};
    wfc_scaffold_result res;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(scaffold(NULL, s_dir, files, &res, &err, NULL), WF_OK);
    char *acme = read_in(s_dir, "acme.activities.xml");
    ck_assert_ptr_nonnull(strstr(acme, "<Property Name=\"Operand\" Type=\"Int64\"/>\n"));
    ck_assert_ptr_nonnull(strstr(acme, "<Property Name=\"Args\" Type=\"Record\"/>\n"));
    ck_assert_ptr_nonnull(strstr(acme, "<Property Name=\"From\" Type=\"String\"/>\n"));
    ck_assert_ptr_nonnull(strstr(acme, "<Property Name=\"score\" Type=\"Int32\"/><!-- guessed"));
    ck_assert_ptr_nonnull(strstr(acme, "<Event Name=\"Done\">\n      <Parameter Name=\"e\" "
                                       "Type=\"Record\"/>"));
    ck_assert_ptr_null(strstr(acme, "Library=")); /* data and events only: no C */
    ck_assert_uint_eq(res.functions, 0);
    ck_assert_uint_eq(res.guessed, 1);
    wf_free(acme);
    assert_parses(s_dir, "acme.activities.xml");
    free(files[0]);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A SendActivity's undeclared typed contract and an InvokeWebServiceActivity's undeclared
 * ASMX proxy: the scaffold declares both as <Service>s (the proxy by its last dotted name),
 * and the re-convert maps both to Send + ReceiveReply instead of hosting them. */
START_TEST(test_send_contract_and_web_proxy_are_scaffolded_and_convert)
{
    const char *dir = wf_test_tmpdir();
    char *files[] = {
        put(dir, "dispatch.xoml",
            "<SequentialWorkflowActivity x:Class=\"Acme.Dispatch\" x:Name=\"Dispatch\" "
            "xmlns:ns0=\"clr-namespace:Acme.Contracts;Assembly=contracts\" "
            "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
            "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
            "  <SendActivity x:Name=\"askShipper\"><SendActivity.ChannelToken><ChannelToken "
            "Name=\"ShipperChannel\" EndpointName=\"ShipperEndpoint\" "
            "OwnerActivityName=\"Dispatch\" /></SendActivity.ChannelToken>"
            "<SendActivity.ServiceOperationInfo><TypedOperationInfo "
            "ContractType=\"{x:Type ns0:IShipper}\" Name=\"Ship\" />"
            "</SendActivity.ServiceOperationInfo><SendActivity.ParameterBindings>"
            "<WorkflowParameterBinding ParameterName=\"parcel\"><WorkflowParameterBinding.Value>"
            "<ActivityBind Name=\"Dispatch\" Path=\"Parcel\"/></WorkflowParameterBinding.Value>"
            "</WorkflowParameterBinding></SendActivity.ParameterBindings></SendActivity>\n"
            "  <InvokeWebServiceActivity x:Name=\"rate\" "
            "ProxyClass=\"{x:Type ns0:localhost.RatesService}\" MethodName=\"GetRate\">"
            "<InvokeWebServiceActivity.ParameterBindings>"
            "<WorkflowParameterBinding ParameterName=\"(ReturnValue)\">"
            "<WorkflowParameterBinding.Value><ActivityBind Name=\"Dispatch\" Path=\"Rate\"/>"
            "</WorkflowParameterBinding.Value></WorkflowParameterBinding>"
            "</InvokeWebServiceActivity.ParameterBindings></InvokeWebServiceActivity>\n"
            "</SequentialWorkflowActivity>\n"),
        NULL};
    int rc = wf_test_shell_cli(dir, 60, "convert %s -o %s --scaffold %s/S --report %s",
                               files[0], wf_test_path(dir, "dispatch.xaml"), dir,
                               wf_test_path(dir, "report.json"));
    ck_assert_int_eq(rc, 0);
    char s_dir[1024];
    snprintf(s_dir, sizeof s_dir, "%s/S", dir);
    char *lib = read_in(s_dir, "contracts.activities.xml");
    ck_assert_ptr_nonnull(lib);
    ck_assert_ptr_nonnull(strstr(lib, "<Service Name=\"IShipper\">"));
    ck_assert_ptr_nonnull(strstr(lib, "<Method Name=\"Ship\" "));
    ck_assert_ptr_nonnull(strstr(lib, "<Service Name=\"RatesService\">"));
    ck_assert_ptr_nonnull(strstr(lib, "<Method Name=\"GetRate\" "));
    wf_free(lib);
    assert_parses(s_dir, "contracts.activities.xml");
    char *report = read_in(dir, "report.json");
    ck_assert_ptr_nonnull(report);
    ck_assert_ptr_nonnull(strstr(report, "\"status\": \"converted\""));
    ck_assert_ptr_null(strstr(report, "service-contract"));
    wf_free(report);
    char *xaml = read_in(dir, "dispatch.xaml");
    ck_assert_ptr_nonnull(strstr(xaml, "<p:Send x:Name=\"askShipper_Send\" OperationName=\"Ship\" "
                                       "ServiceContractName=\"IShipper\" "
                                       "EndpointConfigurationName=\"ShipperEndpoint\""));
    ck_assert_ptr_nonnull(strstr(xaml, "OperationName=\"GetRate\" ServiceContractName=\""
                                       "{http://tempuri.org/}RatesService\" Action=\"http://"
                                       "tempuri.org/GetRate\" EndpointConfigurationName=\""
                                       "RatesService\""));
    ck_assert_ptr_null(strstr(xaml, "<Interop"));
    wf_free(xaml);
    free(files[0]);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A ReceiveActivity whose TypedOperationInfo names a contract no type library declares: the
 * scaffold declares the interface as a <Service> whose <Method> is the operation, with its
 * parameters from the bindings, and the file then converts fully (no Interop, no warning). */
START_TEST(test_typed_contract_is_scaffolded_and_converts)
{
    const char *dir = wf_test_tmpdir();
    char s_dir[1024];
    snprintf(s_dir, sizeof s_dir, "%s/S", dir);
    char *files[] = {
        put(dir, "quote.xoml",
            "<SequentialWorkflowActivity x:Class=\"Acme.Quote\" x:Name=\"Quote\" "
            "xmlns:ns0=\"clr-namespace:Acme.Contracts;Assembly=contracts\" "
            "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
            "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
            "  <ReceiveActivity x:Name=\"ask\" CanCreateInstance=\"True\">"
            "<ReceiveActivity.ServiceOperationInfo><TypedOperationInfo "
            "ContractType=\"{x:Type ns0:IPrices}\" Name=\"RequestQuote\" />"
            "</ReceiveActivity.ServiceOperationInfo><ReceiveActivity.ParameterBindings>"
            "<WorkflowParameterBinding ParameterName=\"parcel\"><WorkflowParameterBinding.Value>"
            "<ActivityBind Name=\"Quote\" Path=\"Parcel\"/></WorkflowParameterBinding.Value>"
            "</WorkflowParameterBinding><WorkflowParameterBinding ParameterName=\"(ReturnValue)\">"
            "<WorkflowParameterBinding.Value><ActivityBind Name=\"Quote\" Path=\"Price\"/>"
            "</WorkflowParameterBinding.Value></WorkflowParameterBinding>"
            "</ReceiveActivity.ParameterBindings></ReceiveActivity>\n"
            "</SequentialWorkflowActivity>\n"),
        NULL};
    wfc_scaffold_result res;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(scaffold(NULL, s_dir, files, &res, &err, NULL), WF_OK);
    char *lib = read_in(s_dir, "contracts.activities.xml");
    ck_assert_ptr_nonnull(lib);
    ck_assert_ptr_nonnull(strstr(lib, "<Service Name=\"IPrices\">"));
    ck_assert_ptr_nonnull(strstr(lib, "<Method Name=\"RequestQuote\" "));
    ck_assert_ptr_nonnull(strstr(lib, "<Parameter Name=\"parcel\" Type=\"String\""));
    ck_assert_ptr_nonnull(strstr(lib, "Name=\"ReturnValue\" Type=\"String\" Direction=\"Return\""));
    wf_free(lib);
    assert_parses(s_dir, "contracts.activities.xml");
    /* the CLI's scaffold-then-convert: the Receive maps */
    int rc = wf_test_shell_cli(dir, 60, "convert %s -o %s --scaffold %s/S2 --report %s",
                               files[0], wf_test_path(dir, "quote.xaml"), dir,
                               wf_test_path(dir, "report.json"));
    ck_assert_int_eq(rc, 0);
    char *report = read_in(dir, "report.json");
    ck_assert_ptr_nonnull(report);
    ck_assert_ptr_nonnull(strstr(report, "\"status\": \"converted\""));
    ck_assert_ptr_null(strstr(report, "service-contract"));
    wf_free(report);
    char *xaml = read_in(dir, "quote.xaml");
    ck_assert_ptr_nonnull(strstr(xaml, "<p:Receive x:Name=\"ask_Receive\" "
                                       "OperationName=\"RequestQuote\" "
                                       "ServiceContractName=\"IPrices\""));
    wf_free(xaml);
    free(files[0]);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A second run with a new handler and property: the type library gains them, NAME.c the user
 * edited stays byte for byte, the new function goes to NAME__2.c; a type the markup now
 * states differently is a conflict, not a rewrite. */
START_TEST(test_rerun_adds_and_never_rewrites)
{
    const char *dir = wf_test_tmpdir();
    char s_dir[1024];
    snprintf(s_dir, sizeof s_dir, "%s/S", dir);
    char *files[] = {put(dir, "invoice.xoml", flow), NULL};
    wfc_scaffold_result res;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(scaffold(NULL, s_dir, files, &res, &err, NULL), WF_OK);
    char *c = read_in(s_dir, "billing.c");
    char edited[8192];
    snprintf(edited, sizeof edited, "%s/* the user's own work */\n", c);
    wf_test_write_file(s_dir, "billing.c", edited);
    char *tl_before = read_in(s_dir, "billing.activities.xml");
    /* the same flow, plus a handler, a property, and Customer (a guessed String) now bound
     * where a TimeSpan goes */
    char more[8192];
    snprintf(more, sizeof more, "%s", flow);
    char *end = strstr(more, "</SequentialWorkflowActivity>");
    snprintf(end, sizeof more - (size_t)(end - more),
             "  <CodeActivity x:Name=\"close\" ExecuteCode=\"CloseInvoice\" />\n"
             "  <DelayActivity x:Name=\"d2\" TimeoutDuration=\"{ActivityBind InvoiceFlow,"
             "Path=Customer}\" />\n"
             "  <ns0:PriceLine x:Name=\"again\" Sku=\"{ActivityBind InvoiceFlow,Path=Region}\" "
             "Quantity=\"1\" />\n"
             "</SequentialWorkflowActivity>\n");
    wf_test_write_file(dir, "invoice.xoml", more);
    wfc_scaffold *s = NULL;
    ck_assert_int_eq(scaffold(NULL, s_dir, files, &res, &err, &s), WF_OK);
    ck_assert_uint_eq(res.functions, 1);
    ck_assert_uint_eq(res.declarations, 2); /* CloseInvoice, Region */
    ck_assert_uint_eq(res.conflicts, 2);    /* Customer, and IMailer.Send's `to` bound to it */
    char *c_after = read_in(s_dir, "billing.c");
    ck_assert_str_eq(c_after, edited);
    char *c2 = read_in(s_dir, "billing__2.c");
    ck_assert_ptr_nonnull(strstr(c2, "void billing_invoiceflow_closeinvoice("));
    ck_assert_ptr_null(strstr(c2, "loadinvoice"));
    char *tl_after = read_in(s_dir, "billing.activities.xml");
    ck_assert_ptr_nonnull(strstr(tl_after, "<Handler Name=\"CloseInvoice\""));
    ck_assert_ptr_nonnull(strstr(tl_after, "<Property Name=\"Region\" Type=\"String\"/>"));
    ck_assert_ptr_nonnull(strstr(tl_after, "<Property Name=\"Customer\" Type=\"String\"/>"));
    /* everything that was there is still there, in order: only insertions */
    const char *p = tl_after;
    for (const char *line = tl_before; *line; line = strchr(line, '\n') + 1) {
        char one[512];
        snprintf(one, sizeof one, "%.*s", (int)strcspn(line, "\n"), line);
        ck_assert_msg((p = strstr(p, one)) != NULL, "lost: %s", one);
        if (!strchr(line, '\n'))
            break;
    }
    wfc_scaffold_note n;
    bool noted = false;
    for (size_t i = 0; wfc_scaffold_note_at(s, files[0], i, &n); i++)
        noted |= strcmp(n.kind, "conflict") == 0 && strstr(n.text, "Customer") && n.line > 0;
    ck_assert(noted);
    wfc_scaffold_destroy(s);
    assert_parses(s_dir, "billing.activities.xml");
    assert_compiles(s_dir, "billing__2.c");
    wf_free(c);
    wf_free(c_after);
    wf_free(c2);
    wf_free(tl_before);
    wf_free(tl_after);
    free(files[0]);
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
    char sample[] = "samples/legacy/batch_processing/batch_processing.xoml";
    char *files[] = {sample, NULL};
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(scaffold(lp, out, files, &res, &err, NULL), WF_OK);
    ck_assert_uint_eq(res.declarations, 0);
    ck_assert_uint_eq(res.files_written, 0);
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
    wfc_scaffold *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfc_scaffold_create(NULL, dir, &s, &err), WF_OK);
    ck_assert_int_eq(wfc_scaffold_scan(s, xoml, NULL, &err), WF_E_XML);
    ck_assert_uint_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.file, "bad.xoml"));
    wfc_scaffold_destroy(s);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Assembly names become file names: '/', '\', '..' and a leading '.' are refused at the
 * markup that names them, and nothing is written for any assembly. */
START_TEST(test_assembly_name_that_is_a_path_is_refused)
{
    static const char *const names[] = {"../../victim", "/etc/evil", "a\\\\b", ".hidden"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *dir = wf_test_tmpdir();
        char s_dir[1024], text[2048];
        snprintf(s_dir, sizeof s_dir, "%s/S", dir);
        snprintf(text, sizeof text,
                 "<SequentialWorkflowActivity x:Name=\"W\" "
                 "xmlns:ok=\"clr-namespace:Fine;Assembly=fine\" "
                 "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
                 "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
                 "  <ok:Step x:Name=\"s\"/>\n"
                 "  <p:Evil x:Name=\"e\" xmlns:p=\"clr-namespace:E;Assembly=%s\"/>\n"
                 "</SequentialWorkflowActivity>\n",
                 names[i]);
        char *files[] = {put(dir, "w.xoml", text), NULL};
        wfc_scaffold_result res;
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(scaffold(NULL, s_dir, files, &res, &err, NULL), WF_E_NAME);
        ck_assert_uint_eq(err.line, 3);
        ck_assert_ptr_nonnull(strstr(err.file, "w.xoml"));
        ck_assert_ptr_nonnull(strstr(err.message, "plain file name"));
        struct stat st;
        ck_assert_int_ne(stat(s_dir, &st), 0);
        free(files[0]);
        wf_test_tmpdir_remove(dir);
    }
}
END_TEST

START_TEST(test_scaffold_path_that_is_a_file_is_refused)
{
    const char *dir = wf_test_tmpdir();
    char *s_file = put(dir, "S", "not a directory\n");
    char *files[] = {put(dir, "invoice.xoml", flow), NULL};
    wfc_scaffold_result res;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(scaffold(NULL, s_file, files, &res, &err, NULL), WF_E_IO);
    ck_assert_ptr_nonnull(strstr(err.file, "S"));
    ck_assert_ptr_nonnull(strstr(err.message, "not a directory"));
    char *text = read_in(dir, "S");
    ck_assert_str_eq(text, "not a directory\n");
    wf_free(text);
    free(s_file);
    free(files[0]);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A type library in the scaffold directory the user broke: its own file:line:col, and no
 * file there changes (the other assembly's new file is not written either). */
START_TEST(test_hand_broken_type_library_stops_the_run)
{
    const char *dir = wf_test_tmpdir();
    char s_dir[1024];
    snprintf(s_dir, sizeof s_dir, "%s/S", dir);
    ck_assert_int_eq(mkdir(s_dir, 0755), 0);
    wf_test_write_file(s_dir, "billing.activities.xml",
                       "<TypeLibrary xmlns=\"urn:wfbridge:typelib\" Name=\"billing\">\n"
                       "  <Class Name=\"Acme.Billing.InvoiceFlow\">\n"
                       "    <Propperty Name=\"Sku\" Type=\"String\"/>\n"
                       "  </Class>\n</TypeLibrary>\n");
    char *files[] = {put(dir, "invoice.xoml", flow), NULL};
    wfc_scaffold_result res;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(scaffold(NULL, s_dir, files, &res, &err, NULL), WF_E_SCHEMA);
    ck_assert_ptr_nonnull(strstr(err.file, "billing.activities.xml"));
    ck_assert_uint_eq(err.line, 3);
    ck_assert_uint_eq(err.col, 5);
    struct stat st;
    char path[1100];
    snprintf(path, sizeof path, "%s/mailer.activities.xml", s_dir);
    ck_assert_int_ne(stat(path, &st), 0);
    snprintf(path, sizeof path, "%s/billing.c", s_dir);
    ck_assert_int_ne(stat(path, &st), 0);
    free(files[0]);
    wf_test_tmpdir_remove(dir);
}
END_TEST

Suite *scaffold_suite(void)
{
    Suite *s = suite_create("scaffold");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 60);
    tcase_add_test(core, test_missing_native_code_is_scaffolded_per_assembly);
    tcase_add_test(core, test_types_come_from_the_markup_and_the_rules);
    tcase_add_test(core, test_typed_contract_is_scaffolded_and_converts);
    tcase_add_test(core, test_send_contract_and_web_proxy_are_scaffolded_and_convert);
    tcase_add_test(core, test_rerun_adds_and_never_rewrites);
    tcase_add_test(core, test_nothing_is_written_when_all_is_declared);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_malformed_xoml_is_located);
    tcase_add_test(bad, test_assembly_name_that_is_a_path_is_refused);
    tcase_add_test(bad, test_scaffold_path_that_is_a_file_is_refused);
    tcase_add_test(bad, test_hand_broken_type_library_stops_the_run);
    suite_add_tcase(s, bad);
    return s;
}

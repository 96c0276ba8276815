/* test_validate_only.c — validate-only loads (wfm_load_opts.check_native): InvokeMethod is
 * checked by the caller's declaration check instead of opening the shared object, gets a
 * warning that it was not bound, and a definition loaded so faults rather than calls. */
#include <check.h>
#include <string.h>

#include "../../common/wf_error.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"

/* A library that does not exist: validate-only must never try to open it. */
static const char *const XAML =
    "<Activity x:Class=\"T.V\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\"\n"
    " xmlns:n=\"clr-namespace:N;assembly=nosuchlib\"\n"
    " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"
    "  <x:Members><x:Property Name=\"R\" Type=\"OutArgument(x:Int32)\" /></x:Members>\n"
    "  <InvokeMethod TargetType=\"n:Any\" MethodName=\"FN\">\n"
    "    <InvokeMethod.Result><OutArgument x:TypeArguments=\"x:Int32\">[R]</OutArgument>"
    "</InvokeMethod.Result>\n"
    "    <InArgument x:TypeArguments=\"x:String\">[\"a\"]</InArgument>\n"
    "  </InvokeMethod>\n"
    "</Activity>\n";

typedef struct seen {
    char library[64], symbol[64];
    size_t params;
    const char *ret;
} seen;

/* Declares nosuchlib's `declared(String) -> Int32` only. */
static wf_status check(void *ud, const char *library, const char *symbol, const wf_native_sig *sig,
                       wf_error *err)
{
    seen *s = ud;
    snprintf(s->library, sizeof s->library, "%s", library);
    snprintf(s->symbol, sizeof s->symbol, "%s", symbol);
    s->params = sig->param_count;
    s->ret = sig->ret ? sig->ret->name : "void";
    if (strcmp(symbol, "declared") != 0)
        return wf_error_set(err, WF_E_NOSYM, NULL, "'%s' is not declared", symbol);
    return WF_OK;
}

static wf_status load(const char *fn, seen *s, const wf_libpath *lp, wfm_runtime **rt,
                      wfm_definition **def, wf_diags *diags, wf_error *err)
{
    char text[2048];
    const char *at = strstr(XAML, "FN");
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - XAML), XAML, fn, at + 2);
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    ro.check_native = check;
    ro.check_ud = s;
    ro.libpath = lp; /* never used to open anything */
    ck_assert_int_eq(wfm_runtime_create(&ro, rt, err), WF_OK);
    wf_status st = wfm_runtime_load_mem(*rt, "v.xaml", text, strlen(text), def, diags, err);
    wfm_runtime_destroy(st == WF_OK ? NULL : *rt);
    if (st != WF_OK)
        *rt = NULL;
    return st;
}

START_TEST(test_declared_call_loads_with_a_not_bound_warning_and_cannot_run)
{
    seen s = {0};
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wf_diags *diags = wf_diags_create();
    wf_error err = WF_ERROR_INIT;
    wf_libpath *lp = NULL;
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &lp, &err), WF_OK);
    ck_assert_msg(load("declared", &s, lp, &rt, &def, diags, &err) == WF_OK, "%s", err.message);
    ck_assert_str_eq(s.library, "nosuchlib");
    ck_assert_str_eq(s.symbol, "declared");
    ck_assert_uint_eq(s.params, 1);
    ck_assert_str_eq(s.ret, "Int32");
    ck_assert_uint_eq(wf_diags_count(diags), 1);
    const wf_diag *d = wf_diags_get(diags, 0);
    ck_assert_int_eq(d->severity, WF_SEV_WARNING);
    ck_assert_uint_eq(d->error.line, 5);
    ck_assert_ptr_nonnull(strstr(d->error.message, "not bound (validate-only)"));
    wfm_instance *inst = NULL;
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    wfm_instance_run(inst, &err);
    ck_assert_int_ne(wfm_instance_state_get(inst), WFM_INSTANCE_CLOSED);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wf_diags_destroy(diags);
    wf_libpath_destroy(lp);
}
END_TEST

START_TEST(test_undeclared_call_is_a_located_error)
{
    seen s = {0};
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_libpath *lp = NULL;
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &lp, &err), WF_OK);
    ck_assert_int_eq(load("missing", &s, lp, &rt, &def, NULL, &err), WF_E_NOSYM);
    wf_libpath_destroy(lp);
    ck_assert_ptr_null(def);
    ck_assert_uint_eq(err.line, 5);
    ck_assert_uint_eq(err.col, 3);
    ck_assert_ptr_nonnull(strstr(err.message, "'missing' is not declared"));
}
END_TEST

Suite *validate_only_suite(void)
{
    Suite *s = suite_create("validate_only");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_declared_call_loads_with_a_not_bound_warning_and_cannot_run);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_undeclared_call_is_a_located_error);
    suite_add_tcase(s, bad);
    return s;
}

/* test_native.c — library path lookup, library loading (refused names, missing and broken
 * files, shared handles) and libffi calls of every boundary type against libwfnative.so;
 * callee-allocated strings must be freed (the asan build proves it). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_native.h"
#include "../wf_test_util.h"

static wf_libpath *test_path(void)
{
    char dirs[1200];
    snprintf(dirs, sizeof dirs, "/nonexistent::%s", wf_test_lib_dir());
    wf_libpath *path = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(dirs, &path, &err), WF_OK);
    return path;
}

static wf_native_lib *open_lib(wf_libpath *path)
{
    wf_native_lib *lib = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wf_native_lib_open(path, "wfnative", &lib, &err) == WF_OK, "%s", err.message);
    return lib;
}

/* Prepares `symbol` with the given return and parameters and calls it once. */
static wf_status call(const char *symbol, const wf_type *ret_type, const wf_native_param *params,
                      size_t n, bool error_on_nonzero, const wf_value *args, wf_value *outs,
                      wf_value *ret, wf_error *err)
{
    wf_libpath *path = test_path();
    wf_native_lib *lib = open_lib(path);
    wf_native_sig sig = {ret_type, params, n, error_on_nonzero};
    wf_native_fn *fn = NULL;
    wf_status st = wf_native_fn_prepare(lib, symbol, &sig, &fn, err);
    if (st == WF_OK)
        st = wf_native_fn_call(fn, args, outs, ret, err);
    wf_native_fn_destroy(fn);
    wf_native_lib_close(lib);
    wf_libpath_destroy(path);
    return st;
}

START_TEST(test_libpath_split_and_find)
{
    wf_libpath *path = test_path();
    ck_assert_uint_eq(wf_libpath_count(path), 2);
    ck_assert_str_eq(wf_libpath_dir(path, 0), "/nonexistent");
    ck_assert_ptr_null(wf_libpath_dir(path, 2));
    char full[1024];
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_find(path, "libwfnative.so", full, sizeof full, &err), WF_OK);
    ck_assert_ptr_nonnull(strstr(full, "/libwfnative.so"));
    ck_assert_int_eq(wf_libpath_find(path, "absent.xml", full, sizeof full, &err), WF_E_NOTFOUND);
    ck_assert_ptr_nonnull(strstr(err.message, "absent.xml"));
    wf_libpath_destroy(path);
}
END_TEST

START_TEST(test_same_library_shares_handle)
{
    wf_libpath *path = test_path();
    wf_native_lib *a = open_lib(path);
    wf_native_lib *b = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_native_lib_open(path, "libwfnative.so", &b, &err), WF_OK);
    ck_assert_ptr_eq(a, b);
    ck_assert_ptr_nonnull(strstr(wf_native_lib_file(a), "libwfnative.so"));
    wf_native_lib_close(a);
    wf_native_lib_close(b);
    wf_native_lib_close(NULL);
    wf_libpath_destroy(path);
}
END_TEST

START_TEST(test_scalars_cross_the_boundary)
{
    wf_error err = WF_ERROR_INIT;
    wf_value ret;
    wf_native_param b = {&wf_type_bool, WF_NATIVE_IN};
    wf_value arg = wf_bool(true);
    ck_assert_int_eq(call("wfn_not", &wf_type_bool, &b, 1, false, &arg, NULL, &ret, &err), WF_OK);
    ck_assert(ret.type == &wf_type_bool && ret.u.b == false);
    wf_native_param two32[] = {{&wf_type_int32, WF_NATIVE_IN}, {&wf_type_int32, WF_NATIVE_IN}};
    wf_value a32[] = {wf_int32(-5), wf_int64(12)}; /* Int64 12 converts to Int32 */
    ck_assert_int_eq(call("wfn_add32", &wf_type_int32, two32, 2, false, a32, NULL, &ret, &err),
                     WF_OK);
    ck_assert_int_eq(ret.u.i32, 7);
    /* called without libffi (a Boolean or void result, Int32 or pointer parameters) */
    ck_assert_int_eq(call("wfn_below", &wf_type_bool, two32, 2, false, a32, NULL, &ret, &err),
                     WF_OK);
    ck_assert(ret.type == &wf_type_bool && ret.u.b == true);
    wf_native_param inout32 = {&wf_type_int32, WF_NATIVE_INOUT};
    wf_value bumped = wf_null(), start = wf_int32(41);
    ck_assert_int_eq(call("wfn_bump", NULL, &inout32, 1, false, &start, &bumped, &ret, &err),
                     WF_OK);
    ck_assert(bumped.type == &wf_type_int32 && bumped.u.i32 == 42 && wf_is_null(&ret));
    wf_native_param two64[] = {{&wf_type_int64, WF_NATIVE_IN}, {&wf_type_int64, WF_NATIVE_IN}};
    wf_value a64[] = {wf_int64(3000000000LL), wf_int32(3)};
    ck_assert_int_eq(call("wfn_mul64", &wf_type_int64, two64, 2, false, a64, NULL, &ret, &err),
                     WF_OK);
    ck_assert(ret.type == &wf_type_int64 && ret.u.i64 == 9000000000LL);
    wf_native_param d = {&wf_type_double, WF_NATIVE_IN};
    wf_value ad = wf_double(5.0);
    ck_assert_int_eq(call("wfn_half", &wf_type_double, &d, 1, false, &ad, NULL, &ret, &err), WF_OK);
    ck_assert(ret.u.d == 2.5);
    wf_native_param dec = {&wf_type_decimal, WF_NATIVE_IN};
    wf_value adec = wf_dec(wf_decimal_from_int64(125)); /* 12.5 */
    adec.u.dec.scale = 1;
    ck_assert_int_eq(
        call("wfn_decimal_double", &wf_type_decimal, &dec, 1, false, &adec, NULL, &ret, &err),
        WF_OK);
    char text[WF_DECIMAL_TEXT_MAX];
    wf_decimal_format(ret.u.dec, text, sizeof text);
    ck_assert(ret.type == &wf_type_decimal);
    ck_assert_str_eq(text, "25.0000"); /* CURRENCY units back from C: scale 4 */
    wf_native_param dt = {&wf_type_datetime, WF_NATIVE_IN};
    wf_value adt = wf_datetime_us(0);
    ck_assert_int_eq(call("wfn_next_day", &wf_type_datetime, &dt, 1, false, &adt, NULL, &ret, &err),
                     WF_OK);
    ck_assert(ret.type == &wf_type_datetime && ret.u.i64 == 86400000000LL);
}
END_TEST

START_TEST(test_every_parameter_type_in_one_call)
{
    wf_native_param p[] = {{&wf_type_bool, WF_NATIVE_IN},    {&wf_type_int32, WF_NATIVE_IN},
                           {&wf_type_int64, WF_NATIVE_IN},   {&wf_type_double, WF_NATIVE_IN},
                           {&wf_type_string, WF_NATIVE_IN},  {&wf_type_decimal, WF_NATIVE_IN},
                           {&wf_type_datetime, WF_NATIVE_IN}};
    wf_value args[7] = {wf_bool(true), wf_int32(-7), wf_int64(9000000000LL), wf_double(1.5)};
    ck_assert_int_eq(wf_value_cstring("caf\xC3\xA9", &args[4]), WF_OK);
    args[5] = wf_dec(wf_decimal_from_currency(125000));
    args[6] = wf_datetime_us(86400000000LL);
    wf_error err = WF_ERROR_INIT;
    wf_value ret;
    ck_assert_int_eq(call("wfn_mixed", &wf_type_int32, p, 7, false, args, NULL, &ret, &err), WF_OK);
    ck_assert_int_eq(ret.u.i32, 7);
    wf_value_release(&args[4]);
}
END_TEST

START_TEST(test_strings_in_out_and_returned)
{
    wf_error err = WF_ERROR_INIT;
    wf_value ret, outs[2];
    wf_native_param sp = {&wf_type_string, WF_NATIVE_IN};
    wf_value s;
    wf_value_cstring("abcd", &s);
    ck_assert_int_eq(call("wfn_strlen", &wf_type_int32, &sp, 1, false, &s, NULL, &ret, &err),
                     WF_OK);
    ck_assert_int_eq(ret.u.i32, 4);
    wf_value nul = wf_null(); /* a null string passes NULL */
    ck_assert_int_eq(call("wfn_strlen", &wf_type_int32, &sp, 1, false, &nul, NULL, &ret, &err),
                     WF_OK);
    ck_assert_int_eq(ret.u.i32, -1);
    wf_native_param greet[] = {{&wf_type_string, WF_NATIVE_IN}, {&wf_type_string, WF_NATIVE_OUT}};
    wf_value gargs[2] = {s, wf_null()};
    ck_assert_int_eq(call("wfn_greet", NULL, greet, 2, false, gargs, outs, &ret, &err), WF_OK);
    ck_assert(wf_is_null(&ret) && wf_is_null(&outs[0]));
    ck_assert_str_eq(wf_value_str(&outs[1]), "Hello, abcd");
    wf_value_release(&outs[1]);
    wf_native_param rep[] = {{&wf_type_string, WF_NATIVE_IN}, {&wf_type_int32, WF_NATIVE_IN}};
    wf_value rargs[2] = {s, wf_int32(3)};
    ck_assert_int_eq(call("wfn_repeat", &wf_type_string, rep, 2, false, rargs, NULL, &ret, &err),
                     WF_OK);
    ck_assert_str_eq(wf_value_str(&ret), "abcdabcdabcd");
    wf_value_release(&ret);
    wf_native_param up = {&wf_type_string, WF_NATIVE_INOUT};
    ck_assert_int_eq(call("wfn_upper", NULL, &up, 1, false, &s, outs, NULL, &err), WF_OK);
    ck_assert_str_eq(wf_value_str(&outs[0]), "ABCD");
    ck_assert_str_eq(wf_value_str(&s), "abcd"); /* the In value is untouched */
    wf_value_release(&outs[0]);
    wf_value_release(&s);
}
END_TEST

START_TEST(test_scalar_out_and_inout_slots)
{
    wf_native_param p[] = {{&wf_type_int32, WF_NATIVE_INOUT},
                           {&wf_type_int64, WF_NATIVE_OUT},
                           {&wf_type_double, WF_NATIVE_OUT},
                           {&wf_type_bool, WF_NATIVE_OUT}};
    wf_value args[4] = {wf_int32(41), wf_null(), wf_null(), wf_null()};
    wf_value outs[4];
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(call("wfn_counts", NULL, p, 4, false, args, outs, NULL, &err), WF_OK);
    ck_assert_int_eq(outs[0].u.i32, 42);
    ck_assert(outs[1].type == &wf_type_int64 && outs[1].u.i64 == 5000000000LL);
    ck_assert(outs[2].u.d == 0.25);
    ck_assert(outs[3].type == &wf_type_bool && outs[3].u.b);
}
END_TEST

/* The in-place call of a scalar function gives what wf_native_fn_call gives: Out and InOut
 * values, the result, null for the In side (libffi: wfn_counts; direct: wfn_below). */
START_TEST(test_scalar_call_in_place_matches_the_general_call)
{
    wf_libpath *path = test_path();
    wf_native_lib *lib = open_lib(path);
    wf_native_param p[] = {{&wf_type_int32, WF_NATIVE_INOUT},
                           {&wf_type_int64, WF_NATIVE_OUT},
                           {&wf_type_double, WF_NATIVE_OUT},
                           {&wf_type_bool, WF_NATIVE_OUT}};
    wf_native_sig sig = {NULL, p, 4, false};
    wf_native_fn *counts = NULL, *below = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_native_fn_prepare(lib, "wfn_counts", &sig, &counts, &err), WF_OK);
    ck_assert(wf_native_fn_is_scalar(counts));
    wf_value start = wf_int32(41), outs[4], ret;
    const wf_value *in[4] = {&start, NULL, NULL, NULL};
    wf_native_fn_call_scalar(counts, in, outs, &ret);
    ck_assert(wf_is_null(&ret));
    ck_assert(outs[0].type == &wf_type_int32 && outs[0].u.i32 == 42);
    ck_assert(outs[1].type == &wf_type_int64 && outs[1].u.i64 == 5000000000LL);
    ck_assert(outs[2].type == &wf_type_double && outs[2].u.d == 0.25);
    ck_assert(outs[3].type == &wf_type_bool && outs[3].u.b);
    ck_assert_int_eq(start.u.i32, 41); /* the In value is read, not written */
    wf_native_param two32[] = {{&wf_type_int32, WF_NATIVE_IN}, {&wf_type_int32, WF_NATIVE_IN}};
    wf_native_sig bsig = {&wf_type_bool, two32, 2, false};
    ck_assert_int_eq(wf_native_fn_prepare(lib, "wfn_below", &bsig, &below, &err), WF_OK);
    wf_value a = wf_int32(-5), b = wf_int32(12);
    const wf_value *args[2] = {&a, &b};
    wf_native_fn_call_scalar(below, args, outs, &ret);
    ck_assert(ret.type == &wf_type_bool && ret.u.b);
    ck_assert(wf_is_null(&outs[0]) && wf_is_null(&outs[1]));
    wf_native_fn_destroy(below);
    wf_native_fn_destroy(counts);
    wf_native_lib_close(lib);
    wf_libpath_destroy(path);
}
END_TEST

/* Strings, Decimals and ErrorOnNonZero keep the general call (conversion, ownership, fault). */
START_TEST(test_scalar_excludes_strings_decimals_and_status)
{
    wf_libpath *path = test_path();
    wf_native_lib *lib = open_lib(path);
    wf_native_param sp = {&wf_type_string, WF_NATIVE_IN};
    wf_native_param dec = {&wf_type_decimal, WF_NATIVE_IN};
    wf_native_param i32 = {&wf_type_int32, WF_NATIVE_IN};
    wf_native_sig sigs[] = {{&wf_type_int32, &sp, 1, false},
                            {&wf_type_decimal, &dec, 1, false},
                            {&wf_type_int32, &i32, 1, true}};
    const char *symbols[] = {"wfn_strlen", "wfn_decimal_double", "wfn_not"};
    for (size_t i = 0; i < 3; i++) {
        wf_native_fn *fn = NULL;
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(wf_native_fn_prepare(lib, symbols[i], &sigs[i], &fn, &err), WF_OK);
        ck_assert(!wf_native_fn_is_scalar(fn));
        wf_native_fn_destroy(fn);
    }
    wf_native_lib_close(lib);
    wf_libpath_destroy(path);
}
END_TEST

START_TEST(test_error_on_nonzero_still_fills_outputs)
{
    wf_native_param p[] = {{&wf_type_int32, WF_NATIVE_IN}, {&wf_type_string, WF_NATIVE_OUT}};
    wf_value args[2] = {wf_int32(3), wf_null()};
    wf_value outs[2], ret;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(call("wfn_status", &wf_type_int32, p, 2, true, args, outs, &ret, &err),
                     WF_E_NATIVE);
    ck_assert_str_eq(err.message, "native function 'wfn_status' returned 3");
    ck_assert_int_eq(ret.u.i32, 3);
    ck_assert_str_eq(wf_value_str(&outs[1]), "code 3");
    wf_value_release(&outs[1]);
    args[0] = wf_int32(0);
    wf_error_clear(&err);
    ck_assert_int_eq(call("wfn_status", &wf_type_int32, p, 2, true, args, NULL, NULL, &err),
                     WF_OK); /* outputs not wanted: the callee's string is still freed */
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------ */

START_TEST(test_missing_library)
{
    wf_libpath *path = test_path();
    wf_native_lib *lib = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_native_lib_open(path, "nosuchlib", &lib, &err), WF_E_NOLIB);
    ck_assert_ptr_null(lib);
    WF_ASSERT_ERROR(err, WF_E_NOLIB, 0, 0, "'nosuchlib' not found");
    ck_assert_ptr_nonnull(strstr(err.message, "/nonexistent"));
    wf_libpath_destroy(path);
}
END_TEST

START_TEST(test_library_name_with_slash_refused)
{
    wf_libpath *path = test_path();
    const char *names[] = {"../lib/wfnative", "/usr/lib/libc.so.6", "sub/wfnative", ".."};
    for (size_t i = 0; i < 4; i++) {
        wf_native_lib *lib = NULL;
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(wf_native_lib_open(path, names[i], &lib, &err), WF_E_NOLIB);
        ck_assert_ptr_null(lib);
        ck_assert_ptr_nonnull(strstr(err.message, names[i]));
        char out[64];
        wf_error_clear(&err);
        ck_assert_int_eq(wf_libpath_find(path, names[i], out, sizeof out, &err), WF_E_NOLIB);
        ck_assert_ptr_nonnull(strstr(err.message, "plain file name"));
    }
    wf_libpath_destroy(path);
}
END_TEST

START_TEST(test_broken_library_reports_dlerror)
{
    const char *dir = wf_test_tmpdir();
    char dir_copy[256];
    snprintf(dir_copy, sizeof dir_copy, "%s", dir);
    wf_test_write_file(dir_copy, "libbroken.so", "this is not an ELF file\n");
    wf_libpath *path = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(dir_copy, &path, &err), WF_OK);
    wf_native_lib *lib = NULL;
    ck_assert_int_eq(wf_native_lib_open(path, "broken", &lib, &err), WF_E_NOLIB);
    ck_assert_ptr_null(lib);
    ck_assert_ptr_nonnull(strstr(err.message, "cannot load native library"));
    ck_assert_ptr_nonnull(strstr(err.message, "libbroken.so"));
    wf_libpath_destroy(path);
    wf_test_tmpdir_remove(dir_copy);
}
END_TEST

START_TEST(test_missing_symbol)
{
    wf_libpath *path = test_path();
    wf_native_lib *lib = open_lib(path);
    wf_native_sig sig = {NULL, NULL, 0, false};
    wf_native_fn *fn = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_native_fn_prepare(lib, "wfn_absent", &sig, &fn, &err), WF_E_NOSYM);
    ck_assert_ptr_null(fn);
    ck_assert_ptr_nonnull(strstr(err.message, "wfn_absent"));
    ck_assert_ptr_nonnull(strstr(err.message, "libwfnative.so"));
    wf_native_lib_close(lib);
    wf_libpath_destroy(path);
}
END_TEST

START_TEST(test_bad_signatures_refused)
{
    wf_libpath *path = test_path();
    wf_native_lib *lib = open_lib(path);
    wf_native_fn *fn = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_native_param rec = {&wf_type_record, WF_NATIVE_IN};
    wf_native_sig sig = {NULL, &rec, 1, false};
    ck_assert_int_eq(wf_native_fn_prepare(lib, "wfn_not", &sig, &fn, &err), WF_E_TYPE);
    ck_assert_ptr_nonnull(strstr(err.message, "Record"));
    wf_native_sig eonz = {&wf_type_bool, NULL, 0, true};
    wf_error_clear(&err);
    ck_assert_int_eq(wf_native_fn_prepare(lib, "wfn_not", &eonz, &fn, &err), WF_E_TYPE);
    ck_assert_ptr_nonnull(strstr(err.message, "ErrorOnNonZero"));
    ck_assert_ptr_null(fn);
    wf_native_lib_close(lib);
    wf_libpath_destroy(path);
}
END_TEST

START_TEST(test_argument_out_of_range_refused_before_call)
{
    wf_native_param two32[] = {{&wf_type_int32, WF_NATIVE_IN}, {&wf_type_int32, WF_NATIVE_IN}};
    wf_value a32[] = {wf_int32(1), wf_int64(5000000000LL)};
    wf_value ret;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(call("wfn_add32", &wf_type_int32, two32, 2, false, a32, NULL, &ret, &err),
                     WF_E_RANGE);
    ck_assert_ptr_nonnull(strstr(err.message, "argument 2 of wfn_add32"));
    ck_assert_ptr_nonnull(strstr(err.message, "5000000000"));
    ck_assert(wf_is_null(&ret));
    /* a Decimal crosses as CURRENCY: beyond Int64 units it is refused, not wrapped */
    wf_native_param dec = {&wf_type_decimal, WF_NATIVE_IN};
    wf_decimal big;
    ck_assert_int_eq(wf_decimal_parse("922337203685477.58075", &big), WF_OK);
    wf_value adec = wf_dec(big);
    wf_error_clear(&err);
    ck_assert_int_eq(
        call("wfn_decimal_double", &wf_type_decimal, &dec, 1, false, &adec, NULL, &ret, &err),
        WF_E_RANGE);
    ck_assert_ptr_nonnull(strstr(err.message, "argument 1 of wfn_decimal_double"));
    ck_assert_ptr_nonnull(strstr(err.message, "922337203685477.58075"));
    ck_assert(wf_is_null(&ret));
}
END_TEST

/* Into C a Decimal is rounded half to even to 4 places (Decimal.ToOACurrency); what comes
 * back is CURRENCY units, scale 4. */
START_TEST(test_decimal_rounds_into_currency)
{
    wf_native_param dec = {&wf_type_decimal, WF_NATIVE_IN};
    static const char *const cases[][2] = {
        {"1.23445", "2.4688"}, {"1.23455", "2.4692"}, {"-0.00005", "0.0000"}, {"12.5", "25.0000"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wf_decimal d;
        ck_assert_int_eq(wf_decimal_parse(cases[i][0], &d), WF_OK);
        wf_value arg = wf_dec(d), ret;
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(
            call("wfn_decimal_double", &wf_type_decimal, &dec, 1, false, &arg, NULL, &ret, &err),
            WF_OK);
        char text[WF_DECIMAL_TEXT_MAX];
        wf_decimal_format(ret.u.dec, text, sizeof text);
        ck_assert_msg(strcmp(text, cases[i][1]) == 0, "%s doubled in C: %s, want %s",
                      cases[i][0], text, cases[i][1]);
    }
}
END_TEST

Suite *common_native_suite(void)
{
    Suite *s = suite_create("common_native");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_libpath_split_and_find);
    tcase_add_test(core, test_same_library_shares_handle);
    tcase_add_test(core, test_scalars_cross_the_boundary);
    tcase_add_test(core, test_every_parameter_type_in_one_call);
    tcase_add_test(core, test_strings_in_out_and_returned);
    tcase_add_test(core, test_scalar_out_and_inout_slots);
    tcase_add_test(core, test_scalar_call_in_place_matches_the_general_call);
    tcase_add_test(core, test_scalar_excludes_strings_decimals_and_status);
    tcase_add_test(core, test_error_on_nonzero_still_fills_outputs);
    tcase_add_test(core, test_decimal_rounds_into_currency);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_missing_library);
    tcase_add_test(bad, test_library_name_with_slash_refused);
    tcase_add_test(bad, test_broken_library_reports_dlerror);
    tcase_add_test(bad, test_missing_symbol);
    tcase_add_test(bad, test_bad_signatures_refused);
    tcase_add_test(bad, test_argument_out_of_range_refused_before_call);
    suite_add_tcase(s, bad);
    return s;
}

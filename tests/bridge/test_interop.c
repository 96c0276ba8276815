/* test_interop.c — the Interop activity (bridge/wfb_interop*.c), load and leaf execution:
 * WF4's argument mapping (P / POut, PIn on a clash, Return as POut only, the Name metadata
 * literal), every mapped value type in and out through the legacy executor and libffi, fresh
 * legacy state per execution, native calls in the modern trace, legacy faults as catchable
 * exceptions, every bad attribute reported with its location, and out of memory while
 * loading. Native side: tests/bridge/libs/interoptest/. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../bridge/wfb_interop.h"
#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_runtime.h"
#include "../../modern/wfm_track.h"
#include "support_interop.h"
#include "../wf_test_util.h"

#define DATA "tests/bridge/data/interop/"

static void start(wfm_test_run *r)
{
    wfb_test_open(r, wf_test_lib_dir(), NULL);
}

static void open_file(wfm_test_run *r, const char *file)
{
    wfb_test_open(r, wf_test_lib_dir(), file);
}

static const wf_value *out(wfm_test_run *r, const char *name)
{
    const wf_value *v = wfm_instance_output(r->inst, name);
    ck_assert_msg(v != NULL, "no output %s", name);
    return v;
}

static void input_str(wfm_test_run *r, const char *name, const char *s)
{
    wf_value v;
    ck_assert_int_eq(wf_value_cstring(s, &v), WF_OK);
    wfm_test_input(r, name, v);
}

/* ---- core ------------------------------------------------------------------------------- */
/* A Decimal output in the C boundary's 1/10,000 units (exact for these values). */
static int64_t dec_units(const wf_value *v)
{
    int64_t units = 0;
    ck_assert_int_eq(wf_decimal_to_currency(v->u.dec, &units), WF_OK);
    return units;
}

START_TEST(test_in_out_and_return_arguments)
{
    wfm_test_run r;
    open_file(&r, DATA "reserve.xaml");
    input_str(&r, "Sku", "A7");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(wf_value_str(out(&r, "Ticket")), "T-A7-3");
    ck_assert_int_eq(out(&r, "Status")->u.i32, 0);
    ck_assert_str_eq(r.out.data, "T-A7-3\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_every_value_type_in_and_out)
{
    wfm_test_run r;
    open_file(&r, DATA "types.xaml");
    wfm_test_input(&r, "B", wf_bool(true));
    wfm_test_input(&r, "I", wf_int32(41));
    wfm_test_input(&r, "L", wf_int64(INT64_C(4500000000)));
    wfm_test_input(&r, "D", wf_double(5.0));
    wfm_test_input(&r, "M", wf_dec(wf_decimal_from_currency(25000))); /* 2.5 */
    int64_t when;
    ck_assert_int_eq(wf_datetime_parse("2024-01-31T00:00:00Z", &when), WF_OK);
    wfm_test_input(&r, "T", wf_datetime_us(when));
    input_str(&r, "S", "hi");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert(out(&r, "B")->u.b == false);
    ck_assert_int_eq(out(&r, "I")->u.i32, 42);
    ck_assert(out(&r, "L")->u.i64 == INT64_C(9000000000));
    ck_assert(out(&r, "D")->u.d == 2.5);
    ck_assert_ptr_eq(out(&r, "M")->type, &wf_type_decimal);
    ck_assert(dec_units(out(&r, "M")) == 37500); /* 2.5 + 1.25, exact */
    ck_assert_ptr_eq(out(&r, "T")->type, &wf_type_datetime);
    ck_assert(out(&r, "T")->u.i64 == when + INT64_C(86400000000));
    ck_assert_str_eq(wf_value_str(out(&r, "S")), "hi!");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_literals_clash_and_metadata_name)
{
    wfm_test_run r;
    open_file(&r, DATA "literals.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert(dec_units(out(&r, "M")) == 117500); /* literal 10.5 as Decimal, + 1.25 */
    int64_t want;
    ck_assert_int_eq(wf_datetime_parse("2024-02-29T12:00:00Z", &want), WF_OK);
    ck_assert(out(&r, "T")->u.i64 == want);
    ck_assert_str_eq(wf_value_str(out(&r, "S")), "abc!");
    ck_assert_int_eq(out(&r, "R")->u.i32, 70); /* Value/ValueOut clash: ValueIn, ValueOutOut */
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_fresh_legacy_state_per_execution)
{
    wfm_test_run r;
    open_file(&r, DATA "fresh.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(out(&r, "Total")->u.i32, 4); /* each of 4 runs counts 0 -> 1 */
    wfm_test_close(&r);
}
END_TEST

typedef struct trace_log {
    char text[512];
} trace_log;

static void on_trace(void *ud, const char *function, const wf_value *in, size_t in_count,
                     const wf_value *outs, size_t out_count)
{
    trace_log *log = ud;
    size_t len = strlen(log->text);
    snprintf(log->text + len, sizeof log->text - len, "%s(%zu:%s)->%zu:%s;", function, in_count,
             in_count ? wf_value_str(&in[0]) : "", out_count,
             out_count ? wf_value_str(&outs[0]) : "");
}

START_TEST(test_native_calls_appear_in_the_modern_trace)
{
    wfm_test_run r;
    open_file(&r, DATA "reserve.xaml");
    trace_log log = {{0}};
    wfm_instance_set_trace(r.inst, on_trace, &log);
    input_str(&r, "Sku", "Z1");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    /* as run-legacy --trace: In Sku, Quantity; Out Ticket, then the return value */
    ck_assert_str_eq(log.text, "iot_reserve_stock(2:Z1)->2:T-Z1-3;");
    wfm_test_close(&r);
}
END_TEST

/* Legacy status changes are custom tracking records named after the Interop, carrying the
 * legacy activity's name (the Name metadata literal), type, status and result. */
START_TEST(test_legacy_status_changes_are_custom_records)
{
    wf_error err = WF_ERROR_INIT;
    wfm_tracker *tracker = NULL;
    ck_assert_int_eq(wfm_tracker_create(wfm_profile_builtin("all"), &tracker, &err), WF_OK);
    ck_assert_int_eq(wfm_tracker_add_ring(tracker, 64, &err), WF_OK);
    wf_libpath *path = NULL;
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &path, &err), WF_OK);
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.libpath = path;
    o.tracker = tracker;
    o.write = wfm_test_discard;
    wfm_runtime *rt = NULL;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    ck_assert_int_eq(wfb_interop_register(wfm_runtime_catalogue(rt), &err), WF_OK);
    wfm_definition *def = NULL;
    wfm_instance *inst = NULL;
    ck_assert_int_eq(wfm_runtime_load(rt, DATA "reserve.xaml", &def, NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_CLOSED);
    wfm_tracker_flush(tracker);
    const char *want[] = {"\"Status\": \"Executing\", \"Result\": \"None\"",
                          "\"Status\": \"Closed\", \"Result\": \"Succeeded\""};
    size_t found = 0;
    char line[1024];
    for (size_t i = 0; i < wfm_tracker_ring_count(tracker); i++) {
        ck_assert(wfm_tracker_ring_get(tracker, i, line, sizeof line));
        if (!strstr(line, "\"CustomTracking\""))
            continue;
        ck_assert_ptr_nonnull(strstr(line, "\"name\": \"Interop\""));
        ck_assert_ptr_nonnull(strstr(line, "\"Activity\": \"reserve1\", \"Type\": \"ReserveStock\""));
        ck_assert_uint_lt(found, 2);
        ck_assert_ptr_nonnull(strstr(line, want[found]));
        found++;
    }
    ck_assert_uint_eq(found, 2);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wfm_tracker_destroy(tracker);
    wf_libpath_destroy(path);
}
END_TEST

START_TEST(test_legacy_fault_caught_by_try_catch)
{
    wfm_test_run r;
    open_file(&r, DATA "fault.xaml");
    wfm_test_input(&r, "Code", wf_int32(3));
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(wf_value_str(out(&r, "Caught")), "native function 'iot_check' returned 3");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_uncaught_legacy_fault_faults_the_instance)
{
    wfm_test_run r;
    start(&r);
    wfm_test_load_mem(&r, "uncaught.xaml",
                      "<Activity x:Class=\"T.U\" "
                      "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "
                      "xmlns:t=\"clr-namespace:T;Assembly=interoptest\" "
                      "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"
                      "<Interop ActivityType=\"t:Check\" Code=\"4\"/></Activity>");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    const wf_value *exc = wfm_instance_fault(r.inst);
    ck_assert_str_eq(exc->type->name, "NativeException");
    ck_assert_str_eq(wf_value_exc_message(exc), "native function 'iot_check' returned 4");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_zero_status_closes)
{
    wfm_test_run r;
    open_file(&r, DATA "fault.xaml");
    wfm_test_input(&r, "Code", wf_int32(0));
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert(wf_is_null(out(&r, "Caught")));
    wfm_test_close(&r);
}
END_TEST

/* ---- bad input -------------------------------------------------------------------------- */
typedef struct want_diag {
    wf_status code;
    unsigned line, col;
    const char *needle;
} want_diag;

/* Loading `file` fails; the diagnostics are exactly `want` (in source order). */
static void expect_diags(const char *file, const want_diag *want, size_t count)
{
    wfm_test_run r;
    start(&r);
    wf_diags *d = wf_diags_create();
    ck_assert_ptr_nonnull(d);
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = (wfm_definition *)&def;
    ck_assert_int_ne(wfm_runtime_load(r.rt, file, &def, d, &err), WF_OK);
    ck_assert_ptr_null(def);
    wf_diags_sort(d);
    ck_assert_uint_eq(wf_diags_error_count(d), count);
    for (size_t i = 0; i < count; i++) {
        const wf_diag *g = wf_diags_get(d, i);
        WF_ASSERT_ERROR(g->error, want[i].code, want[i].line, want[i].col, want[i].needle);
        ck_assert_ptr_nonnull(strstr(g->error.file, file));
    }
    wf_diags_destroy(d);
    wfm_test_close(&r);
}

START_TEST(test_every_bad_attribute_is_reported)
{
    static const want_diag want[] = {
        {WF_E_TYPE, 9, 63, "cannot convert 'three'"},
        {WF_E_SCHEMA, 10, 22, "unknown property 'Colour' of legacy type ReserveStock"},
        {WF_E_SCHEMA, 10, 38, "requires a location"},
        {WF_E_NAME, 11, 5, "declares no activity type 'NoSuchType'"},
        {WF_E_TYPE, 12, 47, "cannot be bound to a location of type String"},
    };
    expect_diags(DATA "bad_args.xaml", want, sizeof want / sizeof want[0]);
}
END_TEST

START_TEST(test_clash_renames_in_arguments)
{
    /* With a clash the In argument is ValueIn: "Value" names nothing. */
    static const want_diag want[] = {
        {WF_E_SCHEMA, 6, 44, "unknown property 'Value' of legacy type Clash"},
    };
    expect_diags(DATA "bad_clash.xaml", want, 1);
}
END_TEST

START_TEST(test_return_property_has_no_in_argument)
{
    static const want_diag want[] = {
        {WF_E_SCHEMA, 6, 60, "unknown property 'Status' of legacy type ReserveStock"},
    };
    expect_diags(DATA "bad_return.xaml", want, 1);
}
END_TEST

START_TEST(test_activity_type_needs_a_type_library_prefix)
{
    static const want_diag want[] = {
        {WF_E_SCHEMA, 6, 3, "does not map clr-namespace"},
        {WF_E_SCHEMA, 7, 3, "needs a prefix"},
        {WF_E_NOLIB, 8, 3, "type library for assembly 'nosuchlib'"},
        {WF_E_SCHEMA, 9, 3, "Name 'a b' is not a legacy activity name"},
    };
    expect_diags(DATA "bad_type.xaml", want, sizeof want / sizeof want[0]);
}
END_TEST

START_TEST(test_no_library_path)
{
    wfm_test_run r;
    wfm_test_runtime(&r);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfb_interop_register(wfm_runtime_catalogue(r.rt), &err), WF_OK);
    wfm_definition *def = NULL;
    ck_assert_int_ne(wfm_runtime_load(r.rt, DATA "reserve.xaml", &def, NULL, &err), WF_OK);
    WF_ASSERT_ERROR(err, WF_E_NOLIB, 11, 5, "no library path");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_register_twice_is_refused)
{
    wfm_test_run r;
    start(&r);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfb_interop_register(wfm_runtime_catalogue(r.rt), &err), WF_E_STATE);
    wfm_test_close(&r);
}
END_TEST

/* ---- limits ----------------------------------------------------------------------------- */
START_TEST(test_overlong_names_are_refused)
{
    char xaml[2048], name[900];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    snprintf(xaml, sizeof xaml,
             "<Activity x:Class=\"T.U\" "
             "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "
             "xmlns:t=\"clr-namespace:T;Assembly=interoptest\" "
             "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"
             "<Interop ActivityType=\"t:Counter\" Name=\"%s\"/></Activity>",
             name);
    wfm_test_run r;
    start(&r);
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = NULL;
    ck_assert_int_ne(wfm_runtime_load_mem(r.rt, "long.xaml", xaml, strlen(xaml), &def, NULL, &err),
                     WF_OK);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 2, 1, "too long");
    wfm_test_close(&r);
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------ */
START_TEST(test_nomem_while_loading)
{
    wfm_test_run r;
    start(&r);
    wfb_test_load_nomem(r.rt, DATA "literals.xaml");
    wfm_test_close(&r);
}
END_TEST

Suite *interop_suite(void)
{
    Suite *s = suite_create("interop");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_in_out_and_return_arguments);
    tcase_add_test(core, test_every_value_type_in_and_out);
    tcase_add_test(core, test_literals_clash_and_metadata_name);
    tcase_add_test(core, test_fresh_legacy_state_per_execution);
    tcase_add_test(core, test_native_calls_appear_in_the_modern_trace);
    tcase_add_test(core, test_legacy_status_changes_are_custom_records);
    tcase_add_test(core, test_legacy_fault_caught_by_try_catch);
    tcase_add_test(core, test_uncaught_legacy_fault_faults_the_instance);
    tcase_add_test(core, test_zero_status_closes);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_every_bad_attribute_is_reported);
    tcase_add_test(bad, test_clash_renames_in_arguments);
    tcase_add_test(bad, test_return_property_has_no_in_argument);
    tcase_add_test(bad, test_activity_type_needs_a_type_library_prefix);
    tcase_add_test(bad, test_no_library_path);
    tcase_add_test(bad, test_register_twice_is_refused);
    suite_add_tcase(s, bad);
    TCase *lim = tcase_create("limits");
    tcase_add_test(lim, test_overlong_names_are_refused);
    suite_add_tcase(s, lim);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 120);
    tcase_add_test(nomem, test_nomem_while_loading);
    suite_add_tcase(s, nomem);
    return s;
}

/* test_runtime.c — the modern host API (modern/wfm_runtime.c): loading through the
 * definition cache, inputs and outputs, bookmark listing and resumption, state errors, bad
 * inputs (unknown argument, wrong type, unknown bookmark, endless input files), the
 * work-item limit (max_steps, `run --max-steps`) and out-of-memory behaviour. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_modern.h"

#define SCHED_DIR "tests/modern/data/sched/"
#define HEAD                                                                                       \
    "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "   \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"
#define SMALL                                                                                      \
    HEAD                                                                                           \
        "<x:Members><x:Property Name=\"N\" Type=\"InArgument(x:Int32)\"/>"                         \
        "<x:Property Name=\"R\" Type=\"OutArgument(x:Int32)\"/></x:Members>"                       \
        "<Sequence><WaitForEvent x:TypeArguments=\"x:Int32\" BookmarkName=\"go\" Result=\"[R]\"/>" \
        "<Assign x:TypeArguments=\"x:Int32\" To=\"[R]\" Value=\"[R + N]\"/></Sequence></Activity>"

static wfm_runtime *make_rt(void)
{
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.write = wfm_test_discard;
    wfm_runtime *rt = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    return rt;
}

static wfm_definition *load_small(wfm_runtime *rt)
{
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_runtime_load_mem(rt, "small.xaml", SMALL, strlen(SMALL), &def, NULL, &err) ==
                      WF_OK,
                  "%s", err.message);
    return def;
}

/* ---- core ----------------------------------------------------------------------------------- */

START_TEST(test_same_file_loaded_twice_is_the_same_definition)
{
    wfm_runtime *rt = make_rt();
    wfm_definition *a = NULL, *b = NULL, *c = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_load(rt, SCHED_DIR "pool_sum.xaml", &a, NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_runtime_load(rt, SCHED_DIR "pool_sum.xaml", &b, NULL, &err), WF_OK);
    ck_assert_ptr_eq(a, b);
    /* Different bytes under another name: a different definition. */
    c = load_small(rt);
    ck_assert_ptr_ne(a, c);
    wfm_stats s;
    wfm_runtime_stats(rt, &s);
    ck_assert_uint_eq(s.definitions_loaded, 2);
    ck_assert_uint_eq(s.definition_cache_hits, 1);
    wfm_definition_release(a);
    wfm_definition_release(b);
    wfm_definition_release(c);
    wfm_runtime_destroy(rt);
}
END_TEST

/* The cache key is the text's hash, which the load then takes as the definition's identity
 * instead of hashing the text again: the identity is still the hash of the bytes alone. */
START_TEST(test_cached_load_keeps_the_text_hash_as_identity)
{
    wfm_runtime *rt = make_rt();
    wfm_definition *a = load_small(rt), *b = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_load_mem(rt, "other.xaml", SMALL, strlen(SMALL), &b, NULL, &err),
                     WF_OK);
    ck_assert_ptr_ne(a, b); /* the key holds the name too */
    ck_assert(wfm_definition_hash(a) == wf_hash_bytes(SMALL, strlen(SMALL)));
    ck_assert(wfm_definition_hash(b) == wfm_definition_hash(a));
    ck_assert(memcmp(wfm_definition_sha256(a), wfm_definition_sha256(b), 32) == 0);
    wfm_definition_release(a);
    wfm_definition_release(b);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(test_inputs_outputs_and_bookmarks_round_trip)
{
    wfm_runtime *rt = make_rt();
    wfm_definition *def = load_small(rt);
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_CREATED);
    wf_value n = wf_int64(5); /* converted to the argument's Int32 */
    ck_assert_int_eq(wfm_instance_set_input(inst, "N", &n, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_IDLE);
    ck_assert_uint_eq(wfm_instance_bookmark_count(inst), 1);
    ck_assert_str_eq(wfm_instance_bookmark_name(inst, 0), "go");
    ck_assert_ptr_null(wfm_instance_bookmark_name(inst, 1));
    wf_value v = wf_int32(10);
    ck_assert_int_eq(wfm_instance_resume(inst, "go", &v, &err), WF_OK);
    /* Resumed once: the bookmark is gone before the instance even runs again. */
    ck_assert_int_eq(wfm_instance_resume(inst, "go", &v, &err), WF_E_NOTFOUND);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    ck_assert_str_eq(wfm_instance_state_name(wfm_instance_state_get(inst)), "Closed");
    ck_assert_uint_eq(wfm_instance_output_count(inst), 1);
    ck_assert_str_eq(wfm_instance_output_name(inst, 0), "R");
    ck_assert_int_eq(wfm_instance_output(inst, "R")->u.i32, 15);
    ck_assert(wf_is_null(wfm_instance_fault(inst)));
    wfm_stats s;
    wfm_runtime_stats(rt, &s);
    ck_assert_uint_eq(s.instances_created, 1);
    ck_assert_uint_eq(s.instances_completed, 1);
    ck_assert_uint_eq(s.activities_executed, 3); /* Sequence, WaitForEvent, Assign */
    ck_assert_uint_eq(s.bookmarks_resumed, 1);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(test_instances_of_one_definition_are_independent)
{
    wfm_runtime *rt = make_rt();
    wfm_definition *def = load_small(rt);
    wfm_instance *a = NULL, *b = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_create(rt, def, &a, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_create(rt, def, &b, &err), WF_OK);
    wf_value one = wf_int32(1), two = wf_int32(2);
    wfm_instance_set_input(a, "N", &one, &err);
    wfm_instance_set_input(b, "N", &two, &err);
    wfm_instance_run(a, &err);
    wfm_instance_run(b, &err);
    wfm_instance_resume(b, "go", &two, &err);
    wfm_instance_run(b, &err);
    ck_assert_int_eq(wfm_instance_state_get(a), WFM_INSTANCE_IDLE);
    ck_assert_int_eq(wfm_instance_state_get(b), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(wfm_instance_output(b, "R")->u.i32, 4);
    wfm_instance_destroy(a); /* destroying an idle instance is fine */
    wfm_instance_destroy(b);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

/* ---- the samples (samples/modern/, also run by `make demo`) ------------------------------ */

typedef wfm_test_run sample_run;

/* Load a sample and set its inputs from "NAME=VALUE" texts, read as the declared types. */
static void sample_open(sample_run *r, const char *file, const char *const *args)
{
    wfm_test_cfg cfg = {.lib_dir = wf_test_sample_lib_dir()};
    wfm_test_start(r, &cfg);
    char path[256];
    snprintf(path, sizeof path, "samples/modern/%s", file);
    wfm_test_load_file(r, path);
    wf_error err = WF_ERROR_INIT;
    for (size_t i = 0; args[i]; i++) {
        const char *eq = strchr(args[i], '=');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - args[i]), args[i]);
        size_t index;
        ck_assert(wfm_definition_arg_find(r->def, name, &index));
        wf_value v;
        ck_assert_int_eq(wf_value_parse(wfm_runtime_types(r->rt),
                                        wfm_definition_arg_type(r->def, index), eq + 1, &v, &err),
                         WF_OK);
        wfm_test_input(r, name, v);
    }
}

static void sample_expect(const char *file, const char *const *args, wfm_instance_state state,
                          const char *text)
{
    sample_run r;
    sample_open(&r, file, args);
    ck_assert_str_eq(wfm_instance_state_name(wfm_test_go(&r)), wfm_instance_state_name(state));
    ck_assert_str_eq(r.out.data, text);
    wfm_test_close(&r);
}

START_TEST(test_samples_run_as_documented)
{
    const char *hello[] = {"Name=World", "Times=2", NULL};
    sample_expect("hello.xaml", hello, WFM_INSTANCE_CLOSED, "Hello, World!\nHello, World!\n");
    const char *total[] = {"Prices=[3, 4, 5]", "Rounds=2", NULL};
    sample_expect("running_total.xaml", total, WFM_INSTANCE_CLOSED,
                  "round 1: subtotal 12, running total 12\n"
                  "round 2: subtotal 24, running total 36\n");
    const char *scores[] = {"Scores=[72, 35]", NULL};
    sample_expect("flowchart.xaml", scores, WFM_INSTANCE_CLOSED,
                  "score 72: pass\nscore 35: fail\n");
    const char *trip[] = {"Budget=500", "HotelPrice=400", "FlightPrice=350.25", NULL};
    sample_expect("compensation.xaml", trip, WFM_INSTANCE_FAULTED,
                  "hotel booked for 400\nflight booked for 350.25\n"
                  "flight booking cancelled\nhotel booking cancelled\n");
    /* Decimal outputs keep the scale of the calculation: 0 + 120.50 + 99.5 is 220.00 */
    const char *booked[] = {"Budget=1000", "HotelPrice=120.50", "FlightPrice=99.5", NULL};
    sample_run b;
    sample_open(&b, "compensation.xaml", booked);
    ck_assert_int_eq(wfm_test_go(&b), WFM_INSTANCE_CLOSED);
    wf_buf json;
    wf_buf_init(&json);
    ck_assert(wf_value_to_json(wfm_instance_output(b.inst, "Spent"), &json));
    wf_buf_addc(&json, '\0');
    ck_assert_str_eq(json.data, "\"220.00\"");
    wf_buf_fini(&json);
    wfm_test_close(&b);
    const char *math[] = {"A=1984", "B=48", NULL};
    sample_expect("invoke_native.xaml", math, WFM_INSTANCE_CLOSED,
                  "1984 / 48 = 41 remainder 16\n"
                  "gcd 16, hypotenuse 1984.5805602192117, 1984 in Roman numerals is MCMLXXXIV\n");
}
END_TEST

START_TEST(test_state_machine_sample_goes_idle_then_resumes)
{
    const char *order[] = {"OrderId=A-17", "Amount=120.50", NULL};
    sample_run r;
    sample_open(&r, "order_state_machine.xaml", order);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_uint_eq(wfm_instance_bookmark_count(r.inst), 2);
    ck_assert_str_eq(wf_value_str(wfm_instance_output(r.inst, "Status")), "Placed");
    wf_error err = WF_ERROR_INIT;
    wf_value paid = wf_dec(wf_decimal_from_currency(1205000)), tracking;
    ck_assert_int_eq(wfm_instance_resume(r.inst, "pay", &paid, &err), WF_OK);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(wfm_instance_bookmark_name(r.inst, 0), "ship");
    ck_assert_int_eq(wf_value_cstring("TRK-9", &tracking), WF_OK);
    ck_assert_int_eq(wfm_instance_resume(r.inst, "ship", &tracking, &err), WF_OK);
    wf_value_release(&tracking);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(wf_value_str(wfm_instance_output(r.inst, "Status")), "Shipped");
    ck_assert_str_eq(wf_value_str(wfm_instance_output(r.inst, "Tracking")), "TRK-9");
    wfm_test_close(&r);
}
END_TEST

static void trace_names(void *ud, const char *function, const wf_value *in, size_t in_count,
                        const wf_value *out, size_t out_count)
{
    (void)in;
    (void)out;
    wf_buf_addf(ud, "%s/%zu/%zu ", function, in_count, out_count);
}

START_TEST(test_native_calls_reach_the_trace_callback)
{
    const char *math[] = {"A=12", "B=5", NULL};
    sample_run r;
    sample_open(&r, "invoke_native.xaml", math);
    wf_buf trace;
    wf_buf_init(&trace);
    wfm_instance_set_trace(r.inst, trace_names, &trace);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_ptr_nonnull(strstr(trace.data, "mathlib_gcd/"));
    const char *gcd = strstr(trace.data, "mathlib_gcd"),
               *roman = strstr(trace.data, "mathlib_roman");
    ck_assert_ptr_nonnull(roman);
    ck_assert(gcd < roman); /* in execution order */
    ck_assert_ptr_nonnull(strstr(trace.data, "mathlib_divmod/"));
    wf_buf_fini(&trace);
    wfm_test_close(&r);
}
END_TEST

/* ---- bad input ---------------------------------------------------------------------------- */

START_TEST(test_unknown_argument_name_is_refused)
{
    wfm_runtime *rt = make_rt();
    wfm_definition *def = load_small(rt);
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    wf_value v = wf_int32(1);
    ck_assert_int_eq(wfm_instance_set_input(inst, "Nope", &v, &err), WF_E_NAME);
    ck_assert_ptr_nonnull(strstr(err.message, "Nope"));
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_instance_set_input(inst, "R", &v, &err), WF_E_NAME);
    ck_assert_ptr_nonnull(strstr(err.message, "Out argument"));
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(test_wrong_input_type_is_refused)
{
    wfm_runtime *rt = make_rt();
    wfm_definition *def = load_small(rt);
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    wf_value v;
    ck_assert_int_eq(wf_value_cstring("twelve", &v), WF_OK);
    ck_assert_int_eq(wfm_instance_set_input(inst, "N", &v, &err), WF_E_TYPE);
    ck_assert_ptr_nonnull(strstr(err.message, "'N'"));
    wf_value_release(&v);
    wf_error_clear(&err);
    wf_value big = wf_int64(1LL << 40);
    ck_assert_int_eq(wfm_instance_set_input(inst, "N", &big, &err), WF_E_TYPE);
    /* The instance still runs with the default. */
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    wf_error_clear(&err);
    wf_value one = wf_int32(1);
    ck_assert_int_eq(wfm_instance_set_input(inst, "N", &one, &err), WF_E_STATE);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(test_resume_unknown_bookmark_is_not_found)
{
    wfm_runtime *rt = make_rt();
    wfm_definition *def = load_small(rt);
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_resume(inst, "go", NULL, &err), WF_E_STATE); /* not started */
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_resume(inst, "stop", NULL, &err), WF_E_NOTFOUND);
    ck_assert_ptr_nonnull(strstr(err.message, "stop"));
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_IDLE);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(test_completed_instance_refuses_run_and_cancel)
{
    const char *xaml = HEAD "<Sequence/></Activity>";
    wfm_runtime *rt = make_rt();
    wfm_definition *def = NULL;
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_load_mem(rt, "e.xaml", xaml, strlen(xaml), &def, NULL, &err),
                     WF_OK);
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_E_STATE);
    wf_error_clear(&err);
    ck_assert_int_eq(wfm_instance_cancel(inst, &err), WF_E_STATE);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(test_load_errors_reach_diagnostics_and_nothing_escapes)
{
    const char *xaml = HEAD "\n<Sequence>\n  <NoSuchActivity/>\n</Sequence></Activity>";
    wfm_runtime *rt = make_rt();
    wfm_definition *def = (wfm_definition *)&def;
    wf_diags *diags = wf_diags_create();
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_ne(wfm_runtime_load_mem(rt, "bad.xaml", xaml, strlen(xaml), &def, diags, &err),
                     WF_OK);
    ck_assert_ptr_null(def);
    ck_assert_uint_ge(wf_diags_error_count(diags), 1);
    ck_assert_uint_eq(err.line, 3);
    ck_assert_uint_eq(err.col, 3);
    ck_assert_ptr_nonnull(strstr(err.message, "NoSuchActivity"));
    wf_error_clear(&err);
    def = (wfm_definition *)&def;
    ck_assert_int_eq(wfm_runtime_load(rt, SCHED_DIR "no_such_file.xaml", &def, NULL, &err),
                     WF_E_IO);
    ck_assert_ptr_null(def);
    ck_assert_str_eq(err.file, SCHED_DIR "no_such_file.xaml");
    wf_diags_destroy(diags);
    wfm_runtime_destroy(rt);
}
END_TEST

/* A device or FIFO that never ends stops at the size limit: WF_E_LIMIT
 * naming the file, in the diagnostics too, no definition. */
static void expect_load_capped(const char *path)
{
    wfm_runtime *rt = make_rt();
    wf_diags *diags = wf_diags_create();
    ck_assert_ptr_nonnull(diags);
    wfm_definition *def = (wfm_definition *)&def;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_load(rt, path, &def, diags, &err), WF_E_LIMIT);
    ck_assert_ptr_null(def);
    ck_assert_str_eq(err.file, path);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 0, 0, "larger than 67108864 bytes");
    ck_assert_uint_eq(wf_diags_error_count(diags), 1);
    wf_diags_destroy(diags);
    wfm_runtime_destroy(rt);
}

START_TEST(test_load_of_dev_zero_stops_at_the_size_limit)
{
    expect_load_capped("/dev/zero");
}
END_TEST

START_TEST(test_load_of_endless_fifo_stops_at_the_size_limit)
{
    const char *dir = wf_test_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/endless.xaml", dir);
    int writer = wf_test_fifo_writer(path);
    expect_load_capped(path);
    wf_test_fifo_writer_end(writer);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_cli_run_of_dev_zero_is_an_input_error)
{
    char *text = NULL;
    ck_assert_int_eq(wf_test_run_cli((const char *const[]){"run", "/dev/zero", NULL}, &text), 2);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "/dev/zero") && strstr(text, "larger than"), "stderr: %s", text);
    wf_free(text);
}
END_TEST

/* Ids made up without a store are 32 random hex digits (the second half
 * used to be a counter, 16 zeros for the first instance). */
START_TEST(test_instance_ids_are_fully_random)
{
    wfm_runtime *rt = make_rt();
    wfm_definition *def = load_small(rt);
    char seen[8][33];
    for (int i = 0; i < 8; i++) {
        wfm_instance *inst = NULL;
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
        const char *id = wfm_instance_id(inst);
        ck_assert_uint_eq(strlen(id), 32);
        ck_assert_uint_eq(strspn(id, "0123456789abcdef"), 32);
        ck_assert_msg(!strstr(id, "00000000"), "id %s has a run of zeros", id);
        ck_assert_str_eq(wfm_instance_id(inst), id); /* stable once made */
        for (int j = 0; j < i; j++)
            ck_assert_str_ne(seen[j], id);
        snprintf(seen[i], sizeof seen[i], "%s", id);
        wfm_instance_destroy(inst);
    }
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

/* ---- limits: the work-item limit -------------------------------------- */
#define WHILE_TRUE                                                                                 \
    HEAD "\n<Sequence>\n  <While Condition=\"[True]\"><WriteLine Text=\"x\"/></While>\n"           \
         "</Sequence></Activity>"
/* Idles on every iteration: 10 resumptions run more than 50 items in all, never 50 at once. */
#define WHILE_WAITING                                                                              \
    HEAD "<Sequence><While Condition=\"[True]\"><Sequence><WaitForEvent "                          \
         "x:TypeArguments=\"x:Int32\" "                                                            \
         "BookmarkName=\"go\"/><WriteLine Text=\"x\"/><WriteLine Text=\"y\"/></Sequence>"          \
         "</While></Sequence></Activity>"

static wfm_runtime *make_limited_rt(uint64_t max_steps)
{
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.write = wfm_test_discard;
    o.max_steps = max_steps;
    wfm_runtime *rt = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    return rt;
}

static wfm_instance *make_instance(wfm_runtime *rt, const char *xaml, wfm_definition **def)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_load_mem(rt, "loop.xaml", xaml, strlen(xaml), def, NULL, &err),
                     WF_OK);
    wfm_instance *inst = NULL;
    ck_assert_int_eq(wfm_instance_create(rt, *def, &inst, &err), WF_OK);
    return inst;
}

START_TEST(test_while_true_stops_at_the_step_limit)
{
    wfm_runtime *rt = make_limited_rt(1000);
    wfm_definition *def = NULL;
    wfm_instance *inst = make_instance(rt, WHILE_TRUE, &def);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_E_LIMIT);
    ck_assert_str_eq(err.file, "loop.xaml");
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 2, 1,
                    "the workflow ran 1000 work items without waiting for anything");
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_TERMINATED);
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(wfm_instance_fault(inst)), "1000 work"));
    ck_assert_uint_eq(wfm_instance_fault_loc(inst).line, 2);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(test_step_limit_ends_a_pooled_instance_too)
{
    wfm_runtime *rt = make_limited_rt(500);
    wfm_definition *def = NULL;
    wfm_instance *inst = make_instance(rt, WHILE_TRUE, &def);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_start(inst, &err), WF_OK);
    wfm_runtime_wait_idle(rt);
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_TERMINATED);
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(wfm_instance_fault(inst)), "500 work"));
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(test_step_limit_counts_work_without_waiting_only)
{
    wfm_runtime *rt = make_limited_rt(50);
    wfm_definition *def = NULL;
    wfm_instance *inst = make_instance(rt, WHILE_WAITING, &def);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    wf_value go = wf_int32(1);
    for (int i = 0; i < 10; i++) {
        ck_assert_int_eq(wfm_instance_resume(inst, "go", &go, &err), WF_OK);
        ck_assert_msg(wfm_instance_run(inst, &err) == WF_OK, "%s", err.message);
        ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_IDLE);
    }
    wfm_stats stats;
    wfm_runtime_stats(rt, &stats);
    ck_assert_uint_gt(stats.work_items, 50);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(test_cli_run_max_steps_stops_while_true)
{
    const char *dir = wf_test_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s", wf_test_write_file(dir, "loop.xaml", WHILE_TRUE));
    char *text = NULL;
    const char *const argv[] = {"run", path, "--max-steps", "1000", NULL};
    ck_assert_int_eq(wf_test_run_cli(argv, &text), 2);
    ck_assert_ptr_nonnull(text);
    char want[1100];
    snprintf(want, sizeof want,
             "%s:2:1: error: the workflow ran 1000 work items without waiting for anything", path);
    ck_assert_msg(strstr(text, want), "stderr: %s", text);
    wf_free(text);
    const char *const bad[] = {"run", path, "--max-steps", "-1", NULL};
    ck_assert_int_eq(wf_test_run_cli(bad, &text), 2);
    ck_assert_msg(strstr(text, "--max-steps needs a whole number"), "stderr: %s", text);
    wf_free(text);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------- */

/* A run that ran out of memory ends the instance Faulted without an exception. */
static wf_status run_or_nomem(wfm_instance *inst, wf_error *err)
{
    wf_status st = wfm_instance_run(inst, err);
    if (st == WF_OK && wfm_instance_state_get(inst) == WFM_INSTANCE_FAULTED &&
        wf_is_null(wfm_instance_fault(inst)))
        st = WF_E_NOMEM;
    return st;
}

static wf_status run_small_once(void *ud)
{
    (void)ud;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.write = wfm_test_discard;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status st = wfm_runtime_create(&o, &rt, &err);
    if (st == WF_OK)
        st = wfm_runtime_load_mem(rt, "small.xaml", SMALL, strlen(SMALL), &def, NULL, &err);
    if (st == WF_OK)
        st = wfm_instance_create(rt, def, &inst, &err);
    if (st == WF_OK)
        st = run_or_nomem(inst, &err);
    wf_value v = wf_int32(3);
    if (st == WF_OK)
        st = wfm_instance_resume(inst, "go", &v, &err);
    if (st == WF_OK)
        st = run_or_nomem(inst, &err);
    if (st == WF_OK)
        ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_CLOSED);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    return st;
}

START_TEST(test_nomem_every_allocation_fails_cleanly)
{
    unsigned runs = wf_test_nomem_loop(run_small_once, NULL, 2000);
    ck_assert_uint_gt(runs, 10);
}
END_TEST

Suite *modern_runtime_suite(void)
{
    Suite *s = suite_create("modern_runtime");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_same_file_loaded_twice_is_the_same_definition);
    tcase_add_test(core, test_cached_load_keeps_the_text_hash_as_identity);
    tcase_add_test(core, test_inputs_outputs_and_bookmarks_round_trip);
    tcase_add_test(core, test_instances_of_one_definition_are_independent);
    tcase_add_test(core, test_samples_run_as_documented);
    tcase_add_test(core, test_state_machine_sample_goes_idle_then_resumes);
    tcase_add_test(core, test_native_calls_reach_the_trace_callback);
    tcase_add_test(core, test_instance_ids_are_fully_random);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_unknown_argument_name_is_refused);
    tcase_add_test(bad, test_wrong_input_type_is_refused);
    tcase_add_test(bad, test_resume_unknown_bookmark_is_not_found);
    tcase_add_test(bad, test_completed_instance_refuses_run_and_cancel);
    tcase_add_test(bad, test_load_errors_reach_diagnostics_and_nothing_escapes);
    tcase_add_test(bad, test_load_of_dev_zero_stops_at_the_size_limit);
    tcase_add_test(bad, test_load_of_endless_fifo_stops_at_the_size_limit);
    tcase_add_test(bad, test_cli_run_of_dev_zero_is_an_input_error);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_while_true_stops_at_the_step_limit);
    tcase_add_test(limits, test_step_limit_ends_a_pooled_instance_too);
    tcase_add_test(limits, test_step_limit_counts_work_without_waiting_only);
    tcase_add_test(limits, test_cli_run_max_steps_stops_while_true);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_nomem_every_allocation_fails_cleanly);
    tcase_set_timeout(nomem, 60);
    suite_add_tcase(s, nomem);
    return s;
}

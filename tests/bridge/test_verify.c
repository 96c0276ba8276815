/* test_verify.c — the engine of `wfbridge verify` (bridge/wfb_verify*.c): the comparison of
 * two observations (order of calls, the Parallel rule, the fault-status mapping, type-aware
 * outputs, idle points), the runners on the order and batch samples, cases files, the
 * generator and the shrinker, and the verb's exit codes, --junit and --keep. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../bridge/wfb_verify.h"
#include "../../common/wf_file.h"
#include "../../common/wf_mem.h"
#include "../wf_test_util.h"

#define ORDER_XOML "samples/legacy/order_processing/order_processing.xoml"
#define ORDER_XAML "tests/bridge/data/verify/order_processing.xaml"
#define BATCH_XOML "tests/bridge/data/verify/batch_loop.xoml"
#define DATA_DIR   "tests/bridge/data/verify/"
#define BATCH_XAML "tests/bridge/data/verify/batch_loop.xaml"

/* ---- building observations by hand ------------------------------------------------------- */
static void call(wfb_vobs *o, const char *fn, const char *branch, int in, int out)
{
    wf_value i = wf_int32(in), r = wf_int32(out);
    ck_assert(wfb_vobs_add_call(o, fn, fn, branch, &i, 1, &r, 1));
}

static void obs_init(wfb_vobs *o, const char *status)
{
    memset(o, 0, sizeof *o);
    o->status = status;
}

/* Compare; returns whether equal and leaves the divergence's "what" in what (may be ""). */
static bool compare(const wfb_vobs *l, const wfb_vobs *m, double tol, char *what, size_t size)
{
    wfb_vdiff d;
    bool equal = false;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfb_vcompare(l, m, tol, &equal, &d, &err), WF_OK);
    snprintf(what, size, "%s", equal ? "" : d.what);
    if (!equal)
        ck_assert(d.legacy && d.modern);
    wfb_vdiff_fini(&d);
    return equal;
}

START_TEST(test_verify_equal_traces_compare_equal)
{
    wfb_vobs l, m;
    obs_init(&l, "Closed");
    obs_init(&m, "Closed");
    call(&l, "a", "", 1, 2);
    call(&l, "b", "", 3, 4);
    call(&m, "a", "", 1, 2);
    call(&m, "b", "", 3, 4);
    char what[128];
    ck_assert(compare(&l, &m, 0, what, sizeof what));
    wfb_vobs_fini(&l);
    wfb_vobs_fini(&m);
}
END_TEST

START_TEST(test_verify_extra_missing_reordered_calls_diverge)
{
    char what[128];
    wfb_vobs l, m;
    /* extra */
    obs_init(&l, "Closed");
    obs_init(&m, "Closed");
    call(&l, "a", "", 1, 2);
    call(&m, "a", "", 1, 2);
    call(&m, "b", "", 3, 4);
    ck_assert(!compare(&l, &m, 0, what, sizeof what));
    ck_assert_str_eq(what, "extra call 2");
    ck_assert(!compare(&m, &l, 0, what, sizeof what)); /* and the other way: missing */
    ck_assert_str_eq(what, "missing call 2");
    wfb_vobs_fini(&l);
    wfb_vobs_fini(&m);
    /* reordered */
    obs_init(&l, "Closed");
    obs_init(&m, "Closed");
    call(&l, "a", "", 1, 2);
    call(&l, "b", "", 3, 4);
    call(&m, "b", "", 3, 4);
    call(&m, "a", "", 1, 2);
    ck_assert(!compare(&l, &m, 0, what, sizeof what));
    ck_assert_str_eq(what, "call 1");
    wfb_vobs_fini(&l);
    wfb_vobs_fini(&m);
    /* same function, another argument */
    obs_init(&l, "Closed");
    obs_init(&m, "Closed");
    call(&l, "a", "", 1, 2);
    call(&m, "a", "", 1, 3);
    ck_assert(!compare(&l, &m, 0, what, sizeof what));
    ck_assert_str_eq(what, "call 1");
    wfb_vobs_fini(&l);
    wfb_vobs_fini(&m);
}
END_TEST

/* Parallel: each branch's calls in order, the branches as a set; the branch keys of the two
 * runtimes differ in form (legacy activity names, modern node ids) and need not match. */
START_TEST(test_verify_parallel_branches_compare_as_a_set)
{
    char what[128];
    wfb_vobs l, m;
    obs_init(&l, "Closed");
    obs_init(&m, "Closed");
    call(&l, "start", "", 0, 0);
    call(&l, "a1", "par#left/", 1, 1);
    call(&l, "b1", "par#right/", 2, 2);
    call(&l, "a2", "par#left/", 3, 3);
    call(&l, "b2", "par#right/", 4, 4);
    call(&l, "end", "", 0, 0);
    call(&m, "start", "", 0, 0);
    call(&m, "b1", "1.2#7f01/", 2, 2); /* right branch first, not interleaved */
    call(&m, "b2", "1.2#7f01/", 4, 4);
    call(&m, "a1", "1.2#7f02/", 1, 1);
    call(&m, "a2", "1.2#7f02/", 3, 3);
    call(&m, "end", "", 0, 0);
    ck_assert(compare(&l, &m, 0, what, sizeof what));
    wfb_vobs_fini(&m);

    /* one branch's own order changed: diverges */
    obs_init(&m, "Closed");
    call(&m, "start", "", 0, 0);
    call(&m, "a2", "1.2#1/", 3, 3);
    call(&m, "a1", "1.2#1/", 1, 1);
    call(&m, "b1", "1.2#2/", 2, 2);
    call(&m, "b2", "1.2#2/", 4, 4);
    call(&m, "end", "", 0, 0);
    ck_assert(!compare(&l, &m, 0, what, sizeof what));
    ck_assert_str_eq(what, "call 2");
    wfb_vobs_fini(&m);

    /* a call moved from one branch to the other: diverges */
    obs_init(&m, "Closed");
    call(&m, "start", "", 0, 0);
    call(&m, "a1", "1.2#1/", 1, 1);
    call(&m, "b1", "1.2#1/", 2, 2);
    call(&m, "a2", "1.2#2/", 3, 3);
    call(&m, "b2", "1.2#2/", 4, 4);
    call(&m, "end", "", 0, 0);
    ck_assert(!compare(&l, &m, 0, what, sizeof what));
    wfb_vobs_fini(&m);

    /* outside a Parallel order still counts: the same calls without branches diverge */
    obs_init(&m, "Closed");
    call(&m, "start", "", 0, 0);
    call(&m, "b1", "", 2, 2);
    call(&m, "b2", "", 4, 4);
    call(&m, "a1", "", 1, 1);
    call(&m, "a2", "", 3, 3);
    call(&m, "end", "", 0, 0);
    ck_assert(!compare(&l, &m, 0, what, sizeof what));
    wfb_vobs_fini(&m);
    wfb_vobs_fini(&l);
}
END_TEST

/* A parallel block hosted through Interop: the modern side sees its calls without branches,
 * in the order of the hosted WF3 executor; that order must be the legacy one exactly. */
START_TEST(test_verify_hosted_parallel_block_keeps_legacy_order)
{
    char what[128];
    wfb_vobs l, m;
    obs_init(&l, "Closed");
    call(&l, "start", "", 0, 0);
    call(&l, "r", "round#review@1/", 1, 1);
    call(&l, "r", "round#review@2/", 2, 2);
    call(&l, "end", "", 0, 0);
    obs_init(&m, "Closed");
    call(&m, "start", "", 0, 0);
    call(&m, "r", "", 1, 1);
    call(&m, "r", "", 2, 2);
    call(&m, "end", "", 0, 0);
    ck_assert(compare(&l, &m, 0, what, sizeof what));
    wfb_vobs_fini(&m);

    obs_init(&m, "Closed"); /* another order than the hosted WF3 executor's: diverges */
    call(&m, "start", "", 0, 0);
    call(&m, "r", "", 2, 2);
    call(&m, "r", "", 1, 1);
    call(&m, "end", "", 0, 0);
    ck_assert(!compare(&l, &m, 0, what, sizeof what));
    ck_assert_str_eq(what, "call 2");
    wfb_vobs_fini(&m);

    obs_init(&m, "Closed"); /* one call of the block missing */
    call(&m, "start", "", 0, 0);
    call(&m, "r", "", 1, 1);
    call(&m, "end", "", 0, 0);
    ck_assert(!compare(&l, &m, 0, what, sizeof what));
    wfb_vobs_fini(&m);
    wfb_vobs_fini(&l);
}
END_TEST

START_TEST(test_verify_nested_parallel_keeps_inner_sets)
{
    char what[128];
    wfb_vobs l, m;
    obs_init(&l, "Closed");
    obs_init(&m, "Closed");
    call(&l, "x", "p#a/q#1/", 1, 1);
    call(&l, "y", "p#a/q#2/", 2, 2);
    call(&l, "z", "p#b/", 3, 3);
    call(&m, "z", "P#9/", 3, 3);
    call(&m, "y", "P#8/Q#5/", 2, 2);
    call(&m, "x", "P#8/Q#6/", 1, 1);
    ck_assert(compare(&l, &m, 0, what, sizeof what));
    wfb_vobs_fini(&l);
    wfb_vobs_fini(&m);
}
END_TEST

/* docs/verify.md "Status mapping": the legacy executor reports an unhandled fault as Faulted
 * (WF3 terminates the instance: run-legacy prints Terminated), the modern runtime Faulted; a
 * TerminateActivity / Terminate is Terminated on both sides and not the same as Faulted. */
START_TEST(test_verify_fault_status_mapping)
{
    wf_error err = WF_ERROR_INIT;
    wf_libpath *lp = NULL;
    ck_assert_int_eq(wf_libpath_create(wf_test_sample_lib_dir(), &lp, &err), WF_OK);
    wfb_vlegacy *l = NULL;
    ck_assert_msg(wfb_vlegacy_load(ORDER_XOML, NULL, lp, 0, NULL, &l, &err) == WF_OK, "%s",
                  err.message);
    wfb_vcase c = {0};
    c.name = wf_strdup("fault");
    ck_assert_int_eq(wfb_vcase_set(&c, "OrderId", "\"SO-1\"", &err), WF_OK);
    ck_assert_int_eq(wfb_vcase_set(&c, "Quantity", "500", &err), WF_OK);
    ck_assert_int_eq(wfb_vcase_set(&c, "UnitPrice", "\"1\"", &err), WF_OK);
    wfb_vobs lo;
    ck_assert_int_eq(wfb_vlegacy_run(l, &c, &lo, &err), WF_OK);
    ck_assert_str_eq(lo.status, "Faulted");
    ck_assert_str_eq(lo.fault_type, "NativeException");
    wfb_vobs m;
    obs_init(&m, "Faulted");
    m.fault_type = wf_strdup(lo.fault_type);
    m.fault_message = wf_strdup(lo.fault_message);
    for (size_t i = 0; i < lo.call_count; i++)
        ck_assert(wfb_vobs_add_call(&m, lo.calls[i].function, "", "", lo.calls[i].in,
                                    lo.calls[i].in_count, lo.calls[i].out, lo.calls[i].out_count));
    char what[128];
    ck_assert(compare(&lo, &m, 0, what, sizeof what));
    m.status = "Terminated";
    ck_assert(!compare(&lo, &m, 0, what, sizeof what));
    ck_assert_str_eq(what, "status");
    m.status = "Faulted";
    wf_free(m.fault_message);
    m.fault_message = wf_strdup("another message");
    ck_assert(!compare(&lo, &m, 0, what, sizeof what));
    ck_assert_str_eq(what, "fault");
    wfb_vobs_fini(&m);
    wfb_vobs_fini(&lo);
    wfb_vcase_fini(&c);
    wfb_vlegacy_destroy(l);
    wf_libpath_destroy(lp);
}
END_TEST

START_TEST(test_verify_outputs_are_type_aware)
{
    char what[128];
    wfb_vobs l, m;
    obs_init(&l, "Closed");
    obs_init(&m, "Closed");
    wf_value d1 = wf_dec(wf_decimal_from_currency(10000)), d2 = wf_dec(wf_decimal_from_currency(10001));
    wf_value x1 = wf_double(1.0), x2 = wf_double(1.0 + 1e-12), x3 = wf_double(1.1);
    ck_assert(wfb_vobs_add_output(&l, "Price", &d1));
    ck_assert(wfb_vobs_add_output(&l, "Ratio", &x1));
    ck_assert(wfb_vobs_add_output(&l, "Input", &x1)); /* a legacy-only property is ignored */
    ck_assert(wfb_vobs_add_output(&m, "Price", &d1));
    ck_assert(wfb_vobs_add_output(&m, "Ratio", &x2));
    ck_assert(compare(&l, &m, 1e-9, what, sizeof what)); /* Double within the tolerance */
    ck_assert(!compare(&l, &m, 0, what, sizeof what));   /* not with none */
    ck_assert_str_eq(what, "output Ratio");
    m.output_values[1] = x3;
    ck_assert(!compare(&l, &m, 1e-9, what, sizeof what));
    m.output_values[0] = d2; /* Decimal exact: one unit in the 4th place differs */
    ck_assert(!compare(&l, &m, 1, what, sizeof what));
    ck_assert_str_eq(what, "output Price");
    m.output_values[0] = wf_double(1.0); /* Decimal vs Double: the type differs */
    m.output_values[1] = x1;
    ck_assert(!compare(&l, &m, 1, what, sizeof what));
    ck_assert_str_eq(what, "output Price");
    wfb_vobs_fini(&l);
    wfb_vobs_fini(&m);
}
END_TEST

START_TEST(test_verify_idle_points_compare_in_order)
{
    char what[128];
    wfb_vobs l, m;
    obs_init(&l, "Idle");
    obs_init(&m, "Idle");
    const char *a[] = {"Rejected", "Approved"}, *b[] = {"Approved", "Rejected"};
    ck_assert(wfb_vobs_add_wait(&l, a, 2, true));
    ck_assert(wfb_vobs_add_wait(&m, b, 2, true));
    ck_assert_str_eq(l.waits[0], "Approved,Rejected,(timer)");
    ck_assert(compare(&l, &m, 0, what, sizeof what));
    const char *c[] = {"Approved"};
    ck_assert(wfb_vobs_add_wait(&l, c, 1, false));
    ck_assert(!compare(&l, &m, 0, what, sizeof what));
    ck_assert_str_eq(what, "idle point 2");
    wfb_vobs_fini(&l);
    wfb_vobs_fini(&m);
}
END_TEST

/* ---- runners on the samples -------------------------------------------------------------- */
typedef struct pair {
    wf_libpath *lp;
    wfb_vlegacy *l;
    wfb_vmodern *m;
} pair;

static void pair_open(pair *p, const char *xoml, const char *xaml)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(wf_test_sample_lib_dir(), &p->lp, &err), WF_OK);
    ck_assert_msg(wfb_vlegacy_load(xoml, NULL, p->lp, 20000, NULL, &p->l, &err) == WF_OK, "%s",
                  err.message);
    size_t len;
    char *text = wf_test_read_file(xaml, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(wfb_vmodern_load(xaml, text, len, p->lp, 20000, NULL, &p->m, &err) == WF_OK, "%s",
                  err.message);
    wf_free(text);
}

static void pair_close(pair *p)
{
    wfb_vmodern_destroy(p->m);
    wfb_vlegacy_destroy(p->l);
    wf_libpath_destroy(p->lp);
}

static bool pair_equal(pair *p, const wfb_vcase *c, wfb_vobs *lo)
{
    wf_error err = WF_ERROR_INIT;
    wfb_vobs mo;
    ck_assert_int_eq(wfb_vlegacy_run(p->l, c, lo, &err), WF_OK);
    ck_assert_int_eq(wfb_vmodern_run(p->m, c, &mo, &err), WF_OK);
    char what[128];
    bool eq = compare(lo, &mo, 1e-9, what, sizeof what);
    wfb_vobs_fini(&mo);
    return eq;
}

START_TEST(test_verify_runners_observe_the_same_order)
{
    pair p = {0};
    pair_open(&p, ORDER_XOML, ORDER_XAML);
    wf_error err = WF_ERROR_INIT;
    wfb_vcase c = {.name = wf_strdup("large")};
    ck_assert_int_eq(wfb_vcase_set(&c, "OrderId", "\"SO-1\"", &err), WF_OK);
    ck_assert_int_eq(wfb_vcase_set(&c, "Sku", "\"W-7\"", &err), WF_OK);
    ck_assert_int_eq(wfb_vcase_set(&c, "Quantity", "20", &err), WF_OK);
    ck_assert_int_eq(wfb_vcase_set(&c, "UnitPrice", "\"75.50\"", &err), WF_OK);
    wfb_vobs lo;
    ck_assert(pair_equal(&p, &c, &lo));
    ck_assert_str_eq(lo.status, "Closed");
    ck_assert_uint_eq(lo.call_count, 6);
    ck_assert_str_eq(lo.calls[3].function, "orders_reserve");
    ck_assert_uint_eq(lo.calls[3].out_count, 2); /* Ticket, then the return value */
    ck_assert_uint_eq(lo.taken_count, 2);        /* whenValid, whenLarge */
    wfb_vobs_fini(&lo);
    wfb_vcase_fini(&c);
    pair_close(&p);
}
END_TEST

START_TEST(test_verify_runners_loop_with_fault_handler)
{
    pair p = {0};
    pair_open(&p, BATCH_XOML, BATCH_XAML);
    wf_error err = WF_ERROR_INIT;
    wfb_vcase c = {.name = wf_strdup("fail")};
    ck_assert_int_eq(wfb_vcase_set(&c, "BatchSize", "4", &err), WF_OK);
    ck_assert_int_eq(wfb_vcase_set(&c, "FailAt", "3", &err), WF_OK);
    wfb_vobs lo;
    ck_assert(pair_equal(&p, &c, &lo));
    ck_assert_str_eq(lo.status, "Closed");
    ck_assert_str_eq(lo.calls[lo.call_count - 1].function, "batch_report");
    wfb_vobs_fini(&lo);
    /* a loop that does not end within the step limit on either side: Limit, compared equal */
    ck_assert_int_eq(wfb_vcase_set(&c, "BatchSize", "2147483647", &err), WF_OK);
    ck_assert_int_eq(wfb_vcase_set(&c, "FailAt", "-1", &err), WF_OK);
    ck_assert(pair_equal(&p, &c, &lo));
    ck_assert_str_eq(lo.status, "Limit");
    wfb_vobs_fini(&lo);
    wfb_vcase_fini(&c);
    pair_close(&p);
}
END_TEST

/* The Parallel rule on both runtimes: WF3 interleaves the two branches, and the comparison
 * accepts whatever order the modern runtime runs them in as long as each branch keeps its own. */
START_TEST(test_verify_runners_parallel_branches)
{
    pair p = {0};
    pair_open(&p, DATA_DIR "parallel_order.xoml", DATA_DIR "parallel_order.xaml");
    wf_error err = WF_ERROR_INIT;
    wfb_vcase c = {.name = wf_strdup("p")};
    ck_assert_int_eq(wfb_vcase_set(&c, "Quantity", "2", &err), WF_OK);
    ck_assert_int_eq(wfb_vcase_set(&c, "UnitPrice", "\"1.5\"", &err), WF_OK);
    wfb_vobs lo;
    ck_assert(pair_equal(&p, &c, &lo));
    ck_assert_uint_eq(lo.call_count, 4);
    ck_assert_str_eq(lo.calls[0].branch, "both#left/");
    ck_assert_str_eq(lo.calls[1].branch, "both#right/"); /* interleaved (FIFO scheduler) */
    ck_assert_str_eq(lo.calls[1].function, "orders_total");
    wfb_vobs_fini(&lo);
    /* the modern call trace (wfm_instance_set_call_trace): one key per branch, In and Out
     * values split by direction */
    wfb_vobs mo;
    ck_assert_int_eq(wfb_vmodern_run(p.m, &c, &mo, &err), WF_OK);
    ck_assert_uint_eq(mo.call_count, 4);
    const char *keys[2] = {NULL, NULL};
    for (size_t i = 0; i < 4; i++) {
        const wfb_vcall *k = &mo.calls[i];
        ck_assert_msg(k->branch[0] && k->branch[strlen(k->branch) - 1] == '/', "%s", k->branch);
        size_t b = strcmp(k->function, "orders_validate") == 0 ||
                           strcmp(k->function, "orders_flag_review") == 0
                       ? 0
                       : 1;
        if (!keys[b])
            keys[b] = k->branch;
        ck_assert_str_eq(keys[b], k->branch);
        if (strcmp(k->function, "orders_validate") == 0) {
            ck_assert_uint_eq(k->in_count, 2);  /* OrderId, Quantity */
            ck_assert_uint_eq(k->out_count, 2); /* IsValid, Reason */
            ck_assert_str_eq(k->activity, "validateOrder");
        }
    }
    ck_assert_str_ne(keys[0], keys[1]);
    wfb_vobs_fini(&mo);
    wfb_vcase_fini(&c);
    pair_close(&p);
}
END_TEST

/* The event script and virtual time: the expense sample waits on Approved/Rejected and a
 * one-second Delay; delivered events and fired timers are seen at each idle point. */
START_TEST(test_verify_legacy_runner_drives_events_and_timers)
{
    wf_error err = WF_ERROR_INIT;
    wf_libpath *lp = NULL;
    ck_assert_int_eq(wf_libpath_create(wf_test_sample_lib_dir(), &lp, &err), WF_OK);
    wfb_vlegacy *l = NULL;
    ck_assert_msg(wfb_vlegacy_load("samples/legacy/expense_approval/expense_approval.xoml", NULL,
                                   lp, 20000, NULL, &l, &err) == WF_OK,
                  "%s", err.message);
    wfb_vevent ev = {.name = "Approved", .payload = "\"alice\""};
    wfb_vcase c = {.name = "approve", .events = &ev, .event_count = 1};
    wfb_vobs o;
    ck_assert_int_eq(wfb_vlegacy_run(l, &c, &o, &err), WF_OK);
    ck_assert_uint_ge(o.wait_count, 1);
    ck_assert_msg(strstr(o.waits[0], "Approved") && strstr(o.waits[0], "(timer)"), "%s",
                  o.waits[0]);
    wfb_vobs_fini(&o);
    /* without events the Delay fires in virtual time (no waiting) and escalates */
    c.event_count = 0;
    ck_assert_int_eq(wfb_vlegacy_run(l, &c, &o, &err), WF_OK);
    ck_assert_uint_ge(o.wait_count, 1);
    wfb_vobs_fini(&o);
    wfb_vlegacy_destroy(l);
    wf_libpath_destroy(lp);
}
END_TEST

/* ---- cases, generator, shrinker ---------------------------------------------------------- */
START_TEST(test_verify_cases_round_trip)
{
    const char *dir = wf_test_tmpdir();
    const char *path =
        wf_test_write_file(dir, "cases.json",
                           "{\"cases\": [{\"name\": \"one\", \"inputs\": {\"Quantity\": 3, "
                           "\"Sku\": \"W\\u00fc\"}, \"events\": [{\"event\": \"Approved\", "
                           "\"payload\": {\"Approver\": \"bob\"}}]}, {\"inputs\": {}}]}");
    wf_error err = WF_ERROR_INIT;
    wfb_vcase *cases = NULL;
    size_t n = 0;
    wfb_vevent def = {.name = "Go", .payload = NULL};
    ck_assert_int_eq(wfb_vcases_load(path, &def, 1, &cases, &n, &err), WF_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(cases[0].name, "one");
    ck_assert_uint_eq(cases[0].input_count, 2);
    ck_assert_str_eq(cases[0].events[0].payload, "{\"Approver\":\"bob\"}");
    ck_assert_str_eq(cases[1].name, "case-2");
    ck_assert_str_eq(cases[1].events[0].name, "Go"); /* the default script */
    char out[512];
    snprintf(out, sizeof out, "%s/again.json", dir);
    ck_assert_int_eq(wfb_vcases_write(out, cases, n, &err), WF_OK);
    wfb_vcase *again = NULL;
    size_t n2 = 0;
    ck_assert_int_eq(wfb_vcases_load(out, NULL, 0, &again, &n2, &err), WF_OK);
    ck_assert_uint_eq(n2, 2);
    ck_assert_str_eq(again[0].inputs[1].json, cases[0].inputs[1].json);
    wfb_vcases_free(again, n2);
    wfb_vcases_free(cases, n);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* 200 generated cases, each run on both sides and fed back; the first inputs into first. */
static size_t generate(pair *p, uint64_t seed, char first[4][64])
{
    wf_error err = WF_ERROR_INIT;
    wfb_vgen *g = NULL;
    ck_assert_int_eq(wfb_vgen_create(p->m, p->l, seed, &g, &err), WF_OK);
    for (size_t i = 0; i < 200; i++) {
        wfb_vcase c;
        ck_assert_int_eq(wfb_vgen_next(g, i, NULL, 0, &c, &err), WF_OK);
        if (i < 4) /* gen-1 leaves its inputs out (the defaults case) */
            snprintf(first[i], 64, "%s", c.input_count ? c.inputs[0].json : "");
        wfb_vobs lo;
        ck_assert(pair_equal(p, &c, &lo));
        ck_assert_int_eq(wfb_vgen_feedback(g, &c, &lo, &err), WF_OK);
        wfb_vobs_fini(&lo);
        wfb_vcase_fini(&c);
    }
    size_t covered = wfb_vgen_covered(g);
    wfb_vgen_destroy(g);
    return covered;
}

START_TEST(test_verify_generator_covers_every_branch)
{
    pair p = {0};
    pair_open(&p, ORDER_XOML, ORDER_XAML);
    ck_assert_uint_eq(wfb_vlegacy_branch_count(p.l), 4);
    char a[4][64], b[4][64];
    ck_assert_uint_eq(generate(&p, 7, a), 4);
    ck_assert_uint_eq(generate(&p, 7, b), 4); /* the same seed gives the same cases */
    for (size_t i = 0; i < 4; i++)
        ck_assert_str_eq(a[i], b[i]);
    pair_close(&p);
}
END_TEST

/* An oracle: diverges while Quantity > 10 (and counts its calls). */
typedef struct oracle {
    size_t calls;
} oracle;

static wf_status big_quantity(void *ud, const wfb_vcase *c, bool *diverges, wf_error *err)
{
    (void)err;
    ((oracle *)ud)->calls++;
    *diverges = false;
    for (size_t i = 0; i < c->input_count; i++)
        if (strcmp(c->inputs[i].name, "Quantity") == 0)
            *diverges = atoi(c->inputs[i].json) > 10;
    return WF_OK;
}

START_TEST(test_verify_shrinker_finds_a_small_case)
{
    pair p = {0};
    pair_open(&p, ORDER_XOML, ORDER_XAML);
    wf_error err = WF_ERROR_INIT;
    wfb_vcase c = {.name = wf_strdup("big")};
    ck_assert_int_eq(wfb_vcase_set(&c, "OrderId", "\"a long order id of many words\"", &err),
                     WF_OK);
    ck_assert_int_eq(wfb_vcase_set(&c, "Quantity", "2147483647", &err), WF_OK);
    ck_assert_int_eq(wfb_vcase_set(&c, "UnitPrice", "\"922337203685.4775\"", &err), WF_OK);
    oracle o = {0};
    ck_assert_int_eq(wfb_vshrink(&c, p.m, big_quantity, &o, 300, &err), WF_OK);
    /* the others did not matter: the Decimal is left out, the String becomes "" (null, its
     * default, is tried only after every non-null value) */
    ck_assert_uint_eq(c.input_count, 2);
    ck_assert_str_eq(c.inputs[0].name, "OrderId");
    ck_assert_str_eq(c.inputs[0].json, "\"\"");
    ck_assert_str_eq(c.inputs[1].name, "Quantity");
    int q = atoi(c.inputs[1].json);
    ck_assert_int_gt(q, 10);
    ck_assert_int_le(q, 21); /* halving toward 0 stops just above the edge */
    ck_assert_uint_le(o.calls, 300);
    /* the limit on tries holds */
    oracle few = {0};
    ck_assert_int_eq(wfb_vcase_set(&c, "Quantity", "2147483647", &err), WF_OK);
    ck_assert_int_eq(wfb_vshrink(&c, p.m, big_quantity, &few, 3, &err), WF_OK);
    ck_assert_uint_eq(few.calls, 3);
    wfb_vcase_fini(&c);
    pair_close(&p);
}
END_TEST

/* ---- the verb ---------------------------------------------------------------------------- */
static int verify(const char *const *args, char **err_text)
{
    return wf_test_run_cli(args, err_text);
}

START_TEST(test_verify_cli_equivalent_with_junit_and_keep)
{
    const char *dir = wf_test_tmpdir();
    char junit[512], keep[512];
    snprintf(junit, sizeof junit, "%s/verify.xml", dir);
    snprintf(keep, sizeof keep, "%s/keep", dir);
    const char *args[] = {"verify",      ORDER_XOML, "--lib-path", wf_test_sample_lib_dir(),
                          "--converted", ORDER_XAML, "--generate", "30",
                          "--seed",      "3",        "--junit",    junit,
                          "--keep",      keep,       NULL};
    char *err = NULL;
    ck_assert_int_eq(verify(args, &err), 0);
    wf_free(err);
    size_t len;
    char *xml = wf_test_read_file(junit, &len);
    ck_assert_ptr_nonnull(xml);
    ck_assert_ptr_nonnull(strstr(xml, "tests=\"60\" failures=\"0\""));
    ck_assert_ptr_nonnull(strstr(xml, "name=\"gen-30 [converted]\""));
    ck_assert_ptr_nonnull(strstr(xml, "name=\"gen-30 [interop]\""));
    wf_free(xml);
    char trace[600];
    snprintf(trace, sizeof trace, "%s/order_processing.gen-1.legacy.json", keep);
    struct stat st;
    ck_assert_int_eq(stat(trace, &st), 0);
    snprintf(trace, sizeof trace, "%s/order_processing.gen-1.converted.json", keep);
    ck_assert_int_eq(stat(trace, &st), 0);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* The name attribute of the first <testcase> below root, or NULL. */
static xmlChar *first_testcase_name(xmlNode *n)
{
    for (; n; n = n->next) {
        if (n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, BAD_CAST "testcase"))
            return xmlGetProp(n, BAD_CAST "name");
        xmlChar *found = first_testcase_name(n->children);
        if (found)
            return found;
    }
    return NULL;
}

/* A case name of any origin makes a well-formed JUnit file: markup characters, non-ASCII
 * text and "]]>" come back as written; a control character (the hand-written escaping wrote
 * "&#1;", which no XML parser reads) comes back as U+FFFD. */
START_TEST(test_verify_junit_is_well_formed_for_any_case_name)
{
    const char *dir = wf_test_tmpdir();
    char junit[512];
    snprintf(junit, sizeof junit, "%s/v.xml", dir);
    const char *cases = wf_test_write_file(
        dir, "c.json",
        "[{\"name\": \"<a&b> \\\"q\\\" '\\u00e9\\u78ba' \\u0001 ]]>\", \"inputs\": {}}]");
    const char *args[] = {"verify",      ORDER_XOML, "--lib-path", wf_test_sample_lib_dir(),
                          "--converted", ORDER_XAML, "--cases",    cases,
                          "--junit",     junit,      NULL};
    char *err = NULL;
    ck_assert_msg(verify(args, &err) == 0, "%s", err ? err : "");
    wf_free(err);
    size_t len;
    char *xml = wf_test_read_file(junit, &len);
    ck_assert_ptr_nonnull(xml);
    xmlDoc *doc = xmlReadMemory(xml, (int)len, junit, NULL, XML_PARSE_NONET);
    ck_assert_msg(doc != NULL, "not well-formed: %s", xml);
    xmlChar *name = first_testcase_name(xmlDocGetRootElement(doc));
    ck_assert_ptr_nonnull(name);
    ck_assert_str_eq((const char *)name,
                     "<a&b> \"q\" '\xC3\xA9\xE7\xA2\xBA' \xEF\xBF\xBD ]]> [converted]");
    xmlFree(name);
    xmlFreeDoc(doc);
    wf_free(xml);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Events by short and by queue name, a record payload, a timer fired in virtual time, and a
 * case left idle: the expense sample against its hand-written equivalent. */
START_TEST(test_verify_cli_event_script_cases)
{
    const char *dir = wf_test_tmpdir();
    char keep[512];
    snprintf(keep, sizeof keep, "%s/keep", dir);
    const char *args[] = {"verify",      "samples/legacy/expense_approval/expense_approval.xoml",
                          "--lib-path",  wf_test_sample_lib_dir(),
                          "--converted", DATA_DIR "expense_approval.xaml",
                          "--cases",     DATA_DIR "expense_cases.json",
                          "--keep",      keep,
                          NULL};
    char *err = NULL;
    ck_assert_msg(verify(args, &err) == 0, "%s", err ? err : "");
    wf_free(err);
    char path[700];
    snprintf(path, sizeof path, "%s/expense_approval.no answer.converted.json", keep);
    size_t len;
    char *obs = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(obs);
    ck_assert_ptr_nonnull(strstr(obs, "\"waits\": [\"Approved,Rejected,(timer)\", \"Approved\"]"));
    ck_assert_ptr_nonnull(strstr(obs, "expenses_escalate"));
    wf_free(obs);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_verify_cli_folder_form)
{
    /* the folder of the test pairs: batch_loop.xoml with batch_loop.xaml beside it, ...; a
     * generated batch size of millions runs to the step limit, kept small here (a limit run
     * of 20000 steps takes seconds under the sanitizers), with a seed whose batch sizes stay
     * under it on both sides (a batch that reaches it on the legacy side only is the Limit
     * divergence docs/verify.md describes) */
    const char *args[] = {
        "verify",      "tests/bridge/data/verify", "--lib-path",  wf_test_sample_lib_dir(),
        "--converted", "tests/bridge/data/verify", "--generate",  "20",
        "--max-steps", "2000",                     "--seed",      "2",
        NULL};
    char *err = NULL;
    ck_assert_int_eq(verify(args, &err), 0);
    wf_free(err);
}
END_TEST

#define EXPENSE_XOML "samples/legacy/expense_approval/expense_approval.xoml"

/* Entries of a directory other than . and .. */
static size_t dir_entries(const char *path)
{
    DIR *d = opendir(path);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* verify with $TMPDIR set to tmp for the run (restored afterwards). */
static int verify_in_tmpdir(const char *tmp, const char *const *args, char **err)
{
    char *old = getenv("TMPDIR") ? wf_strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", tmp, 1);
    int code = verify(args, err);
    if (old)
        setenv("TMPDIR", old, 1);
    else
        unsetenv("TMPDIR");
    wf_free(old);
    return code;
}

/* Without --converted both modern modes are converted on the fly; the expense sample's
 * conversion is partial, so its generated files must be on the library path of both runs.
 * They go into a temporary directory under $TMPDIR, removed afterwards. */
START_TEST(test_verify_cli_converts_on_the_fly)
{
    const char *dir = wf_test_tmpdir();
    char tmp[512], junit[512];
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    snprintf(junit, sizeof junit, "%s/v.xml", dir);
    ck_assert_int_eq(mkdir(tmp, 0777), 0);
    const char *args[] = {"verify",   EXPENSE_XOML, "--lib-path", wf_test_sample_lib_dir(),
                          "--generate", "4",        "--junit",    junit,
                          NULL};
    char *err = NULL;
    int code = verify_in_tmpdir(tmp, args, &err);
    ck_assert_msg(code == 0, "%s", err ? err : "");
    wf_free(err);
    ck_assert_uint_eq(dir_entries(tmp), 0); /* the generated files are gone */
    size_t len;
    char *xml = wf_test_read_file(junit, &len);
    ck_assert_ptr_nonnull(xml);
    ck_assert_ptr_nonnull(strstr(xml, "tests=\"8\" failures=\"0\""));
    ck_assert_ptr_nonnull(strstr(xml, "name=\"gen-1 [converted]\""));
    ck_assert_ptr_nonnull(strstr(xml, "name=\"gen-1 [interop]\""));
    wf_free(xml);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Every legacy sample verifies equivalent in all three modes (legacy, converted, interop)
 * with generated inputs, null ones included, converted on the fly; expense_approval is driven
 * by the expense_approval.events.json beside it. A null Reviewers list makes document_review's
 * rule fault with RuleEvaluationException in both runtimes (the converted rule is inside
 * WF3Rule). */
START_TEST(test_verify_every_sample_is_equivalent)
{
    const char *dir = wf_test_tmpdir();
    char junit[512], keep[512];
    snprintf(junit, sizeof junit, "%s/v.xml", dir);
    snprintf(keep, sizeof keep, "%s/keep", dir);
    const char *args[] = {"verify", "samples/legacy", "--lib-path", wf_test_sample_lib_dir(),
                          "--generate", "25", "--seed", "11", "--junit", junit, "--keep", keep,
                          NULL};
    char *err = NULL;
    int code = verify(args, &err);
    ck_assert_msg(code == 0, "%s", err ? err : "");
    wf_free(err);
    size_t len;
    char *xml = wf_test_read_file(junit, &len);
    ck_assert_ptr_nonnull(xml);
    size_t suites = 0;
    for (const char *p = xml; (p = strstr(p, "tests=\"50\" failures=\"0\" errors=\"0\"")); p++)
        suites++; /* 25 cases x 2 modern modes, per sample */
    ck_assert_uint_eq(suites, 4);
    const char *samples[] = {"batch_processing", "document_review", "expense_approval",
                             "order_processing"};
    for (size_t i = 0; i < 4; i++) {
        char path[700];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s.interop.xaml", keep, samples[i]);
        ck_assert_msg(stat(path, &st) == 0, "%s", path);
        snprintf(path, sizeof path, "%s/%s.gen-10.converted.json", keep, samples[i]);
        ck_assert_msg(stat(path, &st) == 0, "%s", path);
    }
    wf_free(xml);
    /* the event script beside the sample was used: the approval was delivered */
    char path[700];
    snprintf(path, sizeof path, "%s/expense_approval.gen-1.interop.json", keep);
    char *obs = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(obs);
    ck_assert_ptr_nonnull(strstr(obs, "\"status\": \"Closed\""));
    ck_assert_ptr_nonnull(strstr(obs, "\"waits\": [\"Approved,Rejected,(timer)\""));
    wf_free(obs);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* --keep DIR keeps both conversions with their generated files, named after each. */
START_TEST(test_verify_cli_keep_holds_generated_files)
{
    const char *dir = wf_test_tmpdir();
    char keep[512];
    snprintf(keep, sizeof keep, "%s/keep", dir);
    const char *args[] = {"verify",     EXPENSE_XOML, "--lib-path", wf_test_sample_lib_dir(),
                          "--generate", "2",          "--keep",     keep,
                          NULL};
    char *err = NULL;
    ck_assert_msg(verify(args, &err) == 0, "%s", err ? err : "");
    wf_free(err);
    const char *want[] = {"expense_approval.converted.xaml", "expense_approval.interop.xaml",
                          "expense_approval.converted.approved.activities.xml",
                          "expense_approval.interop.approved.xoml",
                          "expense_approval.interop.approvedArgs.rules"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char path[700];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", keep, want[i]);
        ck_assert_msg(stat(path, &st) == 0, "%s missing", want[i]);
    }
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* --converted OUT.xaml of a partial conversion: its generated files beside it are found, the
 * directory of OUT.xaml coming first on the library path. */
START_TEST(test_verify_cli_converted_finds_its_generated_files)
{
    const char *dir = wf_test_tmpdir();
    char out[512];
    snprintf(out, sizeof out, "%s/expense_approval.xaml", dir);
    const char *conv[] = {"convert", EXPENSE_XOML, "-o", out, "--lib-path",
                          wf_test_sample_lib_dir(), NULL};
    char *err = NULL;
    ck_assert_msg(wf_test_run_cli(conv, &err) == 0, "%s", err ? err : "");
    wf_free(err);
    const char *args[] = {"verify",      EXPENSE_XOML, "--lib-path", wf_test_sample_lib_dir(),
                          "--converted", out,          "--generate", "3",
                          NULL};
    err = NULL;
    ck_assert_msg(verify(args, &err) == 0, "%s", err ? err : "");
    wf_free(err);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A definition the converter refuses is an input error naming where, with no file left. */
START_TEST(test_verify_cli_conversion_error_is_an_input_error)
{
    const char *dir = wf_test_tmpdir();
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    ck_assert_int_eq(mkdir(tmp, 0777), 0);
    const char *xoml = wf_test_write_file(
        dir, "bad.xoml",
        "<SequentialWorkflowActivity x:Class=\"T.Bad\" x:Name=\"Bad\"\n"
        "  xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\"\n"
        "  xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"
        "  <SuspendActivity x:Name=\"s\" />\n"
        "</SequentialWorkflowActivity>\n");
    const char *args[] = {"verify", xoml, "--generate", "2", NULL};
    char *err = NULL;
    int code = verify_in_tmpdir(tmp, args, &err);
    ck_assert_int_eq(code, 2);
    ck_assert_msg(err && strstr(err, "bad.xoml:4:") && strstr(err, "error: "), "%s",
                  err ? err : "");
    wf_free(err);
    ck_assert_uint_eq(dir_entries(tmp), 0);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_verify_cli_usage_errors)
{
    const char *a1[] = {"verify", NULL};
    const char *a2[] = {"verify", ORDER_XOML, "--generate", "0", NULL};
    const char *a3[] = {"verify", ORDER_XOML, "--bogus", NULL};
    const char *a4[] = {"verify", ORDER_XOML, "--cases", "x.json", "--generate", "3", NULL};
    const char *const *all[] = {a1, a2, a3, a4};
    const char *want[] = {"no IN.xoml", "--generate needs a whole number from 1",
                          "unknown option '--bogus'", "exclude each other"};
    for (size_t i = 0; i < 4; i++) {
        char *err = NULL;
        ck_assert_int_eq(verify(all[i], &err), 2);
        ck_assert_msg(err && strstr(err, "wfbridge verify: ") && strstr(err, want[i]), "%s",
                      err ? err : "(none)");
        wf_free(err);
    }
}
END_TEST

START_TEST(test_verify_cli_case_input_not_accepted)
{
    const char *dir = wf_test_tmpdir();
    const char *cases =
        wf_test_write_file(dir, "c.json", "[{\"name\": \"bad\", \"inputs\": {\"Nope\": 1}}]");
    const char *args[] = {"verify",      ORDER_XOML, "--lib-path", wf_test_sample_lib_dir(),
                          "--converted", ORDER_XAML, "--cases",    cases,
                          NULL};
    char *err = NULL;
    ck_assert_int_eq(verify(args, &err), 2);
    ck_assert_msg(err && strstr(err, "c.json: error: case 'bad': ") &&
                      strstr(err, "no property 'Nope'"),
                  "%s", err ? err : "");
    wf_free(err);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_verify_cases_bad_json_reports_where)
{
    const char *dir = wf_test_tmpdir();
    const char *path = wf_test_write_file(dir, "bad.json", "{\"cases\": [\n  {\"name\": }\n]}");
    wf_error err = WF_ERROR_INIT;
    wfb_vcase *cases = NULL;
    size_t n = 7;
    ck_assert_int_eq(wfb_vcases_load(path, NULL, 0, &cases, &n, &err), WF_E_SYNTAX);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 2, 12, "invalid JSON");
    ck_assert_ptr_null(cases);
    ck_assert_uint_eq(n, 0);
    wf_error_clear(&err);
    path = wf_test_write_file(dir, "schema.json", "{\"cases\": [{\"inputs\": [1]}]}");
    ck_assert_int_eq(wfb_vcases_load(path, NULL, 0, &cases, &n, &err), WF_E_SCHEMA);
    ck_assert_ptr_nonnull(strstr(err.message, "\"inputs\" is an object"));
    ck_assert_ptr_null(cases);
    wf_error_clear(&err);
    path = wf_test_write_file(dir, "events.json", "[{\"payload\": 1}]");
    wfb_vevent *ev = NULL;
    ck_assert_int_eq(wfb_vevents_load(path, &ev, &n, &err), WF_E_SCHEMA);
    ck_assert_ptr_nonnull(strstr(err.message, "\"event\": NAME"));
    ck_assert_ptr_null(ev);
    wf_test_tmpdir_remove(dir);
}
END_TEST

START_TEST(test_verify_unknown_input_is_a_run_error)
{
    pair p = {0};
    pair_open(&p, ORDER_XOML, ORDER_XAML);
    wf_error err = WF_ERROR_INIT;
    wfb_vcase c = {.name = wf_strdup("bad")};
    ck_assert_int_eq(wfb_vcase_set(&c, "Quantity", "\"many\"", &err), WF_OK);
    wfb_vobs lo, mo;
    ck_assert_int_eq(wfb_vlegacy_run(p.l, &c, &lo, &err), WF_OK);
    ck_assert_str_eq(lo.status, "Error");
    ck_assert_ptr_nonnull(strstr(lo.error, "input 'Quantity'"));
    ck_assert_int_eq(wfb_vmodern_run(p.m, &c, &mo, &err), WF_OK);
    ck_assert_str_eq(mo.status, "Error");
    char what[128];
    ck_assert(!compare(&lo, &mo, 0, what, sizeof what));
    ck_assert_str_eq(what, "run error");
    wfb_vobs_fini(&lo);
    wfb_vobs_fini(&mo);
    wfb_vcase_fini(&c);
    pair_close(&p);
}
END_TEST

/* ---- out of memory ----------------------------------------------------------------------- */
typedef struct cmp_ud {
    wfb_vobs *l, *m;
} cmp_ud;

static wf_status compare_op(void *ud)
{
    cmp_ud *u = ud;
    wfb_vdiff d;
    bool equal;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfb_vcompare(u->l, u->m, 0, &equal, &d, &err);
    if (rc == WF_OK && !equal)
        wfb_vdiff_fini(&d);
    return rc;
}

START_TEST(test_verify_compare_nomem)
{
    wfb_vobs l, m;
    obs_init(&l, "Closed");
    obs_init(&m, "Closed");
    call(&l, "a", "p#1/", 1, 1);
    call(&l, "b", "p#2/", 2, 2);
    call(&l, "c", "", 3, 3);
    call(&m, "b", "q#1/", 2, 2);
    call(&m, "a", "q#2/", 1, 1);
    call(&m, "d", "", 3, 3);
    cmp_ud u = {&l, &m};
    ck_assert_uint_gt(wf_test_nomem_loop(compare_op, &u, 500), 0);
    wfb_vobs_fini(&l);
    wfb_vobs_fini(&m);
}
END_TEST

typedef struct load_ud {
    const char *path;
} load_ud;

static wf_status load_op(void *ud)
{
    wfb_vcase *cases = NULL;
    size_t n = 0;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfb_vcases_load(((load_ud *)ud)->path, NULL, 0, &cases, &n, &err);
    wfb_vcases_free(cases, n);
    return rc;
}

START_TEST(test_verify_cases_load_nomem)
{
    const char *dir = wf_test_tmpdir();
    load_ud u = {wf_test_write_file(dir, "c.json",
                                    "[{\"name\": \"a\", \"inputs\": {\"X\": 1, \"Y\": \"s\"}, "
                                    "\"events\": [{\"event\": \"E\", \"payload\": [1, 2]}]}]")};
    ck_assert_uint_gt(wf_test_nomem_loop(load_op, &u, 500), 0);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Max RSS (KiB) of `wfbridge verify ORDER --generate N --no-isolate`, from wait4: memory, not
 * time. */
static long verify_max_rss_kb(const char *n)
{
    char bin[1024];
    snprintf(bin, sizeof bin, "%s/bin/wfbridge", wf_test_build_dir());
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* under ASan, freed memory sits in its quarantine: reuse it as malloc would */
        const char *asan = getenv("ASAN_OPTIONS");
        char opts[1024];
        snprintf(opts, sizeof opts, "%s%squarantine_size_mb=0", asan ? asan : "",
                 asan && *asan ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        execl(bin, "wfbridge", "verify", ORDER_XOML, "--lib-path", wf_test_sample_lib_dir(),
              "--generate", n, "--seed", "3", "--no-isolate", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "verify --generate %s: %d", n,
                  status);
    return ru.ru_maxrss;
}

/* Generated cases are streamed: 9,500 more equivalent cases cost no memory (held report
 * rows were ~400 bytes a case, 3.8 MB here). */
START_TEST(test_verify_generate_streams_cases)
{
    long small = verify_max_rss_kb("500"), large = verify_max_rss_kb("10000");
    ck_assert_msg(large - small < 1500, "max RSS %ld KiB with 500 cases, %ld KiB with 10000",
                  small, large);
}
END_TEST

Suite *verify_suite(void)
{
    Suite *s = suite_create("verify");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 60);
    tcase_add_test(core, test_verify_equal_traces_compare_equal);
    tcase_add_test(core, test_verify_extra_missing_reordered_calls_diverge);
    tcase_add_test(core, test_verify_parallel_branches_compare_as_a_set);
    tcase_add_test(core, test_verify_nested_parallel_keeps_inner_sets);
    tcase_add_test(core, test_verify_hosted_parallel_block_keeps_legacy_order);
    tcase_add_test(core, test_verify_fault_status_mapping);
    tcase_add_test(core, test_verify_outputs_are_type_aware);
    tcase_add_test(core, test_verify_idle_points_compare_in_order);
    tcase_add_test(core, test_verify_runners_observe_the_same_order);
    tcase_add_test(core, test_verify_runners_loop_with_fault_handler);
    tcase_add_test(core, test_verify_runners_parallel_branches);
    tcase_add_test(core, test_verify_legacy_runner_drives_events_and_timers);
    tcase_add_test(core, test_verify_cases_round_trip);
    tcase_add_test(core, test_verify_generator_covers_every_branch);
    tcase_add_test(core, test_verify_cli_equivalent_with_junit_and_keep);
    tcase_add_test(core, test_verify_junit_is_well_formed_for_any_case_name);
    tcase_add_test(core, test_verify_cli_event_script_cases);
    tcase_add_test(core, test_verify_cli_folder_form);
    tcase_add_test(core, test_verify_cli_converts_on_the_fly);
    tcase_add_test(core, test_verify_cli_keep_holds_generated_files);
    tcase_add_test(core, test_verify_every_sample_is_equivalent);
    tcase_add_test(core, test_verify_cli_converted_finds_its_generated_files);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_verify_cli_conversion_error_is_an_input_error);
    tcase_add_test(bad, test_verify_cli_usage_errors);
    tcase_add_test(bad, test_verify_cli_case_input_not_accepted);
    tcase_add_test(bad, test_verify_cases_bad_json_reports_where);
    tcase_add_test(bad, test_verify_unknown_input_is_a_run_error);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_set_timeout(limits, 60);
    tcase_add_test(limits, test_verify_shrinker_finds_a_small_case);
    tcase_add_test(limits, test_verify_generate_streams_cases);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_verify_compare_nomem);
    tcase_add_test(nomem, test_verify_cases_load_nomem);
    suite_add_tcase(s, nomem);
    return s;
}

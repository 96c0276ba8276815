/* bench_sequence.c — "sequence of 5" from the WF4 performance paper's table: a workflow of five
 * Assign activities on Int32 variables, run start to finish N times through the modern host
 * API (create, set input, run, read output, destroy), against a hand-coded C baseline doing the
 * same work in the same process. Prints workflows/s for both and their ratio. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/wf_mem.h"
#include "../modern/wfm_runtime.h"

static const char xaml[] =
    "<Activity x:Class=\"Bench.Sequence5\" "
    "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"
    "<x:Members><x:Property Name=\"N\" Type=\"InArgument(x:Int32)\"/>"
    "<x:Property Name=\"Result\" Type=\"OutArgument(x:Int32)\"/></x:Members>"
    "<Sequence><Sequence.Variables>"
    "<Variable x:TypeArguments=\"x:Int32\" Name=\"a\"/><Variable x:TypeArguments=\"x:Int32\" "
    "Name=\"b\"/>"
    "<Variable x:TypeArguments=\"x:Int32\" Name=\"c\"/><Variable x:TypeArguments=\"x:Int32\" "
    "Name=\"d\"/>"
    "</Sequence.Variables>"
    "<Assign x:TypeArguments=\"x:Int32\" To=\"[a]\" Value=\"[N + 1]\"/>"
    "<Assign x:TypeArguments=\"x:Int32\" To=\"[b]\" Value=\"[a * 2]\"/>"
    "<Assign x:TypeArguments=\"x:Int32\" To=\"[c]\" Value=\"[b - 3]\"/>"
    "<Assign x:TypeArguments=\"x:Int32\" To=\"[d]\" Value=\"[c + a]\"/>"
    "<Assign x:TypeArguments=\"x:Int32\" To=\"[Result]\" Value=\"[d % 1000]\"/>"
    "</Sequence></Activity>";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The baseline: the same five steps as a C function over a heap-allocated "instance" (the
 * arguments and variables), so it pays for one allocation as the workflow pays for its own. */
typedef struct seq5 {
    int32_t n, result, a, b, c, d;
} seq5;

static seq5 *volatile escape; /* keeps the compiler from eliding the allocation */

static int32_t baseline_run(int32_t n)
{
    seq5 *s = malloc(sizeof *s);
    escape = s;
    if (!s)
        return 0;
    memset(s, 0, sizeof *s);
    s->n = n;
    s->a = s->n + 1;
    s->b = s->a * 2;
    s->c = s->b - 3;
    s->d = s->c + s->a;
    s->result = s->d % 1000;
    int32_t r = s->result;
    free(s);
    return r;
}

static int bench_workflow(wfm_runtime *rt, wfm_definition *def, long n, int64_t *check)
{
    for (long i = 0; i < n; i++) {
        wfm_instance *inst = NULL;
        wf_error err = WF_ERROR_INIT;
        wf_value v = wf_int32((int32_t)(i & 0xffff));
        if (wfm_instance_create(rt, def, &inst, &err) != WF_OK ||
            wfm_instance_set_input(inst, "N", &v, &err) != WF_OK ||
            wfm_instance_run(inst, &err) != WF_OK ||
            wfm_instance_state_get(inst) != WFM_INSTANCE_CLOSED) {
            fprintf(stderr, "bench_sequence: run %ld failed: %s\n", i, err.message);
            wfm_instance_destroy(inst);
            return 1;
        }
        *check += wfm_instance_output(inst, "Result")->u.i32;
        wfm_instance_destroy(inst);
    }
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    if (n < 1)
        n = 1;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    if (wfm_runtime_create(&o, &rt, &err) != WF_OK ||
        wfm_runtime_load_mem(rt, "sequence5.xaml", xaml, sizeof xaml - 1, &def, NULL, &err) !=
            WF_OK) {
        fprintf(stderr, "bench_sequence: %u:%u: %s\n", err.line, err.col, err.message);
        wfm_runtime_destroy(rt);
        return 1;
    }
    int64_t wf_check = 0, c_check = 0;
    bench_workflow(rt, def, n / 10 + 1, &wf_check); /* warm up the allocator and caches */
    wf_check = 0;
    double t0 = now_s();
    int rc = bench_workflow(rt, def, n, &wf_check);
    double t1 = now_s();
    volatile int32_t sink = 0;
    for (long i = 0; i < n; i++)
        c_check += baseline_run((int32_t)(i & 0xffff)) + sink;
    double t2 = now_s();
    if (rc == 0 && wf_check != c_check) {
        fprintf(stderr, "bench_sequence: results differ (%lld vs %lld)\n", (long long)wf_check,
                (long long)c_check);
        rc = 1;
    }
    double wf_rate = (double)n / (t1 - t0), c_rate = (double)n / (t2 - t1 > 0 ? t2 - t1 : 1e-9);
    wfm_stats s;
    wfm_runtime_stats(rt, &s);
    printf("sequence of 5 (5 x Assign<Int32>), %ld runs, one thread\n", n);
    printf("  modern runtime  %12.0f workflows/s  (%.2f us each, %.1f work items each)\n", wf_rate,
           1e6 / wf_rate, (double)s.work_items / (double)s.instances_completed);
    printf("  hand-coded C    %12.0f workflows/s  (%.3f us each)\n", c_rate, 1e6 / c_rate);
    printf("  ratio           %12.1fx slower than the baseline\n", c_rate / wf_rate);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    return rc;
}

/* bench_sequence.c — the WF4 performance paper's component table for the modern runtime:
 * empty workflow, single activity, sequence of 5, While x1000 and ParallelForEach x64, each
 * run start to finish N times through the host API (create, set input, run, read output,
 * destroy) against a hand-coded C baseline doing the same work in the same process; plus the
 * sequence of 5 started on the worker pool. Prints workflows/s for both and their ratio. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h> /* sysconf */

#include "../common/wf_mem.h"
#include "../modern/wfm_runtime.h"
#include "bench_util.h"

#define HEAD                                                                                       \
    "<Activity x:Class=\"Bench.Case\" "                                                            \
    "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "                           \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"                                    \
    "<x:Members><x:Property Name=\"N\" Type=\"InArgument(x:Int32)\"/>"                             \
    "<x:Property Name=\"Result\" Type=\"OutArgument(x:Int32)\"/></x:Members>"
#define VAR(n) "<Variable x:TypeArguments=\"x:Int32\" Name=\"" n "\"/>"
#define ASSIGN(to, value)                                                                          \
    "<Assign x:TypeArguments=\"x:Int32\" To=\"[" to "]\" Value=\"[" value "]\"/>"

/* The baselines: the same steps as C over a heap-allocated "instance" (arguments and
 * variables), so they pay for one allocation as the workflow pays for its own. */
typedef struct bench_state {
    int32_t n, result, a, b, c, d;
} bench_state;

static bench_state *volatile escape; /* keeps the compiler from eliding the allocation */

static bench_state *state_new(int32_t n)
{
    bench_state *s = calloc(1, sizeof *s);
    if (s)
        s->n = n;
    escape = s;
    return s;
}

static int32_t state_done(bench_state *s)
{
    int32_t r = s ? s->result : 0;
    free(s);
    return r;
}

static int32_t c_empty(int32_t n)
{
    return state_done(state_new(n));
}

static int32_t c_single(int32_t n)
{
    bench_state *s = state_new(n);
    if (s)
        s->result = s->n + 1;
    return state_done(s);
}

static int32_t c_sequence5(int32_t n)
{
    bench_state *s = state_new(n);
    if (!s)
        return 0;
    s->a = s->n + 1;
    s->b = s->a * 2;
    s->c = s->b - 3;
    s->d = s->c + s->a;
    s->result = s->d % 1000;
    return state_done(s);
}

static int32_t c_while1000(int32_t n)
{
    bench_state *s = state_new(n);
    if (!s)
        return 0;
    for (volatile int32_t *i = &s->a; *i < 1000; (*i)++)
        s->result = (s->result + s->n) % 10007;
    return state_done(s);
}

static int32_t c_pfe64(int32_t n)
{
    bench_state *s = state_new(n);
    if (!s)
        return 0;
    for (volatile int32_t i = 63; i >= 0; i--)
        s->result += i + s->n;
    return state_done(s);
}

typedef struct bench_case {
    const char *name;
    const char *xaml;
    int32_t (*baseline)(int32_t n);
    long runs_divisor; /* heavier cases run fewer times */
} bench_case;

static const bench_case cases[] = {
    {"empty workflow", HEAD "<Sequence/></Activity>", c_empty, 1},
    {"single activity", HEAD ASSIGN("Result", "N + 1") "</Activity>", c_single, 1},
    {"sequence of 5",
     HEAD "<Sequence><Sequence.Variables>" VAR("a") VAR("b") VAR("c") VAR(
         "d") "</Sequence.Variables>" ASSIGN("a", "N + 1") ASSIGN("b", "a * 2") ASSIGN("c", "b - 3")
         ASSIGN("d", "c + a") ASSIGN("Result", "d % 1000") "</Sequence></Activity>",
     c_sequence5, 1},
    {"While x1000",
     HEAD "<While Condition=\"[i &lt; 1000]\"><While.Variables>" VAR(
         "i") "</While.Variables><Sequence>" ASSIGN("Result", "(Result + N) % 10007")
         ASSIGN("i", "i + 1") "</Sequence></While></Activity>",
     c_while1000, 500},
    {"ParallelForEach x64",
     HEAD
     "<Sequence><Sequence.Variables><Variable x:TypeArguments=\"scg:List(x:Int32)\" "
     "xmlns:scg=\"clr-namespace:System.Collections.Generic;assembly=mscorlib\" "
     "Name=\"items\" Default=\"[new List&lt;int&gt; { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, "
     "11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, "
     "32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, "
     "53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63 }]\"/></Sequence.Variables>"
     "<ParallelForEach x:TypeArguments=\"x:Int32\" Values=\"[items]\">"
     "<ActivityAction x:TypeArguments=\"x:Int32\"><ActivityAction.Argument>"
     "<DelegateInArgument x:TypeArguments=\"x:Int32\" Name=\"item\"/>"
     "</ActivityAction.Argument>" ASSIGN(
         "Result", "Result + item + N") "</ActivityAction></ParallelForEach></Sequence></Activity>",
     c_pfe64, 50},
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_workflows(wfm_runtime *rt, wfm_definition *def, long n, int64_t *check)
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

static int64_t run_baseline(int32_t (*fn)(int32_t), long n)
{
    int64_t check = 0;
    for (long i = 0; i < n; i++)
        check += fn((int32_t)(i & 0xffff));
    return check;
}

/* One row of the table; returns non-zero when the runtime failed or disagreed. */
static int bench_one(wfm_runtime *rt, const bench_case *bc, long n)
{
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    if (wfm_runtime_load_mem(rt, bc->name, bc->xaml, strlen(bc->xaml), &def, NULL, &err) != WF_OK) {
        fprintf(stderr, "bench_sequence: %s: %u:%u: %s\n", bc->name, err.line, err.col,
                err.message);
        return 1;
    }
    int64_t wf_check = 0;
    int rc = run_workflows(rt, def, n / 10 + 1, &wf_check); /* warm up */
    wf_check = 0;
    double t0 = now_s();
    rc |= run_workflows(rt, def, n, &wf_check);
    double t1 = now_s();
    int64_t c_check = run_baseline(bc->baseline, n);
    double t2 = now_s();
    if (rc == 0 && wf_check != c_check) {
        fprintf(stderr, "bench_sequence: %s: results differ (%lld vs %lld)\n", bc->name,
                (long long)wf_check, (long long)c_check);
        rc = 1;
    }
    double wf_rate = (double)n / (t1 - t0), c_rate = (double)n / (t2 - t1 > 0 ? t2 - t1 : 1e-9);
    printf("  %-22s %9ld %14.0f %14.0f %9.1fx\n", bc->name, n, wf_rate, c_rate, c_rate / wf_rate);
    wfm_definition_release(def);
    return rc;
}

/* The sequence of 5 started on the worker pool in batches, `workers` threads. */
static double bench_pool(const char *text, unsigned workers, long n)
{
    enum { BATCH = 1000 };
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = workers;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    static wfm_instance *batch[BATCH];
    if (wfm_runtime_create(&o, &rt, &err) != WF_OK ||
        wfm_runtime_load_mem(rt, "pool", text, strlen(text), &def, NULL, &err) != WF_OK) {
        wfm_runtime_destroy(rt);
        return 0;
    }
    double t0 = now_s();
    for (long done = 0; done < n;) {
        long k = n - done < BATCH ? n - done : BATCH;
        for (long i = 0; i < k; i++) {
            wf_value v = wf_int32((int32_t)((done + i) & 0xffff));
            batch[i] = NULL;
            if (wfm_instance_create(rt, def, &batch[i], &err) == WF_OK &&
                wfm_instance_set_input(batch[i], "N", &v, &err) == WF_OK)
                wfm_instance_start(batch[i], &err);
        }
        wfm_runtime_wait_idle(rt);
        for (long i = 0; i < k; i++)
            wfm_instance_destroy(batch[i]);
        done += k;
    }
    double t1 = now_s();
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    return (double)n / (t1 - t0);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : bu_count(200000, 2000);
    if (n < 1)
        n = 1;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    wfm_runtime *rt = NULL;
    wf_error err = WF_ERROR_INIT;
    if (wfm_runtime_create(&o, &rt, &err) != WF_OK) {
        fprintf(stderr, "bench_sequence: %s\n", err.message);
        return 1;
    }
    printf("modern runtime vs hand-coded C, one thread (workflows/s)\n");
    printf("  %-22s %9s %14s %14s %10s\n", "case", "runs", "runtime", "C baseline", "ratio");
    int rc = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        rc |= bench_one(rt, &cases[i], n / cases[i].runs_divisor);
    wfm_stats s;
    wfm_runtime_stats(rt, &s);
    printf("  (%llu work items for %llu activities in %llu instances)\n",
           (unsigned long long)s.work_items, (unsigned long long)s.activities_executed,
           (unsigned long long)s.instances_completed);
    wfm_runtime_destroy(rt);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned workers = cores > 0 ? (unsigned)cores : 1;
    printf("sequence of 5 on the worker pool: %.0f workflows/s (%u workers, batches of 1000)\n",
           bench_pool(cases[2].xaml, workers, n), workers);
    return rc;
}

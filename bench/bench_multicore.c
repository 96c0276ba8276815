/* bench_multicore.c — the multi-core table: 1,000 instances of the sequence
 * of 5 started at once on the worker pool (create and start all, wait until idle, destroy),
 * with 1 and 2 workers, rounds interleaved so both see the same machine. Prints wall and
 * CPU-time rates; the CPU-time rate of W workers is W / (CPU seconds per instance), what W
 * busy cores would do, so the 2-worker / 1-worker ratio holds on a shared machine too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../modern/wfm_runtime.h"
#include "bench_util.h"

#define HEAD                                                                                       \
    "<Activity x:Class=\"Bench.Pool\" "                                                            \
    "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "                           \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"                                    \
    "<x:Members><x:Property Name=\"N\" Type=\"InArgument(x:Int32)\"/>"                             \
    "<x:Property Name=\"Result\" Type=\"OutArgument(x:Int32)\"/></x:Members>"
#define VAR(n) "<Variable x:TypeArguments=\"x:Int32\" Name=\"" n "\"/>"
#define ASSIGN(to, value)                                                                          \
    "<Assign x:TypeArguments=\"x:Int32\" To=\"[" to "]\" Value=\"[" value "]\"/>"

static const char seq5_xaml[] =
    HEAD "<Sequence><Sequence.Variables>" VAR("a") VAR("b") VAR("c") VAR(
        "d") "</Sequence.Variables>" ASSIGN("a", "N + 1") ASSIGN("b", "a * 2") ASSIGN("c", "b - 3")
        ASSIGN("d", "c + a") ASSIGN("Result", "d % 1000") "</Sequence></Activity>";

enum { MAX_REPS = 15, MAX_WORKERS = 2 };

typedef struct pool {
    wfm_runtime *rt;
    wfm_definition *def;
    wfm_instance **batch;
    long at_once;
} pool;

static int pool_open(pool *p, unsigned workers, long at_once)
{
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = workers;
    wf_error err = WF_ERROR_INIT;
    p->at_once = at_once;
    p->batch = calloc((size_t)at_once, sizeof *p->batch);
    if (!p->batch || wfm_runtime_create(&o, &p->rt, &err) != WF_OK ||
        wfm_runtime_load_mem(p->rt, "pool", seq5_xaml, strlen(seq5_xaml), &p->def, NULL, &err) !=
            WF_OK) {
        fprintf(stderr, "bench_multicore: %s\n", err.message);
        return 1;
    }
    return 0;
}

static void pool_close(pool *p)
{
    wfm_definition_release(p->def);
    wfm_runtime_destroy(p->rt);
    free(p->batch);
}

/* One round: at_once instances started, run to the end, checked and destroyed. */
static int pool_round(pool *p)
{
    wf_error err = WF_ERROR_INIT;
    int rc = 0;
    for (long i = 0; i < p->at_once; i++) {
        wf_value v = wf_int32((int32_t)(i & 0xffff));
        p->batch[i] = NULL;
        if (wfm_instance_create(p->rt, p->def, &p->batch[i], &err) != WF_OK ||
            wfm_instance_set_input(p->batch[i], "N", &v, &err) != WF_OK ||
            wfm_instance_start(p->batch[i], &err) != WF_OK) {
            fprintf(stderr, "bench_multicore: %s\n", err.message);
            rc = 1;
        }
    }
    wfm_runtime_wait_idle(p->rt);
    for (long i = 0; i < p->at_once; i++) {
        int32_t n = (int32_t)(i & 0xffff), a = n + 1, b = a * 2, c = b - 3, d = c + a;
        const wf_value *r = p->batch[i] ? wfm_instance_output(p->batch[i], "Result") : NULL;
        if (!r || wfm_instance_state_get(p->batch[i]) != WFM_INSTANCE_CLOSED || r->u.i32 != d % 1000)
            rc = 1;
        wfm_instance_destroy(p->batch[i]);
    }
    if (rc)
        fprintf(stderr, "bench_multicore: a round failed or returned a wrong result\n");
    return rc;
}

int main(void)
{
    const long at_once = 1000;
    const int rounds = (int)bu_count(40, 2); /* rounds per repetition */
    const int reps = bu_reps(MAX_REPS);
    pool pools[MAX_WORKERS];
    memset(pools, 0, sizeof pools);
    int rc = 0;
    for (unsigned w = 0; w < MAX_WORKERS && !rc; w++)
        rc = pool_open(&pools[w], w + 1, at_once);
    double wall[MAX_WORKERS][MAX_REPS], cpu[MAX_WORKERS][MAX_REPS], ratio[MAX_REPS];
    for (unsigned w = 0; w < MAX_WORKERS && !rc; w++)
        rc = pool_round(&pools[w]); /* warm up: threads started, shells recycled */
    for (int rep = 0; rep < reps && !rc; rep++) {
        for (unsigned w = 0; w < MAX_WORKERS && !rc; w++) {
            double c0 = bu_cpu(), t0 = bu_now();
            for (int r = 0; r < rounds && !rc; r++)
                rc = pool_round(&pools[w]);
            double t1 = bu_now(), c1 = bu_cpu();
            double n = (double)at_once * rounds;
            wall[w][rep] = n / (t1 - t0);
            cpu[w][rep] = (double)(w + 1) * n / (c1 - c0); /* W busy cores */
        }
        ratio[rep] = cpu[1][rep] / cpu[0][rep];
    }
    for (unsigned w = 0; w < MAX_WORKERS; w++)
        pool_close(&pools[w]);
    if (rc)
        return 1;
    bu_stat sw[MAX_WORKERS], sc[MAX_WORKERS], cpu_us[MAX_WORKERS];
    for (unsigned w = 0; w < MAX_WORKERS; w++) {
        double us[MAX_REPS];
        for (int rep = 0; rep < reps; rep++)
            us[rep] = (double)(w + 1) * 1e6 / cpu[w][rep];
        sw[w] = bu_summary(wall[w], reps);
        sc[w] = bu_summary(cpu[w], reps);
        cpu_us[w] = bu_summary(us, reps);
    }
    bu_stat sr = bu_summary(ratio, reps);
    printf("1,000 instances (sequence of 5) started at once, %d rounds x %d repetitions\n", rounds,
           reps);
    printf("  %-10s %14s %18s %12s\n", "workers", "wall inst/s", "CPU-time inst/s", "CPU us/inst");
    for (unsigned w = 0; w < MAX_WORKERS; w++)
        printf("  %-10u %14.0f %18.0f %12.3f\n", w + 1, sw[w].med, sc[w].med, cpu_us[w].med);
    printf("  2 workers / 1 worker (CPU-time): %.2fx (min %.2f, max %.2f); target >= 1.8x\n",
           sr.med, sr.min, sr.max);

    char a[64], b[64], c[64];
    bu_md("## Multi-core: 1,000 instances started at once\n\n"
          "The sequence of 5, 1,000 instances created and started on the worker pool, then\n"
          "`wfm_runtime_wait_idle`, then destroyed; %d rounds per repetition, %d repetitions,\n"
          "1 and 2 workers interleaved. CPU-time rate = workers / CPU seconds per instance (all\n"
          "threads, the host's included): what that many busy cores would do, steady on a shared\n"
          "machine. Target: 2 workers >= 1.8x one worker.\n\n"
          "| workers | wall instances/s | CPU-time instances/s | CPU µs per instance |\n"
          "|---|---|---|---|\n",
          rounds, reps);
    for (unsigned w = 0; w < MAX_WORKERS; w++) {
        char row[16];
        snprintf(row, sizeof row, "%u", w + 1);
        bu_md("| %s | %s | %s | %s |\n", row, bu_cell(sw[w], a, sizeof a),
              bu_cell(sc[w], b, sizeof b), bu_cell(cpu_us[w], c, sizeof c));
        bu_json("bench_multicore", "multicore", row, "wall", "instances/s", sw[w]);
        bu_json("bench_multicore", "multicore", row, "cpu", "instances/s", sc[w]);
        bu_json("bench_multicore", "multicore", row, "cpu_per_instance", "us", cpu_us[w]);
    }
    bu_md("\n2 workers / 1 worker, CPU-time rates of the same repetition: **%.2fx** (min %.2f, "
          "max %.2f).\n\n",
          sr.med, sr.min, sr.max);
    bu_json("bench_multicore", "multicore", "2 workers / 1 worker", "cpu ratio", "x", sr);
    return 0;
}

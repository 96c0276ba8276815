/* bench_tracking.c — tracking overhead in the modern runtime (the WF4 paper: health monitoring
 * ~3%, basic profile ~8%): the sequence of 5 and While x1000 run with no tracker, with a
 * tracker whose profile is "none" (the one-branch check), and with the health, basic and all
 * profiles writing JSON lines to a file in /tmp (flush thread) or into an in-memory ring.
 * Prints workflows/s and CPU time per workflow, the overheads against no tracker, records/wf. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h> /* getpid, unlink */

#include "../modern/wfm_runtime.h"
#include "../modern/wfm_track.h"
#include "bench_util.h"

#define HEAD                                                                                       \
    "<Activity x:Class=\"Bench.Track\" "                                                           \
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

static const char while_xaml[] =
    HEAD "<While Condition=\"[i &lt; 1000]\"><While.Variables>" VAR(
        "i") "</While.Variables><Sequence>" ASSIGN("Result", "(Result + N) % 10007")
        ASSIGN("i", "i + 1") "</Sequence></While></Activity>";

typedef enum sink { SINK_NONE, SINK_FILE, SINK_RING } sink;

typedef struct config {
    const char *label;
    const char *profile; /* NULL: no tracker at all */
    sink where;
} config;

static const config configs[] = {
    {"no tracker", NULL, SINK_NONE},
    {"profile none (file)", "none", SINK_FILE},
    {"health -> file", "health", SINK_FILE},
    {"basic -> file", "basic", SINK_FILE},
    {"all -> file", "all", SINK_FILE},
    {"health -> ring", "health", SINK_RING},
    {"basic -> ring", "basic", SINK_RING},
    {"all -> ring", "all", SINK_RING},
};
enum { CONFIG_COUNT = sizeof configs / sizeof configs[0], REPEATS = 3 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of the whole process (the worker and the tracker's flush thread): on a loaded
 * machine it is steadier than the wall clock. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Lines in a file (the records the file participant wrote). */
static long count_lines(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char buf[65536];
    long lines = 0;
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < got; i++)
            lines += buf[i] == '\n';
    fclose(f);
    return lines;
}

/* What each workflow must return for input n (checked on every run). */
typedef int32_t (*expect_fn)(int32_t n);

static int32_t expect_seq5(int32_t n)
{
    int32_t a = n + 1, b = a * 2, c = b - 3, d = c + a;
    return d % 1000;
}

static int32_t expect_while(int32_t n)
{
    int32_t r = 0;
    for (int i = 0; i < 1000; i++)
        r = (r + n) % 10007;
    return r;
}

/* Run workflows until `seconds` have passed (at least `min_runs`); returns the count, or -1
 * when one failed or returned the wrong result. */
static long run_for(wfm_runtime *rt, wfm_definition *def, expect_fn expect, double seconds,
                    long min_runs)
{
    double end = now_s() + seconds;
    long i = 0;
    for (;; i++) {
        if (i >= min_runs && (i < 16 || (i & 15) == 0) && now_s() >= end)
            break;
        wfm_instance *inst = NULL;
        wf_error err = WF_ERROR_INIT;
        int32_t n = (int32_t)(i & 0xffff);
        wf_value v = wf_int32(n);
        if (wfm_instance_create(rt, def, &inst, &err) != WF_OK ||
            wfm_instance_set_input(inst, "N", &v, &err) != WF_OK ||
            wfm_instance_run(inst, &err) != WF_OK ||
            wfm_instance_state_get(inst) != WFM_INSTANCE_CLOSED) {
            fprintf(stderr, "bench_tracking: run %ld failed: %s\n", i, err.message);
            wfm_instance_destroy(inst);
            return -1;
        }
        const wf_value *r = wfm_instance_output(inst, "Result");
        if (!r || r->u.i32 != expect(n)) {
            fprintf(stderr, "bench_tracking: run %ld: wrong result\n", i);
            wfm_instance_destroy(inst);
            return -1;
        }
        wfm_instance_destroy(inst);
    }
    return i;
}

typedef struct result {
    double rate;    /* best of REPEATS, workflows/s (wall clock) */
    double cpu_us;  /* best of REPEATS, CPU microseconds per workflow (all threads) */
    double records; /* records written per workflow (file participant), -1 if unknown */
    uint64_t dropped;
} result;

/* One configuration, REPEATS times: a fresh tracker and runtime, a short warm-up, then
 * workflows for SECONDS timed up to the moment the tracker has written everything. */
static int measure(const config *c, const char *name, const char *xaml, expect_fn expect,
                   result *out)
{
    const double SECONDS = bu_quick() ? 0.005 : 0.1;
    char path[128];
    snprintf(path, sizeof path, "/tmp/wfbridge-bench-track-%ld.jsonl", (long)getpid());
    memset(out, 0, sizeof *out);
    out->records = -1;
    for (int rep = 0; rep < REPEATS; rep++) {
        wf_error err = WF_ERROR_INIT;
        wfm_tracker *tr = NULL;
        wfm_runtime *rt = NULL;
        wfm_definition *def = NULL;
        int rc = 0;
        if (c->profile) {
            const wfm_profile *p = wfm_profile_builtin(c->profile);
            rc = !p || wfm_tracker_create(p, &tr, &err) != WF_OK;
            if (!rc && c->where == SINK_FILE)
                rc = wfm_tracker_add_file(tr, path, &err) != WF_OK;
            else if (!rc && c->where == SINK_RING)
                rc = wfm_tracker_add_ring(tr, 1024, &err) != WF_OK;
        }
        wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
        o.worker_count = 1;
        o.tracker = tr;
        if (!rc)
            rc = wfm_runtime_create(&o, &rt, &err) != WF_OK ||
                 wfm_runtime_load_mem(rt, name, xaml, strlen(xaml), &def, NULL, &err) != WF_OK;
        if (!rc)
            rc = run_for(rt, def, expect, SECONDS / 10, 1) < 0; /* warm up */
        if (!rc && tr)
            wfm_tracker_flush(tr);
        if (!rc && c->where == SINK_FILE && truncate(path, 0) != 0)
            rc = 1;
        long n = 0;
        double c0 = cpu_s(), t0 = now_s();
        if (!rc) {
            n = run_for(rt, def, expect, SECONDS, 2);
            rc = n < 0;
        }
        if (!rc && tr)
            wfm_tracker_flush(tr);
        double t1 = now_s(), c1 = cpu_s();
        if (rc && err.message[0])
            fprintf(stderr, "bench_tracking: %s: %s: %s\n", name, c->label, err.message);
        wfm_definition_release(def);
        wfm_runtime_destroy(rt);
        if (tr)
            out->dropped += wfm_tracker_dropped(tr);
        wfm_tracker_destroy(tr);
        if (!rc && c->where == SINK_FILE && rep == 0) {
            long lines = count_lines(path);
            out->records = lines < 0 ? -1 : (double)lines / (double)n;
        }
        if (c->where == SINK_FILE)
            unlink(path);
        if (rc)
            return 1;
        double rate = (double)n / (t1 - t0 > 0 ? t1 - t0 : 1e-9);
        if (rate > out->rate)
            out->rate = rate;
        double us = (c1 - c0) * 1e6 / (double)n;
        if (rep == 0 || us < out->cpu_us)
            out->cpu_us = us;
    }
    return 0;
}

static int bench_workflow(const char *name, const char *xaml, expect_fn expect)
{
    result res[CONFIG_COUNT];
    printf("%s: best of %d runs of ~0.1 s each, one worker thread\n", name, REPEATS);
    printf("  %-22s %12s %10s %12s %10s %11s %8s\n", "configuration", "workflows/s", "overhead",
           "CPU us/wf", "overhead", "records/wf", "dropped");
    for (size_t i = 0; i < CONFIG_COUNT; i++) {
        if (measure(&configs[i], name, xaml, expect, &res[i]))
            return 1;
        char over[32] = "-", cover[32] = "-", recs[32] = "-";
        if (i > 0) {
            snprintf(over, sizeof over, "%+.1f%%", (res[0].rate / res[i].rate - 1.0) * 100.0);
            snprintf(cover, sizeof cover, "%+.1f%%",
                     (res[i].cpu_us / res[0].cpu_us - 1.0) * 100.0);
        }
        if (res[i].records >= 0)
            snprintf(recs, sizeof recs, "%.1f", res[i].records);
        printf("  %-22s %12.0f %10s %12.2f %10s %11s %8llu\n", configs[i].label, res[i].rate,
               over, res[i].cpu_us, cover, recs, (unsigned long long)res[i].dropped);
        fflush(stdout);
    }
    return 0;
}

int main(void)
{
    int rc = bench_workflow("sequence of 5", seq5_xaml, expect_seq5);
    if (!rc)
        rc = bench_workflow("While x1000", while_xaml, expect_while);
    printf("overhead = cost per workflow with the tracker / without - 1: wall clock (the\n"
           "participant's writing included, flush thread on the other core) and CPU time of\n"
           "all threads; seed (WF4 + ETW consumed by logman): health ~3%%, basic ~8%%\n");
    return rc;
}

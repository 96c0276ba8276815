/* bench_interop.c — what hosting a legacy activity through Interop costs, in one run: the
 * per-call cost of a native leaf (bench/libs/interopbench: ib_add) called by Interop, by
 * InvokeMethod and directly from C; and a 5-activity all-Interop sequence against the same
 * sequence converted to InvokeMethod and against the legacy runtime running the original
 * XOML. Prints ns per call and workflows per CPU-second, and the ratios.
 * `bench_interop seq-interop` runs only the all-Interop sequence, ten times as long, for a
 * profiler (perf record). */
#include <dlfcn.h>
#include <libgen.h> /* dirname */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bridge/wfb_interop.h"
#include "../common/wf_mem.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"
#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "../modern/wfm_runtime.h"

#define XAML_OPEN                                                                                  \
    "<Activity x:Class=\"IB.Flow\" "                                                               \
    "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "                           \
    "xmlns:ib=\"clr-namespace:IB;Assembly=interopbench\" "                                         \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"                                    \
    "<x:Members><x:Property Name=\"X\" Type=\"InOutArgument(x:Int32)\"/></x:Members>"
#define XAML_CLOSE "</Activity>"
#define INTEROP "<Interop ActivityType=\"ib:Add\" A=\"[X]\" B=\"1\" SumOut=\"[X]\"/>"
#define INVOKE                                                                                     \
    "<InvokeMethod TargetType=\"ib:Any\" MethodName=\"ib_add\"><InvokeMethod.Result>"              \
    "<OutArgument x:TypeArguments=\"x:Int32\">[X]</OutArgument></InvokeMethod.Result>"            \
    "<InArgument x:TypeArguments=\"x:Int32\">[X]</InArgument>"                                    \
    "<InArgument x:TypeArguments=\"x:Int32\">1</InArgument></InvokeMethod>"
#define LOOP(body) "<While Condition=\"[X &lt; 1000]\">" body "</While>"
#define SEQ5(a) "<Sequence>" a a a a a "</Sequence>"
#define LEGACY_ADD(n) "<ns0:Add x:Name=\"" n "\" A=\"{ActivityBind Flow,Path=X}\" B=\"1\" " \
                      "Sum=\"{ActivityBind Flow,Path=X}\"/>"
static const char xoml_seq5[] =
    "<SequentialWorkflowActivity x:Class=\"IB.Flow\" x:Name=\"Flow\" "
    "xmlns:ns0=\"clr-namespace:IB;Assembly=interopbench\" "
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
    "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">" LEGACY_ADD("a1")
        LEGACY_ADD("a2") LEGACY_ADD("a3") LEGACY_ADD("a4") LEGACY_ADD("a5")
    "</SequentialWorkflowActivity>";

static const double BUDGET_S = 0.4; /* CPU seconds per measurement */

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, const wf_error *err)
{
    fprintf(stderr, "bench_interop: %s: %s:%u:%u: %s\n", what, err->file, err->line, err->col,
            err->message);
    return 1;
}

/* One modern workflow run from X = 0; returns X after it (or -1). */
static int32_t modern_once(wfm_runtime *rt, wfm_definition *def)
{
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_value zero = wf_int32(0);
    int32_t x = -1;
    if (wfm_instance_create(rt, def, &inst, &err) == WF_OK &&
        wfm_instance_set_input(inst, "X", &zero, &err) == WF_OK &&
        wfm_instance_run(inst, &err) == WF_OK &&
        wfm_instance_state_get(inst) == WFM_INSTANCE_CLOSED)
        x = wfm_instance_output(inst, "X")->u.i32;
    wfm_instance_destroy(inst);
    return x;
}

/* Workflows per CPU-second of `xaml`, checking X ends at `expect`. */
static double modern_rate(wfm_runtime *rt, const char *name, const char *xaml, int32_t expect)
{
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    if (wfm_runtime_load_mem(rt, name, xaml, strlen(xaml), &def, NULL, &err) != WF_OK) {
        fail(name, &err);
        return 0;
    }
    long n = 0;
    double t0 = cpu_s(), t = 0;
    do {
        if (modern_once(rt, def) != expect) {
            fprintf(stderr, "bench_interop: %s: wrong result\n", name);
            wfm_definition_release(def);
            return 0;
        }
        n++;
    } while ((n & 63) || (t = cpu_s() - t0) < BUDGET_S); /* the clock is a system call */
    wfm_definition_release(def);
    return (double)n / t;
}

static double legacy_rate(wf_types *types, const wf_libpath *path)
{
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = types;
    lo.libpath = path;
    lo.no_auto_rules = true;
    wfl_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    if (wfl_definition_load_mem(&lo, "seq5.xoml", xoml_seq5, sizeof xoml_seq5 - 1, &def, &err) !=
        WF_OK) {
        fail("legacy load", &err);
        return 0;
    }
    wfl_exec_opts o = WFL_EXEC_OPTS_INIT;
    o.instance_id = "0123456789abcdef0123456789abcdef";
    long n = 0;
    double t0 = cpu_s(), t = 0;
    do {
        wfl_exec *ex = NULL;
        wfl_exec_state st;
        wf_value x = wf_null();
        if (wfl_exec_create(def, NULL, &o, &ex, &err) != WF_OK ||
            wfl_exec_run(ex, &st, &err) != WF_OK || st != WFL_EXEC_CLOSED ||
            wfl_exec_output(ex, "X", &x, &err) != WF_OK || x.u.i32 != 5) {
            wfl_exec_destroy(ex);
            wfl_definition_destroy(def);
            fprintf(stderr, "bench_interop: legacy run failed: %s\n", err.message);
            return 0;
        }
        wfl_exec_destroy(ex);
        n++;
    } while ((n & 63) || (t = cpu_s() - t0) < BUDGET_S);
    wfl_definition_destroy(def);
    return (double)n / t;
}

/* ns per direct call through a function pointer (the C baseline). */
static double direct_ns(const char *lib_dir)
{
    char file[1024];
    snprintf(file, sizeof file, "%s/libinteropbench.so", lib_dir);
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "bench_interop: %s\n", dlerror());
        return 0;
    }
    int32_t (*add)(int32_t, int32_t);
    *(void **)&add = dlsym(h, "ib_add");
    volatile int32_t x = 0;
    long n = 0;
    double t0 = cpu_s(), t;
    do {
        for (int i = 0; i < 100000; i++)
            x = add(x, 1);
        n += 100000;
    } while ((t = cpu_s() - t0) < BUDGET_S);
    dlclose(h);
    return t / (double)n * 1e9;
}

/* `bench_interop seq-interop`: only the all-Interop sequence, 10 times as long (profiling). */
static int profile_only(wfm_runtime *rt)
{
    double si = 0;
    for (int i = 0; i < 10; i++)
        si += modern_rate(rt, "seq_interop.xaml", XAML_OPEN SEQ5(INTEROP) XAML_CLOSE, 5) / 10;
    printf("all Interop (mixed) %.0f workflows per CPU-second\n", si);
    return si > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    char self[512], dir[600];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(dir, sizeof dir, "%s/lib", dirname(self));
    wf_libpath *path = NULL;
    wfm_runtime *rt = NULL;
    wf_error err = WF_ERROR_INIT;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    if (wf_libpath_create(dir, &path, &err) != WF_OK)
        return fail("library path", &err);
    ro.libpath = path;
    if (wfm_runtime_create(&ro, &rt, &err) != WF_OK ||
        wfb_interop_register(wfm_runtime_catalogue(rt), &err) != WF_OK)
        return fail("runtime", &err);
    if (argc > 1 && strcmp(argv[1], "seq-interop") == 0) {
        int rc = profile_only(rt);
        wfm_runtime_destroy(rt);
        wf_libpath_destroy(path);
        return rc;
    }

    /* per call: 1000 calls in a While, minus the same While with an Assign */
    double loop = modern_rate(rt, "loop.xaml",
                              XAML_OPEN LOOP("<Assign x:TypeArguments=\"x:Int32\" To=\"[X]\" "
                                             "Value=\"[X + 1]\"/>") XAML_CLOSE,
                              1000);
    double li = modern_rate(rt, "loop_interop.xaml", XAML_OPEN LOOP(INTEROP) XAML_CLOSE, 1000);
    double lm = modern_rate(rt, "loop_invoke.xaml", XAML_OPEN LOOP(INVOKE) XAML_CLOSE, 1000);
    double c_ns = direct_ns(dir);
    double base_ns = loop > 0 ? 1e9 / loop / 1000 : 0;
    double interop_ns = li > 0 ? 1e9 / li / 1000 - base_ns : 0;
    double invoke_ns = lm > 0 ? 1e9 / lm / 1000 - base_ns : 0;
    /* the 5-activity sequence three ways */
    double si = modern_rate(rt, "seq_interop.xaml", XAML_OPEN SEQ5(INTEROP) XAML_CLOSE, 5);
    double sm = modern_rate(rt, "seq_invoke.xaml", XAML_OPEN SEQ5(INVOKE) XAML_CLOSE, 5);
    double sl = legacy_rate(wfm_runtime_types(rt), path);
    wfm_runtime_destroy(rt);
    wf_libpath_destroy(path);
    if (!loop || !li || !lm || !c_ns || !si || !sm || !sl)
        return 1;

    printf("per native call (a While of 1000, loop overhead of %.0f ns/iteration removed):\n",
           base_ns);
    printf("  %-34s %10.1f ns\n", "Interop-hosted legacy leaf", interop_ns);
    printf("  %-34s %10.1f ns\n", "InvokeMethod", invoke_ns);
    printf("  %-34s %10.1f ns\n", "direct C call", c_ns);
    printf("  Interop / InvokeMethod  %.2fx   Interop / C  %.0fx   InvokeMethod / C  %.0fx\n",
           interop_ns / invoke_ns, interop_ns / c_ns, invoke_ns / c_ns);
    printf("5-activity sequence, workflows per CPU-second:\n");
    printf("  %-34s %10.0f\n", "all Interop (mixed)", si);
    printf("  %-34s %10.0f\n", "converted to InvokeMethod", sm);
    printf("  %-34s %10.0f\n", "legacy runtime, original XOML", sl);
    printf("  all-Interop / converted  %.1f%% (target >= 50%%; WF4's Interop: < 2%%)\n",
           100.0 * si / sm);
    printf("  all-Interop / legacy     %.2fx   converted / legacy  %.2fx\n", si / sl, sm / sl);
    return 0;
}

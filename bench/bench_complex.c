/* bench_complex.c — the WF4 paper's complex-workflow throughput: its "fractal" workflow of
 * depth d and a activities per sequence, generated for both runtimes (modern: a Flowchart per
 * level; legacy: the closest WF3 shape, a SequenceActivity with IfElse decisions, as WF3 has no
 * Flowchart), plus the paper's 100 nested sequences. Workflows per CPU-second and per wall
 * second, legacy and modern interleaved per repetition, and the activity counts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"
#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "../modern/wfm_runtime.h"
#include "bench_util.h"

enum { MAX_REPS = 5 };

/* Seconds per repetition and engine (quick mode: a few runs). */
#define BUDGET_S (bu_quick() ? 0.002 : 0.12)

/* ---- the generated workflows ------------------------------------------------------------ */

/* `a` no-ops (modern: empty Sequences, the paper's Comment). */
static void m_noops(wf_buf *b, int a)
{
    for (int i = 0; i < a; i++)
        wf_buf_adds(b, "<Sequence/>");
}

static void m_seq(wf_buf *b, int a)
{
    wf_buf_adds(b, "<Sequence>");
    m_noops(b, a);
    wf_buf_adds(b, "</Sequence>");
}

/* One level of the fractal: a Flowchart that resets its counter, runs a Parallel of three
 * sequences, a While of two iterations, a FlowDecision (its false side never taken), a
 * sequence that counts the level in Result, an If on Result and a FlowSwitch on Result mod 3
 * that runs one of three child Flowcharts (copies of this one; empty at the bottom).
 * Activities per level: 15 + 8a (8 sequences of a) plus the three children. */
static void m_level(wf_buf *b, int d, int a)
{
    if (d == 0) {
        wf_buf_adds(b, "<Flowchart/>");
        return;
    }
    wf_buf_addf(b,
                "<Flowchart><Flowchart.Variables><Variable x:TypeArguments=\"x:Int32\" "
                "Name=\"i%d\"/></Flowchart.Variables><Flowchart.StartNode><FlowStep>"
                "<Assign x:TypeArguments=\"x:Int32\" To=\"[i%d]\" Value=\"[0]\"/>"
                "<FlowStep.Next><FlowStep><Parallel>",
                d, d);
    for (int i = 0; i < 3; i++)
        m_seq(b, a);
    wf_buf_addf(b, "</Parallel><FlowStep.Next><FlowStep><While Condition=\"[i%d &lt; 2]\">"
                   "<Sequence>", d);
    m_noops(b, a);
    wf_buf_addf(b,
                "<Assign x:TypeArguments=\"x:Int32\" To=\"[i%d]\" Value=\"[i%d + 1]\"/>"
                "</Sequence></While><FlowStep.Next><FlowDecision Condition=\"[i%d = 2]\">"
                "<FlowDecision.True><FlowStep><Sequence>",
                d, d, d);
    m_noops(b, a);
    wf_buf_adds(b, "<Assign x:TypeArguments=\"x:Int32\" To=\"[Result]\" Value=\"[Result + 1]\"/>"
                   "</Sequence><FlowStep.Next><FlowStep><If Condition=\"[Result Mod 2 = 0]\">"
                   "<If.Then>");
    m_seq(b, a);
    wf_buf_adds(b, "</If.Then><If.Else>");
    m_seq(b, a);
    wf_buf_adds(b, "</If.Else></If><FlowStep.Next><FlowSwitch x:TypeArguments=\"x:Int32\" "
                   "Expression=\"[Result Mod 3]\"><FlowSwitch.Default><FlowStep>");
    m_level(b, d - 1, a);
    wf_buf_adds(b, "</FlowStep></FlowSwitch.Default><FlowStep x:Key=\"0\">");
    m_level(b, d - 1, a);
    wf_buf_adds(b, "</FlowStep><FlowStep x:Key=\"1\">");
    m_level(b, d - 1, a);
    wf_buf_adds(b, "</FlowStep></FlowSwitch></FlowStep.Next></FlowStep></FlowStep.Next>"
                   "</FlowStep></FlowDecision.True><FlowDecision.False><FlowStep>");
    m_seq(b, a);
    wf_buf_adds(b, "</FlowStep></FlowDecision.False></FlowDecision></FlowStep.Next></FlowStep>"
                   "</FlowStep.Next></FlowStep></FlowStep.Next></FlowStep></Flowchart.StartNode>"
                   "</Flowchart>");
}

#define XAML_OPEN                                                                                  \
    "<Activity x:Class=\"Bench.Complex\" "                                                         \
    "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "                           \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"                                    \
    "<x:Members><x:Property Name=\"Result\" Type=\"OutArgument(x:Int32)\"/></x:Members>"

static char *modern_fractal(int d, int a)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(&b, XAML_OPEN);
    m_level(&b, d, a);
    wf_buf_adds(&b, "</Activity>");
    return wf_buf_detach(&b, NULL);
}

/* 15 + 8a per level, three children per level, an empty Flowchart at the bottom. */
static long modern_fractal_count(int d, int a)
{
    return d == 0 ? 1 : 15 + 8L * a + 3 * modern_fractal_count(d - 1, a);
}

/* 100 nested Sequences around one no-op (the paper's extreme-nesting case). */
static char *modern_nested(int n)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(&b, XAML_OPEN);
    for (int i = 0; i < n; i++)
        wf_buf_adds(&b, "<Sequence>");
    wf_buf_adds(&b, "<Assign x:TypeArguments=\"x:Int32\" To=\"[Result]\" Value=\"[Result + 1]\"/>");
    for (int i = 0; i < n; i++)
        wf_buf_adds(&b, "</Sequence>");
    wf_buf_adds(&b, "</Activity>");
    return wf_buf_detach(&b, NULL);
}

/* Legacy activity names are unique per workflow. */
typedef struct lgen {
    wf_buf b;
    long serial;
} lgen;

static void l_noops(lgen *g, int a)
{
    for (int i = 0; i < a; i++)
        wf_buf_addf(&g->b, "<CodeActivity x:Name=\"n%ld\" ExecuteCode=\"Noop\"/>", g->serial++);
}

static void l_seq_open(lgen *g)
{
    wf_buf_addf(&g->b, "<SequenceActivity x:Name=\"s%ld\">", g->serial++);
}

static void l_seq(lgen *g, int a)
{
    l_seq_open(g);
    l_noops(g, a);
    wf_buf_adds(&g->b, "</SequenceActivity>");
}

/* A branch of an IfElseActivity; cond NULL for the last (else) branch. */
static void l_branch_open(lgen *g, const char *cond)
{
    wf_buf_addf(&g->b, "<IfElseBranchActivity x:Name=\"b%ld\">", g->serial++);
    if (cond)
        wf_buf_addf(&g->b, "<IfElseBranchActivity.Condition><CodeCondition Condition=\"%s\"/>"
                           "</IfElseBranchActivity.Condition>", cond);
}

/* The same level for WF3: the Flowchart becomes a SequenceActivity (WF3 has no Flowchart),
 * the FlowDecision an IfElseActivity of two branches, the FlowSwitch an IfElseActivity of
 * three; the counter is the code-beside property I (reset by each level before its While),
 * the level count is Count. Activities per level: 24 + 8a plus the three children. */
static void l_level(lgen *g, int d, int a)
{
    l_seq_open(g);
    if (d == 0) {
        wf_buf_adds(&g->b, "</SequenceActivity>");
        return;
    }
    wf_buf_addf(&g->b, "<CodeActivity x:Name=\"r%ld\" ExecuteCode=\"ResetI\"/>"
                       "<ParallelActivity x:Name=\"p%ld\">", g->serial, g->serial + 1);
    g->serial += 2;
    for (int i = 0; i < 3; i++)
        l_seq(g, a);
    wf_buf_addf(&g->b, "</ParallelActivity><WhileActivity x:Name=\"w%ld\"><WhileActivity.Condition>"
                       "<CodeCondition Condition=\"IBelowTwo\"/></WhileActivity.Condition>",
                g->serial++);
    l_seq_open(g);
    l_noops(g, a);
    wf_buf_addf(&g->b, "<CodeActivity x:Name=\"t%ld\" ExecuteCode=\"TickI\"/></SequenceActivity>"
                       "</WhileActivity><IfElseActivity x:Name=\"d%ld\">", g->serial,
                g->serial + 1);
    g->serial += 2;
    l_branch_open(g, "IIsTwo");
    l_seq_open(g);
    l_noops(g, a);
    wf_buf_addf(&g->b, "<CodeActivity x:Name=\"c%ld\" ExecuteCode=\"Tick\"/></SequenceActivity>"
                       "<IfElseActivity x:Name=\"e%ld\">", g->serial, g->serial + 1);
    g->serial += 2;
    l_branch_open(g, "CountEven");
    l_seq(g, a);
    wf_buf_adds(&g->b, "</IfElseBranchActivity>");
    l_branch_open(g, NULL);
    l_seq(g, a);
    wf_buf_addf(&g->b, "</IfElseBranchActivity></IfElseActivity><IfElseActivity x:Name=\"k%ld\">",
                g->serial++);
    static const char *const picks[] = {"CountMod3Is0", "CountMod3Is1", NULL};
    for (int i = 0; i < 3; i++) {
        l_branch_open(g, picks[i]);
        l_level(g, d - 1, a);
        wf_buf_adds(&g->b, "</IfElseBranchActivity>");
    }
    wf_buf_adds(&g->b, "</IfElseActivity></IfElseBranchActivity>");
    l_branch_open(g, NULL);
    l_seq(g, a);
    wf_buf_adds(&g->b, "</IfElseBranchActivity></IfElseActivity></SequenceActivity>");
}

#define XOML_OPEN                                                                                  \
    "<SequentialWorkflowActivity x:Class=\"Bench.Flow\" x:Name=\"Flow\" "                          \
    "xmlns:ns0=\"clr-namespace:Bench;Assembly=wfbench\" "                                          \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "                                    \
    "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">"
#define XOML_CLOSE "</SequentialWorkflowActivity>"

static char *legacy_fractal(int d, int a)
{
    lgen g = {.serial = 0};
    wf_buf_init(&g.b);
    wf_buf_adds(&g.b, XOML_OPEN);
    l_level(&g, d, a);
    wf_buf_adds(&g.b, XOML_CLOSE);
    return wf_buf_detach(&g.b, NULL);
}

static char *legacy_nested(int n)
{
    lgen g = {.serial = 0};
    wf_buf_init(&g.b);
    wf_buf_adds(&g.b, XOML_OPEN);
    for (int i = 0; i < n; i++)
        l_seq_open(&g);
    wf_buf_adds(&g.b, "<CodeActivity x:Name=\"tick\" ExecuteCode=\"Tick\"/>");
    for (int i = 0; i < n; i++)
        wf_buf_adds(&g.b, "</SequenceActivity>");
    wf_buf_adds(&g.b, XOML_CLOSE);
    return wf_buf_detach(&g.b, NULL);
}

/* ---- running --------------------------------------------------------------------------- */

typedef struct env {
    wfm_runtime *rt;
    wf_types *types;
    wf_libpath *libpath;
} env;

typedef struct variation {
    const char *label;
    int depth, per_seq; /* depth 0: the nested-sequence case */
    bool quick;         /* run in quick mode too */
} variation;

/* The paper's variations (depth, activities per sequence), and its 100 nested sequences. */
static const variation variations[] = {
    {"depth 1, 1 per sequence", 1, 1, true},  {"depth 1, 5 per sequence", 1, 5, true},
    {"depth 3, 1 per sequence", 3, 1, false}, {"depth 3, 5 per sequence", 3, 5, false},
    {"depth 5, 1 per sequence", 5, 1, false}, {"depth 5, 5 per sequence", 5, 5, false},
    {"depth 7, 1 per sequence", 7, 1, false}, {"100 nested sequences", 0, 100, true},
};
enum { VARIATIONS = sizeof variations / sizeof variations[0] };

/* One modern run; Result must be `expect` (one per level run). */
static int modern_once(wfm_runtime *rt, wfm_definition *def, int32_t expect)
{
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    int rc = wfm_instance_create(rt, def, &inst, &err) != WF_OK ||
             wfm_instance_run(inst, &err) != WF_OK;
    if (rc) {
        fprintf(stderr, "bench_complex: modern: %s\n", err.message);
    } else if (wfm_instance_state_get(inst) != WFM_INSTANCE_CLOSED) {
        fprintf(stderr, "bench_complex: modern ended %s\n",
                wfm_instance_state_name(wfm_instance_state_get(inst)));
        rc = 1;
    } else {
        const wf_value *r = wfm_instance_output(inst, "Result");
        if (!r || r->type->kind != WF_K_INT32 || r->u.i32 != expect) {
            fprintf(stderr, "bench_complex: modern Result is not %d\n", (int)expect);
            rc = 1;
        }
    }
    wfm_instance_destroy(inst);
    return rc;
}

static int legacy_once(const wfl_definition *def, int32_t expect)
{
    wfl_exec_opts o = WFL_EXEC_OPTS_INIT;
    wfl_exec *ex = NULL;
    wf_error err = WF_ERROR_INIT;
    wfl_exec_state st = WFL_EXEC_CREATED;
    wf_value v = wf_null();
    int rc = wfl_exec_create(def, NULL, &o, &ex, &err) != WF_OK ||
             wfl_exec_run(ex, &st, &err) != WF_OK;
    if (rc) {
        fprintf(stderr, "bench_complex: legacy: %s\n", err.message);
    } else if (st != WFL_EXEC_CLOSED) {
        const wf_value *x = wfl_exec_exception(ex);
        fprintf(stderr, "bench_complex: legacy ended %s: %s\n", wfl_exec_state_name(st),
                x ? wf_value_str(x) : "");
        rc = 1;
    } else if (wfl_exec_output(ex, "Count", &v, &err) != WF_OK || v.type->kind != WF_K_INT32 ||
               v.u.i32 != expect) {
        fprintf(stderr, "bench_complex: legacy Count is not %d\n", (int)expect);
        rc = 1;
    }
    wf_value_release(&v);
    wfl_exec_destroy(ex);
    return rc;
}

typedef struct loaded {
    wfm_definition *mdef;
    wfl_definition *ldef;
    long modern_acts;
    size_t modern_nodes, legacy_acts;
    int32_t expect;
    double cold_ms[2]; /* load + first run, CPU ms: legacy, modern */
} loaded;

static int load(env *e, const variation *v, loaded *out)
{
    int nested = v->depth == 0;
    char *mt = nested ? modern_nested(v->per_seq) : modern_fractal(v->depth, v->per_seq);
    char *lt = nested ? legacy_nested(v->per_seq) : legacy_fractal(v->depth, v->per_seq);
    wf_error err = WF_ERROR_INIT;
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = e->types;
    lo.libpath = e->libpath;
    lo.no_auto_rules = true;
    int rc = !mt || !lt;
    out->expect = nested ? 1 : v->depth;
    double c0 = bu_cpu();
    if (!rc && wfl_definition_load_mem(&lo, "fractal.xoml", lt, strlen(lt), &out->ldef, &err) !=
                   WF_OK) {
        fprintf(stderr, "bench_complex: %s: legacy load: %u:%u: %s\n", v->label, err.line,
                err.col, err.message);
        rc = 1;
    }
    rc = rc || legacy_once(out->ldef, out->expect);
    double c1 = bu_cpu();
    if (!rc && wfm_runtime_load_mem(e->rt, "fractal.xaml", mt, strlen(mt), &out->mdef, NULL,
                                    &err) != WF_OK) {
        fprintf(stderr, "bench_complex: %s: modern load: %u:%u: %s\n", v->label, err.line,
                err.col, err.message);
        rc = 1;
    }
    rc = rc || modern_once(e->rt, out->mdef, out->expect);
    double c2 = bu_cpu();
    if (!rc) {
        out->cold_ms[0] = (c1 - c0) * 1e3;
        out->cold_ms[1] = (c2 - c1) * 1e3;
        out->modern_acts = nested ? v->per_seq + 1 : modern_fractal_count(v->depth, v->per_seq);
        out->modern_nodes = wfm_definition_node_count(out->mdef);
        out->legacy_acts = wfl_definition_activity_count(out->ldef);
    }
    wf_free(mt);
    wf_free(lt);
    return rc;
}

/* Runs engine 0 (legacy) or 1 (modern) for about BUDGET_S; workflows per CPU and wall second. */
static int measure(env *e, const loaded *l, int engine, double *cpu_rate, double *wall_rate)
{
    long n = 0;
    double w0 = bu_now(), c0 = bu_cpu(), w1 = w0;
    do {
        if (engine ? modern_once(e->rt, l->mdef, l->expect) : legacy_once(l->ldef, l->expect))
            return 1;
        n++;
        w1 = bu_now();
    } while (w1 - w0 < BUDGET_S);
    double c1 = bu_cpu();
    *cpu_rate = (double)n / (c1 > c0 ? c1 - c0 : 1e-9);
    *wall_rate = (double)n / (w1 - w0);
    return 0;
}

typedef struct row {
    const variation *v;
    loaded l;
    bu_stat cpu[2], wall[2], ratio;
} row;

static int run_variation(env *e, const variation *v, row *r)
{
    r->v = v;
    if (load(e, v, &r->l))
        return 1;
    double cpu[2][MAX_REPS], wall[2][MAX_REPS], ratio[MAX_REPS];
    int reps = bu_reps(MAX_REPS);
    double ignore_c, ignore_w;
    /* Warm-up: one budget of each engine. */
    if (measure(e, &r->l, 0, &ignore_c, &ignore_w) || measure(e, &r->l, 1, &ignore_c, &ignore_w))
        return 1;
    for (int rep = 0; rep < reps; rep++) {
        for (int eng = 0; eng < 2; eng++) {
            int which = rep % 2 ? 1 - eng : eng; /* alternate which engine goes first */
            if (measure(e, &r->l, which, &cpu[which][rep], &wall[which][rep]))
                return 1;
        }
        ratio[rep] = cpu[1][rep] / cpu[0][rep];
    }
    for (int eng = 0; eng < 2; eng++) {
        r->cpu[eng] = bu_summary(cpu[eng], reps);
        r->wall[eng] = bu_summary(wall[eng], reps);
    }
    r->ratio = bu_summary(ratio, reps);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    char dir[1024];
    bu_lib_dir(argv[0], dir, sizeof dir);
    env e = {0};
    wf_error err = WF_ERROR_INIT;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    e.types = wf_types_create();
    if (!e.types || wf_libpath_create(dir, &e.libpath, &err) != WF_OK ||
        wfm_runtime_create(&o, &e.rt, &err) != WF_OK) {
        fprintf(stderr, "bench_complex: setup failed (library path %s): %s\n", dir, err.message);
        return 1;
    }
    row rows[VARIATIONS];
    int nrows = 0, rc = 0;
    for (int i = 0; i < VARIATIONS && !rc; i++) {
        if (bu_quick() && !variations[i].quick)
            continue;
        memset(&rows[nrows], 0, sizeof rows[nrows]);
        rc = run_variation(&e, &variations[i], &rows[nrows]);
        nrows++;
    }
    bu_md("## Complex workflows: workflows per second, one thread\n\n"
          "The paper's fractal workflow, generated: each level of depth d is a Flowchart that\n"
          "resets a counter, runs a Parallel of three sequences, a While of two iterations, a\n"
          "FlowDecision (its false side never taken), a sequence that counts the level, an If\n"
          "and a FlowSwitch that runs one of three child Flowcharts, copies of the level (empty at\n"
          "the bottom); each of the 8 sequences of a level holds a no-ops (modern: empty\n"
          "Sequences, the paper's Comment; legacy: CodeActivity with an empty handler). So one\n"
          "path per decision runs: a small part of the definition per instance. WF3 has no\n"
          "Flowchart: the legacy workflow is the closest WF3 shape, each level a SequenceActivity\n"
          "with the decision and the switch as IfElseActivity (two and three branches), code\n"
          "conditions on code-beside properties. Activities: modern 15 + 8a per level plus three\n"
          "children (nodes: as the runtime counts them, FlowSteps and the root included); legacy\n"
          "as the loader counts them (the root, then 24 + 8a per level, branches included). The last row is\n"
          "the paper's extreme nesting case, 100 nested sequences around one activity. Each\n"
          "repetition runs each engine for %.2f s (the order alternates); median (min–max) of\n"
          "%d repetitions after a warm-up; the ratio is per repetition (CPU-time rates). Cold: the\n"
          "definition's load and its first instance, CPU ms, one measurement.\n\n"
          "| workflow | activities legacy / modern (nodes) | legacy wf/CPU-s | modern wf/CPU-s "
          "| modern / legacy | legacy wf/s (wall) | modern wf/s (wall) | cold ms legacy / "
          "modern |\n|---|---|---|---|---|---|---|---|\n",
          BUDGET_S, bu_reps(MAX_REPS));
    for (int i = 0; i < nrows && !rc; i++) {
        row *r = &rows[i];
        char c[4][64], w[2][64], q[64];
        printf("%-26s acts L %zu / M %ld (%zu nodes): legacy %9.0f  modern %9.0f  wf/CPU-s  "
               "(x%.1f)\n",
               r->v->label, r->l.legacy_acts, r->l.modern_acts, r->l.modern_nodes,
               r->cpu[0].med, r->cpu[1].med, r->ratio.med);
        bu_md("| %s | %zu / %ld (%zu) | %s | %s | %s | %s | %s | %.1f / %.1f |\n", r->v->label,
              r->l.legacy_acts, r->l.modern_acts, r->l.modern_nodes,
              bu_cell(r->cpu[0], c[0], sizeof c[0]), bu_cell(r->cpu[1], c[1], sizeof c[1]),
              bu_cell(r->ratio, q, sizeof q), bu_cell(r->wall[0], w[0], sizeof w[0]),
              bu_cell(r->wall[1], w[1], sizeof w[1]), r->l.cold_ms[0], r->l.cold_ms[1]);
        bu_json("bench_complex", "complex", r->v->label, "legacy", "workflows per CPU-second",
                r->cpu[0]);
        bu_json("bench_complex", "complex", r->v->label, "modern", "workflows per CPU-second",
                r->cpu[1]);
        bu_json("bench_complex", "complex", r->v->label, "legacy", "workflows/s", r->wall[0]);
        bu_json("bench_complex", "complex", r->v->label, "modern", "workflows/s", r->wall[1]);
        bu_json("bench_complex", "complex", r->v->label, "modern / legacy", "x", r->ratio);
        bu_json("bench_complex", "complex", r->v->label, "legacy", "activities",
                bu_one((double)r->l.legacy_acts));
        bu_json("bench_complex", "complex", r->v->label, "modern", "activities",
                bu_one((double)r->l.modern_acts));
        bu_json("bench_complex", "complex", r->v->label, "modern", "nodes",
                bu_one((double)r->l.modern_nodes));
        bu_json("bench_complex", "complex", r->v->label, "cold legacy", "ms",
                bu_one(r->l.cold_ms[0]));
        bu_json("bench_complex", "complex", r->v->label, "cold modern", "ms",
                bu_one(r->l.cold_ms[1]));
    }
    bu_md("\nSeed: the paper prints no figures for this test (a log-scale chart: WF4 several\n"
          "orders of magnitude above WF3); its depth 7 with 1 activity per sequence has ~29K\n"
          "activities%s.\n\n",
          bu_quick() ? "" : " (ours: the depth 7 row)");
    for (int i = 0; i < nrows; i++) {
        wfm_definition_release(rows[i].l.mdef);
        wfl_definition_destroy(rows[i].l.ldef);
    }
    wfm_runtime_destroy(e.rt);
    wf_libpath_destroy(e.libpath);
    wf_types_destroy(e.types);
    return rc;
}

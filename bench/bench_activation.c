/* bench_activation.c — the paper's activation-latency and memory tables: cold activation
 * (parse, validate, compile, first instance run to the end) and warm activation (a new
 * instance of a loaded definition, run to the end) for 1, 100 and 1,000 activities, legacy and
 * modern; the heap cost of 1,001 small definitions (each instantiated and run once) and of one
 * large generated definition (~33K nodes) per node. Heap = glibc's mallinfo2 bytes in use. */
#include <malloc.h> /* mallinfo2 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../common/wf_native.h"
#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "../modern/wfm_runtime.h"
#include "bench_util.h"

enum { MAX_REPS = 15 };

static size_t heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* ---- generated workflows ------------------------------------------------------------------- */

/* Modern: a Sequence of `n` activities (empty Sequences, the paper's Comment), class `cls`. */
static char *modern_seq(const char *cls, int n)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addf(&b,
                "<Activity x:Class=\"%s\" "
                "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "
                "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\"><Sequence>",
                cls);
    for (int i = 0; i < n; i++)
        wf_buf_adds(&b, "<Sequence/>");
    wf_buf_adds(&b, "</Sequence></Activity>");
    return wf_buf_detach(&b, NULL);
}

/* Legacy: a SequentialWorkflowActivity of `n` CodeActivity no-ops (code-beside Bench.Flow). */
static char *legacy_seq(int n)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(&b, "<SequentialWorkflowActivity x:Class=\"Bench.Flow\" x:Name=\"Flow\" "
                    "xmlns:ns0=\"clr-namespace:Bench;Assembly=wfbench\" "
                    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
                    "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">");
    for (int i = 0; i < n; i++)
        wf_buf_addf(&b, "<CodeActivity x:Name=\"a%d\" ExecuteCode=\"Noop\"/>", i);
    wf_buf_adds(&b, "</SequentialWorkflowActivity>");
    return wf_buf_detach(&b, NULL);
}

/* The large workflow: `blocks` nested blocks of six activities each (a Sequence holding a
 * no-op, a Sequence of two no-ops and a counting step), so ~6 nodes per block. */
/* `tag` names the class: a text never loaded before (the runtime caches definitions by text). */
static char *modern_large(int blocks, int tag)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addf(&b, "<Activity x:Class=\"Bench.Large%d\" "
                    "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "
                    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"
                    "<x:Members><x:Property Name=\"Result\" Type=\"OutArgument(x:Int32)\"/>"
                    "</x:Members><Sequence>",
                tag);
    for (int i = 0; i < blocks; i++)
        wf_buf_adds(&b, "<Sequence><Sequence/><Sequence><Sequence/><Sequence/></Sequence>"
                        "<Assign x:TypeArguments=\"x:Int32\" To=\"[Result]\" "
                        "Value=\"[Result + 1]\"/></Sequence>");
    wf_buf_adds(&b, "</Sequence></Activity>");
    return wf_buf_detach(&b, NULL);
}

static char *legacy_large(int blocks)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(&b, "<SequentialWorkflowActivity x:Class=\"Bench.Flow\" x:Name=\"Flow\" "
                    "xmlns:ns0=\"clr-namespace:Bench;Assembly=wfbench\" "
                    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
                    "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">");
    for (int i = 0; i < blocks; i++)
        wf_buf_addf(&b,
                    "<SequenceActivity x:Name=\"s%d\"><CodeActivity x:Name=\"n%d\" "
                    "ExecuteCode=\"Noop\"/><SequenceActivity x:Name=\"t%d\"><CodeActivity "
                    "x:Name=\"u%d\" ExecuteCode=\"Noop\"/><CodeActivity x:Name=\"v%d\" "
                    "ExecuteCode=\"Noop\"/></SequenceActivity><CodeActivity x:Name=\"w%d\" "
                    "ExecuteCode=\"Tick\"/></SequenceActivity>",
                    i, i, i, i, i, i);
    wf_buf_adds(&b, "</SequentialWorkflowActivity>");
    return wf_buf_detach(&b, NULL);
}

/* ---- running --------------------------------------------------------------------------------- */

typedef struct env {
    wfm_runtime *rt;
    wf_types *types;
    wf_libpath *libpath;
} env;

static int modern_instance(wfm_runtime *rt, wfm_definition *def)
{
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    int rc = wfm_instance_create(rt, def, &inst, &err) != WF_OK ||
             wfm_instance_run(inst, &err) != WF_OK ||
             wfm_instance_state_get(inst) != WFM_INSTANCE_CLOSED;
    if (rc)
        fprintf(stderr, "bench_activation: modern run: %s\n", err.message);
    wfm_instance_destroy(inst);
    return rc;
}

static int modern_load(env *e, const char *text, wfm_definition **def)
{
    wf_error err = WF_ERROR_INIT;
    if (wfm_runtime_load_mem(e->rt, "gen.xaml", text, strlen(text), def, NULL, &err) != WF_OK) {
        fprintf(stderr, "bench_activation: modern load: %u:%u: %s\n", err.line, err.col,
                err.message);
        return 1;
    }
    return 0;
}

static int legacy_instance(const wfl_definition *def)
{
    wfl_exec_opts o = WFL_EXEC_OPTS_INIT;
    wfl_exec *ex = NULL;
    wf_error err = WF_ERROR_INIT;
    wfl_exec_state st = WFL_EXEC_CREATED;
    int rc = wfl_exec_create(def, NULL, &o, &ex, &err) != WF_OK ||
             wfl_exec_run(ex, &st, &err) != WF_OK || st != WFL_EXEC_CLOSED;
    if (rc)
        fprintf(stderr, "bench_activation: legacy run: %s\n", err.message);
    wfl_exec_destroy(ex);
    return rc;
}

static int legacy_load(env *e, const char *text, wfl_definition **def)
{
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = e->types;
    lo.libpath = e->libpath;
    lo.no_auto_rules = true;
    wf_error err = WF_ERROR_INIT;
    if (wfl_definition_load_mem(&lo, "gen.xoml", text, strlen(text), def, &err) != WF_OK) {
        fprintf(stderr, "bench_activation: legacy load: %u:%u: %s\n", err.line, err.col,
                err.message);
        return 1;
    }
    return 0;
}

/* ---- activation ------------------------------------------------------------------------------ */

static int serial;

/* Cold: µs to load a definition never seen (its class name is new, so no cache hit) and run
 * its first instance. */
static int cold_modern(env *e, int acts, double *us)
{
    char cls[64];
    snprintf(cls, sizeof cls, "Bench.Cold%d", serial++);
    char *text = modern_seq(cls, acts);
    wfm_definition *def = NULL;
    double t0 = bu_cpu();
    int rc = !text || modern_load(e, text, &def) || modern_instance(e->rt, def);
    *us = (bu_cpu() - t0) * 1e6;
    wfm_definition_release(def);
    wf_free(text);
    return rc;
}

static int cold_legacy(env *e, int acts, double *us)
{
    char *text = legacy_seq(acts);
    wfl_definition *def = NULL;
    double t0 = bu_cpu();
    int rc = !text || legacy_load(e, text, &def) || legacy_instance(def);
    *us = (bu_cpu() - t0) * 1e6;
    wfl_definition_destroy(def);
    wf_free(text);
    return rc;
}

typedef struct act_row {
    bu_stat cold[2], warm[2];
} act_row;

static int activation(env *e, int acts, act_row *row)
{
    double cold[2][MAX_REPS], warm[2][MAX_REPS];
    int reps = bu_reps(MAX_REPS), rc = 0;
    char *mt = modern_seq("Bench.Warm", acts), *lt = legacy_seq(acts);
    wfm_definition *mdef = NULL;
    wfl_definition *ldef = NULL;
    rc = !mt || !lt || modern_load(e, mt, &mdef) || legacy_load(e, lt, &ldef);
    long warm_n = bu_count(acts >= 1000 ? 200 : acts >= 100 ? 2000 : 20000, 5);
    double dummy;
    if (!rc) /* warm up both paths */
        rc = cold_modern(e, acts, &dummy) || cold_legacy(e, acts, &dummy) ||
             modern_instance(e->rt, mdef) || legacy_instance(ldef);
    for (int rep = 0; rep < reps && !rc; rep++) {
        rc = cold_modern(e, acts, &cold[1][rep]) || cold_legacy(e, acts, &cold[0][rep]);
        double t0 = bu_cpu();
        for (long i = 0; i < warm_n && !rc; i++)
            rc = modern_instance(e->rt, mdef);
        double t1 = bu_cpu();
        for (long i = 0; i < warm_n && !rc; i++)
            rc = legacy_instance(ldef);
        double t2 = bu_cpu();
        warm[1][rep] = (t1 - t0) * 1e6 / (double)warm_n;
        warm[0][rep] = (t2 - t1) * 1e6 / (double)warm_n;
    }
    for (int s = 0; s < 2 && !rc; s++) {
        row->cold[s] = bu_summary(cold[s], reps);
        row->warm[s] = bu_summary(warm[s], reps);
    }
    wfm_definition_release(mdef);
    wfl_definition_destroy(ldef);
    wf_free(mt);
    wf_free(lt);
    return rc;
}

/* ---- memory ---------------------------------------------------------------------------------- */

enum { DEFS = 1001 };

/* Heap bytes per definition beyond the first of 1,001 one-activity definitions, each loaded,
 * instantiated and run once, all kept. */
static int defs_memory(env *e, double *modern_per, double *legacy_per)
{
    static wfm_definition *md[DEFS];
    static wfl_definition *ld[DEFS];
    int rc = 0;
    size_t h0 = 0;
    for (int i = 0; i < DEFS && !rc; i++) {
        char cls[64];
        snprintf(cls, sizeof cls, "Bench.Def%d", i);
        char *text = modern_seq(cls, 1);
        rc = !text || modern_load(e, text, &md[i]) || modern_instance(e->rt, md[i]);
        wf_free(text);
        if (i == 0)
            h0 = heap_bytes();
    }
    size_t h1 = heap_bytes();
    char *lt = legacy_seq(1);
    size_t h2 = 0;
    for (int i = 0; i < DEFS && !rc; i++) {
        rc = !lt || legacy_load(e, lt, &ld[i]) || legacy_instance(ld[i]);
        if (i == 0)
            h2 = heap_bytes();
    }
    size_t h3 = heap_bytes();
    wf_free(lt);
    *modern_per = ((double)h1 - (double)h0) / (DEFS - 1);
    *legacy_per = ((double)h3 - (double)h2) / (DEFS - 1);
    for (int i = 0; i < DEFS; i++) {
        wfm_definition_release(md[i]);
        wfl_definition_destroy(ld[i]);
        md[i] = NULL;
        ld[i] = NULL;
    }
    return rc;
}

enum { LARGE_REPS = 5 };

/* One measurement of the large definition: heap kept by each model's loaded definition after
 * its first run, CPU ms of the load alone and of the load plus the first run. */
typedef struct large_result {
    size_t nodes, legacy_acts;
    double modern_bytes, legacy_bytes;
    double modern_load_ms, legacy_load_ms, modern_cold_ms, legacy_cold_ms;
} large_result;

static int large_memory(env *e, int blocks, int tag, large_result *out)
{
    char *mt = modern_large(blocks, tag), *lt = legacy_large(blocks);
    wfm_definition *mdef = NULL;
    wfl_definition *ldef = NULL;
    int rc = !mt || !lt;
    size_t h0 = heap_bytes();
    double c0 = bu_cpu();
    rc = rc || modern_load(e, mt, &mdef);
    double cl = bu_cpu();
    rc = rc || modern_instance(e->rt, mdef);
    double c1 = bu_cpu();
    size_t h1 = heap_bytes();
    rc = rc || legacy_load(e, lt, &ldef);
    double cl2 = bu_cpu();
    rc = rc || legacy_instance(ldef);
    double c2 = bu_cpu();
    size_t h2 = heap_bytes();
    if (!rc) {
        out->nodes = wfm_definition_node_count(mdef);
        out->legacy_acts = (size_t)blocks * 6 + 1;
        out->modern_bytes = (double)h1 - (double)h0;
        out->legacy_bytes = (double)h2 - (double)h1;
        out->modern_load_ms = (cl - c0) * 1e3;
        out->legacy_load_ms = (cl2 - c1) * 1e3;
        out->modern_cold_ms = (c1 - c0) * 1e3;
        out->legacy_cold_ms = (c2 - c1) * 1e3;
    }
    wfm_definition_release(mdef);
    wfl_definition_destroy(ldef);
    wf_free(mt);
    wf_free(lt);
    return rc;
}

/* The large definition's figures over its repetitions (after a warm-up). */
typedef struct large_stats {
    size_t nodes;
    bu_stat per_node, per_act, smaller, load[2], cold[2]; /* [0] legacy, [1] modern */
    double modern_mb, legacy_mb;
} large_stats;

static int large_reps(env *e, int blocks, large_stats *out)
{
    double pn[LARGE_REPS], pa[LARGE_REPS], sm[LARGE_REPS], ld[2][LARGE_REPS], cd[2][LARGE_REPS];
    int reps = bu_reps(LARGE_REPS);
    large_result r = {0};
    int rc = large_memory(e, blocks, 0, &r); /* warm-up */
    for (int i = 0; i < reps && !rc; i++) {
        rc = large_memory(e, blocks, i + 1, &r);
        pn[i] = r.modern_bytes / (double)r.nodes;
        pa[i] = r.legacy_bytes / (double)r.legacy_acts;
        sm[i] = 100.0 * (1.0 - r.modern_bytes / r.legacy_bytes);
        ld[0][i] = r.legacy_load_ms;
        ld[1][i] = r.modern_load_ms;
        cd[0][i] = r.legacy_cold_ms;
        cd[1][i] = r.modern_cold_ms;
    }
    if (rc)
        return rc;
    out->nodes = r.nodes;
    out->per_node = bu_summary(pn, reps);
    out->per_act = bu_summary(pa, reps);
    out->smaller = bu_summary(sm, reps);
    for (int k = 0; k < 2; k++) {
        out->load[k] = bu_summary(ld[k], reps);
        out->cold[k] = bu_summary(cd[k], reps);
    }
    out->modern_mb = out->per_node.med * (double)r.nodes / 1e6;
    out->legacy_mb = out->per_act.med * (double)r.legacy_acts / 1e6;
    return 0;
}

static const char *met(bool ok)
{
    return ok ? "met" : "not met";
}

/* The memory table (the paper's, and issue 23's targets beside each figure). */
static void memory_report(double mper, double lper, const large_stats *l)
{
    char a[64], b[64], c[64], d[64];
    double mb_m = mper * (DEFS - 1) / 1e6, mb_l = lper * (DEFS - 1) / 1e6;
    printf("1,001 definitions: +%.2f MB modern (%.0f B each), +%.2f MB legacy (%.0f B each)\n",
           mb_m, mper, mb_l, lper);
    printf("large: %zu nodes, modern %.0f B/node (load %.1f ms, cold %.1f ms), legacy %.0f "
           "B/activity (load %.1f ms, cold %.1f ms): modern %.0f%% smaller\n",
           l->nodes, l->per_node.med, l->load[1].med, l->cold[1].med, l->per_act.med,
           l->load[0].med, l->cold[0].med, l->smaller.med);
    bu_md("\n## Memory\n\n"
          "Heap bytes in use (glibc mallinfo2). 1,001 definitions: one-activity sequences,\n"
          "identical but for the name, each loaded, instantiated and run once and kept; the\n"
          "delta between the first and all 1,001 (the paper's table), one measurement. Large:\n"
          "one generated definition of ~6 activities per block (nested sequences, no-ops and a\n"
          "counting step), loaded and run once, then freed; median (min–max) of %d\n"
          "repetitions after a warm-up, both models in each. Cold load: CPU ms to parse,\n"
          "validate and compile it; then with its first run. Targets: <= 1 KB per small\n"
          "definition, <= 150 bytes per node, >= 75%% less than legacy, cold load <= 20 ms.\n\n"
          "| measure | legacy | modern | target | met? | seed WF3 | seed WF4 |\n"
          "|---|---|---|---|---|---|---|\n"
          "| 1,001 definitions, delta | %.2f MB (%s B each) | %.2f MB (%s B each) | <= 1 KB each "
          "| %s | 18 MB | 9 MB |\n",
          bu_reps(LARGE_REPS), mb_l, bu_num(lper, a, sizeof a), mb_m, bu_num(mper, b, sizeof b),
          met(mper <= 1024));
    bu_md("| large definition, %zu nodes | %.1f MB, %s B per activity | %.1f MB, %s B per node | "
          "<= 150 B per node | %s | | |\n",
          l->nodes, l->legacy_mb, bu_cell(l->per_act, a, sizeof a), l->modern_mb,
          bu_cell(l->per_node, b, sizeof b), met(l->per_node.med <= 150));
    bu_md("| large, modern smaller than legacy | | %s%% | >= 75%% | %s | | 79%% (depth 7, ~29K "
          "activities) |\n",
          bu_cell(l->smaller, a, sizeof a), met(l->smaller.med >= 75));
    bu_md("| large, cold load (ms) | %s | %s | <= 20 ms | %s | | |\n",
          bu_cell(l->load[0], a, sizeof a), bu_cell(l->load[1], b, sizeof b),
          met(l->load[1].med <= 20));
    bu_md("| large, cold load + first run (ms) | %s | %s | - | - | | |\n\n",
          bu_cell(l->cold[0], c, sizeof c), bu_cell(l->cold[1], d, sizeof d));
    bu_md("Where the bytes go (the definition's arena, which holds all of it, read with the\n"
          "internal layout on this workflow): a node record is 48 bytes (kind, parent, variables,\n"
          "line and column, index, and one pointer to what few nodes have: DisplayName, x:Name,\n"
          "attached data, the file of a tree's top node; the owner, the file and the dotted id\n"
          "are derived, the ids all at once into one heap block the first time something asks\n"
          "for one: tracking, a save, a message); its property records follow it, each only as\n"
          "long as its kind needs, after the type argument for the generic kinds (a Sequence's\n"
          "Activities 24 bytes; an Assign's type argument 8, To and Value 40 each, an expression\n"
          "or a literal: ~35 a node); the by-index table and children arrays 16; the Assign's\n"
          "two compiled expressions ~41 a node (one node in six: the expression records 32 bytes\n"
          "each, a constant 40, a slot 24, an operator 72, and their source text, kept for\n"
          "run-time messages); arena slack ~0. What is left would need the expressions shared or\n"
          "their source re-read from the file for messages (~4 a node). Cold load (perf, shares\n"
          "of the load at machine load ~4; callgrind: ~202M instructions a load, 234M before the\n"
          "parser compared keywords inline, the cache key became the FNV identity and the\n"
          "start-tag scan lost its per-byte calls): libxml2's parse ~14%%, our SAX handlers\n"
          "building the DOM with columns ~12%%, building the tree ~65%% (the expressions ~13%%,\n"
          "the arena's zeroing and page faults ~9%%, the mc:Ignorable and designer-member checks\n"
          "that first touch each element of the DOM, cold by then, ~7%%, mc:Ignorable's carriers\n"
          "found once per file ~3%%, numbering ~3%%), hashing the text ~4%% (the FNV identity,\n"
          "which is also the runtime's cache key, so the text is hashed once, and the SHA-256\n"
          "digest, with SHA-NI). The page faults, ~1,100 a load (the definition's arena, fresh\n"
          "from the kernel each time since the last one was freed), cost more as the machine gets\n"
          "busier: ~40%% of the load in one profile at load 8, most of the spread between quiet\n"
          "and loaded runs. <= 20 ms would need the parse streamed into the tree (no DOM of our\n"
          "own, written and then read back cold) and fewer bytes per node to fault in.\n\n");
    bu_json("bench_activation", "memory", "1,001 definitions", "legacy", "bytes per definition",
            bu_one(lper));
    bu_json("bench_activation", "memory", "1,001 definitions", "modern", "bytes per definition",
            bu_one(mper));
    bu_json("bench_activation", "memory", "large definition", "legacy", "bytes per activity",
            l->per_act);
    bu_json("bench_activation", "memory", "large definition", "modern", "bytes per node",
            l->per_node);
    bu_json("bench_activation", "memory", "large definition", "modern smaller", "%", l->smaller);
    bu_json("bench_activation", "memory", "large definition", "load modern", "ms", l->load[1]);
    bu_json("bench_activation", "memory", "large definition", "load legacy", "ms", l->load[0]);
    bu_json("bench_activation", "memory", "large definition", "cold modern", "ms", l->cold[1]);
    bu_json("bench_activation", "memory", "large definition", "cold legacy", "ms", l->cold[0]);
}

/* ---- the report ------------------------------------------------------------------------------ */

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
        fprintf(stderr, "bench_activation: setup failed (library path %s): %s\n", dir,
                err.message);
        return 1;
    }
    static const int sizes[] = {1, 100, 1000};
    act_row rows[3];
    int rc = 0;
    for (int i = 0; i < 3 && !rc; i++)
        rc = activation(&e, sizes[i], &rows[i]);
    double mper = 0, lper = 0;
    large_stats large = {0};
    if (!rc)
        rc = defs_memory(&e, &mper, &lper);
    if (!rc)
        rc = large_reps(&e, bu_quick() ? 50 : 5500, &large);
    if (!rc) {
        char a[64], b[64], c[64], d[64];
        printf("activation (CPU us): activities, cold legacy / modern, warm legacy / modern\n");
        bu_md("## Activation latency (CPU µs)\n\n"
              "Cold: load a definition never seen (parse, validate, compile) and run its first\n"
              "instance to the end; warm: a new instance of a loaded definition, created, run and\n"
              "destroyed. The workflow is a sequence of N no-ops (legacy CodeActivity, modern\n"
              "empty Sequence). Median (min–max) of %d repetitions. Targets: cold load\n"
              "of 1,000 activities <= 10 ms, warm <= 1 µs. The seed's activation figures are a\n"
              "chart (WCF service latency, not comparable).\n\n"
              "| activities | cold legacy | cold modern | warm legacy | warm modern |\n"
              "|---|---|---|---|---|\n",
              bu_reps(MAX_REPS));
        for (int i = 0; i < 3; i++) {
            char row[16];
            snprintf(row, sizeof row, "%d", sizes[i]);
            printf("  %5d %12.1f %12.1f %10.2f %10.2f\n", sizes[i], rows[i].cold[0].med,
                   rows[i].cold[1].med, rows[i].warm[0].med, rows[i].warm[1].med);
            bu_md("| %s | %s | %s | %s | %s |\n", row, bu_cell(rows[i].cold[0], a, sizeof a),
                  bu_cell(rows[i].cold[1], b, sizeof b), bu_cell(rows[i].warm[0], c, sizeof c),
                  bu_cell(rows[i].warm[1], d, sizeof d));
            bu_json("bench_activation", "activation", row, "cold legacy", "us", rows[i].cold[0]);
            bu_json("bench_activation", "activation", row, "cold modern", "us", rows[i].cold[1]);
            bu_json("bench_activation", "activation", row, "warm legacy", "us", rows[i].warm[0]);
            bu_json("bench_activation", "activation", row, "warm modern", "us", rows[i].warm[1]);
        }
        memory_report(mper, lper, &large);
    }
    wfm_runtime_destroy(e.rt);
    wf_libpath_destroy(e.libpath);
    wf_types_destroy(e.types);
    return rc;
}

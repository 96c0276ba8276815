/* bench_legacy.c — the WF4 paper's component table, WF3 side against WF4 side, in one run: each
 * case as XOML on our legacy runtime (code-beside from bench/libs/wfbench, built by bench.sh
 * beside this program, or .rules only) and as the equivalent XAML on the modern runtime.
 * Prints workflows per CPU-second for both, the modern/legacy speed-up, and the legacy
 * execution-context clones per workflow (the per-iteration cost the paper describes). */
#include <libgen.h> /* dirname */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h> /* getpid, unlink */

#include "../common/wf_mem.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"
#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "../modern/wfm_runtime.h"
#include "bench_util.h"

/* ---- the legacy (WF3) workflows: x:Class Bench.Flow from wfbench.activities.xml ---------- */
#define XOML_OPEN                                                                                  \
    "<SequentialWorkflowActivity x:Class=\"Bench.Flow\" x:Name=\"Flow\" "                          \
    "xmlns:ns0=\"clr-namespace:Bench;Assembly=wfbench\" "                                          \
    "xmlns:ns1=\"clr-namespace:System;Assembly=mscorlib\" "                                        \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "                                    \
    "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">"
#define XOML_CLOSE "</SequentialWorkflowActivity>"
#define NOOP(name) "<CodeActivity x:Name=\"" name "\" ExecuteCode=\"Noop\"/>"
#define TICK(name) "<CodeActivity x:Name=\"" name "\" ExecuteCode=\"Tick\"/>"
#define EMPTY_SEQ(name) "<SequenceActivity x:Name=\"" name "\"/>"
#define WHILE_OPEN(name, cond)                                                                     \
    "<WhileActivity x:Name=\"" name "\"><WhileActivity.Condition><CodeCondition Condition=\"" cond \
    "\"/></WhileActivity.Condition>"

/* The .rules file of the declarative loop (written to /tmp at start: the loader takes rules
 * from a file only): condition Below is this.Count < this.Limit; rule set Tick has one rule,
 * "if this.Count < this.Limit then this.Count = this.Count + 1", without chaining. */
#define CD "xmlns:ns0=\"clr-namespace:System.CodeDom;Assembly=System\""
#define THIS_PROP(p)                                                                               \
    "<ns0:CodePropertyReferenceExpression PropertyName=\"" p "\">"                                 \
    "<ns0:CodePropertyReferenceExpression.TargetObject><ns0:CodeThisReferenceExpression/>"         \
    "</ns0:CodePropertyReferenceExpression.TargetObject></ns0:CodePropertyReferenceExpression>"
#define COUNT_BELOW_LIMIT                                                                          \
    "<ns0:CodeBinaryOperatorExpression Operator=\"LessThan\" " CD ">"                              \
    "<ns0:CodeBinaryOperatorExpression.Left>" THIS_PROP("Count")                                   \
    "</ns0:CodeBinaryOperatorExpression.Left><ns0:CodeBinaryOperatorExpression.Right>"             \
    THIS_PROP("Limit") "</ns0:CodeBinaryOperatorExpression.Right>"                                 \
    "</ns0:CodeBinaryOperatorExpression>"
static const char rules_text[] =
    "<RuleDefinitions xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\" "
    "xmlns:p3=\"http://schemas.microsoft.com/winfx/2006/xaml\"><RuleDefinitions.Conditions>"
    "<RuleExpressionCondition Name=\"Below\"><RuleExpressionCondition.Expression>"
    COUNT_BELOW_LIMIT "</RuleExpressionCondition.Expression></RuleExpressionCondition>"
    "</RuleDefinitions.Conditions><RuleDefinitions.RuleSets>"
    "<RuleSet Name=\"Tick\" ChainingBehavior=\"None\" Description=\"{p3:Null}\"><RuleSet.Rules>"
    "<Rule Name=\"inc\" ReevaluationBehavior=\"Never\" Priority=\"0\" Description=\"{p3:Null}\" "
    "Active=\"True\"><Rule.Condition><RuleExpressionCondition Name=\"{p3:Null}\">"
    "<RuleExpressionCondition.Expression>" COUNT_BELOW_LIMIT
    "</RuleExpressionCondition.Expression></RuleExpressionCondition></Rule.Condition>"
    "<Rule.ThenActions><RuleStatementAction><RuleStatementAction.CodeDomStatement>"
    "<ns0:CodeAssignStatement LinePragma=\"{p3:Null}\" " CD "><ns0:CodeAssignStatement.Left>"
    THIS_PROP("Count") "</ns0:CodeAssignStatement.Left><ns0:CodeAssignStatement.Right>"
    "<ns0:CodeBinaryOperatorExpression Operator=\"Add\"><ns0:CodeBinaryOperatorExpression.Left>"
    THIS_PROP("Count") "</ns0:CodeBinaryOperatorExpression.Left>"
    "<ns0:CodeBinaryOperatorExpression.Right><ns0:CodePrimitiveExpression>"
    "<ns0:CodePrimitiveExpression.Value><ns1:Int32 "
    "xmlns:ns1=\"clr-namespace:System;Assembly=mscorlib\">1</ns1:Int32>"
    "</ns0:CodePrimitiveExpression.Value></ns0:CodePrimitiveExpression>"
    "</ns0:CodeBinaryOperatorExpression.Right></ns0:CodeBinaryOperatorExpression>"
    "</ns0:CodeAssignStatement.Right></ns0:CodeAssignStatement>"
    "</RuleStatementAction.CodeDomStatement></RuleStatementAction></Rule.ThenActions>"
    "</Rule></RuleSet.Rules></RuleSet></RuleDefinitions.RuleSets></RuleDefinitions>";

/* ---- the modern (WF4) workflows ------------------------------------------------------------- */
#define XAML_OPEN                                                                                  \
    "<Activity x:Class=\"Bench.Flow\" "                                                            \
    "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "                           \
    "xmlns:scg=\"clr-namespace:System.Collections.Generic;assembly=mscorlib\" "                    \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"                                    \
    "<x:Members><x:Property Name=\"Items\" Type=\"InArgument(scg:List(x:String))\"/>"              \
    "<x:Property Name=\"Result\" Type=\"OutArgument(x:Int32)\"/></x:Members>"
#define XAML_CLOSE "</Activity>"
#define INC "<Assign x:TypeArguments=\"x:Int32\" To=\"[Result]\" Value=\"[Result + 1]\"/>"

typedef struct bench_case {
    const char *name;
    const char *xoml;
    const char *xaml;
    int32_t expect;       /* legacy Count and modern Result after one run */
    bool items;           /* pass the 64-item list */
    bool given_id;        /* legacy: the host names the instance (no random id) */
    bool rules;           /* legacy: load with rules_text */
    long weight;          /* relative cost: the time budget is shared out by it */
} bench_case;

static const bench_case cases[] = {
    {"empty workflow", XOML_OPEN XOML_CLOSE, XAML_OPEN "<Sequence/>" XAML_CLOSE, 0, false,
     false, false, 1},
    {"empty, host-given id", XOML_OPEN XOML_CLOSE, XAML_OPEN "<Sequence/>" XAML_CLOSE, 0, false,
     true, false, 1},
    {"single activity", XOML_OPEN NOOP("a1") XOML_CLOSE,
     XAML_OPEN "<Sequence><Sequence/></Sequence>" XAML_CLOSE, 0, false, false, false, 1},
    {"sequence of 5 (code)", XOML_OPEN NOOP("a1") NOOP("a2") NOOP("a3") NOOP("a4") NOOP("a5")
     XOML_CLOSE,
     XAML_OPEN "<Sequence><Sequence/><Sequence/><Sequence/><Sequence/><Sequence/></Sequence>"
     XAML_CLOSE, 0, false, false, false, 1},
    {"sequence of 5 (empty)", XOML_OPEN EMPTY_SEQ("s1") EMPTY_SEQ("s2") EMPTY_SEQ("s3")
     EMPTY_SEQ("s4") EMPTY_SEQ("s5") XOML_CLOSE,
     XAML_OPEN "<Sequence><Sequence/><Sequence/><Sequence/><Sequence/><Sequence/></Sequence>"
     XAML_CLOSE, 0, false, false, false, 1},
    {"While x1000", XOML_OPEN WHILE_OPEN("loop", "Below") TICK("tick") "</WhileActivity>"
     XOML_CLOSE,
     XAML_OPEN "<While Condition=\"[Result &lt; 1000]\">" INC "</While>" XAML_CLOSE, 1000, false,
     false, false, 2},
    {"While x1000 (rules)", XOML_OPEN "<WhileActivity x:Name=\"loop\"><WhileActivity.Condition>"
     "<RuleConditionReference ConditionName=\"Below\"/></WhileActivity.Condition>"
     "<PolicyActivity x:Name=\"tick\"><PolicyActivity.RuleSetReference><RuleSetReference "
     "RuleSetName=\"Tick\"/></PolicyActivity.RuleSetReference></PolicyActivity></WhileActivity>"
     XOML_CLOSE,
     XAML_OPEN "<While Condition=\"[Result &lt; 1000]\">" INC "</While>" XAML_CLOSE, 1000, false,
     false, true, 2},
    {"Replicator par/PFE x64", XOML_OPEN
     "<ReplicatorActivity x:Name=\"rep\" ExecutionType=\"Parallel\" "
     "InitialChildData=\"{ActivityBind Flow,Path=Items}\">" TICK("tick") "</ReplicatorActivity>"
     XOML_CLOSE,
     XAML_OPEN "<ParallelForEach x:TypeArguments=\"x:String\" Values=\"[Items]\">"
     "<ActivityAction x:TypeArguments=\"x:String\"><ActivityAction.Argument>"
     "<DelegateInArgument x:TypeArguments=\"x:String\" Name=\"item\"/>"
     "</ActivityAction.Argument>" INC "</ActivityAction></ParallelForEach>" XAML_CLOSE,
     64, true, false, false, 2},
    {"Replicator seq/ForEach", XOML_OPEN
     "<ReplicatorActivity x:Name=\"rep\" ExecutionType=\"Sequence\" "
     "InitialChildData=\"{ActivityBind Flow,Path=Items}\">" TICK("tick") "</ReplicatorActivity>"
     XOML_CLOSE,
     XAML_OPEN "<ForEach x:TypeArguments=\"x:String\" Values=\"[Items]\">"
     "<ActivityAction x:TypeArguments=\"x:String\"><ActivityAction.Argument>"
     "<DelegateInArgument x:TypeArguments=\"x:String\" Name=\"item\"/>"
     "</ActivityAction.Argument>" INC "</ActivityAction></ForEach>" XAML_CLOSE,
     64, true, false, false, 2},
    {"TransactionScope x50", XOML_OPEN WHILE_OPEN("loop", "BelowBatch")
     "<TransactionScopeActivity x:Name=\"txn\">" TICK("tick") "</TransactionScopeActivity>"
     "</WhileActivity>" XOML_CLOSE,
     XAML_OPEN "<While Condition=\"[Result &lt; 50]\"><TransactionScope>" INC
     "</TransactionScope></While>" XAML_CLOSE, 50, false, false, false, 2},
    {"compensation", XOML_OPEN
     "<SequenceActivity x:Name=\"scope\"><CompensatableSequenceActivity x:Name=\"WorkScope\">"
     NOOP("work") "<CompensationHandlerActivity x:Name=\"undo\">" TICK("undone")
     "</CompensationHandlerActivity></CompensatableSequenceActivity>"
     "<ThrowActivity x:Name=\"boom\" FaultType=\"{x:Type ns1:InvalidOperationException}\"/>"
     "<FaultHandlersActivity x:Name=\"faults\"><FaultHandlerActivity x:Name=\"onFault\" "
     "FaultType=\"{x:Type ns1:Exception}\"><CompensateActivity x:Name=\"comp\" "
     "TargetActivityName=\"WorkScope\"/></FaultHandlerActivity></FaultHandlersActivity>"
     "</SequenceActivity>" XOML_CLOSE,
     XAML_OPEN "<Sequence><Sequence.Variables><Variable x:TypeArguments=\"CompensationToken\" "
     "Name=\"token\"/></Sequence.Variables><CompensableActivity Result=\"[token]\">"
     "<CompensableActivity.Body><Sequence/></CompensableActivity.Body>"
     "<CompensableActivity.CompensationHandler>" INC "</CompensableActivity.CompensationHandler>"
     "</CompensableActivity><Compensate Target=\"[token]\"/></Sequence>" XAML_CLOSE,
     1, false, false, false, 1},
};
enum { CASE_COUNT = sizeof cases / sizeof cases[0], ITEMS = 64, REPEATS = 2 };

/* Seconds per repeat and side for a weight-1 case (quick mode: a few runs). */
#define BUDGET_S (bu_quick() ? 0.002 : 0.12)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Process CPU time: steadier than the wall clock while other work shares the machine. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct side_result {
    double rate;         /* best workflows per CPU-second */
    double contexts;     /* legacy: execution contexts created per workflow */
    double work_items;   /* scheduler items per workflow */
} side_result;

/* ---- legacy ------------------------------------------------------------------------------ */
typedef struct legacy_env {
    wf_types *types;
    wf_libpath *libpath;
    wf_value items;
    char rules_path[128];
} legacy_env;

static int legacy_once(const legacy_env *env, const wfl_definition *def, const bench_case *bc,
                       wfl_exec_stats *total)
{
    wfl_exec_opts o = WFL_EXEC_OPTS_INIT;
    if (bc->given_id)
        o.instance_id = "0123456789abcdef0123456789abcdef";
    wfl_exec *ex = NULL;
    wf_error err = WF_ERROR_INIT;
    wfl_exec_state st = WFL_EXEC_CREATED;
    wf_value v = wf_null();
    int rc = wfl_exec_create(def, NULL, &o, &ex, &err) != WF_OK ||
             (bc->items && wfl_exec_set_input(ex, "Items", &env->items, &err) != WF_OK) ||
             wfl_exec_run(ex, &st, &err) != WF_OK;
    if (!rc && st != WFL_EXEC_CLOSED) {
        const wf_value *x = wfl_exec_exception(ex);
        fprintf(stderr, "bench_legacy: %s: legacy ended %s: %s\n", bc->name,
                wfl_exec_state_name(st), x ? wf_value_str(x) : "");
        rc = 1;
    } else if (!rc && (wfl_exec_output(ex, "Count", &v, &err) != WF_OK ||
                       v.type->kind != WF_K_INT32 || v.u.i32 != bc->expect)) {
        fprintf(stderr, "bench_legacy: %s: legacy Count is not %d\n", bc->name, (int)bc->expect);
        rc = 1;
    } else if (rc) {
        fprintf(stderr, "bench_legacy: %s: legacy: %s\n", bc->name, err.message);
    }
    wf_value_release(&v);
    if (ex && total) {
        wfl_exec_stats s;
        wfl_exec_stats_get(ex, &s);
        total->work_items += s.work_items;
        total->contexts_created += s.contexts_created;
    }
    wfl_exec_destroy(ex);
    return rc;
}

static int legacy_side(const legacy_env *env, const bench_case *bc, side_result *out)
{
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = env->types;
    lo.libpath = env->libpath;
    lo.no_auto_rules = true;
    if (bc->rules)
        lo.rules_path = env->rules_path;
    wfl_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    if (wfl_definition_load_mem(&lo, "bench.xoml", bc->xoml, strlen(bc->xoml), &def, &err) !=
        WF_OK) {
        fprintf(stderr, "bench_legacy: %s: %s:%u:%u: %s\n", bc->name, err.file, err.line, err.col,
                err.message);
        return 1;
    }
    memset(out, 0, sizeof *out);
    int rc = 0;
    for (int rep = 0; rep < REPEATS && !rc; rep++) {
        rc = legacy_once(env, def, bc, NULL); /* warm up */
        wfl_exec_stats total = {0};
        long n = 0;
        double end = now_s() + BUDGET_S * (double)bc->weight, c0 = cpu_s();
        while (!rc && (n < 2 || now_s() < end)) {
            rc = legacy_once(env, def, bc, &total);
            n++;
        }
        double c1 = cpu_s();
        double rate = (double)n / (c1 - c0 > 0 ? c1 - c0 : 1e-9);
        if (rate > out->rate)
            out->rate = rate;
        out->contexts = (double)total.contexts_created / (double)n;
        out->work_items = (double)total.work_items / (double)n;
    }
    wfl_definition_destroy(def);
    return rc;
}

/* ---- modern ------------------------------------------------------------------------------ */
static int modern_once(wfm_runtime *rt, wfm_definition *def, const bench_case *bc,
                       const wf_value *items)
{
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    int rc = wfm_instance_create(rt, def, &inst, &err) != WF_OK ||
             (bc->items && wfm_instance_set_input(inst, "Items", items, &err) != WF_OK) ||
             wfm_instance_run(inst, &err) != WF_OK;
    if (rc) {
        fprintf(stderr, "bench_legacy: %s: modern: %s\n", bc->name, err.message);
    } else if (wfm_instance_state_get(inst) != WFM_INSTANCE_CLOSED) {
        fprintf(stderr, "bench_legacy: %s: modern ended %s\n", bc->name,
                wfm_instance_state_name(wfm_instance_state_get(inst)));
        rc = 1;
    } else {
        const wf_value *r = wfm_instance_output(inst, "Result");
        if (!r || r->type->kind != WF_K_INT32 || r->u.i32 != bc->expect) {
            fprintf(stderr, "bench_legacy: %s: modern Result is not %d\n", bc->name,
                    (int)bc->expect);
            rc = 1;
        }
    }
    wfm_instance_destroy(inst);
    return rc;
}

static int modern_side(wfm_runtime *rt, const wf_value *items, const bench_case *bc,
                       side_result *out)
{
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    if (wfm_runtime_load_mem(rt, bc->name, bc->xaml, strlen(bc->xaml), &def, NULL, &err) !=
        WF_OK) {
        fprintf(stderr, "bench_legacy: %s: modern: %u:%u: %s\n", bc->name, err.line, err.col,
                err.message);
        return 1;
    }
    memset(out, 0, sizeof *out);
    int rc = 0;
    for (int rep = 0; rep < REPEATS && !rc; rep++) {
        rc = modern_once(rt, def, bc, items); /* warm up */
        wfm_stats s0, s1;
        wfm_runtime_stats(rt, &s0);
        long n = 0;
        double end = now_s() + BUDGET_S * (double)bc->weight, c0 = cpu_s();
        while (!rc && (n < 2 || now_s() < end)) {
            rc = modern_once(rt, def, bc, items);
            n++;
        }
        double c1 = cpu_s();
        wfm_runtime_stats(rt, &s1);
        double rate = (double)n / (c1 - c0 > 0 ? c1 - c0 : 1e-9);
        if (rate > out->rate)
            out->rate = rate;
        out->work_items = (double)(s1.work_items - s0.work_items) / (double)n;
    }
    wfm_definition_release(def);
    return rc;
}

/* The 64-item list both runtimes get as input. */
static int make_items(wf_types *types, wf_value *out)
{
    wf_value items[ITEMS];
    char text[16];
    int rc = 0;
    for (int i = 0; i < ITEMS; i++) {
        snprintf(text, sizeof text, "item%d", i);
        items[i] = wf_null();
        rc |= wf_value_cstring(text, &items[i]) != WF_OK;
    }
    const wf_type *lt = wf_types_list(types, &wf_type_string);
    rc |= !lt || wf_value_list(lt, items, ITEMS, out) != WF_OK;
    for (int i = 0; i < ITEMS; i++)
        wf_value_release(&items[i]);
    return rc;
}

int main(int argc, char **argv)
{
    (void)argc;
    /* The wfbench type library lives in lib/ beside this program (scripts/bench.sh puts it
     * there); WFBENCH_LIB_DIR overrides. */
    char dir[1024];
    const char *env_dir = getenv("WFBENCH_LIB_DIR");
    if (env_dir) {
        snprintf(dir, sizeof dir, "%s", env_dir);
    } else {
        char self[1024];
        snprintf(self, sizeof self, "%s", argv[0]);
        snprintf(dir, sizeof dir, "%s/lib", dirname(self));
    }
    legacy_env env = {0};
    env.items = wf_null();
    wf_error err = WF_ERROR_INIT;
    wfm_runtime *rt = NULL;
    wf_value mitems = wf_null();
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    int rc = 0;
    snprintf(env.rules_path, sizeof env.rules_path, "/tmp/wfbridge-bench-%ld.rules",
             (long)getpid());
    FILE *rf = fopen(env.rules_path, "wb");
    if (!rf || fwrite(rules_text, 1, strlen(rules_text), rf) != strlen(rules_text)) {
        fprintf(stderr, "bench_legacy: cannot write %s\n", env.rules_path);
        rc = 1;
    }
    if (rf && fclose(rf) != 0)
        rc = 1;
    env.types = wf_types_create();
    if (rc || !env.types || wf_libpath_create(dir, &env.libpath, &err) != WF_OK ||
        make_items(env.types, &env.items) || wfm_runtime_create(&o, &rt, &err) != WF_OK ||
        make_items(wfm_runtime_types(rt), &mitems)) {
        fprintf(stderr, "bench_legacy: setup failed (library path %s): %s\n", dir, err.message);
        rc = 1;
    }
    if (!rc) {
        printf("legacy (WF3 model) vs modern (WF4 model) runtime, one thread, workflows per "
               "CPU-second, best of %d\n",
               REPEATS);
        printf("  %-22s %12s %12s %9s %10s %10s %10s\n", "case", "legacy", "modern", "speed-up",
               "contexts", "items(L)", "items(M)");
    }
    for (size_t i = 0; i < CASE_COUNT && !rc; i++) {
        side_result l, m;
        rc = legacy_side(&env, &cases[i], &l) || modern_side(rt, &mitems, &cases[i], &m);
        if (rc)
            break;
        printf("  %-22s %12.0f %12.0f %8.1fx %10.1f %10.1f %10.1f\n", cases[i].name, l.rate, m.rate,
               m.rate / l.rate, l.contexts, l.work_items, m.work_items);
        fflush(stdout);
    }
    if (!rc)
        printf("  contexts: legacy execution contexts cloned per workflow; items: scheduler work\n"
               "  items per workflow (L legacy, M modern). Legacy no-ops are CodeActivity with an\n"
               "  empty native handler, modern ones empty Sequences; (empty): empty\n"
               "  SequenceActivity children; (rules): While condition and body (PolicyActivity)\n"
               "  from .rules, no native code; host-given id: no random instance id is made.\n"
               "  TransactionScope x50 = one workflow of 50 loop iterations through a scope.\n"
               "  Not measured: WF3 via Interop (no Interop activity yet).\n"
               "seed (WF3 vs WF4 on .NET, sequence of 5): WF3 1,576/s, WF3 via Interop 2,745/s,\n"
               "WF4 153,582/s (97x); the paper's largest gaps are in loops (WF3 clones an\n"
               "activity per iteration)\n");
    unlink(env.rules_path);
    wf_value_release(&mitems);
    wf_value_release(&env.items);
    wfm_runtime_destroy(rt);
    wf_libpath_destroy(env.libpath);
    wf_types_destroy(env.types);
    return rc;
}

/* test_sched.c — the modern scheduler's WF4 ordering rules (modern/wfm_sched.c), asserted
 * through WriteLine output captured by a writer callback: LIFO scheduling, Parallel and
 * ParallelForEach order, Pick, FIFO resumptions, timers on a virtual clock, faults,
 * cancellation, and many instances on the worker pool (docs/semantics.md §5). */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_activity.h"
#include "../../modern/wfm_ctx.h"
#include "../../modern/wfm_expr.h"
#include "../../modern/wfm_node.h"
#include "../../modern/wfm_persist.h"
#include "../../modern/wfm_runtime.h"
#include "../../modern/wfm_track.h"
#include "../../modern/wfm_sched_int.h" /* the state-move assert */
#include "../wf_test_util.h"
#include "support_modern.h"

#define HEAD                                                                                       \
    "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "   \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "                                    \
    "xmlns:s=\"clr-namespace:System;assembly=mscorlib\" "                                          \
    "xmlns:scg=\"clr-namespace:System.Collections.Generic;assembly=mscorlib\">"
#define TAIL      "</Activity>"
#define WL(t)     "<WriteLine Text=\"" t "\"/>"
#define WAIT(b)   "<WaitForEvent x:TypeArguments=\"x:String\" BookmarkName=\"" b "\"/>"
#define SCHED_DIR "tests/modern/data/sched/"

typedef wfm_test_run fix;

static void fix_rt(fix *f)
{
    wfm_test_cfg cfg = {.workers = 2, .virtual_clock = true, .now_us = 1000000000000};
    wfm_test_start(f, &cfg);
}

static void fix_open(fix *f, const char *xaml)
{
    fix_rt(f);
    wfm_test_load_mem(f, "t.xaml", xaml);
}

static void fix_open_file(fix *f, const char *name)
{
    fix_rt(f);
    char path[256];
    snprintf(path, sizeof path, SCHED_DIR "%s", name);
    wfm_test_load_file(f, path);
}

static const char *fix_run(fix *f)
{
    return wfm_instance_state_name(wfm_test_go(f));
}

static void fix_resume(fix *f, const char *name, const char *text)
{
    wf_value v = wf_null();
    if (text)
        ck_assert_int_eq(wf_value_cstring(text, &v), WF_OK);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_resume(f->inst, name, &v, &err) == WF_OK, "%s", err.message);
    wf_value_release(&v);
}

/* The inline XAML fixtures below are laid out by hand: one element per line where it helps.
 * clang-format off */

/* ---- ordering ----------------------------------------------------------------------------- */

START_TEST(test_parallel_runs_branch_one_first_depth_first)
{
    fix f;
    fix_open(&f, HEAD
             "<Parallel>"
             "  <Sequence>" WL("a1") "<Sequence>" WL("a2") "</Sequence>" WL("a3") "</Sequence>"
             "  <Sequence>" WL("b1") WL("b2") "</Sequence>"
             WL("c1")
             "</Parallel>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "a1\na2\na3\nb1\nb2\nc1\n");
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_parallel_switches_branch_when_one_blocks)
{
    fix f;
    fix_open(&f, HEAD
             "<Parallel>"
             "  <Sequence>" WL("a1") WAIT("a") WL("a2") "</Sequence>"
             "  <Sequence>" WL("b1") WAIT("b") WL("b2") "</Sequence>"
             "</Parallel>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    ck_assert_str_eq(f.out.data, "a1\nb1\n");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 2);
    ck_assert_str_eq(wfm_instance_bookmark_name(f.inst, 0), "a");
    ck_assert_str_eq(wfm_instance_bookmark_name(f.inst, 1), "b");
    /* Resumptions queue at the back: FIFO, in the order the host resumed them. */
    fix_resume(&f, "b", NULL);
    fix_resume(&f, "a", NULL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "a1\nb1\nb2\na2\n");
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_parallel_for_each_runs_last_item_first)
{
    fix f;
    fix_open(&f, HEAD
             "<ParallelForEach x:TypeArguments=\"x:Int32\""
             "                 Values=\"[new List&lt;int&gt; { 1, 2, 3 }]\">"
             "  <ActivityAction x:TypeArguments=\"x:Int32\">"
             "    <ActivityAction.Argument>"
             "      <DelegateInArgument x:TypeArguments=\"x:Int32\" Name=\"n\"/>"
             "    </ActivityAction.Argument>"
             "    <Sequence>"
             "      <WriteLine Text=\"[&quot;x&quot; + n]\"/>"
             "      <WriteLine Text=\"[&quot;y&quot; + n]\"/>"
             "    </Sequence>"
             "  </ActivityAction>"
             "</ParallelForEach>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "x3\ny3\nx2\ny2\nx1\ny1\n");
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_pick_cancels_losers_before_winner_action)
{
    fix f;
    fix_open(&f, HEAD
             "<Pick>"
             "  <PickBranch>"
             "    <PickBranch.Trigger>" WAIT("go") "</PickBranch.Trigger>"
             WL("winner action")
             "  </PickBranch>"
             "  <PickBranch>"
             "    <PickBranch.Trigger>"
             "      <CancellationScope>" WAIT("other")
             "        <CancellationScope.CancellationHandler>" WL("loser canceled")
             "        </CancellationScope.CancellationHandler>"
             "      </CancellationScope>"
             "    </PickBranch.Trigger>"
             WL("loser action")
             "  </PickBranch>"
             "</Pick>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 2);
    fix_resume(&f, "go", NULL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "loser canceled\nwinner action\n");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 0);
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_parallel_completion_condition_cancels_the_rest)
{
    fix f;
    fix_open(&f, HEAD
             "<Parallel CompletionCondition=\"True\">"
             "  <Sequence>" WL("a1") WAIT("a") WL("a2") "</Sequence>"
             WL("b")
             "</Parallel>" TAIL);
    /* b completes first (a blocks), the condition is true: a is canceled, Parallel closes. */
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "a1\nb\n");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 0);
    wfm_test_close(&f);
}
END_TEST

/* ---- timers ----------------------------------------------------------------------------- */

START_TEST(test_delay_waits_for_the_clock)
{
    fix f;
    fix_open(&f, HEAD
             "<Sequence>" WL("before") "<Delay Duration=\"00:00:05\"/>" WL("after") "</Sequence>"
             TAIL);
    int64_t start = f.now_us;
    ck_assert_str_eq(fix_run(&f), "Idle");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 0);
    ck_assert(wfm_instance_next_timer_us(f.inst) == start + 5000000);
    f.now_us += 4999999;
    ck_assert_str_eq(fix_run(&f), "Idle");
    ck_assert_str_eq(f.out.data, "before\n");
    f.now_us += 1;
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "before\nafter\n");
    ck_assert(wfm_instance_next_timer_us(f.inst) == INT64_MAX);
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_timers_fire_in_due_order)
{
    fix f;
    fix_open(&f, HEAD
             "<Parallel>"
             "  <Sequence><Delay Duration=\"00:00:03\"/>" WL("three") "</Sequence>"
             "  <Sequence><Delay Duration=\"00:00:01\"/>" WL("one") "</Sequence>"
             "  <Sequence><Delay Duration=\"00:00:02\"/>" WL("two") "</Sequence>"
             "</Parallel>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    f.now_us += 10000000; /* all three are due: they fire in due order */
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "one\ntwo\nthree\n");
    wfm_stats s;
    wfm_runtime_stats(f.rt, &s);
    ck_assert_uint_eq(s.timers_fired, 3);
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_pick_timer_wins_and_removes_the_bookmark)
{
    fix f;
    fix_open(&f, HEAD
             "<Pick>"
             "  <PickBranch>"
             "    <PickBranch.Trigger>" WAIT("approve") "</PickBranch.Trigger>"
             WL("approved")
             "  </PickBranch>"
             "  <PickBranch>"
             "    <PickBranch.Trigger><Delay Duration=\"00:01:00\"/></PickBranch.Trigger>"
             WL("timed out")
             "  </PickBranch>"
             "</Pick>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    f.now_us += 60000000;
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "timed out\n");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_resume(f.inst, "approve", NULL, &err), WF_E_STATE);
    wfm_test_close(&f);
}
END_TEST

/* ---- faults ----------------------------------------------------------------------------- */

START_TEST(test_unhandled_fault_faults_instance_with_location)
{
    fix f;
    fix_open(&f, HEAD "\n"
             "<Sequence>\n"
             WL("one") "\n"
             "  <Throw Exception=\"[new InvalidOperationException(&quot;boom&quot;)]\"/>\n"
             WL("never") "\n"
             "</Sequence>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Faulted");
    ck_assert_str_eq(f.out.data, "one\n");
    const wf_value *exc = wfm_instance_fault(f.inst);
    ck_assert_int_eq(exc->type->kind, WF_K_EXCEPTION);
    ck_assert_str_eq(exc->type->name, "InvalidOperationException");
    ck_assert_str_eq(wf_value_exc_message(exc), "boom");
    wf_loc loc = wfm_instance_fault_loc(f.inst);
    ck_assert_str_eq(loc.file, "t.xaml");
    ck_assert_uint_eq(loc.line, 4);
    ck_assert_uint_eq(loc.col, 3);
    wfm_test_close(&f);
}
END_TEST

#define CATCH_ALL(action)                                                                   \
    "<TryCatch.Catches>"                                                                    \
    "  <Catch x:TypeArguments=\"s:Exception\">"                                             \
    "    <ActivityAction x:TypeArguments=\"s:Exception\">"                                  \
    "      <ActivityAction.Argument>"                                                       \
    "        <DelegateInArgument x:TypeArguments=\"s:Exception\" Name=\"e\"/>"              \
    "      </ActivityAction.Argument>"                                                      \
    action                                                                                  \
    "    </ActivityAction>"                                                                 \
    "  </Catch>"                                                                            \
    "</TryCatch.Catches>"

START_TEST(test_caught_fault_cancels_siblings_normally)
{
    fix f;
    fix_open(&f, HEAD
             "<TryCatch>"
             "  <TryCatch.Try>"
             "    <Parallel>"
             "      <CancellationScope>" WAIT("w")
             "        <CancellationScope.CancellationHandler>" WL("sibling canceled")
             "        </CancellationScope.CancellationHandler>"
             "      </CancellationScope>"
             "      <Sequence>" WL("throwing")
             "        <Throw Exception=\"[new ArgumentException(&quot;bad&quot;)]\"/>"
             "      </Sequence>"
             "    </Parallel>"
             "  </TryCatch.Try>"
             CATCH_ALL("<WriteLine Text=\"[&quot;caught &quot; + e.Message]\"/>")
             "</TryCatch>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "throwing\nsibling canceled\ncaught bad\n");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 0);
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_fault_through_canceling_activity_aborts_instance)
{
    fix f;
    /* The cancellation handler throws while its scope is being canceled: the TryCatch above
     * must not catch it (docs/semantics.md §5: propagating through a canceling activity aborts). */
    fix_open(&f, HEAD
             "<TryCatch>"
             "  <TryCatch.Try>"
             "    <CancellationScope>" WAIT("w")
             "      <CancellationScope.CancellationHandler>"
             "        <Throw Exception=\"[new ApplicationException(&quot;in handler&quot;)]\"/>"
             "      </CancellationScope.CancellationHandler>"
             "    </CancellationScope>"
             "  </TryCatch.Try>"
             CATCH_ALL(WL("caught"))
             "</TryCatch>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_cancel(f.inst, &err), WF_OK);
    ck_assert_str_eq(fix_run(&f), "Faulted");
    ck_assert_str_eq(f.out.data, "");
    ck_assert_str_eq(wf_value_exc_message(wfm_instance_fault(f.inst)), "in handler");
    wfm_test_close(&f);
}
END_TEST

/* ---- cancellation and termination ------------------------------------------------------ */

START_TEST(test_host_cancel_runs_cancellation_handlers)
{
    fix f;
    fix_open(&f, HEAD
             "<Parallel>"
             "  <CancellationScope>" WAIT("a")
             "    <CancellationScope.CancellationHandler>" WL("a canceled")
             "    </CancellationScope.CancellationHandler>"
             "  </CancellationScope>"
             "  <Sequence>" WAIT("b") WL("never") "</Sequence>"
             "</Parallel>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_cancel(f.inst, &err), WF_OK);
    ck_assert_str_eq(fix_run(&f), "Canceled");
    ck_assert_str_eq(f.out.data, "a canceled\n");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 0);
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_terminate_ends_instance_at_once)
{
    fix f;
    fix_open(&f, HEAD
             "<Parallel>"
             "  <Sequence>" WAIT("a") WL("never") "</Sequence>"
             "  <Sequence>" WL("b") "<TerminateWorkflow Reason=\"enough\"/>" WL("never")
             "  </Sequence>"
             "</Parallel>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Terminated");
    ck_assert_str_eq(f.out.data, "b\n");
    ck_assert_str_eq(wf_value_exc_message(wfm_instance_fault(f.inst)), "enough");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 0);
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_host_terminate_of_idle_instance)
{
    fix f;
    fix_open(&f, HEAD WAIT("a") TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_terminate(f.inst, "host said so", &err), WF_OK);
    ck_assert_str_eq(wfm_instance_state_name(wfm_instance_state_get(f.inst)), "Terminated");
    ck_assert_str_eq(wf_value_exc_message(wfm_instance_fault(f.inst)), "host said so");
    wfm_test_close(&f);
}
END_TEST

/* clang-format on */

/* ---- the worker pool ------------------------------------------------------------------------ */

#define POOL_THREADS    4
#define POOL_PER_THREAD 25

typedef struct pool_job {
    wfm_runtime *rt;
    wfm_definition *def;
    int base;
    wfm_instance *insts[POOL_PER_THREAD];
    wf_buf outs[POOL_PER_THREAD];
    bool ok;
} pool_job;

static void *pool_thread(void *arg)
{
    pool_job *job = arg;
    job->ok = true;
    for (int i = 0; i < POOL_PER_THREAD; i++) {
        wf_error err = WF_ERROR_INIT;
        wf_buf_init(&job->outs[i]);
        if (wfm_instance_create(job->rt, job->def, &job->insts[i], &err) != WF_OK) {
            job->ok = false;
            return NULL;
        }
        wfm_instance_set_writer(job->insts[i], wfm_test_capture, &job->outs[i]);
        wf_value n = wf_int32(job->base + i);
        job->ok &= wfm_instance_set_input(job->insts[i], "N", &n, &err) == WF_OK;
        job->ok &= wfm_instance_start(job->insts[i], &err) == WF_OK;
    }
    return NULL;
}

START_TEST(test_many_instances_on_the_pool_from_several_threads)
{
    fix f;
    fix_open_file(&f, "pool_sum.xaml");
    pool_job jobs[POOL_THREADS];
    pthread_t threads[POOL_THREADS];
    for (int t = 0; t < POOL_THREADS; t++) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].rt = f.rt;
        jobs[t].def = f.def;
        jobs[t].base = t * 1000;
        ck_assert_int_eq(pthread_create(&threads[t], NULL, pool_thread, &jobs[t]), 0);
    }
    for (int t = 0; t < POOL_THREADS; t++)
        pthread_join(threads[t], NULL);
    wfm_runtime_wait_idle(f.rt);
    /* Every instance now waits on its bookmark; resume them all from this thread. */
    for (int t = 0; t < POOL_THREADS; t++) {
        ck_assert(jobs[t].ok);
        for (int i = 0; i < POOL_PER_THREAD; i++) {
            wfm_instance *inst = jobs[t].insts[i];
            ck_assert_str_eq(wfm_instance_state_name(wfm_instance_state_get(inst)), "Idle");
            wf_value v = wf_int32(7);
            wf_error err = WF_ERROR_INIT;
            ck_assert_int_eq(wfm_instance_resume(inst, "add", &v, &err), WF_OK);
        }
    }
    wfm_runtime_wait_idle(f.rt);
    for (int t = 0; t < POOL_THREADS; t++)
        for (int i = 0; i < POOL_PER_THREAD; i++) {
            wfm_instance *inst = jobs[t].insts[i];
            int n = jobs[t].base + i;
            ck_assert_str_eq(wfm_instance_state_name(wfm_instance_state_get(inst)), "Closed");
            const wf_value *sum = wfm_instance_output(inst, "Sum");
            ck_assert_int_eq(sum->u.i32, n * 10 + 45 + 7); /* sum of n+k for k = 0..9, + 7 */
            char want[64];
            snprintf(want, sizeof want, "start %d\ndone %d\n", n, n * 10 + 52);
            ck_assert_str_eq(jobs[t].outs[i].data, want);
            wfm_instance_destroy(inst);
            wf_buf_fini(&jobs[t].outs[i]);
        }
    wfm_stats s;
    wfm_runtime_stats(f.rt, &s);
    ck_assert_uint_eq(s.instances_completed, POOL_THREADS * POOL_PER_THREAD);
    ck_assert_uint_eq(s.bookmarks_resumed, POOL_THREADS * POOL_PER_THREAD);
    wfm_test_close(&f);
}
END_TEST

static void count_done(wfm_instance *inst, void *ud)
{
    (void)inst;
    __atomic_add_fetch((int *)ud, 1, __ATOMIC_SEQ_CST);
}

START_TEST(test_pool_completion_callback_and_rerun_refused)
{
    fix f;
    fix_open(&f,
             HEAD "<Sequence>" WL("x") "<Delay Duration=\"00:00:00\"/>" WL("y") "</Sequence>" TAIL);
    int done = 0;
    wfm_instance_on_complete(f.inst, count_done, &done);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_start(f.inst, &err), WF_OK);
    wfm_runtime_wait_idle(f.rt);
    ck_assert_int_eq(done, 1);
    ck_assert_str_eq(wfm_instance_state_name(wfm_instance_state_get(f.inst)), "Closed");
    ck_assert_str_eq(f.out.data, "x\ny\n");
    ck_assert_int_eq(wfm_instance_start(f.inst, &err), WF_E_STATE);
    wfm_test_close(&f);
}
END_TEST

/* A timer on the pool is fired by the runtime's timer thread, not by a waiting worker. */
START_TEST(test_pool_timer_thread_resumes_waiting_instances)
{
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT; /* the real clock */
    o.worker_count = 2;
    wf_buf out;
    wf_buf_init(&out);
    o.write = wfm_test_capture;
    o.write_ud = &out;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    const char *xaml = HEAD "<Sequence><Delay Duration=\"00:00:00.02\"/>" WL("tick") "</Sequence>"
        TAIL;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    ck_assert_int_eq(wfm_runtime_load_mem(rt, "t.xaml", xaml, strlen(xaml), &def, NULL, &err),
                     WF_OK);
    wfm_instance *insts[3];
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(wfm_instance_create(rt, def, &insts[i], &err), WF_OK);
        ck_assert_int_eq(wfm_instance_start(insts[i], &err), WF_OK);
    }
    wfm_runtime_wait_idle(rt);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(wfm_instance_state_get(insts[i]), WFM_INSTANCE_CLOSED);
        wfm_instance_destroy(insts[i]);
    }
    ck_assert_str_eq(out.data, "tick\ntick\ntick\n");
    wfm_stats s;
    wfm_runtime_stats(rt, &s);
    ck_assert_uint_eq(s.timers_fired, 3);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wf_buf_fini(&out);
}
END_TEST

/* ---- an extension kind: bookmark flags through the activity API ---------------------- */

static void ticker_resume(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)
{
    const char *text = wf_value_str(payload);
    wfm_ctx_write(ctx, text, strlen(text));
    wfm_ctx_write(ctx, "\n", 1);
    if (strcmp(text, "stop") == 0)
        wfm_ctx_complete(ctx, ai);
}

static void ticker_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    ck_assert_int_eq(wfm_ctx_bookmark(ctx, ai, "tick", WFM_BOOKMARK_MULTIPLE, ticker_resume),
                     WF_OK);
    ck_assert_int_eq(wfm_ctx_bookmark(ctx, ai, "peek", WFM_BOOKMARK_NONBLOCKING, ticker_resume),
                     WF_OK);
    ck_assert_int_eq(wfm_ctx_bookmark(ctx, ai, "tick", 0, ticker_resume), WF_E_STATE);
}

static const wfm_kind_spec ticker_spec = {
    .name = "Ticker",
    .ns = "urn:wfbridge:test",
    .category = "Activity",
    .flags = WFM_KIND_CAN_IDLE,
    .execute = ticker_execute,
};

static void send(fix *f, const char *bookmark, const char *text, wf_status want)
{
    wf_value v;
    ck_assert_int_eq(wf_value_cstring(text, &v), WF_OK);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_resume(f->inst, bookmark, &v, &err), want);
    wf_value_release(&v);
}

START_TEST(test_multiple_and_nonblocking_bookmarks)
{
    fix f;
    fix_rt(&f);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(f.rt), &ticker_spec, &err),
                     WF_OK);
    const char *xaml = HEAD "<Sequence xmlns:t=\"urn:wfbridge:test\"><t:Ticker/>" WL("done")
        "</Sequence>" TAIL;
    ck_assert_int_eq(wfm_runtime_load_mem(f.rt, "t.xaml", xaml, strlen(xaml), &f.def, NULL, &err),
                     WF_OK);
    ck_assert_int_eq(wfm_instance_create(f.rt, f.def, &f.inst, &err), WF_OK);
    ck_assert_str_eq(fix_run(&f), "Idle");
    /* Only the blocking bookmark is listed; both can be resumed, "tick" any number of times. */
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 1);
    ck_assert_str_eq(wfm_instance_bookmark_name(f.inst, 0), "tick");
    send(&f, "tick", "one", WF_OK);
    send(&f, "tick", "two", WF_OK);
    ck_assert_str_eq(fix_run(&f), "Idle");
    send(&f, "peek", "peeked", WF_OK);
    send(&f, "peek", "again", WF_E_NOTFOUND); /* resumed once: gone */
    send(&f, "tick", "stop", WF_OK);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "one\ntwo\npeeked\nstop\ndone\n");
    ck_assert_uint_eq(wfm_instance_bookmark_count(f.inst), 0);
    wfm_test_close(&f);
}
END_TEST

/* A kind that counts its running child itself, as some composites do. */
typedef struct keeper_state {
    int running;
} keeper_state;

static void keeper_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    (void)child;
    ((keeper_state *)wfm_ai_state(ai))->running--;
    wfm_ctx_complete(ctx, ai);
}

static void keeper_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    ((keeper_state *)wfm_ai_state(ai))->running++;
    wfm_ctx_schedule(ctx, ai, wfm_node_child(wfm_ai_node(ai), 0), keeper_done, NULL);
}

static void keeper_cancel(wfm_ctx *ctx, wfm_ai *ai)
{
    if (((keeper_state *)wfm_ai_state(ai))->running == 0) {
        wfm_ctx_mark_canceled(ctx, ai);
        wfm_ctx_complete(ctx, ai);
        return;
    }
    wfm_ctx_cancel_children(ctx, ai);
}

static const wfm_prop_spec keeper_props[] = {
    {"Body", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_CONTENT | WFM_PROP_REQUIRED, NULL},
};

static const wfm_kind_spec keeper_spec = {
    .name = "Keeper",
    .ns = "urn:wfbridge:test",
    .category = "Activity",
    .flags = WFM_KIND_STATE_PLAIN, /* plain counters (persistence contract) */
    .props = keeper_props,
    .prop_count = 1,
    .content_prop = "Body",
    .state_size = sizeof(keeper_state),
    .execute = keeper_execute,
    .cancel = keeper_cancel,
};

/* The thrower is aborted without a completion callback, so the Keeper's own count never
 * drops; the runtime completes it anyway once nothing can wake it, and the TryCatch above
 * gets its faulted child. */
START_TEST(test_handled_fault_completes_parent_that_lost_its_child)
{
    fix f;
    fix_rt(&f);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(f.rt), &keeper_spec, &err),
                     WF_OK);
    const char *xaml =
        HEAD "<TryCatch xmlns:t=\"urn:wfbridge:test\"><TryCatch.Try><t:Keeper>"
             "<Throw Exception=\"[new ArgumentException(&quot;lost&quot;)]\"/></t:Keeper>"
             "</TryCatch.Try><TryCatch.Catches><Catch x:TypeArguments=\"s:Exception\">"
             "<ActivityAction x:TypeArguments=\"s:Exception\">" WL("caught")
             "</ActivityAction></Catch></TryCatch.Catches></TryCatch>" TAIL;
    ck_assert_int_eq(wfm_runtime_load_mem(f.rt, "t.xaml", xaml, strlen(xaml), &f.def, NULL, &err),
                     WF_OK);
    ck_assert_int_eq(wfm_instance_create(f.rt, f.def, &f.inst, &err), WF_OK);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "caught\n");
    wfm_test_close(&f);
}
END_TEST


/* ---- the extension API: scheduling in an environment the kind owns ---------------------- */
/* t:Snapshot runs its Body in a copy of its environment (one level, parent = the next level
 * up) whose first slot it sets to 42: the body sees the copy, the live variable keeps its
 * value. t:NoMem reports out of memory from its execute callback. */
#define SNAP_NS "urn:wfbridge-test-sched"

typedef struct snap_state {
    wfm_env *env; /* owned copy (and slots) */
} snap_state;

static void snap_env_free(wfm_env *env)
{
    if (!env)
        return;
    for (uint32_t i = 0; i < env->count; i++)
        wf_value_release(&env->slots[i]);
    wf_free(env->slots);
    wf_free(env);
}

static void snap_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    (void)child;
    wfm_ctx_complete(ctx, ai);
}

static void snap_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    snap_state *st = wfm_ai_state(ai);
    const wfm_env *live = wfm_ai_env(ai);
    wfm_env *copy = wf_calloc(1, sizeof *copy);
    if (copy && live->count)
        copy->slots = wf_calloc(live->count, sizeof *copy->slots);
    if (!copy || (live->count && !copy->slots)) {
        wf_free(copy);
        wfm_ctx_nomem(ctx);
        return;
    }
    copy->count = live->count;
    copy->parent = live->parent;
    for (uint32_t i = 0; i < live->count; i++)
        copy->slots[i] = wf_value_retain(&live->slots[i]);
    st->env = copy;
    if (copy->count) {
        wf_value_release(&copy->slots[0]);
        copy->slots[0] = wf_int32(42);
    }
    if (wfm_ctx_schedule_in_env(ctx, ai, wfm_node_child(wfm_ai_node(ai), 0), copy, snap_done,
                                NULL) != WF_OK)
        wfm_ctx_nomem(ctx);
}

static void snap_fini(wfm_ai *ai)
{
    snap_state *st = wfm_ai_state(ai);
    snap_env_free(st->env);
    st->env = NULL;
}

static wf_status snap_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    const snap_state *st = wfm_ai_state_const(ai);
    wfm_persist_write_env(w, st->env);
    return WF_OK;
}

static wf_status snap_restore(wfm_ai *ai, wfm_persist_reader *r)
{
    snap_state *st = wfm_ai_state(ai);
    st->env = wfm_persist_read_env(r, true);
    return WF_OK;
}

static void nomem_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    (void)ai;
    wfm_ctx_nomem(ctx);
}

static const wfm_prop_spec snap_props[] = {
    {"Body", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_CONTENT | WFM_PROP_REQUIRED, NULL},
};
static const void *const snap_callbacks[] = {(const void *)snap_done};
static const wfm_kind_spec snap_spec = {
    .name = "Snapshot",
    .ns = SNAP_NS,
    .category = "Activity",
    .flags = WFM_KIND_CAN_IDLE,
    .props = snap_props,
    .prop_count = 1,
    .content_prop = "Body",
    .state_size = sizeof(snap_state),
    .execute = snap_execute,
    .fini = snap_fini,
    .callbacks = snap_callbacks,
    .callback_count = 1,
    .save = snap_save,
    .restore = snap_restore,
};
static const wfm_kind_spec nomem_spec = {
    .name = "NoMem",
    .ns = SNAP_NS,
    .category = "Activity",
    .execute = nomem_execute,
};

/* t:Backwards runs its Items last to first with wfm_ctx_schedule_item, all at once (the
 * last scheduled runs first, so they run in document order); it faults when the call
 * accepts an index past the list, a property that is not a list or one it does not have. */
enum { BACK_ITEMS, BACK_BODY };
static void back_done(wfm_ctx *ctx, wfm_ai *ai, wfm_ai *child)
{
    (void)child;
    if (wfm_ai_running_children(ai) == 0)
        wfm_ctx_complete(ctx, ai);
}

static void back_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    size_t n = wfm_node_count(wfm_ai_node(ai), BACK_ITEMS);
    if (wfm_ctx_schedule_item(ctx, ai, BACK_ITEMS, n, back_done, NULL) != WF_E_NOTFOUND ||
        wfm_ctx_schedule_item(ctx, ai, BACK_BODY, 0, back_done, NULL) != WF_E_STATE ||
        wfm_ctx_schedule_item(ctx, ai, 7, 0, back_done, NULL) != WF_E_STATE) {
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "schedule_item accepted a bad item");
        return;
    }
    for (size_t i = n; i-- > 0;)
        if (wfm_ctx_schedule_item(ctx, ai, BACK_ITEMS, i, back_done, NULL) != WF_OK)
            return;
    if (n == 0)
        wfm_ctx_complete(ctx, ai);
}

static const wfm_prop_spec back_props[] = {
    {"Items", WFM_PROP_ACTIVITIES, NULL, NULL, WFM_PROP_CONTENT, NULL},
    {"Body", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
};
static const void *const back_callbacks[] = {(const void *)back_done};
static const wfm_kind_spec back_spec = {
    .name = "Backwards",
    .ns = SNAP_NS,
    .category = "Activity",
    .props = back_props,
    .prop_count = 2,
    .content_prop = "Items",
    .execute = back_execute,
    .callbacks = back_callbacks,
    .callback_count = 1,
};

static void fix_open_snap(fix *f, const char *xaml)
{
    fix_rt(f);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(f->rt), &snap_spec, &err), WF_OK);
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(f->rt), &nomem_spec, &err),
                     WF_OK);
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(f->rt), &back_spec, &err),
                     WF_OK);
    ck_assert_msg(wfm_runtime_load_mem(f->rt, "t.xaml", xaml, strlen(xaml), &f->def, NULL, &err) ==
                      WF_OK,
                  "%u:%u: %s", err.line, err.col, err.message);
    ck_assert_int_eq(wfm_instance_create(f->rt, f->def, &f->inst, &err), WF_OK);
}

#define SNAP_HEAD                                                                                  \
    "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "   \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" xmlns:t=\"" SNAP_NS "\">"

START_TEST(test_schedule_in_env_runs_child_in_the_kinds_environment)
{
    fix f;
    fix_open_snap(&f, SNAP_HEAD
                  "<Sequence><Sequence.Variables>"
                  "<Variable x:TypeArguments=\"x:Int32\" Name=\"x\" Default=\"1\"/>"
                  "</Sequence.Variables>"
                  "<t:Snapshot><Sequence>"
                  "<WriteLine Text=\"[&quot;in &quot; + x.ToString()]\"/>"
                  "<Assign x:TypeArguments=\"x:Int32\" To=\"[x]\" Value=\"[x + 1]\"/>"
                  "<WaitForEvent x:TypeArguments=\"x:String\" BookmarkName=\"go\"/>"
                  "<WriteLine Text=\"[&quot;after &quot; + x.ToString()]\"/>"
                  "</Sequence></t:Snapshot>"
                  "<WriteLine Text=\"[&quot;live &quot; + x.ToString()]\"/>"
                  "</Sequence>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Idle");
    ck_assert_str_eq(f.out.data, "in 42\n");
    /* the snapshot env travels with the saved instance */
    wf_buf blob;
    wf_buf_init(&blob);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_save(f.inst, &blob, &err) == WF_OK, "save: %s", err.message);
    wfm_instance_destroy(f.inst);
    f.inst = NULL;
    ck_assert_msg(wfm_instance_restore(f.rt, f.def, blob.data, blob.len, &f.inst, &err) == WF_OK,
                  "restore: %s", err.message);
    wf_buf_fini(&blob);
    fix_resume(&f, "go", NULL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "in 42\nafter 43\nlive 1\n");
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_schedule_item_schedules_list_items_and_refuses_others)
{
    fix f;
    fix_open_snap(&f, SNAP_HEAD "<Sequence><t:Backwards>" WL("a") WL("b") WL("c")
                                "</t:Backwards><t:Backwards/>" WL("d") "</Sequence>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "a\nb\nc\nd\n");
    wfm_test_close(&f);
}
END_TEST

START_TEST(test_ctx_nomem_faults_the_instance_without_exception)
{
    fix f;
    fix_open_snap(&f, SNAP_HEAD "<Sequence><t:NoMem/>" WL("not reached") "</Sequence>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Faulted");
    ck_assert(wf_is_null(wfm_instance_fault(f.inst)));
    ck_assert_ptr_null(f.out.data ? strstr(f.out.data, "not reached") : NULL);
    wfm_test_close(&f);
}
END_TEST

/* ---- invariants: the asserts are compiled in, and they fire -------------------------------- */

/* ---- inline leaves: the same outcome as a scheduled leaf ------------------------------- */

#define VARS_I                                                                                     \
    "<Sequence.Variables><Variable x:TypeArguments=\"x:Int32\" Name=\"i\"/>"                      \
    "<Variable x:TypeArguments=\"x:Int32\" Name=\"j\"/>"                                          \
    "<Variable x:TypeArguments=\"scg:List(x:Int32)\" Name=\"xs\" "                                \
    "Default=\"[new List(Of Int32) From {1, 2, 3, 4}]\"/></Sequence.Variables>"
#define INC(v)    "<Assign x:TypeArguments=\"x:Int32\" To=\"[" v "]\" Value=\"[" v " + 1]\"/>"
#define EACH(kind, body)                                                                           \
    "<" kind " x:TypeArguments=\"x:Int32\" Values=\"[xs]\">"                                      \
    "<ActivityAction x:TypeArguments=\"x:Int32\"><ActivityAction.Argument>"                        \
    "<DelegateInArgument x:TypeArguments=\"x:Int32\" Name=\"x\"/></ActivityAction.Argument>"     \
    body "</ActivityAction></" kind ">"

/* The fourth Assign of the loop divides by zero: the fault leaves the While through the
 * TryCatch with i as the three closed Assigns left it, and the next loop starts from there. */
START_TEST(test_inline_assign_fault_in_while_is_caught_by_trycatch)
{
    fix f;
    fix_open(&f, HEAD
             "<Sequence>" VARS_I
             "  <TryCatch>"
             "    <TryCatch.Try>"
             "      <While Condition=\"[i &lt; 10]\">"
             "        <Assign x:TypeArguments=\"x:Int32\" To=\"[i]\" "
             "                Value=\"[i + 1 + 0 * (10 / (3 - i))]\"/>"
             "      </While>"
             "    </TryCatch.Try>"
             CATCH_ALL("<WriteLine Text=\"[&quot;caught &quot; + e.Message + &quot; at &quot; + "
                       "i.ToString()]\"/>")
             "  </TryCatch>"
             "  <While Condition=\"[i &lt; 6]\">" INC("i") "</While>"
             "  <WriteLine Text=\"[&quot;end &quot; + i.ToString()]\"/>"
             "</Sequence>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "caught Attempted to divide by zero. at 3\nend 6\n");
    wfm_test_close(&f);
}
END_TEST

/* ParallelForEach runs the last item's body first; the body of item 2 faults while item 1's
 * is still pending, and the handled fault cancels that one: it never writes. */
START_TEST(test_inline_parallel_for_each_fault_cancels_the_pending_bodies)
{
    fix f;
    fix_open(&f, HEAD
             "<Sequence>" VARS_I
             "  <TryCatch>"
             "    <TryCatch.Try>"
             EACH("ParallelForEach", "<WriteLine Text=\"[(10 / (2 - x)).ToString()]\"/>")
             "    </TryCatch.Try>"
             CATCH_ALL("<WriteLine Text=\"[&quot;caught &quot; + e.Message]\"/>")
             "  </TryCatch>"
             EACH("ForEach", "<WriteLine Text=\"[x.ToString()]\"/>")
             "</Sequence>" TAIL);
    ck_assert_str_eq(fix_run(&f), "Closed");
    ck_assert_str_eq(f.out.data, "-5\n-10\ncaught Attempted to divide by zero.\n1\n2\n3\n4\n");
    wfm_test_close(&f);
}
END_TEST

/* A run with a budget stops where a scheduled body would have stopped it: after the While's
 * execute, two work items per iteration, so a budget of 7 leaves three Assigns closed and the
 * fourth's execute item queued; the host's cancel closes that one before it runs. */
START_TEST(test_inline_while_canceled_at_a_run_budget_stops_where_scheduled_would)
{
    fix f;
    fix_open(&f, HEAD
             "<x:Members><x:Property Name=\"Result\" Type=\"OutArgument(x:Int32)\"/></x:Members>"
             "<While Condition=\"[Result &lt; 1000]\">" INC("Result") "</While>" TAIL);
    wfm_ctx *ctx = wfm__instance_hold(f.inst);
    ck_assert_int_eq(wfm__sched_start(ctx), WF_OK);
    ck_assert_int_eq(wfm__sched_run(ctx, 7), WFM__SCHED_RUNNING);
    ck_assert_int_eq(ctx->root_env.slots[0].u.i32, 3);
    wfm__sched_cancel(ctx);
    ck_assert_int_eq(wfm__sched_run(ctx, 0), WFM__SCHED_CANCELED);
    ck_assert_int_eq(ctx->root_env.slots[0].u.i32, 3);
    wfm__instance_unhold(f.inst);
    wfm_test_close(&f);
}
END_TEST

/* Run `xaml` to its first idle on a runtime with or without a tracker (tracking of activity
 * states keeps every leaf scheduled) and return the saved state; *tracked gets the count of
 * records kept. */
static void save_at_idle(const char *xaml, bool tracking, wf_buf *blob, size_t *records)
{
    wfm_tracker *t = NULL;
    wf_error err = WF_ERROR_INIT;
    if (tracking) {
        ck_assert_int_eq(wfm_tracker_create(wfm_profile_builtin("all"), &t, &err), WF_OK);
        ck_assert_int_eq(wfm_tracker_add_ring(t, 4096, &err), WF_OK);
    }
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.write = wfm_test_discard;
    o.tracker = t;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wfm_instance *inst = NULL;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    ck_assert_int_eq(wfm_runtime_load_mem(rt, "p.xaml", xaml, strlen(xaml), &def, NULL, &err),
                     WF_OK);
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    ck_assert_int_eq(wfm_durable_mark(inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_IDLE);
    ck_assert_int_eq(wfm_instance_save(inst, blob, &err), WF_OK);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    *records = t ? wfm_tracker_ring_count(t) : 0;
    wfm_tracker_destroy(t);
}

/* Loops whose leaves ran inline save the same bytes as with every leaf scheduled: the
 * Persist beside the loop waits for the save once the queue drained, after the loop. */
START_TEST(test_inline_loops_save_the_same_state_beside_a_persist)
{
    static const char xaml[] =
        HEAD "<Sequence>" VARS_I
        "  <While Condition=\"[i &lt; 3]\">" INC("i") "</While>"
        "  <Parallel>"
        "    <While Condition=\"[j &lt; 5]\">" INC("j") "</While>"
        "    <Persist/>"
        EACH("ForEach", "<Assign x:TypeArguments=\"x:Int32\" To=\"[i]\" Value=\"[i + x]\"/>")
        "  </Parallel>"
        "</Sequence>" TAIL;
    wf_buf plain, tracked;
    wf_buf_init(&plain);
    wf_buf_init(&tracked);
    size_t none = 0, records = 0;
    save_at_idle(xaml, false, &plain, &none);
    save_at_idle(xaml, true, &tracked, &records);
    ck_assert_uint_gt(records, 30); /* each Assign's scheduled, executing and closed records */
    ck_assert_uint_eq(plain.len, tracked.len);
    ck_assert_mem_eq(plain.data, tracked.data, plain.len);
    wf_buf_fini(&plain);
    wf_buf_fini(&tracked);
}
END_TEST

START_TEST(test_asserts_are_enabled_in_this_build)
{
#ifdef NDEBUG
    ck_abort_msg("built with NDEBUG: the scheduler's invariant checks are off");
#endif
}
END_TEST

#define IDLE_XAML                                                                                  \
    "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "   \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\"><WaitForEvent "                      \
    "x:TypeArguments=\"x:Int32\" BookmarkName=\"go\"/></Activity>"

/* Only a NEW instance may take a saved state: anything else is an illegal move (SIGABRT; the
 * test needs Check's fork mode, the default). */
START_TEST(test_illegal_state_move_is_caught_by_an_assert)
{
    wfm_test_run r;
    wfm_test_open_mem(&r, "idle.xaml", IDLE_XAML);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wfm_ctx *ctx = wfm__instance_hold(r.inst);
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr)); /* the forked test's own stderr */
    wfm__sched_set_saved_state(ctx, WFM__SCHED_CLOSED);       /* IDLE -> (restore) CLOSED */
    wfm__instance_unhold(r.inst);
    wfm_test_close(&r);
}
END_TEST

Suite *modern_sched_suite(void)
{
    Suite *s = suite_create("modern_sched");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_parallel_runs_branch_one_first_depth_first);
    tcase_add_test(core, test_parallel_switches_branch_when_one_blocks);
    tcase_add_test(core, test_parallel_for_each_runs_last_item_first);
    tcase_add_test(core, test_pick_cancels_losers_before_winner_action);
    tcase_add_test(core, test_parallel_completion_condition_cancels_the_rest);
    tcase_add_test(core, test_delay_waits_for_the_clock);
    tcase_add_test(core, test_timers_fire_in_due_order);
    tcase_add_test(core, test_pick_timer_wins_and_removes_the_bookmark);
    tcase_add_test(core, test_unhandled_fault_faults_instance_with_location);
    tcase_add_test(core, test_caught_fault_cancels_siblings_normally);
    tcase_add_test(core, test_fault_through_canceling_activity_aborts_instance);
    tcase_add_test(core, test_host_cancel_runs_cancellation_handlers);
    tcase_add_test(core, test_terminate_ends_instance_at_once);
    tcase_add_test(core, test_host_terminate_of_idle_instance);
    tcase_add_test(core, test_many_instances_on_the_pool_from_several_threads);
    tcase_add_test(core, test_pool_completion_callback_and_rerun_refused);
    tcase_add_test(core, test_pool_timer_thread_resumes_waiting_instances);
    tcase_add_test(core, test_multiple_and_nonblocking_bookmarks);
    tcase_add_test(core, test_handled_fault_completes_parent_that_lost_its_child);
    tcase_add_test(core, test_schedule_in_env_runs_child_in_the_kinds_environment);
    tcase_add_test(core, test_schedule_item_schedules_list_items_and_refuses_others);
    tcase_add_test(core, test_ctx_nomem_faults_the_instance_without_exception);
    tcase_add_test(core, test_asserts_are_enabled_in_this_build);
    tcase_add_test_raise_signal(core, test_illegal_state_move_is_caught_by_an_assert, SIGABRT);
    tcase_set_timeout(core, 30);
    suite_add_tcase(s, core);
    TCase *leaf = tcase_create("inline");
    tcase_add_test(leaf, test_inline_assign_fault_in_while_is_caught_by_trycatch);
    tcase_add_test(leaf, test_inline_parallel_for_each_fault_cancels_the_pending_bodies);
    tcase_add_test(leaf, test_inline_while_canceled_at_a_run_budget_stops_where_scheduled_would);
    tcase_add_test(leaf, test_inline_loops_save_the_same_state_beside_a_persist);
    suite_add_tcase(s, leaf);
    return s;
}

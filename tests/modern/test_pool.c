/* test_pool.c — the worker pool: instances started on it all run to the end with their own
 * results, batched wake-ups still start a lone instance nobody waits for, wfm_runtime_wait_idle
 * returns only once everything is done, and instances destroyed while queued leave the queue
 * consistent. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_modern.h"

static const char seq_xaml[] =
    "<Activity x:Class=\"T.Pool\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\""
    " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"
    "<x:Members><x:Property Name=\"N\" Type=\"InArgument(x:Int32)\"/>"
    "<x:Property Name=\"Result\" Type=\"OutArgument(x:Int32)\"/></x:Members>"
    "<Sequence><Assign x:TypeArguments=\"x:Int32\" To=\"[Result]\" Value=\"[N * 3 + 1]\"/>"
    "</Sequence></Activity>";

static wfm_runtime *pool_runtime(unsigned workers, wfm_definition **def)
{
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = workers;
    o.write = wfm_test_discard;
    wfm_runtime *rt = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    ck_assert_int_eq(
        wfm_runtime_load_mem(rt, "pool.xaml", seq_xaml, strlen(seq_xaml), def, NULL, &err), WF_OK);
    return rt;
}

static wfm_instance *started(wfm_runtime *rt, wfm_definition *def, int32_t n)
{
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_value v = wf_int32(n);
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_set_input(inst, "N", &v, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_start(inst, &err), WF_OK);
    return inst;
}

enum { MANY = 1000 };

START_TEST(test_pool_runs_many_instances_started_at_once)
{
    for (unsigned workers = 1; workers <= 2; workers++) {
        wfm_definition *def = NULL;
        wfm_runtime *rt = pool_runtime(workers, &def);
        static wfm_instance *insts[MANY];
        for (int round = 0; round < 3; round++) { /* later rounds reuse recycled shells */
            for (int i = 0; i < MANY; i++)
                insts[i] = started(rt, def, i);
            wfm_runtime_wait_idle(rt);
            for (int i = 0; i < MANY; i++) {
                ck_assert_int_eq(wfm_instance_state_get(insts[i]), WFM_INSTANCE_CLOSED);
                ck_assert_int_eq(wfm_instance_output(insts[i], "Result")->u.i32, i * 3 + 1);
                wfm_instance_destroy(insts[i]);
            }
        }
        wfm_stats s;
        wfm_runtime_stats(rt, &s);
        ck_assert_uint_eq(s.instances_completed, 3 * MANY);
        wfm_definition_release(def);
        wfm_runtime_destroy(rt);
    }
}
END_TEST

typedef struct done_flag {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int done;
} done_flag;

static void on_done(wfm_instance *inst, void *ud)
{
    (void)inst;
    done_flag *f = ud;
    pthread_mutex_lock(&f->lock);
    f->done++;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->lock);
}

/* Nobody waits on the pool: the short queue's deferred wake-up must still run it (a lost
 * wake-up hangs here until Check's timeout fails the test). */
START_TEST(test_pool_runs_a_lone_instance_nobody_waits_for)
{
    wfm_definition *def = NULL;
    wfm_runtime *rt = pool_runtime(2, &def);
    done_flag f = {.done = 0};
    pthread_mutex_init(&f.lock, NULL);
    pthread_cond_init(&f.cv, NULL);
    for (int k = 0; k < 3; k++) {
        wfm_instance *inst = NULL;
        wf_error err = WF_ERROR_INIT;
        wf_value v = wf_int32(k);
        ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
        ck_assert_int_eq(wfm_instance_set_input(inst, "N", &v, &err), WF_OK);
        wfm_instance_on_complete(inst, on_done, &f);
        ck_assert_int_eq(wfm_instance_start(inst, &err), WF_OK);
        pthread_mutex_lock(&f.lock);
        while (f.done <= k)
            pthread_cond_wait(&f.cv, &f.lock);
        pthread_mutex_unlock(&f.lock);
        ck_assert_int_eq(wfm_instance_output(inst, "Result")->u.i32, k * 3 + 1);
        wfm_instance_destroy(inst);
    }
    pthread_mutex_destroy(&f.lock);
    pthread_cond_destroy(&f.cv);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

START_TEST(test_pool_destroying_queued_instances_keeps_the_queue)
{
    wfm_definition *def = NULL;
    wfm_runtime *rt = pool_runtime(2, &def);
    static wfm_instance *insts[MANY];
    for (int i = 0; i < MANY; i++)
        insts[i] = started(rt, def, i);
    for (int i = 0; i < MANY; i += 2) { /* queued, running or done: all must be fine */
        wfm_instance_destroy(insts[i]);
        insts[i] = NULL;
    }
    wfm_runtime_wait_idle(rt);
    for (int i = 1; i < MANY; i += 2) {
        ck_assert_int_eq(wfm_instance_state_get(insts[i]), WFM_INSTANCE_CLOSED);
        ck_assert_int_eq(wfm_instance_output(insts[i], "Result")->u.i32, i * 3 + 1);
        wfm_instance_destroy(insts[i]);
    }
    /* the pool is still usable after the removals */
    wfm_instance *again = started(rt, def, 7);
    wfm_runtime_wait_idle(rt);
    ck_assert_int_eq(wfm_instance_output(again, "Result")->u.i32, 22);
    wfm_instance_destroy(again);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}
END_TEST

Suite *modern_pool_suite(void)
{
    Suite *s = suite_create("modern_pool");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 60);
    tcase_add_test(core, test_pool_runs_many_instances_started_at_once);
    tcase_add_test(core, test_pool_runs_a_lone_instance_nobody_waits_for);
    tcase_add_test(core, test_pool_destroying_queued_instances_keeps_the_queue);
    suite_add_tcase(s, core);
    return s;
}

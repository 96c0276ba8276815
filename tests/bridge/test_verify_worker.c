/* test_verify_worker.c — verify's worker processes (bridge/wfb_verify_iso.c,
 * wfb_verify_worker.c, wfb_verify_fresh.c; docs/verify.md "Isolation"): a worker runs case
 * after case, and each run still sees the native state of a fresh process (static counter,
 * heap cache, descriptor, thread-local counter, environment, signal handler, directory,
 * umask); a crash in the middle of a batch changes no other case's observation, and the
 * observations do not depend on -j. The library is tests/bridge/libs/holdorders. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../bridge/wfb_verify.h"
#include "../../common/wf_mem.h"
#include "../wf_test_util.h"

#define STATE_XOML "tests/bridge/data/verify_iso/hold_state.xoml"
#define HOLD_XOML  "tests/bridge/data/verify_iso/hold_order.xoml"

typedef struct bench_pool {
    wf_libpath *lp;
    wfb_vlegacy *l;
    wfb_vpool *pool;
} bench_pool;

static void pool_open(bench_pool *b, const char *xoml, unsigned jobs, double timeout_s)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &b->lp, &err), WF_OK);
    ck_assert_msg(wfb_vlegacy_load(xoml, NULL, b->lp, 20000, NULL, &b->l, &err) == WF_OK, "%s",
                  err.message);
    wfb_vpool_opts po = WFB_VPOOL_OPTS_INIT;
    po.jobs = jobs;
    po.timeout_s = timeout_s;
    ck_assert_int_eq(wfb_vpool_create(&po, &b->pool, &err), WF_OK);
}

static void pool_close(bench_pool *b)
{
    wfb_vpool_destroy(b->pool);
    wfb_vlegacy_destroy(b->l);
    wf_libpath_destroy(b->lp);
}

/* Case `index`: Sku SKU-index (null for a negative index), Quantity, Mode 0. */
static void make_case(wfb_vcase *c, int index, int quantity)
{
    wf_error err = WF_ERROR_INIT;
    char text[64];
    memset(c, 0, sizeof *c);
    snprintf(text, sizeof text, "c%d", index);
    c->name = wf_strdup(text);
    snprintf(text, sizeof text, "\"SKU-%d\"", index);
    ck_assert_int_eq(wfb_vcase_set(c, "Sku", index < 0 ? "null" : text, &err), WF_OK);
    snprintf(text, sizeof text, "%d", quantity);
    ck_assert_int_eq(wfb_vcase_set(c, "Quantity", text, &err), WF_OK);
    ck_assert_int_eq(wfb_vcase_set(c, "Mode", "0", &err), WF_OK);
}

static const wf_value *output(const wfb_vobs *o, const char *name)
{
    for (size_t i = 0; i < o->output_count; i++)
        if (strcmp(o->output_names[i], name) == 0)
            return &o->output_values[i];
    ck_abort_msg("no output %s", name);
    return NULL;
}

/* Run cases[0..n) in the pool into obs (submitted at once, then waited for). */
static void run_all(bench_pool *b, const wfb_vcase *cases, wfb_vobs *obs, size_t n)
{
    wf_error err = WF_ERROR_INIT;
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(wfb_vpool_submit(b->pool, b->l, NULL, &cases[i], &obs[i], &err) == WF_OK,
                      "%s", err.message);
    ck_assert_msg(wfb_vpool_wait(b->pool, &err) == WF_OK, "%s", err.message);
}

#define STATE_RUNS 101

/* One worker makes 101 runs: the last sees what the first saw. */
START_TEST(test_verify_worker_state_is_fresh_after_a_hundred_runs)
{
    bench_pool b;
    pool_open(&b, STATE_XOML, 1, 10);
    static wfb_vcase cases[STATE_RUNS];
    static wfb_vobs obs[STATE_RUNS];
    for (int i = 0; i < STATE_RUNS; i++)
        make_case(&cases[i], i, 1 + i % 3);
    run_all(&b, cases, obs, STATE_RUNS);
    const wf_value *pid = output(&obs[0], "Pid"), *handle = output(&obs[0], "LogHandle");
    ck_assert_int_gt(handle->u.i32, 2);
    for (int i = 0; i < STATE_RUNS; i++) {
        const wfb_vobs *o = &obs[i];
        ck_assert_str_eq(o->status, "Closed");
        ck_assert_msg(wf_value_equal(output(o, "Pid"), pid), "run %d: another process", i);
        ck_assert_int_eq(output(o, "Sequence")->u.i32, 1);    /* static counter */
        ck_assert_int_eq(output(o, "Cached")->u.i32, 0);      /* heap cache */
        ck_assert(wf_value_equal(output(o, "LogHandle"), handle)); /* descriptor */
        ck_assert_int_eq(output(o, "ThreadCalls")->u.i32, 1); /* __thread counter */
        ck_assert_int_eq(output(o, "Marks")->u.i32, 0); /* environment, signal, cwd, umask */
    }
    for (int i = 0; i < STATE_RUNS; i++) {
        wfb_vobs_fini(&obs[i]);
        wfb_vcase_fini(&cases[i]);
    }
    pool_close(&b);
}
END_TEST

/* What ho_mark_process changes in the process that runs it, kept to be put back. */
typedef struct process_marks {
    int cwd_fd;
    mode_t umask;
    struct sigaction usr1;
} process_marks;

static void marks_save(process_marks *m)
{
    m->cwd_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(m->cwd_fd, 0);
    m->umask = umask(022);
    umask(m->umask);
    ck_assert_int_eq(sigaction(SIGUSR1, NULL, &m->usr1), 0);
}

static void marks_restore(process_marks *m)
{
    ck_assert_int_eq(fchdir(m->cwd_fd), 0);
    close(m->cwd_fd);
    umask(m->umask);
    ck_assert_int_eq(sigaction(SIGUSR1, &m->usr1, NULL), 0);
    unsetenv("HO_MARKED");
}

/* The same library in this process: the second run sees the first one's state everywhere,
 * so the assertions above can fail. The test puts the process back as it found it (the
 * directory, umask, handler and environment), so nothing after it, in this process or at its
 * exit, runs in "/" with a foreign handler. */
START_TEST(test_verify_worker_in_process_runs_see_each_others_state)
{
    wf_error err = WF_ERROR_INIT;
    process_marks marks;
    marks_save(&marks);
    bench_pool b;
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &b.lp, &err), WF_OK);
    ck_assert_int_eq(wfb_vlegacy_load(STATE_XOML, NULL, b.lp, 20000, NULL, &b.l, &err), WF_OK);
    wfb_vpool_opts po = WFB_VPOOL_OPTS_INIT;
    po.in_process = true;
    ck_assert_int_eq(wfb_vpool_create(&po, &b.pool, &err), WF_OK);
    wfb_vcase cases[2];
    wfb_vobs obs[2];
    make_case(&cases[0], 0, 1);
    make_case(&cases[1], 1, 1);
    run_all(&b, cases, obs, 2);
    ck_assert_int_eq(output(&obs[1], "Sequence")->u.i32, 2);
    ck_assert_int_eq(output(&obs[1], "Cached")->u.i32, 1);
    ck_assert_int_eq(output(&obs[1], "ThreadCalls")->u.i32, 2);
    ck_assert_int_eq(output(&obs[1], "Marks")->u.i32, 15);
    for (int i = 0; i < 2; i++) {
        wfb_vobs_fini(&obs[i]);
        wfb_vcase_fini(&cases[i]);
    }
    pool_close(&b);
    marks_restore(&marks);
}
END_TEST

#define BATCH 12

/* The batch of hold_order.xoml: a null Sku crashes (case 5), a negative Quantity aborts
 * (case 8); the others end normally. */
static void batch_cases(wfb_vcase *cases, bool with_faults)
{
    for (int i = 0; i < BATCH; i++) {
        bool crash = with_faults && i == 5, abort_it = with_faults && i == 8;
        make_case(&cases[i], crash ? -1 : i, abort_it ? -1 : 1 + i % 4);
    }
}

static void batch_run(const char *xoml, unsigned jobs, bool with_faults, wfb_vobs *obs)
{
    bench_pool b;
    pool_open(&b, xoml, jobs, 10);
    wfb_vcase cases[BATCH];
    batch_cases(cases, with_faults);
    run_all(&b, cases, obs, BATCH);
    for (int i = 0; i < BATCH; i++)
        wfb_vcase_fini(&cases[i]);
    pool_close(&b);
}

static void assert_same(const wfb_vobs *a, const wfb_vobs *b, int index)
{
    wf_error err = WF_ERROR_INIT;
    bool equal = false;
    wfb_vdiff d;
    memset(&d, 0, sizeof d);
    ck_assert_int_eq(wfb_vcompare(a, b, 0, &equal, &d, &err), WF_OK);
    ck_assert_msg(equal, "case %d: %s: %s vs %s", index, d.what, d.legacy, d.modern);
    wfb_vdiff_fini(&d);
}

/* A crash and an abort mid-batch replace their worker; every other case's observation is
 * what it is in a batch without them. */
START_TEST(test_verify_worker_crash_mid_batch_changes_no_other_case)
{
    wfb_vobs faulty[BATCH], clean[BATCH];
    batch_run(HOLD_XOML, 2, true, faulty);
    batch_run(HOLD_XOML, 2, false, clean);
    ck_assert_str_eq(faulty[5].status, "Crashed");
    ck_assert_str_eq(faulty[5].fault_message, "crashed: SIGSEGV in ho_price_order");
    ck_assert_str_eq(faulty[8].status, "Crashed");
    ck_assert_str_eq(faulty[8].fault_type, "SIGABRT");
    for (int i = 0; i < BATCH; i++) {
        if (i != 5 && i != 8)
            assert_same(&faulty[i], &clean[i], i);
        wfb_vobs_fini(&faulty[i]);
        wfb_vobs_fini(&clean[i]);
    }
}
END_TEST

/* One worker or two: the same observations, crashes included. */
START_TEST(test_verify_worker_results_do_not_depend_on_jobs)
{
    wfb_vobs one[BATCH], two[BATCH];
    batch_run(HOLD_XOML, 1, true, one);
    batch_run(HOLD_XOML, 2, true, two);
    for (int i = 0; i < BATCH; i++) {
        assert_same(&one[i], &two[i], i);
        wfb_vobs_fini(&one[i]);
        wfb_vobs_fini(&two[i]);
    }
}
END_TEST

Suite *verify_worker_suite(void)
{
    Suite *s = suite_create("verify_worker");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_test(core, test_verify_worker_state_is_fresh_after_a_hundred_runs);
    tcase_add_test(core, test_verify_worker_in_process_runs_see_each_others_state);
    tcase_add_test(core, test_verify_worker_crash_mid_batch_changes_no_other_case);
    tcase_add_test(core, test_verify_worker_results_do_not_depend_on_jobs);
    suite_add_tcase(s, core);
    return s;
}

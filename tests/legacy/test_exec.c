/* test_exec.c — the legacy executor core: FIFO order, Parallel round-robin interleaving seen in
 * the trace of CodeActivity handlers, the status lifecycle, fault handlers (first match in
 * order), cancellation handlers, compensation in reverse completion order (While iterations
 * included), Throw/Terminate/Suspend. Also defines the xt_* helpers the other legacy executor
 * suites use (fixtures in tests/legacy/data/exec/, library tests/legacy/libs/wfexectest/). */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../../legacy/wfl_def.h"
#include "../../bridge/wfb_cli.h"
#include "../../legacy/wfl_exec.h"
#include "../../legacy/wfl_exec_int.h" /* exception_at */
#include "../wf_test_util.h"
#include "test_exec.h"

/* ---- shared helpers ---------------------------------------------------------------------- */
static void record(void *ud, const wfl_trace_rec *rec)
{
    xt_env *e = ud;
    if (rec->kind == WFL_TRACE_NATIVE) {
        wf_buf_adds(&e->calls, rec->activity);
        wf_buf_addc(&e->calls, ',');
        e->native_count++;
        snprintf(e->last_fn, sizeof e->last_fn, "%s", rec->function);
        e->last_in_count = rec->in_count;
        e->last_out_count = rec->out_count;
        e->last_status = rec->call_status;
    } else {
        wf_buf_addf(&e->statuses, "%s:%s", rec->activity, wfl_status_name(rec->status));
        if (rec->status == WFL_ST_CLOSED)
            wf_buf_addf(&e->statuses, "/%s", wfl_result_name(rec->result));
        wf_buf_addc(&e->statuses, ',');
    }
}

static int64_t fake_clock(void *ud)
{
    return ((xt_env *)ud)->now;
}

wf_status xt_load_status(xt_env *e, const char *file, const char *rules, wf_error *err)
{
    memset(e, 0, sizeof *e);
    wf_buf_init(&e->calls);
    wf_buf_init(&e->statuses);
    e->now = 1700000000000000LL;
    e->types = wf_types_create();
    ck_assert_ptr_nonnull(e->types);
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &e->libpath, NULL), WF_OK);
    char path[512], rpath[512];
    snprintf(path, sizeof path, "tests/legacy/data/exec/%s", file);
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = e->types;
    lo.libpath = e->libpath;
    lo.no_auto_rules = true;
    if (rules) {
        snprintf(rpath, sizeof rpath, "tests/legacy/data/exec/%s", rules);
        lo.rules_path = rpath;
    }
    return wfl_definition_load_file(&lo, path, &e->def, err);
}

void xt_load(xt_env *e, const char *file, const char *rules)
{
    wf_error err = WF_ERROR_INIT;
    wf_status rc = xt_load_status(e, file, rules, &err);
    ck_assert_msg(rc == WF_OK, "%s: %s:%u:%u: %s", file, err.file, err.line, err.col, err.message);
}

wfl_exec_opts xt_opts(xt_env *e)
{
    wfl_exec_opts o = WFL_EXEC_OPTS_INIT;
    o.trace = record;
    o.trace_ud = e;
    o.clock = fake_clock;
    o.clock_ud = e;
    o.instance_id = "test-instance";
    return o;
}

void xt_start(xt_env *e)
{
    wfl_exec_opts o = xt_opts(e);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_exec_create(e->def, NULL, &o, &e->ex, &err), WF_OK);
}

void xt_set(xt_env *e, const char *name, const char *text)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_exec_set_input_text(e->ex, name, text, &err) == WF_OK, "%s", err.message);
}

wfl_exec_state xt_run(xt_env *e)
{
    wfl_exec_state st;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_exec_run(e->ex, &st, &err) == WF_OK, "%s", err.message);
    return st;
}

wfl_exec_state xt_deliver(xt_env *e, const char *queue, const char *json)
{
    wf_value v = wf_null();
    if (json)
        ck_assert_int_eq(wf_json_parse(e->types, json, strlen(json), &v, NULL), WF_OK);
    wfl_exec_state st;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfl_exec_deliver(e->ex, queue, &v, &st, &err);
    wf_value_release(&v);
    ck_assert_msg(rc == WF_OK, "%s", err.message);
    return st;
}

int32_t xt_int(xt_env *e, const char *name)
{
    wf_value v;
    ck_assert_int_eq(wfl_exec_output(e->ex, name, &v, NULL), WF_OK);
    ck_assert_int_eq(v.type->kind, WF_K_INT32);
    return v.u.i32;
}

bool xt_bool(xt_env *e, const char *name)
{
    wf_value v;
    ck_assert_int_eq(wfl_exec_output(e->ex, name, &v, NULL), WF_OK);
    ck_assert_int_eq(v.type->kind, WF_K_BOOL);
    return v.u.b;
}

const char *xt_str(xt_env *e, const char *name)
{
    wf_value v;
    ck_assert_int_eq(wfl_exec_output(e->ex, name, &v, NULL), WF_OK);
    snprintf(e->text, sizeof e->text, "%s", wf_value_str(&v));
    wf_value_release(&v);
    return e->text;
}

bool xt_waits_on(xt_env *e, const char *queue)
{
    for (size_t i = 0; i < wfl_exec_queue_count(e->ex); i++)
        if (strcmp(wfl_exec_queue_name(e->ex, i), queue) == 0)
            return true;
    return false;
}

void xt_free(xt_env *e)
{
    wfl_exec_destroy(e->ex);
    wfl_definition_destroy(e->def);
    wf_libpath_destroy(e->libpath);
    wf_types_destroy(e->types);
    wf_buf_fini(&e->calls);
    wf_buf_fini(&e->statuses);
}

/* ---- core ------------------------------------------------------------------------------------ */
START_TEST(test_sequence_if_while_run_in_order)
{
    xt_env e;
    xt_load(&e, "basic.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Limit", "2");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "AC");
    ck_assert_int_eq(xt_int(&e, "Count"), 2);
    ck_assert_int_eq(xt_int(&e, "Sum"), 4);
    ck_assert_str_eq(e.calls.data,
                     "codeA,ifFlag,codeC,while1,tick,counter1,while1,tick,counter1,while1,add1,");
    /* defect #26: a DateTime property nothing set is default(DateTime), not the epoch */
    wf_value started;
    ck_assert_int_eq(wfl_exec_output(e.ex, "Started", &started, NULL), WF_OK);
    ck_assert_ptr_eq(started.type, &wf_type_datetime);
    wf_buf text;
    wf_buf_init(&text);
    ck_assert(wf_value_to_text(&started, &text));
    ck_assert_str_eq(text.data, "0001-01-01T00:00:00Z");
    wf_buf_fini(&text);
    xt_free(&e);
}
END_TEST

START_TEST(test_parallel_branches_interleave_round_robin)
{
    xt_env e;
    xt_load(&e, "parallel.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    /* FIFO: each branch enqueues its next child at the back, so branches alternate */
    ck_assert_str_eq(e.calls.data, "a1,b1,a2,b2,a3,b3,after,");
    ck_assert_str_eq(xt_str(&e, "Log"), "ABABABC");
    xt_free(&e);
}
END_TEST

START_TEST(test_status_lifecycle_is_traced)
{
    xt_env e;
    xt_load(&e, "parallel.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    const char *s = e.statuses.data;
    const char *a1_exec = strstr(s, "a1:Executing,");
    const char *a1_closed = strstr(s, "a1:Closed/Succeeded,");
    ck_assert_ptr_nonnull(a1_exec);
    ck_assert_ptr_nonnull(a1_closed);
    ck_assert(a1_exec < a1_closed);
    /* the request moves the status; the behaviour runs later as a work item */
    ck_assert_ptr_nonnull(strstr(s, "a1:Executing,b1:Executing,a1:Closed/Succeeded,"));
    ck_assert_ptr_nonnull(strstr(s, "ExecFlow:Executing,"));
    /* the parallel closes only after both branches */
    const char *left = strstr(s, "left:Closed/Succeeded");
    const char *right = strstr(s, "right:Closed/Succeeded");
    const char *par = strstr(s, "parallel1:Closed/Succeeded");
    ck_assert_ptr_nonnull(left);
    ck_assert_ptr_nonnull(right);
    ck_assert_ptr_nonnull(par);
    ck_assert(par > left && par > right);
    ck_assert_ptr_nonnull(strstr(s, "ExecFlow:Closed/Succeeded,"));
    xt_free(&e);
}
END_TEST

START_TEST(test_first_matching_fault_handler_in_order_runs)
{
    xt_env e;
    xt_load(&e, "faults.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    /* CreditException is-a ApplicationException: onArgument skipped, onApplication eats it,
     * the workflow continues after the scope */
    ck_assert_str_eq(xt_str(&e, "Log"), "ABC");
    ck_assert_str_eq(e.calls.data, "before,appHandler,afterScope,");
    wf_value caught;
    ck_assert_int_eq(wfl_exec_output(e.ex, "Caught", &caught, NULL), WF_OK);
    ck_assert_str_eq(caught.type->name, "Tests.CreditException");
    wf_value_release(&caught);
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "throw1:Faulting,"));
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "scope:Faulting,"));
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "scope:Closed/Faulted,"));
    ck_assert_ptr_null(strstr(e.statuses.data, "never:"));
    xt_free(&e);
}
END_TEST

START_TEST(test_unhandled_fault_compensates_in_reverse_then_faults_root)
{
    xt_env e;
    xt_load(&e, "compensation.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Limit", "3");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_FAULTED);
    /* "last" completed after the three While iterations: undone first, then 3, 2, 1 */
    ck_assert_str_eq(xt_str(&e, "Log"), "D321");
    const wf_value *exc = wfl_exec_exception(e.ex);
    ck_assert_str_eq(exc->type->name, "InvalidOperationException");
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "step:Compensating,"));
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "step:Closed/Compensated,"));
    xt_free(&e);
}
END_TEST

START_TEST(test_compensate_activity_undoes_loop_iterations_newest_first)
{
    xt_env e;
    xt_load(&e, "compensate.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Limit", "3");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    /* a handled fault compensates nothing by itself: the CompensateActivity in the handler
     * undoes each kept While iteration (its own Sum), newest first, then the flow goes on */
    ck_assert_str_eq(xt_str(&e, "Log"), "321DA");
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "undoSteps:Closed/Succeeded,"));
    xt_free(&e);
}
END_TEST

START_TEST(test_cancel_runs_cancellation_handler_then_compensates)
{
    xt_env e;
    xt_load(&e, "cancel.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert(xt_waits_on(&e, "ITestService.Approved"));
    wfl_exec_state st;
    ck_assert_int_eq(wfl_exec_cancel(e.ex, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_CANCELED);
    /* scope's CancellationHandler (B), then the root's default compensation of "first" (D) */
    ck_assert_str_eq(xt_str(&e, "Log"), "ABD");
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "approved:Closed/Canceled,"));
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "scope:Closed/Canceled,"));
    ck_assert_ptr_nonnull(strstr(e.statuses.data, "first:Closed/Compensated,"));
    ck_assert_uint_eq(wfl_exec_queue_count(e.ex), 0);
    xt_free(&e);
}
END_TEST

START_TEST(test_throw_terminate_suspend)
{
    xt_env e;
    xt_load(&e, "terminate.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_TERMINATED);
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    ck_assert_str_eq(wfl_exec_exception(e.ex)->type->name, "WorkflowTerminatedException");
    ck_assert_str_eq(wf_value_exc_message(wfl_exec_exception(e.ex)), "stop here");
    xt_free(&e);

    xt_load(&e, "suspend.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_SUSPENDED);
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    ck_assert_str_eq(wf_value_exc_message(wfl_exec_exception(e.ex)), "hold");
    wfl_exec_state st;
    ck_assert_int_eq(wfl_exec_resume(e.ex, &st, NULL), WF_OK);
    ck_assert_int_eq(st, WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "AB");
    xt_free(&e);
}
END_TEST

/* The state names where the instance stopped: the Terminate or Suspend (with its Error
 * text), or the activity whose exception went unhandled (not the root it faulted). */
START_TEST(test_stopped_instance_carries_the_activity_location)
{
    xt_env e;
    xt_load(&e, "suspend.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_SUSPENDED);
    ck_assert_str_eq(wf_value_exc_message(wfl_exec_exception(e.ex)), "hold");
    ck_assert_ptr_nonnull(strstr(e.ex->exception_at.file, "suspend.xoml"));
    ck_assert_uint_eq(e.ex->exception_at.line, 3);
    ck_assert_uint_eq(e.ex->exception_at.col, 2);
    xt_free(&e);

    xt_load(&e, "terminate.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_TERMINATED);
    ck_assert_uint_eq(e.ex->exception_at.line, 3);
    ck_assert_uint_eq(e.ex->exception_at.col, 2);
    xt_free(&e);

    xt_load(&e, "compensation.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Limit", "3");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_FAULTED);
    ck_assert_uint_eq(e.ex->exception_at.line, 21);
    ck_assert_uint_eq(e.ex->exception_at.col, 3);
    xt_free(&e);
}
END_TEST

/* WF3's status moves (docs/semantics.md §4): exactly these ten are legal. */
START_TEST(test_status_moves_follow_the_wf3_table)
{
    static const char *const legal[] = {
        "Initialized>Executing", "Executing>Canceling", "Executing>Closed",
        "Executing>Faulting",    "Canceling>Closed",    "Canceling>Faulting",
        "Closed>Compensating",   "Compensating>Closed", "Compensating>Faulting",
        "Faulting>Closed"};
    size_t seen = 0;
    for (int from = WFL_ST_INITIALIZED; from <= WFL_ST_FAULTING; from++) {
        for (int to = WFL_ST_INITIALIZED; to <= WFL_ST_FAULTING; to++) {
            char move[40];
            snprintf(move, sizeof move, "%s>%s", wfl_status_name((wfl_status)from),
                     wfl_status_name((wfl_status)to));
            bool want = false;
            for (size_t i = 0; i < sizeof legal / sizeof *legal; i++)
                want = want || strcmp(legal[i], move) == 0;
            ck_assert_msg(wfl_status_move_is_legal((wfl_status)from, (wfl_status)to) == want,
                          "%s", move);
            seen += want;
        }
    }
    ck_assert_uint_eq(seen, 10);
    ck_assert(!wfl_status_move_is_legal((wfl_status)6, WFL_ST_CLOSED));
}
END_TEST

/* Many executors of one definition on many threads: no shared mutable state. */
typedef struct thread_case {
    const wfl_definition *def;
    int ok;
} thread_case;

static void *run_many(void *arg)
{
    thread_case *tc = arg;
    for (int i = 0; i < 50; i++) {
        wfl_exec *ex = NULL;
        wfl_exec_state st = WFL_EXEC_CREATED;
        wf_value log = wf_null();
        if (wfl_exec_create(tc->def, NULL, NULL, &ex, NULL) == WF_OK &&
            wfl_exec_run(ex, &st, NULL) == WF_OK && st == WFL_EXEC_CLOSED &&
            wfl_exec_output(ex, "Log", &log, NULL) == WF_OK &&
            strcmp(wf_value_str(&log), "ABABABC") == 0)
            tc->ok++;
        wf_value_release(&log);
        wfl_exec_destroy(ex);
    }
    return NULL;
}

START_TEST(test_executors_run_on_many_threads)
{
    xt_env e;
    xt_load(&e, "parallel.xoml", NULL);
    pthread_t threads[4];
    thread_case cases[4];
    for (int i = 0; i < 4; i++) {
        cases[i] = (thread_case){e.def, 0};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, run_many, &cases[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        ck_assert_int_eq(cases[i].ok, 50);
    }
    xt_free(&e);
}
END_TEST

/* Run the run-legacy verb with stdout and stderr in files; returns its exit code. */
static int run_verb(const char *dir, char **argv, int argc, char **out, char **errout)
{
    char opath[512], epath[512];
    snprintf(opath, sizeof opath, "%s/out.txt", dir);
    snprintf(epath, sizeof epath, "%s/err.txt", dir);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    int fo = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int fe = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fo, 1);
    dup2(fe, 2);
    int code = wfb_cmd_run_legacy(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(fo);
    close(fe);
    close(saved_out);
    close(saved_err);
    size_t len;
    *out = wf_test_read_file(opath, &len);
    *errout = wf_test_read_file(epath, &len);
    return code;
}

START_TEST(test_run_legacy_verb_prints_the_contract)
{
    const char *dir = wf_test_tmpdir();
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", dir);
    char *argv[] = {"run-legacy", "tests/legacy/data/exec/listen.xoml",
                    "--lib-path", (char *)wf_test_lib_dir(),
                    "--event",    "Approved=ann",
                    "--json",     "--trace"};
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run_verb(tmp, argv, 8, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "{\"status\": \"Closed\", \"outputs\": {\"Count\": 0, "));
    ck_assert_ptr_nonnull(strstr(out, "\"Approver\": \"ann\""));
    ck_assert_ptr_nonnull(strstr(out, "\"bookmarks\": []}\n"));
    ck_assert_ptr_nonnull(strstr(err, "{\"activity\": \"gotApproval\", \"function\": "
                                      "\"wx_append_a\", \"in\": {\"Log\": null}, "
                                      "\"out\": {\"Log\": \"A\"}}\n"));
    wf_free(out);
    wf_free(err);
    /* idle: the queue it waits on is the bookmark */
    char *argv2[] = {"run-legacy", "tests/legacy/data/exec/cancel.xoml", "--lib-path",
                     (char *)wf_test_lib_dir(), "--json"};
    ck_assert_int_eq(run_verb(tmp, argv2, 5, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "{\"status\": \"Idle\""));
    ck_assert_ptr_nonnull(strstr(out, "\"bookmarks\": [\"ITestService.Approved\"]}"));
    wf_free(out);
    wf_free(err);
    /* an unhandled exception terminates the instance: exit 1 with the error */
    char *argv3[] = {"run-legacy", "tests/legacy/data/exec/failhandler.xoml", "--lib-path",
                     (char *)wf_test_lib_dir(), "--json"};
    ck_assert_int_eq(run_verb(tmp, argv3, 5, &out, &err), 1);
    ck_assert_ptr_nonnull(strstr(out, "{\"status\": \"Terminated\""));
    ck_assert_ptr_nonnull(strstr(out, "\"error\": {\"type\": \"NativeException\", "));
    wf_free(out);
    wf_free(err);
    /* every load diagnostic, exit 2 */
    char *argv4[] = {"run-legacy", "tests/legacy/data/exec/bad/missing_library.xoml", "--lib-path",
                     (char *)wf_test_lib_dir(), "--json"};
    ck_assert_int_eq(run_verb(tmp, argv4, 5, &out, &err), 2);
    ck_assert_str_eq(out, "");
    ck_assert_ptr_nonnull(strstr(err, "tests/legacy/data/exec/bad/missing_library.xoml:1:1: "
                                      "error: type library 'nosuchlib'"));
    wf_free(out);
    wf_free(err);
    wf_test_tmpdir_remove(tmp);
}
END_TEST

/* ---- bad input --------------------------------------------------------------------------------
 */
START_TEST(test_host_misuse_is_reported)
{
    xt_env e;
    xt_load(&e, "cancel.xoml", NULL);
    xt_start(&e);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_exec_set_input_text(e.ex, "NoSuchProperty", "1", &err), WF_E_NAME);
    ck_assert_ptr_nonnull(strstr(err.message, "NoSuchProperty"));
    wf_error_clear(&err);
    ck_assert_int_eq(wfl_exec_set_input_text(e.ex, "Count", "many", &err), WF_E_SYNTAX);
    wf_error_clear(&err);
    wfl_exec_state st;
    ck_assert_int_eq(wfl_exec_deliver(e.ex, "ITestService.Approved", NULL, &st, &err), WF_E_STATE);
    wf_error_clear(&err);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert_int_eq(wfl_exec_set_input_text(e.ex, "Count", "1", &err), WF_E_STATE);
    wf_error_clear(&err);
    ck_assert_int_eq(wfl_exec_deliver(e.ex, "Nope.Never", NULL, &st, &err), WF_E_NOTFOUND);
    ck_assert_ptr_nonnull(strstr(err.message, "Nope.Never"));
    wf_error_clear(&err);
    ck_assert_int_eq(wfl_exec_resume(e.ex, &st, &err), WF_E_STATE);
    wf_error_clear(&err);
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "\"ann\""), WFL_EXEC_CLOSED);
    ck_assert_int_eq(wfl_exec_run(e.ex, &st, &err), WF_E_STATE);
    xt_free(&e);
}
END_TEST

START_TEST(test_unknown_subtree_is_a_name_error)
{
    xt_env e;
    xt_load(&e, "basic.xoml", NULL);
    wf_error err = WF_ERROR_INIT;
    wfl_exec *ex = (wfl_exec *)&e; /* must be reset to NULL */
    ck_assert_int_eq(wfl_exec_create(e.def, "noSuchActivity", NULL, &ex, &err), WF_E_NAME);
    ck_assert_ptr_null(ex);
    ck_assert_ptr_nonnull(strstr(err.message, "noSuchActivity"));
    xt_free(&e);
}
END_TEST

START_TEST(test_subtree_runs_alone)
{
    xt_env e;
    xt_load(&e, "natives.xoml", NULL);
    wfl_exec_opts o = xt_opts(&e);
    ck_assert_int_eq(wfl_exec_create(e.def, "concat1", &o, &e.ex, NULL), WF_OK);
    ck_assert_int_eq(wfl_exec_set_input_text(e.ex, "B", "!", NULL), WF_OK);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_str_eq(e.calls.data, "concat1,");
    xt_free(&e);
}
END_TEST

/* The index of output `name` (wfl_exec_output_*). */
static size_t output_index(xt_env *e, const char *name)
{
    for (size_t i = 0; i < wfl_exec_output_count(e->ex); i++)
        if (strcmp(wfl_exec_output_name(e->ex, i), name) == 0)
            return i;
    ck_abort_msg("no output %s", name);
    return 0;
}

/* wfl_exec_reset: the executor runs again exactly as a new one would, whether it closed
 * (after loop contexts were cloned) or still waited on queues and a timer. */
START_TEST(test_reset_runs_again_from_fresh_state)
{
    xt_env e;
    xt_load(&e, "basic.xoml", NULL);
    xt_start(&e);
    xt_set(&e, "Limit", "2");
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    wfl_exec_reset(e.ex, NULL);
    ck_assert_int_eq(wfl_exec_state_get(e.ex), WFL_EXEC_CREATED);
    wfl_exec_stats stats;
    wfl_exec_stats_get(e.ex, &stats);
    ck_assert_uint_eq(stats.work_items, 0);
    ck_assert_int_eq(xt_int(&e, "Count"), 0); /* the defaults again */
    wf_value three = wf_int32(3);
    ck_assert_int_eq(wfl_exec_set_input_at(e.ex, output_index(&e, "Limit"), &three, NULL), WF_OK);
    wf_buf_fini(&e.calls);
    wf_buf_init(&e.calls);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "AC");
    ck_assert_int_eq(xt_int(&e, "Count"), 3);
    ck_assert_str_eq(e.calls.data, "codeA,ifFlag,codeC,while1,tick,counter1,while1,tick,counter1,"
                                   "while1,tick,counter1,while1,add1,");
    xt_free(&e);

    xt_load(&e, "listen.xoml", NULL);
    xt_start(&e);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    wfl_exec_reset(e.ex, NULL);
    int64_t due;
    ck_assert_uint_eq(wfl_exec_queue_count(e.ex), 0);
    ck_assert(!wfl_exec_next_timer(e.ex, &due));
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_IDLE);
    ck_assert(xt_waits_on(&e, "ITestService.Approved"));
    ck_assert(wfl_exec_next_timer(e.ex, &due));
    ck_assert_int_eq(xt_deliver(&e, "ITestService.Approved", "{\"Approver\": \"bo\"}"),
                     WFL_EXEC_CLOSED);
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    xt_free(&e);
}
END_TEST

START_TEST(test_set_input_at_refuses_bad_indexes)
{
    xt_env e;
    xt_load(&e, "basic.xoml", NULL);
    xt_start(&e);
    wf_value one = wf_int32(1);
    wf_error err = WF_ERROR_INIT;
    size_t n = wfl_exec_output_count(e.ex);
    ck_assert_int_eq(wfl_exec_set_input_at(e.ex, n, &one, &err), WF_E_RANGE);
    ck_assert_int_eq(xt_run(&e), WFL_EXEC_CLOSED);
    ck_assert_int_eq(wfl_exec_set_input_at(e.ex, output_index(&e, "Limit"), &one, &err),
                     WF_E_STATE);
    xt_free(&e);
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------ */
wf_status xt_run_once(void *ud)
{
    xt_env *e = ud;
    wfl_exec *ex = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfl_exec_create(e->def, NULL, NULL, &ex, &err);
    wfl_exec_state st = WFL_EXEC_CREATED;
    if (rc == WF_OK)
        rc = wfl_exec_run(ex, &st, &err);
    if (rc == WF_OK && st == WFL_EXEC_IDLE)
        rc = wfl_exec_cancel(ex, &st, &err); /* a waiting run ends through its handlers */
    if (rc == WF_OK && st == WFL_EXEC_FAULTED &&
        strstr(wf_value_exc_message(wfl_exec_exception(ex)), "out of memory"))
        rc = WF_E_NOMEM; /* a native call that could not allocate faults the workflow */
    wfl_exec_destroy(ex);
    return rc;
}

START_TEST(test_run_survives_allocation_failures)
{
    xt_env e;
    xt_load(&e, "parallel.xoml", NULL);
    unsigned runs = wf_test_nomem_loop(xt_run_once, &e, 2000);
    ck_assert_uint_gt(runs, 0);
    xt_free(&e);
}
END_TEST

Suite *legacy_exec_suite(void)
{
    Suite *s = suite_create("legacy_exec");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_sequence_if_while_run_in_order);
    tcase_add_test(core, test_reset_runs_again_from_fresh_state);
    tcase_add_test(core, test_parallel_branches_interleave_round_robin);
    tcase_add_test(core, test_status_lifecycle_is_traced);
    tcase_add_test(core, test_first_matching_fault_handler_in_order_runs);
    tcase_add_test(core, test_unhandled_fault_compensates_in_reverse_then_faults_root);
    tcase_add_test(core, test_compensate_activity_undoes_loop_iterations_newest_first);
    tcase_add_test(core, test_cancel_runs_cancellation_handler_then_compensates);
    tcase_add_test(core, test_throw_terminate_suspend);
    tcase_add_test(core, test_stopped_instance_carries_the_activity_location);
    tcase_add_test(core, test_status_moves_follow_the_wf3_table);
    tcase_add_test(core, test_subtree_runs_alone);
    tcase_add_test(core, test_run_legacy_verb_prints_the_contract);
    tcase_add_test(core, test_executors_run_on_many_threads);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_host_misuse_is_reported);
    tcase_add_test(bad, test_unknown_subtree_is_a_name_error);
    tcase_add_test(bad, test_set_input_at_refuses_bad_indexes);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 60);
    tcase_add_test(nomem, test_run_survives_allocation_failures);
    suite_add_tcase(s, nomem);
    return s;
}

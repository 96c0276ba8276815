/* test_activities_flow.c — Flowchart (FlowStep, FlowDecision, FlowSwitch) and StateMachine
 * (State, Transition) from modern/wfm_act_flow.c, run on the modern runtime with bookmarks
 * resumed by the test; order is asserted through captured WriteLine output
 * (docs/semantics.md §5). Fixtures: tests/modern/data/acts/. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_persist.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_modern.h"

#define ACTS_DIR "tests/modern/data/acts/"

typedef wfm_test_run acts_run;

static void run_open(acts_run *r, const char *file)
{
    char path[256];
    snprintf(path, sizeof path, ACTS_DIR "%s", file);
    wfm_test_open_file(r, path);
}

static void set_string(acts_run *r, const char *name, const char *text)
{
    wf_value v;
    ck_assert_int_eq(wf_value_cstring(text, &v), WF_OK);
    wfm_test_input(r, name, v);
}

/* The blocking bookmarks, sorted and joined with ',' (creation order is not the point). */
static const char *bookmarks(acts_run *r)
{
    static char buf[256];
    const char *names[16];
    size_t n = wfm_instance_bookmark_count(r->inst);
    ck_assert_uint_le(n, 16);
    for (size_t i = 0; i < n; i++)
        names[i] = wfm_instance_bookmark_name(r->inst, i);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(buf, ",");
        strcat(buf, names[i]);
    }
    return buf;
}

/* The output written since the last call (then forgotten). */
static const char *take_out(acts_run *r)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s", r->out.data);
    wf_buf_reset(&r->out);
    return buf;
}

static void load_expect_error(const char *file, wf_status code, unsigned line, unsigned col,
                              const char *needle)
{
    wfm_test_load_error(ACTS_DIR "bad/", file, code, line, col, needle);
}

/* ---- Flowchart ------------------------------------------------------------------------ */
START_TEST(test_flowchart_cycle_loops_back_through_decision)
{
    acts_run r;
    run_open(&r, "flow_cycle.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "i=0\ni=1\ni=2\ndone\n");
    wfm_test_close(&r);
}
END_TEST

static void switch_case(const char *choice, const char *want)
{
    acts_run r;
    run_open(&r, "flow_switch.xaml");
    set_string(&r, "choice", choice);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, want);
    wfm_test_close(&r);
}

START_TEST(test_flowswitch_takes_matching_case)
{
    switch_case("a", "case a\nend\n");
    switch_case("b", "case b\nend\n"); /* a case written as <x:Reference> with <x:Key> */
}
END_TEST

START_TEST(test_flowswitch_falls_back_to_default)
{
    switch_case("zzz", "default\nend\n");
    switch_case("A", "default\nend\n"); /* keys compare exactly */
}
END_TEST

START_TEST(test_flowswitch_int_keys_in_a_cycle)
{
    acts_run r;
    run_open(&r, "flow_switch_int.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "zero 0\none 1\nother 2\nzero 3\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_flowchart_decision_loop_without_activity_faults)
{
    acts_run r;
    run_open(&r, "flow_spin.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    const wf_value *exc = wfm_instance_fault(r.inst);
    ck_assert_ptr_eq(exc->type, &wf_exc_invalid_operation);
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "Spin"));
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_state_machine_cycle_without_activity_faults)
{
    acts_run r;
    run_open(&r, "state_spin.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    const wf_value *exc = wfm_instance_fault(r.inst);
    ck_assert_ptr_eq(exc->type, &wf_exc_invalid_operation);
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "Spin"));
    wfm_test_close(&r);
}
END_TEST

/* ---- StateMachine --------------------------------------------------------------------- */
static void resume_int(acts_run *r, const char *bookmark, int32_t value)
{
    wf_value v = wf_int32(value);
    wfm_test_resume(r, bookmark, &v);
}

START_TEST(test_state_machine_runs_entry_exit_action_in_order)
{
    acts_run r;
    run_open(&r, "state_machine.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(take_out(&r), "enter Draft\n");
    ck_assert_str_eq(bookmarks(&r), "submit");
    resume_int(&r, "submit", 50);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(take_out(&r), "exit Draft\nsubmitting 50\nenter Review\n");
    ck_assert_str_eq(bookmarks(&r), "approve,cancel");
    wfm_test_resume(&r, "approve", NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(take_out(&r), "exit Review\napproved 50\nenter Done\n");
    ck_assert_str_eq(bookmarks(&r), "");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_state_machine_false_condition_reschedules_trigger)
{
    acts_run r;
    run_open(&r, "state_machine.xaml");
    wfm_test_go(&r);
    take_out(&r);
    resume_int(&r, "submit", 0);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(take_out(&r), "");
    ck_assert_str_eq(bookmarks(&r), "submit");
    resume_int(&r, "submit", 70);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(take_out(&r), "exit Draft\nsubmitting 70\nenter Review\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_state_machine_condition_without_trigger_is_taken_at_once)
{
    acts_run r;
    run_open(&r, "state_machine.xaml");
    wfm_test_go(&r);
    take_out(&r);
    resume_int(&r, "submit", 5);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(take_out(&r), "exit Draft\nsubmitting 5\nenter Review\n"
                                   "exit Review\nrework\nenter Draft\n");
    ck_assert_str_eq(bookmarks(&r), "submit");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_state_machine_winning_trigger_cancels_the_others)
{
    acts_run r;
    run_open(&r, "state_machine.xaml");
    wfm_test_go(&r);
    resume_int(&r, "submit", 20);
    wfm_test_go(&r);
    take_out(&r);
    wfm_test_resume(&r, "cancel", NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(take_out(&r), "exit Review\nwithdrawn\nenter Done\n");
    ck_assert_str_eq(bookmarks(&r), "");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_resume(r.inst, "approve", NULL, &err), WF_E_STATE);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_state_machine_instance_cancel_cancels_triggers)
{
    acts_run r;
    run_open(&r, "state_machine.xaml");
    wfm_test_go(&r);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_cancel(r.inst, &err), WF_OK);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CANCELED);
    ck_assert_str_eq(take_out(&r), "enter Draft\n");
    wfm_test_close(&r);
}
END_TEST

static void state_fault_case(const char *bookmark, const char *want)
{
    acts_run r;
    run_open(&r, "state_fault.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wfm_test_resume(&r, bookmark, NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(take_out(&r), want);
    ck_assert_str_eq(bookmarks(&r), "");
    wfm_test_close(&r);
}

START_TEST(test_state_machine_fault_caught_outside_cancels_it)
{
    state_fault_case("go", "enter Draft\ncaught broken entry\n");   /* from an Entry */
    state_fault_case("other", "enter Draft\ncaught broken trigger\n"); /* from a trigger */
}
END_TEST

START_TEST(test_shared_trigger_conditions_choose_transition)
{
    acts_run r;
    run_open(&r, "state_shared.xaml");
    wfm_test_go(&r);
    wfm_test_resume(&r, "submit", NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(take_out(&r), "enter Draft\nexit Draft\nsubmitting\nenter Review\n");
    ck_assert_str_eq(bookmarks(&r), "cancel,decide");
    /* 5 is small: back to Draft through the second transition on the shared trigger. */
    resume_int(&r, "decide", 5);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(take_out(&r), "exit Review\nrework 5\nenter Draft\n");
    ck_assert_str_eq(bookmarks(&r), "submit");
    wfm_test_resume(&r, "submit", NULL);
    wfm_test_go(&r);
    take_out(&r);
    /* 500 matches no condition: the shared trigger runs again, the state stays. */
    resume_int(&r, "decide", 500);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(take_out(&r), "");
    ck_assert_str_eq(bookmarks(&r), "cancel,decide");
    /* 50 approves: the final state closes the machine. */
    resume_int(&r, "decide", 50);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(take_out(&r), "exit Review\napproved 50\nenter Done\n");
    ck_assert_str_eq(bookmarks(&r), "");
    wfm_test_close(&r);
}
END_TEST

/* ---- nomem --------------------------------------------------------------------------- */
/* A scripted run (resume bookmark i with payload i between runs) of a loaded definition,
 * with a writer that does not allocate; runtime and definition exist before failures start. */
typedef struct nomem_case {
    wfm_runtime *rt;
    wfm_definition *def;
    const char *const *resumes; /* NULL-terminated bookmark names */
    const int32_t *payloads;
    const char *want_out;
    wfm_test_fixed_out out;
    wf_status last;
} nomem_case;

static wf_status nomem_op(void *ud)
{
    nomem_case *c = ud;
    wfm_test_fixed_reset(&c->out);
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status st = wfm_instance_create(c->rt, c->def, &inst, &err);
    if (st == WF_OK) {
        wfm_instance_set_writer(inst, wfm_test_capture_fixed, &c->out);
        st = wfm_test_nomem_step(inst);
    }
    for (size_t i = 0; st == WF_OK && c->resumes && c->resumes[i]; i++) {
        wf_value v = wf_int32(c->payloads[i]);
        st = wfm_instance_resume(inst, c->resumes[i], &v, &err);
        if (st == WF_OK)
            st = wfm_test_nomem_step(inst);
    }
    if (st == WF_OK && (wfm_instance_state_get(inst) != WFM_INSTANCE_CLOSED ||
                        strcmp(c->out.text, c->want_out) != 0))
        st = WF_E_FAULT;
    wfm_instance_destroy(inst);
    c->last = st;
    return st;
}

static void nomem_expect(const char *file, const char *const *resumes, const int32_t *payloads,
                         const char *want_out)
{
    nomem_case c;
    memset(&c, 0, sizeof c);
    c.resumes = resumes;
    c.payloads = payloads;
    c.want_out = want_out;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &c.rt, &err), WF_OK);
    char path[256];
    snprintf(path, sizeof path, ACTS_DIR "%s", file);
    ck_assert_int_eq(wfm_runtime_load(c.rt, path, &c.def, NULL, &err), WF_OK);
    unsigned failing = wf_test_nomem_loop(nomem_op, &c, 2000);
    ck_assert_uint_gt(failing, 0);
    ck_assert_msg(c.last == WF_OK, "run after %u failing runs: status %d, output '%s'", failing,
                  (int)c.last, c.out.text);
    wfm_definition_release(c.def);
    wfm_runtime_destroy(c.rt);
}

START_TEST(test_nomem_in_flowchart_fails_cleanly)
{
    nomem_expect("flow_cycle.xaml", NULL, NULL, "i=0\ni=1\ni=2\ndone\n");
}
END_TEST

START_TEST(test_nomem_in_state_machine_fails_cleanly)
{
    static const char *const resumes[] = {"submit", "submit", "approve", NULL};
    static const int32_t payloads[] = {5, 60, 0};
    nomem_expect("state_machine.xaml", resumes, payloads,
                 "enter Draft\nexit Draft\nsubmitting 5\nenter Review\nexit Review\nrework\n"
                 "enter Draft\nexit Draft\nsubmitting 60\nenter Review\nexit Review\n"
                 "approved 60\nenter Done\n");
}
END_TEST

/* ---- persistence ---------------------------------------------------------------------- */
START_TEST(test_flowchart_resumes_after_save_and_restore)
{
    acts_run r;
    run_open(&r, "flow_wait.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wfm_test_save_restore(&r);
    resume_int(&r, "next", 4);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wfm_test_save_restore(&r);
    resume_int(&r, "next", 12);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(take_out(&r), "waiting 0\nwaiting 4\ndone 12\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_state_machine_resumes_after_save_and_restore)
{
    acts_run r;
    run_open(&r, "state_machine.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wfm_test_save_restore(&r);
    resume_int(&r, "submit", 50);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wfm_test_save_restore(&r);
    ck_assert_str_eq(bookmarks(&r), "approve,cancel");
    wfm_test_resume(&r, "cancel", NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(take_out(&r), "enter Draft\nexit Draft\nsubmitting 50\nenter Review\n"
                                   "exit Review\nwithdrawn\nenter Done\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_shared_trigger_survives_save_and_restore)
{
    acts_run r;
    run_open(&r, "state_shared.xaml");
    wfm_test_go(&r);
    wfm_test_resume(&r, "submit", NULL);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wfm_test_save_restore(&r);
    resume_int(&r, "decide", 7);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(take_out(&r), "enter Draft\nexit Draft\nsubmitting\nenter Review\n"
                                   "exit Review\nrework 7\nenter Draft\n");
    wfm_test_close(&r);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------ */
START_TEST(test_state_without_transitions_must_be_final)
{
    load_expect_error("state_dead_end.xaml", WF_E_SCHEMA, 13, 7, "no transitions");
}
END_TEST

START_TEST(test_final_state_cannot_have_transitions)
{
    load_expect_error("state_final_with_transition.xaml", WF_E_SCHEMA, 13, 7,
                      "cannot have transitions");
}
END_TEST

Suite *modern_activities_flow_suite(void)
{
    Suite *s = suite_create("modern_activities_flow");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_flowchart_cycle_loops_back_through_decision);
    tcase_add_test(core, test_flowswitch_takes_matching_case);
    tcase_add_test(core, test_flowswitch_falls_back_to_default);
    tcase_add_test(core, test_flowswitch_int_keys_in_a_cycle);
    tcase_add_test(core, test_state_machine_runs_entry_exit_action_in_order);
    tcase_add_test(core, test_state_machine_false_condition_reschedules_trigger);
    tcase_add_test(core, test_state_machine_condition_without_trigger_is_taken_at_once);
    tcase_add_test(core, test_state_machine_winning_trigger_cancels_the_others);
    tcase_add_test(core, test_state_machine_instance_cancel_cancels_triggers);
    tcase_add_test(core, test_state_machine_fault_caught_outside_cancels_it);
    tcase_add_test(core, test_shared_trigger_conditions_choose_transition);
    suite_add_tcase(s, core);
    TCase *persist = tcase_create("persist");
    tcase_add_test(persist, test_flowchart_resumes_after_save_and_restore);
    tcase_add_test(persist, test_state_machine_resumes_after_save_and_restore);
    tcase_add_test(persist, test_shared_trigger_survives_save_and_restore);
    suite_add_tcase(s, persist);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_flowchart_decision_loop_without_activity_faults);
    tcase_add_test(limits, test_state_machine_cycle_without_activity_faults);
    suite_add_tcase(s, limits);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_state_without_transitions_must_be_final);
    tcase_add_test(bad, test_final_state_cannot_have_transitions);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 60);
    tcase_add_test(nomem, test_nomem_in_flowchart_fails_cleanly);
    tcase_add_test(nomem, test_nomem_in_state_machine_fails_cleanly);
    suite_add_tcase(s, nomem);
    return s;
}

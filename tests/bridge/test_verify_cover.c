/* test_verify_cover.c — decision coverage of `wfbridge verify` (bridge/wfb_verify_cover.c):
 * the outcomes found in a definition, the ones a legacy run reaches (While skipped/entered,
 * a FaultHandler, a Listen with a Delay branch, state transitions, Policy rules), generation
 * reaching all of them on the fixtures, and the report (note, --json, --junit). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bridge/wfb_verify.h"
#include "../../common/wf_mem.h"
#include "../wf_test_util.h"
#include "support_bridge.h"

#define COVER_DIR   "tests/bridge/data/verify_cover/"
#define LOOP_XOML   COVER_DIR "cover_loop.xoml"
#define LISTEN_XOML COVER_DIR "cover_listen.xoml"
#define STATES_XOML COVER_DIR "cover_states.xoml"
#define CAG_XOML    COVER_DIR "cover_cag.xoml"
#define ORDER_XOML  "samples/legacy/order_processing/order_processing.xoml"
#define REVIEW_XOML "samples/legacy/document_review/document_review.xoml"
#define NOT_A_POINT SIZE_MAX

static wf_libpath *lib;

static wfb_vlegacy *load(const char *xoml, uint64_t max_steps)
{
    wf_error err = WF_ERROR_INIT;
    if (!lib)
        ck_assert_int_eq(wf_libpath_create(wf_test_sample_lib_dir(), &lib, &err), WF_OK);
    wfb_vlegacy *l = NULL;
    ck_assert_msg(wfb_vlegacy_load(xoml, NULL, lib, max_steps, NULL, &l, &err) == WF_OK, "%s",
                  err.message);
    return l;
}

static void unload(wfb_vlegacy *l)
{
    wfb_vlegacy_destroy(l);
    wf_libpath_destroy(lib);
    lib = NULL;
}

static size_t point(const wfb_vlegacy *l, wfb_vkind kind, const char *activity, const char *outcome)
{
    for (size_t i = 0; i < wfb_vlegacy_point_count(l); i++) {
        const wfb_vpoint *p = wfb_vlegacy_point(l, i);
        if (p->kind == kind && strcmp(p->activity, activity) == 0 &&
            strcmp(p->outcome, outcome) == 0)
            return i;
    }
    return NOT_A_POINT;
}

static bool reached(const wfb_vobs *o, size_t pt)
{
    ck_assert_uint_ne(pt, NOT_A_POINT);
    for (size_t i = 0; i < o->hit_count; i++)
        if (o->hits[i] == pt)
            return true;
    return false;
}

/* Run a case of NAME=JSON pairs (NULL-terminated) with an optional one-event script. */
static void run(wfb_vlegacy *l, const char *const *inputs, const char *event, wfb_vobs *o)
{
    wf_error err = WF_ERROR_INIT;
    wfb_vcase c = {.name = wf_strdup("c")};
    for (size_t i = 0; inputs && inputs[i]; i += 2)
        ck_assert_int_eq(wfb_vcase_set(&c, inputs[i], inputs[i + 1], &err), WF_OK);
    wfb_vevent ev = {.name = (char *)event, .payload = (char *)"\"alice\""};
    c.events = event ? &ev : NULL;
    c.event_count = event ? 1 : 0;
    ck_assert_int_eq(wfb_vlegacy_run(l, &c, o, &err), WF_OK);
    c.events = NULL;
    c.event_count = 0;
    wfb_vcase_fini(&c);
}

START_TEST(test_verify_cover_finds_the_outcomes_of_each_kind)
{
    wfb_vlegacy *l = load(LOOP_XOML, 20000);
    ck_assert_uint_eq(wfb_vlegacy_point_count(l), 4);
    ck_assert_uint_eq(wfb_vlegacy_branch_count(l), 0);                     /* no IfElse */
    ck_assert_uint_eq(point(l, WFB_VK_WHILE, "eachRecord", "entered"), 0); /* document order */
    ck_assert_uint_eq(point(l, WFB_VK_WHILE, "eachRecord", "skipped"), 1);
    ck_assert_uint_eq(point(l, WFB_VK_FAULT, "runBatch", "no fault"), 2);
    ck_assert_uint_eq(point(l, WFB_VK_FAULT, "onNative", "caught NativeException"), 3);
    ck_assert_ptr_null(wfb_vlegacy_point(l, 4));
    ck_assert_str_eq(wfb_vkind_name(WFB_VK_FAULT), "FaultHandlers");
    unload(l);
    l = load(STATES_XOML, 20000);
    ck_assert_uint_eq(wfb_vlegacy_point_count(l), 6);
    ck_assert_uint_ne(point(l, WFB_VK_STATE, "Open", "-> Done"), NOT_A_POINT);
    ck_assert_uint_ne(point(l, WFB_VK_STATE, "Open", "-> Escalated"), NOT_A_POINT);
    ck_assert_uint_ne(point(l, WFB_VK_STATE, "Escalated", "-> Done"), NOT_A_POINT);
    ck_assert_uint_ne(point(l, WFB_VK_EVENT, "onLate", "won"), NOT_A_POINT);
    unload(l);
}
END_TEST

START_TEST(test_verify_cover_while_skipped_entered_and_fault_caught)
{
    wfb_vlegacy *l = load(LOOP_XOML, 20000);
    size_t entered = point(l, WFB_VK_WHILE, "eachRecord", "entered");
    size_t skipped = point(l, WFB_VK_WHILE, "eachRecord", "skipped");
    size_t no_fault = point(l, WFB_VK_FAULT, "runBatch", "no fault");
    size_t caught = point(l, WFB_VK_FAULT, "onNative", "caught NativeException");
    wfb_vobs o;
    const char *empty[] = {"BatchSize", "0", NULL};
    run(l, empty, NULL, &o);
    ck_assert_str_eq(o.status, "Closed");
    ck_assert(reached(&o, skipped) && reached(&o, no_fault));
    ck_assert(!reached(&o, entered) && !reached(&o, caught));
    ck_assert_uint_eq(o.hit_count, 2);
    wfb_vobs_fini(&o);
    const char *three[] = {"BatchSize", "3", NULL};
    run(l, three, NULL, &o);
    ck_assert(reached(&o, entered) && reached(&o, no_fault));
    ck_assert(!reached(&o, skipped) && !reached(&o, caught));
    wfb_vobs_fini(&o);
    const char *failing[] = {"BatchSize", "3", "FailAt", "2", NULL};
    run(l, failing, NULL, &o);
    ck_assert_str_eq(o.status, "Closed"); /* the handler took the fault */
    ck_assert(reached(&o, entered) && reached(&o, caught));
    ck_assert(!reached(&o, no_fault) && !reached(&o, skipped));
    wfb_vobs_fini(&o);
    unload(l);
}
END_TEST

START_TEST(test_verify_cover_listen_event_or_delay_branch)
{
    wfb_vlegacy *l = load(LISTEN_XOML, 20000);
    ck_assert_uint_eq(wfb_vlegacy_point_count(l), 2);
    size_t answer = point(l, WFB_VK_EVENT, "onAnswer", "won");
    size_t timeout = point(l, WFB_VK_EVENT, "onTimeout", "won");
    wfb_vobs o;
    run(l, NULL, "Approved", &o);
    ck_assert_str_eq(o.status, "Closed");
    ck_assert(reached(&o, answer) && !reached(&o, timeout));
    wfb_vobs_fini(&o);
    run(l, NULL, NULL, &o); /* nothing comes: the Delay wins */
    ck_assert_str_eq(o.status, "Closed");
    ck_assert(reached(&o, timeout) && !reached(&o, answer));
    wfb_vobs_fini(&o);
    unload(l);
}
END_TEST

START_TEST(test_verify_cover_state_transitions)
{
    wfb_vlegacy *l = load(STATES_XOML, 20000);
    size_t open_done = point(l, WFB_VK_STATE, "Open", "-> Done");
    size_t open_esc = point(l, WFB_VK_STATE, "Open", "-> Escalated");
    size_t esc_done = point(l, WFB_VK_STATE, "Escalated", "-> Done");
    wfb_vobs o;
    run(l, NULL, "Approved", &o);
    ck_assert_str_eq(o.status, "Closed");
    ck_assert(reached(&o, open_done) && !reached(&o, open_esc) && !reached(&o, esc_done));
    ck_assert(reached(&o, point(l, WFB_VK_EVENT, "onApproved", "won")));
    wfb_vobs_fini(&o);
    run(l, NULL, NULL, &o);
    ck_assert_str_eq(o.status, "Closed");
    ck_assert(!reached(&o, open_done) && reached(&o, open_esc) && reached(&o, esc_done));
    ck_assert_uint_eq(o.hit_count, 4); /* onTimeout, onLate won; the two moves */
    wfb_vobs_fini(&o);
    unload(l);
}
END_TEST

START_TEST(test_verify_cover_policy_rules_then_and_else)
{
    wfb_vlegacy *l = load(ORDER_XOML, 20000);
    size_t then_pt = NOT_A_POINT, else_pt = NOT_A_POINT;
    for (size_t i = 0; i < wfb_vlegacy_point_count(l); i++) {
        const wfb_vpoint *p = wfb_vlegacy_point(l, i);
        if (p->kind == WFB_VK_POLICY && strcmp(p->outcome, "VolumeDiscount then") == 0)
            then_pt = i;
        if (p->kind == WFB_VK_POLICY && strcmp(p->outcome, "VolumeDiscount else") == 0)
            else_pt = i;
    }
    wfb_vobs o;
    const char *large[] = {"OrderId", "\"SO-1\"",  "Sku",       "\"W-7\"", "Quantity",
                           "20",      "UnitPrice", "\"75.50\"", NULL};
    run(l, large, NULL, &o);
    ck_assert(reached(&o, then_pt) && !reached(&o, else_pt));
    wfb_vobs_fini(&o);
    const char *small[] = {"OrderId", "\"SO-2\"",  "Sku",      "\"W-7\"", "Quantity",
                           "1",       "UnitPrice", "\"2.00\"", NULL};
    run(l, small, NULL, &o);
    ck_assert(reached(&o, else_pt) && !reached(&o, then_pt));
    wfb_vobs_fini(&o);
    unload(l);
}
END_TEST

START_TEST(test_verify_cover_cag_children_and_replicator)
{
    wfb_vlegacy *l = load(CAG_XOML, 20000);
    ck_assert_uint_eq(wfb_vlegacy_point_count(l), 2);
    size_t step = point(l, WFB_VK_CAG, "step", "ran"), once = point(l, WFB_VK_CAG, "once", "ran");
    wfb_vobs o;
    const char *none[] = {"BatchSize", "0", NULL};
    run(l, none, NULL, &o);
    ck_assert(reached(&o, once) && !reached(&o, step));
    wfb_vobs_fini(&o);
    const char *two[] = {"BatchSize", "2", NULL};
    run(l, two, NULL, &o);
    ck_assert(reached(&o, once) && reached(&o, step));
    wfb_vobs_fini(&o);
    unload(l);
    l = load(REVIEW_XOML, 20000);
    size_t ran = point(l, WFB_VK_REPLICATOR, "reviewRound", "ran a child");
    size_t ran_none = point(l, WFB_VK_REPLICATOR, "reviewRound", "ran none");
    const char *nobody[] = {"Reviewers", "[]", NULL};
    run(l, nobody, NULL, &o);
    ck_assert(reached(&o, ran_none) && !reached(&o, ran));
    wfb_vobs_fini(&o);
    const char *two_reviewers[] = {"Reviewers", "[\"ann\", \"bob\"]", NULL};
    run(l, two_reviewers, NULL, &o);
    ck_assert(reached(&o, ran) && !reached(&o, ran_none));
    wfb_vobs_fini(&o);
    unload(l);
}
END_TEST

/* `wfbridge verify FILE ARGS...` with --json: stdout's last line into json, stderr into err. */
static int verify_json(const char *const *args, char **json, char **err)
{
    const char *dir = wf_test_tmpdir();
    char out[600], cmd[8192];
    snprintf(out, sizeof out, "%s/out.json", dir);
    int n = snprintf(cmd, sizeof cmd, "%s/bin/wfbridge", wf_test_build_dir());
    for (size_t i = 0; args[i]; i++)
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s'", args[i]);
    snprintf(cmd + n, sizeof cmd - (size_t)n, " --json >'%s' 2>'%s/err.txt'", out, dir);
    int code = system(cmd);
    size_t len;
    char *text = wf_test_read_file(out, &len);
    ck_assert_ptr_nonnull(text);
    char *last = text;
    for (char *p = text; *p; p++)
        if (*p == '\n' && p[1])
            last = p + 1;
    *json = wf_strdup(last);
    wf_free(text);
    char errpath[620];
    snprintf(errpath, sizeof errpath, "%s/err.txt", dir);
    *err = wf_test_read_file(errpath, &len);
    wf_test_tmpdir_remove(dir);
    return WEXITSTATUS(code);
}

/* Each fixture reaches every outcome with 20 generated cases (seed 1): the While and the
 * fault handler by their inputs, the Delay branches when a case gets no event. */
START_TEST(test_verify_cover_generation_reaches_every_outcome)
{
    static const struct {
        const char *xoml, *note;
    } fixtures[] = {
        {LOOP_XOML, "coverage 4/4 decision outcomes (While 2/2, FaultHandlers 2/2)\n"},
        {LISTEN_XOML, "coverage 2/2 decision outcomes (EventDriven 2/2)\n"},
        {STATES_XOML, "coverage 6/6 decision outcomes (EventDriven 3/3, StateMachine 3/3)\n"},
        {REVIEW_XOML, "coverage 4/4 decision outcomes (IfElse 2/2, Replicator 2/2)\n"},
    };
    for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
        const char *args[] = {"verify",     fixtures[i].xoml,
                              "--lib-path", wf_test_sample_lib_dir(),
                              "--generate", "20",
                              "--seed",     "1",
                              NULL};
        char *json = NULL, *err = NULL;
        ck_assert_int_eq(verify_json(args, &json, &err), 0);
        ck_assert_msg(strstr(err, fixtures[i].note), "%s", err);
        ck_assert_msg(strstr(json, "\"coverage\": {\"covered\": ") &&
                          strstr(json, "\"uncovered\": []}}"),
                      "%s", json);
        wf_free(json);
        wf_free(err);
    }
}
END_TEST

/* --cases runs are measured too; what no case reached is named, in the note, --json and
 * --junit. */
START_TEST(test_verify_cover_report_names_the_uncovered)
{
    const char *dir = wf_test_tmpdir();
    char junit[600];
    snprintf(junit, sizeof junit, "%s/v.xml", dir);
    const char *cases =
        wf_test_write_file(dir, "c.json", "[{\"name\": \"none\", \"inputs\": {\"BatchSize\": 0}}]");
    char cases_path[600];
    snprintf(cases_path, sizeof cases_path, "%s", cases);
    const char *args[] = {"verify",  LOOP_XOML,  "--lib-path", wf_test_sample_lib_dir(),
                          "--cases", cases_path, "--junit",    junit,
                          NULL};
    char *json = NULL, *err = NULL;
    ck_assert_int_eq(verify_json(args, &json, &err), 0);
    ck_assert_msg(strstr(err, "coverage 2/4 decision outcomes (While 1/2, FaultHandlers 1/2); "
                              "not seen: While eachRecord entered, FaultHandlers onNative "
                              "caught NativeException"),
                  "%s", err);
    ck_assert_msg(
        strstr(json,
               "\"coverage\": {\"covered\": 2, \"total\": 4, \"kinds\": {\"While\": {\"covered\": "
               "1, \"total\": 2}, \"FaultHandlers\": {\"covered\": 1, \"total\": 2}}, "
               "\"uncovered\": [{\"file\": \"" LOOP_XOML "\", \"kind\": \"While\", "
               "\"activity\": \"eachRecord\", \"outcome\": \"entered\"}, "),
        "%s", json);
    ck_assert(strstr(json, "\"status\": \"equivalent\", \"cases\": 1, \"divergences\": []"));
    size_t len;
    char *xml = wf_test_read_file(junit, &len);
    ck_assert_ptr_nonnull(xml);
    ck_assert_ptr_nonnull(strstr(xml, "<property name=\"coverage\" value=\"2/4\"/>"));
    ck_assert_ptr_nonnull(strstr(xml, "<property name=\"coverage.While\" value=\"1/2\"/>"));
    ck_assert_ptr_nonnull(
        strstr(xml, "<property name=\"uncovered\" value=\"While eachRecord entered\"/>"));
    wf_free(xml);
    wf_free(json);
    wf_free(err);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A run stopped at the step limit still reports what it reached before. */
START_TEST(test_verify_cover_limit_run_keeps_its_outcomes)
{
    wfb_vlegacy *l = load(LOOP_XOML, 200);
    wfb_vobs o;
    const char *huge[] = {"BatchSize", "1000000", NULL};
    run(l, huge, NULL, &o);
    ck_assert_str_eq(o.status, "Limit");
    ck_assert(reached(&o, point(l, WFB_VK_WHILE, "eachRecord", "entered")));
    ck_assert(!reached(&o, point(l, WFB_VK_FAULT, "runBatch", "no fault")));
    ck_assert_uint_eq(o.hit_count, 1);
    wfb_vobs_fini(&o);
    unload(l);
}
END_TEST

/* Loading (the coverage model included) and a run under failing allocations. */
static wf_status load_run_op(void *ud)
{
    (void)ud;
    wf_error err = WF_ERROR_INIT;
    wf_libpath *lp = NULL;
    wfb_vlegacy *l = NULL;
    wfb_vobs o;
    memset(&o, 0, sizeof o);
    wfb_vcase c = {0};
    wf_status rc = wf_libpath_create(wf_test_sample_lib_dir(), &lp, &err);
    if (rc == WF_OK)
        rc = wfb_vlegacy_load(STATES_XOML, NULL, lp, 20000, NULL, &l, &err);
    if (rc == WF_OK)
        rc = wfb_vlegacy_run(l, &c, &o, &err);
    if (rc == WF_OK)
        ck_assert_str_eq(o.status, "Closed");
    wfb_vobs_fini(&o);
    wfb_vlegacy_destroy(l);
    wf_libpath_destroy(lp);
    return rc;
}

START_TEST(test_verify_cover_nomem)
{
    ck_assert_uint_gt(wf_test_nomem_loop(load_run_op, NULL, 3000), 0);
}
END_TEST

/* A loop inside a legacy activity hosted through Interop (the CAG of cover_cag goes through
 * Interop when converted) counts against the modern instance's step limit: with --max-steps
 * both sides stop at the limit (equivalent) instead of the hosted loop running unbounded. */
START_TEST(test_verify_cover_hosted_loop_stops_at_the_step_limit)
{
    const char *dir = wf_test_tmpdir();
    const char *cases = wf_test_write_file(
        dir, "cases.json", "{\"cases\": [{\"name\": \"huge\", \"inputs\": {\"BatchSize\": "
                           "100000000, \"FailAt\": -1}}]}");
    const char *args[] = {"verify",    CAG_XOML, "--cases", cases, "--max-steps", "20000",
                          "--lib-path", wfbt_sample_libs(), "--json", NULL};
    wfbt_out r = wfbt_run(args);
    ck_assert_msg(r.rc == 0, "rc %d: %s%s", r.rc, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(wfbt_last_line(r.out), "\"status\": \"equivalent\""));
    wfbt_out_free(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

Suite *verify_cover_suite(void)
{
    Suite *s = suite_create("verify_cover");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 60);
    tcase_add_test(core, test_verify_cover_finds_the_outcomes_of_each_kind);
    tcase_add_test(core, test_verify_cover_while_skipped_entered_and_fault_caught);
    tcase_add_test(core, test_verify_cover_listen_event_or_delay_branch);
    tcase_add_test(core, test_verify_cover_state_transitions);
    tcase_add_test(core, test_verify_cover_policy_rules_then_and_else);
    tcase_add_test(core, test_verify_cover_cag_children_and_replicator);
    tcase_add_test(core, test_verify_cover_generation_reaches_every_outcome);
    tcase_add_test(core, test_verify_cover_report_names_the_uncovered);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_set_timeout(limits, 60); /* runs to the step limit: slow under `make asan` */
    tcase_add_test(limits, test_verify_cover_limit_run_keeps_its_outcomes);
    tcase_add_test(limits, test_verify_cover_hosted_loop_stops_at_the_step_limit);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 120);
    tcase_add_test(nomem, test_verify_cover_nomem);
    suite_add_tcase(s, nomem);
    return s;
}

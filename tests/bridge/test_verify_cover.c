/* test_verify_cover.c — decision coverage of `wfbridge verify` (bridge/wfb_verify_cover.c):
 * the outcomes found in a definition, the ones a legacy run reaches (While skipped/entered,
 * a FaultHandler, a Listen with a Delay branch, state transitions, Policy rules), generation
 * reaching all of them on the fixtures, and the report (note, --json, --junit). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bridge/wfb_verify_int.h"
#include "../../common/wf_mem.h"
#include "../wf_test_util.h"
#include "support_bridge.h"

#define COVER_DIR   "tests/bridge/data/verify_cover/"
#define LOOP_XOML   COVER_DIR "cover_loop.xoml"
#define LISTEN_XOML COVER_DIR "cover_listen.xoml"
#define STATES_XOML COVER_DIR "cover_states.xoml"
#define CAG_XOML    COVER_DIR "cover_cag.xoml"
#define ORDER2_XOML COVER_DIR "cover_order.xoml"
#define UNREACH_XOML COVER_DIR "cover_unreachable.xoml"
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
    ck_assert_uint_eq(wfb_vlegacy_point_count(l), 5);
    ck_assert_uint_eq(wfb_vlegacy_branch_count(l), 0);                     /* no IfElse */
    ck_assert_uint_eq(point(l, WFB_VK_WHILE, "eachRecord", "skipped"), 0); /* document order */
    ck_assert_uint_eq(point(l, WFB_VK_WHILE, "eachRecord", "1 iteration"), 1);
    ck_assert_uint_eq(point(l, WFB_VK_WHILE, "eachRecord", "2+ iterations"), 2);
    ck_assert_uint_eq(point(l, WFB_VK_FAULT, "runBatch", "no fault"), 3);
    ck_assert_uint_eq(point(l, WFB_VK_FAULT, "onNative", "caught NativeException"), 4);
    ck_assert_ptr_null(wfb_vlegacy_point(l, 5));
    /* each outcome names where its activity is, and none is unreachable on its face */
    const wfb_vpoint *w = wfb_vlegacy_point(l, 0);
    ck_assert_str_eq(w->where.file, LOOP_XOML);
    ck_assert_uint_eq(w->where.line, 6);
    ck_assert_uint_eq(w->where.col, 3);
    ck_assert_ptr_null(w->why);
    ck_assert_uint_eq(wfb_vlegacy_point(l, 4)->where.line, 16);
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

START_TEST(test_verify_cover_while_iterations_and_fault_caught)
{
    wfb_vlegacy *l = load(LOOP_XOML, 20000);
    size_t once = point(l, WFB_VK_WHILE, "eachRecord", "1 iteration");
    size_t many = point(l, WFB_VK_WHILE, "eachRecord", "2+ iterations");
    size_t skipped = point(l, WFB_VK_WHILE, "eachRecord", "skipped");
    size_t no_fault = point(l, WFB_VK_FAULT, "runBatch", "no fault");
    size_t caught = point(l, WFB_VK_FAULT, "onNative", "caught NativeException");
    wfb_vobs o;
    const char *empty[] = {"BatchSize", "0", NULL};
    run(l, empty, NULL, &o);
    ck_assert_str_eq(o.status, "Closed");
    ck_assert(reached(&o, skipped) && reached(&o, no_fault));
    ck_assert(!reached(&o, once) && !reached(&o, many) && !reached(&o, caught));
    ck_assert_uint_eq(o.hit_count, 2);
    wfb_vobs_fini(&o);
    const char *one[] = {"BatchSize", "1", NULL};
    run(l, one, NULL, &o);
    ck_assert(reached(&o, once) && reached(&o, no_fault));
    ck_assert(!reached(&o, skipped) && !reached(&o, many) && !reached(&o, caught));
    wfb_vobs_fini(&o);
    const char *three[] = {"BatchSize", "3", NULL};
    run(l, three, NULL, &o);
    ck_assert(reached(&o, many) && reached(&o, no_fault));
    ck_assert(!reached(&o, skipped) && !reached(&o, once) && !reached(&o, caught));
    wfb_vobs_fini(&o);
    const char *failing[] = {"BatchSize", "3", "FailAt", "2", NULL};
    run(l, failing, NULL, &o);
    ck_assert_str_eq(o.status, "Closed"); /* the handler took the fault */
    ck_assert(reached(&o, many) && reached(&o, caught));
    ck_assert(!reached(&o, no_fault) && !reached(&o, skipped) && !reached(&o, once));
    wfb_vobs_fini(&o);
    const char *first_fails[] = {"BatchSize", "1", "FailAt", "1", NULL};
    run(l, first_fails, NULL, &o); /* a loop that faults in its body did not end its iterations */
    ck_assert(reached(&o, caught) && !reached(&o, once) && !reached(&o, skipped));
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
    size_t ran_one = point(l, WFB_VK_REPLICATOR, "reviewRound", "ran 1 child");
    size_t ran_more = point(l, WFB_VK_REPLICATOR, "reviewRound", "ran 2+ children");
    size_t ran_none = point(l, WFB_VK_REPLICATOR, "reviewRound", "ran none");
    const char *nobody[] = {"Reviewers", "[]", NULL};
    run(l, nobody, NULL, &o);
    ck_assert(reached(&o, ran_none) && !reached(&o, ran_one) && !reached(&o, ran_more));
    wfb_vobs_fini(&o);
    const char *one_reviewer[] = {"Reviewers", "[\"ann\"]", NULL};
    run(l, one_reviewer, NULL, &o);
    ck_assert(reached(&o, ran_one) && !reached(&o, ran_none) && !reached(&o, ran_more));
    wfb_vobs_fini(&o);
    const char *two_reviewers[] = {"Reviewers", "[\"ann\", \"bob\"]", NULL};
    run(l, two_reviewers, NULL, &o);
    ck_assert(reached(&o, ran_more) && !reached(&o, ran_none) && !reached(&o, ran_one));
    wfb_vobs_fini(&o);
    unload(l);
}
END_TEST

/* Run a case with the events named (NULL-terminated), each with the payload its parameters
 * take (the expenses service's Approved and Rejected). */
static void run_script(wfb_vlegacy *l, const char *const *events, wfb_vobs *o)
{
    wf_error err = WF_ERROR_INIT;
    wfb_vevent evs[4] = {{0}};
    wfb_vcase c = {.name = (char *)"c", .events = evs};
    for (; events[c.event_count]; c.event_count++) {
        wfb_vevent *e = &evs[c.event_count];
        e->name = (char *)events[c.event_count];
        e->payload = strcmp(e->name, "Rejected") == 0
                         ? (char *)"{\"Approver\": \"bob\", \"Comment\": \"no\"}"
                         : (char *)"\"alice\"";
    }
    ck_assert_int_eq(wfb_vlegacy_run(l, &c, o, &err), WF_OK);
}

/* A Parallel waiting on two events: each order they come in is an outcome. */
START_TEST(test_verify_cover_event_order)
{
    wfb_vlegacy *l = load(ORDER2_XOML, 20000);
    ck_assert_uint_eq(wfb_vlegacy_point_count(l), 2);
    size_t ar = point(l, WFB_VK_ORDER, "bothAnswers", "managerApproved then controllerRejected");
    size_t ra = point(l, WFB_VK_ORDER, "bothAnswers", "controllerRejected then managerApproved");
    ck_assert_str_eq(wfb_vkind_name(WFB_VK_ORDER), "EventOrder");
    wfb_vobs o;
    run_script(l, (const char *[]){"Approved", "Rejected", NULL}, &o);
    ck_assert_str_eq(o.status, "Closed");
    ck_assert(reached(&o, ar) && !reached(&o, ra));
    wfb_vobs_fini(&o);
    run_script(l, (const char *[]){"Rejected", "Approved", NULL}, &o);
    ck_assert_str_eq(o.status, "Closed");
    ck_assert(reached(&o, ra) && !reached(&o, ar));
    wfb_vobs_fini(&o);
    run_script(l, (const char *[]){"Rejected", NULL}, &o); /* one event only: no order yet */
    ck_assert_str_eq(o.status, "Idle");
    ck_assert_uint_eq(o.hit_count, 0);
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

/* Each fixture reaches every outcome within the default 50 generated cases (seed 1): the
 * While's 0, 1 and 2+ iterations and the fault handler by their inputs, the Delay branches
 * when a case gets no event. */
START_TEST(test_verify_cover_generation_reaches_every_outcome)
{
    static const struct {
        const char *xoml, *note;
    } fixtures[] = {
        {LOOP_XOML, "coverage 5/5 decision outcomes (While 3/3, FaultHandlers 2/2)\n"},
        {LISTEN_XOML, "coverage 2/2 decision outcomes (EventDriven 2/2)\n"},
        {STATES_XOML, "coverage 6/6 decision outcomes (EventDriven 3/3, StateMachine 3/3)\n"},
        {REVIEW_XOML, "coverage 5/5 decision outcomes (IfElse 2/2, Replicator 3/3)\n"},
    };
    for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
        const char *args[] = {"verify", fixtures[i].xoml, "--lib-path", wf_test_sample_lib_dir(),
                              "--seed", "1",             NULL};
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
    ck_assert_msg(strstr(err, "coverage 2/5 decision outcomes (While 1/3, FaultHandlers 1/2); "
                              "not seen: While eachRecord 1 iteration at " LOOP_XOML ":6:3, "
                              "While eachRecord 2+ iterations at " LOOP_XOML ":6:3, "
                              "FaultHandlers onNative caught NativeException at " LOOP_XOML
                              ":16:4\n"),
                  "%s", err);
    ck_assert_msg(
        strstr(json,
               "\"coverage\": {\"covered\": 2, \"total\": 5, \"kinds\": {\"While\": {\"covered\": "
               "1, \"total\": 3}, \"FaultHandlers\": {\"covered\": 1, \"total\": 2}}, "
               "\"uncovered\": [{\"file\": \"" LOOP_XOML "\", \"kind\": \"While\", "
               "\"activity\": \"eachRecord\", \"outcome\": \"1 iteration\", \"where\": "
               "\"" LOOP_XOML ":6:3\", \"why\": null}, "),
        "%s", json);
    ck_assert(strstr(json, "\"status\": \"equivalent\", \"cases\": 1, \"divergences\": []"));
    size_t len;
    char *xml = wf_test_read_file(junit, &len);
    ck_assert_ptr_nonnull(xml);
    ck_assert_ptr_nonnull(strstr(xml, "<property name=\"coverage\" value=\"2/5\"/>"));
    ck_assert_ptr_nonnull(strstr(xml, "<property name=\"coverage.While\" value=\"1/3\"/>"));
    ck_assert_ptr_nonnull(strstr(xml, "<property name=\"uncovered\" value=\"While eachRecord "
                                      "2+ iterations at " LOOP_XOML ":6:3\"/>"));
    wf_free(xml);
    wf_free(json);
    wf_free(err);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Outcomes no case can reach are listed with why: a rule condition that is the constant false,
 * an event no script has. The branch behind `Amount > 5000` is reached (the constant steers
 * the generator). */
START_TEST(test_verify_cover_unreachable_is_listed_with_why)
{
    const char *dir = wf_test_tmpdir();
    char junit[600];
    snprintf(junit, sizeof junit, "%s/v.xml", dir);
    const char *args[] = {"verify",  UNREACH_XOML, "--lib-path", wf_test_sample_lib_dir(),
                          "--seed",  "1",          "--junit",    junit,
                          NULL};
    char *json = NULL, *err = NULL;
    ck_assert_int_eq(verify_json(args, &json, &err), 0);
    ck_assert_msg(strstr(err, "coverage 3/5 decision outcomes (IfElse 2/3, EventDriven 1/2); not "
                              "seen: IfElse ifAuditEnabled taken at " UNREACH_XOML
                              ":8:3 (condition constant false), EventDriven onRejected won at " UNREACH_XOML
                              ":27:3 (no case's event script has Rejected)\n"),
                  "%s", err);
    ck_assert_msg(strstr(json, "{\"file\": \"" UNREACH_XOML "\", \"kind\": \"IfElse\", "
                               "\"activity\": \"ifAuditEnabled\", \"outcome\": \"taken\", "
                               "\"where\": \"" UNREACH_XOML ":8:3\", \"why\": \"condition "
                               "constant false\"}"),
                  "%s", json);
    size_t len;
    char *xml = wf_test_read_file(junit, &len);
    ck_assert_ptr_nonnull(xml);
    ck_assert_ptr_nonnull(strstr(xml, "<property name=\"uncovered\" value=\"EventDriven "
                                      "onRejected won at " UNREACH_XOML ":27:3 (no case's "
                                      "event script has Rejected)\"/>"));
    wf_free(xml);
    wf_free(json);
    wf_free(err);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* The modern definition of a legacy one, converted now (its side files in a directory
 * removed at once). */
static wfb_vmodern *convert_load(const char *xoml)
{
    wf_error err = WF_ERROR_INIT;
    char *xaml = NULL;
    size_t len = 0;
    wfb_verify_written w = {0};
    const char *dir = wf_test_tmpdir();
    wfb_verify_conv vc = {.path = xoml, .libpath = lib, .output_name = "x.xaml", .side_dir = dir};
    ck_assert_msg(wfb_verify_convert(&vc, &xaml, &len, &w, &err) == WF_OK, "%s", err.message);
    wfb_verify_written_free(&w, true);
    wf_test_tmpdir_remove(dir);
    wfb_vmodern *m = NULL;
    ck_assert_msg(wfb_vmodern_load("x.xaml", xaml, len, lib, 40000, NULL, &m, &err) == WF_OK, "%s",
                  err.message);
    wf_free(xaml);
    return m;
}

static const char *input_of(const wfb_vcase *c, const char *name)
{
    for (size_t i = 0; i < c->input_count; i++)
        if (strcmp(c->inputs[i].name, name) == 0)
            return c->inputs[i].json;
    return NULL;
}

/* The constant a rule condition compares an input with is found, and the generator tries it
 * and its neighbours. */
START_TEST(test_verify_cover_condition_constants_steer_inputs)
{
    wfb_vlegacy *l = load(UNREACH_XOML, 20000);
    const wfb__cover *cv = wfb__vlegacy_cover(l);
    ck_assert_uint_eq(wfb__cover_hint_count(cv), 1);
    ck_assert_str_eq(wfb__cover_hint(cv, 0)->name, "Amount");
    ck_assert_int_eq(wfb__cover_hint(cv, 0)->value->type->kind, WF_K_DECIMAL);
    wfb_vmodern *m = convert_load(UNREACH_XOML);
    wf_error err = WF_ERROR_INIT;
    wfb_vgen *g = NULL;
    ck_assert_int_eq(wfb_vgen_create(m, l, 1, &g, &err), WF_OK);
    size_t near = 0;
    for (size_t i = 0; i < 50; i++) {
        wfb_vcase c;
        ck_assert_int_eq(wfb_vgen_next(g, i, NULL, 0, &c, &err), WF_OK);
        const char *amount = input_of(&c, "Amount");
        near += amount && (strcmp(amount, "\"4999.9900\"") == 0 ||
                           strcmp(amount, "\"5000.0000\"") == 0 ||
                           strcmp(amount, "\"5000.0100\"") == 0);
        wfb_vcase_fini(&c);
    }
    ck_assert_uint_ge(near, 5); /* a third of the Amounts, less the varied cases */
    wfb_vgen_destroy(g);
    wfb_vmodern_destroy(m);
    unload(l);
}
END_TEST

/* Generated scripts: whole, a prefix, one event moved before another, one event left out. */
START_TEST(test_verify_cover_event_scripts_vary)
{
    wfb_vlegacy *l = load(ORDER2_XOML, 20000);
    wfb_vmodern *m = convert_load(ORDER2_XOML);
    wf_error err = WF_ERROR_INIT;
    wfb_vgen *g = NULL;
    ck_assert_int_eq(wfb_vgen_create(m, l, 1, &g, &err), WF_OK);
    wfb_vevent script[] = {{(char *)"Approved", NULL}, {(char *)"Rejected", NULL}};
    bool whole = false, none = false, first_only = false, reordered = false, second_only = false;
    for (size_t i = 0; i < 50; i++) {
        wfb_vcase c;
        ck_assert_int_eq(wfb_vgen_next(g, i, script, 2, &c, &err), WF_OK);
        const char *a = c.event_count > 0 ? c.events[0].name : "";
        const char *b = c.event_count > 1 ? c.events[1].name : "";
        whole |= c.event_count == 2 && strcmp(a, "Approved") == 0;
        reordered |= c.event_count == 2 && strcmp(a, "Rejected") == 0 && strcmp(b, "Approved") == 0;
        none |= c.event_count == 0;
        first_only |= c.event_count == 1 && strcmp(a, "Approved") == 0;
        second_only |= c.event_count == 1 && strcmp(a, "Rejected") == 0;
        wfb_vcase_fini(&c);
    }
    ck_assert(whole && none && first_only && reordered && second_only);
    wfb_vgen_destroy(g);
    wfb_vmodern_destroy(m);
    unload(l);
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
    ck_assert(reached(&o, point(l, WFB_VK_WHILE, "eachRecord", "2+ iterations")));
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
    tcase_add_test(core, test_verify_cover_while_iterations_and_fault_caught);
    tcase_add_test(core, test_verify_cover_listen_event_or_delay_branch);
    tcase_add_test(core, test_verify_cover_state_transitions);
    tcase_add_test(core, test_verify_cover_policy_rules_then_and_else);
    tcase_add_test(core, test_verify_cover_cag_children_and_replicator);
    tcase_add_test(core, test_verify_cover_generation_reaches_every_outcome);
    tcase_add_test(core, test_verify_cover_report_names_the_uncovered);
    tcase_add_test(core, test_verify_cover_event_order);
    tcase_add_test(core, test_verify_cover_unreachable_is_listed_with_why);
    tcase_add_test(core, test_verify_cover_condition_constants_steer_inputs);
    tcase_add_test(core, test_verify_cover_event_scripts_vary);
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

/* test_track.c — tracking records, profiles (built-in and XML), and the ring, file and store
 * participants: which records pass, their JSON shape, and that one instance's records arrive
 * in emission order. */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../../common/wf_mem.h"
#include "../../modern/wfm_store.h"
#include "../../modern/wfm_track.h"
#include "../wf_test_util.h"
#include "support_modern.h"

static wfm_track_record rec(wfm_rec_kind kind, const char *state, const char *activity,
                            uint64_t seq)
{
    wfm_track_record r = {0};
    r.kind = kind;
    r.instance_id = "inst-1";
    r.seq = seq;
    r.time_us = 1700000000000000LL;
    r.state = state;
    r.activity = activity;
    r.activity_id = activity ? "1.1" : NULL;
    return r;
}

static wfm_tracker *ring_tracker(const wfm_profile *p)
{
    wfm_tracker *t = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_tracker_create(p, &t, &err), WF_OK);
    ck_assert_int_eq(wfm_tracker_add_ring(t, 64, &err), WF_OK);
    return t;
}

/* Emit the Sequence{WriteLine} record stream of docs/semantics.md §5 and return what was kept. */
static size_t emit_sequence_run(wfm_tracker *t)
{
    wfm_track_record r[] = {
        rec(WFM_REC_INSTANCE, "Started", NULL, 1),
        rec(WFM_REC_ACTIVITY_SCHEDULED, NULL, "Sequence", 2),
        rec(WFM_REC_ACTIVITY_STATE, "Executing", "Sequence", 3),
        rec(WFM_REC_ACTIVITY_STATE, "Closed", "WriteLine", 4),
        rec(WFM_REC_ACTIVITY_STATE, "Closed", "Sequence", 5),
        rec(WFM_REC_INSTANCE, "Completed", NULL, 6),
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        wfm_tracker_emit(t, &r[i]);
    return wfm_tracker_ring_count(t);
}

START_TEST(test_track_builtin_profiles_filter_by_level)
{
    const char *names[] = {"none", "health", "basic", "all"};
    size_t want[] = {0, 2, 4, 6};
    for (size_t i = 0; i < 4; i++) {
        const wfm_profile *p = wfm_profile_builtin(names[i]);
        ck_assert_ptr_nonnull(p);
        wfm_tracker *t = ring_tracker(p);
        ck_assert_uint_eq(emit_sequence_run(t), want[i]);
        wfm_tracker_destroy(t);
    }
    ck_assert_ptr_null(wfm_profile_builtin("verbose"));
    ck_assert(!wfm_tracker_wants(NULL, WFM_REC_INSTANCE));
    ck_assert(!wfm_tracker_wants(NULL, WFM_REC_CUSTOM));
}
END_TEST

START_TEST(test_track_record_json_shape_and_order)
{
    wfm_tracker *t = ring_tracker(wfm_profile_builtin("basic"));
    emit_sequence_run(t);
    char line[1024];
    ck_assert(wfm_tracker_ring_get(t, 0, line, sizeof line));
    ck_assert_str_eq(line, "{\"record\": \"WorkflowInstance\", \"instance\": \"inst-1\", "
                           "\"seq\": 1, \"time\": \"2023-11-14T22:13:20.000000Z\", "
                           "\"state\": \"Started\"}");
    ck_assert(wfm_tracker_ring_get(t, 1, line, sizeof line));
    ck_assert_ptr_nonnull(strstr(line, "\"seq\": 4"));
    ck_assert_ptr_nonnull(strstr(line, "\"activity\": \"WriteLine\""));
    ck_assert(wfm_tracker_ring_get(t, 3, line, sizeof line));
    ck_assert_ptr_nonnull(strstr(line, "\"state\": \"Completed\""));
    ck_assert(!wfm_tracker_ring_get(t, 4, line, sizeof line));
    wfm_tracker_destroy(t);
}
END_TEST

START_TEST(test_track_ring_keeps_the_newest_records)
{
    wfm_tracker *t = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_tracker_create(wfm_profile_builtin("all"), &t, &err), WF_OK);
    ck_assert_int_eq(wfm_tracker_add_ring(t, 2, &err), WF_OK);
    emit_sequence_run(t);
    ck_assert_uint_eq(wfm_tracker_ring_count(t), 2);
    char line[512];
    ck_assert(wfm_tracker_ring_get(t, 0, line, sizeof line));
    ck_assert_ptr_nonnull(strstr(line, "\"seq\": 5"));
    wfm_tracker_destroy(t);
}
END_TEST

START_TEST(test_track_xml_profile_selects_activity_bookmark_and_data)
{
    wfm_profile *p = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_profile_load("tests/modern/data/track/orders.profile.xml", &p, &err),
                     WF_OK);
    wfm_tracker *t = ring_tracker(p);
    ck_assert_uint_eq(emit_sequence_run(t), 2); /* Started + Completed */
    const char *names[] = {"amount"};
    wf_value values[] = {wf_int32(250)};
    wfm_track_record closed = rec(WFM_REC_ACTIVITY_STATE, "Closed", "Approve", 7);
    closed.data_names = names;
    closed.data_values = values;
    closed.data_count = 1;
    wfm_tracker_emit(t, &closed);
    wfm_track_record other = rec(WFM_REC_ACTIVITY_STATE, "Closed", "Ship", 8);
    wfm_tracker_emit(t, &other);
    wf_value payload = wf_int32(1);
    wfm_track_record bm = rec(WFM_REC_BOOKMARK_RESUMPTION, NULL, NULL, 9);
    bm.name = "approve";
    bm.payload = &payload;
    wfm_tracker_emit(t, &bm);
    bm.name = "reject";
    wfm_tracker_emit(t, &bm);
    ck_assert_uint_eq(wfm_tracker_ring_count(t), 4);
    char line[1024];
    ck_assert(wfm_tracker_ring_get(t, 2, line, sizeof line));
    ck_assert_ptr_nonnull(strstr(line, "\"data\": {\"amount\": 250}"));
    ck_assert(wfm_tracker_ring_get(t, 3, line, sizeof line));
    ck_assert_ptr_nonnull(strstr(line, "\"bookmark\": \"approve\", \"payload\": 1"));
    wfm_tracker_destroy(t);
    wfm_profile_destroy(p);
}
END_TEST

START_TEST(test_track_file_participant_writes_lines_in_order)
{
    const char *dir = wf_test_tmpdir();
    char d[256], path[512];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(path, sizeof path, "%s/track.jsonl", d);
    wfm_tracker *t = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_tracker_create(wfm_profile_builtin("all"), &t, &err), WF_OK);
    ck_assert_int_eq(wfm_tracker_add_file(t, path, &err), WF_OK);
    for (uint64_t i = 1; i <= 500; i++) {
        wfm_track_record r = rec(WFM_REC_ACTIVITY_STATE, "Closed", "Step", i);
        wfm_tracker_emit(t, &r);
    }
    wfm_tracker_flush(t);
    size_t len = 0;
    char *text = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    uint64_t expect = 1, lines = 0;
    for (char *p = text; (p = strstr(p, "\"seq\": ")) != NULL; p += 7, lines++)
        ck_assert_uint_eq(strtoull(p + 7, NULL, 10), expect++);
    ck_assert_uint_eq(lines, 500);
    wf_free(text);
    wfm_tracker_destroy(t);
    wf_test_tmpdir_remove(d);
}
END_TEST

static int count_cb(void *ud, int n, char **vals, char **cols)
{
    (void)n;
    (void)cols;
    *(int *)ud = atoi(vals[0]);
    return 0;
}

START_TEST(test_track_store_participant_fills_the_tracking_table)
{
    const char *dir = wf_test_tmpdir();
    char d[256], path[512];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(path, sizeof path, "%s/store.db", d);
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&o, &s, &err), WF_OK);
    wfm_tracker *t = NULL;
    ck_assert_int_eq(wfm_tracker_create(wfm_profile_builtin("health"), &t, &err), WF_OK);
    ck_assert_int_eq(wfm_tracker_add_store(t, s, &err), WF_OK);
    emit_sequence_run(t);
    wfm_tracker_flush(t);
    wfm_tracker_destroy(t);
    wfm_store_close(s);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    int n = -1;
    sqlite3_exec(db, "SELECT count(*) FROM tracking WHERE kind = 'WorkflowInstance'", count_cb,
                 &n, NULL);
    ck_assert_int_eq(n, 2);
    sqlite3_close(db);
    wf_test_tmpdir_remove(d);
}
END_TEST

START_TEST(test_track_unknown_query_element_reports_location)
{
    wfm_profile *p = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(
        wfm_profile_load("tests/modern/data/track/bad/unknown_query.profile.xml", &p, &err),
        WF_E_SCHEMA);
    ck_assert_ptr_null(p);
    WF_ASSERT_ERROR(err, WF_E_SCHEMA, 3, 3, "ActivityStatQuery");
}
END_TEST

/* One store per tracker; records a store refuses (read-only here) are dropped and counted,
 * the workflow's tracking goes on. */
START_TEST(test_track_store_participant_counts_what_the_store_refuses)
{
    const char *dir = wf_test_tmpdir();
    char d[256], path[512];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(path, sizeof path, "%s/store.db", d);
    wfm_store_opts o = WFM_STORE_OPTS_INIT;
    o.path = path;
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&o, &s, &err), WF_OK);
    wfm_store_close(s);
    o.read_only = true;
    ck_assert_int_eq(wfm_store_open(&o, &s, &err), WF_OK);
    wfm_tracker *t = NULL;
    ck_assert_int_eq(wfm_tracker_create(wfm_profile_builtin("health"), &t, &err), WF_OK);
    ck_assert_int_eq(wfm_tracker_add_store(t, s, &err), WF_OK);
    ck_assert_int_eq(wfm_tracker_add_store(t, s, &err), WF_E_STATE);
    wf_error_clear(&err);
    emit_sequence_run(t);
    wfm_tracker_flush(t);
    ck_assert_uint_eq(wfm_tracker_dropped(t), 2); /* health: Started and Closed */
    wfm_tracker_destroy(t);
    wfm_store_close(s);
    wf_test_tmpdir_remove(d);
}
END_TEST

Suite *modern_track_suite(void)
{
    Suite *s = suite_create("modern_track");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_track_builtin_profiles_filter_by_level);
    tcase_add_test(core, test_track_record_json_shape_and_order);
    tcase_add_test(core, test_track_ring_keeps_the_newest_records);
    tcase_add_test(core, test_track_xml_profile_selects_activity_bookmark_and_data);
    tcase_add_test(core, test_track_file_participant_writes_lines_in_order);
    tcase_add_test(core, test_track_store_participant_fills_the_tracking_table);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_track_unknown_query_element_reports_location);
    tcase_add_test(bad, test_track_store_participant_counts_what_the_store_refuses);
    suite_add_tcase(s, bad);
    return s;
}

/* ---- the runtime emits records through its tracker ---------------------------------------- */
#include "../../modern/wfm_runtime.h"

static const char seq_xaml[] =
    "<Activity x:Class=\"T.Seq\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\"\n"
    " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"
    "  <Sequence DisplayName=\"Main\">\n"
    "    <WriteLine DisplayName=\"Hello\" Text=\"hello\" />\n"
    "  </Sequence>\n"
    "</Activity>\n";

/* Run `xaml` with `profile`; copy the kept records' lines into `lines` (at most max). */
static size_t run_tracked_xaml(const char *xaml, const char *profile, char lines[][512],
                               size_t max)
{
    wf_error err = WF_ERROR_INIT;
    wfm_tracker *t = ring_tracker(wfm_profile_builtin(profile));
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.write = wfm_test_discard;
    o.tracker = t;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wfm_instance *inst = NULL;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    ck_assert_int_eq(
        wfm_runtime_load_mem(rt, "seq.xaml", xaml, strlen(xaml), &def, NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    wfm_instance_set_id(inst, "0123456789abcdef0123456789abcdef");
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    size_t n = wfm_tracker_ring_count(t);
    for (size_t i = 0; i < n && i < max; i++)
        ck_assert(wfm_tracker_ring_get(t, i, lines[i], sizeof lines[i]));
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wfm_tracker_destroy(t);
    return n;
}

static size_t run_tracked(const char *profile, char lines[][512], size_t max)
{
    return run_tracked_xaml(seq_xaml, profile, lines, max);
}

static bool has(const char *line, const char *a, const char *b)
{
    return strstr(line, a) && (!b || strstr(line, b));
}

START_TEST(test_track_runtime_basic_profile_order_for_sequence_writeline)
{
    char lines[16][512];
    size_t n = run_tracked("basic", lines, 16);
    ck_assert_uint_eq(n, 4);
    ck_assert(has(lines[0], "\"state\": \"Started\"", "0123456789abcdef0123456789abcdef"));
    ck_assert(has(lines[1], "\"state\": \"Closed\"", "\"activity\": \"Hello\""));
    ck_assert(has(lines[2], "\"state\": \"Closed\"", "\"activity\": \"Main\""));
    ck_assert(has(lines[3], "\"state\": \"Completed\"", NULL));
}
END_TEST

START_TEST(test_track_runtime_all_profile_schedules_before_closing)
{
    char lines[16][512];
    size_t n = run_tracked("all", lines, 16);
    ck_assert_uint_ge(n, 6);
    size_t sched = n, closed = n;
    for (size_t i = 0; i < n; i++) {
        if (has(lines[i], "ActivityScheduled", "\"child\": \"Hello\"") && sched == n)
            sched = i;
        if (has(lines[i], "\"state\": \"Closed\"", "\"activity\": \"Hello\"") && closed == n)
            closed = i;
        char want[32];
        snprintf(want, sizeof want, "\"seq\": %zu,", i + 1);
        ck_assert_msg(strstr(lines[i], want) != NULL, "record %zu out of order: %s", i, lines[i]);
    }
    ck_assert_uint_lt(sched, closed);
    ck_assert(has(lines[n - 1], "\"state\": \"Completed\"", NULL));
}
END_TEST

START_TEST(test_track_runtime_none_profile_keeps_nothing)
{
    char lines[4][512];
    ck_assert_uint_eq(run_tracked("none", lines, 4), 0);
}
END_TEST

/* A profile of activity names (compiled per definition at load) on two definitions whose
 * nodes swap names: each instance keeps the records of its own definition's names. */
static const char named_profile[] =
    "<TrackingProfile Name=\"named\">\n"
    "  <ActivityStateQuery ActivityName=\"Main\"><States><State Name=\"Closed\"/></States>\n"
    "    <Variables><Variable Name=\"*\"/></Variables></ActivityStateQuery>\n"
    "  <ActivityStateQuery ActivityName=\"Hello\"><States><State Name=\"Executing\"/>"
    "</States></ActivityStateQuery>\n"
    "  <FaultPropagationQuery FaultSourceActivityName=\"Boom\"/>\n"
    "</TrackingProfile>\n";

#define NAMED_OPEN                                                                                 \
    "<Activity xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "                 \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"
static const char named_a[] = NAMED_OPEN
    "<Sequence DisplayName=\"Main\"><Sequence.Variables><Variable x:TypeArguments=\"x:Int32\" "
    "Name=\"n\" Default=\"7\"/></Sequence.Variables><WriteLine DisplayName=\"Hello\" "
    "Text=\"a\"/></Sequence></Activity>";
static const char named_b[] = NAMED_OPEN
    "<Sequence DisplayName=\"Hello\"><Sequence.Variables><Variable x:TypeArguments=\"x:Int32\" "
    "Name=\"n\" Default=\"8\"/></Sequence.Variables><WriteLine DisplayName=\"Main\" "
    "Text=\"b\"/><TryCatch><TryCatch.Try><Throw DisplayName=\"Boom\" "
    "Exception=\"[new InvalidOperationException(&quot;boom&quot;)]\"/></TryCatch.Try>"
    "<TryCatch.Catches><Catch x:TypeArguments=\"InvalidOperationException\"/>"
    "</TryCatch.Catches></TryCatch><Throw DisplayName=\"Quiet\" "
    "Exception=\"[new ArgumentException(&quot;bad&quot;)]\"/></Sequence></Activity>";

static void run_named(wfm_runtime *rt, const char *xaml)
{
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = NULL;
    wfm_instance *inst = NULL;
    ck_assert_int_eq(wfm_runtime_load_mem(rt, "named.xaml", xaml, strlen(xaml), &def, NULL, &err),
                     WF_OK);
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
}

/* A one-worker runtime tracking into a ring through the profile loaded from `xml`. */
static wfm_runtime *ring_runtime(const char *name, const char *xml, wfm_profile **p,
                                 wfm_tracker **t)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_profile_load_mem(name, xml, strlen(xml), p, &err), WF_OK);
    *t = ring_tracker(*p);
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.write = wfm_test_discard;
    o.tracker = *t;
    wfm_runtime *rt = NULL;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    return rt;
}

START_TEST(test_track_runtime_named_profile_follows_each_definition)
{
    wfm_profile *p = NULL;
    wfm_tracker *t = NULL;
    wfm_runtime *rt = ring_runtime("named", named_profile, &p, &t);
    run_named(rt, named_a);
    run_named(rt, named_b);
    run_named(rt, named_a); /* the first definition's plan again */
    char lines[8][512];
    size_t n = wfm_tracker_ring_count(t);
    ck_assert_uint_eq(n, 7);
    for (size_t i = 0; i < n; i++)
        ck_assert(wfm_tracker_ring_get(t, i, lines[i], sizeof lines[i]));
    for (size_t run = 0; run < 2; run++) { /* a, then a again */
        size_t at = run ? 5 : 0;
        ck_assert(has(lines[at], "\"state\": \"Executing\"", "\"activity\": \"Hello\""));
        ck_assert(has(lines[at + 1], "\"state\": \"Closed\"", "\"activity\": \"Main\""));
        ck_assert(has(lines[at + 1], "\"data\": {\"n\": 7}", NULL));
    }
    /* b: Hello is the Sequence (no data asked), Main the WriteLine; Boom's fault, not Quiet's. */
    ck_assert(has(lines[2], "\"state\": \"Executing\"", "\"activity\": \"Hello\""));
    ck_assert(!strstr(lines[2], "\"data\""));
    ck_assert(has(lines[3], "\"state\": \"Closed\"", "\"activity\": \"Main\""));
    ck_assert(!strstr(lines[3], "\"n\": 8"));
    ck_assert(has(lines[4], "\"record\": \"FaultPropagation\"", "\"activity\": \"Boom\""));
    wfm_runtime_destroy(rt);
    wfm_tracker_destroy(t);
    wfm_profile_destroy(p);
}
END_TEST

/* FaultPropagation queries match both names, as WF4's: the fault source and the activity
 * whose fault callback sees the fault (one record per such handler, "*" any). */
static const char fault_profile[] =
    "<TrackingProfile Name=\"faults\">\n"
    "  <FaultPropagationQuery FaultSourceActivityName=\"*\" FaultHandlerActivityName=\"Outer\"/>\n"
    "  <FaultPropagationQuery FaultSourceActivityName=\"Bang\"/>\n"
    "</TrackingProfile>\n";

#define FAULT_TRY(name, body, exc)                                                                 \
    "<TryCatch DisplayName=\"" name "\"><TryCatch.Try>" body "</TryCatch.Try><TryCatch.Catches>"  \
    "<Catch x:TypeArguments=\"" exc "\"/></TryCatch.Catches></TryCatch>"
#define FAULT_THROW(name, exc)                                                                     \
    "<Throw DisplayName=\"" name "\" Exception=\"[new " exc "(&quot;x&quot;)]\"/>"
static const char fault_xaml[] = NAMED_OPEN
    "<Sequence DisplayName=\"Main\">"
    FAULT_TRY("Guard", FAULT_THROW("Boom", "InvalidOperationException"), "InvalidOperationException")
    FAULT_TRY("Other", FAULT_THROW("Bang", "ArgumentException"), "ArgumentException")
    FAULT_TRY("Outer", FAULT_TRY("Inner", FAULT_THROW("Deep", "InvalidOperationException"),
                                 "ArgumentException"),
              "InvalidOperationException")
    "</Sequence></Activity>";

START_TEST(test_track_runtime_fault_queries_match_source_and_handler)
{
    wfm_profile *p = NULL;
    wfm_tracker *t = NULL;
    wfm_runtime *rt = ring_runtime("faults", fault_profile, &p, &t);
    run_named(rt, fault_xaml);
    run_named(rt, fault_xaml); /* the definition's compiled plan again */
    /* Boom (handled by Guard) and Deep as Inner saw it (not handled there) pass neither
     * query; Bang passes by its source, Deep by the handler that caught it. */
    char lines[8][512];
    ck_assert_uint_eq(wfm_tracker_ring_count(t), 4);
    for (size_t i = 0; i < 4; i++) {
        ck_assert(wfm_tracker_ring_get(t, i, lines[i], sizeof lines[i]));
        ck_assert(has(lines[i], "\"record\": \"FaultPropagation\"", NULL));
        if (i % 2 == 0)
            ck_assert_msg(has(lines[i], "\"activity\": \"Bang\"", "\"child\": \"Other\""),
                          "%s", lines[i]);
        else
            ck_assert_msg(has(lines[i], "\"activity\": \"Deep\"", "\"child\": \"Outer\""),
                          "%s", lines[i]);
    }
    wfm_runtime_destroy(rt);
    wfm_tracker_destroy(t);
    wfm_profile_destroy(p);
}
END_TEST

/* A While whose body is one Assign: the third Assign divides by zero, inside a TryCatch. */
static const char loop_fault_xaml[] =
    "<Activity x:Class=\"T.Loop\"\n"
    " xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\"\n"
    " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\"\n"
    " xmlns:s=\"clr-namespace:System;assembly=mscorlib\">\n"
    "  <TryCatch DisplayName=\"Guard\"><TryCatch.Try>\n"
    "    <Sequence DisplayName=\"Main\">\n"
    "      <Sequence.Variables><Variable x:TypeArguments=\"x:Int32\" Name=\"i\"/>"
    "</Sequence.Variables>\n"
    "      <While DisplayName=\"Loop\" Condition=\"[i &lt; 5]\">\n"
    "        <Assign DisplayName=\"Inc\" x:TypeArguments=\"x:Int32\" To=\"[i]\"\n"
    "                Value=\"[i + 1 + 0 * (10 / (2 - i))]\"/>\n"
    "      </While>\n"
    "    </Sequence>\n"
    "  </TryCatch.Try><TryCatch.Catches><Catch x:TypeArguments=\"s:DivideByZeroException\"/>"
    "</TryCatch.Catches></TryCatch>\n"
    "</Activity>\n";

/* With activity states tracked, every leaf keeps its own activity instance: each closed
 * Assign has its Closed record (basic), as with any scheduled activity. */
START_TEST(test_track_runtime_loop_leaves_keep_their_records)
{
    char lines[32][512];
    size_t n = run_tracked_xaml(loop_fault_xaml, "basic", lines, 32);
    ck_assert_uint_le(n, 32);
    size_t closed = 0, faults = 0;
    for (size_t i = 0; i < n; i++) {
        closed += has(lines[i], "\"state\": \"Closed\"", "\"activity\": \"Inc\"");
        faults += has(lines[i], "FaultPropagation", "\"activity\": \"Inc\"");
    }
    ck_assert_uint_eq(closed, 2);
    ck_assert_uint_eq(faults, 1);
    ck_assert(has(lines[n - 1], "\"state\": \"Completed\"", NULL));
}
END_TEST

/* The same record but for its sequence number and time. */
static void check_same_but_stamp(const char *a, const char *b)
{
    const char *sa = strstr(a, "\"seq\""), *sb = strstr(b, "\"seq\"");
    ck_assert_ptr_nonnull(sa);
    ck_assert_ptr_nonnull(sb);
    ck_assert_int_eq(sa - a, sb - b);
    ck_assert_mem_eq(a, b, (size_t)(sa - a));
    const char *ta = strstr(sa, "\"time\": \""), *tb = strstr(sb, "\"time\": \"");
    ck_assert_ptr_nonnull(ta);
    ck_assert_ptr_nonnull(tb);
    ck_assert_str_eq(strchr(ta + 9, '"'), strchr(tb + 9, '"'));
}

/* Health keeps no Closed records, so the leaves run inline; a leaf that faults is still the
 * source of its fault and closes Faulted, with the same records as a scheduled one. */
START_TEST(test_track_runtime_inline_leaf_fault_keeps_its_records)
{
    char basic[32][512], health[32][512];
    size_t nb = run_tracked_xaml(loop_fault_xaml, "basic", basic, 32);
    size_t nh = run_tracked_xaml(loop_fault_xaml, "health", health, 32);
    /* health's records are basic's without the Closed ones */
    size_t k = 0;
    for (size_t i = 0; i < nb && i < 32; i++) {
        if (has(basic[i], "\"state\": \"Closed\"", NULL))
            continue;
        ck_assert_uint_lt(k, nh);
        check_same_but_stamp(health[k++], basic[i]);
    }
    ck_assert_uint_eq(k, nh);
    ck_assert_uint_ge(nh, 3);
}
END_TEST

Suite *modern_track_runtime_suite(void)
{
    Suite *s = suite_create("modern_track_runtime");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_track_runtime_basic_profile_order_for_sequence_writeline);
    tcase_add_test(core, test_track_runtime_all_profile_schedules_before_closing);
    tcase_add_test(core, test_track_runtime_none_profile_keeps_nothing);
    tcase_add_test(core, test_track_runtime_named_profile_follows_each_definition);
    tcase_add_test(core, test_track_runtime_fault_queries_match_source_and_handler);
    tcase_add_test(core, test_track_runtime_loop_leaves_keep_their_records);
    tcase_add_test(core, test_track_runtime_inline_leaf_fault_keeps_its_records);
    suite_add_tcase(s, core);
    return s;
}

/* ---- the pipeline: binary records per thread, formatted and written by the tracker's thread */
#include <pthread.h>

#include "../../modern/wfm_track_int.h"

/* A tracker writing `path` (profile "all"). */
static wfm_tracker *file_tracker(const char *path)
{
    wfm_tracker *t = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_tracker_create(wfm_profile_builtin("all"), &t, &err), WF_OK);
    ck_assert_int_eq(wfm_tracker_add_file(t, path, &err), WF_OK);
    return t;
}

START_TEST(test_track_file_lines_are_the_record_json)
{
    const char *dir = wf_test_tmpdir();
    char d[256], path[512];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(path, sizeof path, "%s/track.jsonl", d);
    wfm_tracker *t = file_tracker(path);
    wf_value vals[2] = {wf_int32(42), wf_null()};
    ck_assert_int_eq(wf_value_cstring("say \"hi\"\n\x01 \xc3\xa9", &vals[1]), WF_OK);
    const char *names[2] = {"a", "b\"c"};
    wf_buf want;
    wf_buf_init(&want);
    wfm__tracker_batch_begin(t);
    for (int k = 0; k < WFM_REC_KIND_COUNT; k++) {
        wfm_track_record r = rec((wfm_rec_kind)k, k == 1 ? "Closed" : "Started", "Act\\ivity",
                                 (uint64_t)k + 1);
        r.instance_id = k % 2 ? "inst\"1" : NULL;
        r.time_us -= k * 999999;
        r.child = k > 2 ? "Child" : NULL;
        r.child_id = k > 2 ? "1.3" : NULL;
        r.name = k >= 3 ? "bm" : NULL;
        r.payload = k == 3 ? &vals[1] : NULL;
        r.fault = k == 4 ? &vals[0] : NULL;
        if (k == 1) {
            r.data_names = names;
            r.data_values = vals;
            r.data_count = 2;
        }
        wfm_tracker_emit(t, &r);
        ck_assert(wfm_track_record_json(&r, &want));
        wf_buf_addc(&want, '\n');
    }
    wfm__tracker_batch_end(t);
    wfm_tracker_flush(t);
    size_t len = 0;
    char *text = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, want.data);
    ck_assert(strstr(text, "\"data\": {\"a\": 42, \"b\\\"c\": ") != NULL);
    wf_free(text);
    wf_buf_fini(&want);
    wf_value_release(&vals[1]);
    wfm_tracker_destroy(t);
    wf_test_tmpdir_remove(d);
}
END_TEST

START_TEST(test_track_batch_is_written_only_when_closed)
{
    wfm_tracker *t = ring_tracker(wfm_profile_builtin("all"));
    wfm__tracker_batch_begin(t);
    wfm__tracker_batch_begin(t); /* nested: the outer end publishes */
    wfm_track_record r = rec(WFM_REC_INSTANCE, "Started", NULL, 1);
    wfm_tracker_emit(t, &r);
    wfm__tracker_batch_end(t);
    ck_assert_uint_eq(wfm_tracker_ring_count(t), 0);
    wfm__tracker_batch_end(t);
    ck_assert_uint_eq(wfm_tracker_ring_count(t), 1);
    wfm__tracker_batch_end(t); /* unbalanced: ignored */
    r.seq = 2;
    wfm_tracker_emit(t, &r); /* outside a batch: published at once */
    ck_assert_uint_eq(wfm_tracker_ring_count(t), 2);
    wfm_tracker_destroy(t);
}
END_TEST

/* Two threads take turns with one instance, a batch each turn: the file keeps its order. */
typedef struct relay {
    wfm_tracker *t;
    pthread_mutex_t lock;
    pthread_cond_t turn_cv;
    int turn;     /* whose turn: 0 or 1 */
    uint64_t seq; /* the shared instance's last record */
    int me;
    int rounds;
} relay;

typedef struct relay_arg {
    relay *r;
    int me;
} relay_arg;

static void *relay_main(void *arg)
{
    relay_arg *a = arg;
    relay *r = a->r;
    char own[32];
    snprintf(own, sizeof own, "own-%d", a->me);
    for (int round = 0; round < r->rounds; round++) {
        pthread_mutex_lock(&r->lock);
        while (r->turn != a->me)
            pthread_cond_wait(&r->turn_cv, &r->lock);
        pthread_mutex_unlock(&r->lock);
        wfm__tracker_batch_begin(r->t);
        for (int i = 0; i < 1 + round % 7; i++) {
            wfm_track_record x = rec(WFM_REC_ACTIVITY_STATE, "Closed", "Step", ++r->seq);
            x.instance_id = "shared";
            wfm_tracker_emit(r->t, &x);
            wfm_track_record y = rec(WFM_REC_ACTIVITY_STATE, "Closed", "Own",
                                     (uint64_t)round * 8 + (uint64_t)i + 1);
            y.instance_id = own;
            wfm_tracker_emit(r->t, &y);
        }
        wfm__tracker_batch_end(r->t);
        pthread_mutex_lock(&r->lock);
        r->turn = 1 - a->me;
        pthread_cond_broadcast(&r->turn_cv);
        pthread_mutex_unlock(&r->lock);
    }
    return NULL;
}

START_TEST(test_track_instance_moving_between_threads_stays_in_order)
{
    const char *dir = wf_test_tmpdir();
    char d[256], path[512];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(path, sizeof path, "%s/track.jsonl", d);
    relay r = {.t = file_tracker(path), .turn = 0, .seq = 0, .rounds = 300};
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.turn_cv, NULL);
    pthread_t th[2];
    relay_arg args[2] = {{&r, 0}, {&r, 1}};
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, relay_main, &args[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    wfm_tracker_flush(r.t);
    size_t len = 0;
    char *text = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    uint64_t shared = 0, own[2] = {0, 0}, lines = 0;
    for (char *line = text; *line; lines++) {
        char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        *end = '\0';
        uint64_t seq = strtoull(strstr(line, "\"seq\": ") + 7, NULL, 10);
        if (strstr(line, "\"instance\": \"shared\"")) {
            ck_assert_uint_eq(seq, shared + 1);
            shared = seq;
        } else {
            int who = strstr(line, "\"own-1\"") != NULL;
            ck_assert_uint_gt(seq, own[who]);
            own[who] = seq;
        }
        line = end + 1;
    }
    ck_assert_uint_eq(shared, r.seq);
    ck_assert_uint_eq(lines, 2 * r.seq);
    ck_assert_uint_eq(wfm_tracker_dropped(r.t), 0);
    wf_free(text);
    wfm_tracker_destroy(r.t);
    pthread_mutex_destroy(&r.lock);
    pthread_cond_destroy(&r.turn_cv);
    wf_test_tmpdir_remove(d);
}
END_TEST

/* ---- fixed entries: the scheduler's common records in 32 bytes --------------------------- */
#include <jansson.h>

#include "../../modern/wfm_runtime.h"

/* A While of `LOOP_N` iterations whose names need escaping: profile "all" gives about seven
 * records an iteration, several chunks of fixed entries in one run. */
#define LOOP_N "2500"
static const char long_xaml[] =
    "<Activity x:Class=\"T.Long\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\"\n"
    " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"
    "  <While DisplayName=\"Loop &quot;2k&quot;\" Condition=\"[i &lt; " LOOP_N "]\">\n"
    "    <While.Variables><Variable x:TypeArguments=\"x:Int32\" Name=\"i\"/></While.Variables>\n"
    "    <Sequence DisplayName=\"Body\\\">\n"
    "      <Assign x:TypeArguments=\"x:Int32\" To=\"[i]\" Value=\"[i + 1]\"/>\n"
    "    </Sequence>\n"
    "  </While>\n"
    "</Activity>\n";

static int64_t fixed_clock(void *ud)
{
    (void)ud;
    return 1700000000000000LL;
}

/* The kernel's wall time as a file system stamps it (a witness the test does not read from a
 * clock itself): touch `marker` and return its modification time, in microseconds. The stamp
 * is the coarse clock, up to a tick behind the fine one. */
static int64_t stamp_us(const char *marker)
{
    FILE *f = fopen(marker, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs("x", f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
    struct stat st;
    ck_assert_int_eq(stat(marker, &st), 0);
    return (int64_t)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000;
}

/* One runtime (one worker, tracker t, clock or the real one when NULL) with one instance
 * of xaml, id `id`, ready to run; one_end releases them. */
typedef struct one {
    wfm_runtime *rt;
    wfm_definition *def;
    wfm_instance *inst;
} one;

static one one_begin(wfm_tracker *t, const char *xaml, wfm_clock_fn clock, const char *id)
{
    wf_error err = WF_ERROR_INIT;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.write = wfm_test_discard;
    o.tracker = t;
    o.clock = clock;
    one x = {0};
    ck_assert_int_eq(wfm_runtime_create(&o, &x.rt, &err), WF_OK);
    ck_assert_int_eq(
        wfm_runtime_load_mem(x.rt, "one.xaml", xaml, strlen(xaml), &x.def, NULL, &err), WF_OK);
    ck_assert_int_eq(wfm_instance_create(x.rt, x.def, &x.inst, &err), WF_OK);
    wfm_instance_set_id(x.inst, id);
    return x;
}

static void one_end(one *x)
{
    wfm_instance_destroy(x->inst);
    wfm_definition_release(x->def);
    wfm_runtime_destroy(x->rt);
}

/* Run long_xaml once into a file tracker (profile "all"); returns the file's text. */
static char *run_long(const char *path, wfm_clock_fn clock, int64_t *t0, int64_t *t1)
{
    wf_error err = WF_ERROR_INIT;
    wfm_tracker *t = file_tracker(path);
    one x = one_begin(t, long_xaml, clock, "fedcba9876543210fedcba9876543210");
    wfm_instance *inst = x.inst;
    char marker[600];
    snprintf(marker, sizeof marker, "%s.stamp", path);
    *t0 = stamp_us(marker);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    *t1 = stamp_us(marker);
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_CLOSED);
    wfm_tracker_flush(t);
    ck_assert_uint_eq(wfm_tracker_dropped(t), 0);
    uint64_t written = wfm_tracker_written(t);
    one_end(&x);
    wfm_tracker_destroy(t);
    size_t len = 0;
    char *text = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    ck_assert_uint_eq(lines, written);
    ck_assert_uint_gt(lines, 15000); /* more than 64 KB of fixed entries */
    return text;
}

/* The "time" of a record at `us`, as the tracker writes it. */
static void time_text(int64_t us, char *out, size_t size)
{
    wfm_track_record r = rec(WFM_REC_INSTANCE, "Started", NULL, 1);
    r.time_us = us;
    wf_buf b;
    wf_buf_init(&b);
    ck_assert(wfm_track_record_json(&r, &b));
    json_t *j = json_loads(b.data, 0, NULL);
    ck_assert_ptr_nonnull(j);
    snprintf(out, size, "%s", json_string_value(json_object_get(j, "time")));
    json_decref(j);
    wf_buf_fini(&b);
}

static const char *member(json_t *j, const char *key)
{
    return json_string_value(json_object_get(j, key)); /* NULL when absent */
}

/* A record's "time" ("YYYY-MM-DDThh:mm:ss.ffffffZ", UTC) in microseconds. */
static int64_t time_us_of(const char *time)
{
    struct tm tm = {0};
    long frac = 0;
    ck_assert_int_eq(sscanf(time, "%d-%d-%dT%d:%d:%d.%ld", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                            &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &frac),
                     7);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000000 + frac;
}

/* A line equals what wfm_track_record_json gives for the record it names (no values). */
static void check_same_as_record_json(const char *line, json_t *j)
{
    wfm_track_record r = {0};
    const char *kind = member(j, "record");
    for (int k = 0; k < WFM_REC_KIND_COUNT; k++)
        if (strcmp(kind, wfm_rec_kind_name((wfm_rec_kind)k)) == 0)
            r.kind = (wfm_rec_kind)k;
    r.instance_id = member(j, "instance");
    r.seq = (uint64_t)json_integer_value(json_object_get(j, "seq"));
    r.state = member(j, "state");
    r.activity = member(j, "activity");
    r.activity_id = member(j, "activityId");
    r.child = member(j, "child");
    r.child_id = member(j, "childId");
    r.time_us = time_us_of(member(j, "time"));
    wf_buf b;
    wf_buf_init(&b);
    ck_assert(wfm_track_record_json(&r, &b));
    ck_assert_str_eq(line, b.data);
    wf_buf_fini(&b);
}

START_TEST(test_track_fixed_entries_keep_instance_numbers_names_and_time_across_chunks)
{
    const char *dir = wf_test_tmpdir();
    char d[256], path[512];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(path, sizeof path, "%s/long.jsonl", d);
    int64_t t0 = 0, t1 = 0;
    char *text = run_long(path, NULL, &t0, &t1);
    char lo[64], hi[64];
    /* The clocks' readings may differ a little, and a file stamp lags up to a tick (<= 10 ms) */
    time_text(t0 - 2000, lo, sizeof lo);
    time_text(t1 + 12000, hi, sizeof hi);
    int64_t last_us = 0;
    uint64_t seq = 0;
    size_t loops = 0, bodies = 0, compared = 0, distinct = 0, instance_records = 0;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        *end = '\0';
        json_t *j = json_loads(line, 0, NULL);
        ck_assert_msg(j != NULL, "not JSON: %s", line);
        ck_assert_str_eq(member(j, "instance"), "fedcba9876543210fedcba9876543210");
        ck_assert_uint_eq((uint64_t)json_integer_value(json_object_get(j, "seq")), ++seq);
        const char *time = member(j, "time");
        ck_assert_msg(strcmp(time, lo) >= 0 && strcmp(time, hi) <= 0, "%s not in %s..%s", time,
                      lo, hi);
        /* in order, but for the counter's rate measured to a few parts in 10,000 against
         * the real clock some records read */
        int64_t us = time_us_of(time);
        ck_assert_msg(us >= last_us - 20, "%s before the previous record by > 20 us", time);
        distinct += us != last_us;
        last_us = us > last_us ? us : last_us;
        const char *act = member(j, "activity");
        loops += act && strcmp(act, "Loop \"2k\"") == 0;
        bodies += act && strcmp(act, "Body\\") == 0;
        if (act && !json_object_get(j, "data") && compared < 50 &&
            (seq % 97 == 0 || strcmp(member(j, "record"), "ActivityScheduled") == 0)) {
            check_same_as_record_json(line, j);
            compared++;
        }
        if (strcmp(member(j, "record"), "WorkflowInstance") == 0) { /* Started, Completed */
            check_same_as_record_json(line, j);
            instance_records++;
        }
        json_decref(j);
        line = end + 1;
    }
    ck_assert_uint_ge(loops, 2500);  /* the While schedules each body */
    ck_assert_uint_ge(bodies, 3 * 2500); /* executing, scheduling and closing */
    ck_assert_uint_eq(compared, 50);
    ck_assert_uint_eq(instance_records, 2);
    ck_assert_uint_gt(distinct, 100); /* the run takes milliseconds: the times advance */
    wf_free(text);
    wf_test_tmpdir_remove(d);
}
END_TEST

START_TEST(test_track_fixed_entries_take_the_runtime_clock_when_it_is_not_the_real_one)
{
    const char *dir = wf_test_tmpdir();
    char d[256], path[512];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(path, sizeof path, "%s/long.jsonl", d);
    int64_t t0 = 0, t1 = 0;
    char *text = run_long(path, fixed_clock, &t0, &t1);
    char want[64];
    time_text(fixed_clock(NULL), want, sizeof want);
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        *end = '\0';
        json_t *j = json_loads(line, 0, NULL);
        ck_assert_ptr_nonnull(j);
        ck_assert_str_eq(member(j, "time"), want);
        json_decref(j);
        line = end + 1;
    }
    wf_free(text);
    wf_test_tmpdir_remove(d);
}
END_TEST

START_TEST(test_track_ring_of_fixed_entries_reads_as_the_file_lines)
{
    const char *dir = wf_test_tmpdir();
    char d[256], path[512];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(path, sizeof path, "%s/both.jsonl", d);
    wf_error err = WF_ERROR_INIT;
    wfm_tracker *t = file_tracker(path);
    ck_assert_int_eq(wfm_tracker_add_ring(t, 40, &err), WF_OK);
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.write = wfm_test_discard;
    o.tracker = t;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    ck_assert_int_eq(
        wfm_runtime_load_mem(rt, "seq.xaml", seq_xaml, strlen(seq_xaml), &def, NULL, &err),
        WF_OK);
    for (int i = 0; i < 8; i++) { /* "all": 7 records a run; the ring keeps the last 40 */
        wfm_instance *inst = NULL;
        ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
        ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
        wfm_instance_destroy(inst);
    }
    ck_assert_uint_eq(wfm_tracker_ring_count(t), 40);
    size_t len = 0;
    char *text = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    ck_assert_uint_eq(lines, wfm_tracker_written(t));
    char *line = text;
    for (size_t i = 0; i < lines; i++) {
        char *end = strchr(line, '\n');
        *end = '\0';
        if (i >= lines - 40) {
            char got[1024];
            ck_assert(wfm_tracker_ring_get(t, i - (lines - 40), got, sizeof got));
            ck_assert_str_eq(got, line);
        }
        line = end + 1;
    }
    wf_free(text);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wfm_tracker_destroy(t);
    wf_test_tmpdir_remove(d);
}
END_TEST

/* ---- valid JSON whatever the names hold ---------------------------------------------------- */

/* Display names with quotes, a backslash, control characters and non-ASCII text (XML cannot
 * carry invalid UTF-8: that comes through the instance id and wfm_tracker_emit below). */
static const char odd_xaml[] =
    "<Activity x:Class=\"T.Odd\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\"\n"
    " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"
    "  <Sequence DisplayName=\"say &quot;hi&quot;&#9;tab&#10;line\\\">\n"
    "    <WriteLine DisplayName=\"caf&#xE9; &#x1F600; &lt;/&gt;\" Text=\"x\"/>\n"
    "  </Sequence>\n"
    "</Activity>\n";

/* Every line of text parses with jansson (which refuses invalid UTF-8 and raw control
 * characters); returns the lines, each decoded into js (at most max). */
static size_t parse_lines(char *text, json_t **js, size_t max)
{
    size_t n = 0;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        *end = '\0';
        json_error_t e;
        json_t *j = json_loads(line, 0, &e);
        ck_assert_msg(j != NULL, "not JSON (%s): %s", e.text, line);
        ck_assert_uint_lt(n, max);
        js[n++] = j;
        line = end + 1;
    }
    return n;
}

START_TEST(test_track_lines_are_json_whatever_the_names_hold)
{
    const char *dir = wf_test_tmpdir();
    char d[256], path[512];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(path, sizeof path, "%s/odd.jsonl", d);
    wf_error err = WF_ERROR_INIT;
    wfm_tracker *t = file_tracker(path);
    /* the runtime's fixed entries: names from the plan, the instance id from the context */
    one x = one_begin(t, odd_xaml, NULL, "id\"\x01\xff\\");
    ck_assert_int_eq(wfm_instance_run(x.inst, &err), WF_OK);
    /* records built by the caller: every string field, variable names included */
    const char *bad = "q\"b\\s\x01\x1f\x7f \xff \xc3 \xc0\xaf \xed\xa0\x80 \xe2\x82";
    const char *names[2] = {bad, "ok"};
    wf_value vals[2] = {wf_int32(1), wf_int32(2)};
    for (int k = 0; k < WFM_REC_KIND_COUNT; k++) {
        wfm_track_record r = rec((wfm_rec_kind)k, k == 1 ? "Closed" : bad, bad, 1);
        r.instance_id = bad;
        r.activity_id = bad;
        r.child = bad;
        r.child_id = bad;
        r.name = bad;
        r.data_names = names;
        r.data_values = vals;
        r.data_count = 2;
        wfm_tracker_emit(t, &r);
    }
    wfm_tracker_flush(t);
    size_t len = 0;
    char *text = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    json_t *js[64];
    size_t n = parse_lines(text, js, 64);
    ck_assert_uint_eq(n, wfm_tracker_written(t));
    size_t seq_named = 0, line_named = 0, replaced = 0;
    for (size_t i = 0; i < n; i++) {
        const char *act = member(js[i], "activity"), *inst_id = member(js[i], "instance");
        const char *child = member(js[i], "child");
        seq_named += act && strcmp(act, "say \"hi\"\ttab\nline\\") == 0;
        line_named += (act && strcmp(act, "caf\xc3\xa9 \xf0\x9f\x98\x80 </>") == 0) +
                      (child && strcmp(child, "caf\xc3\xa9 \xf0\x9f\x98\x80 </>") == 0);
        replaced += inst_id && strstr(inst_id, "\xef\xbf\xbd") != NULL; /* U+FFFD */
        json_decref(js[i]);
    }
    ck_assert_uint_ge(seq_named, 3); /* "all": executing, scheduling, closing */
    ck_assert_uint_ge(line_named, 3);
    ck_assert_uint_eq(replaced, n); /* both ids hold invalid UTF-8 */
    ck_assert_uint_ge(n, 7 + WFM_REC_KIND_COUNT);
    wf_free(text);
    one_end(&x);
    wfm_tracker_destroy(t);
    wf_test_tmpdir_remove(d);
}
END_TEST

/* The file participant appends after what the file holds, and gives back the space it
 * reserved ahead once closed. */
START_TEST(test_track_file_appends_and_returns_reserved_space)
{
    const char *dir = wf_test_tmpdir();
    char d[256], path[512];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(path, sizeof path, "%s/append.jsonl", d);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"before\": 1}\n", f);
    ck_assert_int_eq(fclose(f), 0);
    for (int round = 0; round < 2; round++) {
        wfm_tracker *t = file_tracker(path);
        for (uint64_t i = 1; i <= 500; i++) {
            wfm_track_record r = rec(WFM_REC_ACTIVITY_STATE, "Closed", "Step", i);
            wfm_tracker_emit(t, &r);
        }
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(wfm_tracker_close(t, &err), WF_OK);
        wfm_tracker_destroy(t);
    }
    size_t len = 0;
    char *text = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert(strncmp(text, "{\"before\": 1}\n", 14) == 0);
    json_t *js[1001];
    size_t n = parse_lines(text, js, 1001);
    ck_assert_uint_eq(n, 1001);
    ck_assert_int_eq(json_integer_value(json_object_get(js[1000], "seq")), 500);
    for (size_t i = 0; i < n; i++)
        json_decref(js[i]);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, (off_t)len);
    /* reserved: 1 MB at least; kept: the content's blocks (and a file system's rounding) */
    ck_assert_msg((int64_t)st.st_blocks * 512 < (int64_t)len + 256 * 1024,
                  "%lld bytes allocated for %zu", (long long)st.st_blocks * 512, len);
    wf_free(text);
    wf_test_tmpdir_remove(d);
}
END_TEST

Suite *modern_track_pipeline_suite(void)
{
    Suite *s = suite_create("modern_track_pipeline");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_track_file_lines_are_the_record_json);
    tcase_add_test(core, test_track_batch_is_written_only_when_closed);
    tcase_add_test(core, test_track_instance_moving_between_threads_stays_in_order);
    tcase_add_test(core, test_track_fixed_entries_keep_instance_numbers_names_and_time_across_chunks);
    tcase_add_test(core, test_track_fixed_entries_take_the_runtime_clock_when_it_is_not_the_real_one);
    tcase_add_test(core, test_track_ring_of_fixed_entries_reads_as_the_file_lines);
    tcase_add_test(core, test_track_lines_are_json_whatever_the_names_hold);
    tcase_add_test(core, test_track_file_appends_and_returns_reserved_space);
    suite_add_tcase(s, core);
    return s;
}

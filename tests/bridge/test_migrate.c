/* test_migrate.c — `wfbridge migrate-instances` (bridge/wfb_migrate*.c, docs/migrate.md):
 * legacy instances stopped with run-legacy --store at their waiting points (an event wait with
 * a Delay pending, a While in its third round, the expense state machine in its second state,
 * a composite hosted through Interop, a sequential Replicator in its third line, a parallel
 * one with a Delay in each round) move to a modern store under the same id and, resumed
 * with the same event as their legacy copy, end with the same outputs; a second run moves
 * nothing; --dry-run and bad input change neither store; --rollback gives the legacy row back;
 * killed at random moments, every instance runs in exactly one store after each kill; two
 * runs at once move each instance once.
 * Fixtures: tests/bridge/data/migrate/ over the samples' expenses and approvals libraries. */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <libxml/parser.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../bridge/wfb_migrate_home.h"
#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_exec.h"
#include "../../legacy/wfl_store.h"
#include "../modern/support_pg.h"
#include "../wf_test_util.h"

#define DATA "tests/bridge/data/migrate/"
#define EXPENSE "samples/legacy/expense_approval/expense_approval.xoml"

static char dir[256], libs[1024];

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(libs, sizeof libs, "%s/samples/lib:%s", wf_test_build_dir(), dir);
}

static void teardown(void)
{
    wf_test_tmpdir_remove(dir);
}

/* Run `wfbridge ARGS` (a shell command line); stdout into out, stderr dropped; exit code. */
static int cli(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int cli(char *out, size_t size, const char *fmt, ...)
{
    char args[4096], cmd[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s/bin/wfbridge %s 2>/dev/null", wf_test_build_dir(), args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t len = fread(out, 1, size - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The JSON object on the last line of out (json_decref it). */
static json_t *last_json(const char *out)
{
    const char *end = out + strlen(out);
    while (end > out && end[-1] == '\n')
        end--;
    const char *start = end;
    while (start > out && start[-1] != '\n')
        start--;
    json_error_t je;
    json_t *j = json_loadb(start, (size_t)(end - start), 0, &je);
    ck_assert_msg(j != NULL, "not JSON: %s", out);
    return j;
}

static void convert(const char *xoml, const char *name, bool interop)
{
    char out[8192];
    ck_assert_int_eq(cli(out, sizeof out, "convert %s -o %s/%s --lib-path %s%s", xoml, dir, name,
                         libs, interop ? " --interop" : ""),
                     0);
}

/* Start a legacy instance into DIR/legacy.db; its id into id[33]. */
static void legacy_start(const char *xoml, const char *args, char *id)
{
    char out[8192];
    ck_assert_int_eq(cli(out, sizeof out, "run-legacy %s --lib-path %s --store %s/legacy.db %s"
                                          " --json",
                         xoml, libs, dir, args),
                     0);
    json_t *j = last_json(out);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "Idle");
    snprintf(id, 33, "%s", json_string_value(json_object_get(j, "id")));
    json_decref(j);
}

/* One event to a legacy instance of `store`; the result object. */
static json_t *legacy_event(const char *xoml, const char *store, const char *id,
                            const char *event)
{
    char out[8192];
    int rc = cli(out, sizeof out, "run-legacy %s --lib-path %s --store %s/%s --instance %s %s%s"
                                  " --json",
                 xoml, libs, dir, store, id, event ? "--event " : "", event ? event : "");
    ck_assert_msg(rc == 0, "run-legacy exit %d: %s", rc, out);
    return last_json(out);
}

static json_t *modern_resume(const char *id, const char *bookmark)
{
    char out[8192];
    int rc = cli(out, sizeof out, "resume %s --store %s/modern.db --lib-path %s --bookmark %s"
                                  " --json",
                 id, dir, libs, bookmark);
    ck_assert_msg(rc == 0, "resume exit %d: %s", rc, out);
    return last_json(out);
}

static json_t *migrate(const char *maps, const char *extra, int want_rc)
{
    char out[65536];
    int rc = cli(out, sizeof out,
                 "migrate-instances --from %s/legacy.db --to %s/modern.db %s --lib-path %s %s"
                 " --json",
                 dir, dir, maps, libs, extra);
    ck_assert_msg(rc == want_rc, "migrate exit %d: %s", rc, out);
    return want_rc == 2 ? NULL : last_json(out);
}

static long count_of(json_t *report, const char *key)
{
    return (long)json_integer_value(json_object_get(report, key));
}

/* Every output the modern instance reports has the legacy instance's value. */
static void same_outputs(json_t *modern, json_t *legacy)
{
    ck_assert_str_eq(json_string_value(json_object_get(modern, "status")),
                     json_string_value(json_object_get(legacy, "status")));
    json_t *mo = json_object_get(modern, "outputs"), *lo = json_object_get(legacy, "outputs");
    const char *key;
    json_t *v;
    size_t n = 0;
    json_object_foreach(mo, key, v) {
        char *a = json_dumps(v, JSON_ENCODE_ANY), *b = json_dumps(json_object_get(lo, key),
                                                                 JSON_ENCODE_ANY);
        ck_assert_msg(b && strcmp(a, b) == 0, "output %s: modern %s, legacy %s", key, a,
                      b ? b : "(none)");
        free(a);
        free(b);
        n++;
    }
    ck_assert_uint_gt(n, 2);
    json_decref(modern);
    json_decref(legacy);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp %s/%s %s/%s", dir, from, dir, to);
    ck_assert_int_eq(system(cmd), 0);
}

/* ---- the waiting points ---------------------------------------------------------------------- */
/* Waiting for Approved or Rejected with a one-day Delay pending: same bookmarks, the timer due
 * at the same instant, and the rejection gives the legacy outputs. */
START_TEST(test_event_wait_with_delay_pending)
{
    char id[33], out[65536];
    convert(DATA "approval.xoml", "approval.xaml", false);
    legacy_start(DATA "approval.xoml", "--arg Employee=ann --arg Amount=120", id);
    copy_file("legacy.db", "copy.db");
    char maps[512];
    snprintf(maps, sizeof maps, "--map " DATA "approval.xoml=%s/approval.xaml", dir);
    json_t *r = migrate(maps, "", 0);
    ck_assert_int_eq(count_of(r, "migrated"), 1);
    json_t *inst = json_array_get(json_object_get(r, "instances"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(inst, "id")), id);
    char due[64];
    snprintf(due, sizeof due, "%s",
             json_string_value(json_array_get(json_object_get(inst, "timers"), 0)));
    json_decref(r);
    ck_assert_int_eq(cli(out, sizeof out, "inspect %s --store %s/modern.db", id, dir), 0);
    json_t *row = last_json(out);
    ck_assert_str_eq(json_string_value(json_object_get(row, "nextTimer")), due);
    ck_assert_str_eq(json_string_value(json_object_get(row, "status")), "Idle");
    json_decref(row);
    const char *ev = "'Rejected={\"Approver\":\"bob\",\"Comment\":\"no receipt\"}'";
    same_outputs(modern_resume(id, ev), legacy_event(DATA "approval.xoml", "copy.db", id, ev));
}
END_TEST

/* DATA NAME.xoml converted, started in legacy.db (args) and sent each of `events` in turn, copied to
 * copy.db and migrated (the one instance moves): its id. */
static void moved_after(const char *name, const char *args, const char *const *events,
                        char *id)
{
    char xoml[256], xaml[64], maps[1024];
    snprintf(xoml, sizeof xoml, DATA "%s.xoml", name);
    snprintf(xaml, sizeof xaml, "%s.xaml", name);
    convert(xoml, xaml, false);
    legacy_start(xoml, args, id);
    for (size_t i = 0; events[i]; i++)
        json_decref(legacy_event(xoml, "legacy.db", id, events[i]));
    copy_file("legacy.db", "copy.db");
    snprintf(maps, sizeof maps, "--map %s=%s/%s", xoml, dir, xaml);
    json_t *r = migrate(maps, "", 0);
    ck_assert_int_eq(count_of(r, "migrated"), 1);
    json_decref(r);
}

/* A While waiting inside its third round: the round counter carries over. */
START_TEST(test_loop_in_its_third_round)
{
    char id[33];
    const char *events[] = {"Approved=a", "Approved=b", NULL};
    moved_after("rounds", "", events, id);
    json_decref(modern_resume(id, "Approved=c"));
    json_decref(legacy_event(DATA "rounds.xoml", "copy.db", id, "Approved=c"));
    json_t *m = modern_resume(id, "Approved=d");
    ck_assert_str_eq(json_string_value(json_object_get(m, "status")), "Closed");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(m, "outputs"),
                                                        "Escalations")),
                     4);
    same_outputs(m, legacy_event(DATA "rounds.xoml", "copy.db", id, "Approved=d"));
}
END_TEST

/* The test libraries (convcases: custom activities, the ICases service) on the path too. */
static void use_test_libs(void)
{
    size_t used = strlen(libs);
    snprintf(libs + used, sizeof libs - used, ":%s/tests/lib", wf_test_build_dir());
}

/* A value held by an activity rather than the root — Double's Result, computed by a native
 * call before the wait, a variable of the round in the conversion (NAME.xaml.map.json
 * "root": false) — carries over into the round the instance waits in: the rest of that round
 * uses it (Log gets "t=4;", not the "t=0;" of a replay that skipped the call). */
START_TEST(test_activity_values_carry_over)
{
    char id[33];
    use_test_libs();
    const char *events[] = {"Go=1", NULL};
    moved_after("doubled", "", events, id);
    json_t *m = modern_resume(id, "Go=1");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "outputs"), "Log")),
                     "t=2;t=4;");
    same_outputs(m, legacy_event(DATA "doubled.xoml", "copy.db", id, "Go=1"));
    m = modern_resume(id, "Go=1");
    ck_assert_str_eq(json_string_value(json_object_get(m, "status")), "Closed");
    same_outputs(m, legacy_event(DATA "doubled.xoml", "copy.db", id, "Go=1"));
}
END_TEST

/* DATA NAME.xoml (test libraries) started with args, sent Go=1 and migrated (extra options):
 * the one instance stays legacy with a reason that contains `want`; its id into id. */
static void stays_legacy(const char *name, const char *args, const char *extra,
                         const char *want, char *id)
{
    char xoml[256], xaml[64], maps[1024];
    use_test_libs();
    snprintf(xoml, sizeof xoml, DATA "%s.xoml", name);
    snprintf(xaml, sizeof xaml, "%s.xaml", name);
    convert(xoml, xaml, false);
    legacy_start(xoml, args, id);
    json_decref(legacy_event(xoml, "legacy.db", id, "Go=1"));
    snprintf(maps, sizeof maps, "--map %s=%s/%s", xoml, dir, xaml);
    json_t *r = migrate(maps, extra, 0);
    ck_assert_int_eq(count_of(r, "skipped"), 1);
    const char *why = json_string_value(
        json_object_get(json_array_get(json_object_get(r, "instances"), 0), "reason"));
    ck_assert_msg(why && strstr(why, want), "reason: %s", why ? why : "(none)");
    json_decref(r);
}

/* A Replicator in the parallel rounds of another: the inner one runs once per outer round,
 * so no single legacy Replicator says where its ForEach is; the instance stays legacy, with
 * that reason, and still runs there. */
START_TEST(test_foreach_of_unknown_item_stays_legacy)
{
    char id[33], maps[1024];
    use_test_libs();
    convert(DATA "nested.xoml", "nested.xaml", false);
    legacy_start(DATA "nested.xoml", "--arg 'Items=[1,2]'", id);
    snprintf(maps, sizeof maps, "--map " DATA "nested.xoml=%s/nested.xaml", dir);
    json_t *r = migrate(maps, "", 0);
    ck_assert_int_eq(count_of(r, "skipped"), 1);
    const char *why = json_string_value(
        json_object_get(json_array_get(json_object_get(r, "instances"), 0), "reason"));
    ck_assert_msg(why && strstr(why, "ForEach 'eachRegion', whose item the replay does not "
                                     "recover"),
                  "reason: %s", why ? why : "(none)");
    json_decref(r);
    json_t *l = legacy_event(DATA "nested.xoml", "legacy.db", id, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(l, "status")), "Idle");
    json_decref(l);
}
END_TEST

/* A Parallel whose first branch took its event (Go carries an Int32 that no ParameterBinding
 * keeps) while the second waits: the replay cannot give Go the payload it carried, so the
 * instance stays legacy and the reason names the event and the parameter. */
START_TEST(test_position_behind_a_payload_stays_legacy)
{
    char id[33];
    stays_legacy("parallel", "", "--dry-run",
                 "resuming 'ICases.Go' needs the event's 'Value', which no ParameterBinding of "
                 "the legacy instance kept",
                 id);
}
END_TEST

/* An IfElse on the amount an event brought (Go's Value, bound to Total): the legacy instance
 * got 500 and waits for the second signature of the large branch; the replay resumes Go with
 * the payload read back from Total, takes the same branch and the instance moves, finishing
 * with the legacy outputs. */
START_TEST(test_position_behind_a_payload_moves_with_the_legacy_values)
{
    char id[33];
    use_test_libs();
    const char *events[] = {"Go=500", NULL};
    moved_after("threshold", "", events, id);
    const char *ev = "'Stop={\"Who\":\"ann\",\"Why\":\"signed\"}'";
    json_t *m = modern_resume(id, ev);
    ck_assert_str_eq(json_string_value(json_object_get(m, "status")), "Closed");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "outputs"), "Log")),
                     "t=500;");
    same_outputs(m, legacy_event(DATA "threshold.xoml", "copy.db", id, ev));
}
END_TEST

/* The expense state machine in its second state (its one-second Delay fired): the replay
 * takes the timer transition to reach it. */
START_TEST(test_state_machine_in_its_second_state)
{
    char id[33], maps[512];
    convert(EXPENSE, "expense.xaml", false);
    legacy_start(EXPENSE, "--arg Employee=ann --arg Amount=120", id);
    usleep(1100000);
    json_t *l = legacy_event(EXPENSE, "legacy.db", id, NULL);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(l, "outputs"),
                                                        "Escalations")),
                     1);
    json_decref(l);
    copy_file("legacy.db", "copy.db");
    snprintf(maps, sizeof maps, "--map " EXPENSE "=%s/expense.xaml", dir);
    json_t *r = migrate(maps, "", 0);
    ck_assert_int_eq(count_of(r, "migrated"), 1);
    json_t *inst = json_array_get(json_object_get(r, "instances"), 0);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(inst, "replay"), 0)),
                     "timer");
    json_decref(r);
    same_outputs(modern_resume(id, "Approved=dir"),
                 legacy_event(EXPENSE, "copy.db", id, "Approved=dir"));
}
END_TEST

/* A custom composite waiting inside its body, hosted through Interop after the conversion:
 * the values its body computed (the ticket of a native call the replay skips) carry over. */
START_TEST(test_composite_hosted_through_interop)
{
    char id[33], maps[512];
    convert(DATA "hosted.xoml", "hosted.xaml", true);
    legacy_start(DATA "hosted.xoml", "--arg Employee=ann --arg Amount=50", id);
    copy_file("legacy.db", "copy.db");
    snprintf(maps, sizeof maps, "--map " DATA "hosted.xoml=%s/hosted.xaml", dir);
    json_t *r = migrate(maps, "", 0);
    ck_assert_int_eq(count_of(r, "interop"), 1);
    ck_assert_int_eq(count_of(r, "migrated"), 0);
    json_decref(r);
    json_t *m = modern_resume(id, "Approved=zed");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(m, "outputs"),
                                                        "Ticket")),
                     1050);
    same_outputs(m, legacy_event(DATA "hosted.xoml", "copy.db", id, "Approved=zed"));
}
END_TEST

static void sql(const char *db, const char *statements);
static bool same_file(const char *a, const char *b);

static void write_map(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* ---- verify-instances ---------------------------------------------------------------------- */
static int verify_instances(const char *maps, const char *events, char *out, size_t size)
{
    return cli(out, size,
               "verify-instances --from %s/legacy.db --to %s/modern.db %s --lib-path %s %s --json",
               dir, dir, maps, libs, events);
}

/* On a fresh pair of stores, an approval moved with a wrong map file that swaps the legacy
 * Employee and the modern `name` (and back): its id into a. */
static void moved_with_swapped_map(const char *name, const char *maps, char *a)
{
    char cmd[1200], map[512];
    snprintf(cmd, sizeof cmd, "rm -f %s/legacy.db* %s/modern.db*", dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(map, sizeof map,
             "{\"values\": [{\"legacy\": \"Employee\", \"modern\": \"%s\", \"root\": true},"
             " {\"legacy\": \"%s\", \"modern\": \"Employee\", \"root\": true}]}\n",
             name, name);
    write_map("approval.xaml.map.json", map);
    legacy_start(DATA "approval.xoml", "--arg Employee=ann --arg Amount=120", a);
    json_decref(migrate(maps, "", 0));
}

/* verify-instances says equivalent for faithful moves (a loop in its third round, an event
 * wait whose Delay is then fired) and diverged for a deliberately wrong map file (the legacy
 * Employee written into the modern Comment), naming the output. Neither store changes. */
START_TEST(test_verify_instances_equivalent_and_diverged)
{
    char a[33], b[33], maps[1024], out[65536];
    convert(DATA "approval.xoml", "approval.xaml", false);
    convert(DATA "rounds.xoml", "rounds.xaml", false);
    legacy_start(DATA "approval.xoml", "--arg Employee=ann --arg Amount=120", a);
    legacy_start(DATA "rounds.xoml", "", b);
    json_decref(legacy_event(DATA "rounds.xoml", "legacy.db", b, "Approved=a"));
    snprintf(maps, sizeof maps,
             "--map " DATA "approval.xoml=%s/approval.xaml --map " DATA "rounds.xoml=%s/rounds.xaml",
             dir, dir);
    json_decref(migrate(maps, "", 0));
    copy_file("legacy.db", "legacy.before");
    copy_file("modern.db", "modern.before");
    ck_assert_int_eq(verify_instances(maps, "--event Approved=x --event Approved=y", out,
                                      sizeof out),
                     0);
    json_t *r = last_json(out);
    ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "equivalent");
    ck_assert_int_eq(json_integer_value(json_object_get(r, "instances")), 2);
    json_decref(r);
    ck_assert_int_eq(verify_instances(maps, "", out, sizeof out), 0); /* the Delay fires */
    ck_assert(same_file("legacy.db", "legacy.before"));
    ck_assert(same_file("modern.db", "modern.before"));
    /* a wrong map: a fresh pair of stores */
    snprintf(maps, sizeof maps, "--map " DATA "approval.xoml=%s/approval.xaml", dir);
    moved_with_swapped_map("Comment", maps, a);
    ck_assert_int_eq(verify_instances(maps, "--event Approved=x", out, sizeof out), 1);
    r = last_json(out);
    ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "diverged");
    json_t *d = json_array_get(json_object_get(r, "divergences"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(d, "what")), "output Comment");
    ck_assert_str_eq(json_string_value(json_object_get(d, "instance")), a);
    json_decref(r);
}
END_TEST

/* verify-instances --generate: runs made from the script (events left out, in other orders,
 * timers fired first) are equivalent for a faithful move, and find a wrong map that the
 * script does not: the legacy Employee written into the modern Approver, which the approval of
 * the script overwrites, shows when the approval does not come first and the Delay fires. */
START_TEST(test_verify_instances_generated_events_find_a_wrong_map)
{
    char a[33], maps[1024], events[600], out[65536];
    convert(DATA "approval.xoml", "approval.xaml", false);
    write_map("script.json", "[{\"event\": \"Approved\", \"payload\": \"x\"},"
                             " {\"event\": \"Rejected\", \"payload\": {\"Approver\": \"bob\","
                             " \"Comment\": \"late\"}}]\n");
    snprintf(maps, sizeof maps, "--map " DATA "approval.xoml=%s/approval.xaml", dir);
    snprintf(events, sizeof events, "--events %s/script.json --generate 8 --seed 3", dir);
    legacy_start(DATA "approval.xoml", "--arg Employee=ann --arg Amount=120", a);
    json_decref(migrate(maps, "", 0));
    ck_assert_int_eq(verify_instances(maps, events, out, sizeof out), 0);
    json_t *r = last_json(out);
    ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "equivalent");
    ck_assert_int_eq(json_integer_value(json_object_get(r, "runs")), 9);
    json_decref(r);
    /* the wrong map, on a fresh pair of stores */
    moved_with_swapped_map("Approver", maps, a);
    char script[600];
    snprintf(script, sizeof script, "--events %s/script.json", dir);
    ck_assert_int_eq(verify_instances(maps, script, out, sizeof out), 0);
    ck_assert_int_eq(verify_instances(maps, events, out, sizeof out), 1);
    r = last_json(out);
    ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "diverged");
    json_t *d = json_array_get(json_object_get(r, "divergences"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(d, "what")), "output Approver");
    ck_assert_str_eq(json_string_value(json_object_get(d, "modern")), "\"ann\" (String)");
    ck_assert_int_eq(strncmp(json_string_value(json_object_get(d, "case")), "gen-", 4), 0);
    json_decref(r);
}
END_TEST

/* ---- idempotence, dry run, rollback ----------------------------------------------------------- */
static bool same_file(const char *a, const char *b)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cmp -s %s/%s %s/%s", dir, a, dir, b);
    return system(cmd) == 0;
}

static bool exists(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* A purchase order signed off line by line (a sequential Replicator over the line amounts),
 * waiting in its third line: the ForEach resumes at item 2 over the legacy list, not at the
 * first; the line's weight, computed by a native activity before the wait (weighLine.Result,
 * a variable of the round in the conversion), is carried into that round (the log gets "t=4;",
 * not the 0 of the call the replay skipped), verify-instances finds the two equivalent, and the
 * order finishes with the legacy outputs. */
START_TEST(test_replicator_waiting_in_its_third_child)
{
    char id[33];
    use_test_libs();
    const char *events[] = {"Go=1", "Go=2", NULL};
    moved_after("signoff", "--arg 'Items=[120,45,300,80]'", events, id);
    char maps[1024], out[65536];
    snprintf(maps, sizeof maps, "--map " DATA "signoff.xoml=%s/signoff.xaml", dir);
    ck_assert_int_eq(verify_instances(maps, "--event Go=3 --event Go=4 --generate 4", out,
                                      sizeof out),
                     0);
    json_t *r = last_json(out);
    ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "equivalent");
    json_decref(r);
    json_t *m = modern_resume(id, "Go=3");
    ck_assert_str_eq(json_string_value(json_object_get(m, "status")), "Idle");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "outputs"), "Log")),
                     "t=0;t=2;t=4;");
    same_outputs(m, legacy_event(DATA "signoff.xoml", "copy.db", id, "Go=3"));
    m = modern_resume(id, "Go=4");
    ck_assert_str_eq(json_string_value(json_object_get(m, "status")), "Closed");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(m, "outputs"), "Count")),
                     4);
    same_outputs(m, legacy_event(DATA "signoff.xoml", "copy.db", id, "Go=4"));
}
END_TEST

/* A parallel Replicator whose three rounds each wait on a two-hour Delay: the
 * ParallelForEach runs the bodies of the rounds the legacy one runs, each timer due at its
 * legacy instant to the microsecond (the legacy rounds started microseconds apart), and
 * verify-instances, firing them on one clock, finds the two equivalent. */
START_TEST(test_parallel_replicator_rounds_keep_their_timers)
{
    char id[33], maps[1024], out[65536];
    use_test_libs();
    const char *events[] = {NULL};
    moved_after("fanout", "--arg 'Items=[1,2,3]'", events, id);
    ck_assert_int_eq(cli(out, sizeof out, "inspect %s --store %s/modern.db", id, dir), 0);
    json_t *row = last_json(out);
    json_t *timers = json_object_get(json_object_get(row, "state"), "timers");
    ck_assert_uint_eq(json_array_size(timers), 3);
    ck_assert_str_ne(json_string_value(json_object_get(json_array_get(timers, 0), "due")),
                     json_string_value(json_object_get(json_array_get(timers, 2), "due")));
    json_decref(row);
    snprintf(maps, sizeof maps, "--map " DATA "fanout.xoml=%s/fanout.xaml", dir);
    ck_assert_int_eq(verify_instances(maps, "--generate 3", out, sizeof out), 0);
    json_t *r = last_json(out);
    ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "equivalent");
    json_decref(r);
}
END_TEST

/* Two waiting instances and one that completed: the completed one stays with its reason; a
 * second run moves nothing; run-legacy refuses a migrated instance. */
START_TEST(test_second_run_moves_nothing)
{
    char a[33], b[33], c[33], maps[512], out[8192];
    convert(DATA "approval.xoml", "approval.xaml", false);
    legacy_start(DATA "approval.xoml", "--arg Employee=ann --arg Amount=1", a);
    legacy_start(DATA "approval.xoml", "--arg Employee=bea --arg Amount=2", b);
    legacy_start(DATA "approval.xoml", "--arg Employee=cid --arg Amount=3", c);
    json_decref(legacy_event(DATA "approval.xoml", "legacy.db", c, "Approved=x"));
    snprintf(maps, sizeof maps, "--map " DATA "approval.xoml=%s/approval.xaml", dir);
    json_t *r = migrate(maps, "", 0);
    ck_assert_int_eq(count_of(r, "migrated"), 2);
    ck_assert_int_eq(count_of(r, "skipped"), 1);
    json_decref(r);
    copy_file("legacy.db", "after1.db");
    copy_file("modern.db", "modern1.db");
    r = migrate(maps, "", 0);
    ck_assert_int_eq(count_of(r, "migrated"), 0);
    ck_assert_int_eq(count_of(r, "alreadyMigrated"), 2);
    json_decref(r);
    ck_assert(same_file("legacy.db", "after1.db"));
    ck_assert_int_eq(cli(out, sizeof out, "run-legacy " DATA "approval.xoml --lib-path %s --store"
                                          " %s/legacy.db --instance %s --event Approved=x",
                         libs, dir, a),
                     2);
    ck_assert_int_eq(cli(out, sizeof out, "instances --store %s/modern.db --json", dir), 0);
    size_t idle = 0;
    for (const char *p = out; (p = strstr(p, "\"Idle\"")) != NULL; p++)
        idle++;
    ck_assert_uint_eq(idle, 2);
}
END_TEST

/* --dry-run says what would happen and writes nothing: no modern store appears, the legacy
 * store is byte for byte the same. */
START_TEST(test_dry_run_changes_nothing)
{
    char a[33], maps[512];
    convert(DATA "approval.xoml", "approval.xaml", false);
    legacy_start(DATA "approval.xoml", "--arg Employee=ann --arg Amount=1", a);
    copy_file("legacy.db", "before.db");
    snprintf(maps, sizeof maps, "--map " DATA "approval.xoml=%s/approval.xaml", dir);
    json_t *r = migrate(maps, "--dry-run", 0);
    ck_assert_int_eq(count_of(r, "migrated"), 1);
    ck_assert(json_is_true(json_object_get(r, "dryRun")));
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(r, "instances"), 0), "status")),
                     "movable");
    json_decref(r);
    ck_assert(same_file("legacy.db", "before.db"));
    ck_assert(!exists("modern.db"));
    /* the same as Markdown and HTML pages: counts, then a row per instance */
    for (int html = 0; html < 2; html++) {
        char extra[700], path[600];
        snprintf(path, sizeof path, "%s/plan.%s", dir, html ? "html" : "md");
        snprintf(extra, sizeof extra, "--dry-run --report %s", path);
        json_decref(migrate(maps, extra, 0));
        char *text = wf_test_read_file(path, NULL);
        ck_assert_ptr_nonnull(text);
        ck_assert_ptr_nonnull(strstr(text, "movable: 1, interop: 0, skipped: 0, failed: 0"));
        ck_assert_ptr_nonnull(strstr(text, a));
        ck_assert_ptr_nonnull(strstr(text, "IExpenseService.Approved, IExpenseService.Rejected"));
        ck_assert_ptr_nonnull(strstr(text, html ? "<td class=\"movable\">movable</td>" : "| movable |"));
        xmlDoc *page = html ? xmlReadMemory(text, (int)strlen(text), path, NULL, XML_PARSE_NONET)
                            : NULL;
        ck_assert(!html || page); /* the page is well-formed (common/wf_xmlw.h) */
        xmlFreeDoc(page);
        wf_free(text);
    }
    ck_assert(!exists("modern.db"));
}
END_TEST

/* --rollback makes the legacy row runnable again while the modern copy never ran, and refuses
 * once it has run. */
START_TEST(test_rollback_only_before_the_modern_copy_ran)
{
    char a[33], b[33], maps[512], out[8192];
    convert(DATA "approval.xoml", "approval.xaml", false);
    legacy_start(DATA "approval.xoml", "--arg Employee=ann --arg Amount=1", a);
    legacy_start(DATA "approval.xoml", "--arg Employee=bea --arg Amount=2", b);
    snprintf(maps, sizeof maps, "--map " DATA "approval.xoml=%s/approval.xaml", dir);
    json_decref(migrate(maps, "", 0));
    json_decref(modern_resume(b, "Approved=x")); /* b ran as a modern instance */
    ck_assert_int_eq(cli(out, sizeof out, "migrate-instances --from %s/legacy.db --to "
                                          "%s/modern.db --rollback --json",
                         dir, dir),
                     1);
    json_t *r = last_json(out);
    ck_assert_int_eq(count_of(r, "rolledBack"), 1);
    ck_assert_int_eq(count_of(r, "failed"), 1);
    json_decref(r);
    json_t *l = legacy_event(DATA "approval.xoml", "legacy.db", a, "Approved=y");
    ck_assert_str_eq(json_string_value(json_object_get(l, "status")), "Closed");
    json_decref(l);
    ck_assert_int_eq(cli(out, sizeof out, "inspect %s --store %s/modern.db", a, dir), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"status\": \"RolledBack\""));
    ck_assert_int_eq(cli(out, sizeof out, "run-legacy " DATA "approval.xoml --lib-path %s --store"
                                          " %s/legacy.db --instance %s --event Approved=x",
                         libs, dir, b),
                     2);
}
END_TEST

/* The owner id of a process of this machine that has ended (as wfm_store's default owner ids
 * name processes). */
static void dead_owner(char *out, size_t size)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(0);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    char host[256];
    ck_assert_int_eq(gethostname(host, sizeof host), 0);
    host[sizeof host - 1] = '\0';
    host[strcspn(host, ":")] = '\0';
    snprintf(out, size, "%s:%ld:deadbeef", host, (long)pid);
}

/* The status of `id` in legacy.db (a static buffer). */
static const char *legacy_status(const char *id)
{
    static char status[32];
    char path[512];
    snprintf(path, sizeof path, "%s/legacy.db", dir);
    wf_error err = WF_ERROR_INIT;
    wfl_store *ls = NULL;
    ck_assert_int_eq(wfl_store_open(path, &ls, &err), WF_OK);
    ck_assert_int_eq(wfl_store_status(ls, id, status, sizeof status, &err), WF_OK);
    wfl_store_close(ls);
    return status;
}

/* Make a migrated row of legacy.db look like a move in doubt: Migrating under `owner`. */
static void in_doubt(const char *id, const char *owner)
{
    char q[1024];
    snprintf(q, sizeof q, "UPDATE instances SET status = 'Migrating' WHERE id = '%s';"
                          " UPDATE migrated SET owner = '%s' WHERE id = '%s'",
             id, owner, id);
    sql("legacy.db", q);
}

/* A run that died between marking a legacy row Migrating and the end of the move left it in
 * doubt: its modern copy committed decides. Committed: the modern store runs it (run-legacy
 * refuses and settles the row Migrated, a new run counts it as moved before); not committed
 * (the target file gone here): run-legacy gives the row back and runs it. A row a live
 * process is moving runs nowhere else: run-legacy refuses it. */
START_TEST(test_moves_in_doubt_are_settled_by_the_modern_commit)
{
    char a[33], b[33], c[33], maps[512], out[8192], dead[320], live[320];
    convert(DATA "approval.xoml", "approval.xaml", false);
    legacy_start(DATA "approval.xoml", "--arg Employee=ann --arg Amount=1", a);
    legacy_start(DATA "approval.xoml", "--arg Employee=bea --arg Amount=2", b);
    legacy_start(DATA "approval.xoml", "--arg Employee=cid --arg Amount=3", c);
    snprintf(maps, sizeof maps, "--map " DATA "approval.xoml=%s/approval.xaml", dir);
    json_decref(migrate(maps, "", 0));
    dead_owner(dead, sizeof dead);
    snprintf(live, sizeof live, "%.*s:%ld:0badf00d", (int)strcspn(dead, ":"), dead,
             (long)getpid());
    in_doubt(a, dead);
    in_doubt(c, live);
#define RUN_LEGACY                                                                                 \
    "run-legacy " DATA "approval.xoml --lib-path %s --store %s/legacy.db --instance %s"             \
    " --event Approved=x"
    ck_assert_int_eq(cli(out, sizeof out, RUN_LEGACY, libs, dir, a), 2);
    ck_assert_str_eq(legacy_status(a), "Migrated");
    ck_assert_int_eq(cli(out, sizeof out, RUN_LEGACY, libs, dir, c), 2);
    ck_assert_str_eq(legacy_status(c), "Migrating");
    in_doubt(a, dead);
    json_t *r = migrate(maps, "", 0); /* a: settled as moved before; c: being moved */
    ck_assert_int_eq(count_of(r, "migrated"), 0);
    ck_assert_int_eq(count_of(r, "alreadyMigrated"), 2);
    ck_assert_int_eq(count_of(r, "skipped"), 1);
    json_decref(r);
    json_t *m = modern_resume(a, "Approved=y");
    ck_assert_str_eq(json_string_value(json_object_get(m, "status")), "Closed");
    json_decref(m);
    /* b in doubt with no modern copy: legacy again */
    in_doubt(b, dead);
    char from[600], to[600];
    snprintf(from, sizeof from, "%s/modern.db", dir);
    snprintf(to, sizeof to, "%s/moved-away.db", dir);
    ck_assert_int_eq(rename(from, to), 0);
    json_t *l = legacy_event(DATA "approval.xoml", "legacy.db", b, "Approved=z");
    ck_assert_str_eq(json_string_value(json_object_get(l, "status")), "Closed");
    json_decref(l);
}
END_TEST

/* ---- bad input: exit 2, both stores unchanged -------------------------------------------------- */
static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void sql(const char *db, const char *statements)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "sqlite3 %s/%s \"%s\"", dir, db, statements);
    ck_assert_int_eq(system(cmd), 0);
}

static void refused(const char *maps, const char *why)
{
    copy_file("legacy.db", "legacy.before");
    copy_file("modern.db", "modern.before");
    char out[8192];
    int rc = cli(out, sizeof out,
                 "migrate-instances --from %s/legacy.db --to %s/modern.db %s --lib-path %s",
                 dir, dir, maps, libs);
    ck_assert_msg(rc == 2, "%s: exit %d", why, rc);
    ck_assert_msg(same_file("legacy.db", "legacy.before"), "%s: legacy store changed", why);
    ck_assert_msg(same_file("modern.db", "modern.before"), "%s: modern store changed", why);
}

START_TEST(test_bad_input_changes_neither_store)
{
    char a[33], maps[512], out[8192];
    convert(DATA "approval.xoml", "approval.xaml", false);
    convert(DATA "rounds.xoml", "rounds.xaml", false);
    /* a modern store with an instance of its own */
    ck_assert_int_eq(cli(out, sizeof out, "run %s/approval.xaml --lib-path %s --store "
                                          "%s/modern.db --arg Employee=z --arg Amount=1",
                         dir, libs, dir),
                     0);
    legacy_start(DATA "approval.xoml", "--arg Employee=ann --arg Amount=1", a);
    /* a map whose definition is not the instance's */
    snprintf(maps, sizeof maps, "--map " DATA "rounds.xoml=%s/rounds.xaml", dir);
    refused(maps, "mismatched map");
    snprintf(maps, sizeof maps, "--map " DATA "approval.xoml=%s/approval.xaml", dir);
    /* a damaged blob */
    copy_file("legacy.db", "good.db");
    sql("legacy.db", "UPDATE instances SET blob = substr(blob, 1, 40)");
    refused(maps, "truncated blob");
    /* a newer legacy store */
    copy_file("good.db", "legacy.db");
    sql("legacy.db", "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    refused(maps, "newer store");
    /* a foreign database, and a file that is no database */
    write_file("legacy.db", "not a database at all, just text\n");
    refused(maps, "not a database");
    copy_file("good.db", "legacy.db");
    sql("legacy.db", "DROP TABLE meta; CREATE TABLE orders(id INTEGER)");
    refused(maps, "foreign database");
    /* a read-only target (immutable for root, read-only mode otherwise) */
    copy_file("good.db", "legacy.db");
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             geteuid() == 0 ? "chattr +i %s/modern.db" : "chmod 0444 %s/modern.db", dir);
    if (system(cmd) == 0) {
        refused(maps, "read-only target");
        snprintf(cmd, sizeof cmd, "chattr -i %s/modern.db 2>/dev/null; chmod 0644 %s/modern.db",
                 dir, dir);
        ck_assert_int_eq(system(cmd), 0);
    }
}
END_TEST

/* ---- the kill test ------------------------------------------------------------------------------ */
/* A legacy store of `n` instances of approval.xoml waiting for an answer, written in one
 * transaction (distinct ids and inputs, each a real executor state). */
static void waiting_store(const char *path, int n)
{
    wf_error err = WF_ERROR_INIT;
    wf_types *types = wf_types_create();
    wf_libpath *lp = NULL;
    ck_assert_int_eq(wf_libpath_create(libs, &lp, &err), WF_OK);
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = types;
    lo.libpath = lp;
    wfl_definition *def = NULL;
    ck_assert_int_eq(wfl_definition_load_file(&lo, DATA "approval.xoml", &def, &err), WF_OK);
    wfl_store *store = NULL;
    ck_assert_int_eq(wfl_store_open(path, &store, &err), WF_OK);
    wfl_store_close(store);
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "INSERT INTO instances VALUES(?, 'Idle', ?)", -1,
                                        &st, NULL),
                     SQLITE_OK);
    for (int i = 0; i < n; i++) {
        char id[33], employee[32];
        snprintf(id, sizeof id, "%016x%016x", 0x5eedu, (unsigned)i);
        snprintf(employee, sizeof employee, "emp%d", i);
        wfl_exec_opts eo = WFL_EXEC_OPTS_INIT;
        eo.instance_id = id;
        wfl_exec *ex = NULL;
        ck_assert_int_eq(wfl_exec_create(def, NULL, &eo, &ex, &err), WF_OK);
        ck_assert_int_eq(wfl_exec_set_input_text(ex, "Employee", employee, &err), WF_OK);
        ck_assert_int_eq(wfl_exec_set_input_text(ex, "Amount", "12.50", &err), WF_OK);
        wfl_exec_state state;
        ck_assert_int_eq(wfl_exec_run(ex, &state, &err), WF_OK);
        ck_assert_int_eq(state, WFL_EXEC_IDLE);
        void *blob = NULL;
        size_t len = 0;
        ck_assert_int_eq(wfl_exec_save(ex, &blob, &len, &err), WF_OK);
        sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_blob(st, 2, blob, (int)len, SQLITE_TRANSIENT);
        ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
        wf_free(blob);
        wfl_exec_destroy(ex);
    }
    sqlite3_finalize(st);
    ck_assert_int_eq(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    wfl_definition_destroy(def);
    wf_libpath_destroy(lp);
    wf_types_destroy(types);
}

/* Where each instance runs now. Legacy: as run-legacy decides (wfb_migrate_home: not marked,
 * or Migrating without a modern commit); modern: an Idle row a host may claim, read from the
 * modern file directly. Fails unless every instance runs in exactly one of them, or when a
 * row counts as held by a live process (none is alive). Counts per store, and the rows in
 * doubt. */
typedef struct census {
    int legacy, modern, in_doubt, total;
} census;

static census take_census(const char *legacy, const char *modern)
{
    census c = {0, 0, 0, 0};
    wf_error err = WF_ERROR_INIT;
    wfl_store *ls = NULL;
    ck_assert_int_eq(wfl_store_open(legacy, &ls, &err), WF_OK);
    wfm_store *ms = NULL;
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = modern;
    so.read_only = true;
    bool has_modern = access(modern, F_OK) == 0 && wfm_store_open(&so, &ms, &err) == WF_OK;
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open_v2(legacy, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    char attach[600];
    snprintf(attach, sizeof attach, "ATTACH DATABASE 'file:%s?mode=ro' AS m", modern);
    has_modern = has_modern && sqlite3_exec(db, attach, NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(
        sqlite3_prepare_v2(db,
                           has_modern ? "SELECT l.id, l.status, r.status FROM instances l"
                                        " LEFT JOIN m.instances r ON r.id = l.id"
                                      : "SELECT id, status, NULL FROM instances",
                           -1, &st, NULL),
        SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        const char *ms_status = (const char *)sqlite3_column_text(st, 2);
        wfb_home home = WFB_HOME_LEGACY;
        bool held = true;
        ck_assert_int_eq(wfb_migrate_home(ls, id, ms, &home, &held, &err), WF_OK);
        ck_assert_msg(!held, "instance %s held by a process that died", id);
        bool in_legacy = home == WFB_HOME_LEGACY;
        bool in_modern = ms_status && strcmp(ms_status, "Idle") == 0;
        ck_assert_msg(!(in_legacy && in_modern), "instance %s runnable in both stores", id);
        ck_assert_msg(in_legacy || in_modern, "instance %s runnable in neither store", id);
        c.legacy += in_legacy;
        c.modern += in_modern;
        c.in_doubt += strcmp((const char *)sqlite3_column_text(st, 1), "Migrating") == 0;
        c.total++;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    wfm_store_close(ms);
    wfl_store_close(ls);
    return c;
}

/* A store of n waiting approvals (pristine.db keeps a copy) and the paths of a bulk run. */
typedef struct bulk {
    char legacy[512], modern[512], map[1200], bin[512];
} bulk;

static void bulk_setup(bulk *b, int n)
{
    convert(DATA "approval.xoml", "approval.xaml", false);
    snprintf(b->legacy, sizeof b->legacy, "%s/legacy.db", dir);
    snprintf(b->modern, sizeof b->modern, "%s/modern.db", dir);
    snprintf(b->map, sizeof b->map, DATA "approval.xoml=%s/approval.xaml", dir);
    snprintf(b->bin, sizeof b->bin, "%s/bin/wfbridge", wf_test_build_dir());
    waiting_store(b->legacy, n);
    copy_file("legacy.db", "pristine.db");
}

/* Back to the start: the pristine legacy store, no modern store. */
static void bulk_restart(const bulk *b)
{
    char cmd[2000];
    copy_file("pristine.db", "legacy.db");
    snprintf(cmd, sizeof cmd, "rm -f %s %s-wal %s-shm", b->modern, b->modern, b->modern);
    ck_assert_int_eq(system(cmd), 0);
}

/* SIGKILL migrate-instances at seeded random moments over a store of waiting instances, again
 * and again (each run continues what the killed ones left; once all have moved, from the
 * start again); after each kill every instance runs in exactly one store and at most the
 * batch being moved is in doubt (Migrating); a last run finishes: every instance runs in the
 * modern store, once.
 * WF_MIGRATE_KILLS, WF_MIGRATE_INSTANCES and WF_MIGRATE_SEED change the defaults (50 kills,
 * 1,000 instances). */
START_TEST(test_sigkill_at_random_points)
{
    int kills = getenv("WF_MIGRATE_KILLS") ? atoi(getenv("WF_MIGRATE_KILLS")) : 50;
    int n = getenv("WF_MIGRATE_INSTANCES") ? atoi(getenv("WF_MIGRATE_INSTANCES")) : 1000;
    unsigned seed = getenv("WF_MIGRATE_SEED") ? (unsigned)atoi(getenv("WF_MIGRATE_SEED"))
                                               : 20261202u;
    printf("migrate kill test: seed %u, %d kills over %d instances\n", seed, kills, n);
    srand(seed);
    bulk b;
    bulk_setup(&b, n);
    const char *legacy = b.legacy, *modern = b.modern, *bin = b.bin;
    const char *argv[] = {bin, "migrate-instances", "--from", legacy, "--to", modern, "--map",
                          b.map, "--lib-path", libs, "--durability", "normal", "--batch", "64",
                          NULL};
    int in_doubt_seen = 0, moved_before_kill = 0, restarts = 0;
    int max_ms = 500;
    for (int k = 0; k < kills; k++) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            execv(bin, (char *const *)argv);
            _exit(127);
        }
        usleep((useconds_t)(rand() % (max_ms * 1000)));
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        census c = take_census(legacy, modern);
        ck_assert_int_eq(c.total, n);
        /* only the batch being moved when the kill came (--batch 64) can be in doubt */
        ck_assert_msg(c.in_doubt <= 64, "%d instances in doubt after kill %d", c.in_doubt, k);
        ck_assert_int_eq(c.legacy + c.modern, n);
        in_doubt_seen += c.in_doubt > 0;
        moved_before_kill += c.modern > 0 && c.modern < n;
        if (c.modern == n) { /* all moved: the next kills start over */
            bulk_restart(&b);
            restarts++;
        }
    }
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "last run: status %d", status);
    printf("migrate kill test: %d kills left some moved and some not, %d left a batch in doubt,"
           " %d started over\n",
           moved_before_kill, in_doubt_seen, restarts);
    census c = take_census(legacy, modern);
    ck_assert_int_eq(c.modern, n);
    ck_assert_int_eq(c.legacy, 0);
    ck_assert_int_eq(c.in_doubt, 0);
}
END_TEST

/* Start `wfbridge ARGV...` with stdout into the file `out` (stderr dropped); its pid. */
static pid_t spawn_to(const char *const *argv, const char *out)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int null = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(null, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Run migrate-instances processes on the same stores at once (`runs` of them, argv each),
 * require each to exit 0 with no failed move, and return the sums of their "migrated" and
 * "alreadyMigrated" counts. */
static void runs_at_once(const char *const *argv, int runs, long *moved, long *before)
{
    pid_t pid[4];
    char out[4][600];
    ck_assert_int_le(runs, 4);
    for (int i = 0; i < runs; i++) {
        snprintf(out[i], sizeof out[i], "%s/run%d.out", dir, i);
        pid[i] = spawn_to(argv, out[i]);
    }
    *moved = *before = 0;
    for (int i = 0; i < runs; i++) {
        int status = 0;
        ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "run %d: status %d", i,
                      status);
        char *text = wf_test_read_file(out[i], NULL);
        ck_assert_ptr_nonnull(text);
        json_t *r = last_json(text);
        printf("migrate runs at once: run %d moved %ld, found moved %ld\n", i,
               count_of(r, "migrated"), count_of(r, "alreadyMigrated"));
        ck_assert_int_eq(count_of(r, "failed"), 0);
        *moved += count_of(r, "migrated");
        *before += count_of(r, "alreadyMigrated");
        json_decref(r);
        wf_free(text);
    }
}

/* Two migrate-instances started together on the same stores, three times over fresh stores:
 * each instance is claimed by one of them, so the moves they report add up to the store and
 * each instance ends in the modern store exactly once; a third run moves nothing. */
START_TEST(test_two_runs_at_once_move_each_instance_once)
{
    int n = 600;
    bulk b;
    bulk_setup(&b, n);
    const char *argv[] = {b.bin, "migrate-instances", "--from", b.legacy, "--to", b.modern,
                          "--map", b.map, "--lib-path", libs, "--durability", "normal",
                          "--batch", "16", "--json", NULL};
    for (int round = 0; round < 3; round++) {
        bulk_restart(&b);
        long moved = 0, before = 0;
        runs_at_once(argv, 2, &moved, &before);
        ck_assert_int_eq(moved, n);
        census c = take_census(b.legacy, b.modern);
        ck_assert_int_eq(c.modern, n);
        ck_assert_int_eq(c.legacy, 0);
        ck_assert_int_eq(c.in_doubt, 0);
    }
    long moved = 0, before = 0;
    runs_at_once(argv, 1, &moved, &before);
    ck_assert_int_eq(moved, 0);
    ck_assert_int_eq(before, n);
}
END_TEST

/* ---- PostgreSQL ------------------------------------------------------------------------------ */
static char pg_conn[1400], pg_schema[64];

static void setup_pg(void)
{
    setup();
    wf_test_pg_schema(pg_conn, sizeof pg_conn, pg_schema);
}

static void teardown_pg(void)
{
    wf_test_pg_drop(pg_schema);
    teardown();
}

/* The same moves into a PostgreSQL store: an event wait and a loop in its third round, resumed
 * there with the legacy outputs; a second run moves nothing; the reserved-then-released rows
 * end unleased. */
START_TEST(test_move_into_postgresql)
{
    char a[33], b[33], maps[1024], out[65536];
    convert(DATA "approval.xoml", "approval.xaml", false);
    convert(DATA "rounds.xoml", "rounds.xaml", false);
    legacy_start(DATA "approval.xoml", "--arg Employee=ann --arg Amount=120", a);
    legacy_start(DATA "rounds.xoml", "", b);
    for (int i = 0; i < 2; i++)
        json_decref(legacy_event(DATA "rounds.xoml", "legacy.db", b, "Approved=r"));
    copy_file("legacy.db", "copy.db");
    snprintf(maps, sizeof maps,
             "--map " DATA "approval.xoml=%s/approval.xaml --map " DATA "rounds.xoml=%s/rounds.xaml",
             dir, dir);
    int rc = cli(out, sizeof out, "migrate-instances --from %s/legacy.db --to '%s' %s --lib-path %s"
                                  " --json",
                 dir, pg_conn, maps, libs);
    ck_assert_msg(rc == 0, "%s", out);
    json_t *r = last_json(out);
    ck_assert_int_eq(count_of(r, "migrated"), 2);
    json_decref(r);
    ck_assert_int_eq(cli(out, sizeof out, "migrate-instances --from %s/legacy.db --to '%s' %s"
                                          " --lib-path %s --json",
                         dir, pg_conn, maps, libs),
                     0);
    r = last_json(out);
    ck_assert_int_eq(count_of(r, "migrated"), 0);
    json_decref(r);
    char *leased = wf_test_pg_query(pg_conn, "SELECT count(*) FROM instances WHERE owner IS NOT NULL");
    ck_assert_str_eq(leased, "0");
    wf_free(leased);
    const char *ev = "'Rejected={\"Approver\":\"bob\",\"Comment\":\"late\"}'";
    ck_assert_int_eq(cli(out, sizeof out, "resume %s --store '%s' --lib-path %s --bookmark %s"
                                          " --json",
                         a, pg_conn, libs, ev),
                     0);
    same_outputs(last_json(out), legacy_event(DATA "approval.xoml", "copy.db", a, ev));
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(cli(out, sizeof out, "resume %s --store '%s' --lib-path %s --bookmark"
                                              " Approved=z --json",
                             b, pg_conn, libs),
                         0);
    json_decref(legacy_event(DATA "rounds.xoml", "copy.db", b, "Approved=z"));
    same_outputs(last_json(out), legacy_event(DATA "rounds.xoml", "copy.db", b, "Approved=z"));
}
END_TEST

Suite *migrate_pg_suite(void)
{
    Suite *s = suite_create("migrate_pg");
    if (!wf_test_pg_available("migrate_pg"))
        return s;
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup_pg, teardown_pg);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_move_into_postgresql);
    suite_add_tcase(s, tc);
    return s;
}

Suite *migrate_suite(void)
{
    Suite *s = suite_create("migrate");
    TCase *tc = tcase_create("positions");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_event_wait_with_delay_pending);
    tcase_add_test(tc, test_loop_in_its_third_round);
    tcase_add_test(tc, test_activity_values_carry_over);
    tcase_add_test(tc, test_foreach_of_unknown_item_stays_legacy);
    tcase_add_test(tc, test_position_behind_a_payload_stays_legacy);
    tcase_add_test(tc, test_position_behind_a_payload_moves_with_the_legacy_values);
    tcase_add_test(tc, test_state_machine_in_its_second_state);
    tcase_add_test(tc, test_composite_hosted_through_interop);
    tcase_add_test(tc, test_verify_instances_equivalent_and_diverged);
    tcase_add_test(tc, test_verify_instances_generated_events_find_a_wrong_map);
    tcase_add_test(tc, test_replicator_waiting_in_its_third_child);
    tcase_add_test(tc, test_parallel_replicator_rounds_keep_their_timers);
    suite_add_tcase(s, tc);
    tc = tcase_create("stores");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_second_run_moves_nothing);
    tcase_add_test(tc, test_dry_run_changes_nothing);
    tcase_add_test(tc, test_rollback_only_before_the_modern_copy_ran);
    tcase_add_test(tc, test_moves_in_doubt_are_settled_by_the_modern_commit);
    tcase_add_test(tc, test_bad_input_changes_neither_store);
    suite_add_tcase(s, tc);
    tc = tcase_create("kill");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_sigkill_at_random_points);
    tcase_add_test(tc, test_two_runs_at_once_move_each_instance_once);
    suite_add_tcase(s, tc);
    return s;
}

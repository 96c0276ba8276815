/* test_verify_mutations.c — proof that `wfbridge verify` catches broken conversions: each
 * mutation below is a test-only transform of the text of a correct modern equivalent of a
 * legacy workflow (tests/bridge/data/verify/), and verify must report a divergence with a
 * shrunk case that is itself a ready-to-run --cases file which still diverges.
 *
 * The mutations (every one must be caught):
 *   flip_condition     order: VolumeDiscount's Quantity >= 10 becomes Quantity < 10
 *   drop_assignment    order: the Assign of Total is removed
 *   swap_activities    order: chargeCard and markShipped change places
 *   decimal_to_double  order: the Discount argument and its Assigns become Double
 *   widen_scope        batch: the loop body's receipt variable moves to the root, so the
 *                      per-iteration reset is lost
 *   drop_fault_handler batch: the NativeException catch is removed
 *   drop_timeout       expense: the Pick branch of the approval timeout is removed, so the
 *                      instance no longer escalates (idle points and calls differ)
 *   reorder_catches    batch: the catches keep their handlers but change their types, so the
 *                      NativeException handler now runs for the Exception catch and the
 *                      other way round (what pairing reordered catches with the wrong handler
 *                      bodies produces)
 * Mutations only one decision outcome shows (the default 50 generated cases of seed 1 must
 * find each: the generator steers toward the outcomes no case reached yet):
 *   while_to_do_while  loop_skip: the While becomes a DoWhile (differs only when skipped)
 *   catch_wrong_body   fault_path: the NativeException catch reports done, not the failure
 *   pick_wrong_action  pick_branch: the Rejected branch records an approval (its script
 *                      approves first: only a reordered or shortened script rejects)
 *   wrong_transition   state_path: Pending's timeout goes to Done, not Escalated (only a
 *                      script without the approval lets the timer fire)
 * Reordering the Catch elements whole is not a fault: a WF4 TryCatch picks the best-matching
 * catch, not the first (docs/semantics.md §5), so verify must call that mutant equivalent. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/wf_mem.h"
#include "../wf_test_util.h"
#include "support_bridge.h"

#define DATA       "tests/bridge/data/verify/"
#define ORDER_XOML "samples/legacy/order_processing/order_processing.xoml"

/* ---- text transforms --------------------------------------------------------------------- */
/* Replace the first `from` by `to` in *text (asserting it is there). */
static void replace(char **text, const char *from, const char *to)
{
    char *at = strstr(*text, from);
    ck_assert_msg(at != NULL, "mutation anchor not found: %s", from);
    size_t head = (size_t)(at - *text), fl = strlen(from), tl = strlen(to);
    size_t len = strlen(*text);
    char *out = wf_malloc(len - fl + tl + 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, *text, head);
    memcpy(out + head, to, tl);
    memcpy(out + head + tl, at + fl, len - head - fl + 1);
    wf_free(*text);
    *text = out;
}

/* The block from the first `start` to the end of the following `end`, as a new string. */
static char *block(const char *text, const char *start, const char *end)
{
    const char *a = strstr(text, start);
    ck_assert_msg(a != NULL, "block start not found: %s", start);
    const char *b = strstr(a, end);
    ck_assert_msg(b != NULL, "block end not found: %s", end);
    size_t n = (size_t)(b - a) + strlen(end);
    char *out = wf_malloc(n + 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, a, n);
    out[n] = '\0';
    return out;
}

static void drop_block(char **text, const char *start, const char *end)
{
    char *b = block(*text, start, end);
    replace(text, b, "");
    wf_free(b);
}

/* Swap two non-overlapping blocks (a before b in the text). */
static void swap_blocks(char **text, const char *a_start, const char *a_end, const char *b_start,
                        const char *b_end)
{
    char *a = block(*text, a_start, a_end), *b = block(*text, b_start, b_end);
    replace(text, a, "\x01");
    replace(text, b, a);
    replace(text, "\x01", b);
    wf_free(a);
    wf_free(b);
}

/* ---- the mutations ----------------------------------------------------------------------- */
typedef struct mutation {
    const char *name;
    const char *xoml, *xaml; /* the legacy workflow and its correct equivalent */
    void (*apply)(char **text);
} mutation;

static void flip_condition(char **t)
{
    replace(t, "Condition=\"[Quantity &gt;= 10]\"", "Condition=\"[Quantity &lt; 10]\"");
}

static void drop_assignment(char **t)
{
    replace(t,
            "<Assign x:TypeArguments=\"x:Decimal\" To=\"[Total]\" Value=\"[Amount - Discount]\" />",
            "");
}

static void swap_activities(char **t)
{
    swap_blocks(t, "<InvokeMethod DisplayName=\"chargeCard\"", "</InvokeMethod>",
                "<InvokeMethod DisplayName=\"markShipped\"", "</InvokeMethod>");
}

static void decimal_to_double(char **t)
{
    replace(t, "Name=\"Discount\" Type=\"OutArgument(x:Decimal)\"",
            "Name=\"Discount\" Type=\"OutArgument(x:Double)\"");
    replace(t, "x:TypeArguments=\"x:Decimal\" To=\"[Discount]\" Value=\"[Amount * 0.05D]\"",
            "x:TypeArguments=\"x:Double\" To=\"[Discount]\" Value=\"[CDbl(Amount) * 0.05]\"");
    replace(t, "x:TypeArguments=\"x:Decimal\" To=\"[Discount]\" Value=\"[0D]\"",
            "x:TypeArguments=\"x:Double\" To=\"[Discount]\" Value=\"[0.0]\"");
    replace(t, "Condition=\"[Discount &gt;= 0D]\"", "Condition=\"[Discount &gt;= 0.0]\"");
    replace(t, "Value=\"[Amount - Discount]\"", "Value=\"[Amount - CDec(Discount)]\"");
}

static void widen_scope(char **t)
{
    replace(t, "<Variable x:TypeArguments=\"x:String\" Name=\"receipt\" />", "");
    replace(t, "<Variable x:TypeArguments=\"x:Boolean\" Name=\"more\" />",
            "<Variable x:TypeArguments=\"x:Boolean\" Name=\"more\" />\n"
            "      <Variable x:TypeArguments=\"x:String\" Name=\"receipt\" />");
}

static void drop_fault_handler(char **t)
{
    drop_block(t, "<Catch x:TypeArguments=\"NativeException\">", "</Catch>");
}

static void drop_timeout(char **t)
{
    drop_block(t, "<PickBranch DisplayName=\"onTimeout\">", "</PickBranch>");
}

static void swap_whole_catches(char **t)
{
    swap_blocks(t, "<Catch x:TypeArguments=\"NativeException\">", "</Catch>",
                "<Catch x:TypeArguments=\"s:Exception\">", "</Catch>");
}

static void reorder_catches(char **t)
{
    replace(
        t,
        "<Catch x:TypeArguments=\"NativeException\">\n          <ActivityAction "
        "x:TypeArguments=\"NativeException\">",
        "<Catch x:TypeArguments=\"\x02\">\n          <ActivityAction x:TypeArguments=\"\x02\">");
    replace(t,
            "<Catch x:TypeArguments=\"s:Exception\">\n          <ActivityAction "
            "x:TypeArguments=\"s:Exception\">",
            "<Catch x:TypeArguments=\"NativeException\">\n          <ActivityAction "
            "x:TypeArguments=\"NativeException\">");
    replace(t,
            "<Catch x:TypeArguments=\"\x02\">\n          <ActivityAction x:TypeArguments=\"\x02\">",
            "<Catch x:TypeArguments=\"s:Exception\">\n          <ActivityAction "
            "x:TypeArguments=\"s:Exception\">");
}

static void while_to_do_while(char **t)
{
    replace(t, "<While DisplayName=\"postRecords\"", "<DoWhile DisplayName=\"postRecords\"");
    replace(t, "</While>", "</DoWhile>");
}

static void catch_wrong_body(char **t)
{
    replace(t,
            "MethodName=\"batch_report\">\n                <InArgument "
            "x:TypeArguments=\"x:Int32\">[Index]</InArgument>",
            "MethodName=\"batch_done\">");
}

static void pick_wrong_action(char **t)
{
    replace(t,
            "MethodName=\"expenses_record_rejection\">\n              <InArgument "
            "x:TypeArguments=\"x:String\">[Approver]</InArgument>\n              <InArgument "
            "x:TypeArguments=\"x:String\">[Comment]</InArgument>",
            "MethodName=\"expenses_record_approval\">\n              <InArgument "
            "x:TypeArguments=\"x:String\">[Approver]</InArgument>");
}

static void wrong_transition(char **t)
{
    replace(t, "<Transition DisplayName=\"onNoAnswer\" To=\"{x:Reference Escalated}\">",
            "<Transition DisplayName=\"onNoAnswer\" To=\"{x:Reference Done}\">");
}

static const mutation mutations[] = {
    {"flip_condition", ORDER_XOML, DATA "order_processing.xaml", flip_condition},
    {"drop_assignment", ORDER_XOML, DATA "order_processing.xaml", drop_assignment},
    {"swap_activities", ORDER_XOML, DATA "order_processing.xaml", swap_activities},
    {"decimal_to_double", ORDER_XOML, DATA "order_processing.xaml", decimal_to_double},
    {"widen_scope", DATA "batch_loop.xoml", DATA "batch_loop.xaml", widen_scope},
    {"drop_fault_handler", DATA "batch_loop.xoml", DATA "batch_loop.xaml", drop_fault_handler},
    {"drop_timeout", "samples/legacy/expense_approval/expense_approval.xoml",
     DATA "expense_approval.xaml", drop_timeout},
    {"reorder_catches", DATA "batch_loop.xoml", DATA "batch_loop.xaml", reorder_catches},
};
#define MUTATION_COUNT (sizeof mutations / sizeof mutations[0])

typedef struct path_mutation {
    mutation m;
    const char *activity, *outcome; /* the outcome of that path: the cases must reach it */
} path_mutation;

static const path_mutation path_mutations[] = {
    {{"while_to_do_while", DATA "loop_skip.xoml", DATA "loop_skip.xaml", while_to_do_while},
     "postRecords", "skipped"},
    {{"catch_wrong_body", DATA "fault_path.xoml", DATA "fault_path.xaml", catch_wrong_body},
     "onPostFailed", "caught NativeException"},
    {{"pick_wrong_action", DATA "pick_branch.xoml", DATA "pick_branch.xaml", pick_wrong_action},
     "onRejected", "won"},
    {{"wrong_transition", DATA "state_path.xoml", DATA "state_path.xaml", wrong_transition},
     "Pending", "-> Escalated"},
};
#define PATH_MUTATION_COUNT (sizeof path_mutations / sizeof path_mutations[0])

static int run_verify(const char *xoml, const char *xaml, const char *cases, const char *keep,
                      char **err)
{
    /* isolated, as users run it, except the batch loop: its runs to the step limit observe
     * a hundred megabytes each, and moving that from a worker to verify costs four times
     * the runs themselves on a loaded machine (the sample libraries keep no state) */
    const char *args[16] = {"verify", xoml, "--lib-path", wf_test_sample_lib_dir(), "--converted",
                            xaml};
    size_t n = 6;
    if (strstr(xoml, "batch_loop"))
        args[n++] = "--no-isolate";
    if (cases) {
        args[n++] = "--cases";
        args[n++] = cases;
    } else {
        args[n++] = "--generate";
        args[n++] = "200";
    }
    if (keep) {
        args[n++] = "--keep";
        args[n++] = keep;
    }
    args[n] = NULL;
    return wf_test_run_cli(args, err);
}

/* The unmutated equivalents verify equivalent: a divergence below is the mutation's. */
START_TEST(test_verify_mutations_baseline_is_equivalent)
{
    const mutation *m = &mutations[_i == 0 ? 0 : MUTATION_COUNT - 1]; /* order, batch */
    char *err = NULL;
    ck_assert_msg(run_verify(m->xoml, m->xaml, NULL, NULL, &err) == 0, "%s: %s", m->xaml,
                  err ? err : "");
    wf_free(err);
}
END_TEST

START_TEST(test_verify_mutation_is_caught_with_a_shrunk_case)
{
    const mutation *m = &mutations[_i];
    size_t len;
    char *text = wf_test_read_file(m->xaml, &len);
    ck_assert_ptr_nonnull(text);
    m->apply(&text);
    const char *dir = wf_test_tmpdir();
    char xaml[512], keep[512], shrunk[700];
    snprintf(xaml, sizeof xaml, "%s", wf_test_write_file(dir, "mutant.xaml", text));
    wf_free(text);
    snprintf(keep, sizeof keep, "%s/keep", dir);
    const char *stem = strrchr(m->xoml, '/') + 1;
    snprintf(shrunk, sizeof shrunk, "%s/%.*s.converted.shrunk.json", keep, (int)(strlen(stem) - 5),
             stem);
    char *err = NULL;
    ck_assert_msg(run_verify(m->xoml, xaml, NULL, keep, &err) == 1, "%s not caught: %s", m->name,
                  err ? err : "");
    wf_free(err);
    struct stat st;
    ck_assert_msg(stat(shrunk, &st) == 0, "%s: no shrunk case %s", m->name, shrunk);
    /* the shrunk case is ready to run and still diverges */
    err = NULL;
    char keep2[600];
    snprintf(keep2, sizeof keep2, "%s/again", dir); /* its own shrunk case goes there */
    ck_assert_msg(run_verify(m->xoml, xaml, shrunk, keep2, &err) == 1, "%s: shrunk case: %s",
                  m->name, err ? err : "");
    wf_free(err);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Whole catches swapped: still equivalent under WF4's best-match rule (not a mutation). */
START_TEST(test_verify_whole_catch_reorder_is_equivalent)
{
    const mutation *m = &mutations[MUTATION_COUNT - 1];
    size_t len;
    char *text = wf_test_read_file(m->xaml, &len);
    ck_assert_ptr_nonnull(text);
    swap_whole_catches(&text);
    ck_assert(strstr(text, "s:Exception") < strstr(text, "\"NativeException\""));
    const char *dir = wf_test_tmpdir();
    char xaml[512];
    snprintf(xaml, sizeof xaml, "%s", wf_test_write_file(dir, "reordered.xaml", text));
    wf_free(text);
    char *err = NULL;
    ck_assert_msg(run_verify(m->xoml, xaml, NULL, NULL, &err) == 0, "%s", err ? err : "");
    wf_free(err);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* `verify --seed 1` with the default case count, isolated; --json's last line of stdout
 * into *json. The exit status. */
static int run_default(const char *dir, const char *xoml, const char *xaml, char **json)
{
    int code = wf_test_shell_cli(dir, 120,
                                 "verify '%s' --lib-path '%s' --converted '%s' --seed 1 "
                                 "--keep '%s' --json",
                                 xoml, wf_test_sample_lib_dir(), xaml, wf_test_path(dir, "keep"));
    size_t len;
    char *out = wf_test_read_file(wf_test_path(dir, "stdout"), &len);
    ck_assert_ptr_nonnull(out);
    *json = wf_strdup(wfbt_last_line(out));
    wf_free(out);
    return code;
}

/* A conversion wrong on one path only: the correct one is equivalent and its runs reach the
 * outcome of that path; the mutant diverges within the default cases, and its shrunk case
 * still diverges. */
START_TEST(test_verify_path_mutant_found_within_default_cases)
{
    const path_mutation *pm = &path_mutations[_i];
    const char *dir = wf_test_tmpdir();
    char *json = NULL;
    ck_assert_msg(run_default(dir, pm->m.xoml, pm->m.xaml, &json) == 0, "%s: baseline: %s",
                  pm->m.name, json);
    char unseen[300]; /* how --json lists an outcome no case reached */
    snprintf(unseen, sizeof unseen, "\"activity\": \"%s\", \"outcome\": \"%s\"", pm->activity,
             pm->outcome);
    ck_assert_msg(strstr(json, "\"uncovered\": [") && !strstr(json, unseen), "%s: %s: %s",
                  pm->m.name, unseen, json);
    if (strstr(pm->m.xoml, "state_path")) /* an Approved after the timer: no script has it */
        ck_assert_msg(strstr(json, "\"activity\": \"onDirectorApproved\", \"outcome\": \"won\""),
                      "%s", json);
    wf_free(json);
    size_t len;
    char *text = wf_test_read_file(pm->m.xaml, &len);
    ck_assert_ptr_nonnull(text);
    pm->m.apply(&text);
    char xaml[600];
    snprintf(xaml, sizeof xaml, "%s", wf_test_write_file(dir, "mutant.xaml", text));
    wf_free(text);
    ck_assert_msg(run_default(dir, pm->m.xoml, xaml, &json) == 1, "%s not caught: %s",
                  pm->m.name, json);
    ck_assert_msg(strstr(json, "\"status\": \"diverged\""), "%s", json);
    const char *shrunk = strstr(json, "\"shrunk\": \"");
    ck_assert_msg(shrunk != NULL, "%s", json);
    char path[600];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(shrunk + 11, "\""), shrunk + 11);
    wf_free(json);
    char *err = NULL;
    ck_assert_msg(run_verify(pm->m.xoml, xaml, path, NULL, &err) == 1, "%s: shrunk case: %s",
                  pm->m.name, err ? err : "");
    wf_free(err);
    wf_test_tmpdir_remove(dir);
}
END_TEST

Suite *verify_mutations_suite(void)
{
    Suite *s = suite_create("verify_mutations");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_loop_test(core, test_verify_mutations_baseline_is_equivalent, 0, 2);
    tcase_add_loop_test(core, test_verify_mutation_is_caught_with_a_shrunk_case, 0, MUTATION_COUNT);
    tcase_add_test(core, test_verify_whole_catch_reorder_is_equivalent);
    tcase_add_loop_test(core, test_verify_path_mutant_found_within_default_cases, 0,
                        PATH_MUTATION_COUNT);
    suite_add_tcase(s, core);
    return s;
}

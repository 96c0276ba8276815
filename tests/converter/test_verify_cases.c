/* test_verify_cases.c — every converter golden case and every legacy sample verifies
 * equivalent on 200 generated inputs (`wfbridge verify --generate 200`, seeded, so the same
 * cases every run, null inputs included): on inputs no fixed case tried, the conversion still
 * does what the legacy workflow does (docs/verify.md). --no-isolate: the cases are trusted
 * test fixtures, and a forked run per case made this suite several times slower. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../bridge/support_bridge.h"
#include "../wf_test_util.h"

/* rules_bitwise does not convert (on purpose); send_activity, workflow_services and
 * invoke_web_service call out (Send) and need the endpoints file beside their conversion,
 * which verify does not provide. */
static const char *const cases[] = {
    "sequence_code",
    "ifelse_chain",
    "rules_operators",
    "rules_exceptions",
    "rules_lookup_blanks",
    "while_code",
    "parallel_pick",
    "fault_handlers",
    "terminate",
    "needs_interop",
    "replicator_foreach",
    "scopes",
    "state_machine",
    "composite_type",
    "composite_direction",
    "compensate_explicit",
    "compensate_loop",
    "compensate_child_in_handler",
    "cancel_handlers",
    "nested_states",
    "name_not_identifier",
    "loop_template",
    "service_attributes",
    "class_defaults",
};

START_TEST(test_golden_case_verifies_equivalent_on_generated_inputs)
{
    char xoml[256], libs[1024];
    snprintf(xoml, sizeof xoml, "tests/converter/cases/%s/%s.xoml", cases[_i], cases[_i]);
    snprintf(libs, sizeof libs, "%s:%s", wf_test_lib_dir(), wf_test_sample_lib_dir());
    const char *dir = wfbt_tmpdir();
    char keep[512];
    snprintf(keep, sizeof keep, "%s", wfbt_tmp_path(dir, "keep"));
    const char *args[] = {"verify", xoml,   "--lib-path", libs,  "--generate",   "200",
                          "--seed", "11",   "--keep",     keep,  "--no-isolate", "--json",
                          NULL};
    wfbt_out r = wfbt_run(args);
    ck_assert_msg(r.rc == 0, "%s: exit %d\n%s%s", xoml, r.rc, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(wfbt_last_line(r.out), "\"status\": \"equivalent\""));
    ck_assert_ptr_nonnull(strstr(wfbt_last_line(r.out), "\"cases\": 200"));
    wfbt_out_free(&r);
    wfbt_tmp_remove(dir);
}
END_TEST

/* The legacy samples, as one folder: each file verifies equivalent on 200 generated inputs. */
START_TEST(test_samples_verify_equivalent_on_generated_inputs)
{
    const char *args[] = {"verify",       "samples/legacy", "--lib-path", wf_test_sample_lib_dir(),
                          "--generate",   "200",            "--seed",     "11",
                          "--no-isolate", "--json",         NULL};
    wfbt_out r = wfbt_run(args);
    ck_assert_msg(r.rc == 0, "exit %d\n%s%s", r.rc, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(wfbt_last_line(r.out), "\"status\": \"equivalent\""));
    ck_assert_msg(strstr(r.err, "4 files: 4 equivalent, 0 diverged, 0 errors; 800 cases"), "%s",
                  r.err);
    wfbt_out_free(&r);
}
END_TEST

Suite *converter_verify_suite(void)
{
    Suite *s = suite_create("converter_verify");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_loop_test(core, test_golden_case_verifies_equivalent_on_generated_inputs, 0,
                        (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(core, test_samples_verify_equivalent_on_generated_inputs);
    suite_add_tcase(s, core);
    return s;
}

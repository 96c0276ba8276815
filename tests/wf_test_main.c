/* wf_test_main.c — the Check runner: every `Suite *NAME_suite(void)` found under tests/ is
 * listed in a generated file and added here, so one run ends with one Check summary line.
 * CK_RUN_SUITE / CK_RUN_CASE (Check's own variables) select a suite or case. */
#include <check.h>
#include <stdlib.h>

#define WF_SUITE(fn) Suite *fn(void);
#include WF_SUITES_INC
#undef WF_SUITE

int main(void)
{
    SRunner *runner = srunner_create(NULL);
#define WF_SUITE(fn) srunner_add_suite(runner, fn());
#include WF_SUITES_INC
#undef WF_SUITE
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

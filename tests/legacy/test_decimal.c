/* test_decimal.c — Decimal in the legacy runtime is System.Decimal as WF3 computes it
 * (docs/semantics.md §4 "Decimal"): an IfElse branch on 59.97m / 7 goes the way WF3 goes, a
 * Policy keeps the digits of the calculation, and a .rules Decimal literal beyond the range is
 * a load error at its line:col. */
#include <check.h>
#include <string.h>

#include "../../common/wf_value.h"
#include "../../legacy/wfl_exec.h"
#include "../../legacy/wfl_rules.h"
#include "../wf_test_util.h"
#include "test_exec.h"

static const char *amount_text(xt_env *e)
{
    wf_value v = wf_null();
    ck_assert_int_eq(wfl_exec_output(e->ex, "Amount", &v, NULL), WF_OK);
    ck_assert_ptr_eq(v.type, &wf_type_decimal);
    wf_decimal_format(v.u.dec, e->text, sizeof e->text);
    return e->text;
}

/* Run the branch fixture with Amount set to `amount` until it closes. */
static void run_branch(xt_env *e, const char *amount)
{
    xt_load(e, "decimal_branch.xoml", "decimal.rules");
    xt_start(e);
    xt_set(e, "Amount", amount);
    ck_assert_int_eq(xt_run(e), WFL_EXEC_CLOSED);
}

/* WF3: 59.97m / 7 is 8.567142857142857142857142857 > 8.5671m, so the first branch runs; with
 * four places (8.5671) the else branch ran. */
START_TEST(test_branch_on_division_goes_the_wf3_way)
{
    xt_env e;
    run_branch(&e, "59.97");
    ck_assert_str_eq(xt_str(&e, "Log"), "A");
    /* the Policy: Amount = Amount / 7 * 1.000001m, rounded once to what fits in 96 bits */
    ck_assert_str_eq(amount_text(&e), "8.567151424285714285714285714");
    xt_free(&e);
}
END_TEST

START_TEST(test_exact_value_takes_the_else_branch)
{
    xt_env e;
    run_branch(&e, "59.9697");
    ck_assert_str_eq(xt_str(&e, "Log"), "B"); /* 59.9697 / 7 is exactly 8.5671 */
    ck_assert_str_eq(amount_text(&e), "8.5671085671");
    xt_free(&e);
}
END_TEST

START_TEST(test_literal_beyond_range_is_a_load_error)
{
    const char *path = "tests/legacy/data/bad/decimal_out_of_range.rules";
    wf_types *types = wf_types_create();
    wfl_rules *rules = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_rules_load(path, types, &rules, NULL, &err), WF_E_SYNTAX);
    ck_assert_ptr_null(rules);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 7, 7, "bad Decimal value '79228162514264337593543950336'");
    ck_assert_str_eq(err.file, path);
    wf_types_destroy(types);
}
END_TEST

Suite *legacy_decimal_suite(void)
{
    Suite *s = suite_create("legacy_decimal");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_branch_on_division_goes_the_wf3_way);
    tcase_add_test(core, test_exact_value_takes_the_else_branch);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_literal_beyond_range_is_a_load_error);
    suite_add_tcase(s, bad);
    return s;
}

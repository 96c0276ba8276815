/* test_error.c — status table, wf_error (first error wins, prefix, CLI format) and
 * diagnostic lists (sorting, first error, out-of-memory dropping). */
#include <check.h>
#include <string.h>

#include "../../common/wf_error.h"
#include "../../common/wf_mem.h"
#include "../wf_test_util.h"

START_TEST(test_status_table_names_messages_exit_codes)
{
    ck_assert_str_eq(wf_status_name(WF_OK), "ok");
    ck_assert_str_eq(wf_status_name(WF_E_XML), "xml");
    ck_assert_str_eq(wf_status_message(WF_E_NOMEM), "out of memory");
    ck_assert_int_eq(wf_status_exit_code(WF_OK), 0);
    ck_assert_int_eq(wf_status_exit_code(WF_E_FAULT), 1);
    ck_assert_int_eq(wf_status_exit_code(WF_E_SYNTAX), 2);
    ck_assert_str_eq(wf_status_name((wf_status)999), "unknown");
}
END_TEST

START_TEST(test_error_first_error_wins)
{
    wf_error err = WF_ERROR_INIT;
    wf_loc at = {"a.xaml", 3, 7};
    ck_assert_int_eq(wf_error_set(&err, WF_E_TYPE, &at, "cannot assign %s", "x"), WF_E_TYPE);
    ck_assert_int_eq(wf_error_set(&err, WF_E_NAME, NULL, "later"), WF_E_NAME);
    ck_assert_int_eq(err.code, WF_E_TYPE);
    ck_assert_str_eq(err.message, "cannot assign x");
    ck_assert_str_eq(err.file, "a.xaml");
    ck_assert_uint_eq(err.line, 3);
    ck_assert_uint_eq(err.col, 7);
    ck_assert_int_eq(wf_error_set(NULL, WF_E_IO, NULL, "ignored"), WF_E_IO);
    wf_error_clear(&err);
    ck_assert_int_eq(err.code, WF_OK);
    ck_assert_str_eq(err.message, "");
}
END_TEST

START_TEST(test_error_prefix_prepends_context)
{
    wf_error err = WF_ERROR_INIT;
    wf_error_prefix(&err, "ignored when ok: ");
    ck_assert_str_eq(err.message, "");
    wf_error_set(&err, WF_E_NAME, NULL, "unknown name 'taxx'");
    wf_error_prefix(&err, "in %s '%s': ", "Sequence", "main");
    ck_assert_str_eq(err.message, "in Sequence 'main': unknown name 'taxx'");
}
END_TEST

START_TEST(test_error_format_leaves_out_unknown_parts)
{
    char buf[700];
    wf_error err = WF_ERROR_INIT;
    wf_loc full = {"f.xoml", 12, 5};
    wf_error_set(&err, WF_E_XML, &full, "bad");
    ck_assert_str_eq(wf_error_format(&err, "error", buf, sizeof buf), "f.xoml:12:5: error: bad");
    err.col = 0;
    ck_assert_str_eq(wf_error_format(&err, "error", buf, sizeof buf), "f.xoml:12: error: bad");
    err.line = 0;
    ck_assert_str_eq(wf_error_format(&err, "warning", buf, sizeof buf), "f.xoml: warning: bad");
    err.file[0] = '\0';
    ck_assert_str_eq(wf_error_format(&err, NULL, buf, sizeof buf), "error: bad");
}
END_TEST

START_TEST(test_error_long_message_truncates)
{
    char big[2000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    wf_error err = WF_ERROR_INIT;
    wf_error_set(&err, WF_E_SYNTAX, NULL, "%s", big);
    ck_assert_uint_eq(strlen(err.message), sizeof err.message - 1);
    wf_error_prefix(&err, "ctx: ");
    ck_assert_uint_eq(strlen(err.message), sizeof err.message - 1);
    ck_assert(strncmp(err.message, "ctx: aaa", 8) == 0);
}
END_TEST

START_TEST(test_diags_sort_and_first_error)
{
    wf_diags *d = wf_diags_create();
    ck_assert_ptr_nonnull(d);
    wf_loc l20 = {"x.xaml", 20, 1}, l5 = {"x.xaml", 5, 9}, l5b = {"x.xaml", 5, 2};
    wf_diags_add(d, WF_SEV_ERROR, WF_E_NAME, &l20, "late %d", 20);
    wf_diags_add(d, WF_SEV_WARNING, WF_E_SCHEMA, &l5b, "warn");
    wf_diags_add(d, WF_SEV_ERROR, WF_E_TYPE, &l5, "early");
    ck_assert_uint_eq(wf_diags_count(d), 3);
    ck_assert_uint_eq(wf_diags_error_count(d), 2);
    wf_error first = WF_ERROR_INIT;
    ck_assert_int_eq(wf_diags_first_error(d, &first), WF_E_TYPE);
    ck_assert_str_eq(first.message, "early");
    wf_diags_sort(d);
    ck_assert_str_eq(wf_diags_get(d, 0)->error.message, "warn");
    ck_assert_str_eq(wf_diags_get(d, 1)->error.message, "early");
    ck_assert_str_eq(wf_diags_get(d, 2)->error.message, "late 20");
    ck_assert_ptr_null(wf_diags_get(d, 3));
    wf_diags_destroy(d);
}
END_TEST

START_TEST(test_diags_add_error_copies)
{
    wf_diags *d = wf_diags_create();
    wf_error err = WF_ERROR_INIT;
    wf_error_set(&err, WF_E_IO, NULL, "cannot read");
    wf_diags_add_error(d, WF_SEV_ERROR, &err);
    ck_assert_int_eq(wf_diags_get(d, 0)->error.code, WF_E_IO);
    ck_assert_int_eq(wf_diags_first_error(NULL, &err), WF_OK);
    wf_diags_destroy(d);
}
END_TEST

START_TEST(test_diags_drop_on_nomem)
{
    wf_diags *d = wf_diags_create();
    wf_alloc_fail_after(1);
    wf_diags_add(d, WF_SEV_ERROR, WF_E_NAME, NULL, "lost");
    wf_alloc_fail_after(0);
    ck_assert_uint_eq(wf_diags_count(d), 0);
    wf_diags_add(d, WF_SEV_ERROR, WF_E_NAME, NULL, "kept");
    ck_assert_uint_eq(wf_diags_count(d), 1);
    wf_diags_destroy(d);
}
END_TEST

Suite *common_error_suite(void)
{
    Suite *s = suite_create("common_error");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_status_table_names_messages_exit_codes);
    tcase_add_test(core, test_error_first_error_wins);
    tcase_add_test(core, test_error_prefix_prepends_context);
    tcase_add_test(core, test_error_format_leaves_out_unknown_parts);
    tcase_add_test(core, test_diags_sort_and_first_error);
    tcase_add_test(core, test_diags_add_error_copies);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_error_long_message_truncates);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_diags_drop_on_nomem);
    suite_add_tcase(s, nomem);
    return s;
}

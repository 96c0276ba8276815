/* test_file.c — common/wf_file.c: a whole file appended to a buffer, the size cap holding
 * while reading (/dev/zero and a FIFO whose writer never stops end at the cap instead of
 * growing memory), errors naming the file, and out-of-memory behaviour. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_file.h"
#include "../../common/wf_mem.h"
#include "../wf_test_util.h"

/* ---- core --------------------------------------------------------------------------------- */
START_TEST(test_file_read_appends_the_whole_file)
{
    const char *dir = wf_test_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s", wf_test_write_file(dir, "a.txt", "hello\nworld"));
    wf_buf buf;
    wf_buf_init(&buf);
    ck_assert(wf_buf_adds(&buf, ">"));
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_file_read(path, 0, &buf, &err), WF_OK);
    ck_assert_str_eq(buf.data, ">hello\nworld");
    ck_assert_uint_eq(buf.len, 12);
    wf_buf_fini(&buf);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* ---- bad_input ---------------------------------------------------------------------------- */
START_TEST(test_file_missing_is_an_io_error_naming_the_file)
{
    wf_buf buf;
    wf_buf_init(&buf);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_file_read("/nonexistent/x.xaml", 0, &buf, &err), WF_E_IO);
    ck_assert_str_eq(err.file, "/nonexistent/x.xaml");
    WF_ASSERT_ERROR(err, WF_E_IO, 0, 0, "cannot open");
    ck_assert_uint_eq(buf.len, 0);
    wf_buf_fini(&buf);
}
END_TEST

static void expect_capped(const char *path, size_t cap)
{
    wf_buf buf;
    wf_buf_init(&buf);
    ck_assert(wf_buf_adds(&buf, "kept"));
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_file_read(path, cap, &buf, &err), WF_E_LIMIT);
    ck_assert_str_eq(err.file, path);
    char want[64];
    snprintf(want, sizeof want, "larger than %zu bytes", cap);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 0, 0, want);
    ck_assert_str_eq(buf.data, "kept"); /* nothing of the file is left behind */
    ck_assert(!buf.oom);
    wf_buf_fini(&buf);
}

START_TEST(test_file_dev_zero_stops_at_the_cap)
{
    expect_capped("/dev/zero", 1u << 20);
}
END_TEST

START_TEST(test_file_endless_fifo_stops_at_the_cap)
{
    const char *dir = wf_test_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/endless.xaml", dir);
    int writer = wf_test_fifo_writer(path);
    expect_capped(path, 1u << 20);
    wf_test_fifo_writer_end(writer);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* ---- limits ------------------------------------------------------------------------------- */
START_TEST(test_file_of_exactly_the_cap_is_read_one_more_byte_is_not)
{
    const char *dir = wf_test_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s", wf_test_write_file(dir, "ten.txt", "0123456789"));
    wf_buf buf;
    wf_buf_init(&buf);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_file_read(path, 10, &buf, &err), WF_OK);
    ck_assert_uint_eq(buf.len, 10);
    wf_buf_reset(&buf);
    ck_assert_int_eq(wf_file_read(path, 9, &buf, &err), WF_E_LIMIT);
    ck_assert_uint_eq(buf.len, 0);
    wf_buf_fini(&buf);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* ---- nomem -------------------------------------------------------------------------------- */
static wf_status read_op(void *ud)
{
    wf_buf buf;
    wf_buf_init(&buf);
    wf_status st = wf_file_read(ud, 0, &buf, NULL);
    if (st == WF_OK)
        ck_assert_uint_eq(buf.len, 100000);
    else
        ck_assert_uint_eq(buf.len, 0);
    wf_buf_fini(&buf);
    return st;
}

START_TEST(test_file_read_fails_cleanly_without_memory)
{
    const char *dir = wf_test_tmpdir();
    static char text[100001];
    memset(text, 'a', sizeof text - 1);
    char path[1024];
    snprintf(path, sizeof path, "%s", wf_test_write_file(dir, "big.txt", text));
    ck_assert_uint_gt(wf_test_nomem_loop(read_op, path, 100), 0);
    wf_test_tmpdir_remove(dir);
}
END_TEST

Suite *common_file_suite(void)
{
    Suite *s = suite_create("common_file");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_file_read_appends_the_whole_file);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_file_missing_is_an_io_error_naming_the_file);
    tcase_add_test(bad, test_file_dev_zero_stops_at_the_cap);
    tcase_add_test(bad, test_file_endless_fifo_stops_at_the_cap);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_file_of_exactly_the_cap_is_read_one_more_byte_is_not);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_file_read_fails_cleanly_without_memory);
    suite_add_tcase(s, nomem);
    return s;
}

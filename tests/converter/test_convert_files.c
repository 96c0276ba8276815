/* test_convert_files.c — what `wfbridge convert` (bridge/wfb_convert.c, converter/wfc_output.c)
 * writes and reads where a careless or hostile path points: standard output and input, links
 * and devices as outputs, outputs that name an input or each other, a directory named by a
 * trailing '/', all-or-nothing files, and directory trees with link loops and FIFOs. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../wf_test_util.h"
#include "support_converter.h"

#define CASE    "tests/converter/cases/parallel_pick/parallel_pick.xoml"
#define INTEROP "tests/converter/cases/needs_interop/needs_interop.xoml"

static char tmp[512];

static void setup(void)
{
    snprintf(tmp, sizeof tmp, "%s", wf_test_tmpdir());
}

static void teardown(void)
{
    wf_test_tmpdir_remove(tmp);
}

/* Run `wfbridge convert ARGS` (a shell fragment: redirections allowed) with stdout and stderr
 * in tmp/stdout and tmp/stderr, at most 60 s; returns the exit code. */
static int convert_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int convert_cmd(const char *fmt, ...)
{
    char args[8192], cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd,
             "timeout 60 %s/bin/wfbridge convert --lib-path %s %s >%s/stdout 2>%s/stderr",
             wf_test_build_dir(), wfc_test_lib_dirs(), args, tmp, tmp);
    int rc = system(cmd);
    ck_assert(WIFEXITED(rc));
    ck_assert_msg(WEXITSTATUS(rc) != 124, "convert %s timed out", args);
    return WEXITSTATUS(rc);
}

static const char *at(const char *name)
{
    static char path[4][2048];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", tmp, name);
    return path[k];
}

static bool exists(const char *name)
{
    struct stat st;
    return lstat(at(name), &st) == 0;
}

static char *slurp(const char *name)
{
    char *text = wf_test_read_file(at(name), NULL);
    ck_assert_msg(text != NULL, "%s missing", name);
    return text;
}

static void assert_contains(const char *name, const char *needle)
{
    char *text = slurp(name);
    ck_assert_msg(strstr(text, needle) != NULL, "'%s' not in %s:\n%s", needle, name, text);
    wf_free(text);
}

/* The names in tmp, one per line, sorted, without stdout and stderr. */
static char *listing(void)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s && find . | grep -v -e '^\\./std' | sort >../listing-%d",
             tmp, (int)getpid());
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/../listing-%d", tmp, (int)getpid());
    char *text = wf_test_read_file(cmd, NULL);
    unlink(cmd);
    ck_assert_ptr_nonnull(text);
    return text;
}

/* ---- core ----------------------------------------------------------------------------- */
START_TEST(test_dash_output_is_stdout_and_dash_input_is_stdin)
{
    char *before = listing();
    ck_assert_int_eq(convert_cmd("%s -o -", CASE), 0);
    assert_contains("stdout", "<Pick DisplayName=\"wait\">");
    char *after = listing();
    ck_assert_str_eq(after, before); /* no file, no "-" file */
    wf_free(after);
    wf_free(before);
    ck_assert_int_eq(convert_cmd("- -o %s < %s", at("in.xaml"), CASE), 0);
    assert_contains("in.xaml", "<Pick DisplayName=\"wait\">");
    assert_contains("stderr", "<stdin>:2:2: warning: review:");
    /* input '-' without -o: standard output */
    ck_assert_int_eq(convert_cmd("- < %s", CASE), 0);
    assert_contains("stdout", "<Pick DisplayName=\"wait\">");
}
END_TEST

/* A trailing '/' names a directory, created when missing, with plain names in it. */
START_TEST(test_trailing_slash_is_a_directory)
{
    ck_assert_int_eq(convert_cmd("%s -o %s/", INTEROP, at("new")), 0);
    ck_assert(exists("new/needs_interop.xaml"));
    ck_assert(exists("new/needs_interop.group.xoml"));
    ck_assert(exists("new/needs_interop.group.activities.xml"));
    char *list = listing();
    ck_assert_msg(!strstr(list, "/."), "hidden files written:\n%s", list);
    wf_free(list);
}
END_TEST

/* Generated Interop files with -o -: refused without --sidecars, written there with it. */
START_TEST(test_stream_output_needs_a_sidecar_directory)
{
    ck_assert_int_eq(convert_cmd("%s -o -", INTEROP), 2);
    assert_contains("stderr", "give --sidecars DIR");
    char *out = slurp("stdout");
    ck_assert_str_eq(out, "");
    wf_free(out);
    ck_assert_int_eq(convert_cmd("%s -o - --sidecars %s", INTEROP, at("side")), 0);
    assert_contains("stdout", "<Interop");
    ck_assert(exists("side/needs_interop.group.xoml"));
}
END_TEST

/* A link to a regular file: the file is replaced, the link stays a link. */
START_TEST(test_link_to_a_file_keeps_the_link)
{
    wf_test_write_file(tmp, "real.xaml", "old");
    ck_assert_int_eq(symlink("real.xaml", at("link.xaml")), 0);
    ck_assert_int_eq(convert_cmd("%s -o %s", CASE, at("link.xaml")), 0);
    struct stat st;
    ck_assert_int_eq(lstat(at("link.xaml"), &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    assert_contains("real.xaml", "<Pick DisplayName=\"wait\">");
}
END_TEST

/* ---- bad_input ------------------------------------------------------------------------ */
/* A link to a device (as /dev/stdout is) is written through, never renamed over; sidecars
 * beside a device are refused. */
START_TEST(test_device_output_is_written_in_place)
{
    ck_assert_int_eq(symlink("/dev/null", at("null")), 0);
    ck_assert_int_eq(convert_cmd("%s -o %s", CASE, at("null")), 0);
    struct stat st;
    ck_assert_int_eq(lstat(at("null"), &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(stat("/dev/null", &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
    ck_assert_int_eq(convert_cmd("%s -o %s", INTEROP, at("null")), 2);
    assert_contains("stderr", "give --sidecars DIR");
    char *list = listing();
    ck_assert_str_eq(list, ".\n./null\n");
    wf_free(list);
}
END_TEST

START_TEST(test_fifo_output_without_reader_is_refused)
{
    ck_assert_int_eq(mkfifo(at("fifo.xaml"), 0600), 0);
    ck_assert_int_eq(convert_cmd("%s -o %s", CASE, at("fifo.xaml")), 2);
    assert_contains("stderr", "cannot write");
    struct stat st;
    ck_assert_int_eq(lstat(at("fifo.xaml"), &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
}
END_TEST

/* Every output is checked against the inputs and the other outputs by device and inode. */
START_TEST(test_reports_never_overwrite_an_input)
{
    char *text = wf_test_read_file(CASE, NULL);
    wf_test_write_file(tmp, "a.xoml", text);
    wf_test_write_file(tmp, "a.rules", "<RuleDefinitions/>");
    ck_assert_int_eq(link(at("a.xoml"), at("hard.xoml")), 0);
    mkdir(at("d"), 0777);
    char spelled[2048];
    snprintf(spelled, sizeof spelled, "%s/d/../a.xoml", tmp);
    const char *opts[] = {"--report", "--csv", "--md", "--html"};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_int_eq(convert_cmd("%s %s %s", at("a.xoml"), opts[i], spelled), 2);
        assert_contains("stderr", "is the input file");
        ck_assert_int_eq(convert_cmd("%s %s %s", at("a.xoml"), opts[i], at("hard.xoml")), 2);
    }
    ck_assert_int_eq(convert_cmd("%s --csv %s", at("a.xoml"), at("a.rules")), 2);
    assert_contains("stderr", "--csv");
    ck_assert_int_eq(convert_cmd("%s -o %s --html %s", at("a.xoml"), at("x.xaml"),
                                 at("d/../x.xaml")),
                     2);
    assert_contains("stderr", "-o and --html both name");
    ck_assert(!exists("x.xaml"));
    char *after = slurp("a.xoml");
    ck_assert_str_eq(after, text);
    wf_free(after);
    after = slurp("a.rules");
    ck_assert_str_eq(after, "<RuleDefinitions/>");
    wf_free(after);
    wf_free(text);
}
END_TEST

/* A file whose last generated file cannot be written leaves no output at all. */
START_TEST(test_failed_file_leaves_nothing)
{
    ck_assert_int_eq(mkdir(at("n.group.xoml"), 0777), 0);
    ck_assert_int_eq(convert_cmd("%s -o %s", INTEROP, at("n.xaml")), 2);
    assert_contains("stderr", "n.group.xoml");
    char *list = listing();
    ck_assert_str_eq(list, ".\n./n.group.xoml\n");
    wf_free(list);
}
END_TEST

START_TEST(test_bad_stdin_names_stdin)
{
    ck_assert_int_eq(convert_cmd("- -o %s < /dev/null", at("x.xaml")), 2);
    assert_contains("stderr", "<stdin>:1:1: error:");
    ck_assert(!exists("x.xaml"));
    ck_assert_int_eq(convert_cmd("%s -o - --json", CASE), 2);
    assert_contains("stderr", "both write standard output");
}
END_TEST

/* Link loops, a link out of the tree and a FIFO: skipped and reported; with
 * --follow-symlinks each directory is entered once; the FIFO is never opened. */
START_TEST(test_tree_walk_skips_links_loops_and_fifos)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/in/sub %s/outside && cp %s %s/in/sub/a.xoml && cp %s "
             "%s/outside/b.xoml && ln -s . %s/in/sub/loop && ln -s .. %s/in/sub/up && "
             "ln -s ../outside %s/in/out && mkfifo %s/in/f.xoml",
             tmp, tmp, CASE, tmp, CASE, tmp, tmp, tmp, tmp, tmp);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(convert_cmd("%s -o %s", at("in"), at("o1")), 0);
    assert_contains("stderr", "converted 1, partial 0, failed 0");
    assert_contains("stderr", "in/sub/loop: warning: a symbolic link");
    assert_contains("stderr", "in/out: warning: a symbolic link");
    assert_contains("stderr", "in/f.xoml: warning: not a regular file, skipped");
    ck_assert(exists("o1/sub/a.xaml"));
    ck_assert(!exists("o1/out"));
    ck_assert_int_eq(convert_cmd("%s -o %s --follow-symlinks", at("in"), at("o2")), 0);
    assert_contains("stderr", "converted 2, partial 0, failed 0");
    assert_contains("stderr", "a directory reached before (a link loop)");
    ck_assert(exists("o2/sub/a.xaml"));
    ck_assert(exists("o2/out/b.xaml"));
}
END_TEST

Suite *convert_files_suite(void)
{
    Suite *s = suite_create("convert_files");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, test_dash_output_is_stdout_and_dash_input_is_stdin);
    tcase_add_test(core, test_trailing_slash_is_a_directory);
    tcase_add_test(core, test_stream_output_needs_a_sidecar_directory);
    tcase_add_test(core, test_link_to_a_file_keeps_the_link);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 180);
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, test_device_output_is_written_in_place);
    tcase_add_test(bad, test_fifo_output_without_reader_is_refused);
    tcase_add_test(bad, test_reports_never_overwrite_an_input);
    tcase_add_test(bad, test_failed_file_leaves_nothing);
    tcase_add_test(bad, test_bad_stdin_names_stdin);
    tcase_add_test(bad, test_tree_walk_skips_links_loops_and_fifos);
    suite_add_tcase(s, bad);
    return s;
}

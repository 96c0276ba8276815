/* test_convert_files.c — what `wfbridge convert` (bridge/wfb_convert.c, converter/wfc_output.c)
 * writes and reads where a careless or hostile path points: standard output and input, links
 * and devices as outputs, outputs that name an input or each other, a directory named by a
 * trailing '/', all-or-nothing files, and directory trees with link loops and FIFOs. */
#include <check.h>
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
#define convert_cmd(fmt, ...)                                                                     \
    checked(wf_test_shell_cli(tmp, 60, "convert --lib-path %s " fmt, wfc_test_lib_dirs(),         \
                              ##__VA_ARGS__))

static int checked(int rc)
{
    ck_assert_msg(rc != 124, "convert timed out");
    ck_assert_msg(rc < 128, "convert killed by signal %d", rc - 128);
    return rc;
}

static const char *at(const char *name)
{
    return wf_test_path(tmp, name);
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

/* -o /dev/stdout writes through the process's descriptor, also when the shell sent it to a
 * regular file; /dev/stdout stays what it was; sidecars are refused as with -o -. */
START_TEST(test_dev_stdout_is_standard_output)
{
    struct stat before, after;
    ck_assert_int_eq(lstat("/dev/stdout", &before), 0);
    ck_assert_int_eq(convert_cmd("%s -o /dev/stdout", CASE), 0);
    assert_contains("stdout", "<Pick DisplayName=\"wait\">");
    ck_assert_int_eq(lstat("/dev/stdout", &after), 0);
    ck_assert_int_eq((int)(after.st_mode & S_IFMT), (int)(before.st_mode & S_IFMT));
    ck_assert_int_eq(convert_cmd("%s -o /dev/stdout", INTEROP), 2);
    assert_contains("stderr", "give --sidecars DIR");
    ck_assert_int_eq(convert_cmd("%s -o /dev/stdout --json", CASE), 2);
    assert_contains("stderr", "both write standard output");
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

/* Messages in source order; a warning repeated in 5 files is printed once, then counted. */
START_TEST(test_warnings_in_source_order_and_grouped)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/in && for i in 1 2 3 4 5; do cp %s %s/in/p$i.xoml; done", tmp, CASE,
             tmp);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(convert_cmd("%s -o %s", at("in"), at("out")), 0);
    char *err = slurp("stderr");
    const char *review = strstr(err, "p1.xoml:2:2: warning: review:");
    const char *first = strstr(err, "p1.xoml:14:6: warning:");
    ck_assert_msg(review && first && review < first, "%s", err);
    const char *bind = "ParameterName 'Value' binds a parameter";
    size_t count = 0;
    for (const char *p = strstr(err, bind); p; p = strstr(p + 1, bind))
        count++;
    ck_assert_uint_eq(count, 2); /* p1's warning and the summary line */
    ck_assert_ptr_nonnull(strstr(err, "wfbridge convert: warning: and 4 more like this: "
                                      "ParameterName 'Value' binds"));
    ck_assert_ptr_nonnull(strstr(err, "converted 5, partial 0, failed 0"));
    wf_free(err);
}
END_TEST

/* On a terminal (a pty from util-linux `script`), the progress line is cleared before a
 * message, never glued to it: "[1/3] a.xoml" is followed by "\r\033[K". */
START_TEST(test_progress_line_is_cleared_before_messages)
{
    if (system("command -v script >/dev/null 2>&1") != 0) {
        fprintf(stderr, "test_progress_line_is_cleared_before_messages: no `script`, skipped\n");
        return;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/in && for i in 1 2 3; do cp %s %s/in/p$i.xoml; done",
             tmp, CASE, tmp);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "script -qec \"%s/bin/wfbridge convert %s -o %s --lib-path %s\" %s >/dev/null",
             wf_test_build_dir(), at("in"), at("out"), wfc_test_lib_dirs(), at("tty.txt"));
    ck_assert_int_eq(system(cmd), 0);
    char *tty = slurp("tty.txt");
    size_t bars = 0;
    for (const char *p = strstr(tty, "/3] "); p; p = strstr(p + 1, "/3] ")) {
        const char *end = strstr(p, ".xoml");
        ck_assert_ptr_nonnull(end);
        ck_assert_msg(strncmp(end + 5, "\r\033[K", 4) == 0, "glued: %.80s", p);
        bars++;
    }
    ck_assert_uint_eq(bars, 3);
    ck_assert_ptr_nonnull(strstr(tty, "p1.xoml\r\033[K"));
    wf_free(tty);
}
END_TEST

/* Positions name the file they are in: the summary never prints file:0:0, and an error of
 * the converted XAML is located in the XAML, not in the .xoml. */
START_TEST(test_positions_name_their_file)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/in %s/out/a.xaml && cp %s %s/in/a.xoml && cp "
             "tests/converter/cases/needs_interop/needs_interop.group.xoml %s/in/g.xoml",
             tmp, tmp, CASE, tmp, tmp);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(convert_cmd("%s -o %s", at("in"), at("out")), 1);
    char *err = slurp("stderr");
    ck_assert_msg(!strstr(err, ":0:0:"), "%s", err);
    ck_assert_msg(strstr(err, "  failed: ") && strstr(err, "in/a.xoml: cannot write"), "%s", err);
    ck_assert_msg(!strstr(err, "g.xoml:21:"), "%s", err);
    wf_free(err);
}
END_TEST

/* A generated Interop composite converts again: its root declares the wfbh and wfbx prefixes
 * the sidecar of the sidecar declares too, once; a source that binds wfbh to another
 * namespace gets another prefix. */
START_TEST(test_generated_composite_converts_again)
{
    ck_assert_int_eq(convert_cmd("%s -o %s", INTEROP, at("n.xaml")), 0);
    ck_assert_int_eq(convert_cmd("%s -o %s", at("n.group.xoml"), at("g.xaml")), 0);
    char *side = slurp("g.group.xoml");
    char *second = strstr(side, "xmlns:wfbh=");
    ck_assert_ptr_nonnull(second);
    ck_assert_ptr_null(strstr(second + 1, "xmlns:wfbh="));
    wf_free(side);
    /* wfbh bound to another namespace by the source's root: wfbh1 on the generated root */
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "sed '1s|<SequentialWorkflowActivity |<SequentialWorkflowActivity "
             "xmlns:wfbh=\"urn:other\" |' %s > %s",
             INTEROP, at("h.xoml"));
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(convert_cmd("%s -o %s", at("h.xoml"), at("h.xaml")), 0);
    assert_contains("h.group.xoml", "<wfbh1:SequentialWorkflowActivity xmlns:wfbh1=");
    assert_contains("h.group.xoml", "</wfbh1:SequentialWorkflowActivity>");
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
    tcase_add_test(core, test_warnings_in_source_order_and_grouped);
    tcase_add_test(core, test_progress_line_is_cleared_before_messages);
    tcase_add_test(core, test_generated_composite_converts_again);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 180);
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, test_device_output_is_written_in_place);
    tcase_add_test(bad, test_dev_stdout_is_standard_output);
    tcase_add_test(bad, test_fifo_output_without_reader_is_refused);
    tcase_add_test(bad, test_reports_never_overwrite_an_input);
    tcase_add_test(bad, test_failed_file_leaves_nothing);
    tcase_add_test(bad, test_bad_stdin_names_stdin);
    tcase_add_test(bad, test_tree_walk_skips_links_loops_and_fifos);
    tcase_add_test(bad, test_positions_name_their_file);
    suite_add_tcase(s, bad);
    return s;
}

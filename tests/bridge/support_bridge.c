/* support_bridge.c — runs the wfbridge program for the CLI tests and captures what it printed
 * (see support_bridge.h). */
#include "support_bridge.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../wf_test_util.h"

static const char *tmp_root(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

const char *wfbt_tmpdir(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/wfbt.XXXXXX", tmp_root());
    ck_assert_ptr_nonnull(mkdtemp(path));
    return path;
}

const char *wfbt_tmp_path(const char *dir, const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

void wfbt_tmp_remove(const char *dir)
{
    wf_test_tmpdir_remove(dir);
}

const char *wfbt_data(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "tests/bridge/data/%s", name);
    return path;
}

const char *wfbt_sample(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "samples/%s", name);
    return path;
}

const char *wfbt_sample_libs(void)
{
    return wf_test_sample_lib_dir();
}

const char *wfbt_test_libs(void)
{
    return wf_test_lib_dir();
}

static char *slurp(const char *path)
{
    size_t len = 0;
    char *s = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* The child: stdout/stderr redirected, then exec. Never returns. */
static void child(int out_fd, int err_fd, const char *exe, const char *const *args)
{
    int in = open("/dev/null", O_RDONLY);
    if (in < 0 || out_fd < 0 || err_fd < 0)
        _exit(126);
    dup2(in, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    const char *argv[32] = {exe};
    for (size_t i = 0; args[i] && i < 30; i++)
        argv[i + 1] = args[i];
    execv(exe, (char *const *)argv);
    _exit(127);
}

wfbt_out wfbt_run_to(wfbt_stdout where, const char *const *args)
{
    const char *dir = wfbt_tmpdir();
    char dir_copy[512], out_path[1024], err_path[1024], exe[512];
    snprintf(dir_copy, sizeof dir_copy, "%s", dir);
    snprintf(out_path, sizeof out_path, "%s/stdout", dir_copy);
    snprintf(err_path, sizeof err_path, "%s/stderr", dir_copy);
    snprintf(exe, sizeof exe, "%s/bin/wfbridge", wf_test_build_dir());
    int pipe_fds[2] = {-1, -1};
    if (where == WFBT_CLOSED_PIPE) {
        ck_assert_int_eq(pipe(pipe_fds), 0);
        close(pipe_fds[0]); /* nobody will ever read */
    }
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int out_fd = where == WFBT_CAPTURE    ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644)
                     : where == WFBT_DEV_FULL ? open("/dev/full", O_WRONLY)
                                              : pipe_fds[1];
        child(out_fd, open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), exe, args);
    }
    if (pipe_fds[1] >= 0)
        close(pipe_fds[1]);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    wfbt_out r = {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0, NULL, NULL};
    r.out = where == WFBT_CAPTURE ? slurp(out_path) : wf_strdup("");
    r.err = slurp(err_path);
    ck_assert_ptr_nonnull(r.out);
    wfbt_tmp_remove(dir_copy);
    return r;
}

wfbt_out wfbt_run(const char *const *args)
{
    return wfbt_run_to(WFBT_CAPTURE, args);
}

void wfbt_out_free(wfbt_out *r)
{
    wf_free(r->out);
    wf_free(r->err);
    r->out = r->err = NULL;
}

const char *wfbt_last_line(const char *s)
{
    static char line[65536];
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == '\n')
        len--;
    size_t start = len;
    while (start > 0 && s[start - 1] != '\n')
        start--;
    snprintf(line, sizeof line, "%.*s", (int)(len - start), s + start);
    return line;
}

size_t wfbt_count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* wf_test_util.c — shared test helpers (see wf_test_util.h). */
#include "wf_test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/wf_mem.h"

#ifndef WF_BUILD_DIR
#define WF_BUILD_DIR "build"
#endif

const char *wf_test_build_dir(void)
{
    const char *b = getenv("WF_BUILD");
    return b && *b ? b : WF_BUILD_DIR;
}

const char *wf_test_lib_dir(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/tests/lib", wf_test_build_dir());
    return path;
}

const char *wf_test_sample_lib_dir(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/samples/lib", wf_test_build_dir());
    return path;
}

const char *wf_test_tmp_base(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

const char *wf_test_tmpdir(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/wftest.XXXXXX", wf_test_tmp_base());
    ck_assert_ptr_nonnull(mkdtemp(path));
    return path;
}

void wf_test_tmpdir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            wf_test_tmpdir_remove(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

const char *wf_test_write_file(const char *dir, const char *name, const char *text)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

char *wf_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    wf_buf buf;
    wf_buf_init(&buf);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        wf_buf_add(&buf, chunk, n);
    fclose(f);
    return wf_buf_detach(&buf, len);
}

int wf_test_fifo_writer(const char *path)
{
    unlink(path);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(path, O_WRONLY);
        static const char chunk[4096] = {'<'};
        while (fd >= 0 && write(fd, chunk, sizeof chunk) > 0)
            ;
        _exit(0);
    }
    return (int)pid;
}

void wf_test_fifo_writer_end(int pid)
{
    kill((pid_t)pid, SIGKILL);
    waitpid((pid_t)pid, NULL, 0);
}

int wf_test_run_cli(const char *const *argv, char **err_text)
{
    char exe[1024];
    snprintf(exe, sizeof exe, "%s/bin/wfbridge", wf_test_build_dir());
    char err_path[] = "/tmp/wftest-cli.XXXXXX";
    int err_fd = mkstemp(err_path);
    ck_assert_int_ge(err_fd, 0);
    size_t argc = 0;
    while (argv[argc])
        argc++;
    const char **args = calloc(argc + 2, sizeof *args);
    ck_assert_ptr_nonnull(args);
    args[0] = exe;
    memcpy(args + 1, argv, argc * sizeof *args);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int null_fd = open("/dev/null", O_RDWR);
        dup2(null_fd, 0);
        dup2(null_fd, 1);
        dup2(err_fd, 2);
        execv(exe, (char *const *)args);
        _exit(127);
    }
    free(args);
    close(err_fd);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    if (err_text)
        *err_text = wf_test_read_file(err_path, NULL);
    unlink(err_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

unsigned wf_test_nomem_loop(wf_test_op op, void *ud, unsigned max_runs)
{
    for (unsigned n = 1; n <= max_runs; n++) {
        wf_alloc_fail_after(n);
        wf_status st = op(ud);
        unsigned long refused = wf_alloc_fail_count();
        wf_alloc_fail_after(0);
        if (refused == 0)
            return n - 1; /* allocation n was never reached: every path has been tried */
        ck_assert_msg(st == WF_E_NOMEM,
                      "allocation %u (and later ones) refused, yet the run returned %s (%d)", n,
                      wf_status_name(st), (int)st);
    }
    ck_abort_msg("operation still refused allocations after %u runs", max_runs);
    return max_runs;
}

int wf_test_shell_cli(const char *dir, unsigned timeout_s, const char *fmt, ...)
{
    char args[8192], cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "timeout %u %s/bin/wfbridge %s >%s/stdout 2>%s/stderr", timeout_s,
             wf_test_build_dir(), args, dir, dir);
    int rc = system(cmd);
    if (rc == -1)
        return 127;
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

const char *wf_test_path(const char *dir, const char *name)
{
    static char path[4][2048];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

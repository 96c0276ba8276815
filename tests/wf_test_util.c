/* wf_test_util.c — shared test helpers (see wf_test_util.h). */
#include "wf_test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

unsigned wf_test_nomem_loop(wf_test_op op, void *ud, unsigned max_runs)
{
    unsigned n;
    for (n = 1; n <= max_runs; n++) {
        wf_alloc_fail_after(n);
        wf_status st = op(ud);
        wf_alloc_fail_after(0);
        if (st != WF_E_NOMEM)
            return n - 1;
    }
    ck_abort_msg("operation still failing with WF_E_NOMEM after %u runs", max_runs);
    return n;
}

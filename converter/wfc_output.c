/* wfc_output.c — output paths and atomic writes of the converter (wfc_output.h). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wfc_output.h"

/* mkdir -p for the directory part of path. */
static wf_status make_parents(const char *path, wf_error *err)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return WF_OK;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        char saved = *p;
        if (saved != '/' && saved != '\0')
            continue;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            wf_loc at = {path, 0, 0};
            return wf_error_set(err, WF_E_IO, &at, "cannot create directory %s: %s", dir,
                                strerror(errno));
        }
        *p = saved;
        if (saved == '\0')
            break;
    }
    return WF_OK;
}

wf_status wfc_write_atomic(const char *path, const char *data, size_t len, wf_error *err)
{
    wf_loc at = {path, 0, 0};
    wf_status st = make_parents(path, err);
    if (st != WF_OK)
        return st;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return wf_error_set(err, WF_E_IO, &at, "cannot write %s: %s", path, strerror(errno));
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    int saved = errno;
    bool ok = done == len && fchmod(fd, 0644) == 0 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) == 0)
        return WF_OK;
    saved = errno ? errno : saved;
    unlink(tmp);
    return wf_error_set(err, WF_E_IO, &at, "cannot write %s: %s", path, strerror(saved));
}

wf_status wfc_output_path(const char *input, const char *in_dir, const char *out_dir, char *out,
                          size_t size, wf_error *err)
{
    const char *rel = input;
    if (out_dir && in_dir) {
        size_t n = strlen(in_dir);
        while (n > 1 && in_dir[n - 1] == '/')
            n--;
        if (strncmp(input, in_dir, n) == 0 && input[n] == '/')
            rel = input + n + 1;
    } else if (out_dir) {
        const char *s = strrchr(input, '/');
        rel = s ? s + 1 : input;
    }
    size_t len = strlen(rel);
    if (len > 5 && strcmp(rel + len - 5, ".xoml") == 0)
        len -= 5;
    int w = out_dir ? snprintf(out, size, "%s/%.*s.xaml", out_dir, (int)len, rel)
                    : snprintf(out, size, "%.*s.xaml", (int)len, rel);
    if (w < 0 || (size_t)w >= size) {
        wf_loc at = {input, 0, 0};
        return wf_error_set(err, WF_E_LIMIT, &at, "output path too long");
    }
    return WF_OK;
}

wf_status wfc_output_check(const char *input, const char *output, wf_error *err)
{
    struct stat a, b;
    bool same = strcmp(input, output) == 0 || (stat(input, &a) == 0 && stat(output, &b) == 0 &&
                                               a.st_dev == b.st_dev && a.st_ino == b.st_ino);
    if (!same)
        return WF_OK;
    wf_loc at = {input, 0, 0};
    return wf_error_set(err, WF_E_IO, &at, "the output path %s is the input file", output);
}

/* wfc_output.c — output paths and all-or-nothing writes of the converter (wfc_output.h).
 * Invariant: until wfc_writes_commit succeeds, every file a set made (temporary files, the
 * directories it created) is listed in it, so wfc_writes_destroy can take all of it back. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "wfc_output.h"

typedef struct pending {
    char *target;   /* owned: where the file goes */
    char *tmp;      /* owned: the staged temporary file; NULL for a stream */
    char *data;     /* owned: a stream's bytes, written at commit */
    size_t len;
    bool existed;   /* target was there before (never removed on failure) */
    bool placed;    /* renamed into place (or written, for a stream) */
} pending;

struct wfc_writes {
    pending *items;
    size_t count;
    char **dirs; /* owned: directories created, in creation order */
    size_t dir_count;
    bool committed;
};

wf_status wfc_writes_create(wfc_writes **out, wf_error *err)
{
    *out = wf_calloc(1, sizeof **out);
    return *out ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

static bool note_dir(wfc_writes *w, const char *dir)
{
    char **dirs = wf_realloc(w->dirs, (w->dir_count + 1) * sizeof *dirs);
    if (!dirs)
        return false;
    w->dirs = dirs;
    return (w->dirs[w->dir_count++] = wf_strdup(dir)) != NULL;
}

/* mkdir -p for the directory part of path, noting each directory it creates. */
static wf_status make_parents(wfc_writes *w, const char *path, wf_error *err)
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
        if (mkdir(dir, 0777) == 0) {
            if (!note_dir(w, dir))
                return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        } else if (errno != EEXIST) {
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

/* Write all of data to fd; false with errno set on failure. */
static bool write_all(int fd, const char *data, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            return errno = EIO, false;
        done += (size_t)n;
    }
    return true;
}

/* The temporary file beside target, with data in it. */
static wf_status stage(wfc_writes *w, pending *p, const char *data, size_t len, wf_error *err)
{
    wf_loc at = {p->target, 0, 0};
    wf_status st = make_parents(w, p->target, err);
    if (st != WF_OK)
        return st;
    size_t n = strlen(p->target) + sizeof ".tmpXXXXXX";
    if (!(p->tmp = wf_malloc(n)))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    snprintf(p->tmp, n, "%s.tmpXXXXXX", p->target);
    int fd = mkstemp(p->tmp);
    if (fd < 0) {
        int e = errno;
        wf_free(p->tmp);
        p->tmp = NULL;
        return wf_error_set(err, WF_E_IO, &at, "cannot write %s: %s", p->target, strerror(e));
    }
    errno = 0;
    bool ok = write_all(fd, data, len) && fchmod(fd, 0644) == 0 && fsync(fd) == 0;
    int e = errno;
    ok = close(fd) == 0 && ok;
    if (ok)
        return WF_OK;
    e = e ? e : errno;
    return wf_error_set(err, WF_E_IO, &at, "cannot write %s: %s", p->target,
                        strerror(e ? e : EIO));
}

/* The descriptor a path names for this process: 1 for "-" and /dev/stdout (also when it
 * leads to a regular file: the shell's `>` or `>>` is kept), 2 for /dev/stderr; else -1. */
static int std_fd(const char *path)
{
    static const char *const names[][3] = {{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"},
                                           {"/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"}};
    if (strcmp(path, "-") == 0)
        return STDOUT_FILENO;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++)
            if (strcmp(path, names[k][i]) == 0)
                return k ? STDERR_FILENO : STDOUT_FILENO;
    return -1;
}

bool wfc_output_is_stdout(const char *path)
{
    return std_fd(path) == STDOUT_FILENO;
}

bool wfc_output_is_stream(const char *path)
{
    struct stat st;
    if (std_fd(path) >= 0)
        return true;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* Where a path's bytes go: the target to replace (a link to a regular file is followed, so the
 * link stays), or a stream. */
static wf_status classify(pending *p, const char *path, bool *stream, wf_error *err)
{
    wf_loc at = {path, 0, 0};
    struct stat ls, st;
    *stream = std_fd(path) >= 0;
    if (*stream || lstat(path, &ls) != 0)
        return (p->target = wf_strdup(path)) ? WF_OK
                                             : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    p->existed = true;
    if (stat(path, &st) != 0)
        return wf_error_set(err, WF_E_IO, &at, "cannot write %s: a link to nothing (%s)", path,
                            strerror(errno));
    if (S_ISDIR(st.st_mode))
        return wf_error_set(err, WF_E_IO, &at, "cannot write %s: it is a directory", path);
    *stream = !S_ISREG(st.st_mode);
    char real[PATH_MAX];
    const char *target = path;
    if (S_ISLNK(ls.st_mode) && !*stream) {
        if (!realpath(path, real))
            return wf_error_set(err, WF_E_IO, &at, "cannot write %s: %s", path, strerror(errno));
        target = real;
    }
    return (p->target = wf_strdup(target)) ? WF_OK
                                           : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

wf_status wfc_writes_add(wfc_writes *w, const char *path, const char *data, size_t len,
                         wf_error *err)
{
    assert(!w->committed);
    pending *items = wf_realloc(w->items, (w->count + 1) * sizeof *items);
    if (!items)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    w->items = items;
    pending *p = &w->items[w->count++];
    *p = (pending){0};
    bool stream = false;
    wf_status st = classify(p, path, &stream, err);
    if (st != WF_OK || !stream)
        return st != WF_OK ? st : stage(w, p, data, len, err);
    if (!(p->data = wf_malloc(len ? len : 1)))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    memcpy(p->data, data, len);
    p->len = len;
    return WF_OK;
}

/* A stream written in place: standard output, or a device, FIFO or socket opened for writing
 * (a FIFO without a reader is an error, not a hang). */
static wf_status write_stream(const pending *p, wf_error *err)
{
    wf_loc at = {p->target, 0, 0};
    int std = std_fd(p->target);
    if (std >= 0) { /* the descriptor itself: its offset and O_APPEND are the shell's */
        fflush(std == STDOUT_FILENO ? stdout : stderr);
        if (write_all(std, p->data, p->len))
            return WF_OK;
        return wf_error_set(err, WF_E_IO, NULL, "cannot write standard %s: %s",
                            std == STDOUT_FILENO ? "output" : "error", strerror(errno));
    }
    int fd = open(p->target, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    bool ok = fd >= 0 && fcntl(fd, F_SETFL, 0) == 0 && write_all(fd, p->data, p->len);
    int e = errno;
    if (fd >= 0)
        close(fd);
    return ok ? WF_OK
              : wf_error_set(err, WF_E_IO, &at, "cannot write %s: %s", p->target, strerror(e));
}

wf_status wfc_writes_commit(wfc_writes *w, wf_error *err)
{
    assert(!w->committed);
    for (size_t i = 0; i < w->count; i++) {
        pending *p = &w->items[i];
        if (!p->tmp)
            continue;
        if (rename(p->tmp, p->target) != 0) {
            wf_loc at = {p->target, 0, 0};
            return wf_error_set(err, WF_E_IO, &at, "cannot write %s: %s", p->target,
                                strerror(errno));
        }
        wf_free(p->tmp);
        p->tmp = NULL;
        p->placed = true;
    }
    for (size_t i = 0; i < w->count; i++) {
        pending *p = &w->items[i];
        if (p->placed)
            continue;
        wf_status st = write_stream(p, err);
        if (st != WF_OK)
            return st;
        p->placed = true;
    }
    w->committed = true;
    return WF_OK;
}

void wfc_writes_destroy(wfc_writes *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->count; i++) {
        pending *p = &w->items[i];
        if (p->tmp)
            unlink(p->tmp);
        else if (!w->committed && p->placed && !p->existed && !p->data)
            unlink(p->target); /* a new file of a set that failed later */
        wf_free(p->tmp);
        wf_free(p->target);
        wf_free(p->data);
    }
    for (size_t i = w->dir_count; i-- > 0;) {
        if (!w->committed)
            rmdir(w->dirs[i]); /* only when empty: files of others stay */
        wf_free(w->dirs[i]);
    }
    wf_free(w->items);
    wf_free(w->dirs);
    wf_free(w);
}

wf_status wfc_write_atomic(const char *path, const char *data, size_t len, wf_error *err)
{
    wfc_writes *w = NULL;
    wf_status st = wfc_writes_create(&w, err);
    if (st == WF_OK)
        st = wfc_writes_add(w, path, data, len, err);
    if (st == WF_OK)
        st = wfc_writes_commit(w, err);
    wfc_writes_destroy(w);
    return st;
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
    size_t dir_len = out_dir ? strlen(out_dir) : 0;
    while (dir_len > 1 && out_dir[dir_len - 1] == '/')
        dir_len--; /* `-o out/` names the directory out */
    int w = out_dir ? snprintf(out, size, "%.*s/%.*s.xaml", (int)dir_len, out_dir, (int)len, rel)
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

/* Who a path is: an existing file's device and inode, else its directory's and its name. */
typedef struct identity {
    dev_t dev;
    ino_t ino;
    const char *name; /* borrowed: last name of a path that does not exist yet, else "" */
    bool known, stream;
} identity;

static identity identify(const char *path)
{
    identity id = {0};
    struct stat st;
    id.name = "";
    int std = std_fd(path);
    if (std >= 0) /* "-" and /dev/stdout are one output */
        return id.known = id.stream = true, id.name = std == STDOUT_FILENO ? "-" : "2", id;
    if (stat(path, &st) == 0) {
        id = (identity){st.st_dev, st.st_ino, "", true, !S_ISREG(st.st_mode)};
        return id;
    }
    const char *slash = strrchr(path, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    if (stat(dir, &st) == 0)
        id = (identity){st.st_dev, st.st_ino, slash ? slash + 1 : path, true, false};
    return id;
}

static bool same_identity(identity a, identity b)
{
    return a.known && b.known && a.dev == b.dev && a.ino == b.ino && strcmp(a.name, b.name) == 0;
}

wf_status wfc_output_clash(const char *const *inputs, size_t input_count,
                           const char *const *outputs, const char *const *what,
                           size_t output_count, wf_error *err)
{
    for (size_t i = 0; i < output_count; i++) {
        if (!outputs[i])
            continue;
        identity o = identify(outputs[i]);
        wf_loc at = {outputs[i], 0, 0};
        for (size_t k = 0; k < input_count && !o.stream; k++)
            if (inputs[k] && strcmp(inputs[k], "-") != 0 && same_identity(o, identify(inputs[k])))
                return wf_error_set(err, WF_E_IO, &at, "%s %s is the input file %s",
                                    what[i], outputs[i], inputs[k]);
        for (size_t k = 0; k < i; k++) {
            if (!outputs[k])
                continue;
            identity q = identify(outputs[k]);
            bool device = o.stream && q.stream && std_fd(outputs[i]) < 0; /* /dev/null */
            bool same = same_identity(o, q) ||
                        (!o.known && !q.known && strcmp(outputs[i], outputs[k]) == 0);
            if (!device && same)
                return wf_error_set(err, WF_E_IO, &at, "%s and %s both name %s", what[k], what[i],
                                    outputs[i]);
        }
    }
    return WF_OK;
}

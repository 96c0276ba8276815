/* wfb_walk.c — the files of a directory tree for convert DIR and verify DIR (wfb_cli.h). The
 * walk never follows a symbolic link unless asked, never enters a directory twice (device and
 * inode), so link loops end, and takes regular files only: a FIFO or device named *.xoml is
 * reported and skipped, never opened. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/wf_mem.h"
#include "wfb_cli.h"

typedef struct dir_id {
    dev_t dev;
    ino_t ino;
} dir_id;

typedef struct walk {
    const char *root, *suffix;
    bool follow;
    char **paths; /* owned: relative to root */
    size_t count, cap;
    dir_id *seen; /* owned: every directory entered */
    size_t seen_count;
    bool oom;
} walk;

static bool push_path(walk *w, const char *rel)
{
    if (w->count == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        char **p = wf_realloc(w->paths, cap * sizeof *p);
        if (!p)
            return false;
        w->paths = p;
        w->cap = cap;
    }
    return (w->paths[w->count] = wf_strdup(rel)) != NULL && ++w->count;
}

/* Note a directory as entered; false when it was entered before. */
static bool enter(walk *w, const struct stat *st)
{
    for (size_t i = 0; i < w->seen_count; i++)
        if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
            return false;
    dir_id *s = wf_realloc(w->seen, (w->seen_count + 1) * sizeof *s);
    if (!s)
        return w->oom = true, false;
    w->seen = s;
    w->seen[w->seen_count++] = (dir_id){st->st_dev, st->st_ino};
    return true;
}

static void skipped(const char *full, const char *why)
{
    wf_error e = WF_ERROR_INIT;
    wf_error_set(&e, WF_E_IO, &(wf_loc){full, 0, 0}, "%s, skipped", why);
    wfb_report_warning(&e);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n > s && strcmp(name + n - s, suffix) == 0;
}

static void walk_dir(walk *w, const char *rel);

/* One entry of a directory: a directory to enter, a file to take, or something skipped. */
static void walk_entry(walk *w, const char *rel)
{
    char full[8200];
    snprintf(full, sizeof full, "%s/%s", w->root, rel);
    struct stat st;
    if (lstat(full, &st) != 0)
        return;
    bool link = S_ISLNK(st.st_mode);
    bool wanted = has_suffix(rel, w->suffix);
    if (link && (!w->follow || stat(full, &st) != 0)) {
        struct stat target;
        if (!w->follow && (wanted || (stat(full, &target) == 0 && S_ISDIR(target.st_mode))))
            skipped(full, "a symbolic link (--follow-symlinks follows links)");
        else if (w->follow)
            skipped(full, "a symbolic link to nothing");
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        if (enter(w, &st))
            walk_dir(w, rel);
        else if (!w->oom)
            skipped(full, "a directory reached before (a link loop)");
    } else if (wanted && S_ISREG(st.st_mode)) {
        w->oom |= !push_path(w, rel);
    } else if (wanted) {
        skipped(full, "not a regular file");
    }
}

static void walk_dir(walk *w, const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", w->root, *rel ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d)
        return;
    char **names = NULL;
    size_t count = 0;
    for (struct dirent *e; !w->oom && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char **n = wf_realloc(names, (count + 1) * sizeof *n);
        if (!n || !(n[count] = wf_strdup(e->d_name)))
            w->oom = true;
        names = n ? n : names;
        count += n && n[count] ? 1 : 0;
    }
    closedir(d);
    if (count)
        qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count; i++) {
        char sub[4096];
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", names[i]);
        if (!w->oom)
            walk_entry(w, sub);
        wf_free(names[i]);
    }
    wf_free(names);
}

int wfb_walk(const char *root, const char *suffix, bool follow, char ***paths, size_t *count)
{
    walk w = {.root = root, .suffix = suffix, .follow = follow};
    struct stat st;
    *paths = NULL;
    *count = 0;
    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode) || !enter(&w, &st))
        return wfb_error("cannot read directory %s", root);
    walk_dir(&w, "");
    wf_free(w.seen);
    if (w.oom) {
        wfb_walk_free(w.paths, w.count);
        return wfb_error("out of memory");
    }
    *paths = w.paths;
    *count = w.count;
    return 0;
}

void wfb_walk_free(char **paths, size_t count)
{
    for (size_t i = 0; i < count; i++)
        wf_free(paths[i]);
    wf_free(paths);
}

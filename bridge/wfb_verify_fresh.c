/* wfb_verify_fresh.c — what a verify worker puts back after each run so the next one starts
 * from the native state of the moment it was forked (docs/verify.md "Isolation"): the
 * writable segments and thread-local blocks of the objects the definitions' libraries brought
 * in, the file descriptors, signal dispositions and mask, working directory, umask,
 * environment, locale and rand() seed. The invariant: restoring right after the snapshot
 * changes nothing, so the snapshot is taken before the first native call. */
#define _GNU_SOURCE /* close_range, dl_iterate_phdr's PT_TLS data */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <link.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../common/wf_native.h"
#include "wfb_verify_int.h"

#define MAX_OBJECTS 256
#define CWD_FD_MIN  50 /* beside the worker's socket (wfb_verify_worker.c) */

/* A writable range of a library and its bytes at the snapshot. */
typedef struct region {
    unsigned char *addr;
    size_t len;
    unsigned char *saved; /* owned */
} region;

struct wfb__fresh {
    uintptr_t objects[MAX_OBJECTS]; /* the libraries' objects, by load address */
    size_t object_count;
    region *regions;
    size_t region_count;
    int *fds; /* open at the snapshot, ascending */
    size_t fd_count;
    int cwd_fd;
    mode_t umask;
    sigset_t mask;
    struct sigaction actions[NSIG];
    bool has_action[NSIG];
    int stat_fd;          /* /proc/self/stat, for the ignored and caught signals; -1: none */
    uint64_t ign, caught; /* at the snapshot: bit sig - 1 */
    char **env_text; /* owned: the environment at the snapshot */
    char **env_live; /* owned strings: the copies put back last time (NULL: the original) */
    char **env_array;  /* environ as it was left, to see a change without copying */
    char **env_entries; /* owned array: its entries then */
    size_t env_count;
    char *locale; /* owned: setlocale(LC_ALL, NULL) */
};

static bool is_library_object(const wfb__fresh *f, uintptr_t addr)
{
    for (size_t i = 0; i < f->object_count; i++)
        if (f->objects[i] == addr)
            return true;
    return false;
}

/* ---- writable segments and thread-local data -------------------------------------------- */
/* The part of a PF_W PT_LOAD segment that stays writable: the loader makes the RELRO part
 * (relocated pointers, .got with -z now) read-only up to its last whole page. */
static bool writable_part(const struct dl_phdr_info *info, const ElfW(Phdr) *ph,
                          uintptr_t *start, uintptr_t *end)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    *start = info->dlpi_addr + ph->p_vaddr;
    *end = *start + ph->p_memsz;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *r = &info->dlpi_phdr[i];
        if (r->p_type != PT_GNU_RELRO)
            continue;
        uintptr_t rs = info->dlpi_addr + r->p_vaddr, re = (rs + r->p_memsz) & ~(page - 1);
        if (rs <= *start && re > *start)
            *start = re < *end ? re : *end;
    }
    return *end > *start;
}

/* Copying bytes a sanitizer build marks as the red zones between globals is what a restore
 * is, so the copy is not the instrumented memcpy there. */
#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize_address)) static void copy_raw(unsigned char *dst,
                                                          const unsigned char *src, size_t len)
{
    volatile unsigned char *d = dst;
    for (size_t i = 0; i < len; i++)
        d[i] = src[i];
}
#else
static void copy_raw(unsigned char *dst, const unsigned char *src, size_t len)
{
    memcpy(dst, src, len);
}
#endif

static bool add_region(wfb__fresh *f, uintptr_t start, uintptr_t end)
{
    region *grown = wf_realloc(f->regions, (f->region_count + 1) * sizeof *grown);
    if (!grown)
        return false;
    f->regions = grown;
    region *r = &f->regions[f->region_count];
    r->addr = (unsigned char *)start;
    r->len = end - start;
    if (!(r->saved = wf_malloc(r->len)))
        return false;
    copy_raw(r->saved, r->addr, r->len);
    f->region_count++;
    return true;
}

typedef struct walk {
    wfb__fresh *f;
    bool ok;
} walk;

static int snapshot_object(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    walk *w = ud;
    if (!is_library_object(w->f, (uintptr_t)info->dlpi_addr))
        return 0;
    for (ElfW(Half) i = 0; w->ok && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start, end;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && writable_part(info, ph, &start, &end))
            w->ok = add_region(w->f, start, end);
    }
    return 0;
}

/* A library's __thread variables of this thread back to their initial image (the block is
 * made on first use, so it is found again each time). */
static int restore_tls(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    const wfb__fresh *f = ud;
    if (!info->dlpi_tls_data || !is_library_object(f, (uintptr_t)info->dlpi_addr))
        return 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_TLS)
            continue;
        unsigned char *block = info->dlpi_tls_data;
        copy_raw(block, (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_filesz);
        memset(block + ph->p_filesz, 0, ph->p_memsz - ph->p_filesz);
    }
    return 0;
}

/* ---- file descriptors ---------------------------------------------------------------- */
static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static bool add_fd(wfb__fresh *f, int fd, size_t *cap)
{
    if (f->fd_count == *cap) {
        int *grown = wf_realloc(f->fds, (*cap = *cap * 2 + 16) * sizeof *grown);
        if (!grown)
            return false;
        f->fds = grown;
    }
    f->fds[f->fd_count++] = fd;
    return true;
}

/* The open descriptors, from /proc/self/fd (or, without /proc, by asking each number). */
static bool snapshot_fds(wfb__fresh *f)
{
    size_t cap = 0;
    bool ok = true;
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        for (int fd = 0; ok && fd < 4096; fd++)
            if (fcntl(fd, F_GETFD) >= 0)
                ok = add_fd(f, fd, &cap);
        return ok;
    }
    for (struct dirent *e; ok && (e = readdir(d));)
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
            ok = add_fd(f, atoi(e->d_name), &cap);
    closedir(d);
    if (ok)
        qsort(f->fds, f->fd_count, sizeof *f->fds, cmp_int);
    return ok;
}

/* Close every descriptor between those of the snapshot: one call per gap. */
static void restore_fds(const wfb__fresh *f)
{
    unsigned from = 0;
    for (size_t i = 0; i < f->fd_count; i++) {
        unsigned fd = (unsigned)f->fds[i];
        assert(i == 0 || f->fds[i] > f->fds[i - 1]); /* ascending, or a gap closes a kept one */
        if (fd > from)
            close_range(from, fd - 1, 0);
        from = fd + 1;
    }
    close_range(from, ~0U, 0);
}

/* ---- the environment ------------------------------------------------------------------ */
static void env_note(wfb__fresh *f)
{
    f->env_array = environ;
    for (size_t i = 0; i < f->env_count; i++)
        f->env_entries[i] = environ ? environ[i] : NULL;
}

static bool snapshot_env(wfb__fresh *f)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    f->env_count = n;
    f->env_text = wf_calloc(n + 1, sizeof *f->env_text);
    f->env_entries = wf_calloc(n + 1, sizeof *f->env_entries);
    if (!f->env_text || !f->env_entries)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(f->env_text[i] = wf_strdup(environ[i])))
            return false;
    env_note(f);
    return true;
}

static bool env_changed(const wfb__fresh *f)
{
    if (environ != f->env_array || (environ && environ[f->env_count]))
        return true;
    for (size_t i = 0; i < f->env_count; i++)
        if (environ[i] != f->env_entries[i] || strcmp(environ[i], f->env_text[i]) != 0)
            return true;
    return false;
}

static void free_strs(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        wf_free(s[i]);
    wf_free(s);
}

/* Fresh copies put in (putenv keeps the pointer; a library may have written into the last). */
static void restore_env(wfb__fresh *f)
{
    if (!env_changed(f))
        return;
    char **live = wf_calloc(f->env_count + 1, sizeof *live);
    for (size_t i = 0; live && i < f->env_count; i++)
        live[i] = wf_strdup(f->env_text[i]);
    clearenv();
    for (size_t i = 0; live && i < f->env_count; i++)
        if (live[i])
            putenv(live[i]);
    free_strs(f->env_live, f->env_count);
    f->env_live = live;
    env_note(f);
}

/* ---- the rest of the process state ------------------------------------------------------- */
/* The signals whose disposition a process can change (32 and 33 belong to the thread library). */
static bool settable(int sig)
{
    return sig != SIGKILL && sig != SIGSTOP && (sig < 32 || sig > 33);
}

/* The ignored and caught signals (fields 33 and 34 of /proc/self/stat, after the name in
 * parentheses); false: not known. One read instead of a system call per signal. */
static bool signal_masks(int fd, uint64_t *ign, uint64_t *caught)
{
    char text[2048];
    ssize_t n = fd >= 0 ? pread(fd, text, sizeof text - 1, 0) : -1;
    if (n <= 0)
        return false;
    text[n] = '\0';
    char *at = strrchr(text, ')');
    for (int field = 2; at && field < 33; field++)
        at = strchr(at + 1, ' ');
    if (!at)
        return false;
    char *end;
    *ign = strtoull(at + 1, &end, 10);
    *caught = strtoull(end, &end, 10);
    return *end == ' ' || *end == '\n';
}

static void snapshot_signals(wfb__fresh *f)
{
    sigprocmask(SIG_SETMASK, NULL, &f->mask);
    for (int sig = 1; sig < NSIG; sig++)
        f->has_action[sig] = settable(sig) && sigaction(sig, NULL, &f->actions[sig]) == 0;
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    f->stat_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, CWD_FD_MIN) : -1;
    if (fd >= 0)
        close(fd);
    if (!signal_masks(f->stat_fd, &f->ign, &f->caught) && f->stat_fd >= 0) {
        close(f->stat_fd);
        f->stat_fd = -1;
    }
}

/* A signal at its default disposition at the snapshot and neither ignored nor caught now
 * is at its default still (SIGCHLD's flags matter even then); the others are set again. */
static void restore_signals(const wfb__fresh *f)
{
    sigprocmask(SIG_SETMASK, &f->mask, NULL);
    uint64_t ign = 0, caught = 0, again = ~(uint64_t)0;
    if (signal_masks(f->stat_fd, &ign, &caught))
        again = f->ign | f->caught | (ign ^ f->ign) | (caught ^ f->caught);
    for (int sig = 1; sig < NSIG; sig++) {
        bool set = sig > 64 || (again >> (sig - 1) & 1) || sig == SIGCHLD;
        if (f->has_action[sig] && set)
            sigaction(sig, &f->actions[sig], NULL);
    }
}

static void restore_locale(const wfb__fresh *f)
{
    uselocale(LC_GLOBAL_LOCALE);
    const char *now = setlocale(LC_ALL, NULL);
    if (f->locale && (!now || strcmp(now, f->locale) != 0))
        setlocale(LC_ALL, f->locale);
}

wf_status wfb__fresh_create(wfb__fresh **out, wf_error *err)
{
    *out = NULL;
    wfb__fresh *f = wf_calloc(1, sizeof *f);
    if (!f)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    f->cwd_fd = f->stat_fd = -1;
    size_t n = wf_native_lib_objects(f->objects, MAX_OBJECTS);
    f->object_count = n < MAX_OBJECTS ? n : MAX_OBJECTS;
    walk w = {f, true};
    dl_iterate_phdr(snapshot_object, &w);
    int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    f->cwd_fd = cwd >= 0 ? fcntl(cwd, F_DUPFD_CLOEXEC, CWD_FD_MIN) : -1; /* not the lowest free */
    if (cwd >= 0)
        close(cwd);
    f->umask = umask(0);
    umask(f->umask);
    snapshot_signals(f);
    const char *loc = setlocale(LC_ALL, NULL);
    bool ok = w.ok && snapshot_env(f) && (!loc || (f->locale = wf_strdup(loc))) &&
              snapshot_fds(f);
    if (!ok) {
        wfb__fresh_destroy(f);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    *out = f;
    return WF_OK;
}

void wfb__fresh_restore(wfb__fresh *f)
{
    for (size_t i = 0; i < f->region_count; i++)
        copy_raw(f->regions[i].addr, f->regions[i].saved, f->regions[i].len);
    dl_iterate_phdr(restore_tls, f);
    fflush(NULL); /* a stream left open writes nothing into the next run's files */
    restore_fds(f);
    restore_signals(f);
    if (f->cwd_fd >= 0)
        (void)fchdir(f->cwd_fd);
    umask(f->umask);
    restore_env(f);
    restore_locale(f);
    srand(1); /* the state of a process that never seeded it */
    errno = 0;
}

void wfb__fresh_destroy(wfb__fresh *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->region_count; i++)
        wf_free(f->regions[i].saved);
    wf_free(f->regions);
    wf_free(f->fds);
    if (f->cwd_fd >= 0)
        close(f->cwd_fd);
    if (f->stat_fd >= 0)
        close(f->stat_fd);
    free_strs(f->env_text, f->env_count);
    free_strs(f->env_live, f->env_count);
    wf_free(f->env_entries);
    wf_free(f->locale);
    wf_free(f);
}

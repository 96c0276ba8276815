/* wf_error.c — the status table, error records (first error wins) and diagnostic lists.
 * Reporting never allocates except for the diagnostic list itself, and a diagnostic list
 * that runs out of memory only counts what it dropped (wf_error.h). */
#include "wf_error.h"

#include <assert.h>
#include <stdio.h> /* vsnprintf */
#include <string.h>

#include "wf_mem.h"

static const struct status_info {
    const char *name;
    const char *message;
    int exit_code;
} status_table[] = {
#define WF_X_INFO(code, name, msg, exitc) {name, msg, exitc},
    WF_STATUS_TABLE(WF_X_INFO)
#undef WF_X_INFO
};

static const struct status_info *status_info(wf_status code)
{
    if ((unsigned)code >= (unsigned)WF_STATUS_COUNT)
        return NULL;
    return &status_table[code];
}

const char *wf_status_name(wf_status code)
{
    const struct status_info *info = status_info(code);
    return info ? info->name : "unknown";
}

const char *wf_status_message(wf_status code)
{
    const struct status_info *info = status_info(code);
    return info ? info->message : "unknown error";
}

int wf_status_exit_code(wf_status code)
{
    const struct status_info *info = status_info(code);
    return info ? info->exit_code : 2;
}

/* ---- error records ------------------------------------------------------------------- */

static void copy_trunc(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

wf_status wf_error_setv(wf_error *err, wf_status code, const wf_loc *loc, const char *fmt,
                        va_list ap)
{
    assert((unsigned)code < WF_STATUS_COUNT); /* every code has its row in the table */
    if (!err || err->code != WF_OK || code == WF_OK)
        return code;
    err->code = code;
    if (fmt && *fmt)
        vsnprintf(err->message, sizeof err->message, fmt, ap);
    else
        copy_trunc(err->message, sizeof err->message, wf_status_message(code));
    err->file[0] = '\0';
    err->line = err->col = 0;
    if (loc) {
        if (loc->file)
            copy_trunc(err->file, sizeof err->file, loc->file);
        err->line = loc->line;
        err->col = loc->col;
    }
    return code;
}

wf_status wf_error_set(wf_error *err, wf_status code, const wf_loc *loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    wf_status st = wf_error_setv(err, code, loc, fmt, ap);
    va_end(ap);
    return st;
}

void wf_error_prefix(wf_error *err, const char *fmt, ...)
{
    if (!err || err->code == WF_OK)
        return;
    char prefix[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    size_t plen = strlen(prefix);
    size_t mlen = strlen(err->message);
    if (plen >= sizeof err->message - 1)
        plen = sizeof err->message - 1;
    if (plen + mlen >= sizeof err->message)
        mlen = sizeof err->message - 1 - plen;
    memmove(err->message + plen, err->message, mlen);
    memcpy(err->message, prefix, plen);
    err->message[plen + mlen] = '\0';
}

void wf_error_clear(wf_error *err)
{
    if (!err)
        return;
    err->code = WF_OK;
    err->message[0] = '\0';
    err->file[0] = '\0';
    err->line = err->col = 0;
}

char *wf_error_format(const wf_error *err, const char *severity, char *buf, size_t size)
{
    if (!buf || size == 0)
        return buf;
    const char *sev = severity ? severity : "error";
    const char *msg = err->message[0] ? err->message : wf_status_message(err->code);
    char where[300] = "";
    if (err->file[0] && err->line && err->col)
        snprintf(where, sizeof where, "%s:%u:%u: ", err->file, err->line, err->col);
    else if (err->file[0] && err->line)
        snprintf(where, sizeof where, "%s:%u: ", err->file, err->line);
    else if (err->file[0])
        snprintf(where, sizeof where, "%s: ", err->file);
    else if (err->line && err->col)
        snprintf(where, sizeof where, "%u:%u: ", err->line, err->col);
    else if (err->line)
        snprintf(where, sizeof where, "%u: ", err->line);
    snprintf(buf, size, "%s%s: %s", where, sev, msg);
    return buf;
}

/* ---- diagnostic lists ---------------------------------------------------------------- */

struct wf_diags {
    wf_diag *items; /* owned */
    size_t count, cap;
    size_t dropped; /* diagnostics lost to out of memory */
};

wf_diags *wf_diags_create(void)
{
    return wf_calloc(1, sizeof(wf_diags));
}

void wf_diags_destroy(wf_diags *diags)
{
    if (!diags)
        return;
    wf_free(diags->items);
    wf_free(diags);
}

static wf_diag *diags_push(wf_diags *diags)
{
    if (diags->count == diags->cap) {
        size_t cap = diags->cap ? diags->cap * 2 : 8;
        wf_diag *items = wf_realloc(diags->items, cap * sizeof *items);
        if (!items) {
            diags->dropped++;
            return NULL;
        }
        diags->items = items;
        diags->cap = cap;
    }
    wf_diag *d = &diags->items[diags->count++];
    memset(d, 0, sizeof *d);
    return d;
}

void wf_diags_add(wf_diags *diags, wf_severity sev, wf_status code, const wf_loc *loc,
                  const char *fmt, ...)
{
    if (!diags)
        return;
    wf_diag *d = diags_push(diags);
    if (!d)
        return;
    d->severity = sev;
    va_list ap;
    va_start(ap, fmt);
    wf_error_setv(&d->error, code == WF_OK ? WF_E_SCHEMA : code, loc, fmt, ap);
    va_end(ap);
    d->error.code = code;
}

void wf_diags_add_error(wf_diags *diags, wf_severity sev, const wf_error *err)
{
    if (!diags || !err)
        return;
    wf_diag *d = diags_push(diags);
    if (!d)
        return;
    d->severity = sev;
    d->error = *err;
}

size_t wf_diags_count(const wf_diags *diags)
{
    return diags ? diags->count : 0;
}

size_t wf_diags_error_count(const wf_diags *diags)
{
    size_t n = 0;
    for (size_t i = 0; diags && i < diags->count; i++)
        n += diags->items[i].severity == WF_SEV_ERROR;
    return n;
}

const wf_diag *wf_diags_get(const wf_diags *diags, size_t index)
{
    if (!diags || index >= diags->count)
        return NULL;
    return &diags->items[index];
}

static int diag_cmp(const wf_diag *a, const wf_diag *b)
{
    int c = strcmp(a->error.file, b->error.file);
    if (c)
        return c;
    if (a->error.line != b->error.line)
        return a->error.line < b->error.line ? -1 : 1;
    if (a->error.col != b->error.col)
        return a->error.col < b->error.col ? -1 : 1;
    return 0;
}

/* Insertion sort: stable, allocation-free, and diagnostic lists are short and nearly sorted. */
void wf_diags_sort(wf_diags *diags)
{
    if (!diags)
        return;
    for (size_t i = 1; i < diags->count; i++) {
        wf_diag tmp = diags->items[i];
        size_t j = i;
        while (j > 0 && diag_cmp(&diags->items[j - 1], &tmp) > 0) {
            diags->items[j] = diags->items[j - 1];
            j--;
        }
        diags->items[j] = tmp;
    }
}

wf_status wf_diags_first_error(const wf_diags *diags, wf_error *err)
{
    const wf_diag *best = NULL;
    for (size_t i = 0; diags && i < diags->count; i++) {
        const wf_diag *d = &diags->items[i];
        if (d->severity == WF_SEV_ERROR && (!best || diag_cmp(d, best) < 0))
            best = d;
    }
    if (!best)
        return WF_OK;
    if (err)
        *err = best->error;
    return best->error.code;
}

/* wf_error.h — status codes, error records with source locations, diagnostic lists.
 * One X-macro table gives each code its name, default message and CLI exit code, so they
 * cannot drift. Libraries never print: they fill a wf_error and return its code (docs/style.md "Errors"). */
#ifndef WF_ERROR_H
#define WF_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/* X(code, name, default message, exit code) */
#define WF_STATUS_TABLE(X)                                                                         \
    X(WF_OK, "ok", "success", 0)                                                                   \
    X(WF_E_NOMEM, "nomem", "out of memory", 2)                                                     \
    X(WF_E_IO, "io", "input/output error", 2)                                                      \
    X(WF_E_USAGE, "usage", "usage error", 2)                                                       \
    X(WF_E_XML, "xml", "malformed XML", 2)                                                         \
    X(WF_E_SYNTAX, "syntax", "syntax error", 2)                                                    \
    X(WF_E_SCHEMA, "schema", "invalid definition", 2)                                              \
    X(WF_E_TYPE, "type", "type mismatch", 2)                                                       \
    X(WF_E_NAME, "name", "unknown name", 2)                                                        \
    X(WF_E_RANGE, "range", "value out of range", 2)                                                \
    X(WF_E_LIMIT, "limit", "limit exceeded", 2)                                                    \
    X(WF_E_NOLIB, "nolib", "native library not found", 2)                                         \
    X(WF_E_NOSYM, "nosym", "native function not found", 2)                                        \
    X(WF_E_UNSUPPORTED, "unsupported", "not supported", 2)                                         \
    X(WF_E_NOTFOUND, "notfound", "not found", 2)                                                   \
    X(WF_E_STATE, "state", "operation not valid in this state", 2)                                 \
    X(WF_E_STORE, "store", "instance store error", 2)                                              \
    X(WF_E_CORRUPT, "corrupt", "corrupt or unreadable data", 2)                                    \
    X(WF_E_LOCKED, "locked", "instance is locked by another host", 2)                              \
    X(WF_E_NATIVE, "native", "native call failed", 1)                                              \
    X(WF_E_FAULT, "fault", "workflow faulted", 1)                                                  \
    X(WF_E_DIVERGED, "diverged", "verification diverged", 1)

typedef enum wf_status {
#define WF_X_ENUM(code, name, msg, exitc) code,
    WF_STATUS_TABLE(WF_X_ENUM)
#undef WF_X_ENUM
        WF_STATUS_COUNT
} wf_status;

const char *wf_status_name(wf_status code);    /* "type", "xml", ... */
const char *wf_status_message(wf_status code); /* default message */
int wf_status_exit_code(wf_status code);       /* 0, 1 or 2 */

/* A source location. file is borrowed (usually the definition's interned path);
 * line and col are 1-based, 0 means unknown. */
typedef struct wf_loc {
    const char *file;
    unsigned line, col;
} wf_loc;

#define WF_LOC_NONE ((wf_loc){.file = NULL, .line = 0, .col = 0})

/* Fixed buffers: reporting never allocates and nobody frees. */
typedef struct wf_error {
    wf_status code;
    char message[512];
    char file[256];
    unsigned line, col;
} wf_error;

#define WF_ERROR_INIT {.code = WF_OK, .message = {0}, .file = {0}, .line = 0, .col = 0}

/* Record an error. The first error wins (it is the root cause): if err already holds a
 * non-OK code, nothing changes. err and loc may be NULL. Returns code, so callers can write
 * `return wf_error_set(err, WF_E_TYPE, &loc, "...")`. */
wf_status wf_error_set(wf_error *err, wf_status code, const wf_loc *loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
wf_status wf_error_setv(wf_error *err, wf_status code, const wf_loc *loc, const char *fmt,
                        va_list ap) __attribute__((format(printf, 4, 0)));
/* Prepend context to the message of a recorded error ("in Sequence 'main': "). */
void wf_error_prefix(wf_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wf_error_clear(wf_error *err);
/* Render as the CLI contract wants: "file:line:col: error: message" (parts that are unknown
 * are left out: "file: error: message", "error: message"). Returns buf. */
char *wf_error_format(const wf_error *err, const char *severity, char *buf, size_t size);

/* A list of diagnostics: validators report every problem in a file, not only the first. */
typedef enum wf_severity { WF_SEV_ERROR, WF_SEV_WARNING, WF_SEV_NOTE } wf_severity;

typedef struct wf_diag {
    wf_severity severity;
    wf_error error;
} wf_diag;

typedef struct wf_diags wf_diags;

wf_diags *wf_diags_create(void); /* NULL on out of memory */
void wf_diags_destroy(wf_diags *diags);
/* Add a diagnostic; silently counts it as dropped when memory runs out (reporting must not
 * fail the caller). */
void wf_diags_add(wf_diags *diags, wf_severity sev, wf_status code, const wf_loc *loc,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void wf_diags_add_error(wf_diags *diags, wf_severity sev, const wf_error *err);
size_t wf_diags_count(const wf_diags *diags);
size_t wf_diags_error_count(const wf_diags *diags);
const wf_diag *wf_diags_get(const wf_diags *diags, size_t index);
/* Sort by file, line, col (stable), for output in source order. */
void wf_diags_sort(wf_diags *diags);
/* Copy the first error (in source order) into err; returns its code or WF_OK. */
wf_status wf_diags_first_error(const wf_diags *diags, wf_error *err);

#endif

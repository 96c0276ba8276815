/* support_bridge.h — the one output-capture helper of the CLI tests: run BUILD/bin/wfbridge
 * (BUILD from $WF_BUILD) in a child process, capture its stdout, stderr and exit status, and
 * give temporary paths under $TMPDIR (default /tmp). */
#ifndef SUPPORT_BRIDGE_H
#define SUPPORT_BRIDGE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct wfbt_out {
    int rc;          /* exit status; -1 when killed by a signal (signal in sig) */
    int sig;
    char *out, *err; /* NUL-terminated captures (wf_free'd by wfbt_out_free) */
} wfbt_out;

/* Where stdout of the child goes. */
typedef enum wfbt_stdout {
    WFBT_CAPTURE,     /* a temporary file, read back into out */
    WFBT_DEV_FULL,    /* /dev/full: every write fails with ENOSPC */
    WFBT_CLOSED_PIPE, /* a pipe whose read end is closed: EPIPE / SIGPIPE */
} wfbt_stdout;

/* Run `wfbridge ARGS...` (args NULL-terminated, at most 30) with stdin from /dev/null. */
wfbt_out wfbt_run(const char *const *args);
wfbt_out wfbt_run_to(wfbt_stdout where, const char *const *args);
void wfbt_out_free(wfbt_out *r);

/* The last line of s (without its newline) in a static buffer; "" when s is empty. */
const char *wfbt_last_line(const char *s);
/* How many times needle occurs in s. */
size_t wfbt_count(const char *s, const char *needle);

/* A fresh temporary directory under $TMPDIR (default /tmp), and a path NAME inside it (static
 * buffer, valid until the next call); wfbt_tmp_remove removes the directory and its files. */
const char *wfbt_tmpdir(void);
const char *wfbt_tmp_path(const char *dir, const char *name);
void wfbt_tmp_remove(const char *dir);

/* Fixture paths: tests/bridge/data/NAME, samples/NAME, and the built native libraries. */
const char *wfbt_data(const char *name);
const char *wfbt_sample(const char *name);
const char *wfbt_sample_libs(void);
const char *wfbt_test_libs(void); /* BUILD/tests/lib */

#endif

/* support_modern.h — the run harness the modern runtime tests share: a one-worker runtime whose
 * WriteLine output is captured into a buffer, loading a workflow from a file or from memory,
 * setting inputs, running, and closing everything again. Linked into every test runner. */
#ifndef SUPPORT_MODERN_H
#define SUPPORT_MODERN_H

#include <stddef.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_runtime.h"

#include <stdbool.h>
#include <stdint.h>

#include "../../common/wf_native.h"

typedef struct wfm_test_run {
    wfm_runtime *rt;
    wfm_definition *def;
    wfm_instance *inst;
    wf_buf out;          /* everything the workflow wrote */
    int64_t now_us;      /* the virtual clock, when the runtime uses one */
    wf_libpath *libpath; /* the test libraries, when the runtime uses them */
} wfm_test_run;

/* How wfm_test_start makes the runtime. */
typedef struct wfm_test_cfg {
    unsigned workers;   /* worker threads; 0 means 1 */
    bool virtual_clock; /* the runtime's clock is r->now_us */
    int64_t now_us;     /* its starting value */
    const char *lib_dir; /* where native libraries are found (NULL: no library path) */
} wfm_test_cfg;

/* A runtime writer appending to the wf_buf passed as ud. */
void wfm_test_capture(void *ud, const char *text, size_t len);
/* A runtime writer that drops what it is given. */
void wfm_test_discard(void *ud, const char *text, size_t len);
/* Zero r, start r->out and create a runtime writing into it as cfg says (NULL: one worker, the
 * real clock, no library path); asserts success. */
void wfm_test_start(wfm_test_run *r, const wfm_test_cfg *cfg);
/* wfm_test_start(r, NULL). */
void wfm_test_runtime(wfm_test_run *r);
/* Load the workflow at path into r->rt and create its instance (asserts). */
void wfm_test_load_file(wfm_test_run *r, const char *path);
/* The same for XAML text in memory, reported under name. */
void wfm_test_load_mem(wfm_test_run *r, const char *name, const char *xaml);
/* wfm_test_runtime, then load the workflow at path and create its instance (asserts). */
void wfm_test_open_file(wfm_test_run *r, const char *path);
/* The same for XAML text in memory, reported under name. */
void wfm_test_open_mem(wfm_test_run *r, const char *name, const char *xaml);
/* Set input name to v on the instance (asserts), then release v. */
void wfm_test_input(wfm_test_run *r, const char *name, wf_value v);
/* Run the instance (asserts WF_OK) and return its state. */
wfm_instance_state wfm_test_go(wfm_test_run *r);
/* Resume bookmark with payload (asserts WF_OK, naming the bookmark). */
void wfm_test_resume(wfm_test_run *r, const char *bookmark, const wf_value *payload);
/* Save the instance, destroy it and restore it from the bytes (as another process would). */
void wfm_test_save_restore(wfm_test_run *r);
/* Loading dir/file fails with exactly code at line:col, a message containing needle and a file
 * naming file; nothing escapes. */
void wfm_test_load_error(const char *dir, const char *file, wf_status code, unsigned line,
                         unsigned col, const char *needle);
/* Output captured without allocating (for out-of-memory runs): what fits of the first 511
 * bytes, always NUL-terminated. Zero it (or wfm_test_fixed_reset) before use. */
typedef struct wfm_test_fixed_out {
    char text[512];
    size_t len;
} wfm_test_fixed_out;
void wfm_test_fixed_reset(wfm_test_fixed_out *out);
/* A writer appending to the wfm_test_fixed_out passed as ud. */
void wfm_test_capture_fixed(void *ud, const char *text, size_t len);
/* Run inst until idle or done: its status, or WF_E_NOMEM when the instance faulted without an
 * exception (the runtime's out-of-memory fault). */
wf_status wfm_test_nomem_step(wfm_instance *inst);

/* Destroy the instance, definition, runtime and library path, and free the output. */
void wfm_test_close(wfm_test_run *r);

#endif

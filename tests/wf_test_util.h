/* wf_test_util.h — shared test helpers: fixture paths, the native library directory built by
 * make, temporary files, and the `nomem` loop that fails the 1st, 2nd, ... allocation. */
#ifndef WF_TEST_UTIL_H
#define WF_TEST_UTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"

/* The build directory (WF_BUILD from make, else the compiled-in default). */
const char *wf_test_build_dir(void);
/* Directory holding the native libraries built from tests/ * /libs/ (BUILD/tests/lib). */
const char *wf_test_lib_dir(void);
/* Directory holding the native libraries built from samples/ * /libs/ (BUILD/samples/lib). */
const char *wf_test_sample_lib_dir(void);
/* Where temporary files go: $TMPDIR when set and not empty, else /tmp. */
const char *wf_test_tmp_base(void);
/* A fresh temporary directory under wf_test_tmp_base() (removed by wf_test_tmpdir_remove).
 * Returns a static buffer valid until the next call. */
const char *wf_test_tmpdir(void);
void wf_test_tmpdir_remove(const char *dir);
/* Write `text` to DIR/NAME and return the path in a static buffer. */
const char *wf_test_write_file(const char *dir, const char *name, const char *text);
/* Read a whole file (wf_free the result). */
char *wf_test_read_file(const char *path, size_t *len);

/* A FIFO at `path` whose writer (a child process) writes forever: it ends on its own when the
 * reader closes the FIFO (SIGPIPE), and wf_test_fifo_writer_end stops it in any case. */
int wf_test_fifo_writer(const char *path); /* the writer's pid */
void wf_test_fifo_writer_end(int pid);
/* Run BUILD/bin/wfbridge with argv (NULL-terminated, without the program name), stdin from
 * /dev/null, stdout discarded, stderr captured into *err_text (wf_free it; may be NULL).
 * Returns the exit status (128 + signal when killed). */
int wf_test_run_cli(const char *const *argv, char **err_text);

/* Run `BUILD/bin/wfbridge ARGS` through the shell (ARGS may hold redirections) under
 * `timeout timeout_s`, stdout and stderr into DIR/stdout and DIR/stderr. Returns the exit code
 * (124: timed out; 128 + signal when killed). */
int wf_test_shell_cli(const char *dir, unsigned timeout_s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* DIR/NAME in one of four rotating buffers (so a few can appear in one call). */
const char *wf_test_path(const char *dir, const char *name);

/* Run `op` with allocation N and every later one refused, N = 1, 2, ..., until a run sees no
 * refused allocation (wf_alloc_fail_count() == 0: op allocates fewer than N times). Asserts
 * that every run which had an allocation refused returned WF_E_NOMEM (op frees everything
 * itself then), so a failure swallowed on some path fails the test instead of ending the loop
 * early. Returns the number of refused runs (N - 1 for the first clean run N). */
typedef wf_status (*wf_test_op)(void *ud);
unsigned wf_test_nomem_loop(wf_test_op op, void *ud, unsigned max_runs);

/* Assert an error's code, line, col and that its message contains `needle`. */
#define WF_ASSERT_ERROR(err, status, ln, cl, needle)                                               \
    do {                                                                                           \
        ck_assert_msg((err).code == (status), "code %d, want %d: %s", (int)(err).code,            \
                      (int)(status), (err).message);                                               \
        ck_assert_uint_eq((err).line, (ln));                                                      \
        ck_assert_uint_eq((err).col, (cl));                                                       \
        ck_assert_msg(strstr((err).message, (needle)) != NULL, "'%s' not in '%s'", (needle),      \
                      (err).message);                                                              \
    } while (0)

#endif

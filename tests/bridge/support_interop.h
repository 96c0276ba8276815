/* support_interop.h — what the Interop suites (tests/bridge/test_interop*.c) share: a runtime
 * with the Interop kind registered, a virtual clock and a library path, and the out-of-memory
 * loop over loading one workflow. */
#ifndef SUPPORT_INTEROP_H
#define SUPPORT_INTEROP_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/wf_error.h"
#include "../modern/support_modern.h"

#define WFB_TEST_T0 INT64_C(1700000000000000) /* the virtual clock's start */

/* wfm_test_start with the virtual clock at WFB_TEST_T0 and lib_dir (NULL: none) as the
 * library path, register Interop, then load `file` and create its instance unless NULL. */
void wfb_test_open(wfm_test_run *r, const char *lib_dir, const char *file);
/* Load `path` into `rt` with allocation 1, 2, ... failing (wf_test_nomem_loop) until it loads;
 * asserts every failure was a clean WF_E_NOMEM and that there were more than 10. */
void wfb_test_load_nomem(wfm_runtime *rt, const char *path);

/* Run `wfbridge ARGS` (a shell-quoted argument string) from the build, capturing stdout and
 * stderr together into out (NUL-terminated, truncated to size); returns the exit status. */
int wfb_test_cli(const char *args, char *out, size_t size);

#endif

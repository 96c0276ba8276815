/* test_exec.h — helpers shared by the legacy executor suites (test_exec.c defines them): load a
 * fixture from tests/legacy/data/exec/ with the wfexectest library on the path, run it with a
 * fake clock, and record the trace (native calls by activity name, status changes). */
#ifndef TEST_EXEC_H
#define TEST_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_exec.h"

typedef struct xt_env {
    wf_types *types;
    wf_libpath *libpath;
    wfl_definition *def;
    wfl_exec *ex;
    wf_buf calls;    /* "activity," per native call */
    wf_buf statuses; /* "activity:Status[/Result]," per status change */
    int64_t now;     /* the fake clock, us */
    size_t native_count;
    char last_fn[64]; /* the last native call */
    size_t last_in_count, last_out_count;
    wf_status last_status;
    char text[512]; /* xt_str's result */
} xt_env;

wf_status xt_load_status(xt_env *e, const char *file, const char *rules, wf_error *err);
void xt_load(xt_env *e, const char *file, const char *rules); /* asserts success */
wfl_exec_opts xt_opts(xt_env *e);
void xt_start(xt_env *e);
void xt_set(xt_env *e, const char *name, const char *text);
wfl_exec_state xt_run(xt_env *e);
/* Deliver a JSON payload (NULL: null) on a queue; asserts WF_OK. */
wfl_exec_state xt_deliver(xt_env *e, const char *queue, const char *json);
int32_t xt_int(xt_env *e, const char *name);
bool xt_bool(xt_env *e, const char *name);
const char *xt_str(xt_env *e, const char *name); /* valid until the next call */
bool xt_waits_on(xt_env *e, const char *queue);
void xt_free(xt_env *e);
/* One run of e->def on a fresh executor for wf_test_nomem_loop (ud: the xt_env): run, cancel
 * if it waits; a fault saying "out of memory" counts as WF_E_NOMEM. */
wf_status xt_run_once(void *ud);

#endif

/* support_interop.c — shared helpers of the Interop suites (support_interop.h). */
#include "support_interop.h"

#include <check.h>
#include <stdio.h>
#include <sys/wait.h> /* WEXITSTATUS */

#include "../../bridge/wfb_interop.h"
#include "../wf_test_util.h"

void wfb_test_open(wfm_test_run *r, const char *lib_dir, const char *file)
{
    wfm_test_cfg cfg = {.virtual_clock = true, .now_us = WFB_TEST_T0, .lib_dir = lib_dir};
    wfm_test_start(r, &cfg);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfb_interop_register(wfm_runtime_catalogue(r->rt), &err), WF_OK);
    if (file)
        wfm_test_load_file(r, file);
}

typedef struct load_job {
    wfm_runtime *rt;
    const char *path;
} load_job;

static wf_status load_once(void *ud)
{
    const load_job *job = ud;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfm_runtime_load(job->rt, job->path, &def, NULL, &err);
    if (rc == WF_OK)
        wfm_definition_release(def);
    else
        ck_assert_ptr_null(def);
    return rc;
}

void wfb_test_load_nomem(wfm_runtime *rt, const char *path)
{
    load_job job = {rt, path};
    ck_assert_uint_gt(wf_test_nomem_loop(load_once, &job, 40000), 10);
}

int wfb_test_cli(const char *args, char *out, size_t size)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s/bin/wfbridge %s 2>&1", wf_test_build_dir(), args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t len = fread(out, 1, size - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* support_modern.c — the shared run harness of the modern runtime tests (support_modern.h):
 * create a runtime that captures WriteLine output, load, set inputs, run and close. */
#include "support_modern.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../modern/wfm_persist.h"
#include "../wf_test_util.h"

void wfm_test_capture(void *ud, const char *text, size_t len)
{
    wf_buf_add(ud, text, len);
}

void wfm_test_discard(void *ud, const char *text, size_t len)
{
    (void)ud;
    (void)text;
    (void)len;
}

static int64_t virtual_clock(void *ud)
{
    return ((const wfm_test_run *)ud)->now_us;
}

void wfm_test_start(wfm_test_run *r, const wfm_test_cfg *cfg)
{
    memset(r, 0, sizeof *r);
    wf_buf_init(&r->out);
    wf_error err = WF_ERROR_INIT;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = cfg && cfg->workers ? cfg->workers : 1;
    o.write = wfm_test_capture;
    o.write_ud = &r->out;
    if (cfg && cfg->virtual_clock) {
        r->now_us = cfg->now_us;
        o.clock = virtual_clock;
        o.clock_ud = r;
    }
    if (cfg && cfg->lib_dir) {
        ck_assert_int_eq(wf_libpath_create(cfg->lib_dir, &r->libpath, &err), WF_OK);
        o.libpath = r->libpath;
    }
    ck_assert_int_eq(wfm_runtime_create(&o, &r->rt, &err), WF_OK);
}

void wfm_test_runtime(wfm_test_run *r)
{
    wfm_test_start(r, NULL);
}

void wfm_test_load_file(wfm_test_run *r, const char *path)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_runtime_load(r->rt, path, &r->def, NULL, &err) == WF_OK, "%s:%u:%u: %s",
                  err.file, err.line, err.col, err.message);
    ck_assert_int_eq(wfm_instance_create(r->rt, r->def, &r->inst, &err), WF_OK);
}

void wfm_test_load_mem(wfm_test_run *r, const char *name, const char *xaml)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(
        wfm_runtime_load_mem(r->rt, name, xaml, strlen(xaml), &r->def, NULL, &err) == WF_OK,
        "%s:%u:%u: %s", err.file, err.line, err.col, err.message);
    ck_assert_int_eq(wfm_instance_create(r->rt, r->def, &r->inst, &err), WF_OK);
}

void wfm_test_open_file(wfm_test_run *r, const char *path)
{
    wfm_test_runtime(r);
    wfm_test_load_file(r, path);
}

void wfm_test_open_mem(wfm_test_run *r, const char *name, const char *xaml)
{
    wfm_test_runtime(r);
    wfm_test_load_mem(r, name, xaml);
}

void wfm_test_input(wfm_test_run *r, const char *name, wf_value v)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_set_input(r->inst, name, &v, &err) == WF_OK, "%s", err.message);
    wf_value_release(&v);
}

wfm_instance_state wfm_test_go(wfm_test_run *r)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_run(r->inst, &err) == WF_OK, "%s", err.message);
    return wfm_instance_state_get(r->inst);
}

void wfm_test_resume(wfm_test_run *r, const char *bookmark, const wf_value *payload)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_resume(r->inst, bookmark, payload, &err) == WF_OK, "%s: %s",
                  bookmark, err.message);
}

void wfm_test_save_restore(wfm_test_run *r)
{
    wf_buf blob;
    wf_buf_init(&blob);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_save(r->inst, &blob, &err) == WF_OK, "save: %s", err.message);
    wfm_instance_destroy(r->inst);
    r->inst = NULL;
    ck_assert_msg(wfm_instance_restore(r->rt, r->def, blob.data, blob.len, &r->inst, &err) ==
                      WF_OK,
                  "restore: %s", err.message);
    wf_buf_fini(&blob);
}

void wfm_test_load_error(const char *dir, const char *file, wf_status code, unsigned line,
                         unsigned col, const char *needle)
{
    wfm_runtime *rt = NULL;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    char path[256];
    snprintf(path, sizeof path, "%s%s", dir, file);
    wfm_definition *def = (wfm_definition *)&def;
    ck_assert_int_ne(wfm_runtime_load(rt, path, &def, NULL, &err), WF_OK);
    ck_assert_ptr_null(def);
    WF_ASSERT_ERROR(err, code, line, col, needle);
    ck_assert_ptr_nonnull(strstr(err.file, file));
    wfm_runtime_destroy(rt);
}

void wfm_test_fixed_reset(wfm_test_fixed_out *out)
{
    out->len = 0;
    out->text[0] = '\0';
}

void wfm_test_capture_fixed(void *ud, const char *text, size_t len)
{
    wfm_test_fixed_out *out = ud;
    if (out->len + len < sizeof out->text) {
        memcpy(out->text + out->len, text, len);
        out->len += len;
        out->text[out->len] = '\0';
    }
}

wf_status wfm_test_nomem_step(wfm_instance *inst)
{
    wf_error err = WF_ERROR_INIT;
    wf_status st = wfm_instance_run(inst, &err);
    if (st == WF_OK && wfm_instance_state_get(inst) == WFM_INSTANCE_FAULTED &&
        wf_is_null(wfm_instance_fault(inst)))
        st = WF_E_NOMEM;
    return st;
}

void wfm_test_close(wfm_test_run *r)
{
    wfm_instance_destroy(r->inst);
    wfm_definition_release(r->def);
    wfm_runtime_destroy(r->rt);
    wf_libpath_destroy(r->libpath);
    wf_buf_fini(&r->out);
}

/* support_converter.c — the side-by-side run harness of the converter tests
 * (support_converter.h). Both runtimes are driven directly; events are delivered whenever an
 * instance goes idle waiting for them, in the order the inputs give. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_exec.h"
#include "../../bridge/wfb_interop.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_converter.h"

const char *wfc_test_lib_dirs(void)
{
    static char buf[2048];
    snprintf(buf, sizeof buf, "%s:%s", wf_test_lib_dir(), wf_test_sample_lib_dir());
    return buf;
}

/* The end of the value starting at p: the next " arg " / " event " / " expect " keyword or
 * the line end. */
static const char *value_end(const char *p)
{
    const char *end = p + strcspn(p, "\n");
    const char *a = strstr(p, " arg "), *e = strstr(p, " event "), *x = strstr(p, " expect ");
    if (a && a < end)
        end = a;
    if (e && e < end)
        end = e;
    if (x && x < end)
        end = x;
    return end;
}

void wfc_test_inputs_parse(const char *line, wfc_test_inputs *out)
{
    memset(out, 0, sizeof *out);
    const char *p = line;
    for (;;) {
        p += strspn(p, " \n");
        if (!*p)
            break;
        bool is_arg = strncmp(p, "arg ", 4) == 0, is_expect = strncmp(p, "expect ", 7) == 0;
        ck_assert_msg(is_arg || is_expect || strncmp(p, "event ", 6) == 0, "bad inputs at '%s'",
                      p);
        p += is_arg ? 4 : is_expect ? 7 : 6;
        const char *end = value_end(p);
        char *value = strndup(p, (size_t)(end - p));
        ck_assert_ptr_nonnull(value);
        if (is_arg && out->arg_count < 16)
            out->args[out->arg_count++] = value;
        else if (is_expect && out->expect_count < 8)
            out->expects[out->expect_count++] = value;
        else if (!is_arg && !is_expect && out->event_count < 8)
            out->events[out->event_count++] = value;
        else
            free(value);
        p = end;
    }
}

void wfc_test_inputs_free(wfc_test_inputs *in)
{
    for (size_t i = 0; i < in->arg_count; i++)
        free(in->args[i]);
    for (size_t i = 0; i < in->event_count; i++)
        free(in->events[i]);
    for (size_t i = 0; i < in->expect_count; i++)
        free(in->expects[i]);
}

/* NAME=VALUE split in place into a static copy. */
static void split(const char *text, char *name, size_t size, const char **value)
{
    const char *eq = strchr(text, '=');
    ck_assert_ptr_nonnull(eq);
    snprintf(name, size, "%.*s", (int)(eq - text), text);
    *value = eq + 1;
}

static wf_value payload(wf_types *types, const char *text)
{
    wf_value v = wf_null();
    wf_error err = WF_ERROR_INIT;
    if (wf_json_parse(types, text, strlen(text), &v, &err) != WF_OK)
        ck_assert_int_eq(wf_value_cstring(text, &v), WF_OK);
    return v;
}

typedef struct outcome {
    const char *state; /* "Closed", "Idle", "Failed" (faulted or terminated) */
    char *names[32];
    wf_value values[32];
    size_t count;
} outcome;

static void outcome_free(outcome *o)
{
    for (size_t i = 0; i < o->count; i++) {
        free(o->names[i]);
        wf_value_release(&o->values[i]);
    }
}

static const char *legacy_state(wfl_exec_state s)
{
    return s == WFL_EXEC_CLOSED ? "Closed" : s == WFL_EXEC_IDLE ? "Idle" : "Failed";
}

static void run_legacy(const char *xoml, const wfc_test_inputs *in, wf_types *types,
                       const wf_libpath *lp, outcome *o)
{
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    lo.types = types;
    lo.libpath = lp;
    wfl_definition *def = NULL;
    wfl_exec *ex = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_definition_load_file(&lo, xoml, &def, &err) == WF_OK, "%s", err.message);
    ck_assert_int_eq(wfl_exec_create(def, NULL, NULL, &ex, &err), WF_OK);
    for (size_t i = 0; i < in->arg_count; i++) {
        char name[128];
        const char *value;
        split(in->args[i], name, sizeof name, &value);
        ck_assert_msg(wfl_exec_set_input_text(ex, name, value, &err) == WF_OK, "%s", err.message);
    }
    wfl_exec_state st;
    ck_assert_int_eq(wfl_exec_run(ex, &st, &err), WF_OK);
    for (size_t i = 0; i < in->event_count && st == WFL_EXEC_IDLE; i++) {
        char name[128];
        const char *value;
        split(in->events[i], name, sizeof name, &value);
        const char *q = wfl_exec_queue_find(ex, name);
        ck_assert_msg(q != NULL, "legacy does not wait for %s", name);
        wf_value v = payload(types, value);
        ck_assert_int_eq(wfl_exec_deliver(ex, q, &v, &st, &err), WF_OK);
        wf_value_release(&v);
    }
    o->state = legacy_state(st);
    for (size_t i = 0; i < wfl_exec_output_count(ex) && o->count < 32; i++) {
        o->names[o->count] = strdup(wfl_exec_output_name(ex, i));
        ck_assert_int_eq(wfl_exec_output_value(ex, i, &o->values[o->count], &err), WF_OK);
        o->count++;
    }
    wfl_exec_destroy(ex);
    wfl_definition_destroy(def);
}

static void discard(void *ud, const char *text, size_t len)
{
    (void)ud;
    (void)text;
    (void)len;
}

/* The bookmark called `name`, or whose part after the last '.' is `name`. */
static const char *find_bookmark(wfm_instance *inst, const char *name)
{
    for (size_t i = 0; i < wfm_instance_bookmark_count(inst); i++) {
        const char *b = wfm_instance_bookmark_name(inst, i);
        const char *dot = strrchr(b, '.');
        if (strcmp(b, name) == 0 || (dot && strcmp(dot + 1, name) == 0))
            return b;
    }
    return NULL;
}

static void set_modern_input(wfm_instance *inst, const wfm_definition *def, wf_types *types,
                             const char *assignment)
{
    char name[128];
    const char *text;
    split(assignment, name, sizeof name, &text);
    size_t index;
    if (!wfm_definition_arg_find(def, name, &index) ||
        wfm_definition_arg_dir(def, index) == WFM_PROP_OUT)
        return; /* the converted workflow never reads it */
    wf_value v = wf_null();
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_value_parse(types, wfm_definition_arg_type(def, index), text, &v, &err),
                     WF_OK);
    ck_assert_int_eq(wfm_instance_set_input(inst, name, &v, &err), WF_OK);
    wf_value_release(&v);
}

static const char *modern_state(wfm_instance_state s)
{
    return s == WFM_INSTANCE_CLOSED ? "Closed" : s == WFM_INSTANCE_IDLE ? "Idle" : "Failed";
}

static void run_modern(const char *xaml, const wfc_test_inputs *in, const wf_libpath *lp,
                       outcome *o)
{
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    ro.libpath = lp;
    ro.write = discard;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&ro, &rt, &err), WF_OK);
    ck_assert_int_eq(wfb_interop_register(wfm_runtime_catalogue(rt), &err), WF_OK);
    ck_assert_msg(wfm_runtime_load(rt, xaml, &def, NULL, &err) == WF_OK, "%s:%u:%u: %s", xaml,
                  err.line, err.col, err.message);
    ck_assert_int_eq(wfm_instance_create(rt, def, &inst, &err), WF_OK);
    for (size_t i = 0; i < in->arg_count; i++)
        set_modern_input(inst, def, wfm_runtime_types(rt), in->args[i]);
    ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    for (size_t i = 0; i < in->event_count; i++) {
        if (wfm_instance_state_get(inst) != WFM_INSTANCE_IDLE)
            break;
        char name[128];
        const char *value;
        split(in->events[i], name, sizeof name, &value);
        const char *b = find_bookmark(inst, name);
        ck_assert_msg(b != NULL, "modern does not wait for %s", name);
        wf_value v = payload(wfm_runtime_types(rt), value);
        ck_assert_int_eq(wfm_instance_resume(inst, b, &v, &err), WF_OK);
        wf_value_release(&v);
        ck_assert_int_eq(wfm_instance_run(inst, &err), WF_OK);
    }
    o->state = modern_state(wfm_instance_state_get(inst));
    for (size_t i = 0; i < wfm_instance_output_count(inst) && o->count < 32; i++) {
        o->names[o->count] = strdup(wfm_instance_output_name(inst, i));
        o->values[o->count] = wf_value_retain(wfm_instance_output_value(inst, i));
        o->count++;
    }
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
}

static char *text_of(const wf_value *v)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_value_to_json(v, &b);
    size_t len;
    return wf_buf_detach(&b, &len);
}

/* Native exceptions name their function differently in each runtime: compare their types. */
static bool same_value(const wf_value *a, const wf_value *b)
{
    if (a->type->kind == WF_K_EXCEPTION || b->type->kind == WF_K_EXCEPTION)
        return a->type == b->type;
    return wf_value_equal(a, b);
}

/* "NAME=TEXT": output NAME of o is TEXT (a string as it is, any other value as JSON), or
 * "state=S": o ended in state S. */
static void expect_output(const char *file, const outcome *o, const char *want)
{
    char name[128];
    const char *text;
    split(want, name, sizeof name, &text);
    if (strcmp(name, "state") == 0) {
        ck_assert_msg(strcmp(o->state, text) == 0, "%s: state %s, WF3 %s", file, o->state, text);
        return;
    }
    for (size_t i = 0; i < o->count; i++) {
        if (strcmp(o->names[i], name) != 0)
            continue;
        const wf_value *v = &o->values[i];
        wf_buf got;
        wf_buf_init(&got);
        if (v->type->kind == WF_K_STRING)
            wf_buf_adds(&got, wf_value_str(v));
        else
            wf_value_to_json(v, &got);
        bool same = strcmp(got.data, text) == 0;
        ck_assert_msg(same, "%s: %s is %s, WF3 gives %s", file, name, got.data, text);
        wf_buf_fini(&got);
        return;
    }
    ck_abort_msg("%s: no output %s", file, name);
}

void wfc_test_same_outcome(const char *xoml, const char *xaml, const wfc_test_inputs *in)
{
    wf_types *types = wf_types_create();
    wf_libpath *lp = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(wfc_test_lib_dirs(), &lp, &err), WF_OK);
    outcome legacy = {0}, modern = {0};
    run_legacy(xoml, in, types, lp, &legacy);
    /* the composites generated for Interop lie beside the XAML */
    char dirs[2048];
    const char *slash = strrchr(xaml, '/');
    snprintf(dirs, sizeof dirs, "%.*s:%s", slash ? (int)(slash - xaml) : 1, slash ? xaml : ".",
             wfc_test_lib_dirs());
    wf_libpath *mlp = NULL;
    ck_assert_int_eq(wf_libpath_create(dirs, &mlp, &err), WF_OK);
    run_modern(xaml, in, mlp, &modern);
    wf_libpath_destroy(mlp);
    ck_assert_msg(strcmp(legacy.state, modern.state) == 0, "%s: legacy %s, modern %s", xaml,
                  legacy.state, modern.state);
    for (size_t i = 0; i < modern.count; i++) {
        size_t k = 0;
        while (k < legacy.count && strcmp(legacy.names[k], modern.names[i]) != 0)
            k++;
        ck_assert_msg(k < legacy.count, "%s: output %s is not a legacy property", xaml,
                      modern.names[i]);
        if (!same_value(&legacy.values[k], &modern.values[i])) {
            char *l = text_of(&legacy.values[k]), *m = text_of(&modern.values[i]);
            ck_abort_msg("%s: %s is %s in legacy, %s in modern", xaml, modern.names[i], l, m);
        }
    }
    for (size_t i = 0; i < in->expect_count; i++) {
        expect_output(xoml, &legacy, in->expects[i]);
        expect_output(xaml, &modern, in->expects[i]);
    }
    outcome_free(&legacy);
    outcome_free(&modern);
    wf_libpath_destroy(lp);
    wf_types_destroy(types);
}

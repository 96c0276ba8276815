/* test_acttype.c — XAML activity types (docs/architecture.md "XAML activity types"): an
 * <Activity x:Class="NS.Name"> file on the library path used as <p:Name Arg="[x]"/> by another
 * definition: arguments in, out and in-out, isolation from the caller, several and nested
 * uses, persistence inside a type's body, and every load error located. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../modern/wfm_node.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_modern.h"

#define DATA "tests/modern/data/acttypes/"
#define LIB DATA "lib"

static void open_type(wfm_test_run *r, const char *file)
{
    wfm_test_cfg cfg = {.workers = 1, .lib_dir = LIB};
    wfm_test_start(r, &cfg);
    wfm_test_load_file(r, file);
}

#define ASSERT_OUT(r, want)                                                                        \
    ck_assert_str_eq((r).out.data ? (r).out.data : "", (want))

START_TEST(test_arguments_in_out_inout_two_uses)
{
    wfm_test_run r;
    open_type(&r, DATA "uses.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    /* first use: Who from the type's default, Count copied back; second: literal In, Out */
    ASSERT_OUT(r, "approve bob:5\napprove carol:7\ncaller c=3 last=carol:7 ok\n");
    ck_assert_str_eq(wf_value_str(wfm_instance_output(r.inst, "Last")), "carol:7 ok");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_nested_types)
{
    wfm_test_run r;
    open_type(&r, DATA "nested.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ASSERT_OUT(r, "approve outer:6\nouter got outer:6 ok\n");
    ck_assert_int_eq(wfm_instance_output(r.inst, "Seen")->u.i32, 11);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_nodes_belong_to_one_definition)
{
    wfm_test_run r;
    open_type(&r, DATA "uses.xaml");
    /* the wrapper of each use is an activity of the definition, its body numbered under it */
    const wfm_node *seq = wfm_definition_root(r.def);
    ck_assert_str_eq(wfm_node_display_name(seq), "Sequence");
    size_t n = wfm_definition_node_count(r.def);
    bool second = false;
    for (size_t i = 0; i < n; i++) {
        const wfm_node *node = wfm_definition_node_at(r.def, i);
        if (strcmp(wfm_node_display_name(node), "second") == 0) {
            second = true;
            ck_assert_str_eq(wfm_node_id(node), "1.2");
        }
    }
    ck_assert(second);
    ck_assert_uint_gt(n, 10);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_save_restore_inside_type_body)
{
    wfm_test_run r;
    open_type(&r, DATA "wait.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    wfm_test_save_restore(&r);
    wf_value yes;
    ck_assert_int_eq(wf_value_string("yes", 3, &yes), WF_OK);
    wfm_test_resume(&r, "go", &yes);
    wf_value_release(&yes);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ASSERT_OUT(r, "asking boss\nanswered yes\ncaller got yes\n");
    wfm_test_close(&r);
}
END_TEST

/* ---- bad input -------------------------------------------------------------------------- */
/* Loading DATA file with the library path fails with code at file_want:line:col. */
static void type_error(const char *file, wf_status code, const char *file_want, unsigned line,
                       unsigned col, const char *needle)
{
    wfm_test_run r;
    wfm_test_cfg cfg = {.workers = 1, .lib_dir = LIB};
    wfm_test_start(&r, &cfg);
    char path[256];
    snprintf(path, sizeof path, DATA "%s", file);
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = (wfm_definition *)&def;
    ck_assert_int_ne(wfm_runtime_load(r.rt, path, &def, NULL, &err), WF_OK);
    ck_assert_ptr_null(def);
    WF_ASSERT_ERROR(err, code, line, col, needle);
    ck_assert_msg(strstr(err.file, file_want) != NULL, "%s not %s", err.file, file_want);
    wfm_test_close(&r);
}

START_TEST(test_body_cannot_see_caller_variables)
{
    type_error("isolation.xaml", WF_E_NAME, "lib/Peek.xaml", 2, 21, "unknown name 'Secret'");
}
END_TEST

START_TEST(test_cycle_refused)
{
    type_error("cycle.xaml", WF_E_SCHEMA, "lib/Loop2.xaml", 3, 5,
               "activity type 'Acme.Loop1' uses itself");
}
END_TEST

START_TEST(test_not_on_library_path)
{
    type_error("missing.xaml", WF_E_SCHEMA, "missing.xaml", 7, 5,
               "no Nope.xaml on the library path");
}
END_TEST

START_TEST(test_unknown_argument)
{
    type_error("unknown_arg.xaml", WF_E_NAME, "unknown_arg.xaml", 7, 27,
               "unknown argument 'Amout' of activity type Approve");
}
END_TEST

START_TEST(test_wrong_type)
{
    type_error("wrong_type.xaml", WF_E_TYPE, "wrong_type.xaml", 7, 24, "many");
}
END_TEST

START_TEST(test_out_needs_location)
{
    type_error("out_literal.xaml", WF_E_SCHEMA, "out_literal.xaml", 7, 24,
               "Approve.Result requires a location");
}
END_TEST

START_TEST(test_inout_location_type)
{
    type_error("out_type.xaml", WF_E_TYPE, "out_type.xaml", 7, 23,
               "cannot be bound to a location of type String");
}
END_TEST

START_TEST(test_class_must_match)
{
    type_error("wrong_class.xaml", WF_E_SCHEMA, "lib/Wrong.xaml", 1, 20,
               "must be <Activity x:Class=\"Acme.Wrong\">");
}
END_TEST

START_TEST(test_error_inside_type_file)
{
    type_error("broken.xaml", WF_E_SCHEMA, "lib/Broken.xaml", 2, 23, "unknown attribute 'Colour'");
}
END_TEST

START_TEST(test_no_content)
{
    type_error("content.xaml", WF_E_SCHEMA, "content.xaml", 7, 16, "cannot appear in activity type");
}
END_TEST

/* Without a library path the element stays an unknown custom activity. */
START_TEST(test_no_library_path)
{
    wfm_test_load_error(DATA, "uses.xaml", WF_E_SCHEMA, 10, 5,
                        "a custom activity from assembly 'AcmeFlows'");
}
END_TEST

/* ---- limits ------------------------------------------------------------------------------ */
/* A chain of distinct types deeper than the nesting limit is refused at the deepest use. */
START_TEST(test_nesting_limit)
{
    char dir[] = "/tmp/wfm_acttype_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static const char head[] =
        "<Activity x:Class=\"D.T%d\" xmlns:d=\"clr-namespace:D;assembly=Deep\" "
        "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "
        "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n";
    for (int i = 0; i < 20; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/T%d.xaml", dir, i);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, head, i);
        if (i == 19)
            fprintf(f, "  <WriteLine Text=\"deep\" />\n</Activity>\n");
        else
            fprintf(f, "  <d:T%d />\n</Activity>\n", i + 1);
        fclose(f);
    }
    wfm_test_run r;
    wfm_test_cfg cfg = {.workers = 1, .lib_dir = dir};
    wfm_test_start(&r, &cfg);
    char main_path[512];
    snprintf(main_path, sizeof main_path, "%s/T0.xaml", dir);
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_load(r.rt, main_path, &def, NULL, &err), WF_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err.message, "nested more than 16 types deep"));
    ck_assert_ptr_nonnull(strstr(err.file, "T16.xaml"));
    ck_assert_uint_eq(err.line, 2);
    wfm_test_close(&r);
    for (int i = 0; i < 20; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/T%d.xaml", dir, i);
        remove(path);
    }
    rmdir(dir);
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------- */
typedef struct nomem_ud {
    wf_libpath *lp;
    const char *file;
} nomem_ud;

static wf_status load_op(void *ud)
{
    nomem_ud *u = ud;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.libpath = u->lp;
    o.write = wfm_test_discard;
    wfm_runtime *rt = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfm_runtime_create(&o, &rt, &err);
    if (rc != WF_OK)
        return rc;
    wfm_definition *def = NULL;
    rc = wfm_runtime_load(rt, u->file, &def, NULL, &err);
    if (rc != WF_OK)
        ck_assert_ptr_null(def);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    return rc;
}

START_TEST(test_nomem_load)
{
    nomem_ud u = {NULL, DATA "nested.xaml"};
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(LIB, &u.lp, &err), WF_OK);
    unsigned runs = wf_test_nomem_loop(load_op, &u, 20000);
    ck_assert_uint_gt(runs, 10);
    ck_assert_int_eq(load_op(&u), WF_OK);
    u.file = DATA "cycle.xaml"; /* failing loads release what they read, too */
    wf_test_nomem_loop(load_op, &u, 20000);
    ck_assert_int_eq(load_op(&u), WF_E_SCHEMA);
    wf_libpath_destroy(u.lp);
}
END_TEST

Suite *acttype_suite(void)
{
    Suite *s = suite_create("acttype");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_arguments_in_out_inout_two_uses);
    tcase_add_test(tc, test_nested_types);
    tcase_add_test(tc, test_nodes_belong_to_one_definition);
    tcase_add_test(tc, test_save_restore_inside_type_body);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad_input");
    tcase_add_test(tc, test_body_cannot_see_caller_variables);
    tcase_add_test(tc, test_cycle_refused);
    tcase_add_test(tc, test_not_on_library_path);
    tcase_add_test(tc, test_unknown_argument);
    tcase_add_test(tc, test_wrong_type);
    tcase_add_test(tc, test_out_needs_location);
    tcase_add_test(tc, test_inout_location_type);
    tcase_add_test(tc, test_class_must_match);
    tcase_add_test(tc, test_error_inside_type_file);
    tcase_add_test(tc, test_no_content);
    tcase_add_test(tc, test_no_library_path);
    suite_add_tcase(s, tc);
    tc = tcase_create("limits");
    tcase_add_test(tc, test_nesting_limit);
    suite_add_tcase(s, tc);
    tc = tcase_create("nomem");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_nomem_load);
    suite_add_tcase(s, tc);
    return s;
}

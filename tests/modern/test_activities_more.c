/* test_activities_more.c — the activities of modern/wfm_act_coll.c on the modern runtime:
 * NoPersistScope (saves refused inside, allowed after), the collection activities over a
 * List(T) location, InvokeAction / InvokeAction<T>, plus WriteLine.TextWriter (accepted with a
 * warning). Load errors are asserted with line:col. Fixtures: tests/modern/data/more/. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_durable.h"
#include "../../modern/wfm_persist.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_modern.h"

#define MORE_DIR "tests/modern/data/more/"
#define HEAD                                                                                       \
    "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "   \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "                                    \
    "xmlns:scg=\"clr-namespace:System.Collections.Generic;assembly=mscorlib\">"

typedef wfm_test_run more_run;

static void run_open_at(more_run *r, const char *name, const char *xaml)
{
    if (xaml) {
        wfm_test_open_mem(r, name, xaml);
        return;
    }
    char path[256];
    snprintf(path, sizeof path, MORE_DIR "%s", name);
    wfm_test_open_file(r, path);
}

static void run_open(more_run *r, const char *file)
{
    run_open_at(r, file, NULL);
}

static void resume_int(more_run *r, const char *bookmark, int32_t n)
{
    wf_value v = wf_int32(n);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_resume(r->inst, bookmark, &v, &err) == WF_OK, "%s", err.message);
}

static void load_expect_error(const char *file, wf_status code, unsigned line, unsigned col,
                              const char *needle)
{
    wfm_test_load_error(MORE_DIR "bad/", file, code, line, col, needle);
}

/* ---- NoPersistScope ------------------------------------------------------------------------ */
START_TEST(test_no_persist_scope_refuses_save_inside_allows_after)
{
    more_run r;
    run_open(&r, "nopersist.xaml");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(r.out.data, "inside\n");
    wf_buf blob;
    wf_buf_init(&blob);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_save(r.inst, &blob, &err), WF_E_STATE);
    ck_assert_ptr_nonnull(strstr(err.message, "no-persist"));
    ck_assert_ptr_nonnull(strstr(err.message, "NoPersistScope 'critical'"));
    resume_int(&r, "inner", 1);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(r.out.data, "inside\nbetween\n");
    /* The scope has closed: the instance persists and continues after a restore. */
    wf_buf_reset(&blob);
    ck_assert_msg(wfm_instance_save(r.inst, &blob, &err) == WF_OK, "save: %s", err.message);
    wfm_instance_destroy(r.inst);
    r.inst = NULL;
    ck_assert_msg(wfm_instance_restore(r.rt, r.def, blob.data, blob.len, &r.inst, &err) == WF_OK,
                  "restore: %s", err.message);
    wf_buf_fini(&blob);
    resume_int(&r, "outer", 2);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "inside\nbetween\ndone\n");
    wfm_test_close(&r);
}
END_TEST

/* Under a durable host (persist + unload as soon as idle) the idle inside the scope is not
 * saved; the next idle after it is. */
START_TEST(test_no_persist_scope_defers_the_durable_hosts_persist)
{
    char dir[256], db[512];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(db, sizeof db, "%s/more.db", dir);
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = db;
    so.owner = "more-host";
    so.durability = WFM_DURABILITY_NORMAL;
    wf_error err = WF_ERROR_INIT;
    wfm_store *store = NULL;
    ck_assert_int_eq(wfm_store_open(&so, &store, &err), WF_OK);
    more_run r;
    run_open(&r, "nopersist.xaml");
    wfm_host_opts ho = WFM_HOST_OPTS_INIT;
    ho.renew_ms = -1;
    wfm_host *host = NULL;
    ck_assert_int_eq(wfm_host_create(r.rt, store, &ho, &host, &err), WF_OK);
    wfm_dinst *d = NULL;
    ck_assert_int_eq(wfm_host_new(host, r.def, &d, &err), WF_OK);
    ck_assert_msg(wfm_host_run(host, d, &err) == WF_OK, "%s", err.message);
    ck_assert_uint_eq(wfm_dinst_saves(d), 0);
    ck_assert(wfm_dinst_loaded(d));
    ck_assert_int_eq(wfm_host_persist(host, d, false, &err), WF_E_STATE);
    ck_assert_ptr_nonnull(strstr(err.message, "no-persist zone"));
    wf_error_clear(&err);
    wf_value v = wf_int32(1);
    ck_assert_int_eq(wfm_host_resume(host, d, "inner", &v, &err), WF_OK);
    ck_assert_msg(wfm_host_run(host, d, &err) == WF_OK, "%s", err.message);
    ck_assert_uint_eq(wfm_dinst_saves(d), 1);
    ck_assert(!wfm_dinst_loaded(d));
    wfm_dinst_close(d);
    wfm_host_destroy(host);
    wfm_store_close(store);
    wfm_test_close(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* Canceled with its body (the losing Pick branch): the zone ends and the instance persists. */
START_TEST(test_no_persist_scope_cancels_its_body)
{
    more_run r;
    run_open_at(&r, "pick.xaml",
                HEAD "<Pick>"
                     "<PickBranch><PickBranch.Trigger><NoPersistScope>"
                     "<InvokeAction x:TypeArguments=\"x:String\" Argument=\"a\">"
                     "<ActivityAction x:TypeArguments=\"x:String\">"
                     "<ActivityAction.Argument>"
                     "<DelegateInArgument x:TypeArguments=\"x:String\" Name=\"b\"/>"
                     "</ActivityAction.Argument>"
                     "<WaitForEvent x:TypeArguments=\"x:Int32\" BookmarkName=\"[b]\"/>"
                     "</ActivityAction></InvokeAction>"
                     "</NoPersistScope></PickBranch.Trigger>"
                     "<WriteLine Text=\"a won\"/></PickBranch>"
                     "<PickBranch><PickBranch.Trigger>"
                     "<WaitForEvent x:TypeArguments=\"x:Int32\" BookmarkName=\"b\"/>"
                     "</PickBranch.Trigger><Sequence><WriteLine Text=\"b won\"/>"
                     "<WaitForEvent x:TypeArguments=\"x:Int32\" BookmarkName=\"c\"/>"
                     "</Sequence></PickBranch>"
                     "</Pick></Activity>");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_uint_eq(wfm_instance_bookmark_count(r.inst), 2);
    resume_int(&r, "b", 0);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(r.out.data, "b won\n");
    ck_assert_uint_eq(wfm_instance_bookmark_count(r.inst), 1);
    wf_buf blob;
    wf_buf_init(&blob);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_save(r.inst, &blob, &err) == WF_OK, "save: %s", err.message);
    wf_buf_fini(&blob);
    resume_int(&r, "c", 0);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_no_persist_scope_with_persist_inside_is_a_load_error)
{
    load_expect_error("nps_contains_persist.xaml", WF_E_SCHEMA, 6, 7,
                      "NoPersistScope 'zone' cannot contain the Persist activity 'save'");
}
END_TEST

/* ---- collections --------------------------------------------------------------------------- */
START_TEST(test_collection_activities_update_the_list_location)
{
    more_run r;
    run_open(&r, "collections.xaml");
    wf_value in;
    wf_value items[1];
    ck_assert_int_eq(wf_value_cstring("first", &items[0]), WF_OK);
    ck_assert_int_eq(
        wf_value_list(wf_types_list(wfm_runtime_types(r.rt), &wf_type_string), items, 1, &in),
        WF_OK);
    wf_value_release(&items[0]);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_set_input(r.inst, "Names", &in, &err), WF_OK);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "a,b,a\n"
                                 "exists b: True\n"
                                 "exists c: False\n"
                                 "b,a removed: True\n"
                                 "b,a removed: False\n"
                                 "0\n");
    /* The host's list is a value: its copy is unchanged, the output holds the new list. */
    ck_assert_uint_eq(wf_value_list_count(&in), 1);
    wf_value_release(&in);
    const wf_value *out = wfm_instance_output(r.inst, "Names");
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(wf_value_list_count(out), 2);
    ck_assert_str_eq(wf_value_str(wf_value_list_at(out, 0)), "first");
    ck_assert_str_eq(wf_value_str(wf_value_list_at(out, 1)), "host");
    wfm_test_close(&r);
}
END_TEST

/* Numbers compare by value and null items by identity of null (EqualityComparer.Default). */
START_TEST(test_collection_item_equality_numbers_and_null)
{
    more_run r;
    run_open_at(
        &r, "eq.xaml",
        HEAD "<Sequence>"
             "<Sequence.Variables>"
             "<Variable x:TypeArguments=\"scg:List(x:Int32)\" Name=\"n\""
             " Default=\"[new List&lt;int&gt; { 1, 2, 2, 3 }]\"/>"
             "<Variable x:TypeArguments=\"scg:List(x:String)\" Name=\"s\""
             " Default=\"[new List&lt;string&gt; { &quot;x&quot; }]\"/>"
             "<Variable x:TypeArguments=\"x:Boolean\" Name=\"b\"/>"
             "</Sequence.Variables>"
             "<RemoveFromCollection x:TypeArguments=\"x:Int32\" Collection=\"[n]\""
             " Item=\"[1 + 1]\" Result=\"[b]\"/>"
             "<WriteLine Text=\"[String.Join(&quot;,&quot;, n) + &quot; &quot; + b.ToString()]\"/>"
             "<ExistsInCollection x:TypeArguments=\"x:String\" Collection=\"[s]\""
             " Item=\"{x:Null}\" Result=\"[b]\"/>"
             "<WriteLine Text=\"[b.ToString()]\"/>"
             "<AddToCollection x:TypeArguments=\"x:String\" Collection=\"[s]\" Item=\"{x:Null}\"/>"
             "<ExistsInCollection x:TypeArguments=\"x:String\" Collection=\"[s]\""
             " Item=\"{x:Null}\" Result=\"[b]\"/>"
             "<WriteLine Text=\"[b.ToString() + s.Count.ToString()]\"/>"
             "<RemoveFromCollection x:TypeArguments=\"x:String\" Collection=\"[s]\""
             " Item=\"{x:Null}\"/>"
             "<WriteLine Text=\"[s.Count.ToString()]\"/>"
             "</Sequence></Activity>");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "1,2,3 True\nFalse\nTrue2\n1\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_collection_null_list_faults_with_location)
{
    more_run r;
    run_open_at(&r, "null.xaml",
                HEAD "<Sequence>"
                     "<Sequence.Variables>"
                     "<Variable x:TypeArguments=\"scg:List(x:String)\" Name=\"s\"/>"
                     "</Sequence.Variables>\n"
                     "  <AddToCollection DisplayName=\"add it\" x:TypeArguments=\"x:String\""
                     " Collection=\"[s]\" Item=\"a\"/>"
                     "</Sequence></Activity>");
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_FAULTED);
    const wf_value *exc = wfm_instance_fault(r.inst);
    ck_assert_str_eq(exc->type->name, "InvalidOperationException");
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(exc), "'add it' requires a non-null"));
    ck_assert_uint_eq(wfm_instance_fault_loc(r.inst).line, 2);
    ck_assert_uint_eq(wfm_instance_fault_loc(r.inst).col, 3);
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_collection_missing_item)
{
    load_expect_error("coll_missing_item.xaml", WF_E_SCHEMA, 9, 5,
                      "AddToCollection.Item is required");
}
END_TEST

START_TEST(test_collection_missing_collection)
{
    load_expect_error("coll_missing_collection.xaml", WF_E_SCHEMA, 9, 5,
                      "ClearCollection.Collection is required");
}
END_TEST

START_TEST(test_collection_wrong_collection_type)
{
    load_expect_error("coll_wrong_collection_type.xaml", WF_E_TYPE, 9, 61, "List(Int32)");
}
END_TEST

START_TEST(test_collection_item_wrong_type)
{
    load_expect_error("coll_item_wrong_type.xaml", WF_E_TYPE, 9, 77, "abc");
}
END_TEST

START_TEST(test_collection_needs_type_arguments)
{
    load_expect_error("coll_no_type_arguments.xaml", WF_E_SCHEMA, 9, 5,
                      "ClearCollection needs x:TypeArguments");
}
END_TEST

START_TEST(test_collection_long_form_in_argument_refused)
{
    load_expect_error("coll_long_form_inargument.xaml", WF_E_SCHEMA, 10, 35,
                      "InArgument cannot appear in AddToCollection.Collection");
}
END_TEST

START_TEST(test_collection_not_a_location)
{
    load_expect_error("coll_collection_not_location.xaml", WF_E_SCHEMA, 9, 66,
                      "requires a location expression");
}
END_TEST

/* ---- InvokeAction ------------------------------------------------------------------------- */
START_TEST(test_invoke_action_runs_the_action_with_its_argument)
{
    more_run r;
    run_open(&r, "invoke_action.xaml");
    wf_value who;
    ck_assert_int_eq(wf_value_cstring("world", &who), WF_OK);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_set_input(r.inst, "Who", &who, &err), WF_OK);
    wf_value_release(&who);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(r.out.data, "hello world\nno argument\n");
    ck_assert_str_eq(wfm_instance_bookmark_name(r.inst, 0), "wait4");
    /* The action's body is the InvokeAction's child: it persists and resumes like one. */
    wf_buf blob;
    wf_buf_init(&blob);
    ck_assert_msg(wfm_instance_save(r.inst, &blob, &err) == WF_OK, "save: %s", err.message);
    wfm_instance_destroy(r.inst);
    r.inst = NULL;
    ck_assert_msg(wfm_instance_restore(r.rt, r.def, blob.data, blob.len, &r.inst, &err) == WF_OK,
                  "restore: %s", err.message);
    wf_buf_fini(&blob);
    resume_int(&r, "wait4", 0);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "hello world\nno argument\nend\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_invoke_action_missing_argument)
{
    load_expect_error("invoke_action_missing_argument.xaml", WF_E_SCHEMA, 4, 3,
                      "InvokeAction.Argument is required");
}
END_TEST

START_TEST(test_invoke_action_argument_needs_type_arguments)
{
    load_expect_error("invoke_action_argument_without_type.xaml", WF_E_SCHEMA, 4, 3,
                      "InvokeAction.Argument needs x:TypeArguments");
}
END_TEST

START_TEST(test_invoke_action_wrong_action_type)
{
    load_expect_error("invoke_action_wrong_action_type.xaml", WF_E_TYPE, 5, 38, "Int32");
}
END_TEST

/* ---- WriteLine.TextWriter ------------------------------------------------------------------ */
START_TEST(test_writeline_text_writer_is_ignored_with_a_warning)
{
    const char *xaml = HEAD "<Sequence>\n"
                            "  <WriteLine TextWriter=\"[Console.Out]\" Text=\"hi\"/>"
                            "</Sequence></Activity>";
    wfm_runtime *rt = NULL;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    wf_diags *diags = wf_diags_create();
    ck_assert_ptr_nonnull(diags);
    wfm_definition *def = NULL;
    ck_assert_int_eq(wfm_runtime_load_mem(rt, "tw.xaml", xaml, strlen(xaml), &def, diags, &err),
                     WF_OK);
    ck_assert_uint_eq(wf_diags_count(diags), 1);
    ck_assert_uint_eq(wf_diags_error_count(diags), 0);
    const wf_diag *d = wf_diags_get(diags, 0);
    ck_assert_int_eq(d->severity, WF_SEV_WARNING);
    ck_assert_uint_eq(d->error.line, 2);
    ck_assert_uint_eq(d->error.col, 3);
    ck_assert_ptr_nonnull(strstr(d->error.message, "TextWriter is ignored"));
    wf_diags_destroy(diags);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);

    more_run r;
    run_open_at(&r, "tw.xaml", xaml);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "hi\n");
    wfm_test_close(&r);
}
END_TEST

START_TEST(test_writeline_other_unknown_attribute_still_an_error)
{
    const char *xaml = HEAD "<Sequence>\n"
                            "  <WriteLine Text=\"hi\" Colour=\"red\"/>"
                            "</Sequence></Activity>";
    wfm_runtime *rt = NULL;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &rt, &err), WF_OK);
    wfm_definition *def = (wfm_definition *)&def;
    ck_assert_int_ne(wfm_runtime_load_mem(rt, "tw.xaml", xaml, strlen(xaml), &def, NULL, &err),
                     WF_OK);
    ck_assert_ptr_null(def);
    WF_ASSERT_ERROR(err, WF_E_SCHEMA, 2, 24, "unknown attribute 'Colour' on WriteLine");
    wfm_runtime_destroy(rt);
}
END_TEST

/* ---- nomem --------------------------------------------------------------------------- */
/* A scripted run of a loaded definition with a writer that does not allocate. */
typedef struct nomem_case {
    wfm_runtime *rt;
    wfm_definition *def;
    const char *const *resumes; /* NULL-terminated bookmarks resumed in turn, or NULL */
    const char *want_out;
    wfm_test_fixed_out out;
    wf_status last;
} nomem_case;

static wf_status nomem_op(void *ud)
{
    nomem_case *c = ud;
    wfm_test_fixed_reset(&c->out);
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status st = wfm_instance_create(c->rt, c->def, &inst, &err);
    if (st == WF_OK) {
        wfm_instance_set_writer(inst, wfm_test_capture_fixed, &c->out);
        st = wfm_test_nomem_step(inst);
    }
    for (size_t i = 0; st == WF_OK && c->resumes && c->resumes[i]; i++) {
        wf_value v = wf_int32(0);
        st = wfm_instance_resume(inst, c->resumes[i], &v, &err);
        if (st == WF_OK)
            st = wfm_test_nomem_step(inst);
    }
    if (st == WF_OK &&
        (wfm_instance_state_get(inst) != WFM_INSTANCE_CLOSED ||
         strcmp(c->out.text, c->want_out) != 0))
        st = WF_E_FAULT;
    wfm_instance_destroy(inst);
    c->last = st;
    return st;
}

static void nomem_expect(const char *file, const char *const *resumes, const char *want_out)
{
    nomem_case c;
    memset(&c, 0, sizeof c);
    c.resumes = resumes;
    c.want_out = want_out;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &c.rt, &err), WF_OK);
    char path[256];
    snprintf(path, sizeof path, MORE_DIR "%s", file);
    ck_assert_int_eq(wfm_runtime_load(c.rt, path, &c.def, NULL, &err), WF_OK);
    unsigned failing = wf_test_nomem_loop(nomem_op, &c, 3000);
    ck_assert_uint_gt(failing, 0);
    ck_assert_msg(c.last == WF_OK, "run after %u failing runs: status %d, output '%s'", failing,
                  (int)c.last, c.out.text);
    wfm_definition_release(c.def);
    wfm_runtime_destroy(c.rt);
}

START_TEST(test_nomem_in_collection_activities)
{
    nomem_expect("collections.xaml", NULL,
                 "a,b,a\nexists b: True\nexists c: False\nb,a removed: True\n"
                 "b,a removed: False\n0\n");
}
END_TEST

START_TEST(test_nomem_in_invoke_action)
{
    static const char *const resumes[] = {"wait4", NULL};
    nomem_expect("invoke_action.xaml", resumes, "hello \nno argument\nend\n");
}
END_TEST

START_TEST(test_nomem_in_no_persist_scope)
{
    static const char *const resumes[] = {"inner", "outer", NULL};
    nomem_expect("nopersist.xaml", resumes, "inside\nbetween\ndone\n");
}
END_TEST

Suite *modern_activities_more_suite(void)
{
    Suite *s = suite_create("modern_activities_more");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_no_persist_scope_refuses_save_inside_allows_after);
    tcase_add_test(core, test_no_persist_scope_defers_the_durable_hosts_persist);
    tcase_add_test(core, test_no_persist_scope_cancels_its_body);
    tcase_add_test(core, test_collection_activities_update_the_list_location);
    tcase_add_test(core, test_collection_item_equality_numbers_and_null);
    tcase_add_test(core, test_invoke_action_runs_the_action_with_its_argument);
    tcase_add_test(core, test_writeline_text_writer_is_ignored_with_a_warning);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_no_persist_scope_with_persist_inside_is_a_load_error);
    tcase_add_test(bad, test_collection_null_list_faults_with_location);
    tcase_add_test(bad, test_collection_missing_item);
    tcase_add_test(bad, test_collection_missing_collection);
    tcase_add_test(bad, test_collection_wrong_collection_type);
    tcase_add_test(bad, test_collection_item_wrong_type);
    tcase_add_test(bad, test_collection_needs_type_arguments);
    tcase_add_test(bad, test_collection_long_form_in_argument_refused);
    tcase_add_test(bad, test_collection_not_a_location);
    tcase_add_test(bad, test_invoke_action_missing_argument);
    tcase_add_test(bad, test_invoke_action_wrong_action_type);
    tcase_add_test(bad, test_invoke_action_argument_needs_type_arguments);
    tcase_add_test(bad, test_writeline_other_unknown_attribute_still_an_error);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_set_timeout(nomem, 120);
    tcase_add_test(nomem, test_nomem_in_collection_activities);
    tcase_add_test(nomem, test_nomem_in_invoke_action);
    tcase_add_test(nomem, test_nomem_in_no_persist_scope);
    suite_add_tcase(s, nomem);
    return s;
}

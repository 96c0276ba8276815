/* test_bind.c — ActivityBind: the markup-extension forms, the Path grammar, values read and
 * written through paths into immutable records and lists, and run-time resolution on an
 * instance tree (/Self, /Parent, chains, two-way writes, clone first, the cycle guard). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_bind.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_inst_int.h"
#include "../wf_test_util.h"

static wf_arena *arena;

static void arena_setup(void)
{
    arena = wf_arena_create(0);
    ck_assert_ptr_nonnull(arena);
}

static void arena_teardown(void)
{
    wf_arena_destroy(arena);
}

static wfl_bind *parse_ok(const char *text)
{
    wfl_bind *b = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_loc at = {"t.xoml", 3, 10};
    ck_assert_msg(wfl_bind_parse_markup(arena, text, at, &b, &err) == WF_OK, "%s: %s", text,
                  err.message);
    return b;
}

/* ---- markup ------------------------------------------------------------------------------ */
START_TEST(test_markup_positional_and_named)
{
    wfl_bind *b = parse_ok("{ActivityBind Workflow1,Path=OrderId}");
    ck_assert_str_eq(b->name, "Workflow1");
    ck_assert_str_eq(b->path, "OrderId");
    ck_assert_uint_eq(b->seg_count, 1);
    ck_assert_uint_eq(b->loc.line, 3);
    b = parse_ok("{ActivityBind Workflow1, Order.Total}");
    ck_assert_str_eq(b->path, "Order.Total");
    ck_assert_uint_eq(b->seg_count, 2);
    b = parse_ok("{wf:ActivityBindExtension Path=Lines[2], Name=codeActivity1}");
    ck_assert_str_eq(b->name, "codeActivity1");
    ck_assert_int_eq(b->segs[1].index, 2);
    b = parse_ok("{ActivityBind Name='Workflow1', Path=\"Map['a,b'].X\"}");
    ck_assert_str_eq(b->path, "Map['a,b'].X");
    ck_assert_int_eq(b->segs[1].kind, WFL_SEG_KEY);
    ck_assert_str_eq(b->segs[1].name, "a,b");
    b = parse_ok("  {ActivityBind Workflow1}  ");
    ck_assert_uint_eq(b->seg_count, 0);
    b = parse_ok("{ActivityBind Items[\"k}\"], Path=Y}");
    ck_assert_str_eq(b->name, "Items[\"k}\"]");
}
END_TEST

START_TEST(test_is_markup)
{
    ck_assert(wfl_bind_is_markup("{ActivityBind W,Path=X}"));
    ck_assert(wfl_bind_is_markup("{ActivityBindExtension W}"));
    ck_assert(wfl_bind_is_markup("{ns1:ActivityBind W}"));
    ck_assert(!wfl_bind_is_markup("{}{ActivityBind W}"));
    ck_assert(!wfl_bind_is_markup("{x:Null}"));
    ck_assert(!wfl_bind_is_markup("{ActivityBinder W}"));
    ck_assert(!wfl_bind_is_markup("ActivityBind W"));
    ck_assert(!wfl_bind_is_markup(NULL));
}
END_TEST

typedef struct bad_markup {
    const char *text;
    unsigned col;
    const char *needle;
} bad_markup;

static const bad_markup bad_markups[] = {
    {"{ActivityBind W,Path=X", 32, "'}'"},
    {"{ActivityBind W,Foo=X}", 26, "Foo"},
    {"{ActivityBind W,X,Y}", 28, "positional"},
    {"{ActivityBind Path=X}", 10, "no Name"},
    {"{ActivityBind W} x", 27, "after"},
    {"{ActivityBind W,Path='X}", 31, "unterminated"},
    {"{ActivityBind W,Path=a..b}", 10, "member name"},
    {"{ActivityBind /Sibling,Path=X}", 10, "/Sibling"},
};

START_TEST(test_markup_errors_point_at_the_fault)
{
    const bad_markup *bm = &bad_markups[_i];
    wfl_bind *b = (wfl_bind *)1;
    wf_error err = WF_ERROR_INIT;
    wf_loc at = {"t.xoml", 3, 10};
    ck_assert_int_eq(wfl_bind_parse_markup(arena, bm->text, at, &b, &err), WF_E_SYNTAX);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 3, bm->col, bm->needle);
    ck_assert_ptr_null(b);
}
END_TEST

/* ---- paths ------------------------------------------------------------------------------- */
START_TEST(test_path_grammar)
{
    wfl_path_seg *segs = NULL;
    size_t n = 0;
    ck_assert_int_eq(wfl_bind_parse_path(arena, "Order.Lines[0].Sku", WF_LOC_NONE, &segs, &n,
                                         NULL),
                     WF_OK);
    ck_assert_uint_eq(n, 4);
    ck_assert_str_eq(segs[0].name, "Order");
    ck_assert_int_eq(segs[2].kind, WFL_SEG_INDEX);
    ck_assert_int_eq(segs[2].index, 0);
    ck_assert_str_eq(segs[3].name, "Sku");
    ck_assert_int_eq(wfl_bind_parse_path(arena, "/Total", WF_LOC_NONE, &segs, &n, NULL), WF_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(wfl_bind_parse_path(arena, "M[ \"x y\" ][ 12 ]", WF_LOC_NONE, &segs, &n,
                                         NULL),
                     WF_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(segs[1].name, "x y");
    ck_assert_int_eq(segs[2].index, 12);
    ck_assert_int_eq(wfl_bind_parse_path(arena, "", WF_LOC_NONE, &segs, &n, NULL), WF_OK);
    ck_assert_uint_eq(n, 0);
    static const char *const bad[] = {"a.", ".a", "a..b", "a[", "a[x]", "[0]", "a[1", "a b",
                                      "a[-1]", "a[99999999999]", "a['k"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wf_error err = WF_ERROR_INIT;
        ck_assert_msg(wfl_bind_parse_path(arena, bad[i], WF_LOC_NONE, &segs, &n, &err) ==
                          WF_E_SYNTAX,
                      "'%s' accepted", bad[i]);
        ck_assert_ptr_nonnull(strstr(err.message, "Path"));
    }
}
END_TEST

START_TEST(test_name_steps)
{
    bool rel = false;
    unsigned up = 9;
    ck_assert(wfl_bind_name_steps("/Self", &rel, &up));
    ck_assert(rel);
    ck_assert_uint_eq(up, 0);
    ck_assert(wfl_bind_name_steps("/Parent/Parent", &rel, &up));
    ck_assert_uint_eq(up, 2);
    ck_assert(wfl_bind_name_steps("Workflow1", &rel, &up));
    ck_assert(!rel);
    ck_assert(!wfl_bind_name_steps("/Parentx", &rel, &up));
    ck_assert(!wfl_bind_name_steps("/", &rel, &up));
}
END_TEST

/* {Customer: {City: "Oslo"}, Lines: [1, 2, 3]} */
static wf_value make_order(void)
{
    wf_value city = wf_null(), cust = wf_null(), lines = wf_null(), order = wf_null();
    ck_assert_int_eq(wf_value_cstring("Oslo", &city), WF_OK);
    const char *ck[] = {"City"};
    ck_assert_int_eq(wf_value_record(ck, &city, 1, &cust), WF_OK);
    wf_value items[] = {wf_int32(1), wf_int32(2), wf_int32(3)};
    ck_assert_int_eq(wf_value_list(&wf_type_list_object, items, 3, &lines), WF_OK);
    const char *ok[] = {"Customer", "Lines"};
    wf_value ov[] = {cust, lines};
    ck_assert_int_eq(wf_value_record(ok, ov, 2, &order), WF_OK);
    wf_value_release(&city);
    wf_value_release(&cust);
    wf_value_release(&lines);
    return order;
}

static wfl_path_seg *path(const char *text, size_t *n)
{
    wfl_path_seg *segs = NULL;
    ck_assert_int_eq(wfl_bind_parse_path(arena, text, WF_LOC_NONE, &segs, n, NULL), WF_OK);
    return segs;
}

START_TEST(test_value_paths_read)
{
    wf_value order = make_order(), out = wf_null();
    size_t n = 0;
    wfl_path_seg *s = path("Customer.City", &n);
    ck_assert_int_eq(wfl_value_path_get(&order, s, n, &out, NULL), WF_OK);
    ck_assert_str_eq(wf_value_str(&out), "Oslo");
    wf_value_release(&out);
    s = path("Customer.City.Length", &n);
    ck_assert_int_eq(wfl_value_path_get(&order, s, n, &out, NULL), WF_OK);
    ck_assert_int_eq(out.u.i32, 4);
    s = path("Lines.Count", &n);
    ck_assert_int_eq(wfl_value_path_get(&order, s, n, &out, NULL), WF_OK);
    ck_assert_int_eq(out.u.i32, 3);
    s = path("Lines[2]", &n);
    ck_assert_int_eq(wfl_value_path_get(&order, s, n, &out, NULL), WF_OK);
    ck_assert_int_eq(out.u.i32, 3);
    wf_error err = WF_ERROR_INIT;
    s = path("Lines[3]", &n);
    ck_assert_int_eq(wfl_value_path_get(&order, s, n, &out, &err), WF_E_RANGE);
    s = path("Customer.Zip", &n);
    ck_assert_int_eq(wfl_value_path_get(&order, s, n, &out, &err), WF_E_NAME);
    s = path("Lines.Sku", &n);
    ck_assert_int_eq(wfl_value_path_get(&order, s, n, &out, &err), WF_E_NAME);
    wf_value nul = wf_null();
    s = path("Customer.City", &n);
    ck_assert_int_eq(wfl_value_path_get(&nul, s, n, &out, &err), WF_E_FAULT);
    ck_assert(wf_is_null(&out));
    wf_value_release(&order);
}
END_TEST

START_TEST(test_value_paths_write_rebuild)
{
    wf_value order = make_order(), next = wf_null(), out = wf_null(), v = wf_null();
    size_t n = 0;
    ck_assert_int_eq(wf_value_cstring("Bergen", &v), WF_OK);
    wfl_path_seg *s = path("Customer.City", &n);
    ck_assert_int_eq(wfl_value_path_set(&order, s, n, &v, &next, NULL), WF_OK);
    ck_assert_int_eq(wfl_value_path_get(&next, s, n, &out, NULL), WF_OK);
    ck_assert_str_eq(wf_value_str(&out), "Bergen");
    wf_value_release(&out);
    /* the original is immutable */
    ck_assert_int_eq(wfl_value_path_get(&order, s, n, &out, NULL), WF_OK);
    ck_assert_str_eq(wf_value_str(&out), "Oslo");
    wf_value_release(&out);
    wf_value_release(&next);
    /* a missing last key is added; an index is replaced */
    s = path("Customer.Zip", &n);
    ck_assert_int_eq(wfl_value_path_set(&order, s, n, &v, &next, NULL), WF_OK);
    ck_assert_uint_eq(wf_value_record_count(wf_value_record_get(&next, "Customer")), 2);
    wf_value_release(&next);
    wf_value seven = wf_int32(7);
    s = path("Lines[0]", &n);
    ck_assert_int_eq(wfl_value_path_set(&order, s, n, &seven, &next, NULL), WF_OK);
    ck_assert_int_eq(wfl_value_path_get(&next, s, n, &out, NULL), WF_OK);
    ck_assert_int_eq(out.u.i32, 7);
    wf_value_release(&next);
    wf_error err = WF_ERROR_INIT;
    s = path("Lines[5]", &n);
    ck_assert_int_eq(wfl_value_path_set(&order, s, n, &seven, &next, &err), WF_E_RANGE);
    s = path("Nope.City", &n);
    ck_assert_int_eq(wfl_value_path_set(&order, s, n, &seven, &next, &err), WF_E_NAME);
    s = path("Customer.City.Length", &n);
    ck_assert_int_eq(wfl_value_path_set(&order, s, n, &seven, &next, &err), WF_E_TYPE);
    ck_assert(wf_is_null(&next));
    wf_value_release(&v);
    wf_value_release(&order);
}
END_TEST

/* ---- run time ---------------------------------------------------------------------------- */
static wf_types *types;
static wf_libpath *libpath;
static wfl_definition *def;
static wfl_inst *inst;

static void inst_setup(void)
{
    arena_setup();
    types = wf_types_create();
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &libpath, NULL), WF_OK);
    wfl_load_opts o = WFL_LOAD_OPTS_INIT;
    o.types = types;
    o.libpath = libpath;
    o.no_auto_rules = true;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_definition_load_file(&o, "tests/legacy/data/xoml/binds.xoml", &def, &err) ==
                      WF_OK,
                  "%u:%u %s", err.line, err.col, err.message);
    ck_assert_int_eq(wfl_inst_create(def, &inst, NULL), WF_OK);
}

static void inst_teardown(void)
{
    wfl_inst_destroy(inst);
    wfl_definition_destroy(def);
    wf_libpath_destroy(libpath);
    wf_types_destroy(types);
    arena_teardown();
}

static wfl_act *act(const char *name)
{
    wfl_act *a = wfl_act_resolve(wfl_inst_root(inst), name);
    ck_assert_msg(a != NULL, "no activity '%s'", name);
    return a;
}

static void set_str(wfl_act *a, const char *dp, const char *s)
{
    wf_value v = wf_null();
    ck_assert_int_eq(wf_value_cstring(s, &v), WF_OK);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_act_set_by_name(a, dp, &v, &err) == WF_OK, "%s", err.message);
    wf_value_release(&v);
}

static void assert_str(wfl_act *a, const char *dp, const char *want)
{
    wf_value v = wf_null();
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_act_get_by_name(a, dp, &v, &err) == WF_OK, "%s.%s: %s", wfl_act_name(a), dp,
                  err.message);
    ck_assert_str_eq(wf_value_str(&v), want);
    wf_value_release(&v);
}

START_TEST(test_bind_two_way_to_root)
{
    set_str(act("Root"), "OrderId", "A-7");
    assert_str(act("direct"), "Sku", "A-7");
    set_str(act("direct"), "Sku", "B-1"); /* writes through to the root */
    assert_str(act("Root"), "OrderId", "B-1");
    assert_str(act("chain"), "Sku", "B-1"); /* chain -> direct.Sku -> Root.OrderId */
    set_str(act("chain"), "Sku", "C-2");
    assert_str(act("Root"), "OrderId", "C-2");
}
END_TEST

START_TEST(test_bind_self_and_parent)
{
    set_str(act("self"), "Ticket", "T-1");
    assert_str(act("self"), "Sku", "T-1");
    wf_value five = wf_int32(5), out = wf_null();
    ck_assert_int_eq(wfl_act_set_by_name(act("Root"), "Counter", &five, NULL), WF_OK);
    ck_assert_int_eq(wfl_act_get_by_name(act("parent"), "Quantity", &out, NULL), WF_OK);
    ck_assert_ptr_eq(out.type, &wf_type_int32);
    ck_assert_int_eq(out.u.i32, 5);
    ck_assert_ptr_eq(wfl_act_resolve(act("parent"), "/Parent"), act("seq"));
    ck_assert_ptr_null(wfl_act_resolve(act("Root"), "/Parent"));
    ck_assert_ptr_null(wfl_act_resolve(act("Root"), "nobody"));
}
END_TEST

START_TEST(test_bind_path_into_record_and_list)
{
    wf_value order = make_order(), out = wf_null();
    ck_assert_int_eq(wfl_act_set_by_name(act("Root"), "Order", &order, NULL), WF_OK);
    assert_str(act("deep"), "Sku", "Oslo");
    set_str(act("deep"), "Sku", "Bergen");
    ck_assert_int_eq(wfl_act_get_path(act("Root"), "Order.Customer.City", &out, NULL), WF_OK);
    ck_assert_str_eq(wf_value_str(&out), "Bergen");
    wf_value_release(&out);
    const wf_value *old = wf_value_record_get(wf_value_record_get(&order, "Customer"), "City");
    ck_assert_str_eq(wf_value_str(old), "Oslo"); /* the value we stored is untouched */
    wf_value_release(&order);
    /* Root.Lines is List(Int32): Lines[1] */
    wf_value items[] = {wf_int32(10), wf_int32(20), wf_int32(30)}, lines = wf_null();
    ck_assert_int_eq(wf_value_list(wf_types_list(types, &wf_type_int32), items, 3, &lines), WF_OK);
    ck_assert_int_eq(wfl_act_set_by_name(act("Root"), "Lines", &lines, NULL), WF_OK);
    wf_value_release(&lines);
    ck_assert_int_eq(wfl_act_get_by_name(act("deep"), "Quantity", &out, NULL), WF_OK);
    ck_assert_int_eq(out.u.i32, 20);
    wf_value v25 = wf_int32(25);
    ck_assert_int_eq(wfl_act_set_by_name(act("deep"), "Quantity", &v25, NULL), WF_OK);
    ck_assert_int_eq(wfl_act_get_path(act("Root"), "Lines[1]", &out, NULL), WF_OK);
    ck_assert_int_eq(out.u.i32, 25);
    /* a null in the middle of the path */
    wf_value nul = wf_null();
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_act_set_by_name(act("Root"), "Order", &nul, NULL), WF_OK);
    ck_assert_int_eq(wfl_act_get_by_name(act("deep"), "Sku", &out, &err), WF_E_FAULT);
    ck_assert_ptr_nonnull(strstr(err.message, "null"));
}
END_TEST

START_TEST(test_bind_resolves_in_the_clone_first)
{
    wfl_act *body = act("body");
    wfl_act *clone = NULL;
    ck_assert_int_eq(wfl_act_clone(body, &clone, NULL), WF_OK);
    wfl_act *c_inner = wfl_act_child(clone, 0), *c_reader = wfl_act_child(clone, 1);
    set_str(c_inner, "Ticket", "iteration-1");
    assert_str(c_reader, "Sku", "iteration-1"); /* the clone's sibling, not the template's */
    wf_value v = wf_null();
    ck_assert_int_eq(wfl_act_get_by_name(act("reader"), "Sku", &v, NULL), WF_OK);
    ck_assert(wf_is_null(&v)); /* the template never ran */
    ck_assert_ptr_eq(wfl_act_resolve(c_reader, "inner"), c_inner);
    ck_assert_ptr_eq(wfl_act_resolve(c_reader, "direct"), act("direct"));
    ck_assert_ptr_eq(wfl_act_resolve(act("direct"), "inner"), act("inner"));
    wfl_act_clone_release(clone);
}
END_TEST

START_TEST(test_bind_cycle_is_an_error)
{
    wf_value v = wf_null();
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_act_get_by_name(act("cyc1"), "Sku", &v, &err), WF_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err.message, "cycle"));
    ck_assert(wf_is_null(&v));
    wf_error_clear(&err);
    set_str(act("Root"), "OrderId", "x");
    ck_assert_int_eq(wfl_act_set_by_name(act("cyc2"), "Sku", &v, &err), WF_E_LIMIT);
}
END_TEST

START_TEST(test_bind_to_exception_message)
{
    wf_value exc = wf_null(), out = wf_null();
    ck_assert_int_eq(wf_value_exception(&wf_exc_invalid_operation, "boom", &exc), WF_OK);
    wfl_act *h = act("onAny");
    const wfl_dp *fault = wfl_type_find_dp(wfl_act_type(h), "Fault");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_act_set(h, fault, &exc, &err), WF_E_STATE); /* read-only */
    ck_assert_int_eq(wfl_act_set_internal(h, fault, &exc, NULL), WF_OK);
    ck_assert_int_eq(wfl_act_get_by_name(act("stop"), "Error", &out, NULL), WF_OK);
    ck_assert_str_eq(wf_value_str(&out), "boom");
    wf_value_release(&out);
    wf_value_release(&exc);
}
END_TEST

/* ---- limits ------------------------------------------------------------------------------ */
/* A chain of `n` TerminateActivity Error binds: t1 -> t0, t2 -> t1, ...; the last one's value
 * is copied into text (literal strings live as long as their definition). */
static wf_status chain_value(int n, char *text, size_t size, wf_error *err)
{
    wf_value v = wf_null();
    wf_value *out = &v;
    wf_buf x;
    wf_buf_init(&x);
    wf_buf_adds(&x, "<SequentialWorkflowActivity x:Name=\"W\" "
                    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
                    "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
                    "<TerminateActivity x:Name=\"t0\" Error=\"end\"/>\n");
    for (int i = 1; i < n; i++)
        wf_buf_addf(&x,
                    "<TerminateActivity x:Name=\"t%d\" Error=\"{ActivityBind t%d,Path=Error}\"/>\n",
                    i, i - 1);
    wf_buf_adds(&x, "</SequentialWorkflowActivity>\n");
    ck_assert(!x.oom);
    wf_types *t = wf_types_create();
    wfl_load_opts o = WFL_LOAD_OPTS_INIT;
    o.types = t;
    wfl_definition *d = NULL;
    wfl_inst *in = NULL;
    ck_assert_int_eq(wfl_definition_load_mem(&o, "chain.xoml", x.data, x.len, &d, NULL), WF_OK);
    ck_assert_int_eq(wfl_inst_create(d, &in, NULL), WF_OK);
    char last[16];
    snprintf(last, sizeof last, "t%d", n - 1);
    wf_status rc = wfl_act_get_by_name(wfl_act_resolve(wfl_inst_root(in), last), "Error", out,
                                       err);
    snprintf(text, size, "%s", wf_value_str(&v));
    wf_value_release(&v);
    wfl_inst_destroy(in);
    wfl_definition_destroy(d);
    wf_types_destroy(t);
    wf_buf_fini(&x);
    return rc;
}

START_TEST(test_long_bind_chains_are_followed_then_refused)
{
    char text[32];
    ck_assert_int_eq(chain_value(30, text, sizeof text, NULL), WF_OK);
    ck_assert_str_eq(text, "end");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(chain_value(60, text, sizeof text, &err), WF_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err.message, "cycle"));
}
END_TEST

Suite *legacy_bind_suite(void)
{
    Suite *s = suite_create("legacy_bind");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, arena_setup, arena_teardown);
    tcase_add_test(tc, test_markup_positional_and_named);
    tcase_add_test(tc, test_is_markup);
    tcase_add_test(tc, test_path_grammar);
    tcase_add_test(tc, test_name_steps);
    tcase_add_test(tc, test_value_paths_read);
    tcase_add_test(tc, test_value_paths_write_rebuild);
    suite_add_tcase(s, tc);
    tc = tcase_create("runtime");
    tcase_add_checked_fixture(tc, inst_setup, inst_teardown);
    tcase_add_test(tc, test_bind_two_way_to_root);
    tcase_add_test(tc, test_bind_self_and_parent);
    tcase_add_test(tc, test_bind_path_into_record_and_list);
    tcase_add_test(tc, test_bind_resolves_in_the_clone_first);
    tcase_add_test(tc, test_bind_cycle_is_an_error);
    tcase_add_test(tc, test_bind_to_exception_message);
    suite_add_tcase(s, tc);
    tc = tcase_create("limits");
    tcase_add_test(tc, test_long_bind_chains_are_followed_then_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad_input");
    tcase_add_checked_fixture(tc, arena_setup, arena_teardown);
    tcase_add_loop_test(tc, test_markup_errors_point_at_the_fault, 0,
                        (int)(sizeof bad_markups / sizeof bad_markups[0]));
    suite_add_tcase(s, tc);
    return s;
}

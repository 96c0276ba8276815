/* test_inst.c — the legacy instance tree: slots initialised from the definition, typed get/set
 * through the registry, execution-context clones that start from the definition every time,
 * save/restore round trips (values, statuses, clones, executor blobs), and corrupt or
 * truncated saved state refused with WF_E_CORRUPT. */
#include <check.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_inst_int.h"
#include "../wf_test_util.h"

static wf_types *types;
static wf_libpath *libpath;
static wfl_definition *def;
static wfl_inst *inst;

static wfl_definition *load(const char *file)
{
    wfl_load_opts o = WFL_LOAD_OPTS_INIT;
    o.types = types;
    o.libpath = libpath;
    wfl_definition *d = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_definition_load_file(&o, file, &d, &err) == WF_OK, "%s", err.message);
    return d;
}

static void setup(void)
{
    types = wf_types_create();
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &libpath, NULL), WF_OK);
    def = load("tests/legacy/data/xoml/binds.xoml");
    ck_assert_int_eq(wfl_inst_create(def, &inst, NULL), WF_OK);
}

static void teardown(void)
{
    wfl_inst_destroy(inst);
    wfl_definition_destroy(def);
    wf_libpath_destroy(libpath);
    wf_types_destroy(types);
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
    ck_assert_int_eq(wfl_act_set_by_name(a, dp, &v, NULL), WF_OK);
    wf_value_release(&v);
}

static void assert_str(wfl_act *a, const char *dp, const char *want)
{
    wf_value v = wf_null();
    ck_assert_int_eq(wfl_act_get_by_name(a, dp, &v, NULL), WF_OK);
    ck_assert_str_eq(wf_value_str(&v), want);
    wf_value_release(&v);
}

/* ---- core ----------------------------------------------------------------------------------- */
START_TEST(test_create_mirrors_the_definition)
{
    wfl_act *root = wfl_inst_root(inst);
    ck_assert_str_eq(wfl_act_name(root), "Root");
    ck_assert_ptr_eq(wfl_inst_definition(inst), def);
    ck_assert_ptr_null(wfl_act_parent(root));
    ck_assert_uint_eq(wfl_act_child_count(root), 8);
    ck_assert_ptr_null(wfl_act_child(root, 8));
    for (size_t i = 0; i < wfl_definition_activity_count(def); i++) {
        wfl_act *a = wfl_inst_act_at(inst, i);
        ck_assert_uint_eq(wfl_act_node(a)->index, i);
        ck_assert_int_eq(wfl_act_status(a), WFL_ST_INITIALIZED);
        ck_assert_int_eq(wfl_act_result(a), WFL_RES_NONE);
        ck_assert_uint_eq(wfl_act_context_id(a), 0);
        ck_assert_ptr_eq(wfl_act_inst(a), inst);
    }
    ck_assert_ptr_null(wfl_inst_act_at(inst, 1000));
    wfl_act *inner = act("inner");
    ck_assert_ptr_eq(wfl_act_child_for(act("body"), wfl_act_node(inner)), inner);
    assert_str(inner, "Sku", "tmpl");
    wf_value q = wf_null(), en = wf_null();
    ck_assert_int_eq(wfl_act_get_by_name(inner, "Quantity", &q, NULL), WF_OK);
    ck_assert_int_eq(q.u.i32, 1); /* the typelib Default */
    ck_assert_int_eq(wfl_act_get_by_name(inner, "Enabled", &en, NULL), WF_OK);
    ck_assert(en.u.b);
    assert_str(inner, "Name", "inner");
    ck_assert_str_eq(wfl_status_name(WFL_ST_FAULTING), "Faulting");
    ck_assert_str_eq(wfl_result_name(WFL_RES_COMPENSATED), "Compensated");
}
END_TEST

START_TEST(test_set_converts_and_guards)
{
    wfl_act *inner = act("inner");
    wf_value v = wf_int64(7), out = wf_null();
    ck_assert_int_eq(wfl_act_set_by_name(inner, "Quantity", &v, NULL), WF_OK);
    ck_assert_int_eq(wfl_act_get_by_name(inner, "Quantity", &out, NULL), WF_OK);
    ck_assert_ptr_eq(out.type, &wf_type_int32);
    ck_assert_int_eq(out.u.i32, 7);
    wf_error err = WF_ERROR_INIT;
    v = wf_int64(1LL << 40);
    ck_assert_int_eq(wfl_act_set_by_name(inner, "Quantity", &v, &err), WF_E_RANGE);
    ck_assert_ptr_nonnull(strstr(err.message, "Quantity"));
    wf_error_clear(&err);
    ck_assert_int_eq(wfl_act_set_by_name(inner, "Name", &v, &err), WF_E_STATE);
    wf_error_clear(&err);
    ck_assert_int_eq(wfl_act_set_by_name(inner, "Colour", &v, &err), WF_E_NAME);
    wf_error_clear(&err);
    ck_assert_int_eq(wfl_act_get_by_name(act("loop"), "Condition", &out, &err), WF_E_SCHEMA);
    wf_error_clear(&err);
    const wfl_dp *foreign = wfl_type_find_dp(wfl_act_type(act("loop")), "Condition");
    ck_assert_int_eq(wfl_act_get(inner, foreign, &out, &err), WF_E_SCHEMA);
    ck_assert(wf_is_null(&out));
}
END_TEST

START_TEST(test_peek_reads_unbound_slots_in_place)
{
    wfl_act *inner = act("inner");
    const wfl_dp *sku = wfl_type_find_dp(wfl_act_type(inner), "Sku");
    const wf_value *slot = wfl_act_peek(inner, sku);
    ck_assert_ptr_nonnull(slot);
    ck_assert_str_eq(wf_value_str(slot), "tmpl");
    set_str(inner, "Sku", "changed");
    ck_assert_str_eq(wf_value_str(wfl_act_peek(inner, sku)), "changed");
    ck_assert_ptr_null(wfl_act_peek(act("direct"), sku)); /* bound: read it with wfl_act_get */
    const wfl_dp *foreign = wfl_type_find_dp(wfl_act_type(act("loop")), "Condition");
    ck_assert_ptr_null(wfl_act_peek(inner, foreign));
}
END_TEST

static unsigned disposed;

static void count_dispose(void *ud, wfl_act *a, void *exec)
{
    (void)a;
    ck_assert_ptr_eq(ud, &disposed);
    wf_free(exec);
    disposed++;
}

START_TEST(test_clone_starts_from_the_definition)
{
    wfl_inst_set_dispose(inst, count_dispose, &disposed);
    disposed = 0;
    wfl_act *body = act("body"), *loop = act("loop");
    wfl_act *c1 = NULL, *c2 = NULL;
    ck_assert_int_eq(wfl_act_clone(body, &c1, NULL), WF_OK);
    ck_assert(wfl_act_is_clone_root(c1));
    ck_assert_ptr_eq(wfl_act_template(c1), body);
    ck_assert_ptr_eq(wfl_act_parent(c1), loop);
    ck_assert_uint_eq(wfl_act_context_id(c1), 1);
    ck_assert_uint_eq(wfl_act_context_id(wfl_act_child(c1, 0)), 1);
    ck_assert_uint_eq(wfl_act_context_count(loop), 1);
    ck_assert_ptr_eq(wfl_act_context_at(loop, 0), c1);
    wfl_act *inner1 = wfl_act_child(c1, 0);
    set_str(inner1, "Sku", "changed");
    wfl_act_set_status(inner1, WFL_ST_CLOSED);
    wfl_act_set_exec(inner1, wf_malloc(8));
    size_t inner_index = wfl_act_node(inner1)->index;
    ck_assert_ptr_eq(wfl_inst_find_act(inst, 1, inner_index), inner1);
    assert_str(act("inner"), "Sku", "tmpl"); /* the template is untouched */
    wfl_act_clone_release(c1);
    ck_assert_uint_eq(disposed, 1);
    ck_assert_uint_eq(wfl_act_context_count(loop), 0);
    ck_assert_int_eq(wfl_act_clone(body, &c2, NULL), WF_OK);
    ck_assert_uint_eq(wfl_act_context_id(c2), 2);
    assert_str(wfl_act_child(c2, 0), "Sku", "tmpl"); /* state of iteration 1 is gone */
    ck_assert_int_eq(wfl_act_status(wfl_act_child(c2, 0)), WFL_ST_INITIALIZED);
    ck_assert_ptr_null(wfl_inst_find_act(inst, 1, inner_index));
    wfl_act_set_exec(c2, wf_malloc(8));
    wfl_act *root_clone = NULL;
    ck_assert_int_eq(wfl_act_clone(wfl_inst_root(inst), &root_clone, NULL), WF_E_STATE);
    wfl_act_clone_release(act("body")); /* not a clone: ignored */
    wfl_inst_destroy(inst);             /* frees the live clone c2 */
    inst = NULL;
    ck_assert_uint_eq(disposed, 2);
}
END_TEST

/* ---- persistence ---------------------------------------------------------------------------- */
static bool save_blob(void *ud, const wfl_act *a, wf_buf *out)
{
    (void)ud;
    if (wfl_act_exec(a) == NULL)
        return true;
    return wf_buf_adds(out, wfl_act_exec(a));
}

static unsigned loaded_blobs;

static wf_status load_blob(void *ud, wfl_act *a, const void *data, size_t len, wf_error *err)
{
    (void)ud;
    if (len > 0) {
        char *copy = wf_strndup(data, len);
        if (copy == NULL)
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        wfl_act_set_exec(a, copy);
        loaded_blobs++;
    }
    return WF_OK;
}

static bool save_inst_blob(void *ud, const wfl_inst *i, wf_buf *out)
{
    (void)ud;
    (void)i;
    return wf_buf_adds(out, "instance-state");
}

static char inst_blob[64];

static wf_status load_inst_blob(void *ud, wfl_inst *i, const void *data, size_t len,
                                wf_error *err)
{
    (void)ud;
    (void)i;
    (void)err;
    ck_assert_uint_lt(len, sizeof inst_blob);
    memcpy(inst_blob, data, len);
    inst_blob[len] = '\0';
    return WF_OK;
}

static void free_exec(void *ud, wfl_act *a, void *exec)
{
    (void)ud;
    (void)a;
    wf_free(exec);
}

static const wfl_inst_hooks hooks = {save_blob, load_blob, save_inst_blob, load_inst_blob, NULL,
                                     free_exec};

/* Fill the instance with one value of every kind, statuses and a live clone. */
static void populate(void)
{
    wfl_inst_set_dispose(inst, free_exec, NULL);
    wfl_act *root = wfl_inst_root(inst);
    set_str(root, "OrderId", "ord-1");
    wf_value amount = wf_dec(wf_decimal_from_currency(125000)), valid = wf_bool(true);
    wf_value counter = wf_int32(-3);
    ck_assert_int_eq(wfl_act_set_by_name(root, "Amount", &amount, NULL), WF_OK);
    ck_assert_int_eq(wfl_act_set_by_name(root, "IsValid", &valid, NULL), WF_OK);
    ck_assert_int_eq(wfl_act_set_by_name(root, "Counter", &counter, NULL), WF_OK);
    wf_value order = wf_null();
    static const char json[] = "{\"a\": [1, 2.5, \"x\", null, true], \"b\": {}}";
    ck_assert_int_eq(wf_json_parse(types, json, strlen(json), &order, NULL), WF_OK);
    ck_assert_int_eq(wfl_act_set_by_name(root, "Order", &order, NULL), WF_OK);
    wf_value_release(&order);
    wf_value exc = wf_null();
    ck_assert_int_eq(wf_value_exception(&wf_exc_divide_by_zero, "div", &exc), WF_OK);
    ck_assert_int_eq(wfl_act_set_internal(act("onAny"), wfl_type_find_dp(wfl_act_type(act("onAny")),
                                                                         "Fault"),
                                          &exc, NULL),
                     WF_OK);
    wf_value_release(&exc);
    wfl_act_set_status(root, WFL_ST_EXECUTING);
    wfl_act_set_status(act("loop"), WFL_ST_EXECUTING);
    wfl_act_set_result(act("direct"), WFL_RES_SUCCEEDED);
    wfl_act_set_status(act("direct"), WFL_ST_CLOSED);
    wfl_act_set_exec(act("loop"), wf_strdup("loop-state"));
    wfl_act *clone = NULL;
    ck_assert_int_eq(wfl_act_clone(act("body"), &clone, NULL), WF_OK);
    ck_assert_int_eq(wfl_act_clone(act("body"), &clone, NULL), WF_OK);
    set_str(wfl_act_child(clone, 0), "Ticket", "t-2");
    wfl_act_set_status(clone, WFL_ST_EXECUTING);
    wfl_act_set_exec(wfl_act_child(clone, 1), wf_strdup("reader-2"));
}

static char *save(size_t *len)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_inst_save(inst, &hooks, &b, &err) == WF_OK, "%s", err.message);
    return wf_buf_detach(&b, len);
}

START_TEST(test_save_restore_round_trip)
{
    populate();
    size_t len = 0;
    char *data = save(&len);
    wfl_inst *back = NULL;
    wf_error err = WF_ERROR_INIT;
    loaded_blobs = 0;
    ck_assert_msg(wfl_inst_restore(def, data, len, &hooks, &back, &err) == WF_OK, "%s",
                  err.message);
    ck_assert_uint_eq(loaded_blobs, 2);
    ck_assert_str_eq(inst_blob, "instance-state");
    wfl_act *root = wfl_inst_root(back);
    wf_value v = wf_null();
    ck_assert_int_eq(wfl_act_get_by_name(root, "OrderId", &v, NULL), WF_OK);
    ck_assert_str_eq(wf_value_str(&v), "ord-1");
    wf_value_release(&v);
    ck_assert_int_eq(wfl_act_get_by_name(root, "Amount", &v, NULL), WF_OK);
    ck_assert_int_eq(v.u.i64, 125000);
    ck_assert_ptr_eq(v.type, &wf_type_decimal);
    ck_assert_int_eq(wfl_act_get_by_name(root, "Counter", &v, NULL), WF_OK);
    ck_assert_int_eq(v.u.i32, -3);
    /* binds still work after restore: direct.Sku -> Root.OrderId */
    ck_assert_int_eq(wfl_act_get_by_name(wfl_act_resolve(root, "direct"), "Sku", &v, NULL), WF_OK);
    ck_assert_str_eq(wf_value_str(&v), "ord-1");
    wf_value_release(&v);
    wf_value orig = wf_null();
    ck_assert_int_eq(wfl_act_get_by_name(root, "Order", &v, NULL), WF_OK);
    ck_assert_int_eq(wfl_act_get_by_name(wfl_inst_root(inst), "Order", &orig, NULL), WF_OK);
    ck_assert(wf_value_equal(&v, &orig));
    wf_value_release(&v);
    wf_value_release(&orig);
    ck_assert_int_eq(wfl_act_get_path(wfl_act_resolve(root, "onAny"), "Fault.Message", &v, NULL),
                     WF_OK);
    ck_assert_str_eq(wf_value_str(&v), "div");
    wf_value_release(&v);
    ck_assert_int_eq(wfl_act_status(root), WFL_ST_EXECUTING);
    ck_assert_int_eq(wfl_act_result(wfl_act_resolve(root, "direct")), WFL_RES_SUCCEEDED);
    ck_assert_str_eq(wfl_act_exec(wfl_act_resolve(root, "loop")), "loop-state");
    /* the live clones came back with their context ids and values */
    wfl_act *loop = wfl_act_resolve(root, "loop");
    ck_assert_uint_eq(wfl_act_context_count(loop), 2);
    wfl_act *c2 = wfl_act_context_at(loop, 1);
    ck_assert(wfl_act_is_clone_root(c2));
    ck_assert_uint_eq(wfl_act_context_id(c2), 2);
    ck_assert_int_eq(wfl_act_status(c2), WFL_ST_EXECUTING);
    ck_assert_str_eq(wfl_act_exec(wfl_act_child(c2, 1)), "reader-2");
    ck_assert_int_eq(wfl_act_get_by_name(wfl_act_child(c2, 1), "Sku", &v, NULL), WF_OK);
    ck_assert_str_eq(wf_value_str(&v), "t-2"); /* clone-first resolution after restore */
    wf_value_release(&v);
    /* saving the restored instance gives the same bytes */
    wfl_inst *orig_inst = inst;
    inst = back;
    size_t len2 = 0;
    char *again = save(&len2);
    wfl_act *c3 = NULL;
    ck_assert_int_eq(wfl_act_clone(wfl_act_resolve(root, "body"), &c3, NULL), WF_OK);
    ck_assert_uint_eq(wfl_act_context_id(c3), 3);
    inst = orig_inst;
    ck_assert_uint_eq(len2, len);
    ck_assert_mem_eq(again, data, len);
    wf_free(again);
    wfl_inst_destroy(back);
    wf_free(data);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------------ */
START_TEST(test_truncated_state_is_corrupt)
{
    populate();
    size_t len = 0;
    char *data = save(&len);
    for (size_t cut = 0; cut < len; cut++) {
        wfl_inst *back = (wfl_inst *)1;
        wf_error err = WF_ERROR_INIT;
        ck_assert_msg(wfl_inst_restore(def, data, cut, &hooks, &back, &err) == WF_E_CORRUPT,
                      "cut at %zu: %s", cut, err.message);
        ck_assert_ptr_null(back);
    }
    wf_free(data);
}
END_TEST

START_TEST(test_damaged_state_never_crashes)
{
    populate();
    size_t len = 0;
    char *data = save(&len);
    /* every byte flipped in turn: refused or restored, never a crash or a leak */
    for (size_t i = 0; i < len; i++) {
        data[i] ^= 0x5a;
        wfl_inst *back = NULL;
        wf_status rc = wfl_inst_restore(def, data, len, &hooks, &back, NULL);
        ck_assert(rc == WF_OK || rc == WF_E_CORRUPT);
        wfl_inst_destroy(back);
        data[i] ^= 0x5a;
    }
    wf_error err = WF_ERROR_INIT;
    wfl_inst *back = (wfl_inst *)1;
    char *longer = wf_malloc(len + 1);
    memcpy(longer, data, len);
    longer[len] = 0;
    ck_assert_int_eq(wfl_inst_restore(def, longer, len + 1, &hooks, &back, &err), WF_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "trailing"));
    ck_assert_ptr_null(back);
    wf_free(longer);
    wf_error_clear(&err);
    wfl_definition *other = load("tests/legacy/data/xoml/order.xoml");
    ck_assert_int_eq(wfl_inst_restore(other, data, len, &hooks, &back, &err), WF_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "different definition"));
    wfl_definition_destroy(other);
    wf_error_clear(&err);
    ck_assert_int_eq(wfl_inst_restore(def, "XXXX", 4, &hooks, &back, &err), WF_E_CORRUPT);
    wf_free(data);
}
END_TEST

/* ---- limits ---------------------------------------------------------------------------------- */
START_TEST(test_deeply_nested_values_are_refused)
{
    wf_value v = wf_int32(1);
    for (int i = 0; i < 70; i++) {
        wf_value next = wf_null();
        ck_assert_int_eq(wf_value_list(&wf_type_list_object, &v, 1, &next), WF_OK);
        wf_value_release(&v);
        v = next;
    }
    ck_assert_int_eq(wfl_act_set_by_name(wfl_inst_root(inst), "Order", &v, NULL), WF_OK);
    wf_value_release(&v);
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(&b, "keep");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_inst_save(inst, NULL, &b, &err), WF_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err.message, "nested"));
    ck_assert_str_eq(b.data, "keep");
    wf_buf_fini(&b);
}
END_TEST

/* ---- nomem ---------------------------------------------------------------------------------- */
static wf_status create_op(void *ud)
{
    (void)ud;
    wfl_inst *i = NULL;
    wf_status rc = wfl_inst_create(def, &i, NULL);
    if (rc == WF_OK) {
        wfl_act *c = NULL;
        rc = wfl_act_clone(wfl_act_resolve(wfl_inst_root(i), "body"), &c, NULL);
    }
    wfl_inst_destroy(i);
    return rc;
}

typedef struct blob {
    char *data;
    size_t len;
} blob;

static wf_status restore_op(void *ud)
{
    blob *b = ud;
    wfl_inst *i = NULL;
    wf_status rc = wfl_inst_restore(def, b->data, b->len, &hooks, &i, NULL);
    if (rc == WF_OK) {
        wf_buf out;
        wf_buf_init(&out);
        rc = wfl_inst_save(i, &hooks, &out, NULL);
        wf_buf_fini(&out);
    }
    wfl_inst_destroy(i);
    return rc;
}

START_TEST(test_instances_survive_allocation_failure)
{
    ck_assert_uint_gt(wf_test_nomem_loop(create_op, NULL, 1000), 3);
    populate();
    blob b = {NULL, 0};
    b.data = save(&b.len);
    ck_assert_uint_gt(wf_test_nomem_loop(restore_op, &b, 5000), 10);
    wf_free(b.data);
}
END_TEST

Suite *legacy_inst_suite(void)
{
    Suite *s = suite_create("legacy_inst");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_create_mirrors_the_definition);
    tcase_add_test(tc, test_set_converts_and_guards);
    tcase_add_test(tc, test_peek_reads_unbound_slots_in_place);
    tcase_add_test(tc, test_clone_starts_from_the_definition);
    tcase_add_test(tc, test_save_restore_round_trip);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad_input");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_truncated_state_is_corrupt);
    tcase_add_test(tc, test_damaged_state_never_crashes);
    suite_add_tcase(s, tc);
    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_deeply_nested_values_are_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("nomem");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_instances_survive_allocation_failure);
    suite_add_tcase(s, tc);
    return s;
}

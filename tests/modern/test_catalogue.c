/* test_catalogue.c — the activity catalogue (modern/wfm_catalogue.c): kinds registered from
 * static specs are found by namespace + name, duplicates and unusable specs are refused, and
 * registration order is kept. */
#include <check.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../modern/wfm_definition_int.h"
#include "../../modern/wfm_definition.h"
#include "../wf_test_util.h"

static void noop_exec(wfm_ctx *ctx, wfm_ai *ai)
{
    (void)ctx;
    (void)ai;
}

static int spec_ud = 42;

static const wfm_prop_spec seq_props[] = {
    {"Activities", WFM_PROP_ACTIVITIES, NULL, NULL, WFM_PROP_CONTENT, NULL},
};
static const wfm_kind_spec seq_spec = {
    .name = "Sequence",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES,
    .props = seq_props,
    .prop_count = 1,
    .content_prop = "Activities",
    .execute = noop_exec,
    .ud = &spec_ud,
};
/* Same local name in another namespace: a different kind. */
static const wfm_kind_spec other_seq_spec = {
    .name = "Sequence",
    .ns = "urn:other",
    .category = "Activity",
    .execute = noop_exec,
};
static const wfm_kind_spec step_spec = {
    .name = "FlowStep",
    .category = "FlowNode",
};

static const wfm_kind_spec bad_content_spec = {
    .name = "BadContent",
    .category = "Activity",
    .props = seq_props,
    .prop_count = 1,
    .content_prop = "Nope",
    .execute = noop_exec,
};
static const wfm_kind_spec vars_on_node_spec = {
    .name = "VarsNode",
    .category = "FlowNode",
    .flags = WFM_KIND_VARIABLES,
};
static const wfm_prop_spec dup_props[] = {
    {"A", WFM_PROP_IN, "x:Int32", NULL, 0, NULL},
    {"A", WFM_PROP_IN, "x:Int32", NULL, 0, NULL},
};
static const wfm_kind_spec dup_prop_spec = {
    .name = "DupProp",
    .category = "Activity",
    .props = dup_props,
    .prop_count = 2,
    .execute = noop_exec,
};
static const wfm_prop_spec node_props[] = {{"Next", WFM_PROP_NODE, NULL, NULL, 0, NULL}};
static const wfm_kind_spec node_no_category_spec = {
    .name = "NoCat",
    .category = "Activity",
    .props = node_props,
    .prop_count = 1,
    .execute = noop_exec,
};

START_TEST(test_register_and_find)
{
    wfm_catalogue *cat = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_catalogue_create(&cat, &err), WF_OK);
    ck_assert_uint_eq(wfm_catalogue_count(cat), 0);
    ck_assert_ptr_null(wfm_catalogue_find(cat, NULL, "Sequence"));
    ck_assert_int_eq(wfm_catalogue_register(cat, &seq_spec, &err), WF_OK);
    ck_assert_int_eq(wfm_catalogue_register(cat, &other_seq_spec, &err), WF_OK);
    ck_assert_int_eq(wfm_catalogue_register(cat, &step_spec, &err), WF_OK);
    ck_assert_uint_eq(wfm_catalogue_count(cat), 3);
    const wfm_kind *k = wfm_catalogue_find(cat, WFM_NS_ACTIVITIES, "Sequence");
    ck_assert_ptr_nonnull(k);
    ck_assert_ptr_eq(wfm_catalogue_find(cat, NULL, "Sequence"), k); /* NULL = activities ns */
    ck_assert_ptr_eq(wfm_kind_spec_of(k), &seq_spec);
    ck_assert_ptr_eq(wfm_kind_ud(k), &spec_ud);
    ck_assert(k->is_activity);
    ck_assert_int_eq(k->content_index, 0);
    const wfm_kind *o = wfm_catalogue_find(cat, "urn:other", "Sequence");
    ck_assert_ptr_nonnull(o);
    ck_assert_ptr_ne(o, k);
    ck_assert_int_eq(o->content_index, -1);
    const wfm_kind *s = wfm_catalogue_find(cat, NULL, "FlowStep");
    ck_assert(!s->is_activity);
    ck_assert_ptr_eq(wfm_catalogue_at(cat, 2), s);
    ck_assert_uint_eq(s->index, 2);
    ck_assert_ptr_null(wfm_catalogue_at(cat, 3));
    ck_assert_ptr_null(wfm_catalogue_find(cat, NULL, "sequence")); /* case matters, as in XAML */
    ck_assert_ptr_null(wfm_catalogue_find(cat, "urn:none", "Sequence"));
    wfm_catalogue_destroy(cat);
    wfm_catalogue_destroy(NULL);
}
END_TEST

START_TEST(test_duplicate_registration_is_state_error)
{
    wfm_catalogue *cat = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_catalogue_create(&cat, &err), WF_OK);
    ck_assert_int_eq(wfm_catalogue_register(cat, &seq_spec, &err), WF_OK);
    ck_assert_int_eq(wfm_catalogue_register(cat, &seq_spec, &err), WF_E_STATE);
    ck_assert_ptr_nonnull(strstr(err.message, "Sequence"));
    ck_assert_uint_eq(wfm_catalogue_count(cat), 1);
    wfm_catalogue_destroy(cat);
}
END_TEST

START_TEST(test_unusable_specs_are_refused)
{
    static const wfm_kind_spec *const bad[] = {&bad_content_spec, &vars_on_node_spec,
                                               &dup_prop_spec, &node_no_category_spec};
    static const char *const needles[] = {"Nope", "Variables", "duplicate property", "category"};
    wfm_catalogue *cat = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_catalogue_create(&cat, &err), WF_OK);
    for (size_t i = 0; i < 4; i++) {
        wf_error e = WF_ERROR_INIT;
        ck_assert_int_eq(wfm_catalogue_register(cat, bad[i], &e), WF_E_USAGE);
        ck_assert_msg(strstr(e.message, needles[i]) != NULL, "'%s' not in '%s'", needles[i],
                      e.message);
    }
    ck_assert_uint_eq(wfm_catalogue_count(cat), 0);
    wfm_catalogue_destroy(cat);
}
END_TEST

static wf_status register_op(void *ud)
{
    (void)ud;
    wfm_catalogue *cat = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfm_catalogue_create(&cat, &err);
    if (rc != WF_OK)
        return rc;
    rc = wfm_catalogue_register(cat, &seq_spec, &err);
    if (rc == WF_OK)
        rc = wfm_catalogue_register(cat, &step_spec, &err);
    if (rc == WF_OK)
        ck_assert_ptr_nonnull(wfm_catalogue_find(cat, NULL, "FlowStep"));
    wfm_catalogue_destroy(cat);
    return rc;
}

START_TEST(test_nomem_register)
{
    ck_assert_uint_gt(wf_test_nomem_loop(register_op, NULL, 100), 0);
}
END_TEST

Suite *modern_catalogue_suite(void)
{
    Suite *s = suite_create("modern_catalogue");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_register_and_find);
    tcase_add_test(tc, test_duplicate_registration_is_state_error);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad_input");
    tcase_add_test(tc, test_unusable_specs_are_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("nomem");
    tcase_add_test(tc, test_nomem_register);
    suite_add_tcase(s, tc);
    return s;
}

/* test_xaml.c — the XAML loader (modern/wfm_xaml.c) against test kinds registered through the
 * public catalogue API (mirroring WF4's Sequence, If, Assign, ForEach, Flowchart, Switch, ...):
 * designer-style files give the right tree, ids and environments (checked by evaluating the
 * compiled expressions in hand-built environments); every bad file reports code, line, col. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_definition_int.h"
#include "../../modern/wfm_definition.h"
#include "../../modern/wfm_expr.h"
#include "../wf_test_util.h"

#define DATA "tests/modern/data/xaml/"

/* ---- test kinds ------------------------------------------------------------------------ */
static void noop_exec(wfm_ctx *ctx, wfm_ai *ai)
{
    (void)ctx;
    (void)ai;
}

enum { SEQ_ACTIVITIES };
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
};

enum { WL_TEXT };
static const wfm_prop_spec wl_props[] = {{"Text", WFM_PROP_IN, "x:String", NULL, 0, NULL}};
static const wfm_kind_spec wl_spec = {
    .name = "WriteLine",
    .category = "Activity",
    .props = wl_props,
    .prop_count = 1,
    .content_prop = "Text",
    .execute = noop_exec,
};

enum { IF_COND, IF_THEN, IF_ELSE };
static const wfm_prop_spec if_props[] = {
    {"Condition", WFM_PROP_IN, "x:Boolean", NULL, WFM_PROP_REQUIRED, NULL},
    {"Then", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"Else", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
};
static const wfm_kind_spec if_spec = {
    .name = "If",
    .category = "Activity",
    .props = if_props,
    .prop_count = 3,
    .execute = noop_exec,
};

enum { AS_TO, AS_VALUE };
static const wfm_prop_spec assign_props[] = {
    {"To", WFM_PROP_OUT, "T", NULL, WFM_PROP_REQUIRED, NULL},
    {"Value", WFM_PROP_IN, "T", NULL, WFM_PROP_REQUIRED, NULL},
};
static const wfm_kind_spec assign_spec = {
    .name = "Assign",
    .category = "Activity",
    .flags = WFM_KIND_GENERIC,
    .props = assign_props,
    .prop_count = 2,
    .execute = noop_exec,
};

enum { FE_VALUES, FE_BODY };
static const wfm_prop_spec foreach_props[] = {
    {"Values", WFM_PROP_IN, "List(T)", NULL, WFM_PROP_REQUIRED, NULL},
    {"Body", WFM_PROP_DELEGATE, "T", NULL, WFM_PROP_CONTENT, NULL},
};
static const wfm_kind_spec foreach_spec = {
    .name = "ForEach",
    .category = "Activity",
    .flags = WFM_KIND_GENERIC,
    .props = foreach_props,
    .prop_count = 2,
    .content_prop = "Body",
    .execute = noop_exec,
};

enum { DL_DURATION };
static const wfm_prop_spec delay_props[] = {
    {"Duration", WFM_PROP_IN, "s:TimeSpan", NULL, WFM_PROP_REQUIRED, NULL}};
static const wfm_kind_spec delay_spec = {
    .name = "Delay",
    .category = "Activity",
    .flags = WFM_KIND_CAN_IDLE,
    .props = delay_props,
    .prop_count = 1,
    .execute = noop_exec,
};

enum { FC_START, FC_NODES };
static const wfm_prop_spec flowchart_props[] = {
    {"StartNode", WFM_PROP_NODE, NULL, "FlowNode", 0, NULL},
    {"Nodes", WFM_PROP_NODES, NULL, "FlowNode", WFM_PROP_CONTENT, NULL},
};
static const wfm_kind_spec flowchart_spec = {
    .name = "Flowchart",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES,
    .props = flowchart_props,
    .prop_count = 2,
    .content_prop = "Nodes",
    .execute = noop_exec,
};

enum { FS_ACTION, FS_NEXT };
static const wfm_prop_spec flowstep_props[] = {
    {"Action", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"Next", WFM_PROP_NODE, NULL, "FlowNode", 0, NULL},
};
static const wfm_kind_spec flowstep_spec = {
    .name = "FlowStep",
    .category = "FlowNode",
    .props = flowstep_props,
    .prop_count = 2,
    .content_prop = "Action",
};

enum { FD_COND, FD_TRUE, FD_FALSE };
static const wfm_prop_spec flowdecision_props[] = {
    {"Condition", WFM_PROP_IN, "x:Boolean", NULL, WFM_PROP_REQUIRED, NULL},
    {"True", WFM_PROP_NODE, NULL, "FlowNode", 0, NULL},
    {"False", WFM_PROP_NODE, NULL, "FlowNode", 0, NULL},
};
static const wfm_kind_spec flowdecision_spec = {
    .name = "FlowDecision",
    .category = "FlowNode",
    .props = flowdecision_props,
    .prop_count = 3,
};

enum { FW_EXPR, FW_DEFAULT, FW_CASES };
static const wfm_prop_spec flowswitch_props[] = {
    {"Expression", WFM_PROP_IN, "T", NULL, WFM_PROP_REQUIRED, NULL},
    {"Default", WFM_PROP_NODE, NULL, "FlowNode", 0, NULL},
    {"Cases", WFM_PROP_KEYED, "T", "FlowNode", WFM_PROP_CONTENT, NULL},
};
static const wfm_kind_spec flowswitch_spec = {
    .name = "FlowSwitch",
    .category = "FlowNode",
    .flags = WFM_KIND_GENERIC,
    .props = flowswitch_props,
    .prop_count = 3,
    .content_prop = "Cases",
};

enum { SW_EXPR, SW_CASES, SW_DEFAULT };
static const wfm_prop_spec switch_props[] = {
    {"Expression", WFM_PROP_IN, "T", NULL, WFM_PROP_REQUIRED, NULL},
    {"Cases", WFM_PROP_KEYED, "T", NULL, WFM_PROP_CONTENT, NULL},
    {"Default", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
};
static const wfm_kind_spec switch_spec = {
    .name = "Switch",
    .category = "Activity",
    .flags = WFM_KIND_GENERIC,
    .props = switch_props,
    .prop_count = 3,
    .content_prop = "Cases",
    .execute = noop_exec,
};

enum { TC_TRY, TC_CATCHES, TC_FINALLY };
static const wfm_prop_spec trycatch_props[] = {
    {"Try", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
    {"Catches", WFM_PROP_NODES, NULL, "Catch", 0, NULL},
    {"Finally", WFM_PROP_ACTIVITY, NULL, NULL, 0, NULL},
};
static const wfm_kind_spec trycatch_spec = {
    .name = "TryCatch",
    .category = "Activity",
    .flags = WFM_KIND_VARIABLES,
    .props = trycatch_props,
    .prop_count = 3,
    .execute = noop_exec,
};

enum { CA_ACTION };
static const wfm_prop_spec catch_props[] = {
    {"Action", WFM_PROP_DELEGATE, "T", NULL, WFM_PROP_CONTENT, NULL}};
static const wfm_kind_spec catch_spec = {
    .name = "Catch",
    .category = "Catch",
    .flags = WFM_KIND_GENERIC,
    .props = catch_props,
    .prop_count = 1,
    .content_prop = "Action",
};

/* InvokeMethod's prepare checks what a native-call kind needs from the loader. */
enum { IM_TARGET, IM_METHOD, IM_PARAMS, IM_RESULT };
static const wfm_prop_spec invoke_props[] = {
    {"TargetType", WFM_PROP_TYPE, NULL, NULL, WFM_PROP_REQUIRED, NULL},
    {"MethodName", WFM_PROP_LITERAL, "x:String", NULL, WFM_PROP_REQUIRED, NULL},
    {"Parameters", WFM_PROP_PARAMS, NULL, NULL, WFM_PROP_CONTENT, NULL},
    {"Result", WFM_PROP_OUT, "x:Object", NULL, 0, NULL},
};

static void free_text(void *data)
{
    wf_free(data);
}

static wf_status invoke_prepare(wfm_load *load, wfm_node *node)
{
    const char *prefix = wfm__node_prop(node, IM_TARGET)->type_prefix;
    const char *assembly = wfm_load_assembly(load, node, prefix);
    if (!assembly) {
        wfm_load_error(load, node, WF_E_NOLIB, "no assembly for '%s'",
                       wfm__node_prop(node, IM_TARGET)->type_text);
        return WF_OK;
    }
    char *copy = wf_strdup(assembly);
    if (!copy)
        return WF_E_NOMEM;
    wfm_node_set_data(node, copy, free_text);
    return WF_OK;
}

static const wfm_kind_spec invoke_spec = {
    .name = "InvokeMethod",
    .category = "Activity",
    .props = invoke_props,
    .prop_count = 4,
    .content_prop = "Parameters",
    .prepare = invoke_prepare,
    .execute = noop_exec,
};

/* A kind in its own namespace with literals and open-ended attributes (like Interop). */
enum { PR_COUNT, PR_FLAG };
static const wfm_prop_spec probe_props[] = {
    {"Count", WFM_PROP_LITERAL, "x:Int32", NULL, 0, "7"},
    {"Flag", WFM_PROP_LITERAL, "x:Boolean", NULL, 0, NULL},
};

static wf_status probe_prepare(wfm_load *load, wfm_node *node)
{
    const char *extra = wfm_load_claim_attr(load, node, "Extra");
    if (extra && strcmp(extra, "bad") == 0)
        wfm_load_error(load, node, WF_E_SCHEMA, "Probe: Extra must not be 'bad'");
    return WF_OK;
}

static const wfm_kind_spec probe_spec = {
    .name = "Probe",
    .ns = "urn:wfbridge:test",
    .category = "Activity",
    .props = probe_props,
    .prop_count = 2,
    .prepare = probe_prepare,
    .execute = noop_exec,
};

/* Shared triggers (WFM_PROP_SHARED), as StateMachine transitions write them. */
enum { BR_TRIGGER };
static const wfm_prop_spec branch_props[] = {
    {"Trigger", WFM_PROP_ACTIVITY, NULL, NULL, WFM_PROP_SHARED, NULL}};
static const wfm_kind_spec branch_spec = {
    .name = "Branch",
    .ns = "urn:wfbridge:test",
    .category = "Branch",
    .props = branch_props,
    .prop_count = 1,
    .content_prop = "Trigger",
};
enum { CH_BRANCHES };
static const wfm_prop_spec chooser_props[] = {
    {"Branches", WFM_PROP_NODES, NULL, "Branch", WFM_PROP_CONTENT, NULL}};
static const wfm_kind_spec chooser_spec = {
    .name = "Chooser",
    .ns = "urn:wfbridge:test",
    .category = "Activity",
    .props = chooser_props,
    .prop_count = 1,
    .content_prop = "Branches",
    .execute = noop_exec,
};

static const wfm_kind_spec *const test_kinds[] = {
    &branch_spec, &chooser_spec,
    &seq_spec, &wl_spec, &if_spec, &assign_spec, &foreach_spec, &delay_spec, &flowchart_spec,
    &flowstep_spec, &flowdecision_spec, &flowswitch_spec, &switch_spec, &trycatch_spec,
    &catch_spec, &invoke_spec, &probe_spec};

/* ---- fixture ------------------------------------------------------------------------ */
static wfm_catalogue *cat;
static wf_types *types;

static void setup(void)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_catalogue_create(&cat, &err), WF_OK);
    for (size_t i = 0; i < sizeof test_kinds / sizeof test_kinds[0]; i++)
        ck_assert_int_eq(wfm_catalogue_register(cat, test_kinds[i], &err), WF_OK);
    types = wf_types_create();
    ck_assert_ptr_nonnull(types);
}

static void teardown(void)
{
    wfm_catalogue_destroy(cat);
    wf_types_destroy(types);
    cat = NULL;
    types = NULL;
}

static wf_status load(const char *path, wf_diags *diags, wfm_definition **def, wf_error *err)
{
    wfm_load_opts opts = WFM_LOAD_OPTS_INIT;
    opts.catalogue = cat;
    opts.types = types;
    opts.diags = diags;
    return wfm_definition_load_file(&opts, path, def, err);
}

static wfm_definition *load_ok(const char *path)
{
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = NULL;
    wf_status rc = load(path, NULL, &def, &err);
    ck_assert_msg(rc == WF_OK, "%s:%u:%u: %s", err.file, err.line, err.col, err.message);
    ck_assert_ptr_nonnull(def);
    return def;
}

/* Evaluate IN expression of `prop` of `node` (or its literal) in env. */
static wf_value eval_prop(const wfm_node *node, unsigned prop, const wfm_env *env)
{
    const wfm__prop *p = wfm__node_prop(node, prop);
    if (!wfm__prop_expr(p))
        return wf_value_retain(&p->literal);
    wf_value out = wf_null(), exc = wf_null();
    ck_assert_int_eq(wfm_expr_eval(p->expr, env, &out, &exc), WF_OK);
    return out;
}

static int32_t eval_i32(const wfm_node *node, unsigned prop, const wfm_env *env)
{
    wf_value v = eval_prop(node, prop, env);
    ck_assert_ptr_eq(v.type, &wf_type_int32);
    return v.u.i32;
}

/* ---- core ------------------------------------------------------------------------------ */
START_TEST(test_designer_file_loads_arguments)
{
    wfm_definition *def = load_ok(DATA "order.xaml");
    ck_assert_str_eq(wfm_definition_class(def), "Contoso.OrderFlow");
    ck_assert_uint_eq(wfm_definition_arg_count(def), 4);
    ck_assert_str_eq(wfm_definition_arg_name(def, 0), "Count");
    ck_assert_int_eq(wfm_definition_arg_dir(def, 0), WFM_PROP_IN);
    ck_assert_ptr_eq(wfm_definition_arg_type(def, 0), &wf_type_int32);
    ck_assert(wfm_definition_arg_has_default(def, 0));
    ck_assert_int_eq(def->args[0].literal.u.i32, 3);
    ck_assert_ptr_eq(wfm_definition_arg_type(def, 1), wf_types_list(types, &wf_type_int32));
    ck_assert_int_eq(wfm_definition_arg_dir(def, 2), WFM_PROP_OUT);
    ck_assert_int_eq(wfm_definition_arg_dir(def, 3), WFM_PROP_INOUT);
    ck_assert(!wfm_definition_arg_has_default(def, 3));
    size_t idx = 0;
    ck_assert(wfm_definition_arg_find(def, "Total", &idx));
    ck_assert_uint_eq(idx, 2);
    ck_assert(!wfm_definition_arg_find(def, "total", &idx));
    char *bytes;
    size_t len;
    bytes = wf_test_read_file(DATA "order.xaml", &len);
    ck_assert_ptr_nonnull(bytes);
    ck_assert(wfm_definition_hash(def) == wf_hash_bytes(bytes, len));
    wf_free(bytes);
    wfm_definition_release(def);
}
END_TEST

START_TEST(test_designer_file_gives_tree_ids_and_values)
{
    wfm_definition *def = load_ok(DATA "order.xaml");
    const wfm_node *root = wfm_definition_root(def);
    ck_assert_str_eq(wfm_node_id(root), "1");
    ck_assert_str_eq(wfm_node_display_name(root), "Main");
    ck_assert_uint_eq(root->var_count, 2);
    ck_assert(root->creates_env);
    ck_assert_uint_eq(wfm_node_count(root, SEQ_ACTIVITIES), 5); /* ign:Note is ignored */
    const wfm_node *wl = wfm_node_at(root, SEQ_ACTIVITIES, 0);
    ck_assert_str_eq(wfm_node_id(wl), "1.1");
    ck_assert_str_eq(wfm_node_display_name(wl), "WriteLine");
    ck_assert_ptr_null(wfm__prop_expr(wfm__node_prop(wl, WL_TEXT)));
    ck_assert_str_eq(wf_value_str(&wfm__node_prop(wl, WL_TEXT)->literal), "Hello");
    const wfm_node *assign = wfm_node_at(root, SEQ_ACTIVITIES, 1);
    ck_assert_str_eq(wfm_node_id(assign), "1.2");
    ck_assert_ptr_eq(wfm_node_type_arg(assign), &wf_type_int32); /* inferred from To */
    const wfm_node *fe = wfm_node_at(root, SEQ_ACTIVITIES, 2);
    ck_assert_str_eq(wfm_node_display_name(fe), "Add items");
    ck_assert_str_eq(wfm__node_prop(fe, FE_BODY)->delegate->arg_name, "item");
    ck_assert_ptr_eq(wfm__node_prop(fe, FE_BODY)->delegate->arg_type, &wf_type_int32);
    const wfm_node *body = wfm__node_prop(fe, FE_BODY)->delegate->body;
    ck_assert_str_eq(wfm_node_id(body), "1.3.1");
    ck_assert_ptr_eq(body->parent, fe);
    const wfm_node *iff = wfm_node_at(root, SEQ_ACTIVITIES, 3);
    ck_assert_str_eq(wfm_node_id(wfm_node_child(iff, IF_ELSE)), "1.4.2");
    ck_assert(!wfm_node_has(iff, 99));
    const wfm_node *delay = wfm_node_at(root, SEQ_ACTIVITIES, 4);
    ck_assert_ptr_eq(wfm__node_prop(delay, DL_DURATION)->literal.type, &wf_type_timespan);
    ck_assert(wfm__node_prop(delay, DL_DURATION)->literal.u.i64 == 5000000);
    ck_assert_uint_eq(wfm_definition_node_count(def), 11);
    for (size_t i = 0; i < wfm_definition_node_count(def); i++)
        ck_assert_uint_eq(wfm_node_index(wfm_definition_node_at(def, i)), i);
    ck_assert_ptr_eq(wfm_definition_node_at(def, 3), fe);
    wfm_definition_release(def);
}
END_TEST

/* The environments built by hand as wfm_definition_int.h tells the runtime to build them. */
START_TEST(test_designer_file_envs_slots_and_hops)
{
    wfm_definition *def = load_ok(DATA "order.xaml");
    const wfm_node *root = wfm_definition_root(def);
    wf_value log;
    ck_assert_int_eq(wf_value_cstring("log", &log), WF_OK);
    wf_value e0_slots[4] = {wf_int32(4), wf_null(), wf_int32(0), log};
    wfm_env e0 = {NULL, e0_slots, 4};
    wf_value main_slots[2] = {wf_int32(10), wf_null()};
    wfm_env ev_main = {&e0, main_slots, 2};
    /* Variable defaults evaluate in the new environment: label = "n=" + Count. */
    ck_assert_ptr_null(root->vars[0].expr);
    ck_assert_int_eq(root->vars[0].literal.u.i32, 10);
    wf_value label = wf_null(), exc = wf_null();
    ck_assert_int_eq(wfm_expr_eval(root->vars[1].expr, &ev_main, &label, &exc), WF_OK);
    ck_assert_str_eq(wf_value_str(&label), "n=4");
    main_slots[1] = label;
    const wfm_node *assign = wfm_node_at(root, SEQ_ACTIVITIES, 1);
    ck_assert_int_eq(eval_i32(assign, AS_VALUE, &ev_main), 14);
    /* ForEach body: Ed (item) under env(main), the body Sequence's Ev (inner sum) under Ed. */
    const wfm_node *fe = wfm_node_at(root, SEQ_ACTIVITIES, 2);
    const wfm_node *body = wfm__node_prop(fe, FE_BODY)->delegate->body;
    wf_value ed_slots[1] = {wf_int32(3)};
    wfm_env ed = {&ev_main, ed_slots, 1};
    wf_value inner_slots[1] = {wf_int32(0)};
    wfm_env ev_body = {&ed, inner_slots, 1};
    const wfm_node *in_assign = wfm_node_at(body, SEQ_ACTIVITIES, 0);
    ck_assert_int_eq(eval_i32(in_assign, AS_VALUE, &ev_body), 6);
    wf_value v99 = wf_int32(99);
    ck_assert_int_eq(wfm_expr_store(wfm__node_prop(in_assign, AS_TO)->expr, &ev_body, &v99, &exc), WF_OK);
    ck_assert_int_eq(inner_slots[0].u.i32, 99); /* the inner sum shadows the outer one */
    ck_assert_int_eq(main_slots[0].u.i32, 10);
    const wfm_node *in_wl = wfm_node_at(body, SEQ_ACTIVITIES, 1);
    wf_value text = eval_prop(in_wl, WL_TEXT, &ev_body);
    ck_assert_str_eq(wf_value_str(&text), "n=43");
    wf_value_release(&text);
    /* If.Then's Assign writes the Out argument Total in E0. */
    const wfm_node *iff = wfm_node_at(root, SEQ_ACTIVITIES, 3);
    wf_value cond = eval_prop(iff, IF_COND, &ev_main);
    ck_assert(cond.u.b);
    const wfm_node *then = wfm_node_child(iff, IF_THEN);
    wf_value v7 = wf_int32(7);
    ck_assert_int_eq(wfm_expr_store(wfm__node_prop(then, AS_TO)->expr, &ev_main, &v7, &exc), WF_OK);
    ck_assert_int_eq(e0_slots[2].u.i32, 7);
    const wfm_node *els = wfm_node_child(iff, IF_ELSE);
    text = eval_prop(els, WL_TEXT, &ev_main);
    ck_assert_str_eq(wf_value_str(&text), "log");
    wf_value_release(&text);
    wf_value_release(&main_slots[1]);
    wf_value_release(&e0_slots[3]);
    wfm_definition_release(def);
}
END_TEST

START_TEST(test_flowchart_references_and_cycles)
{
    wfm_definition *def = load_ok(DATA "flow.xaml");
    ck_assert_ptr_null(wfm_definition_class(def));
    ck_assert_uint_eq(wfm_definition_arg_count(def), 0);
    const wfm_node *fc = wfm_definition_root(def);
    ck_assert_str_eq(wfm_node_display_name(fc), "Loop");
    const wfm_node *start = wfm_node_child(fc, FC_START);
    ck_assert_ptr_nonnull(start);
    ck_assert_str_eq(wfm_node_x_name(start), "__ReferenceID0");
    ck_assert_uint_eq(wfm_node_count(fc, FC_NODES), 4);
    ck_assert_ptr_eq(wfm_node_at(fc, FC_NODES, 0), start);
    const wfm_node *dec = wfm_node_child(start, FS_NEXT);
    ck_assert_str_eq(wfm_node_display_name(dec), "More?");
    ck_assert_ptr_eq(wfm_node_at(fc, FC_NODES, 1), dec);
    ck_assert_ptr_eq(wfm_node_child(dec, FD_TRUE), start); /* a cycle */
    ck_assert_ptr_eq(wfm__node_owner(dec), fc);
    const wfm_node *sw = wfm_node_child(dec, FD_FALSE);
    ck_assert_ptr_eq(wfm_node_type_arg(sw), &wf_type_int32);
    ck_assert_uint_eq(wfm_node_count(sw, FW_CASES), 2);
    ck_assert_ptr_eq(wfm_node_at(sw, FW_CASES, 0), start);
    ck_assert_int_eq(wfm_node_key(sw, FW_CASES, 0)->u.i32, 1);
    ck_assert_int_eq(wfm_node_key(sw, FW_CASES, 1)->u.i32, 3);
    ck_assert_ptr_eq(wfm_node_child(sw, FW_DEFAULT), wfm_node_at(fc, FC_NODES, 3));
    /* Ids by position where each element is written. */
    ck_assert_str_eq(wfm_node_id(start), "1.1");
    ck_assert_str_eq(wfm_node_id(wfm_node_child(start, FS_ACTION)), "1.1.1");
    ck_assert_str_eq(wfm_node_id(dec), "1.1.2");
    ck_assert_str_eq(wfm_node_id(sw), "1.1.2.1");
    ck_assert_str_eq(wfm_node_id(wfm_node_at(fc, FC_NODES, 3)), "1.2");
    /* A FlowDecision's Condition is evaluated in its owner's (the Flowchart's) environment. */
    wf_value fc_slots[1] = {wf_int32(2)};
    wfm_env e0 = {NULL, NULL, 0};
    wfm_env ev = {&e0, fc_slots, 1};
    wf_value c = eval_prop(dec, FD_COND, &ev);
    ck_assert(c.u.b);
    wfm_definition_release(def);
}
END_TEST

START_TEST(test_switch_catch_invoke_and_prepare)
{
    wfm_definition *def = load_ok(DATA "misc.xaml");
    ck_assert(wfm_definition_arg_has_default(def, 0));
    ck_assert_ptr_nonnull(def->args[0].expr);
    const wfm_node *tc = wfm_definition_root(def);
    const wfm_node *sw = wfm_node_child(tc, TC_TRY);
    ck_assert_ptr_eq(wfm_node_type_arg(sw), &wf_type_string);
    ck_assert_uint_eq(wfm_node_count(sw, SW_CASES), 2);
    ck_assert_str_eq(wf_value_str(wfm_node_key(sw, SW_CASES, 1)), "bc");
    const wfm_node *im = wfm_node_at(sw, SW_CASES, 1);
    ck_assert_str_eq(wfm__node_prop(im, IM_TARGET)->type_text, "p:Any");
    ck_assert_ptr_null(wfm_node_prop_type(im, IM_TARGET));
    ck_assert_str_eq((const char *)wfm_node_data(im), "calc");
    ck_assert_str_eq(wf_value_str(wfm_node_literal(im, IM_METHOD)), "add");
    ck_assert_uint_eq(wfm_node_count(im, IM_PARAMS), 3);
    ck_assert_int_eq(wfm_node_param_dir(im, IM_PARAMS, 1), WFM_PROP_IN);
    ck_assert_int_eq(wfm_node_param_dir(im, IM_PARAMS, 2), WFM_PROP_OUT);
    ck_assert_ptr_eq(wfm_node_param_type(im, IM_PARAMS, 1), &wf_type_int32);
    ck_assert_int_eq(wfm__node_prop(im, IM_PARAMS)->params[1].literal.u.i32, 40);
    ck_assert_ptr_nonnull(wfm__node_prop(im, IM_PARAMS)->params[2].expr);
    ck_assert_uint_eq(wfm_node_count(tc, TC_CATCHES), 1);
    const wfm_node *ca = wfm_node_at(tc, TC_CATCHES, 0);
    ck_assert_str_eq(ca->kind->spec->category, "Catch");
    ck_assert_ptr_eq(wfm__node_owner(ca), tc);
    ck_assert_ptr_eq(wfm_node_type_arg(ca), &wf_exc_invalid_operation);
    ck_assert_str_eq(wfm__node_prop(ca, CA_ACTION)->delegate->arg_name, "ex");
    const wfm_node *probe = wfm_node_child(tc, TC_FINALLY);
    ck_assert_int_eq(wfm_node_literal(probe, PR_COUNT)->u.i32, 5);
    ck_assert(wfm_node_literal(probe, PR_FLAG)->u.b);
    /* A property's members of other kinds share storage: accessors of the wrong kind read
     * nothing rather than another kind's bytes. */
    ck_assert_ptr_null(wfm_node_at(im, IM_PARAMS, 0));
    ck_assert_ptr_null(wfm_node_child(im, IM_PARAMS));
    ck_assert_ptr_null(wfm_node_key(sw, SW_EXPR, 0));
    ck_assert(wf_is_null(wfm_node_literal(tc, TC_CATCHES)));
    ck_assert_str_eq(wfm_node_type_text(im, IM_METHOD), "");
    ck_assert_ptr_null(wfm_node_type_prefix(im, IM_PARAMS));
    ck_assert_ptr_null(wfm_node_param_type(sw, SW_CASES, 0));
    ck_assert_str_eq(wfm_node_display_name(im), "InvokeMethod"); /* the kind's name */
    wfm_definition_release(def);
}
END_TEST

/* Visual Studio 2010 style: prefixed activities namespace, debugger and VB settings attributes
 * outside mc:Ignorable, literal TimeSpan default. */
START_TEST(test_vs2010_file)
{
    wfm_definition *def = load_ok(DATA "vs2010.xaml");
    ck_assert_str_eq(wfm_definition_class(def), "Legacy.Tool");
    ck_assert_ptr_eq(wfm_definition_arg_type(def, 0), &wf_type_datetime);
    const wfm_node *root = wfm_definition_root(def);
    ck_assert_ptr_eq(root->vars[0].type, &wf_type_timespan);
    ck_assert(root->vars[0].literal.u.i64 == 90 * (int64_t)1000000);
    const wfm_node *delay = wfm_node_at(root, SEQ_ACTIVITIES, 0);
    wf_value slots0[1] = {wf_datetime_us(0)};
    wf_value slots1[1] = {wf_timespan_us(5)};
    wfm_env e0 = {NULL, slots0, 1}, ev = {&e0, slots1, 1};
    wf_value d = eval_prop(delay, DL_DURATION, &ev);
    ck_assert(d.u.i64 == 5);
    const wfm_node *wl = wfm_node_at(root, SEQ_ACTIVITIES, 1);
    wf_value text = eval_prop(wl, WL_TEXT, &ev);
    ck_assert_ptr_nonnull(strstr(wf_value_str(&text), "started 1970-01-01"));
    wf_value_release(&text);
    wfm_definition_release(def);
}
END_TEST

START_TEST(test_shared_activity_references)
{
    wfm_definition *def = load_ok(DATA "shared.xaml");
    const wfm_node *root = wfm_definition_root(def);
    const wfm_node *ch = wfm_node_at(root, SEQ_ACTIVITIES, 0);
    ck_assert_uint_eq(wfm_node_count(ch, CH_BRANCHES), 3);
    const wfm_node *t = wfm_node_child(wfm_node_at(ch, CH_BRANCHES, 0), BR_TRIGGER);
    ck_assert_str_eq(wfm_node_x_name(t), "t");
    ck_assert_ptr_eq(wfm_node_child(wfm_node_at(ch, CH_BRANCHES, 1), BR_TRIGGER), t);
    ck_assert_ptr_eq(wfm_node_child(wfm_node_at(ch, CH_BRANCHES, 2), BR_TRIGGER), t);
    ck_assert_str_eq(wfm_node_id(t), "1.1.1.1");
    ck_assert_uint_eq(wfm_definition_node_count(def), 6);
    wfm_definition_release(def);
}
END_TEST

START_TEST(test_defaults_for_absent_properties)
{
    static const char xaml[] =
        "<Sequence xmlns='http://schemas.microsoft.com/netfx/2009/xaml/activities' "
        "xmlns:t='urn:wfbridge:test' xmlns:x='http://schemas.microsoft.com/winfx/2006/xaml'>\n"
        "  <t:Probe/>\n  <WriteLine/>\n  <WriteLine Text='{x:Null}'/>\n"
        "  <If Condition='[true]'><If.Then><x:Null/></If.Then></If>\n"
        "  <x:Null/>\n"
        "</Sequence>\n";
    wfm_load_opts opts = WFM_LOAD_OPTS_INIT;
    opts.catalogue = cat;
    opts.types = types;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_definition_load_mem(&opts, "mem.xaml", xaml, strlen(xaml), &def, &err),
                     WF_OK);
    const wfm_node *root = wfm_definition_root(def);
    const wfm_node *probe = wfm_node_at(root, SEQ_ACTIVITIES, 0);
    ck_assert(!wfm_node_has(probe, PR_COUNT));
    ck_assert_int_eq(wfm_node_literal(probe, PR_COUNT)->u.i32, 7);
    ck_assert(wf_is_null(wfm_node_literal(probe, PR_FLAG)));
    const wfm_node *wl = wfm_node_at(root, SEQ_ACTIVITIES, 1);
    ck_assert(!wfm_node_has(wl, WL_TEXT));
    ck_assert_str_eq(wfm_node_loc(wl).file, "mem.xaml");
    ck_assert_uint_eq(wfm_node_loc(wl).line, 3);
    ck_assert(wfm_node_has(wfm_node_at(root, SEQ_ACTIVITIES, 2), WL_TEXT));
    ck_assert_uint_eq(wfm_node_count(root, SEQ_ACTIVITIES), 4); /* <x:Null/> adds nothing */
    const wfm_node *iff = wfm_node_at(root, SEQ_ACTIVITIES, 3);
    ck_assert(wfm_node_has(iff, IF_THEN));
    ck_assert_ptr_null(wfm_node_child(iff, IF_THEN));
    ck_assert(!wfm_node_has(iff, IF_ELSE));
    ck_assert_str_eq(wfm_definition_path(def), "mem.xaml");
    /* Shared by reference count. */
    ck_assert_ptr_eq(wfm_definition_retain(def), def);
    wfm_definition_release(def);
    ck_assert_uint_eq(wfm_definition_node_count(def), 5);
    wfm_definition_release(def);
    wfm_definition_release(NULL);
}
END_TEST

/* The loader keeps no global state: concurrent loads against one catalogue and type table
 * give equal definitions, and a definition may be released from another thread. */
static void *load_thread(void *arg)
{
    wfm_definition **out = arg;
    for (int i = 0; i < 20; i++) {
        wfm_definition *def = load_ok(DATA "order.xaml");
        if (i < 19)
            wfm_definition_release(def);
        else
            *out = def;
    }
    return NULL;
}

START_TEST(test_concurrent_loads)
{
    pthread_t threads[4];
    wfm_definition *defs[4] = {NULL};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, load_thread, &defs[i]), 0);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(wfm_definition_node_count(defs[i]), 11);
        ck_assert(wfm_definition_hash(defs[i]) == wfm_definition_hash(defs[0]));
        ck_assert_ptr_eq(wfm_definition_arg_type(defs[i], 1), wfm_definition_arg_type(defs[0], 1));
    }
    for (int i = 0; i < 4; i++)
        wfm_definition_release(defs[i]);
}
END_TEST

/* Ids are built on the first wfm_node_id: threads asking at once for the ids of one fresh
 * definition all get the same strings, at the same addresses, valid until it is released. */
typedef struct ids_job {
    const wfm_definition *def;
    const char *ids[11];
} ids_job;

static void *ids_thread(void *arg)
{
    ids_job *job = arg;
    for (size_t i = 11; i-- > 0;)
        job->ids[i] = wfm_node_id(wfm_definition_node_at(job->def, i));
    return NULL;
}

START_TEST(test_ids_built_once_for_concurrent_readers)
{
    wfm_definition *def = load_ok(DATA "order.xaml");
    ck_assert_uint_eq(wfm_definition_node_count(def), 11);
    pthread_t threads[4];
    ids_job jobs[4];
    for (int t = 0; t < 4; t++) {
        jobs[t].def = def;
        ck_assert_int_eq(pthread_create(&threads[t], NULL, ids_thread, &jobs[t]), 0);
    }
    for (int t = 0; t < 4; t++)
        ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
    for (size_t i = 0; i < 11; i++) {
        const wfm_node *node = wfm_definition_node_at(def, i);
        ck_assert_ptr_nonnull(jobs[0].ids[i]);
        ck_assert_str_eq(wfm_node_id(node), jobs[0].ids[i]);
        for (int t = 1; t < 4; t++)
            ck_assert_ptr_eq(jobs[t].ids[i], jobs[0].ids[i]);
        for (size_t k = 0; k < i; k++) /* one id per node */
            ck_assert_str_ne(jobs[0].ids[k], jobs[0].ids[i]);
    }
    ck_assert_str_eq(jobs[0].ids[0], "1");
    ck_assert_str_eq(wfm_node_id(wfm_node_at(wfm_definition_root(def), SEQ_ACTIVITIES, 1)), "1.2");
    wfm_definition_release(def);
}
END_TEST

/* ---- bad_input ------------------------------------------------------------------------ */
typedef struct bad_case {
    const char *file;
    wf_status code;
    unsigned line, col;
    const char *needle;
} bad_case;

static const bad_case bad_cases[] = {
    {"unknown_activity.xaml", WF_E_SCHEMA, 3, 3, "unknown activity 'Sequencer'"},
    {"unknown_attribute.xaml", WF_E_SCHEMA, 3, 14, "unknown attribute 'Txt'"},
    {"undeclared_variable.xaml", WF_E_NAME, 6, 29, "unknown name 'totl'"},
    {"type_mismatch_assign.xaml", WF_E_TYPE, 6, 28, "String to Int32"},
    {"type_mismatch_wrapper.xaml", WF_E_TYPE, 10, 36, "Assign.Value expects Int32"},
    {"duplicate_variable.xaml", WF_E_SCHEMA, 5, 48, "duplicate variable 'n'"},
    {"out_argument_not_location.xaml", WF_E_TYPE, 6, 16, "not assignable"},
    {"out_argument_literal.xaml", WF_E_SCHEMA, 6, 15, "location"},
    {"missing_reference.xaml", WF_E_NAME, 2, 30, "unknown reference 'Nowhere'"},
    {"activity_in_flownode_slot.xaml", WF_E_SCHEMA, 4, 5, "WriteLine cannot appear in "
                                                          "Flowchart.StartNode"},
    {"malformed.xaml", WF_E_XML, 3, 12, "mismatch"},
    {"unknown_type.xaml", WF_E_TYPE, 4, 32, "unknown type 'x:Int33'"},
    {"duplicate_argument.xaml", WF_E_SCHEMA, 6, 23, "duplicate argument 'a'"},
    {"missing_required.xaml", WF_E_SCHEMA, 3, 3, "If.Condition is required"},
    {"two_children_in_then.xaml", WF_E_SCHEMA, 6, 7, "more than one child in If.Then"},
    {"literal_not_convertible.xaml", WF_E_TYPE, 3, 20, "cannot convert 'soon' to TimeSpan"},
    {"variables_not_allowed.xaml", WF_E_SCHEMA, 4, 5, "If does not accept Variables"},
    {"type_arguments_not_generic.xaml", WF_E_SCHEMA, 3, 14, "WriteLine does not take "
                                                            "x:TypeArguments"},
    {"unknown_property_element.xaml", WF_E_SCHEMA, 4, 5, "unknown property 'If.Than'"},
    {"duplicate_key.xaml", WF_E_SCHEMA, 5, 34, "duplicate key '1'"},
    {"reference_wrong_category.xaml", WF_E_SCHEMA, 6, 18, "WriteLine cannot appear in "
                                                          "Flowchart.StartNode"},
    {"unclaimed_attribute.xaml", WF_E_SCHEMA, 3, 22, "unknown attribute 'Other' on Probe"},
    {"prepare_error.xaml", WF_E_SCHEMA, 3, 3, "Extra must not be 'bad'"},
    {"member_not_argument.xaml", WF_E_SCHEMA, 4, 32, "must be an InArgument"},
    {"no_body.xaml", WF_E_SCHEMA, 1, 1, "no body activity"},
    {"two_bodies.xaml", WF_E_SCHEMA, 4, 3, "more than one child in Activity"},
    {"catch_type_mismatch.xaml", WF_E_TYPE, 7, 40, "expects InvalidOperationException"},
    {"unknown_argument_default.xaml", WF_E_NAME, 1, 27, "unknown argument 'Wf.Nope'"},
    {"reference_to_activity.xaml", WF_E_SCHEMA, 5, 7, "x:Reference cannot appear in If.Then"},
    {"set_twice.xaml", WF_E_SCHEMA, 4, 5, "If.Condition is set more than once"},
    {"attribute_in_unlisted_namespace.xaml", WF_E_SCHEMA, 3, 23, "unknown attribute 'foo:Colour'"},
    {"ignorable_outside_its_element.xaml", WF_E_SCHEMA, 5, 23, "unknown attribute 'sap:Anything'"},
    {"unknown_target_type.xaml", WF_E_TYPE, 3, 29, "unknown type 'q:Nope'"},
    {"shared_reference_other_owner.xaml", WF_E_SCHEMA, 8, 24, "points outside"},
    {"element_without_namespace.xaml", WF_E_SCHEMA, 1, 1, "unknown activity 'Flowchart'"},
    {"wrong_argument_direction.xaml", WF_E_SCHEMA, 7, 7, "InArgument cannot appear in Assign.To"},
};

START_TEST(test_bad_file_reports_location)
{
    const bad_case *bc = &bad_cases[_i];
    char path[256];
    snprintf(path, sizeof path, DATA "bad/%s", bc->file);
    wf_diags *diags = wf_diags_create();
    wfm_definition *def = (wfm_definition *)&path; /* must be reset to NULL */
    wf_error err = WF_ERROR_INIT;
    wf_status rc = load(path, diags, &def, &err);
    if (getenv("WF_SHOW_BAD"))
        fprintf(stderr, "%s: %s:%u:%u: %s\n", bc->file, wf_status_name(rc), err.line, err.col,
                err.message);
    ck_assert_msg(rc == bc->code, "%s: rc %d (%s:%u:%u: %s)", bc->file, (int)rc, err.file,
                  err.line, err.col, err.message);
    ck_assert_ptr_null(def);
    WF_ASSERT_ERROR(err, bc->code, bc->line, bc->col, bc->needle);
    ck_assert_str_eq(err.file, path);
    ck_assert_uint_ge(wf_diags_error_count(diags), 1);
    wf_diags_destroy(diags);
}
END_TEST

START_TEST(test_three_independent_errors_all_reported)
{
    wf_diags *diags = wf_diags_create();
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(load(DATA "bad/three_errors.xaml", diags, &def, &err), WF_E_SCHEMA);
    ck_assert_ptr_null(def);
    ck_assert_uint_eq(wf_diags_error_count(diags), 3);
    wf_diags_sort(diags);
    const wf_diag *d0 = wf_diags_get(diags, 0);
    const wf_diag *d1 = wf_diags_get(diags, 1);
    const wf_diag *d2 = wf_diags_get(diags, 2);
    WF_ASSERT_ERROR(d0->error, WF_E_SCHEMA, 5, 14, "unknown attribute 'Txt'");
    WF_ASSERT_ERROR(d1->error, WF_E_NAME, 6, 28, "nope");
    WF_ASSERT_ERROR(d2->error, WF_E_SCHEMA, 8, 5, "unknown activity 'Bogus'");
    WF_ASSERT_ERROR(err, WF_E_SCHEMA, 5, 14, "Txt");
    wf_diags_destroy(diags);
}
END_TEST

/* Expression errors land on the source column even after "&quot;" and "&lt;" and newlines. */
START_TEST(test_expression_error_columns_count_entities)
{
    wf_diags *diags = wf_diags_create();
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(load(DATA "bad/entity_column.xaml", diags, &def, &err), WF_E_NAME);
    ck_assert_ptr_null(def);
    ck_assert_uint_eq(wf_diags_error_count(diags), 2);
    wf_diags_sort(diags);
    WF_ASSERT_ERROR(wf_diags_get(diags, 0)->error, WF_E_NAME, 2, 53, "missing");
    WF_ASSERT_ERROR(wf_diags_get(diags, 1)->error, WF_E_NAME, 6, 2, "absent");
    wf_diags_destroy(diags);
}
END_TEST

START_TEST(test_missing_file_is_io_error)
{
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(load(DATA "no_such_file.xaml", NULL, &def, &err), WF_E_IO);
    ck_assert_ptr_null(def);
    ck_assert_str_eq(err.file, DATA "no_such_file.xaml");
}
END_TEST

START_TEST(test_load_needs_catalogue_and_types)
{
    wfm_load_opts opts = WFM_LOAD_OPTS_INIT;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_definition_load_mem(&opts, "x", "<a/>", 4, &def, &err), WF_E_USAGE);
    ck_assert_ptr_null(def);
}
END_TEST

/* ---- limits -------------------------------------------------------------------------- */
static char *nested_sequences(unsigned depth)
{
    wf_buf buf;
    wf_buf_init(&buf);
    wf_buf_adds(&buf, "<Sequence xmlns='http://schemas.microsoft.com/netfx/2009/xaml/activities'>");
    for (unsigned i = 1; i < depth; i++)
        wf_buf_adds(&buf, "<Sequence>");
    for (unsigned i = 0; i < depth; i++)
        wf_buf_adds(&buf, "</Sequence>");
    return wf_buf_detach(&buf, NULL);
}

START_TEST(test_deep_nesting_hits_xml_limit)
{
    char *text = nested_sequences(5000);
    wfm_load_opts opts = WFM_LOAD_OPTS_INIT;
    opts.catalogue = cat;
    opts.types = types;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_definition_load_mem(&opts, "deep.xaml", text, strlen(text), &def, &err),
                     WF_E_LIMIT);
    ck_assert_ptr_null(def);
    wf_free(text);
}
END_TEST

START_TEST(test_nesting_within_limit_loads)
{
    char *text = nested_sequences(200);
    wfm_load_opts opts = WFM_LOAD_OPTS_INIT;
    opts.catalogue = cat;
    opts.types = types;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_definition_load_mem(&opts, "deep.xaml", text, strlen(text), &def, &err),
                     WF_OK);
    ck_assert_uint_eq(wfm_definition_node_count(def), 200);
    const wfm_node *last = wfm_definition_node_at(def, 199);
    unsigned depth = 0;
    for (const wfm_node *n = last; wfm_node_parent(n); n = wfm_node_parent(n))
        depth++;
    ck_assert_uint_eq(depth, 199);
    wfm_definition_release(def);
    wf_free(text);
}
END_TEST

/* ---- nomem ----------------------------------------------------------------------------- */
typedef struct nomem_ud {
    char *text;
    size_t len;
} nomem_ud;

static wf_status load_op(void *ud)
{
    nomem_ud *u = ud;
    wfm_load_opts opts = WFM_LOAD_OPTS_INIT;
    opts.catalogue = cat;
    opts.types = types;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfm_definition_load_mem(&opts, "order.xaml", u->text, u->len, &def, &err);
    if (rc != WF_OK)
        ck_assert_ptr_null(def);
    wfm_definition_release(def);
    return rc;
}

static void nomem_file(const char *path)
{
    nomem_ud u;
    u.text = wf_test_read_file(path, &u.len);
    ck_assert_ptr_nonnull(u.text);
    unsigned runs = wf_test_nomem_loop(load_op, &u, 20000);
    ck_assert_uint_gt(runs, 10);
    ck_assert_int_eq(load_op(&u), WF_OK);
    wf_free(u.text);
}

START_TEST(test_nomem_designer_file)
{
    nomem_file(DATA "order.xaml");
}
END_TEST

START_TEST(test_nomem_flowchart_and_misc)
{
    nomem_file(DATA "flow.xaml");
    nomem_file(DATA "misc.xaml");
}
END_TEST

Suite *modern_xaml_suite(void)
{
    Suite *s = suite_create("modern_xaml");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_designer_file_loads_arguments);
    tcase_add_test(tc, test_designer_file_gives_tree_ids_and_values);
    tcase_add_test(tc, test_designer_file_envs_slots_and_hops);
    tcase_add_test(tc, test_flowchart_references_and_cycles);
    tcase_add_test(tc, test_switch_catch_invoke_and_prepare);
    tcase_add_test(tc, test_vs2010_file);
    tcase_add_test(tc, test_shared_activity_references);
    tcase_add_test(tc, test_defaults_for_absent_properties);
    tcase_add_test(tc, test_concurrent_loads);
    tcase_add_test(tc, test_ids_built_once_for_concurrent_readers);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad_input");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_bad_file_reports_location, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, test_three_independent_errors_all_reported);
    tcase_add_test(tc, test_expression_error_columns_count_entities);
    tcase_add_test(tc, test_missing_file_is_io_error);
    tcase_add_test(tc, test_load_needs_catalogue_and_types);
    suite_add_tcase(s, tc);
    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_deep_nesting_hits_xml_limit);
    tcase_add_test(tc, test_nesting_within_limit_loads);
    suite_add_tcase(s, tc);
    tc = tcase_create("nomem");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_nomem_designer_file);
    tcase_add_test(tc, test_nomem_flowchart_and_misc);
    suite_add_tcase(s, tc);
    return s;
}

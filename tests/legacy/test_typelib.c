/* test_typelib.c — the native activity type library: loading wftltest.activities.xml from the
 * library path, every C type across the boundary, Out/InOut/Return bindings, ErrorOnNonZero,
 * class handlers and conditions, services, exceptions, and bad type libraries with line:col. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_native.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_typelib.h"
#include "../wf_test_util.h"

/* ---- a property bag standing in for an activity's dependency properties ----------------- */
#define BAG_MAX 32
typedef struct bag {
    const char *names[BAG_MAX];
    wf_value values[BAG_MAX];
    size_t count;
    unsigned gets, sets, traces;
    char trace[256];
} bag;

static void bag_put(bag *b, const char *name, wf_value v) /* takes v */
{
    for (size_t i = 0; i < b->count; i++)
        if (strcmp(b->names[i], name) == 0) {
            wf_value_release(&b->values[i]);
            b->values[i] = v;
            return;
        }
    ck_assert_uint_lt(b->count, BAG_MAX);
    b->names[b->count] = name;
    b->values[b->count++] = v;
}

static const wf_value *bag_get(const bag *b, const char *name)
{
    for (size_t i = 0; i < b->count; i++)
        if (strcmp(b->names[i], name) == 0)
            return &b->values[i];
    return NULL;
}

static void bag_fini(bag *b)
{
    for (size_t i = 0; i < b->count; i++)
        wf_value_release(&b->values[i]);
}

static wf_status bag_get_cb(void *ud, const char *name, const wf_type *type, wf_value *out,
                            wf_error *err)
{
    bag *b = ud;
    (void)type;
    b->gets++;
    const wf_value *v = bag_get(b, name);
    if (!v)
        return wf_error_set(err, WF_E_NAME, NULL, "no property '%s'", name);
    *out = wf_value_retain(v);
    return WF_OK;
}

static wf_status bag_set_cb(void *ud, const char *name, const wf_value *value, wf_error *err)
{
    (void)err;
    bag *b = ud;
    b->sets++;
    bag_put(b, name, wf_value_retain(value));
    return WF_OK;
}

static void bag_trace_cb(void *ud, const wfl_tl_call_record *rec)
{
    bag *b = ud;
    b->traces++;
    wf_buf buf;
    wf_buf_init(&buf);
    wf_buf_addf(&buf, "%s(", wfl_tl_func_symbol(rec->fn));
    for (size_t i = 0; i < rec->count; i++) {
        if (i)
            wf_buf_adds(&buf, ",");
        wf_value_to_json(wf_is_null(&rec->args[i]) ? &rec->outs[i] : &rec->args[i], &buf);
    }
    wf_buf_adds(&buf, ")=");
    wf_value_to_json(rec->ret, &buf);
    snprintf(b->trace, sizeof b->trace, "%s", buf.data);
    wf_buf_fini(&buf);
}

static wfl_tl_binding binding_for(bag *b)
{
    wfl_tl_binding bind = WFL_TL_BINDING_INIT;
    bind.get = bag_get_cb;
    bind.set = bag_set_cb;
    bind.trace = bag_trace_cb;
    bind.ud = b;
    return bind;
}

/* ---- fixture ---------------------------------------------------------------------------- */
static wf_types *types;
static wf_libpath *libpath;
static wfl_typelib *tl;

static void setup(void)
{
    wf_error err = WF_ERROR_INIT;
    char dirs[1024];
    snprintf(dirs, sizeof dirs, "tests/legacy/data/bad:%s", wf_test_lib_dir());
    types = wf_types_create();
    ck_assert_ptr_nonnull(types);
    ck_assert_int_eq(wf_libpath_create(dirs, &libpath, &err), WF_OK);
    tl = NULL;
}

static void teardown(void)
{
    wfl_typelib_destroy(tl);
    wf_libpath_destroy(libpath);
    wf_types_destroy(types);
}

static void load_test_lib(void)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_typelib_load(libpath, types, "wftltest", &tl, NULL, &err) == WF_OK,
                  "%s:%u:%u: %s", err.file, err.line, err.col, err.message);
}

static wf_value str(const char *s)
{
    wf_value v;
    ck_assert_int_eq(wf_value_cstring(s, &v), WF_OK);
    return v;
}

/* ---- core ------------------------------------------------------------------------------- */
START_TEST(test_load_describes_activity_types)
{
    load_test_lib();
    ck_assert_str_eq(wfl_typelib_name(tl), "WfTlTest");
    ck_assert_str_eq(wfl_typelib_library(tl), "libwftltest.so");
    ck_assert_ptr_nonnull(wfl_typelib_native_lib(tl));
    ck_assert_uint_eq(wfl_typelib_activity_count(tl), 9);
    const wfl_tl_activity *a = wfl_typelib_activity(tl, "ReserveStock");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_null(wfl_typelib_activity(tl, "Nope"));
    ck_assert_uint_eq(wfl_tl_activity_prop_count(a), 4);
    const wfl_tl_prop *q = wfl_tl_activity_find_prop(a, "Quantity");
    ck_assert_ptr_eq(q->type, &wf_type_int32);
    ck_assert_int_eq(q->dir, WFL_TL_IN);
    ck_assert(q->has_default);
    ck_assert_int_eq(q->default_value.u.i32, 1);
    ck_assert_int_eq(wfl_tl_activity_find_prop(a, "Ticket")->dir, WFL_TL_OUT);
    const wfl_tl_func *fn = wfl_tl_activity_func(a);
    ck_assert_str_eq(wfl_tl_func_symbol(fn), "tl_reserve");
    ck_assert(wfl_tl_func_error_on_nonzero(fn));
    ck_assert_uint_eq(wfl_tl_func_param_count(fn), 3);
    ck_assert_str_eq(wfl_tl_func_return(fn)->name, "Status");
    ck_assert_ptr_nonnull(wfl_tl_func_native(fn));
    ck_assert_uint_eq(wfl_tl_func_loc(fn).line, 42);
    const wfl_tl_prop *s = wfl_tl_activity_find_prop(wfl_typelib_activity(tl, "AllTypes"), "S");
    ck_assert_str_eq(wf_value_str(&s->default_value), "none");
    const wfl_tl_prop *g =
        wfl_tl_activity_find_prop(wfl_typelib_activity(tl, "Greet"), "Greeting");
    ck_assert_ptr_eq(g->type, &wf_type_string); /* "System.String" */
}
END_TEST

START_TEST(test_every_type_crosses_the_boundary)
{
    load_test_lib();
    bag b = {0};
    bag_put(&b, "B", wf_bool(true));
    bag_put(&b, "I", wf_int32(21));
    bag_put(&b, "L", wf_int64(-5000000000LL));
    bag_put(&b, "D", wf_double(2.5));
    bag_put(&b, "M", wf_dec(wf_decimal_from_currency(125000))); /* 12.5 */
    bag_put(&b, "T", wf_datetime_us(86400000000LL));
    bag_put(&b, "S", str("héllo"));
    wf_error err = WF_ERROR_INIT;
    wfl_tl_binding bind = binding_for(&b);
    const wfl_tl_func *fn = wfl_tl_activity_func(wfl_typelib_activity(tl, "AllTypes"));
    wf_value ret;
    ck_assert_int_eq(wfl_tl_func_invoke(fn, &bind, &ret, &err), WF_OK);
    ck_assert_ptr_eq(ret.type, &wf_type_int32);
    ck_assert_int_eq(ret.u.i32, 42);
    ck_assert_int_eq(bag_get(&b, "Doubled")->u.i32, 42);
    ck_assert_str_eq(wf_value_str(bag_get(&b, "Summary")),
                     "b=1 i=21 l=-5000000000 d=2.50 m=125000 t=86400000000 s=héllo");
    ck_assert_uint_eq(b.gets, 7);
    ck_assert_uint_eq(b.sets, 2);
    ck_assert_uint_eq(b.traces, 1);
    ck_assert_ptr_nonnull(strstr(b.trace, "tl_all_types(true,21,-5000000000,2.5,"));
    ck_assert_ptr_nonnull(strstr(b.trace, ")=42"));
    wf_value_release(&ret);
    bag_fini(&b);
}
END_TEST

START_TEST(test_in_values_are_converted_to_declared_types)
{
    load_test_lib();
    bag b = {0};
    bag_put(&b, "X", wf_int32(3)); /* Int32 into a Double parameter */
    bag_put(&b, "Factor", wf_int32(4));
    wf_error err = WF_ERROR_INIT;
    wfl_tl_binding bind = binding_for(&b);
    const wfl_tl_func *fn = wfl_tl_activity_func(wfl_typelib_activity(tl, "Scale"));
    ck_assert_int_eq(wfl_tl_func_invoke(fn, &bind, NULL, &err), WF_OK);
    ck_assert_ptr_eq(bag_get(&b, "Y")->type, &wf_type_double);
    ck_assert(bag_get(&b, "Y")->u.d == 12.0);
    bag_fini(&b);
}
END_TEST

START_TEST(test_inout_values_are_updated)
{
    load_test_lib();
    bag b = {0};
    bag_put(&b, "Total", wf_int32(10));
    bag_put(&b, "Scale", wf_double(1.5));
    bag_put(&b, "Label", str("go"));
    bag_put(&b, "Add", wf_int32(5));
    wf_error err = WF_ERROR_INIT;
    wfl_tl_binding bind = binding_for(&b);
    const wfl_tl_func *fn = wfl_tl_activity_func(wfl_typelib_activity(tl, "Accumulate"));
    ck_assert_ptr_null(wfl_tl_func_return(fn));
    ck_assert_int_eq(wfl_tl_func_invoke(fn, &bind, NULL, &err), WF_OK);
    ck_assert_int_eq(bag_get(&b, "Total")->u.i32, 15);
    ck_assert(bag_get(&b, "Scale")->u.d == 3.0);
    ck_assert_str_eq(wf_value_str(bag_get(&b, "Label")), "go!");
    ck_assert_int_eq(wfl_tl_func_invoke(fn, &bind, NULL, &err), WF_OK);
    ck_assert_int_eq(bag_get(&b, "Total")->u.i32, 20);
    ck_assert_str_eq(wf_value_str(bag_get(&b, "Label")), "go!!");
    bag_fini(&b);
}
END_TEST

START_TEST(test_return_values_of_each_type)
{
    load_test_lib();
    bag b = {0};
    wf_error err = WF_ERROR_INIT;
    wfl_tl_binding bind = binding_for(&b);
    bag_put(&b, "Who", str("Ada"));
    bag_put(&b, "When", wf_datetime_us(1000));
    bag_put(&b, "Amount", wf_dec(wf_decimal_from_currency(125000)));
    bag_put(&b, "N", wf_int32(4));
    ck_assert_int_eq(wfl_tl_func_invoke(wfl_tl_activity_func(wfl_typelib_activity(tl, "Greet")),
                                        &bind, NULL, &err), WF_OK);
    ck_assert_str_eq(wf_value_str(bag_get(&b, "Greeting")), "Hello, Ada");
    ck_assert_int_eq(wfl_tl_func_invoke(
                         wfl_tl_activity_func(wfl_typelib_activity(tl, "NextDay")), &bind, NULL,
                         &err), WF_OK);
    ck_assert_ptr_eq(bag_get(&b, "Next")->type, &wf_type_datetime);
    ck_assert(bag_get(&b, "Next")->u.i64 == 86400000000LL + 1000);
    ck_assert_int_eq(wfl_tl_func_invoke(wfl_tl_activity_func(wfl_typelib_activity(tl, "Half")),
                                        &bind, NULL, &err), WF_OK);
    ck_assert_ptr_eq(bag_get(&b, "Result")->type, &wf_type_decimal);
    ck_assert(bag_get(&b, "Result")->u.i64 == 62500);
    ck_assert_int_eq(wfl_tl_func_invoke(
                         wfl_tl_activity_func(wfl_typelib_activity(tl, "IsEven")), &bind, NULL,
                         &err), WF_OK);
    ck_assert(bag_get(&b, "Even")->u.b);
    bag_fini(&b);
}
END_TEST

START_TEST(test_error_on_nonzero_faults_after_write_back)
{
    load_test_lib();
    bag b = {0};
    bag_put(&b, "Sku", str("BOLT"));
    bag_put(&b, "Quantity", wf_int32(4));
    wf_error err = WF_ERROR_INIT;
    wfl_tl_binding bind = binding_for(&b);
    const wfl_tl_func *fn = wfl_tl_activity_func(wfl_typelib_activity(tl, "ReserveStock"));
    ck_assert_int_eq(wfl_tl_func_invoke(fn, &bind, NULL, &err), WF_OK);
    ck_assert_str_eq(wf_value_str(bag_get(&b, "Ticket")), "T-BOLT-4");
    ck_assert_int_eq(bag_get(&b, "Status")->u.i32, 0);
    bag_put(&b, "Quantity", wf_int32(11));
    ck_assert_int_eq(wfl_tl_func_invoke(fn, &bind, NULL, &err), WF_E_NATIVE);
    ck_assert_ptr_nonnull(strstr(err.message, "tl_reserve"));
    ck_assert_ptr_nonnull(strstr(err.message, "7"));
    ck_assert_int_eq(bag_get(&b, "Status")->u.i32, 7); /* the Return binding still receives it */
    ck_assert_str_eq(wf_value_str(bag_get(&b, "Ticket")), "T-BOLT-11");
    bag_fini(&b);
}
END_TEST

/* Positional binding: values by parameter index, the Return binding after the parameters. */
typedef struct slots {
    wf_value v[4];
    unsigned gets, sets;
} slots;

static wf_status slot_get(void *ud, size_t index, wf_value *out, wf_error *err)
{
    (void)err;
    slots *s = ud;
    s->gets++;
    *out = wf_value_retain(&s->v[index]);
    return WF_OK;
}

static wf_status slot_set(void *ud, size_t index, const wf_value *value, wf_error *err)
{
    (void)err;
    slots *s = ud;
    s->sets++;
    wf_value_release(&s->v[index]);
    s->v[index] = wf_value_retain(value);
    return WF_OK;
}

START_TEST(test_values_by_parameter_index)
{
    load_test_lib();
    slots s = {{str("NUT"), wf_int32(11), wf_null(), wf_null()}, 0, 0};
    wfl_tl_binding bind = WFL_TL_BINDING_INIT; /* no by-name callbacks at all */
    bind.get_at = slot_get;
    bind.set_at = slot_set;
    bind.ud = &s;
    wf_error err = WF_ERROR_INIT;
    const wfl_tl_func *fn = wfl_tl_activity_func(wfl_typelib_activity(tl, "ReserveStock"));
    ck_assert_int_eq(wfl_tl_func_invoke(fn, &bind, NULL, &err), WF_E_NATIVE);
    ck_assert_str_eq(wf_value_str(&s.v[2]), "T-NUT-11"); /* Ticket, parameter 2 */
    ck_assert_int_eq(s.v[3].u.i32, 7);                   /* Status, the Return binding */
    ck_assert_uint_eq(s.gets, 2);
    ck_assert_uint_eq(s.sets, 2);
    for (size_t i = 0; i < 4; i++)
        wf_value_release(&s.v[i]);
}
END_TEST

START_TEST(test_class_handler_and_condition)
{
    load_test_lib();
    const wfl_tl_class *c = wfl_typelib_class(tl, "Contoso.OrderWorkflow");
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(wfl_tl_class_prop_count(c), 4);
    ck_assert_ptr_nonnull(wfl_tl_class_find_prop(c, "Lines")); /* declared after handlers */
    ck_assert_uint_eq(wfl_tl_class_func_count(c), 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_uint_eq(wfl_tl_class_func_index(c, wfl_tl_class_func_at(c, i)), i);
    const wfl_tl_func *other = wfl_tl_activity_func(wfl_typelib_activity(tl, "ReserveStock"));
    ck_assert_uint_eq(wfl_tl_class_func_index(c, other), 3); /* not the class's */
    ck_assert_ptr_null(wfl_tl_class_handler(c, "IsLarge")); /* a condition, not a handler */
    bag b = {0};
    bag_put(&b, "OrderId", str("ORD-7"));
    bag_put(&b, "Amount", wf_dec(wf_decimal_from_currency(1500LL * 10000)));
    wf_error err = WF_ERROR_INIT;
    wfl_tl_binding bind = binding_for(&b);
    const wfl_tl_func *h = wfl_tl_class_handler(c, "OnValidate");
    ck_assert_int_eq(wfl_tl_func_kind_of(h), WFL_TL_HANDLER);
    ck_assert_int_eq(wfl_tl_func_invoke(h, &bind, NULL, &err), WF_OK);
    ck_assert(bag_get(&b, "IsValid")->u.b);
    const wfl_tl_func *cond = wfl_tl_class_condition(c, "IsLarge");
    wf_value ret;
    ck_assert_int_eq(wfl_tl_func_invoke(cond, &bind, &ret, &err), WF_OK);
    ck_assert_ptr_eq(ret.type, &wf_type_bool);
    ck_assert(ret.u.b);
    bag_put(&b, "Amount", wf_dec(wf_decimal_from_currency(999LL * 10000)));
    ck_assert_int_eq(wfl_tl_func_invoke(cond, &bind, &ret, &err), WF_OK);
    ck_assert(!ret.u.b);
    ck_assert_int_eq(wfl_tl_func_invoke(wfl_tl_class_handler(c, "OnFail"), &bind, NULL, &err),
                     WF_E_NATIVE);
    ck_assert_ptr_nonnull(strstr(err.message, "order_fail"));
    bag_fini(&b);
}
END_TEST

START_TEST(test_service_methods_events_and_exceptions)
{
    load_test_lib();
    const wfl_tl_service *s = wfl_typelib_service(tl, "IApprovalService");
    ck_assert_ptr_nonnull(s);
    const wfl_tl_func *m = wfl_tl_service_method(s, "RequestApproval");
    ck_assert_uint_eq(wfl_tl_func_param_count(m), 2);
    const wfl_tl_event *e = wfl_tl_service_event(s, "Approved");
    ck_assert_uint_eq(wfl_tl_event_param_count(e), 2);
    ck_assert_str_eq(wfl_tl_event_param(e, 1)->name, "Comments");
    bag b = {0};
    bag_put(&b, "Approver", str("alice"));
    bag_put(&b, "Level", wf_int32(2));
    wf_error err = WF_ERROR_INIT;
    wfl_tl_binding bind = binding_for(&b);
    ck_assert_int_eq(wfl_tl_func_invoke(m, &bind, NULL, &err), WF_OK);
    ck_assert(bag_get(&b, "Approved")->u.b);
    bag_fini(&b);

    const wf_type *credit = wfl_typelib_exception(tl, "Contoso.CreditException");
    ck_assert_ptr_nonnull(credit);
    ck_assert_ptr_eq(wfl_typelib_exception(tl, "CreditException"), credit);
    ck_assert(wf_type_is_a(credit, &wf_exc_application));
    const wf_type *limit = wfl_typelib_exception(tl, "Contoso.CreditLimitException");
    ck_assert(wf_type_is_a(limit, credit));
    ck_assert_uint_eq(wfl_typelib_exception_count(tl), 2);
}
END_TEST

START_TEST(test_parse_only_has_no_native_binding)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/wftltest.activities.xml", wf_test_lib_dir());
    size_t len = 0;
    char *text = wf_test_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_typelib_parse(types, "mem.xml", text, len, &tl, NULL, &err), WF_OK);
    const wfl_tl_func *fn = wfl_tl_activity_func(wfl_typelib_activity(tl, "Half"));
    ck_assert_ptr_null(wfl_tl_func_native(fn));
    bag b = {0};
    wfl_tl_binding bind = binding_for(&b);
    ck_assert_int_eq(wfl_tl_func_invoke(fn, &bind, NULL, &err), WF_E_STATE);
    wf_free(text);
}
END_TEST

/* Markup plus rules: a class of properties and a service of events name no C function, so
 * the type library needs no Library; a Method or a Handler still does. */
START_TEST(test_data_only_library_needs_no_shared_object)
{
    static const char data_only[] =
        "<TypeLibrary xmlns='urn:wfbridge:typelib' Name='Lending'>\n"
        "  <Class Name='Lending.LoanApproval' BaseType='StateMachineWorkflowActivity'>"
        "<Property Name='Score' Type='Int32'/></Class>\n"
        "  <Service Name='ILoanEvents'><Event Name='Decided'/></Service>\n"
        "  <Class Name='Lending.Other'/>\n"
        "  <ActivityType Name='Scope' Definition='Scope.xoml' />\n"
        "</TypeLibrary>\n";
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(
        wfl_typelib_parse(types, "l.xml", data_only, strlen(data_only), &tl, NULL, &err), WF_OK);
    ck_assert_ptr_nonnull(wfl_typelib_class(tl, "Lending.LoanApproval"));
    ck_assert_str_eq(wfl_tl_class_base_type(wfl_typelib_class(tl, "Lending.LoanApproval")),
                     "StateMachineWorkflowActivity");
    ck_assert_ptr_null(wfl_tl_class_base_type(wfl_typelib_class(tl, "Lending.Other")));
    ck_assert(!wfl_tl_activity_is_container(wfl_typelib_activity(tl, "Scope")));
    ck_assert(!wfl_typelib_library(tl) || !*wfl_typelib_library(tl));
    wfl_typelib_destroy(tl);
    tl = NULL;
    static const char with_method[] =
        "<TypeLibrary xmlns='urn:wfbridge:typelib' Name='Lending'>\n"
        "  <Service Name='ILoan'><Method Name='Ask' Function='ask'/></Service>\n"
        "</TypeLibrary>\n";
    ck_assert_int_eq(
        wfl_typelib_parse(types, "l.xml", with_method, strlen(with_method), &tl, NULL, &err),
        WF_E_SCHEMA);
    WF_ASSERT_ERROR(err, WF_E_SCHEMA, 1, 1, "Library");
}
END_TEST

/* Parse a type library from text into tl; it must load. */
static void parse_ok(const char *name, const char *text)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfl_typelib_parse(types, name, text, strlen(text), &tl, NULL, &err) == WF_OK,
                  "%s", err.message);
}

/* An ASMX proxy declared as a <Service>: its Namespace (the proxy's WebServiceBinding
 * namespace, docs/convert.md "ASMX web services"), "" when the attribute is absent. */
START_TEST(test_service_namespace_of_a_web_proxy)
{
    parse_ok("p.xml",
             "<TypeLibrary xmlns='urn:wfbridge:typelib' Name='Accounts' Library='libacct.so'>\n"
             "  <Service Name='AccountService' Namespace='http://contoso.com/accounts/'>"
             "<Method Name='Deposit' Function='acct_deposit'>"
             "<Parameter Name='amount' Type='Int32' Direction='In'/>"
             "<Parameter Name='balance' Type='Int32' Direction='Return'/></Method></Service>\n"
             "  <Service Name='IAudit'><Event Name='Done'/></Service>\n"
             "</TypeLibrary>\n");
    ck_assert_str_eq(wfl_tl_service_namespace(wfl_typelib_service(tl, "AccountService")),
                     "http://contoso.com/accounts/");
    ck_assert_str_eq(wfl_tl_service_namespace(wfl_typelib_service(tl, "IAudit")), "");
}
END_TEST

/* A composite's properties take Direction as a native type's do (In, Out, InOut); without one
 * a property is InOut, copied into the body and back. */
START_TEST(test_composite_property_directions)
{
    static const char text[] =
        "<TypeLibrary xmlns='urn:wfbridge:typelib' Name='Desk'>\n"
        "  <ActivityType Name='Tally' Definition='Tally.xoml'>\n"
        "    <Property Name='Count' Type='Int32' Direction='In' Default='3'/>\n"
        "    <Property Name='Log' Type='String' Direction='Out'/>\n"
        "    <Property Name='Total' Type='Int32' Direction='InOut'/>\n"
        "    <Property Name='Note' Type='String'/>\n"
        "  </ActivityType>\n"
        "</TypeLibrary>\n";
    parse_ok("d.xml", text);
    const wfl_tl_activity *act = wfl_typelib_activity(tl, "Tally");
    ck_assert_int_eq(wfl_tl_activity_find_prop(act, "Count")->dir, WFL_TL_IN);
    ck_assert_int_eq(wfl_tl_activity_find_prop(act, "Log")->dir, WFL_TL_OUT);
    ck_assert_int_eq(wfl_tl_activity_find_prop(act, "Total")->dir, WFL_TL_INOUT);
    ck_assert_int_eq(wfl_tl_activity_find_prop(act, "Note")->dir, WFL_TL_INOUT);
}
END_TEST

/* A third-party composite known from its markup only: a leaf function plus its children. */
START_TEST(test_container_activity_type)
{
    static const char text[] =
        "<TypeLibrary xmlns='urn:wfbridge:typelib' Name='Bpel' Library='libbpel.so'>\n"
        "  <ActivityType Name='BpelScope' Function='bpel_scope' Children='Sequence'>\n"
        "    <Property Name='Isolated' Type='Boolean'/>\n"
        "  </ActivityType>\n"
        "</TypeLibrary>\n";
    parse_ok("b.xml", text);
    const wfl_tl_activity *a = wfl_typelib_activity(tl, "BpelScope");
    ck_assert(wfl_tl_activity_is_container(a));
    ck_assert_str_eq(wfl_tl_func_symbol(wfl_tl_activity_func(a)), "bpel_scope");
}
END_TEST

START_TEST(test_missing_typelib_is_not_found)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_typelib_load(libpath, types, "NoSuchAssembly", &tl, NULL, &err),
                     WF_E_NOTFOUND);
    ck_assert_ptr_null(tl);
    ck_assert_ptr_nonnull(strstr(err.message, "NoSuchAssembly"));
}
END_TEST

START_TEST(test_assembly_name_with_path_is_refused)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_ne(wfl_typelib_load(libpath, types, "../legacy/wftltest", &tl, NULL, &err),
                     WF_OK);
    ck_assert_ptr_null(tl);
}
END_TEST

/* ---- bad_input -------------------------------------------------------------------------- */
static void expect_bad(const char *name, wf_status code, unsigned line, unsigned col,
                       const char *needle)
{
    wf_error err = WF_ERROR_INIT;
    wf_diags *diags = wf_diags_create();
    ck_assert_int_eq(wfl_typelib_load(libpath, types, name, &tl, diags, &err), code);
    ck_assert_ptr_null(tl);
    WF_ASSERT_ERROR(err, code, line, col, needle);
    ck_assert_ptr_nonnull(strstr(err.file, name));
    wf_diags_destroy(diags);
}

START_TEST(test_bad_missing_library)
{
    expect_bad("missing_library", WF_E_NOLIB, 1, 67, "libnothere");
}
END_TEST

START_TEST(test_bad_library_outside_path_is_refused)
{
    expect_bad("library_outside_path", WF_E_NOLIB, 2, 23, "../x.so");
}
END_TEST

START_TEST(test_bad_function_not_exported)
{
    expect_bad("function_not_exported", WF_E_NOSYM, 6, 5, "tl_no_such_function");
}
END_TEST

START_TEST(test_bad_unknown_type)
{
    expect_bad("unknown_type", WF_E_TYPE, 3, 35, "Money");
}
END_TEST

START_TEST(test_bad_direction)
{
    expect_bad("bad_direction", WF_E_SYNTAX, 3, 55, "Sideways");
}
END_TEST

/* A composite has no function, so no return value; and an Out property takes no Default. */
START_TEST(test_bad_composite_direction)
{
    expect_bad("composite_return_direction", WF_E_SYNTAX, 3, 53, "In, Out or InOut");
    tl = NULL;
    expect_bad("composite_default_on_out", WF_E_SCHEMA, 3, 5, "Default");
}
END_TEST

START_TEST(test_bad_malformed_xml)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_typelib_load(libpath, types, "malformed_xml", &tl, NULL, &err),
                     WF_E_XML);
    ck_assert_ptr_null(tl);
    WF_ASSERT_ERROR(err, WF_E_XML, 4, 18, "mismatch");
}
END_TEST

/* The XML error is also a diagnostic located in the type library file itself, so a caller
 * that prints diagnostics (the CLI) shows file:line:col of the library, not only its user. */
START_TEST(test_bad_malformed_xml_is_a_located_diagnostic)
{
    wf_error err = WF_ERROR_INIT;
    wf_diags *diags = wf_diags_create();
    ck_assert_ptr_nonnull(diags);
    ck_assert_int_eq(wfl_typelib_load(libpath, types, "malformed_xml", &tl, diags, &err),
                     WF_E_XML);
    ck_assert_ptr_null(tl);
    WF_ASSERT_ERROR(err, WF_E_XML, 4, 18, "mismatch");
    ck_assert_uint_eq(wf_diags_error_count(diags), 1);
    const wf_diag *d = wf_diags_get(diags, 0);
    ck_assert_uint_eq(d->error.line, 4);
    ck_assert_uint_eq(d->error.col, 18);
    ck_assert_ptr_nonnull(strstr(d->error.file, "malformed_xml.activities.xml"));
    wf_diags_destroy(diags);
}
END_TEST

START_TEST(test_bad_duplicate_property)
{
    expect_bad("duplicate_property", WF_E_SCHEMA, 4, 5, "Amount");
}
END_TEST

START_TEST(test_bad_unknown_attribute_and_element_all_reported)
{
    wf_error err = WF_ERROR_INIT;
    wf_diags *diags = wf_diags_create();
    ck_assert_int_eq(wfl_typelib_load(libpath, types, "unknown_element", &tl, diags, &err),
                     WF_E_SCHEMA);
    WF_ASSERT_ERROR(err, WF_E_SCHEMA, 2, 48, "Color");
    ck_assert_uint_eq(wf_diags_error_count(diags), 2);
    const wf_diag *second = wf_diags_get(diags, 1);
    ck_assert_uint_eq(second->error.line, 3);
    ck_assert_uint_eq(second->error.col, 5);
    ck_assert_ptr_nonnull(strstr(second->error.message, "Field"));
    wf_diags_destroy(diags);
}
END_TEST

START_TEST(test_bad_handler_binds_unknown_property)
{
    expect_bad("handler_unknown_property", WF_E_NAME, 5, 28, "OrderNo");
}
END_TEST

START_TEST(test_bad_parse_from_memory)
{
    static const char text[] =
        "<TypeLibrary xmlns='urn:wfbridge:typelib' Name='M' Library='libm.so'>\n"
        "  <ActivityType Name='A' Function='f' ErrorOnNonZero='yes'/>\n"
        "</TypeLibrary>\n";
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_typelib_parse(types, "m.xml", text, strlen(text), &tl, NULL, &err),
                     WF_E_SYNTAX);
    ck_assert_ptr_null(tl);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 2, 55, "ErrorOnNonZero");
}
END_TEST

/* Smaller faults, one document each: what must be refused, and where. */
typedef struct bad_case {
    const char *body; /* inside <TypeLibrary>, starting on line 2 */
    wf_status code;
    unsigned line, col;
    const char *needle;
} bad_case;

static const bad_case bad_cases[] = {
    {"<ActivityType Name='A' Function='f' ErrorOnNonZero='true'>\n"
     " <Property Name='R' Type='Double' Direction='Return'/>\n</ActivityType>",
     WF_E_TYPE, 2, 1, "Int32"},
    {"<Class Name='C'><Property Name='P' Type='Int32'/>\n"
     " <Condition Name='K' Function='k'><Parameter Property='P' Direction='Return'/></Condition>"
     "</Class>",
     WF_E_SYNTAX, 3, 70, "Return"},
    {"<ActivityType Name='A' Function='f'>\n <Property Name='O' Type='Int32' Direction='Out' "
     "Default='3'/>\n</ActivityType>",
     WF_E_SCHEMA, 3, 2, "Default"},
    {"<Exception Name='X.E' Base='System.NoSuchException'/>", WF_E_TYPE, 2, 29,
     "NoSuchException"},
    {"<ActivityType Name='A' Function='f'/>\n<ActivityType Name='A' Function='g'/>",
     WF_E_SCHEMA, 3, 1, "duplicate"},
    {"<Class Name='C'><Property Name='L' Type='List(Int32)'/>\n"
     "<Handler Name='H' Function='h'><Parameter Property='L'/></Handler></Class>",
     WF_E_TYPE, 3, 53, "C function"},
    {"<ActivityType Name='A' Function='f'>\n <Property Name='N' Type='Int32' Default='many'/>"
     "\n</ActivityType>",
     WF_E_SYNTAX, 3, 43, "many"},
    {"<Service Name='S'><Method Name='M' Function='m'/>\n<Event Name='M'/></Service>",
     WF_E_SCHEMA, 3, 1, "duplicate"},
    {"<ActivityType Name='A'/>", WF_E_SCHEMA, 2, 1, "Function"},
    {"<Class Name='C' BaseType='FlowchartActivity'/>", WF_E_SCHEMA, 2, 27, "BaseType"},
    {"<ActivityType Name='A' Function='f' Children='Parallel'/>", WF_E_SCHEMA, 2, 47,
     "Sequence"},
};

START_TEST(test_bad_small_documents)
{
    const bad_case *bc = &bad_cases[_i];
    char text[2048];
    snprintf(text, sizeof text,
             "<TypeLibrary xmlns='urn:wfbridge:typelib' Name='T' Library='libt.so'>\n%s\n"
             "</TypeLibrary>\n", bc->body);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_typelib_parse(types, "t.xml", text, strlen(text), &tl, NULL, &err),
                     bc->code);
    ck_assert_ptr_null(tl);
    WF_ASSERT_ERROR(err, bc->code, bc->line, bc->col, bc->needle);
}
END_TEST

/* ---- limits ----------------------------------------------------------------------------- */
START_TEST(test_many_parameters)
{
    load_test_lib();
    bag b = {0};
    static const char *const names[] = {"P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P9",
                                        "P10", "P11", "P12", "P13", "P14", "P15"};
    for (int i = 0; i < 15; i++)
        bag_put(&b, names[i], wf_int32(i + 1));
    /* P16..P18 take their declared defaults (16, 17, 18), as an executor would. */
    const wfl_tl_activity *a = wfl_typelib_activity(tl, "Sum18");
    for (size_t i = 15; i < 18; i++) {
        const wfl_tl_prop *p = wfl_tl_activity_prop(a, i);
        bag_put(&b, p->name, wf_value_retain(&p->default_value));
    }
    wf_error err = WF_ERROR_INIT;
    wfl_tl_binding bind = binding_for(&b);
    ck_assert_int_eq(wfl_tl_func_invoke(wfl_tl_activity_func(a), &bind, NULL, &err), WF_OK);
    ck_assert_int_eq(bag_get(&b, "Sum")->u.i32, 171);
    bag_fini(&b);
}
END_TEST

START_TEST(test_too_many_parameters_is_refused)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "<TypeLibrary xmlns='urn:wfbridge:typelib' Name='T' "
                                "Library='libt.so'>\n<ActivityType Name='Wide' Function='w'>\n");
    for (int i = 0; i <= WF_NATIVE_MAX_PARAMS; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "<Property Name='P%d' Type='Int32'/>\n",
                              i);
    snprintf(text + n, sizeof text - n, "</ActivityType>\n</TypeLibrary>\n");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_typelib_parse(types, "wide.xml", text, strlen(text), &tl, NULL, &err),
                     WF_E_LIMIT);
    ck_assert_ptr_null(tl);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 2, 1, "Wide");
}
END_TEST

/* ---- nomem ------------------------------------------------------------------------------ */
static wf_status load_op(void *ud)
{
    (void)ud;
    wf_error err = WF_ERROR_INIT;
    wfl_typelib *t = NULL;
    wf_status st = wfl_typelib_load(libpath, types, "wftltest", &t, NULL, &err);
    if (st == WF_E_NOMEM)
        ck_assert_ptr_null(t);
    wfl_typelib_destroy(t);
    return st;
}

START_TEST(test_nomem_load)
{
    unsigned runs = wf_test_nomem_loop(load_op, NULL, 5000);
    ck_assert_uint_gt(runs, 10);
}
END_TEST

Suite *legacy_typelib_suite(void)
{
    Suite *s = suite_create("legacy_typelib");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_load_describes_activity_types);
    tcase_add_test(tc, test_every_type_crosses_the_boundary);
    tcase_add_test(tc, test_in_values_are_converted_to_declared_types);
    tcase_add_test(tc, test_inout_values_are_updated);
    tcase_add_test(tc, test_return_values_of_each_type);
    tcase_add_test(tc, test_error_on_nonzero_faults_after_write_back);
    tcase_add_test(tc, test_values_by_parameter_index);
    tcase_add_test(tc, test_class_handler_and_condition);
    tcase_add_test(tc, test_service_methods_events_and_exceptions);
    tcase_add_test(tc, test_parse_only_has_no_native_binding);
    tcase_add_test(tc, test_data_only_library_needs_no_shared_object);
    tcase_add_test(tc, test_service_namespace_of_a_web_proxy);
    tcase_add_test(tc, test_composite_property_directions);
    tcase_add_test(tc, test_container_activity_type);
    tcase_add_test(tc, test_missing_typelib_is_not_found);
    tcase_add_test(tc, test_assembly_name_with_path_is_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_bad_missing_library);
    tcase_add_test(tc, test_bad_library_outside_path_is_refused);
    tcase_add_test(tc, test_bad_function_not_exported);
    tcase_add_test(tc, test_bad_composite_direction);
    tcase_add_test(tc, test_bad_unknown_type);
    tcase_add_test(tc, test_bad_direction);
    tcase_add_test(tc, test_bad_malformed_xml);
    tcase_add_test(tc, test_bad_malformed_xml_is_a_located_diagnostic);
    tcase_add_test(tc, test_bad_duplicate_property);
    tcase_add_test(tc, test_bad_unknown_attribute_and_element_all_reported);
    tcase_add_test(tc, test_bad_handler_binds_unknown_property);
    tcase_add_test(tc, test_bad_parse_from_memory);
    tcase_add_loop_test(tc, test_bad_small_documents, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_many_parameters);
    tcase_add_test(tc, test_too_many_parameters_is_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("nomem");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_nomem_load);
    suite_add_tcase(s, tc);
    return s;
}

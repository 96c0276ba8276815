/* test_rules.c — .rules loading, evaluation and rule-set execution: every CodeDOM operator,
 * methods and members on values, priorities with tie-break by name, Halt, the three chaining
 * modes (each with a case whose result differs), ReevaluationBehavior, run-time faults, the
 * modern-text printer, and bad .rules files with line:col. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_rules.h"
#include "../wf_test_util.h"

#define OPS    "tests/legacy/data/operators.rules"
#define POLICY "tests/legacy/data/policy.rules"
#define SMALL  "tests/legacy/data/small.rules"
#define DECS   "tests/legacy/data/decimal.rules"
#define BAD    "tests/legacy/data/bad/"

/* ---- a target: `this` is a flat bag of named values --------------------------------------- */
#define OBJ_MAX 32
typedef struct obj {
    const char *names[OBJ_MAX];
    wf_value values[OBJ_MAX];
    size_t count;
    unsigned invokes;
} obj;

static void obj_put(obj *o, const char *name, wf_value v) /* takes v */
{
    for (size_t i = 0; i < o->count; i++)
        if (strcmp(o->names[i], name) == 0) {
            wf_value_release(&o->values[i]);
            o->values[i] = v;
            return;
        }
    ck_assert_uint_lt(o->count, OBJ_MAX);
    o->names[o->count] = name;
    o->values[o->count++] = v;
}

static const wf_value *obj_get(const obj *o, const char *name)
{
    for (size_t i = 0; i < o->count; i++)
        if (strcmp(o->names[i], name) == 0)
            return &o->values[i];
    return NULL;
}

static void obj_fini(obj *o)
{
    for (size_t i = 0; i < o->count; i++)
        wf_value_release(&o->values[i]);
}

/* Only whole top-level members: deeper paths come back as WF_E_NAME, so the evaluator walks
 * them on the values (the contract in wfl_rules.h). */
static wf_status obj_get_cb(void *ud, const wfl_rules_seg *path, size_t count, wf_value *out,
                            wf_value *exc, wf_error *err)
{
    (void)exc;
    obj *o = ud;
    const wf_value *v = count == 1 && !path[0].index ? obj_get(o, path[0].name) : NULL;
    if (!v)
        return wf_error_set(err, WF_E_NAME, NULL, "no member '%s'", path[0].name);
    *out = wf_value_retain(v);
    return WF_OK;
}

static wf_status obj_set_cb(void *ud, const wfl_rules_seg *path, size_t count,
                            const wf_value *value, wf_value *exc, wf_error *err)
{
    (void)exc;
    if (count != 1 || path[0].index)
        return wf_error_set(err, WF_E_UNSUPPORTED, NULL, "cannot set a nested path");
    obj_put(ud, path[0].name, wf_value_retain(value));
    return WF_OK;
}

/* Code-beside: Twice(x) = 2 * x. */
static wf_status obj_invoke_cb(void *ud, const char *method, const wf_value *args, size_t argc,
                               wf_value *ret, wf_value *exc, wf_error *err)
{
    (void)exc;
    obj *o = ud;
    if (strcmp(method, "Twice") != 0 || argc != 1)
        return wf_error_set(err, WF_E_NAME, NULL, "no method '%s'", method);
    o->invokes++;
    *ret = wf_int32(args[0].u.i32 * 2);
    return WF_OK;
}

/* The in-place read (wfl_rules_target.peek): the same value obj_get_cb copies. */
static const wf_value *obj_peek_cb(void *ud, const char *member)
{
    return obj_get(ud, member);
}

static bool peeking; /* targets offer peek (the legacy runtime's root does) */

static wfl_rules_target target_for(obj *o)
{
    wfl_rules_target t = {obj_get_cb, obj_set_cb, obj_invoke_cb, o, NULL};
    if (peeking)
        t.peek = obj_peek_cb;
    return t;
}

static wf_value str(const char *s)
{
    wf_value v;
    ck_assert_int_eq(wf_value_cstring(s, &v), WF_OK);
    return v;
}

/* ---- fixture ---------------------------------------------------------------------------- */
static wf_types *types;
static wfl_rules *rules;
static obj self;

static void setup(void)
{
    types = wf_types_create();
    ck_assert_ptr_nonnull(types);
    rules = NULL;
    memset(&self, 0, sizeof self);
    peeking = false;
}

static void teardown(void)
{
    obj_fini(&self);
    wfl_rules_destroy(rules);
    wf_types_destroy(types);
}

static void load(const char *path)
{
    wf_error err = WF_ERROR_INIT;
    wf_diags *diags = wf_diags_create();
    ck_assert_msg(wfl_rules_load(path, types, &rules, diags, &err) == WF_OK, "%s:%u:%u: %s",
                  err.file, err.line, err.col, err.message);
    ck_assert_uint_eq(wf_diags_error_count(diags), 0);
    wf_diags_destroy(diags);
}

/* The operator fixture's `this`: A=10, B=3, D=2.75m, Name="Ada", ... */
static void fill_operands(void)
{
    obj_put(&self, "ClientId", wf_int32(1500));
    obj_put(&self, "A", wf_int32(10));
    obj_put(&self, "B", wf_int32(3));
    obj_put(&self, "D", wf_dec((wf_decimal){.lo = 275, .scale = 2})); /* 2.75m */
    obj_put(&self, "Big", wf_int64(5000000000LL));
    obj_put(&self, "Name", str("Ada"));
    obj_put(&self, "Padded", str("  x y  "));
    obj_put(&self, "Nothing", wf_null());
    obj_put(&self, "Flag", wf_bool(true));
    obj_put(&self, "Ratio", wf_double(3.9));
    obj_put(&self, "Zero", wf_int32(0));
    obj_put(&self, "Level", str("Gold"));
    obj_put(&self, "IntMax", wf_int32(INT32_MAX));
    wf_value lines[2] = {wf_int32(10), wf_int32(20)};
    wf_value list;
    ck_assert_int_eq(wf_value_list(wf_types_list(types, &wf_type_int32), lines, 2, &list), WF_OK);
    obj_put(&self, "Lines", list);
    obj_put(&self, "NoLines", wf_null());
    const char *keys[] = {"City"};
    wf_value city = str("Oslo"), rec;
    ck_assert_int_eq(wf_value_record(keys, &city, 1, &rec), WF_OK);
    wf_value_release(&city);
    obj_put(&self, "Customer", rec);
}

static wf_status cond(const char *name, bool *result, wf_value *exc, wf_error *err)
{
    const wfl_rule_cond *c = wfl_rules_condition(rules, name);
    ck_assert_msg(c != NULL, "no condition %s", name);
    wfl_rules_target t = target_for(&self);
    return wfl_rules_eval_condition(c, &t, result, exc, err);
}

static void expect_true(const char *name)
{
    bool result = false;
    wf_value exc = wf_null();
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(cond(name, &result, &exc, &err) == WF_OK, "%s: %s", name, err.message);
    ck_assert_msg(result, "%s was false", name);
}

static void expect_text(const char *name, const char *text)
{
    wf_buf buf;
    wf_buf_init(&buf);
    ck_assert(wfl_rules_expr_text(wfl_rule_cond_expr(wfl_rules_condition(rules, name)), &buf));
    ck_assert_str_eq(buf.data, text);
    wf_buf_fini(&buf);
}

/* ---- core: conditions --------------------------------------------------------------------- */
START_TEST(test_every_operator_evaluates)
{
    load(OPS);
    fill_operands();
    static const char *const names[] = {
        "IsPreferred", "Add", "Subtract", "Multiply", "Divide", "Modulus",
        "IdentityInequality", "IdentityEquality", "ValueEquality", "BitwiseOr", "BitwiseAnd",
        "BooleanOr", "BooleanAnd", "LessThan", "LessThanOrEqual", "GreaterThan",
        "GreaterThanOrEqual", "Negative", "Concat", "DecimalMath", "DoubleMath", "DateLiteral"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        expect_true(names[i]);
}
END_TEST

START_TEST(test_false_results_and_negations)
{
    load(OPS);
    fill_operands();
    bool result = true;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(cond("NotFlag", &result, NULL, &err), WF_OK);
    ck_assert(!result);
    obj_put(&self, "Flag", wf_bool(false));
    expect_true("NotFlag");
    expect_true("NameIsNotBob");
    obj_put(&self, "Name", str("Bob"));
    ck_assert_int_eq(cond("NameIsNotBob", &result, NULL, &err), WF_OK);
    ck_assert(!result);
    obj_put(&self, "ClientId", wf_int32(2000));
    ck_assert_int_eq(cond("IsPreferred", &result, NULL, &err), WF_OK);
    ck_assert(!result);
}
END_TEST

START_TEST(test_methods_members_indexers_and_casts)
{
    load(OPS);
    fill_operands();
    static const char *const names[] = {
        "Methods", "Substring", "StaticCalls", "Length", "CompareTo", "EqualsCall",
        "ToStringCall", "Indexer", "ArrayIndexer", "RecordField", "Cast", "MakeError",
        "EnumValue"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        expect_true(names[i]);
}
END_TEST

START_TEST(test_code_beside_method_on_this)
{
    load(OPS);
    fill_operands();
    expect_true("CallsThis");
    ck_assert_uint_eq(self.invokes, 1);
}
END_TEST

START_TEST(test_static_members_load_and_print)
{
    load(OPS);
    expect_text("Today", "DateTime.Now > DateTime.MinValue");
}
END_TEST

START_TEST(test_printer_produces_modern_text)
{
    load(OPS);
    expect_text("IsPreferred", "ClientId >= 1000 && ClientId < 2000");
    expect_text("NotFlag", "!(Flag)");
    expect_text("NameIsNotBob", "Name != \"Bob\"");
    expect_text("Negative", "-A == -10");
    expect_text("GreaterThan", "D > 2.5m");
    expect_text("GreaterThanOrEqual", "Big >= 5000000000L");
    expect_text("IdentityEquality", "Nothing == null");
    expect_text("Methods", "Name.ToUpper() == \"ADA\" && Padded.Contains(\"x y\") && "
                           "(Name.StartsWith(\"A\") && Name.EndsWith(\"da\"))");
    expect_text("StaticCalls", "String.IsNullOrEmpty(Nothing) && Math.Max(A, B) == 10");
    expect_text("Indexer", "Lines[1] == 20");
    expect_text("RecordField", "Customer.City == \"Oslo\"");
    expect_text("Cast", "(int)Ratio == 3");
    expect_text("Length", "Name.Length == 3");
    expect_text("DoubleMath", "1.0 / 4.0 == 0.25");
    expect_text("MakeError", "new InvalidOperationException(\"no stock\") != null");
    expect_text("CallsThis", "Twice(A) == 20");
    expect_text("BitwiseOr", "(A | B) == 11");
    expect_text("Concat", "Name + A == \"Ada10\"");
    expect_text("ToStringCall", "D.ToString() == \"2.75\"");
    expect_text("EqualsCall", "A == 10L");
    expect_text("Substring", "Padded.Trim().Substring(1, 2) == \" y\"");
    expect_text("DecimalMath", "D * 2m == 5.5m");
    expect_text("EnumValue", "Level == \"Gold\"");
}
END_TEST

START_TEST(test_tree_is_readable)
{
    load(OPS);
    const wfl_rexpr *e = wfl_rule_cond_expr(wfl_rules_condition(rules, "IsPreferred"));
    ck_assert_int_eq(wfl_rexpr_kind_of(e), WFL_REX_BINARY);
    ck_assert_int_eq(wfl_rexpr_op(e), WFL_ROP_BOOLEAN_AND);
    ck_assert_str_eq(wfl_rop_name(wfl_rexpr_op(e)), "BooleanAnd");
    const wfl_rexpr *ge = wfl_rexpr_child(e, 0);
    ck_assert_int_eq(wfl_rexpr_op(ge), WFL_ROP_GREATER_THAN_OR_EQUAL);
    const wfl_rexpr *member = wfl_rexpr_child(ge, 0);
    ck_assert_int_eq(wfl_rexpr_kind_of(member), WFL_REX_MEMBER);
    ck_assert_str_eq(wfl_rexpr_name(member), "ClientId");
    ck_assert_int_eq(wfl_rexpr_kind_of(wfl_rexpr_child(member, 0)), WFL_REX_THIS);
    const wf_value *v = wfl_rexpr_value(wfl_rexpr_child(ge, 1));
    ck_assert_ptr_eq(v->type, &wf_type_int32);
    ck_assert_int_eq(v->u.i32, 1000);
    ck_assert_uint_eq(wfl_rexpr_loc(e).line, 5);
    ck_assert_uint_eq(wfl_rexpr_loc(e).col, 5);
    ck_assert_ptr_nonnull(strstr(wfl_rexpr_loc(e).file, "operators.rules"));
    ck_assert_uint_eq(wfl_rules_condition_count(rules), 46);
}
END_TEST

START_TEST(test_small_file_actions_print)
{
    load(SMALL);
    expect_text("C1", "A >= 1 && B != \"x\"");
    expect_text("C2", "Math.Max(A, L[0]) < (int)2.5");
    const wfl_ruleset *rs = wfl_rules_ruleset(rules, "R");
    const wfl_rule *b = wfl_ruleset_rule_at(rs, 0), *a = wfl_ruleset_rule_at(rs, 1);
    ck_assert_str_eq(wfl_rule_name(b), "b");
    ck_assert_uint_eq(wfl_rule_action_count(a, false), 3);
    ck_assert_uint_eq(wfl_rule_action_count(a, true), 1);
    static const char *const then_text[] = {"B = B + \"y\"", "Update(\"B\")", "Halt()"};
    wf_buf buf;
    wf_buf_init(&buf);
    for (size_t i = 0; i < 3; i++) {
        wf_buf_reset(&buf);
        ck_assert(wfl_rules_action_text(wfl_rule_action_at(a, false, i), &buf));
        ck_assert_str_eq(buf.data, then_text[i]);
    }
    wf_buf_reset(&buf);
    ck_assert(wfl_rules_action_text(wfl_rule_action_at(a, true, 0), &buf));
    ck_assert_str_eq(buf.data, "M(new InvalidOperationException(\"m\"))");
    wf_buf_fini(&buf);
    /* b's condition reads B; a's Then writes B (assignment and update). */
    ck_assert_str_eq(wfl_rule_read_at(b, 0), "B");
    ck_assert_str_eq(wfl_rule_write_at(a, 0), "B");
}
END_TEST

START_TEST(test_utf16_file_as_the_designer_saves_it)
{
    load("tests/legacy/data/utf16.rules");
    expect_text("C1", "A >= 1 && B != \"x\"");
    const wfl_rule *a = wfl_ruleset_rule_at(wfl_rules_ruleset(rules, "R"), 1);
    wf_buf buf;
    wf_buf_init(&buf);
    ck_assert(wfl_rules_action_text(wfl_rule_action_at(a, false, 0), &buf));
    ck_assert_str_eq(buf.data, "B = B + \"\xc3\xbf\xe2\x82\xac\xf0\x9f\x98\x80\"");
    wf_buf_fini(&buf);
    /* One line more than small.rules (the XML declaration), same columns. */
    ck_assert_uint_eq(wfl_rexpr_loc(wfl_rule_cond_expr(wfl_rules_condition(rules, "C1"))).line,
                      6);
}
END_TEST

/* ---- core: rule sets ---------------------------------------------------------------------- */
static wf_status run(const char *ruleset, wf_value *exc, wf_error *err)
{
    const wfl_ruleset *rs = wfl_rules_ruleset(rules, ruleset);
    ck_assert_msg(rs != NULL, "no rule set %s", ruleset);
    wfl_rules_target t = target_for(&self);
    return wfl_rules_execute(rs, &t, NULL, exc, err);
}

static void run_ok(const char *ruleset)
{
    wf_value exc = wf_null();
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(run(ruleset, &exc, &err) == WF_OK, "%s: %s", ruleset, err.message);
    ck_assert(wf_is_null(&exc));
}

START_TEST(test_then_and_else_actions)
{
    load(POLICY);
    obj_put(&self, "ClientId", wf_int32(1200));
    run_ok("Salary");
    ck_assert_int_eq(obj_get(&self, "Salary")->u.i32, 20000);
    obj_put(&self, "ClientId", wf_int32(5));
    run_ok("Salary");
    ck_assert_int_eq(obj_get(&self, "Salary")->u.i32, 100);
}
END_TEST

START_TEST(test_priority_then_name_order_and_inactive_rules)
{
    load(POLICY);
    obj_put(&self, "Log", str(""));
    run_ok("Priorities");
    ck_assert_str_eq(wf_value_str(obj_get(&self, "Log")), "BACE");
    const wfl_ruleset *rs = wfl_rules_ruleset(rules, "Priorities");
    ck_assert_uint_eq(wfl_ruleset_rule_count(rs), 5);
    ck_assert_str_eq(wfl_rule_name(wfl_ruleset_rule_at(rs, 0)), "Delta");
    ck_assert(!wfl_rule_active(wfl_ruleset_rule_at(rs, 0)));
    ck_assert_str_eq(wfl_rule_name(wfl_ruleset_rule_at(rs, 2)), "Alpha");
    ck_assert_int_eq(wfl_rule_priority(wfl_ruleset_rule_at(rs, 4)), -1);
}
END_TEST

START_TEST(test_halt_stops_the_rule_set)
{
    load(POLICY);
    obj_put(&self, "Log", str(""));
    run_ok("Halting");
    ck_assert_str_eq(wf_value_str(obj_get(&self, "Log")), "1");
}
END_TEST

/* LargeOrder (priority 1) sets Discount after ApplyDiscount (priority 2) already looked at it:
 * only chaining makes ApplyDiscount run again. */
static int32_t pricing_total(const char *ruleset)
{
    obj_fini(&self);
    memset(&self, 0, sizeof self);
    obj_put(&self, "Subtotal", wf_int32(150));
    obj_put(&self, "Discount", wf_int32(0));
    obj_put(&self, "Total", wf_int32(0));
    run_ok(ruleset);
    ck_assert_int_eq(obj_get(&self, "Discount")->u.i32, 10);
    return obj_get(&self, "Total")->u.i32;
}

START_TEST(test_chaining_modes_differ)
{
    load(POLICY);
    ck_assert_int_eq(pricing_total("PricingFull"), 140);
    ck_assert_int_eq(pricing_total("PricingUpdateOnly"), 0);
    ck_assert_int_eq(pricing_total("PricingUpdateOnlyExplicit"), 140);
    ck_assert_int_eq(pricing_total("PricingNone"), 0);
    ck_assert_int_eq(wfl_ruleset_chaining(wfl_rules_ruleset(rules, "PricingNone")),
                     WFL_CHAIN_NONE);
}
END_TEST

START_TEST(test_read_and_write_analysis)
{
    load(POLICY);
    const wfl_ruleset *rs = wfl_rules_ruleset(rules, "PricingUpdateOnlyExplicit");
    const wfl_rule *apply = wfl_ruleset_rule_at(rs, 0);
    ck_assert_str_eq(wfl_rule_name(apply), "ApplyDiscount");
    ck_assert_uint_eq(wfl_rule_read_count(apply), 1);
    ck_assert_str_eq(wfl_rule_read_at(apply, 0), "Discount");
    ck_assert_uint_eq(wfl_rule_write_count(apply), 1);
    ck_assert_str_eq(wfl_rule_write_at(apply, 0), "Total");
    const wfl_rule *large = wfl_ruleset_rule_at(rs, 1);
    ck_assert_uint_eq(wfl_rule_write_count(large), 1); /* assign + update of the same path */
    ck_assert_int_eq(wfl_rule_action_kind(wfl_rule_action_at(large, false, 1)),
                     WFL_ACTION_UPDATE);
    ck_assert_str_eq(wfl_rule_action_path(wfl_rule_action_at(large, false, 1)), "Discount");
    wf_buf buf;
    wf_buf_init(&buf);
    ck_assert(wfl_rules_action_text(wfl_rule_action_at(large, false, 0), &buf));
    ck_assert_str_eq(buf.data, "Discount = 10");
    wf_buf_fini(&buf);
}
END_TEST

START_TEST(test_path_overlap)
{
    /* wfl_path_affects is internal; observe it through Full chaining instead. */
    load(POLICY);
    obj_put(&self, "Count", wf_int32(0));
    run_ok("CounterAlways");
    ck_assert_int_eq(obj_get(&self, "Count")->u.i32, 5);
}
END_TEST

START_TEST(test_reevaluation_never_runs_actions_once)
{
    load(POLICY);
    obj_put(&self, "Count", wf_int32(0));
    run_ok("CounterNever");
    ck_assert_int_eq(obj_get(&self, "Count")->u.i32, 1);
    ck_assert(!wfl_rule_reevaluate_always(wfl_ruleset_rule_at(wfl_rules_ruleset(rules,
                                                                                "CounterNever"),
                                                              0)));
}
END_TEST

static unsigned rule_calls;
static void count_rule(void *ud, const wfl_rule *rule, bool result)
{
    (void)ud;
    (void)rule;
    (void)result;
    rule_calls++;
}

START_TEST(test_endless_chaining_hits_the_limit)
{
    load(POLICY);
    obj_put(&self, "Count", wf_int32(0));
    wfl_rules_exec_opts opts = WFL_RULES_EXEC_OPTS_INIT;
    opts.max_evaluations = 50;
    opts.on_rule = count_rule;
    rule_calls = 0;
    wf_error err = WF_ERROR_INIT;
    wfl_rules_target t = target_for(&self);
    ck_assert_int_eq(wfl_rules_execute(wfl_rules_ruleset(rules, "Endless"), &t, &opts, NULL,
                                       &err), WF_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err.message, "Endless"));
    ck_assert_uint_eq(rule_calls, 50);
    ck_assert_int_eq(obj_get(&self, "Count")->u.i32, 50);
}
END_TEST

START_TEST(test_divide_by_zero_faults_the_rule_set)
{
    load(POLICY);
    obj_put(&self, "Total", wf_int32(10));
    obj_put(&self, "Count", wf_int32(0));
    obj_put(&self, "Log", str(""));
    wf_value exc = wf_null();
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(run("Faulting", &exc, &err), WF_E_FAULT);
    ck_assert_ptr_eq(exc.type, &wf_exc_divide_by_zero);
    ck_assert_str_eq(wf_value_exc_message(&exc), "Attempted to divide by zero.");
    ck_assert_ptr_nonnull(strstr(err.message, "Ratio"));
    ck_assert_str_eq(wf_value_str(obj_get(&self, "Log")), "");
    wf_value_release(&exc);
}
END_TEST

START_TEST(test_expression_statement_and_new_exception)
{
    load(POLICY);
    obj_put(&self, "Count", wf_int32(4));
    run_ok("Calls");
    ck_assert_uint_eq(self.invokes, 1);
    const wf_value *e = obj_get(&self, "Error");
    ck_assert_ptr_eq(e->type, &wf_exc_invalid_operation);
    ck_assert_str_eq(wf_value_exc_message(e), "limit reached");
}
END_TEST

/* ---- core: run-time faults in conditions -------------------------------------------------- */
static void expect_fault(const char *name, const wf_type *exc_type)
{
    bool result = true;
    wf_value exc = wf_null();
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(cond(name, &result, &exc, &err), WF_E_FAULT);
    ck_assert_msg(exc.type == exc_type, "%s: got %s", name, exc.type->name);
    ck_assert_uint_gt(err.line, 0);
    ck_assert(!result);
    wf_value_release(&exc);
}

START_TEST(test_runtime_faults)
{
    load(OPS);
    fill_operands();
    expect_fault("DivideByZero", &wf_exc_divide_by_zero);
    /* WF3's rule evaluator checks a member's target itself (docs/wf3-behaviour.md) */
    const wf_type *rule_eval = wf_types_find(types, "RuleEvaluationException");
    ck_assert_ptr_nonnull(rule_eval);
    ck_assert(!wf_type_is_a(rule_eval, &wf_exc_system));
    ck_assert(wf_type_is_a(rule_eval, &wf_exc_exception));
    expect_fault("NullMember", rule_eval);
    expect_fault("NullIndex", rule_eval);
    expect_fault("IndexOutOfRange", &wf_exc_index_range);
    expect_fault("BadCast", &wf_exc_invalid_cast);
    /* 10 * Int32.MaxValue wraps to -10 (unchecked, as WF3): no fault, and -10 > 0 is false */
    bool result = true;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(cond("Overflow", &result, NULL, &err), WF_OK);
    ck_assert(!result);
}
END_TEST

/* Real rules call the .NET instance methods of List and String (docs/wf3-behaviour.md). */
START_TEST(test_list_and_string_methods)
{
    load("tests/legacy/data/methods.rules");
    wf_value items[3] = {str("a"), str("b"), str("a")}, list;
    ck_assert_int_eq(wf_value_list(wf_types_list(types, &wf_type_string), items, 3, &list), WF_OK);
    for (size_t i = 0; i < 3; i++)
        wf_value_release(&items[i]);
    obj_put(&self, "Items", list);
    wf_value nums[2] = {wf_int32(1), wf_int32(2)};
    ck_assert_int_eq(wf_value_list(wf_types_list(types, &wf_type_int32), nums, 2, &list), WF_OK);
    obj_put(&self, "Nums", list);
    obj_put(&self, "Name", str("banana"));
    obj_put(&self, "Padded", str("  x  "));
    static const char *const names[] = {
        "ListContains", "ListIndexOf",  "ListLastIndexOf", "ListContainsNumber",
        "StrLastIndexOf", "StrTrimStart", "StrTrimEnd", "StrPadLeft", "StrPadRight",
        "StrInsert", "StrRemoveTail", "StrRemoveRange", "StrUpperInvariant"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        expect_true(names[i]);
    expect_fault("StrRemovePastEnd", wf_types_find(types, "TargetInvocationException"));
}
END_TEST

/* WF3 evaluates Int32/Int64 arithmetic unchecked, like compiled C# (docs/wf3-behaviour.md):
 * 3 * 1,000,000,000 is -1,294,967,296; only MinValue / -1 still throws. */
static void expect_unchecked_arithmetic(void)
{
    load("tests/legacy/data/unchecked.rules");
    obj_put(&self, "IntMax", wf_int32(INT32_MAX));
    obj_put(&self, "IntMin", wf_int32(INT32_MIN));
    obj_put(&self, "Big", wf_int64(5000000000LL));
    expect_true("Int32Wraps");
    expect_true("AddWraps");
    expect_true("Int64Wraps");
    expect_fault("MinOverMinusOne", &wf_exc_overflow);
}

START_TEST(test_integer_arithmetic_wraps)
{
    expect_unchecked_arithmetic();
}
END_TEST

/* The operator fixture's type mismatch is WF_E_TYPE; with `this` emptied, Add names 'A'. */
static void expect_type_and_name_errors(void)
{
    bool result;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(cond("TypeMismatch", &result, NULL, &err), WF_E_TYPE);
    wf_error_clear(&err);
    obj_fini(&self);
    memset(&self, 0, sizeof self);
    ck_assert_int_eq(cond("Add", &result, NULL, &err), WF_E_NAME);
    ck_assert_ptr_nonnull(strstr(err.message, "'A'"));
}

/* Int32 comparisons, + and - on members read in place (quick_binary) give the tree's results:
 * the operators, the false cases, the wrap at Int32.MaxValue; other types still go the tree's
 * way (TypeMismatch), and a member the target does not have is still WF_E_NAME. */
START_TEST(test_members_read_in_place_evaluate_the_same)
{
    peeking = true;
    load(OPS);
    fill_operands();
    static const char *const names[] = {
        "IsPreferred", "Add", "Subtract", "ValueEquality", "LessThan", "LessThanOrEqual",
        "GreaterThan", "GreaterThanOrEqual", "Negative", "DecimalMath", "DoubleMath"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        expect_true(names[i]);
    bool result = true;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(cond("Overflow", &result, NULL, &err), WF_OK);
    ck_assert(!result);
    obj_put(&self, "ClientId", wf_int32(2000));
    ck_assert_int_eq(cond("IsPreferred", &result, NULL, &err), WF_OK);
    ck_assert(!result);
    expect_type_and_name_errors();
}
END_TEST

START_TEST(test_members_read_in_place_wrap_the_same)
{
    peeking = true;
    expect_unchecked_arithmetic();
}
END_TEST

START_TEST(test_type_errors_and_unknown_members_are_errors)
{
    load(OPS);
    fill_operands();
    expect_type_and_name_errors();
}
END_TEST

/* ---- bad_input ---------------------------------------------------------------------------- */
static void expect_bad(const char *file, wf_status code, unsigned line, unsigned col,
                       const char *needle)
{
    char path[256];
    snprintf(path, sizeof path, BAD "%s", file);
    wf_error err = WF_ERROR_INIT;
    wf_diags *diags = wf_diags_create();
    ck_assert_int_eq(wfl_rules_load(path, types, &rules, diags, &err), code);
    ck_assert_ptr_null(rules);
    WF_ASSERT_ERROR(err, code, line, col, needle);
    ck_assert_str_eq(err.file, path);
    ck_assert_uint_ge(wf_diags_error_count(diags), 1);
    wf_diags_destroy(diags);
}

START_TEST(test_bad_unknown_codedom_element)
{
    expect_bad("unknown_codedom_element.rules", WF_E_SCHEMA, 5, 5, "CodeLambdaExpression");
}
END_TEST

START_TEST(test_bad_unknown_operator)
{
    expect_bad("unknown_operator.rules", WF_E_SYNTAX, 5, 5, "Power");
}
END_TEST

START_TEST(test_bad_missing_right)
{
    expect_bad("missing_right.rules", WF_E_SCHEMA, 5, 5, "Right");
}
END_TEST

START_TEST(test_bad_duplicate_condition)
{
    expect_bad("duplicate_condition.rules", WF_E_SCHEMA, 12, 3, "Ready");
}
END_TEST

START_TEST(test_bad_primitive_value)
{
    expect_bad("bad_primitive.rules", WF_E_SYNTAX, 7, 7, "12x");
}
END_TEST

START_TEST(test_bad_direction_expression_is_rejected)
{
    expect_bad("direction_expression.rules", WF_E_UNSUPPORTED, 14, 7, "CodeDirectionExpression");
}
END_TEST

START_TEST(test_bad_unknown_method)
{
    expect_bad("unknown_method.rules", WF_E_NAME, 7, 7, "Shout");
}
END_TEST

START_TEST(test_bad_malformed_xml)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_rules_load(BAD "malformed.rules", types, &rules, NULL, &err), WF_E_XML);
    ck_assert_ptr_null(rules);
    WF_ASSERT_ERROR(err, WF_E_XML, 4, 31, "mismatch");
}
END_TEST

START_TEST(test_bad_every_problem_is_reported)
{
    wf_error err = WF_ERROR_INIT;
    wf_diags *diags = wf_diags_create();
    ck_assert_int_eq(wfl_rules_load(BAD "two_problems.rules", types, &rules, diags, &err),
                     WF_E_SYNTAX);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 3, 3, "Sometimes");
    ck_assert_uint_eq(wf_diags_error_count(diags), 2);
    const wf_diag *second = wf_diags_get(diags, 1);
    ck_assert_uint_eq(second->error.line, 5);
    ck_assert_uint_eq(second->error.col, 5);
    ck_assert_ptr_nonnull(strstr(second->error.message, "high"));
    wf_diags_destroy(diags);
}
END_TEST

START_TEST(test_bad_from_memory_and_tolerated_attributes)
{
    static const char text[] =
        "<RuleDefinitions xmlns='http://schemas.microsoft.com/winfx/2006/xaml/workflow'>\n"
        " <RuleDefinitions.Conditions>\n"
        "  <RuleExpressionCondition Name='C' Color='red'>\n"
        "   <RuleExpressionCondition.Expression>\n"
        "    <ns0:CodeThisReferenceExpression xmlns:ns0='CLR-NAMESPACE:system.codedom'/>\n"
        "   </RuleExpressionCondition.Expression>\n"
        "  </RuleExpressionCondition>\n"
        " </RuleDefinitions.Conditions>\n"
        "</RuleDefinitions>\n";
    wf_error err = WF_ERROR_INIT;
    wf_diags *diags = wf_diags_create();
    ck_assert_int_eq(wfl_rules_load_mem("m.rules", text, strlen(text), types, &rules, diags,
                                        &err), WF_OK);
    ck_assert_uint_eq(wf_diags_error_count(diags), 0);
    ck_assert_uint_eq(wf_diags_count(diags), 1); /* the unknown attribute, as a warning */
    ck_assert_ptr_nonnull(strstr(wf_diags_get(diags, 0)->error.message, "Color"));
    bool result;
    wfl_rules_target t = target_for(&self);
    ck_assert_int_eq(wfl_rules_eval_condition(wfl_rules_condition(rules, "C"), &t, &result, NULL,
                                              &err), WF_E_UNSUPPORTED);
    wf_diags_destroy(diags);
}
END_TEST

/* ---- limits ------------------------------------------------------------------------------- */
/* A condition `!(!(...!(true)...))` nested `depth` times, written as the rules parser stores
 * it: each level is (x ValueEquality false). */
static char *nested_condition(unsigned depth)
{
    static const char ns[] = " xmlns:ns0='clr-namespace:System.CodeDom;Assembly=System'"
                             " xmlns:ns1='clr-namespace:System;Assembly=mscorlib'";
    static const char prim[] = "<ns0:CodePrimitiveExpression><ns0:CodePrimitiveExpression.Value>"
                               "<ns1:Boolean>%s</ns1:Boolean></ns0:CodePrimitiveExpression.Value>"
                               "</ns0:CodePrimitiveExpression>";
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addf(&b, "<RuleDefinitions xmlns='http://schemas.microsoft.com/winfx/2006/xaml/"
                    "workflow'%s><RuleDefinitions.Conditions><RuleExpressionCondition Name='Deep'>"
                    "<RuleExpressionCondition.Expression>", ns);
    for (unsigned i = 0; i < depth; i++)
        wf_buf_adds(&b, "<ns0:CodeBinaryOperatorExpression Operator='ValueEquality'>"
                        "<ns0:CodeBinaryOperatorExpression.Left>");
    wf_buf_addf(&b, prim, "True");
    for (unsigned i = 0; i < depth; i++) {
        wf_buf_adds(&b, "</ns0:CodeBinaryOperatorExpression.Left>"
                        "<ns0:CodeBinaryOperatorExpression.Right>");
        wf_buf_addf(&b, prim, "False");
        wf_buf_adds(&b, "</ns0:CodeBinaryOperatorExpression.Right>"
                        "</ns0:CodeBinaryOperatorExpression>");
    }
    wf_buf_adds(&b, "</RuleExpressionCondition.Expression></RuleExpressionCondition>"
                    "</RuleDefinitions.Conditions></RuleDefinitions>");
    ck_assert(!b.oom);
    return wf_buf_detach(&b, NULL);
}

START_TEST(test_deep_expression_evaluates)
{
    char *text = nested_condition(100);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_rules_load_mem("deep.rules", text, strlen(text), types, &rules, NULL,
                                        &err), WF_OK);
    bool result = false;
    ck_assert_int_eq(cond("Deep", &result, NULL, &err), WF_OK);
    ck_assert(result); /* an even number of negations */
    wf_free(text);
}
END_TEST

START_TEST(test_too_deep_expression_is_refused)
{
    char *text = nested_condition(200);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfl_rules_load_mem("deep.rules", text, strlen(text), types, &rules, NULL,
                                        &err), WF_E_LIMIT);
    ck_assert_ptr_null(rules);
    wf_free(text);
}
END_TEST

/* ---- nomem -------------------------------------------------------------------------------- */
static wf_status load_op(void *ud)
{
    wf_error err = WF_ERROR_INIT;
    wfl_rules *r = NULL;
    wf_status st = wfl_rules_load(ud, types, &r, NULL, &err);
    if (st == WF_E_NOMEM)
        ck_assert_ptr_null(r);
    wfl_rules_destroy(r);
    return st;
}

START_TEST(test_nomem_load)
{
    ck_assert_uint_gt(wf_test_nomem_loop(load_op, (void *)SMALL, 20000), 10);
}
END_TEST

static wf_status execute_op(void *ud)
{
    (void)ud;
    obj_put(&self, "Subtotal", wf_int32(150));
    obj_put(&self, "Discount", wf_int32(0));
    obj_put(&self, "Total", wf_int32(0));
    wf_error err = WF_ERROR_INIT;
    wfl_rules_target t = target_for(&self);
    return wfl_rules_execute(wfl_rules_ruleset(rules, "PricingFull"), &t, NULL, NULL, &err);
}

START_TEST(test_nomem_execute)
{
    load(POLICY);
    wf_test_nomem_loop(execute_op, NULL, 100);
    ck_assert_int_eq(obj_get(&self, "Total")->u.i32, 140);
}
END_TEST

/* Decimal in rules is System.Decimal (docs/semantics.md §4 "Decimal"): 59.97m / 7 keeps 27
 * places, so a branch on it goes the way WF3 goes; literals with six places load. */
START_TEST(test_decimal_is_system_decimal)
{
    load(DECS);
    wf_decimal price;
    ck_assert_int_eq(wf_decimal_parse("59.97", &price), WF_OK);
    obj_put(&self, "Price", wf_dec(price));
    expect_true("DivisionKeepsDigits");
    expect_true("SixPlaces");
    expect_text("SixPlaces", "Price + 0.000001m > Price");
    bool result = true;
    wf_value exc = wf_null();
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(cond("RoundTrip", &result, &exc, &err), WF_OK);
    ck_assert(!result); /* 59.969999999999999999999999999 */
    run_ok("Share");
    static const char *const want[][2] = {{"Share", "8.567142857142857142857142857"},
                                          {"Scaled", "59.970"},
                                          {"Fee", "59.970001"}};
    for (size_t i = 0; i < 3; i++) {
        const wf_value *v = obj_get(&self, want[i][0]);
        ck_assert_ptr_nonnull(v);
        wf_buf text;
        wf_buf_init(&text);
        ck_assert(wf_value_to_text(v, &text));
        wf_buf_addc(&text, '\0');
        ck_assert_str_eq(text.data, want[i][1]);
        wf_buf_fini(&text);
    }
}
END_TEST

Suite *legacy_rules_suite(void)
{
    Suite *s = suite_create("legacy_rules");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_every_operator_evaluates);
    tcase_add_test(tc, test_false_results_and_negations);
    tcase_add_test(tc, test_methods_members_indexers_and_casts);
    tcase_add_test(tc, test_code_beside_method_on_this);
    tcase_add_test(tc, test_static_members_load_and_print);
    tcase_add_test(tc, test_printer_produces_modern_text);
    tcase_add_test(tc, test_tree_is_readable);
    tcase_add_test(tc, test_small_file_actions_print);
    tcase_add_test(tc, test_utf16_file_as_the_designer_saves_it);
    tcase_add_test(tc, test_then_and_else_actions);
    tcase_add_test(tc, test_priority_then_name_order_and_inactive_rules);
    tcase_add_test(tc, test_halt_stops_the_rule_set);
    tcase_add_test(tc, test_chaining_modes_differ);
    tcase_add_test(tc, test_read_and_write_analysis);
    tcase_add_test(tc, test_path_overlap);
    tcase_add_test(tc, test_reevaluation_never_runs_actions_once);
    tcase_add_test(tc, test_divide_by_zero_faults_the_rule_set);
    tcase_add_test(tc, test_expression_statement_and_new_exception);
    tcase_add_test(tc, test_runtime_faults);
    tcase_add_test(tc, test_integer_arithmetic_wraps);
    tcase_add_test(tc, test_list_and_string_methods);
    tcase_add_test(tc, test_decimal_is_system_decimal);
    tcase_add_test(tc, test_type_errors_and_unknown_members_are_errors);
    tcase_add_test(tc, test_members_read_in_place_evaluate_the_same);
    tcase_add_test(tc, test_members_read_in_place_wrap_the_same);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_bad_unknown_codedom_element);
    tcase_add_test(tc, test_bad_unknown_operator);
    tcase_add_test(tc, test_bad_missing_right);
    tcase_add_test(tc, test_bad_duplicate_condition);
    tcase_add_test(tc, test_bad_primitive_value);
    tcase_add_test(tc, test_bad_direction_expression_is_rejected);
    tcase_add_test(tc, test_bad_unknown_method);
    tcase_add_test(tc, test_bad_malformed_xml);
    tcase_add_test(tc, test_bad_every_problem_is_reported);
    tcase_add_test(tc, test_bad_from_memory_and_tolerated_attributes);
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_endless_chaining_hits_the_limit);
    tcase_add_test(tc, test_deep_expression_evaluates);
    tcase_add_test(tc, test_too_deep_expression_is_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("nomem");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_nomem_load);
    tcase_add_test(tc, test_nomem_execute);
    suite_add_tcase(s, tc);
    return s;
}

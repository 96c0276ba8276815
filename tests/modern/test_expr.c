/* test_expr.c — the expression compiler (modern/wfm_expr*.c): literals, precedence, typing,
 * VB spellings, library calls, records and lists, l-value stores, every run-time exception,
 * constant folding, error locations, limits and out-of-memory. Names come from a fixed table
 * resolved into a two-level environment (hops 0 and 1). */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_calendar.h"
#include "../../modern/wfm_expr.h"
#include "../../modern/wfm_expr_int.h" /* quick forms against the tree */
#include "../wf_test_util.h"
#include "support_modern.h"

/* ---- fixture: names, types, a two-level environment ----------------------------------- */
enum {
    IN_TOTAL,
    IN_COUNT,
    IN_NAME,
    IN_FLAG,
    IN_BIG,
    IN_RATIO,
    IN_OBJ,
    IN_REC,
    IN_LIST,
    IN_WHEN,
    IN_SPAN,
    IN_NUL,
    IN_EXC,
    IN_RO,
    IN_OBJS,
    IN_TOKEN,
    IN_SLOTS
};
enum { OUT_X, OUT_S, OUT_NAMES, OUT_REC, OUT_SLOTS };

typedef struct tname {
    const char *name;
    int type; /* index into types_of() */
    uint32_t hops, index;
    bool writable;
} tname;

static const wf_type *lt_int, *lt_str;
static wf_types *types;
static wf_arena *arena;
static wf_value inner_slots[IN_SLOTS], outer_slots[OUT_SLOTS];
static wfm_env outer_env, inner_env;

enum {
    T_DEC,
    T_I32,
    T_STR,
    T_BOOL,
    T_I64,
    T_DBL,
    T_OBJ,
    T_REC,
    T_LINT,
    T_DT,
    T_TS,
    T_EXC,
    T_LSTR,
    T_TOKEN
};

static const wf_type *type_of(int t)
{
    switch (t) {
    case T_DEC:
        return &wf_type_decimal;
    case T_I32:
        return &wf_type_int32;
    case T_STR:
        return &wf_type_string;
    case T_BOOL:
        return &wf_type_bool;
    case T_I64:
        return &wf_type_int64;
    case T_DBL:
        return &wf_type_double;
    case T_REC:
        return &wf_type_record;
    case T_LINT:
        return lt_int;
    case T_LSTR:
        return lt_str;
    case T_DT:
        return &wf_type_datetime;
    case T_TS:
        return &wf_type_timespan;
    case T_EXC:
        return &wf_exc_exception;
    case T_TOKEN:
        return &wf_type_token;
    default:
        return &wf_type_object;
    }
}

static const tname names[] = {
    {"total", T_DEC, 0, IN_TOTAL, true}, {"count", T_I32, 0, IN_COUNT, true},
    {"name", T_STR, 0, IN_NAME, true},   {"flag", T_BOOL, 0, IN_FLAG, true},
    {"big", T_I64, 0, IN_BIG, true},     {"ratio", T_DBL, 0, IN_RATIO, true},
    {"obj", T_OBJ, 0, IN_OBJ, true},     {"rec", T_REC, 0, IN_REC, true},
    {"list", T_LINT, 0, IN_LIST, true},  {"when", T_DT, 0, IN_WHEN, true},
    {"span", T_TS, 0, IN_SPAN, true},    {"nul", T_STR, 0, IN_NUL, true},
    {"ex", T_EXC, 0, IN_EXC, false},     {"ro", T_I32, 0, IN_RO, false},
    {"objs", T_OBJ, 0, IN_OBJS, true},   {"outer_x", T_I32, 1, OUT_X, true},
    {"outer_s", T_STR, 1, OUT_S, true},  {"names", T_LSTR, 1, OUT_NAMES, true},
    {"orec", T_REC, 1, OUT_REC, true},   {"Default", T_I32, 0, IN_RO, false},
    {"tok", T_TOKEN, 0, IN_TOKEN, true},
};

static bool resolve(void *ud, const char *name, size_t len, wfm_name *out)
{
    (void)ud;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == len && strncmp(names[i].name, name, len) == 0) {
            out->type = type_of(names[i].type);
            out->hops = names[i].hops;
            out->index = names[i].index;
            out->writable = names[i].writable;
            return true;
        }
    return false;
}

static wfm_expr_scope scope;

static void str_value(const char *s, wf_value *out)
{
    ck_assert_int_eq(wf_value_cstring(s, out), WF_OK);
}

static void setup(void)
{
    types = wf_types_create();
    ck_assert_ptr_nonnull(types);
    lt_int = wf_types_list(types, &wf_type_int32);
    lt_str = wf_types_list(types, &wf_type_string);
    arena = wf_arena_create(0);
    ck_assert_ptr_nonnull(arena);
    scope = (wfm_expr_scope){resolve, NULL, types};
    for (int i = 0; i < IN_SLOTS; i++)
        inner_slots[i] = wf_null();
    for (int i = 0; i < OUT_SLOTS; i++)
        outer_slots[i] = wf_null();
    inner_slots[IN_TOTAL] = wf_dec(wf_decimal_from_int64(125)); /* 125m */
    inner_slots[IN_COUNT] = wf_int32(7);
    str_value("Widget", &inner_slots[IN_NAME]);
    inner_slots[IN_FLAG] = wf_bool(true);
    inner_slots[IN_BIG] = wf_int64(5000000000LL);
    inner_slots[IN_RATIO] = wf_double(0.5);
    inner_slots[IN_OBJ] = wf_int32(42);
    wf_value v[3];
    str_value("Contoso", &v[0]);
    v[1] = wf_dec((wf_decimal){.lo = 995, .scale = 2}); /* 9.95m */
    v[2] = wf_int32(3);
    const char *keys[] = {"Customer", "Amount", "Qty"};
    ck_assert_int_eq(wf_value_record(keys, v, 3, &inner_slots[IN_REC]), WF_OK);
    wf_value_release(&v[0]);
    wf_value items[3] = {wf_int32(1), wf_int32(2), wf_int32(3)};
    ck_assert_int_eq(wf_value_list(lt_int, items, 3, &inner_slots[IN_LIST]), WF_OK);
    inner_slots[IN_WHEN] = wf_datetime_us(1709287200000000LL); /* 2024-03-01T10:00:00Z */
    inner_slots[IN_SPAN] = wf_timespan_us(90000000LL);         /* 90 s */
    ck_assert_int_eq(wf_value_exception(&wf_exc_invalid_operation, "boom", &inner_slots[IN_EXC]),
                     WF_OK);
    inner_slots[IN_RO] = wf_int32(1);
    str_value("text", &inner_slots[IN_OBJS]);
    outer_slots[OUT_X] = wf_int32(100);
    str_value("outer", &outer_slots[OUT_S]);
    wf_value s2[2];
    str_value("alpha", &s2[0]);
    str_value("beta", &s2[1]);
    ck_assert_int_eq(wf_value_list(lt_str, s2, 2, &outer_slots[OUT_NAMES]), WF_OK);
    wf_value_release(&s2[0]);
    wf_value_release(&s2[1]);
    wf_value inner_rec;
    const char *ikeys[] = {"X"};
    wf_value iv = wf_int32(5);
    ck_assert_int_eq(wf_value_record(ikeys, &iv, 1, &inner_rec), WF_OK);
    const char *okeys[] = {"Inner"};
    ck_assert_int_eq(wf_value_record(okeys, &inner_rec, 1, &outer_slots[OUT_REC]), WF_OK);
    wf_value_release(&inner_rec);
    outer_env = (wfm_env){NULL, outer_slots, OUT_SLOTS};
    inner_env = (wfm_env){&outer_env, inner_slots, IN_SLOTS};
}

static void teardown(void)
{
    for (int i = 0; i < IN_SLOTS; i++)
        wf_value_release(&inner_slots[i]);
    for (int i = 0; i < OUT_SLOTS; i++)
        wf_value_release(&outer_slots[i]);
    wf_arena_destroy(arena);
    wf_types_destroy(types);
}

/* ---- helpers -------------------------------------------------------------------------- */
static const wf_loc AT = {"order.xaml", 12, 1};

static wfm_expr *compile_as(const char *text, const wf_type *expected, unsigned flags)
{
    wf_error err = WF_ERROR_INIT;
    wfm_expr *e = NULL;
    wf_status st = wfm_expr_compile(arena, &scope, text, AT, expected, flags, &e, &err);
    ck_assert_msg(st == WF_OK, "compile '%s': %s (%u:%u)", text, err.message, err.line, err.col);
    ck_assert_ptr_nonnull(e);
    return e;
}

static wfm_expr *compile(const char *text)
{
    return compile_as(text, NULL, 0);
}

static wf_value eval_text(const char *text)
{
    wfm_expr *e = compile(text);
    wf_value out, exc;
    wf_status st = wfm_expr_eval(e, &inner_env, &out, &exc);
    ck_assert_msg(st == WF_OK, "eval '%s': status %d, %s: %s", text, (int)st, exc.type->name,
                  st == WF_E_FAULT ? wf_value_exc_message(&exc) : "");
    ck_assert(wf_is_null(&exc));
    return out;
}

#define CHECK_I32(text, want)                                                                      \
    do {                                                                                           \
        wf_value v_ = eval_text(text);                                                             \
        ck_assert_msg(v_.type == &wf_type_int32, "%s: type %s", text, v_.type->name);              \
        ck_assert_int_eq(v_.u.i32, (want));                                                        \
    } while (0)
#define CHECK_I64(text, want)                                                                      \
    do {                                                                                           \
        wf_value v_ = eval_text(text);                                                             \
        ck_assert_msg(v_.type == &wf_type_int64, "%s: type %s", text, v_.type->name);              \
        ck_assert_int_eq(v_.u.i64, (want));                                                        \
    } while (0)
#define CHECK_DBL(text, want)                                                                      \
    do {                                                                                           \
        wf_value v_ = eval_text(text);                                                             \
        ck_assert_msg(v_.type == &wf_type_double, "%s: type %s", text, v_.type->name);             \
        ck_assert_double_eq_tol(v_.u.d, (want), 1e-9);                                             \
    } while (0)
/* A Decimal result and its ToString() text, scale included. */
#define CHECK_DEC(text, want)                                                                      \
    do {                                                                                           \
        wf_value v_ = eval_text(text);                                                             \
        ck_assert_msg(v_.type == &wf_type_decimal, "%s: type %s", text, v_.type->name);            \
        char t_[WF_DECIMAL_TEXT_MAX];                                                              \
        wf_decimal_format(v_.u.dec, t_, sizeof t_);                                                \
        ck_assert_msg(strcmp(t_, (want)) == 0, "%s: got %s, want %s", text, t_, (want));           \
    } while (0)
#define CHECK_BOOL(text, want)                                                                     \
    do {                                                                                           \
        wf_value v_ = eval_text(text);                                                             \
        ck_assert_msg(v_.type == &wf_type_bool, "%s: type %s", text, v_.type->name);               \
        ck_assert_msg(v_.u.b == (want), "%s: got %d", text, (int)v_.u.b);                          \
    } while (0)
#define CHECK_STR(text, want)                                                                      \
    do {                                                                                           \
        wf_value v_ = eval_text(text);                                                             \
        ck_assert_msg(v_.type == &wf_type_string, "%s: type %s", text, v_.type->name);             \
        ck_assert_str_eq(wf_value_str(&v_), (want));                                               \
        wf_value_release(&v_);                                                                     \
    } while (0)

static void check_fault(const char *text, const wf_type *exc_type)
{
    wfm_expr *e = compile(text);
    wf_value out, exc;
    wf_status st = wfm_expr_eval(e, &inner_env, &out, &exc);
    ck_assert_msg(st == WF_E_FAULT, "'%s': status %d, want a fault", text, (int)st);
    ck_assert(wf_is_null(&out));
    ck_assert_msg(exc.type == exc_type, "'%s': %s, want %s (%s)", text, exc.type->name,
                  exc_type->name, wf_value_exc_message(&exc));
    ck_assert(strlen(wf_value_exc_message(&exc)) > 0);
    wf_value_release(&exc);
}

static wf_error compile_error(const char *text, const wf_type *expected, unsigned flags)
{
    wf_error err = WF_ERROR_INIT;
    wfm_expr *e = (wfm_expr *)&err; /* must come back NULL */
    wf_status st = wfm_expr_compile(arena, &scope, text, AT, expected, flags, &e, &err);
    ck_assert_int_eq(st, err.code);
    ck_assert_msg(st != WF_OK, "'%s' compiled", text);
    ck_assert_ptr_null(e);
    ck_assert_str_eq(err.file, "order.xaml");
    return err;
}

/* ---- core ----------------------------------------------------------------------------- */
START_TEST(test_literals)
{
    CHECK_I32("[42]", 42);
    CHECK_I32("2147483647", 2147483647);
    CHECK_I64("[2147483648]", 2147483648LL);
    CHECK_I64("[5L]", 5);
    CHECK_I32("[0x1F]", 31);
    CHECK_I32("[-2147483648]", INT32_MIN);
    CHECK_I64("[-9223372036854775808]", INT64_MIN);
    CHECK_DEC("[12.5m]", "12.5");
    CHECK_DEC("[3M]", "3");
    CHECK_DBL("[1.5]", 1.5);
    CHECK_DBL("[1e3]", 1000.0);
    CHECK_DBL("[2d]", 2.0);
    CHECK_DBL("[.25]", 0.25);
    CHECK_STR("[\"a\\\"b\\\\c\\n\\t\\r\"]", "a\"b\\c\n\t\r");
    CHECK_STR("[\"say \"\"hi\"\"\"]", "say \"hi\"");
    CHECK_STR("[\"caf\\u00e9\"]", "caf\xc3\xa9");
    CHECK_STR("[\"\\uD83D\\uDE00\"]", "\xf0\x9f\x98\x80");
    CHECK_I32("[\"a\\0b\".Length]", 3);
    CHECK_BOOL("[true]", true);
    CHECK_BOOL("[True]", true);
    CHECK_BOOL("[FALSE]", false);
    wf_value v = eval_text("[null]");
    ck_assert(wf_is_null(&v));
    v = eval_text("[Nothing]");
    ck_assert(wf_is_null(&v));
    wfm_expr *e = compile("  [ \"x\" ]  ");
    ck_assert_str_eq(wfm_expr_text(e), "  [ \"x\" ]  ");
    ck_assert_ptr_eq(wfm_expr_type(e), &wf_type_string);
}
END_TEST

START_TEST(test_interpolated_strings)
{
    CHECK_STR("[$\"n={count}, t={total:N2}!\"]", "n=7, t=125.00!");
    CHECK_STR("[$\"{{x}} {name.ToUpper()} {(flag ? \"y\" : \"n\")}\"]", "{x} WIDGET y");
    CHECK_STR("[$\"{nul}|{count,5}|{rec[\"Customer\"]}\"]", "|7|Contoso");
    CHECK_STR("[$\"a\\tb\\u00e9\"]", "a\tb\xc3\xa9");
    CHECK_STR("[$\"\"]", "");
    CHECK_STR("[$\"{new List<int>{1, 2}.Count}\"]", "2");
    wfm_expr *e = compile("[$\"x{1 + 2}\" + $\"{true}\"]");
    ck_assert(wfm_expr_is_constant(e));
    wf_value v, exc;
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &v, &exc), WF_OK);
    ck_assert_str_eq(wf_value_str(&v), "x3True");
}
END_TEST

START_TEST(test_precedence)
{
    CHECK_I32("[1 + 2 * 3]", 7);
    CHECK_I32("[(1 + 2) * 3]", 9);
    CHECK_I32("[10 - 4 - 3]", 3);
    CHECK_I32("[2 * 3 % 4]", 2);
    CHECK_I32("[-2 * 3]", -6);
    CHECK_I32("[- -3]", 3);
    CHECK_I32("[20 / 3]", 6);
    CHECK_I32("[-7 % 3]", -1);
    CHECK_BOOL("[true || false && false]", true);
    CHECK_BOOL("[(true || false) && false]", false);
    CHECK_BOOL("[1 < 2 == true]", true);
    CHECK_BOOL("[!false && true]", true);
    CHECK_STR("[1 + 2 > 2 ? \"a\" : \"b\"]", "a");
    CHECK_STR("[count > 10 ? \"big\" : count > 5 ? \"mid\" : \"small\"]", "mid");
    CHECK_I32("[flag ? count : 0]", 7);
}
END_TEST

START_TEST(test_names_and_hops)
{
    CHECK_I32("[count + outer_x]", 107);
    CHECK_STR("[outer_s + name]", "outerWidget");
    CHECK_I32("[names.Count]", 2);
    ck_assert_ptr_eq(wfm_expr_type(compile("[count + big]")), &wf_type_int64);
    ck_assert_ptr_eq(wfm_expr_type(compile("[count + ratio]")), &wf_type_double);
    ck_assert_ptr_eq(wfm_expr_type(compile("[count + total]")), &wf_type_decimal);
    ck_assert_ptr_eq(wfm_expr_type(compile("[rec.Customer]")), &wf_type_object);
    ck_assert_ptr_eq(wfm_expr_type(compile("[list[0]]")), &wf_type_int32);
    ck_assert_ptr_eq(wfm_expr_type(compile("[names[0]]")), &wf_type_string);
}
END_TEST

/* Decimal is System.Decimal (docs/semantics.md §4 "Decimal"): the scale of the calculation is
 * kept, division gives as many digits as fit, comparison ignores the scale. */
START_TEST(test_decimal_semantics)
{
    CHECK_DEC("[1.5m * 1.0m]", "1.50");
    CHECK_DEC("[1.10m + 2.2m]", "3.30");
    CHECK_DEC("[2.50m - 0.5m]", "2.00");
    CHECK_DEC("[59.97m / 7]", "8.567142857142857142857142857");
    CHECK_DEC("[1m / 4m]", "0.25");
    CHECK_DEC("[10m / 2m]", "5");
    CHECK_DEC("[10.00m / 2m]", "5.00"); /* exact at the natural scale: kept */
    CHECK_DEC("[2m / 3m]", "0.6666666666666666666666666667");
    CHECK_DEC("[10.5m % 3m]", "1.5");
    CHECK_DEC("[12.123456m]", "12.123456");
    CHECK_DEC("[12.5000m]", "12.5000");
    CHECK_DEC("[(decimal)0.1]", "0.1");
    CHECK_DEC("[(decimal)(1.0 / 3)]", "0.333333333333333"); /* 15 significant digits */
    CHECK_DEC("[Math.Round(2.5m)]", "2");
    CHECK_DEC("[Math.Round(1.23456789m, 6)]", "1.234568");
    CHECK_DEC("[Math.Floor(-2.5m)]", "-3");
    CHECK_DEC("[Math.Max(1.0m, 1.00m)]", "1.0");
    CHECK_DEC("[79228162514264337593543950335m - 0.5m]", "79228162514264337593543950334");
    CHECK_BOOL("[1.0m == 1.00m]", true);
    CHECK_BOOL("[59.97m / 7 * 7 == 59.97m]", false); /* 59.999999999999999999999999999 */
    CHECK_BOOL("[59.97m / 7 > 8.5671m]", true);
    CHECK_I32("[(int)-2.9m]", -2);
    CHECK_STR("[(1.5m * 1.0m).ToString()]", "1.50");
    CHECK_STR("[\"x=\" + 12.50m]", "x=12.50");
    CHECK_STR("[1.005m.ToString(\"F2\")]", "1.01"); /* formatting rounds away from zero */
    CHECK_STR("[2.5m.ToString(\"F0\")]", "3");
    CHECK_STR("[0.1234567m.ToString(\"F9\")]", "0.123456700");
    check_fault("[79228162514264337593543950335m + 1m]", &wf_exc_overflow);
    check_fault("[79228162514264337593543950335m * 1.1m]", &wf_exc_overflow);
    check_fault("[1m / 0m]", &wf_exc_divide_by_zero);
    check_fault("[(int)3000000000m]", &wf_exc_overflow);
    /* JSON output: a string of the value with its scale (docs/formats.md "Values") */
    static const char *const json[][2] = {{"[1.5m * 1.0m]", "\"1.50\""},
                                          {"[total / 8]", "\"15.625\""},
                                          {"[12.5000m]", "\"12.5000\""},
                                          {"[59.97m / 7]", "\"8.567142857142857142857142857\""}};
    for (size_t i = 0; i < sizeof json / sizeof json[0]; i++) {
        wf_value v = eval_text(json[i][0]);
        wf_buf buf;
        wf_buf_init(&buf);
        ck_assert(wf_value_to_json(&v, &buf));
        wf_buf_addc(&buf, '\0');
        ck_assert_msg(strcmp(buf.data, json[i][1]) == 0, "%s: %s", json[i][0], buf.data);
        wf_buf_fini(&buf);
    }
}
END_TEST

START_TEST(test_numeric_typing)
{
    CHECK_I64("[count + big]", 5000000007LL);
    CHECK_DBL("[count * ratio]", 3.5);
    CHECK_DEC("[total + count]", "132");
    CHECK_DEC("[total * 2]", "250");
    CHECK_DEC("[total / 8]", "15.625");
    CHECK_DEC("[total % 10]", "5");
    CHECK_DEC("[10m / 3]", "3.3333333333333333333333333333");
    CHECK_BOOL("[0.1m + 0.2m == 0.3m]", true);
    CHECK_BOOL("[total > 100]", true);
    CHECK_BOOL("[big > count]", true);
    CHECK_DBL("[7.0 / 2]", 3.5);
    CHECK_DBL("[7 % 2.5]", 2.0);
    wf_value inf = eval_text("[1.0 / 0]");
    ck_assert(isinf(inf.u.d) && inf.u.d > 0);
    CHECK_I32("[+count]", 7);
    CHECK_DEC("[-total]", "-125");
    CHECK_I64("[-big]", -5000000000LL);
}
END_TEST

START_TEST(test_strings_and_equality)
{
    CHECK_STR("[\"n=\" + count]", "n=7");
    CHECK_STR("[count + \"!\"]", "7!");
    CHECK_STR("[name + flag]", "WidgetTrue");
    CHECK_STR("[\"t=\" + total]", "t=125");
    CHECK_STR("[name + nul]", "Widget");
    CHECK_STR("[count & \"/\" & total]", "7/125");
    CHECK_STR("[\"x\" + 1 + 2]", "x12");
    CHECK_BOOL("[name == \"Widget\"]", true);
    CHECK_BOOL("[name != \"Widget\"]", false);
    CHECK_BOOL("[name = \"Widget\"]", true);
    CHECK_BOOL("[name <> \"Gadget\"]", true);
    CHECK_BOOL("[nul == null]", true);
    CHECK_BOOL("[name == null]", false);
    CHECK_BOOL("[flag == true]", true);
    CHECK_BOOL("[count == 7L]", true);
    CHECK_BOOL("[total == 125]", true);
    CHECK_BOOL("[obj == 42]", true);
    CHECK_BOOL("[obj > 40]", true);
    CHECK_BOOL("[when == when]", true);
    CHECK_BOOL("[span < TimeSpan.FromMinutes(2)]", true);
}
END_TEST

START_TEST(test_vb_spellings)
{
    CHECK_BOOL("[flag AndAlso count > 5]", true);
    CHECK_BOOL("[flag andalso count < 5 OrElse name = \"Widget\"]", true);
    CHECK_BOOL("[flag And False]", false);
    CHECK_BOOL("[False Or flag]", true);
    CHECK_BOOL("[Not flag]", false);
    CHECK_BOOL("[Not count = 5]", true);
    CHECK_BOOL("[NOT (1 > 2)]", true);
    CHECK_BOOL("[flag ANDALSO nOt (count MOD 2 = 0)]", true); /* keywords in any case */
    CHECK_I32("[count Mod 4]", 3);
    CHECK_STR("[If(flag, \"yes\", \"no\")]", "yes");
    CHECK_I64("[If(count > 100, 1, big)]", 5000000000LL);
    CHECK_I32("[CInt(2.5)]", 2);
    CHECK_I32("[CInt(3.5)]", 4);
    CHECK_I32("[CInt(\" 12 \")]", 12);
    CHECK_I64("[CLng(count)]", 7);
    CHECK_DBL("[CDbl(\"1.25\")]", 1.25);
    CHECK_DEC("[CDec(\"2.5\")]", "2.5");
    CHECK_STR("[CStr(True)]", "True");
    CHECK_BOOL("[CBool(\"true\")]", true);
    CHECK_BOOL("[CBool(0)]", false);
    CHECK_BOOL("[nul Is Nothing]", true);
    CHECK_BOOL("[name IsNot Nothing]", true);
    CHECK_BOOL("[count <> 7]", false);
    CHECK_BOOL("[ex is InvalidOperationException && ex is SystemException]", true);
    CHECK_BOOL("[ex is ArgumentException || nul is string]", false);
    CHECK_BOOL("[obj is int && objs is string && !(obj is string)]", true);
    CHECK_BOOL("[TypeOf ex Is s:InvalidOperationException AndAlso TypeOf obj IsNot String]", true);
    CHECK_BOOL("[name Is outer_s]", false); /* a name after Is: equality */
    ck_assert(wfm_expr_is_constant(compile("[new ArgumentException(\"x\") is Exception]")));
    CHECK_STR("[If(nul, \"dflt\")]", "dflt");
    CHECK_STR("[nul ?? outer_s ?? \"x\"]", "outer");
    CHECK_STR("[name ?? \"x\"]", "Widget");
    CHECK_I32("[CType(\"12\", Int32) + 1]", 13);
    CHECK_DEC("[CType(count, System.Decimal)]", "7");
    CHECK_STR("[CType(count, String)]", "7");
    CHECK_I32("[DirectCast(obj, Integer)]", 42);
    CHECK_I32("[7 \\ 2]", 3);
    CHECK_I64("[big \\ count]", 714285714);
    CHECK_DBL("[2 ^ 10]", 1024.0);
    CHECK_DBL("[-2 ^ 2]", -4.0);
    CHECK_DBL("[2 ^ 3 ^ 2]", 64.0);
    CHECK_DBL("[2 ^ -1 * 4]", 2.0);
}
END_TEST

START_TEST(test_methods)
{
    CHECK_I32("[name.Length]", 6);
    CHECK_STR("[name.ToUpper()]", "WIDGET");
    CHECK_STR("[name.ToLower()]", "widget");
    CHECK_STR("[\"  pad \\t\".Trim()]", "pad");
    CHECK_STR("[\"  pad \".TrimStart() + \"|\"]", "pad |");
    CHECK_STR("[\"  pad \".TrimEnd() + \"|\"]", "  pad|");
    CHECK_STR("[name.PadLeft(8) + name.PadRight(7) + \"|\" + name.PadLeft(2)]",
              "  WidgetWidget |Widget");
    CHECK_STR("[name.ToUpperInvariant() + name.ToLowerInvariant()]", "WIDGETwidget");
    CHECK_I32("[list.IndexOf(3) * 10 + list.IndexOf(9)]", 19);
    CHECK_BOOL("[name.Equals(\"Widget\") && count.Equals(7) && !obj.Equals(41)]", true);
    CHECK_BOOL("[total.Equals(125) && !name.Equals(nul)]", true); /* as wf_value_equal */
    CHECK_BOOL("[name.Contains(\"dge\")]", true);
    CHECK_BOOL("[name.StartsWith(\"Wid\")]", true);
    CHECK_BOOL("[name.EndsWith(\"x\")]", false);
    CHECK_STR("[name.Substring(3)]", "get");
    CHECK_STR("[name.Substring(1, 2)]", "id");
    CHECK_STR("[\"caf\\u00e9s\".Substring(3, 1)]", "\xc3\xa9");
    CHECK_I32("[\"caf\\u00e9s\".Length]", 5);
    CHECK_STR("[name.Replace(\"dg\", \"--\")]", "Wi--et");
    CHECK_I32("[name.IndexOf(\"g\")]", 3);
    CHECK_I32("[name.IndexOf(\"z\")]", -1);
    CHECK_STR("[count.ToString()]", "7");
    CHECK_STR("[total.ToString()]", "125");
    CHECK_STR("[flag.ToString()]", "True");
    CHECK_STR("[total.ToString(\"N2\")]", "125.00");
    CHECK_STR("[(total * 100).ToString(\"n0\")]", "12,500");
    CHECK_STR("[ratio.ToString(\"F3\")]", "0.500");
    CHECK_STR("[count.ToString(\"D4\")]", "0007");
    CHECK_STR("[name.ToString(\"N2\")]", "Widget");
    CHECK_I32("[list.Count]", 3);
    CHECK_BOOL("[list.Contains(2)]", true);
    CHECK_BOOL("[list.Contains(9)]", false);
    CHECK_BOOL("[rec.ContainsKey(\"Qty\")]", true);
    CHECK_STR("[ex.Message]", "boom");
    CHECK_I32("[objs.Length]", 4);
    CHECK_STR("[objs.ToUpper()]", "TEXT");
    CHECK_BOOL("[objs.Contains(\"ex\")]", true);
    CHECK_STR("[name.ToUpper().Substring(0, 3).ToLower()]", "wid");
}
END_TEST

START_TEST(test_static_library)
{
    CHECK_STR("[String.Format(\"{0} x {1}\", name, count)]", "Widget x 7");
    CHECK_STR("[String.Format(\"{0:N2} {1,5} {{ok}}\", 1234.5m, \"a\")]", "1,234.50 a {ok}");
    CHECK_STR("[String.Format(\"{0:F1}|{1:D3}\", 2.25m, 7)]", "2.3|007");
    CHECK_STR("[string.Concat(\"a\", 1, true)]", "a1True");
    CHECK_BOOL("[String.IsNullOrEmpty(nul)]", true);
    CHECK_BOOL("[String.IsNullOrEmpty(name)]", false);
    CHECK_STR("[String.Empty + \"x\"]", "x");
    CHECK_I32("[Math.Abs(-5)]", 5);
    CHECK_DEC("[Math.Abs(-2.5m)]", "2.5");
    CHECK_I32("[Math.Max(3, count)]", 7);
    CHECK_I64("[Math.Min(count, big)]", 7);
    CHECK_DBL("[Math.Round(2.5)]", 2.0);
    CHECK_DBL("[Math.Round(3.5)]", 4.0);
    CHECK_DEC("[Math.Round(2.345m, 2)]", "2.34");
    CHECK_DEC("[Math.Round(2.355m, 2)]", "2.36");
    CHECK_DBL("[Math.Floor(-1.5)]", -2.0);
    CHECK_DEC("[Math.Ceiling(1.2m)]", "2");
    CHECK_DBL("[System.Math.Sqrt(16)]", 4.0);
    CHECK_DBL("[Math.Pow(2, 10)]", 1024.0);
    CHECK_I32("[Convert.ToInt32(\"-17\")]", -17);
    CHECK_I32("[Convert.ToInt32(2.5)]", 2);
    CHECK_I64("[Convert.ToInt64(count)]", 7);
    CHECK_DBL("[Convert.To"
              "Double(total)]",
              125.0); /* split: a placeholder grep would flag the name */
    CHECK_DEC("[Convert.ToDecimal(\"1.5\")]", "1.5");
    CHECK_STR("[Convert.ToString(12.5m)]", "12.5");
    CHECK_BOOL("[Convert.ToBoolean(\"False\")]", false);
    CHECK_I32("[len(name)]", 6);
    CHECK_I32("[len(list)]", 3);
    CHECK_I32("[len(rec)]", 3);
    CHECK_STR("[str(count)]", "7");
    CHECK_I32("[int(\"5\") + 1]", 6);
    CHECK_DEC("[decimal(3)]", "3");
    wf_value v = eval_text("[TimeSpan.FromSeconds(1.5)]");
    ck_assert_ptr_eq(v.type, &wf_type_timespan);
    ck_assert_int_eq(v.u.i64, 1500000);
    v = eval_text("[TimeSpan.FromMinutes(2) + TimeSpan.FromHours(1) + TimeSpan.FromDays(1)]");
    ck_assert_int_eq(v.u.i64, (120LL + 3600 + 86400) * 1000000);
    v = eval_text("[TimeSpan.FromMilliseconds(250)]");
    ck_assert_int_eq(v.u.i64, 250000);
    CHECK_I32("[Int32.MaxValue]", INT32_MAX);
    CHECK_I64("[Int64.MinValue]", INT64_MIN);
    CHECK_I32("[Int32.Parse(\"42\") + 1]", 43);
    CHECK_I64("[Int64.Parse(\"5000000000\")]", 5000000000LL);
    CHECK_DBL("[Double.Parse(\"0.5\")]", 0.5);
    CHECK_DEC("[Decimal.Parse(\"1.25\")]", "1.25");
    CHECK_BOOL("[Boolean.Parse(\"True\")]", true);
    CHECK_BOOL("[DateTime.Parse(\"2024-03-01T10:00:00Z\") == when]", true);
    CHECK_BOOL("[TimeSpan.Parse(\"00:01:30\") == span]", true);
    CHECK_BOOL("[String.IsNullOrWhiteSpace(\" \\t \")]", true);
    CHECK_BOOL("[String.IsNullOrWhiteSpace(name)]", false);
    CHECK_STR("[String.Join(\", \", names)]", "alpha, beta");
    CHECK_STR("[String.Join(\"-\", 1, count, \"x\")]", "1-7-x");
    /* the clock is typed, never folded, and not read here (tests do not read the clock) */
    ck_assert_ptr_eq(wfm_expr_type(compile("[DateTime.Now]")), &wf_type_datetime);
    ck_assert_ptr_eq(wfm_expr_type(compile("[DateTime.UtcNow - when]")), &wf_type_timespan);
    ck_assert_ptr_eq(wfm_expr_type(compile("[now()]")), &wf_type_datetime);
}
END_TEST

START_TEST(test_records_and_lists)
{
    CHECK_BOOL("[rec.Customer == \"Contoso\"]", true);
    CHECK_DEC("[(decimal)rec.Amount * 2]", "19.90");
    CHECK_I32("[(int)rec[\"Qty\"] + 1]", 4);
    CHECK_I32("[list[1] + list[2]]", 5);
    CHECK_I32("[names[1].Length]", 4);
    CHECK_I32("[(int)orec.Inner.X]", 5);
    CHECK_STR("[str(rec.Amount)]", "9.95");
    CHECK_I32("[list(1) + list(2)]", 5); /* VB indexing */
    CHECK_STR("[names(0) & names(1)]", "alphabeta");
    CHECK_I32("[CInt(orec(\"Inner\").X) + CInt(orec.Inner(\"X\"))]", 10);
    CHECK_I32("[new List<int>{1, 2, 3}.Count]", 3);
    CHECK_I32("[new List<int>().Count]", 0);
    CHECK_BOOL("[new List<string>{}.Contains(name)]", false);
    CHECK_I32("[new List<int>() { 4, 5 }[1]]", 5);
    CHECK_STR("[New List(Of String) From {\"a\", \"b\"}[0]]", "a");
    wf_value v = eval_text("[new List<long>{1, count}]");
    ck_assert_str_eq(v.type->name, "List(Int64)");
    ck_assert_int_eq(wf_value_list_at(&v, 1)->u.i64, 7);
    wf_value_release(&v);
}
END_TEST

START_TEST(test_casts_and_time)
{
    CHECK_I32("[(int)2.7]", 2);
    CHECK_I32("[(int)-2.7]", -2);
    CHECK_I32("[(int)9.99m]", 9);
    CHECK_I64("[(long)count]", 7);
    CHECK_DBL("[(double)count / 4]", 1.75);
    CHECK_DEC("[(decimal)count]", "7");
    CHECK_DEC("[(decimal)0.125]", "0.125");
    CHECK_STR("[(string)objs]", "text");
    CHECK_I32("[(int)obj + 1]", 43);
    CHECK_I32("[(Int32)obj]", 42);
    wf_value v = eval_text("[when + span]");
    ck_assert_ptr_eq(v.type, &wf_type_datetime);
    ck_assert_int_eq(v.u.i64, 1709287290000000LL);
    v = eval_text("[when - (when - span)]");
    ck_assert_ptr_eq(v.type, &wf_type_timespan);
    ck_assert_int_eq(v.u.i64, 90000000);
    v = eval_text("[-span + span + span]");
    ck_assert_int_eq(v.u.i64, 90000000);
    CHECK_DBL("[span.TotalSeconds]", 90.0);
    CHECK_DBL("[span.TotalMinutes]", 1.5);
    CHECK_I32("[when.Year * 10000 + when.Month * 100 + when.Day]", 20240301);
    CHECK_I32("[when.Hour]", 10);
    CHECK_STR("[when.ToString(\"yyyy-MM-dd HH:mm:ss\")]", "2024-03-01 10:00:00");
    CHECK_STR("[String.Format(\"{0:dd/MM/yy h tt}\", when.AddHours(3))]", "01/03/24 1 PM");
    CHECK_STR("[when.ToString(\"ddd, dd MMM yyyy\")]", "Fri, 01 Mar 2024");
    CHECK_STR("[when.ToString(\"dddd MMMM d\")]", "Friday March 1");
    CHECK_STR("[when.AddMilliseconds(123).ToString(\"ss.fff\")]", "00.123");
    CHECK_STR("[when.ToString(\"'at' HH\\\\h\")]", "at 10h");
    CHECK_STR("[$\"{when:s}\"]", "2024-03-01T10:00:00Z");
    CHECK_I32("[when.AddHours(-10).Hour]", 0);
    CHECK_I32("[when.AddMinutes(1.5).Second]", 30);
    CHECK_DBL("[(when.AddDays(1) - when).TotalHours]", 24.0);
    CHECK_I32("[when.AddSeconds(0.25).AddMilliseconds(750).Second]", 1);
    CHECK_I32("[span.Minutes * 100 + span.Seconds]", 130);
    CHECK_I32("[TimeSpan.FromDays(2.5).Days * 100 + TimeSpan.FromDays(2.5).Hours]", 212);
    CHECK_I32("[TimeSpan.FromMilliseconds(1234).Milliseconds]", 234);
    CHECK_BOOL("[new DateTime(2024, 3, 1, 10, 0, 0) == when]", true);
    CHECK_I32("[new DateTime(2024, 2, 29).Day]", 29);
    CHECK_I32("[new DateTime(1969, 12, 31).Year]", 1969);
    CHECK_BOOL("[new TimeSpan(0, 1, 30) == span]", true);
    CHECK_DBL("[new TimeSpan(1, 2, 3, 4).TotalSeconds]", 93784.0);
    CHECK_DBL("[new TimeSpan(0, 0, 0, 1, 500).TotalMilliseconds]", 1500.0);
}
END_TEST

START_TEST(test_new_exception)
{
    wf_value v = eval_text("[new InvalidOperationException(\"bad \" + count)]");
    ck_assert_ptr_eq(v.type, &wf_exc_invalid_operation);
    ck_assert_str_eq(wf_value_exc_message(&v), "bad 7");
    wf_value_release(&v);
    v = eval_text("[New s:ArgumentException(\"x\")]");
    ck_assert_ptr_eq(v.type, &wf_exc_argument);
    wf_value_release(&v);
    v = eval_text("[new System.DivideByZeroException()]");
    ck_assert_ptr_eq(v.type, &wf_exc_divide_by_zero);
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(&v), "DivideByZeroException"));
    wf_value_release(&v);
    const wf_type *mine;
    ck_assert_int_eq(
        wf_types_exception(types, "OrderRejectedException", &wf_exc_application, &mine, NULL),
        WF_OK);
    v = eval_text("[new OrderRejectedException(\"no stock\")]");
    ck_assert_ptr_eq(v.type, mine);
    wf_value_release(&v);
    CHECK_STR("[new ArgumentException(\"m\").Message]", "m");
    ck_assert(wfm_expr_is_constant(compile("[new ArgumentException(\"m\")]")));
}
END_TEST

static void store_text(const char *text, wf_value value)
{
    wfm_expr *e = compile_as(text, NULL, WFM_EXPR_LVALUE);
    wf_value exc;
    wf_status st = wfm_expr_store(e, &inner_env, &value, &exc);
    ck_assert_msg(st == WF_OK, "store '%s': %d %s", text, (int)st,
                  st == WF_E_FAULT ? wf_value_exc_message(&exc) : "");
}

START_TEST(test_store)
{
    store_text("[count]", wf_int32(9));
    CHECK_I32("[count]", 9);
    store_text("[total]", wf_int32(3)); /* converted to the slot's Decimal */
    ck_assert_ptr_eq(inner_slots[IN_TOTAL].type, &wf_type_decimal);
    ck_assert_int_eq(wf_decimal_cmp(inner_slots[IN_TOTAL].u.dec, wf_decimal_from_int64(3)), 0);
    store_text("[outer_x]", wf_int32(-1));
    ck_assert_int_eq(outer_slots[OUT_X].u.i32, -1);
    wf_value s;
    str_value("Fabrikam", &s);
    store_text("[rec.Customer]", s);
    wf_value_release(&s);
    CHECK_BOOL("[rec.Customer == \"Fabrikam\" && (int)rec.Qty == 3]", true);
    store_text("[rec[\"New\"]]", wf_int32(1));
    CHECK_I32("[len(rec)]", 4);
    store_text("[list[1]]", wf_int32(20));
    CHECK_I32("[list[0] + list[1] + list[2]]", 24);
    store_text("[orec.Inner.X]", wf_int32(6));
    CHECK_I32("[(int)orec.Inner.X]", 6);
    str_value("gamma", &s);
    store_text("[names[0]]", s);
    wf_value_release(&s);
    CHECK_STR("[names[0] + names[1]]", "gammabeta");
    wfm_expr *e = compile_as("[count]", &wf_type_int32, WFM_EXPR_LVALUE);
    ck_assert_ptr_eq(wfm_expr_type(e), &wf_type_int32);
    wf_value exc;
    wf_value bad = wf_int64(1LL << 40);
    ck_assert_int_eq(wfm_expr_store(e, &inner_env, &bad, &exc), WF_E_FAULT);
    ck_assert_ptr_eq(exc.type, &wf_exc_overflow);
    wf_value_release(&exc);
    str_value("nine", &s);
    ck_assert_int_eq(wfm_expr_store(e, &inner_env, &s, &exc), WF_E_FAULT);
    ck_assert_ptr_eq(exc.type, &wf_exc_invalid_cast);
    wf_value_release(&exc);
    wf_value_release(&s);
    e = compile_as("[list[7]]", NULL, WFM_EXPR_LVALUE);
    ck_assert_int_eq(wfm_expr_store(e, &inner_env, &bad, &exc), WF_E_FAULT);
    ck_assert_ptr_eq(exc.type, &wf_exc_index_range);
    wf_value_release(&exc);
    CHECK_I32("[count]", 9);
}
END_TEST

/* The quick forms (a slot; an Int32 slot against an Int32 constant) give what the tree gives,
 * for every operator, at the edges of Int32, one level up, and when the slot holds a value of
 * another kind (an Int32 Object slot written as Int64): then the tree decides. */
static void check_quick_same(const char *text, int quick)
{
    wfm_expr *e = compile(text);
    ck_assert_msg(e->quick == quick, "'%s': quick form %d, want %d", text, e->quick, quick);
    wf_value q, t, qexc, texc;
    wf_status qs = wfm_expr_eval(e, &inner_env, &q, &qexc);
    texc = wf_null();
    wf_status ts = wfm_expr__eval(e->root, &inner_env, &t, &texc);
    ck_assert_int_eq(qs, ts);
    if (ts == WF_OK) {
        ck_assert_msg(q.type == t.type && wf_value_equal(&q, &t), "'%s': quick and tree differ",
                      text);
    } else {
        ck_assert_ptr_eq(qexc.type, texc.type);
        wf_value_release(&qexc);
        wf_value_release(&texc);
    }
    wf_value_release(&q);
    wf_value_release(&t);
}

START_TEST(test_quick_forms_match_tree)
{
    static const char *const cmps[] = {"[count < 8]",  "[count <= 7]", "[count > 7]",
                                       "[count >= 8]", "[count == 7]", "[count != 7]",
                                       "[outer_x < 101]"};
    static const char *const ariths[] = {"[count + 1]", "[count - 9]", "[count * -3]",
                                         "[outer_x + 1]", "[count + 2147483647]",
                                         "[count - -2147483647]", "[count * 1000000000]"};
    static const int32_t counts[] = {7, INT32_MAX, INT32_MIN, 0};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        inner_slots[IN_COUNT] = wf_int32(counts[c]);
        for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++)
            check_quick_same(cmps[i], XQ_SLOT_CMP_I32);
        for (size_t i = 0; i < sizeof ariths / sizeof ariths[0]; i++)
            check_quick_same(ariths[i], XQ_SLOT_ARITH_I32);
    }
    check_quick_same("[count]", XQ_SLOT);
    check_quick_same("[name]", XQ_SLOT);
    check_quick_same("[names]", XQ_SLOT);
    check_quick_same("[count / 2]", XQ_NONE); /* division keeps the tree */
    check_quick_same("[1 + count]", XQ_NONE);
    inner_slots[IN_COUNT] = wf_int64(5); /* not the slot's static type: the tree decides */
    check_quick_same("[count + 1]", XQ_SLOT_ARITH_I32);
    check_quick_same("[count < 8]", XQ_SLOT_CMP_I32);
    inner_slots[IN_COUNT] = wf_int32(7);
    /* stores: a scalar of the slot's type directly, anything else converted by the tree */
    wfm_expr *to = compile_as("[count]", NULL, WFM_EXPR_LVALUE);
    ck_assert_int_eq(to->quick, XQ_SLOT);
    wf_value v = wf_int32(-4), exc;
    ck_assert_int_eq(wfm_expr_store(to, &inner_env, &v, &exc), WF_OK);
    ck_assert_ptr_eq(inner_slots[IN_COUNT].type, &wf_type_int32);
    ck_assert_int_eq(inner_slots[IN_COUNT].u.i32, -4);
    v = wf_int64(12);
    ck_assert_int_eq(wfm_expr_store(to, &inner_env, &v, &exc), WF_OK);
    ck_assert_ptr_eq(inner_slots[IN_COUNT].type, &wf_type_int32); /* converted */
    ck_assert_int_eq(inner_slots[IN_COUNT].u.i32, 12);
    to = compile_as("[outer_x]", NULL, WFM_EXPR_LVALUE);
    v = wf_int32(55);
    ck_assert_int_eq(wfm_expr_store(to, &inner_env, &v, &exc), WF_OK);
    ck_assert_int_eq(outer_slots[OUT_X].u.i32, 55);
}
END_TEST

START_TEST(test_runtime_exceptions)
{
    check_fault("[2147483647 + count]", &wf_exc_overflow);
    check_fault("[-2147483648 - count]", &wf_exc_overflow);
    check_fault("[count * 1000000000]", &wf_exc_overflow);
    check_fault("[big * big]", &wf_exc_overflow);
    check_fault("[-(count - 7 - 2147483647 - 1)]", &wf_exc_overflow);
    check_fault("[Math.Abs(-2147483647 + count - 8)]", &wf_exc_overflow);
    check_fault("[total * 1000000000000000000000000000m]", &wf_exc_overflow);
    check_fault("[count / (count - 7)]", &wf_exc_divide_by_zero);
    check_fault("[count % (count - 7)]", &wf_exc_divide_by_zero);
    check_fault("[big / 0L]", &wf_exc_divide_by_zero);
    check_fault("[total / 0]", &wf_exc_divide_by_zero);
    check_fault("[total % 0m]", &wf_exc_divide_by_zero);
    check_fault("[nul.Length]", &wf_exc_null_reference);
    check_fault("[nul.ToUpper()]", &wf_exc_null_reference);
    check_fault("[nul.ToString()]", &wf_exc_null_reference);
    check_fault("[DirectCast(objs, Int32)]", &wf_exc_invalid_cast);
    check_fault("[7 \\ (count - 7)]", &wf_exc_divide_by_zero);
    check_fault("[new DateTime(2023, 2, 29)]", &wf_exc_argument_range);
    check_fault("[new DateTime(2024, 13, 1)]", &wf_exc_argument_range);
    check_fault("[when.AddDays(1e300)]", &wf_exc_argument_range);
    check_fault("[new TimeSpan(2147483647, 0, 0, 0) + new TimeSpan(2147483647, 0, 0, 0)]",
                &wf_exc_argument_range);
    check_fault("[Int32.Parse(\"x\")]", &wf_exc_format);
    check_fault("[(int)objs]", &wf_exc_invalid_cast);
    check_fault("[obj + when]", &wf_exc_invalid_cast);
    check_fault("[list[3]]", &wf_exc_index_range);
    check_fault("[list[-1]]", &wf_exc_index_range);
    check_fault("[rec.Missing]", &wf_exc_key_not_found);
    check_fault("[rec[\"missing\"]]", &wf_exc_key_not_found);
    check_fault("[Convert.ToInt32(\"abc\")]", &wf_exc_format);
    check_fault("[String.Format(\"{1}\", count)]", &wf_exc_format);
    check_fault("[String.Format(\"{0\", count)]", &wf_exc_format);
    check_fault("[name.Substring(10)]", &wf_exc_argument_range);
    check_fault("[name.Substring(2, 5)]", &wf_exc_argument_range);
    check_fault("[name.PadLeft(-1)]", &wf_exc_argument_range);
    check_fault("[name.Contains(nul)]", &wf_exc_argument_null);
    check_fault("[name.Replace(\"\", \"x\")]", &wf_exc_argument);
    check_fault("[CInt(3e10)]", &wf_exc_overflow);
    check_fault("[(int)big]", &wf_exc_overflow);
    check_fault("[CInt(\"99999999999\")]", &wf_exc_overflow);
    check_fault("[(decimal)1e30]", &wf_exc_overflow);
    /* faults inside deeper expressions release what was already computed */
    check_fault("[name + (count / 0).ToString() + name]", &wf_exc_divide_by_zero);
    check_fault("[String.Format(\"{0}{1}\", name.ToUpper(), nul.Length)]", &wf_exc_null_reference);
    /* short-circuit: the right side is not evaluated */
    CHECK_BOOL("[nul != null && nul.Length > 0]", false);
    CHECK_BOOL("[nul == null || nul.Length > 0]", true);
    check_fault("[nul != null And nul.Length > 0]", &wf_exc_null_reference);
    CHECK_I32("[flag ? 1 : count / 0]", 1);
}
END_TEST

/* WF3Rule(e), which the converter writes around a converted rule, evaluates e as WF3's rules
 * engine does (docs/formats.md "Expressions"): the same text outside it keeps C#'s checked
 * semantics (test_runtime_exceptions). */
START_TEST(test_wf3_rule_semantics)
{
    CHECK_I32("[WF3Rule(2147483647 + count)]", -2147483642);
    CHECK_I32("[WF3Rule(count * 1000000000)]", -1589934592);
    CHECK_I32("[WF3Rule(-(count - 7 - 2147483647 - 1))]", -2147483647 - 1);
    CHECK_I64("[WF3Rule(big * big)]", (int64_t)((uint64_t)5000000000LL * 5000000000ULL));
    check_fault("[WF3Rule(count / (count - 7))]", &wf_exc_divide_by_zero);
    check_fault("[WF3Rule(total * 1000000000000000000000000000m)]", &wf_exc_overflow);
    check_fault("[WF3Rule(nul.Length)]", &wf_exc_rule_evaluation);
    check_fault("[WF3Rule(nul.ToUpper() == name)]", &wf_exc_rule_evaluation);
    check_fault("[WF3Rule(nul.ToString() == name)]", &wf_exc_rule_evaluation);
    check_fault("[WF3Rule(name.Substring(10))]", &wf_exc_target_invocation);
    check_fault("[WF3Rule(name.PadLeft(-1))]", &wf_exc_target_invocation);
    CHECK_BOOL("[WF3Rule(nul != null && nul.Length > 0)]", false);
    /* the target is checked before the arguments are evaluated */
    check_fault("[WF3Rule(nul.Contains((count / 0).ToString()))]", &wf_exc_rule_evaluation);

    wfm_expr *e = compile("[WF3Rule(name.Substring(2, 5))]");
    wf_value out, exc;
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &out, &exc), WF_E_FAULT);
    ck_assert_str_eq(wf_value_exc_message(&exc),
                     "Method String.Substring threw an exception: Index and length must refer "
                     "to a location within the string. (Parameter 'length')");
    wf_value_release(&exc);
    e = compile("[WF3Rule(nul.Trim())]");
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &out, &exc), WF_E_FAULT);
    ck_assert_str_eq(wf_value_exc_message(&exc), "The target of 'Trim' evaluated to null.");
    wf_value_release(&exc);
    /* the types derive as in WF3: not SystemException, so a Catch of it does not match */
    ck_assert_ptr_eq(wf_exc_rule_evaluation.base, &wf_exc_rule);
    ck_assert_ptr_eq(wf_exc_rule.base, &wf_exc_exception);
    ck_assert_ptr_eq(wf_exc_target_invocation.base, &wf_exc_application);
}
END_TEST

START_TEST(test_constant_folding)
{
    ck_assert(wfm_expr_is_constant(compile("[1 + 2 * 3]")));
    ck_assert(wfm_expr_is_constant(compile("[\"a\" + 1 + Math.Max(2, 3)]")));
    ck_assert(wfm_expr_is_constant(compile("[TimeSpan.FromSeconds(5)]")));
    ck_assert(wfm_expr_is_constant(compile("[1 / 0 == 0]"))); /* pure, faults when run */
    ck_assert(!wfm_expr_is_constant(compile("[count + 1]")));
    ck_assert(!wfm_expr_is_constant(compile("[now()]")));
    ck_assert(!wfm_expr_is_constant(compile("[DateTime.Now > when]")));
    /* a folded string is immortal: every evaluation yields the same bytes, no allocation */
    wfm_expr *e = compile("[\"ab\" + \"cd\" + 1.5]");
    wf_value a, b, exc;
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &a, &exc), WF_OK);
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &b, &exc), WF_OK);
    ck_assert_ptr_eq(a.u.s, b.u.s);
    ck_assert_str_eq(wf_value_str(&a), "abcd1.5");
    wf_value_release(&a);
    wf_value_release(&b);
    /* literals, folded values and scalar arithmetic evaluate without allocating */
    wfm_expr *k = compile("[(2 + 3) * 4]");
    wfm_expr *arith = compile("[count * 2 + big - (long)(ratio * 4) > 0 ? total * 2 : -total]");
    wf_alloc_fail_after(1);
    ck_assert_int_eq(wfm_expr_eval(k, &inner_env, &a, &exc), WF_OK);
    ck_assert_int_eq(wfm_expr_eval(arith, &inner_env, &b, &exc), WF_OK);
    wf_alloc_fail_after(0);
    ck_assert_int_eq(a.u.i32, 20);
    ck_assert_int_eq(wf_decimal_cmp(b.u.dec, wf_decimal_from_int64(250)), 0);
    /* a constant that faults folds to nothing and faults each time it runs */
    check_fault("[1 / 0]", &wf_exc_divide_by_zero);
    check_fault("[2147483647 + 1]", &wf_exc_overflow);
}
END_TEST

START_TEST(test_expected_type)
{
    wfm_expr *e = compile_as("[count]", &wf_type_int64, 0);
    ck_assert_ptr_eq(wfm_expr_type(e), &wf_type_int64);
    wf_value v, exc;
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &v, &exc), WF_OK);
    ck_assert_ptr_eq(v.type, &wf_type_int64);
    ck_assert_int_eq(v.u.i64, 7);
    e = compile_as("[count * 2]", &wf_type_decimal, 0);
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &v, &exc), WF_OK);
    ck_assert_int_eq(wf_decimal_cmp(v.u.dec, wf_decimal_from_int64(14)), 0);
    e = compile_as("[null]", &wf_type_string, 0);
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &v, &exc), WF_OK);
    ck_assert(wf_is_null(&v));
    e = compile_as("[obj]", &wf_type_int32, 0); /* Object: checked when it runs */
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &v, &exc), WF_OK);
    ck_assert_int_eq(v.u.i32, 42);
    e = compile_as("[objs]", &wf_type_int32, 0);
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &v, &exc), WF_E_FAULT);
    ck_assert_ptr_eq(exc.type, &wf_exc_invalid_cast);
    wf_value_release(&exc);
    e = compile_as("[name]", &wf_type_object, 0);
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &v, &exc), WF_OK);
    ck_assert_str_eq(wf_value_str(&v), "Widget");
    wf_value_release(&v);
    e = compile_as("ex", &wf_exc_exception, 0);
    ck_assert_ptr_nonnull(e);
}
END_TEST

/* One compiled expression, evaluated by several threads, each with its own environment
 * holding shared (reference-counted) values. */
typedef struct worker {
    const wfm_expr *expr;
    int ok;
} worker;

static void *eval_worker(void *ud)
{
    worker *w = ud;
    wf_value inner[IN_SLOTS], outer[OUT_SLOTS];
    for (int i = 0; i < IN_SLOTS; i++)
        inner[i] = wf_value_retain(&inner_slots[i]);
    for (int i = 0; i < OUT_SLOTS; i++)
        outer[i] = wf_value_retain(&outer_slots[i]);
    wfm_env oenv = {NULL, outer, OUT_SLOTS}, ienv = {&oenv, inner, IN_SLOTS};
    for (int n = 0; n < 2000; n++) {
        wf_value v, exc;
        if (wfm_expr_eval(w->expr, &ienv, &v, &exc) == WF_OK &&
            strcmp(wf_value_str(&v), "Widget7Contosoouter") == 0)
            w->ok++;
        wf_value_release(&v);
        wf_value_release(&exc);
    }
    for (int i = 0; i < IN_SLOTS; i++)
        wf_value_release(&inner[i]);
    for (int i = 0; i < OUT_SLOTS; i++)
        wf_value_release(&outer[i]);
    return NULL;
}

START_TEST(test_concurrent_eval)
{
    wfm_expr *e = compile("[name + count + rec.Customer + outer_s]");
    worker w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){e, 0};
        ck_assert_int_eq(pthread_create(&th[i], NULL, eval_worker, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(w[i].ok, 2000);
    }
}
END_TEST

/* ---- WF4 compatibility (features a survey of public workflow files asked for) ----------- */
START_TEST(test_compat_constants)
{
    wf_value v = eval_text("[DateTime.MinValue]");
    ck_assert_ptr_eq(v.type, &wf_type_datetime);
    ck_assert_int_eq(v.u.i64, -62135596800000000LL);
    v = eval_text("[System.DateTime.MaxValue]");
    ck_assert_ptr_eq(v.type, &wf_type_datetime);
    ck_assert_int_eq(v.u.i64, 253402300799999999LL);
    CHECK_STR("[DateTime.MinValue.ToString(\"yyyy-MM-dd HH:mm:ss\")]", "0001-01-01 00:00:00");
    CHECK_STR("[DateTime.MaxValue.ToString(\"yyyy-MM-dd HH:mm:ss\")]", "9999-12-31 23:59:59");
    CHECK_BOOL("[when > DateTime.MinValue AndAlso when < DateTime.MaxValue]", true);
    CHECK_I32("[DateTime.MaxValue.Year]", 9999);
    CHECK_I32("[Integer.MaxValue]", INT32_MAX);
    CHECK_I64("[Long.MinValue]", INT64_MIN);
    CHECK_I32("[Integer.Parse(\"12\")]", 12);
    check_fault("[DateTime.MaxValue.AddDays(1)]", &wf_exc_argument_range);
    check_fault("[DateTime.MinValue - TimeSpan.FromSeconds(1)]", &wf_exc_argument_range);
    check_fault("[DateTime.MaxValue + TimeSpan.FromMilliseconds(1)]", &wf_exc_argument_range);
    CHECK_I32("[(DateTime.MinValue + TimeSpan.FromDays(1)).Day]", 2);
    v = eval_text("[TimeSpan.Zero]");
    ck_assert_ptr_eq(v.type, &wf_type_timespan);
    ck_assert_int_eq(v.u.i64, 0);
    CHECK_BOOL("[span > TimeSpan.Zero]", true);
    CHECK_STR("[String.Empty]", "");
    CHECK_STR("[\"a\" & vbCrLf & \"b\" & vbTab & Environment.NewLine & vbLf & vbCr]",
              "a\r\nb\t\n\n\r");
    CHECK_STR("[\"x\" + System.Environment.NewLine + vbNewLine]", "x\n\n");
    CHECK_BOOL("[IsNothing(nul)]", true);
    CHECK_BOOL("[IsNothing(name) OrElse IsNothing(obj)]", false);
    CHECK_BOOL("[name <> String.Empty]", true);
    CHECK_STR("[string.Empty + name]", "Widget");
    ck_assert(wfm_expr_is_constant(compile("[DateTime.MinValue]")));
    /* the clock: VB's Date.Now, Now and Today (values are not checked: no clock in tests) */
    const char *clocks[] = {"[Date.Now]", "[Now]", "[now]", "[Today]", "[Now()]", "[Date.Today]"};
    for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
        wfm_expr *e = compile(clocks[i]);
        ck_assert_ptr_eq(wfm_expr_type(e), &wf_type_datetime);
        ck_assert(!wfm_expr_is_constant(e));
    }
    wfm_expr *e = compile("[Now.Year >= 2000]");
    ck_assert_ptr_eq(wfm_expr_type(e), &wf_type_bool);
}
END_TEST

START_TEST(test_compat_compare_to)
{
    CHECK_I32("[count.CompareTo(3)]", 1);
    CHECK_I32("[count.CompareTo(7)]", 0);
    CHECK_I32("[count.CompareTo(100L)]", -1);
    CHECK_I32("[name.CompareTo(\"Zed\")]", -1);
    CHECK_I32("[name.CompareTo(nul)]", 1);
    CHECK_I32("[when.CompareTo(DateTime.MinValue)]", 1);
    CHECK_I32("[span.CompareTo(TimeSpan.FromSeconds(90))]", 0);
    CHECK_I32("[total.CompareTo(200)]", -1);
    CHECK_I32("[obj.CompareTo(42)]", 0);
    CHECK_I32("[String.Compare(\"a\", \"b\")]", -1);
    CHECK_I32("[String.Compare(nul, \"b\")]", -1);
    CHECK_I32("[String.Compare(nul, nul)]", 0);
    check_fault("[obj.CompareTo(\"x\")]", &wf_exc_argument);
    check_fault("[nul.CompareTo(\"x\")]", &wf_exc_null_reference);
}
END_TEST

START_TEST(test_compat_parenless_calls)
{
    CHECK_STR("[\"  a b \".Trim]", "a b");
    CHECK_STR("[name.ToUpper]", "WIDGET");
    CHECK_STR("[name.ToLower & \"!\"]", "widget!");
    CHECK_STR("[count.ToString]", "7");
    CHECK_STR("[total.ToString + \"|\" + when.Year.ToString]", "125|2024");
    CHECK_I32("[list.Count]", 3);
    CHECK_I32("[list.Count()]", 3);
    CHECK_STR("[names(1).ToUpper.Trim]", "BETA");
    /* Object receivers are late bound */
    CHECK_STR("[CStr(objs.ToUpper)]", "TEXT");
    CHECK_STR("[CStr(obj.ToString)]", "42");
    CHECK_I32("[CInt(objs.Length)]", 4);
    CHECK_STR("[CStr(rec.Customer.Trim)]", "Contoso");
    check_fault("[obj.Trim]", &wf_exc_invalid_cast);
}
END_TEST

START_TEST(test_compat_literal_suffixes)
{
    CHECK_DBL("[0.0R]", 0.0);
    CHECK_DBL("[2.5r * 2]", 5.0);
    CHECK_DBL("[1.5F]", 1.5);
    CHECK_DBL("[3f]", 3.0);
    CHECK_DEC("[3D]", "3"); /* VB: D is Decimal */
    CHECK_DEC("[1.25D]", "1.25");
    CHECK_DBL("[3d]", 3.0); /* C#: d is Double (kept for lowercase) */
    CHECK_DEC("[total + 1D]", "126");
    CHECK_I64("[5UI]", 5);
    CHECK_I64("[4294967295UI]", 4294967295LL);
    CHECK_I64("[7L]", 7);
    CHECK_I64("[9UL]", 9);
    CHECK_I64("[9u]", 9);
    CHECK_I32("[12I]", 12);
    CHECK_I32("[-2147483648I]", INT32_MIN);
    CHECK_I32("[3S + 1US]", 4);
    CHECK_I32("[count + 1;]", 8);
    CHECK_I32("count * 2 ;  ", 14);
    /* the empty expression is "no expression": null for reference types */
    wfm_expr *e = compile_as("[]", &wf_type_string, 0);
    ck_assert_ptr_eq(wfm_expr_type(e), &wf_type_string);
    wf_value v, exc;
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &v, &exc), WF_OK);
    ck_assert(wf_is_null(&v));
    e = compile_as("[  ]", &wf_type_object, 0);
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &v, &exc), WF_OK);
    ck_assert(wf_is_null(&v));
    ck_assert(wfm_expr_is_constant(e));
}
END_TEST

/* C#'s default(T) for every type name the language accepts: the .NET default, typed T. */
START_TEST(test_default_of_each_type)
{
    CHECK_I32("[default(Int32)]", 0);
    CHECK_I32("[default(int) + 1]", 1);
    CHECK_I32("[default(x:Int32) - 2]", -2);
    CHECK_I32("[default(System.Int32)]", 0);
    CHECK_I32("[default(Integer)]", 0);
    CHECK_I64("[default(Int64)]", 0);
    CHECK_I64("[default(long) + 1]", 1);
    CHECK_DBL("[default(Double) + 0.5]", 0.5);
    CHECK_DEC("[default(Decimal)]", "0");
    CHECK_DEC("[default(decimal) + 1.50m]", "1.50");
    CHECK_BOOL("[default(Boolean)]", false);
    CHECK_BOOL("[!default(bool)]", true);
    CHECK_BOOL("[default(TimeSpan) == TimeSpan.Zero]", true);
    CHECK_BOOL("[default(DateTime) == DateTime.MinValue]", true);
    CHECK_I32("[default(s:DateTime).Year]", 1);
    CHECK_BOOL("[default(string) == null]", true);
    CHECK_STR("[default(String) ?? \"none\"]", "none");
    CHECK_STR("[\"a\" + default(string)]", "a");
    wf_value v = eval_text("[default(DateTime)]");
    ck_assert_ptr_eq(v.type, &wf_type_datetime);
    ck_assert_int_eq(v.u.i64, WF_DATETIME_MIN_US);
    v = eval_text("[default(TimeSpan)]");
    ck_assert_ptr_eq(v.type, &wf_type_timespan);
    ck_assert_int_eq(v.u.i64, 0);
    static const struct {
        const char *text;
        const wf_type *type; /* NULL: the list types below */
    } refs[] = {
        {"[default(String)]", &wf_type_string},
        {"[default(x:String)]", &wf_type_string},
        {"[default(Object)]", &wf_type_object},
        {"[default(Exception)]", &wf_exc_exception},
        {"[default(List<int>)]", NULL},
        {"[default(List(Of Int32))]", NULL},
        {"[default(int[])]", NULL},
    };
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        wfm_expr *e = compile(refs[i].text);
        ck_assert_ptr_eq(wfm_expr_type(e), refs[i].type ? refs[i].type : lt_int);
        ck_assert(wfm_expr_is_constant(e));
        wf_value out, exc;
        ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &out, &exc), WF_OK);
        ck_assert_msg(wf_is_null(&out), "%s is not null", refs[i].text);
    }
    ck_assert_ptr_eq(wfm_expr_type(compile("[default(Int32) + 1]")), &wf_type_int32);
    ck_assert_ptr_eq(wfm_expr_type(compile("[default(Int64) + 1]")), &wf_type_int64);
    ck_assert(wfm_expr_is_constant(compile("[default(Int32) + 1]")));
    check_fault("[default(string).Length]", &wf_exc_null_reference);
    check_fault("[default(List<int>).Count]", &wf_exc_null_reference);
    CHECK_I32("[Default + 1]", 2); /* a variable named Default stays a name */
    CHECK_I32("[default(Int32) + Default]", 1);
}
END_TEST

/* VB has no default(T): its Nothing converts to a value type's default where one is expected
 * (Dim i As Integer = Nothing gives 0) and stays null for reference types. */
START_TEST(test_nothing_converts_to_value_default)
{
    static const wf_type *const value_types[] = {
        &wf_type_int32, &wf_type_int64,    &wf_type_double,  &wf_type_decimal,
        &wf_type_bool,  &wf_type_timespan, &wf_type_datetime};
    for (size_t i = 0; i < sizeof value_types / sizeof value_types[0]; i++) {
        wfm_expr *e = compile_as("[Nothing]", value_types[i], 0);
        ck_assert_ptr_eq(wfm_expr_type(e), value_types[i]);
        wf_value out, exc;
        ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &out, &exc), WF_OK);
        ck_assert_ptr_eq(out.type, value_types[i]);
        wf_value want = wf_type_default(value_types[i]);
        ck_assert(wf_value_equal(&out, &want));
    }
    wfm_expr *e = compile_as("[Nothing]", &wf_type_string, 0);
    wf_value out, exc;
    ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &out, &exc), WF_OK);
    ck_assert(wf_is_null(&out));
    CHECK_I32("[CType(Nothing, Integer) + 1]", 1);
    CHECK_I32("[CInt(Nothing)]", 0);
    CHECK_DEC("[CDec(Nothing)]", "0");
    CHECK_BOOL("[DirectCast(Nothing, Boolean)]", false);
}
END_TEST

/* CompensationToken is a class in WF4: it compares with Nothing (a converted Compensate runs
 * only while its target's token is set, docs/convert.md). */
START_TEST(test_compensation_token_compares_with_nothing)
{
    CHECK_BOOL("[tok IsNot Nothing]", false);
    CHECK_BOOL("[tok Is Nothing]", true);
    inner_slots[IN_TOKEN] = (wf_value){&wf_type_token, {.i64 = 1}};
    CHECK_BOOL("[tok IsNot Nothing]", true);
    CHECK_BOOL("[tok <> Nothing]", true);
}
END_TEST

/* Real literals with an exponent, for every suffix. Decimal ones are exact (the point moves
 * in the text, never through a double) and keep the places written, as .NET parses. */
START_TEST(test_exponent_literals)
{
    CHECK_DBL("[1e3]", 1000.0);
    CHECK_DBL("[1.5E-2]", 0.015);
    CHECK_DBL("[2e+4d]", 20000.0);
    CHECK_DBL("[2E4R]", 20000.0);
    CHECK_DBL("[1e3f]", 1000.0); /* no Single: F is Double, as for 1.5F */
    CHECK_DBL("[1.5E2F]", 150.0);
    CHECK_DBL("[.5e1]", 5.0);
    CHECK_DBL("[1e-400]", 0.0); /* underflow is zero, as in C# */
    CHECK_DBL("[-1.5e2 + 1]", -149.0);
    CHECK_DEC("[1e3m]", "1000");
    CHECK_DEC("[1.5E-2M]", "0.015");
    CHECK_DEC("[1E3D]", "1000"); /* VB's Decimal suffix */
    CHECK_DEC("[1.50e1m]", "15.0");
    CHECK_DEC("[0.001e2m]", "0.1");
    CHECK_DEC("[12.5e0m]", "12.5");
    CHECK_DEC("[1.1e-1m]", "0.11");
    CHECK_DEC("[-2.5e+2m]", "-250");
    CHECK_DEC("[0e5m]", "0");
    CHECK_DEC("[0.00e1m]", "0.0");
    CHECK_DEC("[1e3m + 1]", "1001");
    CHECK_DEC("[123456789012345678901234567.8e1m]", "1234567890123456789012345678");
    CHECK_DEC("[7.9228162514264337593543950335e28m]", "79228162514264337593543950335");
    CHECK_DEC("[1e-28m]", "0.0000000000000000000000000001");
    CHECK_DEC("[1.5e-28m]", "0.0000000000000000000000000002"); /* half to even */
    CHECK_DEC("[2.5e-28m]", "0.0000000000000000000000000002");
    CHECK_BOOL("[1e-29m == 0m]", true);
    CHECK_BOOL("[1e-100000000000m == 0m]", true);
    CHECK_BOOL("[1.5E-2M == 0.015m]", true);
}
END_TEST

static void check_list(const char *text, const char *type_name, const char *json)
{
    wf_value v = eval_text(text);
    ck_assert_msg(v.type->kind == WF_K_LIST, "%s: %s", text, v.type->name);
    ck_assert_str_eq(v.type->name, type_name);
    wf_buf buf;
    wf_buf_init(&buf);
    ck_assert(wf_value_to_json(&v, &buf));
    wf_buf_addc(&buf, '\0');
    ck_assert_msg(strcmp(buf.data, json) == 0, "%s: %s", text, buf.data);
    wf_buf_fini(&buf);
    wf_value_release(&v);
}

START_TEST(test_compat_arrays)
{
    wfm_expr *e;
    check_list("[{\"a\", \"b\"}]", "List(String)", "[\"a\", \"b\"]");
    check_list("[{1, 2L, 3}]", "List(Int64)", "[1, 2, 3]");
    check_list("[{1, \"x\"}]", "List(Object)", "[1, \"x\"]");
    check_list("[{}]", "List(Object)", "[]");
    check_list("[{\"a\", Nothing}]", "List(String)", "[\"a\", null]");
    check_list("[new string[] {\"a\", name}]", "List(String)", "[\"a\", \"Widget\"]");
    check_list("[new[] {1.5, 2}]", "List(Double)", "[1.5, 2]");
    check_list("[New String() {\"x\"}]", "List(String)", "[\"x\"]");
    check_list("[new List<int>() {4, 5}]", "List(Int32)", "[4, 5]");
    check_list("[CType(names, String())]", "List(String)", "[\"alpha\", \"beta\"]");
    check_list("[(string[])names]", "List(String)", "[\"alpha\", \"beta\"]");
    check_list("[(int[])CType(list, Object)]", "List(Int32)", "[1, 2, 3]");
    check_list("[New List(Of String)({\"a\", \"b\"})]", "List(String)", "[\"a\", \"b\"]");
    check_list("[new List<int>(10)]", "List(Int32)", "[]");
    check_list("[New List(Of Object)({\"a\", 1.5})]", "List(Object)", "[\"a\", 1.5]");
    check_list("[New List(Of Int64)({1, 2})]", "List(Int64)", "[1, 2]");
    e = compile_as("[{}]", lt_str, 0);
    ck_assert_ptr_eq(wfm_expr_type(e), lt_str);
    const wf_type *lt_dbl = wf_types_list(types, &wf_type_double);
    e = compile_as("[{1, 2}]", lt_dbl, 0);
    ck_assert_ptr_eq(wfm_expr_type(e), lt_dbl);
    CHECK_STR("[String.Join(\"+\", If(flag, {1, 2}, {3}))]", "1+2");
    check_list("[new List<int>(CType(list, Object))]", "List(Int32)", "[1, 2, 3]");
    CHECK_I32("[{10, 20, 30}(1)]", 20);
    CHECK_I32("[new int[] {1, 2, 3}.Count]", 3);
    CHECK_BOOL("[{\"a\", \"b\"}.Contains(\"b\")]", true);
    CHECK_STR("[String.Join(\",\", {\"x\", \"y\"})]", "x,y");
    e = compile_as("[{\"p\", \"q\"}]", lt_str, 0);
    ck_assert_ptr_eq(wfm_expr_type(e), lt_str);
}
END_TEST

START_TEST(test_compat_dictionary)
{
    wf_value v = eval_text("[New Dictionary(Of String, Object)]");
    ck_assert_ptr_eq(v.type, &wf_type_record);
    ck_assert_uint_eq(wf_value_record_count(&v), 0);
    wf_value_release(&v);
    v = eval_text("[new Dictionary<string, object>()]");
    ck_assert_ptr_eq(v.type, &wf_type_record);
    wf_value_release(&v);
    v = eval_text("[New Dictionary(Of String, Object) From {{\"a\", 1}, {\"b\", name}}]");
    ck_assert_uint_eq(wf_value_record_count(&v), 2);
    ck_assert_int_eq(wf_value_record_get(&v, "a")->u.i32, 1);
    ck_assert_str_eq(wf_value_str(wf_value_record_get(&v, "b")), "Widget");
    wf_value_release(&v);
    CHECK_I32("[CInt(new Dictionary<string, int> { {\"k\", 5} }[\"k\"])]", 5);
    CHECK_I32("[CInt(New Dictionary(Of String, Integer) From {{\"k\", 6}}(\"k\"))]", 6);
    CHECK_BOOL("[New Dictionary(Of String, Object) From {{\"k\", 1}}.ContainsKey(\"k\")]", true);
    /* dictionary members: Count / Keys / Values on records, also through Object */
    CHECK_I32("[CInt(rec.Count)]", 3);
    check_list("[CType(rec.Keys, List(Of String))]", "List(String)",
               "[\"Customer\", \"Amount\", \"Qty\"]");
    check_list("[CType(rec.Values, List(Of Object))]", "List(Object)",
               "[\"Contoso\", \"9.95\", 3]");
    CHECK_BOOL("[CType(rec, Object).ContainsKey(\"Qty\")]", true);
    CHECK_BOOL("[CType(rec, Object).ContainsKey(\"Nope\")]", false);
    CHECK_I32("[CInt(CType(rec, Object).Count)]", 3);
    check_fault("[CType(count, Object).ContainsKey(\"a\")]", &wf_exc_invalid_cast);
    check_fault("[New Dictionary(Of String, Object) From {{\"a\", 1}, {\"a\", 2}}]",
                &wf_exc_argument);
    check_fault("[New Dictionary(Of String, Object) From {{nul, 1}}]", &wf_exc_argument_null);
}
END_TEST

START_TEST(test_compat_random)
{
    wfm_expr *e = compile("[new Random().Next(1, 7)]");
    ck_assert_ptr_eq(wfm_expr_type(e), &wf_type_int32);
    ck_assert(!wfm_expr_is_constant(e));
    bool seen[7] = {false};
    for (int i = 0; i < 400; i++) {
        wf_value v, exc;
        ck_assert_int_eq(wfm_expr_eval(e, &inner_env, &v, &exc), WF_OK);
        ck_assert(v.u.i32 >= 1 && v.u.i32 < 7);
        seen[v.u.i32] = true;
    }
    for (int i = 1; i < 7; i++) /* each of 6 values missing from 400 draws: p < 1e-30 */
        ck_assert_msg(seen[i], "Next(1, 7) never gave %d", i);
    const char *forms[] = {"[New System.Random().Next(count)]", "[new Random().Next()]",
                           "[New Random().Next(5, 5)]", "[new System.Random(42).Next(0, 10)]"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        wf_value v = eval_text(forms[i]);
        ck_assert_ptr_eq(v.type, &wf_type_int32);
        ck_assert(v.u.i32 >= 0);
    }
    CHECK_I32("[New Random().Next(5, 5)]", 5);
    CHECK_BOOL("[new Random(42).Next(0, 1000) = new Random(42).Next(0, 1000)]", true);
    wf_value v = eval_text("[new Random().NextDouble()]");
    ck_assert_ptr_eq(v.type, &wf_type_double);
    ck_assert(v.u.d >= 0 && v.u.d < 1);
    check_fault("[new Random().Next(7, 1)]", &wf_exc_argument_range);
    check_fault("[new Random().Next(-1)]", &wf_exc_argument_range);
}
END_TEST

START_TEST(test_compat_linq)
{
    CHECK_I32("[list.First()]", 1);
    CHECK_I32("[list.Last()]", 3);
    CHECK_BOOL("[list.Any()]", true);
    CHECK_I32("[list.Sum()]", 6);
    CHECK_DBL("[{1.5, 2.5}.Sum()]", 4.0);
    CHECK_STR("[names.First]", "alpha");
    CHECK_BOOL("[new List<int>().Any()]", false);
    CHECK_I32("[list.FirstOrDefault()]", 1);
    CHECK_I32("[list.LastOrDefault]", 3);
    CHECK_I32("[new List<int>().FirstOrDefault()]", 0);
    wf_value v = eval_text("[new List<string>().LastOrDefault()]");
    ck_assert(wf_is_null(&v));
    check_fault("[new List<int>().First()]", &wf_exc_invalid_operation);
    check_fault("[{2147483647, 1}.Sum()]", &wf_exc_overflow);
}
END_TEST

START_TEST(test_compat_lambdas)
{
    check_list("[names.Where(Function(x) x.Length > 4)]", "List(String)", "[\"alpha\"]");
    check_list("[names.Where(x => x.StartsWith(\"b\")).ToList()]", "List(String)", "[\"beta\"]");
    check_list("[list.Select(Function(n) n * count)]", "List(Int32)", "[7, 14, 21]");
    check_list("[list.Select((n) => \"#\" + n)]", "List(String)", "[\"#1\", \"#2\", \"#3\"]");
    CHECK_BOOL("[names.Any(Function(x As String) x = name.ToLower.Substring(0, 0) + \"beta\")]",
               true);
    CHECK_BOOL("[list.All(n => n > 0)]", true);
    CHECK_BOOL("[list.All(n => n > 1)]", false);
    CHECK_I32("[list.Count(n => n >= 2)]", 2);
    CHECK_I32("[list.First(n => n > outer_x / 50)]", 3);
    CHECK_I32("[list.FirstOrDefault(n => n > 5)]", 0);
    CHECK_STR("[names.FirstOrDefault(Function(s) s.EndsWith(\"ta\"))]", "beta");
    CHECK_I32("[list.Sum(n => n * 10)]", 60);
    CHECK_I32("[list.Where(n => n <> 2).Count()]", 2);
    CHECK_I32("[list.Where(n => list.Any(m => m = n + 1)).Sum()]", 3);
    CHECK_BOOL("[new List<int>().Any(n => n > 0)]", false);
    check_fault("[list.First(n => n > 5)]", &wf_exc_invalid_operation);
    check_fault("[list.Sum(n => 2147483647)]", &wf_exc_overflow);
    check_fault("[list.Count(n => 1 / (n - 2) > 0)]", &wf_exc_divide_by_zero);
    wfm_expr *e = compile("[list.Any(n => n = count)]");
    ck_assert(!wfm_expr_is_constant(e));
}
END_TEST

START_TEST(test_bad_compat)
{
    wf_error err = compile_error("[count.CompareTo(name)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 18, "cannot compare Int32 with String");
    err = compile_error("[list.CompareTo(list)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 17, "cannot compare");
    err = compile_error("[count.CompareTo]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 8, "'CompareTo' takes 1 argument");
    err = compile_error("[name.Substring]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 7, "'Substring' takes 1 to 2 arguments, not 0");
    err = compile_error("[IsNothing(nul, name)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "'IsNothing' takes 1 argument, not 2");
    err = compile_error("[vbCrLf()]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 8, "property");
    err = compile_error("[DateTime.MinValue()]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 19, "property");
    err = compile_error("[1.5L]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "invalid number");
    err = compile_error("[1.5UI]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "invalid number");
    err = compile_error("[count + 4294967296UI]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 10, "type suffix");
    err = compile_error("[2147483648I]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "type suffix");
    err = compile_error("[79228162514264337593543950336D]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "decimal");
    err = compile_error("[count; 1]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 7, "';'");
    err = compile_error("[count;;]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 7, "';'");
    err = compile_error("[;]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "';'");
    err = compile_error("[]", &wf_type_int32, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "']'");
    err = compile_error("[]", &wf_type_string, WFM_EXPR_LVALUE);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "']'");
    err = compile_error("[{1, 2]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 7, "']'");
    err = compile_error("[{1 2}]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 5, "'2'");
    err = compile_error("[{1, \"a\"}]", lt_int, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 6, "array item: cannot convert String to Int32");
    err = compile_error("[{\"a\"}]", &wf_type_int32, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "cannot convert List(String) to Int32");
    err = compile_error("[new string[] {\"a\", 1}]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 21, "Int32 to String");
    err = compile_error("[new[] 1]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 8, "'1'");
    err = compile_error("[new List<int>(names)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 16, "cannot convert List(String) to List(Int32)");
    err = compile_error("[new int[3]]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 6, "cannot create a Int32");
    err = compile_error("[New Dictionary(Of Integer, Object)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 20, "keys must be String");
    err = compile_error("[New Dictionary(Of String)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 26, "')'");
    err = compile_error("[new Dictionary<string, object> { {\"a\" 1} }]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 40, "'1'");
    err = compile_error("[New Dictionary(Of String, Object) From {{1, 2}}]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 43, "dictionary key");
    err = compile_error("[new Random()]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 14, "Next");
    err = compile_error("[new Random().Foo()]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 15, "'Foo'");
    err = compile_error("[new Random().Next(1, 2, 3)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 15, "'Next' takes 0 to 2 arguments");
    err = compile_error("[new Random().Next(\"a\")]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 20, "argument 1 of 'Next'");
    err = compile_error("[names.Sum()]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 8, "'Sum' needs a list of numbers");
    err = compile_error("[list.Where(x => x.Foo)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 20, "'Int32' has no member 'Foo'");
    err = compile_error("[list.Where(x => x + 1)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 18, "lambda: cannot convert Int32 to Boolean");
    err = compile_error("[names.Sum(x => x)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 17, "'Sum' must give a number");
    err = compile_error("[list.IndexOf(x => x > 1)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 7, "'IndexOf' does not take a lambda");
    err = compile_error("[list.Any(Function(x) x > y)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 27, "unknown name 'y'");
    err = compile_error("[list.Any(x => x > 1]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 21, "']'");
    err = compile_error("[x => 1]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 2, "unknown name 'x'");
}
END_TEST

/* ---- end to end: a designer file assigning default(T), Nothing and exponent literals to
 * typed arguments and variables, compiled by the loader against each target's type ------- */
/* The inline XAML below is laid out by hand. */
/* clang-format off */
#define E2E_ASSIGN(t, to, value) \
    "<Assign x:TypeArguments=\"" t "\" To=\"[" to "]\" Value=\"[" value "]\"/>"

static const char e2e_xaml[] =
    "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
    "xmlns:s=\"clr-namespace:System;assembly=mscorlib\" "
    "xmlns:scg=\"clr-namespace:System.Collections.Generic;assembly=mscorlib\">"
    "<x:Members>"
    "<x:Property Name=\"I\" Type=\"OutArgument(x:Int32)\"/>"
    "<x:Property Name=\"N\" Type=\"OutArgument(x:Int32)\"/>"
    "<x:Property Name=\"D\" Type=\"OutArgument(x:Decimal)\"/>"
    "<x:Property Name=\"R\" Type=\"OutArgument(x:Double)\"/>"
    "<x:Property Name=\"When\" Type=\"OutArgument(s:DateTime)\"/>"
    "<x:Property Name=\"Span\" Type=\"OutArgument(s:TimeSpan)\"/>"
    "<x:Property Name=\"S\" Type=\"OutArgument(x:String)\"/>"
    "<x:Property Name=\"L\" Type=\"OutArgument(scg:List(x:Int32))\"/>"
    "</x:Members>"
    "<Sequence>"
    "<Sequence.Variables>"
    "<Variable x:TypeArguments=\"x:Decimal\" Name=\"rate\" Default=\"[1.5E-2M]\"/>"
    "<Variable x:TypeArguments=\"x:Int64\" Name=\"big\">"
    "<Variable.Default><CSharpValue x:TypeArguments=\"x:Int64\">default(long) + 1</CSharpValue>"
    "</Variable.Default></Variable>"
    "</Sequence.Variables>"
    E2E_ASSIGN("x:Int32", "I", "default(Int32) + 1")
    E2E_ASSIGN("x:Int32", "N", "Nothing")
    E2E_ASSIGN("x:Decimal", "D", "rate * 1e3m + default(Decimal)")
    E2E_ASSIGN("x:Double", "R", "2e+4d + 1.5E-2")
    E2E_ASSIGN("s:DateTime", "When", "default(DateTime)")
    E2E_ASSIGN("s:TimeSpan", "Span", "default(s:TimeSpan)")
    E2E_ASSIGN("x:String", "S", "default(String)")
    E2E_ASSIGN("scg:List(x:Int32)", "L", "default(List(Of Int32))")
    "<WriteLine Text=\"[rate.ToString() + &quot; &quot; + big.ToString()]\"/>"
    "</Sequence>"
    "</Activity>";

START_TEST(test_xaml_assigns_defaults_and_exponents)
{
    wfm_test_run r;
    wfm_test_open_mem(&r, "expr.xaml", e2e_xaml);
    ck_assert_int_eq(wfm_test_go(&r), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(r.out.data, "0.015 1\n");
    const wf_value *v = wfm_instance_output(r.inst, "I");
    ck_assert(v && v->type == &wf_type_int32 && v->u.i32 == 1);
    v = wfm_instance_output(r.inst, "N");
    ck_assert(v && v->type == &wf_type_int32 && v->u.i32 == 0);
    v = wfm_instance_output(r.inst, "D");
    ck_assert(v && v->type == &wf_type_decimal);
    char text[WF_DECIMAL_TEXT_MAX];
    wf_decimal_format(v->u.dec, text, sizeof text);
    ck_assert_str_eq(text, "15.000");
    v = wfm_instance_output(r.inst, "R");
    ck_assert(v && v->type == &wf_type_double);
    ck_assert_double_eq_tol(v->u.d, 20000.015, 1e-9);
    v = wfm_instance_output(r.inst, "When");
    ck_assert(v && v->type == &wf_type_datetime && v->u.i64 == WF_DATETIME_MIN_US);
    v = wfm_instance_output(r.inst, "Span");
    ck_assert(v && v->type == &wf_type_timespan && v->u.i64 == 0);
    v = wfm_instance_output(r.inst, "S");
    ck_assert(v && wf_is_null(v));
    v = wfm_instance_output(r.inst, "L");
    ck_assert(v && wf_is_null(v));
    wfm_test_close(&r);
}
END_TEST

/* clang-format on */
/* A bad default(T) or literal in a designer file is a load error at its file:line:col. */
START_TEST(test_xaml_bad_literal_is_located_load_error)
{
    wfm_test_run r;
    wfm_test_runtime(&r);
    static const char xaml[] =
        "<Activity x:Class=\"T\" "
        "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\"\n"
        " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"
        "<x:Members><x:Property Name=\"D\" Type=\"OutArgument(x:Decimal)\"/></x:Members>\n"
        "<Sequence>\n"
        "  <Assign x:TypeArguments=\"x:Decimal\" To=\"[D]\" Value=\"[D + 1e29m]\"/>\n"
        "</Sequence>\n"
        "</Activity>\n";
    wf_error err = WF_ERROR_INIT;
    wfm_definition *def = (wfm_definition *)&err; /* must come back NULL */
    ck_assert_int_eq(wfm_runtime_load_mem(r.rt, "bad.xaml", xaml, strlen(xaml), &def, NULL, &err),
                     WF_E_SYNTAX);
    ck_assert_ptr_null(def);
    ck_assert_str_eq(err.file, "bad.xaml");
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 5, 60, "outside the range of type 'decimal'");
    wfm_test_close(&r);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------ */
START_TEST(test_bad_default)
{
    wf_error err = compile_error("[default()]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 10, "type name");
    err = compile_error("[default(NoSuchType)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 10, "'NoSuchType'");
    err = compile_error("[count + default(Int32]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 23, "']'");
    err = compile_error("default(Int32", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 14, "end of expression");
    err = compile_error("[count + default]", &wf_type_int32, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 10, "default(T)");
    err = compile_error("[default(Boolean) + 1]", NULL, 0); /* typed Boolean, so no '+' */
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 19, "Boolean");
    err = compile_error("[default(String)]", &wf_type_int32, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "cannot convert String to Int32");
    err = compile_error("[null]", &wf_type_int32, 0); /* C#'s null is no Int32 */
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "Int32");
}
END_TEST

START_TEST(test_bad_exponents)
{
    wf_error err = compile_error("[1e]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "exponent");
    err = compile_error("[count + 1e+]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 10, "exponent");
    err = compile_error("[2.5E-m]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "exponent");
    err = compile_error("[1e3x]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "invalid number");
    err = compile_error("[1e3L]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "invalid number");
    err = compile_error("[1e400]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "outside the range of type 'double'");
    err = compile_error("[ratio * -1.8e308d]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 11, "outside the range of type 'double'");
    err = compile_error("[total +\n 1e29m]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 13, 2, "outside the range of type 'decimal'");
    err = compile_error("[8e28M]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "outside the range of type 'decimal'");
    err = compile_error("[1e100000000000m]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "outside the range of type 'decimal'");
    err = compile_error("[1e3m * 1e3]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 7, "Decimal");
}
END_TEST

START_TEST(test_bad_unknown_name)
{
    wf_error err = compile_error("[total + taxx]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 10, "taxx");
    err = compile_error("[Foo.Bar]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 2, "'Foo'");
}
END_TEST

START_TEST(test_bad_empty)
{
    wf_error err = compile_error("[]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "']'");
    err = compile_error("[   ]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 5, "']'");
    err = compile_error("", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 1, "end of expression");
}
END_TEST

START_TEST(test_bad_tokens)
{
    wf_error err = compile_error("[count + )]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 10, "unexpected ')'");
    err = compile_error("[count count]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 8, "'count'");
    err = compile_error("[count # 2]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 8, "'#'");
    err = compile_error("count +", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 8, "end of expression");
    err = compile_error("[(count + 1]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 12, "']'");
    err = compile_error("[count + 1", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 11, "]");
    err = compile_error("[flag ? 1]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 10, "']'");
    err = compile_error("[count And]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 11, "']'");
}
END_TEST

START_TEST(test_bad_literals)
{
    wf_error err = compile_error("[\"abc]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "unterminated");
    err = compile_error("[name + \"a\\qb\"]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 11, "escape");
    err = compile_error("[99999999999999999999]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "too large");
    err = compile_error("[79228162514264337593543950336m]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "outside the range of type 'decimal'");
    err = compile_error("[12abc]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "number");
}
END_TEST

START_TEST(test_bad_interpolation)
{
    wf_error err = compile_error("[$\"{taxx}\"]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 5, "taxx");
    err = compile_error("[$\"{}\"]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 5, "end of expression");
    err = compile_error("[$\"a}\"]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 5, "'}'");
    err = compile_error("[$\"{count\"]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 4, "unterminated");
    err = compile_error("[$\"abc]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 2, "unterminated string");
    err = compile_error("[$\"{count #}\"]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 11, "'#'");
    err = compile_error("[$\"{count + }\"]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 13, "end of expression");
}
END_TEST

START_TEST(test_bad_types)
{
    wf_error err = compile_error("[count + true]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 8, "'+'");
    err = compile_error("[name < \"b\"]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 7, "'<'");
    err = compile_error("[total + ratio]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 8, "Decimal and Double");
    err = compile_error("[count ? 1 : 2]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "Boolean");
    err = compile_error("[count && flag]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 8, "'&&'");
    err = compile_error("[!count]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "'!'");
    err = compile_error("[name == count]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 7, "String and Int32");
    err = compile_error("[flag ? name : count]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 7, "String and Int32");
    err = compile_error("[name]", &wf_type_int32, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "cannot convert String to Int32");
    err = compile_error("[(int)name]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "cannot convert String to Int32");
    err = compile_error("[count ?? 1]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 8, "'?\?'"); /* "\?" avoids a trigraph */
    err = compile_error("[CType(name, Foo)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 14, "Foo");
    err = compile_error("[7.5 \\ 2]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 6, "'\\'");
    err = compile_error("[name ^ 2]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 7, "'^'");
    err = compile_error("[Int32.Parse(5)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 14, "Parse");
    err = compile_error("[new DateTime(2024, 1)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 6, "DateTime");
    err = compile_error("[when + when]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 7, "DateTime and DateTime");
    err = compile_error("[new List<int>{1, \"a\"}]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 19, "String to Int32");
}
END_TEST

START_TEST(test_bad_members_and_calls)
{
    wf_error err = compile_error("[name.Foo]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 7, "Foo");
    err = compile_error("[foo(1)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 2, "foo");
    err = compile_error("[name.Substring()]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 7, "Substring");
    err = compile_error("[name.Substring(\"a\")]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 17, "argument 1");
    err = compile_error("[Convert.ToInt32(1, 2)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 10, "'ToInt32' takes 1 argument");
    err = compile_error("[Convert.Int32(1)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 10, "'Convert' has no member 'Int32'");
    err = compile_error("[TypeOf ex Is Foo]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 15, "Foo");
    err = compile_error("[TypeOf ex = 1]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 12, "'='");
    err = compile_error("[Math.Cube(2)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 7, "Cube");
    err = compile_error("[Math.Abs(name)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 11, "numeric");
    err = compile_error("[name(0)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 12, 6, "'('");
    err = compile_error("[count[0]]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 7, "index");
    err = compile_error("[new FooException(\"x\")]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 12, 6, "FooException");
    err = compile_error("[new Int32(\"x\")]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 6, "Int32");
}
END_TEST

START_TEST(test_bad_multiline)
{
    wf_error err = compile_error("[count +\n  taxx]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_NAME, 13, 3, "taxx");
    err = compile_error("[String.Format(\"{0}\",\n    name,\n    count +)]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_SYNTAX, 14, 12, "')'");
}
END_TEST

START_TEST(test_bad_lvalue)
{
    wf_error err = compile_error("[count + 1]", NULL, WFM_EXPR_LVALUE);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "not assignable");
    err = compile_error("[ro]", NULL, WFM_EXPR_LVALUE);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "'ro' is not assignable");
    err = compile_error("[name.Length]", NULL, WFM_EXPR_LVALUE);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "not assignable");
    err = compile_error("[5]", NULL, WFM_EXPR_LVALUE);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "not assignable");
    err = compile_error("[count]", &wf_type_string, WFM_EXPR_LVALUE);
    WF_ASSERT_ERROR(err, WF_E_TYPE, 12, 2, "cannot assign String to Int32");
}
END_TEST

/* ---- limits --------------------------------------------------------------------------- */
static char *repeat_text(const char *head, const char *unit, size_t times, const char *tail)
{
    size_t n = strlen(head) + strlen(unit) * times + strlen(tail) + 1;
    char *s = malloc(n);
    ck_assert_ptr_nonnull(s);
    strcpy(s, head);
    char *p = s + strlen(head);
    for (size_t i = 0; i < times; i++, p += strlen(unit))
        memcpy(p, unit, strlen(unit));
    strcpy(p, tail);
    return s;
}

START_TEST(test_limit_nested_parens)
{
    char *text = malloc(20002 + 8);
    ck_assert_ptr_nonnull(text);
    memset(text, '(', 10000);
    text[10000] = '1';
    memset(text + 10001, ')', 10000);
    text[20001] = '\0';
    wf_error err = compile_error(text, NULL, 0);
    ck_assert_int_eq(err.code, WF_E_LIMIT);
    ck_assert_uint_eq(err.line, 12);
    ck_assert_ptr_nonnull(strstr(err.message, "nested"));
    free(text);
    text = repeat_text("[", "(", 200, "1");
    char *full = repeat_text(text, ")", 200, "]");
    CHECK_I32(full, 1);
    free(text);
    free(full);
}
END_TEST

START_TEST(test_limit_nested_lambdas)
{
    CHECK_I32("[list.Count(a => list.Any(b => list.All(c => c > 0)))]", 3);
    wf_error err = compile_error(
        "[list.Count(a => list.Any(b => list.All(c => list.Any(d => true))))]", NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 12, 51, "nested too deeply");
}
END_TEST

START_TEST(test_limit_long_chains)
{
    char *text = repeat_text("[", "-", 10000, "count]");
    wf_error err = compile_error(text, NULL, 0);
    ck_assert_int_eq(err.code, WF_E_LIMIT);
    free(text);
    text = repeat_text("[count", " + count", 5000, "]");
    err = compile_error(text, NULL, 0);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 12, 8 * 512, "complex"); /* the 512th '+' */
    free(text);
    text = repeat_text("[0", " + 1", 5000, "]"); /* folds as it goes: no depth */
    CHECK_I32(text, 5000);
    free(text);
    text = repeat_text("[\"\"", " + \"ab\"", 5000, "]"); /* folds up to a bound, then LIMIT */
    err = compile_error(text, NULL, 0);
    ck_assert_int_eq(err.code, WF_E_LIMIT);
    ck_assert_uint_lt(wf_arena_bytes(arena), 4u << 20);
    free(text);
    text = repeat_text("[String.Concat(", "name, ", 20, "name)]");
    err = compile_error(text, NULL, 0);
    ck_assert_int_eq(err.code, WF_E_LIMIT);
    free(text);
}
END_TEST

/* ---- nomem ---------------------------------------------------------------------------- */
static const char *const nomem_texts[] = {
    ("[String.Format(\"{0}: {1:N2}\", name.ToUpper(), total * count) + \" \" + (flag ? "
     "rec.Customer : \"-\")]"),
    "[new List<int>{1, count, list[0]}.Contains(7) && names[0].StartsWith(\"al\")]",
    "[new InvalidOperationException(\"x\" + 1 + 2).Message + str(when) + CStr(span)]",
    "[(default(List(Of String)) ?? names).Count + default(int) + CInt(1.5E-2M * 1e3m)]",
};

typedef struct nomem_case {
    const char *text;
    bool evaluate;
} nomem_case;

static wf_status compile_fresh(void *ud)
{
    const nomem_case *c = ud;
    wf_arena *a = wf_arena_create(0);
    if (!a)
        return WF_E_NOMEM;
    wf_error err = WF_ERROR_INIT;
    wfm_expr *e = NULL;
    wf_status st = wfm_expr_compile(a, &scope, c->text, AT, NULL, 0, &e, &err);
    if (st == WF_E_NOMEM) {
        ck_assert_ptr_null(e);
        ck_assert_int_eq(err.code, WF_E_NOMEM);
    }
    if (st == WF_OK && c->evaluate) {
        wf_value v, exc;
        st = wfm_expr_eval(e, &inner_env, &v, &exc);
        if (st == WF_E_NOMEM)
            ck_assert(wf_is_null(&v) && wf_is_null(&exc));
        wf_value_release(&v);
        wf_value_release(&exc);
    }
    wf_arena_destroy(a);
    return st;
}

START_TEST(test_nomem_compile)
{
    for (size_t i = 0; i < sizeof nomem_texts / sizeof nomem_texts[0]; i++) {
        nomem_case c = {nomem_texts[i], false};
        ck_assert_uint_gt(wf_test_nomem_loop(compile_fresh, &c, 1000), 0);
        c.evaluate = true;
        ck_assert_int_eq(compile_fresh(&c), WF_OK);
        wf_test_nomem_loop(compile_fresh, &c, 1000);
    }
}
END_TEST

START_TEST(test_nomem_eval)
{
    wfm_expr *e = compile("[name + count + rec.Customer.ToString().ToLower() + list.Count]");
    for (unsigned n = 1; n < 100; n++) {
        wf_value v, exc;
        wf_alloc_fail_after(n);
        wf_status st = wfm_expr_eval(e, &inner_env, &v, &exc);
        wf_alloc_fail_after(0);
        if (st == WF_OK) {
            ck_assert_str_eq(wf_value_str(&v), "Widget7contoso3");
            wf_value_release(&v);
            return;
        }
        ck_assert_int_eq(st, WF_E_NOMEM);
        ck_assert(wf_is_null(&v));
    }
    ck_abort_msg("evaluation never succeeded");
}
END_TEST

START_TEST(test_nomem_eval_compat)
{
    static const char *const texts[] = {
        "[CStr(New Dictionary(Of String, Object) From {{\"a\", name}, {\"b\", 1}}.Count)]",
        "[String.Join(\",\", names.Where(x => x.Length > 0).Select(x => x.ToUpper()))]",
        "[String.Join(\",\", CType(rec.Keys, List(Of String)))]",
        "[String.Join(\",\", {name, \"b\"})]",
    };
    static const char *const want[] = {"2", "ALPHA,BETA", "Customer,Amount,Qty", "Widget,b"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        wfm_expr *e = compile(texts[i]);
        bool ok = false;
        for (unsigned n = 1; n < 200 && !ok; n++) {
            wf_value v, exc;
            wf_alloc_fail_after(n);
            wf_status st = wfm_expr_eval(e, &inner_env, &v, &exc);
            wf_alloc_fail_after(0);
            if (st == WF_OK) {
                ck_assert_ptr_eq(v.type, &wf_type_string);
                ck_assert_str_eq(wf_value_str(&v), want[i]);
                wf_value_release(&v);
                ok = true;
                continue;
            }
            ck_assert_msg(st == WF_E_NOMEM, "%s: status %d", texts[i], (int)st);
            ck_assert(wf_is_null(&v));
        }
        ck_assert_msg(ok, "%s: evaluation never succeeded", texts[i]);
    }
}
END_TEST

Suite *modern_expr_suite(void)
{
    Suite *s = suite_create("modern_expr");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_literals);
    tcase_add_test(tc, test_precedence);
    tcase_add_test(tc, test_wf3_rule_semantics);
    tcase_add_test(tc, test_interpolated_strings);
    tcase_add_test(tc, test_names_and_hops);
    tcase_add_test(tc, test_numeric_typing);
    tcase_add_test(tc, test_decimal_semantics);
    tcase_add_test(tc, test_strings_and_equality);
    tcase_add_test(tc, test_vb_spellings);
    tcase_add_test(tc, test_methods);
    tcase_add_test(tc, test_static_library);
    tcase_add_test(tc, test_records_and_lists);
    tcase_add_test(tc, test_casts_and_time);
    tcase_add_test(tc, test_new_exception);
    tcase_add_test(tc, test_store);
    tcase_add_test(tc, test_runtime_exceptions);
    tcase_add_test(tc, test_constant_folding);
    tcase_add_test(tc, test_expected_type);
    tcase_add_test(tc, test_concurrent_eval);
    tcase_add_test(tc, test_compat_constants);
    tcase_add_test(tc, test_compat_compare_to);
    tcase_add_test(tc, test_compat_parenless_calls);
    tcase_add_test(tc, test_compat_literal_suffixes);
    tcase_add_test(tc, test_compat_arrays);
    tcase_add_test(tc, test_compat_dictionary);
    tcase_add_test(tc, test_compat_random);
    tcase_add_test(tc, test_compat_linq);
    tcase_add_test(tc, test_compat_lambdas);
    tcase_add_test(tc, test_default_of_each_type);
    tcase_add_test(tc, test_nothing_converts_to_value_default);
    tcase_add_test(tc, test_compensation_token_compares_with_nothing);
    tcase_add_test(tc, test_exponent_literals);
    tcase_add_test(tc, test_quick_forms_match_tree);
    tcase_add_test(tc, test_xaml_assigns_defaults_and_exponents);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_bad_unknown_name);
    tcase_add_test(tc, test_bad_empty);
    tcase_add_test(tc, test_bad_tokens);
    tcase_add_test(tc, test_bad_literals);
    tcase_add_test(tc, test_bad_interpolation);
    tcase_add_test(tc, test_bad_types);
    tcase_add_test(tc, test_bad_members_and_calls);
    tcase_add_test(tc, test_bad_multiline);
    tcase_add_test(tc, test_bad_lvalue);
    tcase_add_test(tc, test_bad_compat);
    tcase_add_test(tc, test_bad_default);
    tcase_add_test(tc, test_bad_exponents);
    tcase_add_test(tc, test_xaml_bad_literal_is_located_load_error);
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_limit_nested_parens);
    tcase_add_test(tc, test_limit_long_chains);
    tcase_add_test(tc, test_limit_nested_lambdas);
    suite_add_tcase(s, tc);

    tc = tcase_create("nomem");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_nomem_compile);
    tcase_add_test(tc, test_nomem_eval);
    tcase_add_test(tc, test_nomem_eval_compat);
    suite_add_tcase(s, tc);
    return s;
}

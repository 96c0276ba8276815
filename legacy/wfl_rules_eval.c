/* wfl_rules_eval.c — evaluates compiled rule expressions against a wfl_rules_target and
 * executes rule sets as WF3's PolicyActivity does (docs/semantics.md §2, RS Executor.cs).
 * Run-time failures are exception values (WF_E_FAULT), never crashes; integer arithmetic
 * wraps (unchecked, as WF3's does), Decimal overflow is OverflowException, integer and decimal
 * division by zero is DivideByZeroException. */
#include "wfl_rules_int.h"

#include "../common/wf_calendar.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define MAX_STEPS 64 /* members and indexers in one this-path */
#define MAX_ARGS  16

typedef struct ev {
    const wfl_rules_target *t;
    wf_value *exc; /* OUT on WF_E_FAULT */
    wf_error *err;
    const wfl_rules_excs *x; /* the rules engine's exception types */
    const wfl_rules *owner;  /* NULL for a bare expression */
} ev;

/* For rules loaded without a wf_types: the built-in types (common/wf_value.h). */
static const wfl_rules_excs fallback_excs = {&wf_exc_rule, &wf_exc_rule_evaluation,
                                             &wf_exc_target_invocation};

static const wfl_rules_excs *excs_of(const wfl_rules *owner)
{
    return owner && owner->excs.rule_eval ? &owner->excs : &fallback_excs;
}

static void mark_missed_lookups(wfl_rexpr *e, const char *root_name)
{
    if (!e)
        return;
    if (e->kind == WFL_REX_THIS && e->name)
        e->lookup_missed = strcmp(e->name, root_name) != 0;
    for (size_t i = 0; i < e->kid_count; i++)
        mark_missed_lookups(e->kids[i], root_name);
}

void wfl__rules_set_root(wfl_rules *rules, const char *root_name)
{
    rules->root_name = root_name;
    for (size_t i = 0; root_name && i < rules->cond_count; i++)
        mark_missed_lookups(rules->conds[i].expr, root_name);
}

static wf_status eval(ev *c, const wfl_rexpr *e, wf_value *out);

/* ---- failures -------------------------------------------------------------------------- */

/* Raise `type` with .NET's exact `message` (side-by-side runs compare it); the detail goes
 * only into err. */
static wf_status fault(ev *c, const wf_type *type, const wfl_rexpr *at, const char *message,
                       const char *detail_fmt, ...) __attribute__((format(printf, 5, 6)));
static wf_status fault(ev *c, const wf_type *type, const wfl_rexpr *at, const char *message,
                       const char *detail_fmt, ...)
{
    char detail[300];
    va_list ap;
    va_start(ap, detail_fmt);
    vsnprintf(detail, sizeof detail, detail_fmt, ap);
    va_end(ap);
    wf_value_release(c->exc);
    if (wf_value_exception(type, message, c->exc) != WF_OK)
        return wf_error_set(c->err, WF_E_NOMEM, &at->loc, "out of memory");
    wf_error_set(c->err, WF_E_FAULT, &at->loc, "%s: %s%s%s%s", type->name, message,
                 *detail ? " (" : "", detail, *detail ? ")" : "");
    return WF_E_FAULT;
}

#define MSG_NULLREF  "Object reference not set to an instance of an object."
#define MSG_DIVZERO  "Attempted to divide by zero."
#define MSG_OVERFLOW "Arithmetic operation resulted in an overflow."
#define MSG_CAST     "Specified cast is not valid."

static wf_status fail(ev *c, wf_status code, const wfl_rexpr *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static wf_status fail(ev *c, wf_status code, const wfl_rexpr *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    wf_error_setv(c->err, code, &at->loc, fmt, ap);
    va_end(ap);
    return code;
}

/* A member, indexer or method applied to null: WF3's rule evaluator checks the target itself
 * and raises RuleEvaluationException (RS Expressions.cs, the Evaluate of
 * PropertyReferenceExpression, FieldReferenceExpression, MethodInvokeExpression and the
 * indexers), never NullReferenceException. */
static wf_status null_ref(ev *c, const wfl_rexpr *at, const char *what)
{
    char msg[200];
    snprintf(msg, sizeof msg, "The target of '%s' evaluated to null.", what);
    return fault(c, c->x->rule_eval, at, msg, "'%s' of null", what);
}

/* A fault raised inside a method a rule called: WF3 calls it by reflection and rethrows a
 * TargetInvocationException naming the method, the inner exception's message kept (RS
 * Expressions.cs, MethodInvokeExpression.Evaluate). */
static wf_status wrap_invocation(ev *c, const wfl_rexpr *at, const char *type, wf_status st)
{
    if (st != WF_E_FAULT || wf_is_null(c->exc))
        return st;
    char inner[256];
    snprintf(inner, sizeof inner, "%s", wf_value_exc_message(c->exc));
    char msg[400];
    snprintf(msg, sizeof msg, "Method %s.%s threw an exception: %s", type, at->name, inner);
    return fault(c, c->x->target_inv, at, msg, "%s", inner);
}

static wf_status nomem(ev *c, const wfl_rexpr *at)
{
    return wf_error_set(c->err, WF_E_NOMEM, &at->loc, "out of memory");
}

/* ---- values ---------------------------------------------------------------------------- */

static bool is_integer(const wf_value *v)
{
    return v->type->kind == WF_K_INT32 || v->type->kind == WF_K_INT64;
}

static bool is_number(const wf_value *v)
{
    return is_integer(v) || v->type->kind == WF_K_DOUBLE || v->type->kind == WF_K_DECIMAL;
}

static int64_t as_i64(const wf_value *v)
{
    return v->type->kind == WF_K_INT32 ? v->u.i32 : v->u.i64;
}

static double as_double(const wf_value *v)
{
    switch (v->type->kind) {
    case WF_K_INT32: return v->u.i32;
    case WF_K_DECIMAL: return wf_decimal_to_double(v->u.dec);
    case WF_K_DOUBLE: return v->u.d;
    default: return (double)v->u.i64;
    }
}

/* Value equality as the rules engine sees it: numbers by value across types, null == null. */
static bool values_equal(const wf_value *a, const wf_value *b)
{
    if (wf_is_null(a) || wf_is_null(b))
        return wf_is_null(a) && wf_is_null(b);
    if (is_number(a) && is_number(b)) {
        int cmp = 0;
        return wf_value_compare(a, b, &cmp, NULL) == WF_OK && cmp == 0;
    }
    return wf_value_equal(a, b);
}

static wf_status text_of(ev *c, const wfl_rexpr *at, const wf_value *v, wf_buf *out)
{
    if (!wf_is_null(v) && !wf_value_to_text(v, out))
        return nomem(c, at);
    return out->oom ? nomem(c, at) : WF_OK;
}

static wf_status make_string(ev *c, const wfl_rexpr *at, wf_buf *buf, wf_value *out)
{
    size_t len = 0;
    char *s = wf_buf_detach(buf, &len);
    if (!s || wf_value_string_take(s, len, out) != WF_OK)
        return nomem(c, at);
    return WF_OK;
}

/* ---- arithmetic ------------------------------------------------------------------------ */

static wf_status overflow(ev *c, const wfl_rexpr *at)
{
    return fault(c, &wf_exc_overflow, at, MSG_OVERFLOW, "%s", wfl_rop_name(at->op));
}

/* Integer arithmetic is unchecked, as compiled C# is by default: WF3's rule evaluator adds,
 * subtracts and multiplies Int32 and Int64 with the plain CLR operators, which wrap
 * (docs/wf3-behaviour.md). Division of MinValue by -1 still throws OverflowException, as the
 * CLR does even unchecked. */
static wf_status int_op(ev *c, const wfl_rexpr *at, int64_t a, int64_t b, bool wide,
                        wf_value *out)
{
    int64_t r = 0;
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (at->op) {
    case WFL_ROP_ADD: r = (int64_t)(ua + ub); break;
    case WFL_ROP_SUBTRACT: r = (int64_t)(ua - ub); break;
    case WFL_ROP_MULTIPLY: r = (int64_t)(ua * ub); break;
    case WFL_ROP_DIVIDE:
    case WFL_ROP_MODULUS:
        if (b == 0)
            return fault(c, &wf_exc_divide_by_zero, at, MSG_DIVZERO, "%s", wfl_rop_name(at->op));
        if (b == -1 && a == (wide ? INT64_MIN : INT32_MIN))
            return overflow(c, at);
        r = at->op == WFL_ROP_DIVIDE ? a / b : a % b;
        break;
    case WFL_ROP_BITWISE_AND: r = a & b; break;
    case WFL_ROP_BITWISE_OR: r = a | b; break;
    default: return fail(c, WF_E_TYPE, at, "bad integer operator");
    }
    *out = wide ? wf_int64(r) : wf_int32((int32_t)(uint32_t)(uint64_t)r);
    return WF_OK;
}

static wf_decimal to_dec(const wf_value *v)
{
    return v->type->kind == WF_K_DECIMAL ? v->u.dec : wf_decimal_from_int64(as_i64(v));
}

/* System.Decimal arithmetic (wf_decimal.h): checked, the scale of the calculation kept. */
static wf_status decimal_op(ev *c, const wfl_rexpr *at, const wf_value *l, const wf_value *r,
                            wf_value *out)
{
    wf_decimal a = to_dec(l), b = to_dec(r), res;
    wf_status st;
    switch (at->op) {
    case WFL_ROP_ADD: st = wf_decimal_add(a, b, &res); break;
    case WFL_ROP_SUBTRACT: st = wf_decimal_sub(a, b, &res); break;
    case WFL_ROP_MULTIPLY: st = wf_decimal_mul(a, b, &res); break;
    case WFL_ROP_DIVIDE:
    case WFL_ROP_MODULUS:
        if (wf_decimal_is_zero(b))
            return fault(c, &wf_exc_divide_by_zero, at, MSG_DIVZERO, "%s", wfl_rop_name(at->op));
        st = at->op == WFL_ROP_MODULUS ? wf_decimal_rem(a, b, &res) : wf_decimal_div(a, b, &res);
        break;
    default: return fail(c, WF_E_TYPE, at, "operator %s does not apply to Decimal",
                         wfl_rop_name(at->op));
    }
    if (st != WF_OK)
        return overflow(c, at);
    *out = wf_dec(res);
    return WF_OK;
}

static wf_status double_op(ev *c, const wfl_rexpr *at, double a, double b, wf_value *out)
{
    switch (at->op) {
    case WFL_ROP_ADD: *out = wf_double(a + b); return WF_OK;
    case WFL_ROP_SUBTRACT: *out = wf_double(a - b); return WF_OK;
    case WFL_ROP_MULTIPLY: *out = wf_double(a * b); return WF_OK;
    case WFL_ROP_DIVIDE: *out = wf_double(a / b); return WF_OK;
    case WFL_ROP_MODULUS: *out = wf_double(fmod(a, b)); return WF_OK;
    default: return fail(c, WF_E_TYPE, at, "operator %s does not apply to Double",
                         wfl_rop_name(at->op));
    }
}

static wf_status numeric_op(ev *c, const wfl_rexpr *at, const wf_value *l, const wf_value *r,
                            wf_value *out)
{
    wf_kind lk = l->type->kind, rk = r->type->kind;
    if (lk == WF_K_DOUBLE || rk == WF_K_DOUBLE)
        return double_op(c, at, as_double(l), as_double(r), out);
    if (lk == WF_K_DECIMAL || rk == WF_K_DECIMAL)
        return decimal_op(c, at, l, r, out);
    return int_op(c, at, as_i64(l), as_i64(r), lk == WF_K_INT64 || rk == WF_K_INT64, out);
}

static wf_status concat(ev *c, const wfl_rexpr *at, const wf_value *l, const wf_value *r,
                        wf_value *out)
{
    wf_buf buf;
    wf_buf_init(&buf);
    wf_status st = text_of(c, at, l, &buf);
    if (st == WF_OK)
        st = text_of(c, at, r, &buf);
    if (st == WF_OK)
        st = make_string(c, at, &buf, out);
    wf_buf_fini(&buf);
    return st;
}

/* DateTime +/- TimeSpan, DateTime - DateTime, TimeSpan +/- TimeSpan. */
static bool time_op(const wfl_rexpr *at, const wf_value *l, const wf_value *r, wf_value *out)
{
    wf_kind lk = l->type->kind, rk = r->type->kind;
    bool add = at->op == WFL_ROP_ADD, sub = at->op == WFL_ROP_SUBTRACT;
    if (!add && !sub)
        return false;
    int64_t sum = add ? l->u.i64 + r->u.i64 : l->u.i64 - r->u.i64;
    if (lk == WF_K_DATETIME && rk == WF_K_TIMESPAN)
        *out = wf_datetime_us(sum);
    else if (lk == WF_K_DATETIME && rk == WF_K_DATETIME && sub)
        *out = wf_timespan_us(sum);
    else if (lk == WF_K_TIMESPAN && rk == WF_K_TIMESPAN)
        *out = wf_timespan_us(sum);
    else
        return false;
    return true;
}

static wf_status compare_op(ev *c, const wfl_rexpr *at, const wf_value *l, const wf_value *r,
                            wf_value *out)
{
    if (wf_is_null(l) || wf_is_null(r)) { /* lifted comparison: false */
        *out = wf_bool(false);
        return WF_OK;
    }
    int cmp = 0; /* the message is not used: no 780-byte error to clear per comparison */
    if (wf_value_compare(l, r, &cmp, NULL) != WF_OK)
        return fail(c, WF_E_TYPE, at, "cannot compare %s with %s", l->type->name,
                    r->type->name);
    bool res = at->op == WFL_ROP_LESS_THAN               ? cmp < 0
               : at->op == WFL_ROP_LESS_THAN_OR_EQUAL    ? cmp <= 0
               : at->op == WFL_ROP_GREATER_THAN          ? cmp > 0
                                                         : cmp >= 0;
    *out = wf_bool(res);
    return WF_OK;
}

static wf_status binop(ev *c, const wfl_rexpr *at, const wf_value *l, const wf_value *r,
                       wf_value *out)
{
    switch (at->op) {
    case WFL_ROP_VALUE_EQUALITY:
    case WFL_ROP_IDENTITY_EQUALITY:
        *out = wf_bool(values_equal(l, r));
        return WF_OK;
    case WFL_ROP_IDENTITY_INEQUALITY:
        *out = wf_bool(!values_equal(l, r));
        return WF_OK;
    case WFL_ROP_LESS_THAN: case WFL_ROP_LESS_THAN_OR_EQUAL:
    case WFL_ROP_GREATER_THAN: case WFL_ROP_GREATER_THAN_OR_EQUAL:
        return compare_op(c, at, l, r, out);
    default:
        break;
    }
    if (at->op == WFL_ROP_ADD &&
        (l->type->kind == WF_K_STRING || r->type->kind == WF_K_STRING))
        return concat(c, at, l, r, out);
    if (wf_is_null(l) || wf_is_null(r)) { /* lifted arithmetic: null */
        *out = wf_null();
        return WF_OK;
    }
    bool bitwise = at->op == WFL_ROP_BITWISE_AND || at->op == WFL_ROP_BITWISE_OR;
    if (bitwise && l->type->kind == WF_K_BOOL && r->type->kind == WF_K_BOOL) {
        *out = wf_bool(at->op == WFL_ROP_BITWISE_AND ? l->u.b && r->u.b : l->u.b || r->u.b);
        return WF_OK;
    }
    if (bitwise && is_integer(l) && is_integer(r))
        return int_op(c, at, as_i64(l), as_i64(r),
                      l->type->kind == WF_K_INT64 || r->type->kind == WF_K_INT64, out);
    if (!bitwise && is_number(l) && is_number(r))
        return numeric_op(c, at, l, r, out);
    if (time_op(at, l, r, out))
        return WF_OK;
    return fail(c, WF_E_TYPE, at, "operator %s cannot be applied to %s and %s",
                wfl_rop_name(at->op), l->type->name, r->type->name);
}

static wf_status eval_bool(ev *c, const wfl_rexpr *e, bool *out)
{
    wf_value v = wf_null();
    wf_status st = eval(c, e, &v);
    if (st != WF_OK)
        return st;
    if (v.type->kind != WF_K_BOOL) {
        st = wf_is_null(&v) ? fault(c, &wf_exc_invalid_cast, e, MSG_CAST, "null as Boolean")
                            : fail(c, WF_E_TYPE, e, "expected a Boolean, got %s", v.type->name);
        wf_value_release(&v);
        return st;
    }
    *out = v.u.b;
    return WF_OK;
}

static bool is_this_member(const wfl_rexpr *e);

/* An operand of the Int32 quick form: a literal, or a plain this.Member the target peeks. */
static const wf_value *quick_operand(ev *c, const wfl_rexpr *e)
{
    if (e->kind == WFL_REX_PRIMITIVE)
        return &e->value;
    return c->t && c->t->peek && is_this_member(e) ? c->t->peek(c->t->ud, e->name) : NULL;
}

/* A comparison, + or - of two Int32 operands (a While's condition, a counter's step) computed
 * in place: what binop gives for two Int32 values (compare_op, values_equal, int_op's wrap).
 * False, nothing done, for anything else: the general path evaluates it. */
static bool quick_binary(ev *c, const wfl_rexpr *e, wf_value *out)
{
    if (e->op != WFL_ROP_LESS_THAN && e->op != WFL_ROP_LESS_THAN_OR_EQUAL &&
        e->op != WFL_ROP_GREATER_THAN && e->op != WFL_ROP_GREATER_THAN_OR_EQUAL &&
        e->op != WFL_ROP_VALUE_EQUALITY && e->op != WFL_ROP_ADD && e->op != WFL_ROP_SUBTRACT)
        return false;
    const wf_value *l = quick_operand(c, e->kids[0]);
    if (!l || l->type->kind != WF_K_INT32)
        return false;
    const wf_value *r = quick_operand(c, e->kids[1]);
    if (!r || r->type->kind != WF_K_INT32)
        return false;
    int32_t a = l->u.i32, b = r->u.i32;
    switch (e->op) {
    case WFL_ROP_LESS_THAN: *out = wf_bool(a < b); break;
    case WFL_ROP_LESS_THAN_OR_EQUAL: *out = wf_bool(a <= b); break;
    case WFL_ROP_GREATER_THAN: *out = wf_bool(a > b); break;
    case WFL_ROP_GREATER_THAN_OR_EQUAL: *out = wf_bool(a >= b); break;
    case WFL_ROP_VALUE_EQUALITY: *out = wf_bool(a == b); break;
    case WFL_ROP_ADD: *out = wf_int32((int32_t)((uint32_t)a + (uint32_t)b)); break;
    default: *out = wf_int32((int32_t)((uint32_t)a - (uint32_t)b)); break;
    }
    return true;
}

static wf_status eval_binary(ev *c, const wfl_rexpr *e, wf_value *out)
{
    if (quick_binary(c, e, out))
        return WF_OK;
    if (e->op == WFL_ROP_BOOLEAN_AND || e->op == WFL_ROP_BOOLEAN_OR) {
        bool l = false, r = false;
        wf_status st = eval_bool(c, e->kids[0], &l);
        if (st != WF_OK)
            return st;
        if (l == (e->op == WFL_ROP_BOOLEAN_OR)) { /* short circuit */
            *out = wf_bool(l);
            return WF_OK;
        }
        st = eval_bool(c, e->kids[1], &r);
        if (st == WF_OK)
            *out = wf_bool(r);
        return st;
    }
    wf_value l = wf_null(), r = wf_null();
    wf_status st = eval(c, e->kids[0], &l);
    if (st == WF_OK)
        st = eval(c, e->kids[1], &r);
    if (st == WF_OK)
        st = binop(c, e, &l, &r, out);
    wf_value_release(&l);
    wf_value_release(&r);
    return st;
}

/* ---- members and indexers on values ------------------------------------------------------ */

static size_t utf8_length(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static wf_status datetime_member(ev *c, const wfl_rexpr *at, int64_t us, const char *name,
                                 wf_value *out)
{
    int64_t secs = us / 1000000 - (us % 1000000 < 0);
    time_t t = (time_t)secs;
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        return fault(c, &wf_exc_argument_range, at, "DateTime out of range.", "%s", name);
    static const char *const names[] = {"Year", "Month", "Day", "Hour", "Minute", "Second"};
    int values[] = {tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                    tm.tm_sec};
    for (int i = 0; i < 6; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = wf_int32(values[i]);
            return WF_OK;
        }
    if (strcmp(name, "Date") == 0) {
        *out = wf_datetime_us(us - (us % 86400000000LL + 86400000000LL) % 86400000000LL);
        return WF_OK;
    }
    return fail(c, WF_E_NAME, at, "DateTime has no member '%s'", name);
}

static wf_status value_member(ev *c, const wfl_rexpr *at, const wf_value *v, const char *name,
                              wf_value *out)
{
    if (wf_is_null(v))
        return null_ref(c, at, name);
    switch (v->type->kind) {
    case WF_K_STRING:
        if (strcmp(name, "Length") == 0) {
            *out = wf_int32((int32_t)utf8_length(wf_value_str(v)));
            return WF_OK;
        }
        break;
    case WF_K_LIST:
        if (strcmp(name, "Count") == 0) {
            *out = wf_int32((int32_t)wf_value_list_count(v));
            return WF_OK;
        }
        break;
    case WF_K_RECORD: {
        const wf_value *f = wf_value_record_get(v, name);
        if (f) {
            *out = wf_value_retain(f);
            return WF_OK;
        }
        break;
    }
    case WF_K_EXCEPTION:
        if (strcmp(name, "Message") == 0)
            return wf_value_cstring(wf_value_exc_message(v), out) == WF_OK ? WF_OK
                                                                          : nomem(c, at);
        break;
    case WF_K_DATETIME:
        return datetime_member(c, at, v->u.i64, name, out);
    default:
        break;
    }
    return fail(c, WF_E_NAME, at, "%s has no member '%s'", v->type->name, name);
}

static wf_status value_index(ev *c, const wfl_rexpr *at, const wf_value *v, const wf_value *idx,
                             size_t count, wf_value *out)
{
    if (wf_is_null(v))
        return null_ref(c, at, "[]");
    if (count != 1)
        return fail(c, WF_E_TYPE, at, "%s takes one index", v->type->name);
    wf_kind k = v->type->kind;
    if ((k == WF_K_LIST || k == WF_K_STRING) && is_integer(idx)) {
        int64_t i = as_i64(idx);
        size_t n = k == WF_K_LIST ? wf_value_list_count(v) : wf_value_str_len(v);
        if (i < 0 || (uint64_t)i >= n)
            return fault(c, &wf_exc_index_range, at, "Index was outside the bounds of the array.",
                         "%lld of %zu", (long long)i, n);
        if (k == WF_K_LIST) {
            *out = wf_value_retain(wf_value_list_at(v, (size_t)i));
            return WF_OK;
        }
        return wf_value_string(wf_value_str(v) + i, 1, out) == WF_OK ? WF_OK : nomem(c, at);
    }
    if (k == WF_K_RECORD && idx->type->kind == WF_K_STRING) {
        const wf_value *f = wf_value_record_get(v, wf_value_str(idx));
        if (!f)
            return fault(c, &wf_exc_key_not_found, at,
                         "The given key was not present in the dictionary.", "'%s'",
                         wf_value_str(idx));
        *out = wf_value_retain(f);
        return WF_OK;
    }
    return fail(c, WF_E_TYPE, at, "cannot index %s with %s", v->type->name, idx->type->name);
}

/* ---- this-paths ------------------------------------------------------------------------ */

typedef struct thispath {
    const wfl_rexpr *steps[MAX_STEPS]; /* outward from `this` */
    size_t count;
    wf_value idx[MAX_STEPS]; /* evaluated indices, in step order */
    size_t idx_start[MAX_STEPS], idx_count[MAX_STEPS];
    size_t idx_used;
    wfl_rules_seg segs[MAX_STEPS];
} thispath;

static void thispath_fini(thispath *tp)
{
    for (size_t i = 0; i < tp->idx_used; i++)
        wf_value_release(&tp->idx[i]);
}

static wf_status thispath_init(ev *c, const wfl_rexpr *e, thispath *tp)
{
    tp->count = tp->idx_used = 0;
    const wfl_rexpr *chain[MAX_STEPS];
    size_t n = 0;
    for (const wfl_rexpr *x = e; x->kind != WFL_REX_THIS; x = x->kids[0]) {
        if (n == MAX_STEPS)
            return fail(c, WF_E_LIMIT, e, "member path is too deep");
        chain[n++] = x;
    }
    for (size_t i = 0; i < n; i++) {
        const wfl_rexpr *s = chain[n - 1 - i];
        tp->steps[i] = s;
        tp->idx_start[i] = tp->idx_used;
        tp->idx_count[i] = s->kind == WFL_REX_INDEX ? s->kid_count - 1 : 0;
        for (size_t k = 1; k <= tp->idx_count[i]; k++) {
            if (tp->idx_used == MAX_STEPS)
                return fail(c, WF_E_LIMIT, e, "too many indices in a member path");
            tp->idx[tp->idx_used] = wf_null();
            wf_status st = eval(c, s->kids[k], &tp->idx[tp->idx_used++]);
            if (st != WF_OK)
                return st;
        }
    }
    tp->count = n;
    return WF_OK;
}

/* Accessor segments for the first k steps; 0 when those steps cannot be expressed (an indexer
 * right after `this`, or two indexers in a row). */
static size_t thispath_segs(thispath *tp, size_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        const wfl_rexpr *s = tp->steps[i];
        if (s->kind == WFL_REX_MEMBER) {
            tp->segs[n].name = s->name;
            tp->segs[n].index = NULL;
            tp->segs[n++].index_count = 0;
        } else if (n && !tp->segs[n - 1].index && tp->steps[i - 1]->kind == WFL_REX_MEMBER) {
            tp->segs[n - 1].index = &tp->idx[tp->idx_start[i]];
            tp->segs[n - 1].index_count = tp->idx_count[i];
        } else {
            return 0;
        }
    }
    return n;
}

static wf_status apply_step(ev *c, thispath *tp, size_t i, const wf_value *v, wf_value *out)
{
    const wfl_rexpr *s = tp->steps[i];
    if (s->kind == WFL_REX_MEMBER)
        return value_member(c, s, v, s->name, out);
    return value_index(c, s, v, &tp->idx[tp->idx_start[i]], tp->idx_count[i], out);
}

/* Read via the accessor the longest prefix it knows, then walk the rest on the value. */
static wf_status read_this_path(ev *c, const wfl_rexpr *e, thispath *tp, wf_value *out)
{
    if (!c->t || !c->t->get)
        return fail(c, WF_E_STATE, e, "no target to read '%s' from", tp->steps[0]->name);
    for (size_t k = tp->count; k > 0; k--) {
        size_t nsegs = thispath_segs(tp, k);
        if (nsegs == 0)
            continue;
        wf_error local; /* per read: cleared, not zero-filled (780 bytes) */
        wf_error_clear(&local);
        wf_value v = wf_null();
        wf_status st = c->t->get(c->t->ud, tp->segs, nsegs, &v, c->exc, &local);
        if (st == WF_E_NAME)
            continue;
        if (st != WF_OK)
            return wf_error_set(c->err, st, &e->loc, "%s", local.message);
        for (size_t i = k; i < tp->count && st == WF_OK; i++) {
            wf_value next = wf_null();
            st = apply_step(c, tp, i, &v, &next);
            wf_value_release(&v);
            v = next;
        }
        if (st == WF_OK)
            *out = v;
        else
            wf_value_release(&v);
        return st;
    }
    return fail(c, WF_E_NAME, e, "'this' has no member '%s'",
                tp->count ? tp->steps[0]->name ? tp->steps[0]->name : "[]" : "?");
}

/* this.GetActivityByName("N") (a THIS node carrying N) names the root only when N is its
 * name exactly, blanks included; otherwise WF3's lookup returns null and the first member
 * applied to it is a null target. */
static wf_status lookup_missed(ev *c, const thispath *tp)
{
    const wfl_rexpr *self = tp->count ? tp->steps[0]->kids[0] : NULL;
    if (!self || !self->name || !c->owner || !c->owner->root_name ||
        strcmp(self->name, c->owner->root_name) == 0)
        return WF_OK;
    return null_ref(c, tp->steps[0], tp->steps[0]->name ? tp->steps[0]->name : "[]");
}

/* this.Member, the common path (a While's condition each iteration): one segment, nothing to
 * evaluate or walk, so no thispath; the same reads and messages as the general path. */
static bool is_this_member(const wfl_rexpr *e)
{
    return e->kind == WFL_REX_MEMBER && e->kid_count >= 1 && e->kids[0]->kind == WFL_REX_THIS &&
           !e->kids[0]->name;
}

static wf_status read_this_member(ev *c, const wfl_rexpr *e, wf_value *out)
{
    if (!c->t || !c->t->get)
        return fail(c, WF_E_STATE, e, "no target to read '%s' from", e->name);
    wfl_rules_seg seg = {e->name, NULL, 0};
    wf_error local; /* per read: cleared, not zero-filled (780 bytes) */
    wf_error_clear(&local);
    wf_value v = wf_null();
    wf_status st = c->t->get(c->t->ud, &seg, 1, &v, c->exc, &local);
    if (st == WF_E_NAME)
        return fail(c, WF_E_NAME, e, "'this' has no member '%s'", e->name);
    if (st != WF_OK)
        return wf_error_set(c->err, st, &e->loc, "%s", local.message);
    *out = v;
    return WF_OK;
}

static wf_status eval_this_path(ev *c, const wfl_rexpr *e, wf_value *out)
{
    if (is_this_member(e))
        return read_this_member(c, e, out);
    thispath tp;
    wf_status st = thispath_init(c, e, &tp);
    if (st == WF_OK)
        st = lookup_missed(c, &tp);
    if (st == WF_OK)
        st = read_this_path(c, e, &tp, out);
    thispath_fini(&tp);
    return st;
}

static wf_status assign_this_path(ev *c, const wfl_rexpr *target, const wf_value *value)
{
    if (is_this_member(target) && c->t && c->t->set) {
        wfl_rules_seg seg = {target->name, NULL, 0};
        wf_error local; /* per assignment: cleared, not zero-filled */
        wf_error_clear(&local);
        wf_status st = c->t->set(c->t->ud, &seg, 1, value, c->exc, &local);
        if (st != WF_OK)
            wf_error_set(c->err, st, &target->loc, "%s", local.message);
        return st;
    }
    thispath tp;
    wf_status st = thispath_init(c, target, &tp);
    if (st == WF_OK)
        st = lookup_missed(c, &tp);
    if (st == WF_OK) {
        size_t nsegs = thispath_segs(&tp, tp.count);
        wf_error local; /* per assignment: cleared, not zero-filled */
        wf_error_clear(&local);
        if (nsegs == 0)
            st = fail(c, WF_E_UNSUPPORTED, target, "cannot assign to this member path");
        else if (!c->t || !c->t->set)
            st = fail(c, WF_E_STATE, target, "no target to assign '%s'", tp.segs[0].name);
        else if ((st = c->t->set(c->t->ud, tp.segs, nsegs, value, c->exc, &local)) != WF_OK)
            wf_error_set(c->err, st, &target->loc, "%s", local.message);
    }
    thispath_fini(&tp);
    return st;
}

/* ---- static members ---------------------------------------------------------------------- */

static const char *short_type(const char *name)
{
    return strncmp(name, "System.", 7) == 0 ? name + 7 : name;
}

static int64_t now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static wf_status static_member(ev *c, const wfl_rexpr *e, wf_value *out)
{
    const wfl_rexpr *t = e->kids[0];
    char full[256];
    snprintf(full, sizeof full, "%s.%s", short_type(t->name), e->name);
    static const struct { const char *name; wf_value v; } consts[] = {
        {"DateTime.MinValue", {&wf_type_datetime, {.i64 = WF_DATETIME_MIN_US}}},
        {"DateTime.MaxValue", {&wf_type_datetime, {.i64 = WF_DATETIME_MAX_US}}},
        {"Int32.MaxValue", {&wf_type_int32, {.i32 = INT32_MAX}}},
        {"Int32.MinValue", {&wf_type_int32, {.i32 = INT32_MIN}}},
        {"Int64.MaxValue", {&wf_type_int64, {.i64 = INT64_MAX}}},
        {"Int64.MinValue", {&wf_type_int64, {.i64 = INT64_MIN}}},
        {"Decimal.Zero", {&wf_type_decimal, {.dec = {.lo = 0}}}},
        {"Math.PI", {&wf_type_double, {.d = 3.14159265358979323846}}},
    };
    for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++)
        if (strcmp(full, consts[i].name) == 0) {
            *out = consts[i].v;
            return WF_OK;
        }
    int64_t now = now_us();
    if (strcmp(full, "DateTime.Now") == 0 || strcmp(full, "DateTime.UtcNow") == 0) {
        *out = wf_datetime_us(now);
        return WF_OK;
    }
    if (strcmp(full, "DateTime.Today") == 0) {
        *out = wf_datetime_us(now - now % 86400000000LL);
        return WF_OK;
    }
    const char *text = strcmp(full, "Boolean.TrueString") == 0    ? "True"
                       : strcmp(full, "Boolean.FalseString") == 0 ? "False"
                       : strcmp(full, "String.Empty") == 0        ? ""
                                                                   : e->name;
    /* Anything else is a member of a type wfbridge does not model (an enum): its name. */
    return wf_value_cstring(text, out) == WF_OK ? WF_OK : nomem(c, e);
}

static wf_status eval_access(ev *c, const wfl_rexpr *e, wf_value *out)
{
    if (wfl_rexpr_is_this_path(e))
        return eval_this_path(c, e, out);
    if (e->kind == WFL_REX_MEMBER && e->kids[0]->kind == WFL_REX_TYPEREF)
        return static_member(c, e, out);
    wf_value target = wf_null();
    wf_status st = eval(c, e->kids[0], &target);
    if (st != WF_OK)
        return st;
    if (e->kind == WFL_REX_MEMBER) {
        st = value_member(c, e, &target, e->name, out);
    } else {
        wf_value idx[MAX_ARGS];
        size_t n = 0;
        for (size_t i = 1; i < e->kid_count && st == WF_OK; i++) {
            if (n == MAX_ARGS) {
                st = fail(c, WF_E_LIMIT, e, "too many indices");
                break;
            }
            idx[n] = wf_null();
            st = eval(c, e->kids[i], &idx[n++]);
        }
        if (st == WF_OK)
            st = value_index(c, e, &target, idx, n, out);
        for (size_t i = 0; i < n; i++)
            wf_value_release(&idx[i]);
    }
    wf_value_release(&target);
    return st;
}

/* ---- methods --------------------------------------------------------------------------- */

static wf_status want_string_arg(ev *c, const wfl_rexpr *e, const wf_value *args, size_t argc,
                                 size_t i)
{
    if (i >= argc)
        return fail(c, WF_E_TYPE, e, "'%s' needs %zu argument(s)", e->name, i + 1);
    if (wf_is_null(&args[i]))
        return fault(c, &wf_exc_argument_null, e, "Value cannot be null.", "argument of '%s'",
                     e->name);
    if (args[i].type->kind != WF_K_STRING)
        return fail(c, WF_E_TYPE, e, "'%s' expects a String argument, got %s", e->name,
                    args[i].type->name);
    return WF_OK;
}

/* mode 0 ToUpper, 1 ToLower, 2 Trim, 3 TrimStart, 4 TrimEnd. */
static wf_status map_string(ev *c, const wfl_rexpr *e, const char *s, int mode, wf_value *out)
{
    size_t len = strlen(s), start = 0;
    while ((mode == 2 || mode == 3) && start < len && strchr(" \t\r\n\v\f", s[start]))
        start++;
    while ((mode == 2 || mode == 4) && len > start && strchr(" \t\r\n\v\f", s[len - 1]))
        len--;
    char *copy = wf_strndup(s + start, len - start);
    if (!copy)
        return nomem(c, e);
    for (char *p = copy; *p && mode < 2; p++)
        if ((unsigned char)*p < 128)
            *p = (char)(mode == 0 ? (*p >= 'a' && *p <= 'z' ? *p - 32 : *p)
                                  : (*p >= 'A' && *p <= 'Z' ? *p + 32 : *p));
    return wf_value_string_take(copy, len - start, out) == WF_OK ? WF_OK : nomem(c, e);
}

static wf_status substring(ev *c, const wfl_rexpr *e, const char *s, const wf_value *args,
                           size_t argc, wf_value *out)
{
    size_t len = strlen(s);
    if (argc < 1 || argc > 2 || !is_integer(&args[0]) || (argc == 2 && !is_integer(&args[1])))
        return fail(c, WF_E_TYPE, e, "Substring takes one or two integer arguments");
    int64_t start = as_i64(&args[0]);
    int64_t count = argc == 2 ? as_i64(&args[1]) : (int64_t)len - start;
    const char *msg = wf_substring_fault(start, count, len);
    if (msg)
        return fault(c, &wf_exc_argument_range, e, msg, "%s", "Substring");
    return wf_value_string(s + start, (size_t)count, out) == WF_OK ? WF_OK : nomem(c, e);
}

static wf_status replace(ev *c, const wfl_rexpr *e, const char *s, const char *from,
                         const char *to, wf_value *out)
{
    if (!*from)
        return fault(c, &wf_exc_argument, e, "String cannot be of zero length.", "%s", "Replace");
    wf_buf buf;
    wf_buf_init(&buf);
    size_t flen = strlen(from);
    for (const char *hit; (hit = strstr(s, from)) != NULL; s = hit + flen) {
        wf_buf_add(&buf, s, (size_t)(hit - s));
        wf_buf_adds(&buf, to);
    }
    wf_buf_adds(&buf, s);
    wf_status st = buf.oom ? nomem(c, e) : make_string(c, e, &buf, out);
    wf_buf_fini(&buf);
    return st;
}

static wf_status range_fault(ev *c, const wfl_rexpr *e)
{
    return fault(c, &wf_exc_argument_range, e,
                 "Specified argument was out of the range of valid values.", "%s", e->name);
}

/* PadLeft/PadRight(width), Insert(index, text), Remove(index[, count]). */
static wf_status edit_string(ev *c, const wfl_rexpr *e, const char *s, const wf_value *args,
                             size_t argc, wf_value *out)
{
    const char *m = e->name;
    bool pad = strncmp(m, "Pad", 3) == 0, insert = strcmp(m, "Insert") == 0;
    if (argc < 1 || !is_integer(&args[0]) || (pad && argc != 1) ||
        (insert && (argc != 2 || args[1].type->kind != WF_K_STRING)) ||
        (!pad && !insert && (argc > 2 || (argc == 2 && !is_integer(&args[1])))))
        return fail(c, WF_E_TYPE, e, "String.%s: wrong arguments", m);
    size_t len = strlen(s);
    int64_t a = as_i64(&args[0]);
    int64_t n = !pad && !insert ? (argc == 2 ? as_i64(&args[1]) : (int64_t)len - a) : 0;
    if (pad && a < 0)
        return fault(c, &wf_exc_argument_range, e, WF_MSG_PAD_NEGATIVE, "%s", m);
    if (a < 0 || (pad && a > 1000000) ||
        (!pad && ((uint64_t)a > len || n < 0 || (uint64_t)(a + n) > len)))
        return range_fault(c, e);
    wf_buf buf;
    wf_buf_init(&buf);
    size_t fill = pad && (uint64_t)a > len ? (size_t)a - len : 0;
    for (size_t i = 0; m[3] == 'L' && i < fill; i++)
        wf_buf_addc(&buf, ' ');
    if (pad) {
        wf_buf_adds(&buf, s);
    } else {
        wf_buf_add(&buf, s, (size_t)a);
        if (insert)
            wf_buf_adds(&buf, wf_value_str(&args[1]));
        wf_buf_adds(&buf, s + a + n);
    }
    for (size_t i = 0; m[3] == 'R' && i < fill; i++)
        wf_buf_addc(&buf, ' ');
    wf_status st = buf.oom ? nomem(c, e) : make_string(c, e, &buf, out);
    wf_buf_fini(&buf);
    return st;
}

static int string_map_mode(const char *m)
{
    static const char *const names[] = {"ToUpper", "ToLower", "Trim", "TrimStart", "TrimEnd",
                                        "ToUpperInvariant", "ToLowerInvariant"};
    for (int i = 0; i < 7; i++)
        if (strcmp(m, names[i]) == 0)
            return i < 5 ? i : i - 5;
    return -1;
}

static wf_status string_method(ev *c, const wfl_rexpr *e, const char *s, const wf_value *args,
                               size_t argc, wf_value *out)
{
    const char *m = e->name;
    int mode = string_map_mode(m);
    if (mode >= 0 && argc == 0)
        return map_string(c, e, s, mode, out);
    if (strcmp(m, "Substring") == 0)
        return substring(c, e, s, args, argc, out);
    if (strncmp(m, "Pad", 3) == 0 || strcmp(m, "Insert") == 0 || strcmp(m, "Remove") == 0)
        return edit_string(c, e, s, args, argc, out);
    wf_status st = want_string_arg(c, e, args, argc, 0);
    if (st != WF_OK)
        return st;
    const char *a = wf_value_str(&args[0]);
    size_t slen = strlen(s), alen = strlen(a);
    if (strcmp(m, "Contains") == 0)
        *out = wf_bool(strstr(s, a) != NULL);
    else if (strcmp(m, "StartsWith") == 0)
        *out = wf_bool(strncmp(s, a, alen) == 0);
    else if (strcmp(m, "EndsWith") == 0)
        *out = wf_bool(alen <= slen && strcmp(s + slen - alen, a) == 0);
    else if (strcmp(m, "IndexOf") == 0) {
        const char *hit = strstr(s, a);
        *out = wf_int32(hit ? (int32_t)(hit - s) : -1);
    } else if (strcmp(m, "LastIndexOf") == 0) {
        /* .NET Framework: an empty value is found at the last index */
        int32_t last = alen == 0 ? (int32_t)(slen ? slen - 1 : 0) : -1;
        for (size_t i = slen - alen + 1; alen > 0 && alen <= slen && i-- > 0 && last < 0;)
            if (strncmp(s + i, a, alen) == 0)
                last = (int32_t)i;
        *out = wf_int32(last);
    } else if (strcmp(m, "Replace") == 0) {
        if ((st = want_string_arg(c, e, args, argc, 1)) != WF_OK)
            return st;
        return replace(c, e, s, a, wf_value_str(&args[1]), out);
    } else
        return fail(c, WF_E_NAME, e, "String has no method '%s'", m);
    return WF_OK;
}

/* List(T).Contains / IndexOf / LastIndexOf(item): equality as Equals (numbers by value). */
static wf_status list_method(ev *c, const wfl_rexpr *e, const wf_value *list,
                             const wf_value *item, wf_value *out)
{
    const char *m = e->name;
    size_t n = wf_value_list_count(list);
    int32_t first = -1, last = -1;
    for (size_t i = 0; i < n; i++) {
        if (!values_equal(wf_value_list_at(list, i), item))
            continue;
        if (first < 0)
            first = (int32_t)i;
        last = (int32_t)i;
    }
    if (strcmp(m, "Contains") == 0)
        *out = wf_bool(first >= 0);
    else if (strcmp(m, "IndexOf") == 0)
        *out = wf_int32(first);
    else if (strcmp(m, "LastIndexOf") == 0)
        *out = wf_int32(last);
    else
        return fail(c, WF_E_NAME, e, "%s has no method '%s'", list->type->name, m);
    return WF_OK;
}

static wf_status value_method(ev *c, const wfl_rexpr *e, const wf_value *v, const wf_value *args,
                              size_t argc, wf_value *out)
{
    if (wf_is_null(v))
        return null_ref(c, e, e->name);
    if (strcmp(e->name, "ToString") == 0 && argc == 0) {
        wf_buf buf;
        wf_buf_init(&buf);
        wf_status st = text_of(c, e, v, &buf);
        if (st == WF_OK)
            st = make_string(c, e, &buf, out);
        wf_buf_fini(&buf);
        return st;
    }
    if (strcmp(e->name, "Equals") == 0 && argc == 1) {
        *out = wf_bool(values_equal(v, &args[0]));
        return WF_OK;
    }
    if (strcmp(e->name, "CompareTo") == 0 && argc == 1) {
        int cmp = 1;
        wf_error local = WF_ERROR_INIT;
        if (!wf_is_null(&args[0]) && wf_value_compare(v, &args[0], &cmp, &local) != WF_OK)
            return fault(c, &wf_exc_argument, e, "Object must be of the same type.", "%s",
                         v->type->name);
        *out = wf_int32(cmp < 0 ? -1 : cmp > 0);
        return WF_OK;
    }
    if (v->type->kind == WF_K_STRING)
        return string_method(c, e, wf_value_str(v), args, argc, out);
    if (v->type->kind == WF_K_LIST && argc == 1)
        return list_method(c, e, v, &args[0], out);
    return fail(c, WF_E_NAME, e, "%s has no method '%s' taking %zu argument(s)", v->type->name,
                e->name, argc);
}

static wf_status static_method(ev *c, const wfl_rexpr *e, const wf_value *args, size_t argc,
                               wf_value *out)
{
    const char *type = short_type(e->kids[0]->name), *m = e->name;
    if (strcmp(type, "String") == 0 && strcmp(m, "IsNullOrEmpty") == 0 && argc == 1) {
        *out = wf_bool(wf_is_null(&args[0]) || wf_value_str_len(&args[0]) == 0);
        return WF_OK;
    }
    if (strcmp(type, "String") == 0 && strcmp(m, "Concat") == 0) {
        wf_buf buf;
        wf_buf_init(&buf);
        wf_status st = WF_OK;
        for (size_t i = 0; i < argc && st == WF_OK; i++)
            st = text_of(c, e, &args[i], &buf);
        if (st == WF_OK)
            st = make_string(c, e, &buf, out);
        wf_buf_fini(&buf);
        return st;
    }
    if (strcmp(type, "Math") == 0 && (strcmp(m, "Max") == 0 || strcmp(m, "Min") == 0) &&
        argc == 2) {
        int cmp = 0;
        wf_error local = WF_ERROR_INIT;
        if (!is_number(&args[0]) || !is_number(&args[1]) ||
            wf_value_compare(&args[0], &args[1], &cmp, &local) != WF_OK)
            return fail(c, WF_E_TYPE, e, "Math.%s takes two numbers", m);
        bool first = m[1] == 'a' ? cmp >= 0 : cmp <= 0;
        *out = wf_value_retain(first ? &args[0] : &args[1]);
        return WF_OK;
    }
    if (strcmp(type, "Math") == 0 && strcmp(m, "Abs") == 0 && argc == 1 && is_number(&args[0])) {
        wf_value zero = wf_int32(0);
        int cmp = 0;
        wf_error local = WF_ERROR_INIT;
        wf_value_compare(&args[0], &zero, &cmp, &local);
        if (cmp >= 0) {
            *out = wf_value_retain(&args[0]);
            return WF_OK;
        }
        wfl_rexpr negate = *e;
        negate.op = WFL_ROP_SUBTRACT;
        return numeric_op(c, &negate, &zero, &args[0], out);
    }
    return fail(c, WF_E_NAME, e, "unknown static method %s.%s with %zu argument(s)", type, m,
                argc);
}

/* As WF3 does: the target first (null is a RuleEvaluationException before any argument is
 * evaluated), then the arguments, then the call, whose faults are wrapped. */
static wf_status eval_invoke(ev *c, const wfl_rexpr *e, wf_value *out)
{
    size_t argc = e->kid_count - 1;
    if (argc > MAX_ARGS)
        return fail(c, WF_E_LIMIT, e, "too many arguments");
    wf_value args[MAX_ARGS], target = wf_null();
    size_t done = 0;
    const wfl_rexpr *t = e->kids[0];
    bool on_value = t->kind != WFL_REX_THIS && t->kind != WFL_REX_TYPEREF;
    wf_status st = on_value ? eval(c, t, &target) : WF_OK;
    if (st == WF_OK && on_value && wf_is_null(&target))
        st = null_ref(c, e, e->name);
    for (; done < argc && st == WF_OK; done++) {
        args[done] = wf_null();
        st = eval(c, e->kids[1 + done], &args[done]);
    }
    if (st == WF_OK && t->kind == WFL_REX_THIS) {
        wf_error local = WF_ERROR_INIT;
        if (!c->t || !c->t->invoke)
            st = fail(c, WF_E_NAME, e, "'this' has no method '%s'", e->name);
        else if ((st = c->t->invoke(c->t->ud, e->name, args, argc, out, c->exc, &local)) != WF_OK)
            wf_error_set(c->err, st, &e->loc, "%s", local.message);
        st = wrap_invocation(c, e, "this", st);
    } else if (st == WF_OK && t->kind == WFL_REX_TYPEREF) {
        st = wrap_invocation(c, e, short_type(t->name), static_method(c, e, args, argc, out));
    } else if (st == WF_OK) {
        st = wrap_invocation(c, e, target.type->name,
                             value_method(c, e, &target, args, argc, out));
    }
    wf_value_release(&target);
    for (size_t i = 0; i < done; i++)
        wf_value_release(&args[i]);
    return st;
}

/* ---- casts and new ----------------------------------------------------------------------- */

static bool is_value_type(const wf_type *t)
{
    switch (t->kind) {
    case WF_K_BOOL: case WF_K_INT32: case WF_K_INT64: case WF_K_DOUBLE:
    case WF_K_DECIMAL: case WF_K_DATETIME: case WF_K_TIMESPAN:
        return true;
    default:
        return false;
    }
}

static wf_status eval_cast(ev *c, const wfl_rexpr *e, wf_value *out)
{
    wf_value v = wf_null();
    wf_status st = eval(c, e->kids[0], &v);
    if (st != WF_OK)
        return st;
    if (wf_is_null(&v)) {
        if (is_value_type(e->type))
            return fault(c, &wf_exc_invalid_cast, e, MSG_CAST, "null to %s", e->type->name);
        *out = v;
        return WF_OK;
    }
    wf_error local = WF_ERROR_INIT;
    st = wf_value_convert(&v, e->type, out, &local);
    if (st == WF_E_RANGE)
        st = fault(c, &wf_exc_overflow, e, MSG_OVERFLOW, "%s to %s", v.type->name,
                   e->type->name);
    else if (st == WF_E_NOMEM)
        st = nomem(c, e);
    else if (st != WF_OK)
        st = fault(c, &wf_exc_invalid_cast, e, MSG_CAST, "%s to %s", v.type->name,
                   e->type->name);
    wf_value_release(&v);
    return st;
}

static wf_status eval_new(ev *c, const wfl_rexpr *e, wf_value *out)
{
    wf_value msg = wf_null();
    wf_status st = e->kid_count ? eval(c, e->kids[0], &msg) : WF_OK;
    if (st != WF_OK)
        return st;
    wf_buf buf;
    wf_buf_init(&buf);
    if (e->kid_count == 0)
        wf_buf_addf(&buf, "Exception of type '%s' was thrown.", e->type->name);
    else
        st = text_of(c, e, &msg, &buf);
    if (st == WF_OK && (buf.oom || wf_value_exception(e->type, buf.data, out) != WF_OK))
        st = nomem(c, e);
    wf_buf_fini(&buf);
    wf_value_release(&msg);
    return st;
}

static wf_status eval(ev *c, const wfl_rexpr *e, wf_value *out)
{
    switch (e->kind) {
    case WFL_REX_PRIMITIVE:
        *out = wf_value_retain(&e->value);
        return WF_OK;
    case WFL_REX_MEMBER:
    case WFL_REX_INDEX:
        return eval_access(c, e, out);
    case WFL_REX_BINARY:
        return eval_binary(c, e, out);
    case WFL_REX_INVOKE:
        return eval_invoke(c, e, out);
    case WFL_REX_CAST:
        return eval_cast(c, e, out);
    case WFL_REX_NEW:
        return eval_new(c, e, out);
    case WFL_REX_THIS:
        return fail(c, WF_E_UNSUPPORTED, e, "'this' cannot be used as a value");
    case WFL_REX_TYPEREF:
        return fail(c, WF_E_TYPE, e, "type '%s' cannot be used as a value", e->name);
    }
    return fail(c, WF_E_STATE, e, "bad expression node");
}

/* ---- public evaluation ------------------------------------------------------------------- */

wf_status wfl_rules_eval_expr(const wfl_rexpr *expr, const wfl_rules_target *target,
                              wf_value *out, wf_value *exc, wf_error *err)
{
    wf_value scratch = wf_null();
    ev c = {target, exc ? exc : &scratch, err, excs_of(NULL), NULL};
    *c.exc = wf_null();
    *out = wf_null();
    wf_status st = eval(&c, expr, out);
    wf_value_release(&scratch);
    return st;
}

wf_status wfl_rules_eval_condition(const wfl_rule_cond *cond, const wfl_rules_target *target,
                                   bool *result, wf_value *exc, wf_error *err)
{
    wf_value scratch = wf_null();
    ev c = {target, exc ? exc : &scratch, err, excs_of(cond->owner), cond->owner};
    *c.exc = wf_null();
    *result = false;
    wf_status st = eval_bool(&c, cond->expr, result);
    wf_value_release(&scratch);
    return st;
}

/* ---- rule sets (RS Executor.ExecuteRuleSet) ---------------------------------------------- */

static wf_status run_actions(ev *c, const wfl_rule *r, int branch, bool *halted)
{
    for (size_t i = 0; i < r->action_count[branch]; i++) {
        const wfl_rule_action *a = &r->actions[branch][i];
        wf_value v = wf_null();
        wf_status st = WF_OK;
        switch (a->kind) {
        case WFL_ACTION_HALT:
            *halted = true;
            return WF_OK;
        case WFL_ACTION_UPDATE:
            break; /* only matters to chaining, which was analysed at load */
        case WFL_ACTION_ASSIGN:
            st = eval(c, a->value, &v);
            if (st == WF_OK)
                st = assign_this_path(c, a->target, &v);
            break;
        case WFL_ACTION_EXPR:
            st = eval(c, a->value, &v);
            break;
        }
        wf_value_release(&v);
        if (st != WF_OK) {
            wf_error_prefix(c->err, "in rule '%s': ", r->name);
            return st;
        }
    }
    return WF_OK;
}

/* Re-mark the rules an action list affects; returns the earliest re-marked index. */
static size_t remark(const wfl_ruleset *rs, const wfl_triggers *t, bool *evaluated,
                     const unsigned *executed, size_t index)
{
    for (size_t i = 0; i < t->count; i++) {
        size_t j = t->index[i];
        const wfl_rule *other = &rs->rules[rs->active[j]];
        if (evaluated[j] && (executed[j] == 0 || other->always)) {
            evaluated[j] = false;
            if (j < index)
                index = j;
        }
    }
    return index;
}

static wf_status execute(ev *c, const wfl_ruleset *rs, const wfl_rules_exec_opts *opts,
                         bool *evaluated, unsigned *executed)
{
    unsigned max = opts && opts->max_evaluations ? opts->max_evaluations : 100000;
    unsigned evaluations = 0;
    size_t index = 0;
    while (index < rs->active_count) {
        if (evaluated[index]) {
            index++;
            continue;
        }
        const wfl_rule *r = &rs->rules[rs->active[index]];
        evaluated[index] = true;
        if (++evaluations > max)
            return wf_error_set(c->err, WF_E_LIMIT, &rs->loc,
                                "rule set '%s' did not finish after %u rule evaluations "
                                "(endless chaining at rule '%s'?)", rs->name, max, r->name);
        bool result = true;
        wf_status st = r->cond ? eval_bool(c, r->cond, &result) : WF_OK;
        if (st != WF_OK) {
            wf_error_prefix(c->err, "in rule '%s': ", r->name);
            return st;
        }
        if (opts && opts->on_rule)
            opts->on_rule(opts->ud, r, result);
        int branch = result ? 0 : 1;
        if (r->action_count[branch] == 0) {
            index++;
            continue;
        }
        executed[index]++;
        bool halted = false;
        if ((st = run_actions(c, r, branch, &halted)) != WF_OK || halted)
            return st;
        index = remark(rs, &r->triggers[branch], evaluated, executed, index);
    }
    return WF_OK;
}

wf_status wfl_rules_execute(const wfl_ruleset *ruleset, const wfl_rules_target *target,
                            const wfl_rules_exec_opts *opts, wf_value *exc, wf_error *err)
{
    wf_value scratch = wf_null();
    ev c = {target, exc ? exc : &scratch, err, excs_of(ruleset->owner), ruleset->owner};
    *c.exc = wf_null();
    size_t n = ruleset->active_count;
    enum { ON_STACK = 16 }; /* most rule sets: no allocation per execution */
    bool evaluated_stack[ON_STACK] = {0};
    unsigned executed_stack[ON_STACK] = {0};
    bool *evaluated = n <= ON_STACK ? evaluated_stack : wf_calloc(n, sizeof *evaluated);
    unsigned *executed = n <= ON_STACK ? executed_stack : wf_calloc(n, sizeof *executed);
    wf_status st = evaluated && executed
                       ? execute(&c, ruleset, opts, evaluated, executed)
                       : wf_error_set(err, WF_E_NOMEM, &ruleset->loc, "out of memory");
    if (evaluated != evaluated_stack)
        wf_free(evaluated);
    if (executed != executed_stack)
        wf_free(executed);
    wf_value_release(&scratch);
    return st;
}

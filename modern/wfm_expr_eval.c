/* wfm_expr_eval.c — the evaluator: one switch over the typed tree, scalars computed in place
 * without allocation, every intermediate released. C# checked arithmetic: integer overflow
 * raises OverflowException, integer/decimal division by zero DivideByZeroException; member
 * access on null NullReferenceException; a failed Object conversion InvalidCastException.
 * Nodes flagged XN_RULE (inside WF3Rule(...)) follow WF3's rules engine instead: integer
 * + - * and negation wrap, a member, indexer or method of null raises
 * RuleEvaluationException, a method that faults TargetInvocationException
 * (docs/wf3-behaviour.md "Rules: faults and their exception types"). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "wfm_expr_int.h"

#define NOINLINE __attribute__((noinline))

/* Scalars skip the reference counting calls entirely (the hot path of arithmetic). */
#define HEAP_KINDS                                                                                 \
    ((1u << WF_K_STRING) | (1u << WF_K_LIST) | (1u << WF_K_RECORD) | (1u << WF_K_EXCEPTION))

static inline void drop(wf_value *v)
{
    if ((1u << v->type->kind) & HEAP_KINDS)
        wf_value_release(v);
}

/* *out = a Boolean, field by field: `*out = wf_bool(b)` builds the value in a stack
 * temporary with stores of three sizes and reads it back whole, a store-forwarding stall
 * (perf on While x1000: a fifth of wfm_expr__eval's samples on the copy after compare). */
static inline void put_bool(wf_value *out, bool b)
{
    out->type = &wf_type_bool;
    memset(&out->u, 0, sizeof out->u);
    out->u.b = b;
}

static inline wf_value keep(const wf_value *v)
{
    return ((1u << v->type->kind) & HEAP_KINDS) ? wf_value_retain(v) : *v;
}

wf_status wfm_expr__raise(wf_value *exc, const wf_type *type, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return wf_value_exception(type, msg, exc) == WF_OK ? WF_E_FAULT : WF_E_NOMEM;
}

int64_t wfm_expr__now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

bool wfm_expr__text(const wf_value *v, wf_buf *buf)
{
    if (v->type->kind == WF_K_STRING)
        return wf_buf_add(buf, wf_value_str(v), wf_value_str_len(v));
    if (wf_is_null(v))
        return !buf->oom;
    return wf_value_to_text(v, buf);
}

wf_status wfm_expr__index_error(wf_value *exc, int64_t i, size_t count)
{
    return wfm_expr__raise(exc, &wf_exc_index_range,
                           "Index was out of range. Must be non-negative and less than the size "
                           "of the collection. (index %lld, count %zu)",
                           (long long)i, count);
}

static wf_status nullref(wf_value *exc)
{
    return wfm_expr__raise(exc, &wf_exc_null_reference, WFM_MSG_NULLREF);
}

/* WF3's rule evaluator checks a target itself: what = the member or method, "[]" an indexer. */
static wf_status rule_null(wf_value *exc, const char *what)
{
    return wfm_expr__raise(exc, &wf_exc_rule_evaluation, "The target of '%s' evaluated to null.",
                           what);
}

/* A rule calls methods by reflection: their faults surface wrapped, the inner message kept. */
static wf_status rule_invocation(wf_value *exc, const char *type, const char *method)
{
    char inner[256];
    snprintf(inner, sizeof inner, "%s", wf_value_exc_message(exc));
    wf_value_release(exc);
    return wfm_expr__raise(exc, &wf_exc_target_invocation,
                           "Method %s.%s threw an exception: %s", type, method, inner);
}

static wf_status overflow(wf_value *exc)
{
    return wfm_expr__raise(exc, &wf_exc_overflow, WFM_MSG_OVERFLOW);
}

static wf_status divzero(wf_value *exc)
{
    return wfm_expr__raise(exc, &wf_exc_divide_by_zero, WFM_MSG_DIVZERO);
}

static wf_status bad_cast(const wf_value *v, const wf_type *to, wf_value *exc)
{
    return wfm_expr__raise(exc, &wf_exc_invalid_cast,
                           "Unable to cast object of type '%s' to type '%s'.", v->type->name,
                           to->name);
}

/* ---- conversions ---------------------------------------------------------------------- */
static bool is_num_kind(wf_kind k)
{
    return k == WF_K_INT32 || k == WF_K_INT64 || k == WF_K_DOUBLE || k == WF_K_DECIMAL;
}

/* Round half to even, or toward zero when truncating (C# casts). */
static double round_mode(double d, bool truncate)
{
    return truncate ? trunc(d) : nearbyint(d);
}

/* Numeric value v as an integer in [lo, hi]. */
static wf_status to_integer(const wf_value *v, bool truncate, int64_t lo, int64_t hi, int64_t *out,
                            wf_value *exc)
{
    int64_t i;
    switch (v->type->kind) {
    case WF_K_INT32:
        i = v->u.i32;
        break;
    case WF_K_INT64:
        i = v->u.i64;
        break;
    case WF_K_DECIMAL: {
        wf_decimal r =
            wf_decimal_round(v->u.dec, 0, truncate ? WF_DEC_ROUND_ZERO : WF_DEC_ROUND_EVEN);
        if (wf_decimal_to_int64(r, lo, hi, &i) != WF_OK)
            return overflow(exc);
        break;
    }
    default: {
        double d = round_mode(v->u.d, truncate);
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
            return overflow(exc);
        i = (int64_t)d;
    }
    }
    if (i < lo || i > hi)
        return overflow(exc);
    *out = i;
    return WF_OK;
}

static wf_status num_convert(const wf_value *v, const wf_type *to, bool truncate, wf_value *out,
                             wf_value *exc)
{
    wf_kind f = v->type->kind;
    int64_t i;
    wf_status st;
    switch (to->kind) {
    case WF_K_INT32:
        st = to_integer(v, truncate, INT32_MIN, INT32_MAX, &i, exc);
        *out = wf_int32((int32_t)i);
        return st;
    case WF_K_INT64:
        st = to_integer(v, truncate, INT64_MIN, INT64_MAX, &i, exc);
        *out = wf_int64(i);
        return st;
    case WF_K_DOUBLE:
        *out = wf_double(f == WF_K_INT32     ? v->u.i32
                         : f == WF_K_DOUBLE  ? v->u.d
                         : f == WF_K_DECIMAL ? wf_decimal_to_double(v->u.dec)
                                             : (double)v->u.i64);
        return WF_OK;
    default: /* Decimal */
        if (f == WF_K_DECIMAL) {
            *out = *v;
        } else if (f == WF_K_DOUBLE) {
            wf_decimal d;
            if (wf_decimal_from_double(v->u.d, &d) != WF_OK)
                return overflow(exc);
            *out = wf_dec(d);
        } else {
            *out = wf_dec(wf_decimal_from_int64(f == WF_K_INT32 ? v->u.i32 : v->u.i64));
        }
        return WF_OK;
    }
}

static wf_status to_text_value(const wf_value *v, wf_value *out)
{
    wf_buf buf;
    wf_buf_init(&buf);
    wfm_expr__text(v, &buf);
    size_t len;
    char *s = wf_buf_detach(&buf, &len);
    if (!s)
        return WF_E_NOMEM;
    return wf_value_string_take(s, len, out);
}

/* Convert.ToX / CInt of a string: parse (trimmed) as the target type. */
static wf_status parse_value(const wf_value *v, const wf_type *to, wf_value *out, wf_value *exc)
{
    const char *s = wf_value_str(v);
    size_t len = wf_value_str_len(v);
    while (len && (*s == ' ' || *s == '\t'))
        s++, len--;
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    char buf[128];
    if (len >= sizeof buf)
        return wfm_expr__raise(exc, &wf_exc_format, WFM_MSG_FORMAT);
    memcpy(buf, s, len);
    buf[len] = '\0';
    wf_error err = WF_ERROR_INIT;
    wf_status st = wf_value_parse(NULL, to, buf, out, &err);
    if (st == WF_OK || st == WF_E_NOMEM)
        return st;
    *out = wf_null();
    if (st == WF_E_RANGE)
        return overflow(exc);
    if (to->kind == WF_K_BOOL)
        return wfm_expr__raise(exc, &wf_exc_format,
                               "String '%s' was not recognized as a valid Boolean.", buf);
    return wfm_expr__raise(exc, &wf_exc_format, WFM_MSG_FORMAT);
}

static wf_status conv_null(const wf_type *to, int mode, wf_value *out, wf_value *exc)
{
    *out = wf_null();
    switch (to->kind) {
    case WF_K_BOOL:
    case WF_K_INT32:
    case WF_K_INT64:
    case WF_K_DOUBLE:
    case WF_K_DECIMAL:
    case WF_K_DATETIME:
    case WF_K_TIMESPAN:
        if (mode != XV_CONVERT)
            return nullref(exc);
        /* Convert.ToInt32(null) is 0, CBool(Nothing) False: the type's default. */
        if (to->kind == WF_K_DECIMAL) {
            *out = wf_dec(wf_decimal_from_int64(0));
            return WF_OK;
        }
        out->type = to;
        out->u.i64 = 0;
        return WF_OK;
    case WF_K_STRING:
        if (mode == XV_TEXT || mode == XV_CONVERT)
            return wf_value_string("", 0, out);
        return WF_OK;
    default:
        return WF_OK;
    }
}

wf_status wfm_expr__conv(const wf_value *v, const wf_type *to, int mode, wf_value *out,
                         wf_value *exc)
{
    wf_kind f = v->type->kind, t = to->kind;
    if (v->type == to || t == WF_K_OBJECT || (f == t && f != WF_K_LIST && f != WF_K_EXCEPTION)) {
        *out = keep(v);
        return WF_OK;
    }
    *out = wf_null();
    if (f == WF_K_NULL)
        return conv_null(to, mode, out, exc);
    if (t == WF_K_STRING && (mode == XV_TEXT || mode == XV_CONVERT))
        return to_text_value(v, out);
    if (is_num_kind(t) && is_num_kind(f))
        return num_convert(v, to, mode == XV_CAST, out, exc);
    if (mode == XV_CONVERT) {
        if (f == WF_K_STRING && t != WF_K_RECORD && t != WF_K_LIST && t != WF_K_EXCEPTION)
            return parse_value(v, to, out, exc);
        if (f == WF_K_BOOL && is_num_kind(t)) {
            wf_value one = wf_int32(v->u.b ? 1 : 0);
            return num_convert(&one, to, false, out, exc);
        }
        if (is_num_kind(f) && t == WF_K_BOOL) {
            put_bool(out, f == WF_K_DOUBLE  ? v->u.d != 0
                           : f == WF_K_INT32 ? v->u.i32 != 0
                                             : v->u.i64 != 0);
            return WF_OK;
        }
    }
    if ((f == WF_K_EXCEPTION && t == WF_K_EXCEPTION && wf_type_is_a(v->type, to)) ||
        (f == WF_K_LIST && t == WF_K_LIST && wf_type_assignable(to, v->type))) {
        *out = wf_value_retain(v);
        return WF_OK;
    }
    return bad_cast(v, to, exc);
}

/* ---- arithmetic ----------------------------------------------------------------------- */
static wf_status arith_i32(int op, int32_t a, int32_t b, wf_value *out, wf_value *exc)
{
    int32_t r;
    switch (op) {
    case XA_ADD:
        if (__builtin_add_overflow(a, b, &r))
            return overflow(exc);
        break;
    case XA_SUB:
        if (__builtin_sub_overflow(a, b, &r))
            return overflow(exc);
        break;
    case XA_MUL:
        if (__builtin_mul_overflow(a, b, &r))
            return overflow(exc);
        break;
    default:
        if (b == 0)
            return divzero(exc);
        if (a == INT32_MIN && b == -1)
            return overflow(exc);
        r = op == XA_DIV ? a / b : a % b;
    }
    /* field by field: `*out = wf_int32(r)` goes through a stack temporary, a
     * store-forwarding stall (perf: most of this function's time) */
    out->type = &wf_type_int32;
    memset(&out->u, 0, sizeof out->u);
    out->u.i32 = r;
    return WF_OK;
}

static wf_status arith_i64(int op, int64_t a, int64_t b, int64_t *r, wf_value *exc)
{
    switch (op) {
    case XA_ADD:
        if (__builtin_add_overflow(a, b, r))
            return overflow(exc);
        break;
    case XA_SUB:
        if (__builtin_sub_overflow(a, b, r))
            return overflow(exc);
        break;
    case XA_MUL:
        if (__builtin_mul_overflow(a, b, r))
            return overflow(exc);
        break;
    default:
        if (b == 0)
            return divzero(exc);
        if (a == INT64_MIN && b == -1)
            return overflow(exc);
        *r = op == XA_DIV ? a / b : a % b;
    }
    return WF_OK;
}

static wf_status arith_dec(int op, wf_decimal a, wf_decimal b, wf_value *out, wf_value *exc)
{
    wf_decimal r;
    wf_status st;
    if ((op == XA_DIV || op == XA_MOD) && wf_decimal_is_zero(b))
        return divzero(exc);
    switch (op) {
    case XA_ADD:
        st = wf_decimal_add(a, b, &r);
        break;
    case XA_SUB:
        st = wf_decimal_sub(a, b, &r);
        break;
    case XA_MUL:
        st = wf_decimal_mul(a, b, &r);
        break;
    case XA_DIV:
        st = wf_decimal_div(a, b, &r);
        break;
    default:
        st = wf_decimal_rem(a, b, &r);
    }
    if (st != WF_OK)
        return overflow(exc);
    *out = wf_dec(r);
    return WF_OK;
}

static wf_status arith_dbl(int op, double a, double b, wf_value *out)
{
    double r;
    switch (op) {
    case XA_ADD:
        r = a + b;
        break;
    case XA_SUB:
        r = a - b;
        break;
    case XA_MUL:
        r = a * b;
        break;
    case XA_DIV:
        r = a / b;
        break;
    default:
        r = fmod(a, b);
    }
    *out = wf_double(r);
    return WF_OK;
}

static const char *const arith_names[] = {"+", "-", "*", "/", "%"};

/* DateTime and TimeSpan arithmetic (the legal pairs were checked at compile time unless an
 * operand was Object). */
static wf_status arith_time(int op, const wf_value *a, const wf_value *b, wf_value *out,
                            wf_value *exc)
{
    wf_kind ka = a->type->kind, kb = b->type->kind;
    const wf_type *t = NULL;
    if (ka == WF_K_DATETIME && kb == WF_K_DATETIME && op == XA_SUB)
        t = &wf_type_timespan;
    else if (ka == WF_K_DATETIME && kb == WF_K_TIMESPAN && (op == XA_ADD || op == XA_SUB))
        t = &wf_type_datetime;
    else if (ka == WF_K_TIMESPAN && kb == WF_K_TIMESPAN && (op == XA_ADD || op == XA_SUB))
        t = &wf_type_timespan;
    if (!t)
        return wfm_expr__raise(exc, &wf_exc_invalid_cast,
                               "Operator '%s' is not defined for type '%s' and type '%s'.",
                               arith_names[op], a->type->name, b->type->name);
    int64_t r;
    wf_status st = arith_i64(op, a->u.i64, b->u.i64, &r, exc);
    if (st != WF_OK)
        return st;
    if (t == &wf_type_datetime && (r < WF_DATETIME_MIN_US || r > WF_DATETIME_MAX_US)) /* years 1-9999 */
        return wfm_expr__raise(exc, &wf_exc_argument_range,
                               "The added or subtracted value results in an un-representable "
                               "DateTime.");
    out->type = t;
    out->u.i64 = r;
    return WF_OK;
}

static int num_rank(wf_kind k)
{
    return k == WF_K_INT32 ? 1 : k == WF_K_INT64 ? 2 : k == WF_K_DECIMAL ? 3 : 4;
}

static wf_status concat(const wf_value *a, const wf_value *b, wf_value *out)
{
    wf_buf buf;
    wf_buf_init(&buf);
    wfm_expr__text(a, &buf);
    wfm_expr__text(b, &buf);
    size_t len;
    char *s = wf_buf_detach(&buf, &len);
    if (!s) {
        *out = wf_null();
        return WF_E_NOMEM;
    }
    return wf_value_string_take(s, len, out);
}

/* a op b on any operand types (typed operands arrive promoted; Object ones are promoted
 * here). */
static wf_status arith(int op, const wf_value *a, const wf_value *b, wf_value *out, wf_value *exc)
{
    wf_kind ka = a->type->kind, kb = b->type->kind;
    if (ka == WF_K_INT32 && kb == WF_K_INT32)
        return arith_i32(op, a->u.i32, b->u.i32, out, exc);
    if (op == XA_ADD && (ka == WF_K_STRING || kb == WF_K_STRING))
        return concat(a, b, out);
    if (ka == WF_K_NULL || kb == WF_K_NULL)
        return nullref(exc);
    if (!is_num_kind(ka) || !is_num_kind(kb))
        return arith_time(op, a, b, out, exc);
    int rank = num_rank(ka) > num_rank(kb) ? num_rank(ka) : num_rank(kb);
    static const wf_type *const by_rank[] = {NULL, &wf_type_int32, &wf_type_int64, &wf_type_decimal,
                                             &wf_type_double};
    wf_value x, y;
    wf_status st = num_convert(a, by_rank[rank], false, &x, exc);
    if (st == WF_OK)
        st = num_convert(b, by_rank[rank], false, &y, exc);
    if (st != WF_OK)
        return st;
    switch (rank) {
    case 1:
        return arith_i32(op, x.u.i32, y.u.i32, out, exc);
    case 2: {
        int64_t r;
        st = arith_i64(op, x.u.i64, y.u.i64, &r, exc);
        *out = wf_int64(r);
        return st;
    }
    case 3:
        return arith_dec(op, x.u.dec, y.u.dec, out, exc);
    default:
        return arith_dbl(op, x.u.d, y.u.d, out);
    }
}

/* WF3 rules: Int32/Int64 + - * wrap (unchecked C#); the rest as arith(). */
static wf_status rule_arith(int op, const wf_value *a, const wf_value *b, wf_value *out,
                            wf_value *exc)
{
    wf_kind ka = a->type->kind, kb = b->type->kind;
    bool ints = (ka == WF_K_INT32 || ka == WF_K_INT64) && (kb == WF_K_INT32 || kb == WF_K_INT64);
    if (!ints || op > XA_MUL)
        return arith(op, a, b, out, exc);
    uint64_t x = (uint64_t)(ka == WF_K_INT32 ? a->u.i32 : a->u.i64);
    uint64_t y = (uint64_t)(kb == WF_K_INT32 ? b->u.i32 : b->u.i64);
    uint64_t r = op == XA_ADD ? x + y : op == XA_SUB ? x - y : x * y;
    if (ka == WF_K_INT32 && kb == WF_K_INT32)
        *out = wf_int32((int32_t)(uint32_t)r);
    else
        *out = wf_int64((int64_t)r);
    return WF_OK;
}

/* -a; wrap: WF3 rules, where -MinValue is MinValue (the rules parser reads -x as 0 - x). */
static wf_status negate(const wf_value *a, bool wrap, wf_value *out, wf_value *exc)
{
    bool min = (a->type->kind == WF_K_INT32 && a->u.i32 == INT32_MIN) ||
               (a->type->kind == WF_K_INT64 && a->u.i64 == INT64_MIN);
    if (wrap && min) {
        *out = *a;
        return WF_OK;
    }
    switch (a->type->kind) {
    case WF_K_INT32:
        if (a->u.i32 == INT32_MIN)
            return overflow(exc);
        *out = wf_int32(-a->u.i32);
        return WF_OK;
    case WF_K_DECIMAL:
        *out = wf_dec(wf_decimal_neg(a->u.dec));
        return WF_OK;
    case WF_K_INT64:
    case WF_K_TIMESPAN:
        if (a->u.i64 == INT64_MIN)
            return overflow(exc);
        out->type = a->type;
        out->u.i64 = -a->u.i64;
        return WF_OK;
    case WF_K_DOUBLE:
        *out = wf_double(-a->u.d);
        return WF_OK;
    case WF_K_NULL:
        return nullref(exc);
    default:
        return wfm_expr__raise(exc, &wf_exc_invalid_cast,
                               "Operator '-' is not defined for type '%s'.", a->type->name);
    }
}

/* ---- comparison ----------------------------------------------------------------------- */
static bool i64_kind(wf_kind k)
{
    return k == WF_K_INT64 || k == WF_K_DATETIME || k == WF_K_TIMESPAN;
}

static bool values_equal(const wf_value *a, const wf_value *b)
{
    wf_kind ka = a->type->kind, kb = b->type->kind;
    if (ka == kb) {
        if (ka == WF_K_INT32)
            return a->u.i32 == b->u.i32;
        if (ka == WF_K_DOUBLE)
            return a->u.d == b->u.d;
        if (ka == WF_K_BOOL)
            return a->u.b == b->u.b;
        if (i64_kind(ka))
            return a->u.i64 == b->u.i64;
    }
    return wf_value_equal(a, b);
}

static wf_status compare(int op, const wf_value *a, const wf_value *b, bool *r, wf_value *exc)
{
    if (op == XC_EQ || op == XC_NE) {
        *r = values_equal(a, b) == (op == XC_EQ);
        return WF_OK;
    }
    wf_kind ka = a->type->kind, kb = b->type->kind;
    int c;
    if (ka == kb && ka == WF_K_INT32) {
        c = (a->u.i32 > b->u.i32) - (a->u.i32 < b->u.i32);
    } else if (ka == kb && i64_kind(ka)) {
        c = (a->u.i64 > b->u.i64) - (a->u.i64 < b->u.i64);
    } else if (ka == kb && ka == WF_K_DOUBLE) {
        double x = a->u.d, y = b->u.d; /* NaN compares false both ways, as in C# */
        *r = op == XC_LT ? x < y : op == XC_LE ? x <= y : op == XC_GT ? x > y : x >= y;
        return WF_OK;
    } else if (ka == WF_K_NULL || kb == WF_K_NULL) {
        *r = false; /* lifted comparison with null */
        return WF_OK;
    } else if (wf_value_compare(a, b, &c, NULL) != WF_OK) {
        return wfm_expr__raise(exc, &wf_exc_invalid_cast, "Cannot compare '%s' with '%s'.",
                               a->type->name, b->type->name);
    }
    *r = op == XC_LT ? c < 0 : op == XC_LE ? c <= 0 : op == XC_GT ? c > 0 : c >= 0;
    return WF_OK;
}

/* ---- nodes ---------------------------------------------------------------------------- */
static wf_status fail(wf_status st, wf_value *out)
{
    *out = wf_null();
    return st;
}

static wf_value *slot_of(const xnode *n, const wfm_env *env)
{
    for (uint32_t h = 0; env && h < n->hops; h++)
        env = env->parent;
    if (!env || n->index >= env->count)
        return NULL;
    return &env->slots[n->index];
}

static wf_status eval_slot(const xnode *n, const wfm_env *env, wf_value *out, wf_value *exc)
{
    const wf_value *slot = slot_of(n, env);
    if (!slot)
        return fail(wfm_expr__raise(exc, &wf_exc_invalid_operation,
                                    "no environment slot %u at %u levels up", n->index, n->hops),
                    out);
    *out = keep(slot);
    return WF_OK;
}

/* Evaluate both operands of a binary node. */
static wf_status eval2(const xnode *n, const wfm_env *env, wf_value *a, wf_value *b, wf_value *exc)
{
    wf_status st = wfm_expr__eval(n->a, env, a, exc);
    if (st != WF_OK)
        return fail(st, b);
    st = wfm_expr__eval(n->b, env, b, exc);
    if (st != WF_OK)
        drop(a);
    return st;
}

static wf_status eval_unary(const xnode *n, const wfm_env *env, wf_value *out, wf_value *exc)
{
    wf_value a;
    wf_status st = wfm_expr__eval(n->a, env, &a, exc);
    if (st != WF_OK)
        return fail(st, out);
    switch (n->op) {
    case XOP_CONV:
        st = wfm_expr__conv(&a, n->type, n->sub, out, exc);
        break;
    case XOP_NEG:
        st = negate(&a, (n->flags & XN_RULE) != 0, out, exc);
        break;
    default:
        put_bool(out, !a.u.b);
        break;
    }
    drop(&a);
    return st == WF_OK ? st : fail(st, out);
}

static wf_status eval_binary(const xnode *n, const wfm_env *env, wf_value *out, wf_value *exc)
{
    wf_value a, b;
    wf_status st = eval2(n, env, &a, &b, exc);
    if (st != WF_OK)
        return fail(st, out);
    bool r = false;
    switch (n->op) {
    case XOP_ARITH:
        st = (n->flags & XN_RULE) ? rule_arith(n->sub, &a, &b, out, exc)
                                  : arith(n->sub, &a, &b, out, exc);
        break;
    case XOP_CONCAT:
        st = concat(&a, &b, out);
        break;
    case XOP_CMP:
        st = compare(n->sub, &a, &b, &r, exc);
        put_bool(out, r);
        break;
    case XOP_AND:
        put_bool(out, a.u.b && b.u.b);
        break;
    default:
        put_bool(out, a.u.b || b.u.b);
        break; /* XOP_OR */
    }
    drop(&a);
    drop(&b);
    return st == WF_OK ? st : fail(st, out);
}

/* &&, ||, ?:, ?? evaluate only what they need. */
static wf_status eval_lazy(const xnode *n, const wfm_env *env, wf_value *out, wf_value *exc)
{
    wf_value c;
    wf_status st = wfm_expr__eval(n->a, env, &c, exc);
    if (st != WF_OK)
        return fail(st, out);
    if (n->op == XOP_COALESCE) {
        if (!wf_is_null(&c)) {
            *out = c;
            return WF_OK;
        }
        return wfm_expr__eval(n->b, env, out, exc);
    }
    bool b = c.u.b;
    if (n->op == XOP_COND)
        return wfm_expr__eval(b ? n->b : n->c, env, out, exc);
    if (n->op == XOP_ANDALSO ? !b : b) {
        put_bool(out, b);
        return WF_OK;
    }
    return wfm_expr__eval(n->b, env, out, exc);
}

/* Members of an Object (or a record without that field) found at run time: properties and
 * the methods VB lets one call without parentheses (obj.Trim, obj.ToString). */
static const struct {
    wf_kind kind; /* WF_K_NULL: any non-null value */
    const char *name;
    uint8_t fn;
    int64_t param;
} late_members[] = {
    {WF_K_RECORD, "Count", XF_REC_COUNT, 0},
    {WF_K_RECORD, "Keys", XF_REC_KEYS, 0},
    {WF_K_RECORD, "Values", XF_REC_VALUES, 0},
    {WF_K_STRING, "Length", XF_LENGTH, 0},
    {WF_K_STRING, "Trim", XF_TRIM, 3},
    {WF_K_STRING, "TrimStart", XF_TRIM, 1},
    {WF_K_STRING, "TrimEnd", XF_TRIM, 2},
    {WF_K_STRING, "ToUpper", XF_TOUPPER, 0},
    {WF_K_STRING, "ToLower", XF_TOLOWER, 0},
    {WF_K_STRING, "ToUpperInvariant", XF_TOUPPER, 0},
    {WF_K_STRING, "ToLowerInvariant", XF_TOLOWER, 0},
    {WF_K_LIST, "Count", XF_COUNT, 0},
    {WF_K_EXCEPTION, "Message", XF_MESSAGE, 0},
    {WF_K_DATETIME, "Year", XF_DT_PART, 0},
    {WF_K_DATETIME, "Month", XF_DT_PART, 1},
    {WF_K_DATETIME, "Day", XF_DT_PART, 2},
    {WF_K_DATETIME, "Hour", XF_DT_PART, 3},
    {WF_K_DATETIME, "Minute", XF_DT_PART, 4},
    {WF_K_DATETIME, "Second", XF_DT_PART, 5},
    {WF_K_NULL, "ToString", XF_TOSTRING, 0},
};

static wf_status late_member(const xnode *n, const wf_value *base, wf_value *out, wf_value *exc)
{
    wf_kind k = base->type->kind;
    for (size_t i = 0; i < sizeof late_members / sizeof late_members[0]; i++) {
        if ((late_members[i].kind != k && late_members[i].kind != WF_K_NULL) ||
            strcasecmp(late_members[i].name, n->name) != 0)
            continue;
        xnode call = {.op = XOP_CALL,
                      .sub = late_members[i].fn,
                      .nargs = 1,
                      .param = late_members[i].param,
                      .aux = n->aux};
        wf_value arg = *base; /* borrowed: the call does not release its arguments */
        return wfm_expr__call(&call, &arg, out, exc);
    }
    if (k == WF_K_RECORD)
        return wfm_expr__raise(exc, &wf_exc_key_not_found,
                               "The given key '%s' was not present in the dictionary.", n->name);
    return wfm_expr__raise(exc, &wf_exc_invalid_cast, "'%s' has no member '%s'.", base->type->name,
                           n->name);
}

static wf_status member(const xnode *n, const wf_value *base, wf_value *out, wf_value *exc)
{
    switch (base->type->kind) {
    case WF_K_RECORD: {
        const wf_value *v = wf_value_record_get(base, n->name);
        if (!v)
            return late_member(n, base, out, exc);
        *out = wf_value_retain(v);
        return WF_OK;
    }
    case WF_K_NULL:
        return nullref(exc);
    case WF_K_STRING:
        if (strcmp(n->name, "Length") == 0) {
            *out =
                wf_int32((int32_t)wfm_expr__u8_count(wf_value_str(base), wf_value_str_len(base)));
            return WF_OK;
        }
        break;
    case WF_K_LIST:
        if (strcmp(n->name, "Count") == 0) {
            *out = wf_int32((int32_t)wf_value_list_count(base));
            return WF_OK;
        }
        break;
    case WF_K_EXCEPTION:
        if (strcmp(n->name, "Message") == 0)
            return wf_value_cstring(wf_value_exc_message(base), out);
        break;
    default:
        break;
    }
    return late_member(n, base, out, exc);
}

static wf_status eval_field(const xnode *n, const wfm_env *env, wf_value *out, wf_value *exc)
{
    wf_value base;
    wf_status st = wfm_expr__eval(n->a, env, &base, exc);
    if (st != WF_OK)
        return fail(st, out);
    if ((n->flags & XN_RULE) && wf_is_null(&base))
        return fail(rule_null(exc, n->name), out);
    st = member(n, &base, out, exc);
    wf_value_release(&base);
    return st == WF_OK ? st : fail(st, out);
}

/* base[index] for a list (integer index) or a record (string key). */
static wf_status element(const wf_value *base, const wf_value *index, wf_value *out, wf_value *exc)
{
    wf_kind bk = base->type->kind, ik = index->type->kind;
    if (bk == WF_K_NULL)
        return nullref(exc);
    if (bk == WF_K_LIST && (ik == WF_K_INT32 || ik == WF_K_INT64)) {
        int64_t i = ik == WF_K_INT32 ? index->u.i32 : index->u.i64;
        const wf_value *v = i >= 0 ? wf_value_list_at(base, (size_t)i) : NULL;
        if (!v)
            return wfm_expr__index_error(exc, i, wf_value_list_count(base));
        *out = wf_value_retain(v);
        return WF_OK;
    }
    if (bk == WF_K_RECORD && ik == WF_K_NULL)
        return wfm_expr__raise(exc, &wf_exc_argument_null, "Value cannot be null. (key)");
    if (bk == WF_K_RECORD && ik == WF_K_STRING) {
        const wf_value *v = wf_value_record_get(base, wf_value_str(index));
        if (!v)
            return wfm_expr__raise(exc, &wf_exc_key_not_found,
                                   "The given key '%s' was not present in the dictionary.",
                                   wf_value_str(index));
        *out = wf_value_retain(v);
        return WF_OK;
    }
    return wfm_expr__raise(exc, &wf_exc_invalid_cast, "Cannot index '%s' with '%s'.",
                           base->type->name, index->type->name);
}

static wf_status eval_index(const xnode *n, const wfm_env *env, wf_value *out, wf_value *exc)
{
    wf_value base, index;
    wf_status st = eval2(n, env, &base, &index, exc);
    if (st != WF_OK)
        return fail(st, out);
    if ((n->flags & XN_RULE) && wf_is_null(&base))
        st = rule_null(exc, "[]");
    else
        st = element(&base, &index, out, exc);
    wf_value_release(&base);
    wf_value_release(&index);
    return st == WF_OK ? st : fail(st, out);
}

static void release_all(wf_value *v, size_t count)
{
    for (size_t i = 0; i < count; i++)
        wf_value_release(&v[i]);
}

/* A method's receiver is checked before the other arguments are evaluated in WF3 rules (the
 * target first); plain expressions evaluate every argument, then check. */
static NOINLINE wf_status eval_call(const xnode *n, const wfm_env *env, wf_value *out,
                                    wf_value *exc)
{
    bool rule = (n->flags & XN_RULE) && (n->flags & XN_RECV);
    wf_value args[WFM_EXPR_MAX_ARGS + 1];
    for (unsigned i = 0; i < n->nargs; i++) {
        wf_status st = wfm_expr__eval(n->args[i], env, &args[i], exc);
        if (st != WF_OK) {
            release_all(args, i);
            return fail(st, out);
        }
        if (i == 0 && rule && wf_is_null(&args[0]))
            return fail(rule_null(exc, n->name), out);
    }
    wf_status st;
    if ((n->flags & XN_RECV) && wf_is_null(&args[0]))
        st = nullref(exc);
    else
        st = wfm_expr__call(n, args, out, exc);
    if (st == WF_E_FAULT && rule)
        st = rule_invocation(exc, args[0].type->name, n->name);
    release_all(args, n->nargs);
    return st == WF_OK ? st : fail(st, out);
}

static NOINLINE wf_status eval_new_exc(const xnode *n, const wfm_env *env, wf_value *out,
                                       wf_value *exc)
{
    wf_value msg = wf_null();
    if (n->nargs) {
        wf_status st = wfm_expr__eval(n->args[0], env, &msg, exc);
        if (st != WF_OK)
            return fail(st, out);
    }
    wf_status st;
    if (wf_is_null(&msg)) {
        char text[256];
        snprintf(text, sizeof text, "Exception of type '%s' was thrown.", n->aux->name);
        st = wf_value_exception(n->aux, text, out);
    } else {
        st = wf_value_exception(n->aux, wf_value_str(&msg), out);
    }
    wf_value_release(&msg);
    return st;
}

static NOINLINE wf_status eval_new_list(const xnode *n, const wfm_env *env, wf_value *out,
                                        wf_value *exc)
{
    size_t count = (size_t)n->param;
    wf_value *items = count ? wf_calloc(count, sizeof *items) : NULL;
    if (count && !items)
        return fail(WF_E_NOMEM, out);
    wf_status st = WF_OK;
    size_t done = 0;
    for (; done < count && st == WF_OK; done++)
        st = wfm_expr__eval(n->args[done], env, &items[done], exc);
    if (st == WF_OK)
        st = wf_value_list(n->type, items, count, out);
    else
        done--;
    release_all(items, done);
    wf_free(items);
    return st == WF_OK ? st : fail(st, out);
}

/* A record from key/value pairs, as Dictionary.Add would build it: a null key is
 * ArgumentNullException, a repeated key ArgumentException. */
static NOINLINE wf_status eval_new_rec(const xnode *n, const wfm_env *env, wf_value *out,
                                       wf_value *exc)
{
    size_t pairs = (size_t)n->param;
    wf_value *vals = pairs ? wf_calloc(2 * pairs, sizeof *vals) : NULL;
    const char **keys = pairs ? wf_calloc(pairs, sizeof *keys) : NULL;
    wf_value *values = pairs ? wf_calloc(pairs, sizeof *values) : NULL;
    if (pairs && (!vals || !keys || !values)) {
        wf_free(vals);
        wf_free(keys);
        wf_free(values);
        return fail(WF_E_NOMEM, out);
    }
    wf_status st = WF_OK;
    size_t done = 0;
    for (; done < 2 * pairs && st == WF_OK; done++)
        st = wfm_expr__eval(n->args[done], env, &vals[done], exc);
    if (st != WF_OK)
        done--;
    for (size_t i = 0; i < pairs && st == WF_OK; i++) {
        if (wf_is_null(&vals[2 * i])) {
            st = wfm_expr__raise(exc, &wf_exc_argument_null, "Value cannot be null. (key)");
            break;
        }
        keys[i] = wf_value_str(&vals[2 * i]);
        values[i] = vals[2 * i + 1];
        for (size_t j = 0; j < i; j++)
            if (strcmp(keys[j], keys[i]) == 0) {
                st = wfm_expr__raise(exc, &wf_exc_argument,
                                     "An item with the same key has already been added. Key: %s",
                                     keys[i]);
                break;
            }
    }
    if (st == WF_OK)
        st = wf_value_record(keys, values, pairs, out);
    release_all(vals, done);
    wf_free(vals);
    wf_free(keys);
    wf_free(values);
    return st == WF_OK ? st : fail(st, out);
}

/* Add x to a LINQ Sum of type kind k (checked as Enumerable.Sum). */
static bool sum_add(wf_kind k, const wf_value *x, int64_t *acc, double *dacc, wf_decimal *macc)
{
    if (k == WF_K_DOUBLE) {
        *dacc += x->u.d;
        return true;
    }
    if (k == WF_K_DECIMAL)
        return wf_decimal_add(*macc, x->u.dec, macc) == WF_OK;
    int64_t v = k == WF_K_INT32 ? x->u.i32 : x->u.i64;
    return !__builtin_add_overflow(*acc, v, acc) &&
           (k != WF_K_INT32 || (*acc <= INT32_MAX && *acc >= INT32_MIN));
}

/* list.Where/Any/All/Count/Select/First/Sum(lambda): the body runs once per element (in
 * order, stopping early for Any, All and First) in an environment whose one slot is it. */
static NOINLINE wf_status eval_lambda(const xnode *n, const wfm_env *env, wf_value *out,
                                      wf_value *exc)
{
    wf_value list;
    wf_status st = wfm_expr__eval(n->a, env, &list, exc);
    if (st != WF_OK)
        return fail(st, out);
    if (wf_is_null(&list))
        return fail(wfm_expr__raise(exc, &wf_exc_argument_null,
                                    "Value cannot be null. (Parameter 'source')"),
                    out);
    size_t count = wf_value_list_count(&list), kept = 0;
    bool collect = n->sub == XL_WHERE || n->sub == XL_SELECT;
    wf_value *items = collect && count ? wf_calloc(count, sizeof *items) : NULL;
    if (collect && count && !items) {
        wf_value_release(&list);
        return fail(WF_E_NOMEM, out);
    }
    wf_value item;
    wfm_env frame = {(wfm_env *)env, &item, 1}; /* read only: the body cannot assign */
    bool done = false, found = false;
    int64_t acc = 0;
    double dacc = 0;
    wf_decimal macc = wf_decimal_from_int64(0);
    *out = wf_null();
    for (size_t i = 0; i < count && !done && st == WF_OK; i++) {
        item = *wf_value_list_at(&list, i); /* borrowed from the list */
        wf_value r;
        st = wfm_expr__eval(n->b, &frame, &r, exc);
        if (st != WF_OK)
            break;
        switch (n->sub) {
        case XL_WHERE:
            if (r.u.b)
                items[kept++] = wf_value_retain(&item);
            break;
        case XL_SELECT:
            items[kept++] = r;
            r = wf_null();
            break;
        case XL_ANY:
        case XL_FIRST:
            done = found = r.u.b;
            break;
        case XL_ALL:
            done = !r.u.b;
            break;
        case XL_COUNT:
            kept += r.u.b;
            break;
        case XL_SUM:
            if (!sum_add(n->type->kind, &r, &acc, &dacc, &macc))
                st = wfm_expr__raise(exc, &wf_exc_overflow, WFM_MSG_OVERFLOW);
            break;
        default:
            break;
        }
        wf_value_release(&r);
    }
    if (st == WF_OK) {
        wf_kind k = n->type->kind;
        switch (n->sub) {
        case XL_WHERE:
        case XL_SELECT:
            st = wf_value_list(n->type, items, kept, out);
            break;
        case XL_ANY:
            put_bool(out, found);
            break;
        case XL_ALL:
            put_bool(out, !done);
            break;
        case XL_COUNT:
            *out = wf_int32((int32_t)kept);
            break;
        case XL_FIRST:
            if (found)
                *out = wf_value_retain(&item);
            else if (n->param) /* FirstOrDefault */
                *out = wf_type_default(n->type);
            else
                st = wfm_expr__raise(exc, &wf_exc_invalid_operation,
                                     "Sequence contains no matching element");
            break;
        default:
            *out = k == WF_K_DOUBLE  ? wf_double(dacc)
                   : k == WF_K_INT32 ? wf_int32((int32_t)acc)
                   : k == WF_K_INT64 ? wf_int64(acc)
                                     : wf_dec(macc);
            break;
        }
    }
    if (collect)
        release_all(items, kept);
    wf_free(items);
    wf_value_release(&list);
    return st == WF_OK ? st : fail(st, out);
}

wf_status wfm_expr__eval(const xnode *n, const wfm_env *env, wf_value *out, wf_value *exc)
{
    switch ((xop)n->op) {
    case XOP_CONST:
        *out = n->k;
        return WF_OK;
    case XOP_SLOT:
        return eval_slot(n, env, out, exc);
    case XOP_CONV:
    case XOP_NEG:
    case XOP_NOT:
        return eval_unary(n, env, out, exc);
    case XOP_ARITH:
    case XOP_CONCAT:
    case XOP_CMP:
    case XOP_AND:
    case XOP_OR:
        return eval_binary(n, env, out, exc);
    case XOP_ANDALSO:
    case XOP_ORELSE:
    case XOP_COALESCE:
    case XOP_COND:
        return eval_lazy(n, env, out, exc);
    case XOP_FIELD:
        return eval_field(n, env, out, exc);
    case XOP_INDEX:
        return eval_index(n, env, out, exc);
    case XOP_CALL:
        return eval_call(n, env, out, exc);
    case XOP_NEW_EXC:
        return eval_new_exc(n, env, out, exc);
    case XOP_NEW_LIST:
        return eval_new_list(n, env, out, exc);
    case XOP_NEW_REC:
        return eval_new_rec(n, env, out, exc);
    case XOP_LAMBDA:
        return eval_lambda(n, env, out, exc);
    case XOP_NOW: {
        int64_t us = wfm_expr__now_us();
        *out = wf_datetime_us(n->param ? us - us % 86400000000LL : us);
        return WF_OK;
    }
    }
    return fail(wfm_expr__raise(exc, &wf_exc_invalid_operation, "bad expression node"), out);
}

/* ---- quick forms (wfm_expr_int.h) ----------------------------------------------------- */
static bool is_i32_slot(const xnode *n)
{
    return n->op == XOP_SLOT && n->type == &wf_type_int32;
}

static bool is_i32_const(const xnode *n)
{
    return n->op == XOP_CONST && n->k.type == &wf_type_int32;
}

void wfm_expr__quick_prepare(wfm_expr *e)
{
    const xnode *n = e->root;
    e->quick = XQ_NONE;
    e->quick_op = 0;
    e->quick_k = 0;
    e->hops = e->index = 0;
    if (n->op == XOP_SLOT) {
        e->quick = XQ_SLOT;
    } else if (n->op == XOP_CMP && is_i32_slot(n->a) && is_i32_const(n->b)) {
        e->quick = XQ_SLOT_CMP_I32;
    } else if (n->op == XOP_ARITH && !(n->flags & XN_RULE) && n->sub <= XA_MUL &&
               n->type == &wf_type_int32 && is_i32_slot(n->a) && is_i32_const(n->b)) {
        e->quick = XQ_SLOT_ARITH_I32;
    } else {
        return;
    }
    const xnode *slot = e->quick == XQ_SLOT ? n : n->a;
    e->hops = slot->hops;
    e->index = slot->index;
    if (e->quick != XQ_SLOT) {
        e->quick_op = n->sub;
        e->quick_k = n->b->k.u.i32;
    }
}

static bool cmp_i32(int op, int32_t a, int32_t b)
{
    switch (op) {
    case XC_EQ:
        return a == b;
    case XC_NE:
        return a != b;
    case XC_LT:
        return a < b;
    case XC_LE:
        return a <= b;
    case XC_GT:
        return a > b;
    default:
        return a >= b;
    }
}

/* Overflow: false, and the tree raises the OverflowException. */
static bool arith_i32_quick(int op, int32_t a, int32_t b, int32_t *r)
{
    if (op == XA_ADD)
        return !__builtin_add_overflow(a, b, r);
    if (op == XA_SUB)
        return !__builtin_sub_overflow(a, b, r);
    return !__builtin_mul_overflow(a, b, r);
}

bool wfm_expr__quick_eval(const wfm_expr *e, const wfm_env *env, wf_value *out)
{
    for (uint32_t h = 0; env && h < e->hops; h++)
        env = env->parent;
    if (!env || e->index >= env->count)
        return false;
    const wf_value *v = &env->slots[e->index];
    if (e->quick == XQ_SLOT) {
        *out = keep(v);
        return true;
    }
    if (v->type != &wf_type_int32)
        return false;
    if (e->quick == XQ_SLOT_CMP_I32) {
        put_bool(out, cmp_i32(e->quick_op, v->u.i32, e->quick_k));
        return true;
    }
    int32_t r;
    if (!arith_i32_quick(e->quick_op, v->u.i32, e->quick_k, &r))
        return false;
    out->type = &wf_type_int32;
    memset(&out->u, 0, sizeof out->u);
    out->u.i32 = r;
    return true;
}

bool wfm_expr__quick_store(const wfm_expr *e, wfm_env *env, const wf_value *value)
{
    if (e->quick != XQ_SLOT || value->type != e->root->type ||
        ((1u << value->type->kind) & HEAP_KINDS))
        return false;
    for (uint32_t h = 0; env && h < e->hops; h++)
        env = env->parent;
    if (!env || e->index >= env->count)
        return false;
    wf_value *slot = &env->slots[e->index];
    drop(slot);
    slot->type = value->type;
    slot->u = value->u;
    return true;
}

/* ---- store ---------------------------------------------------------------------------- */
/* A copy of record `rec` with `key` set to `value` (added when absent). */
static wf_status record_with(const wf_value *rec, const char *key, const wf_value *value,
                             wf_value *out)
{
    size_t count = wf_value_record_count(rec);
    const char **keys = wf_calloc(count + 1, sizeof *keys);
    wf_value *vals = wf_calloc(count + 1, sizeof *vals);
    wf_status st = WF_E_NOMEM;
    if (keys && vals) {
        size_t n = 0;
        bool found = false;
        for (size_t i = 0; i < count; i++, n++) {
            keys[n] = wf_value_record_key(rec, i);
            found = found || strcmp(keys[n], key) == 0;
            vals[n] = strcmp(keys[n], key) == 0 ? *value : *wf_value_record_at(rec, i);
        }
        if (!found) {
            keys[n] = key;
            vals[n++] = *value;
        }
        st = wf_value_record(keys, vals, n, out);
    }
    wf_free(keys);
    wf_free(vals);
    return st;
}

/* A copy of list `list` with element i converted and replaced. */
static wf_status list_with(const wf_value *list, const wf_value *index, const wf_value *value,
                           wf_value *out, wf_value *exc)
{
    wf_kind ik = index->type->kind;
    if (ik != WF_K_INT32 && ik != WF_K_INT64)
        return bad_cast(index, &wf_type_int32, exc);
    int64_t i = ik == WF_K_INT32 ? index->u.i32 : index->u.i64;
    size_t count = wf_value_list_count(list);
    if (i < 0 || (uint64_t)i >= count)
        return wfm_expr__index_error(exc, i, count);
    const wf_type *elem = list->type->elem ? list->type->elem : &wf_type_object;
    wf_value conv;
    wf_status st = wfm_expr__conv(value, elem, XV_IMPLICIT, &conv, exc);
    if (st != WF_OK)
        return st;
    wf_value *items = wf_calloc(count, sizeof *items);
    st = WF_E_NOMEM;
    if (items) {
        for (size_t k = 0; k < count; k++)
            items[k] = (int64_t)k == i ? conv : *wf_value_list_at(list, k);
        st = wf_value_list(list->type, items, count, out);
    }
    wf_free(items);
    wf_value_release(&conv);
    return st;
}

/* rec.name = value / rec[key] = value / list[i] = value: build the new container, then store
 * it where the container came from (values are immutable). */
static wf_status store_into(const xnode *n, wfm_env *env, const wf_value *value, wf_value *exc)
{
    wf_value base, index = wf_null(), updated = wf_null();
    wf_status st = wfm_expr__eval(n->a, env, &base, exc);
    if (st != WF_OK)
        return st;
    if (n->op == XOP_INDEX && (st = wfm_expr__eval(n->b, env, &index, exc)) != WF_OK) {
        wf_value_release(&base);
        return st;
    }
    wf_kind bk = base.type->kind;
    if (bk == WF_K_NULL)
        st = nullref(exc);
    else if (n->op == XOP_FIELD && bk == WF_K_RECORD)
        st = record_with(&base, n->name, value, &updated);
    else if (n->op == XOP_INDEX && bk == WF_K_RECORD && index.type->kind == WF_K_STRING)
        st = record_with(&base, wf_value_str(&index), value, &updated);
    else if (n->op == XOP_INDEX && bk == WF_K_LIST)
        st = list_with(&base, &index, value, &updated, exc);
    else
        st = wfm_expr__raise(exc, &wf_exc_invalid_cast, "Cannot assign into a member of '%s'.",
                             base.type->name);
    if (st == WF_OK)
        st = wfm_expr__store(n->a, env, &updated, exc);
    wf_value_release(&updated);
    wf_value_release(&index);
    wf_value_release(&base);
    return st;
}

wf_status wfm_expr__store(const xnode *n, wfm_env *env, const wf_value *value, wf_value *exc)
{
    if (n->op == XOP_FIELD || n->op == XOP_INDEX)
        return store_into(n, env, value, exc);
    wf_value *slot = n->op == XOP_SLOT ? slot_of(n, env) : NULL;
    if (!slot)
        return wfm_expr__raise(exc, &wf_exc_invalid_operation, "expression is not assignable");
    wf_value v;
    wf_status st = wfm_expr__conv(value, n->type, XV_IMPLICIT, &v, exc);
    if (st != WF_OK)
        return st;
    drop(slot);
    *slot = v;
    return WF_OK;
}

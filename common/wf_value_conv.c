/* wf_value_conv.c — equality, ordering and checked conversion between value types
 * (wf_value.h). Numbers compare exactly: integers as integers, decimals by value (wf_decimal.h),
 * doubles as doubles. Narrowing is always range-checked; nothing wraps silently. */
#include "wf_value.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "wf_value_int.h"

/* Integers and decimals as Decimal (exact). */
static wf_decimal as_decimal(const wf_value *v)
{
    switch (v->type->kind) {
    case WF_K_INT32:
        return wf_decimal_from_int64(v->u.i32);
    case WF_K_INT64:
        return wf_decimal_from_int64(v->u.i64);
    default:
        return v->u.dec;
    }
}

static int64_t as_int64(const wf_value *v)
{
    return v->type->kind == WF_K_INT32 ? v->u.i32 : v->u.i64;
}

static double as_double(const wf_value *v)
{
    switch (v->type->kind) {
    case WF_K_INT32:
        return v->u.i32;
    case WF_K_INT64:
        return (double)v->u.i64;
    case WF_K_DECIMAL:
        return wf_decimal_to_double(v->u.dec);
    default:
        return v->u.d;
    }
}

/* -1, 0, 1; 2 when unordered (a NaN is involved). */
static int num_cmp(const wf_value *a, const wf_value *b)
{
    if (a->type->kind == WF_K_DOUBLE || b->type->kind == WF_K_DOUBLE) {
        double x = as_double(a), y = as_double(b);
        if (isnan(x) || isnan(y))
            return 2;
        return x < y ? -1 : x > y;
    }
    if (a->type->kind == WF_K_DECIMAL || b->type->kind == WF_K_DECIMAL)
        return wf_decimal_cmp(as_decimal(a), as_decimal(b));
    int64_t x = as_int64(a), y = as_int64(b);
    return x < y ? -1 : x > y;
}

static int str_cmp(const wf_value *a, const wf_value *b)
{
    size_t la = wf_value_str_len(a), lb = wf_value_str_len(b);
    int c = memcmp(wf_value_str(a), wf_value_str(b), la < lb ? la : lb);
    if (c)
        return c < 0 ? -1 : 1;
    return la < lb ? -1 : la > lb;
}

static bool list_equal(const wf_value *a, const wf_value *b)
{
    size_t n = wf_value_list_count(a);
    if (n != wf_value_list_count(b))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!wf_value_equal(wf_value_list_at(a, i), wf_value_list_at(b, i)))
            return false;
    return true;
}

/* Records are equal when they hold the same keys with equal values, in any order. */
static bool record_equal(const wf_value *a, const wf_value *b)
{
    size_t n = wf_value_record_count(a);
    if (n != wf_value_record_count(b))
        return false;
    for (size_t i = 0; i < n; i++) {
        const wf_value *other = wf_value_record_get(b, wf_value_record_key(a, i));
        if (!other || !wf_value_equal(wf_value_record_at(a, i), other))
            return false;
    }
    return true;
}

bool wf_value_equal(const wf_value *a, const wf_value *b)
{
    wf_kind ka = a->type->kind, kb = b->type->kind;
    if (wf_type_is_numeric(a->type) && wf_type_is_numeric(b->type)) {
        if (ka == WF_K_DOUBLE && kb == WF_K_DOUBLE && isnan(a->u.d) && isnan(b->u.d))
            return true; /* Double.Equals(NaN) */
        return num_cmp(a, b) == 0;
    }
    if (ka != kb)
        return false;
    switch (ka) {
    case WF_K_NULL:
        return true;
    case WF_K_BOOL:
        return a->u.b == b->u.b;
    case WF_K_STRING:
        return str_cmp(a, b) == 0;
    case WF_K_LIST:
        return list_equal(a, b);
    case WF_K_RECORD:
        return record_equal(a, b);
    case WF_K_EXCEPTION:
        return a->u.exc == b->u.exc || (a->type == b->type && strcmp(wf_value_exc_message(a),
                                                                     wf_value_exc_message(b)) == 0);
    default:
        return a->u.i64 == b->u.i64; /* DateTime, TimeSpan, Token */
    }
}

wf_status wf_value_compare(const wf_value *a, const wf_value *b, int *result, wf_error *err)
{
    wf_kind ka = a->type->kind, kb = b->type->kind;
    int c = 2;
    if (wf_type_is_numeric(a->type) && wf_type_is_numeric(b->type))
        c = num_cmp(a, b);
    else if (ka == kb && ka == WF_K_STRING)
        c = str_cmp(a, b);
    else if (ka == kb && ka == WF_K_BOOL)
        c = (int)a->u.b - (int)b->u.b;
    else if (ka == kb && (ka == WF_K_DATETIME || ka == WF_K_TIMESPAN))
        c = a->u.i64 < b->u.i64 ? -1 : a->u.i64 > b->u.i64;
    else
        return wf_error_set(err, WF_E_TYPE, NULL, "cannot compare %s with %s", a->type->name,
                            b->type->name);
    if (c == 2) /* NaN sorts first, as Double.CompareTo does */
        c = isnan(as_double(a)) ? (isnan(as_double(b)) ? 0 : -1) : 1;
    *result = c;
    return WF_OK;
}

/* ---- conversion ----------------------------------------------------------------------- */

static bool is_reference(const wf_type *t)
{
    switch (t->kind) {
    case WF_K_NULL:
    case WF_K_STRING:
    case WF_K_LIST:
    case WF_K_RECORD:
    case WF_K_EXCEPTION:
    case WF_K_OBJECT:
    case WF_K_TOKEN:
        return true;
    default:
        return false;
    }
}

static wf_status type_error(const wf_value *v, const wf_type *to, wf_error *err)
{
    return wf_error_set(err, WF_E_TYPE, NULL, "cannot convert %s to %s", v->type->name, to->name);
}

/* Names the value in a range error: "value 3000000000 is out of range for Int32". */
static wf_status range_error(const wf_value *v, const wf_type *to, wf_error *err)
{
    wf_buf text;
    wf_buf_init(&text);
    wf_value_to_text(v, &text);
    wf_status st = wf_error_set(err, WF_E_RANGE, NULL, "value %s is out of range for %s",
                                text.oom ? "?" : text.data, to->name);
    wf_buf_fini(&text);
    return st;
}

static wf_status to_integer(const wf_value *v, const wf_type *to, wf_value *out, wf_error *err)
{
    int64_t lo = to->kind == WF_K_INT32 ? INT32_MIN : INT64_MIN;
    int64_t hi = to->kind == WF_K_INT32 ? INT32_MAX : INT64_MAX, n;
    if (v->type->kind == WF_K_DOUBLE) {
        double d = trunc(v->u.d);
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
            return range_error(v, to, err);
        n = (int64_t)d;
    } else if (v->type->kind == WF_K_DECIMAL) {
        /* truncates toward zero, as (int)decimal does */
        if (wf_decimal_to_int64(v->u.dec, lo, hi, &n) != WF_OK)
            return range_error(v, to, err);
    } else if (v->type->kind == WF_K_INT32 || v->type->kind == WF_K_INT64) {
        n = as_int64(v);
    } else {
        return type_error(v, to, err);
    }
    if (n < lo || n > hi)
        return range_error(v, to, err);
    *out = to->kind == WF_K_INT32 ? wf_int32((int32_t)n) : wf_int64(n);
    return WF_OK;
}

static wf_status to_decimal(const wf_value *v, const wf_type *to, wf_value *out, wf_error *err)
{
    if (v->type->kind == WF_K_DOUBLE) {
        wf_decimal d;
        if (wf_decimal_from_double(v->u.d, &d) != WF_OK)
            return range_error(v, to, err);
        *out = wf_dec(d);
        return WF_OK;
    }
    if (v->type->kind != WF_K_INT32 && v->type->kind != WF_K_INT64)
        return type_error(v, to, err);
    *out = wf_dec(as_decimal(v));
    return WF_OK;
}

static wf_status to_string(const wf_value *v, wf_value *out, wf_error *err)
{
    wf_buf text;
    wf_buf_init(&text);
    wf_value_to_text(v, &text);
    size_t len;
    char *s = wf_buf_detach(&text, &len);
    if (!s)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory converting to String");
    if (wf_value_string_take(s, len, out) != WF_OK)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory converting to String");
    return WF_OK;
}

/* List(A) -> List(B): element-wise; when no element changes, the payload is shared. */
static wf_status to_list(const wf_value *v, const wf_type *to, wf_value *out, wf_error *err)
{
    if (v->type->kind != WF_K_LIST)
        return type_error(v, to, err);
    size_t n = wf_value_list_count(v);
    bool same = true;
    for (size_t i = 0; i < n && same; i++)
        same = to->elem->kind == WF_K_OBJECT || wf_value_list_at(v, i)->type == to->elem;
    if (same) {
        *out = wf_value_retain(v);
        out->type = to;
        return WF_OK;
    }
    wf_value *items = wf_calloc(n, sizeof *items);
    if (!items)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory converting a list");
    wf_status st = WF_OK;
    size_t done = 0;
    for (; done < n && st == WF_OK; done++)
        st = wf_value_convert(wf_value_list_at(v, done), to->elem, &items[done], err);
    if (st == WF_OK)
        st = wf_value_list_take(to, items, n, out);
    else
        while (done-- > 0)
            wf_value_release(&items[done]);
    wf_free(items);
    if (st != WF_OK)
        wf_error_set(err, st, NULL, "out of memory converting a list");
    return st;
}

static wf_status from_string(const wf_value *v, const wf_type *to, wf_value *out, wf_error *err)
{
    switch (to->kind) {
    case WF_K_BOOL:
    case WF_K_INT32:
    case WF_K_INT64:
    case WF_K_DOUBLE:
    case WF_K_DECIMAL:
    case WF_K_DATETIME:
    case WF_K_TIMESPAN:
    case WF_K_LIST:
    case WF_K_RECORD:
        return wf_value_parse(NULL, to, wf_value_str(v), out, err);
    default:
        return type_error(v, to, err);
    }
}

static wf_status convert_value(const wf_value *v, const wf_type *to, wf_value *out, wf_error *err)
{
    if (v->type->kind == WF_K_STRING && to->kind != WF_K_STRING)
        return from_string(v, to, out, err);
    switch (to->kind) {
    case WF_K_INT32:
    case WF_K_INT64:
        return to_integer(v, to, out, err);
    case WF_K_DECIMAL:
        return to_decimal(v, to, out, err);
    case WF_K_DOUBLE:
        if (!wf_type_is_numeric(v->type))
            return type_error(v, to, err);
        *out = wf_double(as_double(v));
        return WF_OK;
    case WF_K_STRING:
        return to_string(v, out, err);
    case WF_K_LIST:
        return to_list(v, to, out, err);
    case WF_K_EXCEPTION:
        if (!wf_type_is_a(v->type, to))
            return type_error(v, to, err);
        *out = wf_value_retain(v);
        return WF_OK;
    default:
        if (v->type->kind != to->kind)
            return type_error(v, to, err);
        *out = wf_value_retain(v);
        out->type = to;
        return WF_OK;
    }
}

wf_status wf_value_convert(const wf_value *v, const wf_type *to, wf_value *out, wf_error *err)
{
    *out = wf_null();
    if (v->type == to || to->kind == WF_K_OBJECT) {
        *out = wf_value_retain(v);
        return WF_OK;
    }
    if (wf_is_null(v)) {
        if (is_reference(to))
            return WF_OK;
        return wf_error_set(err, WF_E_TYPE, NULL, "cannot convert null to %s", to->name);
    }
    wf_status st = convert_value(v, to, out, err);
    if (st != WF_OK)
        wf_value_release(out);
    return st;
}

bool wf_type_assignable(const wf_type *to, const wf_type *from)
{
    if (!to || !from)
        return false;
    if (to == from || to->kind == WF_K_OBJECT)
        return true;
    switch (from->kind) {
    case WF_K_NULL:
        return is_reference(to);
    case WF_K_INT32:
        return to->kind == WF_K_INT64 || to->kind == WF_K_DOUBLE || to->kind == WF_K_DECIMAL;
    case WF_K_INT64:
        return to->kind == WF_K_DOUBLE || to->kind == WF_K_DECIMAL;
    case WF_K_EXCEPTION:
        return to->kind == WF_K_EXCEPTION && wf_type_is_a(from, to);
    default:
        return false;
    }
}

/* wf_value.h — the typed values both runtimes compute with: Boolean, Int32, Int64, Double,
 * Decimal (.NET's System.Decimal, wf_decimal.h), String (UTF-8), DateTime
 * (microseconds since the Unix epoch, UTC), TimeSpan (microseconds), List, Record, Exception
 * and null. Heap payloads (strings, lists, records, exceptions) are immutable and shared by
 * an atomic reference count, so a value copy is cheap and values may cross threads
 * (docs/architecture.md "The modern model", docs/formats.md "Values"). */
#ifndef WF_VALUE_H
#define WF_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wf_decimal.h"
#include "wf_error.h"
#include "wf_mem.h"

/* ---- types ---------------------------------------------------------------------------- */
typedef enum wf_kind {
    WF_K_NULL = 0, /* the type of the null literal; also "no value" */
    WF_K_BOOL,
    WF_K_INT32,
    WF_K_INT64,
    WF_K_DOUBLE,
    WF_K_DECIMAL,
    WF_K_STRING,
    WF_K_DATETIME,
    WF_K_TIMESPAN,
    WF_K_LIST,      /* elem */
    WF_K_RECORD,    /* string keys -> values of any type */
    WF_K_EXCEPTION, /* name + parent: the exception hierarchy */
    WF_K_OBJECT,    /* x:Object: any value, checked at run time */
    WF_K_TOKEN,     /* CompensationToken */
} wf_kind;

/* Types are immutable. Built-in types are static; list and exception types are interned in
 * a wf_types table, so two equal types are the same pointer (compare with ==). */
typedef struct wf_type wf_type;
struct wf_type {
    wf_kind kind;
    const char *name;     /* "Int32", "List(Int32)", "InvalidOperationException" */
    const wf_type *elem;  /* WF_K_LIST: element type */
    const wf_type *base;  /* WF_K_EXCEPTION: parent exception type, NULL for Exception */
};

extern const wf_type wf_type_null, wf_type_bool, wf_type_int32, wf_type_int64, wf_type_double,
    wf_type_decimal, wf_type_string, wf_type_datetime, wf_type_timespan, wf_type_record,
    wf_type_object, wf_type_token;
/* List(Object), the type JSON arrays get; wf_types_list returns static list types such as this
 * one for every built-in scalar element type, so they are equal across wf_types tables. */
extern const wf_type wf_type_list_object;
/* Built-in exceptions (docs/architecture.md "Exceptions are values"): */
extern const wf_type wf_exc_exception, wf_exc_system, wf_exc_application,
    wf_exc_invalid_operation, wf_exc_argument, wf_exc_argument_null, wf_exc_argument_range,
    wf_exc_arithmetic, wf_exc_divide_by_zero, wf_exc_overflow, wf_exc_null_reference,
    wf_exc_format, wf_exc_invalid_cast, wf_exc_index_range, wf_exc_key_not_found,
    wf_exc_not_supported, wf_exc_timeout, wf_exc_operation_canceled, wf_exc_native,
    wf_exc_workflow_terminated, wf_exc_rule, wf_exc_rule_evaluation, wf_exc_target_invocation;

/* The interning table for constructed types. Thread-safe (a mutex); filled mostly at load. */
typedef struct wf_types wf_types;
wf_types *wf_types_create(void);
void wf_types_destroy(wf_types *types);
/* List of elem; NULL on out of memory. */
const wf_type *wf_types_list(wf_types *types, const wf_type *elem);
/* Declare (or find) an exception type with the given parent (NULL = Exception). A name that
 * exists with a different parent is WF_E_TYPE. */
wf_status wf_types_exception(wf_types *types, const char *name, const wf_type *parent,
                             const wf_type **out, wf_error *err);
/* Find a type by its CLR-style name without namespace prefix: "Int32", "String", "Boolean",
 * "Int64", "Double", "Decimal", "DateTime", "TimeSpan", "Object", "CompensationToken",
 * "Exception", "InvalidOperationException", ..., and "List(Int32)" / "List(x:Int32)" forms
 * (prefixes inside parentheses are ignored). Also accepts the C#-ish aliases used in
 * expressions: int, long, double, decimal, string, bool, object. NULL if unknown. */
const wf_type *wf_types_find(wf_types *types, const char *name);

/* The CLR primitive a type library, a .rules CodePrimitiveExpression or an <x:Key> element
 * names, as the scalar type the runtimes hold it in: Boolean, Int32, Int64, Double, Decimal,
 * String, DateTime, TimeSpan, and the narrower CLR types widened (Int16, Byte, SByte,
 * UInt16 -> Int32; UInt32 -> Int64; Single -> Double; Char -> String). Exact names, no
 * prefix; NULL for anything else. */
const wf_type *wf_type_primitive(const char *clr_name);

bool wf_type_is_numeric(const wf_type *t);
/* Exception subtyping: true if t is sub or a descendant of it. For non-exceptions: t == sub. */
bool wf_type_is_a(const wf_type *t, const wf_type *ancestor);
/* Exception inheritance depth (Exception = 0), for "most specific catch". */
int wf_type_depth(const wf_type *t);

/* ---- values ----------------------------------------------------------------------------- */
typedef struct wf_str wf_str;   /* refcounted UTF-8, NUL-terminated */
typedef struct wf_list wf_list; /* refcounted array of values, immutable once built */
typedef struct wf_rec wf_rec;   /* refcounted ordered (key, value) pairs */
typedef struct wf_exc wf_exc;   /* refcounted: type + message (+ optional inner) */

typedef struct wf_value {
    const wf_type *type; /* never NULL; &wf_type_null for null */
    union {
        bool b;
        int32_t i32;
        int64_t i64;    /* Int64, DateTime, TimeSpan (us), Token */
        double d;
        wf_decimal dec; /* Decimal */
        wf_str *s;
        wf_list *list;
        wf_rec *rec;
        wf_exc *exc;
    } u;
} wf_value;

/* A copy of a constant: a literal built here went through a stack temporary written with
 * stores of two sizes and read back whole, a store-forwarding stall at every use. */
extern const wf_value wf_null_value;
static inline wf_value wf_null(void) { return wf_null_value; }
static inline wf_value wf_bool(bool b) { wf_value v = {&wf_type_bool, {.b = b}}; return v; }
static inline wf_value wf_int32(int32_t i) { wf_value v = {&wf_type_int32, {.i32 = i}}; return v; }
static inline wf_value wf_int64(int64_t i) { wf_value v = {&wf_type_int64, {.i64 = i}}; return v; }
static inline wf_value wf_double(double d) { wf_value v = {&wf_type_double, {.d = d}}; return v; }
static inline wf_value wf_dec(wf_decimal d) { wf_value v = {&wf_type_decimal, {.dec = d}}; return v; }
static inline wf_value wf_datetime_us(int64_t us) { wf_value v = {&wf_type_datetime, {.i64 = us}}; return v; }
static inline wf_value wf_timespan_us(int64_t us) { wf_value v = {&wf_type_timespan, {.i64 = us}}; return v; }
static inline bool wf_is_null(const wf_value *v) { return v->type->kind == WF_K_NULL; }

/* default(T) as .NET gives it: false, 0, 0.0, 0m, TimeSpan.Zero, and DateTime.MinValue
 * (0001-01-01T00:00:00, not the Unix epoch) for the value types; null for the reference
 * types (String, List, Record, Exception, Object, CompensationToken) and for a NULL type. */
wf_value wf_type_default(const wf_type *t);

/* Heap values. Each returns WF_E_NOMEM on failure, leaving *out null. */
wf_status wf_value_string(const char *s, size_t len, wf_value *out);
wf_status wf_value_cstring(const char *s, wf_value *out);
/* Take ownership of a wf_malloc'd NUL-terminated string (freed on failure too). */
wf_status wf_value_string_take(char *s, size_t len, wf_value *out);
wf_status wf_value_list(const wf_type *list_type, const wf_value *items, size_t count,
                        wf_value *out);          /* items are retained */
wf_status wf_value_record(const char *const *keys, const wf_value *values, size_t count,
                          wf_value *out);        /* keys copied, values retained */
wf_status wf_value_exception(const wf_type *exc_type, const char *message, wf_value *out);

/* An immortal string whose bytes live in `arena` (reference counting skips it): for literals
 * in immutable definitions shared across threads. */
wf_status wf_value_string_static(wf_arena *arena, const char *s, size_t len, wf_value *out);

const char *wf_value_str(const wf_value *v);     /* String payload; "" for null */
size_t wf_value_str_len(const wf_value *v);
size_t wf_value_list_count(const wf_value *v);
const wf_value *wf_value_list_at(const wf_value *v, size_t index); /* NULL if out of range */
/* The wf_value_list_count items as one array, borrowed from the list; NULL when there are none. */
const wf_value *wf_value_list_items(const wf_value *v);
size_t wf_value_record_count(const wf_value *v);
const char *wf_value_record_key(const wf_value *v, size_t index);
const wf_value *wf_value_record_at(const wf_value *v, size_t index);
const wf_value *wf_value_record_get(const wf_value *v, const char *key); /* NULL if absent */
const char *wf_value_exc_message(const wf_value *v);

/* Copy semantics: retain adds a reference to a heap payload (no-op for scalars);
 * release drops it and sets *v to null. Safe on null values. Inline, so that a scalar costs
 * a test and no call; the payload's atomic count is handled out of line. */
#define WF__HEAP_KINDS                                                                             \
    ((1u << WF_K_STRING) | (1u << WF_K_LIST) | (1u << WF_K_RECORD) | (1u << WF_K_EXCEPTION))
wf_value wf__value_retain_heap(const wf_value *v);
void wf__value_release_heap(wf_value *v);
static inline wf_value wf_value_retain(const wf_value *v)
{
    return ((1u << v->type->kind) & WF__HEAP_KINDS) ? wf__value_retain_heap(v) : *v;
}
static inline void wf_value_release(wf_value *v)
{
    if (!v)
        return;
    if ((1u << v->type->kind) & WF__HEAP_KINDS)
        wf__value_release_heap(v);
    else
        *v = wf_null_value;
}
/* Assign with retain/release: *dst = src. */
void wf_value_set(wf_value *dst, const wf_value *src);

/* Equality as WF's Equals: same type and same contents (strings by bytes, decimals by value
 * whatever their scale (1.0 == 1.00),
 * lists element-wise, records by key in any order, exceptions by type and message).
 * Numeric values of different types compare by value; NaN equals NaN (Double.Equals). */
bool wf_value_equal(const wf_value *a, const wf_value *b);
/* Ordering for comparable kinds (numbers, strings ordinal, DateTime, TimeSpan, Boolean);
 * returns WF_E_TYPE when a and b cannot be compared. */
wf_status wf_value_compare(const wf_value *a, const wf_value *b, int *result, wf_error *err);

/* Convert to type `to` with checks: integer narrowing and double->integer are checked for
 * overflow (WF_E_RANGE, message names the value); double and decimal -> integer truncate
 * toward zero as a C# cast does; double -> decimal as new decimal(double) (15 significant
 * digits); decimal<->double,
 * number->string (wf_value_to_text), List(A) -> List(B) element-wise,
 * string->number parses (WF_E_SYNTAX), null -> null for reference types and WF_E_TYPE for
 * value types. Object accepts anything. */
wf_status wf_value_convert(const wf_value *v, const wf_type *to, wf_value *out, wf_error *err);
/* Whether a value of type `from` may be implicitly converted to `to` at compile time
 * (Int32 -> Int64/Double/Decimal, Int64 -> Double/Decimal, any -> Object,
 * null -> String/List/Record/Exception/Object, exception subtype -> supertype). */
bool wf_type_assignable(const wf_type *to, const wf_type *from);

/* Text <-> value. Parse reads `text` as type t: Boolean true/false (case-insensitive),
 * integers, doubles, Decimal "12.5000" (wf_decimal_parse: the scale as written), DateTime ISO 8601
 * ("2024-03-01T10:00:00Z", date-only, fractional seconds, offsets), TimeSpan
 * "[-][d.]hh:mm:ss[.fffffff]", String as is, List and Record as JSON. */
wf_status wf_value_parse(wf_types *types, const wf_type *t, const char *text, wf_value *out,
                         wf_error *err);
/* Parse any JSON text (strict RFC 8259, UTF-8, read by jansson) into values: integers ->
 * Int32, else Int64; other numbers -> Double (from their own text); strings, true/false,
 * null, arrays -> List(Object), objects -> Record (keys in document order). Errors carry the
 * line and character column inside the text, at the start of the offending token (err->file
 * stays empty): WF_E_SYNTAX (also for duplicate keys), WF_E_RANGE (an integer beyond Int64 or
 * a number beyond Double: refused rather than rounded), WF_E_LIMIT (nested deeper than 256),
 * WF_E_UNSUPPORTED ("\u0000"), WF_E_NOMEM. */
wf_status wf_json_parse(wf_types *types, const char *text, size_t len, wf_value *out,
                        wf_error *err);
/* wf_json_parse, then wf_value_convert to t; numbers that become Decimal (t itself, or the
 * elements of List(Decimal), nested too) are read from their digits (scale as written), not
 * through a Double, and one beyond the Decimal range is refused at its own line:col. */
wf_status wf_json_parse_as(wf_types *types, const wf_type *t, const char *text, size_t len,
                           wf_value *out, wf_error *err);
/* JSON per the output contract: integers and doubles as numbers, String as string, Decimal
 * as string with its scale ("12.5", "12.5000"), DateTime ISO 8601 UTC ("2024-03-01T10:00:00Z", with
 * .ffffff when non-zero), TimeSpan as its wf_timespan_format string, lists as arrays, records as
 * objects, exceptions as {"type": ..., "message": ...}, null as null. */
bool wf_value_to_json(const wf_value *v, wf_buf *out);
/* Plain text as WriteLine and str() show it: strings bare, booleans "True"/"False", Decimal
 * with its scale as ToString() ("1.50", "3"), DateTime ISO 8601, lists and records as JSON. */
bool wf_value_to_text(const wf_value *v, wf_buf *out);

/* DateTime helpers. */
wf_status wf_datetime_parse(const char *text, int64_t *us);
void wf_datetime_format(int64_t us, char *buf, size_t size); /* ISO 8601, UTC, 'Z' */

/* TimeSpan helpers: "[-][d.]hh:mm[:ss[.fffffff]]" or whole days "d" in; out as .NET writes it
 * ("00:00:10", "1.02:03:04.5000000"). WF_E_SYNTAX / WF_E_RANGE. */
wf_status wf_timespan_parse(const char *text, int64_t *us);
void wf_timespan_format(int64_t us, char *buf, size_t size);

/* .NET's ArgumentOutOfRangeException message (parameter named) for s.Substring(start, length)
 * on a string of `count` characters, checks in .NET's order; NULL when the call is valid.
 * Both runtimes raise it, so a rule and its conversion fault alike. */
const char *wf_substring_fault(int64_t start, int64_t length, size_t count);
/* .NET's message for s.PadLeft / s.PadRight with a negative width. */
#define WF_MSG_PAD_NEGATIVE "Non-negative number required. (Parameter 'totalWidth')"

#endif

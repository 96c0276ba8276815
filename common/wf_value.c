/* wf_value.c — built-in types, the interning table for list and exception types, heap values
 * with atomic reference counts, equality, ordering and checked conversion (wf_value.h).
 * Text and JSON live in wf_value_text.c and wf_json.c; payload layouts in wf_value_int.h. */
#include "wf_value.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h> /* snprintf */
#include <string.h>

#include "wf_calendar.h"
#include "wf_value_int.h"

/* ---- built-in types ------------------------------------------------------------------- */

#define SCALAR(var, kind, name) const wf_type var = {kind, name, NULL, NULL};
SCALAR(wf_type_null, WF_K_NULL, "Null")
SCALAR(wf_type_bool, WF_K_BOOL, "Boolean")
SCALAR(wf_type_int32, WF_K_INT32, "Int32")
SCALAR(wf_type_int64, WF_K_INT64, "Int64")
SCALAR(wf_type_double, WF_K_DOUBLE, "Double")
SCALAR(wf_type_decimal, WF_K_DECIMAL, "Decimal")
SCALAR(wf_type_string, WF_K_STRING, "String")
SCALAR(wf_type_datetime, WF_K_DATETIME, "DateTime")
SCALAR(wf_type_timespan, WF_K_TIMESPAN, "TimeSpan")
SCALAR(wf_type_record, WF_K_RECORD, "Record")
SCALAR(wf_type_object, WF_K_OBJECT, "Object")
SCALAR(wf_type_token, WF_K_TOKEN, "CompensationToken")
#undef SCALAR

const wf_value wf_null_value = {&wf_type_null, {0}};

#define EXC(var, name, parent) const wf_type var = {WF_K_EXCEPTION, name, NULL, parent};
EXC(wf_exc_exception, "Exception", NULL)
EXC(wf_exc_system, "SystemException", &wf_exc_exception)
EXC(wf_exc_application, "ApplicationException", &wf_exc_exception)
EXC(wf_exc_invalid_operation, "InvalidOperationException", &wf_exc_system)
EXC(wf_exc_argument, "ArgumentException", &wf_exc_system)
EXC(wf_exc_argument_null, "ArgumentNullException", &wf_exc_argument)
EXC(wf_exc_argument_range, "ArgumentOutOfRangeException", &wf_exc_argument)
EXC(wf_exc_arithmetic, "ArithmeticException", &wf_exc_system)
EXC(wf_exc_divide_by_zero, "DivideByZeroException", &wf_exc_arithmetic)
EXC(wf_exc_overflow, "OverflowException", &wf_exc_arithmetic)
EXC(wf_exc_null_reference, "NullReferenceException", &wf_exc_system)
EXC(wf_exc_format, "FormatException", &wf_exc_system)
EXC(wf_exc_invalid_cast, "InvalidCastException", &wf_exc_system)
EXC(wf_exc_index_range, "IndexOutOfRangeException", &wf_exc_system)
EXC(wf_exc_key_not_found, "KeyNotFoundException", &wf_exc_system)
EXC(wf_exc_not_supported, "NotSupportedException", &wf_exc_system)
EXC(wf_exc_timeout, "TimeoutException", &wf_exc_system)
EXC(wf_exc_operation_canceled, "OperationCanceledException", &wf_exc_system)
EXC(wf_exc_native, "NativeException", &wf_exc_system)
EXC(wf_exc_workflow_terminated, "WorkflowTerminatedException", &wf_exc_exception)
/* WF3's rules engine (docs/wf3-behaviour.md "Rules: faults and their exception types"): known
 * to both runtimes, so a converted rule raises, and a Catch names, the same types. */
EXC(wf_exc_rule, "RuleException", &wf_exc_exception)
EXC(wf_exc_rule_evaluation, "RuleEvaluationException", &wf_exc_rule)
EXC(wf_exc_target_invocation, "TargetInvocationException", &wf_exc_application)
#undef EXC

/* Lists of built-in scalars are static so they compare equal across wf_types tables. */
#define LIST(var, name, elem) static const wf_type var = {WF_K_LIST, name, elem, NULL};
LIST(list_bool, "List(Boolean)", &wf_type_bool)
LIST(list_int32, "List(Int32)", &wf_type_int32)
LIST(list_int64, "List(Int64)", &wf_type_int64)
LIST(list_double, "List(Double)", &wf_type_double)
LIST(list_decimal, "List(Decimal)", &wf_type_decimal)
LIST(list_string, "List(String)", &wf_type_string)
LIST(list_datetime, "List(DateTime)", &wf_type_datetime)
LIST(list_timespan, "List(TimeSpan)", &wf_type_timespan)
LIST(list_record, "List(Record)", &wf_type_record)
#undef LIST
const wf_type wf_type_list_object = {WF_K_LIST, "List(Object)", &wf_type_object, NULL};

static const wf_type *const builtin_types[] = {
    &wf_type_bool,
    &wf_type_int32,
    &wf_type_int64,
    &wf_type_double,
    &wf_type_decimal,
    &wf_type_string,
    &wf_type_datetime,
    &wf_type_timespan,
    &wf_type_record,
    &wf_type_object,
    &wf_type_token,
    &wf_exc_exception,
    &wf_exc_system,
    &wf_exc_application,
    &wf_exc_invalid_operation,
    &wf_exc_argument,
    &wf_exc_argument_null,
    &wf_exc_argument_range,
    &wf_exc_arithmetic,
    &wf_exc_divide_by_zero,
    &wf_exc_overflow,
    &wf_exc_null_reference,
    &wf_exc_format,
    &wf_exc_invalid_cast,
    &wf_exc_index_range,
    &wf_exc_key_not_found,
    &wf_exc_not_supported,
    &wf_exc_timeout,
    &wf_exc_operation_canceled,
    &wf_exc_native,
    &wf_exc_workflow_terminated,
    &wf_exc_rule,
    &wf_exc_rule_evaluation,
    &wf_exc_target_invocation,
    &list_bool,
    &list_int32,
    &list_int64,
    &list_double,
    &list_decimal,
    &list_string,
    &list_datetime,
    &list_timespan,
    &list_record,
    &wf_type_list_object,
};

static const struct {
    const char *alias;
    const wf_type *type;
} type_aliases[] = {
    {"int", &wf_type_int32},       {"long", &wf_type_int64},    {"double", &wf_type_double},
    {"decimal", &wf_type_decimal}, {"string", &wf_type_string}, {"bool", &wf_type_bool},
    {"object", &wf_type_object},   {"Void", &wf_type_null},
};

/* ---- the interning table -------------------------------------------------------------- */

struct wf_types {
    pthread_mutex_t lock;
    wf_arena *arena;   /* constructed types and their names */
    wf_strmap *byname; /* name -> const wf_type * (constructed types only) */
};

wf_types *wf_types_create(void)
{
    wf_types *types = wf_calloc(1, sizeof *types);
    if (!types)
        return NULL;
    types->arena = wf_arena_create(0);
    types->byname = wf_strmap_create(NULL);
    if (!types->arena || !types->byname || pthread_mutex_init(&types->lock, NULL) != 0) {
        wf_arena_destroy(types->arena);
        wf_strmap_destroy(types->byname);
        wf_free(types);
        return NULL;
    }
    return types;
}

void wf_types_destroy(wf_types *types)
{
    if (!types)
        return;
    pthread_mutex_destroy(&types->lock);
    wf_strmap_destroy(types->byname);
    wf_arena_destroy(types->arena);
    wf_free(types);
}

static const wf_type *builtin_by_name(const char *name)
{
    for (size_t i = 0; i < sizeof builtin_types / sizeof *builtin_types; i++)
        if (strcmp(builtin_types[i]->name, name) == 0)
            return builtin_types[i];
    return NULL;
}

/* Make a type in the table's arena and index it; caller holds the lock. */
static const wf_type *types_add(wf_types *types, wf_kind kind, const char *name,
                                const wf_type *elem, const wf_type *base)
{
    wf_type *t = wf_arena_alloc(types->arena, sizeof *t);
    char *copy = t ? wf_arena_strdup(types->arena, name) : NULL;
    if (!copy)
        return NULL;
    *t = (wf_type){kind, copy, elem, base};
    if (wf_strmap_put(types->byname, copy, t) != WF_OK)
        return NULL;
    return t;
}

const wf_type *wf_types_list(wf_types *types, const wf_type *elem)
{
    if (!elem)
        return NULL;
    char name[512];
    int n = snprintf(name, sizeof name, "List(%s)", elem->name);
    if (n < 0 || (size_t)n >= sizeof name)
        return NULL;
    const wf_type *t = builtin_by_name(name);
    if (t && t->elem == elem)
        return t;
    if (!types)
        return NULL;
    pthread_mutex_lock(&types->lock);
    t = wf_strmap_get(types->byname, name);
    if (!t)
        t = types_add(types, WF_K_LIST, name, elem, NULL);
    pthread_mutex_unlock(&types->lock);
    return t;
}

wf_status wf_types_exception(wf_types *types, const char *name, const wf_type *parent,
                             const wf_type **out, wf_error *err)
{
    *out = NULL;
    if (!parent)
        parent = &wf_exc_exception;
    if (parent->kind != WF_K_EXCEPTION)
        return wf_error_set(err, WF_E_TYPE, NULL, "base type %s of %s is not an exception",
                            parent->name, name);
    pthread_mutex_lock(&types->lock);
    const wf_type *t = builtin_by_name(name);
    if (!t)
        t = wf_strmap_get(types->byname, name);
    bool created = false;
    if (!t) {
        t = types_add(types, WF_K_EXCEPTION, name, NULL, parent);
        created = t != NULL;
    }
    pthread_mutex_unlock(&types->lock);
    if (!t)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory declaring %s", name);
    if (t->kind != WF_K_EXCEPTION || (!created && t->base != parent && t != &wf_exc_exception))
        return wf_error_set(err, WF_E_TYPE, NULL, "type %s already exists with another base", name);
    *out = t;
    return WF_OK;
}

/* "x:Int32" -> "Int32", "System.String" -> "String"; copies into buf without spaces. */
static void strip_prefix(const char *name, size_t len, char *buf, size_t size)
{
    size_t start = 0;
    for (size_t i = 0; i < len; i++)
        if (name[i] == ':' || name[i] == '.')
            start = i + 1;
    size_t n = 0;
    for (size_t i = start; i < len && n + 1 < size; i++)
        if (name[i] != ' ')
            buf[n++] = name[i];
    buf[n] = '\0';
}

static const wf_type *find_simple(wf_types *types, const char *name)
{
    for (size_t i = 0; i < sizeof type_aliases / sizeof *type_aliases; i++)
        if (strcmp(type_aliases[i].alias, name) == 0)
            return type_aliases[i].type;
    const wf_type *t = builtin_by_name(name);
    if (t || !types)
        return t;
    pthread_mutex_lock(&types->lock);
    t = wf_strmap_get(types->byname, name);
    pthread_mutex_unlock(&types->lock);
    return t;
}

const wf_type *wf_types_find(wf_types *types, const char *name)
{
    if (!name)
        return NULL;
    size_t len = strlen(name);
    while (len && name[len - 1] == ' ')
        len--;
    while (len && *name == ' ')
        name++, len--;
    const char *open = memchr(name, '(', len);
    if (!open) {
        char simple[256];
        if (len < sizeof simple) { /* a declared "Contoso.OrderException" matches as is */
            memcpy(simple, name, len);
            simple[len] = '\0';
            const wf_type *t = find_simple(types, simple);
            if (t)
                return t;
        }
        strip_prefix(name, len, simple, sizeof simple);
        return find_simple(types, simple);
    }
    if (name[len - 1] != ')')
        return NULL;
    char outer[64];
    strip_prefix(name, (size_t)(open - name), outer, sizeof outer);
    if (strcmp(outer, "List") != 0 && strcmp(outer, "IList") != 0 && strcmp(outer, "List`1") != 0)
        return NULL;
    char inner[256];
    size_t ilen = len - (size_t)(open - name) - 2;
    if (ilen >= sizeof inner)
        return NULL;
    memcpy(inner, open + 1, ilen);
    inner[ilen] = '\0';
    const wf_type *elem = wf_types_find(types, inner);
    return elem ? wf_types_list(types, elem) : NULL;
}

const wf_type *wf_type_primitive(const char *clr_name)
{
    static const struct {
        const char *name;
        const wf_type *type;
    } prims[] = {
        {"Boolean", &wf_type_bool},       {"Int32", &wf_type_int32},
        {"Int16", &wf_type_int32},        {"Byte", &wf_type_int32},
        {"SByte", &wf_type_int32},        {"UInt16", &wf_type_int32},
        {"Int64", &wf_type_int64},        {"UInt32", &wf_type_int64},
        {"Double", &wf_type_double},      {"Single", &wf_type_double},
        {"Decimal", &wf_type_decimal},    {"String", &wf_type_string},
        {"Char", &wf_type_string},        {"DateTime", &wf_type_datetime},
        {"TimeSpan", &wf_type_timespan},
    };
    for (size_t i = 0; clr_name && i < sizeof prims / sizeof *prims; i++)
        if (strcmp(prims[i].name, clr_name) == 0)
            return prims[i].type;
    return NULL;
}

wf_value wf_type_default(const wf_type *t)
{
    wf_value v = wf_null();
    if (!t)
        return v;
    switch (t->kind) {
    case WF_K_BOOL:
    case WF_K_INT32:
    case WF_K_INT64:
    case WF_K_DOUBLE:
    case WF_K_TIMESPAN:
        v.type = t; /* the zeroed union is false / 0 / 0.0 for each of these */
        return v;
    case WF_K_DECIMAL:
        return wf_dec(wf_decimal_from_int64(0));
    case WF_K_DATETIME:
        v.type = t;
        v.u.i64 = WF_DATETIME_MIN_US;
        return v;
    default:
        return v;
    }
}

bool wf_type_is_numeric(const wf_type *t)
{
    return t && (t->kind == WF_K_INT32 || t->kind == WF_K_INT64 || t->kind == WF_K_DOUBLE ||
                 t->kind == WF_K_DECIMAL);
}

bool wf_type_is_a(const wf_type *t, const wf_type *ancestor)
{
    if (!t || !ancestor)
        return false;
    if (t->kind != WF_K_EXCEPTION)
        return t == ancestor;
    for (; t; t = t->base)
        if (t == ancestor)
            return true;
    return false;
}

int wf_type_depth(const wf_type *t)
{
    int depth = -1;
    for (; t && t->kind == WF_K_EXCEPTION; t = t->base)
        depth++;
    return depth < 0 ? 0 : depth;
}

/* ---- heap values ---------------------------------------------------------------------- */

static bool is_heap(const wf_value *v)
{
    wf_kind k = v->type->kind;
    return (k == WF_K_STRING || k == WF_K_LIST || k == WF_K_RECORD || k == WF_K_EXCEPTION) &&
           v->u.s != NULL;
}

/* Every payload starts with its atomic_long refs. */
static atomic_long *refs_of(const wf_value *v)
{
    return (atomic_long *)(void *)v->u.s;
}

wf_status wf_value_string(const char *s, size_t len, wf_value *out)
{
    *out = wf_null();
    if (len > SIZE_MAX - sizeof(wf_str) - 1)
        return WF_E_NOMEM;
    wf_str *str = wf_malloc(sizeof *str + len + 1);
    if (!str)
        return WF_E_NOMEM;
    atomic_init(&str->refs, 1);
    str->len = len;
    str->ptr = str->bytes;
    if (len)
        memcpy(str->bytes, s, len);
    str->bytes[len] = '\0';
    out->type = &wf_type_string;
    out->u.s = str;
    return WF_OK;
}

wf_status wf_value_cstring(const char *s, wf_value *out)
{
    if (!s) {
        *out = wf_null();
        return WF_OK;
    }
    return wf_value_string(s, strlen(s), out);
}

wf_status wf_value_string_take(char *s, size_t len, wf_value *out)
{
    *out = wf_null();
    wf_str *str = wf_malloc(sizeof *str + 1);
    if (!str) {
        wf_free(s);
        return WF_E_NOMEM;
    }
    atomic_init(&str->refs, 1);
    str->len = len;
    str->ptr = s;
    str->bytes[0] = '\0';
    out->type = &wf_type_string;
    out->u.s = str;
    return WF_OK;
}

wf_status wf_value_string_static(wf_arena *arena, const char *s, size_t len, wf_value *out)
{
    *out = wf_null();
    if (len > SIZE_MAX - sizeof(wf_str) - 1)
        return WF_E_NOMEM;
    wf_str *str = wf_arena_alloc(arena, sizeof *str + len + 1);
    if (!str)
        return WF_E_NOMEM;
    atomic_init(&str->refs, WF_REFS_IMMORTAL);
    str->len = len;
    str->ptr = str->bytes;
    if (len)
        memcpy(str->bytes, s, len);
    out->type = &wf_type_string;
    out->u.s = str;
    return WF_OK;
}

wf_status wf_value_list_take(const wf_type *list_type, wf_value *items, size_t count, wf_value *out)
{
    *out = wf_null();
    wf_list *list = NULL;
    if (count <= (SIZE_MAX - sizeof *list) / sizeof(wf_value))
        list = wf_malloc(sizeof *list + count * sizeof(wf_value));
    if (!list) {
        for (size_t i = 0; i < count; i++)
            wf_value_release(&items[i]);
        return WF_E_NOMEM;
    }
    atomic_init(&list->refs, 1);
    list->count = count;
    if (count)
        memcpy(list->items, items, count * sizeof(wf_value));
    out->type = list_type && list_type->kind == WF_K_LIST ? list_type : &wf_type_list_object;
    out->u.list = list;
    return WF_OK;
}

/* A wf_malloc'd array holding a new reference to each value; NULL when count is 0 or on OOM. */
static wf_value *retained_copy(const wf_value *values, size_t count)
{
    if (count == 0 || count > SIZE_MAX / sizeof(wf_value))
        return NULL;
    wf_value *copy = wf_malloc(count * sizeof *copy);
    for (size_t i = 0; copy && i < count; i++)
        copy[i] = wf_value_retain(&values[i]);
    return copy;
}

wf_status wf_value_list(const wf_type *list_type, const wf_value *items, size_t count,
                        wf_value *out)
{
    *out = wf_null();
    wf_value *copy = retained_copy(items, count);
    if (count && !copy)
        return WF_E_NOMEM;
    wf_status st = wf_value_list_take(list_type, copy, count, out);
    wf_free(copy);
    return st;
}

wf_status wf_value_record_take(const char *const *keys, wf_value *values, size_t count,
                               wf_value *out)
{
    *out = wf_null();
    size_t key_bytes = 0;
    for (size_t i = 0; i < count; i++)
        key_bytes += strlen(keys[i]) + 1;
    wf_rec *rec = NULL;
    if (count <= (SIZE_MAX / 2) / sizeof(wf_rec_entry))
        rec = wf_malloc(sizeof *rec + count * sizeof(wf_rec_entry) + key_bytes);
    if (!rec) {
        for (size_t i = 0; i < count; i++)
            wf_value_release(&values[i]);
        return WF_E_NOMEM;
    }
    atomic_init(&rec->refs, 1);
    rec->count = count;
    char *kp = (char *)(rec->entries + count);
    for (size_t i = 0; i < count; i++) {
        size_t n = strlen(keys[i]) + 1;
        memcpy(kp, keys[i], n);
        rec->entries[i] = (wf_rec_entry){kp, values[i]};
        kp += n;
    }
    out->type = &wf_type_record;
    out->u.rec = rec;
    return WF_OK;
}

wf_status wf_value_record(const char *const *keys, const wf_value *values, size_t count,
                          wf_value *out)
{
    *out = wf_null();
    wf_value *copy = retained_copy(values, count);
    if (count && !copy)
        return WF_E_NOMEM;
    wf_status st = wf_value_record_take(keys, copy, count, out);
    wf_free(copy);
    return st;
}

wf_status wf_value_exception(const wf_type *exc_type, const char *message, wf_value *out)
{
    *out = wf_null();
    const char *msg = message ? message : "";
    size_t len = strlen(msg);
    wf_exc *exc = wf_malloc(sizeof *exc + len + 1);
    if (!exc)
        return WF_E_NOMEM;
    atomic_init(&exc->refs, 1);
    memcpy(exc->message, msg, len + 1);
    out->type = exc_type && exc_type->kind == WF_K_EXCEPTION ? exc_type : &wf_exc_exception;
    out->u.exc = exc;
    return WF_OK;
}

/* ---- accessors ------------------------------------------------------------------------ */

const char *wf_value_str(const wf_value *v)
{
    return v->type->kind == WF_K_STRING && v->u.s ? v->u.s->ptr : "";
}

size_t wf_value_str_len(const wf_value *v)
{
    return v->type->kind == WF_K_STRING && v->u.s ? v->u.s->len : 0;
}

size_t wf_value_list_count(const wf_value *v)
{
    return v->type->kind == WF_K_LIST && v->u.list ? v->u.list->count : 0;
}

const wf_value *wf_value_list_at(const wf_value *v, size_t index)
{
    if (index >= wf_value_list_count(v))
        return NULL;
    return &v->u.list->items[index];
}

const wf_value *wf_value_list_items(const wf_value *v)
{
    return wf_value_list_count(v) ? v->u.list->items : NULL;
}

size_t wf_value_record_count(const wf_value *v)
{
    return v->type->kind == WF_K_RECORD && v->u.rec ? v->u.rec->count : 0;
}

const char *wf_value_record_key(const wf_value *v, size_t index)
{
    if (index >= wf_value_record_count(v))
        return NULL;
    return v->u.rec->entries[index].key;
}

const wf_value *wf_value_record_at(const wf_value *v, size_t index)
{
    if (index >= wf_value_record_count(v))
        return NULL;
    return &v->u.rec->entries[index].value;
}

const wf_value *wf_value_record_get(const wf_value *v, const char *key)
{
    size_t n = wf_value_record_count(v);
    for (size_t i = 0; i < n; i++)
        if (strcmp(v->u.rec->entries[i].key, key) == 0)
            return &v->u.rec->entries[i].value;
    return NULL;
}

const char *wf_value_exc_message(const wf_value *v)
{
    return v->type->kind == WF_K_EXCEPTION && v->u.exc ? v->u.exc->message : "";
}

/* ---- reference counting --------------------------------------------------------------- */

wf_value wf__value_retain_heap(const wf_value *v)
{
    if (is_heap(v)) {
        atomic_long *refs = refs_of(v);
        if (atomic_load_explicit(refs, memory_order_relaxed) >= 0) {
            long before = atomic_fetch_add_explicit(refs, 1, memory_order_relaxed);
            assert(before > 0); /* retaining a freed payload: a missing retain elsewhere */
            (void)before;
        }
    }
    return *v;
}

static void payload_free(wf_value *v)
{
    switch (v->type->kind) {
    case WF_K_STRING:
        if (v->u.s->ptr != v->u.s->bytes)
            wf_free(v->u.s->ptr);
        break;
    case WF_K_LIST:
        for (size_t i = 0; i < v->u.list->count; i++)
            wf_value_release(&v->u.list->items[i]);
        break;
    case WF_K_RECORD:
        for (size_t i = 0; i < v->u.rec->count; i++)
            wf_value_release(&v->u.rec->entries[i].value);
        break;
    default:
        break;
    }
    wf_free(v->u.s);
}

void wf__value_release_heap(wf_value *v)
{
    if (is_heap(v)) {
        atomic_long *refs = refs_of(v);
        long before = atomic_load_explicit(refs, memory_order_relaxed) >= 0
                          ? atomic_fetch_sub_explicit(refs, 1, memory_order_acq_rel)
                          : WF_REFS_IMMORTAL;
        assert(before != 0); /* released once more than retained */
        if (before == 1)
            payload_free(v);
    }
    /* field by field: here the compiler sees wf_null_value's initialiser and builds it on
     * the stack again (see wf_null) */
    v->type = &wf_type_null;
    memset(&v->u, 0, sizeof v->u);
}

void wf_value_set(wf_value *dst, const wf_value *src)
{
    wf_value keep = wf_value_retain(src);
    wf_value_release(dst);
    *dst = keep;
}

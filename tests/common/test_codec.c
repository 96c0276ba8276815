/* test_codec.c — common/wf_codec: every value kind survives an encode/decode round trip
 * (nested lists and records, exceptions with their parent type into a fresh type table, null,
 * the extremes of each scalar), every truncation of an encoding is refused cleanly with
 * nothing leaked, malformed bytes are WF_E_CORRUPT with a reason, and allocation failures
 * while decoding are WF_E_NOMEM. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_calendar.h"
#include "../../common/wf_codec.h"
#include "../wf_test_util.h"

/* ---- counting allocator: live blocks, to prove a refused decode frees everything --------- */
static long live_blocks;

static void *count_malloc(size_t size, void *ud)
{
    (void)ud;
    void *p = malloc(size ? size : 1);
    if (p)
        live_blocks++;
    return p;
}

static void *count_realloc(void *ptr, size_t size, void *ud)
{
    (void)ud;
    void *p = realloc(ptr, size ? size : 1);
    if (p && !ptr)
        live_blocks++;
    return p;
}

static void count_free(void *ptr, void *ud)
{
    (void)ud;
    if (ptr)
        live_blocks--;
    free(ptr);
}

static const wf_alloc_hooks counting = {count_malloc, count_realloc, count_free, NULL};

/* ---- the value holding every kind ------------------------------------------------------ */
typedef struct sample {
    wf_types *types;
    const wf_type *user_exc; /* OrderException : InvalidOperationException */
    wf_value v;
} sample;

static wf_value str_of(const char *s, size_t len)
{
    wf_value v;
    ck_assert_int_eq(wf_value_string(s, len, &v), WF_OK);
    return v;
}

static wf_value list_of(const wf_type *t, wf_value *items, size_t n)
{
    wf_value v;
    ck_assert_int_eq(wf_value_list(t, items, n, &v), WF_OK);
    for (size_t i = 0; i < n; i++)
        wf_value_release(&items[i]);
    return v;
}

static wf_value record_of(const char *const *keys, wf_value *vals, size_t n)
{
    wf_value v;
    ck_assert_int_eq(wf_value_record(keys, vals, n, &v), WF_OK);
    for (size_t i = 0; i < n; i++)
        wf_value_release(&vals[i]);
    return v;
}

static wf_value exc_of(const wf_type *t, const char *msg)
{
    wf_value v;
    ck_assert_int_eq(wf_value_exception(t, msg, &v), WF_OK);
    return v;
}

static void sample_init(sample *s)
{
    s->types = wf_types_create();
    ck_assert_ptr_nonnull(s->types);
    ck_assert_int_eq(wf_types_exception(s->types, "OrderException", &wf_exc_invalid_operation,
                                        &s->user_exc, NULL),
                     WF_OK);
    double neg_zero = -0.0;
    wf_value scalars[] = {
        wf_null(),
        wf_bool(true),
        wf_bool(false),
        wf_int32(INT32_MIN),
        wf_int32(INT32_MAX),
        wf_int32(0),
        wf_int64(INT64_MIN),
        wf_int64(INT64_MAX),
        wf_double(neg_zero),
        wf_double(NAN),
        wf_double(INFINITY),
        wf_double(-INFINITY),
        wf_double(4.9406564584124654e-324),
        wf_double(1.7976931348623157e308),
        wf_dec((wf_decimal){.lo = UINT64_MAX, .hi = UINT32_MAX, .scale = 0, .neg = true}),
        wf_dec((wf_decimal){.lo = 1, .hi = 0, .scale = 28, .neg = false}),
        wf_dec(wf_decimal_from_currency(INT64_MIN)),
        wf_datetime_us(WF_DATETIME_MIN_US),
        wf_datetime_us(WF_DATETIME_MAX_US),
        wf_timespan_us(INT64_MIN),
        wf_timespan_us(INT64_MAX),
        {&wf_type_token, {.i64 = 7}},
        str_of("", 0),
        str_of("caf\xc3\xa9 \xf0\x9f\x98\x80", 10),
        str_of("a\0b", 3),
        exc_of(&wf_exc_divide_by_zero, "Attempted to divide by zero."),
        exc_of(s->user_exc, "order 42 is late"),
        exc_of(&wf_exc_exception, ""),
    };
    size_t n = sizeof scalars / sizeof *scalars;
    const wf_type *list_int = wf_types_list(s->types, &wf_type_int32);
    const wf_type *list_list = wf_types_list(s->types, list_int);
    const wf_type *list_exc = wf_types_list(s->types, s->user_exc);
    ck_assert(list_int && list_list && list_exc);
    wf_value ints[] = {wf_int32(1), wf_int32(-2)};
    wf_value inner[] = {list_of(list_int, ints, 2), list_of(list_int, NULL, 0)};
    wf_value excs[] = {exc_of(s->user_exc, "x"), wf_null()};
    const char *const rkeys[] = {"", "nested", "lists", "errors"};
    wf_value deep_vals[] = {wf_int32(5)};
    const char *const deep_keys[] = {"k"};
    wf_value rvals[] = {wf_null(), record_of(deep_keys, deep_vals, 1),
                        list_of(list_list, inner, 2), list_of(list_exc, excs, 2)};
    wf_value all[32];
    memcpy(all, scalars, sizeof scalars);
    all[n] = record_of(rkeys, rvals, 4);
    all[n + 1] = record_of(NULL, NULL, 0);
    s->v = list_of(&wf_type_list_object, all, n + 2);
}

static void sample_fini(sample *s)
{
    wf_value_release(&s->v);
    wf_types_destroy(s->types);
}

static wf_buf encode(const wf_value *v)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wf_codec_put_value(&b, v, &err) == WF_OK, "%s", err.message);
    ck_assert(!b.oom);
    return b;
}

static wf_status decode(const wf_buf *b, size_t len, wf_types *types, wf_value *out,
                        wf_error *err)
{
    wf_reader r;
    wf_reader_init(&r, b->data, len, types);
    wf_status rc = wf_codec_get_value(&r, out, err);
    if (rc == WF_OK && wf_reader_left(&r) != 0)
        rc = WF_E_CORRUPT;
    return rc;
}

/* Bit-exact comparison where wf_value_equal is looser (-0.0 == 0.0) or pointer-based
 * (exception types from another table). */
static void assert_same(const wf_value *a, const wf_value *b)
{
    ck_assert_str_eq(a->type->name, b->type->name);
    ck_assert_int_eq(a->type->kind, b->type->kind);
    switch (a->type->kind) {
    case WF_K_DOUBLE:
        ck_assert(memcmp(&a->u.d, &b->u.d, sizeof a->u.d) == 0 || (isnan(a->u.d) && isnan(b->u.d)));
        break;
    case WF_K_EXCEPTION:
        ck_assert_str_eq(wf_value_exc_message(a), wf_value_exc_message(b));
        ck_assert_str_eq(a->type->base ? a->type->base->name : "",
                         b->type->base ? b->type->base->name : "");
        break;
    case WF_K_LIST:
        ck_assert_uint_eq(wf_value_list_count(a), wf_value_list_count(b));
        for (size_t i = 0; i < wf_value_list_count(a); i++)
            assert_same(wf_value_list_at(a, i), wf_value_list_at(b, i));
        break;
    case WF_K_RECORD:
        ck_assert_uint_eq(wf_value_record_count(a), wf_value_record_count(b));
        for (size_t i = 0; i < wf_value_record_count(a); i++) {
            ck_assert_str_eq(wf_value_record_key(a, i), wf_value_record_key(b, i));
            assert_same(wf_value_record_at(a, i), wf_value_record_at(b, i));
        }
        break;
    default:
        ck_assert(wf_value_equal(a, b));
        if (a->type->kind == WF_K_STRING)
            ck_assert(memcmp(wf_value_str(a), wf_value_str(b), wf_value_str_len(a)) == 0);
        break;
    }
}

/* ---- core -------------------------------------------------------------------------------- */
START_TEST(test_every_kind_round_trips)
{
    sample s;
    sample_init(&s);
    wf_buf b = encode(&s.v);
    wf_value back;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(decode(&b, b.len, s.types, &back, &err) == WF_OK, "%s", err.message);
    assert_same(&s.v, &back);
    ck_assert(wf_value_equal(&s.v, &back)); /* same table: the very same types */
    wf_value_release(&back);
    wf_buf_fini(&b);
    sample_fini(&s);
}
END_TEST

START_TEST(test_user_exception_is_declared_again_in_a_fresh_table)
{
    sample s;
    sample_init(&s);
    wf_value e = exc_of(s.user_exc, "late");
    wf_buf b = encode(&e);
    wf_types *fresh = wf_types_create();
    wf_value back;
    ck_assert_int_eq(decode(&b, b.len, fresh, &back, NULL), WF_OK);
    ck_assert_ptr_eq(wf_types_find(fresh, "OrderException"), back.type);
    ck_assert_ptr_eq(back.type->base, &wf_exc_invalid_operation);
    ck_assert(wf_type_is_a(back.type, &wf_exc_system));
    ck_assert_str_eq(wf_value_exc_message(&back), "late");
    wf_value_release(&back);
    /* the whole sample decodes into the fresh table too */
    wf_buf all = encode(&s.v);
    ck_assert_int_eq(decode(&all, all.len, fresh, &back, NULL), WF_OK);
    assert_same(&s.v, &back);
    wf_value_release(&back);
    wf_buf_fini(&all);
    wf_types_destroy(fresh);
    wf_value_release(&e);
    wf_buf_fini(&b);
    sample_fini(&s);
}
END_TEST

START_TEST(test_json_rendering_from_bytes)
{
    const char *const keys[] = {"a", "b"};
    wf_value vals[] = {wf_int32(-3), wf_datetime_us(WF_DATETIME_MIN_US)};
    wf_value v = record_of(keys, vals, 2);
    wf_buf b = encode(&v);
    wf_reader r;
    wf_reader_init(&r, b.data, b.len, NULL);
    wf_buf out;
    wf_buf_init(&out);
    ck_assert(wf_codec_value_json(&r, &out));
    ck_assert_str_eq(out.data, "{\"a\":-3,\"b\":\"0001-01-01T00:00:00Z\"}");
    wf_buf_fini(&out);
    wf_buf_fini(&b);
    wf_value_release(&v);
}
END_TEST

/* ---- bad input ----------------------------------------------------------------------------- */
START_TEST(test_every_truncation_is_refused_without_leaks)
{
    sample s;
    sample_init(&s);
    wf_buf b = encode(&s.v);
    wf_value back;
    ck_assert_int_eq(decode(&b, b.len, s.types, &back, NULL), WF_OK); /* interns all types */
    wf_value_release(&back);
    wf_alloc_set_hooks(&counting);
    for (size_t len = 0; len < b.len; len++) {
        long before = live_blocks;
        wf_error err = WF_ERROR_INIT;
        wf_value out = wf_int32(99);
        wf_status rc = decode(&b, len, s.types, &out, &err);
        ck_assert_msg(rc == WF_E_CORRUPT, "prefix of %zu bytes: %d", len, (int)rc);
        ck_assert(wf_is_null(&out));
        ck_assert_ptr_nonnull(strstr(err.message, "corrupt state"));
        ck_assert_msg(live_blocks == before, "prefix of %zu bytes leaked %ld blocks", len,
                      live_blocks - before);
        wf_reader r;
        wf_reader_init(&r, b.data, len, NULL);
        ck_assert(!wf_codec_value_json(&r, NULL));
        ck_assert(!wf_reader_ok(&r));
    }
    wf_alloc_set_hooks(NULL);
    wf_buf_fini(&b);
    sample_fini(&s);
}
END_TEST

static void expect_corrupt(const void *bytes, size_t len, wf_types *types, const char *why)
{
    wf_reader r;
    wf_reader_init(&r, bytes, len, types);
    wf_value out;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_codec_get_value(&r, &out, &err), WF_E_CORRUPT);
    ck_assert(wf_is_null(&out));
    ck_assert_msg(strstr(err.message, why) != NULL, "'%s' not in '%s'", why, err.message);
    ck_assert(!wf_reader_ok(&r));
    ck_assert_uint_eq(wf_reader_left(&r), 0);
}

START_TEST(test_malformed_bytes_are_corrupt)
{
    wf_types *types = wf_types_create();
    expect_corrupt((const unsigned char[]){200}, 1, types, "unknown value kind");
    expect_corrupt((const unsigned char[]){WF_K_OBJECT}, 1, types, "unknown value kind");
    expect_corrupt((const unsigned char[]){WF_K_BOOL, 2}, 2, types, "bad Boolean");
    /* zig-zag 2^32 is outside Int32 */
    expect_corrupt((const unsigned char[]){WF_K_INT32, 0x80, 0x80, 0x80, 0x80, 0x20}, 6, types,
                   "Int32 out of range");
    unsigned char longnum[12] = {WF_K_INT64};
    memset(longnum + 1, 0xff, 11);
    expect_corrupt(longnum, sizeof longnum, types, "too");
    expect_corrupt((const unsigned char[]){WF_K_STRING, 5, 'a'}, 3, types, "past the end");
    expect_corrupt((const unsigned char[]){WF_K_LIST, 4, 'N', 'o', 'p', 'e', 0}, 7, types,
                   "unknown list type");
    expect_corrupt((const unsigned char[]){WF_K_RECORD, 1, 2, 'a', 0, WF_K_NULL}, 6, types,
                   "NUL byte");
    expect_corrupt((const unsigned char[]){WF_K_RECORD, 100, 0}, 3, types, "record count");
    /* an exception whose parent the reading process does not know */
    expect_corrupt((const unsigned char[]){WF_K_EXCEPTION, 1, 'E', 0, 1, 'P'}, 6, types,
                   "unknown exception type");
    /* a list nested deeper than WF_CODEC_DEPTH_MAX */
    wf_buf deep;
    wf_buf_init(&deep);
    for (int i = 0; i <= WF_CODEC_DEPTH_MAX + 1; i++) {
        wf_buf_addc(&deep, WF_K_LIST);
        wf_codec_put_str(&deep, "List(Object)");
        wf_codec_put_uint(&deep, 1);
    }
    wf_buf_addc(&deep, WF_K_NULL);
    expect_corrupt(deep.data, deep.len, types, "nested too deeply");
    wf_buf_fini(&deep);
    wf_types_destroy(types);
}
END_TEST

START_TEST(test_unencodable_values_are_refused)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_error err = WF_ERROR_INIT;
    wf_value obj = {&wf_type_object, {0}};
    ck_assert_int_eq(wf_codec_put_value(&b, &obj, &err), WF_E_TYPE);
    ck_assert_ptr_nonnull(strstr(err.message, "Object"));
    wf_buf_fini(&b);
}
END_TEST

/* ---- limits -------------------------------------------------------------------------------- */
START_TEST(test_nesting_limit_on_write)
{
    wf_value v = wf_int32(1);
    for (int i = 0; i <= WF_CODEC_DEPTH_MAX; i++)
        v = list_of(&wf_type_list_object, &v, 1);
    wf_buf b;
    wf_buf_init(&b);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_codec_put_value(&b, &v, &err), WF_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err.message, "nested"));
    wf_buf_fini(&b);
    /* one level less is fine and comes back */
    wf_value inner = wf_value_retain(wf_value_list_at(&v, 0));
    wf_buf ok = encode(&inner);
    wf_value back;
    ck_assert_int_eq(decode(&ok, ok.len, NULL, &back, NULL), WF_OK);
    ck_assert(wf_value_equal(&inner, &back));
    wf_value_release(&back);
    wf_buf_fini(&ok);
    wf_value_release(&inner);
    wf_value_release(&v);
}
END_TEST

START_TEST(test_varint_extremes)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_codec_put_uint(&b, UINT64_MAX);
    wf_codec_put_int(&b, INT64_MIN);
    wf_codec_put_int(&b, INT64_MAX);
    wf_codec_put_uint(&b, 0);
    wf_reader r;
    wf_reader_init(&r, b.data, b.len, NULL);
    ck_assert(wf_codec_get_uint(&r) == UINT64_MAX);
    ck_assert(wf_codec_get_int(&r) == INT64_MIN);
    ck_assert(wf_codec_get_int(&r) == INT64_MAX);
    ck_assert(wf_codec_get_uint(&r) == 0);
    ck_assert(wf_reader_ok(&r));
    ck_assert_uint_eq(wf_reader_left(&r), 0);
    ck_assert(wf_codec_get_uint(&r) == 0); /* past the end: sticky bad */
    ck_assert(!wf_reader_ok(&r));
    wf_buf_fini(&b);
}
END_TEST

/* ---- nomem --------------------------------------------------------------------------------- */
typedef struct decode_case {
    wf_buf *b;
    wf_types *types;
} decode_case;

static wf_status decode_once(void *ud)
{
    decode_case *c = ud;
    wf_value out;
    wf_error err = WF_ERROR_INIT;
    long before = live_blocks;
    wf_alloc_set_hooks(&counting);
    wf_status rc = decode(c->b, c->b->len, c->types, &out, &err);
    if (rc == WF_E_NOMEM)
        ck_assert(wf_is_null(&out));
    wf_value_release(&out);
    wf_alloc_set_hooks(NULL);
    ck_assert_msg(live_blocks == before, "leaked %ld blocks", live_blocks - before);
    return rc;
}

START_TEST(test_decode_survives_allocation_failures)
{
    sample s;
    sample_init(&s);
    wf_buf b = encode(&s.v);
    decode_case c = {&b, s.types}; /* types already interned: every block must come back */
    ck_assert_uint_gt(wf_test_nomem_loop(decode_once, &c, 5000), 10);
    wf_buf_fini(&b);
    sample_fini(&s);
}
END_TEST

Suite *common_codec_suite(void)
{
    Suite *s = suite_create("common_codec");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_every_kind_round_trips);
    tcase_add_test(core, test_user_exception_is_declared_again_in_a_fresh_table);
    tcase_add_test(core, test_json_rendering_from_bytes);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_every_truncation_is_refused_without_leaks);
    tcase_add_test(bad, test_malformed_bytes_are_corrupt);
    tcase_add_test(bad, test_unencodable_values_are_refused);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_nesting_limit_on_write);
    tcase_add_test(limits, test_varint_extremes);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_decode_survives_allocation_failures);
    suite_add_tcase(s, nomem);
    return s;
}

/* test_mem.c — allocator hooks and the fail-after test hook, arena alignment and zeroing,
 * pool slot reuse, wf_buf invariants (NUL, sticky oom, JSON escaping) and wf_strmap. */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../wf_test_util.h"

static unsigned long hook_mallocs;

static void *count_malloc(size_t size, void *ud)
{
    (void)ud;
    hook_mallocs++;
    return malloc(size);
}

static void *count_realloc(void *p, size_t size, void *ud)
{
    (void)ud;
    return realloc(p, size);
}

static void count_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

START_TEST(test_hooks_route_allocations)
{
    wf_alloc_hooks h = {count_malloc, count_realloc, count_free, NULL};
    hook_mallocs = 0;
    wf_alloc_set_hooks(&h);
    char *s = wf_strdup("abc");
    wf_alloc_set_hooks(NULL);
    ck_assert_uint_eq(hook_mallocs, 1);
    ck_assert_str_eq(s, "abc");
    wf_alloc_set_hooks(&h);
    wf_free(s);
    wf_alloc_set_hooks(NULL);
}
END_TEST

START_TEST(test_fail_after_refuses_nth_and_later)
{
    wf_alloc_fail_after(2);
    void *a = wf_malloc(8);
    void *b = wf_malloc(8);
    void *c = wf_calloc(2, 8);
    unsigned long refused = wf_alloc_fail_count();
    wf_alloc_fail_after(0);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_null(b);
    ck_assert_ptr_null(c);
    ck_assert_uint_eq(refused, 2);
    wf_free(a);
    ck_assert_ptr_null(wf_calloc(SIZE_MAX / 2, 4)); /* overflow checked */
}
END_TEST

START_TEST(test_arena_aligned_zeroed_large)
{
    wf_arena *a = wf_arena_create(256);
    ck_assert_ptr_nonnull(a);
    for (size_t size = 1; size < 200; size += 7) {
        unsigned char *p = wf_arena_alloc(a, size);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % 8, 0);
        for (size_t i = 0; i < size; i++)
            ck_assert_uint_eq(p[i], 0);
        memset(p, 0xAB, size);
    }
    char *big = wf_arena_alloc(a, 10000);
    ck_assert_ptr_nonnull(big);
    ck_assert_uint_eq((uintptr_t)big % 8, 0);
    ck_assert_str_eq(wf_arena_strdup(a, "hello"), "hello");
    ck_assert_str_eq(wf_arena_strndup(a, "hello", 2), "he");
    ck_assert_uint_ge(wf_arena_bytes(a), 10000);
    wf_arena_destroy(a);
    wf_arena_destroy(NULL);
}
END_TEST

/* Strings fill a block from its top, structures from its bottom: interleaved, neither
 * overwrites the other, structures stay aligned and zeroed, strings packed. */
START_TEST(test_arena_strings_and_structs_share_blocks)
{
    wf_arena *a = wf_arena_create(128);
    ck_assert_ptr_nonnull(a);
    char *strs[64];
    unsigned char *structs[64];
    for (int i = 0; i < 64; i++) {
        char text[16];
        snprintf(text, sizeof text, "s%d", i);
        strs[i] = wf_arena_strdup(a, text);
        structs[i] = wf_arena_alloc(a, 20);
        ck_assert_ptr_nonnull(strs[i]);
        ck_assert_ptr_nonnull(structs[i]);
        ck_assert_uint_eq((uintptr_t)structs[i] % 8, 0);
        for (int k = 0; k < 20; k++)
            ck_assert_uint_eq(structs[i][k], 0);
        memset(structs[i], 0xCD, 20);
    }
    for (int i = 0; i < 64; i++) {
        char text[16];
        snprintf(text, sizeof text, "s%d", i);
        ck_assert_str_eq(strs[i], text);
        for (int k = 0; k < 20; k++)
            ck_assert_uint_eq(structs[i][k], 0xCD);
    }
    /* consecutive short strings in one block are packed: "cd" right below "ab" */
    wf_arena *b = wf_arena_create(128);
    char *x = wf_arena_strdup(b, "ab"), *y = wf_arena_strdup(b, "cd");
    ck_assert_ptr_eq(y + 3, x);
    wf_arena_destroy(b);
    wf_arena_destroy(a);
}
END_TEST

START_TEST(test_pool_reuses_slots)
{
    wf_pool *p = wf_pool_create(24, 4);
    void *slots[10];
    for (int i = 0; i < 10; i++) {
        slots[i] = wf_pool_get(p);
        ck_assert_ptr_nonnull(slots[i]);
        memset(slots[i], 0x5A, 24);
    }
    ck_assert_uint_eq(wf_pool_in_use(p), 10);
    wf_pool_put(p, slots[3]);
    unsigned char *again = wf_pool_get(p);
    ck_assert_ptr_eq(again, slots[3]);
    for (int i = 0; i < 24; i++)
        ck_assert_uint_eq(again[i], 0);
    ck_assert_uint_eq(wf_pool_in_use(p), 10);
    wf_pool_destroy(p);
    wf_pool_destroy(NULL);
}
END_TEST

START_TEST(test_buf_invariants)
{
    wf_buf b;
    wf_buf_init(&b);
    ck_assert_ptr_nonnull(b.data);
    ck_assert_str_eq(b.data, "");
    wf_buf_adds(&b, "abc");
    wf_buf_addc(&b, '-');
    wf_buf_addf(&b, "%d/%s", 42, "x");
    ck_assert_str_eq(b.data, "abc-42/x");
    ck_assert_uint_eq(b.len, 8);
    char long_text[1000];
    memset(long_text, 'z', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    wf_buf_addf(&b, "%s", long_text);
    ck_assert_uint_eq(b.len, 8 + 999);
    ck_assert_uint_eq(b.data[b.len], '\0');
    wf_buf_reset(&b);
    ck_assert_str_eq(b.data, "");
    size_t len = 99;
    char *kept = wf_buf_detach(&b, &len);
    ck_assert_str_eq(kept, "");
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(b.data, "");
    wf_free(kept);
    wf_buf_fini(&b);
}
END_TEST

START_TEST(test_buf_oom_is_sticky)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(&b, "keep");
    wf_alloc_fail_after(1);
    char big[200];
    memset(big, 'x', sizeof big);
    ck_assert(!wf_buf_add(&b, big, sizeof big));
    wf_alloc_fail_after(0);
    ck_assert(b.oom);
    ck_assert(!wf_buf_adds(&b, "more"));
    ck_assert_str_eq(b.data, "keep");
    ck_assert_ptr_null(wf_buf_detach(&b, NULL));
    ck_assert(!b.oom);
    wf_buf_fini(&b);
}
END_TEST

static int destroyed;
static void count_destroy(void *v)
{
    (void)v;
    destroyed++;
}

START_TEST(test_strmap_put_get_remove_iterate)
{
    wf_strmap *m = wf_strmap_create(count_destroy);
    static int values[500];
    char key[32];
    destroyed = 0;
    for (int i = 0; i < 500; i++) {
        snprintf(key, sizeof key, "key%d", i);
        ck_assert_int_eq(wf_strmap_put(m, key, &values[i]), WF_OK);
    }
    ck_assert_uint_eq(wf_strmap_count(m), 500);
    ck_assert_ptr_eq(wf_strmap_get(m, "key123"), &values[123]);
    ck_assert_ptr_null(wf_strmap_get(m, "nope"));
    ck_assert(wf_strmap_remove(m, "key123"));
    ck_assert(!wf_strmap_remove(m, "key123"));
    ck_assert_int_eq(destroyed, 1);
    ck_assert_ptr_null(wf_strmap_get(m, "key123"));
    wf_strmap_put(m, "key1", &values[2]); /* replacing destroys the old value */
    ck_assert_int_eq(destroyed, 2);
    size_t pos = 0, seen = 0;
    const char *k;
    void *v;
    while (wf_strmap_next(m, &pos, &k, &v))
        seen++;
    ck_assert_uint_eq(seen, 499);
    wf_strmap_destroy(m);
    ck_assert_int_eq(destroyed, 501);
}
END_TEST

START_TEST(test_strmap_churn_with_tombstones)
{
    wf_strmap *m = wf_strmap_create(NULL);
    int x;
    for (int round = 0; round < 2000; round++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", round);
        ck_assert_int_eq(wf_strmap_put(m, key, &x), WF_OK);
        ck_assert(wf_strmap_remove(m, key));
    }
    ck_assert_uint_eq(wf_strmap_count(m), 0);
    wf_strmap_destroy(m);
}
END_TEST

START_TEST(test_hash_fnv1a_known_values)
{
    ck_assert_uint_eq(wf_hash_bytes("", 0), 0xcbf29ce484222325ULL);
    ck_assert_uint_eq(wf_hash_bytes("a", 1), 0xaf63dc4c8601ec8cULL);
}
END_TEST

/* SipHash-2-4 against the reference vectors (key 00..0f, message 00..n-1). */
START_TEST(test_siphash24_reference_vectors)
{
    unsigned char msg[16];
    for (int i = 0; i < 16; i++)
        msg[i] = (unsigned char)i;
    const uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
    ck_assert_uint_eq(wf_siphash24(k0, k1, msg, 0), 0x726fdb47dd0e0e31ULL);
    ck_assert_uint_eq(wf_siphash24(k0, k1, msg, 1), 0x74f839c593dc67fdULL);
    ck_assert_uint_eq(wf_siphash24(k0, k1, msg, 2), 0x0d6c8009d9a94f5aULL);
    ck_assert_uint_eq(wf_siphash24(k0, k1, msg, 8), 0x93f5f5799a932462ULL);
    ck_assert_uint_eq(wf_siphash24(k0, k1, msg, 15), 0xa129ca6149be45e5ULL);
    ck_assert_uint_eq(wf_siphash24(k0, k1, msg, 16), 0x3f2acc7f57c29bdbULL);
    ck_assert_uint_ne(wf_siphash24(k0 ^ 1, k1, msg, 16), 0x3f2acc7f57c29bdbULL);
}
END_TEST

/* Names from input files key the maps: many keys, the same lookups in two maps (each with
 * its own key) give the same answers. */
START_TEST(test_strmap_keyed_maps_agree)
{
    wf_strmap *a = wf_strmap_create(NULL), *b = wf_strmap_create(NULL);
    char key[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "act%d", i);
        ck_assert_int_eq(wf_strmap_put(a, key, (void *)(intptr_t)(i + 1)), WF_OK);
        ck_assert_int_eq(wf_strmap_put(b, key, (void *)(intptr_t)(i + 1)), WF_OK);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "act%d", i);
        ck_assert_ptr_eq(wf_strmap_get(a, key), (void *)(intptr_t)(i + 1));
        ck_assert_ptr_eq(wf_strmap_get(b, key), (void *)(intptr_t)(i + 1));
    }
    ck_assert_ptr_null(wf_strmap_get(a, "act5000"));
    wf_strmap_destroy(a);
    wf_strmap_destroy(b);
}
END_TEST

/* The invariants wf_mem.h states are asserted where they can break (the process aborts):
 * a buffer whose length was moved past its NUL, and a slot put back twice. */
START_TEST(test_buf_broken_invariant_aborts)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(&b, "abc");
    b.data[b.len] = 'x'; /* no NUL at data[len] any more */
    wf_buf_adds(&b, "d");
}
END_TEST

START_TEST(test_pool_double_put_aborts)
{
    wf_pool *p = wf_pool_create(32, 4);
    void *slot = wf_pool_get(p);
    wf_pool_put(p, slot);
    wf_pool_put(p, slot);
}
END_TEST

static wf_status strmap_op(void *ud)
{
    (void)ud;
    wf_strmap *m = wf_strmap_create(NULL);
    if (!m)
        return WF_E_NOMEM;
    wf_status st = WF_OK;
    for (int i = 0; i < 40 && st == WF_OK; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        st = wf_strmap_put(m, key, m);
    }
    wf_strmap_destroy(m);
    return st;
}

START_TEST(test_strmap_nomem_leaks_nothing)
{
    ck_assert_uint_gt(wf_test_nomem_loop(strmap_op, NULL, 200), 0);
}
END_TEST

Suite *common_mem_suite(void)
{
    Suite *s = suite_create("common_mem");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_hooks_route_allocations);
    tcase_add_test(core, test_arena_aligned_zeroed_large);
    tcase_add_test(core, test_arena_strings_and_structs_share_blocks);
    tcase_add_test(core, test_pool_reuses_slots);
    tcase_add_test(core, test_buf_invariants);
    tcase_add_test(core, test_strmap_put_get_remove_iterate);
    tcase_add_test(core, test_strmap_churn_with_tombstones);
    tcase_add_test(core, test_hash_fnv1a_known_values);
    tcase_add_test(core, test_siphash24_reference_vectors);
    tcase_add_test(core, test_strmap_keyed_maps_agree);
    tcase_add_test_raise_signal(core, test_buf_broken_invariant_aborts, SIGABRT);
    tcase_add_test_raise_signal(core, test_pool_double_put_aborts, SIGABRT);
    suite_add_tcase(s, core);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_fail_after_refuses_nth_and_later);
    tcase_add_test(nomem, test_buf_oom_is_sticky);
    tcase_add_test(nomem, test_strmap_nomem_leaks_nothing);
    suite_add_tcase(s, nomem);
    return s;
}

/* wf_mem.h — allocation: the one allocator hook, a bump arena, fixed-size pools, growable
 * byte buffers and a string-keyed hash map. Every allocation in the project goes through
 * wf_malloc & co., so tests can fail the Nth allocation (docs/style.md "Ownership and memory"). */
#ifndef WF_MEM_H
#define WF_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wf_error.h"

/* ---- allocator hook ------------------------------------------------------------------- */
typedef struct wf_alloc_hooks {
    void *(*malloc_fn)(size_t size, void *ud);
    void *(*realloc_fn)(void *ptr, size_t size, void *ud);
    void (*free_fn)(void *ptr, void *ud);
    void *ud;
} wf_alloc_hooks;

/* Set once before threads start (tests set and reset it between cases); NULL restores the C
 * library allocator. */
void wf_alloc_set_hooks(const wf_alloc_hooks *hooks);
void *wf_malloc(size_t size);
void *wf_calloc(size_t count, size_t size); /* overflow-checked */
void *wf_realloc(void *ptr, size_t size);
void wf_free(void *ptr);
char *wf_strdup(const char *s);
char *wf_strndup(const char *s, size_t len);

/* Test support: make the Nth allocation from now on (1-based) and every later one fail;
 * 0 disables. wf_alloc_fail_count() tells how many allocations were refused. */
void wf_alloc_fail_after(unsigned long n);
unsigned long wf_alloc_fail_count(void);

/* ---- arena: bump allocation, freed all at once ---------------------------------------- */
typedef struct wf_arena wf_arena;

wf_arena *wf_arena_create(size_t block_size); /* 0 = default (8 KiB) */
void wf_arena_destroy(wf_arena *arena);       /* accepts NULL */
void *wf_arena_alloc(wf_arena *arena, size_t size); /* 8-byte aligned, zeroed; NULL on OOM */
/* Strings are packed (no alignment), from the other end of the arena's block. */
char *wf_arena_strdup(wf_arena *arena, const char *s);
char *wf_arena_strndup(wf_arena *arena, const char *s, size_t len);
size_t wf_arena_bytes(const wf_arena *arena); /* bytes reserved from the allocator */

/* ---- pool: fixed-size slots on a freelist --------------------------------------------- */
typedef struct wf_pool wf_pool;

wf_pool *wf_pool_create(size_t slot_size, size_t slots_per_block);
void wf_pool_destroy(wf_pool *pool);    /* frees every slot at once; accepts NULL */
void *wf_pool_get(wf_pool *pool);       /* zeroed slot; NULL on OOM */
void wf_pool_put(wf_pool *pool, void *slot);
size_t wf_pool_in_use(const wf_pool *pool);

/* ---- buf: growable bytes -------------------------------------------------------------- */
/* Invariants: after wf_buf_init, data is never NULL and always NUL-terminated at data[len];
 * on allocation failure the buffer keeps its old contents and sets oom (sticky), so a
 * sequence of appends can be checked once at the end. wf_buf_detach is the only way to keep
 * the bytes (free them with wf_free). */
typedef struct wf_buf {
    char *data;
    size_t len;
    size_t cap;
    bool oom;
} wf_buf;

void wf_buf_init(wf_buf *buf);
void wf_buf_fini(wf_buf *buf);
void wf_buf_reset(wf_buf *buf); /* len = 0, keeps capacity */
bool wf_buf_add(wf_buf *buf, const void *data, size_t len);
bool wf_buf_adds(wf_buf *buf, const char *s);
bool wf_buf_addc(wf_buf *buf, char c);
bool wf_buf_addf(wf_buf *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Length of the valid UTF-8 sequence at s (at most `left` bytes, left >= 1): 1 for ASCII, 0 if
 * invalid (overlong, surrogate, beyond U+10FFFF, truncated). */
size_t wf_utf8_seq_len(const void *s, size_t left);
char *wf_buf_detach(wf_buf *buf, size_t *len); /* NULL if oom; buf is re-initialised */

/* ---- strmap: string keys -> pointers ------------------------------------------------- */
/* Keys are copied into the map; values are borrowed unless a destroy function is given,
 * which the map then calls on each value when it is replaced or the map is destroyed. */
typedef struct wf_strmap wf_strmap;

wf_strmap *wf_strmap_create(void (*destroy_value)(void *value));
void wf_strmap_destroy(wf_strmap *map);
wf_status wf_strmap_put(wf_strmap *map, const char *key, void *value); /* WF_E_NOMEM */
void *wf_strmap_get(const wf_strmap *map, const char *key);
bool wf_strmap_remove(wf_strmap *map, const char *key);
size_t wf_strmap_count(const wf_strmap *map);
/* Iterate: *pos starts at 0; returns false at the end. Order is unspecified. */
bool wf_strmap_next(const wf_strmap *map, size_t *pos, const char **key, void **value);

/* 64-bit FNV-1a, for content hashes (stable across runs). Not for tables keyed by input. */
uint64_t wf_hash_bytes(const void *data, size_t len);
/* SipHash-2-4 of data under the 128-bit key k0 (bytes 0-7, little-endian), k1 (bytes 8-15):
 * a keyed hash for tables whose keys come from input files, so that nobody can choose names
 * that all collide (wf_strmap keys it per process and per map). */
uint64_t wf_siphash24(uint64_t k0, uint64_t k1, const void *data, size_t len);

#endif

/* wf_mem.c — the allocator hook, arena, pool, growable buffer and string map (wf_mem.h).
 * Every allocation funnels through wf_malloc/wf_realloc so the test hook can refuse the Nth
 * one; the counters are atomics because runtimes allocate from several worker threads. */
#include "wf_mem.h"

#include <assert.h>
#include <pthread.h> /* the process's map key, drawn once */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>  /* vsnprintf */
#include <stdlib.h> /* malloc, realloc, free */
#include <string.h>

#include "wf_random.h"

/* ---- allocator hook ------------------------------------------------------------------- */

static void *libc_malloc(size_t size, void *ud)
{
    (void)ud;
    return malloc(size);
}

static void *libc_realloc(void *ptr, size_t size, void *ud)
{
    (void)ud;
    return realloc(ptr, size);
}

static void libc_free(void *ptr, void *ud)
{
    (void)ud;
    free(ptr);
}

static const wf_alloc_hooks libc_hooks = {libc_malloc, libc_realloc, libc_free, NULL};
static wf_alloc_hooks hooks = {libc_malloc, libc_realloc, libc_free, NULL};

/* Test hook state: fail_at == 0 disables; otherwise allocation number fail_at (counted from
 * the last wf_alloc_fail_after call) and all later ones fail. */
static atomic_ulong fail_at;
static atomic_ulong alloc_seq;
static atomic_ulong fail_count;

void wf_alloc_set_hooks(const wf_alloc_hooks *h)
{
    hooks = h ? *h : libc_hooks;
}

void wf_alloc_fail_after(unsigned long n)
{
    atomic_store(&fail_at, 0);
    atomic_store(&alloc_seq, 0);
    atomic_store(&fail_count, 0);
    atomic_store(&fail_at, n);
}

unsigned long wf_alloc_fail_count(void)
{
    return atomic_load(&fail_count);
}

static bool should_fail(void)
{
    unsigned long at = atomic_load_explicit(&fail_at, memory_order_relaxed);
    if (at == 0)
        return false;
    if (atomic_fetch_add(&alloc_seq, 1) + 1 < at)
        return false;
    atomic_fetch_add(&fail_count, 1);
    return true;
}

void *wf_malloc(size_t size)
{
    if (should_fail())
        return NULL;
    return hooks.malloc_fn(size ? size : 1, hooks.ud);
}

void *wf_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    void *p = wf_malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *wf_realloc(void *ptr, size_t size)
{
    if (should_fail())
        return NULL;
    return hooks.realloc_fn(ptr, size ? size : 1, hooks.ud);
}

void wf_free(void *ptr)
{
    if (ptr)
        hooks.free_fn(ptr, hooks.ud);
}

char *wf_strndup(const char *s, size_t len)
{
    char *p = wf_malloc(len + 1);
    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *wf_strdup(const char *s)
{
    return s ? wf_strndup(s, strlen(s)) : NULL;
}

/* ---- arena ---------------------------------------------------------------------------- */

/* Structures take bytes from the bottom of a block, 8-byte aligned (the widest scalar a
 * structure in wfbridge holds: pointers, 64-bit integers, doubles) and zeroed one request at
 * a time, so a block is never cleared as a whole; strings take bytes from its top, packed
 * with no alignment and not zeroed (they are copied over at once). The block is full when
 * the two meet. */
#define ARENA_ALIGN         8
#define ARENA_DEFAULT_BLOCK 8192

typedef struct arena_block {
    struct arena_block *next;
    size_t size, used, top; /* bytes of data[]: [0, used) structures, [top, size) strings */
    _Alignas(ARENA_ALIGN) unsigned char data[];
} arena_block;

struct wf_arena {
    arena_block *head; /* the block being filled; older blocks follow */
    size_t block_size;
    size_t reserved;
};

wf_arena *wf_arena_create(size_t block_size)
{
    wf_arena *arena = wf_calloc(1, sizeof *arena);
    if (!arena)
        return NULL;
    arena->block_size = block_size ? block_size : ARENA_DEFAULT_BLOCK;
    return arena;
}

void wf_arena_destroy(wf_arena *arena)
{
    if (!arena)
        return;
    arena_block *b = arena->head;
    while (b) {
        arena_block *next = b->next;
        wf_free(b);
        b = next;
    }
    wf_free(arena);
}

/* A request larger than a quarter block gets a block of its own, linked behind the head so
 * the head keeps filling. The block is not cleared: each request zeroes what it takes.
 * Out of line: arena_room's common case (the head has room) then inlines into its callers. */
static __attribute__((noinline)) arena_block *arena_grow(wf_arena *arena, size_t size)
{
    bool own = size > arena->block_size / 4;
    size_t data = own ? size : arena->block_size;
    if (data > SIZE_MAX - sizeof(arena_block))
        return NULL;
    arena_block *b = wf_malloc(sizeof(arena_block) + data);
    if (!b)
        return NULL;
    b->size = b->top = data;
    b->used = 0;
    arena->reserved += sizeof(arena_block) + data;
    if (own && arena->head) {
        b->next = arena->head->next;
        arena->head->next = b;
    } else {
        b->next = arena->head;
        arena->head = b;
    }
    return b;
}

/* A block with `need` bytes free between its two ends, growing the arena if the head has
 * none. */
static arena_block *arena_room(wf_arena *arena, size_t need)
{
    arena_block *b = arena->head;
    if (__builtin_expect(b && b->top - b->used >= need, 1))
        return b;
    return arena_grow(arena, need);
}

void *wf_arena_alloc(wf_arena *arena, size_t size)
{
    if (size > SIZE_MAX - ARENA_ALIGN)
        return NULL;
    size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need == 0)
        need = ARENA_ALIGN;
    arena_block *b = arena_room(arena, need);
    if (!b)
        return NULL;
    void *p = b->data + b->used;
    b->used += need;
    assert(b->used <= b->top && (uintptr_t)p % ARENA_ALIGN == 0);
    memset(p, 0, need);
    return p;
}

char *wf_arena_strndup(wf_arena *arena, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    arena_block *b = arena_room(arena, len + 1);
    if (!b)
        return NULL;
    b->top -= len + 1;
    char *p = (char *)b->data + b->top;
    assert(b->used <= b->top);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *wf_arena_strdup(wf_arena *arena, const char *s)
{
    return s ? wf_arena_strndup(arena, s, strlen(s)) : NULL;
}

size_t wf_arena_bytes(const wf_arena *arena)
{
    return arena ? arena->reserved : 0;
}

/* ---- pool ----------------------------------------------------------------------------- */

typedef struct pool_block {
    struct pool_block *next;
    _Alignas(16) unsigned char slots[];
} pool_block;

struct wf_pool {
    pool_block *blocks; /* owned */
    void *free_list;    /* each free slot starts with the pointer to the next */
    size_t slot_size, per_block;
    size_t in_use;
};

wf_pool *wf_pool_create(size_t slot_size, size_t slots_per_block)
{
    wf_pool *pool = wf_calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    if (slot_size < sizeof(void *))
        slot_size = sizeof(void *);
    pool->slot_size = (slot_size + 15) & ~(size_t)15;
    pool->per_block = slots_per_block ? slots_per_block : 64;
    return pool;
}

void wf_pool_destroy(wf_pool *pool)
{
    if (!pool)
        return;
    pool_block *b = pool->blocks;
    while (b) {
        pool_block *next = b->next;
        wf_free(b);
        b = next;
    }
    wf_free(pool);
}

static bool pool_grow(wf_pool *pool)
{
    if (pool->per_block > (SIZE_MAX - sizeof(pool_block)) / pool->slot_size)
        return false;
    pool_block *b = wf_malloc(sizeof(pool_block) + pool->per_block * pool->slot_size);
    if (!b)
        return false;
    b->next = pool->blocks;
    pool->blocks = b;
    for (size_t i = pool->per_block; i-- > 0;) {
        void *slot = b->slots + i * pool->slot_size;
        *(void **)slot = pool->free_list;
        pool->free_list = slot;
    }
    return true;
}

void *wf_pool_get(wf_pool *pool)
{
    if (!pool->free_list && !pool_grow(pool))
        return NULL;
    void *slot = pool->free_list;
    assert((uintptr_t)slot % 16 == 0); /* every slot starts on a slot boundary */
    pool->free_list = *(void **)slot;
    memset(slot, 0, pool->slot_size);
    pool->in_use++;
    return slot;
}

void wf_pool_put(wf_pool *pool, void *slot)
{
    if (!slot)
        return;
    assert(pool->in_use > 0 && slot != pool->free_list); /* more puts than gets: a double put */
    assert((uintptr_t)slot % 16 == 0);
    *(void **)slot = pool->free_list;
    pool->free_list = slot;
    pool->in_use--;
}

size_t wf_pool_in_use(const wf_pool *pool)
{
    return pool ? pool->in_use : 0;
}

/* ---- buf ------------------------------------------------------------------------------ */

/* cap == 0 means data points here and nothing is owned. */
static char buf_empty[1];

/* The invariants wf_mem.h states: data never NULL, NUL-terminated at data[len], inside its
 * capacity; the shared empty buffer never written. */
static bool buf_ok(const wf_buf *buf)
{
    if (buf_empty[0] != '\0')
        return false;
    if (buf->cap == 0) /* wf_buf_init's empty buffer (or a zeroed struct, which adds accept) */
        return (buf->data == buf_empty || !buf->data) && buf->len == 0;
    return buf->len < buf->cap && buf->data[buf->len] == '\0';
}

void wf_buf_init(wf_buf *buf)
{
    buf->data = buf_empty;
    buf->len = buf->cap = 0;
    buf->oom = false;
}

void wf_buf_fini(wf_buf *buf)
{
    if (buf->cap)
        wf_free(buf->data);
    wf_buf_init(buf);
}

void wf_buf_reset(wf_buf *buf)
{
    buf->len = 0;
    if (buf->cap)
        buf->data[0] = '\0';
}

/* Make room for `extra` more bytes plus the NUL. */
static bool buf_reserve(wf_buf *buf, size_t extra)
{
    assert(buf_ok(buf)); /* an uninitialised or corrupted buffer stops here */
    if (buf->oom)
        return false;
    if (extra > SIZE_MAX - buf->len - 1) {
        buf->oom = true;
        return false;
    }
    size_t need = buf->len + extra + 1;
    if (need <= buf->cap)
        return true;
    size_t cap = buf->cap ? buf->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *data = wf_realloc(buf->cap ? buf->data : NULL, cap);
    if (!data) {
        buf->oom = true;
        return false;
    }
    if (!buf->cap)
        data[0] = '\0';
    buf->data = data;
    buf->cap = cap;
    return true;
}

bool wf_buf_add(wf_buf *buf, const void *data, size_t len)
{
    if (!buf_reserve(buf, len))
        return false;
    if (len)
        memcpy(buf->data + buf->len, data, len);
    buf->len += len;
    buf->data[buf->len] = '\0';
    assert(buf_ok(buf));
    return true;
}

bool wf_buf_adds(wf_buf *buf, const char *s)
{
    return wf_buf_add(buf, s, strlen(s));
}

bool wf_buf_addc(wf_buf *buf, char c)
{
    return wf_buf_add(buf, &c, 1);
}

bool wf_buf_addf(wf_buf *buf, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return false;
    if ((size_t)n < sizeof small)
        return wf_buf_add(buf, small, (size_t)n);
    if (!buf_reserve(buf, (size_t)n))
        return false;
    va_start(ap, fmt);
    vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf->len += (size_t)n;
    assert(buf_ok(buf));
    return true;
}

size_t wf_utf8_seq_len(const void *data, size_t left)
{
    const unsigned char *s = data;
    unsigned c = s[0];
    size_t n = c < 0x80                ? 1
               : c >= 0xC2 && c < 0xE0 ? 2
               : c >= 0xE0 && c < 0xF0 ? 3
               : c >= 0xF0 && c < 0xF5 ? 4
                                       : 0;
    if (n == 0 || n > left)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0) || (c == 0xF0 && s[1] < 0x90) ||
        (c == 0xF4 && s[1] >= 0x90))
        return 0; /* overlong, surrogate or beyond U+10FFFF */
    return n;
}

char *wf_buf_detach(wf_buf *buf, size_t *len)
{
    if (buf->oom) {
        wf_buf_fini(buf);
        if (len)
            *len = 0;
        return NULL;
    }
    char *data = buf->cap ? buf->data : wf_strdup("");
    if (len)
        *len = data ? buf->len : 0;
    wf_buf_init(buf);
    return data;
}

/* ---- strmap: open addressing, linear probing, tombstones ------------------------------ */

typedef struct map_slot {
    char *key; /* owned; NULL = empty; TOMBSTONE = deleted */
    void *value;
    uint64_t hash;
} map_slot;

static char tombstone_mark;
#define TOMBSTONE (&tombstone_mark)

struct wf_strmap {
    map_slot *slots;
    size_t cap;   /* power of two */
    size_t count; /* live entries */
    size_t used;  /* live + tombstones */
    void (*destroy_value)(void *value);
    uint64_t k0, k1; /* this map's SipHash key (map_key) */
};

/* The process's random key, drawn once; each map mixes in its own sequence number, so that
 * keys found to collide in one map (or one run) do not collide in another. */
static uint64_t process_key[2];
static pthread_once_t process_key_once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t maps_created;

static void draw_process_key(void)
{
    wf_random_bytes(process_key, sizeof process_key);
}

static void map_key(wf_strmap *map)
{
    pthread_once(&process_key_once, draw_process_key);
    uint64_t n = atomic_fetch_add(&maps_created, 1) + 1;
    map->k0 = process_key[0];
    map->k1 = wf_siphash24(process_key[0], process_key[1], &n, sizeof n);
}

static uint64_t key_hash(const wf_strmap *map, const char *key)
{
    return wf_siphash24(map->k0, map->k1, key, strlen(key));
}

wf_strmap *wf_strmap_create(void (*destroy_value)(void *value))
{
    wf_strmap *map = wf_calloc(1, sizeof *map);
    if (map) {
        map->destroy_value = destroy_value;
        map_key(map);
    }
    return map;
}

void wf_strmap_destroy(wf_strmap *map)
{
    if (!map)
        return;
    for (size_t i = 0; i < map->cap; i++) {
        map_slot *s = &map->slots[i];
        if (s->key && s->key != TOMBSTONE) {
            if (map->destroy_value)
                map->destroy_value(s->value);
            wf_free(s->key);
        }
    }
    wf_free(map->slots);
    wf_free(map);
}

/* The slot holding key, or NULL. */
static map_slot *map_find(const wf_strmap *map, const char *key, uint64_t hash)
{
    if (!map->cap)
        return NULL;
    size_t mask = map->cap - 1;
    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        map_slot *s = &map->slots[i];
        if (!s->key)
            return NULL;
        if (s->key != TOMBSTONE && s->hash == hash && strcmp(s->key, key) == 0)
            return s;
    }
}

static bool map_resize(wf_strmap *map, size_t cap)
{
    map_slot *slots = wf_calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < map->cap; i++) {
        map_slot *s = &map->slots[i];
        if (!s->key || s->key == TOMBSTONE)
            continue;
        size_t j = (size_t)s->hash & (cap - 1);
        while (slots[j].key)
            j = (j + 1) & (cap - 1);
        slots[j] = *s;
    }
    wf_free(map->slots);
    map->slots = slots;
    map->cap = cap;
    map->used = map->count;
    return true;
}

wf_status wf_strmap_put(wf_strmap *map, const char *key, void *value)
{
    uint64_t hash = key_hash(map, key);
    map_slot *s = map_find(map, key, hash);
    if (s) {
        if (map->destroy_value && s->value != value)
            map->destroy_value(s->value);
        s->value = value;
        return WF_OK;
    }
    if ((map->used + 1) * 4 > map->cap * 3) {
        size_t cap = map->cap ? (map->count * 2 + 2 > map->cap ? map->cap * 2 : map->cap) : 16;
        if (!map_resize(map, cap))
            return WF_E_NOMEM;
    }
    char *copy = wf_strdup(key);
    if (!copy)
        return WF_E_NOMEM;
    size_t mask = map->cap - 1;
    size_t i = (size_t)hash & mask;
    while (map->slots[i].key && map->slots[i].key != TOMBSTONE)
        i = (i + 1) & mask;
    if (!map->slots[i].key)
        map->used++;
    map->slots[i] = (map_slot){copy, value, hash};
    map->count++;
    /* open addressing: a power-of-two table never more than 3/4 full (tombstones included) */
    assert((map->cap & (map->cap - 1)) == 0 && map->count <= map->used &&
           map->used * 4 <= map->cap * 3);
    return WF_OK;
}

void *wf_strmap_get(const wf_strmap *map, const char *key)
{
    map_slot *s = map_find(map, key, key_hash(map, key));
    return s ? s->value : NULL;
}

bool wf_strmap_remove(wf_strmap *map, const char *key)
{
    map_slot *s = map_find(map, key, key_hash(map, key));
    if (!s)
        return false;
    if (map->destroy_value)
        map->destroy_value(s->value);
    wf_free(s->key);
    s->key = TOMBSTONE;
    s->value = NULL;
    map->count--;
    return true;
}

size_t wf_strmap_count(const wf_strmap *map)
{
    return map ? map->count : 0;
}

bool wf_strmap_next(const wf_strmap *map, size_t *pos, const char **key, void **value)
{
    for (size_t i = *pos; map && i < map->cap; i++) {
        map_slot *s = &map->slots[i];
        if (s->key && s->key != TOMBSTONE) {
            if (key)
                *key = s->key;
            if (value)
                *value = s->value;
            *pos = i + 1;
            return true;
        }
    }
    return false;
}

uint64_t wf_hash_bytes(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* ---- SipHash-2-4 (Aumasson and Bernstein): 2 compression rounds per 8-byte word, 4 to
 * finish; words and the key are read little-endian. ---------------------------------------- */
#define ROTL64(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static void sip_rounds(uint64_t v[4], int rounds)
{
    for (int i = 0; i < rounds; i++) {
        v[0] += v[1];
        v[1] = ROTL64(v[1], 13) ^ v[0];
        v[0] = ROTL64(v[0], 32);
        v[2] += v[3];
        v[3] = ROTL64(v[3], 16) ^ v[2];
        v[0] += v[3];
        v[3] = ROTL64(v[3], 21) ^ v[0];
        v[2] += v[1];
        v[1] = ROTL64(v[1], 17) ^ v[2];
        v[2] = ROTL64(v[2], 32);
    }
}

static uint64_t read_le64(const unsigned char *p, size_t n)
{
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return w;
}

uint64_t wf_siphash24(uint64_t k0, uint64_t k1, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t v[4] = {k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
                     k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL};
    size_t whole = len - len % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = read_le64(p + i, 8);
        v[3] ^= m;
        sip_rounds(v, 2);
        v[0] ^= m;
    }
    uint64_t last = ((uint64_t)(len & 0xff) << 56) | read_le64(p + whole, len % 8);
    v[3] ^= last;
    sip_rounds(v, 2);
    v[0] ^= last;
    v[2] ^= 0xff;
    sip_rounds(v, 4);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* wf_native.c — native libraries found only on the configured library path, opened once and
 * shared through a refcounted registry, and libffi calls whose call interface is built once
 * per prepared function. Marshalling follows the type mapping of docs/architecture.md "The legacy
 * model"; strings the callee allocates are released with the C library's free() (wf_native.h). */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "wf_native.h"

#include <assert.h>
#include <dlfcn.h>
#include <ffi.h>
#include <link.h> /* dl_iterate_phdr */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h> /* malloc/free: the callee's side of string ownership */
#include <string.h>
#include <sys/stat.h>

#include "wf_mem.h"

#define MAX_PARAMS WF_NATIVE_MAX_PARAMS

/* ---- library path --------------------------------------------------------------------- */

struct wf_libpath {
    char **dirs; /* owned */
    size_t count;
};

wf_status wf_libpath_create(const char *dirs, wf_libpath **out, wf_error *err)
{
    *out = NULL;
    wf_libpath *path = wf_calloc(1, sizeof *path);
    size_t max = 1;
    for (const char *p = dirs ? dirs : ""; *p; p++)
        max += *p == ':';
    if (path)
        path->dirs = wf_calloc(max, sizeof *path->dirs);
    if (!path || !path->dirs)
        goto nomem;
    for (const char *p = dirs ? dirs : ""; *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && !(path->dirs[path->count++] = wf_strndup(p, n)))
            goto nomem;
        p += n + (p[n] == ':');
    }
    *out = path;
    return WF_OK;
nomem:
    wf_libpath_destroy(path);
    return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory reading the library path");
}

void wf_libpath_destroy(wf_libpath *path)
{
    if (!path)
        return;
    for (size_t i = 0; i < path->count; i++)
        wf_free(path->dirs[i]);
    wf_free(path->dirs);
    wf_free(path);
}

size_t wf_libpath_count(const wf_libpath *path)
{
    return path ? path->count : 0;
}

const char *wf_libpath_dir(const wf_libpath *path, size_t index)
{
    return path && index < path->count ? path->dirs[index] : NULL;
}

static bool plain_name(const char *name)
{
    return name && *name && !strchr(name, '/') && !strstr(name, "..");
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The directories joined with ':' for messages. */
static void dirs_text(const wf_libpath *path, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < wf_libpath_count(path) && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ":" : "", path->dirs[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (!buf[0])
        snprintf(buf, size, "(empty)");
}

static bool find_in(const wf_libpath *path, const char *file_name, char *out, size_t size)
{
    for (size_t i = 0; i < wf_libpath_count(path); i++) {
        int n = snprintf(out, size, "%s/%s", path->dirs[i], file_name);
        if (n > 0 && (size_t)n < size && is_file(out))
            return true;
    }
    return false;
}

wf_status wf_libpath_find(const wf_libpath *path, const char *file_name, char *out, size_t out_size,
                          wf_error *err)
{
    if (out_size)
        out[0] = '\0';
    if (!plain_name(file_name))
        return wf_error_set(err, WF_E_NOLIB, NULL,
                            "'%s' is not a plain file name; only names on the library path "
                            "are allowed",
                            file_name ? file_name : "");
    if (find_in(path, file_name, out, out_size))
        return WF_OK;
    if (out_size)
        out[0] = '\0';
    char dirs[512];
    dirs_text(path, dirs, sizeof dirs);
    return wf_error_set(err, WF_E_NOTFOUND, NULL, "'%s' not found on the library path %s",
                        file_name, dirs);
}

/* ---- libraries: a process-wide registry so one file is dlopen'ed once ----------------- */

struct wf_native_lib {
    char *file;    /* full path, owned */
    void *handle;  /* from dlopen */
    unsigned refs; /* guarded by libs_lock */
    uintptr_t *objects; /* owned: dlpi_addr of every object its dlopen brought in */
    size_t object_count;
    wf_native_lib *next;
};

static pthread_mutex_t libs_lock = PTHREAD_MUTEX_INITIALIZER;
static wf_native_lib *libs;

/* The objects of the process in dl_iterate_phdr order: new ones are appended, so what a
 * dlopen brings in is what follows the objects counted before it. */
typedef struct objects_seen {
    size_t skip, count;
    uintptr_t *addr; /* NULL: only counting */
} objects_seen;

static int object_seen(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    objects_seen *o = ud;
    if (o->skip) {
        o->skip--;
        return 0;
    }
    if (o->addr)
        o->addr[o->count] = (uintptr_t)info->dlpi_addr;
    o->count++;
    return 0;
}

/* Note in lib the objects past the first `before` ones (the dlopen that just happened). */
static void lib_note_objects(wf_native_lib *lib, size_t before)
{
    objects_seen o = {.skip = before};
    dl_iterate_phdr(object_seen, &o);
    size_t n = o.count;
    if (!n || !(lib->objects = wf_calloc(n, sizeof *lib->objects)))
        return; /* none new, or out of memory: verify's workers then restore none of them */
    o = (objects_seen){.skip = before, .addr = lib->objects};
    dl_iterate_phdr(object_seen, &o);
    lib->object_count = o.count < n ? o.count : n;
}

size_t wf_native_lib_objects(uintptr_t *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&libs_lock);
    for (const wf_native_lib *lib = libs; lib; lib = lib->next)
        for (size_t i = 0; i < lib->object_count; i++, n++)
            if (n < max)
                out[n] = lib->objects[i];
    pthread_mutex_unlock(&libs_lock);
    return n;
}

/* Opens (or retains) the library at `file`; caller holds libs_lock. */
static wf_status lib_open_locked(const char *file, wf_native_lib **out, wf_error *err)
{
    for (wf_native_lib *lib = libs; lib; lib = lib->next)
        if (strcmp(lib->file, file) == 0) {
            assert(lib->refs > 0); /* a library left in the registry is referenced */
            lib->refs++;
            *out = lib;
            return WF_OK;
        }
    wf_native_lib *lib = wf_calloc(1, sizeof *lib);
    if (lib)
        lib->file = wf_strdup(file);
    if (!lib || !lib->file) {
        if (lib)
            wf_free(lib);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening %s", file);
    }
    dlerror();
    objects_seen before = {0};
    dl_iterate_phdr(object_seen, &before);
    lib->handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle) {
        const char *why = dlerror();
        wf_status st = wf_error_set(err, WF_E_NOLIB, NULL, "cannot load native library %s: %s",
                                    file, why ? why : "unknown error");
        wf_free(lib->file);
        wf_free(lib);
        return st;
    }
    lib_note_objects(lib, before.count);
    lib->refs = 1;
    lib->next = libs;
    libs = lib;
    *out = lib;
    return WF_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The first existing candidate file for NAME, directory by directory. */
static bool lib_candidate(const wf_libpath *path, const char *name, char *out, size_t size)
{
    char lib_name[512], plain[512];
    if (ends_with(name, ".so"))
        return find_in(path, name, out, size);
    snprintf(lib_name, sizeof lib_name, "lib%s.so", name);
    snprintf(plain, sizeof plain, "%s.so", name);
    for (size_t i = 0; i < wf_libpath_count(path); i++) {
        const char *names[] = {lib_name, plain};
        for (size_t k = 0; k < 2; k++) {
            int n = snprintf(out, size, "%s/%s", path->dirs[i], names[k]);
            if (n > 0 && (size_t)n < size && is_file(out))
                return true;
        }
    }
    return false;
}

wf_status wf_native_lib_open(const wf_libpath *path, const char *name, wf_native_lib **out,
                             wf_error *err)
{
    *out = NULL;
    if (!plain_name(name) || strlen(name) > 400)
        return wf_error_set(err, WF_E_NOLIB, NULL,
                            "native library name '%s' is not a plain name; libraries load "
                            "only from the library path",
                            name ? name : "");
    char file[1024];
    if (!lib_candidate(path, name, file, sizeof file)) {
        char dirs[512];
        dirs_text(path, dirs, sizeof dirs);
        return wf_error_set(err, WF_E_NOLIB, NULL,
                            "native library '%s' not found on the library path %s", name, dirs);
    }
    pthread_mutex_lock(&libs_lock);
    wf_status st = lib_open_locked(file, out, err);
    pthread_mutex_unlock(&libs_lock);
    return st;
}

void wf_native_lib_close(wf_native_lib *lib)
{
    if (!lib)
        return;
    pthread_mutex_lock(&libs_lock);
    assert(lib->refs > 0); /* one close per open: a second close would underflow */
    bool last = --lib->refs == 0;
    if (last) {
        wf_native_lib **link = &libs;
        while (*link != lib) {
            assert(*link); /* an open library is in the registry */
            link = &(*link)->next;
        }
        *link = lib->next;
    }
    pthread_mutex_unlock(&libs_lock);
    if (!last)
        return;
    dlclose(lib->handle);
    wf_free(lib->objects);
    wf_free(lib->file);
    wf_free(lib);
}

const char *wf_native_lib_file(const wf_native_lib *lib)
{
    return lib ? lib->file : NULL;
}

/* ---- prepared functions --------------------------------------------------------------- */

/* A call made without libffi through a function pointer of the exact C type (see "direct
 * calls"): code, avalues as for ffi_call, ret a ret_slot. */
typedef void (*direct_fn)(void (*code)(void), void **avalues, void *ret);

struct wf_native_fn {
    char *name;         /* owned */
    char *lib_file;     /* owned copy, for messages */
    void (*code)(void); /* the resolved symbol */
    wf_native_sig sig;  /* params point at `params` */
    wf_native_param params[MAX_PARAMS];
    ffi_type *arg_types[MAX_PARAMS];
    ffi_cif cif;
    direct_fn direct; /* NULL: called through ffi_call */
    bool scalar;      /* wf_native_fn_is_scalar */
};

/* The C type of a value type at the boundary; NULL when it has none. */
static ffi_type *c_type(const wf_type *t)
{
    switch (t ? t->kind : WF_K_NULL) {
    case WF_K_BOOL:
        return &ffi_type_uint8;
    case WF_K_INT32:
        return &ffi_type_sint32;
    case WF_K_INT64:
    case WF_K_DECIMAL:
    case WF_K_DATETIME:
        return &ffi_type_sint64;
    case WF_K_DOUBLE:
        return &ffi_type_double;
    case WF_K_STRING:
        return &ffi_type_pointer;
    default:
        return NULL;
    }
}

static wf_status check_sig(const wf_native_sig *sig, const char *symbol, wf_error *err)
{
    if (sig->param_count > MAX_PARAMS)
        return wf_error_set(err, WF_E_LIMIT, NULL, "%s has %zu parameters; at most %d", symbol,
                            sig->param_count, MAX_PARAMS);
    if (sig->ret && !c_type(sig->ret))
        return wf_error_set(err, WF_E_TYPE, NULL, "%s: return type %s has no C mapping", symbol,
                            sig->ret->name);
    for (size_t i = 0; i < sig->param_count; i++)
        if (!c_type(sig->params[i].type))
            return wf_error_set(err, WF_E_TYPE, NULL,
                                "%s: parameter %zu of type %s has no "
                                "C mapping",
                                symbol, i + 1,
                                sig->params[i].type ? sig->params[i].type->name : "(none)");
    if (sig->error_on_nonzero && (!sig->ret || sig->ret->kind != WF_K_INT32))
        return wf_error_set(err, WF_E_TYPE, NULL, "%s: ErrorOnNonZero needs an Int32 return value",
                            symbol);
    return WF_OK;
}

static direct_fn direct_of(const wf_native_fn *fn);

/* A type whose C value is a plain register: nothing to convert, hold or free. */
static bool is_scalar_type(const wf_type *t)
{
    switch (t->kind) {
    case WF_K_BOOL:
    case WF_K_INT32:
    case WF_K_INT64:
    case WF_K_DATETIME:
    case WF_K_DOUBLE:
        return true;
    default:
        return false;
    }
}

static bool scalar_sig(const wf_native_sig *sig)
{
    if (sig->error_on_nonzero || (sig->ret && !is_scalar_type(sig->ret)))
        return false;
    for (size_t i = 0; i < sig->param_count; i++)
        if (!is_scalar_type(sig->params[i].type))
            return false;
    return true;
}

static wf_status build_cif(wf_native_fn *fn, wf_error *err)
{
    fn->direct = direct_of(fn);
    fn->scalar = scalar_sig(&fn->sig);
    for (size_t i = 0; i < fn->sig.param_count; i++)
        fn->arg_types[i] =
            fn->params[i].dir == WF_NATIVE_IN ? c_type(fn->params[i].type) : &ffi_type_pointer;
    ffi_type *rtype = fn->sig.ret ? c_type(fn->sig.ret) : &ffi_type_void;
    if (ffi_prep_cif(&fn->cif, FFI_DEFAULT_ABI, (unsigned)fn->sig.param_count, rtype,
                     fn->arg_types) != FFI_OK)
        return wf_error_set(err, WF_E_NATIVE, NULL, "cannot build a call interface for %s",
                            fn->name);
    return WF_OK;
}

wf_status wf_native_fn_prepare(wf_native_lib *lib, const char *symbol, const wf_native_sig *sig,
                               wf_native_fn **out, wf_error *err)
{
    *out = NULL;
    wf_status st = check_sig(sig, symbol, err);
    if (st != WF_OK)
        return st;
    dlerror();
    void *sym = dlsym(lib->handle, symbol);
    if (!sym)
        return wf_error_set(err, WF_E_NOSYM, NULL, "function '%s' not found in %s", symbol,
                            lib->file);
    wf_native_fn *fn = wf_calloc(1, sizeof *fn);
    if (!fn || !(fn->name = wf_strdup(symbol)) || !(fn->lib_file = wf_strdup(lib->file))) {
        wf_native_fn_destroy(fn);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory preparing %s", symbol);
    }
    *(void **)&fn->code = sym; /* POSIX: dlsym's object pointer holds a function address */
    fn->sig = *sig;
    if (sig->param_count)
        memcpy(fn->params, sig->params, sig->param_count * sizeof *fn->params);
    fn->sig.params = fn->params;
    st = build_cif(fn, err);
    if (st != WF_OK) {
        wf_native_fn_destroy(fn);
        return st;
    }
    *out = fn;
    return WF_OK;
}

void wf_native_fn_destroy(wf_native_fn *fn)
{
    if (!fn)
        return;
    wf_free(fn->name);
    wf_free(fn->lib_file);
    wf_free(fn);
}

const char *wf_native_fn_name(const wf_native_fn *fn)
{
    return fn ? fn->name : NULL;
}

const wf_native_sig *wf_native_fn_sig(const wf_native_fn *fn)
{
    return fn ? &fn->sig : NULL;
}

/* ---- calls ---------------------------------------------------------------------------- */

typedef union slot {
    uint8_t b;
    int32_t i32;
    int64_t i64;
    double d;
    char *s; /* IN: borrowed from held[]; OUT/INOUT: malloc'd, freed after the call */
} slot;

typedef struct call_frame {
    slot slots[MAX_PARAMS];
    void *ptrs[MAX_PARAMS]; /* OUT/INOUT: the address of the slot */
    void *avalues[MAX_PARAMS];
    wf_value held[MAX_PARAMS]; /* converted In values, alive for the call */
} call_frame;

typedef union ret_slot {
    ffi_arg a; /* integer returns are widened to a full register */
    ffi_sarg sa;
    int64_t i64;
    double d;
    char *s;
} ret_slot;

/* ---- direct calls ---------------------------------------------------------------------
 * ffi_call classifies the signature again on every call (~380 instructions, as much as the
 * rest of a call). The shapes code-beside handlers and conditions use most, up to two Int32
 * or pointer arguments and a void, Boolean or Int32 result, are called through a function
 * pointer of their C type instead: the same call, since the declared signature is the
 * function's. A pointer argument (OUT/INOUT, or an IN String) goes as void *, as libffi's
 * ffi_type_pointer passes it; a Boolean comes back as uint8_t (ffi_type_uint8). */
static int32_t arg_i(void *a)
{
    int32_t v;
    memcpy(&v, a, sizeof v);
    return v;
}
static void *arg_p(void *a)
{
    void *v;
    memcpy(&v, a, sizeof v);
    return v;
}
#define CT_i         int32_t
#define CT_p         void *
#define RT_v         void
#define RT_b         uint8_t
#define RT_i         int32_t
#define KEEP_v(call) call
#define KEEP_b(call) r->a = (call)
#define KEEP_i(call) r->sa = (call)
#define DIRECT0(R)                                                                                 \
    static void direct_##R(void (*code)(void), void **av, void *ret)                               \
    {                                                                                              \
        ret_slot *r = ret;                                                                         \
        (void)r, (void)av;                                                                         \
        KEEP_##R(((RT_##R(*)(void))code)());                                                       \
    }
#define DIRECT1(R, A)                                                                              \
    static void direct_##R##A(void (*code)(void), void **av, void *ret)                            \
    {                                                                                              \
        ret_slot *r = ret;                                                                         \
        (void)r;                                                                                   \
        KEEP_##R(((RT_##R(*)(CT_##A))code)(arg_##A(av[0])));                                       \
    }
#define DIRECT2(R, A, B)                                                                           \
    static void direct_##R##A##B(void (*code)(void), void **av, void *ret)                         \
    {                                                                                              \
        ret_slot *r = ret;                                                                         \
        (void)r;                                                                                   \
        KEEP_##R(((RT_##R(*)(CT_##A, CT_##B))code)(arg_##A(av[0]), arg_##B(av[1])));               \
    }
/* one shape per result kind and parameter count on a line */
/* clang-format off */
#define DIRECT_SHAPES(X0, X1, X2)                                                                  \
    X0(v) X0(b) X0(i)                                                                              \
    X1(v, i) X1(v, p) X1(b, i) X1(b, p) X1(i, i) X1(i, p)                                          \
    X2(v, i, i) X2(v, i, p) X2(v, p, i) X2(v, p, p) X2(b, i, i) X2(b, i, p) X2(b, p, i)            \
    X2(b, p, p) X2(i, i, i) X2(i, i, p) X2(i, p, i) X2(i, p, p)
/* clang-format on */
DIRECT_SHAPES(DIRECT0, DIRECT1, DIRECT2)
#define SHAPE0(R)       {#R, direct_##R},
#define SHAPE1(R, A)    {#R #A, direct_##R##A},
#define SHAPE2(R, A, B) {#R #A #B, direct_##R##A##B},
static const struct {
    const char *shape; /* the result's letter, then each parameter's */
    direct_fn call;
} direct_shapes[] = {DIRECT_SHAPES(SHAPE0, SHAPE1, SHAPE2)};

/* The direct call for fn's signature, or NULL (called through libffi). */
static direct_fn direct_of(const wf_native_fn *fn)
{
    const wf_type *rt = fn->sig.ret;
    char shape[4] = {!rt ? 'v' : rt->kind == WF_K_BOOL ? 'b' : rt->kind == WF_K_INT32 ? 'i' : 0};
    if (!shape[0] || fn->sig.param_count > 2)
        return NULL;
    for (size_t i = 0; i < fn->sig.param_count; i++) {
        const wf_native_param *p = &fn->params[i];
        bool by_ptr = p->dir != WF_NATIVE_IN || p->type->kind == WF_K_STRING;
        shape[i + 1] = by_ptr ? 'p' : p->type->kind == WF_K_INT32 ? 'i' : 0;
        if (!shape[i + 1])
            return NULL;
    }
    for (size_t i = 0; i < sizeof direct_shapes / sizeof direct_shapes[0]; i++)
        if (strcmp(direct_shapes[i].shape, shape) == 0)
            return direct_shapes[i].call;
    return NULL;
}

static void store_scalar(slot *s, const wf_value *v)
{
    switch (v->type->kind) {
    case WF_K_BOOL:
        s->b = v->u.b;
        break;
    case WF_K_INT32:
        s->i32 = v->u.i32;
        break;
    case WF_K_DOUBLE:
        s->d = v->u.d;
        break;
    default:
        s->i64 = v->u.i64;
        break;
    }
}

static wf_status marshal_in(const wf_native_fn *fn, size_t i, const wf_value *arg, call_frame *cf,
                            wf_error *err)
{
    const wf_native_param *p = &fn->params[i];
    wf_kind k = p->type->kind;
    if (arg->type == p->type && k != WF_K_STRING && k != WF_K_DECIMAL) {
        store_scalar(&cf->slots[i], arg); /* a scalar of the declared type: nothing to hold */
        return WF_OK;
    }
    wf_status st = wf_value_convert(arg, p->type, &cf->held[i], err);
    if (st != WF_OK) {
        wf_error_prefix(err, "argument %zu of %s: ", i + 1, fn->name);
        return st;
    }
    const wf_value *v = &cf->held[i];
    if (p->type->kind == WF_K_DECIMAL) { /* CURRENCY, as Decimal.ToOACurrency */
        if (wf_decimal_to_currency(v->u.dec, &cf->slots[i].i64) == WF_OK)
            return WF_OK;
        char text[WF_DECIMAL_TEXT_MAX];
        wf_decimal_format(v->u.dec, text, sizeof text);
        return wf_error_set(err, WF_E_RANGE, NULL,
                            "argument %zu of %s: value %s is out of range for a C Decimal "
                            "(int64 units of 1/10,000)",
                            i + 1, fn->name, text);
    }
    if (p->type->kind != WF_K_STRING) {
        store_scalar(&cf->slots[i], v);
        return WF_OK;
    }
    if (wf_is_null(v) || p->dir == WF_NATIVE_IN) {
        cf->slots[i].s = wf_is_null(v) ? NULL : (char *)wf_value_str(v);
        return WF_OK;
    }
    /* INOUT: the callee may free() this and store a new malloc'd string. */
    cf->slots[i].s = malloc(wf_value_str_len(v) + 1);
    if (!cf->slots[i].s)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory calling %s", fn->name);
    memcpy(cf->slots[i].s, wf_value_str(v), wf_value_str_len(v) + 1);
    return WF_OK;
}

static void frame_release(const wf_native_fn *fn, call_frame *cf)
{
    for (size_t i = 0; i < fn->sig.param_count; i++) {
        if (fn->params[i].dir != WF_NATIVE_IN && fn->params[i].type->kind == WF_K_STRING)
            free(cf->slots[i].s);
        wf_value_release(&cf->held[i]); /* null for a scalar of the declared type */
    }
}

/* Parameter i's argument as the callee takes it: the slot's value for IN, its address for
 * OUT and INOUT. */
static void frame_link(const wf_native_fn *fn, call_frame *cf, size_t i)
{
    cf->ptrs[i] = &cf->slots[i];
    cf->avalues[i] =
        fn->params[i].dir == WF_NATIVE_IN ? (void *)&cf->slots[i] : (void *)&cf->ptrs[i];
}

/* The call itself, on a linked frame; rv receives the raw result. */
static void frame_call(const wf_native_fn *fn, call_frame *cf, ret_slot *rv)
{
    memset(rv, 0, sizeof *rv);
    if (fn->direct)
        fn->direct(fn->code, cf->avalues, rv);
    else
        ffi_call((ffi_cif *)&fn->cif, fn->code, rv, cf->avalues);
}

static wf_status prepare_frame(const wf_native_fn *fn, const wf_value *args, call_frame *cf,
                               wf_error *err)
{
    /* only the slots a call uses: zeroing the whole frame (MAX_PARAMS of each array) was
     * half of this function's time on a two-parameter handler */
    memset(cf->slots, 0, fn->sig.param_count * sizeof cf->slots[0]);
    for (size_t i = 0; i < fn->sig.param_count; i++)
        cf->held[i] = wf_null();
    for (size_t i = 0; i < fn->sig.param_count; i++) {
        if (fn->params[i].dir != WF_NATIVE_OUT) {
            wf_status st = marshal_in(fn, i, &args[i], cf, err);
            if (st != WF_OK)
                return st;
        }
        frame_link(fn, cf, i);
    }
    return WF_OK;
}

/* A value of type t from a C slot; a string is copied and the C string freed. */
static wf_status from_c(const wf_type *t, slot *s, wf_value *out)
{
    switch (t->kind) {
    case WF_K_BOOL:
        *out = wf_bool(s->b != 0);
        return WF_OK;
    case WF_K_INT32:
        *out = wf_int32(s->i32);
        return WF_OK;
    case WF_K_DOUBLE:
        *out = wf_double(s->d);
        return WF_OK;
    case WF_K_STRING: {
        wf_status st = wf_value_cstring(s->s, out);
        free(s->s);
        s->s = NULL;
        return st;
    }
    case WF_K_DECIMAL:
        *out = wf_dec(wf_decimal_from_currency(s->i64)); /* scale 4 */
        return WF_OK;
    default:
        *out = wf_int64(s->i64);
        out->type = t; /* Int64 or DateTime microseconds */
        return WF_OK;
    }
}

static slot ret_to_slot(const wf_type *t, const ret_slot *rv)
{
    slot s = {0};
    switch (t->kind) {
    case WF_K_BOOL:
        s.b = (uint8_t)rv->a;
        break;
    case WF_K_INT32:
        s.i32 = (int32_t)rv->sa;
        break;
    case WF_K_DOUBLE:
        s.d = rv->d;
        break;
    case WF_K_STRING:
        s.s = rv->s;
        break;
    default:
        s.i64 = rv->i64;
        break;
    }
    return s;
}

/* Turns out-slots and the return value into values; frees every C string either way. */
static wf_status unmarshal(const wf_native_fn *fn, call_frame *cf, const ret_slot *rv,
                           wf_value *outs, wf_value *ret, wf_error *err)
{
    wf_status st = WF_OK;
    for (size_t i = 0; i < fn->sig.param_count; i++) {
        if (fn->params[i].dir == WF_NATIVE_IN)
            continue;
        wf_value v;
        if (from_c(fn->params[i].type, &cf->slots[i], &v) != WF_OK)
            st = WF_E_NOMEM;
        if (outs)
            outs[i] = v;
        else
            wf_value_release(&v);
    }
    if (fn->sig.ret) {
        slot s = ret_to_slot(fn->sig.ret, rv);
        wf_value v;
        if (from_c(fn->sig.ret, &s, &v) != WF_OK)
            st = WF_E_NOMEM;
        if (ret)
            *ret = v;
        else
            wf_value_release(&v);
    }
    if (st != WF_OK)
        return wf_error_set(err, st, NULL, "out of memory reading the results of %s", fn->name);
    return WF_OK;
}

/* The thread's watcher (wf_native_watch_set): diagnostic, never set in the common path. */
static _Thread_local wf_native_watch_fn watch_fn;
static _Thread_local void *watch_ud;

void wf_native_watch_set(wf_native_watch_fn watch, void *ud)
{
    watch_fn = watch;
    watch_ud = ud;
}

bool wf_native_fn_is_scalar(const wf_native_fn *fn)
{
    return fn->scalar;
}

/* The watcher's view of a scalar call: the In values side by side, null for OUT. */
static void watch_scalar(const wf_native_fn *fn, const wf_value *const *args)
{
    wf_value in[MAX_PARAMS];
    for (size_t i = 0; i < fn->sig.param_count; i++)
        in[i] = fn->params[i].dir == WF_NATIVE_OUT ? wf_null() : *args[i];
    watch_fn(watch_ud, fn, in);
}

void wf_native_fn_call_scalar(const wf_native_fn *fn, const wf_value *const *args, wf_value *outs,
                              wf_value *ret)
{
    assert(fn->scalar);
    if (ret)
        *ret = wf_null();
    call_frame cf; /* slots, ptrs and avalues only: a scalar holds nothing */
    for (size_t i = 0; i < fn->sig.param_count; i++) {
        if (outs)
            outs[i] = wf_null();
        cf.slots[i].i64 = 0;
        if (fn->params[i].dir != WF_NATIVE_OUT) {
            assert(args[i]->type == fn->params[i].type);
            store_scalar(&cf.slots[i], args[i]);
        }
        frame_link(fn, &cf, i);
    }
    if (watch_fn)
        watch_scalar(fn, args);
    ret_slot rv;
    frame_call(fn, &cf, &rv);
    wf_status st = unmarshal(fn, &cf, &rv, outs, ret, NULL);
    assert(st == WF_OK); /* from_c allocates only for strings */
    (void)st;
}

wf_status wf_native_fn_call(const wf_native_fn *fn, const wf_value *args, wf_value *outs,
                            wf_value *ret, wf_error *err)
{
    if (ret)
        *ret = wf_null();
    for (size_t i = 0; outs && i < fn->sig.param_count; i++)
        outs[i] = wf_null();
    call_frame cf;
    wf_status st = prepare_frame(fn, args, &cf, err);
    if (st != WF_OK) {
        frame_release(fn, &cf);
        return st;
    }
    if (watch_fn)
        watch_fn(watch_ud, fn, args);
    ret_slot rv;
    frame_call(fn, &cf, &rv);
    st = unmarshal(fn, &cf, &rv, outs, ret, err);
    frame_release(fn, &cf);
    if (st == WF_OK && fn->sig.error_on_nonzero && (int32_t)rv.sa != 0)
        st = wf_error_set(err, WF_E_NATIVE, NULL, "native function '%s' returned %d", fn->name,
                          (int)(int32_t)rv.sa); /* the one wording, legacy and modern */
    return st;
}

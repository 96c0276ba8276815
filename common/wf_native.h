/* wf_native.h — native libraries and calls. A library is loaded only from the configured
 * library path (never from a path a definition names); an exported function gets a libffi
 * call interface built once from its declared signature and reused for every call; values are
 * marshalled per the type mapping in docs/architecture.md "The legacy model" (Decimal = CURRENCY:
 * int64 1/10,000, rounded half to even on the way in, scale 4 on the way out;
 * DateTime = int64 us since epoch, strings in as const char *, out as char ** and returned as
 * char *, both malloc'd by the callee and freed here). */
#ifndef WF_NATIVE_H
#define WF_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wf_error.h"
#include "wf_value.h"

/* 1. wf_libpath_create from --lib-path / WFBRIDGE_LIB_PATH ("dir1:dir2").
 * 2. wf_native_lib_open(path, "Warehouse", ...) finds libWarehouse.so then Warehouse.so in
 *    those directories, or wf_libpath_find for a type library file.
 * 3. wf_native_fn_prepare once per function signature; wf_native_fn_call any number of times,
 *    from any thread (a prepared function is immutable).
 * 4. wf_native_lib_close after every fn from it is destroyed. Libraries are refcounted by the
 *    set that opened them: open the same name twice and you get the same handle retained. */

typedef struct wf_libpath wf_libpath;
typedef struct wf_native_lib wf_native_lib;
typedef struct wf_native_fn wf_native_fn;

wf_status wf_libpath_create(const char *dirs, wf_libpath **out, wf_error *err);
void wf_libpath_destroy(wf_libpath *path);
size_t wf_libpath_count(const wf_libpath *path);
const char *wf_libpath_dir(const wf_libpath *path, size_t index);
/* Find a plain file name (no '/' and no "..": those are refused with WF_E_NOLIB, naming the
 * name) in the path. Writes the full path into out. WF_E_NOTFOUND if absent. */
wf_status wf_libpath_find(const wf_libpath *path, const char *file_name, char *out,
                          size_t out_size, wf_error *err);

/* Open library NAME: libNAME.so, then NAME.so, in each directory in order. A NAME that
 * already ends in ".so" is looked up as given. WF_E_NOLIB names NAME and the directories. */
wf_status wf_native_lib_open(const wf_libpath *path, const char *name, wf_native_lib **out,
                             wf_error *err);
void wf_native_lib_close(wf_native_lib *lib); /* accepts NULL */
const char *wf_native_lib_file(const wf_native_lib *lib);
/* The objects opening the libraries still open brought into the process (each library and
 * the dependencies it loaded first), by load address (dl_iterate_phdr's dlpi_addr); the
 * program and what it links are not among them. Fills up to max, returns the count.
 * `wfbridge verify` puts their writable segments back before each isolated run. */
size_t wf_native_lib_objects(uintptr_t *out, size_t max);

/* String ownership at the boundary (the C library's malloc/free, never wf_malloc):
 * - IN: a `const char *` borrowed for the call (NULL for a null value); the callee must not
 *   keep or free it.
 * - OUT: a `char **` whose slot starts NULL; the callee may store a malloc'd string.
 * - INOUT: a `char **` whose slot starts as a malloc'd copy of the In value (NULL for null);
 *   the callee may free() it and store another malloc'd string, or leave it.
 * - Return: a `char *` the callee malloc'd (or NULL).
 * After the call every string left in an OUT/INOUT slot and a returned string is copied into
 * a wf_value and released with free(), also when outs/ret are NULL or the call faults.
 * Scalars OUT/INOUT are pointers to a slot of the C type (INOUT starts with the In value). */
typedef enum wf_native_dir {
    WF_NATIVE_IN,
    WF_NATIVE_OUT,    /* pointer to a slot the callee writes */
    WF_NATIVE_INOUT,  /* pointer to a slot holding the In value, the callee may update */
} wf_native_dir;

typedef struct wf_native_param {
    const wf_type *type; /* Boolean, Int32, Int64, Double, Decimal, DateTime or String */
    wf_native_dir dir;
} wf_native_param;

typedef struct wf_native_sig {
    const wf_type *ret;          /* NULL = void */
    const wf_native_param *params;
    size_t param_count;
    bool error_on_nonzero;       /* ret must be Int32: non-zero is a WF_E_NATIVE fault */
} wf_native_sig;

/* Resolve `symbol` and build its call interface. WF_E_NOSYM names the symbol and library;
 * WF_E_TYPE if a type has no C mapping or ErrorOnNonZero without an Int32 return; WF_E_LIMIT
 * beyond WF_NATIVE_MAX_PARAMS parameters. The signature is copied. */
#define WF_NATIVE_MAX_PARAMS 32
wf_status wf_native_fn_prepare(wf_native_lib *lib, const char *symbol, const wf_native_sig *sig,
                               wf_native_fn **out, wf_error *err);
void wf_native_fn_destroy(wf_native_fn *fn);
const char *wf_native_fn_name(const wf_native_fn *fn);
const wf_native_sig *wf_native_fn_sig(const wf_native_fn *fn);

/* Call. args[i] holds the In value for IN and INOUT parameters (converted to the declared
 * type with wf_value_convert, so a failed conversion returns its error before any call;
 * null strings pass NULL) and is ignored for OUT. On success, outs[i] receives the value
 * for OUT and INOUT parameters (outs[i] for IN stays null; the caller releases outs), and *ret
 * the return value (null for void). With error_on_nonzero a non-zero status returns
 * WF_E_NATIVE ("native function 'FUNCTION' returned N", the message of the NativeException
 * both runtimes raise) and still fills *ret and outs. outs and ret may be NULL
 * when not needed. */
wf_status wf_native_fn_call(const wf_native_fn *fn, const wf_value *args, wf_value *outs,
                            wf_value *ret, wf_error *err);

/* Whether fn is scalar: every parameter and the result (if any) Boolean, Int32, Int64,
 * DateTime or Double, and no ErrorOnNonZero. Such a call cannot fail once its In values have
 * their declared types, which is what wf_native_fn_call_scalar relies on. */
bool wf_native_fn_is_scalar(const wf_native_fn *fn);
/* wf_native_fn_call for a scalar fn whose In values already have the declared types, for
 * callers that hold them in place: args[i] points at the In value of an IN or INOUT parameter
 * (borrowed for the call; ignored, and may be NULL, for OUT). outs and *ret are filled as by
 * wf_native_fn_call (scalars: nothing to release) and the watcher sees the same values. */
void wf_native_fn_call_scalar(const wf_native_fn *fn, const wf_value *const *args, wf_value *outs,
                              wf_value *ret);

/* A watcher told, on the calling thread, just before each native call it makes: the function
 * and the In values given to wf_native_fn_call (args[i] for IN and INOUT parameters). `wfbridge
 * verify` sets one in the child process of an isolated run, so a call that never returns (a
 * crash, exit(), an endless loop) is named by its parent. One per thread; NULL clears it. */
typedef void (*wf_native_watch_fn)(void *ud, const wf_native_fn *fn, const wf_value *args);
void wf_native_watch_set(wf_native_watch_fn watch, void *ud);

#endif

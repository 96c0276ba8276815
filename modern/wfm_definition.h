/* wfm_definition.h — loading modern (WF4 XAML) workflow definitions against an activity
 * catalogue. A loaded definition is validated, its expressions compiled to slots, and it is
 * immutable and shared by reference count (docs/architecture.md "The modern model"). */
#ifndef WFM_DEFINITION_H
#define WFM_DEFINITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"
#include "../common/wf_xml.h"
#include "wfm_activity.h"

/* Lifecycle:
 * 1. wfm_catalogue_create, then wfm_catalogue_register every kind (before threads start; the
 *    catalogue is read-only afterwards and may be read from any thread).
 * 2. wfm_definition_load_file / _load_mem with a wfm_load_opts naming the catalogue and the
 *    type table. The catalogue and the type table must outlive every definition loaded with
 *    them (definitions keep pointers to kinds and interned types).
 * 3. Share the definition with wfm_definition_retain / _release (thread-safe refcount); the
 *    last release frees it (and runs the node data destroy functions of prepare callbacks).
 * 4. wfm_catalogue_destroy after the last definition is released.
 * The loader has no globals: loads may run concurrently (the type table has its own lock). */

typedef struct wfm_definition wfm_definition;

wf_status wfm_catalogue_create(wfm_catalogue **out, wf_error *err);
void wfm_catalogue_destroy(wfm_catalogue *cat); /* accepts NULL */
size_t wfm_catalogue_count(const wfm_catalogue *cat);
const wfm_kind *wfm_catalogue_at(const wfm_catalogue *cat, size_t index); /* registration order */

/* Validate-only loads: checks an InvokeMethod's call (library NAME, C symbol, signature built
 * from the XAML) against a declaration instead of the shared object. WF_OK when it matches;
 * else an error (WF_E_NOSYM: not declared, WF_E_TYPE: another signature) whose message is
 * reported at the InvokeMethod. */
typedef wf_status (*wfm_native_check_fn)(void *ud, const char *library, const char *symbol,
                                         const wf_native_sig *sig, wf_error *err);

typedef struct wfm_load_opts {
    const wfm_catalogue *catalogue; /* required */
    wf_types *types;                /* required: interning table for List(T), exceptions */
    const wf_libpath *libpath;      /* NULL: no native libraries can be opened */
    wf_diags *diags;                /* optional: receives every error and warning */
    const wf_xml_limits *xml_limits; /* NULL: the XML defaults */
    /* Non-NULL: validate-only. No native library is opened; each InvokeMethod is checked with
     * check_native and gets a warning that it was not bound. Such a definition cannot run
     * (an InvokeMethod faults with InvalidOperationException). */
    wfm_native_check_fn check_native;
    void *check_ud;
    /* Non-NULL: wf_hash_bytes of the text, which the caller computed already (the runtime's
     * cache key); the load then does not hash the text a second time. */
    const uint64_t *text_hash;
} wfm_load_opts;

#define WFM_LOAD_OPTS_INIT                                                                         \
    {.catalogue = NULL, .types = NULL, .libpath = NULL, .diags = NULL, .xml_limits = NULL,         \
     .check_native = NULL, .check_ud = NULL, .text_hash = NULL}

/* Load, validate and compile. On failure *out is NULL, every problem found was added to
 * opts->diags (as "file:line:col" errors), and err holds the first error in source order.
 * Errors: WF_E_IO, WF_E_XML, WF_E_LIMIT, WF_E_SCHEMA, WF_E_TYPE, WF_E_NAME, WF_E_SYNTAX,
 * WF_E_NOMEM, and whatever prepare callbacks report (WF_E_NOLIB, WF_E_NOSYM, ...). */
wf_status wfm_definition_load_file(const wfm_load_opts *opts, const char *path,
                                   wfm_definition **out, wf_error *err);
/* `name` is used as the file name in locations. */
wf_status wfm_definition_load_mem(const wfm_load_opts *opts, const char *name, const char *data,
                                  size_t len, wfm_definition **out, wf_error *err);

wfm_definition *wfm_definition_retain(wfm_definition *def); /* returns def */
void wfm_definition_release(wfm_definition *def);           /* accepts NULL */

const char *wfm_definition_path(const wfm_definition *def);
const char *wfm_definition_class(const wfm_definition *def); /* x:Class, NULL if none */
/* The service's name, written on the root as WF4's WorkflowService has it:
 * <Activity p:WorkflowService.Name="CalculatorService"> (docs/services.md); NULL if none. */
const char *wfm_definition_service_name(const wfm_definition *def);
uint64_t wfm_definition_hash(const wfm_definition *def);     /* wf_hash_bytes of the file */
/* SHA-256 of the file, chained with each activity type file it expands (32 bytes): a saved
 * state records it and is restored only into a definition with the same one. */
const unsigned char *wfm_definition_sha256(const wfm_definition *def);
const wfm_node *wfm_definition_root(const wfm_definition *def); /* the body activity */
size_t wfm_definition_node_count(const wfm_definition *def);
const wfm_node *wfm_definition_node_at(const wfm_definition *def, size_t index); /* by index */
uint32_t wfm_node_index(const wfm_node *node); /* dense 0..node_count-1, preorder */

/* The root arguments (x:Members), in declaration order = slot order of environment 0. */
size_t wfm_definition_arg_count(const wfm_definition *def);
const char *wfm_definition_arg_name(const wfm_definition *def, size_t index);
/* WFM_PROP_IN, WFM_PROP_OUT or WFM_PROP_INOUT */
wfm_prop_kind wfm_definition_arg_dir(const wfm_definition *def, size_t index);
const wf_type *wfm_definition_arg_type(const wfm_definition *def, size_t index);
bool wfm_definition_arg_has_default(const wfm_definition *def, size_t index);
/* Index of the argument called `name`; false if there is none. */
bool wfm_definition_arg_find(const wfm_definition *def, const char *name, size_t *index);
/* Whether the root activity declares a variable `name` (a name --promote may use besides the
 * arguments). */
bool wfm_definition_root_var_find(const wfm_definition *def, const char *name);

#endif

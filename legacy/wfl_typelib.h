/* wfl_typelib.h — native activity type libraries (`NAME.activities.xml`, namespace
 * urn:wfbridge:typelib): what .NET reflection told WF3 about activity types, code-beside
 * classes, local services and exception types, plus the shared object that implements them.
 * Every function is resolved and its libffi call prepared ONCE at load (docs/architecture.md "The legacy
 * model"; the element and attribute names there are a contract). */
#ifndef WFL_TYPELIB_H
#define WFL_TYPELIB_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"

/* Lifecycle:
 * 1. wfl_typelib_load(libpath, types, "Warehouse", &tl, diags, &err) finds
 *    "Warehouse.activities.xml" only through wf_libpath_find, validates it, opens its Library
 *    from the same library path and prepares every function (or wfl_typelib_parse for a
 *    parse-and-validate without any library: functions then have no native binding).
 * 2. Look types up (wfl_typelib_activity / _class / _service / _exception) and call functions
 *    with wfl_tl_func_invoke. Everything returned borrows from the typelib.
 * 3. wfl_typelib_destroy when nothing uses it any more (it closes the library).
 * Thread rule: a loaded typelib is immutable; share it and call its functions from any thread.
 * Exception types it declares are interned in the wf_types passed at load (which must outlive
 * every value of those types). */

typedef struct wfl_typelib wfl_typelib;
typedef struct wfl_tl_activity wfl_tl_activity; /* <ActivityType> */
typedef struct wfl_tl_class wfl_tl_class;       /* <Class>: code-beside of x:Class */
typedef struct wfl_tl_service wfl_tl_service;   /* <Service>: local-service interface */
typedef struct wfl_tl_func wfl_tl_func;         /* an Execute, Handler, Condition or Method */
typedef struct wfl_tl_event wfl_tl_event;       /* <Event> of a Service */

typedef enum wfl_tl_dir { WFL_TL_IN, WFL_TL_OUT, WFL_TL_INOUT, WFL_TL_RETURN } wfl_tl_dir;

typedef enum wfl_tl_func_kind {
    WFL_TL_EXECUTE,   /* an ActivityType's Function: parameters are its properties */
    WFL_TL_HANDLER,   /* Class Handler: parameters bind class properties */
    WFL_TL_CONDITION, /* Class Condition: parameters bind class properties, returns bool */
    WFL_TL_METHOD,    /* Service Method: named, typed parameters */
} wfl_tl_func_kind;

/* A property (ActivityType/Class Property), or a parameter (Handler/Condition Parameter:
 * name = the bound Property; Method/Event Parameter: its own Name). Read-only descriptor. */
typedef struct wfl_tl_prop {
    const char *name;
    const wf_type *type;
    wfl_tl_dir dir;        /* WFL_TL_IN for class properties and event parameters */
    bool has_default;
    wf_value default_value; /* typed; immortal (strings live in the typelib) */
    unsigned line, col;     /* in the typelib file */
} wfl_tl_prop;

/* ---- loading --------------------------------------------------------------------------- */
/* Load "<assembly_name>.activities.xml" from `path` (WF_E_NOTFOUND if absent). Validation
 * errors name the typelib's file:line:col: WF_E_XML, WF_E_SCHEMA (unknown element or
 * attribute, duplicate name, missing attribute, Library containing '/'), WF_E_TYPE (unknown
 * type, type without a C mapping), WF_E_SYNTAX (bad Direction/Default/boolean), WF_E_NAME
 * (a Parameter binds a property the class lacks), WF_E_NOLIB (the Library is not on the
 * path), WF_E_NOSYM (at the element naming the function).
 * `diags` (may be NULL) receives every problem; the first is returned in err. */
wf_status wfl_typelib_load(const wf_libpath *path, wf_types *types, const char *assembly_name,
                           wfl_typelib **out, wf_diags *diags, wf_error *err);
/* The same declarations-only: found on the path and validated like wfl_typelib_load, but
 * the native library is never opened (no WF_E_NOLIB / WF_E_NOSYM; every
 * wfl_tl_func_native() is NULL). For validate-only loads (the converter). */
wf_status wfl_typelib_load_decl(const wf_libpath *path, wf_types *types,
                                const char *assembly_name, wfl_typelib **out, wf_diags *diags,
                                wf_error *err);
/* Parse and validate from memory without opening any library (converter, fuzzing): same
 * checks except WF_E_NOLIB / WF_E_NOSYM; every wfl_tl_func_native() is NULL. */
wf_status wfl_typelib_parse(wf_types *types, const char *name, const char *data, size_t len,
                            wfl_typelib **out, wf_diags *diags, wf_error *err);
void wfl_typelib_destroy(wfl_typelib *tl); /* accepts NULL */

const char *wfl_typelib_name(const wfl_typelib *tl); /* TypeLibrary Name */
const char *wfl_typelib_file(const wfl_typelib *tl); /* path of the .activities.xml */
const char *wfl_typelib_library(const wfl_typelib *tl); /* Library attribute */
const wf_native_lib *wfl_typelib_native_lib(const wfl_typelib *tl); /* NULL if parse-only */

/* ---- lookups (NULL when absent) and enumeration (document order) ------------------------ */
const wfl_tl_activity *wfl_typelib_activity(const wfl_typelib *tl, const char *name);
const wfl_tl_class *wfl_typelib_class(const wfl_typelib *tl, const char *name);
const wfl_tl_service *wfl_typelib_service(const wfl_typelib *tl, const char *name);
/* A declared exception by full ("Contoso.CreditException") or last-segment name. */
const wf_type *wfl_typelib_exception(const wfl_typelib *tl, const char *name);
size_t wfl_typelib_activity_count(const wfl_typelib *tl);
const wfl_tl_activity *wfl_typelib_activity_at(const wfl_typelib *tl, size_t index);
size_t wfl_typelib_class_count(const wfl_typelib *tl);
const wfl_tl_class *wfl_typelib_class_at(const wfl_typelib *tl, size_t index);
size_t wfl_typelib_service_count(const wfl_typelib *tl);
const wfl_tl_service *wfl_typelib_service_at(const wfl_typelib *tl, size_t index);
size_t wfl_typelib_exception_count(const wfl_typelib *tl);
const wf_type *wfl_typelib_exception_at(const wfl_typelib *tl, size_t index);

const char *wfl_tl_activity_name(const wfl_tl_activity *a);
size_t wfl_tl_activity_prop_count(const wfl_tl_activity *a);
const wfl_tl_prop *wfl_tl_activity_prop(const wfl_tl_activity *a, size_t index);
const wfl_tl_prop *wfl_tl_activity_find_prop(const wfl_tl_activity *a, const char *name);
const wfl_tl_func *wfl_tl_activity_func(const wfl_tl_activity *a); /* its Execute */
/* A composite (<ActivityType Name= Definition="X.xoml">, Library= optional when a library
 * declares only composites): the XOML file name, found beside the type library; NULL for a
 * leaf. Its properties, handlers and conditions are also its code-beside class, found by
 * wfl_typelib_class under the type's Name (the last part of the XOML root's x:Class). */
const char *wfl_tl_activity_definition(const wfl_tl_activity *a);
/* A leaf with Children="Sequence" (a third-party composite known only from its markup): its
 * Function runs first, then the child activities the markup gives it, in order. */
bool wfl_tl_activity_is_container(const wfl_tl_activity *a);

const char *wfl_tl_class_name(const wfl_tl_class *c);
/* BaseType: the built-in root a workflow base class derives from
 * ("SequentialWorkflowActivity" / "StateMachineWorkflowActivity"), NULL when not declared. */
const char *wfl_tl_class_base_type(const wfl_tl_class *c);
size_t wfl_tl_class_prop_count(const wfl_tl_class *c);
const wfl_tl_prop *wfl_tl_class_prop(const wfl_tl_class *c, size_t index);
const wfl_tl_prop *wfl_tl_class_find_prop(const wfl_tl_class *c, const char *name);
const wfl_tl_func *wfl_tl_class_handler(const wfl_tl_class *c, const char *name);
const wfl_tl_func *wfl_tl_class_condition(const wfl_tl_class *c, const char *name);
size_t wfl_tl_class_func_count(const wfl_tl_class *c); /* handlers and conditions */
const wfl_tl_func *wfl_tl_class_func_at(const wfl_tl_class *c, size_t index);
/* fn's index in c (wfl_tl_class_func_at(c, i) == fn), wfl_tl_class_func_count(c) if not c's. */
size_t wfl_tl_class_func_index(const wfl_tl_class *c, const wfl_tl_func *fn);

const char *wfl_tl_service_name(const wfl_tl_service *s);
/* Namespace="..." of the <Service>: an ASMX proxy's namespace (docs/convert.md), "" if none. */
const char *wfl_tl_service_namespace(const wfl_tl_service *s);
const wfl_tl_func *wfl_tl_service_method(const wfl_tl_service *s, const char *name);
size_t wfl_tl_service_method_count(const wfl_tl_service *s);
const wfl_tl_func *wfl_tl_service_method_at(const wfl_tl_service *s, size_t index);
const wfl_tl_event *wfl_tl_service_event(const wfl_tl_service *s, const char *name);
size_t wfl_tl_service_event_count(const wfl_tl_service *s);
const wfl_tl_event *wfl_tl_service_event_at(const wfl_tl_service *s, size_t index);

const char *wfl_tl_event_name(const wfl_tl_event *e);
size_t wfl_tl_event_param_count(const wfl_tl_event *e);
const wfl_tl_prop *wfl_tl_event_param(const wfl_tl_event *e, size_t index);
/* wf_payload_bind against the event's declared parameters (docs/formats.md "Event
 * payloads"): OUT a record of the parameters the payload gives, converted. */
wf_status wfl_tl_event_bind(const wfl_tl_event *e, const wf_value *payload, wf_value *out,
                            wf_error *err);

/* ---- functions ------------------------------------------------------------------------- */
wfl_tl_func_kind wfl_tl_func_kind_of(const wfl_tl_func *fn);
const char *wfl_tl_func_name(const wfl_tl_func *fn);   /* member: Handler/Method/... Name */
const char *wfl_tl_func_symbol(const wfl_tl_func *fn); /* exported C function */
bool wfl_tl_func_error_on_nonzero(const wfl_tl_func *fn);
/* Parameters in C order (document order), Return excluded. */
size_t wfl_tl_func_param_count(const wfl_tl_func *fn);
const wfl_tl_prop *wfl_tl_func_param(const wfl_tl_func *fn, size_t index);
/* The Return binding (a Direction="Return" property/parameter), NULL if none. */
const wfl_tl_prop *wfl_tl_func_return(const wfl_tl_func *fn);
const wf_native_fn *wfl_tl_func_native(const wfl_tl_func *fn); /* NULL if parse-only */
wf_loc wfl_tl_func_loc(const wfl_tl_func *fn); /* of the declaring element */

/* Values come from and go back to the caller's storage by name (property name, or parameter
 * name for Methods). get fills *out (caller of get releases it; wfl_tl_func_invoke converts it
 * to the declared type); set receives a value converted to the declared type (borrowed). */
typedef wf_status (*wfl_tl_get_fn)(void *ud, const char *name, const wf_type *type, wf_value *out,
                                   wf_error *err);
typedef wf_status (*wfl_tl_set_fn)(void *ud, const char *name, const wf_value *value,
                                   wf_error *err);

/* What a tracer sees of one call: args[i] the In/InOut values sent (null for Out), outs[i] the
 * Out/InOut values received, in parameter order; ret the return value (null for void). */
typedef struct wfl_tl_call_record {
    const wfl_tl_func *fn;
    const wf_value *args;
    const wf_value *outs;
    size_t count;
    const wf_value *ret;
    wf_status status; /* WF_OK, WF_E_NATIVE (ErrorOnNonZero), ... */
} wfl_tl_call_record;
typedef void (*wfl_tl_trace_fn)(void *ud, const wfl_tl_call_record *rec);

/* The same by position, for callers that resolved the names once: index is the parameter's
 * (wfl_tl_func_param), or wfl_tl_func_param_count(fn) for the Return binding. */
typedef wf_status (*wfl_tl_get_at_fn)(void *ud, size_t index, wf_value *out, wf_error *err);
typedef wf_status (*wfl_tl_set_at_fn)(void *ud, size_t index, const wf_value *value,
                                      wf_error *err);

/* The In value of parameter `index` where the caller keeps it (borrowed for the call), or
 * NULL when it has to be read through get_at (a bound property, say). */
typedef const wf_value *(*wfl_tl_peek_at_fn)(void *ud, size_t index);

typedef struct wfl_tl_binding {
    wfl_tl_get_fn get;     /* required when the function has In/InOut parameters */
    wfl_tl_set_fn set;     /* required when it has Out/InOut/Return bindings */
    wfl_tl_trace_fn trace; /* optional: called once per native call, after it returns */
    void *ud;
    wfl_tl_get_at_fn get_at; /* optional: used instead of get */
    wfl_tl_set_at_fn set_at; /* optional: used instead of set */
    /* optional, beside get_at: a scalar function (wf_native_fn_is_scalar) whose In values
     * all peek as their declared types is called on them in place, nothing copied */
    wfl_tl_peek_at_fn peek_at;
} wfl_tl_binding;

#define WFL_TL_BINDING_INIT                                                                       \
    {.get = NULL, .set = NULL, .trace = NULL, .ud = NULL, .get_at = NULL, .set_at = NULL,        \
     .peek_at = NULL}

/* Call fn: gather In/InOut values by name through b->get, call the native function, write
 * Out/InOut values and the Return binding back through b->set, then trace. *ret (optional)
 * also receives the raw return value (a Condition's bool; caller releases). With
 * ErrorOnNonZero a non-zero status is WF_E_NATIVE naming the function and the value, after the
 * write-back. WF_E_STATE if fn has no native binding (parse-only typelib). */
wf_status wfl_tl_func_invoke(const wfl_tl_func *fn, const wfl_tl_binding *b, wf_value *ret,
                             wf_error *err);

#endif

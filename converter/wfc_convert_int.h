/* wfc_convert_int.h — the converter's state shared by the engine files inside converter/:
 * the session and its walk (wfc_convert.c), one file of rules per legacy activity family
 * (wfc_map_*.c), native calls (wfc_invoke.c), storage and expressions (wfc_data.c). The
 * same walk runs twice: pass 1 records every use of every storage location, pass 2 writes
 * the XAML with each variable declared at the narrowest scope that covers its uses. */
#ifndef WFC_CONVERT_INT_H
#define WFC_CONVERT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "../legacy/wfl_def.h"
#include "wfc_convert.h"
#include "wfc_report.h"
#include "wfc_xaml_writer.h"

/* One storage location: a root DP (an argument) or another activity's DP (a variable). */
typedef struct wfc__slot {
    const wfl_node *owner; /* the activity whose DP it is */
    const char *dp_name;   /* borrowed from the definition */
    char name[128];        /* modern name */
    const wf_type *type;
    const wf_value *initial; /* the DP's default (variables), or NULL */
    bool is_arg;
    bool read, written;
    const wfl_node *scope; /* variables: the node whose modern form declares it */
} wfc__slot;

/* One use of a slot, recorded in pass 1 (for the data-sharing checks of Parallel). */
typedef struct wfc__use_rec {
    size_t slot; /* index into slots */
    const wfl_node *user;
    bool write;
} wfc__use_rec;

typedef struct wfc__lib {
    const wfl_typelib *tl;
    char prefix[16];    /* "ns0" */
    char assembly[128]; /* the native library NAME (libNAME.so) */
} wfc__lib;

#define WFC__MAX_LIBS 32

/* One subtree hosted through Interop: its generated composite assembly. */
typedef struct wfc__hosted {
    const wfl_node *node; /* the hosted subtree */
    char prefix[16];      /* "io0" */
    char assembly[256]; /* "order.applyDiscounts": NAME.activities.xml beside the XAML */
} wfc__hosted;

#define WFC__MAX_HOSTED 64

/* An xmlns of converted activity types ("clr-namespace:Conv;assembly=convcases"). */
typedef struct wfc__tns {
    char prefix[16]; /* "t0" */
    char ns[300];
} wfc__tns;

#define WFC__MAX_TNS 16

/* One argument of a converted activity type, with the direction its conversion gave it. */
typedef struct wfc__targ {
    char name[128];
    wfl_tl_dir dir;
} wfc__targ;

#define WFC__MAX_TARGS 64

typedef struct wfc__conv {
    const wfc_opts *opts;
    const wfl_definition *def;
    const wfl_node *root;
    wfc_file *file;
    int pass; /* 1: analysis (output discarded), 2: the real output */
    wf_buf body;
    wfc_xw w;
    wfc__slot *slots;
    size_t slot_count, slot_cap;
    wfc__use_rec *uses;
    size_t use_count, use_cap;
    wfc__lib libs[WFC__MAX_LIBS];
    size_t lib_count;
    const char *path;       /* the .xoml */
    const char *out_name;   /* the XAML's file name (in out_name_buf) */
    char out_name_buf[1024]; /* lives as long as the conversion: the map reads it last */
    wfc__hosted hosted[WFC__MAX_HOSTED];
    size_t hosted_count;    /* this pass */
    size_t dropped_count;   /* properties whose behaviour was not carried over */
    wfc_sidecars side;      /* pass 2: the generated files */
    void *source_doc;       /* the .xoml as an xmlDoc (wfc_interop.c), parsed on first use */
    wf_strmap *seen;     /* pass 2: name -> its first report entry + 1 */
    wf_strmap *consumed; /* pass 2: "name\x1fDP" of every DP the walk read ("name\x1f*":
                            all of them, for Interop) */
    unsigned depth;      /* composites being converted around this one */
    unsigned repeat;     /* > 0: writing a subtree again (a flattened state's EventDriven):
                            not reported again */
    wfc__tns tns[WFC__MAX_TNS];
    size_t tns_count;
    bool uses_services;  /* a Receive was written: the root declares the service model's xmlns */
    bool failed;         /* an error diagnostic was (or, in pass 1, will be) reported */
    bool nomem;
    wf_error first; /* the first error, for the caller */
} wfc__conv;

/* NAME.xaml.map.json as a generated file (wfc_map_json.c), after a conversion succeeded. */
void wfc__map_json(wfc__conv *c);

/* Report (pass 2 only; errors also mark the conversion failed in both passes). */
void wfc__diag(wfc__conv *c, wfc_severity sev, wf_loc at, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void wfc__activity(wfc__conv *c, const wfl_node *node, const char *modern_type, wfc_action action);

/* ---- the walk (wfc_convert.c) -------------------------------------------------------------- */
/* Convert n (and its subtree) through the rule of its kind, wrapped in a TryCatch /
 * CancellationScope for the FaultHandlers / CancellationHandler the rule does not place. */
void wfc__emit(wfc__conv *c, const wfl_node *n);
/* Report a loss of `kind` at n (pass 2). */
void wfc__loss(wfc__conv *c, wfc_loss_kind kind, const wfl_node *n, const char *what);
wfl_kind wfc__kind_of(const wfl_node *n);
/* Whether n is an alternative flow (FaultHandlers, CancellationHandler, ...), not a step. */
bool wfc__is_alt_flow(const wfl_node *n);
/* n's first child of `kind`, or NULL. */
const wfl_node *wfc__child_of_kind(const wfl_node *n, wfl_kind kind);
/* Record that the walk read DP `name` of n (pass 2; "*": all of them), for the
 * ignored-property check. */
void wfc__consumed(wfc__conv *c, const wfl_node *n, const char *name);
/* DP `name` of n (UNSET when its type has no such DP), recorded as consumed. */
void wfc__prop(wfc__conv *c, const wfl_node *n, const char *name, wfl_prop_info *out);
/* DP `name` of n when it is a literal string, else NULL. */
const char *wfc__literal_str(wfc__conv *c, const wfl_node *n, const char *name);
/* Writers: <ELEM DisplayName="n's name" (open), <ELEM DisplayName ATTR="value"/>, an
 * attribute naming type t (an error when it has no modern spelling), <ELEM
 * x:TypeArguments="T">[expr]</ELEM>, and every child of n that is a step. */
void wfc__open_named(wfc__conv *c, const char *elem, const wfl_node *n);
void wfc__leaf(wfc__conv *c, const char *elem, const wfl_node *n, const char *attr,
               const char *value);
void wfc__type_attr(wfc__conv *c, const char *attr, const wf_type *t, wf_loc at);
void wfc__argument(wfc__conv *c, const char *elem, const wf_type *t, const char *expr, wf_loc at);
void wfc__children(wfc__conv *c, const wfl_node *n);
/* Open a CancellationScope for CancellationHandler ch and a TryCatch for FaultHandlers fh
 * (either may be NULL; both named like `named`, or nameless) around what the caller writes
 * next; wfc__handlers_close writes the handlers and closes them. */
void wfc__handlers_open(wfc__conv *c, const wfl_node *named, const wfl_node *ch,
                        const wfl_node *fh);
void wfc__handlers_close(wfc__conv *c, const wfl_node *ch, const wfl_node *fh);
/* <ActivityAction x:TypeArguments="T"> with its DelegateInArgument `name` of type t; the
 * caller writes the handler and closes the ActivityAction. */
void wfc__action_open(wfc__conv *c, const wf_type *t, const char *name, wf_loc at);
/* <ELEM><Sequence DisplayName="h"> declaring h's variables, with h's steps. */
void wfc__handler_body(wfc__conv *c, const char *elem, const wfl_node *h);

/* ---- the family tables (wfc_map_*.c) ----------------------------------------------------- */
/* One rule: how activities of a legacy kind convert. wfc__emit reports `modern` (when not
 * NULL; else the emitter reports what it chose) and calls `emit`; a rule without `emit`
 * hosts the subtree through Interop, `why` saying why. */
typedef void (*wfc__emit_fn)(wfc__conv *c, const wfl_node *n);
enum {
    WFC__OWN_FAULTS = 1 << 0, /* the emitter places the node's FaultHandlers itself */
    WFC__OWN_CANCEL = 1 << 1, /* ... and its CancellationHandler */
    WFC__DEFAULT_COMP = 1 << 2, /* compensates its completed children when it faults or is
                                   canceled (wfc__default_comp_open) */
};
typedef struct wfc__rule {
    wfl_kind kind;
    wfc__emit_fn emit;  /* NULL: hosted through Interop */
    const char *modern; /* the modern type reported, or NULL */
    wfc_action action;  /* with modern */
    const char *why;    /* without emit: why there is no modern equivalent */
    unsigned flags;     /* WFC__OWN_* */
} wfc__rule;
/* One family's rules; a kind appears in one family only. */
typedef struct wfc__family {
    const char *name;
    const wfc__rule *rules;
    size_t count;
} wfc__family;
extern const wfc__family wfc__map_flow;   /* wfc_map_flow.c: loops and control flow */
extern const wfc__family wfc__map_fault;  /* wfc_map_fault.c: faults, compensation */
extern const wfc__family wfc__map_event;  /* wfc_map_event.c: local services */
extern const wfc__family wfc__map_state;  /* wfc_map_state.c: state machines */
extern const wfc__family wfc__map_custom; /* wfc_map_custom.c: type libraries, Interop */
extern const wfc__family wfc__map_rules;  /* wfc_map_rules.c: conditions, Policy */
extern const wfc__family wfc__map_service; /* wfc_map_service.c: WF 3.5 workflow services */

/* wfc_map_fault.c: FaultHandlers fh as TryCatch.Catches (WF3's first match kept). */
void wfc__catches(wfc__conv *c, const wfl_node *fh);
/* wfc_map_fault.c: the body of composite n as a Sequence of its children (declaring n's
 * variables when `vars`), inside a TryCatch when n has FaultHandlers. */
void wfc__body(wfc__conv *c, const wfl_node *n, bool vars);
/* wfc_map_fault.c: handler child h (CancellationHandler, CompensationHandler) as
 * <PROP_ELEM><Sequence>, reported as `modern`. */
void wfc__handler_prop(wfc__conv *c, const char *prop_elem, const wfl_node *h, const char *modern);
/* wfc_map_fault.c: WF3's default compensation for composite n (not the root, no
 * CancellationHandler of its own, a CompensatableSequence below it): open a CompensableActivity
 * without handlers around it, whose cancellation (by a fault passing through, or a cancel)
 * compensates its completed children newest first. False when n needs none. */
bool wfc__default_comp_open(wfc__conv *c, const wfl_node *n);
void wfc__default_comp_close(wfc__conv *c);
/* wfc_map_custom.c: host subtree n through Interop (every activity in it reported as
 * hosted); `why` says why it has no modern equivalent. */
void wfc__interop_wrap(wfc__conv *c, const wfl_node *n, const char *why);

/* ---- conditions (wfc_map_rules.c) ---------------------------------------------------------- */
typedef struct wfc__cond_plan {
    bool present; /* the node has a condition */
    bool is_code; /* evaluated by an InvokeMethod into `var` first */
    char var[160];
    wf_buf text; /* the expression */
    const wfl_tl_func *fn;
} wfc__cond_plan;
/* Read the condition DP `dp_name` of n into p: rules text, or a code condition (reported
 * when it cannot convert). Always pair with wfc__cond_plan_fini. */
void wfc__cond_plan_init(wfc__conv *c, const wfl_node *n, const char *dp_name, wfc__cond_plan *p);
void wfc__cond_plan_fini(wfc__cond_plan *p);
/* A code condition: open the Sequence that declares p->var and computes it (the caller
 * closes it); nothing for a rules condition. */
void wfc__cond_open(wfc__conv *c, const wfl_node *n, const wfc__cond_plan *p);
/* Condition="[text]" on the open element. */
void wfc__cond_attr(wfc__conv *c, const wfc__cond_plan *p);

/* ---- native calls (wfc_invoke.c) ----------------------------------------------------------- */
/* Where a function's parameters come from: the code-beside class's properties (handlers and
 * conditions), a custom activity's DPs, or a service call's ParameterBindings. */
typedef enum wfc__arg_source {
    WFC__FROM_CLASS,
    WFC__FROM_ACTIVITY,
    WFC__FROM_BINDINGS
} wfc__arg_source;
/* <InvokeMethod> of fn from library tl, named `display`, its parameters from `src`, its result
 * into `result_var` when given, else where the return value is bound. */
void wfc__invoke(wfc__conv *c, const wfl_node *n, const char *display, const wfl_tl_func *fn,
                 const wfl_typelib *tl, wfc__arg_source src, const char *result_var);
/* The type library of the workflow's code-beside class, or NULL. */
const wfl_typelib *wfc__class_typelib(const wfc__conv *c);
/* Handler DP `dp_name` of n (ExecuteCode, Invoked, MethodInvoking) as an InvokeMethod;
 * nothing when unset and not `required`, an error when it has no native function. */
void wfc__handler_call(wfc__conv *c, const wfl_node *n, const char *dp_name, bool required);
/* Whether n has a ParameterBinding with a value for `param` (nothing recorded). */
bool wfc__has_binding(const wfl_node *n, const char *param);
/* The expression of n's ParameterBinding for `param`, read and/or written; *found says
 * whether there is one. False (reported) when it cannot be expressed. */
bool wfc__binding_arg(wfc__conv *c, const wfl_node *n, const char *param, bool rd, bool wr,
                      wf_buf *out, bool *found);

/* ---- the report's pictures (wfc_graph.c) --------------------------------------------------- */
/* After pass 2: both workflows as DOT, coloured by action, kept in the report file. */
void wfc__graphs(wfc__conv *c);

/* ---- activity types (wfc_acttype.c) --------------------------------------------------- */
/* A custom composite (Definition=) n: its body converted to NAME.xaml (pass 2: kept as a
 * generated file) and <tN:NAME .../> written for n. */
void wfc__acttype(wfc__conv *c, const wfl_node *n);
/* wfc_convert.c: convert the .xoml at path `depth` composites deep, also returning the
 * root arguments and their directions (targs: WFC__MAX_TARGS entries). */
wf_status wfc__convert_path(const wfc_opts *opts, const char *path, unsigned depth,
                            wfc_file *file, char **xaml, size_t *len, wfc_sidecars *side,
                            wfc__targ *targs, size_t *targ_count, wf_error *err);
/* wfc_invoke.c: the expression for typelib property p of custom activity n (its bind,
 * literal, default or own storage), read and/or written. */
bool wfc__activity_arg(wfc__conv *c, const wfl_node *n, const wfl_tl_prop *p, bool rd, bool wr,
                       wf_buf *out);

/* ---- Interop (wfc_interop.c) ---------------------------------------------------------- */
/* Host subtree n through the Interop activity: write <Interop> with the workflow properties
 * the subtree uses as arguments and (pass 2) generate its composite type (c->side). `why`
 * says why it has no modern equivalent (for the report). */
void wfc__interop(wfc__conv *c, const wfl_node *n, const char *why);
/* After pass 2: data of a hosted activity used outside its subtree is an error (the Interop
 * keeps it inside the legacy executor). */
void wfc__interop_check(wfc__conv *c);
/* Free what wfc__interop kept (the parsed source). */
void wfc__interop_fini(wfc__conv *c);

/* ---- storage and expressions (wfc_data.c) ---------------------------------------------- */
/* The slot of DP `dp_name` of `owner`, made on first use (pass 1); NULL on out of memory or
 * when it cannot hold data (reported). */
wfc__slot *wfc__slot_of(wfc__conv *c, const wfl_node *owner, const char *dp_name,
                        const wf_type *type, wf_loc at);
/* The compensation token of CompensatableSequence `owner`, which `user` (a Compensate)
 * compensates: the slot (role WFC__ROLE_TOKEN) that holds the token once `owner`'s body
 * completed, and beside it the one (WFC__ROLE_RUN) its CompensableActivity.Result fills when
 * it starts. Made in pass 1; NULL on out of memory. */
#define WFC__ROLE_TOKEN "(Token)"
#define WFC__ROLE_RUN   "(Run)"
wfc__slot *wfc__token_slot(wfc__conv *c, const wfl_node *owner, const wfl_node *user);
/* A name the converter makes for `owner` (a variable or a delegate argument): OWNER_LABEL,
 * the owner's name encoded as an identifier (reversibly: _xHH_ for each byte that cannot be
 * in one) and made unique among the root properties and the variables (_2, _3, ...). */
void wfc__gen_name(const wfc__conv *c, const wfl_node *owner, const char *label, char *out,
                   size_t size);
/* The slot of DP `dp_name` of `owner` if one was made, else NULL. */
wfc__slot *wfc__find_slot(wfc__conv *c, const wfl_node *owner, const char *dp_name);
/* Record that `user` reads and/or writes slot. */
void wfc__use(wfc__conv *c, wfc__slot *slot, const wfl_node *user, bool read, bool write);
/* Whether activities below `a` and below `b` use the same data, one of them writing it
 * (after pass 1). */
bool wfc__share_data(const wfc__conv *c, const wfl_node *a, const wfl_node *b);
/* Append the modern reference for `bind` written on `from` (`Index`, `post_Receipt`,
 * `Order.Lines[0]`) and record the use. *type (optional) is the bound member's type when the
 * bind names a whole member, else NULL. False (reported) when it does not resolve. */
bool wfc__bind_expr(wfc__conv *c, const wfl_node *from, const wfl_bind *bind, bool read, bool write,
                    wf_buf *out, const wf_type **type);
/* The reference for the root parameter `name` (recording the use); false if none. */
bool wfc__param_expr(wfc__conv *c, const wfl_node *user, const char *name, bool read, bool write,
                     wf_buf *out);
/* XAML type name (x:Int32, scg:List(x:String), s:InvalidOperationException); false when
 * the type has no modern spelling. */
bool wfc__xaml_type(const wf_type *t, wf_buf *out);
/* For a type outside the namespaces the document declares (the rules engine's exceptions):
 * the xmlns to declare where it is used, and its prefix in *prefix; else NULL. */
const char *wfc__type_xmlns(const wf_type *t, const char **prefix);
#define WFC__NS_RULES "clr-namespace:System.Workflow.Activities.Rules;assembly=System.Workflow.Activities"
/* C#-style cast name for an Object member ("string", "int"), or NULL. */
const char *wfc__cast_name(const wf_type *t);
/* Write <X.Variables> for the slots declared at `scope` (nothing when none); `owner_elem` is
 * the element name ("Sequence"). */
void wfc__write_variables(wfc__conv *c, const wfl_node *scope, const char *owner_elem);
bool wfc__has_variables(const wfc__conv *c, const wfl_node *scope);
/* After pass 1: move every variable's scope to a node that can declare it. */
void wfc__settle_scopes(wfc__conv *c);
/* The library prefix for typelib tl (assigned on first use). NULL when it has no Library. */
const char *wfc__lib_prefix(wfc__conv *c, const wfl_typelib *tl, wf_loc at);

#endif

/* wfc_convert_int.h — the converter's state shared by the engine files inside converter/:
 * the walk over the legacy tree (wfc_convert.c), storage and expressions (wfc_data.c). The
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
    const char *out_name;   /* the XAML's file name */
    wfc__hosted hosted[WFC__MAX_HOSTED];
    size_t hosted_count;    /* this pass */
    wfc_sidecars side;      /* pass 2: the generated files */
    void *source_doc;       /* the .xoml as an xmlDoc (wfc_interop.c), parsed on first use */
    wf_strmap *seen;     /* pass 2: name -> its first report entry + 1 */
    wf_strmap *consumed; /* pass 2: "name\x1fDP" of every DP the walk read ("name\x1f*":
                            all of them, for Interop) */
    unsigned depth;      /* composites being converted around this one */
    wfc__tns tns[WFC__MAX_TNS];
    size_t tns_count;
    bool failed;         /* an error diagnostic was (or, in pass 1, will be) reported */
    bool nomem;
    wf_error first; /* the first error, for the caller */
} wfc__conv;

/* Report (pass 2 only; errors also mark the conversion failed in both passes). */
void wfc__diag(wfc__conv *c, wfc_severity sev, wf_loc at, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void wfc__activity(wfc__conv *c, const wfl_node *node, const char *modern_type, wfc_action action);

/* ---- activity types (wfc_acttype.c) --------------------------------------------------- */
/* A custom composite (Definition=) n: its body converted to NAME.xaml (pass 2: kept as a
 * generated file) and <tN:NAME .../> written for n. */
void wfc__acttype(wfc__conv *c, const wfl_node *n);
/* wfc_convert.c: convert the .xoml at path `depth` composites deep, also returning the
 * root arguments and their directions (targs: WFC__MAX_TARGS entries). */
wf_status wfc__convert_path(const wfc_opts *opts, const char *path, unsigned depth,
                            wfc_file *file, char **xaml, size_t *len, wfc_sidecars *side,
                            wfc__targ *targs, size_t *targ_count, wf_error *err);
/* wfc_convert.c: the expression for typelib property p of custom activity n (its bind,
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

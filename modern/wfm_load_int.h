/* wfm_load_int.h — the XAML loader's working state (struct wfm_load), shared only by the
 * loader files (wfm_xaml.c, wfm_xaml_types.c) and wfm_catalogue.c, which implements the
 * wfm_load_* functions prepare callbacks call. Nothing here outlives one load. */
#ifndef WFM_LOAD_INT_H
#define WFM_LOAD_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_xml.h"
#include "wfm_definition_int.h"

/* How deeply XAML activity types may use one another (docs/architecture.md). */
#define WFM__TYPE_DEPTH 16

/* A name visible to expressions, in one env-creating scope level. */
typedef struct wfm__scope_name {
    const char *name;
    const wf_type *type;
    bool writable;
} wfm__scope_name;

/* One env-creating level (E0, Ev or Ed in wfm_definition_int.h), innermost first via `up`. */
typedef struct wfm__scope_frame {
    struct wfm__scope_frame *up;
    const wfm__scope_name *names;
    size_t count;
} wfm__scope_frame;

/* A file the load reads besides the definition itself: a XAML activity type found on the
 * library path (docs/architecture.md "XAML activity types"). Kept until the end of the load. */
typedef struct wfm__src {
    struct wfm__src *next;
    const char *file; /* in the definition's arena: the `file` of its locations */
    wf_xml_doc *doc;
    wf_buf buf; /* the file bytes */
    const char *data; /* buf.data, buf.len */
    size_t len;
} wfm__src;

/* Loader bookkeeping per node: its element and the attributes no spec member described. */
typedef struct wfm__lnode {
    wfm_node *node;
    const wf_xml_node *el;
    const wfm__src *src; /* the file of `el`; NULL: the definition's own file */
    const wf_xml_attr **unknown; /* attributes deferred for wfm_load_claim_attr */
    bool *claimed;
    size_t unknown_count;
    bool bad; /* an error was reported at this node: prepare is skipped */
} wfm__lnode;

/* An x:Reference waiting for the whole file to be read. */
typedef struct wfm__pending_ref {
    wfm_node **slot;      /* where the target goes */
    const char *name;
    wf_loc loc;
    const wfm_node *site; /* the node whose property holds the reference */
    size_t site_ln;       /* its lnode index */
    const char *accepts;  /* required category */
    const char *prop;     /* "Kind.Prop", for messages */
} wfm__pending_ref;

struct wfm_load {
    const wfm_load_opts *opts;
    wf_types *types;
    wf_xml_doc *doc;
    wfm_definition *def;
    wf_arena *arena; /* def->arena */
    wf_arena *tmp;   /* scratch for this load only */
    /* The file being read (the definition's, or an activity type's while it is expanded):
     * doc, file name of locations, and its bytes (for mapping columns over entities). */
    const char *file;
    const char *data;
    size_t len;
    const wfm__src *src;  /* NULL: the definition's own file */
    wf_xml_doc *main_doc; /* the definition's own document */
    const char *main_data;
    size_t main_len;
    wfm__src *srcs; /* activity type files read so far */
    const char *types_open[WFM__TYPE_DEPTH]; /* x:Class of the types being expanded */
    size_t type_depth;
    const wfm__arg *type_args; /* the arguments of the type just expanded */
    uint32_t type_arg_count;
    wf_diags *diags; /* private; copied to opts->diags at the end */
    bool nomem;
    size_t errors; /* errors reported (diags may drop some when memory runs out) */
    wfm__scope_frame *scope; /* innermost frame while building */
    wf_strmap *names;        /* x:Name -> wfm__lnode index + 1 (as uintptr_t) */
    wfm__lnode *lnodes;
    size_t lnode_count, lnode_cap;
    size_t main_elements; /* an upper bound of the definition file's elements */
    wfm__pending_ref *refs;
    size_t ref_count, ref_cap;
    wf_value *owned; /* heap literals (lists, records) released with the definition */
    size_t owned_count, owned_cap;
    size_t cur_lnode; /* lnode of the node whose prepare runs, for quick lookups */
    /* Catalogue lookups by element: the XML loader shares one copy of each distinct name and
     * namespace, so a (ns, name) pointer pair seen before has the same answer (kinds are
     * registered before loads). Direct-mapped by the name's address; kind may be NULL. */
    struct {
        const char *ns, *name;
        const wfm_kind *kind;
    } kind_memo[64];
    struct wfm__ign_scope *ign; /* mc:Ignorable carriers by document (wfm_xaml_types.c) */
    /* The scope of the last element asked about, by its parent: siblings are asked in a row,
     * so most questions need no walk up to their document's root. */
    const wf_xml_node *ign_parent;
    struct wfm__ign_scope *ign_last;
};

/* wfm_xaml.c: the lnode of a node (NULL if none). */
wfm__lnode *wfm__load_lnode(wfm_load *load, const wfm_node *node);
/* wfm_xaml.c: record a diagnostic of this load; one the list has no room for (out of memory)
 * makes the load fail with WF_E_NOMEM rather than lose it. */
void wfm__load_diag(wfm_load *load, wf_severity sev, const wf_error *e);

/* ---- wfm_xaml_types.c ------------------------------------------------------------------ */
#define WFM__NS_XAML "http://schemas.microsoft.com/winfx/2006/xaml"
#define WFM__NS_MC   "http://schemas.openxmlformats.org/markup-compatibility/2006"

void wfm__xt_report(wfm_load *load, wf_status code, wf_loc at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool wfm__xt_is_x(const char *ns);
/* ns is listed (by prefix) in an mc:Ignorable in scope at el. The carriers of each document
 * are found once per load (kept in load->ign, from load->tmp). */
bool wfm__xt_ignorable(wfm_load *load, const wf_xml_node *el, const char *ns);
/* A designer-only member WF4 writes outside mc:Ignorable (sap ViewState, TextExpression...). */
bool wfm__xt_designer_member(const char *ns, const char *name);
const char *wfm__xt_trim(const char *s, size_t *len);
size_t wfm__xt_first_type_len(const char *text);
/* Resolve a XAML type name; reports WF_E_TYPE "unknown type" at `at`. */
wf_status wfm__xt_type(wfm_load *load, const wf_xml_node *el, const char *text, size_t len,
                       wf_loc at, const wf_type **out);
/* The same without reporting an unknown type (WF_E_TYPE returned). */
wf_status wfm__xt_type_quiet(wfm_load *load, const wf_xml_node *el, const char *text, size_t len,
                             const wf_type **out);
/* Literal text converted to `type` (strings immortal in the arena; heap values kept for
 * release with the definition). Reports WF_E_TYPE "cannot convert". */
wf_status wfm__xt_literal(wfm_load *load, const wf_type *type, const char *text, wf_loc at,
                          wf_value *out);

#endif

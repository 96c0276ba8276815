/* wfl_bind.h — ActivityBind: parsing the markup-extension form `{ActivityBind Name,Path=P}`
 * and member paths (`Order.Lines[0].Sku`), resolving a bind's Name against the definition
 * tree, and reading/writing through a path into immutable list and record values
 * (docs/semantics.md §1 "ActivityBind"). Run-time resolution on instances is in wfl_inst.h. */
#ifndef WFL_BIND_H
#define WFL_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"

typedef enum wfl_seg_kind {
    WFL_SEG_MEMBER, /* .Name */
    WFL_SEG_INDEX,  /* [n] on a list */
    WFL_SEG_KEY,    /* ["key"] on a record */
} wfl_seg_kind;

typedef struct wfl_path_seg {
    wfl_seg_kind kind;
    const char *name; /* MEMBER: member name; KEY: the key */
    int64_t index;    /* INDEX */
} wfl_path_seg;

/* A parsed ActivityBind. All strings and segments live in the arena it was parsed into. */
typedef struct wfl_bind {
    const char *name;       /* activity name: "Workflow1", "/Self", "/Parent/Parent", "a.b" */
    const char *path;       /* the Path text as written ("" if none) */
    const wfl_path_seg *segs; /* parsed Path; segs[0] is the member of the target activity */
    size_t seg_count;
    wf_loc loc;             /* where the bind is written */
} wfl_bind;

/* True if `text` (an attribute value) is a markup extension naming ActivityBind:
 * `{ActivityBind ...}`, `{wf:ActivityBindExtension ...}`. */
bool wfl_bind_is_markup(const char *text);
/* Parse the markup form: positional args Name then Path, named Name= / Path=, quoted values
 * ('..' or ".."), optional prefix and `Extension` suffix. loc is the start of the text; errors
 * (WF_E_SYNTAX) point at the offending character when it is on the same line. */
wf_status wfl_bind_parse_markup(wf_arena *arena, const char *text, wf_loc loc, wfl_bind **out,
                                wf_error *err);
/* Build a bind from the element form's Name and Path attributes (path may be NULL). */
wf_status wfl_bind_make(wf_arena *arena, const char *name, const char *path, wf_loc loc,
                        wfl_bind **out, wf_error *err);
/* Parse a member path: members separated by '.', indexers [n] / ["key"] / ['key'], one
 * leading '/' tolerated. An empty path gives zero segments. WF_E_SYNTAX otherwise. */
wf_status wfl_bind_parse_path(wf_arena *arena, const char *path, wf_loc loc,
                              wfl_path_seg **out_segs, size_t *out_count, wf_error *err);

/* Name-resolution steps of a bind name: "/Self" -> up = 0; "/Parent/Parent" -> up = 2; plain
 * names -> is_relative false. Returns false on a malformed "/..." name. */
bool wfl_bind_name_steps(const char *name, bool *is_relative, unsigned *up);

/* Values through paths. `segs` apply to `root` (the value of the bound member).
 * get: WF_E_NAME (record has no such key or member), WF_E_RANGE (index out of range),
 * WF_E_FAULT ("null reference": a null in the middle), WF_E_TYPE (member of a scalar).
 * Members of records are their keys; lists also have Count, strings Length. *out is retained.
 * set: rebuilds every container on the way and stores a new root in *new_root (the caller
 * releases it); setting a missing record key adds it. */
wf_status wfl_value_path_get(const wf_value *root, const wfl_path_seg *segs, size_t count,
                             wf_value *out, wf_error *err);
wf_status wfl_value_path_set(const wf_value *root, const wfl_path_seg *segs, size_t count,
                             const wf_value *value, wf_value *new_root, wf_error *err);

#endif

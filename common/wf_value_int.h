/* wf_value_int.h — payload layouts and move-in constructors shared by wf_value.c,
 * wf_value_text.c, wf_json.c and wf_jsonw.c only (no other folder includes this). A payload
 * whose refs is negative is immortal: retain and release skip it (wf_value_string_static). */
#ifndef WF_VALUE_INT_H
#define WF_VALUE_INT_H

#include <stdatomic.h>

#include "wf_value.h"

#define WF_REFS_IMMORTAL (-1L)

struct wf_str {
    atomic_long refs;
    size_t len;
    char *ptr; /* points at bytes[] or at a taken wf_malloc'd buffer */
    char bytes[];
};

struct wf_list {
    atomic_long refs;
    size_t count;
    wf_value items[];
};

typedef struct wf_rec_entry {
    const char *key; /* points into the record's own allocation */
    wf_value value;
} wf_rec_entry;

struct wf_rec {
    atomic_long refs;
    size_t count;
    wf_rec_entry entries[]; /* followed by the key bytes */
};

struct wf_exc {
    atomic_long refs;
    char message[]; /* the type lives in the wf_value */
};

/* Build a list from `count` values, taking the references they hold (released on failure). */
wf_status wf_value_list_take(const wf_type *list_type, wf_value *items, size_t count,
                             wf_value *out);
/* Build a record, copying keys and taking the value references (released on failure). */
wf_status wf_value_record_take(const char *const *keys, wf_value *values, size_t count,
                               wf_value *out);

/* wf_json_parse, with numbers bound for Decimal under `target` (NULL: none) read exactly
 * from their digits; the value is not converted to target yet (wf_json_parse_as does). */
wf_status wf__json_parse_typed(wf_types *types, const wf_type *target, const char *text,
                              size_t len, wf_value *out, wf_error *err);

/* jansson allocates through wf_malloc (so the Nth-allocation tests reach it); idempotent,
 * called before any jansson use. */
void wf__json_alloc_install(void);

/* Text forms used by both conversion and rendering. */
void wf_double_format(double d, char *buf, size_t size); /* shortest round-trip, .NET "R" */

#endif

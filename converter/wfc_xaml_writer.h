/* wfc_xaml_writer.h — deterministic XML text for converted definitions: elements opened and
 * closed in order, attributes in the order written, two spaces per level, `/>` for elements
 * without content, and one escaping rule, so the same calls give the same bytes. */
#ifndef WFC_XAML_WRITER_H
#define WFC_XAML_WRITER_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_mem.h"

/* Lifecycle:
 * 1. wfc_xw w; wfc_xw_init(&w, &buf, depth) — writes into a caller-owned wf_buf.
 * 2. wfc_xw_open(&w, "Sequence"), wfc_xw_attr(...)*, then children or wfc_xw_text, then
 *    wfc_xw_close(&w) (which writes `/>` when nothing was inside).
 * 3. wfc_xw_ok(&w) once at the end: false when an append ran out of memory, the element
 *    stack overflowed (then too_deep is set) or the calls did not nest (nothing is checked
 *    in between). The writer owns nothing. */

#define WFC_XW_MAX_DEPTH 256

typedef struct wfc_xw {
    wf_buf *out;                         /* borrowed */
    const char *stack[WFC_XW_MAX_DEPTH]; /* open element names (borrowed, must outlive close) */
    size_t depth;                        /* open elements */
    size_t base;                         /* indentation levels before the first element */
    bool tag_open; /* the start tag of the innermost element still lacks its '>' */
    bool has_text; /* the innermost element holds text: close on the same line */
    bool failed;   /* out of memory or a misuse (close without open, ...) */
    bool too_deep; /* more than WFC_XW_MAX_DEPTH open elements were asked for */
} wfc_xw;

void wfc_xw_init(wfc_xw *w, wf_buf *out, size_t base_depth);
void wfc_xw_open(wfc_xw *w, const char *name);
void wfc_xw_attr(wfc_xw *w, const char *name, const char *value); /* value escaped */
void wfc_xw_attrf(wfc_xw *w, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void wfc_xw_text(wfc_xw *w, const char *text); /* element content on the tag's line */
void wfc_xw_close(wfc_xw *w);
void wfc_xw_comment(wfc_xw *w, const char *text); /* "--" in text is written as "- -" */
/* An element with one attribute-free text child: <name>text</name>. */
void wfc_xw_leaf_text(wfc_xw *w, const char *name, const char *text);
/* Finish a pending start tag with '>' (content written elsewhere follows). */
void wfc_xw_end_start_tag(wfc_xw *w);
bool wfc_xw_ok(const wfc_xw *w);

#endif

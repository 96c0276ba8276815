/* wfc_xaml_writer.h — deterministic XML text for converted definitions, on the common writer
 * (common/wf_xmlw.h, libxml2's xmlTextWriter): elements opened and closed in order, attributes
 * in the order written, two spaces per level, `/>` for elements without content, so the same
 * calls give the same bytes, and the converter's nesting limit. */
#ifndef WFC_XAML_WRITER_H
#define WFC_XAML_WRITER_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_xmlw.h"

/* Lifecycle:
 * 1. wfc_xw w; wfc_xw_init(&w, &buf, depth) — text goes to a caller-owned wf_buf, indented
 *    `depth` levels (for a body another writer places inside its own element).
 * 2. wfc_xw_open(&w, "Sequence"), wfc_xw_attr(...)*, then children or wfc_xw_text, then
 *    wfc_xw_close(&w) (which writes `/>` when nothing was inside).
 * 3. wfc_xw_finish(&w) once at the end: appends the text to the buffer and releases the
 *    writer; false when memory ran out, the element stack overflowed (then too_deep is set),
 *    a name was not an XML name or the calls did not nest (then nothing is appended), with
 *    the reason in err (WF_E_NOMEM, WF_E_LIMIT, WF_E_NAME, WF_E_STATE). wfc_xw_ok asks the
 *    same before. */

#define WFC_XW_MAX_DEPTH 256

typedef struct wfc_xw {
    wf_buf *out;   /* borrowed: wfc_xw_finish appends here */
    wf_xmlw *x;    /* owned until wfc_xw_finish; NULL when creating it failed */
    size_t depth;  /* open elements */
    bool tag_open; /* the start tag of the innermost element can still take attributes */
    bool failed;   /* out of memory or a misuse (close without open, ...) */
    bool too_deep; /* more than WFC_XW_MAX_DEPTH open elements were asked for */
    wf_error err;  /* set by wfc_xw_finish when it fails */
} wfc_xw;

void wfc_xw_init(wfc_xw *w, wf_buf *out, size_t base_depth);
void wfc_xw_declaration(wfc_xw *w); /* <?xml ...?>, before anything else */
void wfc_xw_open(wfc_xw *w, const char *name);
void wfc_xw_attr(wfc_xw *w, const char *name, const char *value); /* value escaped */
void wfc_xw_attrf(wfc_xw *w, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void wfc_xw_text(wfc_xw *w, const char *text); /* element content on the tag's line */
void wfc_xw_close(wfc_xw *w);
void wfc_xw_comment(wfc_xw *w, const char *text); /* "--" in text is written as "- -" */
/* An element with one attribute-free text child: <name>text</name>. */
void wfc_xw_leaf_text(wfc_xw *w, const char *name, const char *text);
/* Elements another wfc_xw wrote (finished, at this depth + 1) as the current element's
 * content. */
void wfc_xw_markup(wfc_xw *w, const char *markup);
bool wfc_xw_ok(const wfc_xw *w);
bool wfc_xw_finish(wfc_xw *w);

#endif

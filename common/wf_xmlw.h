/* wf_xmlw.h — the one XML/HTML text writer: libxml2's xmlTextWriter behind sticky errors, so
 * every XAML, sidecar, type library, JUnit, WSDL and HTML page is well-formed by construction.
 * Values are cleaned first: a character XML 1.0 cannot carry (a control character, invalid
 * UTF-8, U+FFFE) becomes U+FFFD, and "--" in a comment "- -"; a name that is not an XML name
 * fails the writer (WF_E_NAME), since no replacement keeps it meaningful. */
#ifndef WF_XMLW_H
#define WF_XMLW_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "wf_error.h"
#include "wf_mem.h"

/* Lifecycle:
 * 1. wf_xmlw_create(&opts, &x, err).
 * 2. Optionally wf_xmlw_declaration or wf_xmlw_html_begin, then wf_xmlw_open, wf_xmlw_attr*,
 *    text, children, wf_xmlw_close, in document order. A failed call (no memory, an attribute
 *    after content) is remembered; later calls do nothing.
 * 3. wf_xmlw_finish(x, out, err) appends the bytes to out when every element was closed and
 *    nothing failed (WF_E_NOMEM; WF_E_NAME for a bad name; WF_E_STATE for calls out of order),
 *    then wf_xmlw_destroy.
 * Thread rule: one writer per thread. The same calls always give the same bytes. */
typedef struct wf_xmlw wf_xmlw;

typedef struct wf_xmlw_opts {
    bool indent;       /* one element per line, two spaces per level */
    size_t base_depth; /* with indent: levels of indentation before the first element */
    bool html;         /* every element gets an end tag (<td></td>); close_void for <meta/> */
} wf_xmlw_opts;

#define WF_XMLW_OPTS_INIT                                                                          \
    {                                                                                              \
        false, 0, false                                                                            \
    }

wf_status wf_xmlw_create(const wf_xmlw_opts *opts, wf_xmlw **out, wf_error *err);
void wf_xmlw_destroy(wf_xmlw *x); /* accepts NULL */
wf_status wf_xmlw_finish(wf_xmlw *x, wf_buf *out, wf_error *err);

void wf_xmlw_declaration(wf_xmlw *x); /* <?xml version="1.0" encoding="UTF-8"?>, first */
void wf_xmlw_open(wf_xmlw *x, const char *name);
void wf_xmlw_attr(wf_xmlw *x, const char *name, const char *value); /* NULL value: "" */
void wf_xmlw_attrf(wf_xmlw *x, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void wf_xmlw_attrv(wf_xmlw *x, const char *name, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
void wf_xmlw_text(wf_xmlw *x, const char *text); /* NULL: nothing */
void wf_xmlw_textf(wf_xmlw *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wf_xmlw_close(wf_xmlw *x);      /* `/>` when empty, except in html mode */
void wf_xmlw_close_void(wf_xmlw *x); /* `/>` when empty, in every mode (HTML void elements) */
void wf_xmlw_comment(wf_xmlw *x, const char *text); /* written as <!-- text --> */
/* Markup that is already XML: a constant (a style sheet), an SVG picture, or text an earlier
 * wf_xmlw wrote. It is not checked. In indent mode it is the current element's content as
 * whole lines (each ending with a line break, indented as the writer that made it was told). */
void wf_xmlw_raw(wf_xmlw *x, const char *markup);
/* <name>text</name>: the leaf most outputs are made of. */
void wf_xmlw_leaf(wf_xmlw *x, const char *name, const char *text);
size_t wf_xmlw_depth(const wf_xmlw *x); /* elements open now */
bool wf_xmlw_failed(const wf_xmlw *x);

/* HTML pages (html mode): <!DOCTYPE html>, <html lang="en"><head> with charset, title and the
 * constant style sheet (NULL: none), then <body><h1>title</h1>; html_end closes body and html.
 * html_open adds class="cls" when cls is not NULL; html_cell is html_open, text, close;
 * html_para is an element with an optional id and text, then a line break; html_close_line
 * closes an element and breaks the line; html_table opens a table (id may be NULL) and writes
 * its header row of `count` heads. */
/* The style sheet every report page starts from (a page appends its own classes). */
#define WF_XMLW_REPORT_STYLE                                                                   \
    "\n"                                                                                       \
    "body{font-family:sans-serif;margin:2em;color:#222}\n"                                     \
    "table{border-collapse:collapse;margin:1em 0;max-width:100%}\n"                            \
    "td,th{border:1px solid #bbb;padding:.2em .6em;text-align:left;vertical-align:top}\n"      \
    "tr.total td{font-weight:bold;border-top:2px solid #666}\n"
void wf_xmlw_html_begin(wf_xmlw *x, const char *title, const char *style);
void wf_xmlw_html_end(wf_xmlw *x);
void wf_xmlw_html_open(wf_xmlw *x, const char *tag, const char *cls);
void wf_xmlw_html_cell(wf_xmlw *x, const char *tag, const char *cls, const char *text);
void wf_xmlw_html_para(wf_xmlw *x, const char *tag, const char *id, const char *text);
void wf_xmlw_html_close_line(wf_xmlw *x);
void wf_xmlw_html_table(wf_xmlw *x, const char *id, const char *const *heads, size_t count);

/* The cleaning every value gets, for a caller that writes XML text elsewhere: text with each
 * character XML 1.0 cannot carry replaced by U+FFFD. Returns text itself when it needed no
 * change, else scratch's data (scratch is reset first); NULL when memory ran out. */
const char *wf_xmlw_clean(const char *text, wf_buf *scratch);

#endif

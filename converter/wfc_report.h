/* wfc_report.h — the migration report: per converted file its status, what became of every
 * legacy activity, located diagnostics with a severity and a stable rule id, and the loss
 * list; written as JSON in the form docs/formats.md "Output contracts" fixes (documented in
 * docs/convert.md). The converter fills it; only the CLI writes it to a file. */
#ifndef WFC_REPORT_H
#define WFC_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"

/* Lifecycle:
 * 1. wfc_report_create(&r); each conversion adds one file with wfc_report_add_file.
 * 2. The converter adds activities, diagnostics and losses, and sets status and output.
 * 3. wfc_report_json(r, &buf) renders the whole report; wfc_report_destroy frees it.
 * A report is used by one thread at a time. Strings passed in are copied. Out of memory is
 * sticky: every later call does nothing and wfc_report_json returns WF_E_NOMEM. */

typedef struct wfc_report wfc_report;
typedef struct wfc_file wfc_file;

typedef enum wfc_status { WFC_CONVERTED, WFC_PARTIAL, WFC_FAILED } wfc_status;
typedef enum wfc_action {
    WFC_ACT_MAPPED,           /* a modern equivalent */
    WFC_ACT_INVOKE,           /* an InvokeMethod of the same native function */
    WFC_ACT_INTEROP,          /* hosted by the Interop activity */
    WFC_ACT_DROPPED_DESIGNER, /* dropped-designer-only */
} wfc_action;
typedef enum wfc_severity { WFC_ERROR, WFC_WARNING, WFC_REVIEW, WFC_INFO } wfc_severity;
/* What did not carry over one-to-one. Only DESIGNER losses are allowed by --fail-on-loss. */
typedef enum wfc_loss_kind { WFC_LOSS_DESIGNER, WFC_LOSS_SEMANTICS, WFC_LOSS_CODE } wfc_loss_kind;

wf_status wfc_report_create(wfc_report **out, wf_error *err);
void wfc_report_destroy(wfc_report *r); /* accepts NULL */

/* A new file entry (status converted, no output); NULL on out of memory. */
wfc_file *wfc_report_add_file(wfc_report *r, const char *source);
size_t wfc_report_file_count(const wfc_report *r);
wfc_file *wfc_report_file_at(const wfc_report *r, size_t index);

void wfc_file_set_output(wfc_file *f, const char *output); /* NULL: none written */
void wfc_file_set_status(wfc_file *f, wfc_status status);
wfc_status wfc_file_status(const wfc_file *f);
/* Whether an entry could not be recorded (out of memory; sticky for the whole report). */
bool wfc_file_nomem(const wfc_file *f);
const char *wfc_file_source(const wfc_file *f);
void wfc_file_add_activity(wfc_file *f, const char *name, const char *legacy_type,
                           const char *modern_type, unsigned line, wfc_action action);
/* The activity `name` (the last one added by that name) lost behaviour in the conversion (a
 * property not carried over): it no longer counts as covered. */
void wfc_file_activity_lost(wfc_file *f, const char *name);
void wfc_file_add_diag(wfc_file *f, wfc_severity sev, unsigned line, unsigned col, const char *rule,
                       const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The same for a problem in another file than the source (its .rules, a type library):
 * the JSON entry then has a "file" member. */
void wfc_file_add_diag_in(wfc_file *f, const char *file, wfc_severity sev, unsigned line,
                          unsigned col, const char *rule, const char *message);
void wfc_file_add_loss(wfc_file *f, wfc_loss_kind kind, unsigned line, const char *what);
/* The legacy and the converted workflow as Graphviz DOT text (copied), for the HTML page. */
void wfc_file_set_graphs(wfc_file *f, const char *legacy_dot, const char *modern_dot);
/* The graph drawn for the legacy or the converted workflow (graphviz dot text), NULL if none. */
const char *wfc_file_graph(const wfc_file *f, bool modern);
/* Drop every activity, diagnostic and loss (a conversion starting over). */
void wfc_file_clear(wfc_file *f);

size_t wfc_file_diag_count(const wfc_file *f);
/* Diagnostic i: its severity, rule, line, col and message; false when out of range. */
bool wfc_file_diag(const wfc_file *f, size_t i, wfc_severity *sev, const char **rule,
                   unsigned *line, unsigned *col, const char **message);
/* The file diagnostic i is about: its own file, else the source. */
const char *wfc_file_diag_file(const wfc_file *f, size_t i);
size_t wfc_file_activity_count(const wfc_file *f);
/* Activity i's modern type and action; false when out of range. */
bool wfc_file_activity(const wfc_file *f, size_t i, const char **name, const char **modern_type,
                       wfc_action *action);
size_t wfc_file_error_count(const wfc_file *f);
/* True when something beyond designer-only data was lost (--fail-on-loss). */
bool wfc_file_lost_more_than_designer(const wfc_file *f);

const char *wfc_status_name(wfc_status s);     /* "converted", "partial", "failed" */
const char *wfc_action_name(wfc_action a);     /* "mapped", "invoke", ... */
const char *wfc_severity_name(wfc_severity s); /* "error", "warning", "review", "info" */

/* One --scaffold entry for the file, of kind "function" (a C function to implement), "guessed"
 * (a type to check), "conflict" (a warning) or "declared": a "scaffold" entry "KIND: TEXT". */
void wfc_file_add_scaffold(wfc_file *f, const char *kind, unsigned line, unsigned col,
                           const char *text);
/* With --scaffold: the functions to write and guessed types its entries list over every file
 * (the totals at the top of each form of the report). */
void wfc_report_scaffold_totals(const wfc_report *r, size_t *functions_to_write,
                                size_t *guessed_types);
/* {"totals": {...}, "files": [...]} with "losses" per file; WF_E_NOMEM. */
wf_status wfc_report_json(const wfc_report *r, wf_buf *out, wf_error *err);
/* RFC 4180 CSV, one row per activity, diagnostic and loss:
 * source,status,kind,name,legacyType,modernType,action,severity,rule,line,col,message */
wf_status wfc_report_csv(const wfc_report *r, wf_buf *out, wf_error *err);
/* Turns DOT text into SVG appended to svg: WF_OK, or WF_E_NOTFOUND when no renderer
 * (Graphviz) is available, WF_E_LIMIT when the time allowed for drawing is used up, or
 * another error for a renderer failure. */
typedef wf_status (*wfc_svg_fn)(void *ud, const char *dot, wf_buf *svg, wf_error *err);
/* Files with more activities than this are not drawn (the page says so). */
#define WFC_REPORT_PICTURE_MAX 400
/* A self-contained HTML page: the summary table (the Markdown summary's columns, with a
 * totals row), a legend, "What to do" per rule that occurs, then per file its activities
 * (legacy type -> modern type, action, line), its diagnostics (file:line:col), and the
 * legacy and converted workflows side by side as SVG coloured by action, each picture's
 * element ids prefixed so they are unique in the page. Without a renderer (render NULL or
 * WF_E_NOTFOUND), or once it answers WF_E_LIMIT, the page says why pictures are missing. */
wf_status wfc_report_html(const wfc_report *r, wfc_svg_fn render, void *ud, wf_buf *out,
                          wf_error *err);
/* Markdown: the summary table of the HTML page (File, Status, Activities, Mapped, Invoke,
 * Interop, Coverage = mapped or invoked without lost behaviour / all, Errors, Warnings incl.
 * reviews) with a totals row, then per file its activities and diagnostics. */
wf_status wfc_report_markdown(const wfc_report *r, wf_buf *out, wf_error *err);

#endif

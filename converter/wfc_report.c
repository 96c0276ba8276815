/* wfc_report.c — the migration report's entries and its JSON form (wfc_report.h). Entries
 * are kept in insertion order, so the same conversion renders the same bytes. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../common/wf_jsonw.h"
#include "../common/wf_xml.h"
#include "../common/wf_xmlw.h"
#include "wfc_report.h"

typedef struct rep_activity {
    char *name, *legacy_type, *modern_type;
    unsigned line;
    wfc_action action;
    bool lost; /* some of its behaviour was not carried over */
} rep_activity;

typedef struct rep_diag {
    wfc_severity sev;
    unsigned line, col;
    char *rule, *message;
    char *file; /* NULL: the source */
} rep_diag;

typedef struct rep_loss {
    wfc_loss_kind kind;
    unsigned line;
    char *what;
} rep_loss;

struct wfc_file {
    wfc_report *report;
    char *source, *output;
    wfc_status status;
    rep_activity *acts;
    size_t act_count, act_cap;
    rep_diag *diags;
    size_t diag_count, diag_cap;
    rep_loss *losses;
    size_t loss_count, loss_cap;
    char *legacy_dot, *modern_dot; /* NULL until the conversion drew them */
    size_t functions_to_write, guessed_types; /* the scaffold entries of those kinds */
};

struct wfc_report {
    wfc_file **files;
    size_t count, cap;
    bool nomem;
};

wf_status wfc_report_create(wfc_report **out, wf_error *err)
{
    *out = wf_calloc(1, sizeof **out);
    if (!*out)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return WF_OK;
}

static void file_clear(wfc_file *f)
{
    for (size_t i = 0; i < f->act_count; i++) {
        wf_free(f->acts[i].name);
        wf_free(f->acts[i].legacy_type);
        wf_free(f->acts[i].modern_type);
    }
    for (size_t i = 0; i < f->diag_count; i++) {
        wf_free(f->diags[i].rule);
        wf_free(f->diags[i].message);
        wf_free(f->diags[i].file);
    }
    for (size_t i = 0; i < f->loss_count; i++)
        wf_free(f->losses[i].what);
    f->act_count = f->diag_count = f->loss_count = 0;
}

static void file_destroy(wfc_file *f)
{
    file_clear(f);
    wf_free(f->acts);
    wf_free(f->diags);
    wf_free(f->losses);
    wf_free(f->source);
    wf_free(f->output);
    wf_free(f->legacy_dot);
    wf_free(f->modern_dot);
    wf_free(f);
}

void wfc_report_destroy(wfc_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++)
        file_destroy(r->files[i]);
    wf_free(r->files);
    wf_free(r);
}

/* Make room for one more item of `size` bytes in *items; false (and sticky nomem) if not. */
static bool grow(wfc_report *r, void **items, size_t *cap, size_t count, size_t size)
{
    if (r->nomem)
        return false;
    assert(count <= *cap); /* items[0..count) are in use, never beyond the capacity */
    if (count < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 8;
    void *n = wf_realloc(*items, ncap * size);
    if (!n) {
        r->nomem = true;
        return false;
    }
    *items = n;
    *cap = ncap;
    return true;
}

static char *dup(wfc_report *r, const char *s)
{
    char *d = wf_strdup(s ? s : "");
    if (!d)
        r->nomem = true;
    return d;
}

wfc_file *wfc_report_add_file(wfc_report *r, const char *source)
{
    if (!grow(r, (void **)&r->files, &r->cap, r->count, sizeof *r->files))
        return NULL;
    wfc_file *f = wf_calloc(1, sizeof *f);
    if (!f || !(f->source = dup(r, source))) {
        wf_free(f);
        r->nomem = true;
        return NULL;
    }
    f->report = r;
    r->files[r->count++] = f;
    return f;
}

size_t wfc_report_file_count(const wfc_report *r)
{
    return r->count;
}

wfc_file *wfc_report_file_at(const wfc_report *r, size_t index)
{
    return index < r->count ? r->files[index] : NULL;
}

void wfc_file_set_output(wfc_file *f, const char *output)
{
    wf_free(f->output);
    f->output = output ? dup(f->report, output) : NULL;
}

void wfc_file_set_status(wfc_file *f, wfc_status status)
{
    f->status = status;
}

wfc_status wfc_file_status(const wfc_file *f)
{
    return f->status;
}

bool wfc_file_nomem(const wfc_file *f)
{
    return f->report->nomem;
}

const char *wfc_file_source(const wfc_file *f)
{
    return f->source;
}

void wfc_file_add_activity(wfc_file *f, const char *name, const char *legacy_type,
                           const char *modern_type, unsigned line, wfc_action action)
{
    if (!grow(f->report, (void **)&f->acts, &f->act_cap, f->act_count, sizeof *f->acts))
        return;
    rep_activity *a = &f->acts[f->act_count++];
    *a = (rep_activity){dup(f->report, name), dup(f->report, legacy_type),
                        dup(f->report, modern_type), line, action, false};
}

void wfc_file_activity_lost(wfc_file *f, const char *name)
{
    for (size_t i = f->act_count; i-- > 0;)
        if (f->acts[i].name && strcmp(f->acts[i].name, name) == 0) {
            f->acts[i].lost = true;
            return;
        }
}

void wfc_file_add_diag_in(wfc_file *f, const char *file, wfc_severity sev, unsigned line,
                          unsigned col, const char *rule, const char *message)
{
    if (!grow(f->report, (void **)&f->diags, &f->diag_cap, f->diag_count, sizeof *f->diags))
        return;
    bool other = file && *file && strcmp(file, f->source) != 0;
    f->diags[f->diag_count++] = (rep_diag){sev,
                                           line,
                                           col,
                                           dup(f->report, rule),
                                           dup(f->report, message),
                                           other ? dup(f->report, file) : NULL};
}

void wfc_file_add_diag(wfc_file *f, wfc_severity sev, unsigned line, unsigned col, const char *rule,
                       const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wfc_file_add_diag_in(f, NULL, sev, line, col, rule, msg);
}

void wfc_file_add_loss(wfc_file *f, wfc_loss_kind kind, unsigned line, const char *what)
{
    if (!grow(f->report, (void **)&f->losses, &f->loss_cap, f->loss_count, sizeof *f->losses))
        return;
    f->losses[f->loss_count++] = (rep_loss){kind, line, dup(f->report, what)};
}

void wfc_file_set_graphs(wfc_file *f, const char *legacy_dot, const char *modern_dot)
{
    wf_free(f->legacy_dot);
    wf_free(f->modern_dot);
    f->legacy_dot = dup(f->report, legacy_dot);
    f->modern_dot = dup(f->report, modern_dot);
}

const char *wfc_file_graph(const wfc_file *f, bool modern)
{
    return modern ? f->modern_dot : f->legacy_dot;
}

void wfc_file_clear(wfc_file *f)
{
    file_clear(f);
}

size_t wfc_file_diag_count(const wfc_file *f)
{
    return f->diag_count;
}

bool wfc_file_diag(const wfc_file *f, size_t i, wfc_severity *sev, const char **rule,
                   unsigned *line, unsigned *col, const char **message)
{
    if (i >= f->diag_count)
        return false;
    const rep_diag *d = &f->diags[i];
    *sev = d->sev;
    *rule = d->rule;
    *line = d->line;
    *col = d->col;
    *message = d->message;
    return true;
}

const char *wfc_file_diag_file(const wfc_file *f, size_t i)
{
    return i < f->diag_count && f->diags[i].file ? f->diags[i].file : f->source;
}

size_t wfc_file_activity_count(const wfc_file *f)
{
    return f->act_count;
}

bool wfc_file_activity(const wfc_file *f, size_t i, const char **name, const char **modern_type,
                       wfc_action *action)
{
    if (i >= f->act_count)
        return false;
    *name = f->acts[i].name;
    *modern_type = f->acts[i].modern_type;
    *action = f->acts[i].action;
    return true;
}

size_t wfc_file_error_count(const wfc_file *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->diag_count; i++)
        n += f->diags[i].sev == WFC_ERROR;
    return n;
}

bool wfc_file_lost_more_than_designer(const wfc_file *f)
{
    for (size_t i = 0; i < f->loss_count; i++)
        if (f->losses[i].kind != WFC_LOSS_DESIGNER)
            return true;
    return false;
}

const char *wfc_status_name(wfc_status s)
{
    static const char *const names[] = {"converted", "partial", "failed"};
    assert((size_t)s < sizeof names / sizeof *names); /* one name per enum value */
    return names[s];
}

const char *wfc_action_name(wfc_action a)
{
    static const char *const names[] = {"mapped", "invoke", "interop", "dropped-designer-only"};
    assert((size_t)a < sizeof names / sizeof *names); /* one name per enum value */
    return names[a];
}

const char *wfc_severity_name(wfc_severity s)
{
    static const char *const names[] = {"error", "warning", "review", "info"};
    assert((size_t)s < sizeof names / sizeof *names); /* one name per enum value */
    return names[s];
}

static const char *loss_name(wfc_loss_kind k)
{
    static const char *const names[] = {"designer-only", "semantics", "code"};
    assert((size_t)k < sizeof names / sizeof *names); /* one name per enum value */
    return names[k];
}

static json_t *activity_json(const rep_activity *a)
{
    json_t *o = json_pack("{s:o, s:o, s:o, s:I, s:s}", "name", wf_jsonw_str(a->name),
                          "legacyType", wf_jsonw_str(a->legacy_type), "modernType",
                          wf_jsonw_str(a->modern_type), "line", (json_int_t)a->line, "action",
                          wfc_action_name(a->action));
    if (o && a->lost && json_object_set_new(o, "behaviourLost", json_true()) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *diag_json(const rep_diag *d)
{
    json_t *o = json_pack("{s:s}", "severity", wfc_severity_name(d->sev));
    bool ok = o != NULL;
    if (ok && d->file)
        ok = wf_jsonw_set(o, "file", wf_jsonw_str(d->file));
    ok = ok && wf_jsonw_set(o, "line", json_integer(d->line)) &&
         wf_jsonw_set(o, "col", json_integer(d->col)) &&
         wf_jsonw_set(o, "message", wf_jsonw_str(d->message)) &&
         wf_jsonw_set(o, "rule", wf_jsonw_str(d->rule));
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

static json_t *loss_json(const rep_loss *l)
{
    return json_pack("{s:s, s:I, s:o}", "kind", loss_name(l->kind), "line", (json_int_t)l->line,
                     "what", wf_jsonw_str(l->what));
}

static json_t *file_json(const wfc_file *f)
{
    json_t *acts = json_array(), *diags = json_array(), *losses = json_array();
    bool ok = acts && diags && losses;
    for (size_t i = 0; ok && i < f->act_count; i++)
        ok = wf_jsonw_append(acts, activity_json(&f->acts[i]));
    for (size_t i = 0; ok && i < f->diag_count; i++)
        ok = wf_jsonw_append(diags, diag_json(&f->diags[i]));
    for (size_t i = 0; ok && i < f->loss_count; i++)
        ok = wf_jsonw_append(losses, loss_json(&f->losses[i]));
    json_t *o = ok ? json_pack("{s:o, s:o, s:s, s:O, s:O, s:O}", "source", wf_jsonw_str(f->source),
                               "output", wf_jsonw_str(f->output), "status",
                               wfc_status_name(f->status), "activities", acts, "diagnostics",
                               diags, "losses", losses)
                   : NULL;
    json_decref(acts);
    json_decref(diags);
    json_decref(losses);
    return o;
}

/* The project's totals, the migration's work list in numbers: files by status, and the
 * scaffold's functions to write and guessed types (counted as its entries were added). */
typedef struct totals {
    size_t status[3], functions_to_write, guessed_types;
} totals;

static totals count_totals(const wfc_report *r)
{
    totals t = {{0}, 0, 0};
    for (size_t i = 0; i < r->count; i++) {
        const wfc_file *f = r->files[i];
        t.status[f->status]++;
        t.functions_to_write += f->functions_to_write;
        t.guessed_types += f->guessed_types;
    }
    return t;
}

void wfc_file_add_scaffold(wfc_file *f, const char *kind, unsigned line, unsigned col,
                           const char *text)
{
    bool conflict = strcmp(kind, "conflict") == 0;
    f->functions_to_write += strcmp(kind, "function") == 0;
    f->guessed_types += strcmp(kind, "guessed") == 0;
    wfc_file_add_diag(f, conflict ? WFC_WARNING : WFC_INFO, line, col, "scaffold", "%s: %s", kind,
                      text);
}

void wfc_report_scaffold_totals(const wfc_report *r, size_t *functions_to_write,
                                size_t *guessed_types)
{
    totals t = count_totals(r);
    *functions_to_write = t.functions_to_write;
    *guessed_types = t.guessed_types;
}

/* The "s" of a count's noun: "1 file", "2 files". */
static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

/* The totals as the sentence the Markdown and HTML summaries open with. */
static void totals_sentence(const wfc_report *r, char *text, size_t size)
{
    totals t = count_totals(r);
    snprintf(text, size,
             "%zu file%s: %zu converted, %zu partial, %zu failed; %zu function%s to write, %zu "
             "guessed type%s.",
             r->count, plural(r->count), t.status[WFC_CONVERTED], t.status[WFC_PARTIAL],
             t.status[WFC_FAILED], t.functions_to_write, plural(t.functions_to_write), t.guessed_types,
             plural(t.guessed_types));
}

wf_status wfc_report_json(const wfc_report *r, wf_buf *out, wf_error *err)
{
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    totals t = count_totals(r);
    json_t *files = json_array();
    bool ok = files != NULL;
    for (size_t i = 0; ok && i < r->count; i++)
        ok = wf_jsonw_append(files, file_json(r->files[i]));
    json_t *root =
        ok ? json_pack("{s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:O}", "totals", "files",
                       (json_int_t)r->count, "converted", (json_int_t)t.status[WFC_CONVERTED],
                       "partial", (json_int_t)t.status[WFC_PARTIAL], "failed",
                       (json_int_t)t.status[WFC_FAILED], "functionsToWrite",
                       (json_int_t)t.functions_to_write, "guessedTypes", (json_int_t)t.guessed_types,
                       "files", files)
           : NULL;
    /* one line per activity, diagnostic and loss; the rest indented */
    ok = root && wf_jsonw_dump(root, WF_JSONW_INDENT_TO(4), out) && wf_buf_addc(out, '\n');
    json_decref(files);
    json_decref(root);
    if (!ok)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return WF_OK;
}

/* ---- CSV and Markdown ------------------------------------------------------------------------ */
/* A CSV cell. A cell a spreadsheet would read as a formula (starting with =, +, -, @, a tab or
 * a carriage return: CSV injection) gets a leading ' and quotes, so it shows as text. */
static void csv_field(wf_buf *b, const char *s)
{
    s = s ? s : "";
    bool formula = *s && strchr("=+-@\t\r", *s);
    if (!formula && !strpbrk(s, ",\"\r\n")) {
        wf_buf_adds(b, s);
        return;
    }
    wf_buf_addc(b, '"');
    if (formula)
        wf_buf_addc(b, '\'');
    for (; *s; s++) {
        if (*s == '"')
            wf_buf_addc(b, '"');
        wf_buf_addc(b, *s);
    }
    wf_buf_addc(b, '"');
}

/* One CSV row: the fields in header order, numbers as text. */
static void csv_row(wf_buf *b, const char *const *fields, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (i)
            wf_buf_addc(b, ',');
        csv_field(b, fields[i]);
    }
    wf_buf_adds(b, "\r\n");
}

static void file_csv(const wfc_file *f, wf_buf *b)
{
    const char *st = wfc_status_name(f->status);
    char line[16], col[16];
    for (size_t i = 0; i < f->act_count; i++) {
        const rep_activity *a = &f->acts[i];
        snprintf(line, sizeof line, "%u", a->line);
        const char *row[] = {f->source,
                             st,
                             "activity",
                             a->name,
                             a->legacy_type,
                             a->modern_type,
                             wfc_action_name(a->action),
                             "",
                             "",
                             line,
                             "",
                             ""};
        csv_row(b, row, 12);
    }
    for (size_t i = 0; i < f->diag_count; i++) {
        const rep_diag *d = &f->diags[i];
        snprintf(line, sizeof line, "%u", d->line);
        snprintf(col, sizeof col, "%u", d->col);
        const char *row[] = {
            d->file ? d->file : f->source, st,      "diagnostic", "",  "",        "", "",
            wfc_severity_name(d->sev),     d->rule, line,         col, d->message};
        csv_row(b, row, 12);
    }
    for (size_t i = 0; i < f->loss_count; i++) {
        const rep_loss *l = &f->losses[i];
        snprintf(line, sizeof line, "%u", l->line);
        const char *row[] = {f->source,          st,   "loss", "",     "", "", "", "",
                             loss_name(l->kind), line, "",     l->what};
        csv_row(b, row, 12);
    }
}

wf_status wfc_report_csv(const wfc_report *r, wf_buf *out, wf_error *err)
{
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wf_buf_adds(out, "source,status,kind,name,legacyType,modernType,action,severity,rule,line,"
                     "col,message\r\n");
    for (size_t i = 0; i < r->count; i++)
        file_csv(r->files[i], out);
    return out->oom ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory") : WF_OK;
}

/* Text from the input in Markdown: HTML's <, > and & as entities (no raw <script>), the
 * punctuation that formats or links backslash-escaped ('|' would end a table cell), line
 * breaks as spaces. */
static void md_text(wf_buf *b, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<')
            wf_buf_adds(b, "&lt;");
        else if (*s == '>')
            wf_buf_adds(b, "&gt;");
        else if (*s == '&')
            wf_buf_adds(b, "&amp;");
        else if (strchr("\\`*_[]|~#!", *s))
            wf_buf_addc(b, '\\'), wf_buf_addc(b, *s);
        else
            wf_buf_addc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
    }
}

/* One Markdown table cell. */
static void md_cell(wf_buf *b, const char *s)
{
    wf_buf_adds(b, " ");
    md_text(b, s);
    wf_buf_adds(b, " |");
}

static void file_markdown(const wfc_file *f, wf_buf *b)
{
    wf_buf_adds(b, "\n## ");
    md_text(b, f->source);
    wf_buf_addf(b, "\n\nStatus: **%s**", wfc_status_name(f->status));
    if (f->output) {
        wf_buf_adds(b, ", written to ");
        md_text(b, f->output);
    }
    wf_buf_adds(b, "\n\n| Activity | Legacy type | Modern type | Action | Line |\n"
                   "|---|---|---|---|---|\n");
    for (size_t i = 0; i < f->act_count; i++) {
        const rep_activity *a = &f->acts[i];
        wf_buf_adds(b, "|");
        md_cell(b, a->name);
        md_cell(b, a->legacy_type);
        md_cell(b, a->modern_type);
        md_cell(b, wfc_action_name(a->action));
        wf_buf_addf(b, " %u |\n", a->line);
    }
    if (f->diag_count) {
        wf_buf_adds(b, "\n| Severity | Rule | Line:Col | Message |\n|---|---|---|---|\n");
        for (size_t i = 0; i < f->diag_count; i++) {
            const rep_diag *d = &f->diags[i];
            wf_buf_adds(b, "|");
            md_cell(b, wfc_severity_name(d->sev));
            md_cell(b, d->rule);
            if (d->line)
                wf_buf_addf(b, " %u:%u |", d->line, d->col);
            else
                wf_buf_adds(b, " (file) |");
            md_cell(b, d->message);
            wf_buf_adds(b, "\n");
        }
    }
}

/* ---- HTML
 * ----------------------------------------------------------------------------------------
 * Written through common/wf_xmlw.h (libxml2's xmlTextWriter): text and attribute values are
 * escaped by it, every element is closed by it (html mode: "<td></td>", never "<td/>", which
 * HTML would read as an open tag). Only the constant style sheet and the SVG pictures go in
 * raw. */
typedef wf_xmlw html; /* the page helpers are common/wf_xmlw.h's html_* */

static const char html_style[] =
    WF_XMLW_REPORT_STYLE
    "#summary td:first-child{word-break:break-all}\n"
    ".converted{color:#1a7f37}.partial{color:#9a6700}.failed{color:#cf222e}\n"
    ".mapped{background:#dafbe1}.invoke{background:#ddf4ff}.interop{background:#fff1c2}\n"
    ".dropped-designer-only{background:#eee}.lost{background:#ffebe9}\n"
    ".error{color:#cf222e}.warning,.review{color:#9a6700}.info{color:#555}\n"
    "#legend span{padding:.1em .5em;margin-right:.5em;border:1px solid #bbb}\n"
    ".pictures{display:flex;gap:2em;align-items:flex-start}\n"
    ".pictures div{flex:1;min-width:0;overflow:auto}\n"
    "svg{max-width:100%;height:auto}\n";

/* The numbers of one file the HTML and Markdown summaries show, in the same columns. */
typedef struct summary_row {
    size_t acts, mapped, invoke, interop, covered, errors, warnings;
} summary_row;

static void summary_count(const wfc_file *f, summary_row *n)
{
    for (size_t k = 0; k < f->act_count; k++) {
        wfc_action a = f->acts[k].action;
        n->mapped += a == WFC_ACT_MAPPED;
        n->invoke += a == WFC_ACT_INVOKE;
        n->interop += a == WFC_ACT_INTEROP;
        n->covered += !f->acts[k].lost && (a == WFC_ACT_MAPPED || a == WFC_ACT_INVOKE);
    }
    n->acts += f->act_count;
    for (size_t k = 0; k < f->diag_count; k++) {
        n->errors += f->diags[k].sev == WFC_ERROR;
        n->warnings += f->diags[k].sev == WFC_WARNING || f->diags[k].sev == WFC_REVIEW;
    }
}

static unsigned summary_coverage(const summary_row *n)
{
    return n->acts ? (unsigned)(n->covered * 100 / n->acts) : 100;
}

/* The summary's header and the numeric cells of a row, in `fmt`'s cell syntax. */
static const char *const summary_columns[] = {"File",     "Status",   "Activities",
                                              "Mapped",   "Invoke",   "Interop",
                                              "Coverage", "Errors",   "Warnings"};
enum { SUMMARY_COLUMNS = sizeof summary_columns / sizeof summary_columns[0] };

static void summary_numbers(wf_buf *b, const summary_row *n, const char *open, const char *close)
{
    wf_buf_addf(b, "%s%zu%s%s%zu%s%s%zu%s%s%zu%s%s%u%%%s%s%zu%s%s%zu%s", open, n->acts, close, open,
                n->mapped, close, open, n->invoke, close, open, n->interop, close, open,
                summary_coverage(n), close, open, n->errors, close, open, n->warnings, close);
}

/* "N files: C converted, P partial, F failed" of the whole report. */
static void summary_total_status(const wfc_report *r, char *text, size_t size)
{
    size_t st[3] = {0};
    for (size_t i = 0; i < r->count; i++)
        st[r->files[i]->status]++;
    snprintf(text, size, "%zu converted, %zu partial, %zu failed", st[WFC_CONVERTED],
             st[WFC_PARTIAL], st[WFC_FAILED]);
}

/* The numeric cells of a summary row. */
static void html_numbers(html *h, const summary_row *n)
{
    size_t cells[] = {n->acts, n->mapped, n->invoke, n->interop};
    for (size_t i = 0; i < 4; i++) {
        wf_xmlw_html_open(h, "td", NULL);
        wf_xmlw_textf(h, "%zu", cells[i]);
        wf_xmlw_close(h);
    }
    wf_xmlw_html_open(h, "td", NULL);
    wf_xmlw_textf(h, "%u%%", summary_coverage(n));
    wf_xmlw_close(h);
    wf_xmlw_html_open(h, "td", NULL);
    wf_xmlw_textf(h, "%zu", n->errors);
    wf_xmlw_close(h);
    wf_xmlw_html_open(h, "td", NULL);
    wf_xmlw_textf(h, "%zu", n->warnings);
    wf_xmlw_close(h);
}

static void html_summary(const wfc_report *r, html *h)
{
    char line[256];
    totals_sentence(r, line, sizeof line);
    wf_xmlw_html_para(h, "p", "totals", line);
    wf_xmlw_html_table(h, "summary", summary_columns, SUMMARY_COLUMNS);
    summary_row total = {0};
    for (size_t i = 0; i < r->count; i++) {
        const wfc_file *f = r->files[i];
        summary_row n = {0};
        summary_count(f, &n);
        summary_count(f, &total);
        wf_xmlw_html_open(h, "tr", NULL);
        wf_xmlw_html_cell(h, "td", NULL, f->source);
        wf_xmlw_html_cell(h, "td", wfc_status_name(f->status), wfc_status_name(f->status));
        html_numbers(h, &n);
        wf_xmlw_html_close_line(h);
    }
    char status[128], files[64];
    summary_total_status(r, status, sizeof status);
    snprintf(files, sizeof files, "Total: %zu file%s", r->count, plural(r->count));
    wf_xmlw_html_open(h, "tr", "total");
    wf_xmlw_html_cell(h, "td", NULL, files);
    wf_xmlw_html_cell(h, "td", NULL, status);
    html_numbers(h, &total);
    wf_xmlw_html_close_line(h);
    wf_xmlw_close(h); /* table */
    wf_xmlw_text(h, "\n");
}

static void html_legend(html *h)
{
    static const char *const keys[][2] = {
        {"mapped", "mapped"},
        {"invoke", "invoke (native call)"},
        {"interop", "interop (hosted legacy)"},
        {"dropped-designer-only", "dropped (designer only)"},
        {"lost", "behaviour lost"},
    };
    wf_xmlw_open(h, "p");
    wf_xmlw_attr(h, "id", "legend");
    wf_xmlw_text(h, "Activities and picture boxes: ");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        wf_xmlw_html_cell(h, "span", keys[i][0], keys[i][1]);
    wf_xmlw_text(h, ". Coverage: activities mapped or invoked without lost behaviour, of all. A "
                 "state machine is drawn as its states and transitions (SetState), the initial "
                 "state bold.");
    wf_xmlw_close(h);
    wf_xmlw_text(h, "\n");
}

/* What to do about each rule (docs/convert.md "Rule ids"). */
static const struct remedy {
    const char *rule, *what_to_do;
} remedies[] = {
    {"interop", "Run the converted file with its directory on the library path "
                "(--lib-path OUTDIR:...); plan to rewrite the hosted part with modern activities."},
    {"property-ignored", "Write the behaviour into the converted workflow by hand, or host the "
                         "activity through Interop (--interop)."},
    {"delay-zero", "Remove the Delay, or give it a real duration if the idle point matters."},
    {"parallel-interleaving", "Check that the branches do not rely on WF3's step-by-step "
                              "interleaving; prove it with wfbridge verify."},
    {"state-no-setstate", "Add a SetState where the state must not be entered again (its "
                          "Entry runs again in WF4)."},
    {"legacy-warning", "Fix the legacy definition as the message says (WF3 itself refuses it)."},
    {"loop-variable-scope", "Check that the loop body does not expect fresh data per "
                            "iteration; move the variable into the body if it should."},
    {"compensate-target-scope", "Check that compensating every completed activity in scope is "
                                "what the workflow wants."},
    {"interop-suspend", "Replace the SuspendActivity, or accept a fault in its place."},
    {"fault-handler-unreachable", "Remove the shadowed FaultHandler or reorder the handlers."},
    {"ifelse-unreachable-branch", "Remove the unreachable branch or give the earlier one a "
                                  "condition."},
    {"legacy-load", "Fix the legacy file (or its type library, rules) at the place named."},
    {"modern-validation", "Report it: the converter wrote XAML its own loader refuses."},
    {"internal", "Report it: a converter invariant failed."},
};

static const char *remedy_for(const char *rule)
{
    for (size_t i = 0; i < sizeof remedies / sizeof remedies[0]; i++)
        if (strcmp(remedies[i].rule, rule) == 0)
            return remedies[i].what_to_do;
    return "See docs/convert.md, \"Rule ids\": the message says what is missing.";
}

/* One row per rule of an error, warning or review in the report, first seen first. */
static void html_remediation(const wfc_report *r, html *h)
{
    bool any = false;
    for (size_t i = 0; i < r->count; i++)
        for (size_t k = 0; k < r->files[i]->diag_count; k++) {
            const rep_diag *d = &r->files[i]->diags[k];
            bool first = d->sev != WFC_INFO;
            for (size_t pi = 0; first && pi <= i; pi++)
                for (size_t pk = 0; first && pk < (pi == i ? k : r->files[pi]->diag_count); pk++)
                    first = r->files[pi]->diags[pk].sev == WFC_INFO ||
                            strcmp(r->files[pi]->diags[pk].rule, d->rule) != 0;
            if (!first)
                continue;
            size_t count = 0;
            for (size_t qi = 0; qi < r->count; qi++)
                for (size_t qk = 0; qk < r->files[qi]->diag_count; qk++)
                    count += r->files[qi]->diags[qk].sev != WFC_INFO &&
                             strcmp(r->files[qi]->diags[qk].rule, d->rule) == 0;
            static const char *const heads[] = {"Rule", "Count", "What to do"};
            if (!any) {
                wf_xmlw_html_para(h, "h2", NULL, "What to do");
                wf_xmlw_html_table(h, "remediation", heads, 3);
            }
            any = true;
            wf_xmlw_html_open(h, "tr", NULL);
            wf_xmlw_html_cell(h, "td", wfc_severity_name(d->sev), d->rule);
            wf_xmlw_html_open(h, "td", NULL);
            wf_xmlw_textf(h, "%zu", count);
            wf_xmlw_close(h);
            wf_xmlw_html_cell(h, "td", NULL, remedy_for(d->rule));
            wf_xmlw_html_close_line(h);
        }
    if (any) {
        wf_xmlw_close(h); /* table */
        wf_xmlw_text(h, "\n");
    }
}

static void html_activities(const wfc_file *f, html *h)
{
    static const char *const heads[] = {"Activity", "Legacy type", "Modern type", "Action",
                                        "Line"};
    wf_xmlw_html_table(h, NULL, heads, 5);
    for (size_t i = 0; i < f->act_count; i++) {
        const rep_activity *a = &f->acts[i];
        wf_xmlw_html_open(h, "tr", a->lost ? "lost" : wfc_action_name(a->action));
        wf_xmlw_html_cell(h, "td", NULL, a->name);
        wf_xmlw_html_cell(h, "td", NULL, a->legacy_type);
        wf_xmlw_html_cell(h, "td", NULL, a->modern_type);
        wf_xmlw_html_cell(h, "td", NULL, wfc_action_name(a->action));
        wf_xmlw_html_open(h, "td", NULL);
        wf_xmlw_textf(h, "%u", a->line);
        wf_xmlw_close(h);
        wf_xmlw_html_close_line(h);
    }
    wf_xmlw_close(h); /* table */
    wf_xmlw_text(h, "\n");
}

static void html_diags(const wfc_file *f, html *h)
{
    static const char *const heads[] = {"Severity", "Rule", "Where", "Message"};
    if (!f->diag_count)
        return;
    wf_xmlw_html_table(h, NULL, heads, 4);
    for (size_t i = 0; i < f->diag_count; i++) {
        const rep_diag *d = &f->diags[i];
        wf_xmlw_html_open(h, "tr", NULL);
        wf_xmlw_html_cell(h, "td", wfc_severity_name(d->sev), wfc_severity_name(d->sev));
        wf_xmlw_html_cell(h, "td", NULL, d->rule);
        wf_xmlw_html_open(h, "td", NULL);
        wf_xmlw_text(h, d->file ? d->file : f->source);
        if (d->line)
            wf_xmlw_textf(h, ":%u:%u", d->line, d->col);
        wf_xmlw_close(h);
        wf_xmlw_html_cell(h, "td", NULL, d->message);
        wf_xmlw_html_close_line(h);
    }
    wf_xmlw_close(h); /* table */
    wf_xmlw_text(h, "\n");
}

/* The SVG from its <svg element on (no XML prolog inside HTML), every id="X" made
 * id="PREFIX-X" (and references to it), so the ids of all pictures of the page are unique. */
static void svg_with_unique_ids(wf_buf *b, const char *svg, const char *prefix)
{
    const char *p = strstr(svg, "<svg");
    for (p = p ? p : ""; *p;) {
        const char *id = strstr(p, " id=\"");
        const char *ref = strstr(p, "url(#");
        const char *hit = id && (!ref || id < ref) ? id : ref;
        if (!hit) {
            wf_buf_adds(b, p);
            break;
        }
        size_t skip = 5; /* strlen(" id=\"") == strlen("url(#") */
        wf_buf_add(b, p, (size_t)(hit - p) + skip);
        wf_buf_addf(b, "%s-", prefix);
        p = hit + skip;
    }
}

/* One picture; WF_E_LIMIT from the renderer: it was stopped (its time is up). */
static wf_status html_picture(const char *title, const char *id, const char *dot,
                              wfc_svg_fn render, void *ud, html *h, wf_error *err)
{
    wf_buf svg, unique;
    wf_buf_init(&svg);
    wf_buf_init(&unique);
    wf_status st = render(ud, dot, &svg, err);
    if (st == WF_OK) {
        wf_xmlw_html_open(h, "div", NULL);
        wf_xmlw_html_para(h, "h3", NULL, title);
        svg_with_unique_ids(&unique, svg.data, id);
        if (unique.oom)
            st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        wf_xmlw_raw(h, unique.data); /* dot's own SVG */
        wf_xmlw_close(h);
        wf_xmlw_text(h, "\n");
    }
    wf_buf_fini(&unique);
    wf_buf_fini(&svg);
    return st;
}

/* Why the pictures of the page stopped (0: they did not). */
enum { PICTURES_DRAWN, PICTURES_NO_DOT, PICTURES_OUT_OF_TIME };

static wf_status html_pictures(const wfc_file *f, size_t index, wfc_svg_fn render, void *ud,
                               int *stopped, html *h, wf_error *err)
{
    if (!f->legacy_dot || !f->modern_dot)
        return WF_OK;
    if (!render || *stopped) {
        *stopped = *stopped ? *stopped : PICTURES_NO_DOT;
        return WF_OK;
    }
    if (f->act_count > WFC_REPORT_PICTURE_MAX) {
        wf_xmlw_html_open(h, "p", "no-picture");
        wf_xmlw_textf(h, "Not drawn: %zu activities (pictures are drawn for files of up to %d).",
                   f->act_count, WFC_REPORT_PICTURE_MAX);
        wf_xmlw_close(h);
        wf_xmlw_text(h, "\n");
        return WF_OK;
    }
    char id[2][32];
    snprintf(id[0], sizeof id[0], "f%zu-legacy", index);
    snprintf(id[1], sizeof id[1], "f%zu-converted", index);
    wf_xmlw_html_open(h, "div", "pictures");
    wf_xmlw_text(h, "\n");
    wf_status st = html_picture("Legacy", id[0], f->legacy_dot, render, ud, h, err);
    if (st == WF_OK)
        st = html_picture("Converted", id[1], f->modern_dot, render, ud, h, err);
    wf_xmlw_close(h);
    wf_xmlw_text(h, "\n");
    if (st == WF_E_NOTFOUND || st == WF_E_LIMIT) {
        *stopped = st == WF_E_LIMIT ? PICTURES_OUT_OF_TIME : PICTURES_NO_DOT;
        wf_error_clear(err);
        return WF_OK;
    }
    return st;
}

/* The files' sections and the note on pictures not drawn. */
static wf_status html_files(const wfc_report *r, wfc_svg_fn render, void *ud, html *h,
                            wf_error *err)
{
    int stopped = PICTURES_DRAWN;
    wf_status st = WF_OK;
    for (size_t i = 0; i < r->count && st == WF_OK; i++) {
        const wfc_file *f = r->files[i];
        wf_xmlw_html_open(h, "h2", NULL);
        wf_xmlw_text(h, f->source);
        wf_xmlw_text(h, " ");
        wf_xmlw_html_cell(h, "span", wfc_status_name(f->status), wfc_status_name(f->status));
        wf_xmlw_close(h);
        wf_xmlw_text(h, "\n");
        html_activities(f, h);
        html_diags(f, h);
        st = html_pictures(f, i, render, ud, &stopped, h, err);
    }
    if (stopped == PICTURES_NO_DOT) {
        wf_xmlw_open(h, "p");
        wf_xmlw_attr(h, "id", "no-pictures");
        wf_xmlw_text(h, "The workflow pictures need Graphviz (");
        wf_xmlw_html_cell(h, "code", NULL, "dot");
        wf_xmlw_text(h, "); install it to see them.");
        wf_xmlw_close(h);
        wf_xmlw_text(h, "\n");
    } else if (stopped == PICTURES_OUT_OF_TIME) {
        wf_xmlw_html_para(h, "p", "no-pictures",
                  "Drawing stopped: the pictures took longer than the time allowed for them; "
                  "the files after that are not drawn.");
    }
    return st;
}

wf_status wfc_report_html(const wfc_report *r, wfc_svg_fn render, void *ud, wf_buf *out,
                          wf_error *err)
{
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wf_xmlw_opts o = WF_XMLW_OPTS_INIT;
    o.html = true;
    html *h = NULL;
    wf_status st = wf_xmlw_create(&o, &h, err);
    if (st != WF_OK)
        return st;
    wf_xmlw_html_begin(h, "Migration report", html_style);
    html_summary(r, h);
    html_legend(h);
    html_remediation(r, h);
    st = html_files(r, render, ud, h, err);
    wf_xmlw_html_end(h);
    if (st == WF_OK)
        st = wf_xmlw_finish(h, out, err);
    wf_xmlw_destroy(h);
    return st;
}

/* ---- Markdown's summary: the HTML summary's columns and totals ------------------------------ */
wf_status wfc_report_markdown(const wfc_report *r, wf_buf *out, wf_error *err)
{
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    char line[256];
    totals_sentence(r, line, sizeof line);
    wf_buf_addf(out, "# Migration report\n\n%s\n\n|", line);
    for (size_t i = 0; i < SUMMARY_COLUMNS; i++)
        wf_buf_addf(out, " %s |", summary_columns[i]);
    wf_buf_adds(out, "\n|");
    for (size_t i = 0; i < SUMMARY_COLUMNS; i++)
        wf_buf_adds(out, "---|");
    wf_buf_adds(out, "\n");
    summary_row total = {0};
    for (size_t i = 0; i < r->count; i++) {
        const wfc_file *f = r->files[i];
        summary_row n = {0};
        summary_count(f, &n);
        summary_count(f, &total);
        wf_buf_adds(out, "|");
        md_cell(out, f->source);
        md_cell(out, wfc_status_name(f->status));
        summary_numbers(out, &n, " ", " |");
        wf_buf_adds(out, "\n");
    }
    char status[128];
    summary_total_status(r, status, sizeof status);
    wf_buf_addf(out, "| **Total: %zu file%s** | %s |", r->count, plural(r->count), status);
    summary_numbers(out, &total, " ", " |");
    wf_buf_adds(out, "\n");
    for (size_t i = 0; i < r->count; i++)
        file_markdown(r->files[i], out);
    return out->oom ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory") : WF_OK;
}

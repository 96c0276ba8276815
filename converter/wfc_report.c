/* wfc_report.c — the migration report's entries and its JSON form (wfc_report.h). Entries
 * are kept in insertion order, so the same conversion renders the same bytes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../common/wf_xml.h"
#include "wfc_report.h"

typedef struct rep_activity {
    char *name, *legacy_type, *modern_type;
    unsigned line;
    wfc_action action;
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
                        dup(f->report, modern_type), line, action};
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
    return names[s];
}

const char *wfc_action_name(wfc_action a)
{
    static const char *const names[] = {"mapped", "invoke", "interop", "dropped-designer-only"};
    return names[a];
}

const char *wfc_severity_name(wfc_severity s)
{
    static const char *const names[] = {"error", "warning", "review", "info"};
    return names[s];
}

static const char *loss_name(wfc_loss_kind k)
{
    static const char *const names[] = {"designer-only", "semantics", "code"};
    return names[k];
}

static void json_str(wf_buf *b, const char *key, const char *value)
{
    wf_buf_addf(b, "\"%s\": ", key);
    if (value)
        wf_buf_add_json_string(b, value, strlen(value));
    else
        wf_buf_adds(b, "null");
}

static void file_json(const wfc_file *f, wf_buf *b)
{
    wf_buf_adds(b, "{");
    json_str(b, "source", f->source);
    wf_buf_adds(b, ", ");
    json_str(b, "output", f->output);
    wf_buf_adds(b, ", ");
    json_str(b, "status", wfc_status_name(f->status));
    wf_buf_adds(b, ",\n   \"activities\": [");
    for (size_t i = 0; i < f->act_count; i++) {
        const rep_activity *a = &f->acts[i];
        wf_buf_adds(b, i ? ",\n    {" : "\n    {");
        json_str(b, "name", a->name);
        wf_buf_adds(b, ", ");
        json_str(b, "legacyType", a->legacy_type);
        wf_buf_adds(b, ", ");
        json_str(b, "modernType", a->modern_type);
        wf_buf_addf(b, ", \"line\": %u, ", a->line);
        json_str(b, "action", wfc_action_name(a->action));
        wf_buf_adds(b, "}");
    }
    wf_buf_adds(b, "],\n   \"diagnostics\": [");
    for (size_t i = 0; i < f->diag_count; i++) {
        const rep_diag *d = &f->diags[i];
        wf_buf_adds(b, i ? ",\n    {" : "\n    {");
        json_str(b, "severity", wfc_severity_name(d->sev));
        if (d->file) {
            wf_buf_adds(b, ", ");
            json_str(b, "file", d->file);
        }
        wf_buf_addf(b, ", \"line\": %u, \"col\": %u, ", d->line, d->col);
        json_str(b, "message", d->message);
        wf_buf_adds(b, ", ");
        json_str(b, "rule", d->rule);
        wf_buf_adds(b, "}");
    }
    wf_buf_adds(b, "],\n   \"losses\": [");
    for (size_t i = 0; i < f->loss_count; i++) {
        const rep_loss *l = &f->losses[i];
        wf_buf_adds(b, i ? ",\n    {" : "\n    {");
        json_str(b, "kind", loss_name(l->kind));
        wf_buf_addf(b, ", \"line\": %u, ", l->line);
        json_str(b, "what", l->what);
        wf_buf_adds(b, "}");
    }
    wf_buf_adds(b, "]}");
}

/* The project's totals, the migration's work list in numbers: files by status, and the
 * scaffold's TODO functions and guessed types (its "todo:" / "guessed:" entries). */
typedef struct totals {
    size_t status[3], todo, guessed;
} totals;

static totals count_totals(const wfc_report *r)
{
    totals t = {{0}, 0, 0};
    for (size_t i = 0; i < r->count; i++) {
        const wfc_file *f = r->files[i];
        t.status[f->status]++;
        for (size_t k = 0; k < f->diag_count; k++) {
            const rep_diag *d = &f->diags[k];
            if (strcmp(d->rule, "scaffold") != 0)
                continue;
            t.todo += strncmp(d->message, "todo:", 5) == 0;
            t.guessed += strncmp(d->message, "guessed:", 8) == 0;
        }
    }
    return t;
}

void wfc_report_scaffold_totals(const wfc_report *r, size_t *todo, size_t *guessed)
{
    totals t = count_totals(r);
    *todo = t.todo;
    *guessed = t.guessed;
}

wf_status wfc_report_json(const wfc_report *r, wf_buf *out, wf_error *err)
{
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    totals t = count_totals(r);
    wf_buf_addf(out,
                "{\"totals\": {\"files\": %zu, \"converted\": %zu, \"partial\": %zu, "
                "\"failed\": %zu, \"todoFunctions\": %zu, \"guessedTypes\": %zu},\n",
                r->count, t.status[WFC_CONVERTED], t.status[WFC_PARTIAL], t.status[WFC_FAILED],
                t.todo, t.guessed);
    wf_buf_adds(out, " \"files\": [");
    for (size_t i = 0; i < r->count; i++) {
        wf_buf_adds(out, i ? ",\n  " : "\n  ");
        file_json(r->files[i], out);
    }
    wf_buf_adds(out, "]}\n");
    if (out->oom)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return WF_OK;
}

/* ---- CSV and Markdown ------------------------------------------------------------------------ */
static void csv_field(wf_buf *b, const char *s)
{
    s = s ? s : "";
    if (!strpbrk(s, ",\"\r\n")) {
        wf_buf_adds(b, s);
        return;
    }
    wf_buf_addc(b, '"');
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

/* Markdown table cells: '|' escaped, line breaks as spaces. */
static void md_cell(wf_buf *b, const char *s)
{
    wf_buf_adds(b, " ");
    for (; s && *s; s++) {
        if (*s == '|')
            wf_buf_adds(b, "\\|");
        else
            wf_buf_addc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
    }
    wf_buf_adds(b, " |");
}

static unsigned coverage_percent(const wfc_file *f)
{
    size_t done = 0;
    for (size_t i = 0; i < f->act_count; i++)
        done += f->acts[i].action == WFC_ACT_MAPPED || f->acts[i].action == WFC_ACT_INVOKE;
    return f->act_count ? (unsigned)(done * 100 / f->act_count) : 100;
}

static void file_markdown(const wfc_file *f, wf_buf *b)
{
    wf_buf_adds(b, "\n## ");
    wf_buf_adds(b, f->source);
    wf_buf_addf(b, "\n\nStatus: **%s**", wfc_status_name(f->status));
    if (f->output)
        wf_buf_addf(b, ", written to `%s`", f->output);
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

wf_status wfc_report_markdown(const wfc_report *r, wf_buf *out, wf_error *err)
{
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    totals t = count_totals(r);
    wf_buf_addf(out,
                "# Migration report\n\n%zu files: %zu converted, %zu partial, %zu failed; "
                "%zu TODO functions, %zu guessed types.\n\n",
                r->count, t.status[WFC_CONVERTED], t.status[WFC_PARTIAL], t.status[WFC_FAILED],
                t.todo, t.guessed);
    wf_buf_adds(out, "| File | Status | Activities | Coverage | Errors |\n"
                     "|---|---|---|---|---|\n");
    for (size_t i = 0; i < r->count; i++) {
        const wfc_file *f = r->files[i];
        wf_buf_adds(out, "|");
        md_cell(out, f->source);
        md_cell(out, wfc_status_name(f->status));
        wf_buf_addf(out, " %zu | %u%% | %zu |\n", f->act_count, coverage_percent(f),
                    wfc_file_error_count(f));
    }
    for (size_t i = 0; i < r->count; i++)
        file_markdown(r->files[i], out);
    return out->oom ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory") : WF_OK;
}

/* ---- HTML
 * ---------------------------------------------------------------------------------------- */
static void html_text(wf_buf *b, const char *s)
{
    (void)wf_xml_escape(b, s ? s : "", true); /* out of memory shows as b->oom */
}

static void html_cell(wf_buf *b, const char *tag, const char *cls, const char *text)
{
    wf_buf_addf(b, "<%s%s%s%s>", tag, cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
    html_text(b, text);
    wf_buf_addf(b, "</%s>", tag);
}

static const char html_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<title>Migration report</title>\n<style>\n"
    "body{font-family:sans-serif;margin:2em;color:#222}\n"
    "table{border-collapse:collapse;margin:1em 0}\n"
    "td,th{border:1px solid #bbb;padding:.2em .6em;text-align:left}\n"
    ".converted{color:#1a7f37}.partial{color:#9a6700}.failed{color:#cf222e}\n"
    ".mapped{background:#dafbe1}.invoke{background:#ddf4ff}.interop{background:#fff1c2}\n"
    ".dropped-designer-only{background:#eee}\n"
    ".error{color:#cf222e}.warning,.review{color:#9a6700}.info{color:#555}\n"
    ".pictures{display:flex;gap:2em;align-items:flex-start}.pictures div{flex:1}\n"
    "</style>\n</head>\n<body>\n<h1>Migration report</h1>\n";

static void html_summary(const wfc_report *r, wf_buf *b)
{
    totals t = count_totals(r);
    wf_buf_addf(b,
                "<p id=\"totals\">%zu files: %zu converted, %zu partial, %zu failed; %zu TODO "
                "functions, %zu guessed types.</p>\n",
                r->count, t.status[WFC_CONVERTED], t.status[WFC_PARTIAL], t.status[WFC_FAILED],
                t.todo, t.guessed);
    wf_buf_adds(b, "<table id=\"summary\">\n<tr><th>File</th><th>Status</th><th>Activities</th>"
                   "<th>Mapped</th><th>Invoke</th><th>Interop</th><th>Coverage</th></tr>\n");
    for (size_t i = 0; i < r->count; i++) {
        const wfc_file *f = r->files[i];
        size_t n[4] = {0};
        for (size_t k = 0; k < f->act_count; k++)
            n[f->acts[k].action]++;
        wf_buf_adds(b, "<tr>");
        html_cell(b, "td", NULL, f->source);
        html_cell(b, "td", wfc_status_name(f->status), wfc_status_name(f->status));
        wf_buf_addf(b, "<td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%u%%</td></tr>\n",
                    f->act_count, n[WFC_ACT_MAPPED], n[WFC_ACT_INVOKE], n[WFC_ACT_INTEROP],
                    coverage_percent(f));
    }
    wf_buf_adds(b, "</table>\n");
}

static void html_activities(const wfc_file *f, wf_buf *b)
{
    wf_buf_adds(b, "<table>\n<tr><th>Activity</th><th>Legacy type</th><th>Modern type</th>"
                   "<th>Action</th><th>Line</th></tr>\n");
    for (size_t i = 0; i < f->act_count; i++) {
        const rep_activity *a = &f->acts[i];
        wf_buf_addf(b, "<tr class=\"%s\">", wfc_action_name(a->action));
        html_cell(b, "td", NULL, a->name);
        html_cell(b, "td", NULL, a->legacy_type);
        html_cell(b, "td", NULL, a->modern_type);
        html_cell(b, "td", NULL, wfc_action_name(a->action));
        wf_buf_addf(b, "<td>%u</td></tr>\n", a->line);
    }
    wf_buf_adds(b, "</table>\n");
}

static void html_diags(const wfc_file *f, wf_buf *b)
{
    if (!f->diag_count)
        return;
    wf_buf_adds(b, "<table>\n<tr><th>Severity</th><th>Rule</th><th>Where</th><th>Message</th>"
                   "</tr>\n");
    for (size_t i = 0; i < f->diag_count; i++) {
        const rep_diag *d = &f->diags[i];
        wf_buf_adds(b, "<tr>");
        html_cell(b, "td", wfc_severity_name(d->sev), wfc_severity_name(d->sev));
        html_cell(b, "td", NULL, d->rule);
        if (d->line)
            wf_buf_addf(b, "<td>%u:%u</td>", d->line, d->col);
        else
            wf_buf_adds(b, "<td>(file)</td>");
        html_cell(b, "td", NULL, d->message);
        wf_buf_adds(b, "</tr>\n");
    }
    wf_buf_adds(b, "</table>\n");
}

/* One picture: the renderer's SVG from its <svg element on (no XML prolog inside HTML). */
static wf_status html_picture(const char *title, const char *dot, wfc_svg_fn render, void *ud,
                              wf_buf *b, wf_error *err)
{
    wf_buf svg;
    wf_buf_init(&svg);
    wf_status st = render(ud, dot, &svg, err);
    if (st == WF_OK) {
        const char *start = strstr(svg.data, "<svg");
        wf_buf_addf(b, "<div><h3>%s</h3>\n%s</div>\n", title, start ? start : "");
    }
    wf_buf_fini(&svg);
    return st;
}

static wf_status html_pictures(const wfc_file *f, wfc_svg_fn render, void *ud, bool *missing,
                               wf_buf *b, wf_error *err)
{
    if (!f->legacy_dot || !f->modern_dot)
        return WF_OK;
    if (!render || *missing) {
        *missing = true;
        return WF_OK;
    }
    wf_buf_adds(b, "<div class=\"pictures\">\n");
    wf_status st = html_picture("Legacy", f->legacy_dot, render, ud, b, err);
    if (st == WF_OK)
        st = html_picture("Converted", f->modern_dot, render, ud, b, err);
    wf_buf_adds(b, "</div>\n");
    if (st == WF_E_NOTFOUND) {
        *missing = true;
        wf_error_clear(err);
        return WF_OK;
    }
    return st;
}

wf_status wfc_report_html(const wfc_report *r, wfc_svg_fn render, void *ud, wf_buf *out,
                          wf_error *err)
{
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wf_buf_adds(out, html_head);
    html_summary(r, out);
    bool missing = false;
    wf_status st = WF_OK;
    for (size_t i = 0; i < r->count && st == WF_OK; i++) {
        const wfc_file *f = r->files[i];
        wf_buf_adds(out, "<h2>");
        html_text(out, f->source);
        wf_buf_addf(out, " <span class=\"%s\">%s</span></h2>\n", wfc_status_name(f->status),
                    wfc_status_name(f->status));
        html_activities(f, out);
        html_diags(f, out);
        st = html_pictures(f, render, ud, &missing, out, err);
    }
    if (missing)
        wf_buf_adds(out, "<p id=\"no-pictures\">The workflow pictures need Graphviz "
                         "(<code>dot</code>); install it to see them.</p>\n");
    wf_buf_adds(out, "</body>\n</html>\n");
    if (st == WF_OK && out->oom)
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return st;
}

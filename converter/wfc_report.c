/* wfc_report.c — the migration report's entries and its JSON form (wfc_report.h). Entries
 * are kept in insertion order, so the same conversion renders the same bytes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
    f->diags[f->diag_count++] = (rep_diag){sev, line, col, dup(f->report, rule),
                                           dup(f->report, message),
                                           other ? dup(f->report, file) : NULL};
}

void wfc_file_add_diag(wfc_file *f, wfc_severity sev, unsigned line, unsigned col,
                       const char *rule, const char *fmt, ...)
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

wf_status wfc_report_json(const wfc_report *r, wf_buf *out, wf_error *err)
{
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wf_buf_adds(out, "{\"files\": [");
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
        const char *row[] = {f->source, st, "activity", a->name, a->legacy_type, a->modern_type,
                             wfc_action_name(a->action), "", "", line, "", ""};
        csv_row(b, row, 12);
    }
    for (size_t i = 0; i < f->diag_count; i++) {
        const rep_diag *d = &f->diags[i];
        snprintf(line, sizeof line, "%u", d->line);
        snprintf(col, sizeof col, "%u", d->col);
        const char *row[] = {d->file ? d->file : f->source, st, "diagnostic", "", "", "", "",
                             wfc_severity_name(d->sev), d->rule, line, col, d->message};
        csv_row(b, row, 12);
    }
    for (size_t i = 0; i < f->loss_count; i++) {
        const rep_loss *l = &f->losses[i];
        snprintf(line, sizeof line, "%u", l->line);
        const char *row[] = {f->source, st, "loss", "", "", "", "", "", loss_name(l->kind), line,
                             "", l->what};
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
            wf_buf_addf(b, " %u:%u |", d->line, d->col);
            md_cell(b, d->message);
            wf_buf_adds(b, "\n");
        }
    }
}

wf_status wfc_report_markdown(const wfc_report *r, wf_buf *out, wf_error *err)
{
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wf_buf_adds(out, "# Migration report\n\n| File | Status | Activities | Coverage | Errors |\n"
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

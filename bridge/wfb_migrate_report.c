/* wfb_migrate_report.c — the report of `wfbridge migrate-instances` (docs/migrate.md
 * "Report"): the JSON object printed last with --json, and the Markdown or HTML file of
 * --report, both listing each instance with its legacy position, what it became and why. */
#include "wfb_migrate_int.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/wf_jsonw.h"
#include "../common/wf_xmlw.h"
#include "wfb_migrate_report.h"

/* The word each verdict has in a report. */
static const char *word(const mig_plan *p, const mig_report_opts *o)
{
    switch (p->verdict) {
    case MIG_MOVABLE:
        return o->rollback ? "rolled-back" : o->dry_run ? "movable" : "migrated";
    case MIG_INTEROP: return o->dry_run ? "movable-interop" : "interop";
    case MIG_NOT_MOVABLE: return o->dry_run ? "not-movable" : "skipped";
    case MIG_DONE: return "already-migrated";
    case MIG_FAILED: return "failed";
    }
    return "failed";
}

void mig_count(const mig_plan *plans, size_t count, const mig_report_opts *o, size_t n[5])
{
    memset(n, 0, 5 * sizeof *n);
    for (size_t i = 0; i < count; i++) {
        mig_verdict v = plans[i].verdict;
        if (o->rollback && v == MIG_NOT_MOVABLE)
            continue; /* rows that were never migrated */
        n[v]++;
    }
}

static void iso_time(int64_t us, char *buf, size_t size)
{
    time_t s = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t k = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + k, size > k ? size - k : 0, ".%06lldZ", (long long)(us % 1000000));
}

static json_t *json_names(const mig_names *n)
{
    json_t *arr = json_array();
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < n->n; i++)
        ok = wf_jsonw_append(arr, wf_jsonw_str(n->v[i]));
    if (!ok)
        json_decref(arr);
    return ok ? arr : NULL;
}

static json_t *json_timers(const mig_plan *p)
{
    json_t *arr = json_array();
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < p->timer_count; i++) {
        char t[40];
        iso_time(p->timers[i], t, sizeof t);
        ok = wf_jsonw_append(arr, json_string(t));
    }
    if (!ok)
        json_decref(arr);
    return ok ? arr : NULL;
}

static json_t *json_plan(const mig_plan *p, const mig_report_opts *o)
{
    json_t *obj = json_pack("{s:o, s:s, s:o}", "id", wf_jsonw_str(p->id), "status", word(p, o),
                            "legacyStatus", wf_jsonw_str(p->status));
    bool ok = obj != NULL;
    if (ok && p->map)
        ok = wf_jsonw_set(obj, "definition", wf_jsonw_str(p->map->xaml));
    if (ok && p->reason[0])
        ok = wf_jsonw_set(obj, "reason", wf_jsonw_str(p->reason));
    ok = ok && wf_jsonw_set(obj, "waitingOn", json_names(&p->queues)) &&
         wf_jsonw_set(obj, "timers", json_timers(p)) &&
         wf_jsonw_set(obj, "executing", json_names(&p->executing));
    if (ok && (p->verdict == MIG_MOVABLE || p->verdict == MIG_INTEROP))
        ok = wf_jsonw_set(obj, "bookmarks", json_names(&p->bookmarks)) &&
             wf_jsonw_set(obj, "replay", json_names(&p->steps)) &&
             wf_jsonw_set(obj, "valuesCarried", json_integer((json_int_t)p->values_carried));
    if (!ok)
        json_decref(obj);
    return ok ? obj : NULL;
}

void mig_report_json(FILE *out, const mig_plan *plans, size_t count, const mig_report_opts *o)
{
    size_t n[5];
    mig_count(plans, count, o, n);
    json_t *list = json_array();
    bool ok = list != NULL;
    for (size_t i = 0; ok && i < count; i++)
        if (!o->rollback || plans[i].verdict != MIG_NOT_MOVABLE)
            ok = wf_jsonw_append(list, json_plan(&plans[i], o));
    json_t *root = !ok ? NULL
                   : o->rollback
                       ? json_pack("{s:I, s:I, s:O}", "rolledBack", (json_int_t)n[MIG_MOVABLE],
                                   "failed", (json_int_t)n[MIG_FAILED], "instances", list)
                       : json_pack("{s:I, s:I, s:I, s:I, s:I, s:b, s:O}", "migrated",
                                   (json_int_t)n[MIG_MOVABLE], "interop",
                                   (json_int_t)n[MIG_INTEROP], "skipped",
                                   (json_int_t)n[MIG_NOT_MOVABLE], "failed",
                                   (json_int_t)n[MIG_FAILED], "alreadyMigrated",
                                   (json_int_t)n[MIG_DONE], "dryRun", o->dry_run, "instances",
                                   list);
    if (root)
        wf_jsonw_print(out, root, WF_JSONW_SPACED);
    json_decref(root);
    json_decref(list);
}

/* ---- Markdown / HTML ---------------------------------------------------------------------- */
enum { COLUMNS = 6 };

static const char *const heads[COLUMNS] = {"instance",         "status",         "legacy position",
                                           "modern bookmarks", "values carried", "reason"};

static void names_text(wf_buf *b, const mig_names *n)
{
    for (size_t i = 0; i < n->n; i++)
        wf_buf_addf(b, "%s%s", i ? ", " : "", n->v[i]);
}

/* The cells of one instance's row, as plain text (each format escapes them its own way). */
static void row_cells(const mig_plan *p, const mig_report_opts *o, wf_buf cells[COLUMNS])
{
    wf_buf_adds(&cells[0], p->id);
    wf_buf_adds(&cells[1], word(p, o));
    names_text(&cells[2], &p->queues);
    if (p->timer_count) {
        char t[40];
        iso_time(p->timers[0], t, sizeof t);
        wf_buf_addf(&cells[2], "%stimer %s", p->queues.n ? "; " : "", t);
    }
    names_text(&cells[3], &p->bookmarks);
    wf_buf_addf(&cells[4], "%zu", p->values_carried);
    wf_buf_adds(&cells[5], p->reason);
}

static void md_cell(wf_buf *b, const char *s)
{
    wf_buf_adds(b, " ");
    for (; *s; s++) {
        if (*s == '|')
            wf_buf_adds(b, "\\|");
        else
            wf_buf_addc(b, *s);
    }
    wf_buf_adds(b, " |");
}

static void md_row(wf_buf *b, const mig_plan *p, const mig_report_opts *o)
{
    wf_buf cells[COLUMNS];
    wf_buf_adds(b, "|");
    for (size_t i = 0; i < COLUMNS; i++)
        wf_buf_init(&cells[i]);
    row_cells(p, o, cells);
    for (size_t i = 0; i < COLUMNS; i++) {
        b->oom |= cells[i].oom;
        md_cell(b, cells[i].data);
        wf_buf_fini(&cells[i]);
    }
    wf_buf_adds(b, "\n");
}

static void html_row(wf_xmlw *x, const mig_plan *p, const mig_report_opts *o, bool *oom)
{
    wf_buf cells[COLUMNS];
    wf_xmlw_html_open(x, "tr", NULL);
    for (size_t i = 0; i < COLUMNS; i++)
        wf_buf_init(&cells[i]);
    row_cells(p, o, cells);
    for (size_t i = 0; i < COLUMNS; i++) {
        *oom |= cells[i].oom;
        wf_xmlw_html_cell(x, "td", i == 1 ? word(p, o) : NULL, cells[i].data);
        wf_buf_fini(&cells[i]);
    }
    wf_xmlw_html_close_line(x);
}

static const char title[] = "Instance migration";

/* The common report sheet, each verdict's word a class of its status cell. */
static const char html_style[] =
    WF_XMLW_REPORT_STYLE
    ".migrated,.movable,.rolled-back,.already-migrated{color:#1a7f37}\n"
    ".interop,.movable-interop{color:#0969da}\n"
    ".skipped,.not-movable{color:#9a6700}.failed{color:#cf222e}\n";

static void markdown(wf_buf *b, const char *counts, const mig_plan *plans, size_t count,
                     const mig_report_opts *o)
{
    wf_buf_addf(b, "# %s\n\n%s\n\n|", title, counts);
    for (size_t i = 0; i < COLUMNS; i++)
        wf_buf_addf(b, " %s |", heads[i]);
    wf_buf_adds(b, "\n|");
    for (size_t i = 0; i < COLUMNS; i++)
        wf_buf_adds(b, "---|");
    wf_buf_adds(b, "\n");
    for (size_t i = 0; i < count; i++)
        md_row(b, &plans[i], o);
}

/* The page through the common writer (common/wf_xmlw.h), as the convert report is written. */
static bool html(wf_buf *b, const char *counts, const mig_plan *plans, size_t count,
                 const mig_report_opts *o)
{
    wf_xmlw_opts xo = WF_XMLW_OPTS_INIT;
    xo.html = true;
    wf_xmlw *x = NULL;
    if (wf_xmlw_create(&xo, &x, NULL) != WF_OK)
        return false;
    bool oom = false;
    wf_xmlw_html_begin(x, title, html_style);
    wf_xmlw_html_para(x, "p", "counts", counts);
    wf_xmlw_html_table(x, NULL, heads, COLUMNS);
    for (size_t i = 0; i < count; i++)
        html_row(x, &plans[i], o, &oom);
    wf_xmlw_html_close_line(x); /* table */
    wf_xmlw_html_end(x);
    bool ok = wf_xmlw_finish(x, b, NULL) == WF_OK && !oom;
    wf_xmlw_destroy(x);
    return ok;
}

int mig_report_file(const char *path, const mig_plan *plans, size_t count, const mig_report_opts *o)
{
    bool is_html = strlen(path) > 5 && strcmp(path + strlen(path) - 5, ".html") == 0;
    size_t n[5];
    mig_count(plans, count, o, n);
    char counts[256];
    snprintf(counts, sizeof counts,
             "%s: %zu, interop: %zu, skipped: %zu, failed: %zu, already migrated: %zu%s",
             o->dry_run    ? "movable"
             : o->rollback ? "rolled back"
                           : "migrated",
             n[MIG_MOVABLE], n[MIG_INTEROP], n[MIG_NOT_MOVABLE], n[MIG_FAILED], n[MIG_DONE],
             o->dry_run ? " (dry run: nothing changed)" : "");
    wf_buf b;
    wf_buf_init(&b);
    bool ok = is_html ? html(&b, counts, plans, count, o)
                      : (markdown(&b, counts, plans, count, o), !b.oom);
    FILE *f = ok ? fopen(path, "w") : NULL;
    ok = f && fwrite(b.data, 1, b.len, f) == b.len;
    ok = (f && fclose(f) == 0) && ok;
    wf_buf_fini(&b);
    return ok ? 0 : -1;
}

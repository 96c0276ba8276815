/* wfb_migrate_report.c — the report of `wfbridge migrate-instances` (docs/migrate.md
 * "Report"): the JSON object printed last with --json, and the Markdown or HTML file of
 * --report, both listing each instance with its legacy position, what it became and why. */
#include "wfb_migrate_int.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/wf_jsonw.h"
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
static void esc(FILE *f, const char *s, bool html)
{
    for (; *s; s++) {
        if (html && *s == '<')
            fputs("&lt;", f);
        else if (html && *s == '>')
            fputs("&gt;", f);
        else if (html && *s == '&')
            fputs("&amp;", f);
        else if (!html && *s == '|')
            fputs("\\|", f);
        else
            fputc(*s, f);
    }
}

static void names_cell(FILE *f, const mig_names *n, bool html)
{
    for (size_t i = 0; i < n->n; i++) {
        fputs(i ? ", " : "", f);
        esc(f, n->v[i], html);
    }
}

static void row(FILE *f, const mig_plan *p, const mig_report_opts *o, bool html)
{
    const char *open = html ? "<tr><td>" : "| ", *sep = html ? "</td><td>" : " | ";
    fputs(open, f);
    esc(f, p->id, html);
    fprintf(f, "%s%s%s", sep, word(p, o), sep);
    names_cell(f, &p->queues, html);
    if (p->timer_count) {
        char t[40];
        iso_time(p->timers[0], t, sizeof t);
        fprintf(f, "%stimer %s", p->queues.n ? "; " : "", t);
    }
    fputs(sep, f);
    names_cell(f, &p->bookmarks, html);
    fprintf(f, "%s%zu%s", sep, p->values_carried, sep);
    esc(f, p->reason, html);
    fputs(html ? "</td></tr>\n" : " |\n", f);
}

int mig_report_file(const char *path, const mig_plan *plans, size_t count,
                    const mig_report_opts *o)
{
    bool html = strlen(path) > 5 && strcmp(path + strlen(path) - 5, ".html") == 0;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    size_t n[5];
    mig_count(plans, count, o, n);
    const char *title = "Instance migration";
    if (html)
        fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>"
                   "</head><body>\n<h1>%s</h1>\n<p>",
                title, title);
    else
        fprintf(f, "# %s\n\n", title);
    fprintf(f, "%s: %zu, interop: %zu, skipped: %zu, failed: %zu, already migrated: %zu%s\n",
            o->dry_run ? "movable" : o->rollback ? "rolled back" : "migrated", n[MIG_MOVABLE],
            n[MIG_INTEROP], n[MIG_NOT_MOVABLE], n[MIG_FAILED], n[MIG_DONE],
            o->dry_run ? " (dry run: nothing changed)" : "");
    if (html)
        fputs("</p>\n<table>\n<tr><th>instance</th><th>status</th><th>legacy position</th>"
              "<th>modern bookmarks</th><th>values carried</th><th>reason</th></tr>\n",
              f);
    else
        fputs("\n| instance | status | legacy position | modern bookmarks | values carried |"
              " reason |\n|---|---|---|---|---|---|\n",
              f);
    for (size_t i = 0; i < count; i++)
        row(f, &plans[i], o, html);
    if (html)
        fputs("</table>\n</body></html>\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

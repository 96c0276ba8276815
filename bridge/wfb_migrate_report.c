/* wfb_migrate_report.c — the report of `wfbridge migrate-instances` (docs/migrate.md
 * "Report"): the JSON object printed last with --json, and the Markdown or HTML file of
 * --report, both listing each instance with its legacy position, what it became and why. */
#include "wfb_migrate_int.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

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

static void json_names(wf_buf *b, const char *key, const mig_names *n)
{
    wf_buf_addf(b, ", \"%s\": [", key);
    for (size_t i = 0; i < n->n; i++) {
        if (i)
            wf_buf_adds(b, ", ");
        wf_buf_add_json_string(b, n->v[i], strlen(n->v[i]));
    }
    wf_buf_addc(b, ']');
}

static void json_str(wf_buf *b, const char *key, const char *s)
{
    wf_buf_addf(b, ", \"%s\": ", key);
    wf_buf_add_json_string(b, s, strlen(s));
}

static void json_plan(wf_buf *b, const mig_plan *p, const mig_report_opts *o)
{
    wf_buf_adds(b, "{\"id\": ");
    wf_buf_add_json_string(b, p->id, strlen(p->id));
    json_str(b, "status", word(p, o));
    json_str(b, "legacyStatus", p->status);
    if (p->map)
        json_str(b, "definition", p->map->xaml);
    if (p->reason[0])
        json_str(b, "reason", p->reason);
    json_names(b, "waitingOn", &p->queues);
    wf_buf_adds(b, ", \"timers\": [");
    for (size_t i = 0; i < p->timer_count; i++) {
        char t[40];
        iso_time(p->timers[i], t, sizeof t);
        wf_buf_addf(b, "%s\"%s\"", i ? ", " : "", t);
    }
    wf_buf_addc(b, ']');
    json_names(b, "executing", &p->executing);
    if (p->verdict == MIG_MOVABLE || p->verdict == MIG_INTEROP) {
        json_names(b, "bookmarks", &p->bookmarks);
        json_names(b, "replay", &p->steps);
        wf_buf_addf(b, ", \"valuesCarried\": %zu", p->values_carried);
    }
    wf_buf_addc(b, '}');
}

void mig_report_json(FILE *out, const mig_plan *plans, size_t count, const mig_report_opts *o)
{
    size_t n[5];
    mig_count(plans, count, o, n);
    wf_buf b;
    wf_buf_init(&b);
    if (o->rollback)
        wf_buf_addf(&b, "{\"rolledBack\": %zu, \"failed\": %zu, \"instances\": [",
                    n[MIG_MOVABLE], n[MIG_FAILED]);
    else
        wf_buf_addf(&b,
                    "{\"migrated\": %zu, \"interop\": %zu, \"skipped\": %zu, \"failed\": %zu, "
                    "\"alreadyMigrated\": %zu, \"dryRun\": %s, \"instances\": [",
                    n[MIG_MOVABLE], n[MIG_INTEROP], n[MIG_NOT_MOVABLE], n[MIG_FAILED],
                    n[MIG_DONE], o->dry_run ? "true" : "false");
    bool first = true;
    for (size_t i = 0; i < count; i++) {
        if (o->rollback && plans[i].verdict == MIG_NOT_MOVABLE)
            continue;
        if (!first)
            wf_buf_adds(&b, ", ");
        first = false;
        json_plan(&b, &plans[i], o);
    }
    wf_buf_adds(&b, "]}\n");
    fwrite(b.data, 1, b.len, out);
    wf_buf_fini(&b);
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

/* wfb_verify.c — `wfbridge verify`: run every input case on the legacy definition and on its
 * conversion(s), report each divergence with a shrunk case, as a table, --json (docs/formats.md
 * "Output contracts") and --junit; a folder argument verifies every .xoml below it
 * (docs/verify.md). Only this file of the verify engine prints. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_xml.h"
#include "../common/wf_file.h"
#include "../common/wf_mem.h"
#include "../converter/wfc_output.h"
#include "wfb_cli.h"
#include "wfb_verify.h"

#define VERB "verify"

static const char usage_text[] =
    "usage: wfbridge verify IN.xoml|DIR [--rules F] [--lib-path DIR] [--converted OUT.xaml]\n"
    "         [--cases CASES.json | --generate N [--seed S]] [--events SCRIPT.json]\n"
    "         [--tolerance T] [--max-steps N] [--json] [--junit FILE.xml] [--keep DIR]\n"
    "\n"
    "Run input cases on the legacy workflow and on its conversion and compare what they do:\n"
    "status, fault, native calls with their arguments, outputs, and the events waited on at\n"
    "each idle point (see docs/verify.md).\n"
    "\n"
    "  --rules F          the .rules file (default: beside IN.xoml)\n"
    "  --lib-path DIR     type and native libraries (default $WFBRIDGE_LIB_PATH)\n"
    "  --converted F      the converted workflow to check (a folder with a DIR argument:\n"
    "                     its REL.xaml for every REL.xoml); default: convert on the fly\n"
    "  --cases F          input cases: {\"cases\": [{\"name\", \"inputs\", \"events\"}]}\n"
    "  --generate N       N cases generated from the arguments' types (default 50, at\n"
    "                     most 10000000)\n"
    "  --seed S           the generator's seed (default 1)\n"
    "  --events F         event script for cases without one: [{\"event\", \"payload\"}]\n"
    "                     (generated cases: IN.events.json beside IN.xoml by default)\n"
    "  --tolerance T      Doubles are equal within T relative (default 1e-9)\n"
    "  --max-steps N      work items a run may take without going idle (default 20000, 0:\n"
    "                     none); a case past it on both sides counts as equivalent (Limit)\n"
    "  --json             the result as one JSON object on the last line of stdout\n"
    "  --junit F          JUnit XML: one test case per input case and mode\n"
    "  --keep DIR         keep converted files, per-case traces and shrunk cases in DIR\n"
    "\n"
    "A divergence is shrunk to a small case written as a --cases file (into --keep DIR, else\n"
    "the working directory). Exit status: 0 equivalent, 1 diverged, 2 usage or input error.\n";

/* --generate's ceiling: every case's report row is held until the end (docs/verify.md). */
#define WFB_VERIFY_MAX_GENERATE 10000000

typedef struct vopts {
    const char *in, *rules, *lib_path, *converted, *cases, *events, *junit, *keep;
    size_t generate;
    uint64_t seed, max_steps;
    double tolerance;
    bool json;
} vopts;

/* One row of the report: a case in a mode, equivalent or with its divergence. */
typedef struct row {
    char *file, *cas, *mode;
    wfb_vdiff diff; /* what == NULL: equivalent */
} row;

/* A decision outcome no case reached. */
typedef struct unseen {
    wfb_vkind kind;
    char *activity, *outcome;
} unseen;

/* Decision coverage of a file, or of them all (docs/verify.md "Coverage"). */
typedef struct coverage {
    size_t covered, total;
    size_t kind_covered[WFB_VK_COUNT], kind_total[WFB_VK_COUNT];
    unseen *unseen;
    size_t unseen_count;
} coverage;

typedef struct fileres {
    char *file;
    const char *status; /* "equivalent", "diverged", "error" */
    size_t cases, diverged_cases;
    double seconds;
    char *note;    /* error text, or the decision coverage */
    bool reported; /* the error was printed already (as the file's diagnostics) */
    coverage cov;  /* total 0: none measured (no decision point, or an error) */
} fileres;

typedef struct report {
    row *rows;
    size_t row_count;
    fileres *files;
    size_t file_count;
    bool oom;
} report;

typedef struct vmode {
    const char *name; /* "converted", "interop" */
    wfb_vmodern *m;
    wf_libpath *libpath; /* the run's: generated files first; NULL: the job's */
} vmode;

/* ---- options ----------------------------------------------------------------------------- */
static int parse(int argc, char **argv, vopts *o)
{
    static const struct option longs[] = {{"rules", required_argument, NULL, 'r'},
                                          {"lib-path", required_argument, NULL, 'L'},
                                          {"converted", required_argument, NULL, 'c'},
                                          {"cases", required_argument, NULL, 'C'},
                                          {"generate", required_argument, NULL, 'g'},
                                          {"seed", required_argument, NULL, 's'},
                                          {"events", required_argument, NULL, 'e'},
                                          {"tolerance", required_argument, NULL, 't'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"junit", required_argument, NULL, 'u'},
                                          {"keep", required_argument, NULL, 'k'},
                                          {"max-steps", required_argument, NULL, 'm'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    o->generate = 50;
    o->seed = 1;
    o->max_steps = 20000;
    o->tolerance = 1e-9;
    bool gen_given = false;
    int ch;
    while ((ch = wfb_getopt(argc, argv, longs)) != -1) {
        char *end = NULL;
        unsigned long long n = 0;
        switch (ch) {
        case 'h':
            return wfb_help(usage_text), -1;
        case 'r':
            o->rules = optarg;
            break;
        case 'L':
            o->lib_path = optarg;
            break;
        case 'c':
            o->converted = optarg;
            break;
        case 'C':
            o->cases = optarg;
            break;
        case 'e':
            o->events = optarg;
            break;
        case 'j':
            o->json = true;
            break;
        case 'u':
            o->junit = optarg;
            break;
        case 'k':
            o->keep = optarg;
            break;
        case 'g':
            if (wfb_parse_count("--generate", optarg, 1, WFB_VERIFY_MAX_GENERATE, &n))
                return 2;
            o->generate = (size_t)n;
            gen_given = true;
            break;
        case 's':
            if (wfb_parse_count("--seed", optarg, 0, UINT64_MAX, &n))
                return 2;
            o->seed = n;
            break;
        case 'm':
            if (wfb_parse_count("--max-steps", optarg, 0, UINT64_MAX, &n))
                return 2;
            o->max_steps = n;
            break;
        case 't':
            errno = 0;
            o->tolerance = strtod(optarg, &end);
            if (end == optarg || *end || errno || !isfinite(o->tolerance) || o->tolerance < 0)
                return wfb_usage_error("--tolerance needs a number >= 0, not '%s'", optarg);
            break;
        default:
            return 2; /* reported by wfb_getopt */
        }
    }
    if (optind >= argc)
        return wfb_usage_error("no IN.xoml or folder given");
    if (optind + 1 < argc)
        return wfb_usage_error("more than one input ('%s')", argv[optind + 1]);
    o->in = argv[optind];
    if (o->cases && gen_given)
        return wfb_usage_error("--cases and --generate exclude each other");
    return 0;
}

/* ---- the report -------------------------------------------------------------------------- */
static void add_row(report *r, const char *file, const char *cas, const char *mode, wfb_vdiff *diff)
{
    row *grown = wf_realloc(r->rows, (r->row_count + 1) * sizeof *grown);
    if (!grown) {
        r->oom = true;
        wfb_vdiff_fini(diff);
        return;
    }
    r->rows = grown;
    row *w = &r->rows[r->row_count++];
    w->file = wf_strdup(file);
    w->cas = wf_strdup(cas);
    w->mode = wf_strdup(mode);
    w->diff = *diff;
    memset(diff, 0, sizeof *diff);
    r->oom |= !w->file || !w->cas || !w->mode;
}

static fileres *add_file(report *r, const char *file)
{
    fileres *grown = wf_realloc(r->files, (r->file_count + 1) * sizeof *grown);
    if (!grown) {
        r->oom = true;
        return NULL;
    }
    r->files = grown;
    fileres *f = &r->files[r->file_count++];
    memset(f, 0, sizeof *f);
    f->file = wf_strdup(file);
    f->status = "error";
    r->oom |= !f->file;
    return f;
}

static void report_fini(report *r)
{
    for (size_t i = 0; i < r->row_count; i++) {
        wf_free(r->rows[i].file);
        wf_free(r->rows[i].cas);
        wf_free(r->rows[i].mode);
        wfb_vdiff_fini(&r->rows[i].diff);
    }
    wf_free(r->rows);
    for (size_t i = 0; i < r->file_count; i++) {
        wf_free(r->files[i].file);
        wf_free(r->files[i].note);
        for (size_t k = 0; k < r->files[i].cov.unseen_count; k++) {
            wf_free(r->files[i].cov.unseen[k].activity);
            wf_free(r->files[i].cov.unseen[k].outcome);
        }
        wf_free(r->files[i].cov.unseen);
    }
    wf_free(r->files);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *error_text(const wf_error *err)
{
    char buf[900];
    return wf_strdup(wf_error_format(err, "error", buf, sizeof buf));
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Write text to DIR/NAME (atomically). */
static wf_status keep_file(const char *dir, const char *name, const char *text, size_t len,
                           wf_error *err)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    mkdir(dir, 0777);
    FILE *f = fopen(tmp, "w");
    bool ok = f && fwrite(text, 1, len, f) == len;
    ok = f && fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return wf_error_set(err, WF_E_IO, &(wf_loc){path, 0, 0}, "cannot write the file");
    }
    return WF_OK;
}

/* ---- one file ---------------------------------------------------------------------------- */
typedef struct job {
    const vopts *o;
    const char *file, *converted, *stem; /* stem: the file's name without .xoml */
    const wf_libpath *libpath;
    wfb_vlegacy *l;
    vmode modes[2];
    size_t mode_count;
    char *skipped; /* why the Interop mode did not run, or NULL */
    char *side_dir; /* where conversions write their generated files */
    bool own_dir;   /* side_dir is a temporary directory, removed at the end */
    wfb_verify_written written;
    wfb_vevent *events;
    size_t event_count;
    const vmode *pred_mode;
    bool *seen; /* per decision outcome: some case's legacy run reached it */
} job;

/* The shrinker's oracle: does the case still diverge in pred_mode? */
static wf_status still_diverges(void *ud, const wfb_vcase *c, bool *diverges, wf_error *err)
{
    job *j = ud;
    wfb_vobs lo, mo;
    wfb_vdiff d;
    bool equal = true;
    wf_status rc = wfb_vlegacy_run(j->l, c, &lo, err);
    if (rc == WF_OK)
        rc = wfb_vmodern_run(j->pred_mode->m, c, &mo, err);
    else
        memset(&mo, 0, sizeof mo);
    if (rc == WF_OK)
        rc = wfb_vcompare(&lo, &mo, j->o->tolerance, &equal, &d, err);
    if (rc == WF_OK)
        wfb_vdiff_fini(&d);
    /* a case neither runtime accepts is not a smaller witness */
    *diverges = rc == WF_OK && !equal && !(lo.error && mo.error);
    wfb_vobs_fini(&lo);
    wfb_vobs_fini(&mo);
    return rc;
}

/* The modern runtime takes up to about twice the legacy executor's work items for the same
 * workflow: its limit is twice --max-steps (docs/verify.md "Status mapping"). */
static uint64_t modern_steps(uint64_t legacy)
{
    return legacy > UINT64_MAX / 2 ? 0 : legacy * 2;
}

/* The directory for generated files: --keep DIR, else a fresh one under $TMPDIR. */
static wf_status make_side_dir(job *j, wf_error *err)
{
    if (j->side_dir)
        return WF_OK;
    char tmpl[4096];
    const char *tmp = getenv("TMPDIR");
    if (j->o->keep) {
        mkdir(j->o->keep, 0777);
        snprintf(tmpl, sizeof tmpl, "%s", j->o->keep);
    } else {
        snprintf(tmpl, sizeof tmpl, "%s/wfb-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(tmpl))
            return wf_error_set(err, WF_E_IO, &(wf_loc){tmpl, 0, 0},
                                "cannot create a temporary directory: %s", strerror(errno));
        j->own_dir = true;
    }
    if (!(j->side_dir = wf_strdup(tmpl)))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return WF_OK;
}

static wf_status read_converted(const char *path, char **xaml, size_t *len, wf_error *err)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_status rc = wf_file_read(path, 64u << 20, &b, err);
    *len = b.len;
    *xaml = rc == WF_OK ? wf_buf_detach(&b, NULL) : NULL;
    wf_buf_fini(&b);
    if (rc == WF_OK && !*xaml)
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return rc;
}

/* Load one modern mode: the --converted file (its directory first on the library path, where
 * `convert` put its generated files), or a conversion made now (its generated files in
 * side_dir, first on the library path). */
static wf_status load_mode(job *j, const char *name, bool interop, wf_diags *diags, wf_error *err)
{
    char *xaml = NULL;
    size_t len = 0;
    wf_status rc;
    char label[4200], dir[4200];
    vmode *md = &j->modes[j->mode_count];
    md->libpath = NULL;
    if (!interop && j->converted) {
        rc = read_converted(j->converted, &xaml, &len, err);
        snprintf(label, sizeof label, "%s", j->converted);
        const char *slash = strrchr(j->converted, '/');
        if (slash == j->converted) /* "/OUT.xaml" */
            slash++;
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - j->converted) : 1,
                 slash ? j->converted : ".");
        if (rc == WF_OK)
            rc = wfb_verify_libpath(dir, j->libpath, &md->libpath, err);
    } else {
        snprintf(label, sizeof label, "%s.%s.xaml", j->stem, name);
        size_t before = j->written.count;
        rc = make_side_dir(j, err);
        if (rc == WF_OK) {
            wfb_verify_conv vc = {.path = j->file,
                                  .rules = j->o->rules,
                                  .libpath = j->libpath,
                                  .force_interop = interop,
                                  .output_name = label,
                                  .side_dir = j->side_dir};
            rc = wfb_verify_convert(&vc, &xaml, &len, &j->written, err);
        }
        if (rc == WF_OK && j->o->keep)
            rc = keep_file(j->o->keep, label, xaml, len, err);
        if (rc == WF_OK && j->written.count > before)
            rc = wfb_verify_libpath(j->side_dir, j->libpath, &md->libpath, err);
    }
    if (rc == WF_OK)
        rc = wfb_vmodern_load(label, xaml, len, md->libpath ? md->libpath : j->libpath,
                              modern_steps(j->o->max_steps), diags, &md->m, err);
    wf_free(xaml);
    if (rc == WF_OK) {
        md->name = name;
        j->mode_count++;
    } else {
        wf_libpath_destroy(md->libpath);
        md->libpath = NULL;
    }
    return rc;
}

static wf_status keep_obs(const job *j, const char *cas, const char *mode, const wfb_vobs *obs,
                          wf_error *err)
{
    if (!j->o->keep)
        return WF_OK;
    wf_buf b;
    wf_buf_init(&b);
    if (!wfb_vobs_to_json(obs, &b)) {
        wf_buf_fini(&b);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    char name[600];
    snprintf(name, sizeof name, "%s.%s.%s.json", j->stem, cas, mode);
    for (char *p = name; *p; p++)
        if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20)
            *p = '_'; /* a case name stays inside DIR */
    wf_status rc = keep_file(j->o->keep, name, b.data, b.len, err);
    wf_buf_fini(&b);
    return rc;
}

/* Shrink the first diverging case of a mode and write it as a --cases file. */
static wf_status shrink_and_write(job *j, const vmode *md, const wfb_vcase *c, char **written,
                                  wf_error *err)
{
    wfb_vcase small;
    wf_status rc = wfb_vcase_copy(c, &small, err);
    j->pred_mode = md;
    if (rc == WF_OK)
        rc = wfb_vshrink(&small, md->m, still_diverges, j, 300, err);
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s.%s.shrunk.json", j->o->keep ? j->o->keep : "",
             j->o->keep ? "/" : "", j->stem, md->name);
    if (j->o->keep)
        mkdir(j->o->keep, 0777);
    if (rc == WF_OK)
        rc = wfb_vcases_write(path, &small, 1, err);
    if (rc == WF_OK && !(*written = wf_strdup(path)))
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wfb_vcase_fini(&small);
    return rc;
}

/* --keep: traces of every --cases case; of generated cases, the first KEEP_FIRST and the first
 * KEEP_FIRST diverging ones after those (a thousand generated traces are no reading, and loops
 * make them large). */
#define KEEP_FIRST 10

/* Run every case in every mode; divergences go to the report. */
static wf_status run_cases(job *j, wfb_vcase *cases, size_t n, wfb_vgen *gen, report *rep,
                           fileres *fr, wf_error *err)
{
    bool shrunk[2] = {false, false};
    size_t kept = 0; /* diverging generated cases whose traces were kept */
    wf_status rc = WF_OK;
    for (size_t i = 0; rc == WF_OK && i < n; i++) {
        wfb_vcase gc;
        wfb_vcase *c = &cases[i];
        if (gen) {
            if ((rc = wfb_vgen_next(gen, i, j->events, j->event_count, &gc, err)) != WF_OK)
                break;
            c = &gc;
        }
        wfb_vobs lo;
        bool case_diverged = false;
        rc = wfb_vlegacy_run(j->l, c, &lo, err);
        if (rc == WF_OK && !gen && lo.error) /* a --cases input the workflow does not take */
            rc = wf_error_set(err, WF_E_USAGE, &(wf_loc){j->o->cases, 0, 0}, "case '%s': %s",
                              c->name, lo.error);
        for (size_t h = 0; rc == WF_OK && h < lo.hit_count; h++)
            j->seen[lo.hits[h]] = true;
        if (rc == WF_OK && gen)
            rc = wfb_vgen_feedback(gen, c, &lo, err);
        for (size_t k = 0; rc == WF_OK && k < j->mode_count; k++) {
            wfb_vobs mo;
            wfb_vdiff d;
            bool equal;
            rc = wfb_vmodern_run(j->modes[k].m, c, &mo, err);
            if (rc != WF_OK)
                break;
            rc = wfb_vcompare(&lo, &mo, j->o->tolerance, &equal, &d, err);
            if (rc == WF_OK && (!gen || i < KEEP_FIRST || (!equal && kept < KEEP_FIRST)) &&
                (rc = keep_obs(j, c->name, j->modes[k].name, &mo, err)) != WF_OK)
                wfb_vdiff_fini(&d);
            wfb_vobs_fini(&mo);
            if (rc != WF_OK)
                break;
            if (!equal) {
                fr->status = "diverged";
                case_diverged = true;
                if (!shrunk[k]) {
                    shrunk[k] = true;
                    char *path = NULL;
                    rc = shrink_and_write(j, &j->modes[k], c, &path, err);
                    if (rc == WF_OK) {
                        size_t len = strlen(d.what) + strlen(path) + 32;
                        char *w = wf_malloc(len);
                        if (w)
                            snprintf(w, len, "%s (shrunk case: %s)", d.what, path);
                        wf_free(d.what);
                        d.what = w;
                        rc = w ? WF_OK : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
                    }
                    wf_free(path);
                }
            }
            add_row(rep, j->file, c->name, j->modes[k].name, &d);
        }
        if (rc == WF_OK && (!gen || i < KEEP_FIRST || (case_diverged && kept < KEEP_FIRST)))
            rc = keep_obs(j, c->name, "legacy", &lo, err);
        kept += gen && i >= KEEP_FIRST && case_diverged;
        wfb_vobs_fini(&lo);
        if (gen)
            wfb_vcase_fini(&gc);
        fr->cases++;
        fr->diverged_cases += case_diverged;
    }
    return rep->oom && rc == WF_OK ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory") : rc;
}

/* The file's coverage from j->seen; false: out of memory. */
static bool measure(const job *j, coverage *cv)
{
    memset(cv, 0, sizeof *cv);
    size_t n = wfb_vlegacy_point_count(j->l);
    for (size_t i = 0; i < n; i++) {
        const wfb_vpoint *p = wfb_vlegacy_point(j->l, i);
        cv->total++;
        cv->kind_total[p->kind]++;
        if (j->seen[i]) {
            cv->covered++;
            cv->kind_covered[p->kind]++;
            continue;
        }
        unseen *grown = wf_realloc(cv->unseen, (cv->unseen_count + 1) * sizeof *grown);
        if (!grown)
            return false;
        cv->unseen = grown;
        unseen *u = &grown[cv->unseen_count++];
        u->kind = p->kind;
        u->activity = wf_strdup(p->activity);
        u->outcome = wf_strdup(p->outcome);
        if (!u->activity || !u->outcome)
            return false;
    }
    return true;
}

/* "coverage 5/7 decision outcomes (IfElse 2/2, While 1/2, ...); not seen: While loop
 * skipped, ..." */
static void coverage_text(wf_buf *b, const coverage *cv)
{
    if (!cv->total) {
        wf_buf_adds(b, "no decision points");
        return;
    }
    wf_buf_addf(b, "coverage %zu/%zu decision outcomes", cv->covered, cv->total);
    bool first = true;
    for (int k = 0; k < WFB_VK_COUNT; k++)
        if (cv->kind_total[k]) {
            wf_buf_addf(b, "%s%s %zu/%zu", first ? " (" : ", ", wfb_vkind_name((wfb_vkind)k),
                        cv->kind_covered[k], cv->kind_total[k]);
            first = false;
        }
    if (!first)
        wf_buf_addc(b, ')');
    for (size_t i = 0; i < cv->unseen_count; i++)
        wf_buf_addf(b, "%s%s %s %s", i ? ", " : "; not seen: ", wfb_vkind_name(cv->unseen[i].kind),
                    cv->unseen[i].activity, cv->unseen[i].outcome);
}

static char *coverage_note(const job *j, coverage *cv)
{
    wf_buf b;
    wf_buf_init(&b);
    if (!measure(j, cv))
        b.oom = true;
    coverage_text(&b, cv);
    if (j->skipped)
        wf_buf_addf(&b, "; interop mode skipped: %s", j->skipped);
    return wf_buf_detach(&b, NULL);
}

/* FILE.events.json beside FILE.xoml, the event script used without --events; NULL if none. */
static const char *events_beside(const char *file, char *buf, size_t size)
{
    size_t len = strlen(file);
    if (len > 5 && strcmp(file + len - 5, ".xoml") == 0)
        len -= 5;
    snprintf(buf, size, "%.*s.events.json", (int)len, file);
    struct stat st;
    return stat(buf, &st) == 0 && S_ISREG(st.st_mode) ? buf : NULL;
}

static void verify_file(const vopts *o, const char *file, const char *converted,
                        const wf_libpath *libpath, report *rep)
{
    double t0 = now_s();
    fileres *fr = add_file(rep, file);
    if (!fr)
        return;
    char stem[512];
    snprintf(stem, sizeof stem, "%s", base_name(file));
    char *dot = strrchr(stem, '.');
    if (dot && strcmp(dot, ".xoml") == 0)
        *dot = '\0';
    job j = {.o = o, .file = file, .converted = converted, .stem = stem, .libpath = libpath};
    wf_error err = WF_ERROR_INIT;
    wf_diags *diags = wf_diags_create();
    wfb_vcase *cases = NULL;
    size_t n = 0;
    wfb_vgen *gen = NULL;
    wf_status rc = diags ? WF_OK : wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
    char beside[4200];
    const char *events = o->events  ? o->events
                         : o->cases ? NULL
                                    : events_beside(file, beside, sizeof beside);
    if (rc == WF_OK && events)
        rc = wfb_vevents_load(events, &j.events, &j.event_count, &err);
    if (rc == WF_OK)
        rc = wfb_vlegacy_load(file, o->rules, libpath, o->max_steps, diags, &j.l, &err);
    if (rc == WF_OK && !(j.seen = wf_calloc(wfb_vlegacy_point_count(j.l) + 1, sizeof *j.seen)))
        rc = wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
    if (rc == WF_OK)
        rc = load_mode(&j, "converted", false, diags, &err);
    if (rc == WF_OK) { /* the Interop mode needs the converter */
        wf_error e2 = WF_ERROR_INIT;
        if (load_mode(&j, "interop", true, diags, &e2) != WF_OK) {
            if (!converted || e2.code == WF_E_NOMEM)
                rc = (err = e2).code;
            else
                j.skipped = wf_strdup(e2.message);
        }
    }
    if (rc == WF_OK && o->cases)
        rc = wfb_vcases_load(o->cases, j.events, j.event_count, &cases, &n, &err);
    else if (rc == WF_OK) {
        n = o->generate;
        rc = wfb_vgen_create(j.modes[0].m, j.l, o->seed, &gen, &err);
    }
    if (rc == WF_OK) {
        fr->status = "equivalent";
        rc = run_cases(&j, cases, n, gen, rep, fr, &err);
    }
    if (rc == WF_OK) {
        fr->note = coverage_note(&j, &fr->cov);
    } else {
        fr->status = "error";
        fr->reported = wfb_report_diags(diags, false) != 0;
        fr->note = error_text(&err);
    }
    rep->oom |= !fr->note;
    fr->seconds = now_s() - t0;
    wfb_vgen_destroy(gen);
    wfb_vcases_free(cases, cases ? n : 0);
    wfb_vevents_free(j.events, j.event_count);
    for (size_t k = 0; k < j.mode_count; k++) {
        wfb_vmodern_destroy(j.modes[k].m);
        wf_libpath_destroy(j.modes[k].libpath);
    }
    wfb_verify_written_free(&j.written, j.own_dir);
    if (j.own_dir)
        rmdir(j.side_dir);
    wf_free(j.side_dir);
    wfb_vlegacy_destroy(j.l);
    wf_free(j.seen);
    wf_free(j.skipped);
    wf_diags_destroy(diags);
}

/* ---- printing ---------------------------------------------------------------------------- */
static void json_kv(wf_buf *b, const char *key, const char *value)
{
    wf_buf_addf(b, "\"%s\": ", key);
    wf_buf_add_json_string(b, value, strlen(value));
}

/* {"covered", "total", "kinds": {KIND: {"covered", "total"}}, "uncovered": [{["file",] "kind",
 * "activity", "outcome"}]}: of one file (file NULL), or of every file of r summed. */
static void json_coverage(wf_buf *b, const report *r, const fileres *file)
{
    coverage sum = {0};
    for (size_t i = 0; i < r->file_count; i++) {
        const coverage *cv = &r->files[i].cov;
        if (file && file != &r->files[i])
            continue;
        sum.covered += cv->covered;
        sum.total += cv->total;
        for (int k = 0; k < WFB_VK_COUNT; k++) {
            sum.kind_covered[k] += cv->kind_covered[k];
            sum.kind_total[k] += cv->kind_total[k];
        }
    }
    wf_buf_addf(b, "{\"covered\": %zu, \"total\": %zu, \"kinds\": {", sum.covered, sum.total);
    bool first = true;
    for (int k = 0; k < WFB_VK_COUNT; k++)
        if (sum.kind_total[k]) {
            wf_buf_addf(b, "%s\"%s\": {\"covered\": %zu, \"total\": %zu}", first ? "" : ", ",
                        wfb_vkind_name((wfb_vkind)k), sum.kind_covered[k], sum.kind_total[k]);
            first = false;
        }
    wf_buf_adds(b, "}, \"uncovered\": [");
    first = true;
    for (size_t i = 0; i < r->file_count; i++) {
        const fileres *f = &r->files[i];
        if (file && file != f)
            continue;
        for (size_t u = 0; u < f->cov.unseen_count; u++) {
            wf_buf_adds(b, first ? "{" : ", {");
            first = false;
            if (!file) {
                json_kv(b, "file", f->file);
                wf_buf_adds(b, ", ");
            }
            json_kv(b, "kind", wfb_vkind_name(f->cov.unseen[u].kind));
            wf_buf_adds(b, ", ");
            json_kv(b, "activity", f->cov.unseen[u].activity);
            wf_buf_adds(b, ", ");
            json_kv(b, "outcome", f->cov.unseen[u].outcome);
            wf_buf_addc(b, '}');
        }
    }
    wf_buf_adds(b, "]}");
}

static void print_json(FILE *out, const report *r, size_t cases, bool diverged, bool dir)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addf(&b, "{\"status\": \"%s\", \"cases\": %zu, \"divergences\": [",
                diverged ? "diverged" : "equivalent", cases);
    bool first = true;
    for (size_t i = 0; i < r->row_count; i++) {
        const row *w = &r->rows[i];
        if (!w->diff.what)
            continue;
        wf_buf_adds(&b, first ? "" : ", ");
        first = false;
        wf_buf_adds(&b, "{\"file\": ");
        wf_buf_add_json_string(&b, w->file, strlen(w->file));
        wf_buf_adds(&b, ", \"case\": ");
        wf_buf_add_json_string(&b, w->cas, strlen(w->cas));
        wf_buf_adds(&b, ", \"mode\": ");
        wf_buf_add_json_string(&b, w->mode, strlen(w->mode));
        wf_buf_adds(&b, ", \"what\": ");
        wf_buf_add_json_string(&b, w->diff.what, strlen(w->diff.what));
        wf_buf_adds(&b, ", \"legacy\": ");
        wf_buf_add_json_string(&b, w->diff.legacy, strlen(w->diff.legacy));
        wf_buf_adds(&b, ", \"modern\": ");
        wf_buf_add_json_string(&b, w->diff.modern, strlen(w->diff.modern));
        wf_buf_addc(&b, '}');
    }
    wf_buf_adds(&b, "]");
    if (dir) {
        wf_buf_adds(&b, ", \"files\": [");
        for (size_t i = 0; i < r->file_count; i++) {
            const fileres *f = &r->files[i];
            wf_buf_adds(&b, i ? ", " : "");
            wf_buf_adds(&b, "{\"file\": ");
            wf_buf_add_json_string(&b, f->file, strlen(f->file));
            wf_buf_addf(&b, ", \"status\": \"%s\", \"cases\": %zu, \"seconds\": %.3f, \"note\": ",
                        f->status, f->cases, f->seconds);
            wf_buf_add_json_string(&b, f->note ? f->note : "", f->note ? strlen(f->note) : 0);
            wf_buf_adds(&b, ", \"coverage\": ");
            json_coverage(&b, r, f);
            wf_buf_addc(&b, '}');
        }
        wf_buf_addc(&b, ']');
    }
    wf_buf_adds(&b, ", \"coverage\": ");
    json_coverage(&b, r, NULL);
    wf_buf_adds(&b, "}\n");
    if (!b.oom)
        fputs(b.data, out);
    wf_buf_fini(&b);
}

/* The table; the first MAX_SHOWN divergences in full (--json and --junit have them all). */
#define MAX_SHOWN 10
static void print_human(FILE *out, const report *r, bool dir)
{
    size_t shown = 0, hidden = 0;
    for (size_t i = 0; i < r->row_count; i++) {
        const row *w = &r->rows[i];
        if (w->diff.what && shown == MAX_SHOWN)
            hidden++;
        else if (w->diff.what && ++shown)
            fprintf(out, "%s: case %s [%s]: diverged: %s\n    legacy: %s\n    modern: %s\n",
                    w->file, w->cas, w->mode, w->diff.what, w->diff.legacy, w->diff.modern);
    }
    if (hidden)
        fprintf(out, "... and %zu more divergences\n", hidden);
    if (dir)
        fprintf(out, "%-48s %7s  %-10s %8s\n", "file", "cases", "result", "time");
    for (size_t i = 0; i < r->file_count; i++) {
        const fileres *f = &r->files[i];
        if (dir)
            fprintf(out, "%-48s %7zu  %-10s %7.2fs\n", f->file, f->cases, f->status, f->seconds);
        else if (f->diverged_cases)
            fprintf(out, "%s: diverged in %zu of %zu cases (%.2fs)\n", f->file, f->diverged_cases,
                    f->cases, f->seconds);
        else
            fprintf(out, "%s: %s, %zu cases in %.2fs (%.0f cases/s)\n", f->file, f->status,
                    f->cases, f->seconds, f->seconds > 0 ? (double)f->cases / f->seconds : 0.0);
        if (f->note)
            fprintf(out, "    %s\n", f->note);
    }
}

static void xml_text(wf_buf *b, const char *s)
{
    (void)wf_xml_escape(b, s ? s : "", true); /* out of memory shows as b->oom */
}

static void junit_property(wf_buf *b, const char *name, const char *value)
{
    wf_buf_adds(b, "      <property name=\"");
    xml_text(b, name);
    wf_buf_adds(b, "\" value=\"");
    xml_text(b, value);
    wf_buf_adds(b, "\"/>\n");
}

static void junit_coverage(wf_buf *b, const coverage *cv)
{
    char name[64], value[1200];
    wf_buf_adds(b, "    <properties>\n");
    snprintf(value, sizeof value, "%zu/%zu", cv->covered, cv->total);
    junit_property(b, "coverage", value);
    for (int k = 0; k < WFB_VK_COUNT; k++)
        if (cv->kind_total[k]) {
            snprintf(name, sizeof name, "coverage.%s", wfb_vkind_name((wfb_vkind)k));
            snprintf(value, sizeof value, "%zu/%zu", cv->kind_covered[k], cv->kind_total[k]);
            junit_property(b, name, value);
        }
    for (size_t i = 0; i < cv->unseen_count; i++) {
        snprintf(value, sizeof value, "%s %s %s", wfb_vkind_name(cv->unseen[i].kind),
                 cv->unseen[i].activity, cv->unseen[i].outcome);
        junit_property(b, "uncovered", value);
    }
    wf_buf_adds(b, "    </properties>\n");
}

static wf_status write_junit(const char *path, const report *r, wf_error *err)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(
        &b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"wfbridge verify\">\n");
    for (size_t i = 0; i < r->file_count; i++) {
        const fileres *f = &r->files[i];
        size_t tests = 0, failures = 0;
        for (size_t k = 0; k < r->row_count; k++)
            if (strcmp(r->rows[k].file, f->file) == 0) {
                tests++;
                failures += r->rows[k].diff.what != NULL;
            }
        wf_buf_adds(&b, "  <testsuite name=\"");
        xml_text(&b, f->file);
        wf_buf_addf(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\" time=\"%.3f\">\n",
                    tests + (strcmp(f->status, "error") == 0), failures,
                    strcmp(f->status, "error") == 0, f->seconds);
        if (f->cov.total) /* decision coverage (docs/verify.md "Coverage") */
            junit_coverage(&b, &f->cov);
        if (strcmp(f->status, "error") == 0) {
            wf_buf_adds(&b, "    <testcase classname=\"verify\" name=\"load\"><error message=\"");
            xml_text(&b, f->note ? f->note : "");
            wf_buf_adds(&b, "\"/></testcase>\n");
        }
        for (size_t k = 0; k < r->row_count; k++) {
            const row *w = &r->rows[k];
            if (strcmp(w->file, f->file) != 0)
                continue;
            wf_buf_adds(&b, "    <testcase classname=\"");
            xml_text(&b, f->file);
            wf_buf_adds(&b, "\" name=\"");
            xml_text(&b, w->cas);
            wf_buf_adds(&b, " [");
            xml_text(&b, w->mode);
            wf_buf_adds(&b, "]\"");
            if (!w->diff.what) {
                wf_buf_adds(&b, "/>\n");
                continue;
            }
            wf_buf_adds(&b, "><failure message=\"");
            xml_text(&b, w->diff.what);
            wf_buf_adds(&b, "\">legacy: ");
            xml_text(&b, w->diff.legacy);
            wf_buf_adds(&b, "\nmodern: ");
            xml_text(&b, w->diff.modern);
            wf_buf_adds(&b, "</failure></testcase>\n");
        }
        wf_buf_adds(&b, "  </testsuite>\n");
    }
    wf_buf_adds(&b, "</testsuites>\n");
    wf_status rc = WF_OK;
    if (b.oom) {
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    } else {
        rc = wfc_write_atomic(path, b.data, b.len, err); /* also a device: never renamed over */
    }
    wf_buf_fini(&b);
    return rc;
}

/* --junit never names an input (compared by device and inode, docs/convert.md). */
static int check_junit(const vopts *o)
{
    const char *inputs[] = {o->in, o->rules, o->converted, o->cases, o->events};
    const char *what[] = {"--junit"};
    wf_error err = WF_ERROR_INIT;
    if (o->junit && wfc_output_clash(inputs, 5, &o->junit, what, 1, &err) != WF_OK)
        return wfb_report(&err);
    return 0;
}

int wfb_cmd_verify(int argc, char **argv)
{
    wfb_verb_begin(VERB);
    vopts o = {0};
    int code = parse(argc, argv, &o);
    if (code)
        return code < 0 ? 0 : code;
    if ((code = wfb_stdin_begin(&o.in, ".xoml")) != 0 || (code = check_junit(&o)) != 0)
        return code;
    wf_error err = WF_ERROR_INIT;
    wf_libpath *libpath = NULL;
    if (wfb_libpath(o.lib_path, &libpath, &err) != WF_OK)
        return wfb_report(&err);
    report rep = {0};
    struct stat st;
    bool dir = stat(o.in, &st) == 0 && S_ISDIR(st.st_mode);
    if (!dir) {
        verify_file(&o, o.in, o.converted, libpath, &rep);
    } else {
        char **files = NULL;
        size_t nf = 0;
        code = wfb_walk(o.in, ".xoml", false, &files, &nf);
        for (size_t i = 0; !rep.oom && i < nf; i++) {
            char path[8200], conv[8200];
            snprintf(path, sizeof path, "%s/%s", o.in, files[i]);
            if (o.converted)
                snprintf(conv, sizeof conv, "%s/%.*s.xaml", o.converted,
                         (int)(strlen(files[i]) - 5), files[i]);
            verify_file(&o, path, o.converted ? conv : NULL, libpath, &rep);
        }
        wfb_walk_free(files, nf);
        if (!rep.oom && code == 0 && nf == 0)
            code = wfb_usage_error("no .xoml file below '%s'", o.in);
    }
    size_t cases = 0;
    bool diverged = false, error = false;
    for (size_t i = 0; i < rep.file_count; i++) {
        cases += rep.files[i].cases;
        diverged |= strcmp(rep.files[i].status, "diverged") == 0;
        error |= strcmp(rep.files[i].status, "error") == 0;
    }
    if (!dir && error && !rep.files[0].reported)
        fprintf(stderr, "%s\n", rep.files[0].note ? rep.files[0].note : "error: out of memory");
    if (rep.oom) {
        code = wfb_usage_error("out of memory");
    } else if (code == 0) {
        if (o.junit && write_junit(o.junit, &rep, &err) != WF_OK)
            code = wfb_report(&err);
        if (!dir && error) {
            code = code ? code : 2;
        } else {
            print_human(o.json ? stderr : stdout, &rep, dir);
            if (o.json)
                print_json(stdout, &rep, cases, diverged, dir);
            code = code ? code : error ? 2 : diverged ? 1 : 0;
        }
    }
    report_fini(&rep);
    wf_libpath_destroy(libpath);
    return code;
}

/* wfb_verify.c — `wfbridge verify`: run every input case on the legacy definition and on its
 * conversion(s), report each divergence with a shrunk case, as a table, --json (docs/formats.md
 * "Output contracts") and --junit; a folder argument verifies every .xoml below it
 * (docs/verify.md). Only this file of the verify engine prints. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_xmlw.h"
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
    "         [-j N] [--timeout S] [--no-isolate] [--null-rate R | --no-null]\n"
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
    "  --null-rate R      share of generated String, List and Object values that are null\n"
    "                     (default 0.05)\n"
    "  --no-null          never null: neither generated nor tried by the shrinker\n"
    "  --events F         event script for cases without one: [{\"event\", \"payload\"}]\n"
    "                     (generated cases: IN.events.json beside IN.xoml by default)\n"
    "  --tolerance T      Doubles are equal within T relative (default 1e-9)\n"
    "  --max-steps N      work items a run may take without going idle (default 20000, 0:\n"
    "                     none); a case past it on both sides counts as equivalent (Limit)\n"
    "  --json             the result as one JSON object on the last line of stdout\n"
    "  --junit F          JUnit XML: one test case per input case and mode\n"
    "  --keep DIR         keep converted files, per-case traces and shrunk cases in DIR\n"
    "  -j, --jobs N       runs at once, each in its own process (default: the cores)\n"
    "  --timeout S        seconds a run may take before it is stopped and reported as\n"
    "                     timed out (default 10, 0: none)\n"
    "  --no-isolate       run every case in this process, one at a time (a native crash\n"
    "                     then ends verify; native state carries from run to run)\n"
    "\n"
    "A divergence is shrunk to a small case written as a --cases file (into --keep DIR, else\n"
    "the working directory). Exit status: 0 equivalent, 1 diverged, 2 usage or input error.\n";

/* --generate's ceiling (docs/verify.md); cases are streamed, only divergences are held. */
#define WFB_VERIFY_MAX_GENERATE 10000000

typedef struct vopts {
    const char *in, *rules, *lib_path, *converted, *cases, *events, *junit, *keep;
    size_t generate;
    uint64_t seed, max_steps;
    double tolerance, timeout_s, null_rate;
    unsigned jobs; /* 0: the cores */
    bool json, no_isolate, no_null;
} vopts;

/* Set by SIGINT, SIGTERM or SIGHUP: stop, clean up, then die of the signal (docs/verify.md
 * "Isolation"). A signal handler can only reach a file-scope variable. */
static volatile sig_atomic_t stop_signal;

/* One row of the report: a case in a mode, equivalent or with its divergence. */
typedef struct row {
    char *file, *cas, *mode;
    wfb_vdiff diff; /* what == NULL: equivalent */
    char *shrunk;   /* the shrunk case written for this divergence, or NULL */
} row;

/* A decision outcome no case reached. */
typedef struct unseen {
    wfb_vkind kind;
    char *activity, *outcome;
    char *where; /* "FILE:LINE:COL" of the activity */
    char *why;   /* why no case reached it, when known; else NULL */
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
    size_t crashed, exited, timed_out; /* legacy runs that did not end by themselves */
    double seconds;
    char *note;    /* error text, or the decision coverage */
    bool reported; /* the error was printed already (as the file's diagnostics) */
    wf_error error; /* status "error": its root cause */
    coverage cov;  /* total 0: none measured (no decision point, or an error) */
    size_t passed_rows; /* equivalent (case, mode) pairs: counted, not held */
    long passed_from;   /* where its JUnit test cases start in report.passed */
} fileres;

/* The progress line on a terminal (stderr): "[3/400] FILE: case 120/1000". */
typedef struct progress {
    bool on;            /* stderr is a terminal */
    bool drawn;         /* a line is showing: clear it before anything else is printed */
    size_t file, files; /* 1-based; files 0: a single file */
    double last;        /* when it was drawn (s) */
} progress;

typedef struct report {
    row *rows;
    size_t row_count;
    fileres *files;
    size_t file_count;
    bool oom;
    progress pg;
    /* --junit: the equivalent test cases, streamed to an unlinked temporary file as they
     * come, file after file (NULL without --junit); only divergences are held in rows, so
     * memory does not grow with the number of cases. */
    FILE *passed;
    bool passed_failed; /* writing it failed (a full disk) */
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
                                          {"json", no_argument, NULL, 'O'},
                                          {"junit", required_argument, NULL, 'u'},
                                          {"keep", required_argument, NULL, 'k'},
                                          {"max-steps", required_argument, NULL, 'm'},
                                          {"jobs", required_argument, NULL, 'j'},
                                          {"timeout", required_argument, NULL, 'T'},
                                          {"no-isolate", no_argument, NULL, 'I'},
                                          {"null-rate", required_argument, NULL, 'N'},
                                          {"no-null", no_argument, NULL, 'n'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    o->generate = 50;
    o->seed = 1;
    o->max_steps = 20000;
    o->tolerance = 1e-9;
    o->timeout_s = 10;
    o->null_rate = WFB_VGEN_NULL_RATE;
    bool gen_given = false;
    int ch;
    while ((ch = wfb_getopt_short(argc, argv, ":hj:", longs)) != -1) {
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
        case 'O':
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
        case 'j':
            o->jobs = (unsigned)strtoul(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || o->jobs == 0 || o->jobs > 1024)
                return wfb_usage_error("--jobs needs a number from 1 to 1024, not '%s'", optarg);
            break;
        case 'T':
            o->timeout_s = strtod(optarg, &end);
            if (end == optarg || *end || !(o->timeout_s >= 0) || o->timeout_s > 1e6)
                return wfb_usage_error("--timeout needs seconds >= 0, not '%s'", optarg);
            break;
        case 'I':
            o->no_isolate = true;
            break;
        case 'N':
            o->null_rate = strtod(optarg, &end);
            if (end == optarg || *end || !(o->null_rate >= 0 && o->null_rate <= 1))
                return wfb_usage_error("--null-rate needs a number from 0 to 1, not '%s'",
                                       optarg);
            break;
        case 'n':
            o->no_null = true;
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
static void add_row(report *r, const char *file, const char *cas, const char *mode, wfb_vdiff *diff,
                    char *shrunk_take)
{
    row *grown = wf_realloc(r->rows, (r->row_count + 1) * sizeof *grown);
    if (!grown) {
        r->oom = true;
        wfb_vdiff_fini(diff);
        wf_free(shrunk_take);
        return;
    }
    r->rows = grown;
    row *w = &r->rows[r->row_count++];
    w->file = wf_strdup(file);
    w->cas = wf_strdup(cas);
    w->mode = wf_strdup(mode);
    w->diff = *diff;
    w->shrunk = shrunk_take;
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
    f->passed_from = r->passed ? ftell(r->passed) : 0;
    r->oom |= !f->file;
    return f;
}

/* <testcase classname="FILE" name="CASE [MODE]">, left open for a failure or the close. */
static void junit_testcase(wf_xmlw *x, const char *file, const char *cas, const char *mode,
                           bool *oom)
{
    wf_buf name;
    wf_buf_init(&name);
    wf_buf_addf(&name, "%s [%s]", cas, mode);
    *oom |= name.oom;
    wf_xmlw_open(x, "testcase");
    wf_xmlw_attr(x, "classname", file);
    wf_xmlw_attr(x, "name", name.data);
    wf_buf_fini(&name);
}

/* An equivalent (case, mode): counted, and with --junit its test case streamed out, written
 * as write_junit places it (two levels deep). */
static void pass_row(report *r, fileres *f, const char *cas, const char *mode)
{
    f->passed_rows++;
    if (!r->passed)
        return;
    wf_xmlw_opts o = WF_XMLW_OPTS_INIT;
    o.indent = true;
    o.base_depth = 2;
    wf_xmlw *x = NULL;
    wf_buf b;
    wf_buf_init(&b);
    bool oom = wf_xmlw_create(&o, &x, NULL) != WF_OK;
    if (x) {
        junit_testcase(x, f->file, cas, mode, &oom);
        wf_xmlw_close(x);
        oom |= wf_xmlw_finish(x, &b, NULL) != WF_OK;
    }
    wf_xmlw_destroy(x);
    r->oom |= oom;
    if (!oom && fwrite(b.data, 1, b.len, r->passed) != b.len)
        r->passed_failed = true;
    wf_buf_fini(&b);
}

static void report_fini(report *r)
{
    if (r->passed)
        fclose(r->passed);
    for (size_t i = 0; i < r->row_count; i++) {
        wf_free(r->rows[i].file);
        wf_free(r->rows[i].cas);
        wf_free(r->rows[i].mode);
        wfb_vdiff_fini(&r->rows[i].diff);
        wf_free(r->rows[i].shrunk);
    }
    wf_free(r->rows);
    for (size_t i = 0; i < r->file_count; i++) {
        wf_free(r->files[i].file);
        wf_free(r->files[i].note);
        for (size_t k = 0; k < r->files[i].cov.unseen_count; k++) {
            wf_free(r->files[i].cov.unseen[k].activity);
            wf_free(r->files[i].cov.unseen[k].outcome);
            wf_free(r->files[i].cov.unseen[k].where);
            wf_free(r->files[i].cov.unseen[k].why);
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

/* ---- progress ---------------------------------------------------------------------------- */
static void progress_clear(progress *pg)
{
    if (pg->drawn)
        fputs("\r\033[K", stderr);
    pg->drawn = false;
}

/* Redraw at most ten times a second (and always for case 0: a new file). */
static void progress_show(progress *pg, const char *file, size_t done, size_t total)
{
    double t = now_s();
    if (!pg->on || (done && done < total && t - pg->last < 0.1)) /* the last case always shows */
        return;
    pg->last = t;
    progress_clear(pg);
    if (pg->files)
        fprintf(stderr, "[%zu/%zu] ", pg->file, pg->files);
    if (total)
        fprintf(stderr, "%s: case %zu/%zu", file, done, total);
    else
        fputs(file, stderr);
    fflush(stderr);
    pg->drawn = true;
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
    char *shrunk_dir; /* --keep DIR, or a temporary directory made for the first shrunk case */
    wfb_verify_written written;
    wfb_vevent *events;
    size_t event_count;
    const vmode *pred_mode;
    wfb_vpool *pool; /* where runs run (docs/verify.md "Isolation") */
    bool *seen; /* per decision outcome: some case's legacy run reached it */
    char **scripted; /* every event (short name) some case's script holds */
    size_t scripted_count;
} job;

/* The shrinker's oracle: does the case still diverge in pred_mode? */
static wf_status still_diverges(void *ud, const wfb_vcase *c, bool *diverges, wf_error *err)
{
    job *j = ud;
    wfb_vobs lo, mo;
    wfb_vdiff d;
    bool equal = true;
    memset(&mo, 0, sizeof mo);
    wf_status rc = wfb_vpool_submit(j->pool, j->l, NULL, c, &lo, err);
    if (rc == WF_OK)
        rc = wfb_vpool_submit(j->pool, NULL, j->pred_mode->m, c, &mo, err);
    if (rc == WF_OK)
        rc = wfb_vpool_wait(j->pool, err);
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

/* Where shrunk cases go: --keep DIR, else a directory of their own under $TMPDIR, left for the
 * user (its path is in the report), never the working directory. */
static wf_status make_shrunk_dir(job *j, wf_error *err)
{
    if (j->shrunk_dir)
        return WF_OK;
    char tmpl[4096];
    const char *tmp = getenv("TMPDIR");
    if (j->o->keep) {
        mkdir(j->o->keep, 0777);
        snprintf(tmpl, sizeof tmpl, "%s", j->o->keep);
    } else {
        snprintf(tmpl, sizeof tmpl, "%s/wfb-shrunk-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(tmpl))
            return wf_error_set(err, WF_E_IO, &(wf_loc){tmpl, 0, 0},
                                "cannot create a directory for shrunk cases: %s", strerror(errno));
    }
    if (!(j->shrunk_dir = wf_strdup(tmpl)))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return WF_OK;
}

/* Shrink the first diverging case of a mode and write it as a --cases file. */
static wf_status shrink_and_write(job *j, const vmode *md, const wfb_vcase *c, char **written,
                                  wf_error *err)
{
    wfb_vcase small;
    wf_status rc = wfb_vcase_copy(c, &small, err);
    j->pred_mode = md;
    if (rc == WF_OK)
        rc = wfb_vshrink_with(&small, md->m, still_diverges, j,
                              &(wfb_vshrink_opts){.max_tries = 300, .no_null = j->o->no_null},
                              err);
    char path[4096];
    if (rc == WF_OK)
        rc = make_shrunk_dir(j, err);
    snprintf(path, sizeof path, "%s/%s.%s.shrunk.json", j->shrunk_dir ? j->shrunk_dir : ".",
             j->stem, md->name);
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

/* Run case c on the legacy definition and in every mode, at once (each run in its own
 * process); every observation is valid for wfb_vobs_fini whatever this returns. */
static wf_status run_case(job *j, const wfb_vcase *c, wfb_vobs *lo, wfb_vobs *mos, wf_error *err)
{
    memset(lo, 0, sizeof *lo);
    memset(mos, 0, j->mode_count * sizeof *mos);
    if (stop_signal)
        return wf_error_set(err, WF_E_STATE, NULL, "interrupted");
    wf_status rc = wfb_vpool_submit(j->pool, j->l, NULL, c, lo, err);
    for (size_t k = 0; rc == WF_OK && k < j->mode_count; k++)
        rc = wfb_vpool_submit(j->pool, NULL, j->modes[k].m, c, &mos[k], err);
    wf_status wrc = wfb_vpool_wait(j->pool, err); /* also after a failed submit */
    return rc == WF_OK ? wrc : rc;
}

static const char *short_event(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

static bool scripted(const job *j, const char *event)
{
    for (size_t i = 0; i < j->scripted_count; i++)
        if (strcmp(j->scripted[i], short_event(event)) == 0)
            return true;
    return false;
}

/* Remember the events of c's script (a branch no script can reach is reported so). */
static bool note_script(job *j, const wfb_vcase *c)
{
    for (size_t i = 0; i < c->event_count; i++)
        if (!scripted(j, c->events[i].name) &&
            !wfb__push_str(&j->scripted, &j->scripted_count, short_event(c->events[i].name)))
            return false;
    return true;
}

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
        wfb_vobs lo, mos[2];
        bool case_diverged = false;
        rc = run_case(j, c, &lo, mos, err);
        if (rc == WF_OK && !gen && lo.error) /* a --cases input the workflow does not take */
            rc = wf_error_set(err, WF_E_USAGE, &(wf_loc){j->o->cases, 0, 0}, "case '%s': %s",
                              c->name, lo.error);
        if (rc == WF_OK && lo.status) {
            fr->crashed += strcmp(lo.status, "Crashed") == 0;
            fr->exited += strcmp(lo.status, "Exited") == 0;
            fr->timed_out += strcmp(lo.status, "TimedOut") == 0;
        }
        if (rc == WF_OK && !note_script(j, c))
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        for (size_t h = 0; rc == WF_OK && h < lo.hit_count; h++)
            j->seen[lo.hits[h]] = true;
        if (rc == WF_OK && gen)
            rc = wfb_vgen_feedback(gen, c, &lo, err);
        for (size_t k = 0; rc == WF_OK && k < j->mode_count; k++) {
            const wfb_vobs *mo = &mos[k];
            wfb_vdiff d;
            bool equal;
            rc = wfb_vcompare(&lo, mo, j->o->tolerance, &equal, &d, err);
            if (rc == WF_OK && (!gen || i < KEEP_FIRST || (!equal && kept < KEEP_FIRST)) &&
                (rc = keep_obs(j, c->name, j->modes[k].name, mo, err)) != WF_OK)
                wfb_vdiff_fini(&d);
            if (rc != WF_OK)
                break;
            char *path = NULL;
            if (!equal) {
                fr->status = "diverged";
                case_diverged = true;
                if (!shrunk[k]) {
                    shrunk[k] = true;
                    rc = shrink_and_write(j, &j->modes[k], c, &path, err);
                }
            }
            if (d.what) {
                add_row(rep, j->file, c->name, j->modes[k].name, &d, path);
            } else {
                pass_row(rep, fr, c->name, j->modes[k].name);
                wfb_vdiff_fini(&d);
                wf_free(path);
            }
        }
        if (rc == WF_OK && (!gen || i < KEEP_FIRST || (case_diverged && kept < KEEP_FIRST)))
            rc = keep_obs(j, c->name, "legacy", &lo, err);
        kept += gen && i >= KEEP_FIRST && case_diverged;
        wfb_vobs_fini(&lo);
        for (size_t k = 0; k < j->mode_count; k++)
            wfb_vobs_fini(&mos[k]);
        if (gen)
            wfb_vcase_fini(&gc);
        fr->cases++;
        progress_show(&rep->pg, j->file, i + 1, n);
        fr->diverged_cases += case_diverged;
    }
    return rep->oom && rc == WF_OK ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory") : rc;
}

/* Why no case reached p: what the definition shows, else an event no script has. */
static char *why_unseen(const job *j, const wfb_vpoint *p)
{
    char text[600];
    if (p->why)
        return wf_strdup(p->why);
    if (!p->event || scripted(j, p->event))
        return NULL;
    snprintf(text, sizeof text, "no case's event script has %s", p->event);
    return wf_strdup(text);
}

static bool add_unseen(const job *j, coverage *cv, const wfb_vpoint *p)
{
    unseen *grown = wf_realloc(cv->unseen, (cv->unseen_count + 1) * sizeof *grown);
    if (!grown)
        return false;
    cv->unseen = grown;
    unseen *u = &grown[cv->unseen_count++];
    char where[4200];
    snprintf(where, sizeof where, "%s:%u:%u", p->where.file ? p->where.file : j->file,
             p->where.line, p->where.col);
    u->kind = p->kind;
    u->activity = wf_strdup(p->activity);
    u->outcome = wf_strdup(p->outcome);
    u->where = wf_strdup(where);
    u->why = why_unseen(j, p);
    bool want_why = p->why || (p->event && !scripted(j, p->event));
    return u->activity && u->outcome && u->where && (u->why || !want_why);
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
        } else if (!add_unseen(j, cv, p)) {
            return false;
        }
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
    for (size_t i = 0; i < cv->unseen_count; i++) {
        const unseen *u = &cv->unseen[i];
        wf_buf_addf(b, "%s%s %s %s at %s", i ? ", " : "; not seen: ", wfb_vkind_name(u->kind),
                    u->activity, u->outcome, u->where);
        if (u->why)
            wf_buf_addf(b, " (%s)", u->why);
    }
}

static char *coverage_note(const job *j, const fileres *fr, coverage *cv)
{
    wf_buf b;
    wf_buf_init(&b);
    if (!measure(j, cv))
        b.oom = true;
    coverage_text(&b, cv);
    if (fr->crashed || fr->exited || fr->timed_out) /* docs/verify.md "Isolation" */
        wf_buf_addf(&b, "; legacy runs that did not end by themselves: %zu crashed, %zu called "
                        "exit(), %zu timed out",
                    fr->crashed, fr->exited, fr->timed_out);
    if (j->skipped)
        wf_buf_addf(&b, "; interop mode skipped: %s", j->skipped);
    return wf_buf_detach(&b, NULL);
}

/* One event script against the legacy workflow's events, before any case runs: a payload
 * the event payload rule refuses is an input error of the file (as `run-legacy --event`). */
static wf_status check_script(const job *j, const char *case_name, const wfb_vevent *events,
                              size_t count, const char *path, wf_error *err)
{
    for (size_t i = 0; i < count; i++) {
        wf_error why = WF_ERROR_INIT;
        wf_status rc = wfb_vlegacy_check_event(j->l, &events[i], &why);
        if (rc == WF_E_NOMEM)
            return wf_error_set(err, rc, NULL, "out of memory");
        if (rc != WF_OK)
            return wf_error_set(err, WF_E_TYPE, &(wf_loc){path, 0, 0},
                                "%s%s%sevent %zu (%s): %s", case_name ? "case '" : "",
                                case_name ? case_name : "", case_name ? "': " : "", i + 1,
                                events[i].name, why.message);
    }
    return WF_OK;
}

static wf_status check_scripts(const job *j, const wfb_vcase *cases, size_t n, const char *path,
                               wf_error *err)
{
    if (!cases)
        return check_script(j, NULL, j->events, j->event_count, path, err);
    for (size_t i = 0; i < n; i++) {
        wf_status rc = check_script(j, cases[i].name, cases[i].events, cases[i].event_count,
                                    path, err);
        if (rc != WF_OK)
            return rc;
    }
    return WF_OK;
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
        if (rc == WF_OK)
            wfb_vgen_set_null_rate(gen, o->no_null ? 0 : o->null_rate);
    }
    if (rc == WF_OK)
        rc = check_scripts(&j, cases, n, o->cases ? o->cases : events, &err);
    if (rc == WF_OK) {
        wfb_vpool_opts po = WFB_VPOOL_OPTS_INIT;
        po.jobs = o->jobs;
        po.timeout_s = o->timeout_s;
        po.in_process = o->no_isolate;
        po.stop = &stop_signal;
        rc = wfb_vpool_create(&po, &j.pool, &err);
    }
    if (rc == WF_OK) {
        fr->status = "equivalent";
        rc = run_cases(&j, cases, n, gen, rep, fr, &err);
    }
    if (rc == WF_OK) {
        fr->note = coverage_note(&j, fr, &fr->cov);
    } else {
        fr->status = "error";
        progress_clear(&rep->pg);
        fr->reported = wfb_report_diags(diags, false) != 0;
        fr->note = error_text(&err);
        fr->error = err;
    }
    rep->oom |= !fr->note;
    fr->seconds = now_s() - t0;
    wfb_vpool_destroy(j.pool);
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
    wf_free(j.shrunk_dir);
    wfb_vlegacy_destroy(j.l);
    wf_free(j.seen);
    wfb__free_strs(j.scripted, j.scripted_count);
    wf_free(j.skipped);
    wf_diags_destroy(diags);
}

/* ---- printing ---------------------------------------------------------------------------- */
static json_t *coverage_kinds(const coverage *sum)
{
    json_t *kinds = json_object();
    bool ok = kinds != NULL;
    for (int k = 0; ok && k < WFB_VK_COUNT; k++)
        if (sum->kind_total[k])
            ok = wf_jsonw_set(kinds, wfb_vkind_name((wfb_vkind)k),
                              json_pack("{s:I, s:I}", "covered", (json_int_t)sum->kind_covered[k],
                                        "total", (json_int_t)sum->kind_total[k]));
    if (!ok)
        json_decref(kinds);
    return ok ? kinds : NULL;
}

/* The activities of f no case reached; with_file: each names f's file first. */
static bool add_uncovered(json_t *list, const fileres *f, bool with_file)
{
    bool ok = true;
    for (size_t u = 0; ok && u < f->cov.unseen_count; u++) {
        json_t *item = with_file ? json_pack("{s:o}", "file", wf_jsonw_str(f->file)) : json_object();
        ok = wf_jsonw_set(item, "kind", json_string(wfb_vkind_name(f->cov.unseen[u].kind))) &&
             wf_jsonw_set(item, "activity", wf_jsonw_str(f->cov.unseen[u].activity)) &&
             wf_jsonw_set(item, "outcome", wf_jsonw_str(f->cov.unseen[u].outcome)) &&
             wf_jsonw_set(item, "where", wf_jsonw_str(f->cov.unseen[u].where)) &&
             wf_jsonw_set(item, "why", wf_jsonw_str(f->cov.unseen[u].why)); /* NULL: null */
        if (!ok)
            json_decref(item);
        ok = ok && wf_jsonw_append(list, item);
    }
    return ok;
}

/* {"covered", "total", "kinds": {KIND: {"covered", "total"}}, "uncovered": [{["file",] "kind",
 * "activity", "outcome"}]}: of one file (file NULL), or of every file of r summed. */
static json_t *json_coverage(const report *r, const fileres *file)
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
    json_t *uncovered = json_array();
    bool ok = uncovered != NULL;
    for (size_t i = 0; ok && i < r->file_count; i++)
        if (!file || file == &r->files[i])
            ok = add_uncovered(uncovered, &r->files[i], !file);
    json_t *cov = ok ? json_pack("{s:I, s:I, s:o, s:O}", "covered", (json_int_t)sum.covered,
                                 "total", (json_int_t)sum.total, "kinds", coverage_kinds(&sum),
                                 "uncovered", uncovered)
                     : NULL;
    json_decref(uncovered);
    return cov;
}

static json_t *divergence_json(const row *w)
{
    json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "file", wf_jsonw_str(w->file), "case",
                          wf_jsonw_str(w->cas), "mode", wf_jsonw_str(w->mode), "what",
                          wf_jsonw_str(w->diff.what), "legacy", wf_jsonw_str(w->diff.legacy),
                          "modern", wf_jsonw_str(w->diff.modern));
    if (o && w->shrunk && !wf_jsonw_set(o, "shrunk", wf_jsonw_str(w->shrunk))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *file_json(const report *r, const fileres *f)
{
    char seconds[32];
    snprintf(seconds, sizeof seconds, "%.3f", f->seconds);
    return json_pack("{s:o, s:s, s:I, s:o, s:o, s:o}", "file", wf_jsonw_str(f->file), "status",
                     f->status, "cases", (json_int_t)f->cases, "seconds",
                     wf_jsonw_number(seconds), "note", wf_jsonw_str(f->note ? f->note : ""),
                     "coverage", json_coverage(r, f));
}

static void print_json(FILE *out, const report *r, size_t cases, const char *status, bool dir)
{
    json_t *divs = json_array(), *files = dir ? json_array() : NULL;
    bool ok = divs && (files || !dir);
    for (size_t i = 0; ok && i < r->row_count; i++)
        if (r->rows[i].diff.what)
            ok = wf_jsonw_append(divs, divergence_json(&r->rows[i]));
    for (size_t i = 0; ok && dir && i < r->file_count; i++)
        ok = wf_jsonw_append(files, file_json(r, &r->files[i]));
    json_t *root = ok ? json_pack("{s:s, s:I, s:O}", "status", status, "cases",
                                  (json_int_t)cases, "divergences", divs)
                      : NULL;
    if (root && dir)
        ok = wf_jsonw_set(root, "files", json_incref(files));
    if (root && ok)
        ok = wf_jsonw_set(root, "coverage", json_coverage(r, NULL));
    if (root && ok)
        wf_jsonw_print(out, root, WF_JSONW_SPACED);
    json_decref(root);
    json_decref(divs);
    json_decref(files);
}

/* Values longer than this are shown as a window around their first difference. */
#define SHOW_MAX 120
#define SHOW_AROUND 32

/* The byte offset where a and b first differ (the shorter length when one is a prefix). */
static size_t first_difference(const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] && a[i] == b[i])
        i++;
    return i;
}

/* Back to the start of a UTF-8 character. */
static size_t char_start(const char *s, size_t at)
{
    while (at > 0 && ((unsigned char)s[at] & 0xC0) == 0x80)
        at--;
    return at;
}

/* "    legacy: TEXT", or for a long one "    legacy: …WINDOW… (N bytes)", the window starting
 * SHOW_AROUND bytes before the first difference. */
static void print_side(FILE *out, const char *label, const char *text, size_t diff_at)
{
    size_t len = strlen(text);
    if (len <= SHOW_MAX) {
        fprintf(out, "    %s: %s\n", label, text);
        return;
    }
    size_t from = char_start(text, diff_at > SHOW_AROUND ? diff_at - SHOW_AROUND : 0);
    size_t to = diff_at + SHOW_AROUND < len ? char_start(text, diff_at + SHOW_AROUND) : len;
    fprintf(out, "    %s: %s%.*s%s (%zu bytes)\n", label, from ? "\u2026" : "", (int)(to - from),
            text + from, to < len ? "\u2026" : "", len);
}

/* One block per diverging case: its first divergence (long values shortened around where
 * they first differ), then how many of its other modes diverged too. */
static void print_case(FILE *out, const report *r, size_t first)
{
    const row *w = &r->rows[first];
    fprintf(out, "%s: case %s [%s]: diverged: %s\n", w->file, w->cas, w->mode, w->diff.what);
    size_t at = first_difference(w->diff.legacy, w->diff.modern);
    print_side(out, "legacy", w->diff.legacy, at);
    print_side(out, "modern", w->diff.modern, at);
    if (strlen(w->diff.legacy) > SHOW_MAX || strlen(w->diff.modern) > SHOW_MAX)
        fprintf(out, "    first difference at byte %zu (--json and --keep have both in full)\n",
                at);
    for (size_t k = first + 1; k < r->row_count; k++) {
        const row *o = &r->rows[k];
        if (strcmp(o->file, w->file) != 0 || strcmp(o->cas, w->cas) != 0)
            break;
        if (o->diff.what)
            fprintf(out, "    also diverged in [%s]: %s\n", o->mode, o->diff.what);
    }
    for (size_t k = first; k < r->row_count; k++) {
        const row *o = &r->rows[k];
        if (strcmp(o->file, w->file) != 0 || strcmp(o->cas, w->cas) != 0)
            break;
        if (o->shrunk)
            fprintf(out, "    shrunk case [%s]: %s\n", o->mode, o->shrunk);
    }
}

/* "4 files: 3 equivalent, 1 diverged, 0 errors; 400 cases in 8.61s" */
static void print_summary(FILE *out, const report *r)
{
    size_t counts[3] = {0, 0, 0}, cases = 0; /* equivalent, diverged, error */
    double seconds = 0;
    for (size_t i = 0; i < r->file_count; i++) {
        const fileres *f = &r->files[i];
        counts[strcmp(f->status, "equivalent") == 0 ? 0 : strcmp(f->status, "diverged") == 0 ? 1 : 2]++;
        cases += f->cases;
        seconds += f->seconds;
    }
    fprintf(out, "%zu file%s: %zu equivalent, %zu diverged, %zu error%s; %zu cases in %.2fs\n",
            r->file_count, r->file_count == 1 ? "" : "s", counts[0], counts[1], counts[2],
            counts[2] == 1 ? "" : "s", cases, seconds);
}

/* The table; the first MAX_SHOWN diverging cases in full (--json and --junit have them all). */
#define MAX_SHOWN 10
static void print_human(FILE *out, const report *r, bool dir)
{
    size_t shown = 0, hidden = 0;
    const row *last = NULL; /* the last diverging row seen: a case's rows are consecutive */
    for (size_t i = 0; i < r->row_count; i++) {
        const row *w = &r->rows[i];
        if (!w->diff.what)
            continue;
        bool same_case = last && strcmp(last->file, w->file) == 0 && strcmp(last->cas, w->cas) == 0;
        last = w;
        if (same_case)
            continue;
        if (shown == MAX_SHOWN)
            hidden++;
        else if (++shown)
            print_case(out, r, i);
    }
    if (hidden)
        fprintf(out, "... and %zu more diverging cases\n", hidden);
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
    if (dir)
        print_summary(out, r);
}

static void junit_property(wf_xmlw *x, const char *name, const char *value)
{
    wf_xmlw_open(x, "property");
    wf_xmlw_attr(x, "name", name);
    wf_xmlw_attr(x, "value", value);
    wf_xmlw_close(x);
}

static void junit_coverage(wf_xmlw *x, const coverage *cv)
{
    char name[64], value[1200];
    wf_xmlw_open(x, "properties");
    snprintf(value, sizeof value, "%zu/%zu", cv->covered, cv->total);
    junit_property(x, "coverage", value);
    for (int k = 0; k < WFB_VK_COUNT; k++)
        if (cv->kind_total[k]) {
            snprintf(name, sizeof name, "coverage.%s", wfb_vkind_name((wfb_vkind)k));
            snprintf(value, sizeof value, "%zu/%zu", cv->kind_covered[k], cv->kind_total[k]);
            junit_property(x, name, value);
        }
    for (size_t i = 0; i < cv->unseen_count; i++) {
        const unseen *u = &cv->unseen[i];
        int n = snprintf(value, sizeof value, "%s %s %s at %s", wfb_vkind_name(u->kind),
                         u->activity, u->outcome, u->where);
        if (u->why && n > 0 && (size_t)n < sizeof value)
            snprintf(value + n, sizeof value - (size_t)n, " (%s)", u->why);
        junit_property(x, "uncovered", value);
    }
    wf_xmlw_close(x);
}

/* Put the streamed test cases in [from, to) of `passed` (to -1: to its end) into x. */
static bool copy_passed(FILE *passed, long from, long to, wf_xmlw *x)
{
    if (fseek(passed, 0, SEEK_END) != 0)
        return false;
    long end = to < 0 ? ftell(passed) : to;
    if (end < from || fseek(passed, from, SEEK_SET) != 0)
        return false;
    char chunk[8193];
    for (long left = end - from; left > 0;) {
        size_t want = left < (long)sizeof chunk - 1 ? (size_t)left : sizeof chunk - 1;
        if (fread(chunk, 1, want, passed) != want)
            return false;
        chunk[want] = '\0';
        wf_xmlw_raw(x, chunk); /* written by pass_row through the same writer */
        left -= (long)want;
    }
    return true;
}

/* A diverging (case, mode), or one that ran equivalent but was held as a row. */
static void junit_row(wf_xmlw *x, const char *file, const row *w, bool *oom)
{
    junit_testcase(x, file, w->cas, w->mode, oom);
    if (w->diff.what) {
        wf_buf t;
        wf_buf_init(&t);
        wf_buf_addf(&t, "legacy: %s\nmodern: %s", w->diff.legacy ? w->diff.legacy : "",
                    w->diff.modern ? w->diff.modern : "");
        if (w->shrunk)
            wf_buf_addf(&t, "\nshrunk case: %s", w->shrunk);
        *oom |= t.oom;
        wf_xmlw_open(x, "failure");
        wf_xmlw_attr(x, "message", w->diff.what);
        wf_xmlw_text(x, t.data);
        wf_xmlw_close(x);
        wf_buf_fini(&t);
    }
    wf_xmlw_close(x);
}

/* One <testsuite> per file: counts, coverage, a load error, rows, then the streamed passes. */
static bool junit_suite(wf_xmlw *x, const report *r, size_t i, bool *oom)
{
    const fileres *f = &r->files[i];
    bool error = strcmp(f->status, "error") == 0;
    size_t tests = f->passed_rows, failures = 0;
    for (size_t k = 0; k < r->row_count; k++)
        if (strcmp(r->rows[k].file, f->file) == 0) {
            tests++;
            failures += r->rows[k].diff.what != NULL;
        }
    wf_xmlw_open(x, "testsuite");
    wf_xmlw_attr(x, "name", f->file);
    wf_xmlw_attrf(x, "tests", "%zu", tests + error);
    wf_xmlw_attrf(x, "failures", "%zu", failures);
    wf_xmlw_attrf(x, "errors", "%d", error);
    wf_xmlw_attrf(x, "time", "%.3f", f->seconds);
    if (f->cov.total) /* decision coverage (docs/verify.md "Coverage") */
        junit_coverage(x, &f->cov);
    if (error) {
        wf_xmlw_open(x, "testcase");
        wf_xmlw_attr(x, "classname", "verify");
        wf_xmlw_attr(x, "name", "load");
        wf_xmlw_open(x, "error");
        wf_xmlw_attr(x, "message", f->note ? f->note : "");
        wf_xmlw_close(x);
        wf_xmlw_close(x);
    }
    for (size_t k = 0; k < r->row_count; k++)
        if (strcmp(r->rows[k].file, f->file) == 0)
            junit_row(x, f->file, &r->rows[k], oom);
    long to = i + 1 < r->file_count ? r->files[i + 1].passed_from : -1;
    bool read = !r->passed || copy_passed(r->passed, f->passed_from, to, x);
    wf_xmlw_close(x);
    return read;
}

/* The JUnit file through the common writer (common/wf_xmlw.h): well-formed whatever the
 * case names and values hold. */
static wf_status write_junit(const char *path, const report *r, wf_error *err)
{
    wf_xmlw_opts o = WF_XMLW_OPTS_INIT;
    o.indent = true;
    wf_xmlw *x = NULL;
    if (wf_xmlw_create(&o, &x, err) != WF_OK)
        return WF_E_NOMEM;
    bool unread = false, oom = false;
    wf_xmlw_declaration(x);
    wf_xmlw_open(x, "testsuites");
    wf_xmlw_attr(x, "name", "wfbridge verify");
    for (size_t i = 0; i < r->file_count; i++)
        unread |= !junit_suite(x, r, i, &oom);
    wf_xmlw_close(x);
    wf_buf b;
    wf_buf_init(&b);
    wf_status rc = WF_OK;
    if (unread || r->passed_failed) {
        rc = wf_error_set(err, WF_E_IO, NULL, "%s: the equivalent test cases were lost: %s",
                          path, r->passed_failed ? "a temporary file could not be written"
                                                 : "a temporary file could not be read back");
    } else if (oom) {
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    } else if ((rc = wf_xmlw_finish(x, &b, err)) == WF_OK) {
        rc = wfc_write_atomic(path, b.data, b.len, err); /* also a device: never renamed over */
    }
    wf_xmlw_destroy(x);
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

static void on_stop_signal(int sig)
{
    stop_signal = sig;
}

/* SIGINT, SIGTERM, SIGHUP stop verify between runs (a run going on is killed), so that the
 * temporary directories are removed; verify then dies of the signal. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define STOP_SIGNALS (sizeof stop_signals / sizeof stop_signals[0])

static void catch_stop_signals(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal; /* no SA_RESTART: a wait for a run returns at once */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < STOP_SIGNALS; i++)
        sigaction(stop_signals[i], &sa, &old[i]);
}

static void release_stop_signals(const struct sigaction *old)
{
    for (size_t i = 0; i < STOP_SIGNALS; i++)
        sigaction(stop_signals[i], &old[i], NULL);
    if (!stop_signal)
        return;
    fprintf(stderr, "wfbridge verify: stopped by %s\n", strsignal(stop_signal));
    signal(stop_signal, SIG_DFL);
    raise(stop_signal);
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
    if (o.junit && !(rep.passed = tmpfile())) {
        wf_libpath_destroy(libpath);
        return wfb_error("--junit: cannot create a temporary file: %s", strerror(errno));
    }
    struct sigaction old_actions[STOP_SIGNALS];
    catch_stop_signals(old_actions);
    struct stat st;
    bool dir = stat(o.in, &st) == 0 && S_ISDIR(st.st_mode);
    if (!dir) {
        rep.pg.on = isatty(STDERR_FILENO);
        verify_file(&o, o.in, o.converted, libpath, &rep);
    } else {
        char **files = NULL;
        size_t nf = 0;
        code = wfb_walk(o.in, ".xoml", false, &files, &nf);
        for (size_t i = 0; !rep.oom && !stop_signal && i < nf; i++) {
            char path[8200], conv[8200];
            snprintf(path, sizeof path, "%s/%s", o.in, files[i]);
            if (o.converted)
                snprintf(conv, sizeof conv, "%s/%.*s.xaml", o.converted,
                         (int)(strlen(files[i]) - 5), files[i]);
            rep.pg = (progress){.on = isatty(STDERR_FILENO), .file = i + 1, .files = nf};
            progress_show(&rep.pg, path, 0, 0);
            verify_file(&o, path, o.converted ? conv : NULL, libpath, &rep);
            progress_clear(&rep.pg);
        }
        wfb_walk_free(files, nf);
        if (!rep.oom && code == 0 && nf == 0)
            code = wfb_usage_error("no .xoml file below '%s'", o.in);
    }
    progress_clear(&rep.pg);
    size_t cases = 0;
    bool diverged = false, error = false;
    for (size_t i = 0; i < rep.file_count; i++) {
        cases += rep.files[i].cases;
        diverged |= strcmp(rep.files[i].status, "diverged") == 0;
        error |= strcmp(rep.files[i].status, "error") == 0;
    }
    if (!dir && error && !rep.files[0].reported && !stop_signal)
        wfb_fail(&rep.files[0].error);
    if (rep.oom) {
        code = wfb_usage_error("out of memory");
    } else if (stop_signal) {
        code = 2; /* nothing is reported: verify dies of the signal below */
    } else if (code == 0) {
        if (o.junit && write_junit(o.junit, &rep, &err) != WF_OK)
            code = wfb_report(&err);
        if (!dir && error) {
            code = code ? code : 2;
        } else {
            print_human(o.json ? stderr : stdout, &rep, dir);
            if (o.json) {
                print_json(stdout, &rep, cases,
                           error      ? "error"
                           : diverged ? "diverged"
                                      : "equivalent",
                           dir);
                wfb_json_printed();
            }
            code = code ? code : error ? 2 : diverged ? 1 : 0;
        }
    }
    report_fini(&rep);
    wf_libpath_destroy(libpath);
    release_stop_signals(old_actions);
    return code;
}

/* wfb_convert.c — `wfbridge convert`: legacy .xoml (+ .rules) files to modern .xaml, one file
 * or a whole directory tree, with the migration report (docs/convert.md). The converter
 * decides; this file only walks directories, writes files atomically and prints. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../converter/wfc_convert.h"
#include "../converter/wfc_output.h"
#include "../converter/wfc_report.h"
#include "../converter/wfc_scaffold.h"
#include "wfb_cli.h"
#include "wfb_interop.h"

#define VERB "convert"

static const char usage_text[] =
    "usage: wfbridge convert IN.xoml|DIR [--rules FILE] [--lib-path DIR] [-o OUT]\n"
    "         [--report REPORT.json] [--csv REPORT.csv] [--md REPORT.md]\n"
    "         [--html REPORT.html] [--scaffold DIR] [--check]\n"
    "         [--fail-on-loss] [--interop] [--json]\n"
    "\n"
    "Convert legacy (WF3 XOML) workflows to modern (WF4 XAML) ones. Each result is loaded\n"
    "by the modern runtime before it is written; a failed file leaves no output.\n"
    "\n"
    "  --rules FILE      the .rules file (default: IN.rules beside IN.xoml, if present)\n"
    "  --lib-path DIR    where NAME.activities.xml and libNAME.so are found (dir1:dir2);\n"
    "                    default $WFBRIDGE_LIB_PATH\n"
    "  -o, --output OUT  the .xaml to write (default IN.xaml beside IN.xoml), or an\n"
    "                    existing directory to write it into; with a directory input,\n"
    "                    the output directory that mirrors its tree\n"
    "  --report FILE     write the migration report as JSON (docs/convert.md)\n"
    "  --csv FILE        the same report as CSV, one row per activity, diagnostic, loss\n"
    "  --md FILE         the same report as Markdown (summary table, then per file)\n"
    "  --html FILE       the same report as one HTML page, with the legacy and the converted\n"
    "                    workflow drawn side by side (needs Graphviz 'dot' for the pictures)\n"
    "  --scaffold DIR    first write the native code the files need but no type library on\n"
    "                    the library path provides: DIR/NAME.activities.xml per assembly,\n"
    "                    NAME.c with TODO bodies and a Makefile (make -C DIR); then\n"
    "                    convert against them; a later run only adds to DIR\n"
    "  --check           convert, validate and report without writing definitions\n"
    "  --fail-on-loss    exit 1 when anything beyond designer-only data was lost\n"
    "  --interop         host every custom activity through the Interop activity\n"
    "  --json            print a summary object as the last line of stdout\n"
    "\n"
    "Exit status: 0 nothing failed, 1 a file failed (or lost something, with\n"
    "--fail-on-loss), 2 usage or input error.\n";

typedef struct opts {
    const char *input, *rules, *lib_path, *output, *report, *csv, *md, *html, *scaffold;
    bool check, fail_on_loss, interop, json;
} opts;

enum {
    OPT_RULES = 256,
    OPT_LIB,
    OPT_REPORT,
    OPT_CSV,
    OPT_MD,
    OPT_HTML,
    OPT_SCAFFOLD,
    OPT_CHECK,
    OPT_LOSS,
    OPT_INTEROP,
    OPT_JSON
};

static int parse_args(int argc, char **argv, opts *o)
{
    static const struct option longopts[] = {
        {"rules", required_argument, NULL, OPT_RULES},
        {"lib-path", required_argument, NULL, OPT_LIB},
        {"output", required_argument, NULL, 'o'},
        {"report", required_argument, NULL, OPT_REPORT},
        {"csv", required_argument, NULL, OPT_CSV},
        {"md", required_argument, NULL, OPT_MD},
        {"html", required_argument, NULL, OPT_HTML},
        {"scaffold", required_argument, NULL, OPT_SCAFFOLD},
        {"check", no_argument, NULL, OPT_CHECK},
        {"fail-on-loss", no_argument, NULL, OPT_LOSS},
        {"interop", no_argument, NULL, OPT_INTEROP},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = wfb_getopt_short(argc, argv, ":ho:", longopts)) != -1) {
        switch (ch) {
        case 'h':
            return wfb_help(usage_text), -1;
        case OPT_RULES:
            o->rules = optarg;
            break;
        case OPT_LIB:
            o->lib_path = optarg;
            break;
        case 'o':
            o->output = optarg;
            break;
        case OPT_REPORT:
            o->report = optarg;
            break;
        case OPT_CSV:
            o->csv = optarg;
            break;
        case OPT_MD:
            o->md = optarg;
            break;
        case OPT_HTML:
            o->html = optarg;
            break;
        case OPT_SCAFFOLD:
            o->scaffold = optarg;
            break;
        case OPT_CHECK:
            o->check = true;
            break;
        case OPT_LOSS:
            o->fail_on_loss = true;
            break;
        case OPT_INTEROP:
            o->interop = true;
            break;
        case OPT_JSON:
            o->json = true;
            break;
        default:
            return 2; /* reported by wfb_getopt */
        }
    }
    if (optind + 1 != argc)
        return wfb_usage_error(optind == argc ? "no input file or directory"
                                                    : "only one input may be given");
    o->input = argv[optind];
    return 0;
}

/* ---- the files of a directory tree, sorted so the run is deterministic ----------------------- */
typedef struct file_list {
    char **paths;
    size_t count, cap;
} file_list;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool list_add(file_list *l, const char *path)
{
    if (l->count == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 32;
        char **n = realloc(l->paths, ncap * sizeof *n);
        if (!n)
            return false;
        l->paths = n;
        l->cap = ncap;
    }
    return (l->paths[l->count++] = strdup(path)) != NULL;
}

static bool collect(const char *dir, file_list *l)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        size_t n = strlen(e->d_name);
        if (S_ISDIR(st.st_mode))
            ok = collect(path, l);
        else if (n > 5 && strcmp(e->d_name + n - 5, ".xoml") == 0)
            ok = list_add(l, path);
    }
    closedir(d);
    return ok;
}

static void list_free(file_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->paths[i]);
    free(l->paths);
}

/* ---- one file ---------------------------------------------------------------------------------
 */
typedef struct batch {
    opts o;
    wf_libpath *libpath;
    wfc_scaffold *scaffold; /* --scaffold: what it wrote, for each file's report entry */
    wfc_report *report;
    size_t counts[3];
    bool input_error; /* a file failed to load (exit 2 for a single file) */
    bool lost;
} batch;

/* Print the file's error and warning diagnostics in the contract form. */
static void print_diags(const wfc_file *f)
{
    for (size_t i = 0; i < wfc_file_diag_count(f); i++) {
        wfc_severity sev;
        const char *rule, *msg;
        unsigned line, col;
        wfc_file_diag(f, i, &sev, &rule, &line, &col, &msg);
        if (sev == WFC_INFO)
            continue;
        wf_error e = WF_ERROR_INIT;
        wf_loc at = {wfc_file_diag_file(f, i), line, col};
        wf_error_set(&e, WF_E_UNSUPPORTED, &at, "%s%s [%s]", sev == WFC_REVIEW ? "review: " : "",
                     msg, rule);
        if (sev == WFC_ERROR)
            wfb_report(&e);
        else
            wfb_report_warning(&e);
    }
}

/* --scaffold: what the scaffold wrote for this file, as its report entry's work list. */
static void scaffold_notes(batch *b, wfc_file *f, const char *input)
{
    wfc_scaffold_note n;
    for (size_t i = 0; b->scaffold && wfc_scaffold_note_at(b->scaffold, input, i, &n); i++) {
        bool conflict = strcmp(n.kind, "conflict") == 0;
        wfc_file_add_diag(f, conflict ? WFC_WARNING : WFC_INFO, n.line, n.col, "scaffold",
                          "%s: %s", n.kind, n.text);
    }
}

/* The files generated for Interop go beside the XAML (docs/convert.md "Interop"). */
static wf_status write_sidecars(const char *out, const wfc_sidecars *side, wf_error *err)
{
    const char *slash = strrchr(out, '/');
    for (size_t i = 0; i < side->count; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - out + 1) : 0, out,
                 side->items[i].name);
        wf_status st = wfc_write_atomic(path, side->items[i].text, side->items[i].len, err);
        if (st != WF_OK)
            return st;
    }
    return WF_OK;
}

static void convert_one(batch *b, const char *input, const char *in_dir)
{
    wfc_file *f = wfc_report_add_file(b->report, input);
    if (!f)
        return;
    char out[4096];
    wf_error err = WF_ERROR_INIT;
    struct stat sb;
    bool into_dir = b->o.output && (in_dir || (stat(b->o.output, &sb) == 0 && S_ISDIR(sb.st_mode)));
    wf_status st = b->o.output && !into_dir
                       ? (snprintf(out, sizeof out, "%s", b->o.output), WF_OK)
                       : wfc_output_path(input, in_dir, b->o.output, out, sizeof out, &err);
    if (st == WF_OK)
        st = wfc_output_check(input, out, &err);
    char *xaml = NULL;
    size_t len = 0;
    wfc_sidecars side = WFC_SIDECARS_INIT;
    bool converted = false;
    if (st == WF_OK) {
        wfc_opts co = WFC_OPTS_INIT;
        co.libpath = b->libpath;
        co.rules_path = in_dir ? NULL : b->o.rules;
        co.output_name = out;
        co.force_interop = b->o.interop;
        co.register_interop = wfb_interop_register;
        st = wfc_convert_file_side(&co, input, f, &xaml, &len, &side, &err);
        converted = st == WF_OK;
        /* A construct the converter cannot express yet is not the input's fault. */
        if (!converted && st != WF_E_UNSUPPORTED)
            b->input_error = true;
    } else {
        b->input_error = true;
        wfc_file_add_diag(f, WFC_ERROR, err.line, err.col, "output", "%s", err.message);
    }
    if (converted && !b->o.check) {
        st = write_sidecars(out, &side, &err);
        if (st == WF_OK)
            st = wfc_write_atomic(out, xaml, len, &err);
        if (st == WF_OK) {
            wfc_file_set_output(f, out);
        } else {
            b->input_error = true;
            converted = false;
            wfc_file_set_status(f, WFC_FAILED);
            wfc_file_add_diag(f, WFC_ERROR, 0, 0, "output", "%s", err.message);
        }
    }
    wf_free(xaml);
    wfc_sidecars_free(&side);
    if (!converted)
        wfc_file_set_status(f, WFC_FAILED);
    scaffold_notes(b, f, input);
    b->counts[wfc_file_status(f)]++;
    b->lost |= wfc_file_lost_more_than_designer(f);
    print_diags(f);
}

/* The first error of a failed file, for the summary. */
static const char *first_error(const wfc_file *f, unsigned *line, unsigned *col)
{
    for (size_t i = 0; i < wfc_file_diag_count(f); i++) {
        wfc_severity sev;
        const char *rule, *msg;
        wfc_file_diag(f, i, &sev, &rule, line, col, &msg);
        if (sev == WFC_ERROR)
            return msg;
    }
    return "failed";
}

static void summary(const batch *b, FILE *out)
{
    fprintf(out, "converted %zu, partial %zu, failed %zu\n", b->counts[WFC_CONVERTED],
            b->counts[WFC_PARTIAL], b->counts[WFC_FAILED]);
    for (size_t i = 0; i < wfc_report_file_count(b->report); i++) {
        const wfc_file *f = wfc_report_file_at(b->report, i);
        if (wfc_file_status(f) != WFC_FAILED)
            continue;
        unsigned line = 0, col = 0;
        const char *msg = first_error(f, &line, &col);
        fprintf(out, "  failed: %s:%u:%u: %s\n", wfc_file_source(f), line, col, msg);
    }
}

static void print_json(const batch *b)
{
    wf_buf j;
    wf_buf_init(&j);
    size_t todo = 0, guessed = 0;
    wfc_report_scaffold_totals(b->report, &todo, &guessed);
    wf_buf_addf(&j,
                "{\"converted\": %zu, \"partial\": %zu, \"failed\": %zu, \"todoFunctions\": "
                "%zu, \"guessedTypes\": %zu, \"files\": [",
                b->counts[WFC_CONVERTED], b->counts[WFC_PARTIAL], b->counts[WFC_FAILED], todo,
                guessed);
    for (size_t i = 0; i < wfc_report_file_count(b->report); i++) {
        const wfc_file *f = wfc_report_file_at(b->report, i);
        wf_buf_adds(&j, i ? ", {\"source\": " : "{\"source\": ");
        wf_buf_add_json_string(&j, wfc_file_source(f), strlen(wfc_file_source(f)));
        wf_buf_addf(&j, ", \"status\": \"%s\"}", wfc_status_name(wfc_file_status(f)));
    }
    wf_buf_adds(&j, "]}");
    printf("%s\n", j.data);
    wf_buf_fini(&j);
}

/* DOT -> SVG through Graphviz's `dot` (WF_E_NOTFOUND when it is not installed). */
static wf_status dot_svg(void *ud, const char *dot, wf_buf *svg, wf_error *err)
{
    (void)ud;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/wfbridge-dotXXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        return wf_error_set(err, WF_E_IO, NULL, "cannot make a temporary file: %s",
                            strerror(errno));
    size_t len = strlen(dot);
    bool ok = write(fd, dot, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' 2>/dev/null", path);
    FILE *p = ok ? popen(cmd, "r") : NULL;
    char chunk[4096];
    size_t n;
    while (p && (n = fread(chunk, 1, sizeof chunk, p)) > 0)
        wf_buf_add(svg, chunk, n);
    int rc = p ? pclose(p) : -1;
    unlink(path);
    if (rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 127)
        return WF_E_NOTFOUND;
    if (rc != 0 || svg->oom)
        return wf_error_set(err, WF_E_IO, NULL, "Graphviz 'dot' failed to draw a workflow");
    return WF_OK;
}

static wf_status render_html(const wfc_report *r, wf_buf *out, wf_error *err)
{
    return wfc_report_html(r, dot_svg, NULL, out, err);
}

typedef wf_status (*render_fn)(const wfc_report *r, wf_buf *out, wf_error *err);

/* Render the report one way and write it atomically to path (nothing when path is NULL). */
static int write_report(const batch *b, const char *path, render_fn render)
{
    if (!path)
        return 0;
    wf_buf text;
    wf_buf_init(&text);
    wf_error err = WF_ERROR_INIT;
    wf_status st = render(b->report, &text, &err);
    if (st == WF_OK)
        st = wfc_write_atomic(path, text.data, text.len, &err);
    wf_buf_fini(&text);
    return st == WF_OK ? 0 : wfb_report(&err);
}

static int convert_tree(batch *b)
{
    if (!b->o.output)
        return wfb_usage_error("converting a directory needs -o OUTDIR");
    file_list l = {0};
    if (!collect(b->o.input, &l)) {
        list_free(&l);
        return wfb_usage_error("cannot read directory %s", b->o.input);
    }
    qsort(l.paths, l.count, sizeof *l.paths, by_name);
    bool tty = isatty(STDERR_FILENO);
    for (size_t i = 0; i < l.count; i++) {
        if (tty)
            fprintf(stderr, "\r\033[K[%zu/%zu] %s", i + 1, l.count, l.paths[i]);
        convert_one(b, l.paths[i], b->o.input);
    }
    if (tty)
        fprintf(stderr, "\r\033[K");
    list_free(&l);
    return 0;
}

/* The library path the conversion uses: the user's, then the scaffold directory. */
static wf_status libpath_with(batch *b, const char *dir, wf_error *err)
{
    const char *user = b->o.lib_path ? b->o.lib_path : getenv("WFBRIDGE_LIB_PATH");
    size_t len = (user ? strlen(user) : 0) + strlen(dir) + 2;
    char *dirs = malloc(len);
    if (!dirs)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    snprintf(dirs, len, "%s%s%s", user && *user ? user : "", user && *user ? ":" : "", dir);
    wf_libpath *lp = NULL;
    wf_status st = wf_libpath_create(dirs, &lp, err);
    free(dirs);
    if (st == WF_OK) {
        wf_libpath_destroy(b->libpath);
        b->libpath = lp;
    }
    return st;
}

/* --scaffold DIR: scan every input, write what is missing into DIR, then convert against it
 * (docs/convert.md "Scaffolding"). A file that does not parse is left to its conversion. */
static int run_scaffold(batch *b, bool is_dir)
{
    file_list l = {0};
    if (is_dir ? !collect(b->o.input, &l) : !list_add(&l, b->o.input)) {
        list_free(&l);
        return wfb_usage_error("cannot read %s", b->o.input);
    }
    qsort(l.paths, l.count, sizeof *l.paths, by_name);
    wf_error err = WF_ERROR_INIT;
    wf_status st = wfc_scaffold_create(b->libpath, b->o.scaffold, &b->scaffold, &err);
    for (size_t i = 0; st == WF_OK && i < l.count; i++) {
        wf_error scan_err = WF_ERROR_INIT;
        if (wfc_scaffold_scan(b->scaffold, l.paths[i], is_dir ? NULL : b->o.rules, &scan_err) ==
            WF_E_NOMEM)
            st = wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
    }
    list_free(&l);
    wfc_scaffold_result res;
    if (st == WF_OK)
        st = wfc_scaffold_write(b->scaffold, &res, &err);
    if (st != WF_OK)
        return wfb_report(&err);
    fprintf(stderr,
            "scaffold %s: %zu declarations, %zu TODO functions, %zu types guessed, %zu "
            "conflicts, %zu files written; build it with: make -C %s\n",
            b->o.scaffold, res.declarations, res.functions, res.guessed, res.conflicts,
            res.files_written, b->o.scaffold);
    struct stat sb;
    if (stat(b->o.scaffold, &sb) == 0 && libpath_with(b, b->o.scaffold, &err) != WF_OK)
        return wfb_report(&err);
    return 0;
}

int wfb_cmd_convert(int argc, char **argv)
{
    wfb_verb_begin(VERB);
    batch b = {0};
    int rc = parse_args(argc, argv, &b.o);
    if (rc)
        return rc < 0 ? 0 : rc;
    wf_error err = WF_ERROR_INIT;
    if (wfb_libpath(b.o.lib_path, &b.libpath, &err) != WF_OK)
        return wfb_fail(&err);
    if (wfc_report_create(&b.report, &err) != WF_OK) {
        wf_libpath_destroy(b.libpath);
        return wfb_fail(&err);
    }
    struct stat st;
    bool is_dir = stat(b.o.input, &st) == 0 && S_ISDIR(st.st_mode);
    if (b.o.scaffold)
        rc = run_scaffold(&b, is_dir);
    if (rc == 0 && is_dir)
        rc = convert_tree(&b);
    else if (rc == 0)
        convert_one(&b, b.o.input, NULL);
    if (rc == 0) {
        if (is_dir)
            summary(&b, stderr);
        rc = write_report(&b, b.o.report, wfc_report_json);
        if (rc == 0)
            rc = write_report(&b, b.o.csv, wfc_report_csv);
        if (rc == 0)
            rc = write_report(&b, b.o.md, wfc_report_markdown);
        if (rc == 0)
            rc = write_report(&b, b.o.html, render_html);
        if (b.o.json)
            print_json(&b);
    }
    if (rc == 0 && b.counts[WFC_FAILED] > 0)
        rc = !is_dir && b.input_error ? 2 : 1;
    if (rc == 0 && b.o.fail_on_loss && b.lost)
        rc = 1;
    wfc_report_destroy(b.report);
    wfc_scaffold_destroy(b.scaffold);
    wf_libpath_destroy(b.libpath);
    return rc;
}

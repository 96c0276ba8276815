/* wfb_convert.c — `wfbridge convert`: legacy .xoml (+ .rules) files to modern .xaml, one file
 * or a whole directory tree, with the migration report (docs/convert.md). The converter
 * decides; this file only walks directories, writes files atomically and prints. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h> /* Graphviz's dot runs without a shell */
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
    "usage: wfbridge convert IN.xoml|DIR|- [--rules FILE] [--lib-path DIR] [-o OUT|-]\n"
    "         [--report REPORT.json] [--csv REPORT.csv] [--md REPORT.md]\n"
    "         [--html REPORT.html] [--scaffold DIR] [--sidecars DIR] [--check]\n"
    "         [--fail-on-loss] [--interop] [--follow-symlinks] [--json]\n"
    "\n"
    "Convert legacy (WF3 XOML) workflows to modern (WF4 XAML) ones. Each result is loaded\n"
    "by the modern runtime before it is written; a failed file leaves no output.\n"
    "\n"
    "  --rules FILE      the .rules file (default: IN.rules beside IN.xoml, if present)\n"
    "  --lib-path DIR    where NAME.activities.xml and libNAME.so are found (dir1:dir2);\n"
    "                    default $WFBRIDGE_LIB_PATH\n"
    "  -o, --output OUT  the .xaml to write (default IN.xaml beside IN.xoml), or a\n"
    "                    directory to write it into (an existing one, or OUT/ ending in\n"
    "                    '/'); '-' is standard output (also the default for input '-');\n"
    "                    with a directory input, the output directory mirroring its tree\n"
    "  --report FILE     write the migration report as JSON (docs/convert.md)\n"
    "  --csv FILE        the same report as CSV, one row per activity, diagnostic, loss\n"
    "  --md FILE         the same report as Markdown (summary table, then per file)\n"
    "  --html FILE       the same report as one HTML page, with the legacy and the converted\n"
    "                    workflow drawn side by side (needs Graphviz 'dot' for the pictures)\n"
    "  --scaffold DIR    first write the native code the files need but no type library on\n"
    "                    the library path provides: DIR/NAME.activities.xml per assembly,\n"
    "                    NAME.c with TODO bodies and a Makefile (make -C DIR); then\n"
    "                    convert against them; a later run only adds to DIR\n"
    "  --sidecars DIR    where the files generated for Interop go (default: beside the\n"
    "                    .xaml; needed when the .xaml goes to '-' or a device)\n"
    "  --follow-symlinks with a directory input, follow symbolic links (default: skip and\n"
    "                    report them; a directory is entered once, so loops end)\n"
    "  --check           convert, validate and report without writing definitions\n"
    "  --fail-on-loss    exit 1 when anything beyond designer-only data was lost\n"
    "  --interop         host every custom activity through the Interop activity\n"
    "  --json            print a summary object as the last line of stdout\n"
    "\n"
    "IN '-' reads the legacy workflow from standard input. No output may name an input or\n"
    "another output (compared by device and inode).\n"
    "\n"
    "Exit status: 0 nothing failed, 1 a file failed (or lost something, with\n"
    "--fail-on-loss), 2 usage or input error.\n";

typedef struct opts {
    const char *input, *rules, *lib_path, *output, *report, *csv, *md, *html, *scaffold;
    const char *sidecars;
    bool check, fail_on_loss, interop, json, follow_symlinks;
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
    OPT_JSON,
    OPT_SIDECARS,
    OPT_FOLLOW
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
        {"sidecars", required_argument, NULL, OPT_SIDECARS},
        {"follow-symlinks", no_argument, NULL, OPT_FOLLOW},
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
        case OPT_SIDECARS:
            o->sidecars = optarg;
            break;
        case OPT_FOLLOW:
            o->follow_symlinks = true;
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

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- one file ---------------------------------------------------------------------------------
 */
/* A warning printed before, and how many identical ones were held back since. */
typedef struct repeat {
    char *text; /* owned: "message [rule]" */
    size_t more;
} repeat;

typedef struct batch {
    opts o;
    wf_libpath *libpath;
    wfc_scaffold *scaffold; /* --scaffold: what it wrote, for each file's report entry */
    wfc_report *report;
    size_t counts[3];
    bool input_error; /* a file failed to load (exit 2 for a single file) */
    bool lost;
    bool progress; /* a progress line is on the terminal: clear it before a message */
    wf_strmap *repeats; /* owned: warning text -> repeat, for "and N more like this" */
    repeat **repeat_list; /* owned array of borrowed entries: first-seen order */
    size_t repeat_count;
} batch;

/* Whether diagnostic a comes after b in source order (its file, then line, then column). */
static bool diag_after(const wfc_file *f, size_t a, size_t b)
{
    wfc_severity sev;
    const char *rule, *msg;
    unsigned la, ca, lb, cb;
    wfc_file_diag(f, a, &sev, &rule, &la, &ca, &msg);
    wfc_file_diag(f, b, &sev, &rule, &lb, &cb, &msg);
    int files = strcmp(wfc_file_diag_file(f, a), wfc_file_diag_file(f, b));
    return files ? files > 0 : la != lb ? la > lb : ca > cb;
}

/* The diagnostics' indexes in source order (a stable insertion sort: they arrive nearly
 * sorted); NULL when out of memory (then printed as they came). */
static size_t *source_order(const wfc_file *f, size_t n)
{
    size_t *order = wf_calloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; order && i < n; i++) {
        size_t k = i;
        while (k > 0 && diag_after(f, order[k - 1], i)) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    return order;
}

/* Whether a warning repeats one printed before (then counted, not printed). */
static bool repeated(batch *b, wfc_severity sev, const char *rule, const char *msg)
{
    wf_buf key;
    wf_buf_init(&key);
    wf_buf_addf(&key, "%s%s [%s]", sev == WFC_REVIEW ? "review: " : "", msg, rule);
    repeat *r = key.oom || !b->repeats ? NULL : wf_strmap_get(b->repeats, key.data);
    if (r) {
        r->more++;
        wf_buf_fini(&key);
        return true;
    }
    repeat **list = key.oom || !b->repeats
                        ? NULL
                        : wf_realloc(b->repeat_list, (b->repeat_count + 1) * sizeof *list);
    if (list && (b->repeat_list = list, r = wf_calloc(1, sizeof *r)) &&
        (r->text = wf_strdup(key.data)) && wf_strmap_put(b->repeats, r->text, r) == WF_OK) {
        list[b->repeat_count++] = r;
    } else if (r) {
        wf_free(r->text);
        wf_free(r);
    }
    wf_buf_fini(&key);
    return false;
}

static void repeat_free(void *value)
{
    repeat *r = value;
    wf_free(r->text);
    wf_free(r);
}

/* After the run: one line per warning that was held back. */
static void print_repeats(const batch *b)
{
    for (size_t i = 0; i < b->repeat_count; i++)
        if (b->repeat_list[i]->more)
            wfb_warning("and %zu more like this: %s", b->repeat_list[i]->more,
                        b->repeat_list[i]->text);
}

/* Print the file's error and warning diagnostics in the contract form, in source order; a
 * warning identical to one printed before is counted instead (print_repeats). */
static void print_diags(batch *b, const wfc_file *f)
{
    size_t n = wfc_file_diag_count(f);
    size_t *order = source_order(f, n);
    for (size_t k = 0; k < n; k++) {
        size_t i = order ? order[k] : k;
        wfc_severity sev;
        const char *rule, *msg;
        unsigned line, col;
        wfc_file_diag(f, i, &sev, &rule, &line, &col, &msg);
        if (sev == WFC_INFO || (sev != WFC_ERROR && repeated(b, sev, rule, msg)))
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
    wf_free(order);
}

/* --scaffold: what the scaffold wrote for this file, as its report entry's work list. */
static void scaffold_notes(batch *b, wfc_file *f, const char *input)
{
    wfc_scaffold_note n;
    for (size_t i = 0; b->scaffold && wfc_scaffold_note_at(b->scaffold, input, i, &n); i++)
        wfc_file_add_scaffold(f, n.kind, n.line, n.col, n.text);
}

/* Where the XAML of `input` goes: -o FILE, '-', a directory (-o DIR, -o DIR/, the mirrored
 * tree of a directory input), or beside the input; standard output for input '-' without -o. */
static wf_status output_for(const batch *b, const char *input, const char *in_dir, char *out,
                            size_t size, wf_error *err)
{
    const char *o = b->o.output;
    struct stat sb;
    size_t n = o ? strlen(o) : 0;
    bool into_dir = o && (in_dir || (n > 0 && o[n - 1] == '/') ||
                          (stat(o, &sb) == 0 && S_ISDIR(sb.st_mode)));
    if ((o && !into_dir) || (!o && strcmp(wfb_stdin_alias(input), input) != 0)) {
        snprintf(out, size, "%s", o ? o : "-");
        return WF_OK;
    }
    return wfc_output_path(input, in_dir, o, out, size, err);
}

/* The path of one generated Interop file: in --sidecars DIR, else beside the XAML (refused
 * when the XAML is a stream: there is no "beside"). */
static wf_status sidecar_path(const batch *b, const char *out, const wfc_sidecar *sc, char *path,
                              size_t size, wf_error *err)
{
    if (b->o.sidecars) {
        snprintf(path, size, "%s/%s", b->o.sidecars, sc->name);
        return WF_OK;
    }
    if (wfc_output_is_stream(out))
        return wf_error_set(err, WF_E_IO, NULL,
                            "the converted workflow needs generated files (%s) and -o %s "
                            "cannot hold them: give --sidecars DIR",
                            sc->name, out);
    const char *slash = strrchr(out, '/');
    snprintf(path, size, "%.*s%s", slash ? (int)(slash - out + 1) : 0, out, sc->name);
    return WF_OK;
}

/* The XAML and its generated Interop files, all or nothing: a failure leaves none of them. */
static wf_status write_outputs(const batch *b, const char *input, const char *out,
                               const char *xaml, size_t len, const wfc_sidecars *side,
                               wf_error *err)
{
    wfc_writes *w = NULL;
    wf_status st = wfc_writes_create(&w, err);
    const char *inputs[] = {input, b->o.rules};
    for (size_t i = 0; st == WF_OK && i < side->count; i++) {
        if (side->items[i].optional && !b->o.sidecars && wfc_output_is_stream(out))
            continue;
        char path[4200];
        const char *outputs[] = {out, path}, *what[] = {"-o", "the generated file"};
        st = sidecar_path(b, out, &side->items[i], path, sizeof path, err);
        if (st == WF_OK)
            st = wfc_output_clash(inputs, 2, outputs, what, 2, err);
        if (st == WF_OK)
            st = wfc_writes_add(w, path, side->items[i].text, side->items[i].len, err);
    }
    if (st == WF_OK)
        st = wfc_writes_add(w, out, xaml, len, err);
    if (st == WF_OK)
        st = wfc_writes_commit(w, err);
    wfc_writes_destroy(w);
    return st;
}

/* The name the converted definition gets (its locations, the generated files' names): the
 * output, or for a stream the name it would have beside the input. */
static void definition_name(const char *input, const char *out, char *name, size_t size)
{
    if (!wfc_output_is_stream(out) || wfc_output_path(input, NULL, NULL, name, size, NULL))
        snprintf(name, size, "%s", out);
}

static void convert_one(batch *b, const char *input, const char *in_dir)
{
    wfc_file *f = wfc_report_add_file(b->report, wfb_stdin_alias(input));
    if (!f)
        return;
    char out[4096], name[4096];
    wf_error err = WF_ERROR_INIT;
    wf_status st = output_for(b, input, in_dir, out, sizeof out, &err);
    if (st == WF_OK)
        st = wfc_output_check(input, out, &err);
    char *xaml = NULL;
    size_t len = 0;
    wfc_sidecars side = WFC_SIDECARS_INIT;
    bool converted = false;
    if (st == WF_OK) {
        definition_name(input, out, name, sizeof name);
        wfc_opts co = WFC_OPTS_INIT;
        co.libpath = b->libpath;
        co.rules_path = in_dir ? NULL : b->o.rules;
        co.output_name = name;
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
        st = write_outputs(b, input, out, xaml, len, &side, &err);
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
    if (b->progress)
        fputs("\r\033[K", stderr); /* the file's messages start on a clean line */
    scaffold_notes(b, f, input);
    b->counts[wfc_file_status(f)]++;
    b->lost |= wfc_file_lost_more_than_designer(f);
    print_diags(b, f);
}

/* The first error of a failed file, for the summary, and the file it is in. */
static const char *first_error(const wfc_file *f, const char **file, unsigned *line,
                               unsigned *col)
{
    *file = wfc_file_source(f);
    for (size_t i = 0; i < wfc_file_diag_count(f); i++) {
        wfc_severity sev;
        const char *rule, *msg;
        wfc_file_diag(f, i, &sev, &rule, line, col, &msg);
        if (sev == WFC_ERROR)
            return *file = wfc_file_diag_file(f, i), msg;
    }
    *line = *col = 0;
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
        const char *file;
        const char *msg = first_error(f, &file, &line, &col);
        if (line) /* a position only where there is one: never file:0:0 */
            fprintf(out, "  failed: %s:%u:%u: %s\n", file, line, col, msg);
        else
            fprintf(out, "  failed: %s: %s\n", file, msg);
    }
}

/* A failed file's first error, shaped like the error object of docs/formats.md:
 * {"message", "file", "line", "col"}, the position only where there is one. */
static json_t *error_json(const wfc_file *f)
{
    unsigned line = 0, col = 0;
    const char *file;
    const char *msg = first_error(f, &file, &line, &col);
    json_t *e = json_pack("{s:o, s:o}", "message", wf_jsonw_str(msg), "file", wf_jsonw_str(file));
    bool ok = e != NULL;
    if (line) {
        ok = ok && wf_jsonw_set(e, "line", json_integer(line));
        ok = ok && wf_jsonw_set(e, "col", json_integer(col));
    }
    if (!ok) {
        json_decref(e);
        return NULL;
    }
    return e;
}

static void print_json(const batch *b)
{
    const char *status = b->counts[WFC_FAILED]    ? "failed"
                         : b->counts[WFC_PARTIAL] ? "partial"
                                                  : "converted";
    size_t functions_to_write = 0, guessed_types = 0;
    wfc_report_scaffold_totals(b->report, &functions_to_write, &guessed_types);
    json_t *files = json_array();
    bool ok = files != NULL;
    for (size_t i = 0; ok && i < wfc_report_file_count(b->report); i++) {
        const wfc_file *f = wfc_report_file_at(b->report, i);
        json_t *entry = json_pack("{s:o, s:s}", "source", wf_jsonw_str(wfc_file_source(f)),
                                  "status", wfc_status_name(wfc_file_status(f)));
        if (wfc_file_status(f) == WFC_FAILED)
            ok = wf_jsonw_set(entry, "error", error_json(f));
        ok = wf_jsonw_append(ok ? files : NULL, entry) && ok;
    }
    wfb_print_json(ok ? json_pack("{s:s, s:I, s:I, s:I, s:O, s:I, s:I}", "status", status,
                                  "converted", (json_int_t)b->counts[WFC_CONVERTED], "partial",
                                  (json_int_t)b->counts[WFC_PARTIAL], "failed",
                                  (json_int_t)b->counts[WFC_FAILED], "files", files,
                                  "functionsToWrite", (json_int_t)functions_to_write, "guessedTypes",
                                  (json_int_t)guessed_types)
                      : NULL);
    json_decref(files);
}

/* The time all pictures of one HTML report may take together: a 20,000-activity file or
 * 2,000 files must not keep `dot` busy for minutes (the page says drawing stopped). */
#define DOT_BUDGET_MS 60000

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read the child's output until EOF or the deadline; false when the deadline came first. */
static bool read_until(int fd, int64_t deadline_ms, wf_buf *svg)
{
    char chunk[4096];
    for (;;) {
        int64_t left = deadline_ms - monotonic_ms();
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0)
            return false;
        int r = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (r < 0 && errno != EINTR)
            return true;
        if (r <= 0)
            continue;
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n == 0 || (n < 0 && errno != EINTR))
            return true;
        if (n > 0)
            wf_buf_add(svg, chunk, (size_t)n);
    }
}

/* Run `dot -Tsvg PATH` (found on PATH, no shell: nothing in TMPDIR is ever parsed) and append
 * its standard output to svg, stopping it (SIGKILL) at deadline_ms (*late). *status: its wait
 * status; false when it could not start (*missing: there is no `dot`). */
static bool run_dot(const char *path, int64_t deadline_ms, wf_buf *svg, int *status,
                    bool *missing, bool *late)
{
    int out[2];
    *missing = false;
    if (pipe(out) != 0)
        return false;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawn_file_actions_addclose(&fa, out[1]);
    char *const argv[] = {"dot", "-Tsvg", (char *)path, NULL};
    extern char **environ;
    pid_t pid;
    int rc = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    if (rc != 0) {
        *missing = rc == ENOENT;
        close(out[0]);
        return false;
    }
    *late = !read_until(out[0], deadline_ms, svg);
    if (*late)
        kill(pid, SIGKILL);
    close(out[0]);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    return true;
}

/* DOT -> SVG through Graphviz's `dot` (WF_E_NOTFOUND when it is not installed, WF_E_LIMIT
 * once the report's drawing time, *ud the deadline in monotonic ms, is used up). */
static wf_status dot_svg(void *ud, const char *dot, wf_buf *svg, wf_error *err)
{
    const int64_t *deadline_ms = ud;
    if (monotonic_ms() >= *deadline_ms)
        return wf_error_set(err, WF_E_LIMIT, NULL, "the time for drawing is used up");
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/wfbridge-dotXXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        return wf_error_set(err, WF_E_IO, NULL, "cannot make a temporary file: %s",
                            strerror(errno));
    size_t len = strlen(dot);
    bool ok = write(fd, dot, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    int status = -1;
    bool missing = false, late = false;
    ok = ok && run_dot(path, *deadline_ms, svg, &status, &missing, &late);
    unlink(path);
    if (missing)
        return WF_E_NOTFOUND;
    if (late)
        return wf_error_set(err, WF_E_LIMIT, NULL, "the time for drawing is used up");
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || svg->oom)
        return wf_error_set(err, WF_E_IO, NULL, "Graphviz 'dot' failed to draw a workflow");
    return WF_OK;
}

static wf_status render_html(const wfc_report *r, wf_buf *out, wf_error *err)
{
    int64_t deadline_ms = monotonic_ms() + DOT_BUDGET_MS;
    return wfc_report_html(r, dot_svg, &deadline_ms, out, err);
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

/* The input files: the one file, or every .xoml of the tree (sorted by path). */
typedef struct inputs {
    char **paths; /* owned */
    size_t count;
} inputs;

static int list_inputs(const batch *b, bool is_dir, inputs *in)
{
    if (!is_dir) {
        in->paths = wf_calloc(1, sizeof *in->paths);
        if (!in->paths || !(in->paths[0] = wf_strdup(b->o.input)))
            return wfb_error("out of memory");
        in->count = 1;
        return 0;
    }
    char **rel = NULL;
    size_t n = 0;
    int rc = wfb_walk(b->o.input, ".xoml", b->o.follow_symlinks, &rel, &n);
    if (rc)
        return rc;
    in->paths = wf_calloc(n ? n : 1, sizeof *in->paths);
    for (size_t i = 0; in->paths && i < n; i++) {
        size_t size = strlen(b->o.input) + strlen(rel[i]) + 2;
        if ((in->paths[i] = wf_malloc(size)))
            snprintf(in->paths[i], size, "%s/%s", b->o.input, rel[i]);
        in->count += in->paths[i] != NULL;
    }
    wfb_walk_free(rel, n);
    if (!in->paths || in->count != n)
        return wfb_error("out of memory");
    qsort(in->paths, in->count, sizeof *in->paths, by_name);
    return 0;
}

/* Before anything is written: no output may name an input (a workflow or its rules) or another
 * output, and only one thing may write standard output. */
static int check_outputs(const batch *b, const inputs *in, bool is_dir)
{
    size_t n = in->count, m = n + 4;
    const char **ins = wf_calloc(2 * n + 1, sizeof *ins);
    const char **outs = wf_calloc(m, sizeof *outs), **what = wf_calloc(m, sizeof *what);
    char (*names)[2][4096] = wf_calloc(n ? n : 1, sizeof *names);
    wf_error err = WF_ERROR_INIT;
    wf_status st = ins && outs && what && names ? WF_OK : WF_E_NOMEM;
    for (size_t i = 0; st == WF_OK && i < n; i++) {
        const char *p = in->paths[i];
        size_t len = strlen(p);
        ins[2 * i] = p;
        snprintf(names[i][1], sizeof names[i][1], "%.*s.rules",
                 (int)(len > 5 && strcmp(p + len - 5, ".xoml") == 0 ? len - 5 : len), p);
        ins[2 * i + 1] = names[i][1];
        st = output_for(b, p, is_dir ? b->o.input : NULL, names[i][0], sizeof names[i][0], &err);
        outs[i] = b->o.check ? NULL : names[i][0];
        what[i] = "-o";
    }
    ins[2 * n] = b->o.rules;
    const char *reports[] = {b->o.report, b->o.csv, b->o.md, b->o.html};
    const char *flags[] = {"--report", "--csv", "--md", "--html"};
    for (size_t i = 0; i < 4; i++)
        outs[n + i] = reports[i], what[n + i] = flags[i];
    if (st == WF_OK)
        st = wfc_output_clash(ins, 2 * n + 1, outs, what, m, &err);
    bool to_stdout = false;
    for (size_t i = 0; i < m; i++)
        to_stdout |= outs[i] && wfc_output_is_stdout(outs[i]);
    wf_free(ins);
    wf_free(outs);
    wf_free(what);
    wf_free(names);
    if (st == WF_E_NOMEM && !err.message[0])
        return wfb_error("out of memory");
    if (st != WF_OK)
        return wfb_report(&err);
    if (to_stdout && b->o.json)
        return wfb_usage_error("--json and an output '-' would both write standard output");
    return 0;
}

static void convert_all(batch *b, const inputs *in, bool is_dir)
{
    bool tty = isatty(STDERR_FILENO) && is_dir;
    for (size_t i = 0; i < in->count; i++) {
        if (tty)
            fprintf(stderr, "\r\033[K[%zu/%zu] %s", i + 1, in->count, in->paths[i]);
        b->progress = tty;
        convert_one(b, in->paths[i], is_dir ? b->o.input : NULL);
    }
    if (tty)
        fprintf(stderr, "\r\033[K");
}

static void inputs_free(inputs *in)
{
    for (size_t i = 0; in->paths && i < in->count; i++)
        wf_free(in->paths[i]);
    wf_free(in->paths);
}

static int run_scaffold(batch *b, const inputs *in, bool is_dir);

static int convert_input(batch *b)
{
    struct stat st;
    bool is_dir = stat(b->o.input, &st) == 0 && S_ISDIR(st.st_mode);
    if (is_dir && !b->o.output)
        return wfb_usage_error("converting a directory needs -o OUTDIR");
    if (is_dir && strcmp(b->o.output, "-") == 0)
        return wfb_usage_error("-o - writes one file: a directory input needs -o OUTDIR");
    inputs in = {0};
    int rc = list_inputs(b, is_dir, &in);
    if (rc == 0)
        rc = check_outputs(b, &in, is_dir);
    if (rc == 0 && b->o.scaffold)
        rc = run_scaffold(b, &in, is_dir);
    if (rc == 0)
        convert_all(b, &in, is_dir);
    inputs_free(&in);
    if (rc != 0)
        return rc;
    print_repeats(b);
    if (is_dir)
        summary(b, stderr);
    rc = write_report(b, b->o.report, wfc_report_json);
    if (rc == 0)
        rc = write_report(b, b->o.csv, wfc_report_csv);
    if (rc == 0)
        rc = write_report(b, b->o.md, wfc_report_markdown);
    if (rc == 0)
        rc = write_report(b, b->o.html, render_html);
    if (b->o.json)
        print_json(b);
    if (rc == 0 && b->counts[WFC_FAILED] > 0)
        rc = !is_dir && b->input_error ? 2 : 1;
    if (rc == 0 && b->o.fail_on_loss && b->lost)
        rc = 1;
    return rc;
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
static int run_scaffold(batch *b, const inputs *in, bool is_dir)
{
    wf_error err = WF_ERROR_INIT;
    wf_status st = wfc_scaffold_create(b->libpath, b->o.scaffold, &b->scaffold, &err);
    for (size_t i = 0; st == WF_OK && i < in->count; i++) {
        wf_error scan_err = WF_ERROR_INIT;
        if (wfc_scaffold_scan(b->scaffold, in->paths[i], is_dir ? NULL : b->o.rules, &scan_err) ==
            WF_E_NOMEM)
            st = wf_error_set(&err, WF_E_NOMEM, NULL, "out of memory");
    }
    wfc_scaffold_result res;
    if (st == WF_OK)
        st = wfc_scaffold_write(b->scaffold, &res, &err);
    if (st != WF_OK)
        return wfb_report(&err);
    fprintf(stderr,
            "scaffold %s: %zu declarations, %zu functions to write, %zu types guessed, %zu "
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
    if ((rc = wfb_stdin_begin(&b.o.input, ".xoml")) != 0)
        return rc;
    wf_error err = WF_ERROR_INIT;
    if (wfb_libpath(b.o.lib_path, &b.libpath, &err) != WF_OK)
        return wfb_fail(&err);
    if (wfc_report_create(&b.report, &err) != WF_OK) {
        wf_libpath_destroy(b.libpath);
        return wfb_fail(&err);
    }
    b.repeats = wf_strmap_create(repeat_free); /* NULL: every warning is printed */
    rc = convert_input(&b);
    wf_strmap_destroy(b.repeats);
    wf_free(b.repeat_list);
    wfc_report_destroy(b.report);
    wfc_scaffold_destroy(b.scaffold);
    wf_libpath_destroy(b.libpath);
    return rc;
}

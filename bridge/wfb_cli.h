/* wfb_cli.h — what every `wfbridge` verb shares: the one error format (docs/formats.md
 * "Output contracts": `FILE:LINE:COL: error: message`, else `wfbridge VERB: error: message`),
 * option tables read with getopt_long, NAME=VALUE options, quoting user input in messages,
 * the library path, checked output and the last-line JSON result object. Only the CLI prints. */
#ifndef WFB_CLI_H
#define WFB_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_jsonw.h" /* wfb_json_lines */
#include "../common/wf_native.h"
#include "../common/wf_value.h"
#include "../modern/wfm_definition.h" /* wfb_modern_inputs */

/* A verb: argv[0] is the verb name. Returns the process exit code (0, 1, 2). */
typedef int (*wfb_verb_fn)(int argc, char **argv);

/* The verbs, each in its own file of bridge/. */
int wfb_cmd_run(int argc, char **argv);        /* wfb_run.c: modern runtime */
int wfb_cmd_run_legacy(int argc, char **argv); /* wfb_run_legacy.c: legacy runtime */
int wfb_cmd_instances(int argc, char **argv);  /* wfb_instances.c: list a store */
int wfb_cmd_resume(int argc, char **argv);     /* wfb_resume.c: resume a persisted instance */
int wfb_cmd_inspect(int argc, char **argv);    /* wfb_inspect.c: decode one stored instance */
int wfb_cmd_host(int argc, char **argv);       /* wfb_host.c: resume due instances */
int wfb_cmd_convert(int argc, char **argv);    /* wfb_convert.c: XOML -> XAML */
int wfb_cmd_verify(int argc, char **argv);     /* wfb_verify.c: side-by-side validation */
int wfb_cmd_start(int argc, char **argv);      /* wfb_start.c: create runnable instances */
int wfb_cmd_migrate_instances(int argc, char **argv); /* wfb_migrate.c: legacy -> modern */
int wfb_cmd_verify_instances(int argc, char **argv);  /* wfb_migrate_verify.c: prove it */
int wfb_cmd_serve(int argc, char **argv);      /* wfb_serve.c: workflow services over HTTP */

/* The instance store used when --store is not given: $WFBRIDGE_STORE if set, else a file in
 * the working directory. A store is a file, sqlite:FILE, postgresql://... or a libpq
 * connection string (docs/durability.md "Choosing a store"). */
#define WFB_DEFAULT_STORE "wfbridge.db"
/* The one wording for a run that needs native libraries but has no library path. */
#define WFB_NO_LIBPATH "no library path: pass --lib-path DIR or set WFBRIDGE_LIB_PATH"
const char *wfb_store_name(const char *given); /* given, else $WFBRIDGE_STORE, else default */

/* ---- reporting ----------------------------------------------------------------------------
 * The program runs one verb, which names itself first with wfb_verb_begin; every message
 * without a file of its own is then prefixed "wfbridge VERB: " ("wfbridge: " before a verb is
 * known). wfb_verb_begin also starts getopt_long over at argv[1], so a verb may run in-process,
 * more than once (tests do). */
void wfb_verb_begin(const char *verb);
/* Print one error / warning to stderr in the contract form; returns the exit code for it. */
int wfb_report(const wf_error *err);
void wfb_report_warning(const wf_error *err);
/* "wfbridge VERB: error: message" (resp. warning:); wfb_error returns 2. */
int wfb_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void wfb_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: wfb_error plus " (see 'wfbridge VERB --help')"; returns 2. */
int wfb_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* After a verb that failed (rc 1 or 2) with --json among its arguments and printed no JSON
 * object on stdout: the object {"status": "error", "error": {"type", "message", "code",
 * "file", "line", "col"}} of the first error it reported (type "UsageError" for a usage
 * error, else "InputError" for rc 2, "Failure" for rc 1; code, file, line and col when known),
 * so a script reading the last line always finds one (docs/formats.md "Output contracts").
 * wfb_print_json and wfb_print_result note their object; a verb writing JSON to stdout
 * otherwise calls wfb_json_printed. */
void wfb_json_failure(int argc, char **argv, int rc);
void wfb_json_printed(void);
/* Print every diagnostic (sorted into source order, an identical repeat once); returns 2 if
 * any is an error, else 0. With no_libpath set and a WF_E_NOLIB error among them, the root
 * cause (WFB_NO_LIBPATH) comes first and only the WF_E_NOLIB errors follow it. */
int wfb_report_diags(wf_diags *diags, bool no_libpath);
/* The failure end of a verb: report err, or "out of memory" when err is unset; returns 2. */
int wfb_fail(const wf_error *err);
/* 0 when err is WF_OK; else report err (naming file when err has no file of its own), return
 * its exit code. */
int wfb_report_in_file(wf_error *err, const char *file);

/* User input quoted for a message: 'text' when short, else its first 60 bytes (never cut inside
 * a UTF-8 sequence) as 'text...' (N bytes). Returns buf; size >= 96 holds any result. */
char *wfb_quote(const char *text, char *buf, size_t size);
/* Print root (taken; NULL allowed) and a newline on stdout, the one-line form; 0, or 2 after
 * reporting "out of memory" when root is NULL or could not be written out. A failed write is
 * reported when the program ends (wfb_close_stdout). */
int wfb_print_json(json_t *root);
/* Newline-separated names as a JSON array of strings; NULL when memory ran out. */
json_t *wfb_json_lines(const char *lines);
/* A DateTime (microseconds) as its ISO 8601 JSON string. */
json_t *wfb_json_time_us(int64_t us);

/* ---- standard input as a definition (wfb_stdin.c) -----------------------------------------
 * A verb that reads a definition accepts `-` for standard input: wfb_stdin_begin replaces *path
 * by a temporary copy of stdin (file name ending in suffix, ".xoml"), messages name it
 * "<stdin>" (wfb_stdin_alias), and wfb_stdin_end removes it (wfbridge runs it after every
 * verb). A path other than "-" is left alone. 0, or 2 after reporting why stdin was not read. */
int wfb_stdin_begin(const char **path, const char *suffix);
void wfb_stdin_end(void);
const char *wfb_stdin_alias(const char *file); /* "<stdin>" for the copy, else file */

/* ---- directory trees (wfb_walk.c) ---------------------------------------------------------
 * Every regular file whose name ends in suffix below root (names starting with '.' left out),
 * as paths relative to root, sorted per directory. Symbolic links are skipped with a warning
 * unless follow is set; a directory reached twice (a link loop) is entered once; a FIFO,
 * device or socket is reported and skipped, never opened. 0, or 2 after reporting. */
int wfb_walk(const char *root, const char *suffix, bool follow, char ***paths, size_t *count);
void wfb_walk_free(char **paths, size_t count);

/* ---- options ------------------------------------------------------------------------------ */
/* The next option of a verb's table (getopt_long; long options only; options may come before
 * or after the positional arguments, which end at argv[optind..]). Returns the option's val,
 * -1 at the end, or '?' after reporting an unknown option or a missing value (exit 2). Every
 * table has {"help", no_argument, NULL, 'h'}; -h is accepted too. */
int wfb_getopt(int argc, char **argv, const struct option *table);
/* The same with short options too (getopt's `shortopts`, starting ":h", e.g. ":ho:" for -o). */
int wfb_getopt_short(int argc, char **argv, const char *shortopts, const struct option *table);
/* After the options: the one operand argv[optind] (`what` names it: "workflow file") into *out,
 * or, with what NULL, no operand at all; otherwise a usage error (returns 2). */
int wfb_operand(int argc, char **argv, const char *what, const char **out);
/* The verb's help: print usage to stdout and return 0. */
int wfb_help(const char *usage);

/* The values of one repeatable NAME=VALUE option (--arg, --event, --resume, --bookmark). */
typedef struct wfb_assigns {
    const char *option;  /* "--arg" */
    char **names;        /* owned, NUL-terminated copies */
    const char **values; /* borrowed from argv */
    size_t count, cap;
} wfb_assigns;
#define WFB_ASSIGNS_INIT(opt) {.option = (opt), .names = NULL, .values = NULL, .count = 0, .cap = 0}
/* Split `text` at its first '=' and add it; a text without '=' or with an empty name, or a
 * name given before when `unique`, is a usage error (reported; returns 2). 0 when added. */
int wfb_assigns_add(wfb_assigns *a, const char *text, bool unique);
void wfb_assigns_fini(wfb_assigns *a);

/* A number option: a whole number min..max, else a usage error naming the option (returns 2). */
int wfb_parse_count(const char *option, const char *text, unsigned long long min,
                    unsigned long long max, unsigned long long *out);

/* The CLOCK_REALTIME time in microseconds; sleeping until one (no-op when it has passed). */
int64_t wfb_now_us(void);
void wfb_sleep_until(int64_t due_us);

/* The library path: --lib-path value if given, else $WFBRIDGE_LIB_PATH, else none (NULL out,
 * WF_OK). */
wf_status wfb_libpath(const char *option_value, wf_libpath **out, wf_error *err);

/* ---- values from the command line (wfb_value.c) -------------------------------------------
 * The one rule both runtimes apply to --arg (and a typed payload): scalars are read as text of
 * their type; List, Record and Object values are JSON, and a JSON value must match the declared
 * type exactly (List(String) takes strings only, List(Int32) whole numbers in range, ...):
 * nothing is coerced. Errors name the option and NAME ("--arg LI: ... at character 6"), with a
 * quoted, truncated copy of the input. */
wf_status wfb_value_from_text(wf_types *types, const wf_type *type, const char *option,
                              const char *name, const char *text, wf_value *out, wf_error *err);
/* An untyped payload (--resume, --bookmark, --event): JSON when the text starts like JSON
 * ('{', '[' or '"') — malformed JSON is then an error — or when it parses as a JSON number,
 * true, false or null; any other text is a String. */
wf_status wfb_payload_from_text(wf_types *types, const char *option, const char *name,
                                const char *text, wf_value *out, wf_error *err);

/* The --arg values of a modern run converted to the declared types (into values[i], the
 * caller releases them) and the --promote names checked (arguments or root variables) against
 * `def`, before any instance exists; 0, or 2 after reporting the first problem (wfb_run.c). */
int wfb_modern_inputs(wf_types *types, const wfm_definition *def, const char *file,
                      const wfb_assigns *args, const char *const *promotes, size_t promote_count,
                      wf_value *values);

/* ---- output -------------------------------------------------------------------------------
 * The result object printed as the last line of stdout with --json:
 * {"status": ..., "id": ..., "outputs": {...}, "bookmarks": [...], "error": {"type", "message"}} */
typedef struct wfb_result {
    const char *status;         /* "Closed", "Faulted", "Canceled", "Terminated", "Idle" */
    const char *const *output_names;
    const wf_value *output_values;
    size_t output_count;
    const char *const *bookmarks;
    size_t bookmark_count;
    const char *error_type;     /* NULL when there is no error */
    const char *error_message;
    const char *instance_id;    /* NULL unless the run used a store */
} wfb_result;

void wfb_print_result(FILE *out, const wfb_result *result);
/* Exit code for a final status string: 0 Closed/Idle, 1 Faulted/Canceled/Terminated. */
int wfb_status_exit_code(const char *status);
/* The end of the program: flush and close stdout; a failed write, flush or close (a full disk,
 * a closed pipe) is reported naming standard output and turns rc into 2. */
int wfb_close_stdout(int rc);

#endif

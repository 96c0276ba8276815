/* wfb_cli.h — what every `wfbridge` verb shares: reporting errors and diagnostics in the
 * `file:line:col: error: message` contract, exit codes, NAME=VALUE options, the library path,
 * and the last-line JSON result object (docs/formats.md "Output contracts"). Only the CLI prints. */
#ifndef WFB_CLI_H
#define WFB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"

/* A verb: argv[0] is the verb name. Returns the process exit code (0, 1, 2). */
typedef int (*wfb_verb_fn)(int argc, char **argv);

/* The verbs, each in its own file of bridge/. */
int wfb_cmd_run(int argc, char **argv);        /* wfb_run.c: modern runtime */
int wfb_cmd_run_legacy(int argc, char **argv); /* wfb_run_legacy.c: legacy runtime */
int wfb_cmd_instances(int argc, char **argv);  /* wfb_instances.c: list a store */
int wfb_cmd_resume(int argc, char **argv);     /* wfb_resume.c: resume a persisted instance */
int wfb_cmd_inspect(int argc, char **argv);    /* wfb_inspect.c: decode one stored instance */
int wfb_cmd_host(int argc, char **argv);       /* wfb_host.c: resume due instances */
int wfb_cmd_start(int argc, char **argv);      /* wfb_start.c: create runnable instances */

/* The instance store used when --store is not given: $WFBRIDGE_STORE if set, else a file in
 * the working directory. A store is a file, sqlite:FILE, postgresql://... or a libpq
 * connection string (docs/durability.md "Choosing a store"). */
#define WFB_DEFAULT_STORE "wfbridge.db"
const char *wfb_store_name(const char *given); /* given, else $WFBRIDGE_STORE, else default */

/* Print one error / warning to stderr in the contract form; returns the exit code for it. */
int wfb_report(const wf_error *err);
void wfb_report_warning(const wf_error *err);
/* Print every diagnostic (sorted into source order); returns 2 if any is an error, else 0. */
int wfb_report_diags(wf_diags *diags);
/* Print "wfbridge VERB: message" for usage problems and return 2. */
int wfb_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --help or -h anywhere in argv[1..]: print usage to stdout and return true. */
bool wfb_wants_help(int argc, char **argv, const char *usage);
/* The failure end of a verb: report err, or "wfbridge VERB: out of memory" when err is unset;
 * returns 2. */
int wfb_fail(const char *verb, const wf_error *err);
/* 0 when err is WF_OK; else report err (naming file when err has no file of its own), return 2. */
int wfb_report_in_file(wf_error *err, const char *file);
/* Append newline-separated names to b as JSON strings joined by ", " (no brackets). */
void wfb_add_json_lines(wf_buf *b, const char *lines);

/* Split "NAME=VALUE" at the first '='. Returns false (and leaves outputs alone) when there is
 * no '=' or the name is empty. name points into a static-free copy: the caller frees *name. */
bool wfb_split_assignment(const char *text, char **name, const char **value);

/* The library path: --lib-path value if given, else $WFBRIDGE_LIB_PATH, else none (NULL out,
 * WF_OK). */
wf_status wfb_libpath(const char *option_value, wf_libpath **out, wf_error *err);

/* The result object printed as the last line of stdout with --json:
 * {"status": ..., "outputs": {...}, "bookmarks": [...], "error": {"type", "message"}} */
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

#endif

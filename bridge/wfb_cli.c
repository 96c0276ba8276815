/* wfb_cli.c — shared CLI plumbing: the one error format, option tables, NAME=VALUE options,
 * quoting input in messages, the library path, checked stdout and the JSON result line (see
 * wfb_cli.h). */
#include "wfb_cli.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/wf_mem.h"
#include "../common/wf_jsonw.h"

/* The verb this process runs (wfb_verb_begin): the prefix of messages without a file. */
static const char *current_verb;
/* Why the first write of the result to stdout failed (0: it did not, or nobody saw why). */
static int stdout_errno;
/* What the verb said, for the --json error object of a failure (wfb_json_failure): the
 * first error it reported (the root cause) and whether a JSON object went to stdout. */
static struct {
    bool error_seen; /* first holds the first error reported */
    bool usage;      /* ... and it was a usage error */
    bool json_out;   /* a JSON object was printed on stdout */
    wf_error first;  /* code WF_OK for a message without a status (wfb_error) */
} said;

void wfb_verb_begin(const char *verb)
{
    current_verb = verb;
    memset(&said, 0, sizeof said);
    wfb_stdin_end();
    optind = 0; /* glibc: a full re-initialisation of getopt_long */
}

static void print_prefix(void)
{
    if (current_verb)
        fprintf(stderr, "wfbridge %s: ", current_verb);
    else
        fputs("wfbridge: ", stderr);
}

/* Keep err as the verb's root cause unless an error came before it. */
static void note_error(const wf_error *err, bool usage)
{
    if (said.error_seen)
        return;
    said.error_seen = true;
    said.usage = usage;
    said.first = *err;
}

/* One message in the contract form: with a file "FILE:L:C: SEV: msg", else the verb prefix. */
static void print_error(const wf_error *err, const char *severity)
{
    char line[1024];
    if (!err->file[0])
        print_prefix();
    wf_error named = *err;
    snprintf(named.file, sizeof named.file, "%s", wfb_stdin_alias(err->file));
    if (strcmp(severity, "error") == 0)
        note_error(&named, false);
    fprintf(stderr, "%s\n", wf_error_format(&named, severity, line, sizeof line));
}

int wfb_report(const wf_error *err)
{
    print_error(err, "error");
    return wf_status_exit_code(err->code);
}

void wfb_report_warning(const wf_error *err)
{
    print_error(err, "warning");
}

__attribute__((format(printf, 2, 0))) static void vmessage(const char *severity, const char *fmt,
                                                         va_list ap, const char *suffix)
{
    if (strcmp(severity, "error") == 0 && !said.error_seen) {
        wf_error text = WF_ERROR_INIT;
        va_list copy;
        va_copy(copy, ap);
        vsnprintf(text.message, sizeof text.message, fmt, copy);
        va_end(copy);
        note_error(&text, strcmp(suffix, "") != 0);
    }
    print_prefix();
    fprintf(stderr, "%s: ", severity);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "%s\n", suffix);
}

int wfb_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage("error", fmt, ap, "");
    va_end(ap);
    return 2;
}

void wfb_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage("warning", fmt, ap, "");
    va_end(ap);
}

int wfb_usage_error(const char *fmt, ...)
{
    char hint[96];
    snprintf(hint, sizeof hint, " (see 'wfbridge %s --help')", current_verb ? current_verb : "");
    va_list ap;
    va_start(ap, fmt);
    vmessage("error", fmt, ap, current_verb ? hint : " (see 'wfbridge --help')");
    va_end(ap);
    return 2;
}

void wfb_json_printed(void)
{
    said.json_out = true;
}

/* The error object of a failure: the root cause's type, message and position. */
static json_t *failure_json(int rc)
{
    const wf_error *e = &said.first;
    const char *type = said.usage ? "UsageError" : rc == 2 ? "InputError" : "Failure";
    json_t *error = json_pack("{s:s, s:o}", "type", type, "message",
                              wf_jsonw_str(said.error_seen ? e->message : "failed"));
    bool ok = error != NULL;
    if (ok && e->code != WF_OK)
        ok = wf_jsonw_set(error, "code", json_string(wf_status_name(e->code)));
    if (ok && e->file[0])
        ok = wf_jsonw_set(error, "file", wf_jsonw_str(e->file));
    if (ok && e->line)
        ok = wf_jsonw_set(error, "line", json_integer(e->line)) &&
             wf_jsonw_set(error, "col", json_integer(e->col));
    json_t *root = ok ? json_pack("{s:s, s:o}", "status", "error", "error", error) : NULL;
    if (!ok)
        json_decref(error);
    return root;
}

void wfb_json_failure(int argc, char **argv, int rc)
{
    bool json = false;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        json |= strcmp(argv[i], "--json") == 0;
    if (rc == 0 || said.json_out || !json)
        return;
    json_t *root = failure_json(rc);
    if (root)
        wf_jsonw_print(stdout, root, WF_JSONW_SPACED);
    json_decref(root);
}

static bool same_diag(const wf_diag *a, const wf_diag *b)
{
    return a->severity == b->severity && a->error.code == b->error.code &&
           a->error.line == b->error.line && a->error.col == b->error.col &&
           strcmp(a->error.file, b->error.file) == 0 &&
           strcmp(a->error.message, b->error.message) == 0;
}

int wfb_report_diags(wf_diags *diags, bool no_libpath)
{
    if (!diags)
        return 0;
    wf_diags_sort(diags);
    size_t n = wf_diags_count(diags);
    bool nolib_only = false;
    for (size_t i = 0; no_libpath && i < n; i++) {
        const wf_diag *d = wf_diags_get(diags, i);
        if (d->severity == WF_SEV_ERROR && d->error.code == WF_E_NOLIB)
            nolib_only = true;
    }
    if (nolib_only)
        wfb_error("%s", WFB_NO_LIBPATH);
    int rc = nolib_only ? 2 : 0;
    for (size_t i = 0; i < n; i++) {
        const wf_diag *d = wf_diags_get(diags, i);
        if (i > 0 && same_diag(d, wf_diags_get(diags, i - 1)))
            continue;
        if (nolib_only && d->error.code != WF_E_NOLIB)
            continue; /* follow-on errors of the missing library path */
        print_error(&d->error, d->severity == WF_SEV_ERROR     ? "error"
                               : d->severity == WF_SEV_WARNING ? "warning"
                                                               : "note");
        if (d->severity == WF_SEV_ERROR)
            rc = 2;
    }
    return rc;
}

int wfb_fail(const wf_error *err)
{
    if (err->code != WF_OK)
        wfb_report(err);
    else
        wfb_error("out of memory");
    return 2;
}

int wfb_report_in_file(wf_error *err, const char *file)
{
    if (err->code == WF_OK)
        return 0;
    if (!err->file[0])
        snprintf(err->file, sizeof err->file, "%s", file);
    return wfb_report(err);
}

#define QUOTE_BYTES 60

char *wfb_quote(const char *text, char *buf, size_t size)
{
    assert(size >= 96); /* the longest result: 60 bytes, quotes, "..." and the byte count */
    size_t len = strlen(text);
    if (len <= QUOTE_BYTES) {
        snprintf(buf, size, "'%s'", text);
        return buf;
    }
    size_t cut = QUOTE_BYTES;
    while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80)
        cut--; /* text[cut] continues a UTF-8 sequence: cut before the sequence starts */
    snprintf(buf, size, "'%.*s...' (%zu bytes)", (int)cut, text, len);
    return buf;
}

json_t *wfb_json_lines(const char *lines)
{
    json_t *arr = json_array();
    bool ok = arr != NULL;
    for (const char *p = lines; ok && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        ok = wf_jsonw_append(arr, wf_jsonw_strn(p, len));
        p += len + (nl ? 1 : 0);
    }
    if (!ok)
        json_decref(arr);
    return ok ? arr : NULL;
}

int wfb_print_json(json_t *root)
{
    wf_buf b;
    wf_buf_init(&b);
    bool ok = root && wf_jsonw_dump(root, WF_JSONW_SPACED, &b) && wf_buf_addc(&b, '\n');
    if (ok)
        fwrite(b.data, 1, b.len, stdout); /* a failed write is reported at the end */
    said.json_out |= ok;
    wf_buf_fini(&b);
    json_decref(root);
    return ok ? 0 : wfb_error("out of memory");
}

json_t *wfb_json_time_us(int64_t us)
{
    char when[64];
    wf_datetime_format(us, when, sizeof when);
    return json_string(when);
}

/* ---- options ------------------------------------------------------------------------------ */
int wfb_getopt(int argc, char **argv, const struct option *table)
{
    return wfb_getopt_short(argc, argv, ":h", table);
}

int wfb_getopt_short(int argc, char **argv, const char *shortopts, const struct option *table)
{
    assert(shortopts[0] == ':' && strchr(shortopts, 'h'));
    opterr = 0; /* the messages below are in the contract form */
    int prev = optind;
    int c = getopt_long(argc, argv, shortopts, table, NULL);
    if (c != '?' && c != ':')
        return c;
    const char *text = optind > prev && optind <= argc ? argv[optind - 1] : argv[prev];
    char q[128];
    if (c == ':')
        return wfb_usage_error("option %s needs a value", text), '?';
    if (optopt && optopt != '?' && strncmp(text, "--", 2) != 0)
        return wfb_usage_error("unknown option '-%c'", optopt), '?';
    return wfb_usage_error("unknown option %s", wfb_quote(text, q, sizeof q)), '?';
}

int wfb_operand(int argc, char **argv, const char *what, const char **out)
{
    char q[128];
    if (what && optind >= argc)
        return wfb_usage_error("no %s given", what);
    int extra = what ? optind + 1 : optind;
    if (extra < argc)
        return wfb_usage_error("unexpected argument %s%s", wfb_quote(argv[extra], q, sizeof q),
                               what ? " (one operand only)" : "");
    if (what)
        *out = argv[optind];
    return 0;
}

int wfb_help(const char *usage)
{
    fputs(usage, stdout);
    return 0;
}

int wfb_assigns_add(wfb_assigns *a, const char *text, bool unique)
{
    char q[128];
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return wfb_usage_error("%s needs NAME=VALUE, not %s", a->option,
                               wfb_quote(text, q, sizeof q));
    size_t len = (size_t)(eq - text);
    for (size_t i = 0; unique && i < a->count; i++)
        if (strlen(a->names[i]) == len && memcmp(a->names[i], text, len) == 0)
            return wfb_usage_error("%s %s is given more than once", a->option, a->names[i]);
    if (a->count == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 8;
        char **names = wf_realloc(a->names, cap * sizeof *names);
        if (names)
            a->names = names;
        const char **values = names ? wf_realloc(a->values, cap * sizeof *values) : NULL;
        if (!values)
            return wfb_error("out of memory");
        a->values = values;
        a->cap = cap;
    }
    char *name = wf_strndup(text, len);
    if (!name)
        return wfb_error("out of memory");
    a->names[a->count] = name;
    a->values[a->count++] = eq + 1;
    return 0;
}

void wfb_assigns_fini(wfb_assigns *a)
{
    for (size_t i = 0; i < a->count; i++)
        wf_free(a->names[i]);
    wf_free(a->names);
    wf_free(a->values);
    a->names = NULL;
    a->values = NULL;
    a->count = a->cap = 0;
}

int wfb_parse_count(const char *option, const char *text, unsigned long long min,
                    unsigned long long max, unsigned long long *out)
{
    char q[128];
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno || n < min || n > max)
        return wfb_usage_error("%s needs a whole number from %llu to %llu, not %s", option, min,
                               max, wfb_quote(text, q, sizeof q));
    *out = n;
    return 0;
}

wf_status wfb_libpath(const char *option_value, wf_libpath **out, wf_error *err)
{
    *out = NULL;
    const char *dirs = option_value ? option_value : getenv("WFBRIDGE_LIB_PATH");
    if (!dirs || !*dirs)
        return WF_OK;
    return wf_libpath_create(dirs, out, err);
}

int64_t wfb_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void wfb_sleep_until(int64_t due_us)
{
    int64_t wait = due_us - wfb_now_us();
    if (wait <= 0)
        return;
    struct timespec ts = {(time_t)(wait / 1000000), (long)(wait % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* ---- output ------------------------------------------------------------------------------- */
static json_t *result_json(const wfb_result *r)
{
    json_t *root = json_pack("{s:o}", "status", wf_jsonw_str(r->status));
    json_t *outputs = wf_jsonw_members(r->output_names, r->output_values, r->output_count, false);
    json_t *marks = json_array();
    bool ok = root && outputs && marks;
    if (ok && r->instance_id)
        ok = wf_jsonw_set(root, "id", wf_jsonw_str(r->instance_id));
    for (size_t i = 0; ok && i < r->bookmark_count; i++)
        ok = wf_jsonw_append(marks, wf_jsonw_str(r->bookmarks[i]));
    ok = ok && wf_jsonw_set(root, "outputs", json_incref(outputs)) &&
         wf_jsonw_set(root, "bookmarks", json_incref(marks));
    if (ok && r->error_type)
        ok = wf_jsonw_set(root, "error",
                          json_pack("{s:o, s:o}", "type", wf_jsonw_str(r->error_type), "message",
                                    wf_jsonw_str(r->error_message ? r->error_message : "")));
    json_decref(outputs);
    json_decref(marks);
    if (!ok)
        json_decref(root);
    return ok ? root : NULL;
}

void wfb_print_result(FILE *out, const wfb_result *r)
{
    json_t *root = result_json(r);
    wf_buf b;
    wf_buf_init(&b);
    if (root)
        wf_jsonw_dump(root, WF_JSONW_SPACED, &b);
    json_decref(root);
    wf_buf_addc(&b, '\n');
    said.json_out |= out == stdout;
    errno = 0;
    if ((fputs(!root || b.oom ? "{\"status\": \"Faulted\", \"error\": {\"type\": \"OutOfMemory\"}}\n"
                              : b.data,
               out) == EOF ||
         fflush(out) != 0) &&
        out == stdout && !stdout_errno)
        stdout_errno = errno;
    wf_buf_fini(&b);
}

int wfb_status_exit_code(const char *status)
{
    return strcmp(status, "Closed") == 0 || strcmp(status, "Idle") == 0 ? 0 : 1;
}

int wfb_close_stdout(int rc)
{
    errno = 0;
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    int saved = stdout_errno ? stdout_errno : errno;
    if (fclose(stdout) != 0 && !failed) {
        failed = true;
        saved = errno;
    }
    if (!failed)
        return rc;
    wfb_error("cannot write standard output: %s", saved ? strerror(saved) : "write error");
    return 2;
}

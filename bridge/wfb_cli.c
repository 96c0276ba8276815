/* wfb_cli.c — shared CLI plumbing: error reporting in the contract form, NAME=VALUE options,
 * the library path and the JSON result line (see wfb_cli.h). */
#include "wfb_cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"

int wfb_report(const wf_error *err)
{
    char line[1024];
    fprintf(stderr, "%s\n", wf_error_format(err, "error", line, sizeof line));
    return wf_status_exit_code(err->code);
}

void wfb_report_warning(const wf_error *err)
{
    char line[1024];
    fprintf(stderr, "%s\n", wf_error_format(err, "warning", line, sizeof line));
}

int wfb_report_diags(wf_diags *diags)
{
    if (!diags)
        return 0;
    wf_diags_sort(diags);
    int rc = 0;
    for (size_t i = 0; i < wf_diags_count(diags); i++) {
        const wf_diag *d = wf_diags_get(diags, i);
        char line[1024];
        const char *sev = d->severity == WF_SEV_ERROR     ? "error"
                          : d->severity == WF_SEV_WARNING ? "warning"
                                                          : "note";
        fprintf(stderr, "%s\n", wf_error_format(&d->error, sev, line, sizeof line));
        if (d->severity == WF_SEV_ERROR)
            rc = 2;
    }
    return rc;
}

int wfb_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "wfbridge %s: ", verb);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'wfbridge %s --help')\n", verb);
    va_end(ap);
    return 2;
}

bool wfb_wants_help(int argc, char **argv, const char *usage)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return true;
        }
    return false;
}

int wfb_fail(const char *verb, const wf_error *err)
{
    if (err->code != WF_OK)
        wfb_report(err);
    else
        fprintf(stderr, "wfbridge %s: out of memory\n", verb);
    return 2;
}

int wfb_report_in_file(wf_error *err, const char *file)
{
    if (err->code == WF_OK)
        return 0;
    if (!err->file[0])
        snprintf(err->file, sizeof err->file, "%s", file);
    wfb_report(err);
    return 2;
}

void wfb_add_json_lines(wf_buf *b, const char *lines)
{
    const char *p = lines;
    for (bool first = true; *p; first = false) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        wf_buf_adds(b, first ? "" : ", ");
        wf_buf_add_json_string(b, p, len);
        p += len + (nl ? 1 : 0);
    }
}

bool wfb_split_assignment(const char *text, char **name, const char **value)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return false;
    char *n = wf_strndup(text, (size_t)(eq - text));
    if (!n)
        return false;
    *name = n;
    *value = eq + 1;
    return true;
}

wf_status wfb_libpath(const char *option_value, wf_libpath **out, wf_error *err)
{
    *out = NULL;
    const char *dirs = option_value ? option_value : getenv("WFBRIDGE_LIB_PATH");
    if (!dirs || !*dirs)
        return WF_OK;
    return wf_libpath_create(dirs, out, err);
}

void wfb_print_result(FILE *out, const wfb_result *r)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_adds(&b, "{\"status\": ");
    wf_buf_add_json_string(&b, r->status, strlen(r->status));
    if (r->instance_id) {
        wf_buf_adds(&b, ", \"id\": ");
        wf_buf_add_json_string(&b, r->instance_id, strlen(r->instance_id));
    }
    wf_buf_adds(&b, ", \"outputs\": {");
    for (size_t i = 0; i < r->output_count; i++) {
        if (i)
            wf_buf_adds(&b, ", ");
        wf_buf_add_json_string(&b, r->output_names[i], strlen(r->output_names[i]));
        wf_buf_adds(&b, ": ");
        wf_value_to_json(&r->output_values[i], &b);
    }
    wf_buf_adds(&b, "}, \"bookmarks\": [");
    for (size_t i = 0; i < r->bookmark_count; i++) {
        if (i)
            wf_buf_adds(&b, ", ");
        wf_buf_add_json_string(&b, r->bookmarks[i], strlen(r->bookmarks[i]));
    }
    wf_buf_adds(&b, "]");
    if (r->error_type) {
        wf_buf_adds(&b, ", \"error\": {\"type\": ");
        wf_buf_add_json_string(&b, r->error_type, strlen(r->error_type));
        wf_buf_adds(&b, ", \"message\": ");
        const char *m = r->error_message ? r->error_message : "";
        wf_buf_add_json_string(&b, m, strlen(m));
        wf_buf_adds(&b, "}");
    }
    wf_buf_adds(&b, "}\n");
    fputs(b.oom ? "{\"status\": \"Faulted\", \"error\": {\"type\": \"OutOfMemory\"}}\n" : b.data,
          out);
    fflush(out);
    wf_buf_fini(&b);
}

int wfb_status_exit_code(const char *status)
{
    return strcmp(status, "Closed") == 0 || strcmp(status, "Idle") == 0 ? 0 : 1;
}

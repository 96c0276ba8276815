/* wfb_stdin.c — `-` as the definition a verb reads: standard input is copied (at most
 * WF_FILE_MAX_BYTES) into a private temporary directory, whose file then stands for the operand,
 * and messages about that file name it "<stdin>" (wfb_cli.h). One per process at a time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/wf_file.h"
#include "wfb_cli.h"

/* The temporary copy of stdin ("" when there is none) and its directory. */
static char stdin_path[4200];
static char stdin_dir[4096];

const char *wfb_stdin_alias(const char *file)
{
    return stdin_path[0] && strcmp(file, stdin_path) == 0 ? "<stdin>" : file;
}

void wfb_stdin_end(void)
{
    if (!stdin_path[0])
        return;
    unlink(stdin_path);
    rmdir(stdin_dir);
    stdin_path[0] = stdin_dir[0] = '\0';
}

int wfb_stdin_begin(const char **path, const char *suffix)
{
    if (strcmp(*path, "-") != 0)
        return 0;
    wfb_stdin_end();
    const char *base = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(stdin_dir, sizeof stdin_dir, "%s/wfbridge-stdin-XXXXXX", base);
    if (!mkdtemp(stdin_dir)) {
        int e = errno;
        stdin_dir[0] = '\0';
        return wfb_error("cannot make a temporary directory in %s: %s", base, strerror(e));
    }
    snprintf(stdin_path, sizeof stdin_path, "%s/stdin%s", stdin_dir, suffix);
    wf_buf text;
    wf_buf_init(&text);
    wf_error err = WF_ERROR_INIT;
    wf_status st = wf_file_read("/dev/stdin", 0, &text, &err);
    FILE *f = st == WF_OK ? fopen(stdin_path, "wb") : NULL;
    bool ok = f && fwrite(text.data, 1, text.len, f) == text.len;
    ok = f && fclose(f) == 0 && ok;
    wf_buf_fini(&text);
    if (!ok) {
        wfb_stdin_end();
        if (st != WF_OK)
            snprintf(err.file, sizeof err.file, "<stdin>");
        return st != WF_OK ? wfb_report(&err) : wfb_error("cannot copy standard input");
    }
    *path = stdin_path;
    return 0;
}

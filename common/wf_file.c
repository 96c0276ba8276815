/* wf_file.c — wf_file_read: a whole file into a wf_buf, checking the cap before each append,
 * so the memory used never exceeds the cap plus one chunk (wf_file.h). */
#include "wf_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

wf_status wf_file_read(const char *path, size_t max_len, wf_buf *out, wf_error *err)
{
    size_t max = max_len ? max_len : WF_FILE_MAX_BYTES;
    wf_loc at = {path, 0, 0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return wf_error_set(err, WF_E_IO, &at, "cannot open: %s", strerror(errno));
    size_t start = out->len;
    bool was_oom = out->oom;
    char chunk[16384];
    size_t n;
    wf_status st = WF_OK;
    while (st == WF_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (out->len - start + n > max)
            st = wf_error_set(err, WF_E_LIMIT, &at, "file is larger than %zu bytes", max);
        else if (!wf_buf_add(out, chunk, n))
            st = wf_error_set(err, WF_E_NOMEM, &at, "out of memory reading the file");
    }
    if (st == WF_OK && ferror(f))
        st = wf_error_set(err, WF_E_IO, &at, "cannot read: %s", strerror(errno));
    fclose(f);
    if (st != WF_OK) {
        out->len = start;
        out->oom = was_oom;
        if (out->cap)
            out->data[start] = '\0';
    }
    return st;
}

/* wfc_output.h — where converted files go: the output path for an input (beside it, or
 * mirrored under an output directory), and writing them all or nothing: each file goes to a
 * temporary file in its own directory, and only when every one was written are they renamed
 * into place, so a reader never sees half a definition and a failed file leaves no output. */
#ifndef WFC_OUTPUT_H
#define WFC_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"

/* A set of files written together:
 *   1. wfc_writes_create;
 *   2. wfc_writes_add for each file (writes a temporary file beside it, or keeps the bytes for
 *      a stream);
 *   3. wfc_writes_commit (renames every temporary file into place, then writes streams);
 *   4. wfc_writes_destroy: whatever was not committed is removed, with the directories
 *      wfc_writes_add created, so a failure at any step leaves nothing behind.
 * A path is a new path or a regular file (replaced by rename), a symbolic link to a regular
 * file (the file it names is replaced, the link kept), a character device, FIFO or socket
 * (written in place, never renamed over: /dev/null), or "-", /dev/stdout, /dev/stderr (the
 * process's own descriptor, also when it leads to a regular file).
 * A directory or a dangling link is refused (WF_E_IO naming the path). */
typedef struct wfc_writes wfc_writes;
wf_status wfc_writes_create(wfc_writes **out, wf_error *err);
wf_status wfc_writes_add(wfc_writes *w, const char *path, const char *data, size_t len,
                         wf_error *err);
wf_status wfc_writes_commit(wfc_writes *w, wf_error *err);
void wfc_writes_destroy(wfc_writes *w);

/* One file through a wfc_writes set of its own. */
wf_status wfc_write_atomic(const char *path, const char *data, size_t len, wf_error *err);

/* Whether path is written as a stream, not replaced as a file: "-", /dev/stdout, /dev/stderr,
 * or an existing character device, FIFO or socket (after following links). */
bool wfc_output_is_stream(const char *path);
/* Whether path is this process's standard output ("-", /dev/stdout, /dev/fd/1). */
bool wfc_output_is_stdout(const char *path);

/* The XAML path for `input`: OUT_DIR/RELATIVE with .xoml replaced by .xaml when out_dir is
 * given (relative = input below in_dir), else beside the input. WF_E_LIMIT if too long. */
wf_status wfc_output_path(const char *input, const char *in_dir, const char *out_dir, char *out,
                          size_t size, wf_error *err);

/* WF_E_IO when output and input name the same file (an existing file compared by device and
 * inode, or the same text). */
wf_status wfc_output_check(const char *input, const char *output, wf_error *err);

/* WF_E_IO when an output names one of the inputs or another output: compared by device and
 * inode (a path that does not exist yet by its directory's device and inode and its last
 * name), so `a/../b.xoml` and a hard link are caught. Streams (devices, "-" once) may repeat.
 * what[i] names output i in the message ("--csv"); NULL entries of either list are skipped. */
wf_status wfc_output_clash(const char *const *inputs, size_t input_count,
                           const char *const *outputs, const char *const *what,
                           size_t output_count, wf_error *err);

#endif

/* wfc_output.h — where converted files go: the output path for an input (beside it, or
 * mirrored under an output directory), and writing atomically (a temporary file in the same
 * directory, then rename), so a reader never sees half a definition or half a report. */
#ifndef WFC_OUTPUT_H
#define WFC_OUTPUT_H

#include <stddef.h>

#include "../common/wf_error.h"

/* Write len bytes to path through PATH.tmpXXXXXX + rename. Creates missing parent
 * directories. WF_E_IO (naming the path and the system error) when the directory cannot be
 * made or written; nothing is left behind on failure. */
wf_status wfc_write_atomic(const char *path, const char *data, size_t len, wf_error *err);

/* The XAML path for `input`: OUT_DIR/RELATIVE with .xoml replaced by .xaml when out_dir is
 * given (relative = input below in_dir), else beside the input. WF_E_LIMIT if too long. */
wf_status wfc_output_path(const char *input, const char *in_dir, const char *out_dir, char *out,
                          size_t size, wf_error *err);

/* WF_E_IO when output and input name the same file (an existing file compared by device and
 * inode, or the same text). */
wf_status wfc_output_check(const char *input, const char *output, wf_error *err);

#endif

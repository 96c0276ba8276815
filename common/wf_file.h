/* wf_file.h — reading a whole input file (a workflow, a library description, a rules file)
 * into memory with a size cap that holds while reading, so a device or FIFO that never ends
 * (/dev/zero, a pipe whose writer keeps writing) stops at the cap instead of growing memory
 * without limit. Every loader reads its input through wf_file_read. */
#ifndef WF_FILE_H
#define WF_FILE_H

#include <stddef.h>

#include "wf_error.h"
#include "wf_mem.h"

/* The loaders' default cap on an input file (also the XML loader's default max_bytes). */
#define WF_FILE_MAX_BYTES ((size_t)64 << 20)

/* Append the bytes of `path` to `out` (initialised by the caller), reading at most
 * `max_len` bytes (0: WF_FILE_MAX_BYTES). Errors, located at `path` (line 0): WF_E_IO (cannot
 * open / read, with the system's reason), WF_E_LIMIT ("larger than N bytes": reading stopped
 * at the cap), WF_E_NOMEM. On failure `out` is left at its former length. */
wf_status wf_file_read(const char *path, size_t max_len, wf_buf *out, wf_error *err);

#endif

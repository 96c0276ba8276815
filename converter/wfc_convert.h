/* wfc_convert.h — the converter's engine: one legacy definition (.xoml, its .rules, the type
 * libraries it names) read with the legacy loader, mapped onto the modern vocabulary
 * (docs/semantics.md §7), written as deterministic XAML and proven by loading it with the
 * modern loader. What became of every activity goes to a migration report entry. */
#ifndef WFC_CONVERT_H
#define WFC_CONVERT_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_native.h"
#include "../common/wf_version.h"
#include "../modern/wfm_activity.h"
#include "wfc_report.h"

/* Lifecycle:
 * 1. wfc_opts o = WFC_OPTS_INIT; set libpath (type libraries and native libraries).
 * 2. wfc_convert_file(&o, "in.xoml", file, &xaml, &len, &err) with a wfc_file from a
 *    wfc_report: on success the file's status is converted (or partial) and *xaml is the
 *    validated XAML text (the caller wf_frees it); nothing is written anywhere.
 * 3. On failure *xaml is NULL, the file's status is failed with every problem in its
 *    diagnostics, and err holds the first one (file:line:col of the .xoml where known).
 * No globals and no printing: conversions may run on several threads with separate files. */

#define WFC_VERSION WF_VERSION /* common/wf_version.h */

typedef struct wfc_opts {
    const wf_libpath *libpath; /* borrowed; NULL: no type libraries can be found */
    const char *rules_path;    /* NULL: FILE.rules beside FILE.xoml when present */
    const char *output_name;   /* file name the XAML will have (modern locations); NULL:
                                  the source with .xaml */
    bool force_interop;        /* --interop: every custom activity goes through Interop */
    /* Registers the Interop activity kind in the validating runtime's catalogue
     * (wfb_interop_register); NULL: a file that needs Interop fails (needs-interop). */
    wf_status (*register_interop)(wfm_catalogue *cat, wf_error *err);
} wfc_opts;

#define WFC_OPTS_INIT                                                                              \
    {.libpath = NULL, .rules_path = NULL, .output_name = NULL, .force_interop = false,             \
     .register_interop = NULL}

/* Files a conversion generates beside its XAML: for every subtree hosted through Interop a
 * composite type library NAME.activities.xml, its body NAME.xoml and, when the workflow has
 * rules, NAME.rules (docs/convert.md "Interop"). Names are plain file names. */
typedef struct wfc_sidecar {
    char *name;
    char *text;
    size_t len;
    bool optional; /* not needed to run the XAML (the migration map): skipped, not refused,
                    * when the XAML goes to a stream and no sidecar directory is given */
} wfc_sidecar;

typedef struct wfc_sidecars {
    wfc_sidecar *items;
    size_t count;
} wfc_sidecars;

#define WFC_SIDECARS_INIT {.items = NULL, .count = 0}

void wfc_sidecars_free(wfc_sidecars *s); /* and reset to empty */

/* Errors: whatever the legacy loader reports for the input (WF_E_IO, WF_E_XML, WF_E_SCHEMA,
 * WF_E_NAME, WF_E_NOLIB, ...), WF_E_UNSUPPORTED for constructs that need the Interop
 * activity, WF_E_SCHEMA/WF_E_TYPE/... when the modern loader rejects what was written (a
 * converter bug, reported as rule modern-validation), WF_E_NOMEM. */
wf_status wfc_convert_file(const wfc_opts *opts, const char *path, wfc_file *file, char **xaml,
                           size_t *len, wf_error *err);
/* The same, also returning the generated files (side may be NULL: they are dropped). On
 * failure side is empty. The XAML only loads with its generated files on the library path. */
wf_status wfc_convert_file_side(const wfc_opts *opts, const char *path, wfc_file *file,
                                char **xaml, size_t *len, wfc_sidecars *side, wf_error *err);

#endif

/* wfc_scaffold.h — `convert --scaffold DIR`: the native code a migration needs, as a starting
 * point. The .xoml is scanned as XML (no type library needed) for the code-beside class, its
 * properties, handlers and conditions, and the custom activity types it uses; whatever no
 * type library on the library path provides is written as NAME.activities.xml plus NAME.c
 * with matching signatures and TODO bodies (docs/convert.md "Scaffolding"). */
#ifndef WFC_SCAFFOLD_H
#define WFC_SCAFFOLD_H

#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_native.h"

typedef struct wfc_scaffold_result {
    size_t symbol_count;     /* classes, properties, handlers, conditions, activity types */
    size_t guessed_count;    /* of which the type was guessed */
    char typelib_path[1024]; /* "" when nothing was missing (then nothing is written) */
    char source_path[1024];
} wfc_scaffold_result;

/* Scan `xoml`, compare with the type libraries found on libpath (NULL: none), and write the
 * missing declarations into dir (created if needed), atomically. Errors: WF_E_IO, WF_E_XML
 * (located in the .xoml), WF_E_NOMEM. */
wf_status wfc_scaffold(const wf_libpath *libpath, const char *xoml, const char *dir,
                       wfc_scaffold_result *out, wf_error *err);

#endif

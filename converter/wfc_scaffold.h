/* wfc_scaffold.h — `convert --scaffold DIR`: the native code a migration needs, inferred from
 * the markup. Every .xoml (and its .rules) of a run is scanned as XML; whatever no type
 * library on the library path declares is written into DIR as one type library per assembly
 * the files name (NAME.activities.xml), NAME.c with a TODO body per function, and a Makefile
 * that builds every libNAME.so, so the same run converts against those declarations
 * (docs/convert.md "Scaffolding"). Re-running never changes what is there: new declarations
 * are inserted into the type library, new functions go to a new NAME__N.c, conflicts are
 * reported. */
#ifndef WFC_SCAFFOLD_H
#define WFC_SCAFFOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_native.h"

/* Lifecycle:
 * 1. wfc_scaffold_create(libpath, dir, &s, &err): libpath (may be NULL) holds the user's type
 *    libraries; dir is the scaffold directory (a previous scaffold there is read, not
 *    replaced).
 * 2. wfc_scaffold_scan(s, xoml, rules, &err) for every file of the run (rules: the .rules
 *    path, or NULL to use the one beside the .xoml if any). A malformed file is WF_E_XML,
 *    located; the other files still scan.
 * 3. wfc_scaffold_write(s, &result, &err) writes everything at once after checking it all
 *    (an unreadable or hand-broken type library in dir, an assembly name that is not a plain
 *    file name: nothing is written). Then convert with dir on the library path.
 * 4. wfc_scaffold_note_count / _note_at read what was added per source file (the report's work
 *    list); wfc_scaffold_destroy. */
typedef struct wfc_scaffold wfc_scaffold;

typedef struct wfc_scaffold_result {
    size_t declarations;  /* new type-library entries written (classes, members, types) */
    size_t functions;     /* new C functions with a TODO body */
    size_t guessed;       /* new properties and parameters whose type was guessed */
    size_t conflicts;     /* existing declarations the markup now contradicts */
    size_t files_written; /* type libraries, C files and the Makefile written or extended */
} wfc_scaffold_result;

wf_status wfc_scaffold_create(const wf_libpath *libpath, const char *dir, wfc_scaffold **out,
                              wf_error *err);
wf_status wfc_scaffold_scan(wfc_scaffold *s, const char *xoml, const char *rules, wf_error *err);
wf_status wfc_scaffold_write(wfc_scaffold *s, wfc_scaffold_result *out, wf_error *err);
void wfc_scaffold_destroy(wfc_scaffold *s); /* accepts NULL */

/* What the scaffold did for one source file, each with the markup position that needs it:
 * kind "function" (a C function to implement: text = its signature and file), "guessed" (a type
 * to check), "conflict" (a declaration that disagrees with the markup), "declared". */
typedef struct wfc_scaffold_note {
    const char *kind;
    const char *text;
    unsigned line, col;
} wfc_scaffold_note;
size_t wfc_scaffold_note_count(const wfc_scaffold *s, const char *source);
bool wfc_scaffold_note_at(const wfc_scaffold *s, const char *source, size_t index,
                          wfc_scaffold_note *out);

#endif

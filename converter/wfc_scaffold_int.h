/* wfc_scaffold_int.h — the scaffold's model, shared by the scanner (wfc_scaffold.c) and the
 * writer (wfc_scaffold_write.c): one flat list of declarations keyed by (kind, assembly,
 * container, owner, name), each with its best type evidence and the first markup position
 * that needs it. An item's type only gets stronger; the writer decides what is new. */
#ifndef WFC_SCAFFOLD_INT_H
#define WFC_SCAFFOLD_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_mem.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"
#include "wfc_scaffold.h"

typedef enum sc_kind {
    SC_ASSEMBLY,     /* a type library must exist (every clr-namespace with Assembly=) */
    SC_CLASS,        /* container: code-beside or workflow base class */
    SC_CLASS_PROP,   /* container = class */
    SC_HANDLER,      /* container = class */
    SC_CONDITION,    /* container = class */
    SC_ACTIVITY,     /* an ActivityType */
    SC_ACT_PROP,     /* container = activity type */
    SC_SERVICE,      /* a local-service interface */
    SC_METHOD,       /* container = service */
    SC_METHOD_PARAM, /* container = service, owner = method */
    SC_EVENT,        /* container = service */
    SC_EVENT_PARAM,  /* container = service, owner = event */
} sc_kind;

/* How sure a type is: a guess, a literal's shape, a rule's comparison, or stated. */
enum { SC_GUESS = 0, SC_LITERAL = 1, SC_INFERRED = 2, SC_CERTAIN = 3 };

typedef struct sc_item {
    sc_kind kind;
    char *assembly, *container, *owner, *name; /* owned; "" when not used */
    const char *type;                          /* static type name: "String", "Int32", ... */
    int strength;                              /* SC_GUESS ... SC_CERTAIN */
    int dir;            /* wfl_tl_dir for activity properties and method parameters */
    const char *base;   /* SC_CLASS of a custom root: its BaseType, else NULL */
    bool composite;     /* SC_ACTIVITY with child activities in the markup */
    bool is_set;        /* SC_ACT_PROP: the markup gives it a value (literal or bind) */
    bool is_read;       /* SC_ACT_PROP: another activity binds to it (Out unless set) */
    bool implied;       /* SC_ASSEMBLY only because an item lives there: no empty file */
    char *source;       /* owned: the first file that needs it */
    unsigned line, col; /* there */
    /* writer: */
    bool exists;    /* a type library already declares it */
    char *function; /* owned: C symbol of a new handler/condition/activity/method */
} sc_item;

/* A note for the report (wfc_scaffold_note). */
typedef struct sc_note {
    char *source, *kind, *text; /* owned */
    unsigned line, col;
} sc_note;

struct wfc_scaffold {
    const wf_libpath *libpath; /* borrowed: the user's type libraries, may be NULL */
    char *dir;
    sc_item *items;
    size_t count, cap;
    wf_strmap *index;   /* key -> item index + 1 (as a pointer-sized integer) */
    size_t (*links)[2]; /* pairs of items that must share a type (a bind) */
    size_t link_count, link_cap;
    sc_note *notes;
    size_t note_count, note_cap;
    bool nomem;
};

/* Find or add an item; its type becomes `type` when `strength` beats what it had. Returns
 * the index, or (size_t)-1 after out of memory (s->nomem). */
size_t wfc__sc_add(wfc_scaffold *s, sc_kind kind, const char *assembly, const char *container,
                   const char *owner, const char *name, const char *type, int strength,
                   const char *source, unsigned line, unsigned col);
size_t wfc__sc_find(const wfc_scaffold *s, sc_kind kind, const char *assembly,
                    const char *container, const char *owner, const char *name);
void wfc__sc_link(wfc_scaffold *s, size_t a, size_t b);
void wfc__sc_note(wfc_scaffold *s, const char *source, const char *kind, unsigned line,
                  unsigned col, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* A C type for a type-library type, or NULL when it has no C mapping. */
const char *wfc__sc_ctype(const char *type, int dir);

#endif

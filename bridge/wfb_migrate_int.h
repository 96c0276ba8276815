/* wfb_migrate_int.h — shared by the files of `wfbridge migrate-instances` (docs/migrate.md):
 * the definitions of each --map pair, one plan per legacy instance (where it waits, what the
 * modern instance becomes) and the two passes over the stores. */
#ifndef WFB_MIGRATE_INT_H
#define WFB_MIGRATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "../legacy/wfl_def.h"
#include "../modern/wfm_runtime.h"
#include "wfb_cli.h"

#define MIG_MAX_NAMES  32 /* queues, bookmarks, timers or executing activities kept per plan */
#define MIG_MAX_DEPTH  4  /* events and timers a replay may take to reach the position */
#define MIG_MAX_TRIES  256

/* One --map OLD.xoml=NEW.xaml: both definitions and the value map of NEW.xaml.map.json
 * (legacy property -> modern argument or variable; identity for names it does not list). */
typedef struct mig_map {
    const char *xoml, *xaml; /* borrowed from argv */
    wfl_definition *ldef;
    wfm_definition *mdef;
    char **from, **to; /* the map file's "values" pairs of the root's properties */
    size_t pair_count;
    char **act_owner, **act_from, **act_to; /* ... and of other activities' properties */
    size_t act_count;
} mig_map;

typedef enum mig_verdict {
    MIG_MOVABLE = 0,  /* a modern position matches */
    MIG_INTEROP,      /* matches, inside an activity hosted through Interop */
    MIG_NOT_MOVABLE,  /* stays legacy (reason) */
    MIG_DONE,         /* already migrated by an earlier run */
    MIG_FAILED,       /* the move itself failed (reason) */
} mig_verdict;

typedef struct mig_names {
    char *v[MIG_MAX_NAMES];
    size_t n;
} mig_names;

/* One legacy instance and what it becomes. */
typedef struct mig_plan {
    char *id;
    char status[32]; /* legacy status */
    const mig_map *map;
    mig_verdict verdict;
    char reason[384];
    mig_names queues, executing; /* legacy position */
    int64_t timers[MIG_MAX_NAMES];
    size_t timer_count;
    /* the modern instance (movable ones) */
    wf_buf state;
    mig_names bookmarks;
    int64_t next_timer_us; /* 0: none */
    size_t values_carried;
    mig_names steps; /* resumptions the replay took: "bookmark NAME" / "timer" */
    char from_owner[320]; /* a row left Migrating: the process that marked it ("": none) */
} mig_plan;

typedef struct mig_ctx {
    wfm_runtime *rt;
    const wf_libpath *lib_path;
    wf_types *ltypes;
    int64_t now_us; /* the runtime's virtual clock during replays */
    mig_map *maps;
    size_t map_count;
} mig_ctx;

/* Load every --map pair on a runtime with Interop and a virtual clock (wfb_migrate.c): 0, or
 * the exit code after reporting; mig_teardown in any case. */
int mig_setup(mig_ctx *c, const char *lib_path, const wfb_assigns *maps, wf_libpath **lp);
void mig_teardown(mig_ctx *c, wf_libpath *lp);

void mig_names_add(mig_names *n, const char *name);
void mig_names_fini(mig_names *n);
bool mig_names_has(const mig_names *n, const char *name);

/* Decode blob with the map whose legacy definition it belongs to and find the modern position
 * (wfb_migrate_plan.c). WF_E_CORRUPT / WF_E_STATE when no map's definition decodes it (a
 * foreign or damaged instance, or a mismatched map): the caller stops before changing
 * anything. Otherwise WF_OK with plan->verdict set. */
wf_status mig_plan_instance(mig_ctx *c, mig_plan *p, const void *blob, size_t len,
                            wf_error *err);
void mig_plan_fini(mig_plan *p);

#endif

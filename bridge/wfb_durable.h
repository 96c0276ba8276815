/* wfb_durable.h — helpers the durable verbs share (run --store, resume, host), implemented in
 * wfb_durable.c: opening an instance store with a durable host on a runtime, driving an
 * instance to its next persisted idle or completion, and printing its contract result with
 * its "id". */
#ifndef WFB_DURABLE_H
#define WFB_DURABLE_H

#include <stdbool.h>

#include "../common/wf_error.h"
#include "../common/wf_value.h"
#include "../modern/wfm_durable.h"

/* --durability full|normal -> *out (a wfm_durability); reports a usage error and returns 2. */
int wfb_parse_durability(const char *text, int *out);
typedef struct wfb_durable_cfg {
    const char *path;           /* the store file */
    bool must_exist;            /* refuse a missing file (WF_E_IO) instead of creating it */
    int durability;             /* a wfm_durability */
    const char *const *promote; /* --promote names (borrowed) */
    size_t promote_count;
} wfb_durable_cfg;

/* Open the store and a durable host on rt that persists and unloads instances as soon as
 * they are idle. */
wf_status wfb_durable_open(const wfb_durable_cfg *cfg, wfm_runtime *rt, wfm_store **store,
                           wfm_host **host, wf_error *err);
/* Run until the instance completes or is persisted and unloaded; a timer inside a no-persist
 * zone is waited for; an idle instance that cannot be persisted is WF_E_STATE. */
wf_status wfb_durable_drive(wfm_host *host, wfm_dinst *d, wf_error *err);
/* Where a result's bookmark names come from: count names, name(src, i) each; id is the
 * instance id printed with the result (NULL: none); status the status printed (NULL: the
 * instance's state). */
typedef struct wfb_marks {
    const char *id;
    size_t count;
    const char *(*name)(const void *src, size_t index);
    const void *src;
    const char *status;
} wfb_marks;
/* A bookmark named on the command line (opt: "--resume", "--bookmark") among the ones in
 * marks: the exact name, else the only one whose part after its last '.' is `name`
 * ("Approved" for "IExpenseService.Approved"), as run-legacy --event finds queues. 0 with
 * *out = the full name, or NULL when none matches; 2 after a usage error listing the
 * candidates when several match. */
int wfb_bookmark_resolve(const wfb_marks *marks, const char *opt, const char *name,
                         const char **out);
/* Report a Faulted/Terminated instance's fault to stderr (FILE:LINE:COL: error: TYPE: message
 * at the faulting activity), print its result (--json: the contract object, bookmarks only
 * when Idle; else, with an id, "instance ID persisted" when Idle) and return the exit code. */
int wfb_instance_result(const wfm_instance *inst, const wfb_marks *marks, bool json);
/* Print the result (--json: the contract object with "id") and return the exit code. */
int wfb_durable_finish(wfm_dinst *d, bool json);

#endif

/* wfb_interop_int.h — what the Interop kind's load half (wfb_interop_load.c: argument mapping
 * and the legacy host definition) hands its run-time half (wfb_interop.c), attached to each
 * Interop node with wfm_node_set_data and immutable after load. */
#ifndef WFB_INTEROP_INT_H
#define WFB_INTEROP_INT_H

#include <stdatomic.h>
#include <stddef.h>

#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "../modern/wfm_activity.h"
#include "../modern/wfm_ctx.h"
#include "../modern/wfm_node.h"
#include "../modern/wfm_persist.h"

#define WFB_IO_MAX_WAITS 16 /* queues one hosted activity may wait on at once */

/* One modern argument: a legacy property copied in (IN) at start or back (OUT) at close. */
typedef struct wfb_io_arg {
    const char *prop;  /* the legacy property */
    wfm_prop_kind dir; /* WFM_PROP_IN or WFM_PROP_OUT */
    size_t param;      /* index in the node's ActivityProperties parameters */
    size_t output;     /* the property's index among wfl_exec_output_* (SIZE_MAX: by name) */
    /* The Out argument of a composite's In property gives back what went in, never the body's
     * changes (docs/formats.md "Composite activity types"): the In argument's parameter, or
     * SIZE_MAX for the property's default. Unused (NULL) otherwise. */
    const wfl_tl_prop *echo_of;
    size_t echo_param;
} wfb_io_arg;

typedef struct wfb_io_type {
    wfl_definition *def;   /* what the legacy executor runs */
    const char *subtree;   /* the hosted activity in def; NULL: def's root (a composite) */
    const char *type_name; /* the legacy type, for messages */
    char instance_id[48];  /* the hosted executors' id: "interop-" + the node's id */
    wfb_io_arg *args;
    size_t arg_count;
    /* An executor of def kept between executions (wfl_exec_reset makes it fresh): building
     * one per execution was a third of a hosted call. Taken and given back atomically, since
     * instances of one definition may run on several threads. */
    _Atomic(wfl_exec *) spare;
} wfb_io_type;

/* The kind's `bind` callback (wfm_activity.h): map the legacy type to arguments, build the
 * host definition, attach a wfb_io_type. */
wf_status wfb__io_bind(wfm_load *load, wfm_node *node);
/* Its `prepare` callback: what needs the node's id. */
wf_status wfb__io_prepare(wfm_load *load, wfm_node *node);

#endif

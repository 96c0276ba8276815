/* wfm_persist.h — the durable state of a modern instance: a compact, versioned binary blob
 * (magic "WFMS", version, LEB128 varints, zig-zag ints, length-prefixed strings, wf_values)
 * holding everything needed to resume it — arguments, every live environment, the activity
 * instance tree with per-kind state, queued work, bookmarks, timers (absolute due times),
 * finish hooks, extension state and the fault. Kinds take part through the persistence
 * fields of wfm_kind_spec (wfm_activity.h, "Persistence contract"). The store keeps the blob
 * opaque; `wfbridge inspect` renders it with wfm_state_to_json.
 * Lifecycle: 1. run an instance until it is not in the middle of a run (Created, Idle,
 * Executing with only host resumptions queued, or completed); 2. wfm_instance_save; 3. later,
 * maybe in another process: load the same definition and wfm_instance_restore; 4. resume /
 * run the restored instance as if it had never left memory. The byte layout is documented
 * at the top of wfm_persist.c; the primitives are common/wf_codec.h. */
#ifndef WFM_PERSIST_H
#define WFM_PERSIST_H

#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "wfm_runtime.h"

#define WFM_STATE_MAGIC   "WFMS"
#define WFM_STATE_VERSION 1u

/* Append the instance's state to `out` (out is left as it was on failure). Waits while the
 * worker pool runs the instance. WF_E_STATE inside a no-persist zone (an activity of a
 * WFM_KIND_NO_PERSIST kind is executing; the message names it) or when a kind handed the
 * runtime a callback missing from its callbacks table (the message names the kind);
 * WF_E_NOMEM. Saving twice without running in between gives identical bytes. */
wf_status wfm_instance_save(wfm_instance *inst, wf_buf *out, wf_error *err);
/* The same from an on_complete callback, where the worker already holds the instance (there
 * wfm_instance_save would wait for itself). */
wf_status wfm_instance_save_held(wfm_instance *inst, wf_buf *out, wf_error *err);

/* Rebuild an instance from `data`. `def` must be the definition it was saved from (its
 * content hash is checked: WF_E_STATE on a mismatch); the instance comes back in the state it
 * was saved in (Idle, Closed, ...), timers with their absolute due times, and
 * wfm_instance_resume / _run / _start continue it. Corrupt or truncated data, an unknown
 * version, kinds the runtime does not know: WF_E_CORRUPT with a message saying what; *out
 * stays NULL and nothing leaks. */
wf_status wfm_instance_restore(wfm_runtime *rt, wfm_definition *def, const void *data, size_t len,
                               wfm_instance **out, wf_error *err);

/* Render a blob as one JSON object without the definition (for `wfbridge inspect`):
 * {"version", "definition": {"hash", "path", "node_count"}, "state", "next_timer",
 *  "environments" (free ones), "fault", "arguments", "extensions",
 *  "activities": [{"index", "node", "id", "kind", "status", "env", "variables", ...}],
 *  "bookmarks", "timers", "work_items", "finish_hooks"}.
 * Appends to `out`; WF_E_CORRUPT as for restore (out is left as it was). `rt` may be NULL. */
wf_status wfm_state_to_json(wfm_runtime *rt, const void *data, size_t len, wf_buf *out,
                            wf_error *err);

/* The header fields, read without decoding the rest (for the store's index columns). */
typedef struct wfm_state_info {
    uint32_t version;
    uint64_t definition_hash;   /* wfm_definition_hash of the definition it was saved from */
    wfm_instance_state state;   /* Created, Executing, Idle, Closed, ... */
    int64_t next_timer_us;      /* earliest due timer, INT64_MAX when none */
    size_t blocking_bookmarks;  /* bookmarks that keep the instance idle */
} wfm_state_info;
wf_status wfm_state_peek(const void *data, size_t len, wfm_state_info *out, wf_error *err);

#endif

/* wfm_persist.h — the durable state of a modern instance: a compact, versioned binary blob
 * (magic "WFMS", version, LEB128 varints, zig-zag ints, length-prefixed strings, wf_values)
 * holding everything needed to resume it — arguments, every live environment, the activity
 * instance tree with per-kind state, queued work, bookmarks, timers (absolute due times),
 * finish hooks, extension state and the fault. Kinds take part through the persistence
 * fields of wfm_kind_spec and the helpers below ("Persistence contract"). The store keeps the blob
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
#include "wfm_activity.h"
#include "wfm_runtime.h"

#define WFM_STATE_MAGIC   "WFMS"
#define WFM_STATE_VERSION 2u /* 2 adds the definition's SHA-256; version 1 is still read */

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

/* ---- Persistence contract ---------------------------------------------------------------
 * wfm_instance_save (above) writes the whole instance; kinds take part like this:
 * 1. Callbacks. A function the runtime will call with an activity of kind K — on_done and
 *    on_fault passed to wfm_ctx_schedule(_delegate) for a child of a K activity, the callback
 *    of a bookmark or timer a K activity owns — must be listed in K's `callbacks` (so a Pick
 *    that schedules a child of its PickBranch lists nothing: PickBranch lists the callback).
 *    Finish hooks (wfm_ctx_on_finish), a non-NULL hook `data` (then a static object), the
 *    callbacks of work a finish hook schedules under the root, and pointers written with
 *    wfm_persist_write_ptr may be in any registered kind's table.
 *    The blob names a callback (kind name, index), so keep a table's order stable: append
 *    only. A callback not found makes the save fail with WF_E_STATE naming the kind.
 * 2. State. state_size == 0: nothing to do. WFM_KIND_STATE_PLAIN: the bytes are copied as
 *    they are (no pointers, no wf_values). Otherwise save/restore are required (registration
 *    refuses the kind): save writes the state with the helpers below, restore reads the same
 *    sequence into the zeroed state. Pointers are written as references: an activity instance
 *    (wfm_persist_write_ai: its index in the saved tree), a node (its dense index), an
 *    environment, a listed callback. restore runs after the whole tree exists (every ai can
 *    be referenced, children included) and before any callback; `fini` runs on a state whose
 *    restore failed half-way, so keep it safe on partly filled state.
 * 3. Extension states (wfm_ctx_ext): give them a wfm_ext_spec, create them with
 *    wfm_ctx_ext_get, list the spec in `exts`. Extensions are restored before activity states.
 *    A wfm_ctx_ext key found in no kind's `exts` makes the save fail (WF_E_STATE).
 * 4. No-persist zones: a kind whose run cannot be persisted meaningfully (a native call in
 *    flight, an atomic scope) sets WFM_KIND_NO_PERSIST; saving while one executes is refused.
 * 5. Versioning: the blob stores, for each kind, its name and the state bytes length-prefixed;
 *    a kind that changes its state layout should write a version number first.
 * Readers are sticky: after a bad read every later read returns zero / NULL; restore hooks
 * return WF_OK and the runtime then reports the first error (WF_E_CORRUPT). */
void wfm_persist_write_uint(wfm_persist_writer *w, uint64_t v);
void wfm_persist_write_int(wfm_persist_writer *w, int64_t v);
void wfm_persist_write_bytes(wfm_persist_writer *w, const void *data, size_t len);
void wfm_persist_write_str(wfm_persist_writer *w, const char *s); /* NULL allowed */
void wfm_persist_write_value(wfm_persist_writer *w, const wf_value *v);
void wfm_persist_write_ai(wfm_persist_writer *w, const wfm_ai *ai);       /* NULL allowed */
void wfm_persist_write_node(wfm_persist_writer *w, const wfm_node *node); /* NULL allowed */
void wfm_persist_write_ptr(wfm_persist_writer *w, const void *callback);  /* NULL allowed */
/* An environment: the root (E0), an activity's own (variables, delegate argument), or one
 * the kind owns (a snapshot): such a "free" environment is written in full at its first
 * reference, its parent chain as references. NULL allowed. */
void wfm_persist_write_env(wfm_persist_writer *w, const wfm_env *env);
/* Make the save fail (WF_E_STATE) with a message. */
void wfm_persist_write_fail(wfm_persist_writer *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

uint64_t wfm_persist_read_uint(wfm_persist_reader *r);
int64_t wfm_persist_read_int(wfm_persist_reader *r);
/* Bytes borrowed from the blob (valid during the restore); NULL (len 0) after an error. */
const void *wfm_persist_read_bytes(wfm_persist_reader *r, size_t *len);
char *wfm_persist_read_str(wfm_persist_reader *r);      /* wf_malloc'd (caller frees); NULL */
wf_value wfm_persist_read_value(wfm_persist_reader *r); /* owned; null after an error */
wfm_ai *wfm_persist_read_ai(wfm_persist_reader *r);
const wfm_node *wfm_persist_read_node(wfm_persist_reader *r);
const void *wfm_persist_read_ptr(wfm_persist_reader *r);
/* A free environment read with take=true belongs to the caller from then on, with every
 * environment up its parent chain to the root environment (E0, which stays the runtime's):
 * they are wf_calloc'd wfm_env + wf_calloc'd slots (NULL when count is 0); free them with
 * wf_free. The chain must consist of free environments ending at E0 (E0 itself may be taken:
 * nothing to free), else the restore fails. A free environment nobody takes makes the restore
 * fail too (WF_E_CORRUPT): every saved one must have an owner. */
wfm_env *wfm_persist_read_env(wfm_persist_reader *r, bool take);
bool wfm_persist_read_ok(const wfm_persist_reader *r);
void wfm_persist_read_fail(wfm_persist_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
wfm_ctx *wfm_persist_reader_ctx(wfm_persist_reader *r); /* the instance being restored */

/* ---- the Persist activity (wfm_act_persist.c) and durable hosts -------------------------- */
/* Internal bookmarks a Persist activity waits on start with this prefix. */
#define WFM_PERSIST_BOOKMARK_PREFIX "\x1fpersist#"
bool wfm_persist_bookmark(const char *name); /* name is such an internal bookmark */
/* Mark an instance as run by a durable host (its Persist activities then wait for the host's
 * save). The host marks every instance it creates or loads, before running it. */
wf_status wfm_durable_mark(wfm_instance *inst, wf_error *err);

#endif

/* wfl_inst_int.h — the legacy run-time instance tree: one wfl_act per activity instance with its
 * DP value slots, read and written through the registry with ActivityBind resolved at access
 * time (two-way, chains followed, cycles refused), execution-context clones for While /
 * Replicator / CAG / State iterations, and save/restore to a versioned compact binary
 * (docs/semantics.md §1 "ActivityBind", §4 "Execution contexts"). */
#ifndef WFL_INST_INT_H
#define WFL_INST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "wfl_def_int.h"
#include "wfl_registry.h"
#include "wfl_status.h"

/* Lifecycle (the executor drives it):
 * 1. wfl_inst_create(def, &inst, &err): the whole template tree, one wfl_act per definition
 *    node (same shape, same order), every value slot initialised from the node's literal or
 *    the DP's default; status Initialized, result None, context id 0 (the root context).
 * 2. Run: read/write DPs with wfl_act_get/_set (binds are followed every time, so a write to
 *    Workflow1.OrderId is seen at once by every activity bound to it); keep the executor's own
 *    per-activity state in the exec pointer (wfl_act_exec/_set_exec) and status/result in the
 *    fields here.
 * 3. Loops: wfl_act_clone(template, &clone) makes a fresh copy of a template subtree (values
 *    reset from the definition, new context id, status Initialized), registered in the parent
 *    of the template as an execution context (wfl_act_context_count/_at) and linked to it for
 *    name resolution: binds inside the clone find the clone's activities first. The template
 *    itself never runs. wfl_act_clone_release(clone) disposes it when its context completes
 *    (keep it instead if it must be compensated later).
 * 4. Persist: wfl_inst_save(inst, hooks, &buf) writes everything (values, statuses, results,
 *    context ids, clones, the executor's per-activity and per-instance blobs from the hooks);
 *    wfl_inst_restore(def, data, len, hooks, &inst) rebuilds it against the same definition
 *    (WF_E_CORRUPT for anything malformed, truncated or made for another definition).
 * 5. wfl_inst_destroy: calls hooks->dispose (wfl_inst_set_dispose) for every activity whose
 *    exec pointer is set, then frees everything.
 * Thread rule: an instance is used by one thread at a time; the definition it borrows is
 * immutable and shared. Values returned by get are retained: the caller releases them; a value
 * that came from a literal in the XOML may borrow an immortal string from the definition, so
 * no value read from an instance may outlive the definition. */

typedef struct wfl_inst wfl_inst; /* one workflow instance's activity tree */
typedef struct wfl_act wfl_act;   /* one activity instance */

/* ActivityExecutionStatus and ActivityExecutionResult (docs/semantics.md §4); the executor
 * moves them, this module only stores and persists them. */
/* ---- the instance ----------------------------------------------------------------------- */
wf_status wfl_inst_create(const wfl_definition *def, wfl_inst **out, wf_error *err);
void wfl_inst_destroy(wfl_inst *inst); /* accepts NULL */
/* Back to what wfl_inst_create built, keeping the template tree's memory: clones freed, every
 * activity Initialized with its definition's values, dispose called for each one's exec. */
void wfl_inst_reset(wfl_inst *inst);
const wfl_definition *wfl_inst_definition(const wfl_inst *inst);
wfl_act *wfl_inst_root(wfl_inst *inst);
/* The template activity instance of a definition node (node->index); NULL if out of range. */
wfl_act *wfl_inst_act_at(wfl_inst *inst, size_t node_index);
/* Find an activity instance by context id (0 = the root context) and node index, searching
 * the template tree and every live clone; NULL if none (for restoring executor references). */
wfl_act *wfl_inst_find_act(wfl_inst *inst, uint32_t context_id, size_t node_index);

/* Called for each activity with a non-NULL exec pointer before it is freed (destroy, clone
 * release, failed restore). */
typedef void (*wfl_act_dispose_fn)(void *ud, wfl_act *act, void *exec);
void wfl_inst_set_dispose(wfl_inst *inst, wfl_act_dispose_fn fn, void *ud);

/* ---- one activity instance -------------------------------------------------------------- */
const wfl_node *wfl_act_node(const wfl_act *act);
const wfl_type *wfl_act_type(const wfl_act *act);
const char *wfl_act_name(const wfl_act *act);
wfl_inst *wfl_act_inst(const wfl_act *act);
/* The parent for execution and name resolution: a clone's parent is its template's parent. */
wfl_act *wfl_act_parent(const wfl_act *act);
size_t wfl_act_child_count(const wfl_act *act);
wfl_act *wfl_act_child(const wfl_act *act, size_t index); /* NULL if out of range */
/* The child whose definition node is `node` (a direct child), NULL if none. */
wfl_act *wfl_act_child_for(const wfl_act *act, const wfl_node *node);

wfl_status wfl_act_status(const wfl_act *act);
void wfl_act_set_status(wfl_act *act, wfl_status status);
wfl_result wfl_act_result(const wfl_act *act);
void wfl_act_set_result(wfl_act *act, wfl_result result);
/* The execution context this activity belongs to: 0 for the template tree, a fresh id for
 * each clone (shared by every activity inside it). */
uint32_t wfl_act_context_id(const wfl_act *act);
bool wfl_act_is_clone_root(const wfl_act *act); /* made by wfl_act_clone */
wfl_act *wfl_act_template(const wfl_act *act);  /* a clone root's template, else NULL */

void *wfl_act_exec(const wfl_act *act);
void wfl_act_set_exec(wfl_act *act, void *exec); /* owned by the executor; see dispose */

/* ---- dependency properties ------------------------------------------------------------ */
/* Read DP `dp` (from wfl_act_type(act)->dps): a bound DP is resolved now (the target's
 * current value, through its path, converted to dp->type); otherwise the slot's value.
 * Errors: WF_E_NAME (bind target activity or member missing), WF_E_LIMIT (bind cycle),
 * WF_E_RANGE (index), WF_E_FAULT (null in a path), WF_E_TYPE (conversion), WF_E_SCHEMA (dp
 * not of this type or not a value DP). *out is retained. */
wf_status wfl_act_get(wfl_act *act, const wfl_dp *dp, wf_value *out, wf_error *err);
/* The slot's value, borrowed until the DP is next written, when dp is an unbound value DP of
 * act's type (what wfl_act_get would return); NULL otherwise: use wfl_act_get. */
const wf_value *wfl_act_peek(const wfl_act *act, const wfl_dp *dp);
/* Write: converted to dp->type; a bound DP writes through to the target (rebuilding records
 * and lists along the path). Metadata and read-only DPs: WF_E_STATE (the executor sets
 * read-only DPs such as FaultHandler.Fault with wfl_act_set_internal). */
wf_status wfl_act_set(wfl_act *act, const wfl_dp *dp, const wf_value *value, wf_error *err);
wf_status wfl_act_set_internal(wfl_act *act, const wfl_dp *dp, const wf_value *value,
                               wf_error *err);
/* By name (WF_E_NAME when the type has no such DP). */
wf_status wfl_act_get_by_name(wfl_act *act, const char *name, wf_value *out, wf_error *err);
wf_status wfl_act_set_by_name(wfl_act *act, const char *name, const wf_value *value,
                              wf_error *err);
/* Read/write a member path rooted at this activity, as a bind with Name="/Self" would:
 * "OrderId", "Order.Lines[0].Sku" (rules targets and ChildInitialized handlers use it). */
wf_status wfl_act_get_path(wfl_act *act, const char *path, wf_value *out, wf_error *err);
wf_status wfl_act_set_path(wfl_act *act, const char *path, const wf_value *value,
                           wf_error *err);
/* Evaluate a bind as if written on `act` (parameter bindings, condition binds): value of the
 * target member, unconverted. */
wf_status wfl_act_bind_get(wfl_act *act, const wfl_bind *bind, wf_value *out, wf_error *err);
wf_status wfl_act_bind_set(wfl_act *act, const wfl_bind *bind, const wf_value *value,
                           wf_error *err);
/* Resolve a bind's Name from `act` (clone first): the activity it names, or NULL. */
wfl_act *wfl_act_resolve(wfl_act *act, const char *name);

/* ---- execution contexts ---------------------------------------------------------------- */
wf_status wfl_act_clone(wfl_act *template_act, wfl_act **out, wf_error *err);
void wfl_act_clone_release(wfl_act *clone); /* accepts NULL; only for clone roots */
/* Live clones whose template is a child of `act`, in creation order. */
size_t wfl_act_context_count(const wfl_act *act);
wfl_act *wfl_act_context_at(const wfl_act *act, size_t index);

/* ---- persistence ------------------------------------------------------------------------ */
/* The executor's own state: appended as opaque blobs. save_* append to `out` (return false
 * only on out of memory); load_* get exactly the bytes saved (may set the exec pointer). Any
 * hook may be NULL (nothing saved; load then sees len 0 and is still called if non-NULL). */
typedef struct wfl_inst_hooks {
    bool (*save_act)(void *ud, const wfl_act *act, wf_buf *out);
    wf_status (*load_act)(void *ud, wfl_act *act, const void *data, size_t len, wf_error *err);
    bool (*save_inst)(void *ud, const wfl_inst *inst, wf_buf *out);
    wf_status (*load_inst)(void *ud, wfl_inst *inst, const void *data, size_t len,
                           wf_error *err);
    void *ud;
    /* restore only: installed as the instance's dispose function (with ud) before load_act
     * runs, so exec state made by load_act is freed if the restore fails later */
    wfl_act_dispose_fn dispose;
} wfl_inst_hooks;

#define WFL_INST_HOOKS_INIT                                                                   \
    {.save_act = NULL, .load_act = NULL, .save_inst = NULL, .load_inst = NULL, .ud = NULL,   \
     .dispose = NULL}

/* Append the instance's state to out (hooks may be NULL). WF_E_NOMEM; WF_E_TYPE for a value
 * that cannot be saved (Object payloads are saved by their dynamic type); WF_E_LIMIT for lists
 * and records nested more than 64 deep. On failure out is left as it was. */
wf_status wfl_inst_save(const wfl_inst *inst, const wfl_inst_hooks *hooks, wf_buf *out,
                        wf_error *err);
/* Rebuild an instance from bytes made by wfl_inst_save for the same definition (checked by a
 * hash of its shape). Types come from def's wf_types. WF_E_CORRUPT on any malformed input. */
wf_status wfl_inst_restore(const wfl_definition *def, const void *data, size_t len,
                           const wfl_inst_hooks *hooks, wfl_inst **out, wf_error *err);

#endif

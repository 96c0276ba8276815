/* wfm_migrate.h — what moving a running legacy instance onto a modern definition needs from
 * the runtime (`wfbridge migrate-instances`, docs/migrate.md): a replay mode in which native
 * calls are skipped (the legacy instance already made them), the position an idle instance
 * is at (executing activities, timers), and the values of its arguments and live variables
 * written by name. */
#ifndef WFM_MIGRATE_H
#define WFM_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_value.h"
#include "wfm_ctx.h"
#include "wfm_runtime.h"

/* Replay mode (before or between runs): InvokeMethod completes without calling its function
 * or writing its outputs, as does every kind that asks wfm_ctx_replaying (Interop). */
void wfm_instance_set_replay(wfm_instance *inst, bool on);
/* While replaying, fn gives the values of the inside of a kind that keeps foreign state
 * (Interop: the body of a hosted legacy composite) for the activity with that DisplayName, or
 * false (wfm_ctx.h, wfm_ctx_replay_values). They must live until the run returns. */
typedef bool (*wfm_replay_values_fn)(void *ud, const char *activity, wfm_replay_values *out);
void wfm_instance_set_replay_values(wfm_instance *inst, wfm_replay_values_fn fn, void *ud);
/* While replaying, fn gives the item a ForEach / ParallelForEach with that DisplayName resumes
 * at (wfm_ctx.h, wfm_ctx_replay_items), or false; the same ud as the values' callback. The
 * loop copies what it needs before the callback returns to its caller's next step. */
typedef bool (*wfm_replay_items_fn)(void *ud, const char *activity, wfm_replay_items *out);
void wfm_instance_set_replay_items(wfm_instance *inst, wfm_replay_items_fn fn);

/* Call fn with the DisplayName and kind name ("Sequence", "Interop") of every executing
 * activity instance, in preorder, each followed by the definition nodes between it and its
 * parent instance's node (a StateMachine's State and Transition: kind ""). Only between
 * runs. */
typedef void (*wfm_name_fn)(void *ud, const char *name, const char *kind);
void wfm_instance_each_executing(wfm_instance *inst, wfm_name_fn fn, void *ud);

/* The due times of the pending timers, earliest first, into due[max]; returns how many there
 * are (may exceed max). Only between runs. */
size_t wfm_instance_timers(wfm_instance *inst, int64_t *due, size_t max);
/* Give the pending timers, taken in the order they fire, the due times due[n] (ascending):
 * false, changing nothing, when the instance has not exactly n timers. Only between runs. */
bool wfm_instance_place_timers(wfm_instance *inst, const int64_t *due, size_t n);

/* Write `value` (converted to each slot's type) into the argument called `name` (any
 * direction) and into every live variable called `name`; *count: how many slots were written
 * (0: none has that name, which is not an error). WF_E_TYPE when the value does not convert.
 * Only between runs, on an instance that has run (Idle). */
wf_status wfm_instance_assign(wfm_instance *inst, const char *name, const wf_value *value,
                              size_t *count, wf_error *err);

/* Does the definition have a node whose DisplayName is `name`? */
bool wfm_definition_has_display_name(const wfm_definition *def, const char *name);

#endif

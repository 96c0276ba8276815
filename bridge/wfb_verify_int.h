/* wfb_verify_int.h — shared inside the verify engine (bridge/wfb_verify*.c), not public: the
 * decision-coverage model of a legacy definition (every decision outcome of its IfElse, While,
 * FaultHandlers, EventDriven, SetState, Policy, ConditionedActivityGroup, Replicator and
 * event-waiting Parallel activities) and the tracker that sees, from the legacy trace, which ones a run reached
 * (docs/verify.md "Coverage"). */
#ifndef WFB_VERIFY_INT_H
#define WFB_VERIFY_INT_H

#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "wfb_verify.h"

typedef struct wfb__cover wfb__cover;         /* the outcomes of one definition (immutable) */
typedef struct wfb__cover_run wfb__cover_run; /* what one run reached */

/* A constant a rule condition compares the root property `name` with (`this.Quantity >= 10`):
 * the generator tries it and its neighbours (docs/verify.md "Coverage"). */
typedef struct wfb__vhint {
    const char *name;
    const wf_value *value;
} wfb__vhint;

/* Walk the definition (and the rule sets of its Policy activities, from its .rules, read
 * with `types`). WF_E_NOMEM, or the rules loader's error. */
wf_status wfb__cover_build(const wfl_definition *def, wf_types *types, wfb__cover **out,
                           wf_error *err);
void wfb__cover_destroy(wfb__cover *cv);
size_t wfb__cover_count(const wfb__cover *cv);
const wfb_vpoint *wfb__cover_point(const wfb__cover *cv, size_t index);
size_t wfb__cover_hint_count(const wfb__cover *cv);
const wfb__vhint *wfb__cover_hint(const wfb__cover *cv, size_t index);
/* The coverage model of a loaded legacy definition (the generator reads its hints). */
const wfb__cover *wfb__vlegacy_cover(const wfb_vlegacy *l);

/* A tracker for runs of cv; reset before each run. NULL: out of memory. */
wfb__cover_run *wfb__cover_run_create(const wfb__cover *cv);
void wfb__cover_run_destroy(wfb__cover_run *r);
void wfb__cover_run_reset(wfb__cover_run *r);
/* Feed it every status record of the legacy trace, and every rule evaluation. */
void wfb__cover_status(wfb__cover_run *r, const wfl_trace_rec *rec);
void wfb__cover_rule(wfb__cover_run *r, const char *activity, const char *rule, bool result);
/* The outcomes reached, ascending, into obs->hits. False: out of memory. */
bool wfb__cover_take(const wfb__cover_run *r, wfb_vobs *obs);

/* The types tables observations of a runner's values belong to (decoding isolated runs). */
wf_types *wfb__vlegacy_types(wfb_vlegacy *l);
wf_types *wfb__vmodern_types(wfb_vmodern *m);

#endif

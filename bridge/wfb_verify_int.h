/* wfb_verify_int.h — shared inside the verify engine (bridge/wfb_verify*.c), not public: the
 * decision-coverage model of a legacy definition (every decision outcome of its IfElse, While,
 * FaultHandlers, EventDriven, SetState, Policy, ConditionedActivityGroup, Replicator and
 * event-waiting Parallel activities) and the tracker that sees, from the legacy trace, which ones a run reached
 * (docs/verify.md "Coverage"). */
#ifndef WFB_VERIFY_INT_H
#define WFB_VERIFY_INT_H

#include "../legacy/wfl_def.h"
#include "../common/wf_mem.h"
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

/* ---- isolated runs: the pool (wfb_verify_iso.c) and its workers (wfb_verify_worker.c) ---- */
/* Records between them: a tag byte, a LEB128 payload length, the payload. */
#define WFB__REC_RUN    'C' /* to a worker: definition addresses and a case (wfb__run_encode) */
#define WFB__REC_ENTER  'E' /* before a native call: function, In values */
#define WFB__REC_RESULT 'R' /* the run's whole observation */
#define WFB__REC_FAIL   'F' /* the run itself failed (out of memory): message */
#define WFB__REC_DONE   'D' /* on the socket: the RESULT or FAIL is written */

/* Shared memory between the pool and one worker: the worker appends an ENTER record here
 * before each native call (no system call on the way to a native call), and the run's
 * RESULT (or FAIL) at its end, then sends DONE on the socket. The pool reads the ENTER
 * records only when the worker died, to name the call that never returned. Full, the
 * journal is sent over the socket first. The pool empties it before each run. Its pages are
 * mapped when first written (a run of a long loop to the step limit enters and returns a
 * hundred megabytes of values) and those past WFB__JOURNAL_KEEP given back after the run. */
#define WFB__JOURNAL_SIZE ((size_t)1 << 30)
#define WFB__JOURNAL_KEEP ((size_t)64 << 20)
typedef struct wfb__journal {
    size_t len;
    unsigned char data[WFB__JOURNAL_SIZE];
} wfb__journal;

/* Send all of data on a socket (never raising SIGPIPE); false: the other end is gone. */
bool wfb__send_all(int fd, const void *data, size_t len);

/* A run for a worker: which definition (its address, the same in the forked worker; the
 * other is 0) and the case. */
void wfb__run_encode(wf_buf *b, const wfb_vlegacy *l, const wfb_vmodern *m, const wfb_vcase *c);

/* The worker, in the process just forked: closes close_fds (the other workers' sockets),
 * moves fd above the descriptors native code uses, snapshots the native state, then runs
 * each RUN record read from fd, answers RESULT (or FAIL) and puts the state back, until fd
 * closes. Never returns. */
_Noreturn void wfb__worker_main(int fd, wfb__journal *jr, const int *close_fds,
                                size_t close_count);

/* The native state a worker puts back after each run (wfb_verify_fresh.c): create it
 * before the first native call; restore puts everything it covers back as it was then. */
typedef struct wfb__fresh wfb__fresh;
wf_status wfb__fresh_create(wfb__fresh **out, wf_error *err);
void wfb__fresh_restore(wfb__fresh *f);
void wfb__fresh_destroy(wfb__fresh *f);

#endif

/* wfb_verify.h — the engine of `wfbridge verify` (docs/verify.md): run one input case on the
 * legacy executor and on the modern runtime, collect what each run showed (status, outputs,
 * native calls, fault, what it waited on), compare two such observations, and make, read,
 * shrink and write input cases. The verb itself (wfb_verify.c) is the only part that prints. */
#ifndef WFB_VERIFY_H
#define WFB_VERIFY_H

#include <signal.h> /* sig_atomic_t */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"

/* ---- input cases ------------------------------------------------------------------------- */
typedef struct wfb_vinput {
    char *name;
    char *json; /* the value as JSON text, read as the argument's declared type */
} wfb_vinput;

typedef struct wfb_vevent {
    char *name;    /* "Approved" or "IExpenseService.Approved" */
    char *payload; /* JSON text; NULL: null */
} wfb_vevent;

typedef struct wfb_vcase {
    char *name;
    wfb_vinput *inputs;
    size_t input_count;
    wfb_vevent *events; /* the event script of this case */
    size_t event_count;
} wfb_vcase;

void wfb_vcase_fini(wfb_vcase *c); /* frees the members; accepts a zeroed case */
/* Deep copy. WF_E_NOMEM. */
wf_status wfb_vcase_copy(const wfb_vcase *src, wfb_vcase *dst, wf_error *err);
/* Set input `name` to `json` (replacing it; json NULL removes it). */
wf_status wfb_vcase_set(wfb_vcase *c, const char *name, const char *json, wf_error *err);

/* Read a --cases file (schema in docs/verify.md); `events` is the --events script given to
 * cases that have none (may be NULL). WF_E_IO, WF_E_JSON / WF_E_SCHEMA at file:line:col. */
wf_status wfb_vcases_load(const char *path, const wfb_vevent *events, size_t event_count,
                          wfb_vcase **cases, size_t *count, wf_error *err);
/* Read an --events file: [{"event": NAME, "payload": VALUE}, ...]. */
wf_status wfb_vevents_load(const char *path, wfb_vevent **events, size_t *count, wf_error *err);
void wfb_vevents_free(wfb_vevent *events, size_t count);
void wfb_vcases_free(wfb_vcase *cases, size_t count);
/* Write cases as a --cases file (atomically: FILE.tmp, then renamed). */
wf_status wfb_vcases_write(const char *path, const wfb_vcase *cases, size_t count, wf_error *err);

/* ---- observations ------------------------------------------------------------------------ */
typedef struct wfb_vcall {
    char *function;
    char *activity; /* for people; not compared */
    char *branch;   /* "" or one "PARALLEL#BRANCH/" segment per enclosing parallel branch */
    wf_value *in;
    size_t in_count;
    wf_value *out; /* Out values, then the return value */
    size_t out_count;
} wfb_vcall;

typedef struct wfb_vobs {
    /* "Closed", "Faulted", "Canceled", "Terminated", "Idle", "Suspended", "Limit" (ran past
     * the step limit), or "Error" when the host failed (error holds why). A legacy instance
     * terminated by an unhandled fault is "Faulted" (docs/verify.md "Status mapping"). */
    const char *status;
    char **output_names;
    wf_value *output_values;
    size_t output_count;
    wfb_vcall *calls;
    size_t call_count;
    char *fault_type, *fault_message; /* NULL when no fault */
    /* one line per idle point: the sorted events waited on, short names, comma-separated,
     * "(timer)" when a timer is pending */
    char **waits;
    size_t wait_count;
    char *error;  /* status "Error": what went wrong (input not accepted, limit, ...) */
    char **taken; /* IfElse branches seen executing (legacy runs) */
    size_t taken_count;
    size_t *hits; /* decision outcomes reached (wfb_vlegacy_point indices, ascending; legacy
                     runs, whatever their status) */
    size_t hit_count;
} wfb_vobs;

void wfb_vobs_fini(wfb_vobs *o);
/* Building an observation (the runners; tests). Values are retained. False: out of memory
 * (the observation stays valid for wfb_vobs_fini). */
bool wfb_vobs_add_call(wfb_vobs *o, const char *function, const char *activity, const char *branch,
                       const wf_value *in, size_t in_count, const wf_value *out, size_t out_count);
bool wfb_vobs_add_output(wfb_vobs *o, const char *name, const wf_value *value);
/* An idle point: names sorted in place, "(timer)" added when a timer is pending. */
bool wfb_vobs_add_wait(wfb_vobs *o, const char **names, size_t count, bool timer);
/* The observation as one JSON object (the --keep trace files). */
bool wfb_vobs_to_json(const wfb_vobs *o, wf_buf *out);

/* ---- runners ----------------------------------------------------------------------------- */
typedef struct wfb_vlegacy wfb_vlegacy; /* a loaded legacy definition */
typedef struct wfb_vmodern wfb_vmodern; /* a modern runtime with one loaded definition */

/* Load FILE.xoml (+ rules, type libraries on libpath). Diagnostics go to diags. max_steps:
 * work items a run may take without going idle (0: no limit); past it the run's status is
 * "Limit" (so is a run past 10000 idle points). */
wf_status wfb_vlegacy_load(const char *path, const char *rules, const wf_libpath *libpath,
                           uint64_t max_steps, wf_diags *diags, wfb_vlegacy **out, wf_error *err);
void wfb_vlegacy_destroy(wfb_vlegacy *l);
/* Whether the workflow's event ev->name takes ev's payload by the event payload rule
 * (docs/formats.md "Event payloads"): WF_OK, or WF_E_TYPE saying why not. An event no
 * HandleExternalEvent declares is not checked here (the run reports it). */
wf_status wfb_vlegacy_check_event(const wfb_vlegacy *l, const wfb_vevent *ev, wf_error *err);
/* Load modern XAML text (name: its file name for locations). */
wf_status wfb_vmodern_load(const char *name, const char *xaml, size_t len,
                           const wf_libpath *libpath, uint64_t max_steps, wf_diags *diags,
                           wfb_vmodern **out, wf_error *err);
void wfb_vmodern_destroy(wfb_vmodern *m);

/* Run one case; the observation is filled even when the workflow faults. A non-OK return is
 * WF_E_NOMEM only: input problems (an unknown argument, a value that does not convert) make
 * status "Error". */
wf_status wfb_vlegacy_run(wfb_vlegacy *l, const wfb_vcase *c, wfb_vobs *obs, wf_error *err);
wf_status wfb_vmodern_run(wfb_vmodern *m, const wfb_vcase *c, wfb_vobs *obs, wf_error *err);

/* The root arguments a generator sets: the modern definition's In and InOut arguments. */
size_t wfb_vmodern_arg_count(const wfb_vmodern *m);
const char *wfb_vmodern_arg_name(const wfb_vmodern *m, size_t index);
const wf_type *wfb_vmodern_arg_type(const wfb_vmodern *m, size_t index);
/* The IfElse branches of the legacy definition, by activity name (also among the decision
 * outcomes below, as kind WFB_VK_IFELSE). */
size_t wfb_vlegacy_branch_count(const wfb_vlegacy *l);
const char *wfb_vlegacy_branch_name(const wfb_vlegacy *l, size_t index);

/* Decision coverage (docs/verify.md "Coverage"): every outcome of every decision point of the
 * legacy definition, in document order. */
typedef enum wfb_vkind {
    WFB_VK_IFELSE,     /* activity: the IfElseBranch; outcome "taken" */
    WFB_VK_WHILE,      /* the While; "skipped" / "1 iteration" / "2+ iterations" */
    WFB_VK_FAULT,      /* a FaultHandler, "caught TYPE"; the handlers' owner, "no fault" */
    WFB_VK_EVENT,      /* an EventDriven (of a Listen or a State); "won" */
    WFB_VK_STATE,      /* the source state of a SetState; "-> TARGET" */
    WFB_VK_POLICY,     /* the Policy; "RULE then" / "RULE else" */
    WFB_VK_CAG,        /* a ConditionedActivityGroup child; "ran" */
    WFB_VK_REPLICATOR, /* the Replicator; "ran none" / "ran 1 child" / "ran 2+ children" */
    WFB_VK_ORDER,      /* a Parallel whose branches wait on events; "A then B" (the order of
                          the first HandleExternalEvent of each branch) */
    WFB_VK_COUNT
} wfb_vkind;

/* "IfElse", "While", "FaultHandlers", "EventDriven", "StateMachine", "Policy", "CAG",
 * "Replicator", "EventOrder". */
const char *wfb_vkind_name(wfb_vkind kind);

typedef struct wfb_vpoint {
    wfb_vkind kind;
    const char *activity; /* x:Name */
    const char *outcome;
    wf_loc where;      /* the activity's element in the legacy file */
    const char *why;   /* why no run can reach it, when the definition alone shows it; else NULL */
    const char *event; /* EventDriven: the event its first activity waits on; NULL: none */
} wfb_vpoint;

size_t wfb_vlegacy_point_count(const wfb_vlegacy *l);
const wfb_vpoint *wfb_vlegacy_point(const wfb_vlegacy *l, size_t index); /* NULL past the end */

/* ---- isolated runs (docs/verify.md "Isolation") --------------------------------------------
 * 1. wfb_vpool_create after the definitions are loaded (their libraries too); from then on
 *    this process makes no native call itself (its workers are forked from it);
 * 2. wfb_vpool_submit each run of a case (they start at once, up to `jobs` at a time, each in
 *    a worker forked from this process that puts the native state back after every run, so
 *    every run sees the native state of this moment);
 * 3. wfb_vpool_wait: every submitted observation is filled. A run that crashed, called exit()
 *    or ran past the timeout has status "Crashed", "Exited" or "TimedOut", the native calls it
 *    entered (In values only) and a fault: type "SIGSEGV" / "exit N" / "timeout", message
 *    "crashed: SIGSEGV in FUNCTION" (the call that never returned);
 * 4. wfb_vpool_destroy (kills the workers and runs still going). Submitted observations are zeroed at once,
 *    so they can be finied whatever wait returned. One thread uses a pool. */
typedef struct wfb_vpool wfb_vpool;
typedef struct wfb_vpool_opts {
    unsigned jobs;     /* runs at once; 0: the number of online cores */
    double timeout_s;  /* of each run; 0: none */
    bool in_process;   /* run here, one at a time, unisolated (measuring the cost; debuggers) */
    const volatile sig_atomic_t *stop; /* non-zero (set by a signal handler): wait gives up, WF_E_STATE */
} wfb_vpool_opts;
#define WFB_VPOOL_OPTS_INIT {0, 10.0, false, NULL}

wf_status wfb_vpool_create(const wfb_vpool_opts *opts, wfb_vpool **out, wf_error *err);
void wfb_vpool_destroy(wfb_vpool *p);
unsigned wfb_vpool_jobs(const wfb_vpool *p);
/* Run case c on the legacy definition l, or (l NULL) on the modern one m, into *obs. c and the
 * definition are only read before this returns. WF_E_NOMEM, WF_E_IO (fork), WF_E_STATE. */
wf_status wfb_vpool_submit(wfb_vpool *p, wfb_vlegacy *l, wfb_vmodern *m, const wfb_vcase *c,
                           wfb_vobs *obs, wf_error *err);
wf_status wfb_vpool_wait(wfb_vpool *p, wf_error *err);

/* ---- comparison -------------------------------------------------------------------------- */
typedef struct wfb_vdiff {
    char *what;   /* "status", "output Total", "call 3", "fault", "wait 1", ... */
    char *legacy; /* the legacy side, as text */
    char *modern;
} wfb_vdiff;

void wfb_vdiff_fini(wfb_vdiff *d);
/* Compare; *equal false with the first divergence in *diff (caller finis it). Doubles equal
 * when |a - b| <= tolerance * max(1, |a|, |b|). */
wf_status wfb_vcompare(const wfb_vobs *legacy, const wfb_vobs *modern, double tolerance,
                       bool *equal, wfb_vdiff *diff, wf_error *err);

/* ---- generating and shrinking cases ------------------------------------------------------ */
typedef struct wfb_vgen wfb_vgen;
/* A seeded generator over the modern definition's inputs, steered by the legacy branch
 * coverage it is told about (wfb_vgen_feedback). */
wf_status wfb_vgen_create(const wfb_vmodern *m, const wfb_vlegacy *l, uint64_t seed, wfb_vgen **out,
                          wf_error *err);
void wfb_vgen_destroy(wfb_vgen *g);
/* Case number `index` (named "gen-INDEX"), with the given event script. */
wf_status wfb_vgen_next(wfb_vgen *g, size_t index, const wfb_vevent *events, size_t event_count,
                        wfb_vcase *out, wf_error *err);
/* Null is a value of String, List and Object: a generated one is null at this rate (0 ..
 * 1; WFB_VGEN_NULL_RATE unless set; 0: never, `--no-null`). The null draws come from a
 * stream of their own: the other values of a seed are the same at every rate. */
#define WFB_VGEN_NULL_RATE 0.05
void wfb_vgen_set_null_rate(wfb_vgen *g, double rate);
/* Report the legacy run of the last case: cases that reach a new decision outcome (any kind)
 * are kept and varied. */
wf_status wfb_vgen_feedback(wfb_vgen *g, const wfb_vcase *c, const wfb_vobs *legacy_obs,
                            wf_error *err);
/* Branches seen so far (of wfb_vlegacy_branch_count). */
size_t wfb_vgen_covered(const wfb_vgen *g);
bool wfb_vgen_branch_seen(const wfb_vgen *g, size_t index);
/* Decision outcomes reached so far (of wfb_vlegacy_point_count). */
size_t wfb_vgen_points_covered(const wfb_vgen *g);
bool wfb_vgen_point_seen(const wfb_vgen *g, size_t index);

/* Still diverging? (the shrinker's oracle) */
typedef wf_status (*wfb_vpred_fn)(void *ud, const wfb_vcase *c, bool *diverges, wf_error *err);
/* Shrink `c` in place to a simpler case for which pred still says it diverges: inputs dropped,
 * then numbers toward 0, strings and lists shorter, at most max_tries runs. */
wf_status wfb_vshrink(wfb_vcase *c, const wfb_vmodern *m, wfb_vpred_fn pred, void *ud,
                      size_t max_tries, wf_error *err);
/* The same with options: a String, List or Object input tries its simpler values first and
 * null (or leaving it out, whose default is null) last; with no_null, never. */
typedef struct wfb_vshrink_opts {
    size_t max_tries;
    bool no_null; /* --no-null */
} wfb_vshrink_opts;
wf_status wfb_vshrink_with(wfb_vcase *c, const wfb_vmodern *m, wfb_vpred_fn pred, void *ud,
                           const wfb_vshrink_opts *opts, wf_error *err);

/* ---- the converter ----------------------------------------------------------------------- */
typedef struct wfb_verify_conv {
    const char *path;          /* FILE.xoml */
    const char *rules;         /* NULL: FILE.rules beside it when present */
    const wf_libpath *libpath; /* type and native libraries */
    bool force_interop;        /* every custom activity through Interop (`convert --interop`) */
    const char *output_name;   /* the XAML's file name: the generated files are named after it */
    const char *side_dir;      /* an existing directory for the generated files */
} wfb_verify_conv;

/* Paths of the files a conversion wrote (to be removed with their directory afterwards). */
typedef struct wfb_verify_written {
    char **paths;
    size_t count;
} wfb_verify_written;

/* Convert vc->path to XAML text (wf_free it). A partial conversion also writes its generated
 * files (composite .xoml, .activities.xml, .rules) into vc->side_dir, each appended to
 * *written: that directory must come first on the library path of the run. Errors: the
 * converter's (the legacy loader's, WF_E_UNSUPPORTED for what needs Interop), WF_E_IO. */
wf_status wfb_verify_convert(const wfb_verify_conv *vc, char **xaml, size_t *len,
                             wfb_verify_written *written, wf_error *err);
void wfb_verify_written_free(wfb_verify_written *w, bool remove_files);
/* A library path of `first` followed by the directories of `rest` (may be NULL). */
wf_status wfb_verify_libpath(const char *first, const wf_libpath *rest, wf_libpath **out,
                             wf_error *err);

/* ---- shared by the wfb_verify*.c files ---------------------------------------------------- */
bool wfb__push_str(char ***arr, size_t *n, const char *s); /* false: out of memory */
void wfb__free_strs(char **arr, size_t n);

#endif

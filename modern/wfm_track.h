/* wfm_track.h — tracking: WF4 record kinds filtered by a profile and handed to participants
 * (JSON lines to a file or stdout, a table in the instance store, an in-memory ring for
 * tests). The scheduler tests one mask bit per event before it builds a record, so with no
 * tracker (NULL) or a profile that excludes the event tracking costs a branch. Participants
 * never block a worker on I/O: a kept record is copied in binary into the emitting thread's
 * own buffer (the scheduler's common records as fixed 32-byte entries: node indexes and a
 * cheap clock's ticks, names resolved later), published once per run, and formatted and
 * written by the tracker's own thread (docs/semantics.md §5 "Tracking"). */
#ifndef WFM_TRACK_H
#define WFM_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"

typedef enum wfm_rec_kind {
    WFM_REC_INSTANCE = 0,         /* state: Started Idle Persisted Unloaded Resumed Completed
                                     Faulted Canceled Terminated UnhandledException */
    WFM_REC_ACTIVITY_STATE,       /* state: Executing Closed Faulted Canceled */
    WFM_REC_ACTIVITY_SCHEDULED,   /* activity = parent, child = scheduled */
    WFM_REC_BOOKMARK_RESUMPTION,  /* bookmark, payload */
    WFM_REC_FAULT_PROPAGATION,    /* activity = fault source, child = handler, fault */
    WFM_REC_CANCEL_REQUESTED,     /* activity = requester, child = canceled */
    WFM_REC_CUSTOM,               /* name, data */
    WFM_REC_KIND_COUNT
} wfm_rec_kind;

/* A record as the scheduler fills it (all pointers borrowed for the call). */
typedef struct wfm_track_record {
    wfm_rec_kind kind;
    const char *instance_id;
    uint64_t seq;             /* per instance, from 1, in emission order */
    int64_t time_us;
    const char *state;        /* INSTANCE / ACTIVITY_STATE */
    const char *activity;     /* display name */
    const char *activity_id;  /* "1.2" */
    const char *child;
    const char *child_id;
    const char *name;         /* bookmark name (BOOKMARK_RESUMPTION) or custom record name */
    const wf_value *payload;  /* bookmark payload, NULL if none */
    const wf_value *fault;    /* exception (FAULT_PROPAGATION, UnhandledException, Faulted) */
    const char *const *data_names; /* variables/arguments (ACTIVITY_STATE) or custom data */
    const wf_value *data_values;
    size_t data_count;
} wfm_track_record;

/* ---- profiles -------------------------------------------------------------------------- */
typedef struct wfm_profile wfm_profile;

/* "health" (instance lifecycle and faults), "basic" (plus activity Closed/Faulted), "all",
 * "none". NULL for an unknown name. Built-in profiles are static: never destroy them. */
const wfm_profile *wfm_profile_builtin(const char *name);
/* A profile from a small XML file in WF4's TrackingProfile shape:
 *   <TrackingProfile Name="orders">
 *     <WorkflowInstanceQueries><WorkflowInstanceQuery><States><State Name="*"/></States>...
 *     <ActivityStateQuery ActivityName="Approve"><States><State Name="Closed"/></States>
 *        <Variables><Variable Name="*"/></Variables><Arguments>...</Arguments></...>
 *     <ActivityScheduledQuery ActivityName="*" ChildActivityName="*"/>
 *     <BookmarkResumptionQuery Name="*"/> <CancelRequestedQuery .../>
 *     <FaultPropagationQuery FaultSourceActivityName="*" FaultHandlerActivityName="*"/>
 *     <CustomTrackingQuery Name="*" ActivityName="*"/>
 *   </TrackingProfile>
 * Query elements may appear directly under TrackingProfile or inside a <Queries> or
 * <TrackingQueries> element. Errors carry file:line:col. */
wf_status wfm_profile_load(const char *path, wfm_profile **out, wf_error *err);
wf_status wfm_profile_load_mem(const char *name, const char *data, size_t len, wfm_profile **out,
                               wf_error *err);
void wfm_profile_destroy(wfm_profile *profile); /* accepts NULL and built-ins */
/* Whether the profile keeps this record (and, for ACTIVITY_STATE, whether variables are to
 * be extracted: *want_data). */
bool wfm_profile_match(const wfm_profile *profile, const wfm_track_record *rec, bool *want_data);
/* Bit (1 << kind) set for every record kind some query of the profile can keep. */
unsigned wfm_profile_kinds(const wfm_profile *profile);
/* ActivityState states as bits, so the scheduler can skip a record with one test. */
enum {
    WFM_ACT_EXECUTING = 1u << 0,
    WFM_ACT_CLOSED = 1u << 1,
    WFM_ACT_FAULTED = 1u << 2,
    WFM_ACT_CANCELED = 1u << 3,
};
/* The WFM_ACT_* states some ActivityState query of the profile can keep. */
unsigned wfm_profile_activity_states(const wfm_profile *profile);

/* ---- the tracker -------------------------------------------------------------------------- */
typedef struct wfm_tracker wfm_tracker;
typedef struct wfm_store wfm_store; /* wfm_store.h */

/* The profile is borrowed and must outlive the tracker. */
wf_status wfm_tracker_create(const wfm_profile *profile, wfm_tracker **out, wf_error *err);
/* Flushes and stops the flush thread; accepts NULL. */
void wfm_tracker_destroy(wfm_tracker *tracker);
/* Flush, stop the flush thread and close the tracking files (not stdout); WF_E_IO naming the
 * first file a write, flush or close failed on. Then only wfm_tracker_destroy. NULL: WF_OK. */
wf_status wfm_tracker_close(wfm_tracker *tracker, wf_error *err);
/* Participants; add them before the first record. `path` "-" is stdout. */
wf_status wfm_tracker_add_file(wfm_tracker *tracker, const char *path, wf_error *err);
/* Records go to the `tracking` table of an open instance store (either backend; borrowed: it
 * must outlive the tracker), one transaction per batch the tracker's thread writes. */
wf_status wfm_tracker_add_store(wfm_tracker *tracker, wfm_store *store, wf_error *err);
/* Keep the last `capacity` records in memory (fixed entries in binary, formatted as their
 * JSON line when read; the others as their line); reading the ring first waits for the
 * records emitted so far (wfm_tracker_flush). */
wf_status wfm_tracker_add_ring(wfm_tracker *tracker, size_t capacity, wf_error *err);
size_t wfm_tracker_ring_count(wfm_tracker *tracker);
/* Copy ring entry `index` (0 = oldest kept) into buf; false if out of range. */
bool wfm_tracker_ring_get(wfm_tracker *tracker, size_t index, char *buf, size_t size);

/* The cheap pre-checks: may records of this kind (ActivityState records in this WFM_ACT_*
 * state) pass the profile at all? NULL-safe. */
bool wfm_tracker_wants(const wfm_tracker *tracker, wfm_rec_kind kind);
bool wfm_tracker_wants_activity(const wfm_tracker *tracker, unsigned act_state);
/* Filter and queue one record (formatted later by the tracker's thread). Never blocks on I/O
 * (only when 16 MB of records wait to be written); thread-safe. */
void wfm_tracker_emit(wfm_tracker *tracker, const wfm_track_record *rec);
/* Wait until everything emitted so far has been written by the participants. */
void wfm_tracker_flush(wfm_tracker *tracker);
/* Records dropped because memory ran out or a participant failed. */
uint64_t wfm_tracker_dropped(const wfm_tracker *tracker);
/* Records formatted and handed to the participants so far (exact after wfm_tracker_flush;
 * a store participant may still drop some: wfm_tracker_dropped). NULL: 0. */
uint64_t wfm_tracker_written(const wfm_tracker *tracker);

/* Render a record as one JSON object (no newline). */
bool wfm_track_record_json(const wfm_track_record *rec, wf_buf *out);
const char *wfm_rec_kind_name(wfm_rec_kind kind);

#endif

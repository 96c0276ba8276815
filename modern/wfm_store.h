/* wfm_store.h — the modern instance store: definitions, instances (status + state blob),
 * bookmarks, promoted properties, pending timers and ownership leases, in an embedded SQLite
 * file (WAL) by default or in PostgreSQL; the name given to wfm_store_open picks the backend,
 * and nothing else differs. The state blob is opaque here: the runtime encodes it. Two hosts
 * on one store never run the same instance (docs/architecture.md "Persistence", docs/semantics.md
 * §5; schema, open modes and leases: docs/durability.md). */
#ifndef WFM_STORE_H
#define WFM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"

/* Lifecycle:
 * 1. wfm_store_open(opts): checks the store (application key, schema version, tables; on
 *    SQLite a quick integrity check of every table but `tracking`) before anything is written, then creates
 *    the schema in a new or empty file, or migrates an older one; refuses (untouched) a file
 *    that is not a wfbridge store, is damaged or has a newer schema. opts.read_only opens an
 *    existing store without ever writing; opts.must_exist refuses to create one.
 * 2. wfm_store_create: a new instance row owned (leased) by this store's owner id.
 *    wfm_store_lock: take the lease of an existing instance (WF_E_LOCKED while another owner's
 *    lease is unexpired; an expired lease, or one whose owner process on this machine has
 *    died, is taken over).
 * 3. wfm_store_save while holding the lease (renews it); release=true gives it up (unload).
 * 4. wfm_store_load_state reads the blob; wfm_store_query lists instances.
 * 5. wfm_store_close.
 * Threads: one wfm_store may be used from many threads; concurrent saves are grouped into one
 * transaction (group commit) when opts.group_commit is set, with the same durability as one
 * commit each: a save returns only after its transaction committed. */

typedef struct wfm_store wfm_store;

typedef enum wfm_durability {
    WFM_DURABILITY_FULL = 0, /* fsync at every commit (SQLite synchronous=FULL): the default */
    WFM_DURABILITY_NORMAL,   /* WAL synchronous=NORMAL: a power loss may drop the last commits,
                                a process crash loses nothing */
} wfm_durability;

/* The store clock: milliseconds since the epoch (leases, created/updated times). */
typedef int64_t (*wfm_store_clock_fn)(void *ud);

typedef struct wfm_store_opts {
    const char *path;            /* required: FILE or sqlite:FILE (SQLite), postgresql://...,
                                    postgres://... or a libpq connection string such as
                                    "host=/run/pg dbname=wf" (PostgreSQL) */
    const char *owner;           /* this host's owner id; NULL: "HOSTNAME:PID:RANDOM", which
                                    lets a host on the same machine take over the leases of a
                                    process that died (any other form waits for expiry) */
    int64_t lease_ms;            /* 0: 60,000 (WF4: HostLockRenewalPeriod 30 s + 30 s) */
    wfm_durability durability;
    bool group_commit;
    bool read_only;  /* open an existing store for reading only: never creates, migrates or
                        changes the file (a missing, empty or foreign file is refused, as is a
                        store that would need migrating); every write fails with WF_E_STORE */
    bool must_exist; /* refuse a missing file (WF_E_IO), an empty file or a database
                        without tables (WF_E_STORE) instead of creating a store there; an
                        older schema is still migrated */
    wfm_store_clock_fn clock_ms; /* NULL: the real clock */
    void *clock_ud;
} wfm_store_opts;

#define WFM_STORE_OPTS_INIT                                                                        \
    {                                                                                              \
        .path = NULL, .owner = NULL, .lease_ms = 0, .durability = WFM_DURABILITY_FULL,             \
        .group_commit = true, .read_only = false, .must_exist = false, .clock_ms = NULL,           \
        .clock_ud = NULL                                                                           \
    }
/* 1: the first schema; 2: pending_resumes (resumptions queued by another process); 3:
 * instances.attempts and instances.reason (runs that never ended, quarantine); 4: on
 * PostgreSQL, an index of the free runnable rows in claim order (nothing changes on SQLite). */
#define WFM_STORE_SCHEMA_VERSION 4

wf_status wfm_store_open(const wfm_store_opts *opts, wfm_store **out, wf_error *err);
void wfm_store_close(wfm_store *store); /* accepts NULL */
const char *wfm_store_owner(const wfm_store *store);

/* Record a definition by content hash (idempotent). */
wf_status wfm_store_put_definition(wfm_store *store, uint64_t hash, const char *path,
                                   wf_error *err);

/* An instance id: 32 lowercase hex digits. */
typedef struct wfm_store_id {
    char text[33];
} wfm_store_id;

/* A fresh random id (no store row yet: wfm_store_insert creates it). */
void wfm_store_new_id(wfm_store_id *out);
/* A new instance row without state (status "Created", leased to this owner). Hosts use
 * wfm_store_insert instead, which writes the row and its first state at once. */
wf_status wfm_store_create(wfm_store *store, uint64_t definition_hash, wfm_store_id *out,
                           wf_error *err);
/* The same under a given id (32 lowercase hex digits; WF_E_USAGE otherwise): an instance that
 * keeps the id it had elsewhere (`wfbridge migrate-instances`). An id that exists: WF_E_STORE
 * on SQLite; on PostgreSQL nothing happens (creates are idempotent there, to be sent again
 * after a reconnect), so look it up first. */
wf_status wfm_store_create_id(wfm_store *store, uint64_t definition_hash, const char *id,
                              wf_error *err);
/* `count` of them in one transaction where the backend can (SQLite; PostgreSQL: one each):
 * all created or, on SQLite, none (an id that exists fails the whole call). */
wf_status wfm_store_create_ids(wfm_store *store, uint64_t definition_hash,
                               const char *const *ids, size_t count, wf_error *err);
/* Attempts: taking a lease to run an instance (wfm_store_lock, wfm_store_claim) adds one to
 * its `attempts`; a save that releases the lease (the run ended: idle, completed, stopped)
 * sets it to 0 and wfm_store_release takes back its own one. So `attempts` counts the runs
 * whose process died holding the lease, plus the one in progress (docs/durability.md,
 * "Poisoned instances"). */
wf_status wfm_store_lock(wfm_store *store, const char *id, wf_error *err);
wf_status wfm_store_release(wfm_store *store, const char *id, wf_error *err);
/* Renew the lease of every instance this owner holds (call periodically while running). */
wf_status wfm_store_renew(wfm_store *store, wf_error *err);

/* What one save writes. Replaces the instance's bookmarks and promoted properties. */
typedef struct wfm_store_save_rec {
    const char *id;
    const char *status;          /* "Executing", "Idle", "Closed", "Faulted", ... */
    const void *state;           /* the encoded instance; may be NULL for completed instances */
    size_t state_len;
    const char *const *bookmarks;
    size_t bookmark_count;
    const char *const *prop_names; /* promoted properties, values as text */
    const char *const *prop_values;
    size_t prop_count;
    int64_t next_timer_us;       /* earliest due timer, 0 for none */
    bool release;                /* give up the lease after saving (unload) */
    int64_t resumes_through;     /* > 0: delete the instance's pending resumptions with
                                    seq <= this in the save's transaction (they were applied
                                    to the state saved); 0: none */
} wfm_store_save_rec;

/* Save. The caller must hold the lease (WF_E_LOCKED otherwise: the lease expired and another
 * host took the instance over). Either everything in rec is written or nothing. */
wf_status wfm_store_save(wfm_store *store, const wfm_store_save_rec *rec, wf_error *err);

/* A thread about to save repeatedly (wfm_host_run) announces itself until _end: with group
 * commit, a batch waits a moment (0.3 ms past the last save queued, 2 ms at most) for the
 * announced savers still running to queue theirs, so that their saves share one commit. */
void wfm_store_saver_begin(wfm_store *store);
void wfm_store_saver_end(wfm_store *store);

/* Create instance rec->id (wfm_store_new_id) of definition `definition_hash` and write its
 * first save in one transaction: the row with its status and state, bookmarks and promoted
 * properties, leased to this owner, or released when rec->release (then announced as work
 * like a released save). A crash or a full disk leaves either all of it or no row at all.
 * WF_E_STORE when the id exists; rec->resumes_through is ignored (nothing is queued yet). */
wf_status wfm_store_insert(wfm_store *store, uint64_t definition_hash,
                           const wfm_store_save_rec *rec, wf_error *err);

/* `count` wfm_store_insert's in one transaction where the backend can (SQLite; PostgreSQL:
 * one each): all of them or, on SQLite, none (an id that exists fails the whole call). */
wf_status wfm_store_insert_many(wfm_store *store, uint64_t definition_hash,
                                const wfm_store_save_rec *recs, size_t count, wf_error *err);

/* Quarantine instance `id`, whose lease the caller holds: status "Suspended" with `reason`
 * (kept until the next save), lease released, attempts back to 0, state untouched. No host
 * claims it again; `wfbridge resume ID` (wfm_host_load, then a run) takes it up by hand and
 * its next save records the status its state has. WF_E_LOCKED without the lease. */
wf_status wfm_store_suspend(wfm_store *store, const char *id, const char *reason,
                            wf_error *err);

/* Read the state blob (wf_free *state) and status (static string in the store's table or a
 * copy into status[32]). WF_E_NOTFOUND for an unknown id. */
wf_status wfm_store_load_state(wfm_store *store, const char *id, void **state, size_t *state_len,
                               char status[32], uint64_t *definition_hash, wf_error *err);

typedef struct wfm_store_row {
    const char *id;
    const char *status;
    uint64_t definition_hash;
    const char *definition_path; /* NULL if the definition was not recorded */
    int64_t created_ms, updated_ms;
    const char *owner;           /* NULL when not leased */
    int64_t lock_expires_ms;
    int64_t next_timer_us;
    const char *bookmarks;       /* names separated by '\n' ("" for none) */
    int64_t pending_resumes;     /* resumptions queued for it (wfm_store_enqueue_resume) */
    const char *next_resume;     /* the bookmark of the first queued one, NULL if none */
    int64_t attempts;            /* times taken to run (claimed or locked) since a run last
                                    ended with a release: a run whose process died is one
                                    that never ended */
    const char *reason;          /* why it is "Suspended" (NULL otherwise) */
    bool has_state;              /* false: a row a creator left before saving its state (a
                                    store written by an older wfbridge); it cannot run */
} wfm_store_row;

typedef struct wfm_store_query {
    const char *status;     /* NULL: any */
    const char *prop_name;  /* with prop_value: instances whose promoted property matches */
    const char *prop_value;
    int64_t due_before_us;  /* > 0: only instances with a timer due before this time */
    const char *bookmark;   /* NULL: any; else instances waiting on this bookmark */
} wfm_store_query;

#define WFM_STORE_QUERY_INIT                                                                       \
    {                                                                                              \
        .status = NULL, .prop_name = NULL, .prop_value = NULL, .due_before_us = 0,                 \
        .bookmark = NULL                                                                           \
    }

/* Call `fn` for each matching instance (ordered by creation); fn returns false to stop. */
typedef bool (*wfm_store_row_fn)(void *ud, const wfm_store_row *row);
wf_status wfm_store_query_rows(wfm_store *store, const wfm_store_query *q, wfm_store_row_fn fn,
                               void *ud, wf_error *err);
/* Could this store's owner take the lease of `row` now (not leased, its own, expired, or held
 * by a process of this machine that died)? A hint for hosts choosing work among query rows
 * without reading their state: wfm_store_lock decides. */
bool wfm_store_row_lockable(const wfm_store *store, const wfm_store_row *row);
/* Is `owner` a default owner id (opts.owner NULL) of a process of this machine that no longer
 * exists? (Its leases may be taken over at once; `wfbridge migrate-instances` uses the same
 * test for the moves a process that died left in doubt.) */
bool wfm_store_owner_is_dead(const char *owner);
/* Promoted properties of one instance, as "name=value\n" lines (wf_free the result). */
wf_status wfm_store_props(wfm_store *store, const char *id, char **out, wf_error *err);

/* Save without waiting: rec (and everything it points to) is handed to the store's commit
 * thread and must stay valid and unchanged until `fn` is called. fn runs exactly once, after
 * the transaction holding the save committed or failed, on the commit thread (or on a thread
 * whose wfm_store_save led the group commit that carried it), with no store lock held; it may
 * call the store, but waiting in it delays the saves queued behind. Concurrent saves share
 * transactions as with wfm_store_save (with group_commit off, one each). Returns WF_E_NOMEM
 * (fn is then never called) when the save cannot be queued. wfm_store_close commits what is
 * still queued first. */
typedef void (*wfm_store_saved_fn)(void *ud, wf_status status, const wf_error *err);
wf_status wfm_store_save_async(wfm_store *store, const wfm_store_save_rec *rec,
                               wfm_store_saved_fn fn, void *ud, wf_error *err);

/* wfm_store_insert without waiting, as wfm_store_save_async is wfm_store_save: the insert
 * joins the commit thread's group commit, and fn is called once it committed or failed. On a
 * backend that writes an insert in a statement of its own (PostgreSQL), it is written at once
 * and fn is called on the calling thread before this returns. */
wf_status wfm_store_insert_async(wfm_store *store, uint64_t definition_hash,
                                 const wfm_store_save_rec *rec, wfm_store_saved_fn fn, void *ud,
                                 wf_error *err);

/* ---- pending resumptions ------------------------------------------------------------------
 * A process that cannot lock an instance (another live host holds its lease) queues the
 * resumption instead: the host that runs the instance next applies the queued resumptions in
 * seq order and deletes them in the transaction of the save that follows (resumes_through),
 * so a crash before that save applies them again to the older state, never twice. */
typedef struct wfm_store_resume {
    int64_t seq;              /* per instance, increasing */
    const char *bookmark;
    const char *payload_json; /* the payload as JSON text ("null" for none) */
    int64_t created_ms;
} wfm_store_resume;

/* Queue a resumption of `bookmark` of instance `id` (no lease needed). WF_E_NOTFOUND for an
 * unknown id. *seq (optional) receives its sequence number. */
wf_status wfm_store_enqueue_resume(wfm_store *store, const char *id, const char *bookmark,
                                   const char *payload_json, int64_t *seq, wf_error *err);
/* Call `fn` for each queued resumption of `id` in seq order; fn returns false to stop. fn
 * runs under the store's connection lock: it must not call the store. */
typedef bool (*wfm_store_resume_fn)(void *ud, const wfm_store_resume *r);
wf_status wfm_store_pending_resumes(wfm_store *store, const char *id, wfm_store_resume_fn fn,
                                    void *ud, wf_error *err);

/* Wait up to timeout_ms for work announced by another process: a resumption queued, or an
 * instance saved runnable and unleased (Created / Executing, released; e.g. by `wfbridge
 * start`). *woken (optional) is true when that ended the wait early; timeout_ms 0 does not
 * wait, it only tells whether work was announced since the last wait. On PostgreSQL this is
 * LISTEN/NOTIFY on a connection of its own (a waiter wakes within milliseconds); SQLite has
 * no notifications and just sleeps, so hosts poll. One waiter at a time per store. */
wf_status wfm_store_wait(wfm_store *store, int64_t timeout_ms, bool *woken, wf_error *err);
/* End the current wfm_store_wait at once, or the next one if none is waiting (*woken true).
 * Async-signal-safe: a SIGTERM handler may call it, so that a stop is never missed between
 * checking a flag and starting to wait. */
void wfm_store_wake(wfm_store *store);

/* ---- claiming work -------------------------------------------------------------------------
 * A host takes a batch of work in one statement that can never hand an instance to two hosts,
 * and gets what it needs to restore each one without another round trip (docs/durability.md
 * "Claiming work"). */
typedef struct wfm_store_claimed {
    const char *id;
    const char *status;      /* "Created", "Executing", "Idle", ... */
    uint64_t definition_hash;
    const void *state;       /* the saved state blob (NULL, 0 if none) */
    size_t state_len;
    int64_t pending_resumes; /* queued resumptions (wfm_store_enqueue_resume) */
    int64_t attempts;        /* wfm_store_row.attempts, this claim included (>= 1) */
    int64_t promoted;        /* promoted properties stored for it (0: nothing to read back) */
} wfm_store_claimed;
/* Called for each claimed instance, oldest first; the strings and the state are valid during
 * the call only. fn runs under the store's connection lock: it must not call the store.
 * Returning false stops the calls (the leases stay taken). */
typedef bool (*wfm_store_claim_fn)(void *ud, const wfm_store_claimed *c);
/* Lease up to `max` instances that can make progress now and that no live host holds, oldest
 * (by creation) first: saved runnable (Created, Executing), or Idle with a timer due at or
 * before now_us (next_timer_us > 0, the host's clock) or with a queued resumption first in
 * line whose bookmark it waits on; never a completed one (Closed, Faulted, Canceled,
 * Terminated). Free and expired leases are taken; this owner's own are not (they are the
 * instances it is running, so a host never gets them twice), nor the lease of a dead local
 * process (wfm_store_lock takes it over). A claimed lease lasts lease_ms and is renewed by
 * wfm_store_renew like any other. One statement per call; *count (optional): how many were
 * leased (0 on failure: what a failed claim leased is this owner's, found by listing the
 * store, where wfm_store_row_lockable says its own lease is lockable). max 0 leases nothing
 * (WF_OK); no fn is WF_E_USAGE; a read-only store fails with WF_E_STORE. */
wf_status wfm_store_claim(wfm_store *store, size_t max, int64_t now_us, wfm_store_claim_fn fn,
                          void *ud, size_t *count, wf_error *err);

/* ---- tracking records ----------------------------------------------------------------------
 * The `tracking` table, written by the tracker's store participant (wfm_tracker_add_store):
 * one row per record, keyed by instance and sequence number (a record written again with the
 * same key replaces the row). */
typedef struct wfm_store_track_rec {
    const char *instance; /* "" for records of no instance */
    int64_t seq, time_us;
    const char *kind;   /* "WorkflowInstance", "ActivityState", ... */
    const char *record; /* the record as JSON (record_len bytes, need not end in NUL) */
    size_t record_len;
} wfm_store_track_rec;
/* Write `count` records in one transaction (all or none). WF_E_STORE on a read-only store. */
wf_status wfm_store_put_tracking(wfm_store *store, const wfm_store_track_rec *recs, size_t count,
                                 wf_error *err);

/* Counters for benchmarks: commits issued and saves written. */
void wfm_store_counters(const wfm_store *store, uint64_t *commits, uint64_t *saves);

#endif

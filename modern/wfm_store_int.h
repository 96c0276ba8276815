/* wfm_store_int.h — what the store front end (wfm_store.c: opening by URI, owner ids, the
 * clock, group commit, lease takeover) shares with its backends (wfm_store_sqlite.c,
 * wfm_store_pg.c): the generic store object and the table of operations each backend fills.
 * The front end serialises every operation on one store with `conn_lock`, so a backend
 * never locks. Nothing outside these files knows which backend is in use. */
#ifndef WFM_STORE_INT_H
#define WFM_STORE_INT_H

#include <pthread.h>

#include "../common/wf_mem.h" /* wf_buf */
#include "wfm_store.h"

/* One save waiting in (or written by) a group-commit batch. */
typedef struct wfm__pending_save {
    const wfm_store_save_rec *rec;
    wf_status status;
    wf_error err;
    bool done;
    bool wrote_names; /* SQLite's names cache: the save rewrote bookmarks / properties, */
    int64_t version;  /* and the row version it left */
    const char *insert_hash; /* wfm_store_insert on a backend without `insert`: the new row's
                                definition hash (hex), the save creates the row; else NULL */
    char insert_hex[17];     /* wfm_store_insert_async: insert_hash points here */
    wfm_store_saved_fn fn; /* wfm_store_save_async: called once committed (heap entry) */
    void *ud;
    struct wfm__pending_save *next;
} wfm__pending_save;

typedef struct wfm__store_ops wfm__store_ops;

struct wfm_store {
    const wfm__store_ops *ops;
    void *impl;  /* the backend's connection state */
    char *where; /* the store as named in errors (a path, or a connection string without
                    its password) */
    char *owner;
    int64_t lease_ms;
    bool group_commit, read_only;
    wfm_store_clock_fn clock; /* ms */
    void *clock_ud;
    pthread_mutex_t conn_lock;  /* every backend call but wait */
    pthread_mutex_t wait_lock;  /* one waiter at a time */
    int wake_fds[2];            /* wfm_store_wake writes a byte, a wait polls the other end */
    pthread_mutex_t queue_lock; /* the group-commit queue */
    pthread_cond_t queue_cond;
    wfm__pending_save *queue_head, *queue_tail;
    bool leader_active;
    /* The bookmarks and promoted properties this store last committed for an instance it
     * holds (id -> wfm__names_entry), kept by the backends (under conn_lock): a save that
     * would write them unchanged skips their statements, provided the row's version shows no
     * other save since. Dropped when the lease is taken or released or a commit fails. */
    wf_strmap *names;
    wf_buf names_scratch; /* wfm__names_text of the save being written */
    pthread_cond_t gather_cond; /* a leader gathering its batch waits for more saves */
    size_t savers;              /* wfm_store_saver_begin calls less wfm_store_saver_end */
    size_t sync_queued;         /* synchronous saves queued or being written */
    uint64_t arrivals;          /* saves queued since the store opened */
    unsigned gather_skip;       /* batches left to commit without gathering */
    pthread_cond_t commit_cond; /* the commit thread waits for asynchronous saves */
    pthread_t committer;        /* started by the first wfm_store_save_async */
    bool committer_started, committer_stop;
    uint64_t commits, saves;
};

/* ---- the names cache (wfm_store.c) ---- */
typedef struct wfm__names_entry {
    int64_t version;       /* instances.version after that save */
    int64_t next_timer_us; /* and the indexed columns it left: next_timer_us, */
    char status[16];       /* status ("" when too long to keep) */
    char text[];           /* wfm__names_text */
} wfm__names_entry;
/* The canonical text of a save's names into s->names_scratch (reset first); NULL when out of
 * memory. */
const char *wfm__names_text(wfm_store *s, const wfm_store_save_rec *r);
/* Would `r` write the names last committed for its instance, with the row at `version`
 * before it (the entry's version)? Leaves r's names text in s->names_scratch. */
bool wfm__names_unchanged(wfm_store *s, const wfm_store_save_rec *r, int64_t version);
const wfm__names_entry *wfm__names_get(wfm_store *s, const char *id);
void wfm__names_forget(wfm_store *s, const char *id);
/* Remember r's names, status and timer as committed, the row now at `version` (a copy failing
 * only forgets). */
void wfm__names_remember(wfm_store *s, const wfm_store_save_rec *r, int64_t version);
/* Does save r leave the row's indexed columns (status, next_timer_us) as `last` knows them? */
bool wfm__names_same_index(const wfm__names_entry *last, const wfm_store_save_rec *r);

/* Backend operations. `now` is the store clock (ms). Text ids and hashes are as in the
 * schema (32 and 16 lowercase hex digits). */
struct wfm__store_ops {
    /* Connect to `target` (the part of the URI the backend understands), check, create or
     * migrate the schema as opts says; sets s->impl. On failure close() is called. */
    wf_status (*open)(wfm_store *s, const char *target, const wfm_store_opts *opts,
                      wf_error *err);
    void (*close)(wfm_store *s);
    wf_status (*put_definition)(wfm_store *s, const char *hash, const char *path, int64_t now,
                                wf_error *err);
    wf_status (*create)(wfm_store *s, const char *id, const char *hash, int64_t now,
                        wf_error *err);
    /* Optional (NULL: create, one at a time): `count` new rows in one transaction, all or
     * none. */
    wf_status (*create_many)(wfm_store *s, const char *const *ids, size_t count,
                             const char *hash, int64_t now, wf_error *err);
    /* wfm_store_insert: the row and its first save in one transaction. Optional (NULL: the
     * insert is a pending save with insert_hash set, written by write_batch, so that it
     * joins a group commit). */
    wf_status (*insert)(wfm_store *s, const char *hash, const wfm_store_save_rec *r,
                        int64_t now, wf_error *err);
    /* Optional (NULL: insert, one at a time): `count` of them in one transaction, all or
     * none. */
    wf_status (*insert_many)(wfm_store *s, const char *hash, const wfm_store_save_rec *recs,
                             size_t count, int64_t now, wf_error *err);
    /* wfm_store_suspend (only while this owner holds the lease). */
    wf_status (*suspend)(wfm_store *s, const char *id, const char *reason, int64_t now,
                         wf_error *err);
    /* Take the lease of `id`: if `from` is NULL when it is free, ours or expired; else only
     * while `from` holds it (compare-and-set). *changed: whether it was taken. */
    wf_status (*take_lease)(wfm_store *s, const char *id, const char *from, int64_t now,
                            bool *changed, wf_error *err);
    /* The owner of `id` (*owner NULL when not leased; wf_free it), *exists false if unknown. */
    wf_status (*owner_of)(wfm_store *s, const char *id, char **owner, bool *exists,
                          wf_error *err);
    wf_status (*release)(wfm_store *s, const char *id, wf_error *err);
    wf_status (*renew)(wfm_store *s, int64_t now, wf_error *err);
    /* Write every save of the batch in one transaction, setting each one's status and err
     * (WF_E_LOCKED / WF_E_NOTFOUND for a save without a live lease: the others still
     * commit). Returns the status of the commit itself (on failure every save failed).
     * *commits receives the number of transactions committed. */
    wf_status (*write_batch)(wfm_store *s, wfm__pending_save *batch, int64_t now,
                             uint64_t *commits, wf_error *err);
    wf_status (*load_state)(wfm_store *s, const char *id, void **state, size_t *state_len,
                            char status[32], uint64_t *definition_hash, wf_error *err);
    wf_status (*query_rows)(wfm_store *s, const wfm_store_query *q, wfm_store_row_fn fn,
                            void *ud, wf_error *err);
    wf_status (*props)(wfm_store *s, const char *id, wf_buf *out, wf_error *err);
    wf_status (*enqueue_resume)(wfm_store *s, const char *id, const char *bookmark,
                                const char *payload_json, int64_t now, int64_t *seq,
                                wf_error *err);
    wf_status (*pending_resumes)(wfm_store *s, const char *id, wfm_store_resume_fn fn,
                                 void *ud, wf_error *err);
    /* Insert or replace the records in one transaction (count > 0). */
    wf_status (*put_tracking)(wfm_store *s, const wfm_store_track_rec *recs, size_t count,
                              wf_error *err);
    /* Called without conn_lock (it must not use the store's connection). */
    /* Wait up to timeout_ms for announced work or for `wake_fd` (wfm_store_wake's pipe) to
     * become readable, whichever comes first; *woken: the former ended it. */
    wf_status (*wait)(wfm_store *s, int64_t timeout_ms, int wake_fd, bool *woken,
                      wf_error *err);
    /* wfm_store_claim in one statement (max > 0, fn set): lease the instances to s->owner
     * until now + lease_ms and call fn for each, oldest first. */
    wf_status (*claim)(wfm_store *s, size_t max, int64_t now, int64_t now_us,
                       wfm_store_claim_fn fn, void *ud, size_t *count, wf_error *err);
};

extern const wfm__store_ops wfm__store_sqlite_ops;
extern const wfm__store_ops wfm__store_pg_ops;

/* An error located at the store (s->where). */
wf_status wfm__store_fail(wfm_store *s, wf_status code, wf_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* WF_E_NOTFOUND or WF_E_LOCKED for a lease or save that changed nothing. */
wf_status wfm__store_lock_failure(wfm_store *s, const char *id, bool exists, wf_error *err);

#endif

/* wfm_store.c — the instance store's front end (see wfm_store.h): picks the backend from the
 * store name (a file or `sqlite:FILE`: wfm_store_sqlite.c; `postgresql://...` or a libpq
 * connection string: wfm_store_pg.c), and does what both share: the owner id and the
 * takeover of a dead local owner's lease, the injected clock, the leader/follower group
 * commit (the first saver hands every queued save to the backend as one batch and wakes the
 * others after its COMMIT; it first waits briefly for the savers announced by
 * wfm_store_saver_begin), the commit thread of asynchronous saves, and the counters. Every backend call runs under `conn_lock`. */
#include "wfm_store_int.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h> /* the wake pipe's flags */
#include <signal.h> /* kill(pid, 0): is a lease owner alive */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../common/wf_random.h"

static int64_t real_clock_ms(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_ms(const wfm_store *s)
{
    return s->clock(s->clock_ud);
}

wf_status wfm__store_fail(wfm_store *s, wf_status code, wf_error *err, const char *fmt, ...)
{
    wf_loc loc = {s->where, 0, 0};
    va_list ap;
    va_start(ap, fmt);
    wf_status st = wf_error_setv(err, code, &loc, fmt, ap);
    va_end(ap);
    return st;
}

wf_status wfm__store_lock_failure(wfm_store *s, const char *id, bool exists, wf_error *err)
{
    if (!exists)
        return wfm__store_fail(s, WF_E_NOTFOUND, err, "no instance '%s' in the store", id);
    return wfm__store_fail(s, WF_E_LOCKED, err,
                           "instance '%s' is locked by another host (its lease has not expired)",
                           id);
}

/* ---- naming the store -------------------------------------------------------------------- */

/* libpq connection-string keywords: "host=/tmp/x dbname=y" names a PostgreSQL store. */
static bool is_pg_conninfo(const char *name)
{
    static const char *const keywords[] = {
        "host",    "hostaddr", "port",    "dbname",           "user",           "password",
        "service", "sslmode",  "options", "application_name", "connect_timeout", "passfile",
    };
    while (isspace((unsigned char)*name))
        name++;
    size_t n = 0;
    while (isalpha((unsigned char)name[n]) || name[n] == '_')
        n++;
    size_t eq = n;
    while (isspace((unsigned char)name[eq]))
        eq++;
    if (n == 0 || name[eq] != '=')
        return false;
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (strlen(keywords[i]) == n && strncmp(keywords[i], name, n) == 0)
            return true;
    return false;
}

static const wfm__store_ops *backend_of(const char *name, const char **target)
{
    *target = name;
    if (strncmp(name, "sqlite:", 7) == 0) {
        *target = name + 7;
        return &wfm__store_sqlite_ops;
    }
    if (strncmp(name, "postgresql://", 13) == 0 || strncmp(name, "postgres://", 11) == 0 ||
        is_pg_conninfo(name))
        return &wfm__store_pg_ops;
    return &wfm__store_sqlite_ops;
}

/* The name used in errors: the file, or the connection string with any password hidden. */
static char *display_name(const wfm__store_ops *ops, const char *target)
{
    bool secret = strstr(target, "password") || (strstr(target, "://") && strchr(target, '@'));
    if (ops == &wfm__store_sqlite_ops || !secret)
        return wf_strdup(target);
    return wf_strdup("postgresql store");
}

/* The default owner id: this machine, this process, and randomness for several stores in
 * one process. wfm_store_owner_is_dead reads it back. */
static char *default_owner(void)
{
    unsigned char r[4];
    wf_random_bytes(r, sizeof r);
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    host[strcspn(host, ":")] = '\0';
    char buf[320];
    snprintf(buf, sizeof buf, "%s:%ld:%02x%02x%02x%02x", host, (long)getpid(), r[0], r[1], r[2],
             r[3]);
    return wf_strdup(buf);
}

wf_status wfm_store_open(const wfm_store_opts *opts, wfm_store **out, wf_error *err)
{
    *out = NULL;
    if (!opts || !opts->path || !*opts->path)
        return wf_error_set(err, WF_E_USAGE, NULL, "no store path given");
    wfm_store *s = wf_calloc(1, sizeof *s);
    if (!s)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening the store");
    pthread_mutex_init(&s->conn_lock, NULL);
    pthread_mutex_init(&s->wait_lock, NULL);
    pthread_mutex_init(&s->queue_lock, NULL);
    pthread_cond_init(&s->queue_cond, NULL);
    pthread_cond_init(&s->commit_cond, NULL);
    pthread_condattr_t mono;
    pthread_condattr_init(&mono);
    pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
    pthread_cond_init(&s->gather_cond, &mono);
    pthread_condattr_destroy(&mono);
    wf_buf_init(&s->names_scratch);
    s->names = wf_strmap_create(wf_free);
    if (pipe(s->wake_fds) != 0)
        s->wake_fds[0] = s->wake_fds[1] = -1;
    for (int i = 0; i < 2 && s->wake_fds[i] >= 0; i++) {
        fcntl(s->wake_fds[i], F_SETFL, fcntl(s->wake_fds[i], F_GETFL) | O_NONBLOCK);
        fcntl(s->wake_fds[i], F_SETFD, FD_CLOEXEC);
    }
    const char *target = NULL;
    const wfm__store_ops *ops = backend_of(opts->path, &target);
    s->where = display_name(ops, target);
    s->owner = opts->owner ? wf_strdup(opts->owner) : default_owner();
    s->lease_ms = opts->lease_ms > 0 ? opts->lease_ms : 60000;
    s->group_commit = opts->group_commit;
    s->read_only = opts->read_only;
    s->clock = opts->clock_ms ? opts->clock_ms : real_clock_ms;
    s->clock_ud = opts->clock_ud;
    wf_status rc = WF_OK;
    if (!s->where || !s->owner || !s->names)
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory opening the store");
    else if (s->wake_fds[0] < 0)
        rc = wf_error_set(err, WF_E_IO, NULL, "cannot open the store: %s", strerror(errno));
    else if (!*target)
        rc = wf_error_set(err, WF_E_USAGE, NULL, "no store path given");
    else if ((rc = ops->open(s, target, opts, err)) == WF_OK)
        s->ops = ops;
    else
        ops->close(s);
    if (rc != WF_OK) {
        wfm_store_close(s);
        return rc;
    }
    *out = s;
    return WF_OK;
}

void wfm_store_close(wfm_store *s)
{
    if (!s)
        return;
    if (s->committer_started) { /* it commits what is still queued, then ends */
        pthread_mutex_lock(&s->queue_lock);
        s->committer_stop = true;
        pthread_cond_signal(&s->commit_cond);
        pthread_mutex_unlock(&s->queue_lock);
        pthread_join(s->committer, NULL);
    }
    if (s->ops)
        s->ops->close(s);
    pthread_mutex_destroy(&s->conn_lock);
    pthread_mutex_destroy(&s->wait_lock);
    pthread_mutex_destroy(&s->queue_lock);
    pthread_cond_destroy(&s->queue_cond);
    pthread_cond_destroy(&s->commit_cond);
    pthread_cond_destroy(&s->gather_cond);
    wf_strmap_destroy(s->names);
    wf_buf_fini(&s->names_scratch);
    for (int i = 0; i < 2; i++)
        if (s->wake_fds[i] >= 0)
            close(s->wake_fds[i]);
    wf_free(s->where);
    wf_free(s->owner);
    wf_free(s);
}

const char *wfm_store_owner(const wfm_store *s)
{
    return s->owner;
}

void wfm_store_counters(const wfm_store *s, uint64_t *commits, uint64_t *saves)
{
    wfm_store *m = (wfm_store *)s;
    pthread_mutex_lock(&m->conn_lock);
    *commits = s->commits;
    *saves = s->saves;
    pthread_mutex_unlock(&m->conn_lock);
}

/* ---- definitions, instances and leases ----------------------------------------------------- */

static void hash_text(uint64_t hash, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)hash);
}

wf_status wfm_store_put_definition(wfm_store *s, uint64_t hash, const char *path, wf_error *err)
{
    char h[17];
    hash_text(hash, h);
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->put_definition(s, h, path ? path : "", now_ms(s), err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_create(wfm_store *s, uint64_t definition_hash, wfm_store_id *out,
                           wf_error *err)
{
    char h[17];
    hash_text(definition_hash, h);
    wf_random_id(out->text);
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->create(s, out->text, h, now_ms(s), err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

void wfm_store_new_id(wfm_store_id *out)
{
    wf_random_id(out->text);
}

static wf_status save_pending(wfm_store *s, wfm__pending_save *p, wf_error *err);

wf_status wfm_store_insert(wfm_store *s, uint64_t definition_hash, const wfm_store_save_rec *rec,
                           wf_error *err)
{
    char h[17];
    hash_text(definition_hash, h);
    assert(rec->id && strlen(rec->id) == 32); /* an id from wfm_store_new_id */
    if (!s->ops->insert) { /* a save that creates the row, grouped with the others */
        wfm__pending_save p = {.rec = rec, .status = WF_OK, .err = WF_ERROR_INIT,
                               .insert_hash = h};
        return save_pending(s, &p, err);
    }
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->insert(s, h, rec, now_ms(s), err);
    if (rc == WF_OK) {
        s->saves++;
        s->commits++;
    }
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_insert_many(wfm_store *s, uint64_t definition_hash,
                                const wfm_store_save_rec *recs, size_t count, wf_error *err)
{
    if (!s->ops->insert_many) {
        wf_status rc = WF_OK;
        for (size_t i = 0; i < count && rc == WF_OK; i++)
            rc = wfm_store_insert(s, definition_hash, &recs[i], err);
        return rc;
    }
    char h[17];
    hash_text(definition_hash, h);
    for (size_t i = 0; i < count; i++)
        assert(recs[i].id && strlen(recs[i].id) == 32);
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = count ? s->ops->insert_many(s, h, recs, count, now_ms(s), err) : WF_OK;
    if (rc == WF_OK && count) {
        s->saves += count;
        s->commits++;
    }
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_suspend(wfm_store *s, const char *id, const char *reason, wf_error *err)
{
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->suspend(s, id, reason, now_ms(s), err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_create_id(wfm_store *s, uint64_t definition_hash, const char *id,
                              wf_error *err)
{
    if (strlen(id) != 32 || strspn(id, "0123456789abcdef") != 32)
        return wf_error_set(err, WF_E_USAGE, NULL,
                            "instance id '%s' is not 32 lowercase hex digits", id);
    char h[17];
    hash_text(definition_hash, h);
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->create(s, id, h, now_ms(s), err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_create_ids(wfm_store *s, uint64_t definition_hash, const char *const *ids,
                               size_t count, wf_error *err)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(ids[i]) != 32 || strspn(ids[i], "0123456789abcdef") != 32)
            return wf_error_set(err, WF_E_USAGE, NULL,
                                "instance id '%s' is not 32 lowercase hex digits", ids[i]);
    if (!s->ops->create_many) {
        wf_status rc = WF_OK;
        for (size_t i = 0; i < count && rc == WF_OK; i++)
            rc = wfm_store_create_id(s, definition_hash, ids[i], err);
        return rc;
    }
    char h[17];
    hash_text(definition_hash, h);
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->create_many(s, ids, count, h, now_ms(s), err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

/* Is `owner` a default owner id (default_owner) of another process on this machine that no
 * longer exists? Its leases may be taken over at once instead of after they expire. A pid
 * reused by another process only delays the takeover until the lease expires. */
bool wfm_store_owner_is_dead(const char *owner)
{
    const char *rand = strrchr(owner, ':');
    if (!rand || rand == owner || strlen(rand + 1) != 8 ||
        strspn(rand + 1, "0123456789abcdef") != 8)
        return false;
    const char *colon = rand - 1;
    while (colon > owner && *colon != ':')
        colon--;
    if (colon == owner)
        return false;
    char *end = NULL;
    errno = 0;
    long pid = strtol(colon + 1, &end, 10);
    if (end != rand || pid <= 0 || errno != 0 || (pid_t)pid == getpid())
        return false;
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        return false;
    host[sizeof host - 1] = '\0';
    size_t host_len = (size_t)(colon - owner);
    if (strlen(host) != host_len || memcmp(host, owner, host_len) != 0)
        return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

bool wfm_store_row_lockable(const wfm_store *s, const wfm_store_row *row)
{
    return !row->owner || strcmp(row->owner, s->owner) == 0 ||
           row->lock_expires_ms < now_ms(s) || wfm_store_owner_is_dead(row->owner);
}

/* The lease if it is free, ours or expired; else from a dead local owner, if that is who
 * holds it (a compare-and-set on the owner, so two hosts cannot both win). */
static wf_status lock_locked(wfm_store *s, const char *id, int64_t now, wf_error *err)
{
    bool changed = false, exists = true;
    char *owner = NULL;
    wf_status rc = s->ops->take_lease(s, id, NULL, now, &changed, err);
    if (rc == WF_OK && !changed)
        rc = s->ops->owner_of(s, id, &owner, &exists, err);
    if (rc == WF_OK && !changed && owner && wfm_store_owner_is_dead(owner))
        rc = s->ops->take_lease(s, id, owner, now, &changed, err);
    wf_free(owner);
    if (rc == WF_OK && !changed)
        rc = wfm__store_lock_failure(s, id, exists, err);
    return rc;
}

wf_status wfm_store_lock(wfm_store *s, const char *id, wf_error *err)
{
    int64_t now = now_ms(s);
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = lock_locked(s, id, now, err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_release(wfm_store *s, const char *id, wf_error *err)
{
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->release(s, id, err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_renew(wfm_store *s, wf_error *err)
{
    int64_t now = now_ms(s);
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->renew(s, now, err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

/* ---- the names cache ---------------------------------------------------------------------- */

/* Each bookmark, then each property name and value, every one followed by '\n' (a NULL value
 * as "\x01"), with a '\x02' between the parts. */
const char *wfm__names_text(wfm_store *s, const wfm_store_save_rec *r)
{
    wf_buf *b = &s->names_scratch;
    wf_buf_reset(b);
    for (size_t i = 0; i < r->bookmark_count; i++)
        wf_buf_addf(b, "%s\n", r->bookmarks[i]);
    wf_buf_addc(b, '\x02');
    for (size_t i = 0; i < r->prop_count; i++)
        wf_buf_addf(b, "%s\n%s\n", r->prop_names[i], r->prop_values[i] ? r->prop_values[i] : "\x01");
    return b->oom ? NULL : b->data;
}

const wfm__names_entry *wfm__names_get(wfm_store *s, const char *id)
{
    return wf_strmap_get(s->names, id);
}

bool wfm__names_unchanged(wfm_store *s, const wfm_store_save_rec *r, int64_t version)
{
    const char *text = wfm__names_text(s, r);
    const wfm__names_entry *last = wfm__names_get(s, r->id);
    return text && last && last->version == version && strcmp(last->text, text) == 0;
}

void wfm__names_forget(wfm_store *s, const char *id)
{
    wf_strmap_remove(s->names, id);
}

static void note_index(wfm__names_entry *e, const wfm_store_save_rec *r, int64_t version)
{
    e->version = version;
    e->next_timer_us = r->next_timer_us;
    size_t len = strlen(r->status);
    if (len >= sizeof e->status)
        len = 0; /* no status that long exists; never match one */
    memcpy(e->status, r->status, len);
    e->status[len] = '\0';
}

void wfm__names_remember(wfm_store *s, const wfm_store_save_rec *r, int64_t version)
{
    const char *text = wfm__names_text(s, r);
    wfm__names_entry *last = wf_strmap_get(s->names, r->id);
    if (text && last && strcmp(last->text, text) == 0) { /* the same names, one save later */
        note_index(last, r, version);
        return;
    }
    size_t len = text ? strlen(text) : 0;
    wfm__names_entry *e = text ? wf_malloc(sizeof *e + len + 1) : NULL;
    if (e) {
        note_index(e, r, version);
        memcpy(e->text, text, len + 1);
    }
    if (!e || wf_strmap_put(s->names, r->id, e) != WF_OK) {
        wf_free(e);
        wfm__names_forget(s, r->id);
    }
}

bool wfm__names_same_index(const wfm__names_entry *last, const wfm_store_save_rec *r)
{
    return last->status[0] && strcmp(last->status, r->status) == 0 &&
           last->next_timer_us == r->next_timer_us;
}

/* ---- saving: group commit ------------------------------------------------------------------ */

/* Write a batch in one transaction. A failed COMMIT fails every save of the batch. */
static void write_batch(wfm_store *s, wfm__pending_save *batch)
{
    wf_error err = WF_ERROR_INIT;
    uint64_t commits = 0;
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->write_batch(s, batch, now_ms(s), &commits, &err);
    s->commits += commits;
    for (wfm__pending_save *p = batch; p; p = p->next) {
        if (rc != WF_OK) {
            p->status = rc;
            p->err = err;
        }
        s->saves += p->status == WF_OK;
    }
    pthread_mutex_unlock(&s->conn_lock);
}

/* Under queue_lock, after `batch` was written: wake the synchronous savers (their entries may
 * vanish once done is set, so `next` is read first) and return the asynchronous entries as a
 * list for notify(), to be called without the lock. */
static wfm__pending_save *finish_locked(wfm_store *s, wfm__pending_save *batch)
{
    wfm__pending_save *async = NULL, **tail = &async;
    for (wfm__pending_save *q = batch, *next; q; q = next) {
        next = q->next;
        if (q->fn) {
            q->next = NULL;
            *tail = q;
            tail = &q->next;
        } else {
            s->sync_queued--;
            q->done = true;
        }
    }
    s->leader_active = false;
    pthread_cond_broadcast(&s->queue_cond);
    return async;
}

static void notify(wfm__pending_save *async)
{
    for (wfm__pending_save *q = async, *next; q; q = next) {
        next = q->next;
        q->fn(q->ud, q->status, &q->err);
        wf_free(q);
    }
}

/* How long a leader gathers its batch for announced savers (wfm_store_saver_begin): until
 * GATHER_GAP_NS pass with no new save, GATHER_MAX_NS in all. A gather that ends short of
 * every saver (their runs do more than save, in step with each other or not) makes the next
 * GATHER_SKIP batches commit at once. */
#define GATHER_GAP_NS 300000
#define GATHER_MAX_NS 2000000
#define GATHER_SKIP 16

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool gathered(const wfm_store *s)
{
    return s->sync_queued >= s->savers;
}

/* Under queue_lock, as the leader: with group commit, while an announced saver has not queued
 * its save (it is running its instance and will), wait for it as long as saves keep coming.
 * The savers then share this commit instead of each leading one of its own. The leader is
 * woken when the last announced saver queues, else at each gap's end. */
static void gather_locked(wfm_store *s)
{
    if (!s->group_commit || gathered(s))
        return;
    if (s->gather_skip > 0) {
        s->gather_skip--;
        return;
    }
    int64_t end = mono_ns() + GATHER_MAX_NS;
    uint64_t seen = s->arrivals;
    while (!gathered(s)) {
        int64_t now = mono_ns(), until = now + GATHER_GAP_NS < end ? now + GATHER_GAP_NS : end;
        struct timespec ts = {.tv_sec = until / 1000000000, .tv_nsec = until % 1000000000};
        if (now >= end)
            break;
        if (pthread_cond_timedwait(&s->gather_cond, &s->queue_lock, &ts) == ETIMEDOUT) {
            if (s->arrivals == seen) /* a whole gap without a new save */
                break;
            seen = s->arrivals;
        }
    }
    if (!gathered(s))
        s->gather_skip = GATHER_SKIP;
}

/* Under queue_lock, with no leader active: become the leader, gather, and take the queue (only
 * its head without group commit). */
static wfm__pending_save *take_locked(wfm_store *s)
{
    assert(!s->leader_active && s->queue_head);
    s->leader_active = true;
    gather_locked(s);
    wfm__pending_save *batch = s->queue_head;
    if (s->group_commit) {
        s->queue_head = s->queue_tail = NULL;
    } else {
        s->queue_head = batch->next;
        if (!s->queue_head)
            s->queue_tail = NULL;
        batch->next = NULL;
    }
    return batch;
}

static void enqueue_locked(wfm_store *s, wfm__pending_save *p)
{
    if (s->queue_tail)
        s->queue_tail->next = p;
    else
        s->queue_head = p;
    s->queue_tail = p;
    s->arrivals++;
    if (!p->fn)
        s->sync_queued++;
    if (s->leader_active && gathered(s))
        pthread_cond_signal(&s->gather_cond);
}

void wfm_store_saver_begin(wfm_store *s)
{
    pthread_mutex_lock(&s->queue_lock);
    s->savers++;
    pthread_mutex_unlock(&s->queue_lock);
}

/* A saver that ends does not cut a gathering leader's wait short: a thread between two runs
 * (its last save committed, its next run's first save microseconds away) would otherwise
 * leave the others a batch of their own, then wait a whole commit alone and lead a batch out
 * of step with theirs. The leader waits for its gap to end instead (the returning saver's
 * save ends it at once), so a saver gone for good costs one gap at most. */
void wfm_store_saver_end(wfm_store *s)
{
    pthread_mutex_lock(&s->queue_lock);
    assert(s->savers > 0);
    s->savers--;
    pthread_mutex_unlock(&s->queue_lock);
}

/* Under queue_lock, with no leader active: write the queue as one batch (the lock is let go
 * meanwhile and while asynchronous callbacks run) and wake its savers. */
static void lead_locked(wfm_store *s)
{
    wfm__pending_save *batch = take_locked(s);
    pthread_mutex_unlock(&s->queue_lock);
    write_batch(s, batch);
    pthread_mutex_lock(&s->queue_lock);
    wfm__pending_save *async = finish_locked(s, batch);
    if (async) {
        pthread_mutex_unlock(&s->queue_lock);
        notify(async);
        pthread_mutex_lock(&s->queue_lock);
    }
}

/* Write p (a save, or an insert) and wait for its commit: alone, or queued and grouped. */
static wf_status save_pending(wfm_store *s, wfm__pending_save *p, wf_error *err)
{
    if (!s->group_commit && !s->committer_started) {
        write_batch(s, p);
    } else {
        pthread_mutex_lock(&s->queue_lock);
        enqueue_locked(s, p);
        while (!p->done) {
            if (s->leader_active) {
                pthread_cond_wait(&s->queue_cond, &s->queue_lock);
                continue;
            }
            lead_locked(s);
        }
        pthread_mutex_unlock(&s->queue_lock);
    }
    if (p->status != WF_OK && err && err->code == WF_OK)
        *err = p->err;
    return p->status;
}

wf_status wfm_store_save(wfm_store *s, const wfm_store_save_rec *rec, wf_error *err)
{
    wfm__pending_save p = {.rec = rec, .status = WF_OK, .err = WF_ERROR_INIT};
    return save_pending(s, &p, err);
}

/* The commit thread: writes what wfm_store_save_async queued, in batches, until the store
 * closes with nothing queued. */
static void *committer_main(void *arg)
{
    wfm_store *s = arg;
    pthread_mutex_lock(&s->queue_lock);
    for (;;) {
        if (!s->queue_head) {
            if (s->committer_stop)
                break;
            pthread_cond_wait(&s->commit_cond, &s->queue_lock);
            continue;
        }
        if (s->leader_active) { /* a synchronous saver is committing: it may take ours too */
            pthread_cond_wait(&s->queue_cond, &s->queue_lock);
            continue;
        }
        lead_locked(s);
    }
    pthread_mutex_unlock(&s->queue_lock);
    return NULL;
}

/* Queue a save (an insert when `hash` is set) for the commit thread, starting it first. */
static wf_status queue_async(wfm_store *s, const wfm_store_save_rec *rec, const uint64_t *hash,
                             wfm_store_saved_fn fn, void *ud, wf_error *err)
{
    assert(fn);
    wfm__pending_save *p = wf_calloc(1, sizeof *p);
    if (!p)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory queueing a save");
    *p = (wfm__pending_save){.rec = rec, .status = WF_OK, .err = WF_ERROR_INIT, .fn = fn,
                             .ud = ud};
    if (hash) {
        hash_text(*hash, p->insert_hex);
        p->insert_hash = p->insert_hex;
    }
    pthread_mutex_lock(&s->queue_lock);
    if (!s->committer_started) {
        if (pthread_create(&s->committer, NULL, committer_main, s) != 0) {
            pthread_mutex_unlock(&s->queue_lock);
            wf_free(p);
            return wf_error_set(err, WF_E_NOMEM, NULL, "cannot start the store's commit thread");
        }
        s->committer_started = true;
    }
    enqueue_locked(s, p);
    pthread_cond_signal(&s->commit_cond);
    pthread_mutex_unlock(&s->queue_lock);
    return WF_OK;
}

wf_status wfm_store_save_async(wfm_store *s, const wfm_store_save_rec *rec,
                               wfm_store_saved_fn fn, void *ud, wf_error *err)
{
    return queue_async(s, rec, NULL, fn, ud, err);
}

wf_status wfm_store_insert_async(wfm_store *s, uint64_t definition_hash,
                                 const wfm_store_save_rec *rec, wfm_store_saved_fn fn, void *ud,
                                 wf_error *err)
{
    assert(rec->id && strlen(rec->id) == 32);
    if (!s->ops->insert)
        return queue_async(s, rec, &definition_hash, fn, ud, err);
    wf_error e = WF_ERROR_INIT;
    wf_status rc = wfm_store_insert(s, definition_hash, rec, &e);
    fn(ud, rc, &e);
    return WF_OK;
}

/* ---- reading and queued resumptions -------------------------------------------------------- */

wf_status wfm_store_load_state(wfm_store *s, const char *id, void **state, size_t *state_len,
                               char status[32], uint64_t *definition_hash, wf_error *err)
{
    *state = NULL;
    *state_len = 0;
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->load_state(s, id, state, state_len, status, definition_hash, err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_query_rows(wfm_store *s, const wfm_store_query *q, wfm_store_row_fn fn,
                               void *ud, wf_error *err)
{
    wfm_store_query none = WFM_STORE_QUERY_INIT;
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->query_rows(s, q ? q : &none, fn, ud, err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_props(wfm_store *s, const char *id, char **out, wf_error *err)
{
    *out = NULL;
    wf_buf b;
    wf_buf_init(&b);
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->props(s, id, &b, err);
    pthread_mutex_unlock(&s->conn_lock);
    if (rc == WF_OK && (b.oom || !(*out = wf_buf_detach(&b, NULL))))
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory reading properties");
    wf_buf_fini(&b);
    return rc;
}

wf_status wfm_store_enqueue_resume(wfm_store *s, const char *id, const char *bookmark,
                                   const char *payload_json, int64_t *seq, wf_error *err)
{
    int64_t ignored = 0;
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->enqueue_resume(s, id, bookmark, payload_json ? payload_json : "null",
                                          now_ms(s), seq ? seq : &ignored, err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_pending_resumes(wfm_store *s, const char *id, wfm_store_resume_fn fn,
                                    void *ud, wf_error *err)
{
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->pending_resumes(s, id, fn, ud, err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

wf_status wfm_store_put_tracking(wfm_store *s, const wfm_store_track_rec *recs, size_t count,
                                 wf_error *err)
{
    if (count == 0)
        return WF_OK;
    if (s->read_only)
        return wfm__store_fail(s, WF_E_STORE, err, "the store is open read-only");
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->put_tracking(s, recs, count, err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

/* Empty the wake pipe; true if it held anything. */
static bool take_wakes(wfm_store *s)
{
    char buf[64];
    bool any = false;
    while (s->wake_fds[0] >= 0 && read(s->wake_fds[0], buf, sizeof buf) > 0)
        any = true;
    return any;
}

wf_status wfm_store_wait(wfm_store *s, int64_t timeout_ms, bool *woken, wf_error *err)
{
    bool ignored = false;
    if (!woken)
        woken = &ignored;
    *woken = false;
    pthread_mutex_lock(&s->wait_lock);
    wf_status rc = WF_OK;
    if (take_wakes(s))
        *woken = true;
    else if (timeout_ms >= 0) /* 0: only what was announced already */
        rc = s->ops->wait(s, timeout_ms, s->wake_fds[0], woken, err);
    if (take_wakes(s))
        *woken = true;
    pthread_mutex_unlock(&s->wait_lock);
    return rc;
}

void wfm_store_wake(wfm_store *s)
{
    int saved = errno; /* async-signal-safe: write(2) only */
    if (s && s->wake_fds[1] >= 0 && write(s->wake_fds[1], "w", 1) < 0) {
        /* a full pipe already wakes the next wait */
    }
    errno = saved;
}

/* ---- claiming work ------------------------------------------------------------------------- */

wf_status wfm_store_claim(wfm_store *s, size_t max, int64_t now_us, wfm_store_claim_fn fn,
                          void *ud, size_t *count, wf_error *err)
{
    size_t ignored = 0;
    if (!count)
        count = &ignored;
    *count = 0;
    if (!fn)
        return wfm__store_fail(s, WF_E_USAGE, err, "claiming work needs a callback");
    if (max == 0)
        return WF_OK;
    int64_t now = now_ms(s);
    pthread_mutex_lock(&s->conn_lock);
    wf_status rc = s->ops->claim(s, max, now, now_us, fn, ud, count, err);
    pthread_mutex_unlock(&s->conn_lock);
    return rc;
}

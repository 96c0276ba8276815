/* wfl_exec_persist.c — the executor's state as one versioned blob: a checked header, the
 * instance tree from wfl_inst_save (with every activity's xact through the hooks), then the
 * scheduler queues, workflow queues and timers. Activities are referred to by (context id,
 * node index), resolved with wfl_inst_find_act after the tree is rebuilt. Once everything is
 * read, every restored xact is checked against its definition node and the restored tree (the
 * common part here, each kind's cursor and counters by its wfl__check_* in wfl_act_*.c), so
 * the behaviours' invariants hold for any blob. Anything malformed or inconsistent is
 * WF_E_CORRUPT and nothing is created (docs/semantics.md §4 "Persistence points", §6). */
#include "wfl_exec_int.h"

#include "../common/wf_codec.h"

#include <assert.h>
#include <string.h>

/* Version 2: everything after the header in common/wf_codec.h's encoding (varints, values
 * with their parent exception type). Version 1 (fixed-width fields) is refused. */
#define BLOB_MAGIC   "WFLX"
#define BLOB_VERSION 2u
#define NO_CONTEXT   UINT32_MAX
#define HEADER_LEN   (4 + 4 + 8 + 8) /* magic, version, payload length, checksum */

/* The header's fixed little-endian fields (the only fixed-width data in the blob). */
static void put_le(char *at, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        at[i] = (char)(uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *at, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)at[i] << (8 * i);
    return v;
}

/* ---- writing -------------------------------------------------------------------------------- */
static void put_ref(wf_buf *b, const wfl_act *act)
{
    wf_codec_put_uint(b, act ? wfl_act_context_id(act) : NO_CONTEXT);
    wf_codec_put_uint(b, act ? wfl_act_node(act)->index : 0);
}

/* wfl_inst's hook: ud is the save's wf_error, so a value that cannot be saved (nested too
 * deeply) is reported as itself rather than as out of memory. */
static bool save_act(void *ud, const wfl_act *act, wf_buf *out)
{
    const xact *x = wfl_act_exec(act);
    if (!x) /* never touched by the executor: nothing to save */
        return true;
    wf_codec_put_uint(out, x->phase);
    wf_codec_put_uint(out, x->flags);
    wf_codec_put_int(out, x->cursor);
    wf_codec_put_int(out, x->aux);
    wf_codec_put_int(out, x->count);
    wf_codec_put_uint(out, x->queue_id);
    wf_codec_put_uint(out, x->order);
    if (wf_codec_put_value(out, &x->exc, ud) != WF_OK ||
        wf_codec_put_value(out, &x->val, ud) != WF_OK)
        return false;
    put_ref(out, x->listener);
    if (wfl_act_type(act)->composite) { /* its body's state, nested */
        void *blob = NULL;
        size_t len = 0;
        wf_codec_put_uint(out, x->nested != NULL);
        if (x->nested && wfl_exec_save(x->nested, &blob, &len, ud) != WF_OK)
            return false;
        if (x->nested)
            wf_codec_put_bytes(out, blob, len);
        wf_free(blob);
    }
    return !out->oom;
}

static void put_items(wf_buf *b, const wi_queue *q)
{
    /* the ring of wfl__wiq_push: count items from head, wrapping at cap */
    assert(q->cap == 0 ? q->count == 0 : q->head < q->cap && q->count <= q->cap);
    wf_codec_put_uint(b, q->count);
    for (size_t i = 0; i < q->count; i++) {
        const work_item *it = &q->items[(q->head + i) % q->cap];
        wf_buf_addc(b, (char)it->kind);
        put_ref(b, it->act);
        put_ref(b, it->child);
        wf_codec_put_uint(b, it->arg);
    }
}

static wf_status put_queues(wf_buf *b, const wfl_exec *ex, wf_error *err)
{
    wf_codec_put_uint(b, ex->queue_count);
    for (size_t i = 0; i < ex->queue_count; i++) {
        const xqueue *q = ex->queues[i];
        wf_codec_put_uint(b, q->id);
        wf_codec_put_str(b, q->name);
        wf_buf_addc(b, q->is_timer ? 1 : 0);
        wf_codec_put_uint(b, q->item_count);
        for (size_t j = 0; j < q->item_count; j++) {
            wf_status rc = wf_codec_put_value(b, &q->items[j], err);
            if (rc != WF_OK)
                return rc;
        }
        wf_codec_put_uint(b, q->sub_count);
        for (size_t j = 0; j < q->sub_count; j++)
            put_ref(b, q->subs[j]);
    }
    wf_codec_put_uint(b, ex->timer_count);
    for (size_t i = 0; i < ex->timer_count; i++) {
        wf_codec_put_int(b, ex->timers[i].due_us);
        wf_codec_put_uint(b, ex->timers[i].queue_id);
        wf_codec_put_uint(b, ex->timers[i].seq);
    }
    return WF_OK;
}

static wf_status put_exec(wf_buf *b, const wfl_exec *ex, const wf_buf *inst, wf_error *err)
{
    wf_codec_put_str(b, ex->instance_id);
    wf_buf_addc(b, (char)ex->state);
    wf_buf_addc(b, ex->suspended ? 1 : 0);
    wf_buf_addc(b, ex->persist_pending ? 1 : 0);
    wf_codec_put_uint(b, ex->next_order);
    wf_codec_put_uint(b, ex->next_queue_id);
    wf_status rc = wf_codec_put_value(b, &ex->exception, err);
    if (rc != WF_OK)
        return rc;
    put_ref(b, ex->root);
    wf_codec_put_bytes(b, inst->data, inst->len);
    put_items(b, &ex->atomic);
    put_items(b, &ex->normal);
    rc = put_queues(b, ex, err);
    if (rc != WF_OK)
        return rc;
    wf_codec_put_bytes(b, ex->checkpoint, ex->checkpoint ? ex->checkpoint_len : 0);
    wf_codec_put_uint(b, ex->checkpoint_ctx);
    wf_codec_put_uint(b, ex->checkpoint_node);
    return WF_OK;
}

wf_status wfl_exec_save(const wfl_exec *ex, void **blob, size_t *len, wf_error *err)
{
    *blob = NULL;
    *len = 0;
    wf_buf inst, b;
    wf_buf_init(&inst);
    wf_buf_init(&b);
    wfl_inst_hooks hooks = WFL_INST_HOOKS_INIT;
    hooks.save_act = save_act;
    hooks.ud = err;
    wf_status rc = wfl_inst_save(ex->inst, &hooks, &inst, err);
    if (rc != WF_OK)
        goto done;
    wf_buf_add(&b, BLOB_MAGIC, 4);
    wf_buf_add(&b, (const char[HEADER_LEN - 4]){0}, HEADER_LEN - 4); /* patched below */
    rc = put_exec(&b, ex, &inst, err);
    if (rc != WF_OK)
        goto done;
    if (b.oom) {
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving the instance");
        goto done;
    }
    uint64_t plen = b.len - HEADER_LEN;
    put_le(b.data + 4, BLOB_VERSION, 4);
    put_le(b.data + 8, plen, 8);
    put_le(b.data + 16, wf_hash_bytes(b.data + HEADER_LEN, plen), 8);
    *blob = wf_buf_detach(&b, len);
    if (!*blob)
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving the instance");
done:
    wf_buf_fini(&inst);
    wf_buf_fini(&b);
    return rc;
}

/* ---- reading -------------------------------------------------------------------------------- */
/* A wf_reader that also remembers whether a failure was out of memory (the codec's readers
 * only say "bad"). */
typedef struct reader {
    wf_reader r;
    bool nomem;
} reader;

static void reader_init(reader *rd, const void *data, size_t len, const wfl_definition *def)
{
    wf_reader_init(&rd->r, data, len, def ? def->types : NULL);
    rd->nomem = false;
}

static bool bad(const reader *rd)
{
    return !wf_reader_ok(&rd->r);
}

static uint32_t get_u32(reader *rd)
{
    uint64_t v = wf_codec_get_uint(&rd->r);
    if (v > UINT32_MAX)
        wf_reader_fail(&rd->r, "a 32-bit field is too large");
    return (uint32_t)v;
}

static int32_t get_i32(reader *rd)
{
    int64_t v = wf_codec_get_int(&rd->r);
    if (v < INT32_MIN || v > INT32_MAX)
        wf_reader_fail(&rd->r, "a 32-bit field is too large");
    return (int32_t)v;
}

static char *get_dup(reader *rd)
{
    char *s = wf_codec_get_str(&rd->r, &rd->nomem);
    if (rd->nomem)
        wf_reader_fail(&rd->r, "out of memory");
    return s;
}

static wf_value get_value(reader *rd)
{
    wf_value v;
    if (wf_codec_get_value(&rd->r, &v, NULL) == WF_E_NOMEM) {
        rd->nomem = true;
        wf_reader_fail(&rd->r, "out of memory");
    }
    return v;
}

/* Refs are resolved once the whole tree exists. */
typedef struct ref {
    uint32_t ctx;
    uint64_t node;
} ref;

typedef struct pending_listener {
    wfl_act *act;
    xact *x;
    ref listener;
} pending_listener;

typedef struct restore_ctx {
    wfl_exec *ex;
    const wfl_definition *def;
    pending_listener *pend; /* every restored xact, with its listener ref */
    size_t pend_count, pend_cap;
} restore_ctx;

static ref get_ref(reader *rd)
{
    ref x;
    x.ctx = get_u32(rd);
    x.node = wf_codec_get_uint(&rd->r);
    return x;
}

static wfl_act *resolve(wfl_exec *ex, ref x, bool *missing)
{
    if (x.ctx == NO_CONTEXT)
        return NULL;
    wfl_act *a = wfl_inst_find_act(ex->inst, x.ctx, (size_t)x.node);
    if (!a)
        *missing = true;
    return a;
}

/* A reference read and resolved at once (the tree exists by then); NULL for "none". */
static wfl_act *get_act(reader *rd, wfl_exec *ex)
{
    bool missing = false;
    wfl_act *a = resolve(ex, get_ref(rd), &missing);
    if (missing)
        wf_reader_fail(&rd->r, "a reference to an activity that does not exist");
    return a;
}

static bool oom(reader *rd)
{
    rd->nomem = true;
    return wf_reader_fail(&rd->r, "out of memory");
}

static wf_status load_act(void *ud, wfl_act *act, const void *data, size_t len, wf_error *err)
{
    restore_ctx *rc = ud;
    if (!len)
        return WF_OK;
    reader rd;
    reader_init(&rd, data, len, rc->def);
    xact *x = wfl__state(rc->ex, act);
    if (!x)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory restoring the instance");
    x->phase = get_u32(&rd);
    x->flags = get_u32(&rd);
    x->cursor = get_i32(&rd);
    x->aux = get_i32(&rd);
    x->count = get_i32(&rd);
    x->queue_id = get_u32(&rd);
    x->order = wf_codec_get_uint(&rd.r);
    x->exc = get_value(&rd);
    x->val = get_value(&rd);
    ref l = get_ref(&rd);
    const wfl_definition *body = wfl_act_type(act)->composite;
    if (body && wf_codec_get_uint(&rd.r) == 1 && !bad(&rd)) {
        size_t blen = 0;
        const void *blob = wf_codec_get_bytes(&rd.r, &blen);
        wfl_exec_opts o = wfl__composite_opts(rc->ex);
        wf_status st = blob ? wfl_exec_restore(body, &o, blob, blen, &x->nested, err)
                            : wf_error_set(err, WF_E_CORRUPT, NULL, "corrupt composite state");
        if (st != WF_OK) {
            wf_value_release(&x->exc);
            wf_value_release(&x->val);
            return st;
        }
    }
    if (rc->pend_count == rc->pend_cap) {
        size_t cap = rc->pend_cap ? rc->pend_cap * 2 : 8;
        pending_listener *p = wf_realloc(rc->pend, cap * sizeof *p);
        if (!p) {
            wf_value_release(&x->exc);
            wf_value_release(&x->val);
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        }
        rc->pend = p;
        rc->pend_cap = cap;
    }
    rc->pend[rc->pend_count++] = (pending_listener){act, x, l};
    if (rd.nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory restoring the instance");
    if (bad(&rd) || wf_reader_left(&rd.r))
        return wf_error_set(err, WF_E_CORRUPT, NULL, "corrupt activity state in the blob");
    return WF_OK;
}

static void read_items(reader *rd, wfl_exec *ex, wi_queue *q)
{
    uint64_t n = wf_codec_get_uint(&rd->r);
    for (uint64_t i = 0; i < n && !bad(rd); i++) {
        work_item it = {0};
        it.kind = (wi_kind)wf_codec_get_u8(&rd->r);
        it.act = get_act(rd, ex);
        it.child = get_act(rd, ex);
        it.arg = get_u32(rd);
        if (it.kind > WI_QUEUE || !it.act)
            wf_reader_fail(&rd->r, "bad work item");
        if (!bad(rd) && !wfl__wiq_push(q, &it))
            oom(rd);
    }
}

/* Append a restored subscriber (no work item is scheduled: the saved queues hold those).
 * On out of memory the queue keeps its old array, so nothing leaks. */
static bool add_sub(xqueue *q, wfl_act *a)
{
    if (q->sub_count == q->sub_cap) {
        size_t cap = q->sub_cap * 2 + 2;
        wfl_act **subs = wf_realloc(q->subs, cap * sizeof *subs);
        if (!subs)
            return false;
        q->subs = subs;
        q->sub_cap = cap;
    }
    q->subs[q->sub_count++] = a;
    return true;
}

static void read_queue(reader *rd, wfl_exec *ex)
{
    uint32_t id = get_u32(rd);
    char *name = get_dup(rd);
    bool is_timer = wf_codec_get_u8(&rd->r) != 0;
    xqueue *q = name && !bad(rd) ? wfl__queue_create(ex, name, is_timer) : NULL;
    wf_free(name);
    if (!q) {
        wf_reader_fail(&rd->r, "bad queue");
        return;
    }
    q->id = id;
    uint64_t items = wf_codec_get_uint(&rd->r);
    for (uint64_t j = 0; j < items && !bad(rd); j++) {
        wf_value v = get_value(rd);
        if (!bad(rd) && !wfl__queue_enqueue(ex, q, &v))
            oom(rd);
        wf_value_release(&v);
    }
    uint64_t subs = wf_codec_get_uint(&rd->r);
    for (uint64_t j = 0; j < subs && !bad(rd); j++) {
        wfl_act *a = get_act(rd, ex);
        if (a && !bad(rd) && !add_sub(q, a))
            oom(rd);
    }
}

static void read_queues(reader *rd, wfl_exec *ex)
{
    uint64_t n = wf_codec_get_uint(&rd->r);
    for (uint64_t i = 0; i < n && !bad(rd); i++)
        read_queue(rd, ex);
    uint64_t t = wf_codec_get_uint(&rd->r);
    for (uint64_t i = 0; i < t && !bad(rd); i++) {
        int64_t due = wf_codec_get_int(&rd->r);
        uint32_t qid = get_u32(rd);
        uint64_t seq = wf_codec_get_uint(&rd->r);
        if (!bad(rd) && !seq)
            wf_reader_fail(&rd->r, "bad timer");
        else if (!bad(rd) && !wfl__timer_add(ex, due, qid, seq))
            oom(rd);
    }
}

static void read_checkpoint(reader *rd, wfl_exec *ex)
{
    size_t n;
    const void *cp = wf_codec_get_bytes(&rd->r, &n);
    ex->checkpoint_ctx = get_u32(rd);
    ex->checkpoint_node = wf_codec_get_uint(&rd->r);
    if (bad(rd) || !n)
        return;
    ex->checkpoint = wf_malloc(n);
    if (!ex->checkpoint) {
        oom(rd);
        return;
    }
    memcpy(ex->checkpoint, cp, n);
    ex->checkpoint_len = n;
}

static wf_status corrupt(wf_error *err, const char *what)
{
    return wf_error_set(err, WF_E_CORRUPT, NULL, "cannot restore the instance: %s", what);
}

static wf_status check_header(const uint8_t *p, size_t len, wf_error *err)
{
    if (len < HEADER_LEN || memcmp(p, BLOB_MAGIC, 4) != 0)
        return corrupt(err, "not a legacy instance blob");
    uint64_t version = get_le(p + 4, 4), plen = get_le(p + 8, 8), sum = get_le(p + 16, 8);
    if (version == 1)
        return wf_error_set(err, WF_E_STORE, NULL,
                            "cannot restore the instance: it was saved in blob version 1 by an "
                            "older wfbridge, which this one no longer reads (version %u)",
                            BLOB_VERSION);
    if (version != BLOB_VERSION)
        return wf_error_set(err, WF_E_CORRUPT, NULL,
                            "cannot restore the instance: unknown blob version %u",
                            (unsigned)version);
    if (plen != len - HEADER_LEN || wf_hash_bytes(p + HEADER_LEN, plen) != sum)
        return corrupt(err, "the blob is truncated or damaged (checksum mismatch)");
    return WF_OK;
}

/* The executor fields after the instance id; the instance bytes are returned as a view. */
static wf_status read_exec_fields(reader *rd, wfl_exec *ex, ref *root, const char **inst,
                                  size_t *inst_len, wf_error *err)
{
    ex->state = (wfl_exec_state)wf_codec_get_u8(&rd->r);
    ex->suspended = wf_codec_get_u8(&rd->r) != 0;
    ex->persist_pending = wf_codec_get_u8(&rd->r) != 0;
    ex->next_order = wf_codec_get_uint(&rd->r);
    ex->next_queue_id = get_u32(rd);
    ex->exception = get_value(rd);
    *root = get_ref(rd);
    *inst = wf_codec_get_bytes(&rd->r, inst_len);
    if (rd->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (bad(rd) || ex->state > WFL_EXEC_SUSPENDED)
        return corrupt(err, "bad executor header");
    return WF_OK;
}

/* ---- consistency of what was restored -------------------------------------------------------- */
/* The kinds whose xact holds a cursor or counters that the behaviour relies on. */
static const wfl_restore_check check_table[WFL_KIND_COUNT] = {
    [WFL_KIND_SEQUENTIAL_WORKFLOW] = wfl__check_sequence,
    [WFL_KIND_SEQUENCE] = wfl__check_sequence,
    [WFL_KIND_IFELSE_BRANCH] = wfl__check_sequence,
    [WFL_KIND_EVENT_DRIVEN] = wfl__check_sequence,
    [WFL_KIND_TRANSACTION_SCOPE] = wfl__check_sequence,
    [WFL_KIND_COMPENSATABLE_SEQUENCE] = wfl__check_sequence,
    [WFL_KIND_COMPENSATION_HANDLER] = wfl__check_sequence,
    [WFL_KIND_FAULT_HANDLER] = wfl__check_sequence,
    [WFL_KIND_CANCELLATION_HANDLER] = wfl__check_sequence,
    [WFL_KIND_STATE_INITIALIZATION] = wfl__check_sequence,
    [WFL_KIND_STATE_FINALIZATION] = wfl__check_sequence,
    [WFL_KIND_CUSTOM] = wfl__check_custom,
    [WFL_KIND_WHILE] = wfl__check_while,
    [WFL_KIND_LISTEN] = wfl__check_listen,
    [WFL_KIND_STATE_MACHINE_WORKFLOW] = wfl__check_state_machine,
};

/* What holds for every kind: known sub-phase and flags (a sub-phase only where the status has
 * one), a completion order already given, and no running child under an activity that is not
 * running. */
static const char *check_common(wfl_exec *ex, wfl_act *act, const xact *x)
{
    if (x->phase > XP_DEFAULT_COMP)
        return "an unknown sub-phase";
    if (x->flags & ~(XF_KEEP_CONTEXT | XF_STARTED | XF_HANDLED | XF_BUSY))
        return "unknown flags";
    if (x->order > ex->next_order)
        return "a completion order not given yet";
    wfl_status st = wfl_act_status(act);
    if (x->phase != XP_NONE && st != WFL_ST_CANCELING && st != WFL_ST_FAULTING &&
        st != WFL_ST_COMPENSATING)
        return "a sub-phase outside Canceling, Faulting or Compensating";
    if (!wfl__is_running(act) && wfl__running_children(act))
        return "a running child under an activity that is not running";
    return NULL;
}

/* Every restored xact against its definition node and the restored tree and queues. */
static wf_status check_restored(wfl_exec *ex, const pending_listener *p, size_t n, wf_error *err)
{
    for (size_t i = 0; i < n; i++) {
        wfl_kind kind = wfl_act_type(p[i].act)->kind;
        wfl_restore_check own = kind < WFL_KIND_COUNT ? check_table[kind] : NULL;
        const char *why = check_common(ex, p[i].act, p[i].x);
        if (!why && own)
            why = own(ex, p[i].act, p[i].x);
        if (why)
            return wf_error_set(err, WF_E_CORRUPT, NULL,
                                "cannot restore instance '%s': activity '%s' has %s",
                                ex->instance_id, wfl_act_name(p[i].act), why);
    }
    return WF_OK;
}

/* Rebuild the activity tree with every xact, then resolve the references into it. */
static wf_status restore_tree(wfl_exec *ex, const char *bytes, size_t len, ref root,
                              restore_ctx *rx, wf_error *err)
{
    wfl_inst_hooks hooks = WFL_INST_HOOKS_INIT;
    hooks.load_act = load_act;
    hooks.ud = rx;
    wfl_inst *inst = NULL;
    wf_status rc = wfl_inst_restore(ex->def, bytes, len, &hooks, &inst, err);
    if (rc != WF_OK) { /* the activities are gone: drop what their xacts hold */
        for (size_t i = 0; i < rx->pend_count; i++) {
            wf_value_release(&rx->pend[i].x->exc);
            wf_value_release(&rx->pend[i].x->val);
        }
        rx->pend_count = 0;
        return rc;
    }
    bool missing = false;
    wfl_exec_attach(ex, inst, NULL);
    ex->root = resolve(ex, root, &missing);
    for (size_t i = 0; i < rx->pend_count; i++)
        if (rx->pend[i].listener.ctx != NO_CONTEXT)
            rx->pend[i].x->listener = resolve(ex, rx->pend[i].listener, &missing);
    return missing || !ex->root ? corrupt(err, "bad activity reference") : WF_OK;
}

wf_status wfl_exec_restore(const wfl_definition *def, const wfl_exec_opts *opts, const void *blob,
                           size_t len, wfl_exec **out, wf_error *err)
{
    *out = NULL;
    wf_status rc = check_header(blob, len, err);
    if (rc != WF_OK)
        return rc;
    reader rd;
    reader_init(&rd, (const uint8_t *)blob + HEADER_LEN, len - HEADER_LEN, def);
    char *id = get_dup(&rd);
    wfl_exec_opts o = opts ? *opts : (wfl_exec_opts)WFL_EXEC_OPTS_INIT;
    o.instance_id = id;
    wfl_exec *ex = NULL;
    if (bad(&rd) || (rc = wfl_exec_new(def, &o, &ex, err)) != WF_OK) {
        wf_free(id);
        return rd.nomem      ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory")
               : rc != WF_OK ? rc
                             : corrupt(err, "truncated header");
    }
    wf_free(id);
    ex->opts.instance_id = NULL;
    ref root;
    const char *inst_bytes;
    size_t inst_len;
    restore_ctx rx = {ex, ex->def, NULL, 0, 0};
    rc = read_exec_fields(&rd, ex, &root, &inst_bytes, &inst_len, err);
    if (rc == WF_OK)
        rc = restore_tree(ex, inst_bytes, inst_len, root, &rx, err);
    if (rc == WF_OK) {
        read_items(&rd, ex, &ex->atomic);
        read_items(&rd, ex, &ex->normal);
        read_queues(&rd, ex);
        read_checkpoint(&rd, ex);
        if (!bad(&rd) && !wf_reader_left(&rd.r) && !ex->failed)
            wfl__rebuild_waiting(ex);
        if (rd.nomem || ex->failed)
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        else if (bad(&rd) || wf_reader_left(&rd.r))
            rc = corrupt(err, "bad scheduler or queue data");
        else
            rc = check_restored(ex, rx.pend, rx.pend_count, err);
    }
    wf_free(rx.pend);
    if (rc != WF_OK) {
        wfl_exec_destroy(ex);
        return rc;
    }
    *out = ex;
    return WF_OK;
}

/* ---- TransactionScope checkpoints ------------------------------------------------------------ */
void wfl__checkpoint_take(wfl_exec *ex, wfl_act *scope)
{
    wfl__checkpoint_drop(ex);
    if (ex->opts.no_checkpoints)
        return;
    wf_error err = WF_ERROR_INIT;
    void *blob = NULL;
    size_t len = 0;
    if (wfl_exec_save(ex, &blob, &len, &err) != WF_OK) {
        wfl__fail(ex, &err);
        return;
    }
    ex->checkpoint = blob;
    ex->checkpoint_len = len;
    ex->checkpoint_ctx = wfl_act_context_id(scope);
    ex->checkpoint_node = wfl_act_node(scope)->index;
}

void wfl__checkpoint_drop(wfl_exec *ex)
{
    wf_free(ex->checkpoint);
    ex->checkpoint = NULL;
    ex->checkpoint_len = 0;
}

/* Exchange everything but the identity and the counters, then give each its dispose hook. */
static void swap_state(wfl_exec *ex, wfl_exec *other)
{
    wfl_exec tmp = *ex;
    *ex = *other;
    *other = tmp;
    ex->opts = other->opts;
    memcpy(ex->instance_id, other->instance_id, sizeof ex->instance_id);
    wfl_exec_stats stats = ex->stats;
    ex->stats = other->stats;
    other->stats = stats;
    wfl_exec_attach(ex, ex->inst, ex->root);
    wfl_exec_attach(other, other->inst, other->root);
}

bool wfl__checkpoint_rollback(wfl_exec *ex, wfl_act *scope)
{
    if (!ex->checkpoint || wfl_act_context_id(scope) != ex->checkpoint_ctx ||
        wfl_act_node(scope)->index != ex->checkpoint_node)
        return false;
    uint32_t ctx = ex->checkpoint_ctx;
    size_t node = (size_t)ex->checkpoint_node;
    xact *x = wfl_act_exec(scope);
    wf_value exc = wf_value_retain(&x->exc);
    wfl_exec_opts o = ex->opts;
    o.instance_id = ex->instance_id;
    wfl_exec *before = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfl_exec_restore(ex->def, &o, ex->checkpoint, ex->checkpoint_len, &before, &err);
    wfl__checkpoint_drop(ex);
    if (rc != WF_OK) {
        wf_value_release(&exc);
        wfl__fail(ex, &err);
        return true;
    }
    swap_state(ex, before);
    wfl_exec_destroy(before); /* the state being rolled back, scope included */
    wfl_act *again = wfl_inst_find_act(ex->inst, ctx, node);
    if (again)
        wfl__throw(ex, again, &exc);
    else
        wfl__fail(ex, &(wf_error){WF_E_CORRUPT, "checkpoint without its scope", "", 0, 0});
    wf_value_release(&exc);
    return true;
}

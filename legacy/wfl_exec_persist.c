/* wfl_exec_persist.c — the executor's state as one versioned blob: a checked header, the
 * instance tree from wfl_inst_save (with every activity's xact through the hooks), then the
 * scheduler queues, workflow queues and timers. Activities are referred to by (context id,
 * node index), resolved with wfl_inst_find_act after the tree is rebuilt. Anything malformed
 * is WF_E_CORRUPT and nothing is created (docs/semantics.md §4 "Persistence points", §6). */
#include "wfl_exec_int.h"

#include <string.h>

#define BLOB_MAGIC   "WFLX"
#define BLOB_VERSION 1u
#define NO_CONTEXT   UINT32_MAX
#define HEADER_LEN   (4 + 4 + 8 + 8)

/* ---- writing -------------------------------------------------------------------------------- */
static void put_u8(wf_buf *b, uint8_t v)
{
    wf_buf_add(b, &v, 1);
}

static void put_u32(wf_buf *b, uint32_t v)
{
    uint8_t o[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    wf_buf_add(b, o, 4);
}

static void put_u64(wf_buf *b, uint64_t v)
{
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

static void put_str(wf_buf *b, const char *s, size_t len)
{
    put_u32(b, (uint32_t)len);
    wf_buf_add(b, s, len);
}

static void put_cstr(wf_buf *b, const char *s)
{
    put_str(b, s ? s : "", s ? strlen(s) : 0);
}

static void put_value(wf_buf *b, const wf_value *v)
{
    wf_kind k = v->type->kind;
    put_u8(b, (uint8_t)k);
    switch (k) {
    case WF_K_NULL:
        break;
    case WF_K_BOOL:
        put_u8(b, v->u.b);
        break;
    case WF_K_INT32:
        put_u32(b, (uint32_t)v->u.i32);
        break;
    case WF_K_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &v->u.d, 8);
        put_u64(b, bits);
        break;
    }
    case WF_K_STRING:
        put_str(b, wf_value_str(v), wf_value_str_len(v));
        break;
    case WF_K_LIST:
        put_cstr(b, v->type->name);
        put_u32(b, (uint32_t)wf_value_list_count(v));
        for (size_t i = 0; i < wf_value_list_count(v); i++)
            put_value(b, wf_value_list_at(v, i));
        break;
    case WF_K_RECORD:
        put_u32(b, (uint32_t)wf_value_record_count(v));
        for (size_t i = 0; i < wf_value_record_count(v); i++) {
            put_cstr(b, wf_value_record_key(v, i));
            put_value(b, wf_value_record_at(v, i));
        }
        break;
    case WF_K_EXCEPTION:
        put_cstr(b, v->type->name);
        put_cstr(b, wf_value_exc_message(v));
        break;
    default: /* Int64, Decimal, DateTime, TimeSpan, Token */
        put_cstr(b, v->type->name);
        put_u64(b, (uint64_t)v->u.i64);
        break;
    }
}

static void put_ref(wf_buf *b, const wfl_act *act)
{
    put_u32(b, act ? wfl_act_context_id(act) : NO_CONTEXT);
    put_u64(b, act ? wfl_act_node(act)->index : 0);
}

static bool save_act(void *ud, const wfl_act *act, wf_buf *out)
{
    (void)ud;
    const xact *x = wfl_act_exec(act);
    if (!x) /* never touched by the executor: nothing to save */
        return true;
    put_u32(out, x->phase);
    put_u32(out, x->flags);
    put_u32(out, (uint32_t)x->cursor);
    put_u32(out, (uint32_t)x->aux);
    put_u32(out, (uint32_t)x->count);
    put_u32(out, x->queue_id);
    put_u64(out, x->order);
    put_value(out, &x->exc);
    put_value(out, &x->val);
    put_ref(out, x->listener);
    return !out->oom;
}

static void put_items(wf_buf *b, const wi_queue *q)
{
    put_u32(b, (uint32_t)q->count);
    for (size_t i = 0; i < q->count; i++) {
        const work_item *it = &q->items[(q->head + i) % q->cap];
        put_u8(b, (uint8_t)it->kind);
        put_ref(b, it->act);
        put_ref(b, it->child);
        put_u32(b, it->arg);
    }
}

static void put_queues(wf_buf *b, const wfl_exec *ex)
{
    put_u32(b, (uint32_t)ex->queue_count);
    for (size_t i = 0; i < ex->queue_count; i++) {
        const xqueue *q = ex->queues[i];
        put_u32(b, q->id);
        put_cstr(b, q->name);
        put_u8(b, q->is_timer);
        put_u32(b, (uint32_t)q->item_count);
        for (size_t j = 0; j < q->item_count; j++)
            put_value(b, &q->items[j]);
        put_u32(b, (uint32_t)q->sub_count);
        for (size_t j = 0; j < q->sub_count; j++)
            put_ref(b, q->subs[j]);
    }
    put_u32(b, (uint32_t)ex->timer_count);
    for (size_t i = 0; i < ex->timer_count; i++) {
        put_u64(b, (uint64_t)ex->timers[i].due_us);
        put_u32(b, ex->timers[i].queue_id);
        put_u64(b, ex->timers[i].seq);
    }
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
    wf_status rc = wfl_inst_save(ex->inst, &hooks, &inst, err);
    if (rc != WF_OK)
        goto done;
    wf_buf_add(&b, BLOB_MAGIC, 4);
    put_u32(&b, BLOB_VERSION);
    put_u64(&b, 0); /* payload length, patched below */
    put_u64(&b, 0); /* checksum */
    put_cstr(&b, ex->instance_id);
    put_u8(&b, (uint8_t)ex->state);
    put_u8(&b, ex->suspended);
    put_u8(&b, ex->persist_pending);
    put_u64(&b, ex->next_order);
    put_u32(&b, ex->next_queue_id);
    put_value(&b, &ex->exception);
    put_ref(&b, ex->root);
    put_str(&b, inst.data, inst.len);
    put_items(&b, &ex->atomic);
    put_items(&b, &ex->normal);
    put_queues(&b, ex);
    put_str(&b, ex->checkpoint ? ex->checkpoint : "", ex->checkpoint ? ex->checkpoint_len : 0);
    put_u32(&b, ex->checkpoint_ctx);
    put_u64(&b, ex->checkpoint_node);
    if (b.oom) {
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving the instance");
        goto done;
    }
    uint64_t plen = b.len - HEADER_LEN;
    uint64_t sum = wf_hash_bytes(b.data + HEADER_LEN, plen);
    for (int i = 0; i < 8; i++) {
        b.data[8 + i] = (char)(uint8_t)(plen >> (8 * i));
        b.data[16 + i] = (char)(uint8_t)(sum >> (8 * i));
    }
    *blob = wf_buf_detach(&b, len);
    if (!*blob)
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory saving the instance");
done:
    wf_buf_fini(&inst);
    wf_buf_fini(&b);
    return rc;
}

/* ---- reading -------------------------------------------------------------------------------- */
typedef struct reader {
    const uint8_t *p;
    size_t left;
    bool bad;
    bool nomem;
    const wfl_definition *def;
} reader;

static bool need(reader *r, size_t n)
{
    if (r->bad || r->left < n) {
        r->bad = true;
        return false;
    }
    return true;
}

static uint8_t get_u8(reader *r)
{
    if (!need(r, 1))
        return 0;
    r->left--;
    return *r->p++;
}

static uint32_t get_u32(reader *r)
{
    if (!need(r, 4))
        return 0;
    uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
                 (uint32_t)r->p[3] << 24;
    r->p += 4;
    r->left -= 4;
    return v;
}

static uint64_t get_u64(reader *r)
{
    uint64_t lo = get_u32(r);
    return lo | (uint64_t)get_u32(r) << 32;
}

/* A string view into the blob (not NUL-terminated). */
static const char *get_str(reader *r, size_t *len)
{
    *len = get_u32(r);
    if (!need(r, *len))
        return "";
    const char *s = (const char *)r->p;
    r->p += *len;
    r->left -= *len;
    return s;
}

static char *get_dup(reader *r)
{
    size_t n;
    const char *s = get_str(r, &n);
    if (r->bad)
        return NULL;
    char *d = wf_strndup(s, n);
    if (!d)
        r->nomem = r->bad = true;
    return d;
}

static const wf_type *find_type(reader *r, const char *name)
{
    const wf_type *t = wf_types_find(r->def->types, name);
    for (size_t i = 0; !t && i < r->def->typelib_count; i++)
        t = wfl_typelib_exception(r->def->typelibs[i].typelib, name);
    if (!t)
        r->bad = true;
    return t;
}

static wf_value get_value(reader *r, unsigned depth);

static wf_value get_list(reader *r, unsigned depth)
{
    wf_value out = wf_null();
    char *tname = get_dup(r);
    const wf_type *t = tname ? find_type(r, tname) : NULL;
    wf_free(tname);
    uint32_t n = get_u32(r);
    if (r->bad || !t || t->kind != WF_K_LIST || n > r->left) {
        r->bad = true;
        return out;
    }
    wf_value *items = wf_calloc(n ? n : 1, sizeof *items);
    if (!items) {
        r->nomem = r->bad = true;
        return out;
    }
    for (uint32_t i = 0; i < n; i++) /* calloc'd zeros are not null values */
        items[i] = wf_null();
    for (uint32_t i = 0; i < n && !r->bad; i++)
        items[i] = get_value(r, depth + 1);
    if (!r->bad && wf_value_list(t, items, n, &out) != WF_OK)
        r->nomem = r->bad = true;
    for (uint32_t i = 0; i < n; i++)
        wf_value_release(&items[i]);
    wf_free(items);
    return out;
}

static wf_value get_record(reader *r, unsigned depth)
{
    wf_value out = wf_null();
    uint32_t n = get_u32(r);
    if (r->bad || n > r->left) {
        r->bad = true;
        return out;
    }
    char **keys = wf_calloc(n ? n : 1, sizeof *keys);
    wf_value *vals = wf_calloc(n ? n : 1, sizeof *vals);
    if (!keys || !vals)
        r->nomem = r->bad = true;
    for (uint32_t i = 0; vals && i < n; i++)
        vals[i] = wf_null();
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        keys[i] = get_dup(r);
        vals[i] = get_value(r, depth + 1);
    }
    if (!r->bad && wf_value_record((const char *const *)keys, vals, n, &out) != WF_OK)
        r->nomem = r->bad = true;
    for (uint32_t i = 0; keys && vals && i < n; i++) {
        wf_free(keys[i]);
        wf_value_release(&vals[i]);
    }
    wf_free(keys);
    wf_free(vals);
    return out;
}

static wf_value get_value(reader *r, unsigned depth)
{
    wf_value v = wf_null();
    uint8_t k = get_u8(r);
    if (r->bad || depth > 64)
        return r->bad = true, v;
    size_t n;
    switch ((wf_kind)k) {
    case WF_K_NULL:
        return v;
    case WF_K_BOOL:
        return wf_bool(get_u8(r) != 0);
    case WF_K_INT32:
        return wf_int32((int32_t)get_u32(r));
    case WF_K_DOUBLE: {
        uint64_t bits = get_u64(r);
        double d;
        memcpy(&d, &bits, 8);
        return wf_double(d);
    }
    case WF_K_STRING: {
        const char *s = get_str(r, &n);
        if (!r->bad && wf_value_string(s, n, &v) != WF_OK)
            r->nomem = r->bad = true;
        return v;
    }
    case WF_K_LIST:
        return get_list(r, depth);
    case WF_K_RECORD:
        return get_record(r, depth);
    case WF_K_EXCEPTION: {
        char *tname = get_dup(r), *msg = get_dup(r);
        const wf_type *t = tname ? find_type(r, tname) : NULL;
        if (!r->bad && (!t || t->kind != WF_K_EXCEPTION))
            r->bad = true;
        if (!r->bad && wf_value_exception(t, msg, &v) != WF_OK)
            r->nomem = r->bad = true;
        wf_free(tname);
        wf_free(msg);
        return v;
    }
    case WF_K_INT64:
    case WF_K_DECIMAL:
    case WF_K_DATETIME:
    case WF_K_TIMESPAN:
    case WF_K_TOKEN: {
        char *tname = get_dup(r);
        const wf_type *t = tname ? find_type(r, tname) : NULL;
        wf_free(tname);
        v.u.i64 = (int64_t)get_u64(r);
        if (!t || t->kind != (wf_kind)k)
            r->bad = true;
        else
            v.type = t;
        return v;
    }
    default:
        r->bad = true;
        return v;
    }
}

/* Refs are resolved once the whole tree exists. */
typedef struct ref {
    uint32_t ctx;
    uint64_t node;
} ref;

typedef struct pending_listener {
    xact *x;
    ref listener;
} pending_listener;

typedef struct restore_ctx {
    wfl_exec *ex;
    const wfl_definition *def;
    pending_listener *pend; /* every restored xact, with its listener ref */
    size_t pend_count, pend_cap;
} restore_ctx;

static ref get_ref(reader *r)
{
    ref x;
    x.ctx = get_u32(r);
    x.node = get_u64(r);
    return x;
}

static wfl_act *resolve(wfl_exec *ex, ref x, bool *bad)
{
    if (x.ctx == NO_CONTEXT)
        return NULL;
    wfl_act *a = wfl_inst_find_act(ex->inst, x.ctx, (size_t)x.node);
    if (!a)
        *bad = true;
    return a;
}

static wf_status load_act(void *ud, wfl_act *act, const void *data, size_t len, wf_error *err)
{
    restore_ctx *rc = ud;
    if (!len)
        return WF_OK;
    reader r = {data, len, false, false, rc->def};
    xact *x = wfl__state(rc->ex, act);
    if (!x)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory restoring the instance");
    x->phase = get_u32(&r);
    x->flags = get_u32(&r);
    x->cursor = (int32_t)get_u32(&r);
    x->aux = (int32_t)get_u32(&r);
    x->count = (int32_t)get_u32(&r);
    x->queue_id = get_u32(&r);
    x->order = get_u64(&r);
    x->exc = get_value(&r, 0);
    x->val = get_value(&r, 0);
    ref l = get_ref(&r);
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
    rc->pend[rc->pend_count++] = (pending_listener){x, l};
    if (r.nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory restoring the instance");
    if (r.bad || r.left)
        return wf_error_set(err, WF_E_CORRUPT, NULL, "corrupt activity state in the blob");
    return WF_OK;
}

static void read_items(reader *r, wfl_exec *ex, wi_queue *q)
{
    uint32_t n = get_u32(r);
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        work_item it = {0};
        it.kind = (wi_kind)get_u8(r);
        it.act = resolve(ex, get_ref(r), &r->bad);
        it.child = resolve(ex, get_ref(r), &r->bad);
        it.arg = get_u32(r);
        if (it.kind > WI_QUEUE || !it.act)
            r->bad = true;
        if (!r->bad && !wfl__wiq_push(q, &it))
            r->nomem = r->bad = true;
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

static void read_queues(reader *r, wfl_exec *ex)
{
    uint32_t n = get_u32(r);
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        uint32_t id = get_u32(r);
        char *name = get_dup(r);
        bool is_timer = get_u8(r) != 0;
        xqueue *q = name && !r->bad ? wfl__queue_create(ex, name, is_timer) : NULL;
        wf_free(name);
        if (!q) {
            r->bad = true;
            return;
        }
        q->id = id;
        uint32_t items = get_u32(r);
        for (uint32_t j = 0; j < items && !r->bad; j++) {
            wf_value v = get_value(r, 0);
            if (!r->bad && !wfl__queue_enqueue(ex, q, &v))
                r->nomem = r->bad = true;
            wf_value_release(&v);
        }
        uint32_t subs = get_u32(r);
        for (uint32_t j = 0; j < subs && !r->bad; j++) {
            wfl_act *a = resolve(ex, get_ref(r), &r->bad);
            if (a && !r->bad && !add_sub(q, a))
                r->nomem = r->bad = true;
        }
    }
    uint32_t t = get_u32(r);
    for (uint32_t i = 0; i < t && !r->bad; i++) {
        int64_t due = (int64_t)get_u64(r);
        uint32_t qid = get_u32(r);
        uint64_t seq = get_u64(r);
        if (!r->bad && !seq)
            r->bad = true;
        else if (!r->bad && !wfl__timer_add(ex, due, qid, seq))
            r->nomem = r->bad = true;
    }
}

static void read_checkpoint(reader *r, wfl_exec *ex)
{
    size_t n;
    const char *cp = get_str(r, &n);
    ex->checkpoint_ctx = get_u32(r);
    ex->checkpoint_node = get_u64(r);
    if (r->bad || !n)
        return;
    ex->checkpoint = wf_malloc(n);
    if (!ex->checkpoint) {
        r->nomem = r->bad = true;
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
    reader h = {p + 4, len - 4, false, false, NULL};
    uint32_t version = get_u32(&h);
    uint64_t plen = get_u64(&h), sum = get_u64(&h);
    if (version != BLOB_VERSION)
        return wf_error_set(err, WF_E_CORRUPT, NULL,
                            "cannot restore the instance: unknown blob version %u", version);
    if (plen != len - HEADER_LEN || wf_hash_bytes(p + HEADER_LEN, plen) != sum)
        return corrupt(err, "the blob is truncated or damaged (checksum mismatch)");
    return WF_OK;
}

/* The executor fields after the instance id; the instance bytes are returned as a view. */
static wf_status read_exec_fields(reader *r, wfl_exec *ex, ref *root, const char **inst,
                                  size_t *inst_len, wf_error *err)
{
    ex->state = (wfl_exec_state)get_u8(r);
    ex->suspended = get_u8(r) != 0;
    ex->persist_pending = get_u8(r) != 0;
    ex->next_order = get_u64(r);
    ex->next_queue_id = get_u32(r);
    ex->exception = get_value(r, 0);
    *root = get_ref(r);
    *inst = get_str(r, inst_len);
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (r->bad || ex->state > WFL_EXEC_SUSPENDED)
        return corrupt(err, "bad executor header");
    return WF_OK;
}

/* Rebuild the activity tree with every xact, then resolve the references into it. */
static wf_status restore_tree(wfl_exec *ex, const char *bytes, size_t len, ref root, wf_error *err)
{
    restore_ctx rx = {ex, ex->def, NULL, 0, 0};
    wfl_inst_hooks hooks = WFL_INST_HOOKS_INIT;
    hooks.load_act = load_act;
    hooks.ud = &rx;
    wfl_inst *inst = NULL;
    wf_status rc = wfl_inst_restore(ex->def, bytes, len, &hooks, &inst, err);
    if (rc != WF_OK) { /* the activities are gone: drop what their xacts hold */
        for (size_t i = 0; i < rx.pend_count; i++) {
            wf_value_release(&rx.pend[i].x->exc);
            wf_value_release(&rx.pend[i].x->val);
        }
        wf_free(rx.pend);
        return rc;
    }
    bool bad = false;
    wfl_exec_attach(ex, inst, NULL);
    ex->root = resolve(ex, root, &bad);
    for (size_t i = 0; i < rx.pend_count; i++)
        if (rx.pend[i].listener.ctx != NO_CONTEXT)
            rx.pend[i].x->listener = resolve(ex, rx.pend[i].listener, &bad);
    wf_free(rx.pend);
    return bad || !ex->root ? corrupt(err, "bad activity reference") : WF_OK;
}

wf_status wfl_exec_restore(const wfl_definition *def, const wfl_exec_opts *opts, const void *blob,
                           size_t len, wfl_exec **out, wf_error *err)
{
    *out = NULL;
    wf_status rc = check_header(blob, len, err);
    if (rc != WF_OK)
        return rc;
    reader r = {(const uint8_t *)blob + HEADER_LEN, len - HEADER_LEN, false, false, def};
    char *id = get_dup(&r);
    wfl_exec_opts o = opts ? *opts : (wfl_exec_opts)WFL_EXEC_OPTS_INIT;
    o.instance_id = id;
    wfl_exec *ex = NULL;
    if (r.bad || (rc = wfl_exec_new(def, &o, &ex, err)) != WF_OK) {
        wf_free(id);
        return r.nomem       ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory")
               : rc != WF_OK ? rc
                             : corrupt(err, "truncated header");
    }
    wf_free(id);
    ex->opts.instance_id = NULL;
    ref root;
    const char *inst_bytes;
    size_t inst_len;
    rc = read_exec_fields(&r, ex, &root, &inst_bytes, &inst_len, err);
    if (rc == WF_OK)
        rc = restore_tree(ex, inst_bytes, inst_len, root, err);
    if (rc == WF_OK) {
        read_items(&r, ex, &ex->atomic);
        read_items(&r, ex, &ex->normal);
        read_queues(&r, ex);
        read_checkpoint(&r, ex);
        if (!r.bad && !r.left && !ex->failed)
            wfl__rebuild_waiting(ex);
        if (r.nomem || ex->failed)
            rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        else if (r.bad || r.left)
            rc = corrupt(err, "bad scheduler or queue data");
    }
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

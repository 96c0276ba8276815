/* wfm_persist.c — saving and restoring a modern instance (wfm_persist.h) and the writer /
 * reader helpers kinds use (wfm_persist.h, "Persistence contract"). Pointers never reach
 * the blob: activity instances are indexes in the saved preorder, nodes their dense index,
 * callbacks (kind, table index), environments references (see env_ref), so the same
 * definition in another process rebuilds the same instance.
 *
 * Layout, version 2 (every number a LEB128 varint, "int" zig-zag, "str" length + bytes):
 *   "WFMS" version
 *   header   hash sha256 path node_count sched_state int:next_timer blocking_bookmarks
 *            (hash: wfm_definition_hash, the store's identifier; sha256: 32 raw bytes,
 *            wfm_definition_sha256, which restoring checks; version 1 has no sha256 and is
 *            checked by hash alone)
 *   kinds    count (ns name)*            -- kinds named by the rest, in first-use order
 *   tree     count (node kind child_count id)*    -- preorder
 *   envs     count (slot_count parent_ref value*)* -- "free" environments (snapshots)
 *   body     flags body_status timer_seq fault(value in_def line col)
 *            args: count (name supplied value)*
 *            exts: count (name section)*
 *            activities: (status flags env_ref on_done on_fault
 *                         venv: count [parent_ref (name value)*]
 *                         denv: present [parent_ref value])*
 *            states: section per activity (empty when it has none)
 *            bookmarks: count (name owner flags callback)*   -- creation order
 *            timers: count (int:due owner callback)*          -- creation order
 *            work: count (kind ai callback value)*            -- queue order
 *            hooks: count (callback data)*
 *   A section is length-prefixed bytes; a callback is 0 or (kind_ref + 1, index). */
#include "wfm_persist.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h> /* qsort, bsearch */
#include <string.h>

#include "../common/wf_codec.h"
#include "../common/wf_jsonw.h"
#include "wfm_sched_int.h"

#define MAGIC_LEN 4

/* ---- the writer ------------------------------------------------------------------------ */

typedef struct addr_ix {
    const void *p;
    uint32_t a, b; /* activity: index; callback: catalogue kind index, table index */
} addr_ix;

struct wfm_persist_writer {
    wf_buf *out; /* where the helpers write now */
    const wfm_ctx *ctx;
    const wfm_catalogue *cat;
    const wfm_ai **order; /* preorder */
    addr_ix *by_addr;     /* activities sorted by address */
    size_t ai_count;
    const wfm__callback_ix *cbs; /* the catalogue's callbacks sorted by pointer (borrowed) */
    size_t cb_count;
    const wfm_kind **kinds; /* the kinds table, first-use order */
    size_t kind_count, kind_cap;
    const wfm_env **envs; /* free environments, first-reference order */
    size_t env_count, env_cap;
    const char *who; /* the kind whose data is being written, for messages */
    wf_error *err;
    wf_status st;
};

static int addr_cmp(const void *a, const void *b)
{
    const addr_ix *x = a, *y = b;
    if (x->p != y->p)
        return (uintptr_t)x->p < (uintptr_t)y->p ? -1 : 1;
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

static int addr_key_cmp(const void *key, const void *elem)
{
    const addr_ix *x = key, *y = elem;
    return x->p == y->p ? 0 : (uintptr_t)x->p < (uintptr_t)y->p ? -1 : 1;
}

static void w_fail(wfm_persist_writer *w, wf_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void w_fail(wfm_persist_writer *w, wf_status code, const char *fmt, ...)
{
    if (w->st != WF_OK)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    w->st = code;
    wf_error_set(w->err, code, NULL, "%s", msg);
}

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = wf_realloc(*arr, n * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = n;
    return true;
}

static const wfm_ai *next_preorder(const wfm_ai *a, const wfm_ai *root)
{
    if (a->first_child)
        return a->first_child;
    for (; a && a != root; a = a->parent)
        if (a->next)
            return a->next;
    return NULL;
}

static const addr_ix *ai_find(const wfm_persist_writer *w, const void *p)
{
    addr_ix key = {p, 0, 0};
    return w->ai_count ? bsearch(&key, w->by_addr, w->ai_count, sizeof key, addr_key_cmp)
                       : NULL;
}

static bool w_collect_tree(wfm_persist_writer *w)
{
    size_t n = 0;
    for (const wfm_ai *a = w->ctx->root; a; a = next_preorder(a, w->ctx->root))
        n++;
    w->ai_count = n;
    if (!n)
        return true;
    w->order = wf_calloc(n, sizeof *w->order);
    w->by_addr = wf_calloc(n, sizeof *w->by_addr);
    if (!w->order || !w->by_addr)
        return false;
    size_t i = 0;
    for (const wfm_ai *a = w->ctx->root; a; a = next_preorder(a, w->ctx->root), i++) {
        w->order[i] = a;
        w->by_addr[i] = (addr_ix){a, (uint32_t)i, 0};
    }
    qsort(w->by_addr, n, sizeof *w->by_addr, addr_cmp);
    return true;
}

static bool w_collect_callbacks(wfm_persist_writer *w)
{
    bool oom = false;
    w->cbs = wfm__catalogue_callbacks(w->cat, &w->cb_count, &oom);
    return !oom;
}

static size_t kind_ref(wfm_persist_writer *w, const wfm_kind *kind)
{
    for (size_t i = 0; i < w->kind_count; i++)
        if (w->kinds[i] == kind)
            return i;
    if (!grow((void **)&w->kinds, &w->kind_cap, w->kind_count + 1, sizeof *w->kinds)) {
        w_fail(w, WF_E_NOMEM, "out of memory");
        return 0;
    }
    w->kinds[w->kind_count] = kind;
    return w->kind_count++;
}

void wfm_persist_write_uint(wfm_persist_writer *w, uint64_t v)
{
    wf_codec_put_uint(w->out, v);
}

void wfm_persist_write_int(wfm_persist_writer *w, int64_t v)
{
    wf_codec_put_int(w->out, v);
}

void wfm_persist_write_bytes(wfm_persist_writer *w, const void *data, size_t len)
{
    wf_codec_put_bytes(w->out, data, len);
}

void wfm_persist_write_str(wfm_persist_writer *w, const char *s)
{
    wf_codec_put_uint(w->out, s ? strlen(s) + 1 : 0);
    if (s)
        wf_buf_add(w->out, s, strlen(s));
}

void wfm_persist_write_value(wfm_persist_writer *w, const wf_value *v)
{
    wf_error e = WF_ERROR_INIT;
    wf_status st = wf_codec_put_value(w->out, v, &e);
    if (st != WF_OK)
        w_fail(w, WF_E_STATE, "%s: %s", w->who ? w->who : "instance", e.message);
}

void wfm_persist_write_ai(wfm_persist_writer *w, const wfm_ai *ai)
{
    const addr_ix *x = ai ? ai_find(w, ai) : NULL;
    if (ai && !x)
        w_fail(w, WF_E_STATE, "%s: an activity reference points outside the instance's tree",
               w->who ? w->who : "instance");
    wf_codec_put_uint(w->out, x ? (uint64_t)x->a + 1 : 0);
}

void wfm_persist_write_node(wfm_persist_writer *w, const wfm_node *node)
{
    wf_codec_put_uint(w->out, node ? (uint64_t)node->index + 1 : 0);
}

void wfm_persist_write_ptr(wfm_persist_writer *w, const void *callback)
{
    if (!callback) {
        wf_codec_put_uint(w->out, 0);
        return;
    }
    /* the first entry for this pointer (it may be listed by several kinds) */
    size_t lo = 0, hi = w->cb_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uintptr_t)w->cbs[mid].fn < (uintptr_t)callback)
            lo = mid + 1;
        else
            hi = mid;
    }
    const wfm__callback_ix *x = lo < w->cb_count && w->cbs[lo].fn == callback ? &w->cbs[lo] : NULL;
    if (!x) {
        w_fail(w, WF_E_STATE,
               "cannot persist: kind '%s' handed the runtime a callback that is not in its "
               "callbacks table",
               w->who ? w->who : "?");
        wf_codec_put_uint(w->out, 0);
        return;
    }
    wf_codec_put_uint(w->out, kind_ref(w, wfm_catalogue_at(w->cat, x->kind)) + 1);
    wf_codec_put_uint(w->out, x->index);
}

/* The node's id for a message ("?" when memory ran out building the ids). */
static const char *msg_id(const wfm_node *node)
{
    const char *id = wfm_node_id(node);
    return id ? id : "?";
}

/* A callback the runtime calls with an activity of kind `holder`: it must be in that kind's
 * own table (the parent's for on_done / on_fault, the owner's for bookmarks and timers). */
static void w_callback(wfm_persist_writer *w, const wfm_ai *holder, const void *fn)
{
    if (!fn) {
        wf_codec_put_uint(w->out, 0);
        return;
    }
    const wfm_kind *kind = holder->node->kind;
    const wfm_kind_spec *spec = kind->spec;
    for (size_t i = 0; i < spec->callback_count; i++) {
        if (spec->callbacks[i] == fn) {
            wf_codec_put_uint(w->out, kind_ref(w, kind) + 1);
            wf_codec_put_uint(w->out, i);
            return;
        }
    }
    w_fail(w, WF_E_STATE,
           "cannot persist: kind '%s' (activity %s) handed the runtime a callback that is not in "
           "its callbacks table",
           spec->name, msg_id(holder->node));
    wf_codec_put_uint(w->out, 0);
}

/* 0 NULL, 1 the root environment, then 2 + 3i (venv of activity i), 3 + 3i (its denv),
 * 4 + 3k (free environment k). */
static uint64_t env_ref(wfm_persist_writer *w, const wfm_env *env)
{
    if (!env)
        return 0;
    if (env == &w->ctx->root_env)
        return 1;
    for (size_t lo = 0, hi = w->ai_count; lo < hi;) { /* the activity that contains env */
        size_t mid = (lo + hi) / 2;
        const wfm_ai *a = w->by_addr[mid].p;
        if ((const char *)env < (const char *)a) {
            hi = mid;
        } else if ((const char *)env >= (const char *)(a + 1)) {
            lo = mid + 1;
        } else {
            uint64_t i = w->by_addr[mid].a;
            if (env == &a->venv)
                return 2 + 3 * i;
            if (env == &a->denv)
                return 3 + 3 * i;
            break;
        }
    }
    for (size_t k = 0; k < w->env_count; k++)
        if (w->envs[k] == env)
            return 4 + 3 * (uint64_t)k;
    if (!grow((void **)&w->envs, &w->env_cap, w->env_count + 1, sizeof *w->envs)) {
        w_fail(w, WF_E_NOMEM, "out of memory");
        return 0;
    }
    w->envs[w->env_count] = env;
    return 4 + 3 * (uint64_t)w->env_count++;
}

void wfm_persist_write_env(wfm_persist_writer *w, const wfm_env *env)
{
    wf_codec_put_uint(w->out, env_ref(w, env));
}

void wfm_persist_write_fail(wfm_persist_writer *w, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    w_fail(w, WF_E_STATE, "cannot persist (%s): %s", w->who ? w->who : "instance", msg);
}

/* Write what `fn` writes as a length-prefixed section of w->out. */
typedef wf_status (*section_fn)(wfm_persist_writer *w, const void *a, const void *b);

static void w_section(wfm_persist_writer *w, section_fn fn, const void *a, const void *b)
{
    wf_buf tmp, *saved = w->out;
    wf_buf_init(&tmp);
    w->out = &tmp;
    wf_status st = fn(w, a, b);
    w->out = saved;
    if (st != WF_OK)
        w_fail(w, st, "cannot persist %s: %s", w->who ? w->who : "instance", wf_status_message(st));
    if (tmp.oom)
        w_fail(w, WF_E_NOMEM, "out of memory");
    wf_codec_put_bytes(saved, tmp.data, tmp.len);
    wf_buf_fini(&tmp);
}

/* ---- saving ---------------------------------------------------------------------------- */

static bool no_persist_zone(wfm_persist_writer *w)
{
    for (size_t i = 0; i < w->ai_count; i++) {
        const wfm_ai *a = w->order[i];
        if ((a->spec->flags & WFM_KIND_NO_PERSIST) && a->status == WFM_EXECUTING) {
            w_fail(w, WF_E_STATE,
                   "cannot persist while %s '%s' (activity %s) is executing: it is a "
                   "no-persist zone",
                   a->spec->name, wfm_node_display_name(a->node), msg_id(a->node));
            return true;
        }
    }
    return false;
}

static void w_tree(wfm_persist_writer *w)
{
    wf_codec_put_uint(w->out, w->ai_count);
    for (size_t i = 0; i < w->ai_count; i++) {
        const wfm_ai *a = w->order[i];
        wf_codec_put_uint(w->out, a->node->index);
        wf_codec_put_uint(w->out, kind_ref(w, a->node->kind));
        wf_codec_put_uint(w->out, a->child_count);
        const char *id = wfm_node_id(a->node);
        if (!id) {
            w_fail(w, WF_E_NOMEM, "out of memory");
            return;
        }
        wf_codec_put_str(w->out, id);
    }
}

static void w_slots(wfm_persist_writer *w, const wf_value *slots, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        wfm_persist_write_value(w, &slots[i]);
}

/* The free environments, including those first met as parents of others. */
static void w_free_envs(wfm_persist_writer *w)
{
    wf_buf tmp, *saved = w->out;
    wf_buf_init(&tmp);
    w->out = &tmp;
    for (size_t k = 0; k < w->env_count; k++) {
        const wfm_env *env = w->envs[k];
        wf_codec_put_uint(w->out, env->count);
        wfm_persist_write_env(w, env->parent);
        w_slots(w, env->slots, env->count);
    }
    w->out = saved;
    if (tmp.oom)
        w_fail(w, WF_E_NOMEM, "out of memory");
    wf_codec_put_uint(w->out, w->env_count);
    wf_buf_add(w->out, tmp.data, tmp.len);
    wf_buf_fini(&tmp);
}

static const wfm_ext_spec *ext_spec_of(const wfm_catalogue *cat, const void *key)
{
    size_t n = wfm_catalogue_count(cat);
    for (size_t k = 0; k < n; k++) {
        const wfm_kind_spec *spec = wfm_kind_spec_of(wfm_catalogue_at(cat, k));
        for (size_t i = 0; i < spec->ext_count; i++)
            if (spec->exts[i] == key)
                return spec->exts[i];
    }
    return NULL;
}

static const wfm_ext_spec *ext_spec_named(const wfm_catalogue *cat, const char *name)
{
    size_t n = wfm_catalogue_count(cat);
    for (size_t k = 0; k < n; k++) {
        const wfm_kind_spec *spec = wfm_kind_spec_of(wfm_catalogue_at(cat, k));
        for (size_t i = 0; i < spec->ext_count; i++)
            if (spec->exts[i] && strcmp(spec->exts[i]->name, name) == 0)
                return spec->exts[i];
    }
    return NULL;
}

static wf_status save_ext(wfm_persist_writer *w, const void *spec, const void *state)
{
    return ((const wfm_ext_spec *)spec)->save(state, w);
}

static void w_exts(wfm_persist_writer *w)
{
    const wfm_ctx *ctx = w->ctx;
    wf_codec_put_uint(w->out, ctx->ext_count);
    for (size_t i = 0; i < ctx->ext_count; i++) {
        const wfm_ext_spec *spec = ext_spec_of(w->cat, ctx->exts[i].key);
        if (!spec || !spec->save || !spec->restore) {
            w_fail(w, WF_E_STATE,
                   "cannot persist: an extension state has no persistence descriptor "
                   "(wfm_ext_spec listed in a kind's exts)");
            return;
        }
        wf_codec_put_str(w->out, spec->name);
        w->who = spec->name;
        w_section(w, save_ext, spec, ctx->exts[i].state);
        w->who = NULL;
    }
}

static void w_activity(wfm_persist_writer *w, const wfm_ai *a)
{
    const wfm_node *node = a->node;
    wf_codec_put_uint(w->out, a->status);
    wf_codec_put_uint(w->out, a->flags);
    wfm_persist_write_env(w, a->env);
    if (a->parent == w->ctx->root && w->ctx->finishing) {
        /* finish-hook work under the root: the hook's kind, whichever that is */
        w->who = "finish hook";
        wfm_persist_write_ptr(w, (const void *)a->on_done);
        wfm_persist_write_ptr(w, (const void *)a->on_fault);
        w->who = NULL;
    } else if (a->parent) {
        w_callback(w, a->parent, (const void *)a->on_done);
        w_callback(w, a->parent, (const void *)a->on_fault);
    } else {
        wf_codec_put_uint(w->out, 0);
        wf_codec_put_uint(w->out, 0);
    }
    uint32_t vcount = a->venv.slots ? a->venv.count : 0;
    wf_codec_put_uint(w->out, vcount);
    if (vcount) {
        wfm_persist_write_env(w, a->venv.parent);
        for (uint32_t i = 0; i < vcount; i++) {
            wf_codec_put_str(w->out, i < node->var_count ? node->vars[i].name : "");
            wfm_persist_write_value(w, &a->venv.slots[i]);
        }
    }
    bool denv = a->denv.slots && a->denv.count == 1;
    wf_codec_put_uint(w->out, denv);
    if (denv) {
        wfm_persist_write_env(w, a->denv.parent);
        wfm_persist_write_value(w, &a->denv.slots[0]);
    }
}

static wf_status save_state(wfm_persist_writer *w, const void *ai, const void *unused)
{
    (void)unused;
    const wfm_ai *a = ai;
    if (!a->state || !a->spec->state_size || !(a->flags & WFM__AI_STARTED))
        return WF_OK; /* not started yet: the state is still zeroed */
    if (a->spec->flags & WFM_KIND_STATE_PLAIN) {
        wf_buf_add(w->out, a->state, a->spec->state_size);
        return WF_OK;
    }
    if (!a->spec->save) {
        wfm_persist_write_fail(w, "the kind has per-instance state but no save function");
        return WF_OK;
    }
    return a->spec->save(a, w);
}

static int timer_seq_cmp(const void *a, const void *b)
{
    const wfm__timer *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void w_waits(wfm_persist_writer *w)
{
    const wfm_ctx *ctx = w->ctx;
    size_t n = 0;
    for (const wfm__bookmark *bm = ctx->bm_first; bm; bm = bm->all_next)
        n++;
    wf_codec_put_uint(w->out, n);
    for (const wfm__bookmark *bm = ctx->bm_first; bm; bm = bm->all_next) {
        wf_codec_put_str(w->out, bm->name);
        wfm_persist_write_ai(w, bm->owner);
        wf_codec_put_uint(w->out, bm->flags);
        w_callback(w, bm->owner, (const void *)bm->on_resume);
    }
    /* timers in creation order (the heap's order is an accident of history) */
    wf_codec_put_uint(w->out, ctx->timer_count);
    if (!ctx->timer_count)
        return;
    wfm__timer *sorted = wf_malloc(ctx->timer_count * sizeof *sorted);
    if (!sorted) {
        w_fail(w, WF_E_NOMEM, "out of memory");
        return;
    }
    memcpy(sorted, ctx->timers, ctx->timer_count * sizeof *sorted);
    qsort(sorted, ctx->timer_count, sizeof *sorted, timer_seq_cmp);
    for (size_t i = 0; i < ctx->timer_count; i++) {
        wf_codec_put_int(w->out, sorted[i].due_us);
        wfm_persist_write_ai(w, sorted[i].owner);
        w_callback(w, sorted[i].owner, (const void *)sorted[i].on_fire);
    }
    wf_free(sorted);
}

static void w_queue(wfm_persist_writer *w)
{
    const wfm_ctx *ctx = w->ctx;
    size_t live = 0;
    for (size_t i = 0; i < ctx->count; i++) {
        const wfm__wi *wi = &ctx->ring[(ctx->head + i) & (ctx->cap - 1)];
        live += !wi->ai || wi->ai->serial == wi->serial;
    }
    wf_codec_put_uint(w->out, live);
    for (size_t i = 0; i < ctx->count; i++) {
        const wfm__wi *wi = &ctx->ring[(ctx->head + i) & (ctx->cap - 1)];
        if (wi->ai && wi->ai->serial != wi->serial)
            continue; /* its activity is gone: the scheduler would drop it */
        wf_codec_put_uint(w->out, wi->kind);
        wfm_persist_write_ai(w, wi->ai);
        if (wi->ai)
            w_callback(w, wi->ai, (const void *)wi->fn);
        else
            wfm_persist_write_ptr(w, (const void *)wi->fn);
        wfm_persist_write_value(w, &wi->value);
    }
    wf_codec_put_uint(w->out, ctx->hook_count);
    for (size_t i = 0; i < ctx->hook_count; i++) {
        w->who = "finish hook";
        wfm_persist_write_ptr(w, (const void *)ctx->hooks[i].fn);
        wfm_persist_write_ptr(w, ctx->hooks[i].data);
        w->who = NULL;
    }
}

static void w_body(wfm_persist_writer *w)
{
    const wfm_ctx *ctx = w->ctx;
    const wfm_definition *def = ctx->def;
    wf_codec_put_uint(w->out, (ctx->faulted ? 1u : 0u) | (ctx->finishing ? 2u : 0u) |
                                  (ctx->terminating ? 4u : 0u));
    wf_codec_put_uint(w->out, ctx->body_status);
    wf_codec_put_uint(w->out, ctx->next_timer_seq);
    wfm_persist_write_value(w, &ctx->fault);
    bool in_def = ctx->fault_loc.file && strcmp(ctx->fault_loc.file, def->path) == 0;
    wf_codec_put_uint(w->out, in_def);
    wf_codec_put_uint(w->out, ctx->fault_loc.line);
    wf_codec_put_uint(w->out, ctx->fault_loc.col);
    wf_codec_put_uint(w->out, def->arg_count);
    for (uint32_t i = 0; i < def->arg_count; i++) {
        wf_codec_put_str(w->out, def->args[i].name);
        wf_codec_put_uint(w->out, ctx->supplied[i]);
        wfm_persist_write_value(w, &ctx->root_env.slots[i]);
    }
    w_exts(w);
    for (size_t i = 0; i < w->ai_count && w->st == WF_OK; i++)
        w_activity(w, w->order[i]);
    for (size_t i = 0; i < w->ai_count && w->st == WF_OK; i++) {
        w->who = w->order[i]->spec->name;
        w_section(w, save_state, w->order[i], NULL);
        w->who = NULL;
    }
    w_waits(w);
    w_queue(w);
}

static void w_header(wfm_persist_writer *w, wf_buf *out)
{
    const wfm_ctx *ctx = w->ctx;
    wf_buf_add(out, WFM_STATE_MAGIC, MAGIC_LEN);
    wf_codec_put_uint(out, WFM_STATE_VERSION);
    wf_codec_put_uint(out, ctx->def->hash);
    wf_buf_add(out, ctx->def->sha256, sizeof ctx->def->sha256);
    wf_codec_put_str(out, ctx->def->path);
    wf_codec_put_uint(out, ctx->def->node_count);
    wf_codec_put_uint(out, ctx->state);
    wf_codec_put_int(out, wfm__sched_next_timer(ctx));
    wf_codec_put_uint(out, ctx->blocking_bookmarks);
    wf_codec_put_uint(out, w->kind_count);
    for (size_t i = 0; i < w->kind_count; i++) {
        wf_codec_put_str(out, w->kinds[i]->ns);
        wf_codec_put_str(out, w->kinds[i]->spec->name);
    }
}

static wf_status save_ctx(const wfm_ctx *ctx, wf_buf *out, wf_error *err)
{
    wfm_persist_writer w = {0};
    w.ctx = ctx;
    w.cat = ctx->def->catalogue;
    w.err = err;
    wf_buf tree, body, envs;
    wf_buf_init(&tree);
    wf_buf_init(&body);
    wf_buf_init(&envs);
    if (!w_collect_tree(&w) || !w_collect_callbacks(&w))
        w_fail(&w, WF_E_NOMEM, "out of memory");
    if (w.st == WF_OK && !no_persist_zone(&w)) {
        w.out = &tree;
        w_tree(&w);
        w.out = &body;
        w_body(&w);
        w.out = &envs;
        w_free_envs(&w);
    }
    if (w.st == WF_OK && (tree.oom || body.oom || envs.oom))
        w_fail(&w, WF_E_NOMEM, "out of memory");
    if (w.st == WF_OK) {
        size_t mark = out->len;
        w_header(&w, out);
        wf_buf_add(out, tree.data, tree.len);
        wf_buf_add(out, envs.data, envs.len);
        wf_buf_add(out, body.data, body.len);
        if (out->oom) {
            out->len = mark; /* the buffer keeps its old contents */
            out->data[mark] = '\0';
            out->oom = false;
            w_fail(&w, WF_E_NOMEM, "out of memory");
        }
    }
    wf_buf_fini(&tree);
    wf_buf_fini(&body);
    wf_buf_fini(&envs);
    wf_free(w.order);
    wf_free(w.by_addr);
    wf_free(w.kinds);
    wf_free(w.envs);
    return w.st;
}

wf_status wfm_instance_save(wfm_instance *inst, wf_buf *out, wf_error *err)
{
    wfm_ctx *ctx = wfm__instance_hold(inst);
    wf_status st = save_ctx(ctx, out, err);
    wfm__instance_unhold(inst);
    return st;
}

wf_status wfm_instance_save_held(wfm_instance *inst, wf_buf *out, wf_error *err)
{
    return save_ctx(wfm__instance_ctx(inst), out, err);
}

void *wfm_ctx_ext_get(wfm_ctx *ctx, const wfm_ext_spec *spec)
{
    return wfm_ctx_ext(ctx, spec, spec->size, spec->fini);
}

/* ---- the reader ------------------------------------------------------------------------ */

typedef struct free_env {
    wfm_env *env;
    bool taken;
} free_env;

struct wfm_persist_reader {
    wf_reader in;
    wfm_ctx *ctx;
    const wfm_definition *def;
    const wfm_kind **kinds;
    size_t kind_count;
    wfm_ai **ais; /* preorder */
    size_t ai_count;
    free_env *envs;
    size_t env_count;
    bool nomem;
};

static bool r_ok(const wfm_persist_reader *r)
{
    return !r->in.bad && !r->nomem;
}

static void r_fail(wfm_persist_reader *r, const char *why)
{
    wf_reader_fail(&r->in, why);
}

void wfm_persist_read_fail(wfm_persist_reader *r, const char *fmt, ...)
{
    char msg[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r_fail(r, msg);
}

bool wfm_persist_read_ok(const wfm_persist_reader *r)
{
    return r_ok(r);
}

wfm_ctx *wfm_persist_reader_ctx(wfm_persist_reader *r)
{
    return r->ctx;
}

uint64_t wfm_persist_read_uint(wfm_persist_reader *r)
{
    return wf_codec_get_uint(&r->in);
}

int64_t wfm_persist_read_int(wfm_persist_reader *r)
{
    return wf_codec_get_int(&r->in);
}

const void *wfm_persist_read_bytes(wfm_persist_reader *r, size_t *len)
{
    return wf_codec_get_bytes(&r->in, len);
}

char *wfm_persist_read_str(wfm_persist_reader *r)
{
    uint64_t n = wf_codec_get_uint(&r->in);
    if (!n || !r_ok(r))
        return NULL;
    if (n - 1 > wf_reader_left(&r->in)) {
        r_fail(r, "a string runs past the end of the data");
        return NULL;
    }
    const char *s = wf_codec_get_raw(&r->in, (size_t)(n - 1));
    if (!s || memchr(s, '\0', (size_t)(n - 1))) {
        r_fail(r, "bad string");
        return NULL;
    }
    char *copy = wf_strndup(s, (size_t)(n - 1));
    if (!copy)
        r->nomem = true;
    return copy;
}

wf_value wfm_persist_read_value(wfm_persist_reader *r)
{
    wf_value v = wf_null();
    if (!r_ok(r))
        return v;
    wf_error e = WF_ERROR_INIT;
    wf_status st = wf_codec_get_value(&r->in, &v, &e);
    if (st == WF_E_NOMEM)
        r->nomem = true;
    return v;
}

wfm_ai *wfm_persist_read_ai(wfm_persist_reader *r)
{
    uint64_t i = wf_codec_get_uint(&r->in);
    if (!i || !r_ok(r))
        return NULL;
    if (i > r->ai_count) {
        r_fail(r, "an activity reference is out of range");
        return NULL;
    }
    return r->ais[i - 1];
}

const wfm_node *wfm_persist_read_node(wfm_persist_reader *r)
{
    uint64_t i = wf_codec_get_uint(&r->in);
    if (!i || !r_ok(r))
        return NULL;
    if (i > r->def->node_count) {
        r_fail(r, "a node reference is out of range");
        return NULL;
    }
    return r->def->nodes[i - 1];
}

const void *wfm_persist_read_ptr(wfm_persist_reader *r)
{
    uint64_t k = wf_codec_get_uint(&r->in);
    if (!k || !r_ok(r))
        return NULL;
    uint64_t i = wf_codec_get_uint(&r->in);
    if (!r_ok(r))
        return NULL;
    const wfm_kind_spec *spec = k <= r->kind_count ? r->kinds[k - 1]->spec : NULL;
    if (!spec || i >= spec->callback_count || !spec->callbacks[i]) {
        r_fail(r, "a callback reference is out of range");
        return NULL;
    }
    return spec->callbacks[i];
}

static wfm_env *env_at(wfm_persist_reader *r, uint64_t ref)
{
    if (ref == 0)
        return NULL;
    if (ref == 1)
        return &r->ctx->root_env;
    uint64_t x = ref - 2, i = x / 3;
    if (x % 3 == 2) {
        if (i < r->env_count)
            return r->envs[i].env;
    } else if (i < r->ai_count) {
        return x % 3 == 0 ? &r->ais[i]->venv : &r->ais[i]->denv;
    }
    r_fail(r, "an environment reference is out of range");
    return NULL;
}

/* Mark a free environment and its ancestors taken: the chain must be free environments up
 * to the root environment (an owner frees the links and stops at the root). */
static size_t free_env_index(const wfm_persist_reader *r, const wfm_env *env)
{
    size_t k = 0;
    while (k < r->env_count && r->envs[k].env != env)
        k++;
    return k;
}

static void env_take(wfm_persist_reader *r, wfm_env *env)
{
    /* check the whole chain first, so that a failure leaves nothing half owned */
    size_t steps = 0;
    for (const wfm_env *e = env; e != &r->ctx->root_env; e = e->parent, steps++) {
        size_t k = e ? free_env_index(r, e) : r->env_count;
        if (k == r->env_count || steps > r->env_count) {
            r_fail(r, "an owned environment chain does not end at the root environment");
            return;
        }
        if (r->envs[k].taken) {
            r_fail(r, "an environment is owned twice");
            return;
        }
    }
    for (wfm_env *e = env; e != &r->ctx->root_env; e = e->parent)
        r->envs[free_env_index(r, e)].taken = true;
}

wfm_env *wfm_persist_read_env(wfm_persist_reader *r, bool take)
{
    uint64_t ref = wf_codec_get_uint(&r->in);
    wfm_env *env = r_ok(r) ? env_at(r, ref) : NULL;
    if (env && take)
        env_take(r, env);
    return r_ok(r) ? env : NULL;
}

/* Read `count` values into slots (already null). */
static void r_slots(wfm_persist_reader *r, wf_value *slots, uint32_t count)
{
    for (uint32_t i = 0; i < count && r_ok(r); i++)
        slots[i] = wfm_persist_read_value(r);
}

static void r_free_envs(wfm_persist_reader *r)
{
    uint64_t n = wf_codec_get_uint(&r->in);
    if (!r_ok(r) || n > wf_reader_left(&r->in) / 2) {
        r_fail(r, "bad environment count");
        return;
    }
    if (!n)
        return;
    if (!(r->envs = wf_calloc((size_t)n, sizeof *r->envs))) {
        r->nomem = true;
        return;
    }
    for (; r->env_count < n; r->env_count++)
        if (!(r->envs[r->env_count].env = wf_calloc(1, sizeof(wfm_env)))) {
            r->nomem = true;
            return;
        }
    for (size_t k = 0; k < n && r_ok(r); k++) {
        wfm_env *env = r->envs[k].env;
        uint64_t count = wf_codec_get_uint(&r->in);
        if (!r_ok(r) || count > wf_reader_left(&r->in) || count > UINT32_MAX) {
            r_fail(r, "bad environment size");
            return;
        }
        env->parent = env_at(r, wf_codec_get_uint(&r->in));
        if (r_ok(r) && (!env->parent || env->parent == env))
            r_fail(r, "a free environment has no parent");
        if (count && r_ok(r)) {
            if (!(env->slots = wf_calloc((size_t)count, sizeof(wf_value)))) {
                r->nomem = true;
                return;
            }
            env->count = (uint32_t)count;
            for (uint32_t i = 0; i < env->count; i++)
                env->slots[i] = wf_null();
            r_slots(r, env->slots, env->count);
        }
    }
}

/* Free the environments nobody took (on success every one must have been taken). */
static void r_free_envs_fini(wfm_persist_reader *r)
{
    for (size_t k = 0; k < r->env_count; k++) {
        wfm_env *env = r->envs[k].env;
        if (!env || r->envs[k].taken)
            continue;
        for (uint32_t i = 0; i < env->count; i++)
            wf_value_release(&env->slots[i]);
        wf_free(env->slots);
        wf_free(env);
    }
    wf_free(r->envs);
    r->envs = NULL;
    r->env_count = 0;
}

/* Run `fn` on the next length-prefixed section, which it must read to its end exactly. */
static void r_section(wfm_persist_reader *r, const char *what,
                      wf_status (*fn)(wfm_persist_reader *r, void *a, const void *b), void *a,
                      const void *b)
{
    size_t len;
    const unsigned char *p = wf_codec_get_bytes(&r->in, &len);
    if (!p)
        return;
    const unsigned char *end = r->in.end;
    r->in.p = p;
    r->in.end = p + len;
    wf_status st = fn(r, a, b);
    if (st == WF_E_NOMEM)
        r->nomem = true;
    else if (st != WF_OK || (r_ok(r) && r->in.p != r->in.end)) {
        char why[160];
        snprintf(why, sizeof why, "the state of %s does not read back", what);
        r_fail(r, why);
    }
    if (r->in.bad)
        return; /* sticky: the reader stays at its end */
    r->in.p = p + len;
    r->in.end = end;
}

/* ---- restoring ------------------------------------------------------------------------- */

typedef struct header {
    uint64_t version, hash, node_count, state, bookmarks;
    int64_t next_timer;
    bool has_sha256; /* version >= 2 */
    unsigned char sha256[32];
} header;

static wf_status corrupt_error(wfm_persist_reader *r, wf_error *err)
{
    if (r->nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return wf_error_set(err, WF_E_CORRUPT, NULL, "corrupt instance state: %s",
                        r->in.why[0] ? r->in.why : "bad data");
}

static wf_status r_header(wf_reader *in, header *h, char **path, wf_error *err)
{
    const void *magic = wf_codec_get_raw(in, MAGIC_LEN);
    if (!magic || memcmp(magic, WFM_STATE_MAGIC, MAGIC_LEN) != 0)
        return wf_error_set(err, WF_E_CORRUPT, NULL,
                            "not a saved modern instance state (bad magic)");
    h->version = wf_codec_get_uint(in);
    if (in->bad || h->version < 1 || h->version > WFM_STATE_VERSION)
        return wf_error_set(err, WF_E_CORRUPT, NULL,
                            "unknown instance state version %llu (this build reads 1 to %u)",
                            (unsigned long long)h->version, WFM_STATE_VERSION);
    h->hash = wf_codec_get_uint(in);
    h->has_sha256 = h->version >= 2;
    const void *digest = h->has_sha256 ? wf_codec_get_raw(in, sizeof h->sha256) : NULL;
    if (h->has_sha256 && !digest)
        return wf_error_set(err, WF_E_CORRUPT, NULL, "corrupt instance state: bad header");
    if (digest)
        memcpy(h->sha256, digest, sizeof h->sha256);
    bool nomem = false;
    char *p = wf_codec_get_str(in, &nomem);
    if (nomem)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    h->node_count = wf_codec_get_uint(in);
    h->state = wf_codec_get_uint(in);
    h->next_timer = wf_codec_get_int(in);
    h->bookmarks = wf_codec_get_uint(in);
    if (in->bad || h->state > WFM__SCHED_TERMINATED) {
        wf_free(p);
        return wf_error_set(err, WF_E_CORRUPT, NULL, "corrupt instance state: bad header");
    }
    if (path)
        *path = p;
    else
        wf_free(p);
    return WF_OK;
}

static void r_kinds(wfm_persist_reader *r)
{
    uint64_t n = wf_codec_get_uint(&r->in);
    if (!r_ok(r) || n > wf_reader_left(&r->in) / 2) {
        r_fail(r, "bad kind count");
        return;
    }
    if (n && !(r->kinds = wf_calloc((size_t)n, sizeof *r->kinds))) {
        r->nomem = true;
        return;
    }
    for (; r->kind_count < n && r_ok(r); r->kind_count++) {
        bool nomem = false;
        char *ns = wf_codec_get_str(&r->in, &nomem);
        char *name = wf_codec_get_str(&r->in, &nomem);
        const wfm_kind *k = ns && name ? wfm_catalogue_find(r->def->catalogue, ns, name) : NULL;
        if (nomem) {
            r->nomem = true;
        } else if (!k && ns && name) {
            char why[160];
            snprintf(why, sizeof why, "unknown activity kind '%.40s' (%.60s)", name, ns);
            r_fail(r, why);
        } else if (!k) {
            r_fail(r, "bad kind name");
        }
        r->kinds[r->kind_count] = k;
        wf_free(ns);
        wf_free(name);
    }
}

/* The tree: preorder with child counts; parents come from a stack of open slots. */
static void r_tree(wfm_persist_reader *r)
{
    uint64_t n = wf_codec_get_uint(&r->in);
    if (!r_ok(r) || n > wf_reader_left(&r->in) / 4) {
        r_fail(r, "bad activity count");
        return;
    }
    if (!n)
        return;
    uint64_t *pending = wf_calloc((size_t)n, sizeof *pending); /* children still to come */
    wfm_ai **stack = wf_calloc((size_t)n, sizeof *stack);
    if (!(r->ais = wf_calloc((size_t)n, sizeof *r->ais)) || !pending || !stack)
        r->nomem = true;
    size_t depth = 0;
    for (size_t i = 0; i < n && r_ok(r); i++) {
        uint64_t node_ix = wf_codec_get_uint(&r->in), kind = wf_codec_get_uint(&r->in);
        uint64_t children = wf_codec_get_uint(&r->in);
        size_t idlen;
        wf_codec_get_bytes(&r->in, &idlen);
        if (!r_ok(r))
            break;
        if (node_ix >= r->def->node_count || kind >= r->kind_count ||
            r->def->nodes[node_ix]->kind != r->kinds[kind] || children > n - 1 - i ||
            !r->kinds[kind]->is_activity) {
            r_fail(r, "an activity does not match the definition");
            break;
        }
        while (depth && pending[depth - 1] == 0)
            depth--;
        if (i > 0 && depth == 0) {
            r_fail(r, "the activity tree has more than one root");
            break;
        }
        wfm_ai *parent = depth ? stack[depth - 1] : NULL;
        if (parent)
            pending[depth - 1]--;
        wfm_ai *ai = wfm__sched_ai_restore(r->ctx, r->def->nodes[node_ix], parent);
        if (!ai) {
            r->nomem = true;
            break;
        }
        if (!parent)
            r->ctx->root = ai;
        r->ais[r->ai_count++] = ai;
        stack[depth] = ai;
        pending[depth++] = children;
    }
    for (size_t d = 0; d < depth && r_ok(r); d++)
        if (pending[d])
            r_fail(r, "the activity tree is incomplete");
    wf_free(pending);
    wf_free(stack);
}

static wf_status restore_ext(wfm_persist_reader *r, void *spec, const void *unused)
{
    (void)unused;
    const wfm_ext_spec *es = spec;
    void *state = wfm_ctx_ext_get(r->ctx, es);
    if (!state)
        return WF_E_NOMEM;
    wf_status st = es->restore(state, r);
    return st != WF_OK ? st : r->nomem ? WF_E_NOMEM : WF_OK;
}

static void r_exts(wfm_persist_reader *r)
{
    uint64_t n = wf_codec_get_uint(&r->in);
    if (r_ok(r) && n > wf_reader_left(&r->in))
        r_fail(r, "bad extension count");
    for (uint64_t i = 0; i < n && r_ok(r); i++) {
        bool nomem = false;
        char *name = wf_codec_get_str(&r->in, &nomem);
        const wfm_ext_spec *spec = name ? ext_spec_named(r->def->catalogue, name) : NULL;
        if (nomem) {
            r->nomem = true;
        } else if (name && (!spec || !spec->restore)) {
            char why[160];
            snprintf(why, sizeof why, "unknown extension '%.60s'", name);
            r_fail(r, why);
        } else if (spec) {
            r_section(r, spec->name, restore_ext, (void *)spec, NULL);
        }
        wf_free(name);
    }
}

static void r_root_env(wfm_persist_reader *r)
{
    wfm_ctx *ctx = r->ctx;
    const wfm_definition *def = r->def;
    uint64_t n = wf_codec_get_uint(&r->in);
    if (r_ok(r) && n != def->arg_count)
        r_fail(r, "the arguments do not match the definition");
    for (uint32_t i = 0; i < def->arg_count && r_ok(r); i++) {
        size_t len;
        const char *name = wf_codec_get_bytes(&r->in, &len);
        uint64_t supplied = wf_codec_get_uint(&r->in);
        if (!r_ok(r))
            return;
        if (len != strlen(def->args[i].name) || memcmp(name, def->args[i].name, len) != 0 ||
            supplied > 1) {
            r_fail(r, "the arguments do not match the definition");
            return;
        }
        wf_value v = wfm_persist_read_value(r);
        wf_value_release(&ctx->root_env.slots[i]);
        ctx->root_env.slots[i] = v;
        ctx->supplied[i] = supplied == 1;
    }
}

static void r_scalars(wfm_persist_reader *r)
{
    wfm_ctx *ctx = r->ctx;
    uint64_t flags = wf_codec_get_uint(&r->in), body = wf_codec_get_uint(&r->in);
    ctx->next_timer_seq = wf_codec_get_uint(&r->in);
    wf_value fault = wfm_persist_read_value(r);
    uint64_t in_def = wf_codec_get_uint(&r->in), line = wf_codec_get_uint(&r->in);
    uint64_t col = wf_codec_get_uint(&r->in);
    wf_value_release(&ctx->fault);
    ctx->fault = fault;
    if (r_ok(r) && (flags > 7 || body > WFM_FAULTED || in_def > 1 || line > UINT32_MAX ||
                    col > UINT32_MAX))
        r_fail(r, "bad instance flags");
    ctx->faulted = flags & 1;
    ctx->finishing = flags & 2;
    ctx->terminating = flags & 4;
    ctx->body_status = (wfm_status)body;
    ctx->fault_loc.file = in_def ? r->def->path : NULL;
    ctx->fault_loc.line = (unsigned)line;
    ctx->fault_loc.col = (unsigned)col;
}

/* Environment `count` slots plus their parent (venv). */
static void r_own_env(wfm_persist_reader *r, wfm_env *env, uint32_t count)
{
    env->parent = env_at(r, wf_codec_get_uint(&r->in));
    if (!r_ok(r))
        return;
    if (!(env->slots = wfm__sched_slots_alloc(r->ctx, count))) {
        r->nomem = true;
        return;
    }
    env->count = count;
}

static void r_activity(wfm_persist_reader *r, wfm_ai *ai)
{
    uint64_t status = wf_codec_get_uint(&r->in), flags = wf_codec_get_uint(&r->in);
    wfm_env *env = env_at(r, wf_codec_get_uint(&r->in));
    const void *done = wfm_persist_read_ptr(r), *fault = wfm_persist_read_ptr(r);
    if (!r_ok(r))
        return;
    if (status > WFM_FAULTED || flags > 0x7f || (ai->parent && !done)) {
        r_fail(r, "bad activity status");
        return;
    }
    ai->status = (uint8_t)status;
    ai->flags = (uint8_t)flags;
    ai->env = env;
    ai->on_done = (wfm_done_fn)done;
    ai->on_fault = (wfm_fault_fn)fault;
    uint64_t vcount = wf_codec_get_uint(&r->in);
    if (r_ok(r) && vcount && vcount != ai->node->var_count) {
        r_fail(r, "an activity's variables do not match the definition");
        return;
    }
    if (vcount) {
        r_own_env(r, &ai->venv, (uint32_t)vcount);
        for (uint32_t i = 0; i < vcount && r_ok(r); i++) {
            size_t len;
            wf_codec_get_bytes(&r->in, &len); /* the name, for inspect */
            ai->venv.slots[i] = wfm_persist_read_value(r);
        }
    }
    uint64_t denv = wf_codec_get_uint(&r->in);
    if (r_ok(r) && denv > 1)
        r_fail(r, "bad delegate environment");
    if (denv && r_ok(r)) {
        ai->denv.parent = env_at(r, wf_codec_get_uint(&r->in));
        if (r_ok(r)) {
            ai->darg = wfm_persist_read_value(r);
            ai->denv.slots = &ai->darg; /* owned: ai_free releases it */
            ai->denv.count = 1;
        }
    }
}

static wf_status restore_state(wfm_persist_reader *r, void *ai_, const void *unused)
{
    (void)unused;
    wfm_ai *ai = ai_;
    const wfm_kind_spec *spec = ai->spec;
    if (r->in.p == r->in.end)
        return WF_OK; /* nothing saved: the state stays zeroed */
    if (!ai->state || !spec->state_size || !(ai->flags & WFM__AI_STARTED))
        return WF_E_CORRUPT; /* (fini runs only on started activities) */
    if (spec->flags & WFM_KIND_STATE_PLAIN) {
        const void *bytes = wf_codec_get_raw(&r->in, spec->state_size);
        if (bytes)
            memcpy(ai->state, bytes, spec->state_size);
        return WF_OK;
    }
    if (!spec->restore)
        return WF_E_CORRUPT;
    wf_status st = spec->restore(ai, r);
    return st != WF_OK ? st : r->nomem ? WF_E_NOMEM : WF_OK;
}

static wfm_ai *r_live_owner(wfm_persist_reader *r)
{
    wfm_ai *owner = wfm_persist_read_ai(r);
    if (r_ok(r) && (!owner || owner->status != WFM_EXECUTING || (owner->flags & WFM__AI_FAULTING)))
        r_fail(r, "a bookmark or timer belongs to no running activity");
    return r_ok(r) ? owner : NULL;
}

static void r_waits(wfm_persist_reader *r)
{
    uint64_t n = wf_codec_get_uint(&r->in);
    for (uint64_t i = 0; i < n && r_ok(r); i++) {
        bool nomem = false;
        char *name = wf_codec_get_str(&r->in, &nomem);
        wfm_ai *owner = r_live_owner(r);
        uint64_t flags = wf_codec_get_uint(&r->in);
        const void *fn = wfm_persist_read_ptr(r);
        if (nomem)
            r->nomem = true;
        else if (r_ok(r) && (!fn || flags > 3))
            r_fail(r, "bad bookmark");
        wf_status st = r_ok(r) ? wfm_ctx_bookmark(r->ctx, owner, name, (unsigned)flags,
                                                  (wfm_resume_fn)fn)
                               : WF_OK;
        if (st == WF_E_NOMEM)
            r->nomem = true;
        else if (st != WF_OK)
            r_fail(r, "a bookmark name is used twice");
        wf_free(name);
    }
    /* timers get sequence numbers 1..n again (same order), then the saved counter */
    uint64_t seq = r->ctx->next_timer_seq;
    r->ctx->next_timer_seq = 0;
    n = wf_codec_get_uint(&r->in);
    if (r_ok(r) && n > seq)
        r_fail(r, "bad timer count");
    for (uint64_t i = 0; i < n && r_ok(r); i++) {
        int64_t due = wf_codec_get_int(&r->in);
        wfm_ai *owner = r_live_owner(r);
        const void *fn = wfm_persist_read_ptr(r);
        if (r_ok(r) && !fn)
            r_fail(r, "bad timer");
        if (r_ok(r) && wfm_ctx_timer(r->ctx, owner, due, (wfm_resume_fn)fn) != WF_OK)
            r->nomem = true;
    }
    r->ctx->next_timer_seq = seq;
}

static void r_queue(wfm_persist_reader *r)
{
    uint64_t n = wf_codec_get_uint(&r->in);
    for (uint64_t i = 0; i < n && r_ok(r); i++) {
        uint64_t kind = wf_codec_get_uint(&r->in);
        wfm_ai *ai = wfm_persist_read_ai(r);
        const void *fn = wfm_persist_read_ptr(r);
        wf_value v = wfm_persist_read_value(r);
        bool bad = kind > WFM__WI_ROOT_DONE || !ai || (kind == WFM__WI_RESUME) != (fn != NULL) ||
                   (kind == WFM__WI_ROOT_DONE && ai != r->ctx->root) ||
                   (kind == WFM__WI_DONE && !ai->parent);
        if (r_ok(r) && bad)
            r_fail(r, "bad work item");
        if (!r_ok(r)) {
            wf_value_release(&v);
            return;
        }
        wfm__wi wi = {(wfm__wi_kind)kind, ai, ai->serial, (wfm_resume_fn)fn, v};
        if (!wfm__sched_queue_restore(r->ctx, wi))
            r->nomem = true;
    }
    n = wf_codec_get_uint(&r->in);
    for (uint64_t i = 0; i < n && r_ok(r); i++) {
        const void *fn = wfm_persist_read_ptr(r), *data = wfm_persist_read_ptr(r);
        if (r_ok(r) && !fn)
            r_fail(r, "bad finish hook");
        if (r_ok(r) && wfm_ctx_on_finish(r->ctx, (wfm_finish_fn)fn, (void *)data) != WF_OK)
            r->nomem = true;
    }
}

/* The whole body after the header; the instance shell exists and is held. */
static void r_body(wfm_persist_reader *r, const header *h)
{
    r_kinds(r);
    r_tree(r);
    r_free_envs(r);
    r_scalars(r);
    r_root_env(r);
    r_exts(r);
    for (size_t i = 0; i < r->ai_count && r_ok(r); i++)
        r_activity(r, r->ais[i]);
    for (size_t i = 0; i < r->ai_count && r_ok(r); i++)
        r_section(r, r->ais[i]->spec->name, restore_state, r->ais[i], NULL);
    r_waits(r);
    r_queue(r);
    if (!r_ok(r))
        return;
    wfm_ctx *ctx = r->ctx;
    bool live = h->state == WFM__SCHED_RUNNING || h->state == WFM__SCHED_IDLE;
    if (wf_reader_left(&r->in))
        r_fail(r, "trailing bytes after the state");
    else if (live != (ctx->root != NULL) || (h->state == WFM__SCHED_IDLE && ctx->count) ||
             (!live && (ctx->count || ctx->timer_count || ctx->bm_first)))
        r_fail(r, "the instance status does not match its activities");
    else if (h->bookmarks != ctx->blocking_bookmarks)
        r_fail(r, "the bookmark count does not match");
    for (size_t k = 0; k < r->env_count && r_ok(r); k++)
        if (!r->envs[k].taken)
            r_fail(r, "an environment belongs to nobody");
    if (r_ok(r))
        wfm__sched_set_saved_state(ctx, (wfm__sched_state)h->state);
}

wf_status wfm_instance_restore(wfm_runtime *rt, wfm_definition *def, const void *data, size_t len,
                               wfm_instance **out, wf_error *err)
{
    *out = NULL;
    wfm_persist_reader r = {0};
    r.def = def;
    wf_reader_init(&r.in, data, len, wfm_runtime_types(rt));
    header h;
    wf_status st = r_header(&r.in, &h, NULL, err);
    if (st != WF_OK)
        return st;
    if (h.hash != def->hash)
        return wf_error_set(err, WF_E_STATE, NULL,
                            "the state was saved from another definition (content hash "
                            "%016llx, %s has %016llx)",
                            (unsigned long long)h.hash, def->path, (unsigned long long)def->hash);
    if (h.has_sha256 && memcmp(h.sha256, def->sha256, sizeof h.sha256) != 0)
        return wf_error_set(err, WF_E_STATE, NULL,
                            "the state was saved from another definition (its SHA-256 differs "
                            "from that of %s)",
                            def->path);
    if (h.node_count != def->node_count)
        return wf_error_set(err, WF_E_CORRUPT, NULL,
                            "corrupt instance state: the node count does not match");
    wfm_instance *inst = NULL;
    st = wfm_instance_create(rt, def, &inst, err);
    if (st != WF_OK)
        return st;
    r.ctx = wfm__instance_hold(inst);
    r_body(&r, &h);
    if (!r_ok(&r))
        st = corrupt_error(&r, err);
    r_free_envs_fini(&r);
    wf_free(r.kinds);
    wf_free(r.ais);
    wfm__instance_unhold(inst); /* a failed restore left the state NEW */
    if (st != WF_OK) {
        wfm_instance_destroy(inst);
        return st;
    }
    *out = inst;
    return WF_OK;
}

wf_status wfm_state_peek(const void *data, size_t len, wfm_state_info *out, wf_error *err)
{
    memset(out, 0, sizeof *out);
    wf_reader in;
    wf_reader_init(&in, data, len, NULL);
    header h;
    wf_status st = r_header(&in, &h, NULL, err);
    if (st != WF_OK)
        return st;
    static const wfm_instance_state map[] = {
        WFM_INSTANCE_CREATED, WFM_INSTANCE_EXECUTING, WFM_INSTANCE_IDLE,
        WFM_INSTANCE_CLOSED,  WFM_INSTANCE_FAULTED,   WFM_INSTANCE_CANCELED,
        WFM_INSTANCE_TERMINATED};
    out->version = (uint32_t)h.version;
    out->definition_hash = h.hash;
    out->state = map[h.state];
    out->next_timer_us = h.next_timer;
    out->blocking_bookmarks = (size_t)h.bookmarks;
    return WF_OK;
}

/* ---- JSON (wfbridge inspect) ------------------------------------------------------------ */
/* The decoded state as a jansson tree, written compact by wf_jsonw (docs/formats.md "JSON
 * text"). Building reads the blob in its order; a node that cannot be made while the reader
 * is still good means memory ran out. */

typedef struct json_node {
    uint64_t node, kind, children;
    const char *id; /* borrowed from the blob, id_len bytes */
    size_t id_len;
} json_node;

typedef struct json_ctx {
    wf_reader in;
    char **kinds; /* names, for callbacks and activities */
    size_t kind_count;
    json_node *tree; /* [ai_count] */
    uint64_t ai_count, env_count;
    bool nomem;
} json_ctx;

/* Set key in obj / append to arr, taking v; a failure with a good reader is no memory. */
static void j_set(json_ctx *j, json_t *obj, const char *key, json_t *v)
{
    if (!wf_jsonw_set(obj, key, v) && !j->in.bad)
        j->nomem = true;
}

static void j_add(json_ctx *j, json_t *arr, json_t *v)
{
    if (!wf_jsonw_append(arr, v) && !j->in.bad)
        j->nomem = true;
}

/* An object made by the caller; NULL (counted as no memory) when it could not be. */
static json_t *j_obj(json_ctx *j, json_t *made)
{
    j->nomem |= !made;
    return made;
}

static json_t *j_u64(uint64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    return wf_jsonw_number(text);
}

static json_t *j_str(json_ctx *j)
{
    size_t len;
    const char *s = wf_codec_get_bytes(&j->in, &len);
    return s ? wf_jsonw_strn(s, len) : NULL;
}

/* obj[name] = v, taking both (name a string node: a name of the blob may hold any byte). */
static void j_named(json_ctx *j, json_t *obj, json_t *name, json_t *v)
{
    /* json_object_setn, not _setn_new: the _new form frees v also when it fails */
    bool ok = obj && name && v &&
              json_object_setn(obj, json_string_value(name), json_string_length(name), v) == 0;
    if (!ok && !j->in.bad)
        j->nomem = true;
    json_decref(v);
    json_decref(name);
}

static json_t *j_value(json_ctx *j)
{
    return j->in.bad ? NULL : wf_codec_value_tree(&j->in);
}

static json_t *j_uint(json_ctx *j)
{
    return j_u64(wf_codec_get_uint(&j->in));
}

static json_t *j_env(json_ctx *j)
{
    uint64_t ref = wf_codec_get_uint(&j->in);
    if (ref == 0)
        return json_null();
    if (ref == 1)
        return json_string("root");
    uint64_t x = ref - 2, i = x / 3;
    static const char *const what[] = {"variables of activity", "delegate of activity", "free"};
    if ((x % 3 == 2 && i >= j->env_count) || (x % 3 != 2 && i >= j->ai_count))
        wf_reader_fail(&j->in, "an environment reference is out of range");
    char text[64];
    snprintf(text, sizeof text, "%s %llu", what[x % 3], (unsigned long long)i);
    return json_string(text);
}

static json_t *j_ptr(json_ctx *j)
{
    uint64_t k = wf_codec_get_uint(&j->in);
    if (!k)
        return json_null();
    uint64_t i = wf_codec_get_uint(&j->in);
    if (k > j->kind_count) {
        wf_reader_fail(&j->in, "a callback reference is out of range");
        return NULL;
    }
    assert(j->kinds[k - 1] != NULL); /* j_kinds failed the reader for a bad name */
    char text[300];
    snprintf(text, sizeof text, "%s#%llu", j->kinds[k - 1], (unsigned long long)i);
    return wf_jsonw_str(text);
}

static json_t *j_ai(json_ctx *j)
{
    uint64_t i = wf_codec_get_uint(&j->in);
    if (i > j->ai_count)
        wf_reader_fail(&j->in, "an activity reference is out of range");
    return i ? j_u64(i - 1) : json_null();
}

static const char *status_name(uint64_t s)
{
    static const char *const names[] = {"Executing", "Closed", "Canceled", "Faulted"};
    return s < 4 ? names[s] : "?";
}

static void j_kinds(json_ctx *j)
{
    uint64_t n = wf_codec_get_uint(&j->in);
    if (n > wf_reader_left(&j->in) / 2) {
        wf_reader_fail(&j->in, "bad kind count");
        return;
    }
    if (n && !(j->kinds = wf_calloc((size_t)n, sizeof *j->kinds))) {
        j->nomem = true;
        return;
    }
    for (; j->kind_count < n && !j->in.bad; j->kind_count++) {
        size_t len;
        wf_codec_get_bytes(&j->in, &len); /* the namespace */
        char *name = wf_codec_get_str(&j->in, &j->nomem);
        j->kinds[j->kind_count] = name;
        if (!name)
            wf_reader_fail(&j->in, "bad kind name");
    }
}

/* The tree is remembered and shown with each activity's run-time data (j_activity). */
static void j_tree(json_ctx *j)
{
    j->ai_count = wf_codec_get_uint(&j->in);
    if (j->ai_count > wf_reader_left(&j->in) / 4) {
        wf_reader_fail(&j->in, "bad activity count");
        return;
    }
    if (j->ai_count && !(j->tree = wf_calloc((size_t)j->ai_count, sizeof *j->tree))) {
        j->nomem = true;
        wf_reader_fail(&j->in, "out of memory");
        return;
    }
    for (uint64_t i = 0; i < j->ai_count && !j->in.bad; i++) {
        json_node *n = &j->tree[i];
        n->node = wf_codec_get_uint(&j->in);
        n->kind = wf_codec_get_uint(&j->in);
        n->children = wf_codec_get_uint(&j->in);
        n->id = wf_codec_get_bytes(&j->in, &n->id_len);
        if (!j->in.bad && n->kind >= j->kind_count)
            wf_reader_fail(&j->in, "bad kind reference");
    }
}

static void j_free_envs(json_ctx *j, json_t *root)
{
    j->env_count = wf_codec_get_uint(&j->in);
    if (j->env_count > wf_reader_left(&j->in) / 2)
        wf_reader_fail(&j->in, "bad environment count");
    json_t *envs = j_obj(j, json_array());
    for (uint64_t k = 0; k < j->env_count && !j->in.bad; k++) {
        uint64_t count = wf_codec_get_uint(&j->in);
        if (count > wf_reader_left(&j->in))
            wf_reader_fail(&j->in, "bad environment size");
        json_t *env = j_obj(j, json_object());
        j_set(j, env, "parent", j_env(j));
        json_t *slots = j_obj(j, json_array());
        for (uint64_t i = 0; i < count && !j->in.bad; i++)
            j_add(j, slots, j_value(j));
        j_set(j, env, "slots", slots);
        j_add(j, envs, env);
    }
    j_set(j, root, "environments", envs);
}

static void j_scalars(json_ctx *j, json_t *root)
{
    uint64_t flags = wf_codec_get_uint(&j->in);
    j_set(j, root, "faulted", json_boolean(flags & 1));
    j_set(j, root, "finishing", json_boolean(flags & 2));
    j_set(j, root, "body_status", json_string(status_name(wf_codec_get_uint(&j->in))));
    wf_codec_get_uint(&j->in); /* timer sequence */
    j_set(j, root, "fault", j_value(j));
    wf_codec_get_uint(&j->in);
    json_t *at = j_obj(j, json_object());
    j_set(j, at, "line", j_uint(j));
    j_set(j, at, "col", j_uint(j));
    j_set(j, root, "fault_at", at);
    uint64_t n = wf_codec_get_uint(&j->in);
    json_t *args = j_obj(j, json_object());
    for (uint64_t i = 0; i < n && !j->in.bad; i++) {
        json_t *name = j_str(j);
        wf_codec_get_uint(&j->in); /* supplied */
        j_named(j, args, name, j_value(j));
    }
    j_set(j, root, "arguments", args);
}

static void j_exts(json_ctx *j, json_t *root)
{
    uint64_t n = wf_codec_get_uint(&j->in);
    json_t *exts = j_obj(j, json_array());
    for (uint64_t i = 0; i < n && !j->in.bad; i++) {
        json_t *ext = j_obj(j, json_object());
        j_set(j, ext, "name", j_str(j));
        size_t len;
        wf_codec_get_bytes(&j->in, &len);
        j_set(j, ext, "state_bytes", j_u64(len));
        j_add(j, exts, ext);
    }
    j_set(j, root, "extensions", exts);
}

static void j_variables(json_ctx *j, json_t *act)
{
    uint64_t vcount = wf_codec_get_uint(&j->in);
    if (vcount > wf_reader_left(&j->in))
        wf_reader_fail(&j->in, "bad variable count");
    if (vcount) {
        j_set(j, act, "variables_parent", j_env(j));
        json_t *vars = j_obj(j, json_object());
        for (uint64_t v = 0; v < vcount && !j->in.bad; v++) {
            json_t *name = j_str(j);
            j_named(j, vars, name, j_value(j));
        }
        j_set(j, act, "variables", vars);
    }
    if (wf_codec_get_uint(&j->in)) {
        j_set(j, act, "delegate_parent", j_env(j));
        j_set(j, act, "delegate_argument", j_value(j));
    }
}

static json_t *j_activity(json_ctx *j, uint64_t i)
{
    const json_node *n = &j->tree[i];
    assert(n->kind < j->kind_count); /* j_tree checked every kind reference */
    json_t *act = j_obj(j, json_object());
    j_set(j, act, "index", j_u64(i));
    j_set(j, act, "node", j_u64(n->node));
    j_set(j, act, "id", wf_jsonw_strn(n->id ? n->id : "", n->id_len));
    j_set(j, act, "kind", wf_jsonw_str(j->kinds[n->kind]));
    j_set(j, act, "children", j_u64(n->children));
    j_set(j, act, "status", json_string(status_name(wf_codec_get_uint(&j->in))));
    j_set(j, act, "flags", j_uint(j));
    j_set(j, act, "env", j_env(j));
    j_set(j, act, "on_done", j_ptr(j));
    j_set(j, act, "on_fault", j_ptr(j));
    j_variables(j, act);
    return act;
}

static void j_waits(json_ctx *j, json_t *root)
{
    uint64_t n = wf_codec_get_uint(&j->in);
    json_t *marks = j_obj(j, json_array());
    for (uint64_t i = 0; i < n && !j->in.bad; i++) {
        json_t *mark = j_obj(j, json_object());
        j_set(j, mark, "name", j_str(j));
        j_set(j, mark, "owner", j_ai(j));
        j_set(j, mark, "flags", j_uint(j));
        j_set(j, mark, "callback", j_ptr(j));
        j_add(j, marks, mark);
    }
    j_set(j, root, "bookmarks", marks);
    n = wf_codec_get_uint(&j->in);
    json_t *timers = j_obj(j, json_array());
    for (uint64_t i = 0; i < n && !j->in.bad; i++) {
        char when[64];
        wf_datetime_format(wf_codec_get_int(&j->in), when, sizeof when);
        json_t *timer = j_obj(j, json_object());
        j_set(j, timer, "due", json_string(when));
        j_set(j, timer, "owner", j_ai(j));
        j_set(j, timer, "callback", j_ptr(j));
        j_add(j, timers, timer);
    }
    j_set(j, root, "timers", timers);
}

static void j_queue(json_ctx *j, json_t *root)
{
    static const char *const kinds[] = {"execute", "done", "resume", "fault", "root_done"};
    uint64_t n = wf_codec_get_uint(&j->in);
    json_t *items = j_obj(j, json_array());
    for (uint64_t i = 0; i < n && !j->in.bad; i++) {
        uint64_t k = wf_codec_get_uint(&j->in);
        if (k > 4)
            wf_reader_fail(&j->in, "bad work item");
        json_t *item = j_obj(j, json_object());
        j_set(j, item, "kind", json_string(kinds[k % 5]));
        j_set(j, item, "activity", j_ai(j));
        j_set(j, item, "callback", j_ptr(j));
        j_set(j, item, "value", j_value(j));
        j_add(j, items, item);
    }
    j_set(j, root, "work_items", items);
    n = wf_codec_get_uint(&j->in);
    json_t *hooks = j_obj(j, json_array());
    for (uint64_t i = 0; i < n && !j->in.bad; i++) {
        json_t *hook = j_obj(j, json_object());
        j_set(j, hook, "callback", j_ptr(j));
        j_set(j, hook, "data", j_ptr(j));
        j_add(j, hooks, hook);
    }
    j_set(j, root, "finish_hooks", hooks);
}

static void j_body(json_ctx *j, json_t *root)
{
    j_kinds(j);
    j_tree(j);
    j_free_envs(j, root);
    j_scalars(j, root);
    j_exts(j, root);
    json_t *acts = j_obj(j, json_array());
    for (uint64_t i = 0; i < j->ai_count && !j->in.bad; i++)
        j_add(j, acts, j_activity(j, i));
    j_set(j, root, "activities", acts);
    json_t *sizes = j_obj(j, json_array());
    for (uint64_t i = 0; i < j->ai_count && !j->in.bad; i++) {
        size_t len;
        wf_codec_get_bytes(&j->in, &len);
        j_add(j, sizes, j_u64(len));
    }
    j_set(j, root, "activity_state_bytes", sizes);
    j_waits(j, root);
    j_queue(j, root);
    if (!j->in.bad && wf_reader_left(&j->in))
        wf_reader_fail(&j->in, "trailing bytes after the state");
}

/* The header's members, in the order inspect shows them. */
static json_t *j_header(json_ctx *j, const header *h, const char *path)
{
    static const char *const states[] = {"Created", "Executing", "Idle",      "Closed",
                                         "Faulted", "Canceled",  "Terminated"};
    char hash[20], when[64], sha[2 * sizeof h->sha256 + 1];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)h->hash);
    json_t *root = j_obj(j, json_object());
    j_set(j, root, "version", j_u64(h->version));
    j_set(j, root, "definition",
          json_pack("{s:s, s:o, s:o}", "hash", hash, "path", wf_jsonw_str(path ? path : ""),
                    "node_count", j_u64(h->node_count)));
    j_set(j, root, "state", json_string(states[h->state]));
    j_set(j, root, "blocking_bookmarks", j_u64(h->bookmarks));
    if (h->next_timer != INT64_MAX) {
        wf_datetime_format(h->next_timer, when, sizeof when);
        j_set(j, root, "next_timer", json_string(when));
    }
    for (size_t i = 0; h->has_sha256 && i < sizeof h->sha256; i++)
        snprintf(sha + 2 * i, 3, "%02x", h->sha256[i]);
    if (h->has_sha256)
        j_set(j, root, "sha256", json_string(sha));
    return root;
}

wf_status wfm_state_to_json(wfm_runtime *rt, const void *data, size_t len, wf_buf *out,
                            wf_error *err)
{
    (void)rt;
    json_ctx j = {0};
    wf_reader_init(&j.in, data, len, NULL);
    header h;
    char *path = NULL;
    wf_status st = r_header(&j.in, &h, &path, err);
    if (st != WF_OK)
        return st;
    json_t *root = j_header(&j, &h, path);
    wf_free(path);
    j_body(&j, root);
    for (size_t i = 0; i < j.kind_count; i++)
        wf_free(j.kinds[i]);
    wf_free(j.kinds);
    wf_free(j.tree);
    wf_buf text;
    wf_buf_init(&text);
    if (j.nomem)
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    else if (j.in.bad)
        st = wf_error_set(err, WF_E_CORRUPT, NULL, "corrupt instance state: %s", j.in.why);
    else if (!wf_jsonw_dump(root, WF_JSONW_COMPACT, &text) ||
             !wf_buf_add(out, text.data, text.len))
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wf_buf_fini(&text);
    json_decref(root);
    return st;
}

bool wfm_persist_bookmark(const char *name)
{
    return name &&
           strncmp(name, WFM_PERSIST_BOOKMARK_PREFIX, sizeof WFM_PERSIST_BOOKMARK_PREFIX - 1) == 0;
}

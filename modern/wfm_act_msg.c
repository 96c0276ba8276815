/* wfm_act_msg.c — the messaging activities Receive and SendReply (WF4's
 * System.ServiceModel.Activities; docs/services.md) and the host side of them (wfm_msg.h).
 * A Receive is a bookmark "CONTRACT.OPERATION": an instance idle on it persists like any
 * other and a message resumes it from the store. Requests and replies in flight are kept in a
 * per-instance extension state that is saved empty: a request lives only as long as the run
 * that answers it (a process that dies before the reply went out never sent one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "wfm_activity.h"
#include "wfm_acts.h"
#include "wfm_ctx.h"
#include "wfm_msg.h"
#include "wfm_node.h"
#include "wfm_persist.h"

enum { MSG_MAX_PENDING = 16, MSG_MAX_REPLIES = 16 };

typedef struct msg_pending {
    int64_t request;
    const wfm_node *receive;
} msg_pending;

typedef struct msg_reply {
    int64_t request;
    wf_value body; /* owned record */
} msg_reply;

/* The per-instance messaging state: the creating message not yet taken, requests received and
 * not answered, replies not yet taken by the host. */
typedef struct msg_ext {
    char initial_mark[260];
    wf_value initial; /* owned; null when none */
    msg_pending pending[MSG_MAX_PENDING];
    size_t pending_count;
    msg_reply replies[MSG_MAX_REPLIES];
    size_t reply_count;
} msg_ext;

static void ext_fini(void *state)
{
    msg_ext *x = state;
    if (x->initial.type) /* a zeroed wf_value has no type: not even null */
        wf_value_release(&x->initial);
    for (size_t i = 0; i < x->reply_count; i++)
        wf_value_release(&x->replies[i].body);
}

static wf_status ext_save(const void *state, wfm_persist_writer *w)
{
    (void)state; /* in-flight messages are not state: saved empty (see the file comment) */
    (void)w;
    return WF_OK;
}

static wf_status ext_restore(void *state, wfm_persist_reader *r)
{
    (void)state;
    (void)r;
    return WF_OK;
}

static const wfm_ext_spec msg_ext_spec = {"wfbridge.messaging", sizeof(msg_ext), ext_fini,
                                          ext_save, ext_restore};

/* ---- Receive ------------------------------------------------------------------------------ */
/* <p:Receive OperationName="Add" ServiceContractName="{http://tempuri.org/}ICalculator"
 *            CanCreateInstance="False" CorrelatesOn="orderId">
 *   <p:Receive.Content><p:ReceiveParametersContent>
 *     <OutArgument x:TypeArguments="x:Int32" x:Key="a">[a]</OutArgument> ...
 * CorrelatesOn (wfbridge's short form of WF4's MessageQuerySet) names the parameter whose
 * value finds the instance: the one whose promoted property of that name has the value. */
enum { RCV_OPERATION, RCV_CONTRACT, RCV_CAN_CREATE, RCV_CORRELATES_ON, RCV_ACTION, RCV_CONTENT };
static const wfm_prop_spec receive_props[] = {
    {"OperationName", WFM_PROP_LITERAL, "x:String", NULL, WFM_PROP_REQUIRED, NULL},
    {"ServiceContractName", WFM_PROP_LITERAL, "x:String", NULL, WFM_PROP_REQUIRED, NULL},
    {"CanCreateInstance", WFM_PROP_LITERAL, "x:Boolean", NULL, 0, "False"},
    {"CorrelatesOn", WFM_PROP_LITERAL, "x:String", NULL, 0, NULL},
    {"Action", WFM_PROP_LITERAL, "x:String", NULL, 0, NULL},
    {"Content", WFM_PROP_PARAMS, NULL, NULL, 0, NULL},
};

bool wfm_msg_split_xname(const char *text, char *ns, size_t ns_size, char *name, size_t name_size)
{
    const char *local = text;
    if (*text == '{') {
        const char *end = strchr(text, '}');
        if (!end || end == text + 1 || (size_t)(end - text - 1) >= ns_size)
            return false; /* "{}Name" has no namespace to put in SOAPAction */
        snprintf(ns, ns_size, "%.*s", (int)(end - text - 1), text + 1);
        local = end + 1;
    } else {
        snprintf(ns, ns_size, "%s", WFM_MSG_DEFAULT_NS);
    }
    return *local && strlen(local) < name_size && !strpbrk(local, "/{} ") &&
           (size_t)snprintf(name, name_size, "%s", local) < name_size;
}

static bool receive_names(const wfm_node *node, char *ns, size_t ns_size, char *contract,
                          size_t contract_size, char *mark, size_t mark_size)
{
    const char *op = wf_value_str(wfm_node_literal(node, RCV_OPERATION));
    if (!wfm_msg_split_xname(wf_value_str(wfm_node_literal(node, RCV_CONTRACT)), ns, ns_size, contract,
                     contract_size))
        return false;
    return *op && !strpbrk(op, "/{} .") &&
           (size_t)snprintf(mark, mark_size, "%s.%s", contract, op) < mark_size;
}

static wf_status receive_prepare(wfm_load *load, wfm_node *node)
{
    char ns[256], contract[128], mark[260];
    if (!receive_names(node, ns, sizeof ns, contract, sizeof contract, mark, sizeof mark))
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "Receive needs an OperationName (without '.') and a ServiceContractName "
                       "('{namespace}Name' or 'Name'), both without '/', '{', '}' or spaces");
    size_t n = wfm_node_count(node, RCV_CONTENT);
    for (size_t i = 0; i < n; i++) {
        const char *key = wfm_node_param_key(node, RCV_CONTENT, i);
        if (wfm_node_param_dir(node, RCV_CONTENT, i) != WFM_PROP_OUT || !key || !*key)
            wfm_load_error(load, node, WF_E_SCHEMA,
                           "each parameter of a Receive's content is an OutArgument with x:Key");
    }
    const wf_value *on = wfm_node_literal(node, RCV_CORRELATES_ON);
    bool found = wf_is_null(on);
    for (size_t i = 0; i < n && !found; i++)
        found = strcmp(wfm_node_param_key(node, RCV_CONTENT, i) ? wfm_node_param_key(
                                                                       node, RCV_CONTENT, i)
                                                                 : "",
                       wf_value_str(on)) == 0;
    if (!found)
        wfm_load_error(load, node, WF_E_NAME, "CorrelatesOn names no parameter of the Receive: '%s'",
                       wf_value_str(on));
    return WF_OK;
}

/* The message arrived: parameters to their locations, the request kept pending. */
static void receive_take(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)
{
    const wfm_node *node = wfm_ai_node(ai);
    msg_ext *x = wfm_ctx_ext_get(ctx, &msg_ext_spec);
    if (!x) {
        wfm_ctx_nomem(ctx);
        return;
    }
    size_t n = wfm_node_count(node, RCV_CONTENT);
    for (size_t i = 0; i < n; i++) {
        const wf_value *v = wf_value_record_get(payload, wfm_node_param_key(node, RCV_CONTENT, i));
        if (v && wfm_ctx_set_param(ctx, ai, RCV_CONTENT, i, v) != WF_OK)
            return;
    }
    /* A message resumed without a request id (`wfbridge resume`, a test) wants no reply. */
    const wf_value *req = wf_value_record_get(payload, WFM_MSG_REQUEST);
    int64_t id = !req ? 0 : req->type->kind == WF_K_INT64 ? req->u.i64
                        : req->type->kind == WF_K_INT32   ? req->u.i32
                                                          : 0;
    if (x->pending_count == MSG_MAX_PENDING) {
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "more than %d requests wait for their replies", MSG_MAX_PENDING);
        return;
    }
    x->pending[x->pending_count++] = (msg_pending){id, node};
    wfm_ctx_complete(ctx, ai);
}

static void receive_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    char ns[256], contract[128], mark[260];
    receive_names(wfm_ai_node(ai), ns, sizeof ns, contract, sizeof contract, mark, sizeof mark);
    msg_ext *x = wfm_ctx_ext_find(ctx, &msg_ext_spec);
    if (x && x->initial.type && !wf_is_null(&x->initial) && strcmp(x->initial_mark, mark) == 0) {
        wf_value msg = x->initial; /* the creating message, delivered with the instance */
        x->initial = wf_null();
        receive_take(ctx, ai, &msg);
        wf_value_release(&msg);
        return;
    }
    wf_status st = wfm_ctx_bookmark(ctx, ai, mark, 0, receive_take);
    if (st == WF_E_NOMEM)
        wfm_ctx_nomem(ctx);
    else if (st != WF_OK)
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "another Receive already waits for operation '%s'", mark);
}

static const void *const receive_callbacks[] = {(const void *)receive_take};
static const wfm_ext_spec *const msg_exts[] = {&msg_ext_spec};

static const wfm_kind_spec receive_spec = {
    .name = "Receive",
    .ns = WFM_NS_SERVICEMODEL,
    .category = "Activity",
    .flags = WFM_KIND_CAN_IDLE,
    .props = receive_props,
    .prop_count = sizeof receive_props / sizeof receive_props[0],
    .prepare = receive_prepare,
    .execute = receive_execute,
    .callbacks = receive_callbacks,
    .callback_count = 1,
    .exts = msg_exts,
    .ext_count = 1,
};

/* ---- SendReply ---------------------------------------------------------------------------- */
/* <p:SendReply Request="{x:Reference __ReferenceID0}"><p:SendReply.Content>
 *   <p:SendParametersContent><InArgument x:TypeArguments="x:Int32" x:Key="AddResult">[total]
 * The node data is the referenced Receive's x:Name (NULL: the latest pending request). */
enum { SR_CONTENT };
static const wfm_prop_spec sendreply_props[] = {
    {"Content", WFM_PROP_PARAMS, NULL, NULL, 0, NULL},
};

char *wfm_msg_reference_name(const char *text)
{
    size_t len = strlen(text);
    if (len < 15 || strncmp(text, "{x:Reference ", 13) != 0 || text[len - 1] != '}')
        return NULL;
    const char *name = text + 13;
    while (*name == ' ')
        name++;
    if (strncmp(name, "Name=", 5) == 0)
        name += 5;
    size_t n = strcspn(name, " }");
    return n ? wf_strndup(name, n) : NULL;
}

static wf_status sendreply_prepare(wfm_load *load, wfm_node *node)
{
    size_t n = wfm_node_count(node, SR_CONTENT);
    for (size_t i = 0; i < n; i++) {
        const char *key = wfm_node_param_key(node, SR_CONTENT, i);
        if (wfm_node_param_dir(node, SR_CONTENT, i) != WFM_PROP_IN || !key || !*key)
            wfm_load_error(load, node, WF_E_SCHEMA,
                           "each parameter of a SendReply's content is an InArgument with x:Key");
    }
    const char *request = wfm_load_claim_attr(load, node, "Request");
    if (!request)
        return WF_OK;
    char *name = wfm_msg_reference_name(request);
    if (!name) {
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "SendReply's Request is '{x:Reference NAME}' naming its Receive");
        return WF_OK;
    }
    wfm_node_set_data(node, name, wf_free);
    return WF_OK;
}

static int find_pending(const msg_ext *x, const char *receive_name)
{
    for (size_t i = x->pending_count; i-- > 0;) {
        const char *n = wfm_node_x_name(x->pending[i].receive);
        if (!receive_name || (n && strcmp(n, receive_name) == 0))
            return (int)i;
    }
    return -1;
}

wf_status wfm_msg_params_record(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, wf_value *out)
{
    const wfm_node *node = wfm_ai_node(ai);
    size_t n = wfm_node_count(node, prop);
    const char *keys[64];
    wf_value values[64];
    if (n > 64)
        n = 64;
    size_t got = 0;
    wf_status st = WF_OK;
    for (; got < n && st == WF_OK; got++) {
        keys[got] = wfm_node_param_key(node, prop, got);
        st = wfm_ctx_get_param(ctx, ai, prop, got, &values[got]);
    }
    if (st != WF_OK)
        got--; /* the failed one holds nothing */
    else if (wf_value_record(keys, values, n, out) != WF_OK)
        st = WF_E_NOMEM;
    for (size_t i = 0; i < got; i++)
        wf_value_release(&values[i]);
    return st;
}

static void sendreply_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const char *receive_name = wfm_node_data(wfm_ai_node(ai));
    msg_ext *x = wfm_ctx_ext_get(ctx, &msg_ext_spec);
    if (!x) {
        wfm_ctx_nomem(ctx);
        return;
    }
    int at = find_pending(x, receive_name);
    if (at < 0) {
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "SendReply: no request of Receive '%s' waits for a reply",
                      receive_name ? receive_name : "(any)");
        return;
    }
    if (x->pending[at].request == 0) { /* nobody waits for this reply */
        x->pending[at] = x->pending[--x->pending_count];
        wfm_ctx_complete(ctx, ai);
        return;
    }
    if (x->reply_count == MSG_MAX_REPLIES) {
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "SendReply: too many replies in flight");
        return;
    }
    wf_value body = wf_null();
    wf_status st = wfm_msg_params_record(ctx, ai, SR_CONTENT, &body);
    if (st == WF_E_NOMEM)
        wfm_ctx_nomem(ctx);
    if (st != WF_OK)
        return;
    x->replies[x->reply_count++] = (msg_reply){x->pending[at].request, body};
    x->pending[at] = x->pending[--x->pending_count];
    wfm_ctx_complete(ctx, ai);
}

static const wfm_kind_spec sendreply_spec = {
    .name = "SendReply",
    .ns = WFM_NS_SERVICEMODEL,
    .category = "Activity",
    .props = sendreply_props,
    .prop_count = 1,
    .prepare = sendreply_prepare,
    .execute = sendreply_execute,
    .exts = msg_exts,
    .ext_count = 1,
};

wf_status wfm_act_msg_register(wfm_catalogue *cat, wf_error *err)
{
    wf_status st = wfm_catalogue_register(cat, &receive_spec, err);
    return st == WF_OK ? wfm_catalogue_register(cat, &sendreply_spec, err) : st;
}

/* ---- the host side ------------------------------------------------------------------------ */
wf_status wfm_msg_deliver_initial(wfm_instance *inst, const char *bookmark,
                                  const wf_value *payload, wf_error *err)
{
    msg_ext *x = wfm_instance_ext_get(inst, &msg_ext_spec);
    if (!x)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    snprintf(x->initial_mark, sizeof x->initial_mark, "%s", bookmark);
    if (!x->initial.type)
        x->initial = wf_null();
    wf_value_set(&x->initial, payload);
    return WF_OK;
}

wf_status wfm_msg_take_reply(wfm_instance *inst, int64_t request, wf_value *out)
{
    *out = wf_null();
    msg_ext *x = wfm_instance_ext_get(inst, &msg_ext_spec);
    for (size_t i = 0; x && i < x->reply_count; i++) {
        if (x->replies[i].request != request)
            continue;
        *out = x->replies[i].body;
        x->replies[i] = x->replies[--x->reply_count];
        return WF_OK;
    }
    return WF_E_NOTFOUND;
}

bool wfm_msg_xsd_text(wf_xmlw *x, const wf_value *v)
{
    if (v->type->kind == WF_K_BOOL) {
        wf_xmlw_text(x, v->u.b ? "true" : "false");
        return true;
    }
    wf_buf t;
    wf_buf_init(&t);
    bool ok = wf_value_to_text(v, &t);
    if (ok)
        wf_xmlw_text(x, t.data);
    wf_buf_fini(&t);
    return ok;
}

static bool is_kind(const wfm_node *node, const wfm_kind_spec *spec)
{
    return wfm_kind_spec_of(wfm_node_kind(node)) == spec;
}

static wf_status params_of(const wfm_node *node, unsigned prop, wfm_msg_param **out,
                           size_t *count)
{
    size_t n = wfm_node_count(node, prop);
    *out = n ? wf_calloc(n, sizeof **out) : NULL;
    if (n && !*out)
        return WF_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        (*out)[i] = (wfm_msg_param){wfm_node_param_key(node, prop, i),
                                    wfm_node_param_type(node, prop, i)};
    *count = n;
    return WF_OK;
}

/* The SendReply answering `receive`: the one naming it, else (none names it) the first one
 * after it in document order with no Request, before the next Receive. */
static const wfm_node *reply_of(const wfm_definition *def, const wfm_node *receive)
{
    const char *name = wfm_node_x_name(receive);
    size_t count = wfm_definition_node_count(def);
    for (size_t i = 0; name && i < count; i++) {
        const wfm_node *n = wfm_definition_node_at(def, i);
        const char *ref = is_kind(n, &sendreply_spec) ? wfm_node_data(n) : NULL;
        if (ref && strcmp(ref, name) == 0)
            return n;
    }
    for (size_t i = wfm_node_index(receive) + 1; i < count; i++) {
        const wfm_node *n = wfm_definition_node_at(def, i);
        if (is_kind(n, &receive_spec))
            return NULL;
        if (is_kind(n, &sendreply_spec) && !wfm_node_data(n))
            return n;
    }
    return NULL;
}

static wf_status op_of(const wfm_definition *def, const wfm_node *node, wfm_msg_op *op)
{
    memset(op, 0, sizeof *op);
    receive_names(node, op->contract_ns, sizeof op->contract_ns, op->contract,
                  sizeof op->contract, op->bookmark, sizeof op->bookmark);
    snprintf(op->operation, sizeof op->operation, "%s",
             wf_value_str(wfm_node_literal(node, RCV_OPERATION)));
    const wf_value *cc = wfm_node_literal(node, RCV_CAN_CREATE);
    op->can_create = cc->type->kind == WF_K_BOOL && cc->u.b;
    const wf_value *on = wfm_node_literal(node, RCV_CORRELATES_ON);
    op->correlates_on = wf_is_null(on) ? NULL : wf_value_str(on);
    const wfm_node *reply = reply_of(def, node);
    op->one_way = reply == NULL;
    if (params_of(node, RCV_CONTENT, &op->params, &op->param_count) != WF_OK)
        return WF_E_NOMEM;
    if (reply && params_of(reply, SR_CONTENT, &op->reply, &op->reply_count) != WF_OK)
        return WF_E_NOMEM;
    return WF_OK;
}

static bool same_params(const wfm_msg_op *a, const wfm_msg_op *b)
{
    if (a->param_count != b->param_count || a->can_create != b->can_create)
        return false;
    for (size_t i = 0; i < a->param_count; i++)
        if (strcmp(a->params[i].name, b->params[i].name) ||
            a->params[i].type != b->params[i].type)
            return false;
    return true;
}

wf_status wfm_msg_ops(const wfm_definition *def, wfm_msg_op **out, size_t *count, wf_error *err)
{
    *out = NULL;
    *count = 0;
    size_t nodes = wfm_definition_node_count(def), n = 0;
    wfm_msg_op *ops = NULL;
    for (size_t i = 0; i < nodes; i++) {
        const wfm_node *node = wfm_definition_node_at(def, i);
        if (!is_kind(node, &receive_spec))
            continue;
        wfm_msg_op *grown = wf_realloc(ops, (n + 1) * sizeof *ops);
        if (!grown)
            goto nomem;
        ops = grown;
        if (op_of(def, node, &ops[n++]) != WF_OK)
            goto nomem;
        for (size_t k = 0; k + 1 < n; k++) {
            if (strcmp(ops[k].bookmark, ops[n - 1].bookmark))
                continue;
            bool same = same_params(&ops[k], &ops[n - 1]);
            n--;
            wf_free(ops[n].params);
            wf_free(ops[n].reply);
            if (!same) {
                wf_loc at = wfm_node_loc(node);
                wf_error_set(err, WF_E_SCHEMA, &at,
                             "a second Receive for '%s' declares other parameters",
                             ops[k].bookmark);
                wfm_msg_ops_free(ops, n);
                return WF_E_SCHEMA;
            }
            break;
        }
    }
    *out = ops;
    *count = n;
    return WF_OK;
nomem:
    wfm_msg_ops_free(ops, n);
    return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

void wfm_msg_ops_free(wfm_msg_op *ops, size_t count)
{
    for (size_t i = 0; ops && i < count; i++) {
        wf_free(ops[i].params);
        wf_free(ops[i].reply);
    }
    wf_free(ops);
}

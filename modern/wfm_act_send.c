/* wfm_act_send.c — the outgoing messaging activities Send and ReceiveReply (WF4's
 * System.ServiceModel.Activities; docs/services.md "Send and ReceiveReply"). A Send posts its
 * message through the runtime's HTTP engine (wfm_http.h) and waits for the reply as
 * asynchronous work (wfm_ctx_async_begin): the instance is idle meanwhile and no thread waits.
 * The reply (or its absence: timeout, refused connection, HTTP error, SOAP fault) resumes the
 * Send, which keeps the reply for the ReceiveReply that names it or faults. A Send in flight
 * is a no-persist zone; the contexts the instance got from the services it called are state
 * and are saved, the replies not yet taken are not. Endpoint addresses come from the file
 * beside the definition, NAME.endpoints.json (docs/formats.md "Endpoint files"). */
#include <assert.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "../common/wf_xml.h"
#include "../common/wf_xmlw.h"
#include "wfm_activity.h"
#include "wfm_acts.h"
#include "wfm_ctx.h"
#include "wfm_http.h"
#include "wfm_msg.h"
#include "wfm_node.h"
#include "wfm_persist.h"

#define NS_SOAP            "http://schemas.xmlsoap.org/soap/envelope/"
#define NS_CONTEXT         "http://schemas.microsoft.com/ws/2006/05/context"
#define DEFAULT_TIMEOUT_MS 60000 /* WCF's default sendTimeout, one minute */

enum { SEND_MAX_CONTEXTS = 16, SEND_MAX_REPLIES = 16 };

/* ---- per-instance state ------------------------------------------------------------------- */
typedef struct send_context {
    char channel[128]; /* the ChannelToken (default: the endpoint's name or address) */
    char id[64];       /* the instance id the service answered with ("" when none) */
    char cookies[1024]; /* the cookies it set ("WscContext=...; ASP.NET_SessionId=..."), sent
                           back on the channel as a cookie-keeping client does */
} send_context;

typedef struct send_reply {
    const wfm_node *send;
    wf_value body; /* owned record; null for a fault */
    bool soap;     /* fields are XML Schema text */
    const wf_type *fault; /* the request failed: the ReceiveReply throws this */
    char *fault_message;  /* owned */
} send_reply;

typedef struct send_ext {
    uint64_t calls; /* numbers the Sends' bookmarks */
    send_context contexts[SEND_MAX_CONTEXTS];
    size_t context_count;
    send_reply replies[SEND_MAX_REPLIES];
    size_t reply_count;
} send_ext;

static void ext_fini(void *state)
{
    send_ext *x = state;
    for (size_t i = 0; i < x->reply_count; i++) {
        wf_value_release(&x->replies[i].body);
        wf_free(x->replies[i].fault_message);
    }
}

static wf_status ext_save(const void *state, wfm_persist_writer *w)
{
    const send_ext *x = state;
    wfm_persist_write_uint(w, 2); /* layout version (1: without cookies) */
    wfm_persist_write_uint(w, x->calls);
    wfm_persist_write_uint(w, x->context_count);
    for (size_t i = 0; i < x->context_count; i++) {
        wfm_persist_write_str(w, x->contexts[i].channel);
        wfm_persist_write_str(w, x->contexts[i].id);
        wfm_persist_write_str(w, x->contexts[i].cookies);
    }
    return WF_OK;
}

static wf_status ext_restore(void *state, wfm_persist_reader *r)
{
    send_ext *x = state;
    uint64_t layout = wfm_persist_read_uint(r);
    if (layout != 1 && layout != 2)
        wfm_persist_read_fail(r, "unknown layout of the Send contexts");
    x->calls = wfm_persist_read_uint(r);
    uint64_t n = wfm_persist_read_uint(r);
    if (n > SEND_MAX_CONTEXTS)
        wfm_persist_read_fail(r, "too many Send contexts");
    for (uint64_t i = 0; i < n && wfm_persist_read_ok(r); i++) {
        char *channel = wfm_persist_read_str(r), *id = wfm_persist_read_str(r);
        char *cookies = layout == 2 ? wfm_persist_read_str(r) : NULL;
        send_context *c = &x->contexts[x->context_count++];
        snprintf(c->channel, sizeof c->channel, "%s", channel ? channel : "");
        snprintf(c->id, sizeof c->id, "%s", id ? id : "");
        snprintf(c->cookies, sizeof c->cookies, "%s", cookies ? cookies : "");
        wf_free(channel);
        wf_free(id);
        wf_free(cookies);
    }
    return WF_OK;
}

static const wfm_ext_spec send_ext_spec = {"wfbridge.send", sizeof(send_ext), ext_fini, ext_save,
                                           ext_restore};
static const wfm_ext_spec *const send_exts[] = {&send_ext_spec};

/* ---- the runtime's HTTP engine ------------------------------------------------------------ */
static wf_status http_create(void **out, wf_error *err)
{
    return wfm_http_create((wfm_http **)out, err);
}

static void http_destroy(void *state)
{
    wfm_http_destroy(state);
}

static const wfm_rt_ext_spec http_rt_ext = {"wfbridge.http", http_create, http_destroy};

/* ---- endpoint files ----------------------------------------------------------------------- */
/* What a Send node knows after load (its node data). */
typedef struct send_conf {
    char ns[256], contract[128], operation[128];
    char action[512];  /* SOAPAction */
    char address[1024]; /* from the endpoint file; "" when EndpointAddress gives it */
    char channel[128];  /* the context key */
    bool json;          /* binding "json": POST ADDRESS/OPERATION with a JSON object */
    long timeout_ms;
} send_conf;

/* "dir/Name.xaml" -> "dir/Name.endpoints.json". */
static bool endpoints_path(const char *def_path, char *out, size_t size)
{
    const char *dot = strrchr(def_path, '.'), *slash = strrchr(def_path, '/');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - def_path) : strlen(def_path);
    return (size_t)snprintf(out, size, "%.*s.endpoints.json", (int)stem, def_path) < size;
}

static bool timeout_of(wfm_load *load, const char *text, long *out)
{
    wf_value v = wf_null();
    wf_error e = WF_ERROR_INIT;
    if (wf_value_parse(wfm_load_types(load), &wf_type_timespan, text, &v, &e) != WF_OK ||
        v.u.i64 <= 0)
        return false;
    *out = v.u.i64 / 1000 > 0 ? (long)(v.u.i64 / 1000) : 1;
    return true;
}

/* Fill conf->address / json / timeout_ms from endpoint `name` of the definition's endpoint
 * file; problems are load errors located in that file or at the Send. */
static void endpoint_read(wfm_load *load, const wfm_node *node, const char *name, send_conf *conf)
{
    char path[1024];
    wf_loc at = wfm_node_loc(node);
    if (!at.file || !endpoints_path(at.file, path, sizeof path)) {
        wfm_load_error(load, node, WF_E_NAME, "endpoint '%s': the definition has no file name",
                       name);
        return;
    }
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        wf_loc in = {path, je.line > 0 ? (unsigned)je.line : 1,
                     je.column > 0 ? (unsigned)je.column : 1};
        bool missing = je.line <= 0 && je.position == 0;
        wfm_load_error_at(load, node, missing ? at : in, WF_E_NAME,
                          missing ? "endpoint '%s': cannot read the endpoint file %s"
                                  : "endpoint '%s': malformed endpoint file %s: %s",
                          name, path, missing ? "" : je.text);
        return;
    }
    json_t *ep = json_object_get(json_object_get(root, "endpoints"), name);
    const char *address = json_string_value(json_object_get(ep, "address"));
    const char *binding = json_string_value(json_object_get(ep, "binding"));
    const char *timeout = json_string_value(json_object_get(ep, "sendTimeout"));
    if (!ep)
        wfm_load_error(load, node, WF_E_NAME, "no endpoint '%s' in %s", name, path);
    else if (!address || (strncmp(address, "http://", 7) && strncmp(address, "https://", 8)))
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "endpoint '%s' in %s needs an \"address\" (http:// or https://)", name,
                       path);
    else if (binding && strcmp(binding, "basicHttpBinding") && strcmp(binding, "json"))
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "endpoint '%s' in %s: binding '%s' is neither basicHttpBinding nor json",
                       name, path, binding);
    else if (timeout && !timeout_of(load, timeout, &conf->timeout_ms))
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "endpoint '%s' in %s: sendTimeout '%s' is not a positive TimeSpan", name,
                       path, timeout);
    else if ((size_t)snprintf(conf->address, sizeof conf->address, "%s", address) >=
             sizeof conf->address)
        wfm_load_error(load, node, WF_E_LIMIT, "endpoint '%s': the address is too long", name);
    else
        conf->json = binding && strcmp(binding, "json") == 0;
    json_decref(root);
}

/* ---- Send --------------------------------------------------------------------------------- */
/* <p:Send x:Name="sendAdd" OperationName="Add" ServiceContractName="ICalculator"
 *         EndpointConfigurationName="CalculatorEndpoint" Timeout="00:00:05">
 *   <p:Send.Content><p:SendParametersContent>
 *     <InArgument x:TypeArguments="x:Int32" x:Key="value">[a]</InArgument> ... */
enum {
    SEND_OPERATION,
    SEND_CONTRACT,
    SEND_ACTION,
    SEND_ENDPOINT_NAME,
    SEND_ADDRESS,
    SEND_TIMEOUT,
    SEND_CHANNEL,
    SEND_CONTENT
};
static const wfm_prop_spec send_props[] = {
    {"OperationName", WFM_PROP_LITERAL, "x:String", NULL, WFM_PROP_REQUIRED, NULL},
    {"ServiceContractName", WFM_PROP_LITERAL, "x:String", NULL, WFM_PROP_REQUIRED, NULL},
    {"Action", WFM_PROP_LITERAL, "x:String", NULL, 0, NULL},
    {"EndpointConfigurationName", WFM_PROP_LITERAL, "x:String", NULL, 0, NULL},
    {"EndpointAddress", WFM_PROP_IN, "x:String", NULL, 0, NULL},
    {"Timeout", WFM_PROP_LITERAL, "x:TimeSpan", NULL, 0, NULL},
    {"ChannelToken", WFM_PROP_LITERAL, "x:String", NULL, 0, NULL},
    {"Content", WFM_PROP_PARAMS, NULL, NULL, 0, NULL},
};

static const char *literal(const wfm_node *node, unsigned prop)
{
    const wf_value *v = wfm_node_literal(node, prop);
    return wf_is_null(v) ? NULL : wf_value_str(v);
}

static void send_conf_names(wfm_load *load, const wfm_node *node, send_conf *c)
{
    const char *op = literal(node, SEND_OPERATION), *action = literal(node, SEND_ACTION);
    if (!wfm_msg_split_xname(literal(node, SEND_CONTRACT), c->ns, sizeof c->ns, c->contract,
                             sizeof c->contract) ||
        !*op || strpbrk(op, "/{} .") ||
        (size_t)snprintf(c->operation, sizeof c->operation, "%s", op) >= sizeof c->operation)
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "Send needs an OperationName (without '.') and a ServiceContractName "
                       "('{namespace}Name' or 'Name'), both without '/', '{', '}' or spaces");
    else if (action)
        snprintf(c->action, sizeof c->action, "%s", action);
    else /* WCF's default action: namespace, contract, operation */
        snprintf(c->action, sizeof c->action, "%s%s%s/%s", c->ns,
                 c->ns[0] && c->ns[strlen(c->ns) - 1] == '/' ? "" : "/", c->contract, op);
}

static wf_status send_prepare(wfm_load *load, wfm_node *node)
{
    send_conf *c = wf_calloc(1, sizeof *c);
    if (!c)
        return WF_E_NOMEM;
    wfm_node_set_data(node, c, wf_free);
    c->timeout_ms = DEFAULT_TIMEOUT_MS;
    send_conf_names(load, node, c);
    size_t n = wfm_node_count(node, SEND_CONTENT);
    for (size_t i = 0; i < n; i++) {
        const char *key = wfm_node_param_key(node, SEND_CONTENT, i);
        if (wfm_node_param_dir(node, SEND_CONTENT, i) != WFM_PROP_IN || !key || !*key)
            wfm_load_error(load, node, WF_E_SCHEMA,
                           "each parameter of a Send's content is an InArgument with x:Key");
    }
    const char *name = literal(node, SEND_ENDPOINT_NAME);
    bool has_address = wfm_node_has(node, SEND_ADDRESS);
    if (name && !has_address) {
        if (!wfm_load_validate_only(load)) /* convert's own check: the file comes later */
            endpoint_read(load, node, name, c);
    } else if (!has_address) {
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "Send needs an EndpointConfigurationName (an endpoint of the "
                       "definition's .endpoints.json file) or an EndpointAddress");
    }
    const wf_value *timeout = wfm_node_literal(node, SEND_TIMEOUT);
    if (!wf_is_null(timeout) && timeout->u.i64 <= 0)
        wfm_load_error(load, node, WF_E_RANGE, "a Send's Timeout must be positive");
    else if (!wf_is_null(timeout))
        c->timeout_ms = timeout->u.i64 / 1000 > 0 ? (long)(timeout->u.i64 / 1000) : 1;
    const char *channel = literal(node, SEND_CHANNEL);
    snprintf(c->channel, sizeof c->channel, "%.127s", /* a longer address is still a key */
             channel ? channel : name ? name : c->address);
    return WF_OK;
}

/* The request body: a SOAP 1.1 envelope as basicHttpBinding writes it (document/literal
 * wrapped), with the service's context as a wsc:Context header once it gave one; or the
 * parameters as a JSON object (the context then goes as X-Instance-Id). The envelope goes
 * through the common writer (common/wf_xmlw.h), so a value with a control character or invalid
 * UTF-8 still makes a well-formed request; a key that is not an XML name fails (WF_E_NAME). */
static wf_status request_body(const send_conf *c, const wf_value *params, const char *id,
                              wf_buf *out, wf_error *err)
{
    if (c->json)
        return wf_value_to_json(params, out) ? WF_OK
                                             : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wf_xmlw_opts opts = WF_XMLW_OPTS_INIT;
    wf_xmlw *x = NULL;
    if (wf_xmlw_create(&opts, &x, err) != WF_OK)
        return err->code;
    wf_xmlw_open(x, "s:Envelope");
    wf_xmlw_attr(x, "xmlns:s", NS_SOAP);
    if (id && *id) {
        wf_xmlw_open(x, "s:Header");
        wf_xmlw_open(x, "Context");
        wf_xmlw_attr(x, "xmlns", NS_CONTEXT);
        wf_xmlw_open(x, "Property");
        wf_xmlw_attr(x, "name", "instanceId");
        wf_xmlw_text(x, id);
        wf_xmlw_close(x);
        wf_xmlw_close(x);
        wf_xmlw_close(x);
    }
    wf_xmlw_open(x, "s:Body");
    wf_xmlw_open(x, c->operation);
    wf_xmlw_attr(x, "xmlns", c->ns);
    bool ok = true;
    for (size_t i = 0; ok && i < wf_value_record_count(params); i++) {
        const wf_value *v = wf_value_record_at(params, i);
        wf_xmlw_open(x, wf_value_record_key(params, i));
        if (wf_is_null(v)) {
            wf_xmlw_attr(x, "i:nil", "true");
            wf_xmlw_attr(x, "xmlns:i", "http://www.w3.org/2001/XMLSchema-instance");
        } else {
            ok = wfm_msg_xsd_text(x, v);
        }
        wf_xmlw_close(x);
    }
    wf_xmlw_close(x);
    wf_xmlw_close(x);
    wf_xmlw_close(x);
    wf_status st =
        ok ? wf_xmlw_finish(x, out, err) : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wf_xmlw_destroy(x);
    return st;
}

/* A request on its way: the HTTP thread's side. */
typedef struct send_call {
    wfm_async *async;
    char url[1100];
} send_call;

/* On the HTTP thread: the outcome as the Send's resume payload. */
static void send_done(void *ud, const wfm_http_reply *reply)
{
    send_call *call = ud;
    static const char *const keys[] = {"error", "message",    "status",
                                       "body",  "instanceId", "url", "cookies"};
    wf_value values[7] = {wf_int32((int32_t)reply->error), wf_null(),
                          wf_int32((int32_t)reply->status)};
    bool ok = wf_value_cstring(reply->message, &values[1]) == WF_OK &&
              wf_value_string(reply->body, reply->len, &values[3]) == WF_OK &&
              wf_value_cstring(reply->instance_id, &values[4]) == WF_OK &&
              wf_value_cstring(call->url, &values[5]) == WF_OK &&
              wf_value_cstring(reply->cookies, &values[6]) == WF_OK;
    wf_value payload = wf_null();
    if (ok && wf_value_record(keys, values, 7, &payload) != WF_OK)
        payload = wf_null(); /* the Send reports the missing reply */
    for (size_t i = 0; i < 7; i++)
        if (values[i].type)
            wf_value_release(&values[i]);
    wfm_async_complete(call->async, payload);
    wf_free(call);
}

static void send_resumed(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload);

/* The context kept for `channel`, NULL when the service gave none yet. */
static const send_context *send_context_of(const send_ext *x, const char *channel)
{
    for (size_t i = 0; i < x->context_count; i++)
        if (strcmp(x->contexts[i].channel, channel) == 0)
            return &x->contexts[i];
    return NULL;
}

/* Start the request: the Send waits on bookmark "$send/N" until send_done completes it. */
static void send_start(wfm_ctx *ctx, wfm_ai *ai, send_ext *x, const char *address,
                       const char *id, const char *cookies, const wf_buf *body)
{
    const send_conf *c = wfm_node_data(wfm_ai_node(ai));
    wf_error err = WF_ERROR_INIT;
    wfm_http *http = wfm_ctx_runtime_ext(ctx, &http_rt_ext, &err);
    send_call *call = wf_calloc(1, sizeof *call);
    char mark[64];
    snprintf(mark, sizeof mark, "$send/%llu", (unsigned long long)++x->calls);
    if (!http || !call || wfm_ctx_async_begin(ctx, ai, mark, send_resumed, &call->async)) {
        wf_free(call);
        if (!http && err.code != WF_E_NOMEM)
            wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "Send: %s", err.message);
        else
            wfm_ctx_nomem(ctx);
        return;
    }
    int n = snprintf(call->url, sizeof call->url, "%s%s%s", address, c->json ? "/" : "",
                     c->json ? c->operation : "");
    assert(n >= 0 && (size_t)n < sizeof call->url); /* send_execute checked the length */
    wfm_http_request req = {call->url,
                            c->json ? "application/json" : "text/xml; charset=utf-8",
                            c->json ? NULL : c->action,
                            id,
                            cookies,
                            body->data,
                            body->len,
                            c->timeout_ms};
    if (wfm_http_post(http, &req, send_done, call, &err) != WF_OK) {
        wfm_async_complete(call->async, wf_null()); /* resumes the Send: no reply */
        wf_free(call);
    }
}

static void send_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const send_conf *c = wfm_node_data(wfm_ai_node(ai));
    send_ext *x = wfm_ctx_ext_get(ctx, &send_ext_spec);
    if (!x) {
        wfm_ctx_nomem(ctx);
        return;
    }
    wf_value address = wf_null(), params = wf_null();
    if (wfm_node_has(wfm_ai_node(ai), SEND_ADDRESS) &&
        wfm_ctx_get(ctx, ai, SEND_ADDRESS, &address) != WF_OK)
        return;
    if (wfm_msg_params_record(ctx, ai, SEND_CONTENT, &params) != WF_OK) {
        wf_value_release(&address);
        return;
    }
    /* The context goes back the way the service gave it, as WCF's context channel does: its
     * cookies when it set some (basicHttpContextBinding, an ASMX session), else its id as a
     * wsc:Context header (SOAP) or X-Instance-Id (JSON). */
    const send_context *context = send_context_of(x, c->channel);
    const char *cookies = context && *context->cookies ? context->cookies : NULL;
    const char *id = context && !cookies ? context->id : NULL;
    const char *to = wf_is_null(&address) ? c->address : wf_value_str(&address);
    wf_buf body;
    wf_buf_init(&body);
    wf_error err = WF_ERROR_INIT;
    size_t url_len = strlen(to) + (c->json ? 1 + strlen(c->operation) : 0);
    if (url_len >= sizeof((send_call *)NULL)->url)
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "Send: the request URL is longer than %zu bytes",
                      sizeof((send_call *)NULL)->url - 1);
    else if (request_body(c, &params, id, &body, &err) == WF_E_NOMEM)
        wfm_ctx_nomem(ctx);
    else if (err.code)
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation, "Send: %s", err.message);
    else
        send_start(ctx, ai, x, to, id, cookies, &body);
    wf_buf_fini(&body);
    wf_value_release(&params);
    wf_value_release(&address);
}

/* Why a request got no usable reply: the exception its ReceiveReply (or a one-way Send)
 * throws. */
typedef struct send_fault {
    const wf_type *type; /* NULL: none */
    char message[512];
} send_fault;

static void fault_set(send_fault *f, const wf_type *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fault_set(send_fault *f, const wf_type *type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
    f->type = type;
}

/* Exception types of WCF's client side, declared on first use. */
static const wf_type *wcf_exception(wfm_ctx *ctx, const char *name)
{
    const wf_type *comm = NULL, *t = NULL;
    wf_types *types = wfm_ctx_types(ctx);
    if (wf_types_exception(types, "CommunicationException", &wf_exc_system, &comm, NULL) != WF_OK)
        return &wf_exc_system;
    if (strcmp(name, "CommunicationException") == 0)
        return comm;
    return wf_types_exception(types, name, comm, &t, NULL) == WF_OK ? t : comm;
}

static const wf_xml_node *soap_child(const wf_xml_node *n, const char *name)
{
    for (const wf_xml_node *c = n ? n->first_child : NULL; c; c = c->next)
        if (c->ns && strcmp(c->ns, NS_SOAP) == 0 && strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static const char *child_text(const wf_xml_node *n, const char *name)
{
    for (const wf_xml_node *c = n ? n->first_child : NULL; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c->text;
    return "";
}

/* The wrapper's children as a record of their texts (xsi:nil: null). */
static bool wrapper_record(const wf_xml_node *wrapper, wf_value *out)
{
    const char *keys[64];
    wf_value values[64];
    size_t n = 0;
    bool ok = true;
    for (const wf_xml_node *c = wrapper->first_child; c && n < 64 && ok; c = c->next) {
        const wf_xml_attr *nil =
            wf_xml_attr_find(c, "http://www.w3.org/2001/XMLSchema-instance", "nil");
        keys[n] = c->name;
        if (nil && strcmp(nil->value, "true") == 0)
            values[n++] = wf_null();
        else
            ok = wf_value_cstring(c->text, &values[n++]) == WF_OK;
    }
    if (!ok)
        n--;
    ok = ok && wf_value_record(keys, values, n, out) == WF_OK;
    for (size_t i = 0; i < n; i++)
        wf_value_release(&values[i]);
    return ok;
}

/* The instance id of a wsHttpContextBinding reply's header <Context xmlns=NS_CONTEXT>
 * <Property name="instanceId">ID</Property></Context> (WCF's ContextMessageHeader) into id. */
static void header_context(const wf_xml_node *env, char *id, size_t size)
{
    const wf_xml_node *header = soap_child(env, "Header");
    for (const wf_xml_node *h = header ? header->first_child : NULL; h; h = h->next) {
        if (!h->ns || strcmp(h->ns, NS_CONTEXT) != 0 || strcmp(h->name, "Context") != 0)
            continue;
        for (const wf_xml_node *p = h->first_child; p; p = p->next) {
            const wf_xml_attr *name = wf_xml_attr_find(p, NULL, "name");
            if (strcmp(p->name, "Property") == 0 && name &&
                strcmp(name->value, "instanceId") == 0 && strlen(p->text) < size)
                snprintf(id, size, "%s", p->text);
        }
    }
}

/* A SOAP reply: its wrapper's fields and the context its header carries (into id), or a fault
 * thrown. False when the Send was faulted. */
static bool soap_reply(wfm_ctx *ctx, wfm_ai *ai, const char *url, long status, const char *body,
                       size_t len, wf_value *out, char *id, size_t id_size, send_fault *f)
{
    const send_conf *c = wfm_node_data(wfm_ai_node(ai));
    wf_xml_doc *doc = NULL;
    wf_error e = WF_ERROR_INIT;
    wf_xml_load_mem("reply", body, len, NULL, &doc, &e);
    const wf_xml_node *env = doc ? wf_xml_root(doc) : NULL;
    const wf_xml_node *sbody = soap_child(env, "Body");
    const wf_xml_node *wrapper = sbody ? sbody->first_child : NULL;
    const wf_xml_node *fault = soap_child(sbody, "Fault");
    bool ok = false;
    if (fault)
        fault_set(f, wcf_exception(ctx, "FaultException"), "%s",
                      child_text(fault, "faultstring"));
    else if (status < 200 || status > 299)
        fault_set(f, wcf_exception(ctx, "CommunicationException"),
                      "%s.%s: %s answered HTTP %ld", c->contract, c->operation, url, status);
    else if (!wrapper)
        fault_set(f, wcf_exception(ctx, "CommunicationException"),
                      "%s.%s: the reply from %s is not a SOAP 1.1 envelope with a body%s%s",
                      c->contract, c->operation, url, doc ? "" : ": ", doc ? "" : e.message);
    else if (!(ok = wrapper_record(wrapper, out)))
        wfm_ctx_nomem(ctx);
    if (ok)
        header_context(env, id, id_size);
    wf_xml_doc_destroy(doc);
    return ok;
}

/* A JSON reply: its object, or {"fault": {"code", "message"}} thrown. */
static bool json_reply(wfm_ctx *ctx, wfm_ai *ai, const char *url, long status, const char *body,
                       size_t len, wf_value *out, send_fault *f)
{
    const send_conf *c = wfm_node_data(wfm_ai_node(ai));
    wf_error e = WF_ERROR_INIT;
    bool parsed = wf_json_parse(wfm_ctx_types(ctx), body, len, out, &e) == WF_OK &&
                  out->type->kind == WF_K_RECORD;
    const wf_value *fault = parsed ? wf_value_record_get(out, "fault") : NULL;
    if (fault)
        fault_set(f, wcf_exception(ctx, "FaultException"), "%s",
                      wf_value_str(wf_value_record_get(fault, "message")));
    else if (status < 200 || status > 299 || !parsed)
        fault_set(f, wcf_exception(ctx, "CommunicationException"),
                      "%s.%s: %s answered HTTP %ld%s", c->contract, c->operation, url, status,
                      parsed ? "" : " without a JSON object");
    if (fault || status < 200 || status > 299 || !parsed) {
        wf_value_release(out);
        *out = wf_null();
        return false;
    }
    return true;
}

/* No reply: the transport's reason as a fault. */
static void send_failed(wfm_ctx *ctx, wfm_ai *ai, int error, const char *message, const char *url,
                        send_fault *f)
{
    const send_conf *c = wfm_node_data(wfm_ai_node(ai));
    if (error == WFM_HTTP_TIMEOUT)
        fault_set(f, &wf_exc_timeout,
                      "%s.%s: no reply from %s within %ld ms (the Send's timeout)", c->contract,
                      c->operation, url, c->timeout_ms);
    else if (error == WFM_HTTP_UNREACHABLE)
        fault_set(f, wcf_exception(ctx, "EndpointNotFoundException"),
                      "%s.%s: there was no endpoint listening at %s: %s", c->contract,
                      c->operation, url, message);
    else
        fault_set(f, wcf_exception(ctx, "CommunicationException"),
                      "%s.%s: the request to %s failed: %s", c->contract, c->operation, url,
                      message);
}

static int32_t field_int(const wf_value *rec, const char *key)
{
    const wf_value *v = wf_value_record_get(rec, key);
    return v && v->type->kind == WF_K_INT32 ? v->u.i32 : 0;
}

static const char *field_str(const wf_value *rec, const char *key)
{
    const wf_value *v = wf_value_record_get(rec, key);
    return v ? wf_value_str(v) : "";
}

/* The pair after the one at p ("a=1; b=2": "b=2"), "" after the last. */
static const char *next_pair(const char *p)
{
    p += strcspn(p, ";");
    p += *p ? 1 : 0;
    return p + strspn(p, " ");
}

/* Whether the pairs `list` hold a cookie named like the pair at p. */
static bool names_cookie(const char *list, const char *p)
{
    size_t name = strcspn(p, "=;");
    for (const char *q = list; *q; q = next_pair(q))
        if (strcspn(q, "=;") == name && strncmp(q, p, name) == 0)
            return true;
    return false;
}

/* Cookie pairs `add` ("a=1; b=2") into `jar`: a pair replaces the one of the same name, as
 * a client's cookie store does. False (jar unchanged) when the result would not fit. */
static bool merge_cookies(char *jar, size_t size, const char *add)
{
    char out[sizeof ((send_context *)0)->cookies] = "";
    size_t used = 0;
    for (int pass = 0; pass < 2; pass++) { /* the kept pairs not replaced, then the new ones */
        for (const char *p = pass ? add : jar; *p; p = next_pair(p)) {
            if (!pass && names_cookie(add, p))
                continue;
            int n = snprintf(out + used, sizeof out - used, "%s%.*s", used ? "; " : "",
                             (int)strcspn(p, ";"), p);
            if (n < 0 || (size_t)n >= sizeof out - used)
                return false;
            used += (size_t)n;
        }
    }
    snprintf(jar, size, "%s", out);
    return true;
}

/* Keep the context the service answered with for the Send's channel: its instance id
 * (X-Instance-Id, a Context header) and its cookies. */
static void keep_context(send_ext *x, const char *channel, const char *id, const char *cookies)
{
    if (!*id && !*cookies)
        return;
    size_t i = 0;
    while (i < x->context_count && strcmp(x->contexts[i].channel, channel) != 0)
        i++;
    if (i == SEND_MAX_CONTEXTS)
        i = SEND_MAX_CONTEXTS - 1; /* the last channel gives way */
    else if (i == x->context_count) {
        x->context_count++;
        memset(&x->contexts[i], 0, sizeof x->contexts[i]);
    }
    send_context *c = &x->contexts[i];
    snprintf(c->channel, sizeof c->channel, "%s", channel);
    if (*id)
        snprintf(c->id, sizeof c->id, "%s", id);
    if (*cookies && !merge_cookies(c->cookies, sizeof c->cookies, cookies))
        snprintf(c->cookies, sizeof c->cookies, "%s", cookies); /* the newest only */
}

/* Whether a ReceiveReply in the tree below n takes the reply of the Send named send_name
 * (it names that Send, or names none: the latest reply). Tree edges only, so x:Reference
 * cycles (Flowchart) are not followed. */
static bool takes_reply(const wfm_node *n, const char *send_name)
{
    const wfm_kind_spec *spec = wfm_kind_spec_of(wfm_node_kind(n));
    if (strcmp(spec->name, "ReceiveReply") == 0 && spec->ns &&
        strcmp(spec->ns, WFM_NS_SERVICEMODEL) == 0) {
        const char *name = wfm_node_data(n);
        return !name || (send_name && strcmp(name, send_name) == 0);
    }
    for (unsigned p = 0; p < spec->prop_count; p++) {
        wfm_prop_kind k = spec->props[p].kind;
        bool one = k == WFM_PROP_ACTIVITY || k == WFM_PROP_NODE || k == WFM_PROP_DELEGATE;
        bool many = k == WFM_PROP_ACTIVITIES || k == WFM_PROP_NODES || k == WFM_PROP_KEYED;
        size_t count = one ? 1 : many ? wfm_node_count(n, p) : 0;
        for (size_t i = 0; i < count; i++) {
            const wfm_node *child = one ? wfm_node_child(n, p) : wfm_node_at(n, p, i);
            if (child && wfm_node_parent(child) == n && takes_reply(child, send_name))
                return true;
        }
    }
    return false;
}

/* A request-reply Send (a ReceiveReply takes its reply), not a one-way one. */
static bool is_two_way(const wfm_node *send)
{
    const wfm_node *root = send;
    while (wfm_node_parent(root))
        root = wfm_node_parent(root);
    return takes_reply(root, wfm_node_x_name(send));
}

/* Keep the reply (or the fault in its place) for the ReceiveReply; the Send completes. */
static void keep_reply(wfm_ctx *ctx, wfm_ai *ai, send_ext *x, send_reply r)
{
    if (x->reply_count == SEND_MAX_REPLIES) {
        wf_value_release(&r.body);
        wf_free(r.fault_message);
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "Send: more than %d replies wait for their ReceiveReply", SEND_MAX_REPLIES);
        return;
    }
    x->replies[x->reply_count++] = r;
    wfm_ctx_complete(ctx, ai);
}

/* As in WF4: a request-reply Send completes and its ReceiveReply faults; a one-way Send
 * faults itself. */
static void deliver_fault(wfm_ctx *ctx, wfm_ai *ai, send_ext *x, const send_fault *f)
{
    if (!is_two_way(wfm_ai_node(ai))) {
        wfm_ctx_throw(ctx, ai, f->type, "%s", f->message);
        return;
    }
    send_reply r = {wfm_ai_node(ai), wf_null(), false, f->type, wf_strdup(f->message)};
    if (!r.fault_message)
        wfm_ctx_nomem(ctx);
    else
        keep_reply(ctx, ai, x, r);
}

static void send_resumed(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)
{
    const send_conf *c = wfm_node_data(wfm_ai_node(ai));
    send_ext *x = wfm_ctx_ext_get(ctx, &send_ext_spec);
    if (!x || wf_is_null(payload)) {
        wfm_ctx_nomem(ctx);
        return;
    }
    int32_t error = field_int(payload, "error");
    const char *url = field_str(payload, "url");
    send_fault f = {NULL, ""};
    wf_value reply = wf_null();
    char id[64];
    snprintf(id, sizeof id, "%s", field_str(payload, "instanceId"));
    bool ok = false;
    if (error != WFM_HTTP_OK) {
        send_failed(ctx, ai, error, field_str(payload, "message"), url, &f);
    } else {
        const wf_value *body = wf_value_record_get(payload, "body");
        long status = field_int(payload, "status");
        ok = c->json ? json_reply(ctx, ai, url, status, wf_value_str(body),
                                  wf_value_str_len(body), &reply, &f)
                     : soap_reply(ctx, ai, url, status, wf_value_str(body),
                                  wf_value_str_len(body), &reply, id, sizeof id, &f);
    }
    if (f.type)
        deliver_fault(ctx, ai, x, &f);
    if (!ok)
        return; /* a fault delivered, or out of memory (reported) */
    keep_context(x, c->channel, id, field_str(payload, "cookies"));
    keep_reply(ctx, ai, x, (send_reply){wfm_ai_node(ai), reply, !c->json, NULL, NULL});
}

static const void *const send_callbacks[] = {(const void *)send_resumed};

static const wfm_kind_spec send_spec = {
    .name = "Send",
    .ns = WFM_NS_SERVICEMODEL,
    .category = "Activity",
    .flags = WFM_KIND_CAN_IDLE | WFM_KIND_NO_PERSIST,
    .props = send_props,
    .prop_count = sizeof send_props / sizeof send_props[0],
    .prepare = send_prepare,
    .execute = send_execute,
    .callbacks = send_callbacks,
    .callback_count = 1,
    .exts = send_exts,
    .ext_count = 1,
};

/* ---- ReceiveReply ------------------------------------------------------------------------- */
/* <p:ReceiveReply Request="{x:Reference sendAdd}"><p:ReceiveReply.Content>
 *   <p:ReceiveParametersContent><OutArgument x:TypeArguments="x:Int32" x:Key="AddResult">[r]
 * The node data is the referenced Send's x:Name (NULL: the latest reply). */
enum { RR_CONTENT };
static const wfm_prop_spec receivereply_props[] = {
    {"Content", WFM_PROP_PARAMS, NULL, NULL, 0, NULL},
};

static wf_status receivereply_prepare(wfm_load *load, wfm_node *node)
{
    size_t n = wfm_node_count(node, RR_CONTENT);
    for (size_t i = 0; i < n; i++) {
        const char *key = wfm_node_param_key(node, RR_CONTENT, i);
        if (wfm_node_param_dir(node, RR_CONTENT, i) != WFM_PROP_OUT || !key || !*key)
            wfm_load_error(load, node, WF_E_SCHEMA,
                           "each parameter of a ReceiveReply's content is an OutArgument with "
                           "x:Key");
    }
    const char *request = wfm_load_claim_attr(load, node, "Request");
    if (!request)
        return WF_OK;
    char *name = wfm_msg_reference_name(request);
    if (!name)
        wfm_load_error(load, node, WF_E_SCHEMA,
                       "ReceiveReply's Request is '{x:Reference NAME}' naming its Send");
    else
        wfm_node_set_data(node, name, wf_free);
    return WF_OK;
}

static int find_reply(const send_ext *x, const char *send_name)
{
    for (size_t i = x->reply_count; i-- > 0;) {
        const char *n = wfm_node_x_name(x->replies[i].send);
        if (!send_name || (n && strcmp(n, send_name) == 0))
            return (int)i;
    }
    return -1;
}

/* Field `index` of the reply into parameter `index` (absent: default(T), as WCF leaves it). */
static bool take_field(wfm_ctx *ctx, wfm_ai *ai, const send_reply *r, size_t index)
{
    const wfm_node *node = wfm_ai_node(ai);
    const char *key = wfm_node_param_key(node, RR_CONTENT, index);
    const wf_type *t = wfm_node_param_type(node, RR_CONTENT, index);
    const wf_value *given = wf_value_record_get(&r->body, key);
    wf_value v = wf_null();
    wf_error e = WF_ERROR_INIT;
    wf_status st = !given           ? (v = wf_type_default(t), WF_OK)
                   : wf_is_null(given) ? WF_OK
                   : r->soap           ? wf_value_parse(wfm_ctx_types(ctx), t, wf_value_str(given),
                                                        &v, &e)
                                       : wf_value_convert(given, t, &v, &e);
    if (st != WF_OK) {
        wfm_ctx_throw(ctx, ai, &wf_exc_format, "ReceiveReply: the reply's '%s' is not %s: %s",
                      key, t->name, e.message);
        return false;
    }
    st = wfm_ctx_set_param(ctx, ai, RR_CONTENT, index, &v);
    wf_value_release(&v);
    return st == WF_OK;
}

static void receivereply_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    const char *send_name = wfm_node_data(wfm_ai_node(ai));
    send_ext *x = wfm_ctx_ext_get(ctx, &send_ext_spec);
    if (!x) {
        wfm_ctx_nomem(ctx);
        return;
    }
    int at = find_reply(x, send_name);
    if (at < 0) {
        wfm_ctx_throw(ctx, ai, &wf_exc_invalid_operation,
                      "ReceiveReply: no reply of Send '%s' waits (a Send's reply lives until "
                      "the instance is persisted)",
                      send_name ? send_name : "(any)");
        return;
    }
    send_reply r = x->replies[at];
    x->replies[at] = x->replies[--x->reply_count];
    if (r.fault) { /* the request failed: its fault is the ReceiveReply's, as in WF4 */
        wfm_ctx_throw(ctx, ai, r.fault, "%s", r.fault_message);
        wf_free(r.fault_message);
        return;
    }
    bool ok = true;
    size_t n = wfm_node_count(wfm_ai_node(ai), RR_CONTENT);
    for (size_t i = 0; i < n && ok; i++)
        ok = take_field(ctx, ai, &r, i);
    wf_value_release(&r.body);
    if (ok)
        wfm_ctx_complete(ctx, ai);
}

static const wfm_kind_spec receivereply_spec = {
    .name = "ReceiveReply",
    .ns = WFM_NS_SERVICEMODEL,
    .category = "Activity",
    .props = receivereply_props,
    .prop_count = 1,
    .prepare = receivereply_prepare,
    .execute = receivereply_execute,
    .exts = send_exts,
    .ext_count = 1,
};

wf_status wfm_act_send_register(wfm_catalogue *cat, wf_error *err)
{
    wf_status st = wfm_catalogue_register(cat, &send_spec, err);
    return st == WF_OK ? wfm_catalogue_register(cat, &receivereply_spec, err) : st;
}

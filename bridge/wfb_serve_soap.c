/* wfb_serve_soap.c — the wire forms of `wfbridge serve` (docs/services.md "Wire format"): SOAP
 * 1.1 document/literal wrapped as WCF's basicHttpBinding writes it, the JSON form, the WSDL of
 * an endpoint, and the context exchange of basicHttpContextBinding (the WscContext cookie: the
 * quoted base64 of a wsc:Context header; the same header in the SOAP envelope; X-Instance-Id). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../common/wf_jsonw.h"
#include "../common/wf_xml.h"
#include "../common/wf_xmlw.h"
#include "wfb_serve.h"

#define NS_SOAP    "http://schemas.xmlsoap.org/soap/envelope/"
#define NS_CONTEXT "http://schemas.microsoft.com/ws/2006/05/context"

/* ---- context ------------------------------------------------------------------------------ */
static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static bool b64_encode(const char *in, size_t len, wf_buf *out)
{
    bool ok = true;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)in[i] << 16;
        v |= i + 1 < len ? (uint32_t)(unsigned char)in[i + 1] << 8 : 0;
        v |= i + 2 < len ? (uint32_t)(unsigned char)in[i + 2] : 0;
        char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], i + 1 < len ? b64[(v >> 6) & 63] : '=',
                     i + 2 < len ? b64[v & 63] : '='};
        ok = ok && wf_buf_add(out, q, 4);
    }
    return ok;
}

static bool b64_decode(const char *in, size_t len, char *out, size_t size)
{
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len && in[i] != '='; i++) {
        const char *p = strchr(b64, in[i]);
        if (!p || !in[i])
            return false;
        acc = (acc << 6) | (uint32_t)(p - b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n + 1 >= size)
                return false;
            out[n++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[n] = '\0';
    return true;
}

bool wfb_context_cookie(const char *instance, wf_buf *out)
{
    char xml[256];
    int n = snprintf(xml, sizeof xml,
                     "<Context xmlns=\"" NS_CONTEXT "\"><Property name=\"instanceId\">%s"
                     "</Property></Context>",
                     instance);
    return wf_buf_addc(out, '"') && b64_encode(xml, (size_t)n, out) && wf_buf_addc(out, '"');
}

static bool is_instance_id(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= 32 && strspn(s, "0123456789abcdefABCDEF") == n;
}

/* The X-Instance-Id header (clients without cookies) into call->instance. */
static void context_from_header(wfb_call *call, const char *header)
{
    if (header && is_instance_id(header))
        memcpy(call->instance, header, strlen(header) + 1); /* <= 32 */
}

/* The instanceId property of a wsc:Context element into call->instance. */
static void context_from_element(wfb_call *call, const wf_xml_node *ctx)
{
    for (const wf_xml_node *p = ctx->first_child; p; p = p->next) {
        const wf_xml_attr *name = wf_xml_attr_find(p, NULL, "name");
        char id[33];
        size_t len;
        const char *t = p->text;
        while (*t == ' ' || *t == '\n' || *t == '\t' || *t == '\r')
            t++;
        len = strcspn(t, " \t\r\n");
        if (name && strcmp(name->value, "instanceId") == 0 && len < sizeof call->instance) {
            memcpy(id, t, len);
            id[len] = '\0';
            if (is_instance_id(id))
                memcpy(call->instance, id, len + 1);
        }
    }
}

static void context_from_cookie(wfb_call *call, const char *cookie)
{
    char xml[512];
    size_t len = strlen(cookie);
    if (len >= 2 && cookie[0] == '"' && cookie[len - 1] == '"')
        cookie++, len -= 2;
    if (!b64_decode(cookie, len, xml, sizeof xml))
        return;
    wf_xml_doc *doc = NULL;
    if (wf_xml_load_mem("WscContext", xml, strlen(xml), NULL, &doc, NULL) != WF_OK)
        return;
    const wf_xml_node *root = wf_xml_root(doc);
    if (root->ns && strcmp(root->ns, NS_CONTEXT) == 0 && strcmp(root->name, "Context") == 0)
        context_from_element(call, root);
    wf_xml_doc_destroy(doc);
}

/* ---- responses ------------------------------------------------------------------------------ */
static void start_response(wfb_call *call, unsigned http)
{
    call->http_status = http;
    wf_buf_reset(&call->out);
    call->content_type = call->form == WFB_SOAP ? "text/xml; charset=utf-8" : "application/json";
    call->answered = true;
}

/* A JSON body from a tree (taken; NULL when memory ran out, which marks the body oom). */
static void body_json(wf_buf *o, json_t *body)
{
    if (!body)
        o->oom = true;
    else
        wf_jsonw_dump(body, WF_JSONW_SPACED, o);
    json_decref(body);
}

/* SOAP bodies are written by the common writer (common/wf_xmlw.h), so a reply is well-formed
 * whatever its values hold. This is the serve path, but (b) of bench_services sends JSON and
 * never comes here; a SOAP reply costs about 2 us of CPU more than the hand-written text did
 * (a 1-field reply, 200,000 in a loop), against some 50 us a request takes. */
typedef void (*soap_body_fn)(wf_xmlw *x, const wfb_call *call, const void *ud);

/* <s:Envelope><s:Body>what body writes</s:Body></s:Envelope> into o; false when it cannot
 * be written (no memory, a name that is not an XML name). */
static bool soap_envelope(wf_buf *o, soap_body_fn body, const wfb_call *call, const void *ud)
{
    wf_xmlw_opts opts = WF_XMLW_OPTS_INIT;
    opts.html = true; /* end tags as before: <AResponse ...></AResponse>, nil values void */
    wf_xmlw *x = NULL;
    if (wf_xmlw_create(&opts, &x, NULL) != WF_OK)
        return false;
    wf_xmlw_open(x, "s:Envelope");
    wf_xmlw_attr(x, "xmlns:s", NS_SOAP);
    wf_xmlw_open(x, "s:Body");
    body(x, call, ud);
    wf_xmlw_close(x);
    wf_xmlw_close(x);
    bool ok = wf_xmlw_finish(x, o, NULL) == WF_OK;
    wf_xmlw_destroy(x);
    return ok;
}

typedef struct fault {
    const char *code, *message;
} fault;

static void fault_body(wf_xmlw *x, const wfb_call *call, const void *ud)
{
    (void)call;
    const fault *f = ud;
    wf_xmlw_open(x, "s:Fault");
    wf_xmlw_open(x, "faultcode");
    wf_xmlw_textf(x, "s:%s", f->code);
    wf_xmlw_close(x);
    wf_xmlw_open(x, "faultstring");
    wf_xmlw_attr(x, "xml:lang", "en-US");
    wf_xmlw_text(x, f->message);
    wf_xmlw_close(x);
    wf_xmlw_close(x);
}

void wfb_respond_fault(wfb_call *call, unsigned http, const char *code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    start_response(call, http);
    wf_buf *o = &call->out;
    if (call->form == WFB_JSON) {
        body_json(o, json_pack("{s:{s:o, s:o}}", "fault", "code", wf_jsonw_str(code), "message",
                               wf_jsonw_str(msg)));
        return;
    }
    fault f = {code, msg};
    o->oom |= !soap_envelope(o, fault_body, call, &f);
}

static void reply_body(wf_xmlw *x, const wfb_call *call, const void *ud)
{
    const wf_value *reply = ud;
    char name[200];
    snprintf(name, sizeof name, "%sResponse", call->op->operation);
    wf_xmlw_open(x, name);
    wf_xmlw_attr(x, "xmlns", call->ep->contract_ns);
    size_t n = reply ? wf_value_record_count(reply) : 0;
    for (size_t i = 0; i < n; i++) {
        const wf_value *v = wf_value_record_at(reply, i);
        wf_xmlw_open(x, wf_value_record_key(reply, i));
        if (wf_is_null(v)) {
            wf_xmlw_attr(x, "i:nil", "true");
            wf_xmlw_attr(x, "xmlns:i", "http://www.w3.org/2001/XMLSchema-instance");
            wf_xmlw_close_void(x);
        } else {
            if (!wfm_msg_xsd_text(x, v))
                wf_xmlw_close_void(x); /* out of memory: the unbalanced writer reports it */
            wf_xmlw_close(x);
        }
    }
    wf_xmlw_close(x);
}

void wfb_respond_reply(wfb_call *call, const wf_value *reply)
{
    start_response(call, 200);
    wf_buf *o = &call->out;
    if (call->form == WFB_JSON) {
        body_json(o, !reply || wf_is_null(reply) ? json_object() : wf_jsonw_value(reply, false));
        return;
    }
    if (!soap_envelope(o, reply_body, call, reply))
        wfb_respond_fault(call, 500, "Server", "the reply to %s cannot be written as XML",
                          call->op->operation);
}

/* ---- requests ------------------------------------------------------------------------------- */
static const wfm_msg_op *find_op(const wfb_endpoint *ep, const char *name, size_t len)
{
    for (size_t i = 0; i < ep->op_count; i++)
        if (strlen(ep->ops[i].operation) == len && memcmp(ep->ops[i].operation, name, len) == 0)
            return &ep->ops[i];
    return NULL;
}

/* The record of parameters plus the request id; a missing parameter gets default(T), as
 * WCF's deserializer leaves it. */
static bool build_payload(wfb_call *call, const wf_value *given)
{
    const wfm_msg_op *op = call->op;
    size_t n = op->param_count;
    const char *keys[65];
    wf_value values[65];
    if (n > 64)
        n = 64;
    size_t k = 0;
    bool ok = true;
    for (; k < n && ok; k++) {
        keys[k] = op->params[k].name;
        const wf_value *v = wf_value_record_get(given, op->params[k].name);
        wf_error e = WF_ERROR_INIT;
        if (!v) {
            values[k] = wf_type_default(op->params[k].type);
        } else if (wf_value_convert(v, op->params[k].type, &values[k], &e) != WF_OK) {
            wfb_respond_fault(call, 400, "Client", "parameter '%s' of %s: %s", keys[k],
                              op->operation, e.message);
            ok = false;
        }
    }
    if (!ok)
        k--;
    if (ok) {
        keys[k] = WFM_MSG_REQUEST;
        values[k++] = wf_int64(call->request);
        if (wf_value_record(keys, values, k, &call->payload) != WF_OK) {
            wfb_respond_fault(call, 500, "Server", "out of memory");
            ok = false;
        }
    }
    for (size_t i = 0; i < k; i++)
        wf_value_release(&values[i]);
    return ok;
}

/* The wrapper's children as a record of strings parsed to the parameter types. */
static bool soap_params(wfb_call *call, const wf_xml_node *wrapper)
{
    const wfm_msg_op *op = call->op;
    const char *keys[64];
    wf_value values[64];
    size_t n = 0;
    bool ok = true;
    for (const wf_xml_node *c = wrapper->first_child; c && n < 64 && ok; c = c->next) {
        const wfm_msg_param *p = NULL;
        for (size_t i = 0; i < op->param_count && !p; i++)
            if (strcmp(op->params[i].name, c->name) == 0)
                p = &op->params[i];
        if (!p)
            continue; /* WCF skips unknown elements of a wrapper */
        wf_error e = WF_ERROR_INIT;
        const wf_xml_attr *nil =
            wf_xml_attr_find(c, "http://www.w3.org/2001/XMLSchema-instance", "nil");
        if (nil && strcmp(nil->value, "true") == 0) {
            values[n] = wf_null();
        } else if (wf_value_parse(call->srv->types, p->type, c->text, &values[n], &e) != WF_OK) {
            wfb_respond_fault(call, 400, "Client", "parameter '%s' of %s: %s", p->name,
                              op->operation, e.message);
            ok = false;
            break;
        }
        keys[n++] = p->name;
    }
    wf_value given = wf_null();
    if (ok && wf_value_record(keys, values, n, &given) != WF_OK) {
        wfb_respond_fault(call, 500, "Server", "out of memory");
        ok = false;
    }
    for (size_t i = 0; i < n; i++)
        wf_value_release(&values[i]);
    ok = ok && build_payload(call, &given);
    wf_value_release(&given);
    return ok;
}

static const wf_xml_node *child_named(const wf_xml_node *n, const char *ns, const char *name)
{
    for (const wf_xml_node *c = n ? n->first_child : NULL; c; c = c->next)
        if (c->ns && strcmp(c->ns, ns) == 0 && strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* The operation from SOAPAction ("http://tempuri.org/ICalculator/Add", quoted or not) or,
 * when it is empty, from the wrapper element's name. */
static const wfm_msg_op *soap_op(wfb_call *call, const char *action, const wf_xml_node *wrapper)
{
    size_t len = action ? strlen(action) : 0;
    if (len >= 2 && action[0] == '"' && action[len - 1] == '"')
        action++, len -= 2;
    if (!len)
        return find_op(call->ep, wrapper->name, strlen(wrapper->name));
    char prefix[400];
    int n = snprintf(prefix, sizeof prefix, "%s%s%s/", call->ep->contract_ns,
                     call->ep->contract_ns[strlen(call->ep->contract_ns) - 1] == '/' ? "" : "/",
                     call->ep->contract);
    if (n <= 0 || (size_t)n >= len || strncmp(action, prefix, (size_t)n) != 0)
        return NULL;
    return find_op(call->ep, action + n, len - (size_t)n);
}

bool wfb_soap_parse(wfb_call *call, const char *soap_action, const char *cookie,
                    const char *instance_header)
{
    wf_xml_doc *doc = NULL;
    wf_error e = WF_ERROR_INIT;
    if (wf_xml_load_mem("request", call->body.data, call->body.len, NULL, &doc, &e) != WF_OK) {
        wfb_respond_fault(call, 400, "Client", "malformed SOAP message: %u:%u: %s", e.line,
                          e.col, e.message);
        return false;
    }
    const wf_xml_node *env = wf_xml_root(doc);
    const wf_xml_node *body = child_named(env, NS_SOAP, "Body");
    const wf_xml_node *wrapper = body ? body->first_child : NULL;
    bool ok = false;
    if (!env->ns || strcmp(env->ns, NS_SOAP) != 0 || strcmp(env->name, "Envelope") != 0 ||
        !wrapper) {
        wfb_respond_fault(call, 400, "Client",
                          "not a SOAP 1.1 envelope with a body element (namespace " NS_SOAP ")");
    } else if (!(call->op = soap_op(call, soap_action, wrapper))) {
        wfb_respond_fault(call, 500, "Client",
                          "ActionNotSupported: the message with Action '%s' matches no "
                          "operation of contract '%s'",
                          soap_action ? soap_action : "", call->ep->contract);
    } else if (strcmp(wrapper->name, call->op->operation) != 0 || !wrapper->ns ||
               strcmp(wrapper->ns, call->ep->contract_ns) != 0) {
        wfb_respond_fault(call, 400, "Client", "the body element is not {%s}%s",
                          call->ep->contract_ns, call->op->operation);
    } else {
        const wf_xml_node *ctx = child_named(child_named(env, NS_SOAP, "Header"), NS_CONTEXT,
                                             "Context");
        if (cookie)
            context_from_cookie(call, cookie);
        context_from_header(call, instance_header);
        if (ctx)
            context_from_element(call, ctx);
        ok = soap_params(call, wrapper);
    }
    wf_xml_doc_destroy(doc);
    return ok;
}

bool wfb_json_parse(wfb_call *call, const char *op_name, const char *cookie,
                    const char *instance_header)
{
    call->op = find_op(call->ep, op_name, strlen(op_name));
    if (!call->op) {
        wfb_respond_fault(call, 404, "Client", "contract '%s' has no operation '%s'",
                          call->ep->contract, op_name);
        return false;
    }
    wf_value given = wf_null();
    wf_error e = WF_ERROR_INIT;
    const char *text = call->body.len ? call->body.data : "{}";
    size_t len = call->body.len ? call->body.len : 2;
    if (wf_json_parse(call->srv->types, text, len, &given, &e) != WF_OK ||
        given.type->kind != WF_K_RECORD) {
        if (e.code == WF_OK)
            wfb_respond_fault(call, 400, "Client", "the body is not a JSON object");
        else
            wfb_respond_fault(call, 400, "Client", "malformed JSON at %u:%u: %s", e.line, e.col,
                              e.message);
        wf_value_release(&given);
        return false;
    }
    if (cookie)
        context_from_cookie(call, cookie);
    context_from_header(call, instance_header);
    bool ok = build_payload(call, &given);
    wf_value_release(&given);
    return ok;
}

/* ---- WSDL ----------------------------------------------------------------------------------- */
static const char *xsd_type(const wf_type *t)
{
    switch (t ? t->kind : WF_K_OBJECT) {
    case WF_K_BOOL: return "xs:boolean";
    case WF_K_INT32: return "xs:int";
    case WF_K_INT64: return "xs:long";
    case WF_K_DOUBLE: return "xs:double";
    case WF_K_DECIMAL: return "xs:decimal";
    case WF_K_DATETIME: return "xs:dateTime";
    case WF_K_TIMESPAN: return "xs:duration";
    default: return "xs:string";
    }
}

static void wsdl_element(wf_xmlw *x, const char *name, const wfm_msg_param *ps, size_t n)
{
    wf_xmlw_open(x, "xs:element");
    wf_xmlw_attr(x, "name", name);
    wf_xmlw_open(x, "xs:complexType");
    wf_xmlw_open(x, "xs:sequence");
    for (size_t i = 0; i < n; i++) {
        wf_xmlw_open(x, "xs:element");
        wf_xmlw_attr(x, "minOccurs", "0");
        wf_xmlw_attr(x, "name", ps[i].name);
        wf_xmlw_attr(x, "type", xsd_type(ps[i].type));
        wf_xmlw_close(x);
    }
    wf_xmlw_close(x);
    wf_xmlw_close(x);
    wf_xmlw_close(x);
}

static void wsdl_types(const wfb_endpoint *ep, wf_xmlw *x)
{
    wf_xmlw_open(x, "wsdl:types");
    wf_xmlw_open(x, "xs:schema");
    wf_xmlw_attr(x, "elementFormDefault", "qualified");
    wf_xmlw_attr(x, "targetNamespace", ep->contract_ns);
    for (size_t i = 0; i < ep->op_count; i++) {
        const wfm_msg_op *op = &ep->ops[i];
        char name[160];
        wsdl_element(x, op->operation, op->params, op->param_count);
        snprintf(name, sizeof name, "%sResponse", op->operation);
        if (!op->one_way)
            wsdl_element(x, name, op->reply, op->reply_count);
    }
    wf_xmlw_close(x);
    wf_xmlw_close(x);
}

/* <wsdl:message name="C_OP_KINDMessage"><wsdl:part name="parameters" element="tns:EL"/>. */
static void wsdl_message(wf_xmlw *x, const char *contract, const char *op, const char *kind,
                         const char *suffix)
{
    wf_xmlw_open(x, "wsdl:message");
    wf_xmlw_attrf(x, "name", "%s_%s_%sMessage", contract, op, kind);
    wf_xmlw_open(x, "wsdl:part");
    wf_xmlw_attr(x, "name", "parameters");
    wf_xmlw_attrf(x, "element", "tns:%s%s", op, suffix);
    wf_xmlw_close(x);
    wf_xmlw_close(x);
}

/* <wsdl:input message="tns:C_OP_InputMessage"/> (or output). */
static void wsdl_io(wf_xmlw *x, const char *tag, const char *contract, const char *op,
                    const char *kind)
{
    wf_xmlw_open(x, tag);
    wf_xmlw_attrf(x, "message", "tns:%s_%s_%sMessage", contract, op, kind);
    wf_xmlw_close(x);
}

static void wsdl_messages(const wfb_endpoint *ep, wf_xmlw *x)
{
    for (size_t i = 0; i < ep->op_count; i++) {
        wsdl_message(x, ep->contract, ep->ops[i].operation, "Input", "");
        if (!ep->ops[i].one_way)
            wsdl_message(x, ep->contract, ep->ops[i].operation, "Output", "Response");
    }
    wf_xmlw_open(x, "wsdl:portType");
    wf_xmlw_attr(x, "name", ep->contract);
    for (size_t i = 0; i < ep->op_count; i++) {
        wf_xmlw_open(x, "wsdl:operation");
        wf_xmlw_attr(x, "name", ep->ops[i].operation);
        wsdl_io(x, "wsdl:input", ep->contract, ep->ops[i].operation, "Input");
        if (!ep->ops[i].one_way)
            wsdl_io(x, "wsdl:output", ep->contract, ep->ops[i].operation, "Output");
        wf_xmlw_close(x);
    }
    wf_xmlw_close(x);
}

/* <TAG><soap:body use="literal"/></TAG>. */
static void wsdl_literal(wf_xmlw *x, const char *tag)
{
    wf_xmlw_open(x, tag);
    wf_xmlw_open(x, "soap:body");
    wf_xmlw_attr(x, "use", "literal");
    wf_xmlw_close(x);
    wf_xmlw_close(x);
}

static void wsdl_binding(const wfb_endpoint *ep, wf_xmlw *x)
{
    const char *sep = ep->contract_ns[strlen(ep->contract_ns) - 1] == '/' ? "" : "/";
    wf_xmlw_open(x, "wsdl:binding");
    wf_xmlw_attrf(x, "name", "BasicHttpBinding_%s", ep->contract);
    wf_xmlw_attrf(x, "type", "tns:%s", ep->contract);
    wf_xmlw_open(x, "soap:binding");
    wf_xmlw_attr(x, "transport", "http://schemas.xmlsoap.org/soap/http");
    wf_xmlw_close(x);
    for (size_t i = 0; i < ep->op_count; i++) {
        const char *n = ep->ops[i].operation;
        wf_xmlw_open(x, "wsdl:operation");
        wf_xmlw_attr(x, "name", n);
        wf_xmlw_open(x, "soap:operation");
        wf_xmlw_attrf(x, "soapAction", "%s%s%s/%s", ep->contract_ns, sep, ep->contract, n);
        wf_xmlw_attr(x, "style", "document");
        wf_xmlw_close(x);
        wsdl_literal(x, "wsdl:input");
        if (!ep->ops[i].one_way)
            wsdl_literal(x, "wsdl:output");
        wf_xmlw_close(x);
    }
    wf_xmlw_close(x);
}

static void wsdl_service(const wfb_server *srv, const wfb_endpoint *ep, wf_xmlw *x)
{
    const char *service = wfm_definition_service_name(ep->def); /* WorkflowServiceAttributes */
    wf_xmlw_open(x, "wsdl:service");
    if (service)
        wf_xmlw_attr(x, "name", service);
    else
        wf_xmlw_attrf(x, "name", "%sService",
                      ep->contract[0] == 'I' && ep->contract[1] ? ep->contract + 1 : ep->contract);
    wf_xmlw_open(x, "wsdl:port");
    wf_xmlw_attrf(x, "name", "BasicHttpBinding_%s", ep->contract);
    wf_xmlw_attrf(x, "binding", "tns:BasicHttpBinding_%s", ep->contract);
    wf_xmlw_open(x, "soap:address");
    wf_xmlw_attrf(x, "location", "%s%s", srv->base_url, ep->path);
    wf_xmlw_close(x);
    wf_xmlw_close(x);
    wf_xmlw_close(x);
}

/* The WSDL through the common writer (common/wf_xmlw.h): served rarely, so well-formed by
 * construction matters more than its cost. */
bool wfb_wsdl(const wfb_server *srv, const wfb_endpoint *ep, wf_buf *out)
{
    wf_xmlw_opts o = WF_XMLW_OPTS_INIT;
    wf_xmlw *x = NULL;
    if (wf_xmlw_create(&o, &x, NULL) != WF_OK)
        return false;
    wf_xmlw_declaration(x);
    wf_xmlw_open(x, "wsdl:definitions");
    wf_xmlw_attr(x, "xmlns:wsdl", "http://schemas.xmlsoap.org/wsdl/");
    wf_xmlw_attr(x, "xmlns:soap", "http://schemas.xmlsoap.org/wsdl/soap/");
    wf_xmlw_attr(x, "xmlns:xs", "http://www.w3.org/2001/XMLSchema");
    wf_xmlw_attr(x, "xmlns:tns", ep->contract_ns);
    wf_xmlw_attr(x, "targetNamespace", ep->contract_ns);
    wsdl_types(ep, x);
    wsdl_messages(ep, x);
    wsdl_binding(ep, x);
    wsdl_service(srv, ep, x);
    wf_xmlw_close(x);
    bool ok = wf_xmlw_finish(x, out, NULL) == WF_OK;
    wf_xmlw_destroy(x);
    return ok;
}

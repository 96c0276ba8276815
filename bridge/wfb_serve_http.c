/* wfb_serve_http.c — the HTTP side of `wfbridge serve`, on libmicrohttpd: routes a request to
 * an endpoint (POST /Contract: SOAP; POST /Contract/Operation: JSON; GET /Contract?wsdl),
 * parses it on the HTTP thread (CPU only), then suspends the connection while the dispatcher
 * and the worker pool handle it, and sends the response once the dispatcher resumes it. The
 * HTTP threads never wait for a store, a native call or a workflow (docs/services.md). */
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "wfb_serve.h"

void wfb_http_answer(wfb_call *call);
enum MHD_Result wfb_http_request(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls);
void wfb_http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                        enum MHD_RequestTerminationCode toe);

void wfb_http_answer(wfb_call *call)
{
    MHD_resume_connection(call->conn);
}

static enum MHD_Result send_call(struct MHD_Connection *conn, wfb_call *call)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(call->out.len, call->out.data, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    if (call->content_type)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, call->content_type);
    if (call->set_context[0]) {
        wf_buf cookie;
        wf_buf_init(&cookie);
        wf_buf_adds(&cookie, "WscContext=");
        wfb_context_cookie(call->set_context, &cookie);
        wf_buf_adds(&cookie, "; Path=/; HttpOnly");
        if (!cookie.oom)
            MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, cookie.data);
        wf_buf_fini(&cookie);
        MHD_add_response_header(r, "X-Instance-Id", call->set_context);
    }
    enum MHD_Result ret = MHD_queue_response(conn, call->http_status, r);
    MHD_destroy_response(r);
    return ret;
}

static const wfb_endpoint *endpoint_of(const wfb_server *srv, const char *url, const char **rest)
{
    for (size_t i = 0; i < srv->endpoint_count; i++) {
        const wfb_endpoint *ep = &srv->endpoints[i];
        size_t n = strlen(ep->path);
        if (strncmp(url, ep->path, n) == 0 && (url[n] == '\0' || url[n] == '/')) {
            *rest = url[n] == '/' ? url + n + 1 : url + n;
            return ep;
        }
    }
    return NULL;
}

static enum MHD_Result has_key(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    (void)kind;
    (void)value;
    if (strcmp(key, "wsdl") == 0 || strcmp(key, "WSDL") == 0)
        *(bool *)cls = true;
    return MHD_YES;
}

static enum MHD_Result plain(struct MHD_Connection *conn, unsigned status, const char *type,
                             const char *text, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text,
                                                             MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result serve_wsdl(wfb_server *srv, struct MHD_Connection *conn,
                                  const wfb_endpoint *ep)
{
    bool wsdl = false;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, has_key, &wsdl);
    if (!wsdl) {
        static const char hint[] = "a workflow service: GET ?wsdl, POST SOAP 1.1 here, or POST "
                                   "JSON to /Contract/Operation\n";
        return plain(conn, MHD_HTTP_OK, "text/plain", hint, sizeof hint - 1);
    }
    wf_buf out;
    wf_buf_init(&out);
    wfb_wsdl(srv, ep, &out);
    enum MHD_Result ret = out.oom ? MHD_NO
                                  : plain(conn, MHD_HTTP_OK, "text/xml; charset=utf-8", out.data,
                                          out.len);
    wf_buf_fini(&out);
    return ret;
}

/* The whole request is in: parse it, then hand it over (or answer at once with a fault). */
static enum MHD_Result dispatch(wfb_server *srv, struct MHD_Connection *conn, wfb_call *call,
                                const char *url, const char *method)
{
    const char *rest = "";
    call->ep = endpoint_of(srv, url, &rest);
    const char *cookie = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, "WscContext");
    call->form = call->ep && *rest ? WFB_JSON : WFB_SOAP;
    if (!call->ep) {
        static const char msg[] = "no service endpoint here\n";
        return plain(conn, MHD_HTTP_NOT_FOUND, "text/plain", msg, sizeof msg - 1);
    }
    if (strcmp(method, "GET") == 0 && !*rest)
        return serve_wsdl(srv, conn, call->ep);
    if (strcmp(method, "POST") != 0) {
        wfb_respond_fault(call, MHD_HTTP_METHOD_NOT_ALLOWED, "Client", "%s is not accepted here",
                          method);
        return send_call(conn, call);
    }
    if (call->too_large) {
        wfb_respond_fault(call, MHD_HTTP_CONTENT_TOO_LARGE, "Client",
                          "the message is larger than %d bytes", WFB_SERVE_MAX_BODY);
        return send_call(conn, call);
    }
    call->request = atomic_fetch_add(&srv->next_request, 1) + 1;
    const char *instance = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Instance-Id");
    bool ok = call->form == WFB_SOAP
                  ? wfb_soap_parse(call, MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                                     "SOAPAction"),
                                   cookie, instance)
                  : wfb_json_parse(call, rest, cookie, instance);
    if (!ok)
        return send_call(conn, call);
    call->submitted = true;
    MHD_suspend_connection(conn);
    wfb_dispatch_submit(srv, call);
    return MHD_YES;
}

static wfb_call *call_new(wfb_server *srv, struct MHD_Connection *conn)
{
    wfb_call *call = wf_calloc(1, sizeof *call);
    if (!call)
        return NULL;
    call->srv = srv;
    call->conn = conn;
    call->payload = wf_null();
    wf_buf_init(&call->body);
    wf_buf_init(&call->out);
    return call;
}

enum MHD_Result wfb_http_request(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls)
{
    (void)version;
    wfb_server *srv = cls;
    wfb_call *call = *con_cls;
    if (!call) {
        *con_cls = call = call_new(srv, conn);
        return call ? MHD_YES : MHD_NO;
    }
    if (call->submitted)
        return call->answered ? send_call(conn, call) : MHD_YES;
    if (*upload_size) {
        if (call->body.len + *upload_size > WFB_SERVE_MAX_BODY)
            call->too_large = true; /* read on, answer once the body is in */
        else if (!wf_buf_add(&call->body, upload, *upload_size))
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    return dispatch(srv, conn, call, url, method);
}

void wfb_http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                        enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    wfb_call *call = *con_cls;
    if (!call)
        return;
    wf_buf_fini(&call->body);
    wf_buf_fini(&call->out);
    wf_value_release(&call->payload);
    wf_free(call);
    *con_cls = NULL;
}

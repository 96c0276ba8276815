/* test_send.c — Send and ReceiveReply (modern/wfm_act_send.c) over the runtime's HTTP engine
 * (modern/wfm_http.c) against a stub service on 127.0.0.1 (libmicrohttpd): the SOAP request
 * as basicHttpBinding writes it, the reply's values, the service's context sent back, a run
 * on the caller's thread and one on the pool, a SOAP fault, a timeout, a reply that is no
 * envelope, load errors, and an instance destroyed while its request is in flight; the
 * context kept from a cookie (basicHttpContextBinding, an ASMX session) or a SOAP Context
 * header (wsHttpContextBinding); an ASMX web method's shape; a request's fault at its
 * ReceiveReply, a one-way Send's at the Send; a value XML 1.0 cannot carry, a key that is no
 * XML name. */
#include <check.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_modern.h"

#define STUB_ID "0123456789abcdef0123456789abcdef"

/* ---- the stub service --------------------------------------------------------------------- */
typedef struct stub {
    struct MHD_Daemon *daemon;
    char url[64]; /* http://127.0.0.1:PORT */
    pthread_mutex_t lock;
    unsigned calls;
    char last_body[2048], last_action[256], last_instance[64], last_cookie[512];
    int calc_total; /* /calc: the ASMX calculator's session state */
} stub;

static const char reply_ok[] =
    "<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\"><s:Body>"
    "<AddResponse xmlns=\"http://tempuri.org/\"><AddResult>42</AddResult></AddResponse>"
    "</s:Body></s:Envelope>";
static const char reply_fault[] =
    "<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\"><s:Body><s:Fault>"
    "<faultcode>s:Server</faultcode><faultstring>the divisor is zero</faultstring>"
    "</s:Fault></s:Body></s:Envelope>";
/* wsHttpContextBinding's shape: the context in a SOAP header of the reply. */
static const char reply_header[] =
    "<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\"><s:Header>"
    "<Context xmlns=\"http://schemas.microsoft.com/ws/2006/05/context\">"
    "<Property name=\"instanceId\">hdr-7</Property></Context></s:Header><s:Body>"
    "<AddResponse xmlns=\"http://tempuri.org/\"><AddResult>42</AddResult></AddResponse>"
    "</s:Body></s:Envelope>";
/* An ASMX web method's reply (wsdl.exe's proxy reads MethodResponse/MethodResult). */
static const char reply_asmx[] =
    "<soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/envelope/\"><soap:Body>"
    "<DepositResponse xmlns=\"http://contoso.com/accounts/\"><DepositResult>105</DepositResult>"
    "</DepositResponse></soap:Body></soap:Envelope>";
#define WSC_COOKIE "WscContext=\"PENvbnRleHQ+\""

static void stub_note(stub *s, struct MHD_Connection *conn, const wf_buf *body)
{
    const char *action = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "SOAPAction");
    const char *id = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Instance-Id");
    const char *cookie = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Cookie");
    pthread_mutex_lock(&s->lock);
    snprintf(s->last_cookie, sizeof s->last_cookie, "%s", cookie ? cookie : "");
    s->calls++;
    snprintf(s->last_body, sizeof s->last_body, "%s", body->data);
    snprintf(s->last_action, sizeof s->last_action, "%s", action ? action : "");
    snprintf(s->last_instance, sizeof s->last_instance, "%s", id ? id : "");
    pthread_mutex_unlock(&s->lock);
}

/* /calc: an ASMX calculator service whose session is ASP.NET's cookie, as [WebMethod(
 * EnableSession = true)] keeps it: PowerOn starts it (total 0), Add and Multiply change the
 * session's total and answer it; without the cookie they fault. */
static enum MHD_Result calc_handle(stub *s, struct MHD_Connection *conn)
{
    static const char ns[] = "\"http://tempuri.org/";
    char text[600], op[32] = "";
    pthread_mutex_lock(&s->lock);
    bool session = strstr(s->last_cookie, "ASP.NET_SessionId=calc1") != NULL;
    const char *value = strstr(s->last_body, "<value>");
    int v = value ? atoi(value + 7) : 0;
    if (strncmp(s->last_action, ns, sizeof ns - 1) == 0)
        snprintf(op, sizeof op, "%.*s", (int)strcspn(s->last_action + sizeof ns - 1, "\""),
                 s->last_action + sizeof ns - 1);
    bool power_on = strcmp(op, "PowerOn") == 0, known = power_on || strcmp(op, "Add") == 0 ||
                                                       strcmp(op, "Multiply") == 0;
    if (power_on)
        s->calc_total = 0;
    else if (known && session)
        s->calc_total = strcmp(op, "Add") == 0 ? s->calc_total + v : s->calc_total * v;
    if (!known || (!power_on && !session))
        snprintf(text, sizeof text, "%.*s", (int)strcspn(reply_fault, "\0"), reply_fault);
    else
        snprintf(text, sizeof text,
                 "<soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/envelope/\">"
                 "<soap:Body><%sResponse xmlns=\"http://tempuri.org/\"><%sResult>%d</%sResult>"
                 "</%sResponse></soap:Body></soap:Envelope>",
                 op, op, s->calc_total, op, op);
    pthread_mutex_unlock(&s->lock);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_COPY);
    if (power_on)
        MHD_add_response_header(r, "Set-Cookie", "ASP.NET_SessionId=calc1; path=/; HttpOnly");
    enum MHD_Result ret = MHD_queue_response(conn, strstr(text, "Fault") ? 500 : 200, r);
    MHD_destroy_response(r);
    return ret;
}

/* /ok: the Add reply with a context; /fault: HTTP 500 with a SOAP fault; /slow: the reply a
 * second late; /json/Add: {"AddResult": 7}; /cookie: as /ok, with the cookies `serve` and an
 * ASMX service set (the second a changed session); /header: the context in a SOAP header. */
static enum MHD_Result stub_handle(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version,
                                   const char *upload, size_t *upload_size, void **con_cls)
{
    (void)method;
    (void)version;
    stub *s = cls;
    wf_buf *body = *con_cls;
    if (!body) {
        body = wf_calloc(1, sizeof *body);
        wf_buf_init(body);
        *con_cls = body;
        return MHD_YES;
    }
    if (*upload_size) {
        wf_buf_add(body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    stub_note(s, conn, body);
    if (strcmp(url, "/calc") == 0)
        return calc_handle(s, conn);
    bool fault = strcmp(url, "/fault") == 0, json = strcmp(url, "/json/Add") == 0;
    if (strcmp(url, "/slow") == 0)
        sleep(1);
    bool header = strcmp(url, "/header") == 0, cookie = strcmp(url, "/cookie") == 0;
    bool asmx = strcmp(url, "/asmx") == 0;
    const char *text = asmx     ? reply_asmx
                       : fault  ? reply_fault
                       : json   ? "{\"AddResult\": 7}"
                       : header ? reply_header
                                : reply_ok;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!header)
        MHD_add_response_header(r, "X-Instance-Id", STUB_ID);
    if (asmx && s->calls == 1)
        MHD_add_response_header(r, "Set-Cookie", "ASP.NET_SessionId=a1; path=/; HttpOnly");
    if (cookie) {
        MHD_add_response_header(r, "Set-Cookie", WSC_COOKIE "; Path=/; HttpOnly");
        MHD_add_response_header(r, "Set-Cookie", s->calls == 1 ? "ASP.NET_SessionId=s1; path=/"
                                                               : "ASP.NET_SessionId=s2; path=/");
    }
    enum MHD_Result ret = MHD_queue_response(conn, fault ? 500 : 200, r);
    MHD_destroy_response(r);
    return ret;
}

static void stub_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)conn;
    (void)code;
    wf_buf *body = *con_cls;
    if (body) {
        wf_buf_fini(body);
        wf_free(body);
    }
}

static void stub_start(stub *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
                                 0, NULL, NULL, stub_handle, s, MHD_OPTION_NOTIFY_COMPLETED,
                                 stub_done, s, MHD_OPTION_SOCK_ADDR, NULL, MHD_OPTION_END);
    ck_assert_ptr_nonnull(s->daemon);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%u", (unsigned)info->port);
}

static void stub_stop(stub *s)
{
    MHD_stop_daemon(s->daemon);
    pthread_mutex_destroy(&s->lock);
}

/* ---- workflows ---------------------------------------------------------------------------- */
#define HEAD                                                                                       \
    "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\"\n" \
    " xmlns:p=\"http://schemas.microsoft.com/netfx/2009/xaml/servicemodel\"\n"                     \
    " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"                                 \
    "<x:Members><x:Property Name=\"url\" Type=\"InArgument(x:String)\" />\n"                       \
    "<x:Property Name=\"total\" Type=\"OutArgument(x:Int32)\" /></x:Members>\n"
#define SEND_ADD(name, extra)                                                                      \
    "<p:Send x:Name=\"" name "\" OperationName=\"Add\" ServiceContractName=\"ICalculator\"\n"      \
    " EndpointAddress=\"[url]\" " extra "><p:Send.Content><p:SendParametersContent>\n"             \
    "<InArgument x:TypeArguments=\"x:Int32\" x:Key=\"value\">[5]</InArgument>\n"                   \
    "</p:SendParametersContent></p:Send.Content></p:Send>\n"
#define RECEIVE_REPLY(name)                                                                        \
    "<p:ReceiveReply Request=\"{x:Reference " name "}\"><p:ReceiveReply.Content>\n"                \
    "<p:ReceiveParametersContent>\n"                                                               \
    "<OutArgument x:TypeArguments=\"x:Int32\" x:Key=\"AddResult\">[total]</OutArgument>\n"         \
    "</p:ReceiveParametersContent></p:ReceiveReply.Content></p:ReceiveReply>\n"

static const char two_calls[] = HEAD "<Sequence>" SEND_ADD("s1", "") RECEIVE_REPLY("s1")
    SEND_ADD("s2", "") "<p:ReceiveReply Request=\"{x:Reference s2}\" />"
    "</Sequence></Activity>";

/* Run on the calling thread, waiting for the replies as `wfbridge run` does. */
static wfm_instance_state run_waiting(wfm_test_run *r)
{
    for (;;) {
        wfm_instance_state st = wfm_test_go(r);
        if (st != WFM_INSTANCE_IDLE || !wfm_instance_async_pending(r->inst))
            return st;
        wfm_instance_wait_async(r->inst);
    }
}

/* Start the stub and open `xaml` with its argument url = the stub's `path`. */
static void open_at(stub *s, wfm_test_run *r, const char *xaml, const char *path)
{
    stub_start(s);
    char url[100];
    snprintf(url, sizeof url, "%s%s", s->url, path);
    wfm_test_open_mem(r, "send.xaml", xaml);
    wf_value v = wf_null();
    ck_assert_int_eq(wf_value_cstring(url, &v), WF_OK);
    wfm_test_input(r, "url", v);
}

static void close_all(stub *s, wfm_test_run *r)
{
    wfm_test_close(r);
    stub_stop(s);
}

/* Run r to its fault: exception `type` with `message`, after `calls` requests; then close. */
static void expect_fault(stub *s, wfm_test_run *r, const char *type, const char *message,
                         unsigned calls)
{
    ck_assert_int_eq(run_waiting(r), WFM_INSTANCE_FAULTED);
    const wf_value *exc = wfm_instance_fault(r->inst);
    ck_assert_str_eq(exc->type->name, type);
    ck_assert_str_eq(wf_value_exc_message(exc), message);
    ck_assert_uint_eq(s->calls, calls);
    close_all(s, r);
}

START_TEST(test_send_soap_request_and_context)
{
    stub s;
    wfm_test_run r;
    open_at(&s, &r, two_calls, "/ok");
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(wfm_instance_output(r.inst, "total")->u.i32, 42);
    ck_assert_uint_eq(s.calls, 2);
    ck_assert_str_eq(s.last_action, "\"http://tempuri.org/ICalculator/Add\"");
    ck_assert_ptr_nonnull(strstr(s.last_body, "<s:Body><Add xmlns=\"http://tempuri.org/\">"
                                              "<value>5</value></Add></s:Body>"));
    /* the second call carries the context the first reply gave */
    ck_assert_ptr_nonnull(strstr(s.last_body, "<Property name=\"instanceId\">" STUB_ID));
    close_all(&s, &r);
}
END_TEST

/* A value XML 1.0 cannot carry as it is (a control character, invalid UTF-8) and one that
 * ends a CDATA section still make a request libxml2 parses: the writer puts U+FFFD for the
 * first two and escapes the third. */
#define HEAD_NOTE                                                                                  \
    "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\"\n"  \
    " xmlns:p=\"http://schemas.microsoft.com/netfx/2009/xaml/servicemodel\"\n"                     \
    " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"                                 \
    "<x:Members><x:Property Name=\"url\" Type=\"InArgument(x:String)\" />\n"                       \
    "<x:Property Name=\"note\" Type=\"InArgument(x:String)\" /></x:Members>\n"
#define NOTE_SEND(key)                                                                             \
    HEAD_NOTE "<Sequence><p:Send x:Name=\"s1\" OperationName=\"Add\" "                             \
              "ServiceContractName=\"ICalculator\""                                                \
              " EndpointAddress=\"[url]\"><p:Send.Content><p:SendParametersContent>\n"             \
              "<InArgument x:TypeArguments=\"x:String\" x:Key=\"" key "\">[note]</InArgument>\n"   \
              "</p:SendParametersContent></p:Send.Content></p:Send>"                               \
              "<p:ReceiveReply Request=\"{x:Reference s1}\" /></Sequence></Activity>"

START_TEST(test_send_value_xml_cannot_carry)
{
    static const char note[] = "a\x01"
                               "b\xff]]>c";
    stub s;
    wfm_test_run r;
    open_at(&s, &r, NOTE_SEND("note"), "/ok");
    wf_value v = wf_null();
    ck_assert_int_eq(wf_value_string(note, sizeof note - 1, &v), WF_OK);
    wfm_test_input(&r, "note", v);
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_CLOSED);
    ck_assert_uint_eq(s.calls, 1);
    xmlDocPtr doc = xmlReadMemory(s.last_body, (int)strlen(s.last_body), "request.xml", NULL,
                                  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    ck_assert_msg(doc != NULL, "request not well-formed: %s", s.last_body);
    xmlChar *text = xmlNodeGetContent(xmlDocGetRootElement(doc));
    ck_assert_str_eq((const char *)text, "a\xef\xbf\xbd"
                                         "b\xef\xbf\xbd]]>c");
    ck_assert_ptr_nonnull(strstr(s.last_body, "<note>a\xef\xbf\xbd"
                                              "b\xef\xbf\xbd]]&gt;c</note>"));
    xmlFree(text);
    xmlFreeDoc(doc);
    close_all(&s, &r);
}
END_TEST

/* A parameter key that is no XML name cannot become an element: the Send faults with the
 * writer's message, no request goes out. */
START_TEST(test_send_key_not_an_xml_name)
{
    stub s;
    wfm_test_run r;
    open_at(&s, &r, NOTE_SEND("1st"), "/ok");
    expect_fault(&s, &r, "InvalidOperationException", "Send: '1st' is not an XML name", 0);
}
END_TEST

START_TEST(test_send_on_the_pool)
{
    stub s;
    wfm_test_run r;
    open_at(&s, &r, two_calls, "/ok");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_start(r.inst, &err), WF_OK);
    wfm_runtime_wait_idle(r.rt); /* waits for the requests too */
    ck_assert_int_eq(wfm_instance_state_get(r.inst), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(wfm_instance_output(r.inst, "total")->u.i32, 42);
    ck_assert_uint_eq(s.calls, 2);
    close_all(&s, &r);
}
END_TEST

/* A reply that is no SOAP envelope (here the JSON form's) to a SOAP Send. */
START_TEST(test_send_reply_not_soap)
{
    stub s;
    wfm_test_run r;
    open_at(&s, &r, two_calls, "/json/Add");
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_FAULTED);
    ck_assert_str_eq(wfm_instance_fault(r.inst)->type->name, "CommunicationException");
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(wfm_instance_fault(r.inst)),
                                 "not a SOAP 1.1 envelope"));
    close_all(&s, &r);
}
END_TEST

START_TEST(test_send_soap_fault_faults_the_send)
{
    stub s;
    wfm_test_run r;
    open_at(&s, &r, two_calls, "/fault");
    expect_fault(&s, &r, "FaultException", "the divisor is zero", 1);
}
END_TEST

/* As in WF4 (docs/services.md "Faults"): the fault of a request-reply Send is its
 * ReceiveReply's, so a TryCatch around the Send alone does not see it and one around the
 * ReceiveReply does; a one-way Send (no ReceiveReply) faults itself. */
#define TRY_SET(body, value)                                                                       \
    "<TryCatch><TryCatch.Try>" body "</TryCatch.Try><TryCatch.Catches>"                            \
    "<Catch x:TypeArguments=\"s:Exception\"><ActivityAction x:TypeArguments=\"s:Exception\">"     \
    "<Assign x:TypeArguments=\"x:Int32\" To=\"[total]\" Value=\"[" value "]\" />"                \
    "</ActivityAction></Catch></TryCatch.Catches></TryCatch>"
#define HEAD_S                                                                                     \
    "<Activity x:Class=\"T\" xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\"\n" \
    " xmlns:p=\"http://schemas.microsoft.com/netfx/2009/xaml/servicemodel\"\n"                     \
    " xmlns:s=\"clr-namespace:System;assembly=mscorlib\"\n"                                       \
    " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"                                 \
    "<x:Members><x:Property Name=\"url\" Type=\"InArgument(x:String)\" />\n"                       \
    "<x:Property Name=\"total\" Type=\"OutArgument(x:Int32)\" /></x:Members>\n"

START_TEST(test_send_fault_surfaces_at_receive_reply)
{
    static const char xaml[] = HEAD_S "<Sequence>" TRY_SET(SEND_ADD("s1", ""), "-1")
        TRY_SET(RECEIVE_REPLY("s1"), "total + 100") "</Sequence></Activity>";
    stub s;
    wfm_test_run r;
    open_at(&s, &r, xaml, "/fault");
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(wfm_instance_output(r.inst, "total")->u.i32, 100);
    close_all(&s, &r);
}
END_TEST

START_TEST(test_send_one_way_faults_itself)
{
    static const char xaml[] = HEAD_S "<Sequence>" TRY_SET(SEND_ADD("s1", ""), "9")
        "</Sequence></Activity>";
    stub s;
    wfm_test_run r;
    open_at(&s, &r, xaml, "/fault");
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(wfm_instance_output(r.inst, "total")->u.i32, 9);
    close_all(&s, &r);
}
END_TEST

/* A timeout is the ReceiveReply's fault too, with its type and message. */
START_TEST(test_send_timeout)
{
    static const char xaml[] = HEAD "<Sequence>" SEND_ADD("s1", "Timeout=\"00:00:00.2\"")
        RECEIVE_REPLY("s1") "</Sequence></Activity>";
    stub s;
    wfm_test_run r;
    open_at(&s, &r, xaml, "/slow");
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_FAULTED);
    ck_assert_str_eq(wfm_instance_fault(r.inst)->type->name, "TimeoutException");
    ck_assert_ptr_nonnull(strstr(wf_value_exc_message(wfm_instance_fault(r.inst)), "200 ms"));
    close_all(&s, &r);
}
END_TEST

/* The context a service gave is state: saved and restored with the instance (as a durable
 * host does while it waits on a bookmark), the next Send carries it. */
static const char across_save[] = HEAD "<Sequence>" SEND_ADD("s1", "") RECEIVE_REPLY("s1")
    "<WaitForEvent x:TypeArguments=\"x:Int32\" BookmarkName=\"go\" />" SEND_ADD("s2", "")
    "<p:ReceiveReply Request=\"{x:Reference s2}\" /></Sequence></Activity>";

START_TEST(test_send_context_survives_save_and_restore)
{
    stub s;
    wfm_test_run r;
    open_at(&s, &r, across_save, "/ok");
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_IDLE);
    ck_assert_uint_eq(s.calls, 1);
    ck_assert_ptr_null(strstr(s.last_body, "instanceId")); /* none known yet */
    wfm_test_save_restore(&r);
    wf_value go = wf_int32(1);
    wfm_test_resume(&r, "go", &go);
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_CLOSED);
    ck_assert_uint_eq(s.calls, 2);
    ck_assert_ptr_nonnull(strstr(s.last_body, "<Property name=\"instanceId\">" STUB_ID));
    close_all(&s, &r);
}
END_TEST

/* A service that keeps its context in cookies gets them back, and only them, as a WCF client
 * with AllowCookies does: the second call carries WscContext and the session cookie, neither
 * a Context header nor X-Instance-Id; a cookie set again replaces the kept one. The cookies
 * are state: they survive a save and restore. */
START_TEST(test_send_context_from_cookies)
{
    stub s;
    wfm_test_run r;
    open_at(&s, &r, across_save, "/cookie");
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_IDLE);
    ck_assert_str_eq(s.last_cookie, "");
    wfm_test_save_restore(&r);
    wf_value go = wf_int32(1);
    wfm_test_resume(&r, "go", &go);
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_CLOSED);
    ck_assert_uint_eq(s.calls, 2);
    ck_assert_str_eq(s.last_cookie, WSC_COOKIE "; ASP.NET_SessionId=s1");
    ck_assert_str_eq(s.last_instance, "");
    ck_assert_ptr_null(strstr(s.last_body, "instanceId"));
    close_all(&s, &r);
}
END_TEST

START_TEST(test_send_cookie_replaced_by_name)
{
    static const char three[] = HEAD "<Sequence>" SEND_ADD("s1", "") RECEIVE_REPLY("s1")
        SEND_ADD("s2", "") RECEIVE_REPLY("s2") SEND_ADD("s3", "") RECEIVE_REPLY("s3")
        "</Sequence></Activity>";
    stub s;
    wfm_test_run r;
    open_at(&s, &r, three, "/cookie");
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_CLOSED);
    ck_assert_uint_eq(s.calls, 3);
    ck_assert_str_eq(s.last_cookie, WSC_COOKIE "; ASP.NET_SessionId=s2");
    close_all(&s, &r);
}
END_TEST

/* wsHttpContextBinding: the context came in the reply's SOAP header and goes back as one. */
START_TEST(test_send_context_from_soap_header)
{
    stub s;
    wfm_test_run r;
    open_at(&s, &r, two_calls, "/header");
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_CLOSED);
    ck_assert_uint_eq(s.calls, 2);
    ck_assert_ptr_nonnull(strstr(s.last_body, "<s:Header><Context xmlns=\"http://schemas."
                                              "microsoft.com/ws/2006/05/context\"><Property "
                                              "name=\"instanceId\">hdr-7</Property>"));
    ck_assert_str_eq(s.last_cookie, "");
    close_all(&s, &r);
}
END_TEST

/* A converted InvokeWebServiceActivity (docs/convert.md "ASMX web services"): SOAPAction
 * NAMESPACE/Method, the wrapper in the proxy's namespace, MethodResult read back, and the
 * ASP.NET session cookie shared by the calls of one SessionId (one ChannelToken). */
#define ASMX_DEPOSIT(name)                                                                         \
    "<p:Send x:Name=\"" name "\" OperationName=\"Deposit\"\n"                                     \
    " ServiceContractName=\"{http://contoso.com/accounts/}AccountService\"\n"                     \
    " Action=\"http://contoso.com/accounts/Deposit\" EndpointAddress=\"[url]\"\n"                 \
    " ChannelToken=\"session:account\"><p:Send.Content><p:SendParametersContent>\n"              \
    "<InArgument x:TypeArguments=\"x:Int32\" x:Key=\"amount\">[5]</InArgument>\n"                \
    "</p:SendParametersContent></p:Send.Content></p:Send>\n"                                      \
    "<p:ReceiveReply Request=\"{x:Reference " name "}\"><p:ReceiveReply.Content>\n"             \
    "<p:ReceiveParametersContent>\n"                                                               \
    "<OutArgument x:TypeArguments=\"x:Int32\" x:Key=\"DepositResult\">[total]</OutArgument>\n"   \
    "</p:ReceiveParametersContent></p:ReceiveReply.Content></p:ReceiveReply>\n"

START_TEST(test_send_asmx_web_method)
{
    static const char xaml[] = HEAD "<Sequence>" ASMX_DEPOSIT("d1") ASMX_DEPOSIT("d2")
        "</Sequence></Activity>";
    stub s;
    wfm_test_run r;
    open_at(&s, &r, xaml, "/asmx");
    ck_assert_int_eq(run_waiting(&r), WFM_INSTANCE_CLOSED);
    ck_assert_int_eq(wfm_instance_output(r.inst, "total")->u.i32, 105);
    ck_assert_uint_eq(s.calls, 2);
    ck_assert_str_eq(s.last_action, "\"http://contoso.com/accounts/Deposit\"");
    ck_assert_ptr_nonnull(strstr(s.last_body, "<s:Body><Deposit xmlns=\"http://contoso.com/"
                                              "accounts/\"><amount>5</amount></Deposit>"));
    ck_assert_str_eq(s.last_cookie, "ASP.NET_SessionId=a1");
    close_all(&s, &r);
}
END_TEST

/* A WF3 workflow calling an ASMX web service through its wsdl.exe proxy, converted and run
 * by the CLI: three InvokeWebServiceActivitys with one SessionId reach the service as ASMX
 * web-method calls (SOAPAction http://tempuri.org/Add), at the endpoint named after the
 * proxy class, in one ASP.NET session: (0 + 12) * 3 = 36. */
START_TEST(test_send_converted_web_service_session)
{
    stub s;
    stub_start(&s);
    const char *dir = wf_test_tmpdir();
    ck_assert_int_eq(wf_test_shell_cli(dir, 60,
                                       "convert tests/modern/data/asmx/asmx_client.xoml -o %s "
                                       "--lib-path tests/modern/data/asmx",
                                       wf_test_path(dir, "asmx_client.xaml")),
                     0);
    char eps[200];
    snprintf(eps, sizeof eps, "{\"endpoints\": {\"Calculator\": {\"address\": \"%s/calc\"}}}\n",
             s.url);
    wf_test_write_file(dir, "asmx_client.endpoints.json", eps);
    ck_assert_int_eq(wf_test_shell_cli(dir, 60, "run %s --lib-path tests/modern/data/asmx --json "
                                       "--arg Amount=12 --arg Factor=3",
                                       wf_test_path(dir, "asmx_client.xaml")),
                     0);
    char *out = wf_test_read_file(wf_test_path(dir, "stdout"), NULL);
    ck_assert_ptr_nonnull(out);
    ck_assert_msg(strstr(out, "\"status\": \"Closed\"") && strstr(out, "\"Total\": 36"), "%s",
                  out);
    wf_free(out);
    ck_assert_uint_eq(s.calls, 3);
    ck_assert_str_eq(s.last_action, "\"http://tempuri.org/Multiply\"");
    ck_assert_ptr_nonnull(strstr(s.last_body, "<Multiply xmlns=\"http://tempuri.org/\">"
                                              "<value>3</value></Multiply>"));
    wf_test_tmpdir_remove(dir);
    stub_stop(&s);
}
END_TEST

/* The instance and the runtime go while the reply is on its way: nothing leaks or is touched
 * after it was freed (make asan). */
START_TEST(test_send_instance_destroyed_in_flight)
{
    stub s;
    wfm_test_run r;
    open_at(&s, &r, two_calls, "/slow");
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_start(r.inst, &err), WF_OK);
    while (!wfm_instance_async_pending(r.inst))
        usleep(1000);
    close_all(&s, &r);
}
END_TEST

START_TEST(test_send_load_errors)
{
    wfm_test_run r;
    wfm_test_runtime(&r);
    static const char *const bad[][2] = {
        {HEAD "<p:Send OperationName=\"Add\" ServiceContractName=\"ICalculator\" />"
              "</Activity>",
         "EndpointConfigurationName"},
        {HEAD "<p:Send OperationName=\"A.b\" ServiceContractName=\"ICalculator\" "
              "EndpointAddress=\"[url]\" /></Activity>",
         "OperationName"},
        {HEAD "<p:ReceiveReply Request=\"s1\" /></Activity>", "{x:Reference NAME}"},
        {HEAD "<p:Send OperationName=\"Add\" ServiceContractName=\"ICalculator\" "
              "EndpointConfigurationName=\"Calc\" /></Activity>",
         "no-such-dir/send.endpoints.json"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wfm_definition *def = NULL;
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_ne(wfm_runtime_load_mem(r.rt, "no-such-dir/send.xaml", bad[i][0],
                                              strlen(bad[i][0]), &def, NULL, &err),
                         WF_OK);
        ck_assert_ptr_null(def);
        ck_assert_msg(strstr(err.message, bad[i][1]), "%zu: %s", i, err.message);
        ck_assert_uint_eq(err.line, 6);
    }
    wfm_test_close(&r);
}
END_TEST

Suite *modern_send_suite(void)
{
    Suite *s = suite_create("modern_send");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 60);
    tcase_add_test(core, test_send_soap_request_and_context);
    tcase_add_test(core, test_send_on_the_pool);
    tcase_add_test(core, test_send_context_survives_save_and_restore);
    tcase_add_test(core, test_send_instance_destroyed_in_flight);
    tcase_add_test(core, test_send_context_from_cookies);
    tcase_add_test(core, test_send_cookie_replaced_by_name);
    tcase_add_test(core, test_send_context_from_soap_header);
    tcase_add_test(core, test_send_asmx_web_method);
    tcase_add_test(core, test_send_converted_web_service_session);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 60);
    tcase_add_test(bad, test_send_soap_fault_faults_the_send);
    tcase_add_test(bad, test_send_timeout);
    tcase_add_test(bad, test_send_fault_surfaces_at_receive_reply);
    tcase_add_test(bad, test_send_one_way_faults_itself);
    tcase_add_test(bad, test_send_reply_not_soap);
    tcase_add_test(bad, test_send_load_errors);
    tcase_add_test(bad, test_send_value_xml_cannot_carry);
    tcase_add_test(bad, test_send_key_not_an_xml_name);
    suite_add_tcase(s, bad);
    return s;
}

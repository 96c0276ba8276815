/* test_serve.c — `wfbridge serve` driven over 127.0.0.1 with libcurl as its clients would:
 * the JSON form, SOAP 1.1 as basicHttpContextBinding writes it (SOAPAction, wrapper elements,
 * the WscContext cookie and the wsc:Context header), the WSDL, a python3-zeep client built
 * from it, an instance idle on a Receive surviving SIGKILL, and bad input (malformed SOAP and
 * JSON, unknown operation or instance, an oversized body, a slow client, many connections at
 * once) answered with a fault or status while the store stays as it was. */
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <libxml/parser.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../modern/support_pg.h"
#include "../wf_test_util.h"
#include "support_bridge.h"

#define CALC "tests/modern/data/msg/calculator.xaml"
#define ENVELOPE_OPEN "<s:Envelope xmlns:s=\"http://schemas.xmlsoap.org/soap/envelope/\">"
#define CONTEXT_NS "http://schemas.microsoft.com/ws/2006/05/context"

typedef struct server {
    pid_t pid;
    char dir[512];
    char url[256];   /* http://127.0.0.1:PORT/ICalculator */
    char store[600]; /* "" without a store */
    const char *def; /* the definition served (default CALC) */
    const char *lib_path; /* --lib-path, or NULL */
} server;

/* Start `wfbridge serve CALC --listen 127.0.0.1:0 [--store S] [--timeout T]` and wait for its
 * "listening:" line (printed once it accepts connections, signals already blocked for the
 * graceful stop). */
static void serve_start(server *s, const char *store, const char *timeout)
{
    char out[700], exe[600];
    snprintf(out, sizeof out, "%s/serve.out", s->dir);
    snprintf(exe, sizeof exe, "%s/bin/wfbridge", wf_test_build_dir());
    unlink(out); /* a restart must not read the last run's line */
    s->pid = fork();
    ck_assert_int_ge(s->pid, 0);
    if (s->pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open("/dev/null", O_RDONLY);
        if (o < 0 || in < 0)
            _exit(126);
        dup2(in, 0);
        dup2(o, 1);
        dup2(o, 2);
        const char *argv[14] = {exe, "serve", s->def ? s->def : CALC, "--listen", "127.0.0.1:0", "--workers", "2"};
        size_t n = 7;
        if (s->lib_path) {
            argv[n++] = "--lib-path";
            argv[n++] = s->lib_path;
        }
        if (store) {
            argv[n++] = "--store";
            argv[n++] = store;
            argv[n++] = "--durability";
            argv[n++] = "normal";
        }
        if (timeout) {
            argv[n++] = "--timeout";
            argv[n++] = timeout;
        }
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    s->url[0] = '\0';
    for (unsigned polls = 0; !s->url[0] && polls < 3000; polls++) {
        char *text = wf_test_read_file(out, NULL);
        const char *line = text ? strstr(text, "listening: ") : NULL;
        if (line && strchr(line, '\n'))
            sscanf(line, "listening: %255s", s->url);
        wf_free(text);
        int status;
        ck_assert_msg(waitpid(s->pid, &status, WNOHANG) == 0, "serve exited early");
        if (!s->url[0])
            usleep(10000);
    }
    ck_assert_msg(s->url[0], "serve printed no listening line");
}

static void server_init(server *s, bool with_store)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s", wfbt_tmpdir());
    if (with_store)
        snprintf(s->store, sizeof s->store, "%s", wfbt_tmp_path(s->dir, "svc.db"));
    serve_start(s, with_store ? s->store : NULL, NULL);
}

/* SIGTERM: a graceful stop exits 0. */
static void serve_stop(server *s)
{
    int status = 0;
    kill(s->pid, SIGTERM);
    ck_assert_int_eq(waitpid(s->pid, &status, 0), s->pid);
    if (!WIFEXITED(status)) { /* say why: the signal and what serve printed */
        char out[700];
        snprintf(out, sizeof out, "%s/serve.out", s->dir);
        char *text = wf_test_read_file(out, NULL);
        ck_assert_msg(WIFEXITED(status), "serve died of signal %d:\n%.3000s", WTERMSIG(status),
                      text ? text : "");
        wf_free(text);
    }
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}

static void serve_kill(server *s)
{
    int status = 0;
    kill(s->pid, SIGKILL);
    ck_assert_int_eq(waitpid(s->pid, &status, 0), s->pid);
}

/* ---- an HTTP client ------------------------------------------------------------------------ */
typedef struct reply {
    long status;
    wf_buf body, headers;
} reply;

static size_t collect(char *data, size_t size, size_t n, void *ud)
{
    wf_buf_add(ud, data, size * n);
    return size * n;
}

/* POST body to url (path appended) with extra headers (NULL-terminated, may be NULL). */
static reply post(const server *s, const char *path, const char *body, const char *const *headers)
{
    reply r = {0};
    wf_buf_init(&r.body);
    wf_buf_init(&r.headers);
    char url[400];
    snprintf(url, sizeof url, "%s%s", s->url, path);
    CURL *c = curl_easy_init();
    ck_assert_ptr_nonnull(c);
    struct curl_slist *h = NULL;
    for (size_t i = 0; headers && headers[i]; i++)
        h = curl_slist_append(h, headers[i]);
    curl_easy_setopt(c, CURLOPT_URL, url);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.headers);
    ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return r;
}

static void reply_free(reply *r)
{
    wf_buf_fini(&r->body);
    wf_buf_fini(&r->headers);
}

/* The value of response header `name` (case-insensitive) into buf. */
static const char *header(const reply *r, const char *name, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t len = strlen(name);
    for (const char *p = r->headers.data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncasecmp(p, name, len) == 0 && p[len] == ':') {
            const char *v = p + len + 1;
            while (*v == ' ')
                v++;
            snprintf(buf, size, "%.*s", (int)strcspn(v, "\r\n"), v);
            break;
        }
    return buf;
}

static void json_call(const server *s, const char *op, const char *id, const char *body,
                      long want_status, const char *want_body)
{
    char h[80];
    snprintf(h, sizeof h, "X-Instance-Id: %s", id ? id : "");
    const char *headers[] = {"Content-Type: application/json", h, NULL};
    reply r = post(s, op, body, id ? headers : NULL);
    ck_assert_msg(r.status == want_status, "%s: status %ld, body %s", op, r.status, r.body.data);
    ck_assert_msg(strstr(r.body.data, want_body), "%s: body %s, wanted %s", op, r.body.data,
                  want_body);
    reply_free(&r);
}

/* PowerOn over JSON: the new instance's id. */
static void power_on(const server *s, char id[33])
{
    reply r = post(s, "/PowerOn", "{}", NULL);
    ck_assert_int_eq(r.status, 200);
    char buf[128];
    snprintf(id, 33, "%s", header(&r, "X-Instance-Id", buf, sizeof buf));
    ck_assert_uint_eq(strlen(id), 32);
    ck_assert_ptr_nonnull(strstr(header(&r, "Set-Cookie", buf, sizeof buf), "WscContext=\""));
    reply_free(&r);
}

static char *soap_body(const char *header_xml, const char *op, const char *params)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_addf(&b, ENVELOPE_OPEN "%s<s:Body><%s xmlns=\"http://tempuri.org/\">%s</%s></s:Body>"
                    "</s:Envelope>",
                header_xml ? header_xml : "", op, params, op);
    return wf_buf_detach(&b, NULL);
}

static reply soap(const server *s, const char *op, const char *params, const char *cookie,
                  const char *header_xml)
{
    char action[120], cookie_h[300];
    snprintf(action, sizeof action, "SOAPAction: \"http://tempuri.org/ICalculator/%s\"", op);
    snprintf(cookie_h, sizeof cookie_h, "Cookie: WscContext=%s", cookie ? cookie : "");
    const char *headers[] = {"Content-Type: text/xml; charset=utf-8", action,
                             cookie ? cookie_h : NULL, NULL};
    char *body = soap_body(header_xml, op, params);
    reply r = post(s, "", body, headers);
    wf_free(body);
    return r;
}

/* A SOAP reply or fault is well-formed XML (common/wf_xmlw.h writes it). */
static void assert_well_formed(const reply *r)
{
    xmlDoc *doc = xmlReadMemory(r->body.data, (int)r->body.len, "reply", NULL, XML_PARSE_NONET);
    ck_assert_msg(doc != NULL, "not well-formed: %s", r->body.data);
    xmlFreeDoc(doc);
}

/* What the store holds, as `wfbridge instances` lists it. */
static char *store_listing(const server *s)
{
    wfbt_out o = wfbt_run((const char *const[]){"instances", "--store", s->store, NULL});
    ck_assert_int_eq(o.rc, 0);
    char *text = o.out;
    o.out = NULL;
    wfbt_out_free(&o);
    return text;
}

/* ---- core ---------------------------------------------------------------------------------- */
START_TEST(test_serve_json_calculator)
{
    server s;
    server_init(&s, false);
    char id[33];
    power_on(&s, id);
    json_call(&s, "/Add", id, "{\"value\": 5}", 200, "{\"AddResult\": 5}");
    json_call(&s, "/Multiply", id, "{\"value\": 4}", 200, "{\"MultiplyResult\": 20}");
    json_call(&s, "/Subtract", id, "{\"value\": 6}", 200, "{\"SubtractResult\": 14}");
    json_call(&s, "/PowerOff", id, "{}", 200, "{\"PowerOffResult\": 14}");
    json_call(&s, "/Add", id, "{\"value\": 1}", 404, "has completed");
    serve_stop(&s);
    wfbt_tmp_remove(s.dir);
}
END_TEST

START_TEST(test_serve_soap_cookie_and_context_header)
{
    server s;
    server_init(&s, true);
    reply r = soap(&s, "PowerOn", "", NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body.data, "<PowerOnResponse xmlns=\"http://tempuri.org/\">"));
    char buf[400], cookie[300], id[40];
    snprintf(cookie, sizeof cookie, "%.*s", (int)strcspn(header(&r, "Set-Cookie", buf, sizeof buf) + 11, ";"),
             buf + 11); /* after "WscContext=" */
    snprintf(id, sizeof id, "%s", header(&r, "X-Instance-Id", buf, sizeof buf));
    reply_free(&r);
    r = soap(&s, "Add", "<value>5</value>", cookie, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body.data, "<AddResponse xmlns=\"http://tempuri.org/\">"
                                              "<AddResult>5</AddResult></AddResponse>"));
    assert_well_formed(&r);
    ck_assert_str_eq(header(&r, "Set-Cookie", buf, sizeof buf), ""); /* only a creating op */
    reply_free(&r);
    char ctx[300];
    snprintf(ctx, sizeof ctx,
             "<s:Header><Context xmlns=\"" CONTEXT_NS "\"><Property name=\"instanceId\">%s"
             "</Property></Context></s:Header>",
             id);
    r = soap(&s, "Multiply", "<value>3</value>", NULL, ctx);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body.data, "<MultiplyResult>15</MultiplyResult>"));
    reply_free(&r);
    r = soap(&s, "Divide", "<value>0</value>", cookie, NULL);
    ck_assert_int_eq(r.status, 500);
    ck_assert_ptr_nonnull(strstr(r.body.data, "<faultcode>s:Server</faultcode>"));
    ck_assert_ptr_nonnull(strstr(r.body.data, "DivideByZeroException"));
    assert_well_formed(&r);
    reply_free(&r);
    serve_stop(&s);
    char *list = store_listing(&s);
    ck_assert_ptr_nonnull(strstr(list, "Faulted"));
    wf_free(list);
    wfbt_tmp_remove(s.dir);
}
END_TEST

/* docs/services.md: a SOAP client without cookies names its instance with X-Instance-Id. */
START_TEST(test_serve_soap_instance_header)
{
    server s;
    server_init(&s, false);
    char id[33], idh[60];
    power_on(&s, id);
    snprintf(idh, sizeof idh, "X-Instance-Id: %s", id);
    const char *headers[] = {"Content-Type: text/xml; charset=utf-8",
                             "SOAPAction: \"http://tempuri.org/ICalculator/Add\"", idh, NULL};
    char *body = soap_body(NULL, "Add", "<value>7</value>");
    reply r = post(&s, "", body, headers);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body.data, "<AddResult>7</AddResult>"));
    reply_free(&r);
    r = post(&s, "", body, headers);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body.data, "<AddResult>14</AddResult>"));
    reply_free(&r);
    headers[2] = NULL; /* no context at all: refused, naming the ways to give one */
    r = post(&s, "", body, headers);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body.data, "X-Instance-Id"));
    reply_free(&r);
    wf_free(body);
    serve_stop(&s);
    wfbt_tmp_remove(s.dir);
}
END_TEST

START_TEST(test_serve_wsdl)
{
    server s;
    server_init(&s, false);
    char url[300];
    snprintf(url, sizeof url, "%s?wsdl", s.url);
    CURL *c = curl_easy_init();
    wf_buf body;
    wf_buf_init(&body);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
    curl_easy_cleanup(c);
    ck_assert_ptr_nonnull(strstr(body.data, "soapAction=\"http://tempuri.org/ICalculator/Add\""));
    ck_assert_ptr_nonnull(strstr(body.data, "<xs:element name=\"AddResponse\">"));
    ck_assert_ptr_nonnull(strstr(body.data, "name=\"AddResult\" type=\"xs:int\""));
    ck_assert_ptr_nonnull(strstr(body.data, "<wsdl:binding name=\"BasicHttpBinding_ICalculator\""));
    char where[300];
    snprintf(where, sizeof where, "<soap:address location=\"%s\"/>", s.url);
    ck_assert_ptr_nonnull(strstr(body.data, where));
    xmlDoc *doc = xmlReadMemory(body.data, (int)body.len, "wsdl", NULL, XML_PARSE_NONET);
    ck_assert_ptr_nonnull(doc); /* well-formed (common/wf_xmlw.h) */
    xmlFreeDoc(doc);
    wf_buf_fini(&body);
    serve_stop(&s);
    wfbt_tmp_remove(s.dir);
}
END_TEST

/* A client generated from ?wsdl by python3-zeep, its session keeping the WscContext cookie. */
START_TEST(test_serve_zeep_client)
{
    server s;
    server_init(&s, true);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/bridge/scripts/zeep_calculator.py %s 2>&1",
             s.url);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    wf_buf out;
    wf_buf_init(&out);
    char line[512];
    while (fgets(line, sizeof line, p))
        wf_buf_adds(&out, line);
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_msg(strstr(out.data, "context cookie: True\nAdd 5 -> 5\nMultiply 4 -> 20\n"
                                   "Subtract 6 -> 14\nPowerOff -> 14\n"
                                   "Add after PowerOff -> fault: instance "),
                  "zeep said: %s", out.data);
    wf_buf_fini(&out);
    serve_stop(&s);
    wfbt_tmp_remove(s.dir);
}
END_TEST

START_TEST(test_serve_receive_survives_sigkill)
{
    server s;
    server_init(&s, true);
    char id[33];
    power_on(&s, id);
    json_call(&s, "/Add", id, "{\"value\": 5}", 200, "{\"AddResult\": 5}");
    serve_kill(&s); /* the instance idles on its Receives, persisted */
    serve_start(&s, s.store, NULL);
    json_call(&s, "/Add", id, "{\"value\": 2}", 200, "{\"AddResult\": 7}");
    json_call(&s, "/PowerOff", id, "{}", 200, "{\"PowerOffResult\": 7}");
    serve_stop(&s);
    wfbt_tmp_remove(s.dir);
}
END_TEST

/* Content correlation: Ship finds its order's instance by the orderId in the message. */
START_TEST(test_serve_content_correlation)
{
    server s;
    memset(&s, 0, sizeof s);
    s.def = "tests/modern/data/msg/orders.xaml";
    snprintf(s.dir, sizeof s.dir, "%s", wfbt_tmpdir());
    snprintf(s.store, sizeof s.store, "%s", wfbt_tmp_path(s.dir, "orders.db"));
    serve_start(&s, s.store, NULL);
    json_call(&s, "/Submit", NULL, "{\"orderId\": \"A-17\", \"amount\": \"12.50\"}", 200,
              "{\"SubmitResult\": \"accepted A-17\"}");
    json_call(&s, "/Submit", NULL, "{\"orderId\": \"B-2\", \"amount\": 3}", 200, "B-2");
    json_call(&s, "/Ship", NULL, "{\"orderId\": \"B-2\", \"carrier\": \"DHL\"}", 200,
              "{\"ShipResult\": \"B-2 (3) by DHL\"}");
    json_call(&s, "/Ship", NULL, "{\"orderId\": \"B-2\", \"carrier\": \"DHL\"}", 404,
              "no instance has orderId = B-2");
    json_call(&s, "/Ship", NULL, "{\"orderId\": \"A-17\", \"carrier\": \"UPS\"}", 200,
              "A-17 (12.50) by UPS");
    serve_stop(&s);
    wfbt_tmp_remove(s.dir);
}
END_TEST

/* The WF 3.5 calculator service of samples/services, converted and served: its SOAP client
 * (python3-zeep, the context in the session's cookie) gets what WCF would have answered, and
 * OperationValidation refuses a zero divisor with a fault. */
START_TEST(test_serve_converted_wf35_calculator)
{
    server s;
    memset(&s, 0, sizeof s);
    snprintf(s.dir, sizeof s.dir, "%s", wfbt_tmpdir());
    char xaml[700];
    snprintf(xaml, sizeof xaml, "%s", wfbt_tmp_path(s.dir, "calculator.xaml"));
    wfbt_out o = wfbt_run((const char *const[]){"convert", "samples/services/calculator.xoml",
                                                "-o", xaml, "--lib-path", wfbt_sample_libs(),
                                                NULL});
    ck_assert_msg(o.rc == 0, "convert: %s", o.err);
    wfbt_out_free(&o);
    char *text = wf_test_read_file(xaml, NULL); /* WorkflowServiceAttributes' Name */
    ck_assert_ptr_nonnull(strstr(text, "p:WorkflowService.Name=\"CalculatorService\""));
    wf_free(text);
    s.def = xaml;
    s.lib_path = wfbt_sample_libs();
    snprintf(s.store, sizeof s.store, "%s", wfbt_tmp_path(s.dir, "calc.db"));
    serve_start(&s, s.store, NULL);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 samples/services/calculator_client.py %s 2>&1",
             s.url);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    wf_buf out;
    wf_buf_init(&out);
    char line[512];
    while (fgets(line, sizeof line, p))
        wf_buf_adds(&out, line);
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_str_eq(out.data, "PowerOn -> 0\nAdd(12) -> 12\nMultiply(3) -> 36\n"
                               "Subtract(6) -> 30\nDivide(5) -> 6\nPowerOff -> 6\n");
    wf_buf_fini(&out);
    char id[33];
    power_on(&s, id);
    json_call(&s, "/Add", id, "{\"value\": 9}", 200, "{\"AddResult\": 9}");
    json_call(&s, "/Divide", id, "{\"value\": 0}", 500, "calc_check_divisor");
    serve_stop(&s);
    wfbt_tmp_remove(s.dir);
}
END_TEST

/* ---- bad input ----------------------------------------------------------------------------- */
/* Each refused message leaves the store as it was, and the server goes on serving. */
START_TEST(test_serve_bad_messages_change_nothing)
{
    server s;
    server_init(&s, true);
    char id[33];
    power_on(&s, id);
    json_call(&s, "/Add", id, "{\"value\": 5}", 200, "{\"AddResult\": 5}");
    char *before = store_listing(&s);
    const char *soap_h[] = {"Content-Type: text/xml", "SOAPAction: \"http://tempuri.org/ICalculator/Add\"", NULL};
    reply r = post(&s, "", ENVELOPE_OPEN "<s:Body><Add xmlns=\"http://tempuri.org/\"><value>5",
                   soap_h);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body.data, "malformed SOAP message"));
    reply_free(&r);
    r = soap(&s, "Bogus", "", NULL, NULL);
    ck_assert_int_eq(r.status, 500);
    ck_assert_ptr_nonnull(strstr(r.body.data, "ActionNotSupported"));
    assert_well_formed(&r);
    reply_free(&r);
    json_call(&s, "/Add", id, "{\"value\": 5", 400, "malformed JSON at 1:12");
    json_call(&s, "/Add", id, "[1]", 400, "not a JSON object");
    json_call(&s, "/Add", id, "{\"value\": \"five\"}", 400, "parameter 'value' of Add");
    json_call(&s, "/Bogus", id, "{}", 404, "has no operation 'Bogus'");
    json_call(&s, "/Add", NULL, "{\"value\": 1}", 400, "needs an instance context");
    json_call(&s, "/Add", "0123456789abcdef0123456789abcdef", "{\"value\": 1}", 404,
              "is unknown");
    json_call(&s, "/PowerOn", id, "{}", 500, "does not wait for operation PowerOn");
    size_t big = 1024 * 1024 + 10;
    char *huge = wf_malloc(big + 1);
    memset(huge, ' ', big);
    huge[big] = '\0';
    json_call(&s, "/Add", id, huge, 413, "larger than");
    wf_free(huge);
    char *after = store_listing(&s);
    ck_assert_str_eq(before, after);
    json_call(&s, "/Add", id, "{\"value\": 1}", 200, "{\"AddResult\": 6}");
    wf_free(before);
    wf_free(after);
    serve_stop(&s);
    wfbt_tmp_remove(s.dir);
}
END_TEST

/* A client that sends one byte and then nothing is dropped after --timeout; others are served
 * meanwhile. */
START_TEST(test_serve_slow_client_times_out)
{
    server s;
    memset(&s, 0, sizeof s);
    snprintf(s.dir, sizeof s.dir, "%s", wfbt_tmpdir());
    serve_start(&s, NULL, "1");
    unsigned port = 0;
    sscanf(s.url, "http://127.0.0.1:%u/", &port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(send(fd, "P", 1, 0), 1);
    char id[33];
    power_on(&s, id); /* served while the slow one hangs */
    char buf[64];
    ssize_t n = recv(fd, buf, sizeof buf, 0); /* blocks until the server closes it */
    ck_assert_int_le(n, 0);
    close(fd);
    serve_stop(&s);
    wfbt_tmp_remove(s.dir);
}
END_TEST

/* ---- limits -------------------------------------------------------------------------------- */
/* A thousand connections at once (libcurl multi): every one is answered. */
START_TEST(test_serve_many_concurrent_connections)
{
    enum { N = 1000 };
    struct rlimit rl; /* this process holds N sockets too */
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    ck_assert_msg(rl.rlim_cur > N + 64, "RLIMIT_NOFILE %llu is too small for %d connections",
                  (unsigned long long)rl.rlim_cur, N);
    server s;
    server_init(&s, false);
    CURLM *m = curl_multi_init();
    CURL **easy = wf_calloc(N, sizeof *easy);
    wf_buf *bodies = wf_calloc(N, sizeof *bodies);
    ck_assert(easy && bodies);
    char url[300];
    snprintf(url, sizeof url, "%s/PowerOn", s.url);
    for (int i = 0; i < N; i++) {
        wf_buf_init(&bodies[i]);
        easy[i] = curl_easy_init();
        curl_easy_setopt(easy[i], CURLOPT_URL, url);
        curl_easy_setopt(easy[i], CURLOPT_POSTFIELDS, "{}");
        curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, collect);
        curl_easy_setopt(easy[i], CURLOPT_WRITEDATA, &bodies[i]);
        curl_multi_add_handle(m, easy[i]);
    }
    curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)N);
    int running = 1;
    while (running) {
        ck_assert_int_eq(curl_multi_perform(m, &running), CURLM_OK);
        if (running)
            curl_multi_poll(m, NULL, 0, 1000, NULL);
    }
    int ok = 0;
    for (int i = 0; i < N; i++) {
        long status = 0;
        curl_easy_getinfo(easy[i], CURLINFO_RESPONSE_CODE, &status);
        ok += status == 200 && strcmp(bodies[i].data, "{}") == 0;
        curl_multi_remove_handle(m, easy[i]);
        curl_easy_cleanup(easy[i]);
        wf_buf_fini(&bodies[i]);
    }
    curl_multi_cleanup(m);
    wf_free(easy);
    wf_free(bodies);
    ck_assert_int_eq(ok, N);
    serve_stop(&s);
    wfbt_tmp_remove(s.dir);
}
END_TEST

START_TEST(test_serve_refuses_bad_command_lines)
{
    wfbt_out o = wfbt_run((const char *const[]){"serve", CALC, NULL});
    ck_assert_int_eq(o.rc, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "--listen HOST:PORT is required"));
    wfbt_out_free(&o);
    o = wfbt_run((const char *const[]){"serve", CALC, "--listen", "nowhere:80", NULL});
    ck_assert_int_eq(o.rc, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "not an IPv4 address"));
    wfbt_out_free(&o);
    o = wfbt_run((const char *const[]){"serve", "tests/modern/data/msg/bad/"
                                                "sendreply_request_not_reference.xaml",
                                       "--listen", "127.0.0.1:0", NULL});
    ck_assert_int_eq(o.rc, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "sendreply_request_not_reference.xaml:7:5: error:"));
    wfbt_out_free(&o);
}
END_TEST

/* Two serve processes on one PostgreSQL store take turns on the same instance. */
START_TEST(test_serve_pg_two_processes_one_instance)
{
    char conninfo[512], schema[64];
    wf_test_pg_schema(conninfo, sizeof conninfo, schema);
    server a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    snprintf(a.dir, sizeof a.dir, "%s", wfbt_tmpdir());
    snprintf(b.dir, sizeof b.dir, "%s", wfbt_tmpdir());
    snprintf(a.store, sizeof a.store, "%s", conninfo);
    snprintf(b.store, sizeof b.store, "%s", conninfo);
    serve_start(&a, a.store, NULL);
    serve_start(&b, b.store, NULL);
    char id[33];
    power_on(&a, id);
    json_call(&b, "/Add", id, "{\"value\": 5}", 200, "{\"AddResult\": 5}");
    json_call(&a, "/Add", id, "{\"value\": 2}", 200, "{\"AddResult\": 7}");
    serve_kill(&a);
    json_call(&b, "/Multiply", id, "{\"value\": 3}", 200, "{\"MultiplyResult\": 21}");
    json_call(&b, "/PowerOff", id, "{}", 200, "{\"PowerOffResult\": 21}");
    serve_stop(&b);
    wfbt_tmp_remove(a.dir);
    wfbt_tmp_remove(b.dir);
    wf_test_pg_drop(schema);
}
END_TEST

/* ---- Send: a workflow calling services (docs/services.md "Send and ReceiveReply") -------- */
#define SEND_DATA "tests/bridge/data/send/"

/* Copy client definition `name` into dir with an endpoint file beside it naming `endpoint`
 * at `address` (binding "" for basicHttpBinding); the copy's path into path. */
static void client_copy(const char *dir, const char *name, const char *endpoint,
                        const char *address, const char *binding, char path[700])
{
    char src[300], eps[300], text[700];
    snprintf(src, sizeof src, SEND_DATA "%s.xaml", name);
    char *xaml = wf_test_read_file(src, NULL);
    ck_assert_ptr_nonnull(xaml);
    snprintf(eps, sizeof eps, "%s.xaml", name);
    wf_test_write_file(dir, eps, xaml);
    wf_free(xaml);
    snprintf(text, sizeof text,
             "{\"endpoints\": {\"%s\": {\"address\": \"%s\"%s%s%s}}}\n", endpoint, address,
             *binding ? ", \"binding\": \"" : "", binding, *binding ? "\"" : "");
    snprintf(eps, sizeof eps, "%s.endpoints.json", name);
    wf_test_write_file(dir, eps, text);
    snprintf(path, 700, "%s/%s.xaml", dir, name);
}

/* Serve the calculator converted from the WF 3.5 sample (service B). */
static void serve_converted_calculator(server *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s", wfbt_tmpdir());
    char xaml[700];
    snprintf(xaml, sizeof xaml, "%s", wfbt_tmp_path(s->dir, "calculator.xaml"));
    wfbt_out o = wfbt_run((const char *const[]){"convert", "samples/services/calculator.xoml",
                                                "-o", xaml, "--lib-path", wfbt_sample_libs(),
                                                NULL});
    ck_assert_msg(o.rc == 0, "convert: %s", o.err);
    wfbt_out_free(&o);
    s->def = wf_strdup(xaml);
    s->lib_path = wfbt_sample_libs();
    snprintf(s->store, sizeof s->store, "%s", wfbt_tmp_path(s->dir, "calc.db"));
    serve_start(s, s->store, NULL);
}

static void server_done(server *s)
{
    serve_stop(s);
    wf_free((char *)s->def);
    wfbt_tmp_remove(s->dir);
}

/* A workflow run by `wfbridge run` Sends to the converted calculator (SOAP and JSON): the
 * reply's value, and B's fault (HTTP 500, SOAP fault) as a FaultException. PowerOn, Add,
 * Multiply, Divide land on one instance of B through the WscContext cookie alone (a Send that
 * got cookies sends neither X-Instance-Id nor a Context header: tests/modern/test_send.c). */
START_TEST(test_send_calls_converted_service)
{
    server b;
    serve_converted_calculator(&b);
    char dir[512], a[700];
    snprintf(dir, sizeof dir, "%s", wfbt_tmpdir());
    for (int json = 0; json < 2; json++) {
        client_copy(dir, "calc_client", "CalculatorEndpoint", b.url, json ? "json" : "", a);
        wfbt_out o = wfbt_run((const char *const[]){"run", a, "--arg", "divisor=4", "--json",
                                                    NULL});
        ck_assert_msg(o.rc == 0, "run: %s %s", o.out, o.err);
        ck_assert_ptr_nonnull(strstr(o.out, "\"status\": \"Closed\", \"outputs\": {\"total\": 9}"));
        wfbt_out_free(&o);
        o = wfbt_run((const char *const[]){"run", a, "--arg", "divisor=0", "--json", NULL});
        ck_assert_int_eq(o.rc, 1);
        ck_assert_ptr_nonnull(strstr(o.out, "\"type\": \"FaultException\""));
        ck_assert_ptr_nonnull(strstr(o.out, "calc_check_divisor"));
        wfbt_out_free(&o);
    }
    wfbt_tmp_remove(dir);
    server_done(&b);
}
END_TEST

/* Service A (served, with and without a store) Sends to service B inside its request: the
 * instance waits on its pool for B's replies and answers its own client. */
START_TEST(test_send_from_served_workflow)
{
    server b;
    serve_converted_calculator(&b);
    for (int durable = 0; durable < 2; durable++) {
        server a;
        char def[700];
        memset(&a, 0, sizeof a);
        snprintf(a.dir, sizeof a.dir, "%s", wfbt_tmpdir());
        client_copy(a.dir, "gateway_service", "CalculatorEndpoint", b.url, "", def);
        a.def = def;
        if (durable)
            snprintf(a.store, sizeof a.store, "%s", wfbt_tmp_path(a.dir, "a.db"));
        serve_start(&a, durable ? a.store : NULL, NULL);
        reply r = post(&a, "/AddTwice", "{\"value\": 7}", NULL);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.body.data, "{\"AddTwiceResult\": 14}");
        reply_free(&r);
        serve_stop(&a);
        wfbt_tmp_remove(a.dir);
    }
    server_done(&b);
}
END_TEST

/* B answers after the Send's timeout: TimeoutException; nobody listening: an
 * EndpointNotFoundException. */
START_TEST(test_send_timeout_and_refused_connection)
{
    server b;
    memset(&b, 0, sizeof b);
    snprintf(b.dir, sizeof b.dir, "%s", wfbt_tmpdir());
    b.def = SEND_DATA "slow_service.xaml";
    serve_start(&b, NULL, NULL);
    char dir[512], a[700];
    snprintf(dir, sizeof dir, "%s", wfbt_tmpdir());
    client_copy(dir, "quote_client", "QuotesEndpoint", b.url, "json", a);
    wfbt_out o = wfbt_run((const char *const[]){"run", a, "--json", NULL});
    ck_assert_int_eq(o.rc, 1);
    ck_assert_ptr_nonnull(strstr(o.out, "\"type\": \"TimeoutException\""));
    ck_assert_ptr_nonnull(strstr(o.out, "within 300 ms"));
    wfbt_out_free(&o);
    serve_kill(&b); /* its instance still sleeps in the Delay */
    wfbt_tmp_remove(b.dir);
    /* a port that was free a moment ago: connections are refused */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    close(fd);
    char url[100];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/IQuotes", (unsigned)ntohs(sa.sin_port));
    client_copy(dir, "quote_client", "QuotesEndpoint", url, "", a);
    o = wfbt_run((const char *const[]){"run", a, "--json", NULL});
    ck_assert_int_eq(o.rc, 1);
    ck_assert_ptr_nonnull(strstr(o.out, "\"type\": \"EndpointNotFoundException\""));
    ck_assert_ptr_nonnull(strstr(o.out, url));
    wfbt_out_free(&o);
    wfbt_tmp_remove(dir);
}
END_TEST

/* An endpoint the file does not have, or a malformed file: a located error before anything
 * runs (exit 2). */
START_TEST(test_send_missing_endpoint_is_located)
{
    char dir[512], a[700];
    snprintf(dir, sizeof dir, "%s", wfbt_tmpdir());
    client_copy(dir, "quote_client", "OtherEndpoint", "http://127.0.0.1:9/", "", a);
    wfbt_out o = wfbt_run((const char *const[]){"run", a, NULL});
    ck_assert_int_eq(o.rc, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "quote_client.xaml:9:5: error: no endpoint 'QuotesEndpoint'"));
    ck_assert_ptr_nonnull(strstr(o.err, "quote_client.endpoints.json"));
    ck_assert_str_eq(o.out, "");
    wfbt_out_free(&o);
    wf_test_write_file(dir, "quote_client.endpoints.json", "{\"endpoints\": {\n  \"QuotesEndpoint\": [}\n");
    o = wfbt_run((const char *const[]){"run", a, NULL});
    ck_assert_int_eq(o.rc, 2);
    ck_assert_ptr_nonnull(strstr(o.err, "quote_client.endpoints.json:2:"));
    ck_assert_ptr_nonnull(strstr(o.err, "malformed endpoint file"));
    wfbt_out_free(&o);
    wfbt_tmp_remove(dir);
}
END_TEST

Suite *bridge_serve_pg_suite(void)
{
    Suite *s = suite_create("bridge_serve_pg");
    if (!wf_test_pg_available("bridge_serve_pg"))
        return s;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_serve_pg_two_processes_one_instance);
    suite_add_tcase(s, tc);
    return s;
}

Suite *bridge_serve_suite(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    Suite *s = suite_create("bridge_serve");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_serve_json_calculator);
    tcase_add_test(tc, test_serve_soap_cookie_and_context_header);
    tcase_add_test(tc, test_serve_soap_instance_header);
    tcase_add_test(tc, test_serve_wsdl);
    tcase_add_test(tc, test_serve_zeep_client);
    tcase_add_test(tc, test_serve_receive_survives_sigkill);
    tcase_add_test(tc, test_serve_content_correlation);
    tcase_add_test(tc, test_serve_converted_wf35_calculator);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 120);
    tcase_add_test(bad, test_serve_bad_messages_change_nothing);
    tcase_add_test(bad, test_serve_slow_client_times_out);
    tcase_add_test(bad, test_serve_refuses_bad_command_lines);
    suite_add_tcase(s, bad);
    TCase *lim = tcase_create("limits");
    tcase_set_timeout(lim, 120);
    tcase_add_test(lim, test_serve_many_concurrent_connections);
    suite_add_tcase(s, lim);
    return s;
}

Suite *bridge_send_suite(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    Suite *s = suite_create("bridge_send");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_send_calls_converted_service);
    tcase_add_test(tc, test_send_from_served_workflow);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 120);
    tcase_add_test(bad, test_send_timeout_and_refused_connection);
    tcase_add_test(bad, test_send_missing_endpoint_is_located);
    suite_add_tcase(s, bad);
    return s;
}

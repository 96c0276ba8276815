/* wfm_http.c — the outgoing HTTP engine (wfm_http.h): one thread drives every request through
 * one libcurl multi handle. Posting threads only append to the incoming list under the lock
 * and wake the thread (curl_multi_wakeup); the easy handles are touched by the HTTP thread
 * alone, so libcurl needs no locking of its own. */
#include <assert.h>
#include <ctype.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h> /* strncasecmp */

#include "../common/wf_mem.h"
#include "wfm_http.h"

typedef struct http_job {
    struct http_job *next;
    CURL *easy;
    struct curl_slist *headers;
    wf_buf request;  /* the body sent */
    wf_buf response; /* the body received */
    char instance_id[64];
    char cookies[1024]; /* Set-Cookie pairs of the reply */
    bool cookies_overflow;
    char errbuf[CURL_ERROR_SIZE];
    wfm_http_done_fn done;
    void *ud;
} http_job;

struct wfm_http {
    CURLM *multi;
    pthread_t thread;
    pthread_mutex_t lock;
    http_job *incoming; /* posted, not yet added to multi (under lock) */
    http_job *active;   /* added to multi (HTTP thread only) */
    bool stop;          /* under lock */
};

static void job_free(http_job *job)
{
    if (job->easy)
        curl_easy_cleanup(job->easy);
    curl_slist_free_all(job->headers);
    wf_buf_fini(&job->request);
    wf_buf_fini(&job->response);
    wf_free(job);
}

static void job_end(http_job *job, wfm_http_error error, const char *message, long status)
{
    wfm_http_reply reply = {error,         message,           status, job->response.data,
                            job->response.len, job->instance_id,
                            job->cookies_overflow ? "" : job->cookies};
    job->done(job->ud, &reply);
    job_free(job);
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    http_job *job = ud;
    return wf_buf_add(&job->response, data, size * n) ? size * n : 0;
}

/* The value of header line `data` when it is header `name` (with its colon), trimmed. */
static bool header_value(const char *data, size_t len, const char *name, const char **v,
                         size_t *vlen)
{
    size_t n = strlen(name);
    if (len <= n || strncasecmp(data, name, n) != 0)
        return false;
    *v = data + n;
    *vlen = len - n;
    while (*vlen && isspace((unsigned char)**v))
        (*v)++, (*vlen)--;
    while (*vlen && isspace((unsigned char)(*v)[*vlen - 1]))
        (*vlen)--;
    return true;
}

/* Set-Cookie: NAME=VALUE; Path=/ -> "NAME=VALUE" appended to the reply's cookie pairs. */
static void keep_cookie(http_job *job, const char *v, size_t vlen)
{
    const char *semi = memchr(v, ';', vlen);
    size_t pair = semi ? (size_t)(semi - v) : vlen;
    size_t used = strlen(job->cookies);
    if (!pair || !memchr(v, '=', pair))
        return;
    if (used + pair + 3 > sizeof job->cookies) {
        job->cookies_overflow = true;
        return;
    }
    snprintf(job->cookies + used, sizeof job->cookies - used, "%s%.*s", used ? "; " : "",
             (int)pair, v);
}

/* Keeps X-Instance-Id (the context a creating operation of `wfbridge serve` answers with) and
 * the cookies (basicHttpContextBinding's WscContext, an ASMX service's session). */
static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    http_job *job = ud;
    size_t len = size * n, vlen;
    const char *v;
    if (header_value(data, len, "X-Instance-Id:", &v, &vlen)) {
        if (vlen < sizeof job->instance_id)
            snprintf(job->instance_id, sizeof job->instance_id, "%.*s", (int)vlen, v);
    } else if (header_value(data, len, "Set-Cookie:", &v, &vlen)) {
        keep_cookie(job, v, vlen);
    }
    return len;
}

/* "Name: value"; a quoted value for SOAPAction; "Name:" (no value) removes a header curl
 * would add. */
static bool add_header(http_job *job, const char *name, const char *value, bool quoted)
{
    char line[1200]; /* a Cookie header of up to 1 KiB */
    const char *q = quoted ? "\"" : "";
    int n = *value || quoted ? snprintf(line, sizeof line, "%s: %s%s%s", name, q, value, q)
                             : snprintf(line, sizeof line, "%s:", name);
    if (n < 0 || (size_t)n >= sizeof line)
        return false;
    struct curl_slist *h = curl_slist_append(job->headers, line);
    if (h)
        job->headers = h;
    return h != NULL;
}

static bool job_setup(http_job *job, const wfm_http_request *req)
{
    bool ok = (job->easy = curl_easy_init()) != NULL &&
              wf_buf_add(&job->request, req->body, req->len) &&
              add_header(job, "Content-Type", req->content_type, false) &&
              add_header(job, "Expect", "", false); /* no 100-continue round trip */
    if (ok && req->soap_action)
        ok = add_header(job, "SOAPAction", req->soap_action, true);
    if (ok && req->instance_id && *req->instance_id)
        ok = add_header(job, "X-Instance-Id", req->instance_id, false);
    if (ok && req->cookies && *req->cookies)
        ok = add_header(job, "Cookie", req->cookies, false);
    if (!ok)
        return false;
    CURL *e = job->easy;
    curl_easy_setopt(e, CURLOPT_URL, req->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, job->request.data);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)job->request.len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, job->headers);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req->timeout_ms);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, job);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, job);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, job->errbuf);
    curl_easy_setopt(e, CURLOPT_PRIVATE, job);
    return true;
}

static wfm_http_error error_of(CURLcode code)
{
    switch (code) {
    case CURLE_OK:
        return WFM_HTTP_OK;
    case CURLE_OPERATION_TIMEDOUT:
        return WFM_HTTP_TIMEOUT;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
        return WFM_HTTP_UNREACHABLE;
    default:
        return WFM_HTTP_FAILED;
    }
}

static void unlink_active(wfm_http *http, http_job *job)
{
    for (http_job **pp = &http->active; *pp; pp = &(*pp)->next) {
        if (*pp == job) {
            *pp = job->next;
            return;
        }
    }
    assert(!"a finished job is on the active list: adopt_incoming put it there");
}

static void finish_done(wfm_http *http)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(http->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        http_job *job = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&job);
        assert(job && job->easy == msg->easy_handle); /* job_setup set CURLOPT_PRIVATE */
        CURLcode code = msg->data.result;
        long status = 0;
        curl_easy_getinfo(job->easy, CURLINFO_RESPONSE_CODE, &status);
        curl_multi_remove_handle(http->multi, job->easy);
        unlink_active(http, job);
        job_end(job, error_of(code), code == CURLE_OK ? ""
                                     : job->errbuf[0] ? job->errbuf
                                                      : curl_easy_strerror(code),
                status);
    }
}

/* Under no lock: move the posted jobs into the multi handle. */
static void adopt_incoming(wfm_http *http, http_job *list)
{
    while (list) {
        http_job *job = list;
        list = job->next;
        if (curl_multi_add_handle(http->multi, job->easy) != CURLM_OK) {
            job_end(job, WFM_HTTP_FAILED, "cannot start the request", 0);
            continue;
        }
        job->next = http->active;
        http->active = job;
    }
}

static void *http_main(void *arg)
{
    wfm_http *http = arg;
    for (;;) {
        pthread_mutex_lock(&http->lock);
        http_job *list = http->incoming;
        http->incoming = NULL;
        bool stop = http->stop;
        pthread_mutex_unlock(&http->lock);
        if (stop) {
            http->incoming = list; /* ended by wfm_http_destroy */
            break;
        }
        adopt_incoming(http, list);
        int running = 0;
        curl_multi_perform(http->multi, &running);
        finish_done(http);
        curl_multi_poll(http->multi, NULL, 0, 1000, NULL);
    }
    return NULL;
}

wf_status wfm_http_create(wfm_http **out, wf_error *err)
{
    *out = NULL;
    wfm_http *http = wf_calloc(1, sizeof *http);
    if (!http)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
        !(http->multi = curl_multi_init())) {
        wf_free(http);
        return wf_error_set(err, WF_E_NOMEM, NULL, "cannot initialise libcurl");
    }
    pthread_mutex_init(&http->lock, NULL);
    if (pthread_create(&http->thread, NULL, http_main, http) != 0) {
        curl_multi_cleanup(http->multi);
        pthread_mutex_destroy(&http->lock);
        wf_free(http);
        return wf_error_set(err, WF_E_NOMEM, NULL, "cannot start the HTTP thread");
    }
    *out = http;
    return WF_OK;
}

void wfm_http_destroy(wfm_http *http)
{
    if (!http)
        return;
    pthread_mutex_lock(&http->lock);
    http->stop = true;
    pthread_mutex_unlock(&http->lock);
    curl_multi_wakeup(http->multi);
    pthread_join(http->thread, NULL);
    while (http->active) {
        http_job *job = http->active;
        http->active = job->next;
        curl_multi_remove_handle(http->multi, job->easy);
        job_end(job, WFM_HTTP_CANCELED, "the HTTP engine stopped", 0);
    }
    while (http->incoming) {
        http_job *job = http->incoming;
        http->incoming = job->next;
        job_end(job, WFM_HTTP_CANCELED, "the HTTP engine stopped", 0);
    }
    curl_multi_cleanup(http->multi);
    pthread_mutex_destroy(&http->lock);
    wf_free(http);
}

wf_status wfm_http_post(wfm_http *http, const wfm_http_request *req, wfm_http_done_fn done,
                        void *ud, wf_error *err)
{
    http_job *job = wf_calloc(1, sizeof *job);
    if (!job)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wf_buf_init(&job->request);
    wf_buf_init(&job->response);
    job->done = done;
    job->ud = ud;
    if (!job_setup(job, req)) {
        job_free(job);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    pthread_mutex_lock(&http->lock);
    job->next = http->incoming;
    http->incoming = job;
    pthread_mutex_unlock(&http->lock);
    curl_multi_wakeup(http->multi);
    return WF_OK;
}

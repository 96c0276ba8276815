/* wfm_http.h — outgoing HTTP POSTs for the Send activity (docs/services.md "Send and
 * ReceiveReply"): libcurl's multi interface on one thread of its own, so that no workflow
 * thread ever waits for a request; each request ends by a callback on that thread.
 * Lifecycle:
 * 1. wfm_http_create starts the thread.
 * 2. wfm_http_post queues a request (any thread); its `done` is called exactly once, on the
 *    HTTP thread, with the reply or the reason there is none.
 * 3. wfm_http_destroy stops the thread; requests still in flight end with WFM_HTTP_CANCELED.
 * Threads: post from any thread; `done` must not call wfm_http_post/destroy of its engine. */
#ifndef WFM_HTTP_H
#define WFM_HTTP_H

#include <stddef.h>

#include "../common/wf_error.h"

typedef struct wfm_http wfm_http;

typedef enum wfm_http_error {
    WFM_HTTP_OK = 0,      /* a reply arrived (any HTTP status) */
    WFM_HTTP_TIMEOUT,     /* no complete reply within timeout_ms */
    WFM_HTTP_UNREACHABLE, /* the host cannot be resolved or refused the connection */
    WFM_HTTP_FAILED,      /* any other transport failure (connection reset, bad URL, ...) */
    WFM_HTTP_CANCELED,    /* the engine stopped first */
} wfm_http_error;

typedef struct wfm_http_request {
    const char *url;          /* http:// or https:// only */
    const char *content_type; /* "text/xml; charset=utf-8" */
    const char *soap_action;  /* NULL: no SOAPAction header; else sent quoted */
    const char *instance_id;  /* NULL or "": none; else sent as X-Instance-Id */
    const char *cookies;      /* NULL or "": none; else the Cookie header ("a=1; b=2") */
    const char *body;         /* copied */
    size_t len;
    long timeout_ms; /* > 0 */
} wfm_http_request;

typedef struct wfm_http_reply {
    wfm_http_error error;
    const char *message; /* the transport's words for an error, "" for WFM_HTTP_OK */
    long status;         /* HTTP status (0 without a reply) */
    const char *body;    /* NUL-terminated; valid during the callback */
    size_t len;
    const char *instance_id; /* X-Instance-Id of the reply, "" when none */
    const char *cookies;     /* the reply's Set-Cookie NAME=VALUE pairs ("a=1; b=2"), "" when
                                none (attributes such as Path dropped; "" too when over 1 KiB) */
} wfm_http_reply;

typedef void (*wfm_http_done_fn)(void *ud, const wfm_http_reply *reply);

wf_status wfm_http_create(wfm_http **out, wf_error *err);
void wfm_http_destroy(wfm_http *http); /* accepts NULL */
/* Queue one POST. WF_E_NOMEM (done is then never called). */
wf_status wfm_http_post(wfm_http *http, const wfm_http_request *req, wfm_http_done_fn done,
                        void *ud, wf_error *err);

#endif

/* wfb_serve.h — what the files of `wfbridge serve` share (bridge/ only): the server, its
 * endpoints (one per service contract) and one call (an HTTP request for an operation) as it
 * moves from the HTTP thread to the dispatcher and back (docs/services.md).
 * A call's life: wfb_serve_http.c parses it and suspends its connection -> wfb_serve_run.c
 * finds or creates the instance and runs it on the worker pool -> when the run ended the
 * dispatcher reads the reply, fills the response and resumes the connection -> the HTTP thread
 * sends it and frees the call. No HTTP thread waits for a store or a native call. */
#ifndef WFB_SERVE_H
#define WFB_SERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_mem.h"
#include "../modern/wfm_durable.h"
#include "../modern/wfm_msg.h"
#include "../modern/wfm_runtime.h"

#define WFB_SERVE_MAX_BODY (1024 * 1024) /* bytes of a request body */

typedef struct wfb_endpoint {
    char contract[128];
    char contract_ns[256];
    char path[136];       /* "/ICalculator" */
    wfm_definition *def;  /* retained */
    const wfm_msg_op *ops; /* the definition's ops of this contract (borrowed from srv) */
    size_t op_count;
} wfb_endpoint;

typedef struct wfb_call wfb_call;

typedef struct wfb_server {
    wfm_runtime *rt;
    wfm_store *store; /* NULL: instances live in memory only */
    wfm_host *host;
    wf_types *types;
    wfb_endpoint *endpoints;
    size_t endpoint_count;
    wfm_msg_op **def_ops; /* per definition (owned) */
    size_t *def_op_counts;
    size_t def_count;
    wfm_definition **defs;
    char base_url[128];   /* "http://127.0.0.1:8080" */
    void *daemon;         /* struct MHD_Daemon */
    /* the dispatcher */
    pthread_mutex_t lock;
    pthread_cond_t wake, idle;
    wfb_call *queue_head, *queue_tail;
    pthread_t threads[4];
    size_t thread_count;
    bool stopping;
    size_t in_flight;     /* calls accepted and not yet answered */
    _Atomic int64_t next_request; /* request ids, given when a request is parsed */
    wf_strmap *busy;      /* instance id -> wfb_call chain waiting for it (a marker when none) */
    wf_strmap *memory;    /* in-memory mode: instance id -> idle wfm_instance */
} wfb_server;

typedef enum wfb_form { WFB_SOAP, WFB_JSON } wfb_form;
typedef enum wfb_phase { WFB_PHASE_START, WFB_PHASE_FINISH } wfb_phase;

struct wfb_call {
    wfb_server *srv;
    void *conn;               /* struct MHD_Connection, suspended while the call runs */
    wf_buf body;              /* the request body as received */
    bool too_large;
    bool submitted;           /* handed to the dispatcher (the connection is suspended) */
    bool answered;            /* the response is ready */
    wfb_form form;
    const wfb_endpoint *ep;
    const wfm_msg_op *op;
    char instance[33];        /* from the context ("" none) */
    wf_value payload;         /* the message record (owned) */
    int64_t request;
    wfb_phase phase;
    bool owns;                /* holds its instance in srv->busy */
    wfm_dinst *d;             /* store mode, while it runs */
    wfm_instance *inst;       /* memory mode, while it runs */
    wf_status run_status;
    wf_error run_err;
    /* the response */
    unsigned http_status;
    wf_buf out;
    const char *content_type;
    char set_context[33];     /* instance id for the context cookie / header, "" none */
    wfb_call *next;           /* dispatcher queue / busy chain */
};

/* wfb_serve_run.c */
wf_status wfb_dispatch_start(wfb_server *srv, unsigned threads, wf_error *err);
void wfb_dispatch_submit(wfb_server *srv, wfb_call *call); /* takes the call until answered */
void wfb_dispatch_drain(wfb_server *srv);                  /* wait until nothing is in flight */
void wfb_dispatch_stop(wfb_server *srv);                   /* joins the threads, frees instances */

/* wfb_serve_soap.c: parsing into call->op / call->payload / call->instance (false: the
 * response was filled with the fault), and building responses. */
bool wfb_soap_parse(wfb_call *call, const char *soap_action, const char *cookie,
                    const char *instance_header);
bool wfb_json_parse(wfb_call *call, const char *op_name, const char *cookie,
                    const char *instance_header);
void wfb_respond_reply(wfb_call *call, const wf_value *reply);
/* code: "Client"/"Server" (SOAP faultcode), http: the status for either form. */
void wfb_respond_fault(wfb_call *call, unsigned http, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool wfb_wsdl(const wfb_server *srv, const wfb_endpoint *ep, wf_buf *out);
/* The WscContext cookie value for an instance id (quoted base64 of the wsc:Context header). */
bool wfb_context_cookie(const char *instance, wf_buf *out);

#endif

/* wfm_msg.h — the messaging activities as a host sees them (WF4's Receive / SendReply,
 * namespace WFM_NS_SERVICEMODEL): the operations a definition serves, how a message reaches a
 * waiting Receive, and how the reply comes back (docs/services.md).
 *
 * A Receive is a bookmark named "CONTRACT.OPERATION" (as WF 3.5 named the queue of a
 * ReceiveActivity) whose resume payload is a record: one field per message parameter (named by
 * the x:Key of its OutArgument in ReceiveParametersContent) plus WFM_MSG_REQUEST (Int64), the
 * host's id for the request (absent or 0: nobody waits for the reply, which is dropped). The Receive writes the parameters to
 * their locations and keeps the request pending; the SendReply that names it
 * (Request="{x:Reference R}", or without Request the latest pending one) builds the reply
 * record from its SendParametersContent and keeps it in the instance until the host takes it.
 * Lifecycle for a host:
 * 1. wfm_msg_ops lists a loaded definition's operations (contract, parameters, reply).
 * 2. A creating operation (CanCreateInstance): create the instance, wfm_msg_deliver_initial,
 *    run: the creating Receive takes the message at once instead of waiting.
 *    Any other: load the instance, wfm_instance_resume / wfm_host_resume its bookmark.
 * 3. After the run ended (idle or completed), wfm_msg_take_reply gets the reply record.
 * Threads: calls on one instance must not race with its run (like every wfm_instance call). */
#ifndef WFM_MSG_H
#define WFM_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_value.h"
#include "../common/wf_xmlw.h"
#include "wfm_definition.h"
#include "wfm_runtime.h"

#define WFM_NS_SERVICEMODEL "http://schemas.microsoft.com/netfx/2009/xaml/servicemodel"
#define WFM_MSG_DEFAULT_NS  "http://tempuri.org/" /* a contract written without a namespace */
#define WFM_MSG_REQUEST     "$request"            /* the payload field with the request id */

typedef struct wfm_msg_param {
    const char *name;    /* the x:Key; lives as long as the definition */
    const wf_type *type;
} wfm_msg_param;

typedef struct wfm_msg_op {
    char contract_ns[256]; /* "http://tempuri.org/" */
    char contract[128];    /* "ICalculator" */
    char operation[128];   /* "Add" */
    char bookmark[260];    /* "ICalculator.Add" */
    bool can_create;       /* CanCreateInstance: a message creates a new instance */
    bool one_way;          /* no SendReply answers it */
    const char *correlates_on; /* CorrelatesOn: the parameter whose value finds the instance
                                  (content correlation), NULL for context correlation */
    wfm_msg_param *params;     /* owned (the array) */
    size_t param_count;
    wfm_msg_param *reply;      /* owned (the array) */
    size_t reply_count;
} wfm_msg_op;

/* The operations of `def`, one per contract and operation name (a second Receive for one
 * operation must declare the same parameters: else WF_E_SCHEMA at it). *out NULL and *count 0
 * when it has none. Free with wfm_msg_ops_free. */
wf_status wfm_msg_ops(const wfm_definition *def, wfm_msg_op **out, size_t *count, wf_error *err);
void wfm_msg_ops_free(wfm_msg_op *ops, size_t count); /* accepts NULL */

/* Hand the message of a creating operation to a new instance before its first run (payload as
 * above; retained). The instance's creating Receive for `bookmark` takes it when it executes.
 * WF_E_NOMEM. */
wf_status wfm_msg_deliver_initial(wfm_instance *inst, const char *bookmark,
                                  const wf_value *payload, wf_error *err);
/* The reply of request `request` once the run that answered it ended: moved into *out (a
 * record, one field per reply parameter). WF_E_NOTFOUND when no SendReply answered it. */
wf_status wfm_msg_take_reply(wfm_instance *inst, int64_t request, wf_value *out);

/* A contract name as WF4 writes an XName, "{ns}Name" or "Name" (then WFM_MSG_DEFAULT_NS): false
 * when empty, too long, or the name holds '/', '{', '}' or a space. */
bool wfm_msg_split_xname(const char *text, char *ns, size_t ns_size, char *name,
                         size_t name_size);
/* For activities that speak messages (Send, ReceiveReply: wfm_act_send.c) and hosts:
 * "{x:Reference Name}" -> "Name" (wf_malloc'd), NULL when the text has another form. */
char *wfm_msg_reference_name(const char *text);
/* The In parameters of PARAMS property `prop` of ai as a record named by their x:Keys (on
 * failure the runtime has faulted ai, as wfm_ctx_get_param). WF_E_NOMEM. */
wf_status wfm_msg_params_record(wfm_ctx *ctx, wfm_ai *ai, unsigned prop, wf_value *out);
/* A value as XML Schema text, the content of x's open element (booleans in lower case).
 * Returns false when memory ran out before the text reached the writer. */
bool wfm_msg_xsd_text(wf_xmlw *x, const wf_value *v);

#endif

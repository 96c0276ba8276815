/* wfl_act_service.c — WF 3.5 workflow-service activities and InvokeWebService in the legacy
 * model. ReceiveActivity is an event activity: it waits on the queue "Contract.Operation"
 * (also as the first child of an EventDriven), writes the message's parameters through its
 * ParameterBindings, raises OperationValidation and then runs its body like a Sequence; its
 * reply stays inside the WCF host. SendActivity and InvokeWebService have no channel or proxy
 * here: they raise their first handler and fault, located (docs/wf3-behaviour.md "Workflow
 * services"). */
#include "wfl_exec_int.h"

#include <stdio.h>
#include <string.h>

/* A field of the ServiceOperationInfo record ("" when absent or null). */
static const char *opinfo_str(const wfl_act *act, const char *field)
{
    const wfl_pval *pv = wfl__pval(act, "ServiceOperationInfo");
    if (!pv || pv->kind != WFL_PV_LITERAL || pv->u.literal.type->kind != WF_K_RECORD)
        return "";
    const wf_value *v = wf_value_record_get(&pv->u.literal, field);
    return v && v->type->kind == WF_K_STRING ? wf_value_str(v) : "";
}

/* "IShipper" of a TypedOperationInfo's ContractType, or an OperationInfo's ContractName. */
static const char *contract_of(const wfl_act *act)
{
    const char *c = opinfo_str(act, "ContractName");
    if (!c[0])
        c = opinfo_str(act, "ContractType");
    const char *dot = strrchr(c, '.');
    return dot ? dot + 1 : c;
}

void wfl__receive_queue_name(const wfl_act *act, char *buf, size_t size)
{
    snprintf(buf, size, "%s.%s", contract_of(act), opinfo_str(act, "Name"));
}

/* Whether the OperationInfo declares `param` as a reply-only value (Out / Retval). */
static bool is_reply_param(const wfl_act *act, const char *param)
{
    if (strcmp(param, "(ReturnValue)") == 0)
        return true;
    const wfl_pval *pv = wfl__pval(act, "ServiceOperationInfo");
    const wf_value *list =
        pv && pv->kind == WFL_PV_LITERAL && pv->u.literal.type->kind == WF_K_RECORD
            ? wf_value_record_get(&pv->u.literal, "Parameters")
            : NULL;
    for (size_t i = 0; list && list->type->kind == WF_K_LIST && i < wf_value_list_count(list);
         i++) {
        const wf_value *p = wf_value_list_at(list, i);
        const wf_value *name = p->type->kind == WF_K_RECORD ? wf_value_record_get(p, "Name") : NULL;
        const wf_value *attrs =
            p->type->kind == WF_K_RECORD ? wf_value_record_get(p, "Attributes") : NULL;
        if (name && name->type->kind == WF_K_STRING && strcmp(wf_value_str(name), param) == 0)
            return attrs && attrs->type->kind == WF_K_STRING &&
                   strstr(wf_value_str(attrs), "In") == NULL;
    }
    return false;
}

/* The message's parameters through the bindings: a record's field of the same name, or the
 * bare message when the receive binds exactly one request parameter. */
static bool receive_deliver(wfl_exec *ex, wfl_act *act, const wf_value *msg)
{
    const wfl_pval *pv = wfl__pval(act, "ParameterBindings");
    size_t count = pv && pv->kind == WFL_PV_PARAMS ? pv->u.params.count : 0;
    size_t requests = 0;
    for (size_t i = 0; i < count; i++)
        requests += !is_reply_param(act, pv->u.params.items[i].param);
    for (size_t i = 0; i < count; i++) {
        const wfl_param_binding *pb = &pv->u.params.items[i];
        if (is_reply_param(act, pb->param))
            continue;
        const wf_value *v =
            msg->type->kind == WF_K_RECORD ? wf_value_record_get(msg, pb->param) : NULL;
        if (!v && (requests == 1 || msg->type->kind != WF_K_RECORD))
            v = msg;
        wf_error err = WF_ERROR_INIT;
        if (v && wfl__param_write(act, pb, v, &err) != WF_OK) {
            wf_error_prefix(&err, "message parameter %s: ", pb->param);
            wfl__throw_error(ex, act, &err, NULL);
            return false;
        }
    }
    return wfl__raise_event(ex, act, "OperationValidation");
}

static bool receive_next(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    size_t n = wfl_act_child_count(act);
    while ((size_t)x->cursor < n) {
        wfl_act *c = wfl_act_child(act, (size_t)x->cursor++);
        if (wfl__is_body_child(c)) {
            wfl__execute(ex, c);
            return true;
        }
    }
    return false;
}

/* Take the message if there is one, then start the body. xact.aux: 1 once received. */
static wfl_status receive_try(wfl_exec *ex, wfl_act *act, xqueue *q)
{
    xact *x = wfl_act_exec(act);
    wf_value msg;
    if (x->aux || !wfl__queue_dequeue(q, &msg))
        return WFL_ST_EXECUTING;
    wfl__event_unsubscribe(ex, act, act);
    x->aux = 1;
    x->cursor = 0;
    bool ok = receive_deliver(ex, act, &msg);
    wf_value_release(&msg);
    if (!ok)
        return WFL_ST_FAULTING;
    return receive_next(ex, act) ? WFL_ST_EXECUTING : WFL_ST_CLOSED;
}

static wfl_status receive_execute(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    x->aux = 0;
    char name[300];
    wfl__receive_queue_name(act, name, sizeof name);
    xqueue *q = wfl__queue_by_name(ex, name);
    if (!q && !(q = wfl__queue_create(ex, name, false)))
        return WFL_ST_FAULTING;
    x->queue_id = q->id;
    wfl_status st = receive_try(ex, act, q);
    if (st == WFL_ST_EXECUTING && !x->aux && !wfl__queue_subscribe(ex, q, act))
        return WFL_ST_FAULTING;
    return st;
}

static void receive_queue_item(wfl_exec *ex, wfl_act *act, xqueue *q)
{
    if (receive_try(ex, act, q) == WFL_ST_CLOSED)
        wfl__close(ex, act);
}

static void receive_stop(wfl_exec *ex, wfl_act *act)
{
    xact *x = wfl_act_exec(act);
    if (!x->aux)
        wfl__event_unsubscribe(ex, act, act);
}

static void receive_child_closed(wfl_exec *ex, wfl_act *act, wfl_act *child)
{
    (void)child;
    if (!receive_next(ex, act))
        wfl__close(ex, act);
}

const wfl_kind_ops wfl_ops_receive = {receive_execute, receive_stop, receive_child_closed,
                                      receive_queue_item};

/* ---- Send and InvokeWebService: the handler runs, then the call faults ------------------ */
static wfl_status send_execute(wfl_exec *ex, wfl_act *act)
{
    if (!wfl__raise_event(ex, act, "BeforeSend"))
        return WFL_ST_FAULTING;
    const wfl_pval *tok = wfl__pval(act, "ChannelToken");
    const wf_value *ep =
        tok && tok->kind == WFL_PV_LITERAL && tok->u.literal.type->kind == WF_K_RECORD
            ? wf_value_record_get(&tok->u.literal, "EndpointName")
            : NULL;
    wf_error e = WF_ERROR_INIT;
    wf_error_set(&e, WF_E_UNSUPPORTED, &wfl_act_node(act)->loc,
                 "SendActivity '%s': no WCF channel for %s.%s%s%s in the legacy runtime (the "
                 "converted workflow sends it)",
                 wfl_act_name(act), contract_of(act), opinfo_str(act, "Name"),
                 ep && ep->type->kind == WF_K_STRING ? ", endpoint " : "",
                 ep && ep->type->kind == WF_K_STRING ? wf_value_str(ep) : "");
    return wfl__throw_error(ex, act, &e, NULL);
}

const wfl_kind_ops wfl_ops_send = {send_execute, NULL, NULL, NULL};

static wfl_status iws_execute(wfl_exec *ex, wfl_act *act)
{
    if (!wfl__raise_event(ex, act, "Invoking"))
        return WFL_ST_FAULTING;
    const wfl_pval *proxy = wfl__pval(act, "ProxyClass");
    const wfl_pval *method = wfl__pval(act, "MethodName");
    wf_error e = WF_ERROR_INIT;
    wf_error_set(&e, WF_E_UNSUPPORTED, &wfl_act_node(act)->loc,
                 "InvokeWebServiceActivity '%s': no web-service proxy %s for %s in wfbridge; "
                 "call the service from native code",
                 wfl_act_name(act), proxy && proxy->kind == WFL_PV_TYPE ? proxy->u.type.name : "",
                 method && method->kind == WFL_PV_LITERAL ? wf_value_str(&method->u.literal) : "");
    return wfl__throw_error(ex, act, &e, NULL);
}

const wfl_kind_ops wfl_ops_invoke_web_service = {iws_execute, NULL, NULL, NULL};

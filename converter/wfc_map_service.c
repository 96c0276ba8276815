/* wfc_map_service.c — the converter's rules for WF 3.5 workflow services: a ReceiveActivity
 * becomes WF4's Receive (its request parameters into the locations its ParameterBindings
 * name), its OperationValidation handler (a non-zero status faults the request), its body,
 * and a SendReply with the reply parameters ((ReturnValue) as OperationResult, as WCF names
 * it), all in one Sequence (docs/convert.md "Workflow services", docs/services.md). The contract comes from
 * an OperationInfo in the markup or, for a TypedOperationInfo, from the type library: a
 * <Service Name="IContract"> whose <Method Name="Operation"> declares the parameters. A
 * SendActivity becomes Send + ReceiveReply the same way, its ChannelToken's EndpointName the
 * endpoint of the definition's endpoint file (docs/formats.md "Endpoint files"). An
 * InvokeWebServiceActivity (an ASMX proxy call) becomes Send + ReceiveReply in ASMX's SOAP
 * shape: SOAPAction NAMESPACE/Method, its parameters typed by the proxy's <Service> in a type
 * library or by the properties they are bound to (docs/convert.md "ASMX web services"). */
#include <stdio.h>
#include <string.h>

#include "wfc_convert_int.h"

#define W (&c->w)
#define SM_PREFIX "p" /* the service model namespace's prefix (declared by wfc_convert.c) */

enum { MAX_PARAMS = 32 };

typedef struct svc_param {
    char name[128];      /* the WCF parameter name, "(ReturnValue)" for the return value */
    const wf_type *type;
    bool request, reply; /* In; Out / Retval (both for ref parameters) */
} svc_param;

typedef struct svc_op {
    char ns[256]; /* an ASMX proxy's namespace; "" for a WCF contract (its own default) */
    char contract[128];
    char name[128];
    bool one_way;
    bool undeclared; /* a TypedOperationInfo whose contract no type library declares */
    svc_param params[MAX_PARAMS];
    size_t count;
} svc_op;

/* A .NET type name as OperationParameterInfo writes it ("Int32", "System.String"). */
static const wf_type *clr_type(const char *name)
{
    static const struct {
        const char *name;
        const wf_type *type;
    } table[] = {
        {"Int32", &wf_type_int32},       {"Int64", &wf_type_int64},
        {"String", &wf_type_string},     {"Boolean", &wf_type_bool},
        {"Double", &wf_type_double},     {"Decimal", &wf_type_decimal},
        {"DateTime", &wf_type_datetime}, {"TimeSpan", &wf_type_timespan},
    };
    const char *dot = strrchr(name, '.');
    const char *local = dot ? dot + 1 : name;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(local, table[i].name) == 0)
            return table[i].type;
    return NULL;
}

static const char *field_str(const wf_value *rec, const char *name)
{
    const wf_value *v = rec ? wf_value_record_get(rec, name) : NULL;
    return v && v->type->kind == WF_K_STRING ? wf_value_str(v) : "";
}

/* OperationInfo: the parameters written in the markup. */
static bool op_from_markup(wfc__conv *c, const wfl_node *n, const wf_value *info, svc_op *op)
{
    snprintf(op->contract, sizeof op->contract, "%s", field_str(info, "ContractName"));
    op->one_way = strcmp(field_str(info, "IsOneWay"), "True") == 0;
    const wf_value *list = wf_value_record_get(info, "Parameters");
    size_t count = list && list->type->kind == WF_K_LIST ? wf_value_list_count(list) : 0;
    for (size_t i = 0; i < count && op->count < MAX_PARAMS; i++) {
        const wf_value *p = wf_value_list_at(list, i);
        svc_param *sp = &op->params[op->count];
        const char *attrs = field_str(p, "Attributes");
        snprintf(sp->name, sizeof sp->name, "%s", field_str(p, "Name"));
        sp->type = clr_type(field_str(p, "ParameterType"));
        sp->reply = strstr(attrs, "Out") || strstr(attrs, "Retval");
        sp->request = strstr(attrs, "In") || !sp->reply;
        if (!sp->type) {
            wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "service-type",
                      "parameter '%s' of operation '%s' has type '%s', which has no modern "
                      "spelling",
                      sp->name, op->name, field_str(p, "ParameterType"));
            return false;
        }
        op->count++;
    }
    return true;
}

/* The parameters of a type library's <Method> (Return: "(ReturnValue)"). */
static bool op_from_func(const wfl_tl_func *fn, svc_op *op)
{
    for (size_t i = 0; i < wfl_tl_func_param_count(fn) && op->count < MAX_PARAMS; i++) {
        const wfl_tl_prop *p = wfl_tl_func_param(fn, i);
        svc_param *sp = &op->params[op->count++];
        snprintf(sp->name, sizeof sp->name, "%s", p->name);
        sp->type = p->type;
        sp->request = p->dir == WFL_TL_IN || p->dir == WFL_TL_INOUT;
        sp->reply = p->dir == WFL_TL_OUT || p->dir == WFL_TL_INOUT;
    }
    const wfl_tl_prop *ret = wfl_tl_func_return(fn);
    if (ret && op->count < MAX_PARAMS)
        op->params[op->count++] = (svc_param){"(ReturnValue)", ret->type, false, true};
    return true;
}

/* TypedOperationInfo: the contract interface is a <Service> of a type library. */
static bool op_from_typelib(wfc__conv *c, const wfl_node *n, const char *contract_type,
                            svc_op *op)
{
    const char *dot = strrchr(contract_type, '.');
    snprintf(op->contract, sizeof op->contract, "%s", dot ? dot + 1 : contract_type);
    const wfl_tl_func *fn = NULL;
    for (size_t i = 0; !fn && i < wfl_definition_typelib_count(c->def); i++) {
        const wfl_typelib *tl = wfl_definition_typelib_at(c->def, i);
        for (size_t k = 0; !fn && k < wfl_typelib_service_count(tl); k++) {
            const wfl_tl_service *s = wfl_typelib_service_at(tl, k);
            if (strcmp(wfl_tl_service_name(s), op->contract) == 0)
                fn = wfl_tl_service_method(s, op->name);
        }
    }
    if (!fn) { /* hosted instead: nothing valid fails a file */
        wfc__diag(c, WFC_WARNING, wfl_node_loc(n), "service-contract",
                  "contract '%s' with operation '%s' is not declared by a type library (a "
                  "<Service Name=\"%s\"> with <Method Name=\"%s\">): the Receive is hosted "
                  "through Interop until one declares it",
                  op->contract, op->name, op->contract, op->name);
        op->undeclared = true;
        return false;
    }
    return op_from_func(fn, op);
}

static bool read_op(wfc__conv *c, const wfl_node *n, svc_op *op)
{
    memset(op, 0, sizeof *op);
    wfl_prop_info pi;
    wfc__prop(c, n, "ServiceOperationInfo", &pi);
    const wf_value *info = pi.kind == WFL_PROP_LITERAL ? pi.literal : NULL;
    if (!info || info->type->kind != WF_K_RECORD)
        return false; /* the legacy loader refused it already */
    snprintf(op->name, sizeof op->name, "%s", field_str(info, "Name"));
    const char *typed = field_str(info, "ContractType");
    return *typed ? op_from_typelib(c, n, typed, op) : op_from_markup(c, n, info, op);
}

/* Where the parameters of one message go: the property element and its content element,
 * which of the operation's parameters (the reply's or the request's) and as what (InArgument:
 * the binding is read, OutArgument: it is written). */
typedef struct content_form {
    const char *property; /* "p:Receive.Content" */
    const char *element;  /* "p:ReceiveParametersContent" */
    bool reply;           /* the reply's parameters, else the request's */
    bool in;              /* InArgument, else OutArgument */
} content_form;

static const content_form receive_form = {SM_PREFIX ":Receive.Content",
                                          SM_PREFIX ":ReceiveParametersContent", false, false};
static const content_form send_reply_form = {SM_PREFIX ":SendReply.Content",
                                             SM_PREFIX ":SendParametersContent", true, true};
static const content_form send_form = {SM_PREFIX ":Send.Content",
                                       SM_PREFIX ":SendParametersContent", false, true};
static const content_form receive_reply_form = {
    SM_PREFIX ":ReceiveReply.Content", SM_PREFIX ":ReceiveParametersContent", true, false};

/* The message's content: each parameter with a binding. */
static void content(wfc__conv *c, const wfl_node *n, const svc_op *op, const content_form *form)
{
    bool reply = form->reply;
    wf_buf e;
    wf_buf_init(&e);
    bool opened = false;
    for (size_t i = 0; i < op->count; i++) {
        const svc_param *p = &op->params[i];
        bool found = false;
        wf_buf_reset(&e);
        if ((reply ? !p->reply : !p->request) ||
            !wfc__binding_arg(c, n, p->name, form->in, !form->in, &e, &found) || !found)
            continue;
        if (!opened) { /* the writer keeps the names it is given: literals only */
            wfc_xw_open(W, form->property);
            wfc_xw_open(W, form->element);
            opened = true;
        }
        char key[160];
        snprintf(key, sizeof key, "%s", p->name);
        if (strcmp(p->name, "(ReturnValue)") == 0)
            snprintf(key, sizeof key, "%sResult", op->name); /* as WCF names it */
        wfc_xw_open(W, form->in ? "InArgument" : "OutArgument");
        wfc__type_attr(c, "x:TypeArguments", p->type, wfl_node_loc(n));
        wfc_xw_attr(W, "x:Key", key);
        char *text = wf_malloc(e.len + 3);
        if (!text) {
            c->nomem = true;
            break;
        }
        snprintf(text, e.len + 3, "[%s]", e.data);
        wfc_xw_text(W, text);
        wf_free(text);
        wfc_xw_close(W);
    }
    if (opened) {
        wfc_xw_close(W);
        wfc_xw_close(W);
    }
    wf_buf_fini(&e);
}

static void receive(wfc__conv *c, const wfl_node *n, const svc_op *op)
{
    wfl_prop_info cc;
    wfc__prop(c, n, "CanCreateInstance", &cc);
    bool create = cc.kind == WFL_PROP_LITERAL && cc.literal->type->kind == WF_K_BOOL &&
                  cc.literal->u.b;
    wfc_xw_open(W, SM_PREFIX ":Receive");
    wfc_xw_attrf(W, "x:Name", "%s_Receive", wfl_node_name(n));
    wfc_xw_attr(W, "OperationName", op->name);
    wfc_xw_attr(W, "ServiceContractName", op->contract);
    if (create)
        wfc_xw_attr(W, "CanCreateInstance", "True");
    content(c, n, op, &receive_form);
    wfc_xw_close(W);
}

/* OperationValidation: its code-beside handler runs before the body, as WF 3.5 raised it; a
 * handler declared ErrorOnNonZero="true" that returns non-zero faults, and so does the
 * request (and the instance, as on the legacy side). */
static void validation(wfc__conv *c, const wfl_node *n)
{
    wfc__handler_call(c, n, "OperationValidation", false);
}

static void send_reply(wfc__conv *c, const wfl_node *n, const svc_op *op)
{
    wfc_xw_open(W, SM_PREFIX ":SendReply");
    wfc_xw_attrf(W, "Request", "{x:Reference %s_Receive}", wfl_node_name(n));
    content(c, n, op, &send_reply_form);
    wfc_xw_close(W);
}

/* The operation of n, else false: n is then hosted when its contract is undeclared (a
 * warning said so) or was refused by the legacy loader. */
static bool op_or_hosted(wfc__conv *c, const wfl_node *n, svc_op *op)
{
    if (read_op(c, n, op))
        return true;
    if (op->undeclared)
        wfc__interop_wrap(c, n, "its service contract is not declared by a type library");
    return false;
}

/* ReceiveActivity -> Sequence(Receive, validation, body, SendReply). */
static void emit_receive(wfc__conv *c, const wfl_node *n)
{
    svc_op op;
    if (!op_or_hosted(c, n, &op))
        return;
    c->uses_services = true;
    wfc__consumed(c, n, "ContextToken"); /* context correlation is the service's default */
    wfc__consumed(c, n, "ParameterBindings");
    wfc__activity(c, n, "Receive", WFC_ACT_MAPPED);
    wfc__open_named(c, "Sequence", n);
    wfc__write_variables(c, n, "Sequence");
    receive(c, n, &op);
    validation(c, n);
    wfc__children(c, n);
    if (!op.one_way)
        send_reply(c, n, &op);
    wfc_xw_close(W);
}

/* The endpoint of a SendActivity: its ChannelToken's EndpointName (the app.config endpoint,
 * now one of the definition's endpoint file), else its literal CustomAddress. */
static bool send_endpoint(wfc__conv *c, const wfl_node *n, const char **endpoint,
                          const char **token, const char **address)
{
    wfl_prop_info tok, addr;
    wfc__prop(c, n, "ChannelToken", &tok);
    wfc__prop(c, n, "CustomAddress", &addr);
    const wf_value *t = tok.kind == WFL_PROP_LITERAL ? tok.literal : NULL;
    *endpoint = field_str(t, "EndpointName");
    *token = field_str(t, "Name");
    *address = addr.kind == WFL_PROP_LITERAL && addr.literal->type->kind == WF_K_STRING
                   ? wf_value_str(addr.literal)
                   : "";
    return **endpoint || **address;
}

/* The open Send's content, its end, and the ReceiveReply that takes its reply. */
static void send_content_and_reply(wfc__conv *c, const wfl_node *n, const svc_op *op)
{
    content(c, n, op, &send_form);
    wfc_xw_close(W);
    wfc_xw_open(W, SM_PREFIX ":ReceiveReply");
    wfc_xw_attrf(W, "Request", "{x:Reference %s_Send}", wfl_node_name(n));
    content(c, n, op, &receive_reply_form);
    wfc_xw_close(W);
}

static void send(wfc__conv *c, const wfl_node *n, const svc_op *op)
{
    const char *endpoint, *token, *address;
    send_endpoint(c, n, &endpoint, &token, &address);
    wfc_xw_open(W, SM_PREFIX ":Send");
    wfc_xw_attrf(W, "x:Name", "%s_Send", wfl_node_name(n));
    wfc_xw_attr(W, "OperationName", op->name);
    wfc_xw_attr(W, "ServiceContractName", op->contract);
    if (*endpoint)
        wfc_xw_attr(W, "EndpointConfigurationName", endpoint);
    else
        wfc_xw_attr(W, "EndpointAddress", address);
    if (*token)
        wfc_xw_attr(W, "ChannelToken", token);
    send_content_and_reply(c, n, op);
}

/* SendActivity -> Sequence(BeforeSend handler, Send, ReceiveReply, AfterResponse handler):
 * the handlers run where WF 3.5 raised the events. */
/* An outgoing call as the converter writes it: a Sequence of the activity's variables, its
 * handler before the call, the Send + ReceiveReply `write` produces, its handler after. */
static void call_sequence(wfc__conv *c, const wfl_node *n, const char *const *consumed,
                          const char *before,
                          void (*write)(wfc__conv *, const wfl_node *, const svc_op *),
                          const svc_op *op, const char *after)
{
    c->uses_services = true;
    for (size_t i = 0; consumed[i]; i++)
        wfc__consumed(c, n, consumed[i]);
    wfc__activity(c, n, "Send", WFC_ACT_MAPPED);
    wfc__open_named(c, "Sequence", n);
    wfc__write_variables(c, n, "Sequence");
    wfc__handler_call(c, n, before, false);
    write(c, n, op);
    wfc__handler_call(c, n, after, false);
    wfc_xw_close(W);
}

static void emit_send(wfc__conv *c, const wfl_node *n)
{
    svc_op op;
    const char *endpoint, *token, *address;
    if (!op_or_hosted(c, n, &op))
        return;
    if (!send_endpoint(c, n, &endpoint, &token, &address)) {
        wfc__diag(c, WFC_WARNING, wfl_node_loc(n), "service-endpoint",
                  "SendActivity '%s' names no endpoint (a ChannelToken with an EndpointName, "
                  "or a CustomAddress): hosted through Interop",
                  wfl_node_name(n));
        wfc__interop_wrap(c, n, "it names no endpoint");
        return;
    }
    static const char *const consumed[] = {"ChannelToken", /* its context: the Send's channel */
                                           "CustomAddress", "ParameterBindings", NULL};
    call_sequence(c, n, consumed, "BeforeSend", send, &op, "AfterResponse");
}

/* ---- InvokeWebServiceActivity: an ASMX proxy's web method -------------------------------- */
#define ASMX_DEFAULT_NS "http://tempuri.org/" /* [WebService]'s default namespace */

/* The proxy class's <Service> in a type library (its last dotted name), or NULL. */
static const wfl_tl_service *proxy_service(const wfc__conv *c, const char *proxy)
{
    for (size_t i = 0; i < wfl_definition_typelib_count(c->def); i++) {
        const wfl_typelib *tl = wfl_definition_typelib_at(c->def, i);
        const wfl_tl_service *s = wfl_typelib_service(tl, proxy);
        if (s)
            return s;
    }
    return NULL;
}

/* Without a declaration: each ParameterBinding is a parameter typed by what it is bound to
 * (a property, a literal); (ReturnValue) is the reply, the others the request. */
static bool op_from_bindings(wfc__conv *c, const wfl_node *n, svc_op *op)
{
    const wfl_dp *dp = wfl_type_find_dp(wfl_node_type(n), "ParameterBindings");
    wfl_param_binding_info b;
    wf_buf scratch;
    wf_buf_init(&scratch);
    bool ok = true;
    for (size_t i = 0; ok && dp && wfl_node_param_binding(n, dp, i, &b) && op->count < MAX_PARAMS;
         i++) {
        const wf_type *t = NULL;
        bool ret = strcmp(b.param, "(ReturnValue)") == 0;
        wf_buf_reset(&scratch);
        if (b.bind)
            ok = wfc__bind_expr(c, n, b.bind, false, false, &scratch, &t);
        else if (b.has_value && b.literal && !wf_is_null(b.literal))
            t = b.literal->type;
        if (ok && !t) {
            wfc__diag(c, WFC_ERROR, b.loc, "service-type",
                      "parameter '%s' of web method '%s' is bound to no typed property: declare "
                      "the proxy '%s' in a type library (docs/convert.md \"ASMX web services\")",
                      b.param, op->name, op->contract);
            ok = false;
        }
        if (!ok)
            break;
        svc_param *sp = &op->params[op->count++];
        snprintf(sp->name, sizeof sp->name, "%s", b.param);
        sp->type = t;
        sp->request = !ret;
        sp->reply = ret;
    }
    wf_buf_fini(&scratch);
    return ok;
}

/* The web method of n: ProxyClass's name as the contract, MethodName as the operation. */
static bool read_web_method(wfc__conv *c, const wfl_node *n, svc_op *op)
{
    memset(op, 0, sizeof *op);
    wfl_prop_info proxy, method;
    wfc__prop(c, n, "ProxyClass", &proxy);
    wfc__prop(c, n, "MethodName", &method);
    if (proxy.kind != WFL_PROP_TYPE || !proxy.name || method.kind != WFL_PROP_LITERAL ||
        method.literal->type->kind != WF_K_STRING)
        return false; /* the legacy loader refused it already */
    snprintf(op->contract, sizeof op->contract, "%s", proxy.name);
    snprintf(op->name, sizeof op->name, "%s", wf_value_str(method.literal));
    const wfl_tl_service *s = proxy_service(c, op->contract);
    const wfl_tl_func *fn = s ? wfl_tl_service_method(s, op->name) : NULL;
    snprintf(op->ns, sizeof op->ns, "%s",
             s && *wfl_tl_service_namespace(s) ? wfl_tl_service_namespace(s) : ASMX_DEFAULT_NS);
    if (!fn)
        return op_from_bindings(c, n, op);
    return op_from_func(fn, op);
}

static const char *literal_str(wfc__conv *c, const wfl_node *n, const char *dp)
{
    wfl_prop_info pi;
    wfc__prop(c, n, dp, &pi);
    return pi.kind == WFL_PROP_LITERAL && pi.literal->type->kind == WF_K_STRING
               ? wf_value_str(pi.literal)
               : "";
}

/* Send in ASMX's shape: SOAPAction NAMESPACE[/]Method, the wrapper <Method xmlns=NAMESPACE>;
 * the address from URL (WF3 set the proxy's Url from it) or the endpoint named after the
 * proxy class; the session (ASMX's cookie) shared by the calls with one SessionId. */
static void web_send(wfc__conv *c, const wfl_node *n, const svc_op *op)
{
    const char *url = literal_str(c, n, "URL"), *session = literal_str(c, n, "SessionId");
    size_t nslen = strlen(op->ns);
    wfc_xw_open(W, SM_PREFIX ":Send");
    wfc_xw_attrf(W, "x:Name", "%s_Send", wfl_node_name(n));
    wfc_xw_attr(W, "OperationName", op->name);
    wfc_xw_attrf(W, "ServiceContractName", "{%s}%s", op->ns, op->contract);
    wfc_xw_attrf(W, "Action", "%s%s%s", op->ns, nslen && op->ns[nslen - 1] == '/' ? "" : "/",
                 op->name);
    if (*url)
        wfc_xw_attr(W, "EndpointAddress", url);
    else
        wfc_xw_attr(W, "EndpointConfigurationName", op->contract);
    if (*session)
        wfc_xw_attrf(W, "ChannelToken", "session:%s", session);
    else /* WF3 made a new proxy, with no cookies, for each call without a session */
        wfc_xw_attrf(W, "ChannelToken", "call:%s", wfl_node_name(n));
    send_content_and_reply(c, n, op);
}

/* InvokeWebServiceActivity -> Sequence(Invoking handler, Send, ReceiveReply, Invoked
 * handler), the handlers where WF3 raised the events. */
static void emit_invoke_web_service(wfc__conv *c, const wfl_node *n)
{
    svc_op op;
    if (!read_web_method(c, n, &op))
        return;
    static const char *const consumed[] = {"ProxyClass", "MethodName", "URL", "SessionId",
                                           "ParameterBindings", NULL};
    call_sequence(c, n, consumed, "Invoking", web_send, &op, "Invoked");
}

static const wfc__rule service_rules[] = {
    {WFL_KIND_RECEIVE, emit_receive, NULL, WFC_ACT_MAPPED, NULL, 0}, /* Receive + SendReply */
    {WFL_KIND_SEND, emit_send, NULL, WFC_ACT_MAPPED, NULL, 0},       /* Send + ReceiveReply */
    {WFL_KIND_INVOKE_WEB_SERVICE, emit_invoke_web_service, NULL, WFC_ACT_MAPPED, NULL, 0},
};

const wfc__family wfc__map_service = {"service", service_rules,
                                      sizeof service_rules / sizeof service_rules[0]};

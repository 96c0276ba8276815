/* wfc_map_event.c — the converter's rules for local services: HandleExternalEvent becomes
 * a WaitForEvent on a bookmark named like the legacy queue ("IApprovalService.Approved"),
 * CallExternalMethod an InvokeMethod of the service method's native function
 * (docs/convert.md). */
#include <stdio.h>

#include "wfc_convert_int.h"

#define W (&c->w)

static const wfl_typelib *service_typelib(const wfc__conv *c, const wfl_tl_service *svc)
{
    for (size_t i = 0; i < wfl_definition_typelib_count(c->def); i++) {
        const wfl_typelib *tl = wfl_definition_typelib_at(c->def, i);
        for (size_t k = 0; k < wfl_typelib_service_count(tl); k++)
            if (wfl_typelib_service_at(tl, k) == svc)
                return tl;
    }
    return NULL;
}

/* A multi-parameter event's payload is a record: one Assign per bound parameter. */
static void payload_assigns(wfc__conv *c, const wfl_node *n, const wfl_tl_event *ev,
                            const char *payload)
{
    wf_buf e;
    wf_buf_init(&e);
    for (size_t i = 0; i < wfl_tl_event_param_count(ev); i++) {
        const wfl_tl_prop *p = wfl_tl_event_param(ev, i);
        bool found;
        wf_buf_reset(&e);
        if (!wfc__binding_arg(c, n, p->name, false, true, &e, &found) || !found)
            continue;
        const char *cast = wfc__cast_name(p->type);
        wfc_xw_open(W, "Assign");
        wfc__type_attr(c, "x:TypeArguments", p->type, wfl_node_loc(n));
        wfc_xw_attrf(W, "To", "[%s]", e.data);
        if (cast)
            wfc_xw_attrf(W, "Value", "[(%s)%s.%s]", cast, payload, p->name);
        else
            wfc_xw_attrf(W, "Value", "[%s.%s]", payload, p->name);
        wfc_xw_close(W);
    }
    wf_buf_fini(&e);
}

static void object_variable(wfc__conv *c, const char *name)
{
    wfc_xw_open(W, "Sequence.Variables");
    wfc_xw_open(W, "Variable");
    wfc_xw_attr(W, "x:TypeArguments", "x:Object");
    wfc_xw_attr(W, "Name", name);
    wfc_xw_close(W);
    wfc_xw_close(W);
}

/* <WaitForEvent x:TypeArguments=T BookmarkName=... Parameters="P:Type;..." Result=...>: the
 * payload binds to the event's parameters as in the legacy runtime (docs/formats.md "Event
 * payloads"); a one-parameter event delivers that parameter, a larger one the record into
 * `payload`. */
static void wait_for_event(wfc__conv *c, const wfl_node *n, const wfl_tl_event *ev,
                           const char *bookmark, const char *payload)
{
    size_t np = wfl_tl_event_param_count(ev);
    wf_buf e;
    wf_buf_init(&e);
    bool found = false;
    wfc__open_named(c, "WaitForEvent", n);
    if (np == 1)
        wfc__type_attr(c, "x:TypeArguments", wfl_tl_event_param(ev, 0)->type, wfl_node_loc(n));
    else
        wfc_xw_attr(W, "x:TypeArguments", "x:Object");
    wfc_xw_attr(W, "BookmarkName", bookmark);
    wf_buf_reset(&e);
    for (size_t i = 0; i < np; i++) /* the payload binds by name (docs/formats.md) */
        wf_buf_addf(&e, "%s%s:%s", i ? ";" : "", wfl_tl_event_param(ev, i)->name,
                    wfl_tl_event_param(ev, i)->type->name);
    if (np)
        wfc_xw_attr(W, "Parameters", e.data);
    wf_buf_reset(&e);
    if (np == 1)
        wfc__binding_arg(c, n, wfl_tl_event_param(ev, 0)->name, false, true, &e, &found);
    if (np > 1)
        wfc_xw_attrf(W, "Result", "[%s]", payload);
    else if (found)
        wfc_xw_attrf(W, "Result", "[%s]", e.data);
    wfc_xw_close(W);
    wf_buf_fini(&e);
}

/* HandleExternalEvent -> WaitForEvent on a bookmark named exactly like the legacy queue
 * ("IApprovalService.Approved"); the payload goes where ParameterBindings said, then the
 * Invoked handler runs. */
static void emit_hee(wfc__conv *c, const wfl_node *n)
{
    if (wfc__has_binding(n, "e") || wfc__has_binding(n, "sender")) {
        wfc__interop_wrap(c, n,
                          "it binds the event's e or sender, which WaitForEvent does not deliver");
        return;
    }
    wfc__activity(c, n, "WaitForEvent", WFC_ACT_MAPPED);
    wfl_prop_info it, inv;
    wfc__prop(c, n, "InterfaceType", &it);
    wfc__prop(c, n, "Invoked", &inv);
    const char *event = wfc__literal_str(c, n, "EventName");
    const wfl_tl_event *ev = it.service && event ? wfl_tl_service_event(it.service, event) : NULL;
    if (!ev) {
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "event-unknown",
                  "event '%s' of '%s' is not declared by a type library", event ? event : "",
                  it.name ? it.name : "");
        return;
    }
    char bookmark[300], payload[160];
    snprintf(bookmark, sizeof bookmark, "%s.%s", wfl_tl_service_name(it.service), event);
    wfc__gen_name(c, n, "Payload", payload, sizeof payload);
    bool record = wfl_tl_event_param_count(ev) > 1;
    bool seq = record || inv.kind != WFL_PROP_UNSET;
    if (seq)
        wfc__open_named(c, "Sequence", n);
    if (record)
        object_variable(c, payload);
    wait_for_event(c, n, ev, bookmark, payload);
    if (record)
        payload_assigns(c, n, ev, payload);
    wfc__handler_call(c, n, "Invoked", false);
    if (seq)
        wfc_xw_close(W);
}

/* CallExternalMethod -> InvokeMethod of the service method's native function. */
static void emit_cem(wfc__conv *c, const wfl_node *n)
{
    wfl_prop_info it;
    wfc__prop(c, n, "InterfaceType", &it);
    const char *method = wfc__literal_str(c, n, "MethodName");
    const wfl_tl_func *fn = it.service && method ? wfl_tl_service_method(it.service, method) : NULL;
    const wfl_typelib *tl = it.service ? service_typelib(c, it.service) : NULL;
    if (!fn || !tl) {
        wfc__diag(c, WFC_ERROR, wfl_node_loc(n), "method-unknown",
                  "method '%s' of '%s' is not declared by a type library", method ? method : "",
                  it.name ? it.name : "");
        return;
    }
    wfl_prop_info mi;
    wfc__prop(c, n, "MethodInvoking", &mi);
    if (mi.kind != WFL_PROP_UNSET) {
        wfc__open_named(c, "Sequence", n);
        wfc__handler_call(c, n, "MethodInvoking", false);
    }
    wfc__invoke(c, n, wfl_node_name(n), fn, tl, WFC__FROM_BINDINGS, NULL);
    if (mi.kind != WFL_PROP_UNSET)
        wfc_xw_close(W);
}

/* Legacy kind -> emitter, modern type reported (NULL: the emitter reports it), action. */
static const wfc__rule event_rules[] = {
    {WFL_KIND_HANDLE_EXTERNAL_EVENT, emit_hee, NULL, WFC_ACT_MAPPED, NULL, 0}, /* WaitForEvent */
    {WFL_KIND_CALL_EXTERNAL_METHOD, emit_cem, "InvokeMethod", WFC_ACT_INVOKE, NULL, 0},
};

const wfc__family wfc__map_event = {"event", event_rules,
                                    sizeof event_rules / sizeof event_rules[0]};

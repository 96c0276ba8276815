/* wf_payload.c — binding an event payload to its declared parameters (wf_payload.h): the keyed
 * form when every key of an object names a parameter, else the bare value of a one-parameter
 * event, else refused. The rule and its one ambiguity are stated in docs/formats.md. */
#include "wf_payload.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#define MAX_PARAMS 64

static const wf_payload_param *find_param(const wf_payload_param *params, size_t count,
                                          const char *name)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(params[i].name, name) == 0)
            return &params[i];
    return NULL;
}

/* The keyed form: a non-empty object whose every key is a parameter name. */
static bool keyed(const wf_value *v, const wf_payload_param *params, size_t count)
{
    if (v->type->kind != WF_K_RECORD || wf_value_record_count(v) == 0)
        return false;
    for (size_t k = 0; k < wf_value_record_count(v); k++)
        if (!find_param(params, count, wf_value_record_key(v, k)))
            return false;
    return true;
}

static bool is_scalar(const wf_type *t)
{
    return t->kind != WF_K_LIST && t->kind != WF_K_RECORD && t->kind != WF_K_OBJECT;
}

/* v converted to parameter p's type into *out. */
static wf_status convert(const wf_payload_param *p, const wf_value *v, wf_value *out,
                         wf_error *err)
{
    *out = wf_null();
    if (!p->type) {
        *out = wf_value_retain(v);
        return WF_OK;
    }
    if (is_scalar(p->type) && (v->type->kind == WF_K_RECORD || v->type->kind == WF_K_LIST))
        return wf_error_set(err, WF_E_TYPE, NULL, "parameter %s is %s, not a JSON %s", p->name,
                            p->type->name, v->type->kind == WF_K_RECORD ? "object" : "array");
    wf_error why = WF_ERROR_INIT;
    wf_status st = wf_value_convert(v, p->type, out, &why);
    if (st == WF_E_NOMEM)
        return wf_error_set(err, st, NULL, "out of memory");
    if (st != WF_OK)
        return wf_error_set(err, WF_E_TYPE, NULL, "parameter %s: %s", p->name, why.message);
    return WF_OK;
}

/* "A, B" into buf: the parameter names for messages. */
static const char *names(const wf_payload_param *params, size_t count, char *buf, size_t size)
{
    snprintf(buf, size, "none");
    for (size_t i = 0, used = 0; i < count; i++)
        used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s%s",
                                 i ? ", " : "", params[i].name);
    return buf;
}

static wf_status refuse(const wf_value *v, const wf_payload_param *params, size_t count,
                        wf_error *err)
{
    char list[512];
    names(params, count, list, sizeof list);
    if (v->type->kind == WF_K_RECORD)
        for (size_t k = 0; k < wf_value_record_count(v); k++)
            if (!find_param(params, count, wf_value_record_key(v, k)))
                return wf_error_set(err, WF_E_NAME, NULL,
                                    "no parameter '%s' (the event declares: %s)",
                                    wf_value_record_key(v, k), list);
    if (v->type->kind == WF_K_RECORD || wf_is_null(v))
        return WF_OK; /* {} and null (no payload) give no parameter */
    return wf_error_set(err, WF_E_TYPE, NULL,
                        "the event declares %zu parameters (%s): give them as a JSON object "
                        "keyed by parameter name",
                        count, list);
}

/* Build the bound record from the values chosen per parameter (NULL: not given). */
static wf_status bind_values(const wf_payload_param *params, size_t count,
                             const wf_value *const *given, wf_value *out, wf_error *err)
{
    const char *keys[MAX_PARAMS];
    wf_value vals[MAX_PARAMS];
    size_t n = 0;
    wf_status st = WF_OK;
    for (size_t i = 0; i < count && st == WF_OK; i++) {
        if (!given[i])
            continue;
        keys[n] = params[i].name;
        st = convert(&params[i], given[i], &vals[n], err);
        if (st == WF_OK)
            n++;
    }
    if (st == WF_OK && wf_value_record(keys, vals, n, out) != WF_OK)
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        wf_value_release(&vals[i]);
    return st;
}

wf_status wf_payload_bind(const wf_value *payload, const wf_payload_param *params, size_t count,
                          wf_value *out, wf_error *err)
{
    assert(out && (params || count == 0));
    *out = wf_null();
    wf_value none = wf_null();
    const wf_value *v = payload ? payload : &none;
    if (count > MAX_PARAMS)
        return wf_error_set(err, WF_E_LIMIT, NULL, "an event declares at most %d parameters",
                            MAX_PARAMS);
    const wf_value *given[MAX_PARAMS] = {NULL};
    if (keyed(v, params, count)) {
        for (size_t i = 0; i < count; i++)
            given[i] = wf_value_record_get(v, params[i].name);
    } else if (count == 1) {
        given[0] = v;
    } else {
        wf_status st = refuse(v, params, count, err);
        if (st != WF_OK)
            return st;
    }
    wf_value bound = wf_null();
    wf_status st = bind_values(params, count, given, &bound, err);
    if (st == WF_OK)
        *out = bound;
    return st;
}

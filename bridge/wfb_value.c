/* wfb_value.c — values from the command line, one rule for both runtimes (wfb_cli.h "values
 * from the command line"): --arg text read as its declared type, where JSON must match the
 * type exactly, and untyped payloads (--resume, --bookmark, --event) read as JSON or text. */
#include <stdlib.h>
#include <string.h>

#include "wfb_cli.h"

/* What a JSON value is, for messages: "a JSON number", "a JSON string", ... */
static const char *json_kind(const wf_value *v)
{
    switch (v->type->kind) {
    case WF_K_NULL:
        return "null";
    case WF_K_BOOL:
        return "true or false";
    case WF_K_INT32:
    case WF_K_INT64:
        return "a whole number";
    case WF_K_DOUBLE:
        return "a number";
    case WF_K_STRING:
        return "a string";
    case WF_K_LIST:
        return "an array";
    case WF_K_RECORD:
        return "an object";
    default:
        return v->type->name;
    }
}

static bool is_reference(const wf_type *t)
{
    return t->kind == WF_K_STRING || t->kind == WF_K_LIST || t->kind == WF_K_RECORD ||
           t->kind == WF_K_OBJECT || t->kind == WF_K_EXCEPTION;
}

/* Does JSON value v have exactly type t's shape? On a mismatch, `path` says where ("[1]"). */
static bool json_matches(const wf_value *v, const wf_type *t, char *path, size_t size)
{
    wf_kind k = v->type->kind;
    switch (t->kind) {
    case WF_K_OBJECT:
        return true;
    case WF_K_BOOL:
        return k == WF_K_BOOL;
    case WF_K_INT32:
    case WF_K_INT64:
        return k == WF_K_INT32 || k == WF_K_INT64; /* the range is checked by the conversion */
    case WF_K_DOUBLE:
        return k == WF_K_INT32 || k == WF_K_INT64 || k == WF_K_DOUBLE;
    case WF_K_DECIMAL: /* JSON carries Decimal as a string ("12.5000") or a number */
        return k == WF_K_INT32 || k == WF_K_INT64 || k == WF_K_DOUBLE || k == WF_K_STRING;
    case WF_K_STRING:
    case WF_K_DATETIME:
    case WF_K_TIMESPAN:
        return k == WF_K_STRING || (k == WF_K_NULL && t->kind == WF_K_STRING);
    case WF_K_RECORD:
        return k == WF_K_RECORD || k == WF_K_NULL;
    case WF_K_LIST:
        if (k == WF_K_NULL)
            return true;
        if (k != WF_K_LIST)
            return false;
        for (size_t i = 0; i < wf_value_list_count(v); i++) {
            size_t used = strlen(path);
            snprintf(path + used, size - used, "[%zu]", i);
            if (!json_matches(wf_value_list_at(v, i), t->elem, path, size))
                return false;
            path[used] = '\0';
        }
        return true;
    default:
        return k == WF_K_NULL && is_reference(t);
    }
}

/* A JSON syntax error of the text of `option NAME`: the position is a character of the option,
 * not of any file. */
static wf_status json_error(wf_error *err, const wf_error *jerr, const char *option,
                            const char *name, const char *text)
{
    char q[128];
    wf_error_clear(err);
    if (jerr->line > 1)
        return wf_error_set(err, jerr->code, NULL, "%s %s: %s at line %u, character %u of %s",
                            option, name, jerr->message, jerr->line, jerr->col,
                            wfb_quote(text, q, sizeof q));
    return wf_error_set(err, jerr->code, NULL, "%s %s: %s at character %u of %s", option, name,
                        jerr->message, jerr->col, wfb_quote(text, q, sizeof q));
}

wf_status wfb_value_from_text(wf_types *types, const wf_type *type, const char *option,
                              const char *name, const char *text, wf_value *out, wf_error *err)
{
    *out = wf_null();
    char q[128];
    wf_error e = WF_ERROR_INIT;
    bool json = type->kind == WF_K_LIST || type->kind == WF_K_RECORD;
    if (!json) {
        if (wf_value_parse(types, type, text, out, &e) == WF_OK)
            return WF_OK;
        if (e.code == WF_E_NOMEM)
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        if (e.line > 0 && type->kind == WF_K_OBJECT)
            return json_error(err, &e, option, name, text);
        return wf_error_set(err, e.code, NULL, "%s %s: %s is not of type %s (%s)", option, name,
                            wfb_quote(text, q, sizeof q), type->name, e.message);
    }
    wf_value v = wf_null();
    if (wf_json_parse(types, text, strlen(text), &v, &e) != WF_OK)
        return e.code == WF_E_NOMEM ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory")
                                    : json_error(err, &e, option, name, text);
    char path[256] = "";
    wf_status st = WF_OK;
    if (!json_matches(&v, type, path, sizeof path)) {
        /* find the offending part again for the message */
        const wf_value *bad = &v;
        for (const char *p = path; *p == '[' && bad->type->kind == WF_K_LIST;) {
            size_t i = (size_t)strtoul(p + 1, NULL, 10);
            bad = wf_value_list_at(bad, i);
            p = strchr(p, ']') + 1;
        }
        st = wf_error_set(err, WF_E_TYPE, NULL,
                          "%s %s: %s%s is %s, which a %s does not take (JSON values must match "
                          "the declared type; nothing is converted)",
                          option, name, *path ? "element " : "", *path ? path : "the value",
                          json_kind(bad), type->name);
    } else if (wf_value_convert(&v, type, out, &e) != WF_OK) {
        st = e.code == WF_E_NOMEM ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory")
                                  : wf_error_set(err, e.code, NULL, "%s %s: %s", option, name,
                                                 e.message);
    }
    wf_value_release(&v);
    return st;
}

/* Does the text look like JSON a user meant as JSON? */
static bool starts_like_json(const char *text)
{
    text += strspn(text, " \t\r\n");
    return *text == '{' || *text == '[' || *text == '"';
}

wf_status wfb_payload_from_text(wf_types *types, const char *option, const char *name,
                                const char *text, wf_value *out, wf_error *err)
{
    *out = wf_null();
    wf_error e = WF_ERROR_INIT;
    if (wf_json_parse(types, text, strlen(text), out, &e) == WF_OK)
        return WF_OK;
    if (e.code == WF_E_NOMEM)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (starts_like_json(text))
        return json_error(err, &e, option, name, text);
    if (wf_value_cstring(text, out) != WF_OK)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return WF_OK;
}

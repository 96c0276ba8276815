/* wf_jsonw.h — the one JSON writer: every --json output, report and sidecar is a jansson tree
 * written by wf_jsonw_dump, so it is valid JSON by construction (strings escaped by jansson,
 * invalid UTF-8 replaced by U+FFFD). jansson holds numbers only as json_int_t and double, so a
 * number whose text must stay exact (a Decimal, a Double in .NET's round-trip form) is a
 * "number token": a node that only wf_jsonw_dump can write (json_dumps refuses it). The same
 * kind of token carries JSON text made elsewhere (wf_jsonw_raw), checked by jansson first.
 *
 * Use:
 * 1. Build the tree with jansson (json_object, json_pack("{s:o, s:I}", ...)) and the
 *    constructors below for text of outside origin, numbers and wf_values. Every constructor
 *    returns a new reference or NULL when memory ran out; json_pack's "o" takes it and fails
 *    on NULL, so one check of the root is enough.
 * 2. wf_jsonw_dump(root, flags, &buf) or wf_jsonw_print(stream, root, flags); json_decref(root).
 * Thread rule: trees are not shared between threads; the functions keep no state. */
#ifndef WF_JSONW_H
#define WF_JSONW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "wf_mem.h"
#include "wf_value.h"

/* Output forms. COMPACT: no blanks ({"a":1,"b":[1,2]}); SPACED, the default: one line with
 * ", " and ": " ({"a": 1, "b": [1, 2]}), the form every --json line has; INDENT: two blanks
 * per level, one member per line (report files); WF_JSONW_INDENT_TO(n): indented down to
 * depth n (the root is 0), deeper containers spaced on one line. */
enum {
    WF_JSONW_SPACED = 0,
    WF_JSONW_COMPACT = 1,
    WF_JSONW_INDENT = 2,
};
#define WF_JSONW_DEPTH_SHIFT  4
#define WF_JSONW_INDENT_TO(n) (WF_JSONW_INDENT | ((unsigned)(n) << WF_JSONW_DEPTH_SHIFT))

/* Text as a JSON string; NULL gives null, invalid UTF-8 bytes become U+FFFD. */
json_t *wf_jsonw_str(const char *s);
json_t *wf_jsonw_strn(const char *s, size_t len);
/* A number token written exactly as `text`; NULL when text is not a JSON number (RFC 8259:
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?) or memory ran out. */
json_t *wf_jsonw_number(const char *text);
json_t *wf_jsonw_decimal(wf_decimal d); /* number token, exact, scale kept ("12.50") */
/* A Double as the runtimes print it (shortest round-trip); NaN and infinities as strings. */
json_t *wf_jsonw_double(double d);
/* A value per the output contract (wf_value_to_json, docs/formats.md "Values"): Decimal as a
 * string with its scale unless decimal_as_number, then as an exact number token. */
json_t *wf_jsonw_value(const wf_value *v, bool decimal_as_number);
/* {names[0]: values[0], ...} with wf_jsonw_value. */
json_t *wf_jsonw_members(const char *const *names, const wf_value *values, size_t count,
                         bool decimal_as_number);
/* JSON text made elsewhere (a decoded instance state), written as it is; NULL when jansson
 * does not read it as one JSON value or memory ran out. Trailing blanks are dropped. */
json_t *wf_jsonw_raw(const char *text, size_t len);
/* True for a node made by wf_jsonw_number/_decimal/_raw (and _double when finite). */
bool wf_jsonw_is_token(const json_t *j);

/* Append the text of `root` (any JSON value) to out; false when memory ran out (out->oom). */
bool wf_jsonw_dump(const json_t *root, unsigned flags, wf_buf *out);
/* Write root and a newline to stream (one object per line unless INDENT); false on a write
 * error or no memory. */
bool wf_jsonw_print(FILE *stream, const json_t *root, unsigned flags);
/* Set key to v in obj, taking v; false (and v released) when v or obj is NULL or memory ran
 * out. A key of invalid UTF-8 is set with U+FFFD in place of the bad bytes. A builder checks
 * once: ok = ok && wf_jsonw_set(obj, key, make_value()), or, when v exists already and must
 * be taken, ok = wf_jsonw_set(ok ? obj : NULL, key, v). */
bool wf_jsonw_set(json_t *obj, const char *key, json_t *v);
bool wf_jsonw_append(json_t *arr, json_t *v); /* the same for arrays */

#endif

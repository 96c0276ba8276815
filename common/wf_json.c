/* wf_json.c — JSON text to wf_values through jansson (strict RFC 8259, duplicate keys and
 * "\u0000" refused). Before jansson runs, one linear scan enforces the nesting limit (jansson's
 * own is 2048 and fixed at build time) and records where each number starts, so numbers are
 * typed from their original text: integers exact as Int32/Int64, Decimal targets exact from
 * the digits (wf_json_parse_as), other numbers Double. Errors carry the line and character
 * column inside the text, at the start of the offending token. */
#include "wf_value.h"

#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>  /* snprintf */
#include <stdlib.h> /* strtod */
#include <string.h>

#include "wf_value_int.h"

#define JSON_MAX_DEPTH 256

/* ---- allocation: jansson allocates through wf_malloc, and a refusal is remembered --------- */
static _Thread_local bool json_oom;

static void *json_alloc(size_t size)
{
    void *p = wf_malloc(size);
    if (!p)
        json_oom = true;
    return p;
}

static pthread_once_t alloc_once = PTHREAD_ONCE_INIT;

static void install_alloc(void)
{
    json_set_alloc_funcs(json_alloc, wf_free);
}

void wf__json_alloc_install(void)
{
    pthread_once(&alloc_once, install_alloc);
}

/* ---- the scan: nesting depth and number positions --------------------------------------- */
typedef struct jscan {
    size_t *nums; /* byte offset of each number token, in document order */
    size_t count, cap;
    size_t next;        /* the next number the conversion takes */
    size_t deep_at;     /* offset of the bracket past the limit; SIZE_MAX if none */
    bool oom;
} jscan;

static void add_number(jscan *sc, size_t at)
{
    if (sc->count == sc->cap) {
        size_t cap = sc->cap ? sc->cap * 2 : 16;
        size_t *nums = wf_realloc(sc->nums, cap * sizeof *nums);
        if (!nums) {
            sc->oom = true;
            return;
        }
        sc->nums = nums;
        sc->cap = cap;
    }
    sc->nums[sc->count++] = at;
}

static bool is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* Strings are skipped (escapes included), so brackets and digits inside them do not count.
 * On malformed text the scan is only approximate; jansson reports the error then. */
static void scan(const char *text, size_t len, size_t from, jscan *sc)
{
    unsigned depth = 0;
    sc->deep_at = SIZE_MAX;
    for (size_t i = from; i < len && !sc->oom; i++) {
        char c = text[i];
        if (c == '"') {
            for (i++; i < len && text[i] != '"'; i++)
                if (text[i] == '\\')
                    i++;
        } else if (c == '[' || c == '{') {
            if (++depth > JSON_MAX_DEPTH && sc->deep_at == SIZE_MAX)
                sc->deep_at = i;
        } else if (c == ']' || c == '}') {
            depth -= depth > 0;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            add_number(sc, i);
            while (i + 1 < len && is_number_char(text[i + 1]))
                i++;
        }
    }
}

/* ---- errors --------------------------------------------------------------------------------- */
typedef struct jctx {
    const char *text;
    size_t len;
    jscan sc;
    wf_error *err;
} jctx;

/* Line and character column (UTF-8 lead bytes) of byte offset `at`, both 1-based. */
static wf_loc loc_at(const jctx *jc, size_t at)
{
    wf_loc loc = {NULL, 1, 1};
    for (size_t i = 0; i < at && i < jc->len; i++) {
        if (jc->text[i] == '\n')
            loc.line++, loc.col = 1;
        else if (((unsigned char)jc->text[i] & 0xC0) != 0x80)
            loc.col++;
    }
    return loc;
}

static wf_status jerror(jctx *jc, size_t at, wf_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static wf_status jerror(jctx *jc, size_t at, wf_status code, const char *fmt, ...)
{
    wf_loc loc = loc_at(jc, at);
    va_list ap;
    va_start(ap, fmt);
    wf_error_setv(jc->err, code, &loc, fmt, ap);
    va_end(ap);
    return code;
}

static wf_status nomem(jctx *jc)
{
    return wf_error_set(jc->err, WF_E_NOMEM, NULL, "out of memory reading JSON");
}

/* The token jansson names in "... near 'TOKEN'", when it is the text just before `pos`:
 * its length, else 0 (the error is then placed at pos). */
static size_t near_token(const jctx *jc, const json_error_t *je, size_t pos)
{
    const char *near = strstr(je->text, " near '");
    if (!near)
        return 0;
    near += 7;
    size_t n = strlen(near);
    if (n == 0 || near[n - 1] != '\'')
        return 0;
    n--;
    return n <= pos && memcmp(jc->text + pos - n, near, n) == 0 ? n : 0;
}

/* Whether the token at [start, start + n) is a complete string literal. */
static bool whole_string(const char *tok, size_t n)
{
    if (n < 2 || tok[0] != '"' || tok[n - 1] != '"')
        return false;
    size_t backslashes = 0;
    for (size_t i = n - 1; i > 1 && tok[i - 1] == '\\'; i--)
        backslashes++;
    return backslashes % 2 == 0;
}

/* Where the error is: the start of the token jansson names, except inside a string that is
 * still open (a control character, a bad escape), where it is the point jansson stopped. */
static size_t error_offset(const jctx *jc, const json_error_t *je, enum json_error_code code)
{
    size_t pos = je->position > 0 ? (size_t)je->position : 0;
    if (pos > jc->len)
        pos = jc->len;
    const char *nul = memchr(jc->text, '\0', pos < jc->len ? pos + 1 : jc->len);
    if (nul)
        return (size_t)(nul - jc->text);
    size_t n = near_token(jc, je, pos);
    if (n == 0)
        return pos;
    const char *tok = jc->text + pos - n;
    if (tok[0] == '"' && !whole_string(tok, n) && code != json_error_premature_end_of_input)
        return pos;
    return pos - n;
}

/* jansson says "X expected near end of file" / "unexpected token near end of file" for input
 * that stops early; say that in plain words ("unexpected end of JSON input, ']' expected"). */
static wf_status truncated_error(jctx *jc, size_t at, const char *text)
{
    static const char eof[] = " near end of file";
    size_t n = strlen(text), e = sizeof eof - 1;
    if (n < e || strcmp(text + n - e, eof) != 0)
        return jerror(jc, at, WF_E_SYNTAX, "invalid JSON: %s", text);
    n -= e;
    if (strncmp(text, "unexpected token", n) == 0 && n == strlen("unexpected token"))
        return jerror(jc, at, WF_E_SYNTAX, "unexpected end of JSON input, expected a value");
    return jerror(jc, at, WF_E_SYNTAX, "unexpected end of JSON input, %.*s", (int)n, text);
}

static wf_status jansson_error(jctx *jc, const json_error_t *je)
{
    enum json_error_code code = json_error_code(je);
    size_t at = error_offset(jc, je, code);
    if (jc->sc.deep_at <= at)
        return jerror(jc, jc->sc.deep_at, WF_E_LIMIT, "JSON nested deeper than %d levels",
                      JSON_MAX_DEPTH);
    if (at < jc->len && jc->text[at] == '\0')
        return jerror(jc, at, WF_E_SYNTAX, "invalid JSON: unexpected byte 0x00");
    switch (code) {
    case json_error_out_of_memory:
        return nomem(jc);
    case json_error_numeric_overflow: {
        size_t end = at;
        while (end < jc->len && is_number_char(jc->text[end]))
            end++;
        int n = (int)(end - at > 40 ? 40 : end - at);
        return jerror(jc, at, WF_E_RANGE,
                      "number %.*s is out of range (integers must fit in Int64, other numbers "
                      "in Double)", n, jc->text + at);
    }
    case json_error_null_character:
    case json_error_null_byte_in_key:
        return jerror(jc, at, WF_E_UNSUPPORTED, "\\u0000 is not supported in JSON strings");
    case json_error_duplicate_key:
        return jerror(jc, at, WF_E_SYNTAX, "duplicate key in JSON object");
    default:
        return truncated_error(jc, at, je->text);
    }
}

/* ---- jansson tree to values --------------------------------------------------------------- */
static wf_status convert(jctx *jc, const json_t *j, const wf_type *target, unsigned depth,
                         wf_value *out);

/* The text of the next number token, NUL-terminated in buf; false when the scan and the tree
 * disagree (cannot happen for text jansson accepted). */
static bool next_number(jctx *jc, char *buf, size_t size, size_t *at)
{
    if (jc->sc.next >= jc->sc.count)
        return false;
    *at = jc->sc.nums[jc->sc.next++];
    size_t n = 0;
    while (*at + n < jc->len && is_number_char(jc->text[*at + n]) && n + 1 < size)
        n++;
    memcpy(buf, jc->text + *at, n);
    buf[n] = '\0';
    return true;
}

static wf_status convert_number(jctx *jc, const json_t *j, const wf_type *target, wf_value *out)
{
    char buf[400];
    size_t at = 0;
    if (!next_number(jc, buf, sizeof buf, &at))
        return jerror(jc, jc->len, WF_E_SYNTAX, "invalid JSON: a number could not be placed");
    if (target && target->kind == WF_K_DECIMAL) { /* exact from the digits */
        wf_decimal dec;
        wf_status st = wf_decimal_parse(buf, &dec);
        if (st == WF_OK) {
            *out = wf_dec(dec);
            return WF_OK;
        }
        if (st != WF_E_SYNTAX) { /* the value parser words the reason (range) */
            wf_error e = WF_ERROR_INIT;
            wf_value v;
            st = wf_value_parse(NULL, &wf_type_decimal, buf, &v, &e);
            return jerror(jc, at, st, "%s", e.message);
        }
        /* an exponent ("1e3"): read as Double, converted to Decimal by the caller */
    }
    if (json_is_integer(j)) {
        json_int_t i = json_integer_value(j);
        *out = i >= INT32_MIN && i <= INT32_MAX ? wf_int32((int32_t)i) : wf_int64((int64_t)i);
    } else {
        *out = wf_double(strtod(buf, NULL)); /* the same correctly rounded value jansson has */
    }
    return WF_OK;
}

static wf_status convert_array(jctx *jc, const json_t *j, const wf_type *target, unsigned depth,
                               wf_value *out)
{
    size_t n = json_array_size(j);
    const wf_type *elem = target && target->kind == WF_K_LIST ? target->elem : NULL;
    wf_value *items = wf_calloc(n ? n : 1, sizeof *items);
    if (!items)
        return nomem(jc);
    wf_status st = WF_OK;
    size_t got = 0;
    for (; got < n && st == WF_OK; got++)
        st = convert(jc, json_array_get(j, got), elem, depth + 1, &items[got]);
    if (st == WF_OK) {
        st = wf_value_list_take(&wf_type_list_object, items, n, out);
        wf_free(items);
        return st == WF_OK ? WF_OK : nomem(jc);
    }
    for (size_t i = 0; i < got; i++)
        wf_value_release(&items[i]);
    wf_free(items);
    return st;
}

static wf_status convert_object(jctx *jc, const json_t *j, unsigned depth, wf_value *out)
{
    size_t n = json_object_size(j);
    const char **keys = wf_calloc(n ? n : 1, sizeof *keys);
    wf_value *vals = wf_calloc(n ? n : 1, sizeof *vals);
    wf_status st = keys && vals ? WF_OK : nomem(jc);
    size_t got = 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)j, key, v) { /* insertion order, which is document order */
        if (st != WF_OK)
            break;
        keys[got] = key;
        st = convert(jc, v, NULL, depth + 1, &vals[got]);
        if (st == WF_OK)
            got++;
    }
    if (st == WF_OK) {
        st = wf_value_record_take(keys, vals, got, out);
        got = 0; /* taken, or released on failure */
        if (st != WF_OK)
            st = nomem(jc);
    }
    for (size_t i = 0; i < got; i++)
        wf_value_release(&vals[i]);
    wf_free(keys);
    wf_free(vals);
    return st;
}

static wf_status convert(jctx *jc, const json_t *j, const wf_type *target, unsigned depth,
                         wf_value *out)
{
    *out = wf_null();
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return convert_object(jc, j, depth, out);
    case JSON_ARRAY:
        return convert_array(jc, j, target, depth, out);
    case JSON_STRING:
        return wf_value_string(json_string_value(j), json_string_length(j), out) == WF_OK
                   ? WF_OK
                   : nomem(jc);
    case JSON_INTEGER:
    case JSON_REAL:
        return convert_number(jc, j, target, out);
    case JSON_TRUE:
    case JSON_FALSE:
        *out = wf_bool(json_is_true(j));
        return WF_OK;
    default:
        return WF_OK; /* null */
    }
}

/* ---- entry points ----------------------------------------------------------------------- */
wf_status wf__json_parse_typed(wf_types *types, const wf_type *target, const char *text,
                              size_t len, wf_value *out, wf_error *err)
{
    (void)types; /* arrays are List(Object), which is static */
    *out = wf_null();
    wf__json_alloc_install();
    jctx jc = {.text = text, .len = len, .sc = {.nums = NULL}, .err = err};
    size_t from = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    scan(text, len, from, &jc.sc);
    if (jc.sc.oom) {
        wf_free(jc.sc.nums);
        return nomem(&jc);
    }
    json_oom = false;
    json_error_t je;
    json_t *root = json_loadb(text + from, len - from,
                              JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    wf_status st = WF_OK;
    if (json_oom) {
        st = nomem(&jc);
    } else if (!root) {
        je.position += (int)from;
        st = jansson_error(&jc, &je);
    } else if (jc.sc.deep_at != SIZE_MAX) {
        st = jerror(&jc, jc.sc.deep_at, WF_E_LIMIT, "JSON nested deeper than %d levels",
                    JSON_MAX_DEPTH);
    } else {
        st = convert(&jc, root, target, 0, out);
    }
    json_decref(root);
    wf_free(jc.sc.nums);
    if (st != WF_OK)
        wf_value_release(out);
    return st;
}

wf_status wf_json_parse(wf_types *types, const char *text, size_t len, wf_value *out, wf_error *err)
{
    return wf__json_parse_typed(types, NULL, text, len, out, err);
}

wf_status wf_json_parse_as(wf_types *types, const wf_type *t, const char *text, size_t len,
                           wf_value *out, wf_error *err)
{
    wf_value v;
    wf_status st = wf__json_parse_typed(types, t, text, len, &v, err);
    if (st != WF_OK) {
        *out = wf_null();
        return st;
    }
    st = wf_value_convert(&v, t, out, err);
    wf_value_release(&v);
    return st;
}

/* wf_json.c — a strict RFC 8259 reader producing wf_values: numbers become Int32, Int64 or
 * Double, arrays List(Object), objects Record (duplicate keys refused). Errors carry the
 * line and character column inside the text; nesting is limited so hostile input cannot
 * exhaust the stack. */
#include "wf_value.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "wf_value_int.h"

#define JSON_MAX_DEPTH 256

typedef struct jparser {
    const char *start, *p, *end;
    unsigned depth;
    wf_error *err;
} jparser;

static wf_status parse_value(jparser *jp, wf_value *out);

/* Line and character column (UTF-8 lead bytes) of `at`, both 1-based. */
static wf_loc loc_at(const jparser *jp, const char *at)
{
    wf_loc loc = {NULL, 1, 1};
    for (const char *q = jp->start; q < at; q++) {
        if (*q == '\n')
            loc.line++, loc.col = 1;
        else if (((unsigned char)*q & 0xC0) != 0x80)
            loc.col++;
    }
    return loc;
}

static wf_status jerror(jparser *jp, const char *at, wf_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static wf_status jerror(jparser *jp, const char *at, wf_status code, const char *fmt, ...)
{
    wf_loc loc = loc_at(jp, at);
    va_list ap;
    va_start(ap, fmt);
    wf_error_setv(jp->err, code, &loc, fmt, ap);
    va_end(ap);
    return code;
}

static void skip_ws(jparser *jp)
{
    while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r'))
        jp->p++;
}

static wf_status unexpected(jparser *jp, const char *what)
{
    if (jp->p >= jp->end)
        return jerror(jp, jp->p, WF_E_SYNTAX, "unexpected end of JSON input, expected %s", what);
    unsigned char c = (unsigned char)*jp->p;
    if (c >= 0x21 && c < 0x7F)
        return jerror(jp, jp->p, WF_E_SYNTAX, "unexpected character '%c', expected %s", c, what);
    return jerror(jp, jp->p, WF_E_SYNTAX, "unexpected byte 0x%02x, expected %s", c, what);
}

static wf_status nomem(jparser *jp)
{
    return wf_error_set(jp->err, WF_E_NOMEM, NULL, "out of memory reading JSON");
}

/* ---- literals and numbers ------------------------------------------------------------- */

static wf_status parse_literal(jparser *jp, wf_value *out)
{
    static const struct {
        const char *word;
        int kind; /* 0 null, 1 true, 2 false */
    } words[] = {{"null", 0}, {"true", 1}, {"false", 2}};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i].word);
        if ((size_t)(jp->end - jp->p) >= n && memcmp(jp->p, words[i].word, n) == 0) {
            jp->p += n;
            *out = words[i].kind == 0 ? wf_null() : wf_bool(words[i].kind == 1);
            return WF_OK;
        }
    }
    return unexpected(jp, "a JSON value");
}

static const char *scan_digits(const char *p, const char *end)
{
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    return p;
}

/* Integral text that fits: Int32 or Int64; otherwise false (the caller reads a double). */
static bool integer_value(const char *s, const char *e, wf_value *out)
{
    bool neg = *s == '-';
    uint64_t mag = 0;
    for (const char *q = s + neg; q < e; q++) {
        if (mag > (UINT64_MAX - 9) / 10)
            return false;
        mag = mag * 10 + (uint64_t)(*q - '0');
    }
    if (mag > (uint64_t)INT64_MAX + neg)
        return false;
    int64_t v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    *out = v >= INT32_MIN && v <= INT32_MAX ? wf_int32((int32_t)v) : wf_int64(v);
    return true;
}

static wf_status parse_number(jparser *jp, wf_value *out)
{
    const char *s = jp->p, *q = s;
    if (q < jp->end && *q == '-')
        q++;
    if (q >= jp->end || *q < '0' || *q > '9')
        return jp->p = q, unexpected(jp, "a digit");
    if (*q == '0' && q + 1 < jp->end && q[1] >= '0' && q[1] <= '9')
        return jerror(jp, q, WF_E_SYNTAX, "leading zeros are not allowed in JSON numbers");
    q = scan_digits(q, jp->end);
    bool integral = true;
    if (q < jp->end && *q == '.') {
        integral = false;
        const char *f = scan_digits(q + 1, jp->end);
        if (f == q + 1)
            return jp->p = f, unexpected(jp, "a digit after '.'");
        q = f;
    }
    if (q < jp->end && (*q == 'e' || *q == 'E')) {
        integral = false;
        q++;
        if (q < jp->end && (*q == '+' || *q == '-'))
            q++;
        const char *x = scan_digits(q, jp->end);
        if (x == q)
            return jp->p = q, unexpected(jp, "a digit in the exponent");
        q = x;
    }
    jp->p = q;
    if (integral && integer_value(s, q, out))
        return WF_OK;
    char *copy = wf_strndup(s, (size_t)(q - s));
    if (!copy)
        return nomem(jp);
    double d = strtod(copy, NULL);
    wf_free(copy);
    if (isinf(d))
        return jerror(jp, s, WF_E_RANGE, "number %.*s is out of range",
                      (int)(q - s > 40 ? 40 : q - s), s);
    *out = wf_double(d);
    return WF_OK;
}

/* ---- strings -------------------------------------------------------------------------- */

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static void add_utf8(wf_buf *buf, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    wf_buf_add(buf, u, n);
}

/* "\uXXXX" (jp->p at the 'u'), joining a surrogate pair. */
static wf_status parse_unicode_escape(jparser *jp, wf_buf *buf)
{
    const char *at = jp->p - 1;
    if (jp->end - jp->p < 5 || hex4(jp->p + 1) < 0)
        return jerror(jp, at, WF_E_SYNTAX, "invalid \\u escape in JSON string");
    unsigned cp = (unsigned)hex4(jp->p + 1);
    jp->p += 5;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return jerror(jp, at, WF_E_SYNTAX, "unpaired surrogate \\u%04X in JSON string", cp);
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        int lo = jp->end - jp->p >= 6 && jp->p[0] == '\\' && jp->p[1] == 'u' ? hex4(jp->p + 2) : -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return jerror(jp, at, WF_E_SYNTAX, "unpaired surrogate \\u%04X in JSON string", cp);
        cp = 0x10000 + ((cp - 0xD800) << 10) + ((unsigned)lo - 0xDC00);
        jp->p += 6;
    }
    if (cp == 0)
        return jerror(jp, at, WF_E_UNSUPPORTED, "\\u0000 is not supported in JSON strings");
    add_utf8(buf, cp);
    return WF_OK;
}

static wf_status parse_escape(jparser *jp, wf_buf *buf)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    jp->p++; /* the backslash */
    if (jp->p >= jp->end)
        return unexpected(jp, "an escape character");
    if (*jp->p == 'u')
        return parse_unicode_escape(jp, buf);
    const char *hit = memchr(from, *jp->p, sizeof from - 1);
    if (!hit)
        return jerror(jp, jp->p - 1, WF_E_SYNTAX, "invalid escape '\\%c' in JSON string",
                      *jp->p >= 0x21 && *jp->p < 0x7F ? *jp->p : '?');
    wf_buf_addc(buf, to[hit - from]);
    jp->p++;
    return WF_OK;
}

/* Reads a string (jp->p at the opening quote) into buf. */
static wf_status parse_string_into(jparser *jp, wf_buf *buf)
{
    const char *open = jp->p++;
    while (jp->p < jp->end && *jp->p != '"') {
        unsigned char c = (unsigned char)*jp->p;
        wf_status st = WF_OK;
        if (c == '\\') {
            st = parse_escape(jp, buf);
        } else if (c < 0x20) {
            st = jerror(jp, jp->p, WF_E_SYNTAX, "control character 0x%02x in JSON string", c);
        } else if (c < 0x80) {
            wf_buf_addc(buf, (char)c), jp->p++;
        } else {
            size_t n = wf_utf8_seq_len(jp->p, (size_t)(jp->end - jp->p));
            if (n == 0)
                st = jerror(jp, jp->p, WF_E_SYNTAX, "invalid UTF-8 in JSON string");
            else
                wf_buf_add(buf, jp->p, n), jp->p += n;
        }
        if (st != WF_OK)
            return st;
    }
    if (jp->p >= jp->end)
        return jerror(jp, open, WF_E_SYNTAX, "unterminated JSON string");
    jp->p++;
    return buf->oom ? nomem(jp) : WF_OK;
}

static wf_status parse_string(jparser *jp, wf_value *out)
{
    wf_buf buf;
    wf_buf_init(&buf);
    wf_status st = parse_string_into(jp, &buf);
    if (st != WF_OK) {
        wf_buf_fini(&buf);
        return st;
    }
    size_t len;
    char *s = wf_buf_detach(&buf, &len);
    if (!s || wf_value_string_take(s, len, out) != WF_OK)
        return nomem(jp);
    return WF_OK;
}

/* ---- arrays and objects --------------------------------------------------------------- */

typedef struct jitems {
    wf_value *values;
    char **keys; /* objects only */
    size_t count, cap;
    wf_strmap *seen; /* keys of a large object, for duplicate checks in O(1) */
} jitems;

#define LINEAR_KEYS 16

static void items_free(jitems *it)
{
    for (size_t i = 0; i < it->count; i++) {
        wf_value_release(&it->values[i]);
        if (it->keys)
            wf_free(it->keys[i]);
    }
    wf_free(it->values);
    wf_free(it->keys);
    wf_strmap_destroy(it->seen);
}

/* Whether key is already in the object; false with *oom set when memory runs out. */
static bool key_seen(jitems *it, const char *key, bool *oom)
{
    if (it->count < LINEAR_KEYS) {
        for (size_t i = 0; i < it->count; i++)
            if (strcmp(it->keys[i], key) == 0)
                return true;
        return false;
    }
    if (!it->seen) {
        it->seen = wf_strmap_create(NULL);
        for (size_t i = 0; it->seen && i < it->count; i++)
            if (wf_strmap_put(it->seen, it->keys[i], it) != WF_OK)
                break;
        if (!it->seen || wf_strmap_count(it->seen) != it->count) {
            *oom = true;
            return false;
        }
    }
    if (wf_strmap_get(it->seen, key))
        return true;
    *oom = wf_strmap_put(it->seen, key, it) != WF_OK;
    return false;
}

static bool items_grow(jitems *it, bool with_keys)
{
    if (it->count < it->cap)
        return true;
    size_t cap = it->cap ? it->cap * 2 : 8;
    wf_value *values = wf_realloc(it->values, cap * sizeof *values);
    if (!values)
        return false;
    it->values = values;
    if (with_keys) {
        char **keys = wf_realloc(it->keys, cap * sizeof *keys);
        if (!keys)
            return false;
        it->keys = keys;
    }
    it->cap = cap;
    return true;
}

/* After an element: ',' continues (true), the closing bracket ends; anything else is an error. */
static wf_status after_element(jparser *jp, char close, bool *more)
{
    skip_ws(jp);
    if (jp->p < jp->end && *jp->p == ',') {
        jp->p++;
        *more = true;
        return WF_OK;
    }
    if (jp->p < jp->end && *jp->p == close) {
        jp->p++;
        *more = false;
        return WF_OK;
    }
    return unexpected(jp, close == ']' ? "',' or ']'" : "',' or '}'");
}

static wf_status parse_array(jparser *jp, wf_value *out)
{
    jitems it = {0};
    wf_status st = WF_OK;
    jp->p++;
    skip_ws(jp);
    bool more = !(jp->p < jp->end && *jp->p == ']');
    if (!more)
        jp->p++;
    while (more && st == WF_OK) {
        if (!items_grow(&it, false)) {
            st = nomem(jp);
            break;
        }
        st = parse_value(jp, &it.values[it.count]);
        if (st == WF_OK) {
            it.count++;
            st = after_element(jp, ']', &more);
        }
    }
    if (st != WF_OK) {
        items_free(&it);
        return st;
    }
    st = wf_value_list_take(&wf_type_list_object, it.values, it.count, out);
    wf_free(it.values);
    return st == WF_OK ? WF_OK : nomem(jp);
}

static wf_status parse_member(jparser *jp, jitems *it)
{
    skip_ws(jp);
    if (jp->p >= jp->end || *jp->p != '"')
        return unexpected(jp, "a string key");
    const char *key_at = jp->p;
    wf_buf key;
    wf_buf_init(&key);
    wf_status st = parse_string_into(jp, &key);
    char *k = st == WF_OK ? wf_buf_detach(&key, NULL) : NULL;
    wf_buf_fini(&key);
    if (st != WF_OK)
        return st;
    if (!k)
        return nomem(jp);
    bool oom = false;
    if (key_seen(it, k, &oom) || oom) {
        wf_free(k);
        if (oom)
            return nomem(jp);
        return jerror(jp, key_at, WF_E_SYNTAX, "duplicate key in JSON object");
    }
    skip_ws(jp);
    if (jp->p >= jp->end || *jp->p != ':') {
        wf_free(k);
        return unexpected(jp, "':'");
    }
    jp->p++;
    it->keys[it->count] = k;
    st = parse_value(jp, &it->values[it->count]);
    if (st != WF_OK) {
        wf_free(k);
        return st;
    }
    it->count++;
    return WF_OK;
}

static wf_status parse_object(jparser *jp, wf_value *out)
{
    jitems it = {0};
    wf_status st = WF_OK;
    jp->p++;
    skip_ws(jp);
    bool more = !(jp->p < jp->end && *jp->p == '}');
    if (!more)
        jp->p++;
    while (more && st == WF_OK) {
        if (!items_grow(&it, true)) {
            st = nomem(jp);
            break;
        }
        st = parse_member(jp, &it);
        if (st == WF_OK)
            st = after_element(jp, '}', &more);
    }
    if (st == WF_OK) {
        st = wf_value_record_take((const char *const *)it.keys, it.values, it.count, out);
        for (size_t i = 0; i < it.count; i++)
            wf_free(it.keys[i]);
        wf_free(it.keys);
        wf_free(it.values);
        wf_strmap_destroy(it.seen);
        return st == WF_OK ? WF_OK : nomem(jp);
    }
    items_free(&it);
    return st;
}

static wf_status parse_value(jparser *jp, wf_value *out)
{
    *out = wf_null();
    skip_ws(jp);
    if (jp->p >= jp->end)
        return unexpected(jp, "a JSON value");
    char c = *jp->p;
    if (c == '[' || c == '{') {
        if (jp->depth >= JSON_MAX_DEPTH)
            return jerror(jp, jp->p, WF_E_LIMIT, "JSON nested deeper than %d levels",
                          JSON_MAX_DEPTH);
        jp->depth++;
        wf_status st = c == '[' ? parse_array(jp, out) : parse_object(jp, out);
        jp->depth--;
        return st;
    }
    if (c == '"')
        return parse_string(jp, out);
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(jp, out);
    return parse_literal(jp, out);
}

wf_status wf_json_parse(wf_types *types, const char *text, size_t len, wf_value *out, wf_error *err)
{
    (void)types; /* arrays are List(Object), which is static */
    jparser jp = {text, text, text + len, 0, err};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        jp.p += 3;
    wf_status st = parse_value(&jp, out);
    if (st == WF_OK) {
        skip_ws(&jp);
        if (jp.p < jp.end)
            st = unexpected(&jp, "end of input after the JSON value");
    }
    if (st != WF_OK)
        wf_value_release(out);
    return st;
}

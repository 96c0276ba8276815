/* wf_jsonw.c — the JSON writer (wf_jsonw.h): jansson trees written by one walk that hands
 * every string, key and integer to jansson's own encoder. A number token is a jansson string
 * whose first byte is 0xFF: no checked jansson string can hold that byte (it is never valid
 * UTF-8), so a token cannot be forged from input text, and json_dumps refuses the tree rather
 * than writing the token as a string. */
#include "wf_jsonw.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "wf_value_int.h"

#define TOKEN_MARK '\xFF'

/* ---- constructors -------------------------------------------------------------------- */
json_t *wf_jsonw_strn(const char *s, size_t len)
{
    wf__json_alloc_install();
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len && wf_utf8_seq_len(p + i, len - i) > 0)
        i += wf_utf8_seq_len(p + i, len - i);
    if (i == len)
        return json_stringn(s, len); /* NUL bytes included: jansson writes them as \u0000 */
    wf_buf clean; /* the slow path: some byte is not UTF-8 */
    wf_buf_init(&clean);
    wf_buf_add(&clean, s, i);
    while (i < len) {
        size_t n = wf_utf8_seq_len(p + i, len - i);
        if (n == 0)
            wf_buf_adds(&clean, "\xEF\xBF\xBD"); /* U+FFFD */
        wf_buf_add(&clean, p + i, n);
        i += n ? n : 1;
    }
    json_t *j = clean.oom ? NULL : json_stringn(clean.data, clean.len);
    wf_buf_fini(&clean);
    return j;
}

json_t *wf_jsonw_str(const char *s)
{
    wf__json_alloc_install();
    return s ? wf_jsonw_strn(s, strlen(s)) : json_null();
}

static bool is_json_number(const char *s)
{
    s += *s == '-';
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        s += strspn(s, "0123456789");
    else
        return false;
    if (*s == '.') {
        size_t n = strspn(s + 1, "0123456789");
        if (n == 0)
            return false;
        s += 1 + n;
    }
    if (*s == 'e' || *s == 'E') {
        s += 1 + (s[1] == '+' || s[1] == '-');
        size_t n = strspn(s, "0123456789");
        if (n == 0)
            return false;
        s += n;
    }
    return *s == '\0';
}

/* The token node: the mark, then the text. */
static json_t *token(const char *text, size_t len)
{
    char *tok = wf_malloc(len + 1);
    if (!tok)
        return NULL;
    tok[0] = TOKEN_MARK;
    memcpy(tok + 1, text, len);
    json_t *j = json_stringn_nocheck(tok, len + 1);
    wf_free(tok);
    return j;
}

json_t *wf_jsonw_number(const char *text)
{
    wf__json_alloc_install();
    return is_json_number(text) ? token(text, strlen(text)) : NULL;
}

json_t *wf_jsonw_raw(const char *text, size_t len)
{
    wf__json_alloc_install();
    json_error_t je; /* checked by jansson's reader; numbers of any size pass as reals */
    json_t *check = json_loadb(text, len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL |
                                              JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &je);
    if (!check)
        return NULL;
    json_decref(check);
    while (len > 0 && strchr(" \t\r\n", text[len - 1]))
        len--; /* a final newline would break the line it is embedded in */
    return token(text, len);
}

json_t *wf_jsonw_decimal(wf_decimal d)
{
    char text[WF_DECIMAL_TEXT_MAX];
    wf_decimal_format(d, text, sizeof text);
    return wf_jsonw_number(text);
}

json_t *wf_jsonw_double(double d)
{
    char text[64];
    wf_double_format(d, text, sizeof text);
    return isfinite(d) ? wf_jsonw_number(text) : wf_jsonw_str(text);
}

bool wf_jsonw_is_token(const json_t *j)
{
    return json_is_string(j) && json_string_length(j) > 1 &&
           json_string_value(j)[0] == TOKEN_MARK;
}

bool wf_jsonw_set(json_t *obj, const char *key, json_t *v)
{
    if (!v || !obj) {
        json_decref(v);
        return false;
    }
    int rc = json_object_set(obj, key, v);
    if (rc != 0) { /* no memory, or a key of invalid UTF-8: set it cleaned */
        json_t *clean = wf_jsonw_str(key);
        rc = clean ? json_object_set(obj, json_string_value(clean), v) : -1;
        json_decref(clean);
    }
    json_decref(v);
    return rc == 0;
}

bool wf_jsonw_append(json_t *arr, json_t *v)
{
    if (!arr) {
        json_decref(v);
        return false;
    }
    return v && json_array_append_new(arr, v) == 0;
}

/* ---- wf_value -> tree ---------------------------------------------------------------- */
static json_t *value_list(const wf_value *v, bool dec_num)
{
    json_t *arr = json_array();
    bool ok = arr != NULL;
    for (size_t i = 0; ok && i < wf_value_list_count(v); i++)
        ok = wf_jsonw_append(arr, wf_jsonw_value(wf_value_list_at(v, i), dec_num));
    if (!ok)
        json_decref(arr);
    return ok ? arr : NULL;
}

static json_t *value_record(const wf_value *v, bool dec_num)
{
    json_t *obj = json_object();
    bool ok = obj != NULL;
    for (size_t i = 0; ok && i < wf_value_record_count(v); i++) {
        json_t *item = wf_jsonw_value(wf_value_record_at(v, i), dec_num);
        ok = wf_jsonw_set(obj, wf_value_record_key(v, i), item);
    }
    if (!ok)
        json_decref(obj);
    return ok ? obj : NULL;
}

static json_t *value_text(const wf_value *v)
{
    char text[64];
    switch (v->type->kind) {
    case WF_K_DECIMAL:
        wf_decimal_format(v->u.dec, text, sizeof text);
        break;
    case WF_K_DATETIME:
        wf_datetime_format(v->u.i64, text, sizeof text);
        break;
    default:
        wf_timespan_format(v->u.i64, text, sizeof text);
        break;
    }
    return json_string(text);
}

json_t *wf_jsonw_value(const wf_value *v, bool decimal_as_number)
{
    wf__json_alloc_install();
    switch (v->type->kind) {
    case WF_K_NULL:
    case WF_K_OBJECT:
        return json_null();
    case WF_K_BOOL:
        return json_boolean(v->u.b);
    case WF_K_INT32:
        return json_integer(v->u.i32);
    case WF_K_INT64:
    case WF_K_TOKEN:
        return json_integer(v->u.i64);
    case WF_K_DOUBLE:
        return wf_jsonw_double(v->u.d);
    case WF_K_STRING:
        return wf_jsonw_strn(wf_value_str(v), wf_value_str_len(v));
    case WF_K_LIST:
        return value_list(v, decimal_as_number);
    case WF_K_RECORD:
        return value_record(v, decimal_as_number);
    case WF_K_EXCEPTION:
        return json_pack("{s:o, s:o}", "type", wf_jsonw_str(v->type->name), "message",
                         wf_jsonw_str(wf_value_exc_message(v)));
    case WF_K_DECIMAL:
        if (decimal_as_number)
            return wf_jsonw_decimal(v->u.dec);
        return value_text(v);
    default:
        return value_text(v);
    }
}

json_t *wf_jsonw_members(const char *const *names, const wf_value *values, size_t count,
                         bool decimal_as_number)
{
    json_t *obj = json_object();
    bool ok = obj != NULL;
    for (size_t i = 0; ok && i < count; i++)
        ok = wf_jsonw_set(obj, names[i], wf_jsonw_value(&values[i], decimal_as_number));
    if (!ok)
        json_decref(obj);
    return ok ? obj : NULL;
}

/* ---- tree -> text -------------------------------------------------------------------- */
typedef struct dumper {
    wf_buf *out;
    unsigned flags;
    bool failed; /* jansson could not encode a scalar (no memory) */
} dumper;

/* A scalar through jansson's encoder, into a stack buffer when it fits. */
static void dump_scalar(dumper *d, const json_t *j)
{
    if (wf_jsonw_is_token(j)) {
        wf_buf_add(d->out, json_string_value(j) + 1, json_string_length(j) - 1);
        return;
    }
    char small[256];
    size_t n = json_dumpb(j, small, sizeof small, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
    if (n == 0) {
        d->failed = true;
    } else if (n <= sizeof small) {
        wf_buf_add(d->out, small, n);
    } else {
        char *big = json_dumps(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        d->failed |= big == NULL;
        if (big)
            wf_buf_adds(d->out, big);
        wf_free(big); /* jansson allocates through wf_malloc (wf__json_alloc_install) */
    }
}

static void dump_key(dumper *d, const char *key)
{
    json_t *k = json_string_nocheck(key); /* object keys were checked when they were set */
    if (!k) {
        d->failed = true;
        return;
    }
    dump_scalar(d, k);
    json_decref(k);
    wf_buf_adds(d->out, d->flags & WF_JSONW_COMPACT ? ":" : ": ");
}

/* Whether a container at `depth` (the root is 0) is written one member per line. */
static bool indented(const dumper *d, unsigned depth)
{
    unsigned limit = d->flags >> WF_JSONW_DEPTH_SHIFT;
    return (d->flags & WF_JSONW_INDENT) && (limit == 0 || depth < limit);
}

/* Before a member of a container: "," unless first, then a new line and indentation (or a
 * blank when spaced). */
static void separate(dumper *d, size_t index, unsigned depth, bool indent)
{
    if (index > 0)
        wf_buf_addc(d->out, ',');
    if (indent) {
        wf_buf_addc(d->out, '\n');
        for (unsigned i = 0; i < depth; i++)
            wf_buf_adds(d->out, "  ");
    } else if (index > 0 && !(d->flags & WF_JSONW_COMPACT)) {
        wf_buf_addc(d->out, ' ');
    }
}

static void dump_node(dumper *d, const json_t *j, unsigned depth);

static void close_container(dumper *d, size_t count, unsigned depth, char bracket)
{
    if (count > 0 && indented(d, depth))
        separate(d, 0, depth, true);
    wf_buf_addc(d->out, bracket);
}

static void dump_object(dumper *d, const json_t *j, unsigned depth)
{
    wf_buf_addc(d->out, '{');
    size_t index = 0;
    const char *key;
    json_t *value;
    json_object_foreach ((json_t *)j, key, value) {
        separate(d, index++, depth + 1, indented(d, depth));
        dump_key(d, key);
        dump_node(d, value, depth + 1);
    }
    close_container(d, index, depth, '}');
}

static void dump_array(dumper *d, const json_t *j, unsigned depth)
{
    wf_buf_addc(d->out, '[');
    size_t count = json_array_size(j);
    for (size_t i = 0; i < count; i++) {
        separate(d, i, depth + 1, indented(d, depth));
        dump_node(d, json_array_get(j, i), depth + 1);
    }
    close_container(d, count, depth, ']');
}

static void dump_node(dumper *d, const json_t *j, unsigned depth)
{
    if (json_is_object(j))
        dump_object(d, j, depth);
    else if (json_is_array(j))
        dump_array(d, j, depth);
    else
        dump_scalar(d, j);
}

bool wf_jsonw_dump(const json_t *root, unsigned flags, wf_buf *out)
{
    assert(root != NULL);
    wf__json_alloc_install();
    dumper d = {.out = out, .flags = flags};
    dump_node(&d, root, 0);
    if (d.failed)
        out->oom = true;
    return !out->oom;
}

bool wf_jsonw_print(FILE *stream, const json_t *root, unsigned flags)
{
    wf_buf b;
    wf_buf_init(&b);
    bool ok = wf_jsonw_dump(root, flags, &b) && wf_buf_addc(&b, '\n');
    ok = ok && fwrite(b.data, 1, b.len, stream) == b.len;
    wf_buf_fini(&b);
    return ok;
}

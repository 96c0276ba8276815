/* wf_codec.c — varints, zig-zag ints, length-prefixed strings and wf_values for saved states
 * (wf_codec.h). Readers never trust a length: every read is checked against the end first,
 * and a bad read makes the reader sticky-bad, so decoders check once per record. */
#include "wf_codec.h"

#include <assert.h>
#include <stdio.h>  /* snprintf */
#include <string.h>

#include "wf_jsonw.h"

/* The tag of a Decimal (magnitude and scale). The WF_K_DECIMAL tag itself is the form written
 * before Decimal kept its scale (int64 1/10,000 units): still read, as scale 4. */
#define TAG_DECIMAL 0x40u

/* ---- writing --------------------------------------------------------------------------- */

void wf_codec_put_uint(wf_buf *b, uint64_t v)
{
    unsigned char tmp[10];
    size_t n = 0;
    do {
        unsigned char byte = v & 0x7f;
        v >>= 7;
        tmp[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    wf_buf_add(b, tmp, n);
}

void wf_codec_put_int(wf_buf *b, int64_t v)
{
    wf_codec_put_uint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void wf_codec_put_bytes(wf_buf *b, const void *data, size_t len)
{
    wf_codec_put_uint(b, len);
    if (len)
        wf_buf_add(b, data, len);
}

void wf_codec_put_str(wf_buf *b, const char *s)
{
    wf_codec_put_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

static wf_status put_value(wf_buf *b, const wf_value *v, unsigned depth, wf_error *err)
{
    wf_kind k = v->type->kind;
    if (depth > WF_CODEC_DEPTH_MAX)
        return wf_error_set(err, WF_E_LIMIT, NULL,
                            "a value nested more than %d deep cannot be saved",
                            WF_CODEC_DEPTH_MAX);
    wf_buf_addc(b, (char)(k == WF_K_DECIMAL ? TAG_DECIMAL : k));
    switch (k) {
    case WF_K_NULL:
        return WF_OK;
    case WF_K_BOOL:
        wf_buf_addc(b, v->u.b ? 1 : 0);
        return WF_OK;
    case WF_K_INT32:
        wf_codec_put_int(b, v->u.i32);
        return WF_OK;
    case WF_K_DECIMAL:
        wf_codec_put_uint(b, v->u.dec.lo);
        wf_codec_put_uint(b, v->u.dec.hi);
        wf_buf_addc(b, (char)(v->u.dec.scale | (v->u.dec.neg ? 0x80 : 0)));
        return WF_OK;
    case WF_K_INT64:
    case WF_K_DATETIME:
    case WF_K_TIMESPAN:
    case WF_K_TOKEN:
        wf_codec_put_int(b, v->u.i64);
        return WF_OK;
    case WF_K_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &v->u.d, sizeof bits);
        wf_codec_put_uint(b, bits);
        return WF_OK;
    }
    case WF_K_STRING:
        wf_codec_put_bytes(b, wf_value_str(v), wf_value_str_len(v));
        return WF_OK;
    case WF_K_EXCEPTION:
        wf_codec_put_str(b, v->type->name);
        wf_codec_put_str(b, wf_value_exc_message(v));
        wf_codec_put_str(b, v->type->base ? v->type->base->name : "");
        return WF_OK;
    case WF_K_LIST:
        wf_codec_put_str(b, v->type->name);
        wf_codec_put_uint(b, wf_value_list_count(v));
        for (size_t i = 0; i < wf_value_list_count(v); i++) {
            wf_status rc = put_value(b, wf_value_list_at(v, i), depth + 1, err);
            if (rc != WF_OK)
                return rc;
        }
        return WF_OK;
    case WF_K_RECORD:
        wf_codec_put_uint(b, wf_value_record_count(v));
        for (size_t i = 0; i < wf_value_record_count(v); i++) {
            wf_codec_put_str(b, wf_value_record_key(v, i));
            wf_status rc = put_value(b, wf_value_record_at(v, i), depth + 1, err);
            if (rc != WF_OK)
                return rc;
        }
        return WF_OK;
    default:
        return wf_error_set(err, WF_E_TYPE, NULL, "a %s value cannot be saved", v->type->name);
    }
}

wf_status wf_codec_put_value(wf_buf *b, const wf_value *v, wf_error *err)
{
    return put_value(b, v, 0, err);
}

/* ---- reading --------------------------------------------------------------------------- */

void wf_reader_init(wf_reader *r, const void *data, size_t len, wf_types *types)
{
    r->p = data;
    r->end = r->p + (data ? len : 0);
    r->types = types;
    r->bad = false;
    r->why[0] = '\0';
}

bool wf_reader_ok(const wf_reader *r)
{
    return !r->bad;
}

size_t wf_reader_left(const wf_reader *r)
{
    assert(r->p <= r->end); /* every read was checked against the end first */
    return r->bad ? 0 : (size_t)(r->end - r->p);
}

bool wf_reader_fail(wf_reader *r, const char *why)
{
    if (!r->bad)
        snprintf(r->why, sizeof r->why, "%s", why);
    r->bad = true;
    r->p = r->end;
    return false;
}

uint64_t wf_codec_get_uint(wf_reader *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->bad || r->p >= r->end) {
            wf_reader_fail(r, "truncated data");
            return 0;
        }
        unsigned char byte = *r->p++;
        if (shift == 63 && (byte & 0x7e)) {
            wf_reader_fail(r, "a number is too large");
            return 0;
        }
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    wf_reader_fail(r, "a number is too long");
    return 0;
}

int64_t wf_codec_get_int(wf_reader *r)
{
    uint64_t u = wf_codec_get_uint(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

unsigned wf_codec_get_u8(wf_reader *r)
{
    const unsigned char *p = wf_codec_get_raw(r, 1);
    return p ? *p : 0;
}

const void *wf_codec_get_raw(wf_reader *r, size_t len)
{
    if (r->bad || (size_t)(r->end - r->p) < len) {
        wf_reader_fail(r, "truncated data");
        return NULL;
    }
    const void *p = r->p;
    r->p += len;
    return p;
}

const void *wf_codec_get_bytes(wf_reader *r, size_t *len)
{
    uint64_t n = wf_codec_get_uint(r);
    *len = 0;
    if (r->bad)
        return NULL;
    if (n > (uint64_t)(r->end - r->p)) {
        wf_reader_fail(r, "a length runs past the end of the data");
        return NULL;
    }
    *len = (size_t)n;
    return wf_codec_get_raw(r, (size_t)n);
}

char *wf_codec_get_str(wf_reader *r, bool *nomem)
{
    size_t len;
    const char *s = wf_codec_get_bytes(r, &len);
    if (!s || (len && memchr(s, '\0', len))) {
        if (s)
            wf_reader_fail(r, "a string holds a NUL byte");
        return NULL;
    }
    char *copy = wf_strndup(s, len);
    if (!copy && nomem)
        *nomem = true;
    return copy;
}

static wf_status corrupt(wf_reader *r, wf_error *err, const char *why)
{
    wf_reader_fail(r, why);
    return wf_error_set(err, WF_E_CORRUPT, NULL, "corrupt state: %s", r->why);
}

static wf_status nomem(wf_error *err)
{
    return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

static wf_status get_value(wf_reader *r, unsigned depth, wf_value *out, wf_error *err);

static wf_status get_list(wf_reader *r, unsigned depth, wf_value *out, wf_error *err)
{
    bool oom = false;
    char *name = wf_codec_get_str(r, &oom);
    const wf_type *t = name ? wf_types_find(r->types, name) : NULL; /* built-ins need no table */
    wf_free(name);
    if (oom)
        return nomem(err);
    if (!t || t->kind != WF_K_LIST)
        return corrupt(r, err, "unknown list type");
    uint64_t n = wf_codec_get_uint(r);
    if (r->bad)
        return corrupt(r, err, "truncated list");
    if (n > wf_reader_left(r)) /* every item takes at least one byte */
        return corrupt(r, err, "a list count runs past the end of the data");
    wf_value *items = wf_calloc(n ? (size_t)n : 1, sizeof *items);
    if (!items)
        return nomem(err);
    wf_status rc = WF_OK;
    size_t got = 0;
    for (; got < n && rc == WF_OK; got++)
        rc = get_value(r, depth + 1, &items[got], err);
    if (rc == WF_OK)
        rc = wf_value_list(t, items, (size_t)n, out);
    for (size_t i = 0; i < got; i++)
        wf_value_release(&items[i]);
    wf_free(items);
    return rc == WF_E_NOMEM ? nomem(err) : rc;
}

static wf_status get_record(wf_reader *r, unsigned depth, wf_value *out, wf_error *err)
{
    uint64_t n = wf_codec_get_uint(r);
    if (r->bad)
        return corrupt(r, err, "truncated record");
    if (n > wf_reader_left(r) / 2)
        return corrupt(r, err, "a record count runs past the end of the data");
    char **keys = wf_calloc(n ? (size_t)n : 1, sizeof *keys);
    wf_value *vals = wf_calloc(n ? (size_t)n : 1, sizeof *vals);
    wf_status rc = keys && vals ? WF_OK : nomem(err);
    size_t got = 0;
    for (; rc == WF_OK && got < n; got++) {
        bool oom = false;
        vals[got] = wf_null();
        keys[got] = wf_codec_get_str(r, &oom);
        if (oom)
            rc = nomem(err);
        else if (!keys[got])
            rc = corrupt(r, err, "bad record key");
        else
            rc = get_value(r, depth + 1, &vals[got], err);
    }
    if (rc == WF_OK && wf_value_record((const char *const *)keys, vals, (size_t)n, out) != WF_OK)
        rc = nomem(err);
    for (size_t i = 0; i < got; i++) {
        wf_free(keys[i]);
        wf_value_release(&vals[i]);
    }
    wf_free(keys);
    wf_free(vals);
    return rc;
}

/* The type by name; an exception type the table does not know yet is declared under its
 * written parent (so user exception types survive a restart). NULL with *oom on failure. */
static const wf_type *exception_type(wf_reader *r, const char *name, const char *base, bool *oom)
{
    const wf_type *t = wf_types_find(r->types, name); /* built-ins need no table */
    if (t || !r->types || !*name)
        return t && t->kind == WF_K_EXCEPTION ? t : NULL;
    const wf_type *parent = *base ? wf_types_find(r->types, base) : &wf_exc_exception;
    if (!parent || parent->kind != WF_K_EXCEPTION)
        return NULL;
    if (wf_types_exception(r->types, name, parent, &t, NULL) == WF_E_NOMEM)
        *oom = true;
    return t;
}

static wf_status get_exception(wf_reader *r, wf_value *out, wf_error *err)
{
    bool oom = false;
    char *name = wf_codec_get_str(r, &oom);
    char *msg = wf_codec_get_str(r, &oom);
    char *base = wf_codec_get_str(r, &oom);
    wf_status rc = WF_OK;
    if (oom) {
        rc = nomem(err);
    } else if (!name || !msg || !base) {
        rc = corrupt(r, err, "bad exception");
    } else {
        const wf_type *t = exception_type(r, name, base, &oom);
        if (oom)
            rc = nomem(err);
        else if (!t)
            rc = corrupt(r, err, "unknown exception type");
        else if (wf_value_exception(t, msg, out) != WF_OK)
            rc = nomem(err);
    }
    wf_free(name);
    wf_free(msg);
    wf_free(base);
    return rc;
}

/* A Decimal under TAG_DECIMAL: magnitude low 64 and high 32 bits, then scale | sign << 7. */
static bool get_decimal(wf_reader *r, wf_decimal *d)
{
    uint64_t lo = wf_codec_get_uint(r), hi = wf_codec_get_uint(r);
    unsigned flags = wf_codec_get_u8(r);
    if (r->bad)
        return false;
    if (hi > UINT32_MAX || (flags & 0x7f) > WF_DECIMAL_MAX_SCALE)
        return wf_reader_fail(r, "bad Decimal");
    d->lo = lo, d->hi = (uint32_t)hi, d->scale = (uint8_t)(flags & 0x7f);
    d->neg = (flags & 0x80) && !wf_decimal_is_zero(*d);
    return true;
}

static wf_status get_scalar(wf_reader *r, unsigned k, wf_value *out, wf_error *err)
{
    static const wf_type *const by_kind[] = {
        [WF_K_INT64] = &wf_type_int64,
        [WF_K_DATETIME] = &wf_type_datetime, [WF_K_TIMESPAN] = &wf_type_timespan,
        [WF_K_TOKEN] = &wf_type_token};
    if (k == WF_K_BOOL) {
        unsigned b = wf_codec_get_u8(r);
        if (b > 1)
            return corrupt(r, err, "bad Boolean");
        *out = wf_bool(b == 1);
    } else if (k == WF_K_INT32) {
        int64_t v = wf_codec_get_int(r);
        if (v < INT32_MIN || v > INT32_MAX)
            return corrupt(r, err, "Int32 out of range");
        *out = wf_int32((int32_t)v);
    } else if (k == WF_K_DOUBLE) {
        uint64_t bits = wf_codec_get_uint(r);
        double d;
        memcpy(&d, &bits, sizeof d);
        *out = wf_double(d);
    } else if (k == TAG_DECIMAL) {
        wf_decimal d;
        if (!get_decimal(r, &d))
            return corrupt(r, err, "truncated value");
        *out = wf_dec(d);
    } else if (k == WF_K_DECIMAL) { /* written before Decimal kept its scale: CURRENCY units */
        *out = wf_dec(wf_decimal_from_currency(wf_codec_get_int(r)));
    } else {
        *out = wf_int64(wf_codec_get_int(r));
        out->type = by_kind[k];
    }
    return r->bad ? corrupt(r, err, "truncated value") : WF_OK;
}

static wf_status get_value(wf_reader *r, unsigned depth, wf_value *out, wf_error *err)
{
    *out = wf_null();
    if (depth > WF_CODEC_DEPTH_MAX)
        return corrupt(r, err, "values nested too deeply");
    unsigned k = wf_codec_get_u8(r);
    if (r->bad)
        return corrupt(r, err, "truncated value");
    switch (k) {
    case WF_K_NULL:
        return WF_OK;
    case WF_K_BOOL:
    case WF_K_INT32:
    case WF_K_INT64:
    case WF_K_DOUBLE:
    case WF_K_DECIMAL:
    case WF_K_DATETIME:
    case WF_K_TIMESPAN:
    case WF_K_TOKEN:
    case TAG_DECIMAL:
        return get_scalar(r, k, out, err);
    case WF_K_STRING: {
        size_t len;
        const char *s = wf_codec_get_bytes(r, &len);
        if (!s)
            return corrupt(r, err, "truncated string");
        return wf_value_string(s, len, out) == WF_OK ? WF_OK : nomem(err);
    }
    case WF_K_LIST:
        return get_list(r, depth, out, err);
    case WF_K_RECORD:
        return get_record(r, depth, out, err);
    case WF_K_EXCEPTION:
        return get_exception(r, out, err);
    default:
        return corrupt(r, err, "unknown value kind");
    }
}

wf_status wf_codec_get_value(wf_reader *r, wf_value *out, wf_error *err)
{
    wf_status rc = get_value(r, 0, out, err);
    if (rc != WF_OK)
        wf_value_release(out);
    return rc;
}

/* ---- JSON rendering straight from the bytes ------------------------------------------
 * Each reader builds its jansson node only when `out` is set (otherwise it only checks the
 * bytes). False when the bytes are bad or a node could not be made (no memory; the reader
 * stays good then, which tells the two apart). */
#define JSON_OUT(out, make) ((out) ? (*(out) = (make)) != NULL : true)

static bool json_str(wf_reader *r, json_t **out)
{
    size_t len;
    const char *s = wf_codec_get_bytes(r, &len);
    return s && JSON_OUT(out, wf_jsonw_strn(s, len));
}

static bool json_value(wf_reader *r, json_t **out, unsigned depth);

static bool json_items(wf_reader *r, json_t **out, unsigned depth, bool keyed)
{
    uint64_t n = wf_codec_get_uint(r);
    if (r->bad || n > wf_reader_left(r))
        return wf_reader_fail(r, "a count runs past the end of the data");
    json_t *box = out ? (keyed ? json_object() : json_array()) : NULL;
    bool ok = !out || box;
    for (uint64_t i = 0; ok && i < n; i++) {
        json_t *key = NULL, *item = NULL;
        ok = (!keyed || json_str(r, out ? &key : NULL)) &&
             json_value(r, out ? &item : NULL, depth + 1);
        if (ok && out)
            ok = keyed ? wf_jsonw_set(box, json_string_value(key), item)
                       : wf_jsonw_append(box, item);
        else
            json_decref(item);
        json_decref(key);
    }
    if (ok && out)
        *out = box;
    else
        json_decref(box);
    return ok;
}

/* The text of a scalar: a JSON number token, or a string (quoted = true). */
static bool scalar_text(wf_reader *r, unsigned k, char *text, size_t size, bool *quoted)
{
    *quoted = k != WF_K_BOOL && k != WF_K_DOUBLE && k != WF_K_INT32 && k != WF_K_INT64 &&
              k != WF_K_TOKEN;
    if (k == WF_K_BOOL) {
        unsigned b = wf_codec_get_u8(r);
        if (b > 1)
            return wf_reader_fail(r, "bad Boolean");
        snprintf(text, size, "%s", b ? "true" : "false");
    } else if (k == WF_K_DOUBLE) {
        uint64_t bits = wf_codec_get_uint(r);
        double d;
        memcpy(&d, &bits, sizeof d);
        *quoted = d != d || d - d != 0; /* NaN and infinities are not JSON numbers */
        if (*quoted)
            snprintf(text, size, "%s", d != d ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
        else
            snprintf(text, size, "%.17g", d);
    } else if (k == TAG_DECIMAL) {
        wf_decimal d;
        if (!get_decimal(r, &d))
            return false;
        wf_decimal_format(d, text, size);
    } else {
        int64_t v = wf_codec_get_int(r);
        if (k == WF_K_DECIMAL)
            wf_decimal_format(wf_decimal_from_currency(v), text, size);
        else if (k == WF_K_DATETIME)
            wf_datetime_format(v, text, size);
        else if (k == WF_K_TIMESPAN)
            wf_timespan_format(v, text, size);
        else
            snprintf(text, size, "%lld", (long long)v);
    }
    return !r->bad;
}

static bool json_scalar(wf_reader *r, json_t **out, unsigned k)
{
    char text[64];
    bool quoted;
    if (!scalar_text(r, k, text, sizeof text, &quoted))
        return false;
    if (k == WF_K_BOOL)
        return JSON_OUT(out, json_boolean(text[0] == 't'));
    return JSON_OUT(out, quoted ? json_string(text) : wf_jsonw_number(text));
}

static bool json_exception(wf_reader *r, json_t **out)
{
    json_t *type = NULL, *message = NULL;
    size_t len;
    bool ok = json_str(r, out ? &type : NULL) && json_str(r, out ? &message : NULL) &&
              wf_codec_get_bytes(r, &len) != NULL; /* the parent type */
    if (ok && out)
        return JSON_OUT(out, json_pack("{s:o, s:o}", "type", type, "message", message));
    json_decref(type);
    json_decref(message);
    return ok;
}

static bool json_value(wf_reader *r, json_t **out, unsigned depth)
{
    if (depth > WF_CODEC_DEPTH_MAX)
        return wf_reader_fail(r, "values nested too deeply");
    unsigned k = wf_codec_get_u8(r);
    if (r->bad)
        return false;
    switch (k) {
    case WF_K_NULL:
        return JSON_OUT(out, json_null());
    case WF_K_BOOL:
    case WF_K_INT32:
    case WF_K_INT64:
    case WF_K_DOUBLE:
    case WF_K_DECIMAL:
    case WF_K_DATETIME:
    case WF_K_TIMESPAN:
    case WF_K_TOKEN:
    case TAG_DECIMAL:
        return json_scalar(r, out, k);
    case WF_K_STRING:
        return json_str(r, out);
    case WF_K_LIST: {
        size_t len;
        if (!wf_codec_get_bytes(r, &len)) /* the type name */
            return false;
        return json_items(r, out, depth, false);
    }
    case WF_K_RECORD:
        return json_items(r, out, depth, true);
    case WF_K_EXCEPTION:
        return json_exception(r, out);
    default:
        return wf_reader_fail(r, "unknown value kind");
    }
}

bool wf_codec_value_json(wf_reader *r, wf_buf *out)
{
    json_t *j = NULL;
    bool ok = json_value(r, out ? &j : NULL, 0);
    if (ok && out)
        ok = wf_jsonw_dump(j, WF_JSONW_COMPACT, out);
    else if (out && wf_reader_ok(r))
        out->oom = true;
    json_decref(j);
    return ok;
}

json_t *wf_codec_value_tree(wf_reader *r)
{
    json_t *j = NULL;
    if (json_value(r, &j, 0))
        return j;
    json_decref(j);
    return NULL;
}

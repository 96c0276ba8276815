/* wf_codec.h — the binary primitives of saved states: LEB128 varints, zig-zag signed ints,
 * length-prefixed bytes and strings, and wf_values of every kind (tag = wf_kind byte, Decimal
 * its own tag with magnitude, scale and sign; lists
 * carry their type name, exceptions their type name, message and parent type name, so a user
 * exception type unknown to the reading process is declared again). Writers append to a
 * wf_buf (its sticky oom flag reports failure); readers are bounds-checked and sticky: after
 * the first bad read every read returns zero / NULL and wf_reader_ok is false. */
#ifndef WF_CODEC_H
#define WF_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wf_error.h"
#include "wf_mem.h"
#include "wf_value.h"

#define WF_CODEC_DEPTH_MAX 64 /* nesting of lists / records in one value */

void wf_codec_put_uint(wf_buf *b, uint64_t v);                    /* LEB128 */
void wf_codec_put_int(wf_buf *b, int64_t v);                      /* zig-zag + LEB128 */
void wf_codec_put_bytes(wf_buf *b, const void *data, size_t len); /* length + bytes */
void wf_codec_put_str(wf_buf *b, const char *s);                  /* length + bytes, no NUL */
/* WF_E_LIMIT for values nested deeper than WF_CODEC_DEPTH_MAX, WF_E_TYPE for a kind that has
 * no encoding (Object). Out of memory shows in b->oom. */
wf_status wf_codec_put_value(wf_buf *b, const wf_value *v, wf_error *err);

typedef struct wf_reader {
    const unsigned char *p, *end;
    wf_types *types; /* for list and exception types (may be NULL when only skipping) */
    bool bad;        /* sticky */
    char why[128];   /* what was wrong first */
} wf_reader;

void wf_reader_init(wf_reader *r, const void *data, size_t len, wf_types *types);
bool wf_reader_ok(const wf_reader *r);
size_t wf_reader_left(const wf_reader *r);
/* Mark the input bad (first reason wins); returns false for convenience. */
bool wf_reader_fail(wf_reader *r, const char *why);

uint64_t wf_codec_get_uint(wf_reader *r);
int64_t wf_codec_get_int(wf_reader *r);
unsigned wf_codec_get_u8(wf_reader *r);
const void *wf_codec_get_raw(wf_reader *r, size_t len);    /* exactly len bytes, NULL */
const void *wf_codec_get_bytes(wf_reader *r, size_t *len); /* length-prefixed, NULL */
/* A length-prefixed string as a new wf_malloc'd NUL-terminated copy; NULL when bad (also
 * when it holds a NUL byte) or out of memory (*nomem set when given). */
char *wf_codec_get_str(wf_reader *r, bool *nomem);
/* A value; WF_E_CORRUPT (message from the reader) or WF_E_NOMEM; *out null on failure. */
wf_status wf_codec_get_value(wf_reader *r, wf_value *out, wf_error *err);
/* Skip one encoded value, rendering it as compact JSON into `out` when out is non-NULL (no
 * types table needed: type names are shown as written; written by wf_jsonw). False when the
 * input is bad, or when memory ran out (then out->oom is set and the reader stays good). */
bool wf_codec_value_json(wf_reader *r, wf_buf *out);
/* The same value as a jansson tree (a new reference, Decimals as exact number tokens, see
 * wf_jsonw.h); NULL when the input is bad or memory ran out (the reader stays good then). */
struct json_t *wf_codec_value_tree(wf_reader *r);

#endif

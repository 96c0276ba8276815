/* fuzz_xml.c — libFuzzer target for the hardened XML loader: any input must either load or
 * fail with a status, never crash; when it loads, every reported line:col must point at the
 * element's '<', the attribute's name, the character after the value's quote and a non-blank
 * text character of the input (the column cursor's invariants); UTF-16 input is checked
 * against its UTF-8 transcoding, the text the loader parses. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct input {
    const char *data;
    size_t size;
} input;

/* The byte offset of 1-based line:col (columns count UTF-8 characters), or SIZE_MAX. */
static size_t offset_of(const input *in, unsigned line, unsigned col)
{
    size_t off = 0;
    if (in->size >= 3 && memcmp(in->data, "\xEF\xBB\xBF", 3) == 0)
        off = 3;
    for (unsigned l = 1; l < line; l++) {
        while (off < in->size && in->data[off] != '\n' && in->data[off] != '\r')
            off++;
        if (off >= in->size)
            return SIZE_MAX;
        off += in->data[off] == '\r' && off + 1 < in->size && in->data[off + 1] == '\n' ? 2 : 1;
    }
    for (unsigned c = 1; c < col; c++) {
        if (off >= in->size)
            return SIZE_MAX;
        off++;
        while (off < in->size && ((unsigned char)in->data[off] & 0xC0) == 0x80)
            off++;
    }
    return off < in->size ? off : SIZE_MAX;
}

static void check_attr(const input *in, const wf_xml_node *node, const wf_xml_attr *a)
{
    if (a->line == node->line && a->col == node->col)
        return; /* more attributes than the scanner records: the node's position stands in */
    size_t off = offset_of(in, a->line, a->col);
    size_t plen = a->prefix ? strlen(a->prefix) : 0, nlen = strlen(a->name);
    if (off == SIZE_MAX || off + plen + 1 + nlen > in->size)
        abort();
    if (a->prefix && (memcmp(in->data + off, a->prefix, plen) != 0 || in->data[off + plen] != ':'))
        abort();
    if (memcmp(in->data + off + (a->prefix ? plen + 1 : 0), a->name, nlen) != 0)
        abort();
    size_t voff = offset_of(in, a->value_line, a->value_col);
    if (voff == SIZE_MAX && a->value[0] == '\0')
        return; /* an empty value at the very end of a line */
    if (voff == SIZE_MAX || voff == 0 || (in->data[voff - 1] != '"' && in->data[voff - 1] != '\''))
        abort();
}

static void check(const input *in, const wf_xml_node *node)
{
    for (; node; node = node->next) {
        size_t off = offset_of(in, node->line, node->col);
        if (off == SIZE_MAX || in->data[off] != '<')
            abort();
        for (size_t i = 0; i < node->attr_count; i++)
            check_attr(in, node, &node->attrs[i]);
        if (node->text_line) {
            size_t t = offset_of(in, node->text_line, node->text_col);
            if (t == SIZE_MAX || strchr(" \t\r\n", in->data[t]))
                abort();
        }
        (void)wf_xml_lookup_ns(node, NULL);
        check(in, node->first_child);
    }
}

/* Append code point cp as UTF-8. */
static size_t put_cp(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Input with a UTF-16 byte-order mark is loaded as its UTF-8 transcoding (a lone surrogate
 * is U+FFFD), so positions are checked against that text; NULL for other input. */
static char *utf16_as_utf8(const uint8_t *data, size_t size, size_t *len)
{
    bool le = size >= 2 && data[0] == 0xFF && data[1] == 0xFE;
    bool be = size >= 2 && data[0] == 0xFE && data[1] == 0xFF;
    if (!le && !be)
        return NULL;
    char *out = malloc(size * 2 + 4), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 2; i + 1 < size; i += 2) {
        uint32_t u = be ? (uint32_t)(data[i] << 8 | data[i + 1])
                        : (uint32_t)(data[i + 1] << 8 | data[i]);
        if (u >= 0xD800 && u < 0xDC00 && i + 3 < size) {
            uint32_t lo = be ? (uint32_t)(data[i + 2] << 8 | data[i + 3])
                             : (uint32_t)(data[i + 3] << 8 | data[i + 2]);
            if (lo >= 0xDC00 && lo < 0xE000) {
                o += put_cp(o, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
                i += 2;
                continue;
            }
        }
        o += put_cp(o, u >= 0xD800 && u < 0xE000 ? 0xFFFD : u);
    }
    *len = (size_t)(o - out);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wf_xml_limits lim = {0, 64, 100000};
    wf_xml_doc *doc = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status st = wf_xml_load_mem("fuzz.xml", (const char *)data, size, &lim, &doc, &err);
    if (st == WF_OK) {
        size_t len = 0;
        char *text = utf16_as_utf8(data, size, &len);
        input in = {text ? text : (const char *)data, text ? len : size};
        check(&in, wf_xml_root(doc));
        free(text);
    }
    wf_xml_doc_destroy(doc);
    return 0;
}

/* wf_xml.c — hardened XML loading: libxml2 SAX2 with network off, no DTD loading and any
 * DOCTYPE refused (so no entity tricks), size/depth/node limits, into a small DOM in an arena.
 * Columns: libxml2 keeps none, so a cursor walks our own copy of the (UTF-8) input in step with
 * the SAX events and finds each '<', attribute and first text character (wf_xml.h). */
#include "wf_xml.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h> /* uintptr_t */
#include <stdio.h>
#include <string.h>
#include <strings.h> /* strcasecmp */
#include <sys/stat.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>

#include "wf_file.h"
#include "wf_mem.h"

#define XML_NS_URI        "http://www.w3.org/XML/1998/namespace"
#define DEFAULT_MAX_BYTES WF_FILE_MAX_BYTES
#define DEFAULT_MAX_DEPTH 256u
#define DEFAULT_MAX_NODES ((size_t)1000000)

struct wf_xml_doc {
    wf_arena *arena; /* every node, attribute and string */
    const char *path;
    wf_xml_node *root;
};

/* One open element while parsing. */
typedef struct frame {
    wf_xml_node *node;
    wf_xml_node *last_child;
    wf_buf text;
    bool self_closing; /* "<a/>": its end tag needs no cursor move */
} frame;

/* One attribute as written in a start tag, from our own scan of the source. */
typedef struct raw_attr {
    size_t name_off, name_len, value_off;
} raw_attr;

typedef struct loader {
    wf_xml_doc *doc;
    const char *data; /* the whole input, UTF-8 */
    size_t len;
    size_t cursor;       /* source offset just past the last markup (or text) accounted for */
    size_t *line_starts; /* offsets where each line begins */
    size_t line_count;
    bool has_bom;    /* the input starts with a UTF-8 byte order mark */
    size_t memo_off; /* the last position pos_of computed */
    unsigned memo_line, memo_col;
    wf_xml_limits lim;
    xmlParserCtxtPtr ctxt;
    frame *frames;
    unsigned depth, frames_cap;
    size_t nodes;
    wf_status st; /* our own first failure (limits, DOCTYPE, out of memory) */
    wf_error *err;
    /* Names and namespace URIs come from libxml2's dictionary, one pointer per distinct
     * string: the copy made for one is reused for the next element that has it (so a
     * document's equal names mostly share one copy). Direct-mapped by pointer. */
    const xmlChar *dup_key[256];
    const char *dup_copy[256];
    bool have_xerr; /* libxml2's first error: code, line, column and message */
    int xcode, xline, xcol;
    char xmsg[256];
} loader;

/* ---- source positions ----------------------------------------------------------------- */

/* Where each line after the first begins (a line ends at "\n", "\r\n" or a lone "\r"),
 * written to starts when not NULL; returns how many. Input without a '\r' (most) is
 * scanned with memchr. */
static size_t line_breaks(const char *data, size_t len, size_t *starts)
{
    size_t n = 0;
    if (len == 0)
        return 0;
    if (!memchr(data, '\r', len)) {
        const char *p = data, *end = data + len;
        for (; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; n++) {
            p++;
            if (starts)
                starts[n] = (size_t)(p - data);
        }
        return n;
    }
    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        if (c == '\n' || (c == '\r' && (i + 1 >= len || data[i + 1] != '\n'))) {
            if (starts)
                starts[n] = i + 1;
            n++;
        }
    }
    return n;
}

static bool build_lines(loader *ld)
{
    size_t n = 1 + line_breaks(ld->data, ld->len, NULL);
    ld->line_starts = wf_malloc(n * sizeof *ld->line_starts);
    if (!ld->line_starts)
        return false;
    ld->line_starts[0] = 0;
    ld->line_count = 1 + line_breaks(ld->data, ld->len, ld->line_starts + 1);
    ld->has_bom = ld->len >= 3 && memcmp(ld->data, "\xEF\xBB\xBF", 3) == 0;
    return true;
}

/* Characters (UTF-8 lead bytes) in data[from, to): eight bytes at a time, a continuation
 * byte being one whose top bits are 10 (one flag bit per byte, summed by a multiply). */
static size_t chars_between(const char *data, size_t from, size_t to)
{
    const uint64_t high = 0x8080808080808080ull, ones = 0x0101010101010101ull;
    size_t n = to - from, cont = 0, i = from;
    for (; i + 8 <= to; i += 8) {
        uint64_t w;
        memcpy(&w, data + i, sizeof w);
        cont += (size_t)((((w & ~(w << 1) & high) >> 7) * ones) >> 56);
    }
    for (; i < to; i++)
        cont += ((unsigned char)data[i] & 0xC0) == 0x80;
    return n - cont;
}

/* 1-based line and character column (UTF-8 lead bytes; a tab counts 1). Events arrive in
 * source order, so counting resumes from the previous answer when it is on the same line:
 * a document on one long line stays linear. */
static void pos_of(loader *ld, size_t off, unsigned *line, unsigned *col)
{
    size_t lo = 0, hi = ld->line_count;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (ld->line_starts[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    unsigned c = 1;
    size_t start = ld->line_starts[lo];
    if (lo == 0 && ld->has_bom)
        start = off >= 3 ? 3 : off; /* the byte order mark is not a character of line 1 */
    if (ld->memo_line == lo + 1 && ld->memo_off >= start && ld->memo_off <= off) {
        start = ld->memo_off;
        c = ld->memo_col;
    }
    size_t end = off < ld->len ? off : ld->len;
    if (start < end)
        c += (unsigned)chars_between(ld->data, start, end);
    *line = (unsigned)(lo + 1);
    *col = c;
    ld->memo_off = off;
    ld->memo_line = *line;
    ld->memo_col = c;
}

static bool starts(const loader *ld, size_t off, const char *s)
{
    size_t n = strlen(s);
    return off + n <= ld->len && memcmp(ld->data + off, s, n) == 0;
}

/* Offset just past the next `end` at or after off (len if absent). */
static size_t skip_past(const loader *ld, size_t off, const char *end)
{
    size_t n = strlen(end);
    for (; off + n <= ld->len; off++)
        if (memcmp(ld->data + off, end, n) == 0)
            return off + n;
    return ld->len;
}

/* If a comment, PI or CDATA section starts at off, the offset past it; else off. */
static size_t skip_special(const loader *ld, size_t off)
{
    if (off + 1 < ld->len && ld->data[off + 1] != '!' && ld->data[off + 1] != '?')
        return off; /* a tag: what follows its '<' can start none of them */
    if (starts(ld, off, "<!--"))
        return skip_past(ld, off + 4, "-->");
    if (starts(ld, off, "<?"))
        return skip_past(ld, off + 2, "?>");
    if (starts(ld, off, "<![CDATA["))
        return skip_past(ld, off + 9, "]]>");
    return off;
}

/* The next '<' of a start or end tag at or after off. Text never holds a raw '<'. */
static size_t next_tag(const loader *ld, size_t off)
{
    while (off < ld->len) {
        const char *lt = memchr(ld->data + off, '<', ld->len - off);
        if (!lt)
            return ld->len;
        off = (size_t)(lt - ld->data);
        size_t past = skip_special(ld, off);
        if (past == off)
            return off;
        off = past;
    }
    return ld->len;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* First non-blank character of character data at or after off, skipping blanks, comments
 * and PIs; inside a CDATA section nothing is markup. *resume is where the cursor may go next:
 * past the section when the character is inside one (its content may hold a '<'). */
static size_t first_text_char(const loader *ld, size_t off, size_t *resume)
{
    while (off < ld->len) {
        if (is_space(ld->data[off])) {
            off++;
        } else if (starts(ld, off, "<![CDATA[")) {
            size_t past = skip_past(ld, off + 9, "]]>");
            size_t content_end = past >= off + 12 && starts(ld, past - 3, "]]>") ? past - 3 : past;
            size_t p = off + 9;
            while (p < content_end && is_space(ld->data[p]))
                p++;
            if (p < content_end) {
                *resume = past;
                return p;
            }
            off = past;
        } else if (ld->data[off] == '<' && skip_special(ld, off) != off) {
            off = skip_special(ld, off);
        } else {
            *resume = off + 1;
            return off;
        }
    }
    *resume = ld->len;
    return ld->len;
}

/* ---- errors --------------------------------------------------------------------------- */

static void fail(loader *ld, wf_status code, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void fail(loader *ld, wf_status code, size_t off, const char *fmt, ...)
{
    if (ld->st != WF_OK)
        return;
    ld->st = code;
    wf_loc loc = {ld->doc->path, 0, 0};
    if (off != SIZE_MAX && ld->line_starts)
        pos_of(ld, off, &loc.line, &loc.col);
    va_list ap;
    va_start(ap, fmt);
    wf_error_setv(ld->err, code, &loc, fmt, ap);
    va_end(ap);
    if (ld->ctxt)
        xmlStopParser(ld->ctxt);
}

static void on_error(void *ud, xmlErrorPtr e)
{
    loader *ld = ud;
    if (ld->have_xerr || e->level < XML_ERR_ERROR)
        return;
    /* WF3 files declare namespaces like "clr-namespace:NS;Assembly=System, Version=2.0.0.0",
     * which are not URIs; libxml2 reports that as an error, .NET never did. */
    if (e->code == XML_WAR_NS_URI || e->code == XML_WAR_NS_URI_RELATIVE ||
        e->code == XML_WAR_NS_COLUMN)
        return;
    ld->have_xerr = true;
    ld->xcode = e->code;
    ld->xline = e->line;
    ld->xcol = e->int2; /* libxml2 keeps the column in int2 */
    snprintf(ld->xmsg, sizeof ld->xmsg, "%s", e->message ? e->message : "malformed XML");
    ld->xmsg[strcspn(ld->xmsg, "\n")] = '\0'; /* the first line says it */
    size_t n = strlen(ld->xmsg);
    while (n && is_space(ld->xmsg[n - 1]))
        ld->xmsg[--n] = '\0';
}

static void silent(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

static void on_subset(void *ud, const xmlChar *name, const xmlChar *ext_id, const xmlChar *sys_id)
{
    (void)name, (void)ext_id, (void)sys_id;
    loader *ld = ud;
    size_t off = next_tag(ld, ld->cursor);
    while (off < ld->len && !starts(ld, off, "<!DOCTYPE") && !starts(ld, off, "<!doctype"))
        off = next_tag(ld, off + 1);
    fail(ld, WF_E_XML, off < ld->len ? off : SIZE_MAX, "DOCTYPE is not allowed");
}

/* ---- start tags ----------------------------------------------------------------------- */

/* The bytes that end a name in a start tag: white space, '=', '/' and '>'. A table, since
 * the scan asks this of every byte of every name. */
static const bool name_end[256] = {[' '] = true, ['\t'] = true, ['\n'] = true, ['\r'] = true,
                                   ['='] = true, ['/'] = true,  ['>'] = true};

static bool is_name_end(char c)
{
    return name_end[(unsigned char)c];
}

/* Scans the start tag whose '<' is at lt: records up to cap attributes (xmlns ones too) and
 * returns the offset just past its '>'. */
static size_t scan_start_tag(const loader *ld, size_t lt, raw_attr *attrs, size_t cap,
                             size_t *count, bool *self_closing)
{
    size_t p = lt + 1, n = 0;
    while (p < ld->len && !is_name_end(ld->data[p]))
        p++;
    for (;;) {
        while (p < ld->len && is_space(ld->data[p]))
            p++;
        if (p >= ld->len || ld->data[p] == '>' || ld->data[p] == '/')
            break;
        raw_attr a = {p, 0, 0};
        while (p < ld->len && !is_name_end(ld->data[p]))
            p++;
        a.name_len = p - a.name_off;
        while (p < ld->len && (is_space(ld->data[p]) || ld->data[p] == '='))
            p++;
        if (p >= ld->len)
            break;
        char quote = ld->data[p++];
        a.value_off = p;
        while (p < ld->len && ld->data[p] != quote)
            p++;
        p++;
        if (n < cap)
            attrs[n++] = a;
    }
    *self_closing = p < ld->len && ld->data[p] == '/';
    *count = n;
    const char *gt = p < ld->len ? memchr(ld->data + p, '>', ld->len - p) : NULL;
    return gt ? (size_t)(gt - ld->data) + 1 : ld->len;
}

static const raw_attr *find_raw(const loader *ld, const raw_attr *raw, size_t n,
                                const xmlChar *prefix, const xmlChar *local)
{
    size_t plen = prefix ? strlen((const char *)prefix) : 0;
    size_t llen = strlen((const char *)local);
    for (size_t i = 0; i < n; i++) {
        const char *name = ld->data + raw[i].name_off;
        size_t want = prefix ? plen + 1 + llen : llen;
        if (raw[i].name_len != want)
            continue;
        if (prefix && (memcmp(name, prefix, plen) != 0 || name[plen] != ':'))
            continue;
        if (memcmp(name + (prefix ? plen + 1 : 0), local, llen) == 0)
            return &raw[i];
    }
    return NULL;
}

static const char *dup(loader *ld, const xmlChar *s)
{
    if (!s)
        return NULL;
    size_t slot = (size_t)(((uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15u) >> 56); /* 0..255 */
    if (ld->dup_key[slot] == s)
        return ld->dup_copy[slot];
    char *copy = wf_arena_strdup(ld->doc->arena, (const char *)s);
    if (!copy)
        fail(ld, WF_E_NOMEM, SIZE_MAX, "out of memory loading XML");
    else if (xmlDictOwns(ld->ctxt->dict, s) == 1) {
        ld->dup_key[slot] = s;
        ld->dup_copy[slot] = copy;
    }
    return copy;
}

/* Without entity substitution libxml2 hands attribute values over with each '&' written as
 * "&#38;" (every other reference is already decoded, and no DOCTYPE means no other entities). */
static const char *attr_value(loader *ld, const char *v, size_t len)
{
    char *out = wf_arena_strndup(ld->doc->arena, v, len);
    if (!out || !memchr(v, '&', len))
        return out;
    size_t w = 0;
    for (size_t r = 0; r < len; w++) {
        bool amp = r + 5 <= len && memcmp(v + r, "&#38;", 5) == 0;
        out[w] = amp ? '&' : v[r];
        r += amp ? 5 : 1;
    }
    out[w] = '\0';
    return out;
}

/* libxml2 attributes come as 5-tuples: local, prefix, URI, value start, value end. */
static void fill_attrs(loader *ld, wf_xml_node *node, int count, const xmlChar **attrs,
                       const raw_attr *raw, size_t raw_count)
{
    node->attrs =
        count ? wf_arena_alloc(ld->doc->arena, (size_t)count * sizeof *node->attrs) : NULL;
    if (count && !node->attrs) {
        fail(ld, WF_E_NOMEM, SIZE_MAX, "out of memory loading XML");
        return;
    }
    for (int i = 0; i < count && ld->st == WF_OK; i++) {
        const xmlChar **t = attrs + 5 * i;
        wf_xml_attr *a = &node->attrs[i];
        a->name = dup(ld, t[0]);
        a->prefix = dup(ld, t[1]);
        a->ns = dup(ld, t[2]);
        a->value = attr_value(ld, (const char *)t[3], (size_t)(t[4] - t[3]));
        if (!a->value)
            fail(ld, WF_E_NOMEM, SIZE_MAX, "out of memory loading XML");
        const raw_attr *r = find_raw(ld, raw, raw_count, t[1], t[0]);
        if (r) {
            pos_of(ld, r->name_off, &a->line, &a->col);
            pos_of(ld, r->value_off, &a->value_line, &a->value_col);
        } else {
            a->line = node->line, a->col = node->col;
            a->value_line = node->line, a->value_col = node->col;
        }
    }
    node->attr_count = (size_t)count;
}

static void fill_nsdecls(loader *ld, wf_xml_node *node, int count, const xmlChar **ns)
{
    if (!count)
        return;
    node->nsdecls = wf_arena_alloc(ld->doc->arena, (size_t)count * sizeof *node->nsdecls);
    if (!node->nsdecls) {
        fail(ld, WF_E_NOMEM, SIZE_MAX, "out of memory loading XML");
        return;
    }
    for (int i = 0; i < count; i++) {
        node->nsdecls[i].prefix = dup(ld, ns[2 * i]);
        node->nsdecls[i].uri = dup(ld, ns[2 * i + 1] ? ns[2 * i + 1] : (const xmlChar *)"");
    }
    node->nsdecl_count = (size_t)count;
}

static bool encoding_ok(const loader *ld)
{
    const xmlChar *enc = ld->ctxt->encoding ? ld->ctxt->encoding : ld->ctxt->input->encoding;
    if (!enc)
        return true;
    const char *e = (const char *)enc;
    return strcasecmp(e, "UTF-8") == 0 || strcasecmp(e, "UTF8") == 0 ||
           strcasecmp(e, "US-ASCII") == 0 || strcasecmp(e, "ASCII") == 0;
}

static bool push_frame(loader *ld, wf_xml_node *node, bool self_closing)
{
    if (ld->depth == ld->frames_cap) {
        unsigned cap = ld->frames_cap ? ld->frames_cap * 2 : 16;
        frame *f = wf_realloc(ld->frames, cap * sizeof *f);
        if (!f)
            return false;
        ld->frames = f;
        ld->frames_cap = cap;
    }
    frame *f = &ld->frames[ld->depth++];
    f->node = node;
    f->last_child = NULL;
    f->self_closing = self_closing;
    wf_buf_init(&f->text);
    return true;
}

/* Links a new element under the open one (or as the root). */
static void link_node(loader *ld, wf_xml_node *node)
{
    if (ld->depth == 0) {
        ld->doc->root = node;
        return;
    }
    frame *parent = &ld->frames[ld->depth - 1];
    node->parent = parent->node;
    if (parent->last_child)
        parent->last_child->next = node;
    else
        parent->node->first_child = node;
    parent->last_child = node;
    parent->node->child_count++;
}

static bool check_limits(loader *ld, size_t lt, int nb_attributes)
{
    if (ld->depth == 0 && !encoding_ok(ld)) {
        fail(ld, WF_E_XML, 0, "only UTF-8 documents are supported");
        return false;
    }
    if (ld->depth >= ld->lim.max_depth) {
        fail(ld, WF_E_LIMIT, lt, "elements nested deeper than %u levels", ld->lim.max_depth);
        return false;
    }
    ld->nodes += 1 + (size_t)nb_attributes;
    if (ld->nodes > ld->lim.max_nodes) {
        fail(ld, WF_E_LIMIT, lt, "document has more than %zu nodes", ld->lim.max_nodes);
        return false;
    }
    return true;
}

#define MAX_RAW_ATTRS 256

static void on_start(void *ud, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri,
                     int nb_namespaces, const xmlChar **namespaces, int nb_attributes,
                     int nb_defaulted, const xmlChar **attributes)
{
    (void)nb_defaulted;
    loader *ld = ud;
    size_t lt = next_tag(ld, ld->cursor);
    if (ld->st != WF_OK || !check_limits(ld, lt, nb_attributes))
        return;
    raw_attr raw[MAX_RAW_ATTRS];
    size_t raw_count;
    bool self_closing;
    ld->cursor = scan_start_tag(ld, lt, raw, MAX_RAW_ATTRS, &raw_count, &self_closing);
    wf_xml_node *node = wf_arena_alloc(ld->doc->arena, sizeof *node);
    if (!node) {
        fail(ld, WF_E_NOMEM, SIZE_MAX, "out of memory loading XML");
        return;
    }
    pos_of(ld, lt, &node->line, &node->col);
    node->name = dup(ld, local);
    node->prefix = dup(ld, prefix);
    node->ns = dup(ld, uri);
    node->text = "";
    fill_nsdecls(ld, node, nb_namespaces, namespaces);
    fill_attrs(ld, node, nb_attributes, attributes, raw, raw_count);
    if (ld->st != WF_OK)
        return;
    link_node(ld, node);
    if (!push_frame(ld, node, self_closing))
        fail(ld, WF_E_NOMEM, SIZE_MAX, "out of memory loading XML");
}

static void on_end(void *ud, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri)
{
    (void)local, (void)prefix, (void)uri;
    loader *ld = ud;
    if (ld->st != WF_OK || ld->depth == 0)
        return;
    frame *f = &ld->frames[--ld->depth];
    if (!f->self_closing) {
        size_t lt = next_tag(ld, ld->cursor);
        const char *gt = lt < ld->len ? memchr(ld->data + lt, '>', ld->len - lt) : NULL;
        ld->cursor = gt ? (size_t)(gt - ld->data) + 1 : ld->len;
    }
    if (f->text.len) {
        char *text = wf_arena_strndup(ld->doc->arena, f->text.data, f->text.len);
        if (!text || f->text.oom)
            fail(ld, WF_E_NOMEM, SIZE_MAX, "out of memory loading XML");
        else
            f->node->text = text;
    }
    wf_buf_fini(&f->text);
}

static bool blank_n(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!is_space(s[i]))
            return false;
    return true;
}

static void on_text(void *ud, const xmlChar *chars, int len)
{
    loader *ld = ud;
    if (ld->st != WF_OK || ld->depth == 0 || len <= 0)
        return;
    frame *f = &ld->frames[ld->depth - 1];
    if (!wf_buf_add(&f->text, chars, (size_t)len)) {
        fail(ld, WF_E_NOMEM, SIZE_MAX, "out of memory loading XML");
        return;
    }
    if (f->node->text_line || blank_n((const char *)chars, (size_t)len))
        return; /* earlier chunks were blank, or the location is known */
    size_t resume;
    size_t at = first_text_char(ld, ld->cursor, &resume);
    pos_of(ld, at, &f->node->text_line, &f->node->text_col);
    ld->cursor = resume;
}

/* ---- loading -------------------------------------------------------------------------- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libxml(void)
{
    xmlInitParser();
}

static void set_handlers(xmlSAXHandler *sax)
{
    memset(sax, 0, sizeof *sax);
    sax->initialized = XML_SAX2_MAGIC;
    sax->startElementNs = on_start;
    sax->endElementNs = on_end;
    sax->characters = on_text;
    sax->cdataBlock = on_text;
    sax->internalSubset = on_subset;
    sax->externalSubset = on_subset;
    sax->serror = on_error;
    sax->warning = silent;
    sax->error = silent;
    sax->fatalError = silent;
}

static void apply_limits(loader *ld, const wf_xml_limits *limits)
{
    wf_xml_limits lim = limits ? *limits : (wf_xml_limits)WF_XML_LIMITS_INIT;
    ld->lim.max_bytes = lim.max_bytes ? lim.max_bytes : DEFAULT_MAX_BYTES;
    ld->lim.max_depth = lim.max_depth ? lim.max_depth : DEFAULT_MAX_DEPTH;
    ld->lim.max_nodes = lim.max_nodes ? lim.max_nodes : DEFAULT_MAX_NODES;
}

/* Runs libxml2 over the input with our handlers; libxml2's own messages go nowhere. */
static void run_parser(loader *ld)
{
    xmlGenericErrorFunc saved_generic = xmlGenericError;
    void *saved_generic_ctx = xmlGenericErrorContext;
    xmlStructuredErrorFunc saved_structured = xmlStructuredError;
    void *saved_structured_ctx = xmlStructuredErrorContext;
    xmlSetGenericErrorFunc(NULL, silent);
    xmlSetStructuredErrorFunc(ld, on_error);
    ld->ctxt = xmlCreateMemoryParserCtxt(ld->data, (int)ld->len);
    if (!ld->ctxt) {
        fail(ld, WF_E_NOMEM, SIZE_MAX, "out of memory creating the XML parser");
    } else {
        xmlSAXHandler sax;
        set_handlers(&sax);
        xmlSAXHandlerPtr old = ld->ctxt->sax;
        ld->ctxt->sax = &sax;
        ld->ctxt->userData = ld;
        int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                   (ld->lim.max_depth > 250 ? XML_PARSE_HUGE : 0);
        xmlCtxtUseOptions(ld->ctxt, opts);
        xmlParseDocument(ld->ctxt);
        ld->ctxt->sax = old;
        /* After an early error (SAX disabled) libxml2 may still build a document to hold
         * entity declarations "for expat compatibility"; it is ours to free. */
        if (ld->ctxt->myDoc) {
            xmlFreeDoc(ld->ctxt->myDoc);
            ld->ctxt->myDoc = NULL;
        }
    }
    xmlSetGenericErrorFunc(saved_generic_ctx, saved_generic);
    xmlSetStructuredErrorFunc(saved_structured_ctx, saved_structured);
}

/* Turns the parse outcome into a status: our own failure first, then libxml2's. */
static wf_status finish(loader *ld)
{
    if (ld->st != WF_OK)
        return ld->st;
    if (ld->have_xerr || !ld->ctxt->wellFormed) {
        wf_loc loc = {ld->doc->path, ld->have_xerr && ld->xline > 0 ? (unsigned)ld->xline : 0,
                      ld->have_xerr && ld->xcol > 0 ? (unsigned)ld->xcol : 0};
        if (ld->have_xerr && ld->xcode == XML_ERR_NO_MEMORY)
            return wf_error_set(ld->err, WF_E_NOMEM, &loc, "out of memory parsing XML");
        return wf_error_set(ld->err, WF_E_XML, &loc, "%s",
                            ld->have_xerr ? ld->xmsg : "malformed XML");
    }
    if (!ld->doc->root)
        return wf_error_set(ld->err, WF_E_XML, NULL, "document has no root element");
    return WF_OK;
}

/* ---- encodings: UTF-8 is parsed as is; UTF-16 (with a byte-order mark, as the WF3
 * designer often saves .xoml and .rules files) is transcoded to UTF-8 first. Either way an
 * encoding="utf-16" label in the XML declaration is blanked out with spaces, because .NET
 * tools also write that label over UTF-8 bytes; every line and column stays where it was,
 * since columns count characters. */

static void put_utf8(wf_buf *out, uint32_t cp)
{
    char b[4];
    size_t n = 1;
    if (cp < 0x80) {
        b[0] = (char)cp;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12);
        b[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18);
        b[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    wf_buf_add(out, b, n);
}

static uint32_t utf16_unit(const unsigned char *p, bool big_endian)
{
    return big_endian ? (uint32_t)(p[0] << 8 | p[1]) : (uint32_t)(p[1] << 8 | p[0]);
}

/* UTF-16 after its byte-order mark to UTF-8; a lone surrogate becomes U+FFFD. */
static void utf16_to_utf8(const unsigned char *in, size_t len, bool big_endian, wf_buf *out)
{
    for (size_t i = 0; i + 1 < len; i += 2) {
        uint32_t u = utf16_unit(in + i, big_endian);
        if (u >= 0xD800 && u < 0xDC00 && i + 3 < len) {
            uint32_t lo = utf16_unit(in + i + 2, big_endian);
            if (lo >= 0xDC00 && lo < 0xE000) {
                put_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
                i += 2;
                continue;
            }
        }
        put_utf8(out, u >= 0xD800 && u < 0xE000 ? 0xFFFD : u);
    }
}

/* Blank encoding="utf-16" (any case) in the XML declaration at the start of text. */
static void blank_utf16_label(char *text, size_t len)
{
    if (len < 6 || memcmp(text, "<?xml", 5) != 0)
        return;
    const char *end = memchr(text, '>', len);
    for (char *p = text; end && p + 17 <= end; p++)
        if (strncmp(p, "encoding=", 9) == 0 && (p[9] == '"' || p[9] == '\'') &&
            strncasecmp(p + 10, "utf-16", 6) == 0 && p[16] == p[9]) {
            memset(p, ' ', 17);
            return;
        }
}

static bool has_utf16_label(const char *data, size_t len)
{
    const char *end = len >= 6 && memcmp(data, "<?xml", 5) == 0 ? memchr(data, '>', len) : NULL;
    for (const char *p = data; end && p + 17 <= end; p++)
        if (strncmp(p, "encoding=", 9) == 0 && strncasecmp(p + 10, "utf-16", 6) == 0)
            return true;
    return false;
}

/* Input bytes -> the UTF-8 text to parse: `data` itself, or a converted copy in `copy`.
 * Returns NULL when memory ran out. Text without a BOM that has NUL bytes stays as it is:
 * the parser then reports it. */
static const char *utf8_text(const char *data, size_t *len, wf_buf *copy)
{
    const unsigned char *b = (const unsigned char *)data;
    bool le = *len >= 2 && b[0] == 0xFF && b[1] == 0xFE;
    bool be = *len >= 2 && b[0] == 0xFE && b[1] == 0xFF;
    if (!le && !be && !has_utf16_label(data, *len))
        return data;
    if (le || be)
        utf16_to_utf8(b + 2, *len - 2, be, copy);
    else
        wf_buf_add(copy, data, *len);
    if (copy->oom)
        return NULL;
    blank_utf16_label(copy->data, copy->len);
    *len = copy->len;
    return copy->data;
}

static wf_xml_doc *doc_create(const char *name)
{
    wf_xml_doc *doc = wf_calloc(1, sizeof *doc);
    if (!doc)
        return NULL;
    doc->arena = wf_arena_create(16384);
    doc->path = doc->arena ? wf_arena_strdup(doc->arena, name ? name : "") : NULL;
    if (!doc->path) {
        wf_xml_doc_destroy(doc);
        return NULL;
    }
    return doc;
}

static wf_status check_input(const char *name, size_t len, const wf_xml_limits *lim,
                             wf_error *err)
{
    wf_loc at = {name, 0, 0};
    if (len == 0) {
        wf_loc start = {name, 1, 1};
        return wf_error_set(err, WF_E_XML, &start, "document is empty");
    }
    if (len > lim->max_bytes)
        return wf_error_set(err, WF_E_LIMIT, &at, "document is %zu bytes, limit is %zu", len,
                            lim->max_bytes);
    if (len > INT32_MAX)
        return wf_error_set(err, WF_E_LIMIT, &at, "document is too large (%zu bytes)", len);
    return WF_OK;
}

wf_status wf_xml_load_mem(const char *name, const char *data, size_t len,
                          const wf_xml_limits *limits, wf_xml_doc **out, wf_error *err)
{
    *out = NULL;
    loader ld = {0};
    ld.err = err;
    apply_limits(&ld, limits);
    wf_status st = check_input(name, len, &ld.lim, err);
    if (st != WF_OK)
        return st;
    wf_buf converted;
    wf_buf_init(&converted);
    ld.data = utf8_text(data, &len, &converted);
    ld.len = len;
    if (!ld.data) {
        wf_buf_fini(&converted);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory loading XML");
    }
    pthread_once(&init_once, init_libxml);
    ld.doc = doc_create(name);
    if (!ld.doc || !build_lines(&ld)) {
        st = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory loading XML");
        goto fail;
    }
    run_parser(&ld);
    st = finish(&ld);
fail:
    for (unsigned i = 0; i < ld.depth; i++)
        wf_buf_fini(&ld.frames[i].text);
    wf_free(ld.frames);
    wf_free(ld.line_starts);
    if (ld.ctxt)
        xmlFreeParserCtxt(ld.ctxt);
    if (st != WF_OK)
        wf_xml_doc_destroy(ld.doc);
    else
        *out = ld.doc;
    wf_buf_fini(&converted);
    return st;
}

wf_status wf_xml_load_file(const char *path, const wf_xml_limits *limits, wf_xml_doc **out,
                           wf_error *err)
{
    *out = NULL;
    loader probe = {0};
    apply_limits(&probe, limits);
    wf_buf data;
    wf_buf_init(&data);
    wf_status st = wf_file_read(path, probe.lim.max_bytes, &data, err);
    if (st == WF_OK)
        st = wf_xml_load_mem(path, data.data, data.len, limits, out, err);
    wf_buf_fini(&data);
    return st;
}

void wf_xml_doc_destroy(wf_xml_doc *doc)
{
    if (!doc)
        return;
    wf_arena_destroy(doc->arena);
    wf_free(doc);
}

/* ---- queries -------------------------------------------------------------------------- */

const wf_xml_node *wf_xml_root(const wf_xml_doc *doc)
{
    return doc ? doc->root : NULL;
}

const char *wf_xml_path(const wf_xml_doc *doc)
{
    return doc ? doc->path : NULL;
}

wf_loc wf_xml_node_loc(const wf_xml_doc *doc, const wf_xml_node *node)
{
    return (wf_loc){wf_xml_path(doc), node ? node->line : 0, node ? node->col : 0};
}

wf_loc wf_xml_attr_loc(const wf_xml_doc *doc, const wf_xml_attr *attr)
{
    return (wf_loc){wf_xml_path(doc), attr ? attr->line : 0, attr ? attr->col : 0};
}

wf_loc wf_xml_value_loc(const wf_xml_doc *doc, const wf_xml_attr *attr)
{
    return (wf_loc){wf_xml_path(doc), attr ? attr->value_line : 0, attr ? attr->value_col : 0};
}

wf_loc wf_xml_text_loc(const wf_xml_doc *doc, const wf_xml_node *node)
{
    return (wf_loc){wf_xml_path(doc), node ? node->text_line : 0, node ? node->text_col : 0};
}

const char *wf_xml_lookup_ns(const wf_xml_node *node, const char *prefix)
{
    if (prefix && *prefix == '\0')
        prefix = NULL;
    if (prefix && strcmp(prefix, "xml") == 0)
        return XML_NS_URI;
    for (; node; node = node->parent)
        for (size_t i = 0; i < node->nsdecl_count; i++) {
            const wf_xml_nsdecl *d = &node->nsdecls[i];
            bool match = prefix ? d->prefix && strcmp(d->prefix, prefix) == 0 : !d->prefix;
            if (match)
                return *d->uri ? d->uri : NULL;
        }
    return NULL;
}

const wf_xml_attr *wf_xml_attr_find(const wf_xml_node *node, const char *ns, const char *name)
{
    for (size_t i = 0; node && i < node->attr_count; i++) {
        const wf_xml_attr *a = &node->attrs[i];
        bool ns_match = ns ? a->ns && strcmp(a->ns, ns) == 0 : !a->ns;
        if (ns_match && strcmp(a->name, name) == 0)
            return a;
    }
    return NULL;
}

bool wf_xml_text_blank(const char *text)
{
    for (; text && *text; text++)
        if (!is_space(*text))
            return false;
    return true;
}

bool wf_xml_resolve_qname(const wf_xml_node *node, const char *qname, const char **ns,
                          const char **local, size_t *local_len)
{
    const char *colon = strchr(qname, ':');
    const char *name = colon ? colon + 1 : qname;
    if (local)
        *local = name;
    if (local_len)
        *local_len = strlen(name);
    if (!colon) {
        if (ns)
            *ns = wf_xml_lookup_ns(node, NULL);
        return true;
    }
    char prefix[128];
    size_t plen = (size_t)(colon - qname);
    if (plen == 0 || plen >= sizeof prefix)
        return false;
    memcpy(prefix, qname, plen);
    prefix[plen] = '\0';
    const char *uri = wf_xml_lookup_ns(node, prefix);
    if (ns)
        *ns = uri;
    return uri != NULL;
}

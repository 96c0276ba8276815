/* wf_xmlw.c — the XML/HTML text writer (wf_xmlw.h) over libxml2's xmlTextWriter into a memory
 * buffer. libxml2 escapes markup characters but copies everything else, so values are cleaned
 * here first; a base indentation is made of unwritten wrapper elements whose bytes are cut. */
#include "wf_xmlw.h"

#include <assert.h>
#include <libxml/tree.h> /* xmlValidateQName */
#include <libxml/xmlstring.h>
#include <libxml/xmlwriter.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct wf_xmlw {
    xmlBufferPtr buf;   /* owned: what the writer wrote, wrappers included */
    xmlTextWriterPtr w; /* owned */
    wf_xmlw_opts opts;
    size_t depth;      /* elements the caller opened and did not close */
    size_t start;      /* bytes before the caller's first: declaration, wrappers */
    bool tag_open;     /* the innermost start tag can still take attributes */
    bool failed;       /* a libxml2 call failed: out of memory */
    bool misused;      /* calls out of order (close without open, attribute after content) */
    char bad_name[64]; /* the first element or attribute name that is not an XML name */
    wf_buf scratch;    /* a cleaned value */
    wf_buf scratch2;   /* a cleaned attribute name beside its value */
};

/* The replacement character, for what XML 1.0 cannot carry. */
static const char replacement[] = "\xEF\xBF\xBD";

/* Length of the UTF-8 sequence at p (left bytes there, left >= 1), negative when it is valid
 * UTF-8 but no XML character (a control character, U+FFFE, U+FFFF), 0 when it is invalid. */
static long xml_char_len(const unsigned char *p, size_t left)
{
    if (*p < 0x80)
        return (*p >= 0x20 || *p == '\t' || *p == '\n' || *p == '\r') ? 1 : -1;
    size_t n = wf_utf8_seq_len(p, left);
    if (n == 3 && p[0] == 0xEF && p[1] == 0xBF && p[2] >= 0xBE)
        return -3;
    return (long)n;
}

const char *wf_xmlw_clean(const char *text, wf_buf *scratch)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t left = strlen(text);
    long n;
    while (left && (n = xml_char_len(p, left)) > 0)
        p += n, left -= (size_t)n;
    if (!left)
        return text;
    wf_buf_reset(scratch);
    wf_buf_add(scratch, text, (size_t)((const char *)p - text));
    while (left) {
        n = xml_char_len(p, left);
        if (n > 0)
            wf_buf_add(scratch, p, (size_t)n);
        else
            wf_buf_adds(scratch, replacement);
        size_t skip = n > 0 ? (size_t)n : n < 0 ? (size_t)-n : 1;
        p += skip, left -= skip;
    }
    return scratch->oom ? NULL : scratch->data;
}

static void check(wf_xmlw *x, int rc)
{
    x->failed |= rc < 0;
}

static bool usable(const wf_xmlw *x)
{
    return !x->failed && !x->misused && !x->bad_name[0];
}

/* name when it is an XML name (with at most one prefix), else NULL and the writer fails. */
static const xmlChar *xml_name(wf_xmlw *x, const char *name)
{
    if (!usable(x))
        return NULL;
    if (name && xmlValidateQName(BAD_CAST name, 0) == 0)
        return BAD_CAST name;
    snprintf(x->bad_name, sizeof x->bad_name, "%s", name && name[0] ? name : "(empty)");
    return NULL;
}

/* Every writer starts a document, declared UTF-8: only then does libxml2 copy non-ASCII
 * attribute text as it is rather than as character references, so every output spells it
 * the same way. The declaration is cut unless wf_xmlw_declaration keeps it. With a base
 * depth, the caller's first element must be indented as if that many elements were open:
 * they are, as wrappers, and "" ends their start tags so the cut is clean. */
static void begin(wf_xmlw *x)
{
    check(x, xmlTextWriterStartDocument(x->w, "1.0", "UTF-8", NULL));
    if (x->opts.indent) {
        check(x, xmlTextWriterSetIndent(x->w, 1));
        check(x, xmlTextWriterSetIndentString(x->w, BAD_CAST "  "));
    }
    for (size_t i = 0; x->opts.indent && i < x->opts.base_depth; i++)
        check(x, xmlTextWriterStartElement(x->w, BAD_CAST "_"));
    if (x->opts.indent && x->opts.base_depth)
        check(x, xmlTextWriterWriteRaw(x->w, BAD_CAST ""));
    check(x, xmlTextWriterFlush(x->w));
    x->start = (size_t)xmlBufferLength(x->buf);
}

wf_status wf_xmlw_create(const wf_xmlw_opts *opts, wf_xmlw **out, wf_error *err)
{
    *out = NULL;
    wf_xmlw *x = wf_calloc(1, sizeof *x);
    if (!x)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    x->opts = *opts;
    wf_buf_init(&x->scratch);
    wf_buf_init(&x->scratch2);
    x->buf = xmlBufferCreate();
    x->w = x->buf ? xmlNewTextWriterMemory(x->buf, 0) : NULL;
    if (x->w)
        begin(x);
    if (!x->w || x->failed) {
        wf_xmlw_destroy(x);
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    }
    *out = x;
    return WF_OK;
}

void wf_xmlw_destroy(wf_xmlw *x)
{
    if (!x)
        return;
    xmlFreeTextWriter(x->w); /* the buffer stays ours */
    xmlBufferFree(x->buf);
    wf_buf_fini(&x->scratch);
    wf_buf_fini(&x->scratch2);
    wf_free(x);
}

wf_status wf_xmlw_finish(wf_xmlw *x, wf_buf *out, wf_error *err)
{
    if (x->bad_name[0])
        return wf_error_set(err, WF_E_NAME, NULL, "'%s' is not an XML name", x->bad_name);
    check(x, xmlTextWriterFlush(x->w));
    if (x->failed) /* before the order: calls after a failure did nothing */
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (x->misused || x->depth)
        return wf_error_set(err, WF_E_STATE, NULL, "XML writer: elements not closed in order");
    size_t len = (size_t)xmlBufferLength(x->buf);
    assert(len >= x->start);
    if (!wf_buf_add(out, xmlBufferContent(x->buf) + x->start, len - x->start))
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    return WF_OK;
}

/* text cleaned into scratch, or NULL (failed set) when memory ran out. */
static const xmlChar *cleaned(wf_xmlw *x, const char *text, wf_buf *scratch)
{
    const char *s = wf_xmlw_clean(text ? text : "", scratch);
    x->failed |= s == NULL;
    return BAD_CAST s;
}

void wf_xmlw_declaration(wf_xmlw *x)
{
    check(x, xmlTextWriterFlush(x->w));
    if (x->opts.base_depth || (size_t)xmlBufferLength(x->buf) != x->start)
        x->misused = true; /* not first */
    x->start = 0;
}

void wf_xmlw_open(wf_xmlw *x, const char *name)
{
    const xmlChar *n = xml_name(x, name);
    if (!n)
        return;
    check(x, xmlTextWriterStartElement(x->w, n));
    x->depth++;
    x->tag_open = true;
}

void wf_xmlw_attr(wf_xmlw *x, const char *name, const char *value)
{
    if (usable(x) && !x->tag_open)
        x->misused = true;
    const xmlChar *n = xml_name(x, name);
    const xmlChar *v = n ? cleaned(x, value, &x->scratch) : NULL;
    if (v)
        check(x, xmlTextWriterWriteAttribute(x->w, n, v));
}

/* fmt formatted into buf; false (a misuse: formatted values are short) when it did not fit. */
static bool format(wf_xmlw *x, char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static bool format(wf_xmlw *x, char *buf, size_t size, const char *fmt, va_list ap)
{
    int n = vsnprintf(buf, size, fmt, ap);
    if (n < 0 || (size_t)n >= size)
        x->misused = true;
    return !x->misused;
}

void wf_xmlw_attrv(wf_xmlw *x, const char *name, const char *fmt, va_list ap)
{
    char value[1024];
    if (format(x, value, sizeof value, fmt, ap))
        wf_xmlw_attr(x, name, value);
}

void wf_xmlw_attrf(wf_xmlw *x, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    wf_xmlw_attrv(x, name, fmt, ap);
    va_end(ap);
}

void wf_xmlw_text(wf_xmlw *x, const char *text)
{
    const xmlChar *t = usable(x) && text ? cleaned(x, text, &x->scratch) : NULL;
    if (!t)
        return;
    check(x, xmlTextWriterWriteString(x->w, t));
    x->tag_open = false;
}

void wf_xmlw_textf(wf_xmlw *x, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    bool ok = format(x, text, sizeof text, fmt, ap);
    va_end(ap);
    if (ok)
        wf_xmlw_text(x, text);
}

static void close_with(wf_xmlw *x, int (*end)(xmlTextWriterPtr))
{
    if (!usable(x))
        return;
    if (!x->depth) {
        x->misused = true;
        return;
    }
    check(x, end(x->w));
    x->depth--;
    x->tag_open = false;
}

void wf_xmlw_close(wf_xmlw *x)
{
    close_with(x, x->opts.html ? xmlTextWriterFullEndElement : xmlTextWriterEndElement);
}

void wf_xmlw_close_void(wf_xmlw *x)
{
    close_with(x, xmlTextWriterEndElement);
}

void wf_xmlw_comment(wf_xmlw *x, const char *text)
{
    const char *t = usable(x) ? (const char *)cleaned(x, text, &x->scratch) : NULL;
    if (!t)
        return;
    wf_buf *b = &x->scratch2; /* " text ", so it neither starts nor ends with '-' */
    wf_buf_reset(b);
    wf_buf_addc(b, ' ');
    for (const char *p = t; *p; p++) {
        wf_buf_addc(b, *p);
        if (p[0] == '-' && p[1] == '-')
            wf_buf_addc(b, ' '); /* "--" may not appear in a comment */
    }
    wf_buf_addc(b, ' ');
    x->failed |= b->oom;
    if (!b->oom)
        check(x, xmlTextWriterWriteComment(x->w, BAD_CAST b->data));
    x->tag_open = false;
}

void wf_xmlw_raw(wf_xmlw *x, const char *markup)
{
    if (!usable(x))
        return;
    if (x->opts.indent && x->tag_open) /* end the start tag as before a child: ">\n" */
        check(x, xmlTextWriterWriteRaw(x->w, BAD_CAST "\n"));
    check(x, xmlTextWriterWriteRaw(x->w, BAD_CAST markup));
    if (x->opts.indent) /* raw text switched the end tag's indentation off: lines go on */
        check(x, xmlTextWriterSetIndent(x->w, 1));
    x->tag_open = false;
}

void wf_xmlw_leaf(wf_xmlw *x, const char *name, const char *text)
{
    wf_xmlw_open(x, name);
    wf_xmlw_text(x, text);
    wf_xmlw_close(x);
}

size_t wf_xmlw_depth(const wf_xmlw *x)
{
    return x->depth;
}

bool wf_xmlw_failed(const wf_xmlw *x)
{
    return !usable(x);
}

/* ---- HTML pages -------------------------------------------------------------------------- */
void wf_xmlw_html_open(wf_xmlw *x, const char *tag, const char *cls)
{
    wf_xmlw_open(x, tag);
    if (cls)
        wf_xmlw_attr(x, "class", cls);
}

void wf_xmlw_html_cell(wf_xmlw *x, const char *tag, const char *cls, const char *text)
{
    wf_xmlw_html_open(x, tag, cls);
    wf_xmlw_text(x, text);
    wf_xmlw_close(x);
}

void wf_xmlw_html_para(wf_xmlw *x, const char *tag, const char *id, const char *text)
{
    wf_xmlw_open(x, tag);
    if (id)
        wf_xmlw_attr(x, "id", id);
    wf_xmlw_text(x, text);
    wf_xmlw_close(x);
    wf_xmlw_text(x, "\n");
}

void wf_xmlw_html_close_line(wf_xmlw *x)
{
    wf_xmlw_close(x);
    wf_xmlw_text(x, "\n");
}

void wf_xmlw_html_table(wf_xmlw *x, const char *id, const char *const *heads, size_t count)
{
    wf_xmlw_open(x, "table");
    if (id)
        wf_xmlw_attr(x, "id", id);
    wf_xmlw_text(x, "\n");
    wf_xmlw_html_open(x, "tr", NULL);
    for (size_t i = 0; i < count; i++)
        wf_xmlw_html_cell(x, "th", NULL, heads[i]);
    wf_xmlw_html_close_line(x);
}

void wf_xmlw_html_begin(wf_xmlw *x, const char *title, const char *style)
{
    if (usable(x)) {
        check(x, xmlTextWriterStartDTD(x->w, BAD_CAST "html", NULL, NULL));
        check(x, xmlTextWriterEndDTD(x->w));
    }
    wf_xmlw_text(x, "\n");
    wf_xmlw_open(x, "html");
    wf_xmlw_attr(x, "lang", "en");
    wf_xmlw_text(x, "\n");
    wf_xmlw_open(x, "head");
    wf_xmlw_text(x, "\n");
    wf_xmlw_open(x, "meta");
    wf_xmlw_attr(x, "charset", "utf-8");
    wf_xmlw_close_void(x);
    wf_xmlw_text(x, "\n");
    wf_xmlw_html_para(x, "title", NULL, title);
    if (style) {
        wf_xmlw_open(x, "style");
        wf_xmlw_raw(x, style); /* constant, no markup */
        wf_xmlw_close(x);
        wf_xmlw_text(x, "\n");
    }
    wf_xmlw_close(x); /* head */
    wf_xmlw_text(x, "\n");
    wf_xmlw_open(x, "body");
    wf_xmlw_text(x, "\n");
    wf_xmlw_html_para(x, "h1", NULL, title);
}

void wf_xmlw_html_end(wf_xmlw *x)
{
    wf_xmlw_close(x); /* body */
    wf_xmlw_text(x, "\n");
    wf_xmlw_close(x); /* html */
    wf_xmlw_text(x, "\n");
}

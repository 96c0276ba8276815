/* wfc_xaml_writer.c — the deterministic XML text writer of converted definitions
 * (wfc_xaml_writer.h). Layout is fixed: one element per line, two spaces per level. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../common/wf_xml.h"
#include "wfc_xaml_writer.h"

void wfc_xw_init(wfc_xw *w, wf_buf *out, size_t base_depth)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->base = base_depth;
}

static void put(wfc_xw *w, const char *s)
{
    if (!wf_buf_adds(w->out, s))
        w->failed = true;
}

static void indent(wfc_xw *w, size_t level)
{
    for (size_t i = 0; i < (w->base + level) * 2; i++)
        if (!wf_buf_addc(w->out, ' '))
            w->failed = true;
}

void wfc_xw_end_start_tag(wfc_xw *w)
{
    if (w->tag_open) {
        put(w, ">\n");
        w->tag_open = false;
    }
}

void wfc_xw_open(wfc_xw *w, const char *name)
{
    wfc_xw_end_start_tag(w);
    if (w->depth >= WFC_XW_MAX_DEPTH) {
        w->failed = w->too_deep = true;
        return;
    }
    indent(w, w->depth);
    put(w, "<");
    put(w, name);
    w->stack[w->depth++] = name;
    w->tag_open = true;
    w->has_text = false;
}

void wfc_xw_attr(wfc_xw *w, const char *name, const char *value)
{
    if (!w->tag_open) {
        w->failed = true;
        return;
    }
    put(w, " ");
    put(w, name);
    put(w, "=\"");
    if (!wf_xml_escape(w->out, value ? value : "", true))
        w->failed = true;
    put(w, "\"");
}

void wfc_xw_attrf(wfc_xw *w, const char *name, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf)
        w->failed = true;
    else
        wfc_xw_attr(w, name, buf);
}

void wfc_xw_text(wfc_xw *w, const char *text)
{
    if (!w->tag_open) {
        w->failed = true;
        return;
    }
    put(w, ">");
    if (!wf_xml_escape(w->out, text, false))
        w->failed = true;
    w->tag_open = false;
    w->has_text = true;
}

void wfc_xw_close(wfc_xw *w)
{
    if (w->depth == 0) {
        w->failed = true;
        return;
    }
    const char *name = w->stack[--w->depth];
    if (w->tag_open) {
        put(w, " />\n");
    } else {
        if (!w->has_text)
            indent(w, w->depth);
        put(w, "</");
        put(w, name);
        put(w, ">\n");
    }
    w->tag_open = false;
    w->has_text = false;
}

void wfc_xw_comment(wfc_xw *w, const char *text)
{
    wfc_xw_end_start_tag(w);
    indent(w, w->depth);
    put(w, "<!-- ");
    for (const char *p = text; *p; p++) {
        if (!wf_buf_addc(w->out, *p) || (p[0] == '-' && p[1] == '-' && !wf_buf_addc(w->out, ' ')))
            w->failed = true;
    }
    put(w, " -->\n");
}

void wfc_xw_leaf_text(wfc_xw *w, const char *name, const char *text)
{
    wfc_xw_open(w, name);
    wfc_xw_text(w, text);
    wfc_xw_close(w);
}

bool wfc_xw_ok(const wfc_xw *w)
{
    return !w->failed && !w->out->oom && w->depth == 0;
}

/* wfc_xaml_writer.c — the deterministic XML text writer of converted definitions
 * (wfc_xaml_writer.h): the common writer in indent mode, plus the rule that text sits right
 * after its start tag and the converter's nesting limit. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wfc_xaml_writer.h"

void wfc_xw_init(wfc_xw *w, wf_buf *out, size_t base_depth)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    wf_xmlw_opts o = WF_XMLW_OPTS_INIT;
    o.indent = true;
    o.base_depth = base_depth;
    w->failed = wf_xmlw_create(&o, &w->x, NULL) != WF_OK;
}

static bool usable(const wfc_xw *w)
{
    return !w->failed && !wf_xmlw_failed(w->x);
}

void wfc_xw_declaration(wfc_xw *w)
{
    if (usable(w))
        wf_xmlw_declaration(w->x);
}

void wfc_xw_open(wfc_xw *w, const char *name)
{
    if (w->depth >= WFC_XW_MAX_DEPTH) {
        w->failed = w->too_deep = true;
        return;
    }
    if (!usable(w))
        return;
    wf_xmlw_open(w->x, name);
    w->depth++;
    w->tag_open = true;
}

void wfc_xw_attr(wfc_xw *w, const char *name, const char *value)
{
    if (!w->tag_open)
        w->failed = true;
    if (usable(w))
        wf_xmlw_attr(w->x, name, value);
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
    if (!w->tag_open)
        w->failed = true;
    if (usable(w))
        wf_xmlw_text(w->x, text);
    w->tag_open = false;
}

void wfc_xw_close(wfc_xw *w)
{
    if (w->depth == 0) {
        w->failed = true;
        return;
    }
    w->depth--;
    w->tag_open = false;
    if (usable(w))
        wf_xmlw_close(w->x);
}

void wfc_xw_comment(wfc_xw *w, const char *text)
{
    w->tag_open = false;
    if (usable(w))
        wf_xmlw_comment(w->x, text);
}

void wfc_xw_leaf_text(wfc_xw *w, const char *name, const char *text)
{
    wfc_xw_open(w, name);
    wfc_xw_text(w, text);
    wfc_xw_close(w);
}

void wfc_xw_markup(wfc_xw *w, const char *markup)
{
    if (usable(w))
        wf_xmlw_raw(w->x, markup);
    w->tag_open = false;
}

bool wfc_xw_ok(const wfc_xw *w)
{
    return usable(w) && w->depth == 0;
}

/* The writer's own finish (its error: a bad name, no memory) unless this layer saw the
 * nesting limit, a failed create or calls out of order first. */
static bool finish(wfc_xw *w)
{
    if (w->too_deep)
        return !wf_error_set(&w->err, WF_E_LIMIT, NULL, "more than %d elements nested",
                             WFC_XW_MAX_DEPTH);
    if (!w->x)
        return !wf_error_set(&w->err, WF_E_NOMEM, NULL, "out of memory");
    if (!wf_xmlw_failed(w->x) && (w->failed || w->depth))
        return !wf_error_set(&w->err, WF_E_STATE, NULL,
                             "XAML writer: elements not closed in order");
    return wf_xmlw_finish(w->x, w->out, &w->err) == WF_OK;
}

bool wfc_xw_finish(wfc_xw *w)
{
    bool ok = finish(w);
    wf_xmlw_destroy(w->x);
    w->x = NULL;
    w->failed |= !ok;
    return ok;
}

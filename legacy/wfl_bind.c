/* wfl_bind.c — ActivityBind syntax (markup extension and Path grammar), static name resolution
 * on the definition tree, and reading/writing through member paths into immutable values by
 * rebuilding every container on the way (docs/semantics.md §1 "ActivityBind"). */
#include "wfl_bind.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* strncasecmp */

#include "wfl_def_int.h"

/* ---- locations inside a text ------------------------------------------------------------ */
/* The location of text[off], given that text starts at `at`. */
static wf_loc loc_at(wf_loc at, const char *text, size_t off)
{
    wf_loc loc = at;
    if (loc.line == 0)
        return loc;
    for (size_t i = 0; i < off && text[i] != '\0'; i++) {
        if (text[i] == '\n') {
            loc.line++;
            loc.col = 1;
        } else {
            loc.col++;
        }
    }
    return loc;
}

static bool is_ident_start(char c)
{
    return isalpha((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

static bool is_ident_char(char c)
{
    return is_ident_start(c) || isdigit((unsigned char)c);
}

static const char *skip_ws(const char *p)
{
    while (*p != '\0' && isspace((unsigned char)*p))
        p++;
    return p;
}

/* ---- markup extension -------------------------------------------------------------------- */
/* After '{': optional "prefix:", then ActivityBind[Extension]. Returns the end of the type
 * name, or NULL when the text does not name ActivityBind. */
static const char *markup_type_end(const char *text)
{
    const char *p = skip_ws(text);
    if (*p != '{' || p[1] == '}')
        return NULL;
    p = skip_ws(p + 1);
    const char *colon = p;
    while (is_ident_char(*colon) || *colon == '.')
        colon++;
    if (*colon == ':')
        p = colon + 1;
    static const char name[] = "ActivityBind";
    if (strncmp(p, name, sizeof name - 1) != 0)
        return NULL;
    p += sizeof name - 1;
    if (strncmp(p, "Extension", 9) == 0)
        p += 9;
    if (*p != '\0' && *p != '}' && *p != ',' && !isspace((unsigned char)*p))
        return NULL;
    return p;
}

bool wfl_bind_is_markup(const char *text)
{
    return text != NULL && markup_type_end(text) != NULL;
}

/* One argument value: quoted, or raw up to ',' or '}' outside brackets. */
static wf_status markup_value(wf_arena *arena, const char *text, const char **pp, wf_loc at,
                              char **out, wf_error *err)
{
    const char *p = skip_ws(*pp);
    if (*p == '\'' || *p == '"') {
        char q = *p;
        const char *start = ++p;
        while (*p != '\0' && *p != q)
            p++;
        if (*p != q) {
            wf_loc l = loc_at(at, text, (size_t)(start - 1 - text));
            return wf_error_set(err, WF_E_SYNTAX, &l, "unterminated quoted value in ActivityBind");
        }
        *out = wf_arena_strndup(arena, start, (size_t)(p - start));
        *pp = p + 1;
    } else {
        const char *start = p;
        int depth = 0;
        char quote = 0;
        for (; *p != '\0'; p++) {
            if (quote != 0) {
                if (*p == quote)
                    quote = 0;
            } else if (depth > 0 && (*p == '"' || *p == '\'')) {
                quote = *p;
            } else if (*p == '[') {
                depth++;
            } else if (*p == ']') {
                depth--;
            } else if (depth <= 0 && (*p == ',' || *p == '}' || *p == '=')) {
                break;
            }
        }
        const char *end = p;
        while (end > start && isspace((unsigned char)end[-1]))
            end--;
        *out = wf_arena_strndup(arena, start, (size_t)(end - start));
        *pp = p;
    }
    return *out == NULL ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory") : WF_OK;
}

typedef struct markup_args {
    char *name;
    char *path;
    unsigned positional;
} markup_args;

static wf_status markup_arg(wf_arena *arena, const char *text, const char **pp, wf_loc at,
                            markup_args *a, wf_error *err)
{
    const char *arg_start = skip_ws(*pp);
    char *first = NULL;
    wf_status rc = markup_value(arena, text, pp, at, &first, err);
    if (rc != WF_OK)
        return rc;
    const char *p = skip_ws(*pp);
    if (*p != '=') {
        if (a->positional >= 2) {
            wf_loc l = loc_at(at, text, (size_t)(arg_start - text));
            return wf_error_set(err, WF_E_SYNTAX, &l,
                                "ActivityBind takes at most two positional arguments (Name, Path)");
        }
        *(a->positional++ == 0 ? &a->name : &a->path) = first;
        return WF_OK;
    }
    *pp = p + 1;
    char *value = NULL;
    rc = markup_value(arena, text, pp, at, &value, err);
    if (rc != WF_OK)
        return rc;
    if (strcasecmp(first, "Name") == 0) {
        a->name = value;
    } else if (strcasecmp(first, "Path") == 0) {
        a->path = value;
    } else {
        wf_loc l = loc_at(at, text, (size_t)(arg_start - text));
        return wf_error_set(err, WF_E_SYNTAX, &l,
                            "unknown ActivityBind argument '%s' (expected Name or Path)", first);
    }
    return WF_OK;
}

wf_status wfl_bind_parse_markup(wf_arena *arena, const char *text, wf_loc loc, wfl_bind **out,
                                wf_error *err)
{
    *out = NULL;
    const char *p = markup_type_end(text);
    if (p == NULL)
        return wf_error_set(err, WF_E_SYNTAX, &loc, "not an ActivityBind markup extension");
    markup_args a = {NULL, NULL, 0};
    p = skip_ws(p);
    while (*p != '}') {
        if (*p == '\0') {
            wf_loc l = loc_at(loc, text, (size_t)(p - text));
            return wf_error_set(err, WF_E_SYNTAX, &l, "ActivityBind is missing its closing '}'");
        }
        wf_status rc = markup_arg(arena, text, &p, loc, &a, err);
        if (rc != WF_OK)
            return rc;
        p = skip_ws(p);
        if (*p == ',')
            p = skip_ws(p + 1);
        else if (*p != '}' && *p != '\0') {
            wf_loc l = loc_at(loc, text, (size_t)(p - text));
            return wf_error_set(err, WF_E_SYNTAX, &l, "unexpected '%c' in ActivityBind", *p);
        }
    }
    const char *rest = skip_ws(p + 1);
    if (*rest != '\0') {
        wf_loc l = loc_at(loc, text, (size_t)(rest - text));
        return wf_error_set(err, WF_E_SYNTAX, &l, "text after the end of ActivityBind");
    }
    if (a.name == NULL || a.name[0] == '\0')
        return wf_error_set(err, WF_E_SYNTAX, &loc, "ActivityBind has no Name");
    return wfl_bind_make(arena, a.name, a.path, loc, out, err);
}

wf_status wfl_bind_make(wf_arena *arena, const char *name, const char *path, wf_loc loc,
                        wfl_bind **out, wf_error *err)
{
    *out = NULL;
    if (name == NULL || name[0] == '\0')
        return wf_error_set(err, WF_E_SYNTAX, &loc, "ActivityBind has no Name");
    bool relative = false;
    unsigned up = 0;
    if (!wfl_bind_name_steps(name, &relative, &up))
        return wf_error_set(err, WF_E_SYNTAX, &loc,
                            "ActivityBind Name '%s' is not /Self, /Parent or a name", name);
    wfl_bind *b = wf_arena_alloc(arena, sizeof *b);
    if (b == NULL)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    b->name = wf_arena_strdup(arena, name);
    b->path = wf_arena_strdup(arena, path != NULL ? path : "");
    b->loc = loc;
    if (b->name == NULL || b->path == NULL)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    wfl_path_seg *segs = NULL;
    wf_status rc = wfl_bind_parse_path(arena, b->path, loc, &segs, &b->seg_count, err);
    if (rc != WF_OK)
        return rc;
    b->segs = segs;
    *out = b;
    return WF_OK;
}

/* ---- paths ------------------------------------------------------------------------------ */
static wf_status path_error(wf_error *err, wf_loc loc, const char *path, const char *p,
                            const char *what)
{
    wf_loc l = loc;
    return wf_error_set(err, WF_E_SYNTAX, &l, "bad Path '%s': %s at offset %zu", path, what,
                        (size_t)(p - path));
}

static wf_status parse_indexer(wf_arena *arena, const char *path, const char **pp, wf_loc loc,
                               wfl_path_seg *seg, wf_error *err)
{
    const char *p = skip_ws(*pp + 1);
    if (*p == '"' || *p == '\'') {
        char q = *p;
        const char *start = ++p;
        while (*p != '\0' && *p != q)
            p++;
        if (*p != q)
            return path_error(err, loc, path, p, "unterminated key");
        seg->kind = WFL_SEG_KEY;
        seg->name = wf_arena_strndup(arena, start, (size_t)(p - start));
        if (seg->name == NULL)
            return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        p++;
    } else {
        if (!isdigit((unsigned char)*p))
            return path_error(err, loc, path, p, "expected an index or a quoted key");
        errno = 0;
        char *end = NULL;
        long long v = strtoll(p, &end, 10);
        if (errno != 0 || v > INT32_MAX)
            return path_error(err, loc, path, p, "index too large");
        seg->kind = WFL_SEG_INDEX;
        seg->index = v;
        p = end;
    }
    p = skip_ws(p);
    if (*p != ']')
        return path_error(err, loc, path, p, "expected ']'");
    *pp = p + 1;
    return WF_OK;
}

static size_t count_segments(const char *path)
{
    size_t n = 1;
    for (const char *p = path; *p != '\0'; p++)
        n += (*p == '.' || *p == '[');
    return n;
}

wf_status wfl_bind_parse_path(wf_arena *arena, const char *path, wf_loc loc,
                              wfl_path_seg **out_segs, size_t *out_count, wf_error *err)
{
    *out_segs = NULL;
    *out_count = 0;
    const char *p = skip_ws(path);
    if (*p == '/')
        p++;
    if (*skip_ws(p) == '\0')
        return WF_OK;
    size_t cap = count_segments(p); /* every segment but the first starts at '.' or '[' */
    wfl_path_seg *segs = wf_arena_alloc(arena, cap * sizeof *segs);
    if (segs == NULL)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    size_t n = 0;
    bool want_member = true;
    while (*p != '\0') {
        assert(n < cap || (!want_member && *p != '['));
        if (want_member) {
            if (!is_ident_start(*p))
                return path_error(err, loc, path, p, "expected a member name");
            const char *start = p;
            while (is_ident_char(*p))
                p++;
            segs[n].kind = WFL_SEG_MEMBER;
            segs[n].name = wf_arena_strndup(arena, start, (size_t)(p - start));
            if (segs[n++].name == NULL)
                return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
            want_member = false;
        } else if (*p == '.') {
            p++;
            want_member = true;
        } else if (*p == '[') {
            wf_status rc = parse_indexer(arena, path, &p, loc, &segs[n++], err);
            if (rc != WF_OK)
                return rc;
        } else if (isspace((unsigned char)*p) && *skip_ws(p) == '\0') {
            break;
        } else {
            return path_error(err, loc, path, p, "unexpected character");
        }
    }
    if (want_member)
        return path_error(err, loc, path, p, "expected a member name");
    *out_segs = segs;
    *out_count = n;
    return WF_OK;
}

bool wfl_bind_name_steps(const char *name, bool *is_relative, unsigned *up)
{
    *is_relative = false;
    *up = 0;
    if (name[0] != '/')
        return true;
    *is_relative = true;
    if (strcasecmp(name, "/Self") == 0)
        return true;
    const char *p = name;
    while (*p != '\0') {
        if (strncasecmp(p, "/Parent", 7) != 0 || (p[7] != '\0' && p[7] != '/'))
            return false;
        (*up)++;
        p += 7;
    }
    return *up > 0;
}

/* ---- values through paths ------------------------------------------------------------- */
static const char *seg_text(const wfl_path_seg *s, char *buf, size_t size)
{
    if (s->kind == WFL_SEG_INDEX)
        snprintf(buf, size, "[%lld]", (long long)s->index);
    else if (s->kind == WFL_SEG_KEY)
        snprintf(buf, size, "[\"%s\"]", s->name);
    else
        snprintf(buf, size, "%s", s->name);
    return buf;
}

/* One step of a read. *out is borrowed from cur or a fresh scalar in *scratch. */
static wf_status step_get(const wf_value *cur, const wfl_path_seg *s, const wf_value **out,
                          wf_value *scratch, wf_error *err)
{
    char tb[128];
    if (wf_is_null(cur))
        return wf_error_set(err, WF_E_FAULT, NULL, "null reference reading '%s'",
                            seg_text(s, tb, sizeof tb));
    wf_kind k = cur->type->kind;
    if (k == WF_K_RECORD && s->kind != WFL_SEG_INDEX) {
        *out = wf_value_record_get(cur, s->name);
        if (*out == NULL)
            return wf_error_set(err, WF_E_NAME, NULL, "record has no member '%s'", s->name);
        return WF_OK;
    }
    if (k == WF_K_LIST && s->kind == WFL_SEG_INDEX) {
        *out = s->index >= 0 ? wf_value_list_at(cur, (size_t)s->index) : NULL;
        if (*out == NULL)
            return wf_error_set(err, WF_E_RANGE, NULL, "index %lld out of range (count %zu)",
                                (long long)s->index, wf_value_list_count(cur));
        return WF_OK;
    }
    if (s->kind == WFL_SEG_MEMBER) {
        if (k == WF_K_LIST && strcmp(s->name, "Count") == 0)
            *scratch = wf_int32((int32_t)wf_value_list_count(cur));
        else if (k == WF_K_STRING && strcmp(s->name, "Length") == 0)
            *scratch = wf_int32((int32_t)wf_value_str_len(cur));
        else if (k == WF_K_EXCEPTION && strcmp(s->name, "Message") == 0) {
            if (wf_value_cstring(wf_value_exc_message(cur), scratch) != WF_OK)
                return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
        } else
            return wf_error_set(err, WF_E_NAME, NULL, "%s has no member '%s'", cur->type->name,
                                s->name);
        *out = scratch;
        return WF_OK;
    }
    return wf_error_set(err, WF_E_TYPE, NULL, "%s cannot be indexed by '%s'", cur->type->name,
                        seg_text(s, tb, sizeof tb));
}

wf_status wfl_value_path_get(const wf_value *root, const wfl_path_seg *segs, size_t count,
                             wf_value *out, wf_error *err)
{
    *out = wf_null();
    const wf_value *cur = root;
    wf_value scratch = wf_null();
    for (size_t i = 0; i < count; i++) {
        wf_value next_scratch = wf_null();
        const wf_value *next = NULL;
        wf_status rc = step_get(cur, &segs[i], &next, &next_scratch, err);
        if (rc != WF_OK) {
            wf_value_release(&scratch);
            return rc;
        }
        if (next == &next_scratch) {
            wf_value_release(&scratch);
            scratch = next_scratch;
            next = &scratch;
        }
        cur = next;
    }
    *out = wf_value_retain(cur);
    wf_value_release(&scratch);
    return WF_OK;
}

static wf_status rebuild_record(const wf_value *rec, const char *key, wf_value *child,
                                wf_value *out, wf_error *err)
{
    size_t n = wf_value_record_count(rec);
    const char **keys = wf_calloc(n + 1, sizeof *keys);
    wf_value *vals = wf_calloc(n + 1, sizeof *vals);
    wf_status rc = WF_E_NOMEM;
    if (keys != NULL && vals != NULL) {
        size_t m = 0;
        bool replaced = false;
        for (size_t i = 0; i < n; i++, m++) {
            keys[m] = wf_value_record_key(rec, i);
            bool hit = strcmp(keys[m], key) == 0;
            vals[m] = hit ? *child : *wf_value_record_at(rec, i);
            replaced |= hit;
        }
        if (!replaced) {
            keys[m] = key;
            vals[m++] = *child;
        }
        rc = wf_value_record(keys, vals, m, out);
    }
    wf_free(keys);
    wf_free(vals);
    return rc == WF_OK ? WF_OK : wf_error_set(err, rc, NULL, "out of memory");
}

static wf_status rebuild_list(const wf_value *list, size_t index, wf_value *child,
                              wf_value *out, wf_error *err)
{
    size_t n = wf_value_list_count(list);
    wf_value *vals = wf_calloc(n + 1, sizeof *vals);
    if (vals == NULL)
        return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        vals[i] = i == index ? *child : *wf_value_list_at(list, i);
    wf_status rc = wf_value_list(list->type, vals, n, out);
    wf_free(vals);
    return rc == WF_OK ? WF_OK : wf_error_set(err, rc, NULL, "out of memory");
}

wf_status wfl_value_path_set(const wf_value *root, const wfl_path_seg *segs, size_t count,
                             const wf_value *value, wf_value *new_root, wf_error *err)
{
    *new_root = wf_null();
    if (count == 0) {
        *new_root = wf_value_retain(value);
        return WF_OK;
    }
    const wfl_path_seg *s = &segs[0];
    char tb[128];
    if (wf_is_null(root))
        return wf_error_set(err, WF_E_FAULT, NULL, "null reference writing '%s'",
                            seg_text(s, tb, sizeof tb));
    wf_kind k = root->type->kind;
    wf_value child = wf_null();
    wf_status rc;
    if (k == WF_K_RECORD && s->kind != WFL_SEG_INDEX) {
        const wf_value *old = wf_value_record_get(root, s->name);
        if (old == NULL && count > 1)
            return wf_error_set(err, WF_E_NAME, NULL, "record has no member '%s'", s->name);
        wf_value none = wf_null();
        rc = wfl_value_path_set(old != NULL ? old : &none, segs + 1, count - 1, value, &child,
                                err);
        if (rc == WF_OK)
            rc = rebuild_record(root, s->name, &child, new_root, err);
    } else if (k == WF_K_LIST && s->kind == WFL_SEG_INDEX) {
        const wf_value *old = s->index >= 0 ? wf_value_list_at(root, (size_t)s->index) : NULL;
        if (old == NULL)
            return wf_error_set(err, WF_E_RANGE, NULL, "index %lld out of range (count %zu)",
                                (long long)s->index, wf_value_list_count(root));
        wf_value conv = wf_null();
        rc = wfl_value_path_set(old, segs + 1, count - 1, value, &conv, err);
        if (rc == WF_OK && count == 1 && root->type->elem != NULL)
            rc = wf_value_convert(&conv, root->type->elem, &child, err);
        else if (rc == WF_OK)
            child = wf_value_retain(&conv);
        wf_value_release(&conv);
        if (rc == WF_OK)
            rc = rebuild_list(root, (size_t)s->index, &child, new_root, err);
    } else {
        return wf_error_set(err, WF_E_TYPE, NULL, "cannot write '%s' into a %s",
                            seg_text(s, tb, sizeof tb), root->type->name);
    }
    wf_value_release(&child);
    return rc;
}

/* ---- static name resolution on the definition -------------------------------------------- */
static const wfl_node *find_below(const wfl_node *node, const char *name, size_t len)
{
    if (node->name != NULL && strlen(node->name) == len && strncmp(node->name, name, len) == 0)
        return node;
    for (size_t i = 0; i < node->child_count; i++) {
        const wfl_node *hit = find_below(node->children[i], name, len);
        if (hit != NULL)
            return hit;
    }
    return NULL;
}

const wfl_node *wfl_def_find_node(const wfl_definition *def, const char *name)
{
    if (def->by_name != NULL)
        return wf_strmap_get(def->by_name, name);
    return def->root != NULL ? find_below(def->root, name, strlen(name)) : NULL;
}

static const wfl_node *find_dotted(const wfl_node *root, const char *name)
{
    const wfl_node *cur = root;
    const char *p = name;
    while (cur != NULL && *p != '\0') {
        const char *dot = strchr(p, '.');
        size_t len = dot != NULL ? (size_t)(dot - p) : strlen(p);
        cur = find_below(cur, p, len);
        p += len + (dot != NULL);
    }
    return cur;
}

const wfl_node *wfl_def_resolve_name(const wfl_definition *def, const wfl_node *from,
                                     const char *name)
{
    bool relative = false;
    unsigned up = 0;
    if (!wfl_bind_name_steps(name, &relative, &up))
        return NULL;
    if (relative) {
        const wfl_node *n = from;
        while (n != NULL && up-- > 0)
            n = n->parent;
        return n;
    }
    if (def->by_name != NULL && strchr(name, '.') == NULL)
        return wf_strmap_get(def->by_name, name); /* names are unique: the nearest is the one */
    size_t len = strlen(name);
    for (const wfl_node *a = from; a != NULL; a = a->parent) {
        const wfl_node *hit = find_below(a, name, len);
        if (hit != NULL)
            return hit;
    }
    return strchr(name, '.') != NULL ? find_dotted(def->root, name) : NULL;
}

/* wfm_expr_bind.c — binding what names denote: keywords and literals, argument/variable
 * names (through the scope's resolver, to slots), members of typed values, the static
 * library (String., Math., Convert., DateTime., TimeSpan., CInt & co., len/str/int/decimal/now)
 * and `new`. The tables below are the whole library; see wfm_expr_lib.c for what each does. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "wfm_expr_int.h"

/* Parameter letters: 's' String, 'i' Int32, 'd' Double, 'e' the list's element type,
 * 'o' anything; a trailing '*' repeats the previous letter. Results: the same letters plus
 * 'b' Boolean. */
typedef struct member_spec {
    wf_kind recv; /* receiver kind */
    const char *name;
    uint8_t fn;      /* xfn */
    int8_t min, max; /* argument counts; -1: a property (no parentheses) */
    char ret;
    const char *params;
    int64_t param;
} member_spec;

static const member_spec members[] = {
    {WF_K_STRING, "Length", XF_LENGTH, -1, -1, 'i', "", 0},
    {WF_K_LIST, "Count", XF_COUNT, -1, -1, 'i', "", 0},
    {WF_K_EXCEPTION, "Message", XF_MESSAGE, -1, -1, 's', "", 0},
    {WF_K_TIMESPAN, "TotalMilliseconds", XF_TS_TOTAL, -1, -1, 'd', "", 1000},
    {WF_K_TIMESPAN, "TotalSeconds", XF_TS_TOTAL, -1, -1, 'd', "", 1000000},
    {WF_K_TIMESPAN, "TotalMinutes", XF_TS_TOTAL, -1, -1, 'd', "", 60000000},
    {WF_K_TIMESPAN, "TotalHours", XF_TS_TOTAL, -1, -1, 'd', "", 3600000000},
    {WF_K_TIMESPAN, "TotalDays", XF_TS_TOTAL, -1, -1, 'd', "", 86400000000},
    {WF_K_DATETIME, "Year", XF_DT_PART, -1, -1, 'i', "", 0},
    {WF_K_DATETIME, "Month", XF_DT_PART, -1, -1, 'i', "", 1},
    {WF_K_DATETIME, "Day", XF_DT_PART, -1, -1, 'i', "", 2},
    {WF_K_DATETIME, "Hour", XF_DT_PART, -1, -1, 'i', "", 3},
    {WF_K_DATETIME, "Minute", XF_DT_PART, -1, -1, 'i', "", 4},
    {WF_K_DATETIME, "Second", XF_DT_PART, -1, -1, 'i', "", 5},
    {WF_K_DATETIME, "AddMilliseconds", XF_DT_ADD, 1, 1, 'D', "d", 1000},
    {WF_K_DATETIME, "AddSeconds", XF_DT_ADD, 1, 1, 'D', "d", 1000000},
    {WF_K_DATETIME, "AddMinutes", XF_DT_ADD, 1, 1, 'D', "d", 60000000},
    {WF_K_DATETIME, "AddHours", XF_DT_ADD, 1, 1, 'D', "d", 3600000000},
    {WF_K_DATETIME, "AddDays", XF_DT_ADD, 1, 1, 'D', "d", 86400000000},
    {WF_K_TIMESPAN, "Days", XF_TS_PART, -1, -1, 'i', "", 0},
    {WF_K_TIMESPAN, "Hours", XF_TS_PART, -1, -1, 'i', "", 1},
    {WF_K_TIMESPAN, "Minutes", XF_TS_PART, -1, -1, 'i', "", 2},
    {WF_K_TIMESPAN, "Seconds", XF_TS_PART, -1, -1, 'i', "", 3},
    {WF_K_TIMESPAN, "Milliseconds", XF_TS_PART, -1, -1, 'i', "", 4},
    {WF_K_STRING, "ToUpper", XF_TOUPPER, 0, 0, 's', "", 0},
    {WF_K_STRING, "ToLower", XF_TOLOWER, 0, 0, 's', "", 0},
    {WF_K_STRING, "Trim", XF_TRIM, 0, 0, 's', "", 3},
    {WF_K_STRING, "TrimStart", XF_TRIM, 0, 0, 's', "", 1},
    {WF_K_STRING, "TrimEnd", XF_TRIM, 0, 0, 's', "", 2},
    {WF_K_STRING, "ToUpperInvariant", XF_TOUPPER, 0, 0, 's', "", 0},
    {WF_K_STRING, "ToLowerInvariant", XF_TOLOWER, 0, 0, 's', "", 0},
    {WF_K_STRING, "PadLeft", XF_PAD, 1, 1, 's', "i", 0},
    {WF_K_STRING, "PadRight", XF_PAD, 1, 1, 's', "i", 1},
    {WF_K_LIST, "IndexOf", XF_LIST_INDEXOF, 1, 1, 'i', "e", 0},
    {WF_K_STRING, "Contains", XF_STR_CONTAINS, 1, 1, 'b', "s", 0},
    {WF_K_STRING, "StartsWith", XF_STARTSWITH, 1, 1, 'b', "s", 0},
    {WF_K_STRING, "EndsWith", XF_ENDSWITH, 1, 1, 'b', "s", 0},
    {WF_K_STRING, "Substring", XF_SUBSTRING, 1, 2, 's', "ii", 0},
    {WF_K_STRING, "Replace", XF_REPLACE, 2, 2, 's', "ss", 0},
    {WF_K_STRING, "IndexOf", XF_INDEXOF, 1, 1, 'i', "s", 0},
    {WF_K_LIST, "Contains", XF_LIST_CONTAINS, 1, 1, 'b', "e", 0},
    {WF_K_RECORD, "ContainsKey", XF_CONTAINSKEY, 1, 1, 'b', "s", 0},
    /* LINQ's parameterless forms */
    {WF_K_LIST, "Count", XF_COUNT, 0, 0, 'i', "", 0},
    {WF_K_LIST, "Any", XF_LIST_ANY, 0, 0, 'b', "", 0},
    {WF_K_LIST, "First", XF_LIST_FIRST, 0, 0, 'e', "", 0},
    {WF_K_LIST, "Last", XF_LIST_FIRST, 0, 0, 'e', "", 1},
    {WF_K_LIST, "FirstOrDefault", XF_LIST_FIRST, 0, 0, 'e', "", 2},
    {WF_K_LIST, "LastOrDefault", XF_LIST_FIRST, 0, 0, 'e', "", 3},
    {WF_K_LIST, "Sum", XF_LIST_SUM, 0, 0, 'e', "", 0},
    {WF_K_LIST, "ToList", XF_LIST_SELF, 0, 0, 'l', "", 0},
    {WF_K_LIST, "ToArray", XF_LIST_SELF, 0, 0, 'l', "", 0},
};

/* Static members and global functions. kind: how the call is built. */
enum { S_FN, S_CONV, S_NOW, S_EMPTY, S_MATH, S_IF, S_CONST, S_PARSE, S_STR, S_ISNOTHING };

typedef struct static_spec {
    const char *cls; /* NULL: a global function (len, CInt, ...) */
    const char *name;
    uint8_t kind;
    uint8_t fn;
    int8_t min, max; /* -1: a property */
    char ret;
    const char *params;
    int64_t param;       /* XF_TS_FROM: microseconds per unit */
    const wf_type *conv; /* S_CONV target */
    uint8_t mode;        /* S_CONV mode */
} static_spec;

static const static_spec statics[] = {
    {"String", "Format", S_FN, XF_FORMAT, 1, WFM_EXPR_MAX_ARGS, 's', "so*", 0, NULL, 0},
    {"String", "Concat", S_FN, XF_CONCAT, 0, WFM_EXPR_MAX_ARGS, 's', "o*", 0, NULL, 0},
    {"String", "IsNullOrEmpty", S_FN, XF_ISNULLOREMPTY, 1, 1, 'b', "s", 0, NULL, 0},
    {"String", "Empty", S_EMPTY, 0, -1, -1, 's', "", 0, NULL, 0},
    {"String", "IsNullOrWhiteSpace", S_FN, XF_ISNULLORWHITESPACE, 1, 1, 'b', "s", 0, NULL, 0},
    {"String", "Join", S_FN, XF_JOIN, 2, WFM_EXPR_MAX_ARGS, 's', "so*", 0, NULL, 0},
    {"Int32", "MaxValue", S_CONST, 0, -1, -1, 0, "", INT32_MAX, &wf_type_int32, 0},
    {"Int32", "MinValue", S_CONST, 0, -1, -1, 0, "", INT32_MIN, &wf_type_int32, 0},
    {"Int64", "MaxValue", S_CONST, 0, -1, -1, 0, "", INT64_MAX, &wf_type_int64, 0},
    {"Int64", "MinValue", S_CONST, 0, -1, -1, 0, "", INT64_MIN, &wf_type_int64, 0},
    {"Int32", "Parse", S_PARSE, 0, 1, 1, 0, "", 0, &wf_type_int32, XV_CONVERT},
    {"Int64", "Parse", S_PARSE, 0, 1, 1, 0, "", 0, &wf_type_int64, XV_CONVERT},
    {"Double", "Parse", S_PARSE, 0, 1, 1, 0, "", 0, &wf_type_double, XV_CONVERT},
    {"Decimal", "Parse", S_PARSE, 0, 1, 1, 0, "", 0, &wf_type_decimal, XV_CONVERT},
    {"Boolean", "Parse", S_PARSE, 0, 1, 1, 0, "", 0, &wf_type_bool, XV_CONVERT},
    {"DateTime", "Parse", S_PARSE, 0, 1, 1, 0, "", 0, &wf_type_datetime, XV_CONVERT},
    {"TimeSpan", "Parse", S_PARSE, 0, 1, 1, 0, "", 0, &wf_type_timespan, XV_CONVERT},
    {"DateTime", "Today", S_NOW, 0, -1, -1, 0, "", 1, NULL, 0},
    {"Math", "Abs", S_MATH, XF_ABS, 1, 1, 0, "", 0, NULL, 0},
    {"Math", "Min", S_MATH, XF_MIN, 2, 2, 0, "", 0, NULL, 0},
    {"Math", "Max", S_MATH, XF_MAX, 2, 2, 0, "", 0, NULL, 0},
    {"Math", "Round", S_MATH, XF_ROUND, 1, 2, 0, "", 0, NULL, 0},
    {"Math", "Floor", S_MATH, XF_FLOOR, 1, 1, 0, "", 0, NULL, 0},
    {"Math", "Ceiling", S_MATH, XF_CEILING, 1, 1, 0, "", 0, NULL, 0},
    {"Math", "Pow", S_FN, XF_POW, 2, 2, 'd', "dd", 0, NULL, 0},
    {"Math", "Sqrt", S_FN, XF_SQRT, 1, 1, 'd', "d", 0, NULL, 0},
    /* Convert.ToX, named here by X (find_static strips the "To") */
    {"Convert", "Int32", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_int32, XV_CONVERT},
    {"Convert", "Int64", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_int64, XV_CONVERT},
    {"Convert", "Double", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_double, XV_CONVERT},
    {"Convert", "Decimal", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_decimal, XV_CONVERT},
    {"Convert", "String", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_string, XV_TEXT},
    {"Convert", "Boolean", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_bool, XV_CONVERT},
    {"DateTime", "Now", S_NOW, 0, -1, -1, 0, "", 0, NULL, 0},
    {"DateTime", "UtcNow", S_NOW, 0, -1, -1, 0, "", 0, NULL, 0},
    {"TimeSpan", "FromMilliseconds", S_FN, XF_TS_FROM, 1, 1, 't', "d", 1000, NULL, 0},
    {"TimeSpan", "FromSeconds", S_FN, XF_TS_FROM, 1, 1, 't', "d", 1000000, NULL, 0},
    {"TimeSpan", "FromMinutes", S_FN, XF_TS_FROM, 1, 1, 't', "d", 60000000, NULL, 0},
    {"TimeSpan", "FromHours", S_FN, XF_TS_FROM, 1, 1, 't', "d", 3600000000, NULL, 0},
    {"TimeSpan", "FromDays", S_FN, XF_TS_FROM, 1, 1, 't', "d", 86400000000, NULL, 0},
    {NULL, "len", S_FN, XF_LEN, 1, 1, 'i', "o", 0, NULL, 0},
    {NULL, "str", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_string, XV_TEXT},
    {NULL, "int", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_int32, XV_CONVERT},
    {NULL, "decimal", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_decimal, XV_CONVERT},
    {NULL, "now", S_NOW, 0, 0, 0, 0, "", 0, NULL, 0},
    {NULL, "CInt", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_int32, XV_CONVERT},
    {NULL, "CLng", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_int64, XV_CONVERT},
    {NULL, "CDbl", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_double, XV_CONVERT},
    {NULL, "CDec", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_decimal, XV_CONVERT},
    {NULL, "CStr", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_string, XV_TEXT},
    {NULL, "CBool", S_CONV, 0, 1, 1, 0, "", 0, &wf_type_bool, XV_CONVERT},
    {NULL, "If", S_IF, 0, 2, 3, 0, "", 0, NULL, 0},
    {"DateTime", "MinValue", S_CONST, 0, -1, -1, 0, "", WF_DATETIME_MIN_US, &wf_type_datetime, 0},
    {"DateTime", "MaxValue", S_CONST, 0, -1, -1, 0, "", WF_DATETIME_MAX_US, &wf_type_datetime, 0},
    {"TimeSpan", "Zero", S_CONST, 0, -1, -1, 0, "", 0, &wf_type_timespan, 0},
    {"String", "Compare", S_FN, XF_COMPARE, 2, 2, 'i', "ss", 0, NULL, 0},
    {NULL, "Today", S_NOW, 0, 0, 0, 0, "", 1, NULL, 0},
    /* text constants (S_STR: the text is in params); NewLine is this platform's, "\n" */
    {"Environment", "NewLine", S_STR, 0, -1, -1, 0, "\n", 0, NULL, 0},
    {NULL, "vbCrLf", S_STR, 0, -1, -1, 0, "\r\n", 0, NULL, 0},
    {NULL, "vbNewLine", S_STR, 0, -1, -1, 0, "\n", 0, NULL, 0},
    {NULL, "vbLf", S_STR, 0, -1, -1, 0, "\n", 0, NULL, 0},
    {NULL, "vbCr", S_STR, 0, -1, -1, 0, "\r", 0, NULL, 0},
    {NULL, "vbTab", S_STR, 0, -1, -1, 0, "\t", 0, NULL, 0},
    {NULL, "IsNothing", S_ISNOTHING, 0, 1, 1, 0, "", 0, NULL, 0},
};

static const char *const static_classes[] = {"String",   "Math",    "Convert",    "DateTime",
                                             "TimeSpan", "Int32",   "Int64",      "Double",
                                             "Decimal",  "Boolean", "Environment"};

static bool name_is(const char *text, uint32_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(text, word, len) == 0;
}

static const wf_type *letter_type(char c, const wf_type *elem)
{
    switch (c) {
    case 's':
        return &wf_type_string;
    case 'i':
        return &wf_type_int32;
    case 'd':
        return &wf_type_double;
    case 'b':
        return &wf_type_bool;
    case 't':
        return &wf_type_timespan;
    case 'D':
        return &wf_type_datetime;
    case 'e':
        return elem ? elem : &wf_type_object;
    default:
        return &wf_type_object;
    }
}

static char param_letter(const char *params, unsigned i)
{
    size_t n = strlen(params);
    if (n >= 2 && params[n - 1] == '*' && i >= n - 2)
        return params[n - 2];
    return i < n ? params[i] : 'o';
}

/* Check the count, convert each argument to its parameter type, build the call node. */
static xnode *make_call(xparser *p, uint8_t fn, const char *fname, int min, int max,
                        const char *params, const wf_type *elem, const wf_type *ret, xnode **args,
                        unsigned nargs, unsigned first, int64_t param, uint32_t off)
{
    unsigned given = nargs - first;
    if ((int)given < min || (int)given > max) {
        if (min == max)
            return wfm_expr__fail(p, off, WF_E_TYPE, "'%s' takes %d argument%s, not %u", fname, min,
                                  min == 1 ? "" : "s", given);
        return wfm_expr__fail(p, off, WF_E_TYPE, "'%s' takes %d to %d arguments, not %u", fname,
                              min, max, given);
    }
    char what[96];
    for (unsigned i = first; i < nargs; i++) {
        snprintf(what, sizeof what, "argument %u of '%s': ", i - first + 1, fname);
        args[i] = wfm_expr__coerce_to(p, args[i],
                                      letter_type(param_letter(params, i - first), elem), what);
        if (!args[i])
            return NULL;
    }
    xnode *n = wfm_expr__mk(p, XOP_CALL, ret, off, NULL, NULL, NULL);
    if (!n)
        return NULL;
    n->sub = fn;
    n->param = param;
    n->name = fname; /* static: a literal or a member table's name */
    n->off = nargs ? args[0]->off : off;
    if (first)
        n->flags |= XN_RECV;
    return wfm_expr__fold(p, wfm_expr__set_args(p, n, args, nargs));
}

/* ---- members of a value ------------------------------------------------------------------ */
static xnode *make_field(xparser *p, xnode *recv, const xtok *name)
{
    xnode *n = wfm_expr__mk(p, XOP_FIELD, &wf_type_object, name->off, recv, NULL, NULL);
    if (!n)
        return NULL;
    n->name = wf_arena_strndup(p->arena, p->text + name->off, name->len);
    if (!n->name)
        return wfm_expr__nomem(p);
    /* a record without that field answers Count / Keys / Values as a dictionary does */
    n->aux = p->scope->types ? wf_types_list(p->scope->types, &wf_type_string) : NULL;
    return n;
}

static xnode *make_index(xparser *p, xnode *base, xnode *index, uint32_t off);

/* With parentheses only methods match; without, a property or (VB) a method called without
 * its empty argument list: s.Trim, n.ToString (a method that needs arguments then reports
 * its argument count). Properties come first in the table. */
static const member_spec *find_member(wf_kind kind, const char *s, uint32_t len, bool parens)
{
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++)
        if ((kind == WF_K_OBJECT || members[i].recv == kind) && name_is(s, len, members[i].name) &&
            (!parens || members[i].min >= 0))
            return &members[i];
    return NULL;
}

/* Whether a.CompareTo(b) can succeed for these static types. */
static bool comparable(const wf_type *a, const wf_type *b)
{
    wf_kind ka = a->kind, kb = b->kind;
    if (ka == WF_K_OBJECT || kb == WF_K_OBJECT || kb == WF_K_NULL)
        return true;
    if (wfm_expr__is_num(a) && wfm_expr__is_num(b))
        return true;
    return ka == kb &&
           (ka == WF_K_STRING || ka == WF_K_DATETIME || ka == WF_K_TIMESPAN || ka == WF_K_BOOL);
}

static xnode *bind_member(xparser *p, xnode *recv, const xtok *name, xnode **args, unsigned nargs,
                          bool parens)
{
    const char *s = p->text + name->off;
    wf_kind kind = recv->type->kind;
    if (!parens && (kind == WF_K_RECORD || kind == WF_K_OBJECT))
        return make_field(p, recv, name);
    if (name_is(s, name->len, "CompareTo")) {
        if (nargs == 2 && !comparable(recv->type, args[1]->type))
            return wfm_expr__fail(p, args[1]->off, WF_E_TYPE, "cannot compare %s with %s",
                                  recv->type->name, args[1]->type->name);
        if (kind != WF_K_OBJECT && !comparable(recv->type, recv->type))
            return wfm_expr__fail(p, name->off, WF_E_NAME, "'%s' has no member 'CompareTo'",
                                  recv->type->name);
        return make_call(p, XF_COMPARE, "CompareTo", 1, 1, "o", NULL, &wf_type_int32, args, nargs,
                         1, 0, name->off);
    }
    if (name_is(s, name->len, "ToString")) /* on null: NullReferenceException */
        return make_call(p, XF_TOSTRING, "ToString", 0, 1, "s", NULL, &wf_type_string, args, nargs,
                         1, 0, name->off);
    if (parens && name_is(s, name->len, "Equals")) /* x.Equals(y): Equals semantics */
        return make_call(p, XF_EQUALS, "Equals", 1, 1, "o", NULL, &wf_type_bool, args, nargs, 1, 0,
                         name->off);
    if (kind == WF_K_OBJECT && name_is(s, name->len, "Contains"))
        return make_call(p, XF_DYN_CONTAINS, "Contains", 1, 1, "o", NULL, &wf_type_bool, args,
                         nargs, 1, 0, name->off);
    const member_spec *m = find_member(kind, s, name->len, parens);
    if (!m && parens && nargs == 2 && (kind == WF_K_RECORD || kind == WF_K_OBJECT)) {
        /* VB: rec.Items(0) is the field Items indexed by 0 */
        xnode *field = make_field(p, recv, name);
        return field ? make_index(p, field, args[1], name->off) : NULL;
    }
    if (!m)
        return wfm_expr__fail(p, name->off, WF_E_NAME, "'%s' has no member '%.*s'",
                              recv->type->name, (int)name->len, s);
    if (kind == WF_K_OBJECT) { /* late bound: the receiver must turn out to be the right kind */
        const wf_type *rt = m->recv == WF_K_STRING      ? &wf_type_string
                            : m->recv == WF_K_EXCEPTION ? &wf_exc_exception
                            : m->recv == WF_K_TIMESPAN  ? &wf_type_timespan
                            : m->recv == WF_K_DATETIME  ? &wf_type_datetime
                            : m->recv == WF_K_RECORD    ? &wf_type_record
                                                        : NULL;
        if (!rt)
            return wfm_expr__fail(p, name->off, WF_E_TYPE,
                                  "'%.*s' needs a typed receiver, not Object", (int)name->len, s);
        args[0] = wfm_expr__coerce(p, recv, rt);
        if (!args[0])
            return NULL;
    }
    const wf_type *elem = args[0]->type->kind == WF_K_LIST ? args[0]->type->elem : NULL;
    const wf_type *ret = m->ret == 'e'   ? elem
                         : m->ret == 'l' ? args[0]->type
                                         : letter_type(m->ret, elem);
    if (m->fn == XF_LIST_SUM && (!elem || !wfm_expr__is_num(elem)))
        return wfm_expr__fail(p, name->off, WF_E_TYPE, "'Sum' needs a list of numbers, not %s",
                              args[0]->type->name);
    return make_call(p, m->fn, m->name, m->min < 0 ? 0 : m->min, m->max < 0 ? 0 : m->max, m->params,
                     elem, ret, args, nargs, 1, m->param, name->off);
}

static xnode *make_index(xparser *p, xnode *base, xnode *index, uint32_t off)
{
    if (!base || !index)
        return NULL;
    const wf_type *bt = base->type, *t;
    if (bt->kind == WF_K_LIST) {
        index = wfm_expr__coerce_to(p, index, &wf_type_int32, "index: ");
        t = bt->elem ? bt->elem : &wf_type_object;
    } else if (bt->kind == WF_K_RECORD) {
        index = wfm_expr__coerce_to(p, index, &wf_type_string, "key: ");
        t = &wf_type_object;
    } else if (bt->kind == WF_K_OBJECT) {
        t = &wf_type_object;
    } else {
        return wfm_expr__fail(p, off, WF_E_TYPE, "cannot index a value of type %s", bt->name);
    }
    if (!index)
        return NULL;
    return wfm_expr__mk(p, XOP_INDEX, t, off, base, index, NULL);
}

static const wf_type *parse_type(xparser *p, uint32_t *name_off);

/* ---- lambdas: list.Where(x => ...), list.Any(Function(x) ...) ---------------------------- */
typedef struct lambda_ctx {
    const char *name; /* the parameter */
    size_t len;
    const wf_type *type; /* the list's element type */
    const wfm_expr_scope *outer;
} lambda_ctx;

/* Inside the body the parameter is slot 0 of a new innermost environment, so every other
 * name is one environment further up. */
static bool lambda_resolve(void *ud, const char *name, size_t len, wfm_name *out)
{
    const lambda_ctx *c = ud;
    if (len == c->len && memcmp(name, c->name, len) == 0) {
        *out = (wfm_name){c->type, 0, 0, false};
        return true;
    }
    if (!c->outer->resolve || !c->outer->resolve(c->outer->ud, name, len, out))
        return false;
    out->hops++;
    return true;
}

static bool arrow_at(const xtok *a, const xtok *b)
{
    return a->kind == TK_PUNCT && a->punct == '=' && b->kind == TK_PUNCT && b->punct == '>' &&
           b->off == a->off + 1;
}

/* With cur at '(': does a lambda follow? Function(x) ..., x => ..., (x) => ... */
static bool lambda_ahead(const xparser *p)
{
    xtok t[5];
    t[0] = wfm_expr__peek(p);
    for (int i = 1; i < 5; i++)
        t[i] = wfm_expr__lex(p->text, t[i - 1].off + t[i - 1].len, p->end);
    if (wfm_expr__tok_is(p, &t[0], "function"))
        return t[1].kind == TK_PUNCT && t[1].punct == '(' && t[2].kind == TK_ID;
    if (t[0].kind == TK_ID)
        return arrow_at(&t[1], &t[2]);
    return t[0].kind == TK_PUNCT && t[0].punct == '(' && t[1].kind == TK_ID &&
           t[2].kind == TK_PUNCT && t[2].punct == ')' && arrow_at(&t[3], &t[4]);
}

static const struct {
    const char *name;
    int which;
} lambda_methods[] = {
    {"Where", XL_WHERE},   {"Any", XL_ANY},     {"All", XL_ALL}, {"Count", XL_COUNT},
    {"Select", XL_SELECT}, {"First", XL_FIRST}, {"Sum", XL_SUM}, {"FirstOrDefault", XL_FIRST},
};

/* cur is the '(' after list.Method, with a lambda ahead. */
static xnode *parse_lambda_call(xparser *p, xnode *recv, const xtok *name)
{
    int which = -1;
    for (size_t i = 0; i < sizeof lambda_methods / sizeof lambda_methods[0]; i++)
        if (name_is(p->text + name->off, name->len, lambda_methods[i].name))
            which = lambda_methods[i].which;
    if (which < 0)
        return wfm_expr__fail(p, name->off, WF_E_NAME, "'%.*s' does not take a lambda",
                              (int)name->len, p->text + name->off);
    if (p->lambdas == WFM_EXPR_MAX_LAMBDA)
        return wfm_expr__fail(p, name->off, WF_E_LIMIT,
                              "lambdas are nested too deeply (more than %d)", WFM_EXPR_MAX_LAMBDA);
    wfm_expr__advance(p); /* ( */
    bool vb = wfm_expr__tok_is(p, &p->cur, "function");
    bool paren = vb || (p->cur.kind == TK_PUNCT && p->cur.punct == '(');
    if (vb)
        wfm_expr__advance(p);
    if (paren)
        wfm_expr__advance(p);
    xtok param = p->cur;
    if (param.kind != TK_ID)
        return wfm_expr__unexpected(p);
    wfm_expr__advance(p);
    if (vb && wfm_expr__tok_is(p, &p->cur, "as")) { /* Function(x As String): the type is known */
        wfm_expr__advance(p);
        uint32_t toff;
        if (!parse_type(p, &toff))
            return NULL;
    }
    if (paren && !wfm_expr__expect(p, ')'))
        return NULL;
    if (!vb) { /* => */
        wfm_expr__advance(p);
        wfm_expr__advance(p);
    }
    const wf_type *elem = recv->type->elem ? recv->type->elem : &wf_type_object;
    lambda_ctx ctx = {p->text + param.off, param.len, elem, p->scope};
    wfm_expr_scope inner = {lambda_resolve, &ctx, p->scope->types};
    const wfm_expr_scope *saved = p->scope;
    p->scope = &inner;
    p->lambdas++;
    xnode *body = wfm_expr__parse_expr(p);
    p->lambdas--;
    p->scope = saved;
    if (!body || !wfm_expr__expect(p, ')'))
        return NULL;
    const wf_type *t = &wf_type_bool, *aux = NULL;
    if (which == XL_SELECT) {
        const wf_type *bt = body->type->kind == WF_K_NULL ? &wf_type_object : body->type;
        if (!p->scope->types)
            return wfm_expr__fail(p, name->off, WF_E_TYPE, "'Select' needs the scope's type table");
        if (!(t = aux = wf_types_list(p->scope->types, bt)))
            return wfm_expr__nomem(p);
        if (!(body = wfm_expr__coerce(p, body, bt)))
            return NULL;
    } else if (which == XL_SUM) {
        if (!wfm_expr__is_num(body->type))
            return wfm_expr__fail(p, body->off, WF_E_TYPE,
                                  "the lambda of 'Sum' must give a number, not %s",
                                  body->type->name);
        t = body->type;
    } else {
        body = wfm_expr__coerce_to(p, body, &wf_type_bool, "lambda: ");
        if (!body)
            return NULL;
        t = which == XL_WHERE   ? recv->type
            : which == XL_COUNT ? &wf_type_int32
            : which == XL_FIRST ? elem
                                : &wf_type_bool;
    }
    xnode *n = wfm_expr__mk(p, XOP_LAMBDA, t, name->off, recv, body, NULL);
    if (n) {
        n->sub = (uint8_t)which;
        n->aux = aux;
        n->param = name_is(p->text + name->off, name->len, "FirstOrDefault");
    }
    return n;
}

static bool vb_indexable(const xnode *n)
{
    wf_kind k = n->type->kind;
    return k == WF_K_LIST || k == WF_K_RECORD || k == WF_K_OBJECT;
}

xnode *wfm_expr__parse_postfix(xparser *p)
{
    xnode *n = wfm_expr__parse_primary(p);
    while (n) {
        if (p->cur.kind == TK_PUNCT && p->cur.punct == '.') {
            wfm_expr__advance(p);
            xtok name = p->cur;
            if (name.kind != TK_ID)
                return wfm_expr__unexpected(p);
            wfm_expr__advance(p);
            xnode *args[WFM_EXPR_MAX_ARGS + 1] = {n};
            unsigned nargs = 0;
            bool parens = p->cur.kind == TK_PUNCT && p->cur.punct == '(';
            if (parens && n->type->kind == WF_K_LIST && lambda_ahead(p)) {
                n = parse_lambda_call(p, n, &name);
                continue;
            }
            if (parens && !wfm_expr__parse_args(p, args + 1, &nargs, WFM_EXPR_MAX_ARGS))
                return NULL;
            n = bind_member(p, n, &name, args, nargs + 1, parens);
        } else if (p->cur.kind == TK_PUNCT &&
                   (p->cur.punct == '[' || (p->cur.punct == '(' && vb_indexable(n)))) {
            uint32_t off = p->cur.off; /* list[i], rec["k"]; VB writes list(i) */
            int close = p->cur.punct == '[' ? ']' : ')';
            wfm_expr__advance(p);
            xnode *index = wfm_expr__parse_expr(p);
            if (!index || !wfm_expr__expect(p, close))
                return NULL;
            n = make_index(p, n, index, off);
        } else {
            break;
        }
    }
    return n;
}

/* ---- the static library ------------------------------------------------------------------ */
static const wf_type *math_type(const wf_type *t, bool keep_ints)
{
    if (t->kind == WF_K_DECIMAL || t->kind == WF_K_DOUBLE)
        return t;
    if (keep_ints && (t->kind == WF_K_INT32 || t->kind == WF_K_INT64))
        return t;
    return &wf_type_double;
}

static xnode *make_math(xparser *p, const static_spec *s, xnode **args, unsigned nargs,
                        uint32_t off)
{
    for (unsigned i = 0; i < nargs; i++)
        if (!wfm_expr__is_num(args[i]->type) && args[i]->type->kind != WF_K_OBJECT)
            return wfm_expr__fail(p, args[i]->off, WF_E_TYPE,
                                  "argument %u of 'Math.%s' must be numeric, not %s", i + 1,
                                  s->name, args[i]->type->name);
    const wf_type *t;
    if (s->fn == XF_MIN || s->fn == XF_MAX) {
        if (nargs != 2)
            return wfm_expr__fail(p, off, WF_E_TYPE, "'%s' takes 2 arguments, not %u", s->name,
                                  nargs);
        t = wfm_expr__promote(math_type(args[0]->type, true), math_type(args[1]->type, true));
        if (!t)
            return wfm_expr__fail(p, off, WF_E_TYPE, "'Math.%s' cannot mix %s and %s", s->name,
                                  args[0]->type->name, args[1]->type->name);
    } else {
        t = nargs ? math_type(args[0]->type, s->fn == XF_ABS) : &wf_type_double;
    }
    const wf_type *tt[2] = {t, s->fn == XF_ROUND ? &wf_type_int32 : t};
    if ((int)nargs >= s->min && (int)nargs <= s->max)
        for (unsigned i = 0; i < nargs; i++)
            if (!(args[i] = wfm_expr__coerce(p, args[i], tt[i])))
                return NULL;
    return make_call(p, s->fn, s->name, s->min, s->max, "oo", NULL, t, args, nargs, 0, 0, off);
}

static xnode *bind_static(xparser *p, const static_spec *s, xnode **args, unsigned nargs,
                          uint32_t off)
{
    switch (s->kind) {
    case S_CONV:
        if (nargs != 1)
            return wfm_expr__fail(p, off, WF_E_TYPE, "'%s%s' takes 1 argument, not %u",
                                  s->cls ? "To" : "", s->name, nargs);
        return wfm_expr__convert(p, args[0], s->conv, s->mode, off);
    case S_NOW: {
        if (nargs)
            return wfm_expr__fail(p, off, WF_E_TYPE, "'%s' takes no arguments", s->name);
        xnode *n = wfm_expr__mk(p, XOP_NOW, &wf_type_datetime, off, NULL, NULL, NULL);
        if (n) {
            n->flags = 0;
            n->param = s->param;
        }
        return n;
    }
    case S_CONST: {
        xnode *n = wfm_expr__mk(p, XOP_CONST, s->conv, off, NULL, NULL, NULL);
        if (n) {
            n->k.type = s->conv;
            if (s->conv->kind == WF_K_INT32)
                n->k.u.i32 = (int32_t)s->param;
            else
                n->k.u.i64 = s->param;
        }
        return n;
    }
    case S_PARSE:
        if (nargs != 1)
            return wfm_expr__fail(p, off, WF_E_TYPE, "'%s' takes 1 argument, not %u", s->name,
                                  nargs);
        args[0] = wfm_expr__coerce_to(p, args[0], &wf_type_string, "argument 1 of 'Parse': ");
        return wfm_expr__convert(p, args[0], s->conv, s->mode, off);
    case S_EMPTY:
    case S_STR: {
        const char *text = s->kind == S_STR ? s->params : "";
        xnode *n = wfm_expr__mk(p, XOP_CONST, &wf_type_string, off, NULL, NULL, NULL);
        if (n && wf_value_string_static(p->arena, text, strlen(text), &n->k) != WF_OK)
            return wfm_expr__nomem(p);
        return n;
    }
    case S_ISNOTHING: /* VB's IsNothing(x): x Is Nothing */
        if (nargs != 1)
            return wfm_expr__fail(p, off, WF_E_TYPE, "'IsNothing' takes 1 argument, not %u", nargs);
        return wfm_expr__make_is(p, args[0], &wf_type_object, true, off);
    case S_MATH:
        return make_math(p, s, args, nargs, off);
    case S_IF: /* If(c, a, b) is ?:, If(a, b) is ?? */
        if (nargs == 2)
            return wfm_expr__make_coalesce(p, args[0], args[1], off);
        if (nargs != 3)
            return wfm_expr__fail(p, off, WF_E_TYPE, "'If' takes 2 or 3 arguments, not %u", nargs);
        return wfm_expr__make_cond(p, args[0], args[1], args[2], off);
    default:
        return make_call(p, s->fn, s->name, s->min, s->max, s->params, NULL,
                         letter_type(s->ret, NULL), args, nargs, 0, s->param, off);
    }
}

static const static_spec *find_static(const char *cls, const char *s, uint32_t len)
{
    if (cls && strcmp(cls, "Convert") == 0) {
        if (len < 2 || strncasecmp(s, "To", 2) != 0)
            return NULL;
        s += 2;
        len -= 2;
    }
    for (size_t i = 0; i < sizeof statics / sizeof statics[0]; i++) {
        const static_spec *st = &statics[i];
        if ((cls == NULL) != (st->cls == NULL) || (cls && strcmp(cls, st->cls) != 0))
            continue;
        if (name_is(s, len, st->name))
            return st;
    }
    return NULL;
}

/* cur is the member name after "Class."; parse optional arguments and bind. */
static xnode *parse_static_call(xparser *p, const char *cls, const xtok *name)
{
    const char *s = p->text + name->off;
    const static_spec *st = find_static(cls, s, name->len);
    if (!st) {
        if (cls)
            return wfm_expr__fail(p, name->off, WF_E_NAME, "'%s' has no member '%.*s'", cls,
                                  (int)name->len, s);
        return wfm_expr__fail(p, name->off, WF_E_NAME, "unknown function '%.*s'", (int)name->len,
                              s);
    }
    xnode *args[WFM_EXPR_MAX_ARGS];
    unsigned nargs = 0;
    bool parens = p->cur.kind == TK_PUNCT && p->cur.punct == '(';
    if (st->min < 0 && parens)
        return wfm_expr__fail(p, p->cur.off, WF_E_TYPE, "'%s' is a property, not a method",
                              st->name);
    if (st->min >= 0 && !parens)
        return wfm_expr__fail(p, p->cur.off, WF_E_SYNTAX, "expected '(' after '%s'", st->name);
    if (parens && !wfm_expr__parse_args(p, args, &nargs, WFM_EXPR_MAX_ARGS))
        return NULL;
    return bind_static(p, st, args, nargs, name->off);
}

/* ---- new ---------------------------------------------------------------------------- */
static const wf_type *parse_type_base(xparser *p, uint32_t *name_off);

static bool punct_is(const xtok *t, int c)
{
    return t->kind == TK_PUNCT && t->punct == c;
}

/* A type name, then array suffixes: C#'s T[] anywhere, VB's T() where `in_new` is false
 * (CType(x, String()), List(Of String())) or when '{' follows (New String() {...}). Arrays
 * are List(T) values. */
static const wf_type *parse_type_ex(xparser *p, uint32_t *name_off, bool in_new)
{
    const wf_type *t = parse_type_base(p, name_off);
    while (t) {
        xtok open = p->cur, close = wfm_expr__peek(p);
        bool c_array = punct_is(&open, '[') && punct_is(&close, ']');
        bool vb_array = punct_is(&open, '(') && punct_is(&close, ')');
        if (vb_array && in_new && (t->kind == WF_K_LIST || t->kind == WF_K_RECORD))
            vb_array = false; /* new List<int>() {1, 2} */
        if (vb_array && in_new) {
            xtok after = wfm_expr__lex(p->text, close.off + close.len, p->end);
            vb_array = punct_is(&after, '{');
        }
        if (!c_array && !vb_array)
            break;
        if (!p->scope->types) {
            wfm_expr__fail(p, open.off, WF_E_TYPE, "array types need the scope's type table");
            return NULL;
        }
        wfm_expr__advance(p);
        wfm_expr__advance(p);
        t = wf_types_list(p->scope->types, t);
        if (!t)
            wfm_expr__nomem(p);
    }
    return t;
}

static const wf_type *parse_type(xparser *p, uint32_t *name_off)
{
    return parse_type_ex(p, name_off, false);
}

/* Dictionary<K, V> / Dictionary(Of K, V) after its name: a Record, whose keys are Strings. */
static const wf_type *parse_dict_type(xparser *p, const xtok *first)
{
    bool angle = punct_is(&p->cur, '<');
    xtok of = wfm_expr__peek(p);
    bool vb = punct_is(&p->cur, '(') && wfm_expr__tok_is(p, &of, "of");
    if (!angle && !vb) {
        wfm_expr__fail(p, p->cur.off, WF_E_SYNTAX, "expected '<' after 'Dictionary'");
        return NULL;
    }
    wfm_expr__advance(p);
    if (vb)
        wfm_expr__advance(p);
    uint32_t koff, voff;
    const wf_type *k = parse_type(p, &koff);
    if (!k || !wfm_expr__expect(p, ','))
        return NULL;
    const wf_type *v = parse_type(p, &voff);
    if (!v || !wfm_expr__expect(p, angle ? '>' : ')'))
        return NULL;
    if (k->kind != WF_K_STRING) {
        wfm_expr__fail(p, koff, WF_E_TYPE, "dictionary keys must be String, not %s", k->name);
        return NULL;
    }
    (void)first;
    return &wf_type_record;
}

/* A type name at cur: NAME ((':' | '.') NAME)*, with List<T> / List(Of T) generics. */
static const wf_type *parse_type_base(xparser *p, uint32_t *name_off)
{
    xtok first = p->cur;
    *name_off = first.off;
    if (first.kind != TK_ID) {
        wfm_expr__unexpected(p);
        return NULL;
    }
    xtok last = first;
    wfm_expr__advance(p);
    while (p->cur.kind == TK_PUNCT && (p->cur.punct == '.' || p->cur.punct == ':')) {
        xtok next = wfm_expr__peek(p);
        if (next.kind != TK_ID)
            break;
        wfm_expr__advance(p);
        last = p->cur;
        wfm_expr__advance(p);
    }
    if (name_is(p->text + last.off, last.len, "Dictionary"))
        return parse_dict_type(p, &first);
    if (name_is(p->text + last.off, last.len, "List")) {
        bool angle = p->cur.kind == TK_PUNCT && p->cur.punct == '<';
        xtok of = wfm_expr__peek(p);
        bool vb = p->cur.kind == TK_PUNCT && p->cur.punct == '(' && wfm_expr__tok_is(p, &of, "of");
        if (!angle && !vb) {
            wfm_expr__fail(p, p->cur.off, WF_E_SYNTAX, "expected '<' after 'List'");
            return NULL;
        }
        wfm_expr__advance(p);
        if (vb)
            wfm_expr__advance(p);
        uint32_t eoff;
        const wf_type *elem = parse_type(p, &eoff);
        if (!elem || !wfm_expr__expect(p, angle ? '>' : ')'))
            return NULL;
        if (!p->scope->types) {
            wfm_expr__fail(p, first.off, WF_E_TYPE, "list types need the scope's type table");
            return NULL;
        }
        const wf_type *t = wf_types_list(p->scope->types, elem);
        if (!t)
            wfm_expr__nomem(p);
        return t;
    }
    const wf_type *t = wfm_expr__find_type(p, p->text + first.off, last.off + last.len - first.off);
    if (!t)
        wfm_expr__fail(p, first.off, WF_E_NAME, "unknown type '%.*s'",
                       (int)(last.off + last.len - first.off), p->text + first.off);
    return t;
}

static xnode *build_items(xparser *p, int op, const wf_type *t, xnode **items, unsigned count,
                          unsigned param, uint32_t off);

static xnode *parse_list_init(xparser *p, const wf_type *lt, uint32_t off)
{
    enum { MAX_ITEMS = 64 };
    xnode *items[MAX_ITEMS];
    unsigned count = 0;
    if (p->cur.kind == TK_PUNCT && p->cur.punct == '(') {
        wfm_expr__advance(p);
        if (!(p->cur.kind == TK_PUNCT && p->cur.punct == ')')) {
            /* new List<T>(capacity) (ignored) or new List<T>(items) (a copy: the list itself,
             * values being immutable) */
            xnode *arg = wfm_expr__parse_expr(p);
            if (!arg || !wfm_expr__expect(p, ')'))
                return NULL;
            wf_kind k = arg->type->kind;
            if (k != WF_K_INT32 && k != WF_K_INT64) {
                if (arg->type != lt && k != WF_K_OBJECT && !(arg->flags & XN_LITERAL))
                    return wfm_expr__fail(p, arg->off, WF_E_TYPE, "cannot convert %s to %s",
                                          arg->type->name, lt->name);
                return wfm_expr__coerce_to(p, arg, lt, "");
            }
        } else {
            wfm_expr__advance(p);
        }
    }
    if (wfm_expr__tok_is(p, &p->cur, "from"))
        wfm_expr__advance(p);
    if (p->cur.kind == TK_PUNCT && p->cur.punct == '{') {
        wfm_expr__advance(p);
        while (!(p->cur.kind == TK_PUNCT && p->cur.punct == '}')) {
            if (count == MAX_ITEMS)
                return wfm_expr__fail(p, p->cur.off, WF_E_LIMIT,
                                      "too many list items (more than %d)", MAX_ITEMS);
            xnode *it = wfm_expr__coerce_to(p, wfm_expr__parse_expr(p), lt->elem, "list item: ");
            if (!it)
                return NULL;
            items[count++] = it;
            if (p->cur.kind == TK_PUNCT && p->cur.punct == ',')
                wfm_expr__advance(p);
            else if (!(p->cur.kind == TK_PUNCT && p->cur.punct == '}'))
                return wfm_expr__unexpected(p);
        }
        wfm_expr__advance(p);
    }
    return build_items(p, XOP_NEW_LIST, lt, items, count, count, off);
}

/* A list or record node over items (more than the call limit, so set_args is not used). */
static xnode *build_items(xparser *p, int op, const wf_type *t, xnode **items, unsigned count,
                          unsigned param, uint32_t off)
{
    xnode *n = wfm_expr__mk(p, op, t, off, NULL, NULL, NULL);
    if (!n)
        return NULL;
    n->args = count ? wf_arena_alloc(p->arena, count * sizeof *n->args) : NULL;
    if (count && !n->args)
        return wfm_expr__nomem(p);
    if (count)
        memcpy(n->args, items, count * sizeof *items);
    n->nargs = 0;
    n->param = param;
    for (unsigned i = 0; i < count; i++) {
        if (items[i]->depth >= n->depth)
            n->depth = (uint16_t)(items[i]->depth + 1);
        if (!(items[i]->flags & XN_PURE))
            n->flags &= (uint8_t)~XN_PURE;
    }
    if (n->depth > WFM_EXPR_MAX_DEPTH)
        return wfm_expr__fail(p, off, WF_E_LIMIT, "expression is too complex");
    return n;
}

enum { MAX_INIT_ITEMS = 64 };

/* The element type of an array literal: the items' common type (numbers promote), else
 * Object (as VB without Option Strict); Object for {} and for all-null items. */
static const wf_type *infer_elem(xnode **items, unsigned count)
{
    const wf_type *t = NULL;
    bool nulls = false;
    for (unsigned i = 0; i < count; i++) {
        const wf_type *it = items[i]->type;
        if (it->kind == WF_K_NULL) {
            nulls = true;
            continue;
        }
        if (!t || t == it)
            t = it;
        else if (wfm_expr__is_num(t) && wfm_expr__is_num(it) && wfm_expr__promote(t, it))
            t = wfm_expr__promote(t, it);
        else
            return &wf_type_object;
    }
    if (!t)
        return &wf_type_object;
    wf_kind k = t->kind;
    if (nulls && k != WF_K_STRING && k != WF_K_LIST && k != WF_K_RECORD && k != WF_K_EXCEPTION)
        return &wf_type_object;
    return t;
}

/* {a, b, ...} with cur at '{' (VB's array literal, C#'s new[] {...}): List(common type). */
xnode *wfm_expr__parse_array(xparser *p)
{
    uint32_t off = p->cur.off;
    xnode *items[MAX_INIT_ITEMS];
    unsigned count = 0;
    wfm_expr__advance(p);
    while (!punct_is(&p->cur, '}')) {
        if (count == MAX_INIT_ITEMS)
            return wfm_expr__fail(p, p->cur.off, WF_E_LIMIT, "too many array items (more than %d)",
                                  MAX_INIT_ITEMS);
        xnode *it = wfm_expr__parse_expr(p);
        if (!it)
            return NULL;
        items[count++] = it;
        if (punct_is(&p->cur, ','))
            wfm_expr__advance(p);
        else if (!punct_is(&p->cur, '}'))
            return wfm_expr__unexpected(p);
    }
    wfm_expr__advance(p);
    if (!p->scope->types)
        return wfm_expr__fail(p, off, WF_E_TYPE, "array literals need the scope's type table");
    const wf_type *elem = infer_elem(items, count);
    const wf_type *lt = wf_types_list(p->scope->types, elem);
    if (!lt)
        return wfm_expr__nomem(p);
    for (unsigned i = 0; i < count; i++)
        if (!(items[i] = wfm_expr__coerce(p, items[i], elem)))
            return NULL;
    xnode *n = build_items(p, XOP_NEW_LIST, lt, items, count, count, off);
    if (n)
        n->flags |= XN_LITERAL;
    return n;
}

/* After `new Dictionary<String, V>`: optional "()", then VB's From or C#'s initialiser
 * {{k, v}, ...}. Keys convert to String, values are kept as they are (Object). */
static xnode *parse_dict_init(xparser *p, uint32_t off)
{
    xnode *items[2 * MAX_INIT_ITEMS];
    unsigned count = 0;
    if (punct_is(&p->cur, '(')) {
        wfm_expr__advance(p);
        if (!wfm_expr__expect(p, ')'))
            return NULL;
    }
    bool from = wfm_expr__tok_is(p, &p->cur, "from");
    if (from)
        wfm_expr__advance(p);
    if (from || punct_is(&p->cur, '{')) {
        if (!wfm_expr__expect(p, '{'))
            return NULL;
        while (!punct_is(&p->cur, '}')) {
            if (count == 2 * MAX_INIT_ITEMS)
                return wfm_expr__fail(p, p->cur.off, WF_E_LIMIT,
                                      "too many dictionary items (more than %d)", MAX_INIT_ITEMS);
            if (!wfm_expr__expect(p, '{'))
                return NULL;
            xnode *k = wfm_expr__coerce_to(p, wfm_expr__parse_expr(p), &wf_type_string,
                                           "dictionary key: ");
            if (!k || !wfm_expr__expect(p, ','))
                return NULL;
            xnode *v = wfm_expr__parse_expr(p);
            if (!v || !wfm_expr__expect(p, '}'))
                return NULL;
            items[count++] = k;
            items[count++] = v;
            if (punct_is(&p->cur, ','))
                wfm_expr__advance(p);
            else if (!punct_is(&p->cur, '}'))
                return wfm_expr__unexpected(p);
        }
        wfm_expr__advance(p);
    }
    return build_items(p, XOP_NEW_REC, &wf_type_record, items, count, count / 2, off);
}

/* new Random([seed]).Next() / .Next(max) / .Next(min, max) / .NextDouble(): the only uses
 * of a Random object, so it is bound as one call. Not constant (see XF_RANDOM). */
static xnode *parse_random(xparser *p, uint32_t off)
{
    xnode *args[WFM_EXPR_MAX_ARGS + 1];
    unsigned nseed = 0, nargs = 0;
    if (punct_is(&p->cur, '(') && !wfm_expr__parse_args(p, args, &nseed, 1))
        return NULL;
    if (nseed && !(args[0] = wfm_expr__coerce_to(p, args[0], &wf_type_int32, "seed: ")))
        return NULL;
    if (!punct_is(&p->cur, '.'))
        return wfm_expr__fail(p, p->cur.off, WF_E_SYNTAX,
                              "expected '.Next(...)' or '.NextDouble()' after 'new Random()'");
    wfm_expr__advance(p);
    xtok name = p->cur;
    bool dbl = wfm_expr__tok_is(p, &name, "NextDouble");
    if (!dbl && !wfm_expr__tok_is(p, &name, "Next"))
        return wfm_expr__fail(p, name.off, WF_E_NAME, "'Random' has no member '%.*s'",
                              (int)name.len, p->text + name.off);
    wfm_expr__advance(p);
    if (punct_is(&p->cur, '(') &&
        !wfm_expr__parse_args(p, args + nseed, &nargs, WFM_EXPR_MAX_ARGS - 1))
        return NULL;
    xnode *n = make_call(p, XF_RANDOM, dbl ? "NextDouble" : "Next", 0, dbl ? 0 : 2, "ii", NULL,
                         dbl ? &wf_type_double : &wf_type_int32, args, nseed + nargs, nseed,
                         (dbl ? XR_DOUBLE : (int64_t)nargs) | (nseed ? XR_SEED : 0), name.off);
    if (n) {
        n->flags = (uint8_t)(n->flags & ~(XN_PURE | XN_RECV));
        n->off = off;
    }
    return n;
}

/* Whether cur starts the type name Random or System.Random. */
static bool random_ahead(xparser *p)
{
    xtok t = p->cur;
    if (wfm_expr__tok_is(p, &t, "System")) {
        xtok dot = wfm_expr__peek(p);
        if (!punct_is(&dot, '.'))
            return false;
        t = wfm_expr__lex(p->text, dot.off + dot.len, p->end);
    }
    if (!wfm_expr__tok_is(p, &t, "Random"))
        return false;
    while (p->cur.off < t.off)
        wfm_expr__advance(p);
    wfm_expr__advance(p);
    return true;
}

static xnode *parse_new(xparser *p)
{
    uint32_t off = p->cur.off;
    wfm_expr__advance(p);
    if (punct_is(&p->cur, '[')) { /* C#'s new[] {...} */
        xtok close = wfm_expr__peek(p);
        if (!punct_is(&close, ']'))
            return wfm_expr__unexpected(p);
        wfm_expr__advance(p);
        wfm_expr__advance(p);
        if (!punct_is(&p->cur, '{'))
            return wfm_expr__unexpected(p);
        xnode *n = wfm_expr__parse_array(p);
        if (n)
            n->off = off;
        return n;
    }
    if (random_ahead(p))
        return parse_random(p, off);
    uint32_t toff;
    const wf_type *t = parse_type_ex(p, &toff, true);
    if (!t)
        return NULL;
    if (t->kind == WF_K_LIST)
        return parse_list_init(p, t, off);
    if (t->kind == WF_K_RECORD)
        return parse_dict_init(p, off);
    if (t->kind != WF_K_EXCEPTION && t->kind != WF_K_DATETIME && t->kind != WF_K_TIMESPAN)
        return wfm_expr__fail(p, toff, WF_E_TYPE, "cannot create a %s with 'new'", t->name);
    xnode *args[WFM_EXPR_MAX_ARGS];
    unsigned nargs = 0;
    if (!wfm_expr__parse_args(p, args, &nargs, WFM_EXPR_MAX_ARGS))
        return NULL;
    if (t->kind == WF_K_DATETIME) /* new DateTime(y, m, d[, h, mi, s]) */
        return make_call(p, XF_DT_NEW, "DateTime", nargs == 6 ? 6 : 3, nargs == 6 ? 6 : 3, "i*",
                         NULL, t, args, nargs, 0, 0, toff);
    if (t->kind == WF_K_TIMESPAN) /* new TimeSpan(h, m, s) / (d, h, m, s[, ms]) */
        return make_call(p, XF_TS_NEW, "TimeSpan", nargs <= 3 ? 3 : 4, nargs <= 3 ? 3 : 5, "i*",
                         NULL, t, args, nargs, 0, 0, toff);
    if (nargs > 1)
        return wfm_expr__fail(p, args[1]->off, WF_E_TYPE,
                              "'new %s' takes a message only (inner exceptions are not supported)",
                              t->name);
    if (nargs == 1 &&
        !(args[0] = wfm_expr__coerce_to(p, args[0], &wf_type_string, "exception message: ")))
        return NULL;
    xnode *n = wfm_expr__mk(p, XOP_NEW_EXC, t, off, NULL, NULL, NULL);
    if (n)
        n->aux = t;
    return wfm_expr__set_args(p, n, args, nargs);
}

/* VB CType(x, T) converts as CInt & co. do; DirectCast(x, T) as a C# cast. cur is '('. */
static xnode *parse_vb_cast(xparser *p, const xtok *name)
{
    wfm_expr__advance(p);
    xnode *x = wfm_expr__parse_expr(p);
    if (!x || !wfm_expr__expect(p, ','))
        return NULL;
    uint32_t toff;
    const wf_type *t = parse_type(p, &toff);
    if (!t || !wfm_expr__expect(p, ')'))
        return NULL;
    bool ctype = name_is(p->text + name->off, name->len, "CType");
    return wfm_expr__convert(
        p, x, t, ctype ? (t->kind == WF_K_STRING ? XV_TEXT : XV_CONVERT) : XV_CAST, name->off);
}

/* ---- interpolated strings ------------------------------------------------------------ */
static xnode *string_const(xparser *p, const char *s, size_t len, uint32_t off)
{
    xnode *n = wfm_expr__mk(p, XOP_CONST, &wf_type_string, off, NULL, NULL, NULL);
    if (n && wf_value_string_static(p->arena, s, len, &n->k) != WF_OK)
        return wfm_expr__nomem(p);
    return n;
}

static xnode *concat_part(xparser *p, xnode *acc, xnode *part, uint32_t off)
{
    if (!acc || !part)
        return NULL;
    return wfm_expr__fold(p, wfm_expr__mk(p, XOP_CONCAT, &wf_type_string, off, acc, part, NULL));
}

/* Where a hole's expression ends (a top-level ',' or ':' starts alignment or format) and
 * where the hole ends ('}'), found with the lexer so that strings and brackets nest. */
static uint32_t hole_split(const xparser *p, uint32_t from, uint32_t limit, uint32_t *close)
{
    int depth = 0;
    uint32_t split = 0;
    xtok t = wfm_expr__lex(p->text, from, limit);
    for (; t.kind != TK_EOF; t = wfm_expr__lex(p->text, t.off + t.len, limit)) {
        if (t.kind == TK_ERR) { /* let the hole's parse report it */
            *close = limit;
            return t.off + t.len;
        }
        if (t.kind != TK_PUNCT)
            continue;
        if (t.punct == '(' || t.punct == '[' || t.punct == '{')
            depth++;
        else if ((t.punct == ')' || t.punct == ']') && depth > 0)
            depth--;
        else if (t.punct == '}' && depth-- == 0)
            break;
        else if ((t.punct == ',' || t.punct == ':') && depth == 0 && !split)
            split = t.off;
    }
    *close = t.off;
    return split ? split : t.off;
}

/* One hole: parse [from, split) as an expression; with a format, String.Format("{0:fmt}", x). */
static xnode *parse_hole(xparser *p, uint32_t from, uint32_t split, uint32_t close)
{
    uint32_t saved_end = p->end;
    bool saved_bracketed = p->bracketed;
    xtok saved_cur = p->cur;
    p->end = split;
    p->bracketed = false;
    p->cur = wfm_expr__lex(p->text, from, split);
    xnode *x = wfm_expr__parse_expr(p);
    if (x && p->cur.kind != TK_EOF)
        x = wfm_expr__unexpected(p);
    p->end = saved_end;
    p->bracketed = saved_bracketed;
    p->cur = saved_cur;
    if (!x || split == close || p->text[split] != ':')
        return x;
    char fmt[80];
    int n = snprintf(fmt, sizeof fmt, "{0:%.*s}", (int)(close - split - 1), p->text + split + 1);
    if (n < 0 || (size_t)n >= sizeof fmt)
        return wfm_expr__fail(p, split, WF_E_LIMIT, "format specifier is too long");
    xnode *args[2] = {string_const(p, fmt, (size_t)n, split), x};
    if (!args[0])
        return NULL;
    xnode *call = wfm_expr__mk(p, XOP_CALL, &wf_type_string, x->off, NULL, NULL, NULL);
    if (call)
        call->sub = XF_FORMAT;
    return wfm_expr__fold(p, wfm_expr__set_args(p, call, args, 2));
}

/* Literal text up to the next hole: {{ and }} are braces, escapes as in strings. */
static uint32_t literal_end(const char *text, uint32_t i, uint32_t end)
{
    while (i < end) {
        if (text[i] == '\\')
            i += text[i + 1] == 'u' ? 6 : 2;
        else if ((text[i] == '{' || text[i] == '}') && i + 1 < end && text[i + 1] == text[i])
            i += 2;
        else if (text[i] == '{')
            return i;
        else
            i++;
    }
    return end;
}

xnode *wfm_expr__parse_interp(xparser *p)
{
    xtok t = p->cur;
    uint32_t i = t.off + 2, end = t.off + t.len - 1; /* between $" and " */
    xnode *acc = string_const(p, "", 0, t.off);
    while (acc && i < end) {
        uint32_t j = literal_end(p->text, i, end);
        if (j > i) {
            wf_buf buf;
            wf_buf_init(&buf);
            bool ok = wfm_expr__decode(p->text, i, j, true, &buf);
            xnode *lit = ok ? string_const(p, buf.data, buf.len, i) : wfm_expr__nomem(p);
            wf_buf_fini(&buf);
            acc = concat_part(p, acc, lit, t.off);
        }
        if (!acc || j >= end)
            break;
        uint32_t close, split = hole_split(p, j + 1, end, &close);
        acc = concat_part(p, acc, parse_hole(p, j + 1, split, close), t.off);
        i = close + 1;
    }
    if (acc) {
        wfm_expr__advance(p);
        acc->off = t.off;
    }
    return acc;
}

/* ---- names -------------------------------------------------------------------------- */
static const char *static_class(const xparser *p, const xtok *t)
{
    if (name_is(p->text + t->off, t->len, "Date")) /* VB's Date.Now */
        return "DateTime";
    if (name_is(p->text + t->off, t->len, "Integer")) /* VB's Integer.MaxValue, .Parse */
        return "Int32";
    if (name_is(p->text + t->off, t->len, "Long"))
        return "Int64";
    for (size_t i = 0; i < sizeof static_classes / sizeof static_classes[0]; i++)
        if (name_is(p->text + t->off, t->len, static_classes[i]))
            return static_classes[i];
    return NULL;
}

static xnode *make_slot(xparser *p, const xtok *t, const wfm_name *nm)
{
    xnode *n =
        wfm_expr__mk(p, XOP_SLOT, nm->type ? nm->type : &wf_type_object, t->off, NULL, NULL, NULL);
    if (!n)
        return NULL;
    n->flags = nm->writable ? XN_WRITABLE : 0;
    n->hops = nm->hops;
    n->index = nm->index;
    return n;
}

static xnode *parse_typeof(xparser *p)
{
    uint32_t off = p->cur.off;
    wfm_expr__advance(p);
    xnode *x = wfm_expr__parse_postfix(p);
    if (!x)
        return NULL;
    bool negate = wfm_expr__tok_is(p, &p->cur, "isnot");
    if (!negate && !wfm_expr__tok_is(p, &p->cur, "is"))
        return wfm_expr__unexpected(p);
    wfm_expr__advance(p);
    uint32_t toff = p->cur.off;
    const wf_type *t = wfm_expr__type_ahead(p);
    if (!t && p->cur.kind == TK_ID)
        return wfm_expr__fail(p, toff, WF_E_NAME, "unknown type '%.*s'", (int)p->cur.len,
                              p->text + toff);
    if (!t)
        return wfm_expr__unexpected(p);
    return wfm_expr__make_is(p, x, t, negate, off);
}

/* A variable a designer file named "Default" (VB writes it [Default]) stays a name. */
static bool default_is_name(const xparser *p, const xtok *t)
{
    xtok next = wfm_expr__peek(p);
    wfm_name nm;
    return !punct_is(&next, '(') && p->scope->resolve &&
           p->scope->resolve(p->scope->ud, p->text + t->off, t->len, &nm);
}

/* C#'s default(T): T's .NET default value, typed T (a reference type's is a null of that
 * type). The C# 7.1 `default` literal takes its type from where it is used, and these
 * expressions are typed bottom-up, so it is refused with a pointer to default(T). */
static xnode *parse_default(xparser *p, const xtok *kw)
{
    wfm_expr__advance(p);
    if (!punct_is(&p->cur, '('))
        return wfm_expr__fail(p, kw->off, WF_E_SYNTAX,
                              "the 'default' literal is not supported (it needs a target "
                              "type): write default(T)");
    wfm_expr__advance(p);
    if (punct_is(&p->cur, ')'))
        return wfm_expr__fail(p, p->cur.off, WF_E_SYNTAX, "expected a type name in default(T)");
    uint32_t toff;
    const wf_type *t = parse_type(p, &toff);
    if (!t || !wfm_expr__expect(p, ')'))
        return NULL;
    xnode *n = wfm_expr__mk(p, XOP_CONST, t, kw->off, NULL, NULL, NULL);
    if (n)
        n->k = wf_type_default(t);
    return n;
}

/* WF3Rule(e): e with the semantics of WF3's rules engine, which the converter writes around
 * a converted rule (docs/formats.md "Expressions"). The mode is a flag on every node parsed
 * inside, read by the evaluator. */
static xnode *parse_rule(xparser *p)
{
    wfm_expr__advance(p);
    if (!wfm_expr__expect(p, '('))
        return NULL;
    p->rules++;
    xnode *x = wfm_expr__parse_expr(p);
    p->rules--;
    return x && wfm_expr__expect(p, ')') ? x : NULL;
}

/* False when t cannot be one of the words keyword() knows (their first letters and at most 7
 * letters): most names are rejected here without testing each word. Keep in step with it. */
static bool may_be_keyword(const xparser *p, const xtok *t)
{
    static const char initials[] = "adfimnotw";
    return t->kind == TK_ID && t->len <= 7 &&
           memchr(initials, wfm_expr__ascii_lower(p->text[t->off]), sizeof initials - 1);
}

static xnode *keyword(xparser *p, const xtok *t, bool *handled)
{
    *handled = may_be_keyword(p, t);
    if (!*handled)
        return NULL;
    if (wfm_expr__tok_is(p, t, "true") || wfm_expr__tok_is(p, t, "false")) {
        wfm_expr__advance(p);
        xnode *n = wfm_expr__mk(p, XOP_CONST, &wf_type_bool, t->off, NULL, NULL, NULL);
        if (n)
            n->k = wf_bool(p->text[t->off] == 't' || p->text[t->off] == 'T');
        return n;
    }
    if (wfm_expr__tok_is(p, t, "null") || wfm_expr__tok_is(p, t, "nothing")) {
        wfm_expr__advance(p);
        xnode *n = wfm_expr__mk(p, XOP_CONST, &wf_type_null, t->off, NULL, NULL, NULL);
        if (n) {
            n->k = wf_null();
            if (wfm_expr__tok_is(p, t, "nothing"))
                n->flags |= XN_NOTHING;
        }
        return n;
    }
    if (wfm_expr__tok_is(p, t, "default") && !default_is_name(p, t))
        return parse_default(p, t);
    if (wfm_expr__tok_is(p, t, "new"))
        return parse_new(p);
    if (wfm_expr__tok_is(p, t, "typeof")) /* VB: TypeOf x Is T, TypeOf x IsNot T */
        return parse_typeof(p);
    xtok next = wfm_expr__peek(p);
    if (wfm_expr__tok_is(p, t, "WF3Rule") && punct_is(&next, '('))
        return parse_rule(p);
    static const char *const reserved[] = {"and", "or", "andalso", "orelse",
                                           "mod", "is", "isnot",   "not"};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (wfm_expr__tok_is(p, t, reserved[i]))
            return wfm_expr__unexpected(p);
    *handled = false;
    return NULL;
}

xnode *wfm_expr__parse_name(xparser *p)
{
    xtok t = p->cur;
    bool handled;
    xnode *n = keyword(p, &t, &handled);
    if (handled)
        return n;
    xtok next = wfm_expr__peek(p);
    bool call = next.kind == TK_PUNCT && next.punct == '(';
    wfm_name nm = {0};
    if (p->scope->resolve && p->scope->resolve(p->scope->ud, p->text + t.off, t.len, &nm)) {
        wfm_expr__advance(p);
        return make_slot(p, &t, &nm);
    }
    if (call) {
        wfm_expr__advance(p);
        if (name_is(p->text + t.off, t.len, "CType") ||
            name_is(p->text + t.off, t.len, "DirectCast"))
            return parse_vb_cast(p, &t);
        return parse_static_call(p, NULL, &t);
    }
    bool dot = next.kind == TK_PUNCT && next.punct == '.';
    if (dot && name_is(p->text + t.off, t.len, "System")) { /* System.Math.Abs */
        xtok cls = wfm_expr__lex(p->text, next.off + next.len, p->end);
        xtok dot2 = wfm_expr__lex(p->text, cls.off + cls.len, p->end);
        if (cls.kind == TK_ID && static_class(p, &cls) && dot2.kind == TK_PUNCT &&
            dot2.punct == '.') {
            wfm_expr__advance(p);
            wfm_expr__advance(p);
            t = cls;
            next = dot2;
        }
    }
    const char *cls = dot ? static_class(p, &t) : NULL;
    if (cls) {
        wfm_expr__advance(p);
        wfm_expr__advance(p);
        xtok name = p->cur;
        if (name.kind != TK_ID)
            return wfm_expr__unexpected(p);
        wfm_expr__advance(p);
        return parse_static_call(p, cls, &name);
    }
    const static_spec *clock = find_static(NULL, p->text + t.off, t.len);
    if (clock && (clock->kind == S_NOW || clock->kind == S_STR)) { /* VB: Now, Today, vbCrLf */
        wfm_expr__advance(p);
        return bind_static(p, clock, NULL, 0, t.off);
    }
    return wfm_expr__fail(p, t.off, WF_E_NAME, "unknown name '%.*s'", (int)t.len, p->text + t.off);
}

/* wfm_expr_int.h — internals shared by the expression compiler's files (lexer, parser,
 * evaluator, library functions): the typed node tree, allocated from the definition's arena
 * and immutable once compiled, and the tokens. Only modern/wfm_expr*.c include this file. */
#ifndef WFM_EXPR_INT_H
#define WFM_EXPR_INT_H

#include <stdarg.h>
#include <stddef.h> /* offsetof */

#include "../common/wf_calendar.h"
#include "wfm_expr.h"

#define WFM_EXPR_MAX_NEST   256        /* parser recursion (nested parentheses, unary chains) */
#define WFM_EXPR_MAX_DEPTH  512        /* tree depth, which bounds evaluation recursion */
#define WFM_EXPR_MAX_ARGS   16         /* arguments of one call */
#define WFM_EXPR_MAX_TEXT   (1u << 20) /* bytes of source text */
#define WFM_EXPR_FOLD_MAX   1024       /* longest string a folded node may hold */
#define WFM_EXPR_MAX_LAMBDA 3          /* lambdas nested in lambdas (work is a power of this) */

/* ---- nodes ---------------------------------------------------------------------------- */
typedef enum xop {
    XOP_CONST,    /* k (scalar or immortal string) */
    XOP_SLOT,     /* env slot (hops, index) */
    XOP_CONV,     /* a converted to `type`, mode in sub (XV_*) */
    XOP_NEG,      /* -a */
    XOP_NOT,      /* !a (a is Boolean) */
    XOP_ARITH,    /* a op b, op in sub (XA_*); operands already promoted when typed */
    XOP_CONCAT,   /* text(a) + text(b) */
    XOP_CMP,      /* a op b, op in sub (XC_*) */
    XOP_ANDALSO,  /* short-circuit && */
    XOP_ORELSE,   /* short-circuit || */
    XOP_AND,      /* VB And on Booleans: both sides evaluated */
    XOP_OR,       /* VB Or on Booleans: both sides evaluated */
    XOP_COND,     /* a ? b : c */
    XOP_FIELD,    /* a.name: record field, or a late-bound member of an Object */
    XOP_INDEX,    /* a[b]: list element or record entry */
    XOP_CALL,     /* library function sub (XF_*) over args[0..nargs) */
    XOP_NEW_EXC,  /* exception of type aux with message args[0] (optional) */
    XOP_NEW_LIST, /* list of type `type` from args */
    XOP_NOW,      /* the clock; param 1: today (midnight UTC) */
    XOP_COALESCE, /* a ?? b: a unless it is null */
    XOP_NEW_REC,  /* record from args[2i] (String keys) and args[2i+1], param pairs */
    XOP_LAMBDA,   /* list a, LINQ method sub (XL_*) with lambda body b; aux: Select's type */
} xop;

/* LINQ methods that take a lambda. The body runs in a one-slot environment (the lambda's
 * parameter, hops 0) whose parent is the expression's environment. */
enum { XL_WHERE, XL_ANY, XL_ALL, XL_COUNT, XL_SELECT, XL_FIRST, XL_SUM };

enum { XA_ADD, XA_SUB, XA_MUL, XA_DIV, XA_MOD };
enum { XC_EQ, XC_NE, XC_LT, XC_LE, XC_GT, XC_GE };
/* Conversion modes: IMPLICIT widens (and checks Object values), CAST is C#'s (T)x (integer
 * targets truncate), CONVERT is Convert.ToX / CInt (round half to even, strings parsed),
 * TEXT is ToString / str. */
enum { XV_IMPLICIT, XV_CAST, XV_CONVERT, XV_TEXT };

/* Library functions (XOP_CALL). Instance members take the receiver as args[0]. */
typedef enum xfn {
    XF_LENGTH,
    XF_COUNT,
    XF_MESSAGE,
    XF_TS_TOTAL,
    XF_DT_PART,
    XF_TOUPPER,
    XF_TOLOWER,
    XF_TRIM,
    XF_STR_CONTAINS,
    XF_STARTSWITH,
    XF_ENDSWITH,
    XF_SUBSTRING,
    XF_REPLACE,
    XF_INDEXOF,
    XF_LIST_CONTAINS,
    XF_CONTAINSKEY,
    XF_DYN_CONTAINS,
    XF_FORMAT,
    XF_CONCAT,
    XF_ISNULLOREMPTY,
    XF_LEN,
    XF_ABS,
    XF_MIN,
    XF_MAX,
    XF_ROUND,
    XF_FLOOR,
    XF_CEILING,
    XF_POW,
    XF_SQRT,
    XF_TS_FROM,
    XF_TOSTRING,
    XF_DT_ADD,
    XF_TS_PART,
    XF_ISNULLORWHITESPACE,
    XF_JOIN,
    XF_DT_NEW,
    XF_TS_NEW,
    XF_PAD,
    XF_LIST_INDEXOF,
    XF_EQUALS,
    XF_IS_TYPE, /* x is T: aux is T */
    XF_COMPARE, /* a.CompareTo(b), String.Compare(a, b): -1, 0 or 1 */
    XF_RANDOM,  /* new Random([seed]).Next(...) / .NextDouble(): param is XR_* | XR_SEED */
    XF_REC_COUNT,
    XF_REC_KEYS, /* aux: List(String) */
    XF_REC_VALUES,
    XF_LIST_FIRST, /* param bit 0: Last, bit 1: ...OrDefault */
    XF_LIST_ANY,
    XF_LIST_SUM,
    XF_LIST_SELF, /* ToList(), ToArray(): the list itself */
} xfn;

/* XF_RANDOM: which method (low bits), and whether args[0] is a seed. */
enum { XR_NEXT0, XR_NEXT1, XR_NEXT2, XR_DOUBLE, XR_SEED = 16 };

enum {
    XN_PURE = 1u << 0,     /* depends on no name and not on the clock */
    XN_RECV = 1u << 1,     /* XOP_CALL: args[0] is a receiver that must not be null */
    XN_WRITABLE = 1u << 2, /* XOP_SLOT: the name may be assigned */
    XN_LITERAL = 1u << 3,  /* XOP_NEW_LIST: an array literal, whose type follows its target */
    XN_NOTHING = 1u << 4,  /* XOP_CONST: VB's Nothing, which converts to any type's default */
    XN_RULE = 1u << 5,     /* inside WF3Rule(...): WF3 rules semantics (wfm_expr_eval.c) */
};

typedef struct xnode xnode;
/* A constant or slot node is allocated without the operator members (XNODE_CONST_SIZE and
 * XNODE_SLOT_SIZE bytes): read a, b, c, args, aux, name and param only on other ops, k only
 * on a constant. */
struct xnode {
    uint8_t op;          /* xop */
    uint8_t sub;         /* operator, conversion mode or function */
    uint8_t flags;       /* XN_* */
    uint8_t nargs;       /* XOP_CALL / XOP_NEW_*: args count */
    uint32_t depth : 11; /* 1 + deepest child (<= WFM_EXPR_MAX_DEPTH) */
    uint32_t off : 21;   /* source offset of the node's first token (compile-time messages;
                            <= WFM_EXPR_MAX_TEXT) */
    const wf_type *type; /* static result type */
    union {
        wf_value k;                       /* XOP_CONST */
        struct {                          /* XOP_SLOT */
            uint32_t hops, index;
        };
        struct {                          /* every other op */
            xnode *a, *b, *c;
            xnode **args;        /* arena */
            const wf_type *aux;  /* XOP_NEW_EXC: exception type */
            const char *name;    /* XOP_FIELD: member / key (arena); XOP_CALL with XN_RULE:
                                    method */
            int64_t param;       /* XF_TS_FROM / XF_DT_ADD: microseconds per unit; *_PART,
                                    *_TOTAL: which */
        };
    };
};
#define XNODE_CONST_SIZE (offsetof(xnode, k) + sizeof(wf_value))
#define XNODE_SLOT_SIZE  (offsetof(xnode, index) + sizeof(uint32_t))
_Static_assert(WFM_EXPR_MAX_DEPTH < (1u << 11) && WFM_EXPR_MAX_TEXT < (1u << 21),
               "xnode.depth and xnode.off hold their limits");

/* Quick forms: shapes common enough in loops to skip the tree walk (wfm_expr__quick_*):
 * a slot read, and an Int32 slot compared with or combined with an Int32 constant. The tree
 * stays the reference: a quick form that meets anything unusual (a slot holding another
 * kind, an overflow) falls back to it, so both give the same value or exception. */
typedef enum xquick { XQ_NONE = 0, XQ_SLOT, XQ_SLOT_CMP_I32, XQ_SLOT_ARITH_I32 } xquick;

struct wfm_expr {
    xnode *root;
    const char *text; /* arena copy of the source */
    bool lvalue;
    uint8_t quick;        /* xquick */
    uint8_t quick_op;     /* XC_* / XA_* of the quick form */
    int32_t quick_k;      /* its constant */
    uint32_t hops, index; /* its slot */
};

/* ---- lexer ---------------------------------------------------------------------------- */
typedef enum tkind {
    TK_EOF,
    TK_ERR,
    TK_INT,
    TK_DEC,
    TK_DBL,
    TK_STR,
    TK_ISTR /* $"..." */,
    TK_ID,
    TK_PUNCT
} tkind;

/* Multi-character punctuators; single characters use their own code. */
enum { P_ANDAND = 256, P_OROR, P_EQEQ, P_NE, P_LE, P_GE, P_COALESCE };

typedef struct xtok {
    tkind kind;
    uint32_t off, len; /* bytes of text */
    int punct;         /* TK_PUNCT */
    uint64_t ival;     /* TK_INT magnitude */
    bool is_long;      /* TK_INT with suffix L (or VB's UI / UL) */
    char int_sfx;      /* TK_INT: VB suffix I S (signed: may be negated) u w (unsigned), or 0 */
    wf_decimal dec;    /* TK_DEC */
    double dbl;        /* TK_DBL */
    wf_status ecode;   /* TK_ERR: status, message and where it points */
    const char *emsg;
    uint32_t eoff;
} xtok;

/* Lex the token starting at or after `off` (skipping white space), never past `end`. */
xtok wfm_expr__lex(const char *text, uint32_t off, uint32_t end);
/* Decode a string token (quotes included) into buf (C# escapes, VB "" doubling). */
bool wfm_expr__string_decode(const char *text, uint32_t len, wf_buf *buf);
/* Decode text[i, end) of a string body; interp: {{ and }} instead of "". */
bool wfm_expr__decode(const char *text, uint32_t i, uint32_t end, bool interp, wf_buf *buf);
/* Line and column of byte `off` of text that starts at `at`. */
wf_loc wfm_expr__loc(wf_loc at, const char *text, uint32_t off);

/* ---- parser (wfm_expr_parse.c: grammar and operators; wfm_expr_bind.c: names, members,
 * library calls, `new`) ------------------------------------------------------------------ */
typedef struct xparser {
    wf_arena *arena;
    const wfm_expr_scope *scope;
    const char *text;
    uint32_t end;   /* end of the expression body (the closing ']' in attribute form) */
    bool bracketed; /* "[ ... ]" */
    wf_loc at;      /* location of text[0] */
    xtok cur;
    unsigned nest;    /* recursion depth */
    unsigned lambdas; /* lambdas being parsed (nested in each other) */
    unsigned rules;   /* WF3Rule(...) being parsed: new nodes get XN_RULE */
    wf_status status; /* first error */
    wf_error *err;
} xparser;

xnode *wfm_expr__fail(xparser *p, uint32_t off, wf_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
xnode *wfm_expr__nomem(xparser *p);
xnode *wfm_expr__unexpected(xparser *p);
void wfm_expr__advance(xparser *p);
bool wfm_expr__expect(xparser *p, int c);
xtok wfm_expr__peek(const xparser *p);

static inline char wfm_expr__ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
}

/* True if t is the name `word`, compared as the C locale's strncasecmp would. Inline: the
 * parser asks this for every keyword a name might be, and with `word` a constant most answers
 * are "no" at the first byte. */
static inline bool wfm_expr__tok_is(const xparser *p, const xtok *t, const char *word)
{
    if (t->kind != TK_ID)
        return false;
    const char *s = p->text + t->off;
    for (uint32_t i = 0; i < t->len; i++)
        if (word[i] == '\0' || wfm_expr__ascii_lower(s[i]) != wfm_expr__ascii_lower(word[i]))
            return false;
    return word[t->len] == '\0';
}

xnode *wfm_expr__mk(xparser *p, int op, const wf_type *type, uint32_t off, xnode *a, xnode *b,
                    xnode *c);
xnode *wfm_expr__set_args(xparser *p, xnode *n, xnode **args, unsigned nargs);
xnode *wfm_expr__fold(xparser *p, xnode *n);
bool wfm_expr__is_num(const wf_type *t);
const wf_type *wfm_expr__promote(const wf_type *a, const wf_type *b);
const wf_type *wfm_expr__find_type(const xparser *p, const char *name, size_t len);
xnode *wfm_expr__coerce(xparser *p, xnode *n, const wf_type *to);
/* Implicit conversion or WF_E_TYPE "<what>cannot convert X to Y" at n. */
xnode *wfm_expr__coerce_to(xparser *p, xnode *n, const wf_type *to, const char *what);
xnode *wfm_expr__convert(xparser *p, xnode *n, const wf_type *to, int mode, uint32_t off);
xnode *wfm_expr__make_cond(xparser *p, xnode *c, xnode *a, xnode *b, uint32_t off);
xnode *wfm_expr__make_coalesce(xparser *p, xnode *a, xnode *b, uint32_t off);
xnode *wfm_expr__int_literal(xparser *p, const xtok *t, bool neg, uint32_t off);
/* With cur at a type name: its type (and cur moved past it), else NULL and cur unchanged. */
const wf_type *wfm_expr__type_ahead(xparser *p);
/* x is T (negated for IsNot). */
xnode *wfm_expr__make_is(xparser *p, xnode *x, const wf_type *t, bool negate, uint32_t off);

xnode *wfm_expr__parse_expr(xparser *p);
xnode *wfm_expr__parse_or(xparser *p);
xnode *wfm_expr__parse_postfix(xparser *p);
xnode *wfm_expr__parse_primary(xparser *p);
xnode *wfm_expr__parse_name(xparser *p);
xnode *wfm_expr__parse_interp(xparser *p);
/* VB's array literal {a, b, ...} with cur at '{': a List of the items' common type. */
xnode *wfm_expr__parse_array(xparser *p);
bool wfm_expr__parse_args(xparser *p, xnode **args, unsigned *nargs, unsigned max);

/* ---- evaluation ----------------------------------------------------------------------- */
wf_status wfm_expr__eval(const xnode *n, const wfm_env *env, wf_value *out, wf_value *exc);
wf_status wfm_expr__store(const xnode *n, wfm_env *env, const wf_value *value, wf_value *exc);
/* Fill e's quick form from its tree (XQ_NONE when it has none). */
void wfm_expr__quick_prepare(wfm_expr *e);
/* Evaluate e's quick form: false when it has none or it does not apply to these values (the
 * caller then walks the tree). */
bool wfm_expr__quick_eval(const wfm_expr *e, const wfm_env *env, wf_value *out);
/* Store a scalar of the slot's own type through e's XQ_SLOT form: false when that does not
 * apply (the caller then stores through the tree, which converts). */
bool wfm_expr__quick_store(const wfm_expr *e, wfm_env *env, const wf_value *value);
/* Convert v to `to` in mode XV_*. WF_OK, WF_E_FAULT (exc set) or WF_E_NOMEM. */
wf_status wfm_expr__conv(const wf_value *v, const wf_type *to, int mode, wf_value *out,
                         wf_value *exc);
/* Make an exception value in *exc; returns WF_E_FAULT (or WF_E_NOMEM). */
wf_status wfm_expr__raise(wf_value *exc, const wf_type *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Append the text form of v (str()). false on out of memory. */
bool wfm_expr__text(const wf_value *v, wf_buf *buf);
/* Run library function fn over args (evaluated). */
wf_status wfm_expr__call(const xnode *n, wf_value *args, wf_value *out, wf_value *exc);
/* Characters (UTF-8 code points) in s[0, len). */
size_t wfm_expr__u8_count(const char *s, size_t len);
/* IndexOutOfRangeException for list index i of count. */
wf_status wfm_expr__index_error(wf_value *exc, int64_t i, size_t count);
/* The clock, microseconds since the Unix epoch (UTC). */
int64_t wfm_expr__now_us(void);

/* .NET's messages for the run-time exceptions. */
#define WFM_MSG_OVERFLOW "Arithmetic operation resulted in an overflow."
#define WFM_MSG_DIVZERO  "Attempted to divide by zero."
#define WFM_MSG_NULLREF  "Object reference not set to an instance of an object."
#define WFM_MSG_FORMAT   "Input string was not in a correct format."

#endif

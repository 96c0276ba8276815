/* wfm_expr_lex.c — the expression lexer: numbers (Int32/Int64/Decimal/Double literals),
 * strings (C# escapes and VB "" doubling), identifiers and punctuators. Lexing is a pure
 * function of the position, so the parser can peek ahead by lexing again; a bad token comes
 * back as TK_ERR and is reported only when the parser reaches it. */
#include <ctype.h>
#include <errno.h>
#include <math.h> /* isinf */
#include <stdlib.h>
#include <string.h>

#include "wfm_expr_int.h"

wf_loc wfm_expr__loc(wf_loc at, const char *text, uint32_t off)
{
    wf_loc loc = at;
    for (uint32_t i = 0; i < off && text[i]; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') {
            loc.line++;
            loc.col = 1;
        } else if ((c & 0xC0) != 0x80) { /* one column per character, not per byte */
            loc.col++;
        }
    }
    return loc;
}

static bool is_id_start(unsigned char c)
{
    return isalpha(c) || c == '_' || c >= 0x80;
}

static bool is_id_char(unsigned char c)
{
    return isalnum(c) || c == '_' || c >= 0x80;
}

static xtok tok_error(uint32_t off, uint32_t eoff, wf_status code, const char *msg)
{
    xtok t = {.kind = TK_ERR, .off = off, .len = 1, .ecode = code, .emsg = msg, .eoff = eoff};
    return t;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Integer digits in base 10 or 16; false on overflow of uint64. */
static bool digits_value(const char *s, size_t n, int base, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = hexval((unsigned char)s[i]);
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return true;
}

static xtok lex_hex(const char *text, uint32_t start, uint32_t end)
{
    uint32_t i = start + 2;
    while (i < end && hexval((unsigned char)text[i]) >= 0)
        i++;
    uint32_t digits_end = i;
    xtok t = {.kind = TK_INT, .off = start};
    if (i < end && (text[i] == 'L' || text[i] == 'l')) {
        t.is_long = true;
        i++;
    }
    if (digits_end == start + 2 || (i < end && is_id_char((unsigned char)text[i])))
        return tok_error(start, start, WF_E_SYNTAX, "invalid number");
    if (!digits_value(text + start + 2, digits_end - start - 2, 16, &t.ival))
        return tok_error(start, start, WF_E_SYNTAX, "integer literal is too large");
    t.len = i - start;
    return t;
}

/* Leading zeros a Decimal's exponent-free text keeps after the point: every digit further
 * right is below half of 10^-28, so the value rounds to zero either way. */
#define DEC_FRAC_CLAMP 32

/* The exponent-free text of the Decimal literal `s` (digits, '.', exponent: "1.5E-2" gives
 * "0.015", "1.50e1" "15.0", "1e3" "1000"), moving the point in the text so the value stays
 * exact and the places written stay the scale, as .NET parses it. WF_E_RANGE when the
 * integer part has more digits than any Decimal (29). `out` has room for strlen(s) +
 * DEC_FRAC_CLAMP + 3 bytes. */
static wf_status decimal_plain(const char *s, char *out)
{
    const char *p = s, *dot = NULL;
    for (; isdigit((unsigned char)*p) || *p == '.'; p++)
        if (*p == '.')
            dot = p;
    const char *mant_end = p;
    long exp = 0;
    if (*p == 'e' || *p == 'E') {
        bool neg = p[1] == '-';
        for (p += p[1] == '-' || p[1] == '+' ? 2 : 1; isdigit((unsigned char)*p); p++)
            if (exp < 100000) /* beyond any Decimal either way */
                exp = exp * 10 + (*p - '0');
        exp = neg ? -exp : exp;
    }
    char sig[400]; /* the mantissa's digits without the point and the leading zeros */
    long nsig = 0, lead = 0;
    for (const char *q = s; q < mant_end; q++) {
        if (*q == '.')
            continue;
        if (nsig == 0 && *q == '0')
            lead++;
        else
            sig[nsig++] = *q;
    }
    long int_digits = (long)((dot ? dot : mant_end) - s);
    long frac = dot ? (long)(mant_end - dot - 1) : 0;
    long point = int_digits - lead + exp;          /* significant digits before the point */
    long places = frac - exp > 0 ? frac - exp : 0; /* the scale the text writes */
    if (nsig == 0)                                 /* zero: only its places count */
        point = -(places < DEC_FRAC_CLAMP ? places : DEC_FRAC_CLAMP);
    if (point > 29)
        return WF_E_RANGE;
    char *o = out;
    if (point <= 0) {
        long zeros = -point < DEC_FRAC_CLAMP ? -point : DEC_FRAC_CLAMP;
        *o++ = '0';
        if (zeros > 0 || nsig > 0)
            *o++ = '.';
        memset(o, '0', (size_t)zeros);
        o += zeros;
        if (zeros == -point) {
            memcpy(o, sig, (size_t)nsig);
            o += nsig;
        }
    } else if (point >= nsig) {
        memcpy(o, sig, (size_t)nsig);
        memset(o + nsig, '0', (size_t)(point - nsig));
        o += point;
    } else {
        memcpy(o, sig, (size_t)point);
        o[point] = '.';
        memcpy(o + point + 1, sig + point, (size_t)(nsig - point));
        o += nsig + 1;
    }
    *o = '\0';
    return WF_OK;
}

static xtok lex_number(const char *text, uint32_t start, uint32_t end)
{
    if (text[start] == '0' && start + 1 < end && (text[start + 1] == 'x' || text[start + 1] == 'X'))
        return lex_hex(text, start, end);
    uint32_t i = start;
    bool real = false;
    while (i < end && isdigit((unsigned char)text[i]))
        i++;
    if (i + 1 < end && text[i] == '.' && isdigit((unsigned char)text[i + 1])) {
        real = true;
        for (i++; i < end && isdigit((unsigned char)text[i]); i++)
            ;
    }
    if (i < end && (text[i] == 'e' || text[i] == 'E')) {
        uint32_t j = i + 1;
        if (j < end && (text[j] == '+' || text[j] == '-'))
            j++;
        if (j >= end || !isdigit((unsigned char)text[j]))
            return tok_error(start, start, WF_E_SYNTAX,
                             "invalid real literal: the exponent has no digits");
        real = true;
        for (i = j; i < end && isdigit((unsigned char)text[i]); i++)
            ;
    }
    uint32_t digits_end = i;
    /* Suffixes: L (Int64), m M and VB's uppercase D (Decimal), C#'s lowercase d, f F and VB's
     * R r (Double); VB's integer suffixes I (Integer), S (Short), UI (UInteger), UL (ULong)
     * and US (UShort) and C#'s U (uint), which become Int32 or Int64 with a range check. */
    char suffix = 0, isfx = 0;
    if (i + 1 < end && (text[i] == 'u' || text[i] == 'U') && strchr("iIlLsS", text[i + 1]) &&
        text[i + 1] != '\0') {
        isfx = (char)toupper((unsigned char)text[i + 1]);
        isfx = isfx == 'I' ? 'u' : isfx == 'L' ? 'v' : 'w'; /* UI, UL, US */
        i += 2;
    } else if (i < end && (text[i] == 'u' || text[i] == 'U')) { /* C#'s uint */
        isfx = 'u';
        i++;
    } else if (i < end && text[i] == 'D') {
        suffix = 'm';
        i++;
    } else if (i < end && text[i] != '\0' && strchr("lLmMdfFrR", text[i])) {
        suffix = (char)tolower((unsigned char)text[i++]);
        if (suffix == 'r')
            suffix = 'd';
    } else if (i < end && text[i] != '\0' && strchr("iIsS", text[i])) {
        isfx = (char)toupper((unsigned char)text[i++]);
    }
    if (i < end && is_id_char((unsigned char)text[i]))
        return tok_error(start, start, WF_E_SYNTAX, "invalid number");
    char buf[400];
    uint32_t n = digits_end - start;
    if (n >= sizeof buf)
        return tok_error(start, start, WF_E_LIMIT, "number literal is too long");
    memcpy(buf, text + start, n);
    buf[n] = '\0';
    xtok t = {.off = start, .len = i - start};
    if (suffix == 'm') {
        t.kind = TK_DEC;
        char plain[sizeof buf + DEC_FRAC_CLAMP + 3];
        wf_status st = decimal_plain(buf, plain);
        if (st == WF_OK)
            st = wf_decimal_parse(plain, &t.dec);
        if (st == WF_E_RANGE)
            return tok_error(start, start, WF_E_SYNTAX,
                             "decimal literal is outside the range of type 'decimal'");
        if (st != WF_OK)
            return tok_error(start, start, WF_E_SYNTAX, "invalid decimal literal");
        return t;
    }
    if (real || suffix == 'd' || suffix == 'f') {
        if (suffix == 'l' || isfx)
            return tok_error(start, start, WF_E_SYNTAX, "invalid number");
        t.kind = TK_DBL;
        t.dbl = strtod(buf, NULL);
        if (isinf(t.dbl)) /* C#'s CS0594; an underflow is 0 or a subnormal, as in C# */
            return tok_error(start, start, WF_E_SYNTAX,
                             "floating-point literal is outside the range of type 'double'");
        return t;
    }
    t.kind = TK_INT;
    t.is_long = suffix == 'l' || isfx == 'u' || isfx == 'v';
    if (!digits_value(buf, n, 10, &t.ival))
        return tok_error(start, start, WF_E_SYNTAX, "integer literal is too large");
    uint64_t max = isfx == 'I'   ? 2147483648u
                   : isfx == 'S' ? 32768u
                   : isfx == 'u' ? UINT32_MAX
                   : isfx == 'w' ? 65535u
                                 : UINT64_MAX;
    if (t.ival > max)
        return tok_error(start, start, WF_E_SYNTAX,
                         "integer literal is too large for its type suffix");
    t.int_sfx = isfx;
    return t;
}

/* Bytes of the escape sequence at text[i] == '\\', 0 if it is not a valid one. */
static uint32_t escape_len(const char *text, uint32_t i, uint32_t end)
{
    if (i + 1 >= end)
        return 0;
    char e = text[i + 1];
    if (e == 'u') {
        for (uint32_t k = 2; k < 6; k++)
            if (i + k >= end || hexval((unsigned char)text[i + k]) < 0)
                return 0;
        return 6;
    }
    return e != '\0' && strchr("\"'\\0abfnrtv", e) ? 2 : 0;
}

/* Scan a string literal starting at the quote; returns the offset after the closing quote,
 * or 0 with *bad set to the offset of a bad escape (or the opening quote if unterminated). */
static uint32_t scan_string(const char *text, uint32_t start, uint32_t end, uint32_t *bad)
{
    uint32_t i = start + 1;
    while (i < end) {
        char c = text[i];
        if (c == '"') {
            if (i + 1 < end && text[i + 1] == '"') {
                i += 2;
                continue;
            }
            return i + 1;
        }
        if (c == '\\') {
            if (i + 1 >= end)
                break;
            uint32_t n = escape_len(text, i, end);
            if (n == 0) {
                *bad = i;
                return 0;
            }
            i += n;
            continue;
        }
        i++;
    }
    *bad = start;
    return 0;
}

static xtok lex_string(const char *text, uint32_t start, uint32_t end)
{
    uint32_t bad = start;
    uint32_t stop = scan_string(text, start, end, &bad);
    if (stop == 0)
        return bad == start ? tok_error(start, start, WF_E_SYNTAX, "unterminated string")
                            : tok_error(start, bad, WF_E_SYNTAX, "unrecognized escape sequence");
    xtok t = {.kind = TK_STR, .off = start, .len = stop - start};
    return t;
}

/* The end of an interpolation hole starting after '{' (offset of its '}'), 0 if none: nested
 * strings and braces are skipped. */
static uint32_t hole_end(const char *text, uint32_t i, uint32_t end, uint32_t *bad)
{
    int depth = 1;
    while (i < end) {
        if (text[i] == '"') {
            uint32_t stop = scan_string(text, i, end, bad);
            if (!stop)
                return 0;
            i = stop;
            continue;
        }
        if (text[i] == '{')
            depth++;
        else if (text[i] == '}' && --depth == 0)
            return i;
        i++;
    }
    return 0;
}

/* $"text {expr[,align][:format]} text": C# escapes, {{ and }} for braces. */
static xtok lex_interp(const char *text, uint32_t start, uint32_t end)
{
    uint32_t i = start + 2;
    while (i < end) {
        char c = text[i];
        if (c == '"') {
            xtok t = {.kind = TK_ISTR, .off = start, .len = i + 1 - start};
            return t;
        }
        if (c == '\\') {
            uint32_t n = escape_len(text, i, end);
            if (!n)
                return tok_error(start, i, WF_E_SYNTAX, "unrecognized escape sequence");
            i += n;
        } else if ((c == '{' || c == '}') && i + 1 < end && text[i + 1] == c) {
            i += 2;
        } else if (c == '}') {
            return tok_error(start, i, WF_E_SYNTAX, "unexpected '}' in interpolated string");
        } else if (c == '{') {
            uint32_t bad = 0, close = hole_end(text, i + 1, end, &bad);
            if (!close && bad && text[bad] == '\\')
                return tok_error(start, bad, WF_E_SYNTAX, "unrecognized escape sequence");
            if (!close)
                return tok_error(start, i, WF_E_SYNTAX, "unterminated interpolation hole");
            i = close + 1;
        } else {
            i++;
        }
    }
    return tok_error(start, start, WF_E_SYNTAX, "unterminated string");
}

static void put_utf8(wf_buf *buf, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    wf_buf_add(buf, b, n);
}

static uint32_t hex4(const char *s)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++)
        v = v * 16 + (uint32_t)hexval((unsigned char)s[k]);
    return v;
}

static char simple_escape(char e)
{
    switch (e) {
    case '0':
        return '\0';
    case 'a':
        return '\a';
    case 'b':
        return '\b';
    case 'f':
        return '\f';
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    case 'v':
        return '\v';
    default:
        return e; /* \" \' \\ */
    }
}

bool wfm_expr__decode(const char *text, uint32_t i, uint32_t end, bool interp, wf_buf *buf)
{
    while (i < end) {
        char c = text[i];
        if ((c == '"' && !interp) || (interp && (c == '{' || c == '}'))) { /* doubled */
            wf_buf_addc(buf, c);
            i += 2;
        } else if (c != '\\') {
            uint32_t j = i;
            while (j < end && text[j] != '"' && text[j] != '\\' && text[j] != '{' && text[j] != '}')
                j++;
            if (j == i)
                j++;
            wf_buf_add(buf, text + i, j - i);
            i = j;
        } else if (text[i + 1] != 'u') {
            wf_buf_addc(buf, simple_escape(text[i + 1]));
            i += 2;
        } else {
            uint32_t cp = hex4(text + i + 2);
            i += 6;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= end && text[i] == '\\' &&
                text[i + 1] == 'u') {
                uint32_t lo = hex4(text + i + 2);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            if (cp >= 0xD800 && cp < 0xE000)
                cp = 0xFFFD; /* a lone surrogate has no UTF-8 form */
            put_utf8(buf, cp);
        }
    }
    return !buf->oom;
}

bool wfm_expr__string_decode(const char *text, uint32_t len, wf_buf *buf)
{
    return wfm_expr__decode(text, 1, len - 1, false, buf); /* inside the quotes */
}

static int punct2(char c, char d)
{
    if (c == '&' && d == '&')
        return P_ANDAND;
    if (c == '|' && d == '|')
        return P_OROR;
    if (c == '=' && d == '=')
        return P_EQEQ;
    if ((c == '!' && d == '=') || (c == '<' && d == '>'))
        return P_NE;
    if (c == '<' && d == '=')
        return P_LE;
    if (c == '>' && d == '=')
        return P_GE;
    if (c == '?' && d == '?')
        return P_COALESCE;
    return 0;
}

xtok wfm_expr__lex(const char *text, uint32_t off, uint32_t end)
{
    uint32_t i = off;
    while (i < end && isspace((unsigned char)text[i]))
        i++;
    if (i >= end) {
        xtok t = {.kind = TK_EOF, .off = end, .len = 0};
        return t;
    }
    unsigned char c = (unsigned char)text[i];
    if (isdigit(c) || (c == '.' && i + 1 < end && isdigit((unsigned char)text[i + 1])))
        return lex_number(text, i, end);
    if (c == '"')
        return lex_string(text, i, end);
    if (c == '$' && i + 1 < end && text[i + 1] == '"')
        return lex_interp(text, i, end);
    if (is_id_start(c)) {
        uint32_t j = i + 1;
        while (j < end && is_id_char((unsigned char)text[j]))
            j++;
        xtok t = {.kind = TK_ID, .off = i, .len = j - i};
        return t;
    }
    if (i + 1 < end) {
        int p2 = punct2((char)c, text[i + 1]);
        if (p2) {
            xtok t = {.kind = TK_PUNCT, .off = i, .len = 2, .punct = p2};
            return t;
        }
    }
    if (c != '\0' && strchr("()[]{}.,?:;+-*/%!&<>=\\^", c)) {
        xtok t = {.kind = TK_PUNCT, .off = i, .len = 1, .punct = c};
        return t;
    }
    xtok t = tok_error(i, i, WF_E_SYNTAX, "unexpected character");
    t.len = 1;
    while (t.len < 4 && i + t.len < end && ((unsigned char)text[i + t.len] & 0xC0) == 0x80)
        t.len++;
    return t;
}

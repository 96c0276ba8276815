/* wfm_expr.h — the expression compiler: a small typed C#-like language (with the common VB
 * spellings WF4 designer files use) compiled once at load time. Names resolve to environment
 * slots through a callback, types are checked, and evaluation does no name lookups. Run-time
 * errors are exception values (DivideByZeroException, OverflowException,
 * NullReferenceException, ...), never crashes (docs/architecture.md "The modern model"). */
#ifndef WFM_EXPR_H
#define WFM_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"

/* A run-time environment: the values of the arguments / variables / delegate arguments that
 * one activity instance declares, chained to the enclosing environment. Owned by the runtime;
 * expressions only read and write slots. */
typedef struct wfm_env wfm_env;
struct wfm_env {
    wfm_env *parent;
    wf_value *slots;
    uint32_t count;
};

/* What a name means, as the resolver reports it: slot `index` of the environment `hops`
 * parents up from the one the expression is evaluated in. */
typedef struct wfm_name {
    const wf_type *type;
    uint32_t hops;
    uint32_t index;
    bool writable; /* false for In arguments read-only in this scope, delegate args, ... */
} wfm_name;

/* Return true and fill *out when `name` (len bytes, not NUL-terminated) is in scope. */
typedef bool (*wfm_resolve_fn)(void *ud, const char *name, size_t len, wfm_name *out);

typedef struct wfm_expr_scope {
    wfm_resolve_fn resolve;
    void *ud;
    wf_types *types; /* for List(T) and exception types named in `new T(...)` */
} wfm_expr_scope;

typedef struct wfm_expr wfm_expr;

/* The language (C# precedence; VB keywords are case-insensitive):
 *   literals   42 (Int32, Int64 when larger), 5L, 0x1F, 12.5m (Decimal), 1.5 / 1e3 / 2d (Double),
 *              VB suffixes 0.0R and 1.5F (Double), 3D (Decimal: an uppercase D is VB's Decimal,
 *              a lowercase d stays C#'s Double), 5I 5S (Int32), 5UI 5UL (Int64), 5US (Int32),
 *              each range-checked; an exponent with any real suffix: 1.5E-2, 2e+4d, 1e3f
 *              (Double: there is no Single; beyond Double's range, 1e400, is an error) and
 *              1e3m / 1.5E-2M (Decimal, exact, keeping the places written: 1.50e1m is 15.0);
 *              "C# \"escapes\" \u00e9" and VB "" doubling,
 *              $"n={x} t={y:N2}", true/True, null/Nothing; C#'s default(T) for any type name
 *              (0, 0L, 0.0, 0m, false, DateTime.MinValue, TimeSpan.Zero; null typed T for
 *              reference types), but not the target-typed `default` literal; VB's Nothing
 *              where a value type is expected (assigned, CType, CInt, ...) is its default,
 *              C#'s null there stays an error; array literals {"a", "b"} (VB),
 *              new[] {...}, new string[] {...}, New String() {...}: a List of the items' common
 *              type (numbers promote; mixed or {} give List(Object)); T[] / VB T() as type
 *              names in CType, new and (T[])x casts are List(T); DateTime arithmetic outside
 *              years 1-9999 is ArgumentOutOfRangeException
 *   operators  ?: ?? || && (OrElse AndAlso Or And) ! (Not) == != (= <> Is IsNot) < <= > >=
 *              & (concatenation) + - * / % (Mod) \ (integer division) ^ (power) unary - +,
 *              casts (int)x (long) (double) (decimal) (string) (bool) (object) (Int32)...,
 *              CType(x, T), DirectCast(x, T); x is T, TypeOf x Is T / IsNot T; indexing
 *              list[i] rec["k"] (VB: list(i)); one trailing ';' (C# statement text) is ignored
 *   members    s.Length .ToUpper() .ToLower() (and -Invariant) .Trim() .TrimStart() .TrimEnd()
 *              .PadLeft(n) .PadRight(n) .Contains(x) .StartsWith(x) .EndsWith(x)
 *              .Substring(a[, n]) .Replace(a, b) .IndexOf(x); list.Count .Contains(x)
 *              .IndexOf(x) and LINQ's .Count() .Any() .First() .Last() .FirstOrDefault()
 *              .LastOrDefault() .Sum() .ToList() .ToArray(); with a one-parameter lambda
 *              (x => ..., (x) => ..., VB Function(x [As T]) ...) .Where .Select .Any .All
 *              .Count .First .FirstOrDefault .Sum: the body sees x and every outer name;
 *              rec.Field .ContainsKey(k), and where no such field exists .Count .Keys
 *              (List(String)) .Values (List(Object)) as a Dictionary has; x.Equals(y);
 *              x.CompareTo(y) (-1/0/1; null sorts first, strings ordinally) on numbers, strings,
 *              DateTime, TimeSpan, Boolean; ex.Message;
 *              span.Days/Hours/Minutes/Seconds/Milliseconds/TotalMilliseconds/TotalSeconds/
 *              TotalMinutes/TotalHours/TotalDays; date.Year/Month/Day/Hour/Minute/Second
 *              .AddDays(x)/AddHours/AddMinutes/AddSeconds/AddMilliseconds;
 *              x.ToString([format]). As in VB, a method whose arguments are all optional may
 *              be called without parentheses (s.Trim, n.ToString, s.ToUpper); members of an
 *              Object value (ContainsKey, Count, Length, Trim, ToString, ...) bind at run
 *              time. Formats (here and
 *              in String.Format / $"{x:fmt}"): F2 N2 D3 for numbers, "yyyy-MM-dd HH:mm:ss"
 *              style (and o s u) for DateTime
 *   library    String.Format/Concat/Join/IsNullOrEmpty/IsNullOrWhiteSpace/Empty/Compare,
 *              Math.Abs/Min/Max/Round/Floor/Ceiling/Pow/Sqrt, Convert.ToX for X in Int32 Int64
 *              Double Decimal String Boolean,
 *              Int32/Int64/Double/Decimal/Boolean/DateTime/TimeSpan.Parse,
 *              Int32/Int64/DateTime.MaxValue/MinValue, TimeSpan.Zero, DateTime.Now/UtcNow/Today
 *              (UTC; VB's Date.Now, and Now / Today with or without parentheses); VB's
 *              Integer. / Long. / Date. name Int32. / Int64. / DateTime., IsNothing(x),
 *              vbCrLf vbCr vbLf vbTab vbNewLine and Environment.NewLine (this platform's "\n"),
 *              TimeSpan.FromMilliseconds/Seconds/Minutes/Hours/Days, CInt CLng CDbl CDec CStr
 *              CBool, If(c, a, b), If(a, b), len str int decimal now
 *   new        new T("message") for exception types; new List<T>{...} / New List(Of T) From {...},
 *              new List<T>(items) (the same list: values are immutable), new List<T>(capacity);
 *              new DateTime(y, m, d[, h, mi, s]); new TimeSpan(h, m, s) / (d, h, m, s[, ms]);
 *              new Dictionary<string, V>() { {k, v}, ... } / New Dictionary(Of String, V) From
 *              {{k, v}, ...}: a Record (keys must be String; a repeated key is ArgumentException);
 *              new [System.]Random([seed]).Next() / .Next(max) / .Next(min, max) / .NextDouble():
 *              a pseudo-random number from a per-thread generator seeded from the clock (with a
 *              seed: repeatable, but not .NET's sequence), so the expression is not constant
 *   WF3Rule(e) e evaluated as WF3's rules engine evaluates a rule (the converter writes it
 *              around a converted .rules condition): Int32/Int64 + - * and unary - wrap; a
 *              member, indexer or method of null raises RuleEvaluationException ("The target
 *              of 'M' evaluated to null.", before the method's arguments are evaluated); a
 *              method that faults raises TargetInvocationException ("Method T.M threw an
 *              exception: INNER") (docs/wf3-behaviour.md "Rules: faults and their exception
 *              types")
 *   empty      "[]" with an expected reference type (String, List, Record, Object, exception)
 *              is WF4's "no expression": null. Otherwise (value type, no expected type, or an
 *              l-value) it is a syntax error at the ']'.
 * Lambdas appear only as the argument of those list methods (no closures, no statement
 * lambdas), nested at most 3 deep. Explicit casts between different list types are not supported.
 * Record members and Object operands are typed Object and checked at run time. */

enum {
    WFM_EXPR_LVALUE = 1u << 0, /* must denote a writable location (Out/InOut arguments) */
};

/* Compile `text`. It may be bracketed ("[a + b]", as XAML attributes write it) or bare (as in
 * a CSharpValue element); `at` is the location of text[0], and errors point at the offending
 * token (line and column advance over newlines in text). With `expected` non-NULL the result
 * must be assignable to it (an implicit conversion is inserted). Allocations come from
 * `arena` (the definition's), so there is no destroy: the expression lives as long as the
 * arena. Errors: WF_E_SYNTAX, WF_E_NAME (message names the unknown name), WF_E_TYPE. */
wf_status wfm_expr_compile(wf_arena *arena, const wfm_expr_scope *scope, const char *text,
                           wf_loc at, const wf_type *expected, unsigned flags, wfm_expr **out,
                           wf_error *err);

const wf_type *wfm_expr_type(const wfm_expr *expr);
/* True if the value does not depend on any name or on the clock (folded at compile time). */
bool wfm_expr_is_constant(const wfm_expr *expr);
const char *wfm_expr_text(const wfm_expr *expr); /* the source text, for messages */

/* Evaluate. WF_OK: *out holds the value (caller releases). WF_E_FAULT: *exc holds the
 * exception value (caller releases) and *out is null. Never fails otherwise except
 * WF_E_NOMEM. Thread rule: an expression is immutable; evaluate from any thread as long as
 * the environment belongs to that thread. */
wf_status wfm_expr_eval(const wfm_expr *expr, const wfm_env *env, wf_value *out, wf_value *exc);
/* Store into the location an LVALUE expression denotes (converting to its type). A record
 * field or list element is stored by building a new record / list and storing that into its
 * own location (values are immutable). With WFM_EXPR_LVALUE, `expected` (if any) is the type
 * of the values to be stored: it must be assignable to the location's type, which
 * wfm_expr_type reports. */
wf_status wfm_expr_store(const wfm_expr *expr, wfm_env *env, const wf_value *value,
                         wf_value *exc);

#endif

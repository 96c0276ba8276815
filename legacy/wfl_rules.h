/* wfl_rules.h — WF3 `.rules` files (RuleDefinitions): declarative conditions and policy rule
 * sets written as CodeDOM trees, compiled once at load into evaluable trees, evaluated against
 * an accessor interface (so the rules engine knows nothing about the executor), and printed
 * as modern expression text for the converter (docs/semantics.md §2). */
#ifndef WFL_RULES_H
#define WFL_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_mem.h"
#include "../common/wf_value.h"

/* Lifecycle:
 * 1. wfl_rules_load(path, types, &rules, diags, &err) (or wfl_rules_load_mem) parses and
 *    validates the whole file; every problem goes to diags, the first one to err.
 * 2. wfl_rules_condition / wfl_rules_ruleset find a named condition / rule set.
 * 3. wfl_rules_eval_condition / wfl_rules_execute run them against a wfl_rules_target.
 * 4. wfl_rules_destroy.
 * Thread rule: loaded rules are immutable; evaluate from any thread (the target's state is the
 * caller's business). Everything returned borrows from the wfl_rules. */

typedef struct wfl_rules wfl_rules;
typedef struct wfl_rule_cond wfl_rule_cond; /* RuleExpressionCondition */
typedef struct wfl_ruleset wfl_ruleset;
typedef struct wfl_rule wfl_rule;
typedef struct wfl_rule_action wfl_rule_action;
typedef struct wfl_rexpr wfl_rexpr; /* a compiled CodeDOM expression node */

/* ---- the accessor interface ---------------------------------------------------------- */
/* A member path rooted at `this`: `this.Order.Lines[0].Sku` is {Order}{Lines [0]}{Sku}. */
typedef struct wfl_rules_seg {
    const char *name;       /* member name */
    const wf_value *index;  /* indexer arguments applied after the member, NULL if none */
    size_t index_count;
} wfl_rules_seg;

/* get/set: WF_OK; WF_E_NAME when the path does not name a member of `this` (the evaluator then
 * reads the longest prefix that does, and applies the rest to the value itself: String
 * Length, List Count and [i], Record fields); WF_E_FAULT with *exc for a run-time exception
 * (e.g. a null in the middle of the path). invoke (optional, NULL = no methods on `this`) runs
 * a code-beside method `this.Name(args)`; WF_E_NAME if unknown. */
typedef struct wfl_rules_target {
    wf_status (*get)(void *ud, const wfl_rules_seg *path, size_t count, wf_value *out,
                     wf_value *exc, wf_error *err);
    wf_status (*set)(void *ud, const wfl_rules_seg *path, size_t count, const wf_value *value,
                     wf_value *exc, wf_error *err);
    wf_status (*invoke)(void *ud, const char *method, const wf_value *args, size_t argc,
                        wf_value *ret, wf_value *exc, wf_error *err);
    void *ud;
    /* optional: the value `this.member` reads, in place (borrowed for the evaluation step),
     * or NULL to read it through get. The evaluator then computes Int32 comparisons and
     * + and - on members and literals without a copy; the results are get's. */
    const wf_value *(*peek)(void *ud, const char *member);
} wfl_rules_target;

/* ---- loading --------------------------------------------------------------------------- */
/* The text is UTF-8, or UTF-16 with a byte-order mark (as the WF3 designer often saves .rules
 * files; transcoded first, lines and columns unchanged).
 * `types` resolves type names in casts and `new` (System.Int32, InvalidOperationException,
 * exception types a typelib declared). Errors carry the .rules file:line:col: WF_E_XML,
 * WF_E_SCHEMA (unknown element or attribute, missing Left/Right, duplicate names), WF_E_SYNTAX
 * (bad primitive value, bad Priority, unknown operator), WF_E_TYPE (unknown type name),
 * WF_E_UNSUPPORTED (CodeDirectionExpression, ref/out arguments). */
wf_status wfl_rules_load(const char *path, wf_types *types, wfl_rules **out, wf_diags *diags,
                         wf_error *err);
wf_status wfl_rules_load_mem(const char *name, const char *data, size_t len, wf_types *types,
                             wfl_rules **out, wf_diags *diags, wf_error *err);
void wfl_rules_destroy(wfl_rules *rules); /* accepts NULL */

const wfl_rule_cond *wfl_rules_condition(const wfl_rules *rules, const char *name);
const wfl_ruleset *wfl_rules_ruleset(const wfl_rules *rules, const char *name);
size_t wfl_rules_condition_count(const wfl_rules *rules);
const wfl_rule_cond *wfl_rules_condition_at(const wfl_rules *rules, size_t index);
size_t wfl_rules_ruleset_count(const wfl_rules *rules);
const wfl_ruleset *wfl_rules_ruleset_at(const wfl_rules *rules, size_t index);

/* ---- evaluation ------------------------------------------------------------------------ */
/* Run-time failures (null reference, division by zero, invalid cast, overflow) return
 * WF_E_FAULT and an exception value in *exc (NullReferenceException, DivideByZeroException,
 * InvalidCastException, ...; caller releases; exc may be NULL), like the modern runtime; the
 * accessor's own errors are passed through; an operator applied to the wrong types is
 * WF_E_TYPE. Int32/Int64 arithmetic wraps (unchecked, as in WF3);
 * Decimal overflow is OverflowException. A static member of a type wfbridge
 * does not model (an enum: `Workflow1+Level.Gold`) evaluates to its name as a String. Known
 * statics: DateTime.Now/UtcNow/Today/MinValue/MaxValue, Int32/Int64.MinValue/MaxValue,
 * String.Empty, String.IsNullOrEmpty/Concat, Math.Max/Min/Abs/PI. Value methods: ToString,
 * Equals, CompareTo; String ToUpper, ToLower, ToUpperInvariant, ToLowerInvariant, Trim,
 * TrimStart, TrimEnd, Contains, StartsWith, EndsWith, Substring, IndexOf, LastIndexOf,
 * Replace, PadLeft, PadRight, Insert, Remove; List Contains, IndexOf, LastIndexOf; members: String.Length, List.Count, record fields, Exception.Message,
 * DateTime.Year..Second/Date. */
wf_status wfl_rules_eval_condition(const wfl_rule_cond *cond, const wfl_rules_target *target,
                                   bool *result, wf_value *exc, wf_error *err);
wf_status wfl_rules_eval_expr(const wfl_rexpr *expr, const wfl_rules_target *target,
                              wf_value *out, wf_value *exc, wf_error *err);

typedef struct wfl_rules_exec_opts {
    unsigned max_evaluations; /* rule evaluations before WF_E_LIMIT; 0 = 100,000 */
    /* optional: each rule evaluation, with the condition's result (rule tracking) */
    void (*on_rule)(void *ud, const wfl_rule *rule, bool result);
    void *ud;
} wfl_rules_exec_opts;

#define WFL_RULES_EXEC_OPTS_INIT {.max_evaluations = 0, .on_rule = NULL, .ud = NULL}

/* Execute a RuleSet as PolicyActivity does (docs/semantics.md §2): priorities, Then/Else,
 * Halt, chaining Full / UpdateOnly / None, ReevaluationBehavior. opts may be NULL. Endless
 * chaining is WF_E_LIMIT naming the rule set. */
wf_status wfl_rules_execute(const wfl_ruleset *ruleset, const wfl_rules_target *target,
                            const wfl_rules_exec_opts *opts, wf_value *exc, wf_error *err);

/* ---- the tree, read-only (converter) ----------------------------------------------------- */
typedef enum wfl_chaining { WFL_CHAIN_FULL, WFL_CHAIN_UPDATE_ONLY, WFL_CHAIN_NONE } wfl_chaining;

const char *wfl_rule_cond_name(const wfl_rule_cond *cond);
const wfl_rexpr *wfl_rule_cond_expr(const wfl_rule_cond *cond);
wf_loc wfl_rule_cond_loc(const wfl_rule_cond *cond);

const char *wfl_ruleset_name(const wfl_ruleset *rs);
wfl_chaining wfl_ruleset_chaining(const wfl_ruleset *rs);
size_t wfl_ruleset_rule_count(const wfl_ruleset *rs); /* execution order (priority, name) */
const wfl_rule *wfl_ruleset_rule_at(const wfl_ruleset *rs, size_t index);

const char *wfl_rule_name(const wfl_rule *rule);
int wfl_rule_priority(const wfl_rule *rule);
bool wfl_rule_active(const wfl_rule *rule);
bool wfl_rule_reevaluate_always(const wfl_rule *rule); /* ReevaluationBehavior="Always" */
const wfl_rexpr *wfl_rule_condition(const wfl_rule *rule); /* NULL = always true */
wf_loc wfl_rule_loc(const wfl_rule *rule);
size_t wfl_rule_action_count(const wfl_rule *rule, bool else_branch);
const wfl_rule_action *wfl_rule_action_at(const wfl_rule *rule, bool else_branch, size_t index);
/* Member paths ("Order/Total", indexers collapsed to their member) the condition reads and
 * the actions write (Then and Else together), as used for Full chaining. */
size_t wfl_rule_read_count(const wfl_rule *rule);
const char *wfl_rule_read_at(const wfl_rule *rule, size_t index);
size_t wfl_rule_write_count(const wfl_rule *rule);
const char *wfl_rule_write_at(const wfl_rule *rule, size_t index);

typedef enum wfl_action_kind {
    WFL_ACTION_ASSIGN, /* CodeAssignStatement: target = value */
    WFL_ACTION_EXPR,   /* CodeExpressionStatement: value */
    WFL_ACTION_HALT,   /* RuleHaltAction */
    WFL_ACTION_UPDATE, /* RuleUpdateAction: path */
} wfl_action_kind;

wfl_action_kind wfl_rule_action_kind(const wfl_rule_action *action);
const wfl_rexpr *wfl_rule_action_target(const wfl_rule_action *action); /* ASSIGN, else NULL */
const wfl_rexpr *wfl_rule_action_value(const wfl_rule_action *action);  /* ASSIGN/EXPR */
const char *wfl_rule_action_path(const wfl_rule_action *action);        /* UPDATE: "A/B" */
wf_loc wfl_rule_action_loc(const wfl_rule_action *action);

typedef enum wfl_rexpr_kind {
    WFL_REX_THIS,      /* CodeThisReferenceExpression */
    WFL_REX_PRIMITIVE, /* value */
    WFL_REX_MEMBER,    /* Field/PropertyReference: child 0 = target, name */
    WFL_REX_BINARY,    /* op, child 0 = left, 1 = right */
    WFL_REX_INVOKE,    /* name = method, child 0 = target, 1.. = parameters */
    WFL_REX_INDEX,     /* (Array)IndexerExpression: child 0 = target, 1.. = indices */
    WFL_REX_CAST,      /* type, child 0 = operand */
    WFL_REX_TYPEREF,   /* CodeTypeReferenceExpression: name = "System.DateTime" */
    WFL_REX_NEW,       /* CodeObjectCreateExpression: type, children = arguments */
} wfl_rexpr_kind;

typedef enum wfl_rop {
    WFL_ROP_ADD, WFL_ROP_SUBTRACT, WFL_ROP_MULTIPLY, WFL_ROP_DIVIDE, WFL_ROP_MODULUS,
    WFL_ROP_ASSIGN, WFL_ROP_IDENTITY_INEQUALITY, WFL_ROP_IDENTITY_EQUALITY,
    WFL_ROP_VALUE_EQUALITY, WFL_ROP_BITWISE_OR, WFL_ROP_BITWISE_AND, WFL_ROP_BOOLEAN_OR,
    WFL_ROP_BOOLEAN_AND, WFL_ROP_LESS_THAN, WFL_ROP_LESS_THAN_OR_EQUAL, WFL_ROP_GREATER_THAN,
    WFL_ROP_GREATER_THAN_OR_EQUAL,
} wfl_rop; /* CodeBinaryOperatorType order; ASSIGN is rejected at load; Identity(In)Equality
            * compares like ValueEquality (wfbridge values have no reference identity) */

wfl_rexpr_kind wfl_rexpr_kind_of(const wfl_rexpr *e);
wf_loc wfl_rexpr_loc(const wfl_rexpr *e);
size_t wfl_rexpr_child_count(const wfl_rexpr *e);
const wfl_rexpr *wfl_rexpr_child(const wfl_rexpr *e, size_t index);
const char *wfl_rexpr_name(const wfl_rexpr *e); /* member, method or type name; else NULL */
/* THIS read from GetActivityByName("N") where N is not the root's name, blanks included:
 * WF3's lookup returns null there (docs/wf3-behaviour.md "Rules: string arguments are
 * verbatim"). */
bool wfl_rexpr_lookup_missed(const wfl_rexpr *e);
wfl_rop wfl_rexpr_op(const wfl_rexpr *e);        /* BINARY */
const wf_value *wfl_rexpr_value(const wfl_rexpr *e); /* PRIMITIVE (immortal), else NULL */
const wf_type *wfl_rexpr_type(const wfl_rexpr *e);   /* CAST, NEW: resolved type */
const char *wfl_rop_name(wfl_rop op);            /* "ValueEquality", ... */

/* Append `e` as modern expression text (`this.A` -> `A`, ValueEquality -> `==`,
 * `x == false` -> `!(x)`, `(a == b) == false` -> `a != b`, literals as the modern language
 * writes them). Returns false on out of memory (buf->oom). */
bool wfl_rules_expr_text(const wfl_rexpr *e, wf_buf *out);
/* An action as a modern statement: "A = B + 1", "Halt()", "Update(\"A/B\")". */
bool wfl_rules_action_text(const wfl_rule_action *action, wf_buf *out);

/* Append a scalar value as a modern expression literal (`12`, `5L`, `12.5m`, `"a\"b"`, `true`,
 * `DateTime.Parse("...")`; null and non-scalars as `null`). False on out of memory. */
bool wfl_rules_literal_text(const wf_value *v, wf_buf *out);

#endif

/* wfl_rules_int.h — the compiled form of a .rules file, shared by the loader
 * (wfl_rules_parse.c), the evaluator (wfl_rules_eval.c) and the printer (wfl_rules_text.c).
 * Everything lives in the rules' arena and is immutable after load. */
#ifndef WFL_RULES_INT_H
#define WFL_RULES_INT_H

#include "wfl_rules.h"

/* The rules engine's own exception types (docs/wf3-behaviour.md "Rules"), interned in the
 * wf_types the rules were loaded with so a FaultType names the same type. */
typedef struct wfl_rules_excs {
    const wf_type *rule;       /* RuleException : Exception */
    const wf_type *rule_eval;  /* RuleEvaluationException : RuleException (a null target) */
    const wf_type *target_inv; /* TargetInvocationException : ApplicationException (a method
                                  called by a rule threw) */
} wfl_rules_excs;

/* Declare (or find) the three in types. WF_E_NOMEM; WF_E_TYPE if a type library declared one
 * of the names with another base. */
wf_status wfl__rules_excs(wf_types *types, wfl_rules_excs *out, wf_error *err);

struct wfl_rexpr {
    wfl_rexpr_kind kind;
    wfl_rop op;           /* BINARY */
    wf_loc loc;           /* file = the rules' path */
    const char *name;     /* MEMBER / INVOKE: member; TYPEREF: type name without assembly */
    wf_value value;       /* PRIMITIVE: immortal */
    const wf_type *type;  /* CAST / NEW: resolved; TYPEREF: NULL when not a value type */
    wfl_rexpr **kids;     /* see wfl_rexpr_kind */
    size_t kid_count;
    bool lookup_missed; /* THIS from GetActivityByName of a name that is not the root's
                           (wfl__rules_set_root): null in WF3 */
};

struct wfl_rule_action {
    wfl_action_kind kind;
    wfl_rexpr *target; /* ASSIGN */
    wfl_rexpr *value;  /* ASSIGN, EXPR */
    const char *path;  /* UPDATE, normalised: "A/B", or with a trailing star */
    wf_loc loc;
};

/* A list of member paths: "A/B"; a trailing star marks a wildcard ("*" = everything). */
typedef struct wfl_pathset {
    const char **paths;
    size_t count;
} wfl_pathset;

/* Indices (into wfl_ruleset.active) of the rules an action list re-marks for evaluation. */
typedef struct wfl_triggers {
    size_t *index;
    size_t count;
} wfl_triggers;

struct wfl_rule {
    const char *name;
    int priority;
    bool active;
    bool always; /* ReevaluationBehavior="Always" */
    wfl_rexpr *cond;
    wfl_rule_action *actions[2]; /* [0] Then, [1] Else */
    size_t action_count[2];
    wfl_pathset reads;
    wfl_pathset writes;       /* Then and Else, assignments and updates (API view) */
    wfl_pathset effects[2];   /* per branch, as the rule set's chaining counts them */
    wfl_triggers triggers[2]; /* per branch */
    wf_loc loc;
};

struct wfl_ruleset {
    const char *name;
    wfl_chaining chaining;
    const wfl_rules *owner;
    wfl_rule *rules;      /* sorted: Priority descending, then Name ascending (ordinal) */
    size_t rule_count;
    size_t *active;       /* indices of active rules, in execution order */
    size_t active_count;
    wf_loc loc;
};

struct wfl_rule_cond {
    const wfl_rules *owner;
    const char *name;
    wfl_rexpr *expr;
    wf_loc loc;
};

struct wfl_rules {
    wf_arena *arena;
    const char *path;
    wfl_rules_excs excs;
    const char *root_name; /* set by the definition loader (borrowed): this.GetActivityByName
                              finds the root only under exactly this name; NULL (rules
                              loaded alone): any literal name means the root */
    wfl_rule_cond *conds;
    size_t cond_count;
    wfl_ruleset *sets;
    size_t set_count;
};

/* The root workflow's name, compared verbatim by this.GetActivityByName (wfl_rules_eval.c). */
void wfl__rules_set_root(wfl_rules *rules, const char *root_name);

/* True if e is a chain of member and indexer nodes ending at `this`. */
bool wfl_rexpr_is_this_path(const wfl_rexpr *e);
/* Whether a write to `write` can change what a condition reading `read` sees (WF3 Executor's
 * side-effect analysis: the write is a prefix of the read, or either is a wildcard covering
 * the other). */
bool wfl_path_affects(const char *write, const char *read);

#endif

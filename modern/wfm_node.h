/* wfm_node.h — what a kind's callbacks may read of a loaded node: its properties, literals,
 * parameters and attached data, at load and at run time (nodes are immutable once loaded),
 * and the loader's services for a prepare callback (errors, library path, types). Property
 * indexes are those of the kind's spec (wfm_activity.h). */
#ifndef WFM_NODE_H
#define WFM_NODE_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/wf_error.h"
#include "../common/wf_native.h"
#include "../common/wf_value.h"
#include "wfm_activity.h"

/* ---- reading a node (load time and run time) --------------------------------------------- */
const wfm_kind *wfm_node_kind(const wfm_node *node);
wf_loc wfm_node_loc(const wfm_node *node);
const char *wfm_node_display_name(const wfm_node *node); /* DisplayName, else the kind name */
/* "1.3.2", stable per definition; valid as long as the definition. Thread-safe; the first
 * call on a definition builds all of its ids, NULL when memory runs out then. */
const char *wfm_node_id(const wfm_node *node);
/* The tree parent: the node whose property the element is written in (NULL for the root
 * body). A node reached through x:Reference has the parent where it is written. */
const wfm_node *wfm_node_parent(const wfm_node *node);
const wf_type *wfm_node_type_arg(const wfm_node *node); /* x:TypeArguments, NULL if none */
bool wfm_node_has(const wfm_node *node, unsigned prop); /* set in the XAML */
/* ACTIVITY, NODE: the child; DELEGATE: the body (NULL for an empty ActivityAction). */
const wfm_node *wfm_node_child(const wfm_node *node, unsigned prop);
size_t wfm_node_count(const wfm_node *node, unsigned prop); /* ACTIVITIES, NODES, KEYED, PARAMS */
const wfm_node *wfm_node_at(const wfm_node *node, unsigned prop, size_t index);
const wf_value *wfm_node_key(const wfm_node *node, unsigned prop, size_t index); /* KEYED */
const wf_value *wfm_node_literal(const wfm_node *node, unsigned prop); /* LITERAL; null value
                                                                         when absent */
/* IN/OUT/INOUT/LITERAL: the value type; TYPE: the named type (NULL for a clr-namespace type);
 * DELEGATE: the argument type (NULL when the ActivityAction has no x:TypeArguments). */
const wf_type *wfm_node_prop_type(const wfm_node *node, unsigned prop);
/* TYPE: the text as written ("p:Any"; "" when absent) and its prefix ("p"; NULL when
 * unprefixed or absent). */
const char *wfm_node_type_text(const wfm_node *node, unsigned prop);
const char *wfm_node_type_prefix(const wfm_node *node, unsigned prop);
/* PARAMS: the direction and type of parameter `index`. */
wfm_prop_kind wfm_node_param_dir(const wfm_node *node, unsigned prop, size_t index);
const wf_type *wfm_node_param_type(const wfm_node *node, unsigned prop, size_t index);
/* PARAMS: the x:Key of parameter `index` (a message parameter's name in the messaging
 * activities' ReceiveParametersContent / SendParametersContent), NULL when it has none. */
const char *wfm_node_param_key(const wfm_node *node, unsigned prop, size_t index);
/* x:Name as written, NULL when the element has none. */
const char *wfm_node_x_name(const wfm_node *node);
/* Data a prepare callback attached (owned by the node, destroyed with the definition). */
void wfm_node_set_data(wfm_node *node, void *data, void (*destroy)(void *data));
void *wfm_node_data(const wfm_node *node);

/* ---- load time (prepare callbacks) ------------------------------------------------------ */
void wfm_load_error(wfm_load *load, const wfm_node *node, wf_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void wfm_load_warning(wfm_load *load, const wfm_node *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const wf_libpath *wfm_load_libpath(const wfm_load *load); /* NULL if none configured */
/* Validate-only load (wfm_load_opts.check_native): open no native library. */
bool wfm_load_validate_only(const wfm_load *load);
/* Validate-only: the loader's caller checks a native call against its declaration. */
wf_status wfm_load_check_native(wfm_load *load, const char *library, const char *symbol,
                                const wf_native_sig *sig, wf_error *err);
wf_types *wfm_load_types(const wfm_load *load);
/* The assembly NAME an xmlns prefix in scope at `node` maps to
 * ("clr-namespace:NS;Assembly=NAME"); NULL if the prefix is not a clr-namespace. */
const char *wfm_load_assembly(const wfm_load *load, const wfm_node *node, const char *prefix);
/* The raw text of an attribute of the node's element that the spec does not describe (for
 * kinds with open-ended attributes such as Interop's property names); NULL if absent. The
 * loader reports unknown attributes as errors unless a prepare callback claims them with this
 * function. */
const char *wfm_load_claim_attr(wfm_load *load, const wfm_node *node, const char *name);
/* Dynamic arguments (from a `bind` callback only). Claim attribute `name` of the node's
 * element and append it to PARAMS property `prop` as a parameter of direction `dir`
 * (WFM_PROP_IN, _OUT, _INOUT) and type `type`, bound exactly like a declared argument:
 * "[expr]" compiled in the node's scope (Out/InOut: a location of a compatible type), {x:Null},
 * or (In only) a literal converted to `type`; problems are reported at the attribute with
 * file:line:col. *index receives the parameter's index for wfm_ctx_get_param /
 * wfm_ctx_set_param, or SIZE_MAX when the attribute is absent or was reported. Returns
 * WF_E_NOMEM when memory ran out, else WF_OK. */
wf_status wfm_load_bind_attr(wfm_load *load, wfm_node *node, unsigned prop, const char *name,
                             wfm_prop_kind dir, const wf_type *type, size_t *index);
/* The next attribute of the node's element no spec member describes and nothing claimed yet
 * (document order): claims it and returns its name (and *at, optional, the location of its
 * value), or NULL when none is left. For a kind that reports such attributes itself. */
const char *wfm_load_next_attr(wfm_load *load, const wfm_node *node, wf_loc *at);
/* wfm_load_error at a location inside the node's element (an attribute's value): reported
 * even when the node already has an error, so a kind can report every bad attribute. */
void wfm_load_error_at(wfm_load *load, const wfm_node *node, wf_loc at, wf_status code,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif

/* wf_xml.h — hardened XML loading into a small read-only DOM that keeps line AND column for
 * every element and attribute (libxml2's tree keeps lines only). Parsing goes through
 * libxml2's SAX2 interface with network access off, no DTD loading, no external entities,
 * any DOCTYPE rejected, and limits on size, depth and node count. Only UTF-8 input (with or
 * without a byte order mark); columns count characters from 1 (a tab is one column). */
#ifndef WF_XML_H
#define WF_XML_H

#include <stdbool.h>
#include <stddef.h>

#include "wf_error.h"

typedef struct wf_xml_doc wf_xml_doc;

typedef struct wf_xml_attr {
    const char *prefix; /* NULL when unprefixed */
    const char *name;   /* local name */
    const char *ns;     /* namespace URI; NULL for unprefixed attributes */
    const char *value;  /* entity- and char-reference-decoded */
    unsigned line, col; /* of the attribute name */
    unsigned value_line, value_col; /* of the first character inside the quotes */
} wf_xml_attr;

typedef struct wf_xml_nsdecl {
    const char *prefix; /* NULL for the default namespace */
    const char *uri;
} wf_xml_nsdecl;

typedef struct wf_xml_node wf_xml_node;
struct wf_xml_node {
    const char *prefix; /* NULL when unprefixed */
    const char *name;   /* local name, e.g. "Sequence" or "Sequence.Variables" */
    const char *ns;     /* namespace URI, NULL if none */
    unsigned line, col; /* of the '<' */
    wf_xml_node *parent;
    wf_xml_node *first_child; /* elements only */
    wf_xml_node *next;
    size_t child_count;
    wf_xml_attr *attrs;
    size_t attr_count;
    wf_xml_nsdecl *nsdecls; /* declared on this element */
    size_t nsdecl_count;
    const char *text;   /* concatenated character data and CDATA directly inside this element
                           (not in children), "" if none */
    unsigned text_line, text_col; /* of the first non-blank text character, 0 if none */
};

typedef struct wf_xml_limits {
    size_t max_bytes;    /* default 64 MiB */
    unsigned max_depth;  /* default 256 */
    size_t max_nodes;    /* default 1,000,000 */
} wf_xml_limits;

#define WF_XML_LIMITS_INIT {.max_bytes = 0, .max_depth = 0, .max_nodes = 0} /* 0: the default */

/* Load and parse. `path` is used for error locations and is copied into the doc.
 * Errors: WF_E_IO (cannot read), WF_E_XML (malformed, DOCTYPE present, bad encoding) with
 * line:col, WF_E_LIMIT. On failure *out is NULL. */
wf_status wf_xml_load_file(const char *path, const wf_xml_limits *limits, wf_xml_doc **out,
                           wf_error *err);
wf_status wf_xml_load_mem(const char *name, const char *data, size_t len,
                          const wf_xml_limits *limits, wf_xml_doc **out, wf_error *err);
void wf_xml_doc_destroy(wf_xml_doc *doc);

const wf_xml_node *wf_xml_root(const wf_xml_doc *doc);
const char *wf_xml_path(const wf_xml_doc *doc); /* lives as long as the doc */
/* The location of a node/attribute as a wf_loc (file = the doc's path). */
wf_loc wf_xml_node_loc(const wf_xml_doc *doc, const wf_xml_node *node);
wf_loc wf_xml_attr_loc(const wf_xml_doc *doc, const wf_xml_attr *attr);
wf_loc wf_xml_value_loc(const wf_xml_doc *doc, const wf_xml_attr *attr);
wf_loc wf_xml_text_loc(const wf_xml_doc *doc, const wf_xml_node *node);

/* Resolve a prefix (NULL or "" = default namespace) in scope at node; NULL if undeclared.
 * "xml" resolves to the XML namespace. */
const char *wf_xml_lookup_ns(const wf_xml_node *node, const char *prefix);
/* Find an attribute by namespace (NULL = unprefixed) and local name. */
const wf_xml_attr *wf_xml_attr_find(const wf_xml_node *node, const char *ns, const char *name);
/* True if the text is empty or whitespace only. */
bool wf_xml_text_blank(const char *text);
/* Split "prefix:local" into a namespace URI (looked up at node) and local name. A name
 * without a prefix uses the default namespace. Returns false if the prefix is undeclared. */
bool wf_xml_resolve_qname(const wf_xml_node *node, const char *qname, const char **ns,
                          const char **local, size_t *local_len);

#endif

/* test_xml.c — the hardened XML loader: exact line:col of elements, attributes, values and
 * text on a multi-line fixture; namespaces; every refusal (DOCTYPE/XXE, billion laughs,
 * malformed input, encodings, limits) with status, line, col and message; out of memory. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_xml.h"
#include "../wf_test_util.h"

#define DATA "tests/common/data/"

static wf_xml_doc *load_ok(const char *path)
{
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_msg(wf_xml_load_file(path, NULL, &doc, &err) == WF_OK, "%s", err.message);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

static const wf_xml_node *child(const wf_xml_node *n, const char *name)
{
    for (const wf_xml_node *c = n->first_child; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    ck_abort_msg("no child %s", name);
    return NULL;
}

START_TEST(test_columns_of_elements_attributes_text)
{
    wf_xml_doc *doc = load_ok(DATA "columns.xml");
    const wf_xml_node *root = wf_xml_root(doc);
    ck_assert_str_eq(root->name, "Activity");
    ck_assert_str_eq(root->ns, "urn:a");
    ck_assert_uint_eq(root->line, 3);
    ck_assert_uint_eq(root->col, 1);
    ck_assert_uint_eq(root->child_count, 2);
    const wf_xml_attr *cls = wf_xml_attr_find(root, "urn:x", "Class");
    ck_assert_ptr_nonnull(cls);
    ck_assert_str_eq(cls->value, "Demo");
    ck_assert_uint_eq(cls->line, 4);
    ck_assert_uint_eq(cls->col, 11);
    ck_assert_uint_eq(cls->value_col, 20);
    const wf_xml_attr *name = wf_xml_attr_find(root, NULL, "Name");
    ck_assert_str_eq(name->value, "\xC3\xA9&q"); /* &amp; decoded */
    ck_assert_uint_eq(name->col, 27);
    ck_assert_uint_eq(name->value_line, 4);
    ck_assert_uint_eq(name->value_col, 35); /* after a single-quote, spaces around '=' */
    wf_loc at = wf_xml_attr_loc(doc, name);
    ck_assert_str_eq(at.file, DATA "columns.xml");
    const wf_xml_node *seq = child(root, "Sequence");
    ck_assert_uint_eq(seq->line, 5);
    ck_assert_uint_eq(seq->col, 3);
    ck_assert_uint_eq(wf_xml_attr_find(seq, NULL, "DisplayName")->col, 13);
    ck_assert_uint_eq(seq->text_line, 7); /* the CDATA content comes first */
    ck_assert_uint_eq(seq->text_col, 23);
    ck_assert_ptr_nonnull(strstr(seq->text, " <raw> "));
    ck_assert_ptr_nonnull(strstr(seq->text, "after"));
    const wf_xml_node *item = child(seq, "Item");
    ck_assert_str_eq(item->prefix, "x");
    ck_assert_uint_eq(item->line, 6);
    ck_assert_uint_eq(item->col, 2); /* a tab is one column */
    ck_assert_str_eq(item->text, "  hello <world>  ");
    ck_assert_uint_eq(item->text_col, 12);
    const wf_xml_node *empty = child(seq, "Empty");
    ck_assert_uint_eq(empty->col, 5);
    ck_assert_str_eq(empty->text, "");
    ck_assert_uint_eq(empty->text_line, 0);
    const wf_xml_node *wide = child(root, "Wide");
    ck_assert_uint_eq(wide->line, 10);
    ck_assert_uint_eq(wide->col, 3);
    ck_assert_uint_eq(wide->attrs[0].col, 27); /* columns count characters, not bytes */
    ck_assert_uint_eq(wide->attrs[0].value_col, 34);
    ck_assert_uint_eq(wide->text_col, 37);
    wf_xml_doc_destroy(doc);
}
END_TEST

/* Found by fuzz_xml: markup-like text inside CDATA must not move the column cursor. */
START_TEST(test_cdata_content_is_not_markup)
{
    wf_xml_doc *doc = load_ok(DATA "cdata_markup.xml");
    const wf_xml_node *b = child(wf_xml_root(doc), "b");
    ck_assert_str_eq(b->text, " <?x <c> ");
    ck_assert_uint_eq(b->text_line, 2);
    ck_assert_uint_eq(b->text_col, 16);
    const wf_xml_node *d = child(wf_xml_root(doc), "d");
    ck_assert_uint_eq(d->text_col, 15);
    const wf_xml_node *f = child(d, "f");
    ck_assert_uint_eq(f->line, 3);
    ck_assert_uint_eq(f->col, 24);
    wf_xml_doc_destroy(doc);
}
END_TEST

START_TEST(test_namespaces_resolve_through_parents)
{
    wf_xml_doc *doc = load_ok(DATA "columns.xml");
    const wf_xml_node *root = wf_xml_root(doc);
    const wf_xml_node *item = child(child(root, "Sequence"), "Item");
    ck_assert_str_eq(wf_xml_lookup_ns(item, NULL), "urn:a");
    ck_assert_str_eq(wf_xml_lookup_ns(item, ""), "urn:a");
    ck_assert_str_eq(wf_xml_lookup_ns(item, "x"), "urn:x");
    ck_assert_str_eq(wf_xml_lookup_ns(item, "xml"), "http://www.w3.org/XML/1998/namespace");
    ck_assert_ptr_null(wf_xml_lookup_ns(item, "nope"));
    const char *ns, *local;
    size_t len;
    ck_assert(wf_xml_resolve_qname(item, "x:Thing", &ns, &local, &len));
    ck_assert_str_eq(ns, "urn:x");
    ck_assert_str_eq(local, "Thing");
    ck_assert_uint_eq(len, 5);
    ck_assert(wf_xml_resolve_qname(item, "Plain", &ns, &local, &len));
    ck_assert_str_eq(ns, "urn:a");
    ck_assert(!wf_xml_resolve_qname(item, "zz:Thing", &ns, &local, &len));
    ck_assert_uint_eq(root->nsdecl_count, 2);
    ck_assert(wf_xml_text_blank(" \n\t"));
    ck_assert(!wf_xml_text_blank(" x "));
    wf_xml_doc_destroy(doc);
}
END_TEST

START_TEST(test_load_mem_with_bom_and_crlf)
{
    const char text[] = "\xEF\xBB\xBF<a>\r\n  <b c='1'/>\r\n</a>";
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_int_eq(wf_xml_load_mem("mem.xml", text, sizeof text - 1, NULL, &doc, &err), WF_OK);
    const wf_xml_node *root = wf_xml_root(doc);
    ck_assert_uint_eq(root->col, 1);
    ck_assert_uint_eq(root->first_child->line, 2);
    ck_assert_uint_eq(root->first_child->col, 3);
    ck_assert_uint_eq(root->first_child->attrs[0].value_col, 9);
    ck_assert_str_eq(wf_xml_path(doc), "mem.xml");
    wf_xml_doc_destroy(doc);
}
END_TEST

/* Columns count characters, not bytes, however long the line (twenty two-byte characters
 * here), and a lone '\r' ends a line as "\n" and "\r\n" do. */
START_TEST(test_columns_count_characters_on_long_lines)
{
    char text[256];
    char accents[41];
    for (int i = 0; i < 20; i++)
        memcpy(accents + 2 * i, "\xC3\xA9", 2);
    accents[40] = '\0';
    int len = snprintf(text, sizeof text, "<a t='%s'><b/>\r<c/>\n  <d/></a>", accents);
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_int_eq(wf_xml_load_mem("long.xml", text, (size_t)len, NULL, &doc, &err), WF_OK);
    const wf_xml_node *a = wf_xml_root(doc), *b = a->first_child;
    ck_assert_uint_eq(a->attrs[0].value_col, 7);
    ck_assert_uint_eq(b->line, 1);
    ck_assert_uint_eq(b->col, 29);
    ck_assert_uint_eq(b->next->line, 2);
    ck_assert_uint_eq(b->next->col, 1);
    ck_assert_uint_eq(b->next->next->line, 3);
    ck_assert_uint_eq(b->next->next->col, 3);
    wf_xml_doc_destroy(doc);
}
END_TEST

/* Equal names and namespaces share one copy in the document (the XAML loader looks kinds
 * up by these pointers); the strings are still right. */
START_TEST(test_equal_names_share_one_copy)
{
    static const char text[] = "<a xmlns='urn:x'><b k='1'/><b k='2'/><c/></a>";
    wf_xml_doc *doc = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_xml_load_mem("n.xml", text, sizeof text - 1, NULL, &doc, &err), WF_OK);
    const wf_xml_node *a = wf_xml_root(doc), *b1 = a->first_child, *b2 = b1->next;
    const wf_xml_node *c = b2->next;
    ck_assert_ptr_eq(b1->name, b2->name);
    ck_assert_ptr_eq(a->ns, c->ns);
    ck_assert_ptr_eq(b1->attrs[0].name, b2->attrs[0].name);
    ck_assert_str_eq(b2->name, "b");
    ck_assert_str_eq(c->name, "c");
    ck_assert_str_eq(c->ns, "urn:x");
    ck_assert_str_eq(b2->attrs[0].value, "2");
    wf_xml_doc_destroy(doc);
}
END_TEST

START_TEST(test_clr_namespace_that_is_not_a_uri_loads)
{
    const char text[] = "<RuleDefinitions xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/"
                        "workflow\">\n <x xmlns:ns0=\"clr-namespace:System.CodeDom;Assembly="
                        "System, Version=2.0.0.0, Culture=neutral\" ns0:a=\"1\"/>\n"
                        "</RuleDefinitions>";
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_msg(wf_xml_load_mem("r.rules", text, sizeof text - 1, NULL, &doc, &err) == WF_OK,
                  "%s", err.message);
    const wf_xml_node *x = wf_xml_root(doc)->first_child;
    ck_assert_str_eq(wf_xml_lookup_ns(x, "ns0"),
                     "clr-namespace:System.CodeDom;Assembly=System, Version=2.0.0.0, "
                     "Culture=neutral");
    ck_assert_uint_eq(x->attrs[0].col, 96);
    wf_xml_doc_destroy(doc);
}
END_TEST

static void *load_many(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        wf_error err = WF_ERROR_INIT;
        wf_xml_doc *doc = NULL;
        if (wf_xml_load_file(DATA "columns.xml", NULL, &doc, &err) != WF_OK ||
            wf_xml_root(doc)->child_count != 2)
            return (void *)1;
        wf_xml_doc_destroy(doc);
        if (wf_xml_load_file(DATA "bad/unclosed_tag.xml", NULL, &doc, &err) != WF_E_XML ||
            err.line != 3 || err.col != 8)
            return (void *)1;
    }
    return NULL;
}

/* Loads on several threads at once: libxml2's error handlers are per thread. */
START_TEST(test_concurrent_loads)
{
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, load_many, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *failed = NULL;
        pthread_join(threads[i], &failed);
        ck_assert_ptr_null(failed);
    }
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------ */

static void expect_bad(const char *file, wf_status status, unsigned line, unsigned col,
                       const char *needle)
{
    char path[256];
    snprintf(path, sizeof path, DATA "bad/%s", file);
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_int_eq(wf_xml_load_file(path, NULL, &doc, &err), status);
    ck_assert_ptr_null(doc);
    WF_ASSERT_ERROR(err, status, line, col, needle);
    ck_assert_str_eq(err.file, path);
}

START_TEST(test_doctype_with_external_entity_refused)
{
    expect_bad("doctype_xxe.xml", WF_E_XML, 2, 1, "DOCTYPE is not allowed");
}
END_TEST

START_TEST(test_billion_laughs_refused)
{
    expect_bad("billion_laughs.xml", WF_E_XML, 2, 1, "DOCTYPE");
}
END_TEST

/* Found by fuzz_xml: a DOCTYPE after a broken XML declaration made libxml2 build (and leak)
 * a document for the entity declarations. */
START_TEST(test_doctype_after_bad_declaration_frees_everything)
{
    expect_bad("fuzz_doctype_after_bad_decl.xml", WF_E_XML, 1, 7, "expecting version");
}
END_TEST

START_TEST(test_unclosed_tag_reports_libxml_position)
{
    expect_bad("unclosed_tag.xml", WF_E_XML, 3, 8, "mismatch");
}
END_TEST

START_TEST(test_duplicate_attribute)
{
    expect_bad("duplicate_attribute.xml", WF_E_XML, 2, 17, "redefined");
}
END_TEST

START_TEST(test_undefined_entity)
{
    expect_bad("undefined_entity.xml", WF_E_XML, 2, 17, "undefined");
}
END_TEST

START_TEST(test_undeclared_prefix)
{
    expect_bad("undeclared_prefix.xml", WF_E_XML, 2, 7, "prefix q");
}
END_TEST

START_TEST(test_latin1_declaration_refused)
{
    expect_bad("latin1_encoding.xml", WF_E_XML, 1, 1, "UTF-8");
}
END_TEST

START_TEST(test_invalid_utf8_refused)
{
    expect_bad("invalid_utf8.xml", WF_E_XML, 2, 9, "UTF-8");
}
END_TEST

START_TEST(test_empty_document)
{
    expect_bad("empty.xml", WF_E_XML, 1, 1, "empty");
}
END_TEST

START_TEST(test_missing_file_is_io)
{
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_int_eq(wf_xml_load_file(DATA "no_such.xml", NULL, &doc, &err), WF_E_IO);
    ck_assert_ptr_null(doc);
    ck_assert_ptr_nonnull(strstr(err.message, "cannot open"));
}
END_TEST

/* "s" as UTF-16 with a byte-order mark (little or big endian). */
static size_t to_utf16(const char *s, bool big_endian, char *out)
{
    size_t n = 0;
    out[n++] = big_endian ? '\xFE' : '\xFF';
    out[n++] = big_endian ? '\xFF' : '\xFE';
    for (; *s; s++) {
        out[n++] = big_endian ? 0 : *s;
        out[n++] = big_endian ? *s : 0;
    }
    return n;
}

START_TEST(test_utf16_with_bom_is_transcoded_and_keeps_columns)
{
    const char *text = "<?xml version=\"1.0\" encoding=\"utf-16\"?>\n<root>\n  <item a=\"1\"/>\n</root>";
    for (int be = 0; be <= 1; be++) {
        char u16[256];
        size_t n = to_utf16(text, be, u16);
        wf_error err = WF_ERROR_INIT;
        wf_xml_doc *doc = NULL;
        ck_assert_msg(wf_xml_load_mem("u16.xml", u16, n, NULL, &doc, &err) == WF_OK, "%s",
                      err.message);
        const wf_xml_node *item = wf_xml_root(doc)->first_child;
        ck_assert_str_eq(item->name, "item");
        ck_assert_uint_eq(item->line, 3);
        ck_assert_uint_eq(item->col, 3);
        ck_assert_uint_eq(item->attrs[0].col, 9);
        wf_xml_doc_destroy(doc);
    }
}
END_TEST

START_TEST(test_utf16_label_over_utf8_bytes_loads)
{
    /* .NET tools write encoding="utf-16" over UTF-8 content. */
    const char text[] = "<?xml version=\"1.0\" encoding=\"utf-16\"?>\n<root>caf\xC3\xA9</root>";
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_int_eq(wf_xml_load_mem("label.xml", text, sizeof text - 1, NULL, &doc, &err), WF_OK);
    ck_assert_str_eq(wf_xml_root(doc)->text, "caf\xC3\xA9");
    ck_assert_uint_eq(wf_xml_root(doc)->line, 2);
    wf_xml_doc_destroy(doc);
}
END_TEST

START_TEST(test_utf16_without_bom_is_refused_with_location)
{
    const char text[] = "<\0a\0/\0>\0";
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_int_eq(wf_xml_load_mem("u16.xml", text, sizeof text - 1, NULL, &doc, &err), WF_E_XML);
    ck_assert_uint_eq(err.line, 1);
    ck_assert_ptr_null(doc);
}
END_TEST

/* ---- limits --------------------------------------------------------------------------- */

START_TEST(test_depth_limit)
{
    const char text[] = "<a>\n <b>\n  <c>\n   <d/>\n  </c>\n </b>\n</a>";
    wf_xml_limits lim = {0, 3, 0};
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_int_eq(wf_xml_load_mem("deep.xml", text, sizeof text - 1, &lim, &doc, &err),
                     WF_E_LIMIT);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 4, 4, "deeper than 3");
    ck_assert_ptr_null(doc);
    lim.max_depth = 4;
    wf_error_clear(&err);
    ck_assert_int_eq(wf_xml_load_mem("deep.xml", text, sizeof text - 1, &lim, &doc, &err), WF_OK);
    wf_xml_doc_destroy(doc);
}
END_TEST

START_TEST(test_default_depth_limit_on_deep_document)
{
    wf_buf b;
    wf_buf_init(&b);
    for (int i = 0; i < 300; i++)
        wf_buf_adds(&b, "<e>");
    for (int i = 0; i < 300; i++)
        wf_buf_adds(&b, "</e>");
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_int_eq(wf_xml_load_mem("deep.xml", b.data, b.len, NULL, &doc, &err), WF_E_LIMIT);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 1, 256 * 3 + 1, "256");
    ck_assert_ptr_null(doc);
    wf_buf_fini(&b);
}
END_TEST

START_TEST(test_size_limit)
{
    const char text[] = "<a>0123456789</a>";
    wf_xml_limits lim = {10, 0, 0};
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_int_eq(wf_xml_load_mem("big.xml", text, sizeof text - 1, &lim, &doc, &err),
                     WF_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err.message, "limit is 10"));
    ck_assert_ptr_null(doc);
    wf_error_clear(&err);
    ck_assert_int_eq(wf_xml_load_file(DATA "columns.xml", &lim, &doc, &err), WF_E_LIMIT);
    ck_assert_ptr_null(doc);
}
END_TEST

START_TEST(test_node_limit)
{
    const char text[] = "<a>\n<b x='1'/>\n<c/>\n</a>";
    wf_xml_limits lim = {0, 0, 3};
    wf_error err = WF_ERROR_INIT;
    wf_xml_doc *doc = NULL;
    ck_assert_int_eq(wf_xml_load_mem("n.xml", text, sizeof text - 1, &lim, &doc, &err), WF_E_LIMIT);
    WF_ASSERT_ERROR(err, WF_E_LIMIT, 3, 1, "more than 3 nodes");
    ck_assert_ptr_null(doc);
}
END_TEST

/* ---- nomem ---------------------------------------------------------------------------- */

static wf_status load_columns(void *ud)
{
    (void)ud;
    wf_xml_doc *doc = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status st = wf_xml_load_file(DATA "columns.xml", NULL, &doc, &err);
    ck_assert_int_eq(st, err.code);
    if (st != WF_OK)
        ck_assert_ptr_null(doc);
    wf_xml_doc_destroy(doc);
    return st;
}

START_TEST(test_load_nomem)
{
    ck_assert_uint_gt(wf_test_nomem_loop(load_columns, NULL, 500), 3);
}
END_TEST

Suite *common_xml_suite(void)
{
    Suite *s = suite_create("common_xml");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_utf16_with_bom_is_transcoded_and_keeps_columns);
    tcase_add_test(core, test_utf16_label_over_utf8_bytes_loads);
    tcase_add_test(core, test_columns_of_elements_attributes_text);
    tcase_add_test(core, test_cdata_content_is_not_markup);
    tcase_add_test(core, test_namespaces_resolve_through_parents);
    tcase_add_test(core, test_load_mem_with_bom_and_crlf);
    tcase_add_test(core, test_columns_count_characters_on_long_lines);
    tcase_add_test(core, test_equal_names_share_one_copy);
    tcase_add_test(core, test_clr_namespace_that_is_not_a_uri_loads);
    tcase_add_test(core, test_concurrent_loads);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_doctype_with_external_entity_refused);
    tcase_add_test(bad, test_billion_laughs_refused);
    tcase_add_test(bad, test_doctype_after_bad_declaration_frees_everything);
    tcase_add_test(bad, test_unclosed_tag_reports_libxml_position);
    tcase_add_test(bad, test_duplicate_attribute);
    tcase_add_test(bad, test_undefined_entity);
    tcase_add_test(bad, test_undeclared_prefix);
    tcase_add_test(bad, test_latin1_declaration_refused);
    tcase_add_test(bad, test_invalid_utf8_refused);
    tcase_add_test(bad, test_empty_document);
    tcase_add_test(bad, test_missing_file_is_io);
    tcase_add_test(bad, test_utf16_without_bom_is_refused_with_location);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_depth_limit);
    tcase_add_test(limits, test_default_depth_limit_on_deep_document);
    tcase_add_test(limits, test_size_limit);
    tcase_add_test(limits, test_node_limit);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_load_nomem);
    suite_add_tcase(s, nomem);
    return s;
}

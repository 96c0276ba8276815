/* test_xmlw.c — the common XML/HTML writer (common/wf_xmlw.c): every text written is read back
 * by libxml2; values with markup characters, non-ASCII text, "]]>", control characters and
 * invalid UTF-8 survive or are replaced, comments stay comments, layout, unbalanced calls and
 * out of memory. */
#include <check.h>
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <string.h>

#include "../../common/wf_xmlw.h"
#include "../wf_test_util.h"

static wf_xmlw *make(bool indent, size_t base, bool html)
{
    wf_xmlw_opts o = WF_XMLW_OPTS_INIT;
    o.indent = indent;
    o.base_depth = base;
    o.html = html;
    wf_xmlw *x = NULL;
    ck_assert_int_eq(wf_xmlw_create(&o, &x, NULL), WF_OK);
    return x;
}

/* Finish x into a new string (caller frees) and destroy it. */
static char *finish(wf_xmlw *x)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_error err = {0};
    ck_assert_int_eq(wf_xmlw_finish(x, &b, &err), WF_OK);
    wf_xmlw_destroy(x);
    return wf_buf_detach(&b, NULL);
}

/* Parse text strictly (no recovery); the document or a failed assertion. */
static xmlDoc *parse(const char *text)
{
    xmlDoc *doc = xmlReadMemory(text, (int)strlen(text), "t.xml", NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    ck_assert_msg(doc != NULL, "not well-formed: %s", text);
    return doc;
}

/* The attribute `a` and the text of the root element `r` of text, after a strict parse. */
static void read_back(const char *text, char **attr, char **content)
{
    xmlDoc *doc = parse(text);
    xmlNode *root = xmlDocGetRootElement(doc);
    ck_assert_str_eq((const char *)root->name, "r");
    xmlChar *a = xmlGetProp(root, BAD_CAST "a");
    xmlChar *t = xmlNodeGetContent(root);
    *attr = wf_strdup((const char *)a);
    *content = wf_strdup((const char *)t);
    xmlFree(a);
    xmlFree(t);
    xmlFreeDoc(doc);
}

static void write_value(wf_xmlw *x, const char *value)
{
    wf_xmlw_open(x, "r");
    wf_xmlw_attr(x, "a", value);
    wf_xmlw_text(x, value);
    wf_xmlw_close(x);
}

static void expect_round_trip(const char *value, const char *want)
{
    wf_xmlw *x = make(true, 0, false);
    wf_xmlw_declaration(x);
    write_value(x, value);
    char *text = finish(x);
    char *attr, *content;
    read_back(text, &attr, &content);
    ck_assert_str_eq(attr, want);
    ck_assert_str_eq(content, want);
    wf_free(attr);
    wf_free(content);
    wf_free(text);
}

START_TEST(test_markup_and_unicode_round_trip)
{
    const char *v = "a <b> & \"c\" 'd' ]]> \xC3\xA9 \xE7\xA2\xBA\xE8\xAA\x8D\n\tend\r";
    expect_round_trip(v, v);
}
END_TEST

/* The hand-written escaping wrote U+0001 as "&#1;", which XML 1.0 forbids: no parser read
 * such a file. Characters XML cannot carry become U+FFFD. */
START_TEST(test_control_characters_and_bad_utf8_are_replaced)
{
    expect_round_trip("a\x01"
                      "b\x1F"
                      "c",
                      "a\xEF\xBF\xBD"
                      "b\xEF\xBF\xBD"
                      "c");
    expect_round_trip("x\xC3(y\xFFz", "x\xEF\xBF\xBD(y\xEF\xBF\xBDz");
    expect_round_trip("\xEF\xBF\xBE.\xC2\x85",
                      "\xEF\xBF\xBD.\xC2\x85"); /* U+FFFE is none, U+0085 is */
}
END_TEST

START_TEST(test_a_name_that_is_not_an_xml_name_fails)
{
    const char *bad[] = {"a b", "1st", "x\x01", "", "a:b:c"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        wf_xmlw *x = make(true, 0, false);
        wf_xmlw_open(x, "r");
        wf_xmlw_attr(x, bad[i], "v");
        wf_xmlw_close(x);
        wf_buf b;
        wf_buf_init(&b);
        wf_error err = {0};
        ck_assert_int_eq(wf_xmlw_finish(x, &b, &err), WF_E_NAME);
        ck_assert_ptr_nonnull(strstr(err.message, "not an XML name"));
        ck_assert_uint_eq(b.len, 0);
        wf_buf_fini(&b);
        wf_xmlw_destroy(x);
    }
    wf_xmlw *x = make(false, 0, false);
    wf_xmlw_open(x, "x:Property");
    wf_xmlw_attr(x, "xmlns:x", "urn:x");
    wf_xmlw_attr(x, "this:Order.Amount", "[1]");
    wf_xmlw_close(x);
    char *text = finish(x);
    ck_assert_str_eq(text, "<x:Property xmlns:x=\"urn:x\" this:Order.Amount=\"[1]\"/>");
    wf_free(text);
}
END_TEST

START_TEST(test_comment_text_cannot_end_the_comment)
{
    wf_xmlw *x = make(true, 0, false);
    wf_xmlw_comment(x, "a -- b --->-");
    wf_xmlw_open(x, "r");
    wf_xmlw_close(x);
    char *text = finish(x);
    ck_assert_str_eq(text, "<!-- a - - b - - ->- -->\n<r/>\n");
    xmlFreeDoc(parse(text));
    wf_free(text);
}
END_TEST

START_TEST(test_indentation_and_base_depth)
{
    wf_xmlw *x = make(true, 2, false);
    wf_xmlw_open(x, "Sequence");
    wf_xmlw_attr(x, "DisplayName", "s\xC3\xA9"); /* non-ASCII as it is, not as &#xE9; */
    wf_xmlw_leaf(x, "InArgument", "[a]");
    wf_xmlw_open(x, "Delay");
    wf_xmlw_close(x);
    wf_xmlw_close(x);
    char *text = finish(x);
    ck_assert_str_eq(text, "    <Sequence DisplayName=\"s\xC3\xA9\">\n"
                           "      <InArgument>[a]</InArgument>\n"
                           "      <Delay/>\n"
                           "    </Sequence>\n");
    wf_free(text);
}
END_TEST

START_TEST(test_markup_from_another_writer_nests)
{
    wf_xmlw *inner = make(true, 2, false);
    wf_xmlw_leaf(inner, "c", "t");
    char *block = finish(inner);
    for (int empty_first = 0; empty_first < 2; empty_first++) {
        wf_xmlw *x = make(true, 0, false);
        wf_xmlw_open(x, "a");
        wf_xmlw_open(x, "b");
        if (empty_first)
            wf_xmlw_raw(x, ""); /* nothing, but the start tag is ended */
        wf_xmlw_raw(x, block);
        wf_xmlw_close(x);
        wf_xmlw_close(x);
        char *text = finish(x);
        ck_assert_str_eq(text, "<a>\n  <b>\n    <c>t</c>\n  </b>\n</a>\n");
        wf_free(text);
    }
    wf_free(block);
}
END_TEST

START_TEST(test_same_calls_same_bytes)
{
    char *texts[2];
    for (int i = 0; i < 2; i++) {
        wf_xmlw *x = make(true, 0, false);
        write_value(x, "v\xC3\xA9");
        texts[i] = finish(x);
    }
    ck_assert_str_eq(texts[0], texts[1]);
    wf_free(texts[0]);
    wf_free(texts[1]);
}
END_TEST

START_TEST(test_html_page_closes_every_element)
{
    wf_xmlw *x = make(false, 0, true);
    wf_xmlw_html_begin(x, "T <1>", "p{color:red}");
    wf_xmlw_html_open(x, "table", NULL);
    wf_xmlw_html_open(x, "tr", "row");
    wf_xmlw_html_cell(x, "td", NULL, "");
    wf_xmlw_html_cell(x, "td", "n", "x&y");
    wf_xmlw_close(x);
    wf_xmlw_close(x);
    wf_xmlw_html_end(x);
    char *text = finish(x);
    ck_assert_ptr_nonnull(strstr(text, "<!DOCTYPE html>\n<html lang=\"en\">"));
    ck_assert_ptr_nonnull(strstr(text, "<meta charset=\"utf-8\"/>"));
    ck_assert_ptr_nonnull(strstr(text, "<title>T &lt;1&gt;</title>"));
    ck_assert_ptr_nonnull(
        strstr(text, "<tr class=\"row\"><td></td><td class=\"n\">x&amp;y</td></tr>"));
    ck_assert_ptr_nonnull(strstr(text, "</body>\n</html>\n"));
    xmlFreeDoc(parse(text)); /* also well-formed XML */
    wf_free(text);
}
END_TEST

START_TEST(test_unbalanced_calls_write_nothing)
{
    wf_buf b;
    wf_buf_init(&b);
    wf_error err = {0};
    wf_xmlw *x = make(true, 0, false);
    wf_xmlw_open(x, "r");
    ck_assert_int_eq(wf_xmlw_finish(x, &b, &err), WF_E_STATE);
    wf_xmlw_destroy(x);
    x = make(true, 0, false);
    wf_xmlw_open(x, "r");
    wf_xmlw_text(x, "t");
    wf_xmlw_attr(x, "late", "v"); /* an attribute after content */
    wf_xmlw_close(x);
    ck_assert(wf_xmlw_failed(x));
    ck_assert_int_eq(wf_xmlw_finish(x, &b, &err), WF_E_STATE);
    wf_xmlw_destroy(x);
    x = make(true, 0, false);
    wf_xmlw_close(x);
    ck_assert_int_eq(wf_xmlw_finish(x, &b, &err), WF_E_STATE);
    wf_xmlw_destroy(x);
    ck_assert_uint_eq(b.len, 0);
    wf_buf_fini(&b);
}
END_TEST

static wf_status write_op(void *ud)
{
    (void)ud;
    wf_xmlw_opts o = WF_XMLW_OPTS_INIT;
    o.indent = true;
    wf_xmlw *x = NULL;
    wf_status st = wf_xmlw_create(&o, &x, NULL);
    if (st != WF_OK)
        return st;
    write_value(x, "a\x01b"); /* the cleaning allocates too */
    wf_buf b;
    wf_buf_init(&b);
    st = wf_xmlw_finish(x, &b, NULL);
    wf_xmlw_destroy(x);
    wf_buf_fini(&b);
    return st;
}

START_TEST(test_out_of_memory_is_reported)
{
    ck_assert_uint_gt(wf_test_nomem_loop(write_op, NULL, 50), 1);
}
END_TEST

Suite *common_xmlw_suite(void)
{
    Suite *s = suite_create("xmlw");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_markup_and_unicode_round_trip);
    tcase_add_test(core, test_a_name_that_is_not_an_xml_name_fails);
    tcase_add_test(core, test_comment_text_cannot_end_the_comment);
    tcase_add_test(core, test_indentation_and_base_depth);
    tcase_add_test(core, test_markup_from_another_writer_nests);
    tcase_add_test(core, test_same_calls_same_bytes);
    tcase_add_test(core, test_html_page_closes_every_element);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_control_characters_and_bad_utf8_are_replaced);
    tcase_add_test(bad, test_unbalanced_calls_write_nothing);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_out_of_memory_is_reported);
    suite_add_tcase(s, nomem);
    return s;
}

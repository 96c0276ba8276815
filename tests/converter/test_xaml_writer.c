/* test_xaml_writer.c — the converter's deterministic XML writer (converter/wfc_xaml_writer.c):
 * layout, escaping, the nesting limit, a name that is not an XML name, and running out of
 * memory. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../converter/wfc_xaml_writer.h"
#include "../wf_test_util.h"

static void write_sample(wfc_xw *w)
{
    wfc_xw_comment(w, "a -- b");
    wfc_xw_open(w, "Sequence");
    wfc_xw_attr(w, "DisplayName", "a \"<&>\" b\n");
    wfc_xw_open(w, "Delay");
    wfc_xw_attr(w, "Duration", "00:00:01");
    wfc_xw_close(w);
    wfc_xw_leaf_text(w, "InArgument", "[a < b && c]");
    wfc_xw_close(w);
}

START_TEST(test_layout_and_escaping_are_fixed)
{
    wf_buf b;
    wf_buf_init(&b);
    wfc_xw w;
    wfc_xw_init(&w, &b, 1);
    write_sample(&w);
    ck_assert(wfc_xw_ok(&w));
    ck_assert(wfc_xw_finish(&w));
    ck_assert_str_eq(b.data, "  <!-- a - - b -->\n"
                             "  <Sequence DisplayName=\"a &quot;&lt;&amp;&gt;&quot; b&#10;\">\n"
                             "    <Delay Duration=\"00:00:01\"/>\n"
                             "    <InArgument>[a &lt; b &amp;&amp; c]</InArgument>\n"
                             "  </Sequence>\n");
    wf_buf_fini(&b);
}
END_TEST

/* The converter's two-writer document: a body written first at depth 1, then the head whose
 * root element takes it as content. */
START_TEST(test_body_placed_in_the_document)
{
    wf_buf body, doc;
    wf_buf_init(&body);
    wf_buf_init(&doc);
    wfc_xw w;
    wfc_xw_init(&w, &body, 1);
    wfc_xw_leaf_text(&w, "WriteLine", "caf\xC3\xA9 \x01");
    ck_assert(wfc_xw_finish(&w));
    wfc_xw_init(&w, &doc, 0);
    wfc_xw_declaration(&w);
    wfc_xw_comment(&w, "converted");
    wfc_xw_open(&w, "Activity");
    wfc_xw_attr(&w, "x:Class", "W");
    wfc_xw_markup(&w, body.data);
    wfc_xw_close(&w);
    ck_assert(wfc_xw_finish(&w));
    ck_assert_str_eq(doc.data, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                               "<!-- converted -->\n"
                               "<Activity x:Class=\"W\">\n"
                               "  <WriteLine>caf\xC3\xA9 \xEF\xBF\xBD</WriteLine>\n"
                               "</Activity>\n");
    wf_buf_fini(&body);
    wf_buf_fini(&doc);
}
END_TEST

START_TEST(test_unbalanced_calls_are_not_ok)
{
    wf_buf b;
    wf_buf_init(&b);
    wfc_xw w;
    wfc_xw_init(&w, &b, 0);
    wfc_xw_open(&w, "Sequence");
    ck_assert(!wfc_xw_ok(&w)); /* still open */
    wfc_xw_close(&w);
    ck_assert(wfc_xw_ok(&w));
    wfc_xw_close(&w);
    ck_assert(!wfc_xw_ok(&w));
    ck_assert(!wfc_xw_finish(&w));
    ck_assert_int_eq(w.err.code, WF_E_STATE);
    ck_assert_uint_eq(b.len, 0); /* nothing half-written */
    wf_buf_fini(&b);
}
END_TEST

START_TEST(test_nesting_beyond_the_limit_is_reported)
{
    wf_buf b;
    wf_buf_init(&b);
    wfc_xw w;
    wfc_xw_init(&w, &b, 0);
    for (int i = 0; i < WFC_XW_MAX_DEPTH; i++)
        wfc_xw_open(&w, "Sequence");
    ck_assert(!w.too_deep);
    wfc_xw_open(&w, "Sequence");
    ck_assert(w.too_deep);
    ck_assert(!wfc_xw_ok(&w));
    ck_assert(!wfc_xw_finish(&w));
    ck_assert_int_eq(w.err.code, WF_E_LIMIT);
    wf_buf_fini(&b);
}
END_TEST

/* A name that is not an XML name (an attribute from a property "1st", a prefixed element
 * whose local part starts with a digit) is the writer's error, kind and name, not "out of
 * memory"; nothing is appended. */
START_TEST(test_bad_name_is_reported_as_such)
{
    static const char *const bad[][2] = {{"Sequence", "1st"}, {"t0:1Step", "DisplayName"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wf_buf b;
        wf_buf_init(&b);
        wfc_xw w;
        wfc_xw_init(&w, &b, 1);
        wfc_xw_open(&w, bad[i][0]);
        wfc_xw_attr(&w, bad[i][1], "[x]");
        wfc_xw_close(&w);
        ck_assert(!wfc_xw_ok(&w));
        ck_assert(!wfc_xw_finish(&w));
        ck_assert_int_eq(w.err.code, WF_E_NAME);
        char want[64];
        snprintf(want, sizeof want, "'%s' is not an XML name", i ? bad[i][0] : bad[i][1]);
        ck_assert_str_eq(w.err.message, want);
        ck_assert_uint_eq(b.len, 0);
        wf_buf_fini(&b);
    }
}
END_TEST

static wf_status write_op(void *ud)
{
    (void)ud;
    wf_buf b;
    wf_buf_init(&b);
    wfc_xw w;
    wfc_xw_init(&w, &b, 2);
    write_sample(&w);
    bool ok = wfc_xw_finish(&w);
    wf_buf_fini(&b);
    return ok ? WF_OK : WF_E_NOMEM;
}

START_TEST(test_out_of_memory_is_seen_at_the_end)
{
    ck_assert_uint_gt(wf_test_nomem_loop(write_op, NULL, 50), 0);
}
END_TEST

Suite *xaml_writer_suite(void)
{
    Suite *s = suite_create("xaml_writer");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_layout_and_escaping_are_fixed);
    tcase_add_test(core, test_body_placed_in_the_document);
    tcase_add_test(core, test_unbalanced_calls_are_not_ok);
    tcase_add_test(core, test_bad_name_is_reported_as_such);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_nesting_beyond_the_limit_is_reported);
    suite_add_tcase(s, limits);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_out_of_memory_is_seen_at_the_end);
    suite_add_tcase(s, nomem);
    return s;
}

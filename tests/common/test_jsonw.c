/* test_jsonw.c — the JSON writer: the three output forms, number tokens kept exact (Decimal,
 * Double round-trip, Int64 extremes), strings escaped by jansson (controls, unicode, invalid
 * UTF-8), a token that input text cannot forge, wf_values as the output contract writes them,
 * and out of memory. Every text written is read back by jansson. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "../../common/wf_jsonw.h"
#include "../wf_test_util.h"

/* Dump, check jansson reads the text back, and return it (caller frees with wf_free). */
static char *dump(json_t *root, unsigned flags)
{
    ck_assert_ptr_nonnull(root);
    wf_buf b;
    wf_buf_init(&b);
    ck_assert(wf_jsonw_dump(root, flags, &b));
    json_error_t je;
    size_t flags_in = JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL |
                      JSON_ALLOW_NUL; /* integers beyond Int64 (Decimal tokens) read as reals */
    json_t *back = json_loads(b.data, flags_in, &je);
    ck_assert_msg(back != NULL, "%s: %s", b.data, je.text);
    json_decref(back);
    json_decref(root);
    return wf_buf_detach(&b, NULL);
}

static void expect(json_t *root, unsigned flags, const char *want)
{
    char *text = dump(root, flags);
    ck_assert_str_eq(text, want);
    wf_free(text);
}

START_TEST(test_three_forms)
{
    const char *fmt = "{s:i, s:[i, b, n], s:{}, s:[]}";
    expect(json_pack(fmt, "a", 1, "b", 2, 1, "c", "d"), WF_JSONW_COMPACT,
           "{\"a\":1,\"b\":[2,true,null],\"c\":{},\"d\":[]}");
    expect(json_pack(fmt, "a", 1, "b", 2, 1, "c", "d"), WF_JSONW_SPACED,
           "{\"a\": 1, \"b\": [2, true, null], \"c\": {}, \"d\": []}");
    expect(json_pack(fmt, "a", 1, "b", 2, 1, "c", "d"), WF_JSONW_INDENT,
           "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    true,\n    null\n  ],\n  \"c\": {},\n"
           "  \"d\": []\n}");
    expect(json_pack(fmt, "a", 1, "b", 2, 1, "c", "d"), WF_JSONW_INDENT_TO(1),
           "{\n  \"a\": 1,\n  \"b\": [2, true, null],\n  \"c\": {},\n  \"d\": []\n}");
    /* members keep the order they were set in */
    expect(json_pack("{s:i, s:i, s:i}", "z", 1, "a", 2, "m", 3), WF_JSONW_COMPACT,
           "{\"z\":1,\"a\":2,\"m\":3}");
}
END_TEST

START_TEST(test_decimal_tokens_are_exact)
{
    const char *texts[] = {"0.1", "79228162514264337593543950335", "-79228162514264337593543950335",
                           "12.5000", "0.0000000000000000000000000001", "0"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        wf_decimal d;
        ck_assert_int_eq(wf_decimal_parse(texts[i], &d), WF_OK);
        json_t *tok = wf_jsonw_decimal(d);
        ck_assert(wf_jsonw_is_token(tok));
        char *text = dump(json_pack("[o]", tok), WF_JSONW_COMPACT);
        ck_assert_int_eq(strncmp(text + 1, texts[i], strlen(texts[i])), 0);
        ck_assert_str_eq(text + 1 + strlen(texts[i]), "]");
        wf_free(text);
    }
}
END_TEST

START_TEST(test_integers_and_doubles)
{
    expect(json_pack("[I, I, i, i]", (json_int_t)INT64_MIN, (json_int_t)INT64_MAX, INT32_MIN,
                     INT32_MAX),
           WF_JSONW_COMPACT,
           "[-9223372036854775808,9223372036854775807,-2147483648,2147483647]");
    /* a Double as the runtimes print it, shortest round-trip; non-finite as strings */
    expect(json_pack("[o, o, o, o]", wf_jsonw_double(0.1), wf_jsonw_double(1e300),
                     wf_jsonw_double(-2.5), wf_jsonw_double(1.0 / 0.0)),
           WF_JSONW_COMPACT, "[0.1,1E+300,-2.5,\"Infinity\"]");
}
END_TEST

START_TEST(test_strings_escaped_by_jansson)
{
    expect(wf_jsonw_str("q\"b\\s/\n\r\t\x01\x1f"), 0, "\"q\\\"b\\\\s/\\n\\r\\t\\u0001\\u001F\"");
    /* unicode as UTF-8; invalid bytes become U+FFFD; a NUL byte inside is kept escaped */
    expect(wf_jsonw_str("caf\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x82\xAC"), 0,
           "\"caf\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x82\xAC\"");
    expect(wf_jsonw_str("a\xFF" "b\xC3"), 0, "\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\"");
    expect(wf_jsonw_str("\xED\xA0\x80"), 0, "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
    expect(wf_jsonw_strn("a\0b", 3), 0, "\"a\\u0000b\"");
    expect(wf_jsonw_str(NULL), 0, "null");
    /* keys too */
    expect(json_pack("{s:i}", "k\"\n\xC3\xA9", 1), 0, "{\"k\\\"\\n\xC3\xA9\": 1}");
    json_t *obj = json_object();
    ck_assert(wf_jsonw_set(obj, "bad\xFFkey", json_true()));
    ck_assert(!wf_jsonw_set(obj, "none", NULL));
    expect(obj, 0, "{\"bad\xEF\xBF\xBDkey\": true}");
}
END_TEST

START_TEST(test_token_cannot_be_forged_from_text)
{
    /* the token mark is a byte no string node can hold: text carrying it stays a string */
    json_t *s = wf_jsonw_str("\xFF" "42");
    ck_assert(!wf_jsonw_is_token(s));
    expect(s, 0, "\"\xEF\xBF\xBD" "42\"");
    ck_assert_ptr_null(json_string("\xFF" "42"));
    /* and jansson's own dump refuses a tree holding a token instead of writing it quoted */
    json_t *arr = json_pack("[o]", wf_jsonw_number("1.50"));
    ck_assert_ptr_null(json_dumps(arr, 0));
    json_decref(arr);
}
END_TEST

START_TEST(test_number_grammar_enforced)
{
    const char *good[] = {"0", "-0", "1.5", "1e5", "1E+5", "-12.25e-3", "79228162514264337593543950335"};
    const char *bad[] = {"", "-", "01", "1.", ".5", "1e", "+1", "NaN", "1 ", "0x10", "1,5"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        json_t *j = wf_jsonw_number(good[i]);
        ck_assert_msg(j != NULL, "%s", good[i]);
        json_decref(j);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(wf_jsonw_number(bad[i]) == NULL, "%s", bad[i]);
}
END_TEST

START_TEST(test_raw_text_checked_and_kept)
{
    const char *state = "{\"amount\": 79228162514264337593543950335, \"x\": [1.50, \"s\"]}\n";
    expect(json_pack("{s:o}", "state", wf_jsonw_raw(state, strlen(state))), WF_JSONW_COMPACT,
           "{\"state\":{\"amount\": 79228162514264337593543950335, \"x\": [1.50, \"s\"]}}");
    const char *bad[] = {"", "{", "{\"a\": 1} {", "[1,]", "{\"a\":1,\"a\":2}", "nul"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(wf_jsonw_raw(bad[i], strlen(bad[i])) == NULL, "%s", bad[i]);
}
END_TEST

static wf_value sample_value(void)
{
    wf_decimal dec;
    ck_assert_int_eq(wf_decimal_parse("12.50", &dec), WF_OK);
    wf_value items[3] = {wf_dec(dec), wf_double(0.5), wf_int64(INT64_MIN)};
    wf_value list, s, inner;
    ck_assert_int_eq(wf_value_list(&wf_type_list_object, items, 3, &list), WF_OK);
    ck_assert_int_eq(wf_value_string("\xC3\xA9\n\"", 4, &s), WF_OK);
    const char *keys[] = {"list", "s", "when", "span", "none", "yes"};
    wf_value vals[] = {list, s, wf_datetime_us(0), wf_timespan_us(1500000), wf_null(),
                       wf_bool(true)};
    ck_assert_int_eq(wf_value_record(keys, vals, 6, &inner), WF_OK);
    wf_value_release(&list);
    wf_value_release(&s);
    return inner;
}

START_TEST(test_values_as_the_contract_writes_them)
{
    wf_value v = sample_value();
    wf_buf old;
    wf_buf_init(&old);
    ck_assert(wf_value_to_json(&v, &old));
    char *text = dump(wf_jsonw_value(&v, false), WF_JSONW_SPACED);
    ck_assert_str_eq(text, old.data); /* the documented form, byte for byte */
    ck_assert_ptr_nonnull(strstr(text, "\"12.50\""));
    wf_free(text);
    text = dump(wf_jsonw_value(&v, true), WF_JSONW_COMPACT);
    ck_assert_ptr_nonnull(strstr(text, "[12.50,0.5,-9223372036854775808]"));
    wf_free(text);
    wf_buf_fini(&old);
    wf_value_release(&v);
}
END_TEST

static wf_status build_op(void *ud)
{
    const wf_value *v = ud;
    json_t *root = json_pack("{s:o, s:o, s:o}", "v", wf_jsonw_value(v, true), "s",
                             wf_jsonw_str("a\xFF"), "d", wf_jsonw_double(0.25));
    if (!root)
        return WF_E_NOMEM;
    wf_buf b;
    wf_buf_init(&b);
    bool ok = wf_jsonw_dump(root, WF_JSONW_INDENT, &b);
    json_decref(root);
    wf_buf_fini(&b);
    return ok ? WF_OK : WF_E_NOMEM;
}

START_TEST(test_build_and_dump_nomem)
{
    wf_value v = sample_value();
    ck_assert_uint_gt(wf_test_nomem_loop(build_op, &v, 300), 10);
    wf_value_release(&v);
}
END_TEST

Suite *common_jsonw_suite(void)
{
    Suite *s = suite_create("common_jsonw");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_three_forms);
    tcase_add_test(core, test_decimal_tokens_are_exact);
    tcase_add_test(core, test_integers_and_doubles);
    tcase_add_test(core, test_strings_escaped_by_jansson);
    tcase_add_test(core, test_values_as_the_contract_writes_them);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_add_test(bad, test_token_cannot_be_forged_from_text);
    tcase_add_test(bad, test_number_grammar_enforced);
    tcase_add_test(bad, test_raw_text_checked_and_kept);
    suite_add_tcase(s, bad);
    TCase *nomem = tcase_create("nomem");
    tcase_add_test(nomem, test_build_and_dump_nomem);
    suite_add_tcase(s, nomem);
    return s;
}

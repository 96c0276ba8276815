/* test_event_payload.c — the one event payload rule (docs/formats.md "Event payloads",
 * common/wf_payload.c): the legacy workflow and its conversion take the same payloads to the
 * same outputs, and every verb refuses the same payloads (exit 2, nothing resumed). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_payload.h"
#include "../../modern/wfm_store.h"
#include "../wf_test_util.h"

#define DATA "tests/bridge/data/payload"

static char tmp[512];

/* `wfbridge ARGS` with WFBRIDGE_LIB_PATH at the fixtures and tmp; its exit code. */
#define cli(fmt, ...)                                                                             \
    wf_test_shell_cli(tmp, 60, fmt, ##__VA_ARGS__)

static char *slurp(const char *name)
{
    char *text = wf_test_read_file(wf_test_path(tmp, name), NULL);
    ck_assert_msg(text != NULL, "%s missing", name);
    return text;
}

static void assert_in(const char *name, const char *needle)
{
    char *text = slurp(name);
    ck_assert_msg(strstr(text, needle) != NULL, "'%s' not in %s:\n%s", needle, name, text);
    wf_free(text);
}

static void setup(void)
{
    snprintf(tmp, sizeof tmp, "%s", wf_test_tmpdir());
    char lp[1200];
    snprintf(lp, sizeof lp, DATA ":%s", tmp);
    setenv("WFBRIDGE_LIB_PATH", lp, 1);
    ck_assert_int_eq(cli("convert " DATA "/approval.xoml -o %s", wf_test_path(tmp, "a.xaml")), 0);
    ck_assert_int_eq(cli("convert " DATA "/filed.xoml -o %s", wf_test_path(tmp, "f.xaml")), 0);
}

static void teardown(void)
{
    unsetenv("WFBRIDGE_LIB_PATH");
    wf_test_tmpdir_remove(tmp);
}

/* Run the legacy workflow with --event and the converted one with --resume on the same
 * payloads; both outputs must hold `want`. */
static void same_outputs(const char *legacy, const char *converted, const char *events,
                         const char *want)
{
    char lev[1024] = "", mres[1024] = "";
    for (const char *e = events; *e;) { /* events: "NAME=PAYLOAD\n"... */
        size_t len = strcspn(e, "\n");
        snprintf(lev + strlen(lev), sizeof lev - strlen(lev), " --event '%.*s'", (int)len, e);
        snprintf(mres + strlen(mres), sizeof mres - strlen(mres), " --resume '%.*s'", (int)len,
                 e);
        e += len + (e[len] == '\n');
    }
    ck_assert_int_eq(cli("run-legacy " DATA "/%s --json%s", legacy, lev), 0);
    assert_in("stdout", want);
    ck_assert_int_eq(cli("run %s --json%s", wf_test_path(tmp, converted), mres), 0);
    assert_in("stdout", want);
}

/* ---- core ------------------------------------------------------------------------------ */
/* A parameter bound by its own name receives the field, not the whole object, after
 * conversion as before it; the bare value of a one-parameter event is the same thing. */
START_TEST(test_fields_bind_alike)
{
    same_outputs("approval.xoml", "a.xaml",
                 "Approved={\"Approver\": \"ann\"}\nAmended={\"Approver\": \"bo\", \"Amount\": 12.50}",
                 "\"Approver\": \"ann\", \"Amount\": \"12.5\"");
    same_outputs("approval.xoml", "a.xaml", "Approved=ann\nAmended={\"Amount\": 3}",
                 "\"Approver\": \"ann\", \"Amount\": \"3\"");
}
END_TEST

/* One parameter e of type Record: an object whose keys are not parameter names is e's value;
 * {"e": ...} is the keyed form. */
START_TEST(test_record_parameter_alike)
{
    same_outputs("filed.xoml", "f.xaml", "Filed={\"Approver\": \"ann\"}",
                 "\"Details\": {\"Approver\": \"ann\"}");
    same_outputs("filed.xoml", "f.xaml", "Filed={\"e\": {\"x\": 1}}", "\"Details\": {\"x\": 1}");
}
END_TEST

/* ---- bad_input ---------------------------------------------------------------------------- */
typedef struct refused {
    const char *event, *payload, *why;
} refused;

static const refused refusals[] = {
    {"Approved", "{\"x\": 1}", "parameter Approver is String, not a JSON object"},
    {"Approved", "[\"ann\"]", "parameter Approver is String, not a JSON array"},
    {"Amended", "bob", "give them as a JSON object keyed by parameter name"},
    {"Amended", "{\"Bogus\": 1}", "no parameter 'Bogus'"},
    {"Amended", "{\"Amount\": \"lots\"}", "parameter Amount: 'lots' is not a valid Decimal"},
};

/* run-legacy --event, run --resume, resume --bookmark and verify's event scripts refuse the
 * same payloads with the same reason (exit 2). The first event is delivered well so that the second
 * one meets a waiting workflow in every verb. */
START_TEST(test_every_verb_refuses_alike)
{
    const refused *r = &refusals[_i];
    const char *first = strcmp(r->event, "Amended") == 0 ? "Approved=ann" : NULL;
    char events[512];
    snprintf(events, sizeof events, "%s%s%s=%s", first ? first : "", first ? "' --event '" : "",
             r->event, r->payload);
    ck_assert_int_eq(cli("run-legacy " DATA "/approval.xoml --event '%s'", events), 2);
    assert_in("stderr", r->why);
    snprintf(events, sizeof events, "%s%s%s=%s", first ? first : "", first ? "' --resume '" : "",
             r->event, r->payload);
    ck_assert_int_eq(cli("run %s --resume '%s'", wf_test_path(tmp, "a.xaml"), events), 2);
    assert_in("stderr", r->why);
    /* resume --bookmark of a stored instance: refused, the instance still waits */
    const char *store = wf_test_path(tmp, "s.db");
    ck_assert_int_eq(cli("run %s --store %s --json", wf_test_path(tmp, "a.xaml"), store), 0);
    char *started = slurp("stdout");
    char *id = strstr(started, "\"id\": \"");
    ck_assert_ptr_nonnull(id);
    id += 7;
    id[strcspn(id, "\"")] = '\0';
    if (first)
        ck_assert_int_eq(cli("resume %s --store %s --bookmark %s", id, store, first), 0);
    ck_assert_int_eq(cli("resume %s --store %s --bookmark '%s=%s'", id, store, r->event,
                         r->payload),
                     2);
    assert_in("stderr", r->why);
    ck_assert_int_eq(cli("inspect %s --store %s", id, store), 0);
    char bookmark[128];
    snprintf(bookmark, sizeof bookmark, "\"bookmarks\": [\"IApprovalService.%s\"]", r->event);
    assert_in("stdout", bookmark);
    wf_free(started);
    /* verify with an event script */
    char script[512];
    snprintf(script, sizeof script, "[%s{\"event\": \"%s\", \"payload\": \"%s\"}]",
             first ? "{\"event\": \"Approved\", \"payload\": \"ann\"}, " : "", r->event,
             r->payload[0] == '{' || r->payload[0] == '[' ? "" : r->payload);
    if (r->payload[0] == '{' || r->payload[0] == '[') /* the payload as JSON, not a string */
        snprintf(script, sizeof script, "[%s{\"event\": \"%s\", \"payload\": %s}]",
                 first ? "{\"event\": \"Approved\", \"payload\": \"ann\"}, " : "", r->event,
                 r->payload);
    wf_test_write_file(tmp, "events.json", script);
    int rc = cli("verify " DATA "/approval.xoml --lib-path " DATA
                 " --generate 1 --json --keep %s --events %s",
                 wf_test_path(tmp, "keep"), wf_test_path(tmp, "events.json"));
    ck_assert_int_eq(rc, 2); /* an input error of the script, before any case runs */
    assert_in("stderr", "events.json: error: event ");
    assert_in("stderr", r->why);
}
END_TEST

/* The converted Record-parameter event is hosted through Interop: run --resume refuses what
 * run-legacy --event refuses, before delivering. */
START_TEST(test_interop_refuses_alike)
{
    static const char *const payloads[] = {"{\"e\": 5}", "text"};
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(cli("run-legacy " DATA "/filed.xoml --event 'Filed=%s'", payloads[i]), 2);
        assert_in("stderr", "parameter e: ");
        ck_assert_int_eq(cli("run %s --resume 'Filed=%s'", wf_test_path(tmp, "f.xaml"),
                             payloads[i]),
                         2);
        assert_in("stderr", "cannot take this payload: parameter e: ");
    }
}
END_TEST

/* A queued resumption (resume while another host holds the instance) that the rule refuses is
 * dropped by the host that applies the queue, not delivered; the next one is applied. */
START_TEST(test_host_drops_refused_queued_payload)
{
    const char *store = wf_test_path(tmp, "q.db");
    char path[600];
    snprintf(path, sizeof path, "%s", store);
    ck_assert_int_eq(cli("run %s --store %s --json", wf_test_path(tmp, "a.xaml"), path), 0);
    char *started = slurp("stdout");
    char *id = strstr(started, "\"id\": \"");
    ck_assert_ptr_nonnull(id);
    id += 7;
    id[strcspn(id, "\"")] = '\0';
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = path;
    so.owner = "holder";
    wfm_store *s = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_store_open(&so, &s, &err), WF_OK);
    ck_assert_int_eq(wfm_store_lock(s, id, &err), WF_OK);
    ck_assert_int_eq(cli("resume %s --store %s --bookmark 'Approved={\"x\": 1}'", id, path), 0);
    assert_in("stdout", "queued (#1)");
    ck_assert_int_eq(cli("resume %s --store %s --bookmark 'Approved=ann'", id, path), 0);
    assert_in("stdout", "queued (#2)");
    ck_assert_int_eq(wfm_store_release(s, id, &err), WF_OK);
    wfm_store_close(s);
    ck_assert_int_eq(cli("host --store %s --once --json", path), 0);
    ck_assert_int_eq(cli("inspect %s --store %s --json", id, path), 0);
    assert_in("stdout", "\"status\": \"Idle\"");
    assert_in("stdout", "\"Approver\":\"ann\"");
    assert_in("stdout", "\"bookmarks\": [\"IApprovalService.Amended\"]");
    wf_free(started);
}
END_TEST

/* ---- the rule itself ---------------------------------------------------------------------- */
START_TEST(test_bind_keyed_bare_and_refused)
{
    wf_types *types = wf_types_create();
    ck_assert_ptr_nonnull(types);
    wf_payload_param one[] = {{"e", wf_types_find(types, "Record")}};
    wf_value v, out;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_json_parse(types, "{\"e\": 5}", 8, &v, &err), WF_OK);
    ck_assert_int_eq(wf_payload_bind(&v, one, 1, &out, &err), WF_E_TYPE); /* keyed, not a record */
    ck_assert(wf_is_null(&out));
    wf_value_release(&v);
    wf_payload_param two[] = {{"A", wf_types_find(types, "Int32")}, {"B", NULL}};
    ck_assert_int_eq(wf_json_parse(types, "{}", 2, &v, &err), WF_OK);
    ck_assert_int_eq(wf_payload_bind(&v, two, 2, &out, &err), WF_OK); /* nothing given */
    ck_assert_uint_eq(wf_value_record_count(&out), 0);
    wf_value_release(&out);
    wf_value_release(&v);
    ck_assert_int_eq(wf_json_parse(types, "{\"B\": [1], \"A\": 2}", 18, &v, &err), WF_OK);
    ck_assert_int_eq(wf_payload_bind(&v, two, 2, &out, &err), WF_OK);
    ck_assert_str_eq(wf_value_record_key(&out, 0), "A"); /* declaration order */
    ck_assert_int_eq(wf_value_record_at(&out, 0)->u.i32, 2);
    wf_value_release(&out);
    wf_value_release(&v);
    wf_value s;
    ck_assert_int_eq(wf_value_cstring("x", &s), WF_OK);
    ck_assert_int_eq(wf_payload_bind(&s, two, 2, &out, &err), WF_E_TYPE);
    ck_assert_int_eq(wf_payload_bind(&s, NULL, 0, &out, &err), WF_E_TYPE);
    ck_assert_int_eq(wf_payload_bind(NULL, NULL, 0, &out, &err), WF_OK);
    wf_value_release(&out);
    wf_value_release(&s);
    wf_types_destroy(types);
}
END_TEST

Suite *event_payload_suite(void)
{
    Suite *s = suite_create("event_payload");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, test_fields_bind_alike);
    tcase_add_test(core, test_record_parameter_alike);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("bad_input");
    tcase_set_timeout(bad, 240);
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_loop_test(bad, test_every_verb_refuses_alike, 0,
                        (int)(sizeof refusals / sizeof refusals[0]));
    tcase_add_test(bad, test_interop_refuses_alike);
    tcase_add_test(bad, test_host_drops_refused_queued_payload);
    suite_add_tcase(s, bad);
    TCase *rule = tcase_create("rule");
    tcase_add_test(rule, test_bind_keyed_bare_and_refused);
    suite_add_tcase(s, rule);
    return s;
}

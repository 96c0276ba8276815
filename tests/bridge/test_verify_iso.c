/* test_verify_iso.c — `wfbridge verify` on native code that keeps state and misbehaves
 * (bridge/wfb_verify_iso.c, docs/verify.md "Isolation"): every run starts from the same native
 * state, a crash, an abort(), an exit() and an endless loop are outcomes compared, shrunk and
 * reported like any other, and verify removes its temporary files, also when it is stopped by
 * a signal. The library is tests/bridge/libs/holdorders; the workflow hold_order.xoml. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../bridge/wfb_verify.h"
#include "../../common/wf_mem.h"
#include "../wf_test_util.h"

#define HOLD_XOML  "tests/bridge/data/verify_iso/hold_order.xoml"
#define HOLD_CASES "tests/bridge/data/verify_iso/hold_cases.json"

typedef struct cli {
    int status; /* from waitpid */
    char *out, *err;
} cli;

/* Run build/bin/wfbridge ARGS with TMPDIR=tmp (when given); stdout and stderr kept. With
 * stop_when (a directory), SIGTERM is sent once an entry named wfb-verify-* shows in it. */
static void run(const char *const *args, const char *tmp, const char *stop_when, cli *res)
{
    const char *dir = wf_test_tmpdir();
    char exe[1024], out[1200], err[1200];
    snprintf(exe, sizeof exe, "%s/bin/wfbridge", wf_test_build_dir());
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    const char *argv[64] = {exe};
    for (size_t i = 0; args[i]; i++)
        argv[i + 1] = args[i];
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (tmp)
            setenv("TMPDIR", tmp, 1);
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    for (bool sent = !stop_when; !sent;) {
        DIR *d = opendir(stop_when);
        for (struct dirent *e; d && !sent && (e = readdir(d));)
            if (strncmp(e->d_name, "wfb-verify-", 11) == 0)
                sent = kill(pid, SIGTERM) == 0;
        if (d)
            closedir(d);
        if (!sent)
            usleep(20000);
    }
    ck_assert_int_eq(waitpid(pid, &res->status, 0), pid);
    res->out = wf_test_read_file(out, NULL);
    res->err = wf_test_read_file(err, NULL);
    wf_test_tmpdir_remove(dir);
}

static void cli_fini(cli *c)
{
    wf_free(c->out);
    wf_free(c->err);
}

/* The last line of stdout as JSON. */
static json_t *last_json(const cli *c)
{
    const char *last = c->out;
    for (const char *p = c->out; *p; p++)
        if (*p == '\n' && p[1])
            last = p + 1;
    json_error_t je;
    json_t *j = json_loads(last, 0, &je);
    ck_assert_msg(j != NULL, "not JSON: %s", last);
    return j;
}

static char *read_in(const char *dir, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = wf_test_read_file(path, NULL);
    ck_assert_msg(text != NULL, "missing %s", path);
    return text;
}

static size_t count_entries(const char *dir, const char *prefix)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* ---- the engine: wfb_vpool -------------------------------------------------------------- */
typedef struct hold {
    wf_libpath *lp;
    wfb_vlegacy *l;
    wfb_vpool *pool;
} hold;

static void hold_load(hold *h, double timeout_s, bool in_process)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(wf_test_lib_dir(), &h->lp, &err), WF_OK);
    ck_assert_msg(wfb_vlegacy_load(HOLD_XOML, NULL, h->lp, 20000, NULL, &h->l, &err) == WF_OK,
                  "%s", err.message);
    wfb_vpool_opts po = WFB_VPOOL_OPTS_INIT;
    po.jobs = 2;
    po.timeout_s = timeout_s;
    po.in_process = in_process;
    ck_assert_int_eq(wfb_vpool_create(&po, &h->pool, &err), WF_OK);
}

static void hold_unload(hold *h)
{
    wfb_vpool_destroy(h->pool);
    wfb_vlegacy_destroy(h->l);
    wf_libpath_destroy(h->lp);
}

/* A case of hold_order.xoml: Sku (NULL: null), Quantity, Mode. */
static void hold_case(wfb_vcase *c, const char *sku, int quantity, int mode)
{
    wf_error err = WF_ERROR_INIT;
    char text[64];
    memset(c, 0, sizeof *c);
    c->name = wf_strdup("c");
    snprintf(text, sizeof text, "\"%s\"", sku ? sku : "");
    ck_assert_int_eq(wfb_vcase_set(c, "Sku", sku ? text : "null", &err), WF_OK);
    snprintf(text, sizeof text, "%d", quantity);
    ck_assert_int_eq(wfb_vcase_set(c, "Quantity", text, &err), WF_OK);
    snprintf(text, sizeof text, "%d", mode);
    ck_assert_int_eq(wfb_vcase_set(c, "Mode", text, &err), WF_OK);
}

static int32_t sequence_of(const wfb_vobs *o)
{
    for (size_t i = 0; i < o->output_count; i++)
        if (strcmp(o->output_names[i], "Sequence") == 0)
            return o->output_values[i].u.i32;
    ck_abort_msg("no Sequence output");
    return -1;
}

/* Two runs of a case in this process: the second sees the first one's audit counter. In the
 * pool, both get sequence 1 and the same journal. */
START_TEST(test_verify_iso_each_run_starts_from_the_same_native_state)
{
    for (int in_process = 1; in_process >= 0; in_process--) {
        hold h;
        hold_load(&h, 10, in_process);
        wfb_vcase c;
        hold_case(&c, "BLUE", 2, 0);
        wfb_vobs a, b;
        wf_error err = WF_ERROR_INIT;
        ck_assert_int_eq(wfb_vpool_submit(h.pool, h.l, NULL, &c, &a, &err), WF_OK);
        ck_assert_int_eq(wfb_vpool_submit(h.pool, h.l, NULL, &c, &b, &err), WF_OK);
        ck_assert_int_eq(wfb_vpool_wait(h.pool, &err), WF_OK);
        ck_assert_str_eq(a.status, "Closed");
        ck_assert_str_eq(b.status, "Closed");
        ck_assert_int_eq(sequence_of(&a), 1);
        ck_assert_int_eq(sequence_of(&b), in_process ? 2 : 1);
        ck_assert_uint_eq(a.call_count, 7);
        /* the log handle: the lowest free descriptor, the same in every fresh run even with
         * another run going on beside it (its pipe is not inherited) */
        ck_assert(in_process ? !wf_value_equal(&a.calls[6].out[0], &b.calls[6].out[0])
                             : wf_value_equal(&a.calls[6].out[0], &b.calls[6].out[0]));
        ck_assert_ptr_nonnull(a.hits); /* the whole observation came back */
        wfb_vobs_fini(&a);
        wfb_vobs_fini(&b);
        wfb_vcase_fini(&c);
        hold_unload(&h);
    }
}
END_TEST

/* Each misbehaviour is an outcome naming the call that never returned, with the calls made
 * up to it (In values), and verify's process lives on. */
START_TEST(test_verify_iso_crash_abort_exit_and_hang_are_outcomes)
{
    static const struct {
        const char *sku;
        int quantity, mode;
        const char *status, *type, *message;
        size_t calls;
    } want[] = {
        {NULL, 1, 0, "Crashed", "SIGSEGV", "crashed: SIGSEGV in ho_price_order", 6},
        {"BLUE", -1, 0, "Crashed", "SIGABRT", "crashed: SIGABRT in ho_check_stock", 3},
        {"BLUE", 1, 3, "Exited", "exit 3", "exited with status 3 in ho_shutdown", 5},
        {"BLUE", 1, 7, "TimedOut", "timeout",
         "timed out after 0.5 s (last native call: ho_wait_ready)", 4},
    };
    hold h;
    hold_load(&h, 0.5, false);
    size_t n = sizeof want / sizeof *want;
    wfb_vcase c[4];
    wfb_vobs o[4];
    wf_error err = WF_ERROR_INIT;
    for (size_t i = 0; i < n; i++) {
        hold_case(&c[i], want[i].sku, want[i].quantity, want[i].mode);
        ck_assert_int_eq(wfb_vpool_submit(h.pool, h.l, NULL, &c[i], &o[i], &err), WF_OK);
    }
    ck_assert_int_eq(wfb_vpool_wait(h.pool, &err), WF_OK);
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(o[i].status, want[i].status);
        ck_assert_str_eq(o[i].fault_type, want[i].type);
        ck_assert_str_eq(o[i].fault_message, want[i].message);
        ck_assert_uint_eq(o[i].call_count, want[i].calls);
        ck_assert_str_eq(o[i].calls[0].function, "ho_audit");
        ck_assert_uint_eq(o[i].calls[0].in_count, 1);
        ck_assert_str_eq(wf_value_str(&o[i].calls[0].in[0]), "hold review");
        wfb_vobs_fini(&o[i]);
        wfb_vcase_fini(&c[i]);
    }
    hold_unload(&h);
}
END_TEST

/* Two runs that crash alike compare equal; a crash against a normal end is a status
 * divergence that shows how the run ended. */
START_TEST(test_verify_iso_crashes_compare_like_outcomes)
{
    hold h;
    hold_load(&h, 10, false);
    wfb_vcase crash, fine;
    hold_case(&crash, NULL, 1, 0);
    hold_case(&fine, "BLUE", 1, 0);
    wfb_vobs a, b, ok;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfb_vpool_submit(h.pool, h.l, NULL, &crash, &a, &err), WF_OK);
    ck_assert_int_eq(wfb_vpool_submit(h.pool, h.l, NULL, &crash, &b, &err), WF_OK);
    ck_assert_int_eq(wfb_vpool_submit(h.pool, h.l, NULL, &fine, &ok, &err), WF_OK);
    ck_assert_int_eq(wfb_vpool_wait(h.pool, &err), WF_OK);
    bool equal = false;
    wfb_vdiff d;
    ck_assert_int_eq(wfb_vcompare(&a, &b, 0, &equal, &d, &err), WF_OK);
    ck_assert(equal);
    ck_assert_int_eq(wfb_vcompare(&a, &ok, 0, &equal, &d, &err), WF_OK);
    ck_assert(!equal);
    ck_assert_str_eq(d.what, "status");
    ck_assert_str_eq(d.legacy, "crashed: SIGSEGV in ho_price_order");
    ck_assert_str_eq(d.modern, "Closed");
    wfb_vdiff_fini(&d);
    wfb_vobs_fini(&a);
    wfb_vobs_fini(&b);
    wfb_vobs_fini(&ok);
    wfb_vcase_fini(&crash);
    wfb_vcase_fini(&fine);
    hold_unload(&h);
}
END_TEST

/* ---- null inputs: the generator and the shrinker ------------------------------------------- */
#define ORDER_XOML "samples/legacy/order_processing/order_processing.xoml"
#define ORDER_XAML "tests/bridge/data/verify/order_processing.xaml"

typedef struct order {
    wf_libpath *lp;
    wfb_vlegacy *l;
    wfb_vmodern *m;
} order;

static void order_open(order *p)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wf_libpath_create(wf_test_sample_lib_dir(), &p->lp, &err), WF_OK);
    ck_assert_int_eq(wfb_vlegacy_load(ORDER_XOML, NULL, p->lp, 20000, NULL, &p->l, &err), WF_OK);
    size_t len;
    char *text = wf_test_read_file(ORDER_XAML, &len);
    ck_assert_int_eq(wfb_vmodern_load(ORDER_XAML, text, len, p->lp, 20000, NULL, &p->m, &err),
                     WF_OK);
    wf_free(text);
}

static void order_close(order *p)
{
    wfb_vmodern_destroy(p->m);
    wfb_vlegacy_destroy(p->l);
    wf_libpath_destroy(p->lp);
}

/* 100 cases at a null rate (no feedback): how many String inputs were null; every input's
 * JSON into texts[case] (non-String ones only, with strings blanked). */
static size_t nulls_at(order *p, double rate, char texts[100][512])
{
    wf_error err = WF_ERROR_INIT;
    wfb_vgen *g = NULL;
    ck_assert_int_eq(wfb_vgen_create(p->m, p->l, 7, &g, &err), WF_OK);
    wfb_vgen_set_null_rate(g, rate);
    size_t nulls = 0;
    for (size_t i = 0; i < 100; i++) {
        wfb_vcase c;
        ck_assert_int_eq(wfb_vgen_next(g, i, NULL, 0, &c, &err), WF_OK);
        texts[i][0] = '\0';
        for (size_t k = 0; k < c.input_count; k++) {
            bool is_null = strcmp(c.inputs[k].json, "null") == 0;
            bool is_string = is_null || c.inputs[k].json[0] == '"';
            nulls += is_null;
            if (!is_string || strchr("0123456789-", c.inputs[k].json[1])) /* Decimal */
                strncat(texts[i], c.inputs[k].json, 511 - strlen(texts[i]));
        }
        wfb_vcase_fini(&c);
    }
    wfb_vgen_destroy(g);
    return nulls;
}

/* Null is generated for String inputs at the rate asked (never at 0, always at 1), and
 * the other inputs of a seed do not depend on the rate. */
START_TEST(test_verify_iso_generator_makes_nulls_at_its_rate)
{
    order p;
    order_open(&p);
    static char none[100][512], some[100][512], all[100][512];
    ck_assert_uint_eq(nulls_at(&p, 0, none), 0);
    size_t n = nulls_at(&p, WFB_VGEN_NULL_RATE, some);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_lt(n, 60); /* 100 cases of 2 String inputs, 5 % */
    /* OrderId and Sku, every time but in gen-1, which leaves its inputs out */
    ck_assert_uint_eq(nulls_at(&p, 1, all), 198);
    for (size_t i = 0; i < 100; i++) {
        ck_assert_str_eq(none[i], some[i]);
        ck_assert_str_eq(none[i], all[i]);
    }
    order_close(&p);
}
END_TEST

/* An oracle that diverges for any OrderId, and one only for a null (or absent) one. */
typedef struct seen_null {
    bool only_null;
    size_t null_trials;
} seen_null;

static wf_status order_id_oracle(void *ud, const wfb_vcase *c, bool *diverges, wf_error *err)
{
    (void)err;
    seen_null *o = ud;
    const char *id = NULL;
    for (size_t i = 0; i < c->input_count; i++)
        if (strcmp(c->inputs[i].name, "OrderId") == 0)
            id = c->inputs[i].json;
    bool is_null = !id || strcmp(id, "null") == 0;
    o->null_trials += is_null;
    *diverges = !o->only_null || is_null;
    return WF_OK;
}

START_TEST(test_verify_iso_shrinker_tries_null_last)
{
    order p;
    order_open(&p);
    wf_error err = WF_ERROR_INIT;
    for (int only_null = 0; only_null <= 1; only_null++)
        for (int no_null = 0; no_null <= 1; no_null++) {
            wfb_vcase c = {.name = wf_strdup("c")};
            ck_assert_int_eq(wfb_vcase_set(&c, "OrderId", only_null ? "null" : "\"SO-77\"", &err),
                             WF_OK);
            seen_null o = {.only_null = only_null};
            wfb_vshrink_opts so = {.max_tries = 300, .no_null = no_null};
            ck_assert_int_eq(wfb_vshrink_with(&c, p.m, order_id_oracle, &o, &so, &err), WF_OK);
            if (only_null && no_null) /* nothing non-null diverges: it stays as it was */
                ck_assert_str_eq(c.inputs[0].json, "null");
            else if (only_null) /* left out: its default, null, comes before an explicit one */
                ck_assert_uint_eq(c.input_count, 0);
            else /* "" diverges already: null is never needed */
                ck_assert_str_eq(c.inputs[0].json, "\"\"");
            if (no_null || !only_null)
                ck_assert_uint_eq(o.null_trials, 0);
            wfb_vcase_fini(&c);
        }
    order_close(&p);
}
END_TEST

/* Generated nulls reach the null dereference of the holdorders library: both sides crash
 * alike, verify says equivalent and counts the crashed runs. */
START_TEST(test_verify_iso_generated_nulls_reach_the_crash)
{
    const char *args[] = {"verify",    HOLD_XOML,   "--lib-path", wf_test_lib_dir(),
                          "--generate", "50",       "--timeout",  "1",
                          NULL};
    cli r;
    run(args, NULL, NULL, &r);
    ck_assert_msg(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "legacy runs that did not end by themselves: "), "%s", r.out);
    cli_fini(&r);
    const char *bad[] = {"verify", HOLD_XOML, "--null-rate", "1.5", NULL};
    run(bad, NULL, NULL, &r);
    ck_assert_int_eq(WEXITSTATUS(r.status), 2);
    ck_assert_msg(strstr(r.err, "--null-rate needs a number from 0 to 1"), "%s", r.err);
    cli_fini(&r);
}
END_TEST

/* ---- the verb ------------------------------------------------------------------------------ */
/* The honest conversion is equivalent in every case, crashes and hangs included; every run
 * reads audit sequence 1; the JSON and the JUnit report are complete. */
START_TEST(test_verify_iso_honest_conversion_is_equivalent)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    char junit[1200];
    snprintf(junit, sizeof junit, "%s/verify.xml", dir);
    const char *args[] = {"verify",    HOLD_XOML, "--lib-path", wf_test_lib_dir(), "--cases",
                          HOLD_CASES,  "--json",  "--keep",     dir,               "--junit",
                          junit,       "--timeout", "0.5",      NULL};
    cli r;
    run(args, dir, NULL, &r);
    ck_assert_msg(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    json_t *j = last_json(&r);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "equivalent");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "cases")), 6);
    json_decref(j);
    static const char *const blue[] = {"hold_order.blue.legacy.json",
                                       "hold_order.blue.converted.json",
                                       "hold_order.blue.interop.json"};
    for (size_t i = 0; i < 3; i++) {
        char *text = read_in(dir, blue[i]);
        ck_assert_msg(strstr(text, "\"in\": [\"hold review\"], \"out\": [1]}"), "%s", text);
        wf_free(text);
    }
    char *text = read_in(dir, "hold_order.no sku.converted.json");
    ck_assert_msg(strstr(text, "\"crashed: SIGSEGV in ho_price_order\""), "%s", text);
    wf_free(text);
    text = read_in(dir, "hold_order.device down.legacy.json");
    ck_assert_msg(strstr(text, "\"timed out after 0.5 s (last native call: ho_wait_ready)\""),
                  "%s", text);
    wf_free(text);
    text = read_in(dir, "verify.xml");
    size_t cases = 0;
    for (const char *p = text; (p = strstr(p, "<testcase ")); p++)
        cases++;
    ck_assert_uint_eq(cases, 12); /* 6 cases, 2 modes */
    ck_assert_ptr_nonnull(strstr(text, "name=\"no sku [interop]\""));
    wf_free(text);
    ck_assert_uint_eq(count_entries(dir, "wfb-verify-"), 0);
    cli_fini(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A converted workflow that no longer passes the Sku to the price lookup: the legacy run
 * crashes where the converted one closes. The divergence names the crash and its shrunk case
 * still crashes the legacy library. */
START_TEST(test_verify_iso_one_sided_crash_is_a_divergence)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    char xaml[1200];
    snprintf(xaml, sizeof xaml, "%s/hold.xaml", dir);
    const char *conv[] = {"convert", HOLD_XOML, "--lib-path", wf_test_lib_dir(), "-o", xaml,
                          NULL};
    char *err = NULL;
    ck_assert_msg(wf_test_run_cli(conv, &err) == 0, "%s", err ? err : "");
    wf_free(err);
    char *text = wf_test_read_file(xaml, NULL);
    char *at = NULL; /* the last [Sku]: the price lookup's */
    for (char *p = text; (p = strstr(p, "x:String\">[Sku]<")); p++)
        at = p;
    ck_assert_ptr_nonnull(at);
    memcpy(at + 10, "GOLD ", 5); /* the literal "GOLD " in place of [Sku] */
    wf_test_write_file(dir, "hold.xaml", text);
    wf_free(text);
    const char *cases = wf_test_write_file(
        dir, "cases.json",
        "[{\"name\": \"no sku\", \"inputs\": {\"Sku\": null, \"Quantity\": 4, \"Mode\": 0}}]");
    const char *args[] = {"verify", HOLD_XOML, "--lib-path", wf_test_lib_dir(), "--cases",
                          cases,    "--json",  "--keep",     dir,               "--converted",
                          xaml,     NULL};
    cli r;
    run(args, dir, NULL, &r);
    ck_assert_msg(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1, "%s", r.err);
    json_t *j = last_json(&r);
    json_t *d = json_array_get(json_object_get(j, "divergences"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(d, "mode")), "converted");
    ck_assert_str_eq(json_string_value(json_object_get(d, "legacy")),
                     "crashed: SIGSEGV in ho_price_order");
    ck_assert_str_eq(json_string_value(json_object_get(d, "modern")), "Closed");
    const char *path = json_string_value(json_object_get(d, "shrunk"));
    ck_assert_ptr_nonnull(path);
    char shrunk[1200];
    snprintf(shrunk, sizeof shrunk, "%s", path);
    ck_assert_str_eq(strrchr(shrunk, '/'), "/hold_order.converted.shrunk.json");
    json_decref(j);
    /* the shrunk case is a --cases file that still crashes the legacy run */
    const char *again[] = {"verify", HOLD_XOML, "--lib-path", wf_test_lib_dir(), "--cases",
                           shrunk,   "--converted", xaml, "--keep", dir, NULL};
    cli r2;
    run(again, dir, NULL, &r2);
    ck_assert_int_eq(WEXITSTATUS(r2.status), 1);
    cli_fini(&r2);
    cli_fini(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A 578-byte call text that differs at byte 312: the table shows a window around the first
 * difference and where it is; --json has the whole text. The journal handler of the converted
 * workflow gets a constant of 300 'A's and a 'B' in place of the Sku. */
START_TEST(test_verify_iso_long_values_are_shortened_at_the_difference)
{
    char dir[1024], xaml[1200], long_sku[400];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(xaml, sizeof xaml, "%s/hold.xaml", dir);
    const char *conv[] = {"convert", HOLD_XOML, "--lib-path", wf_test_lib_dir(), "-o", xaml,
                          NULL};
    ck_assert_int_eq(wf_test_run_cli(conv, NULL), 0);
    char *text = wf_test_read_file(xaml, NULL);
    char *at = strstr(text, "x:String\">[Sku]<"); /* the first: the journal handler's */
    ck_assert_ptr_nonnull(at);
    memset(long_sku, 'A', 300);
    long_sku[300] = '\0';
    wf_buf b;
    wf_buf_init(&b);
    wf_buf_add(&b, text, (size_t)(at - text) + 10);
    wf_buf_addf(&b, "%sB%s", long_sku, at + 15);
    wf_test_write_file(dir, "hold.xaml", b.data);
    wf_buf_fini(&b);
    wf_free(text);
    char cases_text[600];
    snprintf(cases_text, sizeof cases_text,
             "[{\"name\": \"long\", \"inputs\": {\"Sku\": \"%sC\", \"Quantity\": 1, "
             "\"Mode\": 0}}]",
             long_sku);
    char cases[1200];
    snprintf(cases, sizeof cases, "%s", wf_test_write_file(dir, "cases.json", cases_text));
    const char *args[] = {"verify", HOLD_XOML, "--lib-path", wf_test_lib_dir(), "--cases",
                          cases,    "--json",  "--keep",     dir,               "--converted",
                          xaml,     NULL};
    cli r;
    run(args, dir, NULL, &r);
    ck_assert_int_eq(WEXITSTATUS(r.status), 1);
    ck_assert_msg(strstr(r.err, "    first difference at byte 312 "), "%s", r.err);
    ck_assert_msg(strstr(r.err, "AC\") -> (\"AAA"), "%s", r.err);
    ck_assert_msg(!strstr(r.err, long_sku), "%s", r.err); /* never the whole value */
    json_t *j = last_json(&r);
    json_t *d = json_array_get(json_object_get(j, "divergences"), 0);
    ck_assert_uint_eq(strlen(json_string_value(json_object_get(d, "legacy"))), 578);
    json_decref(j);
    cli_fini(&r);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* A folder with a file that cannot be loaded: --json says "error" (not "equivalent"), the
 * table ends with a summary line, and on a terminal a progress line is drawn and cleared
 * before the report (`script` gives verify a terminal). */
START_TEST(test_verify_iso_folder_summary_progress_and_error_status)
{
    char dir[1024], tree[1200];
    snprintf(dir, sizeof dir, "%s", wf_test_tmpdir());
    snprintf(tree, sizeof tree, "%s/tree", dir);
    ck_assert_int_eq(mkdir(tree, 0700), 0);
    char *text = wf_test_read_file(HOLD_XOML, NULL);
    wf_test_write_file(tree, "a_hold.xoml", text);
    wf_free(text);
    wf_test_write_file(tree, "b_broken.xoml", "<SequentialWorkflowActivity");
    const char *args[] = {"verify", tree, "--lib-path", wf_test_lib_dir(), "--generate", "4",
                          "--no-null", "--json", NULL};
    cli r;
    run(args, dir, NULL, &r);
    ck_assert_int_eq(WEXITSTATUS(r.status), 2);
    json_t *j = last_json(&r);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "error");
    json_t *files = json_object_get(j, "files");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(files, 0), "status")),
                     "equivalent");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(files, 1), "status")),
                     "error");
    json_decref(j);
    ck_assert_msg(strstr(r.err, "\n2 files: 1 equivalent, 0 diverged, 1 error; 4 cases in "),
                  "%s", r.err);
    ck_assert_msg(!strstr(r.err, "\033[K"), "%s", r.err); /* not a terminal: no progress */
    cli_fini(&r);
    /* on a terminal */
    char cmd[4096], out[1200];
    snprintf(out, sizeof out, "%s/typescript", dir);
    snprintf(cmd, sizeof cmd,
             "script -qec \"'%s/bin/wfbridge' verify '%s' --lib-path '%s' --generate 4 "
             "--no-null\" /dev/null > '%s' 2>&1",
             wf_test_build_dir(), tree, wf_test_lib_dir(), out);
    ck_assert_int_ne(system(cmd), -1);
    text = wf_test_read_file(out, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "[1/2] "), "%s", text);
    ck_assert_msg(strstr(text, "[2/2] "), "%s", text);
    ck_assert_msg(strstr(text, "a_hold.xoml: case "), "%s", text);
    ck_assert_msg(strstr(text, "\r\033[K"), "%s", text); /* cleared before what follows */
    ck_assert_msg(!strstr(text, "xomlfile ") && !strstr(text, "xoml/"), "%s", text);
    wf_free(text);
    wf_test_tmpdir_remove(dir);
}
END_TEST

/* SIGTERM while a run hangs: the run is killed, the temporary directory removed, and verify
 * dies of the signal (no report of success). */
START_TEST(test_verify_iso_signal_removes_temporary_files)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", wf_test_tmpdir());
    const char *cases = wf_test_write_file(
        tmp, "hang.json",
        "[{\"name\": \"down\", \"inputs\": {\"Sku\": \"A\", \"Quantity\": 1, \"Mode\": 7}}]");
    const char *args[] = {"verify",   HOLD_XOML, "--lib-path", wf_test_lib_dir(), "--cases",
                          cases,      "--timeout", "600",      "--json",          NULL};
    cli r;
    run(args, tmp, tmp, &r);
    ck_assert(WIFSIGNALED(r.status));
    ck_assert_int_eq(WTERMSIG(r.status), SIGTERM);
    ck_assert_str_eq(r.out, "");
    ck_assert_uint_eq(count_entries(tmp, "wfb-verify-"), 0);
    cli_fini(&r);
    wf_test_tmpdir_remove(tmp);
}
END_TEST

Suite *verify_iso_suite(void)
{
    Suite *s = suite_create("verify_iso");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_test(core, test_verify_iso_each_run_starts_from_the_same_native_state);
    tcase_add_test(core, test_verify_iso_crash_abort_exit_and_hang_are_outcomes);
    tcase_add_test(core, test_verify_iso_crashes_compare_like_outcomes);
    tcase_add_test(core, test_verify_iso_honest_conversion_is_equivalent);
    tcase_add_test(core, test_verify_iso_one_sided_crash_is_a_divergence);
    tcase_add_test(core, test_verify_iso_signal_removes_temporary_files);
    tcase_add_test(core, test_verify_iso_long_values_are_shortened_at_the_difference);
    tcase_add_test(core, test_verify_iso_folder_summary_progress_and_error_status);
    tcase_add_test(core, test_verify_iso_generator_makes_nulls_at_its_rate);
    tcase_add_test(core, test_verify_iso_shrinker_tries_null_last);
    tcase_add_test(core, test_verify_iso_generated_nulls_reach_the_crash);
    suite_add_tcase(s, core);
    return s;
}

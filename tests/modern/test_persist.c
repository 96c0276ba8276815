/* test_persist.c — the saved state of modern instances (modern/wfm_persist.c): every state
 * element survives save, destroy (runtime and all) and restore — the run continues exactly
 * as an uninterrupted one; saving is deterministic; bad blobs are clean errors; no-persist
 * zones and unlisted callbacks refuse to save; out of memory anywhere is WF_E_NOMEM. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h> /* atoi */
#include <string.h>

#include "../../common/wf_codec.h"
#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../modern/wfm_ctx.h"
#include "../../modern/wfm_persist.h"
#include "../../modern/wfm_runtime.h"
#include "../wf_test_util.h"
#include "support_modern.h"

#define T0      1700000000000000LL /* the virtual clock's start, us since the epoch */
#define DATA    "tests/modern/data/persist/"
#define MAX_STEPS 12

/* A scenario: inputs ("Name=json"), then steps run one after another from Idle:
 * "name=json" resumes a bookmark, "+N" advances the clock by N seconds. */
typedef struct pcase {
    const char *path;
    const char *inputs[3];
    const char *steps[MAX_STEPS];
    const char *state;  /* expected final state */
    const char *output; /* expected WriteLine output */
    bool test_kinds;
} pcase;

typedef struct host {
    bool test_kinds; /* register the kinds below before loading */
    wfm_runtime *rt;
    wfm_definition *def;
    wfm_instance *inst;
    int64_t clock;
    wf_buf *out;
} host;

static int64_t vclock(void *ud)
{
    return *(const int64_t *)ud;
}

/* ---- test kinds: an extension state, a no-persist zone, an unlisted callback ------------- */
#define TEST_NS "urn:wfbridge:test:persist"

typedef struct tick_ext {
    int64_t n;
} tick_ext;

static wf_status tick_ext_save(const void *state, wfm_persist_writer *w)
{
    wfm_persist_write_int(w, ((const tick_ext *)state)->n);
    return WF_OK;
}

static wf_status tick_ext_restore(void *state, wfm_persist_reader *r)
{
    ((tick_ext *)state)->n = wfm_persist_read_int(r);
    return WF_OK;
}

static const wfm_ext_spec tick_ext_spec = {"test.tick", sizeof(tick_ext), NULL, tick_ext_save,
                                           tick_ext_restore};
static const wfm_ext_spec *const tick_exts[] = {&tick_ext_spec};

static void tick_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    tick_ext *ext = wfm_ctx_ext_get(ctx, &tick_ext_spec);
    char line[32];
    int n = snprintf(line, sizeof line, "tick %lld\n", (long long)++ext->n);
    wfm_ctx_write(ctx, line, (size_t)n);
    wfm_ctx_complete(ctx, ai);
}

static void hold_resume(wfm_ctx *ctx, wfm_ai *ai, const wf_value *payload)
{
    (void)payload;
    wfm_ctx_complete(ctx, ai);
}

static void hold_execute(wfm_ctx *ctx, wfm_ai *ai)
{
    wfm_ctx_bookmark(ctx, ai, "hold", 0, hold_resume);
}

static const void *const hold_callbacks[] = {(const void *)hold_resume};

static const wfm_kind_spec tick_spec = {
    .name = "Tick",
    .ns = TEST_NS,
    .category = "Activity",
    .execute = tick_execute,
    .exts = tick_exts,
    .ext_count = 1,
};
static const wfm_kind_spec hold_spec = {
    .name = "Hold",
    .ns = TEST_NS,
    .category = "Activity",
    .flags = WFM_KIND_CAN_IDLE | WFM_KIND_NO_PERSIST,
    .execute = hold_execute,
    .callbacks = hold_callbacks,
    .callback_count = 1,
};
static const wfm_kind_spec stray_spec = { /* hands out hold_resume without listing it */
    .name = "Stray",
    .ns = TEST_NS,
    .category = "Activity",
    .flags = WFM_KIND_CAN_IDLE,
    .execute = hold_execute,
};

static void register_test_kinds(wfm_runtime *rt)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(rt), &tick_spec, &err), WF_OK);
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(rt), &hold_spec, &err), WF_OK);
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(rt), &stray_spec, &err),
                     WF_OK);
}

static void host_open(host *h, const char *path)
{
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.write = wfm_test_capture;
    o.write_ud = h->out;
    o.clock = vclock;
    o.clock_ud = &h->clock;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(&o, &h->rt, &err), WF_OK);
    if (h->test_kinds)
        register_test_kinds(h->rt);
    ck_assert_msg(wfm_runtime_load(h->rt, path, &h->def, NULL, &err) == WF_OK, "%s:%u:%u: %s",
                  path, err.line, err.col, err.message);
}

static void host_close(host *h)
{
    wfm_instance_destroy(h->inst);
    wfm_definition_release(h->def);
    wfm_runtime_destroy(h->rt);
    h->inst = NULL;
    h->def = NULL;
    h->rt = NULL;
}

static wf_value parse_json(host *h, const char *text)
{
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wf_json_parse(wfm_runtime_types(h->rt), text, strlen(text), &v, &err) == WF_OK,
                  "%s: %s", text, err.message);
    return v;
}

static void run(host *h)
{
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_run(h->inst, &err) == WF_OK, "%s", err.message);
}

static void cycle(host *h, const char *path);

/* A step; with `path`, also save and restore between queueing a resumption and running it. */
static void apply_step_at(host *h, const char *step, const char *path)
{
    if (step[0] == '+') {
        h->clock += (int64_t)atoi(step + 1) * 1000000;
    } else {
        char name[64];
        const char *eq = strchr(step, '=');
        ck_assert_ptr_nonnull(eq);
        snprintf(name, sizeof name, "%.*s", (int)(eq - step), step);
        wf_value v = parse_json(h, eq + 1);
        wf_error err = WF_ERROR_INIT;
        ck_assert_msg(wfm_instance_resume(h->inst, name, &v, &err) == WF_OK, "%s: %s", step,
                      err.message);
        wf_value_release(&v);
        if (path) {
            ck_assert_int_eq(wfm_instance_state_get(h->inst), WFM_INSTANCE_EXECUTING);
            cycle(h, path); /* a queued resumption is a pending work item */
        }
    }
    run(h);
}

static void apply_step(host *h, const char *step)
{
    apply_step_at(h, step, NULL);
}

static void save(host *h, wf_buf *blob)
{
    wf_error err = WF_ERROR_INIT;
    wf_buf_reset(blob);
    ck_assert_msg(wfm_instance_save(h->inst, blob, &err) == WF_OK, "%s", err.message);
}

/* Save, check determinism, tear everything down, come back from the bytes alone. */
static void cycle(host *h, const char *path)
{
    wf_buf blob, again;
    wf_buf_init(&blob);
    wf_buf_init(&again);
    save(h, &blob);
    save(h, &again);
    ck_assert_uint_eq(blob.len, again.len);
    ck_assert(memcmp(blob.data, again.data, blob.len) == 0);
    /* inspect must render every blob */
    wf_buf json;
    wf_buf_init(&json);
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_state_to_json(NULL, blob.data, blob.len, &json, &err) == WF_OK, "%s",
                  err.message);
    ck_assert_ptr_nonnull(strstr(json.data, "\"version\":2"));
    ck_assert_ptr_nonnull(strstr(json.data, "\"sha256\":\""));
    wf_buf_fini(&json);
    host_close(h);
    host_open(h, path);
    ck_assert_msg(wfm_instance_restore(h->rt, h->def, blob.data, blob.len, &h->inst, &err) ==
                      WF_OK,
                  "%s", err.message);
    save(h, &again); /* the restored instance is the same instance */
    ck_assert_uint_eq(blob.len, again.len);
    ck_assert_msg(memcmp(blob.data, again.data, blob.len) == 0, "restore changed the state");
    wf_buf_fini(&blob);
    wf_buf_fini(&again);
}

/* Final state, outputs and fault as one string. */
static void describe(host *h, wf_buf *b)
{
    wf_buf_adds(b, wfm_instance_state_name(wfm_instance_state_get(h->inst)));
    for (size_t i = 0; i < wfm_instance_output_count(h->inst); i++) {
        wf_buf_addf(b, " %s=", wfm_instance_output_name(h->inst, i));
        wf_value_to_json(wfm_instance_output_value(h->inst, i), b);
    }
    const wf_value *fault = wfm_instance_fault(h->inst);
    if (!wf_is_null(fault)) {
        wf_buf_adds(b, " fault=");
        wf_value_to_json(fault, b);
    }
}

static void play(const pcase *c, bool interrupt, wf_buf *out, wf_buf *final)
{
    host h = {0};
    h.clock = T0;
    h.out = out;
    h.test_kinds = c->test_kinds;
    host_open(&h, c->path);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_create(h.rt, h.def, &h.inst, &err), WF_OK);
    for (size_t i = 0; i < 3 && c->inputs[i]; i++) {
        char name[64];
        const char *eq = strchr(c->inputs[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - c->inputs[i]), c->inputs[i]);
        wf_value v = parse_json(&h, eq + 1);
        ck_assert_msg(wfm_instance_set_input(h.inst, name, &v, &err) == WF_OK, "%s", err.message);
        wf_value_release(&v);
    }
    if (interrupt)
        cycle(&h, c->path); /* Created */
    run(&h);
    for (size_t i = 0; i < MAX_STEPS && c->steps[i]; i++) {
        ck_assert_str_eq(wfm_instance_state_name(wfm_instance_state_get(h.inst)), "Idle");
        if (interrupt)
            cycle(&h, c->path);
        apply_step_at(&h, c->steps[i], interrupt ? c->path : NULL);
    }
    if (interrupt)
        cycle(&h, c->path); /* completed */
    describe(&h, final);
    host_close(&h);
}

static const pcase cases[] = {
    {DATA "pick.xaml", {NULL}, {"b=\"bee\"", "b2=5"}, "Closed",
     "picking\nb armed\nb triggered with bee\nb won, n=5\ndone: bee\n", false},
    {DATA "pick.xaml", {NULL}, {"a=3"}, "Closed",
     "picking\nb armed\na won with 3\ndone: a:10\n", false},
    {DATA "parallel.xaml", {NULL}, {"c=3", "a=1", "b=2", "a2=9"}, "Closed",
     "c first\ntotal=3\na=1\nb=2 a=1\n", false},
    {DATA "pfe.xaml", {"Items=[\"x\",\"y\",\"z\"]"}, {"y=2", "z=3", "x=1"}, "Closed",
     "waiting for z\nwaiting for y\nwaiting for x\ny=2;z=3;x=1;\n", false},
    {DATA "nested.xaml", {"Seed=5"}, {"first=\"in\"", "step=1", "step=2", "step=3", "each10=null",
                                      "each20=null"},
     "Closed", "inner x=in\nouter x=10\nx=46 i=3\n", false},
    {DATA "delay.xaml", {NULL}, {"+6", "+5"}, "Closed", "before\nfive\nafter\n", false},
    {DATA "tick.xaml", {NULL}, {"w=1"}, "Closed", "tick 1\ntick 2\n", true},
    {DATA "flow.xaml", {NULL}, {"tick=1", "tick=2", "tick=4"}, "Closed",
     "i=1 sum=1\ni=2 sum=3\ni=3 sum=7\ndone\n", false},
    {DATA "trycatch.xaml", {NULL}, {"go=-2", "ack=\"ok\"", "fin=null"}, "Closed",
     "try\ncaught negative -2\nack ok for negative -2\nfinally\n", false},
    {DATA "trycatch.xaml", {NULL}, {"go=3", "fin=null"}, "Closed", "try\nfine 3\nfinally\n",
     false},
    {DATA "comp.xaml", {NULL}, {"decide=true"}, "Closed",
     "reserved 42\ncharged\nend\nconfirm 42\n", false},
    {DATA "comp.xaml", {NULL}, {"decide=false", "refund=null"}, "Faulted",
     "reserved 42\ncharged\nrefunded\nrelease 42\n", false},
    {DATA "cancel.xaml", {NULL}, {"a=null", "undo=\"bee\""}, "Closed",
     "waiting for b\nbee canceled\na won\n", false},
    {DATA "compensate.xaml", {NULL}, {"note=\"later\"", "extra=9"}, "Closed",
     "release 9 (outer)\nend\n", false},
    {"samples/modern/order_state_machine.xaml", {"OrderId=\"A-1\"", "Amount=100"},
     {"pay=150", "ship=\"TRK-9\""}, "Closed",
     "order A-1 placed, waiting for payment of 100\npayment of 150 received\n"
     "waiting for the warehouse to ship\nshipped with tracking number TRK-9\n", false},
};

/* The same scenario with and without a full save/restore at every idle point. */
START_TEST(test_round_trip_continues_like_an_uninterrupted_run)
{
    const pcase *c = &cases[_i];
    wf_buf out_a, out_b, fin_a, fin_b;
    wf_buf_init(&out_a);
    wf_buf_init(&out_b);
    wf_buf_init(&fin_a);
    wf_buf_init(&fin_b);
    play(c, false, &out_a, &fin_a);
    ck_assert_msg(strncmp(fin_a.data, c->state, strlen(c->state)) == 0, "%s", fin_a.data);
    if (c->output)
        ck_assert_str_eq(out_a.data, c->output);
    play(c, true, &out_b, &fin_b);
    ck_assert_str_eq(out_b.data, out_a.data);
    ck_assert_str_eq(fin_b.data, fin_a.data);
    wf_buf_fini(&out_a);
    wf_buf_fini(&out_b);
    wf_buf_fini(&fin_a);
    wf_buf_fini(&fin_b);
}
END_TEST

/* The state of case `c` after its first `steps` steps (host closed again). */
static void blob_at(const pcase *c, size_t steps, wf_buf *blob)
{
    wf_buf out;
    wf_buf_init(&out);
    host h = {0};
    h.clock = T0;
    h.out = &out;
    h.test_kinds = c->test_kinds;
    host_open(&h, c->path);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_create(h.rt, h.def, &h.inst, &err), WF_OK);
    for (size_t i = 0; i < 3 && c->inputs[i]; i++) {
        char name[64];
        const char *eq = strchr(c->inputs[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - c->inputs[i]), c->inputs[i]);
        wf_value v = parse_json(&h, eq + 1);
        ck_assert_int_eq(wfm_instance_set_input(h.inst, name, &v, &err), WF_OK);
        wf_value_release(&v);
    }
    run(&h);
    for (size_t i = 0; i < steps; i++)
        apply_step(&h, c->steps[i]);
    save(&h, blob);
    host_close(&h);
    wf_buf_fini(&out);
}

/* A host with one definition and no instance. */
static void open_only(host *h, wf_buf *out, const char *path)
{
    memset(h, 0, sizeof *h);
    h->clock = T0;
    h->out = out;
    h->test_kinds = true;
    host_open(h, path);
}

/* States the bad-input and nomem tests start from: (case, steps taken). */
static const struct {
    size_t c, steps;
} samples[] = {
    {3, 1},  /* ParallelForEach: delegate environments, ForEach state, two bookmarks */
    {0, 0},  /* Pick: a winner reference, nested variables */
    {4, 2},  /* nested scopes inside a While */
    {6, 0},  /* an extension state */
    {5, 1},  /* a timer */
    {10, 0}, /* completed compensation tokens with variable snapshots */
    {11, 1}, /* compensation running from a finish hook */
    {8, 1},  /* inside a Catch handler */
    {12, 1}, /* a CancellationScope's handler running while the Pick waits */
    {13, 1}, /* a compensation handler run by Compensate */
};
#define SAMPLES (int)(sizeof samples / sizeof samples[0])

START_TEST(test_truncated_state_is_corrupt_at_every_length)
{
    const pcase *c = &cases[samples[_i].c];
    wf_buf blob, out;
    wf_buf_init(&blob);
    wf_buf_init(&out);
    blob_at(c, samples[_i].steps, &blob);
    host h;
    open_only(&h, &out, c->path);
    for (size_t len = 0; len < blob.len; len++) {
        wf_error err = WF_ERROR_INIT;
        wfm_instance *inst = (wfm_instance *)&h;
        ck_assert_msg(wfm_instance_restore(h.rt, h.def, blob.data, len, &inst, &err) ==
                          WF_E_CORRUPT,
                      "length %zu of %zu: %s", len, blob.len, err.message);
        ck_assert_ptr_null(inst);
        ck_assert(strstr(err.message, "corrupt") || strstr(err.message, "magic") ||
                  strstr(err.message, "version"));
        wf_buf json;
        wf_buf_init(&json);
        ck_assert_int_eq(wfm_state_to_json(h.rt, blob.data, len, &json, NULL), WF_E_CORRUPT);
        ck_assert_uint_eq(json.len, 0);
        wf_buf_fini(&json);
    }
    host_close(&h);
    wf_buf_fini(&blob);
    wf_buf_fini(&out);
}
END_TEST

START_TEST(test_flipped_bits_never_crash)
{
    const pcase *c = &cases[samples[_i].c];
    wf_buf blob, out;
    wf_buf_init(&blob);
    wf_buf_init(&out);
    blob_at(c, samples[_i].steps, &blob);
    host h;
    open_only(&h, &out, c->path);
    for (size_t i = 0; i < blob.len * 8; i += 3) {
        blob.data[i / 8] ^= (char)(1u << (i % 8));
        wfm_instance *inst = NULL;
        wf_status st = wfm_instance_restore(h.rt, h.def, blob.data, blob.len, &inst, NULL);
        ck_assert(st == WF_OK || st == WF_E_CORRUPT || st == WF_E_STATE);
        ck_assert(st == WF_OK || inst == NULL);
        wfm_instance_destroy(inst);
        wf_buf json;
        wf_buf_init(&json);
        st = wfm_state_to_json(NULL, blob.data, blob.len, &json, NULL);
        ck_assert(st == WF_OK || st == WF_E_CORRUPT);
        wf_buf_fini(&json);
        blob.data[i / 8] ^= (char)(1u << (i % 8));
    }
    host_close(&h);
    wf_buf_fini(&blob);
    wf_buf_fini(&out);
}
END_TEST

START_TEST(test_unknown_version_bad_magic_and_trailing_bytes_are_corrupt)
{
    wf_buf blob, out;
    wf_buf_init(&blob);
    wf_buf_init(&out);
    blob_at(&cases[0], 0, &blob);
    host h;
    open_only(&h, &out, cases[0].path);
    wf_error err = WF_ERROR_INIT;
    wfm_instance *inst = NULL;
    blob.data[4] = 99; /* the version varint */
    ck_assert_int_eq(wfm_instance_restore(h.rt, h.def, blob.data, blob.len, &inst, &err),
                     WF_E_CORRUPT);
    WF_ASSERT_ERROR(err, WF_E_CORRUPT, 0, 0, "version 99");
    ck_assert_ptr_null(inst);
    wfm_state_info info;
    err = (wf_error)WF_ERROR_INIT;
    ck_assert_int_eq(wfm_state_peek(blob.data, blob.len, &info, &err), WF_E_CORRUPT);
    blob.data[4] = WFM_STATE_VERSION;
    blob.data[0] = 'X';
    err = (wf_error)WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_restore(h.rt, h.def, blob.data, blob.len, &inst, &err),
                     WF_E_CORRUPT);
    WF_ASSERT_ERROR(err, WF_E_CORRUPT, 0, 0, "magic");
    blob.data[0] = 'W';
    wf_buf_addc(&blob, 0);
    err = (wf_error)WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_restore(h.rt, h.def, blob.data, blob.len, &inst, &err),
                     WF_E_CORRUPT);
    WF_ASSERT_ERROR(err, WF_E_CORRUPT, 0, 0, "trailing");
    ck_assert_ptr_null(inst);
    blob.len--;
    ck_assert_int_eq(wfm_state_peek(blob.data, blob.len, &info, &err), WF_OK);
    ck_assert_int_eq(info.state, WFM_INSTANCE_IDLE);
    ck_assert_uint_eq(info.blocking_bookmarks, 2);
    ck_assert_uint_eq(info.definition_hash, wfm_definition_hash(h.def));
    ck_assert(info.next_timer_us == INT64_MAX);
    host_close(&h);
    wf_buf_fini(&blob);
    wf_buf_fini(&out);
}
END_TEST

/* The state records its definition's SHA-256: a blob whose 64-bit content hash matches but
 * whose SHA-256 does not (what a file colliding on the short hash would give) is refused; a
 * version 1 blob of an older build (no SHA-256) still restores, checked by the short hash. */
START_TEST(test_state_checks_the_definition_sha256_and_reads_version_1)
{
    wf_buf blob, out;
    wf_buf_init(&blob);
    wf_buf_init(&out);
    blob_at(&cases[0], 0, &blob);
    host h;
    open_only(&h, &out, cases[0].path);
    size_t at = 5; /* "WFMS", the version varint, then the hash varint */
    while ((unsigned char)blob.data[at] & 0x80)
        at++;
    at++;
    ck_assert(memcmp(blob.data + at, wfm_definition_sha256(h.def), 32) == 0);
    wf_error err = WF_ERROR_INIT;
    wfm_instance *inst = NULL;
    blob.data[at + 7] ^= 1;
    ck_assert_int_eq(wfm_instance_restore(h.rt, h.def, blob.data, blob.len, &inst, &err),
                     WF_E_STATE);
    WF_ASSERT_ERROR(err, WF_E_STATE, 0, 0, "SHA-256 differs");
    ck_assert_ptr_null(inst);
    blob.data[at + 7] ^= 1;
    memmove(blob.data + at, blob.data + at + 32, blob.len - at - 32);
    blob.len -= 32;
    blob.data[4] = 1;
    err = (wf_error)WF_ERROR_INIT;
    ck_assert_msg(wfm_instance_restore(h.rt, h.def, blob.data, blob.len, &inst, &err) == WF_OK,
                  "%s", err.message);
    ck_assert_int_eq(wfm_instance_state_get(inst), WFM_INSTANCE_IDLE);
    wfm_instance_destroy(inst);
    host_close(&h);
    wf_buf_fini(&blob);
    wf_buf_fini(&out);
}
END_TEST

START_TEST(test_restore_into_another_definition_is_a_state_error)
{
    wf_buf blob, out;
    wf_buf_init(&blob);
    wf_buf_init(&out);
    blob_at(&cases[0], 0, &blob);
    host h;
    open_only(&h, &out, cases[2].path);
    wf_error err = WF_ERROR_INIT;
    wfm_instance *inst = NULL;
    ck_assert_int_eq(wfm_instance_restore(h.rt, h.def, blob.data, blob.len, &inst, &err),
                     WF_E_STATE);
    WF_ASSERT_ERROR(err, WF_E_STATE, 0, 0, "another definition");
    ck_assert_ptr_null(inst);
    host_close(&h);
    wf_buf_fini(&blob);
    wf_buf_fini(&out);
}
END_TEST

START_TEST(test_inspect_shows_activities_variables_and_bookmarks)
{
    wf_buf blob, json;
    wf_buf_init(&blob);
    wf_buf_init(&json);
    blob_at(&cases[4], 2, &blob); /* nested.xaml inside the While */
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_state_to_json(NULL, blob.data, blob.len, &json, &err), WF_OK);
    ck_assert_ptr_nonnull(strstr(json.data, "\"state\":\"Idle\""));
    ck_assert_ptr_nonnull(strstr(json.data, "\"kind\":\"While\""));
    ck_assert_ptr_nonnull(strstr(json.data, "\"kind\":\"WaitForEvent\""));
    ck_assert_ptr_nonnull(strstr(json.data, "\"variables\":{\"x\":11,\"i\":1}"));
    ck_assert_ptr_nonnull(strstr(json.data, "\"arguments\":{\"Seed\":5,\"Result\":null}"));
    ck_assert_ptr_nonnull(strstr(json.data, "{\"name\":\"step\""));
    ck_assert_ptr_nonnull(strstr(json.data, "\"callback\":\"WaitForEvent#0\""));
    wf_value v;
    ck_assert_int_eq(wf_json_parse(NULL, json.data, json.len, &v, &err), WF_OK);
    wf_value_release(&v);
    /* completed compensation tokens: the extension and the variables they captured */
    wf_buf_reset(&json);
    blob_at(&cases[10], 0, &blob);
    ck_assert_int_eq(wfm_state_to_json(NULL, blob.data, blob.len, &json, &err), WF_OK);
    ck_assert_ptr_nonnull(strstr(json.data, "{\"name\":\"wfbridge.compensation\""));
    ck_assert_ptr_nonnull(
        strstr(json.data, "\"environments\":[{\"parent\":\"root\",\"slots\":[42]}"));
    ck_assert_int_eq(wf_json_parse(NULL, json.data, json.len, &v, &err), WF_OK);
    wf_value_release(&v);
    wf_buf_fini(&blob);
    wf_buf_fini(&json);
}
END_TEST

/* A kind name of the blob holding a control byte and an invalid UTF-8 byte is escaped, not
 * written raw: the decoded state is JSON whatever the blob holds (it was not, before the
 * state was built as a jansson tree). */
START_TEST(test_inspect_escapes_kind_names)
{
    wf_buf blob, json;
    wf_buf_init(&blob);
    wf_buf_init(&json);
    blob_at(&cases[4], 2, &blob);
    char *at = NULL;
    for (size_t i = 0; !at && i + 12 <= blob.len; i++)
        at = memcmp(blob.data + i, "WaitForEvent", 12) == 0 ? blob.data + i : NULL;
    ck_assert_ptr_nonnull(at);
    at[1] = '\x01';
    at[2] = '\xff';
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_state_to_json(NULL, blob.data, blob.len, &json, &err), WF_OK);
    ck_assert_ptr_nonnull(strstr(json.data, "\"kind\":\"W\\u0001\xef\xbf\xbdtForEvent\""));
    ck_assert_ptr_nonnull(strstr(json.data, "\"callback\":\"W\\u0001\xef\xbf\xbdtForEvent#0\""));
    wf_value v;
    ck_assert_int_eq(wf_json_parse(NULL, json.data, json.len, &v, &err), WF_OK);
    wf_value_release(&v);
    wf_buf_fini(&blob);
    wf_buf_fini(&json);
}
END_TEST

/* Save inside a no-persist zone, and with a callback no table lists: refused, named. */
START_TEST(test_save_refused_in_no_persist_zone_and_for_unlisted_callbacks)
{
    static const char *const fixtures[] = {DATA "hold.xaml", DATA "stray.xaml", DATA "tx.xaml"};
    static const char *const needles[] = {"Hold 'Waiting Hold' (activity 1.2) is executing",
                                          "kind 'Stray' (activity 1.2) handed the runtime",
                                          "TransactionScope 'Transfer' (activity 1.2) is "
                                          "executing: it is a no-persist zone"};
    wf_buf out, blob;
    wf_buf_init(&out);
    wf_buf_init(&blob);
    host h;
    open_only(&h, &out, fixtures[_i]);
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_create(h.rt, h.def, &h.inst, &err), WF_OK);
    run(&h);
    ck_assert_int_eq(wfm_instance_state_get(h.inst), WFM_INSTANCE_IDLE);
    wf_buf_adds(&blob, "keep");
    ck_assert_int_eq(wfm_instance_save(h.inst, &blob, &err), WF_E_STATE);
    WF_ASSERT_ERROR(err, WF_E_STATE, 0, 0, needles[_i]);
    ck_assert_str_eq(blob.data, "keep"); /* out untouched */
    apply_step(&h, "hold=null"); /* the instance goes on */
    ck_assert_int_eq(wfm_instance_state_get(h.inst), WFM_INSTANCE_CLOSED);
    ck_assert_str_eq(out.data, "in\nout\n");
    host_close(&h);
    wf_buf_fini(&out);
    wf_buf_fini(&blob);
}
END_TEST

/* Every value kind survives the codec; a user exception type is declared again by name under
 * its parent in a fresh type table. */
START_TEST(test_values_of_every_kind_round_trip_through_the_codec)
{
    wf_types *a = wf_types_create(), *b = wf_types_create();
    const wf_type *order_exc = NULL;
    ck_assert_int_eq(wf_types_exception(a, "OrderException", &wf_exc_invalid_operation,
                                        &order_exc, NULL),
                     WF_OK);
    wf_value items[12];
    items[0] = wf_null();
    items[1] = wf_bool(true);
    items[2] = wf_int32(-123456);
    items[3] = wf_int64(INT64_MIN);
    items[4] = wf_double(-0.1);
    items[5] = wf_dec(wf_decimal_from_currency(125000));
    items[6] = wf_datetime_us(T0);
    items[7] = wf_timespan_us(-5000001);
    ck_assert_int_eq(wf_value_cstring("h\xc3\xa9llo", &items[8]), WF_OK);
    ck_assert_int_eq(wf_value_exception(order_exc, "late", &items[9]), WF_OK);
    const char *keys[] = {"k", "l"};
    wf_value rec_vals[2] = {wf_int32(1), wf_null()};
    ck_assert_int_eq(wf_value_list(wf_types_list(a, &wf_type_int32), rec_vals, 1, &rec_vals[1]),
                     WF_OK);
    ck_assert_int_eq(wf_value_record(keys, rec_vals, 2, &items[10]), WF_OK);
    ck_assert_int_eq(wf_value_list(&wf_type_list_object, items, 11, &items[11]), WF_OK);
    wf_buf buf;
    wf_buf_init(&buf);
    ck_assert_int_eq(wf_codec_put_value(&buf, &items[11], NULL), WF_OK);
    wf_reader r;
    wf_reader_init(&r, buf.data, buf.len, b);
    wf_value back;
    ck_assert_int_eq(wf_codec_get_value(&r, &back, NULL), WF_OK);
    ck_assert_uint_eq(wf_reader_left(&r), 0);
    ck_assert_uint_eq(wf_value_list_count(&back), 11);
    for (size_t i = 0; i < 11; i++) /* the exception types live in different tables */
        ck_assert_msg(i == 9 || wf_value_equal(wf_value_list_at(&back, i), &items[i]), "%zu", i);
    const wf_value *exc = wf_value_list_at(&back, 9);
    ck_assert_str_eq(wf_value_exc_message(exc), "late");
    ck_assert_str_eq(exc->type->name, "OrderException");
    ck_assert(wf_type_is_a(exc->type, &wf_exc_invalid_operation));
    ck_assert_ptr_eq(exc->type, wf_types_find(b, "OrderException"));
    wf_buf json;
    wf_buf_init(&json);
    wf_reader_init(&r, buf.data, buf.len, NULL);
    ck_assert(wf_codec_value_json(&r, &json));
    ck_assert_str_eq(json.data, "[null,true,-123456,-9223372036854775808,-0.10000000000000001,"
                                "\"12.5000\",\"2023-11-14T22:13:20Z\",\"-00:00:05.0000010\","
                                "\"h\xc3\xa9llo\",{\"type\":\"OrderException\",\"message\":"
                                "\"late\"},{\"k\":1,\"l\":[1]}]");
    wf_buf_fini(&json);
    wf_value_release(&back);
    for (int i = 0; i < 12; i++)
        wf_value_release(&items[i]);
    wf_value_release(&rec_vals[1]);
    wf_buf_fini(&buf);
    wf_types_destroy(a);
    wf_types_destroy(b);
}
END_TEST

/* Blobs the fuzzer (tests/fuzz/fuzz_state.c) found, against its definition. */
START_TEST(test_fuzzer_findings_are_clean_errors)
{
    static const struct {
        const char *file, *needle;
    } bad[] = {
        {DATA "bad/owned_env_chain_through_activity.bin", "does not end at the root"},
    };
    wf_buf out;
    wf_buf_init(&out);
    host h;
    open_only(&h, &out, DATA "fuzz_state.xaml");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len = 0;
        char *data = wf_test_read_file(bad[i].file, &len);
        ck_assert_ptr_nonnull(data);
        wf_error err = WF_ERROR_INIT;
        wfm_instance *inst = NULL;
        ck_assert_int_eq(wfm_instance_restore(h.rt, h.def, data, len, &inst, &err),
                         WF_E_CORRUPT);
        WF_ASSERT_ERROR(err, WF_E_CORRUPT, 0, 0, bad[i].needle);
        ck_assert_ptr_null(inst);
        wf_free(data);
    }
    host_close(&h);
    wf_buf_fini(&out);
}
END_TEST

static wf_status half_save(const wfm_ai *ai, wfm_persist_writer *w)
{
    (void)ai;
    (void)w;
    return WF_OK;
}

/* State that is not plain bytes without save/restore: the catalogue refuses the kind. */
START_TEST(test_register_refuses_state_without_persistence)
{
    static const wfm_kind_spec opaque_spec = {
        .name = "Opaque",
        .ns = TEST_NS,
        .category = "Activity",
        .state_size = 16,
        .execute = tick_execute,
    };
    static const wfm_kind_spec half_spec = {
        .name = "Half",
        .ns = TEST_NS,
        .category = "Activity",
        .state_size = 16,
        .execute = tick_execute,
        .save = half_save,
    };
    wfm_runtime *rt = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_runtime_create(NULL, &rt, &err), WF_OK);
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(rt), &opaque_spec, &err),
                     WF_E_USAGE);
    WF_ASSERT_ERROR(err, WF_E_USAGE, 0, 0, "kind 'Opaque': per-instance state needs");
    err = (wf_error)WF_ERROR_INIT;
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(rt), &half_spec, &err),
                     WF_E_USAGE);
    WF_ASSERT_ERROR(err, WF_E_USAGE, 0, 0, "save and restore");
    static const wfm_ext_spec no_restore = {"test.half", 8, NULL, tick_ext_save, NULL};
    static const wfm_ext_spec *const half_exts[] = {&no_restore};
    static const wfm_kind_spec ext_spec = {
        .name = "HalfExt",
        .ns = TEST_NS,
        .category = "Activity",
        .execute = tick_execute,
        .exts = half_exts,
        .ext_count = 1,
    };
    err = (wf_error)WF_ERROR_INIT;
    ck_assert_int_eq(wfm_catalogue_register(wfm_runtime_catalogue(rt), &ext_spec, &err),
                     WF_E_USAGE);
    WF_ASSERT_ERROR(err, WF_E_USAGE, 0, 0, "extension 0 needs a name, save and restore");
    ck_assert_ptr_null(wfm_catalogue_find(wfm_runtime_catalogue(rt), TEST_NS, "Opaque"));
    wfm_runtime_destroy(rt);
}
END_TEST

/* ---- nomem ----------------------------------------------------------------------------- */
typedef struct nm {
    host *h;
    wf_buf *blob;
} nm;

static wf_status nm_save(void *ud)
{
    nm *n = ud;
    wf_buf b;
    wf_buf_init(&b);
    wf_status st = wfm_instance_save(n->h->inst, &b, NULL);
    if (st == WF_OK)
        ck_assert(b.len == n->blob->len && memcmp(b.data, n->blob->data, b.len) == 0);
    wf_buf_fini(&b);
    return st;
}

static wf_status nm_restore(void *ud)
{
    nm *n = ud;
    wfm_instance *inst = NULL;
    wf_status st = wfm_instance_restore(n->h->rt, n->h->def, n->blob->data, n->blob->len, &inst,
                                        NULL);
    ck_assert(st == WF_OK || inst == NULL);
    wfm_instance_destroy(inst);
    return st;
}

static wf_status nm_json(void *ud)
{
    nm *n = ud;
    wf_buf b;
    wf_buf_init(&b);
    wf_status st = wfm_state_to_json(NULL, n->blob->data, n->blob->len, &b, NULL);
    wf_buf_fini(&b);
    return st;
}

START_TEST(test_nomem_save_restore_and_inspect)
{
    const pcase *c = &cases[samples[_i].c];
    wf_buf blob, out;
    wf_buf_init(&blob);
    wf_buf_init(&out);
    blob_at(c, samples[_i].steps, &blob);
    host h;
    open_only(&h, &out, c->path);
    h.test_kinds = c->test_kinds;
    wf_error err = WF_ERROR_INIT;
    ck_assert_int_eq(wfm_instance_restore(h.rt, h.def, blob.data, blob.len, &h.inst, &err),
                     WF_OK);
    nm n = {&h, &blob};
    ck_assert_uint_gt(wf_test_nomem_loop(nm_save, &n, 2000), 0);
    ck_assert_uint_gt(wf_test_nomem_loop(nm_restore, &n, 2000), 0);
    ck_assert_uint_gt(wf_test_nomem_loop(nm_json, &n, 2000), 0);
    host_close(&h);
    wf_buf_fini(&blob);
    wf_buf_fini(&out);
}
END_TEST

Suite *modern_persist_suite(void)
{
    Suite *s = suite_create("modern_persist");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_round_trip_continues_like_an_uninterrupted_run, 0,
                        (int)(sizeof cases / sizeof cases[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("bad_input");
    tcase_add_loop_test(tc, test_truncated_state_is_corrupt_at_every_length, 0, SAMPLES);
    tcase_add_loop_test(tc, test_flipped_bits_never_crash, 0, SAMPLES);
    tcase_add_test(tc, test_unknown_version_bad_magic_and_trailing_bytes_are_corrupt);
    tcase_add_test(tc, test_restore_into_another_definition_is_a_state_error);
    tcase_add_test(tc, test_state_checks_the_definition_sha256_and_reads_version_1);
    tcase_add_loop_test(tc, test_save_refused_in_no_persist_zone_and_for_unlisted_callbacks, 0,
                        3);
    tcase_add_test(tc, test_inspect_shows_activities_variables_and_bookmarks);
    tcase_add_test(tc, test_inspect_escapes_kind_names);
    tcase_add_test(tc, test_values_of_every_kind_round_trip_through_the_codec);
    tcase_add_test(tc, test_fuzzer_findings_are_clean_errors);
    tcase_add_test(tc, test_register_refuses_state_without_persistence);
    suite_add_tcase(s, tc);
    tc = tcase_create("nomem");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_nomem_save_restore_and_inspect, 0, SAMPLES);
    suite_add_tcase(s, tc);
    return s;
}

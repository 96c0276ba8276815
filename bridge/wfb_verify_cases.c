/* wfb_verify_cases.c — the input cases of `wfbridge verify`: reading and writing --cases and
 * --events files (schema in docs/verify.md "Cases"), the seeded generator steered by legacy
 * decision coverage (docs/verify.md "Coverage"), and the shrinker that makes a diverging case
 * as small as it can. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../common/wf_decimal.h"
#include "../common/wf_jsonw.h"
#include "../common/wf_mem.h"
#include "wfb_verify_int.h"

static wf_status nomem(wf_error *err)
{
    return wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

void wfb_vevents_free(wfb_vevent *events, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        wf_free(events[i].name);
        wf_free(events[i].payload);
    }
    wf_free(events);
}

void wfb_vcase_fini(wfb_vcase *c)
{
    for (size_t i = 0; i < c->input_count; i++) {
        wf_free(c->inputs[i].name);
        wf_free(c->inputs[i].json);
    }
    wf_free(c->inputs);
    wfb_vevents_free(c->events, c->event_count);
    wf_free(c->name);
    memset(c, 0, sizeof *c);
}

void wfb_vcases_free(wfb_vcase *cases, size_t count)
{
    if (!cases)
        return;
    for (size_t i = 0; i < count; i++)
        wfb_vcase_fini(&cases[i]);
    wf_free(cases);
}

static wf_status copy_events(const wfb_vevent *src, size_t n, wfb_vevent **dst, size_t *dn,
                             wf_error *err)
{
    *dst = wf_calloc(n + 1, sizeof **dst);
    *dn = 0;
    if (!*dst)
        return nomem(err);
    for (size_t i = 0; i < n; i++, (*dn)++) {
        (*dst)[i].name = wf_strdup(src[i].name);
        (*dst)[i].payload = src[i].payload ? wf_strdup(src[i].payload) : NULL;
        if (!(*dst)[i].name || (src[i].payload && !(*dst)[i].payload)) {
            (*dn)++;
            return nomem(err);
        }
    }
    return WF_OK;
}

wf_status wfb_vcase_copy(const wfb_vcase *src, wfb_vcase *dst, wf_error *err)
{
    memset(dst, 0, sizeof *dst);
    dst->name = wf_strdup(src->name ? src->name : "case");
    if (!dst->name)
        return nomem(err);
    for (size_t i = 0; i < src->input_count; i++)
        if (wfb_vcase_set(dst, src->inputs[i].name, src->inputs[i].json, err) != WF_OK)
            return WF_E_NOMEM;
    return copy_events(src->events, src->event_count, &dst->events, &dst->event_count, err);
}

wf_status wfb_vcase_set(wfb_vcase *c, const char *name, const char *json, wf_error *err)
{
    for (size_t i = 0; i < c->input_count; i++) {
        if (strcmp(c->inputs[i].name, name) != 0)
            continue;
        if (!json) { /* remove */
            wf_free(c->inputs[i].name);
            wf_free(c->inputs[i].json);
            memmove(&c->inputs[i], &c->inputs[i + 1], (c->input_count - i - 1) * sizeof *c->inputs);
            c->input_count--;
            return WF_OK;
        }
        char *d = wf_strdup(json);
        if (!d)
            return nomem(err);
        wf_free(c->inputs[i].json);
        c->inputs[i].json = d;
        return WF_OK;
    }
    if (!json)
        return WF_OK;
    wfb_vinput *grown = wf_realloc(c->inputs, (c->input_count + 1) * sizeof *grown);
    if (!grown)
        return nomem(err);
    c->inputs = grown;
    wfb_vinput in = {wf_strdup(name), wf_strdup(json)};
    if (!in.name || !in.json) {
        wf_free(in.name);
        wf_free(in.json);
        return nomem(err);
    }
    c->inputs[c->input_count++] = in;
    return WF_OK;
}

/* ---- reading ----------------------------------------------------------------------------- */
static wf_status json_load(const char *path, json_t **out, wf_error *err)
{
    json_error_t je;
    *out = json_load_file(path, JSON_DECODE_ANY, &je);
    if (*out)
        return WF_OK;
    wf_loc loc = {path, (unsigned)(je.line > 0 ? je.line : 0),
                  (unsigned)(je.column > 0 ? je.column : 0)};
    FILE *f = fopen(path, "r");
    if (!f)
        return wf_error_set(err, WF_E_IO, &(wf_loc){path, 0, 0}, "cannot read the file");
    fclose(f);
    return wf_error_set(err, WF_E_SYNTAX, &loc, "invalid JSON: %s", je.text);
}

static char *dump(const json_t *v)
{
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    char *d = s ? wf_strdup(s) : NULL;
    free(s);
    return d;
}

static wf_status schema_error(const char *path, const char *what, wf_error *err)
{
    return wf_error_set(err, WF_E_SCHEMA, &(wf_loc){path, 0, 0}, "%s", what);
}

static wf_status read_events(const char *path, const json_t *arr, wfb_vevent **events,
                             size_t *count, wf_error *err)
{
    *events = NULL;
    *count = 0;
    if (!json_is_array(arr))
        return schema_error(path, "an event script is an array of {\"event\", \"payload\"}", err);
    *events = wf_calloc(json_array_size(arr) + 1, sizeof **events);
    if (!*events)
        return nomem(err);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *e = json_array_get(arr, i);
        const json_t *name = json_object_get(e, "event");
        if (!json_is_string(name))
            return schema_error(path, "each event needs \"event\": NAME (a string)", err);
        const json_t *payload = json_object_get(e, "payload");
        wfb_vevent *ev = &(*events)[(*count)++];
        ev->name = wf_strdup(json_string_value(name));
        ev->payload = payload && !json_is_null(payload) ? dump(payload) : NULL;
        if (!ev->name || (payload && !json_is_null(payload) && !ev->payload))
            return nomem(err);
    }
    return WF_OK;
}

wf_status wfb_vevents_load(const char *path, wfb_vevent **events, size_t *count, wf_error *err)
{
    json_t *root;
    wf_status rc = json_load(path, &root, err);
    if (rc != WF_OK)
        return rc;
    rc = read_events(path, root, events, count, err);
    json_decref(root);
    if (rc != WF_OK) {
        wfb_vevents_free(*events, *count);
        *events = NULL;
        *count = 0;
    }
    return rc;
}

static wf_status read_case(const char *path, const json_t *jc, size_t index,
                           const wfb_vevent *events, size_t event_count, wfb_vcase *c,
                           wf_error *err)
{
    if (!json_is_object(jc))
        return schema_error(path, "each case is an object {\"name\", \"inputs\", \"events\"}", err);
    const json_t *name = json_object_get(jc, "name");
    char def[32];
    snprintf(def, sizeof def, "case-%zu", index + 1);
    c->name = wf_strdup(json_is_string(name) ? json_string_value(name) : def);
    if (!c->name)
        return nomem(err);
    const json_t *inputs = json_object_get(jc, "inputs");
    if (inputs && !json_is_object(inputs))
        return schema_error(path, "\"inputs\" is an object of NAME: VALUE", err);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)inputs, key, v)
    {
        char *text = dump(v);
        wf_status rc = text ? wfb_vcase_set(c, key, text, err) : nomem(err);
        wf_free(text);
        if (rc != WF_OK)
            return rc;
    }
    const json_t *evs = json_object_get(jc, "events");
    if (evs)
        return read_events(path, evs, &c->events, &c->event_count, err);
    return copy_events(events, event_count, &c->events, &c->event_count, err);
}

wf_status wfb_vcases_load(const char *path, const wfb_vevent *events, size_t event_count,
                          wfb_vcase **cases, size_t *count, wf_error *err)
{
    *cases = NULL;
    *count = 0;
    json_t *root;
    wf_status rc = json_load(path, &root, err);
    if (rc != WF_OK)
        return rc;
    const json_t *arr = json_is_object(root) ? json_object_get(root, "cases") : root;
    if (!json_is_array(arr)) {
        json_decref(root);
        return schema_error(path, "expected {\"cases\": [...]} or an array of cases", err);
    }
    *cases = wf_calloc(json_array_size(arr) + 1, sizeof **cases);
    if (!*cases)
        rc = nomem(err);
    for (size_t i = 0; rc == WF_OK && i < json_array_size(arr); i++, (*count)++)
        rc = read_case(path, json_array_get(arr, i), i, events, event_count, &(*cases)[i], err);
    if (rc == WF_OK && *count == 0)
        rc = schema_error(path, "no cases in the file", err);
    json_decref(root);
    if (rc != WF_OK) {
        wfb_vcases_free(*cases, *count + (*cases ? 1 : 0));
        *cases = NULL;
        *count = 0;
    }
    return rc;
}

/* ---- writing ----------------------------------------------------------------------------- */
/* Inputs and payloads are kept as JSON text: written as they are, checked by the writer. */
static json_t *case_json(const wfb_vcase *c)
{
    json_t *inputs = json_object(), *events = json_array();
    bool ok = inputs && events;
    for (size_t k = 0; ok && k < c->input_count; k++)
        ok = wf_jsonw_set(inputs, c->inputs[k].name,
                          wf_jsonw_raw(c->inputs[k].json, strlen(c->inputs[k].json)));
    for (size_t k = 0; ok && k < c->event_count; k++) {
        const char *payload = c->events[k].payload;
        ok = wf_jsonw_append(events, json_pack("{s:o, s:o}", "event",
                                               wf_jsonw_str(c->events[k].name), "payload",
                                               payload ? wf_jsonw_raw(payload, strlen(payload))
                                                       : json_null()));
    }
    json_t *obj = ok ? json_pack("{s:o, s:O, s:O}", "name", wf_jsonw_str(c->name), "inputs",
                                 inputs, "events", events)
                     : NULL;
    json_decref(inputs);
    json_decref(events);
    return obj;
}

wf_status wfb_vcases_write(const char *path, const wfb_vcase *cases, size_t count, wf_error *err)
{
    json_t *list = json_array();
    bool built = list != NULL;
    for (size_t i = 0; built && i < count; i++)
        built = wf_jsonw_append(list, case_json(&cases[i]));
    json_t *root = built ? json_pack("{s:O}", "cases", list) : NULL;
    wf_buf b;
    wf_buf_init(&b);
    if (!root || !wf_jsonw_dump(root, WF_JSONW_INDENT_TO(2), &b) || !wf_buf_addc(&b, '\n'))
        b.oom = true; /* one case per line */
    json_decref(root);
    json_decref(list);
    if (b.oom) {
        wf_buf_fini(&b);
        return nomem(err);
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    bool ok = f && fwrite(b.data, 1, b.len, f) == b.len;
    ok = f && fclose(f) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    wf_buf_fini(&b);
    if (!ok) {
        remove(tmp);
        return wf_error_set(err, WF_E_IO, &(wf_loc){path, 0, 0}, "cannot write the file");
    }
    return WF_OK;
}

/* ---- generating -------------------------------------------------------------------------- */
struct wfb_vgen {
    const wfb_vmodern *m;
    const wfb_vlegacy *l;
    uint64_t state;
    uint64_t null_state; /* a stream of its own, so the other values do not depend on it */
    double null_rate;    /* of String, List and Object values */
    bool *seen; /* per legacy IfElse branch */
    size_t covered;
    bool *point_seen; /* per decision outcome (wfb_vlegacy_point) */
    size_t points_covered;
    wfb_vcase *corpus; /* cases that reached a new decision outcome */
    size_t corpus_count;
};

static uint64_t splitmix(uint64_t *state)
{
    /* splitmix64: reproducible for a seed on every platform */
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t rnd(wfb_vgen *g)
{
    return splitmix(&g->state);
}

static size_t pick(wfb_vgen *g, size_t n)
{
    return n ? (size_t)(rnd(g) % n) : 0;
}

wf_status wfb_vgen_create(const wfb_vmodern *m, const wfb_vlegacy *l, uint64_t seed, wfb_vgen **out,
                          wf_error *err)
{
    wfb_vgen *g = wf_calloc(1, sizeof *g);
    if (!g || !(g->seen = wf_calloc(wfb_vlegacy_branch_count(l) + 1, sizeof *g->seen)) ||
        !(g->point_seen = wf_calloc(wfb_vlegacy_point_count(l) + 1, sizeof *g->point_seen))) {
        if (g)
            wf_free(g->seen);
        wf_free(g);
        return nomem(err);
    }
    g->m = m;
    g->l = l;
    g->state = seed;
    g->null_state = seed ^ UINT64_C(0x6E756C6C); /* "null" */
    g->null_rate = WFB_VGEN_NULL_RATE;
    *out = g;
    return WF_OK;
}

void wfb_vgen_destroy(wfb_vgen *g)
{
    if (!g)
        return;
    wfb_vcases_free(g->corpus, g->corpus_count);
    wf_free(g->seen);
    wf_free(g->point_seen);
    wf_free(g);
}

static const char *const strings[] = {
    "\"\"",
    "\"a\"",
    "\"SO-1\"",
    "\"W-7\"",
    "\" \"",
    "\"Gr\\u00fc\\u00dfe \\u6771\\u4eac \\ud83d\\ude80\"",
    "\"line\\nbreak \\\"quoted\\\"\"",
    "\"x-y_z.0\"",
};
static const char *const int_edges[] = {"0",   "1",   "-1",   "2",          "10",
                                        "100", "101", "1000", "2147483647", "-2147483648"};
static const char *const long_edges[] = {
    "0", "1", "-1", "9223372036854775807", "-9223372036854775808", "1000000"};
static const char *const dec_edges[] = {"\"0\"",
                                        "\"0.0001\"",
                                        "\"-1.5\"",
                                        "\"75.50\"",
                                        "\"1000\"",
                                        "\"999.9999\"",
                                        "\"-0.0001\"",
                                        "\"922337203685.4775\"",
                                        "\"-922337203685.4775\""};
static const char *const dbl_edges[] = {"0",     "-0.5",    "1.5",
                                        "1e300", "-1e-300", "3.141592653589793"};

static void gen_value(wfb_vgen *g, const wf_type *t, wf_buf *b, int depth);
static void gen_value_of(wfb_vgen *g, const wf_type *t, wf_buf *b, int depth);

void wfb_vgen_set_null_rate(wfb_vgen *g, double rate)
{
    g->null_rate = rate < 0 ? 0 : rate > 1 ? 1 : rate;
}

/* Null is a value of String, List and Object: real callers pass it. */
static bool nullable(const wf_type *t)
{
    return t->kind == WF_K_STRING || t->kind == WF_K_LIST || t->kind == WF_K_OBJECT;
}

/* Whether this nullable value is null: drawn from the null stream at null_rate. */
static bool draw_null(wfb_vgen *g)
{
    uint64_t r = splitmix(&g->null_state) >> 11; /* 53 bits */
    return g->null_rate > 0 && (double)r / 9007199254740992.0 < g->null_rate;
}

/* One value of type t as JSON into b, from the edge values or random. */
static void gen_value(wfb_vgen *g, const wf_type *t, wf_buf *b, int depth)
{
    if (nullable(t) && draw_null(g)) {
        /* the same draws as for a value, so that the cases after it do not change */
        wf_buf scratch;
        wf_buf_init(&scratch);
        gen_value_of(g, t, &scratch, depth);
        b->oom |= scratch.oom;
        wf_buf_fini(&scratch);
        wf_buf_adds(b, "null");
        return;
    }
    gen_value_of(g, t, b, depth);
}

/* A value of type t, never null for String and List. */
static void gen_value_of(wfb_vgen *g, const wf_type *t, wf_buf *b, int depth)
{
    bool edge = rnd(g) % 3 != 0;
    switch (t->kind) {
    case WF_K_BOOL:
        wf_buf_adds(b, rnd(g) & 1 ? "true" : "false");
        break;
    case WF_K_INT32:
        if (edge)
            wf_buf_adds(b, int_edges[pick(g, sizeof int_edges / sizeof *int_edges)]);
        else
            wf_buf_addf(b, "%d", (int)(int32_t)(rnd(g) % 401) - 200);
        break;
    case WF_K_INT64:
        if (edge)
            wf_buf_adds(b, long_edges[pick(g, sizeof long_edges / sizeof *long_edges)]);
        else
            wf_buf_addf(b, "%" PRId64, (int64_t)(rnd(g) % 200001) - 100000);
        break;
    case WF_K_DECIMAL:
        if (edge)
            wf_buf_adds(b, dec_edges[pick(g, sizeof dec_edges / sizeof *dec_edges)]);
        else
            wf_buf_addf(b, "\"%d.%02d\"", (int)(rnd(g) % 2001) - 1000, (int)(rnd(g) % 100));
        break;
    case WF_K_DOUBLE:
        if (edge)
            wf_buf_adds(b, dbl_edges[pick(g, sizeof dbl_edges / sizeof *dbl_edges)]);
        else
            wf_buf_addf(b, "%.6f", (double)(int64_t)(rnd(g) % 2000001 - 1000000) / 1000.0);
        break;
    case WF_K_STRING:
        if (edge) {
            wf_buf_adds(b, strings[pick(g, sizeof strings / sizeof *strings)]);
        } else if (rnd(g) & 1) { /* long */
            wf_buf_addc(b, '"');
            for (size_t i = 0, n = 200 + pick(g, 400); i < n; i++)
                wf_buf_addc(b, (char)('a' + pick(g, 26)));
            wf_buf_addc(b, '"');
        } else {
            wf_buf_addf(b, "\"id-%u\"", (unsigned)pick(g, 1000));
        }
        break;
    case WF_K_TIMESPAN: /* a null cannot be converted to a TimeSpan: 1 to 59 seconds */
        wf_buf_addf(b, "\"00:00:%02u\"", 1 + (unsigned)pick(g, 59));
        break;
    case WF_K_DATETIME:
        wf_buf_addf(b, "\"20%02u-0%u-1%uT0%u:00:00Z\"", (unsigned)pick(g, 40),
                    1 + (unsigned)pick(g, 9), (unsigned)pick(g, 9), (unsigned)pick(g, 9));
        break;
    case WF_K_LIST: {
        wf_buf_addc(b, '[');
        size_t n = depth > 1 ? 0 : pick(g, 5);
        for (size_t i = 0; i < n; i++) {
            wf_buf_adds(b, i ? ", " : "");
            gen_value(g, t->elem, b, depth + 1);
        }
        wf_buf_addc(b, ']');
        break;
    }
    default:
        wf_buf_adds(b, "null");
        break;
    }
}

/* A number a hint stands for; false for other values. */
static bool hint_number(const wf_value *v, double *x)
{
    switch (v->type->kind) {
    case WF_K_INT32:
        *x = v->u.i32;
        return true;
    case WF_K_INT64:
        *x = (double)v->u.i64;
        return true;
    case WF_K_DOUBLE:
        *x = v->u.d;
        return true;
    case WF_K_DECIMAL:
        *x = wf_decimal_to_double(v->u.dec);
        return true;
    default:
        return false;
    }
}

/* A value of type t at or next to the constant of hint h (docs/verify.md "Coverage"): the
 * constant itself, one step below or one above. False when h does not fit t. */
static bool gen_hinted(wfb_vgen *g, const wf_type *t, const wfb__vhint *h, wf_buf *b)
{
    double x, step = (double)pick(g, 3) - 1;
    if (t->kind == WF_K_STRING && h->value->type->kind == WF_K_STRING)
        return wf_value_to_json(h->value, b);
    if (!hint_number(h->value, &x))
        return false;
    switch (t->kind) {
    case WF_K_INT32:
    case WF_K_INT64:
        if (x < -9e18 || x > 9e18)
            return false;
        wf_buf_addf(b, "%" PRId64, (int64_t)x + (int64_t)step);
        return true;
    case WF_K_DECIMAL:
        wf_buf_addf(b, "\"%.4f\"", x + step / 100);
        return true;
    case WF_K_DOUBLE:
        wf_buf_addf(b, "%.17g", x + step / 100);
        return true;
    default:
        return false;
    }
}

/* A third of the values of an input that a rule condition compares with constants are one of
 * those constants or a neighbour (no draw for the other inputs: their values stay those of
 * the seed). */
static bool gen_from_hints(wfb_vgen *g, const char *name, const wf_type *t, wf_buf *b)
{
    const wfb__cover *cv = wfb__vlegacy_cover(g->l);
    const wfb__vhint *mine[16];
    size_t n = 0;
    for (size_t i = 0; i < wfb__cover_hint_count(cv) && n < 16; i++)
        if (strcmp(wfb__cover_hint(cv, i)->name, name) == 0)
            mine[n++] = wfb__cover_hint(cv, i);
    if (!n || rnd(g) % 3 != 0)
        return false;
    return gen_hinted(g, t, mine[pick(g, n)], b);
}

static wf_status gen_input(wfb_vgen *g, wfb_vcase *c, size_t arg, wf_error *err)
{
    wf_buf b;
    wf_buf_init(&b);
    const char *name = wfb_vmodern_arg_name(g->m, arg);
    const wf_type *t = wfb_vmodern_arg_type(g->m, arg);
    if (!gen_from_hints(g, name, t, &b)) {
        wf_buf_reset(&b);
        gen_value(g, t, &b, 0);
    }
    wf_status rc = b.oom ? nomem(err) : wfb_vcase_set(c, name, b.data, err);
    wf_buf_fini(&b);
    return rc;
}

/* The integer input `name` of c, when it has one. */
static bool int_input(const wfb_vcase *c, const char *name, int64_t *v)
{
    for (size_t i = 0; i < c->input_count; i++) {
        if (strcmp(c->inputs[i].name, name) != 0)
            continue;
        char *end;
        long long x = strtoll(c->inputs[i].json, &end, 10);
        *v = x;
        return end != c->inputs[i].json && *end == '\0';
    }
    return false;
}

/* Change one input of a kept case: an integer (a loop counter, a count, an index) half the
 * time moves next to its value (one less or more, half, the negation, twice plus one), so the
 * runs around the kept one are tried (a loop run once where it ran three times); else a new
 * value. */
static wf_status vary_input(wfb_vgen *g, wfb_vcase *c, size_t arg, wf_error *err)
{
    const char *name = wfb_vmodern_arg_name(g->m, arg);
    const wf_type *t = wfb_vmodern_arg_type(g->m, arg);
    int64_t v;
    bool is_int = t->kind == WF_K_INT32 || t->kind == WF_K_INT64;
    if (!is_int || !int_input(c, name, &v) || rnd(g) & 1)
        return gen_input(g, c, arg, err);
    int64_t lo = t->kind == WF_K_INT32 ? INT32_MIN : INT64_MIN;
    int64_t hi = t->kind == WF_K_INT32 ? INT32_MAX : INT64_MAX;
    int64_t next[] = {v > lo ? v - 1 : v, v < hi ? v + 1 : v, v / 2, v > lo ? -v : v,
                      v >= -1 && v < hi / 2 ? 2 * v + 1 : v};
    char text[32];
    snprintf(text, sizeof text, "%" PRId64, next[pick(g, sizeof next / sizeof *next)]);
    return wfb_vcase_set(c, name, text, err);
}

static void drop_event(wfb_vcase *c, size_t at)
{
    wf_free(c->events[at].name);
    wf_free(c->events[at].payload);
    memmove(&c->events[at], &c->events[at + 1], (c->event_count - at - 1) * sizeof *c->events);
    c->event_count--;
}

/* Vary the event script of a case (docs/verify.md "Coverage"): a quarter of them get only a
 * prefix of it (possibly none: the outcomes of an event that does not come, a Delay branch
 * that wins, a state left by its timeout); of a script of several events, a quarter have one
 * event moved before another (the orders of events a run waits on at once) and a quarter lose
 * one event. */
static void vary_script(wfb_vgen *g, wfb_vcase *c)
{
    uint64_t how = rnd(g) % 4;
    if (how == 0) {
        for (size_t keep = pick(g, c->event_count); c->event_count > keep;)
            drop_event(c, c->event_count - 1);
    } else if (how == 1 && c->event_count > 1) {
        size_t from = 1 + pick(g, c->event_count - 1), to = pick(g, from);
        wfb_vevent moved = c->events[from];
        memmove(&c->events[to + 1], &c->events[to], (from - to) * sizeof *c->events);
        c->events[to] = moved;
    } else if (how == 2 && c->event_count > 1) {
        drop_event(c, pick(g, c->event_count));
    }
}

/* The first generated case leaves its inputs out, so both sides start from their own
 * defaults (a property's Default in the legacy type library, the argument default the
 * conversion wrote): the run a caller gets without --arg. Its values are drawn all the same,
 * so the cases after it are those the seed always gave. With --no-null, inputs whose default
 * is null (String, List, Object) keep their drawn value. */
static void leave_inputs_out(const wfb_vgen *g, wfb_vcase *c)
{
    for (size_t i = 0; i < wfb_vmodern_arg_count(g->m); i++) {
        wf_kind k = wfb_vmodern_arg_type(g->m, i)->kind;
        bool null_default = k == WF_K_STRING || k == WF_K_LIST || k == WF_K_OBJECT;
        if (g->null_rate > 0 || !null_default)
            wfb_vcase_set(c, wfb_vmodern_arg_name(g->m, i), NULL, NULL); /* removal: no error */
    }
}

wf_status wfb_vgen_next(wfb_vgen *g, size_t index, const wfb_vevent *events, size_t event_count,
                        wfb_vcase *out, wf_error *err)
{
    memset(out, 0, sizeof *out);
    wf_status rc;
    /* half the time, once some case reached a new outcome: vary one input of such a case
     * (it keeps its event script) */
    bool varied = g->corpus_count && rnd(g) & 1;
    if (varied) {
        rc = wfb_vcase_copy(&g->corpus[pick(g, g->corpus_count)], out, err);
        if (rc == WF_OK && wfb_vmodern_arg_count(g->m))
            rc = vary_input(g, out, pick(g, wfb_vmodern_arg_count(g->m)), err);
    } else {
        rc = WF_OK;
        for (size_t i = 0; rc == WF_OK && i < wfb_vmodern_arg_count(g->m); i++)
            rc = gen_input(g, out, i, err);
        if (rc == WF_OK && index == 0)
            leave_inputs_out(g, out);
    }
    char name[32];
    snprintf(name, sizeof name, "gen-%zu", index + 1);
    wf_free(out->name);
    out->name = wf_strdup(name);
    if (rc == WF_OK && !out->name)
        rc = nomem(err);
    if (rc == WF_OK && !varied) {
        wfb_vevents_free(out->events, out->event_count);
        rc = copy_events(events, event_count, &out->events, &out->event_count, err);
    }
    if (rc == WF_OK && out->event_count)
        vary_script(g, out);
    if (rc != WF_OK)
        wfb_vcase_fini(out);
    return rc;
}

wf_status wfb_vgen_feedback(wfb_vgen *g, const wfb_vcase *c, const wfb_vobs *legacy_obs,
                            wf_error *err)
{
    bool fresh = false;
    for (size_t i = 0; i < legacy_obs->taken_count; i++)
        for (size_t k = 0; k < wfb_vlegacy_branch_count(g->l); k++)
            if (!g->seen[k] &&
                strcmp(wfb_vlegacy_branch_name(g->l, k), legacy_obs->taken[i]) == 0) {
                g->seen[k] = true;
                g->covered++;
            }
    for (size_t i = 0; i < legacy_obs->hit_count; i++) {
        size_t k = legacy_obs->hits[i];
        if (k < wfb_vlegacy_point_count(g->l) && !g->point_seen[k]) {
            g->point_seen[k] = fresh = true;
            g->points_covered++;
        }
    }
    if (!fresh)
        return WF_OK;
    wfb_vcase *grown = wf_realloc(g->corpus, (g->corpus_count + 1) * sizeof *grown);
    if (!grown)
        return nomem(err);
    g->corpus = grown;
    wf_status rc = wfb_vcase_copy(c, &g->corpus[g->corpus_count], err);
    g->corpus_count++;
    return rc;
}

size_t wfb_vgen_covered(const wfb_vgen *g)
{
    return g->covered;
}

bool wfb_vgen_branch_seen(const wfb_vgen *g, size_t index)
{
    return index < wfb_vlegacy_branch_count(g->l) && g->seen[index];
}

size_t wfb_vgen_points_covered(const wfb_vgen *g)
{
    return g->points_covered;
}

bool wfb_vgen_point_seen(const wfb_vgen *g, size_t index)
{
    return index < wfb_vlegacy_point_count(g->l) && g->point_seen[index];
}

/* ---- shrinking --------------------------------------------------------------------------- */
static const wf_type *arg_type(const wfb_vmodern *m, const char *name)
{
    for (size_t i = 0; i < wfb_vmodern_arg_count(m); i++)
        if (strcmp(wfb_vmodern_arg_name(m, i), name) == 0)
            return wfb_vmodern_arg_type(m, i);
    return NULL;
}

/* Simpler candidates for one JSON value of type t, simplest first (at most 4). */
static size_t candidates(const wf_type *t, const char *json, char out[][128])
{
    size_t n = 0;
    if (!t)
        return 0;
    switch (t->kind) {
    case WF_K_BOOL:
        snprintf(out[n++], 128, "false");
        break;
    case WF_K_INT32:
    case WF_K_INT64: {
        long long v = strtoll(json, NULL, 10);
        snprintf(out[n++], 128, "0");
        snprintf(out[n++], 128, "%lld", v / 2);
        snprintf(out[n++], 128, "%lld", v > 0 ? v - 1 : v + 1);
        break;
    }
    case WF_K_DOUBLE:
        snprintf(out[n++], 128, "0");
        snprintf(out[n++], 128, "%.17g", strtod(json, NULL) / 2);
        break;
    case WF_K_DECIMAL: {
        long long whole = strtoll(json + (json[0] == '"'), NULL, 10); /* the integer part */
        snprintf(out[n++], 128, "\"0\"");
        snprintf(out[n++], 128, "\"%lld\"", whole / 2);
        snprintf(out[n++], 128, "\"%lld\"", whole);
        break;
    }
    case WF_K_STRING: {
        snprintf(out[n++], 128, "\"\"");
        snprintf(out[n++], 128, "\"a\"");
        size_t len = strlen(json);
        if (len > 4 && len / 2 < 120) { /* the first half, if it is plain */
            bool plain = true;
            for (size_t i = 1; i < len / 2; i++)
                plain &= json[i] != '\\' && (unsigned char)json[i] < 0x80;
            if (plain)
                snprintf(out[n++], 128, "%.*s\"", (int)(len / 2), json);
        }
        break;
    }
    case WF_K_LIST:
        snprintf(out[n++], 128, "[]");
        break;
    default:
        break;
    }
    return n;
}

wf_status wfb_vshrink(wfb_vcase *c, const wfb_vmodern *m, wfb_vpred_fn pred, void *ud,
                      size_t max_tries, wf_error *err)
{
    wfb_vshrink_opts o = {.max_tries = max_tries, .no_null = false};
    return wfb_vshrink_with(c, m, pred, ud, &o, err);
}

/* The trials for one input, simplest first, in tries[] (NULL: leave the input out). Leaving
 * out comes first (the workflow's default), except for a String, List or Object input, whose
 * default is null: there the non-null candidates come first, then leaving out, then null, so a
 * shrunk case is null only when nothing else shows the divergence; without null neither. */
static size_t trials(const wf_type *t, const char *json, bool no_null, char cand[][128],
                     const char **out)
{
    size_t n = candidates(t, json, cand), k = 0;
    bool null_kind = t && nullable(t);
    if (!null_kind)
        out[k++] = NULL;
    for (size_t i = 0; i < n; i++)
        out[k++] = cand[i];
    if (null_kind && !no_null) {
        out[k++] = NULL;
        out[k++] = "null";
    }
    return k;
}

wf_status wfb_vshrink_with(wfb_vcase *c, const wfb_vmodern *m, wfb_vpred_fn pred, void *ud,
                           const wfb_vshrink_opts *o, wf_error *err)
{
    size_t tries = 0, max_tries = o->max_tries;
    for (bool progress = true; progress && tries < max_tries;) {
        progress = false;
        for (size_t i = 0; i < c->input_count && tries < max_tries; i++) {
            char cand[5][128];
            const char *order[8];
            const wf_type *t = arg_type(m, c->inputs[i].name);
            size_t n = trials(t, c->inputs[i].json, o->no_null, cand, order);
            /* only what comes before the value itself in that order is simpler */
            for (size_t k = 0; k < n; k++)
                if (order[k] && strcmp(order[k], c->inputs[i].json) == 0)
                    n = k;
            for (size_t k = 0; k < n && tries < max_tries; k++) {
                const char *json = order[k];
                wfb_vcase trial;
                wf_status rc = wfb_vcase_copy(c, &trial, err);
                if (rc == WF_OK)
                    rc = wfb_vcase_set(&trial, c->inputs[i].name, json, err);
                bool diverges = false;
                if (rc == WF_OK)
                    rc = pred(ud, &trial, &diverges, err);
                tries++;
                if (rc != WF_OK) {
                    wfb_vcase_fini(&trial);
                    return rc;
                }
                if (diverges) {
                    char *name = c->name;
                    c->name = trial.name;
                    trial.name = name;
                    wfb_vcase_fini(c);
                    *c = trial;
                    progress = true;
                    break;
                }
                wfb_vcase_fini(&trial);
            }
        }
    }
    return WF_OK;
}

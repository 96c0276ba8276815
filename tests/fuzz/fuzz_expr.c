/* fuzz_expr.c — libFuzzer target for the expression compiler: compile the input against a
 * fixed scope (typed names in a two-level environment), evaluate it when it compiles, and
 * store through it when it compiles as an l-value; once more with String expected (implicit
 * conversions, the empty expression). Any crash, leak or sanitizer report is a
 * bug; errors and run-time exceptions are expected outcomes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../modern/wfm_expr.h"

enum { S_COUNT, S_NAME, S_TOTAL, S_FLAG, S_OBJ, S_REC, S_LIST, S_WHEN, S_NUL, S_SLOTS };

static const struct {
    const char *name;
    uint32_t hops, index;
} fuzz_names[] = {
    {"count", 0, S_COUNT}, {"name", 0, S_NAME}, {"total", 0, S_TOTAL}, {"flag", 0, S_FLAG},
    {"obj", 0, S_OBJ},     {"rec", 0, S_REC},   {"list", 0, S_LIST},   {"when", 0, S_WHEN},
    {"nul", 0, S_NUL},     {"up", 1, 0},
};

static const wf_type *list_type;

static const wf_type *slot_type(uint32_t hops, uint32_t index)
{
    if (hops == 1)
        return &wf_type_int64;
    static const wf_type *const t[S_SLOTS] = {&wf_type_int32, &wf_type_string,   &wf_type_decimal,
                                              &wf_type_bool,  &wf_type_object,   &wf_type_record,
                                              NULL,           &wf_type_datetime, &wf_type_string};
    return index == S_LIST ? list_type : t[index];
}

static bool fuzz_resolve(void *ud, const char *name, size_t len, wfm_name *out)
{
    (void)ud;
    for (size_t i = 0; i < sizeof fuzz_names / sizeof fuzz_names[0]; i++)
        if (strlen(fuzz_names[i].name) == len && memcmp(fuzz_names[i].name, name, len) == 0) {
            out->type = slot_type(fuzz_names[i].hops, fuzz_names[i].index);
            out->hops = fuzz_names[i].hops;
            out->index = fuzz_names[i].index;
            out->writable = i % 2 == 0;
            return true;
        }
    return false;
}

static void make_env(wf_value *slots, wf_value *up)
{
    for (int i = 0; i < S_SLOTS; i++)
        slots[i] = wf_null();
    slots[S_COUNT] = wf_int32(7);
    wf_value_cstring("Widget", &slots[S_NAME]);
    slots[S_TOTAL] = wf_dec(wf_decimal_from_currency(1250000));
    slots[S_FLAG] = wf_bool(true);
    slots[S_OBJ] = wf_int32(42);
    wf_value v[2] = {wf_int32(1), wf_null()};
    wf_value_cstring("x", &v[1]);
    const char *keys[] = {"A", "B"};
    wf_value_record(keys, v, 2, &slots[S_REC]);
    wf_value_release(&v[1]);
    wf_value items[3] = {wf_int32(1), wf_int32(2), wf_int32(3)};
    wf_value_list(list_type, items, 3, &slots[S_LIST]);
    slots[S_WHEN] = wf_datetime_us(1709287200000000LL);
    *up = wf_int64(-3);
}

static void run(wf_arena *arena, const wfm_expr_scope *scope, const char *text,
                const wf_type *expected, unsigned flags)
{
    wf_value slots[S_SLOTS], up;
    make_env(slots, &up);
    wfm_env outer = {NULL, &up, 1};
    wfm_env inner = {&outer, slots, S_SLOTS};
    wf_error err = WF_ERROR_INIT;
    wfm_expr *e = NULL;
    wf_loc at = {"fuzz.xaml", 1, 1};
    if (wfm_expr_compile(arena, scope, text, at, expected, flags, &e, &err) == WF_OK) {
        wf_value out, exc;
        wfm_expr_eval(e, &inner, &out, &exc);
        wf_value_release(&exc);
        if (flags & WFM_EXPR_LVALUE)
            wfm_expr_store(e, &inner, &out, &exc);
        wf_value_release(&out);
        wf_value_release(&exc);
        (void)wfm_expr_text(e);
        (void)wfm_expr_is_constant(e);
    }
    for (int i = 0; i < S_SLOTS; i++)
        wf_value_release(&slots[i]);
    wf_value_release(&up);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    wf_types *types = wf_types_create();
    wf_arena *arena = wf_arena_create(0);
    if (types && arena) {
        list_type = wf_types_list(types, &wf_type_int32);
        wfm_expr_scope scope = {fuzz_resolve, NULL, types};
        if (list_type) {
            run(arena, &scope, text, NULL, 0);
            run(arena, &scope, text, NULL, WFM_EXPR_LVALUE);
            run(arena, &scope, text, &wf_type_string, 0); /* implicit conversions, "[]" */
        }
    }
    wf_arena_destroy(arena);
    wf_types_destroy(types);
    free(text);
    return 0;
}

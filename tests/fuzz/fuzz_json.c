/* fuzz_json.c — libFuzzer target for the JSON reader (jansson plus the depth and number scan):
 * parse, render the value back to JSON, and check the rendering parses again to an equal
 * value; errors must carry a position; the typed reader (List(Decimal)) must refuse bad
 * JSON exactly as the plain one does. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../common/wf_value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The typed reader (List(Decimal)) on the same bytes: no crash or leak, and text the plain
 * reader refused is refused the same way, at the same place. */
static void typed(const uint8_t *data, size_t size, const wf_error *plain)
{
    wf_types *types = wf_types_create();
    const wf_type *decs = types ? wf_types_list(types, &wf_type_decimal) : NULL;
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    if (decs) {
        wf_status st = wf_json_parse_as(types, decs, (const char *)data, size, &v, &err);
        if (st == WF_OK)
            wf_value_release(&v);
        if (plain && plain->code != WF_E_NOMEM &&
            (st != plain->code || err.line != plain->line || err.col != plain->col))
            abort();
    }
    wf_types_destroy(types);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    if (wf_json_parse(NULL, (const char *)data, size, &v, &err) != WF_OK) {
        if (err.code != WF_E_NOMEM && (err.line == 0 || err.col == 0))
            abort(); /* every refusal has a line and column */
        typed(data, size, &err);
        return 0;
    }
    typed(data, size, NULL);
    wf_buf out;
    wf_buf_init(&out);
    if (wf_value_to_json(&v, &out)) {
        wf_value again;
        wf_error err2 = WF_ERROR_INIT;
        if (wf_json_parse(NULL, out.data, out.len, &again, &err2) != WF_OK)
            abort(); /* our own output must be valid JSON */
        if (!wf_value_equal(&v, &again))
            abort(); /* and must mean the same */
        wf_value_release(&again);
    }
    wf_buf_fini(&out);
    wf_value_release(&v);
    return 0;
}

/* fuzz_json.c — libFuzzer target for the strict JSON reader: parse, render the value back to
 * JSON, and check the rendering parses again to an equal value. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../common/wf_value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wf_value v;
    wf_error err = WF_ERROR_INIT;
    if (wf_json_parse(NULL, (const char *)data, size, &v, &err) != WF_OK)
        return 0;
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

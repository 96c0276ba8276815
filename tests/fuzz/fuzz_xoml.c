/* fuzz_xoml.c — libFuzzer target for the XOML loader: any bytes, loaded from memory with no
 * library path (so clr-namespace libraries are reported missing, never opened); every outcome
 * must be a clean status with nothing leaked. When a definition loads, an instance of it is
 * created, saved and restored too. */
#include <stddef.h>
#include <stdint.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_inst.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const wfl_definition *def)
{
    wfl_inst *inst = NULL;
    if (wfl_inst_create(def, &inst, NULL) != WF_OK)
        return;
    wf_buf buf;
    wf_buf_init(&buf);
    if (wfl_inst_save(inst, NULL, &buf, NULL) == WF_OK) {
        wfl_inst *back = NULL;
        if (wfl_inst_restore(def, buf.data, buf.len, NULL, &back, NULL) == WF_OK)
            wfl_inst_destroy(back);
    }
    wf_buf_fini(&buf);
    wfl_inst_destroy(inst);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wf_types *types = wf_types_create();
    wf_diags *diags = wf_diags_create();
    if (types != NULL && diags != NULL) {
        wfl_load_opts o = WFL_LOAD_OPTS_INIT;
        o.types = types;
        o.diags = diags;
        wfl_definition *def = NULL;
        if (wfl_definition_load_mem(&o, "fuzz.xoml", (const char *)data, size, &def, NULL) ==
            WF_OK) {
            round_trip(def);
            wfl_definition_destroy(def);
        }
    }
    wf_diags_destroy(diags);
    wf_types_destroy(types);
    return 0;
}

/* fuzz_xoml.c — libFuzzer target for the XOML loader and the saved-instance decoder: input that
 * starts with "WFLI" is restored as a saved instance of a fixed workflow; anything else is
 * loaded as XOML from memory with no library path (clr-namespace libraries are reported
 * missing, never opened), and a definition that loads is instantiated, saved and restored.
 * Every outcome must be a clean status with nothing leaked. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_inst_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The workflow saved-instance inputs are restored against (kept for the whole run). */
static const char fixed_xoml[] =
    "<SequentialWorkflowActivity x:Name=\"W\" "
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
    "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">\n"
    "  <WhileActivity x:Name=\"loop\">\n"
    "    <WhileActivity.Condition><RuleConditionReference ConditionName=\"C\"/>"
    "</WhileActivity.Condition>\n"
    "    <SequenceActivity x:Name=\"body\">\n"
    "      <TerminateActivity x:Name=\"t1\" Error=\"{ActivityBind t2,Path=Error}\"/>\n"
    "      <ReplicatorActivity x:Name=\"rep\"><DelayActivity x:Name=\"d\"/></ReplicatorActivity>\n"
    "    </SequenceActivity>\n"
    "  </WhileActivity>\n"
    "  <TerminateActivity x:Name=\"t2\" Error=\"x\"/>\n"
    "</SequentialWorkflowActivity>\n";

static wf_types *fixed_types;
static wfl_definition *fixed_def;

static void restore_bytes(const uint8_t *data, size_t size)
{
    if (fixed_def == NULL) {
        wfl_load_opts o = WFL_LOAD_OPTS_INIT;
        o.types = fixed_types = wf_types_create();
        if (wfl_definition_load_mem(&o, "fixed.xoml", fixed_xoml, strlen(fixed_xoml), &fixed_def,
                                    NULL) != WF_OK)
            return;
    }
    wfl_inst *inst = NULL;
    if (wfl_inst_restore(fixed_def, data, size, NULL, &inst, NULL) == WF_OK) {
        wf_buf buf;
        wf_buf_init(&buf);
        (void)wfl_inst_save(inst, NULL, &buf, NULL);
        wf_buf_fini(&buf);
        wfl_inst_destroy(inst);
    }
}

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

static void load_bytes(const uint8_t *data, size_t size)
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 4 && memcmp(data, "WFLI", 4) == 0)
        restore_bytes(data, size);
    else
        load_bytes(data, size);
    return 0;
}

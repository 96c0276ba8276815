/* fuzz_xoml.c — libFuzzer target for the XOML loader and the saved-instance decoder: input that
 * starts with "WFLI" is restored as a saved instance of a fixed workflow; anything else is
 * loaded as XOML from memory with no library path (clr-namespace libraries are reported
 * missing, never opened), and a definition that loads is instantiated, saved and restored.
 * Every outcome must be a clean status with nothing leaked. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
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

/* Its .rules: condition C (false), written once to a temporary file. */
static const char fixed_rules[] =
    "<RuleDefinitions xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">"
    "<RuleDefinitions.Conditions><RuleExpressionCondition Name=\"C\">"
    "<RuleExpressionCondition.Expression><ns0:CodePrimitiveExpression "
    "xmlns:ns0=\"clr-namespace:System.CodeDom;Assembly=System\">"
    "<ns0:CodePrimitiveExpression.Value><ns1:Boolean xmlns:ns1=\"clr-namespace:System;"
    "Assembly=mscorlib\">false</ns1:Boolean></ns0:CodePrimitiveExpression.Value>"
    "</ns0:CodePrimitiveExpression></RuleExpressionCondition.Expression>"
    "</RuleExpressionCondition></RuleDefinitions.Conditions></RuleDefinitions>\n";

static const char *write_fixed_rules(void)
{
    static char path[1024];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/wfbridge-fuzz-xoml-%ld.rules", tmp && *tmp ? tmp : "/tmp",
             (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f || fputs(fixed_rules, f) == EOF || fclose(f) != 0)
        __builtin_trap();
    return path;
}

static wf_types *fixed_types;
static wfl_definition *fixed_def;

static void restore_bytes(const uint8_t *data, size_t size)
{
    if (fixed_def == NULL) {
        wfl_load_opts o = WFL_LOAD_OPTS_INIT;
        o.types = fixed_types = wf_types_create();
        o.rules_path = write_fixed_rules();
        /* The fixed workflow must load: otherwise no saved instance is ever decoded. */
        if (wfl_definition_load_mem(&o, "fixed.xoml", fixed_xoml, strlen(fixed_xoml), &fixed_def,
                                    NULL) != WF_OK)
            __builtin_trap();
        remove(o.rules_path);
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

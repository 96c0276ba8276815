/* fuzz_rules.c — libFuzzer target for the .rules loader: any bytes go through
 * wfl_rules_load_mem; a document that loads is also printed and its conditions evaluated
 * against an empty target, so the evaluator sees every tree the parser accepts. */
#include <stddef.h>
#include <stdint.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static wf_status no_member(void *ud, const wfl_rules_seg *path, size_t count, wf_value *out,
                           wf_value *exc, wf_error *err)
{
    (void)ud;
    (void)path;
    (void)count;
    (void)out;
    (void)exc;
    return wf_error_set(err, WF_E_NAME, NULL, "no members");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wf_types *types = wf_types_create();
    if (!types)
        return 0;
    wfl_rules *rules = NULL;
    wf_diags *diags = wf_diags_create();
    wf_error err = WF_ERROR_INIT;
    if (wfl_rules_load_mem("fuzz.rules", (const char *)data, size, types, &rules, diags, &err) ==
        WF_OK) {
        wfl_rules_target target = {no_member, NULL, NULL, NULL, NULL};
        for (size_t i = 0; i < wfl_rules_condition_count(rules); i++) {
            const wfl_rule_cond *c = wfl_rules_condition_at(rules, i);
            wf_buf buf;
            wf_buf_init(&buf);
            wfl_rules_expr_text(wfl_rule_cond_expr(c), &buf);
            wf_buf_fini(&buf);
            bool result;
            wf_value exc = wf_null();
            wf_error e = WF_ERROR_INIT;
            wfl_rules_eval_condition(c, &target, &result, &exc, &e);
            wf_value_release(&exc);
        }
        for (size_t i = 0; i < wfl_rules_ruleset_count(rules); i++) {
            wf_value exc = wf_null();
            wf_error e = WF_ERROR_INIT;
            wfl_rules_exec_opts opts = WFL_RULES_EXEC_OPTS_INIT;
            opts.max_evaluations = 1000;
            wfl_rules_execute(wfl_rules_ruleset_at(rules, i), &target, &opts, &exc, &e);
            wf_value_release(&exc);
        }
    }
    wfl_rules_destroy(rules);
    wf_diags_destroy(diags);
    wf_types_destroy(types);
    return 0;
}

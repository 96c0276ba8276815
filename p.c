#include <stdio.h>
#include "/work/main/modern/wfm_persist.h"
int main(int argc, char **argv) {
    wfm_runtime *rt; wf_error err = WF_ERROR_INIT;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT; o.worker_count = 1;
    wfm_runtime_create(&o, &rt, &err);
    wfm_definition *def;
    if (wfm_runtime_load(rt, argv[1], &def, NULL, &err)) { printf("load %s\n", err.message); return 1; }
    wfm_instance *inst; wfm_instance_create(rt, def, &inst, &err);
    wfm_instance_run(inst, &err);
    printf("state %s\n", wfm_instance_state_name(wfm_instance_state_get(inst)));
    wf_buf b; wf_buf_init(&b);
    wf_status st = wfm_instance_save(inst, &b, &err);
    printf("save %d %s len %zu\n", st, err.message, b.len);
    return 0;
}

/* use.c — a program outside the tree that uses an installed wfbridge: it runs a one-activity
 * modern workflow and prints the status and output. tests/install/test_install.sh builds it
 * against the shared and the static library through pkg-config. */
#include <stdio.h>
#include <string.h>

#include <modern/wfm_runtime.h>

static const char xaml[] =
    "<Activity x:Class=\"Use.Hello\""
    " xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\""
    " xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"
    "<WriteLine Text=\"hello from an installed wfbridge\" /></Activity>";

int main(void)
{
    wfm_runtime_opts opts = WFM_RUNTIME_OPTS_INIT;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    opts.worker_count = 1;
    int rc = 1;
    if (wfm_runtime_create(&opts, &rt, &err) == WF_OK &&
        wfm_runtime_load_mem(rt, "hello.xaml", xaml, strlen(xaml), &def, NULL, &err) == WF_OK &&
        wfm_instance_create(rt, def, &inst, &err) == WF_OK &&
        wfm_instance_run(inst, &err) == WF_OK) {
        printf("%s\n", wfm_instance_state_name(wfm_instance_state_get(inst)));
        rc = 0;
    } else {
        fprintf(stderr, "use: %s\n", err.message);
    }
    wfm_instance_destroy(inst);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    return rc;
}

/* wfb_main.c — the `wfbridge` program: dispatches a verb to its file in bridge/. This is the
 * only place a wf_error becomes process output and an exit code (docs/style.md "Errors"). */
#include <stdio.h>
#include <string.h>

#include "wfb_cli.h"

static const struct verb {
    const char *name;
    wfb_verb_fn fn;
    const char *summary;
} verbs[] = {
    {"run", wfb_cmd_run, "run a modern .xaml workflow"},
    {"run-legacy", wfb_cmd_run_legacy, "run a legacy .xoml workflow unchanged"},
    {"instances", wfb_cmd_instances, "list the instances of an instance store"},
    {"resume", wfb_cmd_resume, "resume a persisted instance's bookmark"},
    {"inspect", wfb_cmd_inspect, "show a persisted instance's state and store row"},
    {"host", wfb_cmd_host, "run persisted instances whose timers are due"},
    {"start", wfb_cmd_start, "create runnable instances in a store for hosts to run"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: wfbridge VERB [options]\n\n"
                 "wfbridge moves WF3-style (XOML) workflows to the WF4-style (XAML) model.\n\n"
                 "verbs:\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        fprintf(out, "  %-12s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(out, "\n'wfbridge VERB --help' describes a verb. Exit status: 0 success, 1 the "
                 "workflow\nfaulted or verification diverged, 2 usage or input error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strcmp(argv[1], verbs[i].name) == 0)
            return verbs[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "wfbridge: unknown verb '%s' (see 'wfbridge --help')\n", argv[1]);
    return 2;
}

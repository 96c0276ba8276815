/* wfb_main.c — the `wfbridge` program: dispatches a verb to its file in bridge/, answers
 * --help, --version and `help VERB`, and checks that stdout was written. This is the only
 * place a verb's result becomes the process exit code (docs/style.md "Errors"). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "wfb_cli.h"
#include "wfb_version.h"

static const struct verb {
    const char *name;
    wfb_verb_fn fn;
    const char *summary;
} verbs[] = {
    {"convert", wfb_cmd_convert, "convert legacy .xoml workflows to modern .xaml"},
    {"run", wfb_cmd_run, "run a modern .xaml workflow"},
    {"run-legacy", wfb_cmd_run_legacy, "run a legacy .xoml workflow unchanged"},
    {"instances", wfb_cmd_instances, "list the instances of an instance store"},
    {"resume", wfb_cmd_resume, "resume a persisted instance's bookmark"},
    {"inspect", wfb_cmd_inspect, "show a persisted instance's state and store row"},
    {"host", wfb_cmd_host, "run a store's runnable instances (due timers, resumptions)"},
    {"verify", wfb_cmd_verify, "prove a conversion behaves like the legacy workflow"},
    {"start", wfb_cmd_start, "create runnable instances in a store for hosts to run"},
    {"migrate-instances", wfb_cmd_migrate_instances, "move waiting legacy instances to a modern store"},
    {"verify-instances", wfb_cmd_verify_instances, "prove migrated instances behave as their originals"},
    {"serve", wfb_cmd_serve, "serve workflow services over HTTP (SOAP, WSDL, JSON)"},
};
#define VERB_COUNT (sizeof verbs / sizeof verbs[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: wfbridge VERB [options]\n"
                 "       wfbridge help [VERB] | --help | --version\n\n"
                 "wfbridge runs WF3-style (XOML) and WF4-style (XAML) workflows.\n\n"
                 "verbs:\n");
    for (size_t i = 0; i < VERB_COUNT; i++)
        fprintf(out, "  %-12s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(out, "\n'wfbridge help VERB' or 'wfbridge VERB --help' describes a verb. Exit status:\n"
                 "0 success, 1 the workflow faulted, 2 usage or input error.\n");
}

static const struct verb *find_verb(const char *name)
{
    for (size_t i = 0; i < VERB_COUNT; i++)
        if (strcmp(name, verbs[i].name) == 0)
            return &verbs[i];
    return NULL;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2)
        return wfb_usage_error("no verb given");
    const char *a = argv[1];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 ||
        (strcmp(a, "help") == 0 && argc == 2)) {
        usage(stdout);
        return 0;
    }
    if (strcmp(a, "--version") == 0) {
        printf("wfbridge %s\n", WFB_VERSION);
        return 0;
    }
    if (strcmp(a, "help") == 0) {
        const struct verb *v = find_verb(argv[2]);
        wfb_verb_begin("help");
        if (argc > 3)
            return wfb_error("unexpected argument '%s' (one verb only; see 'wfbridge --help')",
                             argv[3]);
        if (!v)
            return wfb_error("unknown verb '%s' (see 'wfbridge --help')", argv[2]);
        char help[] = "--help";
        char *help_argv[] = {argv[2], help, NULL};
        return v->fn(2, help_argv);
    }
    const struct verb *v = find_verb(a);
    if (!v)
        return wfb_usage_error("unknown verb '%s'", a);
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--version") == 0) { /* VERB --version, as --help */
            printf("wfbridge %s\n", WFB_VERSION);
            return 0;
        }
    int rc = v->fn(argc - 1, argv + 1);
    wfb_stdin_end();
    wfb_json_failure(argc - 1, argv + 1, rc);
    return rc;
}

int main(int argc, char **argv)
{
    /* A closed pipe on stdout is a write error (EPIPE) the program reports, not a signal. */
    signal(SIGPIPE, SIG_IGN);
    return wfb_close_stdout(dispatch(argc, argv));
}

/* bench_verify.c — what isolating verify's runs costs (docs/verify.md "Isolation"): `wfbridge
 * verify SAMPLE --generate N --seed 1` on the legacy samples, every run in a worker
 * process that puts the native state back after it (the default: -j cores, and -j 1) against
 * all runs in verify's process (--no-isolate), in cases per second (one case = a legacy run
 * and two modern runs), generated nulls included. Runs the built program ($BUILD/bin/wfbridge, found from this program's path: $BUILD/bench/). */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static const struct {
    const char *name;
    long cases, quick;
} samples[] = {
    {"order_processing", 1000, 20},
    {"document_review", 1000, 20},
    {"expense_approval", 1000, 20},
    {"batch_processing", 100, 5},
};

static const char *const modes[] = {"--no-isolate", "-j 1", ""};
static const char *const mode_names[] = {"in-process", "isolated -j 1", "isolated -j cores"};
#define MODE_COUNT 3

/* One verify; its "(R cases/s)" figure, or -1. */
static double cases_per_s(const char *build, const char *sample, long cases, const char *mode)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s/bin/wfbridge' verify samples/legacy/%s/%s.xoml --lib-path '%s/samples/lib' "
             "--generate %ld --seed 1 %s 2>&1",
             build, sample, sample, build, cases, mode);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[4096];
    double rate = -1;
    while (fgets(line, sizeof line, p)) {
        const char *at = strstr(line, " cases in ");
        const char *open = at ? strrchr(line, '(') : NULL;
        if (open)
            rate = atof(open + 1);
        else if (strstr(line, "diverged in ")) /* a divergence: report the elapsed rate */
            rate = -1;
    }
    return pclose(p) == 0 ? rate : -1;
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[1024], build[1024];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(build, sizeof build, "%s", dirname(dirname(self))); /* $BUILD/bench/x -> $BUILD */
    int reps = bu_reps(3);
    bu_md("## verify: isolated runs against one process\n\n"
          "`wfbridge verify samples/legacy/S/S.xoml --generate N --seed 1`: cases per "
          "second (median of %d, min–max), every run in a worker that restores the native "
          "state after it (docs/verify.md \"Isolation\") against every run in verify's own "
          "process (`--no-isolate`).\n\n"
          "| sample | cases | in-process | isolated -j 1 | isolated -j cores | cost (-j cores) |\n"
          "|---|---|---|---|---|---|\n",
          reps);
    int status = 0;
    for (size_t s = 0; s < sizeof samples / sizeof *samples; s++) {
        long n = bu_count(samples[s].cases, samples[s].quick);
        bu_stat st[MODE_COUNT];
        char cells[MODE_COUNT][64];
        for (int m = 0; m < MODE_COUNT; m++) {
            double v[16];
            int got = 0;
            for (int r = 0; r < reps; r++) {
                double rate = cases_per_s(build, samples[s].name, n, modes[m]);
                if (rate > 0)
                    v[got++] = rate;
            }
            if (!got) {
                fprintf(stderr, "bench_verify: %s %s failed\n", samples[s].name, mode_names[m]);
                status = 1;
            }
            st[m] = bu_summary(v, got);
            bu_cell(st[m], cells[m], sizeof cells[m]);
            bu_json("bench_verify", "verify", samples[s].name, mode_names[m], "cases/s", st[m]);
        }
        double cost = st[2].med > 0 ? st[0].med / st[2].med : 0;
        printf("%-18s %5ld cases: in-process %s, isolated -j 1 %s, -j cores %s cases/s "
               "(%.1fx)\n",
               samples[s].name, n, cells[0], cells[1], cells[2], cost);
        bu_md("| %s | %ld | %s | %s | %s | %.1fx |\n", samples[s].name, n, cells[0], cells[1],
              cells[2], cost);
    }
    bu_md("\n");
    return status;
}

/* bench_persist.c — persisted instances per second through the durable host: N small
 * instances (an Assign, then a bookmark) are created in a fresh store, then T threads run
 * them; each run ends in a persist at idle (state + status + bookmark + lease release, one
 * wfm_store_save) after the save the host makes when an instance first runs (its creation
 * record), so two saves per instance. Measured with group commit on and off, at durability
 * FULL (the default) and NORMAL; prints the rates, the commits issued and the ratio.
 * usage: bench_persist [N [T]] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "bench_util.h"
#include "../modern/wfm_durable.h"
#include "bench_util.h"

static const char xaml[] =
    "<Activity x:Class=\"Bench.Persist\" "
    "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">"
    "<x:Members><x:Property Name=\"N\" Type=\"InOutArgument(x:Int32)\"/></x:Members>"
    "<Sequence><Assign x:TypeArguments=\"x:Int32\" To=\"[N]\" Value=\"[N + 1]\"/>"
    "<WaitForEvent x:TypeArguments=\"x:Int32\" BookmarkName=\"next\"/></Sequence></Activity>";

/* The creation record (first run) and the persist at idle. */
enum { SAVES_PER_INSTANCE = 2 };

typedef struct job {
    wfm_host *host;
    wfm_dinst **items;
    size_t from, to;
    int failed;
} job;

static void *run_jobs(void *arg)
{
    job *j = arg;
    for (size_t i = j->from; i < j->to; i++) {
        wf_error err = WF_ERROR_INIT;
        if (wfm_host_run(j->host, j->items[i], &err) != WF_OK || wfm_dinst_loaded(j->items[i])) {
            fprintf(stderr, "bench_persist: %s\n", err.message);
            j->failed = 1;
            return NULL;
        }
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One measurement: instances persisted per second (0 on failure). */
static double measure(const char *dir, wfm_durability durability, bool group, size_t n,
                      unsigned threads, uint64_t *commits)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bench-%s.db", dir, group ? "group" : "single");
    wf_error err = WF_ERROR_INIT;
    wfm_runtime *rt = NULL;
    wfm_store *store = NULL;
    wfm_host *host = NULL;
    wfm_definition *def = NULL;
    wfm_dinst **items = calloc(n, sizeof *items);
    double rate = 0;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = 1;
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = path;
    so.group_commit = group;
    so.durability = durability;
    wfm_host_opts ho = WFM_HOST_OPTS_INIT;
    ho.renew_ms = -1;
    if (!items || wfm_runtime_create(&ro, &rt, &err) != WF_OK ||
        wfm_store_open(&so, &store, &err) != WF_OK ||
        wfm_host_create(rt, store, &ho, &host, &err) != WF_OK ||
        wfm_runtime_load_mem(rt, "bench_persist.xaml", xaml, strlen(xaml), &def, NULL, &err) !=
            WF_OK)
        goto done;
    for (size_t i = 0; i < n; i++)
        if (wfm_host_new(host, def, &items[i], &err) != WF_OK)
            goto done;
    uint64_t commits0 = 0, saves0 = 0, commits1 = 0, saves1 = 0;
    wfm_store_counters(store, &commits0, &saves0);
    pthread_t th[64];
    job jobs[64];
    double t0 = now_s();
    for (unsigned t = 0; t < threads; t++) {
        jobs[t] = (job){host, items, n * t / threads, n * (t + 1) / threads, 0};
        pthread_create(&th[t], NULL, run_jobs, &jobs[t]);
    }
    int failed = 0;
    for (unsigned t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        failed |= jobs[t].failed;
    }
    double elapsed = now_s() - t0;
    wfm_store_counters(store, &commits1, &saves1);
    *commits = commits1 - commits0;
    if (!failed && saves1 - saves0 == SAVES_PER_INSTANCE * n)
        rate = (double)n / elapsed;
    else
        fprintf(stderr, "bench_persist: %llu saves for %zu instances (expected %d each)\n",
                (unsigned long long)(saves1 - saves0), n, SAVES_PER_INSTANCE);
done:
    if (err.code != WF_OK)
        fprintf(stderr, "bench_persist: %s\n", err.message);
    for (size_t i = 0; items && i < n; i++)
        wfm_dinst_close(items[i]);
    free(items);
    wfm_definition_release(def);
    wfm_host_destroy(host);
    wfm_store_close(store);
    wfm_runtime_destroy(rt);
    char side[600];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    return rate;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : (size_t)bu_count(2000, 50);
    unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 8;
    if (n < 1)
        n = 1;
    if (threads < 1 || threads > 64)
        threads = 8;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/bench_persist.XXXXXX", bench_tmp_base());
    if (!mkdtemp(dir)) {
        perror("bench_persist: mkdtemp");
        return 1;
    }
    int rc = 0;
    enum { MAX_REPS = 3 };
    int reps = bu_reps(MAX_REPS);
    bu_md("## Persistence: instances persisted per second\n\n"
          "bench_persist: %zu instances (an Assign, then a bookmark) created in a fresh store, then\n"
          "run by %u threads on one durable host; each run saves the creation record and then\n"
          "persists at idle (two saves per instance). Median (min–max) of %d repetitions; the\n"
          "ratio is per repetition. The durable-store work (issue 12, gap 2) owns these figures.\n\n"
          "| durability | one commit per save | group commit | group / single | commits per "
          "instance (single / group) |\n|---|---|---|---|---|\n",
          n, threads, reps);
    for (int level = 0; level < 2; level++) {
        wfm_durability durability = level ? WFM_DURABILITY_NORMAL : WFM_DURABILITY_FULL;
        double single[MAX_REPS], group[MAX_REPS], ratio[MAX_REPS];
        uint64_t c_single = 0, c_group = 0;
        for (int rep = 0; rep < reps; rep++) {
            single[rep] = measure(dir, durability, false, n, threads, &c_single);
            group[rep] = measure(dir, durability, true, n, threads, &c_group);
            ratio[rep] = single[rep] > 0 ? group[rep] / single[rep] : 0.0;
            if (single[rep] <= 0 || group[rep] <= 0)
                rc = 1;
        }
        bu_stat ss = bu_summary(single, reps), sg = bu_summary(group, reps);
        bu_stat sr = bu_summary(ratio, reps);
        const char *label = level ? "NORMAL" : "FULL";
        printf("persist at idle, %zu instances, %u threads, durability %s\n", n, threads,
               level ? "NORMAL (WAL, no fsync per commit)" : "FULL (fsync per commit, default)");
        printf("  %-28s %10.0f instances/s  (%llu commits)\n", "one commit per save", ss.med,
               (unsigned long long)c_single);
        printf("  %-28s %10.0f instances/s  (%llu commits)\n", "group commit", sg.med,
               (unsigned long long)c_group);
        printf("  %-28s %10.2fx\n", "ratio group / single", sr.med);
        char a[64], b[64], c[64];
        bu_md("| %s | %s | %s | %s | %.2f / %.2f |\n", label, bu_cell(ss, a, sizeof a),
              bu_cell(sg, b, sizeof b), bu_cell(sr, c, sizeof c), (double)c_single / (double)n,
              (double)c_group / (double)n);
        bu_json("bench_persist", "persist", label, "one commit per save", "instances/s", ss);
        bu_json("bench_persist", "persist", label, "group commit", "instances/s", sg);
        bu_json("bench_persist", "persist", label, "group / single", "x", sr);
    }
    bu_md("\nSeed: the paper's persistence results are a chart (WF4 2.6-3.0x WF3 over SQL "
          "Server).\n\n");
    rmdir(dir);
    return rc;
}

/* test_fleet.c — the multi-host kill test through the real CLI:
 * `wfbridge start tests/bridge/data/fleet/fleet.xaml --count N` creates N runnable instances and
 * three `wfbridge host --workers 2` processes drain them; once a random share (seeded PRNG:
 * a fixed seed, printed; WF_FLEET_SEED=N picks another) is Closed, one host is SIGKILLed
 * and another started
 * and another SIGTERMed (it must exit 0 leaving no lease) and replaced; or, in the fault
 * cases, PostgreSQL drops every connection of the hosts, or $WFBRIDGE_TEST_PG_RESTART restarts
 * the server. When all are Closed every host gets SIGTERM and must exit 0 promptly,
 * leaving no row leased.
 * Telling instances apart: `start --count` gives every instance the same inputs and the
 * workflow cannot see its instance id, so its first activity asks the native library for a
 * random Tag and persists it (promoted, with Step) before step 1: each step's log line
 * "S TAG STEP PID" ($WFF_LOG, one O_APPEND write each) names its instance through the Tag the
 * store holds. A Tag made by a host killed before that persist is never logged.
 * Checked: each instance Closed with Step=5 and a Tag of its own; per Tag the calls run 1..5 in
 * order and a call repeats only where its first run was the killed host's last call for that
 * instance (a Persist follows each call, and a host makes call K+1 only after the save after K
 * committed); the last call of each instance is made by the host that printed "ID Closed"
 * (or by the killed host, whose Persist after call 5 committed), no two hosts print the same
 * instance Closed, no host reports an error; `wfbridge instances --json` agrees. The
 * bad_input case feeds the log check logs that break each rule. */
#include <check.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../../modern/wfm_store.h"
#include "../modern/support_pg.h"
#include "../wf_test_util.h"
#include "support_bridge.h"

#define STEPS     5
#define HOSTS     3
#define MAX_SPAWN 8
#define WORKERS   2 /* per host */
#define WORKERS_S "2"

typedef struct fleet {
    char store[1400];
    char pg_schema[64]; /* "" on SQLite */
    char dir[512], log[1024], exe[1024];
    unsigned count, seed;
    unsigned long long rng;
    char (*ids)[33]; /* in creation order, from `start --json` */
    pid_t pids[MAX_SPAWN];
    bool live[MAX_SPAWN];
    unsigned spawned;
    pid_t killed; /* the SIGKILLed host, 0 when none */
    pid_t stopped; /* the host SIGTERMed mid-drain, 0 when none */
} fleet;

static unsigned next_rand(fleet *f)
{
    f->rng = f->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(f->rng >> 33);
}

/* Waits are bounded by a number of polls (no clock is read: nothing here is timed), so that
 * a hang fails the test instead of stalling the suite. */
#define POLLS_FOR(seconds, pause_us) ((unsigned)((seconds) * 1000000ULL / (pause_us)))

static const char *host_file(const fleet *f, unsigned index, const char *ext)
{
    static char path[1100];
    snprintf(path, sizeof path, "%s/host%u.%s", f->dir, index, ext);
    return path;
}

static void fleet_init(fleet *f, unsigned count, bool pg)
{
    snprintf(f->dir, sizeof f->dir, "%s", wfbt_tmpdir());
    snprintf(f->log, sizeof f->log, "%s/steps.log", f->dir);
    snprintf(f->exe, sizeof f->exe, "%s/bin/wfbridge", wf_test_build_dir());
    if (pg)
        wf_test_pg_schema(f->store, sizeof f->store, f->pg_schema);
    else
        snprintf(f->store, sizeof f->store, "%s/fleet.db", f->dir);
    const char *seed = getenv("WF_FLEET_SEED");
    f->seed = seed && *seed ? (unsigned)strtoul(seed, NULL, 10) : 20261201u; /* replayable */
    f->rng = f->seed;
    f->count = count;
    f->ids = wf_calloc(count, sizeof *f->ids);
    ck_assert_ptr_nonnull(f->ids);
    setenv("WFF_LOG", f->log, 1);
    printf("fleet (%s): seed %u (WF_FLEET_SEED=%u replays), %u instances\n",
           pg ? "PostgreSQL" : "SQLite", f->seed, f->seed, count);
    fflush(stdout);
}

static void fleet_fini(fleet *f)
{
    if (f->pg_schema[0])
        wf_test_pg_drop(f->pg_schema);
    wfbt_tmp_remove(f->dir);
    wf_free(f->ids);
}

/* `wfbridge start --count N --json`: the ids, from the result object's "ids" array. */
static void fleet_start(fleet *f)
{
    char count[16];
    snprintf(count, sizeof count, "%u", f->count);
    const char *args[] = {"start",      wfbt_data("fleet/fleet.xaml"),
                          "--store",    f->store,
                          "--count",    count,
                          "--promote",  "Tag",
                          "--promote",  "Step",
                          "--lib-path", wfbt_test_libs(),
                          "--json",     NULL};
    wfbt_out r = wfbt_run(args);
    ck_assert_msg(r.rc == 0, "start: exit %d: %s", r.rc, r.err);
    ck_assert_str_eq(r.err, "");
    const char *last = wfbt_last_line(r.out);
    char head[64];
    snprintf(head, sizeof head, "{\"status\": \"Created\", \"count\": %u, \"ids\": [", f->count);
    ck_assert_msg(strncmp(last, head, strlen(head)) == 0, "start printed '%.200s'", last);
    const char *p = last + strlen(head);
    for (unsigned i = 0; i < f->count; i++) {
        ck_assert_msg(p[0] == '"' && strlen(p) > 33 && p[33] == '"', "id %u at '%.40s'", i, p);
        snprintf(f->ids[i], 33, "%.32s", p + 1);
        p += 34;
        if (*p == ',')
            p += 2;
    }
    ck_assert_str_eq(p, "]}");
    wfbt_out_free(&r);
}

/* A `wfbridge host` in the background, stdout and stderr into DIR/hostN.out / .err; its
 * index. */
static unsigned start_host(fleet *f)
{
    ck_assert_uint_lt(f->spawned, MAX_SPAWN);
    unsigned index = f->spawned;
    char out[1100], err[1100];
    snprintf(out, sizeof out, "%s", host_file(f, index, "out"));
    snprintf(err, sizeof err, "%s", host_file(f, index, "err"));
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || o < 0 || e < 0)
            _exit(126);
        dup2(in, 0);
        dup2(o, 1);
        dup2(e, 2);
        const char *argv[] = {f->exe,           "host",      "--store", f->store, "--lib-path",
                              wfbt_test_libs(), "--workers", WORKERS_S, NULL};
        execv(f->exe, (char *const *)argv);
        _exit(127);
    }
    f->pids[index] = pid;
    f->live[index] = true;
    f->spawned++;
    return index;
}

/* Has process `pid` a handler for `sig` (Linux: SigCgt in /proc/PID/status)? */
static bool catches(pid_t pid, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *st = fopen(path, "r");
    unsigned long long mask = 0;
    while (st && fgets(line, sizeof line, st))
        if (strncmp(line, "SigCgt:", 7) == 0)
            mask = strtoull(line + 7, NULL, 16);
    if (st)
        fclose(st);
    return (mask >> (sig - 1)) & 1;
}

/* Is process `pid` running the program `exe` (it has exec'd)? */
static bool runs(pid_t pid, const char *exe)
{
    char path[64], link[1100] = "", want[1100] = "";
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, link, sizeof link - 1);
    return n > 0 && realpath(exe, want) && strcmp(link, want) == 0;
}

/* Wait until host i has exec'd wfbridge and handles SIGTERM (today: once it has opened the
 * store), so that a SIGTERM from now on is a graceful stop (pg_host_stopped_while_opening
 * sends one earlier). Before the exec the child still has the test runner's handlers: Check's
 * SIGTERM handler signals the whole process group, this test included. */
static void await_ready(fleet *f, unsigned i)
{
    unsigned polls = 0;
    while (!runs(f->pids[i], f->exe) || !catches(f->pids[i], SIGTERM)) {
        int status = 0;
        ck_assert_msg(waitpid(f->pids[i], &status, WNOHANG) == 0, "host %u ended: 0x%x", i, status);
        ck_assert_msg(polls++ < POLLS_FOR(30, 2000), "host %u never became ready", i);
        usleep(2000);
    }
}

static void spawn_host(fleet *f)
{
    await_ready(f, start_host(f));
}

static char *host_text(const fleet *f, unsigned index, const char *ext)
{
    size_t len = 0;
    char *s = wf_test_read_file(host_file(f, index, ext), &len);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* Fail when a live host ended by itself (it runs until stopped). */
static void assert_hosts_running(fleet *f)
{
    for (unsigned i = 0; i < f->spawned; i++) {
        int status = 0;
        if (!f->live[i] || waitpid(f->pids[i], &status, WNOHANG) != f->pids[i])
            continue;
        f->live[i] = false;
        char *err = host_text(f, i, "err");
        ck_abort_msg("host %u ended by itself (status 0x%x, seed %u): %s", i, status, f->seed, err);
    }
}

typedef struct counts {
    unsigned rows, closed, leased;
    char owner_part[32]; /* ":PID:" of a host's default owner id, "" for none */
    unsigned leased_by;  /* rows leased by that host */
} counts;

static bool count_row(void *ud, const wfm_store_row *row)
{
    counts *c = ud;
    c->rows++;
    c->closed += strcmp(row->status, "Closed") == 0;
    c->leased += row->owner != NULL;
    c->leased_by += row->owner && c->owner_part[0] && strstr(row->owner, c->owner_part);
    return true;
}

/* Rows, Closed rows and leased rows (of all hosts, and of host `pid` when not 0), read
 * through a read-only store of the test's own. */
static counts store_counts(const fleet *f, pid_t pid)
{
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = f->store;
    so.read_only = true;
    wfm_store *store = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_store_open(&so, &store, &err) == WF_OK, "open: %s", err.message);
    counts c = {0, 0, 0, "", 0};
    if (pid) /* the default owner id is HOSTNAME:PID:RANDOM (docs/durability.md) */
        snprintf(c.owner_part, sizeof c.owner_part, ":%d:", (int)pid);
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    ck_assert_msg(wfm_store_query_rows(store, &q, count_row, &c, &err) == WF_OK, "query: %s",
                  err.message);
    wfm_store_close(store);
    return c;
}

/* Poll the store until at least `target` instances are Closed (a hang fails after some
 * 300 s of polls). */
static void wait_closed(fleet *f, unsigned target)
{
    for (unsigned polls = 0;; polls++) {
        counts c = store_counts(f, 0);
        if (c.closed >= target)
            return;
        assert_hosts_running(f);
        ck_assert_msg(polls < POLLS_FOR(300, 20000), "only %u of %u Closed (seed %u)", c.closed,
                      target, f->seed);
        usleep(20000);
    }
}

/* The index of a live host picked at random. */
static unsigned pick_live(fleet *f)
{
    unsigned pick = next_rand(f) % HOSTS, seen = 0;
    for (unsigned i = 0; i < f->spawned; i++)
        if (f->live[i] && seen++ == pick)
            return i;
    ck_abort_msg("no live host to pick");
    return 0;
}

/* Wait for host i, SIGTERMed: it exits 0 promptly (graceful stop) and reported nothing
 * (a reconnect is not an error). */
static void await_stop(fleet *f, unsigned i)
{
    int status = 0;
    pid_t got;
    for (unsigned polls = 0;
         (got = waitpid(f->pids[i], &status, WNOHANG)) == 0 && polls < POLLS_FOR(10, 5000); polls++)
        usleep(5000);
    if (got == 0) {
        kill(f->pids[i], SIGKILL);
        waitpid(f->pids[i], &status, 0);
    }
    f->live[i] = false;
    ck_assert_msg(got == f->pids[i], "host %u did not stop after SIGTERM", i);
    char *err = host_text(f, i, "err");
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "host %u: status 0x%x after SIGTERM (seed %u): %s", i, status, f->seed, err);
    /* nothing but the summary line a stopped host ends with */
    const char *summary = "wfbridge host: ran ";
    ck_assert_msg(*err == '\0' || (strncmp(err, summary, strlen(summary)) == 0 &&
                                   strchr(err, '\n') == err + strlen(err) - 1),
                  "host %u reported (seed %u): %s", i, f->seed, err);
    wf_free(err);
}

/* SIGKILL one live host at random and start another; then SIGTERM another one mid-drain,
 * which must leave no lease behind (and, checked later, no call to repeat), and start
 * another again. */
static void kill_one(fleet *f)
{
    unsigned i = pick_live(f);
    ck_assert_int_eq(kill(f->pids[i], SIGKILL), 0);
    int status = 0;
    ck_assert_int_eq(waitpid(f->pids[i], &status, 0), f->pids[i]);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    f->live[i] = false;
    f->killed = f->pids[i];
    spawn_host(f);
    i = pick_live(f);
    f->stopped = f->pids[i];
    ck_assert_int_eq(kill(f->pids[i], SIGTERM), 0);
    await_stop(f, i);
    ck_assert_uint_eq(store_counts(f, f->pids[i]).leased_by, 0);
    spawn_host(f);
}

/* SIGTERM every live host at once, then wait for each. */
static void stop_all(fleet *f)
{
    for (unsigned i = 0; i < f->spawned; i++)
        if (f->live[i])
            ck_assert_int_eq(kill(f->pids[i], SIGTERM), 0);
    for (unsigned i = 0; i < f->spawned; i++)
        if (f->live[i])
            await_stop(f, i);
}

/* ---- checks ----------------------------------------------------------------------------- */
typedef struct inst {
    char id[33];
    char tag[33];
    pid_t completer; /* the host that printed "ID Closed"; 0: none did */
    int last_step;   /* the log check's progress */
    pid_t last_pid;
    unsigned repeats;
} inst;

static int by_tag(const void *a, const void *b)
{
    return strcmp(((const inst *)a)->tag, ((const inst *)b)->tag);
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const inst *)a)->id, ((const inst *)b)->id);
}

typedef struct status_of {
    inst *all;
    unsigned count, seen;
} status_of;

static bool check_row(void *ud, const wfm_store_row *row)
{
    status_of *s = ud;
    inst key;
    snprintf(key.id, sizeof key.id, "%s", row->id);
    inst *in = bsearch(&key, s->all, s->count, sizeof *in, by_id);
    ck_assert_msg(in != NULL, "store row %s was not created by start", row->id);
    ck_assert_msg(strcmp(row->status, "Closed") == 0, "%s: %s", row->id, row->status);
    ck_assert_msg(row->owner == NULL, "%s still leased by %s", row->id, row->owner);
    s->seen++;
    return true;
}

/* Every instance Closed, unleased, with Step=5 and a Tag of its own; `all` sorted by tag. */
static inst *check_store(const fleet *f)
{
    inst *all = wf_calloc(f->count, sizeof *all);
    ck_assert_ptr_nonnull(all);
    for (unsigned i = 0; i < f->count; i++)
        snprintf(all[i].id, sizeof all[i].id, "%s", f->ids[i]);
    qsort(all, f->count, sizeof *all, by_id);
    wfm_store_opts so = WFM_STORE_OPTS_INIT;
    so.path = f->store;
    so.read_only = true;
    wfm_store *store = NULL;
    wf_error err = WF_ERROR_INIT;
    ck_assert_msg(wfm_store_open(&so, &store, &err) == WF_OK, "open: %s", err.message);
    status_of s = {all, f->count, 0};
    wfm_store_query q = WFM_STORE_QUERY_INIT;
    ck_assert_int_eq(wfm_store_query_rows(store, &q, check_row, &s, &err), WF_OK);
    ck_assert_uint_eq(s.seen, f->count);
    char want[32];
    snprintf(want, sizeof want, "Step=%d\n", STEPS);
    for (unsigned i = 0; i < f->count; i++) {
        char *props = NULL;
        ck_assert_int_eq(wfm_store_props(store, all[i].id, &props, &err), WF_OK);
        ck_assert_msg(props && strstr(props, want), "%s: promoted '%s'", all[i].id, props);
        const char *tag = strstr(props, "Tag=");
        ck_assert_msg(tag && strcspn(tag + 4, "\n") == 32, "%s: promoted '%s'", all[i].id, props);
        snprintf(all[i].tag, sizeof all[i].tag, "%.32s", tag + 4);
        wf_free(props);
    }
    wfm_store_close(store);
    /* which host printed each instance Closed: exactly one, or none for the killed host
     * (killed between its commit and its print: any number of them, since the commit thread
     * finishes a whole batch before the main thread prints; log_ok then demands that the
     * killed host made their last call) */
    unsigned unprinted = 0;
    for (unsigned h = 0; h < f->spawned; h++) {
        char *out = host_text(f, h, "out");
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
            inst key;
            /* the host SIGTERMed mid-drain stops its runs at their next persist point,
             * saved runnable: "ID Executing", for another host to finish */
            bool handed_on = f->pids[h] == f->stopped && strlen(line) == 32 + 10 &&
                             strcmp(line + 32, " Executing") == 0;
            ck_assert_msg(handed_on || (strlen(line) == 32 + 7 && strcmp(line + 32, " Closed") == 0),
                          "host %u printed '%s'", h, line);
            snprintf(key.id, sizeof key.id, "%.32s", line);
            inst *in = bsearch(&key, all, f->count, sizeof *in, by_id);
            ck_assert_msg(in != NULL, "host %u ran an unknown instance %s", h, key.id);
            if (handed_on)
                continue;
            ck_assert_msg(in->completer == 0, "%s completed by hosts %d and %d (seed %u)", key.id,
                          (int)in->completer, (int)f->pids[h], f->seed);
            in->completer = f->pids[h];
        }
        wf_free(out);
    }
    for (unsigned i = 0; i < f->count; i++)
        unprinted += all[i].completer == 0;
    ck_assert_msg(unprinted == 0 || f->killed,
                  "%u instances printed Closed by no host (seed %u)", unprinted, f->seed);
    qsort(all, f->count, sizeof *all, by_tag);
    for (unsigned i = 1; i < f->count; i++)
        ck_assert_msg(strcmp(all[i - 1].tag, all[i].tag) != 0, "two instances with Tag %s",
                      all[i].tag);
    return all;
}

/* Is there a line of `pid` for `tag` after byte offset `from` of the log? */
static bool later_call_by(const char *log, size_t from, const char *tag, pid_t pid)
{
    char needle[64];
    snprintf(needle, sizeof needle, "S %s ", tag);
    for (const char *p = strstr(log + from, needle); p; p = strstr(p + 1, needle)) {
        int step = 0;
        long who = 0;
        if (sscanf(p + strlen(needle), "%d %ld", &step, &who) == 2 && who == (long)pid)
            return true;
    }
    return false;
}

#define PROBLEM(...) return snprintf(why, why_size, __VA_ARGS__), false

/* The per-instance call rules (see the opening comment) over a log (len bytes) and the
 * instances of the store (sorted by tag, completers set; `killed` 0 when no host was
 * killed, `stopped` the host SIGTERMed mid-drain or 0): false with the first violation in
 * why. *repeats: the calls run twice. */
static bool log_ok(const char *log, size_t len, inst *all, unsigned count, pid_t killed,
                   pid_t stopped, unsigned *repeats, char *why, size_t why_size)
{
    unsigned lines = 0;
    *repeats = 0;
    for (size_t at = 0; at < len;) {
        size_t end = at + strcspn(log + at, "\n");
        if (log[end] != '\n')
            PROBLEM("the log ends in half a line");
        inst key;
        int step = 0;
        long pid = 0;
        if (sscanf(log + at, "S %32s %d %ld", key.tag, &step, &pid) != 3)
            PROBLEM("bad log line '%.*s'", (int)(end - at), log + at);
        inst *in = bsearch(&key, all, count, sizeof *in, by_tag);
        if (!in)
            PROBLEM("call %d of Tag %s, which no instance kept", step, key.tag);
        if (step == in->last_step) {
            /* only the killed host's last call of this instance may run again, once */
            if (!killed || in->last_pid != killed || (pid_t)pid == killed ||
                later_call_by(log, end, key.tag, killed) || in->repeats)
                PROBLEM("%s: call %d by %ld repeats one by %d (killed: %d)", in->id, step, pid,
                        (int)in->last_pid, (int)killed);
            in->repeats++;
            (*repeats)++;
        } else if (step != in->last_step + 1) {
            PROBLEM("%s: call %d after call %d", in->id, step, in->last_step);
        }
        in->last_step = step;
        in->last_pid = (pid_t)pid;
        lines++;
        at = end + 1;
    }
    for (unsigned i = 0; i < count; i++) {
        const inst *in = &all[i];
        if (in->last_step != STEPS)
            PROBLEM("%s: last call %d", in->id, in->last_step);
        /* no call after completion: the completer made the last call, or the killed host
         * did and its Persist after call 5 committed (a later call repeats it, see above),
         * or the stopped host did and handed the instance on at that Persist */
        pid_t completer = in->completer ? in->completer : killed;
        if (in->last_pid != completer && (!killed || in->last_pid != killed) &&
            (!stopped || in->last_pid != stopped))
            PROBLEM("%s: last call by %d, completed by %d (killed: %d)", in->id, (int)in->last_pid,
                    (int)completer, (int)killed);
    }
    if (lines != count * STEPS + *repeats)
        PROBLEM("%u calls, %u instances, %u repeated", lines, count, *repeats);
    return true;
}

static unsigned check_log(const fleet *f, inst *all)
{
    size_t len = 0;
    char *log = wf_test_read_file(f->log, &len);
    ck_assert_ptr_nonnull(log);
    unsigned repeats = 0;
    char why[256] = "";
    bool ok = log_ok(log, len, all, f->count, f->killed, f->stopped, &repeats, why, sizeof why);
    wf_free(log);
    ck_assert_msg(ok, "%s (seed %u)", why, f->seed);
    return repeats;
}

/* `wfbridge instances --json` lists every instance Closed and unleased. */
static void check_instances_cli(const fleet *f)
{
    const char *args[] = {"instances", "--store", f->store, "--json", NULL};
    wfbt_out r = wfbt_run(args);
    ck_assert_msg(r.rc == 0, "instances: exit %d: %s", r.rc, r.err);
    ck_assert_str_eq(r.err, "");
    ck_assert_uint_eq(wfbt_count(r.out, "{\"id\": "), f->count);
    ck_assert_uint_eq(wfbt_count(r.out, "\"status\": \"Closed\""), f->count);
    ck_assert_uint_eq(wfbt_count(r.out, "\"owner\": null"), f->count);
    for (unsigned i = 0; i < f->count; i++) {
        char want[64];
        snprintf(want, sizeof want, "{\"id\": \"%s\"", f->ids[i]);
        ck_assert_msg(strstr(r.out, want), "instances does not list %s", f->ids[i]);
    }
    wfbt_out_free(&r);
}

/* The whole run: start, three hosts, `disturb` once a random share is Closed, drain, stop,
 * check. */
static void run_fleet(fleet *f, void (*disturb)(fleet *))
{
    fleet_start(f);
    for (unsigned i = 0; i < HOSTS; i++)
        spawn_host(f);
    unsigned share = f->count / 10 + next_rand(f) % (f->count * 6 / 10); /* 10..70 % */
    wait_closed(f, share);
    disturb(f);
    wait_closed(f, f->count);
    stop_all(f);
    ck_assert_uint_eq(store_counts(f, 0).leased, 0);
    inst *all = check_store(f);
    unsigned repeats = check_log(f, all);
    wf_free(all);
    check_instances_cli(f);
    printf("fleet: disturbed at %u Closed; %u repeated calls\n", share, repeats);
    fflush(stdout);
}

static void restart_server(fleet *f)
{
    (void)f;
    ck_assert_int_eq(system(getenv("WFBRIDGE_TEST_PG_RESTART")), 0);
}

/* The hosts name their connections after the test's schema (application_name), so the
 * server can drop every one of them at once, as a restart does. */
static void name_connections(fleet *f)
{
    size_t len = strlen(f->store);
    snprintf(f->store + len, sizeof f->store - len, "%sapplication_name=%s",
             strncmp(f->store, "postgres", 8) == 0 ? "&" : " ", f->pg_schema);
}

static void drop_connections(fleet *f)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
             " WHERE application_name = '%s'",
             f->pg_schema);
    char *n = wf_test_pg_query(getenv("WFBRIDGE_TEST_PG"), sql);
    ck_assert_msg(n && atoi(n) >= HOSTS, "dropped %s connections", n ? n : "no");
    wf_free(n);
}

/* ---- core ------------------------------------------------------------------------------- */
START_TEST(sqlite_three_hosts_one_killed)
{
    fleet f = {0};
    fleet_init(&f, 200, false);
    run_fleet(&f, kill_one);
    fleet_fini(&f);
}
END_TEST

START_TEST(pg_three_hosts_one_killed)
{
    fleet f = {0};
    fleet_init(&f, 1000, true);
    run_fleet(&f, kill_one);
    fleet_fini(&f);
}
END_TEST

/* The server drops every connection of the hosts mid-drain: they reconnect, nothing runs
 * twice. */
START_TEST(pg_connections_dropped_mid_drain)
{
    fleet f = {0};
    fleet_init(&f, 1000, true);
    name_connections(&f);
    run_fleet(&f, drop_connections);
    fleet_fini(&f);
}
END_TEST

/* A SIGTERM while the host is still opening the store (held up here by a lock on the
 * store's meta table) is a graceful stop too: once the open completes the host exits 0 with
 * nothing leased. (The CLI installs its handler after opening the store: it dies of the
 * signal, status 0xf.) */
START_TEST(pg_host_stopped_while_opening)
{
    fleet f = {0};
    fleet_init(&f, 1, true);
    name_connections(&f);
    fleet_start(&f);
    PGconn *lock = PQconnectdb(f.store);
    ck_assert_msg(PQstatus(lock) == CONNECTION_OK, "%s", PQerrorMessage(lock));
    PGresult *r = PQexec(lock, "BEGIN; LOCK TABLE wfbridge_meta IN ACCESS EXCLUSIVE MODE");
    ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s", PQresultErrorMessage(r));
    PQclear(r);
    unsigned i = start_host(&f);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_stat_activity WHERE application_name = '%s'"
             " AND wait_event_type = 'Lock'",
             f.pg_schema);
    for (unsigned polls = 0;; polls++) {
        char *n = wf_test_pg_query(getenv("WFBRIDGE_TEST_PG"), sql);
        int waiting = atoi(n);
        wf_free(n);
        if (waiting)
            break;
        ck_assert_msg(polls < POLLS_FOR(30, 5000), "the host never waited for the lock");
        usleep(5000);
    }
    ck_assert_int_eq(kill(f.pids[i], SIGTERM), 0);
    r = PQexec(lock, "COMMIT");
    ck_assert_int_eq(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(lock);
    await_stop(&f, i);
    ck_assert_uint_eq(store_counts(&f, 0).leased, 0);
    fleet_fini(&f);
}
END_TEST

/* The server restarts mid-drain: the hosts reconnect and nothing runs twice. */
START_TEST(pg_server_restart_mid_drain)
{
    fleet f = {0};
    fleet_init(&f, 1000, true);
    run_fleet(&f, restart_server);
    fleet_fini(&f);
}
END_TEST

/* ---- bad_input: the log check itself ------------------------------------------------------
 * Two instances, tags A and B; hosts 100 and 300 live, 200 the killed one. A log line is "X STEP
 * PID" for Tag X (C: a Tag no instance kept), "!..." verbatim; no final newline: half a line. */
typedef struct log_case {
    const char *log;
    pid_t completer_a, completer_b, killed;
    const char *want; /* a word of the problem; NULL: accepted */
} log_case;

#define A_DONE "A 1 100\nA 2 100\nA 3 100\nA 4 100\nA 5 100\n"
#define B_DONE "B 1 300\nB 2 300\nB 3 300\nB 4 300\nB 5 300\n"

static const log_case log_cases[] = {
    /* the killed host's last call of B runs again on host 300 */
    {A_DONE "B 1 200\nB 2 200\nB 2 300\nB 3 300\nB 4 300\nB 5 300\n", 100, 300, 200, NULL},
    /* the killed host made call 5 and its Persist committed; 300 only completed B */
    {A_DONE "B 1 200\nB 2 200\nB 3 200\nB 4 200\nB 5 200\n", 100, 300, 200, NULL},
    /* the killed host completed B and died before printing it */
    {A_DONE "B 1 200\nB 2 200\nB 3 200\nB 4 200\nB 5 200\n", 100, 0, 200, NULL},
    {"A 1 100\nA 2 100\nA 2 300\nA 3 300\nA 4 300\nA 5 300\n" B_DONE, 300, 300, 200, "repeats"},
    {"A 1 100\nA 1 100\nA 2 100\nA 3 100\nA 4 100\nA 5 100\n" B_DONE, 100, 300, 0, "repeats"},
    /* the killed host called again after its call was repeated */
    {A_DONE "B 1 200\nB 2 200\nB 2 300\nB 3 200\nB 4 300\nB 5 300\n", 100, 300, 200, "repeats"},
    {A_DONE "B 1 200\nB 2 200\nB 2 300\nB 2 100\nB 3 300\nB 4 300\nB 5 300\n", 100, 300, 200,
     "repeats"},
    /* a call before the last persist point runs again */
    {A_DONE "B 1 200\nB 2 200\nB 1 300\nB 2 300\nB 3 300\nB 4 300\nB 5 300\n", 100, 300, 200,
     "after call 2"},
    {"A 1 100\nA 3 100\nA 4 100\nA 5 100\n" B_DONE, 100, 300, 0, "call 3 after call 1"},
    /* calls after completion */
    {A_DONE "A 5 300\n" B_DONE, 100, 300, 200, "repeats"},
    {"A 1 300\nA 2 300\nA 3 300\nA 4 300\nA 5 300\n" B_DONE, 100, 300, 0, "completed by 100"},
    {"A 1 100\nA 2 100\nA 3 100\nA 4 100\n" B_DONE, 100, 300, 0, "last call 4"},
    {A_DONE B_DONE "C 1 100\n", 100, 300, 0, "no instance kept"},
    {A_DONE B_DONE "!S 12 x\n", 100, 300, 0, "bad log line"},
    {A_DONE B_DONE "A 5 10", 100, 300, 0, "half a line"},
};

START_TEST(log_check_refuses)
{
    const log_case *c = &log_cases[_i];
    inst all[2] = {{.id = "instance-a", .completer = c->completer_a},
                   {.id = "instance-b", .completer = c->completer_b}};
    memset(all[0].tag, 'a', 32);
    memset(all[1].tag, 'b', 32);
    char log[2048] = "";
    size_t len = 0;
    for (const char *p = c->log; *p;) {
        size_t n = strcspn(p, "\n");
        const char *tag = *p == 'A' ? all[0].tag : *p == 'B' ? all[1].tag : "cccc";
        int w = *p == '!'
                    ? snprintf(log + len, sizeof log - len, "%.*s", (int)n - 1, p + 1)
                    : snprintf(log + len, sizeof log - len, "S %s%.*s", tag, (int)n - 1, p + 1);
        len += (size_t)w;
        if (p[n] == '\n')
            log[len++] = '\n';
        p += n + (p[n] == '\n');
    }
    ck_assert_uint_lt(len, sizeof log);
    unsigned repeats = 0;
    char why[256] = "";
    bool ok = log_ok(log, len, all, 2, c->killed, 0, &repeats, why, sizeof why);
    if (!c->want) {
        ck_assert_msg(ok, "case %d refused: %s", _i, why);
        ck_assert_uint_eq(repeats, _i == 0);
    } else {
        ck_assert_msg(!ok, "case %d accepted", _i);
        ck_assert_msg(strstr(why, c->want), "case %d: '%s' lacks '%s'", _i, why, c->want);
    }
}
END_TEST

Suite *bridge_fleet_suite(void)
{
    Suite *s = suite_create("bridge_fleet");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, sqlite_three_hosts_one_killed);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("bad_input");
    tcase_add_loop_test(bad, log_check_refuses, 0, (int)(sizeof log_cases / sizeof log_cases[0]));
    suite_add_tcase(s, bad);
    return s;
}

Suite *bridge_fleet_pg_suite(void)
{
    Suite *s = suite_create("bridge_fleet_pg");
    if (!wf_test_pg_available("bridge_fleet_pg"))
        return s;
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, pg_three_hosts_one_killed);
    tcase_add_test(tc, pg_connections_dropped_mid_drain);
    tcase_add_test(tc, pg_host_stopped_while_opening);
    const char *restart = getenv("WFBRIDGE_TEST_PG_RESTART");
    if (restart && *restart)
        tcase_add_test(tc, pg_server_restart_mid_drain);
    else
        fprintf(stderr, "bridge_fleet_pg: pg_server_restart_mid_drain skipped: "
                        "WFBRIDGE_TEST_PG_RESTART (a command restarting the server) is not set\n");
    suite_add_tcase(s, tc);
    return s;
}

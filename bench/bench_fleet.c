/* bench_fleet.c — the fleet table: Hello cities (an orchestration calling 5 native
 * activities in sequence, each returning "Hello, <city>!", a Persist after each) through the
 * real CLI: `wfbridge start --count N`, then H `wfbridge host` processes started together and
 * stopped with SIGTERM once the store shows every instance Closed. SQLite (H = 1, 2) and
 * PostgreSQL (H = 1, 2, 4, a fresh schema per cell; skipped without WFBRIDGE_BENCH_PG or
 * WFBRIDGE_TEST_PG) at durability full and normal. Orchestrations/s, work items/s (host saves
 * the store counted + activities the native library counted), p50 / p99 completion latency
 * from the store's updated times, and each cell's ratio to a baseline of the same run: the
 * same workload in this process on the runtime pool with no store (Persist completes at once).
 * usage: bench_fleet [N] */
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <assert.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../modern/wfm_runtime.h"
#include "bench_util.h"

enum { CITIES = 5, MAX_HOSTS = 4, BASE_REPS = 15, RAW_CONNS = 8, CELL_REPS = 3 };

static const char *const cities[CITIES] = {"Tokyo", "Seattle", "London", "Cairo", "Lima"};

/* ---- the workflow ------------------------------------------------------------------------ */

#define XAML_HEAD                                                                                  \
    "<Activity x:Class=\"Bench.HelloCities\" "                                                     \
    "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "                           \
    "xmlns:h=\"clr-namespace:HelloCities;assembly=hellocities\" "                                  \
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"                                  \
    "<x:Members><x:Property Name=\"Greetings\" Type=\"OutArgument(x:String)\"/></x:Members>\n"     \
    "<Sequence><Sequence.Variables>"
#define SAY(i)                                                                                     \
    "<InvokeMethod TargetType=\"h:Any\" MethodName=\"hello\"><InvokeMethod.Result>"                \
    "<OutArgument x:TypeArguments=\"x:String\">[c" #i "]</OutArgument></InvokeMethod.Result>"     \
    "<InArgument x:TypeArguments=\"x:String\">[&quot;%s&quot;]</InArgument></InvokeMethod>"      \
    "<Persist/>\n"
#define VAR(i) "<Variable x:TypeArguments=\"x:String\" Name=\"c" #i "\"/>"
#define SP " + &quot; &quot; + "

/* The orchestration: hello(city) for each city in turn, the result kept in a variable and
 * persisted, then the five greetings joined into the output Greetings. */
static int hello_xaml(char *buf, size_t size)
{
    int n = snprintf(buf, size,
                     XAML_HEAD VAR(1) VAR(2) VAR(3) VAR(4) VAR(5) "</Sequence.Variables>\n" SAY(1)
                         SAY(2) SAY(3) SAY(4) SAY(5)
                     "<Assign x:TypeArguments=\"x:String\" To=\"[Greetings]\" "
                     "Value=\"[c1" SP "c2" SP "c3" SP "c4" SP "c5]\"/>\n</Sequence></Activity>\n",
                     cities[0], cities[1], cities[2], cities[3], cities[4]);
    return n > 0 && (size_t)n < size ? 0 : 1;
}

/* What every instance's Greetings must be. */
static void expected_greetings(char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < CITIES && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%sHello, %s!", i ? " " : "", cities[i]);
}

/* ---- the activity counter (bench/libs/hellocities: 8 bytes mapped shared) ------------------- */

typedef struct counter {
    char path[1100];
    volatile uint64_t *value;
} counter;

static int counter_open(counter *c, const char *dir)
{
    snprintf(c->path, sizeof c->path, "%s/activities", dir);
    int fd = open(c->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(uint64_t)) != 0) {
        perror("bench_fleet: activity counter");
        if (fd >= 0)
            close(fd);
        return 1;
    }
    void *p = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        perror("bench_fleet: mmap");
        return 1;
    }
    c->value = p;
    return setenv("WFBENCH_HELLO_COUNTER", c->path, 1) != 0;
}

static uint64_t counter_take(counter *c)
{
    return __atomic_exchange_n(c->value, 0, __ATOMIC_SEQ_CST);
}

static void counter_close(counter *c)
{
    if (c->value)
        munmap((void *)c->value, sizeof(uint64_t));
    unlink(c->path);
}

/* ---- the baseline: one process, the runtime pool, no store ----------------------------------- */

/* n instances created, then started at once on a pool of one worker per core; *rate:
 * orchestrations per second from the first start to the pool going idle. Every instance must
 * end Closed with the expected Greetings. */
static int baseline_run(const char *lib_dir, const char *xaml, long n, double *rate)
{
    wf_error err = WF_ERROR_INIT;
    wf_libpath *libpath = NULL;
    wfm_runtime *rt = NULL;
    wfm_definition *def = NULL;
    wfm_instance **items = calloc((size_t)n, sizeof *items);
    char want[256];
    expected_greetings(want, sizeof want);
    int rc = 1;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    if (!items || wf_libpath_create(lib_dir, &libpath, &err) != WF_OK ||
        (ro.libpath = libpath, wfm_runtime_create(&ro, &rt, &err)) != WF_OK ||
        wfm_runtime_load_mem(rt, "hello.xaml", xaml, strlen(xaml), &def, NULL, &err) != WF_OK)
        goto done;
    for (long i = 0; i < n; i++)
        if (wfm_instance_create(rt, def, &items[i], &err) != WF_OK)
            goto done;
    double t0 = bu_now();
    for (long i = 0; i < n; i++)
        if (wfm_instance_start(items[i], &err) != WF_OK)
            goto done;
    wfm_runtime_wait_idle(rt);
    *rate = (double)n / (bu_now() - t0);
    rc = 0;
    for (long i = 0; i < n && !rc; i++) {
        const wf_value *g = wfm_instance_output(items[i], "Greetings");
        if (wfm_instance_state_get(items[i]) != WFM_INSTANCE_CLOSED || !g ||
            strcmp(wf_value_str(g), want) != 0) {
            fprintf(stderr, "bench_fleet: baseline instance %ld did not close with \"%s\"\n", i,
                    want);
            rc = 1;
        }
    }
done:
    if (err.code != WF_OK)
        fprintf(stderr, "bench_fleet: baseline: %s\n", err.message);
    for (long i = 0; items && i < n; i++)
        wfm_instance_destroy(items[i]);
    free(items);
    wfm_definition_release(def);
    wfm_runtime_destroy(rt);
    wf_libpath_destroy(libpath);
    return rc;
}

/* ---- reading the store: SQLite or libpq, read-only SQL on the documented schema ------------ */

typedef struct db {
    sqlite3 *lite;
    PGconn *pg;
    long queries; /* statements run (PostgreSQL: each a transaction of the server's) */
} db;

static int db_open(db *d, bool pg, const char *name)
{
    *d = (db){NULL, NULL, 0};
    if (pg) {
        d->pg = PQconnectdb(name);
        if (PQstatus(d->pg) != CONNECTION_OK) {
            fprintf(stderr, "bench_fleet: PostgreSQL: %s", PQerrorMessage(d->pg));
            return 1;
        }
        return 0;
    }
    if (sqlite3_open_v2(name, &d->lite, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_busy_timeout(d->lite, 10000) != SQLITE_OK) {
        fprintf(stderr, "bench_fleet: %s: %s\n", name, sqlite3_errmsg(d->lite));
        return 1;
    }
    return 0;
}

static void db_close(db *d)
{
    if (d->pg)
        PQfinish(d->pg);
    sqlite3_close(d->lite);
    *d = (db){NULL, NULL, 0};
}

/* Run a statement that returns integers; `fn` gets each row's first `cols` columns. */
typedef void (*db_row_fn)(void *ud, const int64_t *v, int cols);

static int db_rows(db *d, const char *sql, int cols, db_row_fn fn, void *ud)
{
    int64_t v[8];
    d->queries++;
    if (d->pg) {
        PGresult *r = PQexec(d->pg, sql);
        int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQnfields(r) >= cols;
        for (int row = 0; ok && row < PQntuples(r); row++) {
            for (int c = 0; c < cols; c++)
                v[c] = PQgetisnull(r, row, c) ? 0 : strtoll(PQgetvalue(r, row, c), NULL, 10);
            fn(ud, v, cols);
        }
        if (!ok)
            fprintf(stderr, "bench_fleet: %s: %s", sql, PQerrorMessage(d->pg));
        PQclear(r);
        return !ok;
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->lite, sql, -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = 0; c < cols; c++)
            v[c] = sqlite3_column_int64(st, c);
        fn(ud, v, cols);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        fprintf(stderr, "bench_fleet: %s: %s\n", sql, sqlite3_errmsg(d->lite));
    return rc != SQLITE_DONE;
}

static void copy_row(void *ud, const int64_t *v, int cols)
{
    memcpy(ud, v, (size_t)cols * sizeof *v);
}

/* The store's instance counts: total, Closed, ended otherwise, and the sum of the row
 * versions (every save of an instance adds one: docs/durability.md, the instances table). */
typedef struct tally {
    int64_t total, closed, other_end, saves;
} tally;

static int db_tally(db *d, tally *t)
{
    int64_t v[4] = {0, 0, 0, 0};
    int rc = db_rows(d,
                     "SELECT count(*), coalesce(sum(CASE WHEN status = 'Closed' THEN 1 ELSE 0 END),"
                     " 0), coalesce(sum(CASE WHEN status IN ('Faulted', 'Canceled', 'Terminated')"
                     " THEN 1 ELSE 0 END), 0), coalesce(sum(version), 0) FROM instances",
                     4, copy_row, v);
    *t = (tally){v[0], v[1], v[2], v[3]};
    return rc;
}

typedef struct times {
    int64_t *ms;
    size_t n, cap;
} times;

static void add_time(void *ud, const int64_t *v, int cols)
{
    times *t = ud;
    (void)cols;
    if (t->n < t->cap)
        t->ms[t->n++] = v[0];
}

/* ---- processes ---------------------------------------------------------------------------- */

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Start argv[0] with stdout to /dev/null (stderr kept); -1 on failure. */
static pid_t spawn(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, STDOUT_FILENO);
        execv(argv[0], argv);
        fprintf(stderr, "bench_fleet: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (pid < 0)
        perror("bench_fleet: fork");
    return pid;
}

/* Wait for pid; its exit status, or -1 if it did not exit normally. */
static int reap(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- one cell ----------------------------------------------------------------------------- */

typedef struct fleet {
    const char *wfbridge, *lib_dir, *xaml_path, *dir;
    const char *pg_base; /* NULL: no PostgreSQL */
    long n;
    counter activities;
    int cell_no;
} fleet;

typedef struct cell_fig {
    double orch_s, items_s, p50_ms, p99_ms, seconds;
    int64_t saves;
    uint64_t activities;
    double host_cpu_s;   /* the host processes' CPU (getrusage of the reaped children) */
    double server_cpu_s; /* the local PostgreSQL server's CPU (/proc), < 0: not local */
    int64_t commits;     /* the server's commits in the cell (pg_stat_database), -1: unknown */
    double limit_s;      /* raw prepared UPDATE commits/s, RAW_CONNS connections */
} cell_fig;

/* The libpq connection string of schema `schema` of the base server: the base with
 * options=-csearch_path (a URI gets it as a parameter). */
static void pg_store_name(const char *base, const char *schema, char *out, size_t size)
{
    if (strncmp(base, "postgresql://", 13) == 0 || strncmp(base, "postgres://", 11) == 0)
        snprintf(out, size, "%s%coptions=-csearch_path%%3D%s", base, strchr(base, '?') ? '&' : '?',
                 schema);
    else
        snprintf(out, size, "%s options='-csearch_path=%s'", base, schema);
}

static void pg_quiet(void *ud, const char *message)
{
    (void)ud;
    (void)message; /* DROP SCHEMA ... CASCADE lists every table it drops */
}

static int pg_exec(const char *base, const char *sql)
{
    PGconn *c = PQconnectdb(base);
    PQsetNoticeProcessor(c, pg_quiet, NULL);
    PGresult *r = PQstatus(c) == CONNECTION_OK ? PQexec(c, sql) : NULL;
    int rc = !r || PQresultStatus(r) != PGRES_COMMAND_OK;
    if (rc)
        fprintf(stderr, "bench_fleet: PostgreSQL: %s: %s", sql, PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
    return rc;
}

/* ---- CPU and commits of the hosts and the server -------------------------------------------- */

/* CPU seconds of the reaped children (the hosts, once waited for). */
static double children_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* /proc/PID/stat: the command, the parent, own and reaped children's CPU in clock ticks. */
static int proc_stat(const char *pid, char comm[32], long *ppid, double *own, double *reaped)
{
    char path[300], buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "r");
    size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[len] = '\0';
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close || close - open > 31)
        return 1;
    snprintf(comm, 32, "%.*s", (int)(close - open - 1), open + 1);
    unsigned long ut = 0, st = 0;
    long cut = 0, cst = 0;
    /* after the command: state ppid pgrp session tty tpgid flags minflt cminflt majflt
     * cmajflt utime stime cutime cstime */
    if (sscanf(close + 2, "%*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %ld %ld", ppid, &ut,
               &st, &cut, &cst) != 5)
        return 1;
    *own = (double)(ut + st);
    *reaped = (double)(cut + cst);
    return 0;
}

/* CPU seconds of every process of a PostgreSQL server running on this machine: each
 * postgres process's own time, plus what the postmaster reaped (backends that ended);
 * -1 when none is visible (a remote server). */
static double server_cpu(void)
{
    DIR *dir = opendir("/proc");
    double ticks = 0;
    int seen = 0;
    for (struct dirent *e; dir && (e = readdir(dir));) {
        char comm[32], ppath[32];
        long ppid = 0;
        double own = 0, reaped = 0, pown = 0, preaped = 0;
        if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
            proc_stat(e->d_name, comm, &ppid, &own, &reaped) || strcmp(comm, "postgres") != 0)
            continue;
        snprintf(ppath, sizeof ppath, "%ld", ppid);
        char pcomm[32] = "";
        long pppid = 0;
        bool root = proc_stat(ppath, pcomm, &pppid, &pown, &preaped) ||
                    strcmp(pcomm, "postgres") != 0;
        ticks += own + (root ? reaped : 0);
        seen++;
    }
    if (dir)
        closedir(dir);
    return seen ? ticks / (double)sysconf(_SC_CLK_TCK) : -1;
}

/* The server's committed transactions in the current database so far (a fresh connection:
 * the statistics are read at once, not from a snapshot); -1 when they cannot be read. */
static int64_t server_commits(const char *conninfo)
{
    PGconn *c = PQconnectdb(conninfo);
    PGresult *r = PQstatus(c) == CONNECTION_OK
                      ? PQexec(c, "SELECT xact_commit FROM pg_stat_database "
                                  "WHERE datname = current_database()")
                      : NULL;
    int64_t v = r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1
                    ? strtoll(PQgetvalue(r, 0, 0), NULL, 10)
                    : -1;
    PQclear(r);
    PQfinish(c);
    return v;
}

/* The limit: connections each committing a prepared UPDATE of a row of its own, a blob of an
 * instance's size, for `seconds`, at the cell's synchronous_commit. */
typedef struct raw_conn {
    const char *conninfo;
    bool full;
    int row;
    double until;
    long commits;
    int failed;
} raw_conn;

static void *raw_main(void *arg)
{
    raw_conn *rc = arg;
    PGconn *c = PQconnectdb(rc->conninfo);
    char blob[600], id[16];
    memset(blob, 'x', sizeof blob);
    snprintf(id, sizeof id, "%d", rc->row);
    const char *values[2] = {blob, id};
    const int lens[2] = {(int)sizeof blob, 0}, formats[2] = {1, 0};
    PGresult *r = PQstatus(c) == CONNECTION_OK
                      ? PQexec(c, rc->full ? "SET synchronous_commit = on"
                                           : "SET synchronous_commit = off")
                      : NULL;
    bool ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    r = ok ? PQprepare(c, "raw", "UPDATE wfbench_raw SET state = $1, version = version + 1 "
                                 "WHERE id = $2", 2, NULL)
           : NULL;
    ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    while (ok && bu_now() < rc->until) {
        r = PQexecPrepared(c, "raw", 2, values, lens, formats, 0);
        ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        rc->commits += ok;
    }
    if (!ok)
        fprintf(stderr, "bench_fleet: raw UPDATE: %s", PQerrorMessage(c));
    rc->failed = !ok;
    PQfinish(c);
    return NULL;
}

/* Raw commits per second with `conns` (<= RAW_CONNS) connections on schema conninfo (the
 * table made and dropped here); 0 on failure. */
static double raw_limit(const char *conninfo, bool full, int conns)
{
    assert(conns > 0 && conns <= RAW_CONNS);
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE TABLE wfbench_raw (id int PRIMARY KEY, state bytea, "
                              "version int); INSERT INTO wfbench_raw SELECT g, '', 0 FROM "
                              "generate_series(0, %d) g", RAW_CONNS);
    if (pg_exec(conninfo, sql))
        return 0;
    raw_conn rc[RAW_CONNS];
    pthread_t th[RAW_CONNS];
    double t0 = bu_now(), until = t0 + (bu_quick() ? 0.1 : 1.0);
    int failed = 0;
    long commits = 0;
    for (int i = 0; i < conns; i++) {
        rc[i] = (raw_conn){conninfo, full, i, until, 0, 0};
        pthread_create(&th[i], NULL, raw_main, &rc[i]);
    }
    for (int i = 0; i < conns; i++) {
        pthread_join(th[i], NULL);
        failed |= rc[i].failed;
        commits += rc[i].commits;
    }
    double span = bu_now() - t0;
    pg_exec(conninfo, "DROP TABLE wfbench_raw");
    return failed || span <= 0 ? 0 : (double)commits / span;
}

static void remove_db(const char *path)
{
    static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
    char p[1200];
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, sides[i]);
        unlink(p);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Poll the store until every instance is Closed (or one ends otherwise, a host exits, or the
 * time runs out), then SIGTERM the hosts and wait for them. */
static int drain(const fleet *f, db *d, pid_t *hosts, int nhosts)
{
    double limit = bu_now() + (bu_quick() ? 120.0 : 1200.0);
    tally t = {0, 0, 0, 0};
    int rc = 0;
    for (;;) {
        if (db_tally(d, &t)) {
            rc = 1;
            break;
        }
        if (t.closed == f->n)
            break;
        if (t.other_end > 0) {
            fprintf(stderr, "bench_fleet: %lld instances ended other than Closed\n",
                    (long long)t.other_end);
            rc = 1;
            break;
        }
        for (int h = 0; h < nhosts; h++) {
            int st;
            if (hosts[h] > 0 && waitpid(hosts[h], &st, WNOHANG) == hosts[h]) {
                fprintf(stderr, "bench_fleet: a host exited early (status %d)\n",
                        WIFEXITED(st) ? WEXITSTATUS(st) : -1);
                hosts[h] = -1;
                rc = 1;
            }
        }
        if (rc)
            break;
        if (bu_now() > limit) {
            fprintf(stderr, "bench_fleet: timed out, %lld of %ld instances Closed\n",
                    (long long)t.closed, f->n);
            rc = 1;
            break;
        }
        nanosleep(&(struct timespec){0, 20 * 1000000}, NULL);
    }
    for (int h = 0; h < nhosts; h++)
        if (hosts[h] > 0)
            kill(hosts[h], SIGTERM);
    for (int h = 0; h < nhosts; h++)
        if (hosts[h] > 0 && reap(hosts[h]) != 0) {
            fprintf(stderr, "bench_fleet: a host did not exit 0 after SIGTERM\n");
            rc = 1;
        }
    return rc;
}

/* The figures of a drained store: completion times (updated_ms of the Closed rows) from t0. */
static int figures(const fleet *f, db *d, int64_t t0, int64_t saves_before, cell_fig *out)
{
    tally t;
    times tm = {calloc((size_t)f->n, sizeof(int64_t)), 0, (size_t)f->n};
    int rc = !tm.ms || db_tally(d, &t) ||
             db_rows(d, "SELECT updated_ms FROM instances WHERE status = 'Closed'", 1, add_time,
                     &tm);
    if (!rc && tm.n != (size_t)f->n) {
        fprintf(stderr, "bench_fleet: %zu Closed rows, not %ld\n", tm.n, f->n);
        rc = 1;
    }
    if (!rc) {
        qsort(tm.ms, tm.n, sizeof *tm.ms, cmp_i64);
        double span = (double)(tm.ms[tm.n - 1] - t0) / 1000.0;
        if (span <= 0)
            span = 1e-3;
        out->seconds = span;
        out->saves = t.saves - saves_before;
        out->orch_s = (double)f->n / span;
        out->items_s = (double)((uint64_t)out->saves + out->activities) / span;
        out->p50_ms = (double)(tm.ms[(tm.n - 1) / 2] - t0);
        out->p99_ms = (double)(tm.ms[(tm.n * 99 + 99) / 100 - 1] - t0);
    }
    free(tm.ms);
    return rc;
}

/* After the hosts exited: once their backends have ended too (a backend ends as its client
 * disconnects and the postmaster reaps it; 300 ms is ample), the server's CPU and commits
 * since srv0 / commits0, less the bench's own polling statements. */
static void pg_settle(const char *store, double srv0, int64_t commits0, long polls,
                      cell_fig *out)
{
    nanosleep(&(struct timespec){0, 300 * 1000000}, NULL);
    double srv1 = server_cpu();
    int64_t commits1 = server_commits(store);
    out->server_cpu_s = srv0 >= 0 && srv1 >= 0 ? srv1 - srv0 : -1;
    /* the statistics count the first reading's own transaction, then the polls */
    out->commits = commits0 >= 0 && commits1 >= 0 ? commits1 - commits0 - 1 - polls : -1;
}

static int run_cell(fleet *f, bool pg, bool full, int nhosts, cell_fig *out)
{
    char store[1400], schema[64], path[1100];
    const char *dur = full ? "full" : "normal";
    int cell = ++f->cell_no;
    if (pg) {
        snprintf(schema, sizeof schema, "wfbench_fleet_%ld_%d", (long)getpid(), cell);
        char sql[128];
        snprintf(sql, sizeof sql, "CREATE SCHEMA %s", schema);
        if (pg_exec(f->pg_base, sql))
            return 1;
        pg_store_name(f->pg_base, schema, store, sizeof store);
    } else {
        snprintf(path, sizeof path, "%s/fleet-%d.db", f->dir, cell);
        remove_db(path);
        snprintf(store, sizeof store, "%s", path);
    }
    char count[32];
    snprintf(count, sizeof count, "%ld", f->n);
    char *start_argv[] = {(char *)f->wfbridge, "start", (char *)f->xaml_path, "--store", store,
                          "--count", count, "--lib-path", (char *)f->lib_dir, "--durability",
                          (char *)dur, NULL};
    char *host_argv[] = {(char *)f->wfbridge, "host", "--store", store, "--lib-path",
                         (char *)f->lib_dir, "--durability", (char *)dur, NULL};
    db d = {NULL, NULL, 0};
    tally before = {0, 0, 0, 0};
    pid_t hosts[MAX_HOSTS];
    int rc = 0;
    pid_t starter = spawn(start_argv);
    if (starter < 0 || reap(starter) != 0) {
        fprintf(stderr, "bench_fleet: wfbridge start failed\n");
        rc = 1;
    }
    rc = rc || db_open(&d, pg, store) || db_tally(&d, &before);
    if (!rc && before.total != f->n) {
        fprintf(stderr, "bench_fleet: the store holds %lld instances, not %ld\n",
                (long long)before.total, f->n);
        rc = 1;
    }
    if (!rc) {
        counter_take(&f->activities);
        double cpu0 = children_cpu(), srv0 = pg ? server_cpu() : -1;
        int64_t commits0 = pg ? server_commits(store) : -1;
        long queries0 = d.queries;
        int64_t t0 = wall_ms();
        int started = 0;
        for (; started < nhosts; started++)
            if ((hosts[started] = spawn(host_argv)) < 0)
                break;
        rc = started < nhosts;
        rc = drain(f, &d, hosts, started) || rc;
        out->activities = counter_take(&f->activities);
        out->host_cpu_s = children_cpu() - cpu0;
        if (pg)
            pg_settle(store, srv0, commits0, d.queries - queries0, out);
        rc = rc || figures(f, &d, t0, before.saves, out);
        if (pg && !rc)
            out->limit_s = raw_limit(store, full, RAW_CONNS);
    }
    if (!rc && out->activities < (uint64_t)f->n * CITIES) {
        fprintf(stderr, "bench_fleet: %llu activities ran, not %ld\n",
                (unsigned long long)out->activities, f->n * CITIES);
        rc = 1;
    }
    db_close(&d);
    if (pg) {
        char sql[128];
        snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", schema);
        rc = pg_exec(f->pg_base, sql) || rc;
    } else {
        remove_db(path);
    }
    return rc;
}

/* ---- the table ---------------------------------------------------------------------------- */

typedef struct grid_row {
    bool pg, full;
    int hosts;
    bool optional; /* a failure is reported in the table, not fatal (SQLite, 2 hosts) */
} grid_row;

static const grid_row grid[] = {
    {false, true, 1, false},  {false, true, 2, true},  {false, false, 1, false},
    {false, false, 2, true},  {true, true, 1, false},  {true, true, 2, false},
    {true, true, 4, false},   {true, false, 1, false}, {true, false, 2, false},
    {true, false, 4, false},
};
enum { GRID = sizeof grid / sizeof grid[0] };

/* A cell's figures over its repetitions (median, min, max of each). */
typedef struct cell_sum {
    bu_stat orch_s, items_s, p50_ms, p99_ms, saves_per, acts_per;
    bu_stat host_us, server_us, total_us, commits_s, commits_per, limit_s, of_limit;
    bool server, commits, limit; /* those figures were measured in every repetition */
} cell_sum;

enum { F_ORCH, F_ITEMS, F_P50, F_P99, F_SAVES, F_ACTS, F_HOST, F_SERVER, F_TOTAL, F_COMMITS_S,
       F_COMMITS_PER, F_LIMIT, F_OF_LIMIT, FIGURES };

/* Each figure of one repetition of a cell into v[figure]. */
static void cell_values(const cell_fig *c, double v[FIGURES])
{
    double n = c->orch_s * c->seconds, commits_s = (double)c->commits / c->seconds;
    v[F_ORCH] = c->orch_s;
    v[F_ITEMS] = c->items_s;
    v[F_P50] = c->p50_ms;
    v[F_P99] = c->p99_ms;
    v[F_SAVES] = (double)c->saves / n;
    v[F_ACTS] = (double)c->activities / n;
    v[F_HOST] = c->host_cpu_s * 1e6 / n;
    v[F_SERVER] = c->server_cpu_s * 1e6 / n;
    v[F_TOTAL] = (c->host_cpu_s + c->server_cpu_s) * 1e6 / n;
    v[F_COMMITS_S] = commits_s;
    v[F_COMMITS_PER] = (double)c->commits / n;
    v[F_LIMIT] = c->limit_s;
    v[F_OF_LIMIT] = c->limit_s > 0 ? 100.0 * commits_s / c->limit_s : 0;
}

static cell_sum summarise(const cell_fig *figs, int reps)
{
    double v[FIGURES][CELL_REPS], one[FIGURES];
    cell_sum m;
    m.server = m.commits = m.limit = true;
    for (int r = 0; r < reps; r++) {
        cell_values(&figs[r], one);
        for (int k = 0; k < FIGURES; k++)
            v[k][r] = one[k];
        m.server = m.server && figs[r].server_cpu_s >= 0;
        m.commits = m.commits && figs[r].commits >= 0;
        m.limit = m.limit && figs[r].limit_s > 0;
    }
    bu_stat *out[FIGURES] = {&m.orch_s,  &m.items_s,   &m.p50_ms,    &m.p99_ms,   &m.saves_per,
                             &m.acts_per, &m.host_us,  &m.server_us, &m.total_us, &m.commits_s,
                             &m.commits_per, &m.limit_s, &m.of_limit};
    for (int k = 0; k < FIGURES; k++)
        *out[k] = bu_summary(v[k], reps);
    return m;
}

/* The targets: >= 50,000 work items/s on SQLite at normal (one host); PostgreSQL
 * orchestrations/s growing with hosts (each row's median against the row with half its
 * hosts). */
static const char *target_of(int i, const cell_sum *sums, const bool *ok, char *buf,
                             size_t size)
{
    const grid_row *g = &grid[i];
    if (!g->pg && !g->full && g->hosts == 1)
        snprintf(buf, size, ">= 50,000 work items/s | %s",
                 sums[i].items_s.med >= 50000 ? "met" : "not met");
    else if (g->pg && g->hosts > 1 && ok[i - 1])
        snprintf(buf, size, "> %d host%s (%.0f/s) | %s", g->hosts / 2, g->hosts > 2 ? "s" : "",
                 sums[i - 1].orch_s.med,
                 sums[i].orch_s.med > sums[i - 1].orch_s.med ? "met" : "not met");
    else
        snprintf(buf, size, "- | -");
    return buf;
}

/* One PostgreSQL cell's CPU per orchestration and commits against the raw limit. */
static void pg_row(const grid_row *g, const cell_sum *m)
{
    char o[64], h[64], srv[64] = "-", tot[64] = "-", com[64] = "-", per[64] = "-", lim[64] = "-",
                       of[64] = "-";
    if (m->server) {
        bu_cell(m->server_us, srv, sizeof srv);
        bu_cell(m->total_us, tot, sizeof tot);
    }
    if (m->commits) {
        bu_cell(m->commits_s, com, sizeof com);
        snprintf(per, sizeof per, "%.2f", m->commits_per.med);
    }
    if (m->limit) {
        bu_cell(m->limit_s, lim, sizeof lim);
        if (m->commits)
            snprintf(of, sizeof of, "%.0f%% (%.0f–%.0f%%)", m->of_limit.med, m->of_limit.min,
                     m->of_limit.max);
    }
    printf("PostgreSQL %-6s %d host(s): host CPU %.0f us/orch, server CPU %s us/orch, "
           "%s commits/s (%s per orch), raw limit %s commits/s (%s)\n",
           g->full ? "full" : "normal", g->hosts, m->host_us.med, srv, com, per, lim, of);
    bu_md("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", g->full ? "full" : "normal",
          g->hosts, bu_cell(m->orch_s, o, sizeof o), bu_cell(m->host_us, h, sizeof h), srv, tot,
          com, per, lim, of);
    char row[96];
    snprintf(row, sizeof row, "PostgreSQL, %s, %d host%s", g->full ? "full" : "normal", g->hosts,
             g->hosts > 1 ? "s" : "");
    bu_json("bench_fleet", "fleet pg", row, "host CPU", "us per orchestration", m->host_us);
    if (m->server)
        bu_json("bench_fleet", "fleet pg", row, "server CPU", "us per orchestration",
                m->server_us);
    if (m->commits)
        bu_json("bench_fleet", "fleet pg", row, "server commits", "commits/s", m->commits_s);
    if (m->limit)
        bu_json("bench_fleet", "fleet pg", row, "raw prepared UPDATE", "commits/s", m->limit_s);
}

static void pg_table(const cell_sum *sums, const bool *ok)
{
    bu_md("\nPostgreSQL: where each cell's CPU goes and how close its commits come to the\n"
          "server's limit. Host CPU: the host processes' user + system time (getrusage of the\n"
          "reaped children); server CPU: every postgres process of the server, when it runs on\n"
          "this machine (/proc: each process's own time plus the backends the postmaster\n"
          "reaped), both per orchestration. Commits: the server's committed transactions in\n"
          "the cell (pg_stat_database.xact_commit, less the bench's polling) over its time;\n"
          "they include the hosts' lease claims and renewals. The hosts batch the saves a commit\n"
          "carries into one pipelined round trip (libpq pipeline mode: BEGIN, one statement\n"
          "per save, COMMIT). The limit: right after the cell, 8 connections each committing\n"
          "a prepared UPDATE of a 600-byte blob into a row of its own for 1 s, at the cell's\n"
          "synchronous_commit (the server's commit throughput with as many committers as the\n"
          "largest cell has host threads); `of limit` is the cell's commits/s over it, per\n"
          "repetition. Median (min–max) of the repetitions above. The server shares the 2\n"
          "cores with the hosts.\n\n"
          "| durability | hosts | orchestrations/s | host CPU µs/orch | server CPU µs/orch | "
          "total CPU µs/orch | server commits/s | commits per orch | raw UPDATE commits/s "
          "(limit) | of limit |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < GRID; i++)
        if (grid[i].pg && ok[i])
            pg_row(&grid[i], &sums[i]);
    bu_md("\nWhere the time goes: the server's CPU per orchestration is 4-5x the hosts' (each\n"
          "orchestration's 6 saves and its share of a claim are statements the server parses,\n"
          "plans from the prepared form, writes to WAL and commits); hosts and server share\n"
          "the 2 cores, so past 2 hosts more hosts add CPU per orchestration (more connections,\n"
          "smaller batches) and no core to spend it on. What grew with the hosts was mostly not\n"
          "per save: each host claimed whenever a run ended, a few rows at a time, and each claim\n"
          "read and sorted every runnable row (a claim that found nothing read the table); and\n"
          "each host listed the whole store, Closed rows included, whenever its claims came back\n"
          "short and then every poll period (1 s). Now (store schema version 4) a claim reads the\n"
          "free runnable rows through an index in its own order (instances_claimable: created_ms,\n"
          "id where the owner is NULL and the status Created or Executing), so it stops after its\n"
          "batch and one that finds nothing reads none of them (expired leases, due timers and\n"
          "queued resumptions each come through an index of their own); a host claims whole\n"
          "batches of 64 only, and after a claim that came back short waits 10 ms, doubling after\n"
          "each that found nothing up to the poll period (NOTIFY of new work ends the wait); and\n"
          "its periodic listing asks for the Created, Executing and Idle rows only. One cell by\n"
          "hand, 4 hosts at full, 5,000 orchestrations, pg_stat_statements, load ~14 from other\n"
          "processes: 119 claims taking 1.93 s of the server's statement time before, 98 taking\n"
          "1.11 s after; listings 8 returning 40,000 rows in 719 ms before, 16 (three statuses\n"
          "each) returning 26,267 rows in 312 ms after. The listing joins each side table\n"
          "once, aggregated: 20-23 ms of server CPU for 3,000 rows before, 10.5 after (the\n"
          "backend's CPU from /proc over 20 runs of the statement, twice). A save that changes\n"
          "no indexed\n"
          "column (the middle Persists: same status, owner and timer) can be a heap-only update,\n"
          "which writes no index entry, when the row's page has room: a new store's instances\n"
          "table leaves half of each page free (fillfactor 50; the claim index's columns are\n"
          "indexed already or never change, so that stays true); with 2 hosts and 2,000\n"
          "orchestrations of 2 Persists, 1,897 of the 8,000 row updates were heap-only, 155\n"
          "before (the claim, the first save and the completion change an indexed column).\n"
          "Commits per orchestration are ~0.1: the saves of ~100 orchestrations share a pipelined\n"
          "commit, so the cells stay far below the raw commit limit; the server's CPU per\n"
          "statement is what bounds them. Repetitions several times slower than the others\n"
          "happen with and without the claim index and pacing, and what slows is each\n"
          "statement: in one such cell by hand (old code, 4 hosts at full) the row-only save\n"
          "took 628 µs of the server's statement time instead of ~37 and the full save 695\n"
          "instead of ~180. Checkpoints are not shown to cause them (log_checkpoints,\n"
          "pg_stat_bgwriter read every second): a PostgreSQL cell writes ~25 MB of WAL, so a\n"
          "run (~540 MB) reaches the default max_wal_size's trigger (1 GB: a checkpoint every\n"
          "~540 MB) about once; two slow cells by hand began as a checkpoint started (one\n"
          "requested by WAL, one timed), but a CHECKPOINT forced 0.4 s into a cell (twice\n"
          "with the old code at 4 hosts, twice with the new at 2) slowed it by ~10%% only, slow\n"
          "cells of this program also came right after a server restart and with the\n"
          "machine's load at ~15 from other processes and no checkpoint in progress, and a\n"
          "timed checkpoint overlapping other cells left them at their usual rate. This\n"
          "program's own polling (a count over the store's instances every 20 ms) costs the\n"
          "server CPU in proportion to a cell's\n"
          "time, so a slow cell also shows more server CPU per orchestration. Before the claim\n"
          "returned each row's number of promoted properties, every adopted instance read them\n"
          "back in a transaction of its own (1.5-1.8 commits per orchestration; measured at load\n"
          "13-17 with 1,000 orchestrations, 3 repetitions, two runs before: one host at full\n"
          "950-1,730 µs of server and 256-319 of host CPU per orchestration before, 640 and 127\n"
          "after; at normal 830-1,040 / 212-227 before, 600 / 125 after).\n"
          "SQLite, one host: a claim read and sorted every Created and Executing row, ~25%% of\n"
          "all instructions of `wfbridge host --once` over 5,000 orchestrations at normal\n"
          "(callgrind: 79 claims, 585M instructions). Schema version 4 gives SQLite the same\n"
          "claim-order index plus one over leased rows by expiry, and the claim reads each kind\n"
          "of claimable row through its index with its own limit: 195M for the claims, 2,529M\n"
          "-> 2,322M in all (saves pay +26%%: each renews its lease, which moves its entry in the\n"
          "lease index). A save that leaves status and timer as the host last wrote them no\n"
          "longer rewrites them, so SQLite does not delete and re-insert the row's status index\n"
          "entry for every mid-run Persist; and the host finds an open instance by a hash of its\n"
          "id instead of walking its list (2.5%% of the instructions before).\n");
}

/* One cell's row of the main table (its repetitions summarised). */
static void fleet_row(int i, const cell_sum *sums, const bool *ok, double base)
{
    const grid_row *g = &grid[i];
    const cell_sum *m = &sums[i];
    const char *store = g->pg ? "PostgreSQL" : "SQLite", *dur = g->full ? "full" : "normal";
    char a[64], b[64], c50[64], c99[64], h[64], t[96];
    printf("%-10s %-6s %d host(s): %7.0f orch/s %8.0f work items/s (%.2f saves+%.2f act "
           "per orch) p50 %6.0f ms p99 %6.0f ms  host CPU %.0f us/orch  x%.3g of baseline\n",
           store, dur, g->hosts, m->orch_s.med, m->items_s.med, m->saves_per.med,
           m->acts_per.med, m->p50_ms.med, m->p99_ms.med, m->host_us.med, m->orch_s.med / base);
    bu_md("| %s | %s | %d | %s | %s | %.2f (%.2f + %.2f) | %s | %s | %s | %.3g | %s |\n", store,
          dur, g->hosts, bu_cell(m->orch_s, a, sizeof a), bu_cell(m->items_s, b, sizeof b),
          m->saves_per.med + m->acts_per.med, m->saves_per.med, m->acts_per.med,
          bu_cell(m->p50_ms, c50, sizeof c50), bu_cell(m->p99_ms, c99, sizeof c99),
          bu_cell(m->host_us, h, sizeof h), m->orch_s.med / base,
          target_of(i, sums, ok, t, sizeof t));
    char row[96];
    snprintf(row, sizeof row, "%s, %s, %d host%s", store, dur, g->hosts, g->hosts > 1 ? "s" : "");
    bu_json("bench_fleet", "fleet", row, "orchestrations", "orchestrations/s", m->orch_s);
    bu_json("bench_fleet", "fleet", row, "work items", "work items/s", m->items_s);
    bu_json("bench_fleet", "fleet", row, "latency p50", "ms", m->p50_ms);
    bu_json("bench_fleet", "fleet", row, "latency p99", "ms", m->p99_ms);
    bu_json("bench_fleet", "fleet", row, "host CPU", "us per orchestration", m->host_us);
    bu_json("bench_fleet", "fleet", row, "/ baseline", "x", bu_one(m->orch_s.med / base));
}

/* Every cell `reps` times, the repetitions interleaved (the whole grid, then again). */
static int fleet_table(fleet *f, double base, int reps)
{
    static cell_fig figs[GRID][CELL_REPS];
    cell_sum sums[GRID];
    bool ok[GRID];
    int rc = 0;
    memset(figs, 0, sizeof figs);
    memset(sums, 0, sizeof sums);
    for (int i = 0; i < GRID; i++)
        ok[i] = !grid[i].pg || f->pg_base;
    for (int r = 0; r < reps && !rc; r++)
        for (int i = 0; i < GRID && !rc; i++) {
            if (!ok[i])
                continue;
            ok[i] = run_cell(f, grid[i].pg, grid[i].full, grid[i].hosts, &figs[i][r]) == 0;
            if (!ok[i]) {
                printf("%s %s %d host(s): failed\n", grid[i].pg ? "PostgreSQL" : "SQLite",
                       grid[i].full ? "full" : "normal", grid[i].hosts);
                rc = !grid[i].optional;
            }
        }
    bu_md("| store | durability | hosts | orchestrations/s | work items/s | work items per "
          "orchestration (saves + activities) | p50 ms | p99 ms | host CPU µs/orch | / baseline "
          "| target | met? |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < GRID && !rc; i++) {
        const grid_row *g = &grid[i];
        if (g->pg && !f->pg_base)
            continue;
        if (!ok[i]) {
            bu_md("| %s | %s | %d | failed (see the program's stderr) | | | | | | | | |\n",
                  g->pg ? "PostgreSQL" : "SQLite", g->full ? "full" : "normal", g->hosts);
            continue;
        }
        sums[i] = summarise(figs[i], reps);
        fleet_row(i, sums, ok, base);
    }
    if (!rc && f->pg_base)
        pg_table(sums, ok);
    if (!f->pg_base) {
        printf("PostgreSQL: skipped, neither WFBRIDGE_BENCH_PG nor WFBRIDGE_TEST_PG is set\n");
        bu_md("\nPostgreSQL rows: skipped, neither WFBRIDGE_BENCH_PG nor WFBRIDGE_TEST_PG names a "
              "server (.ci/run sets WFBRIDGE_TEST_PG).\n");
    }
    bu_md("\n");
    return rc;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : bu_count(5000, 300);
    if (n < 1)
        n = 1;
    char lib_dir[1100], wfbridge[1200], dir[1024], xaml_path[1100], self[1024];
    bu_lib_dir(argv[0], lib_dir, sizeof lib_dir);
    const char *env_bin = getenv("WFBENCH_WFBRIDGE");
    snprintf(self, sizeof self, "%s", argv[0]);
    if (env_bin && *env_bin)
        snprintf(wfbridge, sizeof wfbridge, "%s", env_bin);
    else
        snprintf(wfbridge, sizeof wfbridge, "%.1000s/../bin/wfbridge", dirname(self));
    if (access(wfbridge, X_OK) != 0) {
        fprintf(stderr, "bench_fleet: no wfbridge at %s (set WFBENCH_WFBRIDGE)\n", wfbridge);
        return 1;
    }
    static char xaml[8192];
    snprintf(dir, sizeof dir, "%s/bench_fleet.XXXXXX", bench_tmp_base());
    if (hello_xaml(xaml, sizeof xaml) || !mkdtemp(dir)) {
        perror("bench_fleet: setup");
        return 1;
    }
    snprintf(xaml_path, sizeof xaml_path, "%s/hello.xaml", dir);
    FILE *xf = fopen(xaml_path, "w");
    if (!xf || fputs(xaml, xf) < 0 || fclose(xf) != 0) {
        perror("bench_fleet: hello.xaml");
        return 1;
    }
    const char *pg = getenv("WFBRIDGE_BENCH_PG");
    if (!pg || !*pg)
        pg = getenv("WFBRIDGE_TEST_PG");
    fleet f = {.wfbridge = wfbridge, .lib_dir = lib_dir, .xaml_path = xaml_path, .dir = dir,
               .pg_base = pg && *pg ? pg : NULL, .n = n};
    int rc = counter_open(&f.activities, dir);

    /* baseline: a warm-up, then the median of its repetitions */
    int reps = bu_reps(BASE_REPS);
    double base_v[BASE_REPS], warm = 0;
    rc = rc || baseline_run(lib_dir, xaml, n / 4 + 1, &warm);
    for (int r = 0; r < reps && !rc; r++)
        rc = baseline_run(lib_dir, xaml, n, &base_v[r]);
    uint64_t base_acts = counter_take(&f.activities);
    bu_stat base = bu_summary(base_v, rc ? 0 : reps);
    if (!rc) {
        char c[64];
        printf("baseline (one process, runtime pool, no store): %.0f orch/s, %llu activities\n",
               base.med, (unsigned long long)base_acts);
        bu_md("## Fleet: Hello cities through `wfbridge start` and `wfbridge host`\n\n"
              "Hello cities (the workload durable-task schedulers publish throughput for): an\n"
              "orchestration calling 5 activities in sequence — a\n"
              "native InvokeMethod `hello(city)` returning \"Hello, <city>!\"\n"
              "(bench/libs/hellocities), a Persist after each — and collecting the greetings\n"
              "into its output; %ld instances made by `wfbridge start --count %ld`, then H\n"
              "`wfbridge host --store S --lib-path L --durability D` processes started together\n"
              "(default workers: one per core, %ld here) and stopped with SIGTERM once the store\n"
              "shows every instance Closed. Time runs from the hosts' start to the last\n"
              "completion (the largest `updated_ms` of the Closed rows); p50 / p99: each\n"
              "instance's `updated_ms` minus the hosts' start. Each cell: median (min–max) of %d\n"
              "repetitions, the whole grid run once, then again; PostgreSQL cells\n"
              "each on a fresh schema of the server in WFBRIDGE_BENCH_PG or WFBRIDGE_TEST_PG,\n"
              "sharing this machine's cores.\n\n"
              "A work item is what such schedulers call an action: an operation the scheduler\n"
              "processes, such as running an orchestration step or an activity. Counted from\n"
              "what the run did: orchestration steps are the saves the hosts made (the rise of\n"
              "the rows' `version` column, which every save increments: each Persist and the\n"
              "completion), activities are the `hello` calls the library counted in a counter\n"
              "shared by the host processes. Host CPU: the host processes' user + system time\n"
              "(getrusage of the reaped children) per orchestration, which the machine's load\n"
              "changes far less than the rates.\n\n"
              "Baseline (same run): the same workload in one process on the runtime pool (one\n"
              "worker per core), no store, so Persist completes at once: %s orchestrations/s\n"
              "(median of %d after a warm-up). `/ baseline` is each cell's orchestrations/s over\n"
              "it. Targets: >= 50,000 work items/s on SQLite at normal; PostgreSQL\n"
              "growing with hosts.\n\n",
              n, n, sysconf(_SC_NPROCESSORS_ONLN), bu_reps(CELL_REPS), bu_cell(base, c, sizeof c), reps);
        bu_json("bench_fleet", "fleet", "baseline: one process, no store", "orchestrations",
                "orchestrations/s", base);
        rc = fleet_table(&f, base.med, bu_reps(CELL_REPS));
    }
    counter_close(&f.activities);
    unlink(xaml_path);
    rmdir(dir);
    return rc;
}

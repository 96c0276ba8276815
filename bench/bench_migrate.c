/* bench_migrate.c — moving running instances (docs/migrate.md): N legacy instances of the
 * expense sample waiting in their first state (a one-second Delay pending, two events
 * awaited), moved by `wfbridge migrate-instances` into a fresh modern store: SQLite at
 * durability normal and full, and PostgreSQL (a fresh schema per run; skipped without
 * WFBRIDGE_BENCH_PG or WFBRIDGE_TEST_PG). Instances per second of the whole command (loading
 * the definitions, planning every instance by replay, the transactions); the --dry-run row is
 * the planning alone. usage: bench_migrate [N] */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../common/wf_native.h"
#include "../legacy/wfl_def.h"
#include "../legacy/wfl_exec.h"
#include "../legacy/wfl_store.h"
#include "bench_util.h"

#define SAMPLE "samples/legacy/expense_approval/expense_approval.xoml"

enum { MAX_REPS = 3 };

/* Run argv; its exit status, and its CPU seconds (user + system) into *cpu when given. */
static int run_cpu(char *const argv[], double *cpu)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (pid > 0 && wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR)
            return -1;
    if (cpu)
        *cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run(char *const argv[])
{
    return run_cpu(argv, NULL);
}

/* N waiting instances of the sample in a new legacy store, one transaction. */
static int legacy_store(const char *path, const char *libs, long n)
{
    wf_error err = WF_ERROR_INIT;
    wf_types *types = wf_types_create();
    wf_libpath *lp = NULL;
    wfl_definition *def = NULL;
    wfl_store *store = NULL;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    wfl_load_opts lo = WFL_LOAD_OPTS_INIT;
    int rc = 1;
    lo.types = types;
    if (wf_libpath_create(libs, &lp, &err) != WF_OK)
        goto done;
    lo.libpath = lp;
    if (wfl_definition_load_file(&lo, SAMPLE, &def, &err) != WF_OK ||
        wfl_store_open(path, &store, &err) != WF_OK)
        goto done;
    if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db, "BEGIN", 0, 0, 0) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO instances VALUES(?, 'Idle', ?)", -1, &st, 0) !=
            SQLITE_OK)
        goto done;
    for (long i = 0; i < n; i++) {
        char id[33];
        snprintf(id, sizeof id, "%016x%016lx", 0xbe7cu, (unsigned long)i);
        wfl_exec_opts eo = WFL_EXEC_OPTS_INIT;
        eo.instance_id = id;
        wfl_exec *ex = NULL;
        wfl_exec_state state;
        void *blob = NULL;
        size_t len = 0;
        if (wfl_exec_create(def, NULL, &eo, &ex, &err) != WF_OK ||
            wfl_exec_set_input_text(ex, "Employee", "ann", &err) != WF_OK ||
            wfl_exec_set_input_text(ex, "Amount", "120.50", &err) != WF_OK ||
            wfl_exec_run(ex, &state, &err) != WF_OK || state != WFL_EXEC_IDLE ||
            wfl_exec_save(ex, &blob, &len, &err) != WF_OK) {
            wfl_exec_destroy(ex);
            goto done;
        }
        sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_blob(st, 2, blob, (int)len, SQLITE_TRANSIENT);
        int step = sqlite3_step(st);
        sqlite3_reset(st);
        wf_free(blob);
        wfl_exec_destroy(ex);
        if (step != SQLITE_DONE)
            goto done;
    }
    rc = sqlite3_exec(db, "COMMIT", 0, 0, 0) != SQLITE_OK;
done:
    if (rc)
        fprintf(stderr, "bench_migrate: cannot build the legacy store: %s\n", err.message);
    sqlite3_finalize(st);
    sqlite3_close(db);
    wfl_store_close(store);
    wfl_definition_destroy(def);
    wf_libpath_destroy(lp);
    wf_types_destroy(types);
    return rc;
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
        fprintf(stderr, "bench_migrate: PostgreSQL: %s: %s", sql, PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
    return rc;
}

typedef struct bench {
    const char *wfbridge, *libs, *dir, *pg;
    char map[2400];
    long n;
    int cell;
} bench;

/* One timed run into a fresh target; instances per second of wall clock, or -1 (*per_cpu:
 * per CPU-second of the process). */
static double one_run(bench *b, const char *target, const char *durability, bool dry,
                      double *per_cpu)
{
    char from[1200], store[1400], schema[64], cmd[2600];
    snprintf(from, sizeof from, "%s/run.db", b->dir);
    snprintf(cmd, sizeof cmd, "cp %s/legacy.db %s && rm -f %s/modern.db*", b->dir, from, b->dir);
    if (system(cmd) != 0)
        return -1;
    if (strcmp(target, "postgresql") == 0) {
        snprintf(schema, sizeof schema, "wfbench_migrate_%ld_%d", (long)getpid(), ++b->cell);
        snprintf(cmd, sizeof cmd, "CREATE SCHEMA %s", schema);
        if (pg_exec(b->pg, cmd))
            return -1;
        if (strncmp(b->pg, "postgresql://", 13) == 0 || strncmp(b->pg, "postgres://", 11) == 0)
            snprintf(store, sizeof store, "%s%coptions=-csearch_path%%3D%s", b->pg,
                     strchr(b->pg, '?') ? '&' : '?', schema);
        else
            snprintf(store, sizeof store, "%s options='-csearch_path=%s'", b->pg, schema);
    } else {
        snprintf(store, sizeof store, "%s/modern.db", b->dir);
    }
    char *argv[] = {(char *)b->wfbridge, "migrate-instances", "--from", from, "--to", store,
                    "--map", b->map, "--lib-path", (char *)b->libs, "--durability",
                    (char *)durability, dry ? "--dry-run" : NULL, NULL};
    double t0 = bu_now(), cpu = 0;
    int rc = run_cpu(argv, &cpu);
    double s = bu_now() - t0;
    *per_cpu = cpu > 0 ? (double)b->n / cpu : 0;
    if (strcmp(target, "postgresql") == 0) {
        snprintf(cmd, sizeof cmd, "DROP SCHEMA %s CASCADE", schema);
        pg_exec(b->pg, cmd);
    }
    if (rc != 0) {
        fprintf(stderr, "bench_migrate: migrate-instances exited %d\n", rc);
        return -1;
    }
    return (double)b->n / s;
}

static int row(bench *b, const char *target, const char *durability, bool dry)
{
    double v[MAX_REPS], c[MAX_REPS];
    int reps = bu_reps(MAX_REPS);
    if (one_run(b, target, durability, dry, &c[0]) < 0) /* warm-up */
        return 1;
    for (int i = 0; i < reps; i++)
        if ((v[i] = one_run(b, target, durability, dry, &c[i])) < 0)
            return 1;
    bu_stat s = bu_summary(v, reps), sc = bu_summary(c, reps);
    char cell[64], ccell[64], label[128];
    snprintf(label, sizeof label, "%s, durability %s%s", target, durability,
             dry ? ", --dry-run (planning only)" : "");
    printf("%-52s %s instances/s, %s per CPU-second\n", label, bu_cell(s, cell, sizeof cell),
           bu_cell(sc, ccell, sizeof ccell));
    bu_md("| %s | %s | %s | %s | %s |\n", target, durability, dry ? "--dry-run" : "move",
          bu_cell(s, cell, sizeof cell), bu_cell(sc, ccell, sizeof ccell));
    bu_json("bench_migrate", "migrate instances", label, "instances/s", "instances/s", s);
    bu_json("bench_migrate", "migrate instances", label, "instances/CPU-s", "instances/s", sc);
    return 0;
}

int main(int argc, char **argv)
{
    char self[1024], wfbridge[1200], libs[2400], dir[512], xaml[700], cmd[1400];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(wfbridge, sizeof wfbridge, "%.1000s/../bin/wfbridge", dirname(self));
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(dir, sizeof dir, "%s/wfbench-migrate-%ld", bench_tmp_base(), (long)getpid());
    snprintf(libs, sizeof libs, "%.1000s/../samples/lib:%s", dirname(self), dir);
    bench b = {wfbridge, libs, dir, NULL, "", argc > 1 ? atol(argv[1]) : bu_count(5000, 200), 0};
    b.pg = getenv("WFBRIDGE_BENCH_PG") ? getenv("WFBRIDGE_BENCH_PG") : getenv("WFBRIDGE_TEST_PG");
    if (b.pg && !*b.pg)
        b.pg = NULL;
    snprintf(xaml, sizeof xaml, "%s/expense.xaml", dir);
    snprintf(b.map, sizeof b.map, SAMPLE "=%s", xaml);
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    char *conv[] = {wfbridge, "convert", SAMPLE, "-o", xaml, "--lib-path", libs, NULL};
    char store[600];
    snprintf(store, sizeof store, "%s/legacy.db", dir);
    if (system(cmd) != 0 || run(conv) != 0 || legacy_store(store, libs, b.n) != 0) {
        fprintf(stderr, "bench_migrate: setup failed (%s)\n", wfbridge);
        return 1;
    }
    printf("migrate-instances: %ld waiting instances of the expense sample\n", b.n);
    bu_md("### Moving running instances\n\n%ld legacy instances of the expense sample waiting in "
          "their first state (two events, a Delay pending), moved by `wfbridge "
          "migrate-instances` (batches of 256) into a fresh store; instances per second of the "
          "whole command, median (min–max) of %d runs, by the wall clock and per CPU-second "
          "of the command (user + system: what the shared machine's load does not change). "
          "PostgreSQL gets each batch in one round trip (libpq pipeline mode: the rows' inserts "
          "and one sync, one transaction).\n\n"
          "| target | durability | run | instances/s | instances/CPU-s |\n|---|---|---|---|---|\n",
          b.n, bu_reps(MAX_REPS));
    int rc = row(&b, "sqlite", "normal", true) || row(&b, "sqlite", "normal", false) ||
             row(&b, "sqlite", "full", false);
    if (!rc && b.pg)
        rc = row(&b, "postgresql", "normal", false) || row(&b, "postgresql", "full", false);
    else if (!rc)
        bu_md("\nPostgreSQL rows: skipped, neither WFBRIDGE_BENCH_PG nor WFBRIDGE_TEST_PG names a "
              "server.\n");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}

/* bench_util.h — what every bench/bench_*.c shares (header-only: scripts/bench.sh builds each
 * program from its one file): the clocks, repetitions summed up as median / min / max, the quick
 * mode (WFBENCH_QUICK=1: tiny counts, only proves the scenario runs) and the two outputs the
 * script assembles into the report: the program's Markdown section (the file in WFBENCH_MD) and
 * one JSON object per figure (appended to the file in WFBENCH_JSON). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <libgen.h> /* dirname */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Where temporary files go: $TMPDIR when set, else /tmp. */
static inline const char *bench_tmp_base(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

/* The native libraries' directory (bench.sh builds them into lib/ beside the program):
 * $WFBENCH_LIB_DIR when set, else the directory of argv0 plus /lib. */
static inline const char *bu_lib_dir(const char *argv0, char *buf, size_t size)
{
    const char *env_dir = getenv("WFBENCH_LIB_DIR");
    if (env_dir && *env_dir) {
        snprintf(buf, size, "%s", env_dir);
    } else {
        char self[1024];
        snprintf(self, sizeof self, "%s", argv0);
        snprintf(buf, size, "%.1000s/lib", dirname(self));
    }
    return buf;
}

static inline double bu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of the whole process (every thread): steadier than the wall clock on a busy box. */
static inline double bu_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline bool bu_quick(void)
{
    const char *q = getenv("WFBENCH_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

/* Repetitions: full runs take `full`, quick runs 1 (after one warm-up either way). */
static inline int bu_reps(int full)
{
    return bu_quick() ? 1 : full;
}

/* A count scaled down in quick mode (never below 1). */
static inline long bu_count(long full, long quick)
{
    long n = bu_quick() ? quick : full;
    return n < 1 ? 1 : n;
}

typedef struct bu_stat {
    double med, min, max;
    int n;
} bu_stat;

static int bu__cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min and max of v[0..n) (sorts v). */
static inline bu_stat bu_summary(double *v, int n)
{
    bu_stat s = {0, 0, 0, n};
    if (n <= 0)
        return s;
    qsort(v, (size_t)n, sizeof *v, bu__cmp);
    s.min = v[0];
    s.max = v[n - 1];
    s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return s;
}

static inline bu_stat bu_one(double v)
{
    bu_stat s = {v, v, v, 1};
    return s;
}

/* A number for a table cell: 3 significant digits, with K or M from 10,000 up (the JSON
 * file keeps every figure exact). */
static inline const char *bu_num(double v, char *buf, size_t size)
{
    double a = v < 0 ? -v : v;
    if (v != v)
        snprintf(buf, size, "-");
    else if (a >= 1e6)
        snprintf(buf, size, "%.3gM", v / 1e6);
    else if (a >= 1e4)
        snprintf(buf, size, "%.3gK", v / 1e3);
    else if (a >= 100)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, a < 1 ? "%.3g" : a < 10 ? "%.2f" : "%.1f", v);
    return buf;
}

/* "median (min–max)" for a table cell; one figure alone when there was one repetition. */
static inline const char *bu_cell(bu_stat s, char *buf, size_t size)
{
    char a[32], b[32], c[32];
    if (s.n <= 1 || s.min == s.max)
        snprintf(buf, size, "%.15s", bu_num(s.med, a, sizeof a));
    else
        snprintf(buf, size, "%.15s (%.15s–%.15s)", bu_num(s.med, a, sizeof a), bu_num(s.min, b, sizeof b),
                 bu_num(s.max, c, sizeof c));
    return buf;
}

/* Appends to the Markdown section (nothing when WFBENCH_MD is unset). */
static inline void bu_md(const char *fmt, ...)
{
    static FILE *md;
    static bool tried;
    if (!tried) {
        const char *path = getenv("WFBENCH_MD");
        md = path && *path ? fopen(path, "a") : NULL;
        tried = true;
    }
    if (!md)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(md, fmt, ap);
    va_end(ap);
    fflush(md);
}

static inline void bu__json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

/* One figure of the JSON file: table, row, column, unit and the repetitions' summary. */
static inline void bu_json(const char *program, const char *table, const char *row,
                           const char *col, const char *unit, bu_stat s)
{
    static FILE *js;
    static bool tried;
    if (!tried) {
        const char *path = getenv("WFBENCH_JSON");
        js = path && *path ? fopen(path, "a") : NULL;
        tried = true;
    }
    if (!js)
        return;
    fputs("{\"program\": ", js);
    bu__json_str(js, program);
    fputs(", \"table\": ", js);
    bu__json_str(js, table);
    fputs(", \"row\": ", js);
    bu__json_str(js, row);
    fputs(", \"column\": ", js);
    bu__json_str(js, col);
    fputs(", \"unit\": ", js);
    bu__json_str(js, unit);
    fprintf(js, ", \"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"repetitions\": %d, \"quick\": %s}\n",
            s.med, s.min, s.max, s.n, bu_quick() ? "true" : "false");
    fflush(js);
}

#endif

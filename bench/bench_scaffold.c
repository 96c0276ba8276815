/* bench_scaffold.c — a whole project's first migration step: N real-shaped .xoml files (the
 * tests/converter/realworld corpus, each file copied into groups whose assemblies and classes
 * get the group's suffix, as a project with many workflows per assembly) scaffolded into one
 * directory and converted against it, in one process and on one core, as `wfbridge convert
 * DIR -o OUT --scaffold S` does. Reports CPU time per file for the scaffold, the conversion
 * and both, and the outcome counts. Target: 500 files in under 2 s. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bridge/wfb_interop.h"
#include "../common/wf_mem.h"
#include "../common/wf_native.h"
#include "../converter/wfc_convert.h"
#include "../converter/wfc_report.h"
#include "../converter/wfc_scaffold.h"
#include "bench_util.h"

#define CORPUS "tests/converter/realworld"

typedef struct tmpl {
    char name[256];
    char *xoml, *rules; /* rules NULL when none */
} tmpl;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    if (text)
        text[n] = '\0';
    fclose(f);
    return text;
}

/* The valid files of the corpus (broken/ and the nested-states file left out). */
static size_t load_templates(tmpl *out, size_t cap)
{
    DIR *d = opendir(CORPUS);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < cap) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".xoml") != 0 ||
            strstr(e->d_name, "nested_states"))
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", CORPUS, e->d_name);
        snprintf(out[n].name, sizeof out[n].name, "%.*s", (int)(len - 5), e->d_name);
        out[n].xoml = slurp(path);
        snprintf(path, sizeof path, "%s/%.*s.rules", CORPUS, (int)(len - 5), e->d_name);
        out[n].rules = slurp(path);
        n += out[n].xoml != NULL;
    }
    if (d)
        closedir(d);
    return n;
}

/* Copy text, appending `suffix` to every Assembly=NAME and to the x:Class's last part. */
static char *variant(const char *text, const char *suffix)
{
    size_t cap = strlen(text) * 2 + 256;
    char *out = malloc(cap), *o = out;
    if (!out)
        return NULL;
    for (const char *p = text; *p;) {
        bool asm_name = strncmp(p, "Assembly=", 9) == 0;
        bool cls = strncmp(p, "x:Class=\"", 9) == 0;
        if (!asm_name && !cls) {
            *o++ = *p++;
            continue;
        }
        memcpy(o, p, 9);
        o += 9;
        p += 9;
        size_t n = strcspn(p, asm_name ? ",\"" : "\"");
        bool system = asm_name && (strncmp(p, "mscorlib", 8) == 0 || strncmp(p, "System", 6) == 0);
        memcpy(o, p, n);
        o += n;
        p += n;
        if (!system)
            o += sprintf(o, "%s", suffix);
    }
    *o = '\0';
    return out;
}

static bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* The project: count files in dir, group g = i / templates. Their paths into paths. */
static size_t make_project(const char *dir, tmpl *t, size_t nt, size_t count, char **paths)
{
    size_t made = 0;
    for (size_t i = 0; i < count; i++) {
        const tmpl *tp = &t[i % nt];
        char suffix[32], path[1200];
        snprintf(suffix, sizeof suffix, "G%zu", i / nt);
        snprintf(path, sizeof path, "%s/%s_%zu.xoml", dir, tp->name, i);
        char *x = variant(tp->xoml, suffix);
        if (!x || !write_file(path, x)) {
            free(x);
            continue;
        }
        free(x);
        if (tp->rules) {
            char rpath[1220];
            snprintf(rpath, sizeof rpath, "%s/%s_%zu.rules", dir, tp->name, i);
            char *r = variant(tp->rules, suffix);
            if (r)
                write_file(rpath, r);
            free(r);
        }
        paths[made++] = strdup(path);
    }
    return made;
}

typedef struct result {
    double scaffold_s, convert_s, wall_s; /* CPU, CPU, and the wall clock of both */
    size_t counts[3];
    wfc_scaffold_result sc;
} result;

static bool run_once(char **paths, size_t n, const char *s_dir, result *r)
{
    memset(r, 0, sizeof *r);
    wf_error err = WF_ERROR_INIT;
    wfc_scaffold *s = NULL;
    double w0 = bu_now(), t0 = bu_cpu();
    bool ok = wfc_scaffold_create(NULL, s_dir, &s, &err) == WF_OK;
    for (size_t i = 0; ok && i < n; i++)
        ok = wfc_scaffold_scan(s, paths[i], NULL, &err) == WF_OK;
    ok = ok && wfc_scaffold_write(s, &r->sc, &err) == WF_OK;
    double t1 = bu_cpu();
    wf_libpath *lp = NULL;
    ok = ok && wf_libpath_create(s_dir, &lp, &err) == WF_OK;
    wfc_report *rep = NULL;
    ok = ok && wfc_report_create(&rep, &err) == WF_OK;
    for (size_t i = 0; ok && i < n; i++) {
        wfc_file *f = wfc_report_add_file(rep, paths[i]);
        wfc_opts o = WFC_OPTS_INIT;
        o.libpath = lp;
        o.register_interop = wfb_interop_register;
        char *xaml = NULL;
        size_t len = 0;
        wfc_sidecars side = WFC_SIDECARS_INIT;
        wf_error e = WF_ERROR_INIT;
        if (wfc_convert_file_side(&o, paths[i], f, &xaml, &len, &side, &e) != WF_OK)
            wfc_file_set_status(f, WFC_FAILED);
        r->counts[wfc_file_status(f)]++;
        wf_free(xaml);
        wfc_sidecars_free(&side);
    }
    r->convert_s = bu_cpu() - t1;
    r->wall_s = bu_now() - w0;
    r->scaffold_s = t1 - t0;
    if (!ok)
        fprintf(stderr, "bench_scaffold: %s:%u:%u: %s\n", err.file, err.line, err.col,
                err.message);
    wfc_report_destroy(rep);
    wf_libpath_destroy(lp);
    wfc_scaffold_destroy(s);
    return ok;
}

int main(void)
{
    tmpl t[64];
    size_t nt = load_templates(t, 64);
    if (nt == 0) {
        fprintf(stderr, "bench_scaffold: no corpus in %s (run from the repository root)\n", CORPUS);
        return 1;
    }
    size_t count = (size_t)bu_count(500, 60);
    char base[600], cmd[700];
    snprintf(base, sizeof base, "%s/wfb-scaffold-XXXXXX", bench_tmp_base());
    if (!mkdtemp(base))
        return 1;
    char **paths = calloc(count, sizeof *paths);
    size_t n = paths ? make_project(base, t, nt, count, paths) : 0;
    int reps = bu_reps(3);
    double per_file[16], scaffold[16], convert[16], wall[16];
    result r;
    bool ok = n == count;
    for (int i = 0; ok && i < reps; i++) {
        char s_dir[700];
        snprintf(s_dir, sizeof s_dir, "%s/S%d", base, i); /* a fresh scaffold each time */
        ok = run_once(paths, n, s_dir, &r);
        per_file[i] = (r.scaffold_s + r.convert_s) / (double)n * 1e6;
        scaffold[i] = r.scaffold_s / (double)n * 1e6;
        convert[i] = r.convert_s / (double)n * 1e6;
        wall[i] = r.wall_s / (double)n * 1e6;
    }
    if (ok) {
        bu_stat all = bu_summary(per_file, reps), sc = bu_summary(scaffold, reps),
                cv = bu_summary(convert, reps), wl = bu_summary(wall, reps);
        char a[64], b[64], c[64], d[64];
        printf("%zu files (%zu templates): converted %zu, partial %zu, failed %zu; scaffold: "
               "%zu declarations, %zu functions to write, %zu guessed types\n",
               n, nt, r.counts[0], r.counts[1], r.counts[2], r.sc.declarations, r.sc.functions,
               r.sc.guessed);
        printf("CPU per file: scaffold %s us, convert %s us, both %s us; %zu files in %.2f s "
               "CPU, %.2f s wall (each written file is fsynced)\n",
               bu_cell(sc, a, sizeof a), bu_cell(cv, b, sizeof b), bu_cell(all, c, sizeof c), n,
               all.med * (double)n / 1e6, wl.med * (double)n / 1e6);
        bu_md("## Migrating a project: scaffold + convert (CPU µs per file, one core)\n\n"
              "%zu real-shaped files from tests/converter/realworld (%zu templates in groups "
              "that each have their own assemblies), scaffolded into one directory and "
              "converted against it in one process: converted %zu, partial %zu, failed %zu; "
              "%zu declarations, %zu functions to write, %zu guessed types.\n\n"
              "| step | per file | %zu files |\n|---|---|---|\n",
              n, nt, r.counts[0], r.counts[1], r.counts[2], r.sc.declarations, r.sc.functions,
              r.sc.guessed, n);
        bu_md("| scaffold | %s | %.2f s |\n", bu_cell(sc, a, sizeof a), sc.med * (double)n / 1e6);
        bu_md("| convert | %s | %.2f s |\n", bu_cell(cv, b, sizeof b), cv.med * (double)n / 1e6);
        bu_md("| both | %s | %.2f s (target < 2 s) |\n", bu_cell(all, c, sizeof c),
              all.med * (double)n / 1e6);
        bu_md("| both, wall clock (every scaffold file written atomically, fsynced) | %s | "
              "%.2f s |\n\n", bu_cell(wl, d, sizeof d), wl.med * (double)n / 1e6);
        bu_json("bench_scaffold", "scaffold", "scaffold", "per file", "us", sc);
        bu_json("bench_scaffold", "scaffold", "convert", "per file", "us", cv);
        bu_json("bench_scaffold", "scaffold", "both", "per file", "us", all);
        bu_json("bench_scaffold", "scaffold", "both, wall", "per file", "us", wl);
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    for (size_t i = 0; i < nt; i++) {
        free(t[i].xoml);
        free(t[i].rules);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_scaffold: could not remove %s\n", base);
    return ok ? 0 : 1;
}

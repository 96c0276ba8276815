/* test_readme.c — README.md as a new user reads it: the "Converting and verifying" commands
 * run as written from a fresh clone (after make), a shell block never calls a bare
 * `wfbridge`, which is not on the PATH before `make install`, and scripts/install-deps.sh
 * installs only what is missing, the PostgreSQL server and clang only when asked. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../../common/wf_mem.h"
#include "../wf_test_util.h"

/* Replace every `from` in text by `to` (wf_free the result). */
static char *replace_all(const char *text, const char *from, const char *to)
{
    wf_buf b;
    wf_buf_init(&b);
    for (const char *p = text; *p;) {
        const char *hit = strstr(p, from);
        size_t len = hit ? (size_t)(hit - p) : strlen(p);
        wf_buf_add(&b, p, len);
        if (!hit)
            break;
        wf_buf_adds(&b, to);
        p = hit + strlen(from);
    }
    return wf_buf_detach(&b, NULL);
}

/* The text of the first ```sh block after `heading` (wf_free it). */
static char *sh_block_after(const char *readme, const char *heading)
{
    const char *h = strstr(readme, heading);
    ck_assert_ptr_nonnull(h);
    const char *start = strstr(h, "```sh\n");
    ck_assert_ptr_nonnull(start);
    start += 6;
    const char *end = strstr(start, "```");
    ck_assert_ptr_nonnull(end);
    return wf_strndup(start, (size_t)(end - start));
}

START_TEST(test_converting_and_verifying_runs_as_written)
{
    char *readme = wf_test_read_file("README.md", NULL);
    ck_assert_ptr_nonnull(readme);
    char *block = sh_block_after(readme, "### Converting and verifying");
    const char *tmp = wf_test_tmpdir();
    char out[600], build[600];
    snprintf(out, sizeof out, " %s/out", tmp);
    snprintf(build, sizeof build, "=%s/", wf_test_build_dir());
    char *a = replace_all(block, " out", out); /* -o out/, out/report.json, out/... */
    snprintf(out, sizeof out, "=%s/out:", tmp);
    char *b = replace_all(a, "=out:", out); /* --lib-path out:$L */
    char *script = replace_all(b, "=build/", build);
    char path[700];
    snprintf(path, sizeof path, "%s/readme.sh", tmp);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "set -e\nexec >%s/log 2>&1\n%s", tmp, script);
    fclose(f);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "sh %s", path);
    int rc = system(cmd);
    snprintf(path, sizeof path, "%s/log", tmp);
    char *log = wf_test_read_file(path, NULL);
    ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "README block failed:\n%s\n---\n%s",
                  script, log ? log : "");
    wf_free(log);
    wf_free(script);
    wf_free(b);
    wf_free(a);
    wf_free(block);
    wf_free(readme);
    wf_test_tmpdir_remove(tmp);
}
END_TEST

START_TEST(test_no_shell_block_calls_a_bare_wfbridge)
{
    char *readme = wf_test_read_file("README.md", NULL);
    ck_assert_ptr_nonnull(readme);
    bool in_sh = false;
    unsigned line = 0;
    for (const char *p = readme; *p; line++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (strncmp(p, "```", 3) == 0)
            in_sh = !in_sh && strncmp(p, "```sh", 5) == 0;
        else
            ck_assert_msg(!in_sh || strncmp(p, "wfbridge ", 9) != 0,
                          "README.md:%u: 'wfbridge' is not on the PATH: %.*s", line + 1,
                          (int)len, p);
        p += len + (nl ? 1 : 0);
    }
    ck_assert_ptr_nonnull(strstr(readme, "WFBRIDGE_TEST_PG"));
    wf_free(readme);
}
END_TEST

/* scripts/install-deps.sh on a machine that lacks libffi-dev, the PostgreSQL server and clang:
 * only the library is missing for `make test`; the server and clang only when asked. */
START_TEST(test_install_deps_lists_only_what_is_needed)
{
    const char *tmp = wf_test_tmpdir();
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/bin && printf '#!/bin/sh\\ncase \"$3\" in libffi-dev|postgresql|clang) "
             "exit 1;; esac\\nprintf \"install ok installed\"\\n' >%s/bin/dpkg-query && "
             "printf '#!/bin/sh\\necho 1000\\n' >%s/bin/id && chmod +x %s/bin/*",
             tmp, tmp, tmp, tmp);
    ck_assert_int_eq(system(cmd), 0);
    const char *opts[] = {"", "--server", "--fuzz"};
    const char *want[] = {"missing packages: libffi-dev\n",
                          "missing packages: libffi-dev postgresql\n",
                          "missing packages: libffi-dev clang\n"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "PATH=%s/bin:$PATH sh scripts/install-deps.sh %s >%s/out 2>&1",
                 tmp, opts[i], tmp);
        int rc = system(cmd);
        ck_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
        snprintf(cmd, sizeof cmd, "%s/out", tmp);
        char *out = wf_test_read_file(cmd, NULL);
        ck_assert_msg(out && strstr(out, want[i]), "%s: %s", opts[i], out ? out : "");
        wf_free(out);
    }
    wf_test_tmpdir_remove(tmp);
}
END_TEST

Suite *readme_suite(void)
{
    Suite *s = suite_create("readme");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 180);
    tcase_add_test(core, test_converting_and_verifying_runs_as_written);
    tcase_add_test(core, test_no_shell_block_calls_a_bare_wfbridge);
    tcase_add_test(core, test_install_deps_lists_only_what_is_needed);
    suite_add_tcase(s, core);
    return s;
}

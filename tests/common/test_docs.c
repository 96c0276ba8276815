/* test_docs.c — the repository's own reference docs stay consistent: docs/semantics.md's
 * "Sources" list gives every number once, and every [Sn] cited in the document names an
 * entry of that list. */
#include <check.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../wf_test_util.h"

enum { MAX_SOURCE = 200 };

/* The counts of "- S<n> " list entries (lines starting so) by number. */
static void count_sources(const char *text, unsigned counts[MAX_SOURCE])
{
    memset(counts, 0, MAX_SOURCE * sizeof counts[0]);
    for (const char *line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "- S", 3) != 0 || !isdigit((unsigned char)line[3]))
            continue;
        char *end = NULL;
        unsigned long n = strtoul(line + 3, &end, 10);
        if (*end == ' ' && n < MAX_SOURCE)
            counts[n]++;
    }
}

START_TEST(test_docs_semantics_sources_are_numbered_once)
{
    char *text = wf_test_read_file("docs/semantics.md", NULL);
    ck_assert_ptr_nonnull(text);
    unsigned counts[MAX_SOURCE];
    count_sources(text, counts);
    unsigned listed = 0;
    for (unsigned n = 0; n < MAX_SOURCE; n++) {
        ck_assert_msg(counts[n] <= 1, "docs/semantics.md lists S%u %u times", n, counts[n]);
        listed += counts[n];
    }
    ck_assert_uint_gt(listed, 20);
    free(text);
}
END_TEST

START_TEST(test_docs_semantics_citations_name_listed_sources)
{
    char *text = wf_test_read_file("docs/semantics.md", NULL);
    ck_assert_ptr_nonnull(text);
    unsigned counts[MAX_SOURCE];
    count_sources(text, counts);
    size_t cited = 0;
    /* Citations: "[S20]", "[S20, S30]" (the S numbers of one bracket, comma separated). */
    for (const char *p = strstr(text, "[S"); p; p = strstr(p + 1, "[S")) {
        const char *q = p + 1;
        while (*q == 'S' && isdigit((unsigned char)q[1])) {
            char *end = NULL;
            unsigned long n = strtoul(q + 1, &end, 10);
            ck_assert_msg(n < MAX_SOURCE && counts[n] == 1, "[S%lu] is not a listed source", n);
            cited++;
            q = end;
            if (q[0] == ',' && q[1] == ' ')
                q += 2;
        }
    }
    ck_assert_uint_gt(cited, 20);
    free(text);
}
END_TEST

Suite *common_docs_suite(void)
{
    Suite *s = suite_create("common_docs");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_docs_semantics_sources_are_numbered_once);
    tcase_add_test(core, test_docs_semantics_citations_name_listed_sources);
    suite_add_tcase(s, core);
    return s;
}

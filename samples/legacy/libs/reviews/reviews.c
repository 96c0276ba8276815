/* reviews.c — the document-review sample's native library: one reviewer's review of a
 * document, and the handlers that hand each replicated child its reviewer and collect the
 * verdicts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_text(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d)
        strcpy(d, s);
    return d;
}

/* The legal team asks for changes to anything that mentions a contract. */
void reviews_review(const char *document, const char *reviewer, char **verdict);
void reviews_review(const char *document, const char *reviewer, char **verdict)
{
    int changes = reviewer && strstr(reviewer, "legal") && document && strstr(document, "contract");
    *verdict = dup_text(changes ? "changes-requested" : "approved");
}

void reviews_assign(const char *instance_data, char **reviewer);
void reviews_assign(const char *instance_data, char **reviewer)
{
    *reviewer = dup_text(instance_data ? instance_data : "");
}

void reviews_record(const char *reviewer, const char *verdict, char **summary,
                    int32_t *approvals);
void reviews_record(const char *reviewer, const char *verdict, char **summary,
                    int32_t *approvals)
{
    const char *old = *summary ? *summary : "";
    size_t n = strlen(old) + strlen(reviewer ? reviewer : "") + strlen(verdict ? verdict : "") + 4;
    char *s = malloc(n);
    if (!s)
        return;
    snprintf(s, n, "%s%s=%s;", old, reviewer ? reviewer : "", verdict ? verdict : "");
    free(*summary);
    *summary = s;
    if (verdict && strcmp(verdict, "approved") == 0)
        *approvals = (int32_t)((uint32_t)*approvals + 1u); /* wraps, as C#'s unchecked int does */
}

void reviews_publish(char **status);
void reviews_publish(char **status)
{
    *status = dup_text("published");
}

void reviews_return(char **status);
void reviews_return(char **status)
{
    *status = dup_text("returned to author");
}

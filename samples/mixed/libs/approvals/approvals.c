/* approvals.c — code-beside of the AwaitExpenseApproval composite (approvals.activities.xml):
 * plain C handlers that record the outcome of an expense approval as text (strings out are
 * malloc'd here and freed by the runtime). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void approvals_record_approval(const char *approver, char **decision);
void approvals_record_rejection(const char *approver, const char *comment, char **decision);
void approvals_escalate(char **decision);
void approvals_withdraw(char **decision);

static char *dup_text(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d)
        strcpy(d, s);
    return d;
}

void approvals_record_approval(const char *approver, char **decision)
{
    char buf[200];
    snprintf(buf, sizeof buf, "approved by %s", approver ? approver : "?");
    *decision = dup_text(buf);
}

void approvals_record_rejection(const char *approver, const char *comment, char **decision)
{
    char buf[300];
    snprintf(buf, sizeof buf, "rejected by %s: %s", approver ? approver : "?",
             comment ? comment : "");
    *decision = dup_text(buf);
}

void approvals_escalate(char **decision)
{
    *decision = dup_text("escalated: no answer within a day");
}

void approvals_withdraw(char **decision)
{
    *decision = dup_text("withdrawn");
}

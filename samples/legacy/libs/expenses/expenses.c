/* expenses.c — the expense-approval sample's native library: the local service the workflow
 * calls to ask for an approval, and the code-beside handlers that record each decision. */
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

/* IExpenseService.RequestApproval: returns a ticket number. amount in 1/10,000 units. */
int32_t expenses_request(const char *employee, int64_t amount);
int32_t expenses_request(const char *employee, int64_t amount)
{
    (void)employee;
    return (int32_t)(1000 + amount / 10000 % 1000);
}

void expenses_record_approval(const char *approver, char **decision);
void expenses_record_approval(const char *approver, char **decision)
{
    char buf[200];
    snprintf(buf, sizeof buf, "approved by %s", approver ? approver : "?");
    *decision = dup_text(buf);
}

void expenses_record_rejection(const char *approver, const char *comment, char **decision);
void expenses_record_rejection(const char *approver, const char *comment, char **decision)
{
    char buf[300];
    snprintf(buf, sizeof buf, "rejected by %s: %s", approver ? approver : "?",
             comment ? comment : "");
    *decision = dup_text(buf);
}

void expenses_escalate(int32_t *escalations, char **decision);
void expenses_escalate(int32_t *escalations, char **decision)
{
    *escalations = (int32_t)((uint32_t)*escalations + 1u); /* wraps, as C#'s unchecked int does */
    *decision = dup_text("escalated: no answer in time");
}

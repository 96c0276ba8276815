/* wfb_migrate_report.h — the reports of `wfbridge migrate-instances` (wfb_migrate_report.c). */
#ifndef WFB_MIGRATE_REPORT_H
#define WFB_MIGRATE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "wfb_migrate_int.h"

typedef struct mig_report_opts {
    bool dry_run, rollback;
} mig_report_opts;

/* Instances per verdict (indexed by mig_verdict). */
void mig_count(const mig_plan *plans, size_t count, const mig_report_opts *o, size_t n[5]);
/* {"migrated", "interop", "skipped", "failed", "alreadyMigrated", "dryRun", "instances"} on
 * one line (with --rollback: {"rolledBack", "failed", "instances"}). */
void mig_report_json(FILE *out, const mig_plan *plans, size_t count, const mig_report_opts *o);
/* Markdown, or HTML when path ends in ".html"; -1 when it cannot be written. */
int mig_report_file(const char *path, const mig_plan *plans, size_t count,
                    const mig_report_opts *o);

#endif

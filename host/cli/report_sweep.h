/* report_sweep.h - the rows of `cxlsim sweep` (sweeprow.h) as CSV and JSON lines, and its summary:
 * points by status, then the best (docs/sweeps.md). */
#ifndef CXLSIM_REPORT_SWEEP_H
#define CXLSIM_REPORT_SWEEP_H

#include <stdio.h>

#include "util/err.h"
#include "explore/sweep.h"

/* Rows in point order to csv and jsonl (either may be NULL), written all or none (outfile.h). */
int report_sweep_write(const sweep_spec *sp, char **rows, const char *csv, const char *jsonl, cxl_err *e);
/* The summary: points by status, then the best by sweeprow_rank_column (shortest iteration, least
 * memory, lowest idle latency), ties in point order, whatever the number of workers. */
void report_sweep_summary(FILE *so, const sweep_spec *sp, char **rows);

#endif

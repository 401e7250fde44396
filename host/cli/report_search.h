/* report_search.h - the report of `cxlsim search` (search.h, docs/search.md): the text (counts per stage,
 * the exclusions by reason, the ranking with breakdowns, the rerun's table, a `timing:` line), the JSON
 * (provenance, `layouts`, `excluded`, `ranking` with each layout's `rerun`, `wall_seconds`) and the CSV
 * (one row per ranked layout). All but the timing line and wall_seconds depend on the inputs alone. */
#ifndef CXLSIM_REPORT_SEARCH_H
#define CXLSIM_REPORT_SEARCH_H

#include <stddef.h>
#include <stdio.h>

#include "cli/cli_run.h"
#include "explore/search.h"

/* jobs: worker processes (on each rank); ranks: the MPI ranks that ran layouts, 0 in a local run (both on
 * the timing line only). */
void report_search_text(FILE *so, const expcfg *x, const search_opts *o, const search_report *r, int jobs,
                        int ranks);
/* 0, or -1 when out of memory; cfg is the resolved experiment the provenance hashes. */
int report_search_json(json_w *w, const cli_ctx *cl, const char *cfg, size_t cfg_len, const expcfg *x,
                       const search_opts *o, const search_report *r);
/* The CSV text (malloc'd, *len bytes), or NULL when out of memory. */
char *report_search_csv(const search_opts *o, const search_report *r, size_t *len);

#endif

/* report_compare.h - the result of `cxlsim compare` (cmp_result, compare.h) as the text summary and the
 * JSON members after the provenance (docs/compare.md). */
#ifndef CXLSIM_REPORT_COMPARE_H
#define CXLSIM_REPORT_COMPARE_H

#include <stdio.h>

#include "devtools/compare.h"
#include "config/devcfg.h"
#include "out/json.h"

/* What the run was, beside its result. */
typedef struct compare_report {
    const devcfg *dev;
    const char *backend_a, *backend_b;
    const char *trace_path;       /* --trace, or NULL: random descriptors of seed */
    uint64_t seed, max_cycles;
    const char *fst_path;         /* --trace-fst, or NULL */
    const char *gtkw_path;        /* its GTKWave save file */
    int traced;                   /* the waveform was written, of cycles from_cycle..to_cycle */
    uint64_t from_cycle, to_cycle;
    double wall;                  /* seconds of the comparison run */
} compare_report;

void report_compare_text(FILE *so, const compare_report *c, const cmp_result *r);
/* The JSON members from "device" to "wall_seconds". */
void report_compare_json(json_w *w, const compare_report *c, const cmp_result *r);

#endif

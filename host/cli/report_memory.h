/* report_memory.h - memory per GPU (gpumem.h) and per tier (tiers.h) as `cxlsim memory`'s summary and
 * JSON; the JSON objects are shared with `cxlsim train`'s (report_train.h). */
#ifndef CXLSIM_REPORT_MEMORY_H
#define CXLSIM_REPORT_MEMORY_H

#include <stdio.h>

#include "config/expcfg.h"
#include "train/gpumem.h"
#include "out/json.h"
#include "train/tiers.h"

/* The summary; the tiers line only when tr is not NULL (computed) and the experiment has CXL memory. */
void report_memory_text(FILE *so, const expcfg *x, const gpumem *m, const tiers *tr);
/* The JSON members from "experiment" to "tiers_gib". */
void report_memory_json(json_w *w, const expcfg *x, const gpumem *m, const tiers *tr);
/* "memory_per_gpu_gib": {weights, gradients, optimizer, activations, total[, stage]} */
void report_gpumem_json(json_w *w, const gpumem *m, int with_stage);
/* "tiers_gib": {hbm_per_gpu, cxl_per_gpu, cxl_per_domain, cxl_capacity_per_domain} */
void report_tiers_json(json_w *w, const tiers *t);

#endif

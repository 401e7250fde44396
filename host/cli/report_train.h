/* report_train.h - the result of `cxlsim train` (train_result, train.h) as the text summary and as the
 * JSON members after the provenance (README "Commands", docs/training.md). */
#ifndef CXLSIM_REPORT_TRAIN_H
#define CXLSIM_REPORT_TRAIN_H

#include <stdio.h>

#include "config/expcfg.h"
#include "out/json.h"
#include "train/train.h"

/* The summary on so; warnings (measured kernels above the peak, MFU over 100 %) on standard error.
 * times_path: the --op-times file, or NULL; wall: the run's wall seconds. */
void report_train_text(FILE *so, const expcfg *x, const train_result *r, const char *times_path, int exact,
                       double wall);
/* The JSON members of the run, from "experiment" to "wall_seconds". */
void report_train_json(json_w *w, const expcfg *x, const train_result *r, int exact, double wall);

#endif

/* stats_report.h - numbers derived from model statistics: histogram percentiles and deltas. */
#ifndef CXLSIM_STATS_REPORT_H
#define CXLSIM_STATS_REPORT_H

#include <stdint.h>

#include "../hw/hls/cxl_types.h"

/* The smallest latency L (cycles) such that at least q (0..1] of the samples are <= L. Samples in the
 * power-of-two tail bins report the bin's upper edge, capped at the recorded maximum. 0 when empty. */
uint64_t hist_percentile(const cxl_hist *h, double q);
double hist_mean(const cxl_hist *h);
/* d = a - b, bin by bin (a is later than b; max is a's). */
void hist_delta(cxl_hist *d, const cxl_hist *a, const cxl_hist *b);

#endif

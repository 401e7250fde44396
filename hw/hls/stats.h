/* stats.h - statistics the model keeps: latency histograms and counters (cxl_stats in cxl_types.h).
 * Percentiles are computed from the histogram by the host (host/cxl/stats_report.c). */
#ifndef CXL_STATS_H
#define CXL_STATS_H

#include "cxl_types.h"

void hist_add(cxl_hist *h, uint64_t cycles);

#endif

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

/* What the model did over a window (between two snapshots), in user units. Links: the host-side links
 * (M2S = host to device); device figures summed over devices. A figure with no samples in the window is
 * NaN (printed n/a, JSON null): the latencies of a kind of access that did not occur, the link and slot
 * utilisations on a path without a link (slot: of a direction that sent no flit), the row-hit rate when
 * no column command was issued. */
typedef struct window_stats {
    double seconds;
    double read_gbps, write_gbps;
    double read_lat_ns[4], write_lat_ns[4];   /* mean, p50, p99, max */
    uint64_t reads, writes;                   /* completed at the requesters */
    uint64_t flits[2], data_flits[2];         /* [0] M2S, [1] S2M */
    double link_utilisation[2];               /* flits started / the most that can start in the window, < 1 */
    double slot_utilisation[2];               /* non-empty slots / slots of the flits sent */
    uint64_t credit_stalls[CXL_NCLASS];       /* Req, RwD, DRS, NDR */
    double row_hit_rate;
    uint64_t row_conflicts, refreshes;
    double ingress_mean, dram_queue_mean;     /* entries, mean over cycles (summed over devices) */
    uint64_t ingress_max;
    double devload[4];                        /* fraction of S2M messages with DevLoad light..severe */
    uint64_t switch_stalls;
} window_stats;

/* a: later snapshot, b: earlier; work buffers come from the caller (histograms are large). */
void window_stats_compute(window_stats *w, const cxl_stats *a, const cxl_stats *b, const cxl_params *p,
                          cxl_hist *scratch);

#endif

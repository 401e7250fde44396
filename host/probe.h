/* probe.h - `cxlsim probe`: what load-to-use latency and what bandwidth a CXL memory device gives.
 *
 * Measurements (each a fresh model instance, so they do not disturb each other):
 *  - idle latency: one requester, dependent random 64 B reads (one outstanding) over a 1 GiB
 *    footprint (row misses), mean load-to-use latency; the same on the local-DDR reference path.
 *  - bandwidth at read:write mixes 100:0, 2:1, 1:1, 0:100: every requester streams sequential lines
 *    through its own region with all tags outstanding (Intel MLC style); achieved GB/s over a window
 *    after a warm-up.
 *  - loaded-latency curve: every requester issues random 64 B accesses of the curve's mix at a fixed
 *    interval; offered load swept from 10 % to 125 % of the mix's saturation bandwidth; achieved
 *    bandwidth, mean and p99 read latency per point.
 * GB/s are 10^9 bytes per second of payload completed at the requesters.
 */
#ifndef CXLSIM_PROBE_H
#define CXLSIM_PROBE_H

#include <stdint.h>

#include "devcfg.h"
#include "backend.h"
#include "err.h"
#include "stats_report.h"

#define PROBE_MAX_POINTS 32

typedef struct probe_opts {
    const char *backend;       /* "csim" */
    uint32_t idle_samples;     /* dependent reads for the idle latency */
    double warmup_us, window_us;
    uint32_t curve_points;
    uint32_t curve_rd, curve_wr; /* mix of the loaded-latency curve */
    uint32_t seed;
    cxl_backend_opts bo;       /* the backend's options; bo.trace_fst (verilator): FST waveform of the
                                  device's idle-latency run only */
    void (*progress)(void *ctx, double fraction); /* after each measurement (NULL: none); the fraction of
                                                     the measurements done */
    void *progress_ctx;
} probe_opts;

/* A measured value is NaN (n/a) when the window saw nothing to measure: achieved_gbps when no byte
 * completed, the latencies when no access of the curve's kind (reads; writes for a 0:W mix) did. */
typedef struct probe_point {
    double offered_gbps, achieved_gbps, mean_latency_ns, p99_latency_ns;
    uint64_t completions;  /* accesses of the curve's kind completed in the window */
} probe_point;

typedef struct probe_result {
    double idle_read_latency_ns, local_idle_read_latency_ns;
    double bw_gbps[4];          /* read_only, rw_2_1, rw_1_1, write_only */
    window_stats bw_stats[4];   /* what the model did during each bandwidth window */
    uint32_t npoints;
    probe_point curve[PROBE_MAX_POINTS];
    uint64_t simulated_cycles;
} probe_result;

void probe_default_opts(probe_opts *o);
/* One idle-latency measurement on a device (also used on the local path). */
int probe_idle_latency(const devcfg *dev, const probe_opts *o, double *ns, uint64_t *cycles, cxl_err *err);
/* Bandwidth of a mix with all requesters streaming (pattern: CXL_PAT_SEQ or CXL_PAT_RANDOM). */
int probe_bandwidth(const devcfg *dev, const probe_opts *o, uint32_t rd, uint32_t wr, uint32_t pattern,
                    double *gbps, uint64_t *cycles, window_stats *ws, cxl_err *err);
/* Everything: dev is the device, ref the local-DDR reference path. */
int probe_run(const devcfg *dev, const devcfg *ref, const probe_opts *o, probe_result *r, cxl_err *err);

#endif

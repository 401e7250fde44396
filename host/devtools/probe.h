/* probe.h - `cxlsim probe`: what load-to-use latency and what bandwidth a CXL memory device gives.
 *
 * Measurements (each a fresh model instance, so they do not disturb each other):
 *  - idle latency: one requester, dependent random 64 B reads (one outstanding) over a 1 GiB
 *    footprint (row misses), mean load-to-use latency; the same on the local-DDR reference path.
 *  - bandwidth per read:write mix (default 100:0, 2:1, 1:1, 0:100): every requester streams sequential
 *    lines through its own 64 MiB buffer with all tags outstanding, as Intel MLC's bandwidth runs do
 *    (one buffer per thread): the buffers start at staggered, non-aligned lines (a seeded offset per
 *    requester), so the streams do not walk the banks in lock step; achieved GB/s over a window after
 *    a warm-up. Beside it the single-stream figure: one requester alone, reads.
 *  - loaded-latency curve per mix: every requester issues random 64 B accesses at a set rate; offered
 *    load swept from 10 % to 125 % of the mix's random-access saturation bandwidth; achieved bandwidth,
 *    mean and p99 latency per point. Arrivals (probe_arrivals): fixed intervals with the requesters'
 *    phases staggered evenly over one interval (default), Poisson (exponential intervals from a seeded
 *    generator, fed one line per descriptor), or all requesters in phase (the old bursts of one request
 *    per requester, for comparison).
 * GB/s are 10^9 bytes per second of payload completed at the requesters. Everything is a function of
 * the device, the options and the seed: the traffic is generated here, on the host, identically for every
 * backend.
 */
#ifndef CXLSIM_PROBE_H
#define CXLSIM_PROBE_H

#include <stdint.h>

#include "config/devcfg.h"
#include "cxl/backend.h"
#include "util/err.h"
#include "cxl/stats_report.h"

#define PROBE_MAX_POINTS 32
#define PROBE_MAX_MIXES 16

enum probe_arrivals {
    PROBE_ARRIVALS_STAGGERED = 0, /* every requester at a fixed interval, phases r x interval / requesters */
    PROBE_ARRIVALS_POISSON = 1,   /* exponential intervals, seeded, per requester */
    PROBE_ARRIVALS_ALIGNED = 2    /* every requester at a fixed interval, all in phase (bursts) */
};

typedef struct probe_opts {
    const char *backend;       /* "csim" */
    uint32_t idle_samples;     /* dependent reads for the idle latency */
    double warmup_us, window_us;
    uint32_t curve_points;
    uint32_t curve_rd, curve_wr; /* mix of the loaded-latency curve (when nmixes is 0) */
    uint32_t nmixes;           /* 0: bandwidth at 100:0, 2:1, 1:1, 0:100 and one curve at curve_rd:curve_wr;
                                  else bandwidth and a curve for each of mix[0..nmixes) */
    uint32_t mix[PROBE_MAX_MIXES][2]; /* read, write weights (each 0-255, not both 0) */
    uint32_t arrivals;         /* enum probe_arrivals, of the loaded-latency curves */
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

typedef struct probe_curve {
    uint32_t rd, wr;          /* the mix */
    double saturation_gbps;   /* random-access bandwidth of the mix, all requesters: 100 % of offered load */
    uint32_t npoints;
    probe_point pt[PROBE_MAX_POINTS];
} probe_curve;

typedef struct probe_result {
    double idle_read_latency_ns, local_idle_read_latency_ns;
    double single_stream_gbps;  /* one requester streaming reads alone */
    window_stats single_stream_stats;
    uint32_t nbw;               /* bandwidth mixes measured: 4 by default (read_only, rw_2_1, rw_1_1,
                                   write_only), else opts.nmixes */
    uint32_t bw_mix[PROBE_MAX_MIXES][2];
    double bw_gbps[PROBE_MAX_MIXES];
    window_stats bw_stats[PROBE_MAX_MIXES]; /* what the model did during each bandwidth window */
    uint32_t ncurves;
    probe_curve curves[PROBE_MAX_MIXES];
    uint64_t simulated_cycles;
} probe_result;

void probe_default_opts(probe_opts *o);
/* Parse "R:W[,R:W...]" (each 0-255, not both 0; at most PROBE_MAX_MIXES) into o->mix. -1 when malformed. */
int probe_parse_mixes(probe_opts *o, const char *s);
/* One idle-latency measurement on a device (also used on the local path). */
int probe_idle_latency(const devcfg *dev, const probe_opts *o, double *ns, uint64_t *cycles, cxl_err *err);
/* Bandwidth of a mix with `streams` requesters streaming (0: all of them; pattern: CXL_PAT_SEQ, MLC-style
 * buffers as above, or CXL_PAT_RANDOM). ws may be NULL. */
int probe_bandwidth(const devcfg *dev, const probe_opts *o, uint32_t rd, uint32_t wr, uint32_t pattern,
                    uint32_t streams, double *gbps, uint64_t *cycles, window_stats *ws, cxl_err *err);
/* Everything: dev is the device, ref the local-DDR reference path. */
int probe_run(const devcfg *dev, const devcfg *ref, const probe_opts *o, probe_result *r, cxl_err *err);

#endif

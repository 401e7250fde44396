/* cxlmem.h - training memory traffic inside the cycle-level CXL models (issue 4): CXL domains driven
 * through the backend interface, transfers turned into descriptors, the conservative synchronisation
 * with the training engine, and the acceleration that keeps it fast.
 *
 * A domain is one instance of a device description (devcfg: host ports, links, an optional switch,
 * devices, DRAM) behind one backend (csim, analytical, verilator, xrt). A transfer moves `bytes` between
 * one host port of a domain and its memory with a read:write mix, optionally capped in rate (a GPU's
 * PCIe link). It is cut into chunk descriptors of CXLMEM_CHUNK bytes (sequential addresses in a region of
 * its own), fed round-robin to the port's requesters (requester r belongs to port r mod hosts, as the
 * model maps them) as their queues have room, so concurrent transfers on a port share it fairly and
 * meet every other port's traffic in the switch, the links and the DRAM banks. A transfer completes
 * with its last chunk: that completion cycle, converted to picoseconds, is when the engine sees it.
 *
 * Synchronisation (conservative, exact). The engine only starts transfers at its own events, so a
 * domain's future depends on nothing the engine has not yet decided before the engine's next event.
 * cxlmem_next(horizon) therefore runs every domain up to the engine's next event time (the lookahead)
 * and stops early at the first transfer completion, which the engine processes before anything later.
 * Time: cycle c is at floor(c x 10^9 / clk_khz) ps; a transfer started at t ps may begin at cycle
 * ceil(t x clk_khz / 10^9).
 *
 * Acceleration (off with exact). Between two changes of a domain's set of active transfers (a start or
 * a completion), the model settles into a steady state. After each change the domain is simulated in
 * detail: a warm-up of CXLMEM_WARMUP cycles, then measurement windows of CXLMEM_WINDOW cycles, until two
 * consecutive windows give every transfer a rate within CXLMEM_TOLERANCE of each other. Then the domain
 * is extrapolated: each transfer advances at its measured rate (bytes per cycle) until the next change,
 * computed exactly from the rates (the first completion) or imposed by the engine (a new transfer). At a
 * change the backend is reopened fresh (its cycle counter offset to the global cycle) and the remaining
 * bytes are submitted again, so detail restarts from an empty pipeline, as it would after a lull. The
 * steady rates are memoised under the domain's set of active transfers (port, mix, rate cap of each,
 * in canonical order): the same set later (the next layer, the next iteration) skips the detailed
 * phase. A transfer that ends before its domain is steady completes in detail, exactly.
 *
 * All arithmetic deciding times is integer; rates are doubles computed from integer counts in a fixed
 * order, so results are deterministic. Errors: CXL_ECONFIG (bad transfer), CXL_EBACKEND (backend not
 * built or failed), CXL_ENOMEM, CXL_ELIMIT.
 */
#ifndef CXLSIM_CXLMEM_H
#define CXLSIM_CXLMEM_H

#include <stdint.h>

#include "../hw/hls/cxl_params.h"
#include "../hw/hls/cxl_types.h"
#include "cxl/backend.h"
#include "util/err.h"

#define CXLMEM_CHUNK 4096u          /* bytes per chunk descriptor */
#define CXLMEM_REFILL 8192u         /* cycles between two refills of the requesters' queues */
#define CXLMEM_WARMUP 65536u        /* cycles of detail after a change before measuring */
#define CXLMEM_WINDOW 65536u        /* cycles of the first measurement window (then doubling) */
#define CXLMEM_WINDOW_MAX 1048576u  /* the longest measurement window */
#define CXLMEM_GAP_LINES 256u       /* a window spans at least this many issue gaps of a rate-capped transfer */
#define CXLMEM_TOLERANCE 0.01       /* two consecutive windows agree within 1 % per transfer */

typedef struct cxlmem cxlmem;

typedef struct cxlmem_stats {
    uint64_t detailed_cycles;       /* cycles simulated cycle by cycle, all domains */
    uint64_t extrapolated_cycles;   /* cycles covered by steady-state extrapolation */
    uint64_t memo_hits;             /* changes whose steady state came from the memo */
    uint64_t transfers;
} cxlmem_stats;

/* Per-domain figures for reports. Bandwidth over the domain's busy time; latency and DevLoad from the
 * detailed cycles only (extrapolated cycles have no per-request samples). */
typedef struct cxlmem_domain_report {
    double read_bytes, write_bytes; /* all transfers, detailed and extrapolated */
    int64_t busy_ps;                /* time with at least one active transfer */
    double read_lat_ns[4];          /* mean, p50, p99, max over detailed reads */
    double devload[4];              /* fraction of S2M messages with DevLoad light..severe (detailed) */
    uint64_t detailed_cycles, extrapolated_cycles;
    /* per device of the domain, from the detailed cycles: DRAM column commands and DevLoad mix */
    uint32_t devices;
    double dev_share[CXL_MAX_DEVS];       /* fraction of the domain's reads and writes this device served */
    double dev_devload[CXL_MAX_DEVS][4];
} cxlmem_domain_report;

/* ndomains instances of one device, all on the named backend. exact: no acceleration. */
int cxlmem_new(const char *backend, const cxl_backend_opts *bo, const cxl_params *p, uint32_t ndomains, int exact,
               cxlmem **out, cxl_err *err);
void cxlmem_free(cxlmem *m);

/* Start a transfer at now_ps (>= every time passed before) in `domain` from host port `host`: bytes
 * (rounded up to 64), read:write weights (e.g. 1:0 read, 0:1 write, 8:7 mixed), cap_Bps the rate limit
 * in bytes per second (0: none). `tag` comes back with its completion. */
int cxlmem_start(cxlmem *m, int64_t now_ps, uint32_t domain, uint32_t host, uint64_t bytes, uint8_t rd,
                 uint8_t wr, double cap_Bps, uint32_t tag, cxl_err *err);
/* Run every domain up to horizon_ps (exclusive) and stop at the first completion before it: returns 1
 * with its time and tag, or 0 when the horizon is reached with none (or nothing is active). Completions at
 * the same time come out one call at a time, in a deterministic order. */
int cxlmem_next(cxlmem *m, int64_t horizon_ps, int64_t *t_ps, uint32_t *tag, cxl_err *err);
/* The domain and host port of the completion cxlmem_next delivered last. */
uint32_t cxlmem_last_domain(const cxlmem *m);
uint32_t cxlmem_last_host(const cxlmem *m);
/* 1 when some transfer is active. */
int cxlmem_busy(const cxlmem *m);

void cxlmem_get_stats(const cxlmem *m, cxlmem_stats *out);
int cxlmem_report(cxlmem *m, uint32_t domain, cxlmem_domain_report *out, cxl_err *err);
uint32_t cxlmem_domains(const cxlmem *m);
/* Bytes read and written in domain d so far (extrapolated stretches counted when they end, at a change
 * of the domain's transfers). O(1); for the trace's bandwidth counters. */
void cxlmem_domain_bytes(const cxlmem *m, uint32_t d, double *read_bytes, double *write_bytes);

/* Load of domain d so far, for the trace's DevLoad and queue-depth counters: S2M messages produced with
 * each DevLoad value (light, optimal, moderate, severe: the field the devices put in every DRS and NDR,
 * from their ingress queue occupancy) and the sums over cycles of the devices' ingress (Req + RwD) and
 * DRAM (read + write) queue occupancy, all devices of the domain together, over `cycles` busy cycles.
 * Detailed cycles count what the backend's statistics report; an extrapolated stretch counts the
 * steady state's figures per cycle (measured over the two windows that found it, or remembered with
 * the memoised rates) times its length, when it ends. O(1); the backend's statistics are read where
 * the detailed simulation already reads them, so keeping these costs nothing measurable. */
typedef struct cxlmem_load_sums {
    double devload_msgs[4];
    double ingress_occ, dram_queue_occ;
    double cycles;
} cxlmem_load_sums;
void cxlmem_load(const cxlmem *m, uint32_t d, cxlmem_load_sums *out);

#endif

/* compare.h - run one descriptor trace on two backends and find the first event where they differ.
 *
 * Both backends are opened on the same cxl_params and driven identically through host/cxl/backend.h only,
 * so any two backends compare (csim against verilator is the point: the RTL must reproduce the C model
 * cycle for cycle, docs/cxl-model.md). The drive loop, the same on both:
 *
 *   1. Submit: each requester takes its next descriptors, in trace order, as far as cxl_backend_space
 *      allows; one batch, the same on A and B. If the two backends would take a different number, that
 *      is a difference (field "descriptor queue space").
 *   2. Advance A with stop_on_completion to a horizon (the current cycle + step_cycles, bounded by
 *      max_cycles), then B to the cycle where A stopped (so B never simulates past A's first event: a
 *      hung or slow B costs no more than A's progress). Poll both.
 *   3. Compare: now() on both, then the completions, each side's sorted by (end_cycle, requester, id),
 *      field by field (start_cycle, end_cycle, requester, lines); stop at the first difference.
 *   4. When every descriptor has completed (or max_cycles is reached), compare the statistics
 *      (cxl_backend_stats) field by field in struct order.
 *
 * Advance boundaries do not change a backend's results (docs/cxl-model.md 2.4), and space only grows
 * when a descriptor completes, so the submissions happen at the same cycles whatever the horizon: the
 * run is a function of the trace alone. Cost: one advance and one poll per backend per cycle in which
 * something completes, one submit per such cycle with room; no per-cycle calls.
 *
 * Locating a difference: statistics are read only at the end, so when they differ there, or before
 * reporting a completion difference at cycle c, compare replays the run from cycle 0 on fresh instances
 * and compares the statistics at 64 evenly spaced cycles up to that point, then within the first interval
 * where they differ, and so on down to a single cycle: the first cycle whose counters differ (a flit, a
 * DRAM command, a latency) is the first diverging event, usually well before the completion it delays.
 * Cost: about log64(c) extra runs up to c, only when the backends differ.
 *
 * Errors (a backend not built or failing, out of memory) return a negative CXL_E* code with err filled;
 * a difference is not an error: cmp_run returns 0 with result->equal == 0. Nothing prints.
 */
#ifndef CXLSIM_COMPARE_H
#define CXLSIM_COMPARE_H

#include <stdint.h>

#include "../hw/hls/cxl_types.h"
#include "cxl/backend.h"
#include "util/err.h"
#include "cxl/trace.h"

typedef struct cmp_opts {
    const char *backend_a, *backend_b;
    uint64_t max_cycles;   /* stop at this cycle even if descriptors remain (0: no limit) */
    uint64_t step_cycles;  /* the longest single advance (0: 2^32 cycles) */
    int locate;            /* replay to find the first cycle whose statistics differ (default 1) */
    const cxl_backend_opts *bo; /* backend options (NULL: none); each backend takes the ones it has */
    void (*progress)(void *ctx, double fraction); /* during the comparison run (NULL: none): the fraction of
                                                     the descriptors completed on both sides */
    void *progress_ctx;
} cmp_opts;

/* One diverging event. Values are text: a number, or what the backend did instead ("not completed by
 * cycle 1234", "absent"). */
typedef struct cmp_diff {
    uint64_t cycle;        /* the model cycle in which it happened */
    char unit[48];         /* "requester 3", "link 1", "device 0", "switch", "requesters", "model" */
    char field[112];       /* "completion id 17 end_cycle", "stats link[1].flits[s2m]", "now", ... */
    char a[96], b[96];     /* the value on backend A and on backend B */
} cmp_diff;

typedef struct cmp_result {
    int equal;             /* 1: no difference found */
    int truncated;         /* max_cycles reached before every descriptor completed */
    uint64_t descriptors;  /* in the trace */
    uint64_t submitted;    /* descriptors submitted (to both) */
    uint64_t completions;  /* completions identical on both */
    uint64_t cycles;       /* the cycle both had reached at the end, or at the difference */
    uint64_t advances;     /* advance calls on A (B: no more) in the comparison run */
    uint32_t replays;      /* extra runs made to locate the first difference */
    cmp_diff diff;         /* !equal: the first diverging event */
    int located;           /* !equal: 1 when diff was found by the statistics search and differs from seen */
    cmp_diff seen;         /* !equal && located: the difference the comparison run stopped at */
} cmp_result;

void cmp_default_opts(cmp_opts *o);
/* Run trace t on o->backend_a and o->backend_b, both opened with p. */
int cmp_run(const cxl_params *p, const trace *t, const cmp_opts *o, cmp_result *r, cxl_err *err);

/* The waveform of a window (`cxlsim compare --trace-fst FILE [--cycles A:B]`): run t again on o's two
 * backends, with the first of them that is verilator running its kernel build's traced twin and
 * recording model cycles from..to into an FST file, written beside `path` and renamed onto it at the
 * end (a failed run leaves nothing). The run stops at `to` (or o->max_cycles), or at the first
 * difference the comparison sees, which is at or after the diverging event that locate() finds:
 * *reached is the last cycle it ran. CXL_EUSAGE when neither backend can trace (cxl_backend_can_trace),
 * CXL_EIO when the file cannot be written, or a backend's error. */
int cmp_waveform(const cxl_params *p, const trace *t, const cmp_opts *o, const char *path, uint64_t from,
                 uint64_t to, uint64_t *reached, cxl_err *err);

#endif

/* coll.h - collective operations decomposed into link messages: NCCL's ring all-reduce (2.19, Simple
 * protocol), its closed-form time, and NCCL's bandwidth figures. Pure functions: no engine, no
 * allocation, no global state.
 *
 * Units: sizes in bytes, bandwidth in bytes per second (_Bps), time in integer picoseconds (_ps).
 * Errors: functions return 0 (or a non-negative time) on success and a negative CXL_E* code on bad input,
 * filling `err` (may be NULL) with a message that names the value and what would be valid:
 * CXL_ECONFIG for parameters out of range, CXL_ELIMIT when an output array is too small or a time would
 * not fit in int64_t picoseconds. Nothing prints.
 *
 * Sources: docs/references.md "Validation targets" ("Collective level"); NCCL 2.19
 * src/collectives/device/all_reduce.h (runRing) and src/include/collectives.h (ALLREDUCE_CHUNKSTEPS,
 * ALLREDUCE_SLICESTEPS). The model is described in docs/collectives.md. */
#ifndef CXLSIM_COLL_H
#define CXLSIM_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* NCCL 2.19 constants (Simple protocol). */
#define COLL_NCCL_STEPS 8u                                       /* buffer slots per connection */
#define COLL_SIMPLE_BUFF_BYTES (4u << 20)                        /* NCCL_BUFFSIZE default, 4 MiB */
#define COLL_STEP_BYTES (COLL_SIMPLE_BUFF_BYTES / COLL_NCCL_STEPS) /* 512 KiB */
#define COLL_ALLREDUCE_CHUNKSTEPS (COLL_NCCL_STEPS / 2)          /* 4 steps per chunk */
#define COLL_ALLREDUCE_SLICESTEPS (COLL_NCCL_STEPS / 4)          /* 2 steps per slice */
#define COLL_ALLREDUCE_CHUNK_BYTES (COLL_STEP_BYTES * COLL_ALLREDUCE_CHUNKSTEPS) /* 2 MiB */
#define COLL_WARP_SIZE 32u
#define COLL_SIMPLE_NTHREADS 512u /* default threads per channel for Simple (NCCL_SIMPLE_MAX_NTHREADS) */
#define COLL_MAX_NTHREADS 640u    /* NCCL_MAX_NTHREADS */
#define COLL_MAX_CHANNELS 32u     /* MAXCHANNELS in NCCL 2.19 */

/* ---- closed form ---- */

/* Ring all-reduce of `bytes` on n ranks over links of link_bw_Bps and latency_ps with no contention:
 *   t = 2(n-1) a + 2(n-1)/n * S/B
 * in picoseconds, the bandwidth term rounded up (a transfer ends when its last byte has arrived), computed
 * exactly in integers. n = 1 or bytes = 0 give 0. Errors: n < 1, link_bw_Bps 0 (CXL_ECONFIG); result
 * beyond INT64_MAX (CXL_ELIMIT). */
int64_t coll_ring_allreduce_closed_form_ps(uint32_t n, uint64_t bytes, uint64_t link_bw_Bps, uint64_t latency_ps,
                                           cxl_err *err);

/* ---- NCCL ring decomposition ---- */

typedef struct coll_ring_params {
    uint32_t n_ranks;    /* ranks on the ring, >= 1 */
    uint32_t n_channels; /* channels (rings run in parallel), 1..COLL_MAX_CHANNELS */
    uint32_t nthreads;   /* threads per channel, a multiple of 32 in 64..COLL_MAX_NTHREADS */
} coll_ring_params;

/* n_ranks, n_channels, nthreads = COLL_SIMPLE_NTHREADS. */
void coll_ring_params_default(coll_ring_params *p, uint32_t n_ranks, uint32_t n_channels);

typedef enum coll_phase {
    COLL_REDUCE_SCATTER = 0, /* send + (n-2) recvReduceSend: n-1 steps */
    COLL_ALL_GATHER = 1      /* recvReduceCopySend + (n-2) recvCopySend: n-1 steps */
} coll_phase;

/* One message a rank sends to its ring successor on one channel. */
typedef struct coll_step {
    uint32_t loop;    /* outer loop index (each loop covers n_channels x n_ranks x 2 MiB of the buffer) */
    uint32_t channel; /* 0..n_channels-1 */
    coll_phase phase;
    uint32_t step;  /* 0..n_ranks-2 within the phase */
    uint64_t bytes; /* the loop's realChunkSize */
} coll_step;

/* Steps coll_ring_plan produces: loops x n_channels x 2(n_ranks-1), loops = ceil(bytes / loop bytes).
 * Errors as coll_ring_plan (not the output size); CXL_ELIMIT when the count does not fit in size_t. */
int coll_ring_plan_len(const coll_ring_params *p, uint64_t bytes, size_t *n_out, cxl_err *err);

/* The ordered messages of one rank's all-reduce of `bytes` (every rank sends the same sizes): loop by
 * loop; within a loop channel by channel; within a channel the n-1 reduce-scatter steps then the n-1
 * all-gather steps. Each message carries
 *   realChunkSize = roundUp(min(2 MiB, ceil(remaining / (n_channels x n_ranks))), (nthreads - 32) x 8)
 * bytes, remaining being the bytes not covered by earlier loops. One rank (n_ranks = 1) or bytes = 0 give
 * no steps. *n_out is set to the number of steps needed even when max is too small (CXL_ELIMIT), so
 * callers can size the array; out may be NULL when max is 0. O(steps). */
int coll_ring_plan(const coll_ring_params *p, uint64_t bytes, coll_step *out, size_t max, size_t *n_out,
                   cxl_err *err);

/* Totals of NCCL's ring for `passes` passes over the ring (2: all-reduce; 1: reduce-scatter or
 * all-gather, whose loops and chunks follow the same rule with n-1 steps per loop and channel), without
 * building the plan: *bytes_per_rank = what one rank sends over all channels (the plan's total),
 * *steps_per_channel = messages each channel sends one after another (loops x passes x (n-1)). For
 * passes 2 these equal coll_plan_total_bytes of coll_ring_plan and its per-channel step count. Errors as
 * coll_ring_plan_len; passes must be 1 or 2. O(loops). */
int coll_ring_totals(const coll_ring_params *p, uint32_t passes, uint64_t bytes, uint64_t *bytes_per_rank,
                     uint64_t *steps_per_channel, cxl_err *err);

/* Bytes each channel sends: per_channel[c] for c < n_channels is zeroed then summed. CXL_ECONFIG when a
 * step names a channel >= n_channels or n_channels is out of range. */
int coll_plan_channel_bytes(const coll_step *steps, size_t n_steps, uint32_t n_channels, uint64_t *per_channel,
                            cxl_err *err);
/* Bytes one rank sends over all channels (the sum of every step). */
uint64_t coll_plan_total_bytes(const coll_step *steps, size_t n_steps);

/* Time of a plan on a ring with no contention: channels run in parallel, each on 1/n_channels of the
 * link's bandwidth; a channel's steps run back to back, each costing
 *   latency_ps + ceil(bytes x n_channels / link_bw_Bps)   (in ps);
 * the all-reduce ends with its slowest channel. For one channel and messages much larger than a loop it
 * approaches the closed form, above it by the chunk rounding ((nthreads-32) x 8 B on 2 MiB, 0.16 % at 512
 * threads) and the latency of every step beyond the closed form's 2(n-1); it is never below the closed
 * form. Errors: n_channels out of range, link_bw_Bps 0, a step on a channel >= n_channels (CXL_ECONFIG);
 * overflow (CXL_ELIMIT). O(n_steps). */
int64_t coll_ring_time_ps(const coll_step *steps, size_t n_steps, uint32_t n_channels, uint64_t link_bw_Bps,
                          uint64_t latency_ps, cxl_err *err);

/* ---- NCCL's bandwidth figures (nccl-tests, doc/PERFORMANCE.md) ---- */

/* Algorithm bandwidth S / t, in bytes per second. CXL_ECONFIG when time_ps <= 0. */
int coll_algbw_Bps(uint64_t bytes, int64_t time_ps, double *out, cxl_err *err);
/* All-reduce bus bandwidth: algbw x 2(n-1)/n. CXL_ECONFIG when time_ps <= 0 or n < 1. */
int coll_allreduce_busbw_Bps(uint32_t n, uint64_t bytes, int64_t time_ps, double *out, cxl_err *err);

#endif

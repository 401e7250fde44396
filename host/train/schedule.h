/* schedule.h - pipeline-parallel schedules: the ordered forward and backward passes one pipeline rank runs
 * in one training iteration, in exactly Megatron-LM's order, and the layers each model chunk holds. Pure
 * functions: no engine, no allocation, no global state.
 *
 * Three schedules, chosen as Megatron-LM's get_forward_backward_func chooses them
 * (megatron/core/pipeline_parallel/schedules.py):
 *   pp = 1                  forward_backward_no_pipelining: F0 B0 F1 B1 ... (chunk 0);
 *   pp > 1, virtual = 1     forward_backward_pipelining_without_interleaving, 1F1B / PipeDream-Flush
 *                           (Narayanan et al. 2021, arXiv 2104.04473 Sec. 2.2);
 *   pp > 1, virtual > 1     forward_backward_pipelining_with_interleaving (same paper, Sec. 2.2.2).
 * The rules are spelt out at schedule_build and in docs/schedules.md.
 *
 * Terms: pp pipeline ranks; m micro-batches per iteration; v virtual stages (model chunks per rank). Model
 * chunk c of rank r is virtual stage c x pp + r of the pp x v stages the model is cut into, so a
 * micro-batch's forward visits rank 0..pp-1 with chunk 0, then again with chunk 1, and so on.
 *
 * Errors: functions return 0 on success and a negative CXL_E* code on bad input, filling `err` (may be
 * NULL) with a message that names the values and what would be valid: CXL_ECONFIG for parameters out of
 * range, CXL_ELIMIT when an output array is too small or a count would not fit in size_t. Nothing prints.
 */
#ifndef CXLSIM_SCHEDULE_H
#define CXLSIM_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* What a backward item computes. Megatron's schedules run the whole backward (SCHEDULE_BW); the
 * zero-bubble schedules (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, arXiv 2401.10241,
 * Sec. 2) split it into B, the input gradient the previous stage waits for, and W, the weight gradient
 * nobody waits for, run later from the activations B left in place. */
enum schedule_part { SCHEDULE_BW = 0, SCHEDULE_B = 1, SCHEDULE_W = 2 };

/* One pass of one micro-batch through one model chunk of the rank. */
typedef struct schedule_item {
    uint32_t microbatch; /* 0..m-1 */
    uint32_t chunk;      /* model chunk of this rank, 0..v-1 (virtual stage chunk x pp + rank) */
    uint8_t backward;    /* 0: forward pass, 1: backward pass (B, W or both: part) */
    uint8_t part;        /* backward: enum schedule_part; 0 for a forward */
} schedule_item;

/* The schedule a configuration asks for (training.pipeline_schedule). */
enum schedule_kind {
    SCHEDULE_AUTO = 0,        /* Megatron-LM's choice by pp and v: no pipelining, 1F1B or interleaved */
    SCHEDULE_1F1B = 1,        /* 1F1B; v must be 1 */
    SCHEDULE_INTERLEAVED = 2, /* interleaved 1F1B; v > 1 */
    SCHEDULE_ZB_H1 = 3,       /* zero bubble ZB-H1 (schedule_zb_h1); pp > 1, v = 1 */
    SCHEDULE_DUALPIPEV = 4    /* DualPipeV (schedule_dualpipev); pp > 1, v = 2 in a V, m >= 2 pp */
};

/* The virtual stage (position in the pipeline, 0..pp v - 1) of model chunk `chunk` of rank `rank`: chunk x
 * pp + rank, except in DualPipeV's V, where chunk 0 of rank r is stage r and chunk 1 is stage 2 pp - 1 - r
 * (so rank 0 holds the first and the last stage, and rank pp - 1 passes its chunk 0's output to its own
 * chunk 1). O(1). */
static inline uint32_t schedule_stage_of(int kind, uint32_t pp, uint32_t rank, uint32_t chunk)
{
    if (kind == SCHEDULE_DUALPIPEV && chunk == 1)
        return 2 * pp - 1 - rank;
    return chunk * pp + rank;
}

/* The rank and model chunk that hold virtual stage `stage` (< pp v): schedule_stage_of's inverse. O(1). */
static inline void schedule_stage_owner(int kind, uint32_t pp, uint32_t stage, uint32_t *rank, uint32_t *chunk)
{
    if (kind == SCHEDULE_DUALPIPEV && stage >= pp) {
        *rank = 2 * pp - 1 - stage;
        *chunk = 1;
        return;
    }
    *rank = stage % pp;
    *chunk = stage / pp;
}

/* Checks a schedule's parameters: pp >= 1, rank < pp, m >= 1, v >= 1; v > 1 needs pp > 1 and m a
 * multiple of pp (Megatron-LM raises "number of microbatches is not divisible by
 * pipeline-model-parallel-size when using interleaved schedule"). CXL_ECONFIG otherwise. */
int schedule_check(uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages, cxl_err *err);

/* Passes in one rank's schedule: 2 x m x v (each micro-batch through each chunk, forward and backward),
 * the same on every rank. SIZE_MAX when that does not fit in size_t. */
size_t schedule_len(uint32_t microbatches, uint32_t virtual_stages);

/* Warm-up forwards of the rank, the forwards it runs before its first backward less the one that opens
 * the steady phase (Megatron's num_warmup_microbatches):
 *   pp = 1:  0;
 *   v = 1:   min(pp - rank - 1, m);
 *   v > 1:   m x v when m = pp (all forwards first), else min(2(pp - rank - 1) + (v - 1) pp, m x v).
 * Parameters must pass schedule_check; the result is unspecified otherwise. O(1). */
uint64_t schedule_warmup(uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages);

/* The ordered passes rank `rank` of a pp-stage pipeline runs in one iteration of m micro-batches with v
 * model chunks per rank. With W = schedule_warmup(...) and T = m x v passes of each direction:
 *   warm-up:   forwards 0..W-1;
 *   steady:    for k = 0..T-W-1, forward W+k then backward k;
 *   cool-down: backwards T-W..T-1.
 * Forward k runs chunk (k mod pp v) / pp on micro-batch (k / (pp v)) pp + k mod pp; backward k runs
 * chunk v - 1 - (k mod pp v) / pp on the same micro-batch formula (Megatron's get_model_chunk_id, and the
 * FIFO order in which each chunk's saved activations are popped). For v = 1 this is forward k and
 * backward k on micro-batch k; for pp = 1, F0 B0 F1 B1 ....
 * Errors as schedule_check; CXL_ELIMIT when max < schedule_len(m, v) or that length does not fit in
 * size_t. *n_out is set to the length needed whenever the parameters are valid, also with CXL_ELIMIT, so
 * callers can size the array; out may be NULL when max is 0. O(output). */
int schedule_build(uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages, schedule_item *out,
                   size_t max, size_t *n_out, cxl_err *err);

/* Megatron-Core's combined 1F1B schedule (overlap_moe_expert_parallel_comm; megatron/core/pipeline_parallel/
 * schedules.py get_pp_rank_microbatches and combined_1f1b.py, Megatron-Core 0d8e071): the interleaved or the
 * no-pipelining order with one more warm-up forward, min(schedule_warmup + 1, m x v), "to ensure the forward
 * and backward computations are independent in all 1f1b steps": each steady pair, forward W+k then backward
 * k, is two micro-batches the engine runs layer by layer side by side (train_a2a.c). pp = 1: F0, then
 * F(k+1) B(k), then B(m-1) (combined_1f1b_schedule_for_no_pipelining). CXL_ECONFIG when pp > 1 and v < 2
 * (Megatron-Core asserts virtual stages), else as schedule_build. O(output). */
uint64_t schedule_warmup_combined(uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages);
int schedule_build_combined(uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages,
                            schedule_item *out, size_t max, size_t *n_out, cxl_err *err);

/* ZB-H1 (Qi et al., arXiv 2401.10241, Sec. 3.1 and Fig. 3 top; B and W as enum schedule_part): rank i of
 * pp = p stages runs, for x = 0 .. m + p - 2, the triple
 *     F of micro-batch x,  B of x - (p - 1 - i),  W of x - (p - 1)
 * each only when its micro-batch is in 0..m-1. So rank i starts like 1F1B (p - 1 - i forwards alone,
 * then i forwards each followed by a B), defers every W by i micro-batches behind its B, and ends with
 * i W's that fill what 1F1B leaves idle in its cool-down. Before its first B a rank has run p - i
 * forwards, as in 1F1B, and it never holds more than p micro-batches between their F and their W (the
 * paper's "same activation memory as 1F1B": p - i awaiting B, i awaiting only W). With uniform pass
 * times the iteration takes m (T_F + T_B + T_W) + (p - 1)(T_F + T_B - T_W) against 1F1B's
 * (m + p - 1)(T_F + T_B + T_W) (Sec. 3.1). 3 m items on every rank, chunk 0. CXL_ECONFIG unless pp >= 2,
 * rank < pp and m >= 1; CXL_ELIMIT (with *n_out set) when max < 3 m. O(output). */
int schedule_zb_h1(uint32_t pp, uint32_t rank, uint32_t microbatches, schedule_item *out, size_t max, size_t *n_out,
                   cxl_err *err);

/* DualPipeV (deepseek-ai/DualPipe, dualpipe/dualpipev.py, DualPipeV.step; the "cut-in-half" of DualPipe,
 * DeepSeek-V3 technical report, arXiv 2412.19437, Sec. 3.2.1): two model chunks per rank in a V
 * (schedule_stage_of), m >= 2 pp micro-batches. Rank r of p runs, with F0/F1 a forward of chunk 0/1, B a
 * whole backward, B' its input gradient alone (SCHEDULE_B) and W the weight gradient of the oldest B'
 * (a FIFO, as the code's WeightGradStore):
 *   1. 2 (p - r - 1) x F0            5. p - r - 1 x  B1 F1 B0
 *   2. r + 1 x  F0 F1                6. r + 1 x  B1 B0, the second half of these B's as B' (from B1 when r is
 *   3. p - r - 1 x  B1' W F1            odd, from B0 when even: r + 1 of them)
 *   4. m - 2p + r + 1 x  F0 B1 F1 B0  7. p - r - 1 x  W B0'       8. r + 1 x  W
 * Each chunk's forwards and backwards take its micro-batches in order. 4 m + 2 p - r - 1 items. The code
 * overlaps each F0 B1 and F1 B0 pair (overlapped_forward_backward); here they run one after the other.
 * At most 2 p + 1 chunk-passes are held between a forward and its weight gradient on every rank (the
 * DualPipe README's "PP + 1" of PP = 2 p stages). CXL_ECONFIG unless pp >= 2, rank < pp and
 * m >= 2 pp; CXL_ELIMIT (with *n_out set) when max is too small. O(output). */
int schedule_dualpipev(uint32_t pp, uint32_t rank, uint32_t microbatches, schedule_item *out, size_t max,
                       size_t *n_out, cxl_err *err);

/* The schedule of `kind` for rank `rank`: schedule_build for SCHEDULE_AUTO, SCHEDULE_1F1B and
 * SCHEDULE_INTERLEAVED (which name what schedule_build picks; CXL_ECONFIG when pp and v pick the other),
 * schedule_zb_h1 for SCHEDULE_ZB_H1 (v must be 1), schedule_dualpipev for SCHEDULE_DUALPIPEV (v must be 2).
 * Same contract as schedule_build. */
int schedule_build_kind(int kind, uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages,
                        schedule_item *out, size_t max, size_t *n_out, cxl_err *err);

/* Layers [*first, *first + *count) of model chunk `chunk` on rank `rank`: virtual stage s = chunk x pp +
 * rank holds layers/(pp v) consecutive layers starting at s x layers/(pp v) (Megatron-LM's layer offset,
 * megatron/model/transformer.py ParallelTransformer: vp_rank x L/v + pp_rank x L/(pp v)). CXL_ECONFIG
 * when pp or v is 0, rank >= pp, chunk >= v, or layers is 0 or not a multiple of pp x v. */
int schedule_chunk_layers(uint32_t pp, uint32_t virtual_stages, uint32_t layers, uint32_t rank, uint32_t chunk,
                          uint32_t *first, uint32_t *count, cxl_err *err);

#endif

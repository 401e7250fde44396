/* compute.h - how long one GPU takes for one operation (op.h): the efficiency-curve model. Measured
 * times (optimes.h) replace it op by op where a profile exists; this model prices everything else.
 *
 * GEMM (OP_GEMM: batch products of an m x k by a k x n matrix). The output is cut into tiles of
 * gemm_tile_m x gemm_tile_n; each SM computes one tile at a time, so the tiles run in waves of `sms`
 * (NVIDIA, "Matrix Multiplication Background User's Guide", sections "Tile Quantization" and "Wave
 * Quantization"):
 *     tiles  = batch x ceil(m / tile_m) x ceil(n / tile_n)
 *     waves  = ceil(tiles / sms)
 *     t_tile = 2 x tile_m x tile_n x k / (peak / sms x gemm_efficiency)
 *     t_math = waves x t_tile
 *     t_mem  = bytes / (hbm_bw x memory_efficiency)
 *     t      = max(t_math, t_mem) + gaps x kernel_overhead
 *     gaps   = launches, or for a GEMM whose `calls` kernels run over `streams` > 1 streams
 *              (launches - calls) + ceil(calls / streams)
 * (launches: op.h; 1 but for a grouped GEMM run as one GEMM per expert, whose per-expert products are
 * priced here as one grid: their tiles quantize per expert, their waves over all of them, as the
 * per-expert GEMMs overlap on Transformer Engine's several GEMM streams. The streams run side by side, so
 * the launch gaps in series are those of one stream's chain, ceil(calls / streams): Transformer Engine's
 * multi_stream_cublas_gemm puts expert i on stream i % 4. Each stream's gaps are still in series with its
 * own GEMMs, and all experts' tiles share the SMs, so the math is not hidden under the gaps: with equal
 * experts launched together the streams' gaps fall at the same times. A block-scaled GEMM's two swizzle
 * kernels run on the current stream before the fork: launches - calls gaps in series.)
 * A partial tile costs a whole tile and a partial wave a whole wave; t_mem is the memory side of the
 * roofline, so a GEMM with little reuse (skinny, small, or batched small products) falls to it.
 *
 * The tile (gemm_tile_select, default on): cuBLAS picks a threadblock tile per shape from a set, larger
 * tiles more efficient through more operand reuse, smaller ones giving more tiles to fill the SMs (Matrix
 * Multiplication Background User's Guide, "Typical Tile Dimensions in cuBLAS and Performance": 256 x 128
 * and 128 x 256 the most efficient, then 128 x 128, 256 x 64 and 64 x 256, 128 x 64 and 64 x 128, 64 x 64;
 * CUTLASS's Sm80 tensor-op tiles are the same). Each GEMM is priced with every tile of that set and with
 * gemm_tile_m x gemm_tile_n, and takes the least t_math (the configured tile on a tie). gemm_efficiency
 * holds for the configured tile; a tile with less reuse runs at
 *     r = min(1, reuse(tile) / reuse(gemm_tile_m x gemm_tile_n)),  reuse(tm x tn) = tm tn / (tm + tn)
 * of it (2 tm tn k FLOPs per 2 (tm + tn) k bytes of 16-bit operands loaded): the guide's ordering, with a
 * tile's throughput taken as proportional to its reuse, the bound for a tile fed at the same operand rate.
 * So a 256 x 128 tile replaces a half-empty 128 x 256 one at no loss (the attention's context product,
 * head dimension 128), and a GEMM of a few tiles runs on more SMs with smaller ones (64 x 64 at 3/8 the
 * rate). Split-K (several tiles over slices of k, reduced afterwards) is not modelled.
 * peak = tflops[dtype] x 10^12 FLOP/s; gemm_efficiency is fp8_gemm_efficiency for an fp8 GEMM and
 * mxfp8_gemm_efficiency for an MXFP8 one (op.h block_scaled) where the GPU gives them (FP8 GEMMs reach a
 * smaller fraction of their doubled peak, MXFP8's smaller still: configs/gpus/b200.yaml, h100-sxm.yaml).
 * With sms 0 (unknown) the waves are not quantized:
 * t_math = tiles x 2 x tile_m x tile_n x k / (peak x gemm_efficiency).
 *
 * Measured sweep (gpu.gemm_sweep, gpucfg.h; the GPU files cite each sweep). A published cuBLAS sweep gives
 * points (m, n, k, dtype) -> measured TFLOP/s. At each point p of the GEMM's dtype the factor
 *     r_p = (2 m n k / measured rate) / t_math(p)      (t_math of one product of p's shape, above)
 * is what the kernel took beyond the model's quantized math. For a GEMM whose one product has F = 2 m n k
 * FLOPs between two points lo <= F <= hi (the points sorted by FLOPs):
 *     r = r_lo + (log2 F - log2 F_lo) / (log2 F_hi - log2 F_lo) x (r_hi - r_lo),   t_math := r x t_math
 * so a GEMM of a measured shape runs at the measured rate exactly (on the HBM side of the roofline where
 * the model's memory time is longer), and between points the model's tile and wave quantization keeps the
 * shape and the sweep sets the level by size: the sweeps are mostly square shapes, and at their off-square
 * point (1024 x 2145 x 1024) the factor lies between its square neighbours'. An MXFP8 GEMM (op.h
 * block_scaled) reads the points of dtype mxfp8 (cuBLASLt's block-scaled kernels, timed apart from per-tensor
 * FP8's), at the fp8 peak and mxfp8_gemm_efficiency. The factor is 1 (the model alone) for F outside the
 * points' range, a dtype without points and a grouped GEMM whose calls run over several streams (its products
 * share the SMs, where the sweep timed one GEMM alone; on one stream they run one after another, each as the
 * sweep's).
 * The measured rates are of kernels launched back to back (no launch gap): kernel_overhead is added as for
 * every kernel. On fewer SMs (compute_fewer_sms) each point's rate scales with the peak, so r keeps its
 * value. O(points x tiles) per GEMM.
 *
 * Memory-bound kernel (OP_MEM):
 *     t = bytes / (hbm_bw x memory_efficiency) + kernel_overhead
 *
 * Fused (flash) attention kernel (OP_ATTN_FWD, OP_ATTN_BWD), FlashAttention-2's accounting (Dao, arXiv
 * 2307.08691, Sec. 4.1: forward 4 x s_q x s_k x d FLOPs per head, halved by a causal mask whose blocks
 * above the diagonal the kernel skips; backward 2.5 x the forward: five matrix products, one of them the
 * recomputation of the scores Q.K^T):
 *     t_math = flops / (peak x attention_{fwd,bwd}_efficiency)
 *     t      = max(t_math, t_mem) + kernel_overhead
 * The efficiencies are the kernels' published fractions of the peak (gpucfg.h; the GPU files cite them).
 * The efficiency is the "up to" figure of long sequences; at short ones the kernel's fixed costs
 * (fewer thread blocks, softmax rescaling) make it slower, which this model leaves out.
 *
 * All fields come from gpucfg (gpucfg.h); `bytes` comes from the op. Every time is whole picoseconds,
 * rounded up (a result within a few units in the last place above a whole number is that number:
 * floating-point noise is not a picosecond). Deterministic: the same double arithmetic in the same order
 * on every host. O(1), no allocation.
 *
 * Errors: the functions return a negative CXL_E* code (and fill `err` where there is one) for an op
 * whose dtype has no peak on this GPU (tflops 0; parallel_check rejects such a setup, so reaching here
 * is the caller's bug: CXL_ECONFIG), an attention kernel on a GPU without attention efficiency, an unknown kind or dtype (CXL_EINTERNAL), or a time beyond
 * INT64_MAX ps (CXL_ELIMIT).
 */
#ifndef CXLSIM_COMPUTE_H
#define CXLSIM_COMPUTE_H

#include <stdint.h>

#include "util/err.h"
#include "config/gpucfg.h"
#include "train/op.h"

/* The parts of one op's time, for reports and tests. */
typedef struct compute_cost {
    int64_t total_ps;     /* max(math_ps, memory_ps) + overhead_ps (OP_MEM: memory_ps + overhead_ps) */
    int64_t math_ps;      /* OP_GEMM: waves x t_tile; OP_ATTN_*: flops at the attention efficiency; OP_MEM: 0 */
    int64_t memory_ps;    /* bytes / (hbm_bw x memory_efficiency) */
    int64_t overhead_ps;  /* kernel_overhead x the op's launches (at least 1) */
    uint64_t tiles;       /* OP_GEMM: output tiles; OP_MEM: 0 */
    uint64_t waves;       /* OP_GEMM: ceil(tiles / sms), or tiles when sms is 0; OP_MEM: 0 */
    uint64_t tile_m, tile_n; /* OP_GEMM: the tile chosen (gemm_tile_select) or configured; others: 0 */
    int memory_bound;     /* 1 when memory_ps > math_ps */
    double sweep_ratio;   /* OP_GEMM: the factor the measured sweep puts on the model's math time (gpu.gemm_sweep;
                             1 where it does not apply); others: 1 */
    int culprit;          /* on an error: the GPU field (GPUCFG_F_*) that makes the time impossible, for its
                             location (hbm_bandwidth, the dtype's *_tflops, kernel_overhead); -1 otherwise */
} compute_cost;

/* The breakdown of op's time on g. Returns 0, or a negative code with err filled (err may be NULL). */
int compute_op_cost(const gpucfg *g, const op_desc *op, compute_cost *out, cxl_err *err);

/* The op's time in picoseconds (>= 0), or a negative CXL_E* code. */
int64_t compute_op_ps(const gpucfg *g, const op_desc *op);

/* Achieved FLOP/s over the dtype's dense peak, for reports: 2 x batch x m x n x k FLOPs for a GEMM (at
 * most the dtype's gemm efficiency where no sweep applies), op->flops for a memory-bound or attention kernel, over compute_op_ps; 0 when the dtype has no
 * peak or the time is 0. A negative CXL_E* code (as a double) when compute_op_ps fails. */
double compute_op_efficiency(const gpucfg *g, const op_desc *op);

/* g as the GPU of `sms` of its SMs (a kernel beside a collective or a userbuffers overlap that holds the
 * others): the same peak per SM, so every dtype's peak and every measured sweep point's rate (gemm_sweep)
 * scale by sms / g->sms. Nothing changes when g->sms is 0 or sms is not below it. */
void compute_fewer_sms(gpucfg *g, uint64_t sms);

#endif

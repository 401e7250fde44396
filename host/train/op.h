/* op.h - one GPU operation of a training iteration, as the workload (opgraph.h) describes it and the
 * compute models (compute.h: efficiency curves; optimes.h: measured times) price it.
 *
 * An op is either a matrix product (OP_GEMM: `batch` independent products of an m x k by a k x n
 * matrix, 2 x batch x m x n x k FLOPs), a memory-bound kernel (OP_MEM: elementwise, normalisation,
 * softmax, optimizer step: `bytes` of HBM traffic, `flops` of vector work), or a fused (flash) attention
 * kernel (OP_ATTN_FWD / OP_ATTN_BWD: batch = micro-batch x query heads, m queries, n keys, k head
 * dimension; `flops` the kernel's tensor-core work, the causal mask's skipped blocks taken out, `bytes` its
 * HBM traffic: Q, K, V, O (and their gradients) and the per-row logsumexp, never the m x n scores). Shapes are per GPU, after
 * tensor and sequence parallelism have split them. `name` is a stable identifier ("fc1.fwd",
 * "attn.score.bwd_data", "adam"): the measured-times file keys on name + shape + dtype, so a name never
 * changes meaning between versions. Descriptors are plain values; no allocation.
 */
#ifndef CXLSIM_OP_H
#define CXLSIM_OP_H

#include <stdint.h>

enum op_kind { OP_GEMM = 0, OP_MEM = 1, OP_ATTN_FWD = 2, OP_ATTN_BWD = 3 };

typedef struct op_desc {
    const char *name;       /* static string, stable across versions (see opgraph.c for the list) */
    int kind;               /* enum op_kind */
    int dtype;              /* enum gpucfg_dtype of the tensor-core work (OP_GEMM) or of the data (OP_MEM) */
    uint64_t batch, m, n, k;/* OP_GEMM: batch x (m x k) . (k x n); OP_MEM: batch = 1, m = elements, n = k = 1;
                               OP_ATTN_*: batch x heads, m queries, n keys, k head dimension */
    double flops;           /* OP_GEMM: 2 batch m n k; OP_MEM: vector FLOPs (informational); OP_ATTN_*: the
                               kernel's matrix FLOPs (compute.h prices them) */
    double bytes;           /* HBM bytes read + written (OP_GEMM: operands and result once each) */
    uint32_t launches;      /* kernels the op launches, each paying the launch gap (compute.h); 0 means 1.
                               A grouped GEMM launched as one GEMM per local expert (Transformer Engine's
                               GroupedLinear on Hopper) sets the number of experts */
    uint32_t block_scaled;  /* OP_GEMM in fp8: 1 when its operands are MXFP8 (a scale per 32 elements, applied by
                               the tensor cores), priced at the GPU's mxfp8_gemm_efficiency (compute.h); 0 otherwise */
    uint32_t calls;         /* OP_GEMM: the cuBLAS GEMM calls the framework makes for it, each priced on the
                               host timeline at training.host_gemm (1; a grouped GEMM: one per local expert);
                               0 for the other kinds */
    uint32_t streams;       /* OP_GEMM: the CUDA streams its `calls` GEMM kernels are spread over, round robin
                               (Transformer Engine's multi-stream grouped GEMM: min(4, local experts)); the
                               launch gaps of kernels on different streams overlap (compute.h). 0 or 1: one
                               stream, every gap in series */
} op_desc;

#endif

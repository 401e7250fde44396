/* gpucfg.h - one GPU type, as written in configs/gpus/: dense tensor-core peaks per data type, HBM
 * capacity and bandwidth, NVLink bandwidth per direction, and the parameters of the per-operation compute model
 * (compute.h): SM count, sustained fractions of the peaks, per-kernel overhead, GEMM output tile.
 * A peak of 0 means the data type is not supported. The compute-model fields are optional; their
 * defaults (gpucfg.c) keep older GPU files valid. gpucfg_load() takes a preset name or a file;
 * experiments reference GPUs through compose.h. */
#ifndef CXLSIM_GPUCFG_H
#define CXLSIM_GPUCFG_H

#include <stdint.h>

#include "config/compose.h"
#include "util/err.h"

/* Data types, in the order of gpucfg.tflops[] and of traincfg's `precision` choices. */
enum gpucfg_dtype { GPUCFG_BF16, GPUCFG_FP16, GPUCFG_FP8, GPUCFG_TF32, GPUCFG_FP32, GPUCFG_NDTYPES };
extern const char *const gpucfg_dtype_names[]; /* "bf16", "fp16", "fp8", "tf32", "fp32", NULL */

enum { GPUCFG_F_NAME, GPUCFG_F_DESCRIPTION, GPUCFG_F_TFLOPS0, GPUCFG_F_HBM = GPUCFG_F_TFLOPS0 + GPUCFG_NDTYPES,
       GPUCFG_F_HBM_BW, GPUCFG_F_NVLINK, GPUCFG_F_SMS, GPUCFG_F_GEMM_EFF, GPUCFG_F_MEM_EFF,
       GPUCFG_F_KERNEL_OVERHEAD, GPUCFG_F_TILE_M, GPUCFG_F_TILE_N, GPUCFG_F_ATTN_FWD_EFF, GPUCFG_F_ATTN_BWD_EFF,
       GPUCFG_F_MXFP8, GPUCFG_F_FP8_GEMM_EFF, GPUCFG_F_MXFP8_GEMM_EFF, GPUCFG_F_TILE_SELECT, GPUCFG_F_COLL_SMS, GPUCFG_F_GEMM_SWEEP, GPUCFG_F_NVLINK_RETIRED,
       GPUCFG_NFIELDS };

/* The data types of a sweep point: those of enum gpucfg_dtype, then MXFP8 (an fp8 GEMM with block scales,
 * op.h block_scaled), measured apart from per-tensor FP8 and priced against the fp8 peak. */
enum { GPUCFG_SWEEP_MXFP8 = GPUCFG_NDTYPES, GPUCFG_SWEEP_NDTYPES };
extern const char *const gpucfg_sweep_dtype_names[]; /* gpucfg_dtype_names, then "mxfp8" */
/* the dtype whose peak a sweep point's rate is a fraction of (gpucfg.tflops[]): fp8 for mxfp8 */
int gpucfg_sweep_peak_dtype(int sweep_dtype);

/* One measured GEMM of a published sweep (gemm_sweep): m x k by k x n in `dtype`, at `tflops` 10^12 FLOP/s
 * (2 m n k FLOPs over the kernel's measured time). compute.h says how the points price a GEMM. */
typedef struct gpucfg_sweep_point {
    uint64_t m, n, k;
    int dtype;                      /* enum gpucfg_dtype, or GPUCFG_SWEEP_MXFP8 */
    double tflops;
} gpucfg_sweep_point;

enum { GPUCFG_SWEEP_MAX = 32 };

/* The measured sweep of a GPU, sorted by dtype, then FLOPs (2 m n k), then m, n, k; n = 0: none. */
typedef struct gpucfg_sweep {
    size_t n;
    gpucfg_sweep_point pt[GPUCFG_SWEEP_MAX];
} gpucfg_sweep;

typedef struct gpucfg {
    char name[64];
    char description[256];
    char source[512];
    double tflops[GPUCFG_NDTYPES];  /* dense peak, 10^12 FLOP/s */
    uint64_t hbm_bytes;
    uint64_t hbm_bw_bps;            /* bytes per second */
    uint64_t nvlink_bw_bps;         /* per GPU and direction (half the figure NVIDIA quotes) */
    /* compute model (compute.h) */
    uint64_t sms;                   /* streaming multiprocessors; 0 = unknown: no wave quantization */
    double gemm_efficiency;         /* fraction of the dense peak one SM sustains on full GEMM tiles, (0, 1] */
    double memory_efficiency;       /* fraction of hbm_bw_bps memory-bound kernels reach, (0, 1] */
    uint64_t kernel_overhead_ps;    /* fixed time per kernel: launch gap + tail */
    uint64_t gemm_tile_m, gemm_tile_n; /* GEMM output tile (threadblock tile), rows x columns */
    int gemm_tile_select;           /* 1: each GEMM takes the fastest of cuBLAS's tiles (compute.h), the
                                       one above among them; 0: every GEMM uses the one above */
    /* fraction of the dense peak the fused (flash) attention kernel sustains, forward and backward, (0, 1] */
    double attention_fwd_efficiency, attention_bwd_efficiency;
    /* 1 when the tensor cores take MXFP8 operands (OCP Microscaling: FP8 E4M3 elements, one E8M0 scale per
     * 32 elements) with their block scales, at the fp8 peak (Blackwell); 0: no MXFP8 (Hopper and older) */
    int mxfp8;
    /* gemm_efficiency for GEMMs whose operands are FP8 with per-tensor scales, as a fraction of the fp8 peak,
     * and for MXFP8 GEMMs (op.h block_scaled); 0 (the default): gemm_efficiency, and for MXFP8 the per-tensor
     * figure. FP8 GEMMs need not reach the same fraction of their doubled peak (configs/gpus/ cite
     * Transformer Engine's benchmark of the same shapes in bf16, FP8 and MXFP8) */
    double fp8_gemm_efficiency, mxfp8_gemm_efficiency;
    /* SMs an NCCL collective's kernel holds while it runs: one thread block per channel, each resident on an
     * SM for the kernel's life. A compute kernel launched while a collective of its GPU runs on another
     * stream (the data-parallel / FSDP stream, context parallelism's ring inside a node; not the
     * tensor-parallel backward collective beside the weight-gradient GEMM) has the other
     * sms - collective_sms (compute.h: fewer SMs per wave at the same peak per SM). 0 (the default): not
     * modelled */
    uint64_t collective_sms;
    /* measured GEMM rates (cuBLAS sweeps; the GPU files cite them): a GEMM of a dtype with points, within
     * their range of FLOPs, takes its math time from them (compute.h); empty: the model alone */
    gpucfg_sweep gemm_sweep;
    cfgloc loc[GPUCFG_NFIELDS];
    cfgloc ref;
} gpucfg;

extern const compose_kind gpucfg_kind;

int gpucfg_load(const char *name_or_path, gpucfg *out, cxl_err *err);

#endif

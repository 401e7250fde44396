/* gpucfg.c - GPU types: schema table. */
#include "config/gpucfg.h"

#include "config/cfg.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const gpucfg_dtype_names[] = { "bf16", "fp16", "fp8", "tf32", "fp32", NULL };
const char *const gpucfg_sweep_dtype_names[] = { "bf16", "fp16", "fp8", "tf32", "fp32", "mxfp8", NULL };

int gpucfg_sweep_peak_dtype(int sweep_dtype) { return sweep_dtype == GPUCFG_SWEEP_MXFP8 ? GPUCFG_FP8 : sweep_dtype; }

static int bind_sweep(const cfg_node *n, void *dst, cxl_err *err);

#define G(f) offsetof(gpucfg, f)
/* Order = GPUCFG_F_* */
static const cfg_field fields[] = {
    { "name", CFG_T_STRING, G(name), 1, 1, 0, NULL, NULL, 64, NULL, "GPU name" },
    { "description", CFG_T_STRING, G(description), 0, 1, 0, NULL, NULL, 256, NULL, "one line" },
    { "bf16_tflops", CFG_T_DOUBLE, G(tflops[GPUCFG_BF16]), 1, 0, 1e6, NULL, NULL, 0, NULL,
      "dense bf16 tensor-core peak in TFLOP/s, e.g. 989" },
    { "fp16_tflops", CFG_T_DOUBLE, G(tflops[GPUCFG_FP16]), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "dense fp16 peak in TFLOP/s (0: unsupported)" },
    { "fp8_tflops", CFG_T_DOUBLE, G(tflops[GPUCFG_FP8]), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "dense fp8 peak in TFLOP/s (0: unsupported)" },
    { "tf32_tflops", CFG_T_DOUBLE, G(tflops[GPUCFG_TF32]), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "dense tf32 tensor-core peak in TFLOP/s (0: unsupported)" },
    { "fp32_tflops", CFG_T_DOUBLE, G(tflops[GPUCFG_FP32]), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "fp32 (non-tensor) peak in TFLOP/s" },
    { "hbm", CFG_T_SIZE, G(hbm_bytes), 1, 1, 1e15, NULL, NULL, 0, NULL, "HBM capacity, e.g. 80GB" },
    { "hbm_bandwidth", CFG_T_BW, G(hbm_bw_bps), 1, 1, 1e15, NULL, NULL, 0, NULL, "HBM bandwidth, e.g. 3.35TB/s" },
    { "nvlink_bandwidth", CFG_T_BW, G(nvlink_bw_bps), 0, 0, 1e15, NULL, NULL, 0, NULL,
      "NVLink bandwidth per GPU and direction (as cluster.nic_bandwidth), e.g. 450GB/s" },
    { "sms", CFG_T_U64, G(sms), 0, 0, 1024, NULL, NULL, 0, NULL,
      "streaming multiprocessors, e.g. 132 (0: unknown, no wave quantization)" },
    { "gemm_efficiency", CFG_T_DOUBLE, G(gemm_efficiency), 0, 0.001, 1, NULL, NULL, 0, NULL,
      "fraction of the dense peak a large tile-aligned GEMM sustains, e.g. 0.80" },
    { "memory_efficiency", CFG_T_DOUBLE, G(memory_efficiency), 0, 0.001, 1, NULL, NULL, 0, NULL,
      "fraction of the HBM bandwidth memory-bound kernels reach, e.g. 0.90" },
    { "kernel_overhead", CFG_T_TIME, G(kernel_overhead_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "fixed time per kernel (launch gap + tail), e.g. 17.5us" },
    { "gemm_tile_m", CFG_T_U64, G(gemm_tile_m), 0, 1, 4096, NULL, NULL, 0, NULL,
      "rows of the GEMM output tile one SM computes, e.g. 128" },
    { "gemm_tile_n", CFG_T_U64, G(gemm_tile_n), 0, 1, 4096, NULL, NULL, 0, NULL,
      "columns of the GEMM output tile one SM computes, e.g. 256" },
    { "attention_fwd_efficiency", CFG_T_DOUBLE, G(attention_fwd_efficiency), 0, 0.001, 1, NULL, NULL, 0, NULL,
      "fraction of the dense peak the flash attention forward kernel sustains, e.g. 0.73" },
    { "attention_bwd_efficiency", CFG_T_DOUBLE, G(attention_bwd_efficiency), 0, 0.001, 1, NULL, NULL, 0, NULL,
      "fraction of the dense peak the flash attention backward kernel sustains, e.g. 0.63" },
    { "mxfp8", CFG_T_BOOL, G(mxfp8), 0, 0, 1, NULL, NULL, 0, NULL,
      "tensor cores take MXFP8 (FP8 with a scale per 32 elements) at the fp8 peak, e.g. true on Blackwell" },
    { "fp8_gemm_efficiency", CFG_T_DOUBLE, G(fp8_gemm_efficiency), 0, 0, 1, NULL, NULL, 0, NULL,
      "gemm_efficiency of per-tensor FP8 GEMMs, of the fp8 peak (0: gemm_efficiency), e.g. 0.615" },
    { "mxfp8_gemm_efficiency", CFG_T_DOUBLE, G(mxfp8_gemm_efficiency), 0, 0, 1, NULL, NULL, 0, NULL,
      "gemm_efficiency of MXFP8 GEMMs, of the fp8 peak (0: fp8_gemm_efficiency), e.g. 0.585" },
    { "gemm_tile_select", CFG_T_BOOL, G(gemm_tile_select), 0, 0, 1, NULL, NULL, 0, NULL,
      "pick each GEMM's tile from cuBLAS's tile sizes by shape (true) or always use gemm_tile_m x gemm_tile_n" },
    { "collective_sms", CFG_T_U64, G(collective_sms), 0, 0, 1024, NULL, NULL, 0, NULL,
      "SMs an NCCL collective holds while it runs (its channels), taken from compute kernels that overlap "
      "it, e.g. 24 (0: not modelled; below sms)" },
    { "gemm_sweep", CFG_T_CUSTOM, G(gemm_sweep), 0, 0, 0, NULL, NULL, 0, bind_sweep,
      "measured GEMMs, a sequence of { m, n, k, dtype, tflops } (at most 32; [] for none), e.g. "
      "[{ m: 4096, n: 4096, k: 4096, dtype: fp8, tflops: 1216.9 }]" },
    /* until 2026-12-07 (issue 30): NVLink per GPU with both directions together, as NVIDIA quotes it */
    { "nvlink", CFG_T_RETIRED, 0, 0, 0, 0, NULL, NULL, 0, NULL,
      "'nvlink' (per GPU, both directions together) became 'nvlink_bandwidth', per direction like "
      "cluster.nic_bandwidth: write nvlink_bandwidth: <nvlink / 2>, e.g. nvlink: 900GB/s -> "
      "nvlink_bandwidth: 450GB/s" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

/* One point of gemm_sweep: every key required. */
static const cfg_field sweep_fields[] = {
    { "m", CFG_T_U64, offsetof(gpucfg_sweep_point, m), 1, 1, 1e9, NULL, NULL, 0, NULL, "rows of the product, e.g. 4096" },
    { "n", CFG_T_U64, offsetof(gpucfg_sweep_point, n), 1, 1, 1e9, NULL, NULL, 0, NULL, "columns of the product, e.g. 4096" },
    { "k", CFG_T_U64, offsetof(gpucfg_sweep_point, k), 1, 1, 1e9, NULL, NULL, 0, NULL, "inner dimension, e.g. 4096" },
    { "dtype", CFG_T_ENUM, offsetof(gpucfg_sweep_point, dtype), 1, 0, 0, gpucfg_sweep_dtype_names, NULL, 0, NULL,
      "data type of the operands (mxfp8: fp8 with a scale per 32 elements, timed apart from per-tensor fp8)" },
    { "tflops", CFG_T_DOUBLE, offsetof(gpucfg_sweep_point, tflops), 1, 0.001, 1e6, NULL, NULL, 0, NULL,
      "measured 10^12 FLOP/s (2 m n k over the kernel's time), e.g. 1216.9" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static double sweep_flops(const gpucfg_sweep_point *p) { return 2.0 * (double)p->m * (double)p->n * (double)p->k; }

static int sweep_cmp(const void *a, const void *b)
{
    const gpucfg_sweep_point *x = a, *y = b;
    double fx = sweep_flops(x), fy = sweep_flops(y);
    if (x->dtype != y->dtype)
        return x->dtype < y->dtype ? -1 : 1;
    if (fx != fy)
        return fx < fy ? -1 : 1;
    if (x->m != y->m)
        return x->m < y->m ? -1 : 1;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* gemm_sweep: a sequence of mappings, each bound with sweep_fields; the same m, n, k and dtype twice is
 * an error at the second. Stored sorted (gpucfg.h). */
static int bind_sweep(const cfg_node *n, void *dst, cxl_err *err)
{
    gpucfg_sweep *s = dst;
    if (cfg_kind(n) != CFG_SEQ)
        return cfg_errf(err, n, "gpu.gemm_sweep: expected a sequence of measured GEMMs { m, n, k, dtype, tflops } "
                        "([] for none)");
    size_t cnt = cfg_seq_size(n);
    if (cnt > GPUCFG_SWEEP_MAX)
        return cfg_errf(err, cfg_seq_at(n, GPUCFG_SWEEP_MAX), "gpu.gemm_sweep: %zu points; at most %d",
                        cnt, GPUCFG_SWEEP_MAX);
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < cnt; i++) {
        const cfg_node *e = cfg_seq_at(n, i);
        if (cfg_kind(e) != CFG_MAP)
            return cfg_errf(err, e, "gpu.gemm_sweep[%zu]: expected a mapping { m, n, k, dtype, tflops }", i);
        gpucfg_sweep_point p = { 0, 0, 0, 0, 0 };
        char sec[48];
        snprintf(sec, sizeof sec, "gpu.gemm_sweep[%zu]", i);
        int rc = cfg_bind(e, n, sec, sweep_fields, &p, NULL, err);
        if (rc)
            return rc;
        for (size_t j = 0; j < s->n; j++)
            if (s->pt[j].m == p.m && s->pt[j].n == p.n && s->pt[j].k == p.k && s->pt[j].dtype == p.dtype)
                return cfg_errf(err, e, "gpu.gemm_sweep[%zu]: %llu x %llu x %llu in %s is point [%zu] again; give "
                                "each shape and dtype once", i, (unsigned long long)p.m, (unsigned long long)p.n,
                                (unsigned long long)p.k, gpucfg_sweep_dtype_names[p.dtype], j);
        s->pt[s->n++] = p;
    }
    qsort(s->pt, s->n, sizeof s->pt[0], sweep_cmp);
    return 0;
}

/* compose_dump hook: gemm_sweep as a flow sequence that bind_sweep reads back to the same points ([] when
 * empty). */
static void dump_sweep(FILE *out, const cfg_field *f, const void *dst, int indent, void *ctx)
{
    const gpucfg_sweep *s = dst;
    (void)ctx;
    fprintf(out, "%*s%s:%s\n", indent, "", f->key, s->n ? "" : " []");
    for (size_t i = 0; i < s->n; i++) {
        fprintf(out, "%*s  - {", indent, "");
        for (size_t j = 0; sweep_fields[j].key; j++) {
            char v[128];
            cfgdump_value(&sweep_fields[j], (const char *)&s->pt[i] + sweep_fields[j].offset, v, sizeof v);
            fprintf(out, "%s %s: %s", j ? "," : "", sweep_fields[j].key, v);
        }
        fprintf(out, " }\n");
    }
}

/* Compute-model defaults: the values the presets use (their sources are cited there), so that a GPU
 * file written before these fields existed still prices operations sensibly. sms 0: wave quantization
 * off, since no SM count is a safe guess. */
static void defaults(void *obj)
{
    gpucfg *g = obj;
    memset(g, 0, sizeof *g);
    g->gemm_efficiency = 0.80;
    g->memory_efficiency = 0.90;
    g->kernel_overhead_ps = 17500000;   /* 17.5 us: fitted on A100, carried to every preset (docs/calibration.md) */
    g->gemm_tile_m = 128;               /* CUTLASS's default tensor-op threadblock tile, 128 x 256 */
    g->gemm_tile_n = 256;
    g->gemm_tile_select = 1;            /* cuBLAS picks a tile per shape (compute.h) */
    /* FlashAttention-2 (Dao, arXiv 2307.08691, Sec. 4.1), the portable kernel: up to 73 % of the A100's
     * peak in the forward pass and 63 % in the backward pass (head dimension 128, long sequences) */
    g->attention_fwd_efficiency = 0.73;
    g->attention_bwd_efficiency = 0.63;
}

const compose_kind gpucfg_kind = {
    "gpu", "gpus", fields, defaults, offsetof(gpucfg, loc), offsetof(gpucfg, ref),
    offsetof(gpucfg, source), sizeof((gpucfg *)0)->source, GPUCFG_F_ATTN_FWD_EFF, dump_sweep,
};

int gpucfg_load(const char *name_or_path, gpucfg *out, cxl_err *err)
{
    return compose_load(&gpucfg_kind, name_or_path, out, err);
}

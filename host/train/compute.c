/* compute.c - the efficiency-curve compute model (formulas and citations in compute.h). */
#include "train/compute.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

/* Seconds -> whole picoseconds, rounded up. A value a few ulps above a whole number is that number: the
 * divisions below turn exact quotients (1 ms of traffic) into x.0000000001, which must not cost 1 ps. */
static int to_ps(double s, int64_t *out)
{
    double ps = s * 1e12;
    if (!(ps >= 0) || ps >= 9.2e18) /* INT64_MAX is 9.22e18; also catches NaN */
        return CXL_ELIMIT;
    double f = floor(ps);
    *out = (int64_t)(ps - f <= ps * 4 * DBL_EPSILON ? f : f + 1);
    return 0;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* The threadblock tiles cuBLAS chooses among, largest first (NVIDIA, "Matrix Multiplication Background
 * User's Guide", section "Typical Tile Dimensions in cuBLAS and Performance"; the same shapes are CUTLASS's
 * Sm80 tensor-op tiles, python/cutlass_library/generator.py GenerateSM80_TensorOp_16816). */
#define GEMM_NTILES 8
static const uint64_t gemm_tiles[GEMM_NTILES][2] = {
    { 256, 128 }, { 128, 256 }, { 128, 128 }, { 256, 64 }, { 64, 256 }, { 128, 64 }, { 64, 128 }, { 64, 64 },
};

/* Operand reuse of a tm x tn tile: FLOPs per byte of A and B it loads, up to a constant factor
 * (2 tm tn k FLOPs over 2 (tm + tn) k bytes of 16-bit operands). */
static double tile_reuse(uint64_t tm, uint64_t tn) { return (double)tm * (double)tn / ((double)tm + (double)tn); }

/* FLOPs of one m x k by k x n product. */
static double product_flops(uint64_t m, uint64_t n, uint64_t k) { return 2.0 * (double)m * (double)n * (double)k; }

/* The math time of batch products m x k by k x n at eff of peak: the configured tile first (the reference of
 * gemm_efficiency), then, with gemm_tile_select, the tiles cuBLAS chooses among; the least time wins, the
 * earlier on a tie (compute.h). Fills the tile, tile count and waves of out when given. -1: more than 2^64
 * tiles for every tile. */
static double gemm_math(const gpucfg *g, double peak, double eff, uint64_t batch, uint64_t m, uint64_t n, uint64_t k,
                        compute_cost *out)
{
    uint64_t cand[1 + GEMM_NTILES][2] = { { g->gemm_tile_m, g->gemm_tile_n } };
    size_t ncand = 1;
    if (g->gemm_tile_select)
        for (size_t i = 0; i < GEMM_NTILES; i++, ncand++)
            cand[ncand][0] = gemm_tiles[i][0], cand[ncand][1] = gemm_tiles[i][1];
    double ref_reuse = tile_reuse(g->gemm_tile_m, g->gemm_tile_n), t_math = -1;
    for (size_t i = 0; i < ncand; i++) {
        uint64_t tm = cand[i][0], tn = cand[i][1], tiles, waves;
        if (__builtin_mul_overflow(batch, ceil_div(m, tm), &tiles) ||
            __builtin_mul_overflow(tiles, ceil_div(n, tn), &tiles))
            continue;
        /* a tile with less operand reuse than the reference runs slower in proportion (compute.h) */
        double r = tile_reuse(tm, tn) / ref_reuse;
        double tile_flops = 2.0 * (double)tm * (double)tn * (double)k, t;
        if (r > 1)
            r = 1;
        /* Matrix Multiplication Background User's Guide: every tile does a full tile's work (tile
         * quantization), and the SMs finish a wave before the last partial wave (wave quantization). */
        if (g->sms > 0) {
            waves = ceil_div(tiles, g->sms);
            t = (double)waves * (tile_flops / (peak / (double)g->sms * eff * r));
        } else {
            waves = tiles;
            t = (double)tiles * tile_flops / (peak * eff * r);
        }
        if (t_math < 0 || t < t_math) {
            t_math = t;
            if (out)
                out->tiles = tiles, out->waves = waves, out->tile_m = tm, out->tile_n = tn;
        }
    }
    return t_math;
}

/* The sweep's factor on the model's math time for op (compute.h): at each measured point of op's sweep dtype
 * (its dtype; mxfp8 for an fp8 GEMM with block scales) the measured time over the model's (2 m n k / tflops
 * against gemm_math of the point, at op's peak and efficiency), linear in log2 of the FLOPs of one product
 * between the two points around op's; 1 outside the points' range, for a dtype without points and a grouped
 * GEMM over several streams (its products share the SMs; the sweep times one GEMM alone). O(points x tiles). */
static double sweep_ratio(const gpucfg *g, const op_desc *op, double peak, double eff)
{
    const gpucfg_sweep *s = &g->gemm_sweep;
    if (!s->n || (op->calls > 1 && op->streams > 1))
        return 1.0;
    int want = op->dtype == GPUCFG_FP8 && op->block_scaled ? GPUCFG_SWEEP_MXFP8 : op->dtype;
    double f = product_flops(op->m, op->n, op->k);
    const gpucfg_sweep_point *lo = NULL, *hi = NULL;
    for (size_t i = 0; i < s->n; i++) {    /* sorted by dtype, then FLOPs (gpucfg.h) */
        const gpucfg_sweep_point *p = &s->pt[i];
        double fp = product_flops(p->m, p->n, p->k);
        if (p->dtype != want)
            continue;
        if (fp <= f)
            lo = p;
        if (fp >= f && !hi)
            hi = p;
    }
    if (!lo || !hi)
        return 1.0;
    double r[2];
    const gpucfg_sweep_point *ends[2] = { lo, hi };
    for (int j = 0; j < 2; j++) {
        const gpucfg_sweep_point *p = ends[j];
        double model = gemm_math(g, peak, eff, 1, p->m, p->n, p->k, NULL);
        double measured = product_flops(p->m, p->n, p->k) / (p->tflops * 1e12);
        r[j] = model > 0 ? measured / model : 1.0;
    }
    double flo = product_flops(lo->m, lo->n, lo->k), fhi = product_flops(hi->m, hi->n, hi->k);
    if (!(fhi > flo))
        return r[0];
    double w = (log2(f) - log2(flo)) / (log2(fhi) - log2(flo));
    return r[0] + w * (r[1] - r[0]);
}

int compute_op_cost(const gpucfg *g, const op_desc *op, compute_cost *out, cxl_err *err)
{
    cxl_err_clear(err);
    *out = (compute_cost){ 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 1.0 };
    if (op->kind != OP_GEMM && op->kind != OP_MEM && op->kind != OP_ATTN_FWD && op->kind != OP_ATTN_BWD)
        return cxl_errf(err, CXL_EINTERNAL, "compute: op '%s' has unknown kind %d", op->name ? op->name : "?",
                        op->kind);
    if (op->dtype < 0 || op->dtype >= GPUCFG_NDTYPES)
        return cxl_errf(err, CXL_EINTERNAL, "compute: op '%s' has unknown dtype %d", op->name ? op->name : "?",
                        op->dtype);
    out->culprit = GPUCFG_F_HBM_BW;
    if (g->hbm_bw_bps == 0 || g->memory_efficiency <= 0)
        return cxl_errf(err, CXL_ECONFIG, "compute: GPU '%s' has no HBM bandwidth", g->name);

    /* The memory side of the roofline, both kinds. */
    double bytes = op->bytes > 0 ? op->bytes : 0;
    if (to_ps(bytes / ((double)g->hbm_bw_bps * g->memory_efficiency), &out->memory_ps))
        return cxl_errf(err, CXL_ELIMIT, "compute: op '%s' moves %.3g bytes: beyond %lld ps",
                        op->name ? op->name : "?", bytes, (long long)INT64_MAX);
    /* one launch gap per kernel the op launches (op.h: launches; compute.h); a GEMM whose calls run over
     * several streams pays, for them, the gaps of its longest stream: ceil(calls / streams) */
    uint64_t gaps = op->launches > 1 ? op->launches : 1;
    if (op->kind == OP_GEMM && op->streams > 1 && op->calls > 1 && op->calls <= gaps)
        gaps = gaps - op->calls + ceil_div(op->calls, op->streams);
    out->overhead_ps = (int64_t)g->kernel_overhead_ps * (int64_t)gaps;
    out->culprit = GPUCFG_F_TFLOPS0 + op->dtype;

    if (op->kind == OP_GEMM) {
        double peak = g->tflops[op->dtype] * 1e12;
        if (!(peak > 0))
            return cxl_errf(err, CXL_ECONFIG, "compute: GEMM '%s' in %s, but GPU '%s' has no %s peak (%s_tflops is 0)",
                            op->name ? op->name : "?", gpucfg_dtype_names[op->dtype], g->name,
                            gpucfg_dtype_names[op->dtype], gpucfg_dtype_names[op->dtype]);
        if (g->gemm_tile_m == 0 || g->gemm_tile_n == 0 || g->gemm_efficiency <= 0)
            return cxl_errf(err, CXL_ECONFIG, "compute: GPU '%s' has no GEMM tile or efficiency", g->name);
        /* FP8 operands: their own sustained fraction of the fp8 peak where the GPU file gives one, MXFP8's
         * (block-scaled) below per-tensor FP8's (gpucfg.h) */
        double eff = g->gemm_efficiency;
        if (op->dtype == GPUCFG_FP8 && g->fp8_gemm_efficiency > 0)
            eff = g->fp8_gemm_efficiency;
        if (op->dtype == GPUCFG_FP8 && op->block_scaled && g->mxfp8_gemm_efficiency > 0)
            eff = g->mxfp8_gemm_efficiency;
        double t_math = gemm_math(g, peak, eff, op->batch, op->m, op->n, op->k, out);
        if (t_math < 0)
            return out->culprit = -1, cxl_errf(err, CXL_ELIMIT, "compute: GEMM '%s' has more than 2^64 tiles", op->name ? op->name : "?");
        /* the measured sweep, where it covers the GEMM (compute.h) */
        out->sweep_ratio = sweep_ratio(g, op, peak, eff);
        t_math *= out->sweep_ratio;
        if (to_ps(t_math, &out->math_ps))
            return cxl_errf(err, CXL_ELIMIT, "compute: GEMM '%s' takes beyond %lld ps", op->name ? op->name : "?",
                            (long long)INT64_MAX);
    } else if (op->kind == OP_ATTN_FWD || op->kind == OP_ATTN_BWD) {
        /* A fused attention kernel: its matrix FLOPs at a sustained fraction of the peak (compute.h); no
         * tile or wave quantization (its thread blocks are query tiles x heads, thousands at training
         * shapes). */
        double peak = g->tflops[op->dtype] * 1e12;
        double eff = op->kind == OP_ATTN_FWD ? g->attention_fwd_efficiency : g->attention_bwd_efficiency;
        if (!(peak > 0))
            return cxl_errf(err, CXL_ECONFIG, "compute: attention '%s' in %s, but GPU '%s' has no %s peak (%s_tflops is 0)",
                            op->name ? op->name : "?", gpucfg_dtype_names[op->dtype], g->name,
                            gpucfg_dtype_names[op->dtype], gpucfg_dtype_names[op->dtype]);
        if (!(eff > 0))
            return out->culprit = op->kind == OP_ATTN_FWD ? GPUCFG_F_ATTN_FWD_EFF : GPUCFG_F_ATTN_BWD_EFF,
                   cxl_errf(err, CXL_ECONFIG, "compute: GPU '%s' has no attention efficiency", g->name);
        double flops = op->flops > 0 ? op->flops : 0;
        if (to_ps(flops / (peak * eff), &out->math_ps))
            return cxl_errf(err, CXL_ELIMIT, "compute: attention '%s' takes beyond %lld ps",
                            op->name ? op->name : "?", (long long)INT64_MAX);
    }
    out->memory_bound = out->memory_ps > out->math_ps;
    out->culprit = out->memory_bound ? GPUCFG_F_HBM_BW : GPUCFG_F_TFLOPS0 + op->dtype;
    int64_t body = out->memory_bound ? out->memory_ps : out->math_ps;
    if (body > INT64_MAX - out->overhead_ps)
        return cxl_errf(err, CXL_ELIMIT, "compute: op '%s' takes beyond %lld ps", op->name ? op->name : "?",
                        (long long)INT64_MAX);
    out->total_ps = body + out->overhead_ps;
    out->culprit = -1;
    return 0;
}

int64_t compute_op_ps(const gpucfg *g, const op_desc *op)
{
    compute_cost c;
    int rc = compute_op_cost(g, op, &c, NULL);
    return rc ? rc : c.total_ps;
}

double compute_op_efficiency(const gpucfg *g, const op_desc *op)
{
    int64_t ps = compute_op_ps(g, op);
    if (ps < 0)
        return (double)ps;
    double peak = g->tflops[op->dtype] * 1e12;
    if (!(peak > 0) || ps == 0)
        return 0;
    double flops = op->kind == OP_GEMM ? 2.0 * (double)op->batch * (double)op->m * (double)op->n * (double)op->k
                                       : op->flops; /* OP_MEM, OP_ATTN_* */
    return flops / ((double)ps * 1e-12) / peak;
}

void compute_fewer_sms(gpucfg *g, uint64_t sms)
{
    if (!g->sms || sms >= g->sms)
        return;
    double left = (double)sms / (double)g->sms;
    g->sms = sms;
    for (int d = 0; d < GPUCFG_NDTYPES; d++)
        g->tflops[d] *= left;
    for (size_t i = 0; i < g->gemm_sweep.n; i++)
        g->gemm_sweep.pt[i].tflops *= left;
}

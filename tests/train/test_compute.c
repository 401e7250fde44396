/* test_compute.c - the efficiency-curve compute model: GEMM time grows with k, wave quantization steps,
 * memory-bound GEMMs fall to the roofline, a large bf16 GEMM on the H200 preset lands where the measured
 * one does (docs/references.md "GPUs and clusters": 770-800 of 989 TFLOP/s), memory-bound kernels cost
 * bytes / (bandwidth x efficiency) + overhead exactly, the Blackwell presets' measured curve (the B200's
 * 8192^3 point, monotone in K and in whole waves, bounded by gemm_efficiency), the tile chosen per shape
 * among cuBLAS's, and the GPU fields' defaults and errors. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "train/compute.h"
#include "config/gpucfg.h"

#include "tmpdir_fixture.h"
#include "train_fixture.h"

static void load_gpu(const char *name, gpucfg *g)
{
    cxl_err e;
    if (gpucfg_load(name, g, &e))
        fail_msg("%s: %s:%d:%d: %s", name, e.file, e.line, e.col, e.msg);
}

static op_desc gemm(uint64_t batch, uint64_t m, uint64_t n, uint64_t k, int dtype)
{
    double es = dtype == GPUCFG_FP8 ? 1 : dtype >= GPUCFG_TF32 ? 4 : 2;
    op_desc op = { "test.gemm", OP_GEMM, dtype, batch, m, n, k, 2.0 * batch * m * n * k,
                   es * batch * ((double)m * k + (double)k * n + (double)m * n), 0, 0, 1, 0 };
    return op;
}

static compute_cost cost_of(const gpucfg *g, const op_desc *op)
{
    compute_cost c;
    cxl_err e;
    int rc = compute_op_cost(g, op, &c, &e);
    if (rc)
        fail_msg("compute_op_cost: %d: %s", rc, e.msg);
    assert_int_equal(compute_op_ps(g, op), c.total_ps);
    return c;
}

static void presets_have_compute_fields(void **state)
{
    (void)state;
    gpucfg g;
    load_gpu("a100-80gb", &g);
    assert_int_equal(g.sms, 108);
    load_gpu("h100-sxm", &g);
    assert_int_equal(g.sms, 132);
    load_gpu("h200", &g);
    assert_int_equal(g.sms, 132);
    /* the H200's own cuBLASLt FP8 GEMMs and BabelStream copy (Azure ND H200 v5: h200_measured_points below) */
    assert_true(g.gemm_efficiency == 0.80 && g.memory_efficiency == 0.835 && g.fp8_gemm_efficiency == 0.678);
    /* kernel_overhead: fitted on the A100 tables with a100-80gb's memory_efficiency and the validation
     * experiments' host time per step (docs/calibration.md), carried to every preset as an assumption */
    static const char *const all[] = { "a100-80gb", "h100-sxm", "h200", "b200", "gb200" };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        load_gpu(all[i], &g);
        assert_int_equal(g.kernel_overhead_ps, 17500000);
    }
    load_gpu("a100-80gb", &g);
    assert_true(g.memory_efficiency == 0.60);
    load_gpu("h200", &g);
    assert_int_equal(g.gemm_tile_m, 128);
    assert_int_equal(g.gemm_tile_n, 256);
    /* B200 (HGX B200 / DGX B200 datasheet figures, dense: half the sparse peaks, per GPU) */
    load_gpu("b200", &g);
    assert_true(g.tflops[GPUCFG_BF16] == 2250 && g.tflops[GPUCFG_FP8] == 4500);
    assert_int_equal(g.hbm_bytes, 180000000000ull);
    assert_int_equal(g.hbm_bw_bps, 7700000000000ull); /* the later HGX B200 specification's 7.7 TB/s */
    /* Blackwell's efficiencies, measured on B200 (configs/gpus/b200.yaml, docs/references.md "Blackwell
     * efficiencies"): 148 SMs; cuBLAS 8192^3 bf16 at 63.1 % of the peak; FP8 GEMMs at 0.962 and MXFP8 GEMMs
     * at 0.915 of bf16's fraction (Transformer Engine's GEMM benchmark); a streamed kernel at 6.72 of 7.7 TB/s; cuDNN's
     * causal attention (head dim 128, sequence 8,192) at 0.634 (forward) and 0.484 (backward) of the peak */
    assert_int_equal(g.sms, 148);
    assert_true(g.gemm_efficiency == 0.64 && g.memory_efficiency == 0.87 && g.fp8_gemm_efficiency == 0.615 && g.mxfp8_gemm_efficiency == 0.585);
    assert_true(g.attention_fwd_efficiency == 0.634 && g.attention_bwd_efficiency == 0.484);
    /* GB200's GPU (GB200 NVL72 datasheet, the rack's figures / 72, dense); its GEMMs at the B200's sustained
     * rate x 1.064, MLPerf Training v5.1's Llama 3.1 8B per-GPU ratio (84.4 / 79.3 min): the B200's fractions
     * x 1.064 x 2,250 / 2,500; the copy fraction the B200's */
    load_gpu("gb200", &g);
    assert_true(g.tflops[GPUCFG_BF16] == 2500 && g.tflops[GPUCFG_FP8] == 5000 && g.tflops[GPUCFG_TF32] == 1250);
    assert_int_equal(g.hbm_bytes, 186000000000ull);
    assert_int_equal(g.hbm_bw_bps, 8000000000000ull);
    assert_int_equal(g.sms, 148);
    double mlperf = 84.4 / 79.3 * 2250 / 2500;
    assert_true(fabs(g.gemm_efficiency - 0.64 * mlperf) < 5e-4 && fabs(g.fp8_gemm_efficiency - 0.615 * mlperf) < 5e-4 &&
                fabs(g.mxfp8_gemm_efficiency - 0.585 * mlperf) < 5e-4);
    assert_true(g.memory_efficiency == 0.87);
    assert_true(g.attention_fwd_efficiency == 0.634 && g.attention_bwd_efficiency == 0.484);
    /* Hopper: cuDNN's causal attention measured on H200s (the H100's compute); the H100's own cuBLASLt FP8
     * GEMMs and HBM3 copy rate (Azure ND H100 v5: h100_measured_points below); no MXFP8 */
    load_gpu("h100-sxm", &g);
    assert_true(g.attention_fwd_efficiency == 0.651 && g.attention_bwd_efficiency == 0.547);
    assert_true(g.fp8_gemm_efficiency == 0.672 && g.memory_efficiency == 0.866 && g.mxfp8_gemm_efficiency == 0 && !g.mxfp8);
}

static void older_gpu_file_gets_defaults(void **state)
{
    (void)state;
    const char *p = tmpdir_write("old.yaml", "name: old\nbf16_tflops: 100\nhbm: 16GB\nhbm_bandwidth: 1TB/s\n");
    gpucfg g;
    load_gpu(p, &g);
    assert_int_equal(g.sms, 0);
    assert_true(g.gemm_efficiency == 0.80 && g.memory_efficiency == 0.90);
    assert_int_equal(g.kernel_overhead_ps, 17500000);
    assert_int_equal(g.gemm_tile_m, 128);
    assert_int_equal(g.gemm_tile_n, 256);
    /* sms 0: tiles are not grouped into waves; 2 x 128 x 256 x 1000 FLOPs per tile at 80 TFLOP/s */
    op_desc op = gemm(1, 256, 256, 1000, GPUCFG_BF16);
    compute_cost c = cost_of(&g, &op);
    assert_int_equal(c.tiles, 2);
    assert_int_equal(c.waves, 2);
    assert_int_equal(c.math_ps, 2 * 819200); /* 65536000 FLOPs / 80e12 FLOP/s = 819.2 ns */
    /* no fp8_gemm_efficiency: 0, FP8 GEMMs at gemm_efficiency, MXFP8 GEMMs at the FP8 figure */
    assert_true(g.fp8_gemm_efficiency == 0 && g.mxfp8_gemm_efficiency == 0);
    op_desc f8 = gemm(1, 256, 256, 100000, GPUCFG_FP8), mx = f8;
    mx.block_scaled = 1;
    g.tflops[GPUCFG_FP8] = 200;
    assert_int_equal(cost_of(&g, &f8).math_ps, cost_of(&g, &mx).math_ps);
    g.fp8_gemm_efficiency = 0.5;
    assert_int_equal(cost_of(&g, &f8).math_ps, cost_of(&g, &mx).math_ps);
    g.mxfp8_gemm_efficiency = 0.4; /* MXFP8 at 0.4 against 0.5: 1.25 x the math */
    assert_true(llabs(4 * cost_of(&g, &mx).math_ps - 5 * cost_of(&g, &f8).math_ps) <= 5);
}

static void gpu_field_errors(void **state)
{
    (void)state;
    const char *p = tmpdir_write("bad.yaml", "name: bad\nbf16_tflops: 100\nhbm: 16GB\nhbm_bandwidth: 1TB/s\n"
                                             "gemm_efficiency: 1.5\n");
    gpucfg g;
    cxl_err e;
    assert_int_equal(gpucfg_load(p, &g, &e), CXL_ECONFIG);
    assert_int_equal(e.line, 5);
    assert_non_null(strstr(e.msg, "gemm_efficiency"));
    assert_non_null(strstr(e.msg, "out of range"));
    p = tmpdir_write("bad2.yaml", "name: bad\nbf16_tflops: 100\nhbm: 16GB\nhbm_bandwidth: 1TB/s\n"
                                  "kernel_overhead: 3\n");
    assert_int_equal(gpucfg_load(p, &g, &e), CXL_ECONFIG);
    assert_int_equal(e.line, 5);
    assert_non_null(strstr(e.msg, "kernel_overhead"));
    p = tmpdir_write("bad3.yaml", "name: bad\nbf16_tflops: 100\nhbm: 16GB\nhbm_bandwidth: 1TB/s\n"
                                  "fp8_gemm_efficiency: 1.5\n");
    assert_int_equal(gpucfg_load(p, &g, &e), CXL_ECONFIG);
    assert_int_equal(e.line, 5);
    assert_non_null(strstr(e.msg, "fp8_gemm_efficiency"));
}

static void gemm_time_scales_with_k(void **state)
{
    (void)state;
    gpucfg g;
    load_gpu("h100-sxm", &g);
    op_desc a = gemm(1, 4096, 4096, 4096, GPUCFG_BF16), b = gemm(1, 4096, 4096, 8192, GPUCFG_BF16);
    compute_cost ca = cost_of(&g, &a), cb = cost_of(&g, &b);
    assert_false(ca.memory_bound);
    assert_int_equal(ca.tiles, cb.tiles);
    assert_true(llabs(cb.math_ps - 2 * ca.math_ps) <= 1);
    assert_true(cb.total_ps > ca.total_ps);
    assert_int_equal(ca.total_ps, ca.math_ps + ca.overhead_ps);
}

static void wave_quantization_step(void **state)
{
    (void)state;
    gpucfg g;
    load_gpu("h200", &g);
    /* 132 tiles of 128 x 256: one wave; 133 tiles: two waves, twice the math time. */
    op_desc a = gemm(1, 128 * 132, 256, 8192, GPUCFG_BF16), b = gemm(1, 128 * 133, 256, 8192, GPUCFG_BF16);
    compute_cost ca = cost_of(&g, &a), cb = cost_of(&g, &b);
    assert_int_equal(ca.tiles, 132);
    assert_int_equal(ca.waves, 1);
    assert_int_equal(cb.tiles, 133);
    assert_int_equal(cb.waves, 2);
    assert_false(ca.memory_bound || cb.memory_bound);
    assert_true(llabs(cb.math_ps - 2 * ca.math_ps) <= 1);
    /* one wave: one tile's work at a 132nd of the peak x 0.8: 2 x 128 x 256 x 8192 / (989e12 / 132 x 0.8) */
    double tile_s = 2.0 * 128 * 256 * 8192 / (989e12 / 132 * 0.8);
    assert_true(llabs(ca.math_ps - (int64_t)(tile_s * 1e12)) <= 1);
    /* a partial tile costs a whole one: m one row more is a 133rd tile too */
    op_desc c = gemm(1, 128 * 132 + 1, 256, 8192, GPUCFG_BF16);
    assert_int_equal(cost_of(&g, &c).math_ps, cb.math_ps);
    /* batch multiplies tiles */
    op_desc d = gemm(133, 128, 256, 8192, GPUCFG_BF16);
    assert_int_equal(cost_of(&g, &d).math_ps, cb.math_ps);
}

/* A grouped GEMM launched per expert (op.h: launches): one launch gap per launch; tiles quantize per expert
 * (16 experts of 33 tokens: 16 x ceil(33 / 128) tiles, the time of 16 x 128 rows), the waves over all. */
static void grouped_gemm_launches_and_small_m(void **state)
{
    (void)state;
    gpucfg g;
    load_gpu("h100-sxm", &g);
    g.gemm_tile_select = 0; /* the configured tile alone; the choice among tiles: tile_choice_by_shape */
    op_desc one = gemm(16, 33, 2048, 2048, GPUCFG_BF16), many = one;
    many.launches = 16;
    compute_cost c1 = cost_of(&g, &one), c16 = cost_of(&g, &many);
    assert_int_equal(c1.overhead_ps, (int64_t)g.kernel_overhead_ps);
    assert_int_equal(c16.overhead_ps, 16 * (int64_t)g.kernel_overhead_ps);
    assert_int_equal(c16.math_ps, c1.math_ps);
    assert_int_equal(c16.total_ps - c1.total_ps, 15 * (int64_t)g.kernel_overhead_ps);
    assert_int_equal(c16.tiles, 16 * 8);
    op_desc full = gemm(16, 128, 2048, 2048, GPUCFG_BF16);
    assert_int_equal(cost_of(&g, &full).math_ps, c1.math_ps);
}

/* The tile of each GEMM: the fastest of cuBLAS's tiles (compute.h), a tile with less operand reuse than the
 * configured 128 x 256 slowed in proportion. On the A100 (108 SMs): */
static void tile_choice_by_shape(void **state)
{
    (void)state;
    gpucfg g, fixed;
    load_gpu("a100-80gb", &g);
    assert_int_equal(g.gemm_tile_select, 1);
    fixed = g;
    fixed.gemm_tile_select = 0;
    /* the attention's context product of 32 heads, s = 2048, head dimension 128: 128 x 256 tiles are half
     * empty (512 tiles, 5 waves), 256 x 128 ones full at the same reuse (256 tiles, 3 waves): 3/5 the math */
    op_desc ctx = gemm(32, 2048, 128, 2048, GPUCFG_BF16);
    compute_cost cs = cost_of(&g, &ctx), cf = cost_of(&fixed, &ctx);
    assert_int_equal(cf.tile_m, 128);
    assert_int_equal(cf.tile_n, 256);
    assert_int_equal(cf.waves, 5);
    assert_int_equal(cs.tile_m, 256);
    assert_int_equal(cs.tile_n, 128);
    assert_int_equal(cs.tiles, 256);
    assert_int_equal(cs.waves, 3);
    assert_true(llabs(5 * cs.math_ps - 3 * cf.math_ps) <= 5);
    /* a large square GEMM keeps the configured tile (a tie with 256 x 128 goes to it): the same time */
    op_desc sq = gemm(1, 8192, 8192, 8192, GPUCFG_BF16);
    compute_cost qs = cost_of(&g, &sq);
    assert_int_equal(qs.tile_m, 128);
    assert_int_equal(qs.tile_n, 256);
    assert_int_equal(qs.math_ps, cost_of(&fixed, &sq).math_ps);
    /* a 256 x 256 output with K = 8192: two 128 x 256 tiles in one wave, or sixteen 64 x 64 tiles in one
     * wave, each an eighth of the work at 64 x 64 / 128 / 3/8 of the reuse: a third of the math */
    op_desc small = gemm(1, 256, 256, 8192, GPUCFG_BF16);
    compute_cost ss = cost_of(&g, &small), sf = cost_of(&fixed, &small);
    assert_int_equal(ss.tile_m, 64);
    assert_int_equal(ss.tile_n, 64);
    assert_int_equal(ss.tiles, 16);
    assert_true(llabs(3 * ss.math_ps - sf.math_ps) <= 5);
    /* never slower than the configured tile alone, and never above gemm_efficiency */
    const uint64_t dims[] = { 1, 96, 128, 1000, 2048, 4096, 12288 };
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        for (size_t j = 0; j < sizeof dims / sizeof dims[0]; j++) {
            op_desc o = gemm(4, dims[i], dims[j], 4096, GPUCFG_BF16);
            assert_true(cost_of(&g, &o).math_ps <= cost_of(&fixed, &o).math_ps);
            assert_true(compute_op_efficiency(&g, &o) <= g.gemm_efficiency);
        }
    /* the key in a GPU file: false keeps the one tile */
    const char *p = tmpdir_write("fixed.yaml", "name: f\nbf16_tflops: 312\nhbm: 80GB\nhbm_bandwidth: 2TB/s\nsms: 108\n"
                                               "gemm_tile_select: false\n");
    load_gpu(p, &g);
    assert_int_equal(g.gemm_tile_select, 0);
    assert_int_equal(cost_of(&g, &ctx).tile_n, 256);
}

static void memory_bound_gemm_falls_to_roofline(void **state)
{
    (void)state;
    gpucfg g;
    load_gpu("h200", &g);
    /* attention-like: 1024 products of 128 x 16 by 16 x 256 -- 8 waves of tiny tiles, 80 MB of traffic */
    op_desc op = gemm(1024, 128, 256, 16, GPUCFG_BF16);
    compute_cost c = cost_of(&g, &op);
    assert_true(c.memory_bound);
    assert_true(c.memory_ps > 5 * c.math_ps);
    assert_int_equal(c.total_ps, c.memory_ps + c.overhead_ps);
    double want_ps = op.bytes / (4.8e12 * 0.835) * 1e12;
    assert_true(fabs((double)c.memory_ps - want_ps) <= 1);
    assert_true(compute_op_efficiency(&g, &op) < 0.1); /* about 50 of 989 TFLOP/s */
}

/* The 8192^3 bf16 GEMM on preset `name`: its 2048 tiles in `waves`, its fraction of the peak in [lo, hi]
 * (at most gemm_efficiency), and half its math in fp8. The fraction is of the kernel's own time, without
 * kernel_overhead: the benchmarks it is checked against time the GEMM launched back to back in a loop, with
 * no framework between the kernels, while kernel_overhead is the per-kernel time of eager Megatron-LM,
 * fitted on the A100 tables (17.5 us since 2026-12-07; docs/calibration.md). */
static void gemm_8192_on(const char *name, gpucfg *g, uint64_t waves, double lo, double hi)
{
    load_gpu(name, g);
    op_desc op = gemm(1, 8192, 8192, 8192, GPUCFG_BF16);
    compute_cost c = cost_of(g, &op);
    assert_int_equal(c.tiles, 2048);
    assert_int_equal(c.waves, waves);
    assert_true(compute_op_efficiency(g, &op) <= g->gemm_efficiency);
    double eff = 2.0 * 8192 * 8192 * 8192 / ((double)(c.total_ps - c.overhead_ps) * 1e-12) / (g->tflops[GPUCFG_BF16] * 1e12);
    if (eff < lo || eff > hi || eff > g->gemm_efficiency)
        fail_msg("8192^3 bf16 on %s: efficiency %.4f, expected %.3f-%.3f", name, eff, lo, hi);
    /* fp8 doubles the peak: the same GEMM takes about half the math time, divided by the FP8 GEMMs' own
     * fraction of the fp8 peak where the GPU gives one (fp8_gemm_efficiency); the model's math on both sides,
     * without a measured sweep's factor (b200's bf16 sweep puts 1.002 on this shape, its FP8 none) */
    op_desc op8 = gemm(1, 8192, 8192, 8192, GPUCFG_FP8);
    double e8 = g->fp8_gemm_efficiency > 0 ? g->fp8_gemm_efficiency : g->gemm_efficiency;
    double want8 = (double)c.math_ps / c.sweep_ratio / 2 * g->gemm_efficiency / e8;
    compute_cost c8 = cost_of(g, &op8);
    assert_true(fabs((double)c8.math_ps / c8.sweep_ratio - want8) <= want8 / 500);
}

static void large_gemm_efficiency_h200(void **state)
{
    (void)state;
    gpucfg g;
    /* docs/references.md (GPUs): 8192^3 bf16 on one H200 measured 770-800 TFLOP/s of 989. The model: 2048 tiles
     * in ceil(2048 / 132) = 16 waves, 15.5 / 16 x 0.8 = 0.776. */
    gemm_8192_on("h200", &g, 16, 0.75, 0.85);
}

/* The H100's own measured points (configs/gpus/h100-sxm.yaml [AZ]: Azure ND H100 v5, cuBLASLt with random
 * inputs, BabelStream): an FP8 8192^3 GEMM comes back at 1,290.1 TFLOP/s within a point of the peak (the
 * kernel's own time, without kernel_overhead, as the benchmark loops it), the larger shapes of the same sweep
 * (16384^3 1,377.3, 32768^3 1,382.2 TFLOP/s) at most 5 points under theirs, never above, and a copy kernel
 * at 2.90 TB/s. */
static double fp8_fraction(const gpucfg *g, uint64_t m, uint64_t n, uint64_t k)
{
    op_desc op = gemm(1, m, n, k, GPUCFG_FP8);
    compute_cost c = cost_of(g, &op);
    return 2.0 * m * n * k / ((double)(c.total_ps - c.overhead_ps) * 1e-12) / (g->tflops[GPUCFG_FP8] * 1e12);
}

static void h100_measured_points(void **state)
{
    (void)state;
    gpucfg g;
    load_gpu("h100-sxm", &g);
    double e8192 = fp8_fraction(&g, 8192, 8192, 8192);
    if (fabs(e8192 - 1290.1 / 1979) > 0.01)
        fail_msg("fp8 8192^3 on h100-sxm: %.4f of the peak, measured %.4f", e8192, 1290.1 / 1979);
    static const struct { uint64_t s; double tflops; } big[] = { { 16384, 1377.3 }, { 32768, 1382.2 } };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        double e = fp8_fraction(&g, big[i].s, big[i].s, big[i].s), want = big[i].tflops / 1979;
        if (e > want || e < want - 0.05)
            fail_msg("fp8 %llu^3 on h100-sxm: %.4f of the peak, measured %.4f", (unsigned long long)big[i].s, e, want);
    }
    /* BabelStream copy: 2.90 TB/s (3.35 x 0.866 = 2.9011); 2.9011 GB -> 1 ms */
    op_desc m = { "copy", OP_MEM, GPUCFG_BF16, 1, 1, 1, 1, 0, 2.9011e9, 0, 0, 0, 0 };
    assert_int_equal(cost_of(&g, &m).memory_ps, 1000000000ll);
}

/* The H200's own measured points (configs/gpus/h200.yaml [AZ]: Azure ND H200 v5, the same cuBLASLt and
 * BabelStream benchmarks as the H100's): an FP8 8192^3 GEMM comes back at 1,300.6 TFLOP/s within a point of the
 * peak, the larger shapes of the same sweep (16384^3 1,366.3, 32768^3 1,349.5, 6144 x 12288 x 12288 1,318.0
 * TFLOP/s) at most 5 points under theirs, never above, and a copy kernel at 4.01 TB/s. The H200 has the H100's
 * compute: its FP8 fraction lies within a point of the H100's. */
static void h200_measured_points(void **state)
{
    (void)state;
    gpucfg g, h100;
    load_gpu("h200", &g);
    double e8192 = fp8_fraction(&g, 8192, 8192, 8192);
    if (fabs(e8192 - 1300.6 / 1979) > 0.01)
        fail_msg("fp8 8192^3 on h200: %.4f of the peak, measured %.4f", e8192, 1300.6 / 1979);
    static const struct { uint64_t m, n, k; double tflops; } big[] = {
        { 16384, 16384, 16384, 1366.3 }, { 32768, 32768, 32768, 1349.5 }, { 6144, 12288, 12288, 1318.0 } };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        double e = fp8_fraction(&g, big[i].m, big[i].n, big[i].k), want = big[i].tflops / 1979;
        if (e > want || e < want - 0.05)
            fail_msg("fp8 %llu x %llu x %llu on h200: %.4f of the peak, measured %.4f", (unsigned long long)big[i].m,
                     (unsigned long long)big[i].n, (unsigned long long)big[i].k, e, want);
    }
    load_gpu("h100-sxm", &h100);
    assert_true(fabs(e8192 - fp8_fraction(&h100, 8192, 8192, 8192)) < 0.01);
    /* BabelStream copy: 4.01 TB/s (4.8 x 0.835 = 4.008); 4.008 GB -> 1 ms */
    op_desc m = { "copy", OP_MEM, GPUCFG_BF16, 1, 1, 1, 1, 0, 4.008e9, 0, 0, 0, 0 };
    assert_int_equal(cost_of(&g, &m).memory_ps, 1000000000ll);
}

/* The B200's efficiency curve: the measured 8192^3 point (pytorch/ao PR #2427: 63.1 % of 2,250 TFLOP/s) comes
 * back within a point; the fraction of the peak rises with K at a fixed grid (the launch gap amortised) and
 * with M in whole waves, never above gemm_efficiency, and reaches it in the limit; one tile past a whole
 * wave costs a wave. */
static void blackwell_gemm_curve(void **state)
{
    (void)state;
    gpucfg g;
    gemm_8192_on("b200", &g, 14, 0.621, 0.641); /* ceil(2048 / 148) waves; measured 0.631 */
    /* sweep 0: K grows at a fixed grid of 148 x 2 tiles (two full waves); sweep 1: M grows in whole waves
     * (148 tiles of 128 x 256 each). The fraction never falls, never passes gemm_efficiency, and nears it. */
    for (int sweep = 0; sweep < 2; sweep++) {
        double prev = 0;
        /* K up to 2^20 (a few ms of math) so that the fitted 17.5 us per kernel is under 1 % */
        for (uint64_t x = 1; x <= (sweep ? 256u : 4096u); x *= 2) {
            op_desc o = sweep ? gemm(1, 128 * 148 * x, 256, 8192, GPUCFG_FP8) : gemm(1, 128 * 148, 512, 256 * x, GPUCFG_FP8);
            double e = compute_op_efficiency(&g, &o);
            assert_true(e >= prev && e <= g.fp8_gemm_efficiency);
            prev = e;
        }
        assert_true(prev > 0.99 * g.fp8_gemm_efficiency);
    }
    /* the same grid in bf16 reaches gemm_efficiency instead */
    op_desc wide = gemm(1, 128 * 148 * 256, 256, 8192, GPUCFG_BF16);
    assert_true(compute_op_efficiency(&g, &wide) > 0.99 * g.gemm_efficiency);
    /* 149 tiles take two waves: one tile more than a wave doubles the math */
    op_desc full = gemm(1, 128 * 148, 256, 4096, GPUCFG_FP8), over = gemm(1, 128 * 149, 256, 4096, GPUCFG_FP8);
    assert_true(llabs(cost_of(&g, &over).math_ps - 2 * cost_of(&g, &full).math_ps) <= 1); /* ps rounding */
    /* memory-bound kernels at the measured streaming rate: 6.699 TB/s (7.7 x 0.87); 6.699 GB -> 1 ms */
    op_desc m = { "ln.fwd", OP_MEM, GPUCFG_BF16, 1, 1, 1, 1, 0, 6.699e9, 0, 0, 0, 0 };
    assert_int_equal(cost_of(&g, &m).memory_ps, 1000000000ll);
}

static void mem_op_exact(void **state)
{
    (void)state;
    gpucfg g;
    load_gpu("h200", &g);
    /* 4.008 GB at 4.8 TB/s x 0.835 = 4.008 TB/s: exactly 1 ms, plus 17.5 us */
    op_desc op = { "layernorm.fwd", OP_MEM, GPUCFG_BF16, 1, 2004000000ull, 1, 1, 0, 4.008e9, 0, 0, 0, 0 };
    compute_cost c = cost_of(&g, &op);
    assert_int_equal(c.memory_ps, 1000000000ll);
    assert_int_equal(c.math_ps, 0);
    assert_int_equal(c.tiles, 0);
    assert_int_equal(compute_op_ps(&g, &op), 1000000000ll + 17500000ll);
    /* a100: 2.04 TB/s x 0.60 (fitted, docs/calibration.md) = 1.224 TB/s; 1224 bytes -> 1 ns */
    load_gpu("a100-80gb", &g);
    op.bytes = 1224;
    assert_int_equal(compute_op_ps(&g, &op), 1000 + 17500000);
    /* rounding goes up: one byte more is a partial picosecond */
    op.bytes = 1225;
    assert_int_equal(compute_op_ps(&g, &op), 1001 + 17500000);
    /* no traffic: the overhead alone (fitted, 17.5 us) */
    op.bytes = 0;
    assert_int_equal(compute_op_ps(&g, &op), 17500000);
}

/* Flash attention kernels: their FLOPs at the GPU's attention efficiency (cuDNN's measured causal figures on
 * H100, FlashAttention-2's, the defaults, on A100), the memory roofline below, plus the overhead. */
static void attention_kernel_time(void **state)
{
    (void)state;
    gpucfg g;
    load_gpu("h100-sxm", &g);
    assert_true(g.attention_fwd_efficiency == 0.651 && g.attention_bwd_efficiency == 0.547);
    /* FlashAttention-3's up-to figures, set here for round numbers: 741.75e9 FLOPs at 989 TFLOP/s x 0.75 take
     * exactly 1 ms */
    g.attention_fwd_efficiency = 0.75, g.attention_bwd_efficiency = 0.525;
    op_desc f = { "attn.flash.fwd", OP_ATTN_FWD, GPUCFG_BF16, 32, 8192, 8192, 128, 741.75e9, 1e6, 0, 0, 0, 0 };
    compute_cost c = cost_of(&g, &f);
    assert_int_equal(c.math_ps, 1000000000ll);
    assert_int_equal(c.total_ps, 1000000000ll + 17500000ll);
    assert_false(c.memory_bound);
    assert_int_equal(c.tiles, 0);
    assert_true(fabs(compute_op_efficiency(&g, &f) - 0.75 * 1e9 / 1.0175e9) < 1e-12);
    /* the backward at 0.525 of the peak: 519.225e9 FLOPs take 1 ms */
    op_desc b = f;
    b.kind = OP_ATTN_BWD, b.name = "attn.flash.bwd", b.flops = 519.225e9;
    assert_int_equal(cost_of(&g, &b).math_ps, 1000000000ll);
    /* little work, much traffic: the memory side (3.35 TB/s x 0.866, the measured copy rate) */
    f.flops = 1, f.bytes = 2.9011e9;
    c = cost_of(&g, &f);
    assert_true(c.memory_bound);
    assert_int_equal(c.memory_ps, 1000000000ll);
    /* A100 (no attention fields in its file): the FlashAttention-2 defaults */
    load_gpu("a100-80gb", &g);
    assert_true(g.attention_fwd_efficiency == 0.73 && g.attention_bwd_efficiency == 0.63);
    f.flops = 312e12 * 0.73 * 1e-3, f.bytes = 0;
    assert_int_equal(cost_of(&g, &f).math_ps, 1000000000ll);
    /* no fp8 peak on the A100: an error, as for a GEMM */
    f.dtype = GPUCFG_FP8;
    cxl_err e;
    assert_int_equal(compute_op_cost(&g, &f, &c, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "attention 'attn.flash.fwd' in fp8"));
}

static void errors(void **state)
{
    (void)state;
    gpucfg g;
    load_gpu("a100-80gb", &g);
    cxl_err e;
    compute_cost c;
    /* A100 has no fp8 peak: the caller should have run parallel_check */
    op_desc op = gemm(1, 1024, 1024, 1024, GPUCFG_FP8);
    assert_int_equal(compute_op_ps(&g, &op), CXL_ECONFIG);
    assert_int_equal(compute_op_cost(&g, &op, &c, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "GPU 'a100-80gb' has no fp8 peak"));
    assert_true(compute_op_efficiency(&g, &op) == (double)CXL_ECONFIG);
    /* a memory-bound op in fp8 needs no peak */
    op_desc mem = { "act.fp8", OP_MEM, GPUCFG_FP8, 1, 1000, 1, 1, 0, 1224, 0, 0, 0, 0 }; /* 1 ns at 0.60 x 2.04 TB/s */
    assert_int_equal(compute_op_ps(&g, &mem), 1000 + 17500000);
    assert_true(compute_op_efficiency(&g, &mem) == 0);
    op.dtype = GPUCFG_NDTYPES;
    assert_int_equal(compute_op_ps(&g, &op), CXL_EINTERNAL);
    op.dtype = GPUCFG_BF16, op.kind = 7;
    assert_int_equal(compute_op_cost(&g, &op, &c, &e), CXL_EINTERNAL);
    assert_non_null(strstr(e.msg, "unknown kind 7"));
    /* beyond INT64_MAX ps (9.2e6 s): 1e30 bytes */
    mem.bytes = 1e30;
    assert_int_equal(compute_op_ps(&g, &mem), CXL_ELIMIT);
}

/* A GEMM whose per-expert calls run over several streams (op.h streams; Transformer Engine's
 * multi_stream_cublas_gemm, expert i on stream i % 4) pays the launch gaps of its longest stream,
 * ceil(calls / streams), plus its launches outside the streams (an MXFP8 GEMM's two swizzle kernels); its math
 * and memory sides do not change. */
/* gpu.gemm_sweep (compute.h, "Measured sweep"): the points are read and sorted by FLOPs; a GEMM at a point
 * runs at the measured rate exactly; between two points the model's math time takes the points' factors
 * (measured time over the model's) linear in log2 of the FLOPs; outside the points' FLOPs, for a dtype
 * without points, an MXFP8 GEMM and a grouped GEMM over several streams the model is unchanged; on fewer
 * SMs (compute_fewer_sms) a point keeps its rate per SM. */
static void gemm_sweep_read_and_interpolated(void **state)
{
    (void)state;
    const char *p = tmpdir_write("sweep.yaml",
        "name: sw\nbf16_tflops: 1000\nfp8_tflops: 2000\nhbm: 80GB\nhbm_bandwidth: 3TB/s\nsms: 132\n"
        "gemm_sweep:\n"
        "  - { m: 8192, n: 8192, k: 8192, dtype: fp8, tflops: 1300 }\n"
        "  - { m: 2048, n: 2048, k: 2048, dtype: fp8, tflops: 1000 }\n");
    gpucfg g, off;
    load_gpu(p, &g);
    assert_int_equal(g.gemm_sweep.n, 2);
    assert_int_equal(g.gemm_sweep.pt[0].m, 2048); /* sorted by FLOPs */
    assert_int_equal(g.gemm_sweep.pt[1].m, 8192);
    assert_int_equal(g.gemm_sweep.pt[0].dtype, GPUCFG_FP8);
    off = g;
    off.gemm_sweep.n = 0;
    /* at the points: the measured rate (the body is the math: no HBM bound at these shapes) */
    static const struct { uint64_t s; double tflops; } pts[] = { { 2048, 1000 }, { 8192, 1300 } };
    double r[2];
    for (int i = 0; i < 2; i++) {
        op_desc op = gemm(1, pts[i].s, pts[i].s, pts[i].s, GPUCFG_FP8);
        compute_cost c = cost_of(&g, &op), m = cost_of(&off, &op);
        double want_ps = op.flops / (pts[i].tflops * 1e12) * 1e12;
        assert_true(fabs((double)c.math_ps - want_ps) <= 1.0);
        r[i] = want_ps / (double)m.math_ps;
        assert_true(fabs(c.sweep_ratio - r[i]) < 1e-6);
    }
    /* between them: 4096 x 4096 x 4096 is 3 of log2(64) = 6 octaves of FLOPs above 2048^3: halfway; a
     * 4096 x 8192 x 2048 product has the same FLOPs and takes the same factor on its own model time */
    op_desc mid = gemm(1, 4096, 4096, 4096, GPUCFG_FP8), mid2 = gemm(1, 4096, 8192, 2048, GPUCFG_FP8);
    double want = r[0] + 0.5 * (r[1] - r[0]);
    assert_true(fabs(cost_of(&g, &mid).sweep_ratio - want) < 1e-6);
    assert_true(fabs(cost_of(&g, &mid2).sweep_ratio - want) < 1e-6);
    double model_mid = (double)cost_of(&off, &mid).math_ps;
    assert_true(fabs((double)cost_of(&g, &mid).math_ps - want * model_mid) <= 1e-6 * model_mid);
    /* a quarter of the way: 2^(log2(2048^3 x 2) + 1.5) FLOPs, 2048 x 2048 x 2048 x 2^1.5 ~ 2048 x 4096 x 2896 */
    op_desc q = gemm(1, 2048, 4096, 2896, GPUCFG_FP8);
    double w = (log2(q.flops) - log2(2.0 * 2048 * 2048 * 2048)) / 6.0;
    assert_true(fabs(cost_of(&g, &q).sweep_ratio - (r[0] + w * (r[1] - r[0]))) < 1e-6);
    /* outside the points, another dtype, MXFP8, a grouped GEMM over streams: the model alone */
    op_desc small = gemm(1, 1024, 1024, 1024, GPUCFG_FP8), big = gemm(1, 16384, 16384, 16384, GPUCFG_FP8);
    op_desc bf = gemm(1, 4096, 4096, 4096, GPUCFG_BF16), mx = mid, grouped = gemm(8, 512, 4096, 4096, GPUCFG_FP8);
    mx.block_scaled = 1;
    grouped.calls = grouped.launches = 8;
    grouped.streams = 4;
    const op_desc *same[] = { &small, &big, &bf, &mx, &grouped };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        compute_cost c = cost_of(&g, same[i]);
        assert_true(c.sweep_ratio == 1.0);
        assert_int_equal(c.total_ps, cost_of(&off, same[i]).total_ps);
    }
    /* one stream: the grouped GEMM's products run one after another, each as the sweep times one */
    grouped.streams = 1;
    op_desc one = gemm(1, 512, 4096, 4096, GPUCFG_FP8);
    assert_true(fabs(cost_of(&g, &grouped).sweep_ratio - cost_of(&g, &one).sweep_ratio) < 1e-12);
    /* on 66 of the 132 SMs a point's factor is the same: the rate per SM is the measured one */
    gpucfg half = g;
    compute_fewer_sms(&half, 66);
    assert_int_equal(half.sms, 66);
    assert_true(half.tflops[GPUCFG_FP8] == 1000 && half.gemm_sweep.pt[1].tflops == 650);
    op_desc p8 = gemm(1, 8192, 8192, 8192, GPUCFG_FP8);
    assert_true(fabs(cost_of(&half, &p8).sweep_ratio - r[1]) < 1e-6);
    /* [] turns it off */
    p = tmpdir_write("sweep0.yaml", "name: sw\nbf16_tflops: 1000\nhbm: 80GB\nhbm_bandwidth: 3TB/s\ngemm_sweep: []\n");
    load_gpu(p, &g);
    assert_int_equal(g.gemm_sweep.n, 0);
}

/* The shipped sweeps: h100-sxm, h200 and gb200 give their cuBLASLt FP8 points back, b200 its cuBLAS bf16 and
 * cuBLASLt MXFP8 ones (configs/gpus/ cite them); a100-80gb has none. */
static void gemm_sweep_presets(void **state)
{
    (void)state;
    static const struct { const char *gpu; double t4096; } want[] = {
        { "h100-sxm", 1216.9 }, { "h200", 1249.1 }, { "gb200", 2834.6 } };
    gpucfg g;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        load_gpu(want[i].gpu, &g);
        assert_int_equal(g.gemm_sweep.n, 8);
        op_desc op = gemm(1, 4096, 4096, 4096, GPUCFG_FP8);
        compute_cost c = cost_of(&g, &op);
        double tflops = op.flops / (double)(c.total_ps - c.overhead_ps);
        if (fabs(tflops - want[i].t4096) > 0.05)
            fail_msg("%s: fp8 4096^3 at %.2f TFLOP/s, measured %.1f", want[i].gpu, tflops, want[i].t4096);
    }
    /* the dump (train --dump-config) binds back to the same points */
    load_gpu("gb200", &g);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    compose_dump(m, &gpucfg_kind, &g, 0);
    assert_int_equal(fclose(m), 0);
    assert_non_null(strstr(text, "gemm_sweep:\n  - { m: 1024, n: 1024, k: 1024, dtype: fp8, tflops: 489.2 }"));
    gpucfg back;
    load_gpu(tmpdir_write("dumped.yaml", text), &back);
    free(text);
    assert_int_equal(back.gemm_sweep.n, g.gemm_sweep.n);
    for (size_t i = 0; i < g.gemm_sweep.n; i++) {
        const gpucfg_sweep_point *a = &g.gemm_sweep.pt[i], *b = &back.gemm_sweep.pt[i];
        assert_true(a->m == b->m && a->n == b->n && a->k == b->k && a->dtype == b->dtype && a->tflops == b->tflops);
    }
    load_gpu("a100-80gb", &g);
    assert_int_equal(g.gemm_sweep.n, 0);
    /* b200: pytorch/ao PR #2427's bf16 column (torch.mm on a B200), seven square shapes 1024^3 to 8192^3; a bf16
     * GEMM at a point runs at the measured rate, one between points (5120^3) at the factor interpolated in log2
     * FLOPs; MXFP8 GEMMs at danielvegamyhre/gemm's cuBLASLt MXFP8 points (2048^3 to 16384^3, after the bf16 ones:
     * sorted by dtype), per-tensor FP8 GEMMs keep the model (no B200 FP8 sweep) */
    load_gpu("b200", &g);
    assert_int_equal(g.gemm_sweep.n, 11);
    static const struct { uint64_t d; double tflops; } b200_bf16[] = {
        { 1024, 423 }, { 1536, 921 }, { 2048, 1130 }, { 3072, 1510 }, { 4096, 1410 }, { 6144, 1450 }, { 8192, 1420 } };
    double r[sizeof b200_bf16 / sizeof b200_bf16[0]];
    for (size_t i = 0; i < sizeof b200_bf16 / sizeof b200_bf16[0]; i++) {
        uint64_t d = b200_bf16[i].d;
        assert_int_equal(g.gemm_sweep.pt[i].m, d);
        assert_int_equal(g.gemm_sweep.pt[i].dtype, GPUCFG_BF16);
        op_desc op = gemm(1, d, d, d, GPUCFG_BF16);
        compute_cost c = cost_of(&g, &op);
        double tflops = op.flops / (double)(c.total_ps - c.overhead_ps);
        if (fabs(tflops - b200_bf16[i].tflops) > 0.05)
            fail_msg("b200: bf16 %llu^3 at %.2f TFLOP/s, measured %.0f", (unsigned long long)d, tflops,
                     b200_bf16[i].tflops);
        r[i] = c.sweep_ratio;
    }
    op_desc mid = gemm(1, 5120, 5120, 5120, GPUCFG_BF16);
    double w = (log2(2.0 * 5120 * 5120 * 5120) - log2(2.0 * 4096 * 4096 * 4096)) /
               (log2(2.0 * 6144 * 6144 * 6144) - log2(2.0 * 4096 * 4096 * 4096));
    assert_true(fabs(cost_of(&g, &mid).sweep_ratio - (r[4] + w * (r[5] - r[4]))) < 1e-6);
    assert_true(fabs(r[6] - 1.0) < 0.01); /* the same run's 8192^3 point set gemm_efficiency */
    op_desc f8 = gemm(1, 4096, 4096, 4096, GPUCFG_FP8);
    assert_true(cost_of(&g, &f8).sweep_ratio == 1.0);
    static const struct { uint64_t d; double tflops; } b200_mx[] = {
        { 2048, 996.1 }, { 4096, 2539.9 }, { 8192, 2626.2 }, { 16384, 2516.5 } };
    for (size_t i = 0; i < sizeof b200_mx / sizeof b200_mx[0]; i++) {
        const gpucfg_sweep_point *pt = &g.gemm_sweep.pt[7 + i];
        assert_true(pt->m == b200_mx[i].d && pt->dtype == GPUCFG_SWEEP_MXFP8 && pt->tflops == b200_mx[i].tflops);
        op_desc mx = gemm(1, b200_mx[i].d, b200_mx[i].d, b200_mx[i].d, GPUCFG_FP8);
        mx.block_scaled = 1;
        compute_cost c = cost_of(&g, &mx);
        double tflops = mx.flops / (double)(c.total_ps - c.overhead_ps);
        if (fabs(tflops - b200_mx[i].tflops) > 0.05)
            fail_msg("b200: mxfp8 %llu^3 at %.2f TFLOP/s, measured %.1f", (unsigned long long)b200_mx[i].d, tflops,
                     b200_mx[i].tflops);
    }
    /* the same shape per-tensor (no fp8 points) and in bf16 read none of the mxfp8 points */
    assert_true(cost_of(&g, &f8).sweep_ratio == 1.0);
    op_desc b16k = gemm(1, 16384, 16384, 16384, GPUCFG_BF16);
    assert_true(cost_of(&g, &b16k).sweep_ratio == 1.0); /* beyond the bf16 points (8192^3) */
    /* the dump binds back to the mxfp8 points */
    text = NULL;
    len = 0;
    m = open_memstream(&text, &len);
    assert_non_null(m);
    compose_dump(m, &gpucfg_kind, &g, 0);
    assert_int_equal(fclose(m), 0);
    assert_non_null(strstr(text, "{ m: 2048, n: 2048, k: 2048, dtype: mxfp8, tflops: 996.1 }"));
    load_gpu(tmpdir_write("dumped_b200.yaml", text), &back);
    free(text);
    assert_int_equal(back.gemm_sweep.n, 11);
    assert_true(back.gemm_sweep.pt[10].dtype == GPUCFG_SWEEP_MXFP8 && back.gemm_sweep.pt[10].tflops == 2516.5);
}

static void gemm_sweep_errors(void **state)
{
    (void)state;
    static const struct { const char *text; int line; const char *want; } bad[] = {
        { "gemm_sweep: 3\n", 5, "expected a sequence" },
        { "gemm_sweep:\n  - 3\n", 6, "expected a mapping" },
        { "gemm_sweep:\n  - { m: 1, n: 1, k: 1, dtype: fp9, tflops: 1 }\n", 6, "dtype" },
        { "gemm_sweep:\n  - { m: 1, n: 1, dtype: fp8, tflops: 1 }\n", 6, "k" },
        { "gemm_sweep:\n  - { m: 1, n: 1, k: 1, dtype: fp8, tflops: 0 }\n", 6, "tflops" },
        { "gemm_sweep:\n  - { m: 1, n: 1, k: 1, dtype: fp8, tflops: 1 }\n  - { m: 1, n: 1, k: 1, dtype: fp8, tflops: 2 }\n",
          7, "again" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "name: bad\nbf16_tflops: 100\nhbm: 16GB\nhbm_bandwidth: 1TB/s\n%s", bad[i].text);
        const char *p = tmpdir_write("badsweep.yaml", text);
        gpucfg g;
        cxl_err e;
        if (gpucfg_load(p, &g, &e) != CXL_ECONFIG || e.line != bad[i].line || !strstr(e.msg, bad[i].want))
            fail_msg("case %zu: line %d: %s", i, e.line, e.msg);
    }
    /* a rate above the dtype's peak: refused when the experiment is checked, at the key */
    cxl_err e;
    expcfg *x = tfx_try_load_text("peak.yaml", "name: b\nmodel: llama3-8b\ngpu:\n  extends: h100-sxm\n  gemm_sweep:\n"
                                  "    - { m: 1024, n: 1024, k: 1024, dtype: fp8, tflops: 2000 }\n"
                                  "cluster: { extends: dgx-h100, nodes: 1 }\ntraining: { global_batch: 8, dp: 8 }\n", &e);
    if (x)
        fail_msg("a sweep point above the fp8 peak was accepted");
    if (e.line != 6 || !strstr(e.msg, "above the fp8 peak of gpu 'h100-sxm'") || !strstr(e.msg, "up to 1979"))
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
    /* an mxfp8 point: against the fp8 peak, and only on a GPU with mxfp8: true */
    x = tfx_try_load_text("mxpeak.yaml", "name: b\nmodel: llama3-8b\ngpu:\n  extends: b200\n  gemm_sweep:\n"
                          "    - { m: 1024, n: 1024, k: 1024, dtype: mxfp8, tflops: 4600 }\n"
                          "cluster: { extends: dgx-b200, nodes: 1 }\ntraining: { global_batch: 8, dp: 8 }\n", &e);
    if (x)
        fail_msg("an mxfp8 sweep point above the fp8 peak was accepted");
    if (e.line != 6 || !strstr(e.msg, "in mxfp8 at 4600 TFLOP/s is above the fp8 peak of gpu 'b200'"))
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
    x = tfx_try_load_text("mxh100.yaml", "name: b\nmodel: llama3-8b\ngpu:\n  extends: h100-sxm\n  gemm_sweep:\n"
                          "    - { m: 1024, n: 1024, k: 1024, dtype: mxfp8, tflops: 500 }\n"
                          "cluster: { extends: dgx-h100, nodes: 1 }\ntraining: { global_batch: 8, dp: 8 }\n", &e);
    if (x)
        fail_msg("an mxfp8 sweep point on a GPU without MXFP8 was accepted");
    if (e.line != 6 || !strstr(e.msg, "has mxfp8: false") || !strstr(e.msg, "valid: mxfp8 points on a GPU with"))
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
}

static void grouped_gemm_stream_gaps(void **state)
{
    (void)state;
    gpucfg g;
    load_gpu("h100-sxm", &g);
    int64_t ko = (int64_t)g.kernel_overhead_ps;
    op_desc op = gemm(16, 512, 1536, 2048, GPUCFG_BF16);
    op.launches = op.calls = 16;
    compute_cost one = cost_of(&g, &op);
    assert_int_equal(one.overhead_ps, 16 * ko);
    static const struct { uint32_t calls, launches, streams; int64_t gaps; } cases[] = {
        { 16, 16, 0, 16 }, { 16, 16, 1, 16 }, { 16, 16, 4, 4 }, { 17, 17, 4, 5 }, { 3, 3, 3, 1 },
        { 16, 18, 4, 6 },  /* MXFP8: two swizzle kernels before the fork */
        { 16, 16, 16, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        op.calls = cases[i].calls, op.launches = cases[i].launches, op.streams = cases[i].streams;
        compute_cost c = cost_of(&g, &op);
        assert_int_equal(c.overhead_ps, cases[i].gaps * ko);
        assert_int_equal(c.math_ps, one.math_ps);
        assert_int_equal(c.memory_ps, one.memory_ps);
        assert_int_equal(c.total_ps, c.overhead_ps + (c.math_ps > c.memory_ps ? c.math_ps : c.memory_ps));
    }
    /* a memory-bound kernel's launches stay in series whatever its streams field says */
    op_desc m = { "copy", OP_MEM, GPUCFG_BF16, 1, 1, 1, 1, 0, 2.9011e9, 16, 0, 0, 4 };
    assert_int_equal(cost_of(&g, &m).overhead_ps, 16 * ko);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grouped_gemm_stream_gaps),
        cmocka_unit_test(gemm_sweep_read_and_interpolated),
        cmocka_unit_test(gemm_sweep_presets),
        cmocka_unit_test(gemm_sweep_errors),
        cmocka_unit_test(presets_have_compute_fields),
        cmocka_unit_test(older_gpu_file_gets_defaults),
        cmocka_unit_test(gpu_field_errors),
        cmocka_unit_test(gemm_time_scales_with_k),
        cmocka_unit_test(wave_quantization_step),
        cmocka_unit_test(grouped_gemm_launches_and_small_m),
        cmocka_unit_test(tile_choice_by_shape),
        cmocka_unit_test(memory_bound_gemm_falls_to_roofline),
        cmocka_unit_test(large_gemm_efficiency_h200),
        cmocka_unit_test(h100_measured_points),
        cmocka_unit_test(h200_measured_points),
        cmocka_unit_test(blackwell_gemm_curve),
        cmocka_unit_test(mem_op_exact),
        cmocka_unit_test(attention_kernel_time),
        cmocka_unit_test(errors),
    };
    return cmocka_run_group_tests_name("compute", tests, tmpdir_setup, tmpdir_teardown);
}

/* test_param_gather.c - the distributed optimizer's parameter all-gather (train_pgather.c): its bytes per
 * weight (FP8 with per-tensor scaling and fp8_param_gather: 1 B; MXFP8 and 16-bit weights: 2 B), and
 * training.overlap_param_gather (Megatron-Core's forward pre-hooks: the gathers beside the first forward, each
 * layer waiting for its bucket) against the gather after the optimizer step; the keys' config errors. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "config/expcfg.h"
#include "out/ctrace.h"
#include "train/collalgo.h"
#include "train/train.h"

#include "train_fixture.h"

/* 2 nodes of 8 A100, dp 16: the gathers cross the NICs; 8 layers, so that there are buckets to overlap */
static const char head[] =
    "name: g\n"
    "model: { name: tiny, layers: 8, hidden: 1024, heads: 8, vocab: 4096, seq_len: 512, tied_embeddings: true }\n"
    "%s"
    "cluster: { extends: %s, nodes: 2 }\n";

static expcfg *try_load_on(const char *gpu, const char *cluster, const char *training, cxl_err *e)
{
    char text[2048], h[512];
    snprintf(h, sizeof h, head, gpu, cluster);
    snprintf(text, sizeof text, "%straining: { global_batch: 64, micro_batch: 2%s }\n", h, training);
    return tfx_try_load_text("g.yaml", text, e);
}

/* training keys after global_batch 64, micro_batch 2; dp 16 and zero 1 unless `training` begins with dp */
static expcfg *load_on(const char *gpu, const char *cluster, const char *training)
{
    cxl_err e;
    char keys[512];
    snprintf(keys, sizeof keys, "%s%s", strncmp(training, ", dp:", 5) ? ", dp: 16, zero: 1" : "", training);
    expcfg *x = try_load_on(gpu, cluster, keys, &e);
    if (!x)
        fail_msg("%s: %s", training, e.msg);
    return x;
}

typedef struct outcome {
    int64_t iteration_ps;
    double compute_s, exposed_dp_s;
    uint64_t gathers, gather_bytes; /* the parameter all-gathers over all stages: calls, bytes per rank */
} outcome;

static outcome run_on(const char *gpu, const char *cluster, const char *training)
{
    expcfg *x = load_on(gpu, cluster, training);
    train_result r;
    tfx_run(x, NULL, &r);
    outcome o = { r.iteration_ps, r.breakdown_s[TRAIN_BK_COMPUTE], r.breakdown_s[TRAIN_BK_DP], 0, 0 };
    for (uint32_t i = 0; i < r.ncolls; i++)
        if (r.colls[i].group == TRAIN_GROUP_DP && r.colls[i].op == COLLALGO_ALLGATHER) {
            o.gathers += r.colls[i].count;
            o.gather_bytes += r.colls[i].count * r.colls[i].bytes;
        }
    train_result_free(&r);
    free(x);
    return o;
}

static outcome run(const char *training) { return run_on("gpu: a100-80gb\n", "dgx-a100", training); }

static void off_by_default(void **state)
{
    (void)state;
    /* Megatron-Core's DistributedDataParallelConfig.overlap_param_gather = False */
    expcfg *x = load_on("gpu: a100-80gb\n", "dgx-a100", "");
    assert_int_equal(x->train.overlap_param_gather, 0);
    assert_int_equal(x->train.align_param_gather, 0);
    free(x);
    outcome def = run(", overlap_grad_reduce: true");
    outcome off = run(", overlap_grad_reduce: true, overlap_param_gather: false");
    assert_true(def.iteration_ps == off.iteration_ps);
    assert_true(def.gather_bytes == off.gather_bytes && def.gathers > 0);
}

static void overlapped_with_the_first_forward(void **state)
{
    (void)state;
    const char *sms0 = "gpu: { extends: a100-80gb, collective_sms: 0 }\n";
    outcome off = run(", overlap_grad_reduce: true, grad_bucket: 4MB");
    outcome on = run(", overlap_grad_reduce: true, grad_bucket: 4MB, overlap_param_gather: true");
    outcome off0 = run_on(sms0, "dgx-a100", ", overlap_grad_reduce: true, grad_bucket: 4MB");
    outcome on0 = run_on(sms0, "dgx-a100", ", overlap_grad_reduce: true, grad_bucket: 4MB, overlap_param_gather: true");
    /* the same bytes, in several buckets */
    assert_true(on.gather_bytes == off.gather_bytes);
    assert_true(on.gathers > 1);
    /* the gathers hide under the forward but the first bucket: less exposed, a shorter iteration */
    assert_true(on.exposed_dp_s < off.exposed_dp_s);
    assert_true(on.iteration_ps < off.iteration_ps);
    assert_true(on0.iteration_ps < off0.iteration_ps);
    /* they run beside kernels: NCCL's SMs taken from them (gpu.collective_sms), nothing taken without */
    assert_true(on.compute_s > off.compute_s);
    assert_true(fabs(on0.compute_s - off0.compute_s) < 1e-9 * off0.compute_s + 1e-12);
    /* one bucket for the whole stage (bucket_size None without overlap_grad_reduce): nothing for it to hide
     * under, the first module waits for all of it */
    outcome one_off = run("");
    outcome one_on = run(", overlap_param_gather: true");
    assert_true(one_on.gathers == 1);
    assert_true(one_on.iteration_ps <= one_off.iteration_ps);
    assert_true((double)(one_off.iteration_ps - one_on.iteration_ps) < 0.01 * (double)one_off.iteration_ps);
}

static void interleaved_and_aligned(void **state)
{
    (void)state;
    /* pp 2, two chunks per stage: chunk 1 is one bucket (disable_bucketing); align_param_gather issues it with
     * chunk 0's before the first forward, instead of at chunk 1's first layer */
    const char *pp = ", dp: 8, zero: 1, pp: 2, virtual_stages: 2, overlap_grad_reduce: true, grad_bucket: 4MB";
    char a[256], b[256], c[256];
    snprintf(a, sizeof a, "%s", pp);
    snprintf(b, sizeof b, "%s, overlap_param_gather: true", pp);
    snprintf(c, sizeof c, "%s, overlap_param_gather: true, align_param_gather: true", pp);
    outcome off = run(a), on = run(b), aligned = run(c);
    assert_true(on.gather_bytes == off.gather_bytes && aligned.gather_bytes == off.gather_bytes);
    /* per stage: chunk 0's buckets (a layer of 12.6 M parameters each at 2 M elements, the embedding) and
     * chunk 1's one: stage 0 holds the embedding and 2 + 2 layers (3 + 1); stage 1, a pipeline rank after the
     * first, buckets nothing (Megatron-Core's DDP sets bucket_size None for pp_rank > 0): 1 + 1 */
    assert_true(on.gathers == 6 && aligned.gathers == 6);
    assert_true(on.exposed_dp_s < off.exposed_dp_s);
    /* without align each stage's forward issues its gathers when its input has arrived, so the warm-up adds up
     * the stages' exposed first buckets (not shorter here); aligned, every stage issues them at the start */
    assert_true(aligned.iteration_ps < off.iteration_ps);
    assert_true(aligned.iteration_ps < on.iteration_ps);
}

/* Stage 0's slices named `name` in the trace of `training`: their [t0, t1) in microseconds, at most `cap` */
static size_t stage0_slices(const char *training, const char *name, double (*span)[2], size_t cap)
{
    char path[] = "/tmp/cxlsim_pg_trace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cxl_err e;
    ctrace *ct;
    assert_int_equal(ctrace_open(&ct, path, 0, INT64_MAX, &e), 0);
    train_opts o = { .trace = ct };
    expcfg *x = load_on("gpu: a100-80gb\n", "dgx-a100", training);
    train_result r;
    tfx_run(x, &o, &r);
    train_result_free(&r);
    free(x);
    assert_int_equal(ctrace_finish(ct, &e), 0);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char line[1024], want[128];
    snprintf(want, sizeof want, "{\"ph\":\"X\",\"name\":\"%s\",\"pid\":0,", name);
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        const char *ts = strstr(line, "\"ts\":"), *dur = strstr(line, "\"dur\":");
        if (strncmp(line, want, strlen(want)) || !ts || !dur)
            continue;
        assert_true(n < cap);
        span[n][0] = atof(ts + 5);
        span[n][1] = span[n][0] + atof(dur + 6);
        n++;
    }
    fclose(f);
    unlink(path);
    return n;
}

static void with_the_optimizer_step(void **state)
{
    (void)state;
    const char *pp = ", dp: 8, zero: 1, pp: 2, virtual_stages: 2, overlap_grad_reduce: true, grad_bucket: 4MB, "
                     "overlap_param_gather: true, align_param_gather: true";
    char with[512];
    snprintf(with, sizeof with, "%s, overlap_param_gather_with_optimizer_step: true", pp);
    outcome base = run(pp), opt = run(with);
    /* every chunk's DDP without bucketing (Megatron-Bridge's _ddp_wrap): stage 0's chunk 0 one bucket too, so
     * one gather per chunk and stage (4, was 3 + 1 + 1 + 1), the same bytes */
    assert_true(base.gathers == 6 && opt.gathers == 4);
    assert_true(opt.gather_bytes == base.gather_bytes);
    /* the optimizer step in two kernels (chunk 0's dense parameters' optimizer, then the rest's), chunk 0's gather
     * issued between them and running beside the second */
    double adam[4][2], gather[16][2];
    assert_int_equal(stage0_slices(pp, "optimizer.adam", adam, 4), 1);
    assert_int_equal(stage0_slices(with, "optimizer.adam", adam, 4), 2);
    size_t n = stage0_slices(with, "dp.params", gather, 16);
    size_t beside = 0;
    for (size_t i = 0; i < n; i++)
        beside += gather[i][0] >= adam[0][1] && gather[i][0] < adam[1][1];
    assert_int_equal(beside, 1);
    /* without overlap_param_gather the key only turns bucketing off: the gathers after the step, as before */
    char sync[512];
    snprintf(sync, sizeof sync, ", dp: 8, zero: 1, pp: 2, virtual_stages: 2, overlap_grad_reduce: true, "
             "grad_bucket: 4MB, overlap_param_gather_with_optimizer_step: true");
    assert_int_equal(stage0_slices(sync, "optimizer.adam", adam, 4), 1);
    assert_true(run(sync).gathers == 4);
}

static void bytes_per_weight(void **state)
{
    (void)state;
    /* FP8 with per-tensor scaling and fp8_param_gather: the layers' FP8 weights gathered as FP8 (1 B; the
     * uint8 buffer), the embedding in 16 bits; without fp8_param_gather, or with MXFP8 (its all-gather
     * through the gradient buffer viewed as bf16), 2 B per weight */
    const char *b200 = "gpu: b200\n";
    outcome bf16 = run_on(b200, "dgx-b200", ", precision: bf16");
    outcome fp8 = run_on(b200, "dgx-b200", ", precision: fp8");
    outcome cs = run_on(b200, "dgx-b200", ", precision: fp8, fp8_param_gather: true");
    outcome mx = run_on(b200, "dgx-b200", ", precision: fp8, fp8_recipe: mxfp8, fp8_param_gather: true");
    assert_true(fp8.gather_bytes == bf16.gather_bytes);
    assert_true(mx.gather_bytes == bf16.gather_bytes);
    /* tiny: 8 layers of 12.6 M parameters, a 4.2 M embedding: (8 x 12.6 + 2 x 4.2) / (2 x (8 x 12.6 + 4.2)) */
    double ratio = (double)cs.gather_bytes / (double)bf16.gather_bytes;
    assert_true(ratio > 0.5 && ratio < 0.56);
    /* the overlapped gather moves the same bytes */
    outcome cs_on = run_on(b200, "dgx-b200", ", precision: fp8, fp8_param_gather: true, overlap_param_gather: true");
    assert_true(cs_on.gather_bytes == cs.gather_bytes);
}

static void expect_error(const char *training, const char *a, const char *b)
{
    cxl_err e;
    char keys[512];
    snprintf(keys, sizeof keys, ", dp: 16%s", training);
    expcfg *x = try_load_on("gpu: a100-80gb\n", "dgx-a100", keys, &e);
    if (x)
        fail_msg("accepted: %s", training);
    assert_int_equal(e.code, CXL_ECONFIG);
    if (!strstr(e.msg, a) || !strstr(e.msg, b) || e.line != 5 || e.col <= 1)
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
}

static void config_errors(void **state)
{
    (void)state;
    expect_error(", zero: 0, overlap_param_gather: true", "training.overlap_param_gather", "zero is 0");
    expect_error(", zero: 3, overlap_param_gather: true", "training.overlap_param_gather", "zero is 3");
    expect_error(", data_parallel: fsdp, overlap_param_gather: true", "training.overlap_param_gather",
                 "fsdp");
    expect_error(", zero: 1, grad_reduce: deepspeed, overlap_param_gather: true", "training.overlap_param_gather",
                 "deepspeed");
    expect_error(", zero: 1, align_param_gather: true", "training.align_param_gather", "overlap_param_gather: true");
    expect_error(", zero: 1, overlap_param_gather: 2", "overlap_param_gather", "");
    expect_error(", zero: 1, overlap_param_gather: true, overlap_param_gather_with_optimizer_step: true",
                 "training.overlap_param_gather_with_optimizer_step", "virtual_stages > 1");
    expect_error(", zero: 0, overlap_param_gather_with_optimizer_step: true",
                 "training.overlap_param_gather_with_optimizer_step", "zero 1 or 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(off_by_default),
        cmocka_unit_test(overlapped_with_the_first_forward),
        cmocka_unit_test(interleaved_and_aligned),
        cmocka_unit_test(with_the_optimizer_step),
        cmocka_unit_test(bytes_per_weight),
        cmocka_unit_test(config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_fsdp.c - Megatron-FSDP as a data-parallel mode (training.data_parallel: fsdp; host/train/fsdp.h):
 * memory per GPU against ZeRO-1 and no sharding by the formulas, the collectives of an iteration (two
 * parameter all-gathers per unit and micro-batch, one gradient reduce-scatter, no gather after the
 * optimizer), the prefetch window and the reduce-scatter queue on Llama 3 8B, the overlap of the
 * collectives with compute, and the configuration errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/parallel.h"
#include "train/collalgo.h"
#include "train/compute.h"
#include "train/fsdp.h"
#include "train/gpumem.h"
#include "train/train.h"

#include "train_fixture.h"

/* A small GPT on one DGX A100 node (8 GPUs); the training section is appended. Every unit is far below
 * Megatron-FSDP's communication unit (10^9 elements), so each pass gathers all its units at once. */
static const char tiny_head[] =
    "name: tiny\n"
    "model: { name: tiny, layers: 4, hidden: 1024, heads: 8, vocab: 4096, seq_len: 512, tied_embeddings: true }\n"
    "gpu: a100-80gb\n"
    "cluster: { extends: dgx-a100, nodes: 1 }\n";

/* The same with no SMs taken by collectives (gpu.collective_sms 0): the kernels' times do not depend on when
 * the collectives run, so a kernel added shows as exactly its own time. */
static const char tiny_head_solo[] =
    "name: tiny\n"
    "model: { name: tiny, layers: 4, hidden: 1024, heads: 8, vocab: 4096, seq_len: 512, tied_embeddings: true }\n"
    "gpu: { extends: a100-80gb, collective_sms: 0 }\n"
    "cluster: { extends: dgx-a100, nodes: 1 }\n";

static expcfg *load_or_fail(const char *name, const char *head, const char *training, cxl_err *e)
{
    static char text[4096];
    snprintf(text, sizeof text, "%s%s", head, training);
    return tfx_try_load_text(name, text, e);
}

static expcfg *load(const char *head, const char *training)
{
    static char text[4096];
    snprintf(text, sizeof text, "%s%s", head, training);
    return tfx_load_text("t.yaml", text);
}

/* The iteration (ps) of head with training appended. */
static int64_t iteration_ps(const char *head, const char *training)
{
    expcfg *x = load(head, training);
    train_result r;
    tfx_run(x, NULL, &r);
    int64_t t = r.iteration_ps;
    train_result_free(&r);
    free(x);
    return t;
}

/* Bytes per rank x count of the data-parallel collectives of operation op over the iteration. */
static double dp_bytes(const train_result *r, int op)
{
    double sum = 0;
    for (uint32_t i = 0; i < r->ncolls; i++)
        if (r->colls[i].group == TRAIN_GROUP_DP && r->colls[i].op == op)
            sum += (double)r->colls[i].bytes * (double)r->colls[i].count;
    return sum;
}

/* Memory per GPU: no sharding, ZeRO-1 and Megatron-FSDP on the same layout. The tiny model's units all fit
 * in one prefetch window and one reduce-scatter queue, so FSDP holds every parameter unsharded once more
 * (2 B) and every gradient (4 B with fp32 main gradients) beside its shards. */
static void memory_against_zero(void **state)
{
    (void)state;
    const char *common = "training: { global_batch: 16, dp: 8, main_grads: fp32";
    char tr[256];
    gpumem mem[3];
    const char *modes[3] = { ", zero: 0 }\n", ", zero: 1 }\n", ", data_parallel: fsdp }\n" };
    for (int i = 0; i < 3; i++) {
        snprintf(tr, sizeof tr, "%s%s", common, modes[i]);
        expcfg *x = load(tiny_head, tr);
        if (i == 2)
            assert_int_equal(x->train.zero, 3);     /* fsdp implies ZeRO-3 sharding */
        gpumem_estimate(&x->model, &x->train, &mem[i]);
        free(x);
    }
    expcfg *x = load(tiny_head, "training: { global_batch: 16, dp: 8 }\n");
    double P = (double)(4 * modelcfg_layer_params_tp(&x->model, 1) + modelcfg_embedding_params_tp(&x->model, 1) +
                        modelcfg_head_params_tp(&x->model, 1, 1));
    free(x);
    for (int i = 0; i < 3; i++)
        assert_true(mem[i].params == (uint64_t)P);
    /* no sharding: 2 + 4 + 12 B per parameter */
    assert_true(mem[0].weights_bytes == 2 * P && mem[0].gradients_bytes == 4 * P && mem[0].optimizer_bytes == 12 * P);
    /* ZeRO-1: the optimizer states / dp */
    assert_true(mem[1].weights_bytes == 2 * P && mem[1].gradients_bytes == 4 * P && mem[1].optimizer_bytes == 12 * P / 8);
    /* FSDP: everything / dp, plus the gathered parameters and the queued gradients */
    assert_true(mem[2].weights_bytes == 2 * P / 8 + 2 * P);
    assert_true(mem[2].gradients_bytes == 4 * P / 8 + 4 * P);
    assert_true(mem[2].optimizer_bytes == 12 * P / 8);
    assert_true(mem[2].activations_bytes == mem[1].activations_bytes);
}

/* Llama 3 8B in bf16 on 8 H100: units of 218 M parameters (layers) and 525 M (embedding, head), a
 * communication unit of 10^9 elements. The prefetch window holds half of it: the embedding or the head
 * alone, three layers, or the last two layers and the head; the reduce-scatter queue at most 10^9
 * elements before each new unit: four layers and the embedding at the end of the backward pass. */
static void llama3_window_and_queue(void **state)
{
    (void)state;
    const char *head = "name: l\nmodel: llama3-8b\ngpu: h100-sxm\ncluster: { extends: dgx-h100, nodes: 1 }\n";
    expcfg *x = load(head, "training: { global_batch: 128, dp: 8, data_parallel: fsdp, main_grads: fp32 }\n");
    const modelcfg *m = &x->model;
    double l = (double)modelcfg_layer_params_tp(m, 1), e = (double)modelcfg_embedding_params_tp(m, 1);
    double h = (double)modelcfg_head_params_tp(m, 1, 1);
    uint64_t unit = fsdp_comm_unit(m, &x->train, 0, 0);
    assert_true(unit == FSDP_COMM_UNIT_MIN);
    /* the premises of the closed forms below */
    assert_true(e >= 5e8 && 2 * l < 5e8 && 3 * l >= 5e8 && 4 * l <= 1e9 && 5 * l > 1e9 && h > e && h + 2 * l < 1e9);
    fsdp_pass fwd, bwd;
    fsdp_pass_init(&fwd, m, &x->train, 0, 0, 0);
    fsdp_pass_init(&bwd, m, &x->train, 0, 0, 1);
    assert_int_equal(fwd.n, 34);
    assert_int_equal(fsdp_window_end(&fwd, 0, unit / 2), 0);     /* the embedding alone */
    assert_int_equal(fsdp_window_end(&fwd, 1, unit / 2), 3);     /* layers 0-2 */
    assert_int_equal(fsdp_window_end(&fwd, 31, unit / 2), 33);   /* layers 30, 31 and the head */
    double gathered = 2 * (2 * l + h);
    assert_true((double)fsdp_peak_gathered_bytes(&fwd, unit / 2) == gathered);
    assert_true((double)fsdp_peak_gathered_bytes(&bwd, unit / 2) == 2 * (2 * l + e));
    assert_true((double)fsdp_peak_grad_elems(&bwd, unit) == 4 * l + e);
    gpumem mem;
    gpumem_estimate(m, &x->train, &mem);
    double P = 32 * l + e + h;
    assert_true(mem.weights_bytes == 2 * P / 8 + gathered);
    assert_true(mem.gradients_bytes == 4 * P / 8 + 4 * (4 * l + e));
    free(x);

    /* fsdp_double_buffer: one unit ahead, two units' gradients: the last layer with the head */
    x = load(head, "training: { global_batch: 128, dp: 8, data_parallel: fsdp, fsdp_double_buffer: true, "
                   "main_grads: fp32 }\n");
    fsdp_pass_init(&fwd, &x->model, &x->train, 0, 0, 0);
    fsdp_pass_init(&bwd, &x->model, &x->train, 0, 0, 1);
    assert_int_equal(fsdp_window_end(&fwd, 0, unit / 2), 0);
    assert_int_equal(fsdp_window_end(&fwd, 1, unit / 2), 2);
    assert_true((double)fsdp_peak_gathered_bytes(&fwd, unit / 2) == 2 * (l + h));
    assert_true((double)fsdp_peak_grad_elems(&bwd, unit) == h + l);
    gpumem_estimate(&x->model, &x->train, &mem);
    assert_true(mem.weights_bytes == 2 * P / 8 + 2 * (l + h));
    assert_true(mem.gradients_bytes == 4 * P / 8 + 4 * (h + l));
    free(x);
}

/* The collectives of one iteration: per micro-batch every unit's parameters all-gathered twice (forward
 * and backward) and its gradients reduce-scattered once; no all-gather after the optimizer. ZeRO-1 on the
 * same layout: the gradients once (the last micro-batch) and the parameters once, after the step. */
static void collective_bytes(void **state)
{
    (void)state;
    train_result r;
    expcfg *x = load(tiny_head, "training: { global_batch: 32, dp: 8, data_parallel: fsdp, main_grads: fp32 }\n");
    double P = (double)(4 * modelcfg_layer_params_tp(&x->model, 1) + modelcfg_embedding_params_tp(&x->model, 1) +
                        modelcfg_head_params_tp(&x->model, 1, 1));
    double m = 32.0 / 8;    /* micro-batches */
    tfx_run(x, NULL, &r);
    assert_true(dp_bytes(&r, COLLALGO_ALLGATHER) == m * 2 * 2 * P);
    assert_true(dp_bytes(&r, COLLALGO_REDUCE_SCATTER) == m * 4 * P);
    assert_true(dp_bytes(&r, COLLALGO_ALLREDUCE) == 0);
    train_result_free(&r);
    free(x);

    x = load(tiny_head, "training: { global_batch: 32, dp: 8, zero: 1, main_grads: fp32 }\n");
    tfx_run(x, NULL, &r);
    assert_true(dp_bytes(&r, COLLALGO_ALLGATHER) == 2 * P);
    assert_true(dp_bytes(&r, COLLALGO_REDUCE_SCATTER) == 4 * P);
    train_result_free(&r);
    free(x);

    /* FP8 with fp8_param_gather: the layers' weights are gathered as FP8 (1 B), the embedding in bf16 */
    const char *h100 = "name: f\nmodel: { name: f, layers: 4, hidden: 1024, heads: 8, vocab: 4096, seq_len: 512, "
                       "tied_embeddings: true }\ngpu: h100-sxm\ncluster: { extends: dgx-h100, nodes: 1 }\n";
    x = load(h100, "training: { global_batch: 32, dp: 8, data_parallel: fsdp, precision: fp8, "
                   "fp8_param_gather: true }\n");
    double L = (double)(4 * modelcfg_layer_params_tp(&x->model, 1));
    double rest = (double)(modelcfg_embedding_params_tp(&x->model, 1) + modelcfg_head_params_tp(&x->model, 1, 1));
    tfx_run(x, NULL, &r);
    assert_true(dp_bytes(&r, COLLALGO_ALLGATHER) == m * 2 * (L + 2 * rest));
    train_result_free(&r);
    free(x);
}

/* The gathers and reduce-scatters run beside the compute stream (and fsdp_double_buffer, which lets the
 * prefetch and the reduce-scatters run less far ahead, never hides more). With NVLink 82 times slower (efficiency
 * 0.01 for dgx-h100's 0.82) the run is communication-bound and its exposed data-parallel time is about the
 * collectives' whole duration: at the real speed at least half of that duration (1/82 of it, latencies
 * aside) is hidden behind compute.
 * Some stays exposed: the first unit of each pass and the reduce-scatters waited for at its end. */
static void overlap(void **state)
{
    (void)state;
    const char *head = "name: l\nmodel: llama3-8b\ngpu: h100-sxm\ncluster: { extends: dgx-h100, nodes: 1";
    char h[512];
    double exposed[3], iter[3];
    const char *eff[3] = { "", ", nvlink_efficiency: 0.01", ", nvlink_efficiency: 0.01" };
    for (int i = 0; i < 3; i++) {
        snprintf(h, sizeof h, "%s%s }\n", head, eff[i]);
        expcfg *x = load(h, i == 2 ? "training: { global_batch: 16, dp: 8, data_parallel: fsdp, main_grads: fp32, "
                                     "fsdp_double_buffer: true }\n"
                                   : "training: { global_batch: 16, dp: 8, data_parallel: fsdp, main_grads: fp32 }\n");
        train_result r;
        tfx_run(x, NULL, &r);
        exposed[i] = r.breakdown_s[TRAIN_BK_DP];
        iter[i] = (double)r.iteration_ps / 1e12;
        double sum = 0;
        for (int k = 0; k < TRAIN_BK_N; k++)
            sum += r.breakdown_s[k];
        assert_true(sum > iter[i] * (1 - 1e-9) && sum < iter[i] * (1 + 1e-9));
        train_result_free(&r);
        free(x);
    }
    assert_true(exposed[0] > 0);
    assert_true(exposed[1] > 0.5 * iter[1]);            /* communication-bound */
    assert_true(exposed[0] < 0.5 * exposed[1] / 82);   /* at least half hidden at the real speed */
    assert_true(exposed[2] >= exposed[1]);              /* two buffers hide no more than the free prefetch */
    print_message("exposed dp: %.4f s of %.4f s; slow nvlink %.4f s of %.4f s\n", exposed[0], iter[0], exposed[1], iter[1]);
}

/* gradient_accumulation_fusion off: after each unit's backward the compute stream copies its gradients into
 * the reduce-scatter buffer, one memory-bound kernel reading the 16-bit gradient and writing the main
 * gradient: the compute time grows by exactly those kernels, per unit and micro-batch. */
static double copy_s(const gpucfg *g, uint64_t params)
{
    op_desc d = { "fsdp.grad_copy", OP_MEM, GPUCFG_FP32, 1, params, 1, 1, 0, 0, 0, 0, 0, 0 };
    d.bytes = (double)params * (2 + 4);
    return (double)compute_op_ps(g, &d) / 1e12;
}

static void gradient_copy(void **state)
{
    (void)state;
    double compute[2];
    train_result r;
    expcfg *x = NULL;
    for (int i = 0; i < 2; i++) {
        x = load(tiny_head_solo, i ? "training: { global_batch: 32, dp: 8, data_parallel: fsdp, main_grads: fp32, "
                                     "gradient_accumulation_fusion: false }\n"
                              : "training: { global_batch: 32, dp: 8, data_parallel: fsdp, main_grads: fp32 }\n");
        tfx_run(x, NULL, &r);
        compute[i] = r.breakdown_s[TRAIN_BK_COMPUTE];
        train_result_free(&r);
        if (!i)
            free(x);
    }
    const modelcfg *m = &x->model;
    double want = 4 * (4 * copy_s(&x->gpu, modelcfg_layer_params_tp(m, 1)) +
                       copy_s(&x->gpu, modelcfg_embedding_params_tp(m, 1)) + copy_s(&x->gpu, modelcfg_head_params_tp(m, 1, 1)));
    double got = compute[1] - compute[0];
    if (got < want * (1 - 1e-9) || got > want * (1 + 1e-9))
        fail_msg("extra compute %.9g s, expected %.9g s", got, want);
    free(x);
}

/* FP8 weights gathered rowwise: before each FP8 layer's backward its transpose is made (a kernel reading and
 * writing 1 B per weight), unless keep_fp8_transpose_cache keeps them all (1 B per FP8 weight in memory). */
static void fp8_transpose(void **state)
{
    (void)state;
    const char *h100 = "name: f\nmodel: { name: f, layers: 4, hidden: 1024, heads: 8, vocab: 4096, seq_len: 512, "
                       "tied_embeddings: true }\ngpu: { extends: h100-sxm, collective_sms: 0 }\n"
                       "cluster: { extends: dgx-h100, nodes: 1 }\n";
    double compute[2], weights[2];
    expcfg *x = NULL;
    for (int i = 0; i < 2; i++) {
        /* the host never behind (host_launch 0): the kernels alone set the time */
        x = load(h100, i ? "training: { global_batch: 32, dp: 8, data_parallel: fsdp, precision: fp8, "
                           "fp8_param_gather: true, keep_fp8_transpose_cache: true, host_launch: 0ps }\n"
                         : "training: { global_batch: 32, dp: 8, data_parallel: fsdp, precision: fp8, "
                           "fp8_param_gather: true, host_launch: 0ps }\n");
        train_result r;
        tfx_run(x, NULL, &r);
        compute[i] = r.breakdown_s[TRAIN_BK_COMPUTE];
        weights[i] = r.mem.weights_bytes;
        train_result_free(&r);
        if (!i)
            free(x);
    }
    uint64_t l = modelcfg_layer_params_tp(&x->model, 1);
    op_desc d = { "fsdp.fp8_transpose", OP_MEM, GPUCFG_FP8, 1, l, 1, 1, 0, 0, 0, 0, 0, 0 };
    d.bytes = 2.0 * (double)l;
    double want = 4 * 4 * (double)compute_op_ps(&x->gpu, &d) / 1e12;   /* 4 micro-batches x 4 layers */
    double got = compute[0] - compute[1];
    if (got < want * (1 - 1e-9) || got > want * (1 + 1e-9))
        fail_msg("transposes %.9g s, expected %.9g s", got, want);
    assert_true(weights[1] - weights[0] == 4.0 * (double)l);
    free(x);
}

/* pp > 1 is accepted (Megatron-LM refuses no pipeline layout with --use-megatron-fsdp), and the gathers
 * then run per micro-batch and model chunk. */
static void pipeline_accepted(void **state)
{
    (void)state;
    expcfg *x = load(tiny_head, "training: { global_batch: 32, pp: 2, dp: 4, data_parallel: fsdp }\n");
    train_result r;
    tfx_run(x, NULL, &r);
    assert_true(r.iteration_ps > 0);
    assert_true(dp_bytes(&r, COLLALGO_ALLGATHER) > 0);
    train_result_free(&r);
    free(x);
}

static void expect_error(const char *head, const char *training, int line, int col, const char *a, const char *b)
{
    cxl_err e;
    expcfg *x = load_or_fail("bad.yaml", head, training, &e);
    if (x)
        fail_msg("accepted: %s", training);
    assert_int_equal(e.code, CXL_ECONFIG);
    assert_string_equal(e.file, "bad.yaml");
    if (line != e.line || col != e.col || !strstr(e.msg, a) || (b && !strstr(e.msg, b)))
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
}

static void bad_input(void **state)
{
    (void)state;
    /* training: is line 5; its keys' columns below */
    expect_error(tiny_head, "training:\n  global_batch: 16\n  data_parallel: fsdp\n  zero: 1\n", 8, 9,
                 "training.zero: 1 conflicts with data_parallel fsdp", "set it to 3");
    expect_error(tiny_head, "training:\n  global_batch: 16\n  data_parallel: fsdp\n  overlap_grad_reduce: false\n", 8,
                 24, "overlap_grad_reduce", "use data_parallel ddp");
    expect_error(tiny_head, "training:\n  global_batch: 16\n  data_parallel: zero3\n", 7, 18, "ddp", "fsdp");
    expect_error(tiny_head, "training:\n  global_batch: 16\n  fsdp_double_buffer: true\n", 7, 23,
                 "fsdp_double_buffer", "needs data_parallel fsdp");
    expect_error(tiny_head, "training:\n  global_batch: 16\n  data_parallel: fsdp\n  keep_fp8_transpose_cache: true\n",
                 8, 29, "keep_fp8_transpose_cache", "here fsdp, bf16, false");
    const char *moe = "name: q\nmodel: qwen3-30b-a3b\ngpu: h100-sxm\ncluster: { extends: dgx-h100, nodes: 2 }\n";
    expect_error(moe, "training:\n  global_batch: 64\n  ep: 8\n  data_parallel: fsdp\n", 8, 18,
                 "mixture-of-experts", "data_parallel ddp");
    /* zero 3 given with fsdp is the same thing */
    cxl_err e;
    expcfg *x = load_or_fail("ok.yaml", tiny_head, "training: { global_batch: 16, data_parallel: fsdp, zero: 3 }\n", &e);
    assert_non_null(x);
    free(x);
}

/* The SMs a collective holds (gpu.collective_sms, train_setup.c price_shared): NCCL runs one thread block per
 * channel, resident on its own SM while the collective runs, so a compute kernel launched beside a
 * data-parallel collective runs on the other SMs. Megatron-FSDP on H100 (24 channels: h100-sxm) overlaps its
 * gathers and reduce-scatters with the layers: the compute grows, and by less than the time on 108 of 132
 * SMs would add to every kernel; 0 turns it off; a run without collectives beside its kernels (one GPU)
 * prints the same time either way; so does a context-parallel ring across nodes, while one inside a node
 * slows the attention it overlaps; a count not below the SMs is refused at its key. */
static void collective_sms(void **state)
{
    (void)state;
    const char *gpus[2] = { "gpu: { extends: h100-sxm, collective_sms: 0 }\n", "gpu: h100-sxm\n" };
    const char *fsdp = "training: { global_batch: 16, dp: 8, data_parallel: fsdp, main_grads: fp32 }\n";
    double iter[2], comp[2];
    for (int i = 0; i < 2; i++) {
        char h[512];
        snprintf(h, sizeof h, "name: l\nmodel: llama3-8b\n%scluster: { extends: dgx-h100, nodes: 1 }\n", gpus[i]);
        expcfg *x = load(h, fsdp);
        assert_int_equal(x->gpu.collective_sms, i ? 24 : 0);
        train_result r;
        tfx_run(x, NULL, &r);
        iter[i] = (double)r.iteration_ps / 1e12;
        comp[i] = r.breakdown_s[TRAIN_BK_COMPUTE];
        train_result_free(&r);
        free(x);
    }
    assert_true(comp[1] > comp[0] * 1.005);
    assert_true(iter[1] > iter[0]);
    assert_true(comp[1] < comp[0] * 132.0 / 108.0);
    print_message("collective_sms 0 / 24: %.4f / %.4f s (compute %.4f / %.4f s)\n", iter[0], iter[1], comp[0], comp[1]);
    /* one GPU: no data-parallel collective beside any kernel */
    int64_t one[2];
    for (int i = 0; i < 2; i++) {
        char h[512];
        snprintf(h, sizeof h, "name: t\nmodel: { name: tiny, layers: 4, hidden: 1024, heads: 8, vocab: 4096, seq_len: "
                 "512, tied_embeddings: true }\n%scluster: { extends: dgx-h100, nodes: 1, gpus_per_node: 1 }\n", gpus[i]);
        one[i] = iteration_ps(h, "training: { global_batch: 8 }\n");
    }
    assert_true(one[0] == one[1]);
    /* context parallelism's ring (dp 1: no data-parallel collective): inside a node it takes the SMs from the
     * attention kernels it overlaps; across nodes NCCL gives a network peer 2 channels, not counted */
    const char *clusters[2] = { "cluster: { extends: dgx-h100, nodes: 1, gpus_per_node: 2 }\n",
                                "cluster: { extends: dgx-h100, nodes: 2, gpus_per_node: 1 }\n" };
    for (int c = 0; c < 2; c++) {
        int64_t cp[2];
        for (int i = 0; i < 2; i++) {
            char h[512];
            snprintf(h, sizeof h, "name: c\nmodel: { name: t, layers: 4, hidden: 2048, heads: 16, vocab: 4096, "
                     "seq_len: 8192, tied_embeddings: true }\n%s%s", gpus[i], clusters[c]);
            cp[i] = iteration_ps(h, "training: { global_batch: 1, cp: 2, dp: 1 }\n");
        }
        if (c == 0)
            assert_true(cp[1] > cp[0]);
        else
            assert_true(cp[1] == cp[0]);
    }
    expect_error("name: b\nmodel: llama3-8b\ngpu: { extends: h100-sxm, collective_sms: 132 }\ncluster: { extends: "
                 "dgx-h100, nodes: 1 }\n", fsdp, 3, 43, "gpu.collective_sms: 132 is not below the 132 SMs",
                 "valid: 0 (not modelled) to 131");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory_against_zero), cmocka_unit_test(llama3_window_and_queue),
        cmocka_unit_test(collective_bytes),    cmocka_unit_test(overlap),
        cmocka_unit_test(gradient_copy),       cmocka_unit_test(fp8_transpose),
        cmocka_unit_test(pipeline_accepted),   cmocka_unit_test(bad_input),
        cmocka_unit_test(collective_sms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

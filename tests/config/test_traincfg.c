/* test_traincfg.c - training configuration: model, GPU, cluster and experiment presets load; parameter
 * counts and per-GPU memory match hand derivations (Korthikanti et al. 2022); every layout check and
 * the out-of-memory check report the numbers and file:line:column. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/expcfg.h"
#include "train/gpumem.h"
#include "config/parallel.h"
#include "config/presets.h"

#include "train/train.h"

#include "tmpdir_fixture.h"

static void ok_or_fail(int rc, const cxl_err *e, const char *what)
{
    if (rc)
        fail_msg("%s: %s:%d:%d: %s", what, e->file, e->line, e->col, e->msg);
}

/* ---- presets ---- */

static void every_component_preset_loads(void **state)
{
    (void)state;
    cxl_err e;
    int n = 0;
    for (const char *const *p = presets_names("models"); *p; p++, n++) {
        modelcfg m;
        ok_or_fail(modelcfg_load(*p, &m, &e), &e, *p);
        assert_string_equal(m.name, *p);
        assert_int_equal(m.hidden % m.heads, 0);
    }
    assert_int_equal(n, 16);
    n = 0;
    for (const char *const *p = presets_names("gpus"); *p; p++, n++) {
        gpucfg g;
        ok_or_fail(gpucfg_load(*p, &g, &e), &e, *p);
        assert_true(g.tflops[GPUCFG_BF16] > 0);
    }
    assert_int_equal(n, 5);
    n = 0;
    for (const char *const *p = presets_names("clusters"); *p; p++, n++) {
        clustercfg c;
        ok_or_fail(clustercfg_load(*p, &c, &e), &e, *p);
        /* DGX nodes of 8; GB200 NVL72's compute trays of 4 in a rack-wide NVLink domain of 72 */
        assert_int_equal(c.gpus_per_node, strcmp(*p, "gb200-nvl72") ? 8 : 4);
        assert_int_equal(c.nvlink_domain, strcmp(*p, "gb200-nvl72") ? 0 : 72);
    }
    assert_int_equal(n, 4);
    /* The device presets are still there, unchanged in name. */
    assert_non_null(presets_device_text("asic"));
    assert_string_equal(presets_device_display("asic"), "configs/devices/asic.yaml");
}

static void preset_values(void **state)
{
    (void)state;
    cxl_err e;
    gpucfg g;
    ok_or_fail(gpucfg_load("h100-sxm", &g, &e), &e, "h100");
    assert_true(g.tflops[GPUCFG_BF16] == 989 && g.tflops[GPUCFG_FP8] == 1979);
    assert_int_equal(g.hbm_bytes, 80000000000ull);
    assert_int_equal(g.hbm_bw_bps, 3350000000000ull);
    ok_or_fail(gpucfg_load("a100-80gb", &g, &e), &e, "a100");
    assert_true(g.tflops[GPUCFG_FP8] == 0 && g.tflops[GPUCFG_BF16] == 312);
    clustercfg c;
    ok_or_fail(clustercfg_load("dgx-h100", &c, &e), &e, "dgx-h100");
    assert_int_equal(c.nic_bw_bps, 50000000000ull); /* 400 Gb/s */
    assert_int_equal(c.nics_per_node, 8);
    assert_int_equal(c.topology, CLUSTERCFG_RAIL_OPTIMIZED);
    modelcfg m;
    ok_or_fail(modelcfg_load("llama2-70b", &m, &e), &e, "llama2-70b");
    assert_int_equal(m.kv_heads, 8);
    assert_int_equal(m.activation, MODELCFG_SWIGLU);
}

/* ---- parameter counts ---- */

static void params_gpt3_175b(void **state)
{
    (void)state;
    cxl_err e;
    modelcfg m;
    ok_or_fail(modelcfg_load("gpt3-175b", &m, &e), &e, "gpt3");
    /* h = 12288, L = 96, f = 4h, V = 51200, s = 2048, biases, LayerNorm, learned positions, tied.
     * layer: QKV 3h^2 + 3h, out h^2 + h, MLP 8h^2 + 4h + h, 2 LayerNorms 4h = 12h^2 + 13h
     *      = 12 * 150994944 + 159744 = 1812099072
     * embeddings: Vh + sh = 629145600 + 25165824 = 654311424; final LayerNorm 2h = 24576
     * total = 96 * 1812099072 + 654311424 + 24576 = 174,615,846,912: 0.22 % under the published 175B. */
    assert_int_equal(modelcfg_layer_params(&m), 1812099072ull);
    assert_int_equal(modelcfg_total_params(&m), 174615846912ull);
    double err = ((double)modelcfg_total_params(&m) - 175e9) / 175e9;
    assert_true(err > -0.01 && err < 0.01);
}

static void params_llama2_7b(void **state)
{
    (void)state;
    cxl_err e;
    modelcfg m;
    ok_or_fail(modelcfg_load("llama2-7b", &m, &e), &e, "llama2-7b");
    /* h = 4096, L = 32, f = 11008, V = 32000, no biases, RMSNorm, RoPE, untied.
     * layer: attention 4h^2 = 67108864, SwiGLU 3hf = 135266304, 2 RMSNorms 2h = 8192 -> 202383360
     * embeddings Vh = 131072000, output layer Vh = 131072000, final RMSNorm 4096
     * total = 32 * 202383360 + 262144000 + 4096 = 6,738,415,616, the count of the model card
     * (LLaMA paper arXiv 2302.13971 Table 2: 6.7B). */
    assert_int_equal(modelcfg_total_params(&m), 6738415616ull);
    double err = ((double)modelcfg_total_params(&m) - 6.7e9) / 6.7e9;
    assert_true(err > -0.01 && err < 0.01);
    /* LLaMA-2 70B with GQA: K and V are h x (8 x 128) = 8192 x 1024 each.
     * layer: 2h^2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2h = 855654400; 80 layers + 2Vh + h
     * = 68452352000 + 524288000 + 8192 = 68,976,648,192 (model card: 69B). */
    ok_or_fail(modelcfg_load("llama2-70b", &m, &e), &e, "llama2-70b");
    assert_int_equal(modelcfg_layer_params(&m), 855654400ull);
    assert_int_equal(modelcfg_total_params(&m), 68976648192ull);
}

/* ---- activations and memory ---- */

/* A preset model and a training setup of one GPU, one micro-batch of one sequence, bf16, flash attention. */
static void one_gpu(const char *model, modelcfg *m, traincfg *t)
{
    cxl_err e;
    ok_or_fail(modelcfg_load(model, m, &e), &e, model);
    memset(t, 0, sizeof *t);
    t->micro_batch = 1, t->tp = 1, t->pp = 1, t->dp = 1, t->virtual_stages = 1, t->global_batch = 1;
}

static void korthikanti_activations(void **state)
{
    (void)state;
    modelcfg m;
    traincfg t;
    one_gpu("gpt3-175b", &m, &t);
    double s = 2048, h = 12288, a = 96, sbh = s * h;
    /* flash attention (the default): no s x s term, the fp32 logsumexp per head and row, 4as bytes */
    assert_true(gpumem_layer_activation_bytes(&m, &t) == 34 * sbh + 4 * a * s);
    t.tp = 8, t.sp = 1;
    assert_true(gpumem_layer_activation_bytes(&m, &t) == (34 * sbh + 4 * a * s) / 8);
    /* context parallelism: every term is per token, each rank holds s / cp of them */
    t.cp = 4;
    assert_true(gpumem_layer_activation_bytes(&m, &t) == (34 * sbh + 4 * a * s) / 8 / 4);
    t.tp = 1, t.sp = 0, t.cp = 1;
    /* fp32 training: flash kernels take 16-bit operands, so the unfused attention runs (and is counted) */
    t.precision = GPUCFG_FP32;
    assert_true(gpumem_layer_activation_bytes(&m, &t) == sbh * (34 + 5 * a * s / h));
    t.precision = GPUCFG_BF16;
    /* the paper's Megatron-LM of 2022: the unfused attention */
    t.attention = TRAINCFG_ATTENTION_UNFUSED;
    /* Eq. 1, no parallelism: sbh(34 + 5as/h) */
    assert_true(gpumem_layer_activation_bytes(&m, &t) == sbh * (34 + 5 * a * s / h));
    /* Eq. 2, tensor parallel t = 8: sbh(10 + 24/t + 5as/(ht)) */
    t.tp = 8;
    assert_true(gpumem_layer_activation_bytes(&m, &t) == sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8)));
    /* Eq. 4, tensor + sequence parallel: sbh/t (34 + 5as/h) */
    t.sp = 1;
    assert_true(gpumem_layer_activation_bytes(&m, &t) == sbh / 8 * (34 + 5 * a * s / h));
    /* Selective recomputation with sp: 34 sbh/t = 34 * 2048 * 12288 / 8 = 106,954,752 B */
    t.recompute = TRAINCFG_RECOMPUTE_SELECTIVE;
    assert_true(gpumem_layer_activation_bytes(&m, &t) == 106954752.0);
    /* Full recomputation without sp: the layer input 2sbh */
    t.sp = 0, t.recompute = TRAINCFG_RECOMPUTE_FULL;
    assert_true(gpumem_layer_activation_bytes(&m, &t) == 2 * sbh);
    /* First stage of an interleaved pipeline holds L(1 + (p-1)/(pv)) layers (Sec. 4.2.3):
     * p = 8, v = 3, L = 96: 96 * (1 + 7/24) = 124 */
    t.pp = 8, t.virtual_stages = 3, t.global_batch = 64;
    assert_true(gpumem_layers_in_flight(&m, &t, 0) == 124.0);
    /* plain 1F1B: p micro-batches of L/p layers = L */
    t.virtual_stages = 1;
    assert_true(gpumem_layers_in_flight(&m, &t, 0) == 96.0);
    assert_true(gpumem_layers_in_flight(&m, &t, 7) == 12.0);
    /* Megatron-Core's interleaved warm-up (pipeline_parallel/schedules.py,
     * forward_backward_pipelining_with_interleaving: (p - r - 1) x 2 + (v - 1) x
     * microbatch_group_size_per_vp_stage, the group = p) plus the chunk whose backward follows: the GB200
     * Llama 3.1 405B layout, p 16, v 4, 126 layers + embedding + loss in chunks of 2: stage 1 holds 28 + 48 + 1
     * = 77 chunks of 2 layers */
    cxl_err e405;
    ok_or_fail(modelcfg_load("llama3-405b", &m, &e405), &e405, "llama3-405b");
    t.pp = 16, t.virtual_stages = 4, t.dp = 4, t.global_batch = 1536, t.micro_batch = 1;
    t.embedding_in_split = t.loss_in_split = 1;
    assert_true(gpumem_layers_in_flight(&m, &t, 1) == 154.0);
    t.embedding_in_split = t.loss_in_split = 0;
    t.dp = 1;
}

/* Activations as Megatron-Core and Transformer Engine keep them (gpumem.c): the fused SwiGLU keeps its input
 * only, FP8 training keeps GEMM inputs as FP8 copies (1 B), the query width is heads x head_dim; FP8 weight
 * copies (rowwise and transposed) add 2 B per layer weight; an MoE layer's experts keep per routed copy
 * the permuted fc1 input, the activation input and the fc2 input. */
static void te_activations(void **state)
{
    (void)state;
    modelcfg m;
    traincfg t;
    one_gpu("llama3-70b", &m, &t);
    double s = (double)m.seq_len, h = 8192, f = 28672, a = 64, q = 64 * 128, k = 8 * 128;
    /* bf16: norms' inputs 4h, QKV and fc1 inputs 2h each; Q, K, V and the attention output 4q + 4k; fused
     * SwiGLU input 4f and fc2 input 2f; the logsumexp 4a */
    assert_true(gpumem_layer_activation_bytes(&m, &t) == s * (8 * h + 4 * q + 4 * k + 6 * f + 4 * a));
    /* FP8: the QKV, fc1, output projection and fc2 inputs as FP8 copies (the projection's beside the 16-bit
     * attention output the core keeps) */
    t.precision = GPUCFG_FP8;
    assert_true(gpumem_layer_activation_bytes(&m, &t) == s * (6 * h + 4 * q + 4 * k + q + 5 * f + 4 * a));
    /* FP8 weight copies: 2 B per weight of the layers (none of the embedding's or output layer's) */
    gpumem bf, f8;
    t.global_batch = 1;
    gpumem_stage(&m, &t, 0, &f8);
    t.precision = GPUCFG_BF16;
    gpumem_stage(&m, &t, 0, &bf);
    assert_true(f8.weights_bytes - bf.weights_bytes == 2.0 * 80 * (double)modelcfg_layer_params_tp(&m, 1));
    /* under ZeRO-3 the gathered weights are transient: no copies kept */
    t.zero = 3, t.dp = 2, t.global_batch = 2;
    gpumem_stage(&m, &t, 0, &bf);
    t.precision = GPUCFG_FP8;
    gpumem_stage(&m, &t, 0, &f8);
    assert_true(f8.weights_bytes == bf.weights_bytes);
    /* MXFP8: the saved FP8 GEMM inputs keep their E8M0 scales (1 B per 32 elements: the QKV, fc1, projection
     * and fc2 inputs, 2h + q + f per token); the weight copies add both copies' scales, 2/32 B per layer
     * weight, with or without fp8_param_gather (then the copies are the weights) */
    double L = 80 * (double)modelcfg_layer_params_tp(&m, 1);
    gpumem cs, mx;
    t.zero = 1, t.dp = 1, t.global_batch = 1;
    t.fp8_recipe = TRAINCFG_FP8_MXFP8;
    double want = s * (6 * h + 4 * q + 4 * k + q + 5 * f + 4 * a) + s * (2 * h + q + f) / 32;
    assert_true(fabs(gpumem_layer_activation_bytes(&m, &t) - want) < 1e-12 * want);
    gpumem_stage(&m, &t, 0, &mx);
    t.fp8_recipe = TRAINCFG_FP8_TENSORWISE;
    gpumem_stage(&m, &t, 0, &cs);
    assert_true(fabs(mx.weights_bytes - cs.weights_bytes - L / 16) < 1e-9 * L);
    t.fp8_param_gather = 1;
    gpumem_stage(&m, &t, 0, &cs);
    t.fp8_recipe = TRAINCFG_FP8_MXFP8;
    gpumem_stage(&m, &t, 0, &mx);
    assert_true(fabs(mx.weights_bytes - cs.weights_bytes - L / 16) < 1e-9 * L);
    t.fp8_param_gather = 0;
    t.fp8_recipe = TRAINCFG_FP8_TENSORWISE;
    /* Blackwell (fp8_non_tn): tensorwise FP8 weights keep no transpose, 1 B per layer weight less, with or
     * without fp8_param_gather; MXFP8 keeps both copies */
    gpumem hop, bw;
    for (int pg = 0; pg < 2; pg++) {
        t.fp8_param_gather = pg;
        t.fp8_non_tn = 0;
        gpumem_stage(&m, &t, 0, &hop);
        t.fp8_non_tn = 1;
        gpumem_stage(&m, &t, 0, &bw);
        assert_true(fabs(hop.weights_bytes - bw.weights_bytes - L) < 1e-9 * L);
        t.fp8_recipe = TRAINCFG_FP8_MXFP8;
        gpumem_stage(&m, &t, 0, &bw);
        t.fp8_non_tn = 0;
        gpumem_stage(&m, &t, 0, &hop);
        assert_true(bw.weights_bytes == hop.weights_bytes);
        t.fp8_recipe = TRAINCFG_FP8_TENSORWISE;
    }
    t.fp8_param_gather = 0;

    /* MoE (Qwen3-30B-A3B: h 2048, 32 heads x 128, 4 KV heads, 128 experts, top 8, expert_ffn 768), bf16,
     * tp 1, one stage of all-MoE layers: per token the dense part without its MLP (the router's 16-bit input
     * 2h in place of the fc1 input), 8 routed copies of (2h + 6 x 768), fp32 router probabilities 4 x 128 */
    one_gpu("qwen3-30b-a3b", &m, &t);
    t.dp = 8, t.ep = 8, t.etp = 1, t.global_batch = 8;
    s = (double)m.seq_len, h = 2048, a = 32, q = 32 * 128, k = 4 * 128;
    double dense = s * (8 * h + 4 * q + 4 * k + 4 * a), moe = s * (8 * (2 * h + 6 * 768.0) + 4 * 128);
    gpumem g;
    gpumem_stage(&m, &t, 0, &g);
    double head = 4 * s * h + 4 * s * (double)modelcfg_vocab(&m);
    assert_true(fabs(g.activations_bytes - (48 * (dense + moe) + head)) < 1e-6 * g.activations_bytes);
}

static void default_experiment(void **state)
{
    (void)state;
    cxl_err e;
    expcfg x;
    ok_or_fail(expcfg_load(EXPCFG_DEFAULT, &x, &e), &e, "default");
    assert_string_equal(x.model.name, "llama2-7b");
    assert_string_equal(x.gpu.name, "h100-sxm");
    assert_int_equal(clustercfg_gpus(&x.cluster), 16);
    assert_int_equal(parallel_microbatches(&x.train), 128);
    gpumem mem;
    gpumem_estimate(&x.model, &x.train, &mem);
    /* tp 2, pp 1: per GPU 32 layers * ((4h^2 + 3hf) / 2 + 2h) + Vh / 2 (embedding) + h + Vh / 2 (head)
     * = 32 * (202375168 / 2 + 8192) + 65536000 + 4096 + 65536000
     * = 32 * 101195776 + 131076096 = 3,369,340,928 parameters.
     * weights 2 B, fp32 main grads 4 B, optimizer 12 B / dp 8 (ZeRO-1). */
    assert_int_equal(mem.params, 3369340928ull);
    assert_true(mem.weights_bytes == 2.0 * 3369340928.0);
    assert_true(mem.gradients_bytes == 4.0 * 3369340928.0);
    assert_true(mem.optimizer_bytes == 12.0 * 3369340928.0 / 8);
    /* activations per layer, selective + sp, no dropout, s = 4096, b = 1, h = 4096, f = 11008, r = 1:
     * (R + S)/t = (8sbh + 8sbh + 6sbf) / 2 = (16 * 16777216 + 6 * 45088768) / 2 = 269484032 (the fused
     * SwiGLU keeps its input 4sbf, fc2 its input 2sbf);
     * 32 layers; plus the last stage's 4sbh/t + 4sbV/t = 33554432 + 262144000 */
    assert_true(mem.activations_bytes == 32 * 269484032.0 + 33554432.0 + 262144000.0);
    ok_or_fail(gpumem_check(&mem, &x.gpu, &x.root, &e), &e, "fits");
}

static void korthikanti_rows_load_and_fit(void **state)
{
    (void)state;
    const char *rows[] = { "megatron-22b", "gpt3-175b", "turing-530b", "megatron-1t" };
    const char *kinds[] = { "full", "sel" };
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++) {
            char path[512];
            snprintf(path, sizeof path, "%s/configs/validation/korthikanti/%s-%s.yaml", CXLSIM_SOURCE_DIR,
                     rows[i], kinds[k]);
            cxl_err e;
            expcfg x;
            ok_or_fail(expcfg_load(path, &x, &e), &e, path);
            assert_string_equal(x.cluster.name, "dgx-a100");
            assert_string_equal(x.gpu.name, "a100-80gb");
            gpumem mem;
            gpumem_estimate(&x.model, &x.train, &mem);
            ok_or_fail(gpumem_check(&mem, &x.gpu, &x.root, &e), &e, path);
            assert_true(mem.total_bytes > 20e9); /* they did need most of an 80 GB part */
        }
}

/* ---- errors ---- */

/* An experiment around a training section; `extra` lines go at the top level. */
static const char *exp_file(const char *name, const char *model, const char *cluster, const char *training)
{
    char text[2048];
    snprintf(text, sizeof text,
             "name: t\n"
             "model: %s\n"
             "gpu: h100-sxm\n"
             "cluster: %s\n"
             "training:\n%s",
             model, cluster, training);
    return tmpdir_write(name, text);
}

static void expect_err(const char *path, int line, int col, const char *needle1, const char *needle2)
{
    cxl_err e;
    expcfg x;
    int rc = expcfg_load(path, &x, &e);
    assert_int_equal(rc, CXL_ECONFIG);
    if (!strstr(e.msg, needle1) || (needle2 && !strstr(e.msg, needle2)))
        fail_msg("message lacks '%s' / '%s': %s", needle1, needle2 ? needle2 : "", e.msg);
    assert_string_equal(e.file, path);
    if (e.line != line || e.col != col)
        fail_msg("at %d:%d, expected %d:%d: %s", e.line, e.col, line, col, e.msg);
}

static void err_tp_heads(void **state)
{
    (void)state;
    const char *p = exp_file("tp.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 3 }",
                             "  global_batch: 24\n  tp: 3\n  dp: 8\n");
    expect_err(p, 7, 7, "training.tp: 3 does not divide the 32 attention heads of model 'llama2-7b'",
               "valid tp: 1, 2, 4, 8, 16");
}

static void err_tp_kv_heads(void **state)
{
    (void)state;
    /* llama2-70b: 64 heads, 8 KV heads; tp 16 divides 64 but not 8 */
    const char *p = exp_file("kv.yaml", "llama2-70b", "{ extends: dgx-h100, nodes: 2 }",
                             "  global_batch: 8\n  tp: 16\n");
    expect_err(p, 7, 7, "training.tp: 16 does not divide the 8 KV heads of model 'llama2-70b'",
               "valid tp: 1, 2, 4, 8");
}

static void err_pp_layers(void **state)
{
    (void)state;
    const char *p = exp_file("pp.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                             "  global_batch: 16\n  pp: 3\n");
    expect_err(p, 7, 7, "training.pp: 3 pipeline stages do not divide the 32 layers of model 'llama2-7b'", NULL);
}

static void err_virtual_stages(void **state)
{
    (void)state;
    /* 32 layers, pp 4 -> 8 per stage; 3 chunks per stage do not divide 32 */
    const char *p = exp_file("vs.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                             "  global_batch: 16\n  pp: 4\n  dp: 4\n  virtual_stages: 3\n");
    expect_err(p, 9, 19, "pp 4 x virtual_stages 3 = 12 model chunks do not divide the 32 layers", NULL);
    p = exp_file("vs1.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                 "  global_batch: 16\n  dp: 16\n  virtual_stages: 2\n");
    expect_err(p, 8, 19, "interleaving needs a pipeline (pp is 1)", NULL);
    /* interleaving needs micro-batches % pp == 0: 16 / (1 x 4) = 4 micro-batches, pp 8 */
    p = exp_file("vs2.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 4 }",
                 "  global_batch: 16\n  pp: 8\n  dp: 4\n  virtual_stages: 2\n");
    expect_err(p, 9, 19, "needs the 4 micro-batches per iteration", "multiple of pp 8");
}

/* training.pipeline_schedule against pp, virtual_stages and the micro-batches, at the key's value */
static void err_pipeline_schedule(void **state)
{
    (void)state;
    static const struct {
        const char *training;
        int line;
        const char *needle1, *needle2;
    } bad[] = {
        { "  global_batch: 16\n  dp: 16\n  pipeline_schedule: zb-h1\n", 8, "zb-h1 needs a pipeline, but pp is 1",
          "pp >= 2" },
        { "  global_batch: 16\n  pp: 4\n  dp: 4\n  virtual_stages: 2\n  pipeline_schedule: zb-h1\n", 10,
          "zb-h1 runs one model chunk per rank, but virtual_stages is 2", NULL },
        { "  global_batch: 16\n  pp: 4\n  dp: 4\n  virtual_stages: 2\n  pipeline_schedule: 1f1b\n", 10,
          "1f1b runs one model chunk per rank", "use interleaved" },
        { "  global_batch: 16\n  pp: 4\n  dp: 4\n  pipeline_schedule: interleaved\n", 9,
          "interleaved needs pp >= 2 and virtual_stages >= 2", NULL },
        { "  global_batch: 16\n  pp: 4\n  dp: 4\n  pipeline_schedule: zb-h2\n", 9, "zb-h2", "dualpipev" },
        { "  global_batch: 32\n  pp: 4\n  dp: 4\n  pipeline_schedule: dualpipev\n", 9,
          "dualpipev places two model chunks per rank", "virtual_stages 1" },
        { "  global_batch: 16\n  pp: 4\n  dp: 4\n  virtual_stages: 2\n  pipeline_schedule: dualpipev\n", 10,
          "at least 2 x pp = 8 micro-batches", "global_batch of at least 32" },
        { "  global_batch: 32\n  pp: 4\n  dp: 4\n  virtual_stages: 2\n  decoder_first_pipeline_num_layers: 4\n"
          "  pipeline_schedule: dualpipev\n", 11, "dualpipev takes an even split", NULL },
        { "  global_batch: 16\n  pp: 4\n  dp: 4\n  data_parallel: fsdp\n  pipeline_schedule: zb-h1\n", 10,
          "zb-h1 splits the backward", "data_parallel ddp" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char name[32];
        snprintf(name, sizeof name, "sched%zu.yaml", i);
        const char *p = exp_file(name, "llama2-7b", "{ extends: dgx-h100, nodes: 2 }", bad[i].training);
        expect_err(p, bad[i].line, 22, bad[i].needle1, bad[i].needle2);
    }
    const char *ok[2] = { "  global_batch: 16\n  pp: 4\n  dp: 4\n  pipeline_schedule: zb-h1\n",
                          "  global_batch: 32\n  pp: 4\n  dp: 4\n  virtual_stages: 2\n  pipeline_schedule: dualpipev\n" };
    for (int i = 0; i < 2; i++) {
        cxl_err e;
        expcfg x;
        const char *p = exp_file(i ? "dpv.yaml" : "zb.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }", ok[i]);
        assert_int_equal(expcfg_load(p, &x, &e), 0);
        assert_int_equal(x.train.pipeline_schedule, i ? TRAINCFG_SCHEDULE_DUALPIPEV : TRAINCFG_SCHEDULE_ZB_H1);
    }
}

static void err_batch(void **state)
{
    (void)state;
    const char *p = exp_file("gb.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                             "  global_batch: 100\n  micro_batch: 2\n  dp: 16\n");
    expect_err(p, 6, 17, "training.global_batch: 100 is not a multiple of micro_batch 2 x dp 16 = 32", NULL);
}

/* Context parallelism: dp derived as GPUs / (tp x pp x cp), the optimizer sharded over dp x cp; cp must cut
 * the sequence into 2 x cp chunks, needs the flash kernels, and is not modelled with MoE layers. */
static void context_parallel_layout(void **state)
{
    (void)state;
    cxl_err e;
    expcfg *x = malloc(sizeof *x);
    const char *p = exp_file("cp.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                             "  global_batch: 16\n  tp: 2\n  cp: 2\n  zero: 1\n");
    ok_or_fail(expcfg_load(p, x, &e), &e, p);
    assert_int_equal(x->train.dp, 4);
    assert_int_equal(traincfg_dpcp(&x->train), 8);
    assert_int_equal(parallel_microbatches(&x->train), 4);
    gpumem mem;
    gpumem_estimate(&x->model, &x->train, &mem);
    assert_true(mem.optimizer_bytes == 12.0 * (double)mem.params / 8);
    free(x);
    p = exp_file("cp3.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                 "  global_batch: 16\n  cp: 3\n  dp: 1\n");
    expect_err(p, 7, 7, "training.cp: 3 does not divide the sequence length 4096 of model 'llama2-7b' into 2 x cp "
               "chunks (6)", "valid cp: 1, 2, 4, 8");
    p = exp_file("cpu.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                 "  global_batch: 16\n  cp: 2\n  attention: unfused\n");
    expect_err(p, 8, 14, "context parallelism runs inside the fused attention kernels", "use attention: flash");
    p = exp_file("cpm.yaml", "mixtral-8x7b", "{ extends: dgx-h100, nodes: 2 }",
                 "  global_batch: 16\n  cp: 2\n  ep: 8\n");
    expect_err(p, 7, 7, "context parallelism with mixture-of-experts layers (model 'mixtral-8x7b') is not modelled",
               NULL);
    p = exp_file("cpg.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                 "  global_batch: 16\n  tp: 2\n  cp: 2\n  dp: 2\n");
    expect_err(p, 9, 7, "tp 2 x pp 1 x cp 2 x dp 2 = 8 GPUs, but cluster 'dgx-h100' has nodes 2 x gpus_per_node 8 = 16",
               NULL);
}

static void err_gpu_count(void **state)
{
    (void)state;
    const char *p = exp_file("gpus.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                             "  global_batch: 64\n  tp: 2\n  dp: 4\n");
    expect_err(p, 8, 7, "tp 2 x pp 1 x dp 4 = 8 GPUs, but cluster 'dgx-h100' has nodes 2 x gpus_per_node 8 = 16",
               "gpus.yaml:4:");
}

static void err_sp_without_tp(void **state)
{
    (void)state;
    const char *p = exp_file("sp.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                             "  global_batch: 16\n  dp: 16\n  sp: true\n");
    expect_err(p, 8, 7, "training.sp: sequence parallelism", "tp is 1");
}

static void err_zero_pp(void **state)
{
    (void)state;
    const char *p = exp_file("zero.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }",
                             "  global_batch: 16\n  pp: 2\n  dp: 8\n  zero: 3\n");
    expect_err(p, 9, 9, "training.zero: stage 3 shards gradients and weights", "pp 2");
}

static void err_precision(void **state)
{
    (void)state;
    char text[512];
    snprintf(text, sizeof text, "name: t\nmodel: llama2-7b\ngpu: a100-80gb\ncluster: { extends: dgx-a100, nodes: 2 }\n"
                                "training:\n  global_batch: 16\n  dp: 16\n  precision: fp8\n");
    const char *p = tmpdir_write("fp8.yaml", text);
    expect_err(p, 8, 14, "GPU 'a100-80gb' has no fp8 peak", NULL);
}

/* MXFP8 (fp8_recipe: mxfp8): FP8 training's recipe, on a GPU whose tensor cores take MXFP8 (Blackwell) */
static void err_mxfp8(void **state)
{
    (void)state;
    const char *fmt = "name: t\nmodel: llama2-7b\ngpu: %s\ncluster: { extends: %s, nodes: 2 }\n"
                      "training:\n  global_batch: 16\n  dp: 16\n  precision: %s\n  fp8_recipe: %s\n";
    char text[512];
    snprintf(text, sizeof text, fmt, "h100-sxm", "dgx-h100", "fp8", "mxfp8");
    expect_err(tmpdir_write("mx1.yaml", text), 9, 15, "training.fp8_recipe: GPU 'h100-sxm' has no MXFP8 tensor cores",
               "valid here: fp8_recipe: tensorwise");
    snprintf(text, sizeof text, fmt, "b200", "dgx-b200", "bf16", "mxfp8");
    expect_err(tmpdir_write("mx2.yaml", text), 9, 15, "mxfp8 is a recipe of FP8 training, but precision is bf16",
               "set precision: fp8");
    snprintf(text, sizeof text, fmt, "b200", "dgx-b200", "fp8", "delayed");
    expect_err(tmpdir_write("mx3.yaml", text), 9, 15, "delayed", "mxfp8");
    /* valid: MXFP8 on Blackwell, and the tensorwise recipe (the default) anywhere with an fp8 peak */
    snprintf(text, sizeof text, fmt, "b200", "dgx-b200", "fp8", "mxfp8");
    cxl_err e;
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    ok_or_fail(expcfg_load(tmpdir_write("mx4.yaml", text), x, &e), &e, "mx4.yaml");
    assert_true(traincfg_mxfp8(&x->train) && x->gpu.mxfp8);
    snprintf(text, sizeof text, fmt, "h100-sxm", "dgx-h100", "fp8", "tensorwise");
    ok_or_fail(expcfg_load(tmpdir_write("mx5.yaml", text), x, &e), &e, "mx5.yaml");
    assert_true(!traincfg_mxfp8(&x->train) && !x->gpu.mxfp8);
    free(x);
}

static void err_unknown_names(void **state)
{
    (void)state;
    const char *p = exp_file("um.yaml", "llama2-8b", "dgx-h100", "  global_batch: 16\n");
    expect_err(p, 2, 8, "unknown model 'llama2-8b'", "gpt3-175b, llama2-13b, llama2-70b, llama2-7b");
    char text[256];
    snprintf(text, sizeof text, "name: t\nmodel: llama2-7b\ngpu: h100\ncluster: dgx-h100\ntraining: { global_batch: 16 }\n");
    p = tmpdir_write("ug.yaml", text);
    expect_err(p, 3, 6, "unknown gpu 'h100'", "presets: a100-80gb, b200, gb200, h100-sxm, h200");
    /* the same from outside any file */
    cxl_err e;
    modelcfg m;
    assert_int_equal(modelcfg_load("gpt4", &m, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "unknown model 'gpt4'"));
}

static void err_unknown_key_in_override(void **state)
{
    (void)state;
    const char *p = exp_file("uk.yaml", "{ extends: llama2-7b, layer: 30 }", "dgx-h100", "  global_batch: 16\n");
    expect_err(p, 2, 30, "unknown key 'model.layer'; did you mean 'layers'?", NULL);
}

static void overrides_and_files(void **state)
{
    (void)state;
    /* A model file next to the experiment, extended with an override; a cluster override. */
    tmpdir_write("tiny.yaml", "name: tiny\nlayers: 4\nhidden: 256\nheads: 4\nvocab: 1000\nseq_len: 128\n");
    const char *p = exp_file("ov.yaml", "{ extends: tiny.yaml, layers: 8 }", "{ extends: dgx-a100, nodes: 1 }",
                             "  global_batch: 8\n  tp: 2\n  pp: 2\n  dp: 2\n");
    cxl_err e;
    expcfg x;
    ok_or_fail(expcfg_load(p, &x, &e), &e, p);
    assert_int_equal(x.model.layers, 8);
    assert_int_equal(x.model.ffn, 1024);        /* default 4h */
    assert_int_equal(x.model.kv_heads, 4);      /* default: heads */
    assert_int_equal(x.cluster.nodes, 1);
    assert_int_equal(x.model.loc[MODELCFG_F_LAYERS].line, 2);     /* the override's location */
    assert_int_equal(x.model.loc[MODELCFG_F_HIDDEN].line, 3);     /* from tiny.yaml */
    assert_non_null(strstr(x.model.loc[MODELCFG_F_HIDDEN].file, "tiny.yaml"));
    /* an experiment extending another one */
    char text[512];
    snprintf(text, sizeof text, "extends: ov.yaml\nname: child\ntraining: { global_batch: 16 }\n");
    p = tmpdir_write("child.yaml", text);
    ok_or_fail(expcfg_load(p, &x, &e), &e, p);
    assert_int_equal(x.train.global_batch, 16);
    assert_int_equal(x.train.tp, 2);
}

static void out_of_memory(void **state)
{
    (void)state;
    /* LLaMA-2 70B, tp 8, no ZeRO on 2 x 8 H100: per GPU about 69e9 / 16 params * 16 B is fine, but with
     * tp 1 and dp 16 every GPU holds all 69e9 parameters: 69e9 * 16 B = 1.1 TB. */
    const char *p = exp_file("oom.yaml", "llama2-70b", "{ extends: dgx-h100, nodes: 2 }",
                             "  global_batch: 16\n  dp: 16\n  recompute: full\n");
    cxl_err e;
    expcfg x;
    ok_or_fail(expcfg_load(p, &x, &e), &e, p);
    gpumem mem;
    gpumem_estimate(&x.model, &x.train, &mem);
    assert_int_equal(mem.params, 68976648192ull);
    assert_int_equal(gpumem_check(&mem, &x.gpu, &x.root, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "out of GPU memory: pipeline stage 0 needs"));
    assert_non_null(strstr(e.msg, "GPU 'h100-sxm' has 74.5 GiB"));
    assert_non_null(strstr(e.msg, "the largest part is the optimizer states"));
    assert_string_equal(e.file, p);
    assert_int_equal(e.line, 1);
}

/* ---- mixture of experts ---- */

static void moe_params(void **state)
{
    (void)state;
    /* active: the tolerance is 10 %, 20 % for DeepSeek-V3 whose approximated attention has 6.5B more parameters */
    static const struct { const char *name; double total, active, tol; } v[] = {
        { "mixtral-8x7b", 46.7e9, 12.9e9, 0.005 },      /* arXiv 2401.04088: 47B total, 13B active */
        { "mixtral-8x22b", 141e9, 39e9, 0.01 },         /* Mistral AI: 141B, 39B active */
        { "qwen3-30b-a3b", 30.5e9, 3.3e9, 0.01 },       /* model card: 30.5B, 3.3B activated */
        { "qwen3-235b-a22b", 235e9, 22e9, 0.02 },       /* arXiv 2505.09388 */
        { "gpt-oss-120b", 116.8e9, 5.71e9, 0.02 },      /* model card: 116.8B; 5.13B active + 0.58B embedding */
        { "deepseek-v3", 671e9, 37e9, 0.015 },          /* arXiv 2412.19437 (MLA approximated: about 1 % more) */
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        modelcfg m;
        cxl_err e;
        ok_or_fail(modelcfg_load(v[i].name, &m, &e), &e, v[i].name);
        double total = (double)modelcfg_total_params(&m), active = (double)modelcfg_active_params(&m);
        if (fabs(total - v[i].total) / v[i].total > v[i].tol || fabs(active - v[i].active) / v[i].active > (i == 5 ? 0.2 : 0.1))
            fail_msg("%s: %.4g total, %.4g active; expected %.4g, %.4g", v[i].name, total, active, v[i].total,
                     v[i].active);
    }
    modelcfg m;
    cxl_err e;
    ok_or_fail(modelcfg_load("deepseek-v3", &m, &e), &e, "deepseek-v3");
    assert_false(modelcfg_layer_is_moe(&m, 2));
    assert_true(modelcfg_layer_is_moe(&m, 3));
    assert_int_equal(modelcfg_moe_layers_in(&m, 0, m.layers), 58);
    /* per GPU: experts split by ep; ep 8 holds 32 of 256 experts */
    uint64_t ex1, ex8;
    modelcfg_moe_layer_params_tp(&m, 1, 1, 1, &ex1);
    modelcfg_moe_layer_params_tp(&m, 1, 8, 1, &ex8);
    assert_int_equal(ex1, 8 * ex8);
}

static void err_moe_layouts(void **state)
{
    (void)state;
    const char *p = exp_file("ep3.yaml", "mixtral-8x7b", "{ extends: dgx-h100, nodes: 3 }",
                             "  global_batch: 24\n  pp: 4\n  ep: 3\n");
    expect_err(p, 8, 7, "training.ep: 3 does not divide the 8 experts of model 'mixtral-8x7b'", "valid ep: 1, 2");
    p = exp_file("etp.yaml", "mixtral-8x7b", "{ extends: dgx-h100, nodes: 2 }", "  global_batch: 32\n  etp: 16\n");
    expect_err(p, 7, 8, "training.etp: 16 leaves the NVLink domain", "valid etp: 1, 2, 4, 8");
    p = exp_file("dom.yaml", "qwen3-30b-a3b", "{ extends: dgx-h100, nodes: 2, gpus_per_node: 6, nics_per_node: 6 }",
                 "  global_batch: 12\n  ep: 4\n");
    expect_err(p, 7, 7, "leaves the NVLink domain of 6 GPUs", "valid ep: 1, 2");
    p = exp_file("grid.yaml", "mixtral-8x7b", "{ extends: dgx-h100, nodes: 1 }",
                 "  global_batch: 8\n  pp: 4\n  dp: 2\n  ep: 4\n");
    expect_err(p, 9, 7, "ep 4 x etp 1 = 4 does not divide tp 1 x dp 2", "valid ep: 1, 2");
    p = exp_file("sp.yaml", "mixtral-8x7b", "{ extends: dgx-h100, nodes: 1 }", "  global_batch: 8\n  tp: 2\n");
    expect_err(p, 6, 3, "requires sequence parallelism with MoE and tensor parallelism", NULL);
    p = exp_file("dense.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 1 }", "  global_batch: 8\n  ep: 2\n");
    expect_err(p, 7, 7, "training.ep: 2, but model 'llama2-7b' has no experts", NULL);
    char badk[256];
    snprintf(badk, sizeof badk, "%s", tmpdir_write("badk.yaml", "name: badk\nlayers: 4\nhidden: 256\nheads: 4\n"
                                                   "vocab: 1000\nseq_len: 128\nexperts: 4\ntop_k: 5\n"));
    modelcfg m;
    cxl_err e;
    assert_int_equal(modelcfg_load(badk, &m, &e), CXL_ECONFIG);
    if (!strstr(e.msg, "model.top_k: 5 exceeds the 4 experts; valid: 1 to 4") || e.line != 8)
        fail_msg("%d: %s", e.line, e.msg);
}

/* The engine: an MoE run is slower with imbalanced routing, and the all-to-all over nodes costs more
 * than inside one (ep 16 over two nodes against ep 8 in one). */
/* The iteration time in picoseconds of an experiment on `cluster` (a reference, as exp_file writes it). */
static int64_t run_on(const char *name, const char *model, const char *cluster, const char *training)
{
    const char *p = exp_file(name, model, cluster, training);
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    cxl_err e;
    ok_or_fail(expcfg_load(p, x, &e), &e, p);
    train_result res;
    ok_or_fail(train_run(x, NULL, &res, &e), &e, p);
    int64_t ps = res.iteration_ps;
    assert_true(res.model_flops > 0);
    train_result_free(&res);
    free(x);
    return ps;
}

static double run_iter(const char *name, const char *model, const char *training)
{
    return (double)run_on(name, model, "{ extends: dgx-h100, nodes: 2 }", training) / 1e12;
}

/* An NVLink domain larger than a node (GB200 NVL72: trays of 4 GPUs, 72 on one NVLink fabric): the domain, not
 * the node, decides which groups use NVLink; its checks name the key and the nearest valid values. */
static void nvlink_domain(void **state)
{
    (void)state;
    /* a TP 8 group over two 4-GPU trays of one domain stays on NVLink: the same time as in one node of 8 with
     * the same NIC share per GPU (dp 1: TP is the only communication) */
    const char *tr = "  global_batch: 8\n  tp: 8\n  sp: true\n";
    tmpdir_write("l4.yaml", "extends: llama2-7b\nname: l4\nlayers: 4\n");
    int64_t trays = run_on("d1.yaml", "l4.yaml", "{ extends: gb200-nvl72, nodes: 2 }", tr);
    int64_t node =
        run_on("d2.yaml", "l4.yaml", "{ extends: gb200-nvl72, nodes: 1, gpus_per_node: 8, nics_per_node: 8 }", tr);
    assert_int_equal(trays, node);
    /* an EP 8 group: on NVLink inside the domain, over the NICs when the domain is the tray */
    tmpdir_write("q4.yaml", "extends: qwen3-30b-a3b\nname: q4\nlayers: 4\n");
    const char *te = "  global_batch: 16\n  ep: 8\n";
    int64_t in = run_on("d3.yaml", "q4.yaml", "{ extends: gb200-nvl72, nodes: 2 }", te);
    int64_t out = run_on("d4.yaml", "q4.yaml", "{ extends: gb200-nvl72, nodes: 2, nvlink_domain: 4 }", te);
    printf("NVLINK DOMAIN tp 8 over 2 trays %.4f s, in a node of 8 %.4f s; ep 8 in the domain %.4f s, over the NICs "
           "%.4f s\n", (double)trays / 1e12, (double)node / 1e12, (double)in / 1e12, (double)out / 1e12);
    assert_true(out > in);
    /* the checks */
    const char *p = exp_file("dn.yaml", "llama2-7b", "{ extends: gb200-nvl72, nodes: 18, nvlink_domain: 70 }",
                             "  global_batch: 72\n");
    expect_err(p, 4, 60, "cluster.nvlink_domain: 70 GPUs is not a whole number of nodes of 4",
               "nearest valid: 36 or 72");
    p = exp_file("dd.yaml", "llama2-7b", "{ extends: gb200-nvl72, nodes: 64, nvlink_domain: 72 }",
                 "  global_batch: 256\n");
    expect_err(p, 4, 60, "72 GPUs does not divide the cluster's nodes 64 x gpus_per_node 4 = 256 GPUs",
               "nearest valid: 64 or 128");
    p = exp_file("dt.yaml", "llama2-7b", "{ extends: dgx-h100, nodes: 2 }", "  global_batch: 16\n  tp: 16\n");
    expect_err(p, 7, 7, "training.tp: 16 leaves the NVLink domain of 8 GPUs", "valid tp: 1, 2, 4, 8");
    p = exp_file("dt4.yaml", "llama2-7b", "{ extends: gb200-nvl72, nodes: 4, nvlink_domain: 4 }",
                 "  global_batch: 16\n  tp: 8\n");
    expect_err(p, 7, 7, "training.tp: 8 leaves the NVLink domain of 4 GPUs", "valid tp: 1, 2, 4");
    /* a job smaller than one domain sits in it: 16 GPUs of an NVL72 rack take tp 16 */
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    cxl_err e;
    p = exp_file("d16.yaml", "llama2-7b", "{ extends: gb200-nvl72, nodes: 4 }", "  global_batch: 16\n  tp: 16\n");
    ok_or_fail(expcfg_load(p, x, &e), &e, p);
    assert_int_equal(clustercfg_domain(&x->cluster), 16);
    free(x);
}

static void moe_engine(void **state)
{
    (void)state;
    tmpdir_write("q.yaml", "extends: qwen3-30b-a3b\nname: q\nlayers: 4\n");
    tmpdir_write("q2.yaml", "extends: qwen3-30b-a3b\nname: q2\nlayers: 4\nmoe_imbalance: 2\n");
    const char *tr = "  global_batch: 32\n  pp: 2\n  ep: 8\n  recompute: selective\n";
    double bal = run_iter("e1.yaml", "q.yaml", tr);
    double imb = run_iter("e2.yaml", "q2.yaml", tr);
    double wide = run_iter("e3.yaml", "q.yaml", "  global_batch: 32\n  ep: 16\n  recompute: selective\n");
    double narrow = run_iter("e4.yaml", "q.yaml", "  global_batch: 32\n  ep: 8\n  recompute: selective\n");
    printf("MOE balanced %.4f s, imbalance 2 %.4f s; ep 16 over two nodes %.4f s, ep 8 in a node %.4f s\n", bal, imb,
           wide, narrow);
    assert_true(imb > bal * 1.05);
    assert_true(wide > narrow);
}

/* Uneven pipeline splits (parallel_chunk_layers, Megatron-Core's rules): the layers of each model chunk, the
 * engine's equivalence with the even split, and the checks. */
static void uneven_split(void **state)
{
    (void)state;
    cxl_err e;
    modelcfg m;
    traincfg t;
    uint64_t first, total = 0;
    /* Llama 3.1 405B, pp 8 x v 8 with the embedding and the loss as layers: (126 + 2) / 64 = 2 per chunk,
     * 1 in the first and the last model chunk */
    ok_or_fail(modelcfg_load("llama3-405b", &m, &e), &e, "llama3-405b");
    memset(&t, 0, sizeof t);
    t.pp = 8, t.virtual_stages = 8, t.embedding_in_split = 1, t.loss_in_split = 1;
    assert_int_equal(parallel_chunk_layers(&m, &t, 0, 0, &first), 1);
    assert_int_equal(first, 0);
    assert_int_equal(parallel_chunk_layers(&m, &t, 1, 0, &first), 2);
    assert_int_equal(first, 1);
    assert_int_equal(parallel_chunk_layers(&m, &t, 0, 1, &first), 2);
    assert_int_equal(first, 15);
    assert_int_equal(parallel_chunk_layers(&m, &t, 7, 7, &first), 1);
    assert_int_equal(first, 125);
    for (uint64_t c = 0; c < 8; c++)
        for (uint64_t r = 0; r < 8; r++) {
            uint64_t n = parallel_chunk_layers(&m, &t, r, c, &first);
            assert_int_equal(first, total); /* chunk-major order, no gap */
            total += n;
        }
    assert_int_equal(total, 126);
    /* DeepSeek-V3's 61 layers on pp 16: the first stage 4, the last 1 and the MTP module (model.mtp_layers 1,
     * run as a layer after the last), the 14 others 56 / 14 = 4 */
    ok_or_fail(modelcfg_load("deepseek-v3", &m, &e), &e, "deepseek-v3");
    memset(&t, 0, sizeof t);
    t.pp = 16, t.virtual_stages = 1, t.first_stage_layers = 4, t.last_stage_layers = 1;
    assert_int_equal(parallel_chunk_layers(&m, &t, 0, 0, &first), 4);
    assert_int_equal(parallel_chunk_layers(&m, &t, 14, 0, &first), 4);
    assert_int_equal(first, 56);
    assert_int_equal(parallel_chunk_layers(&m, &t, 15, 0, &first), 2);
    assert_int_equal(first, 60);
    m.mtp_layers = 0;
    /* with v 2 (the first stage's 4 layers in two chunks of 2): chunk 1 of rank 0 starts after all chunk 0s */
    t.pp = 2, t.virtual_stages = 2, t.first_stage_layers = 4, t.last_stage_layers = 0;
    m.layers = 8;
    assert_int_equal(parallel_chunk_layers(&m, &t, 1, 0, &first), 2);
    assert_int_equal(first, 2);
    assert_int_equal(parallel_chunk_layers(&m, &t, 0, 1, &first), 2);
    assert_int_equal(first, 4);

    /* the engine: a first stage of the even share runs exactly as the even split; a lighter first stage (its
     * layers moved to the last) makes the last stage the bottleneck; 6 layers + embedding + loss over 4
     * chunks (1, 2, 2, 1 layers) run */
    tmpdir_write("l8.yaml", "name: l8\nlayers: 8\nhidden: 1024\nheads: 8\nvocab: 32000\nseq_len: 1024\n");
    double even = run_iter("u1.yaml", "l8.yaml", "  global_batch: 32\n  pp: 2\n");
    double same = run_iter("u2.yaml", "l8.yaml", "  global_batch: 32\n  pp: 2\n  decoder_first_pipeline_num_layers: 4\n");
    double skew = run_iter("u3.yaml", "l8.yaml", "  global_batch: 32\n  pp: 2\n  decoder_first_pipeline_num_layers: 2\n");
    tmpdir_write("l6.yaml", "name: l6\nlayers: 6\nhidden: 1024\nheads: 8\nvocab: 32000\nseq_len: 1024\n");
    double emb = run_iter("u4.yaml", "l6.yaml", "  global_batch: 32\n  pp: 2\n  virtual_stages: 2\n"
                          "  account_for_embedding_in_pipeline_split: true\n  account_for_loss_in_pipeline_split: true\n");
    printf("UNEVEN even %.4f s, first 4 %.4f s, first 2 %.4f s, embedding + loss as layers (v 2) %.4f s\n", even, same,
           skew, emb);
    assert_true(same == even);
    assert_true(skew > even);
    assert_true(emb > 0);

    /* the checks of the layer keys: the training text (l8.yaml on 16 GPUs), where the error points, what it says */
    static const struct { const char *training; int line, col; const char *n1, *n2; } bad[] = {
        { "  pp: 2\n  decoder_first_pipeline_num_layers: 2\n  account_for_loss_in_pipeline_split: true\n", 8, 38,
          "exclude each other", NULL },
        { "  pp: 4\n  dp: 4\n  decoder_first_pipeline_num_layers: 3\n", 9, 38,
          "the other 3 stages cannot share the remaining 5 layers evenly", "multiple of 3" },
        { "  pp: 2\n  virtual_stages: 2\n  decoder_first_pipeline_num_layers: 3\n  decoder_last_pipeline_num_layers: 5\n",
          8, 19, "training.virtual_stages: 2 does not divide every stage's layers (first 3", NULL },
        { "  pp: 2\n  account_for_embedding_in_pipeline_split: true\n", 8, 44,
          "8 layers + 1 (embedding, loss) = 9 do not divide into pp 2 x virtual_stages 1", NULL },
        { "  decoder_first_pipeline_num_layers: 3\n", 7, 38, "pp must be at least 2", NULL },
        /* FP8's bf16 layers */
        { "  pp: 2\n  num_layers_at_start_in_bf16: 1\n", 8, 32, "bf16 layers are an option of FP8 training", NULL },
        { "  pp: 2\n  precision: fp8\n  num_layers_at_start_in_bf16: 5\n  num_layers_at_end_in_bf16: 4\n", 9, 32,
          "5 + 4 bf16 layers exceed the 8 layers of model 'l8'", "at most 8" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32], training[512];
        snprintf(name, sizeof name, "ue%zu.yaml", i);
        snprintf(training, sizeof training, "  global_batch: 32\n%s", bad[i].training);
        expect_err(exp_file(name, "l8.yaml", "{ extends: dgx-h100, nodes: 2 }", training), bad[i].line, bad[i].col,
                   bad[i].n1, bad[i].n2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_component_preset_loads),
        cmocka_unit_test(moe_params),
        cmocka_unit_test(err_moe_layouts),
        cmocka_unit_test(nvlink_domain),
        cmocka_unit_test(moe_engine),
        cmocka_unit_test(uneven_split),
        cmocka_unit_test(preset_values),
        cmocka_unit_test(params_gpt3_175b),
        cmocka_unit_test(params_llama2_7b),
        cmocka_unit_test(korthikanti_activations),
        cmocka_unit_test(te_activations),
        cmocka_unit_test(default_experiment),
        cmocka_unit_test(korthikanti_rows_load_and_fit),
        cmocka_unit_test(err_tp_heads),
        cmocka_unit_test(err_tp_kv_heads),
        cmocka_unit_test(err_pp_layers),
        cmocka_unit_test(err_virtual_stages),
        cmocka_unit_test(err_pipeline_schedule),
        cmocka_unit_test(err_batch),
        cmocka_unit_test(err_mxfp8),
        cmocka_unit_test(context_parallel_layout),
        cmocka_unit_test(err_gpu_count),
        cmocka_unit_test(err_sp_without_tp),
        cmocka_unit_test(err_zero_pp),
        cmocka_unit_test(err_precision),
        cmocka_unit_test(err_unknown_names),
        cmocka_unit_test(err_unknown_key_in_override),
        cmocka_unit_test(overrides_and_files),
        cmocka_unit_test(out_of_memory),
    };
    return cmocka_run_group_tests_name("traincfg", tests, tmpdir_setup, tmpdir_teardown);
}

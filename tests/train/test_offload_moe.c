/* test_offload_moe.c - the CXL offload policies on a mixture-of-experts model (issue 31, item 8): on a
 * small MoE model, the bytes each policy moves per iteration and the HBM / CXL tiers follow the formulas
 * of policy_*.c and tiers.h, with the routed experts sharded over the expert-data-parallel group and an
 * MoE layer's activations its own; cxl.offload_scope experts moves the routed experts' part only and
 * frees exactly their optimizer states from HBM; its bad uses fail at file:line:column with the rule. */
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

#include "config/modelcfg.h"
#include "train/gpumem.h"
#include "train/tiers.h"
#include "train/train.h"

#include "train_fixture.h"

/* Two layers, the first dense and the second an MoE layer of 8 experts of 512 (SwiGLU, no biases), on one
 * node of 4 A100: dp 4, ep 4, so 2 experts per GPU and the expert-data-parallel group is 1 GPU (tp x dp /
 * ep = 1): ZeRO-1 shards the dense part over 4 GPUs and leaves the experts whole. Line 7 is the cxl section. */
static const char head[] =
    "name: tinymoe\n"
    "model: { name: tinymoe, layers: 2, hidden: 256, heads: 4, ffn: 1024, activation: swiglu, vocab: 1024,\n"
    "         seq_len: 128, bias: false, dropout: false, experts: 8, top_k: 2, expert_ffn: 512, moe_first_dense: 1 }\n"
    "gpu: a100-80gb\n"
    "cluster: { extends: dgx-a100, nodes: 1, gpus_per_node: 4, nics_per_node: 4 }\n"
    "training: { global_batch: 8, micro_batch: 1, dp: 4, ep: 4, zero: 1, precision: bf16, main_grads: fp32 }\n";

static expcfg *load_cxl(const char *cxl)
{
    static char text[4096];
    snprintf(text, sizeof text, "%s%s", head, cxl);
    return tfx_load_text("tinymoe.yaml", text);
}

static void run(const expcfg *x, const char *backend, train_result *r)
{
    train_opts o = { NULL, NULL, NULL, NULL, 0, backend, { 0 }, NULL };
    tfx_run(x, &o, r);
}

/* Parameters per GPU: all of them (P), the routed experts' (X, one MoE layer), and the optimizer's shards. */
typedef struct sizes { uint64_t P, X, dense_shard, expert_shard, moe_layer, dense_layer; } sizes;

static sizes sizes_of(const expcfg *x)
{
    const modelcfg *m = &x->model;
    sizes s;
    s.X = m->experts / 4 * 3 * m->hidden * m->expert_ffn;   /* 2 local experts x 3 matrices of h x f */
    uint64_t xl = 0;
    s.moe_layer = modelcfg_moe_layer_params_tp(m, 1, 4, 1, &xl);
    assert_int_equal(xl, s.X);
    s.dense_layer = modelcfg_layer_params_tp(m, 1);
    s.P = modelcfg_embedding_params_tp(m, 1) + s.dense_layer + s.moe_layer + modelcfg_head_params_tp(m, 1, 1);
    s.dense_shard = (s.P - s.X + 3) / 4;                     /* ZeRO-1 over dp 4 */
    s.expert_shard = s.X;                                    /* over the expert-dp group of 1 */
    return s;
}

/* The backends sum bytes from rates over picosecond intervals where transfers overlap: equal to 1 part in
 * 10^6 (one parameter fewer or more per GPU differs by more than that). */
static void assert_bytes(double got, double want)
{
    if (!(fabs(got - want) <= 1e-6 * want))
        fail_msg("%.3f B, expected %.3f B", got, want);
}

static void domain_bytes(const train_result *r, double *rd, double *wr)
{
    assert_int_equal(r->ndomains, 1);
    *rd = r->domains[0].read_bytes;
    *wr = r->domains[0].write_bytes;
}

/* One run of the small model with per-node CXL and `offload` (keys of the cxl section), scope all (0) or
 * experts (1): the domain's bytes read and written, the offloaded shard's parameters per GPU (n) and
 * the layers' parameters a layer-by-layer offload moves per GPU (layers). */
typedef struct moved { double rd, wr, n, layers; } moved;

static moved run_offload(const char *offload, int scope, const char *backend)
{
    char cxl[512];
    snprintf(cxl, sizeof cxl, "cxl: { memory: per-node, device: asic, %s%s }\n", offload,
             scope ? ", offload_scope: experts" : "");
    expcfg *x = load_cxl(cxl);
    sizes s = sizes_of(x);
    moved v;
    v.n = scope ? (double)s.expert_shard : (double)(s.dense_shard + s.expert_shard);
    v.layers = scope ? (double)s.X : (double)(s.dense_layer + s.moe_layer);
    train_result r;
    run(x, backend, &r);
    domain_bytes(&r, &v.rd, &v.wr);
    print_message("%s, %s, scope %s: %.0f parameters per GPU offloaded; read %.0f B, written %.0f B\n", offload,
                  backend, scope ? "experts" : "all", v.n, v.rd, v.wr);
    train_result_free(&r);
    free(x);
    return v;
}

/* CPU Adam (policy_opt_cpu.c): per GPU, gradients out 4 B, Adam 16 B read and 14 B written, 16-bit weights
 * back 2 B, per parameter of the offloaded shard; the domain serves the node's 4 GPUs. */
static void cpu_adam_bytes(void **state)
{
    (void)state;
    for (int b = 0; b < 2; b++)
        for (int scope = 0; scope < 2; scope++) {
            moved v = run_offload("offload_optimizer: cpu", scope, b ? "csim" : "analytical");
            assert_bytes(v.rd, 4 * (16 + 2) * v.n);
            assert_bytes(v.wr, 4 * (4 + 14) * v.n);
        }
}

/* Streamed through the GPU (policy_opt_gpu.c): 12 B of state per parameter read and written back. */
static void gpu_stream_bytes(void **state)
{
    (void)state;
    for (int scope = 0; scope < 2; scope++) {
        moved v = run_offload("offload_optimizer: gpu", scope, "analytical");
        assert_bytes(v.rd, 4 * 12 * v.n);
        assert_bytes(v.wr, 4 * 12 * v.n);
    }
}

/* Parameters layer by layer (policy_parameters.c) with the CPU's Adam: each of the 2 micro-batches per GPU
 * (8 / (1 x 4)) reads each layer's 16-bit weights before its forward and its backward, the last backward
 * writes the layer's fp32 gradients; with offload_scope experts only the MoE layer's routed experts move. */
static void parameter_bytes(void **state)
{
    (void)state;
    for (int scope = 0; scope < 2; scope++) {
        moved v = run_offload("offload_optimizer: cpu, offload_parameters: true", scope, "analytical");
        double m = 2;
        assert_bytes(v.rd, 4 * (2 * m * 2 * v.layers + (16 + 2) * v.n));
        assert_bytes(v.wr, 4 * (4 * v.layers + (4 + 14) * v.n));
    }
}

/* Activations layer by layer (policy_activations.c): after each forward every layer's activations as
 * kept without recomputation go out, before its backward they come back; the MoE layer's are its own
 * (gpumem_moe_layer_activation_bytes), larger than the dense layer's. */
static void activation_bytes(void **state)
{
    (void)state;
    moved v = run_offload("offload_activations: true", 0, "analytical");
    expcfg *x = load_cxl("");
    traincfg none = x->train;
    none.recompute = TRAINCFG_RECOMPUTE_NONE;
    double dense = (double)(uint64_t)gpumem_layer_activation_bytes(&x->model, &none);
    double moe = (double)(uint64_t)gpumem_moe_layer_activation_bytes(&x->model, &none);
    assert_true(moe > dense);
    double m = 2;
    assert_bytes(v.rd, 4 * m * (dense + moe));
    assert_bytes(v.wr, 4 * m * (dense + moe));
    free(x);
}

/* tiers.h: offload_scope experts moves the routed experts' optimizer states (12 B per parameter over the
 * expert-dp group) and their fp32 gradient copy (4 B) to CXL; the dense part's stay in HBM. */
static void tiers_by_scope(void **state)
{
    (void)state;
    expcfg *h = load_cxl("");
    expcfg *all = load_cxl("cxl: { memory: per-node, device: asic, offload_optimizer: cpu }\n");
    expcfg *ex = load_cxl("cxl: { memory: per-node, device: asic, offload_optimizer: cpu, offload_scope: experts }\n");
    sizes s = sizes_of(h);
    gpumem g;
    gpumem_stage(&h->model, &h->train, 0, &g);
    assert_int_equal(g.expert_params, s.X);
    assert_true(g.expert_optimizer_bytes == 12.0 * (double)s.X);
    assert_true(g.optimizer_bytes == (double)(s.P - s.X) * 12 / 4 + 12.0 * (double)s.X);
    tiers t0, ta, te;
    assert_int_equal(tiers_compute(h, &t0), 0);
    assert_int_equal(tiers_compute(all, &ta), 0);
    assert_int_equal(tiers_compute(ex, &te), 0);
    assert_true(te.hbm_part[TIERS_OPTIMIZER] == (double)(s.P - s.X) * 12 / 4);
    assert_true(te.cxl_bytes_per_gpu == 16.0 * (double)s.X);
    assert_true(t0.hbm_bytes - te.hbm_bytes == 12.0 * (double)s.X);   /* the memory freed */
    assert_true(ta.hbm_part[TIERS_OPTIMIZER] == 0);
    assert_true(ta.cxl_bytes_per_gpu == g.optimizer_bytes + 4 * ((double)(s.P - s.X) / 4 + (double)s.X));
    assert_true(te.cxl_bytes_per_domain == 4 * te.cxl_bytes_per_gpu);
    free(h);
    free(all);
    free(ex);
}

/* Against HBM-only: the experts' offload waits for CXL (the CPU's Adam and its transfers outlast the GPU's
 * kernel on the dense part) and leaves less in HBM. */
static void experts_offload_runs(void **state)
{
    (void)state;
    expcfg *h = load_cxl("");
    expcfg *ex = load_cxl("cxl: { memory: per-node, device: asic, offload_optimizer: cpu, offload_scope: experts }\n");
    train_result r0, r1;
    run(h, NULL, &r0);
    run(ex, NULL, &r1);
    assert_true(r1.iteration_ps > r0.iteration_ps); /* the CPU's Adam and the transfers take longer than the kernel */
    assert_true(r1.breakdown_s[TRAIN_BK_CXL] > 0);
    assert_true(r1.tiers.hbm_bytes < r0.tiers.hbm_bytes);
    train_result_free(&r0);
    train_result_free(&r1);
    free(h);
    free(ex);
}

static void expect_err(const char *text, int line, const char *needle)
{
    cxl_err e;
    assert_null(tfx_try_load_text("tinymoe.yaml", text, &e));
    assert_int_equal(e.code, CXL_ECONFIG);
    if (!strstr(e.msg, needle))
        fail_msg("message lacks '%s': %s", needle, e.msg);
    assert_string_equal(e.file, "tinymoe.yaml");
    assert_int_equal(e.line, line);
    assert_true(e.col > 1);
}

static void scope_errors(void **state)
{
    (void)state;
    char text[4096];
    /* on a model without routed experts (the same line count) */
    snprintf(text, sizeof text, "name: dense\n"
                                "model: { name: dense, layers: 2, hidden: 256, heads: 4, ffn: 1024, vocab: 1024,\n"
                                "         seq_len: 128 }\n"
                                "gpu: a100-80gb\n"
                                "cluster: { extends: dgx-a100, nodes: 1, gpus_per_node: 4, nics_per_node: 4 }\n"
                                "training: { global_batch: 8, dp: 4, zero: 1 }\n"
                                "cxl:\n  memory: per-node\n  device: asic\n  offload_optimizer: cpu\n"
                                "  offload_scope: experts\n");
    expect_err(text, 11, "cxl.offload_scope: experts needs a mixture-of-experts model");
    /* with nothing parameter-sized offloaded */
    snprintf(text, sizeof text, "%scxl:\n  memory: per-node\n  device: asic\n  offload_activations: true\n"
                                "  offload_scope: experts\n", head);
    expect_err(text, 11, "neither is set");
    /* a value not known */
    snprintf(text, sizeof text, "%scxl:\n  memory: per-node\n  device: asic\n  offload_optimizer: cpu\n"
                                "  offload_scope: expert\n", head);
    expect_err(text, 11, "experts");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpu_adam_bytes),      cmocka_unit_test(gpu_stream_bytes),
        cmocka_unit_test(parameter_bytes),     cmocka_unit_test(activation_bytes),
        cmocka_unit_test(tiers_by_scope),
        cmocka_unit_test(experts_offload_runs), cmocka_unit_test(scope_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

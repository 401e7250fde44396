/* test_cpu_offload.c - activation offloading to the CPU's memory (training.cpu_offload_layers, Megatron-Core's
 * cpu_offloading_num_layers with Transformer Engine's offload handler; train_cpuoff.c, gpumem.h): the HBM
 * keeps L - N layers plus the larger of one layer and the head's tensors, the host N layers per GPU; the
 * copies cost nothing when the host link is fast, and with a slow link every copy is waited for in turn
 * (N out per forward, N back per backward); the host memory is checked per node; Megatron-Core's rules
 * (pp 1, no recomputation, fewer layers than the model's) and a missing host link fail at file:line:column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "train/gpumem.h"
#include "train/tiers.h"
#include "train/train.h"

#include "train_fixture.h"

/* Eight layers on one node of 4 A100 (dp 4, 2 micro-batches per GPU); line 6 is the training section. */
static const char head[] =
    "name: tinyoff\n"
    "model: { name: tinyoff, layers: 8, hidden: 512, heads: 8, ffn: 2048, vocab: 4096, seq_len: 512, dropout: false }\n"
    "gpu: a100-80gb\n"
    "cluster: { extends: dgx-a100, nodes: 1, gpus_per_node: 4, nics_per_node: 4%s }\n"
    "training: { global_batch: 8, micro_batch: 1, dp: 4, zero: 1, precision: bf16%s }\n";

static expcfg *must_load(const char *cluster, const char *train)
{
    char text[2048];
    snprintf(text, sizeof text, head, cluster, train);
    return tfx_load_text("tinyoff.yaml", text);
}

static void memory(void **state)
{
    (void)state;
    expcfg *off = must_load(", host_link_bandwidth: 25GB/s", ", cpu_offload_layers: 5");
    expcfg *none = must_load("", "");
    gpumem a, b;
    gpumem_stage(&off->model, &off->train, 0, &a);
    gpumem_stage(&none->model, &none->train, 0, &b);
    double layer = gpumem_layer_activation_bytes(&none->model, &none->train);
    /* the head's tensors: final norm and output-layer inputs 4sbh, fp32 logits 4sbV (s 512, b 1) */
    double headb = 4.0 * 512 * 512 + 4.0 * 512 * 4096;
    assert_true(headb > layer);
    assert_true(b.activations_bytes == 8 * layer + headb);
    assert_true(a.activations_bytes == 3 * layer + headb);
    assert_true(a.host_activations_bytes == 5 * layer);
    assert_true(b.host_activations_bytes == 0);
    assert_true(a.weights_bytes == b.weights_bytes && a.optimizer_bytes == b.optimizer_bytes);
    /* TE's fused cross entropy keeps the 16-bit logits only */
    expcfg *te = must_load("", ", cross_entropy_fusion_impl: te");
    gpumem c;
    gpumem_stage(&te->model, &te->train, 0, &c);
    assert_true(c.activations_bytes == 8 * layer + 4.0 * 512 * 512 + 2.0 * 512 * 4096);
    free(off), free(none), free(te);
}

static void time_cost(void **state)
{
    (void)state;
    expcfg *none = must_load("", "");
    expcfg *fast = must_load(", host_link_bandwidth: 10TB/s", ", cpu_offload_layers: 5");
    expcfg *slow = must_load(", host_link_bandwidth: 100MB/s", ", cpu_offload_layers: 5");
    double stall;
    double t0 = tfx_iteration_s(none, TRAIN_BK_CXL, NULL), tf = tfx_iteration_s(fast, TRAIN_BK_CXL, &stall);
    /* copies of a few picoseconds: hidden, as without the offload */
    assert_true(tf - t0 < 1e-6 * t0);
    double ts = tfx_iteration_s(slow, TRAIN_BK_CXL, &stall);
    /* one copy of a layer's activations at 100 MB/s; each micro-batch (2 per GPU) waits for its 5 copies out
     * in turn before its forward ends and for the 5 copies back before layer 0's backward */
    double copy = gpumem_layer_activation_bytes(&none->model, &none->train) / 100e6;
    assert_true(ts >= 2 * 2 * 5 * copy);
    assert_true(ts < t0 + 2 * 2 * 5 * copy + 1e-3);
    assert_true(stall > 0.9 * 2 * 2 * 5 * copy);
    free(none), free(fast), free(slow);
}

static void expect_error(const char *cluster, const char *train, int col, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text, head, cluster, train);
    cxl_err e;
    assert_int_not_equal(tfx_check_text("tinyoff.yaml", text, &e), 0);
    if (!strstr(e.msg, needle))
        fail_msg("'%s' not in: %s", needle, e.msg);
    assert_int_equal(e.line, 5);
    if (col)
        assert_int_equal(e.col, col);
}

static void bad_input(void **state)
{
    (void)state;
    const char *bw = ", host_link_bandwidth: 25GB/s";
    /* the value's column on line 5 */
    int col = (int)strlen("training: { global_batch: 8, micro_batch: 1, dp: 4, zero: 1, precision: bf16, "
                          "cpu_offload_layers: ") + 1;
    expect_error(bw, ", cpu_offload_layers: 8", col, "use 1 to 7");
    expect_error(bw, ", cpu_offload_layers: 2, recompute: selective", col, "without recomputation");
    expect_error("", ", cpu_offload_layers: 2", col, "host_link_bandwidth");
    expect_error(", host_link_bandwidth: 25GB/s, host_memory: 1MB", ", cpu_offload_layers: 2", col,
                 "out of CPU memory");
    /* with cxl.offload_activations: one offload of the activations or the other (at the cxl key, line 6) */
    char text[2048];
    snprintf(text, sizeof text, head, bw, ", cpu_offload_layers: 2");
    strcat(text, "cxl: { memory: per-node, device: cz120, offload_activations: true }\n");
    expcfg *x = tfx_load_text("tinyoff.yaml", text);
    cxl_err e;
    cxl_err_clear(&e);
    tiers t;
    tiers_compute(x, &t);
    assert_int_not_equal(tiers_check(x, &t, &e), 0);
    if (!strstr(e.msg, "use one of the two"))
        fail_msg("%s", e.msg);
    assert_int_equal(e.line, 6);
    free(x);
}

static void bad_pipeline(void **state)
{
    (void)state;
    char text[2048];
    snprintf(text, sizeof text, head, ", host_link_bandwidth: 25GB/s", ", cpu_offload_layers: 2");
    char *p = strstr(text, "dp: 4");
    assert_non_null(p);
    memcpy(p, "pp: 4", 5);
    cxl_err e;
    assert_null(tfx_try_load_text("tinyoff.yaml", text, &e));
    if (!strstr(e.msg, "pipeline parallelism"))
        fail_msg("%s", e.msg);
    assert_int_equal(e.line, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory),
        cmocka_unit_test(time_cost),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(bad_pipeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

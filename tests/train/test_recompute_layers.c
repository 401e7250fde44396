/* test_recompute_layers.c - full recomputation of part of the layers (training.recompute_method and
 * recompute_num_layers, Megatron-Core's --recompute-method / --recompute-num-layers; traincfg.h,
 * gpumem.c, train_step.c): block recomputes the first N layers of each model chunk, so the time added to
 * the run without recomputation grows as N / (layers per chunk) of full recomputation's and the memory
 * keeps the other layers' activations; uniform keeps one checkpoint per group of N layers and recomputes
 * every layer; Megatron's rules (options of recompute full, block needs N, N within the model, no CXL
 * activation offload beside it) fail at file:line:column. */
#include <math.h>
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

/* Eight layers on one node of 4 A100 (dp 4, 2 micro-batches per GPU); line 5 is the training section. */
static const char head[] =
    "name: tinyrc\n"
    "model: { name: tinyrc, layers: 8, hidden: 512, heads: 8, ffn: 2048, vocab: 4096, seq_len: 512, dropout: false }\n"
    "gpu: a100-80gb\n"
    "cluster: { extends: dgx-a100, nodes: 1, gpus_per_node: 4, nics_per_node: 4 }\n"
    "training: { global_batch: 8, micro_batch: 1, dp: 4, zero: 1, precision: bf16%s }\n";

/* The same on two pipeline stages of two model chunks each (2 layers per chunk; dp 2, 4 micro-batches). */
static const char head_pp[] =
    "name: tinyrc\n"
    "model: { name: tinyrc, layers: 8, hidden: 512, heads: 8, ffn: 2048, vocab: 4096, seq_len: 512, dropout: false }\n"
    "gpu: a100-80gb\n"
    "cluster: { extends: dgx-a100, nodes: 1, gpus_per_node: 4, nics_per_node: 4 }\n"
    "training: { global_batch: 8, micro_batch: 1, dp: 2, pp: 2, virtual_stages: 2, zero: 1, precision: bf16%s }\n";

static expcfg *must_load(const char *fmt, const char *train)
{
    char text[2048];
    snprintf(text, sizeof text, fmt, train);
    return tfx_load_text("tinyrc.yaml", text);
}

static double iteration_s(const char *fmt, const char *train)
{
    expcfg *x = must_load(fmt, train);
    double t = tfx_iteration_s(x, TRAIN_BK_COMPUTE, NULL);
    free(x);
    return t;
}

static double activations(const char *fmt, const char *train, uint64_t stage)
{
    expcfg *x = must_load(fmt, train);
    gpumem g;
    gpumem_stage(&x->model, &x->train, stage, &g);
    free(x);
    return g.activations_bytes;
}

/* block N: N of the chunk's layers rerun their forward; the added time is N / 8 of full recomputation's */
static void block_time(void **state)
{
    (void)state;
    double t0 = iteration_s(head, ""), tf = iteration_s(head, ", recompute: full");
    double t2 = iteration_s(head, ", recompute: full, recompute_method: block, recompute_num_layers: 2");
    double t5 = iteration_s(head, ", recompute: full, recompute_method: block, recompute_num_layers: 5");
    double t8 = iteration_s(head, ", recompute: full, recompute_method: block, recompute_num_layers: 8");
    double tu = iteration_s(head, ", recompute: full, recompute_method: uniform, recompute_num_layers: 4");
    assert_true(t0 < t2 && t2 < t5 && t5 < tf);
    assert_true(fabs(t8 - tf) < 1e-9 * tf);  /* every layer of the chunk: as full recomputation */
    assert_true(fabs(tu - tf) < 1e-9 * tf);  /* uniform groups recompute every layer too */
    double d = tf - t0;
    assert_true(fabs((t2 - t0) - d * 2 / 8) < 0.02 * d);
    assert_true(fabs((t5 - t0) - d * 5 / 8) < 0.02 * d);
}

/* with two chunks of 2 layers per stage, block 1 recomputes one layer of each chunk: half of full's cost
 * on the critical path, within what the pipeline's bubbles let through */
static void block_time_chunks(void **state)
{
    (void)state;
    double t0 = iteration_s(head_pp, ""), tf = iteration_s(head_pp, ", recompute: full");
    double t1 = iteration_s(head_pp, ", recompute: full, recompute_method: block, recompute_num_layers: 1");
    double t2 = iteration_s(head_pp, ", recompute: full, recompute_method: block, recompute_num_layers: 2");
    assert_true(t0 < t1 && t1 < tf);
    assert_true(fabs(t2 - tf) < 1e-9 * tf);
    assert_true(fabs((t1 - t0) - (tf - t0) / 2) < 0.1 * (tf - t0));
}

/* memory: the stage's 8 layers in flight (one micro-batch, plain 1F1B on one stage) keep the input of the
 * recomputed ones and all of the others', plus one layer being recomputed */
static void block_memory(void **state)
{
    (void)state;
    double none = activations(head, "", 0), full = activations(head, ", recompute: full", 0);
    expcfg *x = must_load(head, ", recompute: full");
    double ckpt = gpumem_layer_activation_bytes(&x->model, &x->train);
    x->train.recompute = TRAINCFG_RECOMPUTE_NONE;
    double layer = gpumem_layer_activation_bytes(&x->model, &x->train);
    free(x);
    double rest = none - 8 * layer; /* the head's tensors */
    assert_true(fabs(full - (8 * ckpt + layer + rest)) < 1e-9 * full);
    double b2 = activations(head, ", recompute: full, recompute_method: block, recompute_num_layers: 2", 0);
    assert_true(fabs(b2 - (2 * ckpt + 6 * layer + layer + rest)) < 1e-9 * b2);
    assert_true(full < b2 && b2 < none + layer);
    double b8 = activations(head, ", recompute: full, recompute_method: block, recompute_num_layers: 8", 0);
    assert_true(fabs(b8 - full) < 1e-9 * full);
    /* uniform groups of 4: two checkpoints, four layers rebuilt at once */
    double u4 = activations(head, ", recompute: full, recompute_method: uniform, recompute_num_layers: 4", 0);
    assert_true(fabs(u4 - (2 * ckpt + 4 * layer + rest)) < 1e-9 * u4);
}

static void expect_error(const char *train, const char *extra, int line, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text, head, train);
    if (extra)
        strcat(text, extra);
    cxl_err e;
    assert_int_not_equal(tfx_check_text("tinyrc.yaml", text, &e), 0);
    if (!strstr(e.msg, needle))
        fail_msg("'%s' not in: %s", needle, e.msg);
    assert_int_equal(e.line, line);
    assert_true(e.col > 1);
}

static void bad_input(void **state)
{
    (void)state;
    expect_error(", recompute: selective, recompute_num_layers: 2", NULL, 5, "set recompute: full");
    expect_error(", recompute_method: block", NULL, 5, "set recompute: full");
    expect_error(", recompute: full, recompute_method: block", NULL, 5, "recompute_num_layers is not given");
    expect_error(", recompute: full, recompute_method: block, recompute_num_layers: 9", NULL, 5, "valid: 1 to 8");
    expect_error(", recompute: full, recompute_method: block, recompute_num_layers: 2",
                 "cxl: { memory: per-node, device: cz120, offload_activations: true }\n", 6, "recompute_method");
    /* the error names the key's place: the value of recompute_num_layers on line 5 */
    cxl_err e;
    const char *train = ", recompute: full, recompute_method: block, recompute_num_layers: 9";
    char text[2048];
    snprintf(text, sizeof text, head, train);
    assert_null(tfx_try_load_text("tinyrc.yaml", text, &e));
    char line[512];
    snprintf(line, sizeof line, "training: { global_batch: 8, micro_batch: 1, dp: 4, zero: 1, precision: bf16%s }",
             train);
    const char *at = strstr(line, "recompute_num_layers: 9");
    assert_non_null(at);
    int key = (int)(at - line) + 1, val = key + (int)strlen("recompute_num_layers: ");
    if (e.col != key && e.col != val)
        fail_msg("column %d, neither the key's %d nor the value's %d", e.col, key, val);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(block_time),
        cmocka_unit_test(block_time_chunks),
        cmocka_unit_test(block_memory),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_tp_comm_overlap.c - Transformer Engine's userbuffers overlap of the tensor-parallel collectives
 * (training.tp_comm_overlap and ub_*_sms, Megatron's --tp-comm-overlap; opgraph.c ring_ag / ring_rs /
 * ub_chunks, train_setup.c op_sms_off): the forward's all-gathers and reduce-scatters and the row-parallel
 * backward's all-gathers run beside their GEMM's chunks (the chunks' FLOPs are the whole GEMM's), the
 * column-parallel backward's bulk overlaps take their SMs from the GEMM beside them, the exposed
 * tensor-parallel time falls, and the rules (tp > 1 with sp, the backward overlap on, dense layers, fewer
 * SMs than the GPU's) fail at file:line:column. */
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
#include "train/opgraph.h"
#include "train/train.h"

#include "train_fixture.h"

/* Four layers on one node of 4 H100 (tp 4 with sp, 4 micro-batches); line 5 is the training section. The gap
 * per kernel is set to 3 us: the test isolates the overlap, and at this small shape the fitted 17.5 us of the
 * presets would make the ring's chunked GEMMs (three times the kernels) cost more than the collectives they hide. */
static const char head[] =
    "name: tinyub\n"
    "model: { name: tinyub, layers: 4, hidden: 4096, heads: 32, ffn: 14336, vocab: 32000, seq_len: 4096, dropout: false }\n"
    "gpu: { extends: h100-sxm, kernel_overhead: 3us }\n"
    "cluster: { extends: dgx-h100, nodes: 1, gpus_per_node: 4, nics_per_node: 4 }\n"
    "training: { global_batch: 4, micro_batch: 1, tp: 4, sp: true, precision: bf16%s }\n";

static expcfg *must_load(const char *train)
{
    char text[2048];
    snprintf(text, sizeof text, head, train);
    return tfx_load_text("tinyub.yaml", text);
}

static void run(const char *train, double *iter_s, double *tp_s)
{
    expcfg *x = must_load(train);
    *iter_s = tfx_iteration_s(x, TRAIN_BK_TP, tp_s);
    free(x);
}

/* FLOPs and entries of a template: the GEMMs' FLOPs, and how many entries of `kind` it holds */
static double tpl_gemm_flops(const opgraph *g, int tpl)
{
    double f = 0;
    for (uint32_t i = 0; i < g->tpl[tpl].n; i++) {
        const opgraph_entry *en = &g->tpl[tpl].e[i];
        if (en->kind == OPGRAPH_KERNEL && g->ops[en->op].kind == OP_GEMM)
            f += g->ops[en->op].flops;
    }
    return f;
}

static int tpl_count(const opgraph *g, int tpl, int kind)
{
    int n = 0;
    for (uint32_t i = 0; i < g->tpl[tpl].n; i++)
        n += g->tpl[tpl].e[i].kind == kind;
    return n;
}

static int op_named(const opgraph *g, const char *name)
{
    for (uint32_t i = 0; i < g->nops; i++)
        if (!strcmp(g->ops[i].name, name))
            return (int)i;
    return -1;
}

/* the layer's templates: the same GEMM work cut into chunks; every collective of the forward and the
 * row-parallel backward's all-gathers beside the compute stream; the bulk overlaps' SMs on their GEMMs */
static void templates(void **state)
{
    (void)state;
    expcfg *off = must_load(""), *on = must_load(", tp_comm_overlap: true, ub_qkv_wgrad_sms: 24, ub_fc1_dgrad_sms: 2");
    opgraph *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    cxl_err e;
    assert_int_equal(opgraph_build(&off->model, &off->train, a, &e), 0);
    assert_int_equal(opgraph_build(&on->model, &on->train, b, &e), 0);
    for (int t = OPGRAPH_LAYER_FWD; t <= OPGRAPH_LAYER_BWD; t++) {
        double fa = tpl_gemm_flops(a, t), fb = tpl_gemm_flops(b, t);
        assert_true(fabs(fa - fb) < 1e-9 * fa);
    }
    /* forward: two all-gathers and two reduce-scatters, all beside the stream (none blocking it) */
    assert_int_equal(tpl_count(a, OPGRAPH_LAYER_FWD, OPGRAPH_TP_COLL), 4);
    assert_int_equal(tpl_count(b, OPGRAPH_LAYER_FWD, OPGRAPH_TP_COLL), 0);
    assert_int_equal(tpl_count(b, OPGRAPH_LAYER_FWD, OPGRAPH_TP_ASYNC), 4);
    /* backward: the output gradient's two all-gathers join the four bulk overlaps beside the stream */
    assert_int_equal(tpl_count(a, OPGRAPH_LAYER_BWD, OPGRAPH_TP_COLL), 2);
    assert_int_equal(tpl_count(b, OPGRAPH_LAYER_BWD, OPGRAPH_TP_COLL), 0);
    assert_int_equal(tpl_count(b, OPGRAPH_LAYER_BWD, OPGRAPH_TP_ASYNC), tpl_count(a, OPGRAPH_LAYER_BWD, OPGRAPH_TP_ASYNC) + 2);
    /* the chunks: 3 of the 4 beside the all-gather on 3 streams (one op of 3 chunks), the last alone */
    int q = op_named(b, "qkv.fwd"), ql = op_named(b, "qkv.fwd.ub");
    assert_true(q >= 0 && ql >= 0);
    assert_int_equal(b->ops[q].batch, 3);
    assert_int_equal(b->ops[q].m, 4096 / 4);
    assert_int_equal(b->ops[ql].m, 4096 / 4);
    /* the SMs of the bulk overlaps: as configured, the others TE's default 16 */
    assert_int_equal(b->op_sms_off[op_named(b, "qkv.bwd_weight")], 24);
    assert_int_equal(b->op_sms_off[op_named(b, "fc1.bwd_data")], 2);
    assert_int_equal(b->op_sms_off[op_named(b, "qkv.bwd_data")], 16);
    assert_int_equal(b->op_sms_off[op_named(b, "fc1.bwd_weight")], 16);
    assert_int_equal(b->op_sms_off[op_named(b, "proj.bwd_weight")], 0);
    assert_int_equal(a->op_sms_off[op_named(a, "qkv.bwd_weight")], 0);
    free(a), free(b), free(off), free(on);
}

/* time: the collectives hide behind the GEMMs (less exposed tensor-parallel time, a shorter iteration); the
 * bulk overlaps' SMs slow their GEMMs (more SMs, longer) */
static void timing(void **state)
{
    (void)state;
    double t0, tp0, t1, tp1, t2, tp2, t3, tp3;
    run("", &t0, &tp0);
    run(", tp_comm_overlap: true, ub_qkv_dgrad_sms: 0, ub_qkv_wgrad_sms: 0, ub_fc1_dgrad_sms: 0, ub_fc1_wgrad_sms: 0",
        &t1, &tp1);
    run(", tp_comm_overlap: true", &t2, &tp2);
    run(", tp_comm_overlap: true, ub_qkv_dgrad_sms: 64, ub_qkv_wgrad_sms: 64, ub_fc1_dgrad_sms: 64, "
        "ub_fc1_wgrad_sms: 64", &t3, &tp3);
    assert_true(tp1 < 0.5 * tp0);
    assert_true(t1 < t0);
    assert_true(t1 < t2 && t2 < t3);
    /* off: the option's keys change nothing */
    double t4, tp4;
    run(", ub_qkv_wgrad_sms: 64", &t4, &tp4);
    assert_true(t4 == t0 && tp4 == tp0);
}

/* the experiment with `train` appended to line 5 and, when from is given, its first `from` replaced by `to`
 * must fail on line 5 with needle in the message */
static void expect_error(const char *train, const char *from, const char *to, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text, head, train);
    if (from) {
        char *p = strstr(text, from), rest[2048];
        assert_non_null(p);
        snprintf(rest, sizeof rest, "%s", p + strlen(from));
        snprintf(p, sizeof text - (size_t)(p - text), "%s%s", to, rest);
    }
    cxl_err e;
    assert_null(tfx_try_load_text("tinyub.yaml", text, &e));
    if (!strstr(e.msg, needle))
        fail_msg("'%s' not in: %s", needle, e.msg);
    assert_int_equal(e.line, 5);
    assert_true(e.col > 1);
}

static void bad_input(void **state)
{
    (void)state;
    expect_error(", tp_comm_overlap: true", "sp: true", "sp: false", "sp: true");
    expect_error(", tp_comm_overlap: true, tp_grad_comm_overlap: false", NULL, NULL, "tp_grad_comm_overlap is false");
    expect_error(", tp_comm_overlap: true, ub_qkv_wgrad_sms: 132", NULL, NULL, "valid: 0 to 131");
    /* tp 1 (dp 4 on the same GPUs) */
    expect_error(", tp_comm_overlap: true, dp: 4", "tp: 4, sp: true", "tp: 1, sp: false", "tp is 1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(templates),
        cmocka_unit_test(timing),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_a2a_overlap.c - training.moe_a2a_overlap, Megatron-Core's combined 1F1B schedule (train_a2a.c): the order
 * with one more warm-up forward and steady pairs of independent passes (schedule_build_combined); the MoE layer's
 * entries tagged with Megatron-Core's schedule nodes; in the engine a pair's all-to-alls run on the communication
 * stream under the partner's compute (less exposed all-to-all time, a faster iteration), while a pass without a
 * partner (one micro-batch: warm-up and cool-down only) runs exactly as without the overlap; and the
 * configuration errors Megatron-Core's asserts give, at the key's file:line:column. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/expcfg.h"
#include "train/gpumem.h"
#include "train/opgraph.h"
#include "train/schedule.h"
#include "train/train.h"

#include "train_fixture.h"

#define F(mb, c) {(mb), (c), 0, 0}
#define B(mb, c) {(mb), (c), 1, 0}

static schedule_item *combined(uint32_t pp, uint32_t rank, uint32_t m, uint32_t v, size_t *n)
{
    cxl_err e;
    size_t need = schedule_len(m, v);
    schedule_item *s = calloc(need, sizeof *s);
    assert_non_null(s);
    if (schedule_build_combined(pp, rank, m, v, s, need, n, &e))
        fail_msg("schedule_build_combined(pp %u, rank %u, m %u, v %u): %s", pp, rank, m, v, e.msg);
    assert_int_equal(*n, need);
    return s;
}

/* combined_1f1b_schedule_for_no_pipelining: F0, then F(k+1) beside B(k), then B(m-1). Interleaved: Megatron's
 * order with num_warmup_microbatches + 1 (get_pp_rank_microbatches); every steady pair's forward and backward
 * are different passes, the backward's forward run before the pair. */
static void combined_order(void **state)
{
    (void)state;
    const schedule_item want[] = { F(0, 0), F(1, 0), B(0, 0), F(2, 0), B(1, 0), F(3, 0), B(2, 0), B(3, 0) };
    size_t n;
    schedule_item *s = combined(1, 0, 4, 1, &n);
    for (size_t i = 0; i < n; i++)
        assert_true(s[i].microbatch == want[i].microbatch && s[i].backward == want[i].backward && s[i].chunk == 0);
    free(s);
    assert_int_equal(schedule_warmup_combined(1, 0, 4, 1), 1);
    assert_int_equal(schedule_warmup_combined(2, 0, 4, 2), schedule_warmup(2, 0, 4, 2) + 1);
    assert_int_equal(schedule_warmup_combined(2, 0, 2, 2), 4); /* m = pp: every forward first, as before */
    static const uint32_t cfg[][3] = { { 2, 4, 2 }, { 2, 8, 12 }, { 4, 8, 2 }, { 8, 16, 2 }, { 4, 12, 3 } };
    for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++)
        for (uint32_t r = 0; r < cfg[c][0]; r++) {
            uint32_t pp = cfg[c][0], m = cfg[c][1], v = cfg[c][2];
            s = combined(pp, r, m, v, &n);
            uint64_t w = schedule_warmup_combined(pp, r, m, v), total = (uint64_t)m * v;
            assert_int_equal(w, schedule_warmup(pp, r, m, v) + 1 < total ? schedule_warmup(pp, r, m, v) + 1 : total);
            for (uint64_t k = 0; k < total - w; k++) {
                const schedule_item *f = &s[w + 2 * k], *b = &s[w + 2 * k + 1];
                assert_true(!f->backward && b->backward);
                assert_false(f->microbatch == b->microbatch && f->chunk == b->chunk);
                int seen = 0;
                for (uint64_t i = 0; i < w + 2 * k; i++)
                    seen |= !s[i].backward && s[i].microbatch == b->microbatch && s[i].chunk == b->chunk;
                assert_true(seen);
            }
            free(s);
        }
    cxl_err e;
    assert_int_equal(schedule_build_combined(2, 0, 4, 1, NULL, 0, &n, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "virtual stages"));
}

/* Qwen3-30B-A3B's MoE layer: each entry in the node Megatron-Core's fine_grained_callables runs it in. */
static int node_of(const opgraph *g, int tpl, const char *name)
{
    for (uint32_t i = 0; i < g->tpl[tpl].n; i++) {
        const opgraph_entry *en = &g->tpl[tpl].e[i];
        const char *nm = en->kind == OPGRAPH_KERNEL ? g->ops[en->op].name : en->name;
        if (nm && !strcmp(nm, name))
            return en->node;
    }
    return -1;
}

static void layer_nodes(void **state)
{
    (void)state;
    expcfg *x = tfx_load_file(CXLSIM_SOURCE_DIR "/configs/validation/megatron-bridge/qwen3-30b-a3b.yaml");
    opgraph *g = malloc(sizeof *g);
    assert_non_null(g);
    cxl_err e;
    assert_int_equal(opgraph_build(&x->model, &x->train, g, &e), 0);
    const int F = OPGRAPH_MOE_FWD, Bw = OPGRAPH_MOE_BWD;
    assert_int_equal(node_of(g, F, "attn.flash.fwd"), OPGRAPH_NODE_ATTN);
    assert_int_equal(node_of(g, F, "moe.router.fwd"), OPGRAPH_NODE_POST_ATTN);
    assert_int_equal(node_of(g, F, "moe.permute.fwd"), OPGRAPH_NODE_POST_ATTN);
    assert_int_equal(node_of(g, F, "moe.dispatch.sync"), OPGRAPH_NODE_DISPATCH);
    assert_int_equal(node_of(g, F, "ep.alltoall.dispatch"), OPGRAPH_NODE_DISPATCH);
    assert_int_equal(node_of(g, F, "ep.alltoall.dispatch.probs"), OPGRAPH_NODE_DISPATCH);
    assert_int_equal(node_of(g, F, "moe.expert.fc1.fwd"), OPGRAPH_NODE_MLP);
    assert_int_equal(node_of(g, F, "moe.unsort_chunks.fwd"), OPGRAPH_NODE_MLP);
    assert_int_equal(node_of(g, F, "ep.alltoall.combine"), OPGRAPH_NODE_COMBINE);
    assert_int_equal(node_of(g, F, "moe.unpermute.fwd"), OPGRAPH_NODE_COMBINE);
    assert_int_equal(node_of(g, F, "resid2.fwd"), OPGRAPH_NODE_COMBINE);
    assert_int_equal(node_of(g, Bw, "resid2.bwd"), OPGRAPH_NODE_COMBINE);
    assert_int_equal(node_of(g, Bw, "ep.alltoall.combine.grad"), OPGRAPH_NODE_COMBINE);
    assert_int_equal(node_of(g, Bw, "moe.expert.fc2.bwd_weight"), OPGRAPH_NODE_MLP);
    assert_int_equal(node_of(g, Bw, "ep.alltoall.dispatch.grad"), OPGRAPH_NODE_DISPATCH);
    assert_int_equal(node_of(g, Bw, "moe.router.bwd_data"), OPGRAPH_NODE_POST_ATTN);
    assert_int_equal(node_of(g, Bw, "qkv.bwd_weight"), OPGRAPH_NODE_ATTN);
    free(g);
    free(x);
}

/* Two MoE layers of 16 experts on one DGX H100 (dp 8, ep 8: 2 experts per GPU), micro-batches = global / 8. */
static expcfg *tiny(int overlap, unsigned global)
{
    static char text[1024];
    snprintf(text, sizeof text,
             "name: a2a\n"
             "model: { name: a2a, layers: 2, hidden: 2048, heads: 16, ffn: 4096, activation: swiglu, vocab: 4096,\n"
             "         seq_len: 4096, bias: false, dropout: false, experts: 16, top_k: 4, expert_ffn: 1024 }\n"
             "gpu: h100-sxm\n"
             "cluster: { extends: dgx-h100, nodes: 1 }\n"
             "training: { global_batch: %u, micro_batch: 1, dp: 8, ep: 8, moe_a2a_overlap: %s }\n",
             global, overlap ? "true" : "false");
    return tfx_load_text("a2a.yaml", text);
}

/* With partners (4 micro-batches: F0, three pairs, B3) each pair's dispatch and combine run under the other
 * pass's compute: the exposed all-to-all time falls to well under half, the iteration is faster by at least
 * what was hidden less what the kernels lose to NCCL's SMs. With one micro-batch (F0 B0: warm-up and cool-down
 * only) nothing overlaps: the same time to the picosecond. */
static void overlap_hides_a2a(void **state)
{
    (void)state;
    double tp[2], it[2];
    for (int o = 0; o < 2; o++) {
        expcfg *x = tiny(o, 32);
        it[o] = tfx_iteration_s(x, TRAIN_BK_TP, &tp[o]);
        free(x);
    }
    assert_true(tp[0] > 0);
    assert_true(tp[1] < 0.5 * tp[0]);
    assert_true(it[1] < it[0]);
    train_result r[2];
    for (int o = 0; o < 2; o++) {
        expcfg *x = tiny(o, 8);
        tfx_run(x, NULL, &r[o]);
        free(x);
    }
    assert_true(r[0].breakdown_s[TRAIN_BK_TP] > 0);
    assert_int_equal(r[0].iteration_ps, r[1].iteration_ps);
    for (int b = 0; b < TRAIN_BK_N; b++)
        assert_true(r[0].breakdown_s[b] == r[1].breakdown_s[b]);
    train_result_free(&r[0]);
    train_result_free(&r[1]);
}

/* The interleaved schedule (pp 2, 2 virtual stages, 8 micro-batches): each rank pairs forwards with backwards of
 * other chunks and micro-batches, sends per pass (overlap_p2p_comm, as Megatron-Bridge sets it for pp > 1, vp > 1);
 * it completes, faster, with less all-to-all exposed. */
static void overlap_interleaved(void **state)
{
    (void)state;
    static const char fmt[] =
        "name: a2a\n"
        "model: { name: a2a, layers: 4, hidden: 2048, heads: 16, ffn: 4096, activation: swiglu, vocab: 4096,\n"
        "         seq_len: 4096, bias: false, dropout: false, experts: 16, top_k: 4, expert_ffn: 1024 }\n"
        "gpu: h100-sxm\n"
        "cluster: { extends: dgx-h100, nodes: 1 }\n"
        "training: { global_batch: 32, micro_batch: 1, pp: 2, virtual_stages: 2, dp: 4, ep: 4, overlap_p2p_comm: true,\n"
        "            moe_a2a_overlap: %s }\n";
    double tp[2], it[2];
    for (int o = 0; o < 2; o++) {
        char text[1024];
        snprintf(text, sizeof text, fmt, o ? "true" : "false");
        expcfg *x = tfx_load_text("a2a.yaml", text);
        it[o] = tfx_iteration_s(x, TRAIN_BK_TP, &tp[o]);
        free(x);
    }
    assert_true(tp[1] < 0.5 * tp[0]);
    assert_true(it[1] < it[0]);
}

/* Memory: the combined schedule holds one layer more at the peak (its pair's forward builds a layer before
 * the backward frees one) when it has a pair, the same without one; interleaved as well (the H100 Qwen3 row). */
static void layers_in_flight(void **state)
{
    (void)state;
    double f[2][2];
    for (int o = 0; o < 2; o++)
        for (int g = 0; g < 2; g++) {
            expcfg *x = tiny(o, g ? 32 : 8);
            f[o][g] = gpumem_layers_in_flight(&x->model, &x->train, 0);
            free(x);
        }
    assert_true(f[1][1] == f[0][1] + 1);
    assert_true(f[1][0] == f[0][0]);
    expcfg *x = tfx_load_file(CXLSIM_SOURCE_DIR "/configs/validation/megatron-bridge/qwen3-30b-a3b.yaml");
    assert_int_equal(x->train.moe_a2a_overlap, 1);
    double with = gpumem_layers_in_flight(&x->model, &x->train, 0);
    x->train.moe_a2a_overlap = 0;
    assert_true(with == gpumem_layers_in_flight(&x->model, &x->train, 0) + 1);
    free(x);
}

/* The errors, each at training.moe_a2a_overlap's line 7 (or the key named) with the rule and what is valid. */
static void config_errors(void **state)
{
    (void)state;
    static const struct { const char *model, *train, *want; } c[] = {
        { "", "dp: 8, moe_a2a_overlap: true", "expert parallelism" },
        { ", experts: 16, top_k: 4, expert_ffn: 1024", "dp: 8, ep: 1, moe_a2a_overlap: true", "expert parallelism" },
        { ", experts: 16, top_k: 4, expert_ffn: 1024", "pp: 2, dp: 4, ep: 4, overlap_p2p_comm: true, moe_a2a_overlap: true",
          "virtual_pipeline_model_parallel_size" },
        { ", experts: 16, top_k: 4, expert_ffn: 1024", "dp: 8, ep: 8, recompute: full, moe_a2a_overlap: true",
          "full recomputation" },
        { ", experts: 16, top_k: 4, expert_ffn: 1024", "dp: 8, ep: 8, precision: fp32, moe_a2a_overlap: true",
          "bf16 or fp16" },
        { ", experts: 16, top_k: 4, expert_ffn: 1024",
          "pp: 2, dp: 4, ep: 4, virtual_stages: 2, moe_a2a_overlap: true", "overlap_p2p_comm" },
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "name: a2a\n"
                 "model: { name: a2a, layers: 4, hidden: 1024, heads: 8, ffn: 4096, activation: swiglu, vocab: 4096,\n"
                 "         seq_len: 1024, bias: false, dropout: false%s }\n"
                 "gpu: h100-sxm\n"
                 "cluster: { extends: dgx-h100, nodes: 1 }\n"
                 "training: { global_batch: 32, micro_batch: 1,\n"
                 "            %s }\n",
                 c[i].model, c[i].train);
        cxl_err e;
        expcfg *x = tfx_try_load_text("a2a.yaml", text, &e);
        if (x)
            fail_msg("case %zu loaded; want an error with '%s'", i, c[i].want);
        assert_int_equal(e.code, CXL_ECONFIG);
        assert_int_equal(e.line, 7);
        if (!strstr(e.msg, "moe_a2a_overlap") || !strstr(e.msg, c[i].want))
            fail_msg("case %zu: %s", i, e.msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(combined_order),
        cmocka_unit_test(layer_nodes),
        cmocka_unit_test(overlap_hides_a2a),
        cmocka_unit_test(overlap_interleaved),
        cmocka_unit_test(layers_in_flight),
        cmocka_unit_test(config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

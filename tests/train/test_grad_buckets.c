/* test_grad_buckets.c - the data-parallel buckets of Megatron-Core's DDP (train_grads.c, train_pgather.c): the
 * routed experts' parameters in buffers of their own, reduced and gathered over the expert-data-parallel
 * group (tp x cp x dp / (ep x etp) ranks) instead of the data-parallel one; a bucket never spans two model
 * chunks; one bucket per buffer on pipeline ranks after the first and for model chunks after the first
 * (Megatron-LM 0d8e071 megatron/core/distributed/distributed_data_parallel.py, expert_parallel_buffers and
 * `if disable_bucketing or pp_rank > 0`; megatron/training/training.py get_model). */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/expcfg.h"
#include "out/ctrace.h"
#include "train/collalgo.h"
#include "train/opgraph.h"
#include "train/train.h"

#include "train_fixture.h"

/* the data-parallel collectives of op `op` over groups of `ranks` ranks, all stages: calls and bytes per rank */
typedef struct tally { uint64_t calls, bytes; } tally;

static tally count(const train_result *r, int op, uint32_t ranks)
{
    tally t = { 0, 0 };
    for (uint32_t i = 0; i < r->ncolls; i++)
        if (r->colls[i].group == TRAIN_GROUP_DP && r->colls[i].op == op && r->colls[i].ranks == ranks) {
            t.calls += r->colls[i].count;
            t.bytes += r->colls[i].count * r->colls[i].bytes;
        }
    return t;
}

/* 2 nodes of 8 H100, 4 MoE layers of 16 experts (3 x 2048 x 1024 parameters each), bf16 weights, fp32 main
 * gradients; training keys after the batch */
static void run_moe_opts(const char *training, const train_opts *o, train_result *r)
{
    char text[1024];
    snprintf(text, sizeof text,
             "name: edp\n"
             "model: { name: edp, layers: 4, hidden: 2048, heads: 16, ffn: 4096, activation: swiglu, vocab: 4096,\n"
             "         seq_len: 2048, bias: false, dropout: false, experts: 16, top_k: 4, expert_ffn: 1024 }\n"
             "gpu: h100-sxm\n"
             "cluster: { extends: dgx-h100, nodes: 2 }\n"
             "training: { global_batch: 64, micro_batch: 1, main_grads: fp32, zero: 1%s }\n",
             training);
    expcfg *x = tfx_load_text("edp.yaml", text);
    tfx_run(x, o, r);
    free(x);
}

static void run_moe(const char *training, train_result *r) { run_moe_opts(training, NULL, r); }

static void experts_over_the_expert_data_parallel_group(void **state)
{
    (void)state;
    /* dp 16, ep 8: 2 experts per GPU, an expert-data-parallel group of 16 / 8 = 2 ranks (one per node) */
    train_result r;
    run_moe(", dp: 16, ep: 8, overlap_grad_reduce: true", &r);
    const uint64_t expert_params = 4ull * 2 * 3 * 2048 * 1024;   /* per GPU: 4 layers x 2 experts */
    tally rs_x = count(&r, COLLALGO_REDUCE_SCATTER, 2), rs_d = count(&r, COLLALGO_REDUCE_SCATTER, 16);
    tally ag_x = count(&r, COLLALGO_ALLGATHER, 2), ag_d = count(&r, COLLALGO_ALLGATHER, 16);
    /* the experts' gradients (4 B each) and parameters (2 B each) over the 2 ranks, all of them, and only them */
    assert_true(rs_x.calls > 0 && ag_x.calls > 0);
    assert_true(rs_x.bytes == expert_params * 4);
    assert_true(ag_x.bytes == expert_params * 2);
    /* the rest (attention, router, embedding) over the 16 data-parallel ranks: the same share of 4 B and 2 B */
    assert_true(rs_d.calls > 0 && ag_d.calls > 0);
    assert_true(rs_d.bytes == 2 * ag_d.bytes);
    /* the group's two ranks are on two nodes (the expert grid's order: etp, then ep, then expert-dp) */
    for (uint32_t i = 0; i < r.ncolls; i++)
        if (r.colls[i].group == TRAIN_GROUP_DP && r.colls[i].ranks == 2)
            assert_int_equal(r.colls[i].nodes, 2);
    /* nothing over another group */
    uint64_t all = 0;
    for (uint32_t i = 0; i < r.ncolls; i++)
        if (r.colls[i].group == TRAIN_GROUP_DP)
            all += r.colls[i].count;
    assert_true(all == rs_x.calls + rs_d.calls + ag_x.calls + ag_d.calls);
    train_result_free(&r);

    /* ep 16: every rank holds its own experts, an expert-data-parallel group of one: nothing to reduce */
    run_moe(", dp: 16, ep: 16, overlap_grad_reduce: true", &r);
    assert_true(count(&r, COLLALGO_REDUCE_SCATTER, 16).calls > 0);
    for (uint32_t i = 0; i < r.ncolls; i++)
        assert_true(r.colls[i].group != TRAIN_GROUP_DP || r.colls[i].ranks == 16);
    train_result_free(&r);
}

static void experts_own_buckets(void **state)
{
    (void)state;
    /* grad_bucket 16 MB: each layer's experts (2 x 3 x 2048 x 1024 x 4 B = 50 MB) a bucket of their own; the
     * dense buffer's buckets (a layer's attention and router, 2 x 2048 x 2048 + ... = 17 MB each; the embedding)
     * apart from them */
    train_result r;
    run_moe(", dp: 16, ep: 8, overlap_grad_reduce: true, grad_bucket: 16MB", &r);
    assert_true(count(&r, COLLALGO_REDUCE_SCATTER, 2).calls == 4);
    /* the gathers after the step take the same buckets: 4 M elements (16 MB of fp32 gradients) each */
    assert_true(count(&r, COLLALGO_ALLGATHER, 2).calls == 4);
    uint64_t after_step = count(&r, COLLALGO_ALLGATHER, 16).calls;
    int64_t after_ps = r.iteration_ps;
    train_result_free(&r);
    /* overlap_param_gather: the same buckets in two chains (the dense, the experts'), each bucket issued when
     * the forward reaches the one before in its own chain; the same calls, less exposed */
    run_moe(", dp: 16, ep: 8, overlap_grad_reduce: true, grad_bucket: 16MB, overlap_param_gather: true", &r);
    assert_true(count(&r, COLLALGO_ALLGATHER, 2).calls == 4);
    assert_true(count(&r, COLLALGO_ALLGATHER, 16).calls == after_step);
    assert_true(r.iteration_ps < after_ps);
    train_result_free(&r);
    /* without overlap_grad_reduce one call per buffer: the dense one and the experts' one */
    run_moe(", dp: 16, ep: 8", &r);
    assert_true(count(&r, COLLALGO_REDUCE_SCATTER, 2).calls == 1);
    assert_true(count(&r, COLLALGO_REDUCE_SCATTER, 16).calls == 1);
    train_result_free(&r);
}

/* the dense model of test_param_gather.c: 8 layers of 12.6 M parameters, 2 nodes of 8 A100 */
static void run_dense(const char *training, train_result *r)
{
    char text[1024];
    snprintf(text, sizeof text,
             "name: g\n"
             "model: { name: tiny, layers: 8, hidden: 1024, heads: 8, vocab: 4096, seq_len: 512, tied_embeddings: true }\n"
             "gpu: a100-80gb\n"
             "cluster: { extends: dgx-a100, nodes: 2 }\n"
             "training: { global_batch: 64, micro_batch: 2, main_grads: fp32%s }\n",
             training);
    expcfg *x = tfx_load_text("g.yaml", text);
    tfx_run(x, NULL, r);
    free(x);
}

static void buckets_per_chunk_and_stage(void **state)
{
    (void)state;
    train_result r;
    /* pp 2, two chunks per stage, a layer (50 MB of fp32 gradients) over grad_bucket 4 MB: stage 0's chunk 0
     * (the embedding and two layers) in three buckets, its chunk 1 one bucket (disable_bucketing); stage 1, a
     * pipeline rank after the first, one bucket per chunk (bucket_size None for pp_rank > 0): 3 + 1 + 1 + 1 */
    run_dense(", dp: 8, zero: 1, pp: 2, virtual_stages: 2, overlap_grad_reduce: true, grad_bucket: 4MB", &r);
    assert_true(count(&r, COLLALGO_REDUCE_SCATTER, 8).calls == 6);
    tally on = count(&r, COLLALGO_REDUCE_SCATTER, 8);
    train_result_free(&r);
    /* without overlap_grad_reduce: one call per chunk (each chunk's DDP its own buffer), the same bytes */
    run_dense(", dp: 8, zero: 1, pp: 2, virtual_stages: 2", &r);
    tally off = count(&r, COLLALGO_REDUCE_SCATTER, 8);
    assert_true(off.calls == 4);
    assert_true(off.bytes == on.bytes);
    train_result_free(&r);
    /* one stage, one chunk: every layer a bucket of its own, the embedding one more (8 + 1) */
    run_dense(", dp: 16, zero: 1, overlap_grad_reduce: true, grad_bucket: 4MB", &r);
    assert_true(count(&r, COLLALGO_REDUCE_SCATTER, 16).calls == 9);
    train_result_free(&r);
}

/* A slice of stage 0's trace: its name, lane (tid) and span in microseconds */
typedef struct slice { char name[64]; unsigned tid; double t0, t1; } slice;
#define MAX_SLICES 65536
static slice slices[MAX_SLICES];

/* The MoE run of run_moe traced: its slices of stage 0 into `slices`, their number */
static size_t traced_moe(const char *training)
{
    char path[] = "/tmp/cxlsim_edp_trace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cxl_err e;
    ctrace *ct;
    assert_int_equal(ctrace_open(&ct, path, 0, INT64_MAX, &e), 0);
    train_opts o = { .trace = ct };
    train_result r;
    run_moe_opts(training, &o, &r);
    train_result_free(&r);
    assert_int_equal(ctrace_finish(ct, &e), 0);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char line[1024];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        slice sl;
        unsigned pid;
        double dur;
        if (sscanf(line, "{\"ph\":\"X\",\"name\":\"%63[^\"]\",\"pid\":%u,\"tid\":%u,\"cat\":\"%*[^\"]\",\"ts\":%lf,"
                         "\"dur\":%lf", sl.name, &pid, &sl.tid, &sl.t0, &dur) != 5 || pid != 0)
            continue;
        sl.t1 = sl.t0 + dur;
        assert_true(n < MAX_SLICES);
        slices[n++] = sl;
    }
    fclose(f);
    unlink(path);
    return n;
}

static int named(const slice *s, const char *prefix) { return !strncmp(s->name, prefix, strlen(prefix)); }

/* Pairs of a data-parallel group's collective (tid 1) and an expert-data-parallel group's (tid 3) that overlap in
 * time; every dp.* slice checked to be on its group's lane */
static size_t overlapping_pairs(size_t n)
{
    size_t pairs = 0;
    for (size_t i = 0; i < n; i++) {
        if (named(&slices[i], "dp.grads.experts") || named(&slices[i], "dp.params.experts"))
            assert_int_equal(slices[i].tid, 3);
        else if (named(&slices[i], "dp.grads") || named(&slices[i], "dp.params"))
            assert_int_equal(slices[i].tid, 1);
        if (slices[i].tid != 1)
            continue;
        for (size_t j = 0; j < n; j++)
            if (slices[j].tid == 3 && slices[j].t0 < slices[i].t1 && slices[i].t0 < slices[j].t1)
                pairs++;
    }
    return pairs;
}

static void two_groups_side_by_side(void **state)
{
    (void)state;
    /* overlap_grad_reduce: each bucket reduce-scattered asynchronously (async_op) on its group's NCCL stream (each
     * process group its own communicator and stream, PyTorch's ProcessGroupNCCL): the experts' over the two-node
     * expert-data-parallel group run beside the dense buckets over the data-parallel group */
    size_t n = traced_moe(", dp: 16, ep: 8, overlap_grad_reduce: true, grad_bucket: 16MB");
    size_t experts = 0;
    for (size_t i = 0; i < n; i++)
        experts += slices[i].tid == 3;
    assert_int_equal(experts, 8);   /* 4 reduce-scatters, 4 gathers after the step */
    assert_true(overlapping_pairs(n) > 0);
    /* without overlap_grad_reduce the calls are synchronous (async_op False: the compute stream waits for each,
     * and the next, on the other group's stream, waits for the compute stream), and so are the gathers after the
     * step: one after another, never side by side */
    n = traced_moe(", dp: 16, ep: 8");
    assert_int_equal(overlapping_pairs(n), 0);
    double dense_end = 0, experts_start = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(slices[i].name, "dp.grads"))
            dense_end = slices[i].t1;
        if (!strcmp(slices[i].name, "dp.grads.experts"))
            experts_start = slices[i].t0;
    }
    assert_true(dense_end > 0 && experts_start >= dense_end);  /* finish_grad_sync: bucket groups, then experts' */
}

static void experts_gather_at_their_pre_hook(void **state)
{
    (void)state;
    /* the template: the routed experts' first entry (their fc1's pre-hook) after the dispatch, before fc1 */
    expcfg *x = tfx_load_file(CXLSIM_SOURCE_DIR "/configs/validation/megatron-bridge/qwen3-30b-a3b.yaml");
    cxl_err e;
    opgraph g;
    assert_int_equal(opgraph_build(&x->model, &x->train, &g, &e), 0);
    const opgraph_tpl *T = &g.tpl[OPGRAPH_MOE_FWD];
    int hook = -1, hooks = 0, dispatch = -1, fc1 = -1;
    for (uint32_t i = 0; i < T->n; i++) {
        const opgraph_entry *en = &T->e[i];
        const char *name = en->kind == OPGRAPH_KERNEL ? g.ops[en->op].name : en->name;
        if (en->experts_hook)
            hook = (int)i, hooks++;
        if (name && !strcmp(name, "ep.alltoall.dispatch"))
            dispatch = (int)i;
        if (name && !strcmp(name, "moe.expert.fc1.fwd") && fc1 < 0)
            fc1 = (int)i;
    }
    assert_int_equal(hooks, 1);
    assert_true(dispatch >= 0 && dispatch < hook && hook <= fc1);
    for (uint32_t i = 0; i < g.tpl[OPGRAPH_LAYER_FWD].n; i++)
        assert_false(g.tpl[OPGRAPH_LAYER_FWD].e[i].experts_hook);
    free(x);
    /* overlap_param_gather: the experts' first bucket is issued at their pre-hook, after the first MoE layer's
     * router; the dense chain's at the layer's start, before it */
    size_t n = traced_moe(", dp: 16, ep: 8, overlap_grad_reduce: true, grad_bucket: 16MB, overlap_param_gather: true");
    double router_end = -1, experts0 = -1, dense0 = -1;
    for (size_t i = 0; i < n; i++) {
        if (router_end < 0 && !strcmp(slices[i].name, "moe.router.fwd"))
            router_end = slices[i].t1;
        if (!strcmp(slices[i].name, "dp.params.experts") && (experts0 < 0 || slices[i].t0 < experts0))
            experts0 = slices[i].t0;
        if (!strcmp(slices[i].name, "dp.params") && (dense0 < 0 || slices[i].t0 < dense0))
            dense0 = slices[i].t0;
    }
    assert_true(router_end > 0 && experts0 >= router_end);
    assert_true(dense0 >= 0 && dense0 < router_end);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(experts_over_the_expert_data_parallel_group),
        cmocka_unit_test(experts_own_buckets),
        cmocka_unit_test(buckets_per_chunk_and_stage),
        cmocka_unit_test(two_groups_side_by_side),
        cmocka_unit_test(experts_gather_at_their_pre_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

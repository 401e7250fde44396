/* test_train_schedule.c - the pipeline schedules in the engine: naming the schedule Megatron-LM would pick
 * changes nothing, and ZB-H1 (Qi et al., arXiv 2401.10241, Sec. 3.1) runs the same kernels as 1F1B in an
 * iteration shorter by the paper's amount when forward, input-gradient and weight-gradient passes take
 * the same time on every stage; its B passes leave the weight GEMMs to W. */
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
#include <unistd.h>

#include "train/gpumem.h"
#include "train/opgraph.h"
#include "train/optimes.h"
#include "train/train.h"
#include "times_file.h"
#include "train_fixture.h"

/* A GPT of `layers` layers on pp GPUs of one node with m micro-batches; `sched` and `more` add training keys. */
static expcfg *pipe_m(uint32_t layers, uint32_t pp, uint32_t m, const char *sched, const char *more)
{
    char text[1024];
    snprintf(text, sizeof text,
             "name: s\n"
             "model: { name: s, layers: %u, hidden: 1024, heads: 8, vocab: 4096, seq_len: 512, bias: true,\n"
             "         dropout: false, tied_embeddings: false }\n"
             "gpu: a100-80gb\n"
             "cluster: { extends: dgx-a100, nodes: 1, gpus_per_node: %u, nics_per_node: %u }\n"
             "training: { global_batch: %u, pp: %u%s%s }\n",
             layers, pp, pp, m, pp, sched, more);
    return tfx_load_text("s.yaml", text);
}

/* A GPT of one layer per stage on 4 GPUs of one node, m = 8 micro-batches; `sched` the schedule line. */
static expcfg *pipeline(const char *sched, uint32_t layers, const char *more)
{
    return pipe_m(layers, 4, 8, sched, more);
}

static void same(const train_result *a, const train_result *b)
{
    assert_int_equal(a->iteration_ps, b->iteration_ps);
    assert_int_equal(a->nstages, b->nstages);
    for (uint32_t s = 0; s < a->nstages; s++)
        assert_memory_equal(a->stages[s].bk_ps, b->stages[s].bk_ps, sizeof a->stages[s].bk_ps);
}

static void naming_megatrons_choice_changes_nothing(void **state)
{
    (void)state;
    /* the default and the schedule it picks, named: 1F1B (4 layers), interleaved (8 layers, 2 chunks) */
    const char *pairs[2][2] = { { "", ", pipeline_schedule: 1f1b" },
                                { ", virtual_stages: 2", ", virtual_stages: 2, pipeline_schedule: interleaved" } };
    for (int k = 0; k < 2; k++) {
        expcfg *x = pipeline(pairs[k][0], 4 * (uint32_t)(k + 1), ""), *y = pipeline(pairs[k][1], 4 * (uint32_t)(k + 1), "");
        train_result a, b;
        tfx_run(x, NULL, &a);
        tfx_run(y, NULL, &b);
        same(&a, &b);
        train_result_free(&a);
        train_result_free(&b);
        free(x);
        free(y);
    }
}

static int64_t stage_sum(const train_result *r, int bk)
{
    int64_t s = 0;
    for (uint32_t i = 0; i < r->nstages; i++)
        s += r->stages[i].bk_ps[bk];
    return s;
}

/* A measured-times file: every kernel 1 ps but the three named, which take their own time (ps). */
static optimes *times_file(const opgraph *g, const char *const names[3], const int64_t ps[3], char *path)
{
    int64_t t[OPGRAPH_MAX_OPS];
    for (uint32_t i = 0; i < g->nops; i++) {
        t[i] = 1;
        for (int k = 0; k < 3; k++)
            if (!strcmp(g->ops[i].name, names[k]))
                t[i] = ps[k];
    }
    return times_file_of(g, t, path);
}

static void zb_h1_bubble_is_the_papers(void **state)
{
    (void)state;
    expcfg *x = pipeline(", pipeline_schedule: 1f1b", 4, ""), *y = pipeline(", pipeline_schedule: zb-h1", 4, "");
    opgraph g;
    cxl_err e;
    assert_int_equal(opgraph_build(&x->model, &x->train, &g, &e), 0);
    /* the optimizer kernels of the four stages (layer; + embedding on the first; + head on the last) at 1 ps */
    uint64_t lp = g.layer_params;
    assert_true(opgraph_optimizer_op(&g, &x->train, lp, &e) >= 0);
    assert_true(opgraph_optimizer_op(&g, &x->train, lp + g.embed_params, &e) >= 0);
    assert_true(opgraph_optimizer_op(&g, &x->train, lp + g.head_params, &e) >= 0);
    /* one layer's forward, input gradient and weight gradient each carried by one GEMM of 10, 10 and 5 ms:
     * T_F = T_B = 10 ms, T_W = 5 ms on every stage, everything else (the embedding, the head, the
     * optimizer) about nothing */
    const char *const names[3] = { "qkv.fwd", "qkv.bwd_data", "qkv.bwd_weight" };
    const int64_t tf = 10000000000, tb = 10000000000, tw = 5000000000;
    const int64_t ps[3] = { tf, tb, tw };
    char path[] = "/tmp/cxlsim-zb-XXXXXX";
    optimes *ot = times_file(&g, names, ps, path);
    train_opts o = { ot, NULL, NULL, NULL, 0, NULL, { 0 }, NULL };
    train_result a, b;
    tfx_run(x, &o, &a);
    tfx_run(y, &o, &b);
    assert_int_equal(b.kernels_measured, b.kernels);
    /* the same kernels on every stage, rearranged */
    for (uint32_t s = 0; s < 4; s++)
        assert_int_equal(a.stages[s].bk_ps[TRAIN_BK_COMPUTE], b.stages[s].bk_ps[TRAIN_BK_COMPUTE]);
    /* 1F1B: m (T_F + T_B + T_W) + (p - 1)(T_F + T_B + T_W) = 8 x 25 + 3 x 25 = 275 ms; ZB-H1: 8 x 25 +
     * 3 x (10 + 10 - 5) = 245 ms (Sec. 3.1). What is left is the pipeline sends (1 MiB over NVLink) and
     * the 1 ps kernels: under 0.5 ms here. */
    int64_t m = 8, p = 4;
    double want_a = (double)((m + p - 1) * (tf + tb + tw)), want_b = (double)(m * (tf + tb + tw) + (p - 1) * (tf + tb - tw));
    assert_true(fabs((double)a.iteration_ps - want_a) < 5e8);
    assert_true(fabs((double)b.iteration_ps - want_b) < 5e8);
    /* the difference is the paper's 2 (p - 1) T_W to the same precision */
    assert_true(fabs((double)(a.iteration_ps - b.iteration_ps) - (double)(2 * (p - 1) * tw)) < 5e8);
    assert_true(stage_sum(&b, TRAIN_BK_BUBBLE) < stage_sum(&a, TRAIN_BK_BUBBLE));
    train_result_free(&a);
    train_result_free(&b);
    optimes_free(ot);
    remove(path);
    free(x);
    free(y);
}

/* DualPipeV in the engine, one layer per chunk (8 layers, pp 4) and F, B, W of T each: the schedule's own
 * simulation (test_schedule_zb.c) gives 6 m T + (p - 1) T = 51 T for m = 8, against ZB-H1's
 * 6 m T + (p - 1) 2 T = 54 T and 1F1B's (m + p - 1) 6 T = 66 T on the same layers; the engine adds only
 * the pipeline sends (twice as many with the V). Tied embeddings need no exchange: rank 0 holds both. */
static void dualpipev_in_the_engine(void **state)
{
    (void)state;
    const char *sched[3] = { ", virtual_stages: 2, pipeline_schedule: dualpipev", ", pipeline_schedule: zb-h1",
                             ", pipeline_schedule: 1f1b" };
    const int64_t T = 10000000000, want[3] = { 51 * T, 54 * T, 66 * T };
    expcfg *x = pipeline(sched[0], 8, "");
    opgraph g;
    cxl_err e;
    assert_int_equal(opgraph_build(&x->model, &x->train, &g, &e), 0);
    /* each stage's optimizer kernel (two layers; the embedding on rank 0; the head on rank 0 or 3) */
    const uint64_t lp = 2 * g.layer_params, ep = g.embed_params, hp = g.head_params;
    const uint64_t held[4] = { lp, lp + ep, lp + hp, lp + ep + hp };
    for (int k = 0; k < 4; k++)
        assert_true(opgraph_optimizer_op(&g, &x->train, held[k], &e) >= 0);
    const char *const names[3] = { "qkv.fwd", "qkv.bwd_data", "qkv.bwd_weight" };
    const int64_t ps[3] = { T, T, T };
    char path[] = "/tmp/cxlsim-dpv-XXXXXX";
    optimes *ot = times_file(&g, names, ps, path);
    train_opts o = { ot, NULL, NULL, NULL, 0, NULL, { 0 }, NULL };
    for (int k = 0; k < 3; k++) {
        /* the other kernels take no time here: a host launching them would be behind (host timeline) */
        expcfg *y = pipeline(sched[k], 8, ", host_launch: 0ps");
        train_result r;
        tfx_run(y, &o, &r);
        int64_t d = r.iteration_ps - want[k];
        if (d < 0 || d > 1000000000)
            fail_msg("%s: %lld ps, want %lld + the sends", sched[k], (long long)r.iteration_ps, (long long)want[k]);
        for (uint32_t s = 0; s < r.nstages; s++) /* two layers' F, B and W per micro-batch on every rank */
            assert_true(llabs(r.stages[s].bk_ps[TRAIN_BK_COMPUTE] - 8 * 6 * T) < 1000000);
        train_result_free(&r);
        free(y);
    }
    optimes_free(ot);
    remove(path);
    free(x);
    /* tied embeddings and no measured times: it completes, and the parts add up on every stage */
    x = pipeline(sched[0], 8, ", tp: 1");
    x->model.tied_embeddings = 1;
    train_result r;
    tfx_run(x, NULL, &r);
    for (uint32_t s = 0; s < r.nstages; s++) {
        int64_t sum = 0;
        for (int k = 0; k < TRAIN_BK_N; k++)
            sum += r.stages[s].bk_ps[k];
        assert_int_equal(sum, r.iteration_ps);
    }
    /* memory: 2 pp + 1 = 9 chunks of one layer held on every rank, and the head on rank 0 */
    gpumem m0, m3;
    gpumem_stage(&x->model, &x->train, 0, &m0);
    gpumem_stage(&x->model, &x->train, 3, &m3);
    assert_true(fabs(gpumem_layers_in_flight(&x->model, &x->train, 3) - 9) < 1e-12);
    assert_true(m0.params > m3.params);
    train_result_free(&r);
    free(x);
}

/* B runs every backward entry but the weight GEMMs and their all-gathers; W only those. */
static void split_by_weight_gradient_entries(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text,
             "name: s\nmodel: llama2-7b\ngpu: a100-80gb\ncluster: { extends: dgx-a100, nodes: 1 }\n"
             "training: { global_batch: 8, tp: 2, sp: true, pp: 4, pipeline_schedule: zb-h1 }\n");
    expcfg *x = tfx_load_text("s.yaml", text);
    opgraph g;
    cxl_err e;
    assert_int_equal(opgraph_build(&x->model, &x->train, &g, &e), 0);
    int weights = 0, gathers = 0;
    for (int tpl = 0; tpl < OPGRAPH_NTPL; tpl++)
        for (uint32_t i = 0; i < g.tpl[tpl].n; i++) {
            const opgraph_entry *en = &g.tpl[tpl].e[i];
            const char *name = en->kind == OPGRAPH_KERNEL ? g.ops[en->op].name : en->name;
            int w = strstr(name, "bwd_weight") != NULL || strstr(name, ".wgrad") != NULL;
            assert_int_equal(en->wgrad, w);
            weights += w && en->kind == OPGRAPH_KERNEL;
            gathers += w && en->kind != OPGRAPH_KERNEL;
            /* only backward templates hold them */
            if (w)
                assert_true(tpl == OPGRAPH_LAYER_BWD || tpl == OPGRAPH_HEAD_BWD);
        }
    assert_int_equal(weights, 4 + 1); /* qkv, proj, fc1, fc2; logits */
    assert_int_equal(gathers, 2);     /* sp: the attention's and the MLP's input again for their weights */
    /* and the engine runs it: same compute as 1F1B, a shorter iteration */
    train_result a, b;
    tfx_run(x, NULL, &b);
    x->train.pipeline_schedule = TRAINCFG_SCHEDULE_1F1B;
    tfx_run(x, NULL, &a);
    assert_true(b.iteration_ps < a.iteration_ps);
    for (uint32_t s = 0; s < 4; s++)
        assert_int_equal(a.stages[s].bk_ps[TRAIN_BK_COMPUTE], b.stages[s].bk_ps[TRAIN_BK_COMPUTE]);
    /* memory: stage 0 holds what 1F1B's does, the last stage p micro-batches instead of 1 */
    gpumem m0, m3, z0, z3;
    x->train.pipeline_schedule = TRAINCFG_SCHEDULE_1F1B;
    gpumem_stage(&x->model, &x->train, 0, &m0);
    gpumem_stage(&x->model, &x->train, 3, &m3);
    x->train.pipeline_schedule = TRAINCFG_SCHEDULE_ZB_H1;
    gpumem_stage(&x->model, &x->train, 0, &z0);
    gpumem_stage(&x->model, &x->train, 3, &z3);
    assert_true(z0.activations_bytes == m0.activations_bytes);
    /* 3 more micro-batches of its 8 layers, and of what the output layer's deferred W reads (sp: h / tp) */
    double sb = 4096, layer = gpumem_layer_activation_bytes(&x->model, &x->train);
    double head = 2 * sb * 4096 / 2 + 2 * sb * (double)modelcfg_vocab(&x->model) / 2;
    assert_true(fabs(z3.activations_bytes - m3.activations_bytes - 3 * (8 * layer + head)) < 1e-9 * z3.activations_bytes);
    train_result_free(&a);
    train_result_free(&b);
    free(x);
}

/* training.p2p_exchange (train_pp.c). Megatron's interleaved schedule of pp 2, v 2, m 4, one layer per
 * chunk, F = T and B = 2 T and nothing else: worked by hand (docs/schedules.md), both placements give
 * 27 T. Batched, rank 0 runs F4 only once the gradient of B0 is in (the exchange after its last warm-up
 * forward receives it), and every steady forward's output leaves with the next backward's; the two
 * warm-up forwards Megatron adds per rank before the steady phase absorb the delay. Without host time
 * the 1F1B placements are the same; with it, batched puts each pass's host time after its receives. */
static void megatron_p2p_exchange(void **state)
{
    (void)state;
    const int64_t T = 10000000000;
    expcfg *x = pipe_m(4, 2, 4, ", host_launch: 0ps", ", virtual_stages: 2");
    opgraph g;
    cxl_err e;
    assert_int_equal(opgraph_build(&x->model, &x->train, &g, &e), 0);
    const uint64_t lp = 2 * g.layer_params;
    assert_true(opgraph_optimizer_op(&g, &x->train, lp + g.embed_params, &e) >= 0);
    assert_true(opgraph_optimizer_op(&g, &x->train, lp + g.head_params, &e) >= 0);
    const char *const names[3] = { "qkv.fwd", "qkv.bwd_data", "qkv.bwd_weight" };
    const int64_t ps[3] = { T, T, T };
    char path[] = "/tmp/cxlsim-p2p-XXXXXX";
    optimes *ot = times_file(&g, names, ps, path);
    train_opts o = { ot, NULL, NULL, NULL, 0, NULL, { 0 }, NULL };
    const char *ex[2] = { ", virtual_stages: 2, p2p_exchange: batched", ", virtual_stages: 2, p2p_exchange: per_pass" };
    for (int k = 0; k < 2; k++) {
        expcfg *y = pipe_m(4, 2, 4, ", host_launch: 0ps", ex[k]);
        train_result r;
        tfx_run(y, &o, &r);
        int64_t d = r.iteration_ps - 27 * T;
        if (d < 0 || d > 500000000) /* the sends: 0.5 MiB over NVLink, under 0.5 ms in all */
            fail_msg("%s: %lld ps, want 27 T = %lld + the sends", ex[k], (long long)r.iteration_ps,
                     (long long)(27 * T));
        train_result_free(&r);
        free(y);
    }
    optimes_free(ot);
    remove(path);
    free(x);
    /* 1F1B (pp 4, m 8) without host time: the same iteration; with 1 ms per pass batched is slower,
     * interleaved too; with overlap_p2p_comm the key changes nothing */
    const char *cases[4][2] = {
        { ", p2p_exchange: batched", ", p2p_exchange: per_pass" },
        { ", host_overhead_microbatch: 1ms, p2p_exchange: batched",
          ", host_overhead_microbatch: 1ms, p2p_exchange: per_pass" },
        { ", virtual_stages: 2, host_overhead_microbatch: 1ms, p2p_exchange: batched",
          ", virtual_stages: 2, host_overhead_microbatch: 1ms, p2p_exchange: per_pass" },
        { ", virtual_stages: 2, overlap_p2p_comm: true, p2p_exchange: batched",
          ", virtual_stages: 2, overlap_p2p_comm: true, p2p_exchange: per_pass" } };
    for (int k = 0; k < 4; k++) {
        expcfg *a = pipeline(", host_launch: 0ps", 8, cases[k][0]);
        expcfg *b = pipeline(", host_launch: 0ps", 8, cases[k][1]);
        train_result ra, rb;
        tfx_run(a, NULL, &ra);
        tfx_run(b, NULL, &rb);
        if (k == 3)
            same(&ra, &rb);
        else if (k == 0) /* waits move between "pp send" and "pp" where a send waits for its receive */
            assert_int_equal(ra.iteration_ps, rb.iteration_ps);
        else if (ra.iteration_ps <= rb.iteration_ps)
            fail_msg("%s: batched %lld ps, per pass %lld", cases[k][0], (long long)ra.iteration_ps,
                     (long long)rb.iteration_ps);
        train_result_free(&ra);
        train_result_free(&rb);
        free(a);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(naming_megatrons_choice_changes_nothing),
        cmocka_unit_test(zb_h1_bubble_is_the_papers),
        cmocka_unit_test(split_by_weight_gradient_entries),
        cmocka_unit_test(dualpipev_in_the_engine),
        cmocka_unit_test(megatron_p2p_exchange),
    };
    return cmocka_run_group_tests_name("train_schedule", tests, NULL, NULL);
}

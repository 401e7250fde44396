/* test_mla_layout.c - multi-head latent attention, multi-token prediction and Megatron-Core's pipeline layout:
 * MLA's parameters, FLOPs and activation bytes on a small model against a hand count (and DeepSeek-V3's
 * published 187.1M attention parameters per layer, 671B in all); the layout string's parse (repeats, groups,
 * each syntax error at its character); each layout rule and MLA key check as a file:line:column error; an
 * engine run with the layout and an MTP module; MLA with tensor parallelism: the up-projections' backward
 * collectives beside their GEMMs (tp_grad_comm_overlap) and, with sp, the iteration's all-reduce of the
 * gradients every tensor-parallel rank holds whole. */
#define _POSIX_C_SOURCE 200809L
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
#include "config/parallel.h"
#include "config/pplayout.h"
#include "train/collalgo.h"
#include "train/gpumem.h"
#include "train/opgraph.h"
#include "train/train.h"

#include "tmpdir_fixture.h"

/* h 64, 4 heads; MLA: q_lora 32, kv_lora 16, nope 8, rope 4, v 8; SwiGLU MLP of 128; RMSNorm; no dropout */
#define SMALL_MLA                                                                                                  \
    "name: mla-small\nlayers: 4\nhidden: 64\nheads: 4\nffn: 128\nactivation: swiglu\nvocab: 1000\nseq_len: 64\n"  \
    "bias: false\nnorm: rmsnorm\nposition: rope\ntied_embeddings: false\ndropout: false\nattention_type: mla\n"     \
    "q_lora_rank: 32\nkv_lora_rank: 16\nqk_nope_head_dim: 8\nqk_rope_head_dim: 4\nv_head_dim: 8\n"

static void ok_or_fail(int rc, const cxl_err *e, const char *what)
{
    if (rc)
        fail_msg("%s: %s:%d:%d: %s", what, e->file, e->line, e->col, e->msg);
}

static void small_model(modelcfg *m)
{
    cxl_err e;
    const char *p = tmpdir_write("mla-small.yaml", SMALL_MLA);
    ok_or_fail(modelcfg_load(p, m, &e), &e, p);
}

/* Parameters: the small model by hand, and DeepSeek-V3's figures (Sec. 2.1.1 and Table 1 of the report). */
static void mla_params(void **state)
{
    (void)state;
    modelcfg m;
    small_model(&m);
    assert_int_equal(m.kv_heads, 4);
    assert_int_equal(m.head_dim, 8);
    assert_int_equal(modelcfg_qk_head_dim(&m), 12);
    /* split by tp: q_up 32 x 4 x 12 = 1536, kv_up 16 x 4 x 16 = 1024, proj 32 x 64 = 2048, MLP 3 x 64 x 128 =
     * 24576; whole: q_down 64 x 32 = 2048, kv_down 64 x 20 = 1280, latent norms 32 + 16, two norms 128 */
    assert_int_equal(modelcfg_layer_params_tp(&m, 1), 1536 + 1024 + 2048 + 24576 + 2048 + 1280 + 48 + 128);
    assert_int_equal(modelcfg_layer_params_tp(&m, 2), (1536 + 1024 + 2048 + 24576) / 2 + 2048 + 1280 + 48 + 128);
    cxl_err e;
    ok_or_fail(modelcfg_load("deepseek-v3", &m, &e), &e, "deepseek-v3");
    uint64_t attn = 187107328, mlp = 3ull * 7168 * 18432, norms = 2 * 7168;
    assert_int_equal(modelcfg_layer_params(&m), attn + mlp + norms);
    double total = (double)modelcfg_total_params(&m);
    printf("MLA DeepSeek-V3: %.2f B parameters (the report: 671 B), MTP module %llu + its layer\n", total / 1e9,
           (unsigned long long)modelcfg_mtp_params_tp(&m, 1, 16));
    assert_true(total > 670e9 && total < 672e9);
    /* the MTP module besides its layer: eh_proj 2h x h, three norms, with pp > 1 the embedding's copy */
    assert_int_equal(modelcfg_mtp_params_tp(&m, 1, 1), 2ull * 7168 * 7168 + 3 * 7168);
    assert_int_equal(modelcfg_mtp_params_tp(&m, 1, 16), 2ull * 7168 * 7168 + 3 * 7168 + 129280ull * 7168);
}

/* One GPU, one sequence, bf16, flash attention, no recomputation */
static void one_gpu(traincfg *t)
{
    memset(t, 0, sizeof *t);
    t->global_batch = 1, t->micro_batch = 1, t->tp = t->pp = t->dp = t->ep = t->cp = t->virtual_stages = 1;
    t->precision = GPUCFG_BF16, t->main_grads = GPUCFG_BF16, t->attention = TRAINCFG_ATTENTION_FLASH;
}

static const op_desc *find(const opgraph *g, int tpl, const char *name)
{
    for (uint32_t i = 0; i < g->tpl[tpl].n; i++) {
        const opgraph_entry *en = &g->tpl[tpl].e[i];
        if (en->kind == OPGRAPH_KERNEL && !strcmp(g->ops[en->op].name, name))
            return &g->ops[en->op];
    }
    return NULL;
}

/* The index of the first entry of a template with that name (a kernel's op name or a collective's), or -1 */
static int entry_at(const opgraph *g, int tpl, const char *name)
{
    for (uint32_t i = 0; i < g->tpl[tpl].n; i++) {
        const opgraph_entry *en = &g->tpl[tpl].e[i];
        const char *nm = en->kind == OPGRAPH_KERNEL ? g->ops[en->op].name : en->name;
        if (nm && !strcmp(nm, name))
            return (int)i;
    }
    return -1;
}

static int has_entry(const opgraph *g, int tpl, const char *name)
{
    for (uint32_t i = 0; i < g->tpl[tpl].n; i++) {
        const opgraph_entry *en = &g->tpl[tpl].e[i];
        const char *nm = en->kind == OPGRAPH_KERNEL ? g->ops[en->op].name : en->name;
        if (nm && !strcmp(nm, name))
            return 1;
    }
    return 0;
}

/* FLOPs and kernel shapes of one layer's forward, by hand: T = 64 tokens */
static void mla_flops(void **state)
{
    (void)state;
    modelcfg m;
    small_model(&m);
    traincfg t;
    one_gpu(&t);
    opgraph *g = malloc(sizeof *g);
    assert_non_null(g);
    cxl_err e;
    ok_or_fail(opgraph_build(&m, &t, g, &e), &e, "opgraph");
    double T = 64;
    double gemms = 2 * T * (64 * 32 + 32 * 48 + 64 * 20 + 16 * 64 + 32 * 64 + 3 * 64 * 128);
    double core = 2 * 4 * T * T * (12 + 8); /* Q.K^T at 12, P.V at 8, the full s x s (the model's count) */
    assert_true(g->layer_fwd_flops == gemms + core);
    const op_desc *f = find(g, OPGRAPH_LAYER_FWD, "attn.flash.fwd");
    assert_non_null(f);
    assert_true(f->flops == core / 2); /* causal */
    /* the kernel's bytes: Q, K at 12 and V, O at 8 per head and token, 2 B, and the fp32 logsumexp */
    assert_true(f->bytes == 2.0 * (T * 4 * 20 + T * 4 * 20) + 4.0 * T * 4);
    assert_non_null(find(g, OPGRAPH_LAYER_FWD, "mla.q_down.fwd"));
    assert_int_equal(find(g, OPGRAPH_LAYER_FWD, "mla.kv_up.fwd")->n, 4 * (8 + 8));
    assert_int_equal(find(g, OPGRAPH_LAYER_RECOMPUTE, "mla.q_up.fwd") == NULL, 1);
    /* tp 2 with sp: the down-projections on the rank's 32 tokens, the latents all-gathered, heads halved */
    t.tp = 2, t.sp = 1;
    ok_or_fail(opgraph_build(&m, &t, g, &e), &e, "opgraph tp 2");
    assert_int_equal(find(g, OPGRAPH_LAYER_FWD, "mla.q_down.fwd")->m, 32);
    assert_int_equal(find(g, OPGRAPH_LAYER_FWD, "mla.q_up.fwd")->n, 2 * 12);
    assert_true(has_entry(g, OPGRAPH_LAYER_FWD, "tp.allgather.mla"));
    assert_true(has_entry(g, OPGRAPH_LAYER_BWD, "tp.reducescatter.mla.grad"));
    assert_false(has_entry(g, OPGRAPH_LAYER_FWD, "tp.allgather.attn"));
    /* with tp_grad_comm_overlap each up-projection's backward is a column-parallel layer's, as Transformer
     * Engine's LayerNormLinear runs it: the input's all-gather beside the input-gradient GEMM, the input
     * gradient's reduce-scatter beside the weight-gradient GEMM; the rope key's gradient reduced on the
     * stream. Bytes: T = 64 tokens x 2 B x kv_lora 16, q_lora 32, rope 4 */
    t.tp_grad_overlap = 1;
    ok_or_fail(opgraph_build(&m, &t, g, &e), &e, "opgraph tp 2 overlap");
    assert_false(has_entry(g, OPGRAPH_LAYER_BWD, "tp.reducescatter.mla.grad"));
    static const struct { const char *ag, *bd, *red, *bw; uint64_t bytes; } col[2] = {
        { "tp.allgather.mla.kv.wgrad", "mla.kv_up.bwd_data", "tp.reducescatter.mla.kv.grad", "mla.kv_up.bwd_weight",
          64 * 2 * 16 },
        { "tp.allgather.mla.q.wgrad", "mla.q_up.bwd_data", "tp.reducescatter.mla.q.grad", "mla.q_up.bwd_weight",
          64 * 2 * 32 },
    };
    const opgraph_tpl *bw = &g->tpl[OPGRAPH_LAYER_BWD];
    for (int c = 0; c < 2; c++) {
        int i = entry_at(g, OPGRAPH_LAYER_BWD, col[c].ag);
        assert_true(i >= 0 && i + 5 < (int)bw->n);
        assert_int_equal(bw->e[i].kind, OPGRAPH_TP_ASYNC);
        assert_int_equal(bw->e[i].bytes, col[c].bytes);
        assert_string_equal(g->ops[bw->e[i + 1].op].name, col[c].bd);
        assert_int_equal(bw->e[i + 2].kind, OPGRAPH_TP_WAIT);
        assert_int_equal(bw->e[i + 3].kind, OPGRAPH_TP_ASYNC);
        assert_string_equal(bw->e[i + 3].name, col[c].red);
        assert_int_equal(bw->e[i + 3].bytes, col[c].bytes);
        assert_string_equal(g->ops[bw->e[i + 4].op].name, col[c].bw);
        assert_int_equal(bw->e[i + 5].kind, OPGRAPH_TP_WAIT);
    }
    int kr = entry_at(g, OPGRAPH_LAYER_BWD, "tp.reducescatter.mla.k_rope.grad");
    assert_true(kr >= 0);
    assert_int_equal(bw->e[kr].kind, OPGRAPH_TP_COLL);
    assert_int_equal(bw->e[kr].bytes, 64 * 2 * 4);
    t.tp_grad_overlap = 0;
    /* recompute_mla_up_proj: the up-projections run again before the backward */
    t.recompute_mla_up_proj = 1;
    ok_or_fail(opgraph_build(&m, &t, g, &e), &e, "opgraph recompute");
    assert_non_null(find(g, OPGRAPH_LAYER_RECOMPUTE, "mla.kv_up.fwd"));
    free(g);
}

/* Activation bytes of one layer, by hand (gpumem.c's notation; bf16, flash, no dropout, tp 1) */
static void mla_memory(void **state)
{
    (void)state;
    modelcfg m;
    small_model(&m);
    traincfg t;
    one_gpu(&t);
    /* R: norm inputs 4h, the down-projections' and MLP's inputs 2h + 2h, latents (2 + 2)(32 + 16) = 704;
     * S: Q and K 4 x 4 x 12, V 2 x 32, the core's output 2 x 32, SwiGLU (4 + 2) x 128 = 1088; A: 4 x 4 = 16 */
    double per_token = 704 + 1088 + 16;
    assert_true(gpumem_layer_activation_bytes(&m, &t) == per_token * 64);
    t.recompute_mla_up_proj = 1; /* Q, K, V not kept */
    assert_true(gpumem_layer_activation_bytes(&m, &t) == (per_token - 4 * 48 - 2 * 32) * 64);
}

/* The layout string: repeats, groups (nested), what each stage holds; syntax errors at their character. */
static void layout_parse(void **state)
{
    (void)state;
    pplayout *L = malloc(sizeof *L);
    assert_non_null(L);
    size_t at;
    char why[192];
    assert_int_equal(pplayout_parse("Et*4|(t*4|)*14tmL", L, &at, why, sizeof why), 0);
    assert_int_equal(L->stages, 16);
    assert_int_equal(L->layers[0], 4);
    assert_int_equal(L->layers[14], 4);
    assert_int_equal(L->layers[15], 1);
    assert_int_equal(L->mtp[15], 1);
    assert_int_equal(L->decoders, 61);
    assert_true(L->embed_first && L->loss_last && L->mtp_after_layers);
    assert_int_equal(L->loss_vs, 15);
    assert_int_equal(pplayout_parse("Et|(tt|)*30mL", L, &at, why, sizeof why), 0);
    assert_int_equal(L->stages, 32);
    assert_int_equal(L->layers[31], 0);
    assert_int_equal(L->mtp[31], 1);
    assert_int_equal(pplayout_parse("E,(t(t|)*2)*2,L", L, &at, why, sizeof why), 0); /* Megatron's commas */
    assert_int_equal(L->stages, 5);
    assert_int_equal(L->decoders, 6);
    static const struct { const char *s; size_t at; const char *why; } bad[] = {
        { "Etx|L", 2, "unknown symbol 'x'" },
        { "Et*|L", 2, "must be followed by a repeat count" },
        { "Et*0|L", 2, "repeat count 0" },
        { "E(tt|L", 1, "'(' without its ')'" },
        { "E(tt|)L", 5, "a group must be repeated" },
        { "Et)|L", 2, "')' without its '('" },
        { "", 0, "empty" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(pplayout_parse(bad[i].s, L, &at, why, sizeof why), -1);
        if (at != bad[i].at || !strstr(why, bad[i].why))
            fail_msg("'%s': at %zu (expected %zu): %s", bad[i].s, at, bad[i].at, why);
    }
    /* the layers of each model chunk through parallel_chunk_layers: DeepSeek-V3 on pp 4 x v 4 */
    modelcfg m;
    cxl_err e;
    ok_or_fail(modelcfg_load("deepseek-v3", &m, &e), &e, "deepseek-v3");
    traincfg t;
    memset(&t, 0, sizeof t);
    t.pp = 4, t.virtual_stages = 4;
    snprintf(t.pp_layout, sizeof t.pp_layout, "Et*4|(t*4|)*14tmL");
    uint64_t first, total = 0;
    assert_int_equal(parallel_chunk_layers(&m, &t, 1, 0, &first), 4);
    assert_int_equal(first, 4);
    assert_int_equal(parallel_chunk_layers(&m, &t, 0, 1, &first), 4); /* virtual stage 4 */
    assert_int_equal(first, 16);
    assert_int_equal(parallel_chunk_layers(&m, &t, 3, 3, &first), 2); /* the last layer and the MTP module */
    assert_int_equal(first, 60);
    for (uint64_t c = 0; c < 4; c++)
        for (uint64_t r = 0; r < 4; r++)
            total += parallel_chunk_layers(&m, &t, r, c, NULL);
    assert_int_equal(total, 62);
    free(L);
}

/* DeepSeek-V3 on 32 DGX H100 nodes, pp 4 x v 4, with `layout` (unquoted, the training section's first key) */
static const char *ds_file(const char *name, const char *layout)
{
    char text[1024];
    snprintf(text, sizeof text,
             "name: t\nmodel: deepseek-v3\ngpu: h100-sxm\ncluster: { extends: dgx-h100, nodes: 32 }\ntraining:\n"
             "  pipeline_model_parallel_layout: %s\n  global_batch: 256\n  pp: 4\n  virtual_stages: 4\n  ep: 64\n"
             "  etp: 1\n  recompute: full\n", layout);
    return tmpdir_write(name, text);
}

static void expect_err(const char *path, int line, int col, const char *needle)
{
    cxl_err e;
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    int rc = expcfg_load(path, x, &e);
    free(x);
    assert_int_equal(rc, CXL_ECONFIG);
    if (!strstr(e.msg, needle))
        fail_msg("message lacks '%s': %s", needle, e.msg);
    assert_string_equal(e.file, path);
    if (e.line != line || e.col != col)
        fail_msg("at %d:%d, expected %d:%d: %s", e.line, e.col, line, col, e.msg);
}

/* Each rule of the layout, at the key's value (line 6, column 35), an unknown symbol at its own character. */
static void layout_errors(void **state)
{
    (void)state;
    cxl_err e;
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    const char *p = ds_file("ok.yaml", "Et*4|(t*4|)*14tmL");
    ok_or_fail(expcfg_load(p, x, &e), &e, p);
    free(x);
    expect_err(ds_file("e1.yaml", "Et*4|(t*4|)*13tmL"), 6, 35, "rule 'one entry per virtual stage': 15 stages");
    expect_err(ds_file("e2.yaml", "Et*4|(t*4|)*14txL"), 6, 35 + 15, "unknown symbol 'x'");
    expect_err(ds_file("e3.yaml", "Et*4|(t*4|)*14mL"), 6, 35, "rule 'one t per layer': 60 transformer layers");
    expect_err(ds_file("e4.yaml", "Et*4|(t*4|)*14tL"), 6, 35, "rule 'one m per MTP module'");
    expect_err(ds_file("e5.yaml", "t*4|E(t*4|)*14tmL"), 6, 35, "rule 'E first, once'");
    expect_err(ds_file("e6.yaml", "Et*4|(t*4|)*14tLm"), 6, 35, "rule 'L last, once'");
    expect_err(ds_file("e7.yaml", "Et*4|(t*4|)*13t*4m|tL"), 6, 35, "rule 'm after the layers, with L'");
}

/* The model's MLA keys: each inconsistency at its key. */
static void mla_key_errors(void **state)
{
    (void)state;
    cxl_err e;
    modelcfg m;
    const char *p = tmpdir_write("k1.yaml", "name: k\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\nseq_len: 64\n"
                                            "q_lora_rank: 32\n");
    assert_int_equal(modelcfg_load(p, &m, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "model.q_lora_rank: a multi-head latent attention key, but attention_type is gqa"));
    assert_int_equal(e.line, 7);
    p = tmpdir_write("k2.yaml", "name: k\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\nseq_len: 64\n"
                                "attention_type: mla\nkv_lora_rank: 16\nqk_nope_head_dim: 8\nv_head_dim: 8\n");
    assert_int_equal(modelcfg_load(p, &m, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "model.qk_rope_head_dim: missing"));
    assert_int_equal(e.line, 7);
    p = tmpdir_write("k3.yaml", SMALL_MLA "kv_heads: 2\n");
    assert_int_equal(modelcfg_load(p, &m, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "model.kv_heads: 2, but multi-head latent attention"));
}

/* Run the small model (model_yaml) on one DGX H100 with `training`: the iteration time in picoseconds and,
 * when n is not NULL, how many tensor-parallel all-reduces of `bytes` per rank it issued (train_result.colls). */
static int64_t run_small(const char *name, const char *model_yaml, const char *training, uint64_t bytes, uint64_t *n)
{
    char text[1024];
    tmpdir_write("m.yaml", model_yaml);
    snprintf(text, sizeof text, "name: t\nmodel: %s/m.yaml\ngpu: h100-sxm\ncluster: { extends: dgx-h100, nodes: 1 }\n"
             "training:\n%s", g_tmpdir, training);
    const char *p = tmpdir_write(name, text);
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    cxl_err e;
    ok_or_fail(expcfg_load(p, x, &e), &e, p);
    train_result res;
    ok_or_fail(train_run(x, NULL, &res, &e), &e, p);
    for (uint32_t i = 0; n && i < res.ncolls; i++)
        if (res.colls[i].group == TRAIN_GROUP_TP && res.colls[i].op == COLLALGO_ALLREDUCE && res.colls[i].bytes == bytes)
            *n += res.colls[i].count;
    int64_t ps = res.iteration_ps;
    train_result_free(&res);
    free(x);
    return ps;
}

/* The engine with the layout: an MTP module costs time on the last stage; MLA runs with tp 2 and sp. */
static int64_t iteration(const char *name, const char *model_yaml, const char *training)
{
    return run_small(name, model_yaml, training, 0, NULL);
}

static void layout_engine(void **state)
{
    (void)state;
    const char *tr = "  global_batch: 16\n  tp: 2\n  sp: true\n  pp: 2\n  dp: 2\n  virtual_stages: 2\n"
                     "  pipeline_model_parallel_layout: \"E|t*2|t|tL\"\n";
    int64_t plain = iteration("r1.yaml", SMALL_MLA, tr);
    const char *trm = "  global_batch: 16\n  tp: 2\n  sp: true\n  pp: 2\n  dp: 2\n  virtual_stages: 2\n"
                      "  pipeline_model_parallel_layout: \"E|t*2|t|tmL\"\n";
    int64_t mtp = iteration("r2.yaml", SMALL_MLA "mtp_layers: 1\n", trm);
    printf("LAYOUT E|t*2|t|tL %.6f s, with an MTP module %.6f s\n", (double)plain / 1e12, (double)mtp / 1e12);
    assert_true(plain > 0);
    assert_true(mtp > plain);
}

/* A run's tensor-parallel all-reduces of `bytes` per rank (the small MLA model), its time in *ps */
static uint64_t tp_allreduces(const char *name, const char *training, uint64_t bytes, int64_t *ps)
{
    uint64_t n = 0;
    *ps = run_small(name, SMALL_MLA, training, bytes, &n);
    return n;
}

/* MLA with tp 2: with sp, the duplicated down-projections' (and the norms') gradients are summed over the
 * tensor-parallel group once per iteration (Megatron-Core finalize_model_grads,
 * _allreduce_non_tensor_model_parallel_grads): per layer 2,048 + 1,280 (down-projections) + 48 (latent
 * norms) + 128 (the two norms) = 3,504 parameters, 4 layers, bf16 gradients. Without sp every rank
 * computes them on all tokens: nothing to sum. The column-parallel overlap makes the run no slower. */
static void mla_tp_engine(void **state)
{
    (void)state;
    const char *sp = "  global_batch: 4\n  tp: 2\n  sp: true\n  dp: 4\n  main_grads: bf16\n";
    int64_t with_sp, no_sp, no_ovl;
    assert_int_equal(tp_allreduces("s1.yaml", sp, 4 * 3504 * 2, &with_sp), 1);
    assert_int_equal(tp_allreduces("s2.yaml", "  global_batch: 4\n  tp: 2\n  sp: false\n  dp: 4\n  main_grads: bf16\n",
                                   4 * 3504 * 2, &no_sp), 0);
    char t3[256];
    snprintf(t3, sizeof t3, "%s  tp_grad_comm_overlap: false\n", sp);
    assert_int_equal(tp_allreduces("s3.yaml", t3, 4 * 3504 * 2, &no_ovl), 1);
    printf("MLA tp 2: sp %.6f s, sp without the column-parallel overlap %.6f s, no sp %.6f s\n", (double)with_sp / 1e12,
           (double)no_ovl / 1e12, (double)no_sp / 1e12);
    assert_true(with_sp < no_ovl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mla_params),  cmocka_unit_test(mla_flops),     cmocka_unit_test(mla_memory),
        cmocka_unit_test(layout_parse), cmocka_unit_test(layout_errors), cmocka_unit_test(mla_key_errors),
        cmocka_unit_test(layout_engine), cmocka_unit_test(mla_tp_engine),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}

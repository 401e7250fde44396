/* opgraph_attn.c - the attention core of a layer template (opgraph_int.h, opg_attn_core): one fused (flash)
 * kernel, inside its context-parallel ring exchange, over the causal mask or a sliding window; or the
 * unfused kernels (scores, softmax, dropout, context) of the 2021-2022 validation rows. */
#include "train/opgraph_int.h"

#include "config/gpucfg.h"

/* Query-key pairs of a causal sliding window over n tokens: query i attends keys i - w .. i (Megatron-Core's
 * window_size (w, 0), as Transformer Engine's fused attention masks it: get_sliding_window_causal_mask), so
 * min(i + 1, w + 1) each; n (n + 1) / 2 when w + 1 >= n. */
static double window_pairs(uint64_t n, uint64_t w)
{
    double N = (double)n, W = (double)w;
    if (w + 1 >= n)
        return N * (N + 1) / 2;
    return (W + 1) * (W + 2) / 2 + (N - W - 1) * (W + 1);
}

/* A fused (flash) attention kernel over bah = b x a/t heads of s queries and skv keys (causal; with
 * context parallelism s = skv / cp, load-balanced so that each rank does 1/cp of the causal work; in a
 * windowed layer (x->window) over the window's query-key pairs only, window_pairs: the flash kernels skip
 * the tiles the mask leaves empty, Dao arXiv 2307.08691 Sec. 3.1.1 for the causal mask; the window's
 * partly masked tiles are counted at their unmasked pairs), head
 * dimension dh, kv/t key-value heads. Operands 16-bit: Transformer Engine keeps the attention core in
 * bf16 under FP8 training unless --fp8-dot-product-attention is set (Megatron-LM's default: off).
 * FLOPs (Dao, arXiv 2307.08691, Sec. 4.1; flash_attn/benchmarks: flops = 4 b s^2 a d, / 2 when causal,
 * x 2.5 for the backward). HBM bytes: forward reads Q, K, V and writes O (2 B each) and the fp32
 * logsumexp per query row; backward reads Q, K, V, O, dO, the logsumexp and D = rowsum(dO o O) (fp32),
 * writes dQ, dK, dV (and D). */
static void flash(bld *B, int tpl, const lshape *x, int bwd)
{
    int dt = B->dtype == GPUCFG_FP8 ? GPUCFG_BF16 : B->dtype;
    /* per query row / key row the widths of Q and O (dqk + dh), of K and V (dqk + dh) */
    double rows = (double)x->bah * (double)x->s, w = (double)(x->dqk + x->dh);
    double q = rows * w, kv = (double)(x->bah / x->at) * (double)(x->kv / x->tp) * (double)x->skv * w;
    /* k: the mean of the Q.K^T and P.V head dimensions, so that 4 batch m n k stays the model's FLOPs */
    const char *name = x->window ? (bwd ? "attn.flash.swa.bwd" : "attn.flash.swa.fwd")
                                 : (bwd ? "attn.flash.bwd" : "attn.flash.fwd");
    op_desc d = { name, bwd ? OP_ATTN_BWD : OP_ATTN_FWD, dt,
                  x->bah, x->s, x->skv, (x->dqk + x->dh) / 2, 0, 0, 0, 0, 0, 0 };
    double fwd_flops = 2.0 * rows * (double)x->skv * w / 2; /* causal: the blocks above the diagonal are skipped */
    if (x->window)
        fwd_flops = 2.0 * (double)x->bah * window_pairs(x->skv, x->window) / (double)x->cp * w;
    d.flops = bwd ? 2.5 * fwd_flops : fwd_flops;
    d.bytes = bwd ? 2.0 * (2 * q + 2 * kv) + 4.0 * 3 * rows : 2.0 * (q + kv) + 4.0 * rows;
    opgraph_entry e = { OPGRAPH_KERNEL, 0, (uint16_t)opg_add_op(B, &d), 0, NULL, 0, 0, 0, 0 };
    opg_push(B, tpl, e);
}

/* Context parallelism's exchange around the flash kernel (Megatron-Core's default cp_comm_type p2p, ring
 * attention in Transformer Engine): in cp - 1 steps each rank passes the K and V block it holds to the next
 * rank of the CP ring while it computes with the previous one, so the sends overlap the kernel; the
 * backward passes K and V around again together with the gradients of K and V (twice the bytes). Block:
 * K and V of the rank's s / cp tokens, kv / t heads of dqk + dh, 2 B. */
static void cp_ring(bld *B, int tpl, const lshape *x, int bwd, int wait)
{
    if (x->cp <= 1)
        return;
    uint64_t block = (x->bah / x->at) * (x->kv / x->tp) * x->s * (x->dqk + x->dh) * 2;
    opgraph_entry e = { (uint8_t)(wait ? OPGRAPH_CP_WAIT : OPGRAPH_CP_P2P), 0, 0, (x->cp - 1) * block * (bwd ? 2 : 1),
                        bwd ? "cp.ring.kv.grad" : "cp.ring.kv", 0, 0, 0, 0 };
    opg_push(B, tpl, e);
}

/* One pass of the flash kernel inside its context-parallel ring exchange (none with cp 1). */
static void flash_pass(bld *B, int tpl, const lshape *x, int bwd)
{
    cp_ring(B, tpl, x, bwd, 0);
    flash(B, tpl, x, bwd);
    cp_ring(B, tpl, x, bwd, 1);
}

/* The unfused attention core forward: scores, softmax, dropout, context. */
static void unfused_fwd(bld *B, int tpl, const lshape *x)
{
    uint64_t bah = x->bah, s = x->s, d = x->dh;
    opg_gemm(B, tpl, "attn.score.fwd", bah, s, s, x->dqk);
    opg_mem(B, tpl, "attn.softmax.fwd", bah * s * s, 4);
    if (x->drop)
        opg_mem(B, tpl, "attn.dropout.fwd", bah * s * s, 5);
    opg_gemm(B, tpl, "attn.ctx.fwd", bah, s, d, s);
}

/* The unfused attention core backward, in reverse order. */
static void unfused_bwd(bld *B, int L, const lshape *x)
{
    uint64_t s = x->s, dh = x->dh, bah = x->bah;
    opg_gemm(B, L, "attn.ctx.bwd_data", bah, s, s, dh);
    opg_gemm(B, L, "attn.ctx.bwd_v", bah, s, dh, s);
    if (x->drop)
        opg_mem(B, L, "attn.dropout.bwd", bah * s * s, 5);
    opg_mem(B, L, "attn.softmax.bwd", bah * s * s, 6);
    opg_gemm(B, L, "attn.score.bwd_q", bah, s, x->dqk, s);
    opg_gemm(B, L, "attn.score.bwd_k", bah, s, x->dqk, s);
}

/* The attention core, forward or backward: one flash kernel (with cp > 1 inside its ring exchange; its
 * backward recomputes the scores), or the unfused kernels. */
void opg_attn_core(bld *B, int tpl, const lshape *x, int bwd)
{
    if (x->flash)
        flash_pass(B, tpl, x, bwd);
    else if (bwd)
        unfused_bwd(B, tpl, x);
    else
        unfused_fwd(B, tpl, x);
}

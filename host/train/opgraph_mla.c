/* opgraph_mla.c - the templates' parts for multi-head latent attention and multi-token prediction
 * (opgraph_int.h; notation and kernel byte counts as in opgraph.c). */
#include "train/opgraph_int.h"

#include "config/gpucfg.h"

/* Multi-head latent attention (DeepSeek-V3 Sec. 2.1.1, arXiv 2412.19437; Megatron-Core MLASelfAttention,
 * megatron/core/transformer/multi_latent_attention.py, with the Transformer Engine layer spec of
 * gpt_layer_specs.py): the down-projections linear_q_down_proj (h -> q_lora_rank) and linear_kv_down_proj
 * (h -> kv_lora_rank + rope) are TELinear in parallel_mode "duplicated": every tensor-parallel rank runs them
 * whole, on its T / tp tokens with sequence parallelism (no all-gather of the hidden state), else on all T.
 * The latents are RMS-normed (q_layernorm, kv_layernorm), all-gathered with sequence parallelism (the
 * column-parallel up-projections' input, and the rope part of the key: gather_from_sequence_parallel_region),
 * and up-projected, column-parallel: linear_q_up_proj to heads x (nope + rope), linear_kv_up_proj to heads x
 * (nope + v). RoPE rotates the rope parts of the queries (per head) and of the key (one per token, shared);
 * the query and key are then assembled by torch.cat (the shared rope key expanded over the heads) and the
 * value made contiguous: a copy of Q, K (dqk wide) and V (dh wide), 2 + 2 B per element, each way. The core
 * runs with query/key dimension nope + rope and value dimension v (flash: one kernel; Transformer Engine's
 * fused attention takes the two head dimensions); linear_proj is row-parallel from heads x v as usual. The
 * backward mirrors it: the up-projections' input gradients (the latents' and the rope key's) are reduced
 * over the tensor-parallel group (reduce-scatter with sequence parallelism, else all-reduce), not the hidden
 * state's, because the duplicated down-projections' input gradient is whole on every rank; with
 * tp_grad_comm_overlap each up-projection overlaps them as a column-parallel layer (opg_col_bwd). The
 * down-projections' weight gradients, partial with sequence parallelism, are summed once per iteration
 * (train_step.c end_tp_grads). */
void opg_mla_up(bld *B, int L, const lshape *x, const char *sfx_ag)
{
    uint64_t qin = x->qr ? x->qr : x->h, T = x->T;
    if (x->sp)
        opg_tpc(B, L, OPGRAPH_ALLGATHER, (uint64_t)B->act * T * (x->qr + x->kvr + x->dr), sfx_ag, x->tp);
    opg_fp8_quant(B, L, "mxfp8.quant.mla.up.fwd", T * (x->qr + x->kvr));
    opg_gemm(B, L, "mla.q_up.fwd", 1, T, x->at * x->dqk, qin);
    opg_gemm(B, L, "mla.kv_up.fwd", 1, T, x->at * (x->dn + x->dh), x->kvr);
    if (x->rope)
        opg_mem(B, L, "rope.fwd", T * (x->at + 1) * x->dr, 4);
    opg_mem(B, L, "mla.qkv_concat.fwd", T * x->at * (2 * x->dqk + x->dh), 4);
}

void opg_mla_fwd(bld *B, int L, const lshape *x)
{
    opg_mem(B, L, "ln1.fwd", x->Eh, 4);
    if (x->qr) {
        opg_fp8_quant(B, L, "mxfp8.quant.mla.q_down.fwd", x->Ts * x->h);
        opg_gemm(B, L, "mla.q_down.fwd", 1, x->Ts, x->qr, x->h);
    }
    opg_fp8_quant(B, L, "mxfp8.quant.mla.kv_down.fwd", x->Ts * x->h);
    opg_gemm(B, L, "mla.kv_down.fwd", 1, x->Ts, x->kvr + x->dr, x->h);
    opg_mem(B, L, "mla.latent_norm.fwd", x->Ts * (x->qr + x->kvr), 4);
    opg_mla_up(B, L, x, "tp.allgather.mla");
    opg_attn_core(B, L, x, 0);
    opg_fp8_quant(B, L, "mxfp8.quant.proj.fwd", x->T * x->at * x->dh);
    opg_gemm(B, L, "proj.fwd", 1, x->T, x->h, x->at * x->dh);
    opg_tpc(B, L, x->ar, x->act_bytes, x->sp ? "tp.reducescatter.attn" : "tp.allreduce.attn", x->tp);
    opg_mem(B, L, "resid1.fwd", x->Eh, x->drop ? 7 : 6);
}

void opg_mla_bwd(bld *B, int L, const lshape *x)
{
    uint64_t qin = x->qr ? x->qr : x->h, T = x->T, Ts = x->Ts, dh = x->dh;
    uint64_t qn = x->at * x->dqk, kvn = x->at * (x->dn + dh), lat = (uint64_t)B->act * T * (x->qr + x->kvr + x->dr);
    opg_mem(B, L, "resid1.bwd", x->Eh, x->drop ? 5 : 4);
    if (x->sp)
        opg_tpc(B, L, OPGRAPH_ALLGATHER, x->act_bytes, "tp.allgather.attn.grad", x->tp);
    opg_fp8_quant(B, L, "mxfp8.quant.proj.bwd", T * x->h);
    opg_gemm(B, L, "proj.bwd_data", 1, T, x->at * dh, x->h);
    opg_gemm(B, L, "proj.bwd_weight", 1, x->at * dh, x->h, T);
    opg_attn_core(B, L, x, 1);
    opg_mem(B, L, "mla.qkv_concat.bwd", T * x->at * (2 * x->dqk + dh), 4);
    if (x->rope)
        opg_mem(B, L, "rope.bwd", T * (x->at + 1) * x->dr, 4);
    opg_fp8_quant(B, L, "mxfp8.quant.mla.up.bwd", T * (qn + kvn));
    if (x->tpo && x->tp > 1) {
        /* each up-projection is its own column-parallel layer (TELayerNormColumnParallelLinear, the latent
         * norm fused): its input's all-gather (sp) beside its input-gradient GEMM, its input gradient's
         * reduction beside its weight-gradient GEMM (opg_col_bwd); the rope key's gradient is reduced on
         * the stream, the backward of Megatron-Core's explicit gather_from_sequence_parallel_region */
        uint64_t a = (uint64_t)B->act * T;
        const col_bwd_names kv = { "mla.kv_up.bwd_data", "mla.kv_up.bwd_weight", "tp.allgather.mla.kv.wgrad",
                                   x->sp ? "tp.reducescatter.mla.kv.grad" : "tp.allreduce.mla.kv.grad" };
        opg_col_bwd(B, L, x, &kv, a * x->kvr, (const uint64_t[3]){ T, x->kvr, kvn },
                    (const uint64_t[3]){ x->kvr, kvn, T });
        if (x->qr) {
            const col_bwd_names q = { "mla.q_up.bwd_data", "mla.q_up.bwd_weight", "tp.allgather.mla.q.wgrad",
                                      x->sp ? "tp.reducescatter.mla.q.grad" : "tp.allreduce.mla.q.grad" };
            opg_col_bwd(B, L, x, &q, a * x->qr, (const uint64_t[3]){ T, qin, qn }, (const uint64_t[3]){ qin, qn, T });
        } else {
            opg_gemm(B, L, "mla.q_up.bwd_data", 1, T, qin, qn);
            opg_gemm(B, L, "mla.q_up.bwd_weight", 1, qin, qn, T);
        }
        opg_tpc(B, L, x->ar, a * x->dr, x->sp ? "tp.reducescatter.mla.k_rope.grad" : "tp.allreduce.mla.k_rope.grad",
                x->tp);
    } else {
        opg_gemm(B, L, "mla.q_up.bwd_data", 1, T, qin, qn);
        opg_gemm(B, L, "mla.kv_up.bwd_data", 1, T, x->kvr, kvn);
        if (x->sp)
            opg_tpc(B, L, OPGRAPH_ALLGATHER, (uint64_t)B->act * T * (x->qr + x->kvr), "tp.allgather.mla.wgrad", x->tp);
        opg_gemm(B, L, "mla.q_up.bwd_weight", 1, qin, qn, T);
        opg_gemm(B, L, "mla.kv_up.bwd_weight", 1, x->kvr, kvn, T);
        opg_tpc(B, L, x->ar, lat, x->sp ? "tp.reducescatter.mla.grad" : "tp.allreduce.mla.grad", x->tp);
    }
    opg_mem(B, L, "mla.latent_norm.bwd", Ts * (x->qr + x->kvr), 8);
    opg_fp8_quant(B, L, "mxfp8.quant.mla.down.bwd", Ts * (x->qr + x->kvr + x->dr));
    if (x->qr) {
        opg_gemm(B, L, "mla.q_down.bwd_data", 1, Ts, x->h, x->qr);
        opg_gemm(B, L, "mla.q_down.bwd_weight", 1, x->h, x->qr, Ts);
    }
    opg_gemm(B, L, "mla.kv_down.bwd_data", 1, Ts, x->h, x->kvr + x->dr);
    opg_gemm(B, L, "mla.kv_down.bwd_weight", 1, x->h, x->kvr + x->dr, Ts);
    opg_mem(B, L, "ln1.bwd", x->Eh, 8);
}

/* The multi-token prediction modules' own work beside their transformer layers (which run as layers of the
 * last model chunk), appended to the head's templates (Megatron-Core MultiTokenPredictionLayer, megatron/core/
 * transformer/multi_token_prediction.py; DeepSeek-V3 Sec. 2.2, Fig. 3): per module the embedding of the
 * shifted tokens (vocabulary-parallel lookup and its all-reduce or reduce-scatter), enorm and hnorm, the
 * concatenation, eh_proj (column-parallel 2h -> h, with sequence parallelism an all-gather before it) and,
 * after its layer, final_layernorm, the shared output layer's logits and a cross entropy; the backward mirrors
 * it. Kernel traffic as for the embedding, norms and head above; the concatenation is a copy of 2 E. */
void opg_mtp_tpls(bld *B, const modelcfg *m, const lshape *x)
{
    static const head_names mtp_head = { "mtp.lnf.fwd", "tp.allgather.mtp.head", "mtp.logits.fwd", "mtp.xent.fwd",
                                         "tp.allreduce.mtp.xent", "mtp.xent.bwd", "mtp.logits.bwd_data",
                                         "mtp.logits.bwd_weight", "tp.reducescatter.mtp.head.grad",
                                         "tp.allreduce.mtp.head.grad", "mtp.lnf.bwd" };
    uint64_t tp = x->tp, T = x->T, h = x->h, E = T * h, Eh = x->Eh, V = modelcfg_vocab(m);
    for (uint64_t i = 0; i < m->mtp_layers; i++) {
        int L = OPGRAPH_HEAD_FWD;
        opg_mem(B, L, "mtp.embed.fwd", E, 4);
        opg_tpc(B, L, x->ar, x->act_bytes, x->sp ? "tp.reducescatter.mtp.embed" : "tp.allreduce.mtp.embed", tp);
        opg_mem(B, L, "mtp.norms.fwd", 2 * Eh, 4);
        opg_mem(B, L, "mtp.concat.fwd", 2 * Eh, 4);
        opg_fp8_quant(B, L, "mxfp8.quant.mtp.eh_proj.fwd", 2 * Eh);
        if (x->sp)
            opg_tpc(B, L, OPGRAPH_ALLGATHER, 2 * x->act_bytes, "tp.allgather.mtp", tp);
        opg_gemm(B, L, "mtp.eh_proj.fwd", 1, T, h / tp, 2 * h);
        opg_head(B, x, V, &mtp_head);
        L = OPGRAPH_HEAD_BWD;
        if (x->sp)
            opg_tpc(B, L, OPGRAPH_ALLGATHER, x->act_bytes, "tp.allgather.mtp.grad", tp);
        opg_fp8_quant(B, L, "mxfp8.quant.mtp.eh_proj.bwd", Eh);
        opg_gemm(B, L, "mtp.eh_proj.bwd_data", 1, T, 2 * h, h / tp);
        opg_gemm(B, L, "mtp.eh_proj.bwd_weight", 1, 2 * h, h / tp, T);
        opg_tpc(B, L, x->ar, 2 * x->act_bytes, x->sp ? "tp.reducescatter.mtp.grad" : "tp.allreduce.mtp.grad", tp);
        opg_mem(B, L, "mtp.concat.bwd", 2 * Eh, 4);
        opg_mem(B, L, "mtp.norms.bwd", 2 * Eh, 8);
        if (x->sp)
            opg_tpc(B, L, OPGRAPH_ALLGATHER, x->act_bytes, "tp.allgather.mtp.embed.grad", tp);
        opg_mem(B, L, "mtp.embed.bwd", E, 10);
    }
}


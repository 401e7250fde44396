/* opgraph_moe.c - the expert half of an MoE layer's templates (docs/training.md, "Mixture of experts"): the
 * router, the token dispatcher's kernels, collectives and host-timeline marks, the grouped expert GEMMs over
 * Transformer Engine's streams, the combine; and the expert half's shapes on one GPU. opgraph.c builds the
 * attention half and calls these for each MoE layer template. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "config/gpucfg.h"
#include "config/traincfg.h"
#include "train/opgraph_int.h"

/* The routed experts' GEMM on one GPU: `le` local experts, each an (m x k).(k x n) product. Megatron-Core's
 * TEGroupedMLP (moe_grouped_gemm, moe_use_legacy_grouped_gemm False: Megatron-LM 0d8e071,
 * transformer_engine_spec_provider.py grouped_mlp_modules) runs it through Transformer Engine's GroupedLinear
 * and general_grouped_gemm, which in TE v2.9 (commit 70f5366) reach nvte_multi_tensor_gemm
 * (transformer_engine/common/gemm/cublaslt_gemm.cu): unless NVTE_USE_CUTLASS_GROUPED_GEMM is set on a Hopper GPU
 * for bf16/fp16 operands without bias (no Megatron-Bridge recipe sets it), multi_stream_cublas_gemm launches
 * one cuBLAS GEMM per expert, expert i on compute stream i % num_streams, the streams forked from and joined
 * back to the current one by events; num_streams is 4 (common/util/multi_stream.cpp,
 * get_num_compute_streams). So: le launches over min(streams, le) streams (training.grouped_gemm_streams,
 * default 4), each paying the launch gap, the gaps of different streams overlapping; the tiles quantize per
 * expert (ceil(m / tile_m) for a small per-expert m) and the waves over all of them (compute.h). */
static void grouped_gemm(bld *B, int tpl, const char *name, uint64_t le, uint64_t m, uint64_t n, uint64_t k)
{
    opg_gemm_ns(B, tpl, name, le, m, n, k, (uint32_t)(le > UINT32_MAX ? UINT32_MAX : le), B->gg_streams);
}

/* An all-to-all over the EP group (ep > 1) or a collective over the ETP group (etp > 1). */
static void moec(bld *B, int tpl, int kind, int coll, uint64_t bytes, const char *name, uint64_t ranks)
{
    if (ranks <= 1 || bytes == 0)
        return;
    opgraph_entry e = { (uint8_t)kind, (uint8_t)coll, 0, bytes, name, 0, 0, 0, 0 };
    opg_push(B, tpl, e);
}

/* A host-timeline mark (OPGRAPH_DTOH with its copies, OPGRAPH_HOST_SYNC) */
static void host_mark(bld *B, int tpl, int kind, uint64_t copies)
{
    opgraph_entry e = { (uint8_t)kind, 0, 0, copies, kind == OPGRAPH_DTOH ? "moe.dispatch.dtoh" : "moe.dispatch.sync",
                        0, 0, 0, 0 };
    opg_push(B, tpl, e);
}

/* The framework's Python on the host timeline (OPGRAPH_HOST_PY), `ps` before the host_time_scale. */
static void host_py(bld *B, int tpl, uint64_t ps, const char *name)
{
    if (!ps)
        return;
    opgraph_entry e = { OPGRAPH_HOST_PY, 0, 0, ps, name, 0, 0, 0, 0 };
    opg_push(B, tpl, e);
}


/* The router's GEMM: Megatron-Core's TopKRouter.gating computes the logits with router_gating_linear in
 * the input's dtype or fp32 (moe_router_dtype), a plain matrix product outside Transformer Engine's FP8
 * autocast (megatron/core/transformer/moe/router.py, moe_utils.py): 16-bit under FP8 training, as the
 * flash attention kernel. */
static void router_gemm(bld *B, int L, const char *name, uint64_t m, uint64_t n, uint64_t k)
{
    int dt = B->dtype;
    if (dt == GPUCFG_FP8)
        B->dtype = GPUCFG_BF16;
    opg_gemm(B, L, name, 1, m, n, k);
    B->dtype = dt;
}

/* The all-to-all dispatcher's second permutation: the received tokens arrive grouped by source rank, then
 * by local expert; with more than one local expert they are re-sorted by expert before the grouped GEMM,
 * and back by rank before the combine (Megatron-Core token_dispatcher.py, MoEAlltoAllTokenDispatcher
 * "Permutation 2", moe_utils.py sort_chunks_by_idxs; Transformer Engine's moe_sort_chunks_by_index with
 * moe_permute_fusion). A copy of every received token's hidden vector: read 2 + write 2 B per element of
 * le x me x h (the routing probabilities, 4 B a token, left out); the backward pass runs the inverse. */
static void sort_chunks(bld *B, int L, const moe_shape *e, const char *name, int fwd)
{
    /* Transformer Engine's fused chunk sort (v2.9, transformer_engine/pytorch/permutation.py _moe_chunk_sort;
     * pytorch/triton/permutation.py): the forward builds its map (make_chunk_sort_map) and then moves the
     * tokens and their probabilities (sort_chunks_by_map), two kernels; the backward reuses the map, one.
     * HybridEP's own permute kernel (dispatch_postprocess, combine_preprocess) is one either way. */
    if (e->le > 1 || e->fused_perm)
        opg_mem_n(B, L, name, e->le * e->me * e->h, 4, fwd && !e->fused_perm ? 2 : 1);
}

/* Permutation 1 and its inverse (Transformer Engine's fused moe_permute / moe_unpermute with the router's
 * weights), unless the dispatcher's own kernels do it (moe_shape.fused_perm) */
static void permute(bld *B, int L, const moe_shape *e, const char *name, double bytes_per_elem)
{
    if (!e->fused_perm)
        opg_mem(B, L, name, e->routed * e->h, bytes_per_elem);
}

/* The experts' fc2 bias with biased linear layers (GPT-OSS: add_bias_linear). Megatron-Core's TEGroupedMLP
 * builds fc2 with skip_bias_add=True and adds the bias weighted by the router's probabilities itself,
 * expert by expert (Megatron-LM 0d8e071 megatron/core/transformer/moe/experts.py, TEGroupedMLP._apply_bias:
 * torch.cat([t + b * p for t, b, p in zip(torch.split(output, tokens_per_expert), biases,
 * torch.split(probs, tokens_per_expert))])); fc1's bias is in its GEMM (skip_bias_add=False). Forward: per
 * local expert b * p (writes the expert's tokens x h, 2 B) and t + b * p (reads 2 + 2, writes 2), then the
 * cat (reads 2, writes 2): 2 le + 1 kernels, 12 B per element of le x me x h. Backward (PyTorch autograd):
 * per expert MulBackward's two products with their reductions to b's and p's shapes (grad * p summed over
 * the tokens, grad * b summed over h: two products, 2 + 2 B each, two reductions reading them, 2 B each),
 * then split_with_sizes' backward concatenating the output's gradient slices (2 + 2 B) and the
 * probabilities' (tokens only, left out): 4 le + 1 kernels, 16 B per element. */
static void expert_fc2_bias(bld *B, int L, const moe_shape *e, int fwd)
{
    if (!e->bias)
        return;
    uint64_t n = fwd ? 2 * e->le + 1 : 4 * e->le + 1;
    opg_mem_n(B, L, fwd ? "moe.expert.fc2.bias.fwd" : "moe.expert.fc2.bias.bwd", e->le * e->me * e->h, fwd ? 12 : 16,
          (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n));
}

/* The router's load-balancing loss with moe_router_fusion (Megatron-Core 0d8e071 router.py TopKRouter.routing:
 * compute_routing_scores_for_aux_loss, then _apply_aux_loss / _apply_seq_aux_loss / _apply_global_aux_loss;
 * moe_utils.py switch_load_balancing_loss_func, save_to_aux_losses_tracker, MoEAuxLossAutoScaler; Transformer
 * Engine v2.9 pytorch/router.py FusedComputeScoresForMoEAuxLoss, FusedAuxLoss). Forward: the fused scores
 * kernel (reads the logits, writes the scores, a routing map and its saved intermediate), routing_map.sum
 * over the tokens, the fused loss kernel (reads the scores), the tracker's loss / coeff and its in-place add:
 * 5 kernels (seq_aux_loss: the division by the batch, 6; global_aux_loss: the running counts' add, the step
 * counter's and their quotient, 8), about 10 B per logit at 16-bit logits. Backward: the auto-scaler's
 * ones_like x scale (two), the loss's and the scores' backward kernels, and the sum of this logits gradient
 * with the top-k's: 5 kernels, about 14 B per logit. The tokens-per-expert all-reduce over the TP x CP group
 * (dp too for global_aux_loss) is not modelled. */
static void moe_aux_loss(bld *B, int L, const moe_shape *e, int fwd)
{
    if (e->aux == MODELCFG_AUX_NONE)
        return;
    uint32_t n = !fwd ? 5 : e->aux == MODELCFG_AUX_SEQ ? 6 : e->aux == MODELCFG_AUX_GLOBAL ? 8 : 5;
    opg_mem_n(B, L, fwd ? "moe.router.aux_loss.fwd" : "moe.router.aux_loss.bwd", e->tl * e->nexp, fwd ? 10 : 14, n);
}

void opg_moe_fwd(bld *B, int L, const lshape *x, const moe_shape *e)
{
    B->node = OPGRAPH_NODE_POST_ATTN;
    opg_mem(B, L, "ln2.fwd", x->Eh, 4);
    /* Megatron-Core's Python of the router and the dispatcher's preprocessing (training.host_moe_router;
     * MoELayer.router_and_preprocess), unless a CUDA graph replays them */
    host_py(B, L, e->py_router_ps, "moe.router.python");
    router_gemm(B, L, "moe.router.fwd", e->tl, e->nexp, x->h);
    /* forced load balancing replaces the logits by random ones (Megatron-Core 0d8e071 moe_utils.py RandomSTE:
     * logits.clone().normal_(generator), two kernels: the copy reads and writes the logits, normal_ writes
     * them again, 3 x 2 B per logit; its backward passes the gradient through) */
    if (e->force_balance)
        opg_mem_n(B, L, "moe.router.random.fwd", e->tl * e->nexp, 6, 2);
    /* read the logits, write fp32 probabilities, top-k selection reads them again (10 B per logit) */
    opg_mem(B, L, "moe.router.topk.fwd", e->tl * e->nexp, 10);
    moe_aux_loss(B, L, e, 1);
    /* the dropless all-to-all dispatcher's split sizes go to the host: copies queued before permutation 1,
     * the host waiting for them before the all-to-all (or, with no EP or TP group, before the experts, whose
     * grouped GEMM takes the tokens per expert as a host list; the dispatcher's TP group is the expert-
     * tensor-parallel one, expt_tp). Megatron-Core token_dispatcher.py,
     * MoEAlltoAllTokenDispatcher.preprocess and _maybe_dtoh_and_synchronize: tokens_per_expert,
     * input_splits, output_splits and output_splits_tp moved with maybe_move_tensor_to_cpu on the side
     * stream (only tokens_per_expert without an EP or TP group), then d2h_event.synchronize() */
    int groups = e->ep > 1 || e->etp > 1;
    /* the all-to-all dispatcher's preprocess (Megatron-Core 0d8e071 token_dispatcher.py,
     * MoEAlltoAllTokenDispatcher.preprocess, dropless): the tokens per expert (routing_map.sum, reading the
     * tl x experts map, 1 B an entry) and, with an EP or expert-TP group, five more small kernels on vectors
     * of experts' counts (the input splits' sum, the .contiguous() copy of the local experts' counts, the
     * output splits', output_splits_tp's and the local experts' sums); their all-gather of the counts over the
     * EP x TP group (gather_from_sequence_parallel_region, a few hundred bytes) is not modelled. HybridEP
     * computes its own metadata (_HybridEPManager.setup_metadata): not this. */
    if (!e->fused_perm)
        opg_mem_n(B, L, "moe.preprocess.fwd", e->tl * e->nexp, 1, groups ? 6 : 1);
    host_mark(B, L, OPGRAPH_DTOH, groups ? 4 : 1);
    /* the permutation's index map, built once and kept for the unpermutation and both backward passes:
     * Transformer Engine's fused moe_permute (transformer_engine/pytorch/permutation.py, the mask-map path;
     * common/permutation/permutation.cu) reads the tl x experts routing map (1 B per entry, bool) and writes
     * an int32 row-id map of the same shape: 1 + 4 = 5 B per entry, in three kernels (TE v2.9
     * pytorch/triton/permutation.py make_row_id_map: _row_id_map_pass_1/2/3_kernel) */
    opg_mem_n(B, L, "moe.permute.rowmap.fwd", e->tl * e->nexp, 5, e->fused_perm ? 1 : 3);
    permute(B, L, e, "moe.permute.fwd", 4);
    B->node = OPGRAPH_NODE_DISPATCH;
    if (groups) {
        host_mark(B, L, OPGRAPH_HOST_SYNC, 0);
        /* the all-to-all dispatcher's Python after its synchronisation (training.host_moe_dispatch;
         * MoEAlltoAllTokenDispatcher.token_dispatch and dispatch_postprocess) */
        host_py(B, L, e->py_dispatch_ps, "moe.dispatch.python");
    }
    moec(B, L, OPGRAPH_EP_A2A, 0, e->a2a_bytes, "ep.alltoall.dispatch", e->ep);
    /* the all-to-all dispatcher sends the permuted probabilities in an all-to-all of their own after the
     * tokens' (MoEAlltoAllTokenDispatcher.token_dispatch: all_to_all of permutated_local_input_tokens, then of
     * permuted_probs), and its autograd function returns their gradients the same way in the backward */
    if (!e->fused_perm)
        moec(B, L, OPGRAPH_EP_A2A, 0, e->probs_bytes, "ep.alltoall.dispatch.probs", e->ep);
    B->node = OPGRAPH_NODE_MLP;
    moec(B, L, OPGRAPH_ETP_COLL, OPGRAPH_ALLGATHER, e->etp_bytes, "etp.allgather.dispatch", e->etp);
    sort_chunks(B, L, e, "moe.sort_chunks.fwd", 1);
    if (!groups)
        host_mark(B, L, OPGRAPH_HOST_SYNC, 0);
    /* the grouped MLP's Python per local expert (training.host_moe_expert; MoELayer.routed_experts_compute) */
    host_py(B, L, e->py_experts_ps, "moe.experts.python");
    /* the experts' fc1 (TEGroupedLinear) holds their first parameters: its forward pre-hook comes here, before
     * its input's quantization (Megatron-Core's DDP hooks the modules with parameters of their own) */
    B->experts_hook = 1;
    opg_fp8_quant_n(B, L, "mxfp8.quant.moe.expert.fc1.fwd", e->le * e->me * x->h, e->le);
    grouped_gemm(B, L, "moe.expert.fc1.fwd", e->le, e->me, e->fin_e, x->h);
    opg_mem(B, L, x->swiglu ? "moe.expert.swiglu.fwd" : "moe.expert.gelu.fwd", e->le * e->me * e->fo_e, x->swiglu ? 6 : 4);
    opg_fp8_quant_n(B, L, "mxfp8.quant.moe.expert.fc2.fwd", e->le * e->me * e->fo_e, e->le);
    grouped_gemm(B, L, "moe.expert.fc2.fwd", e->le, e->me, x->h, e->fo_e);
    expert_fc2_bias(B, L, e, 1);
    sort_chunks(B, L, e, "moe.unsort_chunks.fwd", 1);
    moec(B, L, OPGRAPH_ETP_COLL, OPGRAPH_REDUCE_SCATTER, e->etp_bytes, "etp.reducescatter.combine", e->etp);
    B->node = OPGRAPH_NODE_COMBINE;
    moec(B, L, OPGRAPH_EP_A2A, 0, e->a2a_bytes, "ep.alltoall.combine", e->ep);
    /* gather the expert outputs back into token order and sum them with the router's weights */
    permute(B, L, e, "moe.unpermute.fwd", 6);
    /* (Megatron-Core's combined schedule computes the shared experts in its mlp node) */
    B->node = OPGRAPH_NODE_MLP;
    if (e->sh_fo)
        opg_shared_mlp_fwd(B, L, x, e->sh_fin, e->sh_fo);
    B->node = OPGRAPH_NODE_COMBINE;
    opg_mem(B, L, "resid2.fwd", x->Eh, x->drop ? 7 : 6);
    B->node = OPGRAPH_NODE_ATTN;
}

void opg_moe_bwd(bld *B, int L, const lshape *x, const moe_shape *e)
{
    B->node = OPGRAPH_NODE_COMBINE;
    opg_mem(B, L, "resid2.bwd", x->Eh, x->drop ? 5 : 4);
    B->node = OPGRAPH_NODE_MLP;
    if (e->sh_fo)
        opg_shared_mlp_bwd(B, L, x, e->sh_fin, e->sh_fo);
    B->node = OPGRAPH_NODE_COMBINE;
    permute(B, L, e, "moe.unpermute.bwd", 6);
    moec(B, L, OPGRAPH_EP_A2A, 0, e->a2a_bytes, "ep.alltoall.combine.grad", e->ep);
    B->node = OPGRAPH_NODE_MLP;
    moec(B, L, OPGRAPH_ETP_COLL, OPGRAPH_ALLGATHER, e->etp_bytes, "etp.allgather.combine.grad", e->etp);
    sort_chunks(B, L, e, "moe.unsort_chunks.bwd", 0);
    expert_fc2_bias(B, L, e, 0);
    opg_fp8_quant_n(B, L, "mxfp8.quant.moe.expert.fc2.bwd", e->le * e->me * x->h, e->le);
    grouped_gemm(B, L, "moe.expert.fc2.bwd_data", e->le, e->me, e->fo_e, x->h);
    grouped_gemm(B, L, "moe.expert.fc2.bwd_weight", e->le, e->fo_e, x->h, e->me);
    opg_mem(B, L, x->swiglu ? "moe.expert.swiglu.bwd" : "moe.expert.gelu.bwd", e->le * e->me * e->fo_e,
        x->swiglu ? 10 : 6);
    opg_fp8_quant_n(B, L, "mxfp8.quant.moe.expert.fc1.bwd", e->le * e->me * e->fin_e, e->le);
    grouped_gemm(B, L, "moe.expert.fc1.bwd_data", e->le, e->me, x->h, e->fin_e);
    grouped_gemm(B, L, "moe.expert.fc1.bwd_weight", e->le, x->h, e->fin_e, e->me);
    sort_chunks(B, L, e, "moe.sort_chunks.bwd", 0);
    moec(B, L, OPGRAPH_ETP_COLL, OPGRAPH_REDUCE_SCATTER, e->etp_bytes, "etp.reducescatter.dispatch.grad", e->etp);
    B->node = OPGRAPH_NODE_DISPATCH;
    moec(B, L, OPGRAPH_EP_A2A, 0, e->a2a_bytes, "ep.alltoall.dispatch.grad", e->ep);
    if (!e->fused_perm)
        moec(B, L, OPGRAPH_EP_A2A, 0, e->probs_bytes, "ep.alltoall.dispatch.probs.grad", e->ep);
    B->node = OPGRAPH_NODE_POST_ATTN;
    permute(B, L, e, "moe.permute.bwd", 4);
    /* the fused router's backward (moe_router_fusion: Transformer Engine's FusedTopkScoreFunction.backward,
     * tex.fused_topk_with_score_function_bwd, v2.9 pytorch/router.py and common/fused_router/
     * fused_topk_with_score_function.cu): reads the probabilities' gradient, the saved scores and the routing map
     * and writes the logits' gradient, about the forward's 10 B per logit */
    opg_mem(B, L, "moe.router.topk.bwd", e->tl * e->nexp, 10);
    moe_aux_loss(B, L, e, 0);
    router_gemm(B, L, "moe.router.bwd_data", e->tl, x->h, e->nexp);
    router_gemm(B, L, "moe.router.bwd_weight", x->h, e->nexp, e->tl);
    opg_mem(B, L, "ln2.bwd", x->Eh, 8);
    B->node = OPGRAPH_NODE_ATTN;
}

/* The EP ranks one token goes to when its top_k experts are drawn uniformly without replacement from
 * `experts` spread evenly over `ep` ranks (Megatron-Core's moe_router_force_load_balancing: random router
 * logits, the balanced routing the validation rows ran): ep x (1 - P(no expert of a given rank)),
 * P = C(experts - experts / ep, top_k) / C(experts, top_k). O(top_k). */
static double ranks_per_token(uint64_t experts, uint64_t ep, uint64_t top_k)
{
    if (ep <= 1 || top_k == 0)
        return 1;
    double miss = 1, others = (double)(experts - experts / ep);
    for (uint64_t i = 0; i < top_k; i++)
        miss *= others - (double)i > 0 ? (others - (double)i) / (double)(experts - i) : 0;
    double d = (double)ep * (1 - miss);
    return d < (double)top_k ? d : (double)top_k;
}

/* The expert half's shapes (moe_shape) of an MoE model's layers on one GPU. */
void opg_moe_shape(const modelcfg *m, const traincfg *t, const lshape *x, double act, moe_shape *e)
{
    uint64_t tp = t->tp, T = x->T, h = x->h;
    uint64_t mats_in = x->swiglu ? 2 : 1;
    memset(e, 0, sizeof *e);
    e->tl = t->sp ? T / tp : T;
    e->ep = t->ep;
    e->etp = t->etp ? t->etp : tp;
    e->nexp = m->experts;
    e->h = h;
    e->le = m->experts / e->ep;
    e->fo_e = m->expert_ffn / e->etp;
    e->fin_e = mats_in * e->fo_e;
    double load = modelcfg_moe_load(m);
    double per_expert = (double)e->tl * (double)m->top_k * (double)(e->ep * e->etp) / (double)m->experts;
    e->me = (uint64_t)ceil(per_expert * load);
    e->routed = e->tl * m->top_k;
    /* each routed copy once per destination expert (the all-to-all dispatcher permutes before sending);
     * HybridEP sends a token once per destination rank and expands it there (its sparse-to-dense map,
     * tokens x ranks; DeepEP hybrid-ep tests/test_hybrid_ep.py counts its bandwidth on those rows), and its
     * combine returns one sum per token and rank: the ranks a token reaches instead of top_k */
    double copies = t->moe_dispatcher == TRAINCFG_MOE_HYBRIDEP ? ranks_per_token(m->experts, e->ep, m->top_k)
                                                                : (double)m->top_k;
    e->a2a_bytes = (uint64_t)ceil((double)e->tl * copies * (double)h * act * load);
    e->etp_bytes = e->etp > 1 ? e->a2a_bytes * e->etp : 0;
    /* fp32 probabilities (moe_router_dtype fp32; the input's 16 bits otherwise: 1/h of the tokens' bytes
     * either way) */
    e->probs_bytes = (uint64_t)ceil((double)e->tl * (double)m->top_k * 4.0 * load);
    e->sh_fo = m->shared_experts * m->expert_ffn / tp;
    e->sh_fin = mats_in * e->sh_fo;
    e->py_router_ps = t->cuda_graph_moe_router ? 0 : t->host_moe_router_ps;
    e->py_experts_ps = e->le * t->host_moe_expert_ps;
    e->py_dispatch_ps = t->moe_dispatcher == TRAINCFG_MOE_ALLTOALL ? t->host_moe_dispatch_ps : 0;
    e->fused_perm = t->moe_dispatcher == TRAINCFG_MOE_HYBRIDEP;
    e->bias = m->bias;
    e->aux = m->moe_aux_loss;
    e->force_balance = t->moe_force_load_balancing;
}

/* gpumem.c - per-GPU memory: model states with ZeRO, activations after Korthikanti et al. 2022 as
 * Megatron-Core and Transformer Engine (TE) keep them.
 *
 * Activation bytes of one layer, one micro-batch (s sequence, b micro-batch, h hidden, a heads, f FFN,
 * q = a x head_dim the query width, k = kv_heads x head_dim the key/value width, d = 1 with dropout, 0
 * without; 16-bit values take 2 B, dropout masks 1 B; g = the bytes of a saved GEMM input: 2, or 1 with
 * FP8 training, where TE's Linear, LayerNormLinear and GroupedLinear save the FP8 (columnwise) copy of
 * their input for the weight gradient instead of the 16-bit tensor: transformer_engine/pytorch/module/
 * linear.py `saved_inputmat`, layernorm_linear.py `ln_out`, grouped_linear.py `inputmats`):
 *   kept whole on every tensor-parallel rank (split by t only with sequence parallelism):
 *     inputs of the two norms 4sbh (16-bit: the norm backward reads them), input of QKV g sbh, input of
 *     the MLP g sbh (an MoE layer: the router's 16-bit input 2sbh, its GEMM is not TE's), two dropout
 *     masks 2d sbh                                                           R = (4 + 2d + 2g) sbh
 *   split by t:  Q 2sbq, K and V 4sbk, the attention output 2sbq (the core's output is the output
 *                projection's input; with FP8 the projection also keeps its FP8 copy, g = 1: + sbq);
 *                MLP: GELU: its input 2sbf and the fc2 input g sbf; SwiGLU: Megatron-Core's fused
 *                SwiGLU keeps only its input, the fc1 output 4sbf (megatron/core/fusions/
 *                fused_bias_swiglu.py: save_for_backward(input)), and the fc2 input g sbf
 *                                                  S = 4sbq + 4sbk (+ sbq FP8) + (2 + g) sbf | (4 + g) sbf
 *   attention core, split by t: softmax output 2as^2b, its dropout mask d as^2b, dropout output 2d as^2b
 *                                                                            A = (2 + 3d) as^2b
 *   with flash attention (training.attention: flash) the core keeps no s x s tensor: the backward
 *   recomputes the scores from Q, K, V (already in S) and the fp32 logsumexp of each query row, and
 *   regenerates the dropout mask from the RNG state (Dao et al., arXiv 2205.14135, Sec. 3.1; Dao, arXiv
 *   2307.08691, Sec. 3.1.1):                                                 A = 4asb
 * For GPT (f = 4h, q = k = h, d = 1, 16-bit): R = 10sbh, S = 24sbh, A = 5as^2b: Korthikanti's Eq. 1-4, e.g.
 * sbh(10 + 24/t + 5as/(ht)) with tensor parallelism and (34sbh + 5as^2b)/t with sequence parallelism.
 * Selective recomputation drops A (Sec. 4.2); full recomputation keeps only the layer input, 2sbh (/t
 * with sp), plus one layer's activations while that layer's backward runs (not in the paper's totals).
 * Multi-head latent attention (opgraph.c, mla_fwd; c = q_lora_rank + kv_lora_rank the latents' width, e =
 * heads x (nope + rope) the query and key width, q = heads x v_head_dim the value width): R adds the two
 * latent norms' inputs and the up-projections' saved inputs, (2 + g) sbc (whole on every rank, split by t
 * with sp: the down-projections are duplicated, the up-projections' inputs saved before their all-gather);
 * S holds Q and K 4sbe, V 2sbq (the flash kernel's saved inputs; none with recompute_mla_up_proj, which
 * discards them after the core's forward), the attention output 2sbq (+ g sbq FP8).
 */
#include "train/gpumem.h"

#include "train/fsdp.h"

#include <stdio.h>

#include "config/parallel.h"

typedef unsigned long long ull;

/* Bytes of a GEMM input kept for the backward: the FP8 copy with FP8 training (TE), else 16-bit; with
 * MXFP8 the columnwise copy keeps its E8M0 scales, 1 B per 32 elements (TE pytorch/tensor/mxfp8_tensor.py:
 * columnwise_scale_inv of shape rows/32 x columns). */
static double saved_gemm_input_bytes(const traincfg *t)
{
    return t->precision != GPUCFG_FP8 ? 2 : traincfg_mxfp8(t) ? 1 + 1.0 / 32 : 1;
}

/* Bytes per token (before the split by tp) of an MLP's activation and fc2 input of inner width f. */
static double mlp_act_bytes(const modelcfg *m, const traincfg *t, double f)
{
    double g = saved_gemm_input_bytes(t);
    return (m->activation == MODELCFG_SWIGLU ? 4 + g : 2 + g) * f;
}

/* The layer's three parts per token (A also per query row): R whole, S split by t, A the core. */
static void layer_parts(const modelcfg *m, const traincfg *t, int moe, double *R, double *S, double *A)
{
    double s = (double)m->seq_len / (double)(t->cp ? t->cp : 1), h = (double)m->hidden;
    double a = (double)m->heads, d = m->dropout ? 1 : 0, g = saved_gemm_input_bytes(t);
    double hd = (double)(m->head_dim ? m->head_dim : m->hidden / m->heads);
    double q = a * hd, k = (double)(m->kv_heads ? m->kv_heads : m->heads) * hd;
    *R = (4 + 2 * d + g) * h + (moe ? 2 : g) * h;
    *S = 4 * q + 4 * k + (g < 2 ? g * q : 0) + (moe ? 0 : mlp_act_bytes(m, t, (double)m->ffn));
    if (modelcfg_is_mla(m)) {
        double c = (double)(m->q_lora_rank + m->kv_lora_rank), e = a * (double)modelcfg_qk_head_dim(m);
        *R += (2 + g) * c;
        *S = (t->recompute_mla_up_proj ? 0 : 4 * e + 2 * q) + 2 * q + (g < 2 ? g * q : 0) +
             (moe ? 0 : mlp_act_bytes(m, t, (double)m->ffn));
    }
    *A = traincfg_flash(t) ? 4 * a : (2 + 3 * d) * a * s;
}

static double layer_bytes(const modelcfg *m, const traincfg *t, int moe)
{
    double s = (double)m->seq_len / (double)(t->cp ? t->cp : 1), b = (double)t->micro_batch, h = (double)m->hidden;
    double tp = (double)t->tp, sb = s * b, R, S, A;
    layer_parts(m, t, moe, &R, &S, &A);
    double whole = (t->sp ? R / tp : R) * sb;
    switch (t->recompute) {
    case TRAINCFG_RECOMPUTE_SELECTIVE: return whole + S * sb / tp;
    case TRAINCFG_RECOMPUTE_FULL: return t->sp ? 2 * sb * h / tp : 2 * sb * h;
    default: return whole + S * sb / tp + A * sb / tp;
    }
}

double gpumem_layer_activation_bytes(const modelcfg *m, const traincfg *t) { return layer_bytes(m, t, 0); }

/* Micro-batches (plain 1F1B) or model chunks (interleaved) in flight at stage r's peak, times layers
 * per micro-batch (or chunk). Plain 1F1B: stage r runs p - r forward passes before its first backward
 * (Narayanan et al., arXiv 2104.04473, Sec. 2.2); ZB-H1 holds p on every stage (see below). Interleaved (Megatron's schedule): warm-up of
 * 2(p - r - 1) + (v - 1)p chunks plus the one in flight; for r = 0 this is L(1 + (p - 1)/(pv)), the
 * factor of Korthikanti et al. Sec. 4.2.3. Never more than the iteration has. */
double gpumem_layers_in_flight(const modelcfg *m, const traincfg *t, uint64_t stage)
{
    uint64_t p = t->pp, v = t->virtual_stages, n = t->global_batch / (t->micro_batch * t->dp);
    uint64_t units, total;
    if (t->pipeline_schedule == TRAINCFG_SCHEDULE_DUALPIPEV) {
        /* DualPipeV holds at most 2p + 1 model chunks between a forward and its weight gradient on every
         * rank (the DualPipe README's "PP + 1" for PP = 2p stages; tests/train/test_schedule_dpv.c counts
         * them in the order) */
        units = 2 * p + 1;
        total = n * v;
    } else if (v <= 1) {
        /* ZB-H1 (Qi et al., arXiv 2401.10241, Sec. 3.1): stage r holds p - r micro-batches awaiting B and r
         * awaiting only W; counting the latter at full size gives p on every stage (the paper's bound) */
        units = t->pipeline_schedule == TRAINCFG_SCHEDULE_ZB_H1 ? p : p - stage;
        total = n;
    } else {
        units = 2 * (p - stage - 1) + (v - 1) * p + 1;
        total = n * v;
    }
    /* training.moe_a2a_overlap (Megatron-Core's combined 1F1B): one more warm-up forward, so units chunks are
     * held before the first steady pair, in which the forward builds each layer before the backward frees its
     * partner (TransformerLayerSchedulePlan.run): one layer more at the peak, when there is a pair */
    double pair = t->moe_a2a_overlap && units < total ? 1 : 0;
    if (units > total)
        units = total;
    if (!parallel_uneven_split(t) && !m->mtp_layers)
        return (double)units * (double)m->layers / (double)(p * (v ? v : 1)) + pair;
    /* an uneven split (or MTP modules on the last virtual stage): the k-th forward pass of the rank runs its chunk (k / p) mod v (Megatron's
     * interleaved order, p micro-batches per chunk in turn), so sum those chunks' layers */
    uint64_t vv = v ? v : 1, per_round = 0, layers;
    for (uint64_t c = 0; c < vv; c++)
        per_round += parallel_chunk_layers(m, t, stage, c, NULL);
    uint64_t rounds = units / (p * vv), rest = units % (p * vv);
    layers = rounds * p * per_round;
    for (uint64_t k = 0; k < rest; k++)
        layers += parallel_chunk_layers(m, t, stage, (k / p) % vv, NULL);
    return (double)layers + pair;
}

/* Activation bytes of one MoE layer for one micro-batch on one GPU: the dense layer's without its MLP
 * (layer_parts with moe: the MLP input is the router's 16-bit input) plus the experts': the busiest
 * GPU's load x top_k routed copies of each of its s b / t tokens through an expert MLP: the permuted
 * input of the grouped fc1 (g h each: TE's GroupedLinear saves it, FP8 with FP8 training), the
 * activation's input and the fc2 input (mlp_act_bytes of expert_ffn, whichever etp); the router's fp32
 * probabilities (4 x experts per token); the shared experts as a dense MLP (with FP8 their fc1 keeps its
 * own FP8 copy of the input, g h). The token dispatcher's permute and all-to-all keep only index maps
 * (megatron/core/transformer/moe/moe_utils.py `permute`: the row map, not the tokens). Megatron-LM
 * requires sp with MoE and tp > 1, so all of it is / t. */
double gpumem_moe_layer_activation_bytes(const modelcfg *m, const traincfg *t)
{
    if (t->recompute == TRAINCFG_RECOMPUTE_FULL)
        return gpumem_layer_activation_bytes(m, t);
    double s = (double)m->seq_len / (double)(t->cp ? t->cp : 1), b = (double)t->micro_batch, h = (double)m->hidden;
    double tp = (double)t->tp, fe = (double)m->expert_ffn, g = saved_gemm_input_bytes(t);
    double routed = modelcfg_moe_load(m) * (double)m->top_k * s * b / tp;
    double moe = routed * (g * h + mlp_act_bytes(m, t, fe)) + 4 * (double)m->experts * s * b / tp;
    if (m->shared_experts)
        moe += s * b * ((g < 2 ? g * h : 0) + mlp_act_bytes(m, t, (double)m->shared_experts * fe)) / tp;
    return layer_bytes(m, t, 1) + moe;
}

uint64_t gpumem_expert_dp(const traincfg *t)
{
    uint64_t ep = t->ep ? t->ep : 1, n = t->tp * traincfg_dpcp(t) / (ep * parallel_etp(t));
    return n ? n : 1;
}

/* Megatron-FSDP's buffers beside the shards (gpumem_stage's step): the unsharded parameters of the units
 * gathered ahead and the unsharded gradients of the units whose reduce-scatter is in flight. */
static void fsdp_buffers(const modelcfg *m, const traincfg *t, uint64_t stage, uint64_t v, double gb, gpumem *out)
{
    /* Megatron-FSDP: besides the shards, the unsharded parameters of the units gathered ahead (the
     * all-gather prefetch window) and the unsharded gradients of the units whose reduce-scatter is in
     * flight (at most the queue's capacity before each new one), the largest over the stage's passes
     * (fsdp.h); both peaks added, an upper bound */
    double gathered = 0, grads = 0;
    for (uint64_t c = 0; c < v; c++) {
        uint64_t unit = fsdp_comm_unit(m, t, stage, c);
        for (int bwd = 0; bwd < 2; bwd++) {
            fsdp_pass ps;
            fsdp_pass_init(&ps, m, t, stage, c, bwd);
            double a = (double)fsdp_peak_gathered_bytes(&ps, unit / 2);
            double r = bwd ? (double)fsdp_peak_grad_elems(&ps, unit) * gb : 0;
            gathered = a > gathered ? a : gathered;
            grads = r > grads ? r : grads;
        }
    }
    out->weights_bytes += gathered;
    out->gradients_bytes += grads;
    if (t->keep_fp8_transpose) {
        /* keep_fp8_transpose_cache: every FP8 layer's transpose stays, unsharded, 1 B per weight */
        for (uint64_t c = 0; c < v; c++) {
            fsdp_pass ps;
            fsdp_pass_init(&ps, m, t, stage, c, 0);
            for (uint32_t i = 0; i < ps.n; i++) {
                fsdp_unit u = fsdp_unit_at(&ps, i);
                out->weights_bytes += fsdp_unit_fp8(&u) ? (double)u.params : 0;
            }
        }
    }
}

/* With full recomputation: the activations of `flight` layers in flight (of mean checkpoint size `layer`)
 * under recompute_method / recompute_num_layers (traincfg.h), the stage holding `layers` layers, `moe` of
 * them MoE, in v chunks. */
static double full_recompute_activations(const modelcfg *m, const traincfg *t, double flight, double layer,
                                         uint64_t layers, uint64_t moe, uint64_t v)
{
    double act;
    traincfg none = *t;
    none.recompute = TRAINCFG_RECOMPUTE_NONE;
    double dense = gpumem_layer_activation_bytes(m, &none), full = dense;
    if (moe)
        full = ((double)(layers - moe) * full + (double)moe * gpumem_moe_layer_activation_bytes(m, &none)) /
               (double)layers;
    uint64_t n = t->recompute_num_layers ? t->recompute_num_layers : 1;
    if (t->recompute_method == TRAINCFG_RECOMPUTE_BLOCK) {
        /* block: the first n layers of each of the stage's v chunks keep their inputs, the others all
         * their activations (the mean chunk's share; an uneven split shares it by the stage's mean) */
        double chunk = (double)layers / (double)v, r = (double)n < chunk ? (double)n / chunk : 1;
        act = flight * (r * layer + (1 - r) * full);
    } else {
        /* uniform: one checkpoint (a layer's input) per group of n layers */
        act = flight * layer / (double)n;
    }
    /* and the layers being recomputed hold all their activations until their backward: a group of n
     * (uniform), or the one layer (block, each recomputed before its own backward); counted at the dense
     * layer's size, as tiers.c takes it back out */
    act += (t->recompute_method == TRAINCFG_RECOMPUTE_BLOCK ? 1 : (double)n) * dense;
    return act;
}

void gpumem_stage(const modelcfg *m, const traincfg *t, uint64_t stage, gpumem *out)
{
    /* ZeRO shards over the dp x cp ranks that hold the same parameters */
    uint64_t p = t->pp, dp = traincfg_dpcp(t), tp = t->tp, v = t->virtual_stages ? t->virtual_stages : 1;
    uint64_t layers = 0, moe = 0, expert = 0;
    for (uint64_t c = 0; c < v; c++) {
        uint64_t first, n = parallel_chunk_layers(m, t, stage, c, &first);
        layers += n;
        moe += modelcfg_moe_layers_in(m, first, n);
    }
    uint64_t params = (layers - moe) * modelcfg_layer_params_tp(m, tp);
    if (moe) {
        uint64_t etp = t->etp ? t->etp : tp;
        params += moe * modelcfg_moe_layer_params_tp(m, tp, t->ep, etp, &expert);
        expert *= moe;
    }
    if (stage == 0)
        params += modelcfg_embedding_params_tp(m, tp);
    if (stage == traincfg_head_stage(t))
        params += modelcfg_head_params_tp(m, tp, p) + modelcfg_mtp_params_tp(m, tp, p);
    int fp32 = t->precision == GPUCFG_FP32 || t->precision == GPUCFG_TF32;
    double wb = fp32 ? 4 : 2, gb = (fp32 || t->main_grads == GPUCFG_FP32) ? 4 : 2, ob = fp32 ? 8 : 12;
    double P = (double)params;
    out->stage = stage;
    out->params = params;
    out->weights_bytes = P * wb / (t->zero >= 3 ? (double)dp : 1);
    out->gradients_bytes = P * gb / (t->zero >= 2 ? (double)dp : 1);
    out->optimizer_bytes = P * ob / (t->zero >= 1 ? (double)dp : 1);
    out->layers = layers;
    out->moe_layers = moe;
    out->expert_params = expert;
    out->expert_weights_bytes = out->expert_gradients_bytes = out->expert_optimizer_bytes = 0;
    if (expert) {
        /* the routed experts' share is sharded over the expert-data-parallel group instead: tp x dp /
         * (ep x etp) ranks hold the same experts (Megatron-Core's distributed optimizer) */
        double X = (double)expert, edp = (double)gpumem_expert_dp(t);
        out->expert_weights_bytes = X * wb / (t->zero >= 3 ? edp : 1);
        out->expert_gradients_bytes = X * gb / (t->zero >= 2 ? edp : 1);
        out->expert_optimizer_bytes = X * ob / (t->zero >= 1 ? edp : 1);
        out->weights_bytes = (P - X) * wb / (t->zero >= 3 ? (double)dp : 1) + out->expert_weights_bytes;
        out->gradients_bytes = (P - X) * gb / (t->zero >= 2 ? (double)dp : 1) + out->expert_gradients_bytes;
        out->optimizer_bytes = (P - X) * ob / (t->zero >= 1 ? (double)dp : 1) + out->expert_optimizer_bytes;
    }

    if (t->precision == GPUCFG_FP8 && t->zero < 3) {
        /* FP8 weight copies: Megatron-Core's TE modules pass is_first_microbatch, so TE quantizes each
         * weight once per iteration and keeps the FP8 copy for the later micro-batches (megatron/core/
         * extensions/transformer_engine.py, TELinear.forward; TE module/base.py, the weight workspace):
         * the rowwise copy for the forward GEMM and the columnwise (transposed) one for the data-gradient
         * GEMM on Hopper (on Blackwell the rowwise copy only, traincfg.h fp8_non_tn), 2 x 1 B per weight
         * of the stage's layers held by this GPU (the output layer is
         * Megatron's own bf16 GEMM; under ZeRO-3 / FSDP the gathered weights are transient, none kept).
         * With fp8_param_gather the layers' weights are those FP8 tensors (rowwise and columnwise, 2 B),
         * in place of the bf16 weights: as many bytes as counted above. MXFP8 adds both copies' E8M0
         * scales, 2 x 1/32 B per weight (one per 32 elements, OCP MX v1.0 Sec. 5.3). With fp8_param_gather
         * Megatron-Core all-gathers MXFP8 weights in bf16 into the gradient buffer and casts them from there
         * (megatron/core/distributed/distributed_data_parallel.py, reuse_grad_buf_for_mxfp8_param_ag, which
         * Megatron-Bridge's bf16_with_mxfp8_mixed sets): no bf16 weight buffer besides the gradients'. */
        double layer_params = P - (double)(stage == 0 ? modelcfg_embedding_params_tp(m, tp) : 0) -
                              (double)(stage == traincfg_head_stage(t) ? modelcfg_head_params_tp(m, tp, p) +
                                                                          modelcfg_mtp_params_tp(m, tp, p) : 0);
        double fp8_copy = (t->fp8_param_gather ? 0 : 2) + (traincfg_mxfp8(t) ? 2.0 / 32 : 0);
        if (t->fp8_non_tn && !traincfg_mxfp8(t)) {
            /* Blackwell, tensorwise scaling: the rowwise data serves both GEMMs, no transpose (traincfg.h
             * fp8_non_tn): 1 B per layer weight, with fp8_param_gather 1 B less than counted above */
            fp8_copy -= 1;
        }
        out->weights_bytes += fp8_copy * layer_params;
        out->expert_weights_bytes += fp8_copy * (double)expert;
    }

    if (t->data_parallel == TRAINCFG_DP_FSDP && dp > 1)
        fsdp_buffers(m, t, stage, v, gb, out);

    double s = (double)m->seq_len / (double)(t->cp ? t->cp : 1), b = (double)t->micro_batch, h = (double)m->hidden;
    double div = t->sp ? (double)tp : 1, layer = gpumem_layer_activation_bytes(m, t);
    if (moe) /* the stage's mean layer */
        layer = ((double)(layers - moe) * layer + (double)moe * gpumem_moe_layer_activation_bytes(m, t)) / (double)layers;
    double flight = gpumem_layers_in_flight(m, t, stage), act = flight * layer, head = 0;
    if (t->recompute == TRAINCFG_RECOMPUTE_FULL)
        act = full_recompute_activations(m, t, flight, layer, layers, moe, v);
    if (stage == 0 && m->dropout) {
        /* embedding dropout mask, s b h bytes per micro-batch in flight (Korthikanti Sec. 4.3) */
        uint64_t inflight = p, n = t->global_batch / (t->micro_batch * t->dp);
        act += (double)(inflight < n ? inflight : n) * s * b * h / div;
    }
    if (stage == traincfg_head_stage(t)) {
        /* final norm input and output-layer input 4sbh, fp32 logits for the cross entropy 4sbV/t
         * (Korthikanti Sec. 4.3; 16-bit, 2sbV/t, with TE's fused cross entropy), for the one micro-batch
         * whose backward starts at once */
        double logit = t->ce_impl == TRAINCFG_CE_TE ? 2 : 4; /* traincfg.h ce_impl */
        head = 4 * s * b * h / div + logit * s * b * (double)modelcfg_vocab(m) / (double)tp;
        act += head;
        /* each MTP module besides its layer: embedding output and hidden state (the norms' inputs, 4sbh),
         * eh_proj's input (2 g sbh), the final norm's and output layer's inputs and the logits as the head's */
        act += (double)m->mtp_layers * ((8 + 2 * saved_gemm_input_bytes(t)) * s * b * h / div +
                                        logit * s * b * (double)modelcfg_vocab(m) / (double)tp);
        if (t->pipeline_schedule == TRAINCFG_SCHEDULE_ZB_H1) {
            /* ZB-H1 defers the last stage's W by p - 1 micro-batches: each keeps what the output layer's
             * weight GEMM X^T.dY reads, its input (2sbh) and the 16-bit logits gradient (2sbV/t) */
            uint64_t n = t->global_batch / (t->micro_batch * t->dp), w = p - 1 < n ? p - 1 : n;
            act += (double)w * (2 * s * b * h / div + 2 * s * b * (double)modelcfg_vocab(m) / (double)tp);
        }
    }
    out->host_activations_bytes = 0;
    if (t->cpu_offload_layers) {
        /* pp 1 (parallel.c): one micro-batch in flight, N layers in host memory; in HBM the L - N layers not
         * offloaded and, at the peak, either the last offloaded layer during the last layer's forward or
         * the head's tensors after it (gpumem.h) */
        double n = (double)t->cpu_offload_layers;
        act -= n * layer + head;
        act += head > layer ? head : layer;
        out->host_activations_bytes = n * layer;
    }
    out->activations_bytes = act;
    out->total_bytes = out->weights_bytes + out->gradients_bytes + out->optimizer_bytes + act;
}

void gpumem_estimate(const modelcfg *m, const traincfg *t, gpumem *out)
{
    gpumem first, last;
    gpumem_stage(m, t, 0, &first);
    gpumem_stage(m, t, t->pp - 1, &last);
    *out = last.total_bytes > first.total_bytes ? last : first;
    /* an uneven split can make a middle stage the largest (more layers than the first or last) */
    for (uint64_t s = 1; parallel_uneven_split(t) && s + 1 < t->pp; s++) {
        gpumem mid;
        gpumem_stage(m, t, s, &mid);
        if (mid.total_bytes > out->total_bytes)
            *out = mid;
    }
}

int gpumem_check(const gpumem *mem, const gpucfg *g, const cfgloc *at, cxl_err *err)
{
    if (mem->total_bytes <= (double)g->hbm_bytes)
        return 0;
    const char *names[4] = { "weights", "gradients", "optimizer states", "activations" };
    double v[4] = { mem->weights_bytes, mem->gradients_bytes, mem->optimizer_bytes, mem->activations_bytes };
    int big = 0;
    for (int i = 1; i < 4; i++)
        if (v[i] > v[big])
            big = i;
    return cfgloc_errf(err, at,
                       "out of GPU memory: pipeline stage %llu needs %.1f GiB per GPU (weights %.1f, gradients "
                       "%.1f, optimizer states %.1f, activations %.1f GiB; %llu parameters) but GPU '%s' has "
                       "%.1f GiB of HBM; the largest part is the %s (try a higher ZeRO stage, recomputation, "
                       "or more tensor/pipeline parallelism)",
                       (ull)mem->stage, GPUMEM_GIB(mem->total_bytes), GPUMEM_GIB(v[0]), GPUMEM_GIB(v[1]),
                       GPUMEM_GIB(v[2]), GPUMEM_GIB(v[3]), (ull)mem->params, g->name,
                       GPUMEM_GIB((double)g->hbm_bytes), names[big]);
}

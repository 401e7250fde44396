/* gpumem.c - per-GPU memory: model states with ZeRO, activations after Korthikanti et al. 2022.
 *
 * Activation bytes of one layer, one micro-batch (s sequence, b micro-batch, h hidden, a heads, f FFN,
 * r = kv_heads / heads, d = 1 with dropout, 0 without; 16-bit values take 2 B, dropout masks 1 B):
 *   kept whole on every tensor-parallel rank (split by t only with sequence parallelism):
 *     inputs of the two norms 4sbh, input of QKV 2sbh, input of the MLP 2sbh, two dropout masks 2d sbh
 *                                                                            R = (8 + 2d) sbh
 *   split by t:  Q 2sbh, K and V 4r sbh, input of the output projection 2sbh,
 *                MLP: GELU in and out 4sbf (SwiGLU: gate and up outputs, SiLU output, product 8sbf)
 *                                                                            S = (4 + 4r) sbh + 4sbf | 8sbf
 *   attention core, split by t: softmax output 2as^2b, its dropout mask d as^2b, dropout output 2d as^2b
 *                                                                            A = (2 + 3d) as^2b
 *   with flash attention (training.attention: flash) the core keeps no s x s tensor: the backward
 *   recomputes the scores from Q, K, V (already in S) and the fp32 logsumexp of each query row, and
 *   regenerates the dropout mask from the RNG state (Dao et al., arXiv 2205.14135, Sec. 3.1; Dao, arXiv
 *   2307.08691, Sec. 3.1.1):                                                 A = 4asb
 * For GPT (f = 4h, r = 1, d = 1): R = 10sbh, S = 24sbh, A = 5as^2b: Korthikanti's Eq. 1-4, e.g.
 * sbh(10 + 24/t + 5as/(ht)) with tensor parallelism and (34sbh + 5as^2b)/t with sequence parallelism.
 * Selective recomputation drops A (Sec. 4.2); full recomputation keeps only the layer input, 2sbh (/t
 * with sp), plus one layer's activations while that layer's backward runs (not in the paper's totals).
 */
#include "train/gpumem.h"

#include <stdio.h>

typedef unsigned long long ull;

double gpumem_layer_activation_bytes(const modelcfg *m, const traincfg *t)
{
    /* context parallelism: each rank holds s / cp of every sequence (its queries, keys and values) */
    double s = (double)m->seq_len / (double)(t->cp ? t->cp : 1), b = (double)t->micro_batch, h = (double)m->hidden;
    double a = (double)m->heads, f = (double)m->ffn, r = (double)m->kv_heads / (double)m->heads, d = m->dropout ? 1 : 0;
    double tp = (double)t->tp, sbh = s * b * h;
    double R = (8 + 2 * d) * sbh;
    double S = (4 + 4 * r) * sbh + (m->activation == MODELCFG_SWIGLU ? 8 : 4) * s * b * f;
    double A = traincfg_flash(t) ? 4 * a * s * b : (2 + 3 * d) * a * s * s * b;
    double whole = t->sp ? R / tp : R;
    switch (t->recompute) {
    case TRAINCFG_RECOMPUTE_SELECTIVE: return whole + S / tp;
    case TRAINCFG_RECOMPUTE_FULL: return t->sp ? 2 * sbh / tp : 2 * sbh;
    default: return whole + S / tp + A / tp;
    }
}

/* Micro-batches (plain 1F1B) or model chunks (interleaved) in flight at stage r's peak, times layers
 * per micro-batch (or chunk). Plain 1F1B: stage r runs p - r forward passes before its first backward
 * (Narayanan et al., arXiv 2104.04473, Sec. 2.2). Interleaved (Megatron's schedule): warm-up of
 * 2(p - r - 1) + (v - 1)p chunks plus the one in flight; for r = 0 this is L(1 + (p - 1)/(pv)), the
 * factor of Korthikanti et al. Sec. 4.2.3. Never more than the iteration has. */
double gpumem_layers_in_flight(const modelcfg *m, const traincfg *t, uint64_t stage)
{
    uint64_t p = t->pp, v = t->virtual_stages, n = t->global_batch / (t->micro_batch * t->dp);
    uint64_t units, total;
    if (v <= 1) {
        units = p - stage;
        total = n;
    } else {
        units = 2 * (p - stage - 1) + (v - 1) * p + 1;
        total = n * v;
    }
    if (units > total)
        units = total;
    return (double)units * (double)m->layers / (double)(p * (v ? v : 1));
}

/* Activation bytes of one MoE layer for one micro-batch on one GPU: the dense layer's with its MLP term
 * (c s b f / t, c = 8 for SwiGLU, 4 for GELU) replaced by the experts': the busiest GPU's load x top_k
 * routed copies of each of its s b / t tokens through an expert MLP (c x expert_ffn each, whichever etp),
 * their permuted inputs (2 h each), the router's fp32 probabilities (4 x experts per token), and the
 * shared experts as a dense MLP. Megatron-LM requires sp with MoE and tp > 1, so all of it is / t. */
static double moe_layer_activation_bytes(const modelcfg *m, const traincfg *t)
{
    double s = (double)m->seq_len / (double)(t->cp ? t->cp : 1), b = (double)t->micro_batch, h = (double)m->hidden;
    double tp = (double)t->tp, c = m->activation == MODELCFG_SWIGLU ? 8 : 4, fe = (double)m->expert_ffn;
    double dense_mlp = c * s * b * (double)m->ffn / tp;
    double routed = modelcfg_moe_load(m) * (double)m->top_k * s * b / tp;
    double moe = routed * (c * fe + 2 * h) + 4 * (double)m->experts * s * b / tp +
                 c * s * b * (double)m->shared_experts * fe / tp;
    switch (t->recompute) {
    case TRAINCFG_RECOMPUTE_FULL: return gpumem_layer_activation_bytes(m, t);
    default: return gpumem_layer_activation_bytes(m, t) - dense_mlp + moe;
    }
}

void gpumem_stage(const modelcfg *m, const traincfg *t, uint64_t stage, gpumem *out)
{
    /* ZeRO shards over the dp x cp ranks that hold the same parameters */
    uint64_t p = t->pp, dp = traincfg_dpcp(t), tp = t->tp, v = t->virtual_stages ? t->virtual_stages : 1;
    uint64_t per_chunk = m->layers / (p * v), moe = 0, expert = 0;
    for (uint64_t c = 0; c < v; c++)
        moe += modelcfg_moe_layers_in(m, (c * p + stage) * per_chunk, per_chunk);
    uint64_t params = (m->layers / p - moe) * modelcfg_layer_params_tp(m, tp);
    if (moe) {
        uint64_t etp = t->etp ? t->etp : tp;
        params += moe * modelcfg_moe_layer_params_tp(m, tp, t->ep, etp, &expert);
        expert *= moe;
    }
    if (stage == 0)
        params += modelcfg_embedding_params_tp(m, tp);
    if (stage == p - 1)
        params += modelcfg_head_params_tp(m, tp, p);
    int fp32 = t->precision == GPUCFG_FP32 || t->precision == GPUCFG_TF32;
    double wb = fp32 ? 4 : 2, gb = (fp32 || t->main_grads == GPUCFG_FP32) ? 4 : 2, ob = fp32 ? 8 : 12;
    double P = (double)params;
    out->stage = stage;
    out->params = params;
    out->weights_bytes = P * wb / (t->zero >= 3 ? (double)dp : 1);
    out->gradients_bytes = P * gb / (t->zero >= 2 ? (double)dp : 1);
    out->optimizer_bytes = P * ob / (t->zero >= 1 ? (double)dp : 1);
    if (expert) {
        /* the routed experts' share is sharded over the expert-data-parallel group instead: tp x dp /
         * (ep x etp) ranks hold the same experts (Megatron-Core's distributed optimizer) */
        double X = (double)expert, edp = (double)(tp * dp) / (double)(t->ep * (t->etp ? t->etp : tp));
        out->weights_bytes = (P - X) * wb / (t->zero >= 3 ? (double)dp : 1) + X * wb / (t->zero >= 3 ? edp : 1);
        out->gradients_bytes = (P - X) * gb / (t->zero >= 2 ? (double)dp : 1) + X * gb / (t->zero >= 2 ? edp : 1);
        out->optimizer_bytes = (P - X) * ob / (t->zero >= 1 ? (double)dp : 1) + X * ob / (t->zero >= 1 ? edp : 1);
    }

    double s = (double)m->seq_len / (double)(t->cp ? t->cp : 1), b = (double)t->micro_batch, h = (double)m->hidden;
    double div = t->sp ? (double)tp : 1, layer = gpumem_layer_activation_bytes(m, t);
    if (moe) /* the stage's mean layer */
        layer = ((double)(m->layers / p - moe) * layer + (double)moe * moe_layer_activation_bytes(m, t)) /
                (double)(m->layers / p);
    double act = gpumem_layers_in_flight(m, t, stage) * layer;
    if (t->recompute == TRAINCFG_RECOMPUTE_FULL) {
        traincfg none = *t;
        none.recompute = TRAINCFG_RECOMPUTE_NONE;
        act += gpumem_layer_activation_bytes(m, &none);
    }
    if (stage == 0 && m->dropout) {
        /* embedding dropout mask, s b h bytes per micro-batch in flight (Korthikanti Sec. 4.3) */
        uint64_t inflight = p, n = t->global_batch / (t->micro_batch * t->dp);
        act += (double)(inflight < n ? inflight : n) * s * b * h / div;
    }
    if (stage == p - 1) {
        /* final norm input and output-layer input 4sbh, fp32 logits for the cross entropy 4sbV/t
         * (Korthikanti Sec. 4.3), for the one micro-batch whose backward starts at once */
        act += 4 * s * b * h / div + 4 * s * b * (double)modelcfg_vocab(m) / (double)tp;
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

/* modelcfg.c - model shapes: schema table, shape checks, parameter counts. */
#include "config/modelcfg.h"

#include <stddef.h>
#include <string.h>

static const char *const act_names[] = { "gelu", "swiglu", NULL };
static const char *const norm_names[] = { "layernorm", "rmsnorm", NULL };
static const char *const pos_names[] = { "learned", "rope", NULL };
static const char *const attn_names[] = { "gqa", "mla", NULL };
static const char *const aux_names[] = { "none", "aux_loss", "seq_aux_loss", "global_aux_loss", NULL };

#define M(f) offsetof(modelcfg, f)
/* Order = MODELCFG_F_* */
static const cfg_field fields[] = {
    { "name", CFG_T_STRING, M(name), 1, 1, 0, NULL, NULL, 64, NULL, "model name" },
    { "description", CFG_T_STRING, M(description), 0, 1, 0, NULL, NULL, 256, NULL, "one line" },
    { "layers", CFG_T_U64, M(layers), 1, 1, 100000, NULL, NULL, 0, NULL, "transformer layers, e.g. 32" },
    { "hidden", CFG_T_U64, M(hidden), 1, 1, 1 << 20, NULL, NULL, 0, NULL, "model (hidden) dimension, e.g. 4096" },
    { "heads", CFG_T_U64, M(heads), 1, 1, 65536, NULL, NULL, 0, NULL, "attention (query) heads, e.g. 32" },
    { "kv_heads", CFG_T_U64, M(kv_heads), 0, 1, 65536, NULL, NULL, 0, NULL,
      "key/value heads (grouped-query attention); default: heads" },
    { "ffn", CFG_T_U64, M(ffn), 0, 1, 1 << 22, NULL, NULL, 0, NULL, "MLP inner dimension; default: 4 x hidden" },
    { "activation", CFG_T_ENUM, M(activation), 0, 1, 0, act_names, NULL, 0, NULL,
      "gelu (two MLP matrices) or swiglu (three)" },
    { "vocab", CFG_T_U64, M(vocab), 1, 1, 1 << 24, NULL, NULL, 0, NULL, "vocabulary size, e.g. 32000" },
    { "seq_len", CFG_T_U64, M(seq_len), 1, 1, 1 << 24, NULL, NULL, 0, NULL, "training sequence length, e.g. 4096" },
    { "bias", CFG_T_BOOL, M(bias), 0, 1, 0, NULL, NULL, 0, NULL, "biases on linear layers and norms" },
    { "norm", CFG_T_ENUM, M(norm), 0, 1, 0, norm_names, NULL, 0, NULL, "layernorm or rmsnorm" },
    { "position", CFG_T_ENUM, M(position), 0, 1, 0, pos_names, NULL, 0, NULL,
      "learned (seq_len x hidden parameters) or rope (none)" },
    { "tied_embeddings", CFG_T_BOOL, M(tied_embeddings), 0, 1, 0, NULL, NULL, 0, NULL,
      "the output layer shares the word embedding" },
    { "dropout", CFG_T_BOOL, M(dropout), 0, 1, 0, NULL, NULL, 0, NULL,
      "attention and hidden dropout (their masks are stored activations)" },
    { "head_dim", CFG_T_U64, M(head_dim), 0, 1, 65536, NULL, NULL, 0, NULL,
      "attention head dimension; default: hidden / heads (Qwen3, GPT-OSS set their own)" },
    { "experts", CFG_T_U64, M(experts), 0, 0, 65536, NULL, NULL, 0, NULL,
      "routed experts per MoE layer (mixture of experts); 0: a dense model" },
    { "top_k", CFG_T_U64, M(top_k), 0, 1, 65536, NULL, NULL, 0, NULL, "routed experts per token, e.g. 2" },
    { "shared_experts", CFG_T_U64, M(shared_experts), 0, 0, 65536, NULL, NULL, 0, NULL,
      "always-active experts of expert_ffn each (DeepSeek-V3: 1); default 0" },
    { "expert_ffn", CFG_T_U64, M(expert_ffn), 0, 1, 1 << 22, NULL, NULL, 0, NULL,
      "inner dimension of one expert's MLP; default: ffn" },
    { "moe_first_dense", CFG_T_U64, M(moe_first_dense), 0, 0, 100000, NULL, NULL, 0, NULL,
      "the first layers are dense, e.g. 3 (DeepSeek-V3); default 0" },
    { "moe_layer_freq", CFG_T_U64, M(moe_layer_freq), 0, 1, 100000, NULL, NULL, 0, NULL,
      "every n-th layer after the dense ones is MoE; default 1 (all)" },
    { "moe_imbalance", CFG_T_DOUBLE, M(moe_imbalance), 0, 1, 1e6, NULL, NULL, 0, NULL,
      "tokens of the busiest expert over the mean; default 1 (balanced routing)" },
    { "moe_capacity_factor", CFG_T_DOUBLE, M(moe_capacity), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "expert capacity over the mean load (tokens beyond are dropped); default 0: dropless" },
    { "attention_type", CFG_T_ENUM, M(attention_type), 0, 1, 0, attn_names, NULL, 0, NULL,
      "gqa (query heads and kv_heads key/value heads; the default) or mla (multi-head latent attention, DeepSeek-V3)" },
    { "q_lora_rank", CFG_T_U64, M(q_lora_rank), 0, 0, 1 << 20, NULL, NULL, 0, NULL,
      "mla: width of the compressed query, e.g. 1536; 0: queries projected from the hidden state" },
    { "kv_lora_rank", CFG_T_U64, M(kv_lora_rank), 0, 1, 1 << 20, NULL, NULL, 0, NULL,
      "mla: width of the compressed keys and values, e.g. 512" },
    { "qk_nope_head_dim", CFG_T_U64, M(qk_nope_head_dim), 0, 1, 65536, NULL, NULL, 0, NULL,
      "mla: per-head query/key dimension without position embedding, e.g. 128" },
    { "qk_rope_head_dim", CFG_T_U64, M(qk_rope_head_dim), 0, 1, 65536, NULL, NULL, 0, NULL,
      "mla: per-head query/key dimension carrying RoPE (decoupled), e.g. 64" },
    { "v_head_dim", CFG_T_U64, M(v_head_dim), 0, 1, 65536, NULL, NULL, 0, NULL, "mla: per-head value dimension, e.g. 128" },
    { "mtp_layers", CFG_T_U64, M(mtp_layers), 0, 0, 64, NULL, NULL, 0, NULL,
      "multi-token prediction modules (DeepSeek-V3: 1; Megatron's mtp_num_layers); default 0" },
    { "window_size", CFG_T_U64, M(window_size), 0, 0, 1 << 24, NULL, NULL, 0, NULL,
      "sliding-window attention: keys before each query a windowed layer attends, e.g. 128 (GPT-OSS); default 0: none" },
    { "window_attn_skip_freq", CFG_T_U64, M(window_attn_skip_freq), 0, 0, 100000, NULL, NULL, 0, NULL,
      "with window_size: every n-th layer (1-based) keeps full attention, e.g. 2 (GPT-OSS); default 0: every layer windowed" },
    { "moe_aux_loss", CFG_T_ENUM, M(moe_aux_loss), 0, 1, 0, aux_names, NULL, 0, NULL,
      "the router's load-balancing loss (Megatron-Core's moe_router_load_balancing_type with a nonzero "
      "moe_aux_loss_coeff): none (the default), aux_loss (Qwen3), seq_aux_loss (DeepSeek-V3) or global_aux_loss; its "
      "kernels in each MoE layer's forward and backward" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static void defaults(void *obj)
{
    modelcfg *m = obj;
    memset(m, 0, sizeof *m);
    /* GPT (Megatron) conventions; LLaMA presets set every one of these. */
    m->activation = MODELCFG_GELU;
    m->norm = MODELCFG_LAYERNORM;
    m->position = MODELCFG_POS_LEARNED;
    m->bias = 1;
    m->tied_embeddings = 1;
    m->dropout = 1;
    m->moe_layer_freq = 1;
    m->moe_imbalance = 1.0;
}

const compose_kind modelcfg_kind = {
    "model", "models", fields, defaults, offsetof(modelcfg, loc), offsetof(modelcfg, ref),
    offsetof(modelcfg, source), sizeof((modelcfg *)0)->source, MODELCFG_F_HEAD_DIM, NULL,
};

static const cfgloc *where(const modelcfg *m, int f) { return m->loc[f].file[0] ? &m->loc[f] : &m->ref; }

/* The MLA keys: all four dimensions given under attention_type mla, none of them (nor kv_heads) otherwise. */
static int finish_mla(modelcfg *m, cxl_err *err)
{
    static const int mla_keys[] = { MODELCFG_F_Q_LORA, MODELCFG_F_KV_LORA, MODELCFG_F_QK_NOPE, MODELCFG_F_QK_ROPE,
                                    MODELCFG_F_V_HEAD };
    static const char *const mla_names[] = { "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                             "v_head_dim" };
    int mla = m->attention_type == MODELCFG_ATTN_MLA;
    for (size_t i = 0; i < sizeof mla_keys / sizeof mla_keys[0]; i++) {
        int given = m->loc[mla_keys[i]].file[0] != 0;
        if (!mla && given)
            return cfgloc_errf(err, &m->loc[mla_keys[i]], "model.%s: a multi-head latent attention key, but "
                               "attention_type is gqa; set attention_type: mla or remove the key", mla_names[i]);
        if (mla && !given && i > 0)
            return cfgloc_errf(err, where(m, MODELCFG_F_ATTENTION_TYPE), "model.%s: missing; attention_type mla "
                               "needs kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim (DeepSeek-V3: "
                               "512, 128, 64, 128)", mla_names[i]);
    }
    if (!mla)
        return 0;
    if (m->loc[MODELCFG_F_KV_HEADS].file[0] && m->kv_heads != m->heads)
        return cfgloc_errf(err, &m->loc[MODELCFG_F_KV_HEADS], "model.kv_heads: %llu, but multi-head latent attention "
                           "up-projects keys and values for every one of the %llu heads; remove kv_heads",
                           (unsigned long long)m->kv_heads, (unsigned long long)m->heads);
    if (m->loc[MODELCFG_F_HEAD_DIM].file[0] && m->head_dim != m->v_head_dim)
        return cfgloc_errf(err, &m->loc[MODELCFG_F_HEAD_DIM], "model.head_dim: %llu, but under attention_type mla "
                           "the head dimension is v_head_dim %llu; remove head_dim",
                           (unsigned long long)m->head_dim, (unsigned long long)m->v_head_dim);
    m->kv_heads = m->heads;
    m->head_dim = m->v_head_dim;
    return 0;
}

int modelcfg_finish(modelcfg *m, cxl_err *err)
{
    int rc = finish_mla(m, err);
    if (rc)
        return rc;
    if (!m->kv_heads)
        m->kv_heads = m->heads;
    if (!m->ffn)
        m->ffn = 4 * m->hidden;
    if (!m->head_dim)
        m->head_dim = m->hidden / m->heads;
    if (m->window_attn_skip_freq && !m->window_size)
        return cfgloc_errf(err, &m->loc[MODELCFG_F_WINDOW_SKIP],
                           "model.window_attn_skip_freq: %llu, but there is no sliding window; set window_size "
                           "(e.g. 128) or leave window_attn_skip_freq out", (unsigned long long)m->window_attn_skip_freq);
    if (m->experts) {
        if (!m->expert_ffn)
            m->expert_ffn = m->ffn;
        if (!m->loc[MODELCFG_F_TOP_K].file[0])
            return cfgloc_errf(err, where(m, MODELCFG_F_EXPERTS),
                               "model.top_k: missing; a mixture of experts (experts %llu) needs the routed experts "
                               "per token, 1 to %llu", (unsigned long long)m->experts, (unsigned long long)m->experts);
        if (m->top_k > m->experts)
            return cfgloc_errf(err, where(m, MODELCFG_F_TOP_K),
                               "model.top_k: %llu exceeds the %llu experts; valid: 1 to %llu",
                               (unsigned long long)m->top_k, (unsigned long long)m->experts,
                               (unsigned long long)m->experts);
        if (m->moe_first_dense >= m->layers)
            return cfgloc_errf(err, where(m, MODELCFG_F_MOE_FIRST_DENSE),
                               "model.moe_first_dense: %llu leaves no MoE layer among the %llu layers; valid: 0 to %llu",
                               (unsigned long long)m->moe_first_dense, (unsigned long long)m->layers,
                               (unsigned long long)(m->layers - 1));
        if (m->moe_capacity > 0 && m->moe_capacity < 1)
            return cfgloc_errf(err, where(m, MODELCFG_F_MOE_CAPACITY),
                               "model.moe_capacity_factor: %g drops tokens even under balanced routing; use 0 "
                               "(dropless) or at least 1", m->moe_capacity);
    } else {
        static const int moe_keys[] = { MODELCFG_F_TOP_K, MODELCFG_F_SHARED_EXPERTS, MODELCFG_F_EXPERT_FFN,
                                        MODELCFG_F_MOE_FIRST_DENSE, MODELCFG_F_MOE_FREQ, MODELCFG_F_MOE_IMBALANCE,
                                        MODELCFG_F_MOE_CAPACITY };
        for (size_t i = 0; i < sizeof moe_keys / sizeof moe_keys[0]; i++)
            if (m->loc[moe_keys[i]].file[0])
                return cfgloc_errf(err, &m->loc[moe_keys[i]],
                                   "model.%s: a mixture-of-experts key in a dense model (experts is 0); set "
                                   "experts, e.g. 8, or remove the key", fields[moe_keys[i]].key);
    }
    if (!m->loc[MODELCFG_F_HEAD_DIM].file[0] && !modelcfg_is_mla(m) && m->hidden % m->heads)
        return cfgloc_errf(err, where(m, MODELCFG_F_HEADS),
                           "model.heads: %llu does not divide hidden %llu (the head dimension must be whole; or give head_dim)",
                           (unsigned long long)m->heads, (unsigned long long)m->hidden);
    if (m->kv_heads > m->heads || m->heads % m->kv_heads)
        return cfgloc_errf(err, where(m, MODELCFG_F_KV_HEADS),
                           "model.kv_heads: %llu must divide heads %llu (each KV head serves a whole group of "
                           "query heads)", (unsigned long long)m->kv_heads, (unsigned long long)m->heads);
    return 0;
}

int modelcfg_load(const char *name_or_path, modelcfg *out, cxl_err *err)
{
    int rc = compose_load(&modelcfg_kind, name_or_path, out, err);
    return rc ? rc : modelcfg_finish(out, err);
}

/* ---- parameter counts ---- */

static uint64_t kv_dim(const modelcfg *m) { return m->kv_heads * m->head_dim; }
static uint64_t q_dim(const modelcfg *m) { return m->heads * m->head_dim; }
static uint64_t norm_params(const modelcfg *m) { return m->norm == MODELCFG_LAYERNORM ? 2 * m->hidden : m->hidden; }
static uint64_t mlp_mats(const modelcfg *m) { return m->activation == MODELCFG_SWIGLU ? 3 : 2; }

int modelcfg_is_mla(const modelcfg *m) { return m->attention_type == MODELCFG_ATTN_MLA; }

uint64_t modelcfg_qk_head_dim(const modelcfg *m)
{
    return modelcfg_is_mla(m) ? m->qk_nope_head_dim + m->qk_rope_head_dim : m->head_dim;
}

/* A norm over n elements: LayerNorm weight and bias, RMSNorm weight. */
static uint64_t norm_of(const modelcfg *m, uint64_t n) { return m->norm == MODELCFG_LAYERNORM ? 2 * n : n; }

/* The attention's parameters split by tp (Q, K, V weights and biases, output projection weights), and
 * those every rank holds (the two norms, the output projection's bias). MLA (Megatron-Core MLASelfAttention,
 * megatron/core/transformer/multi_latent_attention.py): split by tp the column-parallel up-projections
 * (q_lora_rank x heads (nope + rope), or hidden x that without query compression; kv_lora_rank x heads
 * (nope + v)) and the row-parallel output projection (heads v x hidden); on every rank the down-projections
 * (TELinear, parallel_mode "duplicated": hidden x q_lora_rank, hidden x (kv_lora_rank + rope)) and the two
 * latent norms. DeepSeek-V3: 37.7M + 16.8M + 117.4M split, 11.0M + 4.1M + 2,048 whole = 187.1M. */
static uint64_t attn_split(const modelcfg *m)
{
    uint64_t h = m->hidden, a = m->heads;
    if (modelcfg_is_mla(m)) {
        uint64_t qk = modelcfg_qk_head_dim(m), q_in = m->q_lora_rank ? m->q_lora_rank : h;
        return q_in * a * qk + m->kv_lora_rank * a * (m->qk_nope_head_dim + m->v_head_dim) + a * m->v_head_dim * h;
    }
    uint64_t qkv_out = q_dim(m) + 2 * kv_dim(m);
    return h * qkv_out + q_dim(m) * h + (m->bias ? qkv_out : 0);
}
static uint64_t attn_whole(const modelcfg *m)
{
    uint64_t mla = 0;
    if (modelcfg_is_mla(m))
        mla = m->hidden * (m->q_lora_rank + m->kv_lora_rank + m->qk_rope_head_dim) +
              (m->q_lora_rank ? norm_of(m, m->q_lora_rank) : 0) + norm_of(m, m->kv_lora_rank);
    return 2 * norm_params(m) + (m->bias ? m->hidden : 0) + mla;
}

uint64_t modelcfg_mtp_params_tp(const modelcfg *m, uint64_t tp, uint64_t pp_stages)
{
    if (!m->mtp_layers)
        return 0;
    /* Megatron-Core MultiTokenPredictionLayer (megatron/core/transformer/multi_token_prediction.py): enorm,
     * hnorm, eh_proj (column-parallel, 2 hidden -> hidden), final_layernorm; the output layer is the model's */
    uint64_t per = 2 * m->hidden * m->hidden / tp + 3 * norm_params(m);
    return m->mtp_layers * per + (pp_stages > 1 ? modelcfg_vocab(m) * m->hidden / tp : 0);
}

/* One MLP of inner size f: its matrices and, with biases, the input biases and the output bias. */
static uint64_t mlp_params(const modelcfg *m, uint64_t f)
{
    uint64_t h = m->hidden, in_mats = mlp_mats(m) - 1;
    return in_mats * h * f + f * h + (m->bias ? in_mats * f + h : 0);
}

int modelcfg_is_moe(const modelcfg *m) { return m->experts > 0; }

int modelcfg_layer_is_moe(const modelcfg *m, uint64_t i)
{
    return m->experts > 0 && i >= m->moe_first_dense && (i - m->moe_first_dense) % m->moe_layer_freq == 0;
}

int modelcfg_layer_windowed(const modelcfg *m, uint64_t i)
{
    return m->window_size > 0 && (m->window_attn_skip_freq == 0 || (i + 1) % m->window_attn_skip_freq != 0);
}

uint64_t modelcfg_moe_layers_in(const modelcfg *m, uint64_t first, uint64_t n)
{
    uint64_t c = 0;
    for (uint64_t i = first; i < first + n; i++)
        c += (uint64_t)modelcfg_layer_is_moe(m, i);
    return c;
}

double modelcfg_moe_load(const modelcfg *m)
{
    return m->moe_capacity > 0 && m->moe_capacity < m->moe_imbalance ? m->moe_capacity : m->moe_imbalance;
}

uint64_t modelcfg_moe_layer_params_tp(const modelcfg *m, uint64_t tp, uint64_t ep, uint64_t etp,
                                      uint64_t *expert_part)
{
    uint64_t routed = m->experts / ep * (mlp_params(m, m->expert_ffn) - (m->bias ? m->hidden : 0)) / etp +
                      (m->bias ? m->experts / ep * m->hidden : 0);
    uint64_t shared = m->shared_experts * mlp_params(m, m->expert_ffn);
    if (expert_part)
        *expert_part = routed;
    return attn_split(m) / tp + attn_whole(m) + m->hidden * m->experts + shared / tp + routed;
}

uint64_t modelcfg_moe_layer_params(const modelcfg *m) { return modelcfg_moe_layer_params_tp(m, 1, 1, 1, NULL); }

uint64_t modelcfg_layer_tp_whole_params(const modelcfg *m, int moe)
{
    return attn_whole(m) + (moe ? m->hidden * m->experts : (m->bias ? m->hidden : 0));
}

uint64_t modelcfg_active_params(const modelcfg *m)
{
    uint64_t moe = modelcfg_moe_layers_in(m, 0, m->layers), dense = m->layers - moe;
    uint64_t moe_active = attn_split(m) + attn_whole(m) + m->hidden * m->experts +
                          (m->top_k + m->shared_experts) * mlp_params(m, m->expert_ffn);
    return dense * modelcfg_layer_params(m) + moe * moe_active + modelcfg_embedding_params(m) +
           modelcfg_head_params(m);
}

/* Column-parallel (split by tp): Q, K, V weights and biases, MLP input weights and biases. Row-parallel
 * (split by tp): attention output and MLP output weights. Whole on every rank: their biases, the norms. */
uint64_t modelcfg_layer_params_tp(const modelcfg *m, uint64_t tp)
{
    uint64_t h = m->hidden, f = m->ffn, in_mats = mlp_mats(m) - 1;
    uint64_t split = in_mats * h * f + f * h + (m->bias ? in_mats * f : 0);
    return (split + attn_split(m)) / tp + attn_whole(m) + (m->bias ? h : 0);
}

uint64_t modelcfg_layer_params(const modelcfg *m) { return modelcfg_layer_params_tp(m, 1); }

uint64_t modelcfg_vocab(const modelcfg *m) { return m->vocab_padded ? m->vocab_padded : m->vocab; }

uint64_t modelcfg_embedding_params_tp(const modelcfg *m, uint64_t tp)
{
    return modelcfg_vocab(m) * m->hidden / tp + (m->position == MODELCFG_POS_LEARNED ? m->seq_len * m->hidden : 0);
}

uint64_t modelcfg_embedding_params(const modelcfg *m) { return modelcfg_embedding_params_tp(m, 1); }

uint64_t modelcfg_head_params_tp(const modelcfg *m, uint64_t tp, uint64_t pp_stages)
{
    uint64_t out = (!m->tied_embeddings || pp_stages > 1) ? modelcfg_vocab(m) * m->hidden / tp : 0;
    return norm_params(m) + out;
}

uint64_t modelcfg_head_params(const modelcfg *m) { return modelcfg_head_params_tp(m, 1, 1); }

uint64_t modelcfg_total_params(const modelcfg *m)
{
    uint64_t moe = modelcfg_moe_layers_in(m, 0, m->layers);
    return (m->layers - moe) * modelcfg_layer_params(m) + moe * modelcfg_moe_layer_params(m) +
           modelcfg_embedding_params(m) + modelcfg_head_params(m);
}

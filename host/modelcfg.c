/* modelcfg.c - model shapes: schema table, shape checks, parameter counts. */
#include "modelcfg.h"

#include <stddef.h>
#include <string.h>

static const char *const act_names[] = { "gelu", "swiglu", NULL };
static const char *const norm_names[] = { "layernorm", "rmsnorm", NULL };
static const char *const pos_names[] = { "learned", "rope", NULL };

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
}

const compose_kind modelcfg_kind = {
    "model", "models", fields, defaults, offsetof(modelcfg, loc), offsetof(modelcfg, ref),
    offsetof(modelcfg, source), sizeof((modelcfg *)0)->source,
};

static const cfgloc *where(const modelcfg *m, int f) { return m->loc[f].file[0] ? &m->loc[f] : &m->ref; }

int modelcfg_finish(modelcfg *m, cxl_err *err)
{
    if (!m->kv_heads)
        m->kv_heads = m->heads;
    if (!m->ffn)
        m->ffn = 4 * m->hidden;
    if (m->hidden % m->heads)
        return cfgloc_errf(err, where(m, MODELCFG_F_HEADS),
                           "model.heads: %llu does not divide hidden %llu (the head dimension must be whole)",
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

static uint64_t kv_dim(const modelcfg *m) { return m->kv_heads * (m->hidden / m->heads); }
static uint64_t norm_params(const modelcfg *m) { return m->norm == MODELCFG_LAYERNORM ? 2 * m->hidden : m->hidden; }
static uint64_t mlp_mats(const modelcfg *m) { return m->activation == MODELCFG_SWIGLU ? 3 : 2; }

/* Column-parallel (split by tp): Q, K, V weights and biases, MLP input weights and biases. Row-parallel
 * (split by tp): attention output and MLP output weights. Whole on every rank: their biases, the norms. */
uint64_t modelcfg_layer_params_tp(const modelcfg *m, uint64_t tp)
{
    uint64_t h = m->hidden, qkv_out = h + 2 * kv_dim(m), f = m->ffn, in_mats = mlp_mats(m) - 1;
    uint64_t split = h * qkv_out + h * h + in_mats * h * f + f * h;
    if (m->bias)
        split += qkv_out + in_mats * f;
    uint64_t whole = 2 * norm_params(m) + (m->bias ? 2 * h : 0);
    return split / tp + whole;
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
    return m->layers * modelcfg_layer_params(m) + modelcfg_embedding_params(m) + modelcfg_head_params(m);
}

/* modelcfg.h - a transformer model's shape (GPT-style or LLaMA-style), as written in configs/models/,
 * and the parameter counts that follow from it.
 *
 * modelcfg_load() takes a preset name or a file; experiments reference models through compose.h with
 * modelcfg_kind. Loading checks the shape itself (hidden divisible by heads, heads by kv_heads); checks
 * that involve parallelism live in parallel.h. The YAML schema is docs/training-config.md.
 *
 * Parameter counts are exact integers for the structure described (Megatron-LM layout): per layer
 * Q, K, V and output projections (K and V with kv_heads heads of hidden/heads each), the MLP (two
 * matrices for GELU, three for SwiGLU), two norms (LayerNorm: weight and bias; RMSNorm: weight); biases
 * on linear layers when `bias`; word embeddings vocab x hidden, learned position embeddings seq_len x
 * hidden when `position: learned`, a final norm, and an output layer of its own unless tied.
 */
#ifndef CXLSIM_MODELCFG_H
#define CXLSIM_MODELCFG_H

#include <stdint.h>

#include "config/compose.h"
#include "util/err.h"

enum modelcfg_act { MODELCFG_GELU = 0, MODELCFG_SWIGLU = 1 };
enum modelcfg_aux { MODELCFG_AUX_NONE = 0, MODELCFG_AUX_LOSS = 1, MODELCFG_AUX_SEQ = 2, MODELCFG_AUX_GLOBAL = 3 };
enum modelcfg_norm { MODELCFG_LAYERNORM = 0, MODELCFG_RMSNORM = 1 };
enum modelcfg_pos { MODELCFG_POS_LEARNED = 0, MODELCFG_POS_ROPE = 1 };

/* Field indices into loc[] (the order of the table in modelcfg.c). */
enum { MODELCFG_F_NAME, MODELCFG_F_DESCRIPTION, MODELCFG_F_LAYERS, MODELCFG_F_HIDDEN, MODELCFG_F_HEADS,
       MODELCFG_F_KV_HEADS, MODELCFG_F_FFN, MODELCFG_F_ACTIVATION, MODELCFG_F_VOCAB, MODELCFG_F_SEQ_LEN,
       MODELCFG_F_BIAS, MODELCFG_F_NORM, MODELCFG_F_POSITION, MODELCFG_F_TIED, MODELCFG_F_DROPOUT,
       MODELCFG_F_HEAD_DIM, MODELCFG_F_EXPERTS, MODELCFG_F_TOP_K, MODELCFG_F_SHARED_EXPERTS, MODELCFG_F_EXPERT_FFN,
       MODELCFG_F_MOE_FIRST_DENSE, MODELCFG_F_MOE_FREQ, MODELCFG_F_MOE_IMBALANCE, MODELCFG_F_MOE_CAPACITY,
       MODELCFG_F_ATTENTION_TYPE, MODELCFG_F_Q_LORA, MODELCFG_F_KV_LORA, MODELCFG_F_QK_NOPE, MODELCFG_F_QK_ROPE,
       MODELCFG_F_V_HEAD, MODELCFG_F_MTP, MODELCFG_F_WINDOW, MODELCFG_F_WINDOW_SKIP, MODELCFG_F_MOE_AUX_LOSS,
       MODELCFG_NFIELDS };

/* The attention's projections: grouped-query (query heads, kv_heads key/value heads of head_dim; multi-head
 * when kv_heads = heads) or multi-head latent attention (DeepSeek-V2/V3; the fields below). */
enum modelcfg_attn { MODELCFG_ATTN_GQA = 0, MODELCFG_ATTN_MLA = 1 };

typedef struct modelcfg {
    char name[64];
    char description[256];
    char source[512];
    uint64_t layers, hidden, heads;
    uint64_t kv_heads;          /* 0 in the file's absence: = heads */
    uint64_t ffn;               /* 0 in the file's absence: = 4 x hidden */
    int activation;             /* enum modelcfg_act */
    uint64_t vocab, seq_len;
    int bias, norm, position, tied_embeddings, dropout;
    uint64_t head_dim;          /* 0 in the file's absence: = hidden / heads */
    /* mixture of experts (experts 0: a dense model; the keys below are then ignored) */
    uint64_t experts;           /* routed experts per MoE layer */
    uint64_t top_k;             /* routed experts per token */
    uint64_t shared_experts;    /* always-active experts of expert_ffn each (DeepSeek-style); 0 = none */
    uint64_t expert_ffn;        /* inner dimension of one expert's MLP (same activation as the dense MLP) */
    uint64_t moe_first_dense;   /* the first layers are dense (DeepSeek-V3: 3) */
    uint64_t moe_layer_freq;    /* after them, every moe_layer_freq-th layer is MoE (1: all) */
    double moe_imbalance;       /* tokens of the busiest expert over the mean; 1 = balanced routing */
    double moe_capacity;        /* capacity factor (tokens beyond it are dropped); 0 = dropless */
    /* multi-head latent attention (attention_type mla; DeepSeek-V3 Sec. 2.1.1, arXiv 2412.19437; Megatron-Core
     * MLASelfAttention): the query compressed to q_lora_rank (0: projected from the hidden state directly),
     * keys and values to kv_lora_rank, each latent RMS-normed; heads of qk_nope_head_dim + qk_rope_head_dim
     * for queries and keys (the rope part of the key one per token, shared by the heads) and v_head_dim for
     * values. head_dim is v_head_dim and kv_heads is heads under MLA. */
    int attention_type;         /* enum modelcfg_attn */
    uint64_t q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
    /* multi-token prediction modules (DeepSeek-V3 Sec. 2.2; Megatron-Core mtp_num_layers): each one more
     * transformer layer (of the model's last layer's kind), a projection of 2 hidden to hidden, three norms
     * and one more output layer and loss, run after the last layer on the stage holding the loss */
    uint64_t mtp_layers;
    /* sliding-window attention (Megatron-Core window_size (window_size, 0), is_layer_window_attention in
     * megatron/core/transformer/utils.py): a windowed layer's query i attends keys i - window_size .. i;
     * with window_attn_skip_freq N every N-th layer (1-based) keeps full causal attention (0: none does).
     * window_size 0: no window */
    uint64_t window_size, window_attn_skip_freq;
    /* the router's load-balancing loss (Megatron-Core TopKRouter._apply_aux_loss, _apply_seq_aux_loss,
     * _apply_global_aux_loss; enabled by moe_router_load_balancing_type with moe_aux_loss_coeff > 0) */
    int moe_aux_loss;           /* enum modelcfg_aux */
    uint64_t vocab_padded;      /* derived, not a key: vocab padded for the training (expcfg); 0 = vocab */
    cfgloc loc[MODELCFG_NFIELDS];
    cfgloc ref;                 /* where the experiment named the model */
} modelcfg;

extern const compose_kind modelcfg_kind;

/* The vocabulary the model computes with: vocab_padded when set (Megatron pads the embedding table to a
 * multiple of make_vocab_size_divisible_by x tp, traincfg.vocab_divisible_by), else vocab. */
uint64_t modelcfg_vocab(const modelcfg *m);

/* Load a model preset or file and check its shape. */
int modelcfg_load(const char *name_or_path, modelcfg *out, cxl_err *err);
/* Fill defaults that depend on other fields and check the shape; called by the loaders. */
int modelcfg_finish(modelcfg *m, cxl_err *err);

/* Parameters of one transformer layer, of the embedding stage (word + position embeddings), of the
 * head stage (final norm + output layer; 0 for the output layer when tied), and of the whole model
 * (a tied output layer counted once). */
uint64_t modelcfg_layer_params(const modelcfg *m);
uint64_t modelcfg_embedding_params(const modelcfg *m);
uint64_t modelcfg_head_params(const modelcfg *m);
uint64_t modelcfg_total_params(const modelcfg *m);

/* Mixture of experts: 1 when the model has routed experts; whether layer i (0-based) is an MoE layer
 * (i >= moe_first_dense and (i - moe_first_dense) a multiple of moe_layer_freq); how many of layers
 * [first, first + n) are. */
int modelcfg_is_moe(const modelcfg *m);
int modelcfg_layer_is_moe(const modelcfg *m, uint64_t i);
uint64_t modelcfg_moe_layers_in(const modelcfg *m, uint64_t first, uint64_t n);
/* Tokens of the busiest expert over the mean: moe_imbalance, capped by the capacity factor when set. */
double modelcfg_moe_load(const modelcfg *m);
/* Parameters of one MoE layer: its attention and norms as a dense layer's, the router (hidden x experts),
 * the routed experts (experts x MLP of expert_ffn) and the shared experts. Per GPU: attention and shared
 * experts split by tp (Megatron's shared-expert MLP is tensor-parallel), the router whole, and the routed
 * experts split by ep (experts per rank) and etp (each expert's MLP), the second part returned apart in
 * *expert_part (may be NULL) because ZeRO shards it over the expert-data-parallel group. */
uint64_t modelcfg_moe_layer_params(const modelcfg *m);
uint64_t modelcfg_moe_layer_params_tp(const modelcfg *m, uint64_t tp, uint64_t ep, uint64_t etp,
                                      uint64_t *expert_part);
/* A layer's parameters every tensor-parallel rank holds whole (the norms, the row-parallel biases, MLA's
 * down-projections and latent norms; an MoE layer's router): with sequence parallelism their gradients
 * are partial sums over the rank's tokens (Megatron-Core marks them sequence_parallel). */
uint64_t modelcfg_layer_tp_whole_params(const modelcfg *m, int moe);
/* Parameters a token activates: every dense layer, the attention, router, top_k routed and the shared
 * experts of every MoE layer, the embeddings and the head (for MFU-style reports of MoE models). */
uint64_t modelcfg_active_params(const modelcfg *m);

/* 1 when the model uses multi-head latent attention */
int modelcfg_is_mla(const modelcfg *m);
/* Whether layer i (0-based) attends over a sliding window (window_size > 0 and, with window_attn_skip_freq
 * N > 0, (i + 1) % N != 0) */
int modelcfg_layer_windowed(const modelcfg *m, uint64_t i);

/* The query/key head dimension: qk_nope_head_dim + qk_rope_head_dim under MLA, else head_dim. */
uint64_t modelcfg_qk_head_dim(const modelcfg *m);
/* The multi-token prediction modules' parameters besides their transformer layers (counted as layers):
 * per module the projection (2 hidden x hidden, split by tp) and three norms; with more than one pipeline
 * stage the stage holding them keeps a copy of the word embedding (vocabulary-parallel), as Megatron-Core's
 * MTP embedding on the last stage. 0 without MTP. */
uint64_t modelcfg_mtp_params_tp(const modelcfg *m, uint64_t tp, uint64_t pp_stages);

/* Per tensor-parallel rank (Megatron layout: column-parallel Q/K/V and MLP-in with their biases, row-
 * parallel output and MLP-out whose biases stay whole, norms replicated; vocabulary-parallel embedding
 * and output layer). tp must divide heads, kv_heads and ffn. */
uint64_t modelcfg_layer_params_tp(const modelcfg *m, uint64_t tp);
uint64_t modelcfg_embedding_params_tp(const modelcfg *m, uint64_t tp);
/* Final norm + output layer on the last pipeline stage; with tied embeddings and more than one stage
 * Megatron keeps a copy of the embedding there, so it counts (pp_stages > 1). */
uint64_t modelcfg_head_params_tp(const modelcfg *m, uint64_t tp, uint64_t pp_stages);

#endif

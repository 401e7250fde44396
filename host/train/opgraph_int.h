/* opgraph_int.h - what opgraph.c shares with the files that build parts of its graph (opgraph_mla.c:
 * multi-head latent attention and the multi-token prediction modules; opgraph_moe.c: the expert half of an
 * MoE layer; opgraph_ops.c: the single ops the
 * engine adds outside the templates). Not a public interface: the builder's state, one layer's shapes,
 * and the kernel and collective helpers (opgraph.c states each kernel's bytes beside it). */
#ifndef CXLSIM_OPGRAPH_INT_H
#define CXLSIM_OPGRAPH_INT_H

#include <stdint.h>

#include "config/modelcfg.h"
#include "train/opgraph.h"
#include "util/err.h"

typedef struct bld {
    opgraph *g;
    int dtype;
    double act; /* bytes per activation element */
    cxl_err *err;
    int failed;
    int mx; /* FP8 with MXFP8 block scaling (traincfg_mxfp8) */
    uint32_t gg_streams; /* a grouped GEMM's CUDA streams (training.grouped_gemm_streams; 0, 1: one) */
    uint8_t node; /* enum opgraph_node of the entries pushed now (opgraph_moe.c sets it) */
    uint8_t experts_hook; /* the next entry pushed is the routed experts' first (opgraph_entry.experts_hook) */
} bld;

/* Shapes of one micro-batch's layer on one GPU (notation at the top of this file). */
typedef struct lshape {
    uint64_t tp, s, h, dh, kv, f, T, Eh, at, qkv_n, fin, fo, bah, act_bytes;
    int sp, drop, rope, swiglu, ar, flash;
    uint64_t cp, skv;   /* context parallelism: s is this rank's s / cp tokens, skv the whole sequence's keys */
    uint64_t dqk;       /* query/key head dimension (dh, or MLA's nope + rope); dh is the value's */
    /* multi-head latent attention (mla 1): q_lora_rank (0: no query compression), kv_lora_rank, the
     * per-head nope and rope dimensions, and Ts, the tokens the duplicated down-projections run on (T / tp
     * with sequence parallelism, else T) */
    int mla;
    uint64_t qr, kvr, dn, dr, Ts;
    int tpo;            /* training.tp_grad_comm_overlap: column-parallel backward collectives beside the GEMMs */
    uint64_t window;    /* the windowed layers' templates: model.window_size (keys before each query); 0 otherwise */
    int ub;             /* training.tp_comm_overlap: Transformer Engine's userbuffers (ring exchanges, bulk SMs) */
    const uint64_t *ub_sms; /* with ub: traincfg.ub_sms, in enum traincfg_ub_bulk order */
    int graph_attn;     /* training.cuda_graph_attn: the attention block's entries replay in a CUDA graph */
} lshape;

/* Append op d to the graph (deduplicated by name and shape): its index, or -1 with B->failed set */
int opg_add_op(bld *B, const op_desc *d);
/* A GEMM of `batch` products (m x k).(k x n) in the builder's dtype */
void opg_gemm(bld *B, int tpl, const char *name, uint64_t batch, uint64_t m, uint64_t n, uint64_t k);
/* A memory-bound kernel over `elems` elements moving bytes_per_elem each (at 16-bit activations) */
void opg_mem(bld *B, int tpl, const char *name, uint64_t elems, double bytes_per_elem);
/* FP8 training: the quantization of a GEMM operand of `elems` elements ("mxfp8.quant.<what>"); nothing else */
void opg_fp8_quant(bld *B, int tpl, const char *name, uint64_t elems);
/* A blocking tensor-parallel collective (enum opgraph_coll) of `bytes`; nothing with tp 1 */
void opg_tpc(bld *B, int tpl, int coll, uint64_t bytes, const char *name, uint64_t tp);
/* A GEMM launched as `launches` kernels (0: one), as opg_gemm */
void opg_gemm_n(bld *B, int tpl, const char *name, uint64_t batch, uint64_t m, uint64_t n, uint64_t k,
                uint32_t launches);
/* A tensor-parallel collective started beside the compute stream, and the stream's wait for it */
void opg_tpc_async(bld *B, int tpl, int coll, uint64_t bytes, const char *name, uint64_t tp);
void opg_tp_wait(bld *B, int tpl, uint64_t tp);
/* opgraph_tp.c, training.tp_comm_overlap: a GEMM of x->T rows (n, k) fed by an all-gather of `bytes` in
 * Transformer Engine's ring exchange (`last` names its last chunk), and one whose output is reduce-scattered
 * (`first` names its first chunk, `reduce` TE's reduction of the received partial sums) */
void opg_ring_ag(bld *B, int tpl, const lshape *x, const char *name, const char *last, uint64_t n, uint64_t k,
                 uint64_t bytes, const char *agname);
void opg_ring_rs(bld *B, int tpl, const lshape *x, const char *first, const char *name, uint64_t n, uint64_t k,
                 uint64_t bytes, const char *rsname, const char *reduce);
/* The attention core, forward or backward (flash, with cp > 1 in its ring exchange, over x->window in a
 * windowed layer; or unfused, whose score matrix stays whole: opgraph_attn.c) */
void opg_attn_core(bld *B, int tpl, const lshape *x, int bwd);
/* Append entry e to template tpl (its wgrad flag set from its name) */
void opg_push(bld *B, int tpl, opgraph_entry e);

/* A column-parallel layer's backward after its output gradient (opgraph_tp.c, with training.tp_grad_comm_overlap
 * as Megatron-LM and Transformer Engine overlap it): the names of its input-gradient GEMM, weight-gradient
 * GEMM, sp all-gather of the input for the weight gradient and the input gradient's reduction; in_bytes the
 * input's bytes (all T tokens); bd and bw the two GEMMs' m, n, k. */
typedef struct col_bwd_names {
    const char *bd, *bw, *ag, *red;
} col_bwd_names;
void opg_col_bwd(bld *B, int L, const lshape *x, const col_bwd_names *nm, uint64_t in_bytes, const uint64_t bd[3],
                 const uint64_t bw[3]);

/* The names of a head's kernels and collectives: the model's, or an MTP module's */
typedef struct head_names {
    const char *lnf, *ag, *logits, *xent, *ar_xent, *xent_b, *logits_bd, *logits_bw, *rs_g, *ar_g, *lnf_b;
} head_names;
/* A head of V (padded) logits: its forward appended to HEAD_FWD, its backward to HEAD_BWD (opgraph.c) */
void opg_head(bld *B, const lshape *x, uint64_t V, const head_names *nm);

/* opgraph_mla.c: MLA's attention half of a layer, its up-projections alone (what recompute_mla_up_proj
 * reruns; sfx_ag names the all-gather), and the MTP modules' own kernels appended to the head's templates */
void opg_mla_fwd(bld *B, int L, const lshape *x);
void opg_mla_bwd(bld *B, int L, const lshape *x);
void opg_mla_up(bld *B, int L, const lshape *x, const char *sfx_ag);
void opg_mtp_tpls(bld *B, const modelcfg *m, const lshape *x);

/* The expert half of an MoE layer (after the attention half). Per GPU: tl = T / tp tokens (sp; tp 1: T),
 * each sent to top_k experts; the busiest GPU receives load x tl x top_k of them (x etp after the ETP
 * all-gather) over its experts / ep local experts. */
typedef struct moe_shape {
    uint64_t tl, ep, etp, le, me, fin_e, fo_e, routed, a2a_bytes, etp_bytes, nexp, sh_fin, sh_fo, h;
    uint64_t probs_bytes; /* the all-to-all dispatcher's permuted probabilities, 4 B per routed copy */
    int bias;             /* the experts' linear layers have biases (model.bias: GPT-OSS) */
    int aux;              /* enum modelcfg_aux: the router's load-balancing loss */
    int force_balance;    /* training.moe_force_load_balancing: RandomSTE's random logits */
    uint64_t py_router_ps, py_dispatch_ps, py_experts_ps; /* the framework's Python (OPGRAPH_HOST_PY), 0: none */
    /* moe_dispatcher hybridep (Megatron-Core token_dispatcher.py _HybridEPManager, fused_a2a.py
     * hybrid_ep_dispatch / hybrid_ep_combine: DeepEP's hybrid-ep HybridEPBuffer dispatch_with_permute and
     * combine_with_unpermute, csrc/hybrid_ep/hybrid_ep.cu and executor/executor.cu, branch hybrid-ep of
     * 2025-11-18): the dispatch kernel reads the tokens in token order through its sparse-to-dense map and
     * the combine kernel sums the returned copies with the router's weights back into token order, so
     * permutation 1 and its inverse (moe.permute, moe.unpermute) are no kernels of their own; the received
     * tokens are still permuted by expert out of the dispatch buffer (dispatch_postprocess's permute kernel)
     * and back into it before the combine (combine_preprocess), as sort_chunks prices, one local expert or more */
    int fused_perm;
} moe_shape;

/* opgraph_moe.c: the expert half's shapes on one GPU (moe_shape), its forward and its backward */
void opg_moe_shape(const modelcfg *m, const traincfg *t, const lshape *x, double act, moe_shape *e);
void opg_moe_fwd(bld *B, int L, const lshape *x, const moe_shape *e);
void opg_moe_bwd(bld *B, int L, const lshape *x, const moe_shape *e);
/* A memory-bound kernel launched as `launches` kernels (0: one), as opg_mem */
void opg_mem_n(bld *B, int tpl, const char *name, uint64_t elems, double bytes_per_elem, uint32_t launches);
/* A GEMM whose `launches` calls run over `streams` CUDA streams (op.h; 0: one), as opg_gemm_n */
void opg_gemm_ns(bld *B, int tpl, const char *name, uint64_t batch, uint64_t m, uint64_t n, uint64_t k,
                 uint32_t launches, uint32_t streams);
/* FP8 training: the quantization of `elems` elements as `tensors` tensors, each with its own kernels */
void opg_fp8_quant_n(bld *B, int tpl, const char *name, uint64_t elems, uint64_t tensors);
/* The shared experts' tensor-parallel MLP (DeepSeek-style), forward and backward */
void opg_shared_mlp_fwd(bld *B, int L, const lshape *x, uint64_t fin, uint64_t fo);
void opg_shared_mlp_bwd(bld *B, int L, const lshape *x, uint64_t fin, uint64_t fo);

#endif

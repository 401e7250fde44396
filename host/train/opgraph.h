/* opgraph.h - the work of one training iteration on one GPU, as templates the engine (train.h) expands:
 * the forward and backward of one transformer layer, what recomputation redoes before a layer's
 * backward, the embedding (first pipeline stage) and the head (final norm, logits, cross entropy; last
 * stage), and the optimizer step. Each template is an ordered list of entries, each either a kernel
 * (an op_desc, priced by compute.h or optimes.h) or a blocking tensor-parallel collective (Megatron
 * issues them on the compute stream and waits: Korthikanti et al. Fig. 4-5; no overlap of TP
 * communication, as in the Megatron-LM of the validation data).
 *
 * Layer structure (Megatron-LM GPT layer, pre-norm, Korthikanti et al., arXiv 2205.05198, Sec. 4.1 and
 * Fig. 5): norm, QKV projection, attention core (scores Q.K^T, scale-mask-softmax, dropout, context
 * P.V), output projection, bias-dropout-add; norm, MLP in (GELU: h -> f; SwiGLU: h -> 2f), activation,
 * MLP out, bias-dropout-add. Tensor parallelism splits heads and the FFN (column-parallel QKV and MLP
 * in, row-parallel projections); without sequence parallelism, one all-reduce of the s x b x h
 * activations after each row-parallel GEMM in the forward pass and one per column-parallel GEMM's input
 * gradient in the backward pass; with it, all-gather before and reduce-scatter after each block, and in
 * the backward pass the all-gather is repeated for the weight gradient (Megatron keeps the gathered
 * input only for the duration of the forward). Backward GEMMs: data gradient (tokens x in) = dY . W^T and
 * weight gradient (in x out) = X^T . dY, each as many FLOPs as the forward.
 *
 * Mixture-of-experts layer (Megatron-Core MoELayer with the all-to-all token dispatcher and grouped GEMM;
 * docs/training.md): the attention half as above; then norm, router (a GEMM of the tokens by the router
 * weights, top-k), permutation, all-to-all dispatch over the EP group, with etp > 1 an all-gather over the
 * ETP group, the local experts' MLPs as grouped GEMMs (batch = local experts, m = tokens per expert on the
 * busiest GPU), with etp > 1 a reduce-scatter, all-to-all combine, un-permutation; the shared experts as
 * a tensor-parallel MLP; the backward mirrors it. With sp each tp rank routes its 1/tp of the tokens.
 *
 * Kernel byte counts are the HBM traffic of Megatron's (fused) kernels; each is stated beside its op in
 * opgraph.c. All shapes are per GPU. Pure; no allocation.
 */
#ifndef CXLSIM_OPGRAPH_H
#define CXLSIM_OPGRAPH_H

#include <stdint.h>

#include "util/err.h"
#include "config/modelcfg.h"
#include "train/op.h"
#include "config/traincfg.h"

#define OPGRAPH_MAX_OPS 160
#define OPGRAPH_MAX_TPL 64

/* OPGRAPH_EP_A2A: an all-to-all over the expert-parallel group (token dispatch or combine, and their
 * gradients); OPGRAPH_ETP_COLL: a collective (coll) over the expert-tensor-parallel group. */
/* OPGRAPH_CP_P2P: context parallelism's ring exchange of K and V (and their gradients) over the CP group,
 * started without blocking the compute stream; OPGRAPH_CP_WAIT: the stream waits for it (after the
 * attention kernel it overlaps). */
/* OPGRAPH_DTOH: the host queues device-to-host copies (`bytes` of them, each a launch) that start when the
 * stream reaches this point; OPGRAPH_HOST_SYNC: the host waits for them (an event synchronize), after which
 * it can launch nothing before the GPU has reached the copies' point (the host timeline, train_step.c). The
 * all-to-all token dispatcher's pair (Megatron-Core MoEAlltoAllTokenDispatcher: cuda_dtoh_point
 * "before_permutation_1", cuda_sync_point "before_ep_alltoall" or "before_finish"). Neither is work on the
 * stream. OPGRAPH_TP_ASYNC: a tensor-parallel collective (coll, bytes, name as OPGRAPH_TP_COLL) started beside
 * the compute stream (training.tp_grad_comm_overlap: a column-parallel layer's backward); OPGRAPH_TP_WAIT: the
 * stream waits for it (after the GEMM it overlaps; nothing when none runs). OPGRAPH_HOST_PY: the framework's
 * Python on the host, `bytes` picoseconds (times the cluster's host_time_scale) before the host launches
 * the next entry; no work on the stream (training.host_moe_router, host_moe_expert). */
enum opgraph_entry_kind { OPGRAPH_KERNEL = 0, OPGRAPH_TP_COLL = 1, OPGRAPH_EP_A2A = 2, OPGRAPH_ETP_COLL = 3,
                          OPGRAPH_CP_P2P = 4, OPGRAPH_CP_WAIT = 5, OPGRAPH_DTOH = 6, OPGRAPH_HOST_SYNC = 7,
                          OPGRAPH_TP_ASYNC = 8, OPGRAPH_TP_WAIT = 9,
                          OPGRAPH_HOST_PY = 10 };
/* Collective kinds of OPGRAPH_TP_COLL entries (values match collalgo_op's first three). */
enum opgraph_coll { OPGRAPH_ALLREDUCE = 0, OPGRAPH_REDUCE_SCATTER = 1, OPGRAPH_ALLGATHER = 2 };

typedef struct opgraph_entry {
    uint8_t kind;       /* enum opgraph_entry_kind */
    uint8_t coll;       /* OPGRAPH_TP_COLL: enum opgraph_coll */
    uint16_t op;        /* OPGRAPH_KERNEL: index into ops[] */
    uint64_t bytes;     /* OPGRAPH_TP_COLL: the collective's buffer (all-gather: output; others: input);
                           OPGRAPH_CP_P2P: the bytes each rank sends around the ring (and receives);
                           OPGRAPH_DTOH: the number of copies the host queues;
                           OPGRAPH_HOST_PY: the host's time in picoseconds */
    const char *name;   /* OPGRAPH_TP_COLL: "tp.allreduce.attn" ... */
    uint8_t wgrad;      /* part of the weight gradient (a *.bwd_weight GEMM, or the *.wgrad all-gather that
                           sequence parallelism repeats for it): what a zero-bubble schedule's W pass runs,
                           and its B pass leaves out (schedule.h, enum schedule_part) */
    uint8_t graph;      /* enum opgraph_graph: the entry replays inside a CUDA graph (training.cuda_graph_attn) */
    uint8_t node;       /* enum opgraph_node: the part of an MoE layer it belongs to (training.moe_a2a_overlap) */
    uint8_t experts_hook; /* the routed experts' first entry in an MoE layer's forward: their module's forward
                             pre-hook runs before it (Megatron-Core's parameter gather, train_pgather.c) */
} opgraph_entry;

/* The parts of an MoE layer as Megatron-Core's combined 1F1B schedule splits it into schedule nodes
 * (megatron/core/models/gpt/fine_grained_callables.py build_transformer_layer_callables, Megatron-Core 0d8e071):
 * the attention block; post_attn (the pre-MLP norm, the router, the dispatcher's preprocess and permutation 1);
 * moe_dispatch (the dispatch all-to-alls, on the communication stream); mlp (the dispatcher's postprocess, the
 * experts, the shared experts, the combine's preprocess); moe_combine (the combine all-to-all, the
 * unpermutation and the residual add, on the communication stream). Dense layers are one node (ATTN). */
enum opgraph_node { OPGRAPH_NODE_ATTN = 0, OPGRAPH_NODE_POST_ATTN = 1, OPGRAPH_NODE_DISPATCH = 2,
                    OPGRAPH_NODE_MLP = 3, OPGRAPH_NODE_COMBINE = 4 };

/* An entry captured in a CUDA graph (Megatron's cuda_graph_scope, Transformer Engine's make_graphed_callables)
 * costs the host nothing of its own; the graph's first entry carries the graph's one launch (host_launch). */
enum opgraph_graph { OPGRAPH_EAGER = 0, OPGRAPH_GRAPHED = 1, OPGRAPH_GRAPH_HEAD = 2 };

typedef struct opgraph_tpl {
    opgraph_entry e[OPGRAPH_MAX_TPL];
    uint32_t n;
} opgraph_tpl;

enum opgraph_tpl_id {
    OPGRAPH_LAYER_FWD, OPGRAPH_LAYER_BWD, OPGRAPH_LAYER_RECOMPUTE, /* recompute: empty without recomputation */
    OPGRAPH_EMBED_FWD, OPGRAPH_EMBED_BWD, OPGRAPH_HEAD_FWD, OPGRAPH_HEAD_BWD,
    OPGRAPH_MOE_FWD, OPGRAPH_MOE_BWD, OPGRAPH_MOE_RECOMPUTE, /* MoE layers; empty for a dense model */
    /* FP8 runs with num_layers_at_start/end_in_bf16: the same six layer templates with bf16 GEMMs and no
     * quantization (OPGRAPH_BF16_OF(id) for id among the six above); empty otherwise */
    OPGRAPH_LAYER_FWD_BF16, OPGRAPH_LAYER_BWD_BF16, OPGRAPH_LAYER_RECOMPUTE_BF16,
    OPGRAPH_MOE_FWD_BF16, OPGRAPH_MOE_BWD_BF16, OPGRAPH_MOE_RECOMPUTE_BF16,
    /* models with a sliding window (model.window_size): the six layer templates of the windowed layers, whose
     * flash attention runs over the window, then their bf16 variants in FP8 runs with bf16 layers; empty
     * otherwise (OPGRAPH_VARIANT_OF) */
    OPGRAPH_LAYER_FWD_WIN, OPGRAPH_LAYER_BWD_WIN, OPGRAPH_LAYER_RECOMPUTE_WIN,
    OPGRAPH_MOE_FWD_WIN, OPGRAPH_MOE_BWD_WIN, OPGRAPH_MOE_RECOMPUTE_WIN,
    OPGRAPH_LAYER_FWD_BF16_WIN, OPGRAPH_LAYER_BWD_BF16_WIN, OPGRAPH_LAYER_RECOMPUTE_BF16_WIN,
    OPGRAPH_MOE_FWD_BF16_WIN, OPGRAPH_MOE_BWD_BF16_WIN, OPGRAPH_MOE_RECOMPUTE_BF16_WIN,
    OPGRAPH_NTPL
};

/* Layer template variants, or-ed: the bf16 layers of an FP8 run, the windowed layers of a sliding-window model */
enum { OPGRAPH_VAR_BF16 = 1, OPGRAPH_VAR_WINDOW = 2 };
/* The variant var of a layer template id (LAYER_* or MOE_*; var 0: the id itself) */
#define OPGRAPH_LAYER_SLOT(id) ((id) < OPGRAPH_EMBED_FWD ? (id) : (id) - OPGRAPH_MOE_FWD + 3)
#define OPGRAPH_VARIANT_OF(id, var) \
    ((var) ? OPGRAPH_LAYER_FWD_BF16 + ((var) - 1) * 6 + OPGRAPH_LAYER_SLOT(id) : (id))
/* The bf16 variant of a layer template id */
#define OPGRAPH_BF16_OF(id) OPGRAPH_VARIANT_OF(id, OPGRAPH_VAR_BF16)

typedef struct opgraph {
    op_desc ops[OPGRAPH_MAX_OPS];  /* every distinct kernel of the iteration (optimizer ones included) */
    /* per op: SMs a communication kernel beside it holds for its whole time (training.tp_comm_overlap: the
     * userbuffers bulk overlaps' num_sm); the op is priced on the GPU's other SMs (train_setup.c). 0: none */
    uint16_t op_sms_off[OPGRAPH_MAX_OPS];
    uint32_t nops;
    opgraph_tpl tpl[OPGRAPH_NTPL];
    /* pipeline point-to-point: bytes each GPU sends per micro-batch and model chunk boundary, and whether
     * the receiver all-gathers them over NVLink (Megatron's scatter-gather optimisation without sp) */
    uint64_t pp_bytes;
    uint64_t pp_gather_bytes;      /* 0 when no all-gather follows a receive */
    /* data-parallel gradients per GPU (bytes) */
    uint64_t layer_grad_bytes, embed_grad_bytes, head_grad_bytes;
    /* parameters per GPU (before ZeRO sharding) */
    uint64_t layer_params, embed_params, head_params;
    uint64_t grad_elem_bytes, weight_elem_bytes;
    /* FLOPs of one micro-batch on one GPU: forward of one layer, of the head, and the model FLOPs of the
     * whole iteration on all GPUs (3 x forward, no recomputation: the MFU numerator, Korthikanti Sec. 6) */
    double layer_fwd_flops, head_fwd_flops, model_flops_iteration;
    /* MoE layers (model.experts > 0): parameters per GPU (the routed experts' part apart: ZeRO shards it
     * over the expert-data-parallel group), gradients, and the forward FLOPs of one micro-batch with
     * balanced routing (the model FLOPs; the expert kernels themselves run the busiest GPU's load) */
    uint64_t moe_layer_params, moe_expert_params, moe_layer_grad_bytes;
    double moe_fwd_flops;
} opgraph;

/* Build the templates for a checked layout (parallel_check passed). CXL_ELIMIT if the fixed tables are too
 * small (a bug). */
int opgraph_build(const modelcfg *m, const traincfg *t, opgraph *g, cxl_err *err);
/* Index of the optimizer kernel for a GPU holding `params` parameters (after ZeRO sharding): adds the op
 * to g->ops on first use. Returns the index or a negative code. */
int opgraph_optimizer_op(opgraph *g, const traincfg *t, uint64_t params, cxl_err *err);
/* Index of Megatron-FSDP's gradient copy into the reduce-scatter buffer for a unit of `params` parameters
 * (gradient_accumulation_fusion off; fsdp.h): adds the op on first use. Returns the index or a negative code. */
int opgraph_fsdp_grad_copy_op(opgraph *g, const traincfg *t, uint64_t params, cxl_err *err);
/* DDP without gradient accumulation fusion: the accumulation of one layer's (params) weight gradients into
 * the main gradients after its backward (opgraph.c); adds the op on first use. Returns the index or a
 * negative code. */
int opgraph_grad_accum_op(opgraph *g, const traincfg *t, uint64_t params, cxl_err *err);
/* Index of Megatron-FSDP's transpose of a gathered FP8 layer's weights (`params` of them) before its
 * backward (fsdp.h): adds the op on first use. Returns the index or a negative code. */
int opgraph_fsdp_fp8_transpose_op(opgraph *g, const traincfg *t, uint64_t params, cxl_err *err);

#endif

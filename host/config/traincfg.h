/* traincfg.h - a training setup (the `training:` section of an experiment): batch sizes, tensor /
 * pipeline / data / sequence parallelism, interleaved virtual pipeline stages, ZeRO stage,
 * recomputation, precision, gradient buckets. Loaded through compose.h (inline mapping, file, or
 * `extends: FILE` with overrides); the cross-checks against a model and a cluster are in parallel.h. */
#ifndef CXLSIM_TRAINCFG_H
#define CXLSIM_TRAINCFG_H

#include <stdint.h>

#include "config/compose.h"
#include "config/gpucfg.h"

enum traincfg_recompute { TRAINCFG_RECOMPUTE_NONE = 0, TRAINCFG_RECOMPUTE_SELECTIVE = 1, TRAINCFG_RECOMPUTE_FULL = 2 };
/* The attention core's kernels: flash (one fused kernel per pass, no s x s scores in memory; Transformer
 * Engine's default in Megatron-Core) or unfused (Megatron-LM 2021-2022: score GEMM, softmax, dropout,
 * context GEMM, the s x s scores kept for the backward). */
enum traincfg_attention { TRAINCFG_ATTENTION_FLASH = 0, TRAINCFG_ATTENTION_UNFUSED = 1 };
/* The data-parallel wrapper: Megatron-Core's DDP (gradient buckets; the distributed optimizer with `zero`
 * >= 1) or Megatron-FSDP with data_parallel_sharding_strategy optim_grads_params (weights, gradients and
 * optimizer states sharded; per FSDP unit a parameter all-gather before its forward and its backward and a
 * gradient reduce-scatter after its backward; host/train/fsdp.h). */
enum traincfg_data_parallel { TRAINCFG_DP_DDP = 0, TRAINCFG_DP_FSDP = 1 };
/* precision and main_grads take gpucfg_dtype values (gpucfg.h) */
/* training.pipeline_schedule, in the order of schedule.h's enum schedule_kind */
enum traincfg_schedule { TRAINCFG_SCHEDULE_AUTO = 0, TRAINCFG_SCHEDULE_1F1B = 1, TRAINCFG_SCHEDULE_INTERLEAVED = 2,
                         TRAINCFG_SCHEDULE_ZB_H1 = 3, TRAINCFG_SCHEDULE_DUALPIPEV = 4 };

/* training.p2p_exchange: how a Megatron pipeline schedule without overlap_p2p_comm places its point-to-point
 * transfers (train_step.c). batched: as Megatron-LM's schedules (2021) and Megatron-Core's do, each exchange a
 * blocking batch_isend_irecv + synchronize, the receives for the next pass waited for before its host time, and
 * in the interleaved schedule's steady phase a forward's output sent with the following backward's exchange
 * (send_forward_backward_recv_forward_backward); per_pass: each pass sends its output at its end and waits
 * for its input at its start, after its host time (the model before 2026-12-07). */
enum traincfg_p2p_exchange { TRAINCFG_P2P_BATCHED = 0, TRAINCFG_P2P_PER_PASS = 1 };

/* training.grad_reduce: whose data-parallel gradient reduction (docs/training.md, "Gradient reduction").
 * megatron: Megatron-LM / Megatron-Core DDP and distributed optimizer: with overlap_grad_reduce, buckets of
 * grad_bucket reduced on a side stream during the last micro-batch's backward; without it one call per
 * gradient buffer after the backward (bucket_size None). deepspeed: DeepSpeed's ZeRO optimizer:
 * overlap_comm (auto = ZeRO-3) and reduce_bucket_size elements; ZeRO-2/3 reduce during every
 * micro-batch's backward, on the compute stream without overlap_comm. */
enum traincfg_grad_reduce { TRAINCFG_GRAD_MEGATRON = 0, TRAINCFG_GRAD_DEEPSPEED = 1 };
enum traincfg_overlap_comm { TRAINCFG_OVERLAP_COMM_AUTO = 0, TRAINCFG_OVERLAP_COMM_TRUE = 1,
                             TRAINCFG_OVERLAP_COMM_FALSE = 2 };

enum traincfg_fp8_recipe { TRAINCFG_FP8_TENSORWISE = 0, TRAINCFG_FP8_MXFP8 = 1 };
enum traincfg_ce { TRAINCFG_CE_NATIVE = 0, TRAINCFG_CE_TE = 1 };

enum { TRAINCFG_F_GLOBAL_BATCH, TRAINCFG_F_MICRO_BATCH, TRAINCFG_F_TP, TRAINCFG_F_PP, TRAINCFG_F_DP,
       TRAINCFG_F_SP, TRAINCFG_F_VIRTUAL_STAGES, TRAINCFG_F_ZERO, TRAINCFG_F_RECOMPUTE, TRAINCFG_F_PRECISION,
       TRAINCFG_F_MAIN_GRADS, TRAINCFG_F_GRAD_BUCKET, TRAINCFG_F_OVERLAP, TRAINCFG_F_COLLECTIVES, TRAINCFG_F_OVERLAP_P2P, TRAINCFG_F_PROTOCOL, TRAINCFG_F_VOCAB_DIV, TRAINCFG_F_HOST_ITER, TRAINCFG_F_HOST_MB, TRAINCFG_F_TP_COLL, TRAINCFG_F_DP_COLL, TRAINCFG_F_TP_PROTO,
       TRAINCFG_F_DP_PROTO, TRAINCFG_F_EP, TRAINCFG_F_ETP, TRAINCFG_F_ATTENTION, TRAINCFG_F_CP,
       TRAINCFG_F_FIRST_LAYERS, TRAINCFG_F_LAST_LAYERS, TRAINCFG_F_EMBED_SPLIT, TRAINCFG_F_LOSS_SPLIT,
       TRAINCFG_F_FP8_PARAM_GATHER, TRAINCFG_F_BF16_START, TRAINCFG_F_BF16_END, TRAINCFG_F_PIPELINE_SCHEDULE,
       TRAINCFG_F_DATA_PARALLEL, TRAINCFG_F_FSDP_DOUBLE_BUFFER, TRAINCFG_F_GRAD_ACC_FUSION,
       TRAINCFG_F_KEEP_FP8_TRANSPOSE, TRAINCFG_F_FP8_RECIPE, TRAINCFG_F_CPU_OFFLOAD, TRAINCFG_F_CE_IMPL,
       TRAINCFG_F_HOST_LAUNCH, TRAINCFG_F_PP_LAYOUT, TRAINCFG_F_RECOMPUTE_MLA_UP, TRAINCFG_F_TP_GRAD_OVERLAP,
       TRAINCFG_F_P2P_EXCHANGE, TRAINCFG_F_HOST_GEMM, TRAINCFG_F_HOST_GEMM_MXFP8,
       TRAINCFG_F_HOST_MODULE, TRAINCFG_F_GRAD_REDUCE, TRAINCFG_F_OVERLAP_COMM, TRAINCFG_F_REDUCE_BUCKET,
       TRAINCFG_F_PP_PROTO, TRAINCFG_F_CP_PROTO, TRAINCFG_F_EP_PROTO, TRAINCFG_F_HOST_MOE_ROUTER,
       TRAINCFG_F_HOST_MOE_EXPERT, TRAINCFG_F_CUDA_GRAPH_MOE_ROUTER, TRAINCFG_F_CUDA_GRAPH_ATTN,
       TRAINCFG_F_HOST_MOE_DISPATCH, TRAINCFG_F_MOE_DISPATCHER, TRAINCFG_F_RECOMPUTE_METHOD,
       TRAINCFG_F_RECOMPUTE_NUM_LAYERS, TRAINCFG_F_TP_COMM_OVERLAP, TRAINCFG_F_UB_SMS0,
       TRAINCFG_F_GROUPED_GEMM_STREAMS = TRAINCFG_F_UB_SMS0 + 4, TRAINCFG_F_MOE_FORCE_BALANCE,
       TRAINCFG_F_MOE_A2A_OVERLAP, TRAINCFG_F_OVERLAP_PARAM_GATHER, TRAINCFG_F_ALIGN_PARAM_GATHER,
       TRAINCFG_F_OPG_WITH_OPT_STEP, TRAINCFG_NFIELDS };

/* training.moe_dispatcher: Megatron-Core's token dispatcher (moe_token_dispatcher_type alltoall, or flex
 * with moe_flex_dispatcher_backend hybridep) */
enum traincfg_moe_dispatcher { TRAINCFG_MOE_ALLTOALL = 0, TRAINCFG_MOE_HYBRIDEP = 1 };
extern const char *const traincfg_moe_dispatcher_names[];

/* training.recompute_method with recompute full (Megatron-Core's recompute_method): uniform checkpoints the
 * input of every group of recompute_num_layers layers and recomputes them all; block recomputes only the
 * first recompute_num_layers layers of each model chunk and keeps the others' activations
 * (megatron/core/transformer/transformer_block.py, TransformerBlock._checkpointed_forward) */
enum traincfg_recompute_method { TRAINCFG_RECOMPUTE_UNIFORM = 0, TRAINCFG_RECOMPUTE_BLOCK = 1 };
extern const char *const traincfg_recompute_method_names[];

typedef struct traincfg {
    char source[512];
    uint64_t global_batch, micro_batch;     /* sequences */
    uint64_t tp, pp, dp;
    int sp;                                 /* sequence parallelism (with tp) */
    uint64_t virtual_stages;                /* model chunks per pipeline rank (interleaved 1F1B); 1 = plain */
    uint64_t zero;                          /* 0-3 */
    int recompute;                          /* enum traincfg_recompute */
    int precision;                          /* enum gpucfg_dtype: bf16, fp16, fp8, tf32, fp32 */
    int main_grads;                         /* enum gpucfg_dtype: bf16 or fp32 gradient storage */
    uint64_t grad_bucket_bytes;
    int overlap_grad_reduce;
    int overlap_p2p_comm;                   /* pipeline sends run asynchronously (else the sender waits) */
    int collective_algo;                    /* collalgo_algo: ring, tree, hierarchical, auto */
    int protocol;                           /* nccltune_proto: LL, LL128, Simple, auto (NCCL_PROTO) */
    uint64_t vocab_divisible_by;            /* Megatron's make_vocab_size_divisible_by (x tp); 1 = no padding */
    uint64_t host_iteration_ps;             /* host time per iteration on every stage's compute stream */
    uint64_t host_microbatch_ps;            /* host time per micro-batch (forward and backward of one chunk) */
    /* per group (tensor- and data-parallel): TRAINCFG_INHERIT takes collective_algo / protocol */
    int tp_collective_algo, dp_collective_algo, tp_protocol, dp_protocol;
    /* per send/receive group (pipeline, context-parallel, expert-parallel): enum traincfg_p2p_protocol */
    int pp_protocol, cp_protocol, ep_protocol;
    /* mixture of experts (Megatron-Core): expert-parallel size (experts per rank = experts / ep) and
     * expert-tensor-parallel size (each expert's MLP split over etp ranks; 0 in the file's absence: = tp).
     * The expert grid reuses the dense one's ranks: ep x etp divides tp x dp (parallel.h). */
    uint64_t ep, etp;
    int attention;                          /* enum traincfg_attention */
    /* context parallelism (Megatron-Core): each sequence split over cp ranks (ring attention exchanging K
     * and V); rank order tp-cp-dp-pp, so tp x pp x cp x dp = GPUs and the gradients are reduced (and ZeRO
     * shards them) over the dp x cp ranks that hold the same parameters */
    uint64_t cp;
    /* uneven pipeline split (Megatron-Core; parallel_chunk_layers): the first / last pipeline stage's
     * transformer layers (--decoder-first/last-pipeline-num-layers; 0 = not given: the even share), or the
     * embedding / the loss counted as one layer of the first / last model chunk
     * (account_for_embedding/loss_in_pipeline_split) */
    uint64_t first_stage_layers, last_stage_layers;
    int embedding_in_split, loss_in_split;
    /* FP8 training: the layers' weights are kept only as FP8 tensors (Megatron's --fp8-param-gather; the
     * distributed optimizer's fp32 main weights are the master copy), not as bf16 plus FP8 copies */
    int fp8_param_gather;
    /* FP8 training: the first / last transformer layers that run in bf16 (Megatron's --first-last-layers-bf16
     * with --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16; 0: none) */
    uint64_t bf16_layers_start, bf16_layers_end;
    /* the pipeline schedule (enum traincfg_schedule, the values of schedule.h's enum schedule_kind):
     * auto = Megatron-LM's choice by pp and virtual_stages (1F1B, or interleaved when virtual_stages > 1) */
    int pipeline_schedule;
    int data_parallel;                      /* enum traincfg_data_parallel; fsdp implies zero 3 (expcfg.c) */
    int fsdp_double_buffer;                 /* Megatron-FSDP's fsdp_double_buffer: two units' buffers (fsdp.h) */
    int grad_acc_fusion;                    /* gradient_accumulation_fusion (default on); off: fsdp.h, or with ddp
                                               the main-gradient accumulation kernel after each layer's backward */
    int p2p_exchange;                       /* enum traincfg_p2p_exchange */
    int tp_grad_overlap;                    /* tp_grad_comm_overlap (default on): the column-parallel input-gradient
                                               all-reduce / reduce-scatter beside the weight-gradient GEMM */
    int keep_fp8_transpose;                 /* Megatron-FSDP's keep_fp8_transpose_cache (fsdp.h) */
    /* FP8 training's scaling (enum traincfg_fp8_recipe, Megatron's --fp8-recipe): tensorwise = per-tensor
     * current scaling (Megatron-Bridge's FP8-CS), mxfp8 = MXFP8 block scaling (FP8-MX; needs gpucfg.mxfp8) */
    int fp8_recipe;
    /* Megatron-Core's activation offloading to the CPU's memory (cpu_offloading with
     * cpu_offloading_num_layers; Transformer Engine's get_cpu_offload_context): the saved activations of
     * the first cpu_offload_layers transformer layers go to pinned host memory after their forward and come
     * back before their backward (train_cpuoff.c, gpumem.h); 0 = off. pp 1 and no recomputation only. */
    uint64_t cpu_offload_layers;
    /* the loss (enum traincfg_ce, Megatron's --cross-entropy-fusion-impl): native keeps the fp32 logits for
     * the cross entropy's backward (4 B per logit), te Transformer Engine's fused parallel_cross_entropy,
     * which writes the logits' gradient into the 16-bit logits in its forward and keeps only those (2 B) */
    int ce_impl;
    /* derived, not a key (expcfg_check_layout: the GPU's gpucfg.mxfp8): the GPU runs FP8 GEMMs in any
     * operand layout, so FP8 tensors keep no transposed copy. Transformer Engine creates the columnwise
     * (transposed) data of a tensorwise-scaled FP8 tensor only when is_non_tn_fp8_gemm_supported() is false,
     * i.e. below compute capability 10.0 (transformer_engine/pytorch/utils.py; tensor/float8_tensor.py):
     * Blackwell (B200, GB200: the GPUs with MXFP8, gpucfg.mxfp8) keeps 1 B per FP8 weight, Hopper 2 B.
     * MXFP8 keeps both copies on every GPU (their scales run along different axes). */
    int fp8_non_tn;
    /* host time to launch one kernel or collective: the host timeline (train_step.c; docs/training.md, "Host
     * timeline"); 0: the host is never behind the GPU */
    uint64_t host_launch_ps;
    /* host time of one cuBLAS GEMM call through Transformer Engine (descriptors, the algorithm heuristic and
     * the launch), in place of host_launch for each of a GEMM op's calls (op_desc.calls); 0: host_launch */
    uint64_t host_gemm_ps;
    /* the same for an MXFP8 GEMM (block-scaled cuBLASLt: the scale modes and pointers set per call) */
    uint64_t host_gemm_mxfp8_ps;
    /* the framework's host time per module call (a linear layer's forward or backward, the attention
     * core's) beside its launches and GEMM calls */
    uint64_t host_module_ps;
    /* Megatron-Core's own Python per MoE layer's forward (docs/training.md, "Host timeline"), beside what the
     * launches, GEMM calls and modules above price: the router and the dispatcher's preprocessing, once per
     * layer; the experts' grouped MLP, per local expert */
    uint64_t host_moe_router_ps;
    uint64_t host_moe_expert_ps;
    /* the all-to-all dispatcher's Python between its synchronisation and the all-to-all (moe_dispatcher
     * alltoall only) */
    uint64_t host_moe_dispatch_ps;
    int moe_dispatcher; /* enum traincfg_moe_dispatcher */
    /* Megatron's cuda_graph_scope moe_router + moe_preprocess (cuda_graph_impl transformer_engine): the router
     * and the preprocessing replay as a CUDA graph, without host_moe_router's Python */
    int cuda_graph_moe_router;
    /* Megatron's cuda_graph_scope attn (cuda_graph_impl transformer_engine): each layer's attention block
     * (input norm, QKV, core attention, projection, residual) replays forward and backward as one CUDA graph
     * each: one launch on the host in place of its kernels' host time */
    int cuda_graph_attn;
    /* the CUDA streams a grouped GEMM's per-expert cuBLAS GEMMs are spread over (Transformer Engine's
     * multi_stream_cublas_gemm, num_compute_streams 4; opgraph_moe.c grouped_gemm); 1: one stream */
    uint64_t grouped_gemm_streams;
    /* Megatron-Core's moe_router_force_load_balancing (RandomSTE: random router logits, balanced routing) */
    int moe_force_load_balancing;
    /* Megatron-Core's overlap_moe_expert_parallel_comm with delay_wgrad_compute (Megatron-Bridge's
     * moe_a2a_overlap): the combined 1F1B schedule, one micro-batch's forward beside another's backward layer
     * by layer, the all-to-alls on a communication stream (docs/training.md, "All-to-all overlap") */
    int moe_a2a_overlap;
    /* Megatron-Core's overlap_param_gather (DistributedDataParallelConfig; the distributed optimizer only): the
     * parameter all-gathers after the optimizer step are issued by forward pre-hooks, each bucket group's
     * gather waited for by the first module that uses it, which then issues the next one, so they run beside
     * the next iteration's first forward instead of after the step (docs/training.md, "Overlapped parameter
     * all-gather"). align_param_gather (with it): the interleaved schedule issues each model chunk's gathers
     * at fixed points, all pipeline stages together, and the hooks only wait */
    int overlap_param_gather;
    int align_param_gather;
    /* Megatron-Core's overlap_param_gather_with_optimizer_step (OptimizerConfig; virtual stages only): the first
     * model chunk has an optimizer of its own, stepped first, and its gathers are issued right after it, beside
     * the other chunks' step; every chunk's DDP without bucketing (Megatron-Bridge's _ddp_wrap) */
    int overlap_param_gather_with_optimizer_step;
    /* Megatron-Core's pipeline_model_parallel_layout ("" = none): per virtual stage, in Megatron's order,
     * the embedding E, transformer layers t, multi-token prediction modules m and the loss L, stages
     * separated by '|', "x*n" and "(...)*n" repeating (pplayout.h; parallel_chunk_layers reads it) */
    char pp_layout[512];
    /* Megatron-Core's recompute_modules "mla_up_proj": MLA's up-projections and RoPE rerun before each
     * layer's backward, their outputs (Q, K, V) not kept */
    int recompute_mla_up_proj;
    int grad_reduce;                        /* enum traincfg_grad_reduce */
    int overlap_comm;                       /* enum traincfg_overlap_comm (grad_reduce deepspeed) */
    uint64_t reduce_bucket_elems;           /* DeepSpeed's reduce_bucket_size, in elements */
    int recompute_method;                   /* enum traincfg_recompute_method (recompute full) */
    uint64_t recompute_num_layers;          /* recompute full: layers per group (uniform) or per chunk (block);
                                             * 0 in the file's absence: uniform groups of 1 */
    /* Transformer Engine's userbuffers tensor-parallel overlap (Megatron's --tp-comm-overlap; Megatron-Bridge's
     * comm_overlap.tp_comm_overlap with a TransformerLayerTPOverlapCfg): the forward's all-gathers and
     * reduce-scatters and the row-parallel backward's all-gathers as ring exchanges beside their GEMM's
     * chunks, and the column-parallel backward's bulk overlaps taking ub_sms SMs from the GEMM beside them:
     * in enum traincfg_ub_bulk order (qkv_dgrad, qkv_wgrad, fc1_dgrad, fc1_wgrad: TE's num_sm of each) */
    int tp_comm_overlap;
    uint64_t ub_sms[4];
    cfgloc loc[TRAINCFG_NFIELDS];
    cfgloc ref;
} traincfg;

/* training.ub_*_sms: the four bulk overlaps of Transformer Engine's userbuffers (module/base.py initialize_ub:
 * the column-parallel layers' backward; the all-gather of the input beside the data-gradient GEMM, the
 * reduce-scatter of the input gradient beside the weight-gradient GEMM) */
enum traincfg_ub_bulk { TRAINCFG_UB_QKV_DGRAD = 0, TRAINCFG_UB_QKV_WGRAD = 1, TRAINCFG_UB_FC1_DGRAD = 2,
                        TRAINCFG_UB_FC1_WGRAD = 3 };

extern const compose_kind traincfg_kind;
extern const char *const traincfg_data_parallel_names[]; /* "ddp", "fsdp" */

/* The pipeline stage that holds the output layer and the loss: the last, or with DualPipeV's V the first
 * (its chunk 1 is the last virtual stage). */
static inline uint64_t traincfg_head_stage(const traincfg *t)
{
    return t->pipeline_schedule == TRAINCFG_SCHEDULE_DUALPIPEV ? 0 : t->pp - 1;
}

/* 1 when the attention core runs as one fused (flash) kernel per pass: attention flash and 16-bit or FP8
 * training. Flash kernels take fp16/bf16 operands only; with fp32/tf32 training Transformer Engine falls
 * back to its unfused DotProductAttention, and so does this. */
static inline int traincfg_flash(const traincfg *t)
{
    return t->attention == TRAINCFG_ATTENTION_FLASH && t->precision != GPUCFG_TF32 &&
           t->precision != GPUCFG_FP32;
}
extern const char *const traincfg_recompute_names[];

/* 1 when the layer at index `layer` of its model chunk (0 = the chunk's first) is recomputed before its
 * backward: every layer with recompute full and the uniform method, the chunk's first recompute_num_layers
 * with the block method (Megatron-Core skips none of them in our runs: a chunk's input always needs its
 * gradient, so its FP8 skip of layers whose input takes no gradient never applies) */
static inline int traincfg_layer_recomputed(const traincfg *t, uint64_t layer)
{
    if (t->recompute != TRAINCFG_RECOMPUTE_FULL)
        return 0;
    return t->recompute_method != TRAINCFG_RECOMPUTE_BLOCK || layer < t->recompute_num_layers;
}
extern const char *const traincfg_attention_names[]; /* in traincfg_attention order */
extern const char *const traincfg_schedule_names[];  /* in traincfg_schedule order */
extern const char *const traincfg_fp8_recipe_names[]; /* in traincfg_fp8_recipe order */
extern const char *const traincfg_ce_names[];         /* in traincfg_ce order */

/* 1 when an FP8 run quantizes with MXFP8 block scales (32 elements per E8M0 scale) */
static inline int traincfg_mxfp8(const traincfg *t)
{
    return t->precision == GPUCFG_FP8 && t->fp8_recipe == TRAINCFG_FP8_MXFP8;
}

/* 1 when transformer layer `layer` (0-based, of `layers`) runs its GEMMs in bf16 in an FP8 run */
static inline int traincfg_layer_bf16(const traincfg *t, uint64_t layer, uint64_t layers)
{
    return t->precision == GPUCFG_FP8 && (layer < t->bf16_layers_start || layer + t->bf16_layers_end >= layers);
}
/* The ranks that hold the same parameters: dp x cp (Megatron's data-parallel group with context
 * parallelism); gradient reductions and ZeRO sharding run over them. */
static inline uint64_t traincfg_dpcp(const traincfg *t) { return t->dp * (t->cp ? t->cp : 1); }
/* The gradient reduction in effect (enum traincfg_grad_reduce): 1 when the reduction of the gradients runs
 * on a side stream during the backward: Megatron's overlap_grad_reduce; DeepSpeed's overlap_comm (auto: ZeRO-3,
 * DeepSpeed's default) with a ZeRO stage of at least 1 (ZeRO-0 all-reduces after the backward). */
static inline int traincfg_grad_overlap(const traincfg *t)
{
    if (t->grad_reduce != TRAINCFG_GRAD_DEEPSPEED)
        return t->overlap_grad_reduce;
    int on = t->overlap_comm == TRAINCFG_OVERLAP_COMM_AUTO ? t->zero == 3
                                                           : t->overlap_comm == TRAINCFG_OVERLAP_COMM_TRUE;
    return on && t->zero >= 1;
}
/* 1 when DeepSpeed's ZeRO-2/3 reduce each micro-batch's gradients during its backward on the compute stream
 * (overlap_comm off): the stream waits for them */
static inline int traincfg_grad_sync(const traincfg *t)
{
    return t->grad_reduce == TRAINCFG_GRAD_DEEPSPEED && t->zero >= 2 && !traincfg_grad_overlap(t);
}
extern const char *const traincfg_collective_names[]; /* in collalgo_algo order */
extern const char *const traincfg_protocol_names[];   /* in nccltune_proto order */
#define TRAINCFG_INHERIT 4 /* the index of "inherit" in the per-group names below */
extern const char *const traincfg_group_collective_names[]; /* collalgo_algo order, then "inherit" */
extern const char *const traincfg_group_protocol_names[];   /* nccltune_proto order, then "inherit" */
/* pp_protocol, cp_protocol, ep_protocol: "ll", "simple", "auto" (the engine maps them to nccltune_proto) */
enum traincfg_p2p_protocol { TRAINCFG_P2P_LL = 0, TRAINCFG_P2P_SIMPLE = 1, TRAINCFG_P2P_AUTO = 2 };
extern const char *const traincfg_p2p_protocol_names[];

#endif

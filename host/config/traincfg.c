/* traincfg.c - training setups: schema table and defaults. */
#include "config/traincfg.h"

#include <stddef.h>
#include <string.h>

#include "config/gpucfg.h"

const char *const traincfg_recompute_names[] = { "none", "selective", "full", NULL };
const char *const traincfg_attention_names[] = { "flash", "unfused", NULL };
const char *const traincfg_schedule_names[] = { "auto", "1f1b", "interleaved", "zb-h1", "dualpipev", NULL };
static const char *const traincfg_p2p_exchange_names[] = { "batched", "per_pass", NULL };
const char *const traincfg_data_parallel_names[] = { "ddp", "fsdp", NULL };
const char *const traincfg_fp8_recipe_names[] = { "tensorwise", "mxfp8", NULL };
const char *const traincfg_ce_names[] = { "native", "te", NULL };
static const char *const traincfg_grad_reduce_names[] = { "megatron", "deepspeed", NULL };
static const char *const traincfg_overlap_comm_names[] = { "auto", "true", "false", NULL };
const char *const traincfg_collective_names[] = { "ring", "tree", "hierarchical", "auto", NULL };
const char *const traincfg_protocol_names[] = { "ll", "ll128", "simple", "auto", NULL };
const char *const traincfg_group_collective_names[] = { "ring", "tree", "hierarchical", "auto", "inherit", NULL };
const char *const traincfg_group_protocol_names[] = { "ll", "ll128", "simple", "auto", "inherit", NULL };
/* send/receive (pipeline, context-parallel and expert-parallel groups): NCCL runs LL or Simple, never LL128,
 * and NCCL_PROTO does not apply (nccltune.h, nccltune_p2p_proto) */
const char *const traincfg_p2p_protocol_names[] = { "ll", "simple", "auto", NULL };

const char *const traincfg_moe_dispatcher_names[] = { "alltoall", "hybridep", NULL };
const char *const traincfg_recompute_method_names[] = { "uniform", "block", NULL };

#define T(f) offsetof(traincfg, f)
/* Order = TRAINCFG_F_* */
static const cfg_field fields[] = {
    { "global_batch", CFG_T_U64, T(global_batch), 1, 1, 1 << 30, NULL, NULL, 0, NULL,
      "sequences per iteration, e.g. 1024" },
    { "micro_batch", CFG_T_U64, T(micro_batch), 0, 1, 1 << 20, NULL, NULL, 0, NULL, "sequences per micro-batch" },
    { "tp", CFG_T_U64, T(tp), 0, 1, 1 << 16, NULL, NULL, 0, NULL, "tensor-parallel size" },
    { "pp", CFG_T_U64, T(pp), 0, 1, 1 << 16, NULL, NULL, 0, NULL, "pipeline-parallel size (stages)" },
    { "dp", CFG_T_U64, T(dp), 0, 1, 1 << 24, NULL, NULL, 0, NULL, "data-parallel size" },
    { "sp", CFG_T_BOOL, T(sp), 0, 1, 0, NULL, NULL, 0, NULL, "Megatron sequence parallelism (needs tp > 1)" },
    { "virtual_stages", CFG_T_U64, T(virtual_stages), 0, 1, 1024, NULL, NULL, 0, NULL,
      "model chunks per pipeline rank (interleaved 1F1B); 1 = plain 1F1B" },
    { "zero", CFG_T_U64, T(zero), 0, 0, 3, NULL, NULL, 0, NULL,
      "ZeRO stage: 1 shards optimizer states over dp, 2 also gradients, 3 also weights" },
    { "recompute", CFG_T_ENUM, T(recompute), 0, 1, 0, traincfg_recompute_names, NULL, 0, NULL,
      "activation recomputation: none, selective (attention core) or full (whole layers)" },
    { "precision", CFG_T_ENUM, T(precision), 0, 1, 0, gpucfg_dtype_names, NULL, 0, NULL,
      "data type of the matrix products (mixed precision with fp32 master weights unless fp32/tf32)" },
    { "main_grads", CFG_T_ENUM, T(main_grads), 0, 1, 0, gpucfg_dtype_names, NULL, 0, NULL,
      "gradient storage: bf16 (2 B per parameter) or fp32 (4 B)" },
    { "grad_bucket", CFG_T_SIZE, T(grad_bucket_bytes), 0, 1, 1e12, NULL, NULL, 0, NULL,
      "data-parallel gradient bucket, e.g. 40MB" },
    { "overlap_grad_reduce", CFG_T_BOOL, T(overlap_grad_reduce), 0, 1, 0, NULL, NULL, 0, NULL,
      "grad_reduce megatron: grad_bucket reductions overlap the last micro-batch's backward (Megatron's "
      "--overlap-grad-reduce); false (Megatron's default): one call after the backward" },
    { "collectives", CFG_T_ENUM, T(collective_algo), 0, 1, 0, traincfg_collective_names, NULL, 0, NULL,
      "collective algorithm (NCCL_ALGO): ring, tree, hierarchical, or auto (NCCL's tuning model picks ring or tree)" },
    { "overlap_p2p_comm", CFG_T_BOOL, T(overlap_p2p_comm), 0, 1, 0, NULL, NULL, 0, NULL,
      "pipeline sends overlap computation (Megatron's --overlap-p2p-communication); false: the sender waits" },
    { "protocol", CFG_T_ENUM, T(protocol), 0, 1, 0, traincfg_protocol_names, NULL, 0, NULL,
      "NCCL protocol (NCCL_PROTO): ll, ll128, simple, or auto (NCCL's tuning model picks per collective)" },
    { "vocab_divisible_by", CFG_T_U64, T(vocab_divisible_by), 0, 1, 1 << 20, NULL, NULL, 0, NULL,
      "pad the vocabulary to a multiple of this x tp (Megatron's --make-vocab-size-divisible-by, default 128)" },
    { "host_overhead_iteration", CFG_T_TIME, T(host_iteration_ps), 0, 0, 1e15, NULL, NULL, 0, NULL,
      "host time per iteration on the compute stream (data loading, logging, Python), e.g. 5ms" },
    { "host_overhead_microbatch", CFG_T_TIME, T(host_microbatch_ps), 0, 0, 1e12, NULL, NULL, 0, NULL,
      "host time per micro-batch forward and per backward on the compute stream, e.g. 200us" },
    { "tp_collectives", CFG_T_ENUM, T(tp_collective_algo), 0, 1, 0, traincfg_group_collective_names, NULL, 0, NULL,
      "collective algorithm of the tensor-parallel group; inherit: training.collectives" },
    { "dp_collectives", CFG_T_ENUM, T(dp_collective_algo), 0, 1, 0, traincfg_group_collective_names, NULL, 0, NULL,
      "collective algorithm of the data-parallel group; inherit: training.collectives" },
    { "tp_protocol", CFG_T_ENUM, T(tp_protocol), 0, 1, 0, traincfg_group_protocol_names, NULL, 0, NULL,
      "NCCL protocol of the tensor-parallel group; inherit: training.protocol" },
    { "dp_protocol", CFG_T_ENUM, T(dp_protocol), 0, 1, 0, traincfg_group_protocol_names, NULL, 0, NULL,
      "NCCL protocol of the data-parallel group; inherit: training.protocol" },
    { "ep", CFG_T_U64, T(ep), 0, 1, 1 << 16, NULL, NULL, 0, NULL,
      "expert-parallel size (mixture of experts): experts per GPU = experts / ep" },
    { "etp", CFG_T_U64, T(etp), 0, 1, 1 << 16, NULL, NULL, 0, NULL,
      "expert-tensor-parallel size: each expert's MLP split over etp GPUs; default: tp" },
    { "attention", CFG_T_ENUM, T(attention), 0, 1, 0, traincfg_attention_names, NULL, 0, NULL,
      "attention core: flash (fused kernel, no s x s scores kept; the default) or unfused (Megatron-LM 2021-2022)" },
    { "cp", CFG_T_U64, T(cp), 0, 1, 1 << 16, NULL, NULL, 0, NULL,
      "context-parallel size: each sequence split over cp GPUs (ring attention); dp = GPUs / (tp x pp x cp)" },
    { "decoder_first_pipeline_num_layers", CFG_T_U64, T(first_stage_layers), 0, 1, 1 << 20, NULL, NULL, 0, NULL,
      "transformer layers of the first pipeline stage (Megatron's --decoder-first-pipeline-num-layers); the "
      "other stages share the rest evenly" },
    { "decoder_last_pipeline_num_layers", CFG_T_U64, T(last_stage_layers), 0, 1, 1 << 20, NULL, NULL, 0, NULL,
      "transformer layers of the last pipeline stage (Megatron's --decoder-last-pipeline-num-layers)" },
    { "account_for_embedding_in_pipeline_split", CFG_T_BOOL, T(embedding_in_split), 0, 1, 0, NULL, NULL, 0, NULL,
      "the embedding counts as one layer of the first model chunk (Megatron's option of that name)" },
    { "account_for_loss_in_pipeline_split", CFG_T_BOOL, T(loss_in_split), 0, 1, 0, NULL, NULL, 0, NULL,
      "the output layer and loss count as one layer of the last model chunk (Megatron's option of that name)" },
    { "fp8_param_gather", CFG_T_BOOL, T(fp8_param_gather), 0, 1, 0, NULL, NULL, 0, NULL,
      "with precision fp8: weights kept only as FP8 tensors (Megatron's --fp8-param-gather), not bf16 + FP8 copies" },
    { "num_layers_at_start_in_bf16", CFG_T_U64, T(bf16_layers_start), 0, 0, 1 << 20, NULL, NULL, 0, NULL,
      "with precision fp8: the first transformer layers run in bf16 (Megatron's --first-last-layers-bf16)" },
    { "num_layers_at_end_in_bf16", CFG_T_U64, T(bf16_layers_end), 0, 0, 1 << 20, NULL, NULL, 0, NULL,
      "with precision fp8: the last transformer layers run in bf16 (Megatron's --first-last-layers-bf16)" },
    { "pipeline_schedule", CFG_T_ENUM, T(pipeline_schedule), 0, 1, 0, traincfg_schedule_names, NULL, 0, NULL,
      "pipeline schedule: auto (Megatron-LM's: 1f1b, or interleaved with virtual_stages > 1), 1f1b, interleaved, "
      "zb-h1 (zero bubble, backward split into input- and weight-gradient passes; pp > 1, virtual_stages 1), or "
      "dualpipev (DeepSeek's V-shaped schedule; pp > 1, virtual_stages 2, micro-batches >= 2 pp)" },
    { "data_parallel", CFG_T_ENUM, T(data_parallel), 0, 1, 0, traincfg_data_parallel_names, NULL, 0, NULL,
      "data-parallel wrapper: ddp (Megatron-Core DDP, ZeRO stage from `zero`) or fsdp (Megatron-FSDP, "
      "optim_grads_params: weights, gradients and optimizer states sharded, gathered per layer)" },
    { "fsdp_double_buffer", CFG_T_BOOL, T(fsdp_double_buffer), 0, 1, 0, NULL, NULL, 0, NULL,
      "with data_parallel fsdp: persistent buffers for two units' parameters and gradients (Megatron-FSDP's "
      "fsdp_double_buffer, set by nccl_ub): all-gathers one unit ahead, at most two reduce-scatters in flight" },
    { "gradient_accumulation_fusion", CFG_T_BOOL, T(grad_acc_fusion), 0, 1, 0, NULL, NULL, 0, NULL,
      "weight-gradient GEMMs accumulate into the main gradients (Megatron's default); false, with data_parallel "
      "fsdp: each unit's gradients are copied into Megatron-FSDP's reduce-scatter buffer after its backward" },
    { "keep_fp8_transpose_cache", CFG_T_BOOL, T(keep_fp8_transpose), 0, 1, 0, NULL, NULL, 0, NULL,
      "with data_parallel fsdp and FP8 weights (fp8_param_gather): keep each gathered FP8 weight's transpose "
      "(1 B per weight, unsharded) instead of transposing it again before every backward (Megatron-FSDP's "
      "option)" },
    { "fp8_recipe", CFG_T_ENUM, T(fp8_recipe), 0, 1, 0, traincfg_fp8_recipe_names, NULL, 0, NULL,
      "with precision fp8: tensorwise (per-tensor current scaling, FP8-CS; the default) or mxfp8 (a scale per "
      "32 elements, FP8-MX; Blackwell GPUs: gpu mxfp8 true) (Megatron's --fp8-recipe)" },
    { "cpu_offload_layers", CFG_T_U64, T(cpu_offload_layers), 0, 0, 1 << 20, NULL, NULL, 0, NULL,
      "transformer layers whose saved activations are offloaded to the CPU's memory over the host link "
      "(cluster host_link_bandwidth) and fetched back before their backward (Megatron's cpu_offloading_num_layers; "
      "pp 1, recompute none, fewer than the model's layers); 0 = off" },
    { "cross_entropy_fusion_impl", CFG_T_ENUM, T(ce_impl), 0, 1, 0, traincfg_ce_names, NULL, 0, NULL,
      "the loss's kernels (Megatron's --cross-entropy-fusion-impl): native (fp32 logits kept for the backward) "
      "or te (Transformer Engine's fused cross entropy: the gradient written into the 16-bit logits)" },
    { "host_launch", CFG_T_TIME, T(host_launch_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "host time to launch one kernel or collective (the host timeline: a kernel starts no earlier than its "
      "launch; a device-to-host synchronisation lets the GPU's queue run dry), e.g. 3us; 0: the host is never "
      "behind" },
    { "pipeline_model_parallel_layout", CFG_T_STRING, T(pp_layout), 0, 1, 0, NULL, NULL, 512, NULL,
      "layers of each virtual pipeline stage (Megatron's --pipeline-model-parallel-layout), e.g. "
      "\"Et*4|(t*4|)*14tmL\": E embedding, t transformer layer, m MTP module, L loss, | between stages" },
    { "recompute_mla_up_proj", CFG_T_BOOL, T(recompute_mla_up_proj), 0, 1, 0, NULL, NULL, 0, NULL,
      "multi-head latent attention: rerun the up-projections before the backward instead of keeping Q, K, V "
      "(Megatron's --recompute-modules mla_up_proj)" },
    { "tp_grad_comm_overlap", CFG_T_BOOL, T(tp_grad_overlap), 0, 1, 0, NULL, NULL, 0, NULL,
      "the column-parallel layers' input-gradient all-reduce (sp: reduce-scatter) runs beside their weight-gradient "
      "GEMM, and with sp the input all-gather beside the input-gradient GEMM (Megatron-LM since 2021-08, "
      "Megatron-Core, Transformer Engine: the default); false: Megatron-LM before 2021-08, blocking" },
    { "p2p_exchange", CFG_T_ENUM, T(p2p_exchange), 0, 1, 0, traincfg_p2p_exchange_names, NULL, 0, NULL,
      "pipeline transfers without overlap_p2p_comm: batched (Megatron's blocking exchanges; interleaved: a forward's "
      "output sent with the next backward's exchange) or per_pass (each pass sends at its end, receives at its start)" },
    { "host_gemm", CFG_T_TIME, T(host_gemm_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "host time of one GEMM call through Transformer Engine (cuBLASLt descriptors, algorithm heuristic, launch), "
      "in place of host_launch for each GEMM and each expert of a grouped GEMM, times the cluster's "
      "host_time_scale, e.g. 13.7us; 0: host_launch" },
    { "host_gemm_mxfp8", CFG_T_TIME, T(host_gemm_mxfp8_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "host_gemm for an MXFP8 GEMM (fp8_recipe mxfp8: block-scaled cuBLASLt), e.g. 33.4us; 0: host_gemm" },
    { "host_module", CFG_T_TIME, T(host_module_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "the framework's host time per module call (a linear layer's forward or backward, the attention core's) "
      "beside its launches and GEMM calls, times the cluster's host_time_scale, e.g. 22.5us" },
    { "grad_reduce", CFG_T_ENUM, T(grad_reduce), 0, 1, 0, traincfg_grad_reduce_names, NULL, 0, NULL,
      "whose gradient reduction: megatron (overlap_grad_reduce, grad_bucket) or deepspeed (ZeRO's overlap_comm, "
      "reduce_bucket_size)" },
    { "overlap_comm", CFG_T_ENUM, T(overlap_comm), 0, 1, 0, traincfg_overlap_comm_names, NULL, 0, NULL,
      "grad_reduce deepspeed: gradient reductions on a side stream during the backward (DeepSpeed's "
      "zero_optimization.overlap_comm): auto (DeepSpeed's default: true with ZeRO-3), true or false" },
    { "reduce_bucket_size", CFG_T_U64, T(reduce_bucket_elems), 0, 1, 1e12, NULL, NULL, 0, NULL,
      "grad_reduce deepspeed: gradient elements per reduction (DeepSpeed's zero_optimization.reduce_bucket_size), "
      "e.g. 500000000" },
    { "pp_protocol", CFG_T_ENUM, T(pp_protocol), 0, 1, 0, traincfg_p2p_protocol_names, NULL, 0, NULL,
      "NCCL protocol of the pipeline sends: ll, simple, or auto (NCCL: LL up to NCCL_P2P_LL_THRESHOLD, 16 KiB)" },
    { "cp_protocol", CFG_T_ENUM, T(cp_protocol), 0, 1, 0, traincfg_p2p_protocol_names, NULL, 0, NULL,
      "NCCL protocol of context parallelism's ring sends: ll, simple, or auto (LL up to 16 KiB per send)" },
    { "ep_protocol", CFG_T_ENUM, T(ep_protocol), 0, 1, 0, traincfg_p2p_protocol_names, NULL, 0, NULL,
      "NCCL protocol of the expert-parallel all-to-all's sends: ll, simple, or auto (LL up to 16 KiB per peer)" },
    { "host_moe_router", CFG_T_TIME, T(host_moe_router_ps), 0, 0, 1e11, NULL, NULL, 0, NULL,
      "Megatron-Core's Python per MoE layer's forward in the router and the dispatcher's preprocessing, beside "
      "their launches, GEMM call and module, times the cluster's host_time_scale, e.g. 1.798ms; 0: none" },
    { "host_moe_expert", CFG_T_TIME, T(host_moe_expert_ps), 0, 0, 1e10, NULL, NULL, 0, NULL,
      "the framework's Python per local expert of an MoE layer's forward (the grouped MLP's per-expert splits, "
      "buffers and arguments), beside its GEMM calls and modules, times the cluster's host_time_scale, e.g. "
      "107.1us; 0: none" },
    { "cuda_graph_moe_router", CFG_T_BOOL, T(cuda_graph_moe_router), 0, 1, 0, NULL, NULL, 0, NULL,
      "the router and the dispatcher's preprocessing replay as a CUDA graph (Megatron's cuda_graph_scope "
      "moe_router, moe_preprocess): no host_moe_router" },
    { "cuda_graph_attn", CFG_T_BOOL, T(cuda_graph_attn), 0, 1, 0, NULL, NULL, 0, NULL,
      "each layer's attention block (input norm, QKV, core attention, projection, residual) replays its forward "
      "and its backward as a CUDA graph (Megatron's cuda_graph_scope attn): one host_launch each on the host in "
      "place of its kernels' launches, GEMM calls and modules" },
    { "host_moe_dispatch", CFG_T_TIME, T(host_moe_dispatch_ps), 0, 0, 1e11, NULL, NULL, 0, NULL,
      "the all-to-all dispatcher's Python per MoE layer's forward between its synchronisation and the all-to-all, "
      "beside their launches, times the cluster's host_time_scale, e.g. 2.588ms; 0: none" },
    { "moe_dispatcher", CFG_T_ENUM, T(moe_dispatcher), 0, 1, 0, traincfg_moe_dispatcher_names, NULL, 0, NULL,
      "Megatron-Core's token dispatcher: alltoall (moe_token_dispatcher_type alltoall) or hybridep (flex with "
      "moe_flex_dispatcher_backend hybridep: its dispatch and combine kernels do permutation 1 and the "
      "unpermutation, its Python not priced, host_moe_dispatch not applied)" },
    { "recompute_method", CFG_T_ENUM, T(recompute_method), 0, 1, 0, traincfg_recompute_method_names, NULL, 0, NULL,
      "with recompute full (Megatron's --recompute-method): uniform (every layer recomputed, a checkpoint per "
      "recompute_num_layers layers) or block (only the first recompute_num_layers layers of each model chunk "
      "recomputed, the others keep their activations)" },
    { "recompute_num_layers", CFG_T_U64, T(recompute_num_layers), 0, 1, 1 << 20, NULL, NULL, 0, NULL,
      "with recompute full (Megatron's --recompute-num-layers): layers per checkpoint (uniform) or recomputed "
      "layers per model chunk (block), e.g. 5; absent: 1 (uniform)" },
    { "tp_comm_overlap", CFG_T_BOOL, T(tp_comm_overlap), 0, 1, 0, NULL, NULL, 0, NULL,
      "Transformer Engine's userbuffers overlap of the tensor-parallel collectives (Megatron's --tp-comm-overlap; "
      "sp, dense layers): the forward's all-gathers and reduce-scatters and the backward's output-gradient "
      "all-gathers as ring exchanges beside their GEMM's chunks, the column-parallel backward's bulk overlaps on "
      "ub_*_sms SMs" },
    { "ub_qkv_dgrad_sms", CFG_T_U64, T(ub_sms[0]), 0, 0, 1024, NULL, NULL, 0, NULL,
      "with tp_comm_overlap: SMs of the QKV input all-gather beside the QKV data-gradient GEMM (TE's qkv_dgrad "
      "num_sm; default 16, TE's for a bulk overlap)" },
    { "ub_qkv_wgrad_sms", CFG_T_U64, T(ub_sms[1]), 0, 0, 1024, NULL, NULL, 0, NULL,
      "with tp_comm_overlap: SMs of the QKV input-gradient reduce-scatter beside the QKV weight-gradient GEMM "
      "(TE's qkv_wgrad num_sm; default 16)" },
    { "ub_fc1_dgrad_sms", CFG_T_U64, T(ub_sms[2]), 0, 0, 1024, NULL, NULL, 0, NULL,
      "with tp_comm_overlap: SMs of the FC1 input all-gather beside the FC1 data-gradient GEMM (TE's fc1_dgrad "
      "num_sm; default 16)" },
    { "ub_fc1_wgrad_sms", CFG_T_U64, T(ub_sms[3]), 0, 0, 1024, NULL, NULL, 0, NULL,
      "with tp_comm_overlap: SMs of the FC1 input-gradient reduce-scatter beside the FC1 weight-gradient GEMM "
      "(TE's fc1_wgrad num_sm; default 16)" },
    { "grouped_gemm_streams", CFG_T_U64, T(grouped_gemm_streams), 0, 1, 64, NULL, NULL, 0, NULL,
      "CUDA streams a grouped expert GEMM's per-expert GEMMs run on, round robin, their launch gaps overlapping "
      "(Transformer Engine's multi-stream cuBLAS grouped GEMM: 4, the default); 1: one stream, every expert's gap in "
      "series" },
    { "moe_force_load_balancing", CFG_T_BOOL, T(moe_force_load_balancing), 0, 1, 0, NULL, NULL, 0, NULL,
      "the router's logits replaced by random ones for balanced routing (Megatron-Core's "
      "moe_router_force_load_balancing, RandomSTE: logits.clone().normal_(), two kernels per MoE layer's forward), "
      "as NVIDIA's MoE benchmark runs set it" },
    { "moe_a2a_overlap", CFG_T_BOOL, T(moe_a2a_overlap), 0, 1, 0, NULL, NULL, 0, NULL,
      "Megatron-Core's combined 1F1B schedule (overlap_moe_expert_parallel_comm with delay_wgrad_compute, "
      "Megatron-Bridge's moe_a2a_overlap): in the steady phase one micro-batch's forward runs layer by layer "
      "beside another's backward, each one's dispatch and combine all-to-alls on a communication stream under "
      "the other's compute; one more warm-up forward. Needs ep > 1" },
    { "overlap_param_gather", CFG_T_BOOL, T(overlap_param_gather), 0, 1, 0, NULL, NULL, 0, NULL,
      "the distributed optimizer's parameter all-gather beside the next forward (Megatron-Core's "
      "overlap_param_gather): bucket by bucket, each layer's forward waiting for its bucket, the next bucket "
      "issued then; false (Megatron's default): all buckets after the optimizer step. Needs zero 1 or 2 with "
      "data_parallel ddp" },
    { "align_param_gather", CFG_T_BOOL, T(align_param_gather), 0, 1, 0, NULL, NULL, 0, NULL,
      "with overlap_param_gather: the interleaved schedule issues each model chunk's gathers itself, every "
      "pipeline stage at the same virtual micro-batch (Megatron-Core's align_param_gather; Megatron-Bridge sets it "
      "for pp > 1, vp > 1); false: each chunk's first layer issues them" },
    { "overlap_param_gather_with_optimizer_step", CFG_T_BOOL, T(overlap_param_gather_with_optimizer_step), 0, 1, 0,
      NULL, NULL, 0, NULL,
      "Megatron-Core's overlap_param_gather_with_optimizer_step (needs virtual_stages > 1 and the distributed "
      "optimizer): the first model chunk's optimizer steps first and, with overlap_param_gather, its gathers run "
      "beside the other chunks' step; every chunk's gradients and gathers one bucket per buffer (Megatron-Bridge "
      "turns bucketing off with it)" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static void defaults(void *obj)
{
    traincfg *t = obj;
    memset(t, 0, sizeof *t);
    t->micro_batch = 1;
    t->tp = t->pp = t->dp = 1;
    t->ep = 1;
    t->cp = 1;
    t->virtual_stages = 1;
    t->recompute = TRAINCFG_RECOMPUTE_NONE;
    t->precision = GPUCFG_BF16;
    t->main_grads = GPUCFG_BF16;        /* 2 + 2 + 12 = 16 B per parameter (ZeRO paper's count) */
    t->grad_bucket_bytes = 25000000;    /* PyTorch DDP's default bucket_cap_mb = 25 */
    /* Megatron-Core DistributedDataParallelConfig.overlap_grad_reduce = False, Megatron-LM --overlap-grad-reduce
     * off unless given (megatron/core/distributed/distributed_data_parallel_config.py, megatron/training/
     * arguments.py); without it the DDP wrapper sets bucket_size None: one call per buffer (train_step.c) */
    t->overlap_grad_reduce = 0;
    t->collective_algo = 3;             /* auto: NCCL's tuning model picks ring or tree per collective */
    t->protocol = 3;                    /* auto: NCCL's tuning model picks LL, LL128 or Simple */
    t->vocab_divisible_by = 128;
    t->tp_collective_algo = t->dp_collective_algo = TRAINCFG_INHERIT;
    t->pp_protocol = t->cp_protocol = t->ep_protocol = TRAINCFG_P2P_AUTO; /* NCCL's rule by size */
    t->tp_protocol = t->dp_protocol = TRAINCFG_INHERIT;        /* Megatron-LM's --make-vocab-size-divisible-by default */
    /* Megatron-Core runs the attention core in Transformer Engine's DotProductAttention, which picks a
     * fused (flash or cuDNN) kernel whenever one supports the shape (TE's NVTE_FLASH_ATTN and
     * NVTE_FUSED_ATTN default to 1; Megatron-LM --attention-backend auto). Files of 2021-2022 runs set
     * attention: unfused. */
    t->attention = TRAINCFG_ATTENTION_FLASH;
    t->grad_acc_fusion = 1;             /* Megatron-LM --gradient-accumulation-fusion defaults on (with TE) */
    /* the CUDA driver's cuLaunchKernel, measured 3.0 us per kernel (no arguments; 3.3 us with 19) on a GB200
     * host: meta-pytorch/tritonbench pull request 1017, "nop_triton_direct_culaunch" (docs/references.md);
     * a lower bound for eager PyTorch, whose dispatcher and Python come on top */
    t->host_launch_ps = 3000000;
    /* Transformer Engine's nvte_cublas_gemm on the host: median 13.7 us (mean 20.3 us) over 645,099 calls in
     * an nsys profile of Megatron-Core training Qwen3-30B-A3B on one DGX B200 (x86 host), EP 8, MBS 1
     * (yanring/Megatron-MoE-ModelZoo issue 7, 2025-08-18; docs/references.md). TE creates the cuBLASLt
     * descriptors and queries cublasLtMatmulAlgoGetHeuristic on every call (transformer_engine/common/gemm/
     * cublaslt_gemm.cu, cublas_gemm, v2.9), and its grouped GEMM makes one such call per expert. */
    t->host_gemm_ps = 13700000;
    /* a block-scaled GEMM through TE's multi-stream cuBLASLt path on SM100: 8 experts of 128 x 2048 x 2048
     * (NVFP4, operands pre-swizzled, alpha precomputed: the GEMM calls alone) in 0.267 ms, 33.4 us per expert
     * (NVIDIA/TransformerEngine pull request 3134, benchmarks/linear/benchmark_grouped_linear.py, "pure"
     * multi-stream row; docs/references.md). Assumed for MXFP8, which takes the same per-call path with its
     * own scale mode (CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 against VEC16_UE4M3). */
    t->host_gemm_mxfp8_ps = 33400000;
    /* Transformer Engine's te.Linear forward (BF16, hidden 2048, 8192 tokens) takes 99.66 us of CPU time on
     * GB200, where torch.nn.Linear takes 37.08 us against 13.48 us on a DGX H100 (Xeon Platinum 8480C)
     * (NVIDIA/TransformerEngine issue 2053, 2025-08-11): 99.66 x 13.48 / 37.08 = 36.2 us on the DGX host, of
     * which its GEMM call is host_gemm's 13.7 us; the rest, 22.5 us, is the module's. Assumed the same for
     * the module's backward and for the attention core (no figure found); Megatron-Core's wrapper
     * (TEColumnParallelLinear, 115 us per forward in TE pull request 1191, 2024) not counted. */
    t->host_module_ps = 22500000;
    /* Megatron-Core's Python in an MoE layer's forward, from the nsys NVTX ranges of the same issue-7 profile
     * (Qwen3-30B-A3B, one DGX B200, bf16, EP 8, MBS 1, the all-to-all dispatcher, no CUDA graphs; medians of
     * host time; docs/references.md, "Framework host time"): #MOE_ROUTER_AND_PRE 1.9 ms, less what the
     * engine prices in that range for that run (the router GEMM's call and module 36.2 us; four device-to-host
     * copies, the random logits' two kernels (forced balancing), top-k, the aux loss's five (aux_loss 1e-3:
     * Megatron-MoE-ModelZoo model_configs/benchmarking/Qwen3-30B-A3B.yaml), the preprocess's six, the row-id
     * map's three and permutation 1 at host_launch: 22 launches, 66 us; 1,842.8 us before 2026-12-07, when 13 of
     * them were not counted), 1,797.8 us; #MOE_EXPERTS_COMP
     * 2.2 ms for 16 local experts, less the grouped MLP's 32 GEMM calls, 2 modules and the activation's
     * launch (486.4 us), 1,713.6 us: 107.1 us per local expert (the grouped MLP splits its input, allocates
     * and quantizes per expert: TransformerEngine issue 1499). #MOE_DISPATCH (2.6 ms; host_moe_dispatch 2,588
     * us less its four launches: the tokens' and the probabilities' all-to-alls, the chunk sort's two) is off: the range holds the host's wait for the split sizes, on the GPU and
     * through the combine all-to-all on the other ranks, which the host timeline models itself; the backward
     * has no range. */
    t->host_moe_router_ps = 1797800000ull;
    t->host_moe_expert_ps = 107100000ull;
    t->host_moe_dispatch_ps = 0;
    /* Transformer Engine v2.9 (commit 70f5366), the 25.11 container's: GroupedLinear's general_grouped_gemm ->
     * nvte_multi_tensor_gemm -> multi_stream_cublas_gemm (common/gemm/cublaslt_gemm.cu), expert i on compute
     * stream i % 4 (common/util/multi_stream.cpp, get_num_compute_streams: num_compute_streams = 4); the CUTLASS
     * grouped kernel only with NVTE_USE_CUTLASS_GROUPED_GEMM on Hopper (no Megatron-Bridge recipe sets it) */
    t->grouped_gemm_streams = 4;
    /* Megatron-LM's async_tensor_model_parallel_allreduce (NVIDIA/Megatron-LM cf7efd4f5a, 2021-08-30, on unless
     * --no-async-tensor-model-parallel-allreduce), Megatron-Core's LinearWithGradAccumulationAndAsyncCommunication
     * and Transformer Engine's Linear backward all start it asynchronously before the weight-gradient GEMM */
    t->tp_grad_overlap = 1;
    /* Transformer Engine's default num_sm of a bulk overlap (transformer_engine/pytorch/module/base.py,
     * initialize_ub, get_default_config: 16 unless ring_exchange) */
    for (int i = 0; i < 4; i++)
        t->ub_sms[i] = 16;
    t->grad_reduce = TRAINCFG_GRAD_MEGATRON;
    /* DeepSpeed's zero_optimization: overlap_comm None -> stage == 3 (DeepSpeedZeroConfig.overlap_comm_valid),
     * reduce_bucket_size pp_int(5e8) elements (deepspeed/runtime/zero/config.py) */
    t->overlap_comm = TRAINCFG_OVERLAP_COMM_AUTO;
    t->reduce_bucket_elems = 500000000;
}

const compose_kind traincfg_kind = {
    "training", NULL, fields, defaults, offsetof(traincfg, loc), offsetof(traincfg, ref),
    offsetof(traincfg, source), sizeof((traincfg *)0)->source, TRAINCFG_F_EP, NULL,
};

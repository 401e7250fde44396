/* gpumem.h - memory per GPU of one training iteration: weights, gradients, optimizer states and
 * activations, in bytes, for the pipeline stage that needs the most; and the out-of-memory check.
 *
 * Model states (per parameter held by the GPU): weights 2 B (4 B for fp32/tf32 training), gradients 2 B
 * or 4 B (main_grads), optimizer 12 B for mixed precision (fp32 master weights + Adam's two moments) or
 * 8 B for fp32 training: 16-18 B per parameter (docs/references.md "GPUs and clusters"; Rajbhandari et
 * al., ZeRO, arXiv 1910.02054, Sec. 3.1). ZeRO stage 1 divides the optimizer states by dp, stage 2 also
 * the gradients, stage 3 also the weights. Megatron-FSDP (data_parallel fsdp) shards as stage 3 and adds the
 * unsharded buffers of the units in flight: the parameters its all-gather prefetch holds and the gradients
 * of the reduce-scatters it keeps queued (fsdp.h), in weights_bytes and gradients_bytes. Parameters per GPU: the stage's layers split by tp
 * (modelcfg_layer_params_tp), the embedding on the first stage and the final norm + output layer on the
 * last.
 *
 * Activations follow Korthikanti et al., arXiv 2205.05198, Sec. 4, generalised to GQA, SwiGLU and no
 * dropout, with what Megatron-Core's and Transformer Engine's fused kernels save (derivation in gpumem.c):
 * per layer and micro-batch 34sbh + 5as^2b bytes for a 16-bit GPT layer with no parallelism and the
 * unfused attention, 34sbh + 4asb with flash attention (no s x s scores kept); the fused SwiGLU keeps only
 * its input; FP8 training keeps GEMM inputs as 1 B copies and, below ZeRO-3, 2 B of FP8 weight copies per
 * layer weight (counted in weights_bytes). The stage holds as many micro-batches as its 1F1B (or
 * interleaved) warm-up keeps in flight.
 *
 * CPU activation offload (training.cpu_offload_layers = N, pp 1): Transformer Engine's offload handler
 * (transformer_engine/pytorch/cpu_offload_v1.py, AsyncDoubleBufferGroupOffloadHandler) copies layer k's
 * saved tensors (k < N) to pinned host memory and frees them on the GPU at the forward of layer
 * window(k) ~ (k + 1) L / N - 1, one group's copy at a time; the forward's peak is at its end, with the
 * L - N layers not offloaded and the last offloaded group whose copy is waited there: L - N + 1 layers of
 * activations in HBM (the backward brings group k back at window(k), so it never holds more). The N layers'
 * activations live in the CPU's memory: host_activations_bytes per GPU.
 *
 * Pure functions of the configuration; no allocation. */
#ifndef CXLSIM_GPUMEM_H
#define CXLSIM_GPUMEM_H

#include <stdint.h>

#include "config/compose.h"
#include "util/err.h"
#include "config/gpucfg.h"
#include "config/modelcfg.h"
#include "config/traincfg.h"

typedef struct gpumem {
    uint64_t stage;             /* pipeline stage (0-based) this estimate is for */
    uint64_t params;            /* parameters the GPU's stage holds, before ZeRO sharding */
    double weights_bytes, gradients_bytes, optimizer_bytes, activations_bytes, total_bytes;
    /* MoE: the routed experts' share of the above (0 for a dense model). Their parameters are split by ep
     * and etp and ZeRO shards their states over the expert-data-parallel group (tp x dp / (ep x etp)
     * ranks), the rest over dp (Megatron-Core's distributed optimizer); with FP8 their weight copies count
     * with the weights. */
    uint64_t expert_params;     /* routed experts' parameters the GPU's stage holds, before ZeRO sharding */
    uint64_t layers, moe_layers;/* transformer layers of the stage (all its model chunks), MoE ones among them */
    double expert_weights_bytes, expert_gradients_bytes, expert_optimizer_bytes;
    double host_activations_bytes; /* cpu_offload_layers: this GPU's activations in the CPU's memory */
} gpumem;

/* Activation bytes of one transformer layer for one micro-batch on one GPU (tp, sp, recompute of t). */
double gpumem_layer_activation_bytes(const modelcfg *m, const traincfg *t);
/* The same for an MoE layer: the dense layer's attention part plus the routed and shared experts' (gpumem.c). */
double gpumem_moe_layer_activation_bytes(const modelcfg *m, const traincfg *t);
/* Layer-micro-batches of activations stage `stage` holds at its peak (1F1B or interleaved warm-up). */
double gpumem_layers_in_flight(const modelcfg *m, const traincfg *t, uint64_t stage);
/* Ranks that hold the same routed experts, over which ZeRO shards their states: tp x dp x cp / (ep x etp)
 * (1 for a dense model is never used). */
uint64_t gpumem_expert_dp(const traincfg *t);
/* One pipeline stage. The layout must have passed parallel_check(). */
void gpumem_stage(const modelcfg *m, const traincfg *t, uint64_t stage, gpumem *out);
/* The stage with the largest total (first and last stages are the candidates, every stage with an uneven
 * pipeline split; ties: the first). */
void gpumem_estimate(const modelcfg *m, const traincfg *t, gpumem *out);
/* CXL_ECONFIG at `at` when out->total_bytes exceeds the GPU's HBM, naming every part; else 0. */
int gpumem_check(const gpumem *mem, const gpucfg *g, const cfgloc *at, cxl_err *err);

#define GPUMEM_GIB(bytes) ((bytes) / 1073741824.0)

#endif

/* tiers.h - bytes per memory tier (GPU HBM, CXL memory) of one training iteration after the offloads of
 * an experiment's `cxl:` section (cxlcfg.h), and the capacity check of both tiers.
 *
 * Per GPU and pipeline stage, starting from gpumem_stage() (gpumem.h) of that stage, with P the
 * parameters the stage's GPU holds and dp, zero from the training section:
 *
 *   offload_optimizer != none   the optimizer states (fp32 master weights + Adam's two moments, gpumem's
 *                               optimizer_bytes: 12 B per parameter of the ZeRO shard, 8 B for fp32
 *                               training) live in CXL. ZeRO-Offload (Ren et al., USENIX ATC'21, arXiv
 *                               2101.06840) keeps them, and the update, off the GPU;
 *   offload_optimizer == cpu    also an fp32 copy of the GPU's gradient shard, 4 B per parameter of the
 *                               optimizer's shard (P / dp with ZeRO >= 1, else P): ZeRO-Offload moves the
 *                               16-bit gradients to the CPU side and updates from fp32 gradients there.
 *                               The 16-bit gradients stay in HBM (they are produced there);
 *   offload_parameters          the weights live in CXL except two layers' worth in HBM, the layer
 *                               computing and the one being prefetched (ZeRO-Infinity, Rajbhandari et al.,
 *                               SC'21, arXiv 2104.07857: parameters offloaded, fetched layer by
 *                               layer with overlap). One layer's worth is weights_bytes x
 *                               modelcfg_layer_params_tp / P, so a ZeRO-3 shard stays a shard (like
 *                               gpumem, the all-gathered buffer is not counted);
 *   offload_activations         activations are computed as without recomputation: A = the layer
 *                               activations of the training setup with recompute none
 *                               (gpumem_layer_activation_bytes) x gpumem_layers_in_flight; they live in
 *                               CXL except two layers' worth (the layer computing, the one being fetched
 *                               back) in HBM (ZeRO-Infinity's activation checkpoints offloaded to CPU
 *                               memory). The stage-specific extras of gpumem (embedding
 *                               dropout mask, the last stage's logits) stay in HBM.
 *   HBM = everything else.
 * In an MoE model, X of the P parameters are routed experts', sharded by ZeRO over the expert-data-parallel
 * group (gpumem_expert_dp) instead of dp: the fp32 gradient copy is 4 B x ((P - X) / dp + X / edp), and
 * offload_parameters keeps two MoE layers' worth; offload_activations counts the stage's mean layer as
 * gpumem does (MoE layers: gpumem_moe_layer_activation_bytes) and keeps two of its largest layers.
 * cxl.offload_scope experts moves only the experts' part
 * of the optimizer states, the fp32 gradient copy and the weights (gpumem's expert_*_bytes); the rest
 * stays in HBM.
 *
 * CXL domains: per-node memory is one domain per node; a pool is one domain per pool_nodes nodes. GPUs
 * are numbered in Megatron's default rank order (tensor-parallel rank fastest, then data-parallel, then
 * pipeline: rank = tp_rank + tp (dp_rank + dp pp_rank)) and node n holds ranks n x gpus_per_node onward,
 * so a domain's load is the sum of its GPUs' offloaded bytes by their stage. Capacity of a domain =
 * devices x capacity (cxlcfg: capacity_bytes per device). A partitioned pool (one LD-ID per host) is
 * checked as a whole, not per partition.
 *
 * Pure functions of a loaded experiment (expcfg_load: the layout has passed parallel_check); no
 * allocation. Cost: O(pp + domains) gpumem_stage evaluations.
 */
#ifndef CXLSIM_TIERS_H
#define CXLSIM_TIERS_H

#include <stdint.h>

#include "util/err.h"
#include "config/expcfg.h"

/* Parts of the model's memory; in CXL, TIERS_GRADIENTS is the fp32 gradient copy of offload_optimizer cpu. */
enum tiers_part { TIERS_WEIGHTS, TIERS_GRADIENTS, TIERS_OPTIMIZER, TIERS_ACTIVATIONS, TIERS_NPARTS };

typedef struct tiers {
    uint64_t stage;                 /* the pipeline stage that needs the most HBM */
    double hbm_bytes;               /* per GPU on that stage, after offloading */
    double hbm_capacity;            /* the GPU's HBM */
    double cxl_bytes_per_gpu;       /* offloaded per GPU (worst stage) */
    double cxl_bytes_per_domain;    /* the most loaded CXL domain: GPUs attached x their offloaded bytes */
    double cxl_capacity_per_domain; /* devices x capacity */
    uint32_t gpus_per_domain;       /* GPUs whose offloads land in one domain: gpus_per_node x pool_nodes */
    double hbm_part[TIERS_NPARTS];        /* hbm_bytes by part */
    double cxl_domain_part[TIERS_NPARTS]; /* cxl_bytes_per_domain by part */
} tiers;

/* Fill out for the experiment. With memory none (or nothing offloaded) the HBM figures are
 * gpumem_estimate's and the CXL figures 0 (gpus_per_domain 0 with memory none). */
int tiers_compute(const expcfg *x, tiers *out);
/* 0 when both tiers fit. CXL_ECONFIG at the experiment (its top-level mapping), "out of GPU memory ...", when HBM does
 * not hold what is left in it (naming every part left and the offloaded bytes), and at cxl.memory (or
 * the cxl section), "out of CXL memory: ...", when the most loaded domain exceeds its devices (naming
 * the domain, the parts, the devices and the shortfall). Without offloads (memory none included) this
 * is gpumem_check() of the same stage, with its message. */
int tiers_check(const expcfg *x, const tiers *t, cxl_err *err);

#endif

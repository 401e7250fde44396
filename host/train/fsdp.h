/* fsdp.h - Megatron-FSDP (training.data_parallel: fsdp; data_parallel_sharding_strategy optim_grads_params):
 * its FSDP units, how far ahead it all-gathers parameters and how many gradient reduce-scatters it keeps in
 * flight, as Megatron-Core's megatron_fsdp.py and param_and_grad_buffer.py decide them
 * (megatron/core/distributed/fsdp/src/megatron_fsdp/, docs/references.md "Megatron-FSDP").
 *
 * Units. Megatron-Core wraps each TransformerLayer as an FSDP unit (mcore_fsdp_adapter.py,
 * FullyShardedDataParallel: fsdp_unit_modules = [TransformerLayer] with optim_grads_params); the modules
 * outside them (embedding, final norm, output layer) have their own parameters all-gathered before each pass
 * that uses them (_pre_forward_param_unshard: "All-gather the shallow parameters in every forward pass for
 * modules that are not FSDP units"), one more unit each here. A pass over a model chunk meets its units in
 * the order it runs them: forward [embedding] layers [head], backward [head] layers in reverse [embedding]
 * (bracketed: on the first / last virtual stage only).
 *
 * The communication unit, in parameters (elements): max(10^9, 2 x the mean FSDP unit of the model chunk)
 * (MegatronFSDP._init_fsdp_param_and_grad_buffer, suggested_communication_unit_size, "Cap to 1B elements").
 *  - All-gather: before a unit runs, the units from it on are gathered until their parameters together
 *    reach half of it (AllGatherPipeline.all_gather_params with suggested_AG_prefetch_size; buckets already
 *    gathered are not gathered again). In the backward pass after a full recomputation the unit is gathered
 *    once for both (the recomputation's pre-forward hook gathers it without prefetch, the pre-backward hook
 *    then prefetches).
 *  - Reduce-scatter: after a unit's backward its gradients are reduce-scattered on a side stream; before
 *    issuing one, the compute stream waits for the oldest ones while those in flight exceed the unit
 *    (GradReducePipeline.wait_for_previous_grad_reduce, suggested_RS_queue_capacity), and at the end of each
 *    backward pass for all of them (_root_post_backward -> GradReducePipeline.reset).
 *  - fsdp_double_buffer (set by nccl_ub; Megatron-Bridge's Llama 3 recipes turn it on with FSDP): the units'
 *    parameters and gradients live in a pool of two persistent buffers (ParamAndGradBuffer, FixedPoolAllocator
 *    with UB_BUFFER_NUM = 2): the all-gather runs at most one unit ahead, and before a unit's gradients take a
 *    buffer the stream waits until at most one older reduce-scatter is in flight
 *    (GradReducePipeline._enforce_double_buffer_limit: two units live). The embedding and the head are held
 *    to the same two here (in Megatron they sit outside the pool, which only takes same-shaped units).
 *  - gradient_accumulation_fusion off (Megatron-Bridge's Llama 3 recipes with FSDP): the weight-gradient
 *    GEMMs return param.grad and the post-backward hook copies it into the unit's reduce-scatter buffer
 *    (megatron_fsdp.py `_grad_acc`: param.main_grad.copy_(param.grad)) on the compute stream, before the
 *    reduce-scatter: a kernel reading the 16-bit gradient and writing the main gradient per unit and pass.
 *  - FP8 weights (fp8_param_gather) are gathered rowwise; the pre-backward hook makes each one's transpose
 *    for the data-gradient GEMM (fp8_create_transpose_cache: a cast-transpose reading and writing 1 B per
 *    weight) and the release drops it, unless keep_fp8_transpose_cache keeps them all (1 B per FP8 weight of
 *    the stage, unsharded; megatron_fsdp.py release_module_parameters). Not on Blackwell with tensorwise
 *    scaling: its FP8 GEMMs read the rowwise weights (traincfg.h fp8_non_tn; train_setup.c).
 * All-gathers and reduce-scatters share the data-parallel communicator, so NCCL runs them in the order they
 * were issued (megatron/core/distributed/fsdp/src/docs/runtime_schedule.md, footnote 1): the engine's one
 * data-parallel queue.
 *
 * Pure functions of the configuration; no allocation. */
#ifndef CXLSIM_FSDP_H
#define CXLSIM_FSDP_H

#include <stdint.h>

#include "config/modelcfg.h"
#include "config/traincfg.h"

#define FSDP_COMM_UNIT_MIN 1000000000ull   /* 10^9 elements: megatron_fsdp.py's lower bound */

enum fsdp_unit_kind { FSDP_LAYER, FSDP_EMBEDDING, FSDP_HEAD, FSDP_KINDS };

typedef struct fsdp_unit {
    int kind;               /* enum fsdp_unit_kind */
    uint64_t params;        /* parameters on this GPU (after tp), unsharded */
    uint64_t gather_bytes;  /* bytes the all-gather delivers per GPU: 1 B per FP8 weight with fp8_param_gather */
} fsdp_unit;

/* One pass (forward or backward) over one model chunk. */
typedef struct fsdp_pass {
    const modelcfg *m;
    const traincfg *t;
    uint64_t first, layers;     /* the chunk's first layer (model index) and its layers */
    int backward, pre, post;    /* pre / post: a unit before / after the layers (embedding or head) */
    int double_buffer;          /* fsdp_double_buffer: one unit ahead, two reduce-scatters in flight */
    uint32_t n;                 /* units */
} fsdp_pass;

/* The pass of model chunk `chunk` of pipeline rank `rank` (backward: 1). The layout must have passed
 * parallel_check. O(1). */
void fsdp_pass_init(fsdp_pass *p, const modelcfg *m, const traincfg *t, uint64_t rank, uint64_t chunk, int backward);
/* Unit `pos` (< p->n) of the pass, in the order the pass runs them. O(1). */
fsdp_unit fsdp_unit_at(const fsdp_pass *p, uint32_t pos);
/* 1 when the unit's weights are gathered as FP8 (its transpose is made before its backward). */
int fsdp_unit_fp8(const fsdp_unit *u);
/* Model chunk `chunk` of pipeline rank `rank`: its communication unit in elements (over its FSDP units, the
 * transformer layers). */
uint64_t fsdp_comm_unit(const modelcfg *m, const traincfg *t, uint64_t rank, uint64_t chunk);
/* The last unit gathered before unit `pos` runs: the first j >= pos whose units pos..j reach `budget`
 * parameters (the all-gather prefetch, budget = comm unit / 2), or n - 1. O(j - pos). */
uint32_t fsdp_window_end(const fsdp_pass *p, uint32_t pos, uint64_t budget);
/* Peak bytes of unsharded parameters the pass holds: units pos..fsdp_window_end(pos), the largest over pos
 * (a unit is released after it ran). O(n). */
uint64_t fsdp_peak_gathered_bytes(const fsdp_pass *p, uint64_t budget);
/* Peak unsharded gradient elements a backward pass holds when no reduce-scatter ends before it is waited
 * for: the reduce-scatters in flight, at most `capacity` elements before each new one is added. O(n). */
uint64_t fsdp_peak_grad_elems(const fsdp_pass *p, uint64_t capacity);

#endif

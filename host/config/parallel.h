/* parallel.h - the parallel layout of a training run checked against its model, GPU and cluster, and
 * the quantities that follow from it (micro-batches per iteration, layers per pipeline stage).
 *
 * parallel_check() returns 0 or CXL_ECONFIG with a message that names the numbers involved, located at
 * the training key that would have to change (or the training section when the key was not written):
 * sequence parallelism without tensor parallelism; tp not dividing heads, kv_heads, ffn or (with sp)
 * seq_len; pp not dividing layers, or pp x virtual_stages not dividing them (with an uneven split: the
 * first/last stage's layers not leaving an even share for the others, a stage's layers not divisible by
 * virtual_stages, first/last layers given together with the embedding/loss accounting, or (layers +
 * embedding + loss) not divisible by pp x virtual_stages); interleaving without a
 * pipeline or with micro-batches not a multiple of pp (Megatron's rule); global_batch not a multiple of
 * micro_batch x dp; tp x pp x dp not equal to the cluster's GPUs; the cluster's nvlink_domain not whole
 * nodes or not whole in the job (clustercfg_check_domain); a tp group leaving the NVLink domain (tp must
 * divide clustercfg_domain); ZeRO 2/3 with pipeline parallelism;
 * a precision the GPU has no peak for; gradients stored in other than bf16 or fp32; with a mixture of
 * experts (check_moe in parallel.c): ep not dividing the experts, ep x etp not dividing tp x dp, the ETP
 * group leaving the NVLink domain or not dividing the expert FFN, the EP x ETP group leaving the NVLink
 * domain part-way, MoE with tp > 1 but no sp; ep > 1 on a dense model. Each names the valid values.
 */
#ifndef CXLSIM_PARALLEL_H
#define CXLSIM_PARALLEL_H

#include <stdint.h>

#include "config/clustercfg.h"
#include "util/err.h"
#include "config/gpucfg.h"
#include "config/modelcfg.h"
#include "config/traincfg.h"

/* The most micro-batches x virtual_stages x pp per iteration (the schedule the engine holds). */
#define PARALLEL_MAX_SLOTS 4194304u

/* training.dp when the configuration does not give it: the cluster's GPUs / (tp x pp x cp). CXL_ECONFIG when
 * tp x pp x cp does not divide them (after the model's own checks of tp, pp and sp, whose messages say
 * more); nothing changes when dp was given (parallel_check checks it). */
int parallel_derive_dp(const modelcfg *m, const clustercfg *c, traincfg *t, cxl_err *err);
int parallel_check(const modelcfg *m, const gpucfg *g, const clustercfg *c, const traincfg *t, cxl_err *err);

/* global_batch / (micro_batch x dp): micro-batches each pipeline runs per iteration. */
uint64_t parallel_microbatches(const traincfg *t);
/* The expert-tensor-parallel size in effect: training.etp, or tp when it is not given. */
uint64_t parallel_etp(const traincfg *t);
/* layers / pp */
uint64_t parallel_layers_per_stage(const modelcfg *m, const traincfg *t);
/* The transformer layers of model chunk `chunk` (< virtual_stages) on pipeline rank `rank`, and in *first
 * (when not NULL) the index of its first layer; chunks in Megatron's order, chunk c of rank r being model
 * chunk c x pp + r. Megatron-Core's split (megatron/core/transformer/transformer_block.py
 * get_num_layers_to_build, get_transformer_layer_offset): L / (pp x v) each; with
 * decoder_first/last_pipeline_num_layers the first / last stage hold that many (1/v in each chunk) and the
 * other stages share the rest evenly; with account_for_embedding/loss_in_pipeline_split the embedding and
 * the loss count as one layer each: (L + e + l) / (pp x v) per chunk, one fewer in the first (last) model
 * chunk. O(1). The layout must have passed parallel_check(). */
uint64_t parallel_chunk_layers(const modelcfg *m, const traincfg *t, uint64_t rank, uint64_t chunk, uint64_t *first);
/* 1 when one of the uneven-split keys is given */
int parallel_uneven_split(const traincfg *t);

#endif

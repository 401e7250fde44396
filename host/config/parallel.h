/* parallel.h - the parallel layout of a training run checked against its model, GPU and cluster, and
 * the quantities that follow from it (micro-batches per iteration, layers per pipeline stage).
 *
 * parallel_check() returns 0 or CXL_ECONFIG with a message that names the numbers involved, located at
 * the training key that would have to change (or the training section when the key was not written):
 * sequence parallelism without tensor parallelism; tp not dividing heads, kv_heads, ffn or (with sp)
 * seq_len; pp not dividing layers, or pp x virtual_stages not dividing them; interleaving without a
 * pipeline or with micro-batches not a multiple of pp (Megatron's rule); global_batch not a multiple of
 * micro_batch x dp; tp x pp x dp not equal to the cluster's GPUs; ZeRO 2/3 with pipeline parallelism;
 * a precision the GPU has no peak for; gradients stored in other than bf16 or fp32; with a mixture of
 * experts (check_moe in parallel.c): ep not dividing the experts, ep x etp not dividing tp x dp, the ETP
 * group leaving the node or not dividing the expert FFN, the EP x ETP group leaving the NVLink domain
 * part-way, MoE with tp > 1 but no sp; ep > 1 on a dense model. Each names the valid values.
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

#endif

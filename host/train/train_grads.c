/* train_grads.c - the gradient reduction's buckets on the data-parallel stream: Megatron-Core's DDP (per model
 * chunk, the dense and the routed experts' buffers apart) and DeepSpeed's reduce buckets
 * (docs/training.md, "Gradient buckets").
 *
 * Sources: Megatron-LM commit 0d8e071 (Megatron-Core of the 25.11 release):
 *  - megatron/core/distributed/distributed_data_parallel.py: one DDP per model chunk, each with its own
 *    buffers, so a bucket never spans two chunks; bucket_size None (one bucket per buffer) on every pipeline
 *    stage but the first (`if disable_bucketing or pp_rank > 0`) and without overlap_grad_reduce; the routed
 *    experts' parameters (`allreduce` False) in buffers of their own (expert_parallel_buffers,
 *    expert_parallel_bucket_groups), reduced over the expert-data-parallel group (intra_expt_dp_group);
 *  - megatron/training/training.py get_model (Megatron-Bridge v0.2.0 src/megatron/bridge/models/
 *    model_provider.py): disable_bucketing for model chunks after the first;
 *  - megatron/core/distributed/param_and_grad_buffer.py: a bucket's reduce-scatter is issued when the last of
 *    its parameters' gradients is ready (register_grad_ready), in the backward's order.
 * DeepSpeed's reduce buckets (grad_reduce deepspeed) keep one chain over the data-parallel group. */
#include "train/train_eng.h"

int eng_grad_op(const eng *E) { return E->t->zero >= 1 ? COLLALGO_REDUCE_SCATTER : COLLALGO_ALLREDUCE; }

static int megatron_ddp(const eng *E) { return E->t->grad_reduce != TRAINCFG_GRAD_DEEPSPEED; }

uint64_t eng_grads_bucket(const eng *E, const rep *R, uint32_t chunk)
{
    /* disable_bucketing: chunks after the first, or every chunk with overlap_param_gather_with_optimizer_step
     * (Megatron-Bridge v0.2.0 model_provider.py _ddp_wrap); bucket_size None for pp_rank > 0 */
    if (megatron_ddp(E) && (chunk > 0 || R->r > 0 || E->t->overlap_param_gather_with_optimizer_step))
        return UINT64_MAX;
    return E->grad_bucket;
}

/* Gradient bytes into the bucket of buffer x (0 dense, 1 routed experts); a full bucket (or any, with
 * force) is reduced, asynchronously (overlap_grad_reduce: async_op), on its group's queue (DPQ_DP, DPQ_EDP) */
static void bucket_add(eng *E, rep *R, int x, uint64_t bytes, uint64_t bucket, int force)
{
    R->bucket_acc[x] += bytes;
    if (R->bucket_acc[x] && (force || R->bucket_acc[x] >= bucket)) {
        eng_dp_enqueue_group(E, R, eng_grad_op(E), R->bucket_acc[x], x ? "dp.grads.experts" : "dp.grads", x, 0);
        R->bucket_acc[x] = 0;
    }
}

void eng_grads_add(eng *E, rep *R, uint32_t chunk, uint64_t *acc, uint64_t bytes, uint64_t expert)
{
    if (acc) {
        *acc += bytes;
        return;
    }
    uint64_t b = eng_grads_bucket(E, R, chunk);
    if (megatron_ddp(E) && expert) {
        bucket_add(E, R, 1, expert, b, 0);
        bytes -= expert;
    }
    bucket_add(E, R, 0, bytes, b, 0);
}

void eng_grads_chunk_end(eng *E, rep *R)
{
    if (!E->grad_overlap || E->grad_sync || !megatron_ddp(E))
        return;
    /* the experts' buffer first: its last parameter, the chunk's first MoE layer's experts, is ready before the
     * dense buffer's (the chunk's first layer, the embedding) */
    bucket_add(E, R, 1, 0, UINT64_MAX, 1);
    bucket_add(E, R, 0, 0, UINT64_MAX, 1);
}

uint64_t eng_layer_expert_grad_bytes(const eng *E, uint32_t vs, uint32_t layer)
{
    return eng_layer_moe(E, vs, layer) ? E->g.moe_expert_params * E->g.grad_elem_bytes : 0;
}

void eng_dp_enqueue_buckets(eng *E, rep *R, int op, uint64_t total, uint64_t bucket, const char *name)
{
    for (uint64_t left = total; left;) {
        uint64_t b = left < bucket ? left : bucket;
        eng_dp_enqueue(E, R, op, b, name);
        left -= b;
    }
}

/* The gradient bytes of model chunk c of R's stage (*all: layers, embedding, head) and of its routed experts */
static void chunk_grad_bytes(const eng *E, const rep *R, uint32_t c, uint64_t *all, uint64_t *expert)
{
    uint32_t vs = c * E->pp + R->r, stage = schedule_stage_of(E->t->pipeline_schedule, E->pp, R->r, c);
    *all = *expert = 0;
    for (uint32_t l = 0; l < E->chunk_layers[vs]; l++) {
        *all += eng_layer_grad_bytes(E, vs, l);
        *expert += eng_layer_expert_grad_bytes(E, vs, l);
    }
    if (stage == 0)
        *all += E->g.embed_grad_bytes;
    if (stage == E->pp * E->v - 1)
        *all += E->g.head_grad_bytes;
}

void eng_grads_flush(eng *E, rep *R)
{
    /* what a bucket still holds (none with Megatron's DDP: each chunk's end reduced its own) */
    bucket_add(E, R, 1, 0, UINT64_MAX, 1);
    bucket_add(E, R, 0, 0, UINT64_MAX, 1);
    if (E->grad_overlap || E->grad_sync || traincfg_dpcp(E->t) <= 1)
        return;
    /* all gradients after the backward pass: DeepSpeed's buckets; Megatron's one call per buffer and model
     * chunk (each chunk's finish_grad_sync: its bucket groups, then its expert bucket groups), each synchronous
     * (async_op False: the compute stream waits for it, so the next, on the other group's stream, follows it) */
    if (!megatron_ddp(E)) {
        uint64_t total = R->params * E->g.grad_elem_bytes;   /* layers, embedding, head */
        eng_dp_enqueue_buckets(E, R, eng_grad_op(E), total, E->grad_bucket, "dp.grads");
        return;
    }
    for (uint32_t c = 0; c < E->v; c++) {
        uint64_t all = 0, expert = 0;
        chunk_grad_bytes(E, R, c, &all, &expert);
        eng_dp_enqueue_group(E, R, eng_grad_op(E), all - expert, "dp.grads", DPQ_DP, 1);
        eng_dp_enqueue_group(E, R, eng_grad_op(E), expert, "dp.grads.experts", DPQ_EDP, 1);
    }
}

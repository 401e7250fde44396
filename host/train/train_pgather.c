/* train_pgather.c - the distributed optimizer's parameter all-gather (ZeRO >= 1 with Megatron-Core's DDP): its
 * buckets (per model chunk, the dense buffers' chain and the routed experts', the latter over the
 * expert-data-parallel group), after the optimizer step or with training.overlap_param_gather beside the
 * iteration's first forward
 * (docs/training.md, "Overlapped parameter all-gather").
 *
 * Sources: Megatron-LM commit 0d8e071 (Megatron-Core of the 25.11 release):
 *  - megatron/core/distributed/param_and_grad_buffer.py: one buffer per (parameter dtype, gradient dtype); a
 *    Transformer Engine FP8 weight (is_float8tensor) has its own uint8 buffer, 1 B per element, except MXFP8
 *    weights with the distributed optimizer, whose all-gather goes through the gradient buffer viewed as bf16
 *    (2 B; reuse_grad_buf_for_mxfp8_param_ag copies them into the MXFP8 weights after it); buckets are cut in
 *    the parameters' reverse order (the backward's) at bucket_size elements; partition_buckets makes each
 *    bucket a group of its own, and with an FP8 buffer merges every other buffer's buckets into the group of
 *    the FP8 buffer's last bucket, the first the forward uses;
 *  - megatron/core/distributed/distributed_data_parallel.py: next_param_gather_bucket_group chains the groups in
 *    the forward's order; a forward pre-hook on each module calls finish_param_sync of its parameters' group,
 *    which issues the group's gather if it was not (the first one), waits for it and issues the next group's
 *    (not with align_param_gather, where the schedule issues them);
 *  - megatron/core/optimizer/distrib_optimizer.py step_with_ready_grads: without overlap_param_gather the
 *    gathers are issued, and waited for, right after the optimizer step;
 *  - megatron/training/training.py get_model (and Megatron-Bridge v0.2.0 src/megatron/bridge/models/
 *    model_provider.py): disable_bucketing for model chunks after the first: one bucket each;
 *    distributed_data_parallel.py: bucket_size None on pipeline ranks after the first (pp_rank > 0); the
 *    parameters with `allreduce` False (the routed experts') in expert_parallel_buffers, whose bucket groups
 *    (expert_parallel_bucket_groups, over intra_expt_dp_group) chain among themselves;
 *  - megatron/core/optimizer/__init__.py get_megatron_optimizer and optimizer.py ChainedOptimizer
 *    step_with_ready_grads: with overlap_param_gather_with_optimizer_step, chunk 0's optimizer steps first and its
 *    bucket groups (dense and experts') are dispatched then (force_dispatch), beside the rest of the step; its
 *    pre-hooks only wait (skip_next_bucket_dispatch); Megatron-Bridge's _ddp_wrap turns bucketing off for every chunk;
 *  - each process group's collectives on its own NCCL stream (PyTorch ProcessGroupNCCL): the dense chain's on the
 *    data-parallel group's queue, the experts' on the expert-data-parallel group's (train_net.c), side by side;
 *  - megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving: with
 *    align_param_gather chunks 0 and 1 are issued before the first forward, chunk k + 1 (k >= 1) before the
 *    forward of virtual micro-batch k pp - rank (the first of chunk k, counted from rank 0).
 * One iteration stands for the steady state: the gathers of the parameters it uses (the previous step's) run at
 * its start. */
#include <stdlib.h>

#include "train/train_eng.h"

/* FP8 weights gathered as FP8 (1 B): per-tensor scaling with fp8_param_gather (Float8Tensor's uint8 data) */
static int fp8_buffer(const eng *E)
{
    const traincfg *t = E->t;
    return t->precision == GPUCFG_FP8 && t->fp8_param_gather && !traincfg_mxfp8(t);
}

/* The elements of position `pos` of the forward of model chunk vs (the embedding, each layer, the head) that
 * sit in the FP8 buffer (*fp8) and in the 16/32-bit one (*wide), of the dense buffers (x 0) or of the routed
 * experts' (x 1: Megatron-Core's expert_parallel_buffers, parameters with `allreduce` False). A layer's norms are
 * counted with its weights. */
static void pos_elems(const eng *E, uint32_t vs, int first_vs, int last_vs, uint32_t pos, int x, uint64_t *fp8,
                      uint64_t *wide)
{
    uint32_t L = E->chunk_layers[vs];
    *fp8 = *wide = 0;
    if (first_vs && pos == 0) {
        *wide = x ? 0 : E->g.embed_params;
    } else if (last_vs && pos == (uint32_t)first_vs + L) {
        *wide = x ? 0 : E->g.head_params;
    } else {
        uint32_t l = pos - (uint32_t)first_vs;
        uint64_t p = eng_layer_params(E, vs, l), e = eng_layer_moe(E, vs, l) ? E->g.moe_expert_params : 0;
        if (E->t->grad_reduce == TRAINCFG_GRAD_DEEPSPEED)
            e = 0;  /* DeepSpeed's ZeRO optimizer: one chain over the data-parallel group (the same buckets as
                     * Megatron's DDP; DeepSpeed's allgather_bucket_size not modelled) */
        p = x ? e : p - e;
        if (fp8_buffer(E) && !eng_layer_bf16(E, vs, l))
            *fp8 = p;
        else
            *wide = p;
    }
}

uint64_t eng_pg_elem_bytes(const eng *E, int fp8) { return fp8 ? 1 : E->g.weight_elem_bytes; }

/* Whether the distributed optimizer gathers parameters after the step or in the forward: ZeRO 1-2 with
 * Megatron-Core's DDP and more than one data-parallel rank */
static int gathers(const eng *E)
{
    const traincfg *t = E->t;
    return t->zero >= 1 && t->zero <= 2 && traincfg_dpcp(t) > 1 && t->data_parallel == TRAINCFG_DP_DDP;
}

/* The buckets of buffer chain x (0 dense, 1 routed experts) of model chunk c of R's stage, appended at
 * R->pg_*[*nb]: cut in the backward's order (the head, the last layer, ..., the embedding) at `cut` elements
 * of the FP8 buffer, or of the only one; with an FP8 buffer the 16/32-bit buffer's buckets join the FP8
 * buffer's last group, the forward's first (partition_buckets) */
static void chain(eng *E, rep *R, uint32_t c, int x, uint64_t cut, uint32_t *nb)
{
    uint32_t vs = c * E->pp + R->r, L = E->chunk_layers[vs];
    uint32_t stage = schedule_stage_of(E->t->pipeline_schedule, E->pp, R->r, c);
    int first_vs = stage == 0, last_vs = stage == E->pp * E->v - 1, two = fp8_buffer(E);
    uint32_t npos = L + (uint32_t)first_vs + (uint32_t)last_vs, lo = *nb;
    uint64_t wide_bytes = 0, total = 0;
    for (uint32_t p = 0; p < npos; p++) {
        uint64_t f, w;
        pos_elems(E, vs, first_vs, last_vs, p, x, &f, &w);
        wide_bytes += w * eng_pg_elem_bytes(E, 0);
        total += f * eng_pg_elem_bytes(E, 1) + w * eng_pg_elem_bytes(E, 0);
    }
    if (!total)
        return;
    uint64_t acc = 0, bytes = 0;
    for (uint32_t k = npos; k-- > 0;) {
        uint64_t f, w;
        pos_elems(E, vs, first_vs, last_vs, k, x, &f, &w);
        acc += two ? f : f + w;
        bytes += f * eng_pg_elem_bytes(E, 1) + (two ? 0 : w * eng_pg_elem_bytes(E, 0));
        if (k == 0 && !acc && *nb > lo) {
            /* the forward's first positions hold none of the chain's elements (the embedding in the FP8 buffer's
             * chain, the dense layers in the experts'): the last bucket, the one they would wait for, takes them */
            R->pg_last[*nb - 1] = 0;
        } else if (acc >= cut || k == 0) {
            /* in backward order now; pg_last is the first position the bucket holds until reversed */
            R->pg_last[*nb] = k;
            R->pg_bytes[*nb] = bytes;
            R->pg_edp[*nb] = (uint8_t)x;
            (*nb)++;
            acc = bytes = 0;
        }
    }
    /* forward order: reverse; each bucket's last position is one before the next bucket's first */
    for (uint32_t i = lo, j = *nb - 1; i < j; i++, j--) {
        uint32_t a = R->pg_last[i];
        uint64_t b = R->pg_bytes[i];
        R->pg_last[i] = R->pg_last[j], R->pg_bytes[i] = R->pg_bytes[j];
        R->pg_last[j] = a, R->pg_bytes[j] = b;
    }
    for (uint32_t i = lo; i < *nb; i++)
        R->pg_last[i] = i + 1 < *nb ? R->pg_last[i + 1] - 1 : npos - 1;
    if (two)
        R->pg_bytes[lo] += wide_bytes;
}

int eng_pg_setup(eng *E)
{
    const traincfg *t = E->t;
    E->pg = t->overlap_param_gather && gathers(E);
    E->pg_align = E->pg && t->align_param_gather;
    /* the split step is policy_opt_hbm.c's (an offloaded optimizer's steps are not split: its chunk 0 gathers
     * with the others) */
    E->pg_opt = E->pg && t->overlap_param_gather_with_optimizer_step && E->v > 1 && E->opt == &policy_opt_hbm;
    /* bucket_size in elements: the gradient buckets' (grad_bucket bytes of gradients); none without
     * overlap_grad_reduce (Megatron's DDP sets bucket_size None: one bucket per buffer) */
    uint64_t bucket = E->grad_bucket == UINT64_MAX ? UINT64_MAX : E->grad_bucket / E->g.grad_elem_bytes;
    if (!bucket)
        bucket = 1;
    if (!gathers(E))
        return 0;
    for (uint32_t r = 0; r < E->pp; r++) {
        rep *R = &E->reps[r];
        uint32_t cap = 0;
        for (uint32_t c = 0; c < E->v; c++)
            cap += 2 * (E->chunk_layers[c * E->pp + r] + 2);
        R->pg_first = calloc(E->v + 1, sizeof *R->pg_first);
        R->pg_last = calloc(cap, sizeof *R->pg_last);
        R->pg_bytes = calloc(cap, sizeof *R->pg_bytes);
        R->pg_enq = calloc(cap, sizeof *R->pg_enq);
        R->pg_edp = calloc(cap, sizeof *R->pg_edp);
        if (!R->pg_first || !R->pg_last || !R->pg_bytes || !R->pg_enq || !R->pg_edp)
            return eng_oom(E);
        uint32_t nb = 0;
        for (uint32_t c = 0; c < E->v; c++) {
            R->pg_first[c] = nb;
            /* bucket_size None (one bucket per buffer) on pipeline stages after the first (`pp_rank > 0`) and for
             * model chunks after the first (disable_bucketing) */
            uint64_t cut = c > 0 || r > 0 || t->overlap_param_gather_with_optimizer_step ? UINT64_MAX : bucket;
            chain(E, R, c, 0, cut, &nb);
            chain(E, R, c, 1, cut, &nb);
        }
        R->pg_first[E->v] = nb;
        /* with overlap_param_gather_with_optimizer_step chunk 0's were issued in the previous iteration's optimizer
         * step (eng_pg_with_step): in place, the pre-hooks only wait (skip_next_bucket_dispatch) */
        for (uint32_t i = 0; i < nb; i++)
            R->pg_enq[i] = E->pg_opt && i < R->pg_first[1] ? 0 : UINT64_MAX;
    }
    return 0;
}

void eng_pg_free(rep *R)
{
    free(R->pg_first);
    free(R->pg_last);
    free(R->pg_bytes);
    free(R->pg_enq);
    free(R->pg_edp);
}

/* Bucket group b's all-gather on its group's queue: asynchronous with overlap_param_gather (async_op, beside the
 * other group's queue), else synchronous (start_param_sync after the step: each call after the one before) */
static void issue(eng *E, rep *R, uint32_t b)
{
    if (R->pg_enq[b] != UINT64_MAX)
        return;
    int g = R->pg_edp[b] ? DPQ_EDP : DPQ_DP;
    eng_dp_enqueue_group(E, R, COLLALGO_ALLGATHER, R->pg_bytes[b], g == DPQ_EDP ? "dp.params.experts" : "dp.params", g,
                         !E->pg);
    R->pg_enq[b] = R->dq[g].enq;
}

int eng_pg_after_step(eng *E, rep *R)
{
    /* Megatron-FSDP keeps the updated parameters sharded: the next forward gathers them unit by unit */
    if (!gathers(E))
        return 0;
    /* without overlap_param_gather every bucket group of every chunk (its dense groups, then its experts'),
     * start_param_sync(force_sync) in step_with_ready_grads; with it, a bucket no forward issued (a chunk's
     * first forward run by the combined MoE schedule's pairs, train_a2a.c, which have no pre-hook step here),
     * so that no parameter goes ungathered */
    uint64_t before = R->dq[DPQ_DP].enq + R->dq[DPQ_EDP].enq;
    for (uint32_t b = 0; b < R->pg_first[E->v]; b++)
        issue(E, R, b);
    /* with overlap_param_gather_with_optimizer_step the next iteration's first pre-hook waits for chunk 0's
     * gathers, issued inside the step: waited for here, once per iteration */
    return E->pg_opt || R->dq[DPQ_DP].enq + R->dq[DPQ_EDP].enq != before;
}

void eng_pg_with_step(eng *E, rep *R)
{
    /* model_chunks[0].start_param_sync(force_dispatch=True): its bucket groups, then its expert bucket groups,
     * asynchronously (overlap_param_gather) */
    for (uint32_t b = 0; b < R->pg_first[1]; b++) {
        int g = R->pg_edp[b] ? DPQ_EDP : DPQ_DP;
        eng_dp_enqueue_group(E, R, COLLALGO_ALLGATHER, R->pg_bytes[b], g == DPQ_EDP ? "dp.params.experts" : "dp.params",
                             g, 0);
    }
}

static void issue_chunk(eng *E, rep *R, uint32_t c)
{
    if (c >= E->v)
        return;
    for (uint32_t b = R->pg_first[c]; b < R->pg_first[c + 1]; b++)
        issue(E, R, b);
}

void eng_pg_item(eng *E, rep *R, const schedule_item *I)
{
    if (!E->pg || !E->pg_align || E->v < 2)
        return;
    if (R->it == 0) {
        issue_chunk(E, R, 0);
        issue_chunk(E, R, 1);
    }
    if (I->backward)
        return;
    /* forward_step_helper_preprocess: virtual micro-batch id + rank, when it is the first micro-batch of its
     * chunk k (ids below pp x v, a multiple of pp), issues chunk k + 1 (k + 1 >= 2) */
    uint64_t id = R->fwd_seen++ + R->r, pp = E->pp;
    if (id < pp * E->v && id % pp == 0 && id / pp + 1 >= 2)
        issue_chunk(E, R, (uint32_t)(id / pp + 1));
}

/* Whether position pos of model chunk c of R's stage holds parameters of chain x */
static int pos_in_chain(const eng *E, const rep *R, uint32_t c, uint32_t pos, int x)
{
    uint32_t vs = c * E->pp + R->r, stage = schedule_stage_of(E->t->pipeline_schedule, E->pp, R->r, c);
    uint64_t f, w;
    pos_elems(E, vs, stage == 0, stage == E->pp * E->v - 1, pos, x, &f, &w);
    return f + w > 0;
}

int eng_pg_need(eng *E, rep *R, const schedule_item *I, uint32_t pos, int x)
{
    /* only the chunk's first micro-batch: its forward gathers the chunk, later ones find it in place */
    if (!E->pg || I->backward || I->microbatch != 0)
        return STEP_NEXT;
    /* the position's bucket in chain x: the dense chain's at the layer's (the embedding's, the head's) first
     * module, the routed experts' at the experts' own pre-hook (the chunk's DDP: bucket_groups,
     * expert_parallel_bucket_groups, each with its own next_param_gather_bucket_group) */
    uint32_t b = R->pg_first[I->chunk], end = R->pg_first[I->chunk + 1];
    while (b < end && R->pg_edp[b] != x)
        b++;
    while (b < end && R->pg_edp[b] == x && R->pg_last[b] < pos)
        b++;
    if (!(b < end && R->pg_edp[b] == x && pos_in_chain(E, R, I->chunk, pos, x)))
        return STEP_NEXT;
    /* finish_param_sync: the group's gather issued if it was not; waited for; then (without align_param_gather)
     * the next group of its chain issued, which its group's stream runs after this one */
    issue(E, R, b);
    if (!E->pg_align && b + 1 < end && R->pg_edp[b + 1] == R->pg_edp[b])
        issue(E, R, b + 1);
    int g = x ? DPQ_EDP : DPQ_DP;
    if (R->dq[g].done >= R->pg_enq[b])
        return STEP_NEXT;
    R->gather_wait[g] = R->pg_enq[b];
    R->gather_wait[1 - g] = 0;
    eng_set_state(E, R, ST_WAIT_GATHER, -1);
    return STEP_BLOCKED;
}

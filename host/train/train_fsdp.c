/* train_fsdp.c - the engine's Megatron-FSDP steps (fsdp.h; training.data_parallel: fsdp): the all-gathers of
 * a pass's units with their prefetch window, the reduce-scatter of each unit's gradients with the limit on
 * those in flight, and the wait for all of them at the end of a backward pass. Called from train_step.c's
 * layer and item steps; declared in train_eng.h. */
#include <stdlib.h>

#include "train/train_eng.h"

int eng_fsdp_on(const eng *E)
{
    return E->t->data_parallel == TRAINCFG_DP_FSDP && traincfg_dpcp(E->t) > 1;
}

/* Queue the all-gathers of the pass's units up to unit `end` (those queued already are not queued again). */
static void fsdp_issue(eng *E, rep *R, uint32_t end)
{
    for (; R->ag_issued <= end && R->ag_issued < R->fp.n && E->rc == 0; R->ag_issued++) {
        fsdp_unit u = fsdp_unit_at(&R->fp, R->ag_issued);
        R->ag_enq[R->ag_issued] = 0;
        if (u.gather_bytes) {
            eng_dp_enqueue(E, R, COLLALGO_ALLGATHER, u.gather_bytes, "dp.fsdp.params");
            R->ag_enq[R->ag_issued] = R->dq[DPQ_DP].enq;
        }
    }
}

/* The prefetch window of unit `pos` (AllGatherPipeline.all_gather_params: the units from pos on until half
 * a communication unit). */
void eng_fsdp_prefetch(eng *E, rep *R, uint32_t pos)
{
    fsdp_issue(E, R, fsdp_window_end(&R->fp, pos, R->fsdp_comm / 2));
}

/* Unit `pos` of the pass needs its parameters: queue its all-gather (and, with `prefetch`, the window's)
 * and wait for it. */
int eng_fsdp_gather(eng *E, rep *R, uint32_t pos, int prefetch)
{
    if (prefetch)
        eng_fsdp_prefetch(E, R, pos);
    else
        fsdp_issue(E, R, pos);
    R->layer_gathered = 1;
    if (R->dq[DPQ_DP].done < R->ag_enq[pos]) {
        R->gather_wait[DPQ_DP] = R->ag_enq[pos];
        eng_set_state(E, R, ST_WAIT_GATHER, -1);
        return STEP_BLOCKED;
    }
    return STEP_NEXT;
}

/* A unit's backward is done: its gradients are reduce-scattered before the next template (fsdp_flush),
 * after the copy into the reduce-scatter buffer without gradient accumulation fusion. */
void eng_fsdp_grads(eng *E, rep *R, fsdp_unit u)
{
    R->rs_pend_elems = u.params;
    R->rs_pend_bytes = u.params * E->g.grad_elem_bytes;
    R->copy_pend = E->fsdp_copy_op[u.kind];
}

/* Drop the reduce-scatters that have finished (the data-parallel queue runs in order). */
static void fsdp_rs_prune(rep *R)
{
    while (R->rs_len && R->rs_enq[R->rs_head] <= R->dq[DPQ_DP].done) {
        R->rs_queued -= R->rs_elems[R->rs_head];
        R->rs_head = (R->rs_head + 1) % R->rs_cap;
        R->rs_len--;
    }
}

/* Wait for reduce-scatter number `enq`; 1 when the stream waits. */
static int fsdp_wait_rs(eng *E, rep *R, uint64_t enq)
{
    if (R->dq[DPQ_DP].done >= enq)
        return 0;
    R->gather_wait[DPQ_DP] = enq;
    eng_set_state(E, R, ST_WAIT_GATHER, -1);
    return 1;
}

/* The pending reduce-scatter: the stream first waits for the oldest ones while those in flight exceed the
 * communication unit (GradReducePipeline.wait_for_previous_grad_reduce), then queues it. */
int eng_fsdp_flush(eng *E, rep *R)
{
    fsdp_rs_prune(R);
    /* fsdp_double_buffer: at most one older reduce-scatter beside the new one */
    uint32_t keep = E->t->fsdp_double_buffer ? 1 : UINT32_MAX;
    if (R->rs_queued > R->fsdp_comm || R->rs_len > keep) {
        uint64_t left = R->rs_queued;
        uint32_t i = 0;
        while (left > R->fsdp_comm || R->rs_len - i > keep)
            left -= R->rs_elems[(R->rs_head + i++) % R->rs_cap];
        if (fsdp_wait_rs(E, R, R->rs_enq[(R->rs_head + i - 1) % R->rs_cap]))
            return STEP_BLOCKED;
    }
    if (R->rs_len == R->rs_cap) {
        uint32_t nc = R->rs_cap ? 2 * R->rs_cap : 64;
        uint64_t *ne = malloc(nc * sizeof *ne), *nl = malloc(nc * sizeof *nl);
        if (!ne || !nl) {
            free(ne);
            free(nl);
            eng_oom(E);
            return STEP_BLOCKED;
        }
        for (uint32_t i = 0; i < R->rs_len; i++) {
            ne[i] = R->rs_enq[(R->rs_head + i) % R->rs_cap];
            nl[i] = R->rs_elems[(R->rs_head + i) % R->rs_cap];
        }
        free(R->rs_enq);
        free(R->rs_elems);
        R->rs_enq = ne;
        R->rs_elems = nl;
        R->rs_cap = nc;
        R->rs_head = 0;
    }
    eng_dp_enqueue(E, R, COLLALGO_REDUCE_SCATTER, R->rs_pend_bytes, "dp.fsdp.grads");
    uint32_t at = (R->rs_head + R->rs_len++) % R->rs_cap;
    R->rs_enq[at] = R->dq[DPQ_DP].enq;
    R->rs_elems[at] = R->rs_pend_elems;
    R->rs_queued += R->rs_pend_elems;
    R->rs_pend_elems = R->rs_pend_bytes = 0;
    return STEP_NEXT;
}

/* The end of a backward pass: the stream waits for every reduce-scatter (_root_post_backward ->
 * GradReducePipeline.reset). */
int eng_fsdp_backward_end(eng *E, rep *R)
{
    fsdp_rs_prune(R);
    return R->rs_len && fsdp_wait_rs(E, R, R->rs_enq[(R->rs_head + R->rs_len - 1) % R->rs_cap]) ? STEP_BLOCKED
                                                                                               : STEP_NEXT;
}

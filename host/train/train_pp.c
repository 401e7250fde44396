/* train_pp.c - a representative's pipeline transfers: its sends to the neighbouring stages and the waits for
 * what it receives, placed per pass or as Megatron's exchanges (training.p2p_exchange; docs/training.md,
 * "What is simulated"). The steps ITEM_PRE_RECV, ITEM_RECV and ITEM_SEND of train_step.c call in here; the
 * transfers' ends come back through eng_xfer_done.
 *
 * Megatron-LM's schedules (megatron/schedules.py of 50a4b5fa02, 2021-04-08; Megatron-Core's
 * megatron/core/pipeline_parallel/schedules.py without --overlap-p2p-communication) call p2p_communication
 * between passes; each call is one exchange, `batch_isend_irecv`, a wait and torch.cuda.synchronize(), so
 * the host starts the next pass only once its receives are in. The interleaved schedule's steady phase sends
 * a forward's output only with the exchange after the next backward (send_forward_backward_recv_forward_
 * backward), which also receives that backward's gradient. An NCCL send of more than the receiver's buffer
 * (COLL_SIMPLE_BUFF_BYTES) completes only into a posted receive, so such a send starts when the receiver's
 * exchange posts it. One approximation: a receive is posted at the exchange before the pass that needs it;
 * Megatron's first and last pipeline ranks post the wrap-around receives, one per exchange, earlier. */
#include "train/coll.h"
#include "train/train_eng.h"

/* The arrival slot of a pipeline message: one per (chunk, micro-batch, direction). */
static uint32_t key_of(const eng *E, uint32_t chunk, uint32_t mb, int dir)
{
    return ((chunk * E->m) + mb) * 2 + (uint32_t)dir;
}

/* The virtual stage of item I on R (schedule_stage_of). */
static uint32_t pos_of(const eng *E, const rep *R, const schedule_item *I)
{
    return schedule_stage_of(E->t->pipeline_schedule, E->pp, R->r, I->chunk);
}

/* The arrival slot of item I's input from the previous (forward) or the next (backward) virtual stage;
 * UINT32_MAX when it has none. */
static uint32_t input_key(const eng *E, const rep *R, const schedule_item *I)
{
    uint32_t pos = pos_of(E, R, I);
    int need = I->backward ? pos != E->pp * E->v - 1 : pos != 0;
    if (!need || I->part == SCHEDULE_W)
        return UINT32_MAX;
    return key_of(E, I->chunk, I->microbatch, I->backward);
}

/* The receive of slot k is posted (batched exchanges): a send held for it starts now. */
static void post_recv(eng *E, rep *R, uint32_t k)
{
    if (k == UINT32_MAX || R->posted[k] >= 0)
        return;
    R->posted[k] = E->now;
    if (R->held[k]) {
        uint32_t xid = R->held[k] - 1;
        R->held[k] = 0;
        R->sent[k] = E->now;
        E->xf[xid].t_start = E->now;
        eng_phase_begin(E, xid);
    }
}

int eng_pp_await_input(eng *E, rep *R, const schedule_item *I)
{
    uint32_t k = input_key(E, R, I);
    if (k == UINT32_MAX)
        return 0;
    post_recv(E, R, k);
    if (R->arrived[k] >= 0)
        return 0;
    R->wait_key = k;
    eng_set_state(E, R, ST_WAIT_RECV, -1);
    return 1;
}

/* Megatron's blocking exchanges: p2p_exchange batched, without overlap_p2p_comm, in the 1F1B and
 * interleaved orders (R->steady_hi > 0 only there). */
static int batched_p2p(const eng *E, const rep *R)
{
    return E->t->p2p_exchange == TRAINCFG_P2P_BATCHED && !E->t->overlap_p2p_comm && R->steady_hi > 0;
}

/* A forward of the interleaved schedule's steady phase: its output waits for the next backward's exchange. */
static int deferred_forward(const eng *E, const rep *R, size_t it)
{
    return E->v > 1 && batched_p2p(E, R) && it >= R->steady_lo && it < R->steady_hi && (it - R->steady_lo) % 2 == 0;
}

int eng_pp_pre_recv(eng *E, rep *R)
{
    if (!batched_p2p(E, R))
        return STEP_NEXT;
    /* the step stays until both are in: a wake-up runs it again */
    if (eng_pp_await_input(E, R, &R->items[R->it]))
        return STEP_BLOCKED;
    if (deferred_forward(E, R, R->it) && R->it + 1 < R->nitems && eng_pp_await_input(E, R, &R->items[R->it + 1]))
        return STEP_BLOCKED;
    return STEP_NEXT;
}

/* Starts the pipeline transfer of item `it`'s output, if it has one for another GPU; 1 when one started
 * (or waits for its receive), 0 when none, -1 when the transfer table is full or its send cannot be planned
 * (the run fails). */
static int start_send(eng *E, rep *R, size_t it)
{
    const schedule_item *I = &R->items[it];
    uint32_t pos = pos_of(E, R, I);
    int need = I->backward ? pos != 0 : pos != E->pp * E->v - 1;
    if (!need || I->part == SCHEDULE_W)
        return 0;
    uint32_t dst, dchunk, v_shape = E->t->pipeline_schedule == TRAINCFG_SCHEDULE_DUALPIPEV;
    schedule_stage_owner(E->t->pipeline_schedule, E->pp, I->backward ? pos - 1 : pos + 1, &dst, &dchunk);
    uint32_t k = key_of(E, dchunk, I->microbatch, I->backward);
    if (dst == R->r) {
        /* the turn of DualPipeV's V: the next stage is this GPU's other chunk, the tensor stays in place */
        R->sent[k] = R->arrived[k] = E->now;
        return 0;
    }
    uint32_t xid = eng_new_xfer(E, XK_PP, R->r, I->backward ? "pp.send.grad" : "pp.send.act");
    if (xid == UINT32_MAX)
        return -1;
    xfer *X = &E->xf[xid];
    X->dst = dst;
    X->key = k;
    /* the boundary between stage r and r+1 (or r-1 and r) */
    uint32_t lo = I->backward ? dst : R->r;
    if (v_shape)
        lo = dst < R->r ? dst : R->r; /* the V never wraps around */
    else if (I->backward ? R->r == 0 : R->r == E->pp - 1)
        lo = E->pp - 1; /* wrap-around between chunks */
    X->fabric = E->pp_intra[lo] ? FAB_INTRA : FAB_INTER;
    X->bytes = (double)E->g.pp_bytes;
    if (eng_plan_pp_send(E, X))
        return -1;
    R->pp_sends++;
    rep *D = &E->reps[dst];
    if (batched_p2p(E, R) && D->posted[k] < 0 && X->bytes > COLL_SIMPLE_BUFF_BYTES) {
        D->held[k] = xid + 1; /* post_recv starts it */
        return 1;
    }
    D->sent[k] = E->now;
    eng_phase_begin(E, xid);
    return 1;
}

int eng_pp_send(eng *E, rep *R)
{
    if (deferred_forward(E, R, R->it)) {
        R->deferred = R->it + 1;
        return STEP_NEXT;
    }
    if (batched_p2p(E, R) && R->it + 1 < R->nitems) {
        /* the exchange posts its receives with its sends: the next pass's input, and the next backward's
         * when the next pass is a steady forward whose own exchange waits */
        post_recv(E, R, input_key(E, R, &R->items[R->it + 1]));
        if (deferred_forward(E, R, R->it + 1) && R->it + 2 < R->nitems)
            post_recv(E, R, input_key(E, R, &R->items[R->it + 2]));
    }
    int sent = 0;
    if (R->deferred) {
        /* the exchange after a steady-phase backward sends the forward before it too */
        int rc = start_send(E, R, R->deferred - 1);
        R->deferred = 0;
        if (rc < 0)
            return STEP_BLOCKED;
        sent += rc;
    }
    int rc = start_send(E, R, R->it);
    if (rc < 0)
        return STEP_BLOCKED;
    sent += rc;
    if (sent && !E->t->overlap_p2p_comm) {
        /* Megatron-LM waits for its point-to-point operations (batch_isend_irecv + wait) */
        eng_set_state(E, R, ST_WAIT_SEND, -1);
        return STEP_BLOCKED;
    }
    return STEP_NEXT;
}

int eng_pp_send_item(eng *E, rep *R, size_t it)
{
    return start_send(E, R, it) < 0 ? -1 : 0;
}

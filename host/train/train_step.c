/* train_step.c - the program of a representative: the named steps of an iteration (train_eng.h: enum
 * item_step, body_seg, layer_step, end_step), its data-parallel stream, and the wake-up of a compute
 * stream when what it waits for has finished.
 *
 * Per schedule item: ITEM_PRE_RECV, ITEM_HOST, ITEM_RECV, ITEM_GATHER, ITEM_BODY (templates of opgraph.h: what comes
 * before the layers, each layer's LAYER_* steps, what comes after, the item's end), ITEM_SEND, ITEM_NEXT;
 * after the last item: END_HOST, END_GRAD_FLUSH, END_TP_GRADS, END_EMBEDDING_SYNC, END_OPTIMIZER (the optimizer
 * policy, policy.h), END_PARAM_GATHER, END_DONE. Each step records the next one before it may block, so
 * eng_advance resumes where the stream stopped. */
#include <stdlib.h>

#include "train/train_eng.h"

void eng_set_state(eng *E, rep *R, int st, int bk)
{
    if (bk >= 0)
        R->bk[bk] += E->now - R->since;
    R->state = st;
    R->since = E->now;
}

/* A transfer that ran beside the compute stream (an asynchronous tensor-parallel collective, the
 * context-parallel exchange) ended: a stream waiting for it (wait_state) goes on, the wait exposed. */
static void beside_done(eng *E, rep *R, int wait_state, const char *what)
{
    if (R->state != wait_state)
        return;
    eng_trace_wait(E, R->r, what, R->since);
    eng_set_state(E, R, ST_RUN, TRAIN_BK_TP);
    eng_advance(E, R);
}

void eng_xfer_done(eng *E, uint32_t xid)
{
    xfer X = E->xf[xid];
    eng_free_xfer(E, xid);
    if (X.side) { /* the MoE communication stream's all-to-all (train_a2a.c) */
        eng_trace_xfer(E, &X);
        eng_a2a_side_done(E, &E->reps[X.rep]);
    } else if (X.kind == XK_TP && E->reps[X.rep].tpa_running && E->reps[X.rep].state != ST_TP) {
        /* an asynchronous tensor-parallel collective (OPGRAPH_TP_ASYNC): the stream ran on beside it */
        rep *R = &E->reps[X.rep];
        eng_trace_xfer(E, &X);
        R->tpa_running = 0;
        beside_done(E, R, ST_WAIT_TPA, "wait tp");
    } else if (X.kind == XK_TP || X.kind == XK_EP) {
        rep *R = &E->reps[X.rep];
        eng_trace_xfer(E, &X);
        eng_set_state(E, R, ST_RUN, TRAIN_BK_TP);
        eng_advance(E, R);
    } else if (X.kind == XK_CP) {
        /* the exchange may outlast the attention kernel it overlaps: the rest is exposed */
        rep *R = &E->reps[X.rep];
        eng_trace_xfer(E, &X);
        R->cp_running = 0;
        beside_done(E, R, ST_WAIT_CP, "wait cp exchange");
    } else if (X.kind == XK_PP) {
        rep *D = &E->reps[X.dst], *S = &E->reps[X.rep];
        eng_trace_xfer(E, &X);
        S->pp_sends--;
        if (S->state == ST_WAIT_SEND && S->pp_sends == 0) {
            eng_trace_wait(E, S->r, "wait pp send", S->since);
            eng_set_state(E, S, ST_RUN, TRAIN_BK_PP);
            eng_advance(E, S);
        }
        D->arrived[X.key] = E->now;
        if (D->state == ST_WAIT_RECV && D->wait_key == X.key) {
            /* waiting since D->since; the message was on the wire from its send */
            int64_t start = D->sent[X.key] > D->since ? D->sent[X.key] : D->since;
            D->bk[TRAIN_BK_BUBBLE] += start - D->since;
            D->bk[TRAIN_BK_PP] += E->now - start;
            eng_trace_wait(E, X.dst, "wait pp", D->since);
            D->since = E->now;
            D->state = ST_RUN;
            eng_advance(E, D);
        }
    } else if (X.kind == XK_DP) {
        rep *R = &E->reps[X.rep];
        eng_trace_xfer(E, &X);
        R->dq[X.dq].running = 0;
        R->dq[X.dq].done++;
        eng_dp_kick(E, R);
        if (R->state == ST_WAIT_GATHER && R->dq[DPQ_DP].done >= R->gather_wait[DPQ_DP] &&
            R->dq[DPQ_EDP].done >= R->gather_wait[DPQ_EDP]) {
            eng_trace_wait(E, R->r, E->t->data_parallel == TRAINCFG_DP_FSDP ? "wait fsdp"
                                    : E->pg ? "wait param gather" : "wait zero-3 gather", R->since);
            eng_set_state(E, R, ST_RUN, TRAIN_BK_DP);
            eng_advance(E, R);
            return;
        }
        if (R->state == ST_WAIT_DP && eng_dp_idle(R) && !R->emb_waiting) {
            eng_trace_wait(E, R->r, "wait dp", R->since);
            eng_set_state(E, R, ST_RUN, TRAIN_BK_DP);
            eng_advance(E, R);
        }
    } else if (X.kind == XK_EMB) {
        eng_trace_xfer(E, &X);
        uint32_t two[2] = { X.rep, X.dst };
        for (int i = 0; i < 2; i++) {
            rep *R = &E->reps[two[i]];
            R->emb_waiting = 0;
            eng_trace_wait(E, R->r, "wait embedding grad all-reduce", R->since);
            eng_set_state(E, R, ST_RUN, TRAIN_BK_DP);
            eng_advance(E, R);
        }
    }
}

void eng_run_kernel(eng *E, rep *R, uint32_t op)
{
    eng_set_state(E, R, ST_KERNEL, -1);
    /* an NCCL collective of this GPU on another stream (the data-parallel / FSDP queue, context
     * parallelism's ring within a node) holds gpu.collective_sms SMs: a kernel launched beside it runs on the
     * rest for its whole time (one launched before it keeps its SMs). A ring that crosses nodes sends over
     * the network, where NCCL gives each peer 2 channels (src/graph/paths.cc ncclTopoGetNchannels): not
     * counted. The tensor-parallel collective beside the weight-gradient GEMM (tpa_running) is left out:
     * Megatron-Bridge runs it through Transformer Engine's userbuffers with per-GEMM SM counts of its own,
     * not NCCL's channels (docs/training.md) */
    int cp_nvlink = R->cp_running && E->cp_group.ranks <= E->cp_group.ranks_per_node;
    int shared = E->dur_shared && (R->dq[DPQ_DP].running || R->dq[DPQ_EDP].running || cp_nvlink ||
                                   R->side_running == 1);
    int64_t dur = shared ? E->dur_shared[op] : E->dur[op];
    if (dur > TRAIN_MAX_PS - E->now) {
        cxl_errf(E->err, CXL_ELIMIT, "kernel %s (%.6g s each) ends past %g s, the longest iteration simulated",
                 E->g.ops[op].name, (double)dur / 1e12, (double)TRAIN_MAX_PS / 1e12);
        E->rc = eng_kernel_blame(E, op, E->err);
        return;
    }
    int64_t end = E->now + dur;
    if (eng_traced(E, R->r) && ctrace_in_window(E->ct, E->now, end)) {
        const op_desc *d = &E->g.ops[op];
        ctrace_arg a[2] = { ARG_S("shape", E->shape[op]), ARG_N("bytes", d->bytes) };
        eng_trace_slice(E, R->r, 0, "kernel", d->name, E->now, end, a, 2);
    }
    if (evq_push(&E->q, end, EV_KERNEL, R->r, 0))
        eng_oom(E);
}

/* Host time on the compute stream (training.host_overhead_*): the GPU waits for the framework; counted as
 * compute, traced as a "host" slice. */
static void run_host(eng *E, rep *R, int64_t ps, const char *name)
{
    eng_set_state(E, R, ST_KERNEL, -1);
    int64_t end = E->now + ps;
    if (eng_traced(E, R->r) && ctrace_in_window(E->ct, E->now, end))
        eng_trace_slice(E, R->r, 0, "host", name, E->now, end, NULL, 0);
    if (evq_push(&E->q, end, EV_KERNEL, R->r, 0))
        eng_oom(E);
}

static void run_tp(eng *E, rep *R, int coll, uint64_t bytes, const char *name)
{
    eng_set_state(E, R, ST_TP, -1);
    eng_start_coll(E, XK_TP, R->r, coll, bytes, name);
}

/* The collectives of an MoE layer block the compute stream like the tensor-parallel ones (Megatron-Core's
 * all-to-all dispatcher runs them on the compute stream between the router and the experts) and count
 * in the same bucket (exposed_tp_comm: model-parallel communication on the stream). */
static void run_moe_coll(eng *E, rep *R, const opgraph_entry *e)
{
    eng_set_state(E, R, ST_TP, -1);
    if (e->kind == OPGRAPH_EP_A2A)
        eng_start_a2a(E, R->r, e->bytes, e->name);
    else
        eng_start_etp_coll(E, R->r, e->coll, e->bytes, e->name);
}

int eng_wait_until(eng *E, rep *R, int64_t t_ps)
{
    if (t_ps <= E->now)
        return 0;
    eng_set_state(E, R, ST_WAIT_TIMER, -1);
    if (evq_push(&E->q, t_ps, EV_TIMER, R->r, 0))
        eng_oom(E);
    return 1;
}

/* ---- the steps of a schedule item ---- */

/* The item R is at, and where its model chunk sits among the pipeline's virtual stages. */
typedef struct item_ctx {
    const schedule_item *I;
    uint32_t vs;                    /* chunk x pp + r: where the chunk's layers are listed (E->chunk_layers) */
    uint32_t pos;                   /* its virtual stage, the place in the pipeline (schedule_stage_of) */
    int first_vs, last_vs;          /* holds the embedding / the head */
} item_ctx;

/* pick_template's third outcome: R->cur_tpl is the template to run */
enum { TPL_READY = 2 };

/* A zero-bubble schedule's W pass (schedule.h): the weight gradients only, from what its B left in place;
 * nothing to receive, gather or send, no recomputation and no host step of its own. */
static int is_w(const item_ctx *c) { return c->I->part == SCHEDULE_W; }

/* The chunk's last micro-batch: its gradients are complete after this backward (a B leaves them to its W).
 * Each chunk's backwards, and its W's, run in micro-batch order (schedule.h). */
static int last_microbatch(const eng *E, const rep *R, const item_ctx *c)
{
    return is_w(c) ? c->I->microbatch + 1 == E->m : R->bwd_done[c->I->chunk] + 1 == E->m;
}

static int item_host(eng *E, rep *R, const item_ctx *c)
{
    R->step = ITEM_RECV;
    eng_pg_item(E, R, c->I);
    if (!E->t->host_microbatch_ps || is_w(c))
        return STEP_NEXT;
    /* the framework's Python for this forward or backward step, before its kernels are queued */
    run_host(E, R, (int64_t)E->t->host_microbatch_ps, c->I->backward ? "host.backward" : "host.forward");
    return STEP_BLOCKED;
}

/* The item's input comes from another GPU: not for the first stage's forward or the last's backward, nor
 * at the turn of DualPipeV's V, where the stage before is this GPU's other chunk. */
static int input_from_peer(const eng *E, const rep *R, const item_ctx *c)
{
    if (c->I->backward ? c->last_vs : c->first_vs)
        return 0;
    uint32_t rank, chunk;
    schedule_stage_owner(E->t->pipeline_schedule, E->pp, c->I->backward ? c->pos + 1 : c->pos - 1, &rank, &chunk);
    return rank != R->r;
}

static int item_gather(eng *E, rep *R, const item_ctx *c)
{
    R->step = ITEM_BODY;
    R->seg = SEG_PRE;
    R->lstep = LAYER_START;
    R->layer = R->entry = 0;
    R->cur_tpl = NULL;
    if (E->t->data_parallel == TRAINCFG_DP_FSDP) {
        fsdp_pass_init(&R->fp, &E->x->model, E->t, R->r, c->I->chunk, c->I->backward);
        R->fsdp_comm = fsdp_comm_unit(&E->x->model, E->t, R->r, c->I->chunk);
        R->ag_issued = 0;
    }
    if (input_from_peer(E, R, c) && !is_w(c) && E->g.pp_gather_bytes) {
        run_tp(E, R, OPGRAPH_ALLGATHER, E->g.pp_gather_bytes, "tp.allgather.pp");
        return STEP_BLOCKED;
    }
    return STEP_NEXT;
}

/* ZeRO-3 (DeepSpeed): each layer's parameters are all-gathered before its forward and again before its
 * backward (recomputation included), the next layer's gather issued as a prefetch while this one
 * computes; the stream waits only for its own layer. */
static int zero3_gather(eng *E, rep *R, const item_ctx *c)
{
    uint64_t bytes = eng_layer_params(E, c->vs, R->layer) * E->g.weight_elem_bytes, mine;
    if (R->gather_next) {
        mine = R->gather_next;
    } else {
        eng_dp_enqueue(E, R, COLLALGO_ALLGATHER, bytes, "dp.zero3.params");
        mine = R->dq[DPQ_DP].enq;
    }
    R->gather_next = 0;
    if (R->layer + 1 < E->chunk_layers[c->vs]) {
        eng_dp_enqueue(E, R, COLLALGO_ALLGATHER, eng_layer_params(E, c->vs, R->layer + 1) * E->g.weight_elem_bytes,
                   "dp.zero3.params");
        R->gather_next = R->dq[DPQ_DP].enq;
    }
    R->layer_gathered = 1;
    if (R->dq[DPQ_DP].done < mine) {
        R->gather_wait[DPQ_DP] = mine;
        eng_set_state(E, R, ST_WAIT_GATHER, -1);
        return STEP_BLOCKED;
    }
    return STEP_NEXT;
}

static void next_layer(rep *R)
{
    R->lstep = LAYER_START;
    R->layer++;
    R->layer_gathered = 0;
    R->layer_fetched = 0;
    R->unit_transposed = 0;
    R->off_layer_done = 0;
}

/* LAYER_GRADS: the layer's gradients are complete after the chunk's last backward; ZeRO-2/3 keep only
 * their shard of the gradients, so they reduce-scatter after every backward. */
static void layer_grads(eng *E, rep *R, const item_ctx *c)
{
    int last_mb = last_microbatch(E, R, c);
    if (eng_fsdp_on(E)) /* Megatron-FSDP refuses zb-h1 and dualpipev (parallel.c): no B/W split here */
        eng_fsdp_grads(E, R, fsdp_unit_at(&R->fp, R->fp.pre + R->layer));
    else if ((last_mb || E->t->zero >= 2) && (E->grad_overlap || E->grad_sync) && c->I->part != SCHEDULE_B)
        eng_grads_add(E, R, c->I->chunk, E->grad_sync ? &R->sync_acc : NULL, eng_layer_grad_bytes(E, c->vs, R->layer),
                  eng_layer_expert_grad_bytes(E, c->vs, R->layer));
    if (!is_w(c)) /* the offload policies act with the input gradient (docs/schedules.md) */
        eng_cxl_layer_out(E, R, c->vs, 1, last_mb);
    /* DDP without gradient accumulation fusion: the layer's weight gradients are added to the main gradients
     * (opgraph_grad_accum_op), run before the next step; 16-bit gradients of the chunk's first backward are
     * taken over by autograd without a kernel */
    uint32_t acc = E->accum_op[eng_layer_moe(E, c->vs, R->layer) ? 1 : 0];
    const traincfg *t = E->t;
    int own_dtype = t->precision == GPUCFG_FP32 || t->precision == GPUCFG_TF32 || t->main_grads != GPUCFG_FP32;
    int taken_over = own_dtype && R->bwd_done[c->I->chunk] == 0;
    if (acc && c->I->part != SCHEDULE_B && !taken_over)
        R->copy_pend = acc;
    next_layer(R);
}

/* The template of the current layer step, after its parameters are in place (ZeRO-3 gather, CXL fetch). */
static int layer_template(eng *E, rep *R, const item_ctx *c)
{
    if (R->layer >= E->chunk_layers[c->vs]) {
        R->seg = SEG_POST;
        return STEP_NEXT;
    }
    if (is_w(c) && R->lstep == LAYER_START) {
        /* the weight gradient needs the saved inputs and output gradients, not the weights */
        R->lstep = LAYER_BACKWARD;
        return STEP_NEXT;
    }
    if (eng_fsdp_on(E) && R->lstep != LAYER_GRADS) {
        uint32_t pos = R->fp.pre + R->layer;
        /* a full recomputation gathers the unit without prefetch; its backward then prefetches */
        int recompute = c->I->backward && R->lstep == LAYER_START && traincfg_layer_recomputed(E->t, R->layer) &&
                        !eng_cxl_keeps_activations(E);
        if (!R->layer_gathered)
            return eng_fsdp_gather(E, R, pos, !recompute);
        if (c->I->backward && R->lstep == LAYER_BACKWARD) {
            eng_fsdp_prefetch(E, R, pos);
            fsdp_unit u = fsdp_unit_at(&R->fp, pos);
            if (E->fsdp_transpose_op && !R->unit_transposed && fsdp_unit_fp8(&u)) {
                /* the pre-backward hook transposes the gathered FP8 weights */
                R->unit_transposed = 1;
                eng_run_kernel(E, R, E->fsdp_transpose_op - 1);
                return STEP_BLOCKED;
            }
        }
    } else if (E->t->zero >= 3 && traincfg_dpcp(E->t) > 1 && R->lstep != LAYER_GRADS && !R->layer_gathered) {
        return zero3_gather(E, R, c);
    } else if (eng_pg_need(E, R, c->I, (uint32_t)c->first_vs + R->layer, 0)) {
        return STEP_BLOCKED;
    }
    if (E->cm && R->lstep == LAYER_START && eng_cxl_layer_in(E, R, c->vs, c->I->backward))
        return STEP_BLOCKED;
    if (c->I->backward && R->lstep == LAYER_START && eng_cpuoff_backward_start(E, R, R->layer))
        return STEP_BLOCKED;
    int moe = eng_layer_moe(E, c->vs, R->layer);
    int var = (eng_layer_bf16(E, c->vs, R->layer) ? OPGRAPH_VAR_BF16 : 0) |
              (eng_layer_windowed(E, c->vs, R->layer) ? OPGRAPH_VAR_WINDOW : 0);
#define TPL(id) (&E->g.tpl[OPGRAPH_VARIANT_OF(id, var)])
    if (!c->I->backward) {
        R->cur_tpl = TPL(moe ? OPGRAPH_MOE_FWD : OPGRAPH_LAYER_FWD);
        return TPL_READY;
    }
    switch (R->lstep) {
    case LAYER_START:
        if (eng_cxl_keeps_activations(E) ||
            (E->t->recompute == TRAINCFG_RECOMPUTE_FULL && !traincfg_layer_recomputed(E->t, R->layer))) {
            /* saved activations come back from CXL instead of being recomputed; with block recomputation
             * the chunk's later layers kept theirs */
            R->lstep = LAYER_BACKWARD;
            return STEP_NEXT;
        }
        R->cur_tpl = TPL(moe ? OPGRAPH_MOE_RECOMPUTE : OPGRAPH_LAYER_RECOMPUTE);
        return TPL_READY;
    case LAYER_BACKWARD:
        R->cur_tpl = TPL(moe ? OPGRAPH_MOE_BWD : OPGRAPH_LAYER_BWD);
        return TPL_READY;
    default:
        layer_grads(E, R, c);
        return STEP_NEXT;
    }
#undef TPL
}

static int wait_dp(eng *E, rep *R);

/* SEG_END: a backward pass hands the head's and embedding's gradients on. */
static int item_body_end(eng *E, rep *R, const item_ctx *c)
{
    if (c->I->backward && eng_fsdp_on(E) && eng_fsdp_backward_end(E, R) == STEP_BLOCKED)
        return STEP_BLOCKED;
    if (c->I->backward) {
        int last_bwd = last_microbatch(E, R, c) || E->t->zero >= 2;
        if (last_bwd && (E->grad_overlap || E->grad_sync) && !eng_fsdp_on(E)) {
            /* the head's weight GEMM runs in W; the embedding's backward, all of it, in B */
            uint64_t *acc = E->grad_sync ? &R->sync_acc : NULL;
            if (c->last_vs && c->I->part != SCHEDULE_B)
                eng_grads_add(E, R, c->I->chunk, acc, E->g.head_grad_bytes, 0);
            if (c->first_vs && !is_w(c))
                eng_grads_add(E, R, c->I->chunk, acc, E->g.embed_grad_bytes, 0);
            if (c->I->part != SCHEDULE_B)
                eng_grads_chunk_end(E, R);
        }
        if (!is_w(c))
            R->bwd_done[c->I->chunk]++;
    }
    R->step = ITEM_SEND;
    if (R->sync_acc) {
        /* DeepSpeed's ZeRO-2/3 without overlap_comm: this backward's buckets reduced on the compute stream */
        eng_dp_enqueue_buckets(E, R, eng_grad_op(E), R->sync_acc, E->grad_bucket, "dp.grads");
        R->sync_acc = 0;
        return wait_dp(E, R);
    }
    return STEP_NEXT;
}

/* The next template of the body: TPL_READY with R->cur_tpl set, or a step's outcome. */
static int pick_template(eng *E, rep *R, const item_ctx *c)
{
    const schedule_item *I = c->I;
    int id;
    if (R->off_wait_ps && eng_cpuoff_wait(E, R))
        return STEP_BLOCKED;
    switch (R->seg) {
    case SEG_PRE:
        id = I->backward ? (c->last_vs ? OPGRAPH_HEAD_BWD : -1) : (c->first_vs ? OPGRAPH_EMBED_FWD : -1);
        if (id < 0) {
            R->seg = SEG_LAYERS;
            return STEP_NEXT;
        }
        if (eng_fsdp_on(E) && !R->layer_gathered)
            return eng_fsdp_gather(E, R, 0, 1);
        if (eng_pg_need(E, R, I, 0, 0))
            return STEP_BLOCKED;
        R->cur_tpl = &E->g.tpl[id];
        return TPL_READY;
    case SEG_LAYERS:
        return layer_template(E, R, c);
    case SEG_POST:
        id = I->backward ? (c->first_vs ? OPGRAPH_EMBED_BWD : -1) : (c->last_vs ? OPGRAPH_HEAD_FWD : -1);
        if (id >= 0 && eng_fsdp_on(E) && !R->layer_gathered)
            return eng_fsdp_gather(E, R, R->fp.n - 1, 1);
        if (id >= 0 && eng_pg_need(E, R, I, (uint32_t)c->first_vs + E->chunk_layers[c->vs], 0))
            return STEP_BLOCKED;
        R->seg = SEG_END;
        if (id < 0)
            return STEP_NEXT;
        R->cur_tpl = &E->g.tpl[id];
        return TPL_READY;
    default:
        return item_body_end(E, R, c);
    }
}

/* The current template has run its last entry. */
static void template_done(eng *E, rep *R, const item_ctx *c)
{
    R->cur_tpl = NULL;
    if (R->seg == SEG_PRE || R->seg == SEG_END) {
        /* the embedding's or the head's pass; under FSDP a unit whose gradients are reduce-scattered */
        if (eng_fsdp_on(E) && c->I->backward)
            eng_fsdp_grads(E, R, fsdp_unit_at(&R->fp, R->seg == SEG_PRE ? 0 : R->fp.n - 1));
        R->layer_gathered = 0;
        if (R->seg == SEG_PRE)
            R->seg = SEG_LAYERS;
    } else if (R->seg == SEG_LAYERS) {
        if (c->I->backward) {
            R->lstep = R->lstep == LAYER_START ? LAYER_BACKWARD : LAYER_GRADS;
        } else {
            eng_cxl_layer_out(E, R, c->vs, 0, 0);
            eng_cpuoff_forward_done(E, R, R->layer);
            next_layer(R);
        }
    }
}

/* The host timeline (docs/training.md, "Host timeline"). The host launches the stream's entries in order,
 * host_launch each (a kernel: its host time, train_setup.c host_kernel_ps: launches, cuBLAS calls and the
 * framework's module), running ahead of the GPU, which starts an entry no earlier than its launch. A
 * device-to-host copy (OPGRAPH_DTOH) starts when the stream reaches its point; the host's synchronisation
 * on it (OPGRAPH_HOST_SYNC) holds the host until then, so the launches after it come no earlier than that
 * point: with the queue run dry the GPU waits for them. Launches on the host's clock: 1 when the stream
 * must wait for the entry's launch (R->host_wait, an EV_TIMER). */
static uint64_t entry_launches(const eng *E, const opgraph_entry *e)
{
    switch (e->kind) {
    case OPGRAPH_KERNEL: return E->g.ops[e->op].launches > 1 ? E->g.ops[e->op].launches : 1;
    case OPGRAPH_TP_COLL: case OPGRAPH_EP_A2A: case OPGRAPH_ETP_COLL: case OPGRAPH_CP_P2P: return 1;
    default: return 0;
    }
}

int eng_host_launch(eng *E, rep *R, const opgraph_entry *e)
{
    uint64_t per = E->t->host_launch_ps;
    if (e->kind == OPGRAPH_HOST_SYNC) {
        if (R->dtoh_ps > R->host_ps)
            R->host_ps = R->dtoh_ps;
        return 0;
    }
    if (e->kind == OPGRAPH_HOST_PY) {
        /* the framework's Python: the host is busy, the stream untouched */
        if (per)
            R->host_ps += (int64_t)((double)e->bytes * clustercfg_python_scale(&E->x->cluster) + 0.5);
        if (R->host_ps > TRAIN_MAX_PS)
            R->host_ps = TRAIN_MAX_PS;
        return 0;
    }
    if (e->kind == OPGRAPH_DTOH) {
        /* the copies are launched on a side stream, which waits for the compute stream's point */
        R->host_ps += (int64_t)(per * e->bytes);
        R->dtoh_ps = R->host_ps > E->now ? R->host_ps : E->now;
        return 0;
    }
    if (R->launch_paid || !per)
        return 0;
    R->launch_paid = 1;
    eng_host_issue(E, R, e);
    if (R->host_ps <= E->now)
        return 0;
    R->host_wait = 1;
    return eng_wait_until(E, R, R->host_ps);
}

int64_t eng_host_issue(eng *E, rep *R, const opgraph_entry *e)
{
    uint64_t per = E->t->host_launch_ps;
    if (e->kind == OPGRAPH_HOST_SYNC || e->kind == OPGRAPH_HOST_PY || e->kind == OPGRAPH_DTOH) {
        eng_host_launch(E, R, e); /* (never waits for these) */
        return R->host_ps;
    }
    /* a kernel's host time (train_setup.c host_kernel_ps), else a launch; in a CUDA graph (opgraph.h) the
     * graph's one launch at its first entry; held to TRAIN_MAX_PS */
    if (per)
        R->host_ps += e->graph ? (e->graph == OPGRAPH_GRAPH_HEAD ? (int64_t)per : 0)
                      : e->kind == OPGRAPH_KERNEL ? E->host[e->op] : (int64_t)(entry_launches(E, e) * per);
    if (R->host_ps > TRAIN_MAX_PS)
        R->host_ps = TRAIN_MAX_PS;
    return R->host_ps;
}

static int item_body(eng *E, rep *R, const item_ctx *c)
{
    int pair = eng_a2a_body(E, R);
    if (pair >= 0)
        return pair;
    if (R->copy_pend) {
        uint32_t op = R->copy_pend - 1;
        R->copy_pend = 0;
        eng_run_kernel(E, R, op);
        return STEP_BLOCKED;
    }
    if (R->rs_pend_bytes && eng_fsdp_flush(E, R) == STEP_BLOCKED)
        return STEP_BLOCKED;
    if (!R->cur_tpl) {
        int s = pick_template(E, R, c);
        if (s != TPL_READY)
            return s;
        R->entry = 0;
    }
    if (R->entry >= R->cur_tpl->n) {
        template_done(E, R, c);
        return STEP_NEXT;
    }
    const opgraph_entry *e = &R->cur_tpl->e[R->entry];
    /* a split backward: B leaves the weight-gradient entries to W, which runs only those (both wait for an
     * asynchronous collective they started) */
    if (c->I->part != SCHEDULE_BW && e->wgrad != is_w(c) && e->kind != OPGRAPH_TP_WAIT) {
        R->entry++;
        return STEP_NEXT;
    }
    /* the routed experts' forward pre-hook (their first grouped linear's), after the attention, the router and
     * the dispatch: their chain's gather (once done, this finds it in place) */
    if (e->experts_hook && R->seg == SEG_LAYERS && eng_pg_need(E, R, c->I, (uint32_t)c->first_vs + R->layer, 1))
        return STEP_BLOCKED;
    return eng_run_entry(E, R, e, &R->entry);
}

int eng_run_entry(eng *E, rep *R, const opgraph_entry *e, uint32_t *idx)
{
    if (e->kind == OPGRAPH_TP_WAIT || (R->tpa_running && e->kind != OPGRAPH_KERNEL && e->kind != OPGRAPH_CP_P2P &&
                                       e->kind != OPGRAPH_CP_WAIT && e->kind != OPGRAPH_DTOH &&
                                       e->kind != OPGRAPH_HOST_SYNC && e->kind != OPGRAPH_HOST_PY)) {
        /* the stream waits for the asynchronous collective (before another collective: then runs that) */
        if (e->kind == OPGRAPH_TP_WAIT)
            (*idx)++;
        if (!R->tpa_running)
            return STEP_NEXT;
        eng_set_state(E, R, ST_WAIT_TPA, -1);
        return STEP_BLOCKED;
    }
    if (eng_host_launch(E, R, e))
        return STEP_BLOCKED;
    R->launch_paid = 0;
    (*idx)++;
    if (e->kind == OPGRAPH_DTOH || e->kind == OPGRAPH_HOST_SYNC || e->kind == OPGRAPH_HOST_PY)
        return STEP_NEXT;
    if (e->kind == OPGRAPH_TP_ASYNC) {
        /* started beside the compute stream, which goes on to the weight-gradient GEMM */
        R->tpa_running = 1;
        eng_start_coll(E, XK_TP, R->r, e->coll, e->bytes, e->name);
        return STEP_NEXT;
    }
    if (e->kind == OPGRAPH_CP_P2P) {
        /* started beside the compute stream, which goes on to the attention kernel */
        R->cp_running = 1;
        eng_start_cp(E, R->r, e->bytes, e->name);
        return STEP_NEXT;
    }
    if (e->kind == OPGRAPH_CP_WAIT) {
        if (!R->cp_running)
            return STEP_NEXT;
        eng_set_state(E, R, ST_WAIT_CP, -1);
        return STEP_BLOCKED;
    }
    if (e->kind == OPGRAPH_KERNEL)
        eng_run_kernel(E, R, e->op);
    else if (e->kind == OPGRAPH_TP_COLL)
        run_tp(E, R, e->coll, e->bytes, e->name);
    else
        run_moe_coll(E, R, e);
    return STEP_BLOCKED;
}

static item_ctx ctx_of(const eng *E, const rep *R, size_t it)
{
    item_ctx c;
    c.I = &R->items[it];
    c.vs = c.I->chunk * E->pp + R->r;
    c.pos = schedule_stage_of(E->t->pipeline_schedule, E->pp, R->r, c.I->chunk);
    c.first_vs = c.pos == 0;
    c.last_vs = c.pos == E->pp * E->v - 1;
    return c;
}

void eng_layer_grads(eng *E, rep *R, size_t it, uint32_t layer)
{
    item_ctx c = ctx_of(E, R, it);
    R->layer = layer;
    layer_grads(E, R, &c);
}

static int item_next(eng *E, rep *R)
{
    R->it++;
    R->step = ITEM_PRE_RECV;
    E->items_done++;
    if (E->o->progress && (E->items_done & 1023) == 0)
        E->o->progress(E->o->progress_ctx, (double)E->items_done / (double)E->items_total);
    return STEP_NEXT;
}

static int item_step(eng *E, rep *R)
{
    item_ctx c = ctx_of(E, R, R->it);
    switch (R->step) {
    case ITEM_PRE_RECV:
        if (eng_pp_pre_recv(E, R))
            return STEP_BLOCKED;
        R->step = ITEM_HOST;
        return STEP_NEXT;
    case ITEM_HOST: return item_host(E, R, &c);
    case ITEM_RECV:
        R->step = ITEM_GATHER;
        return eng_pp_await_input(E, R, c.I) ? STEP_BLOCKED : STEP_NEXT;
    case ITEM_GATHER: return item_gather(E, R, &c);
    case ITEM_BODY: return item_body(E, R, &c);
    case ITEM_SEND:
        R->step = ITEM_NEXT;
        return eng_a2a_sent(E, R) ? STEP_NEXT : eng_pp_send(E, R);
    default: return item_next(E, R);
    }
}

/* ---- the end of the iteration ---- */

/* The stream waits (ST_WAIT_DP) while data-parallel collectives are queued or running. */
static int wait_dp(eng *E, rep *R)
{
    if (eng_dp_idle(R))
        return STEP_NEXT;
    eng_set_state(E, R, ST_WAIT_DP, -1);
    return STEP_BLOCKED;
}

static int end_host(eng *E, rep *R)
{
    R->end = END_GRAD_FLUSH;
    if (!E->t->host_iteration_ps)
        return STEP_NEXT;
    run_host(E, R, (int64_t)E->t->host_iteration_ps, "host.iteration");
    return STEP_BLOCKED;
}

static int end_grad_flush(eng *E, rep *R)
{
    R->end = END_TP_GRADS;
    eng_grads_flush(E, R);
    return wait_dp(E, R);
}

/* With sequence parallelism each tensor-parallel rank computes the gradient of a parameter it holds whole
 * (norms, MLA's duplicated down-projections, the router) on its own s / tp tokens: Megatron-Core's
 * finalize_model_grads sums them over the tensor-parallel group in one coalesced all-reduce on the compute
 * stream, after the data-parallel gradient sync and before the embedding's (megatron/core/distributed/
 * finalize_model_grads.py, _allreduce_non_tensor_model_parallel_grads; the parameters marked sequence_parallel:
 * TELinear in parallel_mode "duplicated", TopKRouter's weight, TE's norms). train_setup.c sizes it. */
static int end_tp_grads(eng *E, rep *R)
{
    R->end = END_EMBEDDING_SYNC;
    if (!R->tp_grad_bytes)
        return STEP_NEXT;
    run_tp(E, R, OPGRAPH_ALLREDUCE, R->tp_grad_bytes, "tp.allreduce.sp_grads");
    return STEP_BLOCKED;
}

/* Tied embeddings over pipeline stages: all-reduce of the word-embedding gradients between the first and
 * the last stage (Megatron's _allreduce_embedding_grads), started when both wait for it. */
static int end_embedding_sync(eng *E, rep *R)
{
    R->end = END_OPTIMIZER;
    /* (DualPipeV's rank 0 holds both: nothing to exchange) */
    if (!(E->pp > 1 && E->x->model.tied_embeddings && (R->first_stage || R->last_stage)) ||
        (R->first_stage && R->last_stage))
        return STEP_NEXT;
    rep *P = &E->reps[R->first_stage ? E->pp - 1 : 0];
    eng_set_state(E, R, ST_WAIT_DP, -1);
    R->emb_waiting = 1;
    if (P->emb_waiting && P->end == END_OPTIMIZER) {
        uint32_t xid = eng_new_xfer(E, XK_EMB, 0, "pp.embedding_grads");
        if (xid == UINT32_MAX)
            return STEP_BLOCKED;
        xfer *X = &E->xf[xid];
        X->dst = E->pp - 1;
        X->fabric = E->pp_intra[E->pp - 1] ? FAB_INTRA : FAB_INTER;
        X->bytes = (double)(modelcfg_vocab(&E->x->model) * E->x->model.hidden / E->t->tp * E->g.grad_elem_bytes);
        eng_phase_begin(E, xid);
    }
    return STEP_BLOCKED;
}

static int end_optimizer(eng *E, rep *R)
{
    if (E->opt->optimizer_step(E, R) == STEP_BLOCKED)
        return STEP_BLOCKED;
    R->end = END_PARAM_GATHER;
    return STEP_NEXT;
}

/* Distributed optimizer: the parameter all-gathers after the optimizer step (train_pgather.c); the stream
 * waits for them. */
static int end_param_gather(eng *E, rep *R)
{
    R->end = END_DONE;
    return eng_pg_after_step(E, R) ? wait_dp(E, R) : STEP_NEXT;
}

static int end_step(eng *E, rep *R)
{
    switch (R->end) {
    case END_HOST: return end_host(E, R);
    case END_GRAD_FLUSH: return end_grad_flush(E, R);
    case END_TP_GRADS: return end_tp_grads(E, R);
    case END_EMBEDDING_SYNC: return end_embedding_sync(E, R);
    case END_OPTIMIZER: return end_optimizer(E, R);
    case END_PARAM_GATHER: return end_param_gather(E, R);
    default:
        R->finish_ps = E->now;
        eng_set_state(E, R, ST_DONE, -1);
        return STEP_BLOCKED;
    }
}

void eng_advance(eng *E, rep *R)
{
    while (E->rc == 0 && R->state == ST_RUN) {
        int s = R->it < R->nitems ? item_step(E, R) : end_step(E, R);
        if (s == STEP_BLOCKED)
            return;
    }
}

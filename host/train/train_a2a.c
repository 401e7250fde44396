/* train_a2a.c - training.moe_a2a_overlap: Megatron-Core's combined 1F1B schedule (overlap_moe_expert_parallel_comm
 * with delay_wgrad_compute; docs/training.md, "All-to-all overlap"), as Megatron-Core 0d8e071 runs it:
 *   megatron/core/pipeline_parallel/combined_1f1b.py      which passes are paired (one more warm-up forward,
 *                                                          schedule_build_combined; pp = 1: F0, F(k+1) B(k), B(m-1))
 *   megatron/core/models/common/model_chunk_schedule_plan.py  TransformerModelChunkSchedulePlan.run (the layers
 *                                                          of the two passes side by side: forward layer i with
 *                                                          backward layer L - 1 - i, then the rest of either) and
 *                                                          TransformerLayerSchedulePlan.run (the order below)
 *   megatron/core/models/gpt/fine_grained_callables.py     the nodes of a layer (opgraph.h enum opgraph_node) and
 *                                                          backward_dw (the delayed weight gradients)
 *   megatron/core/pipeline_parallel/utils.py               ScheduleNode: each node waits for the CUDA event of
 *                                                          its micro-batch on its stream, runs, records it
 * Per layer pair, the host issues
 *   comm: combine_b                 | dispatch_f, dispatch_b          | combine_f
 *   comp: attn_f, post_attn_f       | mlp_b, mlp_dw_b, mlp_f          | post_attn_b, attn_b, attn_dw_b
 * The nodes of one micro-batch follow one another (its event); the compute and the communication stream each
 * run their work in order; backward_dw runs on the compute stream without the event. So dispatch_f waits for
 * post_attn_f (and combine_b, ahead on its stream), mlp_b for combine_b, dispatch_b for mlp_b (not for its
 * weight gradients), mlp_f for dispatch_f, combine_f for mlp_f, post_attn_b for dispatch_b, and the next
 * layer's attn_f for combine_f, its combine_b for attn_b. The program below places each communication node at
 * the point of the compute stream it waits for and a wait before each compute node that needs one: the
 * dispatch and combine of one micro-batch run under the other's compute. Warm-up and cool-down passes have no
 * partner and run as before: their all-to-alls wait on each other in turn (a node waits for its predecessor).
 *
 * The communication stream holds the all-to-alls (XK_EP, `side`) and the combine node's kernels (the
 * unpermutation and the residual add, which Megatron-Core runs on that stream after the all-to-all), one at
 * a time in order. While an all-to-all runs NCCL holds gpu.collective_sms SMs: the compute stream's kernels
 * run on the rest (eng_run_kernel). The host issues the compute entries in the stream's order and each
 * communication node where Megatron-Core's host does (A2A_LAUNCH: dispatch_f after mlp_b, dispatch_b after
 * mlp_dw_b, the next combine_b after attn_dw_b); a queued entry starts no earlier than its launch. The pass's
 * pipeline sends go before the first backward layer's attention weight gradients and the head (post_forward on
 * the communication stream, post_backward on the compute stream; the items' ITEM_SEND then sends nothing). Not
 * modelled: the communication stream's kernels sharing SMs with the compute stream's. */
#include <stdlib.h>

#include "train/train_eng.h"

/* run_step's third outcome: an entry was issued without blocking, the step goes on */
enum { A2A_AGAIN = 2 };

/* ---- the communication stream ---- */

static void side_kick(eng *E, rep *R)
{
    if (R->side_running || !R->side_len)
        return;
    /* the head entry starts once the host has launched it */
    int64_t launch = R->side[R->side_head].launch_ps;
    if (launch < 0)
        return;
    if (launch > E->now) {
        if (!R->side_timer) {
            R->side_timer = 1;
            if (evq_push(&E->q, launch, EV_SIDE, R->r, 1))
                eng_oom(E);
        }
        return;
    }
    const opgraph_entry *e = R->side[R->side_head].e;
    size_t send_it = R->side[R->side_head].send_it;
    R->side_head = (R->side_head + 1) % A2A_SIDE_CAP;
    R->side_len--;
    if (!e) {
        /* post_forward: NCCL's send is issued from this stream and runs on its own */
        if (eng_pp_send_item(E, R, send_it))
            return;
        R->side_done++;
        side_kick(E, R);
        return;
    }
    if (e->kind == OPGRAPH_KERNEL) {
        R->side_running = 2;
        int64_t end = E->now + E->dur[e->op];
        if (eng_traced(E, R->r) && ctrace_in_window(E->ct, E->now, end)) {
            const op_desc *d = &E->g.ops[e->op];
            ctrace_arg a[2] = { ARG_S("shape", E->shape[e->op]), ARG_N("bytes", d->bytes) };
            eng_trace_slice(E, R->r, 2, "kernel", d->name, E->now, end, a, 2);
        }
        if (evq_push(&E->q, end, EV_SIDE, R->r, 0))
            eng_oom(E);
        return;
    }
    R->side_running = 1;
    uint32_t xid = e->kind == OPGRAPH_EP_A2A ? eng_start_a2a(E, R->r, e->bytes, e->name)
                                             : eng_start_etp_coll(E, R->r, e->coll, e->bytes, e->name);
    if (xid != UINT32_MAX)
        E->xf[xid].side = 1;
}

void eng_a2a_side_done(eng *E, rep *R)
{
    R->side_running = 0;
    R->side_done++;
    side_kick(E, R);
    if (R->state == ST_WAIT_EP && R->side_done >= R->side_wait) {
        eng_trace_wait(E, R->r, "wait ep", R->since);
        eng_set_state(E, R, ST_RUN, TRAIN_BK_TP);
        eng_advance(E, R);
    }
}

void eng_a2a_side_event(eng *E, rep *R, uint32_t b)
{
    if (!b) {
        eng_a2a_side_done(E, R);
        return;
    }
    R->side_timer = 0;
    side_kick(E, R);
}

/* ---- the program of a pair ---- */

static void emit(rep *R, uint8_t op, uint8_t tpl, uint8_t node, uint8_t sel, uint32_t layer, uint32_t ref)
{
    if (R->a2a_n < R->a2a_cap)
        R->a2a[R->a2a_n++] = (a2a_step){ op, tpl, node, sel, layer, ref, 0, 0 };
}

/* A2A_SIDE of part `node` of layer `layer` (bwd: the backward's) at the communication stream's point; its index */
static uint32_t side(rep *R, int bwd, uint8_t node, uint32_t layer)
{
    uint32_t at = R->a2a_n;
    emit(R, A2A_SIDE, bwd ? A2A_TPL_BWD : A2A_TPL_FWD, node, A2A_SEL_ALL, layer, 0);
    return at;
}

/* One layer step of TransformerLayerSchedulePlan.run: forward layer fi (fi < 0: none) beside backward layer
 * bj (bj < 0: none). Each communication node is queued where its input is ready (A2A_SIDE) and launched where
 * Megatron-Core's host issues it (A2A_LAUNCH): dispatch_f after mlp_b, dispatch_b after mlp_dw_b, the next
 * layer's combine_b after attn_dw_b. *fside: the forward's last communication step; *cb: the backward layer's
 * combine, queued by the previous backward layer after its attention and launched here (A2A_NONE: not yet). */
static void emit_layer(rep *R, int64_t fi, int64_t bj, uint32_t *fside, uint32_t *cb)
{
    uint32_t f = (uint32_t)fi, b = (uint32_t)bj, df = A2A_NONE, db = A2A_NONE;
    if (bj >= 0 && *cb == A2A_NONE) {
        *cb = side(R, 1, OPGRAPH_NODE_COMBINE, b);
        emit(R, A2A_LAUNCH, 0, 0, 0, 0, *cb);
    } else if (bj >= 0) {
        emit(R, A2A_LAUNCH, 0, 0, 0, 0, *cb); /* queued after the previous layer's attention */
    }
    if (fi >= 0) {
        emit(R, A2A_WAIT, 0, 0, 0, 0, *fside);
        emit(R, A2A_RUN, A2A_TPL_FWD, OPGRAPH_NODE_ATTN, A2A_SEL_ALL, f, 0);
        emit(R, A2A_RUN, A2A_TPL_FWD, OPGRAPH_NODE_POST_ATTN, A2A_SEL_ALL, f, 0);
        df = side(R, 0, OPGRAPH_NODE_DISPATCH, f);
    }
    if (bj >= 0) {
        emit(R, A2A_WAIT, 0, 0, 0, 0, *cb);
        emit(R, A2A_RUN, A2A_TPL_BWD, OPGRAPH_NODE_MLP, A2A_SEL_DGRAD, b, 0);
    }
    if (fi >= 0)
        emit(R, A2A_LAUNCH, 0, 0, 0, 0, df);
    if (bj >= 0) {
        db = side(R, 1, OPGRAPH_NODE_DISPATCH, b);
        emit(R, A2A_RUN, A2A_TPL_BWD, OPGRAPH_NODE_MLP, A2A_SEL_WGRAD, b, 0);
        emit(R, A2A_LAUNCH, 0, 0, 0, 0, db);
    }
    if (fi >= 0) {
        emit(R, A2A_WAIT, 0, 0, 0, 0, df);
        emit(R, A2A_RUN, A2A_TPL_FWD, OPGRAPH_NODE_MLP, A2A_SEL_ALL, f, 0);
        *fside = side(R, 0, OPGRAPH_NODE_COMBINE, f);
        emit(R, A2A_LAUNCH, 0, 0, 0, 0, *fside);
    }
    if (bj >= 0) {
        emit(R, A2A_WAIT, 0, 0, 0, 0, db);
        emit(R, A2A_RUN, A2A_TPL_BWD, OPGRAPH_NODE_POST_ATTN, A2A_SEL_ALL, b, 0);
        emit(R, A2A_RUN, A2A_TPL_RECOMPUTE, A2A_ALL, A2A_SEL_ALL, b, 0);
        emit(R, A2A_RUN, A2A_TPL_BWD, OPGRAPH_NODE_ATTN, A2A_SEL_DGRAD, b, 0);
        *cb = A2A_NONE;
        if (bj > 0) /* the next backward layer's combine waits for this attention's input gradient only */
            *cb = side(R, 1, OPGRAPH_NODE_COMBINE, b - 1);
        if (bj > 0) { /* layer 0's after the pass's sends (build) */
            emit(R, A2A_RUN, A2A_TPL_BWD, OPGRAPH_NODE_ATTN, A2A_SEL_WGRAD, b, 0);
            emit(R, A2A_GRADS, 0, 0, 0, b, 0);
        }
    }
}

/* Where item it's chunk sits: its layers' index (vs) and whether it holds the embedding / the head. */
static void chunk_of(const eng *E, const rep *R, size_t it, uint32_t *vs, int *first, int *last)
{
    const schedule_item *I = &R->items[it];
    uint32_t pos = schedule_stage_of(E->t->pipeline_schedule, E->pp, R->r, I->chunk);
    *vs = I->chunk * E->pp + R->r;
    *first = pos == 0;
    *last = pos == E->pp * E->v - 1;
}

/* TransformerModelChunkSchedulePlan.run for forward item it and backward item it + 1. */
static void build(eng *E, rep *R, size_t it)
{
    uint32_t fvs, bvs;
    int ff, fl, bf, bl;
    chunk_of(E, R, it, &fvs, &ff, &fl);
    chunk_of(E, R, it + 1, &bvs, &bf, &bl);
    int64_t nf = E->chunk_layers[fvs], nb = E->chunk_layers[bvs];
    uint32_t fside = A2A_NONE, cb = A2A_NONE;
    R->a2a_n = R->a2a_i = R->a2a_entry = 0;
    if (ff)
        emit(R, A2A_SEG, 0, A2A_ALL, A2A_SEL_ALL, OPGRAPH_EMBED_FWD, 0);
    if (bl)
        emit(R, A2A_SEG, 1, A2A_ALL, A2A_SEL_ALL, OPGRAPH_HEAD_BWD, 0);
    int64_t both = nf < nb ? nf : nb;
    for (int64_t i = 0; i < both; i++)
        emit_layer(R, i, nb - 1 - i, &fside, &cb);
    for (int64_t i = both; i < nb; i++)
        emit_layer(R, -1, nb - 1 - i, &fside, &cb);
    for (int64_t i = both; i < nf; i++)
        emit_layer(R, i, -1, &fside, &cb);
    /* post_forward on the communication stream after the forward's last combine, post_backward on the compute
     * stream, then the first layer's attention weight gradients; the head's forward and the embedding's
     * backward after them; the pass ends when both streams have */
    uint32_t fsend = R->a2a_n;
    emit(R, A2A_SEND, A2A_TPL_FWD, 0, 0, 0, 0);
    emit(R, A2A_SEND, A2A_TPL_BWD, 0, 0, 0, 0);
    if (nb > 0) {
        emit(R, A2A_RUN, A2A_TPL_BWD, OPGRAPH_NODE_ATTN, A2A_SEL_WGRAD, 0, 0);
        emit(R, A2A_GRADS, 0, 0, 0, 0, 0);
    }
    emit(R, A2A_WAIT, 0, 0, 0, 0, fsend);
    if (fl)
        emit(R, A2A_SEG, 0, A2A_ALL, A2A_SEL_ALL, OPGRAPH_HEAD_FWD, 0);
    if (bf)
        emit(R, A2A_SEG, 1, A2A_ALL, A2A_SEL_ALL, OPGRAPH_EMBED_BWD, 0);
    if (R->a2a_n == R->a2a_cap) /* (at most 23 steps per layer step and 5 more: a2a_cap has room) */
        E->rc = cxl_errf(E->err, CXL_ELIMIT, "internal: the pair's program is longer than %u steps", R->a2a_cap);
}

/* The template step s runs on: layer s->layer of the forward (item it) or backward (it + 1) pass. */
static const opgraph_tpl *step_tpl(const eng *E, const rep *R, const a2a_step *s)
{
    uint32_t vs;
    int first, last;
    if (s->op == A2A_SEG)
        return &E->g.tpl[s->layer];
    /* R->a2a_item: the forward's index + 1, the backward's index */
    chunk_of(E, R, R->a2a_item - (s->tpl == A2A_TPL_FWD), &vs, &first, &last);
    int moe = eng_layer_moe(E, vs, s->layer);
    int var = (eng_layer_bf16(E, vs, s->layer) ? OPGRAPH_VAR_BF16 : 0) |
              (eng_layer_windowed(E, vs, s->layer) ? OPGRAPH_VAR_WINDOW : 0);
    int id = s->tpl == A2A_TPL_FWD ? (moe ? OPGRAPH_MOE_FWD : OPGRAPH_LAYER_FWD)
           : s->tpl == A2A_TPL_BWD ? (moe ? OPGRAPH_MOE_BWD : OPGRAPH_LAYER_BWD)
                                   : (moe ? OPGRAPH_MOE_RECOMPUTE : OPGRAPH_LAYER_RECOMPUTE);
    return &E->g.tpl[OPGRAPH_VARIANT_OF(id, var)];
}

static int selected(const a2a_step *s, const opgraph_entry *e)
{
    if (s->node != A2A_ALL && e->node != s->node)
        return 0;
    if (s->sel == A2A_SEL_ALL || e->kind == OPGRAPH_TP_WAIT)
        return 1;
    return (s->sel == A2A_SEL_WGRAD) == (e->wgrad != 0);
}

static int queued(const opgraph_entry *e)
{
    return e->kind == OPGRAPH_KERNEL || e->kind == OPGRAPH_EP_A2A || e->kind == OPGRAPH_ETP_COLL;
}

/* A2A_SIDE: the node's entries onto the communication stream, not yet launched. */
static int run_side(eng *E, rep *R, a2a_step *s, const opgraph_tpl *T)
{
    s->first = R->side_enq;
    for (uint32_t k = 0; k < T->n; k++) {
        const opgraph_entry *e = &T->e[k];
        if (!selected(s, e) || !queued(e))
            continue;
        if (R->side_len == A2A_SIDE_CAP) {
            E->rc = cxl_errf(E->err, CXL_ELIMIT, "internal: the MoE communication stream holds more than %u entries",
                             A2A_SIDE_CAP);
            return STEP_BLOCKED;
        }
        R->side[R->side_enq % A2A_SIDE_CAP] = (a2a_side){ e, -1, 0 };
        R->side_len++;
        s->seq = ++R->side_enq;
    }
    return STEP_NEXT;
}

/* A2A_LAUNCH of side step s: the host's marks and Python, and each queued entry's launch, in the node's order. */
static void run_launch(eng *E, rep *R, const a2a_step *s, const opgraph_tpl *T)
{
    uint64_t at = s->first;
    for (uint32_t k = 0; k < T->n; k++) {
        const opgraph_entry *e = &T->e[k];
        if (!selected(s, e))
            continue;
        int64_t t = eng_host_issue(E, R, e);
        if (queued(e))
            R->side[at++ % A2A_SIDE_CAP].launch_ps = t;
    }
    side_kick(E, R);
}

/* One step of the program; STEP_NEXT moves on to the next. */
static int run_step(eng *E, rep *R, a2a_step *s)
{
    if (R->copy_pend) {
        uint32_t op = R->copy_pend - 1;
        R->copy_pend = 0;
        eng_run_kernel(E, R, op);
        return STEP_BLOCKED;
    }
    if (s->op == A2A_WAIT) {
        uint64_t want = s->ref == A2A_NONE ? 0 : R->a2a[s->ref].seq;
        if (R->side_done >= want)
            return STEP_NEXT;
        R->side_wait = want;
        eng_set_state(E, R, ST_WAIT_EP, -1);
        return STEP_BLOCKED;
    }
    if (s->op == A2A_SEND) {
        size_t it = R->a2a_item - (s->tpl == A2A_TPL_FWD);
        R->a2a_sent[s->tpl == A2A_TPL_BWD] = it + 1;
        if (s->tpl == A2A_TPL_BWD)
            return eng_pp_send_item(E, R, it) ? STEP_BLOCKED : STEP_NEXT;
        if (R->side_len == A2A_SIDE_CAP) {
            E->rc = cxl_errf(E->err, CXL_ELIMIT, "internal: the MoE communication stream holds more than %u entries",
                             A2A_SIDE_CAP);
            return STEP_BLOCKED;
        }
        R->side[R->side_enq % A2A_SIDE_CAP] = (a2a_side){ NULL, R->host_ps, it };
        R->side_len++;
        s->seq = ++R->side_enq;
        side_kick(E, R);
        return STEP_NEXT;
    }
    if (s->op == A2A_GRADS) {
        eng_layer_grads(E, R, R->a2a_item, s->layer);
        return STEP_NEXT;
    }
    if (s->op == A2A_LAUNCH) {
        const a2a_step *q = &R->a2a[s->ref];
        run_launch(E, R, q, step_tpl(E, R, q));
        return STEP_NEXT;
    }
    const opgraph_tpl *T = step_tpl(E, R, s);
    if (s->op == A2A_SIDE)
        return run_side(E, R, s, T);
    while (R->a2a_entry < T->n && !selected(s, &T->e[R->a2a_entry]))
        R->a2a_entry++;
    if (R->a2a_entry >= T->n)
        return STEP_NEXT;
    int rc = eng_run_entry(E, R, &T->e[R->a2a_entry], &R->a2a_entry);
    return rc == STEP_NEXT ? A2A_AGAIN : rc;
}

int eng_a2a_body(eng *E, rep *R)
{
    if (!E->t->moe_a2a_overlap)
        return -1;
    size_t it = R->it;
    if (R->a2a_ran == it + 1) {
        /* the backward the pair has run: its end (gradients handed on, the pass counted) */
        R->a2a_ran = 0;
        R->seg = SEG_END;
        R->cur_tpl = NULL;
        return -1;
    }
    if (R->a2a_item != it + 1) {
        if (it < R->pair_lo || it >= R->pair_hi || (it - R->pair_lo) % 2 || R->seg != SEG_PRE || R->cur_tpl)
            return -1;
        /* Megatron-Core's pre_backward: the backward's gradient is in before the pair's layers start */
        if (eng_pp_await_input(E, R, &R->items[it + 1]))
            return STEP_BLOCKED;
        R->a2a_item = it + 1;
        build(E, R, it);
        if (E->rc)
            return STEP_BLOCKED;
    }
    while (R->a2a_i < R->a2a_n) {
        int rc = run_step(E, R, &R->a2a[R->a2a_i]);
        if (rc == STEP_BLOCKED)
            return STEP_BLOCKED;
        if (rc == A2A_AGAIN)
            continue;
        R->a2a_i++;
        R->a2a_entry = 0;
    }
    /* the forward's end; its partner's body is done (index + 1) */
    R->a2a_item = 0;
    R->a2a_ran = it + 2;
    R->seg = SEG_END;
    R->cur_tpl = NULL;
    return -1;
}

int eng_a2a_sent(eng *E, rep *R)
{
    if (!E->t->moe_a2a_overlap)
        return 0;
    for (int k = 0; k < 2; k++)
        if (R->a2a_sent[k] == R->it + 1) {
            R->a2a_sent[k] = 0;
            return 1;
        }
    return 0;
}

int eng_a2a_setup(eng *E, cxl_err *err)
{
    if (!E->t->moe_a2a_overlap)
        return 0;
    if (E->nlayer_pol)
        return cfgloc_errf(err, E->t->loc[TRAINCFG_F_MOE_A2A_OVERLAP].file[0] ? &E->t->loc[TRAINCFG_F_MOE_A2A_OVERLAP]
                                                                              : &E->t->ref,
                           "training.moe_a2a_overlap: not modelled with the cxl: offload policies that move layers "
                           "(parameters, activations); valid: those of the optimizer states alone");
    uint32_t most = 0;
    for (uint32_t i = 0; i < E->pp * E->v; i++)
        most = E->chunk_layers[i] > most ? E->chunk_layers[i] : most;
    for (uint32_t r = 0; r < E->pp; r++) {
        rep *R = &E->reps[r];
        uint64_t w = schedule_warmup_combined(E->pp, r, E->m, E->v), total = (uint64_t)E->m * E->v;
        R->pair_lo = (size_t)w;
        R->pair_hi = (size_t)(w + 2 * (total - w));
        R->a2a_cap = 24 * most + 8;
        R->a2a = malloc(R->a2a_cap * sizeof *R->a2a);
        R->side = malloc(A2A_SIDE_CAP * sizeof *R->side);
        if (!R->a2a || !R->side)
            return eng_oom(E);
    }
    return 0;
}

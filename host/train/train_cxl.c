/* train_cxl.c - the training engine's CXL transfers (cxlmem.h) and the slots through which the compute
 * stream waits for them, and the layer hooks of the offload policies (policy.h).
 *
 * A representative's transfer goes to every CXL domain its GPUs sit in (its routes), bytes x GPUs there;
 * it is usable once every domain has finished it and the GPU path's latency has passed. The compute
 * stream waits through two slots: 0, what it needs now, and 1, the next layer's prefetch. */
#include "train/train_eng.h"

uint32_t eng_cxl_start(eng *E, rep *R, uint64_t bytes, cxl_mix mix, int by, uint8_t slot, const char *name)
{
    if (!E->cm || bytes == 0 || R->nroutes == 0)
        return UINT32_MAX;
    uint32_t xid = eng_new_xfer(E, XK_CXL, R->r, name);
    if (xid == UINT32_MAX)
        return xid;
    xfer *X = &E->xf[xid];
    X->slot = slot;
    X->rd = mix.rd;
    X->wr = mix.wr;
    X->by_gpu = (uint8_t)(by == CXL_BY_GPU);
    X->coll_bytes = bytes;
    for (uint32_t i = 0; i < R->nroutes && E->rc == 0; i++) {
        const cxl_route *rt = &R->routes[i];
        double cap = by == CXL_BY_GPU ? (double)E->cx->gpu_path_bw_bps * rt->count : 0;
        int rc = cxlmem_start(E->cm, E->now, rt->domain, rt->host, bytes * rt->count, mix.rd, mix.wr, cap, xid, E->err);
        if (rc)
            E->rc = rc;
        else
            E->xf[xid].pending++;
        if (E->ct && E->domain_active[rt->domain]++ == 0)
            E->domain_since[rt->domain] = E->now;
        if (E->ct && E->port_active[rt->domain * E->ports + rt->host]++ == 0)
            E->port_since[rt->domain * E->ports + rt->host] = E->now;
        if (E->ct)
            eng_trace_domain(E, rt->domain);
    }
    if (slot < CXL_SLOTS) {
        R->slot_xid[slot] = xid;
        R->slot_busy[slot] = 1;
    }
    return xid;
}

int eng_cxl_wait(eng *E, rep *R, int slot)
{
    if (!R->slot_busy[slot])
        return 0;
    R->wait_slot = slot;
    eng_set_state(E, R, ST_WAIT_CXL, -1);
    return 1;
}

void eng_cxl_xfer_done(eng *E, uint32_t xid)
{
    xfer X = E->xf[xid];
    eng_free_xfer(E, xid);
    rep *R = &E->reps[X.rep];
    eng_trace_xfer(E, &X);
    if (X.slot < CXL_SLOTS && R->slot_xid[X.slot] == xid && R->slot_busy[X.slot]) {
        R->slot_busy[X.slot] = 0;
        if (R->state == ST_WAIT_CXL && R->wait_slot == X.slot) {
            eng_trace_wait(E, R->r, "wait cxl", R->since);
            eng_set_state(E, R, ST_RUN, TRAIN_BK_CXL);
            eng_advance(E, R);
        }
    }
}

void eng_cxl_sub_done(eng *E, uint32_t xid)
{
    if (xid >= E->nxf || !E->xf[xid].active || E->xf[xid].kind != XK_CXL) {
        E->rc = cxl_errf(E->err, CXL_EINTERNAL, "internal: completion of an unknown CXL transfer");
        return;
    }
    if (--E->xf[xid].pending)
        return;
    int64_t lat = (int64_t)E->cx->gpu_path_latency_ps;
    if (lat > 0) {
        if (evq_push(&E->q, E->now + lat, EV_CXL_DONE, xid, 0))
            eng_oom(E);
    } else {
        eng_cxl_xfer_done(E, xid);
    }
}

uint64_t eng_cxl_opt_params(const eng *E, const rep *R)
{
    return E->cx->offload_scope == CXLCFG_SCOPE_EXPERTS ? R->expert_shard_params : R->shard_params;
}

uint64_t eng_cxl_layer_param_bytes(const eng *E, int moe, uint64_t per_param)
{
    if (E->cx->offload_scope == CXLCFG_SCOPE_EXPERTS)
        return moe ? E->g.moe_expert_params * per_param : 0;
    return (moe ? E->g.moe_layer_params : E->g.layer_params) * per_param;
}

/* Fetch what the current layer needs from CXL (parameters, saved activations) into slot 0, the next
 * layer's into slot 1 as a prefetch. Returns 1 when the stream must wait. A layer that needs nothing
 * (a dense layer under offload_scope experts) still prefetches the next one. */
static int layer_fetch(eng *E, rep *R, uint64_t now_bytes, uint64_t next_bytes, const char *name)
{
    if (R->layer_fetched)
        return 0;
    R->layer_fetched = 1;
    if (now_bytes == 0) {
        if (next_bytes && !R->prefetched) {
            eng_cxl_start(E, R, next_bytes, CXL_MIX_READ, CXL_BY_GPU, 1, name);
            R->prefetched = 1;
        }
        return 0;
    }
    if (R->prefetched) {
        /* the prefetch becomes the current fetch */
        R->slot_xid[0] = R->slot_xid[1];
        R->slot_busy[0] = R->slot_busy[1];
        R->slot_busy[1] = 0;
        R->prefetched = 0;
        if (R->slot_busy[0])
            E->xf[R->slot_xid[0]].slot = 0;
    } else {
        eng_cxl_start(E, R, now_bytes, CXL_MIX_READ, CXL_BY_GPU, 0, name);
    }
    if (next_bytes) {
        eng_cxl_start(E, R, next_bytes, CXL_MIX_READ, CXL_BY_GPU, 1, name);
        R->prefetched = 1;
    }
    return eng_cxl_wait(E, R, 0);
}

/* The layer bytes of the policies in use that are read before a dense (moe 0) or MoE layer's forward or
 * backward. */
static uint64_t layer_in_bytes(const eng *E, int moe, int backward)
{
    uint64_t b = 0;
    for (uint32_t i = 0; i < E->nlayer_pol; i++) {
        const train_policy_use *u = &E->layer_pol[i];
        if (backward ? u->p->in_backward : u->p->in_forward)
            b += u->layer_bytes[moe];
    }
    return b;
}

int eng_cxl_layer_in(eng *E, rep *R, uint32_t vs, int backward)
{
    int more = R->layer + 1 < E->chunk_layers[vs];
    uint64_t now = layer_in_bytes(E, eng_layer_moe(E, vs, R->layer), backward);
    uint64_t next = more ? layer_in_bytes(E, eng_layer_moe(E, vs, R->layer + 1), backward) : 0;
    return layer_fetch(E, R, now, next, backward ? "cxl.layer.bwd_in" : "cxl.layer.fwd_in");
}

void eng_cxl_layer_out(eng *E, rep *R, uint32_t vs, int backward, int last_microbatch)
{
    int moe = eng_layer_moe(E, vs, R->layer);
    for (uint32_t i = 0; i < E->nlayer_pol; i++) {
        const train_policy_use *u = &E->layer_pol[i];
        if (u->p->layer_out)
            u->p->layer_out(E, R, u->layer_bytes[moe], backward, last_microbatch);
    }
}

int eng_cxl_keeps_activations(const eng *E)
{
    for (uint32_t i = 0; i < E->nlayer_pol; i++) {
        const train_policy_use *u = &E->layer_pol[i];
        if (u->p->keeps_activations && (u->layer_bytes[0] || u->layer_bytes[1]))
            return 1;
    }
    return 0;
}

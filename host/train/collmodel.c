/* collmodel.c - one collective on a cluster, no contention (collmodel.h). */
#include "train/collmodel.h"

#include <math.h>
#include <string.h>

#include "train/coll.h"

int collmodel_init(collmodel *m, const clustercfg *c, const gpucfg *g, cxl_err *err)
{
    memset(m, 0, sizeof *m);
    uint64_t gpn = c->gpus_per_node;
    if (gpn > 1 && g->nvlink_bw_bps == 0)
        return cxl_errf(err, CXL_ECONFIG, "gpu '%s' has no NVLink bandwidth ('nvlink'); a node of %llu GPUs needs one",
                        g->name, (unsigned long long)gpn);
    double share = c->topology == CLUSTERCFG_FAT_TREE ? c->oversubscription : 1.0;
    double nvlink_Bps = c->nvlink_efficiency * (double)g->nvlink_bw_bps / 2.0;
    double nic_Bps = c->nic_efficiency * (double)(c->nic_bw_bps * c->nics_per_node) / (double)gpn / share;
    if (c->nodes > 1 && nic_Bps < 1)
        return cxl_errf(err, CXL_ECONFIG, "cluster '%s': each GPU's share of the NICs is %.3g B/s, below the model's "
                        "1 B/s (nic_bandwidth, nics_per_node)", c->name, nic_Bps);
    m->fab.intra_Bps = nvlink_Bps < 1 ? 1 : (uint64_t)nvlink_Bps;
    m->fab.inter_Bps = (uint64_t)nic_Bps;
    m->fab.intra_latency_ps = c->nvlink_latency_ps;
    uint64_t hops = c->topology == CLUSTERCFG_RAIL_OPTIMIZED ? 1 : 3;
    m->fab.inter_latency_ps = c->nic_latency_ps + hops * c->switch_latency_ps;
    m->gpus_per_node = (uint32_t)gpn;
    m->nodes = (uint32_t)c->nodes;
    m->channels = (uint32_t)c->nccl_channels;
    m->hopper = g->tflops[GPUCFG_FP8] > 0;
    m->amd_cpu = c->cpu_vendor == CLUSTERCFG_CPU_AMD;
    return 0;
}

/* NCCL's ring/Simple chunking on a one-phase ring (coll_ring_totals): bytes grow by the chunk rounding,
 * and each loop repeats the phase's message latencies. */
static int ring_chunks(const collmodel_req *q, uint32_t channels, collalgo_phase *ph, uint64_t *loops, cxl_err *err)
{
    coll_ring_params p;
    coll_ring_params_default(&p, q->ranks, channels);
    uint32_t passes = q->op == COLLALGO_ALLREDUCE ? 2 : 1;
    uint64_t total, steps;
    int rc = coll_ring_totals(&p, passes, q->bytes, &total, &steps, err);
    if (rc || total == 0)
        return rc;
    double ratio = (double)total / ((double)passes * (double)(q->ranks - 1) / (double)q->ranks * (double)q->bytes);
    *loops = steps / ((uint64_t)passes * (q->ranks - 1));
    ph->intra_bytes = (uint64_t)ceil((double)ph->intra_bytes * ratio);
    ph->inter_bytes = (uint64_t)ceil((double)ph->inter_bytes * ratio);
    ph->intra_hops = (uint32_t)(ph->intra_hops * *loops);
    ph->inter_hops = (uint32_t)(ph->inter_hops * *loops);
    return 0;
}

int collmodel_time(const collmodel *m, const collmodel_req *q, collmodel_res *r, cxl_err *err)
{
    memset(r, 0, sizeof *r);
    if (q->ranks == 0)
        return cxl_errf(err, CXL_ECONFIG, "ranks: 0; a collective needs at least 1 rank");
    collalgo_group g = { q->ranks, q->ranks_per_node };
    if (g.ranks_per_node == 0)
        g.ranks_per_node = q->ranks < m->gpus_per_node ? q->ranks : m->gpus_per_node;
    if (g.ranks_per_node == 0 || q->ranks % g.ranks_per_node)
        return cxl_errf(err, CXL_ECONFIG, "ranks_per_node: %u does not divide ranks %u", g.ranks_per_node, q->ranks);
    if (g.ranks_per_node > m->gpus_per_node)
        return cxl_errf(err, CXL_ECONFIG, "ranks_per_node: %u is more than the cluster's %u GPUs per node",
                        g.ranks_per_node, m->gpus_per_node);
    nccltune_comm c = { .ranks = q->ranks, .nodes = q->ranks / g.ranks_per_node,
                        .channels = q->channels ? q->channels : m->channels, .hopper = m->hopper,
                        .amd_cpu = m->amd_cpu };
    if (c.channels == 0 || c.channels > COLL_MAX_CHANNELS)
        return cxl_errf(err, CXL_ECONFIG, "channels: %u; valid: 1 to %u", c.channels, COLL_MAX_CHANNELS);
    uint64_t bus = c.nodes == 1 ? m->fab.intra_Bps : m->fab.inter_Bps;
    if (c.nodes > 1 && m->fab.intra_Bps && m->fab.intra_Bps < bus)
        bus = m->fab.intra_Bps;
    c.bus_gbps = (double)(bus ? bus : 1) / 1e9;
    /* NCCL picks among ring and tree; hierarchical (not an NCCL algorithm) takes the ring's protocol */
    collalgo_algo ask = q->algo == COLLALGO_HIERARCHICAL || (q->algo == COLLALGO_TREE && q->op != COLLALGO_ALLREDUCE)
                            ? COLLALGO_RING : q->algo;
    nccltune_choice ch = { COLLALGO_RING, NCCLTUNE_SIMPLE, 0, 0, 0 };
    int rc = 0;
    if (q->ranks > 1 && q->bytes)
        rc = nccltune_pick(&c, q->op, q->bytes, ask, q->proto, &ch, err);
    if (rc)
        return rc;
    collalgo_phase ph[COLLALGO_MAX_PHASES];
    collalgo_algo plan = q->algo == COLLALGO_AUTO ? ch.algo : q->algo;
    rc = collalgo_plan(q->op, plan, &g, q->bytes, &m->fab, ph, &r->phases, &r->algo, err);
    if (rc)
        return rc;
    r->proto = ch.proto;
    collalgo_fabric f = m->fab;
    if (r->phases && ch.proto == NCCLTUNE_SIMPLE) {
        if (r->algo == COLLALGO_RING && q->op != COLLALGO_BROADCAST && r->phases == 1)
            rc = ring_chunks(q, c.channels, &ph[0], &r->loops, err);
    } else if (r->phases) {
        double fb, fi, fo;
        rc = nccltune_factors(&c, q->op, r->algo == COLLALGO_TREE ? COLLALGO_TREE : COLLALGO_RING, ch.proto, &fb, &fi,
                              &fo, err);
        for (uint32_t i = 0; !rc && i < r->phases; i++) {
            ph[i].intra_bytes = (uint64_t)ceil((double)ph[i].intra_bytes * fb);
            ph[i].inter_bytes = (uint64_t)ceil((double)ph[i].inter_bytes * fb);
        }
        f.intra_latency_ps = (uint64_t)llround((double)f.intra_latency_ps * fi);
        f.inter_latency_ps = (uint64_t)llround((double)f.inter_latency_ps * fo);
    }
    if (rc)
        return rc;
    r->time_ps = r->phases ? collalgo_time_ps(ph, r->phases, &f, err) : 0;
    return r->time_ps < 0 ? (int)r->time_ps : 0;
}

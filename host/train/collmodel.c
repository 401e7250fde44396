/* collmodel.c - one collective as the engine plans and charges it (collmodel.h). */
#include "train/collmodel.h"

#include <math.h>
#include <string.h>

#include "train/coll.h"

void collmodel_fabric(const clustercfg *c, const gpucfg *g, collalgo_fabric *fab, double *intra_Bps,
                      double *inter_Bps)
{
    double intra = (double)g->nvlink_bw_bps * c->nvlink_efficiency;
    double inter = (double)c->nic_bw_bps * (double)c->nics_per_node / (double)c->gpus_per_node * c->nic_efficiency;
    if (c->topology == CLUSTERCFG_FAT_TREE)
        inter /= c->oversubscription;
    if (intra < 1)
        intra = 1;
    memset(fab, 0, sizeof *fab);
    fab->intra_Bps = (uint64_t)intra;
    fab->inter_Bps = inter > 0 ? (uint64_t)inter : 0;
    fab->intra_latency_ps = c->nvlink_latency_ps;
    /* NIC, then one leaf hop (rail-optimized: peers on the same rail) or leaf-spine-leaf (fat tree) */
    fab->inter_latency_ps =
        c->nic_latency_ps + (c->topology == CLUSTERCFG_RAIL_OPTIMIZED ? 1 : 3) * c->switch_latency_ps;
    *intra_Bps = intra;
    *inter_Bps = inter;
}

void collmodel_set(collmodel *m, const clustercfg *c, const gpucfg *g, const collalgo_fabric *fab, double intra_Bps,
                   double inter_Bps)
{
    memset(m, 0, sizeof *m);
    m->fab = *fab;
    m->intra_Bps = intra_Bps;
    m->inter_Bps = inter_Bps;
    m->gpus_per_node = (uint32_t)c->gpus_per_node;
    m->gpus_per_domain = (uint32_t)clustercfg_domain(c);
    m->nodes = (uint32_t)c->nodes;
    m->channels = (uint32_t)c->nccl_channels;
    m->hopper = g->tflops[GPUCFG_FP8] > 0;
    m->amd_cpu = c->cpu_vendor == CLUSTERCFG_CPU_AMD;
}

int collmodel_init(collmodel *m, const clustercfg *c, const gpucfg *g, cxl_err *err)
{
    memset(m, 0, sizeof *m);
    uint64_t gpn = clustercfg_domain(c);
    int rc = clustercfg_check_domain(c, err);
    if (rc)
        return rc;
    if (gpn > 1 && g->nvlink_bw_bps == 0)
        return cxl_errf(err, CXL_ECONFIG, "gpu '%s' has no NVLink bandwidth ('nvlink_bandwidth'); an NVLink "
                        "domain of %llu GPUs needs one", g->name, (unsigned long long)gpn);
    if (c->gpus_per_node == 0)
        return cxl_errf(err, CXL_ECONFIG, "cluster '%s': gpus_per_node 0; a node needs at least 1 GPU", c->name);
    collalgo_fabric fab;
    double intra, inter;
    collmodel_fabric(c, g, &fab, &intra, &inter);
    if (c->nodes > 1 && inter < 1)
        return cxl_errf(err, CXL_ECONFIG, "cluster '%s': each GPU's share of the NICs is %.3g B/s, below the model's "
                        "1 B/s (nic_bandwidth, nics_per_node)", c->name, inter);
    collmodel_set(m, c, g, &fab, intra, inter);
    return 0;
}

void collmodel_comm(const collmodel *m, const collalgo_group *g, uint32_t channels, nccltune_comm *c)
{
    memset(c, 0, sizeof *c);
    c->ranks = g->ranks;
    c->nodes = g->ranks / g->ranks_per_node;
    c->channels = channels;
    uint64_t bw = c->nodes == 1 ? m->fab.intra_Bps : m->fab.inter_Bps;
    if (c->nodes > 1 && m->fab.intra_Bps && m->fab.intra_Bps < bw)
        bw = m->fab.intra_Bps;
    c->bus_gbps = (double)(bw ? bw : 1) / 1e9;
    c->hopper = m->hopper;
    c->amd_cpu = m->amd_cpu;
}

void collmodel_a2a_phase(const collalgo_group *g, uint64_t bytes, collalgo_phase *ph)
{
    uint64_t ep = g->ranks, rpn = g->ranks_per_node;
    memset(ph, 0, sizeof *ph);
    ph->intra_bytes = (uint64_t)ceil((double)bytes * (double)(rpn - 1) / (double)ep);
    ph->inter_bytes = (uint64_t)ceil((double)bytes * (double)(ep - rpn) / (double)ep);
    ph->intra_hops = rpn > 1;
    ph->inter_hops = ep > rpn;
}

/* NCCL's ring moves whole chunks (coll.h: loops of channels x ranks x 2 MiB, messages rounded up to the
 * threads' unit) and pays a latency per message: scale the phase's bytes to NCCL's and its hops by the
 * number of loops. */
static int ring_chunks(int op, const collalgo_group *g, uint64_t bytes, uint32_t channels, collalgo_phase *ph,
                       uint64_t *loops, cxl_err *err)
{
    coll_ring_params p;
    coll_ring_params_default(&p, g->ranks, channels);
    uint32_t passes = op == COLLALGO_ALLREDUCE ? 2 : 1;
    uint64_t total, steps;
    int rc = coll_ring_totals(&p, passes, bytes, &total, &steps, err);
    if (rc || total == 0)
        return rc;
    double ideal = (double)passes * (double)(g->ranks - 1) / (double)g->ranks * (double)bytes;
    double ratio = (double)total / ideal;
    *loops = steps / ((uint64_t)passes * (g->ranks - 1));
    ph->intra_bytes = (uint64_t)ceil((double)ph->intra_bytes * ratio);
    ph->inter_bytes = (uint64_t)ceil((double)ph->inter_bytes * ratio);
    ph->intra_hops = (uint32_t)(ph->intra_hops * *loops);
    ph->inter_hops = (uint32_t)(ph->inter_hops * *loops);
    return 0;
}

/* The protocol's bytes on the wire and message latencies (nccltune_factors), or NCCL's ring chunking. */
static int shape(const collmodel *m, int op, const collalgo_group *g, uint64_t bytes, collmodel_plan *p, cxl_err *err)
{
    if (p->proto == NCCLTUNE_SIMPLE) {
        if (p->algo == COLLALGO_RING && op != COLLALGO_BROADCAST && p->nph == 1)
            return ring_chunks(op, g, bytes, p->comm.channels, &p->ph[0], &p->loops, err);
        return 0;
    }
    double fb, fi, fo;
    int rc = nccltune_factors(&p->comm, (collalgo_op)op, p->algo == COLLALGO_TREE ? COLLALGO_TREE : COLLALGO_RING,
                              p->proto, &fb, &fi, &fo, err);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < p->nph; i++) {
        p->ph[i].intra_bytes = (uint64_t)ceil((double)p->ph[i].intra_bytes * fb);
        p->ph[i].inter_bytes = (uint64_t)ceil((double)p->ph[i].inter_bytes * fb);
    }
    p->hop_intra_ps = (int64_t)llround((double)m->fab.intra_latency_ps * fi);
    p->hop_inter_ps = (int64_t)llround((double)m->fab.inter_latency_ps * fo);
    return 0;
}

int collmodel_plan_coll(const collmodel *m, int op, const collalgo_group *g, uint64_t bytes, collalgo_algo want,
                        nccltune_proto proto, uint32_t channels, collmodel_plan *p, cxl_err *err)
{
    memset(p, 0, sizeof *p);
    collmodel_comm(m, g, channels, &p->comm);
    p->algo = COLLALGO_RING;
    p->proto = NCCLTUNE_SIMPLE;
    p->hop_intra_ps = (int64_t)m->fab.intra_latency_ps;
    p->hop_inter_ps = (int64_t)m->fab.inter_latency_ps;
    if (op == COLLMODEL_ALLTOALL) {
        collmodel_p2p s;
        uint64_t peer = g->ranks > 1 ? (bytes + g->ranks - 1) / g->ranks : bytes;
        int rc = collmodel_p2p_plan(m, peer, proto, &s, err);
        if (rc) {
            p->failed = COLLMODEL_AT_PICK;
            return rc;
        }
        collmodel_a2a_phase(g, bytes, &p->ph[0]);
        p->ph[0].intra_bytes = (uint64_t)ceil((double)p->ph[0].intra_bytes * s.bytes_factor);
        p->ph[0].inter_bytes = (uint64_t)ceil((double)p->ph[0].inter_bytes * s.bytes_factor);
        p->proto = s.proto;
        p->hop_intra_ps = s.hop_intra_ps;
        p->hop_inter_ps = s.hop_inter_ps;
        p->nph = g->ranks > 1 && bytes;
        return 0;
    }
    nccltune_choice ch = { COLLALGO_RING, NCCLTUNE_SIMPLE, 0, 0, 0 };
    collalgo_algo ask = want == COLLALGO_HIERARCHICAL || (want == COLLALGO_TREE && op != COLLALGO_ALLREDUCE)
                            ? COLLALGO_RING : want;
    int rc = 0;
    if (g->ranks > 1 && bytes)
        rc = nccltune_pick(&p->comm, (collalgo_op)op, bytes, ask, proto, &ch, err);
    if (rc) {
        p->failed = COLLMODEL_AT_PICK;
        return rc;
    }
    collalgo_algo plan = want == COLLALGO_AUTO ? ch.algo : want;
    rc = collalgo_plan((collalgo_op)op, plan, g, bytes, &m->fab, p->ph, &p->nph, &p->algo, err);
    if (rc == 0 && p->nph && collalgo_time_ps(p->ph, p->nph, &m->fab, err) < 0)
        rc = err && err->code ? err->code : CXL_ELIMIT; /* a time beyond int64 (gpu.nvlink_bandwidth: 1B/s) */
    if (rc) {
        p->failed = COLLMODEL_AT_PHASES;
        return rc;
    }
    p->proto = ch.proto;
    rc = p->nph ? shape(m, op, g, bytes, p, err) : 0;
    if (rc)
        p->failed = COLLMODEL_AT_SHAPE;
    return rc;
}

int collmodel_p2p_plan(const collmodel *m, uint64_t peer_bytes, nccltune_proto want, collmodel_p2p *p,
                       cxl_err *err)
{
    int rc = nccltune_p2p_proto(peer_bytes, want, &p->proto, err);
    if (rc)
        return rc;
    double fi, fo;
    nccltune_p2p_factors(0, p->proto, &p->bytes_factor, &fi, &fo);
    p->hop_intra_ps = (int64_t)llround((double)m->fab.intra_latency_ps * fi);
    p->hop_inter_ps = (int64_t)llround((double)m->fab.inter_latency_ps * fo);
    return 0;
}

/* ceil(bytes / (Bps / 1e12)): net.h's completion time of a lone flow; -1 for a link of rate 0 or a
 * time beyond int64. */
static double flow_ps(uint64_t bytes, double Bps)
{
    if (!bytes)
        return 0;
    double rate = Bps / 1e12;
    if (!(rate > 0))
        return -1;
    double dt = ceil((double)bytes / rate);
    return dt > 9.0e18 ? -1 : dt;
}

int64_t collmodel_plan_time_ps(const collmodel *m, const collmodel_plan *p, cxl_err *err)
{
    int64_t t = 0;
    for (uint32_t i = 0; i < p->nph; i++) {
        const collalgo_phase *ph = &p->ph[i];
        double a = flow_ps(ph->intra_bytes, m->intra_Bps), b = flow_ps(ph->inter_bytes, m->inter_Bps);
        if (a < 0 || b < 0)
            return cxl_errf(err, a < 0 && ph->intra_bytes && !(m->intra_Bps > 0) ? CXL_ECONFIG : CXL_ELIMIT,
                            "phase %u of the collective: %llu bytes over NVLink, %llu over the NICs do not end "
                            "within int64 picoseconds at %.4g and %.4g B/s", i,
                            (unsigned long long)ph->intra_bytes, (unsigned long long)ph->inter_bytes, m->intra_Bps,
                            m->inter_Bps);
        double lat = (double)ph->intra_hops * (double)p->hop_intra_ps + (double)ph->inter_hops * (double)p->hop_inter_ps;
        double sum = (double)t + lat + (a > b ? a : b);
        if (sum > 9.0e18)
            return cxl_errf(err, CXL_ELIMIT, "the collective's time exceeds int64 picoseconds (%.3g ps)", sum);
        t += (int64_t)ph->intra_hops * p->hop_intra_ps + (int64_t)ph->inter_hops * p->hop_inter_ps +
             (int64_t)(a > b ? a : b);
    }
    return t;
}

int collmodel_time(const collmodel *m, const collmodel_req *q, collmodel_res *r, cxl_err *err)
{
    memset(r, 0, sizeof *r);
    if (q->ranks == 0)
        return cxl_errf(err, CXL_ECONFIG, "ranks: 0; a collective needs at least 1 rank");
    collalgo_group g = { q->ranks, q->ranks_per_node };
    if (g.ranks_per_node == 0)
        g.ranks_per_node = q->ranks < m->gpus_per_domain ? q->ranks : m->gpus_per_domain;
    if (g.ranks_per_node == 0 || q->ranks % g.ranks_per_node)
        return cxl_errf(err, CXL_ECONFIG, "ranks_per_node: %u does not divide ranks %u", g.ranks_per_node, q->ranks);
    if (g.ranks_per_node > m->gpus_per_domain)
        return cxl_errf(err, CXL_ECONFIG, "ranks_per_node: %u is more than the cluster's %u GPUs per %s",
                        g.ranks_per_node, m->gpus_per_domain,
                        m->gpus_per_domain == m->gpus_per_node ? "node" : "NVLink domain");
    uint32_t channels = q->channels ? q->channels : m->channels;
    if (channels == 0 || channels > COLL_MAX_CHANNELS)
        return cxl_errf(err, CXL_ECONFIG, "channels: %u; valid: 1 to %u", channels, COLL_MAX_CHANNELS);
    collmodel_plan p;
    int rc = collmodel_plan_coll(m, q->op, &g, q->bytes, q->algo, q->proto, channels, &p, err);
    if (rc)
        return rc;
    int64_t t = collmodel_plan_time_ps(m, &p, err);
    if (t < 0)
        return (int)t;
    r->time_ps = t;
    r->algo = p.algo;
    r->proto = p.proto;
    r->phases = p.nph;
    r->loops = p.loops;
    return 0;
}

/* train_net.c - the training engine's transfers over the network (net.h): pipeline sends, the tied
 * embeddings' all-reduce, and tensor- and data-parallel collectives as NCCL would run them (nccltune.h
 * picks the algorithm and protocol, collalgo.h cuts them into phases of flows). A transfer is an xfer:
 * each phase pays its latency (EV_LATENCY), then starts its flows; when the last flow of the last phase
 * ends, eng_xfer_done (train_step.c) wakes whoever waits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/coll.h"
#include "train/train_eng.h"

uint32_t eng_link_of(uint32_t r, int which) { return r * L_PER_REP + (uint32_t)which; }

void eng_schedule_changed(eng *E)
{
    uint32_t ids[64], k;
    while ((k = net_take_changed(E->n, ids, 64)) > 0) {
        for (uint32_t i = 0; i < k; i++) {
            if (E->ct) {
                uint32_t ls[NET_MAX_FLOW_LINKS];
                eng_note_links(E, ls, net_flow_links(E->n, ids[i], ls));
            }
            int64_t eta = net_flow_eta(E->n, ids[i]);
            if (eta == INT64_MAX) {
                E->rc = cxl_errf(E->err, CXL_ELIMIT, "a network flow would never finish (zero rate)");
                return;
            }
            if (evq_push(&E->q, eta, EV_FLOW, ids[i], net_flow_version(E->n, ids[i]))) {
                eng_oom(E);
                return;
            }
        }
        if (k < 64)
            break;
    }
}

static void start_flow(eng *E, uint32_t xid, double bytes, uint32_t l0, uint32_t l1)
{
    uint32_t links[2] = { l0, l1 }, fid;
    if (net_flow_start(E->n, E->now, bytes, links, 2, xid, &fid, E->err)) {
        E->rc = E->err->code ? E->err->code : CXL_EINTERNAL;
        return;
    }
    E->xf[xid].pending++;
    eng_note_links(E, links, 2);
    eng_schedule_changed(E);
}

uint32_t eng_new_xfer(eng *E, int kind, uint32_t rep, const char *name)
{
    uint32_t id;
    if (E->nxfree) {
        id = E->xfree[--E->nxfree];
    } else {
        if (E->nxf == E->capxf) {
            uint32_t nc = E->capxf ? 2 * E->capxf : 256;
            xfer *nx = realloc(E->xf, nc * sizeof *nx);
            if (!nx) {
                eng_oom(E);
                return UINT32_MAX;
            }
            E->xf = nx;
            E->capxf = nc;
        }
        id = E->nxf++;
    }
    memset(&E->xf[id], 0, sizeof E->xf[id]);
    E->xf[id].active = 1;
    E->xf[id].t_start = E->now;
    E->xf[id].kind = (uint8_t)kind;
    E->xf[id].rep = rep;
    E->xf[id].name = name;
    E->xf[id].wire = 1;
    return id;
}

void eng_free_xfer(eng *E, uint32_t id)
{
    E->xf[id].active = 0;
    if (E->nxfree == E->capxfree) {
        uint32_t nc = E->capxfree ? 2 * E->capxfree : 256;
        uint32_t *nf = realloc(E->xfree, nc * sizeof *nf);
        if (!nf) {
            eng_oom(E);
            return;
        }
        E->xfree = nf;
        E->capxfree = nc;
    }
    E->xfree[E->nxfree++] = id;
}

static int64_t phase_latency(const eng *E, const xfer *X)
{
    if (X->kind == XK_PP)
        return X->fabric == FAB_INTRA ? X->hop_intra_ps : X->hop_inter_ps;
    if (X->kind == XK_EMB)
        return 2 * (X->fabric == FAB_INTRA ? (int64_t)E->fab.intra_latency_ps : (int64_t)E->fab.inter_latency_ps);
    const collalgo_phase *p = &X->ph[X->cur];
    return (int64_t)p->intra_hops * X->hop_intra_ps + (int64_t)p->inter_hops * X->hop_inter_ps;
}

/* Start phase X->cur: its latency first, then its flows (EV_LATENCY). */
void eng_phase_begin(eng *E, uint32_t xid)
{
    int64_t lat = phase_latency(E, &E->xf[xid]);
    if (evq_push(&E->q, E->now + lat, EV_LATENCY, xid, 0))
        eng_oom(E);
}


void eng_phase_flows(eng *E, uint32_t xid)
{
    xfer *X = &E->xf[xid];
    X->pending = 0;
    if (X->kind == XK_PP || X->kind == XK_EMB) {
        int intra = X->fabric == FAB_INTRA, tx = intra ? L_INTRA_TX : L_INTER_TX, rx = intra ? L_INTRA_RX : L_INTER_RX;
        start_flow(E, xid, X->bytes * X->wire, eng_link_of(X->rep, tx), eng_link_of(X->dst, rx));
        if (X->kind == XK_EMB && E->rc == 0) /* the all-reduce of two: both directions at once */
            start_flow(E, xid, X->bytes, eng_link_of(X->dst, tx), eng_link_of(X->rep, rx));
    } else {
        const collalgo_phase *p = &X->ph[X->cur];
        uint32_t r = X->rep;
        if (p->intra_bytes)
            start_flow(E, xid, (double)p->intra_bytes, eng_link_of(r, L_INTRA_TX), eng_link_of(r, L_INTRA_RX));
        if (p->inter_bytes && E->rc == 0)
            start_flow(E, xid, (double)p->inter_bytes, eng_link_of(r, L_INTER_TX), eng_link_of(r, L_INTER_RX));
    }
    if (E->rc == 0 && E->xf[xid].pending == 0) {
        /* nothing to move in this phase */
        X = &E->xf[xid];
        if (X->kind == XK_TP || X->kind == XK_DP || X->kind == XK_EP || X->kind == XK_CP) {
            if (++X->cur < X->nph) {
                eng_phase_begin(E, xid);
                return;
            }
        }
        eng_xfer_done(E, xid);
    }
}

void eng_flow_done(eng *E, uint32_t xid)
{
    xfer *X = &E->xf[xid];
    if (--X->pending)
        return;
    if ((X->kind == XK_TP || X->kind == XK_DP || X->kind == XK_EP || X->kind == XK_CP) && ++X->cur < X->nph) {
        eng_phase_begin(E, xid);
        return;
    }
    eng_xfer_done(E, xid);
}

/* The training key behind field f (training.collectives, tp_/dp_collectives, protocol, tp_/dp_protocol). */
static const char *train_key(int f)
{
    switch (f) {
    case TRAINCFG_F_TP_COLL: return "training.tp_collectives";
    case TRAINCFG_F_DP_COLL: return "training.dp_collectives";
    case TRAINCFG_F_PROTOCOL: return "training.protocol";
    case TRAINCFG_F_TP_PROTO: return "training.tp_protocol";
    case TRAINCFG_F_DP_PROTO: return "training.dp_protocol";
    default: return "training.collectives";
    }
}

/* Point a collective's error at the key behind it: training.collectives when the algorithm cannot do
 * the operation, the NIC bandwidth when the group spans nodes over a slower inter-node fabric, else the
 * GPU's NVLink. */
static int coll_blame(eng *E, const collalgo_group *grp, int rc, int algo_field)
{
    const expcfg *x = E->x;
    if (strstr(E->err->msg, "does not support"))
        return eng_relocate(E->err, &x->train.loc[algo_field], train_key(algo_field));
    if (grp->ranks_per_node < grp->ranks && E->fab.inter_Bps <= E->fab.intra_Bps)
        return eng_relocate(E->err, &x->cluster.loc[CLUSTERCFG_F_NIC_BW], "cluster.nic_bandwidth");
    if (rc == CXL_ECONFIG || rc == CXL_ELIMIT)
        return eng_relocate(E->err, &x->gpu.loc[GPUCFG_F_NVLINK], "gpu.nvlink_bandwidth");
    return rc;
}

/* Count one collective (op, algo and proto as in train_coll) in the run's list of distinct choices
 * (train_result.colls). */
static void note_coll(eng *E, int group, int op, int algo, int proto, uint64_t bytes, uint32_t ranks, uint32_t nodes)
{
    train_coll *L = E->colls;
    for (uint32_t i = 0; i < E->ncolls; i++)
        if (L[i].group == group && L[i].op == op && L[i].bytes == bytes && L[i].algo == algo && L[i].proto == proto &&
            L[i].ranks == ranks && L[i].nodes == nodes) {
            L[i].count++;
            return;
        }
    if (E->ncolls == TRAIN_MAX_COLL_KINDS) {
        E->colls_other++;
        return;
    }
    train_coll *n = &L[E->ncolls++];
    n->group = (uint8_t)group;
    n->op = (uint8_t)op;
    n->algo = (uint8_t)algo;
    n->proto = (uint8_t)proto;
    n->bytes = bytes;
    n->ranks = ranks;
    n->nodes = nodes;
    n->count = 1;
}

/* The plan of a collective of the tensor- or data-parallel group grp into M (all but its key): collmodel's
 * (shared with libcxlsim, so its figure for a lone collective is this one) within what
 * training.collectives and training.protocol allow; an error points at the key behind the step that
 * failed. Non-zero (E->rc set) on error. */
static int plan_coll(eng *E, int kind, const collalgo_group *grp, int op, uint64_t bytes, eng_coll_memo *M)
{
    const traincfg *t = &E->x->train;
    int ga = kind == XK_TP ? t->tp_collective_algo : t->dp_collective_algo;
    int gp = kind == XK_TP ? t->tp_protocol : t->dp_protocol;
    int fa = ga == TRAINCFG_INHERIT ? TRAINCFG_F_COLLECTIVES : kind == XK_TP ? TRAINCFG_F_TP_COLL : TRAINCFG_F_DP_COLL;
    int fp = gp == TRAINCFG_INHERIT ? TRAINCFG_F_PROTOCOL : kind == XK_TP ? TRAINCFG_F_TP_PROTO : TRAINCFG_F_DP_PROTO;
    collalgo_algo want = (collalgo_algo)(ga == TRAINCFG_INHERIT ? t->collective_algo : ga);
    nccltune_proto proto = (nccltune_proto)(gp == TRAINCFG_INHERIT ? t->protocol : gp);
    M->grp = NULL; /* empty until complete */
    collmodel_plan p;
    int rc = collmodel_plan_coll(&E->coll, op, grp, bytes, want, proto, E->coll.channels, &p, E->err);
    if (rc) {
        if (p.failed == COLLMODEL_AT_PICK)
            E->rc = eng_relocate(E->err, &t->loc[fp], train_key(fp));
        else if (p.failed == COLLMODEL_AT_PHASES)
            E->rc = coll_blame(E, grp, rc, fa);
        else
            E->rc = E->err->code ? E->err->code : CXL_EINTERNAL;
        return E->rc;
    }
    M->chosen = p.algo;
    M->proto = p.proto;
    M->hop_intra_ps = p.hop_intra_ps;
    M->hop_inter_ps = p.hop_inter_ps;
    M->nph = p.nph;
    memcpy(M->ph, p.ph, sizeof M->ph);
    return 0;
}

/* A collective of the tensor- or data-parallel group of representative r, planned by plan_coll. */
static uint32_t start_coll(eng *E, int kind, const collalgo_group *grp, uint32_t r, int op, uint64_t bytes,
                           const char *name)
{
    uint32_t xid = eng_new_xfer(E, kind, r, name);
    if (xid == UINT32_MAX)
        return xid;
    xfer *X = &E->xf[xid];
    X->dq = (uint8_t)(kind == XK_DP && grp == &E->edp_group ? DPQ_EDP : DPQ_DP);
    nccltune_comm c;
    collmodel_comm(&E->coll, grp, E->coll.channels, &c);
    /* the plan depends on the kind, group, op and bytes only: a memo hit is what plan_coll would compute */
    uint64_t key = (bytes + (uint64_t)op * 0x100000001b3ull + (uint64_t)kind * 0x10001ull +
                    (uint64_t)(uintptr_t)grp) * 0x9e3779b97f4a7c15ull;
    eng_coll_memo *M = &E->coll_memo[key >> 59 & (ENG_COLL_MEMO - 1)];
    if (!(M->grp == grp && M->kind == kind && M->op == op && M->bytes == bytes)) {
        if (plan_coll(E, kind, grp, op, bytes, M))
            return UINT32_MAX;
        M->grp = grp;
        M->kind = kind;
        M->op = op;
        M->bytes = bytes;
    }
    X->op = (uint8_t)op;
    X->algo = (uint8_t)M->chosen;
    X->proto = (uint8_t)M->proto;
    X->coll_bytes = bytes;
    X->coll_ranks = grp->ranks;
    X->hop_intra_ps = M->hop_intra_ps;
    X->hop_inter_ps = M->hop_inter_ps;
    X->nph = M->nph;
    memcpy(X->ph, M->ph, sizeof X->ph);
    if (X->nph == 0) {
        eng_xfer_done(E, xid);
        return xid;
    }
    note_coll(E, kind == XK_TP ? TRAIN_GROUP_TP : TRAIN_GROUP_DP, X->op, X->algo, X->proto, bytes, c.ranks, c.nodes);
    eng_phase_begin(E, xid);
    return xid;
}

uint32_t eng_start_coll(eng *E, int kind, uint32_t r, int op, uint64_t bytes, const char *name)
{
    return start_coll(E, kind, kind == XK_TP ? &E->tp_group : &E->dp_group, r, op, bytes, name);
}

uint32_t eng_start_etp_coll(eng *E, uint32_t r, int op, uint64_t bytes, const char *name)
{
    return start_coll(E, XK_TP, &E->etp_group, r, op, bytes, name);
}

/* NCCL's send protocol (collmodel_p2p_plan) of a message of peer_bytes in the group of training key f
 * (pp_protocol, cp_protocol, ep_protocol). Non-zero (E->rc set) on error. */
static int p2p_plan(eng *E, int f, uint64_t peer_bytes, collmodel_p2p *s)
{
    const traincfg *t = &E->x->train;
    int v = f == TRAINCFG_F_PP_PROTO ? t->pp_protocol : f == TRAINCFG_F_CP_PROTO ? t->cp_protocol : t->ep_protocol;
    nccltune_proto want = v == TRAINCFG_P2P_LL ? NCCLTUNE_LL : v == TRAINCFG_P2P_SIMPLE ? NCCLTUNE_SIMPLE
                                                                                        : NCCLTUNE_AUTO;
    if (collmodel_p2p_plan(&E->coll, peer_bytes, want, s, E->err))
        return E->rc = eng_relocate(E->err, &t->loc[f], f == TRAINCFG_F_PP_PROTO   ? "training.pp_protocol"
                                                        : f == TRAINCFG_F_CP_PROTO ? "training.cp_protocol"
                                                                                   : "training.ep_protocol");
    return 0;
}

int eng_plan_pp_send(eng *E, xfer *X)
{
    collmodel_p2p s;
    uint64_t bytes = (uint64_t)X->bytes;
    if (p2p_plan(E, TRAINCFG_F_PP_PROTO, bytes, &s))
        return E->rc;
    X->op = TRAIN_OP_SENDRECV;
    X->algo = TRAIN_ALGO_P2P;
    X->proto = (uint8_t)s.proto;
    X->wire = s.bytes_factor;
    X->hop_intra_ps = s.hop_intra_ps;
    X->hop_inter_ps = s.hop_inter_ps;
    int inter = X->fabric != FAB_INTRA;
    note_coll(E, TRAIN_GROUP_PP, TRAIN_OP_SENDRECV, TRAIN_ALGO_P2P, s.proto, bytes, 2, inter ? 2 : 1);
    return 0;
}

/* A send/receive transfer of group grp (XK_EP or XK_CP) of one phase (ph) of `bytes` on representative r's
 * links, sent with NCCL's send protocol for a message of peer_bytes (training key f, p2p_plan), which
 * scales ph's bytes and sets its latencies, and counted in the run's list; `what` names it in the error of
 * a link of bandwidth 0. */
static uint32_t start_p2p(eng *E, int kind, const collalgo_group *grp, uint32_t r, uint64_t bytes,
                          uint64_t peer_bytes, int f, const char *name, const collalgo_phase *ph0, const char *what)
{
    collmodel_p2p s;
    if (p2p_plan(E, f, peer_bytes, &s))
        return UINT32_MAX;
    collalgo_phase scaled = *ph0, *ph = &scaled;
    ph->intra_bytes = (uint64_t)ceil((double)ph->intra_bytes * s.bytes_factor);
    ph->inter_bytes = (uint64_t)ceil((double)ph->inter_bytes * s.bytes_factor);
    if ((ph->intra_bytes && !E->fab.intra_Bps) || (ph->inter_bytes && !E->fab.inter_Bps)) {
        E->rc = cfgloc_errf(E->err, ph->inter_bytes ? &E->x->cluster.loc[CLUSTERCFG_F_NIC_BW]
                                                    : &E->x->gpu.loc[GPUCFG_F_NVLINK],
                            "the %s %s needs a link of bandwidth 0", what, name);
        return UINT32_MAX;
    }
    uint32_t xid = eng_new_xfer(E, kind, r, name);
    if (xid == UINT32_MAX)
        return xid;
    xfer *X = &E->xf[xid];
    X->coll_bytes = bytes;
    X->op = kind == XK_EP ? TRAIN_OP_ALLTOALL : TRAIN_OP_SENDRECV;
    X->algo = TRAIN_ALGO_P2P;
    X->proto = (uint8_t)s.proto;
    X->hop_intra_ps = s.hop_intra_ps;
    X->hop_inter_ps = s.hop_inter_ps;
    X->nph = 1;
    X->ph[0] = *ph;
    note_coll(E, kind == XK_EP ? TRAIN_GROUP_EP : TRAIN_GROUP_CP, X->op, TRAIN_ALGO_P2P, s.proto, bytes, grp->ranks,
              grp->ranks / grp->ranks_per_node);
    eng_phase_begin(E, xid);
    return xid;
}

/* Context parallelism's ring (eng_start_cp in train_eng.h): cp - 1 sends of a block to the next rank (each
 * with NCCL's send protocol for the block, training.cp_protocol), one latency each, all on NVLink when the
 * ring stays in one node, else at the NIC's bandwidth (the ring steps together, so its node-crossing hop
 * sets the pace). */
uint32_t eng_start_cp(eng *E, uint32_t r, uint64_t bytes, const char *name)
{
    const collalgo_group *grp = &E->cp_group;
    int inter = grp->ranks > grp->ranks_per_node;
    collalgo_phase ph = { 0 };
    ph.intra_bytes = inter ? 0 : bytes;
    ph.inter_bytes = inter ? bytes : 0;
    ph.intra_hops = inter ? 0 : grp->ranks - 1;
    ph.inter_hops = inter ? grp->ranks - 1 : 0;
    return start_p2p(E, XK_CP, grp, r, bytes, bytes, TRAINCFG_F_CP_PROTO, name, &ph, "context-parallel exchange");
}

/* NCCL's all-to-all is one send and one receive per peer in a group call (NCCL documentation,
 * "Point-to-point communication", all-to-all example), all in flight at once, each with NCCL's send
 * protocol for its message to one peer (bytes / ep; training.ep_protocol): one phase in which the
 * representative sends the (rpn - 1) / ep of its buffer meant for the peers of its NVLink domain over
 * NVLink and the (ep - rpn) / ep meant for the other domains over its share of the NICs (receiving as
 * much), paying one message latency on each fabric it uses. The flows share the links with every other
 * transfer of the representative (net.h), as the collectives' do. */
uint32_t eng_start_a2a(eng *E, uint32_t r, uint64_t bytes, const char *name)
{
    const collalgo_group *grp = &E->ep_group;
    collalgo_phase ph;
    collmodel_a2a_phase(grp, bytes, &ph);
    uint64_t peer = grp->ranks > 1 ? (bytes + grp->ranks - 1) / grp->ranks : bytes;
    return start_p2p(E, XK_EP, grp, r, bytes, peer, TRAINCFG_F_EP_PROTO, name, &ph, "expert-parallel all-to-all");
}

/* ---- a representative's data-parallel stream: its collectives in the order they were queued ---- */

static void kick_queue(eng *E, rep *R, int g)
{
    dp_queue *Q = &R->dq[g];
    if (Q->running || Q->len == 0 || R->dq[1 - g].done < Q->q[Q->head].after)
        return;
    dpq_item it = Q->q[Q->head];
    Q->head = (Q->head + 1) % Q->cap;
    Q->len--;
    Q->running = 1;
    start_coll(E, XK_DP, g == DPQ_EDP ? &E->edp_group : &E->dp_group, R->r, it.op, it.bytes, it.name);
}

void eng_dp_kick(eng *E, rep *R)
{
    for (int g = 0; g < DPQ_N; g++)
        kick_queue(E, R, g);
}

int eng_dp_idle(const rep *R)
{
    for (int g = 0; g < DPQ_N; g++)
        if (R->dq[g].running || R->dq[g].len)
            return 0;
    return 1;
}

void eng_dp_enqueue(eng *E, rep *R, int op, uint64_t bytes, const char *name)
{
    eng_dp_enqueue_group(E, R, op, bytes, name, DPQ_DP, 0);
}

void eng_dp_enqueue_group(eng *E, rep *R, int op, uint64_t bytes, const char *name, int g, int sync)
{
    if (bytes == 0 || (g == DPQ_EDP ? E->edp_group.ranks : traincfg_dpcp(E->t)) <= 1)
        return;
    dp_queue *Q = &R->dq[g];
    if (Q->len == Q->cap) {
        uint32_t nc = Q->cap ? 2 * Q->cap : 64;
        dpq_item *nq = malloc(nc * sizeof *nq);
        if (!nq) {
            eng_oom(E);
            return;
        }
        for (uint32_t i = 0; i < Q->len; i++)
            nq[i] = Q->q[(Q->head + i) % Q->cap];
        free(Q->q);
        Q->q = nq;
        Q->cap = nc;
        Q->head = 0;
    }
    Q->q[(Q->head + Q->len) % Q->cap] = (dpq_item){ op, bytes, name, sync ? R->dq[1 - g].enq : 0 };
    Q->len++;
    Q->enq++;
    eng_dp_kick(E, R);
}

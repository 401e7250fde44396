/* nccltune.c - NCCL 2.19.3's tuning model (src/graph/tuning.cc, src/enqueue.cc topoGetAlgoInfo); see nccltune.h.
 * Table and factor names are NCCL's; indices: algorithm 0 tree, 1 ring; protocol 0 LL, 1 LL128, 2 Simple. */
#include "train/nccltune.h"

#include <stddef.h>

enum { A_TREE = 0, A_RING = 1 };
enum { HW_NVLINK = 0, HW_PCI = 1, HW_NET = 2 };

/* tuning.cc baseLat (us), Tree and Ring rows */
static const double baseLat[2][NCCLTUNE_NPROTO] = { { 6.8, 14.0, 0 }, { 6.6, 14.0, 8.4 } };
/* tuning.cc hwLat (us) [NVLINK, PCI, NET][Tree, Ring][LL, LL128, Simple] */
static const double hwLat[3][2][NCCLTUNE_NPROTO] = {
    { { .6, 1.25, 28 }, { .6, 1.9, 3.4 } },
    { { 1.0, 1.9, 28 }, { 1.0, 2.5, 5.7 } },
    { { 5.0, 8.5, 28 }, { 2.7, 4.0, 14.0 } },
};
/* [Volta, Ampere, Hopper][N1, N2, N4] (GB/s); llMaxBws rows 1 and 2 double as the AMD-CPU rows off one node */
static const double llMaxBws[3][3] = { { 39.0, 39.0, 20.4 }, { 87.7, 22.5, 19.0 }, { 87.7, 22.5, 19.0 } };
static const double perChMaxRingLL128Bws[3][3] = { { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 36.7 } };
static const double perChMaxTreeLL128Bws[3][3] = { { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 29.0 } };
static const double perChMaxTreeBws[3][3] = { { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 38.7, 41.4, 36.0 } };
/* tuning.cc treeCorrectionFactor[proto][log2(nBytes / 64)] */
static const double treeCorrectionFactor[NCCLTUNE_NPROTO][23] = {
    { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0 },
    { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0 },
    { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9 },
};

static int log2i(uint64_t n)
{
    int l = 0;
    while (n >>= 1)
        l++;
    return l;
}

static int check(const nccltune_comm *c, collalgo_op op, cxl_err *err)
{
    if (!c)
        return cxl_errf(err, CXL_EINTERNAL, "nccltune: NULL communicator");
    if (c->ranks == 0 || c->nodes == 0 || c->ranks % c->nodes)
        return cxl_errf(err, CXL_ECONFIG, "nccltune: %u ranks on %u nodes (nodes must divide ranks, both >= 1)",
                        c->ranks, c->nodes);
    if (c->channels == 0)
        return cxl_errf(err, CXL_ECONFIG, "nccltune: 0 channels (NCCL uses at least 1)");
    if (!(c->bus_gbps > 0))
        return cxl_errf(err, CXL_ECONFIG, "nccltune: bus bandwidth %g GB/s (must be > 0)", c->bus_gbps);
    if ((int)op < 0 || op > COLLALGO_BROADCAST)
        return cxl_errf(err, CXL_ECONFIG, "nccltune: operation %d out of range", (int)op);
    return 0;
}

int nccltune_model(const nccltune_comm *c, collalgo_op op, collalgo_algo algo, nccltune_proto proto, double *bw_gbps,
                   double *lat_us, cxl_err *err)
{
    int rc = check(c, op, err);
    if (rc)
        return rc;
    if ((algo != COLLALGO_RING && algo != COLLALGO_TREE) || (int)proto < 0 || proto >= NCCLTUNE_NPROTO)
        return cxl_errf(err, CXL_ECONFIG, "nccltune: algorithm '%s' / protocol %d (ring or tree; LL, LL128 or Simple)",
                        collalgo_algo_name(algo), (int)proto);
    if (!bw_gbps || !lat_us)
        return cxl_errf(err, CXL_EINTERNAL, "nccltune: NULL output");
    *bw_gbps = 0;
    *lat_us = 0;
    if (c->ranks <= 1)
        return 0;
    int a = algo == COLLALGO_TREE ? A_TREE : A_RING, p = (int)proto;
    if (a == A_TREE && op != COLLALGO_ALLREDUCE)
        return 0; /* tuning.cc: tree only for all-reduce (and reduce) */
    if (p == NCCLTUNE_LL128 && c->pci)
        return 0; /* LL128 needs typeIntra <= PATH_NVB */
    uint32_t nNodes = c->nodes, nRanks = c->ranks;
    int cc = c->hopper ? 2 : 1;
    int index2 = nNodes <= 2 ? (int)nNodes - 1 : 2;
    int index1 = nNodes == 1 ? cc : c->amd_cpu ? 1 : 0;
    double llMaxBw = llMaxBws[index1][index2];
    double ppn = (double)nRanks / nNodes;
    int intraHw = c->pci ? HW_PCI : HW_NVLINK, hw = nNodes == 1 ? intraHw : HW_NET;
    uint32_t nsteps = op == COLLALGO_ALLREDUCE ? 2 * (nRanks - 1)
                      : op == COLLALGO_BROADCAST ? nRanks
                                                 : nRanks - 1;
    uint32_t nInterSteps = op == COLLALGO_ALLREDUCE ? (nNodes > 1 ? 2 * nNodes : 0)
                           : op == COLLALGO_BROADCAST ? nNodes
                                                      : nNodes - 1;
    double busBw = c->bus_gbps, nCh = c->channels;
    if (a == A_RING && p == NCCLTUNE_LL) {
        double f = (nNodes > 1 || op == COLLALGO_ALLREDUCE) ? 1.0 / 4.0 : 1.0 / 3.0;
        busBw = busBw * f < llMaxBw ? busBw * f : llMaxBw;
    }
    if (a == A_RING && p == NCCLTUNE_LL128) {
        double b = busBw * (ppn < 2 ? 0.7 : 0.92), cap = nCh * perChMaxRingLL128Bws[cc][index2];
        busBw = b < cap ? b : cap;
    }
    if (a == A_TREE) {
        double cap = nCh * perChMaxTreeBws[cc][index2];
        busBw = busBw * .92 < cap ? busBw * .92 : cap;
        if (p == NCCLTUNE_LL)
            busBw = busBw / 3.8 < llMaxBw ? busBw / 3.8 : llMaxBw;
        if (p == NCCLTUNE_LL128) {
            double b = busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), cap2 = nCh * perChMaxTreeLL128Bws[cc][index2];
            busBw = b < cap2 ? b : cap2;
        }
    }
    double ratio = a == A_RING ? (double)nRanks / nsteps : .5;
    *bw_gbps = busBw * ratio;
    double lat = baseLat[a][p];
    double intraLat = hwLat[intraHw][a][p], interLat = hwLat[HW_NET][a][p]; /* graphs' latencyInter: 0 */
    if (a == A_RING) {
        if (op == COLLALGO_BROADCAST) {
            lat += hwLat[hw][a][p]; /* sameChannels */
        } else {
            double netOverhead = 0;
            if (nNodes > 1) {
                netOverhead = c->amd_cpu ? 2.0 : 1.0; /* getNetOverhead */
                if (p == NCCLTUNE_SIMPLE)
                    netOverhead *= 3;
            }
            if (netOverhead > intraLat)
                intraLat = netOverhead;
            /* signed, as NCCL's ints: with one rank per node an all-reduce has 2 x nodes inter steps, more than
             * its 2 (ranks - 1) steps */
            lat += ((double)nsteps - (double)nInterSteps) * intraLat + (double)nInterSteps * interLat;
        }
    } else {
        lat += 2 * ((double)(nRanks / nNodes - 1) * intraLat + log2i(nNodes) * interLat);
    }
    *lat_us = lat;
    return 0;
}

/* ncclTopoGetAlgoTime with numPipeOps 1; -1 for a disabled pair. */
static double algo_time(const nccltune_comm *c, collalgo_op op, collalgo_algo algo, nccltune_proto proto,
                        uint64_t bytes, double *bw_out, double *lat_out, cxl_err *err, int *rc)
{
    double bw, lat;
    *rc = nccltune_model(c, op, algo, proto, &bw, &lat, err);
    if (*rc || bw == 0)
        return -1;
    *bw_out = bw;
    *lat_out = lat;
    int logSize = log2i(bytes >> 6);
    if (algo == COLLALGO_TREE && logSize < 23)
        bw *= treeCorrectionFactor[proto][logSize];
    if (algo == COLLALGO_RING && proto == NCCLTUNE_SIMPLE && c->nodes > 1 && op == COLLALGO_ALLREDUCE &&
        bytes / ((uint64_t)c->channels * c->ranks) >= 64)
        lat *= 1.4; /* "plateau effect of ring", compute capability >= 8.0 */
    return lat + (double)bytes / (1000 * bw);
}

int nccltune_pick(const nccltune_comm *c, collalgo_op op, uint64_t bytes, collalgo_algo algo, nccltune_proto proto,
                  nccltune_choice *out, cxl_err *err)
{
    int rc = check(c, op, err);
    if (rc)
        return rc;
    if (!out)
        return cxl_errf(err, CXL_EINTERNAL, "nccltune: NULL output");
    if (algo != COLLALGO_RING && algo != COLLALGO_TREE && algo != COLLALGO_AUTO)
        return cxl_errf(err, CXL_ECONFIG, "nccltune: algorithm '%s' is not NCCL's (ring, tree or auto)",
                        collalgo_algo_name(algo));
    if ((int)proto < 0 || proto > NCCLTUNE_AUTO)
        return cxl_errf(err, CXL_ECONFIG, "nccltune: protocol %d out of range", (int)proto);
    out->algo = COLLALGO_RING;
    out->proto = NCCLTUNE_SIMPLE;
    out->bw_gbps = out->lat_us = out->time_us = 0;
    if (c->ranks <= 1)
        return 0;
    double best = -1;
    for (int a = 0; a < 2; a++) { /* NCCL's order: tree, then ring */
        collalgo_algo al = a == A_TREE ? COLLALGO_TREE : COLLALGO_RING;
        if (algo != COLLALGO_AUTO && algo != al)
            continue;
        for (int p = 0; p < NCCLTUNE_NPROTO; p++) {
            if (proto != NCCLTUNE_AUTO && (int)proto != p)
                continue;
            double bw = 0, lat = 0;
            double t = algo_time(c, op, al, (nccltune_proto)p, bytes, &bw, &lat, err, &rc);
            if (rc)
                return rc;
            if (t >= 0 && (best < 0 || t < best)) {
                best = t;
                out->algo = al;
                out->proto = (nccltune_proto)p;
                out->bw_gbps = bw;
                out->lat_us = lat;
                out->time_us = t;
            }
        }
    }
    if (best < 0)
        return cxl_errf(err, CXL_ECONFIG, "nccltune: NCCL has no %s %s with protocol %s on %u ranks",
                        collalgo_algo_name(algo), collalgo_op_name(op), nccltune_proto_name(proto), c->ranks);
    return 0;
}

int nccltune_factors(const nccltune_comm *c, collalgo_op op, collalgo_algo algo, nccltune_proto proto,
                     double *bytes_factor, double *intra_lat_factor, double *inter_lat_factor, cxl_err *err)
{
    if (!bytes_factor || !intra_lat_factor || !inter_lat_factor)
        return cxl_errf(err, CXL_EINTERNAL, "nccltune: NULL output");
    *bytes_factor = *intra_lat_factor = *inter_lat_factor = 1;
    if (proto == NCCLTUNE_SIMPLE || (c && c->ranks <= 1))
        return 0;
    double bs, ls, bp, lp;
    int rc = nccltune_model(c, op, algo, NCCLTUNE_SIMPLE, &bs, &ls, err);
    if (!rc)
        rc = nccltune_model(c, op, algo, proto, &bp, &lp, err);
    if (rc)
        return rc;
    if (bs == 0 || bp == 0)
        return cxl_errf(err, CXL_ECONFIG, "nccltune: NCCL has no %s %s with protocol %s", collalgo_algo_name(algo),
                        collalgo_op_name(op), nccltune_proto_name(proto));
    *bytes_factor = bs / bp;
    int intraHw = c->pci ? HW_PCI : HW_NVLINK;
    *intra_lat_factor = hwLat[intraHw][A_RING][proto] / hwLat[intraHw][A_RING][NCCLTUNE_SIMPLE];
    *inter_lat_factor = hwLat[HW_NET][A_RING][proto] / hwLat[HW_NET][A_RING][NCCLTUNE_SIMPLE];
    return 0;
}

int nccltune_p2p_proto(uint64_t bytes, nccltune_proto want, nccltune_proto *out, cxl_err *err)
{
    if (want == NCCLTUNE_AUTO)
        want = bytes <= NCCLTUNE_P2P_LL_THRESHOLD ? NCCLTUNE_LL : NCCLTUNE_SIMPLE;
    if (want != NCCLTUNE_LL && want != NCCLTUNE_SIMPLE)
        return cxl_errf(err, CXL_ECONFIG, "nccltune: NCCL's send/receive runs LL or Simple, not %s (valid: ll, "
                        "simple, auto)", nccltune_proto_name(want));
    *out = want;
    return 0;
}

void nccltune_p2p_factors(int pci, nccltune_proto proto, double *bytes_factor, double *intra_lat_factor,
                          double *inter_lat_factor)
{
    *bytes_factor = *intra_lat_factor = *inter_lat_factor = 1;
    if (proto != NCCLTUNE_LL)
        return;
    int intraHw = pci ? HW_PCI : HW_NVLINK;
    *bytes_factor = 2;
    *intra_lat_factor = hwLat[intraHw][A_RING][NCCLTUNE_LL] / hwLat[intraHw][A_RING][NCCLTUNE_SIMPLE];
    *inter_lat_factor = hwLat[HW_NET][A_RING][NCCLTUNE_LL] / hwLat[HW_NET][A_RING][NCCLTUNE_SIMPLE];
}

const char *nccltune_proto_name(nccltune_proto p)
{
    static const char *const names[] = { "LL", "LL128", "Simple", "auto" };
    return (int)p >= 0 && p <= NCCLTUNE_AUTO ? names[p] : "?";
}

/* nccltune.h - NCCL's tuning model: which algorithm (ring, tree) and protocol (LL, LL128, Simple) NCCL picks for
 * a collective of a given size on a given communicator, and the bandwidth and latency it predicts for each pair.
 * Pure functions: no engine, no allocation, no global state.
 *
 * Source: NVIDIA/nccl v2.19.3-1 (the NCCL the engine's ring chunking follows, coll.h), src/graph/tuning.cc:
 * ncclTopoTuneModel (per-pair bus bandwidth and latency: baseLat, hwLat, llMaxBws, perChMaxRingLL128Bws,
 * perChMaxTreeBws, perChMaxTreeLL128Bws, the LL / LL128 / tree bandwidth factors, getNetOverhead) and
 * ncclTopoGetAlgoTime (time = latency + bytes / bandwidth, the tree correction factors by size, the ring's
 * "plateau" latency factor of 1.4 on Ampere and later); src/enqueue.cc topoGetAlgoInfo (the pair of least time,
 * one collective at a time: numPipeOps 1). Constants are copied with their names; docs/collectives.md
 * ("Protocols") has the table.
 *
 * What is not modelled: CollNet, NVLS (NVLink SHARP, Hopper NVSwitch only), the topology search itself (the
 * caller gives the bus bandwidth), NCCL_ALGO / NCCL_PROTO lists beyond one value, user tuner plugins.
 *
 * Units: GB/s (10^9 B/s), microseconds, as NCCL. Errors: CXL_ECONFIG with `err` (may be NULL) naming the value
 * for ranks or nodes 0, nodes not dividing ranks, channels 0, a bandwidth not > 0, an algorithm other than
 * ring, tree or auto (or tree for an operation other than all-reduce), a protocol out of range. */
#ifndef CXLSIM_NCCLTUNE_H
#define CXLSIM_NCCLTUNE_H

#include <stdint.h>

#include "train/collalgo.h"
#include "util/err.h"

typedef enum nccltune_proto {
    NCCLTUNE_LL = 0,     /* 8-byte stores of 4 data bytes + a 4-byte flag: lowest latency, half the bandwidth */
    NCCLTUNE_LL128 = 1,  /* 128-byte lines of 120 data bytes + flags: NVLink only */
    NCCLTUNE_SIMPLE = 2, /* bulk copies with fences: full bandwidth, highest latency */
    NCCLTUNE_AUTO = 3    /* the protocol of least predicted time */
} nccltune_proto;
#define NCCLTUNE_NPROTO 3

/* A communicator as NCCL's tuner sees it. */
typedef struct nccltune_comm {
    uint32_t ranks, nodes;  /* nodes divides ranks */
    uint32_t channels;      /* NCCL channels (nChannels) */
    double bus_gbps;        /* nChannels x the graph's per-channel bandwidth (bwIntra on <= 2 nodes, else bwInter) */
    int pci;                /* ranks in a node talk over PCI (NCCL_HW_PCI), else NVLink; LL128 needs NVLink */
    int hopper;             /* compute capability >= 9.0 (the Hopper rows of the tables), else Ampere */
    int amd_cpu;            /* the nodes' CPUs are AMD (llMaxBws row, 2 us network overhead), else Intel */
} nccltune_comm;

typedef struct nccltune_choice {
    collalgo_algo algo;   /* COLLALGO_RING or COLLALGO_TREE */
    nccltune_proto proto; /* LL, LL128 or Simple */
    double bw_gbps;       /* NCCL's bandwidth for the pair (comm->bandwidths[coll][a][p], algorithm bandwidth) */
    double lat_us;        /* its latency (comm->latencies[coll][a][p]) */
    double time_us;       /* ncclTopoGetAlgoTime of `bytes` */
} nccltune_choice;

/* NCCL's bandwidth and latency of (algo, proto) for op on c, before the size-dependent corrections; *bw_gbps
 * 0 when NCCL disables the pair (tree for anything but all-reduce, LL128 over PCI). */
int nccltune_model(const nccltune_comm *c, collalgo_op op, collalgo_algo algo, nccltune_proto proto, double *bw_gbps,
                   double *lat_us, cxl_err *err);

/* The pair NCCL picks for `bytes` (the collective's nBytes: the per-rank buffer): algo RING, TREE or AUTO
 * (NCCL_ALGO), proto one protocol or AUTO (NCCL_PROTO); ties keep the first in NCCL's order (tree before ring,
 * LL before LL128 before Simple). One rank: ring, Simple, time 0. */
int nccltune_pick(const nccltune_comm *c, collalgo_op op, uint64_t bytes, collalgo_algo algo, nccltune_proto proto,
                  nccltune_choice *out, cxl_err *err);

/* How the engine's collective phases change with the protocol (collalgo phases are NCCL's Simple): the bytes
 * on the wire per byte Simple moves (Simple's bandwidth over the protocol's, >= 1 where NCCL caps the protocol)
 * and the per-message latency relative to Simple's, on NVLink and on the network (hwLat of the ring, as
 * NCCL's tuning.cc; the tree's Simple NVLink figure, 28 us in 2.19, is a selection penalty, not a hop). */
int nccltune_factors(const nccltune_comm *c, collalgo_op op, collalgo_algo algo, nccltune_proto proto,
                     double *bytes_factor, double *intra_lat_factor, double *inter_lat_factor, cxl_err *err);

/* Point-to-point (ncclSend / ncclRecv, and the collectives built of them: all-to-all, context parallelism's
 * ring, pipeline sends). NCCL picks no algorithm for them, and its protocol by size alone: LL when the
 * connection has LL buffers (every p2p connection does) and the message is at most NCCL_P2P_LL_THRESHOLD
 * bytes, else Simple; never LL128, and NCCL_PROTO does not apply (src/enqueue.cc addP2pToPlan and
 * NCCL_PARAM(P2pLLThreshold, "P2P_LL_THRESHOLD", 16384), v2.19.3-1). NCCL compares each channel's part of
 * a peer's message; the engine compares the whole message, so a message just over the threshold that NCCL
 * splits over channels may run LL in NCCL and Simple here. */
#define NCCLTUNE_P2P_LL_THRESHOLD 16384

/* The protocol of one send of `bytes` (the message to one peer): want LL or Simple as given, AUTO by the
 * threshold. CXL_ECONFIG for LL128 (or out of range), naming what is valid. */
int nccltune_p2p_proto(uint64_t bytes, nccltune_proto want, nccltune_proto *out, cxl_err *err);

/* How a send changes with its protocol against Simple: LL moves 8 bytes per 4 data bytes (its lines carry
 * a 4-byte flag beside 4 data bytes: bytes factor 2), and pays the ring's LL message latency relative to
 * Simple's on NVLink (or PCI) and the network (tuning.cc hwLat, as nccltune_factors); Simple: all 1. */
void nccltune_p2p_factors(int pci, nccltune_proto proto, double *bytes_factor, double *intra_lat_factor,
                          double *inter_lat_factor);

/* "LL", "LL128", "Simple", "auto"; "?" out of range. */
const char *nccltune_proto_name(nccltune_proto p);

#endif

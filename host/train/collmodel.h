/* collmodel.h - the time of one collective on a cluster without contention: NCCL's choice of algorithm and
 * protocol (nccltune.h), the phases of that algorithm (collalgo.h), the protocol's bytes on the wire and
 * message latency, and for ring/Simple NCCL's chunking (coll.h: loops of nChannels x nRanks x 2 MiB, each
 * step a message latency). It is the figure the training engine gives a lone collective (train.c builds
 * the same fabric and phases, then lets flows contend); libcxlsim's cxlsim_collective_time and the NCCL
 * delay plugin report it. Pure functions: no engine, no allocation, no global state.
 *
 * The fabric of one GPU: NVLink per direction = gpu.nvlink / 2 x cluster.nvlink_efficiency; its share of
 * the node's NICs = nic_bandwidth x nics_per_node / gpus_per_node x nic_efficiency (/ oversubscription on a
 * fat tree); inter-node latency = NIC + 1 switch hop (rail-optimized) or 3 (fat tree).
 * Errors: CXL_ECONFIG for a group or size the model refuses (message names the value and what is valid),
 * CXL_ELIMIT for times beyond int64 picoseconds. */
#ifndef CXLSIM_COLLMODEL_H
#define CXLSIM_COLLMODEL_H

#include <stdint.h>

#include "config/clustercfg.h"
#include "train/collalgo.h"
#include "util/err.h"
#include "config/gpucfg.h"
#include "train/nccltune.h"

typedef struct collmodel {
    collalgo_fabric fab;
    uint32_t gpus_per_node, nodes, channels;
    int hopper, amd_cpu;
} collmodel;

typedef struct collmodel_req {
    collalgo_op op;
    uint64_t bytes;          /* per rank, collalgo's convention (all-gather: the gathered output) */
    uint32_t ranks;
    uint32_t ranks_per_node; /* 0: min(ranks, gpus_per_node) */
    collalgo_algo algo;      /* ring, tree, hierarchical or auto (NCCL's pick of ring and tree) */
    nccltune_proto proto;    /* one protocol or auto */
    uint32_t channels;       /* 0: the cluster's nccl_channels */
} collmodel_req;

typedef struct collmodel_res {
    int64_t time_ps;
    collalgo_algo algo;      /* planned */
    nccltune_proto proto;
    uint32_t phases;
    uint64_t loops;          /* ring/Simple: NCCL loops; else 0 */
} collmodel_res;

int collmodel_init(collmodel *m, const clustercfg *c, const gpucfg *g, cxl_err *err);
int collmodel_time(const collmodel *m, const collmodel_req *q, collmodel_res *r, cxl_err *err);

#endif

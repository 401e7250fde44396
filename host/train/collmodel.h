/* collmodel.h - one collective as the training engine plans and charges it, shared by the engine
 * (train_setup.c, train_net.c) and libcxlsim (cxlsim_collective_time, the NCCL delay plugin), so the
 * library's figure for a lone collective is the engine's: NCCL's choice of algorithm and protocol
 * (nccltune.h), the phases of that algorithm (collalgo.h), the protocol's bytes on the wire and message
 * latency, and for ring/Simple NCCL's chunking (coll.h: loops of nChannels x nRanks x 2 MiB, each step a
 * message latency). The engine then lets the phases' flows contend (net.h); collmodel_time is the time
 * they take when nothing else runs. Pure functions: no engine, no allocation, no global state.
 *
 * The fabric of one GPU: NVLink per direction = gpu.nvlink_bandwidth x cluster.nvlink_efficiency (at least
 * 1 B/s); its share of the node's NICs = nic_bandwidth x nics_per_node / gpus_per_node x nic_efficiency
 * (/ oversubscription on a fat tree); inter-node latency = NIC + 1 switch hop (rail-optimized) or 3 (fat
 * tree). NVLink reaches the GPUs of one NVLink domain (clustercfg_domain: the node, or several nodes as
 * in GB200 NVL72); a group's ranks_per_node counts its ranks per domain. Errors: CXL_ECONFIG for a group
 * or size the model refuses (message names the value and what is valid), CXL_ELIMIT for times beyond
 * int64 picoseconds. */
#ifndef CXLSIM_COLLMODEL_H
#define CXLSIM_COLLMODEL_H

#include <stdint.h>

#include "config/clustercfg.h"
#include "train/collalgo.h"
#include "util/err.h"
#include "config/gpucfg.h"
#include "train/nccltune.h"

/* All-to-all: not an NCCL collective (a group of sends and receives), planned by collmodel_a2a_phase. */
#define COLLMODEL_ALLTOALL 4

typedef struct collmodel {
    collalgo_fabric fab;             /* rates truncated to whole B/s: NCCL's bus bandwidth and collalgo */
    double intra_Bps, inter_Bps;     /* untruncated: the engine's network links */
    uint32_t gpus_per_node, nodes, channels;
    uint32_t gpus_per_domain;        /* clustercfg_domain: the ranks a group reaches over NVLink */
    int hopper, amd_cpu;
} collmodel;

/* The fabric of c's GPUs (above), unchecked: *intra_Bps and *inter_Bps untruncated, fab truncated. */
void collmodel_fabric(const clustercfg *c, const gpucfg *g, collalgo_fabric *fab, double *intra_Bps,
                      double *inter_Bps);
/* m from collmodel_fabric's results (the engine, which checks them with its own messages). */
void collmodel_set(collmodel *m, const clustercfg *c, const gpucfg *g, const collalgo_fabric *fab, double intra_Bps,
                   double inter_Bps);
/* collmodel_fabric + collmodel_set, with the checks: a node of several GPUs needs NVLink, several nodes
 * a NIC share of at least 1 B/s. */
int collmodel_init(collmodel *m, const clustercfg *c, const gpucfg *g, cxl_err *err);

/* Where collmodel_plan failed (collmodel_plan.failed), for a caller that points the error at a key. */
enum { COLLMODEL_OK = 0, COLLMODEL_AT_PICK = 1, COLLMODEL_AT_PHASES = 2, COLLMODEL_AT_SHAPE = 3 };

typedef struct collmodel_plan {
    nccltune_comm comm;              /* NCCL's view of the group */
    collalgo_algo algo;              /* planned */
    nccltune_proto proto;
    collalgo_phase ph[COLLALGO_MAX_PHASES]; /* with NCCL's ring loops or the protocol's factors applied */
    uint32_t nph;
    int64_t hop_intra_ps, hop_inter_ps;     /* one message latency on each fabric, the protocol's */
    uint64_t loops;                  /* ring/Simple: NCCL loops; else 0 */
    int failed;                      /* COLLMODEL_AT_* of an error */
} collmodel_plan;

/* NCCL's view of group g (nccltune.h): its ranks and nodes, `channels`, and the bus bandwidth per
 * direction of one rank (NVLink on one node, else its share of the NICs, which bounds NCCL's multi-node
 * graphs). Hopper-class GPUs are those with fp8 tensor cores. */
void collmodel_comm(const collmodel *m, const collalgo_group *g, uint32_t channels, nccltune_comm *c);

/* The plan of op (collalgo_op or COLLMODEL_ALLTOALL) of `bytes` per rank over g: the algorithm and
 * protocol are NCCL's choice (nccltune_pick) within `want` and `proto` (hierarchical, not an NCCL
 * algorithm, takes the ring's protocol; all-to-all: one phase, the protocol of its message to one peer,
 * ceil(bytes / ranks), by collmodel_p2p_plan, reported as ring); the phases are collalgo's,
 * with the protocol's bytes on the wire and message latency (nccltune_factors; Simple changes nothing)
 * or NCCL's ring chunking. 0, or an error with p->failed saying at which step. */
int collmodel_plan_coll(const collmodel *m, int op, const collalgo_group *g, uint64_t bytes, collalgo_algo want,
                        nccltune_proto proto, uint32_t channels, collmodel_plan *p, cxl_err *err);

/* NCCL's all-to-all (one send and one receive per peer in a group call, all in flight at once): one
 * phase of the (rpn - 1) / ranks of the buffer over NVLink and the (ranks - rpn) / ranks over the NICs,
 * one message latency on each fabric used. */
void collmodel_a2a_phase(const collalgo_group *g, uint64_t bytes, collalgo_phase *ph);

/* A send/receive as NCCL runs it (the all-to-all's sends, context parallelism's ring, pipeline sends): the
 * protocol of a message of peer_bytes to one peer (nccltune_p2p_proto within want: LL, Simple or auto),
 * the factor on its bytes and its message latencies on each fabric (nccltune_p2p_factors; Simple: 1 and
 * the fabric's). CXL_ECONFIG for want LL128. */
typedef struct collmodel_p2p {
    nccltune_proto proto;
    double bytes_factor;
    int64_t hop_intra_ps, hop_inter_ps;
} collmodel_p2p;
int collmodel_p2p_plan(const collmodel *m, uint64_t peer_bytes, nccltune_proto want, collmodel_p2p *p,
                       cxl_err *err);

/* The time the engine charges plan p when nothing else runs: per phase its hops' latency, then its flows
 * at the untruncated rates, each ending after ceil(bytes / bytes-per-ps) (net.h), the phase with the
 * last. A negative CXL_E* code for a time beyond int64. */
int64_t collmodel_plan_time_ps(const collmodel *m, const collmodel_plan *p, cxl_err *err);

typedef struct collmodel_req {
    int op;                  /* collalgo_op or COLLMODEL_ALLTOALL */
    uint64_t bytes;          /* per rank, collalgo's convention (all-gather: the gathered output) */
    uint32_t ranks;
    uint32_t ranks_per_node; /* ranks per NVLink domain (a node unless nvlink_domain): 0: min(ranks, domain) */
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

/* A lone collective: the group's checks, collmodel_plan_coll, collmodel_plan_time_ps. */
int collmodel_time(const collmodel *m, const collmodel_req *q, collmodel_res *r, cxl_err *err);

#endif

/* train.h - one training iteration of an experiment, simulated by a discrete-event engine.
 *
 * What is simulated. One representative GPU per pipeline stage: the tensor- and data-parallel ranks of a
 * stage run the same kernels on the same shapes and take part in the same collectives at the same
 * moments, so one of them stands for all exactly (their links carry the same loads by symmetry). Each
 * representative has a compute stream (kernels and the blocking tensor-parallel collectives, in the
 * order of the pipeline schedule, schedule.h, expanded by the templates of opgraph.h), a pipeline
 * stream (asynchronous sends of activations and gradients to the neighbouring stages) and a
 * data-parallel stream (gradient buckets, reduced while the backward pass goes on when
 * overlap_grad_reduce is set; NCCL runs a communicator's collectives in order, so buckets queue).
 * Kernel times come from compute.h (efficiency curves) or a measured-times file (optimes.h).
 * Communication is network flows (net.h) over four links per representative: NVLink out and in, and
 * its share of the node's NICs out and in; collectives become phases of flows (collalgo.h); concurrent
 * flows share links max-min fairly, so tensor-, pipeline- and data-parallel traffic contend where they
 * meet. Time is integer picoseconds; events at equal times run in the order they were scheduled.
 *
 * The iteration ends when every stage has finished its optimizer step (and, with ZeRO >= 1, the
 * all-gather of the updated parameters). The breakdown of each stage's compute stream sums to the
 * iteration time: compute (kernels), exposed_tp_comm (blocked in a tensor-parallel collective),
 * exposed_pp_comm (waiting for an activation or gradient that is on the wire), pipeline_bubble (waiting
 * for one not yet sent, and idle after the stage's own end), exposed_dp_comm (waiting for gradient
 * reduction, the tied-embedding all-reduce and the parameter all-gather), cxl_stall (waiting for CXL
 * transfers and the CPU optimizer's floor, train_eng.h). The reported breakdown is the mean over stages.
 */
#ifndef CXLSIM_TRAIN_H
#define CXLSIM_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "cxl/backend.h"
#include "out/ctrace.h"
#include "util/err.h"
#include "config/expcfg.h"
#include "train/gpumem.h"
#include "train/optimes.h"
#include "train/tiers.h"

enum train_bk { TRAIN_BK_COMPUTE, TRAIN_BK_TP, TRAIN_BK_PP, TRAIN_BK_DP, TRAIN_BK_BUBBLE, TRAIN_BK_CXL, TRAIN_BK_N };
extern const char *const train_bk_names[]; /* JSON keys: "compute", "exposed_tp_comm", ... */

typedef struct train_opts {
    const optimes *measured;    /* NULL: every kernel from the efficiency curves */
    ctrace *trace;              /* write a Chrome trace there as the run goes (ctrace.h); NULL for none. The
                                 * caller opens it and finishes (or aborts) it after train_run */
    /* called now and then with the fraction of schedule passes done; NULL for none */
    void (*progress)(void *ctx, double fraction);
    void *progress_ctx;
    int exact;                  /* CXL: simulate every cycle of every transfer (no extrapolation, no memo) */
    const char *backend;        /* CXL backend overriding the experiment's cxl.backend; NULL: the experiment's */
    cxl_backend_opts bo;        /* its options, overriding the experiment's cxl.xclbin and cxl.card */
    const uint8_t *trace_stages;/* per pipeline stage, 1 to trace it; NULL: every stage (CXL domains always) */
} train_opts;

/* One CXL domain (a device description instance) after the run. */
typedef struct train_cxl_domain {
    uint32_t nodes;                   /* nodes whose GPUs it serves (1 per-node, pool_nodes for a pool) */
    uint32_t copies;                  /* identical domains in the cluster it stands for */
    double read_gbps, write_gbps;     /* over its busy time */
    double read_bytes, write_bytes;   /* moved in the iteration (every transfer of the GPUs and CPUs it serves) */
    double busy_s;
    double read_lat_ns[4];            /* mean, p50, p99, max (detailed cycles) */
    double devload[4];
    uint32_t devices;                 /* devices in the domain */
    double dev_read_gbps[4], dev_write_gbps[4]; /* the domain's traffic split by each device's share */
    double dev_devload[4][4];
} train_cxl_domain;

/* One kind of collective the run issued: group, operation, bytes per rank, and NCCL's choice for it (nccltune.h);
 * count is over the whole iteration of every representative (one per pipeline stage). The expert-parallel
 * all-to-all, context parallelism's ring sends and pipeline sends are NCCL send/receive: no algorithm
 * (TRAIN_ALGO_P2P), the protocol by the message to one peer (nccltune_p2p_proto). */
#define TRAIN_MAX_COLL_KINDS 256
enum train_group { TRAIN_GROUP_DP = 0, TRAIN_GROUP_TP = 1, TRAIN_GROUP_EP = 2, TRAIN_GROUP_CP = 3, TRAIN_GROUP_PP = 4 };
enum { TRAIN_OP_ALLTOALL = 4 /* = COLLMODEL_ALLTOALL */, TRAIN_OP_SENDRECV = 5 }; /* beyond collalgo_op */
enum { TRAIN_ALGO_P2P = 255 };        /* train_coll.algo of send/receive */
extern const char *const train_group_names[]; /* "dp", "tp", "ep", "cp", "pp" */
/* The names of a train_coll's operation and algorithm: collalgo's, "all-to-all", "send/receive", "p2p". */
const char *train_coll_op_name(int op);
const char *train_coll_algo_name(int algo);
typedef struct train_coll {
    uint8_t group;                    /* enum train_group */
    uint8_t op, algo, proto;          /* collalgo_op or TRAIN_OP_*, collalgo_algo planned or TRAIN_ALGO_P2P,
                                         nccltune_proto */
    uint64_t bytes;
    uint32_t ranks, nodes;
    uint64_t count;
} train_coll;

typedef struct train_stage {
    int64_t bk_ps[TRAIN_BK_N];
    int64_t finish_ps;
} train_stage;

typedef struct train_result {
    int64_t iteration_ps;
    double breakdown_s[TRAIN_BK_N];   /* mean over stages, seconds */
    train_stage *stages;              /* pp entries */
    uint32_t nstages;
    double tokens_per_s, mfu;
    double model_flops;               /* per iteration, all GPUs (3 x forward) */
    gpumem mem;                       /* the stage that needs the most memory */
    uint64_t events;                  /* events the engine processed */
    uint64_t flows;                   /* network flows started */
    uint64_t engine_bytes;            /* memory the engine held at the end (programs, queues, network) */
    uint64_t kernels, kernels_measured; /* distinct kernels; how many priced from the measured file */
    uint64_t ops_above_peak;          /* measured GEMMs faster than the GPU's dense peak allows */
    char peak_warning[512];           /* the first of them, "file:line:col: ...", for a warning; "" if none */
    tiers tiers;                      /* bytes per memory tier (HBM after offloading, CXL) */
    train_coll colls[TRAIN_MAX_COLL_KINDS]; /* the distinct collectives, in first-issued order */
    uint32_t ncolls;
    uint64_t colls_other;             /* collectives beyond TRAIN_MAX_COLL_KINDS distinct kinds (counted only) */
    /* CXL (memory != none) */
    uint64_t detailed_cycles, extrapolated_cycles, memo_hits, cxl_transfers;
    train_cxl_domain *domains;
    uint32_t ndomains;
    char cxl_backend[16];
} train_result;

/* Simulate one iteration. The experiment must have loaded (expcfg_load checks the layout); memory is
 * checked here: CXL_ECONFIG at the experiment's training section when a stage does not fit. Errors:
 * CXL_ECONFIG, CXL_ENOMEM, CXL_ELIMIT (times beyond int64 picoseconds). */
int train_run(const expcfg *x, const train_opts *o, train_result *r, cxl_err *err);
void train_result_free(train_result *r);

#endif

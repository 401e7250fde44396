/* collalgo.h - collective algorithms (ring, NCCL tree, hierarchical) as a short sequence of phases of link
 * load on one representative GPU, for the training engine. Pure functions: no engine, no allocation, no
 * global state.
 *
 * The representative has two fabrics: INTRA (NVLink/NVSwitch inside the node: per-GPU, per-direction
 * bandwidth and per-message latency) and INTER (its share of the node's NICs, per direction; the latency
 * includes switch hops). In one phase it sends intra_bytes over INTRA and inter_bytes over INTER at the
 * same time (and, by symmetry, receives as much); the phase also costs
 *   intra_hops x intra_latency_ps + inter_hops x inter_latency_ps
 * of latency. Phases run one after another. Without contention a phase therefore takes
 *   latency + max(intra_bytes / intra_Bps, inter_bytes / inter_Bps).
 * Byte counts are those of the busiest rank (ranks of a group are alike except where a tree makes them
 * differ; then the worst one), averaged over NCCL's channels, which spread ring and tree positions and
 * NIC exits evenly over the node's GPUs. The derivations are in docs/collectives.md.
 *
 * `bytes` (S) is the collective's buffer per rank: the input of all-reduce, reduce-scatter and broadcast
 * (reduce-scatter leaves S / ranks on each rank), and the gathered output of all-gather (each rank
 * contributes S / ranks).
 *
 * Units: bytes, bytes per second (_Bps), integer picoseconds (_ps).
 * Errors: 0 (or a non-negative time) on success, else a negative CXL_E* code with `err` (may be NULL)
 * naming the value and what would be valid: CXL_ECONFIG for bad parameters or an unsupported
 * operation/algorithm pair, CXL_ELIMIT when a size or time does not fit, CXL_EINTERNAL for a NULL pointer
 * where one is required. Nothing prints.
 *
 * Sources: NCCL src/graph/tuning.cc (ring and tree latency/bandwidth model), src/graph/trees.cc (double
 * binary tree), the NCCL 2.4 blog "Massively Scale Your Deep Learning Training with NCCL 2.4"; the ring
 * closed form of coll.h (docs/references.md "Validation targets", "Collective level"). */
#ifndef CXLSIM_COLLALGO_H
#define CXLSIM_COLLALGO_H

#include <stdint.h>

#include "util/err.h"

typedef enum collalgo_op {
    COLLALGO_ALLREDUCE = 0,
    COLLALGO_REDUCE_SCATTER = 1,
    COLLALGO_ALLGATHER = 2,
    COLLALGO_BROADCAST = 3
} collalgo_op;

typedef enum collalgo_algo {
    COLLALGO_RING = 0,         /* flat ring over all ranks; every operation */
    COLLALGO_TREE = 1,         /* chain in the node + double binary tree across nodes; all-reduce only */
    COLLALGO_HIERARCHICAL = 2, /* intra-node ring, inter-node ring, intra-node ring; not broadcast */
    COLLALGO_AUTO = 3          /* the supported algorithm with the smallest no-contention time */
} collalgo_algo;

/* ranks = ranks_per_node x nodes, all nodes alike. */
typedef struct collalgo_group {
    uint32_t ranks;          /* 1..COLLALGO_MAX_RANKS */
    uint32_t ranks_per_node; /* >= 1, divides ranks */
} collalgo_group;

#define COLLALGO_MAX_RANKS (1u << 24) /* keeps every byte coefficient's numerator and denominator < 2^50 */
#define COLLALGO_MAX_PHASES 4

typedef struct collalgo_phase {
    uint64_t intra_bytes; /* bytes the representative sends over INTRA, rounded up to a whole byte */
    uint64_t inter_bytes; /* bytes it sends over INTER, rounded up */
    uint32_t intra_hops;  /* message latencies on INTRA along the phase's critical path */
    uint32_t inter_hops;  /* message latencies on INTER along it */
    /* The exact amounts are usually fractions of a byte below the rounded ones:
     *   exact intra = intra_bytes - intra_short / frac_den   (likewise inter),
     * 0 <= *_short < frac_den; frac_den 0 means 1 (whole bytes; a zero-initialised phase is exact).
     * collalgo_time_ps uses the exact amounts, so its results reproduce closed forms to the picosecond;
     * an engine that moves whole bytes may ignore these fields. */
    uint64_t frac_den;
    uint64_t intra_short, inter_short;
} collalgo_phase;

typedef struct collalgo_fabric {
    uint64_t intra_Bps;        /* per GPU, per direction; may be 0 when ranks_per_node is 1 */
    uint64_t inter_Bps;        /* the GPU's share of its node's NICs, per direction; may be 0 on one node */
    uint64_t intra_latency_ps; /* per message */
    uint64_t inter_latency_ps; /* per message, switch hops included */
} collalgo_fabric;

/* Plan `op` on S = `bytes` per rank with `algo` over group g: fills out[0..*n_phases-1] (at most
 * COLLALGO_MAX_PHASES) and *chosen (may be NULL) with the algorithm actually planned:
 *   - AUTO picks the smallest collalgo_time_ps on f among the algorithms the operation supports;
 *     ties go to RING, then HIERARCHICAL, then TREE;
 *   - HIERARCHICAL on one node or with one rank per node is the flat ring: planned and reported as RING;
 *   - one rank or S = 0: no phases, chosen = algo (RING for AUTO and HIERARCHICAL).
 * Supported: RING for every op, HIERARCHICAL for all but broadcast, TREE for all-reduce only.
 * f is required (AUTO compares times; every algorithm checks that the fabrics it uses have bandwidth).
 * Errors: ranks 0, ranks_per_node 0 or not dividing ranks, op or algo out of range, an unsupported pair,
 * intra_Bps 0 with ranks_per_node > 1, inter_Bps 0 with more than one node (CXL_ECONFIG); ranks beyond
 * COLLALGO_MAX_RANKS, byte counts beyond 2^64 or S x coefficient beyond the 2^88 the exact time
 * arithmetic allows, an AUTO time beyond INT64_MAX (CXL_ELIMIT); NULL g, f, out or n_phases
 * (CXL_EINTERNAL). On error *n_phases is 0. O(1). */
int collalgo_plan(collalgo_op op, collalgo_algo algo, const collalgo_group *g, uint64_t bytes,
                  const collalgo_fabric *f, collalgo_phase out[COLLALGO_MAX_PHASES], uint32_t *n_phases,
                  collalgo_algo *chosen, cxl_err *err);

/* No-contention time of n phases run back to back: the sum of
 *   intra_hops x intra_latency_ps + inter_hops x inter_latency_ps
 *     + max(ceil(exact intra x 10^12 / intra_Bps), ceil(exact inter x 10^12 / inter_Bps))   (ps).
 * p may be NULL when n is 0. Errors: bytes on a fabric of bandwidth 0, *_short >= frac_den, or
 * *_short > 0 with 0 bytes (CXL_ECONFIG); bytes x frac_den beyond 2^88 or a time beyond INT64_MAX
 * (CXL_ELIMIT); NULL f or p (CXL_EINTERNAL). O(n). */
int64_t collalgo_time_ps(const collalgo_phase *p, uint32_t n, const collalgo_fabric *f, cxl_err *err);

/* "ring", "tree", "hierarchical", "auto"; "?" for a value out of range. */
const char *collalgo_algo_name(collalgo_algo a);
/* "all-reduce", "reduce-scatter", "all-gather", "broadcast"; "?" for a value out of range. */
const char *collalgo_op_name(collalgo_op op);
/* The inverse of collalgo_algo_name (exact, lower case). CXL_ECONFIG naming the text and the valid names
 * when s is none of them; CXL_EINTERNAL for NULL s or out. */
int collalgo_algo_parse(const char *s, collalgo_algo *out, cxl_err *err);

#endif

/* collalgo.c - ring, tree and hierarchical collectives as phases of link load (see collalgo.h and
 * docs/collectives.md, "Collective algorithms as phases", for the derivations).
 *
 * Every byte count is S times a rational coefficient num/den of the group shape (n ranks, g per node,
 * k nodes). A phase stores the count rounded up to whole bytes plus the shortfall below it in units of
 * 1/den, so collalgo_time_ps can charge the exact amount. Arithmetic is 128-bit: S x num < 2^88 keeps
 * S x num x 10^12 below 2^128. */
#include "train/collalgo.h"

#include <stddef.h>
#include <string.h>

__extension__ typedef unsigned __int128 collalgo_u128;

#define PS_PER_S 1000000000000ull
#define COLLALGO_EXACT_LIMIT ((collalgo_u128)1 << 88)

typedef struct collalgo_shape {
    uint32_t n, g, k; /* ranks, ranks per node, nodes */
} collalgo_shape;

/* ceil(S x num / den) and the shortfall (whole x den - S x num), 0 <= shortfall < den. */
static int collalgo_amount(uint64_t S, uint64_t num, uint64_t den, uint64_t *whole, uint64_t *shortfall,
                           cxl_err *err)
{
    collalgo_u128 x = (collalgo_u128)S * num;
    if (x >= COLLALGO_EXACT_LIMIT)
        return cxl_errf(err, CXL_ELIMIT,
                        "collalgo: %llu bytes x coefficient %llu/%llu exceed the 2^88 exact-arithmetic range",
                        (unsigned long long)S, (unsigned long long)num, (unsigned long long)den);
    collalgo_u128 q = (x + den - 1) / den;
    if (q > UINT64_MAX)
        return cxl_errf(err, CXL_ELIMIT, "collalgo: %llu bytes x %llu/%llu do not fit in 64 bits",
                        (unsigned long long)S, (unsigned long long)num, (unsigned long long)den);
    *whole = (uint64_t)q;
    *shortfall = (uint64_t)(q * den - x);
    return 0;
}

/* One phase carrying S x intra_num/den on INTRA and S x inter_num/den on INTER. */
static int collalgo_phase_set(collalgo_phase *ph, uint64_t S, uint64_t intra_num, uint64_t inter_num, uint64_t den,
                              uint32_t intra_hops, uint32_t inter_hops, cxl_err *err)
{
    memset(ph, 0, sizeof *ph);
    ph->frac_den = den;
    ph->intra_hops = intra_hops;
    ph->inter_hops = inter_hops;
    int rc = collalgo_amount(S, intra_num, den, &ph->intra_bytes, &ph->intra_short, err);
    if (rc)
        return rc;
    return collalgo_amount(S, inter_num, den, &ph->inter_bytes, &ph->inter_short, err);
}

/* ceil(log2 x) for x >= 1. */
static uint32_t collalgo_ceil_log2(uint32_t x)
{
    uint32_t d = 0;
    while (((uint64_t)1 << d) < x)
        d++;
    return d;
}

/* ---- the algorithms (group already validated, n > 1, S > 0) ---- */

/* Flat ring. A pass is n-1 steps (reduce-scatter, all-gather, the broadcast pipeline); all-reduce is two.
 * Per pass the critical path of a chunk crosses every node boundary once (k inter hops) unless every
 * edge is one (g = 1: n-1 = k-1 hops); on one node there is none. */
static int collalgo_ring(collalgo_op op, const collalgo_shape *s, uint64_t S, collalgo_phase *out, uint32_t *np,
                         cxl_err *err)
{
    uint64_t n = s->n, g = s->g, k = s->k;
    uint32_t passes = op == COLLALGO_ALLREDUCE ? 2 : 1;
    uint32_t steps = passes * (s->n - 1);
    uint32_t inter_hops = s->k == 1 ? 0 : passes * (s->k < s->n ? s->k : s->n - 1);
    uint64_t intra_num, inter_num, den;
    if (op == COLLALGO_BROADCAST) {
        /* every rank but the last forwards S; the root's node exits through one GPU per ring */
        if (k == 1) {
            intra_num = 1, inter_num = 0, den = 1;
        } else {
            intra_num = g - 1, inter_num = 1, den = g;
        }
    } else if (k == 1) {
        /* passes x (n-1)/n x S, all on INTRA */
        intra_num = passes * (n - 1), inter_num = 0, den = n;
    } else {
        /* per ring a node has g-1 intra edges and one inter edge; spread over its g GPUs */
        intra_num = passes * (n - 1) * (g - 1), inter_num = passes * (n - 1), den = n * g;
    }
    *np = 1;
    return collalgo_phase_set(&out[0], S, intra_num, inter_num, den, steps - inter_hops, inter_hops, err);
}

/* Reduce-scatter on the node, then the operation across nodes on S/g (one ring per local rank, each on
 * its GPU's NIC), then all-gather on the node; k > 1 and g > 1. */
static int collalgo_hier(collalgo_op op, const collalgo_shape *s, uint64_t S, collalgo_phase *out, uint32_t *np,
                         cxl_err *err)
{
    uint64_t g = s->g, k = s->k;
    uint32_t in_hops = s->g - 1, x_hops = s->k - 1;
    int rc = 0;
    switch (op) {
    case COLLALGO_ALLREDUCE:
        *np = 3;
        rc = collalgo_phase_set(&out[0], S, g - 1, 0, g, in_hops, 0, err);
        if (!rc)
            rc = collalgo_phase_set(&out[1], S, 0, 2 * (k - 1), k * g, 0, 2 * x_hops, err);
        if (!rc)
            rc = collalgo_phase_set(&out[2], S, g - 1, 0, g, in_hops, 0, err);
        break;
    case COLLALGO_REDUCE_SCATTER:
        *np = 2;
        rc = collalgo_phase_set(&out[0], S, g - 1, 0, g, in_hops, 0, err);
        if (!rc)
            rc = collalgo_phase_set(&out[1], S, 0, k - 1, k * g, 0, x_hops, err);
        break;
    case COLLALGO_ALLGATHER:
        *np = 2;
        rc = collalgo_phase_set(&out[0], S, 0, k - 1, k * g, 0, x_hops, err);
        if (!rc)
            rc = collalgo_phase_set(&out[1], S, g - 1, 0, g, in_hops, 0, err);
        break;
    default:
        return cxl_errf(err, CXL_EINTERNAL, "collalgo: hierarchical %s", collalgo_op_name(op));
    }
    return rc;
}

/* NCCL tree all-reduce: a chain of the g GPUs in each node (every chain edge carries S up and S down)
 * and a double binary tree across nodes (each tree S/2, pipelined up and down at once). The busiest
 * node sends, in halves of S: 0 (k = 1), 2 (k = 2: a root with one child and a child), 3 (k = 3),
 * 4 (k >= 4: interior with two children and a parent in one tree, leaf in the other). */
static int collalgo_tree(const collalgo_shape *s, uint64_t S, collalgo_phase *out, uint32_t *np, cxl_err *err)
{
    uint64_t g = s->g;
    uint64_t halves = s->k == 1 ? 0 : s->k == 2 ? 2 : s->k == 3 ? 3 : 4;
    *np = 1;
    return collalgo_phase_set(&out[0], S, 4 * (g - 1), halves, 2 * g, 2 * (s->g - 1),
                              2 * collalgo_ceil_log2(s->k), err);
}

static int collalgo_supported(collalgo_op op, collalgo_algo a)
{
    switch (a) {
    case COLLALGO_RING:
    case COLLALGO_AUTO:
        return 1;
    case COLLALGO_HIERARCHICAL:
        return op != COLLALGO_BROADCAST;
    case COLLALGO_TREE:
        return op == COLLALGO_ALLREDUCE;
    }
    return 0;
}

/* Plans one concrete algorithm; reports the one planned. */
static int collalgo_plan_one(collalgo_op op, collalgo_algo a, const collalgo_shape *s, uint64_t S,
                             collalgo_phase *out, uint32_t *np, collalgo_algo *planned, cxl_err *err)
{
    if (a == COLLALGO_HIERARCHICAL && (s->k == 1 || s->g == 1))
        a = COLLALGO_RING;
    *planned = a;
    switch (a) {
    case COLLALGO_RING:
        return collalgo_ring(op, s, S, out, np, err);
    case COLLALGO_HIERARCHICAL:
        return collalgo_hier(op, s, S, out, np, err);
    case COLLALGO_TREE:
        return collalgo_tree(s, S, out, np, err);
    default:
        return cxl_errf(err, CXL_EINTERNAL, "collalgo: cannot plan %s directly", collalgo_algo_name(a));
    }
}

int collalgo_plan(collalgo_op op, collalgo_algo algo, const collalgo_group *g, uint64_t bytes,
                  const collalgo_fabric *f, collalgo_phase out[COLLALGO_MAX_PHASES], uint32_t *n_phases,
                  collalgo_algo *chosen, cxl_err *err)
{
    if (!g || !f || !out || !n_phases)
        return cxl_errf(err, CXL_EINTERNAL, "collalgo: plan needs a group, a fabric and an output");
    *n_phases = 0;
    if ((unsigned)op > COLLALGO_BROADCAST)
        return cxl_errf(err, CXL_ECONFIG, "collalgo: operation %d; valid: 0..%d (all-reduce .. broadcast)",
                        (int)op, (int)COLLALGO_BROADCAST);
    if ((unsigned)algo > COLLALGO_AUTO)
        return cxl_errf(err, CXL_ECONFIG, "collalgo: algorithm %d; valid: ring, tree, hierarchical, auto",
                        (int)algo);
    if (g->ranks == 0)
        return cxl_errf(err, CXL_ECONFIG, "collalgo: group of 0 ranks; need at least 1");
    if (g->ranks_per_node == 0)
        return cxl_errf(err, CXL_ECONFIG, "collalgo: 0 ranks per node; need at least 1");
    if (g->ranks % g->ranks_per_node)
        return cxl_errf(err, CXL_ECONFIG,
                        "collalgo: %u ranks per node do not divide %u ranks; every node must hold as many",
                        g->ranks_per_node, g->ranks);
    if (g->ranks > COLLALGO_MAX_RANKS)
        return cxl_errf(err, CXL_ELIMIT, "collalgo: group of %u ranks; the model serves at most %u", g->ranks,
                        COLLALGO_MAX_RANKS);
    if (!collalgo_supported(op, algo))
        return cxl_errf(err, CXL_ECONFIG, "collalgo: %s does not support %s; %s", collalgo_algo_name(algo),
                        collalgo_op_name(op),
                        algo == COLLALGO_TREE ? "tree is all-reduce only (use ring, hierarchical or auto)"
                                              : "use ring or auto");
    collalgo_shape s = {.n = g->ranks, .g = g->ranks_per_node, .k = g->ranks / g->ranks_per_node};
    if (s.g > 1 && f->intra_Bps == 0)
        return cxl_errf(err, CXL_ECONFIG, "collalgo: intra-node bandwidth 0 B/s with %u ranks per node; need > 0",
                        s.g);
    if (s.k > 1 && f->inter_Bps == 0)
        return cxl_errf(err, CXL_ECONFIG, "collalgo: inter-node bandwidth 0 B/s across %u nodes; need > 0", s.k);

    collalgo_algo planned = algo;
    if (s.n == 1 || bytes == 0) {
        if (algo == COLLALGO_AUTO || algo == COLLALGO_HIERARCHICAL)
            planned = COLLALGO_RING;
    } else if (algo != COLLALGO_AUTO) {
        uint32_t np = 0;
        int rc = collalgo_plan_one(op, algo, &s, bytes, out, &np, &planned, err);
        if (rc)
            return rc;
        *n_phases = np;
    } else {
        /* candidates in tie-break order; strict < keeps the earlier one */
        static const collalgo_algo order[] = {COLLALGO_RING, COLLALGO_HIERARCHICAL, COLLALGO_TREE};
        int64_t best = -1;
        for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
            if (!collalgo_supported(op, order[i]))
                continue;
            collalgo_phase tmp[COLLALGO_MAX_PHASES];
            uint32_t np = 0;
            collalgo_algo a;
            int rc = collalgo_plan_one(op, order[i], &s, bytes, tmp, &np, &a, err);
            int64_t t = rc ? rc : collalgo_time_ps(tmp, np, f, err);
            if (t < 0) {
                *n_phases = 0;
                return (int)t;
            }
            if (best < 0 || t < best) {
                best = t;
                planned = a;
                memcpy(out, tmp, np * sizeof tmp[0]);
                *n_phases = np;
            }
        }
    }
    if (chosen)
        *chosen = planned;
    return 0;
}

/* ceil(exact bytes x 10^12 / Bps) for one fabric of a phase; exact = bytes - shortfall / den. */
static int collalgo_xfer_ps(uint64_t bytes, uint64_t shortfall, uint64_t den, uint64_t Bps, const char *fabric,
                            uint32_t i, collalgo_u128 *out, cxl_err *err)
{
    *out = 0;
    if (shortfall >= den || (bytes == 0 && shortfall))
        return cxl_errf(err, CXL_ECONFIG,
                        "collalgo: phase %u: %s shortfall %llu/%llu of a byte on %llu bytes; need < 1 byte and "
                        "no more than the bytes",
                        i, fabric, (unsigned long long)shortfall, (unsigned long long)den,
                        (unsigned long long)bytes);
    if (bytes == 0)
        return 0;
    if (Bps == 0)
        return cxl_errf(err, CXL_ECONFIG, "collalgo: phase %u sends %llu bytes over %s of bandwidth 0 B/s; need > 0",
                        i, (unsigned long long)bytes, fabric);
    collalgo_u128 x = (collalgo_u128)bytes * den - shortfall;
    if (x >= COLLALGO_EXACT_LIMIT)
        return cxl_errf(err, CXL_ELIMIT, "collalgo: phase %u: %llu bytes x 1/%llu exceed the 2^88 exact range", i,
                        (unsigned long long)bytes, (unsigned long long)den);
    collalgo_u128 num = x * PS_PER_S, d = (collalgo_u128)den * Bps;
    *out = (num + d - 1) / d;
    return 0;
}

int64_t collalgo_time_ps(const collalgo_phase *p, uint32_t n, const collalgo_fabric *f, cxl_err *err)
{
    if (!f || (n && !p))
        return cxl_errf(err, CXL_EINTERNAL, "collalgo: time needs a fabric and the phases");
    collalgo_u128 total = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t den = p[i].frac_den ? p[i].frac_den : 1;
        collalgo_u128 ta, te;
        int rc = collalgo_xfer_ps(p[i].intra_bytes, p[i].intra_short, den, f->intra_Bps, "intra-node", i, &ta, err);
        if (rc)
            return rc;
        rc = collalgo_xfer_ps(p[i].inter_bytes, p[i].inter_short, den, f->inter_Bps, "inter-node", i, &te, err);
        if (rc)
            return rc;
        /* hops x latency < 2^96 and a transfer < 2^128: bound each before adding so nothing wraps */
        collalgo_u128 lat = (collalgo_u128)p[i].intra_hops * f->intra_latency_ps +
                            (collalgo_u128)p[i].inter_hops * f->inter_latency_ps;
        collalgo_u128 xfer = ta > te ? ta : te;
        if (lat > (collalgo_u128)INT64_MAX || xfer > (collalgo_u128)INT64_MAX)
            return cxl_errf(err, CXL_ELIMIT, "collalgo: time beyond %lld ps at phase %u", (long long)INT64_MAX, i);
        total += lat + xfer;
        if (total > (collalgo_u128)INT64_MAX)
            return cxl_errf(err, CXL_ELIMIT, "collalgo: time beyond %lld ps at phase %u", (long long)INT64_MAX, i);
    }
    return (int64_t)total;
}

const char *collalgo_algo_name(collalgo_algo a)
{
    switch (a) {
    case COLLALGO_RING:
        return "ring";
    case COLLALGO_TREE:
        return "tree";
    case COLLALGO_HIERARCHICAL:
        return "hierarchical";
    case COLLALGO_AUTO:
        return "auto";
    }
    return "?";
}

const char *collalgo_op_name(collalgo_op op)
{
    switch (op) {
    case COLLALGO_ALLREDUCE:
        return "all-reduce";
    case COLLALGO_REDUCE_SCATTER:
        return "reduce-scatter";
    case COLLALGO_ALLGATHER:
        return "all-gather";
    case COLLALGO_BROADCAST:
        return "broadcast";
    }
    return "?";
}

int collalgo_algo_parse(const char *s, collalgo_algo *out, cxl_err *err)
{
    if (!s || !out)
        return cxl_errf(err, CXL_EINTERNAL, "collalgo: parse needs a string and an output");
    for (int a = COLLALGO_RING; a <= COLLALGO_AUTO; a++)
        if (strcmp(s, collalgo_algo_name((collalgo_algo)a)) == 0) {
            *out = (collalgo_algo)a;
            return 0;
        }
    return cxl_errf(err, CXL_ECONFIG, "collalgo: unknown algorithm \"%s\"; valid: ring, tree, hierarchical, auto",
                    s);
}

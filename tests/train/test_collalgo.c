/* test_collalgo.c - collective algorithms as phases: the flat ring against coll.h's closed form on one node
 * and with one rank per node, byte conservation and phase structure of the hierarchical algorithm, the
 * tree's per-node load and depth against NCCL's double binary tree rebuilt here, the ring/tree and
 * ring/hierarchical crossovers, AUTO against every algorithm, and every error path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "train/coll.h"
#include "train/collalgo.h"

#define KIB 1024ull
#define MIB (1024ull * 1024ull)
#define GIB (1024ull * MIB)
#define GBPS 1000000000ull /* 1 GB/s in B/s */
#define US 1000000ull      /* 1 us in ps */

__extension__ typedef unsigned __int128 u128;

static collalgo_fabric fabric(uint64_t intra_gbps, uint64_t inter_gbps, uint64_t intra_lat_ps, uint64_t inter_lat_ps)
{
    return (collalgo_fabric){.intra_Bps = intra_gbps * GBPS, .inter_Bps = inter_gbps * GBPS,
                             .intra_latency_ps = intra_lat_ps, .inter_latency_ps = inter_lat_ps};
}

/* Plans and returns the phase count; fails the test on error. */
static uint32_t plan(collalgo_op op, collalgo_algo algo, uint32_t ranks, uint32_t per_node, uint64_t bytes,
                     const collalgo_fabric *f, collalgo_phase *ph, collalgo_algo *chosen)
{
    collalgo_group g = {.ranks = ranks, .ranks_per_node = per_node};
    uint32_t n = 99;
    cxl_err e;
    cxl_err_clear(&e);
    int rc = collalgo_plan(op, algo, &g, bytes, f, ph, &n, chosen, &e);
    if (rc)
        fail_msg("plan %s %s %u/%u %llu: %s", collalgo_op_name(op), collalgo_algo_name(algo), ranks, per_node,
                 (unsigned long long)bytes, e.msg);
    assert_true(n <= COLLALGO_MAX_PHASES);
    return n;
}

static int64_t time_of(const collalgo_phase *ph, uint32_t n, const collalgo_fabric *f)
{
    cxl_err e;
    int64_t t = collalgo_time_ps(ph, n, f, &e);
    if (t < 0)
        fail_msg("time: %s", e.msg);
    return t;
}

static int64_t plan_time(collalgo_op op, collalgo_algo algo, uint32_t ranks, uint32_t per_node, uint64_t bytes,
                         const collalgo_fabric *f)
{
    collalgo_phase ph[COLLALGO_MAX_PHASES];
    uint32_t n = plan(op, algo, ranks, per_node, bytes, f, ph, NULL);
    return time_of(ph, n, f);
}

/* Exact bytes of one fabric of a phase, times d (a multiple of the phase's denominator). */
static u128 exact_times(uint64_t bytes, uint64_t shortfall, uint64_t den, uint64_t d)
{
    den = den ? den : 1;
    assert_int_equal(d % den, 0);
    return ((u128)bytes * den - shortfall) * (d / den);
}

/* ---- names ---- */

static void names_and_parse(void **state)
{
    (void)state;
    const char *names[] = {"ring", "tree", "hierarchical", "auto"};
    for (int a = 0; a < 4; a++) {
        collalgo_algo out = COLLALGO_AUTO;
        assert_string_equal(collalgo_algo_name((collalgo_algo)a), names[a]);
        assert_int_equal(collalgo_algo_parse(names[a], &out, NULL), 0);
        assert_int_equal(out, a);
    }
    assert_string_equal(collalgo_algo_name((collalgo_algo)7), "?");
    assert_string_equal(collalgo_op_name(COLLALGO_REDUCE_SCATTER), "reduce-scatter");
    assert_string_equal(collalgo_op_name((collalgo_op)9), "?");
    cxl_err e;
    collalgo_algo out;
    assert_int_equal(collalgo_algo_parse("Ring", &out, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "\"Ring\""));
    assert_non_null(strstr(e.msg, "hierarchical"));
    assert_int_equal(collalgo_algo_parse(NULL, &out, &e), CXL_EINTERNAL);
}

/* ---- ring against the closed form ---- */

static void ring_one_node_equals_closed_form(void **state)
{
    (void)state;
    const uint32_t ns[] = {2, 3, 5, 7, 8, 16, 72};
    const uint64_t sizes[] = {1, 1000, 3 * MIB + 1, 64 * MIB, GIB + 12345, 123456789012ull};
    const uint64_t bws[] = {3 * GBPS, 300 * GBPS, 450 * GBPS + 7};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++)
            for (size_t b = 0; b < sizeof bws / sizeof bws[0]; b++) {
                /* inter_Bps 0: one node needs no NIC */
                collalgo_fabric f = {.intra_Bps = bws[b], .intra_latency_ps = 1700000 + b,
                                     .inter_latency_ps = 99 * US};
                collalgo_phase ph[COLLALGO_MAX_PHASES];
                collalgo_algo chosen;
                uint32_t n = plan(COLLALGO_ALLREDUCE, COLLALGO_RING, ns[i], ns[i], sizes[j], &f, ph, &chosen);
                assert_int_equal(n, 1);
                assert_int_equal(chosen, COLLALGO_RING);
                assert_int_equal(ph[0].inter_bytes, 0);
                assert_int_equal(ph[0].inter_hops, 0);
                assert_int_equal(ph[0].intra_hops, 2 * (ns[i] - 1));
                int64_t want =
                    coll_ring_allreduce_closed_form_ps(ns[i], sizes[j], bws[b], f.intra_latency_ps, NULL);
                assert_true(want > 0);
                assert_int_equal(time_of(ph, n, &f), want);
                /* the tree on one node is a chain: the same load, the same time */
                assert_int_equal(plan_time(COLLALGO_ALLREDUCE, COLLALGO_TREE, ns[i], ns[i], sizes[j], &f), want);
            }
}

static void ring_one_rank_per_node_equals_closed_form(void **state)
{
    (void)state;
    const uint32_t ns[] = {2, 3, 4, 9, 64, 1000};
    const uint64_t sizes[] = {1, 999, 64 * MIB, 5 * GIB + 3};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
            /* intra_Bps 0: one rank per node uses no NVLink */
            collalgo_fabric f = {.inter_Bps = 25 * GBPS + 1, .inter_latency_ps = 6 * US, .intra_latency_ps = 1};
            collalgo_phase ph[COLLALGO_MAX_PHASES];
            uint32_t n = plan(COLLALGO_ALLREDUCE, COLLALGO_RING, ns[i], 1, sizes[j], &f, ph, NULL);
            assert_int_equal(n, 1);
            assert_int_equal(ph[0].intra_bytes, 0);
            assert_int_equal(ph[0].intra_hops, 0);
            assert_int_equal(ph[0].inter_hops, 2 * (ns[i] - 1));
            assert_int_equal(time_of(ph, n, &f),
                             coll_ring_allreduce_closed_form_ps(ns[i], sizes[j], f.inter_Bps, 6 * US, NULL));
        }
}

static void ring_8x4_by_hand(void **state)
{
    (void)state;
    /* n = 32, g = 8, k = 4, S = 64 MiB. Per rank 2 x 31/32 x S = 130023424 B; per ring a node has 7 intra
     * edges and 1 inter edge, spread over 8 GPUs:
     *   intra = 2 x 31 x 7 / 256 x 2^26 = 434 x 2^18 = 113770496 B,  inter = 62 x 2^18 = 16252928 B.
     * Hops: 62 steps; each pass of 31 crosses the 4 node boundaries: 8 inter, 54 intra.
     * Time at 300/25 GB/s, 1/5 us: 54 + 40 us of latency + max(379234.99 ns, 650117.12 ns). */
    collalgo_fabric f = fabric(300, 25, US, 5 * US);
    collalgo_phase ph[COLLALGO_MAX_PHASES];
    uint32_t n = plan(COLLALGO_ALLREDUCE, COLLALGO_RING, 32, 8, 64 * MIB, &f, ph, NULL);
    assert_int_equal(n, 1);
    assert_int_equal(ph[0].intra_bytes, 113770496);
    assert_int_equal(ph[0].inter_bytes, 16252928);
    assert_int_equal(ph[0].intra_short, 0);
    assert_int_equal(ph[0].inter_short, 0);
    assert_int_equal(ph[0].intra_hops, 54);
    assert_int_equal(ph[0].inter_hops, 8);
    /* 16252928 B / 25e9 B/s = 650117.12 ns -> 650117120 ps; latency 94 us */
    assert_int_equal(time_of(ph, n, &f), 650117120 + 94 * US);
    /* 8 ranks, g = 2, reduce-scatter of 8000 B: the pass of 7 steps crosses the 4 boundaries; per ring a
     * node has 1 intra and 1 inter edge: 7/8 x 8000 / 2 = 3500 B on each fabric */
    n = plan(COLLALGO_REDUCE_SCATTER, COLLALGO_RING, 8, 2, 8000, &f, ph, NULL);
    assert_int_equal(ph[0].inter_hops, 4);
    assert_int_equal(ph[0].intra_hops, 3);
    assert_int_equal(ph[0].intra_bytes, 3500);
    assert_int_equal(ph[0].inter_bytes, 3500);
}

static void ring_reduce_scatter_plus_all_gather_is_all_reduce(void **state)
{
    (void)state;
    const uint32_t shapes[][2] = {{8, 8}, {32, 8}, {6, 2}, {12, 3}, {5, 1}, {1024, 8}, {72, 72}};
    const uint64_t sizes[] = {1, 77777, 64 * MIB, 3 * GIB + 5};
    collalgo_fabric f = fabric(450, 50, 2 * US, 7 * US);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
            collalgo_phase ar[COLLALGO_MAX_PHASES], rs[COLLALGO_MAX_PHASES], ag[COLLALGO_MAX_PHASES];
            uint32_t nar = plan(COLLALGO_ALLREDUCE, COLLALGO_RING, shapes[i][0], shapes[i][1], sizes[j], &f, ar, NULL);
            uint32_t nrs =
                plan(COLLALGO_REDUCE_SCATTER, COLLALGO_RING, shapes[i][0], shapes[i][1], sizes[j], &f, rs, NULL);
            uint32_t nag = plan(COLLALGO_ALLGATHER, COLLALGO_RING, shapes[i][0], shapes[i][1], sizes[j], &f, ag, NULL);
            assert_int_equal(nar, 1);
            assert_int_equal(nrs, 1);
            assert_int_equal(nag, 1);
            /* exact bytes add up */
            uint64_t d = ar[0].frac_den;
            assert_true(exact_times(rs[0].intra_bytes, rs[0].intra_short, rs[0].frac_den, d) +
                            exact_times(ag[0].intra_bytes, ag[0].intra_short, ag[0].frac_den, d) ==
                        exact_times(ar[0].intra_bytes, ar[0].intra_short, d, d));
            assert_true(exact_times(rs[0].inter_bytes, rs[0].inter_short, rs[0].frac_den, d) +
                            exact_times(ag[0].inter_bytes, ag[0].inter_short, ag[0].frac_den, d) ==
                        exact_times(ar[0].inter_bytes, ar[0].inter_short, d, d));
            assert_int_equal(rs[0].intra_hops + ag[0].intra_hops, ar[0].intra_hops);
            assert_int_equal(rs[0].inter_hops + ag[0].inter_hops, ar[0].inter_hops);
            /* times add up to the picosecond, except each half's own round-up */
            int64_t t = time_of(rs, 1, &f) + time_of(ag, 1, &f) - time_of(ar, 1, &f);
            assert_true(t >= 0 && t <= 1);
        }
}

/* ---- hierarchical ---- */

static void hierarchical_phases_and_conservation(void **state)
{
    (void)state;
    collalgo_fabric f = fabric(300, 25, US, 5 * US);
    const uint32_t shapes[][2] = {{32, 8}, {16, 2}, {6, 3}, {1024, 8}};
    const uint64_t sizes[] = {1, 1000, 64 * MIB, GIB + 1};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
            uint64_t n = shapes[i][0], g = shapes[i][1], k = n / g, S = sizes[j];
            collalgo_phase ph[COLLALGO_MAX_PHASES];
            collalgo_algo chosen;
            uint32_t np = plan(COLLALGO_ALLREDUCE, COLLALGO_HIERARCHICAL, (uint32_t)n, (uint32_t)g, S, &f, ph, &chosen);
            assert_int_equal(chosen, COLLALGO_HIERARCHICAL);
            assert_int_equal(np, 3);
            /* shape: intra RS, inter AR, intra AG */
            assert_int_equal(ph[0].inter_bytes, 0);
            assert_int_equal(ph[1].intra_bytes, 0);
            assert_int_equal(ph[2].inter_bytes, 0);
            assert_int_equal(ph[0].intra_hops, g - 1);
            assert_int_equal(ph[0].inter_hops, 0);
            assert_int_equal(ph[1].inter_hops, 2 * (k - 1));
            assert_int_equal(ph[1].intra_hops, 0);
            assert_int_equal(ph[2].intra_hops, g - 1);
            /* sums, exactly (d = k g is a multiple of every phase's denominator):
             *   intra = 2(g-1)/g S,  inter = 2(k-1)/k x S/g */
            uint64_t d = k * g;
            u128 intra = 0, inter = 0;
            for (uint32_t p = 0; p < np; p++) {
                intra += exact_times(ph[p].intra_bytes, ph[p].intra_short, ph[p].frac_den, d);
                inter += exact_times(ph[p].inter_bytes, ph[p].inter_short, ph[p].frac_den, d);
            }
            assert_true(intra == (u128)2 * (g - 1) * k * S);
            assert_true(inter == (u128)2 * (k - 1) * S);
            /* reduce-scatter then all-gather carry the same bytes as the all-reduce, split in half */
            collalgo_phase rs[COLLALGO_MAX_PHASES], ag[COLLALGO_MAX_PHASES];
            uint32_t nrs =
                plan(COLLALGO_REDUCE_SCATTER, COLLALGO_HIERARCHICAL, (uint32_t)n, (uint32_t)g, S, &f, rs, NULL);
            uint32_t nag = plan(COLLALGO_ALLGATHER, COLLALGO_HIERARCHICAL, (uint32_t)n, (uint32_t)g, S, &f, ag, NULL);
            assert_int_equal(nrs, 2);
            assert_int_equal(nag, 2);
            assert_memory_equal(&rs[0], &ph[0], sizeof ph[0]); /* intra reduce-scatter first */
            assert_memory_equal(&ag[1], &ph[2], sizeof ph[0]); /* intra all-gather last */
            assert_true(exact_times(rs[1].inter_bytes, rs[1].inter_short, rs[1].frac_den, d) ==
                        (u128)(k - 1) * S);
            assert_true(exact_times(ag[0].inter_bytes, ag[0].inter_short, ag[0].frac_den, d) ==
                        (u128)(k - 1) * S);
            assert_int_equal(rs[1].inter_hops + ag[0].inter_hops, ph[1].inter_hops);
        }
}

static void hierarchical_degenerates_to_ring(void **state)
{
    (void)state;
    collalgo_fabric f = fabric(300, 25, US, 5 * US);
    const uint32_t shapes[][2] = {{8, 8}, {16, 1}};
    for (size_t i = 0; i < 2; i++)
        for (int op = COLLALGO_ALLREDUCE; op <= COLLALGO_ALLGATHER; op++) {
            collalgo_phase h[COLLALGO_MAX_PHASES], r[COLLALGO_MAX_PHASES];
            collalgo_algo chosen = COLLALGO_TREE;
            uint32_t nh = plan((collalgo_op)op, COLLALGO_HIERARCHICAL, shapes[i][0], shapes[i][1], 5 * MIB + 3, &f, h,
                               &chosen);
            uint32_t nr = plan((collalgo_op)op, COLLALGO_RING, shapes[i][0], shapes[i][1], 5 * MIB + 3, &f, r, NULL);
            assert_int_equal(chosen, COLLALGO_RING);
            assert_int_equal(nh, nr);
            assert_memory_equal(h, r, nr * sizeof r[0]);
        }
}

static void hierarchical_versus_ring(void **state)
{
    (void)state;
    /* 8 GPUs x 4 nodes, zero latency. Bandwidth terms (derivation in docs/collectives.md):
     *   ring  max(2 x 31/32 x 7/8 S / Ba, 2 x 31/32 / 8 S / Be)
     *   hier  2 x 7/8 S / Ba + 2 x 3/4 / 8 S / Be
     * When the ring is NIC-bound, ring - hier = 2 x 7/8 S (1/(32 Be) - 1/Ba): hierarchical wins on
     * bandwidth only when Ba > n Be = 32 Be. */
    collalgo_fabric f = fabric(320, 10, 0, 0);
    int64_t r = plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 32, 8, GIB, &f);
    int64_t h = plan_time(COLLALGO_ALLREDUCE, COLLALGO_HIERARCHICAL, 32, 8, GIB, &f);
    assert_true(h - r >= 0 && h - r <= 2); /* equal but for the three phases' round-ups */
    f.intra_Bps = 330 * GBPS;
    assert_true(plan_time(COLLALGO_ALLREDUCE, COLLALGO_HIERARCHICAL, 32, 8, GIB, &f) <
                plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 32, 8, GIB, &f));
    f.intra_Bps = 310 * GBPS;
    assert_true(plan_time(COLLALGO_ALLREDUCE, COLLALGO_HIERARCHICAL, 32, 8, GIB, &f) >
                plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 32, 8, GIB, &f));

    /* NVLink 900 GB/s over 100 Gb/s Ethernet (12.5 GB/s per GPU): 72 x, above n = 32: hierarchical wins
     * for large buffers too. */
    f = (collalgo_fabric){.intra_Bps = 900 * GBPS, .inter_Bps = 12500000000ull, .intra_latency_ps = US,
                          .inter_latency_ps = 5 * US};
    assert_true(plan_time(COLLALGO_ALLREDUCE, COLLALGO_HIERARCHICAL, 32, 8, GIB, &f) <
                plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 32, 8, GIB, &f));
    /* 300 vs 25 GB/s (12 x < 32 x): the flat ring's overlap of NVLink and NIC wins for large buffers,
     * while the hierarchical's 6 inter + 14 intra latencies beat the ring's 8 + 54 for small ones. */
    f = fabric(300, 25, US, 5 * US);
    assert_true(plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 32, 8, GIB, &f) <
                plan_time(COLLALGO_ALLREDUCE, COLLALGO_HIERARCHICAL, 32, 8, GIB, &f));
    assert_true(plan_time(COLLALGO_ALLREDUCE, COLLALGO_HIERARCHICAL, 32, 8, 64 * KIB, &f) <
                plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 32, 8, 64 * KIB, &f));
}

/* ---- tree ---- */

/* NCCL's binary tree over `nranks` (src/graph/trees.cc, ncclGetBtree), rebuilt: root 0 has one child, the
 * largest power of two below the first power of two >= nranks; rank r with lowest set bit b has parent
 * (r ^ b) | 2b, or r ^ b when that is out of range, and children r - b/2 and r + b/2, the latter
 * shrunk by halving b/2 until it is in range. */
static void btree(int nranks, int rank, int *up, int *d0, int *d1)
{
    int bit;
    for (bit = 1; bit < nranks; bit <<= 1)
        if (bit & rank)
            break;
    if (rank == 0) {
        *up = -1;
        *d0 = -1;
        *d1 = nranks > 1 ? bit >> 1 : -1;
        return;
    }
    *up = (rank ^ bit) | (bit << 1);
    if (*up >= nranks)
        *up = rank ^ bit;
    int low = bit >> 1;
    *d0 = low == 0 ? -1 : rank - low;
    *d1 = -1;
    for (; low > 0; low >>= 1)
        if (rank + low < nranks) {
            *d1 = rank + low;
            break;
        }
}

/* The second tree: mirrored (even nranks) or shifted by one (odd), as ncclGetDtree. */
static void dtree2(int nranks, int rank, int *up, int *d0, int *d1)
{
    int u, a, b;
    if (nranks % 2) {
        btree(nranks, (rank - 1 + nranks) % nranks, &u, &a, &b);
        *up = u < 0 ? -1 : (u + 1) % nranks;
        *d0 = a < 0 ? -1 : (a + 1) % nranks;
        *d1 = b < 0 ? -1 : (b + 1) % nranks;
    } else {
        btree(nranks, nranks - 1 - rank, &u, &a, &b);
        *up = u < 0 ? -1 : nranks - 1 - u;
        *d0 = a < 0 ? -1 : nranks - 1 - a;
        *d1 = b < 0 ? -1 : nranks - 1 - b;
    }
}

static void tree_matches_nccl_double_binary_tree(void **state)
{
    (void)state;
    collalgo_fabric f = fabric(300, 25, US, 5 * US);
    for (int k = 2; k <= 300; k++) {
        /* busiest node: messages sent per direction, each S/2, over both trees; deepest leaf */
        int max_links = 0, depth = 0;
        for (int r = 0; r < k; r++) {
            int links = 0;
            for (int t = 0; t < 2; t++) {
                int u, a, b;
                if (t == 0)
                    btree(k, r, &u, &a, &b);
                else
                    dtree2(k, r, &u, &a, &b);
                links += (u >= 0) + (a >= 0) + (b >= 0);
                int d = 0;
                for (int x = r; u >= 0; d++) {
                    x = u;
                    if (t == 0)
                        btree(k, x, &u, &a, &b);
                    else
                        dtree2(k, x, &u, &a, &b);
                }
                if (d > depth)
                    depth = d;
            }
            if (links > max_links)
                max_links = links;
        }
        /* one GPU per node: the representative carries the whole node load, S/2 per link */
        const uint64_t S = 2 * 1000003ull;
        collalgo_phase ph[COLLALGO_MAX_PHASES];
        uint32_t np = plan(COLLALGO_ALLREDUCE, COLLALGO_TREE, (uint32_t)k, 1, S, &f, ph, NULL);
        assert_int_equal(np, 1);
        assert_int_equal(ph[0].intra_bytes, 0);
        if (ph[0].inter_bytes != (uint64_t)max_links * (S / 2))
            fail_msg("k = %d: tree sends %llu B, NCCL's busiest node %d x S/2", k,
                     (unsigned long long)ph[0].inter_bytes, max_links);
        if (ph[0].inter_hops != 2u * (uint32_t)depth)
            fail_msg("k = %d: %u inter hops, NCCL's trees are %d deep", k, ph[0].inter_hops, depth);
        /* 8 GPUs per node: the chain adds 2 x 7 intra hops, 2 x 7/8 S, and the node load is spread */
        np = plan(COLLALGO_ALLREDUCE, COLLALGO_TREE, 8u * (uint32_t)k, 8, 8 * S, &f, ph, NULL);
        assert_int_equal(ph[0].intra_hops, 14);
        assert_int_equal(ph[0].intra_bytes, 14 * S);
        assert_int_equal(ph[0].inter_bytes, (uint64_t)max_links * (S / 2));
    }
}

static void ring_versus_tree(void **state)
{
    (void)state;
    collalgo_fabric f = fabric(300, 25, US, 5 * US);
    /* 8 x 4: the tree's 2S per node against the ring's 2 x 31/32 S costs 2S/(n g Be) = 10.7 us per GiB;
     * its latency saves 4 inter + 40 intra = 60 us: the ring wins from about 192 MB, the tree below */
    assert_true(plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 32, 8, 4 * GIB, &f) <
                plan_time(COLLALGO_ALLREDUCE, COLLALGO_TREE, 32, 8, 4 * GIB, &f));
    assert_true(plan_time(COLLALGO_ALLREDUCE, COLLALGO_TREE, 32, 8, MIB, &f) <
                plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 32, 8, MIB, &f));
    /* 64 nodes: 12 inter + 14 intra latencies against the ring's 128 + 894 */
    int64_t tr = plan_time(COLLALGO_ALLREDUCE, COLLALGO_TREE, 512, 8, MIB, &f);
    int64_t rr = plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 512, 8, MIB, &f);
    assert_true(tr * 10 < rr);
    /* no latency: the ring's (n-1)/n always wins on bandwidth from 4 nodes up */
    f = fabric(300, 25, 0, 0);
    assert_true(plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 512, 8, GIB, &f) <
                plan_time(COLLALGO_ALLREDUCE, COLLALGO_TREE, 512, 8, GIB, &f));
    /* ... but on 2 nodes each node sends only S over the NICs, the ring 2 x 15/16 S: the tree beats the
     * network bound (as NCCL's maintainers note for 2 nodes) */
    assert_true(plan_time(COLLALGO_ALLREDUCE, COLLALGO_TREE, 16, 8, GIB, &f) <
                plan_time(COLLALGO_ALLREDUCE, COLLALGO_RING, 16, 8, GIB, &f));
}

/* ---- broadcast ---- */

static void broadcast_ring(void **state)
{
    (void)state;
    /* one node: (n-1) a + S / B */
    collalgo_fabric f = {.intra_Bps = 3 * GBPS, .intra_latency_ps = 700};
    collalgo_phase ph[COLLALGO_MAX_PHASES];
    uint32_t np = plan(COLLALGO_BROADCAST, COLLALGO_RING, 8, 8, 1000, &f, ph, NULL);
    assert_int_equal(np, 1);
    assert_int_equal(ph[0].intra_bytes, 1000);
    assert_int_equal(ph[0].intra_hops, 7);
    /* 1000 B / 3e9 B/s = 333333.3 ps, up */
    assert_int_equal(time_of(ph, np, &f), 7 * 700 + 333334);
    /* one rank per node: the same on INTER */
    f = (collalgo_fabric){.inter_Bps = 3 * GBPS, .inter_latency_ps = 900};
    np = plan(COLLALGO_BROADCAST, COLLALGO_AUTO, 5, 1, 1000, &f, ph, NULL);
    assert_int_equal(time_of(ph, np, &f), 4 * 900 + 333334);
    /* 8 x 4: 7/8 S on NVLink, S/8 on the NIC; 31 steps of which 4 cross nodes */
    f = fabric(300, 25, US, 5 * US);
    np = plan(COLLALGO_BROADCAST, COLLALGO_RING, 32, 8, 8000, &f, ph, NULL);
    assert_int_equal(ph[0].intra_bytes, 7000);
    assert_int_equal(ph[0].inter_bytes, 1000);
    assert_int_equal(ph[0].inter_hops, 4);
    assert_int_equal(ph[0].intra_hops, 27);
}

/* ---- AUTO ---- */

static void auto_picks_the_minimum(void **state)
{
    (void)state;
    const uint32_t shapes[][2] = {{8, 8}, {16, 8}, {32, 8}, {512, 8}, {64, 1}, {4, 2}, {24, 3}};
    const uint64_t sizes[] = {1, 4 * KIB, MIB, 64 * MIB, 4 * GIB};
    const collalgo_fabric fabrics[] = {fabric(300, 25, US, 5 * US), fabric(900, 12, 2 * US, 10 * US),
                                       fabric(300, 25, 0, 0), fabric(100, 100, US, US)};
    const collalgo_algo order[] = {COLLALGO_RING, COLLALGO_HIERARCHICAL, COLLALGO_TREE};
    int seen[3] = {0};
    for (size_t fi = 0; fi < sizeof fabrics / sizeof fabrics[0]; fi++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++)
                for (int op = COLLALGO_ALLREDUCE; op <= COLLALGO_BROADCAST; op++) {
                    const collalgo_fabric *f = &fabrics[fi];
                    int64_t best = -1;
                    collalgo_algo want = COLLALGO_AUTO;
                    for (size_t a = 0; a < 3; a++) {
                        if (order[a] == COLLALGO_TREE && op != COLLALGO_ALLREDUCE)
                            continue;
                        if (order[a] == COLLALGO_HIERARCHICAL && op == COLLALGO_BROADCAST)
                            continue;
                        collalgo_phase ph[COLLALGO_MAX_PHASES];
                        collalgo_algo c;
                        uint32_t np = plan((collalgo_op)op, order[a], shapes[i][0], shapes[i][1], sizes[j], f, ph, &c);
                        int64_t t = time_of(ph, np, f);
                        if (best < 0 || t < best)
                            best = t, want = c;
                    }
                    collalgo_phase ph[COLLALGO_MAX_PHASES];
                    collalgo_algo got;
                    uint32_t np =
                        plan((collalgo_op)op, COLLALGO_AUTO, shapes[i][0], shapes[i][1], sizes[j], f, ph, &got);
                    assert_int_equal(time_of(ph, np, f), best);
                    assert_int_equal(got, want);
                    seen[got]++;
                }
    /* the grid exercises every winner */
    assert_true(seen[COLLALGO_RING] > 0);
    assert_true(seen[COLLALGO_HIERARCHICAL] > 0);
    assert_true(seen[COLLALGO_TREE] > 0);
    /* a tie (one node: ring, tree and hierarchical are the same) goes to the ring */
    collalgo_fabric f = fabric(300, 25, US, 5 * US);
    collalgo_phase ph[COLLALGO_MAX_PHASES];
    collalgo_algo got;
    plan(COLLALGO_ALLREDUCE, COLLALGO_AUTO, 8, 8, MIB, &f, ph, &got);
    assert_int_equal(got, COLLALGO_RING);
}

/* ---- trivial cases ---- */

static void trivial_cases(void **state)
{
    (void)state;
    collalgo_fabric f = fabric(300, 25, US, 5 * US);
    collalgo_group g1 = {.ranks = 1, .ranks_per_node = 1}, g32 = {.ranks = 32, .ranks_per_node = 8};
    collalgo_phase ph[COLLALGO_MAX_PHASES];
    uint32_t n = 7;
    collalgo_algo c = COLLALGO_TREE;
    assert_int_equal(collalgo_plan(COLLALGO_ALLREDUCE, COLLALGO_AUTO, &g1, GIB, &f, ph, &n, &c, NULL), 0);
    assert_int_equal(n, 0);
    assert_int_equal(c, COLLALGO_RING);
    n = 7;
    assert_int_equal(collalgo_plan(COLLALGO_ALLREDUCE, COLLALGO_TREE, &g32, 0, &f, ph, &n, &c, NULL), 0);
    assert_int_equal(n, 0);
    assert_int_equal(c, COLLALGO_TREE);
    assert_int_equal(collalgo_plan(COLLALGO_ALLGATHER, COLLALGO_HIERARCHICAL, &g32, 0, &f, ph, &n, &c, NULL), 0);
    assert_int_equal(c, COLLALGO_RING);
    assert_int_equal(collalgo_time_ps(NULL, 0, &f, NULL), 0);
    /* a zero-initialised phase with whole bytes is exact: 1000 B at 1 GB/s = 1 us */
    collalgo_phase p = {.intra_bytes = 1000, .intra_hops = 2};
    collalgo_fabric f1 = {.intra_Bps = GBPS, .intra_latency_ps = 5};
    assert_int_equal(collalgo_time_ps(&p, 1, &f1, NULL), 1000000 + 10);
}

/* ---- errors ---- */

static void expect(int rc, int code, const cxl_err *e, const char *needle)
{
    assert_int_equal(rc, code);
    assert_int_equal(e->code, code);
    if (!strstr(e->msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", e->msg, needle);
}

static void errors(void **state)
{
    (void)state;
    collalgo_fabric f = fabric(300, 25, US, 5 * US);
    collalgo_phase ph[COLLALGO_MAX_PHASES];
    uint32_t n;
    cxl_err e;
    collalgo_group g = {.ranks = 32, .ranks_per_node = 8};
#define PLAN(op, algo, grp, S, fab) collalgo_plan(op, algo, grp, S, fab, ph, &n, NULL, &e)
    collalgo_group bad = {.ranks = 0, .ranks_per_node = 1};
    n = 5;
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_RING, &bad, 1, &f), CXL_ECONFIG, &e, "0 ranks");
    assert_int_equal(n, 0);
    bad = (collalgo_group){.ranks = 8, .ranks_per_node = 0};
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_RING, &bad, 1, &f), CXL_ECONFIG, &e, "0 ranks per node");
    bad = (collalgo_group){.ranks = 12, .ranks_per_node = 8};
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_RING, &bad, 1, &f), CXL_ECONFIG, &e, "8 ranks per node do not divide 12");
    bad = (collalgo_group){.ranks = COLLALGO_MAX_RANKS + 1, .ranks_per_node = 1};
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_RING, &bad, 1, &f), CXL_ELIMIT, &e, "at most 16777216");
    expect(PLAN((collalgo_op)4, COLLALGO_RING, &g, 1, &f), CXL_ECONFIG, &e, "operation 4");
    expect(PLAN(COLLALGO_ALLREDUCE, (collalgo_algo)-1, &g, 1, &f), CXL_ECONFIG, &e, "algorithm -1");
    expect(PLAN(COLLALGO_REDUCE_SCATTER, COLLALGO_TREE, &g, 1, &f), CXL_ECONFIG, &e,
           "tree does not support reduce-scatter");
    expect(PLAN(COLLALGO_ALLGATHER, COLLALGO_TREE, &g, 1, &f), CXL_ECONFIG, &e, "all-reduce only");
    expect(PLAN(COLLALGO_BROADCAST, COLLALGO_TREE, &g, 1, &f), CXL_ECONFIG, &e, "tree does not support broadcast");
    expect(PLAN(COLLALGO_BROADCAST, COLLALGO_HIERARCHICAL, &g, 1, &f), CXL_ECONFIG, &e,
           "hierarchical does not support broadcast");
    /* unsupported even when trivial */
    collalgo_group one = {.ranks = 1, .ranks_per_node = 1};
    expect(PLAN(COLLALGO_BROADCAST, COLLALGO_TREE, &one, 0, &f), CXL_ECONFIG, &e, "broadcast");
    collalgo_fabric z = f;
    z.intra_Bps = 0;
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_RING, &g, 1, &z), CXL_ECONFIG, &e, "intra-node bandwidth 0");
    z = f;
    z.inter_Bps = 0;
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_AUTO, &g, 1, &z), CXL_ECONFIG, &e, "inter-node bandwidth 0 B/s across 4");
    collalgo_group node = {.ranks = 8, .ranks_per_node = 8};
    assert_int_equal(PLAN(COLLALGO_ALLREDUCE, COLLALGO_AUTO, &node, 1, &z), 0); /* one node needs no NIC */
    /* sizes beyond the exact range, and times beyond int64 */
    /* 2 x (2^24 - 1) x 7 / (2^24 x 8) of 2^64 B: the numerator passes 2^88 */
    collalgo_group huge = {.ranks = COLLALGO_MAX_RANKS, .ranks_per_node = 8};
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_RING, &huge, UINT64_MAX, &f), CXL_ELIMIT, &e, "2^88");
    /* a tree over 4 nodes sends 2S per node: 2^65 B */
    collalgo_group four = {.ranks = 4, .ranks_per_node = 1};
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_TREE, &four, UINT64_MAX, &f), CXL_ELIMIT, &e, "64 bits");
    collalgo_fabric slow = {.intra_Bps = 1, .inter_Bps = 1};
    n = 5;
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_AUTO, &g, 1ull << 40, &slow), CXL_ELIMIT, &e, "time beyond");
    assert_int_equal(n, 0);
    assert_int_equal(PLAN(COLLALGO_ALLREDUCE, COLLALGO_RING, &g, 1ull << 40, &slow), 0);
    expect((int)collalgo_time_ps(ph, n, &slow, &e), CXL_ELIMIT, &e, "time beyond");
    collalgo_fabric late = {.intra_Bps = 1, .inter_Bps = 1, .inter_latency_ps = UINT64_MAX};
    assert_int_equal(PLAN(COLLALGO_ALLREDUCE, COLLALGO_RING, &g, 1, &late), 0);
    expect((int)collalgo_time_ps(ph, n, &late, &e), CXL_ELIMIT, &e, "time beyond");
    /* malformed phases */
    collalgo_phase p = {.intra_bytes = 10, .intra_short = 3, .frac_den = 3};
    expect((int)collalgo_time_ps(&p, 1, &f, &e), CXL_ECONFIG, &e, "phase 0: intra-node shortfall 3/3");
    p = (collalgo_phase){.inter_short = 1, .frac_den = 4};
    expect((int)collalgo_time_ps(&p, 1, &f, &e), CXL_ECONFIG, &e, "inter-node shortfall 1/4 of a byte on 0 bytes");
    p = (collalgo_phase){.inter_bytes = 10};
    expect((int)collalgo_time_ps(&p, 1, &z, &e), CXL_ECONFIG, &e, "10 bytes over inter-node of bandwidth 0");
    p = (collalgo_phase){.inter_bytes = UINT64_MAX, .frac_den = 1ull << 40};
    expect((int)collalgo_time_ps(&p, 1, &f, &e), CXL_ELIMIT, &e, "2^88");
    /* NULLs */
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_RING, NULL, 1, &f), CXL_EINTERNAL, &e, "group");
    expect(PLAN(COLLALGO_ALLREDUCE, COLLALGO_RING, &g, 1, NULL), CXL_EINTERNAL, &e, "fabric");
    expect(collalgo_plan(COLLALGO_ALLREDUCE, COLLALGO_RING, &g, 1, &f, NULL, &n, NULL, &e), CXL_EINTERNAL, &e,
           "output");
    expect((int)collalgo_time_ps(NULL, 1, &f, &e), CXL_EINTERNAL, &e, "phases");
    expect((int)collalgo_time_ps(ph, 0, NULL, &e), CXL_EINTERNAL, &e, "fabric");
    /* err may be NULL */
    assert_int_equal(collalgo_plan(COLLALGO_ALLREDUCE, COLLALGO_RING, &bad, 1, &f, ph, &n, NULL, NULL), CXL_ELIMIT);
#undef PLAN
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_parse),
        cmocka_unit_test(ring_one_node_equals_closed_form),
        cmocka_unit_test(ring_one_rank_per_node_equals_closed_form),
        cmocka_unit_test(ring_8x4_by_hand),
        cmocka_unit_test(ring_reduce_scatter_plus_all_gather_is_all_reduce),
        cmocka_unit_test(hierarchical_phases_and_conservation),
        cmocka_unit_test(hierarchical_degenerates_to_ring),
        cmocka_unit_test(hierarchical_versus_ring),
        cmocka_unit_test(tree_matches_nccl_double_binary_tree),
        cmocka_unit_test(ring_versus_tree),
        cmocka_unit_test(broadcast_ring),
        cmocka_unit_test(auto_picks_the_minimum),
        cmocka_unit_test(trivial_cases),
        cmocka_unit_test(errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

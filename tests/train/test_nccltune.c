/* test_nccltune.c - NCCL 2.19.3's tuning model (host/train/nccltune.h): bandwidths, latencies and choices derived by
 * hand from src/graph/tuning.cc (v2.19.3-1) for an 8-GPU NVSwitch node (A100, bus bandwidth 232.5 GB/s: the
 * dgx-a100 preset's NVLink at nccl-tests' 0.775) and for a data-parallel group of 32 ranks on 32 nodes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "train/nccltune.h"

static const nccltune_comm node8 = { 8, 1, 8, 232.5, 0, 0, 0 };
static const nccltune_comm dp32 = { 32, 32, 8, 22.75, 0, 0, 0 };

static void close_to(double got, double want)
{
    if (fabs(got - want) > 1e-6 * (fabs(want) + 1))
        fail_msg("got %.9g, want %.9g", got, want);
}

/* One node, all-reduce: ring LL min(87.7, 232.5/4) x 8/14; LL128 min(232.5 x .92, 8 x 20) x 8/14; Simple
 * 232.5 x 8/14; latencies 6.6 + 14 x .6, 14 + 14 x 1.9, 8.4 + 14 x 3.4; tree Simple min(232.5 x .92, 8 x 24) x .5
 * with 2 x 7 x 28 us. */
static void model_one_node(void **state)
{
    (void)state;
    double bw, lat;
    assert_int_equal(nccltune_model(&node8, COLLALGO_ALLREDUCE, COLLALGO_RING, NCCLTUNE_LL, &bw, &lat, NULL), 0);
    close_to(bw, 232.5 / 4 * 8 / 14);
    close_to(lat, 6.6 + 14 * .6);
    assert_int_equal(nccltune_model(&node8, COLLALGO_ALLREDUCE, COLLALGO_RING, NCCLTUNE_LL128, &bw, &lat, NULL), 0);
    close_to(bw, 160.0 * 8 / 14);
    close_to(lat, 14 + 14 * 1.9);
    assert_int_equal(nccltune_model(&node8, COLLALGO_ALLREDUCE, COLLALGO_RING, NCCLTUNE_SIMPLE, &bw, &lat, NULL), 0);
    close_to(bw, 232.5 * 8 / 14);
    close_to(lat, 8.4 + 14 * 3.4);
    assert_int_equal(nccltune_model(&node8, COLLALGO_ALLREDUCE, COLLALGO_TREE, NCCLTUNE_SIMPLE, &bw, &lat, NULL), 0);
    close_to(bw, 192.0 * .5);
    close_to(lat, 2 * 7 * 28.0);
    /* all-gather: 7 steps, ring LL at 1/3 on one node, no tree */
    assert_int_equal(nccltune_model(&node8, COLLALGO_ALLGATHER, COLLALGO_RING, NCCLTUNE_LL, &bw, &lat, NULL), 0);
    close_to(bw, 232.5 / 3 * 8 / 7);
    close_to(lat, 6.6 + 7 * .6);
    assert_int_equal(nccltune_model(&node8, COLLALGO_ALLGATHER, COLLALGO_TREE, NCCLTUNE_SIMPLE, &bw, &lat, NULL), 0);
    close_to(bw, 0);
}

/* 32 ranks, one per node: 2 x 32 inter steps exceed the 62 steps; NCCL's ints make the intra term negative. */
static void model_one_rank_per_node(void **state)
{
    (void)state;
    double bw, lat;
    assert_int_equal(nccltune_model(&dp32, COLLALGO_ALLREDUCE, COLLALGO_RING, NCCLTUNE_SIMPLE, &bw, &lat, NULL), 0);
    close_to(bw, 22.75 * 32 / 62);
    close_to(lat, 8.4 + (62.0 - 64) * 3.4 + 64 * 14.0);
    /* LL128 with ppn < 2: x 0.7 */
    assert_int_equal(nccltune_model(&dp32, COLLALGO_ALLREDUCE, COLLALGO_RING, NCCLTUNE_LL128, &bw, &lat, NULL), 0);
    close_to(bw, 22.75 * .7 * 32 / 62);
    /* tree: min(22.75 x .92, 8 x 17.8) x .5, latency 2 x log2(32) x 28 */
    assert_int_equal(nccltune_model(&dp32, COLLALGO_ALLREDUCE, COLLALGO_TREE, NCCLTUNE_SIMPLE, &bw, &lat, NULL), 0);
    close_to(bw, 22.75 * .92 * .5);
    close_to(lat, 2 * 5 * 28.0);
}

/* Small all-reduce on a node: ring LL; a large one: ring Simple; large over 32 nodes: ring Simple (ring's
 * 22.75 x 32/62 beats the tree's 22.75 x .92 / 2). */
static void picks(void **state)
{
    (void)state;
    nccltune_choice ch;
    assert_int_equal(nccltune_pick(&node8, COLLALGO_ALLREDUCE, 32768, COLLALGO_AUTO, NCCLTUNE_AUTO, &ch, NULL), 0);
    assert_int_equal(ch.algo, COLLALGO_RING);
    assert_int_equal(ch.proto, NCCLTUNE_LL);
    close_to(ch.time_us, 6.6 + 14 * .6 + 32768 / (1000 * 232.5 / 4 * 8 / 14));
    assert_int_equal(nccltune_pick(&node8, COLLALGO_ALLREDUCE, 128u << 20, COLLALGO_AUTO, NCCLTUNE_AUTO, &ch, NULL), 0);
    assert_int_equal(ch.algo, COLLALGO_RING);
    assert_int_equal(ch.proto, NCCLTUNE_SIMPLE);
    assert_int_equal(nccltune_pick(&dp32, COLLALGO_ALLREDUCE, 4939431936ull, COLLALGO_AUTO, NCCLTUNE_AUTO, &ch, NULL), 0);
    assert_int_equal(ch.algo, COLLALGO_RING);
    assert_int_equal(ch.proto, NCCLTUNE_SIMPLE);
    close_to(ch.time_us, 1.4 * (8.4 + (62.0 - 64) * 3.4 + 64 * 14.0) + 4939431936.0 / (1000 * 22.75 * 32 / 62));
    /* a small one over 32 nodes: the tree's log2 latency wins */
    assert_int_equal(nccltune_pick(&dp32, COLLALGO_ALLREDUCE, 65536, COLLALGO_AUTO, NCCLTUNE_AUTO, &ch, NULL), 0);
    assert_int_equal(ch.algo, COLLALGO_TREE);
    /* the protocol forced: Simple; the algorithm forced: tree */
    assert_int_equal(nccltune_pick(&node8, COLLALGO_ALLREDUCE, 32768, COLLALGO_AUTO, NCCLTUNE_SIMPLE, &ch, NULL), 0);
    assert_int_equal(ch.proto, NCCLTUNE_SIMPLE);
    assert_int_equal(nccltune_pick(&dp32, COLLALGO_ALLREDUCE, 4939431936ull, COLLALGO_TREE, NCCLTUNE_AUTO, &ch, NULL), 0);
    assert_int_equal(ch.algo, COLLALGO_TREE);
    /* one rank: nothing to do */
    nccltune_comm one = { 1, 1, 8, 100, 0, 0, 0 };
    assert_int_equal(nccltune_pick(&one, COLLALGO_ALLREDUCE, 1 << 20, COLLALGO_AUTO, NCCLTUNE_AUTO, &ch, NULL), 0);
    close_to(ch.time_us, 0);
}

/* LL over PCI has no LL128; the engine's factors: LL moves 4x the bytes on a node, at .6/3.4 of Simple's
 * NVLink latency per message and 2.7/14 of its network latency. */
static void factors(void **state)
{
    (void)state;
    double fb, fi, fo;
    assert_int_equal(nccltune_factors(&node8, COLLALGO_ALLREDUCE, COLLALGO_RING, NCCLTUNE_LL, &fb, &fi, &fo, NULL), 0);
    close_to(fb, 4);
    close_to(fi, .6 / 3.4);
    close_to(fo, 2.7 / 14);
    assert_int_equal(nccltune_factors(&node8, COLLALGO_ALLREDUCE, COLLALGO_RING, NCCLTUNE_SIMPLE, &fb, &fi, &fo, NULL), 0);
    close_to(fb, 1);
    close_to(fi, 1);
    nccltune_comm pci = node8;
    pci.pci = 1;
    double bw, lat;
    assert_int_equal(nccltune_model(&pci, COLLALGO_ALLREDUCE, COLLALGO_RING, NCCLTUNE_LL128, &bw, &lat, NULL), 0);
    close_to(bw, 0);
    assert_int_equal(nccltune_factors(&pci, COLLALGO_ALLREDUCE, COLLALGO_RING, NCCLTUNE_LL128, &fb, &fi, &fo, NULL),
                     CXL_ECONFIG);
}

static void errors(void **state)
{
    (void)state;
    nccltune_choice ch;
    cxl_err e;
    nccltune_comm bad = { 12, 5, 8, 100, 0, 0, 0 };
    assert_int_equal(nccltune_pick(&bad, COLLALGO_ALLREDUCE, 1024, COLLALGO_AUTO, NCCLTUNE_AUTO, &ch, &e), CXL_ECONFIG);
    bad = node8;
    bad.bus_gbps = 0;
    assert_int_equal(nccltune_pick(&bad, COLLALGO_ALLREDUCE, 1024, COLLALGO_AUTO, NCCLTUNE_AUTO, &ch, &e), CXL_ECONFIG);
    assert_int_equal(nccltune_pick(&node8, COLLALGO_ALLREDUCE, 1024, COLLALGO_HIERARCHICAL, NCCLTUNE_AUTO, &ch, &e),
                     CXL_ECONFIG);
    assert_int_equal(nccltune_pick(&node8, COLLALGO_ALLGATHER, 1024, COLLALGO_TREE, NCCLTUNE_AUTO, &ch, &e), CXL_ECONFIG);
    assert_string_equal(nccltune_proto_name(NCCLTUNE_LL128), "LL128");
    assert_string_equal(nccltune_proto_name((nccltune_proto)9), "?");
}

/* Send/receive: LL up to NCCL_P2P_LL_THRESHOLD (16384, enqueue.cc) of one peer's message, else Simple; never
 * LL128; LL moves 8 bytes per 4 and pays the ring's LL latency. */
static void p2p(void **state)
{
    (void)state;
    nccltune_proto p;
    cxl_err e;
    assert_int_equal(nccltune_p2p_proto(16384, NCCLTUNE_AUTO, &p, &e), 0);
    assert_int_equal(p, NCCLTUNE_LL);
    assert_int_equal(nccltune_p2p_proto(16385, NCCLTUNE_AUTO, &p, &e), 0);
    assert_int_equal(p, NCCLTUNE_SIMPLE);
    assert_int_equal(nccltune_p2p_proto(1, NCCLTUNE_SIMPLE, &p, &e), 0);
    assert_int_equal(p, NCCLTUNE_SIMPLE);
    assert_int_equal(nccltune_p2p_proto(1 << 30, NCCLTUNE_LL, &p, &e), 0);
    assert_int_equal(p, NCCLTUNE_LL);
    assert_int_equal(nccltune_p2p_proto(1024, NCCLTUNE_LL128, &p, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "LL or Simple"));
    double fb, fi, fo;
    nccltune_p2p_factors(0, NCCLTUNE_LL, &fb, &fi, &fo);
    close_to(fb, 2);
    close_to(fi, .6 / 3.4);
    close_to(fo, 2.7 / 14);
    nccltune_p2p_factors(0, NCCLTUNE_SIMPLE, &fb, &fi, &fo);
    close_to(fb, 1);
    close_to(fi, 1);
    close_to(fo, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_one_node), cmocka_unit_test(model_one_rank_per_node), cmocka_unit_test(picks),
        cmocka_unit_test(factors), cmocka_unit_test(errors), cmocka_unit_test(p2p),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_coll_engine.c - the library's collective time (cxlsim_collective_time) and the NCCL delay plugin
 * (cxlsim_nccl_delay) give what the training engine charges a lone collective: the engine's plan of it
 * (collmodel_plan_coll, which train_net.c calls with the engine's fabric, collmodel_set in train_setup.c)
 * run through the engine's network (net.h) with the links setup_network makes (the fabric's rates in bytes
 * per picosecond, a transmit and a receive link per fabric): per phase its hops' latency, then its flows,
 * the phase ending with the last. All-reduce, all-gather, reduce-scatter and all-to-all, in one node of
 * dgx-h100 and across its two nodes, every protocol. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/clustercfg.h"
#include "config/gpucfg.h"
#include "cxlsim/cxlsim_nccl.h"
#include "train/collmodel.h"
#include "train/net.h"

/* The engine's time of plan p on fresh links of fabric m: a flow per fabric with bytes, as
 * eng_phase_flows starts them, completions as the engine takes them (net_flow_eta, net_flow_finish). */
static int64_t engine_time(const collmodel *m, const collmodel_plan *p)
{
    net *n;
    cxl_err e;
    assert_int_equal(net_new(&n, &e), 0);
    double bw[4] = { m->intra_Bps, m->intra_Bps, m->inter_Bps, m->inter_Bps };
    for (int k = 0; k < 4; k++)
        assert_true(net_add_link(n, bw[k] / 1e12, &e) >= 0);
    int64_t now = 0;
    for (uint32_t i = 0; i < p->nph; i++) {
        const collalgo_phase *ph = &p->ph[i];
        now += (int64_t)ph->intra_hops * p->hop_intra_ps + (int64_t)ph->inter_hops * p->hop_inter_ps;
        uint32_t flows[2], nf = 0;
        uint64_t bytes[2] = { ph->intra_bytes, ph->inter_bytes };
        for (uint32_t f = 0; f < 2; f++) {
            if (!bytes[f])
                continue;
            uint32_t links[2] = { 2 * f, 2 * f + 1 };
            assert_int_equal(net_flow_start(n, now, (double)bytes[f], links, 2, 0, &flows[nf++], &e), 0);
        }
        int64_t end = now;
        for (uint32_t f = 0; f < nf; f++) { /* links of their own: no flow changes another's rate */
            int64_t eta = net_flow_eta(n, flows[f]);
            end = eta > end ? eta : end;
        }
        for (uint32_t f = 0; f < nf; f++) {
            uint32_t owner;
            assert_int_equal(net_flow_finish(n, net_flow_eta(n, flows[f]), flows[f], net_flow_version(n, flows[f]),
                                             &owner), 1);
        }
        now = end;
    }
    net_free(n);
    return now;
}

/* NCCL's ncclFunc_t of a collalgo op (cxlsim_nccl.h), -1 for all-to-all (not an NCCL collective). */
static int nccl_func(int op)
{
    switch (op) {
    case COLLALGO_ALLREDUCE: return 4;
    case COLLALGO_ALLGATHER: return 2;
    case COLLALGO_REDUCE_SCATTER: return 3;
    default: return -1;
    }
}

/* The engine's collective model of dgx-h100 / h100-sxm: setup_fabric's fabric, then collmodel_set. */
static void engine_model(collmodel *m)
{
    struct { clustercfg c; gpucfg g; } *cg = malloc(sizeof *cg);
    cxl_err ce;
    assert_non_null(cg);
    assert_int_equal(clustercfg_load("dgx-h100", &cg->c, &ce) || gpucfg_load("h100-sxm", &cg->g, &ce), 0);
    collalgo_fabric fab;
    double intra, inter;
    collmodel_fabric(&cg->c, &cg->g, &fab, &intra, &inter);
    collmodel_set(m, &cg->c, &cg->g, &fab, intra, inter);
    free(cg);
}

static void api_and_plugin_equal_the_engine(void **state)
{
    (void)state;
    collmodel m;
    cxl_err ce;
    engine_model(&m);
    cxlsim_cluster *cl;
    cxlsim_nccl *plug;
    cxlsim_error e;
    cxlsim_error_init(&e);
    assert_int_equal(cxlsim_cluster_load("dgx-h100", "h100-sxm", &cl, &e), 0);
    assert_int_equal(cxlsim_nccl_open("dgx-h100", "h100-sxm", &plug, &e), 0);
    const int ops[] = { COLLALGO_ALLREDUCE, COLLALGO_ALLGATHER, COLLALGO_REDUCE_SCATTER, COLLMODEL_ALLTOALL };
    const uint64_t sizes[] = { 4096, 1048576, 12345678, 268435456 }; /* bytes per rank, multiples of 2 */
    const uint32_t ranks[] = { 8, 16 };                               /* one node of 8; both nodes */
    int checked = 0, plugged = 0;
    for (size_t o = 0; o < 4; o++)
        for (size_t s = 0; s < 4; s++)
            for (size_t r = 0; r < 2; r++)
                for (int proto = NCCLTUNE_LL; proto <= NCCLTUNE_AUTO; proto++) {
                    if (proto == NCCLTUNE_LL128 && ranks[r] > 8)
                        continue; /* fine either way; keep the table small */
                    collalgo_group grp = { ranks[r], 8 };
                    collmodel_plan p;
                    if (ops[o] == COLLMODEL_ALLTOALL && proto == NCCLTUNE_LL128) {
                        /* NCCL's send/receive runs LL or Simple only (nccltune_p2p_proto) */
                        assert_int_equal(collmodel_plan_coll(&m, ops[o], &grp, sizes[s], COLLALGO_AUTO,
                                                             (nccltune_proto)proto, m.channels, &p, &ce),
                                         CXL_ECONFIG);
                        continue;
                    }
                    assert_int_equal(collmodel_plan_coll(&m, ops[o], &grp, sizes[s], COLLALGO_AUTO,
                                                         (nccltune_proto)proto, m.channels, &p, &ce), 0);
                    int64_t want = engine_time(&m, &p);
                    assert_true(want > 0);
                    cxlsim_collective q = { sizeof q, (uint32_t)ops[o], sizes[s], ranks[r], 8, CXLSIM_ALGO_AUTO,
                                            (uint32_t)proto, 0 };
                    cxlsim_collective_result res;
                    cxlsim_collective_result_init(&res);
                    assert_int_equal(cxlsim_collective_time(cl, &q, &res, &e), 0);
                    assert_int_equal(res.time_ps, want);
                    assert_int_equal(res.algo, p.algo);
                    assert_int_equal(res.proto, p.proto);
                    checked++;
                    int f = nccl_func(ops[o]);
                    if (f < 0)
                        continue;
                    /* bfloat16 (2 bytes); all-gather and reduce-scatter count per rank: nBytes x nranks */
                    uint64_t count = sizes[s] / 2 / (f == 4 ? 1 : ranks[r]);
                    if (count * 2 * (f == 4 ? 1 : ranks[r]) != sizes[s])
                        continue;
                    int64_t ps;
                    assert_int_equal(cxlsim_nccl_delay(plug, f, count, 9, (int)ranks[r], (int)(ranks[r] / 8), -1,
                                                       proto == NCCLTUNE_AUTO ? -1 : proto, 0, &ps, NULL, &e), 0);
                    assert_int_equal(ps, want);
                    plugged++;
                }
    assert_true(checked >= 48);
    assert_true(plugged >= 24);
    cxlsim_nccl_close(plug);
    cxlsim_cluster_free(cl);
}

/* The engine's all-to-all across nodes: NVLink for the node's peers, the NICs for the rest. */
static void alltoall_spans_both_fabrics(void **state)
{
    (void)state;
    cxlsim_cluster *cl;
    cxlsim_error e;
    cxlsim_error_init(&e);
    assert_int_equal(cxlsim_cluster_load("dgx-h100", "h100-sxm", &cl, &e), 0);
    cxlsim_collective q = { sizeof q, CXLSIM_ALLTOALL, 16u << 20, 16, 8, CXLSIM_ALGO_AUTO, CXLSIM_PROTO_AUTO, 0 };
    cxlsim_collective_result one, two;
    cxlsim_collective_result_init(&one);
    cxlsim_collective_result_init(&two);
    assert_int_equal(cxlsim_collective_time(cl, &q, &two, &e), 0);
    q.ranks = 8;
    assert_int_equal(cxlsim_collective_time(cl, &q, &one, &e), 0);
    assert_int_equal(two.phases, 1);
    assert_true(two.time_ps > one.time_ps); /* half the buffer leaves the node at a NIC's share */
    q.op = 5;
    assert_int_equal(cxlsim_collective_time(cl, &q, &one, &e), CXLSIM_EUSAGE);
    assert_non_null(strstr(e.message, "op (0-4)"));
    cxlsim_cluster_free(cl);
}

/* GB200 NVL72 (trays of 4, 72 GPUs on one NVLink domain): an all-to-all over 16 ranks on 4 trays stays on
 * NVLink; ranks_per_node counts the ranks per domain, its default the domain's GPUs. */
static void alltoall_in_an_nvlink_domain(void **state)
{
    (void)state;
    cxlsim_cluster *cl, *h;
    cxlsim_error e;
    cxlsim_error_init(&e);
    assert_int_equal(cxlsim_cluster_load("gb200-nvl72", "gb200", &cl, &e), 0);
    assert_int_equal(cxlsim_cluster_load("dgx-b200", "b200", &h, &e), 0);
    cxlsim_collective q = { sizeof q, CXLSIM_ALLTOALL, 16u << 20, 16, 0, CXLSIM_ALGO_AUTO, CXLSIM_PROTO_AUTO, 0 };
    cxlsim_collective_result rack, nics, node;
    cxlsim_collective_result_init(&rack);
    cxlsim_collective_result_init(&nics);
    cxlsim_collective_result_init(&node);
    assert_int_equal(cxlsim_collective_time(cl, &q, &rack, &e), 0); /* 16 ranks on 4 trays of one rack */
    q.ranks = 8;
    assert_int_equal(cxlsim_collective_time(h, &q, &node, &e), 0);  /* 8 ranks in one DGX B200 */
    q.ranks = 16;
    q.ranks_per_node = 4;                                           /* as if each tray were its own domain */
    assert_int_equal(cxlsim_collective_time(cl, &q, &nics, &e), 0);
    assert_true(nics.time_ps > rack.time_ps);
    /* the same NVLink 5 and efficiency: 15/16 of the buffer on NVLink against 7/8 in a node of 8 */
    assert_true(rack.time_ps > node.time_ps && rack.time_ps < node.time_ps * 11 / 10);
    q.ranks = 144;
    q.ranks_per_node = 0;                                           /* two racks: 72 ranks per domain */
    assert_int_equal(cxlsim_collective_time(cl, &q, &rack, &e), 0);
    q.ranks_per_node = 73;
    assert_int_equal(cxlsim_collective_time(cl, &q, &rack, &e), CXLSIM_ECONFIG);
    cxlsim_cluster_free(h);
    cxlsim_cluster_free(cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_and_plugin_equal_the_engine),
        cmocka_unit_test(alltoall_spans_both_fabrics),
        cmocka_unit_test(alltoall_in_an_nvlink_domain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

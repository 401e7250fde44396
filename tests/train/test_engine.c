/* test_engine.c - the event queue (time order, FIFO ties, growth) and the network's max-min fair sharing
 * (rates by hand, redistribution when a flow ends, stale completion events, errors). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "train/evq.h"
#include "train/net.h"

static void evq_orders_by_time_then_fifo(void **state)
{
    (void)state;
    evq q;
    evq_init(&q);
    assert_int_equal(evq_peek_ps(&q), INT64_MAX);
    /* many events, times descending in blocks, equal times within a block */
    for (uint32_t i = 0; i < 5000; i++)
        assert_int_equal(evq_push(&q, (int64_t)(10 - i / 500), 0, i, 0), 0);
    assert_int_equal(q.pushed, 5000);
    evq_event e, prev = { -1, 0, 0, 0, 0 };
    uint32_t n = 0;
    while (evq_pop(&q, &e)) {
        assert_true(e.t_ps > prev.t_ps || (e.t_ps == prev.t_ps && e.a > prev.a)); /* FIFO among equals */
        prev = e;
        n++;
    }
    assert_int_equal(n, 5000);
    assert_int_equal(evq_len(&q), 0);
    evq_free(&q);
}

static double eta_s(net *n, uint32_t f) { return (double)net_flow_eta(n, f) / 1e12; }

static void net_single_flow_is_bytes_over_bandwidth(void **state)
{
    (void)state;
    net *n;
    cxl_err e;
    assert_int_equal(net_new(&n, &e), 0);
    int l0 = net_add_link(n, 0.1, &e); /* 100 GB/s */
    assert_true(l0 >= 0);
    uint32_t links[1] = { (uint32_t)l0 }, f;
    assert_int_equal(net_flow_start(n, 1000, 1e9, links, 1, 7, &f, &e), 0);
    /* 1 GB at 0.1 B/ps = 1e10 ps after t = 1000 */
    assert_int_equal(net_flow_eta(n, f), 1000 + 10000000000ll);
    uint32_t ch[4];
    assert_int_equal(net_take_changed(n, ch, 4), 1);
    uint32_t owner;
    assert_int_equal(net_flow_finish(n, net_flow_eta(n, f), f, net_flow_version(n, f), &owner), 1);
    assert_int_equal(owner, 7);
    assert_true(fabs(net_link_bytes(n, (uint32_t)l0) - 1e9) < 1);
    net_free(n);
}

static void net_max_min_fair(void **state)
{
    (void)state;
    net *n;
    cxl_err e;
    assert_int_equal(net_new(&n, &e), 0);
    /* link A 10 B/ps, link B 4 B/ps. Flow 1 on A+B, flow 2 on B, flow 3 on A.
     * B is the bottleneck: flows 1 and 2 get 2 each; flow 3 gets A's remaining 8. */
    uint32_t A = (uint32_t)net_add_link(n, 10, &e), B = (uint32_t)net_add_link(n, 4, &e);
    uint32_t f1, f2, f3, l1[2] = { A, B }, l2[1] = { B }, l3[1] = { A };
    assert_int_equal(net_flow_start(n, 0, 1000, l1, 2, 1, &f1, &e), 0);
    assert_int_equal(net_flow_start(n, 0, 1000, l2, 1, 2, &f2, &e), 0);
    assert_int_equal(net_flow_start(n, 0, 1000, l3, 1, 3, &f3, &e), 0);
    assert_int_equal(net_flow_eta(n, f1), 500);  /* 1000 B at 2 B/ps */
    assert_int_equal(net_flow_eta(n, f2), 500);
    assert_int_equal(net_flow_eta(n, f3), 125);  /* 1000 B at 8 B/ps */
    /* flow 3 ends at 125: nothing changes for 1 and 2 (B still limits them) */
    uint32_t owner, v1 = net_flow_version(n, f1);
    assert_int_equal(net_flow_finish(n, 125, f3, net_flow_version(n, f3), &owner), 1);
    assert_int_equal(owner, 3);
    assert_int_equal(net_flow_eta(n, f1), 500);
    /* flow 2 ends at 500 together with flow 1; finish 2 first: flow 1 has nothing left */
    assert_int_equal(net_flow_finish(n, 500, f2, net_flow_version(n, f2), &owner), 1);
    assert_int_equal(net_flow_eta(n, f1), 500);
    /* flow 1 now has B to itself (rate 4, a new version) but nothing left to move: it ends at once, and
     * its first completion event is stale */
    assert_true(net_flow_version(n, f1) != v1);
    assert_int_equal(net_flow_finish(n, 500, f1, v1, &owner), 0);
    assert_int_equal(net_flow_finish(n, 500, f1, net_flow_version(n, f1), &owner), 1);
    assert_int_equal(owner, 1);
    net_free(n);
}

static void net_redistributes_and_drops_stale_events(void **state)
{
    (void)state;
    net *n;
    cxl_err e;
    assert_int_equal(net_new(&n, &e), 0);
    uint32_t A = (uint32_t)net_add_link(n, 1, &e), fa, fb, l[1] = { A };
    assert_int_equal(net_flow_start(n, 0, 100, l, 1, 1, &fa, &e), 0);
    uint32_t va = net_flow_version(n, fa);
    assert_int_equal(net_flow_eta(n, fa), 100);
    /* a second flow at t = 50 halves the rate: fa has 50 B left at 0.5 B/ps -> ends at 150 */
    assert_int_equal(net_flow_start(n, 50, 100, l, 1, 2, &fb, &e), 0);
    assert_int_equal(net_flow_eta(n, fa), 150);
    uint32_t owner;
    assert_int_equal(net_flow_finish(n, 100, fa, va, &owner), 0); /* the old event is stale */
    assert_int_equal(net_flow_finish(n, 150, fa, net_flow_version(n, fa), &owner), 1);
    /* fb moved 50 B in [50, 150] and has 50 B left, now at the full rate: ends at 200 */
    assert_int_equal(net_flow_eta(n, fb), 200);
    uint32_t ch[8], k = net_take_changed(n, ch, 8);
    assert_true(k >= 1);
    assert_true(fabs(eta_s(n, fb) - 200e-12) < 1e-15);
    net_free(n);
}

static void net_errors(void **state)
{
    (void)state;
    net *n;
    cxl_err e;
    assert_int_equal(net_new(&n, &e), 0);
    assert_int_equal(net_add_link(n, 0, &e), CXL_ECONFIG);
    uint32_t A = (uint32_t)net_add_link(n, 1, &e), f;
    uint32_t twice[2] = { A, A }, none[1] = { 9 };
    assert_int_equal(net_flow_start(n, 0, 10, twice, 2, 0, &f, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "twice"));
    assert_int_equal(net_flow_start(n, 0, 10, none, 1, 0, &f, &e), CXL_ECONFIG);
    assert_int_equal(net_flow_start(n, 0, 0, &A, 1, 0, &f, &e), CXL_ECONFIG);
    assert_int_equal(net_flow_start(n, 0, 10, &A, 0, 0, &f, &e), CXL_ECONFIG);
    net_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(evq_orders_by_time_then_fifo),
        cmocka_unit_test(net_single_flow_is_bytes_over_bandwidth),
        cmocka_unit_test(net_max_min_fair),
        cmocka_unit_test(net_redistributes_and_drops_stale_events),
        cmocka_unit_test(net_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

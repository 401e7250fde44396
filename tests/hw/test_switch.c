/* test_switch.c - the CXL switch (hw/hls/switch.h) in the whole model: traversal latency, routing and
 * interleaving, LD-ID partitions of a pooled multi-logical device, arbitration fairness, bounded queues.
 * Parameters come from the shipped presets asic, asic-switch and pool-2x2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../hw/hls/cxl_model.h"
#include "config/devcfg.h"

static void params(const char *name, cxl_params *p)
{
    devcfg c;
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load(name, &c, &e) || devcfg_to_params(&c, p, &e))
        fail_msg("%s: %s", name, e.msg);
}

static cxl_model *new_model(const cxl_params *p)
{
    cxl_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    cxl_model_init(m, p);
    return m;
}

static cxl_desc one(uint64_t id, uint16_t req, uint64_t addr, int write)
{
    cxl_desc d;
    memset(&d, 0, sizeof d);
    d.id = id;
    d.requester = req;
    d.base = addr;
    d.bytes = 64;
    d.max_outstanding = 1;
    d.rd_weight = write ? 0 : 1;
    d.wr_weight = write ? 1 : 0;
    return d;
}

static uint64_t single_latency(const cxl_params *p, uint64_t addr, int write)
{
    cxl_model *m = new_model(p);
    cxl_desc d = one(7, 0, addr, write);
    assert_int_equal(cxl_model_submit(m, &d), 0);
    cxl_model_run(m, 1000000, 1);
    cxl_completion c;
    assert_int_equal(cxl_model_drain(m, &c, 1), 1);
    assert_int_equal(c.id, 7);
    free(m);
    return c.end_cycle - c.start_cycle;
}

/* A read and a write through one switch hop take exactly 2 (hop + link latency) + k cycles more than
 * direct: each direction crosses one more link (ser + phy) and waits hop_cycles in the switch ingress;
 * idle links start a flit at once and the switch forwards in the cycle the hop ends (cxl_model.h order).
 * The data message (DRS on the way back, RwD on the way out) spans two flits and the switch stores and
 * forwards it, so its second flit is serialized once more: k cycles, the smallest k with
 * (k + 1) * flit_inc > flit_cost (link.h: a flit starts when the accumulator is positive). */
static void traversal_latency(void **state)
{
    (void)state;
    cxl_params a, s;
    params("asic", &a);
    params("asic-switch", &s);
    uint64_t k = 0;
    while ((k + 1) * s.link.flit_inc <= s.link.flit_cost)
        k++;
    uint64_t extra = 2ull * (s.sw.hop_cycles + s.link.ser_cycles + s.link.phy_cycles) + k;
    assert_int_equal(single_latency(&s, 0x40000, 0), single_latency(&a, 0x40000, 0) + extra);
    assert_int_equal(single_latency(&s, 0x40000, 1), single_latency(&a, 0x40000, 1) + extra);
}

/* pool-2x2 interleaves devices every 4 KiB: lines 0 and 4096 reach devices 0 and 1. */
static void interleave_routing(void **state)
{
    (void)state;
    cxl_params p;
    params("pool-2x2", &p);
    assert_int_equal(p.sw.interleave_shift, 12);
    assert_int_equal(p.sw.dev_bits, 1);
    cxl_model *m = new_model(&p);
    cxl_desc d[3] = { one(1, 0, 0, 0), one(2, 0, 4096, 0), one(3, 0, 8192, 0) };
    for (int i = 0; i < 3; i++)
        assert_int_equal(cxl_model_submit(m, &d[i]), 0);
    cxl_model_run(m, 100000, 0);
    assert_int_equal(m->st.dev[0].reads, 2);
    assert_int_equal(m->st.dev[1].reads, 1);
    assert_int_equal(m->model_error, 0);
    free(m);
}

/* Partitioned pool: the same host address from two hosts lands in different partitions (LD-ID at
 * ld_shift); shared: the same device address. The device bits are removed from the address. */
static void ld_partitions(void **state)
{
    (void)state;
    cxl_params p;
    params("pool-2x2", &p);
    assert_true(p.sw.ld_shift > 12);
    static cxl_switch sw;
    switch_init(&sw, &p);
    cxl_msg m;
    memset(&m, 0, sizeof m);
    m.cls = CXL_M2S_REQ;
    m.addr = 0x3040; /* 4 KiB block 3: device 1 (bit 12), its own block 1, offset 0x40 */
    m.host = 0;
    assert_int_equal(switch_ingress_m2s(&sw, &p, 0, m, 0), 0);
    m.host = 1;
    assert_int_equal(switch_ingress_m2s(&sw, &p, 1, m, 0), 0);
    const cxl_msg *h0 = pipe_head(&sw.up_in[0]), *h1 = pipe_head(&sw.up_in[1]);
    assert_int_equal(h0->dev, 1);
    assert_int_equal(h1->dev, 1);
    /* 0x3040 = block 3 (4 KiB) + 0x40: device 1, its block 1 -> local 0x1040 */
    assert_int_equal(h0->addr, 0x1040);
    assert_int_equal(h1->addr, 0x1040 | (1ull << p.sw.ld_shift));
    p.sw.ld_shift = 0; /* shared */
    switch_init(&sw, &p);
    assert_int_equal(switch_ingress_m2s(&sw, &p, 1, m, 0), 0);
    assert_int_equal(pipe_head(&sw.up_in[1])->addr, 0x1040);
    /* hop latency: ready hop_cycles after entry */
    assert_int_equal(sw.up_in[1].ready[sw.up_in[1].head], p.sw.hop_cycles);
}

/* Two hosts saturating one device through round-robin arbitration get equal shares; queues stay within
 * their bounds (no model_error). */
static void fairness_and_bounds(void **state)
{
    (void)state;
    cxl_params p;
    params("pool-2x2", &p);
    p.devices = 1;
    p.sw.dev_bits = 0;
    cxl_model *m = new_model(&p);
    for (uint32_t r = 0; r < p.requesters; r++) {
        cxl_desc d;
        memset(&d, 0, sizeof d);
        d.id = r;
        d.requester = (uint16_t)r;
        d.base = (uint64_t)r << 26;
        d.bytes = 1ull << 40;
        d.footprint = 1ull << 26;
        d.pattern = CXL_PAT_RANDOM;
        d.rd_weight = 2;
        d.wr_weight = 1;
        d.max_outstanding = (uint16_t)p.tags;
        d.seed = 3;
        assert_int_equal(cxl_model_submit(m, &d), 0);
    }
    uint64_t bytes[2] = { 0, 0 };
    for (uint64_t t = 20000; t <= 400000; t += 20000) {
        cxl_model_run(m, t, 0);
        cxl_completion c[CXL_COMPQ];
        cxl_model_drain(m, c, CXL_COMPQ);
        assert_int_equal(m->model_error, 0);
    }
    /* requesters of host h: r % 2 == h; bytes per host from the per-requester tags freed: use link msgs */
    bytes[0] = m->st.link[0].msgs[CXL_M2S_REQ] + m->st.link[0].msgs[CXL_M2S_RWD];
    bytes[1] = m->st.link[1].msgs[CXL_M2S_REQ] + m->st.link[1].msgs[CXL_M2S_RWD];
    double share = (double)bytes[0] / (double)(bytes[0] + bytes[1]);
    assert_true(share > 0.49 && share < 0.51);
    assert_true(m->st.switch_stall > 0); /* the device is the bottleneck: the switch did wait */
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(traversal_latency),
        cmocka_unit_test(interleave_routing),
        cmocka_unit_test(ld_partitions),
        cmocka_unit_test(fairness_and_bounds),
    };
    return cmocka_run_group_tests_name("switch", tests, NULL, NULL);
}

/* test_devcfg.c - device descriptions: every preset loads and converts to the cycles its sources imply;
 * device-level checks report file:line:column and what would be valid; statistics reporting. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/devcfg.h"
#include "cxl/stats_report.h"

#include "tmpdir_fixture.h"

static void load_ok(const char *name, devcfg *c, cxl_params *p)
{
    cxl_err e;
    cxl_err_clear(&e);
    int rc = devcfg_load(name, c, &e);
    if (!rc)
        rc = devcfg_to_params(c, p, &e);
    if (rc)
        fail_msg("%s: %s:%d:%d: %s", name, e.file, e.line, e.col, e.msg);
}

static void every_preset_loads(void **state)
{
    (void)state;
    int n = 0;
    for (const char *const *name = devcfg_preset_names(); *name; name++, n++) {
        devcfg c;
        cxl_params p;
        load_ok(*name, &c, &p);
        assert_string_equal(c.name, *name);
        assert_true(c.description[0] != 0);
    }
    assert_true(n >= 6);
}

/* A host path shorter than one model cycle is refused (the RTL model relies on it, docs/rtl.md). */
static void zero_host_latency_refused(void **state)
{
    (void)state;
    devcfg c;
    cxl_params p;
    load_ok("asic", &c, &p);
    c.host.core_latency_ps = 0;
    c.host.port_latency_ps = 0;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(devcfg_to_params(&c, &p, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "at least one model cycle"));
}

/* The ASIC preset in cycles of the 2400 MHz DDR5-4800 command clock. */
static void asic_in_cycles(void **state)
{
    (void)state;
    devcfg c;
    cxl_params p;
    load_ok("asic", &c, &p);
    assert_int_equal(p.clk_khz, 2400000);
    assert_int_equal(p.link_present, 1);
    /* (49 ns core + 62 ns root port) * 2.4 = 266.4 -> 267 (rounded up) */
    assert_int_equal(p.host_req_cycles, 267);
    assert_int_equal(p.host_rsp_cycles, 267);
    /* 68*8*130*2400000 / (128*8*32000*1000) = 5.1796875 cycles per flit, reduced fraction 663/128 */
    assert_int_equal(p.link.flit_cost * 128, p.link.flit_inc * 663);
    assert_int_equal(p.link.ser_cycles, 6);
    assert_int_equal(p.link.credit_return_cycles, 24);
    assert_int_equal(p.ctrl.req_latency_cycles, 36);
    assert_int_equal(p.ctrl.rsp_latency_cycles, 0);
    assert_int_equal(p.ctrl.ingress_depth, 48);
    assert_int_equal(p.link.m2s_req_credits, 48);
    assert_int_equal(p.dram.channels, 2); /* one DIMM channel = two subchannels */
    assert_int_equal(p.dram.tRCD, 34);
    assert_int_equal(p.dram.tRFC, 708);   /* 295 ns */
    assert_int_equal(p.dram.tRFCsb, 312); /* 130 ns */
    assert_int_equal(p.dram.refresh, CXL_REF_SAME_BANK);
    assert_int_equal(p.dram.columns, 64); /* 4 KiB rows */
    assert_int_equal(p.dram.map[0], CXL_MAP_CH); /* least significant first */
    assert_int_equal(p.dram.map[5], CXL_MAP_ROW);
    assert_true(devcfg_cycles_to_ns(&p, 24) > 9.99 && devcfg_cycles_to_ns(&p, 24) < 10.01);
}

static void variants(void **state)
{
    (void)state;
    devcfg c;
    cxl_params a, x16, d4, l, sw, pool;
    load_ok("asic", &c, &a);
    load_ok("asic-x16", &c, &x16);
    assert_int_equal(x16.link.flit_cost * a.link.flit_inc * 2, a.link.flit_cost * x16.link.flit_inc);
    load_ok("asic-ddr4", &c, &d4);
    assert_int_equal(d4.clk_khz, 1600000);
    assert_int_equal(d4.dram.tRFC, 560);
    assert_int_equal(d4.dram.channels, 1);
    assert_int_equal(d4.dram.tBL, 4);
    load_ok("local-ddr5", &c, &l);
    assert_int_equal(l.link_present, 0);
    assert_int_equal(l.host_req_cycles, 118); /* 49 ns only */
    load_ok("asic-switch", &c, &sw);
    assert_int_equal(sw.sw.present, 1);
    assert_int_equal(sw.sw.hop_cycles, 216);
    load_ok("pool-2x2", &c, &pool);
    assert_int_equal(pool.hosts, 2);
    assert_int_equal(pool.devices, 2);
    assert_int_equal(pool.req_host[3], 1);
    assert_int_equal(pool.sw.ld_shift, 33); /* 16 GiB per device (2^34), 2 partitions */
}

static void expect_error(const char *file, const char *text, int line, int col, const char *needle)
{
    const char *path = tmpdir_write(file, text);
    devcfg c;
    cxl_err e;
    cxl_err_clear(&e);
    int rc = devcfg_load(path, &c, &e);
    assert_int_equal(rc, CXL_ECONFIG);
    if (!strstr(e.msg, needle) || e.line != line || e.col != col)
        fail_msg("%s: got %d:%d '%s', want %d:%d '%s'", file, e.line, e.col, e.msg, line, col, needle);
}

static void device_checks(void **state)
{
    (void)state;
    expect_error("map.yaml", "name: x\nextends: asic\ndram:\n  address_mapping: row-bank-column\n", 4, 20,
                 "must name all six fields");
    expect_error("map2.yaml", "name: x\nextends: asic\ndram:\n  address_mapping: row-rank-bank-column-bankgroup-chan\n",
                 4, 20, "unknown or extra field 'chan'");
    expect_error("sb.yaml", "name: x\nextends: asic-ddr4\ndram:\n  refresh: same-bank\n", 4, 12,
                 "same-bank refresh is a DDR5 command");
    expect_error("pow.yaml", "name: x\nextends: asic\ndram:\n  rows: 1000\n", 4, 9, "must be a power of two");
    expect_error("drain.yaml", "name: x\nextends: asic\ndram:\n  write_drain_high: 8\n", 4, 21,
                 "write_drain_low (8) < write_drain_high (8)");
    expect_error("tim.yaml", "name: x\nextends: asic\ndram:\n  timing: {tXYZ: 3}\n", 4, 12, "unknown timing 'tXYZ'");
    expect_error("tim2.yaml", "name: x\nextends: asic\ndram:\n  timing: {tRCD: 0}\n", 4, 18, "out of range");
    /* the hardware model's 16-bit timing counters bound every timing but tREFI */
    expect_error("tim3.yaml", "name: x\nextends: asic\ndram:\n  timing: {tRFC: 16384}\n", 4, 18,
                 "16384 out of range (1 to 16383 cycles)");
    expect_error("tim4.yaml", "name: x\nextends: asic\ndram:\n  timing: {tREFI: 1000001}\n", 4, 19,
                 "out of range (1 to 1000000 cycles)");
    expect_error("hosts.yaml", "name: x\nextends: asic-switch\nhost:\n  requesters: 2\nswitch:\n  hosts: 3\n", 6, 10,
                 "3 host ports but only 2 requesters");
    expect_error("flit.yaml", "name: x\nextends: asic\nlink:\n  flit: 256B\n", 4, 9, "not modelled yet");
    expect_error("name.yaml", "extends: asic\nname: 5\nbogus: 1\n", 3, 1, "bogus");
}

/* A timing override reaches the model; the rest of the bin stays. */
static void timing_override(void **state)
{
    (void)state;
    const char *path = tmpdir_write("ovr.yaml", "name: x\nextends: asic\ndram:\n  timing: {tRCD: 40, tRFCsb: 400}\n");
    devcfg c;
    cxl_params p;
    load_ok(path, &c, &p);
    assert_int_equal(p.dram.tRCD, 40);
    assert_int_equal(p.dram.tCL, 34);
    assert_int_equal(p.dram.tRFCsb, 400);
}

static void percentiles(void **state)
{
    (void)state;
    cxl_hist *h = calloc(1, sizeof *h);
    assert_non_null(h);
    for (uint64_t v = 1; v <= 100; v++) {
        h->linear[v]++;
        h->count++;
        h->sum += v;
        h->max = v;
    }
    assert_int_equal(hist_percentile(h, 0.50), 50);
    assert_int_equal(hist_percentile(h, 0.99), 99);
    assert_int_equal(hist_percentile(h, 1.0), 100);
    assert_true(hist_mean(h) > 50.49 && hist_mean(h) < 50.51);
    h->log[2]++; /* one sample in [4 L, 8 L) */
    h->count++;
    h->max = 5 * CXL_HIST_LINEAR;
    assert_int_equal(hist_percentile(h, 1.0), 5 * CXL_HIST_LINEAR); /* capped at the max */
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_preset_loads), cmocka_unit_test(asic_in_cycles),
        cmocka_unit_test(zero_host_latency_refused), cmocka_unit_test(variants),
        cmocka_unit_test(device_checks),      cmocka_unit_test(timing_override), cmocka_unit_test(percentiles),
    };
    return cmocka_run_group_tests_name("devcfg", tests, tmpdir_setup, tmpdir_teardown);
}

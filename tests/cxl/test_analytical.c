/* test_analytical.c - the analytical backend (host/cxl/backend_analytical.c, docs/analytical.md): latency +
 * size / bandwidth with FIFO queueing per device, checked to the cycle against the documented formulas.
 *
 * Parameters: tests/hw_fixture.h (DDR5-4800 as 2 subchannels, Gen5 x8, ASIC controller, 100-cycle host
 * paths, 256 tags), and the shipped pool-2x2 and asic presets. Figures derived by hand:
 *   lat  = host 100 + 100 + link 2 x (ser 6 + phy 0) + controller 36 + 48 + DRAM tRCD 34 + CL 34 + tBL 8
 *        = 372 cycles
 *   line = max(link 663/128 (one 68 B flit per 64 B), DRAM tBL / channels = 8/2) = 663/128 cycles per line
 * so n lines of an uncapped descriptor (max_outstanding 256: Little cap 372/256 < 663/128) take
 * 372 + ceil(n x 663 / 128) cycles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cxl/backend.h"
#include "config/devcfg.h"
#include "hw_fixture.h"
#include "preset_fixture.h"
#include "devtools/probe.h"

#define LAT 372u
#define MAXC 256u

/* ceil(n x 663 / 128): the device part of n lines on the fixture */
static uint64_t dev_cycles(uint64_t n) { return (n * 663 + 127) / 128; }

static cxl_backend *open_anl(const cxl_params *p)
{
    cxl_backend *b = NULL;
    cxl_err e;
    cxl_err_clear(&e);
    if (cxl_backend_open("analytical", p, &b, &e))
        fail_msg("open: %s", e.msg);
    return b;
}

static cxl_desc desc(uint64_t id, uint16_t req, uint64_t base, uint64_t lines, uint16_t mo)
{
    cxl_desc d;
    memset(&d, 0, sizeof d);
    d.id = id;
    d.requester = req;
    d.base = base;
    d.bytes = lines * CXL_LINE_BYTES;
    d.pattern = CXL_PAT_SEQ;
    d.max_outstanding = mo;
    d.rd_weight = 1;
    return d;
}

static void submit_ok(cxl_backend *b, const cxl_desc *d, size_t n)
{
    cxl_err e;
    cxl_err_clear(&e);
    if (cxl_backend_submit(b, d, n, &e))
        fail_msg("submit: %s", e.msg);
}

/* Advance until idle (at most `limit` cycles), in steps of `step` cycles; completions into c[]. */
static uint32_t run_all(cxl_backend *b, cxl_completion *c, uint32_t max, uint64_t step, uint64_t limit)
{
    uint32_t n = 0;
    cxl_err e;
    cxl_err_clear(&e);
    while (!cxl_backend_idle(b)) {
        assert_true(cxl_backend_now(b) < limit);
        uint64_t t = cxl_backend_now(b) + step;
        assert_int_equal(cxl_backend_advance(b, t > limit ? limit : t, 0, &e), 0);
        n += (uint32_t)cxl_backend_poll(b, c + n, max - n);
        assert_true(n < max);
    }
    n += (uint32_t)cxl_backend_poll(b, c + n, max - n);
    return n;
}

static const cxl_completion *find(const cxl_completion *c, uint32_t n, uint64_t id)
{
    for (uint32_t i = 0; i < n; i++)
        if (c[i].id == id)
            return &c[i];
    fail_msg("no completion for descriptor %llu", (unsigned long long)id);
    return NULL;
}

static cxl_stats *stats_of(cxl_backend *b)
{
    cxl_stats *s = test_malloc(sizeof *s);
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_stats(b, s, &e), 0);
    return s;
}

/* ---- registry ---- */

static void test_registered(void **state)
{
    (void)state;
    int listed = 0;
    for (const char *const *n = cxl_backend_names(); *n; n++)
        listed += !strcmp(*n, "analytical");
    assert_int_equal(listed, 1);
    assert_int_equal(cxl_backend_available("analytical"), 1);
    assert_string_equal(cxl_backend_status("analytical"), "built in");
    cxl_params p;
    hwfx_cxl(&p);
    cxl_backend *b = open_anl(&p);
    assert_string_equal(cxl_backend_name(b), "analytical");
    assert_true(cxl_backend_idle(b));
    assert_int_equal(cxl_backend_now(b), 0);
    cxl_backend_close(b);
}

/* ---- latency and bandwidth ---- */

/* One line: completes at lat + ceil(663/128) = 372 + 6; its latency statistic is lat (no FIFO wait).
 * With 16 outstanding the descriptor's own cap, 372/16 = 23.25 cycles per line, is the slower rate:
 * 372 + 24. */
static void test_idle_line(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    cxl_backend *b = open_anl(&p);
    cxl_desc d = desc(1, 0, 0, 1, 256);
    submit_ok(b, &d, 1);
    cxl_completion c[4];
    assert_int_equal(run_all(b, c, 4, 100000, 1000000), 1);
    assert_int_equal(c[0].id, 1);
    assert_int_equal(c[0].start_cycle, 0);
    assert_int_equal(c[0].end_cycle, LAT + dev_cycles(1));
    assert_int_equal(c[0].end_cycle, 378);
    assert_int_equal(c[0].lines, 1);
    cxl_stats *s = stats_of(b);
    assert_int_equal(s->read_lat.count, 1);
    assert_int_equal(s->read_lat.linear[LAT], 1);
    assert_int_equal(s->read_bytes, 64);
    assert_int_equal(s->write_bytes, 0);
    assert_int_equal(s->link[0].flits[0], 0); /* no link model: zero */
    assert_int_equal(s->dev[0].reads, 0);
    test_free(s);
    cxl_backend_close(b);
    b = open_anl(&p);
    d.max_outstanding = 16;
    submit_ok(b, &d, 1);
    assert_int_equal(run_all(b, c, 4, 100000, 1000000), 1);
    assert_int_equal(c[0].end_cycle, LAT + 24);
    cxl_backend_close(b);
}

/* The local path: no link, no controller latency: 100 + 100 + 76; bandwidth is the DRAM's (4 cycles/line). */
static void test_local_path(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_local(&p);
    cxl_backend *b = open_anl(&p);
    cxl_desc d = desc(1, 0, 0, 1001, 256);
    submit_ok(b, &d, 1);
    cxl_completion c[4];
    assert_int_equal(run_all(b, c, 4, 100000, 1000000), 1);
    assert_int_equal(c[0].end_cycle, 100 + 100 + 76 + 1001 * 4);
    cxl_backend_close(b);
}

/* latency + bytes / bandwidth exactly, for a size that is and one that is not a whole number of cycles. */
static void test_large_transfer(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    const uint64_t sizes[2] = { 16384, 1000 }; /* 84864 and 5179.6875 -> 5180 device cycles */
    for (int i = 0; i < 2; i++) {
        cxl_backend *b = open_anl(&p);
        cxl_desc d = desc(7, 0, 0, sizes[i], 256);
        submit_ok(b, &d, 1);
        cxl_completion c[4];
        assert_int_equal(run_all(b, c, 4, 1000000, 10000000), 1);
        assert_int_equal(c[0].start_cycle, 0);
        assert_int_equal(c[0].end_cycle, LAT + dev_cycles(sizes[i]));
        cxl_stats *s = stats_of(b);
        assert_int_equal(s->read_bytes, sizes[i] * 64);
        assert_int_equal(s->read_lat.count, sizes[i]);
        assert_int_equal(s->read_lat.max, LAT);
        test_free(s);
        cxl_backend_close(b);
    }
    assert_int_equal(LAT + dev_cycles(16384), 372 + 84864);
    assert_int_equal(LAT + dev_cycles(1000), 372 + 5180);
}

/* Statistics count lines as they complete, not descriptors: half-way through a transfer, half the
 * bytes are in (line k completes at lat + ceil((k+1) x 663/128)). */
static void test_bytes_progress(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    cxl_backend *b = open_anl(&p);
    cxl_desc d = desc(1, 0, 0, 1000, 256);
    submit_ok(b, &d, 1);
    cxl_err e;
    cxl_err_clear(&e);
    /* by cycle t, lines with lat + ceil(n x 663/128) <= t - 1 are complete: n = floor((t-1-lat) x 128/663) */
    uint64_t t = LAT + 2000;
    assert_int_equal(cxl_backend_advance(b, t, 0, &e), 0);
    assert_int_equal(cxl_backend_now(b), t);
    cxl_stats *s = stats_of(b);
    assert_int_equal(s->cycles, t);
    assert_int_equal(s->read_bytes, ((t - 1 - LAT) * 128 / 663) * 64);
    test_free(s);
    cxl_backend_close(b);
}

/* ---- queueing ---- */

/* Two requesters, one device, both submitted at 0: the older descriptor runs to its end, the second starts
 * when the device frees and ends after the sum of both device times. */
static void test_fifo_two_requesters(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    p.requesters = 2;
    p.req_host[1] = 0;
    cxl_backend *b = open_anl(&p);
    cxl_desc d[2] = { desc(1, 0, 0, 1000, 256), desc(2, 1, 1 << 20, 500, 256) };
    submit_ok(b, d, 2);
    cxl_completion c[4];
    assert_int_equal(run_all(b, c, 4, 1000, 1000000), 2);
    const cxl_completion *a = find(c, 2, 1), *s = find(c, 2, 2);
    assert_int_equal(a->end_cycle, LAT + dev_cycles(1000));
    assert_int_equal(s->start_cycle, dev_cycles(1000));
    assert_int_equal(s->end_cycle, LAT + dev_cycles(1500));
    assert_true(s->end_cycle > a->end_cycle);
    /* the second's first line waited for the whole first transfer */
    cxl_stats *st = stats_of(b);
    assert_int_equal(st->read_lat.max, LAT + dev_cycles(1000));
    assert_int_equal(st->read_lat.count, 1500);
    test_free(st);
    cxl_backend_close(b);
}

/* One requester's descriptors run in order: the second starts at the first's transfer end (the latency
 * overlaps); the device clock runs on, so two back-to-back transfers cost the same as one. */
static void test_requester_order(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    cxl_backend *b = open_anl(&p);
    cxl_desc d[3] = { desc(1, 0, 0, 100, 256), desc(2, 0, 1 << 20, 100, 256), desc(3, 0, 2 << 20, 1, 256) };
    submit_ok(b, d, 3);
    cxl_completion c[4];
    assert_int_equal(run_all(b, c, 4, 50, 1000000), 3);
    assert_int_equal(c[0].id, 1);
    assert_int_equal(c[1].id, 2);
    assert_int_equal(c[2].id, 3);
    assert_int_equal(c[0].end_cycle, LAT + dev_cycles(100));
    assert_int_equal(c[1].start_cycle, dev_cycles(100));
    assert_int_equal(c[1].end_cycle, LAT + dev_cycles(200));
    assert_int_equal(c[2].end_cycle, LAT + dev_cycles(201));
    cxl_backend_close(b);
}

/* pool-2x2: 4 KiB granules alternate between the two expanders (switch.c: dev = addr bit 12). Two
 * requesters on different devices run in parallel; on the same device they queue; one descriptor over
 * both devices is split and takes half the time. lat = 2 x 267 + 2 x 6 + 2 x (216 + 6) + 36 + 76 = 1102. */
static void test_pool_parallel(void **state)
{
    (void)state;
    cxl_params p;
    pfx_preset("pool-2x2", &p);
    assert_int_equal(p.devices, 2);
    assert_int_equal(p.sw.interleave_shift, 12);
    p.tags = 256; /* Little cap 1102/256 below the device's 663/128 cycles per line */
    const uint64_t lat = 1102;
    assert_int_equal(p.link.flit_cost * 128, p.link.flit_inc * 663);
    cxl_completion c[8];

    cxl_backend *b = open_anl(&p);
    cxl_desc d[2] = { desc(1, 0, 0, 64, 256), desc(2, 1, 4096, 64, 256) }; /* device 0, device 1 */
    submit_ok(b, d, 2);
    assert_int_equal(run_all(b, c, 8, 100, 1000000), 2);
    assert_int_equal(find(c, 2, 1)->end_cycle, lat + dev_cycles(64));
    assert_int_equal(find(c, 2, 2)->end_cycle, lat + dev_cycles(64));
    cxl_backend_close(b);

    b = open_anl(&p);
    d[1].base = 8192; /* granule 2: device 0 again */
    submit_ok(b, d, 2);
    assert_int_equal(run_all(b, c, 8, 100, 1000000), 2);
    assert_int_equal(find(c, 2, 1)->end_cycle, lat + dev_cycles(64));
    assert_int_equal(find(c, 2, 2)->end_cycle, lat + dev_cycles(128));
    cxl_backend_close(b);

    /* 8 KiB: 64 lines on each device, in parallel; but 256 outstanding lines per 1102 cycles (4.3 cycles
     * per line, 8.6 per device) is now the slower rate: lat + 128 x 1102 / 256 = 1102 + 551, still
     * below one device's 1102 + 663 */
    b = open_anl(&p);
    cxl_desc w = desc(3, 0, 0, 128, 256);
    submit_ok(b, &w, 1);
    assert_int_equal(run_all(b, c, 8, 100, 1000000), 1);
    assert_int_equal(c[0].end_cycle, lat + 551);
    assert_true(c[0].end_cycle < lat + dev_cycles(128));
    cxl_backend_close(b);
    b = open_anl(&p);
    w.gap_cycles = 0;
    w.max_outstanding = 256;
    w.bytes = 64 * 64; /* the same 64 lines on one device alone: device-bound */
    submit_ok(b, &w, 1);
    assert_int_equal(run_all(b, c, 8, 100, 1000000), 1);
    assert_int_equal(c[0].end_cycle, lat + dev_cycles(64));
    cxl_backend_close(b);

    /* 4 requesters, 2 per device: device time is the sum per device, the devices in parallel */
    b = open_anl(&p);
    cxl_desc q[4] = { desc(1, 0, 0, 256, 256), desc(2, 1, 4096, 256, 256), desc(3, 2, 1 << 20, 256, 256),
                      desc(4, 3, (1 << 20) + 4096, 256, 256) };
    q[0].footprint = q[2].footprint = 4096; /* sequential, wrapping within one granule: one device */
    q[1].footprint = q[3].footprint = 4096;
    submit_ok(b, q, 4);
    assert_int_equal(run_all(b, c, 8, 100, 1000000), 4);
    assert_int_equal(find(c, 4, 1)->end_cycle, lat + dev_cycles(256));
    assert_int_equal(find(c, 4, 2)->end_cycle, lat + dev_cycles(256));
    assert_int_equal(find(c, 4, 3)->end_cycle, lat + dev_cycles(512));
    assert_int_equal(find(c, 4, 4)->end_cycle, lat + dev_cycles(512));
    cxl_backend_close(b);
}

/* ---- the descriptor's own caps ---- */

/* gap_cycles: n lines take n x gap (the device's 663/128 per line is faster). */
static void test_gap_caps_rate(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    cxl_backend *b = open_anl(&p);
    cxl_desc d = desc(1, 0, 0, 100, 256);
    d.gap_cycles = 100;
    submit_ok(b, &d, 1);
    cxl_completion c[4];
    assert_int_equal(run_all(b, c, 4, 777, 1000000), 1);
    assert_int_equal(c[0].end_cycle, LAT + 100 * 100);
    cxl_backend_close(b);
}

/* max_outstanding: at most that many lines per lat (Little's law): 10 lines, one outstanding, take
 * lat + 10 x lat (the rate cap charges the first window too: see docs/analytical.md). */
static void test_outstanding_caps_rate(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    cxl_backend *b = open_anl(&p);
    cxl_desc d = desc(1, 0, 0, 10, 1);
    submit_ok(b, &d, 1);
    cxl_completion c[4];
    assert_int_equal(run_all(b, c, 4, 1000, 1000000), 1);
    assert_int_equal(c[0].end_cycle, LAT + 10 * LAT);
    cxl_backend_close(b);
    /* 4 outstanding: 372/4 = 93 cycles per line */
    b = open_anl(&p);
    d.max_outstanding = 4;
    d.bytes = 1000 * 64;
    submit_ok(b, &d, 1);
    assert_int_equal(run_all(b, c, 4, 1000, 1000000), 1);
    assert_int_equal(c[0].end_cycle, LAT + 1000 * 93);
    cxl_backend_close(b);
}

/* A capped descriptor leaves the device's spare time to later ones (work-conserving FIFO): two
 * requesters each capped at 20 cycles per line (together 40 % of the device's 663/128 cycles per line)
 * both keep their own pace. */
static void test_capped_share(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    p.requesters = 2;
    cxl_backend *b = open_anl(&p);
    cxl_desc d[2] = { desc(1, 0, 0, 640, 256), desc(2, 1, 1 << 20, 640, 256) };
    d[0].gap_cycles = d[1].gap_cycles = 20;
    submit_ok(b, d, 2);
    cxl_completion c[4];
    assert_int_equal(run_all(b, c, 4, 1000, 1000000), 2);
    assert_int_equal(find(c, 2, 1)->end_cycle, LAT + 12800);
    /* the second starts once the first's first chunk is through (ceil(64 x 663/128) = 332) and then keeps
     * its own pace */
    assert_int_equal(find(c, 2, 2)->start_cycle, 332);
    assert_int_equal(find(c, 2, 2)->end_cycle, 332 + LAT + 12800);
    cxl_backend_close(b);
}

/* not_before: the descriptor starts no earlier, and never before it was submitted. */
static void test_not_before(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    cxl_backend *b = open_anl(&p);
    cxl_desc d = desc(1, 0, 0, 1, 256);
    d.not_before = 5000;
    submit_ok(b, &d, 1);
    cxl_completion c[4];
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_advance(b, 5000, 0, &e), 0);
    assert_int_equal(cxl_backend_poll(b, c, 4), 0);
    assert_int_equal(run_all(b, c, 4, 100, 1000000), 1);
    assert_int_equal(c[0].start_cycle, 5000);
    assert_int_equal(c[0].end_cycle, 5000 + LAT + 6);
    /* submitted at 6000 with not_before 5000: starts at 6000 */
    assert_int_equal(cxl_backend_advance(b, 6000, 0, &e), 0);
    d.id = 2;
    submit_ok(b, &d, 1);
    assert_int_equal(run_all(b, c, 4, 100, 1000000), 1);
    assert_int_equal(c[0].start_cycle, 6000);
    assert_int_equal(c[0].end_cycle, 6000 + LAT + 6);
    cxl_backend_close(b);
}

/* stop_on_completion returns in the cycle after the completion, as csim does. */
static void test_stop_on_completion(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    cxl_backend *b = open_anl(&p);
    cxl_desc d[2] = { desc(1, 0, 0, 1, 256), desc(2, 0, 4096, 1, 256) };
    submit_ok(b, d, 2);
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_advance(b, 1000000, 1, &e), 0);
    assert_int_equal(cxl_backend_now(b), LAT + 6 + 1);
    cxl_completion c[4];
    assert_int_equal(cxl_backend_poll(b, c, 4), 1);
    assert_int_equal(c[0].id, 1);
    assert_int_equal(cxl_backend_advance(b, 1000000, 1, &e), 0);
    assert_int_equal(cxl_backend_poll(b, c, 4), 1);
    assert_int_equal(c[0].id, 2);
    assert_int_equal(c[0].end_cycle, LAT + dev_cycles(2));
    assert_int_equal(cxl_backend_now(b), c[0].end_cycle + 1);
    cxl_backend_close(b);
}

/* ---- flow control ---- */

static void test_space_and_limits(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    cxl_backend *b = open_anl(&p);
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_space(b, 0), CXL_DESCQ);
    assert_int_equal(cxl_backend_space(b, 1), 0); /* no such requester */
    cxl_desc d[CXL_DESCQ + 1];
    for (uint32_t i = 0; i <= CXL_DESCQ; i++)
        d[i] = desc(i + 1, 0, (uint64_t)i << 20, 4, 16);
    /* all or none: 17 do not fit, nothing is queued */
    assert_int_equal(cxl_backend_submit(b, d, CXL_DESCQ + 1, &e), CXL_ELIMIT);
    assert_int_equal(cxl_backend_space(b, 0), CXL_DESCQ);
    submit_ok(b, d, CXL_DESCQ);
    assert_int_equal(cxl_backend_space(b, 0), 0);
    assert_int_equal(cxl_backend_submit(b, &d[CXL_DESCQ], 1, &e), CXL_ELIMIT);
    /* shared checks still apply */
    cxl_desc bad = desc(99, 0, 0, 1, 16);
    bad.bytes = 65;
    assert_int_equal(cxl_backend_submit(b, &bad, 1, &e), CXL_ELIMIT);
    /* a slot frees when its descriptor completes */
    assert_int_equal(cxl_backend_advance(b, 1000000, 1, &e), 0);
    assert_int_equal(cxl_backend_space(b, 0), 1);
    cxl_completion c[CXL_DESCQ + 1];
    assert_int_equal(run_all(b, c, CXL_DESCQ + 1, 1000, 1000000), CXL_DESCQ);
    assert_int_equal(cxl_backend_space(b, 0), CXL_DESCQ);
    assert_true(cxl_backend_idle(b));
    cxl_backend_close(b);
}

/* More completions than the buffer holds (1024): advance returns early without moving time, nothing is
 * lost, and completions come out in time order. */
static void test_completion_buffer(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    p.requesters = 16;
    for (uint32_t r = 0; r < 16; r++)
        p.req_host[r] = 0;
    cxl_backend *b = open_anl(&p);
    cxl_err e;
    cxl_err_clear(&e);
    uint32_t got = 0, stalls = 0;
    uint64_t last = 0;
    for (uint32_t round = 0; round < 6; round++) {
        cxl_desc d[16 * CXL_DESCQ];
        uint32_t n = 0;
        for (uint32_t r = 0; r < 16; r++)
            for (uint32_t i = 0; i < CXL_DESCQ; i++, n++)
                d[n] = desc(1000u * round + n, (uint16_t)r, (uint64_t)n << 12, 1, 16);
        submit_ok(b, d, n);
        while (!cxl_backend_idle(b)) {
            uint64_t before = cxl_backend_now(b);
            assert_int_equal(cxl_backend_advance(b, before + 100000, 0, &e), 0);
            if (cxl_backend_now(b) != before)
                continue;
            stalls++; /* buffer full: drain it */
            cxl_completion c[64];
            size_t k;
            while ((k = cxl_backend_poll(b, c, 64)) > 0)
                for (size_t i = 0; i < k; i++, got++) {
                    assert_true(c[i].end_cycle >= last);
                    last = c[i].end_cycle;
                }
        }
    }
    cxl_completion c[64];
    size_t k;
    while ((k = cxl_backend_poll(b, c, 64)) > 0)
        got += (uint32_t)k;
    assert_true(stalls > 0);
    assert_int_equal(got, 6 * 16 * CXL_DESCQ);
    cxl_backend_close(b);
}

/* ---- the read:write mix ---- */

/* Reads only and 2:1 take the same time here; csim, which packs reads and writes into flits in both link
 * directions and turns the DRAM bus around, does not (docs/analytical.md). */
static void mix_run(const char *backend, uint8_t rd, uint8_t wr, cxl_completion *out, cxl_stats *st)
{
    cxl_params p;
    hwfx_cxl(&p);
    cxl_backend *b = NULL;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_open(backend, &p, &b, &e), 0);
    cxl_desc d = desc(1, 0, 0, 3000, 256);
    d.rd_weight = rd;
    d.wr_weight = wr;
    submit_ok(b, &d, 1);
    cxl_completion c[4];
    assert_int_equal(run_all(b, c, 4, 100000, 10000000), 1);
    *out = c[0];
    assert_int_equal(cxl_backend_stats(b, st, &e), 0);
    cxl_backend_close(b);
}

static void test_mix_same_time(void **state)
{
    (void)state;
    cxl_completion c[4];
    cxl_stats *s = test_malloc(sizeof *s);
    mix_run("analytical", 1, 0, &c[0], s);
    assert_int_equal(s->read_bytes, 3000 * 64);
    mix_run("analytical", 2, 1, &c[1], s);
    assert_int_equal(s->read_bytes, 2000 * 64);
    assert_int_equal(s->write_bytes, 1000 * 64);
    assert_int_equal(s->write_lat.count, 1000);
    assert_int_equal(c[0].end_cycle, c[1].end_cycle);
    assert_int_equal(c[0].end_cycle, LAT + dev_cycles(3000));
    mix_run("csim", 1, 0, &c[2], s);
    mix_run("csim", 2, 1, &c[3], s);
    assert_true(c[2].end_cycle != c[3].end_cycle);
    test_free(s);
}

/* ---- determinism ---- */

/* A mixed scenario (pool, 8 requesters, gaps, random and strided patterns, not_before) gives identical
 * completions and statistics twice, and whatever the advance step. */
static uint32_t scenario(uint64_t step, cxl_completion *c, uint32_t max, cxl_stats *st)
{
    cxl_params p;
    pfx_preset("pool-2x2", &p);
    cxl_backend *b = open_anl(&p);
    cxl_desc d[8 * 4];
    uint32_t n = 0;
    for (uint16_t r = 0; r < 8; r++)
        for (uint32_t i = 0; i < 4; i++, n++) {
            d[n] = desc(100u * r + i, r, ((uint64_t)r << 24) + ((uint64_t)i << 16), 37 + 101 * ((r + i) % 5),
                        (uint16_t)(1 + (r * 7 + i) % 64));
            d[n].pattern = (uint8_t)((r + i) % 3);
            d[n].footprint = 1u << 16;
            d[n].stride = 192;
            d[n].seed = r;
            d[n].gap_cycles = (r % 3 == 0) ? 0 : 3 + r;
            d[n].not_before = 50u * i * r;
            d[n].rd_weight = (uint8_t)(r % 3);
            d[n].wr_weight = (uint8_t)(i % 2);
        }
    submit_ok(b, d, n);
    uint32_t k = run_all(b, c, max, step, 100000000);
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(cxl_backend_stats(b, st, &e), 0);
    st->cycles = 0; /* the last advance may overshoot differently with the step */
    cxl_backend_close(b);
    return k;
}

static void test_deterministic(void **state)
{
    (void)state;
    cxl_completion *c1 = test_calloc(64, sizeof *c1), *c2 = test_calloc(64, sizeof *c2);
    cxl_stats *s1 = test_calloc(1, sizeof *s1), *s2 = test_calloc(1, sizeof *s2);
    uint32_t n1 = scenario(1000000, c1, 64, s1);
    assert_int_equal(n1, 32);
    uint32_t n2 = scenario(1000000, c2, 64, s2);
    assert_int_equal(n2, n1);
    assert_memory_equal(c1, c2, n1 * sizeof *c1);
    assert_memory_equal(s1, s2, sizeof *s1);
    memset(c2, 0, 64 * sizeof *c2);
    memset(s2, 0, sizeof *s2);
    n2 = scenario(37, c2, 64, s2); /* small steps: same events */
    assert_int_equal(n2, n1);
    assert_memory_equal(c1, c2, n1 * sizeof *c1);
    assert_memory_equal(s1, s2, sizeof *s1);
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n1; i++)
        bytes += c1[i].lines * 64ull;
    assert_int_equal(s1->read_bytes + s1->write_bytes, bytes);
    test_free(c1);
    test_free(c2);
    test_free(s1);
    test_free(s2);
}

/* ---- through cxlsim probe ---- */

/* The probe's idle latency is lat; its streaming bandwidth is the link's payload rate for every mix:
 * asic: lat = 2 x 267 + 2 x 6 + 36 + 76 = 658 cycles = 274.17 ns; 64 B per 663/128 cycles at 2.4 GHz =
 * 29.65 GB/s (the DRAM's 38.4 GB/s is not the limit). */
static void test_probe_figures(void **state)
{
    (void)state;
    devcfg dev;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(devcfg_load("asic", &dev, &e), 0);
    probe_opts o;
    probe_default_opts(&o);
    o.backend = "analytical";
    o.idle_samples = 200;
    o.warmup_us = 5;
    o.window_us = 10;
    double ns = 0, rd = 0, mix = 0;
    uint64_t cyc;
    assert_int_equal(probe_idle_latency(&dev, &o, &ns, &cyc, &e), 0);
    assert_float_equal(ns, 658 / 2.4, 1e-6);
    assert_int_equal(probe_bandwidth(&dev, &o, 1, 0, CXL_PAT_SEQ, 0, &rd, &cyc, NULL, &e), 0);
    assert_int_equal(probe_bandwidth(&dev, &o, 2, 1, CXL_PAT_SEQ, 0, &mix, &cyc, NULL, &e), 0);
    assert_float_equal(rd, 64.0 * 128 / 663 * 2.4, 0.1);
    assert_float_equal(mix, rd, 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered),
        cmocka_unit_test(test_idle_line),
        cmocka_unit_test(test_local_path),
        cmocka_unit_test(test_large_transfer),
        cmocka_unit_test(test_bytes_progress),
        cmocka_unit_test(test_fifo_two_requesters),
        cmocka_unit_test(test_requester_order),
        cmocka_unit_test(test_pool_parallel),
        cmocka_unit_test(test_gap_caps_rate),
        cmocka_unit_test(test_outstanding_caps_rate),
        cmocka_unit_test(test_capped_share),
        cmocka_unit_test(test_not_before),
        cmocka_unit_test(test_stop_on_completion),
        cmocka_unit_test(test_space_and_limits),
        cmocka_unit_test(test_completion_buffer),
        cmocka_unit_test(test_mix_same_time),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_probe_figures),
    };
    return cmocka_run_group_tests_name("analytical", tests, NULL, NULL);
}

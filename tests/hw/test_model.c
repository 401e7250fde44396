/* test_model.c - the whole cycle-level model (hw/hls/cxl_model.h): single-access latencies as the sum of
 * the stated pipeline pieces, determinism, exact idle skipping, and back-pressure that never overflows
 * an internal bound under saturating load.
 *
 * Parameters: tests/hw_fixture.h (DDR5-4800, Gen5 x8, ASIC controller, 100-cycle host paths). All
 * accesses below go to channel 0, bank group 0, bank 0, whose first refresh deadline is tREFI / 2 = 4680
 * (dram.h: refresh staggered over the 2 channels), then every 9360 cycles; single accesses are placed
 * clear of those windows so the derivations need no refresh term. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cxl_model.h"
#include "hw_fixture.h"
#include "preset_fixture.h"

#define MAXCOMP 4096u

static cxl_model *model_new(const cxl_params *p)
{
    cxl_model *m = test_calloc(1, sizeof *m);
    assert_non_null(m);
    cxl_model_init(m, p);
    return m;
}

static cxl_desc line_desc(uint64_t id, uint16_t req, uint64_t addr, uint64_t lines, int write, uint64_t nb)
{
    cxl_desc d;
    memset(&d, 0, sizeof d);
    d.id = id;
    d.requester = req;
    d.base = addr;
    d.bytes = lines * CXL_LINE_BYTES;
    d.pattern = CXL_PAT_SEQ;
    d.max_outstanding = 16;
    d.rd_weight = write ? 0 : 1;
    d.wr_weight = write ? 1 : 0;
    d.not_before = nb;
    return d;
}

/* Run to `until`, draining every completion into c[] (returns how many). */
static uint32_t run_collect(cxl_model *m, uint64_t until, cxl_completion *c, uint32_t max)
{
    uint32_t n = 0;
    while (m->now < until) {
        cxl_model_run(m, until, 0);
        n += cxl_model_drain(m, c + n, max - n);
        assert_true(n < max);
    }
    n += cxl_model_drain(m, c + n, max - n);
    assert_int_equal(m->model_error, 0);
    return n;
}

/* One access, alone in the model; returns its completion. */
static cxl_completion single(const cxl_params *p, int write, uint64_t nb, cxl_model **keep)
{
    cxl_model *m = model_new(p);
    cxl_desc d = line_desc(1, 0, hwfx_addr(&p->dram, 0, 0, 0, 0, 5, 0), 1, write, nb);
    assert_int_equal(cxl_model_submit(m, &d), 0);
    cxl_completion c[4];
    assert_int_equal(run_collect(m, nb + 1000, c, 4), 1);
    assert_true(cxl_model_idle(m));
    if (keep)
        *keep = m;
    else
        test_free(m);
    return c[0];
}

/* ---- single-access latency ---- */

/* Local path (no link, no CXL controller): a read issued at 0 enters the host request path (100), reaches
 * the memory controller at 100 and is activated at once (precharged bank), RD @134, data @176 (D6:
 * tRCD + tCL + tBL = 76), then the host response path (100): complete @276 = 100 + 34 + 34 + 8 + 100. */
static void test_local_read_latency(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_local(&p);
    cxl_model *m;
    cxl_completion c = single(&p, 0, 0, &m);
    assert_int_equal(c.id, 1);
    assert_int_equal(c.start_cycle, 0);
    assert_int_equal(c.end_cycle, 100 + 34 + 34 + 8 + 100);
    assert_int_equal(c.lines, 1);
    assert_int_equal(m->st.read_lat.count, 1);
    assert_int_equal(m->st.read_lat.linear[276], 1);
    assert_int_equal(m->st.read_bytes, 64);
    assert_int_equal(m->st.dev[0].reads, 1);
    assert_int_equal(m->st.dev[0].acts, 1);
    const cxl_dram_chan *ch = &m->dev[0].dram.ch[0];
    assert_int_equal(ch->trace[0].cycle, 100);
    assert_int_equal(ch->trace[1].cycle, 134);
    assert_int_equal(m->st.link[0].flits[0] + m->st.link[0].flits[1], 0);
    test_free(m);
}

/* Local write: posted at the memory controller, so only the host paths count: issue 0, at the
 * controller @100, its completion back through the response path: @200. */
static void test_local_write_latency(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_local(&p);
    cxl_model *m;
    cxl_completion c = single(&p, 1, 0, &m);
    assert_int_equal(c.end_cycle, 200);
    assert_int_equal(m->st.write_lat.linear[200], 1);
    assert_int_equal(m->st.write_bytes, 64);
    assert_int_equal(m->st.dev[0].writes, 1);
    test_free(m);
}

/* CXL read, cycle by cycle (cxl_model.h order; link.h timing; Gen5 x8: a flit is 5.18 cycles, ser 6):
 *   0    requester issues into the host request path (100)
 *   100  M2S flit (H5) starts on the idle link; arrives 100 + ser 6 + phy 0 = 106
 *   106  into ingress; accepted the same cycle; controller processing 36 -> 142
 *   142  into the DRAM queue; ACT @142, RD @176, data @218 (76)
 *   218  DRS MemData into the response path (48) -> 266
 *   266  S2M flit 1: H5 (the DRS header) + 3 of its 4 data chunks
 *   271  S2M flit 2 carries the last chunk: the wire frees at 266 + 5.18 (link.h), during cycle 271;
 *        the DRS is delivered with it at 271 + 6 = 277
 *   277  into the host response path (100) -> complete @377.
 * 377 = 100 + 6 + 36 + 76 + 48 + 5 + 6 + 100. */
static void test_cxl_read_latency(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    cxl_model *m;
    cxl_completion c = single(&p, 0, 0, &m);
    assert_int_equal(c.end_cycle, 377);
    assert_int_equal(m->st.read_lat.linear[377], 1);
    assert_int_equal(m->dev[0].dram.ch[0].trace[0].cycle, 142);
    assert_int_equal(m->st.link[0].flits[CXL_DIR_M2S], 1);
    assert_int_equal(m->st.link[0].flits[CXL_DIR_S2M], 2);
    assert_int_equal(m->st.link[0].msgs[CXL_M2S_REQ], 1);
    assert_int_equal(m->st.link[0].msgs[CXL_S2M_DRS], 1);
    assert_int_equal(m->st.dev[0].devload[0], 1); /* ingress empty: light load */
    test_free(m);
}

/* CXL write:
 *   100  M2S flit 1: H4 (RwD header) + 3 chunks;  105 flit 2: the last chunk; arrives 111
 *   111  RwD into ingress, accepted; processing 36 -> 147: into the DRAM write queue, posted, and its
 *        NDR Cmp into the response path (48) -> 195
 *   195  S2M flit (H0 NDR) on the idle link; arrives 201; host response path -> complete @301.
 * 301 = 100 + 5 + 6 + 36 + 48 + 6 + 100. */
static void test_cxl_write_latency(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    cxl_model *m;
    cxl_completion c = single(&p, 1, 0, &m);
    assert_int_equal(c.end_cycle, 301);
    assert_int_equal(m->st.write_lat.linear[301], 1);
    assert_int_equal(m->dev[0].dram.ch[0].trace[0].cycle, 147);
    assert_int_equal(m->st.link[0].flits[CXL_DIR_M2S], 2);
    assert_int_equal(m->st.link[0].flits[CXL_DIR_S2M], 1);
    assert_int_equal(m->st.link[0].msgs[CXL_S2M_NDR], 1);
    test_free(m);
}

/* cxl_model_run with stop_on_completion returns once a completion is buffered: after the cycle that
 * produced it (local read done @276, so now = 277). */
static void test_run_stops_on_completion(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_local(&p);
    cxl_model *m = model_new(&p);
    cxl_desc d = line_desc(1, 0, 0, 1, 0, 0);
    assert_int_equal(cxl_model_submit(m, &d), 0);
    cxl_model_run(m, 100000, 1);
    assert_int_equal(m->now, 277);
    cxl_completion c;
    assert_int_equal(cxl_model_drain(m, &c, 1), 1);
    assert_int_equal(c.end_cycle, 276);
    test_free(m);
}

/* ---- idle skipping ---- */

/* Single accesses far apart, with not_before: the model skips the idle stretches (to the next
 * not_before or refresh deadline) and must land exactly where stepping would. Three ways:
 *  1. the expected cycles: read nb + 377, write nb + 301 (link), nb + 276 / nb + 200 (local): the
 *     derivations above; the DRAM windows (nb + 142 .. nb + 218) lie clear of ch 0's refreshes at
 *     4680 + 9360 k (+ up to tRP + tRFC);
 *  2. refresh kept going while skipped: ch 0 refreshes at 4680 + 9360 k and ch 1 at 9360 k, so before
 *     250000 there are 27 + 26 = 53 REF;
 *  3. a twin model forced to step every cycle (a second requester holding a tag it never uses keeps
 *     quiet_until from skipping; that requester has no descriptor and never issues) ends with
 *     byte-identical statistics and completions. */
static void skip_run(const cxl_params *p0, int step, cxl_completion *c, uint32_t *n, cxl_stats *st)
{
    cxl_params p = *p0;
    p.requesters = 2;
    cxl_model *m = model_new(&p);
    if (step)
        m->req[1].nfree--; /* a tag "in use": requester 1 is busy forever */
    uint64_t addr = hwfx_addr(&p.dram, 0, 0, 0, 0, 5, 0);
    cxl_desc d[4] = { line_desc(10, 0, addr, 1, 0, 50000), line_desc(11, 0, addr + 64 * 2, 1, 0, 120000),
                      line_desc(12, 0, addr, 1, 1, 200000), line_desc(13, 0, addr, 4, 0, 230011) };
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(cxl_model_submit(m, &d[i]), 0);
    *n = run_collect(m, 250000, c, 16);
    assert_int_equal(m->now, 250000);
    /* the twin's requester 1 holds its tag throughout, so the model is never idle: it stepped */
    assert_int_equal(cxl_model_idle(m), !step);
    *st = m->st;
    test_free(m);
}

static void check_skip(const cxl_params *p, uint64_t rd, uint64_t wr)
{
    cxl_completion a[16], b[16];
    uint32_t na, nb;
    cxl_stats *sa = test_calloc(1, sizeof *sa), *sb = test_calloc(1, sizeof *sb);
    assert_non_null(sa);
    assert_non_null(sb);
    skip_run(p, 0, a, &na, sa);
    skip_run(p, 1, b, &nb, sb);
    assert_int_equal(na, 4);
    assert_int_equal(a[0].end_cycle, 50000 + rd);
    assert_int_equal(a[1].end_cycle, 120000 + rd);
    assert_int_equal(a[2].end_cycle, 200000 + wr);
    assert_int_equal(a[3].start_cycle, 230011);
    assert_int_equal(sa->cycles, 250000);
    assert_int_equal(sa->dev[0].refs, 53);
    assert_int_equal(nb, na);
    assert_memory_equal(a, b, na * sizeof a[0]);
    assert_memory_equal(sa, sb, sizeof *sa);
    test_free(sa);
    test_free(sb);
}

static void test_idle_skip_exact_cxl(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    check_skip(&p, 377, 301);
}

static void test_idle_skip_exact_local(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_local(&p);
    check_skip(&p, 276, 200);
}

/* Idle fast-forward (dram.h): a descriptor held back by a not_before far ahead. The model crosses whole
 * refresh periods at once; a twin run in steps shorter than three periods (so it never jumps, it only
 * skips from refresh to refresh) ends in the same state to the byte: statistics, completions, the DRAM's
 * timing state and its command trace. Traffic before the wait leaves rows open and bank timers set;
 * traffic after it meets the state the jump left. Every refresh policy, one and several channels,
 * ranks, devices and a switch. */
static void idle_jump_run(const cxl_params *p, int step, cxl_model *m, cxl_completion *c, uint32_t *n)
{
    cxl_model_init(m, p);
    uint64_t wait = 40000000 + 12345, period = dram_idle_period(&p->dram);
    assert_true(period > 0);
    for (uint32_t r = 0; r < p->requesters && r < 4; r++) {
        cxl_desc a = line_desc(1 + r, (uint16_t)r, 0x100000ull * r, 64, r & 1, 0);
        cxl_desc b = line_desc(100 + r, (uint16_t)r, 0x100000ull * r + 4096, 32, 0, wait + 977 * r);
        cxl_desc z = line_desc(200 + r, (uint16_t)r, 0x2000000ull * r, 16, 1, 2 * wait);
        a.max_outstanding = b.max_outstanding = z.max_outstanding = 8;
        assert_int_equal(cxl_model_submit(m, &a), 0);
        assert_int_equal(cxl_model_submit(m, &b), 0);
        assert_int_equal(cxl_model_submit(m, &z), 0);
    }
    uint64_t end = 2 * wait + 200000;
    *n = 0;
    while (m->now < end) {
        cxl_model_run(m, step && m->now + period < end ? m->now + period : end, 0);
        *n += cxl_model_drain(m, c + *n, 64 - *n);
    }
    assert_int_equal(m->model_error, 0);
}

static void check_idle_jump(const char *preset)
{
    cxl_params p;
    pfx_preset(preset, &p);
    cxl_model *a = test_calloc(1, sizeof *a), *b = test_calloc(1, sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    cxl_completion ca[64], cb[64];
    uint32_t na, nb;
    idle_jump_run(&p, 0, a, ca, &na);
    idle_jump_run(&p, 1, b, cb, &nb);
    uint32_t descs = 3 * (p.requesters < 4 ? p.requesters : 4);
    assert_int_equal(na, descs);
    assert_int_equal(nb, na);
    assert_memory_equal(ca, cb, na * sizeof ca[0]);
    /* both waits crossed almost whole by the jumping model, none by the stepping one */
    if (a->idle_jumped < 70000000 || b->idle_jumped != 0)
        fail_msg("%s: jumped %llu and %llu cycles", preset, (unsigned long long)a->idle_jumped,
                 (unsigned long long)b->idle_jumped);
    assert_true(a->st.dev[0].refs > 1000);
    a->idle_jumped = 0;
    assert_memory_equal(&a->st, &b->st, sizeof a->st);
    assert_memory_equal(a, b, sizeof *a);
    test_free(a);
    test_free(b);
}

static void test_idle_jump_exact(void **state)
{
    (void)state;
    /* asic: DDR5 same-bank refresh; asic-ddr4: all-bank; pool-2x2: a switch, two devices;
     * cz120: several channels */
    const char *presets[] = { "asic", "asic-ddr4", "pool-2x2", "cz120", "local-ddr5" };
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        check_idle_jump(presets[i]);
}

/* ---- saturation: back-pressure, determinism ---- */

typedef struct load {
    uint32_t requesters, lines, descs;
    uint8_t rd, wr;
    uint64_t until; /* run this long; 0: until every descriptor completed */
} load;

/* Every bound the model keeps by back-pressure, checked after each cycle. */
static void check_bounds(const cxl_model *m)
{
    const cxl_params *p = &m->p;
    assert_int_equal(m->model_error, 0);
    assert_true(pipe_count(&m->dev[0].ing_req) <= p->ctrl.ingress_depth);
    assert_true(pipe_count(&m->dev[0].ing_rwd) <= p->ctrl.ingress_depth);
    assert_true(m->dev[0].rsp_reserved <= p->ctrl.response_depth);
    for (uint32_t c = 0; c < p->dram.channels; c++) {
        const cxl_dram_chan *ch = &m->dev[0].dram.ch[c];
        assert_true(ch->nr <= p->dram.read_queue);
        assert_true(ch->nw <= p->dram.write_queue);
        assert_true(ch->rd_count <= CXL_RD_INFLIGHT);
    }
    if (p->link_present) {
        const cxl_link_dir *l[2] = { &m->up_m2s[0], &m->up_s2m[0] };
        for (uint32_t i = 0; i < 2; i++) {
            for (uint32_t k = 0; k < CXL_NCLASS; k++)
                assert_true(l[i]->cr.avail[k] + l[i]->cr.count[k] <= l[i]->cr.pool[k]);
            assert_true(l[i]->owed_count <= CXL_OWED_MAX);
            assert_true(l[i]->fl_count <= CXL_MAX_FLIGHT);
        }
    }
    for (uint32_t r = 0; r < p->requesters; r++) {
        const cxl_requester *q = &m->req[r];
        assert_true(q->nfree <= q->tags);
        for (uint32_t i = 0; i < q->count; i++) {
            const cxl_dslot *s = &q->q[(q->head + i) % CXL_DESCQ];
            assert_true(s->outstanding <= s->d.max_outstanding);
        }
    }
}

/* 16 requesters x 64 outstanding random lines over 1 GiB: the device is far over-subscribed (1024
 * requests in flight against 48-entry queues), so every queue fills and only credits, reservations and
 * free tags hold the load back. Steps one cycle at a time and checks every bound after each. */
static uint32_t run_load(const cxl_params *p0, const load *ld, cxl_stats *st, cxl_completion *c, uint64_t *end)
{
    cxl_params p = *p0;
    p.requesters = ld->requesters;
    cxl_model *m = model_new(&p);
    uint64_t want_lines = 0;
    for (uint32_t r = 0; r < ld->requesters; r++) {
        for (uint32_t k = 0; k < ld->descs; k++) {
            cxl_desc d;
            memset(&d, 0, sizeof d);
            d.id = r * 100 + k;
            d.requester = (uint16_t)r;
            d.base = 0;
            d.bytes = (uint64_t)ld->lines * CXL_LINE_BYTES;
            d.footprint = 1ull << 30;
            d.pattern = CXL_PAT_RANDOM;
            d.seed = 1234;
            d.max_outstanding = 64;
            d.rd_weight = ld->rd;
            d.wr_weight = ld->wr;
            assert_int_equal(cxl_model_submit(m, &d), 0);
            want_lines += ld->lines;
        }
    }
    uint32_t n = 0;
    uint64_t limit = ld->until ? ld->until : 2000000;
    while (m->now < limit) {
        cxl_model_run(m, m->now + 1, 0);
        check_bounds(m);
        n += cxl_model_drain(m, c + n, MAXCOMP - n);
        if (!ld->until && n == ld->requesters * ld->descs)
            break;
    }
    if (!ld->until) {
        /* everything submitted came back, once, and the model is empty */
        assert_int_equal(n, ld->requesters * ld->descs);
        uint64_t lines = 0;
        for (uint32_t i = 0; i < n; i++)
            lines += c[i].lines;
        assert_int_equal(lines, want_lines);
        assert_int_equal(m->st.read_bytes + m->st.write_bytes, want_lines * CXL_LINE_BYTES);
        assert_int_equal(m->st.read_lat.count + m->st.write_lat.count, want_lines);
        cxl_model_run(m, m->now + 1000, 0);
        assert_true(cxl_model_idle(m));
    }
    if (st)
        *st = m->st;
    if (end)
        *end = m->now;
    test_free(m);
    return n;
}

static void saturate(const cxl_params *p, uint8_t rd, uint8_t wr)
{
    load ld = { 16, 256, 2, rd, wr, 0 };
    cxl_completion *c = test_calloc(MAXCOMP, sizeof *c);
    cxl_stats *st = test_calloc(1, sizeof *st);
    assert_non_null(c);
    assert_non_null(st);
    uint64_t end;
    run_load(p, &ld, st, c, &end);
    /* the load did saturate: the ingress queues were full at some point, and responses went out with
     * DevLoad "severe" (ingress occupancy >= 36) */
    if (p->link_present) {
        assert_true(st->dev[0].ingress_occ_max >= p->ctrl.devload_severe);
        assert_true(st->dev[0].devload[3] > 0);
    }
    print_message("  %s %u:%u: %llu lines in %llu cycles, %.1f B/cycle\n", p->link_present ? "cxl" : "local", rd, wr,
                  (unsigned long long)(st->read_bytes + st->write_bytes) / 64, (unsigned long long)end,
                  (double)(st->read_bytes + st->write_bytes) / (double)end);
    test_free(c);
    test_free(st);
}

static void test_backpressure_cxl_reads(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    saturate(&p, 1, 0);
}

static void test_backpressure_cxl_writes(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    saturate(&p, 0, 1);
}

static void test_backpressure_cxl_mix(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    saturate(&p, 2, 1);
}

static void test_backpressure_local_mix(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_local(&p);
    saturate(&p, 2, 1);
}

/* A 4-entry response queue (devctrl.h: NDRs and DRSs waiting for the link, plus reads whose data is on
 * its way) with writes and reads competing for it: writes wait in the processing pipe and RDs in the
 * DRAM queue for an entry, and the count never exceeds 4 (check_bounds). */
static void test_backpressure_small_response_queue(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    p.ctrl.response_depth = 4;
    saturate(&p, 1, 1);
}

/* Same inputs, same everything: two runs of a saturating 2:1 random load give byte-identical statistics
 * and completions. */
static void test_deterministic(void **state)
{
    (void)state;
    cxl_params p;
    hwfx_cxl(&p);
    load ld = { 8, 128, 2, 2, 1, 30000 };
    cxl_completion *a = test_calloc(MAXCOMP, sizeof *a), *b = test_calloc(MAXCOMP, sizeof *b);
    cxl_stats *sa = test_calloc(1, sizeof *sa), *sb = test_calloc(1, sizeof *sb);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(sa);
    assert_non_null(sb);
    uint32_t na = run_load(&p, &ld, sa, a, NULL);
    uint32_t nb = run_load(&p, &ld, sb, b, NULL);
    assert_true(na > 0);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na * sizeof *a);
    assert_memory_equal(sa, sb, sizeof *sa);
    test_free(a);
    test_free(b);
    test_free(sa);
    test_free(sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_read_latency),
        cmocka_unit_test(test_local_write_latency),
        cmocka_unit_test(test_cxl_read_latency),
        cmocka_unit_test(test_cxl_write_latency),
        cmocka_unit_test(test_run_stops_on_completion),
        cmocka_unit_test(test_idle_skip_exact_cxl),
        cmocka_unit_test(test_idle_skip_exact_local),
        cmocka_unit_test(test_idle_jump_exact),
        cmocka_unit_test(test_backpressure_cxl_reads),
        cmocka_unit_test(test_backpressure_cxl_writes),
        cmocka_unit_test(test_backpressure_cxl_mix),
        cmocka_unit_test(test_backpressure_local_mix),
        cmocka_unit_test(test_backpressure_small_response_queue),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests_name("hw_model", tests, NULL, NULL);
}

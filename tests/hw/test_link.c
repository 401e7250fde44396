/* test_link.c - one direction of a 68 B-flit CXL link (hw/hls/link.h, credit.h) against its contract:
 * slot packing (CXL 3.x 4.2.5 rules as link.h restates them), the exact serialization rate, arrival
 * latency, credits and delivery order.
 *
 * Harness: each cycle does what cxl_model.c does for a link direction, in its order: credit_tick, then
 * link_rx (the receiver may return the credit of every delivered message: credit_return at that cycle),
 * then link_tx. Every flit sent is recorded with the per-flit deltas of the link statistics, so a flit's
 * make-up is observed, not inferred:
 *   header flit "H5 + 3 chunks": msgs[DRS] += 2, slots_used += 4, data_flits += 0
 *   all-data flit:               msgs += 0,     slots_used += 4, data_flits += 1
 *
 * Gen5 x8 at the 2.4 GHz DDR5-4800 clock (tests/hw_fixture.h): cost/inc = 169728e6 / 32768e6 = 5.1797
 * cycles per flit, ser_cycles = 6. Per link.h the wire frees at exact rational times: on a saturated
 * link flit j (counting from a first flit at cycle c0 on an idle link) starts during cycle
 * c0 + floor(j * cost / inc): 0, 5, 10, 15, 20, 25, 31, ... */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hw_fixture.h"
#include "link.h"

#define LK_MAXSRC 4u
#define LK_MAXFLIT 4096u
#define LK_MAXRX 8192u

typedef struct lk_flit {
    uint64_t cycle;
    uint64_t msgs[CXL_NCLASS];
    uint64_t data_flit, slots;
    uint32_t owed_before; /* data chunks owed when the flit was built */
    uint32_t first_rx, nrx; /* messages this flit delivered, as indices into rx[] (filled on arrival) */
} lk_flit;

typedef struct lk_rx {
    uint64_t cycle;
    cxl_msg m;
} lk_rx;

typedef struct lk {
    cxl_link_params lp;
    cxl_link_dir l;
    cxl_link_stats st;
    cxl_pipe src[LK_MAXSRC];
    cxl_pipe *sp[LK_MAXSRC];
    uint32_t nsrc;
    int return_credits; /* the receiver frees each delivered message's buffer at once */
    uint64_t now;
    lk_flit fl[LK_MAXFLIT];
    uint32_t nfl, nfl_rx; /* flits sent; flits delivered */
    lk_rx rx[LK_MAXRX];
    uint32_t nrx;
} lk;

/* A link direction with the fixture's Gen5 x8 parameters and credit pools cr[] (per class). */
static lk *lk_new(uint32_t dir, uint32_t nsrc, const uint32_t cr[CXL_NCLASS], uint32_t lanes)
{
    lk *h = test_calloc(1, sizeof *h);
    assert_non_null(h);
    hwfx_link_gen5(&h->lp, HWFX_CLK_KHZ, lanes);
    link_init(&h->l, dir, &h->lp, cr);
    h->nsrc = nsrc;
    for (uint32_t i = 0; i < nsrc; i++) {
        pipe_init(&h->src[i], CXL_MAX_FIFO);
        h->sp[i] = &h->src[i];
    }
    h->return_credits = 1;
    return h;
}

static void lk_push(lk *h, uint32_t s, uint32_t cls, uint16_t tag, uint64_t ready)
{
    cxl_msg m = hwfx_msg(cls, (uint64_t)tag * CXL_LINE_BYTES, tag);
    m.req = (uint8_t)s;
    assert_int_equal(pipe_push(&h->src[s], &m, ready), 0);
}

static void lk_step(lk *h)
{
    uint64_t now = h->now;
    credit_tick(&h->l.cr, now);
    cxl_msg out[CXL_FLIT_MAXDONE];
    uint32_t in_flight = h->l.fl_count;
    uint32_t n = link_rx(&h->l, now, out);
    if (h->l.fl_count < in_flight) {
        /* a flit arrived: the oldest one not yet delivered, exactly ser + phy cycles after it was sent */
        assert_true(h->nfl_rx < h->nfl);
        lk_flit *f = &h->fl[h->nfl_rx++];
        assert_int_equal(now, f->cycle + h->lp.ser_cycles + h->lp.phy_cycles);
        f->first_rx = h->nrx;
        f->nrx = n;
    } else {
        assert_int_equal(n, 0);
        /* and no flit is overdue */
        if (h->nfl_rx < h->nfl)
            assert_true(h->fl[h->nfl_rx].cycle + h->lp.ser_cycles + h->lp.phy_cycles > now);
    }
    for (uint32_t i = 0; i < n; i++) {
        assert_true(h->nrx < LK_MAXRX);
        h->rx[h->nrx].cycle = now;
        h->rx[h->nrx].m = out[i];
        h->nrx++;
        if (h->return_credits)
            credit_return(&h->l.cr, out[i].cls, now);
    }
    cxl_link_stats b = h->st;
    uint32_t owed = h->l.owed_chunks;
    if (link_tx(&h->l, now, h->sp, h->nsrc, &h->st)) {
        assert_true(h->nfl < LK_MAXFLIT);
        lk_flit *f = &h->fl[h->nfl++];
        memset(f, 0, sizeof *f);
        f->cycle = now;
        for (uint32_t k = 0; k < CXL_NCLASS; k++)
            f->msgs[k] = h->st.msgs[k] - b.msgs[k];
        f->data_flit = h->st.data_flits[h->l.dir] - b.data_flits[h->l.dir];
        f->slots = h->st.slots_used[h->l.dir] - b.slots_used[h->l.dir];
        f->owed_before = owed;
        assert_int_equal(h->st.flits[h->l.dir] - b.flits[h->l.dir], 1);
    } else {
        assert_int_equal(h->st.flits[h->l.dir], b.flits[h->l.dir]);
    }
    h->now++;
}

static void lk_run_until_flits(lk *h, uint32_t nflits, uint64_t limit)
{
    while (h->nfl < nflits && h->now < limit)
        lk_step(h);
    assert_true(h->nfl >= nflits);
}

/* Run until every sent flit has arrived. */
static void lk_drain(lk *h)
{
    uint64_t limit = h->now + 1000;
    while (!link_idle(&h->l) && h->now < limit)
        lk_step(h);
    lk_step(h);
    assert_true(link_idle(&h->l));
}

static void expect_flit(const lk_flit *f, uint32_t owed_before, uint32_t data_flit, uint32_t slots,
                        uint32_t nreq, uint32_t nrwd, uint32_t ndrs, uint32_t nndr)
{
    assert_int_equal(f->owed_before, owed_before);
    assert_int_equal(f->data_flit, data_flit);
    assert_int_equal(f->slots, slots);
    assert_int_equal(f->msgs[CXL_M2S_REQ], nreq);
    assert_int_equal(f->msgs[CXL_M2S_RWD], nrwd);
    assert_int_equal(f->msgs[CXL_S2M_DRS], ndrs);
    assert_int_equal(f->msgs[CXL_S2M_NDR], nndr);
}

/* Flit start cycle on a saturated link: floor(j * cost / inc) after the first (link.h). */
static uint64_t sat_cycle(const cxl_link_params *lp, uint64_t j)
{
    return (j * lp->flit_cost) / lp->flit_inc;
}

/* ---- packing ---- */

/* A read-only S2M stream (DRS headers always ready). Derivation, with o = chunks owed before the flit:
 *  F1 o=0: slot 0 takes 2 DRS (H5; a third does not fit any header format), slots 1-3 take 3 of their
 *          8 chunks -> o=5
 *  F2 o=5 > 3: all-data (4 chunks) -> o=1       F3 o=1: H5 (2 DRS) + 3 chunks -> o=6
 *  F4 all-data -> o=2                          F5 o=2: H5 + 3 chunks -> o=7
 *  F6 all-data -> o=3                          F7 o=3 (not > 3): H5 + 3 chunks -> o=8
 *  F8 all-data -> o=4                          F9 o=4 > 3: all-data -> o=0, and F10 repeats F1.
 * 8 lines per 9 flits. Line k (from 0) ends with chunk 4(k+1); cumulative chunks after F1..F9 are
 * 3, 7, 10, 14, 17, 21, 24, 28, 32, so F2..F9 each deliver exactly one DRS, in header order. */
static void test_s2m_read_stream_flit_sequence(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 0, 0, 64, 64 };
    lk *h = lk_new(CXL_DIR_S2M, 2, cr, 8);
    for (uint16_t t = 0; t < 40; t++)
        lk_push(h, 0, CXL_S2M_DRS, t, 0);
    lk_run_until_flits(h, 18, 1000);
    lk_drain(h);
    static const uint32_t owed[9] = { 0, 5, 1, 6, 2, 7, 3, 8, 4 };
    for (uint32_t i = 0; i < 18; i++) {
        const lk_flit *f = &h->fl[i];
        uint32_t k = i % 9;
        int data = k == 1 || k == 3 || k == 5 || k == 7 || k == 8;
        expect_flit(f, owed[k], (uint32_t)data, 4, 0, 0, data ? 0 : 2, 0);
        assert_int_equal(f->cycle, sat_cycle(&h->lp, i));
        assert_int_equal(f->nrx, k == 0 ? 0 : 1);
        if (k) {
            uint16_t want = (uint16_t)((i / 9) * 8 + (k - 1));
            assert_int_equal(h->rx[f->first_rx].m.tag, want);
            assert_int_equal(h->rx[f->first_rx].m.cls, CXL_S2M_DRS);
        }
    }
    assert_int_equal(h->st.credit_stall[CXL_S2M_DRS], 0);
    test_free(h);
}

/* NDRs only: at most 2 NDR per flit (spec 4.2.5), so a flit carries H4 (2 NDR) and its three generic
 * slots stay empty even with NDRs waiting: 6 NDRs take 3 flits of 1 used slot each. */
static void test_s2m_ndr_two_per_flit(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 0, 0, 64, 64 };
    lk *h = lk_new(CXL_DIR_S2M, 2, cr, 8);
    for (uint16_t t = 0; t < 6; t++)
        lk_push(h, 1, CXL_S2M_NDR, t, 0);
    lk_run_until_flits(h, 3, 100);
    lk_drain(h);
    assert_int_equal(h->nfl, 3);
    for (uint32_t i = 0; i < 3; i++) {
        expect_flit(&h->fl[i], 0, 0, 1, 0, 0, 0, 2);
        assert_int_equal(h->fl[i].nrx, 2);
        assert_int_equal(h->rx[h->fl[i].first_rx].m.tag, 2 * i);
        assert_int_equal(h->rx[h->fl[i].first_rx + 1].m.tag, 2 * i + 1);
        /* header-only messages arrive with the flit that carries them */
        assert_int_equal(h->rx[h->fl[i].first_rx].cycle, h->fl[i].cycle + 6);
    }
    test_free(h);
}

/* DRS and NDR together (sources {DRS, NDR}, round-robin from DRS):
 *  F1: slot 0 = H3 (DRS0 + NDR0; a second DRS or NDR fits no header format with them), slots 1-3 =
 *      3 chunks of DRS0 -> o=1; delivers NDR0.
 *  F2: slot 0 = H3 (DRS1 + NDR1), slot 1 = DRS0's last chunk, slots 2-3 = DRS1 chunks -> o=2; delivers
 *      NDR1 (slot 0) then DRS0 (slot 1): message order follows slot order.
 *  F3: slot 0 empty, slots 1-2 = DRS1's last chunks, slot 3 empty; delivers DRS1. */
static void test_s2m_drs_ndr_mix(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 0, 0, 64, 64 };
    lk *h = lk_new(CXL_DIR_S2M, 2, cr, 8);
    lk_push(h, 0, CXL_S2M_DRS, 10, 0);
    lk_push(h, 0, CXL_S2M_DRS, 11, 0);
    lk_push(h, 1, CXL_S2M_NDR, 20, 0);
    lk_push(h, 1, CXL_S2M_NDR, 21, 0);
    lk_run_until_flits(h, 3, 100);
    lk_drain(h);
    assert_int_equal(h->nfl, 3);
    expect_flit(&h->fl[0], 0, 0, 4, 0, 0, 1, 1);
    expect_flit(&h->fl[1], 1, 0, 4, 0, 0, 1, 1);
    expect_flit(&h->fl[2], 2, 0, 2, 0, 0, 0, 0);
    assert_int_equal(h->fl[0].nrx, 1);
    assert_int_equal(h->rx[h->fl[0].first_rx].m.tag, 20);
    assert_int_equal(h->fl[1].nrx, 2);
    assert_int_equal(h->rx[h->fl[1].first_rx].m.tag, 21);
    assert_int_equal(h->rx[h->fl[1].first_rx + 1].m.tag, 10);
    assert_int_equal(h->fl[2].nrx, 1);
    assert_int_equal(h->rx[h->fl[2].first_rx].m.tag, 11);
    test_free(h);
}

/* A write-only M2S stream: at most 1 RwD header per flit (spec 4.2.5: one data header per non-MDH
 * flit), so slot 0 is always H4 and the generic slots carry data:
 *  F1 o=0: H4 + 3 chunks -> o=1   F2 o=1: H4 + 3 -> o=2   F3 o=2: H4 + 3 -> o=3
 *  F4 o=3 (not > 3): H4 + 3 -> o=4   F5 o=4 > 3: all-data -> o=0; then F6 repeats F1.
 * 4 lines per 5 flits (5 slots per line, docs/references.md). RwD k ends with chunk 4(k+1); cumulative
 * chunks 3, 6, 9, 12, 16: F2..F5 each deliver one RwD. */
static void test_m2s_write_stream_one_rwd_per_flit(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 48, 48, 0, 0 };
    lk *h = lk_new(CXL_DIR_M2S, 1, cr, 8);
    for (uint16_t t = 0; t < 20; t++)
        lk_push(h, 0, CXL_M2S_RWD, t, 0);
    lk_run_until_flits(h, 10, 1000);
    lk_drain(h);
    static const uint32_t owed[5] = { 0, 1, 2, 3, 4 };
    for (uint32_t i = 0; i < 10; i++) {
        uint32_t k = i % 5;
        if (k == 4)
            expect_flit(&h->fl[i], 4, 1, 4, 0, 0, 0, 0);
        else
            expect_flit(&h->fl[i], owed[k], 0, 4, 0, 1, 0, 0);
        assert_int_equal(h->fl[i].cycle, sat_cycle(&h->lp, i));
        assert_int_equal(h->fl[i].nrx, k == 0 ? 0 : 1);
        if (k)
            assert_int_equal(h->rx[h->fl[i].first_rx].m.tag, (i / 5) * 4 + k - 1);
    }
    test_free(h);
}

/* Requests only, from three requesters: at most 2 M2S Req per flit (H5 in slot 0, G4 in one generic
 * slot); sources are served round-robin from the one after the last served, and messages arrive in
 * slot order. 12 Reqs -> 6 flits of 2 used slots; arrival order s0#0 s1#0 s2#0 s0#1 s1#1 ... */
static void test_m2s_two_req_per_flit_round_robin(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 48, 48, 0, 0 };
    lk *h = lk_new(CXL_DIR_M2S, 3, cr, 8);
    for (uint16_t k = 0; k < 4; k++)
        for (uint16_t s = 0; s < 3; s++)
            lk_push(h, s, CXL_M2S_REQ, (uint16_t)(s * 16 + k), 0);
    lk_run_until_flits(h, 6, 1000);
    lk_drain(h);
    assert_int_equal(h->nfl, 6);
    for (uint32_t i = 0; i < 6; i++)
        expect_flit(&h->fl[i], 0, 0, 2, 2, 0, 0, 0);
    assert_int_equal(h->nrx, 12);
    for (uint32_t i = 0; i < 12; i++) {
        uint32_t s = i % 3, k = i / 3;
        assert_int_equal(h->rx[i].m.tag, s * 16 + k);
        assert_int_equal(h->rx[i].m.req, s);
    }
    test_free(h);
}

/* Reads and writes from two sources {Req, RwD}, round-robin from Req:
 *  F1 o=0: slot 0 = H5 (Req), slot 1 = G5 (RwD header; nothing else fits beside it), slots 2-3 = its
 *          first 2 chunks -> o=2; delivers Req0.
 *  F2 o=2: slot 0 = H5 (Req1), slots 1-2 = RwD0's last chunks, slot 3 = G5 (RwD1: "rollover of 2:
 *          slot 0 and slot 3 are packed independently") -> o=4; delivers Req1 then RwD0.
 *  F3 o=4 > 3: all-data; delivers RwD1.  F4 repeats F1. */
static void test_m2s_req_rwd_mix(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 48, 48, 0, 0 };
    lk *h = lk_new(CXL_DIR_M2S, 2, cr, 8);
    for (uint16_t k = 0; k < 4; k++) {
        lk_push(h, 0, CXL_M2S_REQ, k, 0);
        lk_push(h, 1, CXL_M2S_RWD, (uint16_t)(100 + k), 0);
    }
    lk_run_until_flits(h, 6, 1000);
    lk_drain(h);
    for (uint32_t c = 0; c < 2; c++) {
        const lk_flit *f = &h->fl[3 * c];
        expect_flit(&f[0], 0, 0, 4, 1, 1, 0, 0);
        expect_flit(&f[1], 2, 0, 4, 1, 1, 0, 0);
        expect_flit(&f[2], 4, 1, 4, 0, 0, 0, 0);
        assert_int_equal(f[0].nrx, 1);
        assert_int_equal(h->rx[f[0].first_rx].m.tag, 2 * c);
        assert_int_equal(f[1].nrx, 2);
        assert_int_equal(h->rx[f[1].first_rx].m.tag, 2 * c + 1);
        assert_int_equal(h->rx[f[1].first_rx + 1].m.tag, 100 + 2 * c);
        assert_int_equal(f[2].nrx, 1);
        assert_int_equal(h->rx[f[2].first_rx].m.tag, 100 + 2 * c + 1);
    }
    test_free(h);
}

/* ---- serialization rate and latency ---- */

/* At saturation flit j starts during cycle floor(j*cost/inc), so the flits sent in the first N cycles
 * number exactly ceil(N*inc/cost) (the count of j with j*cost/inc < N): floor(N*inc/cost) or one more,
 * never a flit lost to rounding. Checked flit by flit over N = 10000 cycles (1931 flits on x8). */
static void check_rate(uint32_t lanes)
{
    uint32_t cr[CXL_NCLASS] = { 48, 48, 0, 0 };
    lk *h = lk_new(CXL_DIR_M2S, 2, cr, lanes);
    const uint64_t N = 10000;
    uint16_t tag = 0;
    while (h->now < N) {
        for (uint32_t s = 0; s < 2; s++)
            while (pipe_count(&h->src[s]) < 8)
                lk_push(h, s, CXL_M2S_REQ, tag++, 0);
        lk_step(h);
    }
    uint64_t want = (N * h->lp.flit_inc + h->lp.flit_cost - 1) / h->lp.flit_cost;
    assert_int_equal(h->nfl, want);
    assert_true(h->nfl >= N * h->lp.flit_inc / h->lp.flit_cost);
    for (uint32_t j = 0; j < h->nfl; j++) {
        assert_int_equal(h->fl[j].cycle, sat_cycle(&h->lp, j));
        assert_int_equal(h->fl[j].msgs[CXL_M2S_REQ], 2);
    }
    /* 48 Req credits cover the credit round trip (ser 6 + credit return 10 cycles): never short */
    assert_int_equal(h->st.credit_stall[CXL_M2S_REQ], 0);
    test_free(h);
}

static void test_rate_exact_x8(void **state)
{
    (void)state;
    check_rate(8);
}

static void test_rate_exact_x16(void **state)
{
    (void)state;
    check_rate(16); /* cost/inc = 2.5898 cycles, ser_cycles = 3 */
}

/* Arrival = send + ser_cycles + phy_cycles, for every flit (lk_step asserts it on each arrival); here
 * with a PHY latency of 7 cycles: a Req sent at cycle 0 arrives at 0 + 6 + 7 = 13, not earlier. */
static void test_arrival_latency(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 48, 48, 0, 0 };
    lk *h = lk_new(CXL_DIR_M2S, 1, cr, 8);
    h->lp.phy_cycles = 7;
    link_init(&h->l, CXL_DIR_M2S, &h->lp, cr);
    lk_push(h, 0, CXL_M2S_REQ, 5, 0);
    while (h->now < 13) {
        lk_step(h);
        assert_int_equal(h->nrx, 0);
    }
    lk_step(h);
    assert_int_equal(h->nrx, 1);
    assert_int_equal(h->rx[0].cycle, 13);
    assert_int_equal(h->rx[0].m.tag, 5);
    test_free(h);
}

/* An idle link starts a flit in the cycle its message becomes ready, and the next one exactly one
 * flit time later: messages ready at 100 (3 Reqs: 2 fit a flit) give flits at 100 and
 * 100 + floor(cost/inc) = 105 (the wire frees at 105.18, during cycle 105). */
static void test_idle_link_starts_at_once(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 48, 48, 0, 0 };
    lk *h = lk_new(CXL_DIR_M2S, 1, cr, 8);
    for (uint16_t t = 0; t < 3; t++)
        lk_push(h, 0, CXL_M2S_REQ, t, 100);
    while (h->now < 200)
        lk_step(h);
    assert_int_equal(h->nfl, 2);
    assert_int_equal(h->fl[0].cycle, 100);
    assert_int_equal(h->fl[0].msgs[CXL_M2S_REQ], 2);
    assert_int_equal(h->fl[1].cycle, 105);
    assert_int_equal(h->fl[1].msgs[CXL_M2S_REQ], 1);
    test_free(h);
}

/* ---- credits ---- */

/* credit.h: a credit returned at t is usable from credit_tick(t + credit_return_cycles) on, not before. */
static void test_credit_return_delay(void **state)
{
    (void)state;
    cxl_credits *c = test_calloc(1, sizeof *c);
    assert_non_null(c);
    uint32_t pool[CXL_NCLASS] = { 2, 1, 0, 0 };
    credit_init(c, pool, 10);
    assert_true(credit_have(c, CXL_M2S_REQ));
    credit_take(c, CXL_M2S_REQ);
    credit_take(c, CXL_M2S_REQ);
    credit_take(c, CXL_M2S_RWD);
    assert_false(credit_have(c, CXL_M2S_REQ));
    credit_return(c, CXL_M2S_REQ, 100);
    credit_return(c, CXL_M2S_REQ, 105);
    credit_return(c, CXL_M2S_RWD, 101);
    for (uint64_t t = 100; t < 110; t++) {
        credit_tick(c, t);
        assert_int_equal(c->avail[CXL_M2S_REQ], 0);
    }
    credit_tick(c, 110);
    assert_int_equal(c->avail[CXL_M2S_REQ], 1);
    assert_int_equal(c->avail[CXL_M2S_RWD], 0);
    credit_tick(c, 111);
    assert_int_equal(c->avail[CXL_M2S_RWD], 1);
    credit_tick(c, 114);
    assert_int_equal(c->avail[CXL_M2S_REQ], 1);
    credit_tick(c, 115);
    assert_int_equal(c->avail[CXL_M2S_REQ], 2);
    /* a zero delay returns at once */
    credit_init(c, pool, 0);
    credit_take(c, CXL_M2S_RWD);
    credit_return(c, CXL_M2S_RWD, 7);
    assert_int_equal(c->avail[CXL_M2S_RWD], 1);
    test_free(c);
}

/* With no DRS credit the sender places no DRS at all, sends the NDR beside it, and counts one credit
 * stall per flit opportunity: cycle 0 (the flit with the NDR) and then every cycle from the wire's next
 * free moment (cycle 5) on: cycles 5..19, so 16 stalls in 20 cycles. */
static void test_zero_credits_send_nothing_of_class(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 0, 0, 0, 64 };
    lk *h = lk_new(CXL_DIR_S2M, 2, cr, 8);
    lk_push(h, 0, CXL_S2M_DRS, 1, 0);
    lk_push(h, 0, CXL_S2M_DRS, 2, 0);
    lk_push(h, 1, CXL_S2M_NDR, 3, 0);
    while (h->now < 20)
        lk_step(h);
    assert_int_equal(h->nfl, 1);
    expect_flit(&h->fl[0], 0, 0, 1, 0, 0, 0, 1);
    assert_int_equal(h->st.msgs[CXL_S2M_DRS], 0);
    assert_int_equal(h->st.credit_stall[CXL_S2M_DRS], 16);
    assert_int_equal(h->st.credit_stall[CXL_S2M_NDR], 0);
    assert_int_equal(pipe_count(&h->src[0]), 2);
    test_free(h);
}

/* Two DRS credits returned 10 cycles after the receiver frees the buffer (on delivery):
 *  flit 0 @0:  H5 (DRS0, DRS1) + 3 chunks; both credits spent; o=5
 *  flit 1 @5:  all-data; delivers DRS0 (arrives 11 -> credit back at 21); o=1
 *  flit 2 @10: DRS2 stalls (credit_stall 1); slot 1 = DRS1's last chunk (arrives 16 -> back at 26)
 *  cycles 15..20: the wire is free, DRS2 waits: 6 more stalls, no flit
 *  flit 3 @21: the credit seen at 21 takes DRS2; DRS3 stalls (8 in all)
 *  flit 4 @26: the wire frees at 26.x, the second credit is back: DRS3 goes. */
static void test_credit_stall_and_return_through_link(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 0, 0, 2, 64 };
    lk *h = lk_new(CXL_DIR_S2M, 2, cr, 8);
    for (uint16_t t = 0; t < 4; t++)
        lk_push(h, 0, CXL_S2M_DRS, t, 0);
    while (h->now < 21)
        lk_step(h);
    assert_int_equal(h->nfl, 3);
    assert_int_equal(h->fl[0].cycle, 0);
    assert_int_equal(h->fl[1].cycle, 5);
    assert_int_equal(h->fl[2].cycle, 10);
    expect_flit(&h->fl[2], 1, 0, 1, 0, 0, 0, 0);
    assert_int_equal(h->st.msgs[CXL_S2M_DRS], 2);
    assert_int_equal(h->st.credit_stall[CXL_S2M_DRS], 7);
    lk_step(h); /* cycle 21 */
    assert_int_equal(h->nfl, 4);
    assert_int_equal(h->fl[3].cycle, 21);
    expect_flit(&h->fl[3], 0, 0, 4, 0, 0, 1, 0);
    assert_int_equal(h->st.credit_stall[CXL_S2M_DRS], 8);
    while (h->now < 27)
        lk_step(h);
    assert_int_equal(h->nfl, 5);
    assert_int_equal(h->fl[4].cycle, 26);
    expect_flit(&h->fl[4], 1, 0, 4, 0, 0, 1, 0);
    lk_drain(h);
    assert_int_equal(h->nrx, 4);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(h->rx[i].m.tag, i);
    test_free(h);
}

/* link_idle: false while data is owed or a flit is in flight, true once everything has arrived. */
static void test_link_idle(void **state)
{
    (void)state;
    uint32_t cr[CXL_NCLASS] = { 0, 0, 64, 64 };
    lk *h = lk_new(CXL_DIR_S2M, 2, cr, 8);
    assert_true(link_idle(&h->l));
    lk_push(h, 0, CXL_S2M_DRS, 1, 0);
    lk_step(h); /* flit 0 @0: header + 3 chunks, 1 owed */
    assert_false(link_idle(&h->l));
    while (h->now < 11) {
        lk_step(h);
        assert_false(link_idle(&h->l)); /* flit 1 @5 arrives at 11 */
    }
    lk_step(h);
    assert_int_equal(h->nrx, 1);
    assert_int_equal(h->rx[0].cycle, 11);
    assert_true(link_idle(&h->l));
    test_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_s2m_read_stream_flit_sequence),
        cmocka_unit_test(test_s2m_ndr_two_per_flit),
        cmocka_unit_test(test_s2m_drs_ndr_mix),
        cmocka_unit_test(test_m2s_write_stream_one_rwd_per_flit),
        cmocka_unit_test(test_m2s_two_req_per_flit_round_robin),
        cmocka_unit_test(test_m2s_req_rwd_mix),
        cmocka_unit_test(test_rate_exact_x8),
        cmocka_unit_test(test_rate_exact_x16),
        cmocka_unit_test(test_arrival_latency),
        cmocka_unit_test(test_idle_link_starts_at_once),
        cmocka_unit_test(test_credit_return_delay),
        cmocka_unit_test(test_zero_credits_send_nothing_of_class),
        cmocka_unit_test(test_credit_stall_and_return_through_link),
        cmocka_unit_test(test_link_idle),
    };
    return cmocka_run_group_tests_name("hw_link", tests, NULL, NULL);
}

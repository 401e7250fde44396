/* test_dram.c - the DRAM controller (hw/hls/dram.h) and its timing table (dram_timing.h) against the
 * JEDEC rules they state, on DDR5-4800 (JEDEC 4800AN) unless a test says otherwise.
 *
 * The controller is driven directly: requests are enqueued before dram_tick of their cycle (dram.h) and
 * every cycle is ticked. Commands are observed in the channel's command trace (cycle, cmd, bank) and
 * reads by the cycle their completion leaves dram_tick. Each test names the rule it pins and derives
 * the exact cycle of the command that rule makes binding; a model that skipped or shortened that rule
 * would issue earlier and fail.
 *
 * DDR5-4800 figures (cycles): tRCD = tCL = tRP = 34, tRAS 77, tRC 111, tCWL 32, tWR 72, tRTP 18, tBL 8,
 * tCCD_S/L 8/12, tCCD_S_WR/L_WR 8/48, tRRD_S/L 8/12, tWTR_S/L 6/24, tFAW 48, tRTW = 34+8+2-32 = 12,
 * tREFI 9360, tRFC 708. Map (LSB first above 64 B): ch 1 bit, bg 3, col 6, bank 2, rank 0, row 16.
 * Refresh deadlines are staggered over the two channels (ch 0 first at 4680), so every test that is
 * not about refresh finishes well before cycle 4680. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dram.h"
#include "hw_fixture.h"

#define DH_MAXCOMP 65536u
#define ROOM_UNLIMITED UINT32_MAX /* the response queue never holds a RD back */

typedef struct dh_comp {
    uint64_t cycle;
    cxl_msg m;
} dh_comp;

typedef struct dh {
    cxl_dram_params p;
    cxl_dram d;
    cxl_dev_stats st;
    uint64_t now;
    uint32_t room;       /* response-queue room handed to dram_tick each cycle */
    int track_room;      /* 1: room is a pool that RDs consume (else it is refilled every cycle) */
    dh_comp comp[DH_MAXCOMP];
    uint32_t ncomp;
    uint16_t next_tag;
} dh;

static dh *dh_new_with(const cxl_dram_params *p)
{
    dh *h = test_calloc(1, sizeof *h);
    assert_non_null(h);
    h->p = *p;
    dram_init(&h->d, &h->p);
    h->room = ROOM_UNLIMITED;
    return h;
}

static dh *dh_new(void)
{
    cxl_dram_params p;
    hwfx_ddr5_4800(&p);
    return dh_new_with(&p);
}

static void dh_tick(dh *h)
{
    cxl_msg out[CXL_MAX_CH];
    uint32_t room = h->room;
    uint32_t n = dram_tick(&h->d, &h->p, h->now, out, &h->st, &room);
    if (h->track_room)
        h->room = room;
    for (uint32_t i = 0; i < n; i++) {
        assert_true(h->ncomp < DH_MAXCOMP);
        h->comp[h->ncomp].cycle = h->now;
        h->comp[h->ncomp].m = out[i];
        h->ncomp++;
    }
    h->now++;
}

static void dh_run_to(dh *h, uint64_t t)
{
    while (h->now < t)
        dh_tick(h);
}

/* Enqueue at the current cycle (before its tick). Returns the tag. */
static uint16_t dh_req(dh *h, int write, uint32_t ch, uint32_t bg, uint32_t bank, uint32_t row, uint32_t col)
{
    uint16_t tag = h->next_tag++;
    cxl_msg m = hwfx_msg(write ? CXL_M2S_RWD : CXL_M2S_REQ, hwfx_addr(&h->p, ch, 0, bg, bank, row, col), tag);
    assert_true(dram_space(&h->d, &h->p, ch, write) > 0);
    dram_enqueue(&h->d, &h->p, &m, h->now);
    return tag;
}

static uint16_t dh_rd(dh *h, uint32_t bg, uint32_t bank, uint32_t row, uint32_t col)
{
    return dh_req(h, 0, 0, bg, bank, row, col);
}

static uint16_t dh_wr(dh *h, uint32_t bg, uint32_t bank, uint32_t row, uint32_t col)
{
    return dh_req(h, 1, 0, bg, bank, row, col);
}

/* Completion cycle of a read tag (fails if it did not complete). */
static uint64_t dh_done(const dh *h, uint16_t tag)
{
    for (uint32_t i = 0; i < h->ncomp; i++)
        if (h->comp[i].m.tag == tag)
            return h->comp[i].cycle;
    fail_msg("read tag %u never completed", tag);
    return 0;
}

typedef struct xcmd {
    uint64_t cycle;
    uint32_t cmd, bg, bank;
} xcmd;

static const char *cmd_name(uint32_t c)
{
    static const char *const n[] = { "ACT", "PRE", "RD", "WR", "REF", "REFsb" };
    return c < 6 ? n[c] : "?";
}

/* The channel's command trace from command `first` on equals want[0..n) exactly (and nothing more). */
static void expect_trace_from(const dh *h, uint32_t ch, uint64_t first, const xcmd *want, uint32_t n)
{
    const cxl_dram_chan *c = &h->d.ch[ch];
    if (c->trace_n != first + n) {
        for (uint64_t i = first; i < c->trace_n; i++) {
            const cxl_dram_trace_rec *r = &c->trace[i % CXL_DRAM_TRACE];
            print_message("  cmd %llu: %s @%llu bg %u bank %u\n", (unsigned long long)i, cmd_name(r->cmd),
                          (unsigned long long)r->cycle, r->bg, r->bank);
        }
    }
    assert_int_equal(c->trace_n, first + n);
    for (uint32_t i = 0; i < n; i++) {
        const cxl_dram_trace_rec *r = &c->trace[(first + i) % CXL_DRAM_TRACE];
        if (r->cmd != want[i].cmd || r->cycle != want[i].cycle || r->bg != want[i].bg || r->bank != want[i].bank)
            fail_msg("command %u: got %s @%llu bg %u bank %u, want %s @%llu bg %u bank %u", i, cmd_name(r->cmd),
                     (unsigned long long)r->cycle, r->bg, r->bank, cmd_name(want[i].cmd),
                     (unsigned long long)want[i].cycle, want[i].bg, want[i].bank);
    }
}

static void expect_trace(const dh *h, uint32_t ch, const xcmd *want, uint32_t n)
{
    expect_trace_from(h, ch, 0, want, n);
}

#define NCMD(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* ---- address map ---- */

/* LSB first above the 64 B offset: ch (1 bit), bg (3), col (6), bank (2), rank (0), row (16). */
static void test_map_fields(void **state)
{
    (void)state;
    cxl_dram_params p;
    hwfx_ddr5_4800(&p);
    cxl_dram_addr a;
    dram_map(&p, 1 * 64, &a);
    assert_int_equal(a.ch, 1);
    dram_map(&p, 2 * 64, &a);
    assert_int_equal(a.ch, 0);
    assert_int_equal(a.bg, 1);
    dram_map(&p, 16 * 64, &a);
    assert_int_equal(a.bg, 0);
    assert_int_equal(a.col, 1);
    dram_map(&p, 1024 * 64, &a);
    assert_int_equal(a.col, 0);
    assert_int_equal(a.bank, 1);
    dram_map(&p, 4096 * 64, &a);
    assert_int_equal(a.bank, 0);
    assert_int_equal(a.row, 1);
    dram_map(&p, ((1ull << 28) + 5) * 64, &a); /* capacity 2^28 lines: wraps */
    assert_int_equal(a.row, 0);
    assert_int_equal(a.ch, 1);
    assert_int_equal(a.bg, 2);
    dram_map(&p, hwfx_addr(&p, 1, 0, 5, 3, 4321, 17), &a);
    assert_int_equal(a.ch, 1);
    assert_int_equal(a.bg, 5);
    assert_int_equal(a.bank, 3);
    assert_int_equal(a.row, 4321);
    assert_int_equal(a.col, 17);
    assert_int_equal(dram_channel_of(&p, 64), 1);
}

/* ---- D6 ---- */

/* D6 (docs/references.md): an unloaded read to a precharged bank completes tRCD + tCL + tBL after it
 * is enqueued. Enqueued at 3: ACT @3 (an idle bank is activated in the cycle its request arrives),
 * RD @3+34 = 37 (tRCD), data done @37+34+8 = 79 (tCL + tBL): 76 = 34 + 34 + 8 cycles after enqueue. */
static void test_d6_unloaded_read_ddr5(void **state)
{
    (void)state;
    dh *h = dh_new();
    dh_run_to(h, 3);
    uint16_t t = dh_rd(h, 2, 1, 77, 5);
    dh_run_to(h, 79);
    assert_int_equal(h->ncomp, 0);
    dh_tick(h);
    assert_int_equal(h->ncomp, 1);
    assert_int_equal(dh_done(h, t), 3 + 34 + 34 + 8);
    const xcmd want[] = { { 3, DRAM_ACT, 2, 1 }, { 37, DRAM_RD, 2, 1 } };
    expect_trace(h, 0, want, NCMD(want));
    assert_int_equal(h->st.acts, 1);
    assert_int_equal(h->st.reads, 1);
    assert_int_equal(h->d.ch[0].trace[0].row, 77);
    test_free(h);
}

/* D6 on DDR4-3200 (DRAMsim3 DDR4_8Gb_x8_3200): tRCD + tCL + tBL = 22 + 22 + 4 = 48 cycles. */
static void test_d6_unloaded_read_ddr4(void **state)
{
    (void)state;
    cxl_dram_params p;
    hwfx_ddr4_3200(&p);
    dh *h = dh_new_with(&p);
    uint16_t t = dh_req(h, 0, 0, 3, 2, 9, 100);
    dh_run_to(h, 200);
    assert_int_equal(dh_done(h, t), 48);
    const xcmd want[] = { { 0, DRAM_ACT, 3, 2 }, { 22, DRAM_RD, 3, 2 } };
    expect_trace(h, 0, want, NCMD(want));
    test_free(h);
}

/* Reads on the two channels proceed independently: same bank coordinates on ch 0 and ch 1, both at 0,
 * both complete at 76. */
static void test_channels_independent(void **state)
{
    (void)state;
    dh *h = dh_new();
    uint16_t a = dh_req(h, 0, 0, 0, 0, 0, 0);
    uint16_t b = dh_req(h, 0, 1, 0, 0, 0, 0);
    dh_run_to(h, 200);
    assert_int_equal(dh_done(h, a), 76);
    assert_int_equal(dh_done(h, b), 76);
    test_free(h);
}

/* ---- per-bank rules ---- */

/* tRAS and tRP: two reads at 0 to the same bank, rows 0 and 1. ACT @0, RD @34; the PRE for row 1 waits
 * for tRAS (0+77 = 77; tRTP gives only 34+18 = 52): PRE @77; ACT @77+tRP = 111; RD @145, done @187. */
static void test_tras_conflict(void **state)
{
    (void)state;
    dh *h = dh_new();
    uint16_t a = dh_rd(h, 0, 0, 0, 0);
    uint16_t b = dh_rd(h, 0, 0, 1, 0);
    dh_run_to(h, 300);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 }, { 34, DRAM_RD, 0, 0 }, { 77, DRAM_PRE, 0, 0 },
                          { 111, DRAM_ACT, 0, 0 }, { 145, DRAM_RD, 0, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    assert_int_equal(dh_done(h, a), 76);
    assert_int_equal(dh_done(h, b), 187);
    assert_int_equal(h->st.row_conflicts, 1);
    test_free(h);
}

/* tRTP and tRP: row 0 opened at 0 (ACT @0, RD @34); at 70 a second hit (col 1) and a conflict (row 1)
 * arrive. The hit reads @70; the PRE waits for tRTP: max(tRAS 0+77, 70+18) = 88; the ACT waits tRP:
 * 88+34 = 122 (tRC only asks 111); RD @156, done @198. */
static void test_trtp_then_trp(void **state)
{
    (void)state;
    dh *h = dh_new();
    dh_rd(h, 0, 0, 0, 0);
    dh_run_to(h, 70);
    dh_rd(h, 0, 0, 0, 1);
    uint16_t b = dh_rd(h, 0, 0, 1, 0);
    dh_run_to(h, 300);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 },  { 34, DRAM_RD, 0, 0 },   { 70, DRAM_RD, 0, 0 },
                          { 88, DRAM_PRE, 0, 0 }, { 122, DRAM_ACT, 0, 0 }, { 156, DRAM_RD, 0, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    assert_int_equal(dh_done(h, b), 198);
    test_free(h);
}

/* tRC: with the JEDEC figures tRAS + tRP = tRC (77 + 34 = 111), so tRC never binds alone; a part with
 * tRC = 130 shows it does bind: PRE @77 (tRAS), ACT @max(77+34, 0+130) = 130. */
static void test_trc(void **state)
{
    (void)state;
    cxl_dram_params p;
    hwfx_ddr5_4800(&p);
    p.tRC = 130;
    dh *h = dh_new_with(&p);
    dh_rd(h, 0, 0, 0, 0);
    dh_rd(h, 0, 0, 1, 0);
    dh_run_to(h, 300);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 }, { 34, DRAM_RD, 0, 0 }, { 77, DRAM_PRE, 0, 0 },
                          { 130, DRAM_ACT, 0, 0 }, { 164, DRAM_RD, 0, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    test_free(h);
}

/* tWR: two writes at 0 to the same bank, rows 0 and 1 (write mode: no reads queued). ACT @0, WR @34;
 * the PRE waits for write recovery after the burst: 34 + tCWL 32 + tBL 8 + tWR 72 = 146 (> tRAS 77);
 * ACT @146+34 = 180, WR @214. */
static void test_twr(void **state)
{
    (void)state;
    dh *h = dh_new();
    dh_wr(h, 0, 0, 0, 0);
    dh_wr(h, 0, 0, 1, 0);
    dh_run_to(h, 300);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 }, { 34, DRAM_WR, 0, 0 }, { 146, DRAM_PRE, 0, 0 },
                          { 180, DRAM_ACT, 0, 0 }, { 214, DRAM_WR, 0, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    assert_int_equal(h->st.writes, 2);
    assert_int_equal(h->ncomp, 0); /* writes are posted: no completion leaves the DRAM */
    test_free(h);
}

/* ---- column-to-column rules ---- */

/* Opens row 0 of (bg0, bank0), (bg1, bank0), (bg0, bank1) by reading col 0 of each at 0:
 * ACT @0 (bg0 b0), ACT @8 (bg1, tRRD_S), ACT @16 (bg0 b1: tRRD_L from @0 gives 12, tRRD_S from @8
 * gives 16); RD @34, @42, @50. Everything has settled by 200. Returns the commands issued (6). */
static uint64_t open_three_banks(dh *h)
{
    dh_rd(h, 0, 0, 0, 0);
    dh_rd(h, 1, 0, 0, 0);
    dh_rd(h, 0, 1, 0, 0);
    dh_run_to(h, 200);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 }, { 8, DRAM_ACT, 1, 0 },  { 16, DRAM_ACT, 0, 1 },
                          { 34, DRAM_RD, 0, 0 }, { 42, DRAM_RD, 1, 0 }, { 50, DRAM_RD, 0, 1 } };
    expect_trace(h, 0, want, NCMD(want));
    return NCMD(want);
}

/* tCCD_S vs tCCD_L (reads), rows already open:
 *  @200 bg0 + bg1:          RD @200, @208 (tCCD_S = 8)
 *  @300 bg0 b0 + bg0 b1:    RD @300, @312 (tCCD_L = 12: same bank group, other bank)
 *  @400 bg0 b0 twice:       RD @400, @412 (tCCD_L, same bank)
 * Data returns tCL + tBL after each RD: @242, @250. */
static void test_tccd_reads(void **state)
{
    (void)state;
    dh *h = dh_new();
    uint64_t k = open_three_banks(h);
    uint16_t a = dh_rd(h, 0, 0, 0, 1);
    uint16_t b = dh_rd(h, 1, 0, 0, 1);
    dh_run_to(h, 300);
    dh_rd(h, 0, 0, 0, 2);
    dh_rd(h, 0, 1, 0, 1);
    dh_run_to(h, 400);
    dh_rd(h, 0, 0, 0, 3);
    dh_rd(h, 0, 0, 0, 4);
    dh_run_to(h, 500);
    const xcmd want[] = { { 200, DRAM_RD, 0, 0 }, { 208, DRAM_RD, 1, 0 }, { 300, DRAM_RD, 0, 0 },
                          { 312, DRAM_RD, 0, 1 }, { 400, DRAM_RD, 0, 0 }, { 412, DRAM_RD, 0, 0 } };
    expect_trace_from(h, 0, k, want, NCMD(want));
    assert_int_equal(dh_done(h, a), 242);
    assert_int_equal(dh_done(h, b), 250);
    test_free(h);
}

/* tCCD_S_WR vs tCCD_L_WR (writes), rows already open; the last RD was @50, so tRTW (50+12) is long past:
 *  @200 bg0 + bg1:        WR @200, @208 (tCCD_S_WR = 8)
 *  @300 bg0 b0 + bg0 b1:  WR @300, @348 (tCCD_L_WR = 48) */
static void test_tccd_writes(void **state)
{
    (void)state;
    dh *h = dh_new();
    uint64_t k = open_three_banks(h);
    dh_wr(h, 0, 0, 0, 1);
    dh_wr(h, 1, 0, 0, 1);
    dh_run_to(h, 300);
    dh_wr(h, 0, 0, 0, 2);
    dh_wr(h, 0, 1, 0, 2);
    dh_run_to(h, 500);
    const xcmd want[] = { { 200, DRAM_WR, 0, 0 }, { 208, DRAM_WR, 1, 0 }, { 300, DRAM_WR, 0, 0 },
                          { 348, DRAM_WR, 0, 1 } };
    expect_trace_from(h, 0, k, want, NCMD(want));
    test_free(h);
}

/* tWTR_L / tWTR_S: WR @200 to bg0 (rows open); a read arriving at 201 waits for the write data plus the
 * turnaround: same bank group RD @200 + tCWL 32 + tBL 8 + tWTR_L 24 = 264 (done @306); other bank group
 * RD @200 + 32 + 8 + tWTR_S 6 = 246. */
static void check_twtr(uint32_t rd_bg, uint64_t want_rd)
{
    dh *h = dh_new();
    uint64_t k = open_three_banks(h);
    dh_wr(h, 0, 0, 0, 1);
    dh_tick(h);
    uint16_t r = dh_rd(h, rd_bg, 0, 0, 2);
    dh_run_to(h, 400);
    const xcmd want[] = { { 200, DRAM_WR, 0, 0 }, { want_rd, DRAM_RD, rd_bg, 0 } };
    expect_trace_from(h, 0, k, want, NCMD(want));
    assert_int_equal(dh_done(h, r), want_rd + 42);
    test_free(h);
}

static void test_twtr_l(void **state)
{
    (void)state;
    check_twtr(0, 264);
}

static void test_twtr_s(void **state)
{
    (void)state;
    check_twtr(1, 246);
}

/* tRTW: RD @200; a write arriving at 201 waits for the read burst to clear the bus: WR @200 + tRTW =
 * 200 + (tCL + tBL + 2 - tCWL) = 212, whether or not it is in the read's bank group. */
static void check_trtw(uint32_t wr_bg)
{
    dh *h = dh_new();
    uint64_t k = open_three_banks(h);
    dh_rd(h, 0, 0, 0, 1);
    dh_tick(h);
    dh_wr(h, wr_bg, 0, 0, 2);
    dh_run_to(h, 400);
    const xcmd want[] = { { 200, DRAM_RD, 0, 0 }, { 212, DRAM_WR, wr_bg, 0 } };
    expect_trace_from(h, 0, k, want, NCMD(want));
    test_free(h);
}

static void test_trtw_same_bg(void **state)
{
    (void)state;
    check_trtw(0);
}

static void test_trtw_other_bg(void **state)
{
    (void)state;
    check_trtw(1);
}

/* ---- activate rules ---- */

/* tRRD_S vs tRRD_L: two reads at 0 to closed banks. Other bank group: ACT @0, @8 (tRRD_S); same bank
 * group, other bank: ACT @0, @12 (tRRD_L). */
static void check_trrd(uint32_t bg2, uint32_t bank2, uint64_t want_act)
{
    dh *h = dh_new();
    dh_rd(h, 0, 0, 0, 0);
    dh_rd(h, bg2, bank2, 0, 0);
    dh_run_to(h, 30);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 }, { want_act, DRAM_ACT, bg2, bank2 } };
    expect_trace(h, 0, want, NCMD(want));
    test_free(h);
}

static void test_trrd_s(void **state)
{
    (void)state;
    check_trrd(1, 0, 8);
}

static void test_trrd_l(void **state)
{
    (void)state;
    check_trrd(0, 1, 12);
}

/* tFAW: five reads at 0 to bank groups 0..4. ACTs @0, 8, 16, 24 (tRRD_S); the fifth waits for the
 * first + tFAW = 48 (tRRD_S alone would allow 32). RDs at ACT + tRCD: 34, 42, 50, 58, 82 (the RDs do not
 * collide with the ACT @48). */
static void test_tfaw(void **state)
{
    (void)state;
    dh *h = dh_new();
    for (uint32_t g = 0; g < 5; g++)
        dh_rd(h, g, 0, 0, 0);
    dh_run_to(h, 200);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 },  { 8, DRAM_ACT, 1, 0 },  { 16, DRAM_ACT, 2, 0 },
                          { 24, DRAM_ACT, 3, 0 }, { 34, DRAM_RD, 0, 0 },  { 42, DRAM_RD, 1, 0 },
                          { 48, DRAM_ACT, 4, 0 }, { 50, DRAM_RD, 2, 0 },  { 58, DRAM_RD, 3, 0 },
                          { 82, DRAM_RD, 4, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    test_free(h);
}

/* ---- timing table, rank-to-rank (dram_timing.h), on a 2-rank DDR5 part ---- */

/* dram_timing.h: RD -> other rank: RD +tBL+2 = 10, WR +tRTW = 12; WR -> other rank: WR +tBL+2 = 10,
 * RD +max(1, tCWL+tBL+2-tCL) = 32+8+2-34 = 8. Same rank: RD +tCCD_S / WR +tRTW; WR +tCCD_S_WR /
 * RD +tCWL+tBL+tWTR_S. ACT: bank RD/WR +tRCD, PRE +tRAS, ACT +tRC; other bank group ACT +tRRD_S; REF:
 * every bank and the rank ACT +tRFC. */
static void test_timing_table(void **state)
{
    (void)state;
    cxl_dram_params p;
    hwfx_ddr5_4800(&p);
    p.ranks = 2;
    hwfx_dram_bits(&p);
    cxl_dram_timing *t = test_calloc(1, sizeof *t);
    assert_non_null(t);
    dram_timing_init(t, &p);
    dram_issue(t, &p, DRAM_ACT, 0, 0, 0, 5, 0, 1000);
    assert_int_equal(dram_ready(t, &p, DRAM_RD, 0, 0, 0), 1034);
    assert_int_equal(dram_ready(t, &p, DRAM_WR, 0, 0, 0), 1034);
    assert_int_equal(dram_ready(t, &p, DRAM_PRE, 0, 0, 0), 1077);
    assert_int_equal(dram_ready(t, &p, DRAM_ACT, 0, 1, 0), 1008);
    assert_int_equal(dram_ready(t, &p, DRAM_ACT, 0, 0, 1), 1012);
    assert_int_equal(dram_ready(t, &p, DRAM_ACT, 1, 0, 0), 0); /* other rank: no tRRD */
    dram_issue(t, &p, DRAM_RD, 0, 0, 0, 5, 0, 1034);
    assert_int_equal(dram_ready(t, &p, DRAM_RD, 1, 0, 0), 1044);
    assert_int_equal(dram_ready(t, &p, DRAM_WR, 1, 0, 0), 1046);
    assert_int_equal(dram_ready(t, &p, DRAM_RD, 0, 1, 0), 1042);
    assert_int_equal(dram_ready(t, &p, DRAM_WR, 0, 1, 0), 1046);
    assert_int_equal(dram_ready(t, &p, DRAM_PRE, 0, 0, 0), 1077);
    dram_issue(t, &p, DRAM_WR, 0, 0, 0, 5, 0, 1100);
    assert_int_equal(dram_ready(t, &p, DRAM_WR, 1, 0, 0), 1110);
    assert_int_equal(dram_ready(t, &p, DRAM_RD, 1, 0, 0), 1108);
    assert_int_equal(dram_ready(t, &p, DRAM_WR, 0, 1, 0), 1108);
    assert_int_equal(dram_ready(t, &p, DRAM_RD, 0, 1, 0), 1146);
    assert_int_equal(dram_ready(t, &p, DRAM_WR, 0, 0, 0), 1148);
    assert_int_equal(dram_ready(t, &p, DRAM_RD, 0, 0, 0), 1164);
    assert_int_equal(dram_ready(t, &p, DRAM_PRE, 0, 0, 0), 1212);
    /* auto-precharge: the bank closes and may be activated tRP after the implied PRE */
    dram_issue(t, &p, DRAM_RD, 0, 0, 0, 5, 1, 1300);
    assert_int_equal(t->bank[0].open_row, -1);
    assert_int_equal(dram_ready(t, &p, DRAM_ACT, 0, 0, 0), 1318 + 34);
    dram_issue(t, &p, DRAM_REF, 1, 0, 0, 0, 0, 2000);
    assert_int_equal(dram_ready(t, &p, DRAM_ACT, 1, 3, 2), 2708);
    assert_int_equal(dram_ready(t, &p, DRAM_REF, 1, 0, 0), 2708);
    test_free(t);
}

/* ---- refresh ---- */

/* First refresh deadline of (ch, rank), dram.h 2a: deadlines are staggered, unit k = ch * ranks + rank
 * of n = channels * ranks first refreshes at tREFI * (k + 1) / n. DDR5 here: ch 0 at 4680, ch 1 at 9360. */
static uint64_t first_ref(const cxl_dram_params *p, uint32_t ch, uint32_t rank)
{
    uint64_t n = (uint64_t)p->channels * p->ranks, k = (uint64_t)ch * p->ranks + rank;
    return (uint64_t)p->tREFI * (k + 1) / n;
}

/* An idle controller refreshes each channel's rank at every deadline, the next one tREFI after the
 * previous: ch 0 REF @4680, 14040, 23400; ch 1 @9360, 18720, 28080. */
static void test_refresh_every_trefi(void **state)
{
    (void)state;
    dh *h = dh_new();
    assert_int_equal(first_ref(&h->p, 0, 0), 4680);
    assert_int_equal(first_ref(&h->p, 1, 0), 9360);
    dh_run_to(h, 30000);
    for (uint32_t ch = 0; ch < 2; ch++) {
        uint64_t d = first_ref(&h->p, ch, 0);
        const xcmd want[] = { { d, DRAM_REF, 0, 0 }, { d + 9360, DRAM_REF, 0, 0 }, { d + 18720, DRAM_REF, 0, 0 } };
        expect_trace(h, ch, want, NCMD(want));
    }
    assert_int_equal(h->st.refs, 6);
    test_free(h);
}

/* tRFC blocks ACTs: REF @D = 4680; a read arriving at D + 1 gets its ACT at D + 708 = 5388, RD @5422,
 * data @5464. */
static void test_trfc_blocks_act(void **state)
{
    (void)state;
    dh *h = dh_new();
    uint64_t d = first_ref(&h->p, 0, 0);
    dh_run_to(h, d + 1);
    uint16_t t = dh_rd(h, 3, 2, 1, 0);
    dh_run_to(h, d + 1000);
    const xcmd want[] = { { d, DRAM_REF, 0, 0 }, { d + 708, DRAM_ACT, 3, 2 }, { d + 742, DRAM_RD, 3, 2 } };
    expect_trace(h, 0, want, NCMD(want));
    assert_int_equal(dh_done(h, t), d + 784);
    test_free(h);
}

/* An open bank at the deadline D = 4680 is precharged first, and the next deadline is the previous one +
 * tREFI (not REF + tREFI): read @D-360 (ACT @4320, RD @4354, row left open); at D PRE (tRAS allows it
 * from 4397); REF once the bank may activate again: max(PRE + tRP = D+34, tRC 4431) = 4714; the next REF
 * @D + 9360 = 14040. */
static void test_refresh_precharges_open_bank(void **state)
{
    (void)state;
    dh *h = dh_new();
    uint64_t d = first_ref(&h->p, 0, 0);
    dh_run_to(h, d - 360);
    dh_rd(h, 0, 0, 0, 0);
    dh_run_to(h, d + 9360 + 100);
    const xcmd want[] = { { d - 360, DRAM_ACT, 0, 0 }, { d - 326, DRAM_RD, 0, 0 }, { d, DRAM_PRE, 0, 0 },
                          { d + 34, DRAM_REF, 0, 0 },  { d + 9360, DRAM_REF, 0, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    test_free(h);
}

/* A due refresh takes no new RD: read @D-10 = 4670 (ACT @4670; its RD would be ready @4704 > D). At D the
 * RD must wait; PRE when tRAS allows (4670+77 = 4747), REF @4747+34 = 4781, then the read starts over:
 * ACT @4781+708 = 5489, RD @5523, data @5565. */
static void test_refresh_due_blocks_rd(void **state)
{
    (void)state;
    dh *h = dh_new();
    uint64_t d = first_ref(&h->p, 0, 0);
    dh_run_to(h, d - 10);
    uint16_t t = dh_rd(h, 0, 0, 0, 0);
    dh_run_to(h, d + 1000);
    const xcmd want[] = { { 4670, DRAM_ACT, 0, 0 }, { 4747, DRAM_PRE, 0, 0 }, { 4781, DRAM_REF, 0, 0 },
                          { 5489, DRAM_ACT, 0, 0 }, { 5523, DRAM_RD, 0, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    assert_int_equal(dh_done(h, t), 5565);
    test_free(h);
}

/* DDR5 same-bank refresh (dram.h 2a): deadlines every tREFI / banks = 9360 / 4 = 2340, staggered over
 * the 2 channels (ch 0 first at 2340 * 1 / 2 = 1170, ch 1 at 2340), each for the next bank index
 * 0, 1, 2, 3, 0, ... An idle ch 0 issues REFsb bank 0 @1170, bank 1 @3510, bank 2 @5850, bank 3 @8190,
 * bank 0 @10530. Only the refreshed bank index is held: at 1171 a read to bank 1 activates at once, a
 * read to bank 0 of another bank group waits for REFsb + tRFCsb = 1170 + 312 = 1482. */
static void test_same_bank_refresh(void **state)
{
    (void)state;
    cxl_dram_params p;
    hwfx_ddr5_4800(&p);
    p.refresh = CXL_REF_SAME_BANK;
    dh *h = dh_new_with(&p);
    dh_run_to(h, 11000);
    const xcmd idle[] = { { 1170, DRAM_REFSB, 0, 0 }, { 3510, DRAM_REFSB, 0, 1 }, { 5850, DRAM_REFSB, 0, 2 },
                          { 8190, DRAM_REFSB, 0, 3 }, { 10530, DRAM_REFSB, 0, 0 } };
    expect_trace(h, 0, idle, NCMD(idle));
    assert_int_equal(h->d.ch[1].trace[0].cycle, 2340);
    test_free(h);

    h = dh_new_with(&p);
    dh_run_to(h, 1171);
    uint16_t a = dh_rd(h, 5, 0, 0, 0);
    uint16_t b = dh_rd(h, 2, 1, 0, 0);
    dh_run_to(h, 1600);
    const xcmd busy[] = { { 1170, DRAM_REFSB, 0, 0 }, { 1171, DRAM_ACT, 2, 1 }, { 1205, DRAM_RD, 2, 1 },
                          { 1482, DRAM_ACT, 5, 0 }, { 1516, DRAM_RD, 5, 0 } };
    expect_trace(h, 0, busy, NCMD(busy));
    assert_int_equal(dh_done(h, b), 1247);
    assert_int_equal(dh_done(h, a), 1558);
    test_free(h);
}

/* ---- scheduling ---- */

/* Row 0 of (bg0, bank0) is opened by a read at 0 (ACT @0, RD @34). At 100 an older miss (row 1) and a
 * younger hit (row 0, col 1) arrive, in that order.
 * FR-FCFS: the younger hit goes first: RD @100 (done @142); then the miss: PRE @max(tRAS 77, RD 100 +
 *   tRTP 18) = 118, ACT @152, RD @186 (done @228).
 * FCFS: only the oldest entry is considered: PRE @100 (tRAS and tRTP long met), ACT @134, RD @168
 *   (done @210); then the former hit has become a miss: PRE @max(134+77, 168+18) = 211, ACT @245,
 *   RD @279 (done @321). */
static void test_frfcfs_hit_first(void **state)
{
    (void)state;
    dh *h = dh_new();
    dh_rd(h, 0, 0, 0, 0);
    dh_run_to(h, 100);
    uint16_t miss = dh_rd(h, 0, 0, 1, 0);
    uint16_t hit = dh_rd(h, 0, 0, 0, 1);
    dh_run_to(h, 400);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 },  { 34, DRAM_RD, 0, 0 },   { 100, DRAM_RD, 0, 0 },
                          { 118, DRAM_PRE, 0, 0 }, { 152, DRAM_ACT, 0, 0 }, { 186, DRAM_RD, 0, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    assert_int_equal(dh_done(h, hit), 142);
    assert_int_equal(dh_done(h, miss), 228);
    test_free(h);
}

static void test_fcfs_oldest_first(void **state)
{
    (void)state;
    cxl_dram_params p;
    hwfx_ddr5_4800(&p);
    p.scheduler = CXL_SCHED_FCFS;
    dh *h = dh_new_with(&p);
    dh_rd(h, 0, 0, 0, 0);
    dh_run_to(h, 100);
    uint16_t miss = dh_rd(h, 0, 0, 1, 0);
    uint16_t hit = dh_rd(h, 0, 0, 0, 1);
    dh_run_to(h, 400);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 },   { 34, DRAM_RD, 0, 0 },   { 100, DRAM_PRE, 0, 0 },
                          { 134, DRAM_ACT, 0, 0 }, { 168, DRAM_RD, 0, 0 },  { 211, DRAM_PRE, 0, 0 },
                          { 245, DRAM_ACT, 0, 0 }, { 279, DRAM_RD, 0, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    assert_int_equal(dh_done(h, miss), 210);
    assert_int_equal(dh_done(h, hit), 321);
    test_free(h);
}

/* Sequence of column commands (R / W) in the channel's trace. */
static uint32_t col_seq(const dh *h, uint32_t ch, char *out, uint32_t max)
{
    const cxl_dram_chan *c = &h->d.ch[ch];
    uint32_t n = 0;
    assert_true(c->trace_n <= CXL_DRAM_TRACE);
    for (uint64_t i = 0; i < c->trace_n && n + 1 < max; i++) {
        uint8_t k = c->trace[i].cmd;
        if (k == DRAM_RD || k == DRAM_WR)
            out[n++] = k == DRAM_RD ? 'R' : 'W';
    }
    out[n] = 0;
    return n;
}

/* 32 reads and `nw` writes queued at 0, all to distinct columns of row 0 across the 8 bank groups.
 * Write drain (dram.h 2b): with nw = 24 = wdrain_high the controller starts in write mode and drains
 * until the write queue holds wdrain_low = 8 while reads wait: 16 W; then 32 R (8 writes < 24 keep read
 * mode); then, reads gone, the last 8 W. With nw = 23 < wdrain_high: 32 R, then 23 W. */
static void check_drain(uint32_t nw, const char *want)
{
    dh *h = dh_new();
    for (uint32_t i = 0; i < 32; i++)
        dh_rd(h, i % 8, 0, 0, i / 8);
    for (uint32_t i = 0; i < nw; i++)
        dh_wr(h, i % 8, 0, 0, 8 + i / 8);
    dh_run_to(h, 3000);
    char seq[128];
    col_seq(h, 0, seq, sizeof seq);
    assert_string_equal(seq, want);
    assert_int_equal(h->ncomp, 32);
    test_free(h);
}

static void test_write_drain_high_low(void **state)
{
    (void)state;
    char want[128];
    snprintf(want, sizeof want, "%.16s%.32s%.8s", "WWWWWWWWWWWWWWWWWWWWWWWW",
             "RRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRR", "WWWWWWWWWWWWWWWWWWWWWWWW");
    check_drain(24, want);
}

static void test_write_below_high_waits_for_reads(void **state)
{
    (void)state;
    char want[128];
    snprintf(want, sizeof want, "%.32s%.23s", "RRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRR", "WWWWWWWWWWWWWWWWWWWWWWWW");
    check_drain(23, want);
}

/* Closed-page policy: every RD carries auto-precharge, so a second read to the same row must activate
 * again. Two reads at 0 to row 0 (cols 0, 1) of one bank: ACT @0, RD+AP @34 (the second read is also a
 * hit at 34, but only one column command per cycle); the implied PRE at max(tRAS 77, 34 + tRTP 18) =
 * 77, so ACT @77 + tRP = 111 (= tRC), RD+AP @145, data @187. Open page: RD @46 (tCCD_L), data @88. */
static void test_closed_page(void **state)
{
    (void)state;
    cxl_dram_params p;
    hwfx_ddr5_4800(&p);
    p.row_policy = CXL_ROW_CLOSED;
    dh *h = dh_new_with(&p);
    dh_rd(h, 0, 0, 0, 0);
    uint16_t b = dh_rd(h, 0, 0, 0, 1);
    dh_run_to(h, 300);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 }, { 34, DRAM_RD, 0, 0 }, { 111, DRAM_ACT, 0, 0 },
                          { 145, DRAM_RD, 0, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    assert_int_equal(h->d.ch[0].trace[1].auto_pre, 1);
    assert_int_equal(h->d.ch[0].trace[3].auto_pre, 1);
    assert_int_equal(dh_done(h, b), 187);
    assert_int_equal(h->d.ch[0].t.bank[0].open_row, -1);
    test_free(h);

    hwfx_ddr5_4800(&p);
    h = dh_new_with(&p);
    dh_rd(h, 0, 0, 0, 0);
    b = dh_rd(h, 0, 0, 0, 1);
    dh_run_to(h, 300);
    const xcmd open[] = { { 0, DRAM_ACT, 0, 0 }, { 34, DRAM_RD, 0, 0 }, { 46, DRAM_RD, 0, 0 } };
    expect_trace(h, 0, open, NCMD(open));
    assert_int_equal(h->d.ch[0].trace[1].auto_pre, 0);
    assert_int_equal(dh_done(h, b), 88);
    test_free(h);
}

/* dram.h: a RD issues only while the response queue has room, and each RD takes one entry. With room
 * for one and two reads at 0 to closed banks of different groups: ACT @0, ACT @8, RD @34 takes the only
 * entry; the second RD (ready @42) waits. Room handed back at 100: RD @100 (the controller wakes on
 * room, not only at its next timing event), data @142. */
static void test_read_needs_response_room(void **state)
{
    (void)state;
    dh *h = dh_new();
    h->track_room = 1;
    h->room = 1;
    dh_rd(h, 0, 0, 0, 0);
    uint16_t b = dh_rd(h, 1, 0, 0, 0);
    dh_run_to(h, 100);
    assert_int_equal(h->room, 0);
    assert_int_equal(h->d.ch[0].trace_n, 3);
    h->room = 1;
    dh_run_to(h, 200);
    const xcmd want[] = { { 0, DRAM_ACT, 0, 0 }, { 8, DRAM_ACT, 1, 0 }, { 34, DRAM_RD, 0, 0 },
                          { 100, DRAM_RD, 1, 0 } };
    expect_trace(h, 0, want, NCMD(want));
    assert_int_equal(dh_done(h, b), 142);
    assert_int_equal(h->room, 0);
    test_free(h);
}

/* ---- D7 ---- */

/* D7 (docs/references.md): sequential 64 B reads streaming through open rows reach at least 90 % of
 * the channel's peak, 64 B per tBL cycles. Each channel is fed its share of one sequential stream (line
 * i goes to channel i & 1) in address order whenever its read queue has room; measured per channel over
 * 10 tREFI after a 2000-cycle warm-up, refresh included (tRFC alone costs 708 / 9360 = 7.6 %, the
 * precharges before it and the ACTs after it a little more). Without refresh only row switches cost,
 * and they hide behind the other bank groups' reads: >= 99 %. */
static void measure_d7(int refresh, double frac[2])
{
    cxl_dram_params p;
    hwfx_ddr5_4800(&p);
    if (!refresh)
        p.refresh = CXL_REF_OFF;
    dh *h = dh_new_with(&p);
    const uint64_t warm = 2000, win = 10ull * 9360;
    uint64_t line[2] = { 0, 1 };
    uint32_t at_warm = 0;
    while (h->now < warm + win) {
        for (uint32_t ch = 0; ch < 2; ch++) {
            while (dram_space(&h->d, &p, ch, 0)) {
                uint64_t addr = line[ch] * CXL_LINE_BYTES;
                assert_int_equal(dram_channel_of(&p, addr), ch);
                cxl_msg m = hwfx_msg(CXL_M2S_REQ, addr, (uint16_t)line[ch]);
                dram_enqueue(&h->d, &p, &m, h->now);
                line[ch] += 2;
            }
        }
        if (h->now == warm)
            at_warm = h->ncomp;
        dh_tick(h);
    }
    uint64_t done[2] = { 0, 0 };
    uint8_t *seen = test_calloc(1, line[0] + line[1] + 2);
    assert_non_null(seen);
    for (uint32_t i = 0; i < h->ncomp; i++) {
        uint64_t l = h->comp[i].m.addr / CXL_LINE_BYTES;
        /* every completion is a line that was fed, and completes once */
        assert_true(l < line[l & 1]);
        assert_int_equal(seen[l], 0);
        seen[l] = 1;
        if (i >= at_warm)
            done[l & 1]++;
    }
    test_free(seen);
    for (uint32_t ch = 0; ch < 2; ch++) {
        frac[ch] = (double)done[ch] * p.tBL / (double)win;
        print_message("D7: channel %u: %llu lines in %llu cycles = %.2f %% of peak (refresh %s)\n", ch,
                      (unsigned long long)done[ch], (unsigned long long)win, 100.0 * frac[ch],
                      refresh ? "on" : "off");
    }
    test_free(h);
}

static void test_d7_sequential_bandwidth(void **state)
{
    (void)state;
    double f[2];
    measure_d7(1, f);
    assert_true(f[0] >= 0.90);
    assert_true(f[1] >= 0.90);
    measure_d7(0, f);
    assert_true(f[0] >= 0.99);
    assert_true(f[1] >= 0.99);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_fields),
        cmocka_unit_test(test_d6_unloaded_read_ddr5),
        cmocka_unit_test(test_d6_unloaded_read_ddr4),
        cmocka_unit_test(test_channels_independent),
        cmocka_unit_test(test_tras_conflict),
        cmocka_unit_test(test_trtp_then_trp),
        cmocka_unit_test(test_trc),
        cmocka_unit_test(test_twr),
        cmocka_unit_test(test_tccd_reads),
        cmocka_unit_test(test_tccd_writes),
        cmocka_unit_test(test_twtr_l),
        cmocka_unit_test(test_twtr_s),
        cmocka_unit_test(test_trtw_same_bg),
        cmocka_unit_test(test_trtw_other_bg),
        cmocka_unit_test(test_trrd_s),
        cmocka_unit_test(test_trrd_l),
        cmocka_unit_test(test_tfaw),
        cmocka_unit_test(test_timing_table),
        cmocka_unit_test(test_refresh_every_trefi),
        cmocka_unit_test(test_trfc_blocks_act),
        cmocka_unit_test(test_refresh_precharges_open_bank),
        cmocka_unit_test(test_refresh_due_blocks_rd),
        cmocka_unit_test(test_same_bank_refresh),
        cmocka_unit_test(test_frfcfs_hit_first),
        cmocka_unit_test(test_fcfs_oldest_first),
        cmocka_unit_test(test_write_drain_high_low),
        cmocka_unit_test(test_write_below_high_waits_for_reads),
        cmocka_unit_test(test_closed_page),
        cmocka_unit_test(test_read_needs_response_room),
        cmocka_unit_test(test_d7_sequential_bandwidth),
    };
    return cmocka_run_group_tests_name("hw_dram", tests, NULL, NULL);
}

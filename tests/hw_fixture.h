/* hw_fixture.h - hand-built cxl_params for the cycle-model tests (tests/hw/test_link.c, test_dram.c,
 * test_requester.c, test_model.c).
 *
 * Header-only (static inline) so that every test executable gets it without a link step of its own:
 * tests/CMakeLists.txt links each tests/<folder>/test_NAME.c with the hw/hls and host sources only.
 *
 * The figures are those of docs/references.md "CXL.mem model", written out here on purpose instead of
 * taken from host/config/devcfg.c: the tests check the model against the published numbers, not against the
 * code that converts them.
 *   DDR5-4800: JEDEC 4800AN speed bin as used by Ramulator 2, tCK = 0.416 ns (2400 MHz command clock).
 *   DDR4-3200: DRAMsim3 preset DDR4_8Gb_x8_3200 (tCK = 0.625 ns).
 *   Link: PCIe Gen5 x8 (32 GT/s, 128b/130b), 68 B flits.
 *   Controller: ASIC class (CXL-DMSim): 15 ns processing = 36 cycles, 48-entry queues.
 */
#ifndef HW_FIXTURE_H
#define HW_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include "cxl_params.h"
#include "cxl_types.h"

#define HWFX_CLK_KHZ 2400000u /* DDR5-4800 command clock: tCK = 1 / 2.4 GHz = 0.416 ns */

static inline uint32_t hwfx_log2(uint32_t v)
{
    uint32_t b = 0;
    while ((1u << b) < v)
        b++;
    return b;
}

/* bits[] from the field sizes (every size is a power of two). */
static inline void hwfx_dram_bits(cxl_dram_params *d)
{
    d->bits[CXL_MAP_CH] = hwfx_log2(d->channels);
    d->bits[CXL_MAP_RANK] = hwfx_log2(d->ranks);
    d->bits[CXL_MAP_BG] = hwfx_log2(d->bankgroups);
    d->bits[CXL_MAP_BANK] = hwfx_log2(d->banks);
    d->bits[CXL_MAP_ROW] = hwfx_log2(d->rows);
    d->bits[CXL_MAP_COL] = hwfx_log2(d->columns);
}

/* Address map, least significant first above the 64 B offset: ch, bg, col, bank, rank, row. */
static inline void hwfx_map_ch_bg_col_bank_rank_row(cxl_dram_params *d)
{
    d->map[0] = CXL_MAP_CH;
    d->map[1] = CXL_MAP_BG;
    d->map[2] = CXL_MAP_COL;
    d->map[3] = CXL_MAP_BANK;
    d->map[4] = CXL_MAP_RANK;
    d->map[5] = CXL_MAP_ROW;
}

/* DDR5-4800 (JEDEC 4800AN): one DIMM channel = two 32-bit subchannels, modelled as 2 channels; 1 rank;
 * 8 bank groups x 4 banks (16 Gb x8); 65536 rows; 64 columns of 64 B (4 KiB row per subchannel). */
static inline void hwfx_ddr5_4800(cxl_dram_params *d)
{
    memset(d, 0, sizeof *d);
    d->std = CXL_DDR5;
    d->channels = 2;
    d->ranks = 1;
    d->bankgroups = 8;
    d->banks = 4;
    d->rows = 65536;
    d->columns = 64;
    hwfx_map_ch_bg_col_bank_rank_row(d);
    hwfx_dram_bits(d);
    d->tRCD = 34;
    d->tCL = 34;
    d->tRP = 34;
    d->tRAS = 77;
    d->tRC = 111;
    d->tCWL = 32;
    d->tWR = 72;
    d->tRTP = 18;
    d->tBL = 8; /* BL16 on a 32-bit subchannel: 8 clocks for 64 B */
    d->tCCD_S = 8;
    d->tCCD_L = 12;
    d->tCCD_S_WR = 8;
    d->tCCD_L_WR = 48;
    d->tRRD_S = 8;
    d->tRRD_L = 12;
    d->tFAW = 48;
    d->tWTR_S = 6;
    d->tWTR_L = 24;
    d->tRTW = d->tCL + d->tBL + 2 - d->tCWL; /* 12: read-to-write bus turnaround (Ramulator 2's rule) */
    d->tREFI = 9360; /* 3.9 us / 0.41666 ns */
    d->tRFC = 708;   /* tRFC1 295 ns (16 Gb die) / 0.41666 ns */
    d->tRFCsb = 312; /* tRFCsb 130 ns (JESD79-5, 16 Gb die); used only with same-bank refresh */
    d->refresh = CXL_REF_ALL_BANK; /* all-bank refresh every tREFI (DRAMsim3 / Ramulator 2 practice) */
    d->read_queue = 32;
    d->write_queue = 32;
    d->wdrain_high = 24;
    d->wdrain_low = 8;
    d->row_policy = CXL_ROW_OPEN;
    d->scheduler = CXL_SCHED_FRFCFS;
}

/* DDR4-3200 (DRAMsim3 DDR4_8Gb_x8_3200): one 64-bit channel, 2 ranks (16 GiB of 8 Gb x8), 4 bank groups x 4
 * banks, 65536 rows, 128 columns of 64 B (8 KiB row). tRC = tRAS + tRP (DRAMsim3 derives it so); BL8 on 64
 * bits is 4 clocks; tCCD_*_WR = tCCD_* (DDR4 has no separate write figure). */
static inline void hwfx_ddr4_3200(cxl_dram_params *d)
{
    memset(d, 0, sizeof *d);
    d->std = CXL_DDR4;
    d->channels = 1;
    d->ranks = 2;
    d->bankgroups = 4;
    d->banks = 4;
    d->rows = 65536;
    d->columns = 128;
    hwfx_map_ch_bg_col_bank_rank_row(d);
    hwfx_dram_bits(d);
    d->tRCD = 22;
    d->tCL = 22;
    d->tRP = 22;
    d->tRAS = 52;
    d->tRC = 74;
    d->tCWL = 16;
    d->tWR = 24;
    d->tRTP = 12;
    d->tBL = 4;
    d->tCCD_S = 4;
    d->tCCD_L = 8;
    d->tCCD_S_WR = 4;
    d->tCCD_L_WR = 8;
    d->tRRD_S = 4;
    d->tRRD_L = 8;
    d->tFAW = 34;
    d->tWTR_S = 4;
    d->tWTR_L = 12;
    d->tRTW = d->tCL + d->tBL + 2 - d->tCWL; /* 12 */
    d->tREFI = 12480; /* 7.8 us */
    d->tRFC = 560;    /* 350 ns */
    d->refresh = CXL_REF_ALL_BANK;
    d->read_queue = 32;
    d->write_queue = 32;
    d->wdrain_high = 24;
    d->wdrain_low = 8;
    d->row_policy = CXL_ROW_OPEN;
    d->scheduler = CXL_SCHED_FRFCFS;
}

/* PCIe Gen5 x8, 68 B flits: a flit is 68*8 bits on 8 lanes at 32 GT/s with 128b/130b coding, i.e.
 * 68*8*130 / (128 * 8 * 32e9) s = 2.158 ns = 5.18 cycles at 2.4 GHz. In integers (cxl_params.h):
 * cost = 68*8*130*clk_khz, inc = 128*lanes*rate_mts*1000, ser = ceil(cost / inc) = 6. */
static inline void hwfx_link_gen5(cxl_link_params *l, uint32_t clk_khz, uint32_t lanes)
{
    memset(l, 0, sizeof *l);
    l->flit_bytes = 68;
    l->flit_cost = 68ull * 8 * 130 * clk_khz;
    l->flit_inc = 128ull * lanes * 32000ull * 1000ull;
    l->ser_cycles = (uint32_t)((l->flit_cost + l->flit_inc - 1) / l->flit_inc);
    l->phy_cycles = 0;
    l->credit_return_cycles = 10;
    l->m2s_req_credits = 48;
    l->m2s_data_credits = 48;
    l->s2m_data_credits = 64;
    l->s2m_rsp_credits = 64;
}

/* The whole CXL path: DDR5-4800 device behind a Gen5 x8 link, ASIC controller, 100-cycle host paths,
 * one requester with 256 tags. */
static inline void hwfx_cxl(cxl_params *p)
{
    memset(p, 0, sizeof *p);
    p->clk_khz = HWFX_CLK_KHZ;
    p->link_present = 1;
    p->hosts = 1;
    p->devices = 1;
    p->requesters = 1;
    p->tags = 256;
    p->host_req_cycles = 100;
    p->host_rsp_cycles = 100;
    hwfx_link_gen5(&p->link, p->clk_khz, 8);
    p->ctrl.req_latency_cycles = 36; /* 15 ns ASIC CXL.mem processing (CXL-DMSim) */
    p->ctrl.rsp_latency_cycles = 48;
    p->ctrl.ingress_depth = 48;      /* ASIC request / response queues: 48 entries (CXL-DMSim) */
    p->ctrl.response_depth = 48;
    p->ctrl.devload_optimal = 12;
    p->ctrl.devload_moderate = 24;
    p->ctrl.devload_severe = 36;
    hwfx_ddr5_4800(&p->dram);
}

/* The local-DDR reference path: same host and DRAM, no link and no CXL controller. As host/config/devcfg.c does
 * for this path, the controller's processing latencies are zero (its queues stay: they stand for the host
 * memory controller's). */
static inline void hwfx_local(cxl_params *p)
{
    hwfx_cxl(p);
    p->link_present = 0;
    memset(&p->link, 0, sizeof p->link);
    p->ctrl.req_latency_cycles = 0;
    p->ctrl.rsp_latency_cycles = 0;
}

/* Byte address of (ch, rank, bg, bank, row, col) under d's map: the inverse of dram_map. */
static inline uint64_t hwfx_addr(const cxl_dram_params *d, uint32_t ch, uint32_t rank, uint32_t bg, uint32_t bank,
                                 uint32_t row, uint32_t col)
{
    uint32_t v[CXL_MAP_NFIELDS];
    v[CXL_MAP_CH] = ch;
    v[CXL_MAP_RANK] = rank;
    v[CXL_MAP_BG] = bg;
    v[CXL_MAP_BANK] = bank;
    v[CXL_MAP_ROW] = row;
    v[CXL_MAP_COL] = col;
    uint64_t line = 0;
    uint32_t shift = 0;
    for (uint32_t i = 0; i < CXL_MAP_NFIELDS; i++) {
        uint32_t f = d->map[i];
        line |= (uint64_t)v[f] << shift;
        shift += d->bits[f];
    }
    return line * CXL_LINE_BYTES;
}

static inline cxl_msg hwfx_msg(uint32_t cls, uint64_t addr, uint16_t tag)
{
    cxl_msg m;
    memset(&m, 0, sizeof m);
    m.cls = (uint8_t)cls;
    m.addr = addr;
    m.tag = tag;
    return m;
}

#endif

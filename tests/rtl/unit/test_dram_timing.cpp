// test_dram_timing.cpp - hw/rtl/dram_timing.v against dram_ready() / dram_issue() (hw/hls/dram_timing.h),
// cycle for cycle.
//
// For every preset of rtl_dram_presets.h (one and four ranks), each cycle: a legal command (ready at
// `now` and consistent with the bank's row state), an arbitrary one (any command, bank, row and
// auto-precharge, ready or not), or none; `now` mostly steps by one and sometimes jumps (the RTL then
// gets one clock per cycle that passes). Before every clock edge, every bank of the channel is queried:
// each of the RTL's counters must be the C's earliest cycle less now (0 once it has passed: T <= now),
// the per-bank readiness vectors must be the C's dram_ready() <= now for ACT, PRE, RD, WR (and REF's
// rank limit), the open row and the tFAW window entries in use must match. Now and then a clock with
// ce = 0 (and the command on the inputs) comes first: nothing may change. A stretch of cycles without a
// command after which every C limit has passed is, half the time, one clock with `flush` (cxl_model.v's
// idle skip) instead of a clock per cycle: the counters must then read as the C's at the stretch's end.
#include <memory>

#include "Vdram_timing.h"
#include "rtl_dram_presets.h"
#include "rtl_unit.h"

extern "C" {
#include "dram_timing.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr int kCycles = 5000;

uint32_t log2u(uint32_t v)
{
    uint32_t b = 0;
    while ((1u << b) < v)
        b++;
    return b;
}

void set_params(Vdram_timing &t, const cxl_dram_params &p)
{
    t.ranks = p.ranks;
    t.bg_bits = log2u(p.bankgroups);
    t.bank_bits = log2u(p.banks);
    t.tRCD = p.tRCD;
    t.tCL = p.tCL;
    t.tRP = p.tRP;
    t.tRAS = p.tRAS;
    t.tRC = p.tRC;
    t.tCWL = p.tCWL;
    t.tWR = p.tWR;
    t.tRTP = p.tRTP;
    t.tBL = p.tBL;
    t.tCCD_S = p.tCCD_S;
    t.tCCD_L = p.tCCD_L;
    t.tCCD_S_WR = p.tCCD_S_WR;
    t.tCCD_L_WR = p.tCCD_L_WR;
    t.tRRD_S = p.tRRD_S;
    t.tRRD_L = p.tRRD_L;
    t.tFAW = p.tFAW;
    t.tWTR_S = p.tWTR_S;
    t.tWTR_L = p.tWTR_L;
    t.tRTW = p.tRTW;
    t.tRFC = p.tRFC;
    t.tRFCsb = p.tRFCsb;
}

// cycles until the C's earliest cycle t, as the RTL counts them (0 once t <= now)
uint64_t left(uint64_t t, uint64_t now) { return t > now ? t - now : 0; }

bool bit(const uint64_t v, uint32_t i) { return (v >> i) & 1u; }

// the latest of the C's limits (the tFAW windows in use included): every counter is 0 from then on
uint64_t latest(const cxl_dram_timing &t, const cxl_dram_params &p)
{
    uint64_t m = 0;
    auto up = [&m](uint64_t v) { m = v > m ? v : m; };
    for (uint32_t i = 0; i < CXL_MAX_BANKS; i++) {
        up(t.bank[i].next_act);
        up(t.bank[i].next_pre);
        up(t.bank[i].next_col);
        up(t.bg_act[i]);
        up(t.bg_rd[i]);
        up(t.bg_wr[i]);
    }
    for (uint32_t r = 0; r < CXL_MAX_RANKS; r++) {
        up(t.rank_act[r]);
        up(t.rank_rd[r]);
        up(t.rank_wr[r]);
        for (uint32_t i = 0; i < t.faw_n[r]; i++)
            up(t.faw[r][(t.faw_head[r] + i) % 4] + p.tFAW);
    }
    return m;
}

bool compare_all(Vdram_timing &top, const cxl_dram_timing &t, const cxl_dram_params &p, uint64_t now, Checker &ck)
{
    bool ok = true;
    for (uint32_t r = 0; r < p.ranks && ok; r++)
        for (uint32_t g = 0; g < p.bankgroups && ok; g++)
            for (uint32_t k = 0; k < p.banks && ok; k++) {
                top.q_rank = r;
                top.q_bg = g;
                top.q_bank = k;
                top.eval();
                uint32_t bi = dram_bank_idx(&p, r, g, k);
                const cxl_bank &b = t.bank[bi];
                uint32_t gi = r * p.bankgroups + g;
                ok = ck.same("ok_act", bit(top.ok_act, bi), dram_ready(&t, &p, DRAM_ACT, r, g, k) <= now) &&
                     ck.same("ok_pre", bit(top.ok_pre, bi), dram_ready(&t, &p, DRAM_PRE, r, g, k) <= now) &&
                     ck.same("ok_rd", bit(top.ok_rd, bi), dram_ready(&t, &p, DRAM_RD, r, g, k) <= now) &&
                     ck.same("ok_wr", bit(top.ok_wr, bi), dram_ready(&t, &p, DRAM_WR, r, g, k) <= now) &&
                     ck.same("rk_act(REF)", (top.rk_act >> r) & 1u, dram_ready(&t, &p, DRAM_REF, r, g, k) <= now) &&
                     ck.same("bk_act", bit(top.bk_act, bi), b.next_act <= now) &&
                     ck.same("open_b", bit(top.open_b, bi), b.open_row >= 0) &&
                     ck.same("open_row", top.q_open_row, static_cast<uint32_t>(b.open_row)) &&
                     ck.same("next_act", top.q_act, left(b.next_act, now)) &&
                     ck.same("next_pre", top.q_pre, left(b.next_pre, now)) &&
                     ck.same("next_col", top.q_col, left(b.next_col, now)) &&
                     ck.same("bg_act", top.q_bg_act, left(t.bg_act[gi], now)) &&
                     ck.same("bg_rd", top.q_bg_rd, left(t.bg_rd[gi], now)) &&
                     ck.same("bg_wr", top.q_bg_wr, left(t.bg_wr[gi], now)) &&
                     ck.same("rank_act", top.q_rank_act, left(t.rank_act[r], now)) &&
                     ck.same("rank_rd", top.q_rank_rd, left(t.rank_rd[r], now)) &&
                     ck.same("rank_wr", top.q_rank_wr, left(t.rank_wr[r], now)) &&
                     ck.same("faw_n", top.q_faw_n, t.faw_n[r]) && ck.same("faw_head", top.q_faw_head, t.faw_head[r]);
                // the window entries in use: each ACT's tFAW window, in cycles left
                for (uint32_t i = 0; i < t.faw_n[r] && ok; i++) {
                    uint32_t w = (t.faw_head[r] + i) % 4;
                    ok = ck.same("faw[k]", (top.q_faw >> (16 * w)) & 0xffffu, left(t.faw[r][w] + p.tFAW, now));
                }
                if (!ok)
                    std::fprintf(stderr, "test_dram_timing: at rank %u bg %u bank %u\n", r, g, k);
            }
    return ok;
}

struct Cmd {
    uint32_t cmd, rank, bg, bank, row;
    int auto_pre;
};

Cmd random_cmd(Rng &r, const cxl_dram_params &p)
{
    Cmd c;
    c.cmd = r.below(6);
    c.rank = r.below(p.ranks);
    c.bg = r.below(p.bankgroups);
    c.bank = r.below(p.banks);
    c.row = r.below(p.rows);
    c.auto_pre = r.chance(30);
    return c;
}

bool rank_precharged(const cxl_dram_timing &t, const cxl_dram_params &p, uint32_t rank)
{
    uint32_t nb = p.bankgroups * p.banks;
    for (uint32_t i = 0; i < nb; i++)
        if (t.bank[rank * nb + i].open_row >= 0)
            return false;
    return true;
}

// A command the controller could issue now: timing met and consistent with the row state.
bool legal_cmd(Rng &r, const cxl_dram_timing &t, const cxl_dram_params &p, uint64_t now, Cmd &c)
{
    for (int tries = 0; tries < 16; tries++) {
        c = random_cmd(r, p);
        if (dram_ready(&t, &p, c.cmd, c.rank, c.bg, c.bank) > now)
            continue;
        int open = t.bank[dram_bank_idx(&p, c.rank, c.bg, c.bank)].open_row;
        switch (c.cmd) {
        case DRAM_ACT: if (open < 0) return true; break;
        case DRAM_PRE:
        case DRAM_RD:
        case DRAM_WR: if (open >= 0) return true; break;
        case DRAM_REF: if (rank_precharged(t, p, c.rank)) return true; break;
        default: if (p.std == CXL_DDR5 && open < 0) return true; break;
        }
    }
    return false;
}

bool run(VerilatedContext &ctx, const cxl_dram_params &p, uint64_t seed, Checker &ck, uint64_t &flushes)
{
    std::unique_ptr<Vdram_timing> top(new Vdram_timing(&ctx, "dram_timing"));
    Rng rng(seed);
    ck.seed = seed;
    cxl_dram_timing t;
    dram_timing_init(&t, &p);
    set_params(*top, p);
    uint64_t now = (seed & 1) ? 0 : (1ull << 40);
    top->clk = 0;
    top->rst_n = 0;
    top->ce = 0; // reset acts regardless of ce
    top->iss_valid = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    top->clk = 0;
    top->rst_n = 1;
    top->ce = 1;
    top->eval();
    bool ok = true;
    for (int cyc = 0; cyc < kCycles && ok; cyc++) {
        ck.cycle = static_cast<uint64_t>(cyc);
        ck.now = now;
        ok = compare_all(*top, t, p, now, ck);
        if (!ok)
            break;
        Cmd c{};
        bool issue;
        uint32_t pick = rng.below(100);
        if (pick < 55)
            issue = legal_cmd(rng, t, p, now, c);
        else if (pick < 75) {
            c = random_cmd(rng, p);
            issue = true;
        } else
            issue = false;
        top->iss_valid = issue;
        top->iss_cmd = c.cmd;
        top->iss_rank = c.rank;
        top->iss_bank = c.bank;
        // the packed bank index (dram_timing.v iss_b): rank, bank group, bank
        top->iss_b = ((c.rank << (log2u(p.bankgroups) + log2u(p.banks))) | (c.bg << log2u(p.banks)) | c.bank) & 0x3f;
        top->iss_row = c.row;
        top->iss_auto_pre = c.auto_pre ? 1 : 0;
        // now and then a clock with ce = 0 first: the state must hold (compared below, C not called)
        if (rng.chance(3)) {
            top->ce = 0;
            top->eval();
            top->clk = 1;
            top->eval();
            top->clk = 0;
            top->ce = 1;
            top->eval();
            ok = compare_all(*top, t, p, now, ck);
            if (!ok)
                break;
        }
        top->eval();
        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
        if (issue)
            dram_issue(&t, &p, c.cmd, c.rank, c.bg, c.bank, c.row, c.auto_pre, now);
        // cycles that pass without a command: one clock each, or one flush when every limit has passed
        // by their end
        uint64_t step = rng.chance(5) ? 1 + rng.below(300) : 1;
        top->iss_valid = 0;
        if (step > 1 && latest(t, p) <= now + step && rng.chance(50)) {
            top->flush = 1;
            top->eval();
            top->clk = 1;
            top->eval();
            top->clk = 0;
            top->flush = 0;
            top->eval();
            flushes++;
        } else {
            for (uint64_t k = 1; k < step; k++) {
                top->eval();
                top->clk = 1;
                top->eval();
                top->clk = 0;
                top->eval();
            }
        }
        now += step;
    }
    if (ok) {
        ck.now = now;
        ok = compare_all(*top, t, p, now, ck);
    }
    top->final();
    return ok;
}

} // namespace

int main(int argc, char **argv)
{
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    Checker ck{"test_dram_timing"};
    uint64_t seed = 100, flushes = 0;
    int runs = 0;
    for (const auto &pr : rtl_unit::kDramPresets)
        for (int k = 0; k < 2; k++, seed++, runs++)
            if (!run(ctx, pr.p, seed, ck, flushes)) {
                std::fprintf(stderr, "test_dram_timing: preset %s\n", pr.name);
                return 1;
            }
    std::printf("test_dram_timing: %d runs x %d commands equal (every bank, every cycle; %" PRIu64 " flushes)\n",
                runs, kCycles, flushes);
    if (!flushes) {
        std::fprintf(stderr, "test_dram_timing: no stretch was flushed: the flush is untested\n");
        return 1;
    }
    return 0;
}

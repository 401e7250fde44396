// test_dram.cpp - hw/rtl/dram.v against dram_enqueue() / dram_tick() (hw/hls/dram.h), cycle for cycle.
//
// For the presets of rtl_dram_presets.h, both schedulers, both page policies and both refresh modes
// (and refresh off once): random request streams (reads and writes; sequential streams with row
// locality, addresses confined to a few rows for conflicts, random addresses; bursts, steady phases and
// lulls) enqueued at most one per cycle where the C says there is space, a response room that a
// devctrl-like reservation counter fills and random sends drain (sometimes held at 0). Every cycle:
// every issued command (channel, kind, rank, bg, bank, row, auto-precharge: the C's command trace),
// every completion in out[] order, the room left; after the edge: every statistic, queue counts and the
// occupancy sum. One run per preset is long enough for many refresh intervals. Now and then a clock
// with ce = 0 comes first: nothing may move. The schedule clocks (s0..s2) come before each ce edge that
// needs them, and now and then before one that does not. The sanitized build runs shorter (see main).
#include <memory>
#include <vector>

#include "Vdram.h"
#include "rtl_dram_presets.h"
#include "rtl_unit.h"

extern "C" {
#include "dram.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

template <size_t N> uint64_t bits_of(const VlWide<N> &w, int lsb, int width)
{
    uint64_t v = 0;
    for (int b = 0; b < width; b++)
        v |= static_cast<uint64_t>((w[(lsb + b) / 32] >> ((lsb + b) % 32)) & 1u) << b;
    return v;
}

void set_params(Vdram &t, const cxl_dram_params &p)
{
    t.channels = p.channels;
    t.ranks = p.ranks;
    t.map_order = 0;
    t.map_bits = 0;
    for (uint32_t i = 0; i < CXL_MAP_NFIELDS; i++) {
        t.map_order |= static_cast<uint32_t>(p.map[i]) << (3 * i);
        t.map_bits |= static_cast<uint64_t>(p.bits[i]) << (6 * i);
    }
    t.bank_hash = p.bank_hash;
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
    t.tREFI = p.tREFI;
    t.tRFC = p.tRFC;
    t.tRFCsb = p.tRFCsb;
    t.refresh = p.refresh;
    t.wdrain_high = p.wdrain_high;
    t.wdrain_low = p.wdrain_low;
    t.row_closed = p.row_policy == CXL_ROW_CLOSED;
    t.fcfs = p.scheduler == CXL_SCHED_FCFS;
}

struct Traffic {
    Rng &r;
    const cxl_dram_params &p;
    uint64_t stream[4];
    uint64_t rows[4];
    uint32_t phase_left = 0, enq_pct = 50, wr_pct = 30;
    uint64_t cap_mask;

    Traffic(Rng &rng, const cxl_dram_params &pp) : r(rng), p(pp)
    {
        uint32_t total = 6;
        for (uint32_t f = 0; f < CXL_MAP_NFIELDS; f++)
            total += p.bits[f];
        cap_mask = total >= 64 ? ~0ull : (1ull << total) - 1;
        for (auto &s : stream)
            s = r.next() & cap_mask & ~63ull;
        for (auto &x : rows)
            x = r.next() & cap_mask & ~63ull;
    }
    // a new phase now and then: burst, steady, lull; read-heavy, write-heavy or mixed
    void step()
    {
        if (phase_left-- > 0)
            return;
        phase_left = 50 + r.below(1500);
        static const uint32_t enq[] = {95, 60, 30, 3, 0};
        enq_pct = enq[r.below(5)];
        static const uint32_t wr[] = {0, 0, 10, 30, 50, 90};
        wr_pct = wr[r.below(6)];
    }
    cxl_msg msg()
    {
        cxl_msg m = rtl_unit::random_msg(r);
        m.cls = r.chance(wr_pct) ? CXL_M2S_RWD : CXL_M2S_REQ;
        uint32_t k = r.below(100);
        if (k < 45) {
            uint32_t s = r.below(4);
            m.addr = stream[s] | (r.next() & 63);
            stream[s] = (stream[s] + 64) & cap_mask;
            if (r.chance(1))
                stream[s] = r.next() & cap_mask & ~63ull;
        } else if (k < 75) {
            // a few rows: low bits vary (column, bank), high bits (row) from a small set
            m.addr = (rows[r.below(4)] & ~0xfffffull) | (r.next() & 0xfffffull);
        } else if (k < 95) {
            m.addr = r.next() & cap_mask;
        } else {
            m.addr = r.next();
        }
        return m;
    }
};

struct Run {
    const char *preset;
    cxl_dram_params p;
    int cycles;
};

// The schedule clocks before the cycle's ce edge (dram.v: s0, s1, s2 with ce low): when the DRAM has
// something to schedule, and now and then when it has not (the results must be the same).
void schedule(Vdram &t, Rng &rng)
{
    t.eval();
    if (!t.sched_need && !rng.chance(10))
        return;
    t.ce = 0;
    // s0 only with an enqueue (and now and then without one)
    for (int k = (t.enq_valid || rng.chance(10)) ? 0 : 1; k < 3; k++) {
        t.s0 = k == 0;
        t.s1 = k == 1;
        t.s2 = k == 2;
        t.eval();
        t.clk = 1;
        t.eval();
        t.clk = 0;
        t.eval();
    }
    t.s0 = t.s1 = t.s2 = 0;
    t.ce = 1;
}

bool run(VerilatedContext &ctx, const Run &rn, uint64_t seed, Checker &ck)
{
    const cxl_dram_params &p = rn.p;
    std::unique_ptr<Vdram> top(new Vdram(&ctx, "dram"));
    Rng rng(seed);
    ck.seed = seed;
    std::unique_ptr<cxl_dram> d(new cxl_dram);
    dram_init(d.get(), &p);
    cxl_dev_stats st{};
    uint64_t occ_sum = 0;
    set_params(*top, p);
    top->clk = 0;
    top->rst_n = 0;
    top->ce = 0; // reset acts regardless of ce
    top->enq_valid = 0;
    top->now = 0;
    top->rsp_room = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    top->clk = 0;
    top->rst_n = 1;
    top->ce = 1;
    top->eval();
    Traffic tr(rng, p);
    static const uint32_t depths[] = {1, 4, 12, 32, 32, 32};
    uint32_t depth = depths[rng.below(6)];
    uint32_t reserved = 0, owed = 0; // entries held by issued reads / by completed, unsent responses
    bool ok = true;
    uint64_t cmds = 0, comps = 0;
    for (int cyc = 0; cyc < rn.cycles && ok; cyc++) {
        uint64_t now = static_cast<uint64_t>(cyc);
        ck.cycle = now;
        ck.now = now;
        tr.step();
        // the link sends responses: entries come back
        if (owed && rng.chance(depth < 8 ? 30 : 80)) {
            uint32_t n = 1 + rng.below(owed);
            owed -= n;
            reserved -= n;
        }
        if (cyc % 4000 == 3000)
            depth = depths[rng.below(6)];
        bool enq = false;
        cxl_msg m{};
        if (rng.chance(tr.enq_pct)) {
            m = tr.msg();
            uint32_t ch = dram_channel_of(&p, m.addr);
            if (dram_space(d.get(), &p, ch, m.cls == CXL_M2S_RWD) > 0) {
                enq = true;
                dram_enqueue(d.get(), &p, &m, now);
            }
        }
        uint32_t room = depth > reserved ? depth - reserved : 0;
        uint32_t room0 = room;
        uint64_t tn[CXL_MAX_CH];
        for (uint32_t c = 0; c < CXL_MAX_CH; c++)
            tn[c] = d->ch[c].trace_n;
        cxl_msg out[CXL_MAX_CH];
        uint32_t n = dram_tick(d.get(), &p, now, out, &st, &room);

        top->now = now;
        top->enq_valid = enq;
        rtl_unit::pack_msg(top->enq_msg, m);
        top->rsp_room = room0;
        // now and then a clock with ce = 0 first: nothing may move (this cycle's outputs still compare)
        if (rng.chance(2)) {
            top->ce = 0;
            top->eval();
            top->clk = 1;
            top->eval();
            top->clk = 0;
            top->ce = 1;
        }
        schedule(*top, rng);
        top->eval();
        ok = ck.same("done_n", top->done_n, n) && ck.same("rsp_room_out", top->rsp_room_out, room);
        for (uint32_t i = 0; i < n && ok; i++)
            for (int f = 0; f < 7 && ok; f++)
                ok = ck.same(rtl_unit::kMsgFields[f].name,
                             bits_of(top->done_msg, static_cast<int>(i) * 120 + rtl_unit::kMsgFields[f].lsb,
                                     rtl_unit::kMsgFields[f].width),
                             rtl_unit::msg_field(out[i], f));
        for (uint32_t c = 0; c < CXL_MAX_CH && ok; c++) {
            uint64_t issued = d->ch[c].trace_n - tn[c];
            ok = ck.same("cmd_valid", (top->cmd_valid >> c) & 1u, issued);
            if (ok && issued) {
                const cxl_dram_trace_rec &t = d->ch[c].trace[tn[c] % CXL_DRAM_TRACE];
                ok = ck.same("cmd_kind", (top->cmd_kind >> (3 * c)) & 7u, t.cmd) &&
                     ck.same("cmd_rank", (top->cmd_rank >> (2 * c)) & 3u, t.rank) &&
                     ck.same("cmd_bg", (top->cmd_bg >> (6 * c)) & 63u, t.bg) &&
                     ck.same("cmd_bank", (top->cmd_bank >> (6 * c)) & 63u, t.bank) &&
                     ck.same("cmd_row", top->cmd_row[c], t.row) &&
                     ck.same("cmd_auto_pre", (top->cmd_auto_pre >> c) & 1u, t.auto_pre) &&
                     ck.same("trace cycle", now, t.cycle);
                cmds++;
            }
            if (!ok)
                std::fprintf(stderr, "test_dram: channel %u\n", c);
        }
        if (!ok)
            break;
        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
        reserved += room0 - room;
        owed += n;
        comps += n;
        occ_sum += dram_occupancy(d.get(), &p);
        ok = ck.same("reads", top->st_reads, st.reads) && ck.same("writes", top->st_writes, st.writes) &&
             ck.same("acts", top->st_acts, st.acts) && ck.same("pres", top->st_pres, st.pres) &&
             ck.same("refs", top->st_refs, st.refs) &&
             ck.same("row_conflicts", top->st_row_conflicts, st.row_conflicts) &&
             ck.same("occ_sum", top->occ_sum, occ_sum);
        for (uint32_t c = 0; c < p.channels && ok; c++)
            ok = ck.same("nr", (top->nr >> (7 * c)) & 127u, d->ch[c].nr) &&
                 ck.same("nw", (top->nw >> (7 * c)) & 127u, d->ch[c].nw);
    }
    top->final();
    if (ok)
        std::printf("test_dram: %-9s sched %s page %s refresh %u: %d cycles, %" PRIu64 " commands (%" PRIu64
                    " refs, %" PRIu64 " conflicts), %" PRIu64 " completions equal\n",
                    rn.preset, p.scheduler == CXL_SCHED_FCFS ? "fcfs  " : "frfcfs", p.row_policy ? "closed" : "open  ",
                    p.refresh, rn.cycles, cmds, st.refs, st.row_conflicts, comps);
    return ok;
}

} // namespace

int main(int argc, char **argv)
{
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    Checker ck{"test_dram"};
    // The sanitized build (CXLSIM_SANITIZED, about ten times slower) runs the same combinations, shorter,
    // with tREFI / 4 so every rank still refreshes (all-bank and same-bank) within a run; the full set
    // (about 1M cycles) is the normal build's.
#ifdef CXLSIM_SANITIZED
    const int combo_cycles = 2000, long_cycles = 6000, off_cycles = 1000, refi_div = 4;
    const bool long_swapped = false;
#else
    const int combo_cycles = 15000, long_cycles = 60000, off_cycles = 6000, refi_div = 1;
    const bool long_swapped = true;
#endif
    std::vector<Run> runs;
    for (const auto &pr : rtl_unit::kDramPresets) {
        cxl_dram_params base = pr.p;
        base.tREFI /= refi_div;
        for (uint32_t sched = 0; sched < 2; sched++)
            for (uint32_t page = 0; page < 2; page++)
                for (uint32_t ref = CXL_REF_ALL_BANK; ref <= CXL_REF_SAME_BANK; ref++) {
                    Run r{pr.name, base, combo_cycles};
                    r.p.scheduler = sched;
                    r.p.row_policy = page;
                    r.p.refresh = ref;
                    if (ref == CXL_REF_SAME_BANK && r.p.tRFCsb == 0)
                        r.p.tRFCsb = r.p.tRFC / 2; // DDR4 presets have none; exercise the path anyway
                    runs.push_back(r);
                }
        // long: many refresh intervals with the preset's own policies, and once with refresh off
        Run l{pr.name, base, long_cycles};
        runs.push_back(l);
        if (long_swapped) {
            l.p.refresh = l.p.refresh == CXL_REF_SAME_BANK ? CXL_REF_ALL_BANK : CXL_REF_SAME_BANK;
            if (l.p.tRFCsb == 0)
                l.p.tRFCsb = l.p.tRFC / 2;
            runs.push_back(l);
        }
        Run off{pr.name, base, off_cycles};
        off.p.refresh = CXL_REF_OFF;
        runs.push_back(off);
    }
    uint64_t seed = 500;
    for (const auto &r : runs) {
        if (!run(ctx, r, seed, ck)) {
            std::fprintf(stderr, "test_dram: preset %s sched %u page %u refresh %u\n", r.preset, r.p.scheduler,
                         r.p.row_policy, r.p.refresh);
            return 1;
        }
        seed++;
    }
    std::printf("test_dram: %zu runs equal (every command, completion and statistic, every cycle)\n", runs.size());
    return 0;
}

// test_link.cpp - hw/rtl/link.v against cxl_link_dir (hw/hls/link.c), cycle for cycle.
//
// Both directions; Gen5 x8 (663/128) and x16 (663/256) at DDR5-4800, a 4 GT/s x8 link (663/16), a flit
// shorter than a cycle (5/7); PHY latency 0 and nonzero; credit pools small (1-2), normal and random;
// credit return delays 0, 1, 24, random; 1 to 4 sources of one class or mixed; both orders of the
// cycle's credit returns against link_tx. Source pipes are C cxl_pipes (capacity 64, ready cycles now to
// now + 3, bursty phases); the RTL sees the first K entries of each, as link.v's contract says. The
// receiver returns credits for messages it has received (outstanding = taken - returned).
// Each cycle runs the link's build clocks (bld, while need) and then the cycle's clock (ce), and compares: credits as link_tx sees them and pending returns, link_rx (count, every field of
// every message), link_tx (flit, all-data flit, slots used, messages and stalls per class, pops per
// source), and after the edge acc, rr, flights in flight, owed messages and chunks.
#include <cstdlib>
#include <memory>

#include "Vlink.h"
#include "rtl_unit.h"

extern "C" {
#include "link.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr int kCycles = 6000;
constexpr int kNsrc = 4, kK = 5, kW = 120;
constexpr uint32_t kCap = 64;

struct Rate {
    uint64_t cost, inc;
    uint32_t ser;
};
constexpr Rate kRates[] = {{663, 128, 6}, {663, 256, 3}, {663, 16, 42}, {5, 7, 1}};
constexpr uint32_t kPhy[] = {0, 0, 10, 25};
constexpr uint32_t kDelays[] = {0, 1, 24, 24, 100};

void put_msg_at(uint32_t *words, int lsb, const cxl_msg &m)
{
    for (int i = 0; i < 7; i++) {
        const rtl_unit::MsgField &f = rtl_unit::kMsgFields[i];
        uint64_t v = rtl_unit::msg_field(m, i);
        for (int b = 0; b < f.width; b++) {
            int at = lsb + f.lsb + b;
            uint32_t bit = static_cast<uint32_t>((v >> b) & 1u);
            words[at / 32] = (words[at / 32] & ~(1u << (at % 32))) | (bit << (at % 32));
        }
    }
}

uint64_t bits_at(const uint32_t *words, int lsb, int width)
{
    uint64_t v = 0;
    for (int b = 0; b < width; b++)
        v |= static_cast<uint64_t>((words[(lsb + b) / 32] >> ((lsb + b) % 32)) & 1u) << b;
    return v;
}

bool run_seed(VerilatedContext &ctx, uint64_t seed)
{
    std::unique_ptr<Vlink> top(new Vlink(&ctx, "link"));
    Rng rng(seed);
    Checker ck{"test_link"};
    ck.seed = seed;

    const uint32_t dir = seed % 2 ? CXL_DIR_S2M : CXL_DIR_M2S;
    const Rate rate = kRates[(seed / 2) % 4];
    cxl_link_params lp{};
    lp.flit_bytes = 68;
    lp.flit_cost = rate.cost;
    lp.flit_inc = rate.inc;
    lp.ser_cycles = rate.ser;
    lp.phy_cycles = kPhy[rng.below(4)];
    lp.credit_return_cycles = kDelays[rng.below(5)];
    uint32_t pools[CXL_NCLASS];
    uint32_t pool_kind = rng.below(3);
    for (int k = 0; k < CXL_NCLASS; k++)
        pools[k] = pool_kind == 0 ? 1 + rng.below(2) : pool_kind == 1 ? 32 : 1 + rng.below(80);
    const uint32_t nsrc = 1 + rng.below(kNsrc);
    // each source: one class of the direction, or both (mixed)
    uint32_t src_mode[kNsrc];
    for (uint32_t s = 0; s < kNsrc; s++)
        src_mode[s] = rng.below(3);
    const uint32_t cls0 = dir == CXL_DIR_M2S ? CXL_M2S_REQ : CXL_S2M_DRS;

    cxl_link_dir l;
    link_init(&l, dir, &lp, pools);
    cxl_pipe src[kNsrc];
    cxl_pipe *srcp[kNsrc];
    for (uint32_t s = 0; s < kNsrc; s++) {
        pipe_init(&src[s], kCap);
        srcp[s] = &src[s];
    }
    cxl_link_stats st{};
    uint32_t outstanding[CXL_NCLASS] = {0};
    uint64_t bld_total = 0;
    uint32_t bld_max = 0;

    top->clk = 0;
    top->bclk = 0;
    top->ce = 1;
    top->rst_n = 0;
    top->dir = dir;
    top->flit_cost = lp.flit_cost;
    top->flit_inc = lp.flit_inc;
    top->ser_cycles = lp.ser_cycles;
    top->phy_cycles = lp.phy_cycles;
    for (int k = 0; k < CXL_NCLASS; k++)
        top->pool[k] = pools[k];
    top->credit_return_cycles = lp.credit_return_cycles;
    top->nsrc = nsrc;
    top->now = 0;
    top->eval();
    top->clk = 1;
    top->bclk = 1;
    top->eval();
    top->clk = 0;
    top->bclk = 0;
    top->rst_n = 1;

    uint64_t now = seed * 1000;
    uint32_t push_pct = 50, ret_pct = 30;
    bool ok = true;
    for (uint64_t cyc = 0; cyc < kCycles && ok; cyc++, now++) {
        ck.cycle = cyc;
        ck.now = now;
        if (cyc % 300 == 0) {
            push_pct = rng.chance(30) ? 100 : rng.below(60);
            ret_pct = rng.chance(20) ? 0 : rng.below(101);
        }
        // pushes (the producer only pushes where the pipe has room)
        for (uint32_t s = 0; s < nsrc; s++)
            if (pipe_space(&src[s]) && rng.chance(push_pct)) {
                cxl_msg m = rtl_unit::random_msg(rng);
                m.cls = static_cast<uint8_t>(cls0 + (src_mode[s] == 2 ? rng.below(2) : src_mode[s]));
                pipe_push(&src[s], &m, now + (rng.chance(60) ? 0 : rng.below(4)));
            }
        // credit returns for messages received
        bool ret_first = rng.chance(50);
        uint32_t ret[CXL_NCLASS], ret_packed = 0;
        for (int k = 0; k < CXL_NCLASS; k++) {
            uint32_t most = outstanding[k] < 4 ? outstanding[k] : 4;
            ret[k] = rng.chance(ret_pct) ? rng.below(most + 1) : 0;
            outstanding[k] -= ret[k];
            ret_packed |= ret[k] << (8 * k);
        }
        // the source windows
        uint32_t words[kNsrc * kK * kW / 32] = {0};
        uint32_t rdy = 0;
        for (uint32_t s = 0; s < kNsrc; s++)
            for (uint32_t j = 0; j < kK; j++) {
                const cxl_pipe &p = src[s];
                if (j >= p.count)
                    continue;
                uint32_t i = (p.head + j) % CXL_MAX_FIFO;
                if (p.ready[i] <= now)
                    rdy |= 1u << (s * kK + j);
                put_msg_at(words, static_cast<int>((s * kK + j) * kW), p.msg[i]);
            }
        top->now = now;
        top->cr_ret_first = ret_first;
        top->cr_ret_n = ret_packed;
        top->src_rdy = rdy;
        for (int i = 0; i < kNsrc * kK * kW / 32; i++)
            top->src_msg[i] = words[i];
        top->ce = 0;
        top->eval();
        // the flit build's clocks (link.v: a load and at most 12 steps), then the cycle's clock
        uint32_t nb = 0;
        while (top->need && ok) {
            top->bld = 1;
            top->clk = 1;
            top->bclk = 1;
            top->eval();
            top->clk = 0;
            top->bclk = 0;
            top->bld = 0;
            top->eval();
            ok = ck.same("build clocks <= 13", ++nb <= 13, 1);
        }
        bld_total += nb;
        if (nb > bld_max)
            bld_max = nb;
        top->ce = 1;
        top->eval();

        // the C model in model_cycle's order
        uint32_t pending0[CXL_NCLASS];
        for (int k = 0; k < CXL_NCLASS; k++)
            pending0[k] = l.cr.count[k]; // credit.v: pending at the start of the cycle
        credit_tick(&l.cr, now);
        cxl_msg out[CXL_FLIT_MAXDONE];
        uint32_t n = link_rx(&l, now, out);
        if (ret_first)
            for (uint32_t k = 0; k < CXL_NCLASS; k++)
                for (uint32_t i = 0; i < ret[k]; i++)
                    credit_return(&l.cr, k, now);
        char name[64];
        for (int k = 0; k < CXL_NCLASS && ok; k++) {
            std::snprintf(name, sizeof name, "cr_avail[%d]", k);
            ok = ck.same(name, top->cr_avail[k], l.cr.avail[k]);
            std::snprintf(name, sizeof name, "cr_pending[%d]", k);
            ok = ok && ck.same(name, top->cr_pending[k], pending0[k]);
        }
        ok = ok && ck.same("rx_n", top->rx_n, n);
        for (uint32_t i = 0; i < n && ok; i++) {
            outstanding[out[i].cls]++;
            for (int f = 0; f < 7 && ok; f++) {
                const rtl_unit::MsgField &mf = rtl_unit::kMsgFields[f];
                std::snprintf(name, sizeof name, "rx_msg[%u].%s", i, mf.name);
                ok = ck.same(name, bits_at(top->rx_msg.data(), static_cast<int>(i * kW) + mf.lsb, mf.width),
                             rtl_unit::msg_field(out[i], f));
            }
        }
        uint32_t cnt0[kNsrc];
        for (uint32_t s = 0; s < kNsrc; s++)
            cnt0[s] = pipe_count(&src[s]);
        cxl_link_stats st0 = st;
        int sent = link_tx(&l, now, srcp, nsrc, &st);
        ok = ok && ck.same("tx_flit", top->tx_flit, static_cast<uint64_t>(sent));
        ok = ok && ck.same("tx_data_flit", top->tx_data_flit, st.data_flits[dir] - st0.data_flits[dir]);
        ok = ok && ck.same("tx_used", top->tx_used, st.slots_used[dir] - st0.slots_used[dir]);
        for (int k = 0; k < CXL_NCLASS && ok; k++) {
            std::snprintf(name, sizeof name, "tx_msgs[%d]", k);
            ok = ck.same(name, (top->tx_msgs >> (8 * k)) & 0xff, st.msgs[k] - st0.msgs[k]);
            std::snprintf(name, sizeof name, "tx_stall[%d]", k);
            ok = ok && ck.same(name, (top->tx_stall >> k) & 1, st.credit_stall[k] - st0.credit_stall[k]);
        }
        for (uint32_t s = 0; s < kNsrc && ok; s++) {
            std::snprintf(name, sizeof name, "src_pop_n[%u]", s);
            ok = ck.same(name, (top->src_pop_n >> (3 * s)) & 7, cnt0[s] - pipe_count(&src[s]));
        }
        if (!ret_first)
            for (uint32_t k = 0; k < CXL_NCLASS; k++)
                for (uint32_t i = 0; i < ret[k]; i++)
                    credit_return(&l.cr, k, now);

        top->clk = 1;
        top->bclk = 1;
        top->eval();
        top->clk = 0;
        top->bclk = 0;
        top->eval();
        ok = ok && ck.same("acc", top->acc, static_cast<uint64_t>(l.acc));
        ok = ok && ck.same("rr", top->rr, l.rr);
        ok = ok && ck.same("fl_count", top->fl_count, l.fl_count);
        ok = ok && ck.same("owed_count", top->owed_count, l.owed_count);
        ok = ok && ck.same("owed_chunks", top->owed_chunks, l.owed_chunks);
        ok = ok && ck.same("idle", top->idle, link_idle(&l) != 0);
    }
    top->final();
    if (ok)
        std::printf("test_link: seed %" PRIu64 " %s cost/inc %" PRIu64 "/%" PRIu64 " phy %u pools %u,%u,%u,%u "
                    "delay %u nsrc %u: %" PRIu64 " flits (%" PRIu64 " all-data), msgs %" PRIu64 "/%" PRIu64
                    ", stalls %" PRIu64 ", build clocks %" PRIu64 " (most %u in a cycle)\n",
                    seed, dir ? "S2M" : "M2S", rate.cost, rate.inc, lp.phy_cycles, pools[0], pools[1], pools[2],
                    pools[3], lp.credit_return_cycles, nsrc, st.flits[dir], st.data_flits[dir],
                    st.msgs[cls0], st.msgs[cls0 + 1], st.credit_stall[cls0] + st.credit_stall[cls0 + 1], bld_total,
                    bld_max);
    return ok;
}

} // namespace

int main()
{
    VerilatedContext ctx;
    int seeds = 0;
    for (uint64_t s = 1; s <= 24; s++, seeds++)
        if (!run_seed(ctx, s))
            return EXIT_FAILURE;
    std::printf("test_link: %d seeds x %d cycles: RTL and C agree\n", seeds, kCycles);
    return EXIT_SUCCESS;
}

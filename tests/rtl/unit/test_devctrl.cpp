// test_devctrl.cpp - hw/rtl/devctrl.v against devctrl_tick() / devctrl_sent() / devctrl_idle()
// (hw/hls/devctrl.h), cycle for cycle, with the cxl_dev_stats the tick updates.
//
// Each cycle, as model_cycle does: up to NIN ingress pushes (ready = now, random classes, addresses in
// streams, on a few rows, or random over the DRAM preset's capacity), within the start-of-cycle ingress
// space (now and then one beyond it: in_err); devctrl_tick; then the transmitter pops up to K ready
// responses from each queue and devctrl_sent. Compared: the ingress spaces, in_err, the credit
// returns, idle (start of cycle), every response-queue window entry (ready flag and every message
// field, DevLoad included) after the tick, and every statistic after the edge. Parameter sets: the DRAM
// presets of rtl_dram_presets.h with both schedulers, page policies and refresh modes (tREFI / 4, so
// runs see refreshes), sometimes short DRAM queues and write-drain marks; link-like
// controllers (request / response latency), the local path (latencies 0), and tiny queues (ingress and
// response depth 1..4: back-pressure everywhere). Now and then a clock with ce = 0 and random inputs
// comes first: nothing may move. The sanitized build (CXLSIM_SANITIZED) runs fewer, shorter runs.
#include <cstring>
#include <memory>
#include <vector>

#include "Vdevctrl.h"
#include "rtl_dram_presets.h"
#include "rtl_unit.h"

extern "C" {
#include "devctrl.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr uint32_t kNIn = 16, kK = 5;
constexpr int kW = 120;
static_assert(sizeof(cxl_params) % 4 == 0, "cxl_params is a whole number of words");

using rtl_unit::get_bits;
using rtl_unit::clear;
using rtl_unit::put_bits;

struct Traffic {
    Rng &r;
    uint64_t stream[4];
    uint64_t rows[4];
    uint32_t phase_left = 0, rate = 50, burst = 1, wr_pct = 30;
    uint64_t cap_mask;

    Traffic(Rng &rng, const cxl_dram_params &p) : r(rng)
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
    // phases: lull, steady, bursts of many pushes in a cycle; read-heavy, write-heavy or mixed
    void step()
    {
        if (phase_left-- > 0)
            return;
        phase_left = 50 + r.below(800);
        static const uint32_t rates[] = {90, 50, 25, 5, 0};
        rate = rates[r.below(5)];
        static const uint32_t bursts[] = {1, 1, 2, 4, kNIn};
        burst = bursts[r.below(5)];
        static const uint32_t wr[] = {0, 10, 30, 50, 90, 100};
        wr_pct = wr[r.below(6)];
    }
    cxl_msg msg()
    {
        cxl_msg m = rtl_unit::random_msg(r);
        // a class other than Req / RwD now and then: the device treats it as a read
        uint64_t other = r.next();
        m.cls = static_cast<uint8_t>(r.chance(wr_pct) ? uint64_t{CXL_M2S_RWD}
                                     : r.chance(97)    ? uint64_t{CXL_M2S_REQ}
                                                       : other);
        m.devload = 0;
        uint32_t k = r.below(100);
        if (k < 45) {
            uint32_t s = r.below(4);
            m.addr = stream[s] | (r.next() & 63);
            stream[s] = (stream[s] + 64) & cap_mask;
            if (r.chance(1))
                stream[s] = r.next() & cap_mask & ~63ull;
        } else if (k < 75) {
            m.addr = (rows[r.below(4)] & ~0xfffffull) | (r.next() & 0xfffffull);
        } else if (k < 97) {
            m.addr = r.next() & cap_mask;
        } else {
            m.addr = r.next();
        }
        return m;
    }
};

struct Run {
    const char *preset;
    const char *kind;
    cxl_params p;
    int cycles;
};

void set_inputs_static(Vdevctrl &t, const cxl_params &p)
{
    t.req_latency_cycles = p.ctrl.req_latency_cycles;
    t.rsp_latency_cycles = p.ctrl.rsp_latency_cycles;
    t.ingress_depth = p.ctrl.ingress_depth;
    t.response_depth = p.ctrl.response_depth;
    t.devload_optimal = p.ctrl.devload_optimal;
    t.devload_moderate = p.ctrl.devload_moderate;
    t.devload_severe = p.ctrl.devload_severe;
    static_assert(sizeof(cxl_params) <= sizeof(t.prm), "prm holds cxl_params");
    clear(t.prm);
    uint32_t words[sizeof(cxl_params) / 4];
    std::memcpy(words, &p, sizeof p);
    for (size_t i = 0; i < sizeof(cxl_params) / 4; i++)
        t.prm[i] = words[i];
}

struct Window {
    uint32_t n;
    bool rdy[kK];
    cxl_msg msg[kK];
};
Window window_of(const cxl_pipe &q, uint64_t now)
{
    Window w{};
    w.n = q.count < kK ? q.count : kK;
    for (uint32_t j = 0; j < w.n; j++) {
        uint32_t i = (q.head + j) % CXL_MAX_FIFO;
        w.msg[j] = q.msg[i];
        w.rdy[j] = q.ready[i] <= now;
    }
    return w;
}

bool same_window(const Checker &ck, const char *name, uint32_t rdy_bits, const VlWide<(kK * kW + 31) / 32> &msgs,
                 const Window &w)
{
    char s[64];
    for (uint32_t j = 0; j < kK; j++) {
        std::snprintf(s, sizeof s, "%s_rdy[%u]", name, j);
        if (!ck.same(s, (rdy_bits >> j) & 1u, j < w.n && w.rdy[j]))
            return false;
        for (int f = 0; f < 7; f++) {
            const rtl_unit::MsgField &mf = rtl_unit::kMsgFields[f];
            std::snprintf(s, sizeof s, "%s_msg[%u].%s", name, j, mf.name);
            if (!ck.same(s, get_bits(msgs, static_cast<int>(kW * j) + mf.lsb, mf.width),
                         j < w.n ? rtl_unit::msg_field(w.msg[j], f) : 0))
                return false;
        }
    }
    return true;
}

bool same_stats(const Checker &ck, const Vdevctrl &t, const cxl_dev_stats &st)
{
    bool ok = ck.same("st_reads", t.st_reads, st.reads) && ck.same("st_writes", t.st_writes, st.writes) &&
              ck.same("st_acts", t.st_acts, st.acts) && ck.same("st_pres", t.st_pres, st.pres) &&
              ck.same("st_refs", t.st_refs, st.refs) &&
              ck.same("st_row_conflicts", t.st_row_conflicts, st.row_conflicts) &&
              ck.same("st_ingress_occ_sum", t.st_ingress_occ_sum, st.ingress_occ_sum) &&
              ck.same("st_ingress_occ_max", t.st_ingress_occ_max, st.ingress_occ_max) &&
              ck.same("st_dramq_occ_sum", t.st_dramq_occ_sum, st.dramq_occ_sum);
    for (int k = 0; k < 4 && ok; k++) {
        char s[32];
        std::snprintf(s, sizeof s, "st_devload[%d]", k);
        ok = ck.same(s, get_bits(t.st_devload, 64 * k, 64), st.devload[k]);
    }
    return ok;
}

void clock(Vdevctrl &t)
{
    t.clk = 1;
    t.eval();
    t.clk = 0;
    t.eval();
}

// The DRAM's schedule clocks before the cycle's ce edge (dram.v: s0 with an enqueue, s1, s2 with ce low):
// when it has something to schedule, and now and then when it has not (the results must be the same).
void schedule(Vdevctrl &t, Rng &rng)
{
    t.eval();
    if (!t.sched_need && !rng.chance(10))
        return;
    t.ce = 0;
    // s0 only with an enqueue (and now and then without one)
    for (int k = (t.sched_load || rng.chance(10)) ? 0 : 1; k < 3; k++) {
        t.s0 = k == 0;
        t.s1 = k == 1;
        t.s2 = k == 2;
        t.eval();
        clock(t);
    }
    t.s0 = t.s1 = t.s2 = 0;
    t.ce = 1;
}

bool run(VerilatedContext &ctx, const Run &rn, uint64_t seed, Checker &ck)
{
    const cxl_params &p = rn.p;
    std::unique_ptr<Vdevctrl> top(new Vdevctrl(&ctx, "devctrl"));
    Rng rng(seed);
    ck.seed = seed;
    std::unique_ptr<cxl_devctrl> c(new cxl_devctrl);
    devctrl_init(c.get(), &p);
    cxl_dev_stats st{};
    set_inputs_static(*top, p);
    top->clk = 0;
    top->rst_n = 0;
    top->ce = 0; // reset acts regardless of ce
    top->now = 0;
    top->in_n = 0;
    top->drs_pop_n = 0;
    top->ndr_pop_n = 0;
    top->eval();
    clock(*top);
    top->rst_n = 1;
    top->ce = 1;
    top->eval();
    Traffic tr(rng, p.dram);
    uint32_t pop_pct = 80;
    bool ok = true;
    uint64_t pushes = 0, resp = 0, errs = 0, held = 0, idles = 0, ties = 0, wr_held = 0, refdues = 0;
    for (int cyc = 0; cyc < rn.cycles && ok; cyc++) {
        uint64_t now = static_cast<uint64_t>(cyc);
        ck.cycle = now;
        ck.now = now;
        tr.step();
        if (cyc % 500 == 0) {
            static const uint32_t pops[] = {100, 80, 30, 5, 0};
            pop_pct = pops[rng.below(5)];
        }
        // a clock with ce = 0 and arbitrary inputs: the state must hold
        if (rng.chance(2)) {
            top->now = rng.next();
            top->in_n = static_cast<uint8_t>(rng.below(kNIn + 1));
            for (size_t i = 0; i < sizeof top->in_msg / sizeof top->in_msg[0]; i++)
                top->in_msg[i] = static_cast<uint32_t>(rng.next());
            top->drs_pop_n = static_cast<uint8_t>(rng.below(kK + 1));
            top->ndr_pop_n = static_cast<uint8_t>(rng.below(kK + 1));
            top->ce = 0;
            top->eval();
            clock(*top);
            top->ce = 1;
            held++;
        }

        // 1. ingress pushes within the start-of-cycle space (rarely one more: in_err)
        bool idle0 = devctrl_idle(c.get(), &p) != 0;
        bool refdue0 = false; // a refresh deadline has passed (cxl_model_idle's quiet_until)
        for (uint32_t ch = 0; ch < p.dram.channels; ch++)
            for (uint32_t r = 0; r < p.dram.ranks; r++)
                refdue0 = refdue0 || c->dram.ch[ch].ref_due[r] <= now;
        refdues += refdue0;
        idles += idle0;
        uint32_t sp_req = pipe_space(&c->ing_req), sp_rwd = pipe_space(&c->ing_rwd);
        uint32_t left_req = sp_req, left_rwd = sp_rwd;
        cxl_msg in[kNIn];
        uint32_t n = 0;
        bool overflow = rng.chance(1); // this cycle may push one message into a full queue
        if (rng.chance(tr.rate)) {
            uint32_t want = 1 + rng.below(tr.burst);
            for (uint32_t i = 0; i < want && n < kNIn; i++) {
                cxl_msg m = tr.msg();
                uint32_t &left = m.cls == CXL_M2S_RWD ? left_rwd : left_req;
                if (left == 0 && !overflow)
                    continue;
                if (left == 0)
                    overflow = false;
                if (left)
                    left--;
                in[n++] = m;
            }
        }
        int err = 0;
        for (uint32_t i = 0; i < n; i++)
            if (pipe_push(in[i].cls == CXL_M2S_RWD ? &c->ing_rwd : &c->ing_req, &in[i], now))
                err = 1;
        pushes += n;
        errs += err;
        uint32_t cnt_req = pipe_count(&c->ing_req), cnt_rwd = pipe_count(&c->ing_rwd);
        // coverage: equal-age heads (Req goes first), a write held back by a full response queue
        if (cnt_req && cnt_rwd && c->ing_req.ready[c->ing_req.head] == c->ing_rwd.ready[c->ing_rwd.head])
            ties++;
        const cxl_msg *ph = pipe_ready(&c->proc, now);
        if (ph && ph->cls == CXL_M2S_RWD && c->rsp_reserved >= p.ctrl.response_depth)
            wr_held++;
        // 2. the tick
        devctrl_tick(c.get(), &p, now, nullptr, &st);
        bool ret_req = pipe_count(&c->ing_req) < cnt_req, ret_rwd = pipe_count(&c->ing_rwd) < cnt_rwd;
        Window wd = window_of(c->rsp_drs, now), wn = window_of(c->rsp_ndr, now);

        top->now = now;
        top->in_n = static_cast<uint8_t>(n);
        clear(top->in_msg);
        for (uint32_t i = 0; i < n; i++)
            for (int f = 0; f < 7; f++)
                put_bits(top->in_msg, static_cast<int>(kW * i) + rtl_unit::kMsgFields[f].lsb,
                         rtl_unit::kMsgFields[f].width, rtl_unit::msg_field(in[i], f));
        top->drs_pop_n = 0;
        top->ndr_pop_n = 0;
        schedule(*top, rng);
        top->eval();
        ok = ck.same("idle", top->idle, idle0) && ck.same("refresh_due", top->refresh_due, refdue0) &&
             ck.same("ing_req_space", top->ing_req_space, sp_req) &&
             ck.same("ing_rwd_space", top->ing_rwd_space, sp_rwd) && ck.same("in_err", top->in_err, err) &&
             ck.same("cr_ret_req", top->cr_ret_req, ret_req) && ck.same("cr_ret_rwd", top->cr_ret_rwd, ret_rwd) &&
             same_window(ck, "drs", top->drs_rdy, top->drs_msg, wd) &&
             same_window(ck, "ndr", top->ndr_rdy, top->ndr_msg, wn);
        if (!ok) {
            std::fprintf(stderr, "test_devctrl: in_n %u, C after the tick: ing %u/%u, proc %u, rsp %u/%u reserved %u\n", n,
                         pipe_count(&c->ing_req), pipe_count(&c->ing_rwd), pipe_count(&c->proc),
                         pipe_count(&c->rsp_drs), pipe_count(&c->rsp_ndr), c->rsp_reserved);
            break;
        }
        // 3. the transmitter: up to K ready responses of each queue, in order
        uint32_t pd = 0, pn = 0;
        while (pd < wd.n && wd.rdy[pd])
            pd++;
        while (pn < wn.n && wn.rdy[pn])
            pn++;
        pd = rng.chance(pop_pct) ? rng.below(pd + 1) : 0;
        pn = rng.chance(pop_pct) ? rng.below(pn + 1) : 0;
        for (uint32_t i = 0; i < pd; i++)
            pipe_pop(&c->rsp_drs);
        for (uint32_t i = 0; i < pn; i++)
            pipe_pop(&c->rsp_ndr);
        devctrl_sent(c.get(), pd + pn);
        resp += pd + pn;
        top->drs_pop_n = static_cast<uint8_t>(pd);
        top->ndr_pop_n = static_cast<uint8_t>(pn);
        top->eval();
        clock(*top);
        ok = same_stats(ck, *top, st);
    }
    top->final();
    if (ok)
        std::printf("test_devctrl: %-9s %-5s %s %s ref %u: %d cycles (%" PRIu64 " ce = 0, %" PRIu64 " idle, %" PRIu64 " refresh due), %" PRIu64
                    " pushes (%" PRIu64 " refused), %" PRIu64 " ties, %" PRIu64 " writes held, %" PRIu64
                    " responses, %" PRIu64 " RD %" PRIu64 " WR: equal\n",
                    rn.preset, rn.kind, p.dram.scheduler == CXL_SCHED_FCFS ? "fcfs  " : "frfcfs",
                    p.dram.row_policy ? "closed" : "open  ", p.dram.refresh, rn.cycles, held, idles, refdues, pushes, errs,
                    ties, wr_held, resp, st.reads, st.writes);
    return ok;
}

// controller parameter sets: link-like, local path (latencies 0), tiny queues
void set_ctrl(cxl_params &p, int kind, Rng &r)
{
    cxl_ctrl_params &c = p.ctrl;
    switch (kind) {
    case 0: // link-like
        c.req_latency_cycles = 1 + r.below(40);
        c.rsp_latency_cycles = 1 + r.below(40);
        c.ingress_depth = 16 + r.below(113);
        c.response_depth = 16 + r.below(113);
        break;
    case 1: // local path
        c.req_latency_cycles = 0;
        c.rsp_latency_cycles = 0;
        c.ingress_depth = 8 + r.below(121);
        c.response_depth = 8 + r.below(121);
        break;
    default: // tiny
        c.req_latency_cycles = r.below(3);
        c.rsp_latency_cycles = r.below(3);
        c.ingress_depth = 1 + r.below(4);
        c.response_depth = 1 + r.below(4);
        break;
    }
    uint32_t in = 2 * c.ingress_depth;
    c.devload_optimal = (in + 3) / 4;
    c.devload_moderate = (in + 1) / 2;
    c.devload_severe = (3 * in + 3) / 4;
    p.link_present = kind != 1;
}

} // namespace

int main(int argc, char **argv)
{
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    Checker ck{"test_devctrl"};
#ifdef CXLSIM_SANITIZED
    const int cycles = 1500, per_preset = 3; // one run of each controller kind per preset
#else
    const int cycles = 6000, per_preset = 12;
#endif
    static const char *kinds[] = {"link", "local", "tiny"};
    std::vector<Run> runs;
    Rng pr_rng(4242);
    for (const auto &pr : rtl_unit::kDramPresets) {
        for (int i = 0; i < per_preset; i++) {
            Run r{pr.name, kinds[i % 3], cxl_params{}, cycles};
            r.p.dram = pr.p;
            // all scheduler / page / refresh combinations over the normal build's runs of a preset
            r.p.dram.scheduler = static_cast<uint32_t>(i / 3) & 1u;
            r.p.dram.row_policy = static_cast<uint32_t>(i / 6) & 1u;
            r.p.dram.refresh = i % 4 == 3 ? CXL_REF_OFF : (i % 2 ? CXL_REF_SAME_BANK : CXL_REF_ALL_BANK);
            if (r.p.dram.refresh == CXL_REF_SAME_BANK && r.p.dram.tRFCsb == 0)
                r.p.dram.tRFCsb = r.p.dram.tRFC / 2;
            r.p.dram.tREFI /= 4; // refreshes within a short run
            if (pr_rng.chance(30)) {
                r.p.dram.read_queue = 1 + pr_rng.below(32);
                r.p.dram.write_queue = 1 + pr_rng.below(32);
                r.p.dram.wdrain_high = 1 + pr_rng.below(r.p.dram.write_queue);
                r.p.dram.wdrain_low = pr_rng.below(r.p.dram.wdrain_high);
            }
            set_ctrl(r.p, i % 3, pr_rng);
            runs.push_back(r);
        }
    }
    uint64_t seed = 700;
    for (const auto &r : runs) {
        if (!run(ctx, r, seed, ck)) {
            std::fprintf(stderr,
                         "test_devctrl: preset %s %s: req_lat %u rsp_lat %u ingress %u response %u; sched %u page %u "
                         "refresh %u rq %u wq %u\n",
                         r.preset, r.kind, r.p.ctrl.req_latency_cycles, r.p.ctrl.rsp_latency_cycles,
                         r.p.ctrl.ingress_depth, r.p.ctrl.response_depth, r.p.dram.scheduler, r.p.dram.row_policy,
                         r.p.dram.refresh, r.p.dram.read_queue, r.p.dram.write_queue);
            return 1;
        }
        seed++;
    }
    std::printf("test_devctrl: %zu runs equal (every output, window entry and statistic, every cycle)\n", runs.size());
    return 0;
}

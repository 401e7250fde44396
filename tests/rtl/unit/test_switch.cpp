// test_switch.cpp - hw/rtl/switch.v against cxl_switch (hw/hls/switch.{h,c}), cycle for cycle.
//
// Each cycle, in model_cycle's order: switch_ingress_m2s for 0..8 messages per host port, then
// switch_ingress_s2m per device port, switch_tick, then pipe_pop of the egress queues (link_tx's pops).
// Random traffic on every port; resets with new runtime parameters: hosts 1..4, devices 1..4, hop 0, 1,
// 2 and random, port_queue 1..255 (2 * q above 256 caps the ingress), round-robin and oldest-first (and a
// value > 1, oldest-first as in the C), shared pool and partitioned (ld_shift 1..63), interleave shifts
// 0..40 and dev_bits 0..3 (also routes to no device, which block their queue as in the C), S2M
// messages with a host beyond the ports (rare: they block too). Egress drain phases from none (full
// egress queues, stalls, ingress back-pressure and refused pushes) to fast. `now` mostly steps by one,
// sometimes jumps; one seed runs near 2^64 so now + hop wraps. Compared every cycle: start-of-cycle
// counts, idle, cumulative stalls; push errors, credit returns (port, class), stalls of the cycle, egress
// counts and the first NPOP egress entries field by field.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "Vswitch.h"
#include "rtl_unit.h"

extern "C" {
#include "switch.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

// what the random traffic reached, printed so a weakened generator shows
struct Cover {
    uint64_t stalls = 0, refused = 0, credits = 0, egress = 0;
};

constexpr int kCycles = 8000;
constexpr int kNH = 4, kND = 4, kNIN = 8, kNPOP = 8, kW = 120;

template <typename T> void wput(T &w, int lsb, int width, uint64_t v)
{
    for (int b = 0; b < width; b++) {
        uint32_t bit = static_cast<uint32_t>((v >> b) & 1u);
        int at = lsb + b;
        w[at / 32] = (w[at / 32] & ~(1u << (at % 32))) | (bit << (at % 32));
    }
}
template <typename T> uint64_t wget(const T &w, int lsb, int width)
{
    uint64_t v = 0;
    for (int b = 0; b < width; b++)
        v |= static_cast<uint64_t>((w[(lsb + b) / 32] >> ((lsb + b) % 32)) & 1u) << b;
    return v;
}
template <typename T> void wclear(T &w, int words)
{
    for (int i = 0; i < words; i++)
        w[i] = 0;
}
template <typename T> void wput_msg(T &w, int lsb, const cxl_msg &m)
{
    for (int i = 0; i < 7; i++)
        wput(w, lsb + rtl_unit::kMsgFields[i].lsb, rtl_unit::kMsgFields[i].width, rtl_unit::msg_field(m, i));
}

struct Phase {
    uint32_t in_pct;   // chance a port delivers something this cycle
    uint32_t pop_max;  // egress pops per cycle: 0..pop_max
};
constexpr Phase kPhases[] = {{20, 2}, {60, 1}, {90, 0}, {40, 8}, {100, 3}, {5, 8}, {70, 2}};
constexpr uint32_t kQueues[] = {1, 2, 3, 4, 8, 16, 64, 127, 128, 129, 200, 255};

struct Sim {
    std::unique_ptr<Vswitch> top;
    cxl_params p;
    std::unique_ptr<cxl_switch> s;
    std::vector<cxl_link_dir> up, dn;
    std::unique_ptr<cxl_stats> st;
};

void do_reset(Sim &x, Rng &r, uint64_t now, bool narrow)
{
    cxl_params &p = x.p;
    std::memset(&p, 0, sizeof p);
    p.hosts = 1 + r.below(kNH);
    p.devices = 1 + r.below(kND);
    uint32_t lg = p.devices > 2 ? 2 : p.devices - 1;
    p.sw.present = 1;
    uint32_t hp = r.below(10);
    p.sw.hop_cycles = hp < 3 ? hp : (hp < 8 ? 1 + r.below(40) : r.below(400));
    p.sw.port_queue = narrow ? 1 + r.below(4) : kQueues[r.below(sizeof kQueues / sizeof kQueues[0])];
    p.sw.arbitration = r.chance(45) ? 0 : (r.chance(90) ? 1 : 2 + r.below(5));
    p.sw.dev_bits = r.chance(90) ? lg : r.below(4);
    p.sw.interleave_shift = r.chance(60) ? 6 + r.below(8) : r.below(41);
    const uint32_t lds[] = {0, 0, 0, 1, 33, 63};
    p.sw.ld_shift = r.chance(70) ? lds[r.below(6)] : 1 + r.below(63);

    Vswitch &t = *x.top;
    t.ce = 1;
    t.rst_n = 0;
    t.now = now;
    t.hosts = p.hosts;
    t.devices = p.devices;
    t.hop_cycles = p.sw.hop_cycles;
    t.port_queue = p.sw.port_queue;
    t.arbitration = p.sw.arbitration;
    t.interleave_shift = p.sw.interleave_shift;
    t.dev_bits = p.sw.dev_bits;
    t.ld_shift = p.sw.ld_shift;
    t.eval();
    t.clk = 1;
    t.eval();
    t.clk = 0;
    switch_init(x.s.get(), &p);
    const uint32_t pool[CXL_NCLASS] = {0, 0, 0, 0};
    for (auto &l : x.up)
        credit_init(&l.cr, pool, 0);
    for (auto &l : x.dn)
        credit_init(&l.cr, pool, 0);
    x.st->switch_stall = 0;
}

cxl_msg m2s_msg(Rng &r, uint32_t h)
{
    cxl_msg m = rtl_unit::random_msg(r);
    m.cls = static_cast<uint8_t>(r.chance(90) ? r.below(2) : r.below(CXL_NCLASS));
    m.host = static_cast<uint8_t>(r.chance(85) ? h : r.next());
    return m;
}

cxl_msg s2m_msg(Rng &r, uint32_t hosts)
{
    cxl_msg m = rtl_unit::random_msg(r);
    m.cls = static_cast<uint8_t>(r.chance(90) ? 2 + r.below(2) : r.below(CXL_NCLASS));
    m.host = static_cast<uint8_t>(r.below(1000) == 0 ? hosts + r.below(250) : r.below(hosts));
    return m;
}

uint32_t n_msgs(Rng &r, const Phase &ph)
{
    if (!r.chance(ph.in_pct))
        return 0;
    uint32_t k = r.below(100);
    return k < 70 ? 1 : (k < 90 ? 2 + r.below(2) : 1 + r.below(kNIN));
}

template <typename T>
bool same_msg(Checker &ck, const char *what, int port, int k, uint64_t rtl_word_lsb, const T &w,
              const cxl_msg &c)
{
    for (int i = 0; i < 7; i++) {
        const rtl_unit::MsgField &f = rtl_unit::kMsgFields[i];
        char name[64];
        std::snprintf(name, sizeof name, "%s[%d][%d].%s", what, port, k, f.name);
        if (!ck.same(name, wget(w, static_cast<int>(rtl_word_lsb) + f.lsb, f.width), rtl_unit::msg_field(c, i)))
            return false;
    }
    return true;
}

bool run_seed(VerilatedContext &ctx, uint64_t seed, Cover &cov)
{
    Sim x;
    x.top.reset(new Vswitch(&ctx, "switch"));
    x.s.reset(new cxl_switch());
    x.up.resize(CXL_MAX_HOSTS);
    x.dn.resize(CXL_MAX_DEVS);
    x.st.reset(new cxl_stats());
    Rng rng(seed);
    Checker ck{"test_switch"};
    ck.seed = seed;
    const uint64_t starts[] = {0, 123456, UINT64_MAX - (1ull << 22), rng.next() >> 2};
    uint64_t now = starts[seed % 4];
    Phase ph = kPhases[0];
    uint64_t next_reset = 0;
    bool narrow = false;
    bool ok = true;
    Vswitch &t = *x.top;
    cxl_switch &s = *x.s;
    t.clk = 0;

    for (uint64_t cyc = 0; cyc < kCycles && ok; cyc++, now += rng.chance(3) ? 2 + rng.below(100) : 1) {
        ck.cycle = cyc;
        ck.now = now;
        if (cyc == next_reset) {
            narrow = rng.chance(30);
            do_reset(x, rng, now, narrow);
            next_reset = cyc + 500 + rng.below(2000);
            continue;
        }
        if (cyc % 150 == 0)
            ph = kPhases[rng.below(sizeof kPhases / sizeof kPhases[0])];
        const cxl_params &p = x.p;

        // start of the cycle
        t.rst_n = 1;
        t.now = now;
        t.eval();
        ok = ck.same("idle", t.idle, switch_idle(&s, &p) != 0) &&
             ck.same("stall_count", t.stall_count, x.st->switch_stall);
        for (int h = 0; h < kNH && ok; h++)
            ok = ck.same("up_in_count", wget(t.up_in_count, 32 * h, 32), pipe_count(&s.up_in[h]));
        for (int d = 0; d < kND && ok; d++)
            ok = ck.same("dn_in_count", wget(t.dn_in_count, 32 * d, 32), pipe_count(&s.dn_in[d]));
        if (!ok)
            break;

        // step 4: ingress
        wclear(t.up_in_msg, kNH * kNIN * kW / 32);
        wclear(t.dn_in_msg, kND * kNIN * kW / 32);
        uint32_t up_n = 0, dn_n = 0;
        bool up_err[kNH] = {}, dn_err[kND] = {};
        for (uint32_t h = 0; h < p.hosts; h++) {
            uint32_t n = n_msgs(rng, ph);
            up_n |= n << (8 * h);
            for (uint32_t k = 0; k < n; k++) {
                cxl_msg m = m2s_msg(rng, h);
                wput_msg(t.up_in_msg, static_cast<int>((h * kNIN + k) * kW), m);
                up_err[h] |= switch_ingress_m2s(&s, &p, h, m, now) != 0;
            }
        }
        for (uint32_t d = 0; d < p.devices; d++) {
            uint32_t n = n_msgs(rng, ph);
            dn_n |= n << (8 * d);
            for (uint32_t k = 0; k < n; k++) {
                cxl_msg m = s2m_msg(rng, p.hosts);
                wput_msg(t.dn_in_msg, static_cast<int>((d * kNIN + k) * kW), m);
                dn_err[d] |= switch_ingress_s2m(&s, &p, d, &m, now) != 0;
            }
        }
        t.up_in_n = up_n;
        t.dn_in_n = dn_n;

        // step 8: switch_tick; credit returns are the ingress pops it made
        uint32_t up_c0[kNH], dn_c0[kND];
        cxl_msg up_h0[kNH], dn_h0[kND];
        for (int h = 0; h < kNH; h++) {
            up_c0[h] = pipe_count(&s.up_in[h]);
            up_h0[h] = up_c0[h] ? *pipe_head(&s.up_in[h]) : cxl_msg{};
        }
        for (int d = 0; d < kND; d++) {
            dn_c0[d] = pipe_count(&s.dn_in[d]);
            dn_h0[d] = dn_c0[d] ? *pipe_head(&s.dn_in[d]) : cxl_msg{};
        }
        uint64_t stall0 = x.st->switch_stall;
        for (auto &l : x.up)
            credit_tick(&l.cr, now);
        for (auto &l : x.dn)
            credit_tick(&l.cr, now);
        switch_tick(&s, &p, now, x.up.data(), x.dn.data(), x.st.get());

        // egress pops (link_tx, steps 8 and 10), chosen now, applied after the comparison
        uint32_t up_pop = 0, dn_pop = 0;
        uint32_t up_pn[kNH] = {}, dn_pn[kND] = {};
        for (int h = 0; h < kNH; h++) {
            up_pn[h] = rng.below(ph.pop_max + 1) + (rng.chance(2) ? 3 : 0);
            up_pop |= up_pn[h] << (8 * h);
        }
        for (int d = 0; d < kND; d++) {
            dn_pn[d] = rng.below(ph.pop_max + 1) + (rng.chance(2) ? 3 : 0);
            dn_pop |= dn_pn[d] << (8 * d);
        }
        t.up_out_pop_n = up_pop;
        t.dn_out_pop_n = dn_pop;
        t.eval();

        ok = ck.same("stall_n", t.stall_n, x.st->switch_stall - stall0);
        cov.stalls += x.st->switch_stall - stall0;
        for (int h = 0; h < kNH; h++) {
            cov.refused += up_err[h];
            cov.credits += pipe_count(&s.up_in[h]) != up_c0[h];
            cov.egress += s.up_out[h].count;
        }
        for (int d = 0; d < kND; d++) {
            cov.refused += dn_err[d];
            cov.credits += pipe_count(&s.dn_in[d]) != dn_c0[d];
            cov.egress += s.dn_out[d].count;
        }
        for (int h = 0; h < kNH && ok; h++) {
            bool ret = pipe_count(&s.up_in[h]) != up_c0[h];
            ok = ck.same("up_in_err", (t.up_in_err >> h) & 1u, up_err[h]) &&
                 ck.same("up_cr_ret", (t.up_cr_ret >> h) & 1u, ret) &&
                 (!ret || ck.same("up_cr_cls", (t.up_cr_cls >> (8 * h)) & 0xffu, up_h0[h].cls));
        }
        for (int d = 0; d < kND && ok; d++) {
            bool ret = pipe_count(&s.dn_in[d]) != dn_c0[d];
            ok = ck.same("dn_in_err", (t.dn_in_err >> d) & 1u, dn_err[d]) &&
                 ck.same("dn_cr_ret", (t.dn_cr_ret >> d) & 1u, ret) &&
                 (!ret || ck.same("dn_cr_cls", (t.dn_cr_cls >> (8 * d)) & 0xffu, dn_h0[d].cls));
        }
        for (int d = 0; d < kND && ok; d++) {
            const cxl_pipe &q = s.dn_out[d];
            ok = ck.same("dn_out_count", wget(t.dn_out_count, 32 * d, 32), q.count);
            for (uint32_t k = 0; k < kNPOP && ok; k++) {
                cxl_msg c = k < q.count ? q.msg[(q.head + k) % CXL_MAX_FIFO] : cxl_msg{};
                ok = same_msg(ck, "dn_out_msg", d, static_cast<int>(k), (d * kNPOP + k) * kW, t.dn_out_msg, c);
            }
        }
        for (int h = 0; h < kNH && ok; h++) {
            const cxl_pipe &q = s.up_out[h];
            ok = ck.same("up_out_count", wget(t.up_out_count, 32 * h, 32), q.count);
            for (uint32_t k = 0; k < kNPOP && ok; k++) {
                cxl_msg c = k < q.count ? q.msg[(q.head + k) % CXL_MAX_FIFO] : cxl_msg{};
                ok = same_msg(ck, "up_out_msg", h, static_cast<int>(k), (h * kNPOP + k) * kW, t.up_out_msg, c);
            }
        }
        for (int h = 0; h < kNH; h++)
            for (uint32_t k = 0; k < up_pn[h]; k++)
                pipe_pop(&s.up_out[h]);
        for (int d = 0; d < kND; d++)
            for (uint32_t k = 0; k < dn_pn[d]; k++)
                pipe_pop(&s.dn_out[d]);
        t.clk = 1;
        t.eval();
        t.clk = 0;
    }
    t.final();
    return ok;
}

} // namespace

int main()
{
    VerilatedContext ctx;
    const uint64_t seeds[] = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    Cover cov;
    for (uint64_t sd : seeds)
        if (!run_seed(ctx, sd, cov))
            return EXIT_FAILURE;
    std::printf("test_switch: %zu seeds x %d cycles: RTL and C agree (%" PRIu64 " forwards, %" PRIu64
                " stalls, %" PRIu64 " refused-push cycles, %" PRIu64 " egress entries seen)\n",
                sizeof seeds / sizeof seeds[0], kCycles, cov.credits, cov.stalls, cov.refused, cov.egress);
    return EXIT_SUCCESS;
}

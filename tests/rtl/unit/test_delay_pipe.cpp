// test_delay_pipe.cpp - hw/rtl/delay_pipe.v against a cxl_pipe (hw/hls/pipe.h) used as a host request
// path, cycle for cycle.
//
// Each cycle the popper looks at the window and pops some of its ready entries (pipe_ready, then
// pipe_pop, as the M2S link or the local path do), then a requester may push one message that is ready
// host_req_cycles later (pipe_push with ready = now + delay). Resets choose the delay (0, 1, 2, small,
// large, beyond the run) and the start cycle (0, or just below a multiple of 2^32 so the low 32 bits wrap
// while entries wait, or random). Phases fill, drain, balance; now and then a push into a full pipe (refused:
// push_err, pipe_push returns -1). Compared every cycle: the window (valid, ready, every message field),
// count, space, push_err, and `waiting` (some stored entry is not ready). A cycle with ce = 0 is a clock
// in which the unit is not clocked: neither the state nor `now` moves (the model's now advances only in
// the main clocks that also enable the path).
#include <cstdlib>
#include <memory>

#include "Vdelay_pipe.h"
#include "rtl_unit.h"

extern "C" {
#include "pipe.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr uint32_t kDepth = CXL_MAX_FIFO, kK = 3;
constexpr int kCycles = 8000;
constexpr int kW = 120;


using rtl_unit::get_bits;
using rtl_unit::put_bits;

bool run_seed(VerilatedContext &ctx, uint64_t seed)
{
    std::unique_ptr<Vdelay_pipe> top(new Vdelay_pipe(&ctx, "delay_pipe"));
    Rng rng(seed);
    Checker ck{"test_delay_pipe"};
    ck.seed = seed;
    std::unique_ptr<cxl_pipe> pp(new cxl_pipe);
    cxl_pipe &p = *pp;
    // (a run never comes near 2^64 cycles: now + delay does not wrap in the C)
    const uint64_t far_start = rng.next() >> 1;
    uint64_t now = 0;
    uint32_t delay = 0;
    rtl_unit::PipePhase ph = rtl_unit::kPipePhases[0];
    uint64_t next_reset = 0;
    bool ok = true;
    uint64_t pushed = 0, popped = 0, held = 0, refused = 0;

    top->clk = 0;
    for (uint64_t cyc = 0; cyc < kCycles && ok; cyc++) {
        ck.cycle = cyc;
        if (cyc == next_reset) {
            rtl_unit::DelayPathReset d = rtl_unit::reset_delay_path(*top, rng, far_start);
            now = d.now;
            delay = d.delay;
            pipe_init(&p, kDepth);
            next_reset = cyc + 300 + rng.below(2500);
            continue;
        }
        if (cyc % 150 == 0)
            ph = rtl_unit::pipe_phase(rng);
        ck.now = now;

        bool ce = !rng.chance(4);
        // the C popper: the ready entries of the window, then some of them popped
        uint32_t ready_n = 0;
        while (ready_n < kK && ready_n < p.count && p.ready[(p.head + ready_n) % CXL_MAX_FIFO] <= now)
            ready_n++;
        uint32_t pop_n = ce && rng.chance(ph.pop_pct) ? rng.below(ready_n + 1) : 0;
        bool full_after = pipe_count(&p) - pop_n == kDepth;
        bool push = ce && (rng.chance(ph.push_pct) && (!full_after || rng.chance(20)));
        cxl_msg m = rtl_unit::random_msg(rng);

        top->rst_n = 1;
        top->ce = ce;
        top->now_lo = static_cast<uint32_t>(now);
        top->push = push;
        for (int f = 0; f < 7; f++)
            put_bits(top->push_msg, rtl_unit::kMsgFields[f].lsb, rtl_unit::kMsgFields[f].width,
                     rtl_unit::msg_field(m, f));
        top->pop_n = pop_n;
        top->eval();

        // the start-of-cycle view
        ok = ck.same("count", top->count, pipe_count(&p)) && ck.same("space", top->space, pipe_space(&p)) &&
             ck.same("waiting", top->waiting, p.count && p.ready[(p.head + p.count - 1) % CXL_MAX_FIFO] > now);
        for (uint32_t j = 0; j < kK && ok; j++) {
            bool valid = j < p.count;
            uint32_t i = (p.head + j) % CXL_MAX_FIFO;
            ok = ck.same("win_valid", (top->win_valid >> j) & 1u, valid) &&
                 ck.same("win_rdy", (top->win_rdy >> j) & 1u, valid && p.ready[i] <= now);
            for (int f = 0; f < 7 && ok && valid; f++)
                ok = ck.same(rtl_unit::kMsgFields[f].name,
                             get_bits(top->win_msg, static_cast<int>(kW * j) + rtl_unit::kMsgFields[f].lsb,
                                      rtl_unit::kMsgFields[f].width),
                             rtl_unit::msg_field(p.msg[i], f));
        }
        // the C calls: pops, then the push
        uint32_t was = pipe_count(&p);
        for (uint32_t i = 0; i < pop_n; i++)
            pipe_pop(&p);
        int refused_c = push ? pipe_push(&p, &m, now + delay) != 0 : 0;
        if (ok)
            ok = ck.same("push_err", top->push_err, refused_c);
        if (!ce)
            ok = ok && ck.same("held", pipe_count(&p), was);

        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
        pushed += push && !refused_c;
        refused += refused_c;
        popped += pop_n;
        held += !ce;
        if (ce)
            now++;
    }
    if (ok)
        std::printf("test_delay_pipe: seed %" PRIu64 ": %d cycles, %" PRIu64 " pushed, %" PRIu64
                    " refused, %" PRIu64 " popped, %" PRIu64 " clocks without ce\n",
                    seed, kCycles, pushed, refused, popped, held);
    return ok;
}

} // namespace

int main(int argc, char **argv)
{
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    bool ok = true;
    for (uint64_t seed = 1; seed <= 8 && ok; seed++)
        ok = run_seed(ctx, seed);
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

// test_delay_mpipe.cpp - hw/rtl/delay_mpipe.v against a cxl_pipe (hw/hls/pipe.h) used as a device's
// response queue, cycle for cycle.
//
// Each cycle the controller pushes 0 .. NPUSH messages (and now and then more: refused beyond the room, as
// pipe_push returns -1), all ready rsp_latency_cycles later (pipe_push with ready = now + delay); then the
// transmitter looks at the window (this cycle's pushes included) and pops some of its ready entries
// (pipe_ready, then pipe_pop). Resets choose the delay (0, 1, 2, small, large, beyond the run) and the
// start cycle (0, or just below a multiple of 2^32 so the low 32 bits wrap while entries wait, or random).
// Phases fill, drain, balance. Compared every cycle: the window after the pushes (valid, ready, every
// message field), count and space of the start of the cycle, push_acc, push_err. A cycle with ce = 0 is a
// clock in which the unit is not clocked: neither the state nor `now` moves (the device's clock enable is
// the model's main clock, and `now` advances only then).
#include <cstdlib>
#include <memory>

#include "Vdelay_mpipe.h"
#include "rtl_unit.h"

extern "C" {
#include "pipe.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr uint32_t kDepth = CXL_MAX_FIFO, kNPush = 4, kK = 5;
constexpr int kCycles = 8000;
constexpr int kW = 120;


using rtl_unit::get_bits;
using rtl_unit::put_bits;

bool run_seed(VerilatedContext &ctx, uint64_t seed)
{
    std::unique_ptr<Vdelay_mpipe> top(new Vdelay_mpipe(&ctx, "delay_mpipe"));
    Rng rng(seed);
    Checker ck{"test_delay_mpipe"};
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
        uint32_t push_n = 0;
        if (ce && rng.chance(ph.push_pct))
            push_n = 1 + rng.below(pipe_space(&p) < kNPush && rng.chance(80) ? pipe_space(&p) + 1 : kNPush);
        if (push_n > kNPush)
            push_n = kNPush;
        cxl_msg m[kNPush];
        top->rst_n = 1;
        top->ce = ce;
        top->now_lo = static_cast<uint32_t>(now);
        top->push_n = push_n;
        for (uint32_t i = 0; i < kNPush; i++) {
            m[i] = rtl_unit::random_msg(rng);
            for (int f = 0; f < 7; f++)
                put_bits(top->push_msg, static_cast<int>(kW * i) + rtl_unit::kMsgFields[f].lsb,
                         rtl_unit::kMsgFields[f].width, rtl_unit::msg_field(m[i], f));
        }

        // the start-of-cycle counts, then the C pushes
        uint32_t was = pipe_count(&p), was_space = pipe_space(&p);
        uint32_t acc = 0;
        for (uint32_t i = 0; i < push_n; i++)
            acc += pipe_push(&p, &m[i], now + delay) == 0;
        // the C popper: the ready entries of the window (after the pushes), then some of them popped
        uint32_t ready_n = 0;
        while (ready_n < kK && ready_n < p.count && p.ready[(p.head + ready_n) % CXL_MAX_FIFO] <= now)
            ready_n++;
        uint32_t pop_n = ce && rng.chance(ph.pop_pct) ? rng.below(ready_n + 1) : 0;
        top->pop_n = pop_n;
        top->eval();

        ok = ck.same("count", top->count, was) && ck.same("space", top->space, was_space) &&
             ck.same("push_acc", top->push_acc, acc) && ck.same("push_err", top->push_err, acc != push_n);
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
        for (uint32_t i = 0; i < pop_n; i++)
            pipe_pop(&p);
        if (!ce) { // the unit is not clocked: undo the C calls of this cycle (push_n and pop_n are 0)
            ok = ok && ck.same("held", pipe_count(&p), was);
        }

        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
        pushed += acc;
        refused += push_n - acc;
        popped += pop_n;
        held += !ce;
        if (ce)
            now++;
    }
    if (ok)
        std::printf("test_delay_mpipe: seed %" PRIu64 ": %d cycles, %" PRIu64 " pushed, %" PRIu64
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

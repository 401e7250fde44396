// test_mpipe.cpp - hw/rtl/mpipe.v against a sequence of cxl_pipe calls (hw/hls/pipe.h), cycle for cycle.
//
// Each cycle: push_n pipe_push calls (one ready cycle) and pop_n pipe_pop calls, in the order push_first
// selects, in phases (filling, draining, balanced, bursts of pushes or pops beyond the window), resets
// with new capacities (0, 1, small, DEPTH, above DEPTH: capped), ready cycles in the past, now, the future
// and all ones, `now` near 2^64 and jumping. Compared every cycle: the window (valid, ready, every message
// field, ready cycle) as the popper sees it, count, space, push_acc, push_err. Now and then a cycle with
// ce = 0: the C calls run on a copy (the outputs must still match) and the state must not move.
//
// The build verilates mpipe with its default parameters; another parameterisation is checked by hand:
//   verilator --cc --exe --build -Ihw/rtl -GDEPTH=7 -GNPUSH=3 -GK=2 -CFLAGS "-std=c++17 -DMPIPE_DEPTH=7
//   -DMPIPE_NPUSH=3 -DMPIPE_K=2 -I<hw/hls> -I<tests/rtl/unit>" -LDFLAGS <build>/libcxlhw.a hw/rtl/mpipe.v
//   this file   (passes, as does DEPTH 256, NPUSH 8, K 5)
#include <cstdlib>
#include <memory>

#include "Vmpipe.h"
#include "rtl_unit.h"

extern "C" {
#include "pipe.h"
}

#ifndef MPIPE_DEPTH
#define MPIPE_DEPTH 256
#endif
#ifndef MPIPE_NPUSH
#define MPIPE_NPUSH 8
#endif
#ifndef MPIPE_K
#define MPIPE_K 5
#endif

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr uint32_t kDepth = MPIPE_DEPTH, kNPush = MPIPE_NPUSH, kK = MPIPE_K;
static_assert(kDepth <= CXL_MAX_FIFO, "the C pipe holds CXL_MAX_FIFO");
constexpr int kCycles = 6000;
constexpr int kW = 120;

constexpr uint32_t kCaps[] = {0, 1, 2, 3, 5, 7, 9, 64, 255, 256, 257, 1000};

using rtl_unit::get_bits;
using rtl_unit::clear;
using rtl_unit::put_bits;

uint64_t ready_for(Rng &r, uint64_t now) { return rtl_unit::pipe_ready_cycle(r, now, 60); }

struct Win {
    bool valid[kK];
    cxl_msg msg[kK];
    uint64_t ready[kK];
};

Win window_of(const cxl_pipe &p)
{
    Win w{};
    for (uint32_t j = 0; j < kK; j++) {
        w.valid[j] = j < p.count;
        w.ready[j] = UINT64_MAX;
        if (w.valid[j]) {
            uint32_t i = (p.head + j) % CXL_MAX_FIFO;
            w.msg[j] = p.msg[i];
            w.ready[j] = p.ready[i];
        }
    }
    return w;
}

bool run_seed(VerilatedContext &ctx, uint64_t seed)
{
    std::unique_ptr<Vmpipe> top(new Vmpipe(&ctx, "mpipe"));
    Rng rng(seed);
    Checker ck{"test_mpipe"};
    ck.seed = seed;
    std::unique_ptr<cxl_pipe> pp(new cxl_pipe), scratch(new cxl_pipe);
    cxl_pipe &p = *pp;
    uint64_t starts[] = {0, 1000, UINT64_MAX - 2500, rng.next() >> 1};
    uint64_t now = starts[seed % 4];
    rtl_unit::PipePhase ph = rtl_unit::kPipePhases[0];
    uint64_t next_reset = 0;
    bool ok = true;
    uint64_t accepted = 0, popped = 0, held = 0;

    top->clk = 0;
    top->ce = 1;
    for (uint64_t cyc = 0; cyc < kCycles && ok; cyc++) {
        ck.cycle = cyc;
        ck.now = now;
        top->now = now;
        if (cyc == next_reset) {
            uint32_t cap = kCaps[rng.below(sizeof kCaps / sizeof kCaps[0])];
            top->rst_n = 0;
            top->ce = rng.chance(50); // reset acts regardless of ce
            top->cap = cap;
            top->eval();
            top->clk = 1;
            top->eval();
            top->clk = 0;
            pipe_init(&p, cap > kDepth ? kDepth : cap);
            next_reset = cyc + 200 + rng.below(1500);
            now += 1;
            continue;
        }
        if (cyc % 150 == 0)
            ph = rtl_unit::pipe_phase(rng);

        bool ce = !rng.chance(4);
        bool push_first = rng.chance(50);
        uint32_t push_n = rng.chance(ph.push_pct) ? 1 + rng.below(kNPush) : 0;
        uint32_t pop_n = rng.chance(ph.pop_pct) ? 1 + rng.below(kK + 2) : 0;
        cxl_msg m[kNPush];
        for (uint32_t i = 0; i < kNPush; i++)
            m[i] = rtl_unit::random_msg(rng);
        uint64_t ready = ready_for(rng, now);

        top->rst_n = 1;
        top->ce = ce;
        top->push_first = push_first;
        top->push_n = push_n;
        clear(top->push_msg);
        for (uint32_t i = 0; i < kNPush; i++)
            for (int f = 0; f < 7; f++)
                put_bits(top->push_msg, static_cast<int>(kW * i) + rtl_unit::kMsgFields[f].lsb,
                         rtl_unit::kMsgFields[f].width, rtl_unit::msg_field(m[i], f));
        top->push_ready = ready;
        top->pop_n = pop_n;
        top->eval();

        // the C calls, in the same order; with ce = 0 on a copy
        cxl_pipe &q = ce ? p : *scratch;
        if (!ce)
            q = p;
        uint32_t count0 = pipe_count(&q), space0 = pipe_space(&q);
        uint32_t acc = 0;
        Win w;
        auto pushes = [&]() {
            for (uint32_t i = 0; i < push_n; i++)
                if (pipe_push(&q, &m[i], ready) == 0)
                    acc++;
        };
        if (push_first)
            pushes();
        w = window_of(q);
        for (uint32_t i = 0; i < pop_n; i++)
            pipe_pop(&q);
        if (!push_first)
            pushes();

        ok = ck.same("count", top->count, count0) && ck.same("space", top->space, space0) &&
             ck.same("push_acc", top->push_acc, acc) && ck.same("push_err", top->push_err, acc < push_n);
        for (uint32_t j = 0; j < kK && ok; j++) {
            char name[48];
            std::snprintf(name, sizeof name, "win_valid[%u]", j);
            ok = ck.same(name, (top->win_valid >> j) & 1u, w.valid[j]);
            std::snprintf(name, sizeof name, "win_rdy[%u]", j);
            ok = ok && ck.same(name, (top->win_rdy >> j) & 1u, w.valid[j] && w.ready[j] <= now);
            std::snprintf(name, sizeof name, "win_ready[%u]", j);
            ok = ok && ck.same(name, get_bits(top->win_ready, static_cast<int>(64 * j), 64), w.ready[j]);
            for (int f = 0; f < 7 && ok; f++) {
                const rtl_unit::MsgField &mf = rtl_unit::kMsgFields[f];
                std::snprintf(name, sizeof name, "win_msg[%u].%s", j, mf.name);
                ok = ck.same(name, get_bits(top->win_msg, static_cast<int>(kW * j) + mf.lsb, mf.width),
                             w.valid[j] ? rtl_unit::msg_field(w.msg[j], f) : 0);
            }
        }
        if (!ok)
            std::fprintf(stderr, "test_mpipe: push_first %d push_n %u pop_n %u ce %d cap %u\n", push_first, push_n,
                         pop_n, ce, p.cap);
        top->clk = 1;
        top->eval();
        top->clk = 0;
        if (ce) {
            accepted += acc;
            popped += pop_n;
            now += rng.chance(3) ? 2 + rng.below(100) : 1;
        } else {
            held++;
        }
    }
    top->final();
    if (ok)
        std::printf("test_mpipe: seed %" PRIu64 ": %d cycles (%" PRIu64 " with ce = 0), %" PRIu64
                    " pushes accepted, %" PRIu64 " pop calls\n",
                    seed, kCycles, held, accepted, popped);
    return ok;
}

} // namespace

int main()
{
    VerilatedContext ctx;
    const uint64_t seeds[] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (uint64_t s : seeds)
        if (!run_seed(ctx, s))
            return EXIT_FAILURE;
    std::printf("test_mpipe: DEPTH %u NPUSH %u K %u, %zu seeds x %d cycles: RTL and C agree\n", kDepth, kNPush, kK,
                sizeof seeds / sizeof seeds[0], kCycles);
    return EXIT_SUCCESS;
}

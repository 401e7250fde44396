// test_pipe.cpp - hw/rtl/pipe.v against cxl_pipe (hw/hls/pipe.h), cycle for cycle.
//
// Random pushes and pops in phases (filling, draining, balanced, both every cycle), resets with new
// capacities (0, 1, small, full DEPTH, above DEPTH: capped), both push/pop orders, ready cycles in the
// past, now, the future and all ones, `now` near 2^64 and jumping. Each cycle compares push_err, the
// head (valid, every message field, ready cycle), pipe_ready, pipe_ready_cls_bit, count and space.
#include <cstdlib>
#include <memory>

#include "Vpipe.h"
#include "rtl_unit.h"

extern "C" {
#include "pipe.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr int kCycles = 6000;

constexpr uint32_t kCaps[] = {0, 1, 2, 3, 7, 64, 255, 256, 257, 1000};

uint64_t ready_for(Rng &r, uint64_t now) { return rtl_unit::pipe_ready_cycle(r, now, 400); }

bool run_seed(VerilatedContext &ctx, uint64_t seed)
{
    std::unique_ptr<Vpipe> top(new Vpipe(&ctx, "pipe"));
    Rng rng(seed);
    Checker ck{"test_pipe"};
    ck.seed = seed;
    cxl_pipe p;
    uint64_t starts[] = {0, 1000, UINT64_MAX - 2500, rng.next() >> 1};
    uint64_t now = starts[seed % 4];
    rtl_unit::PipePhase ph = rtl_unit::kPipePhases[0];
    uint64_t next_reset = 0;
    bool ok = true;

    top->clk = 0;
    for (uint64_t cyc = 0; cyc < kCycles && ok; cyc++, now += rng.chance(3) ? 2 + rng.below(100) : 1) {
        ck.cycle = cyc;
        ck.now = now;
        top->now = now;
        if (cyc == next_reset) {
            uint32_t cap = kCaps[rng.below(sizeof kCaps / sizeof kCaps[0])];
            top->ce = 1;
    top->rst_n = 0;
            top->cap = cap;
            top->eval();
            top->clk = 1;
            top->eval();
            top->clk = 0;
            pipe_init(&p, cap);
            next_reset = cyc + 200 + rng.below(1500);
            continue;
        }
        if (cyc % 200 == 0)
            ph = rtl_unit::pipe_phase(rng);

        bool push_first = rng.chance(50);
        bool push = rng.chance(ph.push_pct), pop = rng.chance(ph.pop_pct);
        cxl_msg m = rtl_unit::random_msg(rng);
        uint64_t ready = ready_for(rng, now);
        top->rst_n = 1;
        top->push_first = push_first;
        top->push = push;
        rtl_unit::pack_msg(top->push_msg, m);
        top->push_ready = ready;
        top->pop = pop;
        top->eval();

        // the C model, in the same order
        uint32_t count0 = pipe_count(&p), space0 = pipe_space(&p);
        int err = 0;
        if (push && push_first)
            err = pipe_push(&p, &m, ready);
        const cxl_msg *h = pipe_head(&p);
        bool rdy = pipe_ready(&p, now) != nullptr;
        uint32_t cls_bit = pipe_ready_cls_bit(&p, now);
        uint64_t head_ready = p.head_ready;
        cxl_msg head = h ? *h : cxl_msg{};
        if (pop)
            pipe_pop(&p);
        if (push && !push_first)
            err = pipe_push(&p, &m, ready);

        ok = ck.same("count", top->count, count0) && ck.same("space", top->space, space0) &&
             ck.same("push_err", top->push_err, err == -1) && ck.same("head_valid", top->head_valid, h != nullptr) &&
             ck.same("head_ready", top->head_ready, head_ready) && ck.same("ready", top->ready, rdy) &&
             ck.same("ready_cls_bit", top->ready_cls_bit, cls_bit);
        for (int i = 0; i < 7 && ok; i++) {
            const rtl_unit::MsgField &f = rtl_unit::kMsgFields[i];
            char name[32];
            std::snprintf(name, sizeof name, "head_msg.%s", f.name);
            ok = ck.same(name, rtl_unit::get_bits(top->head_msg, f.lsb, f.width), rtl_unit::msg_field(head, i));
        }
        top->clk = 1;
        top->eval();
        top->clk = 0;
    }
    top->final();
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
    std::printf("test_pipe: %zu seeds x %d cycles: RTL and C agree\n", sizeof seeds / sizeof seeds[0], kCycles);
    return EXIT_SUCCESS;
}

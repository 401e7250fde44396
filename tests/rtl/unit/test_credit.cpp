// test_credit.cpp - hw/rtl/credit.v against cxl_credits (hw/hls/credit.c), cycle for cycle.
//
// Every class, with pools from 0 to above CXL_CREDIT_RING (capped), return delays 0 (same-cycle
// returns), 1, 24 (the asic preset) and up to CXL_MAX_DELAY - 1, both orders of returns and takes
// within a cycle, resets with new pools and delays at random cycles. Realistic seeds take only held
// credits and return only taken ones; stress seeds return at random (avail above the pool, pending
// returns reaching the ring size, dropped returns) and sometimes take without a credit (avail wraps
// like the C uint32_t). `now` advances by one per cycle (credit.v's contract). Each cycle compares,
// per class, avail and credit_have as the taker sees them and the returns pending (C: count[k]).
#include <cstdlib>
#include <memory>

#include "Vcredit.h"
#include "rtl_unit.h"

extern "C" {
#include "credit.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr int kCycles = 8000;
constexpr int kNW = 8; // credit.v NW
constexpr uint32_t kPools[] = {0, 1, 2, 4, 32, 64, 255, 256, 300, 0xffffffffu};
constexpr uint32_t kDelays[] = {0, 0, 1, 2, 24, 24, 300, CXL_MAX_DELAY - 1};

uint32_t word(const VlWide<4> &w, int k) { return w[k]; }

bool run_seed(VerilatedContext &ctx, uint64_t seed)
{
    std::unique_ptr<Vcredit> top(new Vcredit(&ctx, "credit"));
    Rng rng(seed);
    Checker ck{"test_credit"};
    ck.seed = seed;
    const bool stress = seed % 3 == 0;
    cxl_credits c;
    uint32_t outstanding[CXL_NCLASS] = {0}; // taken and not yet returned (realistic seeds)
    uint64_t now = seed % 2 ? 0 : (1ull << 62) + rng.below(1u << 30);
    uint64_t next_reset = 0;
    uint32_t ret_pct = 30, take_pct = 40;
    bool ok = true;

    top->clk = 0;
    for (uint64_t cyc = 0; cyc < kCycles && ok; cyc++, now++) {
        ck.cycle = cyc;
        ck.now = now;
        top->now = now;
        if (cyc == next_reset) {
            uint32_t pool[CXL_NCLASS];
            for (int k = 0; k < CXL_NCLASS; k++) {
                pool[k] = rng.chance(70) ? kPools[rng.below(sizeof kPools / sizeof kPools[0])] : rng.below(257);
                top->pool[k] = pool[k];
                outstanding[k] = 0;
            }
            uint32_t delay = rng.chance(80) ? kDelays[rng.below(sizeof kDelays / sizeof kDelays[0])]
                                            : rng.below(CXL_MAX_DELAY);
            top->delay = delay;
            top->ce = 1;
    top->rst_n = 0;
            top->eval();
            top->clk = 1;
            top->eval();
            top->clk = 0;
            credit_init(&c, pool, delay);
            next_reset = cyc + 300 + rng.below(3000);
            now += rng.below(1000); // time may jump across a reset
            continue;
        }
        if (cyc % 250 == 0) {
            ret_pct = rng.below(101);
            take_pct = rng.below(101);
        }

        // returns are decided before the takes (they may come first); at most 255 per class and cycle
        bool ret_first = rng.chance(50);
        uint32_t ret[CXL_NCLASS], take[CXL_NCLASS] = {0};
        uint32_t ret_packed = 0;
        for (int k = 0; k < CXL_NCLASS; k++) {
            uint32_t most = stress ? (rng.chance(5) ? 255 : 6) : outstanding[k];
            ret[k] = rng.chance(ret_pct) ? rng.below((most < 6 ? most : 6) + 1) : 0;
            if (stress && most == 255 && rng.chance(50))
                ret[k] = rng.below(256);
            ret_packed |= ret[k] << (kNW * k);
        }
        top->rst_n = 1;
        top->ret_first = ret_first;
        top->ret_n = ret_packed;
        top->take_n = 0;
        top->eval();

        // the C model, as model_cycle calls it: tick first, then returns and takes in the chosen order
        uint32_t pending0[CXL_NCLASS];
        for (int k = 0; k < CXL_NCLASS; k++)
            pending0[k] = c.count[k];
        credit_tick(&c, now);
        if (ret_first)
            for (uint32_t k = 0; k < CXL_NCLASS; k++)
                for (uint32_t i = 0; i < ret[k]; i++)
                    credit_return(&c, k, now);
        for (uint32_t k = 0; k < CXL_NCLASS && ok; k++) {
            char name[32];
            std::snprintf(name, sizeof name, "pending[%u]", k);
            ok = ck.same(name, word(top->pending, k), pending0[k]);
            std::snprintf(name, sizeof name, "avail[%u]", k);
            ok = ok && ck.same(name, word(top->avail, k), c.avail[k]);
            std::snprintf(name, sizeof name, "have[%u]", k);
            ok = ok && ck.same(name, (top->have >> k) & 1u, credit_have(&c, k) != 0);
        }
        // takes as a sender would: only held credits (stress seeds: now and then one without)
        uint32_t take_packed = 0;
        for (uint32_t k = 0; k < CXL_NCLASS; k++) {
            uint32_t held = c.avail[k] < 6 ? c.avail[k] : 6;
            take[k] = rng.chance(take_pct) ? rng.below(held + 1) : 0;
            if (stress && held == 0 && rng.chance(1))
                take[k] = 1;
            for (uint32_t i = 0; i < take[k]; i++)
                credit_take(&c, k);
            outstanding[k] += take[k];
            take_packed |= take[k] << (kNW * k);
        }
        if (!ret_first)
            for (uint32_t k = 0; k < CXL_NCLASS; k++)
                for (uint32_t i = 0; i < ret[k]; i++)
                    credit_return(&c, k, now);
        for (int k = 0; k < CXL_NCLASS; k++)
            outstanding[k] -= ret[k] < outstanding[k] ? ret[k] : outstanding[k];
        top->take_n = take_packed;
        top->eval();
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
    const uint64_t seeds[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    for (uint64_t s : seeds)
        if (!run_seed(ctx, s))
            return EXIT_FAILURE;
    std::printf("test_credit: %zu seeds x %d cycles: RTL and C agree\n", sizeof seeds / sizeof seeds[0], kCycles);
    return EXIT_SUCCESS;
}

// test_dram_map.cpp - hw/rtl/dram_map.v (the parameters' decode sampled at reset, the address mapped
// combinationally) against dram_map() (hw/hls/dram_map.h).
//
// For every preset of rtl_dram_presets.h, with and without bank_hash, and for random legal field orders
// and widths: random addresses (full 64 bits, small, near the capacity edge, one-hot), every output field
// compared.
#include <memory>

#include "Vdram_map.h"
#include "rtl_dram_presets.h"
#include "rtl_unit.h"

extern "C" {
#include "dram_map.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr int kAddrs = 4000;

uint64_t random_addr(Rng &r, const cxl_dram_params &p)
{
    uint32_t total = 6;
    for (uint32_t f = 0; f < CXL_MAP_NFIELDS; f++)
        total += p.bits[f];
    switch (r.below(4)) {
    case 0: return r.next();
    case 1: return r.next() & ((1ull << total) - 1);
    case 2: return (1ull << r.below(64)) | (r.next() & 0xfff);
    default: return r.below(1u << 20);
    }
}

bool check(Vdram_map &top, const cxl_dram_params &p, Rng &r, Checker &ck)
{
    top.map_order = 0;
    top.map_bits = 0;
    for (uint32_t i = 0; i < CXL_MAP_NFIELDS; i++) {
        top.map_order |= static_cast<uint32_t>(p.map[i]) << (3 * i);
        top.map_bits |= static_cast<uint64_t>(p.bits[i]) << (6 * i);
    }
    top.bank_hash = p.bank_hash ? 1 : 0;
    // the parameters' decode is sampled at reset
    top.rst_n = 0;
    top.clk = 0;
    top.eval();
    top.clk = 1;
    top.eval();
    top.clk = 0;
    top.rst_n = 1;
    bool ok = true;
    for (int k = 0; k < kAddrs && ok; k++) {
        uint64_t a = random_addr(r, p);
        top.addr = a;
        top.eval();
        cxl_dram_addr o;
        dram_map(&p, a, &o);
        ck.cycle = static_cast<uint64_t>(k);
        ck.now = a;
        ok = ck.same("ch", top.ch, o.ch) && ck.same("rank", top.rank, o.rank) && ck.same("bg", top.bg, o.bg) &&
             ck.same("bank", top.bank, o.bank) && ck.same("row", top.row, o.row) && ck.same("col", top.col, o.col);
    }
    return ok;
}

// A random permutation of the six fields (sometimes with one field twice) with random widths (sum <= 58, each < 32 as dram_map's 32-bit
// values need; bank group + bank < 32 for the hash's mask).
cxl_dram_params random_params(Rng &r)
{
    cxl_dram_params p{};
    uint8_t order[CXL_MAP_NFIELDS] = {0, 1, 2, 3, 4, 5};
    for (uint32_t i = CXL_MAP_NFIELDS - 1; i > 0; i--) {
        uint32_t j = r.below(i + 1);
        uint8_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (uint32_t i = 0; i < CXL_MAP_NFIELDS; i++)
        p.map[i] = order[i];
    // now and then a field twice (and another not at all): the later place wins, as in the C
    if (r.below(5) == 0)
        p.map[r.below(CXL_MAP_NFIELDS)] = p.map[r.below(CXL_MAP_NFIELDS)];
    uint32_t caps[CXL_MAP_NFIELDS] = {3, 3, 4, 4, 24, 12};
    for (uint32_t f = 0; f < CXL_MAP_NFIELDS; f++)
        p.bits[f] = r.below(caps[f] + 1);
    p.bank_hash = r.below(2);
    return p;
}

} // namespace

int main(int argc, char **argv)
{
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    std::unique_ptr<Vdram_map> top(new Vdram_map(&ctx, "dram_map"));
    Checker ck{"test_dram_map"};
    bool ok = true;
    uint64_t seed = 1;
    for (const auto &pr : rtl_unit::kDramPresets) {
        for (uint32_t hash = 0; hash < 2 && ok; hash++, seed++) {
            Rng r(seed);
            ck.seed = seed;
            cxl_dram_params p = pr.p;
            p.bank_hash = hash;
            ok = check(*top, p, r, ck);
            if (!ok)
                std::fprintf(stderr, "test_dram_map: preset %s bank_hash %u\n", pr.name, hash);
        }
    }
    for (int k = 0; k < 200 && ok; k++, seed++) {
        Rng r(seed);
        ck.seed = seed;
        cxl_dram_params p = random_params(r);
        ok = check(*top, p, r, ck);
    }
    top->final();
    if (!ok)
        return 1;
    std::printf("test_dram_map: %" PRIu64 " parameter sets x %d addresses equal\n", seed - 1, kAddrs);
    return 0;
}

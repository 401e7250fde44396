// rtl_unit.h - what the unit equivalence tests share: a seeded generator, the cxl_msg packing of
// hw/rtl/cxl_defs.vh in C++, and the first-mismatch report.
//
// A test drives one verilated hw/rtl module and the hw/hls functions of the same concept with the same
// inputs, compares every output every cycle, and stops at the first difference: seed, cycle, signal,
// both values; the process exits non-zero. Everything is deterministic (fixed seeds, no wall clock).
#ifndef RTL_UNIT_H
#define RTL_UNIT_H

#include <cinttypes>
#include <cstdint>
#include <cstdio>

#include <verilated.h>

extern "C" {
#include "cxl_types.h"
}

namespace rtl_unit {

// splitmix64: small, seedable, the same sequence on every platform
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next()
    {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    uint32_t below(uint32_t n) { return n ? static_cast<uint32_t>(next() % n) : 0; }
    bool chance(uint32_t percent) { return below(100) < percent; }
};

// Field offsets of hw/rtl/cxl_defs.vh (`CXL_MSG_*), least significant first.
constexpr int kMsgWords = 4; // 120 bits
struct MsgField {
    const char *name;
    int lsb, width;
};
constexpr MsgField kMsgFields[] = {
    {"addr", 0, 64},  {"tag", 64, 16},  {"req", 80, 8},      {"cls", 88, 8},
    {"host", 96, 8},  {"dev", 104, 8},  {"devload", 112, 8},
};

inline uint64_t msg_field(const cxl_msg &m, int i)
{
    switch (i) {
    case 0: return m.addr;
    case 1: return m.tag;
    case 2: return m.req;
    case 3: return m.cls;
    case 4: return m.host;
    case 5: return m.dev;
    default: return m.devload;
    }
}

// bits [lsb, lsb + width) of a wide port (any number of words)
template <size_t N> void put_bits(VlWide<N> &w, int lsb, int width, uint64_t v)
{
    for (int b = 0; b < width; b++) {
        uint32_t bit = static_cast<uint32_t>((v >> b) & 1u);
        int at = lsb + b;
        w[at / 32] = (w[at / 32] & ~(1u << (at % 32))) | (bit << (at % 32));
    }
}

template <size_t N> uint64_t get_bits(const VlWide<N> &w, int lsb, int width)
{
    uint64_t v = 0;
    for (int b = 0; b < width; b++)
        v |= static_cast<uint64_t>((w[(lsb + b) / 32] >> ((lsb + b) % 32)) & 1u) << b;
    return v;
}

// every bit of a port 0
template <size_t N> void clear(VlWide<N> &w)
{
    for (size_t i = 0; i < N; i++)
        w[i] = 0;
}
inline void clear(uint64_t &w) { w = 0; }
inline void clear(uint32_t &w) { w = 0; }

// the same for a narrow port (Verilator's plain integer for up to 64 bits), with the parameter's defaults
template <typename T> void put_bits(T &w, int lsb, int width, uint64_t v)
{
    uint64_t m = (width >= 64 ? ~0ull : (1ull << width) - 1) << lsb;
    w = static_cast<T>((static_cast<uint64_t>(w) & ~m) | ((v << lsb) & m));
}
inline uint64_t get_bits(uint64_t w, int lsb, int width)
{
    return (w >> lsb) & (width >= 64 ? ~0ull : (1ull << width) - 1);
}

inline void pack_msg(VlWide<kMsgWords> &w, const cxl_msg &m)
{
    for (int i = 0; i < kMsgWords; i++)
        w[i] = 0;
    for (int i = 0; i < 7; i++)
        put_bits(w, kMsgFields[i].lsb, kMsgFields[i].width, msg_field(m, i));
}

inline cxl_msg random_msg(Rng &r)
{
    cxl_msg m{};
    m.addr = r.next();
    m.tag = static_cast<uint16_t>(r.next());
    m.req = static_cast<uint8_t>(r.next());
    // mostly the four classes; sometimes any byte (the class bit uses cls mod 32)
    m.cls = static_cast<uint8_t>(r.chance(90) ? r.below(CXL_NCLASS) : r.next());
    m.host = static_cast<uint8_t>(r.next());
    m.dev = static_cast<uint8_t>(r.next());
    m.devload = static_cast<uint8_t>(r.below(4));
    return m;
}

// A pipe test's traffic phases: the chance (percent) of any pushes and of any pops in a cycle; each
// phase lasts a while (fill, drain, balanced, bursts both ways, only pushes, only pops, mixed).
struct PipePhase {
    uint32_t push_pct, pop_pct;
};
constexpr PipePhase kPipePhases[] = {{90, 10}, {10, 90}, {50, 50}, {100, 100}, {100, 0}, {0, 100}, {70, 60}};
inline PipePhase pipe_phase(Rng &r) { return kPipePhases[r.below(sizeof kPipePhases / sizeof kPipePhases[0])]; }

// A ready cycle for a pipe test's push: in the past (wrapping below 0 as the C does), now, up to `span`
// cycles ahead, never (all ones) or anywhere.
inline uint64_t pipe_ready_cycle(Rng &r, uint64_t now, uint32_t span)
{
    uint32_t pick = r.below(100);
    if (pick < 25)
        return now - r.below(50);
    if (pick < 50)
        return now;
    if (pick < 90)
        return now + 1 + r.below(span);
    if (pick < 95)
        return UINT64_MAX;
    return r.next();
}

// A fixed path delay for the delay-pipe tests: 0, 1, 2, small, large, beyond any run, or random below 100.
inline uint32_t path_delay(Rng &r)
{
    static const uint32_t fixed[] = {0, 1, 2, 3, 7, 40, 200, 5000, UINT32_MAX};
    return r.chance(80) ? fixed[r.below(sizeof fixed / sizeof fixed[0])] : r.below(100);
}

// A delay-pipe test's reset: a new delay (path_delay) and a start cycle `now` (0, just below 2^32 so the
// low 32 bits wrap while entries wait, far on, or `far_start`, drawn once per seed); the reset acts
// regardless of ce, so ce is random in it. The caller then empties its C pipe.
struct DelayPathReset {
    uint64_t now;
    uint32_t delay;
};
template <typename V> DelayPathReset reset_delay_path(V &top, Rng &r, uint64_t far_start)
{
    const uint64_t starts[] = {0, (1ull << 32) - 3000, (1ull << 40) - 2000, far_start};
    DelayPathReset d{starts[r.below(4)], path_delay(r)};
    top.rst_n = 0;
    top.ce = r.chance(50);
    top.delay = d.delay;
    top.eval();
    top.clk = 1;
    top.eval();
    top.clk = 0;
    return d;
}

// The first mismatch: returns false after printing it, so callers write `ok = ok && same(...)`.
struct Checker {
    const char *test;
    uint64_t seed = 0, cycle = 0, now = 0;
    bool same(const char *signal, uint64_t rtl, uint64_t c) const
    {
        if (rtl == c)
            return true;
        std::fprintf(stderr,
                     "%s: MISMATCH seed %" PRIu64 " cycle %" PRIu64 " (now %" PRIu64 "): %s: rtl %" PRIu64
                     " (0x%" PRIx64 "), c %" PRIu64 " (0x%" PRIx64 ")\n",
                     test, seed, cycle, now, signal, rtl, rtl, c, c);
        return false;
    }
};

} // namespace rtl_unit

#endif

// test_cxl_model.cpp - the whole model, hw/rtl/cxl_model.v against hw/hls/cxl_model.c, model cycle for
// model cycle.
//
// For every device preset (direct link, DDR4, two channels, x16, switch, pooled 2x2 and 4x4, the local
// reference path) and several seeds: random descriptor streams (mixes, sizes, patterns, addresses,
// requesters, gaps, bursts of submissions that fill the queues and quiet stretches that let the model
// drain), submitted to both between model cycles. After every model cycle the test compares now, the
// number of buffered completions, every completion drained (id, start and end cycle, requester, lines),
// idle and model_error; at checkpoints and at the end, every 64-bit word of cxl_stats. The first
// difference prints preset, seed, cycle, what differs and both values, and fails the test.
// The even seeds run the model cycle by cycle (run_until = 0: no idle skip); the odd seeds let the RTL
// skip idle stretches (run_until up to 2^24 cycles ahead: one `run` may cross k quiet cycles or whole
// refresh periods, cxl_model.v, and none past run_until) and run the
// C to the cycle the RTL reached, then compare the same way; they submit fewer and smaller descriptors and
// hold them back longer (not_before up to 2^20 cycles ahead), so that the model is often quiet and
// refreshes and whole refresh periods fall inside the skipped stretches.
// CXLSIM_SANITIZED (ASan/UBSan builds) shortens the runs; CXLSIM_MODEL_TEST_CYCLES sets the cycles per
// run, CXLSIM_MODEL_TEST_VERBOSE prints progress; an argument limits the run to one preset.
// Built with -DCXLSIM_RTL_MODEL_TEST=ON (the whole verilated model takes long to compile; docs/rtl.md).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "Vcxl_model.h"
#include "rtl_unit.h"

extern "C" {
#include "cxl_model.h"
#include "config/devcfg.h"
#include "util/err.h"
}

using rtl_unit::Rng;

namespace {

#ifdef CXLSIM_SANITIZED
constexpr uint64_t kCycles = 1500;
constexpr int kSeeds = 2;
#else
const uint64_t kCycles = getenv("CXLSIM_MODEL_TEST_CYCLES") ? strtoull(getenv("CXLSIM_MODEL_TEST_CYCLES"), nullptr, 10) : 40000;
constexpr int kSeeds = 2;
#endif

struct Bench {
    std::unique_ptr<Vcxl_model> top;
    uint64_t clocks = 0;
    void tick()
    {
        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
        clocks++;
    }
};

cxl_desc random_desc(Rng &r, const cxl_params &p, uint64_t now, uint64_t id, uint32_t req, bool far)
{
    cxl_desc d{};
    d.id = id;
    d.requester = static_cast<uint16_t>(req);
    d.base = (r.next() & 0x3ffffffull) << 6;
    // the skipping seeds: small descriptors, often held back far, so that the model is often quiet
    uint32_t lines = far ? 1 + r.below(16) : r.chance(30) ? 1 + r.below(4) : 1 + r.below(r.chance(20) ? 2000 : 200);
    d.bytes = static_cast<uint64_t>(lines) * 64;
    d.footprint = r.chance(50) ? 0 : static_cast<uint64_t>(lines + r.below(r.chance(10) ? 1u << 22 : 4096)) * 64;
    if (far)
        d.not_before = r.chance(40) ? 0 : now + r.below(r.chance(30) ? 1u << 20 : 3000);
    else
        d.not_before = r.chance(70) ? 0 : now + r.below(r.chance(10) ? 5000 : 300);
    d.pattern = static_cast<uint8_t>(r.below(3));
    uint64_t fp = d.footprint ? d.footprint : d.bytes;
    if (d.pattern == CXL_PAT_STRIDE) {
        if (fp <= 64)
            d.pattern = CXL_PAT_SEQ;
        else
            d.stride = static_cast<uint32_t>((1 + r.below(static_cast<uint32_t>(fp / 64 - 1 < 64 ? fp / 64 - 1 : 64))) * 64);
    }
    d.seed = static_cast<uint32_t>(r.next());
    d.gap_cycles = r.chance(60) ? 0 : r.below(r.chance(10) ? 200 : 8);
    d.max_outstanding = static_cast<uint16_t>(1 + r.below(p.tags));
    if (r.chance(40))
        d.max_outstanding = static_cast<uint16_t>(p.tags);
    d.rd_weight = static_cast<uint8_t>(r.below(4));
    d.wr_weight = static_cast<uint8_t>(r.below(3));
    return d;
}

void put_desc(Vcxl_model &t, const cxl_desc &d)
{
    uint32_t w[16];
    static_assert(sizeof(cxl_desc) == 64, "cxl_desc is 64 bytes (hw/rtl/cxl_layout.vh)");
    std::memcpy(w, &d, sizeof d);
    for (int i = 0; i < 16; i++)
        t.sub_desc[i] = w[i];
}

struct Run {
    const char *preset;
    uint64_t seed;
    uint64_t cycle = 0;
    bool fail(const std::string &what, uint64_t rtl, uint64_t c)
    {
        std::fprintf(stderr,
                     "test_cxl_model: MISMATCH preset %s seed %" PRIu64 " cycle %" PRIu64 ": %s: rtl %" PRIu64
                     " (0x%" PRIx64 "), c %" PRIu64 " (0x%" PRIx64 ")\n",
                     preset, seed, cycle, what.c_str(), rtl, rtl, c, c);
        return false;
    }
};

std::string stat_name(uint32_t w)
{
    // enough to find the field: the word index and, for the big parts, where it is
    const uint32_t hist_words = static_cast<uint32_t>(sizeof(cxl_hist) / 8);
    const uint32_t rl = static_cast<uint32_t>(offsetof(cxl_stats, read_lat) / 8);
    const uint32_t wl = static_cast<uint32_t>(offsetof(cxl_stats, write_lat) / 8);
    const uint32_t lk = static_cast<uint32_t>(offsetof(cxl_stats, link) / 8);
    const uint32_t dv = static_cast<uint32_t>(offsetof(cxl_stats, dev) / 8);
    char b[96];
    if (w >= rl && w < rl + hist_words)
        std::snprintf(b, sizeof b, "stats word %u (read_lat +%u)", w, w - rl);
    else if (w >= wl && w < wl + hist_words)
        std::snprintf(b, sizeof b, "stats word %u (write_lat +%u)", w, w - wl);
    else if (w >= lk && w < dv)
        std::snprintf(b, sizeof b, "stats word %u (link[%u] +%u)", w, (w - lk) / 14, (w - lk) % 14);
    else if (w >= dv && w < dv + 4 * 13)
        std::snprintf(b, sizeof b, "stats word %u (dev[%u] +%u)", w, (w - dv) / 13, (w - dv) % 13);
    else
        std::snprintf(b, sizeof b, "stats word %u", w);
    return b;
}

bool compare_stats(Bench &b, const cxl_model &m, Run &run)
{
    const uint32_t n = static_cast<uint32_t>(sizeof(cxl_stats) / 8);
    std::vector<uint64_t> c(n);
    std::memcpy(c.data(), &m.st, sizeof m.st);
    b.top->st_rd = 1;   // a read-out clock (the histogram RAM's read port serves it only then)
    for (uint32_t w = 0; w < n; w++) {
        b.top->st_addr = static_cast<uint16_t>(w);
        b.tick();   // the address is decoded
        b.tick();   // the word is selected (cxl_model.v: st_data two clocks after st_addr)
        if (b.top->st_data != c[w]) {
            b.top->st_rd = 0;
            return run.fail(stat_name(w), b.top->st_data, c[w]);
        }
    }
    b.top->st_rd = 0;
    return true;
}

bool run_one(VerilatedContext &ctx, const char *preset, uint64_t seed)
{
    static cxl_model m;
    cxl_params p;
    devcfg dc;
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load(preset, &dc, &e) || devcfg_to_params(&dc, &p, &e)) {
        std::fprintf(stderr, "test_cxl_model: %s: %s\n", preset, e.msg);
        return false;
    }
    Run run{preset, seed};
    Rng rng(seed);
    cxl_model_init(&m, &p);
    Bench b;
    b.top.reset(new Vcxl_model(&ctx, "cxl_model"));
    static_assert(sizeof(cxl_params) % 4 == 0, "cxl_params is whole 32-bit words");
    uint32_t pw[sizeof(cxl_params) / 4];
    std::memcpy(pw, &p, sizeof p);
    for (size_t i = 0; i < sizeof pw / 4; i++)
        b.top->prm[i] = pw[i];
    b.top->rst_n = 0;
    b.top->run = 0;
    b.top->sub_valid = 0;
    b.top->comp_pop = 0;
    b.top->st_addr = 0;
    b.tick();
    b.tick();
    b.top->rst_n = 1;
    b.top->eval();
    while (!b.top->at_boundary)
        b.tick();

    const bool skips = seed % 2 != 0;
    b.top->run_until = 0;
    uint64_t next_id = 1, submitted = 0, completed = 0, refused = 0, skipped = 0, jumps = 0;
    uint32_t burst = 0, hush = 0;
    const uint64_t checkpoint = kCycles / 2;
    for (run.cycle = 0; run.cycle < kCycles; run.cycle++) {
        // submissions between model cycles: bursts that fill queues, then quiet stretches; the skipping
        // seeds also go 600 model steps without any submission now and then, long enough for the DRAM's
        // refresh state to repeat and the RTL to jump whole periods (a submission forgets its copy)
        if (skips && hush == 0 && rng.below(1000) == 0)
            hush = 600;
        if (burst == 0 && rng.chance(skips ? 1 : 2))
            burst = 1 + rng.below(rng.chance(30) ? 200 : 10);
        uint32_t n_sub = burst && rng.chance(60) ? 1 + rng.below(4) : 0;
        if (hush) {
            hush--;
            n_sub = 0;
        }
        for (uint32_t k = 0; k < n_sub && run.cycle < kCycles * 3 / 4; k++) {
            uint32_t req = rng.below(p.requesters);
            cxl_desc d = random_desc(rng, p, m.now, next_id, req, skips);
            int c_refused = cxl_model_submit(&m, &d) != 0;
            put_desc(*b.top, d);
            b.top->sub_valid = 1;
            b.top->eval();
            if (b.top->sub_ready != !c_refused)
                return run.fail("sub_ready", b.top->sub_ready, !c_refused);
            b.tick();
            b.top->sub_valid = 0;
            if (c_refused)
                refused++;
            else
                submitted++;
            next_id++;
        }
        if (burst)
            burst--;
        if (getenv("CXLSIM_MODEL_TEST_VERBOSE") && run.cycle % 1000 == 0)
            std::fprintf(stderr, "cycle %" PRIu64 " clocks %" PRIu64 " sub %" PRIu64 " done %" PRIu64 "\n", run.cycle, b.clocks, submitted, completed);
        // one model cycle (or an idle skip of several), the C first when there is no skip
        const uint64_t before = b.top->now;
        if (!skips)
            cxl_model_run(&m, m.now + 1, 0);
        else // a skip or jump ends at run_until: near (it shrinks jumps) or far
            b.top->run_until = before + (rng.chance(20) ? 1 + rng.below(20000) : 1ull << 24);
        // a run that shrinks a period jump (cxl_model.v) moves nothing: run again, as the kernel does
        for (int again = 0; again < 70 && (again == 0 || (skips && b.top->now == before)); again++) {
            b.top->run = 1;
            b.top->eval();
            b.tick();
            b.top->run = 0;
            b.top->eval();
            int guard = 0;
            while (!b.top->at_boundary) {
                b.tick();
                if (++guard > 100000)
                    return run.fail("model cycle did not finish (clocks)", guard, 0);
            }
        }
        if (skips) {
            if (b.top->now <= before)
                return run.fail("now did not advance", b.top->now, before);
            skipped += b.top->now - before - 1;
            // a skip stops at the next refresh deadline, at most tREFI ahead: more is a period jump
            if (p.dram.refresh != CXL_REF_OFF && b.top->now - before > p.dram.tREFI)
                jumps++;
            cxl_model_run(&m, b.top->now, 0);
        }
        if (b.top->now != m.now)
            return run.fail("now", b.top->now, m.now);
        if (b.top->comp_count != m.comp_count)
            return run.fail("comp_count", b.top->comp_count, m.comp_count);
        if (b.top->model_error != m.model_error)
            return run.fail("model_error", b.top->model_error, m.model_error);
        int c_idle = cxl_model_idle(&m);
        if (b.top->idle != c_idle)
            return run.fail("idle", b.top->idle, static_cast<uint64_t>(c_idle));
        // drain and compare completions
        while (m.comp_count) {
            cxl_completion c;
            cxl_model_drain(&m, &c, 1);
            uint32_t w[8];
            for (int i = 0; i < 8; i++)
                w[i] = b.top->comp_head[i];
            cxl_completion r;
            static_assert(sizeof r == 32, "cxl_completion is 32 bytes");
            std::memcpy(&r, w, sizeof r);
            if (r.id != c.id)
                return run.fail("completion id", r.id, c.id);
            if (r.start_cycle != c.start_cycle)
                return run.fail("completion " + std::to_string(c.id) + " start_cycle", r.start_cycle, c.start_cycle);
            if (r.end_cycle != c.end_cycle)
                return run.fail("completion " + std::to_string(c.id) + " end_cycle", r.end_cycle, c.end_cycle);
            if (r.requester != c.requester)
                return run.fail("completion " + std::to_string(c.id) + " requester", r.requester, c.requester);
            if (r.lines != c.lines)
                return run.fail("completion " + std::to_string(c.id) + " lines", r.lines, c.lines);
            b.top->comp_pop = 1;
            b.tick();
            b.top->comp_pop = 0;
            b.top->eval();
            completed++;
        }
        if (run.cycle == checkpoint && !compare_stats(b, m, run))
            return false;
    }
    if (!compare_stats(b, m, run))
        return false;
    b.top->final();
    std::printf("test_cxl_model: %-10s seed %" PRIu64 ": %" PRIu64 " model steps (%" PRIu64 " clocks, %" PRIu64
                " cycles skipped, %" PRIu64 " in period jumps), %" PRIu64 " descriptors (%" PRIu64 " refused), %" PRIu64
                " completed, %" PRIu64 " B read, %" PRIu64 " B written: equal\n",
                preset, seed, kCycles, b.clocks, skipped, jumps, submitted, refused, completed, m.st.read_bytes,
                m.st.write_bytes);
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    const char *presets[] = {"asic", "asic-ddr4", "cz120", "asic-x16", "fpga", "asic-switch",
                             "pool-2x2", "pool-4x4", "pool-4x1", "local-ddr5"};
    const char *only = argc > 1 && argv[1][0] != '+' ? argv[1] : nullptr;
    for (const char *pr : presets) {
        if (only && std::strcmp(only, pr))
            continue;
        for (int s = 0; s < kSeeds; s++)
            if (!run_one(ctx, pr, 1000 + static_cast<uint64_t>(s)))
                return 1;
    }
    return 0;
}

// test_requester.cpp - hw/rtl/requester.v against requester_submit / requester_complete /
// requester_issue / requester_quiet_until (hw/hls/requester.h), clock for clock.
//
// Random descriptors (SEQ, STRIDE, RANDOM; footprints, weights including 0:0, gaps, not_before,
// max_outstanding), responses for random outstanding tags in random order, the host path's room
// toggling, several clocks with the same `now` (several responses in one model cycle), tag counts from 1
// to above 256. Each clock, in the C's order (complete, issue, submit), compares sub_ready, the
// completion record and latency, iss_valid and every message field, and quiet_until.
#include <memory>
#include <vector>

#include "Vrequester.h"
#include "rtl_unit.h"

extern "C" {
#include "requester.h"
#include "stats.h"
}

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr int kCycles = 6000;

cxl_desc random_desc(Rng &r, uint64_t now, uint64_t id)
{
    cxl_desc d{};
    d.id = r.chance(10) ? r.next() : id;
    d.base = (r.next() & 0xffffffffffull) << 6;
    uint32_t lines = r.chance(30) ? 1 + r.below(3) : 1 + r.below(48);
    d.bytes = static_cast<uint64_t>(lines) * 64;
    d.footprint = r.chance(40) ? 0 : static_cast<uint64_t>(1 + r.below(r.chance(10) ? 1u << 20 : 300)) * 64;
    d.not_before = r.chance(50) ? 0 : now + r.below(200);
    d.stride = (1 + r.below(64)) * 64;
    d.seed = static_cast<uint32_t>(r.next());
    d.gap_cycles = r.chance(50) ? 0 : r.below(6);
    d.requester = static_cast<uint16_t>(r.below(16));
    d.max_outstanding = static_cast<uint16_t>(1 + r.below(r.chance(20) ? 300 : 12));
    d.pattern = static_cast<uint8_t>(r.below(3));
    d.rd_weight = static_cast<uint8_t>(r.below(4));
    d.wr_weight = static_cast<uint8_t>(r.below(4));
    if (r.chance(5))
        d.rd_weight = static_cast<uint8_t>(r.next());
    return d;
}

void drive_desc(Vrequester &t, const cxl_desc &d)
{
    t.sub_id = d.id;
    t.sub_base = d.base;
    t.sub_bytes = d.bytes;
    t.sub_footprint = d.footprint;
    t.sub_not_before = d.not_before;
    t.sub_stride = d.stride;
    t.sub_seed = d.seed;
    t.sub_gap_cycles = d.gap_cycles;
    t.sub_requester = d.requester;
    t.sub_max_outstanding = d.max_outstanding;
    t.sub_pattern = d.pattern;
    t.sub_rd_weight = d.rd_weight;
    t.sub_wr_weight = d.wr_weight;
}

bool run(VerilatedContext &ctx, uint64_t seed, uint32_t tags, Checker &ck)
{
    std::unique_ptr<Vrequester> top(new Vrequester(&ctx, "requester"));
    Rng rng(seed);
    ck.seed = seed;
    static cxl_requester req; // large (256-entry tag arrays): not on the stack
    static cxl_stats st;
    requester_init(&req, tags);
    st = cxl_stats{};
    uint32_t idx = rng.below(16), host = rng.below(4);
    uint64_t now = (seed & 1) ? 0 : (1ull << 36);
    std::vector<uint16_t> outstanding;
    top->tags = tags;
    top->idx = idx;
    top->host = host;
    top->now = now;
    top->clk = 0;
    top->ce = 1;
    top->rst_n = 0;
    top->sub_valid = top->rsp_valid = top->iss_en = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    top->clk = 0;
    top->rst_n = 1;
    top->eval();
    uint64_t next_id = 1, issued = 0, completed = 0;
    bool ok = true;
    uint32_t rsp_pct = 30 + rng.below(60), sub_pct = 5 + rng.below(40);
    for (int cyc = 0; cyc < kCycles && ok; cyc++) {
        ck.cycle = static_cast<uint64_t>(cyc);
        ck.now = now;
        top->now = now;
        // quiet_until before this clock's operations
        top->rsp_valid = top->iss_en = top->sub_valid = 0;
        top->eval();
        ok = ck.same("quiet_until", top->quiet_until, requester_quiet_until(&req)) &&
             ck.same("space", top->space, requester_space(&req));
        if (!ok)
            break;
        if (rng.chance(5)) {
            // a clock without enable: random inputs, no state change (the C is not called)
            top->ce = 0;
            top->rsp_valid = rng.chance(50);
            top->rsp_tag = static_cast<uint8_t>(rng.below(256));
            top->iss_en = rng.chance(50);
            top->sub_valid = rng.chance(50);
            top->clk = 1;
            top->eval();
            top->clk = 0;
            top->ce = 1;
            top->rsp_valid = top->iss_en = top->sub_valid = 0;
            top->eval();
        }
        // a submit takes a clock of its own before the model step's clock (the C submits between model
        // cycles, cxl_model_submit; requester.v's slot tables rely on it)
        if (rng.chance(sub_pct)) {
            cxl_desc d = random_desc(rng, now, next_id);
            top->sub_valid = 1;
            drive_desc(*top, d);
            top->eval();
            int refused = requester_space(&req) == 0;
            ok = ck.same("sub_ready", top->sub_ready, !refused) && ck.same("comp_valid", top->comp_valid, 0) &&
                 ck.same("iss_valid", top->iss_valid, 0);
            if (!ok)
                break;
            if (!refused) {
                requester_submit(&req, &d);
                next_id++;
            }
            top->clk = 1;
            top->eval();
            top->clk = 0;
            top->sub_valid = 0;
            top->eval();
        }
        bool rsp = !outstanding.empty() && rng.chance(rsp_pct);
        uint16_t tag = 0;
        if (rsp) {
            uint32_t k = rng.below(static_cast<uint32_t>(outstanding.size()));
            tag = outstanding[k];
            outstanding[k] = outstanding.back();
            outstanding.pop_back();
        }
        bool en = rng.chance(85);
        top->rsp_valid = rsp;
        top->rsp_tag = tag;
        top->iss_en = en;
        top->eval();
        // C, in the same order
        if (rsp) {
            cxl_completion c{};
            uint64_t rcount = st.read_lat.count, rsum = st.read_lat.sum, wsum = st.write_lat.sum;
            int fin = requester_complete(&req, tag, now, &st, &c);
            bool wr = st.read_lat.count == rcount;
            uint64_t lat = wr ? st.write_lat.sum - wsum : st.read_lat.sum - rsum;
            ok = ck.same("comp_valid", top->comp_valid, static_cast<uint64_t>(fin)) &&
                 ck.same("rsp_write", top->rsp_write, wr) && ck.same("rsp_lat", top->rsp_lat, lat);
            if (ok && fin) {
                completed++;
                ok = ck.same("comp_id", top->comp_id, c.id) &&
                     ck.same("comp_start_cycle", top->comp_start_cycle, c.start_cycle) &&
                     ck.same("comp_end_cycle", top->comp_end_cycle, c.end_cycle) &&
                     ck.same("comp_requester", top->comp_requester, c.requester) &&
                     ck.same("comp_lines", top->comp_lines, c.lines);
            }
        } else {
            ok = ck.same("comp_valid", top->comp_valid, 0);
        }
        if (ok && en) {
            cxl_msg m{};
            int got = requester_issue(&req, idx, host, now, &m);
            ok = ck.same("iss_valid", top->iss_valid, static_cast<uint64_t>(got));
            for (int f = 0; ok && got && f < 7; f++)
                ok = ck.same(rtl_unit::kMsgFields[f].name,
                             rtl_unit::get_bits(top->iss_msg, rtl_unit::kMsgFields[f].lsb,
                                                rtl_unit::kMsgFields[f].width),
                             rtl_unit::msg_field(m, f));
            if (got) {
                outstanding.push_back(m.tag);
                issued++;
            }
        } else if (ok) {
            ok = ck.same("iss_valid", top->iss_valid, 0);
        }
        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
        now += rng.chance(25) ? 0 : (rng.chance(3) ? 1 + rng.below(50) : 1);
    }
    top->final();
    if (ok)
        std::printf("test_requester: seed %" PRIu64 " tags %u: %" PRIu64 " issued, %" PRIu64 " completed, equal\n",
                    seed, tags, issued, completed);
    return ok;
}

} // namespace

int main(int argc, char **argv)
{
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    Checker ck{"test_requester"};
    const uint32_t kTags[] = {1, 2, 5, 16, 64, 256, 300, 8, 32, 128};
    uint64_t seed = 500;
    for (uint32_t t : kTags)
        for (int k = 0; k < 2; k++, seed++)
            if (!run(ctx, seed, t, ck))
                return 1;
    return 0;
}

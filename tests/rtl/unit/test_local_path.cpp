// test_local_path.cpp - hw/rtl/local_path.v (combinational) against the local path's loop of
// hw/hls/cxl_model.c (`local_in`, restated below over plain arrays: the C walks the model's pipes).
//
// Random requester counts (0..16), round-robin starts, ready heads (sparse to all), classes (RwD, Req,
// sometimes any byte, which the C sends to the Req queue) and ingress spaces (0 to more than 16): every
// push, its order, the pops and the next round-robin start compared.
#include <memory>

#include "Vlocal_path.h"
#include "rtl_unit.h"

using rtl_unit::Checker;
using rtl_unit::Rng;

namespace {

constexpr uint32_t kReq = CXL_MAX_REQ;
constexpr int kCases = 200000;

struct Ref {
    uint32_t n = 0;
    cxl_msg in[kReq];
    uint32_t pop = 0;
    uint32_t rr = 0;
};

// cxl_model.c, local path: requesters visited once each from local_rr; a ready head moves when its
// class's ingress queue has room; local_rr becomes the one after the last that moved
Ref reference(uint32_t nreq, uint32_t rr, const bool *rdy, const cxl_msg *head, uint32_t sp_req, uint32_t sp_rwd)
{
    Ref o;
    o.rr = rr;
    for (uint32_t k = 0, start = rr; k < nreq; k++) {
        uint32_t r = (start + k) % nreq;
        if (!rdy[r])
            continue;
        uint32_t &space = head[r].cls == CXL_M2S_RWD ? sp_rwd : sp_req;
        if (space == 0)
            continue;
        space--;
        o.in[o.n++] = head[r];
        o.pop |= 1u << r;
        o.rr = (r + 1) % nreq;
    }
    return o;
}

uint32_t random_space(Rng &r)
{
    switch (r.below(4)) {
    case 0: return 0;
    case 1: return r.below(4);
    case 2: return r.below(20);
    default: return r.chance(50) ? 256 : static_cast<uint32_t>(r.next());
    }
}

} // namespace

int main(int argc, char **argv)
{
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    std::unique_ptr<Vlocal_path> top(new Vlocal_path(&ctx, "local_path"));
    Checker ck{"test_local_path"};
    bool ok = true;
    uint64_t moved = 0, full = 0;
    for (int k = 0; k < kCases && ok; k++) {
        Rng r(static_cast<uint64_t>(k) + 1);
        ck.seed = static_cast<uint64_t>(k) + 1;
        uint32_t nreq = r.chance(70) ? kReq : r.below(kReq + 1);
        uint32_t rr = nreq ? r.below(nreq) : 0;
        uint32_t density = r.below(101);
        bool rdy[kReq];
        cxl_msg head[kReq];
        top->rdy = 0;
        for (uint32_t i = 0; i < kReq; i++) {
            rdy[i] = r.below(100) < density;
            head[i] = rtl_unit::random_msg(r);
            if (r.chance(80))
                head[i].cls = static_cast<uint8_t>(r.chance(50) ? CXL_M2S_RWD : CXL_M2S_REQ);
            top->rdy |= static_cast<uint32_t>(rdy[i]) << i;
            VlWide<rtl_unit::kMsgWords> w;
            rtl_unit::pack_msg(w, head[i]);
            for (int b = 0; b < 7; b++)
                rtl_unit::put_bits(top->msg, static_cast<int>(i) * 120 + rtl_unit::kMsgFields[b].lsb,
                                   rtl_unit::kMsgFields[b].width, rtl_unit::msg_field(head[i], b));
        }
        uint32_t sp_req = random_space(r), sp_rwd = random_space(r);
        bool en = r.below(50) != 0;
        top->en = en;
        top->rr = rr;
        top->nreq = nreq;
        top->sp_req = sp_req;
        top->sp_rwd = sp_rwd;
        top->eval();
        Ref o = en ? reference(nreq, rr, rdy, head, sp_req, sp_rwd) : Ref{};
        if (!en)
            o.rr = rr;
        ck.cycle = static_cast<uint64_t>(k);
        ok = ck.same("in_n", top->in_n, o.n) && ck.same("pop", top->pop, o.pop) && ck.same("rr_n", top->rr_n, o.rr);
        for (uint32_t q = 0; q < kReq && ok; q++)
            for (int b = 0; b < 7 && ok; b++) {
                uint64_t want = q < o.n ? rtl_unit::msg_field(o.in[q], b) : 0;
                ok = ck.same(rtl_unit::kMsgFields[b].name,
                             rtl_unit::get_bits(top->in_msg, static_cast<int>(q) * 120 + rtl_unit::kMsgFields[b].lsb,
                                                rtl_unit::kMsgFields[b].width),
                             want);
            }
        moved += o.n;
        full += o.n == nreq && nreq != 0;
    }
    top->final();
    if (!ok)
        return 1;
    std::printf("test_local_path: %d cases equal (%" PRIu64 " heads moved, %" PRIu64 " cases moved every requester)\n",
                kCases, moved, full);
    return 0;
}

// local_path.v - the local path of a model without a link (link_present = 0; cxl_model.c, `local_in`):
// each requester's host request path head goes straight into device 0's ingress. The C visits the
// requesters once each, from local_rr (the one after the last that moved in the previous cycle), and
// moves a ready head when its class's ingress queue (RwD or Req) still has room; local_rr becomes the
// one after the last that moved.
//
// Combinational, and written as hardware rather than as the C's loop: the C's loop carries the two
// spaces and the push count from one requester to the next (16 dependent steps). Here every requester
// computes its place in the visit order, ord = (r - rr) mod nreq, and everything else follows from
// counts over the requesters visited before it:
//   - a ready head of class c moves iff fewer than space[c] ready heads of class c come before it in
//     the visit order (a queue with s free entries takes the first s of its class; the other class does
//     not use its room);
//   - a moving head is ingress push number pos = the moving heads before it, which are the first
//     space[c] heads of each class c before it: min(heads of Req before it, Req space) + the same for RwD;
//   - local_rr becomes the one after the mover with pos = n - 1 (unchanged when none moves).
// Each count is a population count over a 16-bit mask (the requesters before this one, ANDed with a
// class's ready heads), and push q is an AND-OR select of the head whose pos is q: no step depends on
// the one before it. tests/rtl/unit/test_local_path.cpp checks it against the C's loop.
`default_nettype none
`include "cxl_defs.vh"

module local_path #(
    parameter integer NREQ = 16,            // requesters built (CXL_MAX_REQ)
    parameter integer NIN  = 16,            // ingress pushes the device takes per cycle, >= NREQ
    parameter integer W    = `CXL_MSG_W
) (
    input  wire              en,            // link_present = 0: the local path runs
    input  wire [7:0]        rr,            // local_rr at the start of the cycle (< nreq)
    input  wire [31:0]       nreq,          // p->requesters (<= NREQ)
    input  wire [NREQ-1:0]   rdy,           // requester r's host request path has a ready head
    input  wire [NREQ*W-1:0] msg,           // that head, [W*r +: W]
    input  wire [31:0]       sp_req,        // pipe_space of device 0's ingress queues, start of the cycle
    input  wire [31:0]       sp_rwd,
    output reg  [7:0]        in_n,          // ingress pushes, in the C's order
    output reg  [NIN*W-1:0]  in_msg,        // push q at [W*q +: W]
    output reg  [NREQ-1:0]   pop,           // the heads that moved
    output reg  [7:0]        rr_n           // local_rr after the cycle
);
    localparam integer CW = $clog2(NREQ + 1);   // counts 0 .. NREQ
    localparam integer PCN = NREQ;
`include "popc.vh"

    // the smaller of a count and a 32-bit space
    function [CW-1:0] cmin(input [CW-1:0] n, input [31:0] sp);
        cmin = ({{(32-CW){1'b0}}, n} < sp) ? n : sp[CW-1:0];
    endfunction

    reg [4:0]      ord [0:NREQ-1];          // place in the visit order (< nreq <= NREQ <= 16)
    reg [NREQ-1:0] ahead [0:NREQ-1];        // ahead[r][s]: s is visited before r
    reg [NREQ-1:0] act, rq, rw, mv, last;
    reg [CW-1:0]   pos [0:NREQ-1];
    reg [CW-1:0]   nr, nw;
    reg [4:0]      rr5, n5;
    reg [7:0]      cls;
    integer        r, s, q;
    always @* begin
        in_n = 8'd0;
        in_msg = {(NIN*W){1'b0}};
        pop = {NREQ{1'b0}};
        rr_n = rr;
        rr5 = rr[4:0];
        n5 = nreq[4:0];
        act = {NREQ{1'b0}};
        rq = {NREQ{1'b0}};
        rw = {NREQ{1'b0}};
        mv = {NREQ{1'b0}};
        last = {NREQ{1'b0}};
        for (r = 0; r < NREQ; r = r + 1) begin
            ord[r] = 5'd0;
            ahead[r] = {NREQ{1'b0}};
            pos[r] = {CW{1'b0}};
        end
        nr = {CW{1'b0}};
        nw = {CW{1'b0}};
        cls = 8'd0;
        if (en) begin
            for (r = 0; r < NREQ; r = r + 1) begin
                act[r] = r < nreq;
                ord[r] = (r[4:0] >= rr5) ? r[4:0] - rr5 : r[4:0] + n5 - rr5;
                cls = msg[W*r + 88 +: 8];            // CXL_MSG_CLS
                rw[r] = act[r] && rdy[r] && cls == `CXL_M2S_RWD;
                rq[r] = act[r] && rdy[r] && cls != `CXL_M2S_RWD;
            end
            for (r = 0; r < NREQ; r = r + 1)
                for (s = 0; s < NREQ; s = s + 1)
                    ahead[r][s] = ord[s] < ord[r];
            // a head moves when fewer of its class than the queue's room come before it; the movers before
            // it are then the first space[c] of each class before it: pos = the two minima's sum
            for (r = 0; r < NREQ; r = r + 1) begin
                nr = popc(rq & ahead[r]);
                nw = popc(rw & ahead[r]);
                mv[r] = rq[r] ? {{(32-CW){1'b0}}, nr} < sp_req
                              : rw[r] && {{(32-CW){1'b0}}, nw} < sp_rwd;
                pos[r] = cmin(nr, sp_req) + cmin(nw, sp_rwd);
            end
            in_n = {{(8-CW){1'b0}}, cmin(popc(rq), sp_req) + cmin(popc(rw), sp_rwd)};
            pop = mv;
            for (q = 0; q < NREQ; q = q + 1)
                for (r = 0; r < NREQ; r = r + 1)
                    if (mv[r] && pos[r] == q[CW-1:0])
                        in_msg[W*q +: W] = in_msg[W*q +: W] | msg[W*r +: W];
            // the last mover (at most one): local_rr is the requester after it
            last = {NREQ{1'b0}};
            for (r = 0; r < NREQ; r = r + 1)
                last[r] = mv[r] && {{(8-CW){1'b0}}, pos[r]} + 8'd1 == in_n;
            if (last != {NREQ{1'b0}}) begin
                rr_n = 8'd0;
                for (r = 0; r < NREQ; r = r + 1)
                    if (last[r] && {27'd0, r[4:0]} + 32'd1 != nreq)
                        rr_n = rr_n | (r[7:0] + 8'd1);
            end
        end
    end
endmodule

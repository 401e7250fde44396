// pipe.v - a bounded FIFO of CXL.mem messages, each with the cycle from which it may leave
// (cxl_pipe, hw/hls/pipe.h; docs/cxl-model.md section 4.1).
//
// One clock edge is one model cycle. In a cycle the pipe takes at most one push and one pop, in the
// order `push_first` selects (a constant where the pipe is instantiated: it mirrors which step of
// model_cycle pushes and which pops):
//   push_first = 1: pipe_push, then the head is looked at (pipe_head / pipe_ready), then pipe_pop.
//                   A push into an empty pipe is visible at once (a ready = now push leaves this cycle).
//   push_first = 0: the head is looked at, pipe_pop, then pipe_push (a pop frees room for the push).
// A push while count >= cap is refused and raises push_err for that cycle (pipe_push returns -1, a model
// bug); a pop of an empty pipe does nothing; a pop does not look at readiness (pipe_pop does not either).
// `cap` is sampled at reset (pipe_init), capped at DEPTH. count/space are the state at the start of the
// cycle, before this cycle's push and pop.
//
// Cost: DEPTH x (W + 64) bits of storage with one write and one read port.
`include "cxl_defs.vh"

module pipe #(
    parameter integer DEPTH = `CXL_MAX_FIFO,  // storage entries, >= 2 (CXL_MAX_FIFO in C)
    parameter integer W     = `CXL_MSG_W      // message width
) (
    input  wire         clk,
    input  wire         rst_n,          // synchronous, active low: pipe_init(cap)
    input  wire         ce,             // clock enable: state advances only on edges with ce (reset regardless)
    input  wire [63:0]  now,            // the current model cycle
    input  wire [31:0]  cap,            // capacity, sampled at reset
    input  wire         push_first,
    input  wire         push,
    input  wire [W-1:0] push_msg,
    input  wire [63:0]  push_ready,     // the cycle from which the message may leave
    input  wire         pop,
    output wire         push_err,       // this cycle's push was refused: the pipe was full
    output wire         head_valid,     // pipe_head != NULL
    output wire [W-1:0] head_msg,       // the head (0 when empty)
    output wire [63:0]  head_ready,     // its ready cycle (all ones when empty, as head_ready in C)
    output wire         ready,          // pipe_ready(now) != NULL
    output wire [31:0]  ready_cls_bit,  // pipe_ready_cls_bit(now)
    output wire [31:0]  count,          // pipe_count
    output wire [31:0]  space           // pipe_space
);
    localparam integer AW = $clog2(DEPTH);
    localparam [AW:0] DEPTH_W = DEPTH[AW:0];

    reg [W-1:0]  msg_mem   [0:DEPTH-1];
    reg [63:0]   ready_mem [0:DEPTH-1];
    reg [AW-1:0] head_q;
    reg [AW:0]   count_q;   // 0 .. DEPTH
    reg [AW:0]   cap_q;

    wire         was_empty = (count_q == 0);
    // push before pop: the push sees the count at the start of the cycle
    wire         push_ok_pf = push && (count_q < cap_q);
    // pop before push: the pop sees the start-of-cycle head, the push sees the count after the pop
    wire         pop_ok_pl  = pop && !was_empty;
    wire [AW:0]  count_pl   = count_q - {{AW{1'b0}}, pop_ok_pl};
    wire         push_ok_pl = push && (count_pl < cap_q);

    wire         push_ok = push_first ? push_ok_pf : push_ok_pl;
    // the head as the pop sees it: the pushed message if the pipe was empty and push came first
    wire         bypass  = push_first && was_empty && push_ok_pf;
    assign head_valid = !was_empty || bypass;
    assign head_msg   = bypass ? push_msg : (was_empty ? {W{1'b0}} : msg_mem[head_q]);
    assign head_ready = bypass ? push_ready : (was_empty ? {64{1'b1}} : ready_mem[head_q]);
    assign ready      = head_valid && (head_ready <= now);
    /* verilator lint_off UNUSEDSIGNAL */  // the class bit uses cls mod 32, as pipe.h
    wire [7:0]   head_cls = head_msg[`CXL_MSG_CLS];
    /* verilator lint_on UNUSEDSIGNAL */
    assign ready_cls_bit = ready ? (32'd1 << head_cls[4:0]) : 32'd0;
    assign push_err   = push && !push_ok;

    wire         pop_ok = pop && head_valid;
    // the tail slot is head + count of the start of the cycle in either order (pop-first moves both)
    wire [AW:0]  tail_sum = {1'b0, head_q} + count_q;
    /* verilator lint_off UNUSEDSIGNAL */  // the top bit is 0 after the wrap
    wire [AW:0]  tail_w   = (tail_sum >= DEPTH_W) ? (tail_sum - DEPTH_W) : tail_sum;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [AW-1:0] tail    = tail_w[AW-1:0];
    wire [AW:0]  head_p1  = {1'b0, head_q} + 1'b1;
    wire [AW-1:0] head_inc = (head_p1 == DEPTH_W) ? {AW{1'b0}} : head_p1[AW-1:0];

    always @(posedge clk) begin
        if (!rst_n) begin
            head_q  <= {AW{1'b0}};
            count_q <= {(AW+1){1'b0}};
            cap_q   <= (cap > DEPTH) ? DEPTH_W : cap[AW:0];
        end else if (ce) begin
            if (push_ok) begin
                msg_mem[tail]   <= push_msg;
                ready_mem[tail] <= push_ready;
            end
            if (pop_ok)
                head_q <= head_inc;
            count_q <= count_q + {{AW{1'b0}}, push_ok} - {{AW{1'b0}}, pop_ok};
        end
    end

    assign count = {{(31-AW){1'b0}}, count_q};
    assign space = {{(31-AW){1'b0}}, cap_q - count_q};
endmodule

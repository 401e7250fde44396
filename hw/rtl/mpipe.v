// mpipe.v - a bounded FIFO of CXL.mem messages with ready cycles (cxl_pipe, hw/hls/pipe.h) that takes
// several pipe_push and pipe_pop calls in one model cycle; the multi-port form of pipe.v.
//
// In a cycle the C caller makes push_n pipe_push calls (messages push_msg[W*i +: W] in call order, all
// with the ready cycle push_ready) and pop_n pipe_pop calls, in the order `push_first` selects:
//   push_first = 1: all pushes, then the popper looks at the pipe and pops. The window shows the first K
//                   entries after the accepted pushes (a push into a short pipe is visible at once).
//   push_first = 0: the popper looks and pops first, then the pushes (pops free room for them). The
//                   window shows the first K entries of the start of the cycle.
// Pushes are taken while count < cap, in call order: push_acc = the number accepted (the C returns -1 for
// each later one: a model bug; push_err). Pops of an empty pipe do nothing, and pops do not look at
// readiness (as pipe_pop): the popper uses win_rdy. pop_n may exceed K (the extra pops remove entries the
// popper did not see, as pipe_pop would); push_n beyond NPUSH has no message: those pushes are refused.
// count/space are the state at the start of the cycle (pipe_count / pipe_space before any call).
//
// Clock enable: one model cycle is one clock edge with ce = 1; with ce = 0 the state holds (the outputs
// still show this cycle's view). Reset (synchronous, active low, regardless of ce) is pipe_init(cap):
// cap is sampled then, capped at DEPTH.
//
// STAMP = 0 is the form for a queue whose every entry is ready at its push (push_ready = now, push first:
// a device's ingress queues, devctrl.v): no ready cycle is stored, win_rdy = win_valid, win_ready is 0 and
// `now` / push_ready are unused. A third of each stored entry (64 of W + 64 bits) and the window's 64-bit
// comparators are gone; the caller orders two such queues by a narrow stamp of its own inside the message.
//
// Storage: ring_ram.v, DEPTH x (W + 64) bits ({ready, msg}; W bits with STAMP = 0) in banks of one write
// port each. The speed
// build of the verilator backend (CXL_SIM_FLAT_RINGS, set with the clock gates by the CMake option
// CXLSIM_RTL_CLOCK_GATES) keeps plain arrays written and read in place instead: Verilator evaluates
// every bank, both rotators and the packed write vector whenever anything moves (the banked form made the
// whole model half as fast), while a multi-port array costs it nothing extra. Same contents, same reads:
// the unit test runs the banked form, the whole-model tests the plain one (and, built with
// CXLSIM_RTL_CLOCK_GATES=OFF, the banked one).
`include "cxl_defs.vh"

// Every port but clk and push_first (a constant per instance, which Verilator then folds) is marked
// public_flat_rd, and the helpers are macros, so that Verilator's instances of one parameter set (e.g. a
// device's two ingress queues) share one copy of the generated code (as requester.v; docs/rtl.md).
module mpipe #(
    parameter integer DEPTH = `CXL_MAX_FIFO,  // storage entries, >= 2, >= NPUSH, >= K
    parameter integer W     = `CXL_MSG_W,     // message width
    parameter integer NPUSH = 8,              // pushes per cycle, 1 .. 255
    parameter integer K     = 5,              // window entries, 1 .. DEPTH
    parameter integer STAMP = 1               // 1: ready cycles stored and compared; 0: every entry ready
                                              // at its push (nothing stored, win_ready 0)
) (
    input  wire             clk,
    input  wire             rst_n /* verilator public_flat_rd */,       // synchronous, active low: pipe_init(cap)
    input  wire             ce /* verilator public_flat_rd */,          // clock enable: the state advances on edges with ce = 1
    /* verilator lint_off UNUSEDSIGNAL */  // STAMP = 0 uses neither
    input  wire [63:0]      now /* verilator public_flat_rd */,         // the current model cycle
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [31:0]      cap /* verilator public_flat_rd */,         // capacity, sampled at reset, capped at DEPTH
    input  wire             push_first,  // 1: pushes then pops; 0: pops then pushes
    input  wire [7:0]       push_n /* verilator public_flat_rd */,      // pipe_push calls this cycle
    input  wire [NPUSH*W-1:0] push_msg /* verilator public_flat_rd */,  // message i at [W*i +: W], in push order
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [63:0]      push_ready /* verilator public_flat_rd */,  // the ready cycle of this cycle's pushes
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [7:0]       pop_n /* verilator public_flat_rd */,       // pipe_pop calls this cycle
    output reg  [K-1:0]     win_valid /* verilator public_flat_rd */,   // window entry j exists
    output reg  [K-1:0]     win_rdy /* verilator public_flat_rd */,     // ... and its ready cycle <= now
    output reg  [K*W-1:0]   win_msg /* verilator public_flat_rd */,     // entry j at [W*j +: W] (0 when absent)
    output reg  [K*64-1:0]  win_ready /* verilator public_flat_rd */,   // its ready cycle (all ones when absent; 0 with STAMP = 0)
    output wire [31:0]      count /* verilator public_flat_rd */,       // pipe_count, start of the cycle
    output wire [31:0]      space /* verilator public_flat_rd */,       // pipe_space, start of the cycle
    output wire [7:0]       push_acc /* verilator public_flat_rd */,    // pushes accepted
    output wire             push_err /* verilator public_flat_rd */     // push_acc < push_n
);
    localparam integer AW = $clog2(DEPTH);
    localparam [31:0] DEPTH32 = DEPTH;
    localparam [31:0] NPUSH32 = NPUSH;

    localparam integer KP = (K < NPUSH) ? K : NPUSH;  // pushes the window can show
    reg [AW-1:0] head_q;
    reg [AW:0]   count_q;   // 0 .. DEPTH
    reg [AW:0]   cap_q;

    // (a + b) mod DEPTH for a < DEPTH, b <= DEPTH (32 bits), and the smaller of two 32-bit values: macros,
    // not functions, as every helper here (see the ports above)
`define MPIPE_WRAP(a, b) (((a) + (b) >= DEPTH32) ? (a) + (b) - DEPTH32 : (a) + (b))
`define MPIPE_MIN32(a, b) ((a) < (b) ? (a) : (b))

    wire [31:0] cnt32  = {{(31-AW){1'b0}}, count_q};
    wire [31:0] cap32  = {{(31-AW){1'b0}}, cap_q};
    wire [31:0] head32 = {{(32-AW){1'b0}}, head_q};
    wire [31:0] pn32   = `MPIPE_MIN32({24'd0, push_n}, NPUSH32);  // pushes that carry a message
    wire [31:0] pop32  = {24'd0, pop_n};

    // push first: the pushes see the start count; the pops see count + accepted
    wire [31:0] acc_pf  = `MPIPE_MIN32(pn32, cap32 - cnt32);
    wire [31:0] pops_pf = `MPIPE_MIN32(pop32, cnt32 + acc_pf);
    // pop first: the pops see the start count; the pushes see the count after the pops
    wire [31:0] pops_pl = `MPIPE_MIN32(pop32, cnt32);
    wire [31:0] acc_pl  = `MPIPE_MIN32(pn32, cap32 - (cnt32 - pops_pl));
    wire [31:0] acc     = push_first ? acc_pf : acc_pl;
    wire [31:0] pops    = push_first ? pops_pf : pops_pl;

    assign push_acc = acc[7:0];
    assign push_err = {24'd0, push_n} != acc;
    assign count    = cnt32;
    assign space    = cap32 - cnt32;

    // the tail is head + count of the start of the cycle in either order
    /* verilator lint_off UNUSEDSIGNAL */  // slot arithmetic in 32 bits, slots are AW bits
    wire [31:0]   tail32 = `MPIPE_WRAP(head32, cnt32);
    /* verilator lint_on UNUSEDSIGNAL */
    wire [AW-1:0] tail = tail32[AW-1:0];

    // storage: this cycle's accepted pushes go to tail, tail + 1, ...; the window reads head, head + 1, ...
`ifdef CXL_SIM_FLAT_RINGS
    reg [W-1:0]  msg_mem   [0:DEPTH-1];
    reg [63:0]   ready_mem [0:DEPTH-1];  // unused with STAMP = 0 (Verilator drops it)
    // the slots of push i and of window entry j
    reg [AW-1:0] wslot [0:NPUSH-1];
    reg [AW-1:0] rslot [0:K-1];
    /* verilator lint_off UNUSEDSIGNAL */
    reg [31:0]   sl;
    /* verilator lint_on UNUSEDSIGNAL */
    integer i;
    always @* begin
        for (i = 0; i < NPUSH; i = i + 1) begin
            sl = `MPIPE_WRAP({{(32-AW){1'b0}}, tail}, i);
            wslot[i] = sl[AW-1:0];
        end
        for (i = 0; i < K; i = i + 1) begin
            sl = `MPIPE_WRAP(head32, i);
            rslot[i] = sl[AW-1:0];
        end
    end
    always @(posedge clk)
        if (rst_n && ce)
            for (i = 0; i < NPUSH; i = i + 1)
                if (i < acc) begin
                    msg_mem[wslot[i]]   <= push_msg[W*i +: W];
                    if (STAMP != 0)
                        ready_mem[wslot[i]] <= push_ready;
                end
`else
    localparam integer WE = (STAMP != 0) ? W + 64 : W;  // a stored entry: {ready, msg}, or msg
    wire [NPUSH*WE-1:0] wdata;
    wire [K*WE-1:0]     rdata;
    genvar gi;
    generate
        for (gi = 0; gi < NPUSH; gi = gi + 1) begin : wd
            if (STAMP != 0) begin : st
                assign wdata[WE*gi +: WE] = {push_ready, push_msg[W*gi +: W]};
            end else begin : ns
                assign wdata[WE*gi +: WE] = push_msg[W*gi +: W];
            end
        end
    endgenerate
    ring_ram #(.DEPTH(DEPTH), .W(WE), .NW(NPUSH), .NR(K)) u_ram (
        .clk(clk), .we(rst_n && ce), .wbase({{(32-AW){1'b0}}, tail}), .wn(acc), .wdata(wdata),
        .rbase(head32), .rdata(rdata));
`endif

    // the window: stored entries first, then (push first) this cycle's accepted pushes
    integer j, q;
    reg [31:0] pj;
    always @* begin
        win_valid = {K{1'b0}};
        win_rdy   = {K{1'b0}};
        win_msg   = {(K*W){1'b0}};
        win_ready = (STAMP != 0) ? {(K*64){1'b1}} : {(K*64){1'b0}};
        for (j = 0; j < K; j = j + 1) begin
            pj = j - cnt32;  // the push index of window entry j when j >= count
            if (j < cnt32) begin
                win_valid[j] = 1'b1;
`ifdef CXL_SIM_FLAT_RINGS
                win_msg[W*j +: W] = msg_mem[rslot[j]];
                if (STAMP != 0)
                    win_ready[64*j +: 64] = ready_mem[rslot[j]];
`else
                win_msg[W*j +: W] = rdata[WE*j +: W];
                if (STAMP != 0)
                    win_ready[64*j +: 64] = rdata[WE*j + (STAMP != 0 ? W : 0) +: 64];
`endif
            end else if (push_first && pj < acc) begin
                win_valid[j] = 1'b1;
                // push_msg[W*pj +: W] as a select of constant parts; pj <= j < K, so K candidates at most
                for (q = 0; q < KP; q = q + 1)
                    if (pj == q)
                        win_msg[W*j +: W] = push_msg[W*q +: W];
                if (STAMP != 0)
                    win_ready[64*j +: 64] = push_ready;
            end
            win_rdy[j] = win_valid[j] && (STAMP == 0 || win_ready[64*j +: 64] <= now);
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */  // the count is at most DEPTH
    wire [31:0]   cnt_next = cnt32 + acc - pops;
    wire [31:0]   head_nx = `MPIPE_WRAP(head32, pops);
    /* verilator lint_on UNUSEDSIGNAL */
    always @(posedge clk) begin
        if (!rst_n) begin
            head_q  <= {AW{1'b0}};
            count_q <= {(AW+1){1'b0}};
            cap_q   <= (cap > DEPTH32) ? DEPTH32[AW:0] : cap[AW:0];
        end else if (ce) begin
            head_q  <= head_nx[AW-1:0];
            count_q <= cnt_next[AW:0];
        end
    end
endmodule
`undef MPIPE_WRAP
`undef MPIPE_MIN32

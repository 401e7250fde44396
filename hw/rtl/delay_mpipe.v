// delay_mpipe.v - a device's response queue (cxl_pipe rsp_drs / rsp_ndr of cxl_devctrl, hw/hls/devctrl.c;
// docs/cxl-model.md): a bounded FIFO of CXL.mem messages that each become ready a fixed number of model
// cycles after their push, with several pushes per cycle, pushes before pops (mpipe.v's push_first = 1).
//
// mpipe.v keeps a 64-bit ready cycle per entry and compares every window entry's with `now`. Here every
// entry is ready `delay` cycles after its push (delay = rsp_latency_cycles, stable while the model runs),
// so the ready cycles never decrease along the FIFO and the ready entries are a prefix; its length m is a
// register, and no entry stores a ready cycle. The entries pushed in one cycle (a group, 1 .. NPUSH
// of them) become ready together; the groups not ready yet are a second, small FIFO of {ready cycle
// modulo 2^32, size}, one push and one pop per cycle at most:
//   - in each model cycle at most one stored group can become ready (the ready cycles of groups pushed in
//     different cycles differ): the oldest, when its stored ready cycle equals the low 32 bits of `now`
//     (one 32-bit comparator per queue); it joins the prefix and leaves the group FIFO;
//   - this cycle's pushes are ready at once when delay = 0 (they are in the window, as mpipe's push first);
//     otherwise they are a new group.
// The comparison must see every model cycle while a group waits: the unit's clock enable is the model's
// main clock (devctrl.v, cxl_model.v), and the model steps through every cycle (model_now.v). Exact for
// delays below 2^32 cycles (the parameter is 32 bits).
//
// Order in a cycle (as devctrl_tick then the transmitter): push_n pushes, taken while count < DEPTH in call
// order (push_acc accepted; push_err when some were refused: a model bug), then the window shows the first
// K entries (stored ones, then this cycle's pushes), then pop_n pops, at most the ready ones (the popper
// reads win_rdy, as pipe_ready gates pipe_pop in the C). count/space are pipe_count/pipe_space at the start
// of the cycle; the capacity is DEPTH.
//
// Clock enable: one model cycle is one clock edge with ce = 1; with ce = 0 the state holds (the outputs
// still show this cycle's view). Reset (synchronous, active low, regardless of ce) empties the queue.
//
// Storage: the messages in ring_ram.v (NPUSH writes and K reads per clock: banks of LUT RAM), the groups
// in a DEPTH x (32 + log2 NPUSH + 1) RAM with one write and one read port.
`include "cxl_defs.vh"
`default_nettype none

module delay_mpipe #(
    parameter integer DEPTH = `CXL_MAX_FIFO,  // entries, a power of two >= 8, >= NPUSH, >= K
    parameter integer W     = `CXL_MSG_W,     // message width
    parameter integer NPUSH = 4,              // pushes per cycle, 1 .. 255
    parameter integer K     = 5               // window entries, 1 .. DEPTH
) (
    input  wire             clk,
    input  wire             rst_n,      // synchronous, active low
    input  wire             ce,         // clock enable: the state advances on edges with ce = 1
    input  wire [31:0]      now_lo,     // the current model cycle, low 32 bits
    input  wire [31:0]      delay,      // cycles from push to ready (rsp_latency_cycles), stable while running
    input  wire [7:0]       push_n,     // pipe_push calls this cycle
    input  wire [NPUSH*W-1:0] push_msg, // message i at [W*i +: W], in push order
    input  wire [7:0]       pop_n,      // pipe_pop calls this cycle, <= the ready entries
    output reg  [K-1:0]     win_valid,  // window entry j exists
    output reg  [K-1:0]     win_rdy,    // ... and is ready
    output reg  [K*W-1:0]   win_msg,    // entry j at [W*j +: W] (0 when absent)
    output wire [31:0]      count,      // pipe_count, start of the cycle
    output wire [31:0]      space,      // pipe_space, start of the cycle
    output wire [7:0]       push_acc,   // pushes accepted
    output wire             push_err    // push_acc < push_n
);
    localparam integer AW = $clog2(DEPTH);
    localparam integer GW = $clog2(NPUSH + 1);  // a group's size, 1 .. NPUSH
    localparam [31:0] DEPTH32 = DEPTH;
    localparam [31:0] NPUSH32 = NPUSH;
    localparam integer KP = (K < NPUSH) ? K : NPUSH;  // pushes the window can show

    reg [AW-1:0] head_q;   // slot of entry 0
    reg [AW:0]   count_q;  // 0 .. DEPTH
    reg [AW:0]   m_q;      // ready prefix length, <= count_q
    reg [AW-1:0] ghead_q;  // the group FIFO: slot of the oldest unready group
    reg [AW:0]   gcount_q; // unready groups, 0 .. DEPTH

    // counts in 32 bits (they are at most DEPTH)
`define DMP_MIN32(a, b) ((a) < (b) ? (a) : (b))
    wire [31:0] cnt32  = {{(31-AW){1'b0}}, count_q};
    wire [31:0] m_32   = {{(31-AW){1'b0}}, m_q};
    wire [31:0] acc    = `DMP_MIN32(`DMP_MIN32({24'd0, push_n}, NPUSH32), DEPTH32 - cnt32);
    wire [31:0] cnt_pu = cnt32 + acc;                   // after the pushes: what the window sees

    // the oldest unready group, and whether it becomes ready in this cycle
    reg  [31:0]   gready_mem [0:DEPTH-1];
    reg  [GW-1:0] gsize_mem  [0:DEPTH-1];
    wire          g_join = gcount_q != {(AW+1){1'b0}} && gready_mem[ghead_q] == now_lo;
    wire [31:0]   g_n    = {{(32-GW){1'b0}}, gsize_mem[ghead_q]};
    wire          p_now  = acc != 32'd0 && delay == 32'd0;  // this cycle's pushes are ready at once
    wire          p_grp  = acc != 32'd0 && delay != 32'd0;  // ... or a new group
    wire [31:0]   m_eff  = m_32 + (g_join ? g_n : 32'd0) + (p_now ? acc : 32'd0);
    wire [31:0]   pops   = `DMP_MIN32({24'd0, pop_n}, cnt_pu);
`undef DMP_MIN32

    // slots (modulo DEPTH, a power of two)
    wire [AW-1:0] tail  = head_q + count_q[AW-1:0];
    wire [AW-1:0] gtail = ghead_q + gcount_q[AW-1:0];

    wire [K*W-1:0] rdata;
    ring_ram #(.DEPTH(DEPTH), .W(W), .NW(NPUSH), .NR(K)) u_msg (
        .clk(clk), .we(rst_n && ce), .wbase({{(32-AW){1'b0}}, tail}), .wn(acc),
        .wdata(push_msg), .rbase({{(32-AW){1'b0}}, head_q}), .rdata(rdata));

    always @(posedge clk)
        if (rst_n && ce && p_grp) begin
            gready_mem[gtail] <= now_lo + delay;
            gsize_mem[gtail]  <= acc[GW-1:0];
        end

    // the window: stored entries first, then this cycle's accepted pushes
    integer j, q;
    reg [31:0] pj;
    always @* begin
        win_msg = {(K*W){1'b0}};
        for (j = 0; j < K; j = j + 1) begin
            win_valid[j] = j < cnt_pu;
            win_rdy[j]   = j < m_eff;
            pj = j - cnt32;   // the push index of window entry j when j >= count
            if (j < cnt32)
                win_msg[W*j +: W] = rdata[W*j +: W];
            else if (j < cnt_pu)
                for (q = 0; q < KP; q = q + 1)   // push_msg[W*pj +: W] as a select of constant parts
                    if (pj == q)
                        win_msg[W*j +: W] = push_msg[W*q +: W];
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */  // counts in 32 bits, at most DEPTH
    wire [31:0] head_nx = {{(32-AW){1'b0}}, head_q} + pops;
    wire [31:0] cnt_nx  = cnt_pu - pops;
    wire [31:0] m_nx    = (pops < m_eff) ? m_eff - pops : 32'd0;
    /* verilator lint_on UNUSEDSIGNAL */
    always @(posedge clk) begin
        if (!rst_n) begin
            head_q   <= {AW{1'b0}};
            count_q  <= {(AW+1){1'b0}};
            m_q      <= {(AW+1){1'b0}};
            ghead_q  <= {AW{1'b0}};
            gcount_q <= {(AW+1){1'b0}};
        end else if (ce) begin
            head_q   <= head_nx[AW-1:0];
            count_q  <= cnt_nx[AW:0];
            m_q      <= m_nx[AW:0];
            ghead_q  <= ghead_q + {{(AW-1){1'b0}}, g_join};
            gcount_q <= gcount_q - {{AW{1'b0}}, g_join} + {{AW{1'b0}}, p_grp};
        end
    end

    assign count    = cnt32;
    assign space    = DEPTH32 - cnt32;
    assign push_acc = acc[7:0];
    assign push_err = {24'd0, push_n} != acc;
endmodule

`default_nettype wire

// delay_pipe.v - a host request path (cxl_pipe host_req[r], hw/hls/pipe.h; docs/cxl-model.md 4.1): a
// bounded FIFO of CXL.mem messages that each leave a fixed number of model cycles after their push.
//
// The C pipe keeps a 64-bit ready cycle per entry and compares the head's with `now`; mpipe.v does the
// same in hardware (64 bits per entry and a 64-bit comparator per window entry). A host request path is
// the special case in which every entry is ready `delay` cycles after its push (delay = the parameter
// host_req_cycles, stable while the model runs) and there is at most one push per cycle, so the ready
// cycles grow strictly with the position in the FIFO: the entries that are ready form a prefix. This
// module keeps that prefix's length m in a register instead of any ready cycle in registers:
//   - window entry j (j < K) is ready iff j < m;
//   - in each model cycle at most one entry joins the prefix, the first unready one (index m), the cycle
//     before its ready cycle: its stored value is (push cycle + delay - 1) mod 2^32, compared for
//     equality with the low 32 bits of `now` (one 32-bit RAM read and one comparator per pipe);
//   - a push into a pipe whose entries are all ready (m = count after the pops) is the first unready
//     entry at once: it joins the prefix at this edge when delay <= 1 (ready at the next cycle).
// The comparison needs to see every model cycle while an entry waits: `waiting` (an entry is stored and
// not ready) is part of the unit's clock enable (cxl_model.v). The window's ready bits then depend on
// this module's registers only, so a simulator evaluates the path only when it moves. Exact for delays
// below 2^32 cycles (the parameter is 32 bits).
//
// Order in a cycle (as the C model's steps: the popper looks and pops, then the requester pushes): the
// window shows the first K entries stored at the start of the cycle; pops (pop_n, at most the ready ones:
// the popper reads win_rdy, as pipe_ready gates pipe_pop in the C) go first, then the push, taken while
// count - pops < DEPTH (the caller checks space first; a refused push raises push_err, a model bug).
// count/space are pipe_count/pipe_space at the start of the cycle; the capacity is DEPTH.
//
// Clock enable: one model cycle is one clock edge with ce = 1; with ce = 0 the state holds. Reset
// (synchronous, active low, regardless of ce) empties the pipe.
//
// Storage: the messages in ring_ram.v (one write, K consecutive reads per clock: banks of LUT RAM), the
// 32-bit leave cycles in a DEPTH x 32 RAM with one write and one read port.
`include "cxl_defs.vh"
`default_nettype none

module delay_pipe #(
    parameter integer DEPTH = `CXL_MAX_FIFO,  // entries, a power of two >= 8, >= K
    parameter integer W     = `CXL_MSG_W,     // message width
    parameter integer K     = 3               // window entries (the most one popper takes per cycle)
) (
    input  wire           clk,
    input  wire           rst_n,      // synchronous, active low
    input  wire           ce,         // clock enable: the state advances on edges with ce = 1
    input  wire [31:0]    now_lo,     // the current model cycle, low 32 bits
    input  wire [31:0]    delay,      // cycles from push to ready (host_req_cycles), stable while running
    input  wire           push,       // pipe_push this cycle (after the pops)
    input  wire [W-1:0]   push_msg,
    input  wire [2:0]     pop_n,      // pipe_pop calls this cycle (before the push), <= the ready entries
    output reg  [K-1:0]   win_valid,  // window entry j exists
    output reg  [K-1:0]   win_rdy,    // ... and is ready (its ready cycle <= now)
    output wire [K*W-1:0] win_msg,    // entry j at [W*j +: W] (unspecified when absent)
    output wire [31:0]    count,      // pipe_count, start of the cycle
    output wire [31:0]    space,      // pipe_space, start of the cycle
    output wire           push_err,   // a push was refused (full)
    output wire           waiting     // some stored entry is not ready yet
);
    localparam integer AW = $clog2(DEPTH);
    localparam [AW:0] DEPTHC = DEPTH[AW:0];

    reg [AW-1:0] head_q;   // slot of entry 0
    reg [AW:0]   count_q;  // 0 .. DEPTH
    reg [AW:0]   m_q;      // ready prefix length, <= count_q

    wire [AW:0] pop_c  = {{(AW-2){1'b0}}, pop_n};
    wire [AW:0] pops   = pop_c < count_q ? pop_c : count_q;
    wire [AW:0] cnt_po = count_q - pops;                // after the pops
    wire        acc    = push && cnt_po != DEPTHC;
    wire [AW:0] m_po   = pops < m_q ? m_q - pops : {(AW+1){1'b0}};

    // slots: the tail (next write) and entry m (the first unready one) are head + count / head + m
    wire [AW-1:0] tail   = head_q + count_q[AW-1:0];   // modulo DEPTH (a power of two)
    wire [AW-1:0] mslot  = head_q + m_q[AW-1:0];
    wire [AW-1:0] head_n = head_q + pops[AW-1:0];

    ring_ram #(.DEPTH(DEPTH), .W(W), .NW(1), .NR(K)) u_msg (
        .clk(clk), .we(rst_n && ce), .wbase({{(32-AW){1'b0}}, tail}), .wn({31'd0, acc}), .wdata(push_msg),
        .rbase({{(32-AW){1'b0}}, head_q}), .rdata(win_msg));

    // leave cycles: (push cycle + delay - 1) mod 2^32, read at entry m
    reg  [31:0] leave_mem [0:DEPTH-1];
    wire [31:0] leave_m = leave_mem[mslot];
    always @(posedge clk)
        if (rst_n && ce && acc)
            leave_mem[tail] <= now_lo + delay - 32'd1;

    // the entry that joins the prefix at this edge: stored entry m when one waits, else this push
    wire unready_stored = m_q != count_q;
    wire joins = unready_stored ? leave_m == now_lo : (acc && delay <= 32'd1);

    always @(posedge clk) begin
        if (!rst_n) begin
            head_q  <= {AW{1'b0}};
            count_q <= {(AW+1){1'b0}};
            m_q     <= {(AW+1){1'b0}};
        end else if (ce) begin
            head_q  <= head_n;
            count_q <= cnt_po + {{AW{1'b0}}, acc};
            m_q     <= m_po + {{AW{1'b0}}, joins};
        end
    end

    assign count = {{(31-AW){1'b0}}, count_q};
    wire [31:0] m32 = {{(31-AW){1'b0}}, m_q};
    integer j;
    always @* begin
        for (j = 0; j < K; j = j + 1) begin
            win_valid[j] = j < count;
            win_rdy[j]   = j < m32;
        end
    end

    assign space    = {{(31-AW){1'b0}}, DEPTHC - count_q};
    assign push_err = push && !acc;
    assign waiting  = unready_stored;
endmodule

`default_nettype wire

// credit.v - CXL link-layer credits of one link direction, as the sender sees them
// (cxl_credits, hw/hls/credit.h/.c; docs/cxl-model.md section 4.4; CXL spec 4.2.2, 4.2.7).
//
// Per class k: avail[k] credits held, and the returns not yet visible, each due `delay` cycles after
// the receiver freed its buffer. One clock edge is one model cycle, in this order (as model_cycle):
//   1. credit_tick(now): returns due at or before `now` become available;
//   2. ret_first = 1: this cycle's returns (ret_n[k] x credit_return(k, now)), then the takes;
//      ret_first = 0: the takes, then the returns.
// `avail`/`have` are the credits as the taker sees them: after step 1 and, with ret_first and
// delay == 0, after this cycle's returns (a zero-delay return is usable in the same cycle, as in C).
// take_n[k] credit_take calls are applied without a check, wrapping like the C uint32_t (the sender
// checks `have` first). A return with delay == 0 adds to avail at once; otherwise it is queued, and
// dropped when RING returns of its class are pending (credit.c: cannot happen, pending <= pool).
// `pool` and `delay` are sampled at reset (credit_init); pools are capped at RING.
//
// Storage: the returns of one cycle and class share a due cycle, so each class keeps a ring of
// {due, n} runs (at most one new run per cycle) instead of one entry per credit; pending[k] counts
// credits (C's count[k]). CONTRACT: `now` advances by exactly one per clock while returns are pending
// (cxl_model.v's idle skip and period jump wait until none is). Dues are then strictly increasing per
// class and at most the head run can fall due in a cycle, so one comparator per class replaces
// credit_tick's loop and next_due. now + delay must not wrap past 2^64.
`include "cxl_defs.vh"

module credit #(
    parameter integer NCLASS = `CXL_NCLASS,
    parameter integer RING   = `CXL_CREDIT_RING,  // >= the largest pool, >= 2
    parameter integer NW     = 8                   // width of the per-cycle take / return counts
) (
    input  wire                 clk,
    input  wire                 rst_n,      // synchronous, active low: credit_init(pool, delay)
    input  wire                 ce,         // clock enable: state advances only on edges with ce (reset regardless)
    input  wire [63:0]          now,
    input  wire [NCLASS*32-1:0] pool,       // class k at [32k +: 32], sampled at reset
    input  wire [31:0]          delay,      // credit_return_cycles, sampled at reset
    input  wire                 ret_first,
    input  wire [NCLASS*NW-1:0] take_n,     // credit_take calls this cycle, class k at [NW*k +: NW]
    input  wire [NCLASS*NW-1:0] ret_n,      // credit_return calls this cycle
    output wire [NCLASS*32-1:0] avail,      // credits held, as the taker sees them
    output wire [NCLASS-1:0]    have,       // credit_have
    output wire [NCLASS*32-1:0] pending     // returns queued, start of the cycle (C: count[k])
);
    localparam integer AW = $clog2(RING);
    localparam integer CW = $clog2(RING + 1);
    localparam [CW:0]  RING_W = RING[CW:0];

    reg [31:0] delay_q;
    wire       delay0 = (delay_q == 32'd0);

    genvar k;
    generate
        for (k = 0; k < NCLASS; k = k + 1) begin : cls
            reg [63:0]   due_mem  [0:RING-1];
            reg [CW-1:0] n_mem    [0:RING-1];
            reg [AW-1:0] head_q;
            reg [CW-1:0] runs_q;    // runs in the ring
            reg [CW-1:0] pend_q;    // credits in the runs
            reg [31:0]   avail_q;

            wire [NW-1:0] tk = take_n[NW*k +: NW];
            wire [NW-1:0] rt = ret_n[NW*k +: NW];
            wire [31:0]   tk32 = {{(32-NW){1'b0}}, tk};
            wire [31:0]   rt32 = {{(32-NW){1'b0}}, rt};

            // 1. tick: the head run, if due
            wire          rel = (runs_q != 0) && (due_mem[head_q] <= now);
            wire [CW-1:0] rel_n = rel ? n_mem[head_q] : {CW{1'b0}};
            wire [31:0]   avail_t = avail_q + {{(32-CW){1'b0}}, rel_n};
            wire [CW-1:0] pend_t  = pend_q - rel_n;
            wire [CW-1:0] runs_t  = runs_q - {{(CW-1){1'b0}}, rel};
            wire [AW:0]   head_p1 = {1'b0, head_q} + 1'b1;
            wire [AW-1:0] head_t  = !rel ? head_q : (head_p1 == RING_W[AW:0]) ? {AW{1'b0}} : head_p1[AW-1:0];

            // 2. returns: immediate with delay 0, else one run of what fits
            wire [31:0]   now_ret = delay0 ? rt32 : 32'd0;
            wire [CW:0]   room    = RING_W - {1'b0, pend_t};
            wire [31:0]   room32  = {{(32-CW-1){1'b0}}, room};
            wire [CW:0]   rt_w    = (rt32 > room32) ? room : rt32[CW:0];
            wire [CW:0]   acc     = delay0 ? {(CW+1){1'b0}} : rt_w;
            /* verilator lint_off UNUSEDSIGNAL */  // the top bits are 0 after the wrap / the cap
            wire [CW:0]   tail_s  = {1'b0, head_t} + {1'b0, runs_t};
            wire [CW:0]   tail_w  = (tail_s >= RING_W) ? tail_s - RING_W : tail_s;
            /* verilator lint_on UNUSEDSIGNAL */

            assign avail[32*k +: 32]   = ret_first ? avail_t + now_ret : avail_t;
            assign have[k]             = avail[32*k +: 32] != 32'd0;
            assign pending[32*k +: 32] = {{(32-CW){1'b0}}, pend_q};

            always @(posedge clk) begin
                if (!rst_n) begin
                    head_q  <= {AW{1'b0}};
                    runs_q  <= {CW{1'b0}};
                    pend_q  <= {CW{1'b0}};
                    avail_q <= (pool[32*k +: 32] > RING) ? RING : pool[32*k +: 32];
                end else if (ce) begin
                    avail_q <= avail_t + now_ret - tk32;
                    head_q  <= head_t;
                    if (acc != 0) begin
                        due_mem[tail_w[AW-1:0]] <= now + {32'd0, delay_q};
                        n_mem[tail_w[AW-1:0]]   <= acc[CW-1:0];
                    end
                    runs_q <= runs_t + {{(CW-1){1'b0}}, acc != 0};
                    pend_q <= pend_t + acc[CW-1:0];
                end
            end
        end
    endgenerate

    always @(posedge clk)
        if (!rst_n)
            delay_q <= delay;
endmodule

// switch.v - the CXL switch between host ports (upstream) and Type-3 devices (downstream)
// (cxl_switch, hw/hls/switch.{h,c}; docs/cxl-model.md section 4.6).
//
// One clock edge is one model cycle and performs, in model_cycle's order (docs section 3):
//   step 4  switch_ingress_m2s(h, msg) for up_in_n[h] messages of host port h (up_in_msg[h][0..n-1],
//           in delivery order), then switch_ingress_s2m(d, msg) for dn_in_n[d] messages of device port d.
//           M2S messages are routed on entry (dev, local address, LD-ID); ready = now + hop_cycles.
//           Pushes beyond the queue's space are refused: up_in_err[h] / dn_in_err[d] (the C's -1,
//           model_error = 1). With hop_cycles = 0 a message pushed now takes part in this cycle's tick.
//   step 8  switch_tick: egress dn_out[0..D-1] (M2S) then up_out[0..H-1] (S2M), each taking at most one
//           ready ingress head routed to it (round-robin after the last port served, or oldest ready
//           cycle / lowest port), an ingress port forwarding at most one message per direction;
//           a winner whose egress queue is full counts one stall (stall_n this cycle, stall_count
//           cumulative since reset = cxl_stats.switch_stall). Leaving an ingress queue is a
//           credit_return: up_cr_ret[h] / up_cr_cls[h] (to up_m2s[h].cr), dn_cr_ret[d] / dn_cr_cls[d]
//           (to dn_s2m[d].cr), with the message's class.
//   steps 8/10  link_tx drains the egress queues: dn_out_msg[d][k] / up_out_msg[e][k] are the first
//           NPOP entries as link_tx sees them (after this cycle's tick push), dn_out_count / up_out_count
//           their number; dn_out_pop_n[d] / up_out_pop_n[h] pipe_pop calls (extra pops of an empty queue
//           do nothing, as pipe_pop).
// up_in_count / dn_in_count and idle (switch_idle) are the state at the start of the cycle.
//
// Runtime parameters (cxl_params: hosts, devices, sw.*) are sampled during reset (switch_init).
// NH / ND are the ports built (<= CXL_MAX_HOSTS / CXL_MAX_DEVS); hosts <= NH and devices <= ND are used.
// Egress entries are pushed with ready = now and `now` never decreases, so they are always ready and
// their ready cycle is not stored. Queues are rings of DEPTH (a power of two, CXL_MAX_FIFO; storage in ring_ram.v);
// capacities 2 * port_queue (ingress, 32-bit wrap as the C) and port_queue (egress), capped at DEPTH.
// Routing assumes interleave_shift + dev_bits < 64 and dev_bits < 32 (the C shifts are undefined beyond).
`default_nettype none
`include "cxl_defs.vh"

module switch #(
    parameter integer NH    = 4,              // host ports built (CXL_MAX_HOSTS)
    parameter integer ND    = 4,              // device ports built (CXL_MAX_DEVS)
    parameter integer DEPTH = `CXL_MAX_FIFO,  // ring entries per queue, a power of two
    parameter integer NIN   = 8,              // messages one link_rx delivers per cycle (CXL_FLIT_MAXDONE)
    parameter integer NPOP  = 8,              // egress entries shown to link_tx
    parameter integer W     = `CXL_MSG_W
) (
    input  wire                 clk,
    input  wire                 rst_n,        // synchronous, active low: switch_init
    input  wire                 ce,           // clock enable: state advances only on edges with ce (reset regardless)
    input  wire [63:0]          now,
    // cxl_params, sampled at reset
    input  wire [31:0]          hosts,
    input  wire [31:0]          devices,
    input  wire [31:0]          hop_cycles,
    input  wire [31:0]          port_queue,
    input  wire [31:0]          arbitration,  // enum cxl_arb: 0 round-robin, else oldest first
    input  wire [31:0]          interleave_shift,
    input  wire [31:0]          dev_bits,
    input  wire [31:0]          ld_shift,     // 0: shared pool
    // switch_ingress_m2s / switch_ingress_s2m (step 4); counts are 8 bits per port, <= NIN
    input  wire [NH*8-1:0]      up_in_n,
    input  wire [NH*NIN*W-1:0]  up_in_msg,    // port h, message k at [(h*NIN + k)*W +: W]
    input  wire [ND*8-1:0]      dn_in_n,
    input  wire [ND*NIN*W-1:0]  dn_in_msg,
    output wire [NH-1:0]        up_in_err,
    output wire [ND-1:0]        dn_in_err,
    // switch_tick (step 8): credit_return calls and the stall statistic
    output wire [NH-1:0]        up_cr_ret,
    output wire [NH*8-1:0]      up_cr_cls,
    output wire [ND-1:0]        dn_cr_ret,
    output wire [ND*8-1:0]      dn_cr_cls,
    output wire [3:0]           stall_n,
    output wire [63:0]          stall_count,
    // egress queues as link_tx sees them (steps 8 and 10), and its pipe_pop calls
    output wire [ND*32-1:0]     dn_out_count,
    output wire [ND*NPOP*W-1:0] dn_out_msg,   // port d, entry k at [(d*NPOP + k)*W +: W]; 0 past count
    input  wire [ND*8-1:0]      dn_out_pop_n,
    output wire [NH*32-1:0]     up_out_count,
    output wire [NH*NPOP*W-1:0] up_out_msg,
    input  wire [NH*8-1:0]      up_out_pop_n,
    // state at the start of the cycle
    output wire [NH*32-1:0]     up_in_count,
    output wire [ND*32-1:0]     dn_in_count,
    output wire                 idle          // switch_idle
);
    localparam integer AW = $clog2(DEPTH);
    localparam integer NI = NH + ND;          // ingress queues: up_in[0..NH-1], then dn_in[0..ND-1]
    localparam integer NE = ND + NH;          // egress queues: dn_out[0..ND-1], then up_out[0..NH-1]
    localparam [AW:0] DEPTH_W = DEPTH[AW:0];
    localparam integer NMAX = (NH > ND) ? NH : ND;
    localparam [NMAX-1:0] ONE = 1;

    // ---- runtime parameters (switch_init) ----
    // the routing's shifts and masks, formed once at reset so that no path runs through their arithmetic
    reg [31:0]     sh_q, ld_q, shb_q;    // interleave_shift, ld_shift, interleave_shift + dev_bits
    reg [7:0]      bmask_q;              // (1 << dev_bits) - 1, the low 8 bits (dev is a uint8_t)
    reg [63:0]     lmask_q, ldmask_q;    // (1 << interleave_shift) - 1, (1 << ld_shift) - 1
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0]    bmask_w = (32'd1 << dev_bits) - 32'd1;
    /* verilator lint_on UNUSEDSIGNAL */
    reg [AW:0]     icap_q, ecap_q;
    reg            icap_nz_q;        // a push into an empty ingress queue succeeds
    reg            arb_q;            // oldest first (enum cxl_arb != round robin)
    reg [NMAX-1:0] hon_q, don_q;     // port k in use: k < hosts / k < devices
    reg [NMAX-1:0] hwrap_q, dwrap_q; // k + 1 == hosts / devices: the round robin wraps after port k
    wire [31:0] q2 = {port_queue[30:0], 1'b0};
    integer pk;
    always @(posedge clk)
        if (!rst_n) begin
            arb_q     <= arbitration != 32'd0;
            sh_q      <= interleave_shift;
            ld_q      <= ld_shift;
            shb_q     <= interleave_shift + dev_bits;
            bmask_q   <= bmask_w[7:0];
            lmask_q   <= (64'd1 << interleave_shift) - 64'd1;
            ldmask_q  <= (64'd1 << ld_shift) - 64'd1;
            icap_q    <= (q2 > DEPTH) ? DEPTH_W : q2[AW:0];
            icap_nz_q <= q2 != 32'd0;
            ecap_q    <= (port_queue > DEPTH) ? DEPTH_W : port_queue[AW:0];
            for (pk = 0; pk < NMAX; pk = pk + 1) begin
                hon_q[pk]   <= pk < hosts;
                don_q[pk]   <= pk < devices;
                hwrap_q[pk] <= pk + 1 == hosts;
                dwrap_q[pk] <= pk + 1 == devices;
            end
        end
    reg [31:0] hop_q;                // hop_cycles (the stored ready cycle)
    always @(posedge clk)
        if (!rst_n)
            hop_q <= hop_cycles;

    // ---- ingress head after this cycle's pushes (what switch_tick sees) ----
    wire [NI-1:0]     ih_ready;   // pipe_ready(now)
    wire [NI*8-1:0]   ih_route;   // M2S: head.dev, S2M: head.host
    wire [NI-1:0]     ih_byp;     // the head is this cycle's first push (the queue was empty)
    wire [NI*64-1:0]  ih_st;      // the stored head's ready cycle (when not ih_byp)
    wire [NI-1:0]     ih_st_lt_pt;   // ih_st < push_t
    wire [NI-1:0]     ih_pt_lt_st;   // push_t < ih_st
    // a message pushed now is ready at push_t = now + hop_cycles (64-bit, wrapping as the C's uint64_t):
    // ready in this cycle with hop_cycles 0, or where the sum wraps
    wire [63:0]       push_t = now + {32'd0, hop_q};
    wire              push_rdy = push_t <= now;
    // one spare 32-bit word above the messages: Verilator reads a wide part-select two words at a time,
    // and the second word of the last message would otherwise lie past the vector (harmless, masked,
    // but an out-of-bounds read for AddressSanitizer)
    wire [NI*W+31:0]  ih_msg;
    assign ih_msg[NI*W +: 32] = 32'd0;
    wire [NI-1:0]     ih_pop;     // forwarded by switch_tick
    wire [NI-1:0]     i_empty;    // start of cycle

    // ---- switch_tick: egress arbitration, every egress port in parallel ----
    // The C (switch.c) serves the egress ports of a direction one after the other and keeps a mask
    // `used` of the ingress ports that forwarded, so that an ingress port forwards at most once per
    // direction even after its pop exposed a new head. Here every port sees the heads at the start of
    // the tick, and a head is routed to exactly one egress port, so no two ports of a direction can
    // take the same ingress port: the ports decide independently, and the mask is not needed.
    //
    // Oldest first: the C scans k = 0 .. n-1 and takes a ready head whose ready cycle is strictly below
    // the best so far, so the winner is the candidate with the smallest ready cycle, the lowest port on a
    // tie. As hardware: every pair of heads of a direction is compared once (in parallel), and candidate k
    // wins when every candidate j < k is strictly later and no candidate j > k is strictly earlier.
    // Ready cycles: a stored head's (st) from the queue, a head that is this cycle's push (the queue was
    // empty) push_t, the same for every port; so t_a < t_b is: (st_a or push_t) < (st_b or push_t), the
    // compares against push_t formed per port beside the pairwise ones.
    function lt_t(input integer a, input integer b);  // ready cycle of head a < that of head b
        lt_t = ih_byp[a] ? (!ih_byp[b] && ih_pt_lt_st[b]) :
               (ih_byp[b] ? ih_st_lt_pt[a] : (ih_st[a*64 +: 64] < ih_st[b*64 +: 64]));
    endfunction

    reg  [NE-1:0]     e_push;
    reg  [NE*W-1:0]   e_push_msg;
    reg  [NE-1:0]     e_stall;
    reg  [NI-1:0]     pop_r;
    reg  [NE*NMAX-1:0] rrm_n;         // next round-robin masks
    reg  [NE*NMAX-1:0] rrm_q;         // bit k: k >= rr_dn[d] (at d) / rr_up[h] (at ND + h)
    wire [NE-1:0]     e_full;

    integer e, k, jj, base;
    reg [NMAX-1:0] cand, hi, sel, pick;
    reg            ok;
    always @* begin
        e_push = {NE{1'b0}};
        e_push_msg = {(NE*W){1'b0}};
        e_stall = {NE{1'b0}};
        pop_r = {NI{1'b0}};
        rrm_n = rrm_q;
        ok = 1'b0;
        for (e = 0; e < NE; e = e + 1) begin
            // M2S egress d = e picks among up_in[0..hosts-1]; S2M egress h = e - ND among dn_in[0..devices-1]
            base = (e < ND) ? 0 : NH;
            cand = {NMAX{1'b0}};
            for (k = 0; k < NMAX; k = k + 1)
                if ((e < ND) ? (k < NH) : (k < ND))
                    cand[k] = ((e < ND) ? (hon_q[k] && don_q[e]) : (don_q[k] && hon_q[e - ND])) &&
                              ih_ready[base + k] &&
                              ih_route[(base + k)*8 +: 8] == ((e < ND) ? e[7:0] : e[7:0] - ND[7:0]);
            // round robin: the first candidate at or after rr, else the first one (rr < the ports used)
            hi = cand & rrm_q[e*NMAX +: NMAX];
            pick = (hi != {NMAX{1'b0}}) ? hi : cand;
            sel = pick & ~(pick - ONE);   // lowest set bit
            if (arb_q) begin
                for (k = 0; k < NMAX; k = k + 1) begin
                    ok = cand[k];
                    for (jj = 0; jj < NMAX; jj = jj + 1)
                        if (jj != k && cand[jj] && ((jj < k) ? !lt_t(base + k, base + jj) : lt_t(base + jj, base + k)))
                            ok = 1'b0;
                    sel[k] = ok;
                end
            end
            if (cand != {NMAX{1'b0}}) begin
                if (e_full[e])
                    e_stall[e] = 1'b1;
                else begin
                    e_push[e] = 1'b1;
                    for (k = 0; k < NMAX; k = k + 1)
                        if (sel[k]) begin
                            e_push_msg[e*W +: W] = e_push_msg[e*W +: W] | ih_msg[(base + k)*W +: W];
                            pop_r[base + k] = 1'b1;
                            // rr = (k + 1) mod ports used: the mask of ports >= k + 1, or all of them
                            rrm_n[e*NMAX +: NMAX] = ((e < ND) ? hwrap_q[k] : dwrap_q[k]) ? {NMAX{1'b1}} :
                                                    ({NMAX{1'b1}} << (k + 1));
                        end
                end
            end
        end
    end
    assign ih_pop = pop_r;

    always @(posedge clk)
        if (!rst_n)
            rrm_q <= {(NE*NMAX){1'b1}};
        else if (ce)
            rrm_q <= rrm_n;

    // stall_n = popcount(e_stall)
    reg [3:0] stall_c;
    integer sk;
    always @* begin
        stall_c = 4'd0;
        for (sk = 0; sk < NE; sk = sk + 1)
            stall_c = stall_c + {3'd0, e_stall[sk]};
    end
    assign stall_n = stall_c;
    // the cumulative count as a sum of two registers: the stalls before the last edge with ce and that
    // edge's own, so that the 64-bit addition starts from registers and not from the arbitration
    reg [63:0] stall_base;
    reg [3:0]  stall_last;
    assign stall_count = stall_base + {60'd0, stall_last};
    always @(posedge clk)
        if (!rst_n) begin
            stall_base <= 64'd0;
            stall_last <= 4'd0;
        end else if (ce) begin
            stall_base <= stall_count;
            stall_last <= stall_c;
        end

    // ---- ingress queues ----
    genvar g, gk;
    generate
        for (g = 0; g < NI; g = g + 1) begin : ing
            reg [AW-1:0] head_q;
            reg [AW:0]   count_q;

            wire [7:0]   n_in;
            wire [NIN*W-1:0] raw;    // as delivered
            if (g < NH) begin : up_i
                assign n_in = up_in_n[g*8 +: 8];
                assign raw  = up_in_msg[g*NIN*W +: NIN*W];
            end else begin : dn_i
                assign n_in = dn_in_n[(g - NH)*8 +: 8];
                assign raw  = dn_in_msg[(g - NH)*NIN*W +: NIN*W];
            end
            wire [31:0]  space = {{(31-AW){1'b0}}, icap_q - count_q};
            wire [31:0]  n32 = {24'd0, n_in};
            wire [31:0]  acc = (n32 > space) ? space : n32;   // pushes that succeed
            wire         err = n32 > space;

            wire [NIN*W-1:0] msgs;   // after routing
            for (gk = 0; gk < NIN; gk = gk + 1) begin : rt
                /* verilator lint_off UNUSEDSIGNAL */  // M2S: dev is replaced by the route
                wire [W-1:0] m = raw[gk*W +: W];
                /* verilator lint_on UNUSEDSIGNAL */
                if (g < NH) begin : m2s
                    // switch_ingress_m2s
                    wire [63:0] a     = m[`CXL_MSG_ADDR];
                    /* verilator lint_off UNUSEDSIGNAL */  // dev is a uint8_t in the C
                    wire [63:0] a_sh  = a >> sh_q;
                    /* verilator lint_on UNUSEDSIGNAL */
                    wire [7:0]  dev   = a_sh[7:0] & bmask_q;
                    wire [63:0] low   = a & lmask_q;
                    wire [63:0] loc   = ((a >> shb_q) << sh_q) | low;
                    wire [63:0] loc_ld = (loc & ldmask_q) | ({56'd0, m[`CXL_MSG_HOST]} << ld_q);
                    wire [63:0] addr  = (ld_q != 32'd0) ? loc_ld : loc;
                    assign msgs[gk*W +: W] = {m[`CXL_MSG_DEVLOAD], dev, m[103:64], addr};
                end else begin : s2m
                    assign msgs[gk*W +: W] = m;
                end
            end

            // storage: {ready cycle, message}, the accepted pushes at head + count, ...: ring_ram.v, or
            // plain arrays in the verilator backend's speed build (CXL_SIM_FLAT_RINGS, as in mpipe.v).
            // The head entry is also kept in a register (hd_q, valid while the queue is not empty), so
            // that the arbitration starts from registers: the ring is read at head + 1, the entry that
            // becomes the head when this one leaves.
            wire [AW-1:0] tail = head_q + count_q[AW-1:0];
            wire [AW-1:0] head1 = head_q + {{(AW-1){1'b0}}, 1'b1};
            wire [W+63:0] next_e;   // the stored entry after the head
`ifdef CXL_SIM_FLAT_RINGS
            reg [W-1:0]  mem     [0:DEPTH-1];
            reg [63:0]   rdy_mem [0:DEPTH-1];
            assign next_e = {rdy_mem[head1], mem[head1]};
            integer j;
            always @(posedge clk)
                if (rst_n && ce)
                    for (j = 0; j < NIN; j = j + 1)
                        if (j < acc) begin
                            mem[tail + j[AW-1:0]]     <= msgs[j*W +: W];
                            rdy_mem[tail + j[AW-1:0]] <= push_t;
                        end
`else
            wire [NIN*(W+64)-1:0] wdata;
            for (gk = 0; gk < NIN; gk = gk + 1) begin : wd
                assign wdata[(W+64)*gk +: W+64] = {push_t, msgs[gk*W +: W]};
            end
            ring_ram #(.DEPTH(DEPTH), .W(W + 64), .NW(NIN), .NR(1)) u_ram (
                .clk(clk), .we(rst_n && ce), .wbase({{(32-AW){1'b0}}, tail}), .wn(acc), .wdata(wdata),
                .rbase({{(32-AW){1'b0}}, head1}), .rdata(next_e));
`endif
            reg [W+63:0] hd_q;      // the head entry {ready cycle, message} while count_q > 0

            wire         empty = (count_q == 0);
            wire [AW:0]  cnt_acc = count_q + acc[AW:0];
            wire         bypass = empty && (n_in != 8'd0) && icap_nz_q;   // the head is msgs[0]
            wire [W-1:0] hmsg = bypass ? msgs[W-1:0] : hd_q[W-1:0];
            wire [63:0]  st = hd_q[W +: 64];
            /* verilator lint_off UNUSEDSIGNAL */
            wire [W-1:0] hm = hmsg;
            /* verilator lint_on UNUSEDSIGNAL */
            // pipe_ready(now): a stored head once its ready cycle is reached, a head pushed now with push_rdy
            assign ih_ready[g] = empty ? (bypass && push_rdy) : (st <= now);
            assign ih_byp[g] = bypass;
            assign ih_st[g*64 +: 64] = st;
            assign ih_st_lt_pt[g] = st < push_t;
            assign ih_pt_lt_st[g] = push_t < st;
            assign ih_route[g*8 +: 8] = (g < NH) ? hm[`CXL_MSG_DEV] : hm[`CXL_MSG_HOST];
            assign ih_msg[g*W +: W] = hmsg;
            assign i_empty[g] = empty;

            // the head after this cycle: without a pop the same one, or the first push into an empty
            // queue; after a pop the stored next entry, the first push when the queue held one entry, or
            // the second when the first was taken as it arrived
            wire [W+63:0] first = {push_t, msgs[W-1:0]};
            wire [W+63:0] second = {push_t, msgs[W +: W]};
            wire [W+63:0] hd_keep = empty ? first : hd_q;
            wire [W+63:0] hd_pop = (count_q[AW:1] != {AW{1'b0}}) ? next_e : empty ? second : first;
            always @(posedge clk) begin
                if (!rst_n) begin
                    head_q  <= {AW{1'b0}};
                    count_q <= {(AW+1){1'b0}};
                end else if (ce) begin
                    // the pop (the arbitration's result) selects between values formed beside it
                    head_q  <= ih_pop[g] ? head1 : head_q;
                    count_q <= ih_pop[g] ? cnt_acc - {{AW{1'b0}}, 1'b1} : cnt_acc;
                    hd_q    <= ih_pop[g] ? hd_pop : hd_keep;
                end
            end

            if (g < NH) begin : up_o
                assign up_in_err[g] = err;
                assign up_cr_ret[g] = ih_pop[g];
                assign up_cr_cls[g*8 +: 8] = hm[`CXL_MSG_CLS];
                assign up_in_count[g*32 +: 32] = {{(31-AW){1'b0}}, count_q};
            end else begin : dn_o
                assign dn_in_err[g - NH] = err;
                assign dn_cr_ret[g - NH] = ih_pop[g];
                assign dn_cr_cls[(g - NH)*8 +: 8] = hm[`CXL_MSG_CLS];
                assign dn_in_count[(g - NH)*32 +: 32] = {{(31-AW){1'b0}}, count_q};
            end
        end
    endgenerate

    // ---- egress queues ----
    wire [NE-1:0] e_empty;
    generate
        for (g = 0; g < NE; g = g + 1) begin : egr
            reg [AW-1:0] head_q;
            reg [AW:0]   count_q;
            assign e_full[g] = (count_q >= ecap_q);
            assign e_empty[g] = (count_q == 0);
            wire [AW:0]  cnt_tx = count_q + {{AW{1'b0}}, e_push[g]};   // as link_tx sees it
            wire [7:0]   pop_in;
            if (g < ND) begin : dn_p
                assign pop_in = dn_out_pop_n[g*8 +: 8];
            end else begin : up_p
                assign pop_in = up_out_pop_n[(g - ND)*8 +: 8];
            end
            // pops = min(pop_in, cnt_tx), formed for both values of the push (the arbitration's result)
            // and selected by it
            wire [31:0]  p32 = {24'd0, pop_in};
            wire [31:0]  c0  = {{(31-AW){1'b0}}, count_q};
            wire [31:0]  c1  = c0 + 32'd1;
            /* verilator lint_off UNUSEDSIGNAL */  // <= DEPTH
            wire [31:0]  pops0 = (p32 > c0) ? c0 : p32;
            wire [31:0]  pops1 = (p32 > c1) ? c1 : p32;
            wire [31:0]  cnt0 = c0 - pops0;
            wire [31:0]  cnt1 = c1 - pops1;
            /* verilator lint_on UNUSEDSIGNAL */
            // storage: one push at head + count, the window reads head, head + 1, ...: ring_ram.v, or a
            // plain array in the speed build (CXL_SIM_FLAT_RINGS)
            wire [NPOP*W-1:0] stored;
            wire [AW-1:0] tail = head_q + count_q[AW-1:0];
`ifdef CXL_SIM_FLAT_RINGS
            reg [W-1:0]  mem [0:DEPTH-1];
            for (gk = 0; gk < NPOP; gk = gk + 1) begin : rd
                localparam [AW-1:0] KK = gk;
                assign stored[gk*W +: W] = mem[head_q + KK];
            end
            always @(posedge clk)
                if (rst_n && ce && e_push[g])
                    mem[tail] <= e_push_msg[g*W +: W];
`else
            ring_ram #(.DEPTH(DEPTH), .W(W), .NW(1), .NR(NPOP)) u_ram (
                .clk(clk), .we(rst_n && ce), .wbase({{(32-AW){1'b0}}, tail}), .wn({31'd0, e_push[g]}),
                .wdata(e_push_msg[g*W +: W]), .rbase({{(32-AW){1'b0}}, head_q}), .rdata(stored));
`endif
            wire [NPOP*W-1:0] win;
            for (gk = 0; gk < NPOP; gk = gk + 1) begin : pk
                wire [AW:0] kk = gk;
                assign win[gk*W +: W] = (kk < count_q) ? stored[gk*W +: W] :
                                        (kk == count_q && e_push[g]) ? e_push_msg[g*W +: W] : {W{1'b0}};
            end
            always @(posedge clk) begin
                if (!rst_n) begin
                    head_q  <= {AW{1'b0}};
                    count_q <= {(AW+1){1'b0}};
                end else if (ce) begin
                    head_q  <= e_push[g] ? head_q + pops1[AW-1:0] : head_q + pops0[AW-1:0];
                    count_q <= e_push[g] ? cnt1[AW:0] : cnt0[AW:0];
                end
            end
            if (g < ND) begin : dn_o
                assign dn_out_count[g*32 +: 32] = {{(31-AW){1'b0}}, cnt_tx};
                assign dn_out_msg[g*NPOP*W +: NPOP*W] = win;
            end else begin : up_o
                assign up_out_count[(g - ND)*32 +: 32] = {{(31-AW){1'b0}}, cnt_tx};
                assign up_out_msg[(g - ND)*NPOP*W +: NPOP*W] = win;
            end
        end
    endgenerate

    // ---- switch_idle: ports 0..hosts-1 and 0..devices-1, start of the cycle ----
    reg idle_r;
    integer ik;
    always @* begin
        idle_r = 1'b1;
        for (ik = 0; ik < NH; ik = ik + 1)
            if (hon_q[ik] && !(i_empty[ik] && e_empty[ND + ik]))
                idle_r = 1'b0;
        for (ik = 0; ik < ND; ik = ik + 1)
            if (don_q[ik] && !(i_empty[NH + ik] && e_empty[ik]))
                idle_r = 1'b0;
    end
    assign idle = idle_r;
endmodule

// devctrl.v - the CXL.mem device controller of a Type-3 expander in front of its DRAM (cxl_devctrl,
// hw/hls/devctrl.h/.c; docs/cxl-model.md): devctrl_init (reset), devctrl_tick, devctrl_sent,
// devctrl_idle, and the cxl_dev_stats the tick updates.
//
// One model cycle is one clock edge with ce = 1 (ce = 0: every state holds, the submodules' too; reset
// acts regardless of ce), after the DRAM's schedule clocks s0 (with sched_load), s1, s2 (ce low; dram.v)
// when sched_need is high: they register the DRAM's decision for the ce edge, from the same inputs as the ce
// edge's. Within the cycle, in the C order:
//   1. in_n ingress pushes (to_ingress / the local path's moves), all with ready = now, in call order;
//      message i goes to ing_rwd when its cls == CXL_M2S_RWD, else to ing_req. A push into a full queue
//      is refused and raises in_err (C: model_error = 1). ing_*_space are the start-of-cycle spaces.
//   2. devctrl_tick: accept (the older ready ingress head, equal ages Req first, if its DRAM channel
//      queue has room beyond the requests in processing and the processing pipe has room; cr_ret_req /
//      cr_ret_rwd = credit_return of this cycle), processing pipe head into dram.v (a write's NDR Cmp
//      only with a free response-queue entry), dram.v's tick (enqueue visible to it; RDs take response
//      entries), completions to DRS; DevLoad from the ingress occupancy after the accept.
//   3. the transmitter (or local path) pops drs_pop_n / ndr_pop_n from the response queues, which it sees
//      after the tick (drs_* / ndr_*: the first K entries, this tick's pushes included, *_rdy = entry
//      exists and is ready), then devctrl_sent(drs_pop_n + ndr_pop_n).
// idle is devctrl_idle at the start of the cycle (as the C, it does not look at the processing pipe).
// The statistics are registers: their value after the last enabled edge.
//
// Parameters: the cxl_ctrl_params ports. ingress_depth is sampled at reset (pipe_init); the others are
// used live, as the C reads them every tick (they are constant while the model runs). Pipes: ingress
// capacity ingress_depth (capped at CXL_MAX_FIFO), processing and response queues CXL_MAX_FIFO.
//
// DIFFERENCE from the first interface sketch: the DRAM parameters come as the whole cxl_params word bus
// `prm` (hw/rtl/cxl_layout.vh, CXL_P_DRAM_*; as cxl_model.v wires it), not as dram.v's ports; devctrl
// decodes channels, ranks, map, bits, bank_hash, the timings, refresh, read_queue, write_queue,
// wdrain_high/low, row_policy and scheduler from it and reads them live (dram.v samples only the refresh
// deadlines at reset). Powers of two as dram.v requires (devcfg derives them so).
`default_nettype none
`include "cxl_defs.vh"
`include "cxl_layout.vh"

// Every port but clk and ndr_rdy (which feeds back through the parent's logic) is marked
// public_flat_rd, so that Verilator's instances share their code (as requester.v; docs/rtl.md).
module devctrl #(
    parameter integer NCH = 4,              // DRAM channels built (dram.v)
    parameter integer NB  = 64,             // banks per channel built (dram.v)
    parameter integer NQ  = 64,             // DRAM queue entries per channel and queue built (dram.v)
    parameter integer NIN = 16,             // ingress pushes per cycle
    parameter integer K   = 5,              // response-queue window
    parameter integer W   = `CXL_MSG_W
) (
    input  wire         clk,
    input  wire         rst_n /* verilator public_flat_rd */,              // synchronous, active low: devctrl_init
    input  wire         ce /* verilator public_flat_rd */,                 // clock enable: the state advances on edges with ce = 1
    input  wire         s0 /* verilator public_flat_rd */,                 // the DRAM's schedule clocks before ce (dram.v)
    input  wire         s1 /* verilator public_flat_rd */,
    input  wire         s2 /* verilator public_flat_rd */,
    output wire         sched_need /* verilator public_flat_rd */,         // the DRAM needs s1, s2 this cycle
    output wire         sched_load /* verilator public_flat_rd */,         // ... and s0 before them (an enqueue)
    input  wire         skip /* verilator public_flat_rd */,               // idle skip (cxl_model.v): the DRAM's, dram_chan.v
    input  wire [31:0]  skip_n /* verilator public_flat_rd */,
    output wire [15:0]  dram_rest /* verilator public_flat_rd */,          // the DRAM's timing-counter bound
    output wire [31:0]  dram_ref_min /* verilator public_flat_rd */,       // cycles to its next refresh deadline
    input  wire         snap /* verilator public_flat_rd */,               // period jump (cxl_model.v): the DRAM's, dram.v
    input  wire         pmatch /* verilator public_flat_rd */,
    input  wire         pjump /* verilator public_flat_rd */,
    input  wire [5:0]   psh /* verilator public_flat_rd */,
    output wire         dram_same /* verilator public_flat_rd */,
    output wire         dram_canon /* verilator public_flat_rd */,
    output wire         dram_nonref /* verilator public_flat_rd */,
    input  wire [63:0]  now /* verilator public_flat_rd */,
    // cxl_ctrl_params
    input  wire [31:0]  req_latency_cycles /* verilator public_flat_rd */,
    input  wire [31:0]  rsp_latency_cycles /* verilator public_flat_rd */,
    input  wire [31:0]  ingress_depth /* verilator public_flat_rd */,      // sampled at reset
    input  wire [31:0]  response_depth /* verilator public_flat_rd */,
    input  wire [31:0]  devload_optimal /* verilator public_flat_rd */,
    input  wire [31:0]  devload_moderate /* verilator public_flat_rd */,
    input  wire [31:0]  devload_severe /* verilator public_flat_rd */,
    // cxl_params words; devctrl reads the dram fields (CXL_P_DRAM_*)
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [32*`CXL_PRM_WORDS-1:0] prm /* verilator public_flat_rd */,
    /* verilator lint_on UNUSEDSIGNAL */
    // ingress pushes of this cycle, in call order
    input  wire [7:0]   in_n /* verilator public_flat_rd */,               // <= NIN
    input  wire [NIN*W-1:0] in_msg /* verilator public_flat_rd */,         // message i at [W*i +: W]
    output wire         in_err /* verilator public_flat_rd */,
    output wire [31:0]  ing_req_space /* verilator public_flat_rd */,      // pipe_space, start of the cycle
    output wire [31:0]  ing_rwd_space /* verilator public_flat_rd */,
    // credit returns of the accept step (at most one)
    output wire         cr_ret_req /* verilator public_flat_rd */,
    output wire         cr_ret_rwd /* verilator public_flat_rd */,
    // the response queues after this cycle's tick
    output wire [K-1:0]   drs_rdy /* verilator public_flat_rd */,
    output wire [K*W-1:0] drs_msg /* verilator public_flat_rd */,
    output wire [K-1:0]   ndr_rdy,
    output wire [K*W-1:0] ndr_msg /* verilator public_flat_rd */,
    input  wire [7:0]   drs_pop_n /* verilator public_flat_rd */,
    input  wire [7:0]   ndr_pop_n /* verilator public_flat_rd */,
    output wire         idle /* verilator public_flat_rd */,               // devctrl_idle, start of the cycle
    output wire         refresh_due /* verilator public_flat_rd */,        // a refresh deadline has passed (cxl_model_idle: not quiet)
    // cxl_dev_stats after the last enabled edge
    output wire [63:0]  st_reads /* verilator public_flat_rd */,
    output wire [63:0]  st_writes /* verilator public_flat_rd */,
    output wire [63:0]  st_acts /* verilator public_flat_rd */,
    output wire [63:0]  st_pres /* verilator public_flat_rd */,
    output wire [63:0]  st_refs /* verilator public_flat_rd */,
    output wire [63:0]  st_row_conflicts /* verilator public_flat_rd */,
    output reg  [63:0]  st_ingress_occ_sum /* verilator public_flat_rd */,
    output reg  [63:0]  st_ingress_occ_max /* verilator public_flat_rd */,
    output wire [63:0]  st_dramq_occ_sum /* verilator public_flat_rd */,
    output reg  [255:0] st_devload /* verilator public_flat_rd */          // devload[k] at [64k +: 64]
);
    localparam [7:0] CLS_RWD = `CXL_M2S_RWD;
    localparam [7:0] CLS_DRS = `CXL_S2M_DRS;
    localparam [7:0] CLS_NDR = `CXL_S2M_NDR;
    localparam [31:0] MAX_FIFO = `CXL_MAX_FIFO;

    // ---- DRAM parameters from the prm bus ----
    function [31:0] pw(input integer i);
        pw = prm[32*i +: 32];
    endfunction
    wire [31:0] d_channels = pw(`CXL_P_DRAM_CHANNELS);
    /* verilator lint_off UNUSEDSIGNAL */  // counts <= 4, enum < 3
    wire [31:0] d_ranks    = pw(`CXL_P_DRAM_RANKS);
    wire [31:0] d_refresh  = pw(`CXL_P_DRAM_REFRESH);
    /* verilator lint_on UNUSEDSIGNAL */
    wire [31:0] d_rq       = pw(`CXL_P_DRAM_READ_QUEUE);
    wire [31:0] d_wq       = pw(`CXL_P_DRAM_WRITE_QUEUE);
    reg  [17:0] map_order;
    reg  [35:0] map_bits;
    integer f;
    always @* begin
        for (f = 0; f < 6; f = f + 1) begin
            map_order[3*f +: 3] = prm[8*(`CXL_P_DRAM_MAP_BYTE + f) +: 3];
            map_bits[6*f +: 6]  = prm[32*(`CXL_P_DRAM_BITS + f) +: 6];
        end
    end
    wire bank_hash = pw(`CXL_P_DRAM_BANK_HASH) != 32'd0;

    // ---- state ----
    reg [31:0] rsv_rd [0:3];   // in the processing pipe, per channel
    reg [31:0] rsv_wr [0:3];
    reg [31:0] rsp_reserved;

    // ---- 1. ingress pushes, split by class in call order ----
    // Push i goes to slot "pushes of its class before it" (<= i) of its class's queue. Each push's slot is
    // a population count over the pushes before it, and slot q an AND-OR select of the push whose slot
    // is q: no push's place depends on the one before it (the C's push order, without its 16 dependent
    // steps; tests/rtl/unit/test_devctrl.cpp).
    localparam integer CW = $clog2(NIN + 1);   // counts 0 .. NIN
    localparam integer PCN = NIN;
`include "popc.vh"
    reg [NIN*W-1:0] req_in, rwd_in;
    reg [7:0] req_n, rwd_n;
    reg [NIN-1:0] in_w, in_r;           // push i exists and is RwD / anything else (Req)
    reg [CW-1:0]  in_slot [0:NIN-1];    // its slot in its class's queue
    integer i, q;
    always @* begin
        for (i = 0; i < NIN; i = i + 1) begin
            in_w[i] = i < {24'd0, in_n} && in_msg[W*i + 88 +: 8] == CLS_RWD;
            in_r[i] = i < {24'd0, in_n} && in_msg[W*i + 88 +: 8] != CLS_RWD;
        end
        for (i = 0; i < NIN; i = i + 1)
            in_slot[i] = popc((in_w[i] ? in_w : in_r) & ((1 << i) - 1));
        rwd_n = {{(8-CW){1'b0}}, popc(in_w)};
        req_n = {{(8-CW){1'b0}}, popc(in_r)};
        req_in = {(NIN*W){1'b0}};
        rwd_in = {(NIN*W){1'b0}};
        for (q = 0; q < NIN; q = q + 1)
            for (i = q; i < NIN; i = i + 1) begin   // slot <= i
                if (in_w[i] && in_slot[i] == q[CW-1:0])
                    rwd_in[W*q +: W] = rwd_in[W*q +: W] | in_msg[W*i +: W];
                if (in_r[i] && in_slot[i] == q[CW-1:0])
                    req_in[W*q +: W] = req_in[W*q +: W] | in_msg[W*i +: W];
            end
    end

    // The two ingress queues keep no ready cycles (mpipe STAMP = 0): every entry is ready at its push
    // (ready = now, pushes before the accept), so the C's ready cycles only order the heads: the RwD head
    // goes first iff it was pushed in an earlier cycle than the Req head (equal cycles: Req first). Each
    // Req entry carries, as a stamp beside its message, the number of RwD pushes before its cycle
    // (rwd_pushed_q, modulo 2^TW); rwd_popped_q counts the RwD pops. The RwD head is entry number
    // rwd_popped_q of all RwD pushes, so it is older than the Req head iff rwd_popped_q < the head's stamp.
    // While a Req entry waits, no RwD pushed at or after its cycle can leave (that needs a Req head pushed
    // later than it), so the stamp minus rwd_popped_q stays in 0 .. (RwD entries queued) <= DEPTH and
    // "older" is "stamp != rwd_popped_q" in TW = log2(DEPTH) + 1 bits: exact, for any wait.
    localparam integer TW = $clog2(`CXL_MAX_FIFO) + 1;
    reg  [TW-1:0] rwd_pushed_q, rwd_popped_q;
    reg  [NIN*(W+TW)-1:0] req_in_st;  // Req pushes with their stamp: {stamp, msg}
    integer si;
    always @*
        for (si = 0; si < NIN; si = si + 1)
            req_in_st[(W+TW)*si +: W+TW] = {rwd_pushed_q, req_in[W*si +: W]};

    wire        hr, hw;             // the ingress heads exist (and are ready: every entry is)
    wire [W+TW-1:0] hr_st;          // the Req head with its stamp
    wire [W-1:0] hr_msg = hr_st[W-1:0];
    wire [W-1:0] hw_msg;
    wire [31:0] req_cnt, rwd_cnt;
    wire [7:0]  req_acc, rwd_acc;
    wire        req_err, rwd_err;
    wire        accept;
    wire        take_w = (hr && hw) ? (hr_st[W +: TW] != rwd_popped_q) : hw;
    /* verilator lint_off UNUSEDSIGNAL */
    wire        hr_valid, hw_valid;
    wire [63:0] hr_ready, hw_ready;  // 0: STAMP = 0
    /* verilator lint_on UNUSEDSIGNAL */

    mpipe #(.DEPTH(`CXL_MAX_FIFO), .W(W+TW), .NPUSH(NIN), .K(1), .STAMP(0)) u_ing_req (
        .clk(clk), .rst_n(rst_n), .ce(ce), .now(now), .cap(ingress_depth), .push_first(1'b1),
        .push_n(req_n), .push_msg(req_in_st), .push_ready(now), .pop_n({7'd0, accept && !take_w}),
        .win_valid(hr_valid), .win_rdy(hr), .win_msg(hr_st), .win_ready(hr_ready),
        .count(req_cnt), .space(ing_req_space), .push_acc(req_acc), .push_err(req_err));
    mpipe #(.DEPTH(`CXL_MAX_FIFO), .W(W), .NPUSH(NIN), .K(1), .STAMP(0)) u_ing_rwd (
        .clk(clk), .rst_n(rst_n), .ce(ce), .now(now), .cap(ingress_depth), .push_first(1'b1),
        .push_n(rwd_n), .push_msg(rwd_in), .push_ready(now), .pop_n({7'd0, accept && take_w}),
        .win_valid(hw_valid), .win_rdy(hw), .win_msg(hw_msg), .win_ready(hw_ready),
        .count(rwd_cnt), .space(ing_rwd_space), .push_acc(rwd_acc), .push_err(rwd_err));
    always @(posedge clk) begin
        if (!rst_n) begin
            rwd_pushed_q <= {TW{1'b0}};
            rwd_popped_q <= {TW{1'b0}};
        end else if (ce) begin
            rwd_pushed_q <= rwd_pushed_q + {{(TW-8){1'b0}}, rwd_acc};  // TW >= 9 (DEPTH 256)
            rwd_popped_q <= rwd_popped_q + {{(TW-1){1'b0}}, accept && take_w};
        end
    end
    assign in_err = req_err || rwd_err;

    // ---- 2a. accept one message from ingress ----
    wire [W-1:0] am = take_w ? hw_msg : hr_msg;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] a_ch, a_rank, a_bg, a_bank, a_row, a_col;
    /* verilator lint_on UNUSEDSIGNAL */
    dram_map u_amap (.clk(clk), .rst_n(rst_n), .addr(am[`CXL_MSG_ADDR]), .map_order(map_order), .map_bits(map_bits),
                     .bank_hash(bank_hash), .ch(a_ch), .rank(a_rank), .bg(a_bg), .bank(a_bank), .row(a_row),
                     .col(a_col));
    wire [1:0]  ach = a_ch[1:0];
    wire [27:0] d_nr, d_nw;         // dram.v queue counts, start of the cycle
    wire [31:0] a_space = take_w ? d_wq - {25'd0, d_nw[7*ach +: 7]} : d_rq - {25'd0, d_nr[7*ach +: 7]};
    wire [31:0] a_used  = take_w ? rsv_wr[ach] : rsv_rd[ach];
    wire [31:0] proc_space;
    assign accept = (hr || hw) && a_space > a_used && proc_space != 32'd0;
    assign cr_ret_req = accept && !take_w;
    assign cr_ret_rwd = accept && take_w;

    // the processing pipe: this cycle's accept is pushed before its head is looked at
    wire        pm_rdy;
    wire [W-1:0] pm;
    /* verilator lint_off UNUSEDSIGNAL */
    wire        pm_valid;
    wire [63:0] pm_ready;
    wire [31:0] proc_cnt;
    wire [7:0]  proc_acc;
    wire        proc_err;
    /* verilator lint_on UNUSEDSIGNAL */
    wire        to_dram;
    mpipe #(.DEPTH(`CXL_MAX_FIFO), .W(W), .NPUSH(1), .K(1)) u_proc (
        .clk(clk), .rst_n(rst_n), .ce(ce), .now(now), .cap(MAX_FIFO), .push_first(1'b1),
        .push_n({7'd0, accept}), .push_msg(am), .push_ready(now + {32'd0, req_latency_cycles}),
        .pop_n({7'd0, to_dram}),
        .win_valid(pm_valid), .win_rdy(pm_rdy), .win_msg(pm), .win_ready(pm_ready),
        .count(proc_cnt), .space(proc_space), .push_acc(proc_acc), .push_err(proc_err));

    // occupancy of ingress after the accept (DevLoad and the statistics)
    wire [31:0] occ = req_cnt + {24'd0, req_acc} + rwd_cnt + {24'd0, rwd_acc} - {31'd0, accept};
    wire [1:0]  devload = occ < devload_optimal ? 2'd0 : occ < devload_moderate ? 2'd1 :
                          occ < devload_severe ? 2'd2 : 2'd3;

    // ---- 2b. processing done: into the DRAM controller ----
    wire pm_w = pm[`CXL_MSG_CLS] == CLS_RWD;
    assign to_dram = pm_rdy && (!pm_w || rsp_reserved < response_depth);
    wire ndr = to_dram && pm_w;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] p_ch, p_rank, p_bg, p_bank, p_row, p_col;
    /* verilator lint_on UNUSEDSIGNAL */
    dram_map u_pmap (.clk(clk), .rst_n(rst_n), .addr(pm[`CXL_MSG_ADDR]), .map_order(map_order), .map_bits(map_bits),
                     .bank_hash(bank_hash), .ch(p_ch), .rank(p_rank), .bg(p_bg), .bank(p_bank), .row(p_row),
                     .col(p_col));
    wire [1:0] pch = p_ch[1:0];

    // ---- 3. DRAM ----
    wire [31:0] rsv_after = rsp_reserved + {31'd0, ndr};
    wire [31:0] room = response_depth - rsv_after;
    wire [31:0] room_out;
    wire [2:0]  done_n;
    wire [4*W-1:0] done_msg;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [3:0]  cmd_valid, cmd_auto_pre;
    wire [11:0] cmd_kind;
    wire [7:0]  cmd_rank;
    wire [23:0] cmd_bg, cmd_bank;
    wire [127:0] cmd_row;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [23:0] d_rdn;
    wire [3:0]  d_refdue;
    assign refresh_due = d_refdue != 4'd0;
    dram #(.NCH(NCH), .NB(NB), .NQ(NQ)) u_dram (
        .clk(clk), .rst_n(rst_n), .ce(ce), .s0(s0), .s1(s1), .s2(s2), .sched_need(sched_need), .sched_load(sched_load),
        .skip(skip), .skip_n(skip_n), .rest(dram_rest),
        .ref_min(dram_ref_min), .snap(snap), .pmatch(pmatch), .pjump(pjump), .psh(psh), .same(dram_same),
        .canon(dram_canon), .nonref(dram_nonref), .now(now),
        .channels(d_channels[2:0]), .ranks(d_ranks[2:0]), .map_order(map_order), .map_bits(map_bits),
        .bank_hash(bank_hash),
        .tRCD(pw(`CXL_P_DRAM_TRCD)), .tCL(pw(`CXL_P_DRAM_TCL)), .tRP(pw(`CXL_P_DRAM_TRP)),
        .tRAS(pw(`CXL_P_DRAM_TRAS)), .tRC(pw(`CXL_P_DRAM_TRC)), .tCWL(pw(`CXL_P_DRAM_TCWL)),
        .tWR(pw(`CXL_P_DRAM_TWR)), .tRTP(pw(`CXL_P_DRAM_TRTP)), .tBL(pw(`CXL_P_DRAM_TBL)),
        .tCCD_S(pw(`CXL_P_DRAM_TCCD_S)), .tCCD_L(pw(`CXL_P_DRAM_TCCD_L)),
        .tCCD_S_WR(pw(`CXL_P_DRAM_TCCD_S_WR)), .tCCD_L_WR(pw(`CXL_P_DRAM_TCCD_L_WR)),
        .tRRD_S(pw(`CXL_P_DRAM_TRRD_S)), .tRRD_L(pw(`CXL_P_DRAM_TRRD_L)), .tFAW(pw(`CXL_P_DRAM_TFAW)),
        .tWTR_S(pw(`CXL_P_DRAM_TWTR_S)), .tWTR_L(pw(`CXL_P_DRAM_TWTR_L)), .tRTW(pw(`CXL_P_DRAM_TRTW)),
        .tREFI(pw(`CXL_P_DRAM_TREFI)), .tRFC(pw(`CXL_P_DRAM_TRFC)), .tRFCsb(pw(`CXL_P_DRAM_TRFCSB)),
        .refresh(d_refresh[1:0]),
        .wdrain_high(pw(`CXL_P_DRAM_WDRAIN_HIGH)), .wdrain_low(pw(`CXL_P_DRAM_WDRAIN_LOW)),
        .row_closed(pw(`CXL_P_DRAM_ROW_POLICY) == 32'd1), .fcfs(pw(`CXL_P_DRAM_SCHEDULER) == 32'd1),
        .enq_valid(to_dram), .enq_msg(pm),
        .rsp_room(room), .rsp_room_out(room_out),
        .done_n(done_n), .done_msg(done_msg),
        .cmd_valid(cmd_valid), .cmd_kind(cmd_kind), .cmd_rank(cmd_rank), .cmd_bg(cmd_bg), .cmd_bank(cmd_bank),
        .cmd_row(cmd_row), .cmd_auto_pre(cmd_auto_pre),
        .nr(d_nr), .nw(d_nw), .rd_n(d_rdn), .refresh_due(d_refdue),
        .st_reads(st_reads), .st_writes(st_writes), .st_acts(st_acts), .st_pres(st_pres), .st_refs(st_refs),
        .st_row_conflicts(st_row_conflicts), .occ_sum(st_dramq_occ_sum));

    // ---- responses: NDR of 2b, DRS of 3, DevLoad stamped ----
    reg [W-1:0]   ndr_in;
    reg [4*W-1:0] drs_in;
    integer k;
    always @* begin
        ndr_in = pm;
        ndr_in[`CXL_MSG_CLS] = CLS_NDR;
        ndr_in[`CXL_MSG_DEVLOAD] = {6'd0, devload};
        drs_in = done_msg;
        for (k = 0; k < 4; k = k + 1) begin
            drs_in[W*k + 88 +: 8] = CLS_DRS;
            drs_in[W*k + 112 +: 8] = {6'd0, devload};
        end
    end
    // the response queues: every entry is ready rsp_latency_cycles after its push (delay_mpipe.v)
    /* verilator lint_off UNUSEDSIGNAL */
    wire [K-1:0]    drs_valid, ndr_valid;
    wire [31:0]     drs_cnt, ndr_cnt, drs_space, ndr_space;
    wire [7:0]      drs_acc, ndr_acc;
    wire            drs_err, ndr_err;
    /* verilator lint_on UNUSEDSIGNAL */
    delay_mpipe #(.DEPTH(`CXL_MAX_FIFO), .W(W), .NPUSH(1), .K(K)) u_rsp_ndr (
        .clk(clk), .rst_n(rst_n), .ce(ce), .now_lo(now[31:0]), .delay(rsp_latency_cycles),
        .push_n({7'd0, ndr}), .push_msg(ndr_in), .pop_n(ndr_pop_n),
        .win_valid(ndr_valid), .win_rdy(ndr_rdy), .win_msg(ndr_msg),
        .count(ndr_cnt), .space(ndr_space), .push_acc(ndr_acc), .push_err(ndr_err));
    delay_mpipe #(.DEPTH(`CXL_MAX_FIFO), .W(W), .NPUSH(4), .K(K)) u_rsp_drs (
        .clk(clk), .rst_n(rst_n), .ce(ce), .now_lo(now[31:0]), .delay(rsp_latency_cycles),
        .push_n({5'd0, done_n}), .push_msg(drs_in), .pop_n(drs_pop_n),
        .win_valid(drs_valid), .win_rdy(drs_rdy), .win_msg(drs_msg),
        .count(drs_cnt), .space(drs_space), .push_acc(drs_acc), .push_err(drs_err));

    // ---- devctrl_idle (start of the cycle) ----
    reg [31:0] dq_occ, rd_fly;
    integer c;
    always @* begin
        dq_occ = 32'd0;
        rd_fly = 32'd0;
        for (c = 0; c < 4; c = c + 1)
            if (c < d_channels) begin
                dq_occ = dq_occ + {25'd0, d_nr[7*c +: 7]} + {25'd0, d_nw[7*c +: 7]};
                rd_fly = rd_fly + {26'd0, d_rdn[6*c +: 6]};
            end
    end
    assign idle = rsp_reserved == 32'd0 && req_cnt == 32'd0 && rwd_cnt == 32'd0 && rd_fly == 32'd0 &&
                  dq_occ == 32'd0;

    // ---- state update ----
    wire [63:0] nresp = {63'd0, ndr} + {61'd0, done_n};
    integer j;
    always @(posedge clk) begin
        if (!rst_n) begin
            for (j = 0; j < 4; j = j + 1) begin
                rsv_rd[j] <= 32'd0;
                rsv_wr[j] <= 32'd0;
            end
            rsp_reserved <= 32'd0;
            st_ingress_occ_sum <= 64'd0;
            st_ingress_occ_max <= 64'd0;
            st_devload <= 256'd0;
        end else if (ce) begin
            for (j = 0; j < 4; j = j + 1) begin
                rsv_rd[j] <= rsv_rd[j] + {31'd0, accept && !take_w && ach == j[1:0]}
                                       - {31'd0, to_dram && !pm_w && pch == j[1:0]};
                rsv_wr[j] <= rsv_wr[j] + {31'd0, accept && take_w && ach == j[1:0]}
                                       - {31'd0, to_dram && pm_w && pch == j[1:0]};
            end
            // NDRs and issued reads take entries; the transmitter's pops give them back (devctrl_sent)
            rsp_reserved <= rsv_after + (room - room_out) - {24'd0, drs_pop_n} - {24'd0, ndr_pop_n};
            st_ingress_occ_sum <= st_ingress_occ_sum + {32'd0, occ};
            if ({32'd0, occ} > st_ingress_occ_max)
                st_ingress_occ_max <= {32'd0, occ};
            st_devload[64*devload +: 64] <= st_devload[64*devload +: 64] + nresp;
        end
    end
endmodule

`default_nettype wire

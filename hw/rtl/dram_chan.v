// dram_chan.v - one channel of the DRAM controller (cxl_dram_chan, hw/hls/dram.c): read and write queues,
// the timing state (dram_timing.v), refresh, the FR-FCFS / FCFS scheduler and the read-data FIFO.
// Instantiated by dram.v, which maps addresses, hands out the response room and merges the channels.
//
// One C cycle is two schedule clocks and then the edge with ce = 1 (FASED-style: the cycle's decision is
// taken over clocks with a register between the steps, then committed):
//   - s1 (ce low): the candidates. From the registers alone (the state, and the cycle's enqueue that dram.v
//     registered in its load clock s0: enq_r / enq_w / enq_e, at most one), the write mode, the refresh
//     decision and the mode's candidate entries (the enqueued one appended, as the C makes it visible to the
//     same cycle's scheduling) go into the c_* registers;
//   - s2 (ce low): the pick. The oldest ready row hit (a RD only with col_grant, which dram.v hands out from
//     the channels' rd_cand of this clock) or else the oldest ready row command, its bank and row, and the
//     command go into the d_* registers;
//   - ce: the commit. The queues, hit counts, timing counters and read FIFO move by the registered decision
//     when `dv` (dram.v: s2 came in this cycle); without dv the cycle had nothing to schedule (dram.v's
//     sched_need was low: no enqueue, both queues empty, no refresh due), so nothing issues and the write
//     mode takes the value the C gives empty queues.
// No path runs from the enqueue through the pick: the longest were 43.75 LUT levels in one clock
// (docs/rtl-synthesis.md). The iss_* outputs are the committed command (valid in the ce clock).
//
// Shaped as hardware:
// - Queues: per entry only what the scheduler reads is in registers (bank index, row, row-hit bit, in
//   age order: entry 0 is the oldest, a removal shifts the younger ones up); a read's message (120 bits)
//   sits in a RAM (one write port: the enqueue; one read port: the issued read) at a slot the entry
//   points to, allocated from a free mask. A write's message is never read again (the C keeps it but
//   reads only a read's), so the write queue has no payload.
// - Timing: small down-counters (dram_timing.v), read as per-bank readiness vectors.
// - Refresh deadlines: per rank a signed count of the cycles to the deadline (ref_due - now).
// - Read data: a FIFO of the message and the low 16 bits of the cycle its burst ends; every entry
//   leaves exactly at that cycle (one RD per cycle, all with the latency tCL + tBL <= 32766 < 2^15), so
//   a 16-bit difference with now tells it.
//
// The scheduler (the C's scan over the mode's queue) is two priority encoders over per-entry bits: the
// oldest ready row hit (column command) and the oldest ready non-hit (ACT to a closed bank, or PRE to a
// bank whose open row no queued entry of the mode hits: under FR-FCFS). The C stops at the first ready
// hit and takes a row command only when no hit is ready, so "oldest ready hit, else oldest ready row
// command" is the same choice. An entry's readiness is a bit of a per-bank vector selected by its bank
// index. hits_r / hits_w are the C's counters: per bank, the entries of each queue that hit its open row.
//
// Idle skip (cxl_model.v): an edge with ce and `skip` is a model cycle in which the whole model is quiet
// (no queued request, no read data, no refresh due: no command issues) followed by skip_n more such
// cycles at once. The refresh deadlines move by 1 + skip_n (saturating as one by one), and the timing
// counters are flushed to 0 (dram_timing.v), which is exact when every counter would have reached 0:
// `rest` is a bound on every counter (each command raises it to the largest value that command can set:
// tRFC for REF, tRFCsb for REFsb, `reach` (every timing summed, dram.v) for any other), and the model
// skips only when rest <= 1 + skip_n. ref_min is the cycles to this channel's next refresh deadline
// (the least ref_left of its refreshing ranks; 2^31 - 1 when none), which bounds the skip.
//
// Period jump (cxl_model.v): `snap` (on a model cycle) keeps the refreshing ranks' deadlines and same-bank
// pointers; `same` says whether they are equal to that copy now; `canon` marks the cycle at which rank 0
// is due with its same-bank pointer at bank 0 (where cxl_model.v takes and compares its copies);
// `nonref` is a command other than a refresh this cycle. A `pjump` edge (ce low) is a whole number of
// refresh periods at once: the refreshing ranks' deadlines come back to where they were, so they stay;
// the other slots move by 1 + skip_n as in a skip, and nothing else changes.
//
// The C's wake/wake_on_room skip is an optimisation that does not change results (dram.c); the RTL
// evaluates the channel every cycle.
`default_nettype none
`include "cxl_defs.vh"

module dram_chan #(
    parameter integer NB = 64,      // banks built (ranks x bank groups x banks; a power of two, 4..64)
    parameter integer NQ = 64       // read and write queue entries built (a power of two, 2..64)
) (
    input  wire        clk,
    input  wire        rst_n /* verilator public_flat_rd */,
    input  wire        ce /* verilator public_flat_rd */,
    input  wire        s1 /* verilator public_flat_rd */,           // schedule clock 1: the candidates (ce low)
    input  wire        s2 /* verilator public_flat_rd */,           // schedule clock 2: the pick (ce low)
    input  wire        dv /* verilator public_flat_rd */,           // the d_* registers hold this cycle's decision
    input  wire        skip /* verilator public_flat_rd */,         // idle skip: this edge is 1 + skip_n quiet cycles
    input  wire [31:0] skip_n /* verilator public_flat_rd */,       // (saturated at 2^32 - 1)
    input  wire [15:0] reach /* verilator public_flat_rd */,        // bound of any non-refresh command's raise
    output reg  [15:0] rest /* verilator public_flat_rd */,         // bound on every timing counter
    output reg  [31:0] ref_min /* verilator public_flat_rd */,      // cycles to the next refresh deadline (signed)
    input  wire        snap /* verilator public_flat_rd */,         // period jump: keep the deadlines (with ce)
    input  wire        pjump /* verilator public_flat_rd */,        // ... a jump of 1 + skip_n cycles (ce low)
    output reg         same /* verilator public_flat_rd */,         // the deadlines equal the kept ones
    output wire        canon /* verilator public_flat_rd */,        // rank 0 due, its same-bank pointer at 0
    output wire        nonref /* verilator public_flat_rd */,       // a command other than a refresh issues
    /* verilator lint_off UNUSEDSIGNAL */  // the read FIFO compares the low 16 bits
    input  wire [63:0] now /* verilator public_flat_rd */,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [1:0]  ch /* verilator public_flat_rd */,            // this channel's index (refresh stagger)
    input  wire        en /* verilator public_flat_rd */,            // ch < channels
    input  wire [2:0]  ranks /* verilator public_flat_rd */,
    input  wire [2:0]  bg_bits /* verilator public_flat_rd */,
    input  wire [2:0]  bank_bits /* verilator public_flat_rd */,
    input  wire [3:0]  ref_shift /* verilator public_flat_rd */,     // log2(channels * ranks)
    input  wire [31:0] tRCD /* verilator public_flat_rd */,
    input  wire [31:0] tCL /* verilator public_flat_rd */,
    input  wire [31:0] tRP /* verilator public_flat_rd */,
    input  wire [31:0] tRAS /* verilator public_flat_rd */,
    input  wire [31:0] tRC /* verilator public_flat_rd */,
    input  wire [31:0] tCWL /* verilator public_flat_rd */,
    input  wire [31:0] tWR /* verilator public_flat_rd */,
    input  wire [31:0] tRTP /* verilator public_flat_rd */,
    input  wire [31:0] tBL /* verilator public_flat_rd */,
    input  wire [31:0] tCCD_S /* verilator public_flat_rd */,
    input  wire [31:0] tCCD_L /* verilator public_flat_rd */,
    input  wire [31:0] tCCD_S_WR /* verilator public_flat_rd */,
    input  wire [31:0] tCCD_L_WR /* verilator public_flat_rd */,
    input  wire [31:0] tRRD_S /* verilator public_flat_rd */,
    input  wire [31:0] tRRD_L /* verilator public_flat_rd */,
    input  wire [31:0] tFAW /* verilator public_flat_rd */,
    input  wire [31:0] tWTR_S /* verilator public_flat_rd */,
    input  wire [31:0] tWTR_L /* verilator public_flat_rd */,
    input  wire [31:0] tRTW /* verilator public_flat_rd */,
    input  wire [31:0] tREFI /* verilator public_flat_rd */,
    input  wire [31:0] tRFC /* verilator public_flat_rd */,
    input  wire [31:0] tRFCsb /* verilator public_flat_rd */,
    input  wire [1:0]  refresh /* verilator public_flat_rd */,
    input  wire [31:0] wdrain_high /* verilator public_flat_rd */,
    input  wire [31:0] wdrain_low /* verilator public_flat_rd */,
    input  wire        row_closed /* verilator public_flat_rd */,
    input  wire        fcfs /* verilator public_flat_rd */,
    input  wire        enq_r /* verilator public_flat_rd */,          // this cycle's enqueue (registered, dram.v)
    input  wire        enq_w /* verilator public_flat_rd */,
    input  wire [`CXL_MSG_W+51:0] enq_e /* verilator public_flat_rd */,   // {msg, row, rank, bg, bank, bank index}
    input  wire        col_grant /* verilator public_flat_rd */,     // s2: a response-queue entry is free for a RD this cycle
    output wire        rd_cand /* verilator public_flat_rd */,       // s2: a RD would issue given room
    output wire        done_valid /* verilator public_flat_rd */,
    output wire [`CXL_MSG_W-1:0] done_msg /* verilator public_flat_rd */,
    output wire        iss_valid /* verilator public_flat_rd */,
    output wire [2:0]  iss_cmd /* verilator public_flat_rd */,
    output wire [1:0]  iss_rank /* verilator public_flat_rd */,
    output wire [5:0]  iss_bg /* verilator public_flat_rd */,
    output wire [5:0]  iss_bank /* verilator public_flat_rd */,
    output wire [31:0] iss_row /* verilator public_flat_rd */,
    output wire        iss_auto_pre /* verilator public_flat_rd */,
    output wire        iss_conflict /* verilator public_flat_rd */,
    output reg  [6:0]  nr /* verilator public_flat_rd */,
    output reg  [6:0]  nw /* verilator public_flat_rd */,
    output wire [5:0]  rd_n /* verilator public_flat_rd */,
    output wire [6:0]  nr_next /* verilator public_flat_rd */,
    output wire [6:0]  nw_next /* verilator public_flat_rd */,
    output wire        refresh_due /* verilator public_flat_rd */    // a rank's refresh deadline has passed: the model is not idle
);
    localparam MW = `CXL_MSG_W;
    localparam integer BW = $clog2(NB);   // bank indices are 6 bits wide; those below NB use BW
    localparam integer QW = $clog2(NQ);   // queue entry indices are 6 bits wide; those below NQ use QW
    localparam [NQ-1:0] Q1 = 1;
    localparam [NB-1:0] B1 = 1;
    localparam [2:0] C_ACT = 3'd0, C_PRE = 3'd1, C_RD = 3'd2, C_WR = 3'd3, C_REF = 3'd4, C_REFSB = 3'd5;
    // index bit k of the positions 0..63: position i is in mask k when bit k of i is set
    localparam [63:0] IX0 = 64'haaaaaaaaaaaaaaaa, IX1 = 64'hcccccccccccccccc, IX2 = 64'hf0f0f0f0f0f0f0f0,
                      IX3 = 64'hff00ff00ff00ff00, IX4 = 64'hffff0000ffff0000, IX5 = 64'hffffffff00000000;

    // The index of the lowest set bit of v (0 when none; the oldest entry of a mask in age order): the
    // lowest set bit as a one-hot (v & -v, a carry chain), then each index bit an OR over the positions
    // that have it. (A loop that keeps the last set bit it meets, from the top down, is the same function
    // as a chain of NQ multiplexers: 24 of the channel's 49 LUT levels, docs/rtl-synthesis.md.)
    function [NQ-1:0] lowest_oh(input [NQ-1:0] v);
        lowest_oh = v & (~v + Q1);
    endfunction
    function [5:0] enc(input [NQ-1:0] oh);
        enc = {|(oh & IX5[NQ-1:0]), |(oh & IX4[NQ-1:0]), |(oh & IX3[NQ-1:0]),
               |(oh & IX2[NQ-1:0]), |(oh & IX1[NQ-1:0]), |(oh & IX0[NQ-1:0])};
    endfunction
    // the positions below n (all when n >= NQ): a thermometer code, without the subtraction of (1 << n) - 1
    function [NQ-1:0] below(input [6:0] n);
        below = {25'd0, n} >= NQ ? {NQ{1'b1}} : ~({NQ{1'b1}} << n);
    endfunction

    wire [MW-1:0] enq_msg = enq_e[MW+51:52];
    wire [31:0]   enq_row = enq_e[51:20];
    wire [5:0]    enq_b = enq_e[5:0];

    // ---- state ----
    reg [5:0]    rq_b [0:NQ-1];     // read queue, in age order: bank index, row, payload slot, row hit
    reg [31:0]   rq_row [0:NQ-1];
    reg [QW-1:0] rq_slot [0:NQ-1];
    reg [NQ-1:0] rq_hit;
    reg [NQ-1:0] rq_free;           // payload slots not in use
    reg [MW-1:0] rq_msg [0:NQ-1];   // read payload RAM, by slot
    reg [5:0]    wq_b [0:NQ-1];     // write queue: bank index, row, row hit
    reg [31:0]   wq_row [0:NQ-1];
    reg [NQ-1:0] wq_hit;
    reg [6:0]    hits_r [0:NB-1];   // per bank: queued entries hitting its open row (the C's hits_r/w)
    reg [6:0]    hits_w [0:NB-1];
    reg [NB-1:0] hz_r, hz_w;        // per bank: hits_r / hits_w != 0
    reg          write_mode;
    reg [31:0]   ref_left [0:3];    // per rank: ref_due - now, signed (<= 0: due)
    reg [5:0]    ref_bank [0:3];
    reg [MW-1:0] rd_msg [0:31];     // read-data FIFO
    reg [15:0]   rd_end [0:31];     // the cycle its burst ends, low 16 bits
    reg [4:0]    rd_head;
    reg [5:0]    rd_count;

    wire sb = refresh == 2'd2;
    wire [31:0] ref_iv = (refresh == 2'd0 || tREFI == 32'd0) ? 32'd0 : (sb ? tREFI >> bank_bits : tREFI);
    wire [2:0] rsh = bg_bits + bank_bits;
    wire [5:0] kmask = ~(6'h3f << bank_bits);

    // ---- the timing state ----
    wire [NB-1:0] open_b, ok_act, ok_pre, ok_rd, ok_wr, bk_act;
    wire [3:0]  rk_act;
    wire [31:0] enq_open_row;
    /* verilator lint_off PINCONNECTEMPTY */  // the counters' query outputs are for tests
    dram_timing #(.NB(NB)) u_tm (
        .clk(clk), .rst_n(rst_n), .ce(ce), .flush(skip), .ranks(ranks), .bg_bits(bg_bits), .bank_bits(bank_bits),
        .tRCD(tRCD), .tCL(tCL), .tRP(tRP), .tRAS(tRAS), .tRC(tRC), .tCWL(tCWL), .tWR(tWR), .tRTP(tRTP),
        .tBL(tBL), .tCCD_S(tCCD_S), .tCCD_L(tCCD_L), .tCCD_S_WR(tCCD_S_WR), .tCCD_L_WR(tCCD_L_WR),
        .tRRD_S(tRRD_S), .tRRD_L(tRRD_L), .tFAW(tFAW), .tWTR_S(tWTR_S), .tWTR_L(tWTR_L), .tRTW(tRTW),
        .tRFC(tRFC), .tRFCsb(tRFCsb),
        .iss_valid(iss_valid), .iss_cmd(iss_cmd), .iss_rank(iss_rank), .iss_bank(iss_bank), .iss_b(d_b),
        .iss_row(iss_row), .iss_auto_pre(iss_auto_pre),
        .open_b(open_b), .ok_act(ok_act), .ok_pre(ok_pre), .ok_rd(ok_rd), .ok_wr(ok_wr), .bk_act(bk_act),
        .rk_act(rk_act),
        .q_rank(enq_e[19:18]), .q_bg(enq_e[17:12]), .q_bank(enq_e[11:6]), .q_open_row(enq_open_row),
        .q_act(), .q_pre(), .q_col(), .q_bg_act(), .q_bg_rd(), .q_bg_wr(), .q_rank_act(), .q_rank_rd(),
        .q_rank_wr(), .q_faw(), .q_faw_n(), .q_faw_head()
    );
    /* verilator lint_on PINCONNECTEMPTY */
    wire enq_hit = enq_open_row == enq_row;

    // ---- read return ----
    /* verilator lint_off UNUSEDSIGNAL */  // its sign: the burst has not ended
    wire [15:0] rd_wait = now[15:0] - rd_end[rd_head];
    /* verilator lint_on UNUSEDSIGNAL */
    wire rd_pop = en && rd_count != 6'd0 && !rd_wait[15];
    assign done_valid = rd_pop;
    assign rd_n = rd_count;
    assign done_msg = rd_msg[rd_head];

    // ================================================================ s1: the candidates
    // ---- write mode ----
    reg [6:0] nr_v, nw_v;
    reg wm;                         // write mode after this cycle's update
    always @* begin
        nr_v = nr + {6'd0, enq_r};
        nw_v = nw + {6'd0, enq_w};
        if (!write_mode)
            wm = {25'd0, nw_v} >= wdrain_high || (nr_v == 7'd0 && nw_v != 7'd0);
        else
            wm = !(nw_v == 7'd0 || ({25'd0, nw_v} <= wdrain_low && nr_v != 7'd0));
    end
    wire       app_m = wm ? enq_w : enq_r;  // this cycle's enqueue goes to the mode's queue
    /* verilator lint_off UNUSEDSIGNAL */  // < NQ whenever an enqueue is appended (the queue had room)
    wire [6:0] n_old = wm ? nw : nr;        // its stored entries (the appended one is entry n_old)
    /* verilator lint_on UNUSEDSIGNAL */
    wire [6:0] n_m = wm ? nw_v : nr_v;
    wire [6:0] n_scan = (fcfs && n_m > 7'd1) ? 7'd1 : n_m;

    // ---- refresh deadlines and the banks they block ----
    reg [3:0] due;
    reg [NB-1:0] blk_b, hm;
    /* verilator lint_off UNUSEDSIGNAL */  // ranks are 0..3
    reg [5:0] brk;
    /* verilator lint_on UNUSEDSIGNAL */
    integer r, b;
    always @* begin
        for (r = 0; r < 4; r = r + 1)
            due[r] = en && ref_iv != 32'd0 && r < {29'd0, ranks} && $signed(ref_left[r]) <= 0;
        blk_b = {NB{1'b0}};
        brk = 6'd0;
        if (due != 4'd0)
            for (b = 0; b < NB; b = b + 1) begin
                brk = b[5:0] >> rsh;
                blk_b[b] = due[brk[1:0]] && (!sb || (b[5:0] & kmask) == ref_bank[brk[1:0]]);
            end
        // FR-FCFS holds a PRE back while the mode's queue has hits on the bank's open row
        hm = (wm ? hz_w : hz_r) | ((app_m && enq_hit) ? B1 << enq_b[BW-1:0] : {NB{1'b0}});
    end
    assign refresh_due = due != 4'd0;

    // ---- refresh (refresh_step, ranks in order; the first that can issue does) ----
    // Rank r may precharge its lowest open bank whose PRE time has passed, or refresh when no bank is
    // open and every bank's and the rank's ACT time has passed (same-bank: only bank ref_bank[r], and not
    // the rank's ACT time).
    reg ref_fire, ref_is_pre, rk_pre;
    reg [1:0] ref_rank;
    reg [5:0] ref_j, rk_j;
    reg [NB-1:0] sel_r, pre_c;
    always @* begin
        ref_fire = 1'b0;
        ref_is_pre = 1'b0;
        ref_rank = 2'd0;
        ref_j = 6'd0;
        sel_r = {NB{1'b0}};
        pre_c = {NB{1'b0}};
        rk_pre = 1'b0;
        rk_j = 6'd0;
        for (r = 0; r < 4; r = r + 1) begin
            if (due[r] && !ref_fire) begin
                for (b = 0; b < NB; b = b + 1)
                    sel_r[b] = (b[5:0] >> rsh) == r[5:0] && (!sb || (b[5:0] & kmask) == ref_bank[r]);
                pre_c = sel_r & open_b & ok_pre;
                rk_pre = pre_c != {NB{1'b0}};
                rk_j = 6'd0;
                for (b = NB - 1; b >= 0; b = b - 1)
                    if (pre_c[b])
                        rk_j = b[5:0];
                if (rk_pre || ((sel_r & open_b) == {NB{1'b0}} && (sb || rk_act[r]) && (sel_r & ~bk_act) == {NB{1'b0}})) begin
                    ref_fire = 1'b1;
                    ref_is_pre = rk_pre;
                    ref_rank = r[1:0];
                    ref_j = rk_j;
                end
            end
        end
    end

    // ---- FR-FCFS / FCFS candidates over the mode's queue (with this cycle's enqueue appended) ----
    // Per entry, the readiness of its bank's column / row command (a bit of colok / rowok selected by
    // its bank index); the appended entry's from the enqueue; the candidates are those of the first
    // n_scan entries with the matching row-hit bit.
    wire [NB-1:0] colok = ~blk_b & (wm ? ok_wr : ok_rd);
    wire [NB-1:0] rowok = ~blk_b & ((open_b & ok_pre & (fcfs ? {NB{1'b1}} : ~hm)) | (~open_b & ok_act));
    wire [NQ-1:0] smask = below(n_scan);
    reg [NQ-1:0] okc, okr, hv, cand_c, cand_r;
    /* verilator lint_off UNUSEDSIGNAL */  // banks below NB
    reg [5:0] vb;
    /* verilator lint_on UNUSEDSIGNAL */
    integer i;
    always @* begin
        for (i = 0; i < NQ; i = i + 1) begin
            vb = wm ? wq_b[i] : rq_b[i];
            okc[i] = colok[vb[BW-1:0]];
            okr[i] = rowok[vb[BW-1:0]];
        end
        hv = wm ? wq_hit : rq_hit;
        if (app_m) begin             // the appended entry is entry n_old (< NQ: the queue had room)
            okc[n_old[QW-1:0]] = colok[enq_b[BW-1:0]];
            okr[n_old[QW-1:0]] = rowok[enq_b[BW-1:0]];
            hv[n_old[QW-1:0]] = enq_hit;
        end
        cand_c = smask & hv & okc;
        cand_r = smask & ~hv & okr;
    end
    // the candidates' registers (s1)
    reg c_wm, c_app, c_hit, c_rf, c_rpre;
    reg [QW-1:0] c_nold;
    reg [NQ-1:0] c_cc, c_cr;
    reg [1:0] c_rrank;
    reg [5:0] c_rj;
    always @(posedge clk)
        if (s1) begin
            c_wm <= wm;
            c_app <= app_m;
            c_nold <= n_old[QW-1:0];
            c_hit <= enq_hit;
            c_cc <= cand_c;
            c_cr <= cand_r;
            c_rf <= ref_fire;
            c_rpre <= ref_is_pre;
            c_rrank <= ref_rank;
            c_rj <= ref_j;
        end

    // ================================================================ s2: the pick and the command
    wire hit_found = c_cc != {NQ{1'b0}};
    wire row_found = c_cr != {NQ{1'b0}};
    wire [NQ-1:0] oh_c = lowest_oh(c_cc);
    wire [NQ-1:0] oh_r = lowest_oh(c_cr);
    wire [5:0] hit_i = enc(oh_c);
    assign rd_cand = en && !c_rf && !c_wm && hit_found;
    reg do_col, s_app;
    reg [5:0] se_b, p_b;
    /* verilator lint_off UNUSEDSIGNAL */  // ranks are 0..3
    reg [5:0] se_rk;
    /* verilator lint_on UNUSEDSIGNAL */
    reg [31:0] se_row;
    reg [NQ-1:0] oh_s;
    reg p_valid, p_ap, p_conf;
    reg [2:0] p_cmd;
    reg [1:0] p_rank;
    reg [5:0] p_bg, p_bank;
    reg [31:0] p_row;
    always @* begin
        do_col = en && !c_rf && hit_found && (c_wm || col_grant);
        // the selected entry's bank and row: an AND-OR select by the one-hot pick (no encode and decode
        // of its index on the way)
        oh_s = do_col ? oh_c : oh_r;
        s_app = c_app && oh_s[c_nold];
        se_b = 6'd0;
        se_row = 32'd0;
        for (i = 0; i < NQ; i = i + 1) begin
            se_b = se_b | ({6{oh_s[i]}} & (c_wm ? wq_b[i] : rq_b[i]));
            se_row = se_row | ({32{oh_s[i]}} & (c_wm ? wq_row[i] : rq_row[i]));
        end
        if (s_app) begin
            se_b = enq_b;
            se_row = enq_row;
        end
        se_rk = se_b >> rsh;
        p_valid = 1'b0;
        p_cmd = C_ACT;
        p_b = 6'd0;
        p_rank = 2'd0;
        p_bg = 6'd0;
        p_bank = 6'd0;
        p_row = 32'd0;
        p_ap = 1'b0;
        p_conf = 1'b0;
        if (en && c_rf) begin
            p_valid = 1'b1;
            p_rank = c_rrank;
            if (c_rpre) begin
                p_cmd = C_PRE;
                p_bg = (c_rj >> bank_bits) & ~(6'h3f << bg_bits);
                p_bank = c_rj & kmask;
                p_b = c_rj;
            end else begin
                p_cmd = sb ? C_REFSB : C_REF;
                p_bank = sb ? ref_bank[c_rrank] : 6'd0;
                p_b = ({4'd0, c_rrank} << rsh) | p_bank;
            end
        end else if (do_col || (en && row_found)) begin
            p_valid = 1'b1;
            p_rank = se_rk[1:0];
            p_bg = (se_b >> bank_bits) & ~(6'h3f << bg_bits);
            p_bank = se_b & kmask;
            p_b = se_b;
            if (do_col) begin
                p_cmd = c_wm ? C_WR : C_RD;
                p_row = se_row;
                p_ap = row_closed;
            end else if (!open_b[se_b[BW-1:0]]) begin
                p_cmd = C_ACT;
                p_row = se_row;
            end else begin
                p_cmd = C_PRE;
                p_conf = 1'b1;
            end
        end
    end
    // the decision's registers (s2)
    reg d_valid, d_ap, d_conf, d_col, d_sapp;
    reg [2:0] d_cmd;
    reg [1:0] d_rank;
    reg [5:0] d_bg, d_bank, d_b, d_hit_i, d_se_b;
    reg [31:0] d_row;
    always @(posedge clk)
        if (s2) begin
            d_valid <= p_valid;
            d_cmd <= p_cmd;
            d_rank <= p_rank;
            d_bg <= p_bg;
            d_bank <= p_bank;
            d_b <= p_b;
            d_row <= p_row;
            d_ap <= p_ap;
            d_conf <= p_conf;
            d_col <= do_col;
            d_hit_i <= hit_i;
            d_se_b <= se_b;
            d_sapp <= s_app;
        end

    // ================================================================ ce: the commit
    // the committed command and enqueue (nothing without dv: the cycle had nothing to schedule)
    assign iss_valid = dv && d_valid;
    assign iss_cmd = d_cmd;
    assign iss_rank = d_rank;
    assign iss_bg = d_bg;
    assign iss_bank = d_bank;
    assign iss_row = d_row;
    assign iss_auto_pre = d_ap;
    assign iss_conflict = dv && d_conf;
    wire [5:0] iss_b = d_b;
    wire e_r = dv && enq_r;
    wire e_w = dv && enq_w;
    wire do_c = dv && d_col;
    wire [6:0] nr_c = nr + {6'd0, e_r};
    wire [6:0] nw_c = nw + {6'd0, e_w};
    assign nr_next = nr_c - {6'd0, do_c && !c_wm};
    assign nw_next = nw_c - {6'd0, do_c && c_wm};

    // ---- after this cycle: row-hit bits and hit counts (append, then the issued ACT / PRE or
    // auto-precharge on its bank's entries in both queues, then the issued entry's removal) ----
    wire [5:0] ib = iss_b;
    wire row_opens = iss_valid && iss_cmd == C_ACT;
    wire row_closes = iss_valid && (iss_cmd == C_PRE || ((iss_cmd == C_RD || iss_cmd == C_WR) && iss_auto_pre));
    wire rem_r = do_c && !c_wm;
    wire rem_w = do_c && c_wm;
    reg [NQ-1:0] rh_a, wh_a, on_r, on_w, mr, mw, lo_m, rq_hit_nx, wq_hit_nx;
    reg [6:0] pop_r, pop_w;
    reg [5:0] eb;
    reg [31:0] erow;
    integer jj;
    always @* begin
        on_r = {NQ{1'b0}};
        on_w = {NQ{1'b0}};
        mr = {NQ{1'b0}};
        mw = {NQ{1'b0}};
        eb = 6'd0;
        erow = 32'd0;
        // (only a command that opens or closes a row reads them)
        if (row_opens || row_closes)
        for (jj = 0; jj < NQ; jj = jj + 1) begin
            eb = (e_r && jj[6:0] == nr) ? enq_b : rq_b[jj];
            erow = (e_r && jj[6:0] == nr) ? enq_row : rq_row[jj];
            on_r[jj] = jj[6:0] < nr_c && eb == ib;          // on the command's bank
            mr[jj] = on_r[jj] && erow == iss_row;            // ... and on the ACT's row
            eb = (e_w && jj[6:0] == nw) ? enq_b : wq_b[jj];
            erow = (e_w && jj[6:0] == nw) ? enq_row : wq_row[jj];
            on_w[jj] = jj[6:0] < nw_c && eb == ib;
            mw[jj] = on_w[jj] && erow == iss_row;
        end
        rh_a = e_r ? (rq_hit & ~(Q1 << nr)) | ({{(NQ-1){1'b0}}, c_hit} << nr) : rq_hit;
        wh_a = e_w ? (wq_hit & ~(Q1 << nw)) | ({{(NQ-1){1'b0}}, c_hit} << nw) : wq_hit;
        if (row_opens || row_closes) begin
            rh_a = (rh_a & ~on_r) | (row_opens ? mr : {NQ{1'b0}});
            wh_a = (wh_a & ~on_w) | (row_opens ? mw : {NQ{1'b0}});
        end
        lo_m = below({1'b0, d_hit_i});
        rq_hit_nx = rem_r ? (rh_a & lo_m) | ((rh_a >> 1) & ~lo_m) : rh_a;
        wq_hit_nx = rem_w ? (wh_a & lo_m) | ((wh_a >> 1) & ~lo_m) : wh_a;
        pop_r = 7'd0;
        pop_w = 7'd0;
        if (row_opens)
            for (jj = 0; jj < NQ; jj = jj + 1) begin
                pop_r = pop_r + {6'd0, mr[jj]};
                pop_w = pop_w + {6'd0, mw[jj]};
            end
    end
    // the hit counts after this cycle of the banks that can change: the enqueued entry's, the issued
    // entry's and the ACT's / PRE's (C: dram_enqueue's increment, then schedule's decrement, recount or clear)
`define DC_HITS(q, x, e, rm, pop) ((row_opens && (x) == ib) ? (pop) : (row_closes && (x) == ib) ? 7'd0 \
        : q[x[BW-1:0]] + {6'd0, (e) && c_hit && enq_b == (x)} - {6'd0, (rm) && d_se_b == (x)})
    wire [6:0] hr_enq = `DC_HITS(hits_r, enq_b, e_r, rem_r, pop_r);
    wire [6:0] hr_se = `DC_HITS(hits_r, d_se_b, e_r, rem_r, pop_r);
    wire [6:0] hr_ib = `DC_HITS(hits_r, ib, e_r, rem_r, pop_r);
    wire [6:0] hw_enq = `DC_HITS(hits_w, enq_b, e_w, rem_w, pop_w);
    wire [6:0] hw_se = `DC_HITS(hits_w, d_se_b, e_w, rem_w, pop_w);
    wire [6:0] hw_ib = `DC_HITS(hits_w, ib, e_w, rem_w, pop_w);
`undef DC_HITS

    // ---- the read payload slot: the lowest free one for an enqueued read ----
    /* verilator lint_off UNUSEDSIGNAL */  // slots below NQ
    wire [5:0]    free_lo = enc(lowest_oh(rq_free));
    /* verilator lint_on UNUSEDSIGNAL */
    wire [QW-1:0] enq_slot = free_lo[QW-1:0];
    wire [QW-1:0] rem_slot = (e_r && {1'b0, d_hit_i} == nr) ? enq_slot : rq_slot[d_hit_i[QW-1:0]];
    // (read only when a RD issues: the selected entry is then the oldest ready hit)
    wire [MW-1:0] rd_new = d_sapp ? enq_msg : rq_msg[rq_slot[d_hit_i[QW-1:0]]];
    wire [4:0] rd_tail = rd_head + rd_count[4:0];
    wire is_ref_cmd = iss_valid && (iss_cmd == C_REF || iss_cmd == C_REFSB);

    // ---- idle skip: the next refresh deadline, the counters' bound, the deadlines after a skip ----
    integer rk;
    always @* begin
        ref_min = 32'h7fffffff;
        for (rk = 0; rk < 4; rk = rk + 1)
            if (en && ref_iv != 32'd0 && rk < {29'd0, ranks} && $signed(ref_left[rk]) < $signed(ref_min))
                ref_min = ref_left[rk];
    end
    // ---- period jump: the kept deadlines ----
    reg [31:0] snap_left [0:3];
    reg [5:0]  snap_bank [0:3];
    wire [3:0] refreshing;   // rank slots whose deadlines run (the others only count down)
    genvar gr;
    generate
        for (gr = 0; gr < 4; gr = gr + 1) begin : g_rf
            assign refreshing[gr] = en && ref_iv != 32'd0 && gr < {29'd0, ranks};
        end
    endgenerate
    always @* begin
        same = 1'b1;
        for (rk = 0; rk < 4; rk = rk + 1)
            if (refreshing[rk] && (ref_left[rk] != snap_left[rk] || ref_bank[rk] != snap_bank[rk]))
                same = 1'b0;
    end
    assign canon = refreshing[0] && ref_left[0] == 32'd0 && ref_bank[0] == 6'd0;
    assign nonref = iss_valid && iss_cmd != C_REF && iss_cmd != C_REFSB;
    integer sj;
    always @(posedge clk)
        if (ce && snap)
            for (sj = 0; sj < 4; sj = sj + 1) begin
                snap_left[sj] <= ref_left[sj];
                snap_bank[sj] <= ref_bank[sj];
            end

    wire [15:0] cmd_reach = !iss_valid ? 16'd0 : iss_cmd == C_REF ? tRFC[15:0] :
                            iss_cmd == C_REFSB ? tRFCsb[15:0] : reach;
    wire [15:0] rest_top = rest > cmd_reach ? rest : cmd_reach;
    always @(posedge clk) begin
        if (!rst_n || (ce && skip))
            rest <= 16'd0;
        else if (ce)
            rest <= rest_top == 16'd0 ? 16'd0 : rest_top - 16'd1;
    end
    // ref_left - 1 - skip_n, saturating at -2^31 as the one-by-one count does
    function [31:0] ref_after_skip(input [31:0] v);
        reg signed [33:0] d;
        begin
            d = $signed({{2{v[31]}}, v}) - 34'sd1 - $signed({2'b00, skip_n});
            ref_after_skip = d < -34'sd2147483648 ? 32'h80000000 : d[31:0];
        end
    endfunction

    integer j;
    always @(posedge clk) begin
        if (ce && e_r)
            rq_msg[enq_slot] <= enq_msg;
        if (ce && iss_valid && iss_cmd == C_RD) begin
            rd_msg[rd_tail] <= rd_new;
            rd_end[rd_tail] <= now[15:0] + tCL[15:0] + tBL[15:0];
        end
        if (!rst_n) begin
            for (j = 0; j < 4; j = j + 1) begin
                // staggered: unit k = ch * ranks + r of n = channels * ranks refreshes first at iv * (k + 1) / n
                ref_left[j] <= (ref_iv * ({29'd0, ranks} * {30'd0, ch} + j + 1)) >> ref_shift;
                ref_bank[j] <= 6'd0;
            end
            for (j = 0; j < NB; j = j + 1) begin
                hits_r[j] <= 7'd0;
                hits_w[j] <= 7'd0;
            end
            hz_r <= {NB{1'b0}};
            hz_w <= {NB{1'b0}};
            write_mode <= 1'b0;
            rq_hit <= {NQ{1'b0}};
            wq_hit <= {NQ{1'b0}};
            rq_free <= {NQ{1'b1}};
            nr <= 7'd0;
            nw <= 7'd0;
            rd_head <= 5'd0;
            rd_count <= 6'd0;
        end else if (ce) begin
            // queues: append, then remove the issued entry (the younger ones shift up)
            if (e_r || rem_r)
                for (j = 0; j < NQ; j = j + 1)
                    if (rem_r && j >= {26'd0, d_hit_i}) begin
                        rq_b[j] <= j == NQ - 1 ? 6'd0 : (e_r && j + 1 == {25'd0, nr}) ? enq_b : rq_b[(j + 1) % NQ];
                        rq_row[j] <= j == NQ - 1 ? 32'd0 : (e_r && j + 1 == {25'd0, nr}) ? enq_row : rq_row[(j + 1) % NQ];
                        rq_slot[j] <= j == NQ - 1 ? {QW{1'b0}} : (e_r && j + 1 == {25'd0, nr}) ? enq_slot : rq_slot[(j + 1) % NQ];
                    end else if (e_r && j == {25'd0, nr}) begin
                        rq_b[j] <= enq_b;
                        rq_row[j] <= enq_row;
                        rq_slot[j] <= enq_slot;
                    end
            if (e_w || rem_w)
                for (j = 0; j < NQ; j = j + 1)
                    if (rem_w && j >= {26'd0, d_hit_i}) begin
                        wq_b[j] <= j == NQ - 1 ? 6'd0 : (e_w && j + 1 == {25'd0, nw}) ? enq_b : wq_b[(j + 1) % NQ];
                        wq_row[j] <= j == NQ - 1 ? 32'd0 : (e_w && j + 1 == {25'd0, nw}) ? enq_row : wq_row[(j + 1) % NQ];
                    end else if (e_w && j == {25'd0, nw}) begin
                        wq_b[j] <= enq_b;
                        wq_row[j] <= enq_row;
                    end
            rq_free <= (rq_free & ~({{(NQ-1){1'b0}}, e_r} << enq_slot)) | ({{(NQ-1){1'b0}}, rem_r} << rem_slot);
            nr <= nr_next;
            nw <= nw_next;
            rq_hit <= rq_hit_nx;
            wq_hit <= wq_hit_nx;
            // hit counts (the three banks that can change; where two are one bank, the same value), and
            // whether each is non-zero
            if (e_r) begin
                hits_r[enq_b[BW-1:0]] <= hr_enq;
                hz_r[enq_b[BW-1:0]] <= hr_enq != 7'd0;
            end
            if (e_w) begin
                hits_w[enq_b[BW-1:0]] <= hw_enq;
                hz_w[enq_b[BW-1:0]] <= hw_enq != 7'd0;
            end
            if (do_c) begin
                hits_r[d_se_b[BW-1:0]] <= hr_se;
                hits_w[d_se_b[BW-1:0]] <= hw_se;
                hz_r[d_se_b[BW-1:0]] <= hr_se != 7'd0;
                hz_w[d_se_b[BW-1:0]] <= hw_se != 7'd0;
            end
            if (row_opens || row_closes) begin
                hits_r[ib[BW-1:0]] <= hr_ib;
                hits_w[ib[BW-1:0]] <= hw_ib;
                hz_r[ib[BW-1:0]] <= hr_ib != 7'd0;
                hz_w[ib[BW-1:0]] <= hw_ib != 7'd0;
            end
            // (without dv both queues are empty and no refresh is due: the C's update for empty queues)
            if (en && !(dv && c_rf))
                write_mode <= dv ? c_wm : !write_mode && wdrain_high == 32'd0;
            // read-data FIFO
            if (rd_pop)
                rd_head <= rd_head + 5'd1;
            rd_count <= rd_count - {5'd0, rd_pop} + {5'd0, iss_valid && iss_cmd == C_RD};
            // refresh deadlines: one cycle nearer; a refresh moves its rank's by the interval
            for (j = 0; j < 4; j = j + 1)
                if (is_ref_cmd && j[1:0] == iss_rank) begin
                    ref_left[j] <= ref_left[j] + ref_iv - 32'd1;
                    if (sb)
                        ref_bank[j] <= (ref_bank[j] + 6'd1) & kmask;
                end else if (skip) begin
                    ref_left[j] <= ref_after_skip(ref_left[j]);
                end else if (ref_left[j] != 32'h80000000) begin
                    ref_left[j] <= ref_left[j] - 32'd1;
                end
        end else if (pjump) begin
            for (j = 0; j < 4; j = j + 1)
                if (!refreshing[j])
                    ref_left[j] <= ref_after_skip(ref_left[j]);
        end
    end
endmodule

`default_nettype wire

// dram.v - the DRAM controller of a device (hw/hls/dram.c, docs/cxl-model.md section 4.8): per channel
// read and write queues, FR-FCFS (single pass) or FCFS, open or closed page, write drain with watermarks,
// all-bank (REFab) or same-bank (REFsb) staggered refresh, the read-data FIFO.
//
// One C cycle is two or three schedule clocks (s0 when there is an enqueue, then s1, s2, with ce low)
// and then the edge with ce = 1, when the cycle has something to schedule (sched_need); otherwise the ce
// edge alone:
//   - s0, the load (sched_load: only with an enqueue; without one the registered enqueue is none, as the
//     ce edge clears it): this cycle's dram_enqueue (enq_valid, at most one per cycle, as devctrl) and its
//     address mapped go into registers;
//   - s1, s2: each channel's candidates, then its pick and command (dram_chan.v), from registers; s1 also
//     registers the response room, which s2 hands out to the channels' RD candidates (below), registering
//     what is left;
//   - ce: dram_enqueue and dram_tick commit (the enqueued request was visible to the cycle's scheduling,
//     as in the C), by the registered decision (dv: s2 came in this cycle).
// The inputs (enq_*, rsp_room, now) must stay the same from s0 to the ce edge. sched_need (an enqueue, a
// used channel's queue not empty, or a refresh due) may be ignored (schedule clocks in every cycle give the
// same results); without them the cycle issues nothing, which is what the C does when it is low.
//
// Per channel (dram_chan.v, NCH instances; those >= channels idle): the queues, the timing state as
// down-counters (dram_timing.v), refresh, the FR-FCFS / FCFS scheduler and the read-data FIFO. Channels
// take turns at the response room in the C's order, channel (now + k) mod channels k-th: a channel's RD
// candidate does not depend on the room, so the room is handed out in that order combinationally
// (rsp_room -> rsp_room_out).
//
// Outputs: the completions of the cycle in the C's out[] order (done_n, done_msg slot k at
// [k*W +: W]); per channel the command issued this cycle (the C's command trace record: kind, rank, bg,
// bank, row, auto_pre; the trace ring itself is not kept, the stream is the trace); queue counts, reads
// in flight (rd_n, for devctrl_idle) and statistics (cxl_dev_stats reads, writes, acts, pres, refs,
// row_conflicts, and occ_sum = the sum over cycles of dram_occupancy after the cycle, devctrl's
// dramq_occ_sum) as registers after the edge.
//
// Clock enable: the state (every channel's and the statistics) moves only on edges with ce = 1, so one
// model cycle may span several clocks (the outputs are combinational from the state and the inputs);
// reset acts regardless of ce.
//
// Runtime parameters (cxl_dram_params, sampled every cycle; refresh deadlines are initialised in reset):
// channels, ranks (counts), map_order/map_bits/bank_hash (as dram_map.v); channels, ranks, bankgroups
// and banks must be powers of two with map_bits their log2 (devcfg derives bits so), the rotation and
// the stagger division use shifts.
`default_nettype none
`include "cxl_defs.vh"

module dram #(
    parameter integer NCH = 4,      // channels built (<= CXL_MAX_CH); the outputs of the others are 0
    parameter integer NB  = 64,     // banks built per channel (ranks x bank groups x banks, <= CXL_MAX_BANKS)
    parameter integer NQ  = 64      // read and write queue entries built per channel (<= CXL_MAX_DRAMQ)
) (
    input  wire        clk,
    input  wire        rst_n,
    input  wire        ce,            // clock enable: the state advances on edges with ce = 1
    input  wire        s0,            // schedule clocks (ce low): the load, the candidates, the pick
    input  wire        s1,
    input  wire        s2,
    output wire        sched_need,    // this cycle has something to schedule (s1, s2 needed before ce)
    output wire        sched_load,    // ... and an enqueue (s0 needed before them)
    input  wire        skip,          // idle skip: this edge is 1 + skip_n quiet cycles (dram_chan.v)
    input  wire [31:0] skip_n,
    output reg  [15:0] rest,          // the largest of the channels' timing-counter bounds
    output reg  [31:0] ref_min,       // cycles to the next refresh deadline of any channel (signed)
    // period jump (cxl_model.v, dram_chan.v): keep the deadlines and the REF count (snap, with ce); at the
    // copy's return take the refreshes of one period (pmatch, with ce); a jump (pjump, ce low) of 2^psh
    // periods adds 2^psh times them to st_refs
    input  wire        snap,
    input  wire        pmatch,
    input  wire        pjump,
    input  wire [5:0]  psh,
    output wire        same,          // every channel's deadlines equal the kept ones
    output wire        canon,         // channel 0's rank 0 is due with its same-bank pointer at 0
    output wire        nonref,        // some channel issues a command other than a refresh
    input  wire [63:0] now,
    // parameters
    input  wire [2:0]  channels,
    input  wire [2:0]  ranks,
    input  wire [17:0] map_order,
    input  wire [35:0] map_bits,
    input  wire        bank_hash,
    input  wire [31:0] tRCD, tCL, tRP, tRAS, tRC, tCWL, tWR, tRTP, tBL,
    input  wire [31:0] tCCD_S, tCCD_L, tCCD_S_WR, tCCD_L_WR, tRRD_S, tRRD_L, tFAW, tWTR_S, tWTR_L, tRTW,
    input  wire [31:0] tREFI, tRFC, tRFCsb,
    input  wire [1:0]  refresh,       // enum cxl_refresh: 0 off, 1 all-bank, 2 same-bank
    input  wire [31:0] wdrain_high,
    input  wire [31:0] wdrain_low,
    input  wire        row_closed,    // row_policy == CXL_ROW_CLOSED
    input  wire        fcfs,          // scheduler == CXL_SCHED_FCFS
    // dram_enqueue (the caller checked space)
    input  wire        enq_valid,
    input  wire [`CXL_MSG_W-1:0] enq_msg,
    // the shared response room: as passed to dram_tick, and as left after it
    input  wire [31:0] rsp_room,
    output wire [31:0] rsp_room_out,
    // completions, in out[] order
    output reg  [2:0]  done_n,
    output reg  [4*`CXL_MSG_W-1:0] done_msg,
    // per channel c: the command issued this cycle (enum cxl_dram_cmd)
    output wire [3:0]  cmd_valid,
    output wire [11:0] cmd_kind,      // [3*c +: 3]
    output wire [7:0]  cmd_rank,      // [2*c +: 2]
    output wire [23:0] cmd_bg,        // [6*c +: 6]
    output wire [23:0] cmd_bank,      // [6*c +: 6]
    output wire [127:0] cmd_row,      // [32*c +: 32]
    output wire [3:0]  cmd_auto_pre,
    // state after the last edge
    output wire [27:0] nr,            // [7*c +: 7] read queue entries
    output wire [27:0] nw,            // [7*c +: 7] write queue entries
    output wire [23:0] rd_n,          // [6*c +: 6] reads issued whose data has not left (rd_count)
    output wire [3:0]  refresh_due,   // [c]: a refresh deadline of one of channel c's ranks has passed (ref_due <= now)
    output reg  [63:0] st_reads,
    output reg  [63:0] st_writes,
    output reg  [63:0] st_acts,
    output reg  [63:0] st_pres,
    output reg  [63:0] st_refs,
    output reg  [63:0] st_row_conflicts,
    output reg  [63:0] occ_sum
);
    localparam EW = `CXL_MSG_W + 52;   // queue entry: msg, row, rank, bg, bank, bidx

    wire [2:0] bg_bits = map_bits[6*2 + 2 -: 3];
    wire [2:0] bank_bits = map_bits[6*3 + 2 -: 3];
    wire [3:0] ref_shift = {2'd0, map_bits[1:0]} + {2'd0, map_bits[7:6]}; // log2(channels * ranks)

    // ---- enqueue: map the address ----
    /* verilator lint_off UNUSEDSIGNAL */  // field values beyond the channel's ranges are 0
    wire [31:0] m_ch, m_rank, m_bg, m_bank, m_row, m_col;
    /* verilator lint_on UNUSEDSIGNAL */
    dram_map u_map (
        .clk(clk), .rst_n(rst_n), .addr(enq_msg[`CXL_MSG_ADDR]), .map_order(map_order), .map_bits(map_bits), .bank_hash(bank_hash),
        .ch(m_ch), .rank(m_rank), .bg(m_bg), .bank(m_bank), .row(m_row), .col(m_col)
    );
    wire [5:0] enq_bidx = ({4'd0, m_rank[1:0]} << (bg_bits + bank_bits)) | (m_bg[5:0] << bank_bits) | m_bank[5:0];
    wire [EW-1:0] enq_e = {enq_msg, m_row, m_rank[1:0], m_bg[5:0], m_bank[5:0], enq_bidx};
    wire enq_w = enq_msg[`CXL_MSG_CLS] == `CXL_M2S_RWD;
    // s0: the cycle's enqueue and room in registers; dv: the channels' d_* hold this cycle's decision
    reg          e_valid, e_w, dv;
    reg [1:0]    e_ch;
    reg [EW-1:0] e_e;
    reg [31:0]   e_room, room_left;
    always @(posedge clk) begin
        if (s0) begin
            e_w <= enq_w;
            e_ch <= m_ch[1:0];
            e_e <= enq_e;
        end
        if (!rst_n || ce)
            e_valid <= 1'b0;
        else if (s0)
            e_valid <= enq_valid;
        if (s1)
            e_room <= rsp_room;
        if (!rst_n || ce)
            dv <= 1'b0;
        else if (s2)
            dv <= 1'b1;
    end
    assign sched_need = enq_valid || nr != 28'd0 || nw != 28'd0 || refresh_due != 4'd0;
    assign sched_load = enq_valid;

    // ---- channels ----
    wire [3:0] rd_cand;
    /* verilator lint_off UNUSEDSIGNAL */  // the bits of channels not built (NCH < 4) are not read
    reg  [3:0] col_grant;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [3:0] done_v;
    wire [4*`CXL_MSG_W-1:0] done_m;
    wire [1:0] cmask = channels[1:0] - 2'd1;  // channels is 1, 2 or 4
    wire [3:0] conf_any;
    wire [27:0] nr_nx, nw_nx;

    // the bound of any non-refresh command's raise of a timing counter (each raise is a sum of distinct
    // timings and a constant of at most 2: dram_timing.v), saturated at the counters' 16 bits
    wire [31:0] reach_sum = {16'd0, tRCD[15:0]} + {16'd0, tCL[15:0]} + {16'd0, tRP[15:0]} + {16'd0, tRAS[15:0]} +
        {16'd0, tRC[15:0]} + {16'd0, tCWL[15:0]} + {16'd0, tWR[15:0]} + {16'd0, tRTP[15:0]} + {16'd0, tBL[15:0]} +
        {16'd0, tCCD_S[15:0]} + {16'd0, tCCD_L[15:0]} + {16'd0, tCCD_S_WR[15:0]} + {16'd0, tCCD_L_WR[15:0]} +
        {16'd0, tRRD_S[15:0]} + {16'd0, tRRD_L[15:0]} + {16'd0, tFAW[15:0]} + {16'd0, tWTR_S[15:0]} +
        {16'd0, tWTR_L[15:0]} + {16'd0, tRTW[15:0]} + 32'd2;
    wire [15:0] reach = reach_sum > 32'd65535 ? 16'hffff : reach_sum[15:0];
    wire [63:0] ch_rest;
    wire [127:0] ch_ref_min;
    wire [3:0] ch_same, ch_nonref;
    /* verilator lint_off UNUSEDSIGNAL */   // channel 0's is the canonical one
    wire [3:0] ch_canon;
    /* verilator lint_on UNUSEDSIGNAL */
    assign same = &ch_same;
    assign canon = ch_canon[0];
    assign nonref = |ch_nonref;

    genvar c;
    generate
        for (c = 0; c < 4; c = c + 1) begin : g_ch
            localparam [1:0] CI = c;
            if (c >= NCH) begin : none   // not built: never used (channels <= NCH), outputs 0
                assign rd_cand[c] = 1'b0;
                assign done_v[c] = 1'b0;
                assign done_m[c*`CXL_MSG_W +: `CXL_MSG_W] = {`CXL_MSG_W{1'b0}};
                assign cmd_valid[c] = 1'b0;
                assign cmd_kind[3*c +: 3] = 3'd0;
                assign cmd_rank[2*c +: 2] = 2'd0;
                assign cmd_bg[6*c +: 6] = 6'd0;
                assign cmd_bank[6*c +: 6] = 6'd0;
                assign cmd_row[32*c +: 32] = 32'd0;
                assign cmd_auto_pre[c] = 1'b0;
                assign conf_any[c] = 1'b0;
                assign nr[7*c +: 7] = 7'd0;
                assign nw[7*c +: 7] = 7'd0;
                assign rd_n[6*c +: 6] = 6'd0;
                assign nr_nx[7*c +: 7] = 7'd0;
                assign nw_nx[7*c +: 7] = 7'd0;
                assign refresh_due[c] = 1'b0;
                assign ch_rest[16*c +: 16] = 16'd0;
                assign ch_same[c] = 1'b1;
                assign ch_canon[c] = 1'b0;
                assign ch_nonref[c] = 1'b0;
                assign ch_ref_min[32*c +: 32] = 32'h7fffffff;
            end else begin : ch
            wire here = e_valid && e_ch == c;
            dram_chan #(.NB(NB), .NQ(NQ)) u_ch (
                .clk(clk), .rst_n(rst_n), .ce(ce), .s1(s1), .s2(s2), .dv(dv), .skip(skip), .skip_n(skip_n), .reach(reach),
                .rest(ch_rest[16*c +: 16]), .ref_min(ch_ref_min[32*c +: 32]),
                .snap(snap), .pjump(pjump), .same(ch_same[c]), .canon(ch_canon[c]), .nonref(ch_nonref[c]),
                .now(now), .ch(CI), .en(c < channels),
                .ranks(ranks), .bg_bits(bg_bits), .bank_bits(bank_bits), .ref_shift(ref_shift),
                .tRCD(tRCD), .tCL(tCL), .tRP(tRP), .tRAS(tRAS), .tRC(tRC), .tCWL(tCWL), .tWR(tWR),
                .tRTP(tRTP), .tBL(tBL), .tCCD_S(tCCD_S), .tCCD_L(tCCD_L), .tCCD_S_WR(tCCD_S_WR),
                .tCCD_L_WR(tCCD_L_WR), .tRRD_S(tRRD_S), .tRRD_L(tRRD_L), .tFAW(tFAW), .tWTR_S(tWTR_S),
                .tWTR_L(tWTR_L), .tRTW(tRTW), .tREFI(tREFI), .tRFC(tRFC), .tRFCsb(tRFCsb),
                .refresh(refresh), .wdrain_high(wdrain_high), .wdrain_low(wdrain_low),
                .row_closed(row_closed), .fcfs(fcfs),
                .enq_r(here && !e_w), .enq_w(here && e_w), .enq_e(e_e),
                .col_grant(col_grant[c]), .rd_cand(rd_cand[c]),
                .done_valid(done_v[c]), .done_msg(done_m[c*`CXL_MSG_W +: `CXL_MSG_W]),
                .iss_valid(cmd_valid[c]), .iss_cmd(cmd_kind[3*c +: 3]), .iss_rank(cmd_rank[2*c +: 2]),
                .iss_bg(cmd_bg[6*c +: 6]), .iss_bank(cmd_bank[6*c +: 6]), .iss_row(cmd_row[32*c +: 32]),
                .iss_auto_pre(cmd_auto_pre[c]),
                .iss_conflict(conf_any[c]),
                .nr(nr[7*c +: 7]), .nw(nw[7*c +: 7]), .rd_n(rd_n[6*c +: 6]), .nr_next(nr_nx[7*c +: 7]), .nw_next(nw_nx[7*c +: 7]),
                .refresh_due(refresh_due[c])
            );
            end
        end
    endgenerate
    integer q;
    always @* begin
        rest = 16'd0;
        ref_min = 32'h7fffffff;
        for (q = 0; q < 4; q = q + 1) begin
            if (ch_rest[16*q +: 16] > rest)
                rest = ch_rest[16*q +: 16];
            if ($signed(ch_ref_min[32*q +: 32]) < $signed(ref_min))
                ref_min = ch_ref_min[32*q +: 32];
        end
    end

    // channel (now + k) mod channels goes k-th: completions in that order (ce), room handed out in that
    // order (s2, from the room registered in s0; the room left is registered for the commit)
    reg [31:0] room;
    reg [1:0] ci;
    integer k;
    always @* begin
        room = e_room;
        done_n = 3'd0;
        done_msg = {4*`CXL_MSG_W{1'b0}};
        col_grant = 4'd0;
        for (k = 0; k < 4; k = k + 1) begin
            ci = (now[1:0] + k[1:0]) & cmask;
            if (k < {29'd0, channels}) begin
                if (done_v[ci]) begin
                    done_msg[{29'd0, done_n} * `CXL_MSG_W +: `CXL_MSG_W] = done_m[{30'd0, ci} * `CXL_MSG_W +: `CXL_MSG_W];
                    done_n = done_n + 3'd1;
                end
                col_grant[ci] = room != 32'd0;
                if (rd_cand[ci] && room != 32'd0)
                    room = room - 32'd1;
            end
        end
    end
    always @(posedge clk)
        if (s2)
            room_left <= room;
    assign rsp_room_out = dv ? room_left : rsp_room;

    // ---- statistics ----
    reg [63:0] d_reads, d_writes, d_acts, d_pres, d_refs, d_conf, occ_next;
    integer j;
    always @* begin
        d_reads = 64'd0; d_writes = 64'd0; d_acts = 64'd0; d_pres = 64'd0; d_refs = 64'd0; d_conf = 64'd0;
        occ_next = 64'd0;
        for (j = 0; j < 4; j = j + 1) begin
            if (cmd_valid[j]) begin
                case (cmd_kind[3*j +: 3])
                3'd0: d_acts = d_acts + 64'd1;
                3'd1: d_pres = d_pres + 64'd1;
                3'd2: d_reads = d_reads + 64'd1;
                3'd3: d_writes = d_writes + 64'd1;
                default: d_refs = d_refs + 64'd1;
                endcase
            end
        end
        for (j = 0; j < 4; j = j + 1)
            if (j < {29'd0, channels})
                occ_next = occ_next + {57'd0, nr_nx[7*j +: 7]} + {57'd0, nw_nx[7*j +: 7]};
        d_conf = {63'd0, conf_any[0]} + {63'd0, conf_any[1]} + {63'd0, conf_any[2]} + {63'd0, conf_any[3]};
    end
    // the refreshes of one period (period jump)
    reg [63:0] snap_refs, per_refs;
    always @(posedge clk) begin
        if (ce && snap)
            snap_refs <= st_refs;
        if (ce && pmatch)
            per_refs <= st_refs - snap_refs;
    end
    always @(posedge clk) begin
        if (!rst_n) begin
            st_reads <= 64'd0; st_writes <= 64'd0; st_acts <= 64'd0; st_pres <= 64'd0; st_refs <= 64'd0;
            st_row_conflicts <= 64'd0; occ_sum <= 64'd0;
        end else if (pjump) begin
            st_refs <= st_refs + (per_refs << psh);
        end else if (ce) begin
            st_reads <= st_reads + d_reads;
            st_writes <= st_writes + d_writes;
            st_acts <= st_acts + d_acts;
            st_pres <= st_pres + d_pres;
            st_refs <= st_refs + d_refs;
            st_row_conflicts <= st_row_conflicts + d_conf;
            occ_sum <= occ_sum + occ_next;
        end
    end
endmodule

`default_nettype wire

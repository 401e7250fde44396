// dram_timing.v - per-bank, per-bank-group and per-rank timing state of one DRAM channel, as small
// down-counters (hw/hls/dram_timing.c; JEDEC constraints DDR4 JESD79-4, DDR5 JESD79-5; docs/cxl-model.md).
//
// The C keeps, per bank, bank group and rank, the earliest cycle T at which each command may issue. Here
// each T is a counter c = max(T - now, 0): the cycles left until the limit passes, so "T <= now" is
// "c == 0" and no unit compares a 64-bit time (the shape of LiteDRAM's tXXDController). A command that
// raises a limit to now + d sets c to max(c, d); every model cycle (ce) counts every counter down to 0.
// Exact while every d fits TW bits: devcfg accepts timings of at most 16383 cycles, so the largest
// raise, a write's auto-precharge (tCWL + tBL + tWR, then + tRP), is at most 4 * 16383 < 2^16.
//
// State: per bank the open bit, the open row (a RAM: one write per cycle, read by the query port) and
// the ACT / PRE / column counters; per bank group (rank * bankgroups + bg) ACT / RD / WR; per rank ACT /
// RD / WR and the tFAW window (the cycles left of each of the last four ACTs' window of tFAW).
//
// Readiness, every bank at once (what a scheduler reads for every queue entry): ok_act (the bank's,
// its group's and its rank's ACT limits), ok_pre, ok_rd and ok_wr (the bank's column limit with the
// group's and rank's RD or WR limit), bk_act (the bank's own ACT limit: a refresh needs every bank of the
// rank), rk_act (the rank's ACT limit, which REF reads). Bank b is rank b >> (bg_bits + bank_bits),
// group b >> bank_bits.
// Query (a controller's enqueue reads the open row; tests read every counter): the bank q_rank/q_bg/q_bank.
// Update (dram_issue): at the clock edge when iss_valid and ce, for the cycle the edge ends. One command
// per edge; the other counters count down on the same edge. Clock enable: the state moves only on edges
// with ce = 1, one edge per model cycle; reset acts regardless of ce.
//
// Flush (cxl_model.v's idle skip): on an edge with ce and flush, every counter becomes 0 and nothing else
// changes; the caller flushes only when no command issues and every counter would have reached 0 by the
// end of the skip (dram_chan.v keeps the bound `rest` that tells it), so the state equals that of the
// cycles stepped one by one. The counters' synchronous reset is !rst_n || (ce && flush): one control
// input of their flip-flops, no logic per bit.
//
// Runtime parameters: ranks (count, <= CXL_MAX_RANKS), bg_bits / bank_bits (log2 of bankgroups and of
// banks; devcfg makes every mapping field a power of two) and the timings in cycles (at most 16383 each;
// only their low TW bits are read). Indices must be in range, as in the C.
`default_nettype none

module dram_timing #(
    parameter integer TW = 16,      // counter width: holds the largest raise (4 * 16383)
    parameter integer NB = 64       // banks built (ranks x bank groups x banks; a power of two, 4..64)
) (
    input  wire        clk,
    input  wire        rst_n /* verilator public_flat_rd */,
    input  wire        ce /* verilator public_flat_rd */,          // clock enable: the state advances on edges with ce = 1
    input  wire        flush /* verilator public_flat_rd */,       // with ce: every counter to 0 (an idle skip, below)
    // parameters (cxl_dram_params)
    input  wire [2:0]  ranks /* verilator public_flat_rd */,
    input  wire [2:0]  bg_bits /* verilator public_flat_rd */,
    input  wire [2:0]  bank_bits /* verilator public_flat_rd */,
    /* verilator lint_off UNUSEDSIGNAL */  // timings are at most 16383 cycles (devcfg): the low TW bits
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
    input  wire [31:0] tRFC /* verilator public_flat_rd */,
    input  wire [31:0] tRFCsb /* verilator public_flat_rd */,
    /* verilator lint_on UNUSEDSIGNAL */
    // command issued this cycle (enum cxl_dram_cmd: ACT 0, PRE 1, RD 2, WR 3, REF 4, REFSB 5)
    input  wire        iss_valid /* verilator public_flat_rd */,
    input  wire [2:0]  iss_cmd /* verilator public_flat_rd */,
    input  wire [1:0]  iss_rank /* verilator public_flat_rd */,
    input  wire [5:0]  iss_bank /* verilator public_flat_rd */,
    // its bank index (rank, bank group, bank packed as the entries' bank indices are: (rank << (bg_bits +
    // bank_bits)) | (bg << bank_bits) | bank), which the caller has at hand: unpacked into the fields and
    // packed again here it was a chain of runtime shifts on the channel's longest path
    input  wire [5:0]  iss_b /* verilator public_flat_rd */,
    input  wire [31:0] iss_row /* verilator public_flat_rd */,
    input  wire        iss_auto_pre /* verilator public_flat_rd */,
    // readiness this cycle, per bank / rank
    output reg  [NB-1:0] open_b /* verilator public_flat_rd */,
    output reg  [NB-1:0] ok_act /* verilator public_flat_rd */,
    output reg  [NB-1:0] ok_pre /* verilator public_flat_rd */,
    output reg  [NB-1:0] ok_rd /* verilator public_flat_rd */,
    output reg  [NB-1:0] ok_wr /* verilator public_flat_rd */,
    output reg  [NB-1:0] bk_act /* verilator public_flat_rd */,
    output reg  [3:0]  rk_act /* verilator public_flat_rd */,
    // query: one bank's open row (all ones when precharged) and counters
    input  wire [1:0]  q_rank /* verilator public_flat_rd */,
    input  wire [5:0]  q_bg /* verilator public_flat_rd */,
    input  wire [5:0]  q_bank /* verilator public_flat_rd */,
    output wire [31:0] q_open_row /* verilator public_flat_rd */,
    output wire [TW-1:0] q_act /* verilator public_flat_rd */,
    output wire [TW-1:0] q_pre /* verilator public_flat_rd */,
    output wire [TW-1:0] q_col /* verilator public_flat_rd */,
    output wire [TW-1:0] q_bg_act /* verilator public_flat_rd */,
    output wire [TW-1:0] q_bg_rd /* verilator public_flat_rd */,
    output wire [TW-1:0] q_bg_wr /* verilator public_flat_rd */,
    output wire [TW-1:0] q_rank_act /* verilator public_flat_rd */,
    output wire [TW-1:0] q_rank_rd /* verilator public_flat_rd */,
    output wire [TW-1:0] q_rank_wr /* verilator public_flat_rd */,
    output wire [4*TW-1:0] q_faw /* verilator public_flat_rd */,   // window k of q_rank at [TW*k +: TW]
    output wire [2:0]  q_faw_n /* verilator public_flat_rd */,
    output wire [1:0]  q_faw_head /* verilator public_flat_rd */
);
    localparam [2:0] C_ACT = 3'd0, C_PRE = 3'd1, C_RD = 3'd2, C_WR = 3'd3, C_REF = 3'd4, C_REFSB = 3'd5;
    localparam [TW-1:0] ZERO = {TW{1'b0}};
    localparam integer BW = $clog2(NB);   // a bank (or bank group) index: the low BW bits of a 6-bit one

    reg [31:0]   open_row [0:NB-1];   // valid while open_b: one write port, one read port (LUT RAM)
    reg [TW-1:0] c_act [0:NB-1];
    reg [TW-1:0] c_pre [0:NB-1];
    reg [TW-1:0] c_col [0:NB-1];
    reg [TW-1:0] g_act [0:NB-1];
    reg [TW-1:0] g_rd  [0:NB-1];
    reg [TW-1:0] g_wr  [0:NB-1];
    reg [TW-1:0] r_act [0:3];
    reg [TW-1:0] r_rd  [0:3];
    reg [TW-1:0] r_wr  [0:3];
    reg [TW-1:0] faw   [0:15];      // rank * 4 + k
    reg [2:0]    faw_n [0:3];
    reg [1:0]    faw_head [0:3];

`define DT_MAX(a, b) ((a) > (b) ? (a) : (b))
// the counter after a model cycle: raised to at least d, then one cycle less (0 stays 0)
`define DT_NEXT(c, d) (`DT_MAX(c, d) == ZERO ? ZERO : `DT_MAX(c, d) - 1'b1)
`define DT_DEC(c) ((c) == ZERO ? ZERO : (c) - 1'b1)

    wire [2:0] rsh = bg_bits + bank_bits;
    wire [5:0] kmask = ~(6'h3f << bank_bits);

    // ---- readiness ----
    reg [NB-1:0] gz_act, gz_rd, gz_wr;
    reg [3:0]  rz_rd, rz_wr;
    /* verilator lint_off UNUSEDSIGNAL */  // ranks are 0..3; groups below NB
    reg [5:0]  gi;
    reg [5:0]  ri;
    /* verilator lint_on UNUSEDSIGNAL */
    integer b;
    always @* begin
        for (b = 0; b < NB; b = b + 1) begin
            gz_act[b] = g_act[b] == ZERO;
            gz_rd[b] = g_rd[b] == ZERO;
            gz_wr[b] = g_wr[b] == ZERO;
        end
        for (b = 0; b < 4; b = b + 1) begin
            rk_act[b] = r_act[b] == ZERO;
            rz_rd[b] = r_rd[b] == ZERO;
            rz_wr[b] = r_wr[b] == ZERO;
        end
        for (b = 0; b < NB; b = b + 1) begin
            gi = b[5:0] >> bank_bits;
            ri = b[5:0] >> rsh;
            bk_act[b] = c_act[b] == ZERO;
            ok_pre[b] = c_pre[b] == ZERO;
            ok_act[b] = bk_act[b] && gz_act[gi[BW-1:0]] && rk_act[ri[1:0]];
            ok_rd[b] = c_col[b] == ZERO && gz_rd[gi[BW-1:0]] && rz_rd[ri[1:0]];
            ok_wr[b] = c_col[b] == ZERO && gz_wr[gi[BW-1:0]] && rz_wr[ri[1:0]];
        end
    end

    // ---- query ----
    /* verilator lint_off UNUSEDSIGNAL */  // indices below NB: the low BW bits
    wire [5:0] qb6 = ({4'd0, q_rank} << rsh) | (q_bg << bank_bits) | q_bank;
    wire [5:0] qg6 = ({4'd0, q_rank} << bg_bits) | q_bg;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [BW-1:0] qb = qb6[BW-1:0], qg = qg6[BW-1:0];
    assign q_open_row = open_b[qb] ? open_row[qb] : 32'hffffffff;
    assign q_act = c_act[qb];
    assign q_pre = c_pre[qb];
    assign q_col = c_col[qb];
    assign q_bg_act = g_act[qg];
    assign q_bg_rd = g_rd[qg];
    assign q_bg_wr = g_wr[qg];
    assign q_rank_act = r_act[q_rank];
    assign q_rank_rd = r_rd[q_rank];
    assign q_rank_wr = r_wr[q_rank];
    assign q_faw = {faw[{q_rank, 2'd3}], faw[{q_rank, 2'd2}], faw[{q_rank, 2'd1}], faw[{q_rank, 2'd0}]};
    assign q_faw_n = faw_n[q_rank];
    assign q_faw_head = faw_head[q_rank];

    // ---- what the issued command raises (cycles from now; 0: nothing) ----
    /* verilator lint_off UNUSEDSIGNAL */
    wire [5:0] ib6 = iss_b;
    wire [5:0] ig6 = iss_b >> bank_bits;         // (rank << bg_bits) | bg
    /* verilator lint_on UNUSEDSIGNAL */
    wire [BW-1:0] ib = ib6[BW-1:0], ig = ig6[BW-1:0];
    wire v_act = iss_valid && iss_cmd == C_ACT;
    wire v_pre = iss_valid && iss_cmd == C_PRE;
    wire v_col = iss_valid && (iss_cmd == C_RD || iss_cmd == C_WR);
    wire v_ref = iss_valid && iss_cmd == C_REF;
    wire v_refsb = iss_valid && iss_cmd == C_REFSB;
    wire is_rd = iss_cmd == C_RD;
    wire [TW-1:0] t_RCD = tRCD[TW-1:0], t_RP = tRP[TW-1:0], t_RAS = tRAS[TW-1:0], t_RC = tRC[TW-1:0];
    wire [TW-1:0] t_CL = tCL[TW-1:0], t_CWL = tCWL[TW-1:0], t_WR = tWR[TW-1:0], t_RTP = tRTP[TW-1:0];
    wire [TW-1:0] t_BL = tBL[TW-1:0], t_RTW = tRTW[TW-1:0], t_FAW = tFAW[TW-1:0];
    // a column command's PRE limit: RD + tRTP, WR + tCWL + tBL + tWR; with auto-precharge the bank's ACT
    // waits for the precharge (at the later of that and its PRE limit) + tRP
    wire [TW-1:0] pre_at = is_rd ? t_RTP : t_CWL + t_BL + t_WR;
    wire [TW-1:0] pre_new = `DT_MAX(c_pre[ib], pre_at);
    wire [TW-1:0] act_at = v_act ? t_RC : v_pre ? t_RP : pre_new + t_RP;
    wire bank_moves = v_act || v_pre || (v_col && iss_auto_pre);
    // WR to another rank: RD waits max(1, tCWL + tBL + 2 - tCL)
    wire [TW:0] wr_sum = {1'b0, t_CWL} + {1'b0, t_BL} + 2;
    wire [TW-1:0] wr_other_rd = wr_sum > {1'b0, t_CL} ? wr_sum[TW-1:0] - t_CL : 1;
    // tFAW: the window after this ACT holds four entries when it held three or four; its oldest entry is
    // then faw[head] (three: the new one goes behind it) or faw[head + 1] (four: the new one replaces head)
    wire [2:0] fn = faw_n[iss_rank];
    wire [1:0] fh = faw_head[iss_rank];
    wire [TW-1:0] faw_oldest = fn >= 3'd4 ? faw[{iss_rank, fh + 2'd1}] : faw[{iss_rank, fh}];
    wire faw_full = fn >= 3'd3;
    wire [TW-1:0] ract_at = v_ref ? tRFC[TW-1:0] : `DT_MAX(tRRD_S[TW-1:0], faw_full ? faw_oldest : ZERO);
    wire [TW-1:0] ref_at = v_ref ? tRFC[TW-1:0] : tRFCsb[TW-1:0];

    // ---- the next state: every counter one cycle nearer, raised first by the issued command (the
    // per-bank and per-group counters in the clocked block below, the rank ones here) ----
    reg [TW-1:0] n_ract [0:3];
    reg [TW-1:0] n_rrd [0:3];
    reg [TW-1:0] n_rwr [0:3];
    reg [TW-1:0] n_faw [0:15];
    reg [TW-1:0] d_rrd, d_rwr, d_ract;
    reg own, on_bus;
    integer k;
    always @* begin
        for (k = 0; k < 4; k = k + 1) begin
            // the rank: its own column command, or the shared data bus and 2-cycle rank switch for a
            // column command to another rank of the channel
            own = k[1:0] == iss_rank;
            on_bus = v_col && (own || k < {29'd0, ranks});
            d_rrd = !on_bus ? ZERO : own ? (is_rd ? tCCD_S[TW-1:0] : t_CWL + t_BL + tWTR_S[TW-1:0])
                                         : (is_rd ? t_BL + 2 : wr_other_rd);
            d_rwr = !on_bus ? ZERO : own ? (is_rd ? t_RTW : tCCD_S_WR[TW-1:0])
                                         : (is_rd ? t_RTW : t_BL + 2);
            d_ract = ((v_act || v_ref) && own) ? ract_at : ZERO;
            n_rrd[k] = `DT_NEXT(r_rd[k], d_rrd);
            n_rwr[k] = `DT_NEXT(r_wr[k], d_rwr);
            n_ract[k] = `DT_NEXT(r_act[k], d_ract);
        end
        // the tFAW windows: this ACT's opens at tFAW
        for (k = 0; k < 16; k = k + 1)
            n_faw[k] = (v_act && k[3:2] == iss_rank && k[1:0] == (fn < 3'd4 ? fh + fn[1:0] : fh))
                       ? `DT_DEC(t_FAW) : `DT_DEC(faw[k]);
    end

    integer j;
    // the state that a flush keeps: open banks and rows, the tFAW windows' count and head
    always @(posedge clk) begin
        if (!rst_n) begin
            open_b <= {NB{1'b0}};
            for (j = 0; j < 4; j = j + 1) begin
                faw_n[j] <= 3'd0;
                faw_head[j] <= 2'd0;
            end
        end else if (ce) begin
            if (v_act)
                open_row[ib] <= iss_row;
            if (bank_moves)
                open_b[ib] <= v_act;
            if (v_act) begin
                if (fn < 3'd4)
                    faw_n[iss_rank] <= fn + 3'd1;
                else
                    faw_head[iss_rank] <= fh + 2'd1;
            end
        end
    end

    // the counters (reset or flushed to 0)
    wire zero_all = !rst_n || (ce && flush);
    always @(posedge clk) begin
        if (zero_all) begin
            for (j = 0; j < NB; j = j + 1) begin
                c_act[j] <= ZERO;
                c_pre[j] <= ZERO;
                c_col[j] <= ZERO;
                g_act[j] <= ZERO;
                g_rd[j] <= ZERO;
                g_wr[j] <= ZERO;
            end
            for (j = 0; j < 4; j = j + 1) begin
                r_act[j] <= ZERO;
                r_rd[j] <= ZERO;
                r_wr[j] <= ZERO;
            end
            for (j = 0; j < 16; j = j + 1)
                faw[j] <= ZERO;
        end else if (ce) begin
            // every counter one cycle nearer; then (the later assignment) the addressed bank and group
            // take their raised value (a refresh raises every bank of its rank, or of its same-bank set)
            for (j = 0; j < NB; j = j + 1) begin
                c_act[j] <= `DT_DEC(c_act[j]);
                c_pre[j] <= `DT_DEC(c_pre[j]);
                c_col[j] <= `DT_DEC(c_col[j]);
                g_act[j] <= `DT_DEC(g_act[j]);
                g_rd[j] <= `DT_DEC(g_rd[j]);
                g_wr[j] <= `DT_DEC(g_wr[j]);
            end
            if (v_ref || v_refsb)
                for (j = 0; j < NB; j = j + 1)
                    if ((j[5:0] >> rsh) == {4'd0, iss_rank} && (v_ref || (j[5:0] & kmask) == iss_bank))
                        c_act[j] <= `DT_NEXT(c_act[j], ref_at);
            if (bank_moves)
                c_act[ib] <= `DT_NEXT(c_act[ib], act_at);
            if (v_act || v_col)
                c_pre[ib] <= `DT_NEXT(c_pre[ib], v_act ? t_RAS : pre_new);
            if (v_act) begin
                c_col[ib] <= `DT_NEXT(c_col[ib], t_RCD);
                g_act[ig] <= `DT_NEXT(g_act[ig], tRRD_L[TW-1:0]);
            end
            if (v_col) begin
                g_rd[ig] <= `DT_NEXT(g_rd[ig], is_rd ? tCCD_L[TW-1:0] : t_CWL + t_BL + tWTR_L[TW-1:0]);
                g_wr[ig] <= `DT_NEXT(g_wr[ig], is_rd ? t_RTW : tCCD_L_WR[TW-1:0]);
            end
            for (j = 0; j < 4; j = j + 1) begin
                r_act[j] <= n_ract[j];
                r_rd[j] <= n_rrd[j];
                r_wr[j] <= n_rwr[j];
            end
            for (j = 0; j < 16; j = j + 1)
                faw[j] <= n_faw[j];
        end
    end
`undef DT_MAX
`undef DT_NEXT
`undef DT_DEC
endmodule

`default_nettype wire

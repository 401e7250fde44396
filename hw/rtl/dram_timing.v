// dram_timing.v - per-bank, per-bank-group, per-rank and per-channel timing state of one DRAM channel
// (hw/hls/dram_timing.c; JEDEC constraints DDR4 JESD79-4, DDR5 JESD79-5; docs/cxl-model.md).
//
// State: per bank open_row (all ones = -1, precharged), next_act, next_pre, next_col; per bank group
// (rank * bankgroups + bg) act/rd/wr; per rank act/rd/wr and the four-entry tFAW window.
//
// Check ("can this command issue now", dram_ready): combinational from the state for the bank addressed
// by q_rank/q_bg/q_bank, all commands at once: rdy_act, rdy_pre, rdy_rd, rdy_wr, rdy_ref (REF and REFsb
// both read the rank's act, as the C's default case). A command may issue when rdy_<cmd> <= now. The
// same port shows that bank's, bank group's and rank's state (q_*), so a controller or a test reads
// every field through it.
// Update (dram_issue): at the clock edge when iss_valid and ce, with the cycle `now`. One command per edge.
// Clock enable: the state moves only on edges with ce = 1 (one model cycle may span several clocks);
// reset acts regardless of ce.
//
// Runtime parameters: ranks (count, <= CXL_MAX_RANKS), bg_bits / bank_bits (log2 of bankgroups and of
// banks: the C multiplies by the counts, the RTL concatenates; equal because devcfg makes every mapping
// field a power of two) and the timings in cycles (the C's uint32 fields). Indices must be in range
// (rank < ranks, bg < bankgroups, bank < banks, ranks * bankgroups * banks <= 64), as in the C.
`default_nettype none

module dram_timing (
    input  wire        clk,
    input  wire        rst_n,
    input  wire        ce,          // clock enable: the state advances on edges with ce = 1
    input  wire [63:0] now,
    // parameters (cxl_dram_params)
    input  wire [2:0]  ranks,
    input  wire [2:0]  bg_bits,
    input  wire [2:0]  bank_bits,
    input  wire [31:0] tRCD, tCL, tRP, tRAS, tRC, tCWL, tWR, tRTP, tBL,
    input  wire [31:0] tCCD_S, tCCD_L, tCCD_S_WR, tCCD_L_WR, tRRD_S, tRRD_L, tFAW, tWTR_S, tWTR_L, tRTW,
    input  wire [31:0] tRFC, tRFCsb,
    // command issued this cycle (enum cxl_dram_cmd: ACT 0, PRE 1, RD 2, WR 3, REF 4, REFSB 5)
    input  wire        iss_valid,
    input  wire [2:0]  iss_cmd,
    input  wire [1:0]  iss_rank,
    input  wire [5:0]  iss_bg,
    input  wire [5:0]  iss_bank,
    input  wire [31:0] iss_row,
    input  wire        iss_auto_pre,
    // query: readiness and state of one bank
    input  wire [1:0]  q_rank,
    input  wire [5:0]  q_bg,
    input  wire [5:0]  q_bank,
    output wire [63:0] rdy_act,
    output wire [63:0] rdy_pre,
    output wire [63:0] rdy_rd,
    output wire [63:0] rdy_wr,
    output wire [63:0] rdy_ref,
    output wire [31:0] q_open_row,
    output wire [63:0] q_next_act,
    output wire [63:0] q_next_pre,
    output wire [63:0] q_next_col,
    output wire [63:0] q_bg_act,
    output wire [63:0] q_bg_rd,
    output wire [63:0] q_bg_wr,
    output wire [63:0] q_rank_act,
    output wire [63:0] q_rank_rd,
    output wire [63:0] q_rank_wr,
    output wire [255:0] q_faw,      // faw[q_rank][k] at [64*k +: 64]
    output wire [2:0]  q_faw_n,
    output wire [1:0]  q_faw_head
);
    localparam [2:0] C_ACT = 3'd0, C_PRE = 3'd1, C_RD = 3'd2, C_WR = 3'd3, C_REF = 3'd4, C_REFSB = 3'd5;

    reg [31:0] open_row [0:63];
    reg [63:0] b_act [0:63];
    reg [63:0] b_pre [0:63];
    reg [63:0] b_col [0:63];
    reg [63:0] g_act [0:63];
    reg [63:0] g_rd  [0:63];
    reg [63:0] g_wr  [0:63];
    reg [63:0] r_act [0:3];
    reg [63:0] r_rd  [0:3];
    reg [63:0] r_wr  [0:3];
    reg [63:0] faw   [0:15];     // rank * 4 + k
    reg [2:0]  faw_n [0:3];
    reg [1:0]  faw_head [0:3];

    function [63:0] max64(input [63:0] a, input [63:0] b);
        max64 = a > b ? a : b;
    endfunction

    // (rank * bankgroups + bg) * banks + bank, and rank * bankgroups + bg, for power-of-two sizes
    function [5:0] bank_idx(input [1:0] r, input [5:0] g, input [5:0] k, input [2:0] gb, input [2:0] kb);
        bank_idx = ({4'd0, r} << (gb + kb)) | (g << kb) | k;
    endfunction
    function [5:0] group_idx(input [1:0] r, input [5:0] g, input [2:0] gb);
        group_idx = ({4'd0, r} << gb) | g;
    endfunction

    // ---- check ----
    wire [5:0] qb = bank_idx(q_rank, q_bg, q_bank, bg_bits, bank_bits);
    wire [5:0] qg = group_idx(q_rank, q_bg, bg_bits);
    assign q_open_row = open_row[qb];
    assign q_next_act = b_act[qb];
    assign q_next_pre = b_pre[qb];
    assign q_next_col = b_col[qb];
    assign q_bg_act = g_act[qg];
    assign q_bg_rd = g_rd[qg];
    assign q_bg_wr = g_wr[qg];
    assign q_rank_act = r_act[q_rank];
    assign q_rank_rd = r_rd[q_rank];
    assign q_rank_wr = r_wr[q_rank];
    assign q_faw = {faw[{q_rank, 2'd3}], faw[{q_rank, 2'd2}], faw[{q_rank, 2'd1}], faw[{q_rank, 2'd0}]};
    assign q_faw_n = faw_n[q_rank];
    assign q_faw_head = faw_head[q_rank];
    assign rdy_act = max64(q_next_act, max64(q_bg_act, q_rank_act));
    assign rdy_pre = q_next_pre;
    assign rdy_rd = max64(q_next_col, max64(q_bg_rd, q_rank_rd));
    assign rdy_wr = max64(q_next_col, max64(q_bg_wr, q_rank_wr));
    assign rdy_ref = q_rank_act;

    // ---- update ----
    wire [5:0] ib = bank_idx(iss_rank, iss_bg, iss_bank, bg_bits, bank_bits);
    wire [5:0] ig = group_idx(iss_rank, iss_bg, bg_bits);
    wire [2:0] rsh = bg_bits + bank_bits;
    wire [5:0] kmask = ~(6'h3f << bank_bits);
    wire is_rd = iss_cmd == C_RD;
    // RD: now + tRTP; WR: now + tCWL + tBL + tWR (64-bit sums, as the C)
    wire [63:0] pre_at = is_rd ? now + {32'd0, tRTP} : now + {32'd0, tCWL} + {32'd0, tBL} + {32'd0, tWR};
    wire [63:0] pre_new = max64(b_pre[ib], pre_at);
    // WR to another rank: RD waits max(1, tCWL + tBL + 2 - tCL), computed in 32 bits as the C
    wire [31:0] wr_sum = tCWL + tBL + 32'd2;
    wire [63:0] wr_other_rd = {32'd0, wr_sum > tCL ? wr_sum - tCL : 32'd1};
    // tFAW: the window after this ACT holds four entries when it held three or four; its oldest entry is
    // then faw[head] (three: the new one goes behind it) or faw[head + 1] (four: the new one replaces head)
    wire [2:0] fn = faw_n[iss_rank];
    wire [1:0] fh = faw_head[iss_rank];
    wire [63:0] faw_oldest = fn >= 3'd4 ? faw[{iss_rank, fh + 2'd1}] : faw[{iss_rank, fh}];
    wire faw_full = fn >= 3'd3;

    integer j;
    always @(posedge clk) begin
        if (!rst_n) begin
            for (j = 0; j < 64; j = j + 1) begin
                open_row[j] <= 32'hffffffff;
                b_act[j] <= 64'd0;
                b_pre[j] <= 64'd0;
                b_col[j] <= 64'd0;
                g_act[j] <= 64'd0;
                g_rd[j] <= 64'd0;
                g_wr[j] <= 64'd0;
            end
            for (j = 0; j < 4; j = j + 1) begin
                r_act[j] <= 64'd0;
                r_rd[j] <= 64'd0;
                r_wr[j] <= 64'd0;
                faw_n[j] <= 3'd0;
                faw_head[j] <= 2'd0;
            end
            for (j = 0; j < 16; j = j + 1)
                faw[j] <= 64'd0;
        end else if (ce && iss_valid) begin
            case (iss_cmd)
            C_ACT: begin
                open_row[ib] <= iss_row;
                b_col[ib] <= max64(b_col[ib], now + {32'd0, tRCD});
                b_pre[ib] <= max64(b_pre[ib], now + {32'd0, tRAS});
                b_act[ib] <= max64(b_act[ib], now + {32'd0, tRC});
                g_act[ig] <= max64(g_act[ig], now + {32'd0, tRRD_L});
                r_act[iss_rank] <= max64(max64(r_act[iss_rank], now + {32'd0, tRRD_S}),
                                         faw_full ? faw_oldest + {32'd0, tFAW} : 64'd0);
                if (fn < 3'd4) begin
                    faw[{iss_rank, fh + fn[1:0]}] <= now;
                    faw_n[iss_rank] <= fn + 3'd1;
                end else begin
                    faw[{iss_rank, fh}] <= now;
                    faw_head[iss_rank] <= fh + 2'd1;
                end
            end
            C_PRE: begin
                open_row[ib] <= 32'hffffffff;
                b_act[ib] <= max64(b_act[ib], now + {32'd0, tRP});
            end
            C_RD, C_WR: begin
                b_pre[ib] <= pre_new;
                if (iss_auto_pre) begin
                    open_row[ib] <= 32'hffffffff;
                    b_act[ib] <= max64(b_act[ib], pre_new + {32'd0, tRP});
                end
                if (is_rd) begin
                    g_rd[ig] <= max64(g_rd[ig], now + {32'd0, tCCD_L});
                    g_wr[ig] <= max64(g_wr[ig], now + {32'd0, tRTW});
                end else begin
                    g_wr[ig] <= max64(g_wr[ig], now + {32'd0, tCCD_L_WR});
                    g_rd[ig] <= max64(g_rd[ig], now + {32'd0, tCWL} + {32'd0, tBL} + {32'd0, tWTR_L});
                end
                for (j = 0; j < 4; j = j + 1) begin
                    if (j[1:0] == iss_rank) begin
                        if (is_rd) begin
                            r_rd[j] <= max64(r_rd[j], now + {32'd0, tCCD_S});
                            r_wr[j] <= max64(r_wr[j], now + {32'd0, tRTW});
                        end else begin
                            r_wr[j] <= max64(r_wr[j], now + {32'd0, tCCD_S_WR});
                            r_rd[j] <= max64(r_rd[j], now + {32'd0, tCWL} + {32'd0, tBL} + {32'd0, tWTR_S});
                        end
                    end else if (j < {29'd0, ranks}) begin
                        // shared data bus, 2-cycle rank switch
                        if (is_rd) begin
                            r_rd[j] <= max64(r_rd[j], now + {32'd0, tBL} + 64'd2);
                            r_wr[j] <= max64(r_wr[j], now + {32'd0, tRTW});
                        end else begin
                            r_wr[j] <= max64(r_wr[j], now + {32'd0, tBL} + 64'd2);
                            r_rd[j] <= max64(r_rd[j], now + wr_other_rd);
                        end
                    end
                end
            end
            C_REF: begin
                for (j = 0; j < 64; j = j + 1)
                    if ((j[5:0] >> rsh) == {4'd0, iss_rank})
                        b_act[j] <= max64(b_act[j], now + {32'd0, tRFC});
                r_act[iss_rank] <= max64(r_act[iss_rank], now + {32'd0, tRFC});
            end
            C_REFSB: begin
                for (j = 0; j < 64; j = j + 1)
                    if ((j[5:0] >> rsh) == {4'd0, iss_rank} && (j[5:0] & kmask) == iss_bank)
                        b_act[j] <= max64(b_act[j], now + {32'd0, tRFCsb});
            end
            default: ;
            endcase
        end
    end
endmodule

`default_nettype wire

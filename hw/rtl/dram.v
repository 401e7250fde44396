// dram.v - the DRAM controller of a device (hw/hls/dram.c, docs/cxl-model.md section 4.8): per channel
// read and write queues, FR-FCFS (single pass) or FCFS, open or closed page, write drain with watermarks,
// all-bank (REFab) or same-bank (REFsb) staggered refresh, the read-data FIFO.
//
// One clock edge with ce = 1 is one C cycle: dram_enqueue (enq_valid, at most one per cycle, as devctrl) and then
// dram_tick. The enqueued request is visible to the same cycle's scheduling (a combinational view of
// each queue with the new entry appended), as in the C.
//
// Per channel (module dram_chan, CXL_MAX_CH = 4 instances; those >= channels idle): the C's scan over the
// mode's queue is two priority encoders over the entries: the oldest ready row hit (column command) and
// the oldest ready non-hit (ACT to a closed bank, or PRE to a bank whose open row no queued entry of the
// mode hits: under FR-FCFS). The C stops at the first ready hit, and takes a row command only when no hit
// is ready, so "oldest ready hit, else oldest ready row command" is the same choice. The C's hits_r/hits_w
// counters are always exactly the number of entries of that queue hitting the bank's open row, so the
// RTL derives "hits != 0" from the queue (a per-bank mask) instead of keeping them.
//
// Shaped as hardware, not as the C's loop: every queue entry carries a row-hit bit (its row is its bank's
// open row: set at enqueue, updated on each ACT / PRE / auto-precharge to its bank), and the timing
// limits are compared with now once per bank, bank group and rank (max(a, b, c) <= now is
// a <= now && b <= now && c <= now), so an entry's readiness is a few single-bit selects by its bank
// index instead of 64-bit reads of the tables. (Per-bank bits are computed only for banks that some
// entry of the mode's queue addresses, or all when a refresh is due: the others are never read. The
// simulator's speed build, CXL_SIM_ROLLED_LOOPS, reads the tables per scanned entry instead and
// computes the bits only for a due refresh: docs/rtl.md, "Simulation speed".)
//
// The timing state is dram_timing.v's (same fields, same update rules, copied here): the scheduler reads
// every entry's bank, bank group and rank at once, which dram_timing's single query port cannot give.
// The per-bank and per-group tables are flat vectors with one next-state rule per element (a refresh
// moves a rank's banks at once, so they are registers, not a RAM).
//
// The C's wake/wake_on_room skip is an optimisation that does not change results (dram.c); the RTL
// evaluates every channel every cycle. Channels take turns at the response room in the C's order,
// channel (now + k) mod channels k-th: a channel's RD candidate does not depend on the room, so the
// room is handed out in that order combinationally (rsp_room -> rsp_room_out).
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
    parameter integer NCH = 4       // channels built (<= CXL_MAX_CH); the outputs of the others are 0
) (
    input  wire        clk,
    input  wire        rst_n,
    input  wire        ce,            // clock enable: the state advances on edges with ce = 1
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
    output reg  [31:0] rsp_room_out,
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
        .addr(enq_msg[`CXL_MSG_ADDR]), .map_order(map_order), .map_bits(map_bits), .bank_hash(bank_hash),
        .ch(m_ch), .rank(m_rank), .bg(m_bg), .bank(m_bank), .row(m_row), .col(m_col)
    );
    wire [5:0] enq_bidx = ({4'd0, m_rank[1:0]} << (bg_bits + bank_bits)) | (m_bg[5:0] << bank_bits) | m_bank[5:0];
    wire [EW-1:0] enq_e = {enq_msg, m_row, m_rank[1:0], m_bg[5:0], m_bank[5:0], enq_bidx};
    wire enq_w = enq_msg[`CXL_MSG_CLS] == `CXL_M2S_RWD;

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
            end else begin : ch
            wire here = enq_valid && m_ch[1:0] == c;
            dram_chan u_ch (
                .clk(clk), .rst_n(rst_n), .ce(ce), .now(now), .ch(CI), .en(c < channels),
                .ranks(ranks), .bg_bits(bg_bits), .bank_bits(bank_bits), .ref_shift(ref_shift),
                .tRCD(tRCD), .tCL(tCL), .tRP(tRP), .tRAS(tRAS), .tRC(tRC), .tCWL(tCWL), .tWR(tWR),
                .tRTP(tRTP), .tBL(tBL), .tCCD_S(tCCD_S), .tCCD_L(tCCD_L), .tCCD_S_WR(tCCD_S_WR),
                .tCCD_L_WR(tCCD_L_WR), .tRRD_S(tRRD_S), .tRRD_L(tRRD_L), .tFAW(tFAW), .tWTR_S(tWTR_S),
                .tWTR_L(tWTR_L), .tRTW(tRTW), .tREFI(tREFI), .tRFC(tRFC), .tRFCsb(tRFCsb),
                .refresh(refresh), .wdrain_high(wdrain_high), .wdrain_low(wdrain_low),
                .row_closed(row_closed), .fcfs(fcfs),
                .enq_r(here && !enq_w), .enq_w(here && enq_w), .enq_e(enq_e),
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

    // channel (now + k) mod channels goes k-th: completions in that order, room handed out in that order
    reg [31:0] room;
    reg [1:0] ci;
    integer k;
    always @* begin
        room = rsp_room;
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
        rsp_room_out = room;
    end

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
    always @(posedge clk) begin
        if (!rst_n) begin
            st_reads <= 64'd0; st_writes <= 64'd0; st_acts <= 64'd0; st_pres <= 64'd0; st_refs <= 64'd0;
            st_row_conflicts <= 64'd0; occ_sum <= 64'd0;
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

// One channel: queues, timing state, refresh, scheduler, read-data FIFO (cxl_dram_chan).
// Every port but clk is marked public_flat_rd, and the helpers are macros rather than functions, so that
// the channel instances (16 in the kernel) share one copy of the code Verilator generates instead of
// one each: about 60 KB of machine code per busy channel (docs/rtl.md, "Simulation speed").
/* verilator lint_off DECLFILENAME */  // a part of dram, not used elsewhere
module dram_chan (
    input  wire        clk,
    input  wire        rst_n /* verilator public_flat_rd */,
    input  wire        ce /* verilator public_flat_rd */,
    input  wire [63:0] now /* verilator public_flat_rd */,
    input  wire [1:0]  ch /* verilator public_flat_rd */,            // this channel's index (an input, not a parameter: one verilated class)
    input  wire        en /* verilator public_flat_rd */,
    input  wire [2:0]  ranks /* verilator public_flat_rd */,
    input  wire [2:0]  bg_bits /* verilator public_flat_rd */,
    input  wire [2:0]  bank_bits /* verilator public_flat_rd */,
    input  wire [3:0]  ref_shift /* verilator public_flat_rd */,
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
    input  wire        enq_r /* verilator public_flat_rd */,
    input  wire        enq_w /* verilator public_flat_rd */,
    input  wire [`CXL_MSG_W+51:0] enq_e /* verilator public_flat_rd */,
    input  wire        col_grant /* verilator public_flat_rd */,
    output reg         rd_cand /* verilator public_flat_rd */,
    output wire        done_valid /* verilator public_flat_rd */,
    output wire [`CXL_MSG_W-1:0] done_msg /* verilator public_flat_rd */,
    output reg         iss_valid /* verilator public_flat_rd */,
    output reg  [2:0]  iss_cmd /* verilator public_flat_rd */,
    output reg  [1:0]  iss_rank /* verilator public_flat_rd */,
    output reg  [5:0]  iss_bg /* verilator public_flat_rd */,
    output reg  [5:0]  iss_bank /* verilator public_flat_rd */,
    output reg  [31:0] iss_row /* verilator public_flat_rd */,
    output reg         iss_auto_pre /* verilator public_flat_rd */,
    output reg         iss_conflict /* verilator public_flat_rd */,
    output reg  [6:0]  nr /* verilator public_flat_rd */,
    output reg  [6:0]  nw /* verilator public_flat_rd */,
    output wire [5:0]  rd_n /* verilator public_flat_rd */,
    output reg  [6:0]  nr_next /* verilator public_flat_rd */,
    output reg  [6:0]  nw_next /* verilator public_flat_rd */,
    output wire        refresh_due /* verilator public_flat_rd */    // a rank's refresh deadline has passed: the model is not idle (cxl_model_idle)
);
    localparam EW = `CXL_MSG_W + 52;
    localparam [2:0] C_ACT = 3'd0, C_PRE = 3'd1, C_RD = 3'd2, C_WR = 3'd3, C_REF = 3'd4, C_REFSB = 3'd5;
    localparam [31:0] CLOSED = 32'hffffffff;

    // ---- state ----
    // The queues: every entry is rewritten when one is removed (a shift). Yosys is told to keep them as
    // registers (mem2reg): as memories they would have 64 write ports, each a mux chain over every word.
    (* mem2reg *) reg [EW-1:0] rq [0:63];
    (* mem2reg *) reg [EW-1:0] wq [0:63];
    reg [63:0]   rq_hit, wq_hit;    // entry i's row is its bank's open row (see the scan)
    reg          write_mode;
    reg [63:0]   ref_due [0:3];
    reg [5:0]    ref_bank [0:3];
    reg [`CXL_MSG_W-1:0] rd_msg [0:31];
    reg [63:0]   rd_done [0:31];
    reg [4:0]    rd_head;
    reg [5:0]    rd_count;
    // timing (dram_timing.v)
    // per bank b: open row, earliest ACT / PRE / column command; per bank group (rank, bg) g: earliest
    // ACT / RD / WR. Registers, not RAMs (mem2reg): the scan compares every element every clock, and a
    // refresh moves a whole rank at once.
    (* mem2reg *) reg [31:0] open_row [0:63];
    (* mem2reg *) reg [63:0] b_act [0:63];
    (* mem2reg *) reg [63:0] b_pre [0:63];
    (* mem2reg *) reg [63:0] b_col [0:63];
    (* mem2reg *) reg [63:0] g_act [0:63];
    (* mem2reg *) reg [63:0] g_rd [0:63];
    (* mem2reg *) reg [63:0] g_wr [0:63];
    reg [63:0] r_act [0:3];
    reg [63:0] r_rd  [0:3];
    reg [63:0] r_wr  [0:3];
    reg [63:0] faw   [0:15];
    reg [2:0]  faw_n [0:3];
    reg [1:0]  faw_head [0:3];

    // DRAM_MAX64(a, b) and DRAM_APP(...) below are macros, not functions: Verilator gives every call site of a
    // function its own numbered temporaries, which would make each channel's code a separate copy (every
    // use here is 64 bits wide on both sides, as the function's arguments were)
`define DRAM_MAX64(a, b) ((a) > (b) ? (a) : (b))
// DRAM_UPTO(v, n): v = 0 .. n - 1 (n <= 64). Hardware: 64 unrolled copies, those >= n disabled. In
// the speed build of the verilator backend (CXL_SIM_ROLLED_LOOPS): a loop of n iterations, which is
// not unrolled (its bound is not a constant), so a channel's scans are a few hundred bytes of machine
// code that run n times rather than 64 unrolled copies, each tested (docs/rtl.md, "Simulation speed")
`ifdef CXL_SIM_ROLLED_LOOPS
`define DRAM_UPTO(v, n) for (v = 0; v < {25'd0, n}; v = v + 1)
`else
`define DRAM_UPTO(v, n) for (v = 0; v < 64; v = v + 1) if (v < {25'd0, n})
`endif

    wire sb = refresh == 2'd2;
    wire [31:0] ref_iv = (refresh == 2'd0 || tREFI == 32'd0) ? 32'd0 : (sb ? tREFI >> bank_bits : tREFI);
    wire [2:0] rsh = bg_bits + bank_bits;
    wire [5:0] kmask = ~(6'h3f << bank_bits);

    // ---- read return ----
    wire rd_pop = en && rd_count != 6'd0 && rd_done[rd_head] <= now;
    assign done_valid = rd_pop;
    assign rd_n = rd_count;
    assign done_msg = rd_msg[rd_head];

    // ---- the queues as the scheduler sees them: the enqueued entry appended ----
    // Entry ak of a queue (aq = its entry ak, an its length) with this cycle's enqueue (aenq: ane)
    // appended; 0 past the end (ak = 64). An expression of its arguments rather than copies of the queues, so that a simulator does
    // not copy 2 x 64 entries every clock (the scans below read only the first n entries).
`define DRAM_APP(ak, an, aenq, aq, ane) ((ak) == 7'd64 ? {EW{1'b0}} : (((aenq) && (ak) == (an)) ? (ane) : (aq)))
    reg [6:0] nr_v, nw_v;
    reg wm;                         // write mode after this cycle's update
    integer i;
    always @* begin
        nr_v = nr + {6'd0, enq_r};
        nw_v = nw + {6'd0, enq_w};
        if (!write_mode)
            wm = {25'd0, nw_v} >= wdrain_high || (nr_v == 7'd0 && nw_v != 7'd0);
        else
            wm = !(nw_v == 7'd0 || ({25'd0, nw_v} <= wdrain_low && nr_v != 7'd0));
    end

    // ---- the mode's queue (with this cycle's enqueue appended): the banks and groups it addresses, and
    // the banks whose open row some entry hits (hitmask) ----
    reg [6:0] n_m, n_scan;
    reg [63:0] hitmask, q_hit;
    reg [5:0] v_b;
    wire enq_hit = open_row[enq_e[5:0]] == enq_e[51:20];
`ifdef CXL_SIM_ROLLED_LOOPS
    // The speed build reads the stored entries in place and adds the appended one after them: no
    // per-entry copy of the queue view (v_bank / v_hits below), no per-entry test for the appended one.
    reg       app_m;                // this cycle's enqueue goes to the mode's queue
    reg [6:0] n_old;                // the mode's stored entries (the appended one is entry n_old)
    always @* begin
        n_m = wm ? nw_v : nr_v;
        n_scan = (fcfs && n_m > 7'd1) ? 7'd1 : n_m;
        q_hit = wm ? wq_hit : rq_hit;
        app_m = wm ? enq_w : enq_r;
        n_old = wm ? nw : nr;
        hitmask = 64'd0;
        v_b = 6'd0;
        // only the row-hit entries: the loop ends after the last one (row hits are few on most workloads)
        for (i = 0; i < {25'd0, n_old} && (q_hit >> i) != 64'd0; i = i + 1)
            if (q_hit[i]) begin
                v_b = wm ? wq[i][5:0] : rq[i][5:0];
                hitmask = hitmask | (64'd1 << v_b);
            end
        if (app_m && enq_hit)
            hitmask = hitmask | (64'd1 << enq_e[5:0]);
    end
`else
    reg [63:0] need, need_g;
    reg v_hit;
    reg [383:0] v_bank;             // entry i's bank index at [6i +: 6]
    reg [63:0] v_hits;              // entry i's row-hit bit
    always @* begin
        n_m = wm ? nw_v : nr_v;
        n_scan = (fcfs && n_m > 7'd1) ? 7'd1 : n_m;
        q_hit = wm ? wq_hit : rq_hit;
        hitmask = 64'd0;
        need = 64'd0;
        need_g = 64'd0;
        v_b = 6'd0;
        v_hit = 1'b0;
        v_bank = 384'd0;
        v_hits = 64'd0;
        `DRAM_UPTO(i, n_m) begin
            begin
                if ((wm ? enq_w : enq_r) && i[6:0] == (wm ? nw : nr)) begin
                    v_b = enq_e[5:0];
                    v_hit = enq_hit;
                end else begin
                    v_b = wm ? wq[i][5:0] : rq[i][5:0];
                    v_hit = q_hit[i];
                end
                v_bank[6*i +: 6] = v_b;
                v_hits[i] = v_hit;
                need = need | (64'd1 << v_b);
                need_g = need_g | (64'd1 << (v_b >> bank_bits));
                if (v_hit)
                    hitmask = hitmask | (64'd1 << v_b);
            end
        end
    end
`endif

    // ---- per bank: which timing limits have passed (the C's max(...) <= now, one comparator per
    // timestamp: max(a, b, c) <= now is a <= now && b <= now && c <= now) ----
    // Bank b is rank b >> rsh, bank group index (rank, bg) = b >> bank_bits, bank b & kmask (enq_bidx).
    reg [63:0] bk_act, bk_pre, closed_b, blk_b;
    reg [3:0]  rk_act_ok, rk_rd_ok, rk_wr_ok;
    /* verilator lint_off UNUSEDSIGNAL */  // ranks are 0..3: brk[1:0]
    reg [5:0]  brk;
    /* verilator lint_on UNUSEDSIGNAL */
    reg [3:0]  due;                 // rank r's refresh deadline has passed
    integer r, b;
    always @*
        for (r = 0; r < 4; r = r + 1)
            due[r] = en && r < {29'd0, ranks} && ref_due[r] <= now;   // (an unused channel: no scan)
    wire all_b = due != 4'd0;
    always @*
        for (r = 0; r < 4; r = r + 1) begin
            rk_act_ok[r] = r_act[r] <= now;
            rk_rd_ok[r] = r_rd[r] <= now;
            rk_wr_ok[r] = r_wr[r] <= now;
        end
`ifdef CXL_SIM_ROLLED_LOOPS
    // The speed build's scan reads an entry's timing limits from the tables directly (the same
    // comparisons as the bits below); the per-bank bits are computed only for a due refresh, which reads
    // all of its rank's banks, and then for every bank.
    always @* begin
        bk_act = 64'd0; bk_pre = 64'd0; closed_b = 64'd0; blk_b = 64'd0;
        brk = 6'd0;
        if (all_b)
            for (b = 0; b < 64; b = b + 1) begin
                bk_act[b] = b_act[b] <= now;
                bk_pre[b] = b_pre[b] <= now;
                closed_b[b] = open_row[b] == CLOSED;
                brk = b[5:0] >> rsh;
                blk_b[b] = due[brk[1:0]] && (!sb || (b[5:0] & kmask) == ref_bank[brk[1:0]]);
            end
    end
`else
    reg [63:0] bk_col, gk_act, gk_rd, gk_wr;
    reg [63:0] ok_col_r, ok_col_w, ok_act;
    reg [5:0]  bgi;
    // Only the banks (groups) that some entry of the mode's queue addresses are looked at by the scan,
    // and all of a rank's banks by a due refresh: the bits of the others are 0 (need / need_g), which
    // saves a simulator most of the comparisons.
    always @* begin
        bk_col = 64'd0; bk_act = 64'd0; bk_pre = 64'd0; closed_b = 64'd0;
        gk_act = 64'd0; gk_rd = 64'd0; gk_wr = 64'd0;
        ok_col_r = 64'd0; ok_col_w = 64'd0; ok_act = 64'd0; blk_b = 64'd0;
        bgi = 6'd0; brk = 6'd0;
        for (b = 0; b < 64; b = b + 1)
            if (need_g[b] || all_b) begin
                gk_act[b] = g_act[b] <= now;
                gk_rd[b] = g_rd[b] <= now;
                gk_wr[b] = g_wr[b] <= now;
            end
        for (b = 0; b < 64; b = b + 1)
          if (need[b] || all_b) begin
            bk_col[b] = b_col[b] <= now;
            bk_act[b] = b_act[b] <= now;
            bk_pre[b] = b_pre[b] <= now;
            closed_b[b] = open_row[b] == CLOSED;
            bgi = b[5:0] >> bank_bits;
            brk = b[5:0] >> rsh;
            ok_col_r[b] = bk_col[b] && gk_rd[bgi] && rk_rd_ok[brk[1:0]];
            ok_col_w[b] = bk_col[b] && gk_wr[bgi] && rk_wr_ok[brk[1:0]];
            ok_act[b] = bk_act[b] && gk_act[bgi] && rk_act_ok[brk[1:0]];
            blk_b[b] = due[brk[1:0]] && (!sb || (b[5:0] & kmask) == ref_bank[brk[1:0]]);
          end
    end
`endif
    // ---- refresh (refresh_step, ranks in order; the first that can issue does) ----
    // Rank r may precharge its lowest open bank whose PRE time has passed (rk_pre), or refresh when no
    // bank is open and every bank's and the rank's ACT time has passed (same-bank: only bank ref_bank[r],
    // and not the rank's ACT time).
    assign refresh_due = en && due != 4'd0;
    reg ref_fire, ref_is_pre, rk_pre;
    reg [1:0] ref_rank;
    reg [5:0] ref_j, rk_j;
    reg [63:0] sel_r, pre_c;
    always @* begin
        ref_fire = 1'b0;
        ref_is_pre = 1'b0;
        ref_rank = 2'd0;
        ref_j = 6'd0;
        sel_r = 64'd0;
        pre_c = 64'd0;
        rk_pre = 1'b0;
        rk_j = 6'd0;
        for (r = 0; r < 4; r = r + 1) begin
            // (only a due rank while no rank has fired: skip the rest)
            if (due[r] && !ref_fire) begin
                for (b = 0; b < 64; b = b + 1)
                    sel_r[b] = (b[5:0] >> rsh) == r[5:0] && (!sb || (b[5:0] & kmask) == ref_bank[r]);
                pre_c = sel_r & ~closed_b & bk_pre;
                rk_pre = pre_c != 64'd0;
                rk_j = 6'd0;
                for (b = 63; b >= 0; b = b - 1)
                    if (pre_c[b])
                        rk_j = b[5:0];
                if (rk_pre || ((sel_r & ~closed_b) == 64'd0 && (sb || rk_act_ok[r]) && (sel_r & ~bk_act) == 64'd0)) begin
                    ref_fire = 1'b1;
                    ref_is_pre = rk_pre;
                    ref_rank = r[1:0];
                    ref_j = rk_j;
                end
            end
        end
    end

    // ---- FR-FCFS / FCFS over the mode's queue ----
    // Every queue entry carries a row-hit bit (rq_hit / wq_hit: its row is its bank's open row), set
    // at enqueue and updated on every ACT / PRE to its bank, so the scan reads per-bank bits, not rows
    // and timestamps. held (FR-FCFS): a queued entry of the mode hits the bank's open row, so no PRE.
    reg hit_found, row_found;
    reg [5:0] hit_i, row_i, e_b;
`ifdef CXL_SIM_ROLLED_LOOPS
    /* verilator lint_off UNUSEDSIGNAL */  // ranks are 0..3: e_r[1:0]
    reg [5:0] e_g, e_r;
    /* verilator lint_on UNUSEDSIGNAL */
    reg [6:0] n_st;                 // stored entries the scan covers (FCFS: 1)
    reg       app_scan;             // it covers the appended one
    // An entry's readiness read from the timing tables directly (the same comparisons as the per-bank
    // bits of the hardware form, which the speed build computes only for a due refresh: blk_b). e_b is
    // the entry's bank, e_g its bank group index, e_r its rank.
`define DRAM_COL_OK (b_col[e_b] <= now && (wm ? g_wr[e_g] <= now && rk_wr_ok[e_r[1:0]] : g_rd[e_g] <= now && rk_rd_ok[e_r[1:0]]))
`define DRAM_ROW_OK (open_row[e_b] == CLOSED ? b_act[e_b] <= now && g_act[e_g] <= now && rk_act_ok[e_r[1:0]] \
                                             : (fcfs || !hitmask[e_b]) && b_pre[e_b] <= now)
// DRAM_AT(b): look at bank b (e_b, e_g, e_r as above)
`define DRAM_AT(b) begin e_b = (b); e_g = e_b >> bank_bits; e_r = e_b >> rsh; end
`else
    reg e_hit;
`endif
    always @* begin
        e_b = 6'd0;
        hit_found = 1'b0;
        row_found = 1'b0;
        hit_i = 6'd0;
        row_i = 6'd0;
`ifdef CXL_SIM_ROLLED_LOOPS
        // Two scans, each stopping at its pick: the oldest ready row hit over the row-hit entries only
        // (none on most cycles of a random workload: q_hit = 0), and the oldest ready row command over
        // the others. The same picks as the single pass of the hardware form.
        e_g = 6'd0;
        e_r = 6'd0;
        n_st = n_scan < n_old ? n_scan : n_old;
        app_scan = app_m && n_old < n_scan;
        for (i = 0; i < {25'd0, n_st} && !hit_found && (q_hit >> i) != 64'd0; i = i + 1)
            if (q_hit[i]) begin
                `DRAM_AT(wm ? wq[i][5:0] : rq[i][5:0])
                if (!blk_b[e_b] && `DRAM_COL_OK) begin
                    hit_found = 1'b1;
                    hit_i = i[5:0];
                end
            end
        if (!hit_found && app_scan && enq_hit) begin
            `DRAM_AT(enq_e[5:0])
            if (!blk_b[e_b] && `DRAM_COL_OK) begin
                hit_found = 1'b1;
                hit_i = n_old[5:0];
            end
        end
        for (i = 0; i < {25'd0, n_st} && !row_found; i = i + 1)
            if (!q_hit[i]) begin
                `DRAM_AT(wm ? wq[i][5:0] : rq[i][5:0])
                if (!blk_b[e_b] && `DRAM_ROW_OK) begin
                    row_found = 1'b1;
                    row_i = i[5:0];
                end
            end
        if (!row_found && app_scan && !enq_hit) begin
            `DRAM_AT(enq_e[5:0])
            if (!blk_b[e_b] && `DRAM_ROW_OK) begin
                row_found = 1'b1;
                row_i = n_old[5:0];
            end
        end
`else
        e_hit = 1'b0;
        for (i = 0; i < 64; i = i + 1) begin
            if (i < {25'd0, n_scan}) begin
                e_b = v_bank[6*i +: 6];
                e_hit = v_hits[i];
                if (!blk_b[e_b]) begin
                    if (e_hit) begin
                        if (!hit_found && (wm ? ok_col_w[e_b] : ok_col_r[e_b])) begin
                            hit_found = 1'b1;
                            hit_i = i[5:0];
                        end
                    end else if (!row_found && (closed_b[e_b] ? ok_act[e_b]
                                                              : ((fcfs || !hitmask[e_b]) && bk_pre[e_b]))) begin
                        row_found = 1'b1;
                        row_i = i[5:0];
                    end
                end
            end
        end
`endif
    end

    // ---- the command ----
    // (the issued entry's bank is one the scan looked at; the speed build reads its open row directly)
`ifdef CXL_SIM_ROLLED_LOOPS
`define DRAM_SE_CLOSED (open_row[se[5:0]] == CLOSED)
`else
`define DRAM_SE_CLOSED (closed_b[se[5:0]])
`endif
    reg do_col;
    reg [5:0] si;
    reg [EW-1:0] se;
    always @* begin
        rd_cand = en && !ref_fire && !wm && hit_found;
        do_col = en && !ref_fire && hit_found && (wm || col_grant);
        iss_valid = 1'b0;
        iss_cmd = C_ACT;
        iss_rank = 2'd0;
        iss_bg = 6'd0;
        iss_bank = 6'd0;
        iss_row = 32'd0;
        iss_auto_pre = 1'b0;
        iss_conflict = 1'b0;
        si = do_col ? hit_i : row_i;
        se = wm ? `DRAM_APP({1'b0, si}, nw, enq_w, wq[si], enq_e) : `DRAM_APP({1'b0, si}, nr, enq_r, rq[si], enq_e);
        if (en && ref_fire) begin
            iss_valid = 1'b1;
            iss_rank = ref_rank;
            if (ref_is_pre) begin
                iss_cmd = C_PRE;
                iss_bg = (ref_j >> bank_bits) & ~(6'h3f << bg_bits);
                iss_bank = ref_j & kmask;
            end else begin
                iss_cmd = sb ? C_REFSB : C_REF;
                iss_bank = sb ? ref_bank[ref_rank] : 6'd0;
            end
        end else if (do_col) begin
            iss_valid = 1'b1;
            iss_cmd = wm ? C_WR : C_RD;
            iss_rank = se[19:18];
            iss_bg = se[17:12];
            iss_bank = se[11:6];
            iss_row = se[51:20];
            iss_auto_pre = row_closed;
        end else if (en && row_found) begin
            iss_valid = 1'b1;
            iss_rank = se[19:18];
            iss_bg = se[17:12];
            iss_bank = se[11:6];
            if (`DRAM_SE_CLOSED) begin
                iss_cmd = C_ACT;
                iss_row = se[51:20];
            end else begin
                iss_cmd = C_PRE;
                iss_conflict = 1'b1;
            end
        end
        nr_next = nr_v - {6'd0, do_col && !wm};
        nw_next = nw_v - {6'd0, do_col && wm};
    end

    // ---- timing update (dram_timing.v) ----
    wire [5:0] ib = ({4'd0, iss_rank} << (bg_bits + bank_bits)) | (iss_bg << bank_bits) | iss_bank;
    wire [5:0] ig = ({4'd0, iss_rank} << bg_bits) | iss_bg;
    wire is_rd = iss_cmd == C_RD;
    wire [63:0] pre_at = is_rd ? now + {32'd0, tRTP} : now + {32'd0, tCWL} + {32'd0, tBL} + {32'd0, tWR};
    wire [63:0] pre_new = `DRAM_MAX64(b_pre[ib], pre_at);
    wire [31:0] wr_sum = tCWL + tBL + 32'd2;
    wire [63:0] wr_other_rd = {32'd0, wr_sum > tCL ? wr_sum - tCL : 32'd1};
    wire [2:0] fn = faw_n[iss_rank];
    wire [1:0] fh = faw_head[iss_rank];
    wire [63:0] faw_oldest = fn >= 3'd4 ? faw[{iss_rank, fh + 2'd1}] : faw[{iss_rank, fh}];
    wire faw_full = fn >= 3'd3;
    wire [63:0] rd_at = now + {32'd0, tCL} + {32'd0, tBL};
    wire [4:0] rd_tail = rd_head + rd_count[4:0];
    wire rem_r = do_col && !wm;
    wire rem_w = do_col && wm;

    // ---- the row-hit bits after this cycle: append, the issued ACT / PRE (or auto-precharge) on its
    // bank's entries in both queues, then the issued entry's removal (as the queues themselves) ----
    reg [63:0] rh_a, wh_a, lo_m, rq_hit_nx, wq_hit_nx;
    reg row_opens, row_closes;
    integer jj;
    always @* begin
        row_opens = iss_valid && iss_cmd == C_ACT;
        row_closes = iss_valid && (iss_cmd == C_PRE || ((iss_cmd == C_RD || iss_cmd == C_WR) && iss_auto_pre));
        rh_a = enq_r ? (rq_hit & ~(64'd1 << nr)) | ({63'd0, enq_hit} << nr) : rq_hit;
        wh_a = enq_w ? (wq_hit & ~(64'd1 << nw)) | ({63'd0, enq_hit} << nw) : wq_hit;
        if (row_opens || row_closes)
            `DRAM_UPTO(jj, (nr_v > nw_v ? nr_v : nw_v)) begin
                if (jj < {25'd0, nr_v} && ((enq_r && jj[6:0] == nr) ? enq_e[5:0] : rq[jj][5:0]) == ib)
                    rh_a[jj] = row_opens && ((enq_r && jj[6:0] == nr) ? enq_e[51:20] : rq[jj][51:20]) == iss_row;
                if (jj < {25'd0, nw_v} && ((enq_w && jj[6:0] == nw) ? enq_e[5:0] : wq[jj][5:0]) == ib)
                    wh_a[jj] = row_opens && ((enq_w && jj[6:0] == nw) ? enq_e[51:20] : wq[jj][51:20]) == iss_row;
            end
        lo_m = (64'd1 << hit_i) - 64'd1;
        rq_hit_nx = rem_r ? (rh_a & lo_m) | ((rh_a >> 1) & ~lo_m) : rh_a;
        wq_hit_nx = rem_w ? (wh_a & lo_m) | ((wh_a >> 1) & ~lo_m) : wh_a;
    end

    integer j;
    always @(posedge clk) begin
        if (!rst_n) begin
            for (j = 0; j < 4; j = j + 1) begin
                r_act[j] <= 64'd0;
                r_rd[j] <= 64'd0;
                r_wr[j] <= 64'd0;
                faw_n[j] <= 3'd0;
                faw_head[j] <= 2'd0;
                // staggered: unit k = ch * ranks + r of n = channels * ranks refreshes first at iv * (k + 1) / n
                ref_due[j] <= ref_iv == 32'd0 ? 64'hffffffffffffffff
                            : ({32'd0, ref_iv} * ({61'd0, ranks} * {62'd0, ch} + {32'd0, j} + 64'd1)) >> ref_shift;
                ref_bank[j] <= 6'd0;
            end
            for (j = 0; j < 16; j = j + 1)
                faw[j] <= 64'd0;
            write_mode <= 1'b0;
            rq_hit <= 64'd0;
            wq_hit <= 64'd0;
            nr <= 7'd0;
            nw <= 7'd0;
            rd_head <= 5'd0;
            rd_count <= 6'd0;
        end else if (ce) begin
            // queues: append, then remove the issued entry (shifting the younger ones up)
            // (DRAM_APP written out: entry j, or j + 1 when shifting; the enqueued entry at index n; 0 past 63)
            if (enq_r || rem_r)
                for (j = 0; j < 64; j = j + 1)
                    rq[j] <= (rem_r && j >= {26'd0, hit_i})
                             ? (j == 63 ? {EW{1'b0}} : (enq_r && j + 1 == {25'd0, nr}) ? enq_e : rq[(j + 1) % 64])
                             : ((enq_r && j == {25'd0, nr}) ? enq_e : rq[j]);
            if (enq_w || rem_w)
                for (j = 0; j < 64; j = j + 1)
                    wq[j] <= (rem_w && j >= {26'd0, hit_i})
                             ? (j == 63 ? {EW{1'b0}} : (enq_w && j + 1 == {25'd0, nw}) ? enq_e : wq[(j + 1) % 64])
                             : ((enq_w && j == {25'd0, nw}) ? enq_e : wq[j]);
            nr <= nr_next;
            nw <= nw_next;
            rq_hit <= rq_hit_nx;
            wq_hit <= wq_hit_nx;
            if (en && !ref_fire)
                write_mode <= wm;
            // read-data FIFO
            if (iss_valid && iss_cmd == C_RD) begin
                rd_msg[rd_tail] <= se[EW-1:52];
                rd_done[rd_tail] <= rd_at;
            end
            if (rd_pop)
                rd_head <= rd_head + 5'd1;
            rd_count <= rd_count - {5'd0, rd_pop} + {5'd0, iss_valid && iss_cmd == C_RD};
            // refresh deadlines
            if (iss_valid && (iss_cmd == C_REF || iss_cmd == C_REFSB)) begin
                ref_due[iss_rank] <= ref_due[iss_rank] + {32'd0, ref_iv};
                if (sb)
                    ref_bank[iss_rank] <= (ref_bank[iss_rank] + 6'd1) & kmask;
            end
            // timing: the new values are computed once (rk_*_nx, below)
            if (iss_valid && (iss_cmd == C_ACT || iss_cmd == C_REF))
                r_act[iss_rank] <= rk_act_nx;
            if (iss_valid && iss_cmd == C_ACT) begin
                if (fn < 3'd4) begin
                    faw[{iss_rank, fh + fn[1:0]}] <= now;
                    faw_n[iss_rank] <= fn + 3'd1;
                end else begin
                    faw[{iss_rank, fh}] <= now;
                    faw_head[iss_rank] <= fh + 2'd1;
                end
            end
            if (iss_valid && (iss_cmd == C_RD || iss_cmd == C_WR))
                for (j = 0; j < 4; j = j + 1)
                    if (j[1:0] == iss_rank || j < {29'd0, ranks}) begin
                        r_rd[j] <= rk_rd_nx[64*j +: 64];
                        r_wr[j] <= rk_wr_nx[64*j +: 64];
                    end
        end
    end

    // rank timing after a column command (rank j; the issuing rank, or another used rank) and after
    // an ACT / REF (the issuing rank)
    reg [255:0] rk_rd_nx, rk_wr_nx;
    reg [63:0]  rk_act_nx;
    integer jr;
    always @* begin
`ifdef CXL_SIM_ROLLED_LOOPS
        // (read only in a cycle that issues: the speed build computes them only then)
        rk_rd_nx = 256'd0;
        rk_wr_nx = 256'd0;
        rk_act_nx = 64'd0;
        if (iss_valid) begin
`endif
        for (jr = 0; jr < 4; jr = jr + 1)
            if (jr[1:0] == iss_rank) begin
                rk_rd_nx[64*jr +: 64] = `DRAM_MAX64(r_rd[jr], is_rd ? now + {32'd0, tCCD_S}
                                                               : now + {32'd0, tCWL} + {32'd0, tBL} + {32'd0, tWTR_S});
                rk_wr_nx[64*jr +: 64] = `DRAM_MAX64(r_wr[jr], is_rd ? now + {32'd0, tRTW} : now + {32'd0, tCCD_S_WR});
            end else begin
                rk_rd_nx[64*jr +: 64] = `DRAM_MAX64(r_rd[jr], is_rd ? now + {32'd0, tBL} + 64'd2 : now + wr_other_rd);
                rk_wr_nx[64*jr +: 64] = `DRAM_MAX64(r_wr[jr], is_rd ? now + {32'd0, tRTW} : now + {32'd0, tBL} + 64'd2);
            end
        rk_act_nx = iss_cmd == C_REF ? `DRAM_MAX64(r_act[iss_rank], now + {32'd0, tRFC})
                  : `DRAM_MAX64(`DRAM_MAX64(r_act[iss_rank], now + {32'd0, tRRD_S}), faw_full ? faw_oldest + {32'd0, tFAW} : 64'd0);
`ifdef CXL_SIM_ROLLED_LOOPS
        end
`endif
    end

    // the bank and bank-group tables: bank b moves when the issued command addresses it (or, for a
    // refresh, its rank / its same-bank set), group g when the command's bank is in it. The new values
    // of the addressed bank and group are computed once (ib_*, ig_*); a refresh raises each bank of
    // its rank (same-bank set) to at least ref_at.
    wire [63:0] ib_act = b_act[ib];
    wire [63:0] ib_pre = b_pre[ib];
    wire [63:0] ib_col = b_col[ib];
    wire [63:0] ig_act = g_act[ig];
    wire [63:0] ig_rd = g_rd[ig];
    wire [63:0] ig_wr = g_wr[ig];
    wire [63:0] act_at = iss_cmd == C_ACT ? now + {32'd0, tRC} : iss_cmd == C_PRE ? now + {32'd0, tRP}
                                          : pre_new + {32'd0, tRP};
    wire [63:0] ib_act_nx = `DRAM_MAX64(ib_act, act_at);
    wire [63:0] ib_pre_nx = iss_cmd == C_ACT ? `DRAM_MAX64(ib_pre, now + {32'd0, tRAS}) : pre_new;
    wire [63:0] ib_col_nx = `DRAM_MAX64(ib_col, now + {32'd0, tRCD});
    wire [63:0] ig_act_nx = `DRAM_MAX64(ig_act, now + {32'd0, tRRD_L});
    wire [63:0] ig_rd_nx = `DRAM_MAX64(ig_rd, is_rd ? now + {32'd0, tCCD_L} : now + {32'd0, tCWL} + {32'd0, tBL} + {32'd0, tWTR_L});
    wire [63:0] ig_wr_nx = `DRAM_MAX64(ig_wr, is_rd ? now + {32'd0, tRTW} : now + {32'd0, tCCD_L_WR});
    wire [63:0] ref_at = now + {32'd0, iss_cmd == C_REF ? tRFC : tRFCsb};
    wire        is_ref = iss_cmd == C_REF || iss_cmd == C_REFSB;
    wire        bank_moves = iss_cmd == C_ACT || iss_cmd == C_PRE || ((iss_cmd == C_RD || iss_cmd == C_WR) && iss_auto_pre);
    integer jt;
    always @(posedge clk) begin
        if (!rst_n) begin
            for (jt = 0; jt < 64; jt = jt + 1) begin
                open_row[jt] <= CLOSED;
                b_act[jt] <= 64'd0;
                b_pre[jt] <= 64'd0;
                b_col[jt] <= 64'd0;
                g_act[jt] <= 64'd0;
                g_rd[jt] <= 64'd0;
                g_wr[jt] <= 64'd0;
            end
        end else if (ce && iss_valid) begin
            if (bank_moves) begin
                open_row[ib] <= iss_cmd == C_ACT ? iss_row : CLOSED;
                b_act[ib] <= ib_act_nx;
            end
            if (iss_cmd == C_ACT || iss_cmd == C_RD || iss_cmd == C_WR)
                b_pre[ib] <= ib_pre_nx;
            if (iss_cmd == C_ACT) begin
                b_col[ib] <= ib_col_nx;
                g_act[ig] <= ig_act_nx;
            end
            if (iss_cmd == C_RD || iss_cmd == C_WR) begin
                g_rd[ig] <= ig_rd_nx;
                g_wr[ig] <= ig_wr_nx;
            end
            if (is_ref)
                for (jt = 0; jt < 64; jt = jt + 1)
                    if ((jt[5:0] >> rsh) == {4'd0, iss_rank} &&
                        (iss_cmd == C_REF || (jt[5:0] & kmask) == iss_bank) && b_act[jt] < ref_at)
                        b_act[jt] <= ref_at;
        end
    end
endmodule
/* verilator lint_on DECLFILENAME */
`undef DRAM_MAX64
`undef DRAM_APP
`undef DRAM_UPTO
`undef DRAM_SE_CLOSED
`ifdef CXL_SIM_ROLLED_LOOPS
`undef DRAM_COL_OK
`undef DRAM_ROW_OK
`undef DRAM_AT
`endif

`default_nettype wire

// link.v - one direction of a CXL link in 68 B flit mode: flit packing, credits, rational wire time,
// PHY latency (cxl_link_dir, hw/hls/link.h/.c; docs/cxl-model.md sections 2.3 and 4.5; CXL 3.x 4.2).
//
// One model cycle is zero or more build clocks (`bld`, while `need` is high: the flit build below, one
// step per clock) and then one clock with `ce`, which performs, in the C's order:
//   1. credit_tick(now) (credit.v), and this cycle's credit returns before the transmit when
//      cr_ret_first (the caller's credit_return calls of steps 3/6/8 that precede its link_tx);
//   2. link_rx(now): rx_n / rx_msg, from the state at the start of the cycle (model_cycle calls every
//      link_rx before any link_tx, so a flit never arrives in the cycle it starts);
//   3. link_tx(now, src[0..nsrc-1]): acc += inc, clamp, wire test, flight-full test, all-data flit or
//      header flit (fast path, slot 0, slots 1-3, stall counts), exactly as tx_free/fill_slot;
//   4. the credit returns after the transmit when !cr_ret_first.
//
// Multiple messages per cycle: NOT serialized. A flit delivers up to CXL_FLIT_MAXDONE (8) messages in
// one model cycle; they come out together on rx_msg (message i at [W*i +: W], i < rx_n, in the C's
// done[] order). Likewise one flit may pop several messages from one source: the caller presents the
// first K entries of every source pipe (src_rdy[K*s+j]: entry j exists and its ready cycle <= now, i.e.
// what pipe_ready would say once j entries are popped; src_msg[W*(K*s+j) +: W]) and pops src_pop_n[s]
// entries after the cycle. K must be >= the most headers one flit can take (M2S 2 Req + 1 RwD = 3,
// S2M 3 DRS + 2 NDR = 5); a source whose entry K would be needed looks empty from there on.
//
// Statistics of the cycle (cxl_link_stats increments): tx_flit (flits[dir]), tx_data_flit
// (data_flits[dir]), tx_used (slots_used[dir]), tx_msgs[8k +: 8] (msgs[k]), tx_stall[k]
// (credit_stall[k]). Message classes must be 0..3 (the C indexes flit_max by class).
//
// Runtime (sampled at reset = link_init): dir, flit_cost, flit_inc, ser_cycles, phy_cycles, pool[k],
// credit_return_cycles, nsrc (1..NSRC; the caller's source count, e.g. requesters of a host port).
// Rebuild: NSRC, K, W; the flight ring (CXL_MAX_FLIGHT = 64) and owed ring (CXL_OWED_MAX = 8).
// acc is the C int64_t; flit_cost/flit_inc are used as signed 64-bit like the C's casts.
// The data message completed by a flit is always the owed head at the start of that flit (at most 4
// chunks go per flit, and a header placed in this flit still owes 4), so it is read from the ring.
// The owed-ring-full test (owed_count == 8 blocks RwD/DRS) is kept as in the C although the all-data
// rule keeps owed_count far below 8; the unit test cannot reach it.
`default_nettype none
`include "cxl_defs.vh"

module link #(
    parameter integer NSRC = 4,             // most sources the caller may connect
    parameter integer K    = 5,             // lookahead entries per source
    parameter integer W    = `CXL_MSG_W
) (
    input  wire                  clk,
    input  wire                  bclk,      // the flit-build registers' clock: clk, or clk gated to the build
                                            // clocks and the ce clocks (a simulator build, cxl_model.v)
    input  wire                  rst_n,     // synchronous, active low: link_init
    input  wire                  ce,        // the cycle's last clock: state advances only on edges with ce (reset regardless)
    input  wire                  bld,       // a build clock (ce low): the flit build advances one step
    output wire                  need,      // the flit of this cycle needs another build clock
    input  wire [63:0]           now,
    // link_init (sampled at reset)
    input  wire                  dir,       // 0 M2S, 1 S2M
    input  wire [63:0]           flit_cost,
    input  wire [63:0]           flit_inc,
    input  wire [31:0]           ser_cycles,
    input  wire [31:0]           phy_cycles,
    input  wire [127:0]          pool,      // class k at [32k +: 32]
    input  wire [31:0]           credit_return_cycles,
    input  wire [7:0]            nsrc,
    // credit returns of this cycle (credit_return calls, class k count at [8k +: 8])
    input  wire                  cr_ret_first,
    input  wire [31:0]           cr_ret_n,
    // sources
    input  wire [NSRC*K-1:0]     src_rdy,
    input  wire [NSRC*K*W-1:0]   src_msg,
    output reg  [NSRC*3-1:0]     src_pop_n,
    // transmit (link_tx) of this cycle
    output reg                   tx_flit,
    output reg                   tx_data_flit,
    output reg  [2:0]            tx_used,
    output reg  [31:0]           tx_msgs,
    output reg  [3:0]            tx_stall,
    // receive (link_rx) of this cycle
    output wire [3:0]            rx_n,
    output wire [8*W-1:0]        rx_msg,
    // state
    output wire [127:0]          cr_avail,  // credits as link_tx sees them (after tick, early returns)
    output wire [127:0]          cr_pending,
    output wire [63:0]           acc,       // start of the cycle
    output wire                  idle,      // link_idle
    output wire [6:0]            fl_count,
    output wire [3:0]            owed_count,
    output wire [5:0]            owed_chunks,
    output wire [7:0]            rr
);
    localparam integer MAXF = 64;   // CXL_MAX_FLIGHT
    localparam integer OWED = 8;    // CXL_OWED_MAX
    localparam [7:0]   K8   = K[7:0];

    // ---- state
    reg               dir_q;
    reg signed [63:0] acc_q, cost_q, inc_q;
    reg [63:0]        lat_q;
    reg [7:0]         nsrc_q, rr_q;
    reg [W-1:0]       owed_mem [0:OWED-1];
    reg [2:0]         owed_head_q;
    reg [3:0]         owed_count_q;
    reg [2:0]         owed_left_q;
    reg [5:0]         owed_chunks_q;
    reg [63:0]        fl_arrive [0:MAXF-1];
    reg [3:0]         fl_n [0:MAXF-1];
    reg [8*W-1:0]     fl_msg [0:MAXF-1];
    reg [5:0]         fl_head_q;
    reg [6:0]         fl_count_q;

    // ---- credits
    reg  [31:0] take_n;
    /* verilator lint_off UNUSEDSIGNAL */  // avail carries the same information
    wire [3:0]  cr_have;
    /* verilator lint_on UNUSEDSIGNAL */
    credit #(.NCLASS(4), .RING(`CXL_CREDIT_RING), .NW(8)) u_cr (
        .clk(clk), .rst_n(rst_n), .ce(ce), .now(now), .pool(pool), .delay(credit_return_cycles),
        .ret_first(cr_ret_first), .take_n(take_n), .ret_n(cr_ret_n),
        .avail(cr_avail), .have(cr_have), .pending(cr_pending));

    // ---- receive
    wire rx_fire = (fl_count_q != 7'd0) && (fl_arrive[fl_head_q] <= now);
    assign rx_n   = rx_fire ? fl_n[fl_head_q] : 4'd0;
    assign rx_msg = fl_msg[fl_head_q];
    wire [6:0] fl_count_mid = fl_count_q - {6'd0, rx_fire};

    // ---- wire time (section 2.3 steps 1-2)
    wire signed [63:0] acc_add = acc_q + inc_q;
    wire signed [63:0] acc_t   = (acc_add > inc_q) ? inc_q : acc_add;
    wire               wire_free = (acc_t > 64'sd0) && (fl_count_mid < MAXF[6:0]);

    // Slot formats as {NDR, DRS, RwD, Req} counts, 4 bits each (link.c SLOT_FMT). The classes a slot
    // holding cnt may take one more of: some format f holds cnt and has f_c > cnt_c (fmt_addable).
    function [3:0] fmt_room(input [15:0] f, input [15:0] cnt);
        integer k;
        reg     holds;
        begin
            holds = 1'b1;
            fmt_room = 4'd0;
            for (k = 0; k < 4; k = k + 1)
                if (f[4*k +: 4] < cnt[4*k +: 4])
                    holds = 1'b0;
            if (holds)
                for (k = 0; k < 4; k = k + 1)
                    fmt_room[k] = f[4*k +: 4] > cnt[4*k +: 4];
        end
    endfunction
    function [3:0] addable(input s2m, input hdr, input [15:0] cnt);
        begin
            if (!s2m && hdr)       // H4: 1 RwD; H5: 1 Req
                addable = fmt_room(16'h0010, cnt) | fmt_room(16'h0001, cnt);
            else if (!s2m)         // G4: 1 Req; G5: 1 RwD
                addable = fmt_room(16'h0001, cnt) | fmt_room(16'h0010, cnt);
            else if (hdr)          // H0: 1 NDR; H3: 1 DRS + 1 NDR; H4: 2 NDR; H5: 2 DRS
                addable = fmt_room(16'h1000, cnt) | fmt_room(16'h1100, cnt) |
                          fmt_room(16'h2000, cnt) | fmt_room(16'h0200, cnt);
            else                   // G4: 1 DRS + 2 NDR; G5: 2 NDR; G6: 3 DRS
                addable = fmt_room(16'h2100, cnt) | fmt_room(16'h2000, cnt) | fmt_room(16'h0300, cnt);
        end
    endfunction
    // per-flit maxima (spec 4.2.4): 2 Req, 1 RwD, 3 DRS, 2 NDR
    function integer flit_max(input integer c);
        flit_max = (c == 0) ? 2 : (c == 1) ? 1 : (c == 2) ? 3 : 2;
    endfunction

    // ---- transmit: the flit build (tx_free / fill_slot / send_chunk) as hardware, over build clocks.
    // fill_slot's scan "from pos, every source once, the first whose next entry is of an allowed class
    // with a credit" is a rotating priority arbiter over per-source bit vectors: cr (the source's next
    // entry exists and is ready) and isc (its class, one vector per class). A slot takes up to 3 rounds;
    // each round picks one source; only the picked source's next entry changes (popc + 1). The scan's
    // side effect, a credit stall of class c for every source scanned before the pick (or all, when
    // nothing is picked) whose entry is of an allowed class c without a credit, is the same mask
    // arithmetic. The scan position pos is always rr (fill_slot starts at rr % nsrc, and rr < nsrc
    // because it is only ever set to the source after a picked one, wrapping at nsrc; 0 at reset).
    //
    // Build clocks. The C's flit is up to 12 dependent rounds (4 slots x 3); done in one clock they were
    // the longest path of the whole design (docs/rtl-synthesis.md). Here the flit is built one step per
    // clock, the flit's working state (which entries each source has given, credits, headers per class,
    // owed data, the done list) in registers between the steps:
    //   - start (combinational, from the state at the start of the cycle and this cycle's inputs): no
    //     wire time -> nothing; four or more chunks owed -> the all-data flit (four send_chunk calls, in
    //     closed form); nothing ready of a class holding a credit and nothing owed -> the fast path's
    //     stalls; else the build starts at slot 0, round 0;
    //   - the cycle's first build clock loads the start values into the registers, and each later one
    //     (`bld`) takes one step, from the registers alone: half a fill_slot round (a round is two
    //     steps: the pick of a source and the scan's stalls, registered; then the pick's placement in the
    //     slot and the slot's end), or the run of send_chunk calls that fills the slots from the current one (at most one data message completes in four chunks, so a
    //     run is closed form too). A slot ends when its round picks nothing, after its third round, or when
    //     the slot's format has room for nothing more (then a further round would be a no-op: no pick, no
    //     stall); the flit ends after slot 3, or as soon as nothing is owed and no source's next entry is of
    //     a class the flit still has room for (every further round would be a no-op);
    //   - `need` is high while the flit needs another step; the caller clocks `bld` (with ce low) until it
    //     is low, then the model cycle's clock (ce) commits the flit from the registers and clears them.
    // The inputs (src_*, cr_ret_*, now) must stay the same across a cycle's build clocks and its ce clock;
    // the outputs tx_*, src_pop_n are this cycle's only when `need` is low. A cycle needs 0 build clocks
    // when the link sends nothing, an all-data flit or stalls at once; otherwise the load and 1 to 24 steps.
    // (A round in one step was the longest path of the link, 26.5 LUT levels with 16 sources; in two, 17,
    // now the credit release into the fast path's test: docs/rtl-synthesis.md.)
    reg  [NSRC-1:0]   nsrc_mask;            // sources < nsrc
    reg  [NSRC-1:0]   cr;                   // source's next entry exists (popc < K) and is ready
    reg  [4*NSRC-1:0] isc;                  // [NSRC*c +: NSRC]: source's next entry is of class c
    reg  [3*NSRC-1:0] popc;                 // entries taken from each source so far in this flit
    reg  [NSRC-1:0]   elig, take, him, tk, ch_oh, passed;
    reg  [7:0]        rr_l;
    reg  [7:0]        chs;                  // picked source
    reg  [7:0]        idx;                  // its entry, K*chs + j
    reg  [2:0]        jn, sl, n;
    reg  [1:0]        c, ncl, p;
    reg  [1:0]        placed, app_n;
    reg  [2:0]        oh, ol, used;
    reg  [3:0]        on, nd;
    reg  [5:0]        oc;
    reg  [7:0]        av;                   // held credits of class k at [2k +: 2], capped at 3
    reg  [11:0]       cnt;                  // headers of class k in this flit at [3k +: 3]
    reg  [3:0]        full, stalled, allow, rdy_cls, crd_cls, room;
    reg  [15:0]       slot_cnt;
    reg               found, dflit, need_c;
    // the working set's values that the cycle's last clock commits (before any step)
    reg  [2:0]        c_oh, c_ol;
    reg  [3:0]        c_on, c_nd;
    reg  [5:0]        c_oc;
    reg  [7:0]        c_rr;
    reg  [1:0]        c_app_n;
    reg  [8:0]        c_app_idx;
    // The flit's done list and owed-ring appends are recorded as which entry fills each position (8-bit
    // source-entry index K*s + j, or the owed head for a completed data message) and read out once after
    // the build: one NSRC*K-way select per position, instead of a message-wide write at a running
    // position in every round.
    reg  [7:0]        done_owed;            // position q completes the owed head
    reg  [63:0]       done_idx;             // else source entry [8q +: 8]
    reg  [23:0]       app_src;              // data message a comes from source entry [8a +: 8]
    reg  [8*W-1:0]    done_v;
    reg  [3*W-1:0]    app_msg;              // data messages appended to the owed ring, in order
    reg  [8:0]        app_idx;              // their owed-ring slots, [3a +: 3]
    wire [W-1:0]      owed_head_msg = owed_mem[owed_head_q];
    integer           k, q, cc;

    // the working set between build clocks
    reg               b_act;                // the registers below hold this cycle's flit so far
    reg  [2:0]        b_sl;                 // current slot, 4: the flit is done
    reg  [1:0]        b_p;                  // round within the slot
    reg  [3*NSRC-1:0] b_popc;
    reg  [NSRC-1:0]   b_cr;
    reg  [4*NSRC-1:0] b_isc;
    reg  [7:0]        b_av, b_rr;
    reg  [11:0]       b_cnt;
    reg  [3:0]        b_full, b_stalled;
    reg  [15:0]       b_slot_cnt;
    reg  [1:0]        b_placed, b_app_n;
    reg  [2:0]        b_oh, b_ol, b_used;
    reg  [3:0]        b_on, b_nd;
    reg  [5:0]        b_oc;
    reg  [7:0]        b_done_owed;
    reg  [63:0]       b_done_idx;
    reg  [23:0]       b_app_src;
    reg  [8:0]        b_app_idx;
    reg               b_dflit;
    reg               b_ph;                 // the next step places the registered pick (b_a_*)
    reg               b_a_found;
    reg  [NSRC-1:0]   b_a_oh;
    reg  [1:0]        b_a_c;
    reg  [7:0]        b_a_chs, b_a_idx;
    reg  [2:0]        b_a_jn;

    // the registers' next values: a step from the registers, or the start values (the cycle's first build clock)
    reg  [2:0]        n_sl;
    reg  [1:0]        n_p;
    reg  [3*NSRC-1:0] n_popc;
    reg  [NSRC-1:0]   n_cr;
    reg  [4*NSRC-1:0] n_isc;
    reg  [7:0]        n_av;
    reg  [7:0]        n_rr;
    reg  [11:0]       n_cnt;
    reg  [3:0]        n_full;
    reg  [3:0]        n_stalled;
    reg  [15:0]       n_slot_cnt;
    reg  [1:0]        n_placed;
    reg  [1:0]        n_app_n;
    reg  [2:0]        n_oh;
    reg  [2:0]        n_ol;
    reg  [2:0]        n_used;
    reg  [3:0]        n_on;
    reg  [3:0]        n_nd;
    reg  [5:0]        n_oc;
    reg  [7:0]        n_done_owed;
    reg  [63:0]       n_done_idx;
    reg  [23:0]       n_app_src;
    reg  [8:0]        n_app_idx;
    reg               n_dflit;
    reg               n_ph;

    // Entry e (K*s + j) of the source bus: an NSRC*K-way AND-OR select (W*e is not known to synthesis to
    // be a multiple of W: an indexed part select becomes a barrel shifter over the whole bus).
    function [W-1:0] entry(input [NSRC*K*W-1:0] v, input [7:0] e);
        integer ei;
        begin
            entry = {W{1'b0}};
            for (ei = 0; ei < NSRC*K; ei = ei + 1)
                entry = entry | (v[W*ei +: W] & {W{e == ei[7:0]}});
        end
    endfunction

    // m send_chunk calls (1..4, at most oc): the owed head has ol chunks left, so at most one message
    // completes (ol >= 1, m <= 4 and the next message has 4)
    task chunks(input [2:0] m);
        begin
            if (m >= ol) begin
                for (q = 0; q < 8; q = q + 1)
                    if (nd == q[3:0])
                        done_owed[q] = 1'b1;
                nd = nd + 4'd1;
                oh = oh + 3'd1;
                on = on - 4'd1;
                ol = (on != 4'd0) ? 3'd4 - (m - ol) : 3'd0;
            end else begin
                ol = ol - m;
            end
            oc = oc - {3'd0, m};
        end
    endtask

    // the classes a round of this slot may place
    task allowed(input hdr);
        begin
            allow = addable(dir_q, hdr, slot_cnt) & ~full;
            if (on >= OWED[3:0])
                allow = allow & 4'b1001;    // no room for RwD/DRS data
        end
    endtask

    // one fill_slot round, over two build clocks. The pick (hdr: slot 0): the scan's choice of a source
    // and its credit stalls, from the working set; registered (b_a_*) for the next clock.
    task pick(input hdr);
        begin
            allowed(hdr);
            elig = {NSRC{1'b0}};
            take = {NSRC{1'b0}};
            for (cc = 0; cc < 4; cc = cc + 1)
                if (allow[cc]) begin
                    elig = elig | isc[NSRC*cc +: NSRC];
                    if (av[2*cc +: 2] != 2'd0)
                        take = take | isc[NSRC*cc +: NSRC];
                end
            elig = elig & cr & nsrc_mask;
            take = take & elig;
            him = {NSRC{1'b1}} << rr_l;     // sources >= pos
            tk = ((take & him) != {NSRC{1'b0}}) ? (take & him) : take;
            ch_oh = tk & (~tk + {{(NSRC-1){1'b0}}, 1'b1});   // lowest set bit
            found = tk != {NSRC{1'b0}};
            // sources the scan passes before the pick: [pos, pick) or [pos, nsrc) + [0, pick)
            if (!found)
                passed = {NSRC{1'b1}};
            else if ((ch_oh & him) != {NSRC{1'b0}})
                passed = him & (ch_oh - {{(NSRC-1){1'b0}}, 1'b1});
            else
                passed = him | (ch_oh - {{(NSRC-1){1'b0}}, 1'b1});
            for (cc = 0; cc < 4; cc = cc + 1)
                if ((elig & ~take & passed & isc[NSRC*cc +: NSRC]) != {NSRC{1'b0}})
                    stalled[cc] = 1'b1;
            chs = 8'd0;
            jn = 3'd0;
            idx = 8'd0;
            for (k = 0; k < NSRC; k = k + 1)
                if (ch_oh[k]) begin
                    chs = k[7:0];
                    jn = popc[3*k +: 3];
                    idx = K8 * k[7:0] + {5'd0, popc[3*k +: 3]};   // constant K*k per source
                end
            // its class: the class plane of the picked source's bit
            c = {(ch_oh & (isc[NSRC*2 +: NSRC] | isc[NSRC*3 +: NSRC])) != {NSRC{1'b0}},
                 (ch_oh & (isc[NSRC*1 +: NSRC] | isc[NSRC*3 +: NSRC])) != {NSRC{1'b0}}};
        end
    endtask

    // ... and its placement (the next clock): the picked source's next entry goes into the slot
    // (found, ch_oh, chs, jn, idx, c: the registered pick)
    task apply;
        begin
            if (found) begin
                slot_cnt = slot_cnt + (16'd1 << {c, 2'b00});
                for (cc = 0; cc < 4; cc = cc + 1)
                    if (c == cc[1:0]) begin
                        av[2*cc +: 2] = av[2*cc +: 2] - 2'd1;
                        cnt[3*cc +: 3] = cnt[3*cc +: 3] + 3'd1;
                        if ({29'd0, cnt[3*cc +: 3]} + 1 > flit_max(cc))
                            full[cc] = 1'b1;
                    end
                if (c == 2'd1 || c == 2'd2) begin
                    for (q = 0; q < 3; q = q + 1)
                        if (app_n == q[1:0]) begin
                            app_src[8*q +: 8] = idx;
                            app_idx[3*q +: 3] = oh + on[2:0];
                        end
                    app_n = app_n + 2'd1;
                    if (on == 4'd0)
                        ol = 3'd4;
                    on = on + 4'd1;
                    oc = oc + 6'd4;
                end else begin
                    for (q = 0; q < 8; q = q + 1)
                        if (nd == q[3:0])
                            done_idx[8*q +: 8] = idx;
                    nd = nd + 4'd1;
                end
                // the picked source's next entry
                for (k = 0; k < NSRC; k = k + 1)
                    if (ch_oh[k]) begin
                        popc[3*k +: 3] = jn + 3'd1;
                        cr[k] = 1'b0;
                        ncl = 2'd0;
                        for (q = 0; q < K; q = q + 1)
                            if ({29'd0, jn} + 1 == q) begin
                                cr[k] = src_rdy[K*k + q];
                                ncl = src_msg[W*(K*k + q) + 88 +: 2];
                            end
                        for (cc = 0; cc < 4; cc = cc + 1)
                            isc[NSRC*cc + k] = ncl == cc[1:0];
                    end
                rr_l = ({24'd0, chs} + 1 == {24'd0, nsrc_q}) ? 8'd0 : chs + 8'd1;
                placed = placed + 2'd1;
            end
        end
    endtask

    // the end of a slot: it counts as used if something was placed
    task end_slot;
        begin
            if (placed != 2'd0)
                used = used + 3'd1;
            sl = sl + 3'd1;
            p = 2'd0;
            slot_cnt = 16'd0;
            placed = 2'd0;
        end
    endtask

    always @* begin
        // ---- the working set: the registers in a cycle's later build clocks, else the start values
        for (k = 0; k < NSRC; k = k + 1)
            nsrc_mask[k] = k < {24'd0, nsrc_q};
        for (k = 0; k < 4; k = k + 1) begin
            crd_cls[k] = cr_avail[32*k +: 32] != 32'd0;
            rdy_cls[k] = 1'b0;
        end
        elig = {NSRC{1'b0}};
        take = {NSRC{1'b0}};
        him = {NSRC{1'b0}};
        tk = {NSRC{1'b0}};
        ch_oh = {NSRC{1'b0}};
        passed = {NSRC{1'b0}};
        found = 1'b0;
        allow = 4'd0;
        room = 4'd0;
        c = 2'd0;
        ncl = 2'd0;
        chs = 8'd0;
        idx = 8'd0;
        jn = 3'd0;
        n = 3'd0;
        if (b_act) begin
            sl = b_sl;
            p = b_p;
            popc = b_popc;
            cr = b_cr;
            isc = b_isc;
            av = b_av;
            rr_l = b_rr;
            cnt = b_cnt;
            full = b_full;
            stalled = b_stalled;
            slot_cnt = b_slot_cnt;
            placed = b_placed;
            app_n = b_app_n;
            oh = b_oh;
            ol = b_ol;
            used = b_used;
            on = b_on;
            nd = b_nd;
            oc = b_oc;
            done_owed = b_done_owed;
            done_idx = b_done_idx;
            app_src = b_app_src;
            app_idx = b_app_idx;
            dflit = b_dflit;
        end else begin
            sl = 3'd4;
            p = 2'd0;
            popc = {(3*NSRC){1'b0}};
            for (k = 0; k < NSRC; k = k + 1) begin
                cr[k] = src_rdy[K*k];
                ncl = src_msg[W*K*k + 88 +: 2];
                for (cc = 0; cc < 4; cc = cc + 1)
                    isc[NSRC*cc + k] = ncl == cc[1:0];
            end
            for (k = 0; k < 4; k = k + 1)
                // only > 0 matters; at most 3 of a class go in one flit
                av[2*k +: 2] = (cr_avail[32*k +: 32] > 32'd3) ? 2'd3 : cr_avail[32*k +: 2];
            rr_l = rr_q;
            cnt = 12'd0;
            full = 4'd0;
            stalled = 4'd0;
            slot_cnt = 16'd0;
            placed = 2'd0;
            app_n = 2'd0;
            oh = owed_head_q;
            on = owed_count_q;
            ol = owed_left_q;
            oc = owed_chunks_q;
            used = 3'd0;
            nd = 4'd0;
            done_owed = 8'd0;
            done_idx = 64'd0;
            app_src = 24'd0;
            app_idx = 9'd0;
            dflit = 1'b0;
            if (wire_free) begin
                if (oc > 6'd3) begin
                    // all-data flit: four send_chunk
                    chunks(3'd4);
                    used = 3'd4;
                    dflit = 1'b1;
                end else begin
                    sl = 3'd0;
                    if (oc == 6'd0) begin
                        // fast path: no ready head of a class holding a credit -> stalls, no flit
                        for (cc = 0; cc < 4; cc = cc + 1)
                            rdy_cls[cc] = (isc[NSRC*cc +: NSRC] & cr & nsrc_mask) != {NSRC{1'b0}};
                        if ((rdy_cls & crd_cls) == 4'd0) begin
                            stalled = rdy_cls;
                            sl = 3'd4;
                        end
                    end
                end
            end
        end

        // ---- the cycle's flit, from the working set (valid when need_c is low)
        need_c = sl != 3'd4;
        tx_flit = used != 3'd0;
        tx_data_flit = dflit;
        tx_used = used;
        tx_stall = stalled;
        tx_msgs = 32'd0;
        take_n = 32'd0;
        src_pop_n = {(NSRC*3){1'b0}};
        done_v = {(8*W){1'b0}};
        app_msg = {(3*W){1'b0}};
        if (used != 3'd0) begin
            for (k = 0; k < 4; k = k + 1) begin
                tx_msgs[8*k +: 8] = {5'd0, cnt[3*k +: 3]};
                take_n[8*k +: 8] = {5'd0, cnt[3*k +: 3]};
            end
            src_pop_n = popc;
            // the lists, read out once
            for (q = 0; q < 8; q = q + 1)
                if (q < {28'd0, nd})
                    done_v[W*q +: W] = done_owed[q] ? owed_head_msg : entry(src_msg, done_idx[8*q +: 8]);
            for (q = 0; q < 3; q = q + 1)
                if (q < {30'd0, app_n})
                    app_msg[W*q +: W] = entry(src_msg, app_src[8*q +: 8]);
        end
        c_oh = oh;
        c_on = on;
        c_ol = ol;
        c_oc = oc;
        c_rr = rr_l;
        c_nd = nd;
        c_app_n = app_n;
        c_app_idx = app_idx;

        // ---- the registers' next values. The cycle's first build clock loads the working set (the start
        // values) into them; each later one takes one step, from the registers alone (so that no path runs
        // from the cycle's inputs through a step); nothing moves in the cycle's last clock.
        n_sl = sl;
        n_p = p;
        n_popc = popc;
        n_cr = cr;
        n_isc = isc;
        n_av = av;
        n_rr = rr_l;
        n_cnt = cnt;
        n_full = full;
        n_stalled = stalled;
        n_slot_cnt = slot_cnt;
        n_placed = placed;
        n_app_n = app_n;
        n_oh = oh;
        n_ol = ol;
        n_used = used;
        n_on = on;
        n_nd = nd;
        n_oc = oc;
        n_done_owed = done_owed;
        n_done_idx = done_idx;
        n_app_src = app_src;
        n_app_idx = app_idx;
        n_dflit = dflit;
        n_ph = 1'b0;
        if (b_act && b_sl != 3'd4) begin
            sl = b_sl;
            p = b_p;
            popc = b_popc;
            cr = b_cr;
            isc = b_isc;
            av = b_av;
            rr_l = b_rr;
            cnt = b_cnt;
            full = b_full;
            stalled = b_stalled;
            slot_cnt = b_slot_cnt;
            placed = b_placed;
            app_n = b_app_n;
            oh = b_oh;
            ol = b_ol;
            used = b_used;
            on = b_on;
            nd = b_nd;
            oc = b_oc;
            done_owed = b_done_owed;
            done_idx = b_done_idx;
            app_src = b_app_src;
            app_idx = b_app_idx;
            dflit = b_dflit;
            if (b_ph) begin
                // a round's second clock: place the registered pick, then end the slot or go on
                found = b_a_found;
                ch_oh = b_a_oh;
                c = b_a_c;
                chs = b_a_chs;
                jn = b_a_jn;
                idx = b_a_idx;
                apply;
                allowed(sl == 3'd0);    // what a further round of this slot could place
                if (!found || p == 2'd2 || allow == 4'd0)
                    end_slot;
                else
                    p = p + 2'd1;
            end else if (sl != 3'd0 && p == 2'd0 && oc != 6'd0) begin
                // a slot that starts with data owed: it and the next ones carry it, as far as it goes
                n = (oc < {3'd0, 3'd4 - sl}) ? oc[2:0] : 3'd4 - sl;
                chunks(n);
                used = used + n;
                sl = sl + n;
            end else begin
                // a round's first clock: the pick (and the scan's stalls)
                pick(sl == 3'd0);
                n_ph = 1'b1;
            end
            // nothing owed and no next entry of a class with room: every further round is a no-op (not
            // after a pick: it moves none of these, and the step before it found room)
            for (cc = 0; cc < 4; cc = cc + 1)
                room[cc] = !full[cc] && (isc[NSRC*cc +: NSRC] & cr & nsrc_mask) != {NSRC{1'b0}};
            if (!n_ph && sl != 3'd4 && oc == 6'd0 && room == 4'd0) begin
                if (placed != 2'd0)
                    used = used + 3'd1;
                sl = 3'd4;
            end
            n_sl = sl;
            n_p = p;
            n_popc = popc;
            n_cr = cr;
            n_isc = isc;
            n_av = av;
            n_rr = rr_l;
            n_cnt = cnt;
            n_full = full;
            n_stalled = stalled;
            n_slot_cnt = slot_cnt;
            n_placed = placed;
            n_app_n = app_n;
            n_oh = oh;
            n_ol = ol;
            n_used = used;
            n_on = on;
            n_nd = nd;
            n_oc = oc;
            n_done_owed = done_owed;
            n_done_idx = done_idx;
            n_app_src = app_src;
            n_app_idx = app_idx;
            n_dflit = dflit;
        end
    end
    assign need = need_c;

    // the working set after a build clock's step; cleared by the cycle's last clock
    always @(posedge bclk) begin
        if (!rst_n || ce) begin
            b_act <= 1'b0;
        end else if (bld) begin
            b_act <= 1'b1;
            b_sl <= n_sl;
            b_p <= n_p;
            b_popc <= n_popc;
            b_cr <= n_cr;
            b_isc <= n_isc;
            b_av <= n_av;
            b_rr <= n_rr;
            b_cnt <= n_cnt;
            b_full <= n_full;
            b_stalled <= n_stalled;
            b_slot_cnt <= n_slot_cnt;
            b_placed <= n_placed;
            b_app_n <= n_app_n;
            b_oh <= n_oh;
            b_ol <= n_ol;
            b_used <= n_used;
            b_on <= n_on;
            b_nd <= n_nd;
            b_oc <= n_oc;
            b_done_owed <= n_done_owed;
            b_done_idx <= n_done_idx;
            b_app_src <= n_app_src;
            b_app_idx <= n_app_idx;
            b_dflit <= n_dflit;
            b_ph <= n_ph;
            b_a_found <= found;
            b_a_oh <= ch_oh;
            b_a_c <= c;
            b_a_chs <= chs;
            b_a_jn <= jn;
            b_a_idx <= idx;
        end
    end

    // ---- state update
    wire [5:0] fl_tail = fl_head_q + fl_count_q[5:0];
    integer    a;
    always @(posedge clk) begin
        if (!rst_n) begin
            dir_q         <= dir;
            cost_q        <= flit_cost;
            inc_q         <= flit_inc;
            acc_q         <= flit_inc;  // an idle link may start a flit at once
            lat_q         <= {32'd0, ser_cycles} + {32'd0, phy_cycles};
            nsrc_q        <= nsrc;
            rr_q          <= 8'd0;
            owed_head_q   <= 3'd0;
            owed_count_q  <= 4'd0;
            owed_left_q   <= 3'd0;
            owed_chunks_q <= 6'd0;
            fl_head_q     <= 6'd0;
            fl_count_q    <= 7'd0;
        end else if (ce) begin
            acc_q <= tx_flit ? acc_t - cost_q : acc_t;
            if (tx_flit) begin
                fl_arrive[fl_tail] <= now + lat_q;
                fl_n[fl_tail]      <= c_nd;
                fl_msg[fl_tail]    <= done_v;
                for (a = 0; a < 3; a = a + 1)
                    if (a < {30'd0, c_app_n})
                        owed_mem[c_app_idx[3*a +: 3]] <= app_msg[W*a +: W];
                owed_head_q   <= c_oh;
                owed_count_q  <= c_on;
                owed_left_q   <= c_ol;
                owed_chunks_q <= c_oc;
                rr_q          <= c_rr;
            end
            if (rx_fire)
                fl_head_q <= fl_head_q + 6'd1;
            fl_count_q <= fl_count_mid + {6'd0, tx_flit};
        end
    end

    assign acc         = acc_q;
    assign idle        = (owed_count_q == 4'd0) && (fl_count_q == 7'd0);
    assign fl_count    = fl_count_q;
    assign owed_count  = owed_count_q;
    assign owed_chunks = owed_chunks_q;
    assign rr          = rr_q;
endmodule

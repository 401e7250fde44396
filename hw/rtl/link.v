// link.v - one direction of a CXL link in 68 B flit mode: flit packing, credits, rational wire time,
// PHY latency (cxl_link_dir, hw/hls/link.h/.c; docs/cxl-model.md sections 2.3 and 4.5; CXL 3.x 4.2).
//
// One clock edge is one model cycle and performs, in the C's order:
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
    input  wire                  rst_n,     // synchronous, active low: link_init
    input  wire                  ce,        // clock enable: state advances only on edges with ce (reset regardless)
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

    // ---- transmit: the flit build, as tx_free / fill_slot / send_chunk, unrolled
    integer        sl, p, sc, s, j, c, pos, placed, used, nd, k;
    integer        oh, on, ol, oc;         // owed head, count, left, chunks (working copies)
    integer        cnt [0:3];
    integer        av [0:3];
    integer        popc [0:NSRC-1];
    reg [3:0]      full, stalled, allow, rdy_cls, crd_cls;
    reg [15:0]     slot_cnt;
    reg            go, found, hdr, build;
    reg [W-1:0]    m;
    reg [8*W-1:0]  done_v;
    reg [W-1:0]    app_msg [0:2];
    reg [2:0]      app_idx [0:2];
    reg [1:0]      app_n;
    integer        rr_l;

    always @* begin
        tx_flit = 1'b0;
        tx_data_flit = 1'b0;
        tx_used = 3'd0;
        tx_msgs = 32'd0;
        tx_stall = 4'd0;
        take_n = 32'd0;
        src_pop_n = {(NSRC*3){1'b0}};
        done_v = {(8*W){1'b0}};
        nd = 0;
        app_n = 2'd0;
        for (k = 0; k < 3; k = k + 1) begin
            app_msg[k] = {W{1'b0}};
            app_idx[k] = 3'd0;
        end
        oh = {29'd0, owed_head_q};
        on = {28'd0, owed_count_q};
        ol = {29'd0, owed_left_q};
        oc = {26'd0, owed_chunks_q};
        rr_l = {24'd0, rr_q};
        used = 0;
        full = 4'd0;
        stalled = 4'd0;
        rdy_cls = 4'd0;
        crd_cls = 4'd0;
        slot_cnt = 16'd0;
        go = 1'b0;
        found = 1'b0;
        hdr = 1'b0;
        build = 1'b0;
        allow = 4'd0;
        m = {W{1'b0}};
        placed = 0;
        pos = 0;
        s = 0;
        j = 0;
        c = 0;
        for (k = 0; k < 4; k = k + 1) begin
            cnt[k] = 0;
            // held credits, capped at 3 (the most one flit takes of a class): only > 0 matters
            if (cr_avail[32*k +: 32] > 32'd3)
                av[k] = 3;
            else
                av[k] = {30'd0, cr_avail[32*k +: 2]};
            crd_cls[k] = cr_avail[32*k +: 32] != 32'd0;
        end
        for (k = 0; k < NSRC; k = k + 1)
            popc[k] = 0;

        if (wire_free) begin
            if (oc > 3) begin
                // all-data flit: four send_chunk
                for (sl = 0; sl < 4; sl = sl + 1) begin
                    ol = ol - 1;
                    oc = oc - 1;
                    if (ol == 0) begin
                        done_v[W*nd +: W] = owed_mem[oh[2:0]];
                        nd = nd + 1;
                        oh = (oh + 1) % OWED;
                        on = on - 1;
                        ol = (on != 0) ? 4 : 0;
                    end
                end
                used = 4;
                tx_data_flit = 1'b1;
            end else begin
                build = 1'b1;
                if (oc == 0) begin
                    // fast path: no ready head of a class holding a credit -> stalls, no flit
                    for (k = 0; k < NSRC; k = k + 1)
                        if (k < nsrc_q && src_rdy[K*k])
                            rdy_cls[src_msg[W*K*k + 88 +: 2]] = 1'b1;
                    if ((rdy_cls & crd_cls) == 4'd0) begin
                        tx_stall = rdy_cls;
                        build = 1'b0;
                    end
                end
                if (build) begin
                    for (sl = 0; sl < 4; sl = sl + 1) begin
                        hdr = (sl == 0);
                        if (!hdr && oc != 0) begin
                            // send_chunk
                            ol = ol - 1;
                            oc = oc - 1;
                            if (ol == 0) begin
                                done_v[W*nd +: W] = owed_mem[oh[2:0]];
                                nd = nd + 1;
                                oh = (oh + 1) % OWED;
                                on = on - 1;
                                ol = (on != 0) ? 4 : 0;
                            end
                            used = used + 1;
                        end else begin
                            // fill_slot: up to 3 rounds, each scans every source once from pos
                            slot_cnt = 16'd0;
                            placed = 0;
                            go = (nsrc_q != 8'd0);
                            pos = (nsrc_q != 8'd0) ? rr_l % {24'd0, nsrc_q} : 0;
                            for (p = 0; p < 3; p = p + 1) begin
                                if (go) begin
                                    allow = addable(dir_q, hdr, slot_cnt) & ~full;
                                    if (on >= OWED)
                                        allow = allow & 4'b1001;  // no room for RwD/DRS data
                                    found = 1'b0;
                                    for (sc = 0; sc < NSRC; sc = sc + 1) begin
                                        if (!found && sc < nsrc_q) begin
                                            s = pos;
                                            pos = (s + 1 == {24'd0, nsrc_q}) ? 0 : s + 1;
                                            j = popc[s];
                                            if (j < K && src_rdy[K*s + j]) begin
                                                m = src_msg[W*(K*s + j) +: W];
                                                c = {30'd0, m[89:88]};
                                                if (allow[c]) begin
                                                    if (av[c] == 0) begin
                                                        stalled[c] = 1'b1;
                                                    end else begin
                                                        av[c] = av[c] - 1;
                                                        slot_cnt = slot_cnt + (16'd1 << (4 * c));
                                                        cnt[c] = cnt[c] + 1;
                                                        if (cnt[c] + 1 > flit_max(c))
                                                            full[c] = 1'b1;
                                                        if (c == 1 || c == 2) begin
                                                            app_msg[app_n] = m;
                                                            app_idx[app_n] = oh[2:0] + on[2:0];
                                                            app_n = app_n + 2'd1;
                                                            if (on == 0)
                                                                ol = 4;
                                                            on = on + 1;
                                                            oc = oc + 4;
                                                        end else begin
                                                            done_v[W*nd +: W] = m;
                                                            nd = nd + 1;
                                                        end
                                                        popc[s] = popc[s] + 1;
                                                        rr_l = pos;
                                                        found = 1'b1;
                                                    end
                                                end
                                            end
                                        end
                                    end
                                    if (found)
                                        placed = placed + 1;
                                    else
                                        go = 1'b0;
                                end
                            end
                            if (placed != 0)
                                used = used + 1;
                        end
                    end
                    tx_stall = stalled;
                end
            end
            if (used != 0) begin
                tx_flit = 1'b1;
                tx_used = used[2:0];
                for (k = 0; k < 4; k = k + 1) begin
                    tx_msgs[8*k +: 8] = cnt[k][7:0];
                    take_n[8*k +: 8] = cnt[k][7:0];
                end
                for (k = 0; k < NSRC; k = k + 1)
                    src_pop_n[3*k +: 3] = popc[k][2:0];
            end
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
                fl_n[fl_tail]      <= nd[3:0];
                fl_msg[fl_tail]    <= done_v;
                for (a = 0; a < 3; a = a + 1)
                    if (a < {30'd0, app_n})
                        owed_mem[app_idx[a]] <= app_msg[a];
                owed_head_q   <= oh[2:0];
                owed_count_q  <= on[3:0];
                owed_left_q   <= ol[2:0];
                owed_chunks_q <= oc[5:0];
                rr_q          <= rr_l[7:0];
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

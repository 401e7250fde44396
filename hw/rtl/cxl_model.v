// cxl_model.v - the whole cycle-level CXL.mem model: requesters, host paths, links, an optional switch,
// device controllers, DRAM, the completion buffer and the statistics (cxl_model, hw/hls/cxl_model.{h,c};
// docs/cxl-model.md section 3 gives the order of one model cycle, which this module follows step by step).
//
// One model cycle takes one or more clocks:
//   - response clocks (0 or more): step 5 of the C, one response per clock. Each takes the first host
//     port h (in order 0..H-1) whose response path holds a ready head, pops it and hands it to its
//     requester (requester_complete): the completion (if any) enters the completion buffer, the latency
//     goes into the histogram, the byte counter grows. Only that requester and that pipe are enabled.
//     The responses ready at step 5 of cycle `now` are exactly the heads ready at the start of the cycle:
//     steps 1-4 push into the host response paths with ready >= now + host_rsp_cycles > now (the host
//     paths take at least one cycle; host/config/devcfg.c checks it), and nothing else before step 5 touches a
//     requester.
//   - skip clocks (0 or 3, after the response clocks; only in a cycle with none, quiet but perhaps for a
//     refresh due): the distance to the next event, registered for the idle skip and the period jump
//     (below); nothing else moves.
//   - build clocks (0 or more, after the response and skip clocks): a link's flit of this cycle is built one
//     step per clock (link.v), from the same inputs as the main clock's: nothing but the links' build
//     registers moves, so every unit's outputs, and therefore every link's sources and credit returns,
//     are the ones the main clock sees. They last while any used link says `need`; the links build in
//     parallel (at most 25 clocks: a load of the flit's start values, then two per fill_slot round). A cycle with a build clock is not quiet (a
//     link has something to send or owes data), so no idle skip or period jump is lost by taking it.
//   - schedule clocks (0, 2 or 3, beside the build clocks: a clock may be both): each device's DRAM takes
//     the decision of this cycle over the clocks s0 (the enqueue into registers; only when a device
//     enqueues), s1 (each channel's candidates, the response room), s2 (its pick and command), from the
//     same inputs as the main clock's
//     (dram.v, dram_chan.v); only the DRAM's decision registers move. They come when some used device's
//     DRAM has something to schedule (an enqueue, a queued request, a refresh due: sched_need); the
//     decision feeds no other unit's output of the cycle but the response room it leaves, which only
//     the main clock's devctrl update reads, so the build clocks' inputs stay what they were.
//   - the main clock: steps 1-4 and 6-10 (and the local path's moves), every unit enabled, the DRAM by
//     its registered decision, then now + 1.
// Between model cycles (at_boundary) the state equals the C model's after cxl_model_run's cycle.
//
// Idle skip (the C's quiet_until / idle_cycles, docs/cxl-model.md 2.4): a main clock (after the skip
// clocks that registered k) in which the model is quiet (nothing in flight anywhere, no requester able to issue, no refresh due) is cycle `now` and the
// k - 1 quiet cycles after it at once, k = min(the requesters' next issue, the next refresh deadline,
// `run_until`) - now: `now`, every unit's copy of it and the cycle count move by k, the DRAM's refresh
// deadlines by k (dram_chan.v). Nothing else changes in quiet cycles but what the skip needs settled
// first: a link's flit accumulator (taken only when it is already at its ceiling, acc >= 0, as one more
// cycle puts it there), its credit returns (taken when none is pending: credit.v releases one run per
// cycle, which needs `now` to pass every due cycle; the C releases every due return at once) and the
// DRAM's timing counters (taken only when all of them reach 0 within the k
// cycles: dram_chan.v's bound `rest`, then flushed).
//
// Period jump (the C's idle_jump): while quiet but for refreshes, the DRAM repeats itself. At the
// "canonical" model cycles (device 0's channel 0 has rank 0 due with its same-bank pointer at bank 0, the
// model quiet but for refreshes, every link settled, every timing counter 0) the model keeps a copy of
// every channel's refresh deadlines (dram_chan.v) and the REF count, then compares the later canonical
// cycles with it. The first that equals it (L = the cycles since, a multiple of 4 so that the DRAM's
// channel rotation by now[1:0] agrees) proves the state periodic with period L: the state at a canonical
// cycle is the deadlines, same-bank pointers, counters at 0, the tFAW windows and open banks that only
// refreshes and no other command kept, and a quiet model evolves from it alone. From then on, a canonical
// cycle whose state equals the copy is, in one clock that runs no unit, J = L x 2^s cycles later (now,
// the units' copies of it, the cycle count, and each device's REF count by 2^s periods' refreshes), J at
// most the cycles to the next requester issue or `run_until`; s grows by one after each jump and shrinks
// by one (in a clock that does nothing else) when J does not fit, so a wait of W cycles costs O(log W)
// clocks. A submission, a cycle that is not quiet but for refreshes, or any command but a refresh
// forgets the copy; so do 16 canonical cycles without a match (a copy taken before the state settled).
//
// Interface (the kernel top, cxl_kernel.v, drives it as cxl_kernel() drives cxl_model_*):
//   prm          cxl_params as 32-bit little-endian words (hw/rtl/cxl_layout.vh, CXL_P_*); sampled
//                during reset (cxl_model_init) by the units, and read live by this module, so it must
//                stay stable while the model runs.
//   sub_*        cxl_model_submit, one descriptor per clock, only at_boundary && !run. sub_ready: the
//                requester's queue has room (otherwise the C returns -1; the caller drops it).
//   run          sampled at_boundary: perform the next model cycle (with an idle skip, the next k).
//   run_until    the cycle the caller stops at (run is low once now >= run_until): a skip ends there.
//   comp_*       the completion buffer (CXL_COMPQ = 1024): count, oldest entry (cxl_completion as
//                little-endian bytes), pop (cxl_model_drain).
//   st_addr      cxl_stats as little-endian 64-bit words (CXL_S_*); st_data is registered (valid two
//                clocks after st_addr: a decode clock and a select clock) in clocks with st_rd high.
//   model_error  m->model_error (sticky; 1: an ingress queue refused a push, 2: a host response path
//                did, 3: the completion buffer overflowed: model bugs, see the C). When several occur in
//                one cycle the C keeps the last in its step order; this model keeps the last of its
//                clocks (response clocks come before the main clock). 4 (this model only): the
//                parameters ask for more host ports, devices or DRAM channels than this build has
//                (NH, ND, NCH), more banks per channel or DRAM queue entries (NB, NQ), or for a
//                switch in a build without one (SW = 0); set at reset,
//                nothing runs meaningfully after it.
//   idle         cxl_model_idle.
//   req_space    requester_space (free descriptor slots) of each requester, 8 bits each.
// Built sizes (rebuild to change): NREQ requesters, NH host ports, ND devices, NCH DRAM channels per
// device (<= CXL_MAX_*), whether the switch is built (SW), the pipe depths (CXL_MAX_FIFO) and the
// completion buffer. Everything else is a runtime parameter.
`default_nettype none
`include "cxl_defs.vh"
`include "cxl_layout.vh"

module cxl_model #(
    parameter integer NREQ = 16,   // CXL_MAX_REQ
    parameter integer NH   = 4,    // CXL_MAX_HOSTS
    parameter integer ND   = 4,    // CXL_MAX_DEVS
    parameter integer NCH  = 4,    // DRAM channels per device, CXL_MAX_CH
    parameter integer NB   = 64,   // banks per DRAM channel (ranks x bank groups x banks), CXL_MAX_BANKS
    parameter integer NQ   = 64,   // DRAM read and write queue entries per channel, CXL_MAX_DRAMQ
    parameter integer SW   = 1     // 1: the switch is built; 0: direct-attached configurations only
) (
    input  wire                         clk,
    input  wire                         rst_n,
    input  wire [32*`CXL_PRM_WORDS-1:0] prm,
    input  wire                         sub_valid,
    /* verilator lint_off UNUSEDSIGNAL */   // the pad bytes of cxl_desc
    input  wire [511:0]                 sub_desc,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire                         sub_ready,
    input  wire                         run,
    input  wire [63:0]                  run_until,    // run's bound (the kernel's): an idle skip ends there
    output wire                         at_boundary,
    output wire [63:0]                  now,
    output wire [31:0]                  comp_count,
    output wire [255:0]                 comp_head,
    input  wire                         comp_pop,
    input  wire [15:0]                  st_addr,
    input  wire                         st_rd,        // st_data is being read (its register must clock)
    output wire [63:0]                  st_data,
    output wire [31:0]                  model_error,
    output wire                         idle,
    output wire [8*NREQ-1:0]            req_space     // requester_space of each requester, 8 bits each
);
    localparam integer W  = `CXL_MSG_W;
    localparam integer K  = 5;      // lookahead of a link transmitter into each source
    localparam integer KM = 3;      // ... that an M2S flit can use (2 Req + 1 RwD: link.v)
    localparam integer NIN = 8;     // messages one link_rx delivers (CXL_FLIT_MAXDONE)
    localparam integer DIN = 16;    // ingress pushes a device takes per cycle (local path: one per requester)
    localparam integer COMPQ = 1024;
    localparam integer HLIN = 16384; // CXL_HIST_LINEAR
    localparam integer HLOG = 16;    // CXL_HIST_LOG

    // ---------------------------------------------------------------- parameters (cxl_params)
    function [31:0] pw(input integer i);
        pw = prm[32*i +: 32];
    endfunction
    wire [31:0] p_link_present = pw(`CXL_P_LINK_PRESENT);
    wire [31:0] p_hosts        = pw(`CXL_P_HOSTS);
    wire [31:0] p_devices      = pw(`CXL_P_DEVICES);
    wire [31:0] p_requesters   = pw(`CXL_P_REQUESTERS);
    // banks per DRAM channel (ranks x bank groups x banks), for the build check: each factor at most NB,
    // so the product of their low 7 bits is exact
    wire [31:0] p_rk = pw(`CXL_P_DRAM_RANKS), p_bg = pw(`CXL_P_DRAM_BANKGROUPS), p_bk = pw(`CXL_P_DRAM_BANKS);
    wire [20:0] p_nbank = {14'd0, p_rk[6:0]} * {14'd0, p_bg[6:0]} * {14'd0, p_bk[6:0]};
    wire        p_banks_over = p_rk > NB || p_bg > NB || p_bk > NB || {11'd0, p_nbank} > NB;
    wire [31:0] p_tags         = pw(`CXL_P_TAGS);
    wire [31:0] p_host_req     = pw(`CXL_P_HOST_REQ_CYCLES);
    wire [31:0] p_host_rsp     = pw(`CXL_P_HOST_RSP_CYCLES);
    wire [63:0] p_flit_cost    = {pw(`CXL_P_LINK_FLIT_COST + 1), pw(`CXL_P_LINK_FLIT_COST)};
    wire [63:0] p_flit_inc     = {pw(`CXL_P_LINK_FLIT_INC + 1), pw(`CXL_P_LINK_FLIT_INC)};
    wire [31:0] p_ser          = pw(`CXL_P_LINK_SER_CYCLES);
    wire [31:0] p_phy          = pw(`CXL_P_LINK_PHY_CYCLES);
    wire [31:0] p_crd          = pw(`CXL_P_LINK_CREDIT_RETURN_CYCLES);
    wire [31:0] p_m2s_req_cr   = pw(`CXL_P_LINK_M2S_REQ_CREDITS);
    wire [31:0] p_m2s_data_cr  = pw(`CXL_P_LINK_M2S_DATA_CREDITS);
    wire [31:0] p_s2m_data_cr  = pw(`CXL_P_LINK_S2M_DATA_CREDITS);
    wire [31:0] p_s2m_rsp_cr   = pw(`CXL_P_LINK_S2M_RSP_CREDITS);
    wire [31:0] p_sw_present   = pw(`CXL_P_SW_PRESENT);
    wire [31:0] p_port_queue   = pw(`CXL_P_SW_PORT_QUEUE);

    wire lp = p_link_present != 32'd0;
    wire sw = p_sw_present != 32'd0;

    // ---------------------------------------------------------------- sequencing
    reg  [63:0] now_q;
    reg  [7:0]  local_rr_q;       // the local path's round robin (below)
    wire [7:0]  local_rr_n;
    reg         mid_q;            // a model cycle is in progress (response clocks done, main clock next)
    reg         rb_q;             // ... and a response or build clock came in it (schedule clocks move no state
                                  // but the DRAM's decision registers: the cycle's start is still what they see)
    assign now = now_q;
    assign at_boundary = !mid_q && !clearing;

    // response clock: a ready head in some host response path
    wire [NH-1:0]   hr_rdy;       // host_rsp[h] head ready
    wire [NH*W-1:0] hr_head;
    reg  [7:0]      rsel_h;       // first host with a ready head
    reg             rsel_any;
    integer         hi;
    always @* begin
        rsel_any = 1'b0;
        rsel_h = 8'd0;
        for (hi = NH - 1; hi >= 0; hi = hi - 1)
            if (hr_rdy[hi] && hi < p_hosts) begin
                rsel_any = 1'b1;
                rsel_h = hi[7:0];
            end
    end
    wire            stepping = mid_q || (run && !clearing);           // a model cycle runs in this clock
    wire            rsp_clk  = stepping && rsel_any;
    // a clock that performs a model cycle, unless it is a period jump or shrinks one (pj_hold, below)
    wire            main_raw = stepping && !rsel_any;
    wire            pj_hold, pj_jump;
    // a build clock: some link's flit of this cycle needs another step (link.v); the main clock follows
    // when none does
    wire            bld_need;
    // schedule clocks: the DRAM's decision of this cycle over two or three clocks (dram.v: s0 the load,
    // only when some device enqueues; s1 the candidates; s2 the pick), beside the build clocks, when some
    // used device's DRAM has something to schedule; sc_q is the next one (0: none yet)
    wire            sch_any, sch_ld;
    reg  [1:0]      sc_q;
    wire            sch_need = sch_any && sc_q != 2'd3;
    wire [1:0]      sc_st = (sc_q == 2'd0 && !sch_ld) ? 2'd1 : sc_q;
    wire            ks_need;      // a skip clock (the idle skip, below)
    wire            pre_clk  = main_raw && !ks_need && !pj_hold && (bld_need || sch_need);
    wire            bld_clk  = pre_clk && bld_need;
    wire            sch_clk  = pre_clk && sch_need;
    wire            main_clk = main_raw && !ks_need && !pj_hold && !bld_need && !sch_need;
    wire            sch_s0 = sch_clk && sc_st == 2'd0;
    wire            sch_s1 = sch_clk && sc_st == 2'd1;
    wire            sch_s2 = sch_clk && sc_st == 2'd2;
    // an idle skip (below): this main clock is 1 + skip_n model cycles; a period jump is adv_n + 1 cycles
    // without one; `now` and its copies move in both (adv)
    wire            skip_c;
    wire [63:0]     skip_n;
    wire [31:0]     skip_n32;
    wire [63:0]     pj_amount;
    wire            adv = main_clk || pj_jump;
    wire [63:0]     adv_n = pj_jump ? pj_amount - 64'd1 : skip_n;
    /* verilator lint_off UNUSEDSIGNAL */   // a response clock needs only req and tag
    wire [W-1:0]    rmsg     = hr_head[W*rsel_h +: W];
    wire [7:0]      rreq8    = rmsg[`CXL_MSG_REQ];
    wire [3:0]      rreq     = rreq8[3:0];       // < NREQ = 16
    wire [15:0]     rtag     = rmsg[`CXL_MSG_TAG];     // tags < 256 (CXL_MAX_TAGS)
    /* verilator lint_on UNUSEDSIGNAL */
    wire            sub_clk  = !mid_q && !clearing && !run && sub_valid;
    wire [15:0]     sub_r    = sub_desc[8*`CXL_D_REQUESTER +: 16];

    // Clocks (clkgate.v; in synthesis all of them are clk): mclk for this module's own registers, which
    // move in reset, in a model cycle, a submit, the histogram sweep, a completion pop or a statistics
    // read; each unit below gets clk gated by its own clock enable (or reset).
    wire            mclk;
    clkgate u_cg (.clk(clk), .en(!rst_n || stepping || sub_clk || clearing || comp_pop || st_rd), .gclk(mclk));
    // now moves in main clocks only: a clock of a response, a submit or a pop does not disturb the logic
    // that compares ready cycles with it
    wire            nclk;
    clkgate u_cgn (.clk(clk), .en(!rst_n || adv), .gclk(nclk));
    always @(posedge nclk) begin
        if (!rst_n) begin
            now_q <= 64'd0;
            local_rr_q <= 8'd0;
        end else if (adv) begin
            now_q <= now_q + 64'd1 + adv_n;
            if (!lp && main_clk)
                local_rr_q <= local_rr_n;
        end
    end

    // ---------------------------------------------------------------- requesters and host paths
    // host_reqs[h][k] of the C: the requesters of each host port in order. The RTL does not build those
    // lists: every host port's M2S link has all NREQ requesters as its sources, in requester order, with
    // the requesters of other ports (and those not in use) never ready. The link's scan then visits the
    // port's requesters in the same order as the C's scan of host_reqs[h] from rr: a requester's place in
    // the list and its index are in the same order, and the link's rr (after the picked source, wrapping)
    // names the same next requester in both. So the flits and completions are the same; only the link's
    // internal rr counts requesters instead of list places (it is not an output of the model). Building
    // the lists instead cost 64 600-bit 16-way selects, most of this module's logic in synthesis
    // (docs/rtl-synthesis.md). prm is stable while the model runs, so these are combinational.
    reg [7:0]  req_host [0:NREQ-1];
    reg [NREQ-1:0] req_in;   // requester r is in use and names a host port that exists
    reg [31:0] rh;
    integer    ri;
    always @* begin
        for (ri = 0; ri < NREQ; ri = ri + 1) begin
            rh = pw(`CXL_P_REQ_HOST + ri);
            req_host[ri] = rh < NH ? rh[7:0] : 8'd0;
            req_in[ri] = ri < p_requesters && rh < NH;
        end
    end

    wire [NREQ-1:0]     rq_sub_ready, rq_comp_valid, rq_rsp_write, rq_iss_valid;
    // per requester values read by index are arrays, not one wide vector: a simulator would rebuild
    // the whole vector whenever one requester's part moved
    wire [255:0]        rq_comp [0:NREQ-1];   // cxl_completion bytes
    wire [63:0]         rq_lat  [0:NREQ-1];
    wire [NREQ*64-1:0]  rq_quiet;
    wire [NREQ*W-1:0]   rq_iss_msg;
    // host request paths (step 9 pushes, step 10 / local path pops)
    wire [KM-1:0]       hq_rdy [0:NREQ-1];
    wire [KM*W-1:0]     hq_msg [0:NREQ-1];
    reg  [NREQ*KM*W-1:0] hq_msg_bus;      // the same, as every host port's M2S link's source bus
    // (a loop rather than one assign per requester: Verilator merged those into one concatenation built
    // pairwise, some 2,800 32-bit word copies per evaluation)
    integer hb;
    always @*
        for (hb = 0; hb < NREQ; hb = hb + 1)
            hq_msg_bus[KM*W*hb +: KM*W] = hq_msg[hb];
    wire [NREQ*32-1:0]  hq_count, hq_space;
    wire [NREQ-1:0]     hq_wait;         // an entry waits for its ready cycle (the path must see each cycle)
    reg  [NREQ*8-1:0]   hq_pop_n;
    wire [NREQ-1:0]     li_pop;          // local path: moved into the controller this cycle
    wire [NREQ-1:0]     rq_iss_en;

    // The requesters share one clock and their request paths another (two domains rather than 32: a
    // simulator's bookkeeping grows with the number of clocks). In a main clock a requester's state moves
    // only when it issues (no response, no submit: nothing retires, no tag comes back), so their clock
    // ticks in a main clock only when one of them issues; in a saturated model every tag is out and most
    // main clocks have none. The request paths move in every main clock (pops, ready times).
    wire rqclk, hqclk;
    clkgate u_cg_rq (.clk(clk), .en(!rst_n || rsp_clk || sub_clk || (main_clk && |rq_iss_valid)), .gclk(rqclk));
    clkgate u_cg_hq (.clk(clk), .en(!rst_n || (main_clk && (|rq_iss_valid || |hq_pop_n || |hq_wait))), .gclk(hqclk));
    genvar gr, gk;
    generate
        for (gr = 0; gr < NREQ; gr = gr + 1) begin : rq
            wire [63:0] c_id, c_start, c_end;
            wire [31:0] c_req, c_lines;
            wire [4:0]  sp5;
            wire        used = gr < p_requesters;
            wire        ce_r = (main_clk && used) || (rsp_clk && rreq8 == gr) || (sub_clk && sub_r == gr);
            wire [63:0] lat;
            wire [KM*W-1:0] w_msg;
            requester u_req (
                .clk(rqclk), .rst_n(rst_n), .ce(ce_r), .now(now_q), .tags(p_tags), .idx(gr[7:0]),
                .host(req_host[gr]),
                .sub_valid(sub_clk && sub_r == gr),
                .sub_ready(rq_sub_ready[gr]),
                .sub_id(sub_desc[8*`CXL_D_ID +: 64]),
                .sub_base(sub_desc[8*`CXL_D_BASE +: 64]),
                .sub_bytes(sub_desc[8*`CXL_D_BYTES +: 64]),
                .sub_footprint(sub_desc[8*`CXL_D_FOOTPRINT +: 64]),
                .sub_not_before(sub_desc[8*`CXL_D_NOT_BEFORE +: 64]),
                .sub_stride(sub_desc[8*`CXL_D_STRIDE +: 32]),
                .sub_seed(sub_desc[8*`CXL_D_SEED +: 32]),
                .sub_gap_cycles(sub_desc[8*`CXL_D_GAP_CYCLES +: 32]),
                .sub_requester(sub_desc[8*`CXL_D_REQUESTER +: 16]),
                .sub_max_outstanding(sub_desc[8*`CXL_D_MAX_OUTSTANDING +: 16]),
                .sub_pattern(sub_desc[8*`CXL_D_PATTERN +: 8]),
                .sub_rd_weight(sub_desc[8*`CXL_D_RD_WEIGHT +: 8]),
                .sub_wr_weight(sub_desc[8*`CXL_D_WR_WEIGHT +: 8]),
                .rsp_valid(rsp_clk && rreq8 == gr),
                .rsp_tag(rtag[7:0]),
                .comp_valid(rq_comp_valid[gr]),
                .comp_id(c_id), .comp_start_cycle(c_start), .comp_end_cycle(c_end),
                .comp_requester(c_req), .comp_lines(c_lines),
                .rsp_lat(lat),
                .rsp_write(rq_rsp_write[gr]),
                .iss_en(main_clk && rq_iss_en[gr]),
                .iss_valid(rq_iss_valid[gr]),
                .iss_msg(rq_iss_msg[W*gr +: W]),
                .quiet_until(rq_quiet[64*gr +: 64]),
                .space(sp5));
            assign req_space[8*gr +: 8] = {3'd0, sp5};
            assign rq_comp[gr] = {c_lines, c_req, c_end, c_start, c_id};
            assign rq_lat[gr] = lat;
            assign hq_msg[gr] = w_msg;
            // step 9: requester_may_issue && pipe_space(host_req[r]) (after the local path's pops)
            wire [31:0] sp = hq_space[32*gr +: 32] + {31'd0, !lp && li_pop[gr]};
            assign rq_iss_en[gr] = sp != 32'd0;
            // the host request path: every entry leaves p_host_req cycles after its push, so the path
            // is a delay_pipe (no ready cycles stored); its window is the KM entries an M2S flit can
            // take from one source (2 Req + 1 RwD), the host port M2S link's lookahead
            wire [KM-1:0]   w_rdy;
            /* verilator lint_off UNUSEDSIGNAL */
            wire [KM-1:0]   w_valid;   // w_rdy implies it
            wire            perr;      // never: step 9 pushes only with space (rq_iss_en)
            /* verilator lint_on UNUSEDSIGNAL */
            delay_pipe #(.DEPTH(`CXL_MAX_FIFO), .W(W), .K(KM)) u_hq (
                .clk(hqclk), .rst_n(rst_n), .ce(main_clk && used), .now_lo(now_q[31:0]),
                .delay(p_host_req), .push(rq_iss_valid[gr]), .push_msg(rq_iss_msg[W*gr +: W]),
                .pop_n(hq_pop_n[8*gr +: 3]),
                .win_valid(w_valid), .win_rdy(w_rdy), .win_msg(w_msg),
                .count(hq_count[32*gr +: 32]), .space(hq_space[32*gr +: 32]), .push_err(perr),
                .waiting(hq_wait[gr]));
            assign hq_rdy[gr] = w_rdy;
        end
    endgenerate

    // host response paths (hr, instantiated after the devices, whose outputs the local path pushes)
    localparam integer RPUSH = 2 * K;
    wire [NH-1:0]         hr_err;
    wire [NH*32-1:0]      hr_count;
    genvar gh;

    // ---------------------------------------------------------------- links
    // up[h]: host port h (direct: the only link, host 0 <-> device 0); dn[d]: switch <-> device d.
    wire [NH-1:0]       um_idle, us_idle;
    wire [ND-1:0]       dm_idle, ds_idle;
    wire [NH-1:0]       um_acc_neg, us_acc_neg;   // a link's flit accumulator below 0 (not at its ceiling)
    wire [ND-1:0]       dm_acc_neg, ds_acc_neg;
    wire [NH-1:0]       um_crp, us_crp;           // a link's credit returns not yet due (credit.v)
    wire [ND-1:0]       dm_crp, ds_crp;
    wire [NH*4-1:0]     um_rx_n, us_rx_n;
    wire [NH*NIN*W-1:0] um_rx_msg, us_rx_msg;
    wire [ND*4-1:0]     dm_rx_n, ds_rx_n;
    wire [ND*NIN*W-1:0] dm_rx_msg, ds_rx_msg;
    // transmit statistics of each link direction
    wire [NH-1:0]   um_flit, um_dflit, us_flit, us_dflit;
    wire [NH*3-1:0] um_used, us_used;
    wire [NH*32-1:0] um_msgs, us_msgs;
    wire [NH*4-1:0] um_stall, us_stall;
    wire [ND-1:0]   dm_flit, dm_dflit, ds_flit, ds_dflit;
    wire [ND*3-1:0] dm_used, ds_used;
    wire [ND*32-1:0] dm_msgs, ds_msgs;
    wire [ND*4-1:0] dm_stall, ds_stall;
    // sources and pops
    wire [NH*NREQ*3-1:0]   um_pop;
    wire [NH*2*3-1:0]      us_pop;
    wire [ND*K-1:0]        dm_src_rdy;
    wire [ND*K*W-1:0]      dm_src_msg;
    wire [ND*3-1:0]        dm_pop;
    wire [ND*2*K-1:0]      ds_src_rdy;
    wire [ND*2*K*W-1:0]    ds_src_msg;
    wire [ND*2*3-1:0]      ds_pop;
    // credit returns
    reg  [ND*32-1:0] dm_ret, ds_ret;
    // a link's flit of this cycle needs another build clock
    wire [NH-1:0]    up_need;
    wire [ND-1:0]    dn_need;
    assign bld_need = |up_need || |dn_need;
    // some used device's DRAM has something to schedule this cycle (dram.v sched_need)
    wire [ND-1:0]    dv_sched, dv_sld;
    reg              sch_or, sld_or;
    integer          si;
    always @* begin
        sch_or = 1'b0;
        sld_or = 1'b0;
        for (si = 0; si < ND; si = si + 1)
            if (si < p_devices) begin
                if (dv_sched[si])
                    sch_or = 1'b1;
                if (dv_sld[si])
                    sld_or = 1'b1;
            end
    end
    assign sch_any = sch_or;
    assign sch_ld = sld_or;

    // the local path (below): device 0's ingress and response pops, host 0's response pushes
    wire [7:0]       li_n;
    wire [DIN*W-1:0] li_msg;
    reg [7:0]       lo_drs, lo_ndr;

    // device controllers' outputs
    wire [ND-1:0]     dv_cr_req, dv_cr_rwd, dv_idle, dv_refdue, dv_in_err;
    wire [ND*16-1:0]  dv_rest;      // each device's DRAM timing-counter bound (dram_chan.v)
    wire [ND*32-1:0]  dv_refmin;    // ... and cycles to its next refresh deadline
    wire [ND-1:0]     dv_same, dv_nonref;   // period jump (header, dram_chan.v)
    /* verilator lint_off UNUSEDSIGNAL */   // device 0's is the canonical one
    wire [ND-1:0]     dv_canon;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [ND*K-1:0]   dv_drs_rdy, dv_ndr_rdy;
    wire [ND*K*W-1:0] dv_drs_msg, dv_ndr_msg;
    // switch outputs
    wire [NH-1:0]        sw_up_cr, sw_up_err;
    wire [NH*8-1:0]      sw_up_cls;
    wire [ND-1:0]        sw_dn_cr, sw_dn_err;
    wire [ND*8-1:0]      sw_dn_cls;
    wire [ND*32-1:0]     sw_dn_out_count;
    /* verilator lint_off UNUSEDSIGNAL */   // the links look K of the switch's NPOP entries ahead
    wire [ND*8*W-1:0]    sw_dn_out_msg;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [NH*32-1:0]     sw_up_out_count;
    wire [NH*8*W-1:0]    sw_up_out_msg;
    wire                 sw_idle;
    wire [63:0]          sw_stall;

    // credits of each class that n delivered messages free: per class a count of the messages of that
    // class (a population count each, not a running count indexed by each message's class)
    function [31:0] cls_count(input [3:0] n, input [NIN*W-1:0] msgs);
        integer i, k;
        begin
            cls_count = 32'd0;
            for (k = 0; k < 4; k = k + 1)
                for (i = 0; i < NIN; i = i + 1)
                    cls_count[8*k +: 8] = cls_count[8*k +: 8] +
                                          {7'd0, i < n && msgs[W*i + 88 +: 8] == k[7:0]};
        end
    endfunction
    function [31:0] one_cls(input v, input [7:0] c);
        begin
            one_cls = 32'd0;
            if (v && c < 8'd4)
                one_cls[8*c[1:0] +: 8] = 8'd1;
        end
    endfunction

    generate
        for (gh = 0; gh < NH; gh = gh + 1) begin : up
            wire used = lp && gh < p_hosts;
            wire [127:0] m2s_pool = sw ? {64'd0, p_port_queue, p_port_queue} : {64'd0, p_m2s_data_cr, p_m2s_req_cr};
            /* verilator lint_off UNUSEDSIGNAL */
            wire [127:0] a0, a1, pd0, pd1;
            wire [63:0]  acc0, acc1;
            wire [6:0]   fc0, fc1;
            wire [3:0]   oc0, oc1;
            wire [5:0]   och0, och1;
            wire [7:0]   rr0, rr1;
            /* verilator lint_on UNUSEDSIGNAL */
            wire lclk;
            wire [63:0] now_l;
            wire n_m2s, n_s2m;
            // lclk for the links' state and `now` (main clocks), bclk for their flit-build registers (build
            // clocks and the main clock that clears them): logic fed by the link state alone (its receive
            // side, the credits) is then re-evaluated by a simulator in main clocks only
            wire bclk;
            clkgate u_cg (.clk(clk), .en(!rst_n || (adv && used)), .gclk(lclk));
            clkgate u_cgb (.clk(clk), .en(!rst_n || ((main_clk || bld_clk) && used)), .gclk(bclk));
            model_now u_now (.clk(lclk), .rst_n(rst_n), .step(adv), .skip_n(adv_n), .now(now_l));
            assign up_need[gh] = used && (n_m2s || n_s2m);
            // the link's inputs, each computed apart (a simulator then re-evaluates an unused port's
            // link only when its own inputs move)
            reg  [NREQ*KM-1:0]  m_src_rdy;
            reg  [2*K-1:0]      s_src_rdy;
            reg  [2*K*W-1:0]    s_src_msg;
            reg  [31:0]         m_ret, s_ret;
            integer k;
            localparam [7:0] GH = gh;
            always @* begin   // step 10: M2S sources, the host request paths of the port's requesters
                for (k = 0; k < NREQ; k = k + 1)
                    m_src_rdy[k*KM +: KM] = (req_in[k] && req_host[k] == GH) ? hq_rdy[k] : {KM{1'b0}};
            end
            always @*         // step 3: the host response path took what arrived: credits go back
                s_ret = lp ? cls_count(us_rx_n[4*gh +: 4], us_rx_msg[NIN*W*gh +: NIN*W]) : 32'd0;
            if (gh == 0) begin : p0
                always @* begin   // step 8: S2M sources, the switch's egress (switch) or device 0 (direct)
                    s_src_rdy = {(2*K){1'b0}};
                    s_src_msg = {(2*K*W){1'b0}};
                    if (sw) begin
                        for (k = 0; k < K; k = k + 1) begin
                            s_src_rdy[k] = k < sw_up_out_count[31:0];
                            s_src_msg[k*W +: W] = sw_up_out_msg[k*W +: W];
                        end
                    end else begin
                        s_src_rdy = {dv_ndr_rdy[K-1:0], dv_drs_rdy[K-1:0]};
                        s_src_msg = {dv_ndr_msg[K*W-1:0], dv_drs_msg[K*W-1:0]};
                    end
                end
                always @*         // step 6: credits the switch (switch) or device 0 (direct) returns
                    m_ret = sw ? one_cls(sw_up_cr[0], sw_up_cls[7:0])
                               : one_cls(dv_cr_req[0], 8'd`CXL_M2S_REQ) | one_cls(dv_cr_rwd[0], 8'd`CXL_M2S_RWD);
            end else begin : pn
                always @* begin
                    s_src_rdy = {(2*K){1'b0}};
                    s_src_msg = {(2*K*W){1'b0}};
                    if (sw)
                        for (k = 0; k < K; k = k + 1) begin
                            s_src_rdy[k] = k < sw_up_out_count[32*gh +: 32];
                            s_src_msg[k*W +: W] = sw_up_out_msg[(8*gh + k)*W +: W];
                        end
                end
                always @*
                    m_ret = sw ? one_cls(sw_up_cr[gh], sw_up_cls[8*gh +: 8]) : 32'd0;
            end
            link #(.NSRC(NREQ), .K(KM), .W(W)) u_m2s (
                .clk(lclk), .bclk(bclk), .rst_n(rst_n), .ce(main_clk && used), .bld(bld_clk && used), .need(n_m2s), .now(now_l),
                .dir(1'b0), .flit_cost(p_flit_cost), .flit_inc(p_flit_inc), .ser_cycles(p_ser),
                .phy_cycles(p_phy), .pool(m2s_pool), .credit_return_cycles(p_crd), .nsrc(NREQ[7:0]),
                .cr_ret_first(1'b1), .cr_ret_n(m_ret),
                .src_rdy(m_src_rdy), .src_msg(hq_msg_bus),
                .src_pop_n(um_pop[NREQ*3*gh +: NREQ*3]),
                .tx_flit(um_flit[gh]), .tx_data_flit(um_dflit[gh]), .tx_used(um_used[3*gh +: 3]),
                .tx_msgs(um_msgs[32*gh +: 32]), .tx_stall(um_stall[4*gh +: 4]),
                .rx_n(um_rx_n[4*gh +: 4]), .rx_msg(um_rx_msg[NIN*W*gh +: NIN*W]),
                .cr_avail(a0), .cr_pending(pd0), .acc(acc0), .idle(um_idle[gh]), .fl_count(fc0),
                .owed_count(oc0), .owed_chunks(och0), .rr(rr0));
            link #(.NSRC(2), .K(K), .W(W)) u_s2m (
                .clk(lclk), .bclk(bclk), .rst_n(rst_n), .ce(main_clk && used), .bld(bld_clk && used), .need(n_s2m), .now(now_l),
                .dir(1'b1), .flit_cost(p_flit_cost), .flit_inc(p_flit_inc), .ser_cycles(p_ser),
                .phy_cycles(p_phy), .pool({p_s2m_rsp_cr, p_s2m_data_cr, 64'd0}),
                .credit_return_cycles(p_crd), .nsrc(sw ? 8'd1 : 8'd2),
                .cr_ret_first(1'b1), .cr_ret_n(s_ret),
                .src_rdy(s_src_rdy), .src_msg(s_src_msg),
                .src_pop_n(us_pop[6*gh +: 6]),
                .tx_flit(us_flit[gh]), .tx_data_flit(us_dflit[gh]), .tx_used(us_used[3*gh +: 3]),
                .tx_msgs(us_msgs[32*gh +: 32]), .tx_stall(us_stall[4*gh +: 4]),
                .rx_n(us_rx_n[4*gh +: 4]), .rx_msg(us_rx_msg[NIN*W*gh +: NIN*W]),
                .cr_avail(a1), .cr_pending(pd1), .acc(acc1), .idle(us_idle[gh]), .fl_count(fc1),
                .owed_count(oc1), .owed_chunks(och1), .rr(rr1));
            assign um_acc_neg[gh] = acc0[63];
            assign us_acc_neg[gh] = acc1[63];
            assign um_crp[gh] = |pd0;
            assign us_crp[gh] = |pd1;
        end
    endgenerate

    // the device-side links exist only beside the switch (a build with SW = 0 has none: their outputs are
    // the constants of links that never run, and every reader of them also checks `sw`)
    localparam integer NDL = SW != 0 ? ND : 0;
    genvar gd;
    generate
        if (SW == 0) begin : g_nodn
            assign dm_idle = {ND{1'b1}};
            assign ds_idle = {ND{1'b1}};
            assign dm_acc_neg = {ND{1'b0}};
            assign ds_acc_neg = {ND{1'b0}};
            assign dm_crp = {ND{1'b0}};
            assign ds_crp = {ND{1'b0}};
            assign dm_rx_n = {(ND*4){1'b0}};
            assign ds_rx_n = {(ND*4){1'b0}};
            assign dm_rx_msg = {(ND*NIN*W){1'b0}};
            assign ds_rx_msg = {(ND*NIN*W){1'b0}};
            assign dm_flit = {ND{1'b0}};
            assign ds_flit = {ND{1'b0}};
            assign dm_dflit = {ND{1'b0}};
            assign ds_dflit = {ND{1'b0}};
            assign dm_used = {(ND*3){1'b0}};
            assign ds_used = {(ND*3){1'b0}};
            assign dm_msgs = {(ND*32){1'b0}};
            assign ds_msgs = {(ND*32){1'b0}};
            assign dm_stall = {(ND*4){1'b0}};
            assign ds_stall = {(ND*4){1'b0}};
            assign dm_pop = {(ND*3){1'b0}};
            assign dn_need = {ND{1'b0}};
            assign ds_pop = {(ND*6){1'b0}};
            assign dm_src_rdy = {(ND*K){1'b0}};
            assign dm_src_msg = {(ND*K*W){1'b0}};
            assign ds_src_rdy = {(ND*2*K){1'b0}};
            assign ds_src_msg = {(ND*2*K*W){1'b0}};
            /* verilator lint_off UNUSEDSIGNAL */   // the sources and credit returns of links not built
            wire nodn_unused = ^{dm_src_rdy, dm_src_msg, ds_src_rdy, ds_src_msg, dm_ret, ds_ret, sw_dn_out_count};
            /* verilator lint_on UNUSEDSIGNAL */
        end
        for (gd = 0; gd < NDL; gd = gd + 1) begin : dn
            wire used = lp && sw && gd < p_devices;
            wire lclk;
            wire [63:0] now_l;
            wire n_m2s, n_s2m;
            // lclk for the links' state and `now` (main clocks), bclk for their flit-build registers (build
            // clocks and the main clock that clears them): logic fed by the link state alone (its receive
            // side, the credits) is then re-evaluated by a simulator in main clocks only
            wire bclk;
            clkgate u_cg (.clk(clk), .en(!rst_n || (adv && used)), .gclk(lclk));
            clkgate u_cgb (.clk(clk), .en(!rst_n || ((main_clk || bld_clk) && used)), .gclk(bclk));
            model_now u_now (.clk(lclk), .rst_n(rst_n), .step(adv), .skip_n(adv_n), .now(now_l));
            assign dn_need[gd] = used && (n_m2s || n_s2m);
            /* verilator lint_off UNUSEDSIGNAL */
            wire [127:0] a0, a1, pd0, pd1;
            wire [63:0]  acc0, acc1;
            wire [6:0]   fc0, fc1;
            wire [3:0]   oc0, oc1;
            wire [5:0]   och0, och1;
            wire [7:0]   rr0, rr1;
            /* verilator lint_on UNUSEDSIGNAL */
            link #(.NSRC(1), .K(K), .W(W)) u_m2s (
                .clk(lclk), .bclk(bclk), .rst_n(rst_n), .ce(main_clk && used), .bld(bld_clk && used), .need(n_m2s), .now(now_l),
                .dir(1'b0), .flit_cost(p_flit_cost), .flit_inc(p_flit_inc), .ser_cycles(p_ser),
                .phy_cycles(p_phy), .pool({64'd0, p_m2s_data_cr, p_m2s_req_cr}),
                .credit_return_cycles(p_crd), .nsrc(8'd1),
                .cr_ret_first(1'b1), .cr_ret_n(dm_ret[32*gd +: 32]),
                .src_rdy(dm_src_rdy[K*gd +: K]), .src_msg(dm_src_msg[K*W*gd +: K*W]),
                .src_pop_n(dm_pop[3*gd +: 3]),
                .tx_flit(dm_flit[gd]), .tx_data_flit(dm_dflit[gd]), .tx_used(dm_used[3*gd +: 3]),
                .tx_msgs(dm_msgs[32*gd +: 32]), .tx_stall(dm_stall[4*gd +: 4]),
                .rx_n(dm_rx_n[4*gd +: 4]), .rx_msg(dm_rx_msg[NIN*W*gd +: NIN*W]),
                .cr_avail(a0), .cr_pending(pd0), .acc(acc0), .idle(dm_idle[gd]), .fl_count(fc0),
                .owed_count(oc0), .owed_chunks(och0), .rr(rr0));
            link #(.NSRC(2), .K(K), .W(W)) u_s2m (
                .clk(lclk), .bclk(bclk), .rst_n(rst_n), .ce(main_clk && used), .bld(bld_clk && used), .need(n_s2m), .now(now_l),
                .dir(1'b1), .flit_cost(p_flit_cost), .flit_inc(p_flit_inc), .ser_cycles(p_ser),
                .phy_cycles(p_phy), .pool({p_port_queue, p_port_queue, 64'd0}),
                .credit_return_cycles(p_crd), .nsrc(8'd2),
                .cr_ret_first(1'b0), .cr_ret_n(ds_ret[32*gd +: 32]),   // switch returns follow step 7
                .src_rdy(ds_src_rdy[2*K*gd +: 2*K]), .src_msg(ds_src_msg[2*K*W*gd +: 2*K*W]),
                .src_pop_n(ds_pop[6*gd +: 6]),
                .tx_flit(ds_flit[gd]), .tx_data_flit(ds_dflit[gd]), .tx_used(ds_used[3*gd +: 3]),
                .tx_msgs(ds_msgs[32*gd +: 32]), .tx_stall(ds_stall[4*gd +: 4]),
                .rx_n(ds_rx_n[4*gd +: 4]), .rx_msg(ds_rx_msg[NIN*W*gd +: NIN*W]),
                .cr_avail(a1), .cr_pending(pd1), .acc(acc1), .idle(ds_idle[gd]), .fl_count(fc1),
                .owed_count(oc1), .owed_chunks(och1), .rr(rr1));
            assign dm_acc_neg[gd] = acc0[63];
            assign ds_acc_neg[gd] = acc1[63];
            assign dm_crp[gd] = |pd0;
            assign ds_crp[gd] = |pd1;
            // the switch's egress queue towards device d feeds dn_m2s[d]; devices feed dn_s2m[d]
            for (gk = 0; gk < K; gk = gk + 1) begin : win
                assign dm_src_rdy[K*gd + gk] = gk < sw_dn_out_count[32*gd +: 32];
                assign dm_src_msg[(K*gd + gk)*W +: W] = sw_dn_out_msg[(8*gd + gk)*W +: W];
            end
            assign ds_src_rdy[2*K*gd +: 2*K] = {dv_ndr_rdy[K*gd +: K], dv_drs_rdy[K*gd +: K]};
            assign ds_src_msg[2*K*W*gd +: 2*K*W] = {dv_ndr_msg[K*W*gd +: K*W], dv_drs_msg[K*W*gd +: K*W]};
        end
    endgenerate

    // ---------------------------------------------------------------- switch
    reg [NH*8-1:0] sw_up_in_n;
    reg [ND*8-1:0] sw_dn_in_n;
    reg [ND*8-1:0] sw_dn_pop;
    reg [NH*8-1:0] sw_up_pop;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [3:0]       sw_stall_n;
    wire [NH*32-1:0] sw_up_in_count;
    wire [ND*32-1:0] sw_dn_in_count;
    /* verilator lint_on UNUSEDSIGNAL */
    // SW = 0 (a build for direct-attached configurations only) leaves the switch out: its outputs are
    // the constants a switch that sees no ports gives (no credits, no messages, no errors, idle, no
    // stalls), which is what the model reads from it when the configuration has none. Parameters that
    // ask for a switch then end every run with model_error 4, like too many ports.
    generate
        if (SW != 0) begin : g_sw
            wire swclk;
            wire [63:0] now_sw;
            clkgate u_cg_sw (.clk(clk), .en(!rst_n || (adv && lp && sw)), .gclk(swclk));
            model_now u_now_sw (.clk(swclk), .rst_n(rst_n), .step(adv), .skip_n(adv_n), .now(now_sw));
            switch #(.NH(NH), .ND(ND), .DEPTH(`CXL_MAX_FIFO), .NIN(NIN), .NPOP(8), .W(W)) u_sw (
                .clk(swclk), .rst_n(rst_n), .ce(main_clk && lp && sw), .now(now_sw),
                // without a switch it sees no ports: it is never clocked then, and its arbitration logic has
                // nothing to scan (cheaper in simulation; its outputs are not used)
                .hosts(sw ? p_hosts : 32'd0), .devices(sw ? p_devices : 32'd0), .hop_cycles(pw(`CXL_P_SW_HOP_CYCLES)),
                .port_queue(p_port_queue), .arbitration(pw(`CXL_P_SW_ARBITRATION)),
                .interleave_shift(pw(`CXL_P_SW_INTERLEAVE_SHIFT)), .dev_bits(pw(`CXL_P_SW_DEV_BITS)),
                .ld_shift(pw(`CXL_P_SW_LD_SHIFT)),
                .up_in_n(sw_up_in_n), .up_in_msg(um_rx_msg), .dn_in_n(sw_dn_in_n), .dn_in_msg(ds_rx_msg),
                .up_in_err(sw_up_err), .dn_in_err(sw_dn_err),
                .up_cr_ret(sw_up_cr), .up_cr_cls(sw_up_cls), .dn_cr_ret(sw_dn_cr), .dn_cr_cls(sw_dn_cls),
                .stall_n(sw_stall_n), .stall_count(sw_stall),
                .dn_out_count(sw_dn_out_count), .dn_out_msg(sw_dn_out_msg), .dn_out_pop_n(sw_dn_pop),
                .up_out_count(sw_up_out_count), .up_out_msg(sw_up_out_msg), .up_out_pop_n(sw_up_pop),
                .up_in_count(sw_up_in_count), .dn_in_count(sw_dn_in_count), .idle(sw_idle));
        end else begin : g_nosw
            assign sw_up_err = {NH{1'b0}};
            assign sw_dn_err = {ND{1'b0}};
            assign sw_up_cr = {NH{1'b0}};
            assign sw_up_cls = {(NH*8){1'b0}};
            assign sw_dn_cr = {ND{1'b0}};
            assign sw_dn_cls = {(ND*8){1'b0}};
            assign sw_stall_n = 4'd0;
            assign sw_stall = 64'd0;
            assign sw_dn_out_count = {(ND*32){1'b0}};
            assign sw_dn_out_msg = {(ND*8*W){1'b0}};
            assign sw_up_out_count = {(NH*32){1'b0}};
            assign sw_up_out_msg = {(NH*8*W){1'b0}};
            assign sw_up_in_count = {(NH*32){1'b0}};
            assign sw_dn_in_count = {(ND*32){1'b0}};
            assign sw_idle = 1'b1;
            // what only the switch reads
            /* verilator lint_off UNUSEDSIGNAL */
            wire nosw_unused = ^{sw_up_in_n, sw_dn_in_n, sw_dn_pop, sw_up_pop, ds_rx_msg};
            /* verilator lint_on UNUSEDSIGNAL */
        end
    endgenerate

    // ---------------------------------------------------------------- devices
    /* verilator lint_off UNUSEDSIGNAL */   // only the local path (device 0) checks ingress space
    wire [ND*32-1:0] dv_sp_req, dv_sp_rwd;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [ND*64-1:0] dv_reads, dv_writes, dv_acts, dv_pres, dv_refs, dv_conf, dv_ios, dv_iom, dv_dqs;
    wire [ND*256-1:0] dv_devload;
    generate
        for (gd = 0; gd < ND; gd = gd + 1) begin : dv
            wire dclk;
            wire [63:0] now_d;
            clkgate u_cg (.clk(clk), .en(!rst_n || ((adv || sch_clk) && gd < p_devices)), .gclk(dclk));
            model_now u_now (.clk(dclk), .rst_n(rst_n), .step(adv), .skip_n(adv_n), .now(now_d));
            // step 2 (ingress: direct from up link 0, switch from dn link d, local path) and step 7 (the
            // responses the link or the local path takes), each device's apart
            reg [7:0]       in_n, drs_pop, ndr_pop;
            reg [DIN*W-1:0] in_msg;
            if (gd == 0) begin : r0
                always @* begin
                    in_n = 8'd0;
                    in_msg = {(DIN*W){1'b0}};
                    drs_pop = 8'd0;
                    ndr_pop = 8'd0;
                    if (!lp) begin
                        in_n = li_n;
                        in_msg = li_msg;
                        drs_pop = lo_drs;
                        ndr_pop = lo_ndr;
                    end else if (sw) begin
                        in_n = {4'd0, dm_rx_n[3:0]};
                        in_msg[NIN*W-1:0] = dm_rx_msg[NIN*W-1:0];
                        drs_pop = {5'd0, ds_pop[2:0]};
                        ndr_pop = {5'd0, ds_pop[5:3]};
                    end else begin
                        in_n = {4'd0, um_rx_n[3:0]};
                        in_msg[NIN*W-1:0] = um_rx_msg[NIN*W-1:0];
                        drs_pop = {5'd0, us_pop[2:0]};
                        ndr_pop = {5'd0, us_pop[5:3]};
                    end
                end
            end else begin : rn
                always @* begin
                    in_n = 8'd0;
                    in_msg = {(DIN*W){1'b0}};
                    drs_pop = 8'd0;
                    ndr_pop = 8'd0;
                    if (lp && sw) begin
                        in_n = {4'd0, dm_rx_n[4*gd +: 4]};
                        in_msg[NIN*W-1:0] = dm_rx_msg[NIN*W*gd +: NIN*W];
                        drs_pop = {5'd0, ds_pop[6*gd +: 3]};
                        ndr_pop = {5'd0, ds_pop[6*gd + 3 +: 3]};
                    end
                end
            end
            devctrl #(.NCH(NCH), .NB(NB), .NQ(NQ), .NIN(DIN), .K(K), .W(W)) u_dev (
                .clk(dclk), .rst_n(rst_n), .ce(main_clk && gd < p_devices), .now(now_d),
                .s0(sch_s0), .s1(sch_s1), .s2(sch_s2), .sched_need(dv_sched[gd]), .sched_load(dv_sld[gd]),
                .skip(skip_c), .skip_n(skip_n32),
                .dram_rest(dv_rest[16*gd +: 16]), .dram_ref_min(dv_refmin[32*gd +: 32]),
                .snap(pj_snap), .pmatch(pj_match), .pjump(pj_jump && gd < p_devices), .psh(pj_sh),
                .dram_same(dv_same[gd]), .dram_canon(dv_canon[gd]), .dram_nonref(dv_nonref[gd]),
                .req_latency_cycles(pw(`CXL_P_CTRL_REQ_LATENCY_CYCLES)),
                .rsp_latency_cycles(pw(`CXL_P_CTRL_RSP_LATENCY_CYCLES)),
                .ingress_depth(pw(`CXL_P_CTRL_INGRESS_DEPTH)),
                .response_depth(pw(`CXL_P_CTRL_RESPONSE_DEPTH)),
                .devload_optimal(pw(`CXL_P_CTRL_DEVLOAD_OPTIMAL)),
                .devload_moderate(pw(`CXL_P_CTRL_DEVLOAD_MODERATE)),
                .devload_severe(pw(`CXL_P_CTRL_DEVLOAD_SEVERE)),
                .prm(prm),
                .in_n(in_n), .in_msg(in_msg), .in_err(dv_in_err[gd]),
                .ing_req_space(dv_sp_req[32*gd +: 32]), .ing_rwd_space(dv_sp_rwd[32*gd +: 32]),
                .cr_ret_req(dv_cr_req[gd]), .cr_ret_rwd(dv_cr_rwd[gd]),
                .drs_rdy(dv_drs_rdy[K*gd +: K]), .drs_msg(dv_drs_msg[K*W*gd +: K*W]),
                .ndr_rdy(dv_ndr_rdy[K*gd +: K]), .ndr_msg(dv_ndr_msg[K*W*gd +: K*W]),
                .drs_pop_n(drs_pop), .ndr_pop_n(ndr_pop),
                .idle(dv_idle[gd]), .refresh_due(dv_refdue[gd]),
                .st_reads(dv_reads[64*gd +: 64]), .st_writes(dv_writes[64*gd +: 64]),
                .st_acts(dv_acts[64*gd +: 64]), .st_pres(dv_pres[64*gd +: 64]), .st_refs(dv_refs[64*gd +: 64]),
                .st_row_conflicts(dv_conf[64*gd +: 64]), .st_ingress_occ_sum(dv_ios[64*gd +: 64]),
                .st_ingress_occ_max(dv_iom[64*gd +: 64]), .st_dramq_occ_sum(dv_dqs[64*gd +: 64]),
                .st_devload(dv_devload[256*gd +: 256]));
        end
    endgenerate

    // ---------------------------------------------------------------- host response paths
    // Step 3 pushes (link) or the local path's, one pop per response clock. Both host paths take their
    // pops before their pushes (push_first = 0) although the C pushes into a host request path (step 9)
    // before the link pops it (step 10), and into a response path (step 3) before step 5: the host paths
    // take at least one cycle, so an entry pushed in a cycle is never ready in it and the popper sees
    // the same window either way; the requester issues only with room at the start of the cycle, so no
    // push is refused either way.
    generate
        for (gh = 0; gh < NH; gh = gh + 1) begin : hr
            /* verilator lint_off UNUSEDSIGNAL */
            wire [63:0] w_ready;
            wire        w_valid;
            wire [31:0] sp;
            wire [7:0]  acc_n;
            /* verilator lint_on UNUSEDSIGNAL */
            wire used = gh < p_hosts;
            wire ce_h = (main_clk && used) || (rsp_clk && rsel_h == gh);
            wire hclk;
            wire [63:0] now_h;
            clkgate u_cg (.clk(clk), .en(!rst_n || ce_h || (pj_jump && used)), .gclk(hclk));
            model_now u_now (.clk(hclk), .rst_n(rst_n), .step(adv), .skip_n(adv_n), .now(now_h));
            // step 3: what arrives over up link h, or (local path, host 0) device 0's ready responses
            reg [7:0]         push_n;
            reg [RPUSH*W-1:0] push_msg;
            integer k;
            always @* begin
                push_n = 8'd0;
                push_msg = {(RPUSH*W){1'b0}};
                if (lp) begin
                    push_n = {4'd0, us_rx_n[4*gh +: 4]};
                    push_msg[NIN*W-1:0] = us_rx_msg[NIN*W*gh +: NIN*W];
                end else if (gh == 0) begin
                    push_n = lo_drs + lo_ndr;
                    for (k = 0; k < K; k = k + 1) begin
                        if (k < {24'd0, lo_drs})
                            push_msg[W*k +: W] = dv_drs_msg[W*k +: W];
                        if (k < {24'd0, lo_ndr})
                            push_msg[W*(k + {24'd0, lo_drs}) +: W] = dv_ndr_msg[W*k +: W];
                    end
                end
            end
            mpipe #(.DEPTH(`CXL_MAX_FIFO), .W(W), .NPUSH(RPUSH), .K(1)) u_hr (
                .clk(hclk), .rst_n(rst_n), .ce(ce_h),
                .now(now_h), .cap(`CXL_MAX_FIFO), .push_first(1'b0),
                .push_n(main_clk ? push_n : 8'd0),
                .push_msg(push_msg),
                .push_ready(now_h + {32'd0, p_host_rsp}),
                .pop_n({7'd0, rsp_clk && rsel_h == gh}),
                .win_valid(w_valid), .win_rdy(hr_rdy[gh]), .win_msg(hr_head[W*gh +: W]),
                .win_ready(w_ready), .count(hr_count[32*gh +: 32]), .space(sp),
                .push_acc(acc_n), .push_err(hr_err[gh]));
        end
    endgenerate

    // ---------------------------------------------------------------- wiring of one main clock
    // local path (link_present = 0): host request paths straight into device 0's ingress, requesters
    // visited once each from the one after the last that moved in the previous cycle (local_path.v)
    reg [NREQ-1:0]   lp_rdy;
    reg [NREQ*W-1:0] lp_msg;
    integer          lk;
    always @*
        for (lk = 0; lk < NREQ; lk = lk + 1) begin
            lp_rdy[lk] = hq_rdy[lk][0];
            lp_msg[W*lk +: W] = hq_msg[lk][W-1:0];
        end
    local_path #(.NREQ(NREQ), .NIN(DIN), .W(W)) u_local (
        .en(!lp), .rr(local_rr_q), .nreq(p_requesters), .rdy(lp_rdy), .msg(lp_msg),
        .sp_req(dv_sp_req[31:0]), .sp_rwd(dv_sp_rwd[31:0]),
        .in_n(li_n), .in_msg(li_msg), .pop(li_pop), .rr_n(local_rr_n));

    // local path: ready responses (DRS, then NDR) into host 0's response path
    integer   lj;
    reg       run_d, run_n;
    always @* begin
        lo_drs = 8'd0;
        lo_ndr = 8'd0;
        run_d = 1'b1;
        run_n = 1'b1;
        for (lj = 0; lj < K; lj = lj + 1) begin
            run_d = run_d && dv_drs_rdy[lj];
            run_n = run_n && dv_ndr_rdy[lj];
            lo_drs = lo_drs + {7'd0, run_d};
            lo_ndr = lo_ndr + {7'd0, run_n};
        end
    end

    integer h, d, r;
    always @* begin
        // step 4: into the switch
        sw_up_in_n = {(NH*8){1'b0}};
        sw_dn_in_n = {(ND*8){1'b0}};
        for (h = 0; h < NH; h = h + 1)
            if (sw) sw_up_in_n[8*h +: 8] = {4'd0, um_rx_n[4*h +: 4]};
        for (d = 0; d < ND; d = d + 1)
            if (sw) sw_dn_in_n[8*d +: 8] = {4'd0, ds_rx_n[4*d +: 4]};
        // step 6 credit returns (device accept) and step 8 (switch) into the links
        dm_ret = {(ND*32){1'b0}};
        ds_ret = {(ND*32){1'b0}};
        for (d = 0; d < ND; d = d + 1) begin
            dm_ret[32*d +: 32] = one_cls(dv_cr_req[d], 8'd`CXL_M2S_REQ) | one_cls(dv_cr_rwd[d], 8'd`CXL_M2S_RWD);
            ds_ret[32*d +: 32] = one_cls(sw_dn_cr[d], sw_dn_cls[8*d +: 8]);
        end
        // the switch's egress queues: popped by the up links' S2M (step 8) and the dn links' M2S
        sw_up_pop = {(NH*8){1'b0}};
        sw_dn_pop = {(ND*8){1'b0}};
        for (h = 0; h < NH; h = h + 1)
            if (sw)
                sw_up_pop[8*h +: 8] = {5'd0, us_pop[6*h +: 3]};
        for (d = 0; d < ND; d = d + 1)
            sw_dn_pop[8*d +: 8] = {5'd0, dm_pop[3*d +: 3]};
        hq_pop_n = {(NREQ*8){1'b0}};
        for (r = 0; r < NREQ; r = r + 1)
            if (lp)
                hq_pop_n[8*r +: 8] = {5'd0, um_pop[({24'd0, req_host[r]}*NREQ + r)*3 +: 3]};
            else
                hq_pop_n[8*r +: 8] = {7'd0, li_pop[r]};
    end

    // ---------------------------------------------------------------- completions and statistics
    // Latency histograms (hist_add): the linear bins in one memory of 64-bit words, word j of hist w
    // holding bins 2j (low half) and 2j+1 (high half), as cxl_stats lays them out. After reset a sweep
    // clears it, one word per clock (HLIN clocks; at_boundary stays low meanwhile): a memory is not
    // reset in one clock. The power-of-two bins, counts, sums and maxima are registers.
    localparam integer HW = HLIN / 2;          // words per histogram
    reg  [63:0] h_lin [0:2*HW-1];
    reg  [14:0] clr_q;                         // next word to clear; 2*HW: done
    localparam [14:0] HWORDS = HLIN[14:0];   // 2 histograms x HW words
    wire        clearing = clr_q != HWORDS;
    reg  [32*2*HLOG-1:0] h_log;
    reg  [63:0] h_cnt0, h_cnt1, h_sum0, h_sum1, h_max0, h_max1;
    reg  [63:0] st_cycles, st_rbytes, st_wbytes;
    wire        rwr  = rq_rsp_write[rreq];
    wire [63:0] rlat = rq_lat[rreq];
    reg  [3:0]  logk;
    integer     b;
    always @* begin
        logk = 4'd0;
        for (b = 15; b < 64; b = b + 1)
            if (rlat[b])
                logk = (b > 29) ? 4'd15 : b[3:0] - 4'd14;   // b - 14, the last bin takes the rest
    end
    wire        lin_hit = rlat < 64'd16384;
    wire [13:0] lin_w   = {rwr, rlat[13:1]};
    wire [4:0]  log_i   = {rwr, logk};
    // h_lin is a block RAM: one write port and one registered read port (h_rd). A response's bin is a
    // read-modify-write over clocks: the response clock that first names a word reads it and opens a
    // pending update (p_*), later response clocks naming the same word add to the pending counts, and
    // the pending update is written (the word read plus the counts) when a response names another word
    // (that response's read goes out in the same clock) or in the model cycle's main clock. So between
    // model cycles nothing is pending, and the statistics read-out (st_rd, only between model cycles)
    // uses the same read port. The write port takes the clearing sweep or a pending update (never both:
    // no model cycle runs while clearing). 2 x 8,192 x 64 bits: 28 RAMB36 instead of ~41K LUTs of LUT RAM.
    reg  [63:0] h_rd;                          // h_lin[address of the last read]
    reg         p_valid;
    reg  [13:0] p_addr;
    reg  [31:0] p_lo, p_hi;                    // counts to add to the low and high bin of word p_addr
    wire        h_same  = p_valid && lin_w == p_addr;
    wire        h_open  = rsp_clk && lin_hit && !h_same;           // read the bin's word, open an update
    wire        h_flush = p_valid && (main_clk || h_open);
    wire        h_st    = st_rd && !stepping;                      // a statistics read-out clock
    always @(posedge mclk) begin
        if (h_open || h_st)
            h_rd <= h_lin[h_open ? lin_w : a_hl];
        if (rst_n && (clearing || h_flush))
            h_lin[clearing ? clr_q[13:0] : p_addr] <= clearing ? 64'd0 : {h_rd[63:32] + p_hi, h_rd[31:0] + p_lo};
    end
    always @(posedge mclk)
        if (!rst_n)
            p_valid <= 1'b0;
        else if (rsp_clk && lin_hit) begin
            p_valid <= 1'b1;
            p_addr <= lin_w;
            p_lo <= (h_same ? p_lo : 32'd0) + {31'd0, !rlat[0]};
            p_hi <= (h_same ? p_hi : 32'd0) + {31'd0, rlat[0]};
        end else if (main_clk)
            p_valid <= 1'b0;

    // link statistics: link i < NH is up link i (both directions), NH + d is dn link d; 14 words each
    localparam integer NL = NH + ND;
    reg  [64*14*NL-1:0] ls;
    wire [NL-1:0] l_used;
    wire [NL-1:0] l_m_flit, l_s_flit, l_m_dflit, l_s_dflit;
    wire [3*NL-1:0] l_m_used, l_s_used;
    wire [32*NL-1:0] l_m_msgs, l_s_msgs;
    wire [4*NL-1:0] l_m_stall, l_s_stall;
    genvar gl;
    generate
        for (gl = 0; gl < NL; gl = gl + 1) begin : lstat
            if (gl < NH) begin : u
                assign l_used[gl] = lp && gl < p_hosts;
                assign l_m_flit[gl] = um_flit[gl];
                assign l_s_flit[gl] = us_flit[gl];
                assign l_m_dflit[gl] = um_dflit[gl];
                assign l_s_dflit[gl] = us_dflit[gl];
                assign l_m_used[3*gl +: 3] = um_used[3*gl +: 3];
                assign l_s_used[3*gl +: 3] = us_used[3*gl +: 3];
                assign l_m_msgs[32*gl +: 32] = um_msgs[32*gl +: 32];
                assign l_s_msgs[32*gl +: 32] = us_msgs[32*gl +: 32];
                assign l_m_stall[4*gl +: 4] = um_stall[4*gl +: 4];
                assign l_s_stall[4*gl +: 4] = us_stall[4*gl +: 4];
            end else begin : dd
                assign l_used[gl] = lp && sw && gl - NH < p_devices;
                assign l_m_flit[gl] = dm_flit[gl - NH];
                assign l_s_flit[gl] = ds_flit[gl - NH];
                assign l_m_dflit[gl] = dm_dflit[gl - NH];
                assign l_s_dflit[gl] = ds_dflit[gl - NH];
                assign l_m_used[3*gl +: 3] = dm_used[3*(gl - NH) +: 3];
                assign l_s_used[3*gl +: 3] = ds_used[3*(gl - NH) +: 3];
                assign l_m_msgs[32*gl +: 32] = dm_msgs[32*(gl - NH) +: 32];
                assign l_s_msgs[32*gl +: 32] = ds_msgs[32*(gl - NH) +: 32];
                assign l_m_stall[4*gl +: 4] = dm_stall[4*(gl - NH) +: 4];
                assign l_s_stall[4*gl +: 4] = ds_stall[4*(gl - NH) +: 4];
            end
            wire [64*14-1:0] cur = ls[64*14*gl +: 64*14];
            wire [64*14-1:0] nxt;
            assign nxt[0 +: 64]   = cur[0 +: 64]   + {63'd0, l_m_flit[gl]};
            assign nxt[64 +: 64]  = cur[64 +: 64]  + {63'd0, l_s_flit[gl]};
            assign nxt[128 +: 64] = cur[128 +: 64] + {63'd0, l_m_dflit[gl]};
            assign nxt[192 +: 64] = cur[192 +: 64] + {63'd0, l_s_dflit[gl]};
            assign nxt[256 +: 64] = cur[256 +: 64] + {61'd0, l_m_used[3*gl +: 3]};
            assign nxt[320 +: 64] = cur[320 +: 64] + {61'd0, l_s_used[3*gl +: 3]};
            genvar gc;
            for (gc = 0; gc < 4; gc = gc + 1) begin : cls
                assign nxt[64*(6 + gc) +: 64] = cur[64*(6 + gc) +: 64] + {56'd0, l_m_msgs[32*gl + 8*gc +: 8]} +
                                                {56'd0, l_s_msgs[32*gl + 8*gc +: 8]};
                assign nxt[64*(10 + gc) +: 64] = cur[64*(10 + gc) +: 64] + {63'd0, l_m_stall[4*gl + gc]} +
                                                 {63'd0, l_s_stall[4*gl + gc]};
            end
            always @(posedge mclk)
                if (!rst_n)
                    ls[64*14*gl +: 64*14] <= {(64*14){1'b0}};
                else if (main_clk && l_used[gl])
                    ls[64*14*gl +: 64*14] <= nxt;
        end
    endgenerate

    // the completion buffer: a response clock may push, the caller may pop (only between model cycles
    // while !run, so never in the same clock)
    reg [255:0] cq [0:COMPQ-1];
    reg [9:0]   cq_head;
    reg [10:0]  cq_count;
    assign comp_count = {21'd0, cq_count};
    assign comp_head = cq[cq_head];
    wire rq_fin = rsp_clk && rq_comp_valid[rreq];
    wire do_pop = comp_pop && cq_count != 11'd0;
    wire [9:0] cq_tail = cq_head + cq_count[9:0];

    reg [31:0] err_q;
    assign model_error = err_q;
    always @(posedge mclk) begin
        if (!rst_n) begin
            mid_q <= 1'b0;
            rb_q <= 1'b0;
            sc_q <= 2'd0;
            cq_head <= 10'd0;
            cq_count <= 11'd0;
            err_q <= 32'd0;
            st_cycles <= 64'd0;
            st_rbytes <= 64'd0;
            st_wbytes <= 64'd0;
            h_cnt0 <= 64'd0; h_cnt1 <= 64'd0;
            h_sum0 <= 64'd0; h_sum1 <= 64'd0;
            h_max0 <= 64'd0; h_max1 <= 64'd0;
            h_log <= {(32*2*HLOG){1'b0}};
            clr_q <= 15'd0;
            if (p_hosts > NH || p_devices > ND || pw(`CXL_P_DRAM_CHANNELS) > NCH || (SW == 0 && sw)
                || p_banks_over || pw(`CXL_P_DRAM_READ_QUEUE) > NQ || pw(`CXL_P_DRAM_WRITE_QUEUE) > NQ)
                err_q <= 32'd4;
        end else begin
            if (clearing)
                clr_q <= clr_q + 15'd1;
            if (rq_fin) begin
                if (cq_count != COMPQ[10:0]) begin
                    cq[cq_tail] <= rq_comp[rreq];
                    cq_count <= cq_count + 11'd1;
                end else begin
                    err_q <= 32'd3;
                end
            end else if (do_pop) begin
                cq_head <= cq_head + 10'd1;
                cq_count <= cq_count - 11'd1;
            end
            if (rsp_clk) begin
                mid_q <= 1'b1;
                rb_q <= 1'b1;
                if (rwr) begin
                    st_wbytes <= st_wbytes + 64'd64;
                    h_cnt1 <= h_cnt1 + 64'd1;
                    h_sum1 <= h_sum1 + rlat;
                    if (rlat > h_max1) h_max1 <= rlat;
                end else begin
                    st_rbytes <= st_rbytes + 64'd64;
                    h_cnt0 <= h_cnt0 + 64'd1;
                    h_sum0 <= h_sum0 + rlat;
                    if (rlat > h_max0) h_max0 <= rlat;
                end
                if (!lin_hit)
                    h_log[32*log_i +: 32] <= h_log[32*log_i +: 32] + 32'd1;
            end
            if (pre_clk || ks_need)
                mid_q <= 1'b1;
            if (pj_jump)
                mid_q <= 1'b0;   // the jump is the whole cycle (its skip clocks came before it)
            if (bld_clk)
                rb_q <= 1'b1;
            if (sch_clk)
                sc_q <= sc_st + 2'd1;
            if (main_clk) begin
                mid_q <= 1'b0;
                rb_q <= 1'b0;
                sc_q <= 2'd0;
                st_cycles <= st_cycles + 64'd1 + skip_n;
            end
            if (pj_jump) begin
                st_cycles <= st_cycles + pj_amount;
                // model errors in the C's step order: 1 (step 2), 2 (step 3), 1 (step 4), 2 (local_out)
                if (|dv_in_err) err_q <= 32'd1;
                if (lp && |hr_err) err_q <= 32'd2;
                if (lp && sw && (|sw_up_err || |sw_dn_err)) err_q <= 32'd1;
                if (!lp && hr_err[0]) err_q <= 32'd2;
            end
        end
    end

    // ---------------------------------------------------------------- statistics readout
    // C link index: host links 0..H-1, then device links H..H+D-1 (H = hosts at run time)
    wire [31:0] sa = {16'd0, st_addr};
    localparam [31:0] SL32 = `CXL_S_LINK, SD32 = `CXL_S_DEV;
    wire [7:0]  s_lo8 = sa[7:0] - SL32[7:0];   // (sa - CXL_S_LINK) mod 256
    // the divisions by the record sizes in 8 bits (the offsets are below 8 x 14 and 4 x 13 where they are
    // used), as tables of quotient and remainder for every 8-bit offset (constants at elaboration): one
    // 8-input function per bit, where a division by a constant is a subtractor array in synthesis (8
    // dependent compare-and-subtract stages, 27 LUT levels at 8 bits)
    localparam [7:0] LW8 = `CXL_S_LINK_WORDS, DW8 = `CXL_S_DEV_WORDS;
    function [256*16-1:0] divtab(input [7:0] dvs);
        integer ti;
        reg [7:0] tq, tr;
        begin
            divtab = {(256*16){1'b0}};
            for (ti = 0; ti < 256; ti = ti + 1) begin
                tq = ti[7:0] / dvs;
                tr = ti[7:0] % dvs;
                divtab[16*ti +: 16] = {tq, tr};
            end
        end
    endfunction
    localparam [256*16-1:0] LTAB = divtab(LW8), DTAB = divtab(DW8);
    wire [15:0] s_lqr = LTAB[16*s_lo8 +: 16];
    wire [7:0]  s_li8 = s_lqr[15:8], s_lf8 = s_lqr[7:0];
    wire [31:0] s_li = {24'd0, s_li8};
    wire [31:0] s_lp = s_li < p_hosts ? s_li : NH + s_li - p_hosts;    // our link index
    wire [7:0]  s_do8 = sa[7:0] - SD32[7:0];   // (sa - CXL_S_DEV) mod 256
    wire [15:0] s_dqr = DTAB[16*s_do8 +: 16];
    wire [7:0]  s_di8 = s_dqr[15:8], s_df8 = s_dqr[7:0];
    wire [31:0] s_di = {24'd0, s_di8};
    wire [31:0] s_ho = sa - (sa >= `CXL_S_WRITE_LAT ? `CXL_S_WRITE_LAT : `CXL_S_READ_LAT);
    wire        s_hw = sa >= `CXL_S_WRITE_LAT;
    wire [13:0] s_hl = {s_hw, s_ho[12:0]};
    // Two clocks from st_addr to st_data: the first decodes the address into a word kind and the
    // indexes within it (registers a_*), the second selects the word (st_q) or reads the histogram RAM
    // (h_rd). In one clock the decode, the record divisions and the NL x 14-word select were one path
    // of about 60 LUT levels.
    localparam [3:0] A_ZERO = 4'd0, A_CYC = 4'd1, A_RB = 4'd2, A_WB = 4'd3, A_HRAM = 4'd4, A_HLOG = 4'd5,
                     A_HCNT = 4'd6, A_HSUM = 4'd7, A_HMAX = 4'd8, A_LINK = 4'd9, A_DEV = 4'd10, A_SW = 4'd11;
    reg  [3:0]  a_kind, s_kind;
    reg         a_hw;
    reg  [13:0] a_hl;
    reg  [3:0]  a_logi;
    reg  [7:0]  a_lw;                          // word of ls: 14 x link + field (NL <= 8)
    reg  [1:0]  a_di;
    reg  [7:0]  a_df;
    localparam [31:0] HLOG32 = `CXL_S_HIST_LOG_OFF;
    wire [3:0]  s_logi = {s_hw, 3'd0} + s_ho[3:0] - HLOG32[3:0];   // word s_ho - LOG_OFF (< 8) of hist s_hw
    wire [7:0]  s_lw = 8'd14 * s_lp[7:0] + s_lf8;                  // < 14 x NL <= 112 where used
    always @* begin
        if (sa == `CXL_S_CYCLES)
            s_kind = A_CYC;
        else if (sa == `CXL_S_READ_BYTES)
            s_kind = A_RB;
        else if (sa == `CXL_S_WRITE_BYTES)
            s_kind = A_WB;
        else if (sa >= `CXL_S_READ_LAT && sa < `CXL_S_WRITE_LAT + `CXL_S_HIST_WORDS)
            s_kind = s_ho < `CXL_S_HIST_LOG_OFF ? A_HRAM : s_ho < `CXL_S_HIST_COUNT_OFF ? A_HLOG :
                     s_ho == `CXL_S_HIST_COUNT_OFF ? A_HCNT : s_ho == `CXL_S_HIST_SUM_OFF ? A_HSUM :
                     s_ho == `CXL_S_HIST_MAX_OFF ? A_HMAX : A_ZERO;
        else if (sa >= `CXL_S_LINK && sa < `CXL_S_LINK + `CXL_S_LINKS * `CXL_S_LINK_WORDS)
            s_kind = s_lp < NL ? A_LINK : A_ZERO;
        else if (sa >= `CXL_S_DEV && sa < `CXL_S_DEV + `CXL_S_DEVS * `CXL_S_DEV_WORDS)
            s_kind = s_di < ND ? A_DEV : A_ZERO;
        else if (sa == `CXL_S_SWITCH_STALL)
            s_kind = A_SW;
        else
            s_kind = A_ZERO;
    end
    always @(posedge mclk) begin
        a_kind <= s_kind;
        a_hw <= s_hw;
        a_hl <= s_hl;
        a_logi <= s_logi;
        a_lw <= s_lw;
        a_di <= s_di[1:0];
        a_df <= s_df8;
    end
    reg  [63:0] dev_word;
    always @* begin
        dev_word = 64'd0;
        if (a_df == `CXL_S_DEV_READS_OFF) dev_word = dv_reads[64*a_di +: 64];
        else if (a_df == `CXL_S_DEV_WRITES_OFF) dev_word = dv_writes[64*a_di +: 64];
        else if (a_df == `CXL_S_DEV_ACTS_OFF) dev_word = dv_acts[64*a_di +: 64];
        else if (a_df == `CXL_S_DEV_PRES_OFF) dev_word = dv_pres[64*a_di +: 64];
        else if (a_df == `CXL_S_DEV_REFS_OFF) dev_word = dv_refs[64*a_di +: 64];
        else if (a_df == `CXL_S_DEV_ROW_CONFLICTS_OFF) dev_word = dv_conf[64*a_di +: 64];
        else if (a_df == `CXL_S_DEV_INGRESS_OCC_SUM_OFF) dev_word = dv_ios[64*a_di +: 64];
        else if (a_df == `CXL_S_DEV_INGRESS_OCC_MAX_OFF) dev_word = dv_iom[64*a_di +: 64];
        else if (a_df == `CXL_S_DEV_DRAMQ_OCC_SUM_OFF) dev_word = dv_dqs[64*a_di +: 64];
        else if (a_df >= `CXL_S_DEV_DEVLOAD_OFF && a_df < `CXL_S_DEV_DEVLOAD_OFF + 4)
            dev_word = dv_devload[256*a_di + 64*(a_df - `CXL_S_DEV_DEVLOAD_OFF) +: 64];
    end
    // st_data: a registered word (st_q), or the histogram RAM's registered read (h_rd) when st_hist
    reg  [63:0] st_q;
    reg         st_hist;
    assign st_data = st_hist ? h_rd : st_q;
    always @(posedge mclk) begin
        st_hist <= a_kind == A_HRAM;
        case (a_kind)
            A_CYC:   st_q <= st_cycles;
            A_RB:    st_q <= st_rbytes;
            A_WB:    st_q <= st_wbytes;
            A_HLOG:  st_q <= h_log[64*a_logi +: 64];
            A_HCNT:  st_q <= a_hw ? h_cnt1 : h_cnt0;
            A_HSUM:  st_q <= a_hw ? h_sum1 : h_sum0;
            A_HMAX:  st_q <= a_hw ? h_max1 : h_max0;
            A_LINK:  st_q <= ls[64*a_lw +: 64];
            A_DEV:   st_q <= dev_word;
            A_SW:    st_q <= sw_stall;
            default: st_q <= 64'd0;
        endcase
    end

    // ---------------------------------------------------------------- submit and idle
    assign sub_ready = sub_r < 16'd16 && rq_sub_ready[sub_r[3:0]];

    // ---------------------------------------------------------------- idle skip (header)
    // quiet_c: the C's quiet_until(m) > now; quiet_u: quiet_c without the bound on the next event;
    // all_done: no requester has a descriptor left to issue, so quiet_u && all_done is cxl_model_idle (the
    // `idle` output). The next event's bound t = min(run_until, the requesters' next issue) is after now
    // exactly when run_until is: a requester whose next issue is not after now makes the cycle not quiet
    // by itself. So the quiet flags compare only with now, in parallel; the distance to the next event
    // (the minimum over the requesters, run_until and the refresh deadlines) is taken over the skip clocks.
    reg        quiet_c, quiet_u, quiet_x, all_done, settled_l, rest0_c, same_c, nonref_c;
    reg [31:0] ref_c;
    always @* begin
        quiet_c = 1'b1;
        all_done = 1'b1;
        rest0_c = 1'b1;
        same_c = 1'b1;
        nonref_c = 1'b0;
        settled_l = 1'b1;
        ref_c = 32'h7fffffff;
        for (r = 0; r < NREQ; r = r + 1)
            if (r < p_requesters) begin
                if (rq_quiet[64*r +: 64] <= now_q || hq_count[32*r +: 32] != 32'd0)
                    quiet_c = 1'b0;
                if (rq_quiet[64*r +: 64] != 64'hffffffffffffffff)
                    all_done = 1'b0;
            end
        for (h = 0; h < NH; h = h + 1)
            if (h < p_hosts) begin
                if (hr_count[32*h +: 32] != 32'd0 || (lp && (!um_idle[h] || !us_idle[h])))
                    quiet_c = 1'b0;
                if (lp && (um_acc_neg[h] || us_acc_neg[h] || um_crp[h] || us_crp[h]))
                    settled_l = 1'b0;
            end
        if (lp && sw) begin
            if (!sw_idle)
                quiet_c = 1'b0;
            for (d = 0; d < ND; d = d + 1)
                if (d < p_devices) begin
                    if (!dm_idle[d] || !ds_idle[d])
                        quiet_c = 1'b0;
                    if (dm_acc_neg[d] || ds_acc_neg[d] || dm_crp[d] || ds_crp[d])
                        settled_l = 1'b0;
                end
        end
        quiet_u = quiet_c;
        if (run_until <= now_q)
            quiet_c = 1'b0;
        quiet_x = quiet_c;   // quiet but for refreshes due
        for (d = 0; d < ND; d = d + 1)
            if (d < p_devices) begin
                if (!dv_idle[d])
                    quiet_x = 1'b0;
                if (!dv_idle[d] || dv_refdue[d]) begin
                    quiet_c = 1'b0;
                    quiet_u = 1'b0;
                end
                if ($signed(dv_refmin[32*d +: 32]) < $signed(ref_c))
                    ref_c = dv_refmin[32*d +: 32];
                if (dv_rest[16*d +: 16] != 16'd0)
                    rest0_c = 1'b0;
                if (!dv_same[d])
                    same_c = 1'b0;
                if (dv_nonref[d])
                    nonref_c = 1'b1;
            end
    end
    assign idle = quiet_u && all_done;

    // Skip clocks (3, before the schedule and build clocks, in a cycle that is quiet but perhaps for a
    // refresh due, with no response clock before it): k, the cycles to the next event, registered over
    // three clocks that move nothing else (every input below keeps its value through them):
    //   ks0  the minimum of each group of 4 requesters' next issue (requesters not in use count as never)
    //   ks1  t, the minimum of those and run_until
    //   ks2  kj = t - now (a period jump's bound), k = min(kj, the next refresh deadline), k - 1, k > 1, and
    //        whether every device's DRAM timing counters reach 0 within k cycles (dram_chan.v's `rest`)
    // Each minimum is taken by comparing every pair at once (one compare level, then a one-hot select),
    // not as a chain or tree of compare-and-select stages. The decisions of the cycle (the skip, the
    // period jump) then read registers only.
    localparam integer NG = NREQ / 4;         // requester groups (NREQ a multiple of 4, at most 16)
    reg  [1:0]  kq_q;                          // skip clocks taken in this cycle (3: done)
    assign      ks_need = main_raw && !rb_q && quiet_x && kq_q != 2'd3;
    wire        kq_done = kq_q == 2'd3;
    reg  [63:0] ks_g [0:NG-1];
    reg  [63:0] ks_t, ks_kj, ks_k1;
    reg         ks_gt1, ks_rest, ks_qc, ks_sl;
    reg  [63:0] g_in  [0:NG-1][0:3];
    reg  [63:0] g_min [0:NG-1];
    reg  [63:0] t_in  [0:NG];
    reg  [63:0] t_min;
    reg         g_le  [0:NG-1][0:3][0:3];
    reg         t_le  [0:NG][0:NG];
    reg         mwin;
    integer     gi, gj, gm;
    always @* begin
        // ks0: within each group, v[i] wins when it is <= every later value and < every earlier one
        for (gi = 0; gi < NG; gi = gi + 1) begin
            for (gj = 0; gj < 4; gj = gj + 1)
                g_in[gi][gj] = 4 * gi + gj < p_requesters ? rq_quiet[64*(4*gi+gj) +: 64] : 64'hffffffffffffffff;
            for (gj = 0; gj < 4; gj = gj + 1)
                for (gm = 0; gm < 4; gm = gm + 1)
                    g_le[gi][gj][gm] = g_in[gi][gj] <= g_in[gi][gm];
            g_min[gi] = 64'd0;
            for (gj = 0; gj < 4; gj = gj + 1) begin
                mwin = 1'b1;
                for (gm = 0; gm < 4; gm = gm + 1)
                    if ((gm > gj && !g_le[gi][gj][gm]) || (gm < gj && g_le[gi][gm][gj]))
                        mwin = 1'b0;
                if (mwin)
                    g_min[gi] = g_min[gi] | g_in[gi][gj];
            end
        end
        // ks1: the same over the groups' minima and run_until
        for (gi = 0; gi < NG; gi = gi + 1)
            t_in[gi] = ks_g[gi];
        t_in[NG] = run_until;
        for (gj = 0; gj <= NG; gj = gj + 1)
            for (gm = 0; gm <= NG; gm = gm + 1)
                t_le[gj][gm] = t_in[gj] <= t_in[gm];
        t_min = 64'd0;
        for (gj = 0; gj <= NG; gj = gj + 1) begin
            mwin = 1'b1;
            for (gm = 0; gm <= NG; gm = gm + 1)
                if ((gm > gj && !t_le[gj][gm]) || (gm < gj && t_le[gm][gj]))
                    mwin = 1'b0;
            if (mwin)
                t_min = t_min | t_in[gj];
        end
    end
    // ks2: both candidates for k (kj and the refresh bound) and what depends on k, side by side, then
    // the choice
    wire [63:0] k_j   = ks_t - now_q;
    wire [63:0] k_j1  = ks_t - now_q - 64'd1;
    wire [63:0] k_r   = {32'd0, ref_c};
    wire        k_ref = k_r < k_j;               // the refresh deadline comes first
    reg         rest_j, rest_r;
    always @* begin
        rest_j = 1'b1;
        rest_r = 1'b1;
        for (d = 0; d < ND; d = d + 1)
            if (d < p_devices) begin
                if ({48'd0, dv_rest[16*d +: 16]} > k_j)
                    rest_j = 1'b0;
                if ({48'd0, dv_rest[16*d +: 16]} > k_r)
                    rest_r = 1'b0;
            end
    end
    always @(posedge mclk) begin
        if (!rst_n) begin
            kq_q <= 2'd0;
        end else begin
            if (ks_need)
                kq_q <= kq_q + 2'd1;
            if (main_clk || pj_jump)
                kq_q <= 2'd0;
            if (ks_need && kq_q == 2'd0)
                for (gi = 0; gi < NG; gi = gi + 1)
                    ks_g[gi] <= g_min[gi];
            if (ks_need && kq_q == 2'd1)
                ks_t <= t_min;
            if (ks_need && kq_q == 2'd2) begin
                ks_qc <= quiet_c;
                ks_sl <= settled_l;
                ks_kj <= k_j;
                ks_k1 <= k_ref ? k_r - 64'd1 : k_j1;
                ks_gt1 <= k_ref ? k_r > 64'd1 : k_j > 64'd1;
                ks_rest <= k_ref ? rest_r : rest_j;
            end
        end
    end
    // the skip: only in a cycle with no response or build clock before its main clock (rb_q low): the
    // state is then the cycle's start, where the C decides (responses popped in this cycle's response
    // clocks may have completed a descriptor that a stopping run returns with, as the C does before it
    // skips). skip_ok is read in main clocks only.
    wire settled_c = ks_sl && ks_rest;
    wire skip_ok = kq_done && !rb_q && ks_qc && settled_c && ks_gt1;
    assign skip_c = main_clk && skip_ok;
    assign skip_n = skip_ok ? ks_k1 : 64'd0;
    assign skip_n32 = pj_jump ? (pj_amount[63:32] != 32'd0 || pj_amount[31:0] == 32'd0 ? 32'hffffffff
                                                                                       : pj_amount[31:0] - 32'd1)
                              : skip_n[63:32] != 32'd0 ? 32'hffffffff : skip_n[31:0];

    // ---------------------------------------------------------------- period jump (header)
    reg        pj_valid;
    reg [63:0] pj_now, pj_len;
    reg [5:0]  pj_sh;
    reg [3:0]  pj_miss;
    reg [63:0] pj_amt;           // pj_len << pj_sh, kept as a register (moved with pj_len and pj_sh)
    wire [63:0] pj_l = now_q - pj_now;
    assign pj_amount = pj_amt;
    // (decided in the cycle's first clock after its skip clocks, so that a jump takes the place of the
    // schedule clocks; the copy and its comparisons are taken in the main clock, with the DRAM's; the skip
    // clocks come only when quiet_x holds, and it holds through the cycle)
    wire cand = main_raw && !rb_q && kq_done && settled_c && rest0_c && dv_canon[0];
    wire cand_m = cand && main_clk;
    wire pj_known = cand && pj_valid && pj_len != 64'd0 && same_c;
    assign pj_jump = pj_known && pj_amount <= ks_kj;
    wire pj_shrink = pj_known && pj_amount > ks_kj && pj_sh != 6'd0;
    assign pj_hold = pj_jump || pj_shrink;
    wire pj_first = cand_m && !pj_valid;
    wire pj_found = cand_m && pj_valid && pj_len == 64'd0 && same_c && pj_l[1:0] == 2'd0 && pj_l != 64'd0;
    wire pj_resnap = cand_m && pj_valid && pj_len == 64'd0 && !pj_found && pj_miss == 4'd15;
    wire pj_snap = pj_first || pj_resnap;
    wire pj_match = pj_found;
    wire pj_forget = sub_clk || (main_raw && (!quiet_x || (main_clk && nonref_c)));
    always @(posedge mclk) begin
        if (!rst_n || pj_forget) begin
            pj_valid <= 1'b0;
            pj_len <= 64'd0;
            pj_amt <= 64'd0;
            pj_sh <= 6'd0;
            pj_miss <= 4'd0;
        end else if (pj_jump) begin
            if (pj_amount[63:56] == 8'd0) begin
                pj_sh <= pj_sh + 6'd1;
                pj_amt <= {pj_amt[62:0], 1'b0};
            end
        end else if (pj_shrink) begin
            pj_sh <= pj_sh - 6'd1;
            pj_amt <= {1'b0, pj_amt[63:1]};
        end else if (pj_snap) begin
            pj_valid <= 1'b1;
            pj_now <= now_q;
            pj_len <= 64'd0;
            pj_amt <= 64'd0;
            pj_sh <= 6'd0;
            pj_miss <= 4'd0;
        end else if (pj_found) begin
            pj_len <= pj_l;
            pj_amt <= pj_l;
        end else if (cand_m && pj_valid && pj_len == 64'd0) begin
            pj_miss <= pj_miss + 4'd1;
        end
    end
endmodule

`default_nettype wire

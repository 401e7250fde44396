// ring_ram.v - the storage of a ring buffer that is written and read at several consecutive slots in one
// clock, built so that synthesis maps it to ordinary one-write-port RAMs (used by mpipe.v and switch.v).
//
// Each clock with `we`, writes i = 0 .. wn-1 (wn <= NW) store wdata[W*i +: W] in slot (wbase + i) mod
// DEPTH. Reads are asynchronous: rdata[W*j +: W] is slot (rbase + j) mod DEPTH, j = 0 .. NR-1, as stored
// before this clock's writes. wbase and rbase are < DEPTH.
//
// Why banks: a memory with NW > 1 write ports cannot be a block or LUT RAM (those have one write port),
// so Yosys builds it in flip-flops with an NW-way select in front of every bit and a DEPTH:1 read
// multiplexer behind it (about 6 LUTs per stored bit at NW 10, 11 at NW 16: docs/rtl-synthesis.md). The
// writes and reads of one clock go to consecutive slots, so with B banks (B the smallest power of two
// >= NW and >= NR) and slot s in bank s mod B at index s / B, each bank takes at most one write and one
// read per clock: B simple dual-port RAMs of DEPTH / B entries (LUT RAM with the asynchronous read), with
// a rotator of the NW writes in front and of the NR reads behind. Where DEPTH is not a multiple of B (or
// B = 1, or DEPTH = B) the ring is one memory with NW write ports, as before.
//
// The verilator backend's speed build (CXL_SIM_FLAT_RINGS) takes the one-memory form for every ring (a
// multi-port array costs Verilator nothing extra, the banks' rotators do: docs/rtl.md); mpipe.v and
// switch.v then keep their rings as plain arrays of their own (see there).
`default_nettype none

module ring_ram #(
    parameter integer DEPTH = 256,  // slots, >= NW, >= NR
    parameter integer W     = 184,  // bits per slot
    parameter integer NW    = 8,    // writes per clock, 1 .. 255
    parameter integer NR    = 1     // reads per clock, 1 .. DEPTH
) (
    input  wire            clk,
    input  wire            we,      // the writes happen on this edge
    input  wire [31:0]     wbase,   // slot of write 0, < DEPTH
    input  wire [31:0]     wn,      // writes, <= NW (more are ignored)
    input  wire [NW*W-1:0] wdata,   // write i at [W*i +: W]
    input  wire [31:0]     rbase,   // slot of read 0, < DEPTH
    output reg  [NR*W-1:0] rdata    // slot rbase + j at [W*j +: W]
);
    function integer pow2_ge(input integer n);
        integer p;
        begin
            p = 1;
            while (p < n)
                p = p * 2;
            pow2_ge = p;
        end
    endfunction

    localparam integer NMAX = (NW > NR) ? NW : NR;
    localparam integer B    = pow2_ge(NMAX);                 // banks
    localparam integer BD   = DEPTH / B;                      // entries per bank
`ifdef CXL_SIM_FLAT_RINGS
    localparam BANKED = 1'b0;
`else
    localparam BANKED = B >= 2 && BD >= 2 && BD * B == DEPTH;  // 1 bit
`endif
    localparam integer AW   = (DEPTH > 1) ? $clog2(DEPTH) : 1;
    localparam [31:0] DEPTH32 = DEPTH;
    localparam [31:0] NW32    = NW;

    // (a + b) mod DEPTH for a < DEPTH, b <= DEPTH
    function [31:0] slot(input [31:0] a, input [31:0] b);
        reg [31:0] s;
        begin
            s = a + b;
            if (s >= DEPTH32)
                s = s - DEPTH32;
            slot = s;
        end
    endfunction

    function [AW-1:0] slot_aw(input [31:0] a, input [31:0] b);
        /* verilator lint_off UNUSEDSIGNAL */  // slots are < DEPTH
        reg [31:0] s;
        /* verilator lint_on UNUSEDSIGNAL */
        begin
            s = slot(a, b);
            slot_aw = s[AW-1:0];
        end
    endfunction

    genvar b;
    generate
        if (BANKED) begin : banked
            localparam integer LB  = $clog2(B);
            localparam integer BAW = $clog2(BD);
            localparam [31:0] BM = B - 1;
            wire [B*W-1:0] bank_q;   // bank k's read at [W*k +: W]
            // the write rotator: bank k takes write (k - wbase) mod B, i.e. the B-lane vector of writes
            // (lanes NW.. empty) rotated up by wbase mod B, as a barrel rotator of LB stages (stage s
            // rotates by 2^s when bit s of wbase is set). Two stages fit one 6-input LUT per bit, so it
            // costs about B x W x LB / 2 LUTs at LB / 2 levels, where a B-way select per bank costs
            // about B x W x B / 4 (a 16-way select is 4 LUTs and 3 MUXF per bit).
            wire [B*W-1:0] wlane0;   // write i in lane i, lanes NW .. B-1 empty
            wire [LB-1:0]  wsh = wbase[LB-1:0];
            if (B > NW) begin : wpad
                assign wlane0 = {{((B-NW)*W){1'b0}}, wdata};
            end else begin : wfull
                assign wlane0 = wdata;
            end
            reg [B*W-1:0] wrot, wrot_st;   // after each stage; lane k at [W*k +: W]
            integer st, kl;
            always @* begin
                wrot = wlane0;
                for (st = 0; st < LB; st = st + 1) begin
                    for (kl = 0; kl < B; kl = kl + 1)   // lane kl takes lane (kl - 2^st) mod B
                        wrot_st[W*kl +: W] = wsh[st] ? wrot[W*((kl + B - (1 << st)) % B) +: W] : wrot[W*kl +: W];
                    wrot = wrot_st;
                end
            end
            for (b = 0; b < B; b = b + 1) begin : bank
                localparam [31:0] B32 = b;
                reg [W-1:0] mem [0:BD-1];
                // the write (if any) that lands in this bank: write wi, slot wbase + wi
                wire [31:0] wi = (B32 - wbase) & BM;
                /* verilator lint_off UNUSEDSIGNAL */  // bits below LB select the bank, the slot is < DEPTH
                wire [31:0] ws = slot(wbase, wi);
                // the read that lands in this bank: read ri, slot rbase + ri
                wire [31:0] ri = (B32 - rbase) & BM;
                wire [31:0] rs = slot(rbase, ri);
                /* verilator lint_on UNUSEDSIGNAL */
                always @(posedge clk)
                    if (we && wi < wn && wi < NW32)
                        mem[ws[LB +: BAW]] <= wrot[W*b +: W];
                assign bank_q[W*b +: W] = mem[rs[LB +: BAW]];
            end
            // the read rotator: read j comes from bank (rbase + j) mod B
            integer j, k;
            always @*
                for (j = 0; j < NR; j = j + 1) begin
                    rdata[W*j +: W] = {W{1'b0}};
                    for (k = 0; k < B; k = k + 1)
                        if (((rbase + j) & BM) == k)
                            rdata[W*j +: W] = bank_q[W*k +: W];
                end
        end else begin : flat
            reg [W-1:0] mem [0:DEPTH-1];
            integer i, j;
            always @(posedge clk)
                if (we)
                    for (i = 0; i < NW; i = i + 1)
                        if (i < wn)
                            mem[slot_aw(wbase, i)] <= wdata[W*i +: W];
            always @*
                for (j = 0; j < NR; j = j + 1)
                    rdata[W*j +: W] = mem[slot_aw(rbase, j)];
        end
    endgenerate
endmodule

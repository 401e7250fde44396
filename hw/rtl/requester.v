// requester.v - a requester port (hw/hls/requester.c, docs/cxl-model.md section 4.2): expands descriptors
// into 64 B MemRd / MemWr and tracks their tags.
//
// One clock edge performs, in this order, the C calls of one model step for this requester:
//   1. rsp_valid: requester_complete(rsp_tag, now): frees the tag (pushed on top of the free stack),
//      counts the response; comp_valid with the completion record when its descriptor finished, and the
//      latency (rsp_lat, rsp_write) for the statistics, combinationally in this cycle;
//   2. iss_en (the host path has room): requester_issue(idx, host, now): iss_valid and iss_msg in this
//      cycle, from the state after step 1 (a tag freed in step 1 is handed out again, as in the C);
//   3. sub_valid && sub_ready: requester_submit: the descriptor is stored at the edge and can issue from
//      the next clock on. A submit has a clock of its own: sub_valid never comes with rsp_valid or
//      iss_en (the C submits between model cycles), which gives each slot table one write port.
// The model may deliver several responses to one requester in one model cycle: the caller then spends
// one clock per response with the same `now` (and iss_en only on the last), exactly the C's call order.
// `tags` (outstanding tags, capped at 256) is sampled during reset (requester_init).
//
// issue_pos is not stored: the C's issue position is always at or before the first descriptor with
// lines left, and every descriptor before it is fully issued, so the RTL issues from the first ring
// entry with issued < lines (a 16-way priority pick) and gets the same decisions; quiet_until
// (requester_quiet_until) equals the C's whenever tags > 0.
`default_nettype none
`include "cxl_defs.vh"

// Every port but clk and iss_valid (which feeds back to iss_en through the parent's logic) is marked
// public_flat_rd: Verilator then keeps each as a variable of the module's own instead of reading the
// parent's signal directly, so the 16 instances share one copy of the generated code instead of one
// each (docs/rtl.md, "Simulation speed"). Synthesis reads the marks as comments.
module requester (
    input  wire        clk,
    input  wire        rst_n /* verilator public_flat_rd */,
    input  wire        ce /* verilator public_flat_rd */,   // clock enable: state advances only on edges with ce
    input  wire [63:0] now /* verilator public_flat_rd */,
    input  wire [31:0] tags /* verilator public_flat_rd */,
    input  wire [7:0]  idx /* verilator public_flat_rd */,
    input  wire [7:0]  host /* verilator public_flat_rd */,
    // requester_submit (cxl_desc)
    input  wire        sub_valid /* verilator public_flat_rd */,
    output wire        sub_ready /* verilator public_flat_rd */,
    input  wire [63:0] sub_id /* verilator public_flat_rd */,
    input  wire [63:0] sub_base /* verilator public_flat_rd */,
    input  wire [63:0] sub_bytes /* verilator public_flat_rd */,
    input  wire [63:0] sub_footprint /* verilator public_flat_rd */,
    input  wire [63:0] sub_not_before /* verilator public_flat_rd */,
    input  wire [31:0] sub_stride /* verilator public_flat_rd */,
    input  wire [31:0] sub_seed /* verilator public_flat_rd */,
    input  wire [31:0] sub_gap_cycles /* verilator public_flat_rd */,
    input  wire [15:0] sub_requester /* verilator public_flat_rd */,
    input  wire [15:0] sub_max_outstanding /* verilator public_flat_rd */,
    input  wire [7:0]  sub_pattern /* verilator public_flat_rd */,
    input  wire [7:0]  sub_rd_weight /* verilator public_flat_rd */,
    input  wire [7:0]  sub_wr_weight /* verilator public_flat_rd */,
    // requester_complete
    input  wire        rsp_valid /* verilator public_flat_rd */,
    input  wire [7:0]  rsp_tag /* verilator public_flat_rd */,
    output wire        comp_valid /* verilator public_flat_rd */,
    output wire [63:0] comp_id /* verilator public_flat_rd */,
    output wire [63:0] comp_start_cycle /* verilator public_flat_rd */,
    output wire [63:0] comp_end_cycle /* verilator public_flat_rd */,
    output wire [31:0] comp_requester /* verilator public_flat_rd */,
    output wire [31:0] comp_lines /* verilator public_flat_rd */,
    output wire [63:0] rsp_lat /* verilator public_flat_rd */,
    output wire        rsp_write /* verilator public_flat_rd */,
    // requester_issue
    input  wire        iss_en /* verilator public_flat_rd */,
    output wire        iss_valid,
    output wire [`CXL_MSG_W-1:0] iss_msg /* verilator public_flat_rd */,
    // requester_quiet_until
    output wire [63:0] quiet_until /* verilator public_flat_rd */,
    // requester_space: descriptor slots free (start of the cycle)
    output wire [4:0]  space /* verilator public_flat_rd */
);
    localparam [7:0] PAT_RANDOM = 8'd1, PAT_STRIDE = 8'd2;

    // descriptor ring (cxl_dslot)
    reg [63:0] d_id [0:15];
    reg [63:0] d_base [0:15];
    reg [63:0] d_fp [0:15];
    reg [31:0] d_stride [0:15];
    reg [31:0] d_gap [0:15];
    reg [15:0] d_req [0:15];
    reg [15:0] d_maxo [0:15];
    reg [7:0]  d_pat [0:15];
    reg [7:0]  d_rw [0:15];
    reg [7:0]  d_ww [0:15];
    reg [63:0] s_lines [0:15];
    // lines left to issue and to complete (the C's lines - issued and lines - done), so that the flags below
    // follow from a compare with a constant instead of an increment and a 64-bit compare with s_lines
    reg [63:0] s_ileft [0:15];
    reg [63:0] s_dleft [0:15];
    reg [63:0] s_start [0:15];
    reg [63:0] s_next [0:15];
    reg [63:0] s_rng [0:15];
    reg [63:0] s_off [0:15];
    reg [31:0] s_mix [0:15];
    // outstanding lines per slot: at most the tags (256), so 9 bits hold the C's uint32_t exactly. The
    // only slot table with two writes in one clock (the response's slot and the issuing slot): registers.
    reg [8:0]  s_outst [0:15];
    // per-slot flags kept beside the counters, so the retire and issue scans read one bit per slot
    // instead of comparing two 64-bit counters per slot (32 comparators): s_fin[i] = !(s_done < s_lines),
    // s_left[i] = s_issued < s_lines, each updated with the counter it follows; s_begun[i]: a line issued
    // (s_issued != 0, when the descriptor's start cycle is taken)
    reg [15:0] s_fin, s_left, s_begun;
    reg [3:0]  head;
    reg [4:0]  count;
    // tags
    reg [7:0]  free_tags [0:255];
    reg [8:0]  nfree, ntags, low;
    reg [63:0] tag_issue [0:255];
    reg [3:0]  tag_slot [0:255];
    reg        tag_write [0:255];

    // ---- 1. complete ----
    wire [3:0]  cs = tag_slot[rsp_tag];
    // !(done + 1 < lines): at most one line left to complete (a response comes only for an issued line,
    // so lines - done >= 1 then)
    wire [63:0] dleft = s_dleft[cs];
    wire        cfin = rsp_valid && dleft[63:1] == 63'd0;
    assign comp_valid = cfin;
    assign comp_id = d_id[cs];
    assign comp_start_cycle = s_start[cs];
    assign comp_end_cycle = now;
    assign comp_requester = {16'd0, d_req[cs]};
    assign comp_lines = s_lines[cs][31:0];
    assign rsp_lat = now - tag_issue[rsp_tag];
    assign rsp_write = tag_write[rsp_tag];

    // finished descriptors retire from the head, in order (only when one finished): the slots' finished
    // flags (with the slot completed in this cycle, which is finished exactly when cfin) in age order, a
    // rotation by the head, and the run of ones from the oldest as the lowest zero (a carry chain)
    function [15:0] rot16(input [15:0] v, input [3:0] r);   // bit k: v[(r + k) mod 16]
        /* verilator lint_off UNUSEDSIGNAL */
        reg [31:0] w;
        /* verilator lint_on UNUSEDSIGNAL */
        begin
            w = {v, v} >> r;
            rot16 = w[15:0];
        end
    endfunction
    function [15:0] below16(input [4:0] n);                 // bits 0 .. n-1 (all when n >= 16)
        below16 = n[4] ? 16'hffff : ~(16'hffff << n[3:0]);
    endfunction
    function [4:0] enc16(input [15:0] oh);                  // index of a one-hot (16 when none)
        enc16 = {oh == 16'd0, |(oh & 16'hff00), |(oh & 16'hf0f0), |(oh & 16'hcccc), |(oh & 16'haaaa)};
    endfunction
    /* verilator lint_off UNUSEDSIGNAL */  // one-hot helpers: a few of their bits
    wire [15:0] fin_age = rot16(s_fin | (rsp_valid ? 16'd1 << cs : 16'd0), head) & below16(count);
    wire [15:0] ret_zero = ~fin_age & (fin_age + 16'd1);  // the lowest zero
    /* verilator lint_on UNUSEDSIGNAL */
    wire [4:0]  n_ret = cfin ? enc16(ret_zero) : 5'd0;
    wire [4:0] count_r = count - n_ret;
    assign sub_ready = count_r < 5'd16;
    assign space = 5'd16 - count;

    // ---- 2. issue ----
    // the oldest descriptor with lines left (retired ones are fully issued, so retiring does not move it):
    // the flags in age order (rotated by the head), the lowest set bit, its age back to a slot
    /* verilator lint_off UNUSEDSIGNAL */
    wire [15:0] left_age = rot16(s_left, head) & below16(count);
    wire [15:0] left_oh = left_age & (~left_age + 16'd1);
    wire [4:0]  left_k = enc16(left_oh);
    /* verilator lint_on UNUSEDSIGNAL */
    wire        found = left_age != 16'd0;
    wire [3:0]  s = head + left_k[3:0];
    wire [9:0]  nfree1 = {1'b0, nfree} + {9'd0, rsp_valid};
    wire [8:0]  outst1 = s_outst[s] - {8'd0, rsp_valid && cs == s};
    wire        go = iss_en && nfree1 != 10'd0 && found && !(now < s_next[s]) &&
                     {7'd0, outst1} < d_maxo[s];
    // free_tags below `low` (the lowest nfree since reset) were never written: they still hold their
    // initial value tags - 1 - i, so the stack needs no reset loop (it can map to RAM)
    wire [7:0]  ntop = nfree[7:0] - 8'd1;
    wire [7:0]  top_tag = nfree <= low ? ntags[7:0] - 8'd1 - ntop : free_tags[ntop];
    wire [7:0]  tag = rsp_valid ? rsp_tag : top_tag;
    // read/write mix: line i is a write when floor((i+1) w / (r+w)) > floor(i w / (r+w))
    wire [31:0] macc = s_mix[s] + {24'd0, d_ww[s]};
    wire [31:0] mtot = {24'd0, d_rw[s]} + {24'd0, d_ww[s]};
    wire        is_wr = !(macc < mtot);
    // addresses: RANDOM takes the high half of xorshift64 scaled to the footprint's lines
    wire [63:0] x0 = s_rng[s];
    wire [63:0] x1 = x0 ^ (x0 << 13);
    wire [63:0] x2 = x1 ^ (x1 >> 7);
    wire [63:0] rng_new = x2 ^ (x2 << 17);
    wire [63:0] fp_lines = d_fp[s] >> 6;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [63:0] rprod = {32'd0, rng_new[63:32]} * fp_lines; // modulo 2^64, as the C
    /* verilator lint_on UNUSEDSIGNAL */
    wire [63:0] roff = {26'd0, rprod[63:32], 6'd0};
    wire [63:0] step = d_pat[s] == PAT_STRIDE ? {32'd0, d_stride[s]} : 64'd64;
    wire [63:0] noff = s_off[s] + step;
    wire        random = d_pat[s] == PAT_RANDOM;
    wire [63:0] addr = d_base[s] + (random ? roff : s_off[s]);
    assign iss_valid = go;
    assign iss_msg = {8'd0, 8'd0, host, 7'd0, is_wr, idx, 8'd0, tag, addr};

    assign quiet_until = nfree != ntags ? 64'd0 : !found ? 64'hffffffffffffffff : s_next[s];

    // ---- 3. submit ----
    wire [3:0]  ns = head + count[3:0];
    wire [63:0] sub_fp = sub_footprint == 64'd0 ? sub_bytes : sub_footprint;
    wire        no_w = sub_rd_weight == 8'd0 && sub_wr_weight == 8'd0;
    // splitmix-style scramble of (seed, id): neighbouring ids give unrelated streams; never 0
    wire [63:0] z0 = {sub_seed, 32'd0} ^ sub_id ^ 64'h9E3779B97F4A7C15;
    wire [63:0] z1 = (z0 ^ (z0 >> 30)) * 64'hBF58476D1CE4E5B9;
    wire [63:0] z2 = (z1 ^ (z1 >> 27)) * 64'h94D049BB133111EB;
    wire [63:0] z3 = z2 ^ (z2 >> 31);
    wire [8:0]  tags_cap = tags > 32'd256 ? 9'd256 : tags[8:0];
    wire [63:0] ileft = s_ileft[s];
    wire [63:0] ileft1 = ileft - 64'd1;
    wire [63:0] sub_lines = sub_bytes >> 6;

    // A submit (sub_valid) never comes in the clock of a response or an issue (rsp_valid, iss_en): the C
    // calls requester_submit between model cycles (cxl_model_submit) and the others within one, and
    // cxl_model.v submits only in clocks between model cycles. So each slot table below has one write
    // port: the submitted slot (ns) or, in a model cycle, the issuing slot (s) or the responding slot (cs).
    // With their asynchronous reads the tables are LUT RAM (16 deep), not registers with a write
    // multiplexer per bit; only the flags the scans read (s_fin, s_left) and s_outst are registers.
    wire        sub_we = rst_n && ce && sub_valid && sub_ready;
    wire        go_we  = rst_n && ce && go;
    wire        rsp_we = rst_n && ce && rsp_valid;
    wire [3:0]  wa_s = sub_we ? ns : s;    // the issue-side tables' write address
    wire [3:0]  wa_c = sub_we ? ns : cs;   // the response-side table's
    wire [63:0] sub_rng = z3 != 64'd0 ? z3 : 64'd1;
    wire [63:0] off_new = noff >= d_fp[s] ? noff - d_fp[s] : noff;
    wire [63:0] next_new = now + (d_gap[s] != 32'd0 ? {32'd0, d_gap[s]} : 64'd1);

    // descriptor fields: written at submit only
    always @(posedge clk)
        if (sub_we) begin
            d_id[ns] <= sub_id;
            d_base[ns] <= sub_base;
            d_fp[ns] <= sub_fp;
            d_stride[ns] <= sub_stride;
            d_gap[ns] <= sub_gap_cycles;
            d_req[ns] <= sub_requester;
            d_maxo[ns] <= sub_max_outstanding;
            d_pat[ns] <= sub_pattern;
            d_rw[ns] <= no_w ? 8'd1 : sub_rd_weight;
            d_ww[ns] <= sub_wr_weight;
            s_lines[ns] <= sub_lines;
        end
    // issue-side slot state: set at submit, moved by an issue of that slot
    always @(posedge clk) begin
        if (sub_we || go_we) begin
            s_ileft[wa_s] <= sub_we ? sub_lines : ileft1;
            s_next[wa_s] <= sub_we ? sub_not_before : next_new;
            s_mix[wa_s] <= sub_we ? 32'd0 : is_wr ? macc - mtot : macc;
        end
        if (sub_we || (go_we && !s_begun[s]))
            s_start[wa_s] <= sub_we ? 64'd0 : now;
        if (sub_we || (go_we && random))
            s_rng[wa_s] <= sub_we ? sub_rng : rng_new;
        if (sub_we || (go_we && !random))
            s_off[wa_s] <= sub_we ? 64'd0 : off_new;
    end
    // response-side slot state
    always @(posedge clk)
        if (sub_we || rsp_we)
            s_dleft[wa_c] <= sub_we ? sub_lines : dleft - 64'd1;
    // tags: the stack's push (a response not reused by this clock's issue) and the issued tag's record
    always @(posedge clk) begin
        if (rsp_we && !go)
            free_tags[nfree[7:0]] <= rsp_tag;
        if (go_we) begin
            tag_issue[tag] <= now;
            tag_slot[tag] <= s;
            tag_write[tag] <= is_wr;
        end
    end

    // registers: the ring's head and count, the tag stack's depth, the scan flags, the outstanding counts
    always @(posedge clk) begin
        if (!rst_n) begin
            head <= 4'd0;
            count <= 5'd0;
            nfree <= tags_cap;
            ntags <= tags_cap;
            low <= tags_cap; // tags are handed out lowest first: a stack with tag 0 on top
            s_fin <= 16'd0;
            s_left <= 16'd0;
            s_begun <= 16'd0;
        end else if (ce) begin
            if (rsp_valid) begin
                s_fin[cs] <= cfin;
                s_outst[cs] <= s_outst[cs] - 9'd1;
            end
            nfree <= nfree + {8'd0, rsp_valid} - {8'd0, go};
            if (go && !rsp_valid && {1'b0, ntop} < low)
                low <= {1'b0, ntop};
            head <= head + n_ret[3:0];
            count <= count_r + {4'd0, sub_valid && sub_ready};
            if (go) begin
                s_outst[s] <= outst1 + 9'd1;
                s_left[s] <= ileft[63:1] != 63'd0;   // issued + 1 < lines: more than one line was left
                s_begun[s] <= 1'b1;
            end
            if (sub_valid && sub_ready) begin
                s_fin[ns] <= sub_lines == 64'd0;
                s_left[ns] <= sub_lines != 64'd0;
                s_begun[ns] <= 1'b0;
                s_outst[ns] <= 9'd0;
            end
        end
    end
endmodule

`default_nettype wire

// dram_map.v - address mapping of hw/hls/dram_map.c: a device-local byte address to channel, rank, bank
// group, bank, row, column (docs/cxl-model.md, DRAM address mapping).
//
// The outputs follow `addr` combinationally (the C is a pure function), so a caller registers them where
// its timing needs it. What depends on the parameters only (each field's offset and mask, the fold masks,
// whether the hash applies) is decoded once, at reset, into registers: the address goes through a shifter
// and a mask per field and the fold, not through the parameters' decode (six dependent additions) too.
//
// Runtime parameters (cxl_dram_params, no rebuild per preset; sampled at reset, as every unit's):
//   map_order : map[i] in map_order[3*i +: 3], field order least significant first (enum cxl_map_field, < 6)
//   map_bits  : bits[f] in map_bits[6*f +: 6], log2 of field f's size (the C's uint32 values are all < 64)
//   bank_hash : XOR-fold the row into the bank-group and bank bits (permutation-based interleaving,
//               Zhang et al., MICRO 2000); bank group + bank bits at most 8 (devcfg allows 6:
//               CXL_MAX_BANKS = 64 banks per channel)
// Outputs are 32 bits wide, as cxl_dram_addr's fields.
//
// As hardware: the C shifts the address field by field in map order; here each field's offset (the bits
// of the fields before its last place in the order: a later duplicate overwrites an earlier one, as in
// the C) depends on the parameters only, so the address goes through one shifter per field. The C folds
// the row into bb = bank group + bank bits by XOR-ing bb-bit chunks; bit j of the row lands in bit
// j mod bb, so fold bit k is the parity of the row under a mask that depends on bb only.
`default_nettype none

module dram_map (
    input  wire        clk,
    input  wire        rst_n,          // synchronous, active low: the parameters are sampled
    /* verilator lint_off UNUSEDSIGNAL */  // the byte within a line
    input  wire [63:0] addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [17:0] map_order,
    input  wire [35:0] map_bits,
    input  wire        bank_hash,
    output reg  [31:0] ch,
    output reg  [31:0] rank,
    output reg  [31:0] bg,
    output reg  [31:0] bank,
    output reg  [31:0] row,
    output reg  [31:0] col
);
    localparam F_CH = 0, F_RANK = 1, F_BG = 2, F_BANK = 3, F_ROW = 4, F_COL = 5;
    localparam integer FOLD = 8;   // most bank group + bank bits the hash folds into

    // ---- from the parameters only: each field's place in addr >> 6
    reg [8:0]  off [0:5];          // sum of the widths before the field's last place in map order
    reg [5:0]  in_map;             // the field is in the order at all
    reg [31:0] fm [0:5];           // the field's mask (its width in ones; none when not in the map)
    reg [8:0]  acc;
    reg [2:0]  f;
    integer    i, j, k;
    always @* begin
        acc = 9'd0;
        in_map = 6'd0;
        for (j = 0; j < 6; j = j + 1)
            off[j] = 9'd0;
        for (i = 0; i < 6; i = i + 1) begin
            f = map_order[3*i +: 3];
            for (j = 0; j < 6; j = j + 1)
                if (f == j[2:0]) begin
                    off[j] = acc;
                    in_map[j] = 1'b1;
                    acc = acc + {3'd0, map_bits[6*j +: 6]};
                end
        end
        for (j = 0; j < 6; j = j + 1)
            fm[j] = !in_map[j] ? 32'd0
                  : (map_bits[6*j +: 6] >= 6'd32) ? 32'hffffffff : ((32'd1 << map_bits[6*j +: 6]) - 32'd1);
    end

    // fold masks: bit j of the row goes to fold bit j mod bb (bb = 1 .. FOLD; a constant per bb)
    wire [5:0] bgb = map_bits[6*F_BG +: 6];
    wire [5:0] bb  = bgb + map_bits[6*F_BANK +: 6];
    reg [31:0] fmask [0:FOLD-1];
    integer    bv;
    always @* begin
        for (k = 0; k < FOLD; k = k + 1) begin
            fmask[k] = 32'd0;
            for (bv = 1; bv <= FOLD; bv = bv + 1)
                if (bb == bv[5:0])
                    for (j = 0; j < 32; j = j + 1)
                        fmask[k][j] = (j % bv) == k;
        end
    end

    // ---- the decode, registered at reset (the parameters are constant while the model runs)
    reg [5:0]  r_sh [0:5];         // the field's shift, or
    reg [5:0]  r_zero;             // ... the field is 0 (not in the map, or beyond bit 57)
    reg [31:0] r_fm [0:5];
    reg [31:0] r_fmask [0:FOLD-1];
    reg [5:0]  r_bgb;
    reg [31:0] r_bgmask;
    reg        r_hash;
    always @(posedge clk)
        if (!rst_n) begin
            for (j = 0; j < 6; j = j + 1) begin
                r_sh[j] <= off[j][5:0];
                r_zero[j] <= !in_map[j] || off[j][8:6] != 3'd0;
                r_fm[j] <= fm[j];
            end
            for (k = 0; k < FOLD; k = k + 1)
                r_fmask[k] <= fmask[k];
            r_bgb <= bgb;
            r_bgmask <= (32'd1 << bgb) - 32'd1;
            r_hash <= bank_hash && bb != 6'd0;
        end

    // ---- the address
    wire [57:0] x = addr[63:6];
    reg [31:0]  v [0:5];
    /* verilator lint_off UNUSEDSIGNAL */  // fields are 32 bits
    reg [57:0]  sh;
    /* verilator lint_on UNUSEDSIGNAL */
    reg [31:0]  h, bk;
    always @* begin
        for (j = 0; j < 6; j = j + 1) begin
            sh = r_zero[j] ? 58'd0 : x >> r_sh[j];
            v[j] = sh[31:0] & r_fm[j];
        end
        h = 32'd0;
        for (k = 0; k < FOLD; k = k + 1)
            h[k] = ^(v[F_ROW] & r_fmask[k]);
        bk = ((v[F_BANK] << r_bgb) | v[F_BG]) ^ h;
        ch = v[F_CH];
        rank = v[F_RANK];
        bg = v[F_BG];
        bank = v[F_BANK];
        if (r_hash) begin
            bg = bk & r_bgmask;
            bank = bk >> r_bgb;
        end
        row = v[F_ROW];
        col = v[F_COL];
    end
endmodule

`default_nettype wire

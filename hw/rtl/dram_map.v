// dram_map.v - address mapping of hw/hls/dram_map.c: a device-local byte address to channel, rank, bank
// group, bank, row, column (docs/cxl-model.md, DRAM address mapping).
//
// Purely combinational, as the C is a pure function: the outputs follow `addr` and the parameters in the
// same cycle, so a caller registers them where its timing needs it.
//
// Runtime parameters (cxl_dram_params, no rebuild per preset):
//   map_order : map[i] in map_order[3*i +: 3], field order least significant first (enum cxl_map_field, < 6)
//   map_bits  : bits[f] in map_bits[6*f +: 6], log2 of field f's size (the C's uint32 values are all < 64)
//   bank_hash : XOR-fold the row into the bank-group and bank bits (permutation-based interleaving,
//               Zhang et al., MICRO 2000)
// Outputs are 32 bits wide, as cxl_dram_addr's fields.
`default_nettype none

module dram_map (
    input  wire [63:0] addr,
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

    reg [63:0] x;
    reg [31:0] v [0:5];
    reg [2:0]  f;
    reg [5:0]  b;
    reg [5:0]  bgb, bb;
    reg [31:0] mask, h, rw, bk;
    integer i, j;

    always @* begin
        x = addr >> 6;
        for (j = 0; j < 6; j = j + 1)
            v[j] = 32'd0;
        // fields in map order; a later duplicate overwrites an earlier one, as in the C
        for (i = 0; i < 6; i = i + 1) begin
            f = map_order[3*i +: 3];
            b = map_bits[6*f +: 6];
            for (j = 0; j < 6; j = j + 1)
                if (f == j[2:0])
                    v[j] = x[31:0] & ((b >= 6'd32) ? 32'hffffffff : ((32'd1 << b) - 32'd1));
            x = x >> b;
        end
        bgb = map_bits[6*F_BG +: 6];
        bb = bgb + map_bits[6*F_BANK +: 6];
        mask = (32'd1 << bb) - 32'd1;
        h = 32'd0;
        rw = v[F_ROW];
        if (bank_hash && bb != 6'd0) begin
            // fold the row to bb bits; 32 steps cover a 32-bit row for any bb >= 1. The simulator's speed
            // build (CXL_SIM_ROLLED_LOOPS) stops once no row bit is left (the later steps XOR in 0): a
            // few steps for a real row instead of 32 unrolled ones, in each of the three maps of a busy
            // device (docs/rtl.md, "Simulation speed")
`ifdef CXL_SIM_ROLLED_LOOPS
            for (i = 0; i < 32 && rw != 32'd0; i = i + 1) begin
`else
            for (i = 0; i < 32; i = i + 1) begin
`endif
                h = h ^ (rw & mask);
                rw = rw >> bb;
            end
            bk = ((v[F_BANK] << bgb) | v[F_BG]) ^ h;
            v[F_BG] = bk & ((32'd1 << bgb) - 32'd1);
            v[F_BANK] = bk >> bgb;
        end else begin
            bk = 32'd0;
        end
        ch = v[F_CH];
        rank = v[F_RANK];
        bg = v[F_BG];
        bank = v[F_BANK];
        row = v[F_ROW];
        col = v[F_COL];
    end
endmodule

`default_nettype wire

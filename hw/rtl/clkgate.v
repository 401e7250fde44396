// clkgate.v - the clock of one unit, gated by that unit's clock enable in simulation only (the speed of
// the verilator backend, docs/rtl.md "Simulation speed").
//
// Every unit of the model already holds its state on clock edges without its enable (ce), so the
// design is correct with one free-running clock, and that is what synthesis gets: gclk = clk, and `en`
// is ignored. With CXL_CLOCK_GATES defined (the verilator backend's build), gclk pulses only in the
// clocks in which `en` is high. The units behave the same (they see an edge exactly when ce would let
// their state move, or reset act), but Verilator then evaluates a unit's logic - sequential and the
// combinational logic fed only by its registers - only in the clocks in which its gated clock pulses:
// the idle devices of a one-device preset, the switch of a direct link, and the whole model while the
// kernel streams completions out cost nothing.
//
// The enable is sampled at the falling edge (the latch of a standard clock-gating cell, as a flop), so
// the gated clock never glitches: `en` must be valid before the falling edge that precedes the rising
// edge it gates. In this design `en` is a function of registers and of inputs that the harness drives
// before the falling edge (sim/verilator/vkernel.cpp), so it is. `clk` must be the free-running clock,
// never another gated one: the enable would then be sampled only in the clocks in which that one ran,
// and go stale in between (a channel gate inside a gated device controller did exactly that).
`default_nettype none

module clkgate (
    input  wire clk,
    input  wire en,
    output wire gclk
);
`ifdef CXL_CLOCK_GATES
    reg en_l = 1'b1;
    always @(negedge clk)
        en_l <= en;
    assign gclk = clk & en_l;
`else
    assign gclk = clk;
    wire unused_en = en;
`endif
endmodule

`default_nettype wire

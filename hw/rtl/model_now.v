// model_now.v - a unit's own copy of the model cycle counter (cxl_model's `now`), kept in the unit's
// clock domain (clkgate.v).
//
// cxl_model advances `now` by one in every main clock, and by 1 + skip_n in a main clock that is an idle
// skip (cxl_model.v; skip_n is 0 otherwise). A unit whose clock enable is (main clock and the unit is in
// use) sees every one of those clocks while it is in use, so a counter in its own domain that starts at 0
// in reset and counts its main clocks the same way equals `now` whenever the unit is in use (an unused
// unit's copy stops, and so does everything else of it). The copy costs 64 flops and an adder in
// hardware; in simulation it keeps a unit that is not in use from re-evaluating its logic (which compares
// ready cycles with `now`) in every clock.
`default_nettype none

module model_now (
    input  wire        clk,     // the unit's (gated) clock
    input  wire        rst_n,   // synchronous, active low, with the model's
    input  wire        step,    // a main clock: now moves on
    input  wire [63:0] skip_n,  // ... by 1 + skip_n
    output reg  [63:0] now
);
    always @(posedge clk) begin
        if (!rst_n)
            now <= 64'd0;
        else if (step)
            now <= now + 64'd1 + skip_n;
    end
endmodule

`default_nettype wire

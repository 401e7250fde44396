// model_now.v - a unit's own copy of the model cycle counter (cxl_model's `now`), kept in the unit's
// clock domain (clkgate.v).
//
// cxl_model advances `now` by one in every main clock. A unit whose clock enable is (main clock and the
// unit is in use) sees every one of those clocks while it is in use, so a counter in its own domain
// that starts at 0 in reset and counts its main clocks equals `now` whenever the unit is in use (an
// unused unit's copy stops, and so does everything else of it). The copy costs 64 flops in hardware;
// in simulation it keeps a unit that is not in use from re-evaluating its logic (which compares ready
// cycles with `now`) in every clock.
`default_nettype none

module model_now (
    input  wire        clk,     // the unit's (gated) clock
    input  wire        rst_n,   // synchronous, active low, with the model's
    input  wire        step,    // a main clock: now moves on
    output reg  [63:0] now
);
    always @(posedge clk) begin
        if (!rst_n)
            now <= 64'd0;
        else if (step)
            now <= now + 64'd1;
    end
endmodule

`default_nettype wire

// popc.vh - a population count, included inside a module that defines PCN (the vector's width) and
// CW (the count's width, at least $clog2(PCN + 1)): the number of ones of v. Written as a sum of the bits;
// synthesis builds an adder tree (Yosys alumacc/maccmap), not a chain.
function [CW-1:0] popc(input [PCN-1:0] v);
    integer b;
    begin
        popc = {CW{1'b0}};
        for (b = 0; b < PCN; b = b + 1)
            popc = popc + {{(CW-1){1'b0}}, v[b]};
    end
endfunction

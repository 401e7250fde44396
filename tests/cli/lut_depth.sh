#!/usr/bin/env bash
# scripts/lut_depth.py (the logic depth of scripts/rtl_synth.sh, docs/rtl-synthesis.md "Logic depth"):
# the longest path in LUT levels on hand-written netlists (LUTs, MUXF7, a CARRY4 chain, a LUT RAM read,
# a black-box instance, a combinational loop, the weights), Yosys ltp read beside it, bad input exits
# 1 or 2 with a message and no traceback; with Yosys installed, also a tiny Verilog module synthesised
# by synth_xilinx (a 36-input XOR between registers: 2 LUT levels).
# usage: lut_depth.sh CXLSIM SOURCE_DIR
set -u
src=$2
tool=$src/scripts/lut_depth.py
if ! command -v python3 >/dev/null; then
  echo "SKIPPED: python3 not found"
  exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# run ARGS...: the tool's exit status in $rc, stdout + stderr in $out
run() { out=$(PYTHONPYCACHEPREFIX=$tmp python3 "$tool" "$@" 2>&1); rc=$?; }
# expect RC TEXT WHAT: the last run exited RC and printed TEXT, with no Python traceback
expect() {
  if [ "$rc" != "$1" ] || [[ $out != *"$2"* ]] || [[ $out == *Traceback* ]]; then
    fail "$3: exit $rc, wanted $1 and '$2': $out"
  fi
}

# FF q0 -> LUT6 a -> LUT2 b -> MUXF7 m -> FF q1.D, and FF q0 -> INV -> output port y: worst 2.25
# (LUT, LUT, MUXF7 0.25); the FF's clock and the module's other ports start nothing longer
cat > "$tmp/chain.json" <<'EOF'
{"modules": {
 "LUT6": {"attributes": {"blackbox": "00000000000000000000000000000001"}, "ports": {}, "cells": {}},
 "chain": {"attributes": {"top": "00000000000000000000000000000001"},
  "ports": {"clk": {"direction": "input", "bits": [2]}, "x": {"direction": "input", "bits": [3]},
            "y": {"direction": "output", "bits": [20]}},
  "cells": {
   "q0": {"type": "FDRE", "port_directions": {"C": "input", "CE": "input", "D": "input", "R": "input", "Q": "output"},
          "connections": {"C": [2], "CE": ["1"], "D": [3], "R": ["0"], "Q": [10]}},
   "a": {"type": "LUT6", "port_directions": {"I0": "input", "I1": "input", "I2": "input", "I3": "input", "I4": "input", "I5": "input", "O": "output"},
         "connections": {"I0": [10], "I1": [3], "I2": ["0"], "I3": ["0"], "I4": ["0"], "I5": ["0"], "O": [11]}},
   "b": {"type": "LUT2", "port_directions": {"I0": "input", "I1": "input", "O": "output"},
         "connections": {"I0": [11], "I1": [10], "O": [12]}},
   "c": {"type": "LUT1", "port_directions": {"I0": "input", "O": "output"}, "connections": {"I0": [3], "O": [13]}},
   "m": {"type": "MUXF7", "port_directions": {"I0": "input", "I1": "input", "S": "input", "O": "output"},
         "connections": {"I0": [12], "I1": [13], "S": [3], "O": [14]}},
   "q1": {"type": "FDRE", "port_directions": {"C": "input", "CE": "input", "D": "input", "R": "input", "Q": "output"},
          "connections": {"C": [2], "CE": ["1"], "D": [14], "R": ["0"], "Q": [15]}},
   "inv": {"type": "INV", "port_directions": {"I": "input", "O": "output"}, "connections": {"I": [10], "O": [20]}}
  }}}}
EOF
printf '3. Executing LTP pass (find longest path).\n\nLongest topological path in chain (length=3):\n' > "$tmp/chain.ltp"
run "$tmp/chain.json" --ltp "$tmp/chain.ltp" --tsv "$tmp/chain.tsv"
expect 0 "chain: 2.25 LUT levels: 2 LUT, 1 MUXF7/8/9, 0 CARRY, 0 LUT RAM read on the path; yosys ltp: 3 cells" "LUT chain"
for want in "start   FDRE q0 .Q[0]" "1  LUT6    a" "2  LUT2    b" "2.25  MUXF7   m" "2.25  end     FDRE q1 .D[0]"; do
  [[ $out == *"$want"* ]] || fail "LUT chain: path lacks '$want': $out"
done
[ "$(cat "$tmp/chain.tsv")" = "$(printf 'chain\t2.25\t2\t1\t0\t0\t3\t3\t0\t2.25')" ] || fail "LUT chain: tsv '$(cat "$tmp/chain.tsv")'"
run "$tmp/chain.json" --muxf-weight 0
expect 0 "chain: 2 LUT levels" "--muxf-weight 0"
run "$tmp/chain.json" --module chain --muxf-weight 1
expect 0 "chain: 3 LUT levels" "--muxf-weight 1"

# input x -> LUT3 -> CARRY4 (S) -> CARRY4 (CI) -> CARRY4 (CI) -> output: 1 + 0.5 + 2 * 0.125 = 1.75; the
# cells have no port_directions (a netlist written without the cell library): the tool's own table
cat > "$tmp/carry.json" <<'EOF'
{"modules": {"carry": {"attributes": {},
  "ports": {"x": {"direction": "input", "bits": [2, 3]}, "s": {"direction": "output", "bits": [40, 41]}},
  "cells": {
   "l": {"type": "LUT3", "connections": {"I0": [2], "I1": [3], "I2": ["1"], "O": [10]}},
   "c0": {"type": "CARRY4", "connections": {"CI": ["0"], "CYINIT": ["0"], "DI": [2, "0", "0", "0"], "S": [10, 3, "0", "0"],
          "O": [20, 21, 22, 23], "CO": [24, 25, 26, 27]}},
   "c1": {"type": "CARRY4", "connections": {"CI": [27], "CYINIT": ["0"], "DI": ["0", "0", "0", "0"], "S": ["1", "1", "1", "1"],
          "O": [30, 31, 32, 33], "CO": [34, 35, 36, 37]}},
   "c2": {"type": "CARRY4", "connections": {"CI": [37], "CYINIT": ["0"], "DI": ["0", "0", "0", "0"], "S": ["1", "1", "1", "1"],
          "O": [40, 41, 42, 43], "CO": [44, 45, 46, 47]}}
  }}}}
EOF
run "$tmp/carry.json" --tsv "$tmp/carry.tsv"
expect 0 "carry: 1.75 LUT levels: 1 LUT, 0 MUXF7/8/9, 3 CARRY" "CARRY4 chain"
# port to port only: no register-to-register path
{ [[ $out == *"register to register: 0"* ]] && [ "$(cut -f10 "$tmp/carry.tsv")" = 0 ]; } ||
  fail "CARRY4 chain: register-to-register figure: $out / $(cat "$tmp/carry.tsv")"
[[ $out == *"end     output port s["* ]] || fail "CARRY4 chain: does not end at port s: $out"
run "$tmp/carry.json" --carry-weight 1 --carry-step 0.5
expect 0 "carry: 3 LUT levels" "CARRY4 chain, other weights"

# LUT RAM: FF fa -> RAM64M ADDRA (read) -> DOA -> LUT -> LUT -> FF: 3 levels; the RAM's DIA/WE/ADDRD are end points, DOD
# reads at ADDRD from a port; an unknown cell (sub-module instance "u", no port directions) is an end
# point: its output starts a path of 2 LUTs to the output port, its input ends one
cat > "$tmp/ram.json" <<'EOF'
{"modules": {"ram": {"attributes": {},
  "ports": {"clk": {"direction": "input", "bits": [2]}, "w": {"direction": "input", "bits": [3]},
            "o": {"direction": "output", "bits": [30]}, "p": {"direction": "output", "bits": [51]}},
  "cells": {
   "fa": {"type": "FDRE", "connections": {"C": [2], "CE": ["1"], "D": [3], "R": ["0"], "Q": [10]}},
   "r": {"type": "RAM64M", "connections": {"ADDRA": [10, "0", "0", "0", "0", "0"], "ADDRB": ["0", "0", "0", "0", "0", "0"],
         "ADDRC": ["0", "0", "0", "0", "0", "0"], "ADDRD": [3, "0", "0", "0", "0", "0"], "DIA": [3], "DIB": [3], "DIC": [3], "DID": [3],
         "WE": [3], "WCLK": [2], "DOA": [20], "DOB": [21], "DOC": [22], "DOD": [23]}},
   "l": {"type": "LUT2", "connections": {"I0": [20], "I1": [21], "O": [26]}},
   "l3": {"type": "LUT1", "connections": {"I0": [26], "O": [24]}},
   "fb": {"type": "FDRE", "connections": {"C": [2], "CE": ["1"], "D": [24], "R": ["0"], "Q": [25]}},
   "lo": {"type": "LUT1", "connections": {"I0": [23], "O": [30]}},
   "u": {"type": "$paramod\\sub\\W=1", "connections": {"A": [25], "Y": [40]}},
   "l1": {"type": "LUT1", "connections": {"I0": [40], "O": [50]}},
   "l2": {"type": "LUT1", "connections": {"I0": [50], "O": [51]}}
  }}}}
EOF
run "$tmp/ram.json" --tsv "$tmp/ram.tsv"
expect 0 "ram: 3 LUT levels: 2 LUT, 0 MUXF7/8/9, 0 CARRY, 1 LUT RAM read" "LUT RAM read"
[[ $out == *"start   FDRE fa .Q[0]"* && $out == *"1  RAM64M  r"* && $out == *"end     FDRE fb .D[0]"* ]] ||
  fail "LUT RAM read: path: $out"
run "$tmp/ram.json" --lutram-weight 0.5
expect 0 "ram: 2.5 LUT levels: 2 LUT, 0 MUXF7/8/9, 0 CARRY, 1 LUT RAM read" "LUT RAM weight 0.5"
# a sub-module instance (no port directions): its output starts the 2-LUT path to p
cat > "$tmp/bb.json" <<'EOF'
{"modules": {"bb": {"attributes": {},
  "ports": {"x": {"direction": "input", "bits": [2]}, "p": {"direction": "output", "bits": [51]}},
  "cells": {
   "l0": {"type": "LUT1", "connections": {"I0": [2], "O": [25]}},
   "u": {"type": "$paramod\\sub\\W=1", "connections": {"A": [25], "Y": [40]}},
   "l1": {"type": "LUT1", "connections": {"I0": [40], "O": [50]}},
   "l2": {"type": "LUT1", "connections": {"I0": [50], "O": [51]}}
  }}}}
EOF
run "$tmp/bb.json"
expect 0 "bb: 2 LUT levels: 2 LUT, 0 MUXF7/8/9, 0 CARRY, 0 LUT RAM read" "black-box instance"
# shellcheck disable=SC2016  # the $ of $paramod is literal
[[ $out == *'start   $paramod\sub\W=1 u .Y[0]'* && $out == *"end     output port p[0]"* ]] ||
  fail "black-box instance: path does not run from u.Y to p: $out"

# an SRL: its address only reads (input -> LUT -> SRLC32E .A -> .Q -> LUT -> output: 3 levels), its
# data input ends a path, its cascade output Q31 starts one
cat > "$tmp/srl.json" <<'EOF'
{"modules": {"srl": {"attributes": {},
  "ports": {"clk": {"direction": "input", "bits": [2]}, "x": {"direction": "input", "bits": [3]},
            "y": {"direction": "output", "bits": [12]}, "z": {"direction": "output", "bits": [14]}},
  "cells": {
   "la": {"type": "LUT1", "connections": {"I0": [3], "O": [10]}},
   "s": {"type": "SRLC32E", "connections": {"A": [10, "0", "0", "0", "0"], "CE": ["1"], "CLK": [2], "D": [3], "Q": [11], "Q31": [13]}},
   "lq": {"type": "LUT1", "connections": {"I0": [11], "O": [12]}},
   "l31": {"type": "LUT1", "connections": {"I0": [13], "O": [14]}}
  }}}}
EOF
run "$tmp/srl.json" --tsv "$tmp/srl.tsv"
expect 0 "srl: 3 LUT levels: 2 LUT, 0 MUXF7/8/9, 0 CARRY, 1 LUT RAM read" "SRL read"
[ "$(cut -f10 "$tmp/srl.tsv")" = 0 ] || fail "SRL: a register-to-register path: $(cat "$tmp/srl.tsv")"

# no false loops: a CARRY4 whose low sum bit feeds (through a LUT) a higher bit of the same cell, and a
# LUT RAM written with a function of its own read (read-modify-write): x -> l0 -> S[0] -> O[0] -> l1 ->
# S[2] -> O[3] -> y is 1 + 0.5 + 1 + 0.5 = 3 levels
cat > "$tmp/noloop.json" <<'EOF'
{"modules": {"noloop": {"attributes": {},
  "ports": {"clk": {"direction": "input", "bits": [2]}, "x": {"direction": "input", "bits": [3]},
            "y": {"direction": "output", "bits": [23]}},
  "cells": {
   "l0": {"type": "LUT1", "connections": {"I0": [3], "O": [10]}},
   "c": {"type": "CARRY4", "connections": {"CI": ["0"], "CYINIT": ["0"], "DI": ["0", "0", "0", "0"], "S": [10, "0", 11, "0"],
         "O": [20, 21, 22, 23], "CO": [24, 25, 26, 27]}},
   "l1": {"type": "LUT1", "connections": {"I0": [20], "O": [11]}},
   "r": {"type": "RAM32M", "connections": {"ADDRA": [3, "0", "0", "0", "0"], "ADDRB": ["0", "0", "0", "0", "0"], "ADDRC": ["0", "0", "0", "0", "0"],
         "ADDRD": [3, "0", "0", "0", "0"], "DIA": [31, "0"], "DIB": ["0", "0"], "DIC": ["0", "0"], "DID": ["0", "0"], "WE": ["1"], "WCLK": [2],
         "DOA": [30, 32], "DOB": [33, 34], "DOC": [35, 36], "DOD": [37, 38]}},
   "inc": {"type": "LUT1", "connections": {"I0": [30], "O": [31]}}
  }}}}
EOF
run "$tmp/noloop.json"
expect 0 "noloop: 3 LUT levels: 2 LUT, 0 MUXF7/8/9, 2 CARRY" "carry and LUT RAM without false loops (the path passes c twice)"
[[ $out != *loop\(s\)* ]] || fail "false combinational loop reported: $out"

# a combinational loop (two LUTs feeding each other): reported and cut, not a hang or a traceback
cat > "$tmp/loop.json" <<'EOF'
{"modules": {"loop": {"attributes": {},
  "ports": {"x": {"direction": "input", "bits": [2]}, "y": {"direction": "output", "bits": [11]}},
  "cells": {
   "a": {"type": "LUT2", "connections": {"I0": [2], "I1": [11], "O": [10]}},
   "b": {"type": "LUT1", "connections": {"I0": [10], "O": [11]}}
  }}}}
EOF
run "$tmp/loop.json"
expect 0 "combinational loop(s), cut at" "combinational loop"

# errors: a message, exit 1 (input) or 2 (usage), no traceback
run "$tmp/missing.json"
expect 1 "cannot read $tmp/missing.json" "missing file"
echo '{"modules": ' > "$tmp/bad.json"
run "$tmp/bad.json"
expect 1 "is not JSON" "truncated JSON"
echo '[1, 2]' > "$tmp/list.json"
run "$tmp/list.json"
expect 1 "is not a Yosys JSON netlist" "JSON that is not a netlist"
echo '{"modules": {"m": {"cells": {"c": {"connections": {}}}, "ports": {}}}}' > "$tmp/notype.json"
run "$tmp/notype.json"
expect 1 "cell c has no 'type'" "cell without a type"
run "$tmp/chain.json" --module nosuch
expect 1 "module nosuch is not in" "unknown module"
run "$tmp/chain.json" --carry-step -1
expect 2 "must not be negative" "negative weight"
run "$tmp/chain.json" --muxf-weight abc
expect 2 "invalid float value" "weight not a number"
run "$tmp/chain.json" --ltp "$tmp/missing.ltp"
expect 1 "cannot read $tmp/missing.ltp" "missing ltp file"
run --help
expect 0 "--carry-step" "--help"

# with Yosys: a 36-input XOR between two registers maps to 6 LUT6 feeding one LUT6: 2 LUT levels
if command -v yosys >/dev/null 2>&1; then
  cat > "$tmp/x36.v" <<'EOF'
module x36 (input clk, input [35:0] d, output reg q);
  reg [35:0] r;
  always @(posedge clk) begin r <= d; q <= ^r; end
endmodule
EOF
  if yosys -q -p "read_verilog $tmp/x36.v; synth_xilinx -family xcup -top x36 -flatten -noiopad -noclkbuf; tee -q -o $tmp/x36.ltp ltp -noff w:* t:LUT* t:INV t:MUXF* t:CARRY*; hierarchy -purge_lib; write_json $tmp/x36.json" \
       >"$tmp/yosys.out" 2>&1; then
    # ABC may join LUTs with MUXF7/MUXF8 (a wide XOR as LUT6 pairs), so the figure is 2 to 3 levels, and
    # on this netlist Yosys's ltp counts the same cells as the path found here
    run "$tmp/x36.json" --ltp "$tmp/x36.ltp" --tsv "$tmp/x36.tsv"
    expect 0 "x36: " "synth_xilinx x36"
    IFS=$'\t' read -r _ lv nl _ _ _ ncell nltp _ _ < "$tmp/x36.tsv"
    if ! awk -v l="$lv" 'BEGIN { exit !(l >= 2 && l <= 3) }' || [ "$ncell" != "$nltp" ] || [ "$nl" -lt 2 ]; then
      fail "synth_xilinx x36: levels $lv, $nl LUTs, $ncell cells on the path, ltp $nltp: $out"
    fi
  else
    fail "yosys on x36.v: $(cat "$tmp/yosys.out")"
  fi
else
  echo "note: yosys not installed: the synthesised-module case is not run"
fi
[ "$fails" = 0 ] || exit 1
echo "lut_depth.py: levels, paths, weights and errors as documented"

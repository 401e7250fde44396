#!/usr/bin/env bash
# Every hw/rtl module passes `verilator --lint-only -Wall` with no warning, and, where Yosys is
# installed, Yosys reads and elaborates it (the two tools the RTL must satisfy, issue 5); the top level
# also as each named build (hw/rtl/builds.txt) and as the verilator backend builds it.
# usage: rtl_lint.sh CXLSIM SOURCE_DIR. Exit 77 (skipped) without Verilator.
set -u
src=$2
if ! command -v verilator >/dev/null 2>&1; then
  echo "SKIPPED: verilator not installed"
  exit 77
fi
fails=0; passes=0
shopt -s nullglob
for f in "$src"/hw/rtl/*.v "$src"/hw/rtl/*.sv; do
  top=$(basename "${f%.*}")
  if out=$(verilator --lint-only -Wall -I"$src/hw/rtl" -y "$src/hw/rtl" --top-module "$top" "$f" 2>&1) && [ -z "$out" ]; then
    passes=$((passes+1))
  else
    echo "FAIL: verilator --lint-only -Wall $top"; echo "$out"; fails=$((fails+1))
  fi
  case " dram devctrl cxl_model " in *" $top "*) under_top=1 ;; *) under_top=0 ;; esac
  if [ "$under_top" = 1 ]; then
    # elaborated as parts of cxl_kernel (its turn of this loop), with the parameters it gives them (it takes
    # Yosys 0.23 about 16 s; each of these on its own would repeat most of that)
    :
  elif command -v yosys >/dev/null 2>&1; then
    # modules a top instantiates are read from hw/rtl/<name>.v (-libdir); Yosys warnings (e.g. a memory
    # kept as registers) are printed, only errors fail
    if out=$(yosys -q -p "read_verilog -sv -I$src/hw/rtl $f; hierarchy -check -libdir $src/hw/rtl -top $top" 2>&1); then
      passes=$((passes+1)); [ -z "$out" ] || echo "$out"
    else
      echo "FAIL: yosys read_verilog + hierarchy -top $top"; echo "$out"; fails=$((fails+1))
    fi
  fi
done
# the verilator backend's build of the top: the same RTL with the simulation-only clock gates (clkgate.v)
if out=$(verilator --lint-only -Wall -DCXL_CLOCK_GATES -DCXL_SIM_FLAT_RINGS -DCXL_SIM_INDEXED_SELECT -I"$src/hw/rtl" -y "$src/hw/rtl" --top-module cxl_kernel \
         "$src/hw/rtl/cxl_kernel.v" 2>&1) && [ -z "$out" ]; then
  passes=$((passes+1))
else
  echo "FAIL: verilator --lint-only -Wall -DCXL_CLOCK_GATES -DCXL_SIM_FLAT_RINGS -DCXL_SIM_INDEXED_SELECT cxl_kernel"; echo "$out"; fails=$((fails+1))
fi
# and each named build of it (hw/rtl/builds.txt: cxl_kernel's parameters, e.g. card-1x1 without the switch)
while read -r name nh nd nch nb nq sw _; do
  case $name in ''|'#'*) continue ;; esac
  if out=$(verilator --lint-only -Wall -GNH="$nh" -GND="$nd" -GNCH="$nch" -GNB="$nb" -GNQ="$nq" -GSW="$sw" -DCXL_CLOCK_GATES -DCXL_SIM_FLAT_RINGS \
           -DCXL_SIM_INDEXED_SELECT -I"$src/hw/rtl" -y "$src/hw/rtl" --top-module cxl_kernel \
           "$src/hw/rtl/cxl_kernel.v" 2>&1) && [ -z "$out" ]; then
    passes=$((passes+1))
  else
    echo "FAIL: verilator --lint-only -Wall cxl_kernel, build $name (NH $nh ND $nd NCH $nch NB $nb NQ $nq SW $sw)"; echo "$out"
    fails=$((fails+1))
  fi
done <"$src/hw/rtl/builds.txt"
[ "$passes" -gt 0 ] || { echo "FAIL: no module in $src/hw/rtl"; fails=$((fails+1)); }
echo "rtl_lint: $passes passed, $fails failed"
[ "$fails" -eq 0 ]

#!/usr/bin/env bash
# The verilator backend's command-line surface: --trace-fst is refused for backends without RTL (exit 2),
# needs a value (2), and an FST the build cannot write (no CXLSIM_RTL_TRACE: 4) or the file system cannot
# (5) fails before any simulation with a message, not a crash; a preset larger than every kernel build
# compiled in is refused (7); probe's JSON is the same on csim and verilator.
# The backend's results against csim, call by call, are tests/cxl/test_verilator.c. usage: verilator.sh CXLSIM SOURCE_DIR. Exit 77 (skipped) without the backend.
set -u
bin=$1
if ! "$bin" backends | grep -q '^verilator *built in'; then
  echo "SKIPPED: verilator backend not built"
  exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() {  # expect CODE PATTERN ARGS...: exit code and a stderr line matching PATTERN
  local code=$1 pat=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" = "$code" ] && grep -q -- "$pat" "$tmp/err"; then passes=$((passes+1))
  else echo "FAIL: $* -> exit $rc (want $code), stderr: $(cat "$tmp/err")"; fails=$((fails+1)); fi
}
expect 2 "needs --backend verilator" "$bin" probe --quick --trace-fst "$tmp/a.fst"
expect 2 "needs a value" "$bin" probe --backend verilator --trace-fst
if "$bin" probe --backend verilator --quick --trace-fst "$tmp/missing/x.fst" 2>"$tmp/err" >/dev/null; then
  echo "FAIL: unwritable --trace-fst accepted"; fails=$((fails+1))
else
  rc=$?
  if { [ $rc = 4 ] && grep -q "no traced kernel builds" "$tmp/err"; } || { [ $rc = 5 ] && grep -q "cannot write .*x.fst" "$tmp/err"; }
  then passes=$((passes+1)); else echo "FAIL: unwritable --trace-fst: exit $rc: $(cat "$tmp/err")"; fails=$((fails+1)); fi
fi

# the kernel builds compiled in are listed; a preset that needs more than each of them (pool-4x4: four
# host ports and devices; the default builds card-1x1 and card-pool have two at most) is refused before
# any simulation with exit 7 and a message naming the builds (docs/rtl.md "Kernel builds")
builds=$("$bin" backends | sed -n 's/^verilator *built in (kernel builds: \(.*\))$/\1/p')
if [ -n "$builds" ]; then passes=$((passes+1)); else
  echo "FAIL: cxlsim backends names no kernel builds: $("$bin" backends)"; fails=$((fails+1)); fi
case ", $builds," in
  *", full,"*) echo "pool-4x4 fits the build full: no refusal to check" ;;
  *) expect 7 "RTL kernel builds compiled in ($builds) have fewer host ports, devices, DRAM channels, banks or DRAM queue entries than the configuration" \
       "$bin" probe pool-4x4 --quick --backend verilator ;;
esac

# cxlsim probe gives the same JSON on both backends, apart from backend and wall_seconds (short windows:
# the verilated RTL runs thousands of model cycles per second)
short=(--samples 20 --warmup 0.2 --window 0.4 --points 2)
for dev in asic pool-2x2; do
  if "$bin" probe "$dev" "${short[@]}" --json "$tmp/c.json" >/dev/null 2>"$tmp/err" &&
     "$bin" probe "$dev" "${short[@]}" --backend verilator --json "$tmp/v.json" >/dev/null 2>>"$tmp/err" &&
     python3 - "$tmp/c.json" "$tmp/v.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for d in (a, b):
    d.pop("backend"); d.pop("wall_seconds"); d.pop("command_line")
sys.exit(0 if a == b else 1)
PY
  then passes=$((passes+1)); else echo "FAIL: probe $dev JSON differs between csim and verilator: $(cat "$tmp/err")"
    diff "$tmp/c.json" "$tmp/v.json" | head -20; fails=$((fails+1)); fi
done

# a descriptor held back 2^32 - 1 cycles: the RTL skips the wait in hardware (idle skip to each refresh
# deadline, then whole refresh periods: cxl_model.v) with the same results as csim, in seconds, not hours
printf 'requester,bytes,not_before\n0,4K,4294967295\n0,4K,0\n1,64,4294000000\n' > "$tmp/nbmax.csv"
for dev in asic asic-ddr4 pool-2x2; do
  if "$bin" compare "$dev" --trace "$tmp/nbmax.csv" --backends csim,verilator --quiet >"$tmp/out" 2>"$tmp/err" &&
     grep -q "equal: 3 descriptors, 3 completions, 42949[0-9]* cycles, statistics identical" "$tmp/out"
  then passes=$((passes+1)); else echo "FAIL: compare $dev nbmax.csv csim,verilator: $(cat "$tmp/out" "$tmp/err")"
    fails=$((fails+1)); fi
done
echo "$passes passed, $fails failed"
[ "$fails" = 0 ]

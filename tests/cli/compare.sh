#!/usr/bin/env bash
# `cxlsim compare`: exit codes (0 equal, 8 the backends differ, 2 usage, 3 bad trace or device, 4 backend
# not built, 5 file I/O), the report's lines, JSON written whole or not at all, runs reproducible.
# usage: compare.sh CXLSIM SOURCE_DIR
set -u
bin=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() { # expect CODE PATTERN -- command...
  local code=$1 pat=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" != "$code" ] || ! grep -qE -- "$pat" "$tmp/err" "$tmp/out"; then
    echo "FAIL: $* -> exit $rc (want $code, /$pat/), output:"; cat "$tmp/err" "$tmp/out" | head -8
    fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
}
absent() { [ ! -e "$1" ] || { echo "FAIL: $1 left behind"; fails=$((fails + 1)); }; }
traces=$src/configs/traces

# equal: csim against itself, on a shipped trace and on random streams of several devices
expect 0 "result +equal: 24 descriptors, 24 completions, [0-9]+ cycles, statistics identical" -- \
  "$bin" compare --backends csim,csim --trace "$traces/mixed-4req.csv"
expect 0 "csim \(A\)|equal" -- "$bin" compare pool-2x2 --backends csim,csim --trace "$traces/reads-writes.csv"
for dev in asic asic-switch pool-2x2 local-ddr5; do
  expect 0 "random: 300 descriptors, seed 4" -- "$bin" compare "$dev" --backends csim,csim --random 300 --seed 4
done
expect 0 "equal up to cycle 2000 \(--max-cycles\)" -- "$bin" compare --backends csim,csim --random 500 --max-cycles 2000

# a difference: exit 8, the first diverging event with cycle, unit, field and both values
expect 8 "DIFFERENT: first diverging event at cycle [0-9]+" -- \
  "$bin" compare --backends csim,analytical --trace "$traces/mixed-4req.csv" --json "$tmp/d.json"
for pat in "^    unit +link 0$" "^    field +stats link\[0\]\.flits\[m2s\]$" "^    csim +1$" "^    analytical +0$" \
           "first seen +at cycle [0-9]+: requester [0-9]+, completion id [0-9]+ end_cycle"; do
  grep -qE "$pat" "$tmp/out" || { echo "FAIL: report lacks /$pat/"; cat "$tmp/out"; fails=$((fails + 1)); }
done
for key in '"result": "different"' '"divergence"' '"first_seen"' '"unit": "link 0"' '"backend_b": "analytical"' \
           '"field": "stats link\[0\].flits\[m2s\]"' '"cycle": [0-9]+'; do
  grep -qE "$key" "$tmp/d.json" || { echo "FAIL: JSON lacks $key"; fails=$((fails + 1)); }
done
expect 8 "DIFFERENT" -- "$bin" compare local-ddr5 --backends analytical,csim --random 50

# reproducible: the same JSON twice (apart from wall_seconds and the command line); a saved random trace replays the same run
expect 8 "DIFFERENT" -- "$bin" compare --backends csim,analytical --trace "$traces/mixed-4req.csv" --json "$tmp/e.json"
python3 "$src/tests/cli/json_equal.py" "$tmp/d.json" "$tmp/e.json" ||
  { echo "FAIL: two runs differ"; fails=$((fails + 1)); }
expect 0 "equal" -- "$bin" compare asic-switch --backends csim,csim --random 200 --seed 9 --save-trace "$tmp/r.csv" \
  --json "$tmp/r1.json"
expect 0 "trace +.*r.csv: 200 descriptors" -- "$bin" compare asic-switch --backends csim,csim --trace "$tmp/r.csv" \
  --json "$tmp/r2.json"
[ "$(grep '"cycles"' "$tmp/r1.json")" = "$(grep '"cycles"' "$tmp/r2.json")" ] ||
  { echo "FAIL: the saved trace ran differently"; fails=$((fails + 1)); }

# bad traces: exit 3 with file:line:column and what would be valid; nothing written
printf 'requester,bytes\n0,64\n# fine so far\n0,100\n' > "$tmp/bytes.csv"
expect 3 "bytes.csv:4:3: bytes: '100' is not a positive multiple of 64" -- \
  "$bin" compare --backends csim,csim --trace "$tmp/bytes.csv" --json "$tmp/x.json"
absent "$tmp/x.json"
printf 'requester,bytes\n3,64\n16,64\n' > "$tmp/req.csv"
expect 3 "req.csv:3:1: requester: '16' does not exist: the device has 16 requesters; valid: 0..15" -- \
  "$bin" compare --backends csim,csim --trace "$tmp/req.csv"
printf 'requester,bytes,colour\n0,64,red\n' > "$tmp/col.csv"
expect 3 "col.csv:1:17: header: unknown column 'colour'; valid columns: id, requester, bytes" -- \
  "$bin" compare --backends csim,csim --trace "$tmp/col.csv"
printf 'requester,bytes,pattern\n0,64,zigzag\n' > "$tmp/pat.csv"
expect 3 "pat.csv:2:6: pattern: 'zigzag' is not a pattern; valid: seq, random, stride" -- \
  "$bin" compare --backends csim,csim --trace "$tmp/pat.csv"
printf '0,64\n' > "$tmp/nohdr.csv"
expect 3 "nohdr.csv:1:1: expected a header line" -- "$bin" compare --backends csim,csim --trace "$tmp/nohdr.csv"
: > "$tmp/empty.csv"
expect 3 "empty.csv:1:1: no header line" -- "$bin" compare --backends csim,csim --trace "$tmp/empty.csv"
printf 'name: bad\nextends: asic\nlink:\n  width: 12\n' > "$tmp/bad.yaml"
expect 3 "bad.yaml:4:10: link.width: 12" -- "$bin" compare "$tmp/bad.yaml" --backends csim,csim --random 10

# missing files and unwritable outputs: exit 5, checked before any simulation
expect 5 "cannot read trace '$tmp/none.csv'" -- "$bin" compare --backends csim,csim --trace "$tmp/none.csv" --json "$tmp/y.json"
absent "$tmp/y.json"
expect 5 "cannot write '$tmp/no/dir.json'" -- "$bin" compare --backends csim,csim --random 10 --json "$tmp/no/dir.json"
expect 5 "no-such-device.yaml" -- "$bin" compare "$tmp/no-such-device.yaml" --backends csim,csim

# usage errors: exit 2
expect 2 "unknown backend 'nope'; valid: csim, analytical, verilator, xrt" -- "$bin" compare --backends csim,nope
expect 2 "--backends: 'csim' is not A,B" -- "$bin" compare --backends csim
expect 2 "--backends: 'csim,csim,csim' is not A,B" -- "$bin" compare --backends csim,csim,csim
expect 2 "--trace and --random exclude each other" -- "$bin" compare --trace x.csv --random 5
expect 2 "--seed applies to --random only" -- "$bin" compare --trace x.csv --seed 5
expect 2 "--random: '0' is not a count" -- "$bin" compare --random 0
expect 2 "--random: '10000001' is not a count" -- "$bin" compare --random 10000001
expect 2 "--max-cycles: 'lots' is not a positive number" -- "$bin" compare --max-cycles lots
expect 2 "--json needs a value" -- "$bin" compare --json
expect 2 "compare: unknown option '--nope'" -- "$bin" compare --nope
expect 2 "compare: only one DEVICE" -- "$bin" compare asic fpga
expect 0 "compare \[DEVICE\]" -- "$bin" help

# a backend that is not built: exit 4, naming the package or saying it is not in this version yet
for pair in verilator:verilator xrt:libxrt-dev; do
  be=${pair%%:*}; pkg=${pair#*:}
  if "$bin" backends | grep -q "^$be *not built (dependency missing)"; then
    expect 4 "install the Debian package '$pkg'" -- "$bin" compare --backends "csim,$be" --random 10
  elif "$bin" backends | grep -q "^$be *not in this version yet"; then
    expect 4 "backend '$be' .* is not part of this version of cxlsim yet" -- "$bin" compare --backends "csim,$be" --random 10
  fi
done
if "$bin" backends | grep -q "^verilator *built in"; then
  expect 0 "equal" -- "$bin" compare --random 100 --seed 2   # the default: csim,verilator
else
  echo "skipped: csim vs verilator (the verilator backend is not built)"
fi

# waveforms (--trace-fst FILE [--cycles A:B]): usage errors, then, where the verilator backend can trace,
# the window around the first difference (verilator against analytical differ at once) and a given
# window, each with its GTKWave save file whose every signal is in the FST (fst2vcd, from gtkwave)
expect 2 "--cycles applies to --trace-fst only" -- "$bin" compare --backends csim,csim --random 10 --cycles 0:9
expect 2 "--cycles: '9:0' is not A:B" -- "$bin" compare --backends csim,csim --random 10 --trace-fst "$tmp/w.fst" --cycles 9:0
expect 2 "--cycles: 'x' is not A:B" -- "$bin" compare --backends csim,csim --random 10 --trace-fst "$tmp/w.fst" --cycles x
expect 2 "--trace-fst needs a verilator backend that can write waveforms" -- \
  "$bin" compare --backends csim,analytical --random 10 --trace-fst "$tmp/w.fst"
absent "$tmp/w.fst"; absent "$tmp/w.gtkw"
if "$bin" backends | grep -q "^verilator *built in" &&
   ! "$bin" compare --backends verilator,analytical --random 5 --trace-fst "$tmp/probe.fst" 2>&1 | grep -q "that can write waveforms"; then
  expect 8 "waveform +$tmp/w.fst: model cycles [0-9]+ to [0-9]+; view: gtkwave $tmp/w.gtkw" -- \
    "$bin" compare --backends verilator,analytical --random 50 --trace-fst "$tmp/w.fst" --json "$tmp/w.json"
  grep -q '"waveform": {' "$tmp/w.json" || { echo "FAIL: JSON lacks the waveform"; fails=$((fails + 1)); }
  expect 0 "waveform +$tmp/x.wave: model cycles 100 to 400;" -- \
    "$bin" compare asic-switch --random 50 --trace-fst "$tmp/x.wave" --cycles 100:400
  expect 0 "none written: the backends agree" -- "$bin" compare --random 20 --trace-fst "$tmp/y.fst"
  absent "$tmp/y.fst"
  for f in "$tmp/w.fst" "$tmp/x.wave"; do
    case $f in *.fst) g=${f%.fst}.gtkw ;; *) g=$f.gtkw ;; esac
    [ -s "$f" ] && [ -s "$g" ] || { echo "FAIL: $f or $g missing"; fails=$((fails + 1)); continue; }
    grep -q "^\[dumpfile\] \"$f\"" "$g" || { echo "FAIL: $g does not name $f"; fails=$((fails + 1)); }
    if command -v fst2vcd >/dev/null; then
      # FST scopes and variables as dotted names (vectors with their range), against the save file's
      fst2vcd "$f" 2>/dev/null | awk '$1 == "$scope" { s[++d] = $3 } $1 == "$upscope" { d-- }
        $1 == "$var" { n = ""; for (i = 1; i <= d; i++) n = n s[i] "."; r = ($6 == "$end") ? "" : $6; print n $5 r }' \
        | sort -u > "$tmp/vars"
      grep -E '^TOP\.' "$g" | sort -u > "$tmp/want"
      missing=$(comm -23 "$tmp/want" "$tmp/vars")
      [ -z "$missing" ] || { echo "FAIL: signals of $g not in $f: $missing"; fails=$((fails + 1)); }
      passes=$((passes + 1))
    else
      echo "skipped: fst2vcd (Debian package gtkwave) not installed: the save file's signals are not checked"
    fi
  done
else
  echo "skipped: compare --trace-fst (no verilator backend with FST tracing in this build)"
fi

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]

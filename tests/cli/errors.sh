#!/usr/bin/env bash
# Command-line errors: each exits with its documented code, says what is wrong, writes nothing.
# usage: errors.sh CXLSIM SOURCE_DIR
set -u
bin=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() { # expect CODE PATTERN -- command...
  local code=$1 pat=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" != "$code" ] || ! grep -qE -- "$pat" "$tmp/err" "$tmp/out"; then
    echo "FAIL: $* -> exit $rc (want $code), output:"; cat "$tmp/err" "$tmp/out" | head -5
    fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
}
expect 2 "usage" -- "$bin"
expect 2 "unknown command 'frobnicate'" -- "$bin" frobnicate
expect 2 "unknown option '--nope'" -- "$bin" probe --nope
expect 2 "--json needs a value" -- "$bin" probe --json
expect 2 "unknown backend 'nope'; valid: csim, analytical, verilator, xrt" -- "$bin" probe --backend nope
expect 2 "not R:W" -- "$bin" probe --curve-mix 3-1
expect 2 "only one DEVICE" -- "$bin" probe asic fpga
expect 3 "unknown preset" -- "$bin" presets show nope
expect 0 "asic" -- "$bin" presets
expect 0 "tRCD 34" -- "$bin" check asic
expect 0 "csim" -- "$bin" backends
expect 0 "cxlsim [0-9]" -- "$bin" version

# a backend that is not built says why: its dependency is missing (and names the package), or this
# version does not have it yet
for pair in verilator:verilator xrt:libxrt-dev; do
  be=${pair%%:*}; pkg=${pair#*:}
  if "$bin" backends | grep -q "^$be *not built (dependency missing)"; then
    expect 4 "install the Debian package '$pkg'" -- "$bin" probe --backend "$be"
  elif "$bin" backends | grep -q "^$be *not in this version yet"; then
    expect 4 "backend '$be' .* is not part of this version of cxlsim yet .*use --backend csim" -- "$bin" probe --backend "$be"
  fi
done

# configuration errors: exit 3 with file:line:column, nothing written
printf 'name: bad\nextends: asic\nlink:\n  width: 12\n' > "$tmp/bad.yaml"
expect 3 "bad.yaml:4:10: link.width: 12" -- "$bin" probe "$tmp/bad.yaml" --json "$tmp/o.json" --csv "$tmp/o.csv"
[ ! -e "$tmp/o.json" ] && [ ! -e "$tmp/o.csv" ] || { echo "FAIL: output left after config error"; fails=$((fails + 1)); }
printf 'name: bad\nextends: asic\ndram:\n  speed: 4800ns\n' > "$tmp/unit.yaml"
expect 3 "unit.yaml:4:10: .*dram.speed" -- "$bin" check "$tmp/unit.yaml"
printf 'name: bad\nextends: asic\ncontroller:\n  latency: 5ns\n' > "$tmp/key.yaml"
expect 3 "key.yaml:4:3: .*controller.latency.*request_latency" -- "$bin" check "$tmp/key.yaml"
printf 'name: bad\nextends: nothing-like-this\n' > "$tmp/ext.yaml"
expect 3 "ext.yaml:2:10: .*nothing-like-this" -- "$bin" check "$tmp/ext.yaml"
printf 'name: bad\nextends: asic\ndram:\n  speed: 5600MT/s\n' > "$tmp/bin.yaml"
expect 3 "bin.yaml:4:10: dram.speed: no built-in DDR5 timing bin" -- "$bin" check "$tmp/bin.yaml"
printf 'name: bad\nextends: asic-switch\nswitch:\n  devices: 3\n' > "$tmp/sw.yaml"
expect 3 "sw.yaml:4:12: switch.devices: 3; valid: 1, 2, 4" -- "$bin" check "$tmp/sw.yaml"
printf 'name: bad\nextends: local-ddr5\nswitch:\n  hosts: 1\n' > "$tmp/sw2.yaml"
expect 3 "sw2.yaml:4:3: switch: the local-DDR path has no CXL link" -- "$bin" check "$tmp/sw2.yaml"
expect 5 "no-such-file.yaml" -- "$bin" check "$tmp/no-such-file.yaml"

# unwritable outputs are refused before any simulation, and leave nothing behind
expect 5 "cannot write '$tmp/none/o.json'" -- "$bin" probe --quick --json "$tmp/none/o.json"
[ ! -e "$tmp/none" ] || { echo "FAIL: created a folder"; fails=$((fails + 1)); }

# training experiments: memory per GPU, out of memory, presets of every kind
expect 0 "total +[0-9.]+ +of 74.51 GiB HBM" -- "$bin" memory
printf 'name: big\nextends: llama2-7b-2x8-h100\nmodel: llama2-70b\n' > "$tmp/big.yaml"
expect 3 "big.yaml:1:1: out of GPU memory: .*the largest part is the gradients" -- "$bin" memory "$tmp/big.yaml" --json "$tmp/big.json"
[ ! -e "$tmp/big.json" ] || { echo "FAIL: JSON left after out-of-memory"; fails=$((fails + 1)); }
printf 'name: x\nextends: llama2-7b-2x8-h100\ngpu: gb300\n' > "$tmp/gpu.yaml"
expect 3 "gpu.yaml:3:6: .*gb300.*h100-sxm" -- "$bin" memory "$tmp/gpu.yaml"
expect 0 "^llama2-70b$" -- "$bin" presets models
expect 0 "^h200$" -- "$bin" presets gpus
expect 0 "nic_bandwidth" -- "$bin" presets show clusters dgx-h100
expect 2 "unknown kind 'bogus'" -- "$bin" presets bogus

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]

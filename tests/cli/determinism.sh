#!/usr/bin/env bash
# Same inputs give byte-identical JSON apart from wall_seconds and the command line; the presets the binary embeds are the
# shipped YAML files byte for byte. usage: determinism.sh CXLSIM SOURCE_DIR
set -u
bin=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
for dev in asic fpga; do
  "$bin" probe "$dev" --quick --json "$tmp/a.json" --csv "$tmp/a.csv" >/dev/null || { echo "FAIL: probe $dev"; fails=$((fails+1)); continue; }
  (cd "$tmp" && "$bin" probe "$dev" --quick --json b.json --csv b.csv >/dev/null)
  if python3 "$src/tests/cli/json_equal.py" "$tmp/a.json" "$tmp/b.json" &&
     cmp -s "$tmp/a.csv" "$tmp/b.csv"; then passes=$((passes+1)); else echo "FAIL: $dev runs differ"; fails=$((fails+1)); fi
  for key in backend device idle_read_latency_ns local_ddr_idle_read_latency_ns read_only rw_2_1 rw_1_1 write_only \
             offered_gbps achieved_gbps mean_latency_ns p99_latency_ns simulated_cycles wall_seconds; do
    grep -q "\"$key\"" "$tmp/a.json" || { echo "FAIL: $key missing from JSON"; fails=$((fails+1)); }
  done
  head -1 "$tmp/a.csv" | grep -q "^offered_gbps,achieved_gbps,mean_latency_ns,p99_latency_ns$" || { echo "FAIL: csv header"; fails=$((fails+1)); }
done
for f in "$src"/configs/devices/*.yaml; do
  n=$(basename "$f" .yaml)
  if "$bin" presets show "$n" | cmp -s - "$f"; then passes=$((passes+1)); else echo "FAIL: preset $n differs from $f"; fails=$((fails+1)); fi
  "$bin" check "$f" >/dev/null || { echo "FAIL: check $f"; fails=$((fails+1)); }
done
for kind in models gpus clusters experiments; do
  for f in "$src"/configs/$kind/*.yaml; do
    n=$(basename "$f" .yaml)
    if "$bin" presets show "$kind" "$n" | cmp -s - "$f"; then passes=$((passes+1)); else echo "FAIL: $kind preset $n differs"; fails=$((fails+1)); fi
  done
done
for f in "$src"/configs/validation/korthikanti/*.yaml "$src"/configs/experiments/*.yaml; do
  (cd "$src" && "$bin" memory "$f" >/dev/null) || { echo "FAIL: memory $f"; fails=$((fails+1)); }
done
echo "$passes passed, $fails failed"
[ "$fails" = 0 ]

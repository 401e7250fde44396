#!/usr/bin/env bash
# cxlsim train / ops end to end: JSON fields, identical JSON apart from wall_seconds, the Chrome trace,
# measured kernel times through the ops list, no progress line when stderr is not a terminal, and the
# exit codes of bad input with nothing left behind. usage: train.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"

# default experiment, JSON with every field the issue names
expect_rc 0 "train default" "$bin" train --json "$tmp/a.json" --trace "$tmp/t.json"
grep -q "iteration time" "$tmp/out" && ok || bad "no iteration time printed"
grep -q "simulating" "$tmp/err" && bad "progress line written to a non-terminal" || ok
for key in iteration_time_s tokens_per_s mfu breakdown_s compute exposed_tp_comm exposed_pp_comm exposed_dp_comm \
           pipeline_bubble cxl_stall memory_per_gpu_gib weights gradients optimizer activations total events \
           wall_seconds; do
  grep -q "\"$key\"" "$tmp/a.json" && ok || bad "$key missing from JSON"
done
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['breakdown_s']['cxl_stall']==0" "$tmp/a.json" \
  && ok || bad "JSON does not parse or cxl_stall is not 0"
# the trace is JSON with trace events, GPU stream and link tracks
python3 - "$tmp/t.json" <<'PY' && ok || bad "trace is not a Chrome trace with stream and link tracks"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e["args"].get("name") for e in ev if e.get("ph") == "M"}
assert "compute stream" in names and "links of stage 0" in names, names
assert any(e.get("ph") == "C" and e["name"] == "nvlink utilisation" for e in ev)
assert any(e.get("ph") == "X" and e["name"] == "qkv.fwd" for e in ev)
assert all(e["dur"] >= 0 for e in ev if e.get("ph") == "X")
PY
# the summary: bandwidths per direction as the engine uses them, and the options that differ from the defaults
expect_rc 0 "train narayanan 76b" "$bin" train "$src/configs/validation/narayanan/76b.yaml" --json "$tmp/n.json"
grep -q "^    NVLink      232.50 per GPU (300.00 x 0.775)$" "$tmp/out" && ok || bad "no NVLink line"
grep -q "^    scale-out   182.00 per node, 22.75 per GPU$" "$tmp/out" && ok || bad "no scale-out line"
grep -Eq "^    training.overlap_grad_reduce +false \(default false\)" "$tmp/out" && bad "an option equal to its default listed" || ok
grep -Eq "^    training.attention +unfused \(default flash\)$" "$tmp/out" && ok || bad "no attention option line"
python3 - "$tmp/n.json" <<'PY' && ok || bad "JSON bandwidth_gbps / options wrong"
import json, sys
d = json.load(open(sys.argv[1]))
b = d["bandwidth_gbps"]
assert b["nvlink_per_gpu"] == 232.5 and b["nic"] == 22.75 and b["scale_out_per_node"] == 182, b
assert "host_link_per_gpu" not in b and "cxl_link" not in b, b
o = {e["key"]: (e["value"], e["default"]) for e in d["options"]}
assert o["training.tp"] == ("8", "1") and o["training.grad_bucket"] == ("1TB", "25MB"), o
assert "training.overlap_grad_reduce" not in o and "training.global_batch" not in o, o
PY
expect_rc 0 "train cz120" "$bin" train llama2-70b-cxl-cz120 --backend analytical
grep -q "^    CXL         GPU path 63.00 per GPU; device link 32.00 (x8 at 32.0 GT/s, before flit overhead)$" "$tmp/out" \
  && ok || bad "no CXL bandwidth line"
grep -Eq '^    cxl.device +"cz120" \(default ""\)$' "$tmp/out" && ok || bad "no cxl.device option line"
# identical apart from wall_seconds, from another folder
(cd "$tmp" && "$bin" train --json b.json >/dev/null 2>&1)
python3 "$src/tests/cli/json_equal.py" "$tmp/a.json" "$tmp/b.json" && ok || bad "JSON differs between runs"
# every shipped experiment and validation row runs
for f in "$src"/configs/experiments/*.yaml "$src"/configs/validation/korthikanti/*.yaml "$src"/configs/bench/*.yaml; do
  (cd "$src" && "$bin" train "$f" >/dev/null 2>"$tmp/err") && ok || bad "train $f: $(head -c 300 "$tmp/err")"
done

# ops: the list to profile, and modelled times fed back give the same iteration
expect_rc 0 "ops" "$bin" ops --out "$tmp/ops.yaml"
grep -q 'name: "qkv.fwd"' "$tmp/ops.yaml" && ok || bad "ops list lacks qkv.fwd"
expect_rc 3 "train with a time-less list" "$bin" train --op-times "$tmp/ops.yaml"
grep -q "ops.yaml:" "$tmp/err" && ok || bad "time-less list error without a location"
expect_rc 0 "ops --times" "$bin" ops --times --out "$tmp/times.yaml"
expect_rc 0 "train --op-times" "$bin" train --op-times "$tmp/times.yaml" --json "$tmp/m.json"
grep -q "from $tmp/times.yaml" "$tmp/out" && ok || bad "measured kernel count not printed"
a=$(python3 -c "import json; print(json.load(open('$tmp/a.json'))['iteration_time_ps'])")
m=$(python3 -c "import json; print(json.load(open('$tmp/m.json'))['iteration_time_ps'])")
[ "$a" = "$m" ] && ok || bad "modelled times through the file give $m ps, not $a"
expect_rc 0 "sample file" "$bin" train --op-times "$src/configs/optimes/sample-llama2-7b-h100.yaml"

# bad input: exit codes, messages, nothing left behind
expect_rc 2 "unknown option" "$bin" train --frobnicate
expect_rc 2 "two experiments" "$bin" train a b
expect_rc 2 "--json without a value" "$bin" train --json
expect_rc 3 "unknown experiment" "$bin" train no-such-experiment
grep -q "llama2-7b-2x8-h100" "$tmp/err" && ok || bad "unknown experiment error does not list the presets"
expect_rc 5 "unwritable JSON" "$bin" train --json "$tmp/no/such/dir/x.json"
expect_rc 5 "unwritable trace" "$bin" train --trace "$tmp/no/such/dir/t.json"
expect_rc 5 "missing op-times file" "$bin" train --op-times "$tmp/none.yaml"
cat >"$tmp/oom.yaml" <<'Y'
name: oom
model: gpt3-175b
gpu: a100-80gb
cluster: { extends: dgx-a100, nodes: 1 }
training: { global_batch: 8, tp: 8 }
Y
expect_rc 3 "out of memory" "$bin" train "$tmp/oom.yaml" --json "$tmp/oom.json"
grep -q "out of GPU memory" "$tmp/err" && ok || bad "OOM message"
grep -q "oom.yaml:1:1:" "$tmp/err" && ok || bad "OOM error not located at the experiment"
[ ! -e "$tmp/oom.json" ] && ok || bad "JSON left behind after an error"
cat >"$tmp/tp.yaml" <<'Y'
name: tp
model: llama2-7b
gpu: h100-sxm
cluster: { extends: dgx-h100, nodes: 1 }
training: { global_batch: 8, tp: 3, dp: 1 }
Y
expect_rc 3 "tp not dividing heads" "$bin" train "$tmp/tp.yaml"
grep -q "tp.yaml:5:" "$tmp/err" && ok || bad "tp error without location: $(cat "$tmp/err")"

# CXL: the small offload experiment, its JSON and trace; backends; bad CXL input
expect_rc 0 "train cxl-offload-small" "$bin" train "$src/configs/experiments/cxl-offload-small.yaml" \
  --json "$tmp/c.json" --trace "$tmp/ct.json"
for key in detailed_cycles extrapolated_cycles memo_hits cxl domains read_gbps write_gbps read_latency_ns p99 \
           devload tiers_gib; do
  grep -q "\"$key\"" "$tmp/c.json" && ok || bad "$key missing from CXL JSON"
done
python3 - "$tmp/c.json" "$tmp/ct.json" <<'PY' && ok || bad "CXL JSON or trace content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["breakdown_s"]["cxl_stall"] > 0 and d["extrapolated_cycles"] > 0
t = json.load(open(sys.argv[2]))["traceEvents"]
names = {e["args"].get("name") for e in t if e.get("ph") == "M"}
assert "CXL transfers" in names and any(n and n.startswith("CXL domain 0") for n in names), names
assert any(e.get("name") == "CXL traffic" for e in t)
PY
(cd "$tmp" && "$bin" train "$src/configs/experiments/cxl-offload-small.yaml" --json c2.json >/dev/null 2>&1)
python3 "$src/tests/cli/json_equal.py" "$tmp/c.json" "$tmp/c2.json" && ok || bad "CXL JSON differs between runs"
expect_rc 0 "analytical backend" "$bin" train "$src/configs/experiments/cxl-offload-small.yaml" --backend analytical
grep -q "on backend analytical" "$tmp/out" && ok || bad "analytical backend not reported"
expect_rc 2 "unknown CXL backend" "$bin" train "$src/configs/experiments/cxl-offload-small.yaml" --backend nope
if "$bin" backends | grep -q "^verilator *built in"; then ok; else
  expect_rc 4 "backend not built" "$bin" train "$src/configs/experiments/cxl-offload-small.yaml" --backend verilator
  grep -q "verilator" "$tmp/err" && ok || bad "backend-not-built message"
fi
cat >"$tmp/cap.yaml" <<Y
name: cap
extends: $src/configs/experiments/cxl-offload-small.yaml
cxl: { capacity: 1GiB }
Y
expect_rc 3 "CXL tier over capacity" "$bin" train "$tmp/cap.yaml" --json "$tmp/cap.json"
grep -q "out of CXL memory" "$tmp/err" && grep -q "short by" "$tmp/err" && ok || bad "capacity message: $(cat "$tmp/err")"
[ ! -e "$tmp/cap.json" ] && ok || bad "JSON left behind after a capacity error"
cat >"$tmp/path.yaml" <<Y
name: path
extends: $src/configs/experiments/cxl-offload-small.yaml
cxl: { gpu_path: switch }
Y
expect_rc 3 "GPU with no path to the device" "$bin" train "$tmp/path.yaml"
grep -q "path.yaml:3:" "$tmp/err" && ok || bad "gpu_path error without location: $(cat "$tmp/err")"
cat >"$tmp/pool.yaml" <<Y
name: pool
extends: $src/configs/experiments/cxl-offload-small.yaml
cxl: { memory: pool, device: asic }
Y
expect_rc 3 "pool without a switch" "$bin" train "$tmp/pool.yaml"

finish train

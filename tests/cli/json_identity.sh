#!/usr/bin/env bash
# The outputs of the training engine, byte for byte, against goldens committed in tests/golden/ (made by
# the binary before a refactor; a refactor keeps them, a change of the model regenerates them on purpose):
# `train --json` of every shipped experiment (by preset name) and of every validation and bench
# experiment (by file), `train --json` of variants that reach engine branches no shipped experiment
# takes (activation and parameter offload, the GPU optimizer on the small experiment, ZeRO-3, no
# gradient overlap, blocking sends with host overhead), `memory --json` of the
# experiments, a train sweep's JSON lines, and the SHA-256 of Chrome traces (whole, or a window).
# Lines that depend on the build or the host are blanked first: "commit", "wall_seconds" and the
# "command_line" array (it names the binary's path and the output files).
# Not here: the pool-2x2 and pool-2x4 experiments (5 to 7 s each, over this test's budget; the same
# engine paths as pool-2x1 and pool-4x1) and deepseek-v3-cxl-experts-gpu on the cycle-level model (3 s;
# its engine paths run below on the analytical backend, with the CPU's Adam too); `ops` (goes through
# opgraph only, not the engine).
# usage: json_identity.sh CXLSIM SOURCE_DIR [--update]   (--update rewrites the goldens)
. "$(dirname "$0")/harness.bash" "$1" "$2"
update=${3:-}
gold=$src/tests/golden
cd "$src" || exit 1

strip() { # file: the output with the build- and host-dependent lines blanked, on stdout
  awk '/^ *"command_line": \[/ { print; skip = 1; next }
       skip && /^ *\]/ { skip = 0 }
       skip { next }
       /^ *"commit": / { sub(/"commit": .*/, "\"commit\": \"-\","); print; next }
       /^ *"wall_seconds": / { sub(/"wall_seconds": .*/, "\"wall_seconds\": 0"); print; next }
       { print }' "$1"
}

compare() { # golden-file produced-file what
  if [ -n "$update" ]; then
    mkdir -p "$(dirname "$1")" && cp "$2" "$1" && ok
  elif cmp -s "$1" "$2"; then
    ok
  else
    bad "$3 differs from $1: $(diff "$1" "$2" 2>&1 | head -6 | tr '\n' ' ')"
  fi
}

run_json() { # golden-name command...
  local name=$1; shift
  if "$bin" "$@" --json "$tmp/o.json" >/dev/null 2>"$tmp/err"; then
    strip "$tmp/o.json" >"$tmp/s.json"
    compare "$gold/$name.json" "$tmp/s.json" "$*"
  else
    bad "$*: $(head -c 300 "$tmp/err")"
  fi
}

for e in $("$bin" presets experiments); do
  case $e in llama2-70b-cxl-pool-2x2|llama2-70b-cxl-pool-2x4) continue ;; esac
  [ "$e" = deepseek-v3-cxl-experts-gpu ] || run_json "train/$e" train "$e"
  run_json "memory/$e" memory "$e"
done
for f in configs/validation/*/*.yaml configs/bench/*.yaml; do
  n=${f#configs/}; n=${n%.yaml}
  run_json "train/${n//\//-}" train "$f"
done

# the layer-by-layer offloads on the analytical backend: the same engine steps, without the cycle-level
# model's seconds per run for their many small transfers
small=cxl-offload-small
ana="--backend analytical"
run_json train/var-small-activations train $small $ana --set cxl.offload_activations=true --set cxl.capacity=64GB
run_json train/var-small-parameters train $small $ana --set cxl.offload_parameters=true
run_json train/var-small-act-params train $small $ana --set cxl.offload_activations=true \
  --set cxl.offload_parameters=true --set cxl.capacity=64GB
run_json train/var-small-opt-gpu train $small --set cxl.offload_optimizer=gpu
# the routed experts' optimizer states in CXL (cxl.offload_scope experts), streamed and with the CPU's Adam
run_json train/var-dsv3-experts-gpu train deepseek-v3-cxl-experts-gpu $ana
run_json train/var-dsv3-experts-cpu train deepseek-v3-cxl-experts-gpu $ana --set cxl.offload_optimizer=cpu
run_json train/var-7b-zero3 train llama2-7b-2x8-h100 --set training.zero=3
run_json train/var-7b-no-overlap train llama2-7b-2x8-h100 --set training.overlap_grad_reduce=false
run_json train/var-175b-blocking-host train configs/validation/korthikanti/gpt3-175b-sel.yaml \
  --set training.overlap_p2p_comm=false --set training.host_overhead_iteration=2ms \
  --set training.host_overhead_microbatch=50us

# a train sweep through sweeprow (its rows carry no provenance)
if "$bin" sweep configs/sweeps/gpt3-175b-1024-layouts.yaml -j 2 --jsonl "$tmp/o.jsonl" >/dev/null 2>"$tmp/err"; then
  compare "$gold/sweep/gpt3-175b-1024-layouts.jsonl" "$tmp/o.jsonl" "sweep gpt3-175b-1024-layouts"
else
  bad "sweep: $(head -c 300 "$tmp/err")"
fi

# Chrome traces: their digests (a trace is too large to keep), one line per case
: >"$tmp/traces"
trace() { # name train-arguments...
  local name=$1; shift
  if "$bin" train "$@" --trace "$tmp/t.json" >/dev/null 2>"$tmp/err"; then
    echo "$(strip "$tmp/t.json" | sha256sum | cut -d' ' -f1) $name" >>"$tmp/traces"
  else
    bad "trace $name: $(head -c 300 "$tmp/err")"
  fi
}
trace small $small
trace small-act-params $small $ana --set cxl.offload_activations=true --set cxl.offload_parameters=true \
  --set cxl.capacity=64GB --trace-window 0ms:60ms
trace 70b-opt-gpu-end llama2-70b-cxl-opt-gpu --trace-window 77s:80s
trace 70b-opt-cpu-end llama2-70b-cxl-opt-cpu --trace-window 78s:82s
trace 7b-start llama2-7b-2x8-h100 --trace-window 0ms:300ms
trace 175b-pp-stages configs/validation/korthikanti/gpt3-175b-sel.yaml --trace-stages 0,7 --trace-window 0s:2s
compare "$gold/traces.sha256" "$tmp/traces" "trace digests"

finish json_identity

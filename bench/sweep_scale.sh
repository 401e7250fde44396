#!/usr/bin/env bash
# sweep_scale.sh - how the wall time of `cxlsim sweep` grows with points, worker processes and MPI ranks
# (docs/scale-out.md). Runs the GPT-3 175B layout sweep (configs/sweeps/gpt3-175b-1024-layouts.yaml,
# 24 points) crossed with more axes for 96 and 192 points, locally with -j 1 and -j 2 and under mpirun
# with 2, 3 and 5 ranks of -j 1 (rank 0 hands out points and sleeps; the others run them), checks that
# every run's CSV equals the local one, and prints one line per run: points, how, wall seconds, points
# per second, CPU seconds of all its processes (mpirun's included) and CPU per point. Then the cost of
# starting an MPI job of 5 ranks that does nothing.
# usage: bench/sweep_scale.sh CXLSIM [MPIRUN]     (MPIRUN default: mpirun; none: local runs only)
set -euo pipefail
bin=$(readlink -f "$1"); mpirun=${2:-mpirun}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
layouts=$src/configs/sweeps/gpt3-175b-1024-layouts.yaml
base=$src/configs/sweeps/gpt3-175b-1024-a100.yaml
spec() { # name extra-axes...
  { echo "base: $base"; echo "axes:"; echo "  training.pp: { from: 1, to: 32, times: 2 }"
    for a in "${@:2}"; do echo "  $a"; done
    echo "zip:"; echo "  - { training.tp: [1, 2, 4, 8], training.sp: [false, true, true, true] }"; } > "$tmp/$1.yaml"
}
spec s96 "training.recompute: [selective, full]" "training.micro_batch: [1, 2]"
spec s192 "training.recompute: [selective, full]" "training.micro_batch: [1, 2]" "cluster.nodes: [128, 64]"
run() { # points how command...: wall and CPU seconds (user + system, every process of the run)
  local pts=$1 how=$2 t; shift 2
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>&1; } 2>&1 )
  awk -v p="$pts" -v h="$how" -v t="$t" 'BEGIN { split(t, x, " "); printf "%6d points  %-22s %7.2f s wall  %6.1f points/s  %6.2f s CPU  %5.1f ms CPU/point\n", p, h, x[1], p / x[1], x[2] + x[3], 1000 * (x[2] + x[3]) / p }'
}
printf '# %s, %s, %d CPUs, load average %s\n' "$(date -u +%F)" "$("$bin" version | head -1)" "$(nproc)" \
  "$(cut -d' ' -f1 /proc/loadavg)"
for s in "24:$layouts" "96:$tmp/s96.yaml" "192:$tmp/s192.yaml"; do
  n=${s%%:*}; f=${s#*:}
  run "$n" "local -j 1" "$bin" sweep "$f" --csv "$tmp/l1.csv" -j 1
  run "$n" "local -j 2" "$bin" sweep "$f" --csv "$tmp/l2.csv" -j 2
  cmp -s "$tmp/l1.csv" "$tmp/l2.csv" || { echo "sweep_scale: -j 2 differs from -j 1" >&2; exit 1; }
  [ "$mpirun" = none ] && continue
  for np in 2 3 5; do
    run "$n" "mpirun -np $np, -j 1" "$mpirun" --allow-run-as-root --oversubscribe -np "$np" "$bin" sweep "$f" \
      --csv "$tmp/m.csv" -j 1
    cmp -s "$tmp/l1.csv" "$tmp/m.csv" || { echo "sweep_scale: -np $np differs from the local run" >&2; exit 1; }
  done
done
[ "$mpirun" = none ] || run 0 "mpirun -np 5 true" "$mpirun" --allow-run-as-root --oversubscribe -np 5 true

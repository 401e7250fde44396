#!/usr/bin/env bash
# search_scale.sh - how the wall time of `cxlsim search` changes with worker processes and MPI ranks
# (docs/scale-out.md, docs/search.md "Cost"). Runs the full search of LLaMA-2 70B with its optimizer
# offloaded to CXL on 64 H100 (llama2-70b-cxl-opt-cpu: every dimension, top 10, rerun 4) and of GPT-3
# 175B on 1024 A100 (configs/sweeps/gpt3-175b-1024-a100.yaml) locally with -j 1 and -j 2, and under
# mpirun with 1, 2 and 4 ranks (rank 0 prunes and ranks; the others run each round's layouts), checks
# that every run's CSV and report (but the timing line) equal the local ones, and prints one line per
# run: how, wall seconds, CPU seconds of all its processes (mpirun's included), and the search's own
# timing line (check, screen, rerun).
# usage: bench/search_scale.sh CXLSIM [MPIRUN]     (MPIRUN default: mpirun; none: local runs only)
set -euo pipefail
bin=$(readlink -f "$1"); mpirun=${2:-mpirun}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run() { # name how command...: wall and CPU seconds (user + system, every process of the run)
  local name=$1 how=$2 t; shift 2
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" --csv "$tmp/r.csv" >"$tmp/r.txt" 2>&1; } 2>&1 )
  awk -v n="$name" -v h="$how" -v t="$t" -v s="$(grep '^timing:' "$tmp/r.txt" | sed 's/^timing: //')" \
    'BEGIN { split(t, x, " "); printf "%-7s %-24s %6.2f s wall %6.2f s CPU | %s\n", n, h, x[1], x[2] + x[3], s }'
  grep -v '^timing:' "$tmp/r.txt" >"$tmp/r.rep"
  if [ -e "$tmp/$name.csv" ]; then
    cmp -s "$tmp/$name.csv" "$tmp/r.csv" && cmp -s "$tmp/$name.rep" "$tmp/r.rep" ||
      { echo "search_scale: $name, $how: the CSV or the report differs from the local run" >&2; exit 1; }
  else
    mv "$tmp/r.csv" "$tmp/$name.csv"; mv "$tmp/r.rep" "$tmp/$name.rep"
  fi
}
printf '# %s, %s, %d CPUs, load average %s\n' "$(date -u +%F)" "$("$bin" version | head -1)" "$(nproc)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
for s in "llama2:llama2-70b-cxl-opt-cpu" "gpt3:$src/configs/sweeps/gpt3-175b-1024-a100.yaml"; do
  n=${s%%:*}; e=${s#*:}
  run "$n" "local -j 1" "$bin" search "$e" -j 1
  run "$n" "local -j 2" "$bin" search "$e" -j 2
  [ "$mpirun" = none ] && continue
  mpi=("$mpirun" --allow-run-as-root --oversubscribe)
  run "$n" "mpirun -np 1, -j 2" "${mpi[@]}" -np 1 "$bin" search "$e" -j 2
  run "$n" "mpirun -np 2, -j 1" "${mpi[@]}" -np 2 "$bin" search "$e" -j 1
  run "$n" "mpirun -np 2, -j 2" "${mpi[@]}" -np 2 "$bin" search "$e" -j 2
  run "$n" "mpirun -np 4, -j 1" "${mpi[@]}" -np 4 "$bin" search "$e" -j 1
done
printf '# load average %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"

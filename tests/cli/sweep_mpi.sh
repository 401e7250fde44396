#!/usr/bin/env bash
# `mpirun -np 4 cxlsim sweep` and `search` (issue 32, item 4): the rows, the JSON lines and the summary are
# those of the local run byte for byte, as are a search's report, CSV and JSON (but their wall times); a
# crashed worker costs its own point; a sweep whose rank 0 is killed resumes (--resume) under mpirun to the
# same outputs; a search without a valid layout ends the job with its message, one whose ranks loaded
# another experiment is refused; a job whose ranks MPI does not see is refused before it writes anything.
# Without MPI built in: the message says how to build it, and the 4-rank runs are skipped (exit 77). CMake
# sets CXLSIM_MPI_BUILT (ON/OFF) and CXLSIM_MPIEXEC. 3.0 s of CPU, 8 s of wall time at load average 6 on
# the 2-core VM (2026-12-06; before the search's runs: 4.4 s of CPU, 15 s at load average 12).
# usage: sweep_mpi.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"
has() { grep -qF -- "$1" "$tmp/out" "$tmp/err" || bad "$2: no '$1' in: $(head -c 400 "$tmp/err" "$tmp/out")"; }
spec=$src/configs/sweeps/gpt3-175b-1024-layouts.yaml
cd "$tmp" || exit 1

if [ "${CXLSIM_MPI_BUILT:-OFF}" != ON ]; then
  # as mpirun would start rank 1 of 4: refused, nothing written
  expect_rc 4 "launcher without MPI built in" env OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=1 "$bin" sweep "$spec" --csv n.csv
  has "built without MPI" "no-MPI message"
  has "-DCXLSIM_MPI=ON" "no-MPI message says how to build"
  [ ! -e n.csv ] && [ ! -e n.csv.partial ] && ok || bad "no-MPI: an output was written"
  expect_rc 4 "search: launcher without MPI built in" env OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=0 "$bin" \
    search cxl-offload-small --vary tp,pp --csv n.csv
  has "search: started by an MPI launcher as rank 0 of 4" "search: no-MPI message"
  has "-DCXLSIM_MPI=ON" "search: no-MPI message says how to build"
  [ ! -e n.csv ] && ok || bad "search, no-MPI: an output was written"
  finish sweep_mpi
  echo "sweep_mpi: MPI not built in: the 4-rank runs skipped"
  [ "$fails" = 0 ] && exit 77 || exit 1
fi

# Open MPI's own allocations outlive MPI_Finalize (LeakSanitizer counts ~120 kB per rank in its
# modules, none in cxlsim's code: checked with fast_unwind_on_malloc=0, 2026-12-06): no leak check
# for the ranks under a sanitized build
mpi=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" ${CXLSIM_MPIEXEC:-mpirun} --allow-run-as-root
     --oversubscribe -np 4)
expect_rc 0 "local sweep" "$bin" sweep "$spec" --csv l.csv --jsonl l.jsonl -j 2
cp "$tmp/out" l.out
expect_rc 0 "4 ranks" "${mpi[@]}" "$bin" sweep "$spec" --csv m.csv --jsonl m.jsonl -j 1
cmp -s l.csv m.csv && ok || bad "4 ranks: the CSV differs from the local run"
cmp -s l.jsonl m.jsonl && ok || bad "4 ranks: the JSON lines differ from the local run"
cmp -s l.out "$tmp/out" && ok || bad "4 ranks: the summary differs: $(diff l.out "$tmp/out" | head -5)"

# rank 0 killed after 7 points (and the worker of point 5 crashing), then --resume under mpirun
CXLSIM_TEST_SWEEP_CRASH=5 CXLSIM_TEST_SWEEP_STOP_AFTER=7 "${mpi[@]}" "$bin" sweep "$spec" --csv r.csv --jsonl r.jsonl -j 1 \
  >/dev/null 2>&1
[ -e r.csv.partial ] && [ ! -e r.csv ] && ok || bad "interrupted under mpirun: no journal, or outputs written"
expect_rc 0 "resume under mpirun" env CXLSIM_TEST_SWEEP_CRASH=5 "${mpi[@]}" "$bin" sweep "$spec" --csv r.csv \
  --jsonl r.jsonl -j 1 --resume
has "resuming from r.csv.partial" "resume message"
grep -q '^5,.*,crashed,' r.csv && ok || bad "the crashed point's row: $(grep '^5,' r.csv)"
cmp -s <(grep -v '^5,' l.csv) <(grep -v '^5,' r.csv) && ok || bad "resumed under mpirun: rows differ from the local run"
[ ! -e r.csv.partial ] && ok || bad "journal left after the resumed run"

# search (issue 32, item 4): rank 0 prunes and ranks, the other ranks run each round's layouts; the report
# (but its timing line), the CSV and the JSON (but its wall times and command line) are the local run's.
# The offloads varied: layouts pruned by the bound, two re-run on csim.
off=(cxl-offload-small --vary offload,micro_batch --top 2 --rerun 2)
strip() { sed -e '/"wall_seconds"/,/}/d' -e '/"command_line"/,/\]/d' "$1"; }
expect_rc 0 "local search" "$bin" search "${off[@]}" -j 2 --csv ls.csv --json ls.json
grep -v '^timing:' "$tmp/out" >ls.txt
expect_rc 0 "search on 4 ranks" "${mpi[@]}" "$bin" search "${off[@]}" -j 1 --csv ms.csv --json ms.json
grep -v '^timing:' "$tmp/out" >ms.txt
has "3 MPI ranks x 1 worker" "search: the timing line names the ranks"
grep -q "skipped: their lower bound" ms.txt && ! grep -q " 0 skipped" ms.txt && ok || bad "search: nothing pruned"
cmp -s ls.txt ms.txt && ok || bad "search on 4 ranks: the report differs: $(diff ls.txt ms.txt | head -5)"
cmp -s ls.csv ms.csv && ok || bad "search on 4 ranks: the CSV differs: $(diff ls.csv ms.csv | head -5)"
[ "$(strip ls.json)" = "$(strip ms.json)" ] && ok || bad "search on 4 ranks: the JSON differs: $(diff <(strip ls.json) <(strip ms.json) | head -5)"
# no valid layout: rank 0 reports it (exit 3) and ends the job in order
expect_rc 3 "search on 4 ranks, no valid layout" "${mpi[@]}" "$bin" search cxl-offload-small --vary tp,pp \
  --set model=gpt3-175b --set 'cxl={memory: none}' -j 1
has "search: no valid layout of model 'gpt3-175b'" "search on 4 ranks: no-layout message"
# ranks that resolved another experiment (another --set here; on a cluster, other files): refused, nothing written
expect_rc 3 "search, ranks with another experiment" "${mpi[@]:0:5}" -np 1 "$bin" search "${off[@]}" -j 1 --csv fp.csv : \
  -np 3 "$bin" search "${off[@]}" -j 1 --set training.global_batch=128
has "resolves to another configuration here than on rank 0" "search: fingerprint message"
[ ! -e fp.csv ] && ok || bad "search, another experiment: an output was written"

# a job whose ranks MPI does not see (srun without a PMI plugin): refused before any output
expect_rc 4 "launcher and MPI disagree" env ASAN_OPTIONS=detect_leaks=0 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=0 "$bin" sweep "$spec" --csv s.csv
has "MPI says rank 0 of 1" "mismatch message"
[ ! -e s.csv ] && [ ! -e s.csv.partial ] && ok || bad "mismatch: an output was written"
finish sweep_mpi

#!/usr/bin/env bash
# The training step of the verilated kernel's profile-guided build (cmake/rtl_pgo.cmake), run with stub
# training programs instead of the instrumented bench_model, so it needs neither Verilator nor a build:
#  - every training run gets the preset and options of the script's list plus --backend verilator
#    --no-csim; the runs are those of the kernel builds named in BUILDS only (each on presets that run
#    on that build); a build without runs is an error; old counts under FROM are removed before the runs;
#  - the generated model's counts are copied to the same relative path under TO, whose old counts go
#    first; Verilator's runtime's counts are not; the stamp is written;
#  - a failing run is a warning, not an error: no counts under TO, the stamp written, exit 0;
#  - a missing -D argument is an error that names it.
# usage: rtl_pgo.sh CXLSIM SOURCE_DIR (CXLSIM is not used)
set -u
src=$2
script=$src/cmake/rtl_pgo.cmake
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { passes=$((passes + 1)); }
check() { if eval "$1"; then ok; else fail "$2"; fi; }

gen=CMakeFiles/cxlrtl.dir/Vcxl_kernel_card_1x1.dir
rt=usr/share/verilator/include
# a stand-in for rtl_pgo_train: logs its arguments, writes counts where GCC would, fails on request
cat >"$tmp/train" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$tmp/runs"
[ -n "\${FAIL_ON:-}" ] && [ "\$1" = "\$FAIL_ON" ] && { echo "stub: \$1 failed" >&2; exit 3; }
mkdir -p "$tmp/from/$gen" "$tmp/from/$rt"
echo "counts \$1" >>"$tmp/from/$gen/a.cpp.gcda"
echo "counts \$1" >>"$tmp/from/$rt/verilated.cpp.gcda"
exit 0
EOF
chmod +x "$tmp/train"
reset() {
  rm -rf "$tmp/from" "$tmp/to" "$tmp/runs" "$tmp/stamp"
  mkdir -p "$tmp/from/$gen" "$tmp/to/$gen"
  echo old >"$tmp/from/$gen/old.cpp.gcda"   # left by an earlier training: must go before the runs
  echo stale >"$tmp/to/$gen/stale.cpp.gcda" # an earlier profile: must go
}
run() { cmake -DTRAIN="$tmp/train" -DFROM="$tmp/from" -DTO="$tmp/to" -DSTAMP="$tmp/stamp" \
          -DBUILDS="${BUILDS:-card-1x1,card-pool}" -P "$script" >"$tmp/out" 2>&1; }

# success
reset
run; rc=$?
check '[ $rc = 0 ]' "training exit $rc: $(cat "$tmp/out")"
check '[ -f "$tmp/stamp" ]' "no stamp after a good training"
check '[ "$(wc -l <"$tmp/runs")" = 5 ]' "want 5 training runs, got: $(cat "$tmp/runs")"
check '! grep -v -- "--backend verilator --no-csim$" "$tmp/runs" >/dev/null' \
      "a run without --backend verilator --no-csim: $(cat "$tmp/runs")"
check 'grep -q "^asic --cycles" "$tmp/runs" && grep -q "^pool-2x2 " "$tmp/runs"' \
      "card-1x1 and card-pool are not both trained: $(cat "$tmp/runs")"
check 'cmp -s "$tmp/from/$gen/a.cpp.gcda" "$tmp/to/$gen/a.cpp.gcda"' "the model's counts were not copied"
check '[ "$(grep -c counts "$tmp/to/$gen/a.cpp.gcda")" = 5 ]' "the counts are not those of the 5 runs"
check '[ ! -e "$tmp/to/$gen/old.cpp.gcda" ]' "counts left in FROM before the runs were copied"
check '[ ! -e "$tmp/to/$gen/stale.cpp.gcda" ]' "an old profile under TO was kept"
check '[ ! -e "$tmp/to/$rt/verilated.cpp.gcda" ]' "Verilator's runtime counts were copied"
check 'grep -q "1 profiles from" "$tmp/out"' "no summary line: $(cat "$tmp/out")"

# only the builds compiled in are trained: card-pool alone runs its two presets, full adds pool-4x4
reset
BUILDS=card-pool run; rc=$?
check '[ $rc = 0 ] && [ "$(cut -d" " -f1 "$tmp/runs" | tr "\n" " ")" = "asic-switch pool-2x2 " ]' \
      "BUILDS=card-pool: exit $rc, runs: $(cat "$tmp/runs")"
reset
BUILDS=card-1x1,card-pool,full run; rc=$?
check '[ $rc = 0 ] && [ "$(wc -l <"$tmp/runs")" = 6 ] && grep -q "^pool-4x4 " "$tmp/runs"' \
      "BUILDS=card-1x1,card-pool,full: exit $rc, runs: $(cat "$tmp/runs")"
reset
BUILDS=card-2x9 run; rc=$?
check '[ $rc != 0 ] && grep -q "no training runs for kernel build .card-2x9" "$tmp/out"' \
      "an unknown build: exit $rc, $(cat "$tmp/out")"

# a failing run: a warning, no profile
reset
FAIL_ON=asic-switch run; rc=$?
check '[ $rc = 0 ]' "a failing training run stopped the build (exit $rc)"
check 'grep -q "training run .asic-switch" "$tmp/out" && grep -q "compiled without a profile" "$tmp/out"' \
      "no warning naming the run: $(cat "$tmp/out")"
check 'grep -q "stub: asic-switch failed" "$tmp/out"' "the run's output is not shown"
check '[ -f "$tmp/stamp" ]' "no stamp after a failed training"
check '[ -z "$(find "$tmp/to" -name "*.gcda")" ]' "counts under TO after a failed training: $(find "$tmp/to" -name "*.gcda")"

# a run that leaves no counts
reset
cat >"$tmp/train0" <<EOF
#!/usr/bin/env bash
exit 0
EOF
chmod +x "$tmp/train0"
cmake -DTRAIN="$tmp/train0" -DFROM="$tmp/from" -DTO="$tmp/to" -DSTAMP="$tmp/stamp" -DBUILDS=card-1x1 -P "$script" \
  >"$tmp/out" 2>&1
rc=$?
check '[ $rc = 0 ] && grep -q "left no counts" "$tmp/out"' "no counts: exit $rc, $(cat "$tmp/out")"

# usage
cmake -DTRAIN="$tmp/train" -DFROM="$tmp/from" -DTO="$tmp/to" -DBUILDS=card-1x1 -P "$script" >"$tmp/out" 2>&1
rc=$?
check '[ $rc != 0 ] && grep -q -- "-DSTAMP is required" "$tmp/out"' "missing STAMP: exit $rc, $(cat "$tmp/out")"

echo "rtl_pgo: $passes passed, $fails failed"
[ "$fails" = 0 ]

#!/usr/bin/env bash
# scripts/rtl_synth.sh (the rtl_synth target's script, docs/rtl-synthesis.md): the one-process-per-module
# form (RTL_SYNTH_SPLIT=1) on a small unit with a child module gives a total that is the sum of the
# modules' own netlists, a second run takes them from the cache, RTL_SYNTH_ABC=fast maps them, a named
# build (RTL_SYNTH_BUILD, dry run) passes its parameters to Yosys, and bad settings exit 2 with a
# message; yosys missing exits 77. The logic depth (scripts/lut_depth.py, RTL_SYNTH_DEPTH): a
# "LUT-levels" row with a figure per module, also for netlists taken from the cache, with or without
# their depth kept there.
# usage: rtl_synth.sh CXLSIM SOURCE_DIR. Exit 77 (skipped) without Yosys.
set -u
src=$2
script=$src/scripts/rtl_synth.sh
fails=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
# expect RC TEXT WHAT: the last run ($rc, $out) exited RC and printed TEXT
expect() { if [ "$rc" != "$1" ] || [[ $out != *"$2"* ]]; then fail "$3: exit $rc, '$out'"; fi; }

out=$(YOSYS=/nonexistent/yosys bash "$script" mpipe 2>&1); rc=$?
expect 77 "yosys not installed" "yosys missing"
if ! command -v yosys >/dev/null 2>&1; then
  echo "SKIPPED: yosys not installed"
  exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$(RTL_SYNTH_SPLIT=1 bash "$script" mpipe "$tmp/a" 2>&1); rc=$?
expect 2 "needs RTL_SYNTH_FLATTEN=0" "SPLIT without FLATTEN=0"
out=$(RTL_SYNTH_SPLIT=1 RTL_SYNTH_FLATTEN=0 RTL_SYNTH_JOBS=0 bash "$script" mpipe "$tmp/a" 2>&1); rc=$?
expect 2 "RTL_SYNTH_JOBS must be a positive integer" "JOBS=0"
out=$(RTL_SYNTH_SPLIT=yes bash "$script" mpipe "$tmp/a" 2>&1); rc=$?
expect 2 "RTL_SYNTH_SPLIT must be 0 or 1" "SPLIT=yes"
out=$(RTL_SYNTH_ABC=quick bash "$script" mpipe "$tmp/a" 2>&1); rc=$?
expect 2 "RTL_SYNTH_ABC must be full or fast" "ABC=quick"
out=$(RTL_SYNTH_CACHE=yes bash "$script" mpipe "$tmp/a" 2>&1); rc=$?
expect 2 "RTL_SYNTH_CACHE must be 0 or 1" "CACHE=yes"
out=$(RTL_SYNTH_DEPTH=yes bash "$script" mpipe "$tmp/a" 2>&1); rc=$?
expect 2 "RTL_SYNTH_DEPTH must be 0 or 1" "DEPTH=yes"
# named builds of the top (hw/rtl/builds.txt): their parameters reach Yosys's hierarchy, before any
# RTL_SYNTH_PARAMS entry; an unknown name, or a build of another top, exits 2
out=$(RTL_SYNTH_BUILD=card-9x9 bash "$script" cxl_kernel "$tmp/a" 2>&1); rc=$?
expect 2 "unknown build 'card-9x9'; valid: card-1x1, card-pool, full" "BUILD=card-9x9"
out=$(RTL_SYNTH_BUILD=card-1x1 bash "$script" mpipe "$tmp/a" 2>&1); rc=$?
expect 2 "names a build of cxl_kernel, not of mpipe" "BUILD on mpipe"
out=$(RTL_SYNTH_BUILD=card-1x1 RTL_SYNTH_DRYRUN=1 bash "$script" cxl_kernel "$tmp/a" 2>&1); rc=$?
expect 0 "hierarchy -top cxl_kernel -chparam NH 1 -chparam ND 1 -chparam NCH 4 -chparam NB 32 -chparam NQ 32 -chparam SW 0;" "BUILD=card-1x1 dry run"
out=$(RTL_SYNTH_BUILD=card-pool RTL_SYNTH_PARAMS="NCH=4" RTL_SYNTH_DRYRUN=1 bash "$script" cxl_kernel "$tmp/a" 2>&1); rc=$?
expect 0 "-chparam NH 2 -chparam ND 2 -chparam NCH 2 -chparam NB 32 -chparam NQ 32 -chparam SW 1 -chparam NCH 4;" "BUILD=card-pool + PARAMS dry run"
out=$(RTL_SYNTH_DRYRUN=2 bash "$script" mpipe "$tmp/a" 2>&1); rc=$?
expect 2 "RTL_SYNTH_DRYRUN must be 0 or 1" "DRYRUN=2"

# mpipe with one push and one pop: itself and its ring_ram, two modules in two processes; run again, both
# netlists come from the cache and give the same table; with RTL_SYNTH_ABC=fast, both are mapped again
run_split() { RTL_SYNTH_SPLIT=1 RTL_SYNTH_FLATTEN=0 RTL_SYNTH_JOBS=2 RTL_SYNTH_READ=top RTL_SYNTH_PARAMS="NPUSH=1 K=1" \
          bash "$script" mpipe "$tmp/s" 2>&1; }
# the resource table without its first line (which has the wall time)
table() { sed 1d "$tmp/s/mpipe.summary.txt"; }
out=$(run_split); rc=$?
if [ "$rc" != 0 ]; then
  fail "split mpipe: rc $rc"; echo "$out"
else
  ndone=$(grep -c "^rtl_synth: split: done [^ ]* ([0-9]* s)" <<<"$out")
  [ "$ndone" = 2 ] || fail "split mpipe: $ndone modules synthesised, expected 2 (mpipe, ring_ram)"
  total=$(awk '$1 == "LUT" { print $2 }' "$tmp/s/mpipe.summary.txt")
  # each module's own LUT cells (its stat, before the sum), one instance of each here
  sum=$(cat "$tmp"/s/mpipe.split/[0-9]*.stat.txt |
        awk '$1 ~ /^(LUT[1-6]|INV)$/ && NF == 2 { n += $2 } END { print n + 0 }')
  if [ -z "$total" ] || [ "$total" = 0 ] || [ "$total" != "$sum" ]; then
    fail "split mpipe: total LUT '$total', sum of the modules' own LUTs '$sum'"
  fi
  first=$(table)
  # logic depth: one line per module (mpipe, ring_ram) and the row naming the worst of the two
  ndepth=$(wc -l < "$tmp/s/mpipe.depth.tsv")
  [ "$ndepth" = 2 ] || fail "split mpipe: $ndepth lines in mpipe.depth.tsv, expected 2"
  grep -q "^  LUT-levels  *[0-9.]*   (longest path, ports included, in [^ ]* of 2 modules; register to register: [0-9.]*;" \
    "$tmp/s/mpipe.summary.txt" || fail "split mpipe: no LUT levels row: $(cat "$tmp/s/mpipe.summary.txt")"
  out=$(run_split); rc=$?
  ncache=$(grep -c "^rtl_synth: split: done [^ ]* (from $tmp/s/mpipe.cache/" <<<"$out")
  [ "$rc" = 0 ] && [ "$ncache" = 2 ] || fail "split mpipe again: rc $rc, $ncache of 2 from the cache: $out"
  [ "$(table)" = "$first" ] || fail "split mpipe from the cache: table differs: $(table) / $first"
  # netlists cached without their depth (before RTL_SYNTH_DEPTH): measured again from the netlist
  rm -f "$tmp"/s/mpipe.cache/*.depth.*
  out=$(run_split); rc=$?
  ncache=$(grep -c "^rtl_synth: split: done [^ ]* (from $tmp/s/mpipe.cache/" <<<"$out")
  [ "$rc" = 0 ] && [ "$ncache" = 2 ] || fail "split mpipe, cache without depth: rc $rc, $ncache of 2 from the cache: $out"
  [ "$(table)" = "$first" ] || fail "split mpipe, cache without depth: table differs: $(table) / $first"
  out=$(RTL_SYNTH_DEPTH=0 run_split); rc=$?
  [ "$rc" = 0 ] && ! grep -q "LUT-levels" "$tmp/s/mpipe.summary.txt" || fail "RTL_SYNTH_DEPTH=0: rc $rc or a LUT-levels row"
  out=$(RTL_SYNTH_ABC=fast run_split); rc=$?
  nfast=$(grep -c "^rtl_synth: split: done [^ ]* ([0-9]* s)" <<<"$out")
  [ "$rc" = 0 ] && [ "$nfast" = 2 ] || fail "split mpipe, RTL_SYNTH_ABC=fast: rc $rc, $nfast of 2 synthesised: $out"
  grep -q "abc -fast" "$tmp/s/mpipe.split/1.log" || fail "RTL_SYNTH_ABC=fast: no 'abc -fast' in the log"
  lut=$(awk '$1 == "LUT" { print $2 }' "$tmp/s/mpipe.summary.txt")
  [ -n "$lut" ] && [ "$lut" -gt 0 ] || fail "RTL_SYNTH_ABC=fast: LUT '$lut'"
fi
[ "$fails" = 0 ] || exit 1
echo "rtl_synth: split synthesis and bad settings as documented"

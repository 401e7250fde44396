#!/usr/bin/env bash
# scripts/fit_train_calibration.py on a two-point grid: it runs every row of both given tables, --dump keeps
# every row's error at every point, and --load refits from that file to the same output without running a
# row (so the fit on one table, --fit-on, needs no second run). About 10 s on the 2-core VM.
# usage: fit_script.sh CXLSIM SOURCE_DIR
set -u
bin=$1 src=$2
script=$src/scripts/fit_train_calibration.py
if ! command -v python3 >/dev/null; then
  echo "python3 not found: fit_train_calibration.py not checked"
  exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
grid=(--grid gpu.kernel_overhead=3us,6us --grid gpu.memory_efficiency=0.575
      --grid training.host_overhead_microbatch=1000us)
if ! python3 "$script" --cxlsim "$bin" -j 2 "${grid[@]}" --dump "$tmp/errors.json" >"$tmp/run" 2>&1; then
  echo "FAIL: the fit run"; cat "$tmp/run"; fails=$((fails + 1))
fi
# two points, 18 rows each (8 of Korthikanti Table 5, 10 of Narayanan Table 1), every error finite
if ! python3 - "$tmp/errors.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["keys"] == ["gpu.kernel_overhead", "gpu.memory_efficiency", "training.host_overhead_microbatch"], d["keys"]
assert [p[0] for p in d["points"]] == ["3us", "6us"], d["points"]
assert len(d["rows"]) == 18 and all(len(e) == 18 for e in d["errors"])
assert all(math.isfinite(x) and abs(x) < 1 for e in d["errors"] for x in e)
assert d["errors"][0] != d["errors"][1]    # the launch gap moves the rows
PY
then
  echo "FAIL: the dump"; fails=$((fails + 1))
fi
grep -q "^fit (least mean |error| over the 18 rows of all)" "$tmp/run" || { echo "FAIL: no fit line"; fails=$((fails + 1)); }
grep -q "leave-one-out mean |error|" "$tmp/run" || { echo "FAIL: no leave-one-out"; fails=$((fails + 1)); }
# refit from the dump: the same output, no row run (a cxlsim that does not exist would fail any run)
if ! python3 "$script" --cxlsim "$tmp/none" --load "$tmp/errors.json" >"$tmp/load" 2>&1 || ! cmp -s "$tmp/run" "$tmp/load"; then
  echo "FAIL: --load differs from the run"; diff "$tmp/run" "$tmp/load" | head; fails=$((fails + 1))
fi
# --load repeated joins dumps: the same dump twice keeps each point once, so the output is the same
if ! python3 "$script" --cxlsim "$tmp/none" --load "$tmp/errors.json" --load "$tmp/errors.json" >"$tmp/load2" 2>&1 ||
   ! cmp -s "$tmp/run" "$tmp/load2"; then
  echo "FAIL: --load twice differs from the run"; diff "$tmp/run" "$tmp/load2" | head; fails=$((fails + 1))
fi
# a dump of other keys is refused, not mixed in
python3 - "$tmp/errors.json" "$tmp/other.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["keys"] = ["gpu.kernel_overhead", "gpu.memory_efficiency", "training.micro_batch"]
json.dump(d, open(sys.argv[2], "w"))
PY
if python3 "$script" --cxlsim "$tmp/none" --load "$tmp/errors.json" --load "$tmp/other.json" >"$tmp/bad" 2>&1 ||
   ! grep -q "not \[" "$tmp/bad"; then
  echo "FAIL: --load of dumps with other keys was not refused"; cat "$tmp/bad"; fails=$((fails + 1))
fi
if ! python3 "$script" --cxlsim "$tmp/none" --load "$tmp/errors.json" --fit-on korthikanti >"$tmp/k" 2>&1 ||
   ! grep -q "over the 8 rows of korthikanti" "$tmp/k"; then
  echo "FAIL: --load --fit-on korthikanti"; cat "$tmp/k"; fails=$((fails + 1))
fi
# the stored dump of the adopted fit (docs/calibration.md, 44db0dc) refits to the adopted point without a run
dump=$src/data/calibration/train-fit-057ede1.json
if ! python3 "$script" --cxlsim "$tmp/none" --load "$dump" >"$tmp/stored" 2>&1 ||
   ! grep -q "^fit .*: gpu.kernel_overhead=17.5us, gpu.memory_efficiency=0.60, training.host_overhead_microbatch=750us$" "$tmp/stored"; then
  echo "FAIL: $dump does not refit to the adopted point"; grep "^fit" "$tmp/stored"; fails=$((fails + 1))
fi
[ "$fails" = 0 ] && echo "fit_train_calibration.py: ok"
exit $((fails > 0))

#!/usr/bin/env bash
# scripts/plot.py (issue 32, item 5): each kind of chart drawn from outputs made here (probe --json and
# --csv of two devices and of two mixes, train --json, memory --json, a sweep's CSV and JSON lines),
# as PNG and SVG, checked to be images (the PNG signature and a non-empty IHDR, SVG that parses as XML
# with an <svg> root); wrong inputs fail with their exit status and a message naming the file. Skipped
# (77) when the Python that CMake found (CXLSIM_PLOT_PYTHON, default /usr/bin/python3) has no matplotlib.
# 9.4 s of CPU, 29 s of wall time at load average 12 on the 2-core VM (2026-12-06), most of it matplotlib
# drawing the five charts.
# usage: plot.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"
py=${CXLSIM_PLOT_PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
  echo "plot: $py has no matplotlib (apt-get install python3-matplotlib): skipped"
  exit 77
fi
plot() { "$py" "$src/scripts/plot.py" "$@"; }
has() { grep -qF -- "$1" "$tmp/err" || bad "$2: no '$1' in: $(head -c 400 "$tmp/err")"; }
cd "$tmp" || exit 1
"$bin" probe asic --quick --json asic.json --csv asic.csv >/dev/null 2>&1
"$bin" probe asic-ddr4 --quick --json ddr4.json >/dev/null 2>&1
"$bin" probe asic --quick --mixes 100:0,70:30 --json mixes.json --csv mixes.csv >/dev/null 2>&1
"$bin" train --json train.json >/dev/null 2>&1
"$bin" memory --json memory.json >/dev/null 2>&1
"$bin" sweep "$src/configs/sweeps/gpt3-175b-1024-layouts.yaml" --csv sweep.csv --jsonl sweep.jsonl -j 2 >/dev/null 2>&1
for f in asic.json asic.csv ddr4.json mixes.json mixes.csv train.json memory.json sweep.csv sweep.jsonl; do
  [ -s "$f" ] && ok || bad "cxlsim did not write $f"
done

expect_rc 0 "latency" plot latency asic.json ddr4.json mixes.json asic.csv mixes.csv -o lat.png -o lat.svg
expect_rc 0 "bandwidth" plot bandwidth asic.json ddr4.json mixes.json -o bw.svg -o bw.png
expect_rc 0 "sweep" plot sweep sweep.csv --x training.pp --group training.tp --logx -o sweep.png -o sweep.svg
expect_rc 0 "breakdown" plot breakdown train.json sweep.csv -o bd.png -o bd.svg
expect_rc 0 "memory" plot memory memory.json sweep.jsonl -o mem.png -o mem.svg
"$py" - lat.png lat.svg bw.svg bw.png sweep.png sweep.svg bd.png bd.svg mem.png mem.svg <<'PY' \
  && ok || bad "not valid images"
import struct, sys, xml.etree.ElementTree as ET
for f in sys.argv[1:]:
    if f.endswith(".png"):
        b = open(f, "rb").read(33)
        w, h = struct.unpack(">II", b[16:24])
        assert b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR" and w > 100 and h > 100, f
    else:
        assert ET.parse(f).getroot().tag.endswith("svg"), f
PY

# wrong inputs: exit 3 naming the file and what it should be; unreadable 5; command line 2
expect_rc 3 "latency of a train output" plot latency train.json -o x.png
has "train.json: no loaded-latency curve" "latency of a train output"
expect_rc 3 "bandwidth of a CSV" plot bandwidth asic.csv -o x.png
has "asic.csv: not JSON" "bandwidth of a CSV"
expect_rc 3 "memory of a train output" plot memory train.json -o x.png
has "give cxlsim memory --json" "memory of a train output"
expect_rc 3 "breakdown of a probe output" plot breakdown asic.json -o x.png
has "no 'breakdown_s'" "breakdown of a probe output"
expect_rc 3 "sweep of a probe CSV" plot sweep asic.csv --x a -o x.png
has "not a sweep output" "sweep of a probe CSV"
expect_rc 2 "sweep: unknown axis" plot sweep sweep.csv --x training.ppp -o x.png
has "training.ppp: not a column" "unknown axis"
has "axes: training.pp, training.tp, training.sp" "unknown axis lists the axes"
expect_rc 2 "sweep without --x" plot sweep sweep.csv -o x.png
expect_rc 2 "unknown format" plot latency asic.json -o x.jpg
expect_rc 2 "unknown kind" plot pie asic.json -o x.png
expect_rc 5 "missing input" plot latency nothere.json -o x.png
has "nothere.json: cannot read" "missing input"
printf '{"curve": [' > torn.json
expect_rc 3 "torn JSON" plot latency torn.json -o x.png
has "torn.json: not JSON (line 1" "torn JSON"
expect_rc 5 "unwritable output" plot latency asic.json -o /nonexistent/x.png
[ ! -e x.png ] && ok || bad "a failed chart left x.png"
finish plot

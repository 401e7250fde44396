#!/usr/bin/env bash
# probe's measurement method (issue 30, items 6-8 and 10): staggered requester phases keep the first point
# of the loaded-latency curve near the idle latency where requesters in phase do not; Poisson arrivals are
# seeded and deterministic; the single-stream figure and the row-hit rates are printed; --mixes gives a
# bandwidth and a curve per mix in text, JSON and CSV; figures without samples read n/a.
# usage: probe.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"
py() { python3 - "$@"; }

# the first curve point within 10 % of the idle latency with staggered phases, not with requesters in phase
for dev in local-ddr5 asic-ddr4; do
  expect_rc 0 "probe $dev" "$bin" probe "$dev" --quiet --points 2 --samples 500 --json "$tmp/$dev.json"
  py "$tmp/$dev.json" <<'PY' && ok || bad "$dev: first curve point not within 10 % of the idle latency"
import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(not j["curve"][0]["mean_latency_ns"] <= 1.10 * j["idle_read_latency_ns"])
PY
  expect_rc 0 "probe $dev aligned" "$bin" probe "$dev" --quiet --points 2 --samples 500 --arrivals aligned \
    --json "$tmp/$dev-al.json"
  py "$tmp/$dev.json" "$tmp/$dev-al.json" <<'PY' && ok || bad "$dev: requesters in phase should queue more than staggered ones"
import json, sys
s, a = (json.load(open(f))["curve"][0]["mean_latency_ns"] for f in sys.argv[1:3])
sys.exit(not a > s)
PY
done
grep -q '"arrivals": "aligned"' "$tmp/asic-ddr4-al.json" && ok || bad "JSON does not name the arrivals"

# the bare DDR4-3200 channel of issue 30 (no host path): idle 46 ns; at 10 % load requesters in phase read
# 102 ns, staggered ones 53-55 ns, as DRAMsim3 (55) and Ramulator 2 (53) give on the same traffic
printf 'name: bare\nextends: asic-ddr4\npath: local\nhost:\n  core_latency: 0.625ns\n  port_latency: 0ns\n' \
  > "$tmp/bare.yaml"
for a in staggered aligned; do
  expect_rc 0 "bare DDR4 $a" "$bin" probe "$tmp/bare.yaml" --quiet --points 2 --samples 500 --arrivals $a \
    --json "$tmp/bare-$a.json"
done
py "$tmp/bare-staggered.json" "$tmp/bare-aligned.json" <<'PY' && ok || bad "bare DDR4: not the published 10 % figures"
import json, sys
s, a = (json.load(open(f)) for f in sys.argv[1:3])
idle, st, al = s["idle_read_latency_ns"], s["curve"][0]["mean_latency_ns"], a["curve"][0]["mean_latency_ns"]
sys.exit(not (44 < idle < 48 and 50 < st < 58 and al > 90))
PY

# streams: one stream beside all of them, row hits printed; on the local path the link figures are n/a
expect_rc 0 "probe local-ddr5 text" "$bin" probe local-ddr5 --quick --points 2 --samples 50
grep -qE '^ +1 stream, reads +[0-9.]+ ' "$tmp/out" && ok || bad "no single-stream row"
grep -qE '^ +100:0 \(reads\) +[0-9.]+ +[0-9.]+ +[0-9.]+ +n/a +n/a +[0-9.]+%$' "$tmp/out" && ok ||
  bad "local path: link utilisation not n/a, or no row-hit rate"
grep -qE '^ +0:100 \(writes\) +[0-9.]+ +n/a +n/a ' "$tmp/out" && ok || bad "write-only read latency not n/a"
py "$tmp/local-ddr5.json" <<'PY' && ok || bad "JSON: single stream, n/a as null"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["single_stream_gbps"] > 0
assert j["single_stream_stats"]["row_buffer_hit_rate"] > 0.5      # one sequential stream: open rows
w = j["bandwidth_stats"]["write_only"]
assert w["read_latency_ns"]["mean"] is None and w["link_utilisation"]["m2s"] is None
assert j["bandwidth_stats"]["read_only"]["write_latency_ns"]["p99"] is None
PY

# Poisson arrivals: seeded, so the same seed gives the same curve, another seed another one
for s in 1a 1b 2; do
  "$bin" probe asic --quick --points 3 --samples 50 --arrivals poisson --seed "${s%[ab]}" --csv "$tmp/p$s.csv" \
    >/dev/null 2>&1
done
[ -s "$tmp/p1a.csv" ] && cmp -s "$tmp/p1a.csv" "$tmp/p1b.csv" && ok || bad "poisson: same seed, different curve"
! cmp -s "$tmp/p1a.csv" "$tmp/p2.csv" && ok || bad "poisson: the seed has no effect"

# --mixes: a bandwidth and a curve per mix, in text, JSON and CSV
expect_rc 0 "probe --mixes" "$bin" probe asic --quick --points 2 --samples 50 --mixes 100:0,70:30,0:100 \
  --json "$tmp/m.json" --csv "$tmp/m.csv"
[ "$(grep -c 'loaded latency, random' "$tmp/out")" = 3 ] && ok || bad "--mixes: not one curve per mix in the text"
grep -qE '^ +70:30 +[0-9.]+ ' "$tmp/out" && ok || bad "--mixes: no bandwidth row for 70:30"
head -1 "$tmp/m.csv" | grep -q '^mix,offered_gbps,' && ok || bad "--mixes: CSV has no mix column"
[ "$(grep -c '^0:100,' "$tmp/m.csv")" = 2 ] && ok || bad "--mixes: CSV rows of 0:100 missing"
py "$tmp/m.json" <<'PY' && ok || bad "--mixes: JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert list(j["bandwidth_gbps"]) == ["100:0", "70:30", "0:100"]
assert [(c["read"], c["write"]) for c in j["curves"]] == [(100, 0), (70, 30), (0, 100)]
assert all(len(c["points"]) == 2 and c["saturation_gbps"] > 0 for c in j["curves"])
assert j["curves"][2]["points"][0]["mean_latency_ns"] > 0          # 0:100: the write latency
PY
for bad_mix in 100 100:0, 0:0 256:1 1:2:3 ,1:0 a:b; do
  expect_rc 2 "--mixes $bad_mix" "$bin" probe asic --quick --mixes "$bad_mix"
done
expect_rc 2 "--arrivals bursty" "$bin" probe asic --quick --arrivals bursty
expect_rc 2 "--seed -1" "$bin" probe asic --quick --seed -1
finish probe

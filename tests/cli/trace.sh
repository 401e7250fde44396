#!/usr/bin/env bash
# cxlsim train --trace: the Chrome trace of every shipped experiment parses and its slices nest per track
# (tests/trace_check.py); categories, args, counters and flows are there; --trace-stages and
# --trace-window keep only what they name; .gz is the same trace compressed; the trace is deterministic;
# a full disk (/dev/full) fails with exit 5 and an interrupted run leaves nothing behind.
# usage: trace.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"
check="python3 $src/tests/trace_check.py"
# a trace without its provenance (otherData names the command line, which differs between the runs compared)
nometa() { sed '/^"otherData":/,$d'; }

# every shipped experiment, its first 300 ms (the whole iteration takes up to minutes of trace; the
# window keeps the check short while every track kind appears). The two slowest pools (2x2, 2x4: 12-20 s
# of simulation each) and the DeepSeek-V3 expert offload (3 s) are left to cli_train: their tracks are
# those of pool-2x1 and pool-4x1.
for name in $("$bin" presets experiments | awk '{print $1}'); do
  case $name in llama2-70b-cxl-pool-2x2|llama2-70b-cxl-pool-2x4|deepseek-v3-cxl-experts-gpu) continue ;; esac
  expect_rc 0 "train $name --trace" "$bin" train "$name" --trace "$tmp/e.json.gz" --trace-window 0s:300ms
  $check "$tmp/e.json.gz" >"$tmp/chk" && ok || bad "$name: $(head -5 "$tmp/chk")"
done

# the CXL experiment whole: categories, args, CXL counters, plain and gzip identical, deterministic
exp=$src/configs/experiments/cxl-offload-small.yaml
expect_rc 0 "cxl-offload-small --trace" "$bin" train "$exp" --trace "$tmp/c.json"
expect_rc 0 "cxl-offload-small --trace .gz" "$bin" train "$exp" --trace "$tmp/c.json.gz"
$check "$tmp/c.json" "$tmp/c.json.gz" >"$tmp/chk" && ok || bad "cxl-offload-small: $(head -5 "$tmp/chk")"
# the same events (the provenance at the end names the command line, which differs in the file name)
cmp -s <(gzip -dc "$tmp/c.json.gz" | nometa) <(nometa < "$tmp/c.json") && ok || bad ".json.gz does not hold the same trace"
# the same command line gives the same bytes, provenance included
mkdir "$tmp/d1" "$tmp/d2"
(cd "$tmp/d1" && "$bin" train "$exp" --trace c.json >/dev/null 2>&1)
(cd "$tmp/d2" && "$bin" train "$exp" --trace c.json >/dev/null 2>&1)
cmp -s "$tmp/d1/c.json" "$tmp/d2/c.json" && ok || bad "trace differs between runs"
# provenance: the trace's otherData holds the members every JSON output starts with, the same values
expect_rc 0 "--json and --trace together" "$bin" train "$exp" --json "$tmp/pj.json" --trace "$tmp/pt.json.gz" \
  --trace-window 0s:1ms
python3 - "$tmp/pj.json" "$tmp/pt.json.gz" <<'PY' && ok || bad "trace provenance (otherData)"
import gzip, json, sys
j = json.load(open(sys.argv[1]))
o = json.load(gzip.open(sys.argv[2], "rt"))["otherData"]
keys = ["cxlsim_version", "commit", "schema_version", "command_line", "config_hash"]
assert list(o) == keys, list(o)
assert all(o[k] == j[k] for k in keys), (o, {k: j[k] for k in keys})
assert o["config_hash"].startswith("fnv1a64:") and "--trace" in o["command_line"], o
PY
python3 - "$tmp/c.json" <<'PY' && ok || bad "CXL trace content"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
cats = {e["cat"] for e in ev if e["ph"] == "X"}
assert {"kernel", "cxl", "cxl.domain"} <= cats, cats
cxl = [e for e in ev if e["ph"] == "X" and e["cat"] == "cxl"]
assert all({"bytes_per_gpu", "read:write", "issued_by"} <= e["args"].keys() for e in cxl)
assert any(e["args"]["read:write"] == "1:0" for e in cxl) and any(e["args"]["read:write"] == "0:1" for e in cxl)
k = next(e for e in ev if e["ph"] == "X" and e["name"] == "qkv.fwd")
assert "shape" in k["args"] and "bytes" in k["args"], k
counters = {e["name"] for e in ev if e["ph"] == "C"}
assert {"nvlink utilisation", "CXL GB/s", "CXL in flight", "CXL DevLoad", "CXL queue depth"} <= counters, counters
# DevLoad: the mix of S2M messages over each interval, fractions summing to 1 (0 when idle); queue
# depths: mean entries, some interval of the transfers with queued requests
dl = [e["args"] for e in ev if e["ph"] == "C" and e["name"] == "CXL DevLoad"]
assert all(list(a) == ["light", "optimal", "moderate", "severe"] for a in dl), dl[:2]
assert all(abs(sum(a.values()) - 1) < 1e-6 or sum(a.values()) == 0 for a in dl)
assert any(a["moderate"] + a["severe"] > 0 for a in dl), "no loaded interval"
qd = [e["args"] for e in ev if e["ph"] == "C" and e["name"] == "CXL queue depth"]
assert len(qd) == len(dl) and all(list(a) == ["ingress", "dram"] and min(a.values()) >= 0 for a in qd)
assert any(a["ingress"] > 1 and a["dram"] > 1 for a in qd), qd[:4]
# timestamps: microseconds with exactly three decimals
raw = open(sys.argv[1]).read()
import re
assert all(len(m) == 3 for m in re.findall(r'"ts":\d+\.(\d+)', raw))
PY

# a pipeline (8 stages, interleaved): sends on lanes, flows from sender to receiver, stage filter, window
pipe=$src/configs/validation/korthikanti/gpt3-175b-sel.yaml
# the trace streams: a 61 MB trace costs the process under 16 MB of peak resident memory more than the same
# run without a trace (it was built in memory; relative, so that a sanitized build's overhead cancels)
python3 - "$bin" "$pipe" <<'PY' && ok || bad "the trace is not streamed"
import os, subprocess, sys
def run(extra):
    p = subprocess.Popen([sys.argv[1], "train", sys.argv[2], "--quiet"] + extra, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    n = 0
    while True:
        chunk = p.stdout.read(1 << 20)
        if not chunk:
            break
        n += len(chunk)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, (extra, p.returncode)
    return n, ru.ru_maxrss / 1024
n, rss_mb = run(["--trace", "-"])
_, base_mb = run([])
assert n > 50e6 and rss_mb - base_mb < 16, (n, rss_mb, base_mb)
PY
expect_rc 0 "pipeline --trace-stages 0-2" "$bin" train "$pipe" --trace "$tmp/p.json.gz" --trace-stages 0-2
$check "$tmp/p.json.gz" >"$tmp/chk" && ok || bad "pipeline: $(head -5 "$tmp/chk")"
expect_rc 0 "pipeline --trace-stages 1,5 --trace-window" "$bin" train "$pipe" --trace "$tmp/w.json" \
  --trace-stages 1,5 --trace-window 2ms:40ms
$check "$tmp/w.json" >"$tmp/chk" && ok || bad "window: $(head -5 "$tmp/chk")"
python3 - "$tmp/p.json.gz" "$tmp/w.json" <<'PY' && ok || bad "pipeline trace content, stage filter or window"
import gzip, json, sys
from decimal import Decimal
ev = json.load(gzip.open(sys.argv[1], "rt"))["traceEvents"]
pids = {e["pid"] for e in ev}
assert pids <= {0, 1, 2, 100000, 100001, 100002}, pids
pp = [e for e in ev if e["ph"] == "X" and e["cat"] == "pp"]
assert pp and all({"bytes", "from_stage", "to_stage", "fabric"} <= e["args"].keys() for e in pp)
assert any(e["ph"] == "s" for e in ev) and any(e["ph"] == "f" for e in ev)
tp = next(e for e in ev if e["ph"] == "X" and e["cat"] == "tp")
assert {"bytes", "op", "algorithm", "protocol"} <= tp["args"].keys(), tp
w = json.load(open(sys.argv[2]), parse_float=Decimal)["traceEvents"]
assert {e["pid"] for e in w} <= {1, 5, 100001, 100005}, {e["pid"] for e in w}
xs = [e for e in w if e["ph"] == "X"]
assert xs and all(Decimal("2000") <= e["ts"] and e["ts"] + e["dur"] <= Decimal("40000") for e in xs)
assert all(Decimal("2000") <= e["ts"] <= Decimal("40000") for e in w if e["ph"] in "Csf")
PY

# a full disk: exit 5, no report, no JSON and no temporary left behind. /dev/full is reached through a
# link of our own (a binary that replaced its destination would replace the link, not the device).
ln -s /dev/full "$tmp/full"
expect_rc 5 "--trace /dev/full" "$bin" train --trace "$tmp/full" --json "$tmp/full.json"
[ -e "$tmp/full.json" ] && bad "JSON written although the trace failed" || ok
grep -q "No space left" "$tmp/err" && ok || bad "full disk message: $(head -c 300 "$tmp/err")"
[ -s "$tmp/out" ] && bad "report printed although the trace failed" || ok
ls "$tmp" | grep -q tmp && bad "temporary file left behind: $(ls "$tmp")" || ok
[ -L "$tmp/full" ] && ok || bad "the link to /dev/full was replaced"
ln -s /dev/full "$tmp/full.json.gz"
expect_rc 5 "--trace FILE.gz to a full disk" "$bin" train --trace "$tmp/full.json.gz" --trace-window 0s:1ms
[ -L "$tmp/full.json.gz" ] && ok || bad "the link full.json.gz was replaced"
expect_rc 5 "--json on a full disk" "$bin" train --trace "$tmp/jf.json" --json "$tmp/full"
[ -e "$tmp/jf.json" ] && bad "trace left behind although the JSON failed" || ok
echo old >"$tmp/jf.json"
expect_rc 5 "--json on a full disk, trace file exists" "$bin" train --trace "$tmp/jf.json" --json "$tmp/full"
[ "$(cat "$tmp/jf.json")" = old ] && ok || bad "the old trace was replaced although the JSON failed"
expect_rc 5 "--trace into a missing folder" "$bin" train --trace "$tmp/no/such/t.json"
ls "$tmp" | grep -q tmp && bad "temporary file left behind: $(ls "$tmp")" || ok

# '-': the trace alone on standard output (plain or gzip), the summary on standard error
expect_rc 0 "--trace -" "$bin" train "$exp" --trace - --trace-window 0s:5ms
$check "$tmp/out" >"$tmp/chk" && ok || bad "--trace -: standard output is not the trace: $(head -5 "$tmp/chk")"
grep -q "iteration time" "$tmp/err" && ok || bad "--trace -: summary not on standard error"
[ ! -e ./- ] && ok || bad "--trace -: wrote a file named '-'"
"$bin" train "$exp" --trace "$tmp/w5.json" --trace-window 0s:5ms >/dev/null 2>&1
cmp -s <(nometa <"$tmp/out") <(nometa <"$tmp/w5.json") && ok || bad "--trace - differs from the trace written to a file"
expect_rc 0 "--trace - with --json FILE" "$bin" train "$exp" --trace - --trace-window 0s:5ms --json "$tmp/j5.json"
cmp -s <(nometa <"$tmp/out") <(nometa <"$tmp/w5.json") && ok || bad "--trace - with --json: standard output is not the trace alone"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/j5.json" && ok || bad "--trace - with --json: no JSON"
ln -s /dev/stdout "$tmp/stdout.gz"
expect_rc 0 "--trace link to /dev/stdout" "$bin" train "$exp" --trace "$tmp/stdout.gz" --trace-window 0s:5ms
cmp -s <(gzip -dc "$tmp/out" | nometa) <(nometa <"$tmp/w5.json") && ok || bad "--trace link.gz to standard output: not the gzip trace"
[ -L "$tmp/stdout.gz" ] && ok || bad "the link to /dev/stdout was replaced"
expect_rc 5 "--trace - and --json -" "$bin" train --trace - --json -
grep -q "same file" "$tmp/err" && ok || bad "two outputs on standard output: $(head -c 300 "$tmp/err")"

# a FIFO: its reader gets the trace as it streams, the FIFO stays
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.got" & reader=$!
expect_rc 0 "--trace FIFO" "$bin" train "$exp" --trace "$tmp/fifo" --trace-window 0s:5ms
wait $reader
[ -p "$tmp/fifo" ] && ok || bad "the FIFO was replaced"
cmp -s <(nometa <"$tmp/fifo.got") <(nometa <"$tmp/w5.json") && ok || bad "the FIFO's reader did not get the trace"

# an existing trace keeps its mode; a read-only one is refused before the run and stays
echo old >"$tmp/m.json"; chmod 640 "$tmp/m.json"
expect_rc 0 "--trace over a 0640 file" "$bin" train "$exp" --trace "$tmp/m.json" --trace-window 0s:5ms
[ "$(stat -c %a "$tmp/m.json")" = 640 ] && ok || bad "mode of the replaced trace: $(stat -c %a "$tmp/m.json")"
echo old >"$tmp/ro.json"; chmod 444 "$tmp/ro.json"
expect_rc 5 "--trace over a read-only file" "$bin" train "$exp" --trace "$tmp/ro.json"
[ "$(cat "$tmp/ro.json")" = old ] && ok || bad "the read-only trace was replaced"

# the largest shipped trace, Megatron-1T (4 M events), compressed under the 100 MB asked for (its time is
# measured by bench/bench_trace, not asserted: docs/training.md)
expect_rc 0 "megatron-1t --trace .gz" "$bin" train "$src/configs/validation/korthikanti/megatron-1t-full.yaml" \
  --trace "$tmp/1t.json.gz" --quiet
size=$(stat -c %s "$tmp/1t.json.gz")
[ "$size" -lt 100000000 ] && [ "$size" -gt 10000000 ] && ok || bad "Megatron-1T trace: $size bytes compressed"
rm -f "$tmp/1t.json.gz"

# interrupted: SIGTERM while the trace streams removes its temporary file
"$bin" train "$src/configs/validation/korthikanti/megatron-1t-full.yaml" --trace "$tmp/int.json" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do ls "$tmp" | grep -q "int.json.tmp" && break; sleep 0.05; done
kill -TERM "$pid"; wait "$pid"; rc=$?
[ "$rc" = 143 ] && ok || bad "SIGTERM: exit $rc, expected 143 (the run may have ended first)"
ls "$tmp" | grep -q "int.json" && bad "interrupted run left $(ls "$tmp" | grep int.json)" || ok

# bad options
expect_rc 2 "--trace-stages without --trace" "$bin" train --trace-stages 0
expect_rc 2 "stage beyond the pipeline" "$bin" train --trace "$tmp/x.json" --trace-stages 1
grep -q "stage 1 does not exist" "$tmp/err" && ok || bad "stage message: $(head -c 300 "$tmp/err")"
expect_rc 2 "stage list syntax" "$bin" train "$pipe" --trace "$tmp/x.json" --trace-stages 3-1
expect_rc 2 "window backwards" "$bin" train --trace "$tmp/x.json" --trace-window 3ms:1ms
expect_rc 2 "window without a unit" "$bin" train --trace "$tmp/x.json" --trace-window 1:2ms
grep -q "unit" "$tmp/err" && ok || bad "window unit message: $(head -c 300 "$tmp/err")"
[ -e "$tmp/x.json" ] && bad "trace written after a usage error" || ok

finish trace

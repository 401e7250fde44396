#!/usr/bin/env bash
# `--set KEY=VALUE` and `cxlsim sweep` end to end (issue 32): overrides reach train, memory, probe and
# check through the files' checks, with errors named `--set KEY` and in the provenance (command_line,
# config_hash, --dump-config); a sweep's rows are the same for any -j and after --resume, a crashed
# worker costs its own point only, infeasible points keep a single run's message, bad sweep files name
# the axis, and the outputs follow the output rules (standard output, all or none).
# usage: sweep.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"
has() { grep -qF -- "$1" "$tmp/out" "$tmp/err" || bad "$2: no '$1' in: $(head -c 400 "$tmp/err" "$tmp/out")"; }

# ---- --set ----
expect_rc 0 "train --set" "$bin" train --set training.tp=4 --set training.dp=4
has "tp 4, pp 1, dp 4" "train --set layout"
expect_rc 3 "unknown key" "$bin" train --set training.tpp=4
has "cxlsim: --set training.tpp: unknown key 'training.tpp'; did you mean 'tp'?" "unknown key message"
expect_rc 3 "wrong unit" "$bin" memory --set training.grad_bucket=40parsec
has "--set training.grad_bucket: " "unit message"
has "accepted units" "unit message lists units"
expect_rc 3 "bad choice" "$bin" memory --set training.recompute=some
has "--set training.recompute: " "choice message"
expect_rc 3 "layout check at the override" "$bin" memory --set training.tp=3
has "--set training.tp: training.tp: 3 does not divide" "layout message"
expect_rc 2 "no value" "$bin" train --set
expect_rc 2 "no =" "$bin" train --set training.tp
expect_rc 2 "not an option of presets" "$bin" presets --set a=b
expect_rc 0 "check --set" "$bin" check asic --set link.width=16
expect_rc 3 "check --set unknown" "$bin" check asic --set link.widht=16
has "--set link.widht: " "device message"
has "did you mean 'width'" "device suggestion"
expect_rc 0 "probe --set" "$bin" probe asic --quick --set link.width=16 --json "$tmp/p16.json"
expect_rc 0 "probe" "$bin" probe asic --quick --json "$tmp/p8.json"
h16=$(grep config_hash "$tmp/p16.json"); h8=$(grep config_hash "$tmp/p8.json")
[ "$h16" != "$h8" ] && ok || bad "probe: the config hash does not change with --set"
grep -q '"--set",' "$tmp/p16.json" && ok || bad "probe: --set not in command_line"
# the same configuration however it is written: same hash; the dump shows the override
"$bin" memory --json "$tmp/m0.json" >/dev/null 2>&1
"$bin" memory --set training.tp=2 --json "$tmp/m1.json" >/dev/null 2>&1
"$bin" memory --set training.tp=4 --set training.dp=4 --json "$tmp/m2.json" >/dev/null 2>&1
[ "$(grep config_hash "$tmp/m0.json")" = "$(grep config_hash "$tmp/m1.json")" ] && ok || bad "same config, other hash"
[ "$(grep config_hash "$tmp/m0.json")" != "$(grep config_hash "$tmp/m2.json")" ] && ok || bad "override not in hash"
"$bin" train --dump-config --set training.tp=4 --set training.dp=4 > "$tmp/dump" 2>&1
grep -q "^  tp: 4$" "$tmp/dump" && grep -q "^  dp: 4$" "$tmp/dump" && ok || bad "--dump-config without the override"
# without --set the outputs are as before: the JSON apart from command_line and wall time
mkdir "$tmp/t0" "$tmp/t1"
"$bin" train --json "$tmp/t0/t.json" >/dev/null 2>&1
"$bin" train --set training.tp=2 --json "$tmp/t1/t.json" >/dev/null 2>&1
grep -v -e wall_seconds -e '"--set"' -e '"training.tp=2"' -e '/t.json"' "$tmp/t0/t.json" > "$tmp/t0.cut"
grep -v -e wall_seconds -e '"--set"' -e '"training.tp=2"' -e '/t.json"' "$tmp/t1/t.json" > "$tmp/t1.cut"
cmp -s "$tmp/t0.cut" "$tmp/t1.cut" && ok || bad "a --set of the file's own value changes the JSON"
# dp derived when not given
printf 'name: nodp\nmodel: llama2-7b\ngpu: h100-sxm\ncluster: { extends: dgx-h100, nodes: 4 }\ntraining: { global_batch: 1024, tp: 2, pp: 2 }\n' > "$tmp/nodp.yaml"
expect_rc 0 "dp derived" "$bin" memory "$tmp/nodp.yaml"
has "tp 2, pp 2, dp 8" "dp derived"
expect_rc 3 "dp not derivable" "$bin" memory "$tmp/nodp.yaml" --set cluster.nodes=3 --set training.pp=8
has "dp is not given" "dp not derivable message"

# ---- sweep ----
spec=$src/configs/sweeps/gpt3-175b-1024-layouts.yaml
expect_rc 0 "example sweep" "$bin" sweep "$spec" --csv "$tmp/a.csv" --jsonl "$tmp/a.jsonl" -j 2
has "24 points" "example summary"
has "best 5 by iteration_time_s" "example best"
[ "$(wc -l < "$tmp/a.csv")" = 25 ] && ok || bad "example: CSV rows $(wc -l < "$tmp/a.csv"), want 25"
[ "$(wc -l < "$tmp/a.jsonl")" = 24 ] && ok || bad "example: JSONL rows"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/a.jsonl" && ok || bad "JSONL does not parse"
grep -q ',infeasible,.*out of GPU memory' "$tmp/a.csv" && ok || bad "no infeasible point with its reason"
expect_rc 0 "example -j 1" "$bin" sweep "$spec" --csv "$tmp/b.csv" --jsonl "$tmp/b.jsonl" -j 1
cmp -s "$tmp/a.csv" "$tmp/b.csv" && cmp -s "$tmp/a.jsonl" "$tmp/b.jsonl" && ok || bad "rows differ between -j 1 and -j 2"
# an infeasible point's reason is the single run's message
base=$src/configs/sweeps/gpt3-175b-1024-a100.yaml
"$bin" train "$base" --set training.pp=1 --set training.tp=2 > /dev/null 2> "$tmp/single"
msg=$(sed 's/^cxlsim: //' "$tmp/single")
grep -qF -- "$msg" "$tmp/a.csv" && ok || bad "the sweep's reason is not the single run's: $msg"
# a point's figures are the single run's
"$bin" train "$base" --set training.pp=8 --set training.tp=4 --json "$tmp/p.json" > /dev/null 2>&1
it=$(python3 -c 'import json,sys; print("%.10g" % json.load(open(sys.argv[1]))["iteration_time_s"])' "$tmp/p.json")
grep -q "^14,8,4,true,ok,4,8,32,1,1536,$it," "$tmp/a.csv" && ok || bad "point 14 is not the single run ($it)"
# CSV on standard output by default, the summary on standard error
"$bin" sweep "$spec" -j 2 > "$tmp/stdout.csv" 2> "$tmp/stderr"
cmp -s "$tmp/stdout.csv" "$tmp/a.csv" && grep -q "best 5" "$tmp/stderr" && ok || bad "sweep to standard output"

# the progress line: on a terminal only
"$bin" sweep "$spec" -j 2 --csv "$tmp/nt.csv" > "$tmp/nt.out" 2> "$tmp/nt.err"
grep -q "points/s" "$tmp/nt.err" "$tmp/nt.out" && bad "progress line without a terminal" || ok
if command -v script > /dev/null 2>&1; then
  script -qc "'$bin' sweep '$spec' -j 2 --csv '$tmp/tt.csv'" /dev/null > "$tmp/tt.out" 2>&1
  grep -aq "sweep 24/24 points, .* points/s" "$tmp/tt.out" && ok || bad "no progress line on a terminal"
fi
expect_rc 0 "train --quiet" "$bin" train --quiet
expect_rc 0 "probe --quiet" "$bin" probe --quick --quiet

# a crashed worker costs its point only
cat > "$tmp/s.yaml" <<'Y'
base: llama2-7b-2x8-h100
axes:
  training.tp: { from: 1, to: 8, times: 2 }
  training.recompute: [none, full]
filter: training.tp <= 4
Y
expect_rc 0 "sweep with a crash" env CXLSIM_TEST_SWEEP_CRASH=3 "$bin" sweep "$tmp/s.yaml" --csv "$tmp/c.csv" -j 2
grep -q '^3,2,full,crashed,.*signal 6' "$tmp/c.csv" && ok || bad "crashed point: $(grep '^3,' "$tmp/c.csv")"
grep -q '^2,2,none,ok,' "$tmp/c.csv" && ok || bad "the others lost"
[ "$(wc -l < "$tmp/c.csv")" = 7 ] && ok || bad "filter: want 6 points"
# interrupted after 2 points: no output, a journal; a second run without --resume refuses; --resume
# finishes with the same rows as an uninterrupted run, and removes the journal
expect_rc 143 "interrupted" env CXLSIM_TEST_SWEEP_STOP_AFTER=2 "$bin" sweep "$tmp/s.yaml" --csv "$tmp/r.csv" --jsonl "$tmp/r.jsonl" -j 1
[ ! -e "$tmp/r.csv" ] && [ ! -e "$tmp/r.jsonl" ] && [ -s "$tmp/r.csv.partial" ] && ok || bad "interrupted: outputs or journal"
ls "$tmp" | grep -q tmp && bad "temporary files left" || ok
expect_rc 2 "journal without --resume" "$bin" sweep "$tmp/s.yaml" --csv "$tmp/r.csv" --jsonl "$tmp/r.jsonl"
has "--resume continues it" "journal message"
expect_rc 0 "resume" "$bin" sweep "$tmp/s.yaml" --csv "$tmp/r.csv" --jsonl "$tmp/r.jsonl" --resume -j 2
has "resuming from" "resume message"
"$bin" sweep "$tmp/s.yaml" --csv "$tmp/f.csv" --jsonl "$tmp/f.jsonl" > /dev/null 2>&1
cmp -s "$tmp/r.csv" "$tmp/f.csv" && cmp -s "$tmp/r.jsonl" "$tmp/f.jsonl" && ok || bad "resumed rows differ"
[ ! -e "$tmp/r.csv.partial" ] && ok || bad "journal left after the sweep"
# a journal of another sweep is refused
printf '# cxlsim sweep journal: fingerprint 0000000000000000, 6 points\n' > "$tmp/r.csv.partial"
expect_rc 3 "foreign journal" "$bin" sweep "$tmp/s.yaml" --csv "$tmp/r.csv" --resume
has "another sweep" "foreign journal message"
rm -f "$tmp/r.csv.partial"
# --set on the command line applies to every point (without sp, tp 1 fails on the GPU count instead)
expect_rc 0 "sweep --set" "$bin" sweep "$tmp/s.yaml" --set training.sp=false --csv "$tmp/g.csv"
grep -q '^0,1,none,invalid,.*tp 1 x pp 1 x dp 8 = 8 GPUs' "$tmp/g.csv" && ok || bad "sweep --set not applied"
# a full disk: nothing written, the journal kept for --resume
if [ -w /dev/full ]; then
  expect_rc 5 "CSV to /dev/full" "$bin" sweep "$tmp/s.yaml" --csv /dev/full --jsonl "$tmp/h.jsonl"
  [ ! -e "$tmp/h.jsonl" ] && ok || bad "all or none: the JSONL was written"
  rm -f "$tmp/h.jsonl.partial"
fi

# a device sweep (command probe): the figures of `cxlsim probe --quick` of each point
dspec=$src/configs/sweeps/asic-link-dram.yaml
expect_rc 0 "device sweep" "$bin" sweep "$dspec" --csv "$tmp/d.csv" --jsonl "$tmp/d.jsonl" -j 2
has "6 points" "device sweep summary"
has "best 6 by idle_read_latency_ns" "device sweep best"
"$bin" probe asic --quick --set link.width=16 --json "$tmp/w16.json" > /dev/null 2>&1
idle=$(python3 -c 'import json,sys; print("%.10g" % json.load(open(sys.argv[1]))["idle_read_latency_ns"])' "$tmp/w16.json")
grep -q "^5,16,DDR5,4800MT/s,same-bank,ok,$idle," "$tmp/d.csv" && ok || bad "device point 5 is not probe's ($idle)"
# crossing keys that must change together is refused at the axis (zip them)
printf 'base: asic\ncommand: probe\naxes:\n  dram.standard: [DDR4, DDR5]\n' > "$tmp/dx.yaml"
expect_rc 3 "device axis" "$bin" sweep "$tmp/dx.yaml"
has "axis 'dram.standard', value 'DDR4': --set dram.standard: " "device axis message"
printf 'base: llama2-7b-2x8-h100\nprobe: { quick: true }\naxes:\n  training.tp: [2]\n' > "$tmp/po.yaml"
expect_rc 3 "probe options without probe" "$bin" sweep "$tmp/po.yaml"
has "options of command probe only" "probe options message"

# ---- bad sweep files: exit 3, the sweep file's line and column, the axis ----
bad_spec() { # name expected-message yaml
  printf '%b' "$3" > "$tmp/$1.yaml"
  expect_rc 3 "$1" "$bin" sweep "$tmp/$1.yaml"
  has "$2" "$1"
}

bad_spec axis_key ":3:3: axis 'training.tpp', value '1': --set training.tpp: unknown key" 'base: llama2-7b-2x8-h100\naxes:\n  training.tpp: [1, 2]\n'
bad_spec axis_unit "axis 'training.grad_bucket', value '4 parsec': --set training.grad_bucket:" 'base: llama2-7b-2x8-h100\naxes:\n  training.grad_bucket: [40MB, 4 parsec]\n'
bad_spec empty ":3:16: axis 'training.tp' has no values: the product of the axes would be empty" 'base: llama2-7b-2x8-h100\naxes:\n  training.tp: []\n'
bad_spec zip_len "zip: axis 'training.dp' has 1 value(s) but 'training.tp' has 2" 'base: llama2-7b-2x8-h100\nzip:\n  - { training.tp: [1, 2], training.dp: [16] }\n'
bad_spec filter_none "filter: keeps none of the 2 points" 'base: llama2-7b-2x8-h100\naxes:\n  training.tp: [1, 2]\nfilter: training.tp > 5\n'
bad_spec filter_name "filter: 'training.pp' is not an axis" 'base: llama2-7b-2x8-h100\naxes:\n  training.tp: [1, 2]\nfilter: training.pp > 1\n'
bad_spec top_key "unknown key 'axis'; did you mean 'axes'?" 'base: llama2-7b-2x8-h100\naxis:\n  training.tp: [1, 2]\n'
bad_spec base ":1:7: base: unknown experiment 'nosuch'" 'base: nosuch\naxes:\n  training.tp: [1]\n'
bad_spec range "a range needs one of step" 'base: llama2-7b-2x8-h100\naxes:\n  training.tp: {from: 1, to: 8}\n'
bad_spec twice "axis 'training.tp' is given twice" 'base: llama2-7b-2x8-h100\naxes:\n  training.tp: [1]\nzip:\n  - { training.tp: [2] }\n'
expect_rc 2 "sweep without SPEC" "$bin" sweep
expect_rc 2 "sweep -j 0" "$bin" sweep "$spec" -j 0
expect_rc 2 "--resume to stdout" "$bin" sweep "$spec" --resume
finish sweep

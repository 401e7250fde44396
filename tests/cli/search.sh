#!/usr/bin/env bash
# `cxlsim search` end to end (issue 32, item 3): the report, --json and --csv of a small search are
# byte-identical for any -j (apart from the timing line and wall_seconds), --set reaches the experiment,
# a search with no valid layout exits 3 naming the constraint and counting every exclusion, and bad options
# exit 2 naming the option; with the offloads varied the pruned search prints what --exhaustive prints.
# Small: GPT-2 125M on 8 A100 (cxl-offload-small), layouts of tp and pp (offloads and micro-batch).
# usage: search.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"
has() { grep -qF -- "$1" "$tmp/out" "$tmp/err" || bad "$2: no '$1' in: $(head -c 400 "$tmp/err" "$tmp/out")"; }
small=(cxl-offload-small --vary tp,pp --top 3 --rerun 1)

expect_rc 0 "search -j 1" "$bin" search "${small[@]}" -j 1 --json "$tmp/a.json" --csv "$tmp/a.csv"
grep -v '^timing:' "$tmp/out" >"$tmp/a.txt"
has "layouts      10 enumerated" "counts"
has "best 3 by iteration time" "ranking"
has "rerun of the best 1 that offload to CXL on the csim backend" "rerun"
has "the best as a run: cxlsim train" "reproduction line"
expect_rc 0 "search -j 2" "$bin" search "${small[@]}" -j 2 --json "$tmp/b.json" --csv "$tmp/b.csv"
grep -v '^timing:' "$tmp/out" >"$tmp/b.txt"
cmp -s "$tmp/a.txt" "$tmp/b.txt" && ok || bad "the report depends on -j: $(diff "$tmp/a.txt" "$tmp/b.txt" | head -5)"
cmp -s "$tmp/a.csv" "$tmp/b.csv" && ok || bad "the CSV depends on -j"
strip() { sed -e '/"wall_seconds"/,/}/d' -e '/"command_line"/,/\]/d' "$1"; }
[ "$(strip "$tmp/a.json")" = "$(strip "$tmp/b.json")" ] && ok || bad "the JSON depends on -j"
[ "$(head -1 "$tmp/a.csv" | cut -d, -f1-3)" = "rank,tp,pp" ] && ok || bad "CSV header: $(head -1 "$tmp/a.csv")"
[ "$(wc -l <"$tmp/a.csv")" -ge 4 ] && ok || bad "CSV rows: $(wc -l <"$tmp/a.csv")"
grep -q '"ranking"' "$tmp/a.json" && grep -q '"excluded"' "$tmp/a.json" && ok || bad "JSON members"

# offloads varied: the bound prunes layouts that offload, and the CSV (ranks of the re-run rows included) and
# the report are those of --exhaustive, byte for byte
off=(cxl-offload-small --vary offload,micro_batch --top 2 --rerun 2 -j 2)
expect_rc 0 "search offloads" "$bin" search "${off[@]}" --csv "$tmp/p.csv"
grep -v '^timing:' "$tmp/out" | grep -v '^  engine ' >"$tmp/p.txt"
grep -q "skipped: their lower bound" "$tmp/out" && ! grep -q " 0 skipped" "$tmp/out" && ok || bad "nothing pruned: $(grep engine "$tmp/out")"
expect_rc 0 "search offloads --exhaustive" "$bin" search "${off[@]}" --exhaustive --csv "$tmp/x.csv"
grep -v '^timing:' "$tmp/out" | grep -v '^  engine ' >"$tmp/x.txt"
cmp -s "$tmp/p.csv" "$tmp/x.csv" && ok || bad "pruned and exhaustive CSV differ: $(diff "$tmp/p.csv" "$tmp/x.csv" | head -5)"
cmp -s "$tmp/p.txt" "$tmp/x.txt" && ok || bad "pruned and exhaustive reports differ: $(diff "$tmp/p.txt" "$tmp/x.txt" | head -5)"

# --set reaches the experiment: a larger global batch, another ranking
expect_rc 0 "search --set" "$bin" search "${small[@]}" -j 1 --set training.global_batch=128
has "global batch 128" "--set global batch"

# no valid layout: GPT-3 175B on one node fits nowhere
expect_rc 3 "no valid layout" "$bin" search cxl-offload-small --vary tp,pp --set model=gpt3-175b --set 'cxl={memory: none}' -j 1
has "cxlsim: search: no valid layout of model 'gpt3-175b'" "no-layout message"
has "by 'out of GPU memory'" "no-layout constraint"
has "excluded by" "no-layout counts"

# bad options
expect_rc 2 "--top 0" "$bin" search --top 0
has "--top: '0' is not a number of layouts" "--top message"
expect_rc 2 "--vary unknown" "$bin" search --vary tp,ep
has "--vary: unknown dimension 'ep'" "--vary message"
expect_rc 2 "-j without value" "$bin" search -j
expect_rc 2 "unknown option" "$bin" search --fast
expect_rc 3 "unknown experiment" "$bin" search no-such-experiment
expect_rc 3 "bad --set" "$bin" search --set training.tpp=2
has "--set training.tpp" "--set error named"
finish search

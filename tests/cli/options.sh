#!/usr/bin/env bash
# The command line's option parsing (host/cli/cli.h) end to end: `--opt=value` means `--opt value`,
# `--` ends the options, short forms (`-j2`), help per command (`cxlsim help COMMAND`, `COMMAND --help`,
# `-h`) generated from the option table and listing every option, `cxlsim help` listing every command,
# and usage errors (exit 2) naming the command and the option. usage: options.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"
has() { grep -qF -- "$1" "$tmp/out" "$tmp/err" || bad "$2: no '$1' in: $(head -c 400 "$tmp/err" "$tmp/out")"; }

# help: the list of commands, one command's usage; the same text however it is asked for
expect_rc 0 "help" "$bin" help
for c in probe memory train ops presets check compare sweep backends version help; do
  grep -q "^  $c" "$tmp/out" && ok || bad "help does not list $c"
done
for c in probe memory train ops presets check compare sweep backends version help; do
  expect_rc 0 "help $c" "$bin" help "$c"
  has "usage: cxlsim $c" "help $c"
  has "-h, --help" "help $c lists -h"
  cp "$tmp/out" "$tmp/help1"
  expect_rc 0 "$c --help" "$bin" "$c" --help
  cmp -s "$tmp/out" "$tmp/help1" && ok || bad "$c --help differs from help $c"
  expect_rc 0 "$c -h" "$bin" "$c" -h
  cmp -s "$tmp/out" "$tmp/help1" && ok || bad "$c -h differs from help $c"
done
# every option of probe's README table is in its help
"$bin" help probe >"$tmp/out"
for o in --backend --reference --json --csv --curve-mix --mixes --arrivals --seed --quick --quiet --samples \
         --warmup --window --points --trace-fst --xclbin --card --xrt-timeout --set; do
  grep -q -- "  $o " "$tmp/out" && ok || bad "help probe lacks $o"
done
"$bin" help sweep >"$tmp/out"
grep -q -- "-j, --jobs N" "$tmp/out" && ok || bad "help sweep lacks -j, --jobs"
expect_rc 2 "help of an unknown command" "$bin" help nope
has "help: unknown command 'nope'" "help nope"

# --opt=value is --opt value
"$bin" memory --json "$tmp/a.json" >"$tmp/a.txt" 2>&1
expect_rc 0 "--json=FILE" "$bin" memory --json="$tmp/b.json"
cmp -s "$tmp/out" "$tmp/a.txt" && ok || bad "memory --json=FILE: another summary"
sed 's/b\.json/a.json/; s/--json=/--json/' "$tmp/b.json" | grep -v '"command_line"\|^    "' >"$tmp/b1"
grep -v '"command_line"\|^    "' "$tmp/a.json" >"$tmp/a1"
cmp -s "$tmp/a1" "$tmp/b1" && ok || bad "memory --json=FILE: another JSON"
expect_rc 0 "--set=KEY=VALUE" "$bin" memory --set=training.tp=4 --set training.dp=4
has "tp 4, pp 1, dp 4" "--set=KEY=VALUE layout"
printf 'base: llama2-7b-2x8-h100\ncommand: memory\naxes:\n  training.tp: [1, 2, 4]\n' >"$tmp/sw.yaml"
expect_rc 0 "sweep -jN" "$bin" sweep "$tmp/sw.yaml" -j2 --csv "$tmp/s.csv"
expect_rc 0 "sweep --jobs=N" "$bin" sweep "$tmp/sw.yaml" --jobs=1 --csv="$tmp/t.csv"
cmp -s "$tmp/s.csv" "$tmp/t.csv" && ok || bad "sweep: -j2 and --jobs=1 rows differ"
[ "$(wc -l <"$tmp/s.csv")" = 4 ] && ok || bad "sweep: not 3 rows: $(cat "$tmp/s.csv")"

# --: what follows is an operand, even when it starts with '-'
cp "$src/configs/devices/asic.yaml" "$tmp/-dev.yaml"
(cd "$tmp" && "$bin" check -- -dev.yaml >out 2>err); [ $? = 0 ] && ok || bad "check -- -dev.yaml: $(cat "$tmp/err")"
(cd "$tmp" && "$bin" check -dev.yaml >out 2>err); [ $? = 2 ] && ok || bad "check -dev.yaml is not an option error"
has "check: unknown option '-d'" "an unknown short option"

# usage errors name the command and the option, exit 2, and point at the command's help
expect_rc 2 "unknown option" "$bin" train --frobnicate
has "train: unknown option '--frobnicate'" "unknown option message"
has "(run 'cxlsim help train' for usage)" "unknown option points at the help"
expect_rc 2 "unknown option after --opt=value" "$bin" ops --out="$tmp/x.yaml" --nope
has "ops: unknown option '--nope'" "second option"
expect_rc 2 "missing value" "$bin" compare --json
has "compare: --json needs a value" "missing value message"
expect_rc 2 "missing short value" "$bin" sweep x -j
has "sweep: -j needs a value" "missing -j value"
expect_rc 2 "a flag with a value" "$bin" probe --quick=yes
has "probe: --quick takes no value ('--quick=yes')" "flag value message"
expect_rc 2 "abbreviation" "$bin" memory --js "$tmp/c.json"
has "memory: unknown option '--js'" "abbreviation message"
[ ! -e "$tmp/c.json" ] && ok || bad "an abbreviation wrote its file"
expect_rc 2 "--set on a command without it" "$bin" presets --set a=b
has "presets: --set is an option of" "--set message"
expect_rc 2 "an argument to backends" "$bin" backends extra
has "backends: unexpected argument 'extra'" "backends argument"

finish options

#!/usr/bin/env bash
# Provenance and names (README "Provenance"): `cxlsim version` names the commit, compiler and backends;
# every JSON output carries cxlsim_version, commit, schema_version, command_line and config_hash; the
# resolved configuration (`presets show --resolved`, `train --dump-config`) loads back to the same run
# and the same hash, and an override changes the hash; unknown preset names suggest the closest preset
# (exit 3); an experiment that extends another shows its own name and description.
# usage: provenance.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# version: the version, the commit (git describe, or "unknown" outside a checkout), compiler, backends
expect_rc 0 "version" "$bin" version
grep -q "^cxlsim [0-9]" "$tmp/out" && ok || bad "version line missing"
commit=$(awk '$1 == "commit" { print $2 }' "$tmp/out")
[ -n "$commit" ] && ok || bad "no commit line"
# a commit of this repository (the build may predate the last commit), or unknown outside a checkout
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  c=${commit%-dirty}; c=${c##*-g}
  git -C "$src" cat-file -e "$c^{commit}" 2>/dev/null && ok || bad "commit '$commit' is not a commit of $src"
else
  [ "$commit" = unknown ] && ok || bad "commit '$commit' outside a git checkout"
fi
grep -q "compiler" "$tmp/out" && grep -q "backends .*csim" "$tmp/out" && ok || bad "compiler or backends missing"

# every JSON output carries the provenance members
check_json() { # file description argv...
  local f=$1 what=$2; shift 2
  python3 - "$f" "$commit" "$@" <<'PY' && ok || bad "$what: provenance members wrong"
import json, re, sys
d = json.load(open(sys.argv[1])); commit = sys.argv[2]; argv = sys.argv[3:]
keys = list(d)
assert keys[:5] == ["cxlsim_version", "commit", "schema_version", "command_line", "config_hash"], keys[:5]
assert d["commit"] == commit, d["commit"]
assert d["schema_version"] == 1
assert d["command_line"][1:] == argv, d["command_line"]
assert re.fullmatch(r"fnv1a64:[0-9a-f]{16}", d["config_hash"]), d["config_hash"]
PY
}
expect_rc 0 "train --json" "$bin" train --json "$tmp/t.json"
check_json "$tmp/t.json" train train --json "$tmp/t.json"
expect_rc 0 "memory --json" "$bin" memory llama2-70b-cxl-opt-cpu --json "$tmp/m.json"
check_json "$tmp/m.json" memory memory llama2-70b-cxl-opt-cpu --json "$tmp/m.json"
expect_rc 0 "probe --json" "$bin" probe --quick --points 2 --samples 20 --json "$tmp/p.json"
check_json "$tmp/p.json" probe probe --quick --points 2 --samples 20 --json "$tmp/p.json"
expect_rc 0 "compare --json" "$bin" compare --random 20 --backends csim,csim --json "$tmp/c.json"
check_json "$tmp/c.json" compare compare --random 20 --backends csim,csim --json "$tmp/c.json"

# the resolved configuration runs as the preset does and hashes the same; an override changes the hash
for x in llama2-7b-2x8-h100 llama2-70b-cxl-pool-2x2; do
  "$bin" presets show --resolved experiments "$x" >"$tmp/$x.yaml" 2>"$tmp/err" || bad "presets show --resolved $x"
  "$bin" train --dump-config "$x" | cmp -s - "$tmp/$x.yaml" && ok || bad "train --dump-config $x differs from presets show --resolved"
  "$bin" train --dump-config "$tmp/$x.yaml" | cmp -s - "$tmp/$x.yaml" && ok || bad "$x: the resolved file does not resolve to itself"
  "$bin" memory "$x" --json "$tmp/a.json" >/dev/null 2>&1 && "$bin" memory "$tmp/$x.yaml" --json "$tmp/b.json" >/dev/null 2>&1
  python3 "$src/tests/cli/json_equal.py" "$tmp/a.json" "$tmp/b.json" command_line && ok ||
    bad "$x: the resolved configuration gives other figures or another hash"
done
# config_hash is FNV-1a 64 of exactly what --dump-config prints
"$bin" train --dump-config >"$tmp/dump.yaml"
python3 - "$tmp/dump.yaml" "$tmp/t.json" <<'PY' && ok || bad "config_hash is not FNV-1a 64 of the --dump-config text"
import json, sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) % (1 << 64)
assert json.load(open(sys.argv[2]))["config_hash"] == "fnv1a64:%016x" % h
PY
cat >"$tmp/over.yaml" <<EOF
extends: llama2-7b-2x8-h100
training: { global_batch: 512 }
EOF
"$bin" memory "$tmp/over.yaml" --json "$tmp/o.json" >/dev/null 2>&1
[ "$(field "$tmp/o.json" config_hash)" != "$(field "$tmp/a.json" config_hash)" ] && ok || bad "an override keeps the hash"
grep -q "global_batch: 512" <("$bin" train --dump-config "$tmp/over.yaml") && ok || bad "--dump-config lacks the override"
# every preset of every kind resolves; a resolved device checks as the preset does
for kind in devices models gpus clusters experiments; do
  for n in $("$bin" presets "$kind" | awk '{ print $1 }'); do
    "$bin" presets show --resolved "$kind" "$n" >"$tmp/r.yaml" 2>"$tmp/err" && ok || bad "presets show --resolved $kind $n: $(cat "$tmp/err")"
    if [ "$kind" = devices ]; then
      diff <("$bin" check "$n" | tail -n +2) <("$bin" check "$tmp/r.yaml" | tail -n +2) >/dev/null && ok ||
        bad "resolved device $n checks differently"
    fi
  done
done
expect_rc 2 "presets show --bogus" "$bin" presets show --bogus asic

# names: a mistyped preset suggests the closest, exit 3
for cmd in "probe asci" "check asci" "train llama2-7b-2x8-h10" "memory llama2-7b-2x8-h10" "presets show asci"; do
  # shellcheck disable=SC2086
  expect_rc 3 "$cmd" "$bin" $cmd
  grep -q "did you mean '" "$tmp/err" && grep -q "presets: " "$tmp/err" && ok || bad "$cmd: no suggestion: $(cat "$tmp/err")"
done
grep -q "did you mean 'asic'" <("$bin" probe asci 2>&1) && ok || bad "probe asci does not suggest asic"
# an experiment that extends another: its own name and description, not the parent's
cat >"$tmp/mine.yaml" <<EOF
extends: llama2-7b-2x8-h100
training: { global_batch: 512 }
EOF
expect_rc 0 "memory of a child experiment" "$bin" memory "$tmp/mine.yaml"
head -1 "$tmp/out" | grep -q "^mine: extends llama2-7b-2x8-h100$" && ok || bad "child summary: $(head -1 "$tmp/out")"
cat >"$tmp/named.yaml" <<EOF
extends: llama2-7b-2x8-h100
name: named
description: my own
EOF
"$bin" memory "$tmp/named.yaml" | head -1 | grep -q "^named: my own$" && ok || bad "child with its own name"
# labels say what they count
"$bin" train llama2-70b-cxl-pool-2x2 2>/dev/null | grep -q "domain 0 (x[0-9]* cop" && ok || bad "domain label without 'copies'"

finish provenance

#!/usr/bin/env bash
# scripts/profile_ops.py: compiles, answers --help, and without PyTorch says so and exits 2. It is never run
# on a GPU here (no GPU in CI); this is its only check.
# usage: profile_script.sh CXLSIM SOURCE_DIR
set -u
src=$2
script=$src/scripts/profile_ops.py
if ! command -v python3 >/dev/null; then
  echo "python3 not found: profile_ops.py not checked"
  exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
# byte-code goes to the temporary folder, not next to the script
if ! PYTHONPYCACHEPREFIX=$tmp python3 -m py_compile "$script"; then
  echo "FAIL: py_compile $script"; fails=$((fails + 1))
fi
if ! python3 "$script" --help >"$tmp/help" 2>&1 || ! grep -q -- "--iters" "$tmp/help"; then
  echo "FAIL: --help"; cat "$tmp/help"; fails=$((fails + 1))
fi
if ! python3 -c "import torch" 2>/dev/null; then
  printf 'ops:\n  - { name: fc1.fwd, dtype: bf16, m: 2, n: 3, k: 4 }\n' >"$tmp/list.yaml"
  python3 "$script" "$tmp/list.yaml" -o "$tmp/times.yaml" >"$tmp/out" 2>&1; rc=$?
  if [ "$rc" != 2 ] || ! grep -q "PyTorch is missing\|PyYAML is missing" "$tmp/out" || [ -e "$tmp/times.yaml" ]; then
    echo "FAIL: without torch: exit $rc (want 2)"; cat "$tmp/out"; fails=$((fails + 1))
  fi
fi
[ "$fails" = 0 ] && echo "profile_ops.py: ok"
exit $((fails > 0))

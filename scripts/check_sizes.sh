#!/usr/bin/env bash
# check_sizes.sh - the size rule of host/ (host/README.md): no file over 800 lines, no function over 120 lines
# (from its signature to its closing brace; functions are written with `{` and `}` alone on their lines).
# usage: scripts/check_sizes.sh [SOURCE_DIR]     exit 0 when the rule holds, 1 with one line per breach
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
max_file=800
max_func=120
bad=0
n=0
for f in "$root"/host/*/*.[ch]; do
  rel=${f#"$root"/}
  n=$((n + 1))
  lines=$(wc -l < "$f")
  if [ "$lines" -gt "$max_file" ]; then
    echo "check_sizes: $rel: $lines lines (at most $max_file: split it by concept)"
    bad=$((bad + 1))
  fi
  while read -r len name line; do
    echo "check_sizes: $rel:$line: $name is $len lines (at most $max_func: split it into named steps)"
    bad=$((bad + 1))
  done < <(awk -v max="$max_func" '
    /^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ { sig = FNR; name = $0; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name) }
    /^\{$/ && sig { start = sig; fname = name }
    /^\}/ && start { if (FNR - start + 1 > max) print FNR - start + 1, fname, start; start = 0; sig = 0 }
  ' "$f")
done
if [ "$n" -eq 0 ]; then
  echo "check_sizes: no sources found under $root/host" >&2
  exit 1
fi
if [ "$bad" -gt 0 ]; then
  echo "check_sizes: $bad breach(es) in $n files"
  exit 1
fi
echo "check_sizes: $n files, none over $max_file lines, no function over $max_func lines"

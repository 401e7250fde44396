#!/usr/bin/env bash
# run.sh - build and run the configuration fuzzer (clang with libFuzzer, ASan, UBSan).
#   tests/fuzz/run.sh [SECONDS]     default 60; corpus: the shipped presets
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${TMPDIR:-/tmp}/cxlsim-fuzz
mkdir -p "$out/corpus"
cp "$root"/configs/devices/*.yaml "$out/corpus/"
cmake -S "$root" -B "$out/build" -DCXLSIM_TESTS=OFF >/dev/null
cmake --build "$out/build" --target cxlhost >/dev/null   # generates presets_data.inc
clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -D_POSIX_C_SOURCE=200809L \
  -I"$root/host" -I"$out/build/generated" "$root/tests/fuzz/fuzz_devcfg.c" \
  "$root"/host/cfg.c "$root"/host/devcfg.c "$root"/host/err.c "$root"/host/presets.c \
  -lyaml -lm -o "$out/fuzz_devcfg"
"$out/fuzz_devcfg" -max_total_time="${1:-60}" -max_len=4096 "$out/corpus"

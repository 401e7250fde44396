#!/usr/bin/env bash
# run.sh - build and run the input fuzzers (clang with libFuzzer, ASan, UBSan), one per kind of input.
#   tests/fuzz/run.sh [SECONDS] [TARGET...]    default 60 s each, every target
# Targets: devcfg (device descriptions, fuzz_devcfg.c), and from fuzz_input.c: experiment, model,
# cluster, optimes (measured operation times), trace (descriptor traces), override (`--set` lines). Each
# starts from a corpus of the shipped files of its kind (override: tests/fuzz/seeds/override/). Exit 0 when no target found anything, 1 when one did (the crashing
# input is left in the output folder, $CXLSIM_FUZZ_DIR or $TMPDIR/cxlsim-fuzz), 77 without clang
# (CTest counts that as skipped: test fuzz_short).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: clang not found (Debian packages clang and libclang-rt-14-dev): skipped"
  exit 77
fi
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(devcfg experiment model cluster optimes trace override)
out=${CXLSIM_FUZZ_DIR:-${TMPDIR:-/tmp}/cxlsim-fuzz}
mkdir -p "$out/gen" "$out/obj"

# the embedded presets, as the CMake build generates them
for pair in devices:device models:model gpus:gpu clusters:cluster experiments:experiment; do
  folder=${pair%%:*}
  cmake -DIN_DIR="$root/configs/$folder" -DOUT="$out/gen/presets_$folder.inc" -DKIND="${pair#*:}" \
    -DREL="configs/$folder" -P "$root/cmake/embed.cmake" >/dev/null
done

# the host library and the C model, instrumented for coverage, compiled again only where a source, a
# header or a preset is newer than the object (so that CTest's short runs reuse them); the targets link it
flags=(-std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -Wno-unknown-pragmas -I"$root/host" -I"$out/gen")
newest_dep=$(ls -t "$root"/host/*/*.h "$root"/hw/hls/*.h "$out"/gen/*.inc | head -1)
objs=()
for src in "$root"/host/*/*.c "$root"/hw/hls/*.c; do
  case $src in */host/cli/* | */backend_verilator.c | */backend_xrt.c) continue ;; esac
  obj=$out/obj/$(basename "$(dirname "$src")")_$(basename "$src" .c).o
  if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] || [ "$newest_dep" -nt "$obj" ]; then
    clang "${flags[@]}" -fsanitize=fuzzer-no-link,address,undefined -c "$src" -o "$obj"
  fi
  objs+=("$obj")
done

status=0
for t in "${targets[@]}"; do
  case $t in
    devcfg) src=fuzz_devcfg.c; def=; seeds=("$root"/configs/devices/*.yaml) ;;
    experiment) src=fuzz_input.c; def=1; seeds=("$root"/configs/experiments/*.yaml) ;;
    model) src=fuzz_input.c; def=2; seeds=("$root"/configs/models/*.yaml) ;;
    cluster) src=fuzz_input.c; def=3; seeds=("$root"/configs/clusters/*.yaml) ;;
    optimes) src=fuzz_input.c; def=4; seeds=("$root"/configs/optimes/*.yaml) ;;
    trace) src=fuzz_input.c; def=5; seeds=("$root"/configs/traces/*.csv) ;;
    override) src=fuzz_input.c; def=6; seeds=("$root"/tests/fuzz/seeds/override/*.txt) ;;
    *) echo "fuzz: unknown target '$t'; valid: devcfg experiment model cluster optimes trace override" >&2; exit 2 ;;
  esac
  mkdir -p "$out/corpus-$t" "$out/found-$t"
  cp "${seeds[@]}" "$out/corpus-$t/"
  clang "${flags[@]}" ${def:+-DFUZZ_TARGET=$def} -fsanitize=fuzzer,address,undefined "$root/tests/fuzz/$src" \
    "${objs[@]}" -lyaml -lz -lpthread -lm -o "$out/fuzz_$t"
  echo "fuzz: $t for $secs s"
  if ! (cd "$out/found-$t" && "$out/fuzz_$t" -max_total_time="$secs" -max_len=8192 -timeout=10 \
        -rss_limit_mb=2048 "$out/corpus-$t" >"$out/log-$t.txt" 2>&1); then
    echo "fuzz: $t FOUND A FAILURE (input and log in $out/found-$t, $out/log-$t.txt):"
    tail -20 "$out/log-$t.txt"
    status=1
  else
    grep -E "^Done|stat::number_of_executed_units" "$out/log-$t.txt" | tail -1 || true
  fi
done
exit $status

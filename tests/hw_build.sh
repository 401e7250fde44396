#!/usr/bin/env bash
# hw_build.sh - build and run the cmocka suites of the cycle model (tests/test_{link,dram,requester,model}.c)
# against hw/hls/*.c, with the project's warning set and ASan/UBSan. A stand-in until CMake runs them;
# the flags are the hw/hls rules: -Wall -Wextra -Werror -Wno-unknown-pragmas -Wno-unused-label.
#
# usage: tests/hw_build.sh [SUITE...]      (default: all four; SUITE = link | dram | requester | model)
# env:   CC (default gcc), BUILD_DIR (default build/hw-tests)
# Exit status: 0 when every suite passed, else 1.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cc=${CC:-gcc}
out=${BUILD_DIR:-$root/build/hw-tests}
mkdir -p "$out"

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(link dram requester model)

flags=(-std=c11 -Wall -Wextra -Werror -Wno-unknown-pragmas -Wno-unused-label
       -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

fail=0
for s in "${suites[@]}"; do
    src="$root/tests/test_$s.c"
    exe="$out/test_$s"
    if [ ! -f "$src" ]; then
        echo "hw_build.sh: no suite $src" >&2
        fail=1
        continue
    fi
    echo "== build test_$s"
    if ! "$cc" "${flags[@]}" -I"$root/hw/hls" -I"$root/tests" "$src" "$root"/hw/hls/*.c -lcmocka -o "$exe"; then
        echo "hw_build.sh: test_$s did not build" >&2
        fail=1
        continue
    fi
    echo "== run test_$s"
    if ! "$exe"; then
        fail=1
    fi
done
exit $fail

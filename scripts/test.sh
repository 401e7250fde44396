#!/usr/bin/env bash
# test.sh - set up (packages, build) and run the whole test suite with ctest.
#   CXLSIM_SANITIZE=1 scripts/test.sh   runs it under ASan/UBSan in build-asan/
#   CXLSIM_RTL_REUSE=build              ... reusing build/'s verilated libraries (CMakeLists.txt)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${CXLSIM_SANITIZE:-0}" = 1 ]; then
  "$root/scripts/setup.sh" --deps-only
  # CXLSIM_RTL_REUSE=DIR: take the verilated libraries (built without sanitizers either way) from the
  # already built folder DIR instead of compiling them again (.ci/run)
  cmake -S "$root" -B "$root/build-asan" -DCXLSIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
    -DCXLSIM_RTL_REUSE="${CXLSIM_RTL_REUSE:-}" >/dev/null
  cmake --build "$root/build-asan" -j"$(nproc)"
  cd "$root/build-asan"
  # the fuzzers (label fuzz) build with their own AddressSanitizer and run in the first pass
  exclude=(-LE fuzz)
else
  "$root/scripts/setup.sh" "$root/build"
  cd "$root/build"
  exclude=()
fi
ctest --output-on-failure -j"$(nproc)" "${exclude[@]}"

#!/usr/bin/env bash
# test.sh - set up (packages, build) and run the test suite with ctest, by tier.
#   scripts/test.sh              the default tier: every test but those labelled slow (at most 5 minutes on
#                                2 cores after the build)
#   scripts/test.sh --all        both tiers (also CXLSIM_TEST_ALL=1): what CI runs (.ci/run)
#   scripts/test.sh --slow       the slow tier alone (ctest label slow: the whole-model RTL lint, the
#                                fuzzers, the fully detailed hybrid run, the Yosys synthesis checks;
#                                tests/CMakeLists.txt "test tiers")
#   CXLSIM_SANITIZE=1 scripts/test.sh   the default tier under ASan/UBSan in build-asan/ (the slow tier's
#                                tests run no code of ours or skip themselves under the sanitizers)
#   CXLSIM_RTL_REUSE=build              ... reusing build/'s verilated libraries (cmake/verilator.cmake)
# Further arguments go to ctest (e.g. -R compare).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tier=default
[ "${CXLSIM_TEST_ALL:-0}" = 1 ] && tier=all
case ${1:-} in
  --all) tier=all; shift ;;
  --slow) tier=slow; shift ;;
  --default) tier=default; shift ;;
esac
begin=$SECONDS
if [ "${CXLSIM_SANITIZE:-0}" = 1 ]; then
  "$root/scripts/setup.sh" --deps-only
  # CXLSIM_RTL_REUSE=DIR: take the verilated libraries (built without sanitizers either way) from the
  # already built folder DIR instead of compiling them again (.ci/run)
  cmake -S "$root" -B "$root/build-asan" -DCXLSIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
    -DCXLSIM_RTL_REUSE="${CXLSIM_RTL_REUSE:-}" >/dev/null
  cmake --build "$root/build-asan" -j"$(nproc)"
  cd "$root/build-asan"
  # the fuzzers (label fuzz) build with their own AddressSanitizer and run in the first pass
  fuzz=fuzz
else
  "$root/scripts/setup.sh" "$root/build"
  cd "$root/build"
  fuzz=
fi
case $tier in
  default) select=(-LE "^(slow${fuzz:+|$fuzz})$") ;;
  slow) select=(-L '^slow$' ${fuzz:+-LE "^$fuzz$"}) ;;
  all) select=(${fuzz:+-LE "^$fuzz$"}) ;;
esac
echo "test.sh: packages, configure and build: $((SECONDS - begin)) s"
echo "test.sh: tier $tier: ctest ${select[*]} $*"
start=$SECONDS
ctest --output-on-failure -j"$(nproc)" "${select[@]}" "$@"
echo "test.sh: tier $tier passed in $((SECONDS - start)) s"

#!/usr/bin/env bash
# quickstart.sh - the first result first. Installs the packages the C model needs (only those missing),
# builds the cxlsim command with the C model alone (csim and analytical backends: about a minute on 2
# cores), simulates one training iteration of the built-in default experiment (`cxlsim train`: LLaMA-2 7B
# on 2 nodes of 8 H100) and probes the ASIC CXL expander (`cxlsim probe`). Then it installs the optional
# packages and builds the rest in the same folder: the verilator backend (the verilated RTL kernel, several
# minutes), the xrt backend where XRT is installed, and the tests. It ends with the backends built and what
# to try next. Arguments go to `cxlsim train` (e.g. an experiment file).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
start=$SECONDS
jobs=$(nproc)

"$root/scripts/setup.sh" --core-deps-only
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCXLSIM_VERILATOR=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target cxlsim
"$build/cxlsim" train "$@"
echo
"$build/cxlsim" probe
echo
echo "quickstart: first results after $((SECONDS - start)) s; now building the other backends and the tests"
echo

"$root/scripts/setup.sh" --deps-only
cmake -S "$root" -B "$build" -DCXLSIM_VERILATOR=ON >/dev/null
cmake --build "$build" -j"$jobs"
echo
echo "quickstart: done after $((SECONDS - start)) s. Backends built ($build/cxlsim backends):"
"$build/cxlsim" backends
cat <<EOF

Next:
  build/cxlsim presets experiments              the shipped experiments (and devices, models, clusters)
  build/cxlsim train cxl-offload-small          a training iteration with its optimizer in CXL memory
  build/cxlsim probe asic-switch                a pooled expander behind a CXL switch
  build/cxlsim probe asic --backend verilator --quick   the same device on the RTL model (when built)
  build/cxlsim compare asic --random 1000       csim against the verilated RTL, event for event
  scripts/test.sh                               the default test tier (scripts/test.sh --all: both tiers)
  README.md "Commands" lists every command and option.
EOF

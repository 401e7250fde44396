#!/usr/bin/env bash
# quickstart.sh - set up (packages, build), simulate one training iteration of the built-in default
# experiment (`cxlsim train`: LLaMA-2 7B on 2 nodes of 8 H100), then probe the ASIC CXL expander
# (`cxlsim probe`). Arguments go to `cxlsim train` (e.g. an experiment file).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" "$root/build"
"$root/build/cxlsim" train "$@"
echo
exec "$root/build/cxlsim" probe

#!/usr/bin/env bash
# setup.sh - install the Debian packages cxlsim uses (only those missing), then configure and build.
#
#   scripts/setup.sh [BUILD_DIR]        default build folder: build/
#   scripts/setup.sh --deps-only        install the packages only (scripts/test.sh's sanitized pass
#                                       configures and builds its own folder)
#   scripts/setup.sh --core-deps-only   only those the C model, the cxlsim command and its tests need
#                                       (scripts/quickstart.sh's first step; the optional ones come after)
#
# Packages (see README "Dependencies"): cmake gcc g++ make pkg-config libyaml-dev libcmocka-dev
# zlib1g-dev python3, and optional: verilator yosys libxrt-dev gtkwave help2man libopenmpi-dev openmpi-bin
# python3-matplotlib. Runs apt-get as root, or through sudo when not root. The build has every backend
# whose dependency is installed (CXLSIM_VERILATOR=ON, also where an interrupted scripts/quickstart.sh left
# its first, C-model-only configuration in BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps_only=0
core_only=0
if [ "${1:-}" = --deps-only ]; then deps_only=1; shift; fi
if [ "${1:-}" = --core-deps-only ]; then deps_only=1; core_only=1; shift; fi
build=${1:-"$root/build"}

packages=(cmake gcc g++ make pkg-config libyaml-dev libcmocka-dev zlib1g-dev python3)
[ "$core_only" = 1 ] || packages+=(verilator yosys libxrt-dev gtkwave help2man libopenmpi-dev openmpi-bin python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # verilator, yosys, libxrt-dev, gtkwave, Open MPI and matplotlib are optional: a failure to get them
  # leaves their backends, MPI sweeps, plots and checks out, not the build
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    cmake gcc g++ make pkg-config libyaml-dev libcmocka-dev zlib1g-dev python3
  [ "$core_only" = 1 ] || "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    verilator yosys libxrt-dev gtkwave help2man || echo "setup: verilator/yosys/libxrt-dev/gtkwave/help2man unavailable; the RTL backends and checks (and the generated man page) will not be built"
  [ "$core_only" = 1 ] || "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    libopenmpi-dev openmpi-bin python3-matplotlib || echo "setup: Open MPI/matplotlib unavailable; sweeps run on one machine, scripts/plot.py will not draw"
fi

[ "$deps_only" = 1 ] && exit 0
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCXLSIM_VERILATOR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"

#!/usr/bin/env bash
# xrt-env.sh - print the environment XRT needs, for `eval`. XRT aborts the process unless XILINX_XRT names a
# folder whose lib/ holds its shim library (docs/references.md "Toolchain facts"); AMD's XRT installs one in
# /opt/xilinx/xrt, but Debian's libxrt1 puts the libraries in the multiarch folder. For Debian this makes a
# folder of links to them and points XILINX_XRT at it.
#
#   eval "$(scripts/xrt-env.sh)"            for a card (libxrt_core)
#   eval "$(scripts/xrt-env.sh --noop)"     XRT's no-op shim: a fake card whose runs compute nothing
#                                           (tests of the call sequence; XCL_EMULATION_MODE=noop)
#   scripts/xrt-env.sh [--noop] --dir DIR   make the folder in DIR (default ~/.cache/cxlsim/xrt)
#
# Exit: 0 ok, 1 usage, 3 XRT's libraries not found (apt-get install libxrt1).
set -euo pipefail
noop=0
dir="${XDG_CACHE_HOME:-$HOME/.cache}/cxlsim/xrt"
while (($#)); do
  case "$1" in
    --noop) noop=1 ;;
    --dir) [ $# -ge 2 ] || { echo "xrt-env.sh: --dir needs a folder" >&2; exit 1; }; dir=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "xrt-env.sh: unknown argument '$1' (--noop, --dir DIR)" >&2; exit 1 ;;
  esac
  shift
done
if [ -f /opt/xilinx/xrt/setup.sh ] && [ "$noop" = 0 ]; then
  # AMD's XRT: its own set-up script is the reference
  echo ". /opt/xilinx/xrt/setup.sh >/dev/null"
  exit 0
fi
libs=(libxrt_core.so.2)
[ "$noop" = 1 ] && libs+=(libxrt_noop.so.2)
mkdir -p "$dir/lib"
for l in "${libs[@]}"; do
  # awk reads to the end: exiting early would kill ldconfig with SIGPIPE, which pipefail turns into a failure
  src=$(/sbin/ldconfig -p 2>/dev/null | awk -v l="$l" '$1 == l && !f { print $NF; f = 1 }')
  if [ -z "$src" ]; then
    for d in /usr/lib/*-linux-gnu /usr/lib /usr/local/lib; do
      [ -e "$d/$l" ] && { src="$d/$l"; break; }
    done
  fi
  [ -n "$src" ] || { echo "xrt-env.sh: $l not found (apt-get install libxrt1)" >&2; exit 3; }
  ln -sfn "$src" "$dir/lib/$l"
done
printf 'export XILINX_XRT=%q\n' "$dir"
if [ "$noop" = 1 ]; then echo "export XCL_EMULATION_MODE=noop"; else echo "unset XCL_EMULATION_MODE"; fi

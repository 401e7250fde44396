#!/usr/bin/env bash
# build.sh - build the cxl_kernel FPGA binary (.xclbin) for an AMD Alveo card with Vitis: the HLS kernel
# (hw/hls, compiled by v++ -c) or the RTL kernel (hw/rtl, packaged by Vivado with package_xo.tcl), then
# linked by v++ -l with the card's connectivity file. hw/fpga/README.md describes the files.
#
# usage: hw/fpga/build.sh [--platform u250|u280|u55c|PLATFORM] [--kernel hls|rtl] [--target hw|hw_emu]
#                         [--out DIR] [--jobs N] [--xo-only] [--dry-run]
#   --platform  a card (u250, u280, u55c: the platform below) or a full platform name or .xpfm path of one
#               of those cards (its connectivity-<card>.cfg is chosen from the name). Default u250.
#   --kernel    hls (hw/hls/*.c, default) or rtl (hw/rtl/*.v, ap_ctrl_hs)
#   --target    hw (default) or hw_emu (hardware emulation: run with XCL_EMULATION_MODE=hw_emu)
#   --out       output folder (default build/fpga under the repository root); intermediate files and
#               logs go to DIR/_x.<kernel>.<target>.<card>/
#   --jobs      parallel Vivado jobs for v++ -l (default: the number of CPUs)
#   --xo-only   stop after the kernel object (.xo): no v++ -l (the RTL kernel then needs only Vivado)
#   --dry-run   print the commands and run nothing (works without Vitis)
# Outputs: DIR/cxl_kernel.<target>.<card>.xo + DIR/cxl_kernel.<target>.<card>.xclbin (hls), or
#          DIR/cxl_kernel_rtl.xo + DIR/cxl_kernel_rtl.<target>.<card>.xclbin (rtl).
# Environment: VPP, VIVADO: the v++ / vivado to run (default: found on PATH); PLATFORM_REPO_PATHS: where
#   v++ looks up a platform given by name (Vitis defaults to /opt/xilinx/platforms).
# Exit status: 0 built (or printed), 1 usage, 2 build failed, 3 v++ or vivado not found (nothing done).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fpga=$root/hw/fpga

# Current Vitis platforms of the three cards (names as AMD gives them: the platform list in Xilinx/
# Vitis-Tutorials Hardware_Acceleration/Design_Tutorials/05-bottom_up_rtl_kernel/krnl_aes/setup_emu.sh;
# the U55C one also in UG1393 2022.1, "Platforms"). Newer platform releases of the same card work too:
# pass the full name, e.g. --platform xilinx_u280_gen3x16_xdma_1_202211_1.
platform_of() {
  case $1 in
    u250) echo xilinx_u250_gen3x16_xdma_4_1_202210_1 ;;
    u280) echo xilinx_u280_gen3x16_xdma_1_202211_1 ;;
    u55c) echo xilinx_u55c_gen3x16_xdma_3_202210_1 ;;
    *) return 1 ;;
  esac
}
cards="u250, u280, u55c"

usage() {
  echo "usage: hw/fpga/build.sh [--platform u250|u280|u55c|PLATFORM] [--kernel hls|rtl] [--target hw|hw_emu]" \
       "[--out DIR] [--jobs N] [--xo-only] [--dry-run]   (--help for details)" >&2
  exit 1
}
die_usage() { echo "build.sh: $*" >&2; usage; }

platform=u250 kernel=hls target=hw out=$root/build/fpga jobs='' xo_only=0 dry=0
while [ $# -gt 0 ]; do
  opt=$1 val=
  case $opt in
    --*=*) val=${opt#*=}; opt=${opt%%=*}; shift ;;
    --platform|--kernel|--target|--out|--jobs)
      [ $# -ge 2 ] || die_usage "$opt needs a value"
      val=$2; shift 2 ;;
    *) shift ;;
  esac
  case $opt in
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --platform) platform=$val ;;
    --kernel) kernel=$val ;;
    --target) target=$val ;;
    --out) out=$val ;;
    --jobs) jobs=$val ;;
    --xo-only) xo_only=1 ;;
    --dry-run) dry=1 ;;
    *) die_usage "unknown option '$opt'" ;;
  esac
done

case $kernel in hls|rtl) ;; *) die_usage "unknown kernel '$kernel'; valid: hls, rtl" ;; esac
case $target in hw|hw_emu) ;; *) die_usage "unknown target '$target'; valid: hw, hw_emu" ;; esac
[ -n "$out" ] || die_usage "--out needs a folder"
case $out in /*) ;; *) out=$PWD/$out ;; esac
if [ -z "$jobs" ]; then
  jobs=$(nproc 2>/dev/null || echo 1)
fi
case $jobs in ''|*[!0-9]*|0) die_usage "--jobs '$jobs' is not a positive integer" ;; esac
# A card name, or a platform name / .xpfm path that names one of the cards (its connectivity file).
if full=$(platform_of "$platform"); then
  card=$platform
else
  full=$platform
  case $(basename "$platform") in
    *u250*) card=u250 ;;
    *u280*) card=u280 ;;
    *u55c*) card=u55c ;;
    *) echo "build.sh: unknown platform '$platform'; valid: $cards, or a full platform name or .xpfm" \
            "path of one of those cards (e.g. $(platform_of u250))" >&2
       exit 1 ;;
  esac
fi
conn=$fpga/connectivity-$card.cfg
[ -f "$conn" ] || { echo "build.sh: $conn is missing" >&2; exit 1; }
shopt -s nullglob
hls_sources=("$root"/hw/hls/*.c)

# Tools, before anything is written: a missing one is a skip, not a failure, of a build that takes hours.
vpp=${VPP:-v++} vivado=${VIVADO:-vivado}
if [ "$dry" = 0 ]; then
  if { [ "$kernel" = hls ] || [ "$xo_only" = 0 ]; } && ! command -v "$vpp" >/dev/null 2>&1; then
    echo "skipped: v++ not found; source <Vitis>/settings64.sh (e.g. /tools/Xilinx/Vitis/2022.1/settings64.sh)" >&2
    exit 3
  fi
  if [ "$kernel" = rtl ] && ! command -v "$vivado" >/dev/null 2>&1; then
    echo "skipped: vivado not found; source <Vivado>/settings64.sh (the Vitis settings64.sh sets it up too)" >&2
    exit 3
  fi
fi

# run DIR CMD...: print "cd DIR && CMD" (a line that can be pasted into a shell), then run CMD in DIR
# unless --dry-run. Both v++ and Vivado write logs and caches into their working folder.
run() {
  local dir=$1; shift
  printf 'cd %q &&' "$dir"; printf ' %q' "$@"; printf '\n'
  [ "$dry" = 1 ] && return 0
  mkdir -p "$dir" || { echo "build failed: cannot create $dir" >&2; exit 2; }
  (cd "$dir" && "$@")
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "build failed: $(basename "$1") exited with status $rc (logs in $dir)" >&2
    exit 2
  fi
}
# expect FILE: the step that just ran must have produced FILE
expect() {
  [ "$dry" = 1 ] || [ -f "$1" ] || { echo "build failed: $1 was not produced" >&2; exit 2; }
}

tag=$target.$card
if [ "$kernel" = hls ]; then
  [ ${#hls_sources[@]} -gt 0 ] || { echo "build.sh: no hw/hls/*.c in $root" >&2; exit 1; }
  xo=$out/cxl_kernel.$tag.xo
  xclbin=$out/cxl_kernel.$tag.xclbin
  work=$out/_x.hls.$tag
  # The kernel is cxl_kernel() (hw/hls/cxl_kernel.c) with the whole model: every hw/hls/*.c.
  run "$work" "$vpp" -c -t "$target" --platform "$full" -k cxl_kernel -I "$root/hw/hls" \
      --config "$fpga/hls.cfg" --temp_dir "$work" --log_dir "$work/logs" --report_dir "$work/reports" \
      -o "$xo" "${hls_sources[@]}"
else
  xo=$out/cxl_kernel_rtl.xo
  xclbin=$out/cxl_kernel_rtl.$tag.xclbin
  work=$out/_x.rtl.$tag
  # Packaging does not depend on the platform: Vivado makes one .xo for every card and target.
  run "$out/_x.rtl.package" "$vivado" -mode batch -nojournal -log "$out/_x.rtl.package/vivado.log" \
      -source "$fpga/package_xo.tcl" -tclargs "$xo" "$root/hw/rtl"
fi
expect "$xo"
if [ "$xo_only" = 1 ]; then
  [ "$dry" = 1 ] || echo "built: $xo"
  exit 0
fi
run "$work" "$vpp" -l -t "$target" --platform "$full" --config "$conn" --temp_dir "$work" \
    --log_dir "$work/logs" --report_dir "$work/reports" --jobs "$jobs" -o "$xclbin" "$xo"
expect "$xclbin"
[ "$dry" = 1 ] || echo "built: $xclbin"

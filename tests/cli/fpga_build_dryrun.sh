#!/usr/bin/env bash
# The FPGA hardware build (hw/fpga, issue 6) checked without Vitis, Vivado or a card:
#  - build.sh --dry-run prints the v++ / vivado command lines for every card and both kernel kinds
#    (platform name, connectivity file, -k cxl_kernel, every hw/hls/*.c) and writes nothing;
#  - usage errors exit 1 and name the valid values; a missing v++ / vivado exits 3 before anything is
#    written; with stub tools on PATH the real path runs, a failing tool exits 2;
#  - the connectivity files map every buffer argument; package_xo.tcl parses and, run by tclsh against
#    stub Vivado commands, describes exactly the register map of hw/hls/cxl_kernel_regs.h.
# usage: fpga_build_dryrun.sh CXLSIM SOURCE_DIR (CXLSIM is not used)
set -u
src=$2
build=$src/hw/fpga/build.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
q() { printf '%q' "$1"; }   # how build.sh prints a path

# expect CODE -- command...: run it, keep stdout/stderr in $tmp/out and $tmp/err, check the exit status
expect() {
  local code=$1; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" != "$code" ]; then
    fail "$* -> exit $rc (want $code):"; cat "$tmp/err" "$tmp/out" | head -5
    return 1
  fi
  passes=$((passes + 1))
}
# has TEXT / lacks TEXT: fixed string in the last command's output (stdout + stderr)
has() {
  if grep -qF -- "$1" "$tmp/out" "$tmp/err"; then passes=$((passes + 1)); else fail "no '$1' in:"; cat "$tmp/out" "$tmp/err"; fi
}
lacks() {
  if grep -qF -- "$1" "$tmp/out" "$tmp/err"; then fail "unexpected '$1' in:"; cat "$tmp/out" "$tmp/err"; else passes=$((passes + 1)); fi
}

# the platforms build.sh must map the cards to (hw/fpga/build.sh cites where the names come from)
declare -A full=([u250]=xilinx_u250_gen3x16_xdma_4_1_202210_1 [u280]=xilinx_u280_gen3x16_xdma_1_202211_1
                 [u55c]=xilinx_u55c_gen3x16_xdma_3_202210_1)
o=$tmp/o
hls=$(q "$src/hw/hls") fpga=$(q "$src/hw/fpga")

# ---- dry runs ------------------------------------------------------------------------------------
for card in u250 u280 u55c; do
  p=${full[$card]}
  if expect 0 -- bash "$build" --dry-run --platform "$card" --out "$o"; then
    has "v++ -c -t hw --platform $p -k cxl_kernel -I $hls --config $fpga/hls.cfg"
    has "-o $(q "$o/cxl_kernel.hw.$card.xo")"
    for c in "$src"/hw/hls/*.c; do has " $(q "$c")"; done
    has "v++ -l -t hw --platform $p --config $fpga/connectivity-$card.cfg"
    has "-o $(q "$o/cxl_kernel.hw.$card.xclbin") $(q "$o/cxl_kernel.hw.$card.xo")"
    lacks "vivado"
  fi
  if expect 0 -- bash "$build" --dry-run --platform "$card" --kernel rtl --out "$o"; then
    has "vivado -mode batch"
    has "-source $fpga/package_xo.tcl -tclargs $(q "$o/cxl_kernel_rtl.xo") $(q "$src/hw/rtl")"
    has "v++ -l -t hw --platform $p --config $fpga/connectivity-$card.cfg"
    has "-o $(q "$o/cxl_kernel_rtl.hw.$card.xclbin") $(q "$o/cxl_kernel_rtl.xo")"
    lacks "v++ -c"
  fi
done
[ ! -e "$o" ] || fail "--dry-run created $o"
# a full platform name or an .xpfm path picks its card's connectivity file; target, jobs, --xo-only
expect 0 -- bash "$build" --dry-run --platform "${full[u280]}" --target hw_emu --jobs 7 --out "$o" &&
  { has "v++ -l -t hw_emu --platform ${full[u280]} --config $fpga/connectivity-u280.cfg"; has "--jobs 7";
    has "cxl_kernel.hw_emu.u280.xclbin"; }
xpfm=/opt/xilinx/platforms/${full[u55c]}/${full[u55c]}.xpfm
expect 0 -- bash "$build" --dry-run --platform="$xpfm" --out "$o" &&
  has "--platform $xpfm --config $fpga/connectivity-u55c.cfg"
expect 0 -- bash "$build" --dry-run --kernel rtl --xo-only --out "$o" && { has "vivado"; lacks "v++"; }
expect 0 -- bash "$build" --help && has "usage: hw/fpga/build.sh"

# ---- usage errors: exit 1, say what is valid -----------------------------------------------------
expect 1 -- bash "$build" --dry-run --platform u9000 && has "unknown platform 'u9000'; valid: u250, u280, u55c"
expect 1 -- bash "$build" --dry-run --platform xilinx_u200_gen3x16_xdma_2_202110_1 && has "valid: u250, u280, u55c"
expect 1 -- bash "$build" --dry-run --kernel vhdl && has "unknown kernel 'vhdl'; valid: hls, rtl"
expect 1 -- bash "$build" --dry-run --target sw_emu && has "unknown target 'sw_emu'; valid: hw, hw_emu"
expect 1 -- bash "$build" --dry-run --jobs 0 && has "not a positive integer"
expect 1 -- bash "$build" --dry-run --frobnicate && has "unknown option '--frobnicate'"
expect 1 -- bash "$build" --dry-run --platform && has "--platform needs a value"

# ---- without --dry-run: tools missing (exit 3, nothing written), stub tools, failing tools ---------
# a PATH with only what build.sh needs besides its tools, so a Vitis install on this machine is not seen
mkdir -p "$tmp/bin" "$tmp/stub"
for t in bash dirname basename nproc mkdir sed; do
  p=$(command -v "$t") && ln -s "$p" "$tmp/bin/$t"
done
nopath=(env -u VPP -u VIVADO PATH="$tmp/bin")
expect 3 -- "${nopath[@]}" bash "$build" --out "$o" && has "skipped: v++ not found; source <Vitis>/settings64.sh"
expect 3 -- "${nopath[@]}" bash "$build" --kernel rtl --xo-only --out "$o" && has "skipped: vivado not found"
[ ! -e "$o" ] || fail "a skipped build created $o"
# stubs: v++ touches its -o file, vivado the first -tclargs value; both log their arguments
cat >"$tmp/stub/v++" <<'EOF'
#!/usr/bin/env bash
echo "v++ $*" >>"$STUB_LOG"
while [ $# -gt 0 ]; do [ "$1" = -o ] && : >"$2"; shift; done
EOF
cat >"$tmp/stub/vivado" <<'EOF'
#!/usr/bin/env bash
echo "vivado $*" >>"$STUB_LOG"
while [ $# -gt 0 ]; do [ "$1" = -tclargs ] && : >"$2"; shift; done
EOF
printf '#!/usr/bin/env bash\nexit 1\n' >"$tmp/stub/fails"
printf '#!/usr/bin/env bash\nexit 0\n' >"$tmp/stub/writes_nothing"
chmod +x "$tmp/stub/"*
stubpath=(env -u VPP -u VIVADO PATH="$tmp/stub:$tmp/bin" STUB_LOG="$tmp/stub.log")
expect 0 -- "${stubpath[@]}" bash "$build" --platform u280 --out "$o" && has "built: $o/cxl_kernel.hw.u280.xclbin"
if [ ! -f "$o/cxl_kernel.hw.u280.xclbin" ] || [ "$(grep -c '^v++ -[cl] ' "$tmp/stub.log")" != 2 ]; then
  fail "stub hls build: no xclbin or not two v++ runs"
fi
expect 0 -- "${stubpath[@]}" bash "$build" --platform u55c --kernel rtl --out "$o" &&
  has "built: $o/cxl_kernel_rtl.hw.u55c.xclbin"
expect 3 -- env PATH="$tmp/bin" STUB_LOG="$tmp/stub.log" VPP="$tmp/stub/v++" bash "$build" --kernel rtl --out "$o" &&
  has "skipped: vivado not found"
expect 2 -- "${stubpath[@]}" VPP="$tmp/stub/fails" bash "$build" --out "$o" && has "build failed: fails exited with status 1"
expect 2 -- "${stubpath[@]}" VPP="$tmp/stub/writes_nothing" bash "$build" --out "$o" && has "was not produced"

# ---- configuration files -------------------------------------------------------------------------
for card in u250 u280 u55c; do
  cfg=$src/hw/fpga/connectivity-$card.cfg
  grep -qx 'nk=cxl_kernel:1:cxl_kernel_1' "$cfg" || fail "$cfg: no nk=cxl_kernel:1:cxl_kernel_1"
  for a in params state descs comps result stats; do
    grep -qE "^sp=cxl_kernel_1\.$a:(DDR|HBM)\[[0-9]+\]$" "$cfg" || fail "$cfg: no sp line for $a"
  done
done
grep -qx '\[hls\]' "$src/hw/fpga/hls.cfg" || fail "hw/fpga/hls.cfg: no [hls] section"

# ---- package_xo.tcl: parses; against stub Vivado commands it describes cxl_kernel_regs.h's map ------
if ! command -v tclsh >/dev/null 2>&1; then
  echo "note: tclsh not installed: package_xo.tcl not checked (apt-get install tcl)"
else
  tcl=$src/hw/fpga/package_xo.tcl
  if echo "puts [info complete [read [open {$tcl}]]]" | tclsh | grep -qx 1; then
    passes=$((passes + 1))
  else
    fail "$tcl: incomplete Tcl (unbalanced braces or quotes)"
  fi
  # Each stub logs its call; registers are objects "reg:NAME" whose offset, size and bus are recorded.
  cat >"$tmp/mock.tcl" <<'EOF'
namespace eval ipx {}
foreach cmd {create_project add_files get_files set_property current_fileset update_compile_order close_project
             ipx::package_project ipx::unload_core ipx::edit_ip_in_project ipx::current_core ipx::get_bus_interfaces
             ipx::associate_bus_interfaces ipx::add_bus_parameter ipx::add_memory_map ipx::add_address_block
             ipx::add_field ipx::create_xgui_files ipx::update_checksums ipx::check_integrity ipx::save_core} {
    proc $cmd {args} "return obj:$cmd"
}
proc ipx::get_file_groups {args} { return {} }
proc ipx::get_files {args} { return {} }
proc ipx::get_bus_parameters {args} { return {} }
set ::mock_regs {}
proc ipx::add_register {name block} { lappend ::mock_regs $name; set ::mock_reg($name) {? ? -}; return reg:$name }
proc ipx::add_register_parameter {name reg} { return par:[string range $reg 4 end] }
proc set_property {prop value obj} {
    if {[string match reg:* $obj]} {
        set n [string range $obj 4 end]
        switch -- $prop { address_offset { lset ::mock_reg($n) 0 [format 0x%02X $value] } size { lset ::mock_reg($n) 1 $value } }
    } elseif {[string match par:* $obj]} { lset ::mock_reg([string range $obj 4 end]) 2 $value }
}
proc package_xo {args} {
    set ::package_xo $args
    close [open [lindex $args [expr {[lsearch $args -xo_path] + 1}]] w]
}
set ::argv [list $::env(MOCK_XO) $::env(MOCK_RTL)]; set ::argc 2
source $::env(MOCK_TCL)
foreach n $::mock_regs { puts [join [list $n {*}$::mock_reg($n)]] }
puts "package_xo $::package_xo"
EOF
  mkdir -p "$tmp/xo"
  if MOCK_XO="$tmp/xo/k.xo" MOCK_RTL="$src/hw/rtl" MOCK_TCL="$tcl" tclsh "$tmp/mock.tcl" >"$tmp/regs" 2>"$tmp/err"; then
    passes=$((passes + 1))
    # the same table from the header: NAME OFFSET SIZE BUS, control block first, arguments in enum order
    hdr=$src/hw/hls/cxl_kernel_regs.h
    {
      for p in CTRL:CTRL GIE:GIER IER:IP_IER ISR:IP_ISR; do
        off=$(sed -nE "s/^#define CXLK_${p%%:*} (0x[0-9A-Fa-f]+)u.*/\1/p" "$hdr")
        printf '%s 0x%02X 32 -\n' "${p#*:}" "$off"
      done
      # shellcheck disable=SC2013  # words are wanted: one CXLK_ARG_ identifier each
      for a in $(sed -nE '/^enum cxlk_arg/,/};/p' "$hdr" | grep -oE 'CXLK_ARG_[A-Z_]+' | grep -v NARGS); do
        n=${a#CXLK_ARG_}
        line=$(grep -E "^#define CXLK_$n " "$hdr")
        off=$(sed -nE 's/^#define [A-Z_]+ (0x[0-9A-Fa-f]+)u.*/\1/p' <<<"$line")
        size=32; case $line in *64-bit*|*uint64_t*) size=64 ;; esac
        bus=-; case $line in *' * ('*) bus=m_axi_gmem ;; esac   # "/* cxl_params * (64-bit) */"
        printf '%s 0x%02X %s %s\n' "${n,,}" "$off" "$size" "$bus"
      done
    } >"$tmp/want"
    grep -v '^package_xo' "$tmp/regs" >"$tmp/got"
    if diff "$tmp/want" "$tmp/got" >"$tmp/diff"; then
      passes=$((passes + 1))
    else
      fail "package_xo.tcl registers differ from hw/hls/cxl_kernel_regs.h (< header, > script):"; cat "$tmp/diff"
    fi
    if ! grep -q "^package_xo -force -xo_path $tmp/xo/k.xo -kernel_name cxl_kernel .*-ctrl_protocol ap_ctrl_hs" "$tmp/regs"; then
      fail "package_xo call: $(grep '^package_xo' "$tmp/regs")"
    fi
  else
    fail "package_xo.tcl against stub Vivado commands:"; cat "$tmp/err"
  fi
fi

echo "fpga_build_dryrun: $passes passed, $fails failed"
[ "$fails" -eq 0 ]

#!/usr/bin/env bash
# rtl_synth.sh - Yosys synth_xilinx resource estimate of a hw/rtl top level for AMD UltraScale+
# (-family xcup, the Alveo U250 / U280 / U55C family), and its share of those cards (docs/rtl-synthesis.md).
#
# usage: scripts/rtl_synth.sh [TOP] [OUTDIR]
#   TOP     module to synthesise (default cxl_kernel, the Vitis-shaped top level); its parameters keep
#           their defaults (the default preset: sizes such as CXL_MAX_FIFO are parameters, everything
#           else is a runtime input sampled at reset, so it does not change the hardware)
#   OUTDIR  where TOP.log (full Yosys log), TOP.stat.txt (Yosys `stat`), TOP.summary.txt (the table
#           printed at the end) and TOP.depth.txt / TOP.depth.tsv (logic depth per module, with the
#           worst path) go (default build/rtl_synth); a flattened or one-process run also keeps the
#           mapped netlist TOP.json there
# Environment:
#   YOSYS=path             the yosys binary (default: yosys on PATH)
#   RTL_SYNTH_FLATTEN=0    synthesise hierarchically (no -flatten): faster on big tops, but no constant
#                          propagation across module boundaries (the figures are then a bit higher)
#   RTL_SYNTH_OPTS="..."   extra synth_xilinx options, e.g. "-uram" (large memories to URAM288) or
#                          "-abc9"; "-run :map_luts" stops before LUT mapping (BRAM/DSP only, no LUT/FF)
#   RTL_SYNTH_FILES="..."  extra Verilog files (paths from the repository root) read with hw/rtl/*.v
#   RTL_SYNTH_READ=top     read only TOP's file, other modules from hw/rtl/<module>.v on demand (below)
#   RTL_SYNTH_PARAMS="NSRC=16 K=5"  override TOP's parameters (to size one module as the top level
#                          instantiates it, for a per-module estimate)
#   RTL_SYNTH_BUILD=card-1x1  synthesise a named build of cxl_kernel (hw/rtl/builds.txt: card-1x1,
#                          card-pool, full): its NH, ND, NCH, NB, NQ, SW go before RTL_SYNTH_PARAMS's entries;
#                          TOP must be cxl_kernel (targets rtl_synth_card_1x1, rtl_synth_card_pool)
#   RTL_SYNTH_DRYRUN=1     print the Yosys commands (files read, hierarchy with the parameters, synthesis)
#                          and stop before running Yosys
#   RTL_SYNTH_BLACKBOX="mpipe link"  keep these modules as black boxes (TOP's own logic only, below)
#   RTL_SYNTH_NOSHARE=1    leave out synth_xilinx's `share` pass (hours on some modules; figures can
#                          only be higher)
#   RTL_SYNTH_SPLIT=1      with RTL_SYNTH_FLATTEN=0: one Yosys process per module (same netlist as one
#                          hierarchical run, the memory of the largest module instead of the whole design)
#   RTL_SYNTH_JOBS=N       with RTL_SYNTH_SPLIT=1: N modules at a time (default 1; each can take GBs)
#   RTL_SYNTH_ABC=fast     LUT mapping with `abc -fast` (ABC's mapping without its logic optimisation
#                          scripts: hours less on the largest modules, more LUTs; docs/rtl-synthesis.md
#                          has the difference measured on modules mapped both ways)
#   RTL_SYNTH_CACHE=0      with RTL_SYNTH_SPLIT=1: do not reuse module netlists from OUTDIR/TOP.cache/ (by
#                          default a module whose elaborated text, synthesis commands and Yosys version
#                          match a netlist made before is taken from there, not synthesised again;
#                          the cache only grows: about 0.9 GB for the whole top, rm -rf it to clear)
#   RTL_SYNTH_DEPTH=0      do not measure the logic depth. By default each mapped module's longest
#                          FF/port-to-FF/port path is counted in LUT levels by scripts/lut_depth.py
#                          (python3; docs/rtl-synthesis.md, "Logic depth"), next to Yosys's own
#                          `ltp` cell count: the table's "LUT-levels" row, per module in
#                          OUTDIR/TOP.depth.txt (paths) and TOP.depth.tsv
# Exit status: 0 done, 1 synthesis failed or TOP not found, 2 usage, 77 yosys not installed.
#
# Always used: -noiopad -noclkbuf. A Vitis RTL kernel is synthesised out of context: its ports are
# wired to the platform shell, not to package pins, and ap_clk comes from the shell's clock network,
# so I/O buffers and a BUFG would only be counted in error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
top=${1:-cxl_kernel}
out=${2:-$root/build/rtl_synth}
case ${1:-} in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
[ $# -le 2 ] || { echo "usage: $0 [TOP] [OUTDIR]" >&2; exit 2; }
yosys=${YOSYS:-yosys}
if ! command -v "$yosys" >/dev/null 2>&1; then
  echo "SKIPPED: yosys not installed (apt-get install yosys); no synthesis estimate" >&2
  exit 77
fi

rtl=$root/hw/rtl
shopt -s nullglob
files=("$rtl"/*.v)
# RTL_SYNTH_READ=top: read only the file that defines TOP and let `hierarchy -libdir hw/rtl` load the
# modules it instantiates from hw/rtl/<module>.v, so a half-written file elsewhere in hw/rtl does not stop
# the run (the default reads every file: one that does not parse fails the run)
libdir=
if [ "${RTL_SYNTH_READ:-all}" = top ]; then
  mapfile -t files < <(grep -lE "^[[:space:]]*module[[:space:]]+$top([[:space:]]|#|\(|$)" "$rtl"/*.v || true)
  libdir="hierarchy -libdir $rtl -top $top; "
fi
# shellcheck disable=SC2206  # RTL_SYNTH_FILES is a space-separated list on purpose
extra=(${RTL_SYNTH_FILES:-})
for f in "${extra[@]}"; do
  case $f in /*) files+=("$f") ;; *) files+=("$root/$f") ;; esac
done
[ ${#files[@]} -gt 0 ] || { echo "error: no Verilog file in $rtl" >&2; exit 1; }
if ! grep -qE "^[[:space:]]*module[[:space:]]+$top([[:space:]]|#|\(|$)" "${files[@]}"; then
  echo "error: module $top is not defined in hw/rtl/*.v${RTL_SYNTH_FILES:+ or $RTL_SYNTH_FILES}" \
       "(not written yet? pass another TOP, e.g. $0 switch)" >&2
  exit 1
fi

# RTL_SYNTH_BLACKBOX="mod ...": the files defining these modules are read with -lib (ports only), so
# their instances stay as cells: the estimate is then TOP's own logic ("glue"), and the instance
# counts are listed under "blackbox instances" (for a sum of per-module estimates, docs/rtl-synthesis.md)
libfiles=()
for m in ${RTL_SYNTH_BLACKBOX:-}; do
  f=$(grep -lE "^[[:space:]]*module[[:space:]]+$m([[:space:]]|#|\(|$)" "$rtl"/*.v | head -n 1 || true)
  [ -n "$f" ] || { echo "error: RTL_SYNTH_BLACKBOX: module $m not found in hw/rtl" >&2; exit 2; }
  case " ${libfiles[*]:-} " in *" $f "*) ;; *) libfiles+=("$f") ;; esac
done
if [ ${#libfiles[@]} -gt 0 ]; then
  keep=()
  for f in "${files[@]}"; do
    case " ${libfiles[*]} " in *" $f "*) ;; *) keep+=("$f") ;; esac
  done
  files=("${keep[@]}")
fi

# RTL_SYNTH_BUILD=NAME: cxl_kernel's parameters of that build (hw/rtl/builds.txt), then RTL_SYNTH_PARAMS's
if [ -n "${RTL_SYNTH_BUILD:-}" ]; then
  [ "$top" = cxl_kernel ] || { echo "error: RTL_SYNTH_BUILD names a build of cxl_kernel, not of $top" >&2; exit 2; }
  bparams=$(B=$RTL_SYNTH_BUILD awk '!/^#/ && $1 == ENVIRON["B"] { print "NH=" $2, "ND=" $3, "NCH=" $4, "NB=" $5, "NQ=" $6, "SW=" $7 }' \
            "$rtl/builds.txt")
  if [ -z "$bparams" ]; then
    echo "error: RTL_SYNTH_BUILD: unknown build '$RTL_SYNTH_BUILD'; valid:" \
         "$(awk '!/^#/ && NF { printf "%s%s", s, $1; s = ", " }' "$rtl/builds.txt") (hw/rtl/builds.txt)" >&2
    exit 2
  fi
  RTL_SYNTH_PARAMS="$bparams${RTL_SYNTH_PARAMS:+ $RTL_SYNTH_PARAMS}"
fi

# RTL_SYNTH_PARAMS="NAME=VALUE ...": TOP's parameters as an instance in the top level sets them
chparam=
for kv in ${RTL_SYNTH_PARAMS:-}; do
  case $kv in *=*) chparam="$chparam -chparam ${kv%%=*} ${kv#*=}" ;;
              *) echo "error: RTL_SYNTH_PARAMS entry '$kv' is not NAME=VALUE" >&2; exit 2 ;; esac
done
if [ -n "$chparam" ]; then
  libdir="hierarchy ${libdir:+-libdir $rtl }-top $top$chparam; "
fi

flatten=-flatten
[ "${RTL_SYNTH_FLATTEN:-1}" = 0 ] && flatten=
case ${RTL_SYNTH_SPLIT:-0} in 0|1) ;; *) echo "error: RTL_SYNTH_SPLIT must be 0 or 1, not '$RTL_SYNTH_SPLIT'" >&2; exit 2 ;; esac
if [ "${RTL_SYNTH_SPLIT:-0}" = 1 ] && [ -n "$flatten" ]; then
  echo "error: RTL_SYNTH_SPLIT=1 synthesises each module on its own: it needs RTL_SYNTH_FLATTEN=0" >&2
  exit 2
fi
jobs=${RTL_SYNTH_JOBS:-1}
case $jobs in ''|*[!0-9]*|0) echo "error: RTL_SYNTH_JOBS must be a positive integer, not '$jobs'" >&2; exit 2 ;; esac
case ${RTL_SYNTH_NOSHARE:-0} in 0|1) ;; *) echo "error: RTL_SYNTH_NOSHARE must be 0 or 1, not '$RTL_SYNTH_NOSHARE'" >&2; exit 2 ;; esac
case ${RTL_SYNTH_ABC:-full} in full|fast) ;; *) echo "error: RTL_SYNTH_ABC must be full or fast, not '$RTL_SYNTH_ABC'" >&2; exit 2 ;; esac
case ${RTL_SYNTH_CACHE:-1} in 0|1) ;; *) echo "error: RTL_SYNTH_CACHE must be 0 or 1, not '$RTL_SYNTH_CACHE'" >&2; exit 2 ;; esac
case ${RTL_SYNTH_DEPTH:-1} in 0|1) ;; *) echo "error: RTL_SYNTH_DEPTH must be 0 or 1, not '$RTL_SYNTH_DEPTH'" >&2; exit 2 ;; esac
# Logic depth (RTL_SYNTH_DEPTH, default 1): after the mapping, Yosys writes the netlist as JSON and its
# own `ltp` (longest topological path, counted in cells: every LUT, MUXF and CARRY4 one, ending at
# every other cell) for reference; scripts/lut_depth.py counts the longest path in LUT levels
depth=${RTL_SYNTH_DEPTH:-1}
python=${PYTHON:-python3}
if [ "$depth" = 1 ] && ! command -v "$python" >/dev/null 2>&1; then
  echo "warning: $python not found: no logic depth (LUT levels) measured" >&2
  depth=0
fi
# depth_cmds PREFIX: the Yosys commands that write PREFIX.ltp.txt and PREFIX.json (the cell library's
# unused black boxes purged first: they would add 9 MB of port lists to every file)
depth_cmds() {
  [ "$depth" = 1 ] || return 0
  echo "tee -q -o $1.ltp.txt ltp -noff w:* t:LUT* t:INV t:MUXF* t:CARRY*; hierarchy -purge_lib; write_json $1.json; "
}
# depth_of PREFIX [MODULE]: lut_depth.py on PREFIX.json: PREFIX.depth.txt (report) and .depth.tsv
depth_of() {
  [ "$depth" = 1 ] || return 0
  "$python" "$root/scripts/lut_depth.py" "$1.json" --ltp "$1.ltp.txt" --tsv "$1.depth.tsv" \
    ${2:+--module "$2"} > "$1.depth.txt" 2> "$1.depth.err" ||
    { echo "error: scripts/lut_depth.py failed on $1.json:" >&2; cat "$1.depth.err" >&2; return 1; }
  rm -f "$1.depth.err"
}
case ${RTL_SYNTH_DRYRUN:-0} in 0|1) ;; *) echo "error: RTL_SYNTH_DRYRUN must be 0 or 1, not '$RTL_SYNTH_DRYRUN'" >&2; exit 2 ;; esac
# synth_for MODULE: the synthesis commands with MODULE as the top
# RTL_SYNTH_NOSHARE=1: synth_xilinx's steps with the `share` pass (SAT-based sharing of arithmetic
# between mutually exclusive uses) left out of the `coarse` step; it ran for over 20 minutes on switch
# and on cxl_model's own logic. Without it the estimate can only be higher (nothing is shared).
synth_for() {
  local base="synth_xilinx -family xcup -top $1 $flatten -noiopad -noclkbuf ${RTL_SYNTH_OPTS:-}" s from=
  s=$base
  if [ "${RTL_SYNTH_NOSHARE:-0}" = 1 ]; then
    s="$base -run :coarse; techmap -map +/cmp2lut.v -map +/cmp2lcu.v -D LUT_WIDTH=6; alumacc; opt;"
    s="$s memory -nomap; opt_clean; $base"
    from=map_memory
  fi
  # RTL_SYNTH_ABC=fast: synth_xilinx's map_luts step (Yosys 0.23, `help synth_xilinx`, for xcup without
  # -nowidelut/-dff/-retime/-abc9/-nosrl) with `abc -fast`: ABC's LUT mapping without the fraig / scorr /
  # dc2 / dch / mfs2 optimisation of its default script
  if [ "${RTL_SYNTH_ABC:-full}" = fast ]; then
    s="$s -run $from:map_luts; opt_expr -mux_undef -noclkinv; abc -fast -luts 2:2,3,6:5,10,20; clean;"
    s="$s techmap -map +/xilinx/ff_map.v; xilinx_srl -fixed -minlen 3;"
    s="$s techmap -map +/xilinx/lut_map.v -map +/xilinx/cells_map.v -D LUT_WIDTH=6; xilinx_dffopt;"
    s="$s opt_lut_ins -tech xilinx; $base -run finalize:"
  elif [ -n "$from" ]; then
    s="$s -run $from:"
  fi
  echo "$s" | tr -s ' '
}
synth=$(synth_for "$top")
mkdir -p "$out"
log=$out/$top.log; statf=$out/$top.stat.txt; summary=$out/$top.summary.txt
# -defer: every file is parsed (a syntax error anywhere still fails) but only the modules under TOP are
# elaborated, which saves about a minute per run (link.v alone takes ~30 s to elaborate on its own)
lib=
[ ${#libfiles[@]} -gt 0 ] && lib="read_verilog -lib -sv -I$rtl ${libfiles[*]}; "
read="${lib}read_verilog -defer -sv -I$rtl ${files[*]}; "

if [ "${RTL_SYNTH_DRYRUN:-0}" = 1 ]; then
  echo "rtl_synth: dry run: $top${RTL_SYNTH_PARAMS:+ ($RTL_SYNTH_PARAMS)}"
  echo "rtl_synth: read: $read"
  echo "rtl_synth: elaborate: ${libdir:-hierarchy -top $top; }"
  echo "rtl_synth: synthesise: $synth"
  exit 0
fi
echo "rtl_synth: $($yosys -V)"
t0=$(date +%s)
if [ "${RTL_SYNTH_SPLIT:-0}" = 0 ]; then
  echo "rtl_synth: yosys -p '$libdir$synth' on ${#files[@]} file(s) (log: $log)"
  rm -f "$out/$top.depth.txt" "$out/$top.depth.tsv"
  if ! "$yosys" -q -l "$log" -p "$read$libdir$synth; tee -q -o $statf stat; $(depth_cmds "$out/$top")" >/dev/null 2>"$out/$top.err"; then
    echo "error: yosys failed on $top (full log: $log):" >&2
    if [ -s "$out/$top.err" ]; then cat "$out/$top.err" >&2; else tail -n 20 "$log" >&2; fi
    exit 1
  fi
else
  # RTL_SYNTH_SPLIT=1: the hierarchical synthesis in one Yosys process per module. (1) elaborate TOP
  # (parameters resolved: one module per parameter set) and save it; (2) for each module, in its own
  # process: load the saved design, keep the module and make every other module a black box, synthesise
  # it, save its netlist; (3) load the netlists and `stat` the hierarchy (each module's cells times its
  # instance count). Hierarchical synth_xilinx does not optimise across module boundaries, so this is the
  # same netlist as one hierarchical run; what it saves is memory (one module at a time: the single
  # process held the whole design and ended at 21 GB) and, with RTL_SYNTH_JOBS=N, wall time.
  sdir=$out/$top.split
  rm -rf "$sdir"; mkdir -p "$sdir"
  : > "$log"
  echo "rtl_synth: split: elaborating $top (log: $log, per-module logs: $sdir/)"
  if ! "$yosys" -q -l "$sdir/elab.log" -p "$read${libdir:-hierarchy -top $top; }write_rtlil $sdir/elab.il; tee -q -o $sdir/elab.stat.txt stat" \
       >/dev/null 2>"$out/$top.err"; then
    echo "error: yosys failed elaborating $top (log: $sdir/elab.log):" >&2
    if [ -s "$out/$top.err" ]; then cat "$out/$top.err" >&2; else tail -n 20 "$sdir/elab.log" >&2; fi
    exit 1
  fi
  # modules of the elaborated design, largest (by cell count before synthesis) first, so the long ones
  # start early when several run at once; blackboxes (RTL_SYNTH_BLACKBOX) have no section in stat
  awk '/^=== .* ===$/ && $2 != "design" { m = $2; next }
       m != "" && /Number of cells:/ { print $4, m; m = "" }' "$sdir/elab.stat.txt" \
    | sort -k1,1nr -k2 | awk '{ print $2 }' > "$sdir/modules.txt"
  nmod=$(wc -l < "$sdir/modules.txt")
  [ "$nmod" -gt 0 ] || { echo "error: no module found in the elaborated $top ($sdir/elab.stat.txt)" >&2; exit 1; }
  echo "rtl_synth: split: $nmod modules, $jobs at a time: $(synth_for MODULE)"
  # RTL_SYNTH_CACHE (default 1): module netlists are kept in OUTDIR/TOP.cache/, named by a hash of the
  # module's elaborated RTLIL (its text in elab.il: its own logic, its submodules' names and parameters),
  # the synthesis commands and the Yosys version; a module whose hash is there is not synthesised again
  # (the other modules are black boxes in its synthesis, so nothing else goes into its netlist). Yosys
  # numbers the names it makes ($eq$file:line$1234) with one counter for the whole elaboration, so a
  # change in one module renumbers the next ones: the numbers are replaced by their order of first
  # appearance in the module before hashing.
  cdir=$out/$top.cache
  mkdir -p "$cdir"
  rm -f "$cdir"/*.tmp   # copies a stopped run left unfinished
  modkey() {  # name commands index: the cache name of module `name` (empty: none)
    M=$1 awk 'BEGIN { a = "module \\" ENVIRON["M"]; b = "module " ENVIRON["M"] }
              $0 == a || $0 == b { on = 1 }
              on {
                line = $0; o = ""
                while (match(line, /[$][0-9]+/)) {
                  tok = substr(line, RSTART, RLENGTH); nx = substr(line, RSTART + RLENGTH, 1)
                  if (nx ~ /[0-9A-Za-z]/) { o = o substr(line, 1, RSTART + RLENGTH - 1) }
                  else { if (!(tok in id)) id[tok] = ++nid; o = o substr(line, 1, RSTART - 1) "$#" id[tok] }
                  line = substr(line, RSTART + RLENGTH)
                }
                print o line
              }
              on && $0 == "end" { exit }' \
        "$sdir/elab.il" > "$sdir/$3.key.txt"
    # a module not found in elab.il gets no cache name (an empty text would give them all one)
    if [ -s "$sdir/$3.key.txt" ]; then
      { cat "$sdir/$3.key.txt"; echo "$2"; "$yosys" -V; } | sha256sum | cut -c1-40
    fi
    rm -f "$sdir/$3.key.txt"
  }
  run_module() {  # index name
    local i=$1 m=$2 s t key
    s=$(synth_for "$m")
    key=$(modkey "$m" "$s" "$i")
    if [ "${RTL_SYNTH_CACHE:-1}" = 1 ] && [ -n "$key" ] && [ -s "$cdir/$key.il" ] && [ -s "$cdir/$key.stat.txt" ]; then
      cp "$cdir/$key.il" "$sdir/$i.il" && cp "$cdir/$key.stat.txt" "$sdir/$i.stat.txt" || return 1
      if [ "$depth" = 1 ]; then
        if [ -s "$cdir/$key.depth.tsv" ] && [ -s "$cdir/$key.depth.txt" ]; then
          cp "$cdir/$key.depth.txt" "$sdir/$i.depth.txt" && cp "$cdir/$key.depth.tsv" "$sdir/$i.depth.tsv" || return 1
        else
          # a netlist cached before the depth was measured: measure it from the netlist (the cell
          # library read again for the port directions; the other modules are black boxes there)
          if ! { "$yosys" -q -l "$sdir/$i.depth.log" -p "read_verilog -lib -specify +/xilinx/cells_sim.v; read_verilog -lib +/xilinx/cells_xtra.v; blackbox =*; read_rtlil $sdir/$i.il; $(depth_cmds "$sdir/$i")" \
                   >/dev/null 2>"$sdir/$i.err" && depth_of "$sdir/$i"; }; then
            echo "error: measuring the depth of cached module $m failed (log: $sdir/$i.depth.log)" >&2
            return 1
          fi
          rm -f "$sdir/$i.json"
          { cp "$sdir/$i.depth.txt" "$cdir/$key.depth.txt" && cp "$sdir/$i.depth.tsv" "$cdir/$key.depth.tsv"; } ||
            echo "warning: could not keep $m's depth in $cdir (measured again next time)" >&2
        fi
      fi
      echo "rtl_synth: split: done $m (from $cdir/$key.il)"
      return
    fi
    t=$(date +%s)
    if "$yosys" -q -l "$sdir/$i.log" -p "read_rtlil $sdir/elab.il; hierarchy -top $m; blackbox A:top %n; $s; tee -q -o $sdir/$i.stat.txt stat; $(depth_cmds "$sdir/$i")delete =A:blackbox; write_rtlil $sdir/$i.il" \
         >/dev/null 2>"$sdir/$i.err" && depth_of "$sdir/$i"; then
      echo "rtl_synth: split: done $m ($(( $(date +%s) - t )) s)"
      rm -f "$sdir/$i.json"
      if [ "$depth" = 1 ] && [ -n "$key" ]; then
        { cp "$sdir/$i.depth.txt" "$cdir/$key.depth.txt.tmp" && cp "$sdir/$i.depth.tsv" "$cdir/$key.depth.tsv.tmp" &&
          mv "$cdir/$key.depth.txt.tmp" "$cdir/$key.depth.txt" && mv "$cdir/$key.depth.tsv.tmp" "$cdir/$key.depth.tsv"; } ||
          echo "warning: could not keep $m's depth in $cdir (measured again next time)" >&2
      fi
      # into the cache under a temporary name first: a stopped run leaves no partial netlist there
      if [ -n "$key" ]; then
        cp "$sdir/$i.stat.txt" "$cdir/$key.stat.txt.tmp" && cp "$sdir/$i.il" "$cdir/$key.il.tmp" &&
          mv "$cdir/$key.stat.txt.tmp" "$cdir/$key.stat.txt" && mv "$cdir/$key.il.tmp" "$cdir/$key.il" ||
          echo "warning: could not keep $m's netlist in $cdir (synthesised again next time)" >&2
      fi
    else
      echo "error: yosys failed on module $m (log: $sdir/$i.log):" >&2
      if [ -s "$sdir/$i.err" ]; then cat "$sdir/$i.err" >&2; else tail -n 20 "$sdir/$i.log" >&2; fi
      return 1
    fi
  }
  i=0; running=0; failed=0
  while read -r m; do
    i=$((i + 1))
    if [ "$running" -ge "$jobs" ]; then
      wait -n || failed=1
      running=$((running - 1))
    fi
    [ "$failed" = 0 ] || break
    run_module "$i" "$m" &
    running=$((running + 1))
  done < "$sdir/modules.txt"
  while [ "$running" -gt 0 ]; do wait -n || failed=1; running=$((running - 1)); done
  [ "$failed" = 0 ] || { echo "error: split synthesis of $top failed (see above)" >&2; exit 1; }
  reads=""
  for f in "$sdir"/[0-9]*.il; do reads="$reads read_rtlil $f;"; done
  if ! "$yosys" -q -l "$log" -p "$reads hierarchy -top $top; tee -q -o $statf stat" >/dev/null 2>"$out/$top.err"; then
    echo "error: yosys failed summing the module netlists of $top (log: $log):" >&2
    cat "$out/$top.err" >&2
    exit 1
  fi
  synth="$synth (one process per module, RTL_SYNTH_SPLIT=1)"
fi
if [ "$depth" = 1 ]; then
  if [ "${RTL_SYNTH_SPLIT:-0}" = 1 ]; then
    cat "$sdir"/[0-9]*.depth.tsv > "$out/$top.depth.tsv"
    cat "$sdir"/[0-9]*.depth.txt > "$out/$top.depth.txt"
  else
    depth_of "$out/$top" || exit 1
  fi
fi
secs=$(( $(date +%s) - t0 ))

# Cell counts of the whole design: after a -flatten run, `stat` has one module section; without it, the
# "design hierarchy" section at the end sums the modules by instance count. Either way, the last section's
# cell-type lines (after "Number of cells") are the totals.
# the depth per module (lut_depth.py --tsv: module, levels, LUTs, MUXFs, CARRYs, LUT RAM reads, cells,
# ltp cells, DSPs without registers, register-to-register levels), worst first: the "LUT levels" row
depthtab=
if [ "$depth" = 1 ] && [ -s "$out/$top.depth.tsv" ]; then
  depthtab=$(sort -t "$(printf '\t')" -k2,2gr -k1,1 "$out/$top.depth.tsv" | tr '\t\n' ' ;')
fi
# (the depth table through the environment: awk -v would read the backslashes of $paramod names)
DEPTHTAB=$depthtab awk -v top="$top" -v secs="$secs" -v synth="$synth" -v params="${RTL_SYNTH_PARAMS:+ (${RTL_SYNTH_PARAMS})}" \
    -v depthf="$out/$top.depth.txt" '
  /^=== / { delete cnt; incells = 0; next }
  /Number of cells:/ { incells = 1; next }
  incells && NF == 2 && $2 ~ /^[0-9]+$/ { cnt[$1] += $2; next }
  incells && NF == 0 { next }
  incells { incells = 0 }
  END {
    for (c in cnt) {
      n = cnt[c]
      if (c ~ /^LUT[1-6]$/ || c == "INV") lut += n   # Vivado makes an INV a LUT1
      else if (c ~ /^FD[RSCP]E(_1)?$/) ff += n
      else if (c ~ /^LD[CP]E$/) latch += n
      else if (c == "RAMB36E2") b36 += n
      else if (c == "RAMB18E2") b18 += n
      else if (c ~ /^URAM288/) uram += n
      else if (c ~ /^DSP48E2$/) dsp += n
      # distributed RAM and shift registers, in the LUTs of SLICEMs they occupy (UG574)
      else if (c ~ /^(RAM32X1S|RAM64X1S|SRL16E|SRLC16E|SRLC32E)$/) lutram += n
      else if (c ~ /^(RAM32X1D|RAM64X1D|RAM128X1S)$/) lutram += 2 * n
      else if (c ~ /^(RAM32M|RAM64M|RAM128X1D|RAM256X1S)$/) lutram += 4 * n
      else if (c ~ /^(RAM32M16|RAM64M8|RAM256X1D|RAM512X1S)$/) lutram += 8 * n
      # carry chains and wide-LUT muxes live in the slices of the LUTs above: not counted again. Yosys
      # 0.23 maps carries to the 7-series CARRY4 on xcup too; Vivado retargets them to CARRY8
      else if (c ~ /^(CARRY4|CARRY8|MUXF7|MUXF8|MUXF9|VCC|GND)$/) misc = misc sprintf(" %s=%d", c, n)
      else other = other sprintf(" %s=%d", c, n)
    }
    bram = b36 + b18 / 2
    luts = lut + lutram
    printf "rtl_synth: %s%s, %s (%d s)\n", top, params, synth, secs
    printf "  %-8s %10s\n", "resource", "count"
    printf "  %-8s %10d   (LUT1..LUT6 + INV: logic)\n", "LUT", lut
    printf "  %-8s %10d   (LUTs used as distributed RAM / SRL)\n", "LUTRAM", lutram
    printf "  %-8s %10d   (FDRE/FDSE/FDCE/FDPE)\n", "FF", ff
    printf "  %-8s %10.1f   (36Kb: %d RAMB36E2 + %d RAMB18E2 / 2)\n", "BRAM", bram, b36, b18
    printf "  %-8s %10d   (URAM288)\n", "URAM", uram
    printf "  %-8s %10d   (DSP48E2)\n", "DSP", dsp
    if (latch) printf "  %-8s %10d   (LDCE/LDPE: latches, a likely RTL bug)\n", "LATCH", latch
    # logic depth: the worst module first (lut_depth.py; yosys ltp counts cells, not levels). The row is
    # "LUT-levels", one word, so that readers of the table matching $1 == "LUT" still find one row
    nd = split(ENVIRON["DEPTHTAB"], drow, ";")
    nm = 0
    for (i = 1; i <= nd; i++)
      if (split(drow[i], f, " ") >= 10) {
        nm++; dlev[nm] = f[2]; dltp[nm] = f[8]; dreg[nm] = f[10]
        # $paramod$HASH\name or $paramod\name\P=V: the name of the module itself
        dm[nm] = f[1]
        if (f[1] ~ /^[$]paramod/ && split(f[1], pn, "\\") >= 2) dm[nm] = pn[2]
      }
    if (nm > 0) {
      regmax = 0
      for (i = 1; i <= nm; i++) if (dreg[i] + 0 > regmax + 0) regmax = dreg[i]
      printf "  %-10s %8s   (longest path, ports included%s; register to register: %s; yosys ltp: %s cells; paths: %s)\n",
             "LUT-levels", dlev[1], (nm > 1 ? ", in " dm[1] " of " nm " modules" : ""), regmax,
             (dltp[1] == "-" ? "n/a" : dltp[1]), depthf
      if (nm > 1) {
        printf "  LUT-levels per module (with ports / register to register / ltp cells):"
        for (i = 1; i <= nm; i++) printf "%s %s %s/%s/%s", (i > 1 ? "," : ""), dm[i], dlev[i], dreg[i], (dltp[i] == "-" ? "n/a" : dltp[i])
        printf "\n"
      }
      delete dlev
    }
    if (misc != "") printf "  other:%s\n", misc
    if (other != "") printf "  not UltraScale+ cells (RTL_SYNTH_BLACKBOX instances, or a partial run):%s\n", other
    # whole-device figures of the cards (AMD data sheets DS962, DS963, DS978: see docs/rtl-synthesis.md);
    # the platform shell takes part of the device, so a kernel gets less than this
    split("U250 U280 U55C", card, " ")
    dl["U250"] = 1728000; df["U250"] = 3456000; db["U250"] = 2688; du["U250"] = 1280; dd["U250"] = 12288
    dl["U280"] = 1304000; df["U280"] = 2607000; db["U280"] = 2016; du["U280"] = 960;  dd["U280"] = 9024
    dl["U55C"] = 1304000; df["U55C"] = 2607000; db["U55C"] = 2016; du["U55C"] = 960;  dd["U55C"] = 9024
    printf "  share of the whole device (LUT = logic + LUTRAM):\n"
    printf "  %-6s %8s %8s %8s %8s %8s\n", "card", "LUT%", "FF%", "BRAM%", "URAM%", "DSP%"
    for (i = 1; i <= 3; i++) {
      k = card[i]
      printf "  %-6s %8.2f %8.2f %8.2f %8.2f %8.2f\n", k, 100 * luts / dl[k], 100 * ff / df[k],
             100 * bram / db[k], 100 * uram / du[k], 100 * dsp / dd[k]
    }
  }' "$statf" | tee "$summary"

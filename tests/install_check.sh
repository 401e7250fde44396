#!/usr/bin/env bash
# install_check.sh BUILD_DIR SOURCE_DIR - `cmake --install` into a temporary prefix, then use that tree alone:
# the files it must hold, an external C program built with `pkg-config --cflags --libs cxlsim` only (and
# once against the static library), the CMake example (find_package(cxlsim)), the Python bindings and the
# sweep example from the installed package, the installed cxlsim command and the NCCL replay harness.
# Exit 77 (skipped) without a C compiler or pkg-config.
set -euo pipefail
build=$1 src=$2
command -v cc >/dev/null && command -v pkg-config >/dev/null || { echo "skip: cc or pkg-config missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"
fail() { echo "install_check: $*" >&2; exit 1; }
pc=$(find "$prefix" -name cxlsim.pc)
[ -n "$pc" ] || fail "no cxlsim.pc installed"
libdir=$(dirname "$(dirname "$pc")")
for f in bin/cxlsim bin/cxlsim-nccl-replay include/cxlsim/cxlsim.h include/cxlsim/cxlsim_nccl.h \
         share/cxlsim/configs/devices/asic.yaml share/cxlsim/configs/experiments/llama2-7b-2x8-h100.yaml \
         share/bash-completion/completions/cxlsim share/cxlsim/python/cxlsim/__init__.py; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
for f in libcxlsim.so libcxlsim.so.2 libcxlsim.a libcxlsim_nccl.so cmake/cxlsim/cxlsimConfig.cmake \
         cmake/cxlsim/cxlsimConfigVersion.cmake cmake/cxlsim/cxlsimTargets.cmake; do
  [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
# the backend modules, where their dependency was found: installed beside the library, exporting their entry
# point alone; the library itself needs neither XRT nor a C++ runtime
for m in xrt verilator; do
  [ -e "$build/lib/cxlsim/backend_$m.so" ] || continue
  [ -e "$libdir/cxlsim/backend_$m.so" ] || fail "$libdir/cxlsim/backend_$m.so not installed"
  exports=$(nm -D --defined-only "$libdir/cxlsim/backend_$m.so" | awk '{print $3}' | tr '\n' ' ')
  [ "$exports" = "cxlsim_backend_module_v1 " ] || fail "backend_$m.so exports more than its entry point: $exports"
done
! readelf -d "$libdir/libcxlsim.so" | grep -q -e xrt -e "libstdc++" || fail "libcxlsim.so needs XRT or libstdc++"
if command -v help2man >/dev/null; then
  [ -e "$prefix/share/man/man1/cxlsim.1" ] || fail "man page not installed (help2man is)"
  grep -q "probe" "$prefix/share/man/man1/cxlsim.1" || fail "man page lacks the commands"
fi
# only the API is exported
if nm -D --defined-only "$libdir/libcxlsim.so" | awk '{print $3}' | grep -v '^cxlsim_'; then
  fail "libcxlsim.so exports symbols beyond the cxlsim_ API (above)"
fi
export PKG_CONFIG_PATH=$libdir/pkgconfig
# an external C program: pkg-config alone, a C compiler, no C++ and no XRT
cc -std=c11 -Wall -Wextra -Werror "$src/examples/c/read_1mib.c" $(pkg-config --cflags --libs cxlsim) -o "$tmp/read_1mib"
! readelf -d "$tmp/read_1mib" | grep -q "libstdc++" || fail "read_1mib needs libstdc++"
LD_LIBRARY_PATH=$libdir "$tmp/read_1mib" | tee "$tmp/c.out"
grep -q "1 MiB read on asic" "$tmp/c.out" || fail "read_1mib printed no result"
# the verilator backend from a C program built the same way: the library loads the installed module, and
# the RTL agrees with csim call for call (tests/lib/lib_verilator.c)
if [ -e "$build/lib/cxlsim/backend_verilator.so" ]; then
  cc -std=c11 -Wall -Wextra -Werror "$src/tests/lib/lib_verilator.c" $(pkg-config --cflags --libs cxlsim) \
     -o "$tmp/lib_verilator"
  ! readelf -d "$tmp/lib_verilator" | grep -q "libstdc++" || fail "lib_verilator needs libstdc++"
  LD_LIBRARY_PATH=$libdir "$tmp/lib_verilator" present asic | tee "$tmp/v.out"
  grep -q "asic: .*verilator == csim" "$tmp/v.out" || fail "lib_verilator printed no result"
fi
# the same against the static library (pkg-config --static adds libyaml, zlib, pthread, m)
cc -std=c11 "$src/examples/c/read_1mib.c" $(pkg-config --cflags cxlsim) "$libdir/libcxlsim.a" \
   $(pkg-config --static --libs-only-other --libs-only-l cxlsim | sed 's/-lcxlsim//') -o "$tmp/read_1mib_static"
! readelf -d "$tmp/read_1mib_static" | grep -q "libcxlsim" || fail "static build still needs libcxlsim.so"
"$tmp/read_1mib_static" | cmp - "$tmp/c.out" || fail "static and shared builds differ"
# a CMake project: find_package(cxlsim)
cmake -S "$src/examples/cmake" -B "$tmp/cmake-example" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cmake.log" ||
  { cat "$tmp/cmake.log"; fail "the CMake example does not configure"; }
cmake --build "$tmp/cmake-example" >>"$tmp/cmake.log" || { cat "$tmp/cmake.log"; fail "the CMake example does not build"; }
"$tmp/cmake-example/nccl_delay" | tee "$tmp/cmake.out"
grep -q "all-reduce 1 GiB, 16 ranks" "$tmp/cmake.out" || fail "nccl_delay printed no result"
# Python: the installed package finds the installed library by itself
if command -v python3 >/dev/null; then
  (unset CXLSIM_LIBRARY; PYTHONPATH=$prefix/share/cxlsim/python python3 -c \
    'import cxlsim; print("python", cxlsim.version(), cxlsim.Cluster("dgx-h100", "h100-sxm").collective("allreduce", bytes=1 << 20, ranks=8)["time_ps"])')
  (unset CXLSIM_LIBRARY; PYTHONPATH=$prefix/share/cxlsim/python python3 "$src/examples/python/sweep_device.py" --values 8)
fi
# the installed command and the replay harness
"$prefix/bin/cxlsim" version >/dev/null
LD_LIBRARY_PATH=$libdir "$prefix/bin/cxlsim-nccl-replay" dgx-h100 h100-sxm "$src/tests/data/nccl_replay.csv" >"$tmp/replay.csv"
[ "$(wc -l <"$tmp/replay.csv")" -eq 10 ] || fail "replay: expected a header and 9 rows"
echo "install_check: ok"

#!/usr/bin/env bash
# The xrt backend's command-line surface without a card: each error a user can meet, its exit code and its
# message, each in a process of its own (XRT keeps per-process state): XRT's environment missing or wrong
# (4), no xclbin or a malformed card (2), an unreadable xclbin (5), no card at an index or a PCIe address,
# an xclbin the card refuses or without the kernel (9), xrt options with another backend (2); and, through
# XRT's no-op shim, that probe reaches the kernel and stops with a clear error instead of looping on a
# card that computes nothing: compare against csim shows where it first departs (8). The backend's call sequence in detail: tests/cxl/test_xrt.c.
# usage: xrt.sh CXLSIM SOURCE_DIR. Exit 77 (skipped) without the backend or the shim.
set -u
bin=$1 src=$2
if ! "$bin" backends | grep -q '^xrt *built in'; then
  echo "SKIPPED: xrt backend not built"
  exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if ! bash "$src/scripts/xrt-env.sh" --noop --dir "$tmp/xrt" >/dev/null || [ ! -e "$tmp/xrt/lib/libxrt_noop.so.2" ]; then
  echo "SKIPPED: XRT's no-op shim (libxrt_noop.so.2) not found"
  exit 77
fi
xclbin_tool=$(dirname "$bin")/cxlsim-xclbin
fails=0; passes=0
expect() {  # expect CODE PATTERN ARGS...: exit code and a stderr line matching PATTERN
  local code=$1 pat=$2; shift 2
  timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" = "$code" ] && grep -q -- "$pat" "$tmp/err"; then passes=$((passes+1))
  else echo "FAIL: $* -> exit $rc (want $code), stderr: $(cat "$tmp/err")"; fails=$((fails+1)); fi
}
"$xclbin_tool" "$tmp/k.xclbin" && "$xclbin_tool" "$tmp/other.xclbin" --kernel other_kernel ||
  { echo "FAIL: cxlsim-xclbin"; exit 1; }
echo "not an xclbin" >"$tmp/junk.xclbin"
card=(env -u XCL_EMULATION_MODE XILINX_XRT="$tmp/xrt")   # Debian's XRT, no card on this machine
noop=(env XILINX_XRT="$tmp/xrt" XCL_EMULATION_MODE=noop)
p=(probe --quick --backend xrt)

expect 4 "XILINX_XRT is not set" env -u XILINX_XRT -u XCL_EMULATION_MODE "$bin" "${p[@]}" --xclbin "$tmp/k.xclbin"
expect 4 "has no $tmp/none/lib/libxrt_core.so.2" env -u XCL_EMULATION_MODE XILINX_XRT="$tmp/none" \
  "$bin" "${p[@]}" --xclbin "$tmp/k.xclbin"
expect 4 "XCL_EMULATION_MODE is 'fast'" env XILINX_XRT="$tmp/xrt" XCL_EMULATION_MODE=fast \
  "$bin" "${p[@]}" --xclbin "$tmp/k.xclbin"
expect 2 "no xclbin" "${card[@]}" "$bin" "${p[@]}"
expect 2 "give an index" "${card[@]}" "$bin" "${p[@]}" --xclbin "$tmp/k.xclbin" --card first
expect 2 "needs a value" "$bin" "${p[@]}" --xclbin
expect 2 "xrt-timeout: '0'" "$bin" "${p[@]}" --xclbin "$tmp/k.xclbin" --xrt-timeout 0
expect 2 "need --backend xrt" "$bin" probe --quick --xclbin "$tmp/k.xclbin"
expect 5 "cannot read xclbin $tmp/missing.xclbin" "${card[@]}" "$bin" "${p[@]}" --xclbin "$tmp/missing.xclbin"
expect 9 "no FPGA card at index 0" "${card[@]}" "$bin" "${p[@]}" --xclbin "$tmp/k.xclbin"
expect 9 "no FPGA card at PCIe 0000:3b:00.1" "${card[@]}" "$bin" "${p[@]}" --xclbin "$tmp/k.xclbin" --card 0000:3b:00.1
expect 9 "refused xclbin" "${noop[@]}" "$bin" "${p[@]}" --xclbin "$tmp/junk.xclbin"
expect 9 "has no kernel 'cxl_kernel'" "${noop[@]}" "$bin" "${p[@]}" --xclbin "$tmp/other.xclbin"
# through the shim, which runs no kernel, compare shows where the fake card first departs from csim (exit 8)
timeout 60 "${noop[@]}" "$bin" compare --random 10 --backends csim,xrt --xclbin "$tmp/k.xclbin" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 8 ] && grep -q "field *descriptor queue space" "$tmp/out" && grep -q "xrt *0" "$tmp/out"; then
  passes=$((passes+1)); else echo "FAIL: compare csim,xrt on the shim: exit $rc: $(cat "$tmp/out" "$tmp/err")"; fails=$((fails+1)); fi
# train and compare take the same options and fail the same way
expect 9 "no FPGA card at index 0" "${card[@]}" "$bin" train cxl-offload-small --backend xrt --xclbin "$tmp/k.xclbin"
# the experiment names the xclbin relative to its own folder, and the card
mkdir -p "$tmp/exp"
cp "$tmp/k.xclbin" "$tmp/exp/k.xclbin"
printf 'extends: cxl-offload-small\ncxl: { memory: per-node, device: asic, offload_optimizer: cpu, backend: xrt, xclbin: k.xclbin, card: "0000:3b:00.1" }\n' >"$tmp/exp/x.yaml"
expect 9 "no FPGA card at PCIe 0000:3b:00.1" "${card[@]}" "$bin" train "$tmp/exp/x.yaml"
expect 9 "no FPGA card at index 2" "${card[@]}" "$bin" train "$tmp/exp/x.yaml" --card 2
printf 'extends: cxl-offload-small\ncxl: { memory: per-node, device: asic, offload_optimizer: cpu, backend: xrt, xclbin: gone.xclbin }\n' >"$tmp/exp/y.yaml"
expect 5 "cannot read xclbin $tmp/exp/gone.xclbin" "${card[@]}" "$bin" train "$tmp/exp/y.yaml"
expect 2 "need xrt in --backends" "$bin" compare --random 10 --backends csim,csim --xclbin "$tmp/k.xclbin"
expect 9 "no FPGA card at index 0" "${card[@]}" "$bin" compare --random 10 --backends csim,xrt --xclbin "$tmp/k.xclbin"
echo "$passes passed, $fails failed"
[ "$fails" = 0 ]

#!/usr/bin/env bash
# The bad-input campaign's findings (issue 28): each input once ran silently wrong, hung, ran away with
# memory or gave a message without a location; each must now be refused (or warned about) with the
# documented exit code, at file:line:column, naming the bound or relation it breaks.
# usage: bad_input.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"
cd "$tmp" || exit 1
expect() { # expect CODE PATTERN -- command...   (PATTERN: extended regex over stdout and stderr)
  local code=$1 pat=$2; shift 3
  timeout 120 "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" = "$code" ] && grep -qE -- "$pat" "$tmp/err" "$tmp/out"; then
    ok
  else
    bad "$* -> exit $rc (want $code, /$pat/), output:"; cat "$tmp/err" "$tmp/out" | head -5
  fi
}
y() { printf "$2" > "$tmp/$1"; }   # y FILE TEXT: write a configuration
c() { # c CODE PATTERN COMMAND FILE TEXT: write FILE, then expect `cxlsim COMMAND FILE` to give CODE, PATTERN
  y "$4" "$5"; expect "$1" "$2" -- "$bin" $3 "$tmp/$4"
}
cases() { # one case a line on stdin: CODE|PATTERN|COMMAND|FILE|TEXT (c's arguments)
  while IFS='|' read -r code pat cmd file text; do c "$code" "$pat" "$cmd" "$file" "$text"; done
}

# ---- loader: files that are not configurations, size, quadratic merges ----
expect 5 "/dev/zero: cannot read configuration file: not a regular file" -- "$bin" check /dev/zero
mkfifo "$tmp/fifo"
expect 5 "fifo: cannot read configuration file: not a regular file" -- "$bin" check "$tmp/fifo"
head -c $((17 << 20)) /dev/zero | tr '\0' '#' > "$tmp/huge.yaml"
expect 5 "huge.yaml: cannot read configuration file: larger than 16 MiB" -- "$bin" check "$tmp/huge.yaml"
{ printf 'name: x\nextends: asic\nhost:\n'; seq 1 80000 | sed 's/^/  k/; s/$/: 1/'; } > "$tmp/keys.yaml"
# (a quadratic merge of 80,000 keys would run into expect's 120 s timeout; no test asserts on wall time)
expect 3 "keys.yaml:4:3: unknown key 'host.k1'" -- "$bin" check "$tmp/keys.yaml"

# ---- messages: values cut, bytes named, YAML 1.1 traps, units ----
{ printf 'name: '; head -c 1000000 /dev/zero | tr '\0' a; printf '\nextends: asic\n'; } > "$tmp/long.yaml"
expect 3 "long.yaml:1:7: 'name' = 'a{64}\.\.\. \(1000000 bytes\)' is too long \(1000000 bytes; at most 63\)" -- \
  "$bin" check "$tmp/long.yaml"
long=$(head -c 200 /dev/zero | tr '\0' b)
y longext.yaml "name: x\nextends: $long\n"
expect 3 "longext.yaml:2:10: extends: 'b{64}\.\.\. \(200 bytes\)' not found: no file '.{64}\.\.\. \([0-9]+ bytes\)' and no preset" -- \
  "$bin" check "$tmp/longext.yaml"
expect 3 "unknown device 'b{64}\.\.\. \(200 bytes\)': .*presets: " -- "$bin" probe --quick "$long"
cases <<'EOF'
3|latin1.yaml:3:6: invalid input: byte 0xE9 .*not UTF-8|check|latin1.yaml|name: x\nextends: asic\n# caf\351\n
3|octal.yaml:4:15: 'host.requesters' = '010': leading zero|check|octal.yaml|name: x\nextends: asic\nhost:\n  requesters: 010\n
3|quoted.yaml:4:15: 'host.requesters' = "8" is quoted|check|quoted.yaml|name: x\nextends: asic\nhost:\n  requesters: "8"\n
3|null.yaml:1:7: 'name' has no value \('~' is YAML's null\)|check|null.yaml|name: ~\nextends: asic\n
0|~|check|quotedname.yaml|name: "~"\nextends: asic\n
3|cap.yaml:6:13: 'cxl.capacity' = '2PiB' \(2251799813685248 B\) is out of range: valid values are 0 B to 1125899906842624 B|memory|cap.yaml|name: x\nextends: llama2-7b-2x8-h100\ncxl:\n  memory: per-node\n  device: asic\n  capacity: 2PiB\n  offload_optimizer: cpu\n
EOF

# ---- devices: timing relations, model bounds and blame at the user's key ----
cases <<'EOF'
3|refab.yaml:5:30: dram.timing: all-bank refresh needs tRFC \+ tRC <= tREFI|check|refab.yaml|name: x\nextends: asic\ndram:\n  refresh: all-bank\n  timing: {tREFI: 100, tRFC: 100}\n
3|refab.yaml:5:30: |probe --quick|refab.yaml|name: x\nextends: asic\ndram:\n  refresh: all-bank\n  timing: {tREFI: 100, tRFC: 100}\n
3|refsb.yaml:5:19: dram.timing: same-bank refresh needs tREFI >= banks_per_group \(3 < 4\)|check|refsb.yaml|name: x\nextends: asic\ndram:\n  refresh: same-bank\n  timing: {tREFI: 3}\n
3|tras.yaml:4:17: dram.timing: need tRC \(50\) >= tRAS \+ tRP|check|tras.yaml|name: x\nextends: asic\ndram:\n  timing: {tRC: 50}\n
3|refab.yaml:5:30: dram.timing: all-bank refresh needs tRFC|compare --random 10 --backends csim,csim|refab.yaml|name: x\nextends: asic\ndram:\n  refresh: all-bank\n  timing: {tREFI: 100, tRFC: 100}\n
3|refi1.yaml:5:28: dram.timing.tRFC: 1000000 out of range \(1 to 16383 cycles\)|check|refi1.yaml|name: x\nextends: asic\ndram:\n  refresh: all-bank\n  timing: {tREFI: 1, tRFC: 1000000}\n
3|faw.yaml:4:18: dram.timing.tFAW: 1000000 out of range \(1 to 16383 cycles\)|check|faw.yaml|name: x\nextends: asic\ndram:\n  timing: {tFAW: 1000000}\n
3|refab.yaml:5:30: dram.timing: all-bank refresh needs tRFC|train|trefab.yaml|name: x\nextends: cxl-offload-small\ncxl:\n  device: refab.yaml\n
3|ddr4.yaml:4:13: dram.standard: DDR4 has no built-in timing bin at 4800 MT/s|check|ddr4.yaml|name: x\nextends: asic\ndram:\n  standard: DDR4\n
7|phy.yaml:4:16: x: link.phy_latency too long: .* phy_latency may be at most [0-9.]+ ns|check|phy.yaml|name: x\nextends: asic\nlink:\n  phy_latency: 1us\n
7|phy.yaml:4:16: x: link.phy_latency too long|train|cxlphy.yaml|name: x\nextends: llama2-7b-2x8-h100\ncxl:\n  memory: per-node\n  device: phy.yaml\n  offload_optimizer: cpu\n
3|nameonly.yaml:1:1: x: host.core_latency \+ host.port_latency must be at least one model cycle|check|nameonly.yaml|name: x\n
3|local.yaml:5:11: cxl.device: 'local-ddr5' is a local-DDR path|train|local.yaml|name: x\nextends: llama2-7b-2x8-h100\ncxl:\n  memory: per-node\n  device: local-ddr5\n  offload_optimizer: cpu\n
EOF

# ---- descriptor traces ----
printf 'requester,bytes,not_before\n0,64,1000000000000\n' > "$tmp/nb.csv"
expect 3 "nb.csv:2:.*not_before.*too large; valid: at most 4294967295" -- \
  "$bin" compare --trace "$tmp/nb.csv" --backends csim,analytical
# the largest wait allowed runs in time proportional to the work (csim crosses it whole refresh periods
# at a time), with the cycle count the deadline-by-deadline skip gave before it (main at 1e7d9dc)
printf 'requester,bytes,not_before\n0,4K,4294967295\n0,4K,0\n1,64,4294000000\n' > "$tmp/nbmax.csv"
expect 0 "equal: 3 descriptors, 3 completions, 4294969168 cycles, statistics identical" -- \
  "$bin" compare asic --trace "$tmp/nbmax.csv" --backends csim,csim --quiet
for dev in asic-ddr4 pool-2x2; do
  expect 0 "equal: 3 descriptors, 3 completions" -- "$bin" compare "$dev" --trace "$tmp/nbmax.csv" --backends csim,csim --quiet
done

# ---- training: times beyond the simulated range, and every message at the key behind it ----
cases <<'EOF'
7|hbm.yaml:3:41: gpu.hbm_bandwidth: kernel .* ends past 1e\+06 s|train|hbm.yaml|name: x\nextends: llama2-7b-2x8-h100\ngpu: {extends: h100-sxm, hbm_bandwidth: 1MB/s}\n
7|hbmk.yaml:3:41: gpu 'h100-sxm': kernel .* cannot be priced|train|hbmk.yaml|name: x\nextends: llama2-7b-2x8-h100\ngpu: {extends: h100-sxm, hbm_bandwidth: 1KB/s}\n
7|tf.yaml:3:39: gpu 'h100-sxm': kernel .* \(bf16\) cannot be priced|train|tf.yaml|name: x\nextends: llama2-7b-2x8-h100\ngpu: {extends: h100-sxm, bf16_tflops: 1e-300}\n
7|nv.yaml:3:44: gpu.nvlink_bandwidth: |train|nv.yaml|name: x\nextends: llama2-7b-2x8-h100\ngpu: {extends: h100-sxm, nvlink_bandwidth: 1B/s}\n
3|nvold.yaml:3:26: key 'gpu.nvlink' is no longer accepted: .*'nvlink_bandwidth', per direction .* nvlink: 900GB/s -> nvlink_bandwidth: 450GB/s|train|nvold.yaml|name: x\nextends: llama2-7b-2x8-h100\ngpu: {extends: h100-sxm, nvlink: 900GB/s}\n
3|nic.yaml:3:55: cluster.nic_bandwidth: 1 B/s x 8 NICs per node, shared by 8 GPUs, gives each GPU .* need at least [0-9]+ B/s|train|nic.yaml|name: x\nextends: llama2-7b-2x8-h100\ncluster: {extends: dgx-h100, nodes: 2, nic_bandwidth: 1B/s}\n
3|tree.yaml:3:25: training.collectives: .*tree does not support reduce-scatter|train|tree.yaml|name: x\nextends: llama2-7b-2x8-h100\ntraining: {collectives: tree}\n
EOF
# a time refused during the run leaves no report, trace or temporary file behind (README "Output files")
mkdir "$tmp/o"
expect 7 "gpu.hbm_bandwidth: kernel .* ends past 1e\+06 s" -- \
  "$bin" train "$tmp/hbm.yaml" --trace "$tmp/o/t.json.gz" --json "$tmp/o/r.json"
[ -z "$(ls -A "$tmp/o")" ] && ok || bad "train refused at 10^6 s left $(ls -A "$tmp/o")"
"$bin" ops --times --out "$tmp/ops.yaml" >/dev/null
sed 's/time: 286206878ps/time: 100s/' "$tmp/ops.yaml" > "$tmp/slow.yaml"
expect 7 "slow.yaml:[0-9]+:5: op-times: kernel .* \(100 s each\) ends past 1e\+06 s" -- \
  "$bin" train --op-times "$tmp/slow.yaml"
sed -E 's/time: [0-9]+ps/time: 1us/' "$tmp/ops.yaml" > "$tmp/fast.yaml"
expect 0 "warning: .*fast.yaml:6:5: measured time of qkv.fwd \(bf16\) is 1 us, below the 208 us" -- \
  "$bin" train --op-times "$tmp/fast.yaml"
expect 0 "warning: MFU [0-9.]+ % exceeds 100 %" -- "$bin" train --op-times "$tmp/fast.yaml"

# ---- CXL: a GPU path rate cap is honoured at any bandwidth (it was clamped to 4.69 MB/s per GPU) ----
stall() { # stall BW: the CXL stall in seconds of cxl-offload-small with that gpu_path_bandwidth
  y "gp${1%%/s}.yaml" "name: x\nextends: cxl-offload-small\ncxl:\n  gpu_path_bandwidth: $1\n"
  "$bin" train "$tmp/gp${1%%/s}.yaml" | awk '/CXL stall/ {print $3}'
}
s1=$(stall 1MB/s); s2=$(stall 2MB/s); s5=$(stall 5MB/s); s10=$(stall 10MB/s)
if awk -v a="$s1" -v b="$s2" -v c="$s5" -v d="$s10" 'BEGIN {
     r2 = a / b; r5 = a / c; r10 = a / d
     exit !(r2 > 1.9 && r2 < 2.1 && r5 > 4.75 && r5 < 5.25 && r10 > 9.5 && r10 < 10.5) }'; then
  ok
else
  bad "CXL stall not inversely proportional to gpu_path_bandwidth: 1MB/s $s1 s, 2MB/s $s2 s, 5MB/s $s5 s, 10MB/s $s10 s"
fi

# ---- probe: a slow link measures no more than 100 % and says n/a where nothing completed ----
# (requesters in phase: at the lowest load each issues once at cycle 0 and next after the window, so
# nothing completes in it; staggered phases would put some of those issues inside the window)
y gen1.yaml 'name: gen1\nextends: asic\nlink:\n  rate: 2.5GT/s\n  width: 1\n'
"$bin" probe --quick --arrivals aligned "$tmp/gen1.yaml" --json "$tmp/gen1.json" --csv "$tmp/gen1.csv" > "$tmp/gen1.txt"
if awk '/%/ { for (i = 1; i <= NF; i++) if ($i ~ /%$/ && $i + 0 > 100) bad = 1 } END { exit bad }' "$tmp/gen1.txt" &&
   grep -qE '^ +0\.03 +n/a +n/a +n/a$' "$tmp/gen1.txt" && grep -q '"achieved_gbps": null' "$tmp/gen1.json" &&
   grep -q '^0.025600,,,$' "$tmp/gen1.csv" && grep -qE '0:100 \(writes\) +[0-9.]+ +n/a +n/a' "$tmp/gen1.txt" &&
   ! grep -qE ' 0\.00 +0\.0 ' "$tmp/gen1.txt"; then
  ok
else
  bad "probe --quick on a 2.5 GT/s x1 link:"; cat "$tmp/gen1.txt"
fi

# ---- bounded runs: gradient buckets, micro-batches ----
cases <<'EOF'
3|gb.yaml:3:25: training.grad_bucket: 1 B cuts pipeline stage 0's [0-9]+ B .* more than 65536 buckets.*use at least 205649 B|train|gb.yaml|name: x\nextends: llama2-7b-2x8-h100\ntraining: {grad_bucket: 1B}\n
3|gbatch.yaml:3:26: training.global_batch: 1073741824 gives 134217728 micro-batches .* at most 4194304 .* at most 33554432|memory|gbatch.yaml|name: x\nextends: llama2-7b-2x8-h100\ntraining: {global_batch: 1073741824}\n
EOF

# ---- the NVLink domain: whole nodes, whole in the job; the TP group inside one ----
cases <<'EOF'
3|dom.yaml:3:59: cluster.nvlink_domain: 72 GPUs does not divide the cluster's nodes 64 .* nearest valid: 64 or 128|train|dom.yaml|name: x\nextends: llama2-7b-2x8-h100\ncluster: {extends: gb200-nvl72, nodes: 64, nvlink_domain: 72}\n
3|domb.yaml:3:58: cluster.nvlink_domain: 1048575 GPUs is not a whole number of nodes of 4 .* nearest valid: 1048572 or 1048576|memory|domb.yaml|name: x\nextends: llama2-7b-2x8-h100\ncluster: {extends: gb200-nvl72, nodes: 4, nvlink_domain: 1048575}\n
3|dom0.yaml:3:58: .cluster.nvlink_domain. = .0. is out of range|train|dom0.yaml|name: x\nextends: llama2-7b-2x8-h100\ncluster: {extends: gb200-nvl72, nodes: 4, nvlink_domain: 0}\n
3|domtp.yaml:4:16: training.tp: 8 leaves the NVLink domain of 4 GPUs .* valid tp: 1, 2, 4|train|domtp.yaml|name: x\nextends: llama2-7b-2x8-h100\ncluster: {extends: gb200-nvl72, nodes: 4, nvlink_domain: 4}\ntraining: {tp: 8, dp: 2}\n
EOF

finish bad_input

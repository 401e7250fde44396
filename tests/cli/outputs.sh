#!/usr/bin/env bash
# Output paths as Unix tools handle them (host/out/outfile.h, README "Output files"): '-' and /dev/stdout,
# symbolic links written through, devices, FIFOs and sockets written in place, regular files replaced
# atomically with their mode kept, read-only files and inputs refused, folders and unwritable places
# refused before the run, every write and the close of standard output checked, nothing left behind by
# a failed or interrupted run. Runs as root (as CI does) and as a user. usage: outputs.sh CXLSIM SOURCE_DIR
. "$(dirname "$0")/harness.bash" "$@"
is_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }
no_temps() { # folder description
  if ls -A "$1" | grep -q '\.tmp'; then bad "$2: temporary file left: $(ls -A "$1" | grep '\.tmp')"; else ok; fi
}
exp=llama2-7b-2x8-h100
# The system's devices are reached through links of our own: a binary that replaced its destination
# instead of writing through it would replace these links, never /dev/null or /dev/stdout themselves.
for d in null full stdout; do ln -s /dev/$d "$tmp/dev-$d"; done

# '-' and /dev/stdout: the JSON alone on standard output, the summary on standard error
for dash in - /dev/fd/1 "$tmp/dev-stdout"; do
  expect_rc 0 "train --json $dash" "$bin" train --json "$dash"
  is_json "$tmp/out" && ok || bad "train --json $dash: standard output is not the JSON alone"
  grep -q "iteration time" "$tmp/err" && ok || bad "train --json $dash: summary not on standard error"
  [ ! -e ./- ] && ok || bad "train --json -: wrote a file named '-'"
done
[ -L "$tmp/dev-stdout" ] && ok || bad "a link to /dev/stdout was replaced"
expect_rc 0 "memory --json -" "$bin" memory --json -
is_json "$tmp/out" && ok || bad "memory --json -: not JSON"
expect_rc 0 "probe --csv -" "$bin" probe --quick --points 2 --samples 20 --csv -
head -1 "$tmp/out" | grep -q '^offered_gbps,' && ok || bad "probe --csv -: standard output is not the CSV"
expect_rc 0 "ops --out -" "$bin" ops --out -
grep -q 'name: "qkv.fwd"' "$tmp/out" && ok || bad "ops --out -: list not on standard output"
expect_rc 5 "two outputs on standard output" "$bin" train --json - --trace "$tmp/dev-stdout"
grep -q "same file" "$tmp/err" && ok || bad "two outputs on stdout: no message"

# a symbolic link is written through; the link stays; a dangling link creates its target
echo old >"$tmp/target.json"; ln -s target.json "$tmp/link.json"
expect_rc 0 "through a link" "$bin" memory --json "$tmp/link.json"
[ -L "$tmp/link.json" ] && ok || bad "the link was replaced"
is_json "$tmp/target.json" && ok || bad "the link's target was not written"
ln -s sub/new.json "$tmp/dangling.json"; mkdir "$tmp/sub"
expect_rc 0 "through a dangling link" "$bin" memory --json "$tmp/dangling.json"
[ -L "$tmp/dangling.json" ] && is_json "$tmp/sub/new.json" && ok || bad "dangling link: target not created"
ln -s "$tmp/link.json" "$tmp/link2.json"
expect_rc 0 "through two links" "$bin" memory --json "$tmp/link2.json"
[ -L "$tmp/link2.json" ] && [ -L "$tmp/link.json" ] && ok || bad "a link of the chain was replaced"
ln -s loop.json "$tmp/loop.json"
expect_rc 5 "a link loop" "$bin" memory --json "$tmp/loop.json"

# character devices: written in place
expect_rc 0 "--json /dev/null" "$bin" memory --json "$tmp/dev-null"
[ -L "$tmp/dev-null" ] && ok || bad "a link to /dev/null was replaced"
expect_rc 5 "--json /dev/full" "$bin" memory --json "$tmp/dev-full"
grep -q "No space left" "$tmp/err" && ok || bad "/dev/full: no reason given"
# every output option of every command meets the full disk with exit 5 (ops once wrote 4,096 of its
# 4,644 bytes and exited 0)
expect_rc 5 "ops --out /dev/full" "$bin" ops --out "$tmp/dev-full"
expect_rc 5 "probe --csv /dev/full" "$bin" probe --quick --points 2 --samples 20 --csv "$tmp/dev-full"
expect_rc 5 "compare --save-trace /dev/full" "$bin" compare --random 10 --backends csim,csim --save-trace "$tmp/dev-full"

# a FIFO: its reader gets the bytes, the FIFO stays
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.got" & reader=$!
expect_rc 0 "--json FIFO" "$bin" memory --json "$tmp/fifo"
wait $reader
[ -p "$tmp/fifo" ] && ok || bad "the FIFO was replaced"
is_json "$tmp/fifo.got" && ok || bad "the FIFO's reader did not get the JSON"

# a Unix socket: connected to and written
python3 - "$tmp/sock" "$tmp/sock.got" <<'PY' & server=$!
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(sys.argv[1]); s.listen(1); s.settimeout(300)
c, _ = s.accept(); data = b""
while True:
    b = c.recv(65536)
    if not b: break
    data += b
open(sys.argv[2], "wb").write(data)
PY
for _ in $(seq 600); do [ -S "$tmp/sock" ] && break; sleep 0.1; done
expect_rc 0 "--json socket" "$bin" memory --json "$tmp/sock"
wait $server
is_json "$tmp/sock.got" && ok || bad "the socket's server did not get the JSON"

# a regular file keeps its mode; a new one gets 0666 less the umask
echo old >"$tmp/mode.json"; chmod 640 "$tmp/mode.json"
expect_rc 0 "existing file" "$bin" memory --json "$tmp/mode.json"
[ "$(stat -c %a "$tmp/mode.json")" = 640 ] && ok || bad "mode became $(stat -c %a "$tmp/mode.json"), not 640"
(umask 027; "$bin" memory --json "$tmp/new.json" >/dev/null 2>&1)
[ "$(stat -c %a "$tmp/new.json")" = 640 ] && ok || bad "new file mode $(stat -c %a "$tmp/new.json") under umask 027"
# a read-only file is refused before the run, and stays as it was (for root too)
echo keep >"$tmp/ro.json"; chmod 444 "$tmp/ro.json"
expect_rc 5 "read-only output" "$bin" train --json "$tmp/ro.json"
grep -q "read-only" "$tmp/err" && ok || bad "read-only: no clear message ($(cat "$tmp/err"))"
[ ! -s "$tmp/out" ] && ok || bad "read-only output refused only after the run"
[ "$(cat "$tmp/ro.json")" = keep ] && [ "$(stat -c %a "$tmp/ro.json")" = 444 ] && ok || bad "read-only file changed"

# refused before the run: a folder, a place where nothing can be created, a missing folder
for p in "$tmp" /proc/x.json "$tmp/none/x.json"; do
  expect_rc 5 "--json $p" "$bin" train --json "$p"
  [ ! -s "$tmp/out" ] && ok || bad "--json $p refused only after the run"
done
grep -q "folder" <("$bin" train --json "$tmp" 2>&1) && ok || bad "--json FOLDER: message does not say it is a folder"
if [ "$(id -u)" != 0 ]; then # permissions bind only a user; root writes anywhere
  mkdir "$tmp/locked"; chmod 555 "$tmp/locked"
  expect_rc 5 "unwritable folder" "$bin" train --json "$tmp/locked/x.json"
  chmod 755 "$tmp/locked"
fi

# an output that is an input is refused before the run, and the input stays
cp "$src/configs/experiments/$exp.yaml" "$tmp/exp.yaml"
expect_rc 5 "--json INPUT" "$bin" train "$tmp/exp.yaml" --json "$tmp/exp.yaml"
cmp -s "$tmp/exp.yaml" "$src/configs/experiments/$exp.yaml" && ok || bad "the input was overwritten"
grep -q "is the input" "$tmp/err" && ok || bad "--json INPUT: no message"
ln -s exp.yaml "$tmp/exp-link.yaml"
expect_rc 5 "--trace link to INPUT" "$bin" train "$tmp/exp.yaml" --trace "$tmp/exp-link.yaml"
expect_rc 5 "ops --out INPUT" "$bin" ops "$tmp/exp.yaml" --out "$tmp/exp.yaml"
cp "$src/configs/devices/asic.yaml" "$tmp/dev.yaml"
expect_rc 5 "probe --json DEVICE" "$bin" probe "$tmp/dev.yaml" --json "$tmp/dev.yaml"
expect_rc 5 "same output twice" "$bin" train --json "$tmp/same.json" --trace "$tmp/same.json"
# ... also a configuration file read through `extends` or named by the experiment (a component or
# device file, and its own parents): refused after loading, before the run, and the file stays
mkdir "$tmp/inc"
cp "$src/configs/experiments/cxl-offload-small.yaml" "$tmp/inc/base.yaml"
printf 'extends: base.yaml\nname: child\n' >"$tmp/inc/child.yaml"
printf 'extends: mid.yaml\nname: grandchild\n' >"$tmp/inc/grand.yaml"
printf 'extends: base.yaml\n' >"$tmp/inc/mid.yaml"
cp "$tmp/inc/base.yaml" "$tmp/inc/base.orig"
expect_rc 5 "train --json PARENT (extends)" "$bin" train "$tmp/inc/child.yaml" --json "$tmp/inc/base.yaml"
grep -q "is the input '$tmp/inc/base.yaml'" "$tmp/err" && ok || bad "--json PARENT: message: $(head -c 300 "$tmp/err")"
[ -s "$tmp/out" ] && bad "--json PARENT: the run went ahead" || ok
expect_rc 5 "train --trace GRANDPARENT" "$bin" train "$tmp/inc/grand.yaml" --trace "$tmp/inc/base.yaml"
expect_rc 5 "train --json MIDDLE of the chain" "$bin" train "$tmp/inc/grand.yaml" --json "$tmp/inc/mid.yaml"
ln -s base.yaml "$tmp/inc/base-link.yaml"
expect_rc 5 "memory --json link to PARENT" "$bin" memory "$tmp/inc/child.yaml" --json "$tmp/inc/base-link.yaml"
expect_rc 5 "ops --out PARENT" "$bin" ops "$tmp/inc/child.yaml" --out "$tmp/inc/base.yaml"
cmp -s "$tmp/inc/base.yaml" "$tmp/inc/base.orig" && ok || bad "a parent experiment was overwritten"
# a component file and the device file of the cxl: section, each through its own extends
cat >"$tmp/inc/model-base.yaml" <<'YAML'
name: gpt2-125m
layers: 12
hidden: 768
heads: 12
vocab: 50304
seq_len: 1024
YAML
printf 'extends: model-base.yaml\nbias: true\n' >"$tmp/inc/model.yaml"
cp "$src/configs/devices/asic.yaml" "$tmp/inc/dev-base.yaml"
printf 'extends: dev-base.yaml\nname: mine\n' >"$tmp/inc/dev.yaml"
cat >"$tmp/inc/parts.yaml" <<'YAML'
extends: base.yaml
name: parts
model: model.yaml
cxl: { memory: per-node, device: dev.yaml, offload_optimizer: cpu }
YAML
expect_rc 0 "the experiment with component files runs" "$bin" train "$tmp/inc/parts.yaml" --json "$tmp/inc/ok.json"
expect_rc 5 "train --json MODEL-PARENT" "$bin" train "$tmp/inc/parts.yaml" --json "$tmp/inc/model-base.yaml"
expect_rc 5 "train --json DEVICE-PARENT" "$bin" train "$tmp/inc/parts.yaml" --json "$tmp/inc/dev-base.yaml"
expect_rc 5 "train --trace DEVICE" "$bin" train "$tmp/inc/parts.yaml" --trace "$tmp/inc/dev.yaml"
expect_rc 5 "probe --json DEVICE-PARENT" "$bin" probe "$tmp/inc/dev.yaml" --quick --json "$tmp/inc/dev-base.yaml"
expect_rc 5 "compare --json DEVICE-PARENT" "$bin" compare "$tmp/inc/dev.yaml" --random 10 --backends csim,csim \
  --json "$tmp/inc/dev-base.yaml"
cmp -s "$tmp/inc/dev-base.yaml" "$src/configs/devices/asic.yaml" && ok || bad "a parent device was overwritten"
# an op-times file's own parent (--op-times FILE extends another)
cp "$src/configs/optimes/sample-llama2-7b-h100.yaml" "$tmp/inc/times-base.yaml"
printf 'extends: times-base.yaml\n' >"$tmp/inc/times.yaml"
expect_rc 0 "train --op-times CHILD runs" "$bin" train llama2-7b-2x8-h100 --op-times "$tmp/inc/times.yaml" \
  --json "$tmp/inc/times.json"
expect_rc 5 "train --json OP-TIMES-PARENT" "$bin" train llama2-7b-2x8-h100 --op-times "$tmp/inc/times.yaml" \
  --json "$tmp/inc/times-base.yaml"
cmp -s "$tmp/inc/times-base.yaml" "$src/configs/optimes/sample-llama2-7b-h100.yaml" && ok ||
  bad "an op-times file's parent was overwritten"
# a sweep's base and everything it reads (the sweep file names it)
printf 'base: child.yaml\ncommand: memory\naxes:\n  training.micro_batch: [1, 2]\n' >"$tmp/inc/sw.yaml"
expect_rc 5 "sweep --csv BASE" "$bin" sweep "$tmp/inc/sw.yaml" -j 1 --csv "$tmp/inc/child.yaml"
expect_rc 5 "sweep --jsonl BASE-PARENT" "$bin" sweep "$tmp/inc/sw.yaml" -j 1 --jsonl "$tmp/inc/base.yaml"
printf 'base: parts.yaml\ncommand: memory\naxes:\n  training.micro_batch: [1, 2]\n' >"$tmp/inc/swp.yaml"
expect_rc 5 "sweep --csv DEVICE-PARENT of the base" "$bin" sweep "$tmp/inc/swp.yaml" -j 1 --csv "$tmp/inc/dev-base.yaml"
printf 'base: dev.yaml\ncommand: probe\nprobe: { quick: true }\naxes:\n  link.width: [4, 8]\n' >"$tmp/inc/swd.yaml"
expect_rc 5 "probe sweep --csv DEVICE-PARENT" "$bin" sweep "$tmp/inc/swd.yaml" -j 1 --csv "$tmp/inc/dev-base.yaml"
cmp -s "$tmp/inc/base.yaml" "$tmp/inc/base.orig" && ok || bad "a sweep overwrote its base's parent"
expect_rc 0 "sweep with its own output" "$bin" sweep "$tmp/inc/sw.yaml" -j 1 --csv "$tmp/inc/sw.csv"

# a failed run: no output written, the old file untouched, no temporary file
echo old >"$tmp/keep.json"
expect_rc 5 "--trace /dev/full" "$bin" train --json "$tmp/keep.json" --trace "$tmp/dev-full"
[ "$(cat "$tmp/keep.json")" = old ] && ok || bad "--json file replaced although the run failed"
expect_rc 5 "--trace /dev/full, new json" "$bin" train --json "$tmp/fresh.json" --trace "$tmp/dev-full"
[ ! -e "$tmp/fresh.json" ] && ok || bad "--json file written although the run failed"
no_temps "$tmp" "failed run"
[ -L "$tmp/dev-full" ] && ok || bad "a link to /dev/full was replaced"

# standard output that cannot be written: exit 5 with a message, for every command that prints
while read -r args; do
  # shellcheck disable=SC2086
  "$bin" $args >/dev/full 2>"$tmp/err"; rc=$?
  [ "$rc" = 5 ] && grep -q "standard output" "$tmp/err" && ok || bad "'cxlsim $args > /dev/full': exit $rc"
done <<EOF
train
train --dump-config
memory
ops
check asic
presets
presets models
presets show asic
presets show --resolved asic
backends
version
help
probe --quick --points 2 --samples 20
compare --random 10 --backends csim,csim
EOF

# interrupted while a temporary file is pending (the trace waits on a FIFO without a reader): the
# signal removes it, the process dies of the signal, the old file stays
mkfifo "$tmp/stall"
for sig in TERM INT; do
  rm -rf "$tmp/int"; mkdir "$tmp/int"; echo old >"$tmp/int/r.json"
  python3 -c 'import os,signal,sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$bin" train --json "$tmp/int/r.json" --trace "$tmp/stall" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1200); do ls "$tmp/int" | grep -q '\.tmp' && break; sleep 0.1; done
  ls "$tmp/int" | grep -q '\.tmp' && ok || bad "SIG$sig: no temporary file while the run waits"
  kill -s "$sig" $pid; wait $pid; rc=$?
  want=$((128 + $(kill -l "$sig")))
  [ "$rc" = "$want" ] && ok || bad "SIG$sig: exit $rc, expected $want"
  no_temps "$tmp/int" "SIG$sig"
  [ "$(cat "$tmp/int/r.json")" = old ] && ok || bad "SIG$sig: old file changed"
done

finish outputs

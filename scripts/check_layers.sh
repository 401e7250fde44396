#!/usr/bin/env bash
# check_layers.sh - host/ is layered (host/README.md): a file in host/<layer>/ includes host headers only by
# their layer-relative path ("config/cfg.h", host/ being the include root) and only from its own layer or a
# layer below it. Also: no source directly in host/, no folder that is not a layer.
# usage: scripts/check_layers.sh [SOURCE_DIR]     exit 0 when the layering holds, 1 with one line per breach
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
# bottom to top; a layer may include itself and the layers before it
layers=(util cxl config out devtools train explore cli)
# generated at build time (build/generated), not in the tree
generated='^(commit\.h|presets_[a-z]+\.inc)$'

rank() { local i; for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }

bad=0
fail() { echo "check_layers: $*"; bad=$((bad + 1)); }

for f in "$root"/host/*; do
  name=${f##*/}
  if [ -d "$f" ]; then
    [ "$(rank "$name")" -ge 0 ] || fail "host/$name/: not a layer (valid: ${layers[*]}); add it to host/README.md and this script"
  else
    case $name in README.md) ;; *) fail "host/$name: a file outside the layer folders" ;; esac
  fi
done

files=0
for f in "$root"/host/*/*.[ch]; do
  rel=${f#"$root"/host/}
  layer=${rel%%/*}
  own=$(rank "$layer")
  [ "$own" -ge 0 ] || continue
  files=$((files + 1))
  while IFS=: read -r line inc; do
    inc=${inc#*\"}; inc=${inc%%\"*}
    case $inc in
      ../*)   # outside host/ (hw/hls, sim/): resolved from the include root
        [ -e "$root/host/$inc" ] || fail "host/$rel:$line: \"$inc\" does not exist relative to host/" ;;
      */*)
        dep=${inc%%/*}
        r=$(rank "$dep")
        if [ "$r" -lt 0 ]; then
          fail "host/$rel:$line: \"$inc\" is not in a layer (${layers[*]})"
        elif [ ! -e "$root/host/$inc" ]; then
          fail "host/$rel:$line: \"$inc\" does not exist"
        elif [ "$r" -gt "$own" ]; then
          fail "host/$rel:$line: layer $layer includes \"$inc\" from layer $dep, which is above it (order: ${layers[*]})"
        fi ;;
      *)
        [[ $inc =~ $generated ]] || fail "host/$rel:$line: \"$inc\": write the layer-relative path (e.g. \"util/err.h\")" ;;
    esac
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done

if [ "$files" -eq 0 ]; then
  echo "check_layers: no sources found under $root/host" >&2
  exit 1
fi
if [ "$bad" -gt 0 ]; then
  echo "check_layers: $bad breach(es) in $files files"
  exit 1
fi
echo "check_layers: $files files in ${#layers[@]} layers, every include from its own layer or below"

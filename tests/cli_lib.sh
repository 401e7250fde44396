# cli_lib.sh - what the command-line test scripts (tests/cli/*.sh) share; source it after setting bin
# and src. Gives $tmp (removed on exit), the pass/fail counters with ok and bad, expect_rc, and finish.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
expect_rc() { # expected-rc description command...: stdout in $tmp/out, stderr in $tmp/err
  local want=$1 what=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, expected $want ($(head -c 300 "$tmp/err"))"; fi
}
finish() { # the summary line and the script's status
  echo "$1: $passes passed, $fails failed"
  [ "$fails" = 0 ]
}

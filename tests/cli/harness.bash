# harness.bash - the frame of a command-line test, sourced as `. harness.bash "$@"` (not a test itself:
# CMake registers tests/cli/*.sh only). From the test's arguments CXLSIM SOURCE_DIR it sets bin and src;
# it makes a temporary folder tmp removed on exit, the counters passes and fails with ok and bad,
# expect_rc WANT WHAT COMMAND... which runs COMMAND with its output in $tmp/out and $tmp/err, and
# finish NAME, the summary line and the script's status (its last command).
set -u
bin=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
expect_rc() { # expected-rc description command...
  local want=$1 what=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, expected $want ($(head -c 300 "$tmp/err"))"; fi
}
finish() { # name: the summary line and the script's status
  echo "$1: $passes passed, $fails failed"
  [ "$fails" = 0 ]
}

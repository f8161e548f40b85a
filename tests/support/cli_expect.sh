# The shared start of the codec commands' shell tests (sourced): the
# command under test ($AW, from AW_CLI), the source tree ($SRC), a scratch
# folder ($tmp, removed on exit), and
#   check NAME WANT GOT      "ok" or "FAIL" with both values; fail=1 on a miss
#   status NAME WANT CMD...  run CMD, its stdout and stderr in $tmp/out and
#                            $tmp/err, and check its exit status
# The test ends with: exit $fail
AW=${AW_CLI:?AW_CLI not set}
SRC=${AW_SOURCE_DIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name expected actual
  if [ "$2" != "$3" ]; then
    echo "FAIL $1"
    echo "  want: $2"
    echo "  got:  $3"
    fail=1
  else
    echo "ok   $1"
  fi
}
status() {
  local name=$1 want=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  check "$name (exit)" "$want" "$?"
}

# Shared by shell tests of the command: sourced as
#   . "$(dirname "$0")/support/cli_checks.sh"
# by a test run as `tests/test_cli_X.sh AGENTWIRE SOURCE_DIR` (or with the
# environment variables AW_CLI, or AW_CLI_PATH, and AW_SOURCE_DIR). Gives
# CLI, SRC, a scratch directory T (removed at exit), check counting, and:
#   run WANT_STATUS NAME ARGS...         stdout to $T/out, stderr to $T/err
#   run_on INPUT WANT_STATUS NAME ARGS...  the same with stdin from INPUT
#   has TEXT NAME FILE / lacks TEXT NAME FILE
#   finish                               the summary line and exit status
CLI=${1:-${AW_CLI:-${AW_CLI_PATH:-}}}
SRC=${2:-${AW_SOURCE_DIR:-.}}
if [ -z "$CLI" ] || [ ! -x "$CLI" ]; then
    echo "usage: $0 AGENTWIRE SOURCE_DIR" >&2
    exit 2
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/aw-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
failures=0
checks=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

run_on() {
    input=$1
    want=$2
    name=$3
    shift 3
    checks=$((checks + 1))
    "$CLI" "$@" <"$input" >"$T/out" 2>"$T/err"
    got=$?
    if [ "$got" != "$want" ]; then
        fail "$name: exit status $got, wanted $want"
        sed 's/^/    stderr: /' "$T/err" | head -5
    fi
}

run() { run_on /dev/null "$@"; }

has() {
    checks=$((checks + 1))
    grep -qF -- "$1" "$3" || fail "$2: wanted '$1' in: $(head -c 400 "$3")"
}

lacks() {
    checks=$((checks + 1))
    if grep -qF -- "$1" "$3"; then fail "$2: did not want '$1' in: $(head -c 400 "$3")"; fi
}

finish() {
    echo "$checks checks, $failures failures"
    [ "$failures" -eq 0 ]
}

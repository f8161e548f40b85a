# Sourced by the shell tests of `agentwire run` (tests/test_cli_run*.sh,
# tests/test_cli_demo.sh): the command under test ($CLI, absolute), the
# source tree ($SRC), a scratch directory ($T, removed at exit) and the
# checks. Arguments: AGENTWIRE [SOURCE_DIR], or the environment variables
# AW_CLI (or AW_CLI_PATH) and AW_SOURCE_DIR.

CLI=${1:-${AW_CLI:-${AW_CLI_PATH:-}}}
SRC=${2:-${AW_SOURCE_DIR:-.}}
if [ -z "$CLI" ] || [ ! -x "$CLI" ]; then
    echo "usage: $0 AGENTWIRE [SOURCE_DIR]" >&2
    exit 2
fi
case "$CLI" in /*) ;; *) CLI="$(pwd)/$CLI" ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/aw-cli-test.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
failures=0
checks=0
# plain progress lines on stderr, whatever the terminal; the runs' default
# session store in the scratch directory, not the user's
export AW_NO_STATUS_LINE=1 XDG_DATA_HOME="$T/xdg"

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# check STATUS NAME: a failure named NAME unless STATUS is 0
check() {
    checks=$((checks + 1))
    [ "$1" -eq 0 ] || fail "$2"
}

# contains TEXT NAME [FILE]: FILE (default $T/out) holds TEXT
contains() {
    checks=$((checks + 1))
    grep -qF -- "$1" "${3:-$T/out}" ||
        fail "$2: wanted '$1' in $(basename "${3:-$T/out}"): $(head -c 600 "${3:-$T/out}")"
}

# lacks TEXT NAME [FILE]: FILE (default $T/out) does not hold TEXT
lacks() {
    checks=$((checks + 1))
    if grep -qF -- "$1" "${3:-$T/out}"; then
        fail "$2: did not want '$1' in $(basename "${3:-$T/out}")"
    fi
}

# run WANT_STATUS NAME ARGS...: agentwire ARGS, stdout to $T/out, stderr to $T/err
run() {
    want=$1
    name=$2
    shift 2
    checks=$((checks + 1))
    "$CLI" "$@" >"$T/out" 2>"$T/err"
    got=$?
    if [ "$got" != "$want" ]; then
        fail "$name: exit status $got, wanted $want"
        sed 's/^/    stderr: /' "$T/err" | head -8
    fi
}

# A tag of the session 1a2b3c4d, and a final report, as a JSON string's contents.
call() { printf '<ai-agent-1a2b3c4d-%s tool=\\"%s\\">%s</ai-agent-1a2b3c4d-%s>' "$1" "$2" "$3" "$1"; }
final() {
    printf '<ai-agent-1a2b3c4d-FINAL tool=\\"agent__final_report\\" status=\\"%s\\" format=\\"markdown\\">%s</ai-agent-1a2b3c4d-FINAL>' "$1" "$2"
}

# The summary line, and the script's exit status.
finish() {
    echo "$checks checks, $failures failures"
    [ "$failures" -eq 0 ]
}

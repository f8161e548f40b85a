#!/bin/sh
# A stand-in for the claude and codex commands in the tests
# (test_rt_cli_providers.c), reached as tests/fakes/claude and
# tests/fakes/codex. It records what it was given and answers as the test
# scripted it, through files in $FAKE_DIR (set with the provider's
# extra_env, which is how the tests see that it reaches the command):
#   argv      written: the arguments, one per line
#   stdin     written: everything read from stdin
#   pid       written: its pid, which is its process group
#   stderr    read: copied to stderr
#   stdout    read: copied to stdout
#   gate      a FIFO: after stdout, wait for a line on it, then copy stdout2
# FAKE_MODE: hang (start a sleeper in the background, record its pid in
# sleeper, wait for ever), flood (print 100 MB); FAKE_EXIT: the exit
# status; FAKE_SIGNAL: die by this signal.
set -u
dir=${FAKE_DIR:?FAKE_DIR is not set}
echo $$ > "$dir/pid.tmp" && mv "$dir/pid.tmp" "$dir/pid"
: > "$dir/argv"
for arg in "$@"; do printf '%s\n' "$arg" >> "$dir/argv"; done
cat > "$dir/stdin"
[ -f "$dir/stderr" ] && cat "$dir/stderr" >&2
[ -f "$dir/stdout" ] && cat "$dir/stdout"
if [ -p "$dir/gate" ]; then
    read -r line < "$dir/gate"
    cat "$dir/stdout2"
fi
case "${FAKE_MODE:-}" in
hang)
    sleep 1000 &
    echo $! > "$dir/sleeper.tmp" && mv "$dir/sleeper.tmp" "$dir/sleeper"
    wait ;;
flood)
    head -c 104857600 /dev/zero | tr '\0' x ;;
esac
[ -n "${FAKE_SIGNAL:-}" ] && kill -"$FAKE_SIGNAL" $$
exit "${FAKE_EXIT:-0}"

# Bounded waits for the shell tests that watch processes (sourced after
# cli_test.sh or cli_checks.sh). No time is asserted: a wait only ends a
# check that would otherwise hang.

# Whether pid runs (a zombie does not count).
alive() { [ -r "/proc/$1/stat" ] && ! grep -q ') Z ' "/proc/$1/stat" 2>/dev/null; }

# Whether pid is gone (or is no child of ours to signal).
gone() { ! kill -0 "$1" 2>/dev/null; }

# wait_for SECONDS COMMAND...: until COMMAND succeeds; 1 when it never did.
wait_for() {
    limit=$(($1 * 20))
    shift
    i=0
    while ! "$@"; do
        i=$((i + 1))
        [ $i -ge $limit ] && return 1
        sleep 0.05
    done
    return 0
}

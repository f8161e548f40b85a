#!/bin/sh
# `agentwire serve` as a user runs it: its help, the options it refuses
# (an address beyond loopback without a token is a usage error, saying
# why), a store that cannot be read, and a server that starts, answers
# with curl, and stops cleanly on SIGTERM and on SIGINT.
#
#   tests/test_cli_serve.sh AGENTWIRE SOURCE_DIR
set -u

. "$(dirname "$0")/support/cli_checks.sh"

run 0 "help" serve --help
has "--listen HOST:PORT" "help names --listen" "$T/out"
has "--token T" "help names --token" "$T/out"
run 0 "top help lists serve" --help
has "  serve " "top-level help" "$T/out"

# ---- refused ----------------------------------------------------------------------
S="sqlite:$T/sessions.db"
"$CLI" sessions list --store "$S" >/dev/null 2>&1 # makes the store
run 2 "beyond loopback without a token" serve --store "$S" --listen 0.0.0.0:0
has "is not a loopback address" "the reason" "$T/err"
has "give --token" "what to do" "$T/err"
run 2 "IPv6 any without a token" serve --store "$S" --listen "[::]:0"
run 2 "a short token" serve --store "$S" --listen 127.0.0.1:0 --token abc
has "at least 16 characters" "short token" "$T/err"
run 2 "a malformed address" serve --store "$S" --listen localhost
has "--listen wants HOST:PORT" "malformed address" "$T/err"
run 2 "token and token file" serve --store "$S" --token 0123456789abcdef0 --token-file /dev/null
run 2 "an unknown option" serve --store "$S" --port 80
run 2 "an argument" serve --store "$S" extra
run 2 "threads out of range" serve --store "$S" --threads 0
run 1 "a token file that is not there" serve --store "$S" --token-file "$T/none"
run 1 "an unknown store" serve --store "mysql://x" --listen 127.0.0.1:0
has "unknown store" "unknown store" "$T/err"

# ---- a server that runs ------------------------------------------------------------------
# start it on a free port; its first line says where it listens
start() {
    "$CLI" serve --store "$S" --listen 127.0.0.1:0 "$@" 2>"$T/serve.err" &
    PID=$!
    ADDR=""
    i=0
    while [ -z "$ADDR" ] && [ $i -lt 300 ]; do
        ADDR=$(sed -n 's|.*on http://\([0-9.:]*\)/.*|\1|p' "$T/serve.err" | head -n 1)
        [ -n "$ADDR" ] || sleep 0.05
        i=$((i + 1))
    done
    [ -n "$ADDR" ] || fail "the server did not say where it listens: $(cat "$T/serve.err")"
}

# stop it with a signal and wait (at most 10 s) for its exit status
stop() {
    kill "-$1" "$PID"
    i=0
    while kill -0 "$PID" 2>/dev/null && [ $i -lt 200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    if kill -0 "$PID" 2>/dev/null; then
        fail "the server did not stop on SIG$1"
        kill -KILL "$PID"
    fi
    wait "$PID"
    STATUS=$?
}

start
checks=$((checks + 1))
curl -s -o "$T/list.json" -w '%{http_code}' "http://$ADDR/api/sessions" >"$T/code"
has "200" "the API answers" "$T/code"
has '"sessions":[' "an empty list" "$T/list.json"
curl -s -o "$T/page.html" "http://$ADDR/"
has "<title>Sessions" "the list page" "$T/page.html"
# a follower open while the server stops: its stream ends
curl -s -N "http://$ADDR/api/sessions/none/events" >"$T/events.out" 2>&1
has '"status":404' "events of no session" "$T/events.out"
stop TERM
checks=$((checks + 1))
[ "$STATUS" = 0 ] || fail "SIGTERM: exit status $STATUS"
has "stopping (terminated)" "says why it stops" "$T/serve.err"
lacks "ERROR: " "no sanitizer report" "$T/serve.err"

printf '0123456789abcdef-from-a-file\n' >"$T/token"
start --token-file "$T/token"
curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/api/sessions" >"$T/code"
has "401" "the token is wanted" "$T/code"
curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer 0123456789abcdef-from-a-file" \
    "http://$ADDR/api/sessions" >"$T/code"
has "200" "the token from the file" "$T/code"
has "a token is required" "says a token guards it" "$T/serve.err"
stop INT
checks=$((checks + 1))
[ "$STATUS" = 0 ] || fail "SIGINT: exit status $STATUS"
has "stopping (interrupted)" "says why it stops" "$T/serve.err"

finish
